/* hop.c: HOP construction, size inference and printing. */
#include "hop.h"
#include "../base/vec.h"
#include "../dist/dist.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The reserve of hop_new (hops and input slots). */
#define HOP_RESERVE 64
#define HOP_RESERVE_IN 512

HopDag *hop_dag_new(void)
{
    HopDag *d = br_calloc(1, sizeof *d);
    if (!d) return NULL;
    d->arena = arena_new();
    /* (not zeroed here: hop_new clears what it hands out, so a DAG, made
     * at every recompilation, costs no pass over its reserve) */
    d->reserve = br_malloc(HOP_RESERVE * sizeof *d->reserve);
    d->rsv_in = br_malloc(HOP_RESERVE_IN * sizeof *d->rsv_in);
    if (!d->arena || !d->reserve || !d->rsv_in) {
        hop_dag_free(d);
        return NULL;
    }
    return d;
}

void hop_dag_free(HopDag *d)
{
    if (!d) return;
    for (int i = 0; i < d->n; i++)
        if (d->hops[i]->kind == H_LIT) val_release(&d->hops[i]->lit);
    free(d->hops);
    free(d->roots);
    free(d->wnames);
    free(d->whops);
    free(d->rnames);
    for (int i = 0; i < d->nreserve; i++)
        if (d->reserve[i].kind == H_LIT) val_release(&d->reserve[i].lit);
    free(d->reserve);
    free(d->rsv_in);
    arena_free(d->arena);
    free(d);
}

/* The fields every new hop starts with. */
static Hop *hop_init(Hop *h, HopKind kind, Span span, int nin)
{
    h->kind = kind;
    h->span = span;
    h->nin = nin;
    h->rows = h->cols = h->nnz = -1;
    h->wrows = h->wcols = -1;
    h->mem = -1;
    h->reg = -1;
    h->nouts = 1;
    return h;
}

/* A new hop of d with room for nin inputs (hop.h: the reserve when out
 * of memory). */
Hop *hop_new(HopDag *d, HopKind kind, Span span, int nin)
{
    assert(nin >= 0);
    Hop *h = arena_alloc(d->arena, sizeof *h);
    if (h && nin) h->in = arena_alloc(d->arena, (size_t)nin * sizeof(Hop *));
    if (!h || (nin && !h->in) || !br_grow((void **)&d->hops, &d->cap, d->n + 1, sizeof(Hop *))) {
        d->oom = true;
        if (!d->reserve || d->nreserve >= HOP_RESERVE || nin > HOP_RESERVE_IN - d->rsv_used) return NULL;
        h = &d->reserve[d->nreserve++];
        memset(h, 0, sizeof *h);
        h->in = nin ? d->rsv_in + d->rsv_used : NULL;
        if (nin) memset(h->in, 0, (size_t)nin * sizeof *h->in);
        d->rsv_used += nin;
        return hop_init(h, kind, span, nin);
    }
    h->id = d->n + 1;
    d->hops[d->n++] = h;
    return hop_init(h, kind, span, nin);
}

void hop_add_root(HopDag *d, Hop *h)
{
    if (d->oom) return;   /* (h may be a reserve hop) */
    assert(!h || (h->id >= 1 && h->id <= d->n && d->hops[h->id - 1] == h));
    if (!br_grow((void **)&d->roots, &d->rcap, d->nroots + 1, sizeof(Hop *))) {
        d->oom = true;
        return;
    }
    d->roots[d->nroots++] = h;
}

void hop_set_write(HopDag *d, const char *name, Hop *h)
{
    if (d->oom) return;   /* (h may be a reserve hop) */
    assert(!h || (h->id >= 1 && h->id <= d->n && d->hops[h->id - 1] == h));
    for (int i = 0; i < d->nw; i++)
        if (strcmp(d->wnames[i], name) == 0) { d->whops[i] = h; return; }
    int cap = d->wcap;
    if (!br_grow((void **)&d->wnames, &cap, d->nw + 1, sizeof(char *))) { d->oom = true; return; }
    cap = d->wcap;
    if (!br_grow((void **)&d->whops, &cap, d->nw + 1, sizeof(Hop *))) { d->oom = true; return; }
    d->wcap = cap;
    d->wnames[d->nw] = name;
    d->whops[d->nw] = h;
    d->nw++;
}

void hop_add_read(HopDag *d, const char *name)
{
    if (!br_grow((void **)&d->rnames, &d->rncap, d->nr + 1, sizeof(char *))) { d->oom = true; return; }
    d->rnames[d->nr++] = name;
}

static bool known(const Hop *h) { return h && h->rows >= 0 && h->cols >= 0; }
static int exec_type(const Hop *h, double lb);

/* Literal integer value of a hop, if it is a numeric literal. */
static bool lit_num(const Hop *h, double *v)
{
    if (!h || h->kind != H_LIT) return false;
    if (h->lit.kind == V_INT) { *v = (double)h->lit.i; return true; }
    if (h->lit.kind == V_DOUBLE) { *v = h->lit.d; return true; }
    return false;
}

/* Non-zeros of an m x k by k x n product whose operands have za and zb
 * non-zeros. Average case (seed 002: each of the m*n output cells is
 * non-zero unless all k products are zero, with non-zeros spread
 * uniformly): m*n*(1 - (1 - sa*sb)^k). Worst case, for memory estimates
 * (seed 002, section 3.2), where the average case would underestimate
 * clustered non-zeros: sparsity min(1, sa*k) * min(1, sb*k). Exact for
 * an empty operand. */
static int64_t mm_nnz_dims(double m, double k, double n, int64_t za, int64_t zb, bool worst)
{
    if (m * k == 0 || k * n == 0 || za == 0 || zb == 0) return 0;
    double sa = (double)za / (m * k), sb = (double)zb / (k * n), cells = m * n;
    if (worst) return (int64_t)fmin(ceil(cells * fmin(1.0, sa * k) * fmin(1.0, sb * k)), cells);
    double p = -expm1(k * log1p(-fmin(sa * sb, 1.0)));
    return (int64_t)fmin(ceil(cells * (sa * sb >= 1 ? 1.0 : p)), cells);
}

/* The non-zeros of product hop h (A %*% B, t(A) %*% B, and tsmm's
 * t(X) %*% X or X %*% t(X), whose two operands are X: SystemDS sizes
 * them as the plain product of t(X) and X); -1 unknown or another
 * product (mmchain). */
static int64_t mm_nnz_of(const Hop *h, bool worst)
{
    const Hop *a = h->nin > 0 ? h->in[0] : NULL, *b = h->nin > 1 ? h->in[1] : NULL;
    if (!known(a) || a->nnz < 0) return -1;
    double ar = (double)a->rows, ac = (double)a->cols;
    if (h->op == OP_TSMM)
        return h->flag ? mm_nnz_dims(ac, ar, ac, a->nnz, a->nnz, worst) : mm_nnz_dims(ar, ac, ar, a->nnz, a->nnz, worst);
    if (!known(b) || b->nnz < 0) return -1;
    if (h->op == OP_TSMMA) return -1;
    if (h->op == OP_MATMUL) return mm_nnz_dims(ar, ac, (double)b->cols, a->nnz, b->nnz, worst);
    if (h->op == OP_MATMULTL) return mm_nnz_dims(ac, ar, (double)b->cols, a->nnz, b->nnz, worst);
    return -1;
}

static void set_dims(Hop *h, int64_t r, int64_t c)
{
    h->dt = DT_MATRIX;
    h->vt = VT_DOUBLE;
    h->rows = r;
    h->cols = c;
}

