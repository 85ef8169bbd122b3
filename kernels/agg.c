/* agg.c: full, row and column aggregates, trace and cumulative aggregates.
 *
 * Sums are Kahan sums (SystemDS's kahan-plus: the correction holds the part
 * of the last addend lost in the sum). Long arrays are summed in KL
 * independent lanes held in vector registers, merged by a fixed tree; a
 * sum over more than FB cells is split into fixed blocks of FB cells whose
 * partials are merged in order. Rows shorter than 4*KL are summed one chain
 * per row, RG rows interleaved. Column aggregates run over (row block,
 * column chunk) tasks whose partial rows are merged in row-block order.
 * All block boundaries depend only on the shape, so results are the same
 * for any thread count. Hot loops use Kahan steps without the finiteness
 * check and redo a sum with the checked steps when it comes out infinite
 * or NaN (same result, see vkadd_fast). Variances take two passes (mean,
 * then squared deviations from it).
 */
#include "agg.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NV 8           /* vector accumulators of long sums */
#define KL (4 * NV)    /* Kahan lanes of long sums */
#define FB 32768       /* cells per block of long sums */
#define CCW 8192       /* column chunk of column aggregates */
#define CUMW 256       /* column chunk of cumulative aggregates */

/* ------------------------------------------------------------------ */
/* Kahan sums                                                          */
/* ------------------------------------------------------------------ */

typedef struct Kahan { double s, c; } Kahan;

/* Adds x; an infinite or NaN sum resets the correction, so infinities
 * propagate like in a plain sum. */
static inline void kadd(Kahan *k, double x)
{
    double y = x + k->c, t = k->s + y;
    k->c = fabs(t) <= DBL_MAX ? y - (t - k->s) : 0;
    k->s = t;
}

static inline void kmerge(Kahan *k, Kahan o)
{
    kadd(k, o.s);
    kadd(k, o.c);
}

static inline double kval(Kahan k) { return k.s + k.c; }

enum { KM_X, KM_SQ, KM_DEV2 };   /* summand: x, x*x, (x-m)^2 */

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
static Kahan klanes(const double *restrict x, int64_t n, int mode, double m, bool chk)
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
            Kahan a = { s[l], c[l] };
            kadd(&a, s[l + h]);
            kadd(&a, c[l + h]);
            s[l] = a.s; c[l] = a.c;
        }
    return (Kahan){ s[0], c[0] };
}

/* Kahan sum of the summands of x[0..n): in lanes (klanes) from 4*KL
 * cells on, else in one scalar chain. */
