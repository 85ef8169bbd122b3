/* stitchpass.c: forming stitched regions from HOP DAGs (docs/gpu.md,
 * "Stitched regions in DML"). Under -gpu, before codegen's exploration,
 * the pass looks for sub-DAGs where row or column aggregates sit in the
 * middle of elementwise work over one iteration space (softmax,
 * layernorm, column standardization, MLogreg's and GLM's inner steps)
 * and replaces each by one H_STITCH hop whose region (gpu/stitch.h) runs
 * as one stitched kernel (or, when the device does not pay or take the
 * operands, through the CPU kernels operator by operator).
 *
 * A region is grown from a root, consumers first: an input hop joins
 * when it is an elementwise operator or a row/column aggregate over the
 * region's iteration space, every one of its uses is inside the region
 * (an intermediate read outside would otherwise be computed twice) and
 * it is no statement root or variable write. Everything else feeding the
 * region is an input: a matrix of the space, a vector along or across
 * the segments, or a scalar (literals included: a kernel argument). The aggregates of one region run in one direction;
 * one of the other direction is an input. A region needs an aggregate
 * and two operators; var and sd become a mean, a sum of squared
 * deviations and SN_VARDIV, sumsq a sum of squares. Elementwise chains
 * of two or more operators are regions too (one pass), and a full
 * aggregate of elementwise work becomes the full aggregate of a row
 * aggregate first (sum(E) = sum(rowSums(E)), mean(E) = mean(rowMeans(E))
 * as every row has the same length), so that the region ends in the row
 * aggregate and one more launch finishes it: under -gpu, the work
 * codegen's Cell operators would fuse on the CPU runs on the device. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codegen.h"
#include "cgint.h"
#include "../gpu/stitch.h"

typedef struct Pass {
    HopDag *d;
    int nid;
    int *uses;         /* by hop id: input slots that read it */
    char *out;         /* by hop id: a statement root or variable write */
    char *taken;       /* by hop id: inside a formed region */
    Hop ***par;        /* by hop id: its consumers (npar of them) */
    int *npar;
} Pass;

/* A region being grown from one root. */
typedef struct Grow {
    char *mem;         /* by hop id: member */
    Hop *xo[ST_PASS_OUT - 1];  /* members that are also outputs */
    int nxo;
    int64_t rows, cols;/* the iteration space */
    AggDir dir;        /* DIR_FULL while no aggregate decided it */
    StitchRegion r;
    int node[1];       /* by hop id: its node in r (-1 none); sized nid */
} Grow;

static bool space_known(const Hop *h) { return h->dt == DT_MATRIX && h->rows > 1 && h->cols > 1; }

static bool red_ok(OpCode op)
{
    return op == OP_SUM || op == OP_SUMSQ || op == OP_MEAN || op == OP_AMIN || op == OP_AMAX || op == OP_VAR ||
           op == OP_SD;
}

/* the shape of a per-segment value in direction dir */
static bool seg_shape(const Grow *g, AggDir dir, const Hop *h)
{
    return dir == DIR_ROW ? h->rows == g->rows && h->cols == 1 : h->rows == 1 && h->cols == g->cols;
}

static bool cell_shape(const Grow *g, const Hop *h) { return h->rows == g->rows && h->cols == g->cols; }

/* Is h matrix(1, ...) of 1 x n (across: n x 1)? */
static bool ones(const Hop *h, bool across)
{
    const Hop *v = h && h->kind == H_BUILTIN && h->bi == BI_MATRIX && h->nin > 0 ? h->in[0] : NULL;
    return v && v->kind == H_LIT && val_is_numeric(&v->lit) && val_as_double(&v->lit) == 1.0 &&
           (across ? h->cols == 1 : h->rows == 1);
}

/* The per-segment operand of a broadcast written as an outer product
 * with ones (MLogreg's rowMaxs(LT) %*% matrix(1, rows=1, cols=K)): v
 * %*% ones(1 x n) repeats a column vector along rows, ones(m x 1) %*% v a
 * row vector along columns; NULL for other hops. */
