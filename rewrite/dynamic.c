/* dynamic.c: size-dependent rewrites (seed 002, equation 6), matrix
 * multiplication chain ordering by dynamic programming, physical operator
 * selection (tsmm, mmchain, transpose-free t(X)%*%y) and memory estimates
 * with the local/distributed decision (section 3.3). */
#include "rewrite.h"
#include "../base/vec.h"
#include "../dist/dist.h"
#include "../gpu/gpu.h"

#include <stdlib.h>
#include <string.h>

static bool known(const Hop *h) { return h && h->dt == DT_MATRIX && h->rows >= 0 && h->cols >= 0; }
static bool is(const Hop *h, HopKind k, OpCode op) { return h && h->kind == k && h->op == op; }

/* Counts a rewrite to r (NULL: out of memory, no rewrite). */
static Hop *hit(RwPass *p, Hop *r)
{
    if (r && p->st) p->st->dynamic++;
    return r;
}

/* matrix(0, rows, cols) as a HOP (sizes known). */
static Hop *zeros(RwPass *p, int64_t r, int64_t c, Span sp)
{
    const BuiltinInfo *bi = &builtin_info[BI_MATRIX];
    Hop *h = hop_new(p->d, H_BUILTIN, sp, 5);
    if (!h) return NULL;
    h->bi = bi->id;
    h->in[0] = hop_lit(p->d, val_double(0), sp);
    h->in[1] = hop_lit(p->d, val_int(r), sp);
    h->in[2] = hop_lit(p->d, val_int(c), sp);
    h->in[3] = hop_lit(p->d, val_bool(true), sp);
    h->in[4] = hop_lit(p->d, val_bool(false), sp);
    for (int k = 0; k < 5; k++) if (!h->in[k]) return NULL;
    h->dt = DT_MATRIX;
    h->vt = VT_DOUBLE;
    h->rows = r;
    h->cols = c;
    h->nnz = 0;
    h->mem = mb_est_sparse(r, c, 0);
    return h;
}

static bool empty(const Hop *h) { return known(h) && h->nnz == 0; }
static bool one_cell(const Hop *h) { return known(h) && h->rows == 1 && h->cols == 1; }

/* The column vector v of a broadcast written as an outer product with
 * ones, v %*% matrix(1, rows=1, cols=k) (MLogreg's rowSums(Q) %*%
 * matrix(1, 1, K)), where the cellwise operator reading it has the
 * product's shape as its other operand x: NULL otherwise. */
static Hop *col_bcast(const Hop *m, const Hop *x)
{
    if (!is(m, H_MATMUL, OP_MATMUL) || m->nin != 2 || !known(m) || !known(x)) return NULL;
    Hop *v = m->in[0];
    const Hop *o = m->in[1];
    if (!known(v) || v->cols != 1 || !o || o->kind != H_BUILTIN || o->bi != BI_MATRIX || o->nin < 1 ||
        !rw_is_lit(o->in[0], 1) || o->rows != 1 || o->cols < 2)
        return NULL;
    return rw_same_dims(m, x) ? v : NULL;
}

