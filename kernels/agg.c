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
 * or NaN (same result, see vkadd_fast in agg_leaf.c). Variances take two
 * passes (mean, then squared deviations from it). The loops over arrays
 * are the leaf kernels of agg_leaf.c (one copy per SIMD level, see
 * leaf.h); blocking, threads and merging stay here.
 */
#include "agg.h"
#include "agg_int.h"

#include <stdlib.h>
#include <string.h>

#define KL K_AGG_LANES /* Kahan lanes of long sums (agg_leaf.c) */
#define FB 32768       /* cells per block of long sums */
#define CCW 8192       /* column chunk of column aggregates */
#define CUMW 256       /* column chunk of cumulative aggregates */

/* The loops of the SIMD level in use (agg_leaf.c). */
static const KAggLeaf *leaf(void) { return k_leaves(k_isa())->agg; }

/* ------------------------------------------------------------------ */
/* Kahan sums                                                          */
/* ------------------------------------------------------------------ */

/* Kahan sum of the summands of x[0..n) in blocks of FB cells merged in
 * order; par: blocks in parallel (same result). */
static KKahan bsum(const double *x, int64_t n, int mode, double m, bool par)
{
    const KAggLeaf *L = leaf();
    if (n <= FB) return L->ksum(x, n, mode, m);
    int64_t nb = (n + FB - 1) / FB;
    KKahan k = {0, 0};
    KKahan *parts = par ? br_malloc((size_t)nb * sizeof *parts) : NULL;
    if (!parts) {
        for (int64_t b = 0; b < nb; b++)
            kmerge(&k, L->ksum(x + b * FB, BR_MIN(FB, n - b * FB), mode, m));
        return k;
    }
#pragma omp parallel for num_threads(br_threads()) if (br_par(n)) schedule(static)
    for (int64_t b = 0; b < nb; b++)
        parts[b] = L->ksum(x + b * FB, BR_MIN(FB, n - b * FB), mode, m);
    for (int64_t b = 0; b < nb; b++) kmerge(&k, parts[b]);
    free(parts);
    return k;
}

/* ------------------------------------------------------------------ */
/* min, max, prod over arrays                                          */
/* ------------------------------------------------------------------ */

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

/* min/max/prod of x[0..n) in blocks of FB, merged in order (products
 * too, so the result does not depend on par); par: blocks in parallel. */
static double bmmp(OpCode op, const double *x, int64_t n, bool par)
{
    const KAggLeaf *L = leaf();
    int64_t nb = (n + FB - 1) / FB;
    if (nb <= 1) return L->minmaxprod(op, x, n);
    double *parts = par ? br_malloc((size_t)nb * sizeof(double)) : NULL;
    double r = 0;
    if (parts) {
#pragma omp parallel for num_threads(br_threads()) if (br_par(n)) schedule(static)
        for (int64_t b = 0; b < nb; b++)
            parts[b] = L->minmaxprod(op, x + b * FB, BR_MIN(FB, n - b * FB));
    }
    for (int64_t b = 0; b < nb; b++) {
        double p = parts ? parts[b] : L->minmaxprod(op, x + b * FB, BR_MIN(FB, n - b * FB));
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
    KKahan d = bsum(x, len, KM_DEV2, mean, par);
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
                KKahan kh = { ps[j], pc[j] };
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
#pragma omp parallel for num_threads(br_threads()) if (br_par(a->nnz)) \
    schedule(static, 1)
        for (int64_t b = 0; b < nrb; b++)
            col_sparse_task(a, bounds[b], bounds[b + 1], cm, m, ps + b * N,
                            pc + b * N, cnt + b * N);
    } else {
        int64_t ntask = nrb * nck, lw = nck == 1 ? L * N : cw;
        bool fail = false;
#pragma omp parallel num_threads(br_threads()) if (br_par(M * N))
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
                leaf()->col_task(a->d, N, b * rb, BR_MIN(M, (b + 1) * rb), j0, w,
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
#pragma omp parallel for num_threads(br_threads()) if (br_par(cells)) \
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
        res[j] = cm_kahan(cm) ? kval((KKahan){ r, rc }) : r;
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

/* Number of non-zeros of x[0..n), in parallel for long arrays. */
static int64_t nnz_par(const double *x, int64_t n)
{
    int64_t c = 0;
#pragma omp parallel for num_threads(br_threads()) if (br_par(n)) \
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
#pragma omp parallel for num_threads(br_threads()) if (br_par(work)) \
    schedule(static)
        for (int64_t t = 0; t < nch; t++) {
            int64_t r0 = t * 4096, r1 = BR_MIN(M, r0 + 4096);
            leaf()->rows_sum(a->d, N, r0, r1, op == OP_SUMSQ ? KM_SQ : KM_X, res);
            if (op == OP_MEAN)
                for (int64_t i = r0; i < r1; i++) res[i] /= (double)N;
        }
        return;
    }
    if (!a->sparse && N <= 64 &&
        (op == OP_AMIN || op == OP_AMAX || op == OP_IDXMIN || op == OP_IDXMAX)) {
        int64_t nch = (M + 4095) / 4096;
#pragma omp parallel for num_threads(br_threads()) if (br_par(work)) \
    schedule(static)
        for (int64_t t = 0; t < nch; t++)
            leaf()->rows_minmax(op, a->d, N, t * 4096, BR_MIN(M, t * 4096 + 4096), res);
        return;
    }
    if (!a->sparse) {
#pragma omp parallel for num_threads(br_threads()) if (br_par(work)) \
    schedule(static)
        for (int64_t i = 0; i < M; i++)
            res[i] = idx ? row_idx(a->d + i * N, NULL, N, N, want_max)
                         : seg_agg(op, a->d + i * N, N, 0, false);
        return;
    }
#pragma omp parallel for num_threads(br_threads()) if (br_par(work)) \
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
    KKahan k = {0, 0};
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
    const KAggLeaf *L = leaf();
    for (int64_t i = 0; i < M; i++) L->cum_row(op, cum_row(a, i, j0, w, buf), out + i * N + j0, s, c, w);
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
#pragma omp parallel for num_threads(br_threads()) if (br_par(M * N)) \
    schedule(dynamic, 1)
    for (int64_t t = 0; t < nck; t++)
        cum_task(op, a, out->d, t * CUMW, BR_MIN(CUMW, N - t * CUMW));
    out->nnz = nnz_par(out->d, M * N);
    if (mb_examine(out, e)) { mb_release(out); return NULL; }
    return out;
}