static Hop *bcast_of(const Hop *h)
{
    if (h->kind != H_MATMUL || h->op != OP_MATMUL || h->nin != 2 || !h->in[0] || !h->in[1]) return NULL;
    if (h->in[0]->cols == 1 && ones(h->in[1], false)) return h->in[0];
    if (h->in[1]->rows == 1 && ones(h->in[0], true)) return h->in[1];
    return NULL;
}

/* Is h a matrix-vector product X %*% v over the region's space (X of
 * its shape, v of cols x 1)? Per row, the sum of X's row times v: a row
 * reduction of X * t(v) (the Row template's product). */
static bool matvec(const Grow *g, const Hop *h)
{
    if (h->kind != H_MATMUL || h->op != OP_MATMUL || h->nin != 2 || !h->in[0] || !h->in[1]) return false;
    const Hop *x = h->in[0], *v = h->in[1];
    return x->rows == g->rows && x->cols == g->cols && v->rows == g->cols && v->cols == 1 && h->rows == g->rows &&
           h->cols == 1;
}

/* Does h run on the ranks or read a matrix they hold (the result of an
 * operation placed there, or a variable holding a distributed matrix)?
 * Such a hop joins no region: an instruction over a distributed matrix
 * never goes to the device (the region's instruction would collect the
 * matrix to rank 0, maybe over the budget, to run it there). */
static bool on_ranks(const Hop *h)
{
    if (cg_on_ranks(h)) return true;
    for (int i = 0; i < h->nin; i++) {
        const Hop *x = h->in[i];
        if (x && x->dt == DT_MATRIX && (cg_on_ranks(x) || (x->kind == H_TREAD && x->distval))) return true;
    }
    return false;
}

/* Can h be a member (as an operator, before the use check)? Decides the
 * direction at the first aggregate. */
static bool can_join(Grow *g, const Hop *h)
{
    if (h->dt != DT_MATRIX || h->sidefx || on_ranks(h)) return false;
    if (matvec(g, h)) {
        if (g->dir != DIR_FULL && g->dir != DIR_ROW) return false;
        g->dir = DIR_ROW;
        return true;
    }
    if (h->kind == H_AGG) {
        if (!red_ok(h->op) || (h->dir != DIR_ROW && h->dir != DIR_COL)) return false;
        if (g->dir != DIR_FULL && g->dir != h->dir) return false;
        if (!h->in[0] || !cell_shape(g, h->in[0]) || !seg_shape(g, h->dir, h)) return false;
        g->dir = h->dir;
        return true;
    }
    Hop *bv = bcast_of(h);
    if (bv) {
        /* the vector's direction: along the segments */
        AggDir dir = bv->cols == 1 ? DIR_ROW : DIR_COL;
        if (!cell_shape(g, h) || !seg_shape(g, dir, bv) || (g->dir != DIR_FULL && g->dir != dir)) return false;
        g->dir = dir;
        return true;
    }
    if (h->kind == H_UNARY) {
        if (op_info[h->op].kind != OK_UNARY || !op_info[h->op].cgen) return false;
    } else if (h->kind == H_BINARY) {
        if (op_info[h->op].kind != OK_BINARY || !op_info[h->op].cgen) return false;
    } else {
        return false;
    }
    if (cell_shape(g, h)) return true;
    /* per-segment work (sqrt(var + eps)): the direction must agree */
    AggDir dir = seg_shape(g, DIR_ROW, h) ? DIR_ROW : seg_shape(g, DIR_COL, h) ? DIR_COL : DIR_FULL;
    if (dir == DIR_FULL || (g->dir != DIR_FULL && g->dir != dir)) return false;
    g->dir = dir;
    return true;
}

/* members at most (a region's nodes are bounded; var/sd take five) */
#define MAX_MEMBERS 24