Hop *rw_dynamic_rule(RwPass *p, Hop *h)
{
    Span sp = h->span;
    switch (h->kind) {
    case H_AGG: {
        Hop *x = h->in[0];
        if (!known(x)) break;
        bool safe = h->op == OP_SUM || h->op == OP_MEAN || h->op == OP_AMIN || h->op == OP_AMAX ||
                    h->op == OP_PROD || h->op == OP_SUMSQ;
        /* rowSums(X) with ncol(X) == 1, colSums(X) with nrow(X) == 1 -> X */
        if (safe && h->op != OP_SUMSQ && ((h->dir == DIR_ROW && x->cols == 1) || (h->dir == DIR_COL && x->rows == 1)))
            return hit(p, x);
        /* aggregates of an empty matrix */
        if (h->dir == DIR_FULL && (h->op == OP_SUM || h->op == OP_SUMSQ) && empty(x))
            return hit(p, hop_lit(p->d, val_double(0), sp));
        if (h->dir != DIR_FULL && (h->op == OP_SUM || h->op == OP_SUMSQ) && empty(x))
            return hit(p, zeros(p, h->dir == DIR_ROW ? x->rows : 1, h->dir == DIR_ROW ? 1 : x->cols, sp));
        break;
    }
    case H_BINARY: {
        Hop *a = h->in[0], *b = h->in[1], *v;
        /* X op (v %*% matrix(1, 1, k)) -> X op v, and (v %*% matrix(1, 1,
         * k)) op X -> v op X, for X of the product's shape (SystemDS's
         * removeUnnecessaryOuterProduct): the cellwise operator
         * broadcasts the column vector; no n x k repeat of v is made, and
         * the Row template fuses v as the row's scalar (MLogreg's
         * Hessian-vector product: one operator and one pass over X
         * instead of two, docs/perf.md). The same values: v times the
         * literal 1 is v (a signed zero may lose its sign). */
        if (known(h) && a->dt == DT_MATRIX && b->dt == DT_MATRIX) {
            if ((v = col_bcast(b, a))) return hit(p, hop_binary(p->d, h->op, a, v, sp));
            if ((v = col_bcast(a, b))) return hit(p, hop_binary(p->d, h->op, v, b, sp));
        }
        /* X * Y with an empty operand of the output's shape */
        if (h->op == OP_MULT && known(h) && ((empty(a) && rw_same_dims(a, h)) ||
                                             (empty(b) && rw_same_dims(b, h))))
            return hit(p, zeros(p, h->rows, h->cols, sp));
        /* X + 0, X - 0, 0 + X with an empty operand of X's shape (exact:
         * x + 0 is x, NaN included); 0 - X -> -X */
        if ((h->op == OP_PLUS || h->op == OP_MINUS) && known(a) && known(b) && rw_same_dims(a, b)) {
            if (empty(b)) return hit(p, a);
            if (empty(a) && h->op == OP_PLUS) return hit(p, b);
            if (empty(a)) return hit(p, hop_unary(p->d, OP_NEG, b, sp));
        }
        break;
    }
    case H_UNARY:
        /* a sparse-safe operation (round, abs, sqrt, sign, ...) of an
         * empty matrix is empty */
        if ((op_info[h->op].flags & OF_SAFE) && known(h) && empty(h->in[0]))
            return hit(p, zeros(p, h->rows, h->cols, sp));
        break;
    case H_REORG:
        /* t(), rev() of an empty matrix: empty of the output's shape */
        if ((h->op == OP_TRANS || h->op == OP_REV) && known(h) && empty(h->in[0]))
            return hit(p, zeros(p, h->rows, h->cols, sp));
        /* diag(X %*% Y) -> rowSums(X * t(Y)): only the diagonal's dot
         * products, not the whole square product */
        if (h->op == OP_DIAG && is(h->in[0], H_MATMUL, OP_MATMUL) && known(h->in[0]) &&
            h->in[0]->rows == h->in[0]->cols && h->in[0]->cols > 1 && rw_uses(p->d, h->in[0]) == 1) {
            Hop *x = h->in[0]->in[0], *y = h->in[0]->in[1];
            Hop *ty = hop_reorg(p->d, OP_TRANS, y, sp);
            return hit(p, hop_agg(p->d, OP_SUM, DIR_ROW, hop_binary(p->d, OP_MULT, x, ty, sp), sp));
        }
        break;
    case H_MATMUL:
        if (h->op != OP_MATMUL) break;
        if (known(h) && (empty(h->in[0]) || empty(h->in[1])))
            return hit(p, zeros(p, h->rows, h->cols, sp));
        /* y %*% X -> as.scalar(y) * X, X %*% y -> X * as.scalar(y) for a
         * 1x1 y (SystemDS's simplifyScalarMatrixMult): the same values
         * (one product per cell), and the product whose inner sizes
         * differ computes what SystemDS computes */
        if (one_cell(h->in[0]))
            return hit(p, hop_binary(p->d, OP_MULT, hop_as_scalar(p->d, h->in[0], sp), h->in[1], sp));
        if (one_cell(h->in[1]))
            return hit(p, hop_binary(p->d, OP_MULT, h->in[0], hop_as_scalar(p->d, h->in[1], sp), sp));
        /* diag(v) %*% y -> v * y for column vectors */
        if (is(h->in[0], H_REORG, OP_DIAG) && known(h->in[0]->in[0]) && h->in[0]->in[0]->cols == 1 &&
            known(h->in[1]) && h->in[1]->cols == 1)
            return hit(p, hop_binary(p->d, OP_MULT, h->in[0]->in[0], h->in[1], sp));
        break;
    case H_RIX: {
        Hop *x = h->in[0];
        double a, b;
        /* indexing into an empty matrix */
        if (known(h) && empty(x)) return hit(p, zeros(p, h->rows, h->cols, sp));
        if (!known(x) || !h->ix.has_col) break;
        bool rfull = h->ix.rmode == IX_ALL || (h->ix.rmode == IX_RANGE && rw_is_lit(h->in[1], 1) &&
                     h->in[2] && h->in[2]->kind == H_LIT && (b = val_as_double(&h->in[2]->lit)) == (double)x->rows);
        bool cfull = h->ix.cmode == IX_ALL || (h->ix.cmode == IX_RANGE && rw_is_lit(h->in[3], 1) &&
                     h->in[4] && h->in[4]->kind == H_LIT && (a = val_as_double(&h->in[4]->lit)) == (double)x->cols);
        if (h->ix.rmode == IX_SINGLE && x->rows == 1 && rw_is_lit(h->in[1], 1)) rfull = true;
        if (h->ix.cmode == IX_SINGLE && x->cols == 1 && rw_is_lit(h->in[3], 1)) cfull = true;
        if (rfull && cfull) return hit(p, x);
        break;
    }
    default: break;
    }
    return h;
}