/* X %*% y or y %*% X with y 1x1 and inner sizes that differ: SystemDS
 * computes the scalar product y * X (its rewrite simplifyScalarMatrixMult,
 * and ours in rewrite/dynamic.c; the kernels do the same at run time), so
 * the result has X's shape. a is the left operand as stored (transposed
 * for OP_MATMULTL). */
static void one_cell_dims(Hop *h, const Hop *a, const Hop *b)
{
    if (!a || !b || a->dt != DT_MATRIX || b->dt != DT_MATRIX || !known(a) || !known(b)) return;
    bool tl = h->op == OP_MATMULTL;
    int64_t ar = tl ? a->cols : a->rows, ac = tl ? a->rows : a->cols;
    if (ac == b->rows) return;
    if (ar == 1 && ac == 1) set_dims(h, b->rows, b->cols);
    else if (b->rows == 1 && b->cols == 1) set_dims(h, ar, ac);
}

/* Index range length for RIX dims: mode, lo, hi hops, full extent. */
/* Value of a scalar index expression: literals, and during dynamic
 * recompilation scalar TREADs kept as variables, whose current value
 * recompile.c leaves in lit, combined by + - * min max. */
static bool scalar_num(const Hop *h, double *v, int depth)
{
    double a, b;
    if (!h || depth > 16) return false;
    if (h->kind == H_LIT) return lit_num(h, v);
    if (h->kind == H_TREAD && h->known && h->dt == DT_SCALAR) {
        if (h->lit.kind == V_INT) { *v = (double)h->lit.i; return true; }
        if (h->lit.kind == V_DOUBLE) { *v = h->lit.d; return true; }
        return false;
    }
    if (h->kind != H_BINARY || h->dt != DT_SCALAR || h->nin != 2) return false;
    if (h->op != OP_PLUS && h->op != OP_MINUS && h->op != OP_MULT && h->op != OP_MIN && h->op != OP_MAX)
        return false;
    if (!scalar_num(h->in[0], &a, depth + 1) || !scalar_num(h->in[1], &b, depth + 1)) return false;
    *v = ops_binary(h->op, a, b);
    return true;
}

static int64_t ix_len(int mode, const Hop *lo, const Hop *hi, int64_t full)
{
    double a, b;
    if (mode == IX_ALL) return full;
    if (mode == IX_SINGLE) return 1;
    if (scalar_num(lo, &a, 0) && scalar_num(hi, &b, 0)) return (int64_t)b - (int64_t)a + 1;
    return -1;
}

/* Element i of a shape argument [a, b, ...] (list(...) of n items; a
 * pair may be one number) when it is a known number. */
static bool shape_at(const Hop *l, int i, int n, double *v)
{
    if (l && n == 2 && l->dt == DT_SCALAR) return scalar_num(l, v, 0);
    if (!l || l->kind != H_BUILTIN || l->bi != BI_LIST || l->nin != n) return false;
    return scalar_num(l->in[i], v, 0);
}

/* Sizes of the deep-learning builtins (layouts in kernels/dnn.h) from
 * shape arguments with known values; absent stride/padding are 1/0. */
static void infer_dnn(Hop *h)
{
    bool conv = h->bi == BI_CONV2D || h->bi == BI_CONV2D_BWF || h->bi == BI_CONV2D_BWD;
    int k = (h->bi == BI_MAXPOOL || h->bi == BI_AVGPOOL) ? 1 : 2;   /* input_shape */
    if (h->nin < k + 4) return;
    const Hop *is = h->in[k], *fs = h->in[k + 1], *st = h->in[k + 2], *pd = h->in[k + 3];
    double N, C, H, W, K = 1, R, S, sh = 1, sw = 1, ph = 0, pw = 0;
    bool img = shape_at(is, 1, 4, &C) && shape_at(is, 2, 4, &H) && shape_at(is, 3, 4, &W);
    bool win = conv ? shape_at(fs, 0, 4, &K) && shape_at(fs, 2, 4, &R) && shape_at(fs, 3, 4, &S)
                    : shape_at(fs, 0, 2, &R) && shape_at(fs, 1, 2, &S);
    bool ok = img && win && (!st || (shape_at(st, 0, 2, &sh) && shape_at(st, 1, 2, &sw))) &&
              (!pd || (shape_at(pd, 0, 2, &ph) && shape_at(pd, 1, 2, &pw))) &&
              sh >= 1 && sw >= 1 && H + 2 * ph >= R && W + 2 * pw >= S && C >= 1 && K >= 1;
    double P = ok ? floor((H + 2 * ph - R) / sh) + 1 : -1, Q = ok ? floor((W + 2 * pw - S) / sw) + 1 : -1;
    if (h->bi == BI_CONV2D_BWF) {
        if (conv && shape_at(fs, 0, 4, &K) && K >= 0) h->rows = (int64_t)K;
        if (img && win) h->cols = (int64_t)(C * R * S);
        return;
    }
    const Hop *src = h->bi == BI_CONV2D_BWD ? h->in[1] : h->in[0];
    if (shape_at(is, 0, 4, &N) && N >= 0) h->rows = (int64_t)N;
    else if (src && src->rows >= 0) h->rows = src->rows;
    if (h->bi == BI_CONV2D_BWD || h->bi == BI_MAXPOOL_BW || h->bi == BI_AVGPOOL_BW) {
        if (img) h->cols = (int64_t)(C * H * W);
    } else if (ok) {
        h->cols = (int64_t)((h->bi == BI_CONV2D ? K : C) * P * Q);
    }
}

/* Sizes of builtins whose output shape follows from literal arguments or
 * known input sizes (dt/vt are set by the builder from ops.def). */
/* table(A, B[, W][, odim1, odim2][, outputEmptyBlocks]): the shape is
 * known when both output dimensions are literals (otherwise it depends
 * on the data: the DAG is split after it); each input cell adds to one
 * output cell, so there are at most as many non-zeros as cells of the
 * first matrix among A and B (the worst case, the memory estimate's) */
static void infer_table(Hop *h)
{
    int nv = h->nvar == 6 ? 5 : h->nvar, base = h->nin - h->nvar;
    if (nv < 2 || nv > 5) return;
    double r, c;
    if (nv >= 4 && lit_num(h->in[base + nv - 2], &r) && lit_num(h->in[base + nv - 1], &c) && r >= 0 && c >= 0) {
        h->rows = (int64_t)r;
        h->cols = (int64_t)c;
    }
    const Hop *x = h->in[base]->dt == DT_MATRIX ? h->in[base] : h->in[base + 1];
    if (x->dt != DT_MATRIX || !known(x) || h->rows < 0 || h->cols < 0) return;
    double cells = (double)x->rows * (double)x->cols, out = (double)h->rows * (double)h->cols;
    h->nnz = (int64_t)(cells < out ? cells : out);
}

/* Worst-case dimensions (seed 002, section 3.2: where a size is unknown,
 * the memory estimate takes the largest the operator's semantics allow,
 * so that it never underestimates). -1 is unbounded; a matrix of unknown
 * size read from a variable or returned by a function has no bound. */
static int64_t wmax(int64_t a, int64_t b) { return a < 0 || b < 0 ? -1 : a > b ? a : b; }
static int64_t wsum(int64_t a, int64_t b) { return a < 0 || b < 0 ? -1 : a + b; }

