/* cgregion.c: a stitched Cell plan as one FusionStitching region
 * (docs/gpu.md, "Stitched codegen plans in one launch"). A Cell plan
 * whose row-vector inputs are vector expressions of column aggregates
 * of X (select.c cg_stitch) is, over the columns, exactly a DIR_COL
 * region of gpu/stitch.c: each column is a segment, the aggregates are
 * the segment's reductions, the expressions per-segment work and the
 * cell body the last pass; a COL_AGG output is one more reduction per
 * column. So the whole plan runs as one kernel launch instead of the
 * aggregates' launches, the expression's and the plan's kernel. */
#include "cgregion.h"

#include <string.h>

typedef struct RB {
    const CPlan *p;
    const CgRegionCall *call;
    CgRegion *g;
    int node[64];              /* by plan node: its region node (-2 unset) */
    int in_node[64];           /* by plan input: its region node (-2 unset) */
    int agg[6][2];             /* SpPre aggregate op -> region node */
    int nagg;
    int nm;                    /* matrix inputs used (slot 0: X) */
} RB;

/* an elementwise op the region's generator writes (ops.def's cgen text) */
static bool op_ok(OpCode op, int arity)
{
    return op_info[op].cgen && op_info[op].arity == arity &&
           op_info[op].kind == (arity == 1 ? OK_UNARY : OK_BINARY);
}

static int sc_node(RB *b, double v)
{
    CgRegion *g = b->g;
    if (g->r.nsc >= ST_MAX_SC) return -1;
    g->sc[g->r.nsc] = v;
    return st_sc(&g->r, g->r.nsc);
}

/* the column aggregate op of X (once per op): the region's reductions,
 * var and sd as the mean, squared deviations and / (n - 1) */
static int agg_node(RB *b, int op)
{
    for (int i = 0; i < b->nagg; i++) if (b->agg[i][0] == op) return b->agg[i][1];
    StitchRegion *r = &b->g->r;
    int x = st_x(r), v;
    switch (op) {
    case OP_SUM: case OP_MEAN: case OP_AMIN: case OP_AMAX: v = st_red(r, (OpCode)op, x); break;
    case OP_SUMSQ: v = st_red(r, OP_SUM, st_bin(r, OP_MULT, x, x)); break;
    case OP_VAR: case OP_SD: {
        int c = st_bin(r, OP_MINUS, x, st_red(r, OP_MEAN, x));
        v = st_vardiv(r, st_red(r, OP_SUM, st_bin(r, OP_MULT, c, c)));
        if (op == OP_SD) v = st_un(r, OP_SQRT, v);
        break;
    }
    default: return -1;
    }
    if (v >= 0 && b->nagg < 6) b->agg[b->nagg][0] = op, b->agg[b->nagg++][1] = v;
    return v;
}

/* a stitched input's expression (its constants as arguments, so plans
 * that differ in them share a program) */
static int pre_node(RB *b, const SpPre *pre)
{
    int v[SPOOF_PREMAX];
    StitchRegion *r = &b->g->r;
    for (int i = 0; i < pre->n; i++) {
        const SpPreNode *x = &pre->x[i];
        switch (x->kind) {
        case SPP_AGG: v[i] = agg_node(b, x->op); break;
        case SPP_CONST: v[i] = sc_node(b, x->c); break;
        case SPP_UN: v[i] = op_ok((OpCode)x->op, 1) && x->a < i ? st_un(r, (OpCode)x->op, v[x->a]) : -1; break;
        case SPP_BIN:
            v[i] = op_ok((OpCode)x->op, 2) && x->a < i && x->b < i ? st_bin(r, (OpCode)x->op, v[x->a], v[x->b]) : -1;
            break;
        default: v[i] = -1; break;
        }
        if (v[i] < 0) return -1;
    }
    return pre->n > 0 ? v[pre->n - 1] : -1;
}

/* plan input k as a region node: X (slot 0) for the stitched matrix
 * itself, matrices of X's shape per cell, row vectors per column (a
 * segment), column vectors per row (a position), scalars as arguments */
static int input_node(RB *b, int k)
{
    if (b->in_node[k] != -2) return b->in_node[k];
    const CgRegionCall *c = b->call;
    CgRegion *g = b->g;
    StitchRegion *r = &g->r;
    const MB *m = c->m[k];
    int v = -1;
    if (c->pre[k].n) v = pre_node(b, &c->pre[k]);
    else if (b->p->in[k].mode == IM_SCALAR) v = sc_node(b, c->sc[k]);
    else if (b->p->in[k].mode == IM_FULL && m == g->in[0]) v = st_x(r);
    else if (b->nm < ST_MAX_IN) {
        StitchInMode md = b->p->in[k].mode == IM_FULL ? SI_CELL : b->p->in[k].mode == IM_ROW ? SI_SEG
                        : b->p->in[k].mode == IM_COL ? SI_POS : (StitchInMode)-1;
        if ((int)md >= 0) {
            g->in[b->nm] = m;
            v = st_in(r, b->nm++, md);
        }
    }
    return b->in_node[k] = v;
}