/* ---- matrix multiplication chains (dynamic programming on sizes) ---- */

typedef struct Chain { Hop **m; int n, cap; } Chain;

/* Appends h to c; false when out of memory. */
static bool chain_push(Chain *c, Hop *h)
{
    if (!br_grow((void **)&c->m, &c->cap, c->n + 1, sizeof(Hop *))) return false;
    c->m[c->n++] = h;
    return true;
}

/* Collects the operands of a maximal chain rooted at h: inner products
 * with a single consumer are flattened. False when out of memory. */
static bool collect(const HopDag *d, Hop *h, Chain *c, bool root)
{
    if (is(h, H_MATMUL, OP_MATMUL) && (root || rw_uses(d, h) == 1))
        return collect(d, h->in[0], c, false) && collect(d, h->in[1], c, false);
    return chain_push(c, h);
}

/* FLOPs of the chain tree under h as currently parenthesized. */
static double tree_cost(const HopDag *d, Hop *h, bool root)
{
    if (!(is(h, H_MATMUL, OP_MATMUL) && (root || rw_uses(d, h) == 1))) return 0;
    return tree_cost(d, h->in[0], false) + tree_cost(d, h->in[1], false) +
           (double)h->in[0]->rows * (double)h->in[0]->cols * (double)h->in[1]->cols;
}

static Hop *build_order(HopDag *d, Hop **m, int *split, int n, int i, int j, Span sp)
{
    if (i == j) return m[i];
    int k = split[i * n + j];
    Hop *a = build_order(d, m, split, n, i, k, sp);
    Hop *b = build_order(d, m, split, n, k + 1, j, sp);
    return hop_matmul(d, OP_MATMUL, a, b, sp);
}

