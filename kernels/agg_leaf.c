/* agg_leaf.c: leaf kernels of agg.c (see leaf.h): the loops of Kahan
 * sums in vector lanes, min/max/prod over arrays, column tasks, narrow
 * rows and cumulative rows. Every lane and every step is written out
 * (GCC/Clang vector extensions and `omp simd` loops without reductions),
 * so each SIMD level computes the same bits. */
#include "agg_int.h"

#include <string.h>
#if defined(__AVX__)
#include <immintrin.h>
#endif

/* The 4-double vectors below are passed between this file's static
 * functions only (the tables hold no vector types), so the ABI note of
 * the generic copy (no AVX: such arguments go through memory) is moot. */
#pragma GCC diagnostic ignored "-Wpsabi"

#define NV 8           /* vector accumulators of long sums */
#define KL (4 * NV)    /* Kahan lanes of long sums (K_AGG_LANES) */

_Static_assert(KL == K_AGG_LANES, "lanes of ksum");

/* Vectors of 4 doubles (GCC/Clang vector extension; the compiler maps
 * them to whatever the target has). Kahan lanes live in NV such vector
 * accumulators, kept in registers. */
typedef double v4d __attribute__((vector_size(32)));
typedef int64_t v4i __attribute__((vector_size(32)));

static inline v4d vld(const double *p) { v4d v; memcpy(&v, p, sizeof v); return v; }

/* Kahan step of four lanes; same arithmetic as kadd (t - t == 0 exactly
 * when t is finite). */
static inline void vkadd(v4d *s, v4d *c, v4d g)
{
    v4d y = g + *c, t = *s + y;
    v4i fin = (t - t) == (v4d){0, 0, 0, 0};
    *c = (v4d)((v4i)(y - (t - *s)) & fin);
    *s = t;
}

/* The same step without the finiteness check. It computes the same as
 * vkadd as long as every partial sum is finite; once one is not, the sum
 * stays infinite or NaN, so hot loops use it and redo the work with vkadd
 * when the result is not finite. */
static inline void vkadd_fast(v4d *s, v4d *c, v4d g)
{
    v4d y = g + *c, t = *s + y;
    *c = y - (t - *s);
    *s = t;
}

/* Software prefetch KPF doubles ahead of the KL cells at p (one per
 * 64-byte line): the hardware prefetcher alone falls behind a Kahan loop
 * streaming from memory (measured 8.9 vs 13.2 GB/s on one core). */
#define KPF 256
#define KPREFETCH(p) \
    do { \
        for (int pf = 0; pf < KL; pf += 8) __builtin_prefetch((p) + KPF + pf); \
    } while (0)

/* Lane-parallel Kahan loop over x[0..nv) (nv a multiple of KL = 4*NV)
 * with the summand EXPR of the vector v and the step STEP. */
#define KLANES(EXPR, STEP) \
    for (int64_t i = 0; i < nv; i += KL) { \
        KPREFETCH(x + i); \
        _Pragma("GCC unroll 8") \
        for (int q = 0; q < NV; q++) { \
            v4d v = vld(x + i + 4 * q); \
            STEP(&S[q], &C[q], (EXPR)); \
        } \
    }

/* Kahan sum of the summands of x[0..n) in KL lanes (element k of a run
 * of KL cells goes to lane k; the last partial run is padded with cells
 * whose summand is 0), the lanes merged by a fixed pairwise tree; chk:
 * with the finiteness check in every step. */