static int64_t wrows_of(const Hop *x) { return x && x->dt == DT_MATRIX ? x->wrows : x ? 1 : -1; }
static int64_t wcols_of(const Hop *x) { return x && x->dt == DT_MATRIX ? x->wcols : x ? 1 : -1; }

/* Bound of a range of an index expression over an extent bounded by full:
 * its length where known, else the extent (a range lies within it). */
static int64_t ix_bound(int mode, const Hop *lo, const Hop *hi, int64_t known_full, int64_t wfull)
{
    int64_t n = ix_len(mode, lo, hi, known_full);
    return n >= 0 ? n : wfull;
}

static void infer_bounds_builtin(const Hop *h, const Hop *a, int64_t *r, int64_t *c)
{
    switch (builtin_info[h->bi].shape) {
    case BS_SAME: *r = wrows_of(a); *c = wcols_of(a); break;
    case BS_NX1: *r = wrows_of(a); *c = 1; break;
    case BS_1XN: *r = 1; *c = wcols_of(a); break;
    case BS_NONE: break;
    }
    switch (h->bi) {
    case BI_RMEMPTY: case BI_REPLACE: case BI_ORDER:
        /* at most the input's extents (an empty input leaves one row or
         * column behind with empty.return) */
        *r = wmax(wrows_of(a), 1); *c = wmax(wcols_of(a), 1);
        break;
    case BI_CBIND: case BI_RBIND: {
        bool cb = h->bi == BI_CBIND;
        int64_t along = 0, across = 0;
        for (int i = h->nin - h->nvar; i < h->nin; i++) {
            const Hop *x = h->in[i];
            along = wsum(along, cb ? wcols_of(x) : wrows_of(x));
            across = wmax(across, cb ? wrows_of(x) : wcols_of(x));
        }
        *r = cb ? across : along;
        *c = cb ? along : across;
        break;
    }
    default: break;
    }
}

static void infer_bounds(Hop *h)
{
    if (h->dt != DT_MATRIX) { h->wrows = h->wcols = -1; return; }
    const Hop *a = h->nin > 0 ? h->in[0] : NULL, *b = h->nin > 1 ? h->in[1] : NULL;
    int64_t r = -1, c = -1;
    switch (h->kind) {
    case H_UNARY: case H_LIX: case H_WHERE:
        r = wrows_of(a); c = wcols_of(a);
        break;
    case H_BINARY: case H_TERNARY:
        /* broadcasting: each extent is the largest of the operands' */
        r = c = 1;
        for (int i = 0; i < h->nin; i++)
            if (h->in[i] && h->in[i]->dt == DT_MATRIX) { r = wmax(r, h->in[i]->wrows); c = wmax(c, h->in[i]->wcols); }
        break;
    case H_AGG:
        if (h->dir == DIR_ROW) { r = wrows_of(a); c = 1; }
        else if (h->dir == DIR_COL) { r = 1; c = wcols_of(a); }
        break;
    case H_MATMUL:
        if (h->op == OP_TSMM) r = c = h->flag ? wcols_of(a) : wrows_of(a);
        else if (h->op == OP_TSMMA) r = c = wcols_of(a) < 0 || wcols_of(b) < 0 ? -1 : wcols_of(a) + wcols_of(b);
        else if (h->op == OP_MATMULTL || h->op == OP_MMCHAIN) { r = wcols_of(a); c = wcols_of(b); }
        else { r = wrows_of(a); c = wcols_of(b); }
        /* an operand that may be 1x1 may make a scalar product of the
         * other's shape (one_cell_dims) */
        if (h->op == OP_MATMUL || h->op == OP_MATMULTL) {
            int64_t ar = h->op == OP_MATMULTL ? wcols_of(a) : wrows_of(a);
            int64_t ac = h->op == OP_MATMULTL ? wrows_of(a) : wcols_of(a);
            if (ar == 1 && ac == 1) { r = wmax(r, wrows_of(b)); c = wmax(c, wcols_of(b)); }
            if (wrows_of(b) == 1 && wcols_of(b) == 1) { r = wmax(r, ar); c = wmax(c, ac); }
        }
        break;
    case H_REORG:
        if (h->op == OP_TRANS) { r = wcols_of(a); c = wrows_of(a); }
        else if (h->op == OP_DIAG) r = c = wrows_of(a);   /* n x n or n x 1 */
        else { r = wrows_of(a); c = wcols_of(a); }
        break;
    case H_RIX:
        if (a && a->dt == DT_MATRIX) {
            r = ix_bound(h->ix.rmode, h->in[1], h->in[2], a->rows, a->wrows);
            c = h->ix.has_col ? ix_bound(h->ix.cmode, h->in[3], h->in[4], a->cols, a->wcols) : a->wcols;
        }
        break;
    case H_BUILTIN:
        infer_bounds_builtin(h, a, &r, &c);
        break;
    default:   /* reads, calls, fused operators: the builder's bounds */
        r = h->wrows; c = h->wcols;
        break;
    }
    /* a known extent is its own bound */
    h->wrows = h->rows >= 0 ? h->rows : r;
    h->wcols = h->cols >= 0 ? h->cols : c;
}

/* Backtracked size constraints (seed 002): the source of R[rows, cols] = X
 * has the extents of the ranges when X is a matrix (the assignment fails
 * otherwise), so an X of unknown size is bounded by them. Only X's own
 * estimate tightens; its consumers keep theirs. */
static void backtrack_lix(Hop *h)
{
    Hop *t = h->in[0], *x = h->nin > 1 ? h->in[1] : NULL;
    if (!t || t->dt != DT_MATRIX || !x || x->dt != DT_MATRIX || known(x)) return;
    int64_t r = ix_bound(h->ix.rmode, h->in[2], h->in[3], t->rows, t->wrows);
    int64_t c = h->ix.has_col ? ix_bound(h->ix.cmode, h->in[4], h->in[5], t->cols, t->wcols) : t->wcols;
    if (r >= 0 && (x->wrows < 0 || r < x->wrows)) x->wrows = r;
    if (c >= 0 && (x->wcols < 0 || c < x->wcols)) x->wcols = c;
    if (x->wrows >= 0 && x->wcols >= 0) {
        double m = mb_est_dense(x->wrows, x->wcols);
        if (x->mem < 0 || m < x->mem) x->mem = m;
    }
}

/* Memory an operator's kernel allocates besides its inputs and output
 * (seed 002's intermediate memory estimates): LAPACK's dense working
 * copies and factors, sort permutations, removeEmpty's offsets, of the
 * worst-case sizes. -1 when these are unbounded, 0 for operators without
 * any. */
static double op_intermediate(const Hop *h)
{
    if (h->kind != H_BUILTIN || h->nin < 1 || !h->in[0] || h->in[0]->dt != DT_MATRIX) return 0;
    const Hop *a = h->in[0];
    /* of the worst-case sizes where the sizes are unknown */
    bool ka = a->wrows >= 0 && a->wcols >= 0;
    double da = ka ? mb_est_dense(a->wrows, a->wcols) : -1;
    switch (h->bi) {
    case BI_SOLVE: {
        const Hop *b = h->nin > 1 ? h->in[1] : NULL;
        if (!ka) return -1;
        if (!b || b->dt != DT_MATRIX) return da;
        return b->wrows >= 0 && b->wcols >= 0 ? da + mb_est_dense(b->wrows, b->wcols) : -1;
    }
    case BI_INV: case BI_CHOLESKY: case BI_DET: return da;       /* the factored copy */
    case BI_EIGEN: case BI_QR: return ka ? 2 * da : -1;          /* copy and vectors / Q */
    case BI_SVD: case BI_LU: return ka ? 3 * da : -1;            /* copy and the factors */
    case BI_ORDER: return a->wrows >= 0 ? 16.0 * (double)a->wrows : -1;   /* keys and permutation */
    case BI_RMEMPTY:                                             /* offsets */
        return ka ? 8.0 * (double)(a->wrows > a->wcols ? a->wrows : a->wcols) : -1;
    default: return 0;
    }
}

