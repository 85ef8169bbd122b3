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

/* A column aggregate in phases (agg.h KColAgg): row blocks (dense: rb
 * rows, times column chunks of cw; sparse: blocks of about equal nnz),
 * partials ps/pc (and cnt: stored values) per block, merged in block
 * order. direct: one dense row block, whose task writes final values
 * into ps (pc NULL). */
struct KColAgg {
    const MB *a;
    int cm;
    OpCode op;
    const double *m;       /* CM_DEV2: the column means */
    int64_t M, N, nrb, rb, cw, nck, L, lw;
    bool direct, own_ps;
    double *ps, *pc;
    int64_t *cnt, *bounds;
};

static void colagg_free(KColAgg *g)
{
    if (!g) return;
    if (g->own_ps) free(g->ps);
    free(g->pc); free(g->cnt); free(g->bounds);
    free(g);
}

/* Plans the column aggregate of a in mode cm (res: where a direct one
 * writes its final values; NULL: its own buffer). NULL with e set when
 * out of memory. */
static KColAgg *colagg_begin(const MB *a, int cm, const double *m, double *res, BrErr *e)
{
    KColAgg *g = br_calloc(1, sizeof *g);
    if (!g) { br_err(e, BR_ENOMEM, "out of memory in column aggregate"); return NULL; }
    int64_t M = a->rows, N = a->cols;
    *g = (KColAgg){.a = a, .cm = cm, .m = m, .M = M, .N = N, .L = 1};
    if (N == 0 || M == 0) return g;     /* no tasks */
    g->cw = BR_MIN(N, CCW);
    g->nck = (N + g->cw - 1) / g->cw;
    if (!a->sparse) {
        if (N < 64) g->L = (64 + N - 1) / N;
        g->rb = BR_MAX(256, 65536 / N);
        g->rb = (g->rb + g->L - 1) / g->L * g->L;
        g->nrb = (M + g->rb - 1) / g->rb;
    } else {
        g->nrb = a->nnz / (4 * N + 65536);
        g->nrb = BR_MAX(1, BR_MIN(g->nrb, 64));
        g->nck = 1;
    }
    g->lw = g->nck == 1 ? g->L * N : g->cw;
    size_t cells = (size_t)g->nrb * (size_t)N;
    g->direct = !a->sparse && g->nrb == 1;
    g->own_ps = !(g->direct && res);
    g->ps = g->own_ps ? br_malloc(cells * sizeof(double)) : res;
    g->pc = g->direct ? NULL : br_malloc(cells * sizeof(double));
    if (a->sparse) {
        g->cnt = br_calloc(cells, sizeof(int64_t));
        g->bounds = br_malloc((size_t)(g->nrb + 1) * sizeof(int64_t));
    }
    if (!g->ps || (!g->direct && !g->pc) || (a->sparse && (!g->cnt || !g->bounds))) {
        colagg_free(g);
        br_err(e, BR_ENOMEM, "out of memory in column aggregate");
        return NULL;
    }
    if (a->sparse) {
        /* blocks of about equal nnz; boundaries depend on the data only */
        int64_t *bounds = g->bounds, nrb = g->nrb;
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
        double init = cm_init(cm);
        for (size_t k = 0; k < cells; k++) { g->ps[k] = init; g->pc[k] = 0; }
    }
    return g;
}

static int64_t colagg_ntasks(const KColAgg *g) { return g->N && g->M ? g->nrb * g->nck : 0; }

/* Task t (a row block, times a column chunk when dense); scr: 3 lw
 * doubles (dense). */
static void colagg_task(KColAgg *g, int64_t t, double *scr)
{
    const MB *a = g->a;
    int64_t N = g->N;
    if (a->sparse) {
        col_sparse_task(a, g->bounds[t], g->bounds[t + 1], g->cm, g->m, g->ps + t * N, g->pc + t * N, g->cnt + t * N);
        return;
    }
    int64_t b = t / g->nck, j0 = (t % g->nck) * g->cw;
    int64_t w = BR_MIN(g->cw, N - j0);
    leaf()->col_task(a->d, N, b * g->rb, BR_MIN(g->M, (b + 1) * g->rb), j0, w, g->nck == 1 ? g->L : 1, g->cm, g->m,
                     g->ps + b * N + j0, g->direct ? NULL : g->pc + b * N + j0, scr, scr + g->lw, scr + 2 * g->lw);
}

/* Merges the blocks in order into res[0..N) (implicit zeros of sparse
 * inputs included; CM_DEV2 adds m[j]^2 per implicit zero). */
