/* base.c: errors, allocation, threads, clock. */
#include "base.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

int br_err(BrErr *e, int code, const char *fmt, ...)
{
    if (!e || e->code) return code;
    e->code = code ? code : BR_EFAIL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return e->code;
}

void *br_malloc(size_t n) { return malloc(n ? n : 1); }
void *br_calloc(size_t n, size_t size) { return calloc(n ? n : 1, size ? size : 1); }
void *br_realloc(void *p, size_t n) { return realloc(p, n ? n : 1); }

void *br_alloc_aligned(size_t n)
{
    void *p = NULL;
    size_t sz = (n + 63) & ~(size_t)63;
    if (sz < n) return NULL;
    if (posix_memalign(&p, 64, sz ? sz : 64)) return NULL;
    return p;
}

void *br_calloc_aligned(size_t n)
{
    void *p = br_alloc_aligned(n);
    if (p) memset(p, 0, n);
    return p;
}

void br_free_aligned(void *p) { free(p); }

char *br_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = br_malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static int g_threads = 0; /* process-wide setting; 0 = not yet decided */

int br_threads(void)
{
    if (g_threads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        g_threads = n > 0 ? (int)n : 1;
    }
    return g_threads;
}

void br_set_threads(int n)
{
    if (n <= 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        n = c > 0 ? (int)c : 1;
    }
    g_threads = n;
}

int64_t br_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
