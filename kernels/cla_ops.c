/* cla_ops.c: operations over compressed blocks (kernels/cla.h,
 * docs/cla.md). Row-wise work (x %*% b, row aggregates) runs over row
 * ranges in parallel, each thread decoding CLA_BLK rows of every group to
 * tuple codes and adding per-tuple precomputed results; column-wise work
 * (t(x) %*% b, column and full aggregates) aggregates per tuple (via the
 * counts per tuple where possible) and multiplies with the dictionary.
 * UNC groups go to the ordinary kernels. */
#include "cla.h"
#include "agg.h"
#include "agg_int.h"
#include "ew.h"
#include "mm.h"
#include "reorg.h"
#include "leaf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static inline const struct CMB *C(const MB *x) { return x->cmb; }
/* the per-row loops of the level in use (cla_leaf.c) */
static const KClaLeaf *leaf(void) { return k_leaves(k_isa())->cla; }

/* A dense row-major copy of an ordinary block (borrowed when dense). */
static const MB *dense_of(const MB *b, MB **tmp, BrErr *e)
{
    *tmp = NULL;
    if (!b->cmb && !b->sparse) return b;
    return *tmp = mb_to_dense(b, e);
}

bool cla_handles(ClaFamily f, OpCode op, AggDir dir, int left, int pos, int nin, const MB *const *ins)
{
    switch (f) {
    case CLA_F_UNARY:
        return op_info[op].kind == OK_UNARY && (op_info[op].tpl & FT_CELL);
    case CLA_F_BINARY:
        /* matrix-scalar, or the block with itself (X * X) */
        return op_info[op].kind == OK_BINARY && (op_info[op].tpl & FT_CELL) && nin == 2 &&
               (!ins[1 - pos] || ins[1 - pos] == ins[pos]);
    case CLA_F_AGG:
        return op == OP_SUM || op == OP_SUMSQ || op == OP_MEAN || op == OP_AMIN || op == OP_AMAX;
    case CLA_F_MATMUL:
        if (op == OP_TSMM) return left && pos == 0;
        if (op == OP_MMCHAIN) return pos == 0;
        if (op == OP_MATMULTL && pos == 0) return ins[1] && ins[1]->cols <= 256;
        if (op == OP_MATMULTL) return ins[0] && (ins[0]->cols <= 256 || ins[0]->sparse);   /* t(A) %*% X */
        if (op == OP_MATMUL && pos == 0) return ins[1] && ins[1]->cols <= 256;
        if (op == OP_MATMUL && pos == 1)   /* a few rows, or a selection of rows (left_gather) */
            return ins[0] && (ins[0]->rows <= 256 || ins[0]->sparse);
        return false;
    case CLA_F_RIX:
        return pos == 0;
    }
    return false;
}

/* ---- row-wise: x %*% b ---- */

/* pre[t*k + c] = dict[t] . b[cols, c] for group g (b dense, k columns). */
static double *pre_mult(const ClaGroup *g, const MB *b)
{
    int64_t k = b->cols;
    double *pre = br_calloc_aligned(((size_t)g->ndict * (size_t)k + 1) * sizeof(double));
    if (!pre) return NULL;
    for (int32_t t = 0; t < g->ndict; t++)
        for (int j = 0; j < g->ncols; j++) {
            double v = g->dict[(int64_t)t * g->ncols + j];
            if (v == 0) continue;
            const double *br = b->d + (int64_t)g->cols[j] * k;
            for (int64_t c = 0; c < k; c++) pre[t * k + c] += v * br[c];
        }
    return pre;
}

/* The rows of b at g's columns (an ordinary ncols x k block). */
static MB *rows_of(const ClaGroup *g, const MB *b, BrErr *e)
{
    MB *r = mb_dense_uninit(g->ncols, b->cols, e);
    if (!r) return NULL;
    for (int j = 0; j < g->ncols; j++)
        memcpy(r->d + (int64_t)j * b->cols, b->d + (int64_t)g->cols[j] * b->cols, (size_t)b->cols * sizeof(double));
    mb_recount_nnz(r);
    return r;
}

/* A[c[i]] += v[i] for i < n, with nd (<= 256) table entries: four
 * partial tables by row modulo 4, added to A at the end (a run of one
 * code otherwise makes each add wait on the store of the one before).
 * C: the code type (joint codes; DDC1 codes: ddc1_scatter4). */
#define SCATTER4(C)                                                                          \
    static void scatter4_##C(const C *c, int64_t n, const double *v, int64_t nd, double *A)  \
    {                                                                                        \
        double P[4][256];                                                                    \
        for (int r = 0; r < 4; r++) memset(P[r], 0, (size_t)nd * sizeof(double));           \
        int64_t i = 0;                                                                       \
        for (; i + 4 <= n; i += 4) {                                                         \
            P[0][c[i]] += v[i];                                                              \
            P[1][c[i + 1]] += v[i + 1];                                                      \
            P[2][c[i + 2]] += v[i + 2];                                                      \
            P[3][c[i + 3]] += v[i + 3];                                                      \
        }                                                                                    \
        for (; i < n; i++) P[0][c[i]] += v[i];                                               \
        for (int64_t t = 0; t < nd; t++) A[t] += (P[0][t] + P[1][t]) + (P[2][t] + P[3][t]);  \
    }
SCATTER4(uint16_t)

/* Whether DDC1 group g takes partial tables over n rows (ddc_scatter's
 * rule: a run of one code otherwise makes each add wait on the one
 * before; few tuples make runs likely). */
static bool ddc1_partial(const ClaGroup *g, int64_t n) { return g->enc == CLA_DDC1 && (int64_t)g->ndict * 16 <= n; }

/* Up to 4 DDC1 groups with one column of b, each through four partial
 * tables by row modulo 4 as scatter4 takes joint codes, in one pass over
 * v (the Airline-like table's three DDC1 groups took three). */
static void ddc1_scatter4(const uint8_t *const *cd, double *const *a, const int32_t *nd, int m, int64_t n,
                          const double *v)
{
    double P[4][4][256];
    for (int g = 0; g < m; g++)
        for (int r = 0; r < 4; r++) memset(P[g][r], 0, (size_t)nd[g] * sizeof(double));
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int g = 0; g < m; g++) {
            const uint8_t *c = cd[g] + i;
            P[g][0][c[0]] += v[i], P[g][1][c[1]] += v[i + 1], P[g][2][c[2]] += v[i + 2], P[g][3][c[3]] += v[i + 3];
        }
    for (; i < n; i++)
        for (int g = 0; g < m; g++) P[g][0][cd[g][i]] += v[i];
    for (int g = 0; g < m; g++)
        for (int32_t t = 0; t < nd[g]; t++) a[g][t] += (P[g][0][t] + P[g][1][t]) + (P[g][2][t] + P[g][3][t]);
}

/* A[code of row lo + i] += v[i]; DDC1 with few tuples for the rows
 * through partial tables. */
static void ddc_scatter(const ClaGroup *g, int64_t lo, int64_t n, const double *v, double *A)
{
    if (ddc1_partial(g, n)) {
        const uint8_t *cd = g->ix->c1 + lo;
        ddc1_scatter4(&cd, &A, &g->ndict, 1, n, v);
    } else if (g->enc == CLA_DDC1) {
        for (int64_t i = 0; i < n; i++) A[g->ix->c1[lo + i]] += v[i];
    } else {
        for (int64_t i = 0; i < n; i++) A[g->ix->c2[lo + i]] += v[i];
    }
}

/* DDC with k columns of results: o[i * k + c] += p[code of row lo + i][c],
 * the codes read straight from the index (the leaf unrolls widths up to
 * 8: X %*% t(C) of kmeans, k = 5). */
static void ddc_add(const ClaGroup *g, int64_t lo, int64_t n, const double *p, int64_t k, double *o)
{
    if (g->enc == CLA_DDC1) leaf()->gather(g->ix->c1 + lo, NULL, n, p, k, o);
    else leaf()->gather(NULL, g->ix->c2 + lo, n, p, k, o);
}

/* Up to 4 DDC groups of one code width (codes cd, from row lo; tables p)
 * with one column of results: o[i] takes each group's p[code] in turn
 * (the sums of one pass per group, so the same values), but o is read
 * and written once for all of them: with one group per column, a pass
 * per group was bound by the loads and stores of o (DDC2 too: X %*% v
 * over 16 DDC2 columns ran at 0.67 of BLAS). */
#define DDC_GATHER4(NAME, C)                                                                 \
    static void NAME(const C *const *cd, const double *const *p, int m, int64_t n, double *o) \
    {                                                                                        \
        switch (m) {                                                                         \
        case 4:                                                                              \
            for (int64_t i = 0; i < n; i++)                                                  \
                o[i] = o[i] + p[0][cd[0][i]] + p[1][cd[1][i]] + p[2][cd[2][i]] + p[3][cd[3][i]]; \
            break;                                                                           \
        case 3:                                                                              \
            for (int64_t i = 0; i < n; i++) o[i] = o[i] + p[0][cd[0][i]] + p[1][cd[1][i]] + p[2][cd[2][i]]; \
            break;                                                                           \
        case 2:                                                                              \
            for (int64_t i = 0; i < n; i++) o[i] = o[i] + p[0][cd[0][i]] + p[1][cd[1][i]];   \
            break;                                                                           \
        default:                                                                             \
            for (int64_t i = 0; i < n; i++) o[i] += p[0][cd[0][i]];                          \
            break;                                                                           \
        }                                                                                    \
    }
DDC_GATHER4(ddc1_gather4, uint8_t)
DDC_GATHER4(ddc2_gather4, uint16_t)

/* One column of results: o (rows [lo, lo+n)) += p[code] of every DDC
 * group with pre[q] and not wide[q], the DDC1 groups in group order 4 to
 * a pass, then the DDC2 groups (groups of the two widths interleave in
 * group order: the Airline-like table's 6 took 6 passes, not 2), their
 * iterators moved past the rows. */
static void ddc_gather_k1(const struct CMB *c, ClaIter *its, double **pre, const bool *wide, int64_t lo, int64_t n,
                          double *o)
{
    for (int w = 1; w <= 2; w++) {
        const uint8_t *c1[4];
        const uint16_t *c2[4];
        const double *p[4];
        int m = 0;
        for (int q = 0; q <= c->ngroups; q++) {
            const ClaGroup *g = q < c->ngroups ? c->groups[q] : NULL;
            if (g && pre[q] && !(wide && wide[q]) && g->enc == (w == 1 ? CLA_DDC1 : CLA_DDC2)) {
                if (w == 1) c1[m] = g->ix->c1 + lo;
                else c2[m] = g->ix->c2 + lo;
                p[m++] = pre[q];
                cla_iter_skip(&its[q], n);
            }
            if (m == 4 || (g == NULL && m > 0)) {
                if (w == 1) ddc1_gather4(c1, p, m, n, o);
                else ddc2_gather4(c2, p, m, n, o);
                m = 0;
            }
        }
    }
}

/* k (2 or more) columns of results over the DDC1 groups with results
 * (pre[q]): each output row summed over the groups in registers and
 * stored once (a pass per group loaded and stored the block's rows once
 * per group: X %*% B ran at 0.4 of the dense kernel's speed). Groups in
 * chunks of DDC_FUSE. Returns whether it ran (at least 2 such groups). */
#define DDC_FUSE 16
static bool fusable_ddc1(const ClaGroup *g, const double *p) { return p && g->enc == CLA_DDC1; }

static bool ddc1_fused(const struct CMB *c, double **pre, int64_t lo, int64_t n, int64_t k, double *o)
{
    int tot = 0;
    for (int q = 0; q < c->ngroups; q++) tot += fusable_ddc1(c->groups[q], pre[q]);
    if (k < 2 || tot < 2) return false;
    const uint8_t *cd[DDC_FUSE];
    const double *P[DDC_FUSE];
    int m = 0;
    for (int q = 0; q <= c->ngroups; q++) {
        if (q < c->ngroups && fusable_ddc1(c->groups[q], pre[q])) {
            cd[m] = c->groups[q]->ix->c1 + lo;
            P[m++] = pre[q];
        }
        if (m == 0 || (m < DDC_FUSE && q < c->ngroups)) continue;
        leaf()->gather_fused(cd, P, m, n, k, o);
        m = 0;
    }
    return true;
}

/* ob (the n x k results of the next n rows) += pre[t] at the rows each
 * tuple of the OLE/RLE group g lists, its iterator it moved past them
 * (rows: n entries of scratch). */
static void list_rows_add(const ClaGroup *g, ClaIter *it, const double *p, int64_t n, int64_t k, int32_t *rows,
                          double *ob)
{
    for (int32_t t = 0; g->enc == CLA_RLE && t < g->ndict; t++) {   /* by runs (vectorized adds) */
        const double *pt = p + (int64_t)t * k;
        int64_t a, b;
        while (cla_iter_run(it, t, n, &a, &b)) {
            if (k == 1) {
#pragma omp simd
                for (int64_t r = a; r < b; r++) ob[r] += pt[0];
                continue;
            }
            for (int64_t r = a; r < b; r++)
#pragma omp simd
                for (int64_t cc = 0; cc < k; cc++) ob[r * k + cc] += pt[cc];
        }
    }
    for (int32_t t = 0; g->enc == CLA_OLE && k == 1 && t < g->ndict; t++) cla_iter_add1(it, t, n, p[t], ob);
    for (int32_t t = 0; g->enc == CLA_OLE && k > 1 && t < g->ndict; t++) {
        int64_t nr = cla_iter_rows(it, t, n, rows);
        leaf()->list_add(rows, nr, p + (int64_t)t * k, k, ob);
    }
    cla_iter_skip(it, n);
}

/* Rows [lo, lo+n) of the result (ob: their n x k block) += pre[code]
 * over the groups with pre[q] but not wide[q] (wide: NULL for none; those
 * go by windows, below), thread-local iterators its[] (used for those
 * groups only). */
static void add_rows(const struct CMB *c, ClaIter *its, double **pre, const bool *wide, int64_t lo, int64_t n,
                     int64_t k, int32_t *codes, double *ob)
{
    bool fused = ddc1_fused(c, pre, lo, n, k, ob), k1 = false;
    for (int q = 0; q < c->ngroups; q++) {
        if (!pre[q] || (wide && wide[q])) continue;
        const double *p = pre[q];
        const ClaGroup *g = c->groups[q];
        if (fused && g->enc == CLA_DDC1) {
            cla_iter_skip(&its[q], n);
            continue;
        }
        if (k == 1 && (g->enc == CLA_DDC1 || g->enc == CLA_DDC2)) {   /* all of them at the first */
            if (!k1) ddc_gather_k1(c, its, pre, wide, lo, n, ob);
            k1 = true;
            continue;
        }
        if (g->enc == CLA_OLE || g->enc == CLA_RLE) {   /* the listed rows only (codes as a row buffer) */
            list_rows_add(g, &its[q], p, n, k, codes, ob);
            continue;
        }
        if (g->enc == CLA_DDC1 || g->enc == CLA_DDC2) {   /* (k > 1: one column runs above) */
            ddc_add(g, lo, n, p, k, ob);
            cla_iter_skip(&its[q], n);
            continue;
        }
        cla_iter_next(&its[q], n, codes);
        if (k == 1) {
            for (int64_t i = 0; i < n; i++)
                if (codes[i] >= 0) ob[i] += p[codes[i]];
            continue;
        }
        for (int64_t i = 0; i < n; i++) {
            if (codes[i] < 0) continue;
            const double *pr = p + (int64_t)codes[i] * k;
            double *o = ob + i * k;
            for (int64_t cc = 0; cc < k; cc++) o[cc] += pr[cc];
        }
    }
}

