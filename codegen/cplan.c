/* cplan.c: code generation plans (seed 000, section 2.2). A CPlan is a
 * template node (type, variant, data binding) over a DAG of basic
 * operation nodes, built top-down from a fused operator's root by
 * following the selected memo entries. Construction memoizes HOPs and
 * hash-conses equal nodes (CSE on CPlans); inputs get a canonical order
 * (first use in a depth-first walk), so equivalent plans produce the same
 * signature and hash whatever their HOP ids. Scalars are inputs, never
 * literals, so plans differing only in constants share code. */
#include "cgint.h"
#include "../base/vec.h"

#include <stdlib.h>
#include <string.h>

/* Input roles during construction (mapped to modes afterwards). */
enum { R_GEN, R_MAT, R_OU, R_OV, R_OB, R_OVJ, R_OUI,
       R_SLICE };   /* Cell: X of the k-th X[, lo:hi], role R_SLICE + k (an
                       input of its own, read in place at its offset) */

typedef struct Build {
    const Memo *m;
    CPlan *p;
    int *map;              /* hop id -> node, -1 */
    const MEntry **fent;   /* hop id -> its entry where the plan computes it */
    int nslice;            /* Cell slices so far */
    bool fail;
} Build;

static bool i_is_ref(const MEntry *e, int i) { return i < e->nin && e->ref[i] >= 0; }

const char *variant_name(Variant v)
{
    static const char *n[] = {"NO_AGG", "ROW_AGG", "COL_AGG", "FULL_AGG", "COL_T_AGG", "MULTI_AGG",
                              "LEFT_MM", "RIGHT_MM", "RIGHT_T_MM"};
    return (unsigned)v < sizeof n / sizeof *n ? n[v] : "?";
}

static int add_node(Build *b, CNode nd)
{
    CPlan *p = b->p;
    /* hash-consing: an equal node already exists */
    for (int i = 0; i < p->nn; i++) {
        CNode *o = &p->n[i];
        if (o->kind != nd.kind || o->op != nd.op || o->dir != nd.dir || o->na != nd.na || o->in != nd.in) continue;
        bool eq = true;
        for (int k = 0; k < nd.na; k++) if (o->a[k] != nd.a[k]) eq = false;
        if (eq) return i;
    }
    if (!br_grow((void **)&p->n, &p->ncap, p->nn + 1, sizeof *p->n)) { b->fail = true; return 0; }
    p->n[p->nn] = nd;
    return p->nn++;
}

/* The node reading hop h as input with a role (dedup by hop and role). */
static int input_node(Build *b, Hop *h, int role)
{
    CPlan *p = b->p;
    int k;
    for (k = 0; k < p->nin; k++) if (p->in[k].hop == h && p->in[k].role == role) break;
    if (k == p->nin) {
        if (!br_grow((void **)&p->in, &p->icap, p->nin + 1, sizeof *p->in)) { b->fail = true; return 0; }
        CInput *ci = &p->in[p->nin];
        memset(ci, 0, sizeof *ci);
        ci->hop = h;
        ci->scalar = h->dt == DT_SCALAR;
        ci->rows = h->rows;
        ci->cols = h->cols;
        ci->role = role;
        ci->slice = -1;
        p->nin++;
    }
    CNode nd = {.kind = CN_IN, .in = k, .rows = h->rows, .cols = h->cols, .scalar = h->dt == DT_SCALAR,
                .vlen = -1};
    return add_node(b, nd);
}

static int build(Build *b, Hop *h, const MEntry *e);

/* Is h the numeric literal 2? */
static bool is_lit2(const Hop *h)
{
    return h && h->kind == H_LIT && val_is_numeric(&h->lit) && val_as_double(&h->lit) == 2;
}

/* Records the hops the plan computes (following the entries from h as
 * build does), so that another, unfused reference to one of them reads
 * the computed value instead of the materialized one: in
 * W * ((U %*% t(V)) > (U %*% t(V))) with the product also needed outside,
 * the dot product in the kernel and dgemm's result differ in rounding,
 * and x > x must stay 0. */
static void mark(Build *b, Hop *h, const MEntry *e)
{
    if (b->fent[h->id]) return;
    b->fent[h->id] = e;
    for (int i = 0; i < h->nin && i < e->nin; i++) {
        if (e->ref[i] < 0) continue;
        MEntry *ie = sel_best(b->m, h->in[i], e->type);
        if (ie) mark(b, h->in[i], ie);
    }
}

static int child(Build *b, Hop *h, const MEntry *e, int i, int role)
{
    Hop *in = h->in[i];
    MEntry *ie = (i < e->nin && e->ref[i] >= 0) ? sel_best(b->m, in, e->type) : NULL;
    if (ie) return build(b, in, ie);
    if (role == R_GEN && b->fent[in->id]) return build(b, in, b->fent[in->id]);
    return input_node(b, in, role);
}

static CNode op_node(const Hop *h, CNKind k)
{
    CNode nd = {.kind = k, .op = h->op, .dir = h->dir, .rows = h->rows, .cols = h->cols,
                .scalar = h->dt == DT_SCALAR, .in = -1, .vlen = -1};
    return nd;
}