static Kahan ksum(const double *restrict x, int64_t n, int mode, double m)
{
    Kahan k = {0, 0};
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

/* Kahan sum of the summands of x[0..n) in blocks of FB cells merged in
 * order; par: blocks in parallel (same result). */
static Kahan bsum(const double *x, int64_t n, int mode, double m, bool par)
{
    if (n <= FB) return ksum(x, n, mode, m);
    int64_t nb = (n + FB - 1) / FB;
    Kahan k = {0, 0};
    Kahan *parts = par ? br_malloc((size_t)nb * sizeof *parts) : NULL;
    if (!parts) {
        for (int64_t b = 0; b < nb; b++)
            kmerge(&k, ksum(x + b * FB, BR_MIN(FB, n - b * FB), mode, m));
        return k;
    }
#pragma omp parallel for num_threads(br_threads()) if (n >= BR_PAR_MIN) schedule(static)
    for (int64_t b = 0; b < nb; b++)
        parts[b] = ksum(x + b * FB, BR_MIN(FB, n - b * FB), mode, m);
    for (int64_t b = 0; b < nb; b++) kmerge(&k, parts[b]);
    free(parts);
    return k;
}

/* ------------------------------------------------------------------ */
/* min, max, prod over arrays                                          */
/* ------------------------------------------------------------------ */

/* NaN-propagating min/max steps: once s is NaN it stays NaN. */
static inline double min_step(double s, double v) { return (v < s || v != v) ? v : s; }
static inline double max_step(double s, double v) { return (v > s || v != v) ? v : s; }

/* min (want_max false) or max of x[0..n), NaN propagating; +-Inf if n==0. */
static double amm(const double *restrict x, int64_t n, bool want_max)
{
    double s[KL];
    double init = want_max ? -INFINITY : INFINITY;
    for (int l = 0; l < KL; l++) s[l] = init;
    int64_t nv = n - n % KL;
    if (want_max) {
        for (int64_t i = 0; i < nv; i += KL) {
#pragma omp simd
            for (int l = 0; l < KL; l++) s[l] = max_step(s[l], x[i + l]);
        }
    } else {
        for (int64_t i = 0; i < nv; i += KL) {
#pragma omp simd
            for (int l = 0; l < KL; l++) s[l] = min_step(s[l], x[i + l]);
        }
    }
    double r = init;
    for (int l = 0; l < KL; l++) r = want_max ? max_step(r, s[l]) : min_step(r, s[l]);
    for (int64_t i = nv; i < n; i++) r = want_max ? max_step(r, x[i]) : min_step(r, x[i]);
    return r;
}

static double aprod(const double *x, int64_t n)
{
    double p = 1;
    for (int64_t i = 0; i < n; i++) p *= x[i];
    return p;
}

/* A product r that came out infinite or NaN over cells that include a
 * zero but no infinite or NaN value is an intermediate overflow times 0:
 * the exact product is 0. Scans values x[k*stride], k < n (stride 0:
 * none); zero: the cells include an implicit zero. */
static double prod_fix(double r, const double *x, int64_t n, int64_t stride, bool zero)
{
    if (isfinite(r)) return r;
    bool nonfin = false;
    for (int64_t k = 0; k < n && stride; k++) {
        double v = x[k * stride];
        if (v == 0) zero = true;
        else if (!isfinite(v)) nonfin = true;
    }
    return zero && !nonfin ? 0.0 : r;
}

/* min/max/prod of one block. */
static double mmp1(OpCode op, const double *x, int64_t n)
{
    return op == OP_PROD ? aprod(x, n) : amm(x, n, op == OP_AMAX);
}

/* min/max/prod of x[0..n) in blocks of FB, merged in order (products
 * too, so the result does not depend on par); par: blocks in parallel. */
static double bmmp(OpCode op, const double *x, int64_t n, bool par)
{
    int64_t nb = (n + FB - 1) / FB;
    if (nb <= 1) return mmp1(op, x, n);
    double *parts = par ? br_malloc((size_t)nb * sizeof(double)) : NULL;
    double r = 0;
    if (parts) {
#pragma omp parallel for num_threads(br_threads()) if (n >= BR_PAR_MIN) schedule(static)
        for (int64_t b = 0; b < nb; b++)
            parts[b] = mmp1(op, x + b * FB, BR_MIN(FB, n - b * FB));
    }
    for (int64_t b = 0; b < nb; b++) {
        double p = parts ? parts[b] : mmp1(op, x + b * FB, BR_MIN(FB, n - b * FB));
        r = b == 0 ? p : op == OP_PROD ? r * p : op == OP_AMAX ? max_step(r, p) : min_step(r, p);
    }
    free(parts);
    return r;
}

/* ------------------------------------------------------------------ */
/* aggregate of one segment: values x[0..len) plus nz0 implicit zeros  */
/* ------------------------------------------------------------------ */

/* Variance (n-1) of x[0..len) and nz0 zeros, two passes. */
static double seg_var(const double *x, int64_t len, int64_t nz0, bool par)
{
    int64_t n = len + nz0;
    if (n == 0) return NAN;
    if (n == 1) return 0;
    double mean = kval(bsum(x, len, KM_X, 0, par)) / (double)n;
    Kahan d = bsum(x, len, KM_DEV2, mean, par);
    if (nz0) kadd(&d, (double)nz0 * mean * mean);
    return kval(d) / (double)(n - 1);
}

/* op over one segment (a row, or all cells of a block). */
static double seg_agg(OpCode op, const double *x, int64_t len, int64_t nz0, bool par)
{
    int64_t n = len + nz0;
    double r;
    switch (op) {
    case OP_SUM: return kval(bsum(x, len, KM_X, 0, par));
    case OP_SUMSQ: return kval(bsum(x, len, KM_SQ, 0, par));
    case OP_MEAN: return kval(bsum(x, len, KM_X, 0, par)) / (double)n;
    case OP_VAR: return seg_var(x, len, nz0, par);
    case OP_SD: return sqrt(seg_var(x, len, nz0, par));
    case OP_AMIN:
        r = bmmp(op, x, len, par);
        return nz0 ? min_step(r, 0.0) : r;
    case OP_AMAX:
        r = bmmp(op, x, len, par);
        return nz0 ? max_step(r, 0.0) : r;
    case OP_PROD:
        r = bmmp(op, x, len, par);
        return prod_fix(nz0 ? r * 0.0 : r, x, len, 1, nz0 > 0);
    default: return NAN;
    }
}

/* rowIndexMax (want_max) / rowIndexMin of one row: x[0..len) at columns
 * ci (NULL: dense, column k), N columns; returns the 1-based column of the
 * last extreme cell, NaN ignored. */
static double row_idx(const double *x, const int32_t *ci, int64_t len, int64_t N,
                      bool want_max)
{
    if (N == 0) return 0;
    double best = want_max ? -INFINITY : INFINITY;
    int64_t idx = -1;
    for (int64_t k = 0; k < len; k++) {
        double v = x[k];
        if (want_max ? v >= best : v <= best) { best = v; idx = ci ? ci[k] : k; }
    }
    if (len < N && (idx < 0 || (want_max ? 0 >= best : 0 <= best))) {
        /* an implicit zero wins: the last column not stored */
        int64_t j = N - 1;
        for (int64_t k = len - 1; k >= 0 && ci[k] == j; k--) j--;
        idx = j;
    }
    return (double)(BR_MAX(idx, 0) + 1);
}

/* ------------------------------------------------------------------ */
/* column aggregates                                                   */
/* ------------------------------------------------------------------ */

enum { CM_SUM, CM_SQ, CM_DEV2, CM_MIN, CM_MAX, CM_PROD };

static bool cm_kahan(int cm) { return cm == CM_SUM || cm == CM_SQ || cm == CM_DEV2; }

static double cm_init(int cm)
{
    return cm == CM_MIN ? INFINITY : cm == CM_MAX ? -INFINITY : cm == CM_PROD ? 1 : 0;
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

/* Merges partial p (value ps, correction pc) into (r, rc) for mode cm. */
static inline void cm_merge(int cm, double *r, double *rc, double ps, double pc)
{
    if (cm_kahan(cm)) {
        Kahan k = { *r, *rc };
        kadd(&k, ps); kadd(&k, pc);
        *r = k.s; *rc = k.c;
    } else if (cm == CM_MIN) *r = min_step(*r, ps);
    else if (cm == CM_MAX) *r = max_step(*r, ps);
    else *r *= ps;
}

/* One column task of a dense block: rows [r0, r1), columns [j0, j0+w),
 * L rows per lane group (L > 1 only when w == N); writes the partial of
 * each column to ps/pc, or the final value to ps when pc is NULL. m:
 * column means for CM_DEV2. s, c, mr: scratch of L*w doubles each. */
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
            else ps[j] = cm_kahan(cm) ? kval((Kahan){ v, vc }) : v;
            /* unchecked Kahan steps went non-finite: redo checked */
            if (!chk && cm_kahan(cm) && !isfinite(v)) redo = true;
        }
        if (!redo) break;
    }
}