/* Is hop h outside the region, and does it depend on a member? (then a
 * region reading h would feed itself: a cycle). seen: by hop id. */
static bool reaches_member(const Grow *g, const Hop *h, char *seen)
{
    if (!h || seen[h->id]) return false;
    seen[h->id] = 1;
    for (int i = 0; i < h->nin; i++) {
        const Hop *x = h->in[i];
        if (x && (g->mem[x->id] || reaches_member(g, x, seen))) return true;
    }
    return false;
}

/* The formed region is a valid kernel: none of its outside inputs
 * depends on one of its members (an output read by an operator that
 * feeds the region back). */
static bool acyclic(Pass *p, const Grow *g, Hop **list, int nl)
{
    char *seen = calloc((size_t)p->nid, 1);
    bool ok = seen != NULL;
    for (int m = 0; m < nl && ok; m++)
        for (int i = 0; i < list[m]->nin && ok; i++) {
            const Hop *x = list[m]->in[i];
            if (x && !g->mem[x->id] && reaches_member(g, x, seen)) ok = false;
        }
    free(seen);
    return ok;
}

/* Outputs whose uses all ended up inside, and that are no variable,
 * stop being outputs (their slots are free for others). */
static void prune_outputs(const Pass *p, Grow *g, const int *inner)
{
    int k = 0;
    for (int j = 0; j < g->nxo; j++) {
        Hop *h = g->xo[j];
        if (inner[h->id] != p->uses[h->id] || p->out[h->id]) g->xo[k++] = h;
    }
    g->nxo = k;
}

/* Can consumer c of a member join as one more output? It must be an
 * operator the region can hold, and none of its other inputs may depend
 * on a member (the region would feed itself). */
static bool consumer_ok(Pass *p, Grow *g, const Hop *c)
{
    if (g->mem[c->id] || p->taken[c->id] || g->nxo >= ST_PASS_OUT - 1) return false;
    char *seen = calloc((size_t)p->nid, 1);
    bool ok = seen != NULL;
    for (int i = 0; i < c->nin && ok; i++) {
        const Hop *x = c->in[i];
        if (x && !g->mem[x->id] && reaches_member(g, x, seen)) ok = false;
    }
    free(seen);
    AggDir before = g->dir;
    if (ok && !can_join(g, c)) { g->dir = before; ok = false; }
    return ok;
}

/* Grows the member set to a fixed point: an input of a member joins
 * when it can and all its uses are inside (inner counts the uses from
 * members, updated as members join). With multi set, when nothing more
 * joins so, an input that is also read outside (or is a variable
 * written by the block) joins as one more output of the region (the
 * same launch writes it), or else a consumer of a member does (softmax's
 * E / s next to log-sum-exp's log(s) + m: both from one launch); then
 * growth goes on. Outputs whose uses all ended up inside, and that are
 * no variable, stop being outputs. False when the region would feed
 * itself (the caller grows it again without multi). */
