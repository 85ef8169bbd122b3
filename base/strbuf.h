/* strbuf.h: growable NUL-terminated strings (generated code, formatted
 * values, lambda results). After an allocation fails, oom is set and
 * later appends are dropped; s stays NUL-terminated once allocated. The
 * owner frees s. */
#ifndef BRAID_STRBUF_H
#define BRAID_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct StrBuf {
    char *s;
    size_t n, cap;
    bool oom;
} StrBuf;

void sb_put(StrBuf *b, const char *s, size_t n);
void sb_puts(StrBuf *b, const char *s);
void sb_putc(StrBuf *b, char c);
void sb_puti(StrBuf *b, long long v);   /* decimal, without printf's parsing */
void sb_printf(StrBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
