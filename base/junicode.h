/* junicode.h: Java's char classes for UTF-16 units (the BMP), as
 * java.lang.Character's isLetter(char), toLowerCase(char) and
 * toUpperCase(char) answer them (JDK 17, Unicode 13): SystemDS's
 * string code (bag_of_words' tokenizer, map() lambdas) runs on them. A
 * code point past the BMP, which Java holds as two surrogate units, is no
 * letter and maps to itself. */
#ifndef BRAID_JUNICODE_H
#define BRAID_JUNICODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

bool ju_is_letter(uint32_t c);
uint32_t ju_to_lower(uint32_t c);
uint32_t ju_to_upper(uint32_t c);

/* UTF-8: the length of the sequence a lead byte starts, the code point of
 * the sequence at s (at most n bytes; its length in *len) and c's bytes
 * into b (returns their number). */
static inline size_t u8_seq(unsigned char c) { return c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4; }

static inline uint32_t u8_decode(const char *s, int64_t n, int64_t *len)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t l = u8_seq(u[0]);
    if ((int64_t)l > n) l = (size_t)n;
    *len = (int64_t)l;
    if (l == 1) return u[0];
    uint32_t c = u[0] & (l == 2 ? 0x1F : l == 3 ? 0x0F : 0x07);
    for (size_t i = 1; i < l; i++) c = (c << 6) | (u[i] & 0x3F);
    return c;
}

static inline int u8_encode(uint32_t c, char *b)
{
    if (c < 0x80) { b[0] = (char)c; return 1; }
    if (c < 0x800) { b[0] = (char)(0xC0 | (c >> 6)); b[1] = (char)(0x80 | (c & 0x3F)); return 2; }
    if (c < 0x10000) {
        b[0] = (char)(0xE0 | (c >> 12)); b[1] = (char)(0x80 | ((c >> 6) & 0x3F)); b[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    b[0] = (char)(0xF0 | (c >> 18)); b[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    b[2] = (char)(0x80 | ((c >> 6) & 0x3F)); b[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

#endif