static void free_pre(double **pre, int n)
{
    for (int q = 0; pre && q < n; q++) br_free_aligned(pre[q]);
    free(pre);
}

/* A dimension mismatch error of a %*% b (tl: t(a) %*% b) when bad. */
static bool dim_err(bool bad, bool tl, const MB *a, const MB *b, BrErr *e)
{
    if (bad)
        br_err(e, BR_EDIM, "dimension mismatch in matrix multiplication: %s%lldx%lld%s %%*%% %lldx%lld", tl ? "t(" : "",
               (long long)a->rows, (long long)a->cols, tl ? ")" : "", (long long)b->rows, (long long)b->cols);
    return bad;
}

/* The dense product r finished (non-zeros, format), or released with an
 * error when !ok. */
static MB *product_done(MB *r, bool ok, BrErr *e)
{
    if (!ok) {
        if (!e->code) br_err(e, BR_ENOMEM, "out of memory");
        mb_release(r);
        return NULL;
    }
    mb_recount_nnz(r);
    return mb_finish(r, e);
}

static bool rowwise(const MB *x, double **pre, int64_t k, double *out);

/* Rows per step of the row-wise and blocked column-wise products with k
 * result columns: a step's rows of results (or of b) stay about 64 KB,
 * in L2 while every group passes over them (at k = 16 CLA_BLK rows were
 * 256 KB, and each group's pass went to memory); k <= 2 (where the
 * one-column paths sum partially per step) keeps CLA_BLK. Per cell the
 * adds keep their order (groups in order; tuple sums by rows in order),
 * so the step does not change the bits. */
static int64_t step_rows(int64_t k) { return k <= 2 ? CLA_BLK : BR_MAX(256, BR_MIN(CLA_BLK, 8192 / k)); }

/* OLE/RLE groups by windows. Such a group pays per tuple and pass (its
 * lists' positions): where its tuples list a row or two per step (the
 * Airline-like table's two delay columns, co-coded: 899 tuples over 64%
 * of the rows, 1.5 rows a tuple in 2048), that cost was most of X %*% v,
 * t(X) %*% y and rowSums (0.31-0.37 of the dense kernels). Those groups
 * (wide[q]) go over windows of W rows instead, each window's results or
 * operand rows (W x k cells, at most LIST_CELLS: 512 KB) in L2 (Elgohary
 * et al.'s cache-conscious segments), W a multiple of the step st long
 * enough for LIST_ROWS rows a tuple on average where the cap allows.
 * W depends on the data and k only: the same bits for every thread
 * count. list_window: one group's window (st: not wide); list_windows:
 * wide[q] for each group with use[q] (use: NULL for all), and the
 * longest window. */
#define LIST_ROWS 16
#define LIST_CELLS 65536

static int64_t list_window(const ClaGroup *g, int64_t n, int64_t k, int64_t st)
{
    if ((g->enc != CLA_OLE && g->enc != CLA_RLE) || g->ndict == 0) return st;
    int64_t cap = BR_MAX(st, LIST_CELLS / BR_MAX(1, k) / st * st), listed = 0;
    for (int32_t t = 0; t < g->ndict; t++) listed += g->counts[t];
    double need = (double)LIST_ROWS * (double)g->ndict * (double)n / (double)BR_MAX(1, listed);
    if (need <= (double)st) return st;
    return need >= (double)cap ? cap : ((int64_t)need + st - 1) / st * st;
}

static int64_t list_windows(const struct CMB *c, int64_t n, int64_t k, int64_t st, double *const *use, bool *wide)
{
    int64_t w = st;
    for (int q = 0; q < c->ngroups; q++) {
        int64_t wq = use && !use[q] ? st : list_window(c->groups[q], n, k, st);
        wide[q] = wq > st;
        w = BR_MAX(w, wq);
    }
    return w;
}

MB *cla_matmul_right(const MB *x, const MB *b0, BrErr *e)
{
    if (dim_err(x->cols != b0->rows, false, x, b0, e)) return NULL;
    cla_stats_op("ba+*");
    MB *tb;
    const MB *b = dense_of(b0, &tb, e);
    if (!b) return NULL;
    const struct CMB *c = C(x);
    int64_t k = b->cols;
    /* r: the first dense product of a UNC group taken as it is (before,
     * a zeroed block took it by one more pass: X %*% B over a UNC group
     * ran at 0.6-0.75 of BLAS), else zeros */
    MB *r = NULL;
    double **pre = br_calloc((size_t)c->ngroups + 1, sizeof(double *));
    bool ok = pre != NULL;
    for (int q = 0; ok && q < c->ngroups; q++) {
        const ClaGroup *g = c->groups[q];
        if (g->enc == CLA_UNC) {
            MB *bs = rows_of(g, b, e), *p = bs ? k_matmul(g->unc, bs, e) : NULL;
            if (p && !p->sparse && !r) {
                r = p;
                p = NULL;
                mb_values_changed(r);   /* (the other groups add into it) */
            } else if (p && !r && !(r = mb_dense(x->rows, k, e))) {
                ok = false;
            } else if (p && !p->sparse) {
                for (int64_t i = 0; i < x->rows * k; i++) r->d[i] += p->d[i];
            } else if (p) {
                for (int64_t i = 0; i < p->rows; i++)
                    for (int64_t q2 = p->rp[i]; q2 < p->rp[i + 1]; q2++) r->d[i * k + p->ci[q2]] += p->v[q2];
            } else ok = false;
            mb_release(bs);
            mb_release(p);
        } else if (g->enc != CLA_EMPTY) {
            ok = (pre[q] = pre_mult(g, b)) != NULL;
        }
    }
    if (ok && !r && !(r = mb_dense(x->rows, k, e))) ok = false;
    if (ok) ok = rowwise(x, pre, k, r->d);
    if (ok) ok = cla_ieee_right(x, b, r->d);   /* 0 * Inf, 0 * NaN: unlisted rows, skipped zeros */
    free_pre(pre, c->ngroups);
    mb_release(tb);
    return product_done(r, ok, e);
}

/* ---- column-wise: t(x) %*% b ---- */

/* The sum of n contiguous values: eight partial sums (the order fixed by
 * n alone). */
static double run_sum(const double *v, int64_t n)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        s0 += v[i], s1 += v[i + 1], s2 += v[i + 2], s3 += v[i + 3];
        s4 += v[i + 4], s5 += v[i + 5], s6 += v[i + 6], s7 += v[i + 7];
    }
    for (; i < n; i++) s0 += v[i];
    return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
}

/* A[t] += the rows of tuple t among rows [lo, lo+len), whose k values
 * are bb[(i - lo) * k ..] (bb: the block of b's rows), group g's
 * iterator positioned at lo (codes: CLA_BLK scratch). */
static void tl_block(const ClaGroup *g, ClaIter *it, int64_t lo, int64_t len, const double *bb, int64_t k,
                     double *A, int32_t *codes)
{
    if (g->enc == CLA_RLE) {   /* by runs: contiguous rows of bb */
        for (int32_t t = 0; t < g->ndict; t++) {
            double *a = A + (int64_t)t * k;
            int64_t r0, r1;
            while (cla_iter_run(it, t, len, &r0, &r1)) {
                if (k == 1) {
                    a[0] += run_sum(bb + r0, r1 - r0);
                    continue;
                }
                for (int64_t r = r0; r < r1; r++)
#pragma omp simd
                    for (int64_t cc = 0; cc < k; cc++) a[cc] += bb[r * k + cc];
            }
        }
        cla_iter_skip(it, len);
        return;
    }
    if (g->enc == CLA_OLE) {
        for (int32_t t = 0; t < g->ndict; t++) {
            double *a = A + (int64_t)t * k;
            if (k == 1) {
                a[0] += cla_iter_sum1(it, t, len, bb);
                continue;
            }
            int64_t nr = cla_iter_rows(it, t, len, codes);
            leaf()->list_sum(codes, nr, bb, k, a);
        }
        cla_iter_skip(it, len);
        return;
    }
    if (k == 1 && (g->enc == CLA_DDC1 || g->enc == CLA_DDC2)) {
        ddc_scatter(g, lo, len, bb, A);
        cla_iter_skip(it, len);
        return;
    }
    if (g->enc == CLA_DDC1 || g->enc == CLA_DDC2) {
        const uint8_t *c1 = g->enc == CLA_DDC1 ? g->ix->c1 + lo : NULL;
        const uint16_t *c2 = g->enc == CLA_DDC2 ? g->ix->c2 + lo : NULL;
        leaf()->scatter(c1, c2, len, bb, k, A);
        cla_iter_skip(it, len);
        return;
    }
    cla_iter_next(it, len, codes);
    for (int64_t i = 0; i < len; i++) {
        if (codes[i] < 0) continue;
        const double *br = bb + i * k;
        double *a = A + (int64_t)codes[i] * k;
        for (int64_t cc = 0; cc < k; cc++) a[cc] += br[cc];
    }
}

/* out[cols of g, :] += dict^T A. */
static void tl_finish(const ClaGroup *g, const double *A, int64_t k, double *out)
{
    for (int32_t t = 0; t < g->ndict; t++)
        for (int j = 0; j < g->ncols; j++) {
            double v = g->dict[(int64_t)t * g->ncols + j];
            double *o = out + (int64_t)g->cols[j] * k;
            for (int64_t cc = 0; cc < k; cc++) o[cc] += v * A[(int64_t)t * k + cc];
        }
}

/* Joint codes of DDC groups (an extension of the per-code sums of
 * Elgohary et al.): t(x) %*% b does one scatter add per row and group,
 * A[code] += b[row], which does not vectorize and was bound by the adds
 * (2.2x the dense kernel's time). DDC groups (in group order) whose
 * dictionaries multiply to at most TL_JOINT tuples (times k) form a
 * bundle: the row's joint code (mixed radix over the members' codes,
 * computed a block at a time by a loop that vectorizes) takes one
 * scatter add for all members into a joint table, and each member's A is
 * the table summed over the other members' codes, once at the end. */
#define TL_JOINT 4096   /* cells of a joint table (k each), L1-sized */
#define TL_JMAX 4       /* groups per bundle */

typedef struct TlBundle {
    int ng, q[TL_JMAX];      /* member groups, in group order */
    int64_t nd[TL_JMAX];     /* their tuples */
    int64_t jd;              /* joint tuples: the product */
    int64_t off;             /* the joint table's place among the sums */
} TlBundle;

/* Bundles of the DDC groups of c (k result columns), greedy in group
 * order; sole members are left to the per-group path (nb counts only
 * bundles of two or more). Returns the number of bundles. */
static int tl_bundles_of(const ClaLookGroup *gs, int ng, int64_t k, TlBundle *bs, bool *in_bundle)
{
    int nb = 0;
    TlBundle cur = {0};
    for (int q = 0; q <= ng; q++) {
        const ClaLookGroup *g = q < ng ? &gs[q] : NULL;
        bool cand = g && (g->enc == CLA_DDC1 || g->enc == CLA_DDC2) && g->ndict > 0 &&
                    (int64_t)g->ndict * k <= TL_JOINT;
        if (g && !cand) continue;   /* other groups do not end a bundle */
        bool fits = g && cur.ng < TL_JMAX && (cur.ng == 0 ? 1 : cur.jd) * g->ndict * k <= TL_JOINT;
        if (!fits && cur.ng >= 2) {
            bs[nb++] = cur;
            for (int m = 0; m < cur.ng; m++) in_bundle[cur.q[m]] = true;
        }
        if (!fits) cur.ng = 0;
        if (!g) break;
        if (cur.ng == 0) cur.jd = 1;
        cur.q[cur.ng] = q;
        cur.nd[cur.ng++] = g->ndict;
        cur.jd *= g->ndict;
    }
    return nb;
}

/* Group q of c as the lookup rule and the bundles see it (cla.h). */
static ClaLookGroup look_group(const struct CMB *c, int q, int64_t rows)
{
    const ClaGroup *g = c->groups[q];
    ClaLookGroup l = {(int32_t)g->enc, g->ndict, g->ncols, 1};
    if ((g->enc == CLA_OLE || g->enc == CLA_RLE) && rows > 0) {   /* only the listed rows */
        int64_t listed = 0;
        for (int32_t t = 0; t < g->ndict; t++) listed += g->counts[t];
        l.listed = (double)listed / (double)rows;
    }
    return l;
}

int cla_look_groups(const MB *x) { return x->cmb ? x->cmb->ngroups : 0; }

void cla_look_fill(const MB *x, ClaLook *l, ClaLookGroup *g)
{
    const struct CMB *c = C(x);
    for (int q = 0; q < c->ngroups; q++) g[q] = look_group(c, q, x->rows);
    *l = (ClaLook){x->rows, x->cols, c->ngroups, g};
}

/* tl_bundles_of over c's groups; -1 without memory. */
static int tl_bundles(const struct CMB *c, int64_t k, TlBundle *bs, bool *in_bundle)
{
    ClaLookGroup *g = br_malloc(((size_t)c->ngroups + 1) * sizeof *g);
    if (!g) return -1;
    for (int q = 0; q < c->ngroups; q++) g[q] = look_group(c, q, 0);
    int nb = tl_bundles_of(g, c->ngroups, k, bs, in_bundle);
    free(g);
    return nb;
}

/* The joint codes of rows [lo, lo+n) of a bundle: idx[i] = sum over the
 * members of code * (product of the later members' tuples). */
static void joint_codes(const struct CMB *c, const TlBundle *bd, int64_t lo, int64_t n, uint16_t *idx)
{
    for (int m = 0; m < bd->ng; m++) {
        const ClaGroup *g = c->groups[bd->q[m]];
        uint16_t w = (uint16_t)bd->nd[m];
        /* omp simd: vectorized at -O2 too (integer work, exact) */
        if (g->enc == CLA_DDC1) {
            const uint8_t *cd = g->ix->c1 + lo;
            if (m == 0) {
#pragma omp simd
                for (int64_t i = 0; i < n; i++) idx[i] = cd[i];
            } else {
#pragma omp simd
                for (int64_t i = 0; i < n; i++) idx[i] = (uint16_t)(idx[i] * w + cd[i]);
            }
        } else {
            const uint16_t *cd = g->ix->c2 + lo;
            if (m == 0) {
                memcpy(idx, cd, (size_t)n * sizeof(uint16_t));
            } else {
#pragma omp simd
                for (int64_t i = 0; i < n; i++) idx[i] = (uint16_t)(idx[i] * w + cd[i]);
            }
        }
    }
}

/* J[idx[i]] += b's row lo + i (k columns). With one column and a table of
 * at most 256 entries (frequent repeats): partial tables. */
static void joint_scatter(const uint16_t *idx, int64_t n, const double *b, int64_t k, int64_t jd, double *J)
{
    if (k == 1 && jd <= 256 && jd * 16 <= n) {
        scatter4_uint16_t(idx, n, b, jd, J);
    } else if (k == 1) {
        for (int64_t i = 0; i < n; i++) J[idx[i]] += b[i];
    } else {
        leaf()->scatter(NULL, idx, n, b, k, J);
    }
}

/* Each member's per-tuple sums from the joint table: A_m[code_m] += J[u]
 * over the joint codes u (code_m = u / (later tuples) mod nd_m). */
static void joint_split(const TlBundle *bd, const double *J, int64_t k, double *const *Am)
{
    for (int64_t u = 0; u < bd->jd; u++) {
        int64_t r = u;
        for (int m = bd->ng - 1; m >= 0; m--) {
            int64_t code = r % bd->nd[m];
            r /= bd->nd[m];
            double *a = Am[m] + code * k;
            for (int64_t cc = 0; cc < k; cc++) a[cc] += J[u * k + cc];
        }
    }
}