/* Reorders chains of 3+ products with known sizes to minimize FLOPs. */
void rw_mmchain(HopDag *d, RwStats *st)
{
    for (int idx = 0; idx < d->n; idx++) {
        Hop *h = d->hops[idx];
        if (!is(h, H_MATMUL, OP_MATMUL)) continue;
        Chain c = {0};
        if (!collect(d, h, &c, true)) { d->oom = true; free(c.m); return; }
        int n = c.n;
        bool ok = n >= 3;
        for (int i = 0; i < n && ok; i++) ok = known(c.m[i]);
        for (int i = 0; i + 1 < n && ok; i++) ok = c.m[i]->cols == c.m[i + 1]->rows;
        if (!ok) { free(c.m); continue; }
        double *cost = calloc((size_t)(n * n), sizeof(double));
        int *split = calloc((size_t)(n * n), sizeof(int));
        if (!cost || !split) {
            d->oom = true;
            free(cost);
            free(split);
            free(c.m);
            return;
        }
        for (int len = 2; len <= n; len++)
            for (int i = 0; i + len - 1 < n; i++) {
                int j = i + len - 1;
                cost[i * n + j] = 1e300;
                for (int k = i; k < j; k++) {
                    double cc = cost[i * n + k] + cost[(k + 1) * n + j] +
                                (double)c.m[i]->rows * (double)c.m[k]->cols * (double)c.m[j]->cols;
                    if (cc < cost[i * n + j]) { cost[i * n + j] = cc; split[i * n + j] = k; }
                }
            }
        /* rebuild only if the optimal order is cheaper than the written one;
         * h is updated in place so consumers, roots and writes see it */
        if (cost[n - 1] < 0.999 * tree_cost(d, h, true)) {
            Hop *best = build_order(d, c.m, split, n, 0, n - 1, h->span);
            if (!best) { free(cost); free(split); free(c.m); return; }   /* d->oom set */
            h->in[0] = best->in[0];
            h->in[1] = best->in[1];
            hop_infer(h);
            if (st) st->mmchain++;
        }
        free(cost);
        free(split);
        free(c.m);
    }
}

/* ---- physical operators ---- */

static bool colvec(const Hop *h) { return known(h) && h->cols == 1; }

/* t(X) %*% (w * (X %*% v)) and t(X) %*% (X %*% v) -> mmchain(X, v, w)
 * for a column vector v (and w) of known sizes; NULL when b (the right
 * side) does not match. */
static Hop *mmchain_rule(RwPass *p, Hop *x, Hop *b, Span sp)
{
    Hop *xv = NULL, *w = NULL;
    if (is(b, H_MATMUL, OP_MATMUL) && b->in[0] == x) xv = b;
    else if (is(b, H_BINARY, OP_MULT)) {
        if (is(b->in[1], H_MATMUL, OP_MATMUL) && b->in[1]->in[0] == x) { xv = b->in[1]; w = b->in[0]; }
        else if (is(b->in[0], H_MATMUL, OP_MATMUL) && b->in[0]->in[0] == x) { xv = b->in[0]; w = b->in[1]; }
    }
    if (!xv || !colvec(xv->in[1]) || (w && !colvec(w)) || !known(x) || (w && w->rows != x->rows))
        return NULL;
    Hop *m = hop_new(p->d, H_MATMUL, sp, 3);
    if (!m) return NULL;
    m->op = OP_MMCHAIN;
    m->in[0] = x;
    m->in[1] = xv->in[1];
    m->in[2] = w;
    m->dt = DT_MATRIX;
    m->vt = VT_DOUBLE;
    m->rows = x->cols;
    m->cols = 1;
    m->mem = mb_est_dense(m->rows, 1);
    if (p->st) p->st->physical++;
    return m;
}

/* Is h an elementwise expression (depth levels at most) over an
 * outer-product-like product U %*% t(V)? */
static bool outer_driven(const Hop *h, int depth)
{
    int64_t r;
    if (!h || depth < 0) return false;
    if (hop_outer_like(h, &r)) return true;
    if (h->kind != H_BINARY && h->kind != H_UNARY) return false;
    for (int i = 0; i < h->nin; i++)
        if (h->in[i] && rw_same_dims(h->in[i], h) && outer_driven(h->in[i], depth - 1)) return true;
    return false;
}

/* tsmm(t(Y)) of one side -> tsmm(Y) of the other (t(t(Y)) %*% t(Y) =
 * Y %*% t(Y)), tmm(t(Y), z) -> Y %*% z: the transposed reads of an
 * input bound as a transposed view (a column-major buffer, api/views.c)
 * whose type was unknown when the product was chosen, so that
 * t(t(Y)) -> Y could not fire before. h itself when neither applies. */