static void infer_builtin(Hop *h)
{
    Hop *a = h->nin > 0 ? h->in[0] : NULL;
    double r, c, f, t, inc;
    /* the simple shapes: ops.def's MATRIX_SAME / _NX1 / _1XN results */
    switch (builtin_info[h->bi].shape) {
    case BS_SAME: if (a && known(a)) { h->rows = a->rows; h->cols = a->cols; } break;
    case BS_NX1: if (a && a->rows >= 0) { h->rows = a->rows; h->cols = 1; } break;
    case BS_1XN: if (a && a->cols >= 0) { h->rows = 1; h->cols = a->cols; } break;
    case BS_NONE: break;
    }
    switch (h->bi) {
    case BI_MATRIX:
        if (h->nin >= 3 && lit_num(h->in[1], &r) && lit_num(h->in[2], &c) && r >= 0 && c >= 0) {
            h->rows = (int64_t)r; h->cols = (int64_t)c;
        } else if (a && a->dt == DT_MATRIX && known(a) && h->nin >= 3) {
            int64_t cells = a->rows * a->cols;
            if (lit_num(h->in[1], &r) && r > 0) { h->rows = (int64_t)r; h->cols = cells / h->rows; }
            else if (lit_num(h->in[2], &c) && c > 0) { h->cols = (int64_t)c; h->rows = cells / h->cols; }
        }
        if (a && a->kind == H_LIT && val_is_numeric(&a->lit) && val_as_double(&a->lit) == 0 && h->rows >= 0)
            h->nnz = 0;
        break;
    case BI_RAND:
        if (h->nin >= 2 && lit_num(h->in[0], &r) && lit_num(h->in[1], &c) && r >= 0 && c >= 0) {
            h->rows = (int64_t)r; h->cols = (int64_t)c;
            /* as SystemDS's DataGenOp: none when every value is 0 (a
             * uniform draw with min = max = 0), else the sparsity times
             * the cells, sparsity 1 (the default) included: an estimate
             * that never falls short (a draw of exactly 0 stays a cell;
             * before, sparsity 1 left the non-zeros unknown) */
            double sp, mn, mx;
            const Hop *pdf = h->nin >= 6 ? h->in[5] : NULL;
            bool uniform = pdf && pdf->kind == H_LIT && pdf->lit.kind == V_STRING && !strcmp(pdf->lit.s->s, "uniform");
            if (h->nin >= 5 && lit_num(h->in[4], &sp) && sp >= 0 && sp <= 1) {
                if (uniform && lit_num(h->in[2], &mn) && lit_num(h->in[3], &mx) && mn == 0 && mx == 0) h->nnz = 0;
                else h->nnz = (int64_t)ceil(r * c * sp);
            }
        }
        break;
    case BI_SEQ:
        if (h->nin >= 2 && lit_num(h->in[0], &f) && lit_num(h->in[1], &t)) {
            if (!h->in[2] || !lit_num(h->in[2], &inc) || inc == 0) inc = f <= t ? 1 : -1;
            double n = floor((t - f) / inc + 1e-10) + 1;
            if (n >= 0) { h->rows = (int64_t)n; h->cols = 1; }
        }
        break;
    case BI_CBIND: case BI_RBIND: {
        int64_t rr = 0, cc = 0;
        bool ok = h->nvar > 0;
        for (int i = h->nin - h->nvar; i < h->nin && ok; i++) {
            Hop *x = h->in[i];
            if (!x || !known(x)) { ok = false; break; }
            if (h->bi == BI_CBIND) { rr = x->rows; cc += x->cols; }
            else { cc = x->cols; rr += x->rows; }
        }
        if (ok) { h->rows = rr; h->cols = cc; }
        break;
    }
    case BI_ORDER:
        if (a && known(a)) {
            h->rows = a->rows;
            h->cols = (h->nin > 3 && h->in[3] && h->in[3]->kind == H_LIT && h->in[3]->lit.kind == V_BOOL &&
                       h->in[3]->lit.b) ? 1 : a->cols;
        }
        break;
    case BI_CONV2D: case BI_CONV2D_BWF: case BI_CONV2D_BWD: case BI_MAXPOOL: case BI_MAXPOOL_BW:
    case BI_AVGPOOL: case BI_AVGPOOL_BW:
        infer_dnn(h);
        break;
    case BI_SOLVE:
        if (a && known(a) && h->nin > 1 && h->in[1] && known(h->in[1])) { h->rows = a->cols; h->cols = h->in[1]->cols; }
        break;
    case BI_TABLE:
        infer_table(h);
        break;
    default: break;
    }
    if (h->dt == DT_MATRIX && h->rows >= 0 && h->cols >= 0 && h->nnz < 0 &&
        (h->bi == BI_MATRIX || h->bi == BI_SEQ)) h->nnz = -1;
}

