/* amulet.c: where-loops (docs/amulet.md; seed 003): the plan of a loop
 * (body DAG with CSE, leaves with their index patterns, the recognition
 * conditions of seed 4.2), binding of the run-time values with their
 * checks, the scalar reference, the vectorized evaluator, and the entry
 * point cg_where_exec that picks the path. */
#include "amulet.h"
#include "../kernels/leaf.h"
#include "../kernels/reorg.h"

#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the plan ---- */

static bool is_logic(OpCode op)
{
    return op == OP_LT || op == OP_LE || op == OP_GT || op == OP_GE || op == OP_EQ || op == OP_NE || op == OP_AND ||
           op == OP_OR;
}

static int add_node(AmPlan *p, ANode x)
{
    /* CSE: an equal node is reused (seed 4.3.1: the tree becomes a DAG) */
    for (int i = 0; i < p->nn; i++) {
        const ANode *y = &p->n[i];
        if (y->kind == x.kind && y->op == x.op && y->a == x.a && y->b == x.b && y->c == x.c && y->leaf == x.leaf &&
            (x.kind != AN_CONST || memcmp(&y->v, &x.v, sizeof x.v) == 0))
            return i;
    }
    if (p->nn == AM_MAXNODES) { p->ok = false; return 0; }
    x.dep = x.kind == AN_LEAF ? p->leaf[x.leaf].dep : 0;
    if (x.a >= 0) x.dep |= p->n[x.a].dep;
    if (x.b >= 0) x.dep |= p->n[x.b].dep;
    if (x.c >= 0) x.dep |= p->n[x.c].dep;
    p->n[p->nn] = x;
    return p->nn++;
}

static int konst(AmPlan *p, double v)
{
    return add_node(p, (ANode){.kind = AN_CONST, .a = -1, .b = -1, .c = -1, .leaf = -1, .v = v});
}

static int op_node(AmPlan *p, ANKind k, OpCode op, int a, int b, int c)
{
    return add_node(p, (ANode){.kind = k, .op = op, .a = a, .b = b, .c = c, .leaf = -1});
}

static int leaf_node(AmPlan *p, const char *name, const IndexDim *r, const IndexDim *c, int nidx)
{
    const char *names[WHERE_MAXLEAVES];
    int nl = where_leaves(p->w, names, WHERE_MAXLEAVES), input = -1;
    for (int k = 0; k < nl && k < WHERE_MAXLEAVES; k++)
        if (!strcmp(names[k], name)) input = 1 + 2 * p->nvars + k;
    ALeaf l = {.input = input, .idx = {-1, -1}, .nidx = nidx};
    if (nidx >= 1) l.idx[0] = where_var(p->w, r->lo);
    if (nidx >= 2) l.idx[1] = where_var(p->w, c->lo);
    for (int k = 0; k < nidx; k++) {
        if (l.idx[k] < 0) { p->ok = false; return 0; }
        l.dep |= 1u << l.idx[k];
    }
    if (input < 0) { p->ok = false; return 0; }
    int li = -1;
    for (int k = 0; k < p->nleaf; k++)
        if (p->leaf[k].input == input && p->leaf[k].nidx == nidx && p->leaf[k].idx[0] == l.idx[0] &&
            p->leaf[k].idx[1] == l.idx[1])
            li = k;
    if (li < 0) {
        if (p->nleaf == AM_MAXLEAVES) { p->ok = false; return 0; }
        li = p->nleaf;
        p->leaf[p->nleaf++] = l;
    }
    return add_node(p, (ANode){.kind = AN_LEAF, .a = -1, .b = -1, .c = -1, .leaf = li});
}

/* The DAG node of body expression e (validated by lang/validate.c). */
static int build(AmPlan *p, const Expr *e)
{
    if (!p->ok || !e) { p->ok = false; return 0; }
    switch (e->kind) {
    case EX_INT: return konst(p, (double)e->ival);
    case EX_DOUBLE: return konst(p, e->dval);
    case EX_BOOL: return konst(p, e->bval ? 1.0 : 0.0);
    case EX_IDENT: return leaf_node(p, e->ident, NULL, NULL, 0);
    case EX_INDEX:
        return leaf_node(p, e->index.name, &e->index.row, &e->index.col, e->index.has_col ? 2 : 1);
    case EX_UNARY: return op_node(p, AN_UN, e->unary.op, build(p, e->unary.a), -1, -1);
    case EX_BINARY:
        return op_node(p, AN_BIN, e->binary.op, build(p, e->binary.a), build(p, e->binary.b), -1);
    case EX_CALL: {
        const BuiltinInfo *bi = e->call.builtin;
        int a[3] = {-1, -1, -1};
        if (!bi || e->call.nargs > 3) { p->ok = false; return 0; }
        for (int i = 0; i < e->call.nargs; i++) a[i] = build(p, e->call.args[i].value);
        if (bi->id == BI_IFELSE) return op_node(p, AN_IFELSE, OP_IFELSE, a[0], a[1], a[2]);
        if (bi->id == BI_MIN) return op_node(p, AN_BIN, OP_MIN, a[0], a[1], -1);
        if (bi->id == BI_MAX) return op_node(p, AN_BIN, OP_MAX, a[0], a[1], -1);
        if (bi->id == BI_LOG) return op_node(p, AN_UN, OP_LOG, a[0], -1, -1);
        if (bi->op < OP__COUNT && op_info[bi->op].kind == OK_UNARY)
            return op_node(p, AN_UN, bi->op, a[0], -1, -1);
        p->ok = false;
        return 0;
    }
    default: p->ok = false; return 0;
    }
}

/* Does unary op keep 0 as 0? */
static bool zero_keeping(OpCode op)
{
    return op == OP_NEG || op == OP_ABS || op == OP_SQRT || op == OP_SIGN || op == OP_ROUND || op == OP_FLOOR ||
           op == OP_CEIL;
}

/* Is node i zero wherever leaf l is zero (other values finite)? */
static bool zero_with(const AmPlan *p, int i, int l)
{
    const ANode *n = &p->n[i];
    switch (n->kind) {
    case AN_LEAF: return n->leaf == l;
    case AN_CONST: return n->v == 0;
    case AN_UN:
        return zero_keeping(n->op) && zero_with(p, n->a, l);
    case AN_BIN:
        if (n->op == OP_MULT) return zero_with(p, n->a, l) || zero_with(p, n->b, l);
        if (n->op == OP_PLUS || n->op == OP_MINUS || n->op == OP_MIN || n->op == OP_MAX)
            return zero_with(p, n->a, l) && zero_with(p, n->b, l);
        return false;
    case AN_IFELSE: return zero_with(p, n->b, l) && zero_with(p, n->c, l);
    }
    return false;
}

static void recognize(AmPlan *p);

bool am_alike(const WhereLoop *w)
{
    for (const WhereLoop *x = w->more; x; x = x->more)
        if (x->target.has_col != w->target.has_col || where_var(w, x->target.row.lo) != where_var(w, w->target.row.lo) ||
            (w->target.has_col && where_var(w, x->target.col.lo) != where_var(w, w->target.col.lo)))
            return false;
    return true;
}

void am_plan(const WhereLoop *w, unsigned sel, AmPlan *p)
{
    memset(p, 0, sizeof *p);
    p->w = w;
    p->nvars = w->nvars;
    p->ok = true;
    p->tr = p->tc = -2;
    /* result q's current value: argument 0 for the first, the others
     * after the steps (lang/where.h) */
    const char *names[WHERE_MAXLEAVES];
    int nl = BR_MIN(where_leaves(w, names, WHERE_MAXLEAVES), WHERE_MAXLEAVES), ns = 0;
    for (int v = 0; v < w->nvars; v++) ns += w->vars[v].step != NULL;
    int q = 0;
    for (const WhereLoop *x = w; x; x = x->more, q++) {
        if (!(sel >> q & 1)) continue;
        int tr = where_var(w, x->target.row.lo), tc = x->target.has_col ? where_var(w, x->target.col.lo) : -1;
        if (tr < 0 || (x->target.has_col && tc < 0) || (p->tr != -2 && (tr != p->tr || tc != p->tc))) p->ok = false;
        p->tr = tr;
        p->tc = tc;
        p->res[p->nres] = x;
        p->rin[p->nres] = q == 0 ? 0 : 1 + 2 * w->nvars + nl + ns + q - 1;
        p->root[p->nres++] = build(p, x->value);
    }
    if (p->nres == 0) p->ok = false;
    recognize(p);
}

/* seed 4.2: three loop variables, R indexed by two of them (i, j), the
 * body reading a matrix by (i, k) and another by (k, j); accumulated
 * over k (an assignment could not be, see the validator). Sets kvar and
 * zleaf. */
static void recognize(AmPlan *p)
{
    const WhereLoop *w = p->w;
    p->kvar = -1;
    p->zleaf = -1;
    bool set = false, add = true;
    for (int r = 0; r < p->nres; r++) {
        set |= p->res[r]->acc == WA_SET;
        add &= p->res[r]->acc == WA_ADD;
    }
    (void)w;
    if (!p->ok || p->nvars != 3 || p->tc < 0 || set) return;
    int k = 3 - p->tr - p->tc;
    unsigned ik = 1u << p->tr | 1u << k, kj = 1u << k | 1u << p->tc;
    bool a = false, b = false;
    for (int l = 0; l < p->nleaf; l++) {
        a |= p->leaf[l].nidx == 2 && p->leaf[l].dep == ik;
        b |= p->leaf[l].nidx == 2 && p->leaf[l].dep == kj;
    }
    if (a && b) p->kvar = k;
    p->zleaf = -1;
    /* every result's body zero where leaf l is (so its zero cells add
     * nothing to any result) */
    for (int l = 0; l < p->nleaf && p->kvar >= 0 && add; l++) {
        bool z = p->leaf[l].nidx == 2 && p->leaf[l].dep == ik;
        for (int r = 0; r < p->nres && z; r++) z = zero_with(p, p->root[r], l);
        if (z) { p->zleaf = l; break; }
    }
}

double am_acc(WhereAcc acc, double r, double v)
{
    switch (acc) {
    case WA_SET: return v;
    case WA_ADD: return r + v;
    case WA_MIN: return ops_min(r, v);
    case WA_MAX: return ops_max(r, v);
    }
    return v;
}

/* ---- binding the values ---- */