/* Rows [r0, r1) of a sparse column aggregate: partials ps/pc, stored
 * entries per column in cnt. */
static void col_sparse_task(const MB *a, int64_t r0, int64_t r1, int cm,
                            const double *m, double *ps, double *pc, int64_t *cnt)
{
    for (int64_t i = r0; i < r1; i++)
        for (int64_t k = a->rp[i]; k < a->rp[i + 1]; k++) {
            int32_t j = a->ci[k];
            double v = a->v[k];
            cnt[j]++;
            if (cm_kahan(cm)) {
                Kahan kh = { ps[j], pc[j] };
                kadd(&kh, cm == CM_SUM ? v : cm == CM_SQ ? v * v : (v - m[j]) * (v - m[j]));
                ps[j] = kh.s; pc[j] = kh.c;
            } else {
                cm_merge(cm, &ps[j], &pc[j], v, 0);
            }
        }
}

/* Column products that came out infinite or NaN: see prod_fix. */
static int prod_fix_cols(const MB *a, int cm, double *res)
{
    if (cm != CM_PROD) return 0;
    for (int64_t j = 0; j < a->cols; j++) {
        if (isfinite(res[j])) continue;
        if (!a->sparse) { res[j] = prod_fix(res[j], a->d + j, a->rows, a->cols, false); continue; }
        bool nonfin = false;    /* stored values of column j */
        int64_t n = 0;
        for (int64_t k = 0; k < a->nnz; k++)
            if (a->ci[k] == j) { n++; nonfin |= !isfinite(a->v[k]); }
        res[j] = prod_fix(res[j], NULL, 0, 0, n < a->rows && !nonfin);
    }
    return 0;
}

