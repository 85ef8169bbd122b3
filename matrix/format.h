/* format.h: values as DML prints them.
 *
 *  - fmt_double: Java's Double.toString (print, string concatenation, write
 *    of a scalar): shortest round-trip digits, always a fraction, plain for
 *    1e-3 <= |x| < 1e7 ("0.001", "1234567.0"), else "d.dddE<exp>"
 *    ("1.0E-5", "1.2345678E7"); "NaN", "Infinity", "-Infinity", "-0.0".
 *  - fmt_int, fmt_bool ("TRUE"/"FALSE"), fmt_bool_file ("true"/"false").
 *  - fmt_printf: print(fmt, a, b, ...) with Java's String.format semantics.
 *  - fmt_matrix: toString(X, ...) as SystemDS prints matrices; print(X) of
 *    a matrix is fmt_matrix with the defaults (100, 100, 3, FALSE, " ", "\n").
 *  - fmt_list: toString/print of a list (SystemDS's "List containing:" form).
 */
#ifndef BRAID_FORMAT_H
#define BRAID_FORMAT_H

#include "mb.h"

/* Buffer size that holds any fmt_double or fmt_int result. */
#define FMT_NUM_MAX 32

/* Writes Java's Double.toString(x) into buf (always NUL-terminated when
 * n > 0, truncated if n is too small); returns the full length like
 * snprintf. */
int fmt_double(double x, char *buf, size_t n);
/* Writes v in decimal ("-7"); returns the length like snprintf. */
int fmt_int(int64_t v, char *buf, size_t n);
/* "TRUE"/"FALSE": how print and string concatenation show booleans. */
const char *fmt_bool(bool b);
/* "true"/"false": how write() puts a boolean scalar into a file. */
const char *fmt_bool_file(bool b);

/* One argument of fmt_printf (also a scalar element of fmt_list). */
enum { FA_DOUBLE, FA_INT, FA_BOOL, FA_STRING };
typedef struct FmtArg {
    int kind;          /* FA_DOUBLE, FA_INT, FA_BOOL or FA_STRING */
    double d;          /* FA_DOUBLE */
    int64_t i;         /* FA_INT */
    bool b;            /* FA_BOOL */
    const char *s;     /* FA_STRING (NULL prints "null") */
} FmtArg;

/* A scalar as print shows it: doubles by fmt_double, integers plainly,
 * booleans TRUE/FALSE, strings as they are. Returns a malloc'd string
 * (caller frees) or NULL with e set. */
char *fmt_scalar(const FmtArg *a, BrErr *e);

/* print(fmt, args...): Java String.format. Conversions %s %S %b %B %d %x
 * %X %o %c %e %E %f %g %G %% %n; flags - # + space 0 , ( ; width,
 * precision and explicit argument indexes ("%2$s", "%<s"). %d, %x, %o, %c
 * take integers (a double with an integral value is accepted); %e %f %g
 * take numbers; %s takes anything (doubles as fmt_double, booleans
 * "true"/"false"); %b prints booleans "true"/"false" and any other
 * argument "true" (Java). Missing arguments, unknown conversions and
 * arguments of the wrong kind are errors (message contains "format").
 * Extra arguments are ignored. Returns a malloc'd string (caller frees)
 * or NULL with e set. */
char *fmt_printf(const char *fmt, const FmtArg *args, int nargs, BrErr *e);

/* toString(X, rows, cols, decimal, sparse, sep, linesep) as SystemDS:
 * the first `rows` rows and `cols` columns (negative: all); each cell by
 * Java's DecimalFormat with at least `decimal` and at most max(3, decimal)
 * fraction digits, half-even rounding, no grouping (decimal < 0: 0..3);
 * -0.0 prints as 0, NaN/Infinity as fmt_double; cells joined by sep, every
 * row ended by linesep. sparse=TRUE: one line "i<sep>j<sep>v<linesep>" per
 * non-zero (1-based, row-major order). Returns a malloc'd string (caller
 * frees) or NULL with e set. */
char *fmt_matrix(const MB *m, int64_t rows, int64_t cols, int decimal,
                 bool sparse, const char *sep, const char *linesep, BrErr *e);

/* One element of a list for fmt_list: a matrix (m != NULL), else text
 * already formatted (text != NULL, e.g. a nested list from fmt_list), else
 * the scalar a. */
typedef struct FmtItem {
    const MB *m;
    const char *text;
    FmtArg a;
} FmtItem;

/* toString/print of a list as SystemDS: "List containing:\n[" then the
 * elements joined by ", " (a matrix as "\nMatrix:\n" + fmt_matrix with
 * the given options, a scalar as fmt_scalar), then "]". Returns a malloc'd
 * string (caller frees) or NULL with e set. */
char *fmt_list(const FmtItem *items, int n, int64_t rows, int64_t cols,
               int decimal, bool sparse, const char *sep,
               const char *linesep, BrErr *e);

#endif