static int64_t as_index(const Value *v, const char *what, const char *var, BrErr *e, bool *ok)
{
    if (!val_is_numeric(v) && !(v->kind == V_MATRIX && v->m && v->m->rows == 1 && v->m->cols == 1)) {
        *ok = false;
        br_err(e, BR_EARG, "the %s of where-loop variable '%s' is not a number", what, var);
        return 0;
    }
    double d = v->kind == V_MATRIX ? mb_get(v->m, 0, 0) : val_as_double(v);
    if (isnan(d)) {
        *ok = false;
        br_err(e, BR_EARG, "the %s of where-loop variable '%s' is NaN", what, var);
    }
    return ops_dml_long(d);   /* as for loops: cut toward zero */
}

/* The strides of a dense matrix m indexed by loop variables idx[0..nidx)
 * starting at 1-based positions from[]; checks the ranges fit. */
static int bind_matrix(const AmPlan *p, const MB *m, const char *name, const int *idx, int nidx, const int64_t *from,
                       const int64_t *n, const int64_t *step, const double **base, int64_t *st, BrErr *e)
{
    int64_t dims[2] = {m->rows, m->cols};
    int64_t stride[2] = {m->cols, 1};
    if (nidx == 1) {
        if (m->rows != 1 && m->cols != 1)
            return br_err(e, BR_EARG, "'%s' is indexed by one loop variable but is a %lld x %lld matrix", name,
                          (long long)m->rows, (long long)m->cols);
        dims[0] = m->rows * m->cols;
        stride[0] = 1;
    }
    int64_t off = 0;
    for (int k = 0; k < nidx; k++) {
        int v = idx[k];
        /* a loop of outer products: the operands' extents must be equal,
         * as for DML's elementwise operators */
        if (p->w->bcast && (v == p->tr || v == p->tc) && dims[k] != n[v])
            return br_err(e, BR_EARG, "dimension mismatch in elementwise operation: '%s' is a %lldx%lld matrix, "
                          "the outer products are %lldx%lld", name, (long long)m->rows, (long long)m->cols,
                          (long long)n[p->tr], (long long)n[p->tc]);
        /* the values from[v], from[v] + step[v], ... (n[v] of them) */
        int64_t last = from[v] + (n[v] - 1) * step[v];
        if (n[v] > 0 && (from[v] < 1 || last > dims[k]))
            return br_err(e, BR_EARG, "where-loop index out of bounds: '%s' has %lld %s, but '%s' runs over "
                          "%lld:%lld", name, (long long)dims[k], nidx == 1 ? "cells" : k == 0 ? "rows" : "columns",
                          p->w->vars[v].name, (long long)from[v], (long long)last);
        st[v] += stride[k] * step[v];
        off += (from[v] - 1) * stride[k];
    }
    *base = m->d ? m->d + (n[idx[0]] > 0 && (nidx < 2 || n[idx[1]] > 0) ? off : 0) : NULL;
    return 0;
}

/* The name of the body variable of argument input (R for others). */
static const char *input_name(const AmPlan *p, int input)
{
    const char *names[WHERE_MAXLEAVES];
    int nl = where_leaves(p->w, names, WHERE_MAXLEAVES);
    int k = input - 1 - 2 * p->nvars;
    if (k >= 0 && k < nl && k < WHERE_MAXLEAVES) return names[k];
    for (int r = 0; r < p->nres; r++)
        if (p->rin[r] == input) return p->res[r]->target.name;
    return p->w->target.name;
}

/* A loop of outer products (WhereLoop.bcast): each read X[i,j] takes
 * the pattern DML's broadcasting gives X's shape: a scalar, X[j] of a
 * 1 x N row, X[i] of an M x 1 column, or the M x N matrix. Then the
 * dependences and the recognition again. */
static int resolve_bcast(AmPlan *p, const Value *args, int nargs, const int64_t *n, BrErr *e)
{
    int64_t M = n[p->tr], N = n[p->tc];
    for (int l = 0; l < p->nleaf; l++) {
        ALeaf *lf = &p->leaf[l];
        bool tr = lf->nidx == 2 && lf->idx[0] == p->tc && lf->idx[1] == p->tr;   /* t(X) */
        if (lf->nidx != 2 || ((lf->idx[0] != p->tr || lf->idx[1] != p->tc) && !tr)) continue;
        if (lf->input < 0 || lf->input >= nargs) return br_err(e, BR_EFAIL, "where-loop: missing input");
        const Value *v = &args[lf->input];
        if (val_is_numeric(v)) {
            *lf = (ALeaf){.input = lf->input, .idx = {-1, -1}, .nidx = 0};
            continue;
        }
        if (v->kind != V_MATRIX || !v->m)
            return br_err(e, BR_EARG, "'%s' in a loop of outer products is a %s", input_name(p, lf->input),
                          val_kind_name(v->kind));
        int64_t r = tr ? v->m->cols : v->m->rows, c = tr ? v->m->rows : v->m->cols;   /* of X or t(X) */
        if (r == M && c == N) continue;
        if ((r != M || c != 1) && (r != 1 || c != N))
            return br_err(e, BR_EARG, "dimension mismatch in elementwise operation: '%s' is a %lldx%lld matrix, "
                          "the outer products are %lldx%lld", input_name(p, lf->input), (long long)r, (long long)c,
                          (long long)M, (long long)N);
        int v1 = r == M && c == 1 ? p->tr : p->tc;
        *lf = (ALeaf){.input = lf->input, .idx = {v1, -1}, .nidx = 1, .dep = 1u << v1};
    }
    for (int l = 0; l < p->nleaf; l++) {
        ALeaf *lf = &p->leaf[l];
        lf->dep = 0;
        for (int k = 0; k < lf->nidx; k++) lf->dep |= 1u << lf->idx[k];
    }
    for (int i = 0; i < p->nn; i++) {   /* inputs come before consumers */
        ANode *x = &p->n[i];
        x->dep = x->kind == AN_LEAF ? p->leaf[x->leaf].dep : 0;
        if (x->a >= 0) x->dep |= p->n[x->a].dep;
        if (x->b >= 0) x->dep |= p->n[x->b].dep;
        if (x->c >= 0) x->dep |= p->n[x->c].dep;
    }
    recognize(p);
    return 0;
}

/* The DML shape of a value in a loop of outer products (scalar: s). */
typedef struct AmShape { int64_t r, c; bool s; } AmShape;

/* a op b's shape by k_binary's broadcasting rules (kernels/ew.h), or
 * false where DML reports a dimension mismatch. */
static bool shape_bin(AmShape a, AmShape b, AmShape *o)
{
    if (a.s || b.s) { *o = a.s ? b : a; return true; }
    if ((b.r == a.r && b.c == a.c) || (b.r == 1 && b.c == a.c) || (b.r == a.r && b.c == 1)) { *o = a; return true; }
    if ((a.r == 1 && a.c == b.c) || (a.r == b.r && a.c == 1)) { *o = b; return true; }
    if (a.c == 1 && b.r == 1) { *o = (AmShape){a.r, b.c, false}; return true; }
    return false;
}

static int shape_err(AmShape a, AmShape b, BrErr *e)
{
    return br_err(e, BR_EARG, "dimension mismatch in elementwise operation: %lldx%lld and %lldx%lld", (long long)a.r,
                  (long long)a.c, (long long)b.r, (long long)b.c);
}

/* The value of the loop's leaf `name` among its inputs args, or NULL
 * (the last leaf of that name, as the loop binds them). */
static const Value *leaf_value(const AmPlan *p, const Value *args, const char *name)
{
    const char *names[WHERE_MAXLEAVES];
    int nl = where_leaves(p->w, names, WHERE_MAXLEAVES), in = -1;
    for (int k = 0; k < nl && k < WHERE_MAXLEAVES; k++)
        if (!strcmp(names[k], name)) in = 1 + 2 * p->nvars + k;
    return in >= 0 ? &args[in] : NULL;
}

/* The shape x has in the loop the where-loop was lifted from: a
 * column slice A[,k] is M x 1, a row slice 1 x N, other reads the shape
 * of their value; operators broadcast as DML's do, so a loop whose
 * operands would not fit fails here as it would have as a loop. */
static int loop_shape(const AmPlan *p, const Expr *x, const Value *args, const int64_t *n, AmShape *o, BrErr *e)
{
    AmShape v[3] = {{1, 1, true}, {1, 1, true}, {1, 1, true}};
    switch (x->kind) {
    case EX_INT: case EX_DOUBLE: case EX_BOOL: *o = (AmShape){1, 1, true}; return 0;
    case EX_IDENT: {
        /* a leaf read whole: a scalar (the template's scalar leaves,
         * amulet_tpl.c), or a matrix of its value's shape */
        const Value *a = leaf_value(p, args, x->ident);
        *o = a && a->kind == V_MATRIX && a->m ? (AmShape){a->m->rows, a->m->cols, false} : (AmShape){1, 1, true};
        return 0;
    }
    case EX_INDEX: {
        int ri = where_var(p->w, x->index.row.lo), ci = where_var(p->w, x->index.col.lo);
        bool tr = ri == p->tc && ci == p->tr;   /* t(X) */
        if ((ri == p->tr && ci == p->tc) || tr) {
            const Value *a = leaf_value(p, args, x->index.name);
            if (a && a->kind == V_MATRIX && a->m)
                *o = tr ? (AmShape){a->m->cols, a->m->rows, false} : (AmShape){a->m->rows, a->m->cols, false};
            else *o = (AmShape){1, 1, true};
            return 0;
        }
        bool col = ri == p->tr || ci == p->tr;   /* A[,k] or t(A[k,]) */
        *o = col ? (AmShape){n[p->tr], 1, false} : (AmShape){1, n[p->tc], false};
        return 0;
    }
    case EX_UNARY: return loop_shape(p, x->unary.a, args, n, o, e);
    case EX_BINARY:
        if (loop_shape(p, x->binary.a, args, n, &v[0], e) || loop_shape(p, x->binary.b, args, n, &v[1], e)) return -1;
        return shape_bin(v[0], v[1], o) ? 0 : shape_err(v[0], v[1], e);
    case EX_CALL:
        for (int i = 0; i < x->call.nargs && i < 3; i++)
            if (loop_shape(p, x->call.args[i].value, args, n, &v[i], e)) return -1;
        *o = v[0];
        for (int i = 1; i < x->call.nargs && i < 3; i++)
            if (!shape_bin(*o, v[i], o)) return shape_err(*o, v[i], e);
        return 0;
    default: return br_err(e, BR_EFAIL, "where-loop: unexpected expression");
    }
}

/* R of a loop of outer products broadcast to M x N (R + P in DML: R may
 * be a scalar, a row, a column or the matrix), a new block. */
