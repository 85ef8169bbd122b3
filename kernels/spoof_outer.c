/* spoof_outer.c: the skeleton of Outer fused operators (seed 000, Table
 * 1): driven by the non-zeros of a sparse matrix W (m x n), with U (m x r)
 * and V (n x r) read by rows, so U %*% t(V) is only ever computed at W's
 * non-zeros. Variants: no_agg (output with W's structure), full_agg,
 * left_mm ((.) %*% V2, by rows of W), right_mm (t(.) %*% U2, by columns of
 * W, i.e. rows of t(W)) and right_t (t(U2) %*% (.), the transpose of
 * right_mm). A dense W is visited through its non-zeros too.
 *
 * Compressed inputs (seed 000 section 5.2: Outer iterates compressed
 * rows; docs/cla.md): by rows of W, a compressed W and compressed full
 * side inputs are read through windows of decompressed rows (ClaWin,
 * matrix/cmb.h), W's non-zeros taken from each row; by columns of W, a
 * compressed W is read by the same windows, each block of rows
 * transposed into per-column lists (run_cols_cz), never decompressed
 * whole, and compressed full side inputs by windows of the same rows; the
 * factors (small) are decompressed. */
#include "spoof.h"
#include "cla.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reorg.h"

#define SB_MAX 64
#define SB_MAX_BLK 16
#define SB_NNZ 8192
#define TASK_NNZ 8192

static inline void kadd(double *s, double *c, double x)
{
    double y = x + *c, t = *s + y;
    *c = fabs(t) <= DBL_MAX ? y - (t - *s) : 0;
    *s = t;
}

static int threads_for(double work, int64_t tasks)
{
    if (tasks < 2 || !br_par(work)) return 1;
    int t = br_threads();
    return t > tasks ? (int)tasks : t;
}

typedef struct OCtx {
    const SpoofOuter *op;
    const double **P;
    int64_t *S;
    MB **own;              /* converted inputs (released at the end) */
    MB **dec;              /* decompressed inputs (released at the end) */
    bool *scat;            /* sparse full side inputs scattered per row */
    int nscat;
    const MB **src;        /* scat[k]: the CSR scattered (the input, or by
                              columns its transpose, whose row j is the
                              input's column j) */
    bool bycol;            /* driven by columns of W (right, right_t) */
    bool *cz;              /* compressed full side inputs read by windows */
    int ncz;
    const MB *w;           /* the driver as CSR (W, or t(W) for right), or
                              W compressed (wz) */
    bool wz;
    int32_t *oci;          /* no_agg over a compressed W: the output's columns */
    const int64_t *orp;    /* and its row starts */
} OCtx;

static void octx_free(OCtx *x)
{
    if (x->own) for (int k = 0; k <= x->op->in.n; k++) mb_release(x->own[k]);
    if (x->dec) for (int k = 0; k <= x->op->in.n; k++) mb_release(x->dec[k]);
    free(x->own); free(x->dec); free(x->P); free(x->S); free(x->scat); free(x->src); free(x->cz);
}

/* A decompressed input (counted in -stats like the interpreter's). */
static MB *decompress(const MB *m, BrErr *e)
{
    int64_t t0 = br_now_ns();
    MB *d = cmb_decompress(m, e);
    if (d) cla_stats_decompress(br_now_ns() - t0);
    return d;
}

