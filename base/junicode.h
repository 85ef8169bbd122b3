/* junicode.h: Java's char classes for UTF-16 units (the BMP), as
 * java.lang.Character's isLetter(char), toLowerCase(char) and
 * toUpperCase(char) answer them (JDK 17, Unicode 13): SystemDS's
 * string code (bag_of_words' tokenizer, map() lambdas) runs on them. A
 * code point past the BMP, which Java holds as two surrogate units, is no
 * letter and maps to itself. */
#ifndef BRAID_JUNICODE_H
#define BRAID_JUNICODE_H

#include <stdbool.h>
#include <stdint.h>

bool ju_is_letter(uint32_t c);
uint32_t ju_to_lower(uint32_t c);
uint32_t ju_to_upper(uint32_t c);

#endif