/* The node of hop h under entry e (memoized by hop). */
static int build(Build *b, Hop *h, const MEntry *e)
{
    if (b->fail) return 0;
    if (b->map[h->id] >= 0) return b->map[h->id];
    TplType t = e->type;
    CNode nd;
    int r;
    switch (h->kind) {
    case H_UNARY:
        nd = op_node(h, CN_UN);
        nd.na = 1;
        nd.a[0] = child(b, h, e, 0, R_GEN);
        r = add_node(b, nd);
        break;
    case H_BINARY:
        nd = op_node(h, CN_BIN);
        nd.na = 2;
        if (h->op == OP_POW && is_lit2(h->in[1])) {
            /* X ^ 2 as X * X (what cg_pow computes for an exponent of 2):
             * with the exponent a scalar argument, the pow call in cg_pow
             * kept every loop of the operator from vectorizing */
            nd.op = OP_MULT;
            nd.a[0] = nd.a[1] = child(b, h, e, 0, R_GEN);
        } else {
            for (int i = 0; i < 2; i++) nd.a[i] = child(b, h, e, i, R_GEN);
        }
        r = add_node(b, nd);
        break;
    case H_TERNARY:
        nd = op_node(h, CN_TER);
        nd.na = 3;
        for (int i = 0; i < 3; i++) nd.a[i] = child(b, h, e, i, R_GEN);
        r = add_node(b, nd);
        break;
    case H_AGG:
        nd = op_node(h, CN_AGG);
        nd.na = 1;
        nd.a[0] = child(b, h, e, 0, R_GEN);
        r = add_node(b, nd);
        break;
    case H_MATMUL:
        if (h->op == OP_MATMUL) {
            nd = op_node(h, CN_MM);
            nd.na = 2;
            if (t == T_OUTER && (i_is_ref(e, 0))) {
                /* (O) %*% V2: left */
                nd.a[0] = child(b, h, e, 0, R_GEN);
                nd.a[1] = input_node(b, h->in[1], R_OVJ);
            } else if (t == T_OUTER) {
                /* U %*% t(V) */
                nd.a[0] = input_node(b, h->in[0], R_OU);
                Hop *bt = h->in[1];
                if (bt->kind == H_REORG && bt->op == OP_TRANS) {
                    CNode tr = op_node(bt, CN_TRANS);
                    tr.na = 1;
                    tr.a[0] = input_node(b, bt->in[0], R_OV);
                    nd.a[1] = add_node(b, tr);
                } else {
                    nd.a[1] = input_node(b, bt, R_OB);
                }
            } else {
                nd.a[0] = child(b, h, e, 0, R_GEN);
                nd.a[1] = input_node(b, h->in[1], R_MAT);
            }
            r = add_node(b, nd);
        } else if (h->op == OP_MATMULTL) {
            nd = op_node(h, CN_MMTL);
            nd.na = 2;
            if (t == T_OUTER) {
                int fi = i_is_ref(e, 0) ? 0 : 1;
                nd.a[fi] = child(b, h, e, fi, R_GEN);
                nd.a[1 - fi] = input_node(b, h->in[1 - fi], R_OUI);
            } else {
                for (int i = 0; i < 2; i++) nd.a[i] = child(b, h, e, i, R_GEN);
            }
            r = add_node(b, nd);
        } else if (h->op == OP_MMCHAIN && t == T_ROW) {
            /* t(X) %*% (w * (X %*% v)) as three row operations */
            int x = input_node(b, h->in[0], R_GEN);
            CNode mm = op_node(h, CN_MM);
            mm.op = OP_MATMUL;
            mm.na = 2;
            mm.a[0] = x;
            mm.a[1] = input_node(b, h->in[1], R_MAT);
            mm.rows = h->in[0]->rows;
            mm.cols = h->in[1]->cols;
            mm.scalar = false;
            int q = add_node(b, mm);
            if (h->nin > 2 && h->in[2]) {
                CNode mu = op_node(h, CN_BIN);
                mu.op = OP_MULT;
                mu.na = 2;
                mu.a[0] = child(b, h, e, 2, R_GEN);
                mu.a[1] = q;
                mu.rows = mm.rows;
                mu.cols = mm.cols;
                q = add_node(b, mu);
            }
            CNode tl = op_node(h, CN_MMTL);
            tl.op = OP_MATMULTL;
            tl.na = 2;
            tl.a[0] = x;
            tl.a[1] = q;
            r = add_node(b, tl);
        } else {
            b->fail = true;
            return 0;
        }
        break;
    case H_RIX:
        /* explore.c row_rix: X[, lo:hi]; X[, j] as j:j (Row: of X's row;
         * Cell: X read in place, finish_cell) */
        if (t != T_ROW && t != T_CELL) { b->fail = true; return 0; }
        nd = op_node(h, CN_SLICE);
        nd.na = 3;
        nd.a[0] = t == T_CELL ? input_node(b, h->in[0], R_SLICE + b->nslice++) : child(b, h, e, 0, R_GEN);
        nd.a[1] = child(b, h, e, 3, R_GEN);
        nd.a[2] = h->ix.cmode == IX_RANGE ? child(b, h, e, 4, R_GEN) : nd.a[1];
        r = add_node(b, nd);
        break;
    default:
        b->fail = true;
        return 0;
    }
    b->map[h->id] = r;
    b->p->ncovered++;
    return r;
}

/* ---- modes, value classes, main input, safety ---- */

static int mode_in_space(const CInput *c, int64_t M, int64_t N)
{
    if (c->scalar) return IM_SCALAR;
    if (c->rows == M && c->cols == N) return IM_FULL;
    if (c->rows == 1 && c->cols == N) return IM_ROW;
    if (c->cols == 1 && c->rows == M) return IM_COL;
    return -1;
}

/* zero(node): the node is 0 wherever input `mainin` is 0 (Cell/Outer),
 * adding runtime scalar conditions to p. */