static MB *bcast_result(const char *name, const Value *r, int64_t M, int64_t N, BrErr *e)
{
    bool num = val_is_numeric(r);
    if (!num && (r->kind != V_MATRIX || !r->m))
        return br_err(e, BR_EARG, "the result '%s' of a loop of outer products is a %s", name,
                      val_kind_name(r->kind)), NULL;
    int64_t rr = num ? 1 : r->m->rows, rc = num ? 1 : r->m->cols;
    if (rr == M && rc == N) return mb_to_dense(r->m, e);
    if (!num && (rr != 1 || rc != N) && (rr != M || rc != 1))
        return br_err(e, BR_EARG, "dimension mismatch in elementwise operation: '%s' is a %lldx%lld matrix, the "
                      "outer products are %lldx%lld", name, (long long)rr, (long long)rc,
                      (long long)M, (long long)N), NULL;
    /* the value or the vector read once, not per cell (a scalar 0, the
     * usual start of a product, per cell cost a tenth of a 100 x 100 x
     * 256 loop) */
    double v = num ? val_as_double(r) : 0;
    MB *d = num && v == 0 ? mb_dense(M, N, e) : mb_dense_uninit(M, N, e);
    if (!d || (num && v == 0)) return d;
    double *vec = num ? NULL : br_malloc((size_t)BR_MAX(rr, rc) * sizeof *vec);
    if (!num && !vec) {
        mb_release(d);
        return br_err(e, BR_ENOMEM, "out of memory"), NULL;
    }
    if (!num)
        for (int64_t x = 0; x < BR_MAX(rr, rc); x++) vec[x] = mb_get(r->m, rr == 1 ? 0 : x, rc == 1 ? 0 : x);
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) d->d[i * N + j] = num ? v : vec[rc == 1 ? (rr == 1 ? 0 : i) : j];
    free(vec);
    return d;
}

/* The leaf p->zleaf when its value v is a sparse block of density below
 * AM_SPARSE read as A[i,k] (rows by the target's row variable): the
 * evaluator then skips its zero cells reading its CSR rows, without
 * densifying it; else -1. */
static int sparse_leaf(const AmPlan *p, const Value *v)
{
    int l = p->zleaf;
    if (l < 0 || v->kind != V_MATRIX || !v->m || !v->m->sparse || v->m->cmb) return -1;
    const MB *m = v->m;
    bool ik = p->leaf[l].idx[0] == p->tr && p->leaf[l].idx[1] == p->kvar;
    bool ki = p->leaf[l].idx[0] == p->kvar && p->leaf[l].idx[1] == p->tr;
    if ((!ik && !ki) || m->rows * m->cols == 0) return -1;
    return (double)m->nnz < AM_SPARSE * (double)(m->rows * m->cols) ? l : -1;
}

/* The sparse operand x of a where-loop as it is read: for an x[k,i] read
 * (tr) the CSR of t(x), else x; a new reference, NULL on error. The last
 * one is kept in c (CgContext am_sp*) with the largest magnitude of its
 * values once scanned (*mx, else NAN), so that a loop-invariant x read
 * again by the next call (a where-loop in a script's loop) is neither
 * transposed nor scanned again: the transpose was 29% of a 20000 x 400
 * x 4 call at density 0.01 and the scan 9%. Blocks borrowing a caller's
 * storage (ext, which the caller may change) and device blocks are not
 * kept. */
static MB *sp_kept(CgContext *c, MB *x, bool tr, double *mx, BrErr *e)
{
    *mx = NAN;
    bool keep = c && !x->ext && !x->dev;
    if (keep) {
        pthread_mutex_lock(&c->lock);
        MB *t = NULL;
        if (c->am_spsrc == x && (c->am_sptr != NULL) == tr) {
            t = mb_retain(tr ? c->am_sptr : x);
            *mx = c->am_spmax;
        }
        pthread_mutex_unlock(&c->lock);
        if (t) {
            if (getenv("BRAID_AMULET_TRACE"))
                fprintf(stderr, "amulet: sparse operand kept from the last call%s%s\n", tr ? ", transposed" : "",
                        isnan(*mx) ? "" : ", scanned");
            return t;
        }
    }
    MB *t = tr ? k_transpose(x, e) : mb_retain(x);
    if (!t || !keep) return t;
    pthread_mutex_lock(&c->lock);
    MB *os = c->am_spsrc, *ot = c->am_sptr;
    c->am_spsrc = mb_retain(x);
    c->am_sptr = tr ? mb_retain(t) : NULL;
    c->am_spmax = NAN;
    pthread_mutex_unlock(&c->lock);
    mb_release(os);
    mb_release(ot);
    return t;
}

/* Keeps mx, the scanned largest magnitude of x's values, with c's kept
 * operand when that is still x. */
static void sp_kept_max(CgContext *c, const MB *x, double mx)
{
    if (!c || !x) return;
    pthread_mutex_lock(&c->lock);
    if (c->am_spsrc == x) c->am_spmax = mx;
    pthread_mutex_unlock(&c->lock);
}

/* May the loop write into R's own block (its last use)? A dense block
 * nothing else holds (refs 1, not borrowed or compressed), of the
 * result's shape. */
static bool owned_result(const AmPlan *p, const Value *r, const int64_t *n)
{
    const MB *m = r->kind == V_MATRIX ? r->m : NULL;
    if (!m || m->refs != 1 || m->sparse || m->cmb || m->ext || !m->d) return false;
    return !p->w->bcast || (m->rows == n[p->tr] && m->cols == n[p->tc]);
}

/* Binds the argument values: ranges, leaves (densified into dense[], which
 * the caller releases), and a new dense R (*out). Resolves the broadcast
 * reads of a loop of outer products (p changes). */
static int bind(CgContext *c, AmPlan *p, Value *args, int nargs, bool take, AmBind *b, MB **dense, MB **out,
                BrErr *e)
{
    const WhereLoop *w = p->w;
    memset(b, 0, sizeof *b);
    b->spleaf = -1;
    b->spmax = NAN;
    int64_t from[WHERE_MAXVARS] = {0};
    bool ok = true;
    const char *names[WHERE_MAXLEAVES];
    int nl = where_leaves(w, names, WHERE_MAXLEAVES), q = 0;
    for (int v = 0; v < p->nvars; v++) {
        from[v] = as_index(&args[1 + 2 * v], "start", w->vars[v].name, e, &ok);
        if (!ok) return -1;
        int64_t to = as_index(&args[2 + 2 * v], "end", w->vars[v].name, e, &ok);
        if (!ok) return -1;
        b->step[v] = 1;
        if (w->vars[v].step) {
            /* seq(from, to, step): the count of a for loop over it
             * (none when step points away from to); the order being
             * free, a negative step runs from the last value up */
            int64_t s = 1 + 2 * p->nvars + nl + q < nargs
                            ? as_index(&args[1 + 2 * p->nvars + nl + q++], "step", w->vars[v].name, e, &ok) : 0;
            if (!ok) return -1;
            if (s == 0) return br_err(e, BR_EARG, "the step of where-loop variable '%s' is 0", w->vars[v].name);
            int64_t cnt = (to - from[v]) / s >= 0 ? (to - from[v]) / s + 1 : 0;
            if (s < 0 && cnt > 0) { from[v] += (cnt - 1) * s; s = -s; }
            b->step[v] = s;
            b->n[v] = cnt;
            b->from[v] = from[v];
            continue;
        }
        /* from:to covers the integers between them, as for loops do
         * (descending when to < from; the order is free) */
        if (to < from[v]) { int64_t t = to; to = from[v]; from[v] = t; }
        b->n[v] = to - from[v] + 1;
        b->from[v] = from[v];
    }
    AmShape sh;
    for (int q = 0; q < p->nres && w->bcast; q++)
        if (loop_shape(p, p->res[q]->value, args, b->n, &sh, e)) return -1;
    if (w->bcast && resolve_bcast(p, args, nargs, b->n, e)) return -1;
    for (int q = 0; q < p->nres; q++) {
        const WhereLoop *x = p->res[q];
        if (p->rin[q] >= nargs) return br_err(e, BR_EFAIL, "where-loop: missing input");
        const Value *r = &args[p->rin[q]];
        if (!w->bcast && (r->kind != V_MATRIX || !r->m))
            return br_err(e, BR_EARG, "the result '%s' of a where-loop must be a matrix (it is a %s)",
                          x->target.name, val_kind_name(r->kind));
        MB *rd;
        if (take && p->rin[q] == 0 && owned_result(p, r, b->n)) {   /* updated in place: the reference moves */
            rd = r->m;
            args[0] = val_none();
        } else {   /* a new block: R's value is not changed */
            rd = w->bcast ? bcast_result(x->target.name, r, b->n[p->tr], b->n[p->tc], e) : mb_to_dense(r->m, e);
        }
        if (!rd) return -1;
        mb_values_changed(rd);   /* the loop writes its cells (a conversion kept R's flag) */
        out[q] = rd;
        int tidx[2] = {p->tr, p->tc};
        const double *rb;
        if (bind_matrix(p, rd, x->target.name, tidx, x->target.has_col ? 2 : 1, from, b->n, b->step, &rb, b->rst[q],
                        e))
            return -1;
        b->r[q] = (double *)rb;
    }
    for (int l = 0; l < p->nleaf; l++) {
        const ALeaf *lf = &p->leaf[l];
        if (lf->input < 0 || lf->input >= nargs) return br_err(e, BR_EFAIL, "where-loop: missing input");
        const Value *v = &args[lf->input];
        const char *name = input_name(p, lf->input);
        if (lf->nidx == 0) {
            if (val_is_numeric(v)) b->sval[l] = val_as_double(v);
            else if (v->kind == V_MATRIX && v->m && v->m->rows == 1 && v->m->cols == 1) b->sval[l] = mb_get(v->m, 0, 0);
            else
                return br_err(e, BR_EARG, "'%s' in a where-loop body is a %s; index a matrix by loop variables",
                              name, val_kind_name(v->kind));
            continue;
        }
        if (v->kind != V_MATRIX || !v->m)
            return br_err(e, BR_EARG, "'%s' is indexed in a where-loop body but is a %s", name,
                          val_kind_name(v->kind));
        /* read by rows of its CSR (am_evaluate, the sparse kernel); a
         * stepped k takes the row's non-zeros on the step (am_k_of) */
        if (l == sparse_leaf(p, v) && b->step[p->tr] == 1) {
            bool tr = lf->idx[0] == p->kvar;
            /* A[k,i]: the CSR of t(A) (O(nnz), never dense), read as
             * t(A)[i,k]; the leaf's index pattern follows */
            if (tr && bind_matrix(p, v->m, name, lf->idx, lf->nidx, from, b->n, b->step, &b->base[l], b->st[l], e))
                return -1;
            MB *sm = sp_kept(c, v->m, tr, &b->spmax, e);
            if (!sm) return -1;
            dense[l] = sm;
            if (tr) {
                p->leaf[l].idx[0] = p->tr;
                p->leaf[l].idx[1] = p->kvar;
                memset(b->st[l], 0, sizeof b->st[l]);
            }
            b->sp = sm;
            b->spsrc = v->m;
            b->spleaf = l;
            if (bind_matrix(p, sm, name, p->leaf[l].idx, lf->nidx, from, b->n, b->step, &b->base[l], b->st[l], e))
                return -1;
            continue;
        }
        MB *d = v->m->sparse ? mb_to_dense(v->m, e) : mb_retain(v->m);
        if (!d) return -1;
        dense[l] = d;
        if (bind_matrix(p, d, name, lf->idx, lf->nidx, from, b->n, b->step, &b->base[l], b->st[l], e)) return -1;
    }
    return 0;
}

