/* spoof_row.c: the skeleton of Row fused operators (seed 000, Table 1):
 * binds rows of the main input (dense, or sparse when the generated code
 * reads sparse rows), side inputs by row, broadcast vectors, whole side
 * matrices and scalars. The generated code runs the row operations
 * (vector primitives, ring-buffered row intermediates in tmp) over a range
 * of rows and writes output rows or accumulates into a partial
 * (col_agg, full_agg, col_t_agg). Partials belong to fixed super-blocks
 * of rows and are merged in order. */
#include "spoof.h"
#include "agg.h"
#include "cla.h"
#include "leaf.h"
#include "reorg.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SB_MAX 64
#define SB_CELLS 32768
#define TASK_CELLS 32768
#define PART_BUDGET ((int64_t)64 << 20)   /* bytes of all partials */

static inline void kadd(double *s, double *c, double x)
{
    double y = x + *c, t = *s + y;
    *c = fabs(t) <= DBL_MAX ? y - (t - *s) : 0;
    *s = t;
}

static inline double min_step(double s, double v) { return (v < s || v != v) ? v : s; }
static inline double max_step(double s, double v) { return (v > s || v != v) ? v : s; }

typedef struct RCtx {
    const SpoofRow *op;
    const double **P;
    int64_t *S;
    bool *exp;             /* inputs expanded per row (sparse full) */
    int nexp;
    double **own;
    bool per_row;          /* call per row (sparse rows involved) */
    bool cmb_main;         /* main compressed: read by blocks of rows */
    bool sparse_main;      /* main read sparse by op->fs */
    int64_t tmpn;          /* doubles of tmp */
    int64_t psize;         /* doubles of one partial (all outputs) */
    int nout;              /* aggregated outputs, their partials at off */
    SpRowOut out[SPOOF_MAXOUT];
    int64_t off[SPOOF_MAXOUT];
    int npre;              /* stitched inputs (op->pre) */
    ClaRowMM *mm;          /* compressed main: its products with the side
                              matrices op->prod_in (P[n]), or NULL */
    MB *side;              /* the sides side by side (x->mm reads it) */
    int64_t qw;            /* doubles of a row of those products */
    bool tl;               /* compressed main: the q rows of op->tq_out
                              taken (P[n + 1]) and accumulated per tuple */
    int64_t tw;            /* doubles of a row of those q */
    int64_t tqoff[SPOOF_MAXOUT], tqk[SPOOF_MAXOUT];  /* each one's place
                              in the row and width */
    bool sq;               /* sparse main: its products and q rows taken
                              by the skeleton (sq_rows), the dense
                              function's loop without the row between */
    const double **Pd;     /* sq: the dense function's inputs (side
                              matrices transposed, tside) */
    double **tside;
    int64_t pqoff[SPOOF_MAXPROD];   /* sq: each product's place in a row */
    bool dq;               /* dense main: its one-column products and
                              q vectors taken by the skeleton (dq_rows)
                              through the matrix-vector leaves */
} RCtx;

/* The aggregated outputs of op (SPR_MULTI: its list; a single aggregate:
 * itself; none for NO_AGG / ROW_AGG). */
int k_spoof_row_outs(const SpoofRow *op, SpRowOut *o)
{
    if (op->var == SPR_MULTI) {
        for (int t = 0; t < op->nout; t++) o[t] = op->mo[t];
        return op->nout;
    }
    if (op->var == SPR_NO_AGG || op->var == SPR_ROW_AGG) return 0;
    o[0] = (SpRowOut){op->var, op->agg, op->orows, op->ocols};
    return 1;
}

static double *dense_copy(const MB *m, BrErr *e)
{
    int64_t n = m->rows * m->cols;
    double *v = br_calloc((size_t)BR_MAX(n, 1), sizeof(double));
    if (!v) { br_err(e, BR_ENOMEM, "out of memory in fused operator"); return NULL; }
    for (int64_t i = 0; i < m->rows; i++)
        for (int64_t k = m->rp[i]; k < m->rp[i + 1]; k++) v[i * m->cols + m->ci[k]] = m->v[k];
    return v;
}

/* A side matrix transposed (ncol x nrow, dense), as the dense function
 * takes it (spoof.h); NULL when out of memory. */
static double *side_t(const MB *m)
{
    double *t = br_calloc((size_t)BR_MAX(m->rows * m->cols, 1), sizeof(double));
    if (!t) return NULL;
    if (m->sparse) {
        for (int64_t i = 0; i < m->rows; i++)
            for (int64_t q = m->rp[i]; q < m->rp[i + 1]; q++) t[(int64_t)m->ci[q] * m->rows + i] = m->v[q];
    } else {
        for (int64_t i = 0; i < m->rows; i++)
            for (int64_t j = 0; j < m->cols; j++) t[j * m->rows + i] = m->d[i * m->cols + j];
    }
    return t;
}

static void rctx_free(RCtx *x)
{
    if (x->own) for (int k = 0; k < x->op->in.n; k++) free(x->own[k]);
    cla_rowmm_free(x->mm);
    mb_release(x->side);
    if (x->tside) for (int k = 0; k < x->op->in.n; k++) free(x->tside[k]);
    free(x->tside); free(x->Pd);
    free(x->own); free(x->P); free(x->S); free(x->exp);
}