static bool zero_of(CPlan *p, int n, int mainin)
{
    CNode *x = &p->n[n];
    int fl = op_info[x->op].flags;
    switch (x->kind) {
    case CN_IN: return x->in == mainin;
    case CN_UN: return (fl & OF_SAFE) && zero_of(p, x->a[0], mainin);
    case CN_BIN: {
        bool za = zero_of(p, x->a[0], mainin), zb = zero_of(p, x->a[1], mainin);
        if (fl & OF_MULT) return za || zb;
        if ((fl & OF_SAFE) && za && zb) return true;
        /* matrix op scalar: safe if op(0, s) == 0 at run time */
        for (int side = 0; side < 2; side++) {
            CNode *s = &p->n[x->a[1 - side]];
            bool zs = side == 0 ? za : zb;
            if (!zs || s->kind != CN_IN || !p->in[s->in].scalar) continue;
            if (p->ncond >= CG_MAXCOND) return false;
            p->cond[p->ncond++] = (SafeCond){x->op, s->in, side == 1};
            return true;
        }
        return false;
    }
    case CN_TER:
        return zero_of(p, x->a[0], mainin) && zero_of(p, x->a[2], mainin);
    default:
        return false;
    }
}

static int64_t input_nnz(const CInput *c)
{
    const Hop *h = c->hop;
    if (h && h->nnz >= 0) return h->nnz;
    return c->rows * c->cols;
}

/* Chooses the sparse driver of a Cell/MAgg/Outer plan: the FULL input
 * with the fewest non-zeros for which every output is zero-preserving. */
static void choose_main(CPlan *p, const int *cellroot, int nroots, bool prefer_first)
{
    int best = -1;
    int64_t bnnz = 0;
    SafeCond bc[CG_MAXCOND];
    int bn = 0;
    for (int k = 0; k < p->nin; k++) {
        if (p->in[k].mode != IM_FULL) continue;
        p->ncond = 0;
        bool ok = true;
        for (int r = 0; r < nroots && ok; r++) ok = zero_of(p, cellroot[r], k);
        if (!ok) continue;
        int64_t nz = input_nnz(&p->in[k]);
        if (best < 0 || (!prefer_first && nz < bnnz)) {
            best = k; bnnz = nz; bn = p->ncond;
            memcpy(bc, p->cond, sizeof bc);
        }
    }
    p->ncond = 0;
    if (best >= 0) {
        p->main = best;
        p->sparse_safe = true;
        p->ncond = bn;
        memcpy(p->cond, bc, sizeof bc);
        return;
    }
    p->sparse_safe = false;
    p->main = -1;
    for (int k = 0; k < p->nin; k++) if (p->in[k].mode == IM_FULL && p->in[k].slice < 0) { p->main = k; break; }
}

/* The values z[0..nn) of a Cell/MAgg plan's nodes at a cell where every
 * full input is 0 (sc: the scalar inputs' values; NULL: the literal
 * scalars, NAN for others); NAN where not computable (an aggregate).
 * Nodes are evaluated once each, in index order (add_node makes a node
 * after its children; a child that is not earlier gives NAN). False
 * when the plan has a node other than an input, an elementwise
 * operation or an aggregate (the values are then not all known). */
bool cplan_zero_values(const CPlan *p, const double *sc, double *z)
{
    for (int n = 0; n < p->nn; n++) {
        const CNode *x = &p->n[n];
        double a = x->na > 0 && x->a[0] < n ? z[x->a[0]] : NAN, b = x->na > 1 && x->a[1] < n ? z[x->a[1]] : NAN;
        switch (x->kind) {
        case CN_IN:
            if (!p->in[x->in].scalar) z[n] = 0;
            else if (sc) z[n] = sc[x->in];
            else if (p->in[x->in].hop && p->in[x->in].hop->kind == H_LIT) z[n] = val_as_double(&p->in[x->in].hop->lit);
            else z[n] = NAN;
            break;
        case CN_UN: z[n] = ops_unary(x->op, a); break;
        case CN_BIN: z[n] = ops_binary(x->op, a, b); break;
        case CN_AGG: z[n] = NAN; break;
        default: return false;
        }
    }
    return true;
}

/* A Cell/MAgg plan over one full input and scalars that the structural
 * test (zero_of) finds unsafe may still be 0 wherever that input is:
 * log(X + 1), sqrt(X ^ 2 + 0), exp(X) - 1. It is marked safe by
 * evaluation (zero_eval, the main that input) where its roots are 0 at
 * the input's zeros with the literal scalars (a scalar known only at run
 * time: conds_hold evaluates the roots with its value, and a non-zero
 * runs the dense path). Over a sparse X the generated code then visits
 * X's non-zeros only (log(X + 1) over 250,000 x 1000 at 1%: every
 * cell, about 5 s fused or not). */
static void zero_eval_main(CPlan *p, const int *cellroot, int nroots)
{
    int full = -1;
    for (int k = 0; k < p->nin; k++) {
        if (p->in[k].scalar) continue;
        if (p->in[k].mode != IM_FULL || p->in[k].slice >= 0 || full >= 0) return;
        full = k;
    }
    if (full < 0) return;
    double *z = br_malloc(((size_t)p->nn + 1) * sizeof(double));
    if (!z) return;
    bool ok = cplan_zero_values(p, NULL, z);
    for (int r = 0; ok && r < nroots; r++)   /* (NAN: a scalar known at run time, or NaN: checked then) */
        ok = z[cellroot[r]] == 0 || isnan(z[cellroot[r]]);
    free(z);
    if (!ok) return;
    p->main = full;
    p->sparse_safe = true;
    p->zero_eval = true;
    p->ncond = 0;
}

