/* jlambda.h: the Java lambda expressions of DML's map() (builtins/jlambda.c).
 *
 * SystemDS compiles the lambda string of map(F, "x -> ...") as Java source
 * at run time. braid cannot run Java, so it parses the subset real scripts
 * use once and interprets it per cell:
 *   x -> e,  (x) -> e,  (x, y) -> e,  (String x) -> e,  x -> { return e; }
 *   literals: "strings" (Java escapes), 'c', 12, 1.5, 2L, true, false, null
 *   x.m(...): toUpperCase toLowerCase trim strip length substring charAt
 *     indexOf lastIndexOf contains startsWith endsWith replace replaceAll
 *     replaceFirst split concat equals equalsIgnoreCase compareTo isEmpty
 *     isBlank matches repeat toString; arrays: a[i], a.length
 *   Integer.parseInt/valueOf, Long.parseLong/valueOf, Double.parseDouble/
 *   valueOf, Float.parseFloat, String.valueOf, Boolean.parseBoolean,
 *   Math.abs min max pow sqrt floor ceil round log log10 exp signum sin cos
 *   tan, Character.isDigit isLetter isLetterOrDigit isWhitespace isUpperCase
 *   isLowerCase toUpperCase toLowerCase, UtilFunctions.jaccardSim
 *   getWordErrorRate splitRecodeEntry, PorterStemmer.stem (jlstem.c),
 *   new String[]{a, b, ...}
 *   operators + - * / % < <= > >= == != && || & | ! ?: (& and | on
 *   booleans, both sides evaluated) and casts (int) (long)
 *   (double) (float) (String).
 * Regular expressions (replaceAll, replaceFirst, split, matches) are
 * translated to POSIX extended regexes (regex.h): \d \s \w and their
 * negations, classes, groups, alternation, quantifiers; lookaround, lazy
 * quantifiers, backreferences and the like are rejected when parsed.
 * Strings are UTF-8; indexes count code points; case mapping covers ASCII
 * and Latin-1. Anything outside the subset is an error naming it.
 */
#ifndef BRAID_JLAMBDA_H
#define BRAID_JLAMBDA_H

#include "../base/base.h"

typedef enum { JV_NULL, JV_STR, JV_INT, JV_DBL, JV_BOOL, JV_CHAR, JV_ARR } JvKind;

/* A value of the lambda language. Strings and arrays point into the
 * scratch of the evaluation, the arguments or the lambda's literals. */
typedef struct JVal {
    JvKind k;
    int64_t n;              /* JV_STR: bytes (s is NUL-terminated too); JV_ARR: elements */
    union {
        const char *s;
        int64_t i;
        double d;
        bool b;
        uint32_t c;         /* JV_CHAR: a Unicode code point */
        struct JVal *a;
    };
} JVal;

typedef struct JLambda JLambda;
typedef struct JlScratch JlScratch;

/* Parses a lambda once. NULL with e set ("map: ..." naming the offending
 * construct and its offset) when it is not in the subset. jl_free frees. */
JLambda *jl_parse(const char *src, BrErr *e);
void jl_free(JLambda *l);
/* Number of parameters (1 or 2). */
int jl_nparams(const JLambda *l);

/* Per-thread scratch memory of evaluations: jl_eval allocates its strings
 * and arrays there; they live until jl_scratch_reset / jl_scratch_free. */
JlScratch *jl_scratch_new(void);
void jl_scratch_reset(JlScratch *s);
void jl_scratch_free(JlScratch *s);

/* Evaluates l with args[0..nparams) into *out. Thread-safe for one
 * JLambda shared by threads with one scratch each. Run-time errors (a
 * method on null, a number that does not parse, an index out of range)
 * return non-zero with e set ("map: ..."). */
int jl_eval(const JLambda *l, JlScratch *s, const JVal *args, JVal *out, BrErr *e);

/* Text of a non-array value as Java's String.valueOf gives it (doubles as
 * Double.toString, null as "null"), allocated in s; NULL when out of memory. */
const char *jl_text(JlScratch *s, const JVal *v, size_t *n);

#endif