static int rctx_init(RCtx *x, const SpoofRow *op, BrErr *e)
{
    memset(x, 0, sizeof *x);
    x->op = op;
    int n = op->in.n;
    x->P = br_calloc((size_t)n + 2, sizeof *x->P);
    x->S = br_calloc((size_t)n + 2, sizeof *x->S);
    x->exp = br_calloc((size_t)n + 1, sizeof *x->exp);
    x->own = br_calloc((size_t)n + 1, sizeof *x->own);
    if (!x->P || !x->S || !x->exp || !x->own) { rctx_free(x); return br_err(e, BR_ENOMEM, "out of memory"); }
    /* a sparse main read by op->fs takes side matrices row-major (spoof.h) */
    x->sparse_main = op->fs && op->main >= 0 && op->in.mode[op->main] == SPM_FULL && op->in.m[op->main]->sparse;
    for (int k = 0; k < n; k++) {
        const MB *m = op->in.m[k];
        if (op->pre && op->pre[k].n) {
            /* a stitched row vector: filled between the two phases */
            x->P[k] = x->own[k] = br_calloc((size_t)BR_MAX(m->cols, 1), sizeof(double));
            if (!x->P[k]) { rctx_free(x); return br_err(e, BR_ENOMEM, "out of memory"); }
            x->S[k] = 0;
            x->npre++;
            continue;
        }
        switch (op->in.mode[k]) {
        case SPM_FULL:
            if (m->cmb) { x->cmb_main = true; x->S[k] = m->cols; }   /* k_spoof_row_cla_ok: the main */
            else if (!m->sparse) { x->P[k] = m->d; x->S[k] = m->cols; }
            else if (k == op->main && op->fs) x->sparse_main = true;
            else { x->exp[k] = true; x->nexp++; }
            break;
        case SPM_ROW: case SPM_COL:
            if (!m->sparse) x->P[k] = m->d;
            else if (!(x->P[k] = x->own[k] = dense_copy(m, e))) { rctx_free(x); return e->code; }
            x->S[k] = op->in.mode[k] == SPM_COL ? 1 : 0;
            break;
        case SPM_MAT: {
            if (x->sparse_main) {
                if (!m->sparse) x->P[k] = m->d;
                else if (!(x->P[k] = x->own[k] = dense_copy(m, e))) { rctx_free(x); return e->code; }
                break;
            }
            /* side matrices of vector-matrix products, transposed (small) */
            double *t = side_t(m);
            if (!t) { rctx_free(x); return br_err(e, BR_ENOMEM, "out of memory"); }
            x->P[k] = x->own[k] = t;
            break;
        }
        default: break;
        }
    }
    x->per_row = x->sparse_main || x->nexp > 0;
    x->tmpn = op->ft ? op->ft(op->L) : 0;
    x->nout = k_spoof_row_outs(op, x->out);
    x->psize = 0;
    for (int t = 0; t < x->nout; t++) { x->off[t] = x->psize; x->psize += k_spoof_row_psize(&x->out[t]); }
    return 0;
}

/* Doubles of one output's partial (spoof.h). */
int64_t k_spoof_row_psize(const SpRowOut *o)
{
    switch (o->var) {
    case SPR_COL_AGG: return 2 * o->ocols;
    case SPR_FULL_AGG: return 2;
    case SPR_COL_T_AGG: return o->orows * o->ocols;
    default: return 0;
    }
}

static void init_partial(const SpRowOut *o, double *p)
{
    double v = o->agg == SPA_MIN ? INFINITY : o->agg == SPA_MAX ? -INFINITY : 0;
    if (o->var == SPR_COL_AGG) {
        for (int64_t j = 0; j < o->ocols; j++) { p[j] = v; p[o->ocols + j] = 0; }
    } else if (o->var == SPR_FULL_AGG) {
        p[0] = v; p[1] = 0;
    } else {
        memset(p, 0, (size_t)k_spoof_row_psize(o) * sizeof(double));
    }
}

/* Adds partial p of one output into tot (super-blocks in order). */
static void merge_partial(const SpRowOut *o, double *tot, const double *p)
{
    if (o->var == SPR_COL_T_AGG) {
        for (int64_t k = 0; k < o->orows * o->ocols; k++) tot[k] += p[k];
        return;
    }
    int64_t nc = o->var == SPR_COL_AGG ? o->ocols : 1;
    for (int64_t j = 0; j < nc; j++) {
        if (o->agg == SPA_MIN) tot[j] = min_step(tot[j], p[j]);
        else if (o->agg == SPA_MAX) tot[j] = max_step(tot[j], p[j]);
        else { kadd(&tot[j], &tot[nc + j], p[j]); kadd(&tot[j], &tot[nc + j], p[nc + j]); }
    }
}

/* The result of one output from its merged partial: *res (FULL_AGG) or
 * a new block in *out. */
static int final_output(const SpRowOut *o, const double *tot, int64_t M, bool sparse_main, MB **out, double *res,
                        BrErr *e)
{
    if (o->var == SPR_FULL_AGG) {
        double v = (o->agg == SPA_MIN || o->agg == SPA_MAX) ? tot[0] : tot[0] + tot[1];
        *res = o->agg == SPA_MEAN ? v / ((double)M * (double)o->ocols) : v;
        return 0;
    }
    MB *m = mb_dense(o->orows, o->ocols, e);
    if (!m) return e->code;
    int64_t nc = o->ocols;
    if (o->var == SPR_COL_T_AGG && sparse_main) {
        memcpy(m->d, tot, (size_t)(o->orows * o->ocols) * sizeof(double));
    } else if (o->var == SPR_COL_T_AGG) {
        /* the partial holds the transpose (ocols x orows) */
        for (int64_t i = 0; i < o->orows; i++)
            for (int64_t j = 0; j < o->ocols; j++) m->d[i * o->ocols + j] = tot[j * o->orows + i];
    } else {
        for (int64_t j = 0; j < nc; j++) {
            double v = (o->agg == SPA_MIN || o->agg == SPA_MAX) ? tot[j] : tot[j] + tot[nc + j];
            m->d[j] = o->agg == SPA_MEAN ? v / (double)M : v;
        }
    }
    k_spoof_count_fin(m);
    if (mb_examine(m, e)) { mb_release(m); return e->code; }
    *out = m;
    return 0;
}

/* The main row's products with the side matrices op->prod_in, looked up
 * per group (cla_rowmm_*: each group's dictionary times the sides' rows
 * at its columns, once per call) when the main input is compressed and
 * the sides are finite (the zeros of the main input are skipped); the
 * generated code reads them from P[n] (spoof.h). 0, or an error code. */