static void row_classes(CPlan *p)
{
    int nslice = 0;
    for (int i = 0; i < p->nn; i++) {
        CNode *x = &p->n[i];
        x->vlen = -1;
        switch (x->kind) {
        case CN_IN: {
            CInput *c = &p->in[x->in];
            if (c->mode == IM_SCALAR || c->mode == IM_MAT) x->vc = VC_CONST;
            else if (c->mode == IM_COL) x->vc = VC_CELL;
            else { x->vc = VC_VEC; x->vlen = x->in; }
            break;
        }
        case CN_UN: case CN_BIN: case CN_TER:
            x->vc = VC_CONST;
            for (int k = 0; k < x->na; k++) {
                CNode *c = &p->n[x->a[k]];
                if (c->vc > x->vc) x->vc = c->vc;
                if (c->vc == VC_VEC && x->vlen < 0) x->vlen = c->vlen;
            }
            break;
        case CN_AGG:
            x->vc = x->dir == DIR_ROW ? VC_CELL : VC_VEC;
            if (x->dir != DIR_ROW) x->vlen = p->n[x->a[0]].vlen;
            break;
        case CN_MM: {
            CNode *bn = &p->n[x->a[1]];
            CInput *c = &p->in[bn->in];
            if (c->cols == 1) x->vc = VC_CELL;
            else { x->vc = VC_VEC; x->vlen = bn->in; }
            break;
        }
        case CN_SLICE:
            /* one column: a value per row; else a vector of its own
             * length (L entries after the inputs', in node order) */
            x->vc = x->cols == 1 ? VC_CELL : VC_VEC;
            x->vlen = p->nin + 2 * nslice++;
            break;
        default:
            x->vc = VC_VEC;
            break;
        }
    }
}

/* Cell slices: each CN_SLICE reads an input X of its own (no other node
 * reads it) with the iteration's rows, in place; false otherwise. */
static bool cell_slices(CPlan *p)
{
    for (int i = 0; i < p->nn; i++) {
        const CNode *x = &p->n[i];
        if (x->kind != CN_SLICE) continue;
        const CNode *a = &p->n[x->a[0]];
        if (a->kind != CN_IN || p->in[a->in].scalar || p->in[a->in].slice >= 0 || p->in[a->in].rows != p->srows ||
            x->rows != p->srows)
            return false;
        p->in[a->in].slice = i;
    }
    for (int i = 0; i < p->nn; i++) {
        const CNode *x = &p->n[i];
        for (int k = 0; k < x->na; k++) {
            const CNode *a = &p->n[x->a[k]];
            if (a->kind == CN_IN && p->in[a->in].slice >= 0 && !(x->kind == CN_SLICE && k == 0)) return false;
        }
        if (x->kind == CN_IN && p->in[x->in].slice >= 0)
            for (int r = 0; r < p->nout; r++)
                if (p->out[r] == i) return false;
    }
    return true;
}

static bool finish_cell(CPlan *p, int *roots, int nroots)
{
    /* the iteration space: the shape of the (first) cell expression */
    CNode *r0 = &p->n[roots[0]];
    p->srows = r0->rows;
    p->scols = r0->cols;
    if (!cell_slices(p)) return false;
    for (int k = 0; k < p->nin; k++) {
        if (p->in[k].slice >= 0) { p->in[k].mode = IM_FULL; continue; }
        int md = mode_in_space(&p->in[k], p->srows, p->scols);
        if (md < 0) return false;
        p->in[k].mode = (InMode)md;
    }
    for (int i = 0; i < p->nn; i++) p->n[i].vc = p->n[i].kind == CN_IN && p->in[p->n[i].in].scalar ? VC_CONST : VC_CELL;
    choose_main(p, roots, nroots, false);
    if (!p->sparse_safe) zero_eval_main(p, roots, nroots);
    /* the shape must follow from the inputs at run time */
    bool full = false, row = false, col = false;
    for (int k = 0; k < p->nin; k++) {
        full |= p->in[k].mode == IM_FULL;
        row |= p->in[k].mode == IM_ROW;
        col |= p->in[k].mode == IM_COL;
    }
    return full || (row && col);
}

static bool finish_row(CPlan *p)
{
    int64_t m = -1;
    /* main: the left operand of a product if it is an input, else the
     * widest row-aligned input */
    for (int i = 0; i < p->nn && m < 0; i++) {
        CNode *x = &p->n[i];
        if ((x->kind == CN_MM || x->kind == CN_MMTL) && p->n[x->a[0]].kind == CN_IN) {
            CInput *c = &p->in[p->n[x->a[0]].in];
            if (!c->scalar && c->cols > 1) { p->main = p->n[x->a[0]].in; m = c->rows; }
        }
    }
    if (m < 0) {
        int best = -1;
        for (int k = 0; k < p->nin; k++) {
            CInput *c = &p->in[k];
            if (c->scalar || c->role != R_GEN || c->rows < 2) continue;
            if (best < 0 || c->cols > p->in[best].cols) best = k;
        }
        if (best < 0) return false;
        p->main = best;
        m = p->in[best].rows;
    }
    p->srows = m;
    p->scols = p->in[p->main].cols;
    for (int k = 0; k < p->nin; k++) {
        CInput *c = &p->in[k];
        if (c->scalar) c->mode = IM_SCALAR;
        else if (c->role == R_MAT) c->mode = IM_MAT;
        else if (c->rows == m) c->mode = c->cols == 1 ? IM_COL : IM_FULL;
        else if (c->rows == 1 && c->cols > 1) c->mode = IM_ROW;
        else return false;
    }
    if (p->in[p->main].mode != IM_FULL) return false;
    row_classes(p);
    /* the main row read sparse: every consumer takes a sparse operand */
    p->main_sparse_ok = true;
    for (int i = 0; i < p->nn; i++) {
        CNode *x = &p->n[i];
        for (int k = 0; k < x->na; k++) {
            CNode *c = &p->n[x->a[k]];
            if (c->kind != CN_IN || c->in != p->main) continue;
            bool ok = ((x->kind == CN_MM || x->kind == CN_MMTL) && k == 0) ||
                      (x->kind == CN_AGG && x->dir == DIR_ROW && (op_info[x->op].flags & OF_SAFE));   /* sums over the non-zeros */
            if (!ok) p->main_sparse_ok = false;
        }
    }
    return true;
}