static int octx_init(OCtx *x, const SpoofOuter *op, BrErr *e)
{
    memset(x, 0, sizeof *x);
    x->op = op;
    int n = op->in.n;
    bool bycol = x->bycol = op->var == SPO_RIGHT || op->var == SPO_RIGHT_T;
    x->P = br_calloc((size_t)n + 1, sizeof *x->P);
    x->S = br_calloc((size_t)n + 1, sizeof *x->S);
    x->own = br_calloc((size_t)n + 2, sizeof *x->own);
    x->scat = br_calloc((size_t)n + 1, sizeof *x->scat);
    x->src = br_calloc((size_t)n + 1, sizeof *x->src);
    x->dec = br_calloc((size_t)n + 2, sizeof *x->dec);
    x->cz = br_calloc((size_t)n + 1, sizeof *x->cz);
    if (!x->P || !x->S || !x->own || !x->scat || !x->src || !x->dec || !x->cz) {
        octx_free(x);
        return br_err(e, BR_ENOMEM, "out of memory");
    }
    for (int k = 0; k < n; k++) {
        const MB *m = op->in.m[k];
        if (op->in.mode[k] == SPM_SCALAR || k == op->main) continue;
        /* by columns only beside a compressed W (run_cols_cz reads the
         * side input's rows by the same window blocks as W's) */
        if (m->cmb && op->in.mode[k] == SPM_FULL && (!bycol || op->in.m[op->main]->cmb)) {
            x->cz[k] = true;
            x->ncz++;
            x->S[k] = m->cols;   /* run_cols_cz's stride (run_range_cz: 0) */
            continue;
        }
        if (m->cmb && !(m = x->dec[k] = decompress(m, e))) { octx_free(x); return e->code; }
        const MB *d = m;
        if (op->in.mode[k] == SPM_BT) {
            /* B (r x n) of U %*% B: its transpose holds the rows V_j */
            MB *t = k_transpose(m, e);
            if (!t) { octx_free(x); return e->code; }
            x->own[k] = t;
            d = t;
            if (d->sparse) {
                MB *dd = mb_to_dense(d, e);
                if (!dd) { octx_free(x); return e->code; }
                mb_release(x->own[k]);
                x->own[k] = dd;
                d = dd;
            }
        } else if (m->sparse && (op->in.mode[k] != SPM_FULL || (bycol && op->in.m[op->main]->cmb))) {
            /* (vectors; and by columns beside a compressed W, whose
             * run_cols_cz reads side inputs in place) */
            MB *dd = mb_to_dense(m, e);
            if (!dd) { octx_free(x); return e->code; }
            x->own[k] = dd;
            d = dd;
        } else if (m->sparse) {
            /* scattered per driver row: by rows W's row i is the input's
             * row i; by columns W's column j is row j of its transpose,
             * kept sparse (densifying m x n cells per call cost ALS-CG
             * a quarter of its time in fresh-page zeroing) */
            if (bycol) {
                MB *t = k_transpose_kept(m, e);   /* (kept on m for the next call) */
                if (t && !t->sparse) {
                    MB *s = mb_to_sparse(t, e);
                    mb_release(t);
                    t = s;
                }
                if (!t) { octx_free(x); return e->code; }
                x->own[k] = t;
                m = t;
            }
            x->src[k] = m;
            x->scat[k] = true;
            x->nscat++;
            continue;
        }
        x->P[k] = d->d;
        x->S[k] = op->in.mode[k] == SPM_FULL ? d->cols : op->in.mode[k] == SPM_COL ? 1 : 0;
    }
    /* the driver: CSR of W (by rows) or of t(W) (by columns) */
    const MB *w = op->in.m[op->main];
    if (w->cmb) { x->w = w; x->wz = true; return 0; }   /* by rows, or run_cols_cz */
    if (w->cmb && !(w = x->dec[n] = decompress(w, e))) { octx_free(x); return e->code; }
    MB *cw = NULL;
    /* by columns, t(W) is kept on W: a loop-invariant W (ALS-CG's) is
     * transposed once, not on every call */
    if (bycol) cw = k_transpose_kept(w, e);
    else if (!w->sparse) cw = mb_to_sparse(w, e);
    if ((bycol || !w->sparse) && !cw) { octx_free(x); return e->code; }
    if (cw && !cw->sparse) {
        MB *s = mb_to_sparse(cw, e);
        mb_release(cw);
        if (!s) { octx_free(x); return e->code; }
        cw = s;
    }
    x->own[n] = cw;
    x->w = cw ? cw : w;
    return 0;
}

/* Column blocking: the factor rows a driver row gathers at its non-zeros
 * (V_j for W's rows, U_i for t(W)'s) are random reads; when the factor
 * exceeds the L2 cache, a range of driver rows is swept once per block
 * of BLK_BYTES of factor rows, so that a factor row read from memory
 * serves the range's other non-zeros in its columns from L2. Worth it
 * when the range holds at least BLK_REUSE non-zeros per column. Each
 * row still sees its columns in increasing order. */
#define BLK_BYTES ((int64_t)1 << 20)
#define BLK_REUSE 2

/* Bytes of factor rows gathered per column of the driver, when the
 * factors exceed the cache (blocking may pay), else 0. */
static int64_t factor_bytes(const OCtx *x)
{
    const SpoofOuter *op = x->op;
    bool side = op->var != SPO_FULL_AGG && op->var != SPO_NO_AGG;
    int64_t rowbytes = 8 * (BR_MAX(op->L[op->v], 1) + (side ? BR_MAX(op->ocols, 0) : 0));
    return x->nscat || x->wz || x->ncz || x->w->cols * rowbytes <= 2 * BLK_BYTES ? 0 : rowbytes;
}