static KKahan klanes(const double *restrict x, int64_t n, int mode, double m, bool chk)
{
    v4d S[NV], C[NV], vm = {m, m, m, m};
    for (int q = 0; q < NV; q++) S[q] = C[q] = (v4d){0, 0, 0, 0};
    double pad[KL];
    int64_t nv = n - n % KL;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {            /* the padded last run */
            if (nv == n) break;
            for (int l = 0; l < KL; l++) pad[l] = nv + l < n ? x[nv + l] : mode == KM_DEV2 ? m : 0;
            x = pad;
            nv = KL;
        }
        if (!chk) {
            switch (mode) {
            case KM_X: KLANES(v, vkadd_fast); break;
            case KM_SQ: KLANES(v * v, vkadd_fast); break;
            default: KLANES((v - vm) * (v - vm), vkadd_fast); break;
            }
        } else {
            switch (mode) {
            case KM_X: KLANES(v, vkadd); break;
            case KM_SQ: KLANES(v * v, vkadd); break;
            default: KLANES((v - vm) * (v - vm), vkadd); break;
            }
        }
    }
    /* merge lane l with l + h, h = KL/2 ... 1: whole vectors first, then
     * within the last one */
    for (int h = NV / 2; h >= 1; h /= 2)
        for (int q = 0; q < h; q++) {
            vkadd(&S[q], &C[q], S[q + h]);
            vkadd(&S[q], &C[q], C[q + h]);
        }
    double s[4], c[4];
    memcpy(s, &S[0], sizeof s);
    memcpy(c, &C[0], sizeof c);
    for (int h = 2; h >= 1; h /= 2)
        for (int l = 0; l < h; l++) {
            KKahan a = { s[l], c[l] };
            kadd(&a, s[l + h]);
            kadd(&a, c[l + h]);
            s[l] = a.s; c[l] = a.c;
        }
    return (KKahan){ s[0], c[0] };
}

/* KAggLeaf.ksum: in lanes (klanes) from 4*KL cells on, else in one
 * scalar chain. */
static KKahan ksum(const double *restrict x, int64_t n, int mode, double m)
{
    KKahan k = {0, 0};
    if (n >= 4 * KL) {
        k = klanes(x, n, mode, m, false);
        if (!isfinite(k.s)) k = klanes(x, n, mode, m, true);
        return k;
    }
    switch (mode) {
    case KM_X: for (int64_t i = 0; i < n; i++) kadd(&k, x[i]); break;
    case KM_SQ: for (int64_t i = 0; i < n; i++) kadd(&k, x[i] * x[i]); break;
    default: for (int64_t i = 0; i < n; i++) kadd(&k, (x[i] - m) * (x[i] - m)); break;
    }
    return k;
}

/* The NaN-propagating steps of min_step/max_step (agg_int.h) on four
 * lanes, without branches: v where v < s (mn) or v > s, or v is NaN. */
static inline v4d vmm_step(v4d s, v4d v, bool mx)
{
    v4i take = (mx ? v > s : v < s) | (v != v);
    return (v4d)(((v4i)v & take) | ((v4i)s & ~take));
}

/* min/max of x[0..n) by the NaN-propagating steps: KL lanes (lane l
 * takes x[i + l]) in NV vectors, folded by halves (lane l with lane
 * l + h), then the cells past the lanes in order. -0 against +0 may come
 * out of another lane than a sequential loop's (the same value). amm
 * takes it only for a row with a NaN cell. */
static double amm_nan(const double *restrict x, int64_t n, bool want_max)
{
    const double init = want_max ? -INFINITY : INFINITY;
    v4d S[NV];
    for (int k = 0; k < NV; k++) S[k] = (v4d){init, init, init, init};
    const int64_t nv = n - n % KL;
    for (int64_t i = 0; i < nv; i += KL)
#pragma GCC unroll 8
        for (int k = 0; k < NV; k++) S[k] = vmm_step(S[k], vld(x + i + 4 * k), want_max);
#pragma GCC unroll 8
    for (int h = NV / 2; h >= 1; h /= 2)
#pragma GCC unroll 8
        for (int k = 0; k < h; k++) S[k] = vmm_step(S[k], S[k + h], want_max);
    double (*step)(double, double) = want_max ? max_step : min_step;
    double r = step(step(S[0][0], S[0][2]), step(S[0][1], S[0][3]));
    for (int64_t i = nv; i < n; i++) r = step(r, x[i]);
    return r;
}