static int prod_init(RCtx *x, BrErr *e)
{
    const SpoofRow *op = x->op;
    const MB *mm = op->in.m[op->main];
    if (op->nprod < 1 || op->nprod > SPOOF_MAXPROD || op->cla_look < 0) return 0;
    int64_t w = 0;
    for (int j = 0; j < op->nprod; j++) {
        const MB *b = op->in.m[op->prod_in[j]];
        if (op->in.mode[op->prod_in[j]] != SPM_MAT || !b || b->cmb || b->rows != mm->cols ||
            op->L[op->prod_in[j]] != b->cols || mb_has_nonfinite(b))
            return 0;
        w += b->cols;
    }
    if (w < 1 || w > 256) return 0;
    const MB *sides[SPOOF_MAXPROD];
    for (int j = 0; j < op->nprod; j++) sides[j] = op->in.m[op->prod_in[j]];
    MB *B = k_cbind(op->nprod, sides, e);   /* the sides side by side, dense */
    if (B && B->sparse) {
        MB *D = mb_to_dense(B, e);
        mb_release(B);
        B = D;
    }
    if (!B) return e->code;
    x->side = B;
    if (!(x->mm = cla_rowmm_new(mm, B, e))) return e->code;
    /* a lookup of w values per row and pass against w multiply-adds per
     * column (vectorized) and, unless only the products read the row, a
     * cell decompressed: lookups pay where co-coding left at most half
     * as many passes as columns (kmeans' step over 40 columns, 600000
     * rows: 0.7x the CPU time of decompressed rows with about 10 passes,
     * 1.4x with 40; docs/cla.md) */
    if (op->cla_look == 0 && 2 * cla_rowmm_passes(x->mm) > mm->cols) {
        cla_rowmm_free(x->mm);
        x->mm = NULL;
        return 0;
    }
    x->qw = w;
    return 0;
}

/* The q rows of the t(main) %*% q (and t(q) %*% main) outputs over a
 * compressed main input, taken from the generated code (P[n + 1]) and
 * accumulated per tuple of each group (cla_rowtl_*) instead of an outer
 * product with every decompressed row: where the main input is finite
 * (its zeros are skipped: 0 * Inf), the scatter passes per row are at
 * most half the columns (as the lookups) and the accumulators of the nsb
 * row ranges (one each, finished into its partial) are small against
 * the cells. A q block that is not finite, or sums that overflow, make
 * the range run again over decompressed rows (cmb_rows). */
static void tq_init(RCtx *x, int64_t *nsbp)
{
    int64_t nsb = *nsbp;
    const SpoofRow *op = x->op;
    const MB *mm = op->in.m[op->main];
    if (op->ntq < 1 || op->ntq > x->nout || op->cla_look < 0 || mb_has_nonfinite(mm)) return;
    int64_t w = 0;
    for (int j = 0; j < op->ntq; j++) {
        int t = op->tq_out[j];
        if (t < 0 || t >= x->nout || x->out[t].var != SPR_COL_T_AGG) return;
        x->tqoff[j] = w;
        x->tqk[j] = op->tq_left[j] ? x->out[t].ocols : x->out[t].orows;
        w += x->tqk[j];
    }
    if (w < 1 || w > 256) return;
    /* each range's accumulators are cleared and finished (dict^T sums,
     * about its cells): fewer ranges than the rows' super-blocks, so that
     * the finishes stay about 1/32 of the passes over the rows (l2svm's
     * step over 1M rows, 5 groups, 12,545 cells: 64 finishes took more
     * CPU than the passes, docs/cla.md); a choice from the data alone,
     * the same sums whatever the threads */
    double passes = (double)cla_rowtl_passes(mm, w), tc = (double)cla_rowtl_cells(mm, w);
    double lim = (double)mm->rows * passes / (32 * tc);
    if (lim < (double)nsb) nsb = BR_MAX(1, (int64_t)lim);
    if (op->cla_look == 0 && (2 * passes > mm->cols || tc * (double)nsb > 0.5 * (double)mm->rows * (double)mm->cols))
        return;
    *nsbp = nsb;
    x->tl = true;
    x->tw = w;
}

/* The lookups that prod_init and tq_init took against none (unless
 * forced, cla_look): kept where they cost less than decompressing the
 * rows (cla_looks_pay, the planner's rule too: per row, the lookups cost
 * cla_look_cells each, and the rows are decompressed anyway when
 * something else reads the main row; without them every cell of the row
 * is decompressed and the generated code multiplies, about 1/12 of a
 * decompressed cell per multiply-add). kmeans' step over 1M x 12
 * Airline-like rows (5 groups, one a DDC2 group of 12,000 tuples, k = 5)
 * looked up 10 passes a row, 28 cells against 22, and took 1.15x the CPU
 * of the decompressed rows (docs/cla.md); by the rule a product with 8
 * centroids over 40 co-coded columns (about 10 passes), where the
 * lookups measured faster, still looks up. nsb0: the range count without
 * the q rows (tq_init's cap dropped with them). */
static void look_choose(RCtx *x, int64_t *nsbp, int64_t nsb0)
{
    const SpoofRow *op = x->op;
    const MB *mm = op->in.m[op->main];
    if (op->cla_look == 0 && (x->mm || x->tl)) {
        bool read = !op->prod_only || (op->nprod && !x->mm) || (op->ntq && !x->tl);
        if (!cla_row_looks_pay(mm, x->mm ? x->qw : 0, x->tl ? x->tw : 0, read)) {
            cla_rowmm_free(x->mm);
            x->mm = NULL;
            x->tl = false;
            if (nsbp) *nsbp = nsb0;
        }
    }
    if (x->mm) cla_stats_op("spoofRowCLAprod");
    if (x->tl) cla_stats_op("spoofRowCLAtl");
}

/* Adds t(X) %*% Q of a range (C: ncol(X) x tw, the q rows of every
 * output side by side) into the outputs' partials at out: t(main) %*% q
 * transposed (q's width x ncol), t(q) %*% main as ncol x q's width
 * (emit_row_out's layouts, kernels/spoof.h). */