void hop_infer(Hop *h)
{
    Hop *a = h->nin > 0 ? h->in[0] : NULL;
    Hop *b = h->nin > 1 ? h->in[1] : NULL;
    switch (h->kind) {
    case H_LIT:
        h->dt = DT_SCALAR;
        h->vt = h->lit.kind == V_INT ? VT_INT : h->lit.kind == V_BOOL ? VT_BOOL
              : h->lit.kind == V_STRING ? VT_STRING : VT_DOUBLE;
        h->rows = h->cols = 0;
        break;
    case H_UNARY:
        if (a && a->dt == DT_MATRIX) { set_dims(h, a->rows, a->cols);
            if (op_info[h->op].flags & OF_SAFE) h->nnz = a->nnz; }
        else if (a && a->dt == DT_SCALAR) {
            OpType t = op_info[h->op].type;   /* ops.def's type column */
            h->dt = DT_SCALAR; h->rows = h->cols = 0;
            h->vt = t == TY_BOOL ? VT_BOOL : t == TY_NUM ? a->vt : VT_DOUBLE;
        }
        break;
    case H_BINARY:
    case H_TERNARY: {
        Hop *m = NULL;
        for (int i = 0; i < h->nin; i++)
            if (h->in[i] && h->in[i]->dt == DT_MATRIX) {
                if (!m || (known(h->in[i]) && (!known(m) ||
                    h->in[i]->rows * h->in[i]->cols > m->rows * m->cols))) m = h->in[i];
            }
        bool anyunk = false;
        for (int i = 0; i < h->nin; i++)
            if (h->in[i] && h->in[i]->dt == DT_ANY) anyunk = true;
        if (m) {
            /* outer vector op: col vector op row vector */
            if (h->kind == H_BINARY && a && b && known(a) && known(b) &&
                a->dt == DT_MATRIX && b->dt == DT_MATRIX && a->cols == 1 && b->rows == 1 &&
                (a->rows != 1 || b->cols != 1))
                set_dims(h, a->rows, b->cols);
            else
                set_dims(h, m->rows, m->cols);
            /* with an operand of unknown shape, a known extent of 1 may be
             * broadcast against a larger one: only extents > 1 are known */
            for (int i = 0; i < h->nin; i++)
                if (h->in[i] && h->in[i]->dt == DT_MATRIX && !known(h->in[i])) {
                    if (h->rows == 1) h->rows = -1;
                    if (h->cols == 1) h->cols = -1;
                }
            /* a scalar-condition ifelse whose matrix branches' shapes are
             * not known to differ returns the taken branch as it is
             * (lazy_ifelse): an extent the branches do not share is unknown */
            if (hop_lazy_ifelse(h) && h->in[1]->dt == DT_MATRIX && h->in[2]->dt == DT_MATRIX &&
                hop_ifelse_alone(h, 1)) {
                const Hop *x = h->in[1], *y = h->in[2];
                if (x->rows != y->rows || x->rows < 0) h->rows = x->rows == y->rows ? x->rows : -1;
                if (x->cols != y->cols || x->cols < 0) h->cols = x->cols == y->cols ? x->cols : -1;
                if (h->rows < 0 || h->cols < 0) h->nnz = -1;
            }
            /* sparse-safe matrix-scalar operations keep the non-zeros */
            double sv;
            if (h->kind == H_BINARY && a && b && a->dt == DT_MATRIX && a->nnz >= 0 && b->kind == H_LIT &&
                lit_num(b, &sv) && ops_binary(h->op, 0, sv) == 0)
                h->nnz = a->nnz;
            /* X * Y has at most the non-zeros of either operand (W * (U %*% t(V))
             * is as sparse as W) */
            if (h->kind == H_BINARY && h->op == OP_MULT && a && b && a->dt == DT_MATRIX &&
                b->dt == DT_MATRIX && (a->nnz >= 0 || b->nnz >= 0) && a->rows == b->rows && a->cols == b->cols)
                h->nnz = b->nnz < 0 || (a->nnz >= 0 && a->nnz < b->nnz) ? a->nnz : b->nnz;
            /* X op Y with 0 op 0 == 0 (X + Y, X - Y, max, min, X != Y):
             * at most the non-zeros of both (as SystemDS's worst case,
             * a bound: nnz_ub below) */
            if (h->kind == H_BINARY && h->nnz < 0 && a && b && a->dt == DT_MATRIX && b->dt == DT_MATRIX &&
                a->nnz >= 0 && b->nnz >= 0 && known(a) && a->rows == b->rows && a->cols == b->cols &&
                ops_binary(h->op, 0, 0) == 0) {
                double u = (double)a->nnz + (double)b->nnz, c = (double)a->rows * (double)a->cols;
                h->nnz = (int64_t)(u < c ? u : c);
            }
            /* X * v with v broadcast (a row or column vector, a scalar)
             * has at most X's non-zeros ((S > 0) * S * u stays sparse) */
            if (h->kind == H_BINARY && h->op == OP_MULT && h->nnz < 0 && a && b && known(h))
                for (int i = 0; i < 2; i++) {
                    const Hop *x = h->in[i], *y = h->in[1 - i];
                    if (x->dt == DT_MATRIX && x->nnz >= 0 && x->rows == h->rows && x->cols == h->cols &&
                        (y->dt == DT_SCALAR || (y->dt == DT_MATRIX && known(y) && (y->rows == 1 || y->cols == 1))))
                        h->nnz = h->nnz < 0 || x->nnz < h->nnz ? x->nnz : h->nnz;
                }
        } else if (!anyunk && a) {
            OpType t = op_info[h->op].type;   /* ops.def's type column */
            h->dt = DT_SCALAR; h->rows = h->cols = 0;
            if (t == TY_BOOL) h->vt = VT_BOOL;
            else if (a->vt == VT_STRING || (b && b->vt == VT_STRING)) h->vt = VT_STRING;
            else if (t == TY_DBL) h->vt = VT_DOUBLE;
            else if ((a->vt == VT_INT || a->vt == VT_BOOL) && (!b || b->vt == VT_INT || b->vt == VT_BOOL))
                h->vt = VT_INT;
            else h->vt = VT_DOUBLE;
        }
        break;
    }
    case H_AGG:
        if (h->dir == DIR_FULL) { h->dt = DT_SCALAR; h->vt = VT_DOUBLE; h->rows = h->cols = 0; }
        else if (h->dir == DIR_ROW) set_dims(h, a ? a->rows : -1, 1);
        else set_dims(h, 1, a ? a->cols : -1);
        break;
    case H_MATMUL:
        if (h->op == OP_TSMM) {
            int64_t n = a ? (h->flag ? a->cols : a->rows) : -1;
            set_dims(h, n, n);
        } else if (h->op == OP_TSMMA) {
            int64_t n = a && b && a->cols >= 0 && b->cols >= 0 ? a->cols + b->cols : -1;
            set_dims(h, n, n);
        } else if (h->op == OP_MATMULTL || h->op == OP_MMCHAIN) {
            set_dims(h, a ? a->cols : -1, b ? b->cols : -1);
        } else {
            set_dims(h, a ? a->rows : -1, b ? b->cols : -1);
        }
        if (h->op == OP_MATMUL || h->op == OP_MATMULTL) one_cell_dims(h, a, b);
        h->nnz = mm_nnz_of(h, false);
        break;
    case H_REORG:
        /* t(X), rev(X): the same cells moved, so X's non-zeros (as
         * SystemDS's ReorgOp) */
        if (h->op == OP_TRANS) set_dims(h, a ? a->cols : -1, a ? a->rows : -1);
        else if (h->op == OP_REV) set_dims(h, a ? a->rows : -1, a ? a->cols : -1);
        if (h->op == OP_TRANS || h->op == OP_REV) h->nnz = a && known(a) && known(h) ? a->nnz : -1;
        else if (h->op == OP_DIAG) {
            /* diag(v): the non-zeros of v on the diagonal (at most n);
             * diag(X): at most min(n, nnz(X)) */
            if (known(a) && a->cols == 1) set_dims(h, a->rows, a->rows);
            else if (known(a)) set_dims(h, a->rows, 1);
            else set_dims(h, -1, -1);
            if (known(a)) h->nnz = a->nnz >= 0 && a->nnz < a->rows ? a->nnz : a->rows;
        }
        break;
    case H_RIX:
        if (a && a->dt == DT_LIST) { h->dt = DT_LIST; break; }
        if (a && a->dt == DT_FRAME) { h->dt = DT_FRAME; h->vt = VT_STRING; break; }
        if (a && (a->dt == DT_MATRIX || a->dt == DT_ANY)) {
            if (a->dt == DT_ANY) break;
            if (h->ix.has_col)
                set_dims(h, ix_len(h->ix.rmode, h->in[1], h->in[2], a->rows),
                         ix_len(h->ix.cmode, h->in[3], h->in[4], a->cols));
            else set_dims(h, -1, -1);
        }
        break;
    case H_LIX:
        if (a) { h->dt = a->dt; h->vt = a->vt; h->rows = a->rows; h->cols = a->cols; }
        break;
    case H_BUILTIN:
        infer_builtin(h);
        break;
    case H_WHERE:
        /* several results: a list read by H_OUT hops */
        if (h->nouts > 1) { h->dt = DT_LIST; h->vt = VT_UNKNOWN; set_dims(h, -1, -1); break; }
        /* the new R: R's shape (checked against the ranges at run time) */
        h->dt = DT_MATRIX;
        h->vt = VT_DOUBLE;
        if (a && a->dt == DT_MATRIX && !h->where->bcast) set_dims(h, a->rows, a->cols);
        else if (a && a->dt == DT_MATRIX)   /* R broadcast to the products: extents above 1 stay */
            set_dims(h, a->rows > 1 ? a->rows : -1, a->cols > 1 ? a->cols : -1);
        else set_dims(h, -1, -1);
        break;
    case H_TREAD:
    case H_FCALL:
    case H_OUT:
    case H_SPOOF:
    case H_STITCH:
        break; /* set by the builder, recompilation or codegen */
    }
    /* a bound, not an estimate, of the non-zeros (nnz_ub): X * Y with
     * the non-zeros of only one of them known (a comparison's are not:
     * A * (B > t)), or computed from a bound; a transient read's is set
     * by the builder (the variable's) and recompilation (exact) */
    if (h->nin > 0 && h->kind != H_TREAD && h->kind != H_FCALL && h->kind != H_OUT && h->kind != H_SPOOF &&
        h->kind != H_STITCH) {
        bool ub = h->kind == H_BINARY && h->op == OP_MULT && a && b && a->dt == DT_MATRIX && b->dt == DT_MATRIX &&
                  (a->nnz < 0 || b->nnz < 0);
        /* the union bound above */
        ub |= h->kind == H_BINARY && h->op != OP_MULT && a && b && a->dt == DT_MATRIX && b->dt == DT_MATRIX &&
              h->nnz >= 0 && a->rows == b->rows && a->cols == b->cols && a->nnz >= 0 && b->nnz >= 0;
        /* X op s keeping X's non-zeros: exact only where no non-zero
         * becomes 0 (X * s, X / s with s finite and not 0, X ^ s, X != 0);
         * X > t and the like keep at most X's */
        double sv;
        if (h->kind == H_BINARY && a && b && a->dt == DT_MATRIX && b->kind == H_LIT && lit_num(b, &sv))
            ub |= !(((h->op == OP_MULT || h->op == OP_DIV) && sv != 0 && isfinite(sv)) || h->op == OP_POW ||
                    (h->op == OP_NE && sv == 0));
        /* a sparse-safe unary map keeping X's count: exact where no
         * non-zero maps to 0 (-, abs, sqrt, sign (NaN stays NaN), the
         * trigonometric ones), a bound for round, floor, ceil (0.3 -> 0)
         * and the tests is.na, is.nan, is.infinite */
        if (h->kind == H_UNARY && a && a->dt == DT_MATRIX)
            ub |= h->op == OP_ROUND || h->op == OP_FLOOR || h->op == OP_CEIL || h->op == OP_ISNA ||
                  h->op == OP_ISNAN || h->op == OP_ISINF;
        for (int i = 0; i < h->nin && !ub; i++) ub = h->in[i] && h->in[i]->dt == DT_MATRIX && h->in[i]->nnz_ub;
        h->nnz_ub = h->nnz >= 0 && ub;
    }
    infer_bounds(h);
    if (h->kind == H_LIX) backtrack_lix(h);
    /* worst-case output memory: a product's worst-case non-zeros, dense
     * where the non-zeros are unknown, and the bounds where the sizes are */
    int64_t wnnz = h->kind == H_MATMUL ? mm_nnz_of(h, true) : h->nnz;
    if (h->dt == DT_MATRIX && known(h))
        h->mem = wnnz >= 0 ? mb_est_size(h->rows, h->cols, wnnz) : mb_est_dense(h->rows, h->cols);
    else if (h->dt == DT_MATRIX)
        h->mem = h->wrows >= 0 && h->wcols >= 0 ? mb_est_dense(h->wrows, h->wcols) : -1;
    else if (h->dt == DT_SCALAR) h->mem = 8;
    /* operation memory: inputs, output and the kernel's own buffers
     * (unknown if any is unknown) */
    double inter = op_intermediate(h);
    h->opmem = h->mem < 0 || inter < 0 ? -1 : h->mem + inter;
    for (int i = 0; i < h->nin && h->opmem >= 0; i++)
        if (h->in[i]) h->opmem = h->in[i]->mem < 0 ? -1 : h->opmem + h->in[i]->mem;
    /* the least memory of the value: a matrix of unknown non-zeros that
     * may be sparse (a variable from an earlier block, or computed from
     * such) counts as empty, as its dense worst case says nothing of its
     * size; one from dense or generated data counts as dense */
    if (h->dt != DT_MATRIX) h->memlb = h->mem > 0 ? h->mem : 0;
    else if (!known(h)) h->memlb = 0;
    else if (h->nnz >= 0) h->memlb = mb_est_size(h->rows, h->cols, h->nnz);
    else {
        bool sparse = h->kind == H_TREAD || h->kind == H_FCALL;
        for (int i = 0; i < h->nin && !sparse; i++) {
            const Hop *x = h->in[i];
            /* an input of unknown size or non-zeros, or a known sparse one */
            sparse = x && x->dt == DT_MATRIX &&
                     (!known(x) || x->memlb < x->mem || x->memlb < mb_est_dense(x->rows, x->cols));
        }
        h->memlb = sparse ? mb_est_size(h->rows, h->cols, 0) : h->mem;
    }
    /* a matrix held compressed (docs/cla.md "Larger than the budget"):
     * its known compressed bytes (a braid-binary file's .mtd, a value at
     * recompilation); a read() the run time compresses (cbytes -1) has
     * bytes unknown until then: estimated from a sample of the file
     * (cest, "Estimated at compile time"; at least cest /
     * HOP_CEST_FACTOR), else at least a byte a row of its one group:
     * placed locally unless that passes the budget, the read checks the
     * bytes against the budget (no MPI; under mpirun the uncompressed
     * size decides, as before) */
    if (h->dt == DT_MATRIX && h->cbytes > 0) {
        h->mem = h->mem < 0 ? h->cbytes : BR_MIN(h->mem, h->cbytes);
        h->memlb = BR_MIN(h->memlb, h->mem);
    } else if (h->dt == DT_MATRIX && h->cbytes == -1 && h->kind == H_BUILTIN && h->bi == BI_READ && known(h) &&
               !dist_active()) {
        if (h->cest > 0) {
            h->mem = h->mem < 0 ? h->cest : BR_MIN(h->mem, h->cest);
            h->memlb = BR_MIN(h->memlb, h->cest / HOP_CEST_FACTOR);
        } else h->memlb = BR_MIN(h->memlb, (double)h->rows + 64 * (double)h->cols);
    }
    /* distributed (an error, for now) only when the operation surely
     * exceeds the budget; otherwise its kernels allocate what the data
     * need and fail cleanly when that cannot be had */
    double lb = h->memlb + (inter > 0 ? inter : 0);
    for (int i = 0; i < h->nin; i++)
        if (h->in[i]) lb += h->in[i]->memlb;
    h->exec = exec_type(h, lb);
}