/* The column block width for rows [ra, rb) of the driver (0: none). */
static int64_t block_cols(const OCtx *x, int64_t ra, int64_t rb)
{
    const MB *w = x->w;
    int64_t rowbytes = factor_bytes(x);
    if (!rowbytes) return 0;
    int64_t nb = BR_MAX(64, BLK_BYTES / rowbytes);
    return w->cols > nb && w->rp[rb] - w->rp[ra] >= BLK_REUSE * w->cols ? nb : 0;
}

/* Cells of a scatter row: W's columns by rows, its rows by columns. */
static int64_t scat_len(const OCtx *x) { return BR_MAX(x->bycol ? x->op->m : x->op->n, 1); }

/* Row i of the driver's sparse full side inputs into their scratch rows
 * (rows, scat_len cells each, in the order of k) (put) or back to zeros.
 * By rows the generated code reads P[k] + i * S[k] with S[k] = 0, the
 * scratch row itself; by columns it reads P[k][i' * S[k] + i] at W's row
 * i', so with S[k] = 1 P[k] is placed i cells before the scratch row
 * (integer arithmetic: the pointer itself points before the buffer). */
static void scatter_row(const OCtx *x, const double **P, double *rows, int64_t i, bool put)
{
    int64_t len = scat_len(x);
    for (int k = 0, q = 0; k < x->op->in.n; k++) {
        if (!x->scat[k]) continue;
        const MB *m = x->src[k];
        double *r = rows + (size_t)q++ * (size_t)len;
        for (int64_t p = m->rp[i]; p < m->rp[i + 1]; p++) r[m->ci[p]] = put ? m->v[p] : 0;
        if (x->bycol) P[k] = (const double *)((uintptr_t)r - (uintptr_t)i * sizeof(double));
    }
}

/* Rows per window block over n columns: about TASK_NNZ * 4 cells. */
static int64_t win_rows(int64_t n) { return BR_MAX(1, BR_MIN(CLA_BLK, 4 * TASK_NNZ / BR_MAX(n, 1))); }

/* run_range with compressed inputs (by rows of W): a compressed W's
 * non-zeros are taken from the rows of its window, compressed full side
 * inputs are rows of their windows (row stride 0). */
static bool run_range_cz(const OCtx *x, SpOuterFn f, int64_t ra, int64_t rb, double *base, int64_t ldo, int mode)
{
    const SpoofOuter *op = x->op;
    int n = op->in.n;
    int64_t N = op->n;
    const double **P = malloc(((size_t)n + 1) * sizeof *P);
    int64_t *S = malloc(((size_t)n + 1) * sizeof *S);
    ClaWin *win = br_calloc((size_t)n + 1, sizeof *win);   /* [n]: W */
    double *rows = x->nscat ? br_calloc((size_t)x->nscat * (size_t)BR_MAX(N, 1), sizeof(double)) : NULL;
    int32_t *ix = x->wz ? br_malloc((size_t)BR_MAX(N, 1) * sizeof(int32_t)) : NULL;
    double *wv = x->wz ? br_malloc((size_t)BR_MAX(N, 1) * sizeof(double)) : NULL;
    bool ok = P && S && win && (!x->nscat || rows) && (!x->wz || (ix && wv));
    if (ok) {
        memcpy(P, x->P, (size_t)n * sizeof *P);
        memcpy(S, x->S, (size_t)n * sizeof *S);
        for (int k = 0, q = 0; k < n; k++) {
            if (x->scat[k]) { P[k] = rows + (size_t)q * (size_t)N; S[k] = 0; q++; }
            if (x->cz[k]) { S[k] = 0; ok &= cla_win_init(&win[k], op->in.m[k], win_rows(N)); }
        }
        if (x->wz) ok &= cla_win_init(&win[n], x->w, win_rows(N));
    }
    for (int64_t i = ra; ok && i < rb; i++) {
        const int32_t *ci;
        const double *v;
        int64_t nz, lo;
        if (x->wz) {
            const double *r = cla_win_row(&win[n], i, rb);
            if (!(ok = r != NULL)) break;
            nz = 0;
            for (int64_t j = 0; j < N; j++)
                if (r[j] != 0) { ix[nz] = (int32_t)j; wv[nz] = r[j]; nz++; }
            ci = ix;
            v = wv;
            lo = x->orp ? x->orp[i] : 0;
        } else {
            lo = x->w->rp[i];
            nz = x->w->rp[i + 1] - lo;
            ci = x->w->ci + lo;
            v = x->w->v + lo;
        }
        if (nz == 0) continue;
        for (int k = 0; k < n && ok; k++)
            if (x->cz[k]) ok = (P[k] = cla_win_row(&win[k], i, rb)) != NULL;
        if (!ok) break;
        scatter_row(x, P, rows, i, true);
        if (mode == 0 && x->oci) memcpy(x->oci + lo, ci, (size_t)nz * sizeof(int32_t));
        double *o = mode == 0 ? base + lo : mode == 1 ? base : base + i * ldo;
        f(P, S, op->L, op->in.sc, i, ci, v, nz, o);
        scatter_row(x, P, rows, i, false);
    }
    if (win)
        for (int k = 0; k <= n; k++) cla_win_free(&win[k]);
    free(win); free(P); free(S); free(rows); free(ix); free(wv);
    return ok;
}