/* Per-tuple sums of t(x) %*% q (k columns): group q's at off[q] (every
 * compressed group, bundle members included), then each bundle's joint
 * table at bs[j].off; tot in all. */
typedef struct TlSums {
    int nbd;
    TlBundle *bs;
    bool *bundled;
    int64_t *off, tot;
} TlSums;

static void tl_sums_free(TlSums *s) { free(s->bs), free(s->bundled), free(s->off); }

static bool tl_sums(const struct CMB *c, int64_t k, TlSums *s)
{
    memset(s, 0, sizeof *s);
    s->bs = br_malloc(((size_t)c->ngroups + 1) * sizeof(TlBundle));
    s->bundled = br_calloc((size_t)c->ngroups + 1, sizeof(bool));
    s->off = br_calloc((size_t)c->ngroups + 1, sizeof(int64_t));
    if (!s->bs || !s->bundled || !s->off) return false;
    if ((s->nbd = tl_bundles(c, k, s->bs, s->bundled)) < 0) {
        s->nbd = 0;
        return false;
    }
    for (int q = 0; q < c->ngroups; q++) {
        const ClaGroup *g = c->groups[q];
        s->off[q] = s->tot;
        if (g->enc != CLA_UNC && g->enc != CLA_EMPTY) s->tot += (int64_t)g->ndict * k;
    }
    for (int j = 0; j < s->nbd; j++) {
        s->bs[j].off = s->tot;
        s->tot += s->bs[j].jd * k;
    }
    return true;
}

/* out (ncol(x) x k) += the result of the summed per-tuple sums A (the
 * bundles' joint tables split into their members' sums first) and of the
 * UNC groups' sums U (ncol(x) x k, only their columns read; NULL: the
 * caller's). */
static void tl_sums_finish(const struct CMB *c, const TlBundle *bs, int nbd, const int64_t *off, double *A,
                           const double *U, int64_t k, double *out)
{
    for (int j = 0; j < nbd; j++) {
        double *Am[TL_JMAX];
        for (int m = 0; m < bs[j].ng; m++) Am[m] = A + off[bs[j].q[m]];
        joint_split(&bs[j], A + bs[j].off, k, Am);
    }
    for (int q = 0; q < c->ngroups; q++) {
        const ClaGroup *g = c->groups[q];
        if (g->enc == CLA_UNC && U)
            for (int j = 0; j < g->ncols; j++)
                for (int64_t cc = 0; cc < k; cc++) out[(int64_t)g->cols[j] * k + cc] += U[(int64_t)g->cols[j] * k + cc];
        else if (g->enc != CLA_EMPTY) tl_finish(g, A + off[q], k, out);
    }
}

/* Up to 4 DDC2 groups with one column of b: A_m[code of row i] += v[i]
 * for each, in one pass (v read once; the sums of a pass per group, the
 * same bits: each group's own table, rows in order). */
static void ddc2_scatter4(const uint16_t *const *cd, double *const *a, int m, int64_t n, const double *v)
{
    switch (m) {
    case 4:
        for (int64_t i = 0; i < n; i++) {
            double x = v[i];
            a[0][cd[0][i]] += x, a[1][cd[1][i]] += x, a[2][cd[2][i]] += x, a[3][cd[3][i]] += x;
        }
        break;
    case 3:
        for (int64_t i = 0; i < n; i++) {
            double x = v[i];
            a[0][cd[0][i]] += x, a[1][cd[1][i]] += x, a[2][cd[2][i]] += x;
        }
        break;
    case 2:
        for (int64_t i = 0; i < n; i++) {
            double x = v[i];
            a[0][cd[0][i]] += x, a[1][cd[1][i]] += x;
        }
        break;
    default:
        for (int64_t i = 0; i < n; i++) a[0][cd[0][i]] += v[i];
        break;
    }
}

/* Every DDC2 group, and every DDC1 group taking partial tables, not
 * bundled or by windows, with one column of b: 4 of one width to a pass
 * (ddc1_scatter4, ddc2_scatter4), whether or not they are adjacent in
 * group order (a pass per group, t(X) %*% y over 16 DDC2 columns ran at
 * 0.43-0.54 of the dense kernel; the Airline-like table's DDC groups
 * alternate in width), their iterators moved past the rows. */
static bool scatter_k1(const ClaGroup *g, int64_t n) { return g->enc == CLA_DDC2 || ddc1_partial(g, n); }

static void ddc_scatter_k1(const struct CMB *c, const bool *bundled, const bool *wide, ClaIter *its,
                           const int64_t *off, int64_t lo, int64_t n, const double *v, double *A)
{
    for (int w = 1; w <= 2; w++) {
        const uint8_t *c1[4];
        const uint16_t *c2[4];
        double *a[4];
        int32_t nd[4];
        int m = 0;
        for (int q = 0; q <= c->ngroups; q++) {
            const ClaGroup *g = q < c->ngroups ? c->groups[q] : NULL;
            if (g && !bundled[q] && !wide[q] && (w == 1 ? ddc1_partial(g, n) : g->enc == CLA_DDC2)) {
                if (w == 1) c1[m] = g->ix->c1 + lo;
                else c2[m] = g->ix->c2 + lo;
                nd[m] = g->ndict;
                a[m++] = A + off[q];
                cla_iter_skip(&its[q], n);
            }
            if (m == 4 || (!g && m > 0)) {
                if (w == 1) ddc1_scatter4(c1, a, nd, m, n, v);
                else ddc2_scatter4(c2, a, m, n, v);
                m = 0;
            }
        }
    }
}

/* Cache-conscious t(x) %*% b over the compressed groups (Elgohary et
 * al.'s blocking): TL_PARTS fixed row ranges (results independent of the
 * thread count), each reading its block of b's rows once for all groups
 * (in L1/L2) into per-range per-tuple sums, added to the total in range
 * order; false when out of memory. Groups one at a time would read all of
 * b once per group; bundles of DDC groups share one pass (above). Each
 * thread sums its ranges into one table of its own, added to the total
 * and cleared after each range (a table per range cost, over DDC2 groups
 * of 1000-4000 tuples at k = 8, 20 MB of fresh pages each call: t(X) %*%
 * Y ran at 0.14-0.45 of the dense kernel; at k = 16 the tables passed
 * TL_MAX_CELLS and each group read all of b). */
#define TL_PARTS 8
#define TL_MAX_CELLS (1 << 22)   /* per-tuple sums of all threads, at most */

static bool tl_blocked(const MB *x, const MB *b, double *out)
{
    const struct CMB *c = C(x);
    int64_t n = x->rows, k = b->cols;
    TlSums s;
    if (!tl_sums(c, k, &s)) {
        tl_sums_free(&s);
        return false;
    }
    const int64_t tot = s.tot, *off = s.off;
    const bool *bundled = s.bundled;
    const TlBundle *bs = s.bs;
    const int nbd = s.nbd;
    int64_t nb = (n + CLA_BLK - 1) / CLA_BLK, np = BR_MAX(1, BR_MIN(TL_PARTS, nb));
    const bool par = br_par((double)(n * c->ngroups));
    int nt = par ? (int)BR_MIN(br_threads(), np) : 1;
    const int64_t st = step_rows(k);   /* (the same for every range) */
    bool *wide = br_calloc((size_t)c->ngroups + 1, sizeof(bool));
    const int64_t W = wide ? list_windows(c, n, k, st, NULL, wide) : st;
    /* A: the total, then one table per thread */
    double *A = wide && tot * (nt + 1) <= TL_MAX_CELLS ? br_calloc((size_t)(tot * (nt + 1)) + 1, sizeof(double)) : NULL;
    bool ok = A != NULL;
#pragma omp parallel num_threads(nt) if (ok && nt > 1)
    {
        int tid = 0;
#ifdef _OPENMP
        tid = omp_get_thread_num();
#endif
        double *Ap = A ? A + (int64_t)(tid + 1) * tot : NULL;
        ClaIter *its = br_calloc((size_t)c->ngroups + 1, sizeof(ClaIter));
        int32_t *codes = br_malloc((size_t)W * sizeof(int32_t));
        uint16_t *jc = br_malloc(CLA_BLK * sizeof(uint16_t));
        bool mine = ok && its && codes && jc;
#pragma omp for ordered schedule(static, 1)
        for (int64_t pi = 0; pi < np; pi++) {
            int64_t a = nb * pi / np * CLA_BLK, z = BR_MIN(n, nb * (pi + 1) / np * CLA_BLK);
            for (int q = 0; mine && q < c->ngroups; q++) {
                const ClaGroup *g = c->groups[q];
                if (g->enc != CLA_UNC && g->enc != CLA_EMPTY && !bundled[q] && !cla_iter_init(&its[q], g, a)) mine = false;
            }
            for (int64_t w0 = a; mine && w0 < z; w0 += W) {
                int64_t wz = BR_MIN(z, w0 + W);
                for (int64_t lo = w0; lo < wz; lo += st) {
                    int64_t len = BR_MIN(st, wz - lo);
                    for (int j = 0; j < nbd; j++) {
                        joint_codes(c, &bs[j], lo, len, jc);
                        joint_scatter(jc, len, b->d + lo * k, k, bs[j].jd, Ap + bs[j].off);
                    }
                    bool k1 = false;
                    for (int q = 0; q < c->ngroups; q++) {
                        const ClaGroup *g = c->groups[q];
                        if (g->enc == CLA_UNC || g->enc == CLA_EMPTY || bundled[q] || wide[q]) continue;
                        if (k == 1 && scatter_k1(g, len)) {   /* all of them at the first */
                            if (!k1) ddc_scatter_k1(c, bundled, wide, its, off, lo, len, b->d + lo, Ap);
                            k1 = true;
                            continue;
                        }
                        tl_block(g, &its[q], lo, len, b->d + lo * k, k, Ap + off[q], codes);
                    }
                }
                for (int q = 0; q < c->ngroups; q++)   /* the window's rows at once */
                    if (wide[q]) tl_block(c->groups[q], &its[q], w0, wz - w0, b->d + w0 * k, k, Ap + off[q], codes);
            }
            for (int q = 0; its && q < c->ngroups; q++) cla_iter_free(&its[q]);
#pragma omp ordered
            if (mine) {   /* the ranges' sums in range order: the bits of every thread count */
                for (int64_t i = 0; i < tot; i++) A[i] += Ap[i];
                memset(Ap, 0, (size_t)tot * sizeof(double));
            }
        }
        free(its);
        free(codes);
        free(jc);
        if (!mine) {
#pragma omp atomic write
            ok = false;
        }
    }
    if (ok) tl_sums_finish(c, bs, nbd, off, A, NULL, k, out);   /* (UNC groups: the caller) */
    free(A);
    free(wide);
    tl_sums_free(&s);
    return ok;
}

static bool group_tl(const ClaGroup *g, int64_t n, const MB *b, double *out, BrErr *e)
{
    int64_t k = b->cols;
    if (g->enc == CLA_EMPTY) return true;
    if (g->enc == CLA_UNC) {
        MB *p = k_matmul_tl(g->unc, b, e);
        if (!p) return false;
        for (int j = 0; j < g->ncols; j++)
            for (int64_t cc = 0; cc < k; cc++) out[(int64_t)g->cols[j] * k + cc] += mb_get(p, j, cc);
        mb_release(p);
        return true;
    }
    const int64_t W = list_window(g, n, k, CLA_BLK);
    double *A = br_calloc((size_t)g->ndict * (size_t)k + 1, sizeof(double));
    int32_t *codes = br_malloc((size_t)W * sizeof(int32_t));
    ClaIter it;
    bool ok = A && codes && cla_iter_init(&it, g, 0);
    if (ok) {
        for (int64_t lo = 0; lo < n; lo += W) tl_block(g, &it, lo, BR_MIN(W, n - lo), b->d + lo * k, k, A, codes);
        cla_iter_free(&it);
        tl_finish(g, A, k, out);
    }
    free(A);
    free(codes);
    if (!ok) br_err(e, BR_ENOMEM, "out of memory");
    return ok;
}

MB *cla_matmul_tl(const MB *x, const MB *b0, BrErr *e)
{
    if (dim_err(x->rows != b0->rows, true, x, b0, e)) return NULL;
    cla_stats_op("tmm");
    MB *tb;
    const MB *b = dense_of(b0, &tb, e);
    if (!b) return NULL;
    const struct CMB *c = C(x);
    MB *r = mb_dense(x->cols, b->cols, e);
    bool ok = r != NULL;
    /* several compressed groups: blocked over rows (UNC groups below) */
    bool blocked = ok && c->ngroups > 1 && tl_blocked(x, b, r->d);
    /* else groups write disjoint rows of r: parallel over groups */
    const bool par = ok && br_par((double)(x->rows * c->ngroups));
#pragma omp parallel for num_threads(br_threads()) if (par) schedule(dynamic, 1)
    for (int q = 0; q < c->ngroups; q++) {
        BrErr le = {0};
        if (blocked && c->groups[q]->enc != CLA_UNC) continue;
        if (ok && !group_tl(c->groups[q], x->rows, b, r->d, &le)) {
#pragma omp critical(cla_err)
            {
                if (ok) *e = le;
                ok = false;
            }
        }
    }
    if (ok && !cla_ieee_tl(x, b, r->d)) {   /* 0 * Inf, 0 * NaN hidden in per-tuple sums */
        br_err(e, BR_ENOMEM, "out of memory");
        ok = false;
    }
    mb_release(tb);
    if (!ok) {
        mb_release(r);
        return NULL;
    }
    mb_recount_nnz(r);
    return mb_finish(r, e);
}

/* t(sel) %*% x for a sparse sel (nrow(x) x k; sel[r, i] = v): the rows r
 * of x that sel selects, in ascending order, by blocks of CLA_BLK rows
 * (whole blocks where many rows are selected, single rows elsewhere),
 * each added v times into output row i (kmeans++'s table(seq, idx) %*% X,
 * kmeans' t(P) %*% X). Only sel's non-zeros meet x; the callers mark
 * sel's zeros meeting NaN/Inf of x (k_mm_ieee_zeros, as k_matmul). */
/* Output rows += v times row `row` of x (at buf) for sel's non-zeros of
 * that row. */
static void gather_add(const MB *sel, int64_t row, const double *buf, int64_t m, double *out)
{
    for (int64_t p = sel->rp[row]; p < sel->rp[row + 1]; p++) {
        double *o = out + (int64_t)sel->ci[p] * m, v = sel->v[p];
        for (int64_t j = 0; j < m; j++) o[j] += v * buf[j];
    }
}

/* Selected rows per CLA_BLK block from which the whole block is read
 * (sequentially, as in decompression); fewer are read one by one. */
#define GATHER_BLOCK_MIN 8