/* v > s ? v : s (mx) or v < s ? v : s on four lanes: the steps of
 * max_step/min_step where neither is NaN (x86's max/min return their
 * second operand on NaN and on equal values, as these do) */
static inline v4d vsel_mm(v4d v, v4d s, bool mx)
{
#if defined(__AVX__)
    return mx ? (v4d)_mm256_max_pd((__m256d)v, (__m256d)s) : (v4d)_mm256_min_pd((__m256d)v, (__m256d)s);
#else
    v4i take = mx ? v > s : v < s;
    return (v4d)(((v4i)v & take) | ((v4i)s & ~take));
#endif
}

static inline double sel_mm(double v, double s, bool mx) { return (mx ? v > s : v < s) ? v : s; }

/* amm_nan's lanes and order with the steps of vsel_mm (one max or min
 * per vector): the extreme of x[0..n) where no cell is NaN. With nan,
 * the NaN tests of max_step run beside the chains into a flag, and
 * *nan says whether a cell was NaN (then the result is not the one of
 * the NaN-propagating steps); without, NaN cells are never taken. */
static inline __attribute__((always_inline)) double sel_lanes(const double *restrict x, int64_t n, bool mx,
                                                              bool *nan)
{
    const double init = mx ? -INFINITY : INFINITY;
    v4d S[NV];
    v4i F = {0, 0, 0, 0};
    for (int k = 0; k < NV; k++) S[k] = (v4d){init, init, init, init};
    const int64_t nv = n - n % KL;
    for (int64_t i = 0; i < nv; i += KL)
#pragma GCC unroll 8
        for (int k = 0; k < NV; k++) {
            const v4d v = vld(x + i + 4 * k);
            if (nan) F |= v != v;
            S[k] = vsel_mm(v, S[k], mx);
        }
    if (nan) {
        bool f = (F[0] | F[1] | F[2] | F[3]) != 0;
        for (int64_t i = nv; i < n; i++) f |= x[i] != x[i];
        if ((*nan = f)) return init;
    }
#pragma GCC unroll 8
    for (int h = NV / 2; h >= 1; h /= 2)
#pragma GCC unroll 8
        for (int k = 0; k < h; k++) S[k] = vsel_mm(S[k + h], S[k], mx);
    double r = sel_mm(sel_mm(S[0][3], S[0][1], mx), sel_mm(S[0][2], S[0][0], mx), mx);
    for (int64_t i = nv; i < n; i++) r = sel_mm(x[i], r, mx);
    return r;
}

/* min (want_max false) or max of x[0..n), NaN propagating; +-Inf if
 * n == 0: amm_nan's result, without its NaN tests on the chains where no
 * cell is NaN. The lanes were an array that GCC kept in memory (a store
 * and a reload per vector and step) with those tests on every step:
 * rowMaxs over 100 columns ran at 3x the time of rowSums. */
static double amm(const double *restrict x, int64_t n, bool want_max)
{
    bool nan = false;
    const double r = sel_lanes(x, n, want_max, &nan);
    return nan ? amm_nan(x, n, want_max) : r;
}

static double aprod(const double *x, int64_t n)
{
    double p = 1;
    for (int64_t i = 0; i < n; i++) p *= x[i];
    return p;
}

/* KAggLeaf.minmaxprod */
static double minmaxprod(OpCode op, const double *x, int64_t n)
{
    return op == OP_PROD ? aprod(x, n) : amm(x, n, op == OP_AMAX);
}