/* Is node n of an Outer plan the outer product U %*% t(V)? */
static bool outer_uv(const CPlan *p, int n)
{
    const CNode *x = &p->n[n];
    if (x->kind != CN_MM) return false;
    const CNode *a = &p->n[x->a[0]];
    return a->kind == CN_IN && p->in[a->in].mode == IM_MAT;
}

static bool finish_outer(CPlan *p, int root)
{
    int uv = -1;
    for (int i = 0; i < p->nn; i++) {
        if (p->n[i].kind == CN_MM && p->n[p->n[i].a[0]].kind == CN_IN && p->in[p->n[p->n[i].a[0]].in].role == R_OU) {
            uv = i;
            break;
        }
    }
    if (uv < 0) return false;
    p->srows = p->n[uv].rows;
    p->scols = p->n[uv].cols;
    for (int k = 0; k < p->nin; k++) {
        CInput *c = &p->in[k];
        switch (c->role) {
        case R_OU: case R_OUI: c->mode = IM_MAT; break;
        case R_OV: case R_OVJ: c->mode = IM_VROW; break;
        case R_OB: c->mode = IM_BT; break;
        default: {
            int md = mode_in_space(c, p->srows, p->scols);
            if (md < 0) return false;
            c->mode = (InMode)md;
        }
        }
    }
    for (int i = 0; i < p->nn; i++) p->n[i].vc = p->n[i].kind == CN_IN && p->in[p->n[i].in].scalar ? VC_CONST : VC_CELL;
    /* variant and the cell expression */
    CNode *r = &p->n[root];
    int cell = root;
    p->var = V_NO_AGG;
    if (r->kind == CN_AGG) { p->var = V_FULL_AGG; cell = r->a[0]; }
    else if (r->kind == CN_MM && !outer_uv(p, root)) { p->var = V_LEFT_MM; cell = r->a[0]; }
    else if (r->kind == CN_MMTL) {
        bool left_is_input = p->n[r->a[0]].kind == CN_IN && p->in[p->n[r->a[0]].in].mode == IM_MAT;
        p->var = left_is_input ? V_RIGHT_T_MM : V_RIGHT_MM;
        cell = left_is_input ? r->a[1] : r->a[0];
    }
    int roots[1] = {cell};
    choose_main(p, roots, 1, false);
    return p->sparse_safe;
}

/* ---- signature ---- */

/* The compile-time length of Row vectors of length L[vlen]: an input's
 * columns, or a slice's width (a vector of a slice's length, as MLogreg's
 * gradient t(X) %*% (P[, 1:K] - Y[, 1:K]); the kernel checks the run-time
 * length L[vlen] before its blocked path); 0 where unknown. */
static int64_t vlen_cols(const CPlan *p, int vlen)
{
    if (vlen >= 0 && vlen < p->nin) return p->in[vlen].cols;
    for (int i = 0; vlen >= p->nin && i < p->nn; i++)
        if (p->n[i].kind == CN_SLICE && p->n[i].vlen == vlen) return p->n[i].cols;
    return 0;
}

int cplan_row_kwidth(const CPlan *p, int n)
{
    if (p->tpl != T_ROW || p->main < 0 || n < 0 || n >= p->nn) return 0;
    const CNode *x = &p->n[n];
    const CNode *a = x->na > 0 ? &p->n[x->a[0]] : NULL;
    bool amain = a && a->kind == CN_IN && a->in == p->main;
    int64_t w = 0;
    if (x->kind == CN_MM && x->vc == VC_VEC && amain) {
        const CNode *b = &p->n[x->a[1]];
        if (b->kind == CN_IN && p->in[b->in].mode == IM_MAT) w = p->in[b->in].cols;
    } else if (x->kind == CN_MMTL && p->var == V_COL_T_AGG && n == p->out[0] && amain) {
        const CNode *b = &p->n[x->a[1]];
        if (b->vc == VC_VEC) w = vlen_cols(p, b->vlen);
    } else if (x->kind == CN_MMTL && p->var == V_MULTI) {
        /* a COL_T_AGG output of a multi-output plan, the main row on
         * either side (t(X) %*% Q, or k-means' t(P) %*% X) */
        int q = cplan_row_tvec(p, n);
        bool out = false;
        for (int t = 0; t < p->nout; t++) out |= p->out[t] == n && cplan_row_ovar(p, t) == V_COL_T_AGG;
        if (out && q >= 0) w = vlen_cols(p, p->n[q].vlen);
    }
    return w >= 2 && w <= 16 ? (int)w : 0;
}

bool cplan_cell_narrow(const CPlan *p)
{
    /* (full aggregates run cg_fullagg's lanes, not cg_dense) */
    if (p->tpl != T_CELL || p->var == V_FULL_AGG) return false;
    bool vec = false, full = false;
    for (int k = 0; k < p->nin; k++) {
        InMode md = p->in[k].mode;
        vec |= md == IM_ROW || md == IM_COL;
        if (md != IM_FULL) continue;
        /* (rows of a multiple of 4 values leave the per-row loop no
         * scalar rest: 4, 12 as fast, 8, 16 1.17x slower tiled) */
        if (p->in[k].cols < 2 || p->in[k].cols > 15 || p->in[k].cols % 4 == 0) return false;
        full = true;
    }
    return vec && full;
}

bool cplan_row_blocked(const CPlan *p)
{
    for (int i = 0; i < p->nn; i++) if (cplan_row_kwidth(p, i)) return true;
    return false;
}