/* An operation over a matrix that has a distributed operator (dist/). */
static bool dist_kind(const Hop *h)
{
    bool kind = h->kind == H_UNARY || h->kind == H_BINARY || h->kind == H_TERNARY || h->kind == H_AGG ||
                h->kind == H_MATMUL || h->kind == H_SPOOF;
    bool mat = h->dt == DT_MATRIX;
    for (int i = 0; i < h->nin && !mat; i++) mat = h->in[i] && h->in[i]->dt == DT_MATRIX;
    return kind && mat;
}

/* The execution type of h (seed 002, section 3.3) by the mode: hybrid
 * by its least memory against the budget, singlenode always local,
 * distributed every operation over a matrix that has a distributed
 * operator (dist/). */
static int exec_type(const Hop *h, double lb)
{
    switch (br_exec_mode()) {
    case BR_EXEC_SINGLENODE: return EX_CP;
    case BR_EXEC_DIST: return dist_kind(h) ? EX_DIST : EX_CP;
    default:
        /* under mpirun, an operation over a matrix of unknown size takes
         * the robust distributed operator, as the seed falls back to MR
         * operators; dynamic recompilation, once the sizes are known,
         * makes it local again when they are small */
        if (dist_active() && dist_kind(h)) {
            bool unknown = h->dt == DT_MATRIX && !known(h);
            for (int i = 0; i < h->nin && !unknown; i++)
                unknown = h->in[i] && h->in[i]->dt == DT_MATRIX && !known(h->in[i]);
            /* unless its worst case fits (seed 002: the worst-case
             * estimate decides where sizes are unknown) */
            if (unknown) return h->opmem >= 0 && h->opmem <= br_mem_budget() ? EX_CP : EX_DIST;
        }
        return lb > br_mem_budget() ? EX_DIST : EX_CP;
    }
}