/* Lane loop of column tasks: lanes k < W over the values xr[k]. */
#define CLANES(EXPR) \
    if (chk) { \
        _Pragma("omp simd") \
        for (int64_t k = 0; k < W; k++) { \
            double v = xr[k], g = (EXPR); \
            double y = g + c[k], t = s[k] + y; \
            c[k] = fabs(t) <= DBL_MAX ? y - (t - s[k]) : 0; \
            s[k] = t; \
        } \
    } else { \
        _Pragma("omp simd") \
        for (int64_t k = 0; k < W; k++) { \
            double v = xr[k], g = (EXPR); \
            double y = g + c[k], t = s[k] + y; \
            c[k] = y - (t - s[k]); \
            s[k] = t; \
        } \
    }

/* Accumulates rows xr (W lanes) into s/c (or s alone for min/max/prod);
 * chk: Kahan steps with the finiteness check (see vkadd_fast). */
static void col_lanes(int cm, const double *restrict xr, int64_t W,
                      double *restrict s, double *restrict c,
                      const double *restrict mr, bool chk)
{
    switch (cm) {
    case CM_SUM: CLANES(v); break;
    case CM_SQ: CLANES(v * v); break;
    case CM_DEV2: CLANES((v - mr[k]) * (v - mr[k])); break;
    case CM_MIN:
#pragma omp simd
        for (int64_t k = 0; k < W; k++) s[k] = min_step(s[k], xr[k]);
        break;
    case CM_MAX:
#pragma omp simd
        for (int64_t k = 0; k < W; k++) s[k] = max_step(s[k], xr[k]);
        break;
    default:
#pragma omp simd
        for (int64_t k = 0; k < W; k++) s[k] *= xr[k];
        break;
    }
}

/* Unchecked Kahan steps (see vkadd_fast) of the four rows xr, xr + N,
 * xr + 2N, xr + 3N, in that order, into the lanes s/c (k < W): the same
 * arithmetic as four col_lanes calls, with the lane arrays loaded and
 * stored once per four rows instead of once per row (colSums of a wide
 * matrix: 61% -> 95% of the read bandwidth). */
#define CSTEP4(ROW, EXPR) \
    do { \
        double v = (ROW)[k], g = (EXPR), y = g + ck, t = sk + y; \
        ck = y - (t - sk); \
        sk = t; \
    } while (0)
#define CLANES4(EXPR) \
    _Pragma("omp simd") \
    for (int64_t k = 0; k < W; k++) { \
        double sk = s[k], ck = c[k]; \
        CSTEP4(x0, EXPR); \
        CSTEP4(x1, EXPR); \
        CSTEP4(x2, EXPR); \
        CSTEP4(x3, EXPR); \
        s[k] = sk; \
        c[k] = ck; \
    }

static void col_lanes4(int cm, const double *restrict xr, int64_t N, int64_t W,
                       double *restrict s, double *restrict c, const double *restrict mr)
{
    const double *restrict x0 = xr, *restrict x1 = xr + N, *restrict x2 = xr + 2 * N,
                 *restrict x3 = xr + 3 * N;
    switch (cm) {
    case CM_SUM: CLANES4(v); break;
    case CM_SQ: CLANES4(v * v); break;
    default: CLANES4((v - mr[k]) * (v - mr[k])); break;
    }
}

/* KAggLeaf.col_task (one column task of a dense block; see leaf.h). */
static void col_task(const double *x, int64_t N, int64_t r0, int64_t r1,
                     int64_t j0, int64_t w, int64_t L, int cm, const double *m,
                     double *ps, double *pc, double *s, double *c, double *mr)
{
    int64_t W = L * w;
    double init = cm_init(cm);
    if (cm == CM_DEV2)
        for (int64_t k = 0; k < W; k++) mr[k] = m[j0 + k % w];
    for (int pass = 0; pass < 2; pass++) {
        bool chk = pass == 1, redo = false;
        for (int64_t k = 0; k < W; k++) { s[k] = init; c[k] = 0; }
        int64_t r = r0;
        if (L == 1 && !chk && cm_kahan(cm))
            for (; r + 4 <= r1; r += 4) col_lanes4(cm, x + r * N + j0, N, W, s, c, mr);
        for (; r + L <= r1; r += L) col_lanes(cm, x + r * N + j0, W, s, c, mr, chk);
        for (; r < r1; r++) col_lanes(cm, x + r * N + j0, w, s, c, mr, chk);
        for (int64_t j = 0; j < w; j++) {
            double v = init, vc = 0;
            for (int64_t l = 0; l < L; l++) cm_merge(cm, &v, &vc, s[l * w + j], c[l * w + j]);
            if (pc) { ps[j] = v; pc[j] = vc; }
            else ps[j] = cm_kahan(cm) ? kval((KKahan){ v, vc }) : v;
            /* unchecked Kahan steps went non-finite: redo checked */
            if (!chk && cm_kahan(cm) && !isfinite(v)) redo = true;
        }
        if (!redo) break;
    }
}