static MB *gather_rows(const MB *sel, const MB *x, BrErr *e)
{
    int64_t m = x->cols, n = x->rows;
    MB *r = mb_dense(sel->cols, m, e);
    double *buf = br_malloc(((size_t)CLA_BLK * (size_t)m + 1) * sizeof(double));
    bool ok = r && buf;
    ClaRows *rd = NULL;
    int64_t pos = -1;   /* the block reader's next row */
    for (int64_t lo = 0; ok && lo < n; lo += CLA_BLK) {
        int64_t hi = BR_MIN(n, lo + CLA_BLK), nsel = 0;
        for (int64_t i = lo; i < hi; i++) nsel += sel->rp[i + 1] > sel->rp[i];
        if (nsel == 0) continue;
        if (nsel < GATHER_BLOCK_MIN) {   /* a reader per selected row */
            for (int64_t i = lo; ok && i < hi; i++) {
                if (sel->rp[i + 1] == sel->rp[i]) continue;
                ClaRows *one = cla_rows_open(x, i);
                if (!(ok = one != NULL)) break;
                cla_rows_read(one, 1, buf);
                cla_rows_close(one);
                gather_add(sel, i, buf, m, r->d);
            }
            continue;
        }
        if (!rd || pos != lo) {
            cla_rows_close(rd);
            if (!(ok = (rd = cla_rows_open(x, lo)) != NULL)) break;
        }
        cla_rows_read(rd, hi - lo, buf);
        pos = hi;
        for (int64_t i = lo; i < hi; i++)
            if (sel->rp[i + 1] > sel->rp[i]) gather_add(sel, i, buf + (i - lo) * m, m, r->d);
    }
    cla_rows_close(rd);
    free(buf);
    return product_done(r, ok, e);
}

MB *cla_matmul_tl_left(const MB *a, const MB *x, BrErr *e)
{
    if (dim_err(a->rows != x->rows, true, a, x, e)) return NULL;
    cla_stats_op("tmm");
    if (a->sparse) return k_mm_ieee_zeros(a, true, x, false, gather_rows(a, x, e), e);   /* as k_matmul_tl */
    MB *p = cla_matmul_tl(x, a, e), *r = p ? k_transpose(p, e) : NULL;
    mb_release(p);
    return r;
}

MB *cla_matmul_left(const MB *a, const MB *x, BrErr *e)
{
    if (dim_err(a->cols != x->rows, false, a, x, e)) return NULL;
    if (a->sparse) {   /* its non-zeros only, then IEEE's 0 * NaN, as k_matmul */
        MB *at = k_transpose(a, e), *r = NULL;   /* (the transpose may come out dense) */
        if (at && (at->sparse || !mb_make_sparse(at, e))) r = gather_rows(at, x, e);
        mb_release(at);
        return k_mm_ieee_zeros(a, false, x, false, r, e);
    }
    MB *at = k_transpose(a, e), *p = at ? cla_matmul_tl(x, at, e) : NULL;
    MB *r = p ? k_transpose(p, e) : NULL;
    mb_release(at);
    mb_release(p);
    return r;
}

/* ---- mmchain: t(x) %*% (w * (x %*% v)) in one pass ----
 * Per block of CLA_BLK rows: q = the block of x %*% v (per-tuple dot
 * products pre[q] gathered by code), q *= w, and q's rows added into the
 * per-tuple sums of t(x) %*% q, while the block's codes are in L1 and q
 * in registers or L1 (the two products apart wrote q, read it for w *,
 * wrote it again and read it, and read every code twice from memory).
 * A bundle of DDC groups (as t(x) %*% b bundles them) takes one joint
 * code per row for both steps: its pre-table is the members' pre-tables
 * summed per joint tuple, so the row-wise step is one gather per bundle
 * instead of one per group. Fixed row ranges as tl_blocked: the same
 * bits for every thread count. */

/* The bundle's pre-table: Pb[u] = sum over members m of pre[m][code_m(u)]
 * (k values each). */
static void joint_pre(const TlBundle *bd, double **pre, int64_t k, double *Pb)
{
    for (int64_t u = 0; u < bd->jd; u++) {
        int64_t r = u;
        for (int m = bd->ng - 1; m >= 0; m--) {
            int64_t code = r % bd->nd[m];
            r /= bd->nd[m];
            if (!pre[bd->q[m]]) continue;   /* a group without results adds 0 */
            const double *p = pre[bd->q[m]] + code * k;
            for (int64_t cc = 0; cc < k; cc++) Pb[u * k + cc] += p[cc];
        }
    }
}

/* Bundles of DDC groups for a row-wise pass with per-tuple results pre
 * (k values): the bundles (as t(x) %*% b forms them), their pre-tables
 * (the members' summed per joint tuple) and pre without the members. */
typedef struct RowBundles {
    int nbd;
    TlBundle *bs;
    bool *bundled;
    double **pb;     /* per bundle: jd x k */
    double **pre;    /* pre, members NULL (borrowed entries) */
} RowBundles;

static void row_bundles_free(RowBundles *rb)
{
    free_pre(rb->pb, rb->nbd);
    free(rb->bs), free(rb->bundled), free(rb->pre);
}

static bool row_bundles(const struct CMB *c, double **pre, int64_t k, RowBundles *rb)
{
    memset(rb, 0, sizeof *rb);
    rb->bs = br_malloc(((size_t)c->ngroups + 1) * sizeof(TlBundle));
    rb->bundled = br_calloc((size_t)c->ngroups + 1, sizeof(bool));
    rb->pre = br_calloc((size_t)c->ngroups + 1, sizeof(double *));
    rb->pb = br_calloc((size_t)c->ngroups + 1, sizeof(double *));
    if (!rb->bs || !rb->bundled || !rb->pre || !rb->pb) return false;
    if ((rb->nbd = tl_bundles(c, k, rb->bs, rb->bundled)) < 0) {
        rb->nbd = 0;
        return false;
    }
    for (int q = 0; q < c->ngroups; q++) rb->pre[q] = rb->bundled[q] ? NULL : pre[q];
    for (int j = 0; j < rb->nbd; j++) {
        if (!(rb->pb[j] = br_calloc_aligned((size_t)(rb->bs[j].jd * k) * sizeof(double)))) return false;
        joint_pre(&rb->bs[j], pre, k, rb->pb[j]);
    }
    return true;
}

/* ob (rows [lo, lo+n), k columns) += each bundle's pre-table at the
 * rows' joint codes, kept in jc (bundle j's at jc + j * js) for a later
 * step. */
static void bundle_gather(const struct CMB *c, const RowBundles *rb, int64_t lo, int64_t n, int64_t k, uint16_t *jc,
                          int64_t js, double *ob)
{
    for (int j = 0; j < rb->nbd; j++) {
        uint16_t *jj = jc + (int64_t)j * js;
        const double *P = rb->pb[j];
        joint_codes(c, &rb->bs[j], lo, n, jj);
        leaf()->gather(NULL, jj, n, P, k, ob);
    }
}

/* out (n x k) += rows of the compressed groups, with per-group row
 * contributions pre[q] (ndict x k each), in parallel over row ranges;
 * bundles of DDC groups through their joint codes (one gather per bundle
 * and row instead of one per group). */
static bool rowwise(const MB *x, double **pre0, int64_t k, double *out)
{
    const struct CMB *c = C(x);
    int64_t n = x->rows;
    RowBundles rb;
    bool ok = row_bundles(c, pre0, k, &rb);
    double **pre = rb.pre;
    int nt = ok && br_par((double)(n * k * c->ngroups)) ? br_threads() : 1;
    int64_t nb = (n + CLA_BLK - 1) / CLA_BLK;
    const int64_t st = step_rows(k);   /* (the same for every thread) */
    bool *wide = br_calloc((size_t)c->ngroups + 1, sizeof(bool));
    ok = ok && wide;
    const int64_t W = ok ? list_windows(c, n, k, st, pre, wide) : st;
#pragma omp parallel num_threads(nt) if (ok && nt > 1)
    {
        int tid = 0, th = 1;
#ifdef _OPENMP
        tid = omp_get_thread_num();
        th = omp_get_num_threads();
#endif
        int64_t a = nb * tid / th * CLA_BLK, b = nb * (tid + 1) / th * CLA_BLK;
        if (b > n) b = n;
        ClaIter *its = br_calloc((size_t)c->ngroups + 1, sizeof(ClaIter));
        int32_t *codes = br_malloc((size_t)W * sizeof(int32_t));
        uint16_t *jc = br_malloc(((size_t)rb.nbd * CLA_BLK + 1) * sizeof(uint16_t));
        bool mine = ok && its && codes && jc;
        for (int q = 0; mine && q < c->ngroups; q++)
            if (pre[q] && !cla_iter_init(&its[q], c->groups[q], a)) mine = false;
        if (!mine) {
#pragma omp atomic write
            ok = false;
        }
        for (int64_t w0 = a; mine && w0 < b; w0 += W) {
            int64_t wz = BR_MIN(b, w0 + W);
            for (int64_t lo = w0; lo < wz; lo += st) {
                int64_t len = BR_MIN(st, wz - lo);
                bundle_gather(c, &rb, lo, len, k, jc, CLA_BLK, out + lo * k);
                add_rows(c, its, pre, wide, lo, len, k, codes, out + lo * k);
            }
            for (int q = 0; q < c->ngroups; q++)   /* the window's rows at once */
                if (wide[q]) list_rows_add(c->groups[q], &its[q], pre[q], wz - w0, k, codes, out + w0 * k);
        }
        for (int q = 0; its && q < c->ngroups; q++) cla_iter_free(&its[q]);
        free(its);
        free(codes);
        free(jc);
    }
    row_bundles_free(&rb);
    free(wide);
    return ok;
}

/* qb (n x k) += rows [lo, lo+n) of the UNC group g times v's rows at g's
 * columns. */
static void unc_right(const ClaGroup *g, const MB *v, int64_t lo, int64_t n, double *qb)
{
    const MB *u = g->unc;
    int64_t k = v->cols;
    for (int64_t i = 0; i < n; i++) {
        double *o = qb + i * k;
        if (u->sparse) {
            for (int64_t p = u->rp[lo + i]; p < u->rp[lo + i + 1]; p++) {
                const double *vr = v->d + (int64_t)g->cols[u->ci[p]] * k;
                for (int64_t cc = 0; cc < k; cc++) o[cc] += u->v[p] * vr[cc];
            }
            continue;
        }
        const double *ur = u->d + (lo + i) * g->ncols;
        for (int j = 0; j < g->ncols; j++) {
            const double *vr = v->d + (int64_t)g->cols[j] * k;
            for (int64_t cc = 0; cc < k; cc++) o[cc] += ur[j] * vr[cc];
        }
    }
}

/* U[cols of g, :] += t(rows [lo, lo+n) of the UNC group g) %*% qb. */
static void unc_tl(const ClaGroup *g, int64_t lo, int64_t n, const double *qb, int64_t k, double *U)
{
    const MB *u = g->unc;
    for (int64_t i = 0; i < n; i++) {
        const double *qr = qb + i * k;
        if (u->sparse) {
            for (int64_t p = u->rp[lo + i]; p < u->rp[lo + i + 1]; p++) {
                double *o = U + (int64_t)g->cols[u->ci[p]] * k;
                for (int64_t cc = 0; cc < k; cc++) o[cc] += u->v[p] * qr[cc];
            }
            continue;
        }
        const double *ur = u->d + (lo + i) * g->ncols;
        for (int j = 0; j < g->ncols; j++) {
            double *o = U + (int64_t)g->cols[j] * k;
            for (int64_t cc = 0; cc < k; cc++) o[cc] += ur[j] * qr[cc];
        }
    }
}

/* ---- rows of x %*% b for any range (cla.h, cla_rowmm_*) ---- */

/* The row width the row-wise lookups (cla_rowmm_*, cla_rowtl_*) work in
 * for k result columns: whole vectors (2, 4, multiples of 8), the pad
 * columns zero. The leaf's gathers and scatters then add a table row as
 * one or two vector adds; at k = 5 (kmeans' five centroids) they were
 * five dependent scalar adds per row and group, the loop not unrolled,
 * and the lookups took about 3x the CPU of the dense row code they
 * replace (docs/cla.md). The pads are dropped on the way out. */
static int64_t pad_k(int64_t k) { return k <= 2 ? k : k <= 4 ? 4 : (k + 7) / 8 * 8; }

/* The n x kp rows at src into n x k rows at dst (dst += src: add). */
static void unpad_rows(const double *src, int64_t n, int64_t kp, int64_t k, bool add, double *dst)
{
    if (add)
        for (int64_t i = 0; i < n; i++)
            for (int64_t c = 0; c < k; c++) dst[i * k + c] += src[i * kp + c];
    else
        for (int64_t i = 0; i < n; i++)
            for (int64_t c = 0; c < k; c++) dst[i * k + c] = src[i * kp + c];
}

struct ClaRowMM {
    const MB *x, *b;
    int64_t k, kp;           /* b's columns; the padded width (pad_k) */
    MB *bp;                  /* b padded to kp columns (NULL: kp == k) */
    double **pre;            /* per group: ndict x kp (NULL: UNC, EMPTY) */
    RowBundles rb;
};

struct ClaRowMMCur {
    const ClaRowMM *p;
    int64_t row;
    ClaIter *its;
    int32_t *codes;
    uint16_t *jc;
    double *ob;              /* CLA_BLK x kp rows (kp != k) */
};

void cla_rowmm_free(ClaRowMM *p)
{
    if (!p) return;
    free_pre(p->pre, C(p->x)->ngroups);
    row_bundles_free(&p->rb);
    mb_release(p->bp);
    free(p);
}

ClaRowMM *cla_rowmm_new(const MB *x, const MB *b, BrErr *e)
{
    const struct CMB *c = C(x);
    ClaRowMM *p = br_calloc(1, sizeof *p);
    if (!p) { br_err(e, BR_ENOMEM, "out of memory"); return NULL; }
    p->x = x;
    p->b = b;
    p->k = b->cols;
    p->kp = pad_k(p->k);
    bool ok = true;
    if (p->kp != p->k && (ok = (p->bp = mb_dense(b->rows, p->kp, e)) != NULL)) {
        for (int64_t i = 0; i < b->rows; i++)
            memcpy(p->bp->d + i * p->kp, b->d + i * p->k, (size_t)p->k * sizeof(double));
        mb_recount_nnz(p->bp);
        p->b = p->bp;
    }
    ok = ok && (p->pre = br_calloc((size_t)c->ngroups + 1, sizeof(double *))) != NULL;
    for (int q = 0; ok && q < c->ngroups; q++) {
        const ClaGroup *g = c->groups[q];
        if (g->enc != CLA_UNC && g->enc != CLA_EMPTY) ok = (p->pre[q] = pre_mult(g, p->b)) != NULL;
    }
    if (ok) ok = row_bundles(c, p->pre, p->kp, &p->rb);
    if (!ok) {
        cla_rowmm_free(p);
        br_err(e, BR_ENOMEM, "out of memory");
        return NULL;
    }
    return p;
}

int64_t cla_rowmm_passes(const ClaRowMM *p)
{
    const struct CMB *c = C(p->x);
    int64_t n = p->rb.nbd;
    for (int q = 0; q < c->ngroups; q++) {
        if (p->rb.pre[q]) n++;
        else if (c->groups[q]->enc == CLA_UNC) n += c->groups[q]->ncols;
    }
    return n;
}

void cla_rowmm_close(ClaRowMMCur *c)
{
    if (!c) return;
    for (int q = 0; c->its && q < C(c->p->x)->ngroups; q++) cla_iter_free(&c->its[q]);
    free(c->its), free(c->codes), free(c->jc), br_free_aligned(c->ob), free(c);
}

ClaRowMMCur *cla_rowmm_open(const ClaRowMM *p, int64_t row)
{
    const struct CMB *c = C(p->x);
    ClaRowMMCur *r = br_calloc(1, sizeof *r);
    if (!r) return NULL;
    r->p = p;
    r->row = row;
    r->its = br_calloc((size_t)c->ngroups + 1, sizeof(ClaIter));
    r->codes = br_malloc(CLA_BLK * sizeof(int32_t));
    r->jc = br_malloc(((size_t)p->rb.nbd * CLA_BLK + 1) * sizeof(uint16_t));
    bool ok = r->its && r->codes && r->jc;
    if (ok && p->kp != p->k) ok = (r->ob = br_alloc_aligned((size_t)(CLA_BLK * p->kp) * sizeof(double))) != NULL;
    for (int q = 0; ok && q < c->ngroups; q++)
        if (p->rb.pre[q] && !cla_iter_init(&r->its[q], c->groups[q], row)) ok = false;
    if (!ok) { cla_rowmm_close(r); return NULL; }
    return r;
}