/* Column aggregate of a in mode cm into res[0..N): Kahan values for the
 * sum modes, else min/max/prod; implicit zeros of sparse inputs included
 * (CM_DEV2 adds m[j]^2 per implicit zero). Returns 0 or an error code. */
static int col_agg(const MB *a, int cm, const double *m, double *res, BrErr *e)
{
    int64_t M = a->rows, N = a->cols;
    double init = cm_init(cm);
    if (N == 0) return 0;
    if (M == 0) {
        for (int64_t j = 0; j < N; j++) res[j] = init;
        return 0;
    }
    int64_t nrb, rb = 0, *bounds = NULL, *cnt = NULL;
    int64_t cw = BR_MIN(N, CCW), nck = (N + cw - 1) / cw, L = 1;
    if (!a->sparse) {
        if (N < 64) L = (64 + N - 1) / N;
        rb = BR_MAX(256, 65536 / N);
        rb = (rb + L - 1) / L * L;
        nrb = (M + rb - 1) / rb;
    } else {
        nrb = a->nnz / (4 * N + 65536);
        nrb = BR_MAX(1, BR_MIN(nrb, 64));
        nck = 1;
    }
    size_t cells = (size_t)nrb * (size_t)N;
    bool direct = !a->sparse && nrb == 1;   /* one row block: final values */
    double *ps = direct ? res : br_malloc(cells * sizeof(double));
    double *pc = direct ? NULL : br_malloc(cells * sizeof(double));
    if (a->sparse) {
        cnt = br_calloc(cells, sizeof(int64_t));
        bounds = br_malloc((size_t)(nrb + 1) * sizeof(int64_t));
    }
    if (!ps || (!direct && !pc) || (a->sparse && (!cnt || !bounds))) {
        if (!direct) { free(ps); free(pc); }
        free(cnt); free(bounds);
        return br_err(e, BR_ENOMEM, "out of memory in column aggregate");
    }
    if (a->sparse) {
        /* blocks of about equal nnz; boundaries depend on the data only */
        bounds[0] = 0;
        for (int64_t b = 1; b < nrb; b++) {
            int64_t target = a->nnz / nrb * b, lo = bounds[b - 1], hi = M;
            while (lo < hi) {
                int64_t mid = lo + (hi - lo) / 2;
                if (a->rp[mid] < target) lo = mid + 1; else hi = mid;
            }
            bounds[b] = lo;
        }
        bounds[nrb] = M;
        for (size_t k = 0; k < cells; k++) { ps[k] = init; pc[k] = 0; }
#pragma omp parallel for num_threads(br_threads()) if (a->nnz >= BR_PAR_MIN) \
    schedule(static, 1)
        for (int64_t b = 0; b < nrb; b++)
            col_sparse_task(a, bounds[b], bounds[b + 1], cm, m, ps + b * N,
                            pc + b * N, cnt + b * N);
    } else {
        int64_t ntask = nrb * nck, lw = nck == 1 ? L * N : cw;
        bool fail = false;
#pragma omp parallel num_threads(br_threads()) if (M * N >= BR_PAR_MIN)
        {
            double *scr = br_malloc((size_t)lw * 3 * sizeof(double));
            if (!scr) {
#pragma omp atomic write
                fail = true;
            }
#pragma omp for schedule(static)
            for (int64_t t = 0; t < ntask; t++) {
                if (!scr) continue;
                int64_t b = t / nck, j0 = (t % nck) * cw;
                int64_t w = BR_MIN(cw, N - j0);
                col_task(a->d, N, b * rb, BR_MIN(M, (b + 1) * rb), j0, w,
                         nck == 1 ? L : 1, cm, m, ps + b * N + j0,
                         direct ? NULL : pc + b * N + j0, scr, scr + lw, scr + 2 * lw);
            }
            free(scr);
        }
        if (fail || direct) {
            if (!direct) { free(ps); free(pc); }
            if (fail) return br_err(e, BR_ENOMEM, "out of memory in column aggregate");
            return prod_fix_cols(a, cm, res);
        }
    }
#pragma omp parallel for num_threads(br_threads()) if (cells >= BR_PAR_MIN) \
    schedule(static)
    for (int64_t j = 0; j < N; j++) {
        double r = init, rc = 0;
        int64_t n = 0;
        for (int64_t b = 0; b < nrb; b++) {
            cm_merge(cm, &r, &rc, ps[b * N + j], pc[b * N + j]);
            if (cnt) n += cnt[b * N + j];
        }
        if (a->sparse && n < M) {
            int64_t z = M - n;
            if (cm == CM_DEV2) cm_merge(cm, &r, &rc, (double)z * m[j] * m[j], 0);
            else if (cm == CM_MIN || cm == CM_MAX) cm_merge(cm, &r, &rc, 0, 0);
            else if (cm == CM_PROD) r *= 0.0;
        }
        res[j] = cm_kahan(cm) ? kval((Kahan){ r, rc }) : r;
    }
    free(ps); free(pc); free(cnt); free(bounds);
    return prod_fix_cols(a, cm, res);
}

