/* simplify.c: static algebraic simplifications (seed 002, equation 5, plus
 * the common ones real scripts need). Each rule looks at one HOP whose
 * inputs are already simplified and returns its replacement (or itself). */
#include "rewrite.h"

#include <string.h>

static bool ismat(const Hop *h) { return h && h->dt == DT_MATRIX; }
static bool isnum(const Hop *h)
{
    return h && (h->dt == DT_MATRIX || (h->dt == DT_SCALAR && (h->vt == VT_DOUBLE || h->vt == VT_INT)));
}
static bool is(const Hop *h, HopKind k, OpCode op) { return h && h->kind == k && h->op == op; }

/* Counts a rewrite to r; a NULL r (out of memory building it, d->oom
 * set) is no rewrite. */
static Hop *hit(RwPass *p, Hop *r)
{
    if (r && p->st) p->st->simplified++;
    return r;
}

/* X[1:nrow(X), 1:ncol(X)] and the like: does the index range cover all? */
static bool full_range(const Hop *x, int mode, const Hop *lo, const Hop *hi, bool rows)
{
    if (mode == IX_ALL) return true;
    if (mode != IX_RANGE || !rw_is_lit(lo, 1)) return false;
    int64_t n = rows ? x->rows : x->cols;
    if (n >= 0 && rw_is_lit(hi, (double)n)) return true;
    return hi && hi->kind == H_BUILTIN && hi->bi == (rows ? BI_NROW : BI_NCOL) && hi->in[0] == x;
}

/* x op e -> x for the identity e of op (ops.def's OF_ID0 / OF_ID1; with
 * OF_COMM also e op x) when the value type stays (5 / 1 is 5.0). */
static Hop *drop_identity(RwPass *p, Hop *h)
{
    Hop *a = h->in[0], *b = h->in[1];
    int fl = op_info[h->op].flags;
    if (!(fl & (OF_ID0 | OF_ID1))) return h;
    double id = (fl & OF_ID0) ? 0 : 1;
    if (rw_is_lit(b, id) && isnum(a) && (ismat(a) || a->vt == h->vt)) return hit(p, a);
    if ((fl & OF_COMM) && rw_is_lit(a, id) && isnum(b) && (ismat(b) || b->vt == h->vt)) return hit(p, b);
    return h;
}

/* matrix(c, rows, cols) with a literal c (not a reshape of a matrix). */
static bool const_matrix(const Hop *h)
{
    return h && h->kind == H_BUILTIN && h->bi == BI_MATRIX && h->nin >= 1 && h->in[0] &&
           h->in[0]->kind == H_LIT && val_is_numeric(&h->in[0]->lit);
}

/* rand(...) * c -> rand(min=min*c, max=max*c) for a uniform rand with
 * literal bounds and a literal c >= 0 (SystemDS's fusion of a data
 * generator with a binary operation). */
static Hop *scale_rand(RwPass *p, Hop *r, const Hop *c)
{
    double k, lo, hi;
    if (!r || r->kind != H_BUILTIN || r->bi != BI_RAND || r->nin < 8 || rw_uses(p->d, r) != 1) return NULL;
    if (!c || c->kind != H_LIT || !val_is_numeric(&c->lit) || (k = val_as_double(&c->lit)) < 0 || k != k) return NULL;
    const Hop *pdf = r->in[5];
    if (pdf && !(pdf->kind == H_LIT && pdf->lit.kind == V_STRING && !strcmp(pdf->lit.s->s, "uniform"))) return NULL;
    if (!r->in[2] || !r->in[3] || r->in[2]->kind != H_LIT || r->in[3]->kind != H_LIT ||
        !val_is_numeric(&r->in[2]->lit) || !val_is_numeric(&r->in[3]->lit))
        return NULL;
    lo = val_as_double(&r->in[2]->lit);
    hi = val_as_double(&r->in[3]->lit);
    Hop *n = hop_new(p->d, H_BUILTIN, r->span, r->nin);
    if (!n) return NULL;
    Hop **in = n->in;
    int id = n->id;
    *n = *r;
    n->in = in;
    n->id = id;
    for (int i = 0; i < r->nin; i++) n->in[i] = r->in[i];
    n->in[2] = hop_lit(p->d, val_double(lo * k), r->span);
    n->in[3] = hop_lit(p->d, val_double(hi * k), r->span);
    if (!n->in[2] || !n->in[3]) return NULL;
    hop_infer(n);
    return n;
}