/* mb_recount_nnz of a result, a dense one counted on the threads (when
 * br_par says so): like the finiteness scan, a serial pass over R after
 * every loop was a part of the run a second thread did not shorten. */
static void recount_nnz(MB *m)
{
    if (m->sparse) { mb_recount_nnz(m); return; }
    int64_t n = m->rows * m->cols, c = 0;
    const double *d = m->d;
#pragma omp parallel for simd num_threads(br_threads()) if (br_par((double)n)) reduction(+ : c)
    for (int64_t i = 0; i < n; i++) c += d[i] != 0;
    m->nnz = c;
}

/* ---- finiteness (docs/amulet.md, semantics) ---- */

/* The largest magnitude of v[0..n), or INFINITY when one is NaN or
 * infinite. */
static double max_abs_v(const double *v, int64_t n)
{
    /* one vectorized pass, on the threads when br_par says so: a serial
     * scan of both operands (2 n^2 cells) before every product was a part
     * of the run that a second thread did not shorten */
    double mx = 0;
    int bad = 0;
    if (!v) return 0;
#pragma omp parallel for simd num_threads(br_threads()) if (br_par((double)n)) reduction(max : mx) reduction(| : bad)
    for (int64_t i = 0; i < n; i++) {
        double a = fabs(v[i]);
        bad |= !(a <= DBL_MAX);
        mx = a > mx ? a : mx;
    }
    return bad ? INFINITY : mx;
}

/* The same over the cells of dense m. */
static double max_abs(const MB *m) { return max_abs_v(m->d, m->rows * m->cols); }

/* Bounds of every node's magnitude from the leaves' largest (in[]):
 * sums add, products multiply; INFINITY for a node whose value may be
 * NaN or infinite or pass 1e300 (operators that can make NaN or
 * infinity from finite values: division, square root, exp, log, ...),
 * and for every node above one. */
static void node_bounds(const AmPlan *p, const double *in, double *bound)
{
    for (int i = 0; i < p->nn; i++) {
        const ANode *n = &p->n[i];
        double a = n->a >= 0 ? bound[n->a] : 0, b = n->b >= 0 ? bound[n->b] : 0, c = n->c >= 0 ? bound[n->c] : 0;
        double r = INFINITY;
        switch (n->kind) {
        case AN_CONST: r = fabs(n->v); break;
        case AN_LEAF: r = in[n->leaf]; break;
        case AN_IFELSE: r = BR_MAX(b, c); break;
        case AN_UN:
            if (n->op == OP_NEG || n->op == OP_ABS || n->op == OP_ROUND || n->op == OP_FLOOR || n->op == OP_CEIL) r = a + 1;
            else if (n->op == OP_NOT || n->op == OP_SIGN) r = 1;
            break;
        case AN_BIN:
            if (n->op == OP_PLUS || n->op == OP_MINUS) r = a + b;
            else if (n->op == OP_MULT) r = a * b;
            else if (n->op == OP_MIN || n->op == OP_MAX) r = BR_MAX(a, b);
            else if (is_logic(n->op)) r = 1;
            break;
        }
        if (!(a < 1e300 && b < 1e300 && c < 1e300 && r < 1e300)) r = INFINITY;
        bound[i] = r;
    }
}

/* Does every node of the body stay finite for the bound inputs?
 * node_bounds over the largest magnitude of every input (a scan of
 * each). */
static bool body_finite(const AmPlan *p, AmBind *b, MB *const *dense)
{
    double bound[AM_MAXNODES], in[AM_MAXLEAVES];
    for (int l = 0; l < p->nleaf; l++) {
        if (l == b->spleaf && isnan(b->spmax)) b->spmax = max_abs_v(b->sp->v, b->sp->nnz);
        in[l] = l == b->spleaf ? b->spmax : dense[l] ? max_abs(dense[l]) : fabs(b->sval[l]);
        if (!(in[l] <= DBL_MAX)) return false;
    }
    node_bounds(p, in, bound);
    for (int i = 0; i < p->nn; i++)
        if (!(bound[i] < 1e300)) return false;
    return true;
}

/* Does the kernel of plan p depend on finiteness? Only the masked forms
 * (from comparisons, &, |, !, ifelse) and min and max (nodes or
 * accumulations) do (amulet_gen.c kernel_shape); the skipping of a
 * sparse operand's zero cells does too, asked by run_nest only for an
 * operand sparse enough to skip. Otherwise the scan of every input
 * (body_finite) before each run is skipped: on small products (100 x 100
 * x 256) it cost a tenth of the loop. */
static bool needs_finite(const AmPlan *p)
{
    for (int r = 0; r < p->nres; r++)
        if (p->res[r]->acc == WA_MIN || p->res[r]->acc == WA_MAX) return true;
    for (int i = 0; i < p->nn; i++) {
        const ANode *n = &p->n[i];
        if (n->kind == AN_IFELSE || (n->kind == AN_UN && n->op == OP_NOT) ||
            (n->kind == AN_BIN && (is_logic(n->op) || n->op == OP_MIN || n->op == OP_MAX)))
            return true;
    }
    return false;
}

/* ---- the finiteness flags in place of the bounds ---- */

/* Is node n 0 or 1 whatever its operands (comparisons, &, |, !)? */
static bool zero_one(const ANode *n)
{
    return (n->kind == AN_BIN && is_logic(n->op)) || (n->kind == AN_UN && n->op == OP_NOT);
}

/* Is node i of p finite wherever the leaves it adds to *need are? Leaves,
 * finite constants, 0/1 values, signs and magnitudes of such, a 0/1
 * value times such (the value or 0), min, max and ifelse of such; not a
 * sum or product of two values (finite leaves may overflow there). */
static bool flag_finite(const AmPlan *p, int i, unsigned *need)
{
    const ANode *n = &p->n[i];
    if (zero_one(n)) return true;
    switch (n->kind) {
    case AN_CONST: return isfinite(n->v);
    case AN_LEAF: *need |= 1u << n->leaf; return true;
    case AN_UN: return (n->op == OP_NEG || n->op == OP_ABS) && flag_finite(p, n->a, need);
    case AN_IFELSE:
        return (zero_one(&p->n[n->a]) || flag_finite(p, n->a, need)) && flag_finite(p, n->b, need) &&
               flag_finite(p, n->c, need);
    case AN_BIN:
        if (n->op == OP_MULT)
            return (zero_one(&p->n[n->a]) && flag_finite(p, n->b, need)) ||
                   (zero_one(&p->n[n->b]) && flag_finite(p, n->a, need));
        if (n->op == OP_MIN || n->op == OP_MAX) return flag_finite(p, n->a, need) && flag_finite(p, n->b, need);
        return false;
    }
    return false;
}

/* Is node i a product the kernel may take as masked (a 0/1 factor, or a
 * factor that is such a product: amulet_gen.c lower's masked move and
 * its chains)? */
static bool masked(const AmPlan *p, int i)
{
    const ANode *n = &p->n[i];
    return n->kind == AN_BIN && n->op == OP_MULT &&
           (zero_one(&p->n[n->a]) || zero_one(&p->n[n->b]) || masked(p, n->a) || masked(p, n->b));
}

/* Do the finiteness flags of the leaves in *need (scalars: their values)
 * make the devices of a needs_finite kernel exact, without the bounds of
 * every node (body_finite, a scan of every operand on every call)? They
 * do where every value those devices read is finite whenever the leaves
 * are (flag_finite): the other factor of a masked product (`0 * x` taken
 * as 0: x finite), the operands of min and max and the body of a min= or
 * max= result (a NaN dropped), and the operands of comparisons, logic
 * and conditions (no NaN reaches a mask). (Q > 0.5) * Q * X qualifies;
 * Q1's (A*B > t) * A*B*d does not (A*B may overflow), and takes the
 * bounds. */
static bool flags_suffice(const AmPlan *p, unsigned *need)
{
    *need = 0;
    for (int r = 0; r < p->nres; r++)
        if ((p->res[r]->acc == WA_MIN || p->res[r]->acc == WA_MAX) && !flag_finite(p, p->root[r], need)) return false;
    for (int i = 0; i < p->nn; i++) {
        const ANode *n = &p->n[i];
        bool ok = true;
        if (n->kind == AN_BIN && (is_logic(n->op) || n->op == OP_MIN || n->op == OP_MAX))
            ok = (zero_one(&p->n[n->a]) || flag_finite(p, n->a, need)) &&
                 (zero_one(&p->n[n->b]) || flag_finite(p, n->b, need));
        else if (n->kind == AN_UN && n->op == OP_NOT) ok = zero_one(&p->n[n->a]) || flag_finite(p, n->a, need);
        else if (n->kind == AN_IFELSE) ok = zero_one(&p->n[n->a]) || flag_finite(p, n->a, need);
        else if (n->kind == AN_BIN && n->op == OP_MULT)
            for (int s = 0; s < 2 && ok; s++) {
                int m = s ? n->b : n->a, x = s ? n->a : n->b;
                if (zero_one(&p->n[m]) || masked(p, m)) ok = flag_finite(p, x, need);
            }
        if (!ok) return false;
    }
    return true;
}

/* Are the leaves in need finite by their flags (mb_has_nonfinite: a
 * block of unknown flag is scanned once and keeps the answer) or, for
 * scalars, their values? */