/* Column aggregate for k_agg (DIR_COL) into res[0..N). */
static int col_op(OpCode op, const MB *a, double *res, BrErr *e)
{
    int64_t M = a->rows, N = a->cols;
    switch (op) {
    case OP_SUM: return col_agg(a, CM_SUM, NULL, res, e);
    case OP_SUMSQ: return col_agg(a, CM_SQ, NULL, res, e);
    case OP_AMIN: return col_agg(a, CM_MIN, NULL, res, e);
    case OP_AMAX: return col_agg(a, CM_MAX, NULL, res, e);
    case OP_PROD: return col_agg(a, CM_PROD, NULL, res, e);
    case OP_MEAN:
        if (col_agg(a, CM_SUM, NULL, res, e)) return e->code;
        for (int64_t j = 0; j < N; j++) res[j] /= (double)M;
        return 0;
    case OP_VAR:
    case OP_SD: {
        double *m = br_malloc((size_t)BR_MAX(N, 1) * sizeof(double));
        if (!m) return br_err(e, BR_ENOMEM, "out of memory");
        int rc = col_agg(a, CM_SUM, NULL, m, e);
        for (int64_t j = 0; j < N && !rc; j++) m[j] /= (double)M;
        if (!rc) rc = col_agg(a, CM_DEV2, m, res, e);
        for (int64_t j = 0; j < N && !rc; j++) {
            double v = M == 0 ? NAN : M == 1 ? 0 : res[j] / (double)(M - 1);
            res[j] = op == OP_SD ? sqrt(v) : v;
        }
        free(m);
        return rc;
    }
    default:
        return br_err(e, BR_EARG, "aggregate %s has no column direction", op_info[op].name);
    }
}

/* ------------------------------------------------------------------ */
/* public: k_agg, k_agg_full, k_trace                                  */
/* ------------------------------------------------------------------ */

static bool agg_supported(OpCode op)
{
    switch (op) {
    case OP_SUM: case OP_SUMSQ: case OP_MEAN: case OP_VAR: case OP_SD:
    case OP_AMIN: case OP_AMAX: case OP_PROD: case OP_IDXMAX: case OP_IDXMIN:
        return true;
    default:
        return false;
    }
}

#define RG 32   /* rows per group of narrow-row sums (8 vectors) */

/* Kahan sums (KM_X or KM_SQ) of rows [r0, r1) of a dense block with
 * N < 4*KL columns, RG rows at a time (lane = row). Each row is summed in
 * column order with one chain, exactly like ksum does for short arrays
 * (unchecked steps, redone by ksum when the result is not finite). */
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
        for (; j < N; j++) {
#pragma GCC unroll 8
            for (int q = 0; q < RG / 4; q++) {
                const double *p = xb + 4 * q * N + j;
                v4d v = { p[0], p[N], p[2 * N], p[3 * N] };
                vkadd_fast(&S[q], &C[q], mode == KM_SQ ? v * v : v);
            }
        }
        for (int q = 0; q < RG / 4; q++)
            for (int l = 0; l < 4; l++) {
                double r = S[q][l] + C[q][l];
                /* not finite: redo the row with the checked chain */
                res[i + 4 * q + l] = isfinite(r) ? r
                                   : kval(ksum(xb + (4 * q + l) * N, N, mode, 0));
            }
    }
    for (; i < r1; i++) res[i] = kval(ksum(x + i * N, N, mode, 0));
}

/* rowMins/rowMaxs (OP_AMIN/OP_AMAX) or rowIndexMin/rowIndexMax of rows
 * [r0, r1) of a dense block with few columns N: one tight loop per row
 * without the blocked machinery of long rows (same results: min/max
 * propagate NaN; the index is of the last extreme non-NaN cell, 1 for a
 * row of NaN), compare-and-select steps without branches. */