#define RG 32   /* rows per group of narrow-row sums (8 vectors) */

/* KAggLeaf.rows_sum: Kahan sums (KM_X or KM_SQ) of rows [r0, r1) of a
 * dense block with N < 4*KL columns, RG rows at a time (lane = row).
 * Each row is summed in column order with one chain, exactly like ksum
 * does for short arrays (unchecked steps, redone by ksum when the result
 * is not finite). */
static void rows_narrow(const double *x, int64_t N, int64_t r0, int64_t r1,
                        int mode, double *res)
{
    int64_t i = r0;
    if (N == 1) {   /* a one-cell Kahan sum is the cell itself */
        for (; i < r1; i++) res[i] = mode == KM_SQ ? x[i] * x[i] : x[i];
        return;
    }
    for (; i + RG <= r1; i += RG) {
        v4d S[RG / 4], C[RG / 4];
        for (int q = 0; q < RG / 4; q++) S[q] = C[q] = (v4d){0, 0, 0, 0};
        const double *xb = x + i * N;
        /* the next group's lines (the column-wise walk defeats the
         * hardware prefetcher) */
        for (int64_t p = RG * N; p < 2 * RG * N; p += 8) __builtin_prefetch(xb + p);
        int64_t j = 0;
        /* four columns at a time: four row vectors loaded whole and
         * transposed in registers (the same steps, in the same order, as
         * the cell-wise loads below) */
        for (; j + 4 <= N; j += 4) {
#pragma GCC unroll 8
            for (int q = 0; q < RG / 4; q++) {
                const double *p = xb + 4 * q * N + j;
                v4d a0 = vld(p), a1 = vld(p + N), a2 = vld(p + 2 * N), a3 = vld(p + 3 * N);
                v4d l01 = __builtin_shuffle(a0, a1, (v4i){0, 4, 2, 6});
                v4d h01 = __builtin_shuffle(a0, a1, (v4i){1, 5, 3, 7});
                v4d l23 = __builtin_shuffle(a2, a3, (v4i){0, 4, 2, 6});
                v4d h23 = __builtin_shuffle(a2, a3, (v4i){1, 5, 3, 7});
                v4d c0 = __builtin_shuffle(l01, l23, (v4i){0, 1, 4, 5});
                v4d c1 = __builtin_shuffle(h01, h23, (v4i){0, 1, 4, 5});
                v4d c2 = __builtin_shuffle(l01, l23, (v4i){2, 3, 6, 7});
                v4d c3 = __builtin_shuffle(h01, h23, (v4i){2, 3, 6, 7});
                vkadd_fast(&S[q], &C[q], mode == KM_SQ ? c0 * c0 : c0);
                vkadd_fast(&S[q], &C[q], mode == KM_SQ ? c1 * c1 : c1);
                vkadd_fast(&S[q], &C[q], mode == KM_SQ ? c2 * c2 : c2);
                vkadd_fast(&S[q], &C[q], mode == KM_SQ ? c3 * c3 : c3);
            }
        }
        if (N == 2) {
            /* four rows of two columns: two vectors, their columns
             * gathered by two shuffles (GLM's n x 2 probabilities) */
#pragma GCC unroll 8
            for (int q = 0; q < RG / 4; q++) {
                const double *p = xb + 8 * q;
                v4d a0 = vld(p), a1 = vld(p + 4);
                v4d c0 = __builtin_shuffle(a0, a1, (v4i){0, 2, 4, 6});
                v4d c1 = __builtin_shuffle(a0, a1, (v4i){1, 3, 5, 7});
                vkadd_fast(&S[q], &C[q], mode == KM_SQ ? c0 * c0 : c0);
                vkadd_fast(&S[q], &C[q], mode == KM_SQ ? c1 * c1 : c1);
            }
            j = N;
        }
        for (; j < N; j++) {
#pragma GCC unroll 8
            for (int q = 0; q < RG / 4; q++) {
                const double *p = xb + 4 * q * N + j;
                v4d v = { p[0], p[N], p[2 * N], p[3 * N] };
                vkadd_fast(&S[q], &C[q], mode == KM_SQ ? v * v : v);
            }
        }
        for (int q = 0; q < RG / 4; q++) {
            v4d r = S[q] + C[q];
            if (isfinite(r[0]) && isfinite(r[1]) && isfinite(r[2]) && isfinite(r[3])) {
                memcpy(res + i + 4 * q, &r, sizeof r);
                continue;
            }
            for (int l = 0; l < 4; l++)
                /* not finite: redo the row with the checked chain */
                res[i + 4 * q + l] = isfinite(r[l]) ? r[l] : kval(ksum(xb + (4 * q + l) * N, N, mode, 0));
        }
    }
    for (; i < r1; i++) res[i] = kval(ksum(x + i * N, N, mode, 0));
}