/* The CSR row starts rp (rows + 1) of compressed block w, counted over
 * windows by tasks of per rows; false when out of memory. */
static bool cmb_row_starts(const MB *w, int64_t per, int64_t ntask, int64_t *rp)
{
    bool ok = true;
    rp[0] = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads_for((double)w->rows * w->cols, ntask))
    for (int64_t t = 0; t < ntask; t++) {
        ClaWin win;
        int64_t ra = t * per, rb = BR_MIN(w->rows, ra + per);
        if (!cla_win_init(&win, w, win_rows(w->cols))) { ok = false; continue; }
        for (int64_t i = ra; i < rb; i++) {
            const double *r = cla_win_row(&win, i, rb);
            if (!r) { ok = false; break; }
            int64_t c = 0;
            for (int64_t j = 0; j < w->cols; j++) c += r[j] != 0;
            rp[i + 1] = c;
        }
        cla_win_free(&win);
    }
    for (int64_t i = 0; ok && i < w->rows; i++) rp[i + 1] += rp[i];
    return ok;
}

/* Calls f over rows [ra, rb) of the driver; out(i) gives the output. */
static bool run_range(const OCtx *x, SpOuterFn f, int64_t ra, int64_t rb, double *base, int64_t ldo, int mode)
{
    const SpoofOuter *op = x->op;
    int n = op->in.n;
    if (x->wz || x->ncz) return run_range_cz(x, f, ra, rb, base, ldo, mode);
    const double **P = malloc(((size_t)n + 1) * sizeof *P);
    int64_t *S = malloc(((size_t)n + 1) * sizeof *S);
    int64_t len = scat_len(x);
    double *rows = x->nscat ? br_calloc((size_t)x->nscat * (size_t)len, sizeof(double)) : NULL;
    bool ok = P && S && (!x->nscat || rows);
    if (ok) {
        memcpy(P, x->P, (size_t)n * sizeof *P);
        memcpy(S, x->S, (size_t)n * sizeof *S);
        for (int k = 0, q = 0; k < n; k++)
            if (x->scat[k]) { P[k] = rows + (size_t)q * (size_t)len; S[k] = x->bycol; q++; }
        const MB *w = x->w;
        int64_t nb = block_cols(x, ra, rb);
        int64_t *cur = nb ? malloc((size_t)(rb - ra) * sizeof *cur) : NULL;
        if (cur) for (int64_t i = ra; i < rb; i++) cur[i - ra] = w->rp[i];
        else nb = BR_MAX(w->cols, 1);
        /* column blocking: a pass per block of nb columns, each row from
         * where the last pass left it (cur); else one pass of whole rows */
        for (int64_t j1 = nb; j1 - nb < w->cols; j1 += nb)
            for (int64_t i = ra; i < rb; i++) {
                int64_t lo = cur ? cur[i - ra] : w->rp[i], hi = w->rp[i + 1];
                if (cur) {
                    int64_t end = hi;
                    for (hi = lo; hi < end && w->ci[hi] < j1; hi++) {}
                    cur[i - ra] = hi;
                }
                if (lo == hi) continue;
                scatter_row(x, P, rows, i, true);
                double *o = mode == 0 ? base + lo : mode == 1 ? base : base + i * ldo;
                f(P, S, op->L, op->in.sc, i, w->ci + lo, w->v + lo, hi - lo, o);
                scatter_row(x, P, rows, i, false);
            }
        free(cur);
    }
    free(P); free(S); free(rows);
    return ok;
}

