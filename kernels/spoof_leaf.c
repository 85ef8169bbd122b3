/* spoof_leaf.c: leaf kernels of the fused-operator skeletons (see
 * leaf.h): the Kahan-lane accumulation of generated values (spacc_add).
 * Each lane's steps are written out, so every SIMD level computes the
 * same bits. */
#include "leaf.h"
#include "spoof.h"

#include <float.h>
#include <math.h>

/* Kahan step of lane l (an infinite or NaN sum resets the correction). */
static inline void lane_add(double *restrict s, double *restrict c, int l, double x)
{
    double y = x + c[l], t = s[l] + y;
    c[l] = fabs(t) <= DBL_MAX ? y - (t - s[l]) : 0;
    s[l] = t;
}

/* Lane_add over 8 lanes at once, in vector registers (GCC's vector
 * extension, lowered to each SIMD level's widths): the same operations
 * per lane. The lanes lived in memory in a loop of lane_add: each step
 * reloaded the stores of the one before, and the Cell full aggregates of
 * narrow rows with vector inputs (the buffered path, SPOOF_AL) spent a
 * third of their time here. (Vectors only by pointer: passed by value
 * they change the ABI of builds without AVX-512, an error at -O0.) */
typedef double LaneV __attribute__((vector_size(64), aligned(8), may_alias));
typedef long long LaneI __attribute__((vector_size(64)));
static inline __attribute__((always_inline)) void lanes_add8(LaneV *s, LaneV *c, const LaneV *x)
{
    const LaneV y = *x + *c, t = *s + y;
    const LaneV at = (LaneV)((LaneI)t & (LaneI)(0x7fffffffffffffffLL - (LaneI){0}));
    const LaneI fin = at <= (LaneV)(DBL_MAX - (LaneV){0});
    *c = (LaneV)((LaneI)(y - (t - *s)) & fin);
    *s = t;
}

/* KSpoofLeaf.acc_add */
static void acc_add(double *restrict s, double *restrict c, int agg, const double *restrict v, int64_t n)
{
    int64_t k = 0;
    switch (agg) {
    case SPA_SUM: case SPA_MEAN: case SPA_SUMSQ: {
        bool sq = agg == SPA_SUMSQ;
        _Static_assert(SPOOF_KL == 16, "two vectors of 8 lanes");
        LaneV s0 = *(const LaneV *)s, s1 = *(const LaneV *)(s + 8);
        LaneV c0 = *(const LaneV *)c, c1 = *(const LaneV *)(c + 8);
        for (; k + SPOOF_KL <= n; k += SPOOF_KL) {
            LaneV x0 = *(const LaneV *)(v + k), x1 = *(const LaneV *)(v + k + 8);
            if (sq) { x0 = x0 * x0; x1 = x1 * x1; }
            lanes_add8(&s0, &c0, &x0);
            lanes_add8(&s1, &c1, &x1);
        }
        *(LaneV *)s = s0; *(LaneV *)(s + 8) = s1;
        *(LaneV *)c = c0; *(LaneV *)(c + 8) = c1;
        for (int l = 0; k < n; k++, l++) lane_add(s, c, l, sq ? v[k] * v[k] : v[k]);
        break;
    }
    case SPA_MIN:   /* NaN propagates */
        for (; k < n; k++) s[0] = (v[k] < s[0] || v[k] != v[k]) ? v[k] : s[0];
        break;
    case SPA_MAX:
        for (; k < n; k++) s[0] = (v[k] > s[0] || v[k] != v[k]) ? v[k] : s[0];
        break;
    default: break;
    }
}

/* KSpoofLeaf.col_add: column accumulators s, c (Kahan) of a Cell column
 * aggregate take the values v[k] at columns ci[k] (k when ci is NULL);
 * cnt, when given, counts the values per column. The operator is
 * switched on outside the loops, so the dense case vectorizes. */
static void col_add(double *restrict s, double *restrict c, int64_t *restrict cnt, int agg,
                    const double *restrict v, int64_t n, const int32_t *restrict ci)
{
    if (!ci) {
        switch (agg) {
        case SPA_MIN:
#pragma omp simd
            for (int64_t k = 0; k < n; k++) s[k] = (v[k] < s[k] || v[k] != v[k]) ? v[k] : s[k];
            break;
        case SPA_MAX:
#pragma omp simd
            for (int64_t k = 0; k < n; k++) s[k] = (v[k] > s[k] || v[k] != v[k]) ? v[k] : s[k];
            break;
        case SPA_SUMSQ:
#pragma omp simd
            for (int64_t k = 0; k < n; k++) lane_add(s + k, c + k, 0, v[k] * v[k]);
            break;
        default:
#pragma omp simd
            for (int64_t k = 0; k < n; k++) lane_add(s + k, c + k, 0, v[k]);
            break;
        }
        return;
    }
    for (int64_t k = 0; k < n; k++) {
        int64_t j = ci[k];
        double x = v[k];
        switch (agg) {
        case SPA_MIN: s[j] = (x < s[j] || x != x) ? x : s[j]; break;
        case SPA_MAX: s[j] = (x > s[j] || x != x) ? x : s[j]; break;
        case SPA_SUMSQ: lane_add(s + j, c + j, 0, x * x); break;
        default: lane_add(s + j, c + j, 0, x); break;
        }
        if (cnt) cnt[j]++;
    }
}

/* KSpoofLeaf.col_add_rows: one call for a block of narrow rows (a call
 * per row of two values cost more than its Kahan steps) */
static void col_add_rows(double *restrict s, double *restrict c, int agg, const double *restrict v, int64_t nr,
                         int64_t n)
{
    for (int64_t r = 0; r < nr; r++) col_add(s, c, NULL, agg, v + r * n, n, NULL);
}

const KSpoofLeaf K_LEAF(k_spoof_leaf) = {.acc_add = acc_add, .col_add = col_add, .col_add_rows = col_add_rows};