/* KAggLeaf.sp_rows_sum: Kahan sums (KM_X or KM_SQ) of the rows [r0, r1)
 * of a CSR block with at most SG values each, RG rows at a time (lane =
 * row, the steps of a row that has ended masked: its sum and correction
 * stay), so a row's loop does not end at its own count (the exits of
 * per-row loops of about ten values were mispredicted half the time,
 * sp_leaf.c; and one row's chain of dependent adds ran alone). Each row
 * is the chain of ksum over its values in order (unchecked steps, redone
 * by ksum when the result is not finite, as rows_narrow). Longer rows'
 * indexes go to longs; returns their count. */
#define SG 16
static int64_t sp_rows_sum(const int64_t *rp, const double *v, int64_t nz, int64_t r0, int64_t r1, int mode,
                           double *res, int64_t *longs)
{
    int64_t nl = 0, i = r0;
    for (; i + RG <= r1; i += RG) {
        double buf[RG][SG] __attribute__((aligned(32)));
        int64_t len[RG] __attribute__((aligned(32)));
        for (int r = 0; r < RG; r++) {
            int64_t p = rp[i + r], n = rp[i + r + 1] - p;
            if (n > SG) { longs[nl++] = i + r; n = 0; }
            len[r] = n;
            /* a fixed-size copy (the values past the row are masked
             * below), unless it would read past the stored values */
            if (p + SG <= nz) memcpy(buf[r], v + p, sizeof buf[r]);
            else {
                memset(buf[r], 0, sizeof buf[r]);
                memcpy(buf[r], v + p, (size_t)n * sizeof(double));
            }
        }
        v4d S[RG / 4], C[RG / 4];
        v4i Lq[RG / 4];
        for (int q = 0; q < RG / 4; q++) {
            S[q] = C[q] = (v4d){0, 0, 0, 0};
            memcpy(&Lq[q], len + 4 * q, sizeof Lq[q]);
        }
        for (int k = 0; k < SG; k += 4) {
#pragma GCC unroll 8
            for (int q = 0; q < RG / 4; q++) {
                /* steps k..k+3 of rows 4q..4q+3, transposed in registers */
                v4d a0 = vld(buf[4 * q] + k), a1 = vld(buf[4 * q + 1] + k);
                v4d a2 = vld(buf[4 * q + 2] + k), a3 = vld(buf[4 * q + 3] + k);
                v4d l01 = __builtin_shuffle(a0, a1, (v4i){0, 4, 2, 6});
                v4d h01 = __builtin_shuffle(a0, a1, (v4i){1, 5, 3, 7});
                v4d l23 = __builtin_shuffle(a2, a3, (v4i){0, 4, 2, 6});
                v4d h23 = __builtin_shuffle(a2, a3, (v4i){1, 5, 3, 7});
                v4d c[4] = {__builtin_shuffle(l01, l23, (v4i){0, 1, 4, 5}), __builtin_shuffle(h01, h23, (v4i){0, 1, 4, 5}),
                            __builtin_shuffle(l01, l23, (v4i){2, 3, 6, 7}), __builtin_shuffle(h01, h23, (v4i){2, 3, 6, 7})};
                for (int u = 0; u < 4; u++) {
                    v4d x = mode == KM_SQ ? c[u] * c[u] : c[u], s0 = S[q], c0 = C[q];
                    vkadd_fast(&S[q], &C[q], x);
                    v4i m = Lq[q] > (v4i){k + u, k + u, k + u, k + u};
                    S[q] = (v4d)(((v4i)S[q] & m) | ((v4i)s0 & ~m));
                    C[q] = (v4d)(((v4i)C[q] & m) | ((v4i)c0 & ~m));
                }
            }
        }
        for (int q = 0; q < RG / 4; q++)
            for (int l = 0; l < 4; l++) {
                int64_t r = i + 4 * q + l;
                double t = S[q][l] + C[q][l];
                if (len[4 * q + l] == 0 && rp[r + 1] - rp[r] > SG) continue;   /* in longs */
                res[r] = isfinite(t) ? t : kval(ksum(v + rp[r], rp[r + 1] - rp[r], mode, 0));
            }
    }
    for (; i < r1; i++) {
        if (rp[i + 1] - rp[i] > SG) longs[nl++] = i;
        else res[i] = kval(ksum(v + rp[i], rp[i + 1] - rp[i], mode, 0));
    }
    return nl;
}