static bool leaves_flagged_finite(const AmPlan *p, const AmBind *b, const Value *args, unsigned need)
{
    for (int l = 0; l < p->nleaf; l++) {
        if (!(need & 1u << l)) continue;
        const Value *v = &args[p->leaf[l].input];
        if (v->kind == V_MATRIX ? !v->m || mb_has_nonfinite(v->m) : !isfinite(b->sval[l])) return false;
    }
    return true;
}

/* Is node i of p exactly 0 wherever leaf l is 0, given that the leaves
 * in *need are finite? As zero_with, but a product's other factor must
 * be a constant or a leaf (added to *need): 0 * x is 0 for any finite x,
 * while a computed factor (G * s) may overflow to Inf where its leaves
 * are finite, which only body_finite's bounds exclude. */
static bool zero_if_finite(const AmPlan *p, int i, int l, unsigned *need)
{
    const ANode *n = &p->n[i];
    unsigned save = *need;
    switch (n->kind) {
    case AN_LEAF: return n->leaf == l;
    case AN_CONST: return n->v == 0;
    case AN_UN:
        return zero_keeping(n->op) && zero_if_finite(p, n->a, l, need);
    case AN_BIN:
        if (n->op == OP_MULT) {
            for (int side = 0; side < 2; side++) {
                int z = side ? n->b : n->a, o = side ? n->a : n->b;
                const ANode *x = &p->n[o];
                bool plain = (x->kind == AN_CONST && isfinite(x->v)) || x->kind == AN_LEAF;
                *need = save;
                if (plain && zero_if_finite(p, z, l, need)) {
                    if (x->kind == AN_LEAF && x->leaf != l) *need |= 1u << x->leaf;
                    return true;
                }
            }
            *need = save;
            return false;
        }
        if (n->op == OP_PLUS || n->op == OP_MINUS || n->op == OP_MIN || n->op == OP_MAX)
            return zero_if_finite(p, n->a, l, need) && zero_if_finite(p, n->b, l, need);
        return false;
    case AN_IFELSE: return zero_if_finite(p, n->b, l, need) && zero_if_finite(p, n->c, l, need);
    }
    return false;
}

/* May the zero cells of the sparse operand (leaf p->zleaf) be skipped,
 * that is, is the body exactly 0 there? When every result's body is 0
 * wherever it is, given only that some leaves are finite (the
 * products' other factors being leaves or constants: `X[k,i] * G[k,j] *
 * s`), their blocks answer through their finiteness flag
 * (mb_has_nonfinite: a block scanned once, by this loop or by any
 * product, is not scanned again, so a loop-invariant G costs nothing
 * from the second call on; the unfused t(X) %*% G asks the same flag);
 * otherwise the bounds of every node (body_finite: a scan of each
 * operand on every call). */
static bool zeros_skippable(const AmPlan *p, AmBind *b, const Value *args, MB *const *dense)
{
    unsigned need = 0;
    bool ok = true;
    for (int r = 0; r < p->nres && ok; r++) ok = zero_if_finite(p, p->root[r], p->zleaf, &need);
    for (int l = 0; l < p->nleaf && ok; l++) {
        if (!(need & (1u << l))) continue;
        const Value *v = &args[p->leaf[l].input];
        ok = v->kind == V_MATRIX ? v->m && !mb_has_nonfinite(v->m) : isfinite(b->sval[l]);
    }
    return ok || body_finite(p, b, dense);
}

/* ---- the zero skip checked after the loop ---- */

/* The skipped cells of the sparse operand add exactly 0 when every
 * factor that multiplies a part which is zero there (G in X * G, G * s
 * in X * (G * s)) is finite there. A factor that a stored non-zero of
 * the operand reads makes, where it is non-finite, that term and so the
 * accumulated cell of R non-finite: no operator on the way to R turns a
 * non-finite value finite (the walk refuses sign; masks, min and max
 * are needs_finite's). So a finite R after the loop vouches for every
 * value of such a factor that some non-zero read; the values no
 * non-zero reads (a factor of X[k,i] read by k: the rows k of X
 * without a non-zero) are checked before the loop by the bounds of
 * their leaves over those rows only, and a non-finite R sends the call
 * to the exact path (R's values restored, every cell computed). */
/* The unread region's cost per cell against a whole block's scan
 * (mb_has_nonfinite, max_abs, which stream it): rows picked out of it,
 * each a few cache lines (perf, N = 20, X 20000 x 400 at density 0.004,
 * 20% of G's rows unread: the region took 1.6x the samples of the scan
 * of all of G; at 3 the call checked after the loop there and was 1.36x
 * the call that scanned). */
#define AM_DEFER_CELL 8.0

typedef struct Defer {
    int fac[AM_MAXNODES];      /* the factors (nodes) */
    int u[AM_MAXNODES];        /* the operand's loop variable each depends
                                  on (kvar or tr), -1 neither */
    int nf;
    uint8_t *cov[2];           /* per value of kvar / tr: read by a stored
                                  non-zero */
    int64_t nunc[2];           /* values of kvar / tr no non-zero reads */
    bool any;                  /* some non-zero is read */
    double *saved;             /* R's cells before the loop */
} Defer;

/* Adds the factors of node i on its way to leaf l's zeros to d: false
 * where the way passes an operator that may make a finite value of a
 * non-finite one, or a factor reads both of l's loop variables. */
static bool defer_walk(const AmPlan *p, int i, int l, Defer *d)
{
    const ANode *n = &p->n[i];
    switch (n->kind) {
    case AN_LEAF: return n->leaf == l;
    case AN_CONST: return n->v == 0;
    case AN_UN:
        return n->op != OP_SIGN && zero_keeping(n->op) && defer_walk(p, n->a, l, d);
    case AN_BIN:
        if (n->op == OP_MULT) {
            int nf = d->nf;
            unsigned ik = 1u << p->tr | 1u << p->kvar;
            for (int side = 0; side < 2; side++) {
                int z = side ? n->b : n->a, o = side ? n->a : n->b;
                const ANode *x = &p->n[o];
                d->nf = nf;
                if ((x->dep & ik) == ik || !zero_with(p, z, l) || !defer_walk(p, z, l, d)) continue;
                if (x->kind == AN_CONST) {
                    if (isfinite(x->v)) return true;
                    continue;
                }
                d->fac[d->nf] = o;
                d->u[d->nf++] = x->dep & 1u << p->kvar ? p->kvar : x->dep & 1u << p->tr ? p->tr : -1;
                return true;
            }
            d->nf = nf;
            return false;
        }
        if (n->op == OP_PLUS || n->op == OP_MINUS) return defer_walk(p, n->a, l, d) && defer_walk(p, n->b, l, d);
        return false;
    default: return false;
    }
}

/* The leaves under node i, as bits. */
static unsigned leaves_under(const AmPlan *p, int i)
{
    const ANode *n = &p->n[i];
    if (n->kind == AN_LEAF) return 1u << n->leaf;
    return (n->a >= 0 ? leaves_under(p, n->a) : 0) | (n->b >= 0 ? leaves_under(p, n->b) : 0) |
           (n->c >= 0 ? leaves_under(p, n->c) : 0);
}

/* Does a factor of d depend on loop variable v (-1: on neither)? */
static bool defer_needs(const Defer *d, int v)
{
    for (int f = 0; f < d->nf; f++)
        if (d->u[f] == v) return true;
    return false;
}

/* Does coverage need a pass over the sparse operand's stored cells?
 * The values of k are read off the rows of the block as stored when it
 * is read transposed (X[k,i]: b->spsrc, rows by k) over all of i, those
 * of i (and whether any is read) off the rows of b->sp over all of k;
 * others take the pass. */
static bool defer_pass(const AmPlan *p, const AmBind *b, const Defer *d)
{
    bool tr = b->sp != b->spsrc;
    bool kfull = b->from[p->kvar] == 1 && b->step[p->kvar] == 1 && b->n[p->kvar] == b->sp->cols;
    bool ifull = b->from[p->tr] == 1 && b->n[p->tr] == b->sp->rows;
    return (defer_needs(d, p->kvar) && !(tr && ifull)) || ((defer_needs(d, p->tr) || defer_needs(d, -1)) && !kfull);
}

/* Marks in d the values of kvar and tr that a stored cell of the sparse
 * operand (b->sp, rows by tr, within the ranges) reads: the kernels
 * compute the body at every stored cell, zero or not (a stored 0 times
 * an Inf makes R non-finite too). */
static bool defer_cover(const AmPlan *p, const AmBind *b, Defer *d)
{
    int v[2] = {p->kvar, p->tr};
    for (int s = 0; s < 2; s++)
        if (!(d->cov[s] = br_calloc((size_t)BR_MAX(b->n[v[s]], 1), 1))) return false;
    /* (locals: the byte stores could alias the block's fields) */
    const int64_t *rp = b->sp->rp;
    const int32_t *ci = b->sp->ci;
    int64_t k0 = b->from[p->kvar] - 1, nk = b->n[p->kvar], st = b->step[p->kvar], i0 = b->from[p->tr] - 1;
    int64_t nr = b->n[p->tr];
    uint8_t *ck = d->cov[0], *cr = d->cov[1], all = 0;
    if (defer_pass(p, b, d)) {
        for (int64_t r = 0; r < nr; r++) {
            uint8_t any = 0;
            for (int64_t q = rp[i0 + r], qe = rp[i0 + r + 1]; q < qe; q++) {
                int64_t kk = st == 1 ? ci[q] - k0 : am_k_of(ci[q] - k0, st, nk);
                if (kk < 0 || kk >= nk) continue;
                ck[kk] = any = 1;
            }
            cr[r] = any;
            all |= any;
        }
    } else {
        /* i's values from b->sp's rows (all of k), k's from the stored
         * block's rows (transposed read, all of i) */
        for (int64_t r = 0; r < nr; r++) all |= cr[r] = rp[i0 + r] < rp[i0 + r + 1];
        if (b->sp != b->spsrc)
            for (int64_t kk = 0; kk < nk; kk++) {
                int64_t k = k0 + kk * st;
                ck[kk] = b->spsrc->rp[k] < b->spsrc->rp[k + 1];
            }
    }
    d->any = all;
    for (int s = 0; s < 2; s++)
        for (int64_t x = 0; x < b->n[v[s]]; x++) d->nunc[s] += !d->cov[s][x];
    return true;
}

/* The region of factor f no non-zero reads: the values of its variable
 * u not covered, every value when u is -1 and nothing is read; 0 when
 * every value is read. */