static Hop *untransposed(RwPass *p, Hop *h)
{
    Hop *y = is(h->in[0], H_REORG, OP_TRANS) ? h->in[0]->in[0] : NULL;
    if (!y || y->dt != DT_MATRIX) return h;
    Hop *r;
    if (h->op == OP_TSMM) {
        if (!(r = hop_new(p->d, H_MATMUL, h->span, 1))) return h;
        r->op = OP_TSMM;
        r->flag = !h->flag;
        r->in[0] = y;
    } else if (!(r = hop_matmul(p->d, OP_MATMUL, y, h->in[1], h->span)))
        return h;
    hop_infer(r);
    if (p->st) p->st->physical++;
    return r;
}

Hop *rw_physical_rule(RwPass *p, Hop *h)
{
    Span sp = h->span;
    if (is(h, H_MATMUL, OP_TSMM) || (is(h, H_MATMUL, OP_MATMULTL) && is(h->in[0], H_REORG, OP_TRANS))) {
        Hop *u = untransposed(p, h);
        if (u != h) return u;
    }
    /* tmm chosen while the sizes were unknown: mmchain once they are
     * (recompilation) */
    if (is(h, H_MATMUL, OP_MATMULTL)) {
        Hop *mc = mmchain_rule(p, h->in[0], h->in[1], sp);
        return mc ? mc : h;
    }
    if (h->kind != H_MATMUL || h->op != OP_MATMUL) return h;
    Hop *a = h->in[0], *b = h->in[1];
    if (is(a, H_REORG, OP_TRANS)) {
        Hop *x = a->in[0];
        /* t(X) %*% X -> tsmm(left) */
        if (b == x) {
            Hop *t = hop_new(p->d, H_MATMUL, sp, 1);
            if (!t) return h;
            t->op = OP_TSMM;
            t->flag = 1;
            t->in[0] = x;
            hop_infer(t);
            if (p->st) p->st->physical++;
            return untransposed(p, t);
        }
        Hop *mc = mmchain_rule(p, x, b, sp);
        if (mc) return mc;
        /* t(X) %*% y -> tmm(X, y): no materialized transpose, when t(X) is
         * used only here, or when y is an outer-product-like expression:
         * then the product is the right product of a fused Outer operator
         * (t(U) %*% (W * (U %*% t(V)))), whatever else needs t(U) */
        if (rw_uses(p->d, a) == 1 || outer_driven(b, 3)) {
            Hop *m = hop_matmul(p->d, OP_MATMULTL, x, b, sp);
            if (!m) return h;
            m->rows = x->cols;
            m->cols = b->cols;
            hop_infer(m);
            if (p->st) p->st->physical++;
            return untransposed(p, m);
        }
    }
    /* X %*% t(X) -> tsmm(right) */
    if (is(b, H_REORG, OP_TRANS) && b->in[0] == a) {
        Hop *t = hop_new(p->d, H_MATMUL, sp, 1);
        if (!t) return h;
        t->op = OP_TSMM;
        t->flag = 0;
        t->in[0] = a;
        hop_infer(t);
        if (p->st) p->st->physical++;
        return untransposed(p, t);
    }
    return h;
}

/* ---- t(X) %*% X and t(X) %*% v in one pass (lmDS) ---- */

/* At most these columns of X and of v. Up to ~32 columns tsmm's leaves
 * read X at about the read rate and the saved pass is most of the
 * product's time (lm at scale 0.5: 5,000,000 x 10 0.79, 2,500,000 x 20
 * 0.84 of the two passes); past that t(X) %*% X is compute-bound (1e6 x
 * 50: 0.87-1.03, 500,000 x 100: 0.97-1.07 of the two passes). */
#define TSMMA_MAX_X 32
#define TSMMA_MAX_V 8

/* Does h reach target through its inputs (seen: a mark per hop id, ids
 * 1..n)? */
static bool reaches(const Hop *h, const Hop *target, char *seen, int n)
{
    if (!h) return false;
    if (h == target) return true;
    if (h->id > n || seen[h->id]) return false;
    seen[h->id] = 1;
    for (int i = 0; i < h->nin; i++)
        if (reaches(h->in[i], target, seen, n)) return true;
    return false;
}