/* rowIndexMax (mx) / rowIndexMin of one dense row of N > 0 cells, as
 * the sequential steps (v >= best from -Inf, or v <= best from +Inf,
 * NaN never taken) give it: the extreme non-NaN value m, then the last
 * cell equal to m (== takes -0 and +0 alike, as >= does): a
 * vectorized pass and a search from the row's end instead of a branch
 * per cell; a row of NaN has no cell equal to the start value, so 1 as
 * before. */
static double row_idx_wide(const double *restrict x, int64_t N, bool mx)
{
    /* the lanes as in amm, each step vsel_mm: v > s (mx) or v < s takes
     * v, and a NaN v is never taken (x86's max and min return their
     * second operand then) */
    const double m = sel_lanes(x, N, mx, NULL);
    /* the last cell equal to m, from the row's end (a pass over the
     * whole row took longer than finding m) */
    int64_t k = N;
#if defined(__AVX__)
    const __m256d mv = _mm256_set1_pd(m);
    for (; k >= 4; k -= 4) {
        const int bits = _mm256_movemask_pd(_mm256_cmp_pd(_mm256_loadu_pd(x + k - 4), mv, _CMP_EQ_OQ));
        if (bits) return (double)(k - 4 + (31 - __builtin_clz((unsigned)bits)) + 1);
    }
#endif
    for (; k >= 1; k--)
        if (x[k - 1] == m) return (double)k;
    return 1;
}