static int plan_node(RB *b, int i)
{
    if (b->node[i] != -2) return b->node[i];
    const CNode *x = &b->p->n[i];
    StitchRegion *r = &b->g->r;
    int v = -1;
    switch (x->kind) {
    case CN_IN: v = input_node(b, x->in); break;
    case CN_UN: {
        int a = op_ok(x->op, 1) ? plan_node(b, x->a[0]) : -1;
        v = a < 0 ? -1 : st_un(r, x->op, a);
        break;
    }
    case CN_BIN: {
        int a = op_ok(x->op, 2) ? plan_node(b, x->a[0]) : -1;
        int c = a < 0 ? -1 : plan_node(b, x->a[1]);
        v = c < 0 ? -1 : st_bin(r, x->op, a, c);
        break;
    }
    default: break;   /* ternaries, slices, aggregates inside */
    }
    return b->node[i] = v;
}

/* X: the one matrix every stitched input aggregates (NULL when none
 * or two); all matrices plain; dense for a whole-plan region (slices;
 * sparse ones keep the plan's sparse paths), where the vectors' region
 * (!slices: it reads X only, a CSR X by lookups in its rows) takes a
 * CSR X too, the operator's kernel reading it as its CSR main input or
 * expanded; no slice among the inputs (slices: also the stitched
 * ones) */
static const MB *stitched_x(const CPlan *p, const CgRegionCall *c, bool slices)
{
    const MB *x = NULL;
    for (int k = 0; k < p->nin; k++) {
        if (p->in[k].slice >= 0 && (slices || c->pre[k].n)) return NULL;
        if (p->in[k].mode == IM_SCALAR) continue;
        const MB *m = c->m[k];
        if (!m || (m->sparse && slices) || m->cmb) return NULL;
        if (!c->pre[k].n) continue;
        if (x && x != m) return NULL;
        x = m;
    }
    return x && x->rows >= 1 && x->cols >= 1 ? x : NULL;
}

static void rb_init(RB *b, const CPlan *p, const CgRegionCall *c, CgRegion *g, const MB *x)
{
    *b = (RB){.p = p, .call = c, .g = g, .nm = 1};
    for (int i = 0; i < 64; i++) b->node[i] = b->in_node[i] = -2;
    g->r.dir = DIR_COL;
    g->in[0] = x;
}

int cg_pre_region(const CPlan *p, const CgRegionCall *c, CgRegion *g, int *slot)
{
    memset(g, 0, sizeof *g);
    if (p->nin > 64) return 0;
    const MB *x = stitched_x(p, c, false);
    if (!x) return 0;
    RB b;
    rb_init(&b, p, c, g, x);
    int out[ST_MAX_OUT], n = 0;
    for (int k = 0; k < p->nin; k++) {
        slot[k] = -1;
        if (!c->pre[k].n) continue;
        int v = pre_node(&b, &c->pre[k]);
        if (v < 0 || !st_is_seg(&g->r, v)) return 0;
        int q = 0;
        while (q < n && out[q] != v) q++;
        if (q == n) {
            if (n == ST_MAX_OUT || (n > 0 && st_output(&g->r, v) != n)) return 0;
            out[n++] = v;
        }
        slot[k] = q;
    }
    if (n) g->r.root = out[0];   /* (each node added became the root) */
    return n;
}

bool cg_cell_region(const CPlan *p, const CgRegionCall *c, CgRegion *g)
{
    memset(g, 0, sizeof *g);
    if (p->tpl != T_CELL || (p->var != V_NO_AGG && p->var != V_COL_AGG) || p->nout != 1 || p->nn > 64 || p->nin > 64)
        return false;
    const MB *x = stitched_x(p, c, true);
    if (!x) return false;
    RB b;
    rb_init(&b, p, c, g, x);
    int out = p->out[0];
    const CNode *o = &p->n[out];
    int root;
    if (p->var == V_COL_AGG) {
        if (o->kind != CN_AGG || o->dir != DIR_COL) return false;
        int acc = op_info[o->op].acc;
        if ((acc & AC_IDX) || !(acc & AC_COMB))
            return false;
        int a = plan_node(&b, o->a[0]);
        if (a < 0 || st_is_seg(&g->r, a)) return false;
        if (acc & AC_SQ) a = st_bin(&g->r, OP_MULT, a, a);
        OpCode rop = (acc & AC_COMB) == AC_MIN ? OP_AMIN : (acc & AC_COMB) == AC_MAX ? OP_AMAX
                   : (acc & AC_MEAN) ? OP_MEAN : OP_SUM;
        root = st_red(&g->r, rop, a);
    } else {
        root = plan_node(&b, out);
        if (root >= 0 && st_is_seg(&g->r, root)) return false;
    }
    if (root < 0) return false;
    g->r.root = root;
    return stitch_shapes_ok(&g->r, g->in);
}