bool hop_lazy_ifelse(const Hop *h)
{
    return h && h->kind == H_TERNARY && h->op == OP_IFELSE && h->nin == 3 && h->in[0] && h->in[1] && h->in[2] &&
           h->in[0]->dt == DT_SCALAR;
}

bool hop_ifelse_alone(const Hop *h, int k)
{
    const Hop *a = h->in[k], *o = h->in[3 - k];
    if (a->dt == DT_MATRIX) {
        if (h->dt != DT_MATRIX || (o->dt != DT_SCALAR && o->dt != DT_MATRIX)) return false;
        if (o->dt == DT_SCALAR) return true;
        /* two matrices: SystemDS requires equal shapes, so only shapes
         * known to differ by a row / column broadcast (braid's) need both;
         * no broadcast fits other shapes, and an empty one broadcasts nothing (ifelse(n > 0, M[1:n, ],
         * matrix(0, 0, 1)) is SystemDS's branch choice) */
        bool known = a->rows >= 0 && a->cols >= 0 && o->rows >= 0 && o->cols >= 0;
        bool fits = (a->rows == o->rows || a->rows == 1 || o->rows == 1) &&
                    (a->cols == o->cols || a->cols == 1 || o->cols == 1);   /* k_ifelse's broadcast */
        return !known || (a->rows == o->rows && a->cols == o->cols) || !fits || a->rows == 0 || a->cols == 0 ||
               o->rows == 0 || o->cols == 0;
    }
    return a->dt == DT_SCALAR && o->dt == DT_SCALAR && h->dt == DT_SCALAR;
}

bool hop_outer_like(const Hop *h, int64_t *r)
{
    if (!h || h->kind != H_MATMUL || h->op != OP_MATMUL || h->nin != 2 || !known(h)) return false;
    const Hop *u = h->in[0], *b = h->in[1];
    if (!known(u) || !known(b) || u->cols != b->rows) return false;
    *r = u->cols;
    return *r >= 1 && u->rows > 1 && b->cols > 1 && *r < u->rows && *r < b->cols;
}

const char *hop_opname(const Hop *h)
{
    switch (h->kind) {
    case H_LIT: return "LIT";
    case H_TREAD: return "TRead";
    case H_UNARY: return op_info[h->op].name;
    case H_BINARY: return op_info[h->op].name;
    case H_TERNARY: return op_info[h->op].name;
    case H_AGG: return op_info[h->op].name;
    case H_MATMUL: return op_info[h->op].name;
    case H_REORG: return op_info[h->op].name;
    case H_RIX: return "rix";
    case H_LIX: return "lix";
    case H_BUILTIN: return builtin_info[h->bi].name;
    case H_FCALL: return h->func ? h->func->name : "fcall";
    case H_OUT: return "out";
    case H_SPOOF: return h->name ? h->name : "spoof";
    case H_WHERE: return "where";
    case H_STITCH: return "stitch";
    }
    return "?";
}

static void lit_text(const Value *v, char *buf, size_t n)
{
    switch (v->kind) {
    case V_INT: snprintf(buf, n, "%lld", (long long)v->i); break;
    case V_DOUBLE: snprintf(buf, n, "%g", v->d); break;
    case V_BOOL: snprintf(buf, n, "%s", v->b ? "TRUE" : "FALSE"); break;
    case V_STRING: snprintf(buf, n, "\"%.40s\"", v->s->s); break;
    default: snprintf(buf, n, "?"); break;
    }
}

static void fmt_mem(double m, char *buf, size_t n)
{
    if (m < 0) snprintf(buf, n, "-");
    else if (m < 1024) snprintf(buf, n, "%.0fB", m);
    else if (m < 1024.0 * 1024) snprintf(buf, n, "%.1fKB", m / 1024);
    else if (m < 1024.0 * 1024 * 1024) snprintf(buf, n, "%.1fMB", m / 1048576);
    else snprintf(buf, n, "%.1fGB", m / 1073741824.0);
}

/* Marks the hops reachable from roots and writes (caller frees; NULL
 * when out of memory). */
static char *reachable_set(const HopDag *d)
{
    int n;
    char *seen;
    free(hop_walk(d, &n, &seen));
    return seen;
}

void hop_dag_print(const HopDag *d, FILE *out, int indent)
{
    char *live = reachable_set(d);
    if (!live) { fprintf(out, "%*s(out of memory)\n", indent, ""); return; }
    for (int i = 0; i < d->n; i++) {
        const Hop *h = d->hops[i];
        if (!live[h->id]) continue;
        char lit[64] = "", mem[32];
        if (h->kind == H_LIT) lit_text(&h->lit, lit, sizeof lit);
        fmt_mem(h->mem, mem, sizeof mem);
        fprintf(out, "%*s(%d) %s%s%s %s", indent, "", h->id,
                h->kind == H_AGG ? (h->dir == DIR_FULL ? "ua(" : h->dir == DIR_ROW ? "uar(" : "uac(") : "",
                hop_opname(h), h->kind == H_AGG ? ")" : "", lit);
        if (h->kind == H_TREAD) fprintf(out, " %s%s", h->name, h->move ? " [move]" : "");
        if (h->kind == H_OUT) fprintf(out, "[%d]", h->out_index);
        fprintf(out, " (");
        for (int k = 0; k < h->nin; k++) {
            if (h->in[k]) fprintf(out, "%s%d", k ? "," : "", h->in[k]->id);
            else fprintf(out, "%s-", k ? "," : "");
        }
        fprintf(out, ")");
        if (h->dt == DT_MATRIX)
            fprintf(out, " [%lld,%lld,%lld]", (long long)h->rows, (long long)h->cols, (long long)h->nnz);
        if (h->dt == DT_MATRIX && !known(h) && h->wrows >= 0 && h->wcols >= 0)   /* worst case */
            fprintf(out, " <=[%lld,%lld]", (long long)h->wrows, (long long)h->wcols);
        else if (h->dt == DT_SCALAR) fprintf(out, " [scalar]");
        else if (h->dt == DT_LIST) fprintf(out, " [list]");
        char opm[32];
        fmt_mem(h->opmem, opm, sizeof opm);
        fprintf(out, " %s/%s %s\n", mem, opm, h->exec == EX_DIST ? "DIST" : "CP");
    }
    for (int i = 0; i < d->nw; i++)
        fprintf(out, "%*sTWrite %s (%d)\n", indent, "", d->wnames[i], d->whops[i]->id);
    free(live);
}

/* A Graphviz string: quotes, backslashes and newlines of s escaped. */
static void dot_escaped(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', out);
        if (*s == '\n') fputs("\\n", out);
        else fputc(*s, out);
    }
}