static bool grow(Pass *p, Grow *g, Hop *root, bool multi)
{
    int *inner = calloc((size_t)p->nid, sizeof(int));
    Hop **list = malloc(MAX_MEMBERS * sizeof(Hop *));
    if (!inner || !list) { free(inner); free(list); return true; }
    int nl = 0;
    list[nl++] = root;
    for (int i = 0; i < root->nin; i++) if (root->in[i]) inner[root->in[i]->id]++;
    for (bool changed = true, as_out = false; nl < MAX_MEMBERS && (changed || (multi && !as_out));) {
        /* a round of joins by all uses inside; when none, one as output */
        if (!changed) as_out = true;
        changed = false;
        for (int m = 0; m < nl && !changed; m++)
            for (int i = 0; i < list[m]->nin && !changed; i++) {
                Hop *h = list[m]->in[i];
                if (!h || g->mem[h->id] || p->taken[h->id]) continue;
                /* the v of X %*% v is read per position: an input */
                if (i == 1 && matvec(g, list[m])) continue;
                bool inside = inner[h->id] == p->uses[h->id] && !p->out[h->id];
                if (!inside && (!as_out || g->nxo >= ST_PASS_OUT - 1)) continue;
                AggDir before = g->dir;
                if (!can_join(g, h)) { g->dir = before; continue; }
                g->mem[h->id] = 1;
                list[nl++] = h;
                if (!inside) g->xo[g->nxo++] = h;
                for (int k = 0; k < h->nin; k++) if (h->in[k]) inner[h->in[k]->id]++;
                changed = true;
            }
        /* no producer joined as an output: a consumer of a member */
        for (int m = 0; m < nl && as_out && !changed && nl < MAX_MEMBERS; m++)
            for (int j = 0; j < p->npar[list[m]->id] && !changed; j++) {
                Hop *c = p->par[list[m]->id][j];
                if (!consumer_ok(p, g, c)) continue;
                g->mem[c->id] = 1;
                list[nl++] = c;
                g->xo[g->nxo++] = c;
                for (int k = 0; k < c->nin; k++) if (c->in[k]) inner[c->in[k]->id]++;
                changed = true;
            }
        if (changed) as_out = false;
        prune_outputs(p, g, inner);
    }
    bool ok = g->nxo == 0 || acyclic(p, g, list, nl);
    free(inner);
    free(list);
    return ok;
}

/* The region's node of hop h (built inputs first); -1 when the region
 * cannot hold it. ins: the input hops (matrices, then scalars). */
static int node_of(Grow *g, Hop *h, Hop **mins, int *nm, Hop **sins, int *ns)
{
    if (g->node[h->id] >= 0) return g->node[h->id];
    StitchRegion *r = &g->r;
    int v = -1;
    if (!g->mem[h->id]) {
        /* an input */
        if (h->dt == DT_SCALAR) {
            if (h->vt == VT_STRING) return -1;
            /* literals are arguments too while there is room, so that
             * regions differing only in constants (calls specialized per
             * constant, eps values) share one program: each distinct
             * program is one compile by the driver */
            if (*ns < ST_MAX_SC) {
                sins[*ns] = h;
                v = st_sc(r, (*ns)++);
            } else if (h->kind == H_LIT && val_is_numeric(&h->lit) && isfinite(val_as_double(&h->lit))) {
                v = st_const(r, val_as_double(&h->lit));
            }
        } else if (h->dt == DT_MATRIX && *nm < ST_MAX_IN) {
            AggDir across = g->dir == DIR_ROW ? DIR_COL : DIR_ROW;
            /* slot 0 is X, the first matrix of the space */
            if (cell_shape(g, h) && !mins[0]) { mins[0] = h; v = st_x(r); }
            else if (cell_shape(g, h)) { mins[*nm] = h; v = st_in(r, (*nm)++, SI_CELL); }
            else if (seg_shape(g, g->dir, h)) { mins[*nm] = h; v = st_in(r, (*nm)++, SI_SEG); }
            else if (seg_shape(g, across, h)) { mins[*nm] = h; v = st_in(r, (*nm)++, SI_POS); }
        }
        return g->node[h->id] = v;
    }
    Hop *bv = bcast_of(h);
    if (bv) return g->node[h->id] = node_of(g, bv, mins, nm, sins, ns);
    if (h->kind == H_MATMUL) {
        /* X %*% v: the row sums of X * t(v), v read along the rows in
         * its own orientation (its own input slot: a square X could
         * read the same hop per segment elsewhere) */
        int a = node_of(g, h->in[0], mins, nm, sins, ns);
        if (a < 0 || *nm >= ST_MAX_IN || g->mem[h->in[1]->id]) return -1;
        mins[*nm] = h->in[1];
        int vp = st_in(r, (*nm)++, SI_POST);
        return g->node[h->id] = st_red(r, OP_SUM, st_bin(r, OP_MULT, a, vp));
    }
    int a = node_of(g, h->in[0], mins, nm, sins, ns);
    int b = h->kind == H_BINARY ? node_of(g, h->in[1], mins, nm, sins, ns) : 0;
    if (a < 0 || b < 0) return -1;
    if (h->kind == H_UNARY) v = st_un(r, h->op, a);
    else if (h->kind == H_BINARY) v = st_bin(r, h->op, a, b);
    else if (h->op == OP_SUMSQ) v = st_red(r, OP_SUM, st_bin(r, OP_MULT, a, a));
    else if (h->op == OP_VAR || h->op == OP_SD) {
        /* two passes, as the CPU: the mean, then squared deviations */
        int c = st_bin(r, OP_MINUS, a, st_red(r, OP_MEAN, a));
        v = st_vardiv(r, st_red(r, OP_SUM, st_bin(r, OP_MULT, c, c)));
        if (h->op == OP_SD) v = st_un(r, OP_SQRT, v);
    } else v = st_red(r, h->op, a);
    return g->node[h->id] = v;
}