static int64_t defer_unread(const AmPlan *p, const Defer *d, int f)
{
    int u = d->u[f];
    return u < 0 ? !d->any : d->nunc[u == p->kvar ? 0 : 1];
}

/* Cells of leaf l in factor f's unread region (u's uncovered values,
 * all of its other variables); with scan, their largest magnitude
 * (INFINITY at a non-finite one) in *mx. */
static int64_t leaf_unread(const AmPlan *p, const AmBind *b, const Defer *d, int f, int l, bool scan, double *mx)
{
    const ALeaf *lf = &p->leaf[l];
    if (lf->nidx == 0) {
        if (scan) *mx = BR_MAX(*mx, isfinite(b->sval[l]) ? fabs(b->sval[l]) : INFINITY);
        return 1;
    }
    int u = d->u[f], var[2], nv = 0;
    for (int v = 0; v < p->nvars; v++)
        if (lf->dep & 1u << v) var[nv++] = v;
    if (nv == 1) var[nv++] = -1;
    const uint8_t *cov = u < 0 ? NULL : d->cov[u == p->kvar ? 0 : 1];
    int64_t cells = 1;
    for (int s = 0; s < 2; s++)
        if (var[s] >= 0) cells *= var[s] == u ? defer_unread(p, d, f) : b->n[var[s]];
    if (!scan || !cells) return cells;
    /* the inner variable the one of the smaller stride */
    if (var[1] >= 0 && b->st[l][var[0]] < b->st[l][var[1]]) { int t = var[0]; var[0] = var[1]; var[1] = t; }
    int64_t n0 = b->n[var[0]], n1 = var[1] >= 0 ? b->n[var[1]] : 1;
    int64_t s0 = b->st[l][var[0]], s1 = var[1] >= 0 ? b->st[l][var[1]] : 0;
    double m = 0;
    int bad = 0;
    for (int64_t x0 = 0; x0 < n0; x0++) {
        if (var[0] == u && cov[x0]) continue;
        const double *q = b->base[l] + x0 * s0;
        if (var[1] != u && s1 == 1) {   /* a run of cells (G[k,] of an unread k): four chains */
            double r[4] = {0};
            int rb[4] = {0};
            int64_t x1 = 0;
            for (; x1 + 4 <= n1; x1 += 4)
                for (int w = 0; w < 4; w++) {
                    double a = fabs(q[x1 + w]);
                    rb[w] |= !(a <= DBL_MAX);
                    r[w] = a > r[w] ? a : r[w];
                }
            for (; x1 < n1; x1++) {
                double a = fabs(q[x1]);
                rb[0] |= !(a <= DBL_MAX);
                r[0] = a > r[0] ? a : r[0];
            }
            m = BR_MAX(m, BR_MAX(BR_MAX(r[0], r[1]), BR_MAX(r[2], r[3])));
            bad |= rb[0] | rb[1] | rb[2] | rb[3];
            continue;
        }
        for (int64_t x1 = 0; x1 < n1; x1++) {
            if (var[1] == u && cov[x1]) continue;
            double a = fabs(q[x1 * s1]);
            bad |= !(a <= DBL_MAX);
            m = a > m ? a : m;
        }
    }
    *mx = BR_MAX(*mx, bad ? INFINITY : m);
    return cells;
}

/* The cells of the results' ranges (R's cells the loop writes). */
static int64_t res_cells(const AmPlan *p, const AmBind *b) { return b->n[p->tr] * b->n[p->tc] * p->nres; }

/* Copies the results' ranges to (save) or from d->saved; with check,
 * only says whether one holds a non-finite value. */
static bool res_cells_pass(const AmPlan *p, const AmBind *b, Defer *d, int dir)
{
    int64_t M = b->n[p->tr], N = b->n[p->tc], o = 0;
    int bad = 0;
    for (int q = 0; q < p->nres; q++)
        for (int64_t i = 0; i < M; i++) {
            double *r = b->r[q] + i * b->rst[q][p->tr];
            int64_t s = b->rst[q][p->tc];
            for (int64_t j = 0; j < N; j++, o++) {
                if (dir == 0) d->saved[o] = r[j * s];
                else if (dir == 1) r[j * s] = d->saved[o];
                else bad |= !isfinite(r[j * s]);
            }
        }
    return bad != 0;
}

/* Cells the zero skip's check reads before the loop with the flags
 * (zero_if_finite's leaves whose flag is not known, scanned whole) or
 * the bounds (body_finite: every operand), as zeros_skippable asks. */
static double check_cells(const AmPlan *p, const AmBind *b, const Value *args, MB *const *dense)
{
    unsigned need = 0;
    bool ok = true;
    for (int r = 0; r < p->nres && ok; r++) ok = zero_if_finite(p, p->root[r], p->zleaf, &need);
    double cells = 0;
    for (int l = 0; l < p->nleaf; l++) {
        const Value *v = &args[p->leaf[l].input];
        const MB *m = v->kind == V_MATRIX ? v->m : NULL;
        if (ok && !(need & 1u << l)) continue;
        if (ok && m && !m->ext && __atomic_load_n(&m->fin, __ATOMIC_RELAXED) != MB_FIN_UNKNOWN) continue;
        if (l == b->spleaf) cells += isnan(b->spmax) ? (double)b->sp->nnz : 0;
        else if (dense[l]) cells += (double)dense[l]->rows * (double)dense[l]->cols;
    }
    return cells;
}

/* Sets up the check after the loop for a call about to skip the zeros
 * of the sparse operand b->sp, where it reads fewer cells than the
 * check before the loop would (a new G of a loop over X * G: the rows
 * no non-zero reads, against all of G): false leaves the call to
 * zeros_skippable. *skippable: the unread values are finite (the
 * skip may run, then defer_after). */
static bool defer_setup(const AmPlan *p, const AmBind *b, const Value *args, MB *const *dense, Defer *d,
                        bool *skippable)
{
    memset(d, 0, sizeof *d);
    for (int r = 0; r < p->nres; r++)
        if (!defer_walk(p, p->root[r], p->zleaf, d)) return false;
    for (int f = 0; f < d->nf; f++)
        for (unsigned ls = leaves_under(p, d->fac[f]), l = 0; ls; ls >>= 1, l++) {
            const Value *v = &args[p->leaf[l].input];
            if ((ls & 1) && v->kind == V_MATRIX && v->m && !v->m->ext &&
                __atomic_load_n(&v->m->fin, __ATOMIC_RELAXED) == MB_FIN_NONFINITE)
                return false;
        }
    if (!defer_cover(p, b, d)) return false;
    /* R copied and checked, the pass over the stored cells where
     * coverage takes one; the unread region's cells, picked out of
     * their block, at AM_DEFER_CELL each */
    double cells = 2.0 * (double)res_cells(p, b) + (defer_pass(p, b, d) ? (double)b->sp->nnz : 0);
    for (int f = 0; f < d->nf; f++) {
        if (!defer_unread(p, d, f)) continue;
        for (unsigned ls = leaves_under(p, d->fac[f]), l = 0; ls; ls >>= 1, l++)
            if (ls & 1) cells += AM_DEFER_CELL * (double)leaf_unread(p, b, d, f, (int)l, false, NULL);
    }
    if (!(cells < check_cells(p, b, args, dense)) || !(d->saved = br_malloc((size_t)BR_MAX(res_cells(p, b), 1) *
                                                                          sizeof(double))))
        return false;
    /* the bounds of each factor over its unread region */
    double in[AM_MAXLEAVES] = {0}, bound[AM_MAXNODES];
    for (int f = 0; f < d->nf; f++) {
        if (!defer_unread(p, d, f)) continue;
        for (unsigned ls = leaves_under(p, d->fac[f]), l = 0; ls; ls >>= 1, l++)
            if (ls & 1) leaf_unread(p, b, d, f, (int)l, true, &in[l]);
    }
    node_bounds(p, in, bound);
    *skippable = true;
    for (int f = 0; f < d->nf; f++) *skippable &= !defer_unread(p, d, f) || bound[d->fac[f]] < 1e300;
    return true;
}

/* The cells the checks of one call read (run_nest's choices), for the
 * fusion planner's price of a loop over ext[v] iterations of each loop
 * variable whose (i,k) leaf p->zleaf is kept sparse with nnz non-zeros
 * (< 0: no leaf kept sparse): a body with masks, min or max bounds
 * every leaf before every call (body_finite), unless the leaves' flags
 * suffice (flags_suffice: they cost nothing, as below; then a sparse
 * loop's zero skip asks the flags or the bounds); a sparse loop whose body
 * is 0 where the leaf is, given only that plain leaves are finite, asks
 * their finiteness flags, which cost nothing (the producers of a new
 * block set them: elementwise operators, products, readers, rand; a
 * block of unknown flag is scanned once and keeps the answer); any
 * other sparse loop the cheaper of the bounds of every leaf and the
 * check after the loop (defer_setup: R's cells twice, the pass over the
 * non-zeros where coverage takes one, and each factor's unread region
 * at AM_DEFER_CELL a cell, a k of the leaf unread with probability
 * (1 - density)^M, an i with (1 - density)^K, as for independent
 * non-zeros). */
double am_check_cells(const AmPlan *p, const int64_t *ext, double nnz)
{
    double cells[AM_MAXLEAVES], bounds = 0;
    bool sp = nnz >= 0 && p->zleaf >= 0 && p->kvar >= 0;
    for (int l = 0; l < p->nleaf; l++) {
        double c = p->leaf[l].nidx ? 1 : 0;
        for (int v = 0; v < p->nvars && c > 0; v++)
            if (p->leaf[l].dep & 1u << v) c *= (double)ext[v];
        cells[l] = sp && l == p->zleaf ? nnz : c;
        bounds += cells[l];
    }
    unsigned need = 0;
    bool scanned = needs_finite(p);
    if (scanned && !flags_suffice(p, &need)) return bounds;
    if (!sp) return 0;
    bool flags = true;
    need = 0;
    for (int r = 0; r < p->nres && flags; r++) flags = zero_if_finite(p, p->root[r], p->zleaf, &need);
    if (flags) return 0;
    /* run_nest: the check after the loop only where the kernel does not
     * need the flags or the bounds */
    if (scanned) return bounds;
    Defer d;
    memset(&d, 0, sizeof d);
    for (int r = 0; r < p->nres; r++)
        if (!defer_walk(p, p->root[r], p->zleaf, &d)) return bounds;
    double M = (double)ext[p->tr], K = (double)ext[p->kvar], dens = BR_MIN(nnz / BR_MAX(M * K, 1), 1);
    double unread[3] = {pow(1 - dens, M), pow(1 - dens, K), pow(1 - dens, M * K)};
    /* (the planner's loops run over whole ranges: coverage takes a pass
     * for a k-factor of a leaf read untransposed, A[i,k]) */
    double def = 2 * M * (p->tc >= 0 ? (double)ext[p->tc] : 1) * p->nres;
    if (defer_needs(&d, p->kvar) && p->leaf[p->zleaf].idx[0] != p->kvar) def += nnz;
    for (int f = 0; f < d.nf; f++) {
        int u = d.u[f];
        double fr = unread[u == p->kvar ? 0 : u == p->tr ? 1 : 2];
        for (unsigned ls = leaves_under(p, d.fac[f]), l = 0; ls; ls >>= 1, l++)
            if (ls & 1) def += AM_DEFER_CELL * cells[l] * (u >= 0 && !(p->leaf[l].dep & 1u << u) ? 1 : fr);
    }
    return BR_MIN(bounds, def);
}