/* One hop's node: what it computes, then its size, sparsity, memory
 * estimate and execution type; filled by role (fused operators orange,
 * inputs blue, literals grey, as python/braid/plot.py draws them). */
static void dot_node(const Hop *h, FILE *out)
{
    char lit[64] = "", mem[32];
    if (h->kind == H_LIT) lit_text(&h->lit, lit, sizeof lit);
    fmt_mem(h->mem, mem, sizeof mem);
    fprintf(out, "  h%d [label=\"%d: %s", h->id, h->id, hop_opname(h));
    if (h->kind == H_AGG) fputs(h->dir == DIR_ROW ? " (row)" : h->dir == DIR_COL ? " (col)" : "", out);
    if (h->kind == H_TREAD || h->kind == H_LIT) fputc(' ', out);
    dot_escaped(out, h->kind == H_TREAD ? h->name : lit);
    if (h->dt == DT_MATRIX) {
        fprintf(out, "\\n[%lld x %lld]", (long long)h->rows, (long long)h->cols);
        if (h->nnz >= 0 && h->rows > 0 && h->cols > 0)
            fprintf(out, " nnz %lld (%.3g)", (long long)h->nnz, (double)h->nnz / ((double)h->rows * (double)h->cols));
    } else if (h->dt == DT_SCALAR) fputs("\\nscalar", out);
    else if (h->dt == DT_LIST) fputs("\\nlist", out);
    fprintf(out, "\\n%s %s\"", mem, h->exec == EX_DIST ? "DIST" : "CP");
    if (h->kind == H_SPOOF) fputs(",style=filled,fillcolor=\"#f5b041\"", out);
    else if (h->kind == H_TREAD) fputs(",style=filled,fillcolor=\"#aed6f1\"", out);
    else if (h->kind == H_LIT) fputs(",style=filled,fillcolor=\"#e5e7e9\"", out);
    fputs("];\n", out);
}

void hop_dag_dot(const HopDag *d, FILE *out, const char *title)
{
    char *live = reachable_set(d);
    if (!live) return;
    fputs("digraph \"", out);
    dot_escaped(out, title);
    fputs("\" {\n  rankdir=TB;\n  labelloc=t;\n  label=\"", out);
    dot_escaped(out, title);
    fputs("\";\n  node [shape=box,style=rounded,fontsize=10];\n", out);
    for (int i = 0; i < d->n; i++) {
        const Hop *h = d->hops[i];
        if (!live[h->id]) continue;
        dot_node(h, out);
        for (int k = 0; k < h->nin; k++) {   /* one edge per distinct input */
            int j = 0;
            while (j < k && h->in[j] != h->in[k]) j++;
            if (h->in[k] && j == k) fprintf(out, "  h%d -> h%d;\n", h->in[k]->id, h->id);
        }
    }
    for (int i = 0; i < d->nw; i++) {
        fprintf(out, "  w%d [shape=box,style=bold,label=\"write ", i);
        dot_escaped(out, d->wnames[i]);
        fprintf(out, "\"];\n  h%d -> w%d;\n", d->whops[i]->id, i);
    }
    fputs("}\n", out);
    free(live);
}

/* ---- constructors (sizes inferred) ----
 * Each returns NULL when out of memory (d->oom set) or when an input is
 * NULL (the failure of an earlier constructor), so nested calls need one
 * check of the outermost result. */

Hop *hop_lit(HopDag *d, Value v, Span sp)
{
    Hop *h = hop_new(d, H_LIT, sp, 0);
    if (!h) { val_release(&v); return NULL; }
    h->lit = v;
    hop_infer(h);
    return h;
}

Hop *hop_unary(HopDag *d, OpCode op, Hop *a, Span sp)
{
    Hop *h = !a ? NULL : hop_new(d, H_UNARY, sp, 1);
    if (!h) return NULL;
    h->op = op;
    h->in[0] = a;
    hop_infer(h);
    return h;
}

Hop *hop_binary(HopDag *d, OpCode op, Hop *a, Hop *b, Span sp)
{
    Hop *h = !a || !b ? NULL : hop_new(d, H_BINARY, sp, 2);
    if (!h) return NULL;
    h->op = op;
    h->in[0] = a;
    h->in[1] = b;
    hop_infer(h);
    return h;
}

Hop *hop_agg(HopDag *d, OpCode op, AggDir dir, Hop *a, Span sp)
{
    Hop *h = !a ? NULL : hop_new(d, H_AGG, sp, 1);
    if (!h) return NULL;
    h->op = op;
    h->dir = dir;
    h->in[0] = a;
    hop_infer(h);
    return h;
}

Hop *hop_reorg(HopDag *d, OpCode op, Hop *a, Span sp)
{
    Hop *h = !a ? NULL : hop_new(d, H_REORG, sp, 1);
    if (!h) return NULL;
    h->op = op;
    h->in[0] = a;
    hop_infer(h);
    return h;
}

Hop *hop_as_scalar(HopDag *d, Hop *x, Span sp)
{
    Hop *h = x ? hop_new(d, H_BUILTIN, sp, 1) : NULL;
    if (!h) return NULL;
    h->bi = BI_ASSCALAR;
    h->in[0] = x;
    h->dt = DT_SCALAR;
    h->vt = VT_DOUBLE;
    hop_infer(h);
    h->dt = DT_SCALAR;
    h->vt = VT_DOUBLE;
    h->rows = h->cols = 0;
    return h;
}

Hop *hop_matmul(HopDag *d, OpCode op, Hop *a, Hop *b, Span sp)
{
    Hop *h = !a || !b ? NULL : hop_new(d, H_MATMUL, sp, 2);
    if (!h) return NULL;
    h->op = op;
    h->in[0] = a;
    h->in[1] = b;
    hop_infer(h);
    return h;
}

/* nrow, ncol and length of a matrix whose size is known (seed 002,
 * section 3: size expressions become constants, so sizes and branch
 * predicates that use them fold further). */
static Hop *fold_size(HopDag *d, Hop *h)
{
    const Hop *x = h->nin >= 1 ? h->in[0] : NULL;
    if (!x || x->dt != DT_MATRIX || !known(x)) return h;
    int64_t v = h->bi == BI_NROW ? x->rows : h->bi == BI_NCOL ? x->cols : x->rows * x->cols;
    Hop *l = hop_lit(d, val_int(v), h->span);
    return l ? l : h;
}

Hop *hop_fold(HopDag *d, Hop *h)
{
    if (h->nin == 0) return h;
    if (h->kind == H_BUILTIN && (h->bi == BI_NROW || h->bi == BI_NCOL || h->bi == BI_LENGTH))
        return fold_size(d, h);
    for (int k = 0; k < h->nin; k++)
        if (!h->in[k] || h->in[k]->kind != H_LIT) return h;
    Value out = val_none();
    BrErr e = {0};
    int rc;
    switch (h->kind) {
    case H_UNARY: rc = ap_unary(h->op, &h->in[0]->lit, &out, &e); break;
    case H_BINARY: rc = ap_binary(h->op, &h->in[0]->lit, &h->in[1]->lit, &out, &e); break;
    case H_TERNARY: rc = ap_ternary(&h->in[0]->lit, &h->in[1]->lit, &h->in[2]->lit, &out, &e); break;
    default: return h;
    }
    if (rc || !val_is_scalar(&out)) { val_release(&out); return h; }
    Hop *l = hop_lit(d, out, h->span);
    return l ? l : h;
}