void cla_rowmm_read(ClaRowMMCur *r, int64_t n, double *out)
{
    const ClaRowMM *p = r->p;
    const struct CMB *c = C(p->x);
    double *ob = r->ob ? r->ob : out;
    memset(ob, 0, (size_t)(n * p->kp) * sizeof(double));
    bundle_gather(c, &p->rb, r->row, n, p->kp, r->jc, CLA_BLK, ob);
    add_rows(c, r->its, p->rb.pre, NULL, r->row, n, p->kp, r->codes, ob);
    for (int q = 0; q < c->ngroups; q++)
        if (c->groups[q]->enc == CLA_UNC) unc_right(c->groups[q], p->b, r->row, n, ob);
    if (r->ob) unpad_rows(ob, n, p->kp, p->k, false, out);
    r->row += n;
}

/* ---- t(x) %*% q accumulated block by block (cla.h, cla_rowtl_*) ---- */

struct ClaRowTL {
    const MB *x;
    int64_t k, kp, row;      /* q's columns; the padded width (pad_k) */
    TlSums s;                /* (for kp columns) */
    ClaIter *its;
    int32_t *codes;
    uint16_t *jc;
    double *A, *U;           /* per-tuple sums (s.tot), UNC sums (ncol x kp) */
    double *qp, *F;          /* kp != k: q's block padded (CLA_BLK x kp) and
                                the finished sums (ncol x kp) */
};

int64_t cla_rowtl_passes(const MB *x, int64_t k)
{
    const struct CMB *c = C(x);
    TlSums s;
    int64_t n = -1;
    if (tl_sums(c, pad_k(k), &s)) {
        n = s.nbd;
        for (int q = 0; q < c->ngroups; q++) {
            const ClaGroup *g = c->groups[q];
            if (g->enc == CLA_UNC) n += g->ncols;
            else if (g->enc != CLA_EMPTY && !s.bundled[q]) n++;
        }
    }
    tl_sums_free(&s);
    return n < 0 ? INT64_MAX : n;
}

/* A table of more than this many bytes is read from beyond the near
 * caches (LOOK_AT: about 3x the time of a pass a cached table takes).
 * bench/bench_cla_look.c (results: bench/results/cla-look-20261201.txt):
 * per group at k = 8, the lookups of tables up to 1 MB cost 0.9-1.1x
 * their share of the same block's decompressed cells that tables up to
 * 256 KB cost (decompression slows as the dictionaries grow, as the
 * lookups do), those of 2 MB tables 2.3-6.7x; the plans of
 * rowSums(exp(X %*% B)) / rowSums(X^2) over 3 groups of 4 columns
 * (docs/cla.md) run faster looked up (unfused) at tables of 190 KB to
 * 2.5 MB; past 3 MB no such plan was timed. (It was 256 KB, from perf's
 * shares of kmeans' step.) */
#define LOOK_TABLE_NEAR ((int64_t)3 << 20)

double cla_look_cells(const ClaLook *l, int64_t k)
{
    int64_t kp = pad_k(k), vec = (kp + 7) / 8;
    double unit = kp <= 2 ? 1 : 2 * (double)vec, cost = 0;
    TlBundle *bs = br_malloc(((size_t)l->ng + 1) * sizeof *bs);
    bool *bundled = br_calloc((size_t)l->ng + 1, sizeof *bundled);
    if (!bs || !bundled) {
        free(bs), free(bundled);
        return INFINITY;
    }
    int nbd = tl_bundles_of(l->g, l->ng, kp, bs, bundled);
#define LOOK_AT(tuples) ((tuples) * kp * (int64_t)sizeof(double) > LOOK_TABLE_NEAR ? 3 * unit : unit)
    for (int j = 0; j < nbd; j++) cost += LOOK_AT(bs[j].jd);
    for (int q = 0; q < l->ng; q++) {
        const ClaLookGroup *g = &l->g[q];
        if (g->enc == CLA_UNC) cost += (double)g->ncols * (double)vec;
        else if (g->enc != CLA_EMPTY && !bundled[q]) cost += g->listed * LOOK_AT(g->ndict);
    }
#undef LOOK_AT
    free(bs), free(bundled);
    return cost;
}

double cla_row_cells(const ClaLook *l, int64_t wp, int64_t wt, bool read, bool *look)
{
    double m = (double)l->cols;
    double lk = (wp ? cla_look_cells(l, wp) : 0) + (wt ? cla_look_cells(l, wt) : 0) + (read ? m : 0);
    double rows = m + m * (double)(wp + wt) / 12;
    *look = lk < rows;
    return *look ? lk : rows;
}

bool cla_looks_pay(const ClaLook *l, int64_t wp, int64_t wt, bool read)
{
    bool look;
    cla_row_cells(l, wp, wt, read, &look);
    return look;
}

bool cla_row_looks_pay(const MB *x, int64_t wp, int64_t wt, bool read)
{
    ClaLook l;
    ClaLookGroup *g = br_malloc(((size_t)cla_look_groups(x) + 1) * sizeof *g);
    if (!g) return false;   /* decompressed rows: no tables to build */
    cla_look_fill(x, &l, g);
    bool pay = cla_looks_pay(&l, wp, wt, read);
    free(g);
    return pay;
}

int64_t cla_rowtl_cells(const MB *x, int64_t k)
{
    const struct CMB *c = C(x);
    TlSums s;
    int64_t n = tl_sums(c, pad_k(k), &s) ? s.tot + x->cols * pad_k(k) : INT64_MAX;
    tl_sums_free(&s);
    return n;
}

void cla_rowtl_free(ClaRowTL *t)
{
    if (!t) return;
    for (int q = 0; t->its && q < C(t->x)->ngroups; q++) cla_iter_free(&t->its[q]);
    tl_sums_free(&t->s);
    free(t->its), free(t->codes), free(t->jc), br_free_aligned(t->A), free(t->U), br_free_aligned(t->qp), free(t->F);
    free(t);
}

ClaRowTL *cla_rowtl_new(const MB *x, int64_t k, int64_t row)
{
    const struct CMB *c = C(x);
    ClaRowTL *t = br_calloc(1, sizeof *t);
    if (!t) return NULL;
    t->x = x;
    t->k = k;
    t->kp = pad_k(k);
    t->row = row;
    bool ok = tl_sums(c, t->kp, &t->s);
    if (ok) {
        t->its = br_calloc((size_t)c->ngroups + 1, sizeof(ClaIter));
        t->codes = br_malloc(CLA_BLK * sizeof(int32_t));
        t->jc = br_malloc(CLA_BLK * sizeof(uint16_t));
        t->A = br_calloc_aligned(((size_t)t->s.tot + 1) * sizeof(double));   /* rows of kp: whole lines */
        t->U = br_calloc((size_t)(x->cols * t->kp) + 1, sizeof(double));
        ok = t->its && t->codes && t->jc && t->A && t->U;
    }
    if (ok && t->kp != k) {
        /* the pads of q's rows stay zero */
        t->qp = br_calloc_aligned((size_t)(CLA_BLK * t->kp) * sizeof(double));
        t->F = br_malloc((size_t)(x->cols * t->kp + 1) * sizeof(double));
        ok = t->qp && t->F;
    }
    for (int q = 0; ok && q < c->ngroups; q++) {
        const ClaGroup *g = c->groups[q];
        if (g->enc != CLA_UNC && g->enc != CLA_EMPTY && !t->s.bundled[q] && !cla_iter_init(&t->its[q], g, row))
            ok = false;
    }
    if (!ok) { cla_rowtl_free(t); return NULL; }
    return t;
}

void cla_rowtl_add(ClaRowTL *t, int64_t n, const double *qb)
{
    const struct CMB *c = C(t->x);
    const TlSums *s = &t->s;
    int64_t k = t->k, kp = t->kp;
    if (t->qp) {
        for (int64_t i = 0; i < n; i++)
            for (int64_t c = 0; c < k; c++) t->qp[i * kp + c] = qb[i * k + c];
        qb = t->qp;
    }
    for (int j = 0; j < s->nbd; j++) {
        joint_codes(c, &s->bs[j], t->row, n, t->jc);
        joint_scatter(t->jc, n, qb, kp, s->bs[j].jd, t->A + s->bs[j].off);
    }
    for (int q = 0; q < c->ngroups; q++) {
        const ClaGroup *g = c->groups[q];
        if (g->enc == CLA_UNC) unc_tl(g, t->row, n, qb, kp, t->U);
        else if (g->enc != CLA_EMPTY && !s->bundled[q]) tl_block(g, &t->its[q], t->row, n, qb, kp, t->A + s->off[q], t->codes);
    }
    t->row += n;
}

void cla_rowtl_finish(ClaRowTL *t, double *out)
{
    if (!t->F) {
        tl_sums_finish(C(t->x), t->s.bs, t->s.nbd, t->s.off, t->A, t->U, t->k, out);
        return;
    }
    memset(t->F, 0, (size_t)(t->x->cols * t->kp) * sizeof(double));
    tl_sums_finish(C(t->x), t->s.bs, t->s.nbd, t->s.off, t->A, t->U, t->kp, t->F);
    unpad_rows(t->F, t->x->cols, t->kp, t->k, true, out);
}

/* The shared state of a fused chain. */
typedef struct Chain {
    const MB *x, *v, *w;
    int64_t k, tot;          /* result columns; per-range sums */
    RowBundles rb;           /* bundles; rb.pre: the other groups' */
    int64_t *off;            /* group q's sums at off[q] */
    bool *wide;              /* OLE/RLE groups by windows of W rows */
    int64_t W;
} Chain;

/* Rows [a, z) into the range's sums Ap (tot) and UNC sums Up (ncol(x) x
 * k), a window of W rows at a time: q's rows of the window (steps of
 * CLA_BLK, the wide groups over the whole window), then its sums.
 * Returns 1, 0 when q took a non-finite value (the caller falls back:
 * the zeros of x would have to meet it), -1 out of memory. */
static int chain_range(const Chain *ch, int64_t a, int64_t z, double *Ap, double *Up)
{
    const struct CMB *c = C(ch->x);
    const RowBundles *rb = &ch->rb;
    int64_t k = ch->k, wk = ch->w ? ch->w->cols : 0, W = ch->W;
    ClaIter *ir = br_calloc((size_t)c->ngroups + 1, sizeof(ClaIter));
    ClaIter *it = br_calloc((size_t)c->ngroups + 1, sizeof(ClaIter));
    int32_t *codes = br_malloc((size_t)W * sizeof(int32_t));
    uint16_t *jc = br_malloc(((size_t)(rb->nbd * W) + 1) * sizeof(uint16_t));
    double *qb = br_malloc((size_t)(W * k) * sizeof(double));
    int rc = ir && it && codes && jc && qb ? 1 : -1;
    for (int q = 0; rc > 0 && q < c->ngroups; q++)
        if (rb->pre[q] && (!cla_iter_init(&ir[q], c->groups[q], a) || !cla_iter_init(&it[q], c->groups[q], a))) rc = -1;
    for (int64_t w0 = a; rc > 0 && w0 < z; w0 += W) {
        int64_t len = BR_MIN(W, z - w0);
        memset(qb, 0, (size_t)(len * k) * sizeof(double));
        for (int64_t lo = w0; lo < w0 + len; lo += CLA_BLK) {
            int64_t sl = BR_MIN(CLA_BLK, w0 + len - lo);
            bundle_gather(c, rb, lo, sl, k, jc + (lo - w0), W, qb + (lo - w0) * k);
            add_rows(c, ir, rb->pre, ch->wide, lo, sl, k, codes, qb + (lo - w0) * k);
        }
        for (int q = 0; q < c->ngroups; q++) {
            if (ch->wide[q]) list_rows_add(c->groups[q], &ir[q], rb->pre[q], len, k, codes, qb);
            if (c->groups[q]->enc == CLA_UNC) unc_right(c->groups[q], ch->v, w0, len, qb);
        }
        if (ch->w && wk == 1) {
            const double *wr = ch->w->d + w0;
            for (int64_t i = 0; i < len; i++)
                for (int64_t cc = 0; cc < k; cc++) qb[i * k + cc] *= wr[i];
        } else if (ch->w) {
            const double *wr = ch->w->d + w0 * k;
            for (int64_t i = 0; i < len * k; i++) qb[i] *= wr[i];
        }
        double nf = 0;
#pragma omp simd reduction(+ : nf)
        for (int64_t i = 0; i < len * k; i++) nf += qb[i] * 0.0;
        if (nf != nf) {
            rc = 0;
            break;
        }
        for (int j = 0; j < rb->nbd; j++)
            joint_scatter(jc + (int64_t)j * W, len, qb, k, rb->bs[j].jd, Ap + rb->bs[j].off);
        for (int q = 0; q < c->ngroups; q++) {
            const ClaGroup *g = c->groups[q];
            if (g->enc == CLA_UNC) unc_tl(g, w0, len, qb, k, Up);
            else if (rb->pre[q]) tl_block(g, &it[q], w0, len, qb, k, Ap + ch->off[q], codes);
        }
    }
    for (int q = 0; q < c->ngroups; q++) {
        if (ir) cla_iter_free(&ir[q]);
        if (it) cla_iter_free(&it[q]);
    }
    free(ir), free(it), free(codes), free(jc), free(qb);
    return rc;
}

/* The fused chain into out (ncol(x) x k, zeroed): 1, 0 (not fused: too
 * many sums, or q not finite), -1 out of memory. */
static int chain_fused(const MB *x, const MB *v, const MB *w, double *out)
{
    const struct CMB *c = C(x);
    int64_t n = x->rows, m = x->cols, k = v->cols;
    Chain ch = {.x = x, .v = v, .w = w, .k = k};
    double **pre = br_calloc((size_t)c->ngroups + 1, sizeof(double *));
    ch.off = br_calloc((size_t)c->ngroups + 1, sizeof(int64_t));
    int rc = pre && ch.off ? 1 : -1;
    for (int q = 0; rc > 0 && q < c->ngroups; q++) {
        const ClaGroup *g = c->groups[q];
        ch.off[q] = ch.tot;
        if (g->enc == CLA_UNC || g->enc == CLA_EMPTY) continue;
        ch.tot += (int64_t)g->ndict * k;
        if (!(pre[q] = pre_mult(g, v))) rc = -1;
    }
    if (rc > 0 && !row_bundles(c, pre, k, &ch.rb)) rc = -1;
    if (rc > 0 && !(ch.wide = br_calloc((size_t)c->ngroups + 1, sizeof(bool)))) rc = -1;
    if (rc > 0) ch.W = list_windows(c, n, k, CLA_BLK, ch.rb.pre, ch.wide);
    for (int j = 0; rc > 0 && j < ch.rb.nbd; j++) {
        ch.rb.bs[j].off = ch.tot;
        ch.tot += ch.rb.bs[j].jd * k;
    }
    int64_t nb = (n + CLA_BLK - 1) / CLA_BLK, np = BR_MAX(1, BR_MIN(TL_PARTS, nb));
    double *A = NULL, *U = NULL;
    if (rc > 0 && (ch.tot + m * k) * np > TL_MAX_CELLS) rc = 0;
    if (rc > 0) {
        A = br_calloc((size_t)(ch.tot * np) + 1, sizeof(double));
        U = br_calloc((size_t)(m * k * np) + 1, sizeof(double));
        if (!A || !U) rc = -1;
    }
    if (rc > 0) {
        const bool par = br_par((double)(n * c->ngroups));
#pragma omp parallel for num_threads(br_threads()) if (par) schedule(dynamic, 1)
        for (int64_t pi = 0; pi < np; pi++) {
            int64_t a = nb * pi / np * CLA_BLK, z = BR_MIN(n, nb * (pi + 1) / np * CLA_BLK);
            int r = chain_range(&ch, a, z, A + pi * ch.tot, U + pi * m * k);
            if (r < 1) {
#pragma omp critical(cla_chain)
                if (r < rc) rc = r;
            }
        }
    }
    for (int64_t pi = 1; rc > 0 && pi < np; pi++) {
        for (int64_t i = 0; i < ch.tot; i++) A[i] += A[pi * ch.tot + i];
        for (int64_t i = 0; i < m * k; i++) U[i] += U[pi * m * k + i];
    }
    if (rc > 0) tl_sums_finish(c, ch.rb.bs, ch.rb.nbd, ch.off, A, U, k, out);
    free_pre(pre, c->ngroups);
    row_bundles_free(&ch.rb);
    free(ch.off), free(ch.wide), free(A), free(U);
    return rc;
}