static int colagg_merge(const KColAgg *g, double *res)
{
    const MB *a = g->a;
    int cm = g->cm;
    int64_t M = g->M, N = g->N, nrb = g->nrb;
    double init = cm_init(cm);
    if (N == 0) return 0;
    if (M == 0) {
        for (int64_t j = 0; j < N; j++) res[j] = init;
        return 0;
    }
    if (g->direct) {
        if (g->ps != res) memcpy(res, g->ps, (size_t)N * sizeof(double));
        return prod_fix_cols(a, cm, res);
    }
    const double *ps = g->ps, *pc = g->pc;
    const int64_t *cnt = g->cnt;
#pragma omp parallel for num_threads(br_threads()) if (br_par((double)nrb * (double)N)) \
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
            if (cm == CM_DEV2) cm_merge(cm, &r, &rc, (double)z * g->m[j] * g->m[j], 0);
            else if (cm == CM_MIN || cm == CM_MAX) cm_merge(cm, &r, &rc, 0, 0);
            else if (cm == CM_PROD) r *= 0.0;
        }
        res[j] = cm_kahan(cm) ? kval((KKahan){ r, rc }) : r;
    }
    return prod_fix_cols(a, cm, res);
}

/* Column aggregate of a in mode cm into res[0..N): Kahan values for the
 * sum modes, else min/max/prod; implicit zeros of sparse inputs included
 * (CM_DEV2 adds m[j]^2 per implicit zero). Returns 0 or an error code. */
static int col_agg(const MB *a, int cm, const double *m, double *res, BrErr *e)
{
    KColAgg *g = colagg_begin(a, cm, m, res, e);
    if (!g) return e->code;
    int64_t ntask = colagg_ntasks(g);
    if (a->sparse) {
#pragma omp parallel for num_threads(br_threads()) if (br_par(a->nnz)) \
    schedule(static, 1)
        for (int64_t b = 0; b < ntask; b++) colagg_task(g, b, NULL);
    } else if (ntask) {
        bool fail = false;
#pragma omp parallel num_threads(br_threads()) if (br_par(g->M * g->N))
        {
            double *scr = br_malloc((size_t)g->lw * 3 * sizeof(double));
            if (!scr) {
#pragma omp atomic write
                fail = true;
            }
#pragma omp for schedule(static)
            for (int64_t t = 0; t < ntask; t++)
                if (scr) colagg_task(g, t, scr);
            free(scr);
        }
        if (fail) { colagg_free(g); return br_err(e, BR_ENOMEM, "out of memory in column aggregate"); }
    }
    int rc = colagg_merge(g, res);
    colagg_free(g);
    return rc;
}

/* ---- the phases, public (agg.h) ---- */

static int col_mode(OpCode op)
{
    switch (op) {
    case OP_SUM: case OP_MEAN: return CM_SUM;
    case OP_AMIN: return CM_MIN;
    case OP_AMAX: return CM_MAX;
    case OP_VAR: case OP_SD: return CM_DEV2;
    default: return -1;
    }
}

bool k_colagg_ok(OpCode op) { return col_mode(op) >= 0; }

KColAgg *k_colagg_begin(OpCode op, const MB *a, const double *m, BrErr *e)
{
    int cm = col_mode(op);
    if (cm < 0 || a->cmb || (cm == CM_DEV2 && !m)) {
        br_err(e, BR_EARG, "column aggregate %s in phases: not supported", op_info[op].name);
        return NULL;
    }
    KColAgg *g = colagg_begin(a, cm, cm == CM_DEV2 ? m : NULL, NULL, e);
    if (g) g->op = op;
    return g;
}

int64_t k_colagg_ntasks(const KColAgg *g) { return colagg_ntasks(g); }

void k_colagg_rows(const KColAgg *g, int64_t t, int64_t *r0, int64_t *r1)
{
    if (g->a->sparse) { *r0 = g->bounds[t]; *r1 = g->bounds[t + 1]; return; }
    int64_t b = t / g->nck;
    *r0 = b * g->rb;
    *r1 = BR_MIN(g->M, (b + 1) * g->rb);
}

bool k_colagg_task(KColAgg *g, int64_t t)
{
    double *scr = NULL;
    if (!g->a->sparse && !(scr = br_malloc((size_t)g->lw * 3 * sizeof(double)))) return false;
    colagg_task(g, t, scr);
    free(scr);
    return true;
}

/* The variance (sd: its root) of a column from its squared deviations,
 * as k_agg computes it. */
static double col_var(double dev2, int64_t M, bool sd)
{
    double v = M == 0 ? NAN : M == 1 ? 0 : dev2 / (double)(M - 1);
    return sd ? sqrt(v) : v;
}

int k_colagg_end(KColAgg *g, double *res)
{
    int rc = colagg_merge(g, res);
    if (!rc && g->op == OP_MEAN)
        for (int64_t j = 0; j < g->N; j++) res[j] /= (double)g->M;
    if (!rc && (g->op == OP_VAR || g->op == OP_SD))
        for (int64_t j = 0; j < g->N; j++) res[j] = col_var(res[j], g->M, g->op == OP_SD);
    colagg_free(g);
    return rc;
}

void k_colagg_free(KColAgg *g) { colagg_free(g); }

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
        for (int64_t j = 0; j < N && !rc; j++) res[j] = col_var(res[j], M, op == OP_SD);
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

/* Non-zeros of res[r0..r1) (a chunk's results, still in cache). */
static int64_t nz_of(const double *res, int64_t r0, int64_t r1)
{
    /* the leaf, vectorized at the machine's level: this loop, compiled
     * for the baseline here, ran a scalar compare and cmov per row,
     * nearly half the time of rowSums over n x 2 */
    return r1 > r0 ? k_leaves(k_isa())->ew->nz_count(res + r0, r1 - r0) : 0;
}

