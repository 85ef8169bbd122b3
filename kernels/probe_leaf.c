/* probe_leaf.c: the loops codegen's cost model times to measure the
 * machine (codegen/cost.c; see leaf.h). Generated operators are compiled
 * for the CPU they run on, so these run at the highest SIMD level too. */
#include "leaf.h"

/* KProbeLeaf.vecmat_t: rows [r0, r1) of o (m x c) = x (m x n) %*%
 * t(bt) (bt: c x n, c a multiple of 4), four dot products per pass over
 * a row (the loop of the generated code's cg_vecmat_t). */
static void vecmat_t(const double *x, const double *bt, double *o, int64_t n, int64_t c, int64_t r0,
                     int64_t r1)
{
    for (int64_t i = r0; i < r1; i++) {
        const double *restrict a = x + i * n;
        for (int64_t l = 0; l + 4 <= c; l += 4) {
            const double *restrict b0 = bt + l * n, *restrict b1 = b0 + n, *restrict b2 = b1 + n,
                                   *restrict b3 = b2 + n;
            double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
#pragma omp simd reduction(+:s0, s1, s2, s3)
            for (int64_t j = 0; j < n; j++) {
                const double v = a[j];
                s0 += v * b0[j]; s1 += v * b1[j]; s2 += v * b2[j]; s3 += v * b3[j];
            }
            o[i * c + l] = s0; o[i * c + l + 1] = s1; o[i * c + l + 2] = s2; o[i * c + l + 3] = s3;
        }
    }
}

/* KProbeLeaf.sum: a[0..n) summed in vector lanes (a streaming read). */
static double sum(const double *a, int64_t n)
{
    double s = 0;
#pragma omp simd reduction(+:s)
    for (int64_t i = 0; i < n; i++) s += a[i];
    return s;
}

const KProbeLeaf K_LEAF(k_probe_leaf) = {.vecmat_t = vecmat_t, .sum = sum};