/* The iteration space of a region rooted at h: h's shape, an
 * aggregate's input, or, for per-segment work over an aggregate
 * (log(rowSums(E)) + m), the input of an aggregate of h's shape below
 * it through elementwise operators of that shape. */
static const Hop *space_of(const Hop *h, int depth)
{
    if (!h || h->dt != DT_MATRIX) return NULL;
    if (h->kind == H_AGG) return h->dir == DIR_ROW || h->dir == DIR_COL ? h->in[0] : NULL;
    if (h->kind == H_MATMUL && h->nin == 2 && h->in[0] && h->in[1] && h->in[1]->cols == 1 && !bcast_of(h) &&
        h->op == OP_MATMUL && space_known(h->in[0]) && h->in[1]->rows == h->in[0]->cols)
        return h->in[0];
    if (depth == 0 && space_known(h)) return h;
    if (depth > 8 || (h->kind != H_UNARY && h->kind != H_BINARY)) return NULL;
    for (int i = 0; i < h->nin; i++) {
        const Hop *x = h->in[i];
        if (!x || x->rows != h->rows || x->cols != h->cols) continue;
        const Hop *s = space_of(x, depth + 1);
        if (s && space_known(s)) return s;
    }
    return NULL;
}

/* A multi-output region: one H_STITCH hop producing a list, and the
 * root and the other outputs become H_OUT hops reading it in place (so
 * their consumers keep their pointers), as codegen's multi-aggregates. */
static void multi_outputs(HopDag *d, Hop *root, const Grow *g, StitchRegion *keep, Hop **in, int nin)
{
    Hop *s = hop_new(d, H_STITCH, root->span, 0);
    if (!s) return;
    s->in = in;
    s->nin = nin;
    s->spoof = keep;
    s->name = "stitch";
    s->dt = DT_LIST;
    s->nouts = 1 + g->nxo;
    hop_infer(s);
    for (int k = 0; k <= g->nxo; k++) {
        Hop *o = k == 0 ? root : g->xo[k - 1];
        Hop **one = arena_alloc(d->arena, sizeof(Hop *));
        if (!one) return;
        one[0] = s;
        /* the output keeps its type and size */
        o->kind = H_OUT;
        o->in = one;
        o->nin = 1;
        o->out_index = k;
        hop_infer(o);
    }
}