/* KAggLeaf.rows_minmax: rowMins/rowMaxs (OP_AMIN/OP_AMAX) or
 * rowIndexMin/rowIndexMax of rows [r0, r1) of a dense block with few columns N: one tight loop per row
 * without the blocked machinery of long rows (same results: min/max
 * propagate NaN; the index is of the last extreme non-NaN cell, 1 for a
 * row of NaN), compare-and-select steps without branches. Past 64
 * columns a row at a time (amm; row_idx_wide). */
static void rows_narrow_mm(OpCode op, const double *x, int64_t N, int64_t r0, int64_t r1,
                           double *res)
{
    bool mx = op == OP_AMAX || op == OP_IDXMAX, val = op == OP_AMIN || op == OP_AMAX;
    if (N > 64) {
        for (int64_t i = r0; i < r1; i++) res[i] = val ? amm(x + i * N, N, mx) : row_idx_wide(x + i * N, N, mx);
        return;
    }
    /* four rows at a time, one per lane, the same steps as below */
    for (; r0 + 4 <= r1; r0 += 4) {
        const double *xr = x + r0 * N;
        v4d best = val ? (v4d){xr[0], xr[N], xr[2 * N], xr[3 * N]}
                       : (v4d){0, 0, 0, 0} + (mx ? -INFINITY : INFINITY);
        v4d idx = {0, 0, 0, 0};
        for (int64_t j = val ? 1 : 0; j < N; j++) {
            v4d v = {xr[j], xr[N + j], xr[2 * N + j], xr[3 * N + j]};
            v4i take;
            if (val) take = (mx ? v > best : v < best) | (v != v);
            else take = mx ? v >= best : v <= best;
            best = (v4d)(((v4i)v & take) | ((v4i)best & ~take));
            v4d jj = (v4d){0, 0, 0, 0} + (double)j;
            idx = (v4d)(((v4i)jj & take) | ((v4i)idx & ~take));
        }
        for (int l = 0; l < 4; l++) res[r0 + l] = val ? best[l] : idx[l] + 1;
    }
    if (val) {
        for (int64_t i = r0; i < r1; i++) {
            const double *xr = x + i * N;
            double s = xr[0];
            for (int64_t j = 1; j < N; j++) s = mx ? max_step(s, xr[j]) : min_step(s, xr[j]);
            res[i] = s;
        }
        return;
    }
    for (int64_t i = r0; i < r1; i++) {
        const double *xr = x + i * N;
        double best = mx ? -INFINITY : INFINITY;
        int64_t idx = 0;
        for (int64_t j = 0; j < N; j++) {
            double v = xr[j];
            bool take = mx ? v >= best : v <= best;
            best = take ? v : best;
            idx = take ? j : idx;
        }
        res[i] = (double)(idx + 1);
    }
}

/* KAggLeaf.cum_row */
static void cum_row(OpCode op, const double *restrict x, double *restrict o, double *restrict s,
                    double *restrict c, int64_t w)
{
    switch (op) {
    case OP_CUMSUM:
#pragma omp simd
        for (int64_t k = 0; k < w; k++) {
            double y = x[k] + c[k], t = s[k] + y;
            c[k] = fabs(t) <= DBL_MAX ? y - (t - s[k]) : 0;
            s[k] = t;
            o[k] = t + c[k];
        }
        break;
    case OP_CUMPROD:
#pragma omp simd
        for (int64_t k = 0; k < w; k++) o[k] = s[k] *= x[k];
        break;
    case OP_CUMMIN:
#pragma omp simd
        for (int64_t k = 0; k < w; k++) o[k] = s[k] = min_step(s[k], x[k]);
        break;
    default:
#pragma omp simd
        for (int64_t k = 0; k < w; k++) o[k] = s[k] = max_step(s[k], x[k]);
        break;
    }
}

const KAggLeaf K_LEAF(k_agg_leaf) = {
    .ksum = ksum, .minmaxprod = minmaxprod, .col_task = col_task, .rows_sum = rows_narrow,
    .rows_minmax = rows_narrow_mm, .cum_row = cum_row, .sp_rows_sum = sp_rows_sum,
};