/* A transpose read only by one cellwise operator, of a matrix. */
static bool lone_transpose(RwPass *p, const Hop *x)
{
    return is(x, H_REORG, OP_TRANS) && ismat(x->in[0]) && rw_uses(p->d, x) == 1;
}

/* t(X) op t(Y) -> t(X op Y) (same shapes), t(X) op s -> t(X op s), and
 * s op t(X): cellwise operators commute with the transpose; pulled up,
 * one transpose is left (of the result, not of each input), which the
 * aggregates and products above may then remove (sum(t(Z)) -> sum(Z),
 * t(Z) %*% y -> tmm). This is how a script reads inputs bound as
 * transposed views (column-major buffers, api/views.c) without ever
 * materializing them. */
static Hop *pull_transpose(RwPass *p, Hop *h)
{
    Hop *a = h->in[0], *b = h->in[1];
    bool ta = lone_transpose(p, a), tb = lone_transpose(p, b);
    Hop *x = NULL, *y = NULL;
    if (ta && tb && a != b && rw_same_dims(a->in[0], b->in[0])) x = a->in[0], y = b->in[0];
    else if (ta && b->dt == DT_SCALAR) x = a->in[0], y = b;
    else if (tb && a->dt == DT_SCALAR) x = a, y = b->in[0];
    if (!x) return h;
    return hit(p, hop_reorg(p->d, OP_TRANS, hop_binary(p->d, h->op, x, y, h->span), h->span));
}

/* The comparison that is true exactly where op's is false for ordered
 * non-NaN operands (SystemDS's getComplementPPredOperation). */
static OpCode complement(OpCode op)
{
    switch (op) {
    case OP_LT: return OP_GE;
    case OP_GE: return OP_LT;
    case OP_LE: return OP_GT;
    case OP_GT: return OP_LE;
    case OP_EQ: return OP_NE;
    default: return OP_EQ;
    }
}

static bool is_cmp(const Hop *h) { return h && h->kind == H_BINARY && (op_info[h->op].flags & OF_CMP); }

/* (A cmp B) == 1 and (A cmp B) != 0 -> A cmp B, (A cmp B) == 0 -> A
 * cmp' B with the complement cmp' (SystemDS's
 * simplifyBinaryComparisonChain; the literal on the right). As in
 * SystemDS this changes what a NaN gives: (NaN < 1) == 0 is 1, NaN >= 1
 * is 0; SystemDS's imputeByMode relies on it to leave missing cells out
 * of its counts. */
static Hop *comparison_chain(RwPass *p, Hop *h)
{
    Hop *c = h->in[0], *l = h->in[1];
    if ((h->op != OP_EQ && h->op != OP_NE) || !is_cmp(c) || !l || l->kind != H_LIT || !val_is_numeric(&l->lit))
        return h;
    double v = val_as_double(&l->lit);
    if (v != 0 && v != 1) return h;
    if ((v == 1 && h->op == OP_EQ) || (v == 0 && h->op == OP_NE)) return hit(p, c);
    if (v == 0 && h->op == OP_EQ) return hit(p, hop_binary(p->d, complement(c->op), c->in[0], c->in[1], h->span));
    return h;
}

/* (X != 0) * log(X) -> ifelse(X != 0, log(X), 0), and so for log(X, b):
 * SystemDS's fuseLogNzUnaryOperation / fuseLogNzBinaryOperation (its
 * log_nz: 0 where X is 0, log elsewhere), the comparison on the left as
 * there. The plain product gives NaN (0 * -Inf) at X's zeros. */
