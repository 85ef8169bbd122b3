/* jlint.h: internals of the lambda language of map() shared by its
 * parser (builtins/jlambda.c) and its interpreter (builtins/jleval.c). */
#ifndef BRAID_JLINT_H
#define BRAID_JLINT_H

#include <ctype.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "../base/arena.h"
#include "../base/junicode.h"
#include "../base/strbuf.h"
#include "jlambda.h"

/* ---- UTF-8 helpers (u8_seq, u8_decode, u8_encode: base/junicode.h) ---- */

static inline int64_t u8_count(const char *s, int64_t n)
{
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) k += ((unsigned char)s[i] & 0xC0) != 0x80;
    return k;
}

/* Byte offset of code point k (k may equal the count: n). */
static inline int64_t u8_off(const char *s, int64_t n, int64_t k)
{
    int64_t i = 0;
    while (k > 0 && i < n) {
        i++;
        while (i < n && ((unsigned char)s[i] & 0xC0) == 0x80) i++;
        k--;
    }
    return i;
}

/* Java's Character.toUpperCase/toLowerCase(char) (base/junicode.h). */
static inline uint32_t cp_upper(uint32_t c) { return ju_to_upper(c); }
static inline uint32_t cp_lower(uint32_t c) { return ju_to_lower(c); }
static inline bool cp_space(uint32_t c) { return c == ' ' || (c >= 9 && c <= 13) || (c >= 0x1C && c <= 0x1F); }
/* Java's Character.isLetter(char). */
static inline bool cp_alpha(uint32_t c) { return ju_is_letter(c); }

/* ---- the tree ---- */

typedef enum {
    N_LIT, N_PARAM, N_NEG, N_NOT, N_BIN, N_AND, N_OR, N_COND, N_METHOD, N_STATIC, N_INDEX, N_ALEN,
    N_ARRAY, N_CAST
} NKind;

typedef enum {
    M_TOUPPER, M_TOLOWER, M_TRIM, M_STRIP, M_LENGTH, M_SUBSTRING, M_CHARAT, M_INDEXOF, M_LASTINDEXOF,
    M_CONTAINS, M_STARTSWITH, M_ENDSWITH, M_REPLACE, M_REPLACEALL, M_REPLACEFIRST, M_SPLIT, M_CONCAT,
    M_EQUALS, M_EQUALSIC, M_COMPARETO, M_ISEMPTY, M_ISBLANK, M_MATCHES, M_REPEAT, M_TOSTRING
} Method;



typedef enum {
    S_PARSEINT, S_PARSELONG, S_PARSEDOUBLE, S_VALUEOF, S_PARSEBOOL, S_ABS, S_MIN, S_MAX, S_POW, S_SQRT,
    S_FLOOR, S_CEIL, S_ROUND, S_LOG, S_LOG10, S_EXP, S_SIGNUM, S_SIN, S_COS, S_TAN, S_ISDIGIT, S_ISLETTER,
    S_ISLETTERORDIGIT, S_ISWHITESPACE, S_ISUPPER, S_ISLOWER, S_CTOUPPER, S_CTOLOWER, S_JACCARD, S_WER,
    S_SPLITRECODE, S_PORTERSTEM, S_ASCIIAT, S_DOMDATE, S_TIMESTAMP, S_ADDTIME, S_TOMILLIS, S_DATEFMT,
    S_ISDATECOL, S_COLCSV
} Static;

typedef struct JlMethod { const char *name; int min, max; } JlMethod;
typedef struct JlStatic { const char *name; Static id; int nargs; } JlStatic;
extern const JlMethod jl_methods[];
extern const int jl_nmethods;
extern const JlStatic jl_statics[];
extern const int jl_nstatics;



typedef enum { C_INT, C_LONG, C_DOUBLE, C_STRING } Cast;

typedef struct Node {
    NKind kind;
    int op;             /* N_BIN: operator char or code; N_METHOD: Method; N_STATIC: Static; N_CAST: Cast */
    int n;              /* children */
    struct Node **kid;  /* N_METHOD: kid[0] is the receiver */
    JVal lit;           /* N_LIT; N_PARAM: lit.i is the index */
    struct JRe *re;     /* regex methods with a literal pattern: compiled once */
    int pos;            /* offset in the source (messages) */
} Node;

/* binary operator codes beyond single characters */
enum { OP_LE = 256, OP_GE, OP_EQ, OP_NE };

struct JLambda {
    Arena *arena;
    Node *body;
    int nparams;
    int nre;
    struct JRe **res;   /* compiled regexes to free */
};

/* Growable strings: StrBuf (base/strbuf.h). */

/* A Java regex compiled as a POSIX ERE; Java's group g (1..ngroups) is
 * ERE group gmap[g]. */
typedef struct JRe { regex_t re; int ngroups; int gmap[10]; } JRe;

/* The POSIX form of Java regex java (anchored at both ends when full),
 * compiled; jl_re_free frees it. NULL with e set when unsupported. */
JRe *jl_re_compile(const char *java, bool full, BrErr *e);
void jl_re_free(JRe *r);

/* SystemDS's PorterStemmer.stem of s[0..n) into out (room for n + 3
 * bytes, NUL-terminated); returns the stem's length (jlstem.c) */
size_t jl_porter_stem(const char *s, size_t n, char *out);

/* SystemDS's date formats (jldate.c): the format of s[0..n) (-1: none),
 * its SimpleDateFormat pattern; the dominant of a column's counts per
 * format; parsing with a pattern (0, or -1 when s does not parse) and
 * formatting (into out, at least 64 bytes; returns the length)
 * milliseconds since 1970 UTC, the pattern letters y M d H m s S;
 * addTimeToDate's units ("ms", "m", "H", "d", "w", "M", "y", else
 * seconds). */
#define JL_NDATEFMT 23
int jl_date_kind(const char *s, int64_t n);
int jl_date_dominant(const int64_t *counts);
const char *jl_date_pattern(int kind);
int jl_date_parse(const char *s, int64_t n, const char *pattern, int64_t *ms);   /* -2: a pattern letter braid lacks */
int64_t jl_date_format(int64_t ms, const char *pattern, char *out, size_t cap);   /* -1: likewise */
int jl_date_add(int64_t ms, int64_t amount, const char *unit, int64_t *res_ms);

#endif