static void tq_flush(const RCtx *x, const double *Cm, int64_t m, double *out)
{
    const SpoofRow *op = x->op;
    for (int j = 0; j < op->ntq; j++) {
        double *p = out + x->off[op->tq_out[j]];
        int64_t k = x->tqk[j], o = x->tqoff[j];
        for (int64_t r = 0; r < m; r++)
            for (int64_t c = 0; c < k; c++) {
                double v = Cm[r * x->tw + o + c];
                if (op->tq_left[j]) p[c * m + r] += v;
                else p[r * k + c] += v;
            }
    }
}

/* A compressed main input (seed 000 section 5.2: the Row template
 * iterates compressed rows): blocks of rows are decompressed into a small
 * dense buffer (cache resident) and the generated code runs over them as
 * rows 0..len of inputs whose row-indexed pointers (full and column
 * inputs) are moved to the block's first row. The main row's products
 * with side matrices come looked up per group (x->mm, P[n]); when
 * nothing else reads the main row, the rows are not decompressed. */
static int cmb_rows(const RCtx *x, const double **P, int64_t *S, int64_t ra, int64_t rb, double *out, int64_t ldo,
                    bool rowout, double *tmp, bool tl)
{
    const SpoofRow *op = x->op;
    const MB *mm = op->in.m[op->main];
    int64_t W = BR_MAX(mm->cols, 1), chunk = BR_MAX(1, BR_MIN(CLA_BLK, 32768 / W));
    /* the main row is read by products not looked up, outputs' q not
     * taken, or anything else */
    bool rows = !op->prod_only || (op->nprod && !x->mm) || (op->ntq && !tl);
    int64_t wq = BR_MAX(x->mm ? x->qw : 0, tl ? x->tw : 0);
    if (wq) chunk = BR_MAX(1, BR_MIN(CLA_BLK, 32768 / BR_MAX(wq, rows ? W : 1)));
    double *buf = br_malloc((size_t)(chunk * (rows ? W : 1)) * sizeof(double));
    double *qb = x->mm ? br_malloc((size_t)(chunk * x->qw) * sizeof(double)) : NULL;
    double *tb = tl ? br_malloc((size_t)(chunk * x->tw) * sizeof(double)) : NULL;
    ClaRows *rd = buf && rows ? cla_rows_open(mm, ra) : NULL;
    ClaRowMMCur *qc = qb ? cla_rowmm_open(x->mm, ra) : NULL;
    ClaRowTL *tc = tb ? cla_rowtl_new(mm, x->tw, ra) : NULL;
    bool ok = buf && (rd || !rows) && (qc || !x->mm) && (tc || !tl), redo = false;
    P[op->in.n] = qb;
    P[op->in.n + 1] = tb;
    for (int64_t lo = ra; ok && !redo && lo < rb; lo += chunk) {
        int64_t len = BR_MIN(chunk, rb - lo);
        if (rows) cla_rows_read(rd, len, buf);
        if (qc) cla_rowmm_read(qc, len, qb);
        for (int k = 0; k < op->in.n; k++) {
            int md = op->in.mode[k];
            if (k == op->main) P[k] = buf;
            else if (md == SPM_FULL) P[k] = x->P[k] + lo * S[k];
            else if (md == SPM_COL) P[k] = x->P[k] + lo;
        }
        op->fd(P, S, op->L, op->in.sc, 0, len, rowout ? out + (lo - ra) * ldo : out, ldo, tmp);
        if (tc) {
            /* a NaN/Inf of q would meet the skipped zeros of X */
            double nf = 0;
#pragma omp simd reduction(+ : nf)
            for (int64_t i = 0; i < len * x->tw; i++) nf += tb[i] * 0.0;
            if (nf != nf) redo = true;
            else cla_rowtl_add(tc, len, tb);
        }
    }
    if (tc && ok && !redo) {
        double *Cm = br_calloc((size_t)(mm->cols * x->tw), sizeof(double));
        if (!Cm) ok = false;
        else {
            cla_rowtl_finish(tc, Cm);
            double nf = 0;
            for (int64_t i = 0; i < mm->cols * x->tw; i++) nf += Cm[i] * 0.0;
            if (nf != nf) redo = true;   /* a tuple's sum overflowed */
            else tq_flush(x, Cm, mm->cols, out);
            free(Cm);
        }
    }
    P[op->in.n] = NULL;
    P[op->in.n + 1] = NULL;
    cla_rows_close(rd);
    cla_rowmm_close(qc);
    cla_rowtl_free(tc);
    free(buf);
    free(qb);
    free(tb);
    return !ok ? 0 : redo ? -1 : 1;
}

bool k_spoof_row_cla_ok(const SpoofRow *op)
{
    if (!op->fd || op->main < 0 || op->in.mode[op->main] != SPM_FULL || !mb_is_cmb(op->in.m[op->main]))
        return false;
    for (int k = 0; k < op->in.n; k++) {
        const MB *m = op->in.m[k];
        if (k != op->main && m && (m->cmb || (op->in.mode[k] == SPM_FULL && m->sparse))) return false;
    }
    return true;
}

/* ---- a sparse main input read by blocks of rows (sq) ----
 * A sparse main input that only products with side matrices and t(X)
 * %*% q roots read (op->prod_only; the dense function then has a loop
 * that reads no main row, op->fd_cq): per block of rows the skeleton
 * computes the products by the sparse leaf (rows in fixed chunks of
 * values), the dense function runs that loop over them and writes the q
 * rows (P[n], P[n + 1], spoof.h), and the skeleton adds t(X) %*% q by the
 * sparse leaf's flat loop. The sparse function's loops per row ended at
 * a different count every row (about ten values at 1% of 1000 columns):
 * their mispredicted exits took about half of its time (sp_leaf.c).
 * t(X) %*% q of a scalar q per row gets the sparse function's bits (each
 * column's sum in row order); the products' sums run in another order
 * (leaf.h mv_rows). */
#define SQ_ROWS 1024
static int64_t sq_runs;

int64_t k_spoof_row_sq_runs(void) { return __atomic_load_n(&sq_runs, __ATOMIC_RELAXED); }

