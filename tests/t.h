/* t.h: braid's tiny test harness. Each tests/test_*.c is one program:
 *   T_CHECK(cond, fmt, ...)   count a check; print the message on failure
 *   T_MB_EQ(a, b, rtol, what) compare two matrix blocks
 *   return t_done("name") from main: prints "name: N passed, M failed" and
 *   returns non-zero if any check failed.
 * tests/run_all.sh sums the per-program lines into one final line. */
#ifndef BRAID_T_H
#define BRAID_T_H

#include <stdio.h>
#include "matrix/mb.h"

static int t_pass, t_fail;

#define T_CHECK(cond, ...) do { \
    if (cond) t_pass++; \
    else { t_fail++; fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
           fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); } \
} while (0)

#define T_MB_EQ(a, b, rtol, ...) do { \
    const MB *t_a_ = (a), *t_b_ = (b); \
    bool t_ok_ = t_a_ && t_b_ && mb_equal(t_a_, t_b_, rtol); \
    T_CHECK(t_ok_, __VA_ARGS__); \
    if (!t_ok_ && t_a_ && t_b_ && t_a_->rows * t_a_->cols <= 64) { \
        mb_dump(t_a_, "got"); mb_dump(t_b_, "want"); } \
} while (0)

static inline int t_done(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, t_pass, t_fail);
    return t_fail != 0;
}

#endif
