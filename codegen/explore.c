/* explore.c: candidate exploration (seed 000, section 3.2). The
 * open-fuse-merge-close (OFMC) conditions of the templates Cell, Row and
 * Outer, and the single bottom-up pass that fills the memo table with
 * every valid partial fusion plan (linear in the DAG size): per HOP, open
 * new plans, fuse open plans of the inputs (merging Cell plans into Row
 * plans), enumerate the combinations of input references, close, prune
 * duplicates and closed entries without references. MAgg plans are formed
 * after selection from closed Cell full aggregates (select.c). */
#include "cgint.h"

#include <stdlib.h>
#include <string.h>

/* Largest side matrix of a Row vector-matrix product (cells) and of a
 * t(X) %*% Y output; largest rank of an outer product. */
#define ROW_MM_MAXCELLS (1 << 22)
#define ROW_MM_MAXCOLS 4096
#define OUTER_MAXRANK 4096

static bool known(const Hop *h)
{
    return h && h->dt == DT_MATRIX && h->rows >= 0 && h->cols >= 0;
}

static bool num_scalar(const Hop *h)
{
    return h && h->dt == DT_SCALAR && h->vt != VT_STRING && h->vt != VT_UNKNOWN;
}

static bool is_mm(const Hop *h, OpCode op) { return h && h->kind == H_MATMUL && h->op == op; }

/* Mode of operand x in an elementwise op of output shape M x N (the
 * broadcast rules of k_binary / k_ifelse), -1 if not fusable. */
static int operand_mode(const Hop *x, int64_t M, int64_t N)
{
    if (num_scalar(x)) return IM_SCALAR;
    if (!known(x)) return -1;
    if (x->rows == M && x->cols == N) return IM_FULL;
    if (x->rows == 1 && x->cols == N) return IM_ROW;
    if (x->cols == 1 && x->rows == M) return IM_COL;
    return -1;
}

/* Is h an elementwise operator that template ft accepts (ops.def's tpl
 * column) over operands it can broadcast? */
static bool ew_op(const Hop *h, int ft)
{
    if (!known(h)) return false;
    OpKind k = h->kind == H_UNARY ? OK_UNARY : h->kind == H_BINARY ? OK_BINARY : OK_TERNARY;
    if (h->kind != H_UNARY && h->kind != H_BINARY && h->kind != H_TERNARY) return false;
    if (hop_lazy_ifelse(h)) return false;
    const OpInfo *oi = &op_info[h->op];
    if (oi->kind != k || !(oi->tpl & ft) || h->nin != oi->arity) return false;
    if (h->kind == H_UNARY)
        return known(h->in[0]) && h->in[0]->rows == h->rows && h->in[0]->cols == h->cols;
    int nm = 0;
    for (int i = 0; i < h->nin; i++) {
        int md = operand_mode(h->in[i], h->rows, h->cols);
        if (md < 0) return false;
        nm += md != IM_SCALAR;
    }
    if (h->kind == H_BINARY && nm == 2) {
        /* must resolve like k_binary: equal shapes, or a vector operand */
        const Hop *a = h->in[0], *b = h->in[1];
        bool ok = (a->rows == b->rows && a->cols == b->cols) ||
                  (b->rows == 1 && b->cols == a->cols) || (b->cols == 1 && b->rows == a->rows) ||
                  (a->rows == 1 && a->cols == b->cols) || (a->cols == 1 && a->rows == b->rows) ||
                  (a->cols == 1 && b->rows == 1);
        if (!ok) return false;
    }
    return nm > 0;
}

bool tpl_cell_op(const Hop *h) { return ew_op(h, FT_CELL); }

/* Is h an aggregate that template ft accepts, over an input of known
 * size (a full aggregate: to a scalar)? */
static bool agg_op(const Hop *h, int ft)
{
    if (!h || h->kind != H_AGG || !(op_info[h->op].tpl & ft) || !known(h->in[0])) return false;
    if (h->dir == DIR_FULL) return h->dt == DT_SCALAR;
    return known(h);
}

bool tpl_agg_op(const Hop *h) { return agg_op(h, FT_CELL); }

bool tpl_dot(const Hop *h)
{
    return is_mm(h, OP_MATMULTL) && h->nin == 2 && known(h->in[0]) && known(h->in[1]) &&
           h->in[0]->cols == 1 && h->in[1]->cols == 1 && h->in[0]->rows == h->in[1]->rows && known(h);
}

bool tpl_outer_mm(const Hop *h)
{
    int64_t r;
    return hop_outer_like(h, &r) && r <= OUTER_MAXRANK;
}