/* After a loop that skipped the zeros: false when a result holds a
 * non-finite value (the caller restores R and runs every cell). Else
 * every value of the factors was finite: a factor that is one leaf
 * read whole gets its block's finiteness flag, so that the next call on
 * the same block (a loop-invariant G) asks the flag and reads nothing. */
static bool defer_after(const AmPlan *p, const AmBind *b, Value *args, Defer *d)
{
    if (res_cells_pass(p, b, d, 2)) return false;
    for (int f = 0; f < d->nf; f++) {
        const ANode *n = &p->n[d->fac[f]];
        if (n->kind != AN_LEAF) continue;
        const ALeaf *lf = &p->leaf[n->leaf];
        Value *v = &args[lf->input];
        MB *m = v->kind == V_MATRIX ? v->m : NULL;
        if (!m || lf->nidx == 0 || (lf->nidx == 2 && lf->idx[0] == lf->idx[1])) continue;
        int64_t dims[2] = {lf->nidx == 1 ? m->rows * m->cols : m->rows, m->cols};
        bool whole = true;
        for (int s = 0; s < lf->nidx; s++) {
            int v2 = lf->idx[s];
            whole &= b->from[v2] == 1 && b->step[v2] == 1 && b->n[v2] == dims[s];
        }
        if (whole) mb_fin_set(m, false);
    }
    return true;
}

static void defer_free(Defer *d)
{
    free(d->cov[0]);
    free(d->cov[1]);
    free(d->saved);
}

/* ---- the scalar reference ---- */

static double eval_node(const AmPlan *p, const AmBind *b, const int64_t *x, double *val, int i)
{
    const ANode *n = &p->n[i];
    switch (n->kind) {
    case AN_CONST: return n->v;
    case AN_LEAF: {
        const ALeaf *l = &p->leaf[n->leaf];
        if (l->nidx == 0) return b->sval[n->leaf];
        int64_t off = 0;
        for (int v = 0; v < p->nvars; v++) off += x[v] * b->st[n->leaf][v];
        return b->base[n->leaf][off];
    }
    case AN_UN: return ops_unary(n->op, val[n->a]);
    case AN_BIN: return ops_binary(n->op, val[n->a], val[n->b]);
    case AN_IFELSE: return val[n->a] != 0 ? val[n->b] : val[n->c];
    }
    return NAN;
}

/* Every iteration in lexicographic order, one scalar at a time: the
 * specification the other paths are tested against. */
void am_reference(const AmPlan *p, const AmBind *b)
{
    int64_t x[WHERE_MAXVARS] = {0}, tot = 1;
    for (int v = 0; v < p->nvars; v++) tot *= b->n[v];
    double val[AM_MAXNODES];
    for (int64_t it = 0; it < tot; it++) {
        int64_t rest = it;
        for (int v = p->nvars - 1; v >= 0; v--) { x[v] = rest % b->n[v]; rest /= b->n[v]; }
        for (int i = 0; i < p->nn; i++) val[i] = eval_node(p, b, x, val, i);
        for (int r = 0; r < p->nres; r++) {
            int64_t ro = 0;
            for (int v = 0; v < p->nvars; v++) ro += x[v] * b->rst[r][v];
            b->r[r][ro] = am_acc(p->res[r]->acc, b->r[r][ro], val[p->root[r]]);
        }
    }
}

/* ---- the vectorized evaluator ---- */

#define AM_CHUNK 256

/* Evaluates the body over the chunk [j0, j0+len) of the vector variable
 * vv at the outer point x (x[vv] = j0): nodes that do not depend on vv
 * are scalars (sc), the others vectors of len (vec[i]); buf holds
 * AM_CHUNK doubles per node; spv: the value of the sparse operand's cell
 * (b->spleaf) at x. A root's value is then vec[root] (or, NULL, the
 * scalar sc[root]). */
static void eval_chunk(const AmPlan *p, const AmBind *b, const int64_t *x, int vv, int64_t len, double *buf,
                                const double **vec, double *sc, double *tmp, double spv)
{
    const KEwLeaf *ew = k_leaves(k_isa())->ew;
    for (int i = 0; i < p->nn; i++) {
        const ANode *n = &p->n[i];
        if (!(n->dep >> vv & 1)) {
            /* the sparse operand's cell comes from its CSR row (spv) */
            bool sp = n->kind == AN_LEAF && n->leaf == b->spleaf;
            sc[i] = sp ? spv : eval_node(p, b, x, sc, i);
            vec[i] = NULL;
            continue;
        }
        double *o = buf + (size_t)i * AM_CHUNK;
        vec[i] = o;
        if (n->kind == AN_LEAF) {
            int64_t off = 0;
            for (int v = 0; v < p->nvars; v++) off += x[v] * b->st[n->leaf][v];
            const double *src = b->base[n->leaf] + off;
            int64_t s = b->st[n->leaf][vv];
            if (s == 1) vec[i] = src;
            else for (int64_t t = 0; t < len; t++) o[t] = src[t * s];
        } else if (n->kind == AN_UN) {
            ew->unary(n->op, vec[n->a], o, len);
        } else if (n->kind == AN_BIN) {
            if (!vec[n->a]) ew->bin_sv(n->op, sc[n->a], vec[n->b], o, len);
            else if (!vec[n->b]) ew->bin_vs(n->op, vec[n->a], sc[n->b], o, len);
            else ew->bin_vv(n->op, vec[n->a], vec[n->b], o, len);
        } else {   /* ifelse: scalars spread into tmp (3 chunks) */
            const double *in[3];
            int ch[3] = {n->a, n->b, n->c};
            for (int k = 0; k < 3; k++) {
                if (vec[ch[k]]) { in[k] = vec[ch[k]]; continue; }
                ew->fill(tmp + k * AM_CHUNK, sc[ch[k]], len);
                in[k] = tmp + k * AM_CHUNK;
            }
            ew->select(in[0], in[1], in[2], o, len);
        }
    }
}

/* The body at point x over all of vv in chunks, accumulated into each
 * result at offset ro[r] (the results' stride along vv is 1); spv as for
 * eval_chunk. */
static void row_chunks(const AmPlan *p, const AmBind *b, int64_t *x, int vv, const int64_t *ro, double *buf,
                       const double **vec, double *sc, double *acc, double spv)
{
    const KEwLeaf *ew = k_leaves(k_isa())->ew;
    for (int64_t j0 = 0; j0 < b->n[vv]; j0 += AM_CHUNK) {
        int64_t len = BR_MIN(AM_CHUNK, b->n[vv] - j0);
        x[vv] = j0;
        eval_chunk(p, b, x, vv, len, buf, vec, sc, buf + (size_t)p->nn * AM_CHUNK, spv);
        for (int r = 0; r < p->nres; r++) {
            const double *v = vec[p->root[r]];
            if (!v) { ew->fill(acc, sc[p->root[r]], len); v = acc; }
            double *rr = b->r[r] + ro[r] + j0;
            WhereAcc a = p->res[r]->acc;
            if (a == WA_SET) memcpy(rr, v, (size_t)len * sizeof *rr);
            else ew->bin_vv(a == WA_ADD ? OP_PLUS : a == WA_MIN ? OP_MIN : OP_MAX, rr, v, rr, len);
        }
    }
}

/* Row r of the target over the non-zero cells A[i,k] of the sparse
 * operand's row i (b->sp, CSR; k within its range): work nnz * N. */
static void sparse_row(const AmPlan *p, const AmBind *b, int64_t *x, int64_t r, int vv, const int64_t *ro, double *buf,
                       const double **vec, double *sc, double *acc)
{
    const MB *m = b->sp;
    int kv = p->kvar;
    int64_t ia = b->from[p->tr] - 1 + r, k0 = b->from[kv] - 1;
    x[p->tr] = r;
    for (int64_t q = m->rp[ia]; q < m->rp[ia + 1]; q++) {
        int64_t kk = am_k_of(m->ci[q] - k0, b->step[kv], b->n[kv]);
        if (kk < 0) continue;
        x[kv] = kk;
        row_chunks(p, b, x, vv, ro, buf, vec, sc, acc, m->v[q]);
    }
}

/* The loop over every point of the other variables, vv innermost in
 * chunks; parallel over the target's row variable when it is not vv
 * (rows of R are then written by one thread each). */
