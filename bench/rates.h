/* rates.h: the in-run references of the benchmarks (static functions,
 * included by bench_codegen.c and rates.c): a STREAM-style read and the
 * FLOP rate of an OpenBLAS dgemm, with the kernel threads (br_threads). */
#ifndef BRAID_BENCH_RATES_H
#define BRAID_BENCH_RATES_H

#include <cblas.h>
#include <stdint.h>
#include <stdio.h>

#include "base/base.h"

void openblas_set_num_threads(int);

/* Deterministic pseudo-random fill in parallel (hash of the index). */
static double hval(uint64_t i, uint64_t seed)
{
    uint64_t z = i * 0x9e3779b97f4a7c15ULL + seed;
    z ^= z >> 30; z *= 0xbf58476d1ce4e5b9ULL;
    z ^= z >> 27; z *= 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0;
}

/* The bandwidth reference (STREAM-style read of nb arrays of n doubles
 * with the kernel threads): hashed values (no page can be shared or
 * deduplicated) summed by a vectorized loop (omp simd: no serial add
 * chain), so it reads at the memory bandwidth. */
static double stream_read(int nb, int64_t n)
{
    double *a[3];
    for (int i = 0; i < nb; i++) {
        a[i] = br_alloc_aligned((size_t)n * sizeof(double));
#pragma omp parallel for schedule(static)
        for (int64_t j = 0; j < n; j++) a[i][j] = hval((uint64_t)j, 7 + (uint64_t)i);
    }
    double best = 1e30, sink = 0;
    for (int rep = 0; rep < 4; rep++) {
        int64_t t0 = br_now_ns();
        double s = 0;
        for (int i = 0; i < nb; i++) {
            const double *x = a[i];
#pragma omp parallel for simd schedule(static) reduction(+:s) num_threads(br_threads())
            for (int64_t j = 0; j < n; j++) s += x[j];
        }
        double t = (double)(br_now_ns() - t0) / 1e9;
        sink += s;
        if (t < best) best = t;
    }
    for (int i = 0; i < nb; i++) br_free_aligned(a[i]);
    if (sink == 1.2345) printf(" ");
    return best;
}

/* The compute reference of Row patterns: the FLOP rate of an n^3 OpenBLAS
 * dgemm with the kernel threads (best of 3, in this run). */
static double dgemm_rate(int n)
{
    double *a = br_alloc_aligned((size_t)n * (size_t)n * sizeof(double));
    double *b = br_alloc_aligned((size_t)n * (size_t)n * sizeof(double));
    double *c = br_alloc_aligned((size_t)n * (size_t)n * sizeof(double));
    for (int64_t i = 0; i < (int64_t)n * n; i++) { a[i] = hval((uint64_t)i, 11); b[i] = hval((uint64_t)i, 12); }
    openblas_set_num_threads(br_threads());
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        int64_t t0 = br_now_ns();
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 0.0, c, n);
        double t = (double)(br_now_ns() - t0) / 1e9;
        if (t < best) best = t;
    }
    br_free_aligned(a); br_free_aligned(b); br_free_aligned(c);
    return 2.0 * n * (double)n * n / best;
}

#endif