MB *cla_mmchain(const MB *x, const MB *v0, const MB *w0, BrErr *e)
{
    MB *tv = NULL, *tw = NULL;
    /* fused where every value is finite (no 0 * Inf to mark) and the
     * shapes are the chain's; else the two products */
    bool shapes = x->cols == v0->rows && (!w0 || (w0->rows == x->rows && (w0->cols == 1 || w0->cols == v0->cols)));
    if (shapes && v0->cols <= 8 && !cmb_has_nonfinite(x) && !mb_has_nonfinite(v0) &&
        !(w0 && mb_has_nonfinite(w0))) {
        const MB *v = dense_of(v0, &tv, e), *w = w0 ? dense_of(w0, &tw, e) : NULL;
        MB *r = v && (w || !w0) ? mb_dense(x->cols, v->cols, e) : NULL;
        int rc = r ? chain_fused(x, v, w, r->d) : -1;
        mb_release(tv);
        mb_release(tw);
        if (rc != 0) {
            if (rc > 0) cla_stats_op("mmchain");
            return product_done(r, rc > 0, e);
        }
        mb_release(r);
    }
    MB *q = cla_matmul_right(x, v0, e);
    if (!q) return NULL;
    if (w0) {
        MB *qw = k_binary(OP_MULT, w0, q, e);
        mb_release(q);
        if (!(q = qw)) return NULL;
    }
    MB *r = cla_matmul_tl(x, q, e);
    mb_release(q);
    return r;
}

/* ---- tsmm ---- */

/* The rows of group h as dense values of its columns for a block (codes
 * of h given; UNC rows from its block). */
static void row_of(const ClaGroup *h, const int32_t *hcodes, int64_t row, int64_t i, double *v)
{
    if (h->enc == CLA_UNC) {
        const MB *u = h->unc;
        if (!u->sparse) { memcpy(v, u->d + row * h->ncols, (size_t)h->ncols * sizeof(double)); return; }
        memset(v, 0, (size_t)h->ncols * sizeof(double));
        for (int64_t k = u->rp[row]; k < u->rp[row + 1]; k++) v[u->ci[k]] = u->v[k];
        return;
    }
    if (hcodes[i] < 0) { memset(v, 0, (size_t)h->ncols * sizeof(double)); return; }
    memcpy(v, h->dict + (int64_t)hcodes[i] * h->ncols, (size_t)h->ncols * sizeof(double));
}

/* r[cols g, cols h] and its mirror from A (g's tuples x h's columns: the
 * sum of h's rows over the rows of each tuple of g): block = dict_g^T A.
 * Zeros of g's dictionary are passed over where A is finite (0 * A adds
 * nothing there; else 0 * Inf must make its NaN, as the dense kernel's). */
static void tsmm_block(const ClaGroup *g, const ClaGroup *h, const double *A, double *r, int64_t m)
{
    int hc = h->ncols;
    double *B = br_calloc((size_t)g->ncols * (size_t)hc + 1, sizeof(double)), fin = 0;
    for (int64_t i = 0; i < (int64_t)g->ndict * hc; i++) fin += A[i] * 0.0;
    for (int32_t t = 0; B && t < g->ndict; t++)
        for (int jg = 0; jg < g->ncols; jg++) {
            double v = g->dict[(int64_t)t * g->ncols + jg];
            if (v == 0 && fin == 0) continue;
            const double *a = A + (int64_t)t * hc;
            double *b = B + (int64_t)jg * hc;
            for (int jh = 0; jh < hc; jh++) b[jh] += v * a[jh];
        }
    for (int jg = 0; jg < g->ncols; jg++)
        for (int jh = 0; jh < hc; jh++) {
            double s = 0;
            if (B) s = B[(int64_t)jg * hc + jh];
            else   /* (out of memory for B: the same sums, tuple by tuple) */
                for (int32_t t = 0; t < g->ndict; t++) s += g->dict[(int64_t)t * g->ncols + jg] * A[(int64_t)t * hc + jh];
            r[(int64_t)g->cols[jg] * m + h->cols[jh]] = s;
            r[(int64_t)h->cols[jh] * m + g->cols[jg]] = s;
        }
    free(B);
}

/* A of two compressed groups through the co-occurrence counts of their
 * tuples (C[t][u]: rows holding t of g and u of h), A = C dict_h over
 * the counted pairs and h's non-zero values: one add a row instead of
 * one per column of h (one-hot groups of 50 columns: t(X) %*% X ran at
 * 0.09 of the sparse kernel). Used where the counts cost less than the
 * rows (TSMM_COUNTS cells at most); false: not used, or out of memory. */
#define TSMM_COUNTS (1 << 20)

static bool tsmm_counts(const ClaGroup *g, const ClaGroup *h, int64_t n, double *A)
{
    int hc = h->ncols;
    int64_t cells = (int64_t)g->ndict * h->ndict, hnz = 0;
    for (int64_t i = 0; i < (int64_t)h->ndict * hc; i++) hnz += h->dict[i] != 0;
    if (h->enc == CLA_UNC || cells > TSMM_COUNTS ||
        (double)n + (double)g->ndict * (double)hnz >= 0.5 * (double)n * (double)hc)
        return false;
    double *C = br_calloc((size_t)cells + 1, sizeof(double));
    int32_t *gc = br_malloc(CLA_BLK * sizeof(int32_t)), *hcd = br_malloc(CLA_BLK * sizeof(int32_t));
    ClaIter gi, hi;
    memset(&gi, 0, sizeof gi);
    memset(&hi, 0, sizeof hi);
    bool ok = C && gc && hcd && cla_iter_init(&gi, g, 0) && cla_iter_init(&hi, h, 0);
    const int64_t nh = h->ndict;
    if (ok && g->enc == CLA_DDC1 && h->enc == CLA_DDC1) {   /* (the codes read in place: one-hot groups) */
        const uint8_t *a = g->ix->c1, *b = h->ix->c1;
        for (int64_t i = 0; i < n; i++) C[a[i] * nh + b[i]] += 1;
    } else for (int64_t lo = 0; ok && lo < n; lo += CLA_BLK) {
        int64_t len = n - lo < CLA_BLK ? n - lo : CLA_BLK;
        cla_iter_next(&gi, len, gc);
        cla_iter_next(&hi, len, hcd);
        for (int64_t i = 0; i < len; i++)
            if (gc[i] >= 0 && hcd[i] >= 0) C[(int64_t)gc[i] * h->ndict + hcd[i]] += 1;
    }
    for (int32_t t = 0; ok && t < g->ndict; t++)
        for (int32_t u = 0; u < h->ndict; u++) {
            double cnt = C[(int64_t)t * h->ndict + u];
            if (cnt == 0) continue;   /* (pairs no row holds add nothing, not 0 * Inf) */
            const double *hv = h->dict + (int64_t)u * hc;
            double *a = A + (int64_t)t * hc;
            for (int j = 0; j < hc; j++)
                if (hv[j] != 0) a[j] += cnt * hv[j];
        }
    if (gi.g) cla_iter_free(&gi);
    if (hi.g) cla_iter_free(&hi);
    free(C);
    free(gc);
    free(hcd);
    return ok;
}

/* r[cols g, cols h] and its mirror for groups g (compressed) and h != g:
 * A[t] = sum of h's rows over rows of tuple t of g; block = dict_g^T A. */
static bool tsmm_pair(const ClaGroup *g, const ClaGroup *h, int64_t n, double *r, int64_t m)
{
    int hc = h->ncols;
    double *A0 = br_calloc((size_t)g->ndict * (size_t)hc + 1, sizeof(double));
    if (A0 && tsmm_counts(g, h, n, A0)) {
        tsmm_block(g, h, A0, r, m);
        free(A0);
        return true;
    }
    free(A0);
    double *A = br_calloc((size_t)g->ndict * (size_t)hc + 1, sizeof(double));
    double *v = br_malloc((size_t)hc * sizeof(double) + 8);
    int32_t *gc = br_malloc(CLA_BLK * sizeof(int32_t)), *hcd = br_malloc(CLA_BLK * sizeof(int32_t));
    ClaIter gi, hi;
    memset(&hi, 0, sizeof hi);
    bool ok = A && v && gc && hcd && cla_iter_init(&gi, g, 0);
    if (ok && h->enc != CLA_UNC && !cla_iter_init(&hi, h, 0)) { cla_iter_free(&gi); ok = false; }
    if (ok) {
        for (int64_t lo = 0; lo < n; lo += CLA_BLK) {
            int64_t len = n - lo < CLA_BLK ? n - lo : CLA_BLK;
            cla_iter_next(&gi, len, gc);
            if (h->enc != CLA_UNC) cla_iter_next(&hi, len, hcd);
            for (int64_t i = 0; i < len; i++) {
                if (gc[i] < 0) continue;
                double *a = A + (int64_t)gc[i] * hc;
                if (h->enc != CLA_UNC) {
                    if (hcd[i] < 0) continue;
                    const double *hv = h->dict + (int64_t)hcd[i] * hc;
                    for (int j = 0; j < hc; j++) a[j] += hv[j];
                } else {
                    row_of(h, hcd, lo + i, i, v);
                    for (int j = 0; j < hc; j++) a[j] += v[j];
                }
            }
        }
        cla_iter_free(&gi);
        cla_iter_free(&hi);
        tsmm_block(g, h, A, r, m);
    }
    free(A);
    free(v);
    free(gc);
    free(hcd);
    return ok;
}

/* The diagonal block of a group: sum over tuples of counts * t t^T. */
static bool tsmm_self(const ClaGroup *g, double *r, int64_t m, BrErr *e)
{
    if (g->enc == CLA_UNC) {
        MB *p = k_tsmm(g->unc, true, e);
        if (!p) return false;
        for (int a = 0; a < g->ncols; a++)
            for (int b = 0; b < g->ncols; b++) r[(int64_t)g->cols[a] * m + g->cols[b]] = mb_get(p, a, b);
        mb_release(p);
        return true;
    }
    for (int a = 0; a < g->ncols; a++)
        for (int b = a; b < g->ncols; b++) {
            double s = 0;
            for (int32_t t = 0; t < g->ndict; t++) {
                const double *tp = g->dict + (int64_t)t * g->ncols;
                s += (double)g->counts[t] * tp[a] * tp[b];
            }
            r[(int64_t)g->cols[a] * m + g->cols[b]] = s;
            r[(int64_t)g->cols[b] * m + g->cols[a]] = s;
        }
    return true;
}

/* t(x) %*% x over decompressed row blocks (many small groups: the pairs
 * of groups would cost more than the products). A dense finite x: TL_PARTS
 * fixed row ranges in parallel (the same bits for every thread count),
 * each read through its own ClaRows by blocks of about 64K cells (512 KB)
 * into one buffer, which stays in L2 from the decompression to the
 * product, the blocks' products summed per range, the ranges' in order.
 * Before, blocks of 4M cells (32 MB) went to memory and back, each a
 * fresh mapping whose pages the kernel cleared, and each counted its
 * non-zeros: tsmm ran at 0.37 of the dense kernel's speed on an
 * Airline-like 500000 x 16 block (bench/bench_cla_mix.c). The buffer's
 * non-zero count is the block's share of x's (the dense kernel reads it
 * only to skip an empty block; x is dense, so the share is not 0; an
 * exact count cost a third of the time) and it is finite as x is.
 * Otherwise (sparse or non-finite x) blocks of about 4M cells
 * decompressed whole (sparse blocks; the NaN marking's scan). */
static bool tsmm_range(const MB *x, int64_t a, int64_t z, int64_t step, double *out, BrErr *e)
{
    int64_t m = x->cols;
    MB *buf = mb_dense_uninit(BR_MIN(step, z - a), m, e);
    ClaRows *rd = buf ? cla_rows_open(x, a) : NULL;
    bool ok = rd != NULL;
    for (int64_t lo = a; ok && lo < z; lo += step) {
        int64_t len = BR_MIN(step, z - lo);
        MB *d = len == buf->rows ? mb_retain(buf) : mb_dense_uninit(len, m, e);
        if (d) {
            cla_rows_read(rd, len, d->d);
            d->nnz = BR_MAX(1, (int64_t)((double)x->nnz * (double)len / (double)x->rows));
            mb_fin_set(d, false);
        }
        MB *p = d ? k_tsmm(d, true, e) : NULL;
        mb_release(d);
        if (p && p->sparse && mb_make_dense(p, e)) mb_release(p), p = NULL;
        if (!(ok = p != NULL)) break;
        for (int64_t i = 0; i < m * m; i++) out[i] += p->d[i];
        mb_release(p);
    }
    if (rd) cla_rows_close(rd);
    else if (buf && !e->code) br_err(e, BR_ENOMEM, "out of memory");
    mb_release(buf);
    return ok;
}

static MB *tsmm_blocks(const MB *x, BrErr *e)
{
    int64_t m = x->cols, n = x->rows;
    MB *r = mb_dense(m, m, e);
    if (!r) return NULL;
    bool ok = true;
    if (!mb_should_be_sparse(n, m, x->nnz) && !mb_has_nonfinite(x)) {
        int64_t step = BR_MAX(256, ((int64_t)1 << 16) / (m ? m : 1));
        int64_t np = BR_MAX(1, BR_MIN(TL_PARTS, (n + step - 1) / step));
        double *P = br_calloc((size_t)(np * m * m) + 1, sizeof(double));
        ok = P != NULL;
        if (!ok) br_err(e, BR_ENOMEM, "out of memory");
        const bool par = ok && np > 1 && br_par((double)(n * m));
#pragma omp parallel for num_threads(br_threads()) if (par) schedule(dynamic, 1)
        for (int64_t pi = 0; pi < np; pi++) {
            BrErr le = {0};
            if (ok && !tsmm_range(x, n * pi / np, n * (pi + 1) / np, step, P + pi * m * m, &le)) {
#pragma omp critical(cla_err)
                {
                    if (ok) *e = le;
                    ok = false;
                }
            }
        }
        for (int64_t pi = 0; ok && pi < np; pi++)
            for (int64_t i = 0; i < m * m; i++) r->d[i] += P[pi * m * m + i];
        free(P);
    } else {
        int64_t step = (((int64_t)1 << 22) / (m ? m : 1) / CLA_BLK + 1) * CLA_BLK;
        for (int64_t lo = 0; ok && lo < n; lo += step) {
            int64_t hi = n - lo < step ? n : lo + step;
            MB *d = cmb_decompress_rows(x, lo, hi, e), *p = d ? k_tsmm(d, true, e) : NULL;
            mb_release(d);
            if (p && p->sparse && mb_make_dense(p, e)) mb_release(p), p = NULL;
            if (!(ok = p != NULL)) break;
            for (int64_t i = 0; i < m * m; i++) r->d[i] += p->d[i];
            mb_release(p);
        }
    }
    if (!ok) { mb_release(r); return NULL; }
    mb_recount_nnz(r);
    return mb_finish(r, e);
}