static Hop *log_nz(RwPass *p, Hop *h)
{
    Hop *pr = h->in[0], *lg = h->in[1];
    if (h->op != OP_MULT || !ismat(pr) || !ismat(lg) || !is(pr, H_BINARY, OP_NE) || !rw_is_lit(pr->in[1], 0))
        return h;
    Hop *x = pr->in[0];
    if (!(is(lg, H_UNARY, OP_LOG) || is(lg, H_BINARY, OP_LOGB)) || lg->in[0] != x) return h;
    Hop *t = hop_new(p->d, H_TERNARY, h->span, 3);
    if (!t) return h;
    t->op = OP_IFELSE;
    t->in[0] = pr;
    t->in[1] = lg;
    t->in[2] = hop_lit(p->d, val_double(0), h->span);
    if (!t->in[2]) return h;
    hop_infer(t);
    return hit(p, t);
}

/* X * (X > 0) and (X > 0) * X -> max(X, 0), SystemDS's
 * fuseBinarySubDAGToUnaryOperation (max0a, max0b; the integer literal as
 * there). Where X is -Inf the product is NaN (-Inf * 0), the max 0; a NaN
 * stays NaN (Java's Math.max, as ops_max). */
static Hop *max0(RwPass *p, Hop *h)
{
    if (h->op != OP_MULT || !ismat(h->in[0]) || !ismat(h->in[1])) return h;
    for (int s = 0; s < 2; s++) {
        Hop *g = h->in[s], *x = h->in[1 - s];
        if (is(g, H_BINARY, OP_GT) && g->in[0] == x && rw_is_lit(g->in[1], 0))
            return hit(p, hop_binary(p->d, OP_MAX, x, hop_lit(p->d, val_int(0), h->span), h->span));
    }
    return h;
}

static Hop *simplify_binary(RwPass *p, Hop *h)
{
    Hop *a = h->in[0], *b = h->in[1];
    Span sp = h->span;
    Hop *r = comparison_chain(p, h);
    if (r != h) return r;
    if ((r = log_nz(p, h)) != h) return r;
    if ((r = max0(p, h)) != h) return r;
    if ((r = drop_identity(p, h)) != h) return r;
    if ((r = pull_transpose(p, h)) != h) return r;
    /* matrix(c, nrow(X), ncol(X)) op X -> c op X (and X op matrix(c, ..)):
     * no constant matrix is materialized (matrix(1, ..) / X) */
    if (ismat(a) && ismat(b) && const_matrix(a) && !const_matrix(b) && rw_same_dims(a, b))
        return hit(p, hop_binary(p->d, h->op, a->in[0], b, sp));
    if (ismat(a) && ismat(b) && const_matrix(b) && !const_matrix(a) && rw_same_dims(a, b))
        return hit(p, hop_binary(p->d, h->op, a, b->in[0], sp));
    /* rand(min=a, max=b) * c -> rand(min=a*c, max=b*c) */
    if (h->op == OP_MULT && ((r = scale_rand(p, a, b)) || (r = scale_rand(p, b, a)))) return hit(p, r);
    /* X*X -> X^2, X+X -> X*2, with SystemDS's integer literal on the right
     * (simplifyBinaryToUnaryOperation), so a lineage trace shows its
     * "^2" / "*2" over (X, 2) */
    if (h->op == OP_MULT && a == b && ismat(a))
        return hit(p, hop_binary(p->d, OP_POW, a, hop_lit(p->d, val_int(2), sp), sp));
    if (h->op == OP_PLUS && a == b && ismat(a))
        return hit(p, hop_binary(p->d, OP_MULT, a, hop_lit(p->d, val_int(2), sp), sp));
    /* X - X*Y -> X*(1-Y) for a matrix Y, as SystemDS (simplifyDistributive
     * BinaryOperation). Not for a scalar Y, which SystemDS leaves alone:
     * where X is +-Inf, X - X*2 is NaN but X*(1-2) is -Inf (issue 23) */
    if (h->op == OP_MINUS && ismat(a) && is(b, H_BINARY, OP_MULT) && rw_uses(p->d, b) == 1) {
        Hop *y = b->in[0] == a ? b->in[1] : b->in[1] == a ? b->in[0] : NULL;
        if (y && ismat(y) && rw_same_dims(a, y) && rw_same_dims(a, b)) {
            Hop *one_minus = hop_binary(p->d, OP_MINUS, hop_lit(p->d, val_double(1), sp), y, sp);
            return hit(p, hop_binary(p->d, OP_MULT, a, one_minus, sp));
        }
    }
    return h;
}

