/* t.h: braid's tiny test harness. Each tests/test_*.c is one program:
 *   T_CHECK(cond, fmt, ...)   count a check; print the message on failure
 *   T_MB_EQ(a, b, rtol, what) compare two matrix blocks
 *   return t_done("name") from main: prints "name: N passed, M failed" and
 *   returns non-zero if any check failed.
 * tests/run_all.sh sums the per-program lines into one final line. */
#ifndef BRAID_T_H
#define BRAID_T_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "matrix/mb.h"

static int t_pass, t_fail;

/* For BRAID_TEST_TIMES=1 reports of where a program's time goes: CPU
 * seconds (user + system) of getrusage(who) (RUSAGE_SELF, or
 * RUSAGE_CHILDREN: the processes it started and reaped), and monotonic
 * wall seconds. */
static inline double t_cpu_s(int who)
{
    struct rusage r;
    getrusage(who, &r);
    return r.ru_utime.tv_sec + r.ru_utime.tv_usec * 1e-6 + r.ru_stime.tv_sec + r.ru_stime.tv_usec * 1e-6;
}
static inline double t_wall_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Pins the cost model's machine constants (codegen/cost.c: read and write
 * bandwidth, elementwise, dgemm and row-wise vector-matrix rates of a
 * 2-core AVX-512 machine measured when quiet), the GPU's device
 * profile (gpu/profile.c: the nominal one) and the compute units and
 * clock its latency evaluator assumes (gpu_units: PoCL's on 2 cores at
 * 2.1 GHz), so that the plans the tests
 * check do not depend on the load at the moment the constants would be
 * measured, nor on the thread count or the OpenCL device. A
 * BRAID_CG_MACHINE, BRAID_GPU_PROFILE or BRAID_GPU_UNITS in the environment wins. Call it
 * before the device is first used; a test that runs
 * braid as a process calls it first, so that every run it starts
 * inherits the same constants (docs/testing.md). */
static inline void t_pin_machine(void)
{
    setenv("BRAID_CG_MACHINE", "2.3e10 1.25e10 1.0e10 1.15e11 4.6e10", 0);
    setenv("BRAID_GPU_PROFILE", "10e-6 500e9 12e9", 0);
    setenv("BRAID_GPU_UNITS", "2 2100", 0);   /* (CI's PoCL: 2 cores) */
}

/* T_SAN: 1 in the ASan+UBSan build. CI runs every test twice, under the
 * sanitizers (3-5x slower) and then plain, so a long sweep of shapes,
 * sparsities or options may run a subset under the sanitizers: they find
 * memory and undefined-behaviour errors on any point that reaches a code
 * path, while the plain pass checks every point's numbers. t_keep(i, k)
 * says whether point i of a sweep runs: always in a plain build, every
 * k-th point (i % k == 0) under the sanitizers. Keep the points that reach
 * distinct code paths (edges, special cases) outside such sweeps. */
#if defined(__SANITIZE_ADDRESS__)
#define T_SAN 1
#else
#define T_SAN 0
#endif
static inline int t_keep(long i, int k)
{
    return !T_SAN || k <= 1 || i % k == 0;
}

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

/* The mapping of this process that holds address a, from
 * /proc/self/smaps: its AnonHugePages (kB) and whether its VmFlags has
 * "hg" (advised for huge pages). false: no such mapping, or no smaps to
 * read. */
static inline bool t_smaps_of(const void *a, long *huge_kb, bool *advised)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    bool in = false, found = false;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            in = (unsigned long)a >= lo && (unsigned long)a < hi;
            found |= in;
            continue;
        }
        if (!in) continue;
        if (!strncmp(line, "AnonHugePages:", 14)) *huge_kb = atol(line + 14);
        if (!strncmp(line, "VmFlags:", 8)) *advised = strstr(line, " hg") != NULL;
    }
    if (f) fclose(f);
    return found;
}

/* Writes text to path (the test fails hard if it cannot). */
static inline void t_put(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f) { perror(path); exit(2); }
    fputs(text, f);
    fclose(f);
}

/* The contents of path, NUL-terminated (caller frees), or NULL; *n gets
 * the length when n is not NULL. */
static inline char *t_slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)(len < 0 ? 0 : len) + 1);
    size_t got = s ? fread(s, 1, (size_t)(len < 0 ? 0 : len), f) : 0;
    if (s) s[got] = 0;
    if (n) *n = got;
    fclose(f);
    return s;
}

/* Kernels whose parallel regions ask br_par (base/base.h): run(arg, r)
 * fills r[0..n) with its operations' results; it runs with 2 threads,
 * the crowded state pinned uncrowded, then crowded. Checks that at least
 * `least` teams forked uncrowded and none were kept, that none forked
 * crowded and at least `least` were kept (regions below
 * BR_PAR_CROWDED_MIN), and that every result has the same bits both
 * ways; releases the results. Restores the measured state and the
 * default thread count. */
#define T_CROWDED_MAX 32
static inline void t_crowded(const char *what, int n, int64_t least, void (*run)(void *arg, MB **r), void *arg)
{
    MB *r[2][T_CROWDED_MAX] = {{NULL}};
    br_set_threads(2);
    for (int pin = 0; pin < 2; pin++) {
        br_par_pin(pin);
        int64_t t0, k0, t1, k1;
        br_par_counts(&t0, &k0);
        run(arg, r[pin]);
        br_par_counts(&t1, &k1);
        T_CHECK(pin == 0 ? t1 >= t0 + least && k1 == k0 : t1 == t0 && k1 >= k0 + least,
                "crowded %s pin %d: teams %lld -> %lld, kept %lld -> %lld", what, pin, (long long)t0, (long long)t1,
                (long long)k0, (long long)k1);
    }
    for (int q = 0; q < n && q < T_CROWDED_MAX; q++) {
        T_CHECK(r[0][q] && r[1][q], "crowded %s: operation %d failed", what, q);
        if (r[0][q] && r[1][q]) T_MB_EQ(r[1][q], r[0][q], 0, "crowded %s: operation %d differs", what, q);
        mb_release(r[0][q]);
        mb_release(r[1][q]);
    }
    br_par_pin(-1);
    br_set_threads(0);
}

static inline int t_done(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, t_pass, t_fail);
    /* now: LeakSanitizer ends the process with _exit at exit (a leak
     * found, or its own fatal error), which drops stdio's buffers and the
     * count with them (CI lost test_cgstitch's that way: its tracer's
     * fault, base/base.c) */
    fflush(stdout);
    return t_fail != 0;
}

#endif