bool tpl_row_mm(const Hop *h)
{
    if (!is_mm(h, OP_MATMUL) || h->nin != 2 || !known(h)) return false;
    const Hop *a = h->in[0], *b = h->in[1];
    if (!known(a) || !known(b) || a->cols != b->rows) return false;
    if (a->rows < 2 || a->cols < 2 || b->cols > ROW_MM_MAXCOLS) return false;
    if ((double)b->rows * (double)b->cols > ROW_MM_MAXCELLS) return false;
    return !tpl_outer_mm(h);
}

/* t(A) %*% B with row-aligned A and B and a small output. */
static bool row_mmtl(const Hop *h)
{
    if (!is_mm(h, OP_MATMULTL) || h->nin != 2 || !known(h)) return false;
    const Hop *a = h->in[0], *b = h->in[1];
    return known(a) && known(b) && a->rows == b->rows && a->rows > 1 &&
           (double)a->cols * (double)b->cols <= ROW_MM_MAXCELLS;
}

static bool row_mmchain(const Hop *h)
{
    if (!is_mm(h, OP_MMCHAIN) || h->nin < 2 || !known(h)) return false;
    const Hop *x = h->in[0], *v = h->in[1], *w = h->nin > 2 ? h->in[2] : NULL;
    if (!known(x) || !known(v) || v->rows != x->cols || x->rows < 2) return false;
    if ((double)x->cols * (double)v->cols > ROW_MM_MAXCELLS) return false;
    return !w || (known(w) && w->rows == x->rows && (w->cols == 1 || w->cols == v->cols));
}

/* X[, lo:hi] or X[, j] of every row of a row-aligned matrix of at least
 * two columns (the Row template slices each row; seed 000 Fig. 3c). */
static bool row_rix(const Hop *h)
{
    if (!h || h->kind != H_RIX || h->nin != 5 || h->dt != DT_MATRIX || !known(h) || !h->ix.has_col) return false;
    const Hop *x = h->in[0];
    if (!known(x) || x->rows != h->rows || x->cols < 2 || h->ix.rmode != IX_ALL) return false;
    if (h->ix.cmode == IX_SINGLE) return num_scalar(h->in[3]);
    return h->ix.cmode == IX_RANGE && num_scalar(h->in[3]) && num_scalar(h->in[4]);
}

/* ---- per template: can input position i of h be fused? ---- */

static bool cell_pos(const Hop *h, int i)
{
    const Hop *in = h->in[i];
    if (!known(in)) return false;
    if (row_rix(h)) return false;   /* X is read in place: an input */
    if (tpl_cell_op(h)) return in->rows == h->rows && in->cols == h->cols;
    if (tpl_agg_op(h)) return i == 0;
    if (tpl_dot(h)) return true;
    return false;
}

static bool row_pos(const Hop *h, int i)
{
    const Hop *in = h->in[i];
    if (!known(in)) return false;
    if (ew_op(h, FT_ROW)) return in->rows == h->rows && (in->cols == h->cols || in->cols == 1);
    if (agg_op(h, FT_ROW)) return i == 0 && in->rows > 1;
    if (tpl_row_mm(h)) return i == 0;
    if (row_mmtl(h)) return true;
    if (row_mmchain(h)) return i == 2;
    if (row_rix(h)) return i == 0;
    return false;
}

static bool outer_pos(const Hop *h, int i)
{
    const Hop *in = h->in[i];
    if (!known(in)) return false;
    if (ew_op(h, FT_OUTER)) return in->rows == h->rows && in->cols == h->cols;
    if (agg_op(h, FT_OUTER) && h->dir == DIR_FULL) return i == 0;
    /* (O) %*% V2: left; t(O) %*% U2 and t(U2) %*% O: right */
    if (is_mm(h, OP_MATMUL) && h->nin == 2 && known(h->in[1]) && i == 0)
        return h->in[1]->rows == in->cols && h->in[1]->cols <= OUTER_MAXRANK;
    if (is_mm(h, OP_MATMULTL) && h->nin == 2 && known(h->in[1 - i]))
        return h->in[1 - i]->rows == in->rows && h->in[1 - i]->cols <= OUTER_MAXRANK;
    return false;
}

/* Distributed operations (EX_DIST) fuse like local ones: a fused operator
 * over distributed inputs runs on every rank's rows (docs/dist.md), and
 * the cost model prices its broadcasts and reductions (cost.c). */