MB *cla_tsmm(const MB *x, BrErr *e)
{
    cla_stats_op("tsmm");
    const struct CMB *c = C(x);
    int64_t m = x->cols, ng = c->ngroups;
    if (ng > 4 && ng * 4 > m) return tsmm_blocks(x, e);
    MB *r = mb_dense(m, m, e);
    if (!r) return NULL;
    bool ok = true;
    /* tasks: (g, h) with g <= h; each writes its own blocks of r */
    int64_t ntask = ng * (ng + 1) / 2;
    const bool par = br_par((double)(x->rows * ntask));
#pragma omp parallel for num_threads(br_threads()) if (par) schedule(dynamic, 1)
    for (int64_t task = 0; task < ntask; task++) {
        int64_t g = 0, rem = task;
        while (rem >= ng - g) rem -= ng - g, g++;
        int64_t h = g + rem;
        const ClaGroup *G = c->groups[g], *H = c->groups[h];
        bool t_ok = true;
        BrErr le = {0};
        if (!ok || G->enc == CLA_EMPTY || H->enc == CLA_EMPTY) continue;
        if (g == h) t_ok = tsmm_self(G, r->d, m, &le);
        else if (G->enc == CLA_UNC && H->enc == CLA_UNC) {
            MB *p = k_matmul_tl(G->unc, H->unc, &le);
            if (!(t_ok = p != NULL)) goto done;
            for (int a = 0; a < G->ncols; a++)
                for (int b = 0; b < H->ncols; b++) {
                    double s = mb_get(p, a, b);
                    r->d[(int64_t)G->cols[a] * m + H->cols[b]] = s;
                    r->d[(int64_t)H->cols[b] * m + G->cols[a]] = s;
                }
            mb_release(p);
        } else if (G->enc != CLA_UNC) t_ok = tsmm_pair(G, H, x->rows, r->d, m);
        else t_ok = tsmm_pair(H, G, x->rows, r->d, m);
    done:
        if (!t_ok) {
#pragma omp critical(cla_err)
            {
                if (ok) { if (le.code) *e = le; else br_err(e, BR_ENOMEM, "out of memory"); }
                ok = false;
            }
        }
    }
    if (ok && !cla_ieee_tl(x, NULL, r->d)) {   /* a non-finite value meeting a zero of its row */
        br_err(e, BR_ENOMEM, "out of memory");
        ok = false;
    }
    if (!ok) { mb_release(r); return NULL; }
    mb_recount_nnz(r);
    return mb_finish(r, e);
}

/* ---- aggregates ---- */

/* A tuple's aggregate over its values for op (sum, sumsq, min, max). */
static double tuple_agg(OpCode op, const double *tp, int nc)
{
    double s = op == OP_AMIN ? INFINITY : op == OP_AMAX ? -INFINITY : 0;
    for (int j = 0; j < nc; j++) {
        double v = tp[j];
        if (op == OP_AMIN) s = min_step(s, v);
        else if (op == OP_AMAX) s = max_step(s, v);
        else s += op == OP_SUMSQ ? v * v : v;
    }
    return s;
}

/* Rows of g holding no tuple (implicit zeros of OLE/RLE/EMPTY). */
static int64_t zero_rows(const ClaGroup *g, int64_t n)
{
    if (g->enc == CLA_UNC) return 0;
    int64_t s = 0;
    for (int32_t t = 0; t < g->ndict; t++) s += g->counts[t];
    return n - s;
}

/* Column aggregates into out[0..m) (op sum/sumsq: Kahan, min/max). */
static bool col_aggs(OpCode op, const MB *x, double *out, BrErr *e)
{
    const struct CMB *c = C(x);
    OpCode base = op == OP_MEAN ? OP_SUM : op;
    for (int q = 0; q < c->ngroups; q++) {
        const ClaGroup *g = c->groups[q];
        if (g->enc == CLA_UNC) {
            MB *p = k_agg(base, DIR_COL, g->unc, e);
            if (!p) return false;
            for (int j = 0; j < g->ncols; j++) out[g->cols[j]] = mb_get(p, 0, j);
            mb_release(p);
            continue;
        }
        bool zeros = zero_rows(g, x->rows) > 0;
        for (int j = 0; j < g->ncols; j++) {
            KKahan k = {0, 0};
            double s = base == OP_AMIN ? INFINITY : base == OP_AMAX ? -INFINITY : 0;
            for (int32_t t = 0; t < g->ndict; t++) {
                double v = g->dict[(int64_t)t * g->ncols + j];
                if (g->counts[t] == 0) continue;
                if (base == OP_AMIN) s = min_step(s, v);
                else if (base == OP_AMAX) s = max_step(s, v);
                else kadd(&k, (double)g->counts[t] * (base == OP_SUMSQ ? v * v : v));
            }
            if (base == OP_AMIN || base == OP_AMAX) {
                if (zeros) s = base == OP_AMIN ? min_step(s, 0.0) : max_step(s, 0.0);
                out[g->cols[j]] = s;
            } else out[g->cols[j]] = kval(k);
        }
    }
    if (op == OP_MEAN)
        for (int64_t j = 0; j < x->cols; j++) out[j] /= (double)x->rows;
    return true;
}

/* Row aggregates into out[0..n). */
static bool row_aggs(OpCode op, const MB *x, double *out, BrErr *e)
{
    const struct CMB *c = C(x);
    OpCode base = op == OP_MEAN ? OP_SUM : op;
    bool mm = base == OP_AMIN || base == OP_AMAX;
    int64_t n = x->rows;
    double init = base == OP_AMIN ? INFINITY : base == OP_AMAX ? -INFINITY : 0;
    for (int64_t i = 0; i < n; i++) out[i] = init;
    double **pre = br_calloc((size_t)c->ngroups + 1, sizeof(double *));
    if (!pre) return br_err(e, BR_ENOMEM, "out of memory"), false;
    bool ok = true;
    for (int q = 0; ok && q < c->ngroups; q++) {
        const ClaGroup *g = c->groups[q];
        if (g->enc == CLA_UNC) {
            MB *p = k_agg(base, DIR_ROW, g->unc, e);
            if (!(ok = p != NULL)) break;
            for (int64_t i = 0; i < n; i++) {
                double v = mb_get(p, i, 0);
                out[i] = base == OP_AMIN ? min_step(out[i], v) : base == OP_AMAX ? max_step(out[i], v) : out[i] + v;
            }
            mb_release(p);
            continue;
        }
        if (g->enc == CLA_EMPTY) {
            if (mm)
                for (int64_t i = 0; i < n; i++) out[i] = base == OP_AMIN ? min_step(out[i], 0.0) : max_step(out[i], 0.0);
            continue;
        }
        if (!(pre[q] = br_alloc_aligned(((size_t)g->ndict + 1) * sizeof(double)))) { ok = false; break; }
        for (int32_t t = 0; t < g->ndict; t++) pre[q][t] = tuple_agg(base, g->dict + (int64_t)t * g->ncols, g->ncols);
    }
    if (ok && !mm) ok = rowwise(x, pre, 1, out);
    if (ok && mm) {
        /* min/max: combine per group over row blocks (sequential) */
        int32_t *codes = br_malloc(CLA_BLK * sizeof(int32_t));
        ok = codes != NULL;
        for (int q = 0; ok && q < c->ngroups; q++) {
            if (!pre[q]) continue;
            ClaIter it;
            if (!(ok = cla_iter_init(&it, c->groups[q], 0))) break;
            for (int64_t lo = 0; lo < n; lo += CLA_BLK) {
                int64_t len = n - lo < CLA_BLK ? n - lo : CLA_BLK;
                cla_iter_next(&it, len, codes);
                for (int64_t i = 0; i < len; i++) {
                    double v = codes[i] < 0 ? 0.0 : pre[q][codes[i]];
                    out[lo + i] = base == OP_AMIN ? min_step(out[lo + i], v) : max_step(out[lo + i], v);
                }
            }
            cla_iter_free(&it);
        }
        free(codes);
    }
    free_pre(pre, c->ngroups);
    if (!ok && !e->code) br_err(e, BR_ENOMEM, "out of memory");
    if (ok && op == OP_MEAN)
        for (int64_t i = 0; i < n; i++) out[i] /= (double)x->cols;
    return ok;
}

/* A full aggregate. */
static double full_agg(OpCode op, const MB *x, BrErr *e)
{
    const struct CMB *c = C(x);
    OpCode base = op == OP_MEAN ? OP_SUM : op;
    bool mm = base == OP_AMIN || base == OP_AMAX;
    double s = base == OP_AMIN ? INFINITY : base == OP_AMAX ? -INFINITY : 0;
    KKahan k = {0, 0};
    for (int q = 0; q < c->ngroups; q++) {
        const ClaGroup *g = c->groups[q];
        if (g->enc == CLA_UNC) {
            double v;
            if (k_agg_full(base, g->unc, &v, e)) return NAN;
            if (mm) s = base == OP_AMIN ? min_step(s, v) : max_step(s, v);
            else kadd(&k, v);
            continue;
        }
        if (mm && zero_rows(g, x->rows) > 0) s = base == OP_AMIN ? min_step(s, 0.0) : max_step(s, 0.0);
        for (int32_t t = 0; t < g->ndict; t++) {
            if (g->counts[t] == 0) continue;
            double v = tuple_agg(base, g->dict + (int64_t)t * g->ncols, g->ncols);
            if (mm) s = base == OP_AMIN ? min_step(s, v) : max_step(s, v);
            else kadd(&k, (double)g->counts[t] * v);
        }
    }
    if (mm) return s;
    double r = kval(k);
    return op == OP_MEAN ? r / ((double)x->rows * (double)x->cols) : r;
}

MB *cla_agg(OpCode op, AggDir dir, const MB *x, BrErr *e)
{
    cla_stats_op(dir == DIR_FULL ? "uagg" : dir == DIR_ROW ? "uragg" : "ucagg");
    if (dir == DIR_FULL) {
        if (x->rows * x->cols == 0) return k_agg(op, dir, x, e);
        double v = full_agg(op, x, e);
        return e->code ? NULL : mb_scalar(v, e);
    }
    MB *r = dir == DIR_ROW ? mb_dense(x->rows, 1, e) : mb_dense(1, x->cols, e);
    if (!r) return NULL;
    if (!(dir == DIR_ROW ? row_aggs(op, x, r->d, e) : col_aggs(op, x, r->d, e))) {
        mb_release(r);
        return NULL;
    }
    mb_recount_nnz(r);
    return mb_finish(r, e);
}

/* ---- cellwise over the dictionaries ---- */

/* A group with g's columns and row structure and the dictionary fd (the
 * image of g's, ndict tuples); g's implicit zeros map to the tuple f0, so
 * an OLE/RLE group whose f0 is not all zero becomes a DDC group with f0
 * as one more tuple (new codes). NULL without an error when that tuple
 * does not fit (65536 tuples): the caller decompresses. */
static ClaGroup *mapped_group(const ClaGroup *g, int64_t n, const double *fd, const double *f0, BrErr *e)
{
    bool nz0 = false;
    for (int j = 0; j < g->ncols; j++) nz0 |= f0[j] != 0;   /* NaN != 0: counts as non-zero */
    bool zeros = nz0 && zero_rows(g, n) > 0;
    if (zeros && g->ndict + 1 > 65536) return NULL;
    ClaEnc enc = g->enc;
    int32_t nd = g->ndict + (zeros ? 1 : 0);
    if (g->enc == CLA_EMPTY && zeros) enc = CLA_CONST;
    else if (zeros) enc = nd <= 256 ? CLA_DDC1 : CLA_DDC2;
    ClaGroup *r = cla_group_new(enc, g->ncols, nd);
    if (!r) { br_err(e, BR_ENOMEM, "out of memory"); return NULL; }
    memcpy(r->cols, g->cols, (size_t)g->ncols * sizeof(int32_t));
    if (g->ndict) {
        memcpy(r->dict, fd, (size_t)g->ndict * (size_t)g->ncols * sizeof(double));
        memcpy(r->counts, g->counts, (size_t)g->ndict * sizeof(int64_t));
    }
    if (zeros) {
        memcpy(r->dict + (int64_t)g->ndict * g->ncols, f0, (size_t)g->ncols * sizeof(double));
        r->counts[g->ndict] = zero_rows(g, n);
    }
    if (!zeros || g->enc == CLA_EMPTY) {
        r->ix = cla_index_retain(g->ix);   /* the row structure is shared */
        return r;
    }
    /* OLE/RLE with f(0) != 0: codes of every row, the zero rows coded nd-1 */
    ClaIter it;
    r->ix = cla_index_new();
    bool ok = r->ix && cla_iter_init(&it, g, 0);
    int32_t *codes = ok ? br_malloc(CLA_BLK * sizeof(int32_t)) : NULL;
    if (ok && enc == CLA_DDC1) ok = (r->ix->c1 = br_malloc((size_t)n + 1)) != NULL;
    if (ok && enc == CLA_DDC2) ok = (r->ix->c2 = br_malloc((size_t)n * 2 + 2)) != NULL;
    if (ok && codes) {
        for (int64_t lo = 0; lo < n; lo += CLA_BLK) {
            int64_t len = n - lo < CLA_BLK ? n - lo : CLA_BLK;
            cla_iter_next(&it, len, codes);
            for (int64_t i = 0; i < len; i++) {
                int32_t k = codes[i] < 0 ? g->ndict : codes[i];
                if (enc == CLA_DDC1) r->ix->c1[lo + i] = (uint8_t)k;
                else r->ix->c2[lo + i] = (uint16_t)k;
            }
        }
    }
    if (r->ix && ok) cla_iter_free(&it);
    if (!codes) ok = false;
    free(codes);
    if (!ok) { cla_group_release(r); br_err(e, BR_ENOMEM, "out of memory"); return NULL; }
    return r;
}

/* A UNC group over the ordinary block u (taken). */
static ClaGroup *unc_group(const ClaGroup *g, MB *u, BrErr *e)
{
    if (!u) return NULL;
    ClaGroup *r = cla_group_new(CLA_UNC, g->ncols, 0);
    if (!r) { mb_release(u); br_err(e, BR_ENOMEM, "out of memory"); return NULL; }
    memcpy(r->cols, g->cols, (size_t)g->ncols * sizeof(int32_t));
    r->unc = u;
    return r;
}

/* Per output, the buffers of f over n tuples of g's columns. */
typedef struct MapBufs { double *o[CLA_MAXMAP]; } MapBufs;

static void bufs_free(MapBufs *b, int nout) { for (int r = 0; r < nout; r++) free(b->o[r]); }

static int bufs_alloc(MapBufs *b, int nout, int64_t cells, BrErr *e)
{
    memset(b, 0, sizeof *b);
    for (int r = 0; r < nout; r++)
        if (!(b->o[r] = br_malloc((size_t)BR_MAX(cells, 1) * sizeof(double)))) {
            bufs_free(b, nout);
            return br_err(e, BR_ENOMEM, "out of memory");
        }
    return 0;
}