int am_evaluate(const AmPlan *p, const AmBind *b, int skip, BrErr *e)
{
    int vv = p->tc >= 0 ? p->tc : p->tr;
    int outer[WHERE_MAXVARS], no = 0;
    if (p->tc >= 0) outer[no++] = p->tr;
    for (int v = 0; v < p->nvars; v++)
        if (v != p->tr && v != p->tc) outer[no++] = v;
    int64_t nouter = 1;
    for (int k = 0; k < no; k++) nouter *= b->n[outer[k]];
    if (b->n[vv] == 0 || nouter == 0) return 0;
    int64_t npar = no > 0 && outer[0] == p->tr && p->tc >= 0 ? b->n[p->tr] : 1;
    int64_t inner = nouter / npar;
    int failed = 0;
    int nt = npar * inner * b->n[vv] * p->nn > 100000 ? br_threads() : 1;
#pragma omp parallel num_threads(nt)
    {
        double *buf = br_malloc(((size_t)p->nn + 4) * AM_CHUNK * sizeof(double));
        const double **vec = br_malloc((size_t)p->nn * sizeof *vec);
        double sc[AM_MAXNODES];
        if (!buf || !vec) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 1)
        for (int64_t r = 0; r < npar; r++) {
            if (!buf || !vec) continue;
            double *acc = buf + (size_t)(p->nn + 3) * AM_CHUNK;
            for (int64_t it = 0; it < inner; it++) {
                int64_t x[WHERE_MAXVARS] = {0}, rest = it;
                for (int k = no - 1; k >= (npar > 1 ? 1 : 0); k--) {
                    x[outer[k]] = rest % b->n[outer[k]];
                    rest /= b->n[outer[k]];
                }
                if (npar > 1) x[outer[0]] = r;
                int64_t ro[WHERE_MAXRES] = {0};
                for (int q = 0; q < p->nres; q++)
                    for (int v = 0; v < p->nvars; v++) ro[q] += x[v] * b->rst[q][v];
                if (skip >= 0 && skip == b->spleaf) {   /* the non-zeros of row r of the sparse operand */
                    sparse_row(p, b, x, r, vv, ro, buf, vec, sc, acc);
                    break;
                }
                if (skip >= 0) {   /* a zero cell of the sparse operand adds nothing */
                    int64_t off = 0;
                    for (int v = 0; v < p->nvars; v++) off += x[v] * b->st[skip][v];
                    if (b->base[skip][off] == 0) continue;
                }
                row_chunks(p, b, x, vv, ro, buf, vec, sc, acc, 0);
            }
        }
        free(buf);
        free(vec);
    }
    return failed ? br_err(e, BR_ENOMEM, "out of memory in a where-loop") : 0;
}

/* ---- entry ---- */

/* The operand bind() kept sparse, densified for the paths that read it
 * by offsets. */
static int densify_leaf(const AmPlan *p, AmBind *b, MB **dense, BrErr *e)
{
    int l = b->spleaf;
    MB *d = mb_to_dense(b->sp, e);
    if (!d) return -1;
    mb_release(dense[l]);   /* the operand as read (the CSR of t(A) of a transposed read) */
    dense[l] = d;
    b->sp = NULL;
    b->spleaf = -1;
    memset(b->st[l], 0, sizeof b->st[l]);
    return bind_matrix(p, d, input_name(p, p->leaf[l].input), p->leaf[l].idx, p->leaf[l].nidx, b->from, b->n, b->step,
                       &b->base[l], b->st[l], e);
}

/* BRAID_AMULET=auto|kernel|search|eval|ref chooses the path (tests
 * compare them): auto takes the generated kernel for
 * matrix-multiplication-like loops of at least AM_MIN_WORK iterations,
 * kernel whenever it applies, search too but searching its parameters
 * again even when they are remembered. */
#define AM_MIN_WORK (64.0 * 64 * 64)
/* Runs the results of w selected by sel in one loop nest; their new
 * blocks into res[] (in w's order of the selected results). */
/* The wall clock and the calling thread's CPU seconds (the traced
 * phases of a call). */
static void call_clock(double *wall, double *cpu)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    *cpu = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    *wall = omp_get_wtime();
}

/* Runs the loop of bound b by mode's path (run_nest). */
static int run_loop(CgContext *c, const AmPlan *p, AmBind *b, const char *mode, double work, int skip, bool sparse,
                    BrErr *e)
{
    int ran = 0;
    if (!strcmp(mode, "ref")) { am_reference(p, b); ran = 1; }
    else if (!strcmp(mode, "kernel") || !strcmp(mode, "search") ||
             (strcmp(mode, "eval") && work >= AM_MIN_WORK && (skip < 0 || sparse)))
        ran = am_kernel_run(c, p, b, !strcmp(mode, "search"), e);
    if (ran < 0) return -1;
    return ran ? 0 : am_evaluate(p, b, skip, e);
}

static int run_nest(CgContext *c, const WhereLoop *w, unsigned sel, Value *args, int nargs, bool take, MB **res,
                    BrErr *e)
{
    AmPlan *p = br_malloc(sizeof *p);
    if (!p) return br_err(e, BR_ENOMEM, "out of memory");
    am_plan(w, sel, p);
    if (!p->ok) {
        free(p);
        return br_err(e, BR_EARG, "where-loop body too large (at most %d operations and %d variables)",
                      AM_MAXNODES, AM_MAXLEAVES);
    }
    AmBind b;
    MB *dense[AM_MAXLEAVES] = {0}, *r[WHERE_MAXRES] = {0};
    /* traced: the call's phases, wall and the calling thread's CPU */
    bool tr = getenv("BRAID_AMULET_TRACE") != NULL;
    double tw[4] = {0}, tc[4] = {0};
    if (tr) call_clock(&tw[0], &tc[0]);
    int rc = bind(c, p, args, nargs, take, &b, dense, r, e);
    if (tr) call_clock(&tw[1], &tc[1]);
    if (!rc) {
        const char *mode = getenv("BRAID_AMULET");
        if (!mode || !*mode) mode = "auto";
        double work = 1;
        for (int v = 0; v < p->nvars; v++) work *= (double)b.n[v];
        /* a sparse (i,k) operand whose zeros make the body zero: the
         * evaluator over its non-zero cells only */
        int skip = -1;
        bool scanned = needs_finite(p), deferred = false, flagged = false;
        Defer df = {0};
        unsigned need = 0;
        /* the kernel's devices exact by the leaves' flags, else by the
         * bounds of every node (a scan of every operand) */
        if (scanned && flags_suffice(p, &need) && leaves_flagged_finite(p, &b, args, need)) flagged = b.finite = true;
        else b.finite = scanned && body_finite(p, &b, dense);
        if (tr && scanned)
            fprintf(stderr, "amulet: finiteness %s\n", flagged ? "by the leaves' flags" : b.finite ? "by the bounds" :
                    "not shown");
        if (p->zleaf >= 0) {
            const Value *z = &args[p->leaf[p->zleaf].input];
            const MB *m = z->kind == V_MATRIX ? z->m : NULL;
            if (m && m->rows * m->cols > 0 && (double)m->nnz < AM_SPARSE * (double)(m->rows * m->cols)) {
                /* the check after the loop where it reads less (the
                 * sparse operand's CSR: the non-zeros say what is read) */
                if (!scanned && strcmp(mode, "ref") && b.spleaf == p->zleaf &&
                    defer_setup(p, &b, args, dense, &df, &deferred) && deferred) {
                    b.finite = true;
                    res_cells_pass(p, &b, &df, 0);
                    if (tr)
                        fprintf(stderr, "amulet: zero skip checked after the loop (%lld of %lld k unread)\n",
                                (long long)df.nunc[0], (long long)b.n[p->kvar]);
                } else if (!scanned) {
                    deferred = false;
                    b.finite = zeros_skippable(p, &b, args, dense);
                }
                /* the flags made the devices exact, not the body 0 where
                 * the operand is */
                if (flagged ? zeros_skippable(p, &b, args, dense) : b.finite) skip = p->zleaf;
            }
        }
        if (b.spleaf >= 0 && !isnan(b.spmax)) sp_kept_max(c, b.spsrc, b.spmax);
        /* the operand kept sparse serves the evaluator's skipping and the
         * sparse kernel */
        bool sparse = strcmp(mode, "ref") && skip >= 0 && skip == b.spleaf;
        if (b.spleaf >= 0 && !sparse) rc = densify_leaf(p, &b, dense, e);
        /* the sparse kernel's work: the non-zeros times the columns */
        if (sparse) work = (double)b.sp->nnz * (double)b.n[p->tc];
        if (!rc) rc = run_loop(c, p, &b, mode, work, skip, sparse, e);
        if (!rc && deferred && !defer_after(p, &b, args, &df)) {
            /* a non-finite result: R as it was, every cell computed */
            if (tr) fprintf(stderr, "amulet: non-finite result after the zero skip: every cell computed\n");
            res_cells_pass(p, &b, &df, 1);
            rc = densify_leaf(p, &b, dense, e);
            work = 1;
            for (int v = 0; v < p->nvars; v++) work *= (double)b.n[v];
            b.finite = false;
            if (!rc) rc = run_loop(c, p, &b, mode, work, -1, false, e);
        }
        defer_free(&df);
    }
    if (tr) call_clock(&tw[2], &tc[2]);
    for (int l = 0; l < AM_MAXLEAVES; l++) mb_release(dense[l]);
    int n = p->nres;
    free(p);
    for (int q = 0; q < n; q++) {
        if (!rc) recount_nnz(r[q]);
        res[q] = rc ? NULL : mb_finish(r[q], e);
        if (rc) mb_release(r[q]);
        else if (!res[q]) rc = -1;
    }
    if (rc) for (int q = 0; q < n; q++) mb_release(res[q]);
    if (tr) {
        call_clock(&tw[3], &tc[3]);
        fprintf(stderr, "amulet: call phases, ms wall/CPU of the calling thread: bind %.3g/%.3g, scan and loop "
                "%.3g/%.3g, count and finish %.3g/%.3g\n", (tw[1] - tw[0]) * 1e3, (tc[1] - tc[0]) * 1e3,
                (tw[2] - tw[1]) * 1e3, (tc[2] - tc[1]) * 1e3, (tw[3] - tw[2]) * 1e3, (tc[3] - tc[2]) * 1e3);
    }
    return rc ? -1 : 0;
}

int cg_where_exec(CgContext *c, const struct WhereLoop *w, Value *args, int nargs, bool take, Value *out, BrErr *e)
{
    int nres = where_nres(w);
    MB *res[WHERE_MAXRES] = {0};
    int rc = 0;
    if (am_alike(w)) rc = run_nest(c, w, AM_ALL, args, nargs, take, res, e);
    else   /* results indexed differently: a loop nest each */
        for (int q = 0; q < nres && !rc; q++) rc = run_nest(c, w, 1u << q, args, nargs, take && q == 0, &res[q], e);
    if (rc) {
        for (int q = 0; q < nres; q++) mb_release(res[q]);
        return -1;
    }
    if (nres == 1) {
        *out = val_matrix(res[0]);
        return 0;
    }
    /* several results: a list, read by the H_OUT hops */
    Value l = val_list_new(nres);
    if (l.kind != V_LIST) {
        for (int q = 0; q < nres; q++) mb_release(res[q]);
        return br_err(e, BR_ENOMEM, "out of memory");
    }
    for (int q = 0; q < nres; q++)
        if (list_append(l.l, val_matrix(res[q]), NULL, e)) {   /* releases res[q] */
            for (int u = q + 1; u < nres; u++) mb_release(res[u]);
            val_release(&l);
            return -1;
        }
    *out = l;
    return 0;
}