/* Z[r0:r1, c0:c1] (1-based, inclusive) as an H_RIX of literal bounds. */
static Hop *block_of(HopDag *d, Hop *z, int64_t r0, int64_t r1, int64_t c0, int64_t c1, Span sp)
{
    Hop *h = hop_new(d, H_RIX, sp, 5);
    if (!h) return NULL;
    h->in[0] = z;
    h->ix.has_col = true;
    h->ix.rmode = h->ix.cmode = IX_RANGE;
    h->in[1] = hop_lit(d, val_int(r0), sp);
    h->in[2] = hop_lit(d, val_int(r1), sp);
    h->in[3] = hop_lit(d, val_int(c0), sp);
    h->in[4] = hop_lit(d, val_int(c1), sp);
    for (int k = 1; k < 5; k++) if (!h->in[k]) return NULL;
    hop_infer(h);
    return h;
}

int rw_tsmm_cbind(HopDag *d, RwStats *st)
{
    /* the distributed and GPU backends have tsmm and tmm, not this */
    if (dist_active() || gpu_mode() != GPU_OFF) return 0;
    int n, nh = d->n;
    Hop **order = hop_walk(d, &n, NULL);
    Hop **map = calloc((size_t)nh + 2, sizeof(Hop *));
    char *seen = calloc((size_t)nh + 2, 1);
    if (!order || !map || !seen) {
        free(order);
        free(map);
        free(seen);
        return 0;   /* out of memory: no rewrite */
    }
    int done = 0;
    for (int i = 0; i < n; i++) {
        Hop *h = order[i], *X = h->in && h->nin > 0 ? h->in[0] : NULL;
        if (!is(h, H_MATMUL, OP_TSMM) || !h->flag || h->nin != 1 || map[h->id] || !known(X) || X->cols < 1 ||
            X->cols > TSMMA_MAX_X || X->rows < 1 || map[X->id])
            continue;
        /* a known sparse X: tsmm's sparse kernel, no pass to save */
        if (X->nnz >= 0 && !X->nnz_ub && (double)X->nnz < 0.4 * (double)X->rows * (double)X->cols) continue;
        for (int j = 0; j < n; j++) {
            Hop *t = order[j], *v = t->nin == 2 ? t->in[1] : NULL;
            if (!is(t, H_MATMUL, OP_MATMULTL) || t->in[0] != X || map[t->id] || !known(v) || v == X ||
                v->rows != X->rows || v->cols < 1 || v->cols > TSMMA_MAX_V || map[v->id] || t->exec != h->exec)
                continue;
            /* v computed from t(X) %*% X would make a cycle */
            memset(seen, 0, (size_t)nh + 2);
            if (reaches(v, h, seen, nh)) continue;
            int64_t m = X->cols, k = v->cols;
            Hop *z = hop_new(d, H_MATMUL, h->span, 2);
            if (!z) break;
            z->op = OP_TSMMA;
            z->in[0] = X;
            z->in[1] = v;
            hop_infer(z);
            Hop *a = block_of(d, z, 1, m, 1, m, h->span), *b = block_of(d, z, 1, m, m + 1, m + k, t->span);
            if (!a || !b) break;
            /* (CSE ran before: t is the one product t(X) %*% v) */
            map[h->id] = a;
            map[t->id] = b;
            done++;
            break;
        }
    }
    if (done) {
        for (int i = 0; i < n; i++)
            for (int k = 0; k < order[i]->nin; k++)
                if (order[i]->in[k] && order[i]->in[k]->id <= nh && map[order[i]->in[k]->id])
                    order[i]->in[k] = map[order[i]->in[k]->id];
        for (int i = 0; i < d->nroots; i++)
            if (d->roots[i] && d->roots[i]->id <= nh && map[d->roots[i]->id]) d->roots[i] = map[d->roots[i]->id];
        for (int i = 0; i < d->nw; i++)
            if (d->whops[i] && d->whops[i]->id <= nh && map[d->whops[i]->id]) d->whops[i] = map[d->whops[i]->id];
        if (st) st->physical += done;
    }
    free(order);
    free(map);
    free(seen);
    return done;
}