/* Does the aggregate ignore the order and layout of the cells (OF_PERM)? */
static bool order_free_agg(OpCode op) { return (op_info[op].flags & OF_PERM) != 0; }

static Hop *simplify_agg(RwPass *p, Hop *h)
{
    Hop *x = h->in[0];
    Span sp = h->span;
    if (!x) return h;
    /* sum(t(X)) -> sum(X) */
    if (h->dir == DIR_FULL && order_free_agg(h->op) && is(x, H_REORG, OP_TRANS))
        return hit(p, hop_agg(p->d, h->op, DIR_FULL, x->in[0], sp));
    /* rowSums(t(X)) -> t(colSums(X)), colSums(t(X)) -> t(rowSums(X)) */
    if (h->dir != DIR_FULL && order_free_agg(h->op) && is(x, H_REORG, OP_TRANS)) {
        Hop *g = hop_agg(p->d, h->op, h->dir == DIR_ROW ? DIR_COL : DIR_ROW, x->in[0], sp);
        return hit(p, hop_reorg(p->d, OP_TRANS, g, sp));
    }
    /* sum(X^2) -> sumsq(X) */
    if (h->op == OP_SUM && is(x, H_BINARY, OP_POW) && rw_is_lit(x->in[1], 2) && ismat(x->in[0]))
        return hit(p, hop_agg(p->d, OP_SUMSQ, h->dir, x->in[0], sp));
    /* sum(X+Y) -> sum(X)+sum(Y), same shapes */
    if (h->op == OP_SUM && h->dir == DIR_FULL && (is(x, H_BINARY, OP_PLUS) || is(x, H_BINARY, OP_MINUS)) &&
        rw_same_dims(x->in[0], x->in[1]) && rw_uses(p->d, x) == 1) {
        Hop *s1 = hop_agg(p->d, OP_SUM, DIR_FULL, x->in[0], sp);
        Hop *s2 = hop_agg(p->d, OP_SUM, DIR_FULL, x->in[1], sp);
        return hit(p, hop_binary(p->d, x->op, s1, s2, sp));
    }
    /* sum(diag(X)) -> trace(X) for a (non-vector) square X */
    if (h->op == OP_SUM && h->dir == DIR_FULL && is(x, H_REORG, OP_DIAG) && x->in[0]->cols > 1)
        return hit(p, hop_agg(p->d, OP_TRACE, DIR_FULL, x->in[0], sp));
    /* trace(X %*% Y) -> sum(X * t(Y)) */
    if (h->op == OP_TRACE && is(x, H_MATMUL, OP_MATMUL) && rw_uses(p->d, x) == 1) {
        Hop *ty = hop_reorg(p->d, OP_TRANS, x->in[1], sp);
        return hit(p, hop_agg(p->d, OP_SUM, DIR_FULL, hop_binary(p->d, OP_MULT, x->in[0], ty, sp), sp));
    }
    return h;
}

/* Is the product h no larger than its operand x (sizes known)? */
static bool not_larger(const Hop *h, const Hop *x)
{
    return h->rows >= 0 && h->cols >= 0 && x->rows >= 0 && x->cols >= 0 &&
           (double)h->rows * (double)h->cols <= (double)x->rows * (double)x->cols;
}

/* The operand under a negation that only the product h reads: A for -A,
 * and for t(-A) (what -t(A) becomes once the lone transpose is pulled
 * above the negation) the transpose of A; NULL for any other x. */