static bool fusable_pos(TplType t, const Hop *h, int i)
{
    if (i >= h->nin || !h->in[i]) return false;
    switch (t) {
    case T_CELL: return cell_pos(h, i);
    case T_ROW: return row_pos(h, i);
    case T_OUTER: return outer_pos(h, i);
    case T_AMULET: return am_tpl_operand(h, i);
    default: return false;
    }
}

static bool tpl_open(TplType t, const Hop *h)
{
    switch (t) {
    case T_CELL:   /* X[, lo:hi] opens a Cell plan that reads X in place */
        return tpl_cell_op(h) || row_rix(h);
    case T_ROW:
        if (ew_op(h, FT_ROW)) return h->rows > 1 && h->cols > 1;
        if (tpl_row_mm(h) || row_mmtl(h) || row_mmchain(h)) return true;
        if (agg_op(h, FT_ROW) && h->dir != DIR_FULL) return h->in[0]->rows > 1 && h->in[0]->cols > 1;
        if (row_rix(h)) return h->rows > 1;
        return false;
    case T_OUTER:
        return tpl_outer_mm(h);
    default:
        return false;
    }
}

/* ---- Outer validity: zeros of the sparse driver stay zeros ---- */

static bool lit_value(const Hop *h, double *v)
{
    if (!h || h->kind != H_LIT || !val_is_numeric(&h->lit)) return false;
    *v = val_as_double(&h->lit);
    return true;
}

/* Does h map a zero of its fused operand i to zero (given literal
 * scalars)? */
static bool zero_preserving(const Hop *h, int i)
{
    int fl = op_info[h->op].flags;
    if (h->kind == H_UNARY) return (fl & OF_SAFE) != 0;
    if (h->kind != H_BINARY) return false;
    if (fl & OF_MULT) return true;
    const Hop *o = h->in[1 - i];
    double s;
    if (lit_value(o, &s)) return (i == 0 ? ops_binary(h->op, 0, s) : ops_binary(h->op, s, 0)) == 0;
    return false;
}

static bool input_outer_valid(const Memo *m, const Hop *in)
{
    MGroup *g = m->g[in->id];
    if (!g) return false;
    for (int k = 0; k < g->n; k++)
        if (g->e[k].type == T_OUTER && g->e[k].closed == CS_OPEN_VALID) return true;
    return false;
}

static CloseType outer_close(const Memo *m, const Hop *h, const MEntry *e)
{
    if (tpl_outer_mm(h) && memo_nrefs(e) == 0) return CS_OPEN_INVALID;
    int fi = -1;
    for (int i = 0; i < e->nin; i++) if (e->ref[i] >= 0) { if (fi >= 0) return CS_CLOSED_INVALID; fi = i; }
    if (fi < 0) return CS_CLOSED_INVALID;
    bool inv = input_outer_valid(m, h->in[fi]);
    if (ew_op(h, FT_OUTER)) {
        if (h->kind == H_BINARY && (op_info[h->op].flags & OF_MULT)) {
            const Hop *o = h->in[1 - fi];
            if (known(o) && o->rows == h->rows && o->cols == h->cols) return CS_OPEN_VALID;
        }
        return inv && zero_preserving(h, fi) ? CS_OPEN_VALID : CS_OPEN_INVALID;
    }
    return inv ? CS_CLOSED_VALID : CS_CLOSED_INVALID;
}

static CloseType close_status(const Memo *m, const Hop *h, const MEntry *e)
{
    switch (e->type) {
    case T_CELL:
        return (tpl_agg_op(h) || tpl_dot(h)) ? CS_CLOSED_VALID : CS_OPEN_VALID;
    case T_ROW:
        if (agg_op(h, FT_ROW) && h->dir != DIR_ROW) return CS_CLOSED_VALID;
        if (row_mmtl(h) || row_mmchain(h)) return CS_CLOSED_VALID;
        return CS_OPEN_VALID;
    case T_OUTER:
        return outer_close(m, h, e);
    default:
        return CS_CLOSED_INVALID;
    }
}

/* Can entries of template t at h reference input position i (the input
 * holds an open entry of a compatible template)? */
static bool can_ref(const Memo *m, TplType t, const Hop *h, int i)
{
    if (!fusable_pos(t, h, i)) return false;
    const Hop *in = h->in[i];
    MGroup *g = m->g[in->id];
    if (!g) return false;
    for (int k = 0; k < g->n; k++) {
        const MEntry *e = &g->e[k];
        if (e->closed == CS_CLOSED_VALID || e->closed == CS_CLOSED_INVALID) continue;
        if (memo_compatible(t, e->type)) return true;
    }
    return false;
}