/* Forms the region rooted at h, if there is one worth a kernel. */
static void try_root(Pass *p, Hop *h, Hop **order, int n)
{
    Grow *g = calloc(1, sizeof *g + (size_t)p->nid * sizeof(int));
    char *mem = calloc((size_t)p->nid, 1);
    if (!g || !mem) { free(g); free(mem); return; }
    g->mem = mem;
    g->dir = DIR_FULL;
    const Hop *space = space_of(h, 0);
    if (!space || !space_known(space)) goto out;
    g->rows = space->rows;
    g->cols = space->cols;
    if (!can_join(g, h)) goto out;
    mem[h->id] = 1;
    if (!grow(p, g, h, true)) {
        /* a cycle through an output: the region without further outputs */
        memset(mem, 0, (size_t)p->nid);
        g->nxo = 0;
        g->dir = DIR_FULL;
        if (!can_join(g, h)) goto out;
        mem[h->id] = 1;
        grow(p, g, h, false);
    }
    int nops = 0, nred = 0;
    for (int i = 0; i < p->nid; i++) {
        g->node[i] = -1;
        nops += mem[i];
    }
    for (int k = 0; k < n; k++) nred += mem[order[k]->id] && order[k]->kind == H_AGG;
    if (nops < 2) goto out;
    /* elementwise alone: one pass, rows as segments */
    g->r.dir = g->dir == DIR_FULL ? DIR_ROW : g->dir;
    g->dir = g->r.dir;
    Hop *mins[ST_MAX_IN] = {0}, *sins[ST_MAX_SC];
    int nm = 1, ns = 0;
    if (node_of(g, h, mins, &nm, sins, &ns) < 0 || !mins[0]) goto out;
    /* outputs: producers have their nodes from the root's cone,
     * consumers get theirs now (then the root is set: the builders
     * make the last node the root) */
    for (int k = 0; k < g->nxo; k++)
        if (node_of(g, g->xo[k], mins, &nm, sins, &ns) < 0) goto out;
    g->r.root = g->node[h->id];
    for (int k = 0; k < g->nxo; k++)
        if (st_output(&g->r, g->node[g->xo[k]->id]) < 0) goto out;
    if (g->r.nin < nm) g->r.nin = nm;
    /* the region lives in the DAG's arena, as the DAG's literals do: the
     * instructions compiled from the DAG borrow it */
    StitchRegion *keep = arena_alloc(p->d->arena, sizeof *keep);
    Hop **in = arena_alloc(p->d->arena, (size_t)(nm + ns) * sizeof(Hop *));
    if (!keep || !in) goto out;
    *keep = g->r;
    memcpy(in, mins, (size_t)nm * sizeof(Hop *));
    memcpy(in + nm, sins, (size_t)ns * sizeof(Hop *));
    for (int i = 0; i < p->nid; i++) p->taken[i] |= mem[i];
    if (g->nxo == 0) {
        h->kind = H_STITCH;
        h->in = in;
        h->nin = nm + ns;
        h->spoof = keep;
        h->name = "stitch";
        hop_infer(h);
    } else {
        int before = p->d->n;
        multi_outputs(p->d, h, g, keep, in, nm + ns);
        for (int i = before; i < p->d->n; i++)   /* the new list hop: no member of later regions */
            if (p->d->hops[i]->id < p->nid) p->taken[p->d->hops[i]->id] = 1;
    }
out:
    free(mem);
    free(g);
}

/* Is the cone below x (its single-use inputs, recursively) elementwise
 * work with no aggregate or product in it (which a region would stitch
 * and codegen's Cell template would not fuse)? mark: flag its
 * operators in taken (by hop id). */
static bool ew_cone(const Hop *x, const int *uses, char *taken, int depth)
{
    if (depth > 64 || x->kind == H_AGG || x->kind == H_MATMUL) return false;
    if (x->kind != H_UNARY && x->kind != H_BINARY) return true;   /* an input */
    for (int i = 0; i < x->nin; i++) {
        const Hop *c = x->in[i];
        if (c && c->dt == DT_MATRIX && uses[c->id] == 1 && !ew_cone(c, uses, taken, depth + 1)) return false;
    }
    if (taken) taken[x->id] = 1;
    return true;
}

/* The elementwise input x of h when h is a full aggregate to a scalar
 * of x alone (x used only there, of known size), else NULL */
static Hop *ew_full_agg(const Hop *h, const int *uses)
{
    Hop *x = h->kind == H_AGG && h->nin == 1 ? h->in[0] : NULL;
    if (!x || h->dir != DIR_FULL || h->dt != DT_SCALAR || !space_known(x) || uses[x->id] != 1 ||
        (x->kind != H_UNARY && x->kind != H_BINARY))
        return NULL;
    return x;
}