int cplan_row_main_taggs(const CPlan *p, int *outs, bool *left)
{
    int nt = 0;
    if (p->tpl != T_ROW || p->main < 0) return 0;
    for (int t = 0; t < p->nout && nt < SPOOF_MAXOUT; t++) {
        const CNode *x = &p->n[p->out[t]];
        if (cplan_row_ovar(p, t) != V_COL_T_AGG || x->kind != CN_MMTL) continue;
        bool m0 = p->n[x->a[0]].kind == CN_IN && p->n[x->a[0]].in == p->main;
        bool m1 = p->n[x->a[1]].kind == CN_IN && p->n[x->a[1]].in == p->main;
        if (m0 == m1) continue;
        if (left) left[nt] = m0;
        outs[nt++] = t;
    }
    return nt;
}

int cplan_row_main_prods(const CPlan *p, int *nodes, bool *only)
{
    int np = 0;
    *only = p->tpl == T_ROW && p->main >= 0;
    if (!*only) return 0;
    /* the roots whose q the skeleton may take (cplan_row_main_taggs) */
    int tq[SPOOF_MAXOUT], ntq = cplan_row_main_taggs(p, tq, NULL);
    for (int t = 0; t < p->nout; t++) {
        const CNode *o = &p->n[p->out[t]];
        if (o->kind == CN_IN && o->in == p->main) *only = false;
    }
    for (int i = 0; i < p->nn; i++) {
        const CNode *x = &p->n[i];
        if (x->kind == CN_IN) continue;
        bool taken = false;
        for (int j = 0; j < ntq; j++) taken |= p->out[tq[j]] == i;
        if (taken) continue;
        for (int k = 0; k < x->na; k++) {
            const CNode *a = &p->n[x->a[k]];
            if (a->kind != CN_IN || a->in != p->main) continue;
            const CNode *b = x->na > 1 ? &p->n[x->a[1]] : NULL;
            if (x->kind == CN_MM && k == 0 && b && b->kind == CN_IN && p->in[b->in].mode == IM_MAT) {
                if (np < SPOOF_MAXPROD) nodes[np] = i;
                np++;
            } else {
                *only = false;
            }
        }
    }
    if (np > SPOOF_MAXPROD) { *only = false; return 0; }
    return np;
}

int cplan_outer_lit(const CPlan *p, int in)
{
    if (p->tpl != T_OUTER || in < 0 || in >= p->nin || p->in[in].scalar) return 0;
    int64_t w = p->in[in].cols;
    return w >= 2 && w <= 128 ? (int)w : 0;
}

int cplan_row_tvec(const CPlan *p, int n)
{
    if (p->tpl != T_ROW || p->main < 0 || n < 0 || n >= p->nn || p->n[n].kind != CN_MMTL) return -1;
    const CNode *x = &p->n[n];
    for (int s = 0; s < 2; s++) {
        const CNode *m = &p->n[x->a[s]], *q = &p->n[x->a[1 - s]];
        if (m->kind == CN_IN && m->in == p->main && q->vc == VC_VEC && q->vlen >= 0)
            return x->a[1 - s];
    }
    return -1;
}

/* a tag character and a number, the pieces of a signature */
static void tagi(StrBuf *b, char tag, long long v)
{
    sb_putc(b, tag);
    sb_puti(b, v);
}

static void make_sig(CPlan *p)
{
    StrBuf b = {0};
    tagi(&b, 'T', p->tpl); tagi(&b, 'V', p->var); tagi(&b, 'M', p->main); tagi(&b, 'S', p->sparse_safe); tagi(&b, 'Z', p->zero_eval);
    tagi(&b, 'R', p->main_sparse_ok); tagi(&b, 'O', p->out_matrix);
    sb_putc(&b, '|');
    for (int k = 0; k < p->nin; k++) {
        tagi(&b, 'i', p->in[k].scalar); tagi(&b, ':', p->in[k].mode);
        /* a stitched input's expression, constants by their bits (they
         * are the operator's, not arguments) */
        for (int i = 0; i < p->in[k].pre.n; i++) {
            const SpPreNode *x = &p->in[k].pre.x[i];
            long long c;
            memcpy(&c, &x->c, sizeof c);
            tagi(&b, 'p', x->kind); tagi(&b, ':', x->op); tagi(&b, ',', x->a); tagi(&b, ',', x->b);
            if (x->kind == SPP_CONST) tagi(&b, '=', c);
        }
    }
    sb_putc(&b, '|');
    for (int i = 0; i < p->nn; i++) {
        CNode *x = &p->n[i];
        tagi(&b, 'n', x->kind); tagi(&b, ':', x->op); tagi(&b, ':', x->dir); tagi(&b, ':', x->in);
        tagi(&b, ':', x->vc); tagi(&b, ':', x->vlen);
        for (int k = 0; k < x->na; k++) tagi(&b, ',', x->a[k]);
    }
    sb_putc(&b, '|');
    for (int i = 0; i < p->nout; i++) tagi(&b, 'o', p->out[i]);
    /* widths the generated Row code is specialized on */
    for (int i = 0; i < p->nn; i++)
        if (cplan_row_kwidth(p, i)) { tagi(&b, 'k', i); tagi(&b, ':', cplan_row_kwidth(p, i)); }
    for (int k = 0; k < p->nin; k++)
        if (cplan_outer_lit(p, k)) { tagi(&b, 'w', k); tagi(&b, ':', cplan_outer_lit(p, k)); }
    if (cplan_cell_narrow(p)) sb_putc(&b, 'N');
    for (int i = 0; i < p->ncond; i++) {
        tagi(&b, 'c', p->cond[i].op); tagi(&b, ':', p->cond[i].in); tagi(&b, ':', p->cond[i].left);
    }
    p->sig = b.s;
    p->hash = cg_hash_bytes(b.s, b.n, 0);
}

/* Renumbers nodes and inputs in depth-first order from the outputs
 * (canonical form; drops unreachable nodes and unused inputs). */