static Hop *negated(RwPass *p, const Hop *h, Hop *x)
{
    if (!not_larger(h, x)) return NULL;
    if (is(x, H_UNARY, OP_NEG) && ismat(x->in[0]) && rw_uses(p->d, x) == 1) return x->in[0];
    if (h->op == OP_MATMUL && lone_transpose(p, x) && is(x->in[0], H_UNARY, OP_NEG) && ismat(x->in[0]->in[0]) &&
        rw_uses(p->d, x->in[0]) == 1)
        return hop_reorg(p->d, OP_TRANS, x->in[0]->in[0], x->span);
    return NULL;
}

/* (-A) %*% B -> -(A %*% B) and A %*% (-B) -> -(A %*% B), also for the
 * transpose-free tmm(-A, B) = t(-A) %*% B, where the product is no
 * larger than the negated operand: the negation runs over the result,
 * not over a whole matrix on every call (GLM's gradient -t(X) %*% gy
 * negated all of a sparse X each iteration; gy's width is known only
 * when the block is recompiled, where the product is already a tmm).
 * IEEE negation is exact and commutes with products and sums, but the
 * plain product may get another kernel (another summation order) than
 * the negated one had: results equal up to that rounding. */
static Hop *pull_negation(RwPass *p, Hop *h)
{
    if (h->op != OP_MATMUL && h->op != OP_MATMULTL) return h;
    Hop *a = h->in[0], *b = h->in[1], *x;
    if ((x = negated(p, h, a))) a = x;
    else if ((x = negated(p, h, b))) b = x;
    else return h;
    Hop *m = hop_matmul(p->d, h->op, a, b, h->span);
    if (!m) return h;
    hop_infer(m);
    return hit(p, hop_unary(p->d, OP_NEG, m, h->span));
}

/* as.scalar(X op Y) -> as.scalar(X) op as.scalar(Y), as.scalar(X op s) ->
 * as.scalar(X) op s (SystemDS's simplifyBinaryMatrixScalarOperation, for
 * the operators it lists): no 1x1 matrix is built, and the result takes
 * the scalar operator's type, so as.scalar(A < B) is a boolean there as
 * in SystemDS (TRUE / FALSE when printed or written). Not for & and |,
 * which SystemDS lists too: over two doubles its scalar & and | give the
 * double 1.0 / 0.0, braid's give a boolean, and the 1x1 matrix's cell
 * is the double SystemDS prints. */
static Hop *scalar_binary(RwPass *p, Hop *h)
{
    static const OpCode ok[] = {OP_DIV, OP_EQ,  OP_GT,    OP_GE,  OP_INTDIV, OP_LT,   OP_LE,   OP_LOGB,
                                OP_MAX, OP_MIN, OP_MINUS, OP_MOD, OP_MULT,   OP_NE,   OP_PLUS, OP_POW};
    Hop *b = h->nin == 1 ? h->in[0] : NULL;
    if (h->bi != BI_ASSCALAR || !b || b->kind != H_BINARY || b->nin != 2) return h;
    bool listed = false;
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) listed |= b->op == ok[i];
    Hop *x = b->in[0], *y = b->in[1];
    if (!listed || !x || !y || (!ismat(x) && !ismat(y))) return h;
    if ((!ismat(x) && !isnum(x) && x->vt != VT_BOOL) || (!ismat(y) && !isnum(y) && y->vt != VT_BOOL)) return h;
    Hop *sx = ismat(x) ? hop_as_scalar(p->d, x, h->span) : x;
    Hop *sy = ismat(y) ? hop_as_scalar(p->d, y, h->span) : y;
    return hit(p, hop_binary(p->d, b->op, sx, sy, h->span));
}