/* Row aggregate into res[0..M); its non-zeros, counted chunk by chunk
 * where the rows go by chunks, else -1. */
static int64_t row_op(OpCode op, const MB *a, double *res)
{
    int64_t M = a->rows, N = a->cols;
    bool idx = op == OP_IDXMAX || op == OP_IDXMIN, want_max = op == OP_IDXMAX;
    if (N == 0) {
        double v = idx ? 0 : seg_agg(op, NULL, 0, 0, false);
        for (int64_t i = 0; i < M; i++) res[i] = v;
        return -1;
    }
    /* few long rows: parallel inside each row (same numbers) */
    bool inner = M < 2 * (int64_t)br_threads() && N >= 2 * FB && !a->sparse;
    if (inner) {
        for (int64_t i = 0; i < M; i++)
            res[i] = idx ? row_idx(a->d + i * N, NULL, N, N, want_max)
                         : seg_agg(op, a->d + i * N, N, 0, true);
        return -1;
    }
    int64_t work = a->sparse ? a->nnz + M : M * N;
    if (!a->sparse && N < 4 * KL && (op == OP_SUM || op == OP_SUMSQ || op == OP_MEAN)) {
        int64_t nch = (M + 4095) / 4096, nz = 0;
#pragma omp parallel for num_threads(br_threads()) if (br_par(work)) \
    schedule(static) reduction(+:nz)
        for (int64_t t = 0; t < nch; t++) {
            int64_t r0 = t * 4096, r1 = BR_MIN(M, r0 + 4096);
            leaf()->rows_sum(a->d, N, r0, r1, op == OP_SUMSQ ? KM_SQ : KM_X, res);
            if (op == OP_MEAN)
                for (int64_t i = r0; i < r1; i++) res[i] /= (double)N;
            nz += nz_of(res, r0, r1);
        }
        return nz;
    }
    /* (past 64 columns only the indexes: the values' rows of more than FB
     * cells go by blocks below, rows_minmax takes a row at once) */
    if (!a->sparse && ((N <= 64 && (op == OP_AMIN || op == OP_AMAX)) || op == OP_IDXMIN || op == OP_IDXMAX)) {
        int64_t nch = (M + 4095) / 4096, nz = 0;
#pragma omp parallel for num_threads(br_threads()) if (br_par(work)) \
    schedule(static) reduction(+:nz)
        for (int64_t t = 0; t < nch; t++) {
            leaf()->rows_minmax(op, a->d, N, t * 4096, BR_MIN(M, t * 4096 + 4096), res);
            nz += nz_of(res, t * 4096, BR_MIN(M, t * 4096 + 4096));
        }
        return nz;
    }
    if (!a->sparse) {
#pragma omp parallel for num_threads(br_threads()) if (br_par(work)) \
    schedule(static)
        for (int64_t i = 0; i < M; i++)
            res[i] = idx ? row_idx(a->d + i * N, NULL, N, N, want_max)
                         : seg_agg(op, a->d + i * N, N, 0, false);
        return -1;
    }
    if (op == OP_SUM || op == OP_SUMSQ || op == OP_MEAN) {
        /* rows of up to 16 values in groups (agg_leaf.c sp_rows_sum: the
         * same chains), longer ones as below */
        int64_t nch = (M + 4095) / 4096, nz = 0;
#pragma omp parallel for num_threads(br_threads()) if (br_par(work)) \
    schedule(dynamic, 1) reduction(+:nz)
        for (int64_t t = 0; t < nch; t++) {
            int64_t r0 = t * 4096, r1 = BR_MIN(M, r0 + 4096), longs[4096];
            int64_t nl = leaf()->sp_rows_sum(a->rp, a->v, a->rp[M], r0, r1, op == OP_SUMSQ ? KM_SQ : KM_X, res, longs);
            for (int64_t q = 0; q < nl; q++) {
                int64_t i = longs[q], k = a->rp[i], len = a->rp[i + 1] - k;
                res[i] = seg_agg(op == OP_MEAN ? OP_SUM : op, a->v + k, len, N - len, false);
            }
            if (op == OP_MEAN)
                for (int64_t i = r0; i < r1; i++) res[i] /= (double)N;
            nz += nz_of(res, r0, r1);
        }
        return nz;
    }
#pragma omp parallel for num_threads(br_threads()) if (br_par(work)) \
    schedule(dynamic, 64)
    for (int64_t i = 0; i < M; i++) {
        int64_t k = a->rp[i], len = a->rp[i + 1] - k;
        res[i] = idx ? row_idx(a->v + k, a->ci + k, len, N, want_max)
                     : seg_agg(op, a->v + k, len, N - len, false);
    }
    return -1;
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
    int64_t nz = -1;
    if (row) nz = row_op(op, a, out->d);
    else if (col_op(op, a, out->d, e)) { mb_release(out); return NULL; }
    out->nnz = nz >= 0 ? nz : nnz_par(out->d, out->rows * out->cols);
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