/* The q rows of op's t(X) %*% q and t(q) %*% X outputs side by side
 * (x->tqoff, x->tqk), for a skeleton that takes them from the generated
 * code's loop without the main row (sq_rows, dq_rows): their width in
 * all, or -1 where one of them is no COL_T_AGG output or another COL_T_AGG
 * output is not among them (the generated loop over given q rows
 * accumulates none). */
static int64_t tq_layout(RCtx *x)
{
    const SpoofRow *op = x->op;
    int64_t tw = 0;
    for (int j = 0; j < op->ntq; j++) {
        int t = op->tq_out[j];
        if (t < 0 || t >= x->nout || x->out[t].var != SPR_COL_T_AGG) return -1;
        x->tqoff[j] = tw;
        x->tqk[j] = op->tq_left[j] ? x->out[t].ocols : x->out[t].orows;
        tw += x->tqk[j];
    }
    for (int t = 0; t < x->nout; t++) {
        bool mine = x->out[t].var != SPR_COL_T_AGG;
        for (int j = 0; j < op->ntq; j++) mine |= op->tq_out[j] == t;
        if (!mine) return -1;
    }
    return tw;
}

static int sq_init(RCtx *x, BrErr *e)
{
    const SpoofRow *op = x->op;
    if (!x->sparse_main || x->nexp || !op->fd || !op->fd_cq || !op->prod_only || op->nprod + op->ntq < 1 ||
        op->nprod > SPOOF_MAXPROD || op->ntq > x->nout)
        return 0;
    const MB *mm = op->in.m[op->main];
    int64_t w = 0;
    for (int j = 0; j < op->nprod; j++) {
        int k = op->prod_in[j];
        const MB *b = op->in.m[k];
        if (op->in.mode[k] != SPM_MAT || !b || b->cmb || b->rows != mm->cols || op->L[k] != b->cols) return 0;
        x->pqoff[j] = w;
        w += b->cols;
    }
    const int64_t tw = tq_layout(x);
    if (w > 256 || tw < 0 || tw > 256) return 0;
    int n = op->in.n;
    x->Pd = br_calloc((size_t)n + 2, sizeof *x->Pd);
    x->tside = br_calloc((size_t)n + 1, sizeof *x->tside);
    if (!x->Pd || !x->tside) return br_err(e, BR_ENOMEM, "out of memory in fused operator");
    for (int k = 0; k < n; k++) {
        x->Pd[k] = x->P[k];
        if (op->in.mode[k] != SPM_MAT) continue;
        if (!(x->tside[k] = side_t(op->in.m[k]))) return br_err(e, BR_ENOMEM, "out of memory in fused operator");
        x->Pd[k] = x->tside[k];
    }
    x->qw = w;
    x->tw = tw;
    x->sq = true;
    __atomic_fetch_add(&sq_runs, 1, __ATOMIC_RELAXED);
    return 0;
}

/* Rows [ra, rb) of a sparse main input by blocks (x->sq, above). */
static bool sq_rows(const RCtx *x, const double **P, int64_t *S, int64_t ra, int64_t rb, double *out, int64_t ldo,
                    bool rowout, double *tmp)
{
    const SpoofRow *op = x->op;
    const MB *mm = op->in.m[op->main];
    const KSpLeaf *L = k_leaves(k_isa())->sp;
    const int64_t *rp = mm->rp, nz = mm->rp[mm->rows], nc = mm->cols;
    const int32_t *ci = mm->ci;
    const double *cv = mm->v;
    int n = op->in.n;
    int64_t qw = x->qw, tw = x->tw;
    int64_t B = BR_MAX(1, BR_MIN(SQ_ROWS, 32768 / BR_MAX(BR_MAX(qw, tw), 1)));
    double *qb = qw ? br_malloc((size_t)(B * qw) * sizeof(double)) : NULL;
    double *tb = tw ? br_malloc((size_t)(B * tw) * sizeof(double)) : NULL;
    double *col = br_malloc((size_t)B * sizeof(double));
    static const double none[8];   /* the main row's pointer: not read */
    bool ok = (qb || !qw) && (tb || !tw) && col;
    memcpy(P, x->Pd, (size_t)n * sizeof *P);
    P[op->main] = none;
    S[op->main] = 0;
    P[n] = qb;
    P[n + 1] = tb;
    for (int64_t lo = ra; ok && lo < rb; lo += B) {
        int64_t len = BR_MIN(B, rb - lo);
        for (int j = 0; j < op->nprod; j++) {
            int k = op->prod_in[j];
            int64_t kj = op->L[k], o = x->pqoff[j];
            const double *V = x->P[k];   /* row-major (rctx_init, sparse main) */
            if (kj == 1) {
                L->mv_rows(rp, ci, cv, nz, V, lo, lo + len, qw == 1 ? qb : col);
                if (qw != 1) for (int64_t i = 0; i < len; i++) qb[i * qw + o] = col[i];
                continue;
            }
            for (int64_t i = 0; i < len; i++) {   /* cg_vecmat_sp's sums */
                double *r = qb + i * qw + o;
                for (int64_t c = 0; c < kj; c++) r[c] = 0;
                for (int64_t p = rp[lo + i]; p < rp[lo + i + 1]; p++) {
                    const double a = cv[p], *br = V + (int64_t)ci[p] * kj;
                    for (int64_t c = 0; c < kj; c++) r[c] += a * br[c];
                }
            }
        }
        for (int k = 0; k < n; k++) {
            if (k == op->main) continue;
            if (op->in.mode[k] == SPM_FULL) P[k] = x->Pd[k] + lo * S[k];
            else if (op->in.mode[k] == SPM_COL) P[k] = x->Pd[k] + lo;
        }
        op->fd(P, S, op->L, op->in.sc, 0, len, rowout ? out + (lo - ra) * ldo : out, ldo, tmp);
        for (int j = 0; j < op->ntq; j++) {
            double *pt = out + x->off[op->tq_out[j]];
            int64_t kq = x->tqk[j], o = x->tqoff[j];
            if (kq == 1) {
                const double *q = tb + o;
                if (tw != 1) {
                    for (int64_t i = 0; i < len; i++) col[i] = tb[i * tw + o];
                    q = col;
                }
                L->tmv_rows(rp, ci, cv, q, lo, lo + len, pt);
                continue;
            }
            for (int64_t i = 0; i < len; i++) {   /* the sparse partials' layouts (spoof.h) */
                const double *qr = tb + i * tw + o;
                for (int64_t p = rp[lo + i]; p < rp[lo + i + 1]; p++) {
                    const int64_t c = ci[p];
                    const double a = cv[p];
                    if (op->tq_left[j]) for (int64_t l = 0; l < kq; l++) pt[c * kq + l] += a * qr[l];
                    else for (int64_t l = 0; l < kq; l++) pt[l * nc + c] += a * qr[l];
                }
            }
        }
    }
    P[n] = P[n + 1] = NULL;
    free(qb); free(tb); free(col);
    return ok;
}