/* right_mm (and right_t before its transpose) over a compressed W: the
 * rows of W by window blocks in order; each block is transposed into
 * per-column lists of its non-zeros (rows ascending, NaN kept), and f
 * (by columns) runs over each column's list, the columns of a block in
 * parallel. Output row j thus takes W's column j in row order, block
 * after block, as over t(W)'s CSR row: the results equal the ordinary
 * path's, while only a block of W is ever decompressed (the ordinary
 * path builds all of t(W)). */
static bool run_cols_cz(const OCtx *x, SpOuterFn f, double *o, int64_t ldo)
{
    const SpoofOuter *op = x->op;
    const MB *w = x->w;
    int n = op->in.n;
    int64_t M = w->rows, N = w->cols, B = win_rows(N);
    ClaWin win;
    int64_t *st = br_malloc((size_t)(N + 1) * sizeof *st), *fill = br_malloc((size_t)BR_MAX(N, 1) * sizeof *fill);
    int32_t *ri = br_malloc((size_t)BR_MAX(B * N, 1) * sizeof *ri);
    double *rv = br_malloc((size_t)BR_MAX(B * N, 1) * sizeof *rv);
    const double **P = br_malloc(((size_t)n + 1) * sizeof *P);
    ClaWin *sw = br_calloc((size_t)n + 1, sizeof *sw);   /* compressed side inputs */
    bool ok = st && fill && ri && rv && P && sw && cla_win_init(&win, w, B);
    bool wok = ok;
    if (ok) memcpy(P, x->P, (size_t)n * sizeof *P);
    for (int k = 0; ok && k < n; k++)
        if (x->cz[k]) ok = cla_win_init(&sw[k], op->in.m[k], B);
    double rank = (double)BR_MAX(op->L[op->v], 1);
    for (int64_t a = 0; ok && a < M;) {
        const double *r = cla_win_row(&win, a, M);
        if (!(ok = r != NULL)) break;
        int64_t nr = win.hi - a;
        /* a compressed side input: the same rows [a, a + nr) from its
         * window (same block size and limit, so the same rows), its
         * pointer placed so that the generated P[k][i * S[k] + j] with i
         * in the block lands in the window (integer arithmetic: the
         * pointer itself points before the buffer) */
        for (int k = 0; ok && k < n; k++) {
            if (!x->cz[k]) continue;
            const double *b = cla_win_row(&sw[k], a, M);
            ok = b != NULL && sw[k].hi == win.hi;
            if (ok) P[k] = (const double *)((uintptr_t)b - (uintptr_t)a * (uintptr_t)x->S[k] * sizeof(double));
        }
        if (!ok) break;
        memset(st, 0, (size_t)(N + 1) * sizeof *st);
        for (int64_t i = 0; i < nr; i++)
            for (int64_t j = 0; j < N; j++) st[j + 1] += r[i * N + j] != 0;
        for (int64_t j = 0; j < N; j++) { st[j + 1] += st[j]; fill[j] = st[j]; }
        for (int64_t i = 0; i < nr; i++)
            for (int64_t j = 0; j < N; j++)
                if (r[i * N + j] != 0) { ri[fill[j]] = (int32_t)(a + i); rv[fill[j]++] = r[i * N + j]; }
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads_for((double)st[N] * rank, N / 16))
        for (int64_t j = 0; j < N; j++)
            if (st[j + 1] > st[j])
                f(P, x->S, op->L, op->in.sc, j, ri + st[j], rv + st[j], st[j + 1] - st[j], o + j * ldo);
        a += nr;
    }
    if (wok) cla_win_free(&win);
    for (int k = 0; sw && k < n; k++) if (sw[k].buf) cla_win_free(&sw[k]);
    free(st); free(fill); free(ri); free(rv); free(P); free(sw);
    return ok;
}