/* createPlans: every combination of references (each fusable input
 * referenced or materialized); the all-materialized plan only when the
 * template opens at h. */
static void create_plans(Memo *m, Hop *h, TplType t, bool opened)
{
    int nin = h->nin < MEMO_MAXIN ? h->nin : MEMO_MAXIN;
    bool ok[MEMO_MAXIN] = {false};
    for (int i = 0; i < nin; i++) ok[i] = can_ref(m, t, h, i);
    for (int mask = 0; mask < (1 << nin); mask++) {
        bool valid = true;
        for (int i = 0; i < nin; i++) if ((mask >> i & 1) && !ok[i]) valid = false;
        if (!valid || (mask == 0 && !opened)) continue;
        MEntry e = {.type = t, .nin = nin};
        for (int i = 0; i < nin; i++) e.ref[i] = (mask >> i & 1) ? h->in[i]->id : -1;
        e.closed = CS_OPEN_VALID;
        memo_add(m, h, &e);
    }
}

static bool drop_closed(const Memo *m, const Hop *h, const MEntry *e, void *arg)
{
    (void)m; (void)h; (void)arg;
    if (e->closed == CS_CLOSED_INVALID) return true;
    return e->closed == CS_CLOSED_VALID && memo_nrefs(e) == 0;
}

/* The AMULET entries of product h (amulet_tpl.c): closed (the loop's
 * result is materialized), referencing the open Cell entries of one or
 * both operands; a product without fused operands is no AMULET plan
 * (dgemm computes it). */
static void amulet_plans(Memo *m, Hop *h)
{
    if (!am_tpl_candidate(h)) return;
    bool ok[2];
    for (int i = 0; i < 2; i++) ok[i] = am_tpl_operand(h, i) && can_ref(m, T_AMULET, h, i);
    /* a sparse left operand where the Outer template applies (W * (U %*%
     * t(V)) %*% V): Outer is the sparse-driver plan that never forms the
     * dense factor U %*% t(V), which the loop would read materialized;
     * offering the loop only detours the greedy search */
    if (ok[0] && am_tpl_sparse(h->in[0]) && memo_has_type(m, h, T_OUTER, false)) ok[0] = false;
    for (int mask = 1; mask < 4; mask++) {
        if (((mask & 1) && !ok[0]) || ((mask & 2) && !ok[1])) continue;
        MEntry e = {.type = T_AMULET, .nin = 2, .closed = CS_CLOSED_VALID};
        for (int i = 0; i < 2; i++) e.ref[i] = (mask >> i & 1) ? h->in[i]->id : -1;
        memo_add(m, h, &e);
    }
}

/* One HOP of the bottom-up pass (inputs are done). */
static void explore_hop(Memo *m, Hop *h)
{
    /* (right indexing: only the target, input 0, can be fused; its
     * bounds are always read as scalar inputs) */
    if (h->nin > MEMO_MAXIN && !row_rix(h)) return;
    if (h->kind == H_LIT || h->kind == H_TREAD || h->kind == H_SPOOF) return;
    static const TplType tpls[] = {T_CELL, T_ROW, T_OUTER};
    /* open */
    for (size_t k = 0; k < sizeof tpls / sizeof *tpls; k++)
        if (tpl_open(tpls[k], h)) create_plans(m, h, tpls[k], true);
    /* fuse / merge: templates of open entries of the inputs */
    for (int i = 0; i < h->nin && i < MEMO_MAXIN; i++) {
        Hop *in = h->in[i];
        if (!in || !m->g[in->id]) continue;
        for (size_t k = 0; k < sizeof tpls / sizeof *tpls; k++) {
            TplType t = tpls[k];
            if (memo_has_type(m, in, t, true) && fusable_pos(t, h, i))
                create_plans(m, h, t, tpl_open(t, h));
        }
    }
    MGroup *g = m->g[h->id];
    if (g) {
        /* close */
        for (int k = 0; k < g->n; k++) g->e[k].closed = close_status(m, h, &g->e[k]);
        memo_filter(m, h, drop_closed, NULL);
    }
    if (m->amulet) amulet_plans(m, h);
}

/* Fills the memo table bottom-up (the order lists inputs before their
 * consumers, so one pass suffices). */
void cg_explore(Memo *m)
{
    for (int k = 0; k < m->norder; k++) {
        Hop *h = m->order[k];
        if (m->visited[h->id]) continue;
        m->visited[h->id] = 1;
        explore_hop(m, h);
    }
}