/* Is the full aggregate h (sum, sumsq, min, max) of elementwise work
 * alone left to codegen (on)? Its Cell FULL_AGG operator (a launch and
 * at most its combine) always costs less than the stitched plan (a
 * region's launch writing a row vector, then the two-stage full
 * aggregate reading it: one launch more and the vector's traffic). */
static bool left_to_codegen(const Hop *h, const int *uses, bool codegen)
{
    const Hop *x = codegen ? ew_full_agg(h, uses) : NULL;
    return x && (h->op == OP_SUM || h->op == OP_SUMSQ || h->op == OP_AMIN || h->op == OP_AMAX) &&
           ew_cone(x, uses, NULL, 0);
}

/* full aggregates of elementwise work (used only there) over at least
 * 2 x 2 cells: sum(E) -> sum(rowSums(E)), sumsq -> sum(rowSumsSq),
 * mean -> mean(rowMeans), min/max -> min/max of the row's (unless left
 * to codegen) */
static void split_full_aggs(HopDag *d, bool codegen)
{
    int n = 0;
    Hop **order = hop_walk(d, &n, NULL);
    int *uses = order ? calloc((size_t)d->n + 1, sizeof(int)) : NULL;
    for (int k = 0; uses && k < n; k++)
        for (int i = 0; i < order[k]->nin; i++)
            if (order[k]->in[i]) uses[order[k]->in[i]->id]++;
    for (int k = 0; uses && k < n; k++) {
        Hop *h = order[k], *x = ew_full_agg(h, uses);
        if (!x || (h->op != OP_SUM && h->op != OP_SUMSQ && h->op != OP_MEAN && h->op != OP_AMIN && h->op != OP_AMAX) ||
            left_to_codegen(h, uses, codegen))
            continue;
        Hop *r = hop_agg(d, h->op, DIR_ROW, x, h->span);
        if (!r) break;
        h->in[0] = r;
        if (h->op == OP_SUMSQ) h->op = OP_SUM;
        hop_infer(h);
    }
    free(uses);
    free(order);
}

/* Sizes still unknown after recompilation's folding (matrix(1, rows=1,
 * cols=ncol(X)) whose cols became a literal after the matrix was
 * inferred) are inferred again, inputs first: a region needs them. */
static void refine_sizes(HopDag *d)
{
    int n = 0;
    Hop **order = hop_walk(d, &n, NULL);
    for (int k = 0; order && k < n; k++) {
        Hop *h = order[k];
        if (h->dt == DT_MATRIX && (h->rows < 0 || h->cols < 0) && h->kind != H_TREAD) hop_infer(h);
    }
    free(order);
}

/* The uses (input slots) and the consumers of every hop of order. */
static bool consumers(Pass *p, Hop **order, int n)
{
    for (int k = 0; k < n; k++)
        for (int i = 0; i < order[k]->nin; i++)
            if (order[k]->in[i]) p->uses[order[k]->in[i]->id]++;
    for (int i = 0; i < p->nid; i++)
        if (p->uses[i] && !(p->par[i] = malloc((size_t)p->uses[i] * sizeof(Hop *)))) return false;
    for (int k = 0; k < n; k++)
        for (int i = 0; i < order[k]->nin; i++) {
            const Hop *x = order[k]->in[i];
            if (x) p->par[x->id][p->npar[x->id]++] = order[k];
        }
    return true;
}