static void canon_order(CPlan *p)
{
    int *nmap = malloc((size_t)p->nn * sizeof(int));
    int *imap = malloc((size_t)(p->nin + 1) * sizeof(int));
    int *stack = malloc((size_t)(2 * p->nn + 2) * sizeof(int));
    CNode *nn = malloc((size_t)(p->nn + 1) * sizeof(CNode));
    CInput *ni = malloc((size_t)(p->nin + 1) * sizeof(CInput));
    if (!nmap || !imap || !stack || !nn || !ni) goto done;
    for (int i = 0; i < p->nn; i++) nmap[i] = -1;
    for (int k = 0; k < p->nin; k++) imap[k] = -1;
    int cnt = 0, icnt = 0;
    /* post-order DFS, children in position order */
    for (int o = 0; o < p->nout; o++) {
        int sp = 0;
        stack[sp++] = p->out[o];
        stack[sp++] = 0;
        while (sp > 0) {
            int st = stack[sp - 1], nd = stack[sp - 2];
            if (nmap[nd] >= 0) { sp -= 2; continue; }
            CNode *x = &p->n[nd];
            if (st < x->na) {
                stack[sp - 1] = st + 1;
                if (nmap[x->a[st]] < 0) { stack[sp++] = x->a[st]; stack[sp++] = 0; }
                continue;
            }
            sp -= 2;
            nn[cnt] = *x;
            for (int k = 0; k < x->na; k++) nn[cnt].a[k] = nmap[x->a[k]];
            if (x->kind == CN_IN) {
                if (imap[x->in] < 0) { ni[icnt] = p->in[x->in]; imap[x->in] = icnt++; }
                nn[cnt].in = imap[x->in];
            }
            nmap[nd] = cnt++;
        }
    }
    for (int o = 0; o < p->nout; o++) p->out[o] = nmap[p->out[o]];
    /* (vlen, an input or slice index, is set again by row_classes) */
    if (p->main >= 0) p->main = imap[p->main];
    for (int c = 0; c < p->ncond; c++) p->cond[c].in = imap[p->cond[c].in];
    memcpy(p->n, nn, (size_t)cnt * sizeof(CNode));
    p->nn = cnt;
    memcpy(p->in, ni, (size_t)icnt * sizeof(CInput));
    p->nin = icnt;
done:
    free(nmap); free(imap); free(stack); free(nn); free(ni);
}

/* The variant a Row plan's root node n makes. */
static Variant row_var(const CPlan *p, int n)
{
    const CNode *x = &p->n[n];
    if (x->kind == CN_AGG && x->dir == DIR_COL) return V_COL_AGG;
    if (x->kind == CN_AGG && x->dir == DIR_FULL) return V_FULL_AGG;
    if (x->kind == CN_MMTL) return V_COL_T_AGG;
    return x->vc == VC_VEC ? V_NO_AGG : V_ROW_AGG;
}

Variant cplan_row_ovar(const CPlan *p, int t)
{
    return p->var == V_MULTI ? row_var(p, p->out[t]) : p->var;
}

/* Builds the CPlan of fused operator f; NULL when the region does not
 * form a valid plan of its template. Caller frees with cplan_free. */
CPlan *cplan_build(const Memo *m, const FusedOp *f)
{
    CPlan *p = br_calloc(1, sizeof *p);
    Build b = {.m = m, .p = p};
    b.map = malloc((size_t)m->nid * sizeof(int));
    b.fent = calloc((size_t)m->nid, sizeof *b.fent);
    if (!p || !b.map || !b.fent) { free(p); free(b.map); free(b.fent); return NULL; }
    for (int i = 0; i < m->nid; i++) b.map[i] = -1;
    p->tpl = f->type;
    p->main = -1;
    int nroots = f->nroots > 1 ? f->nroots : 1;   /* MAgg, multi-output Row */
    Hop **roots = f->nroots > 1 ? f->roots : (Hop **)&f->root;
    int cellroot[CG_MAXOUT];
    bool ok = true;
    for (int r = 0; r < nroots; r++) {
        MEntry *e = sel_best(m, roots[r], T__N);
        if (e) mark(&b, roots[r], e);
    }
    for (int r = 0; r < nroots && ok; r++) {
        MEntry *e = sel_best(m, roots[r], T__N);
        if (!e) { ok = false; break; }
        p->out[p->nout++] = build(&b, roots[r], e);
        if (b.fail) ok = false;
    }
    if (ok) {
        canon_order(p);
        Variant v = V_NO_AGG;
        if (p->tpl == T_CELL || p->tpl == T_MAGG) {
            for (int r = 0; r < p->nout; r++) {
                CNode *x = &p->n[p->out[r]];
                if (x->kind == CN_AGG) {
                    v = x->dir == DIR_FULL ? V_FULL_AGG : x->dir == DIR_ROW ? V_ROW_AGG : V_COL_AGG;
                    cellroot[r] = x->a[0];
                } else if (x->kind == CN_MMTL) {
                    /* dot product t(x) %*% y of column vectors */
                    CNode mu = {.kind = CN_BIN, .op = OP_MULT, .na = 2, .a = {x->a[0], x->a[1]}, .in = -1,
                                .rows = p->n[x->a[0]].rows, .cols = 1};
                    int k = add_node(&b, mu);
                    CNode ag = {.kind = CN_AGG, .op = OP_SUM, .dir = DIR_FULL, .na = 1, .a = {k}, .in = -1,
                                .rows = 0, .cols = 0};
                    p->out[r] = add_node(&b, ag);
                    p->out_matrix = true;
                    cellroot[r] = k;
                    v = V_FULL_AGG;
                } else {
                    cellroot[r] = p->out[r];
                }
            }
            p->var = p->tpl == T_MAGG ? V_MULTI : v;
            ok = finish_cell(p, cellroot, p->nout);
        } else if (p->tpl == T_ROW) {
            ok = finish_row(p);
            if (ok && p->nout > 1) p->var = V_MULTI;
            for (int r = 0; ok && r < p->nout; r++) {
                CNode *x = &p->n[p->out[r]];
                Variant v = row_var(p, p->out[r]);
                if (p->nout == 1) p->var = v;
                else if (v != V_COL_AGG && v != V_FULL_AGG && v != V_COL_T_AGG) ok = false;
                if (x->kind == CN_MMTL)
                    for (int k = 0; k < 2; k++) if (p->n[x->a[k]].vc == VC_CONST) ok = false;
            }
        } else if (p->tpl == T_OUTER) {
            ok = finish_outer(p, p->out[0]);
        }
    }
    if (ok && !b.fail) canon_order(p);
    /* the vector lengths (vlen) by the final numbering of inputs and
     * slices */
    if (ok && !b.fail && p->tpl == T_ROW) row_classes(p);
    free(b.map);
    free(b.fent);
    if (!ok || b.fail || p->ncovered < 2) { cplan_free(p); return NULL; }
    make_sig(p);
    return p;
}