/* The images of UNC group g: f over its cells (densified). */
static int map_unc(const ClaGroup *g, int nout, ClaMapFn f, void *arg, ClaGroup **res, BrErr *e)
{
    MB *tmp = NULL;
    const MB *u = dense_of(g->unc, &tmp, e);
    MapBufs b;
    int64_t cells = u ? u->rows * u->cols : 0;
    int rc = !u ? e->code : bufs_alloc(&b, nout, cells, e);
    if (!rc) {
        rc = f(arg, u->d, u->rows, g->ncols, g->cols, b.o, e);
        for (int r = 0; !rc && r < nout; r++) {
            MB *o = mb_dense_uninit(u->rows, u->cols, e);
            if (o) {
                memcpy(o->d, b.o[r], (size_t)cells * sizeof(double));
                mb_recount_nnz(o);
                o = mb_finish(o, e);
            }
            if (!(res[r] = unc_group(g, o, e))) rc = e->code ? e->code : br_err(e, BR_ENOMEM, "out of memory");
        }
        bufs_free(&b, nout);
    }
    mb_release(tmp);
    return rc;
}

/* The images of compressed group g: f once over its dictionary and once
 * over the zero tuple. res[r] NULL without an error: does not fit. */
static int map_group(const ClaGroup *g, int64_t n, int nout, ClaMapFn f, void *arg, ClaGroup **res, BrErr *e)
{
    MapBufs bd, b0;
    int64_t cells = (int64_t)g->ndict * g->ncols;
    if (bufs_alloc(&bd, nout, cells, e)) return e->code;
    if (bufs_alloc(&b0, nout, g->ncols, e)) { bufs_free(&bd, nout); return e->code; }
    double *zero = br_calloc((size_t)g->ncols, sizeof(double));
    int rc = !zero ? br_err(e, BR_ENOMEM, "out of memory") : f(arg, zero, 1, g->ncols, g->cols, b0.o, e);
    if (!rc && g->ndict) rc = f(arg, g->dict, g->ndict, g->ncols, g->cols, bd.o, e);
    for (int r = 0; !rc && r < nout; r++)
        if (!(res[r] = mapped_group(g, n, bd.o[r], b0.o[r], e)) && e->code) rc = e->code;
    free(zero);
    bufs_free(&bd, nout);
    bufs_free(&b0, nout);
    return rc;
}

/* A UNC group's image computed by the caller's kernel (NULL: f). */
typedef MB *(*UncFn)(const void *arg, const MB *u, BrErr *e);

static int map_blocks(const MB *x, int nout, ClaMapFn f, void *arg, UncFn uf, MB **res, BrErr *e)
{
    const struct CMB *c = C(x);
    if (nout < 1 || nout > CLA_MAXMAP) return br_err(e, BR_EFAIL, "cla_map: %d outputs", nout);
    ClaGroup **gs = br_calloc((size_t)nout * (size_t)c->ngroups + 1, sizeof *gs);
    if (!gs) return br_err(e, BR_ENOMEM, "out of memory");
    int rc = 0;
    bool fits = true;
    ClaGroup *one[CLA_MAXMAP];
    for (int q = 0; q < c->ngroups && !rc && fits; q++) {
        const ClaGroup *g = c->groups[q];
        memset(one, 0, sizeof one);
        if (g->enc == CLA_UNC && uf)
            rc = (one[0] = unc_group(g, uf(arg, g->unc, e), e)) ? 0 : e->code ? e->code : BR_ENOMEM;
        else if (g->enc == CLA_UNC)
            rc = map_unc(g, nout, f, arg, one, e);
        else
            rc = map_group(g, x->rows, nout, f, arg, one, e);
        for (int r = 0; r < nout; r++) {
            gs[(size_t)r * c->ngroups + q] = one[r];
            fits &= one[r] != NULL;
        }
    }
    for (int r = 0; r < nout; r++) res[r] = NULL;
    for (int r = 0; r < nout && !rc && fits; r++) {
        ClaGroup **own = br_malloc(((size_t)c->ngroups + 1) * sizeof *own);   /* cmb_new takes the array */
        if (!own) { rc = br_err(e, BR_ENOMEM, "out of memory"); break; }
        memcpy(own, gs + (size_t)r * c->ngroups, (size_t)c->ngroups * sizeof *own);
        for (int q = 0; q < c->ngroups; q++) gs[(size_t)r * c->ngroups + q] = NULL;   /* taken */
        if (!(res[r] = cmb_new(x->rows, x->cols, own, c->ngroups, e))) rc = e->code;
    }
    for (size_t k = 0; k < (size_t)nout * c->ngroups; k++) cla_group_release(gs[k]);
    free(gs);
    if (rc || !fits)
        for (int r = 0; r < nout; r++) { mb_release(res[r]); res[r] = NULL; }
    return rc;
}

int cla_map(const MB *x, int nout, ClaMapFn f, void *arg, MB **res, BrErr *e)
{
    return map_blocks(x, nout, f, arg, NULL, res, e);
}

/* Full aggregates of f's outputs without building the mapped blocks:
 * per tuple its aggregate times its count, the zero tuple's times the
 * group's zero rows (seed 000 section 5.2: sums via counts per value). */
typedef struct MapAcc { KKahan k; double m; } MapAcc;

static void acc_tuples(OpCode base, MapAcc *a, const double *v, int64_t ntup, int nc, const int64_t *counts)
{
    bool mm = base == OP_AMIN || base == OP_AMAX;
    for (int64_t t = 0; t < ntup; t++) {
        int64_t w = counts ? counts[t] : 1;
        if (w == 0) continue;
        double s = tuple_agg(base, v + t * nc, nc);
        if (!mm) kadd(&a->k, (double)w * s);
        else a->m = base == OP_AMIN ? min_step(a->m, s) : max_step(a->m, s);
    }
}

int cla_map_agg(const MB *x, int nout, ClaMapFn f, void *arg, const OpCode *ops, double *vals, BrErr *e)
{
    const struct CMB *c = C(x);
    if (nout < 1 || nout > CLA_MAXMAP) return br_err(e, BR_EFAIL, "cla_map_agg: %d outputs", nout);
    MapAcc acc[CLA_MAXMAP];
    OpCode base[CLA_MAXMAP];
    for (int r = 0; r < nout; r++) {
        base[r] = ops[r] == OP_MEAN ? OP_SUM : ops[r];
        acc[r] = (MapAcc){{0, 0}, base[r] == OP_AMIN ? INFINITY : -INFINITY};
    }
    int rc = 0;
    for (int q = 0; q < c->ngroups && !rc; q++) {
        const ClaGroup *g = c->groups[q];
        MB *tmp = NULL;
        const MB *u = g->enc == CLA_UNC ? dense_of(g->unc, &tmp, e) : NULL;
        if (g->enc == CLA_UNC && !u) return e->code;
        int64_t nd = u ? u->rows : g->ndict;
        const double *in = u ? u->d : g->dict;
        int64_t z = u ? 0 : zero_rows(g, x->rows);
        MapBufs bd, b0;
        rc = bufs_alloc(&bd, nout, nd * g->ncols, e);
        if (!rc && (rc = bufs_alloc(&b0, nout, g->ncols, e))) bufs_free(&bd, nout);
        if (rc) { mb_release(tmp); break; }
        double *zero = br_calloc((size_t)g->ncols, sizeof(double));
        if (!zero) rc = br_err(e, BR_ENOMEM, "out of memory");
        if (!rc && z > 0) rc = f(arg, zero, 1, g->ncols, g->cols, b0.o, e);
        if (!rc && nd > 0) rc = f(arg, in, nd, g->ncols, g->cols, bd.o, e);
        for (int r = 0; !rc && r < nout; r++) {
            acc_tuples(base[r], &acc[r], bd.o[r], nd, g->ncols, u ? NULL : g->counts);
            if (z > 0) {
                const int64_t zc[1] = {z};
                acc_tuples(base[r], &acc[r], b0.o[r], 1, g->ncols, zc);
            }
        }
        free(zero);
        bufs_free(&bd, nout);
        bufs_free(&b0, nout);
        mb_release(tmp);
    }
    double cells = (double)x->rows * (double)x->cols;
    for (int r = 0; r < nout && !rc; r++) {
        bool mm = base[r] == OP_AMIN || base[r] == OP_AMAX;
        vals[r] = mm ? acc[r].m : kval(acc[r].k);
        if (ops[r] == OP_MEAN) vals[r] /= cells;
    }
    return rc;
}

/* ---- the ordinary cellwise operators as map functions ---- */

/* f applied to an ordinary block: unary op, or the scalar op with s. */
typedef struct CellFn {
    OpCode op;
    bool unary, left, self;   /* self: a op a */
    double s;
} CellFn;

static MB *cell_apply(const void *fv, const MB *a, BrErr *e)
{
    const CellFn *f = fv;
    if (f->unary) return k_unary(f->op, a, e);
    if (f->self) return k_binary(f->op, a, a, e);
    return f->left ? k_binary_sm(f->op, f->s, a, e) : k_binary_ms(f->op, a, f->s, e);
}

/* ClaMapFn of a CellFn: the ordinary kernel over the values as a block
 * (the same semantics, NaN and Inf included, as over the decompressed
 * block). */
static int cell_map(void *arg, const double *vals, int64_t n, int ncols, const int32_t *cols, double *const *out,
                    BrErr *e)
{
    (void)cols;
    MB *a = mb_dense_uninit(n, ncols, e), *fa = NULL;
    if (a) {
        memcpy(a->d, vals, (size_t)n * (size_t)ncols * sizeof(double));
        mb_recount_nnz(a);
        fa = cell_apply(arg, a, e);
    }
    mb_release(a);
    if (!fa) return e->code ? e->code : br_err(e, BR_ENOMEM, "out of memory");
    if (!fa->sparse) memcpy(out[0], fa->d, (size_t)n * (size_t)ncols * sizeof(double));
    else
        for (int64_t i = 0; i < n; i++)
            for (int j = 0; j < ncols; j++) out[0][i * ncols + j] = mb_get(fa, i, j);
    mb_release(fa);
    return 0;
}

static MB *cell_block(const CellFn *f, const MB *x, BrErr *e)
{
    MB *r = NULL;
    map_blocks(x, 1, cell_map, (void *)f, cell_apply, &r, e);   /* UNC: the kernel keeps sparsity */
    return r;
}

MB *cla_unary(OpCode op, const MB *x, BrErr *e)
{
    cla_stats_op("uop");
    CellFn f = {.op = op, .unary = true};
    return cell_block(&f, x, e);
}

MB *cla_self(OpCode op, const MB *x, BrErr *e)
{
    cla_stats_op("sop");
    CellFn f = {.op = op, .self = true};
    return cell_block(&f, x, e);
}

MB *cla_scalar(OpCode op, const MB *x, double s, bool scalar_left, BrErr *e)
{
    cla_stats_op("sop");
    CellFn f = {.op = op, .left = scalar_left, .s = s};
    return cell_block(&f, x, e);
}

/* ---- indexing ---- */

/* g restricted to columns [cl, cu) (renumbered from 0); NULL and no error
 * when g has none of them. */
static ClaGroup *sub_group(const ClaGroup *g, int64_t cl, int64_t cu, BrErr *e)
{
    int idx[1024], *ix = g->ncols <= 1024 ? idx : br_malloc((size_t)g->ncols * sizeof(int));
    if (!ix) { br_err(e, BR_ENOMEM, "out of memory"); return NULL; }
    int k = 0;
    for (int j = 0; j < g->ncols; j++)
        if (g->cols[j] >= cl && g->cols[j] < cu) ix[k++] = j;
    ClaGroup *r = NULL;
    if (k == 0) goto out;
    r = cla_group_new(g->enc, k, g->ndict);
    if (!r) { br_err(e, BR_ENOMEM, "out of memory"); goto out; }
    for (int j = 0; j < k; j++) r->cols[j] = (int32_t)(g->cols[ix[j]] - cl);
    for (int32_t t = 0; t < g->ndict; t++)
        for (int j = 0; j < k; j++) r->dict[(int64_t)t * k + j] = g->dict[(int64_t)t * g->ncols + ix[j]];
    if (g->ndict) memcpy(r->counts, g->counts, (size_t)g->ndict * sizeof(int64_t));
    r->ix = cla_index_retain(g->ix);
    if (g->enc == CLA_UNC && !(r->unc = k_slice(g->unc, 0, g->unc->rows, ix[0], ix[k - 1] + 1, e))) {
        cla_group_release(r);
        r = NULL;
    }
out:
    if (ix != idx) free(ix);
    return r;
}

/* Row ranges of at least this many rows stay compressed; smaller ones
 * are decompressed (small blocks, e.g. mini-batches, run faster through
 * the ordinary kernels than through a compressed block's overheads). */
#define CLA_SLICE_MIN CLA_BLK

/* Rows [rl, ru) of x, compressed: every group restricted to the rows
 * (cla_group_rows: re-encoded by exact size; UNC groups sliced). NULL
 * without an error when a group cannot stay compressed. */
static MB *slice_rows(const MB *x, int64_t rl, int64_t ru, BrErr *e)
{
    const struct CMB *c = C(x);
    ClaGroup **gs = br_calloc((size_t)c->ngroups + 1, sizeof *gs);
    if (!gs) { br_err(e, BR_ENOMEM, "out of memory"); return NULL; }
    bool ok = true;
    for (int q = 0; q < c->ngroups && ok; q++) {
        const ClaGroup *g = c->groups[q];
        if (g->enc != CLA_UNC) { ok = (gs[q] = cla_group_rows(g, rl, ru, e)) != NULL; continue; }
        ok = (gs[q] = unc_group(g, k_slice(g->unc, rl, ru, 0, g->ncols, e), e)) != NULL;
    }
    if (!ok) {
        for (int q = 0; q < c->ngroups; q++) cla_group_release(gs[q]);
        free(gs);
        return NULL;
    }
    return cmb_new(ru - rl, x->cols, gs, c->ngroups, e);
}

MB *cla_slice(const MB *x, int64_t rl, int64_t ru, int64_t cl, int64_t cu, BrErr *e)
{
    if (rl < 0 || ru > x->rows || rl > ru || cl < 0 || cu > x->cols || cl > cu) {
        br_err(e, BR_EINDEX, "index out of bounds: [%lld:%lld, %lld:%lld] of a %lldx%lld matrix", (long long)rl + 1,
               (long long)ru, (long long)cl + 1, (long long)cu, (long long)x->rows, (long long)x->cols);
        return NULL;
    }
    if (rl == ru || cl == cu) return mb_empty(ru - rl, cu - cl, e);
    cla_stats_op("rightIndex");
    const struct CMB *c = C(x);
    ClaGroup **gs = br_calloc((size_t)c->ngroups + 1, sizeof *gs);
    if (!gs) { br_err(e, BR_ENOMEM, "out of memory"); return NULL; }
    int n = 0;
    for (int q = 0; q < c->ngroups; q++) {
        const ClaGroup *g = c->groups[q];
        if (g->cols[0] >= cu || g->cols[g->ncols - 1] < cl) continue;
        ClaGroup *s = sub_group(g, cl, cu, e);
        if (!s && e->code) {
            for (int k = 0; k < n; k++) cla_group_release(gs[k]);
            free(gs);
            return NULL;
        }
        if (s) gs[n++] = s;
    }
    MB *r = cmb_new(x->rows, cu - cl, gs, n, e);
    if (!r || (rl == 0 && ru == x->rows)) return r;
    MB *s = ru - rl >= CLA_SLICE_MIN ? slice_rows(r, rl, ru, e) : NULL;
    if (!s && !e->code) s = cmb_decompress_rows(r, rl, ru, e);
    mb_release(r);
    return s;
}
