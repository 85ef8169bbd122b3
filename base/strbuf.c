/* strbuf.c: growable strings (strbuf.h). */
#include "strbuf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for need more bytes and the NUL; false (oom set) if not. */
static bool grow(StrBuf *b, size_t need)
{
    if (b->oom) return false;
    if (b->n + need + 1 <= b->cap) return true;
    size_t nc = b->cap ? b->cap : 256;
    while (nc < b->n + need + 1) {
        if (nc > SIZE_MAX / 2) { b->oom = true; return false; }
        nc *= 2;
    }
    char *s = realloc(b->s, nc);
    if (!s) { b->oom = true; return false; }
    b->s = s;
    b->cap = nc;
    return true;
}

void sb_put(StrBuf *b, const char *s, size_t n)
{
    if (!grow(b, n)) return;
    if (n) memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = 0;
}

void sb_puts(StrBuf *b, const char *s) { sb_put(b, s, strlen(s)); }

void sb_putc(StrBuf *b, char c) { sb_put(b, &c, 1); }

void sb_puti(StrBuf *b, long long v)
{
    char t[24];
    int k = sizeof t;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do { t[--k] = (char)('0' + u % 10); u /= 10; } while (u);
    if (v < 0) t[--k] = '-';
    sb_put(b, t + k, sizeof t - (size_t)k);
}

void sb_printf(StrBuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char tmp[512];
    int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (k < 0) return;
    if ((size_t)k < sizeof tmp) { sb_put(b, tmp, (size_t)k); return; }
    if (!grow(b, (size_t)k)) return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->n, (size_t)k + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)k;
}