/* Runs an Outer operator; see spoof.h. */
int k_spoof_outer(const SpoofOuter *op, MB **out, double *res, BrErr *e)
{
    OCtx x;
    if (octx_init(&x, op, e)) return e->code;
    const MB *w = x.w;
    int64_t R = w->rows, nnz = w->nnz;
    int64_t per = BR_MAX(1, TASK_NNZ / BR_MAX(1, nnz / BR_MAX(R, 1)));
    /* column blocking wants many rows a task (each row is still done by
     * one task, so the results do not change) */
    if (factor_bytes(&x)) per = BR_MAX(per, R / (4 * (int64_t)br_threads()) + 1);
    int64_t ntask = R ? (R + per - 1) / per : 0;
    double work = (double)nnz * (double)BR_MAX(op->L[op->v], 1);
    bool fail = false;
    int rc = 0;
    MB *o = NULL;
    switch (op->var) {
    case SPO_NO_AGG: {
        o = mb_sp_alloc(op->m, op->n, BR_MAX(nnz, 1), e);
        if (!o) { rc = e->code; break; }
        if (x.wz) {
            /* W's structure from its rows; the columns as the rows run */
            if (!cmb_row_starts(w, per, ntask, o->rp)) { fail = true; break; }
            x.oci = o->ci;
            x.orp = o->rp;
        } else {
            memcpy(o->rp, w->rp, (size_t)(R + 1) * sizeof(int64_t));
            if (nnz) memcpy(o->ci, w->ci, (size_t)nnz * sizeof(int32_t));
        }
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads_for(work, ntask))
        for (int64_t t = 0; t < ntask; t++)
            if (!run_range(&x, op->frow, t * per, BR_MIN(R, (t + 1) * per), o->v, 0, 0)) fail = true;
        if (fail) break;
        int64_t wp = 0, r = 0;
        int bad = 0;   /* the finiteness flag (mb.h) of the values kept */
        for (int64_t i = 0; i < R; i++) {
            int64_t end = o->rp[i + 1];
            for (; r < end; r++)
                if (o->v[r] != 0) {
                    o->ci[wp] = o->ci[r];
                    o->v[wp] = o->v[r];
                    bad |= !isfinite(o->v[wp]);
                    wp++;
                }
            o->rp[i + 1] = wp;
        }
        o->nnz = wp;
        o->build_row = R;
        mb_fin_set(o, bad != 0);
        if (mb_examine(o, e)) rc = e->code;
        break;
    }
    case SPO_FULL_AGG: {
        /* (fewer, larger super-blocks when column blocking may pay: a
         * factor row then serves more non-zeros from the cache) */
        int64_t sbmax = factor_bytes(&x) ? SB_MAX_BLK : SB_MAX;
        int64_t nsb = BR_MAX(1, BR_MIN(BR_MIN((nnz + SB_NNZ - 1) / SB_NNZ, sbmax), BR_MAX(R, 1)));
        /* each super-block's sum and compensation on a line pair of its
         * own: the operator updates them every row, and neighbouring
         * super-blocks run at the same time */
        const size_t PS = br_line_pairs(2);
        double *parts = br_calloc_aligned((size_t)nsb * PS * sizeof(double));
        if (!parts) { fail = true; break; }
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads_for(work, nsb))
        for (int64_t b = 0; b < nsb; b++)
            if (!run_range(&x, op->frow, b * R / nsb, (b + 1) * R / nsb, parts + PS * b, 0, 1)) fail = true;
        double s = 0, c = 0;
        for (int64_t b = 0; b < nsb; b++) { kadd(&s, &c, parts[PS * b]); kadd(&s, &c, parts[PS * b + 1]); }
        *res = s + c;
        br_free_aligned(parts);
        break;
    }
    case SPO_LEFT: case SPO_RIGHT: case SPO_RIGHT_T: {
        int64_t orows = op->var == SPO_LEFT ? op->m : op->n;
        o = mb_dense(orows, op->ocols, e);
        if (!o) { rc = e->code; break; }
        SpOuterFn f = op->var == SPO_LEFT ? op->frow : op->fcol;
        if (x.wz && op->var != SPO_LEFT) {
            fail = !run_cols_cz(&x, f, o->d, op->ocols);
        } else {
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads_for(work, ntask))
            for (int64_t t = 0; t < ntask; t++)
                if (!run_range(&x, f, t * per, BR_MIN(R, (t + 1) * per), o->d, op->ocols, 2)) fail = true;
        }
        if (fail) break;
        k_spoof_count_fin(o);
        if (op->var == SPO_RIGHT_T) {
            MB *t = k_transpose(o, e);
            if (t) mb_fin_set(t, o->fin == MB_FIN_NONFINITE);   /* the same values */
            mb_release(o);
            o = t;
            if (!o) { rc = e->code; break; }
        }
        if (mb_examine(o, e)) rc = e->code;
        break;
    }
    default:
        rc = br_err(e, BR_EFAIL, "unknown outer-product variant");
    }
    if (fail && !rc) rc = br_err(e, BR_ENOMEM, "out of memory in fused operator");
    if (rc) mb_release(o);
    else if (op->var != SPO_FULL_AGG) *out = o;
    octx_free(&x);
    return rc;
}