void cplan_free(CPlan *p)
{
    if (!p) return;
    free(p->n);
    free(p->in);
    free(p->sig);
    free(p);
}

bool cplan_stitched(const CPlan *p)
{
    for (int k = 0; p && k < p->nin; k++) if (p->in[k].pre.n) return true;
    return false;
}

void cplan_resign(CPlan *p)
{
    free(p->sig);
    p->sig = NULL;
    make_sig(p);
}

CPlan *cplan_copy(const CPlan *p)
{
    CPlan *c = br_malloc(sizeof *c);
    if (!c) return NULL;
    *c = *p;
    c->n = br_malloc((size_t)(p->nn + 1) * sizeof(CNode));
    c->in = br_malloc((size_t)(p->nin + 1) * sizeof(CInput));
    c->sig = br_strdup(p->sig ? p->sig : "");
    if (!c->n || !c->in || !c->sig) { cplan_free(c); return NULL; }
    memcpy(c->n, p->n, (size_t)p->nn * sizeof(CNode));
    memcpy(c->in, p->in, (size_t)p->nin * sizeof(CInput));
    for (int k = 0; k < c->nin; k++) c->in[k].hop = NULL;
    c->ncap = p->nn + 1;
    c->icap = p->nin + 1;
    return c;
}

int cplan_nops(const CPlan *p)
{
    int n = 0;
    for (int i = 0; i < p->nn; i++) n += p->n[i].kind != CN_IN;
    return n;
}

/* Node i of stitched input k's expression, as DML (-explain codegen). */
static void pre_print(const SpPre *e, int i, FILE *out)
{
    const SpPreNode *x = &e->x[i];
    if (i == e->n - 1) fputs(" = stitched, X bound here: ", out);
    switch (x->kind) {
    case SPP_AGG: fprintf(out, "col%s(X)", op_info[x->op].name); break;
    case SPP_CONST: fprintf(out, "%.17g", x->c); break;
    case SPP_UN: fprintf(out, "%s(", op_info[x->op].name); pre_print(e, x->a, out); fputc(')', out); break;
    default:
        fputc('(', out);
        pre_print(e, x->a, out);
        fprintf(out, " %s ", op_info[x->op].name);
        pre_print(e, x->b, out);
        fputc(')', out);
    }
}

void cplan_print(const CPlan *p, FILE *out)
{
    static const char *modes[] = {"scalar", "full", "rowvec", "colvec", "mat", "vrows", "bt"};
    static const char *vcs[] = {"const", "cell", "vec"};
    fprintf(out, "  CPlan %s %s (hash %016llx)%s%s\n", tpl_name(p->tpl), variant_name(p->var),
            (unsigned long long)p->hash, p->sparse_safe ? " sparse-safe" : "",
            p->tpl == T_ROW && p->main_sparse_ok ? " sparse-rows" : "");
    for (int k = 0; k < p->nin; k++) {
        fprintf(out, "    in%d: %s%s [%lldx%lld]", k, modes[p->in[k].mode], k == p->main ? " (main)" : "",
                (long long)p->in[k].rows, (long long)p->in[k].cols);
        if (p->in[k].pre.n) pre_print(&p->in[k].pre, p->in[k].pre.n - 1, out);
        fputc('\n', out);
    }
    for (int i = 0; i < p->nn; i++) {
        const CNode *x = &p->n[i];
        if (x->kind == CN_IN) continue;
        const char *kn = x->kind == CN_UN ? "u" : x->kind == CN_BIN ? "b" : x->kind == CN_TER ? "t"
                       : x->kind == CN_AGG ? (x->dir == DIR_ROW ? "uar" : x->dir == DIR_COL ? "uac" : "ua")
                       : x->kind == CN_MM ? "ba" : x->kind == CN_MMTL ? "tba" : x->kind == CN_SLICE ? "rix" : "r";
        fprintf(out, "    TMP%d = %s(%s)", i, kn,
                x->kind == CN_MM || x->kind == CN_MMTL ? "+*" : x->kind == CN_TRANS ? "t"
                : x->kind == CN_SLICE ? "[,lo:hi]" : op_info[x->op].name);
        for (int k = 0; k < x->na; k++) {
            const CNode *c = &p->n[x->a[k]];
            if (c->kind == CN_IN) fprintf(out, " in%d", c->in);
            else fprintf(out, " TMP%d", x->a[k]);
        }
        fprintf(out, "  [%s]\n", vcs[x->vc]);
    }
    for (int i = 0; i < p->ncond; i++)
        fprintf(out, "    sparse-safe if %s(%s, in%d) == 0\n", op_info[p->cond[i].op].name,
                p->cond[i].left ? "s" : "0", p->cond[i].in);
    if (p->zero_eval) fprintf(out, "    sparse-safe if 0 at in%d == 0\n", p->main);
}