int cg_stitch_dag(HopDag *d, bool codegen)
{
    if (!d || d->recompile) return 0;
    refine_sizes(d);
    split_full_aggs(d, codegen);
    int n = 0;
    Hop **order = hop_walk(d, &n, NULL);
    if (!order) return 0;
    /* ids of the hops regions add (one H_STITCH per multi-output region,
     * multi_outputs) stay below d->n + 1 + n: later regions walk them */
    Pass p = {.d = d, .nid = d->n + 1 + n};
    p.uses = calloc((size_t)p.nid, sizeof(int));
    p.out = calloc((size_t)p.nid, 1);
    p.taken = calloc((size_t)p.nid, 1);
    p.par = calloc((size_t)p.nid, sizeof *p.par);
    p.npar = calloc((size_t)p.nid, sizeof *p.npar);
    int formed = 0;
    if (p.uses && p.out && p.taken && p.par && p.npar && consumers(&p, order, n)) {
        for (int i = 0; i < d->nroots; i++) p.out[d->roots[i]->id] = 1;
        for (int i = 0; i < d->nw; i++) if (d->whops[i]) p.out[d->whops[i]->id] = 1;
        /* the elementwise work of full aggregates left to codegen forms
         * no region */
        for (int k = 0; k < n; k++)
            if (left_to_codegen(order[k], p.uses, codegen)) ew_cone(order[k]->in[0], p.uses, p.taken, 0);
        /* consumers first: a region takes the largest cone below its root */
        for (int k = n - 1; k >= 0; k--) {
            Hop *h = order[k];
            if (p.taken[h->id] || h->kind == H_STITCH) continue;
            try_root(&p, h, order, n);
            formed += h->kind == H_STITCH;
        }
    }
    for (int i = 0; p.par && i < p.nid; i++) free(p.par[i]);
    free(p.par);
    free(p.npar);
    free(p.uses);
    free(p.out);
    free(p.taken);
    free(order);
    return formed;
}

int cg_stitch_count(const HopDag *d)
{
    int k = 0;
    for (int i = 0; d && i < d->n; i++) k += d->hops[i] && d->hops[i]->kind == H_STITCH;
    return k;
}

void cg_stitch_explain(const HopDag *d, FILE *f)
{
    static const char *const modes[] = {"cell", "seg", "pos", "post"};
    for (int i = 0; d && i < d->n; i++) {
        const Hop *h = d->hops[i];
        if (!h || h->kind != H_STITCH || !h->spoof) continue;
        const StitchRegion *r = h->spoof;
        int nm = r->nin > 0 ? r->nin : 1;
        fprintf(f, " stitched region at hop %d (-gpu): %s aggregates, %d node%s, %d output%s, inputs", h->id,
                r->dir == DIR_COL ? "column" : "row", r->n, r->n == 1 ? "" : "s", st_nout(r),
                st_nout(r) == 1 ? "" : "s");
        for (int k = 0; k < nm; k++) fprintf(f, " in%d:%s", k, modes[r->mode[k]]);
        if (r->nsc) fprintf(f, ", %d scalar%s", r->nsc, r->nsc == 1 ? "" : "s");
        fprintf(f, "\n");
        for (int k = 0; k < r->n; k++) {
            const SNode *q = &r->nodes[k];
            fprintf(f, "    N%d = ", k);
            switch (q->k) {
            case SN_X: fprintf(f, "in0"); break;
            case SN_CONST: fprintf(f, "%.17g", q->c); break;
            case SN_LEN: fprintf(f, "len"); break;
            case SN_UN: fprintf(f, "u(%s) N%d", op_info[q->op].name, q->a); break;
            case SN_BIN: fprintf(f, "b(%s) N%d N%d", op_info[q->op].name, q->a, q->b); break;
            case SN_RED: fprintf(f, "%s(%s) N%d", r->dir == DIR_COL ? "col" : "row", op_info[q->op].name, q->a); break;
            case SN_IN: fprintf(f, "in%d", q->a); break;
            case SN_SC: fprintf(f, "sc%d", q->a); break;
            case SN_VARDIV: fprintf(f, "N%d / (len - 1)", q->a); break;
            }
            bool out = k == r->root;
            for (int x = 0; x < r->nxout; x++) out |= r->xout[x] == k;
            fprintf(f, "%s\n", out ? "  [out]" : "");
        }
    }
}