/* A dense main input whose row only the products with one-column side
 * matrices and t(X) %*% q of one-column q read (prod_only: L2SVM's and
 * GLM's gradient steps, logistic regression's `t(X) %*% (1 / (1 +
 * exp(-X %*% w)) - y)`, `Xw + step * (X %*% s)`) runs by blocks of rows:
 * the products of a block by the leaf's mvec_rows (X %*% v), the
 * generated loop that reads no main row over them, then t(X) %*% q by
 * tvec_rows into the partial: the unfused kernels' leaves (kernels/mm.c
 * gemv_rows, gemv_trows) at the read rate, where the generated code's
 * per-row dot products and its column blocks of the outer product (16
 * columns, the rows again for each) ran t(X) %*% q over 500,000 x 100 at
 * 1.3x the unfused operator's time. A block is read from memory once and
 * again from the cache when there are products (DQ_CELLS: half of a 1 MB
 * L2). The products' sums are mvec_rows's order (the unfused X %*% v's
 * bits), t(X) %*% q's each block's fma chains from 0 added to the
 * partial in block order: blocks are fixed by the super-block, so the
 * result does not depend on the threads. */
#define DQ_CELLS 65536
static int64_t dq_runs;

int64_t k_spoof_row_dq_runs(void) { return __atomic_load_n(&dq_runs, __ATOMIC_RELAXED); }

static void dq_init(RCtx *x)
{
    const SpoofRow *op = x->op;
    const MB *mm = op->in.m[op->main];
    const KMmLeaf *L = k_leaves(k_isa())->mm;
    if (x->sparse_main || x->cmb_main || x->per_row || !mm || mm->sparse || !mm->d || !op->fd || !op->fd_cq ||
        !op->prod_only || op->nprod + op->ntq < 1 || op->nprod > SPOOF_MAXPROD || op->ntq > x->nout ||
        !L->mvec_rows || !L->tvec_rows)
        return;
    for (int j = 0; j < op->nprod; j++) {
        int k = op->prod_in[j];
        const MB *b = op->in.m[k];
        if (op->in.mode[k] != SPM_MAT || !b || b->cmb || b->rows != mm->cols || b->cols != 1 || op->L[k] != 1)
            return;
    }
    if (tq_layout(x) < 0) return;
    for (int j = 0; j < op->ntq; j++) if (x->tqk[j] != 1) return;
    x->qw = op->nprod;
    x->tw = op->ntq;
    x->dq = true;
    __atomic_fetch_add(&dq_runs, 1, __ATOMIC_RELAXED);
}

/* Rows [ra, rb) of a dense main input by blocks (x->dq, above). */
static bool dq_rows(const RCtx *x, const double **P, const int64_t *S, int64_t ra, int64_t rb, double *out,
                    int64_t ldo, bool rowout, double *tmp)
{
    const SpoofRow *op = x->op;
    const MB *mm = op->in.m[op->main];
    const KMmLeaf *L = k_leaves(k_isa())->mm;
    const int64_t m = mm->cols, qw = x->qw, tw = x->tw;
    const int n = op->in.n;
    const int64_t B = BR_MAX(1, BR_MIN(1024, DQ_CELLS / BR_MAX(m, 1)));
    double *qb = qw ? br_malloc((size_t)(B * qw) * sizeof(double)) : NULL;
    double *tb = tw ? br_malloc((size_t)(B * tw) * sizeof(double)) : NULL;
    double *col = br_malloc((size_t)B * sizeof(double));
    double *yb = tw ? br_malloc((size_t)m * sizeof(double)) : NULL;   /* a block's t(X) %*% q */
    bool ok = (qb || !qw) && (tb || !tw) && col && (yb || !tw);
    P[n] = qb;
    P[n + 1] = tb;
    for (int64_t lo = ra; ok && lo < rb; lo += B) {
        const int64_t len = BR_MIN(B, rb - lo);
        /* (the leaves' row-indexed arrays addressed at the block's first row) */
        for (int j = 0; j < op->nprod; j++) {
            double *y = qw == 1 ? qb : col;
            L->mvec_rows(mm->d, x->P[op->prod_in[j]], m, lo, lo + len,
                         (double *)((uintptr_t)y - (uintptr_t)lo * sizeof(double)));
            if (qw != 1) for (int64_t i = 0; i < len; i++) qb[i * qw + j] = col[i];
        }
        op->fd(P, S, op->L, op->in.sc, lo, lo + len, rowout ? out + (lo - ra) * ldo : out, ldo, tmp);
        for (int j = 0; j < op->ntq; j++) {
            double *pt = out + x->off[op->tq_out[j]];
            const double *q = tb;
            if (tw != 1) {
                for (int64_t i = 0; i < len; i++) col[i] = tb[i * tw + j];
                q = col;
            }
            L->tvec_rows(mm->d, (const double *)((uintptr_t)q - (uintptr_t)lo * sizeof(double)), m, lo, lo + len, yb);
            for (int64_t c = 0; c < m; c++) pt[c] += yb[c];
        }
    }
    P[n] = P[n + 1] = NULL;
    free(qb); free(tb); free(col); free(yb);
    return ok;
}