Hop *rw_simplify(RwPass *p, Hop *h)
{
    Span sp = h->span;
    Hop *r;
    switch (h->kind) {
    case H_REORG:
        /* t(t(X)) -> X, rev(rev(X)) -> X */
        if ((h->op == OP_TRANS || h->op == OP_REV) && is(h->in[0], H_REORG, h->op) && ismat(h->in[0]->in[0]))
            return hit(p, h->in[0]->in[0]);
        break;
    case H_UNARY:
        /* f(t(X)) -> t(f(X)) (pull_transpose) */
        if (lone_transpose(p, h->in[0]))
            return hit(p, hop_reorg(p->d, OP_TRANS, hop_unary(p->d, h->op, h->in[0]->in[0], sp), sp));
        /* !(A > B) -> A <= B, !(A < B) -> A >= B, !(A == B) -> A != B
         * where the negation alone reads the comparison (SystemDS's
         * simplifyNotOverComparisons; NaN then gives 0 where it gave 1) */
        if (h->op == OP_NOT && is_cmp(h->in[0]) && rw_uses(p->d, h->in[0]) == 1 &&
            (h->in[0]->op == OP_GT || h->in[0]->op == OP_LT || h->in[0]->op == OP_EQ))
            return hit(p, hop_binary(p->d, complement(h->in[0]->op), h->in[0]->in[0], h->in[0]->in[1], sp));
        if (h->op == OP_NEG && is(h->in[0], H_UNARY, OP_NEG) && isnum(h->in[0]->in[0]) &&
            (ismat(h->in[0]->in[0]) || h->in[0]->in[0]->vt == VT_DOUBLE))
            return hit(p, h->in[0]->in[0]);
        break;
    case H_BINARY: return simplify_binary(p, h);
    case H_TERNARY: {
        /* ifelse(TRUE, A, B) -> A, ifelse(FALSE, A, B) -> B (SystemDS's
         * removeUnnecessaryIfElse1): the other branch is never computed */
        const Hop *c = h->in[0];
        if (!hop_lazy_ifelse(h) || c->kind != H_LIT || !val_is_numeric(&c->lit)) break;
        bool t = val_as_double(&c->lit) != 0;
        if (hop_ifelse_alone(h, t ? 1 : 2)) return hit(p, h->in[t ? 1 : 2]);
        break;
    }
    case H_AGG: return simplify_agg(p, h);
    case H_BUILTIN: return scalar_binary(p, h);
    case H_MATMUL:
        if ((r = pull_negation(p, h)) != h) return r;
        if (h->op != OP_MATMUL) break;
        /* (-t(X)) %*% y -> -(t(X) %*% y) */
        if (is(h->in[0], H_UNARY, OP_NEG) && is(h->in[0]->in[0], H_REORG, OP_TRANS)) {
            Hop *m = hop_matmul(p->d, OP_MATMUL, h->in[0]->in[0], h->in[1], sp);
            return hit(p, hop_unary(p->d, OP_NEG, m, sp));
        }
        /* diag(v) %*% y -> v * y for a column vector v and vector y */
        if (is(h->in[0], H_REORG, OP_DIAG) && h->in[0]->in[0]->cols == 1 && h->in[1]->cols == 1)
            return hit(p, hop_binary(p->d, OP_MULT, h->in[0]->in[0], h->in[1], sp));
        break;
    case H_RIX: {
        Hop *x = h->in[0];
        if (ismat(x) && h->ix.has_col && full_range(x, h->ix.rmode, h->in[1], h->in[2], true) &&
            full_range(x, h->ix.cmode, h->in[3], h->in[4], false))
            return hit(p, x);
        break;
    }
    case H_LIX: {
        /* X[,] = Y (every cell replaced) -> Y, for a matrix Y of X's shape */
        Hop *x = h->in[0], *y = h->in[1];
        if (ismat(x) && ismat(y) && h->ix.has_col && rw_same_dims(x, y) &&
            full_range(x, h->ix.rmode, h->in[2], h->in[3], true) &&
            full_range(x, h->ix.cmode, h->in[4], h->in[5], false))
            return hit(p, y);
        break;
    }
    default: break;
    }
    return h;
}