static void rows_narrow_mm(OpCode op, const double *x, int64_t N, int64_t r0, int64_t r1,
                           double *res)
{
    bool mx = op == OP_AMAX || op == OP_IDXMAX, val = op == OP_AMIN || op == OP_AMAX;
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

/* Number of non-zeros of x[0..n), in parallel for long arrays. */
static int64_t nnz_par(const double *x, int64_t n)
{
    int64_t c = 0;
#pragma omp parallel for num_threads(br_threads()) if (n >= BR_PAR_MIN) \
    reduction(+:c) schedule(static)
    for (int64_t i = 0; i < n; i++) c += x[i] != 0;
    return c;
}

/* Row aggregate into res[0..M). */
static void row_op(OpCode op, const MB *a, double *res)
{
    int64_t M = a->rows, N = a->cols;
    bool idx = op == OP_IDXMAX || op == OP_IDXMIN, want_max = op == OP_IDXMAX;
    if (N == 0) {
        double v = idx ? 0 : seg_agg(op, NULL, 0, 0, false);
        for (int64_t i = 0; i < M; i++) res[i] = v;
        return;
    }
    /* few long rows: parallel inside each row (same numbers) */
    bool inner = M < 2 * (int64_t)br_threads() && N >= 2 * FB && !a->sparse;
    if (inner) {
        for (int64_t i = 0; i < M; i++)
            res[i] = idx ? row_idx(a->d + i * N, NULL, N, N, want_max)
                         : seg_agg(op, a->d + i * N, N, 0, true);
        return;
    }
    int64_t work = a->sparse ? a->nnz + M : M * N;
    if (!a->sparse && N < 4 * KL && (op == OP_SUM || op == OP_SUMSQ || op == OP_MEAN)) {
        int64_t nch = (M + 4095) / 4096;
#pragma omp parallel for num_threads(br_threads()) if (work >= BR_PAR_MIN) \
    schedule(static)
        for (int64_t t = 0; t < nch; t++) {
            int64_t r0 = t * 4096, r1 = BR_MIN(M, r0 + 4096);
            rows_narrow(a->d, N, r0, r1, op == OP_SUMSQ ? KM_SQ : KM_X, res);
            if (op == OP_MEAN)
                for (int64_t i = r0; i < r1; i++) res[i] /= (double)N;
        }
        return;
    }
    if (!a->sparse && N <= 64 &&
        (op == OP_AMIN || op == OP_AMAX || op == OP_IDXMIN || op == OP_IDXMAX)) {
        int64_t nch = (M + 4095) / 4096;
#pragma omp parallel for num_threads(br_threads()) if (work >= BR_PAR_MIN) \
    schedule(static)
        for (int64_t t = 0; t < nch; t++)
            rows_narrow_mm(op, a->d, N, t * 4096, BR_MIN(M, t * 4096 + 4096), res);
        return;
    }
    if (!a->sparse) {
#pragma omp parallel for num_threads(br_threads()) if (work >= BR_PAR_MIN) \
    schedule(static)
        for (int64_t i = 0; i < M; i++)
            res[i] = idx ? row_idx(a->d + i * N, NULL, N, N, want_max)
                         : seg_agg(op, a->d + i * N, N, 0, false);
        return;
    }
#pragma omp parallel for num_threads(br_threads()) if (work >= BR_PAR_MIN) \
    schedule(dynamic, 64)
    for (int64_t i = 0; i < M; i++) {
        int64_t k = a->rp[i], len = a->rp[i + 1] - k;
        res[i] = idx ? row_idx(a->v + k, a->ci + k, len, N, want_max)
                     : seg_agg(op, a->v + k, len, N - len, false);
    }
}

/* k_agg; see agg.h. Caller owns the result. */
MB *k_agg(OpCode op, AggDir dir, const MB *a, BrErr *e)
{
    if (!agg_supported(op)) {
        br_err(e, BR_EARG, "k_agg: unsupported aggregate");
        return NULL;
    }
    if ((op == OP_IDXMAX || op == OP_IDXMIN) && dir != DIR_ROW) {
        br_err(e, BR_EARG, "%s is a row aggregate", op_info[op].name);
        return NULL;
    }
    if (dir == DIR_FULL) {
        double v;
        if (k_agg_full(op, a, &v, e)) return NULL;
        return mb_scalar(v, e);
    }
    bool row = dir == DIR_ROW;
    MB *out = row ? mb_dense_uninit(a->rows, 1, e) : mb_dense_uninit(1, a->cols, e);
    if (!out) return NULL;
    if (row) row_op(op, a, out->d);
    else if (col_op(op, a, out->d, e)) { mb_release(out); return NULL; }
    out->nnz = nnz_par(out->d, out->rows * out->cols);
    if (mb_examine(out, e)) { mb_release(out); return NULL; }
    return out;
}

/* Full aggregate as a scalar; see agg.h. */
int k_agg_full(OpCode op, const MB *a, double *out, BrErr *e)
{
    if (!agg_supported(op) || op == OP_IDXMAX || op == OP_IDXMIN)
        return br_err(e, BR_EARG, "k_agg_full: unsupported aggregate");
    int64_t cells = a->rows * a->cols;
    if (a->sparse) *out = seg_agg(op, a->v, a->nnz, cells - a->nnz, true);
    else *out = seg_agg(op, a->d, cells, 0, true);
    return 0;
}

/* Kahan sum of the diagonal of a square matrix. */
double k_trace(const MB *a, BrErr *e)
{
    if (a->rows != a->cols) {
        br_err(e, BR_EDIM, "trace requires a square matrix, got dimensions %lldx%lld",
               (long long)a->rows, (long long)a->cols);
        return NAN;
    }
    Kahan k = {0, 0};
    for (int64_t i = 0; i < a->rows; i++) kadd(&k, mb_get(a, i, i));
    return kval(k);
}

/* ------------------------------------------------------------------ */
/* cumulative aggregates                                               */
/* ------------------------------------------------------------------ */

/* Values of row i of a, columns [j0, j0+w), into buf (dense rows: pointer
 * into the block). */
static const double *cum_row(const MB *a, int64_t i, int64_t j0, int64_t w, double *buf)
{
    if (!a->sparse) return a->d + i * a->cols + j0;
    memset(buf, 0, (size_t)w * sizeof(double));
    int64_t lo = a->rp[i], hi = a->rp[i + 1];
    if (j0 > 0) {
        int64_t p = lo, q = hi;
        while (p < q) {
            int64_t mid = p + (q - p) / 2;
            if (a->ci[mid] < j0) p = mid + 1; else q = mid;
        }
        lo = p;
    }
    for (int64_t k = lo; k < hi && a->ci[k] < j0 + w; k++) buf[a->ci[k] - j0] = a->v[k];
    return buf;
}

/* Cumulative op down columns [j0, j0+w) of a into out (dense). */
static void cum_task(OpCode op, const MB *a, double *out, int64_t j0, int64_t w)
{
    int64_t M = a->rows, N = a->cols;
    double s[CUMW], c[CUMW], buf[CUMW];
    double init = op == OP_CUMPROD ? 1 : op == OP_CUMMIN ? INFINITY
                : op == OP_CUMMAX ? -INFINITY : 0;
    for (int64_t k = 0; k < w; k++) { s[k] = init; c[k] = 0; }
    for (int64_t i = 0; i < M; i++) {
        const double *restrict x = cum_row(a, i, j0, w, buf);
        double *restrict o = out + i * N + j0;
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
}

/* k_cum; see agg.h. Caller owns the result. */
MB *k_cum(OpCode op, const MB *a, BrErr *e)
{
    if (op != OP_CUMSUM && op != OP_CUMPROD && op != OP_CUMMIN && op != OP_CUMMAX) {
        br_err(e, BR_EARG, "k_cum: not a cumulative aggregate");
        return NULL;
    }
    int64_t M = a->rows, N = a->cols;
    if (a->sparse && a->nnz == 0) return mb_empty(M, N, e);
    MB *out = mb_dense_uninit(M, N, e);
    if (!out) return NULL;
    int64_t nck = (N + CUMW - 1) / CUMW;
#pragma omp parallel for num_threads(br_threads()) if (M * N >= BR_PAR_MIN) \
    schedule(dynamic, 1)
    for (int64_t t = 0; t < nck; t++)
        cum_task(op, a, out->d, t * CUMW, BR_MIN(CUMW, N - t * CUMW));
    out->nnz = nnz_par(out->d, M * N);
    if (mb_examine(out, e)) { mb_release(out); return NULL; }
    return out;
}