/* Rows [ra, rb) with sparse side inputs (x->exp) into out: blocks of
 * EXP_ROWS rows, fewer for wide inputs (EXP_CELLS cells of the widest a
 * block; down to one row, so the scratch stays that small), each
 * expanded input's rows of the block dense in scratch, one call of the
 * operator per block, so a dense main's blocked products run (one call
 * per row took no blocked path: MLogreg's t(X) %*% (P[, 1:K] - Y[, 1:K])
 * with a one-hot Y ran row by row). The generated code addresses row i
 * of input k at P[k] + i * S[k]: P[k] is set to the scratch less the
 * block's first row. */
#define EXP_ROWS 1024
#define EXP_CELLS 65536
static bool exp_blocks(const RCtx *x, int64_t ra, int64_t rb, double *out, int64_t ldo, bool rowout,
                       const double **P, int64_t *S, double *tmp)
{
    const SpoofRow *op = x->op;
    int n = op->in.n;
    int64_t width = 1;
    for (int k = 0; k < n; k++) if (x->exp[k]) width = BR_MAX(width, op->L[k]);
    int64_t B = BR_MAX(1, BR_MIN(EXP_ROWS, EXP_CELLS / width));
    double *buf = br_malloc((size_t)x->nexp * (size_t)B * (size_t)width * sizeof(double));
    if (!buf) return false;
    for (int64_t i0 = ra; i0 < rb; i0 += B) {
        int64_t i1 = BR_MIN(rb, i0 + B);
        for (int k = 0, q = 0; k < n; k++) {
            if (!x->exp[k]) continue;
            const MB *m = op->in.m[k];
            int64_t w = m->cols;
            double *r = buf + (size_t)q * (size_t)B * (size_t)width;
            memset(r, 0, (size_t)(i1 - i0) * (size_t)w * sizeof(double));
            for (int64_t i = i0; i < i1; i++)
                for (int64_t p = m->rp[i]; p < m->rp[i + 1]; p++) r[(i - i0) * w + m->ci[p]] = m->v[p];
            P[k] = (const double *)((uintptr_t)r - (uintptr_t)i0 * (uintptr_t)w * sizeof(double));
            S[k] = w;
            q++;
        }
        double *o = rowout ? out + (i0 - ra) * ldo : out;
        if (x->sparse_main) {
            const MB *m = op->in.m[op->main];
            op->fs(P, S, op->L, op->in.sc, i0, i1, m->rp, m->ci, m->v, o, ldo, tmp);
        } else {
            op->fd(P, S, op->L, op->in.sc, i0, i1, o, ldo, tmp);
        }
    }
    free(buf);
    return true;
}

/* Rows [ra, rb) into out (output rows at row ra, or a partial). */
static bool run_rows(const RCtx *x, int64_t ra, int64_t rb, double *out, int64_t ldo, bool rowout)
{
    const SpoofRow *op = x->op;
    int n = op->in.n;
    double *tmp = br_alloc_aligned((size_t)BR_MAX(x->tmpn, 1) * sizeof(double));   /* lines: cgen_c.c emit_blk_buffers */
    const double **P = malloc(((size_t)n + 2) * sizeof *P);
    int64_t *S = malloc(((size_t)n + 2) * sizeof *S);
    bool ok = tmp && P && S;
    if (!ok) goto done;
    memcpy(P, x->P, (size_t)n * sizeof *P);
    memcpy(S, x->S, (size_t)n * sizeof *S);
    P[n] = P[n + 1] = NULL;   /* no products given, q accumulated by the code (spoof.h) */
    if (x->cmb_main) {
        int r = cmb_rows(x, P, S, ra, rb, out, ldo, rowout, tmp, x->tl);
        if (r < 0) {
            /* q or its sums not finite: the range again over decompressed
             * rows, from fresh partials (rowout plans take no q) */
            for (int t = 0; t < x->nout; t++) init_partial(&x->out[t], out + x->off[t]);
            memcpy(P, x->P, (size_t)n * sizeof *P);
            r = cmb_rows(x, P, S, ra, rb, out, ldo, rowout, tmp, false);
        }
        ok = r > 0;
        goto done;
    }
    if (x->dq) {
        ok = dq_rows(x, P, S, ra, rb, out, ldo, rowout, tmp);
        goto done;
    }
    if (!x->per_row) {
        op->fd(P, S, op->L, op->in.sc, ra, rb, out, ldo, tmp);
        goto done;
    }
    if (x->sq) {
        ok = sq_rows(x, P, S, ra, rb, out, ldo, rowout, tmp);
        goto done;
    }
    if (x->sparse_main && x->nexp == 0) {    /* the whole range in one call */
        const MB *m = op->in.m[op->main];
        op->fs(P, S, op->L, op->in.sc, ra, rb, m->rp, m->ci, m->v, out, ldo, tmp);
        goto done;
    }
    /* x->per_row with expanded inputs: by blocks of rows */
    ok = exp_blocks(x, ra, rb, out, ldo, rowout, P, S, tmp);
done:
    br_free_aligned(tmp); free(P); free(S);
    return ok;
}

static int threads_for(double work, int64_t tasks)
{
    if (tasks < 2 || !br_par(work)) return 1;
    int t = br_threads();
    return t > tasks ? (int)tasks : t;
}

/* ---- CPU stitching (docs/codegen.md, "CPU stitching") ----
 * The stitched inputs are vector expressions of the main matrix's column
 * aggregates (spoof_pre.c: k_agg's values to the bit, the unfused
 * kernels' expressions), computed into their row vectors before the rows
 * run, as the unfused aggregate instruction computes them: its parallel
 * regions and static schedule over row blocks (X's pass is the one the
 * unfused colMeans makes), then the rows in the skeleton's own dynamic
 * schedule. An earlier version ran both phases in one parallel region
 * (static schedules, barriers, merges in omp single): on a loaded
 * machine a preempted thread held up every barrier and it was slower
 * than the two instructions (bench_cgstitch 0.75-0.84); what stitching
 * saves on the CPU is the instruction between (dispatch, the vector's
 * block and its lineage), and X's second pass is cheap only where X
 * stays in the cache, which the cost model prices (codegen/cost.c). */
static int fill_stitched(RCtx *x, BrErr *e)
{
    const SpoofRow *op = x->op;
    int n = op->in.n;
    double **vec = br_calloc((size_t)n + 1, sizeof *vec);
    if (!vec) return br_err(e, BR_ENOMEM, "out of memory in fused operator");
    int rc = k_pre_run(op->pre, n, op->in.m[op->main], vec, e);
    for (int k = 0; k < n; k++) {
        if (!vec[k]) continue;
        if (!rc) memcpy(x->own[k], vec[k], (size_t)op->in.m[op->main]->cols * sizeof(double));
        free(vec[k]);
    }
    free(vec);
    return rc;
}

/* Runs a Row operator; see spoof.h. */
int k_spoof_row(const SpoofRow *op, MB **out, double *res, BrErr *e)
{
    RCtx x;
    if (rctx_init(&x, op, e)) return e->code;
    if (x.cmb_main) cla_stats_op("spoofRowCLA");
    int64_t M = op->rows, W = BR_MAX(op->L[op->main], 1);
    const MB *mm = op->in.m[op->main];
    double cells = mm->sparse ? (double)mm->nnz + (double)M : (double)M * (double)W;
    bool fail = false;
    int rc = 0;
    if (x.npre && fill_stitched(&x, e)) { rctx_free(&x); return e->code; }
    if (x.cmb_main && prod_init(&x, e)) { rctx_free(&x); return e->code; }
    if (x.sparse_main && sq_init(&x, e)) { rctx_free(&x); return e->code; }
    dq_init(&x);
    if (op->var == SPR_NO_AGG || op->var == SPR_ROW_AGG) {
        if (x.cmb_main) look_choose(&x, NULL, 0);
        int64_t oc = op->var == SPR_NO_AGG ? op->ocols : 1;
        MB *o = mb_dense(M, oc, e);
        if (!o) { rctx_free(&x); return e->code; }
        /* rows per task by the cells a row costs: a sparse main row its
         * non-zeros (and the output row), not its width (L2SVM's
         * `Xw + step * (X %*% s)` over 1000 columns at 1e-2: tasks of 32
         * rows, ~10 non-zeros each, were mostly a task's set-up) */
        int64_t per = W;
        if (x.sparse_main && x.nexp == 0 && !x.cmb_main) per = BR_MAX(oc, mm->nnz / BR_MAX(M, 1));
        int64_t R = BR_MAX(1, TASK_CELLS / BR_MAX(per, 1));
        int64_t ntask = M ? (M + R - 1) / R : 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads_for(cells, ntask))
        for (int64_t t = 0; t < ntask; t++) {
            int64_t ra = t * R, rb = BR_MIN(M, ra + R);
            if (!run_rows(&x, ra, rb, o->d + ra * oc, oc, true)) fail = true;
        }
        if (fail) { mb_release(o); rctx_free(&x); return br_err(e, BR_ENOMEM, "out of memory in fused operator"); }
        k_spoof_count_fin(o);
        if (mb_examine(o, e)) { mb_release(o); rctx_free(&x); return e->code; }
        *out = o;
        rctx_free(&x);
        return 0;
    }
    /* aggregations over super-blocks */
    int64_t cap = BR_MAX(1, PART_BUDGET / (8 * BR_MAX(x.psize, 1)));
    int64_t nsb = (int64_t)ceil(cells / SB_CELLS);
    nsb = BR_MAX(1, BR_MIN(BR_MIN(nsb, SB_MAX), BR_MIN(cap, BR_MAX(M, 1))));
    if (x.cmb_main) {
        int64_t nsb0 = nsb;
        tq_init(&x, &nsb);
        look_choose(&x, &nsb, nsb0);
    }
    /* each partial on cache lines of its own (a stride of whole 128-byte
     * pairs of lines, 64-byte aligned): super-blocks next to each other
     * run at the same time on two threads, and a shared line between
     * partials that every row updates went back and forth between the
     * cores on every row (GLM's t(X) %*% (y - exp(X %*% b)) over 100
     * columns: 21 ms, 6.3 ms with lines of their own) */
    const int64_t pst = (int64_t)br_line_pairs((size_t)BR_MAX(x.psize, 1));
    double *parts = br_alloc_aligned((size_t)nsb * (size_t)pst * sizeof(double));
    if (!parts) { rctx_free(&x); return br_err(e, BR_ENOMEM, "out of memory in fused operator"); }
    for (int64_t b = 0; b < nsb; b++)
        for (int t = 0; t < x.nout; t++) init_partial(&x.out[t], parts + b * pst + x.off[t]);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads_for(cells, nsb))
    for (int64_t b = 0; b < nsb; b++) {
        int64_t ra = b * M / nsb, rb = (b + 1) * M / nsb;
        if (ra < rb && !run_rows(&x, ra, rb, parts + b * pst, 0, false)) fail = true;
    }
    if (fail) { br_free_aligned(parts); rctx_free(&x); return br_err(e, BR_ENOMEM, "out of memory in fused operator"); }
    double *tot = parts;    /* merged into the first partial, in order */
    for (int64_t b = 1; b < nsb; b++)
        for (int t = 0; t < x.nout; t++) merge_partial(&x.out[t], tot + x.off[t], parts + b * pst + x.off[t]);
    bool multi = op->var == SPR_MULTI;
    for (int t = 0; t < x.nout && !rc; t++) {
        rc = final_output(&x.out[t], tot + x.off[t], M, x.sparse_main, multi ? &out[t] : out, multi ? &res[t] : res, e);
        if (rc) for (int u = 0; multi && u < t; u++) if (x.out[u].var != SPR_FULL_AGG) { mb_release(out[u]); out[u] = NULL; }
    }
    br_free_aligned(parts);
    rctx_free(&x);
    return rc;
}
