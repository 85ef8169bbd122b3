/* select.c: candidate selection (seed 000, section 4.1) by the heuristics
 * fuse_all (maximal fusion with redundant compute at multi-consumer
 * intermediates) and fuse_no_redundancy (materialize every intermediate
 * with several consumers), the dispatch to the cost-based optimizer, and
 * the final step shared by all policies: from the pruned memo table, the
 * fused operators to build (roots whose values are needed), with Cell full
 * aggregates over shared inputs merged into multi-aggregates (MAgg). */
#include "cgint.h"
#include "../base/vec.h"
#include "../dist/dist.h"

#include <stdlib.h>
#include <string.h>

/* ---- fuse_all: keep, per group, the entries reached top-down ---- */

typedef struct Keep {
    const Memo *m;
    char (*keep)[8];       /* by hop id, per entry index < 8: kept */
    char (*seen)[T__N + 1];
} Keep;

static int entry_index(const Memo *m, const Hop *h, const MEntry *e)
{
    return (int)(e - m->g[h->id]->e);
}

static void rselect(Keep *k, Hop *h, int consumer)
{
    const Memo *m = k->m;
    if (!h || !m->hop[h->id]) return;
    if (k->seen[h->id][consumer]) return;
    k->seen[h->id][consumer] = 1;
    MEntry *e = sel_best(m, h, consumer);
    if (e) {
        int idx = entry_index(m, h, e);
        if (idx < 8) k->keep[h->id][idx] = 1;
        for (int i = 0; i < h->nin; i++) {
            if (!h->in[i]) continue;
            if (i < e->nin && e->ref[i] >= 0) rselect(k, h->in[i], e->type);
            else rselect(k, h->in[i], T__N);
        }
        /* a fused intermediate may also be needed materialized elsewhere */
        if (consumer != T__N) rselect(k, h, T__N);
    } else {
        for (int i = 0; i < h->nin; i++) rselect(k, h->in[i], T__N);
    }
}

static bool drop_unkept(const Memo *m, const Hop *h, const MEntry *e, void *arg)
{
    Keep *k = arg;
    int idx = entry_index(m, h, e);
    return idx >= 8 || !k->keep[h->id][idx];
}

/* Fuse-all (seed 4.1): from every output, the best plan (most fused
 * inputs) top-down; every other entry is removed. */
static void select_fuse_all(Memo *m)
{
    Keep k = {.m = m};
    k.keep = br_calloc((size_t)m->nid, sizeof *k.keep);
    k.seen = br_calloc((size_t)m->nid, sizeof *k.seen);
    if (!k.keep || !k.seen) { free(k.keep); free(k.seen); return; }
    /* entries beyond the 8th of a group are never kept: sort the best
     * ones first */
    for (int i = 0; i < m->nid; i++) {
        MGroup *g = m->g[i];
        if (!g || g->n <= 8) continue;
        for (int a = 0; a < g->n; a++)
            for (int b = a + 1; b < g->n; b++)
                if (memo_nrefs(&g->e[b]) > memo_nrefs(&g->e[a])) {
                    MEntry t = g->e[a]; g->e[a] = g->e[b]; g->e[b] = t;
                }
    }
    for (int i = 0; i < m->d->nroots; i++) rselect(&k, m->d->roots[i], T__N);
    for (int i = 0; i < m->d->nw; i++) rselect(&k, m->d->whops[i], T__N);
    for (int i = 0; i < m->norder; i++) memo_filter(m, m->order[i], drop_unkept, &k);
    free(k.keep);
    free(k.seen);
}

/* ---- fuse_no_redundancy ---- */

static bool drop_multi_refs(const Memo *m, const Hop *h, const MEntry *e, void *arg)
{
    (void)arg;
    for (int i = 0; i < e->nin; i++)
        if (e->ref[i] >= 0 && m->nuse[h->in[i]->id] > 1) return true;
    return false;
}

static bool drop_invalid_leftovers(const Memo *m, const Hop *h, const MEntry *e, void *arg)
{
    (void)m; (void)h; (void)arg;
    return e->closed == CS_CLOSED_VALID && memo_nrefs(e) == 0;
}

/* A memo entry e is dominated (seed 000, section 3.2) when another entry
 * o of the same template references a strict superset of its groups and
 * every reference o adds points to an operator with one consumer: fusing
 * that operator computes nothing twice, so heuristics never prefer e.
 * (R(10,9) dominates R(10,-1); R(6,8) does not dominate R(-1,8) when group
 * 6 has several consumers.) */
static bool drop_dominated(const Memo *m, const Hop *h, const MEntry *e, void *arg)
{
    (void)arg;
    MGroup *g = m->g[h->id];
    for (int k = 0; k < g->n; k++) {
        const MEntry *o = &g->e[k];
        if (o == e || o->type != e->type || o->nin != e->nin || memo_nrefs(o) <= memo_nrefs(e)) continue;
        bool dom = true;
        for (int i = 0; i < e->nin && dom; i++) {
            if (e->ref[i] >= 0) dom = o->ref[i] == e->ref[i];
            else if (o->ref[i] >= 0) dom = m->nuse[o->ref[i]] <= 1;
        }
        if (dom) return true;
    }
    return false;
}

/* An entry that fuses an input whose group has no entry its template can
 * fuse (all removed by the pruning above) would leave a dangling
 * reference: no CPlan could be built for it. */
static bool drop_dangling(const Memo *m, const Hop *h, const MEntry *e, void *arg)
{
    bool *changed = arg;
    for (int i = 0; i < e->nin && i < h->nin; i++)
        if (e->ref[i] >= 0 && !sel_best(m, h->in[i], e->type)) return *changed = true;
    return false;
}

/* drop_dangling to a fixed point */
static void prune_dangling(Memo *m)
{
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = 0; i < m->norder; i++) memo_filter(m, m->order[i], drop_dangling, &changed);
    }
}

static bool refs_hop(const Memo *m, const Hop *h, const MEntry *e, void *arg)
{
    (void)m;
    int id = *(const int *)arg;
    for (int i = 0; i < e->nin && i < h->nin; i++)
        if (e->ref[i] >= 0 && h->in[i] && h->in[i]->id == id) return true;
    return false;
}

void memo_ban_fused(Memo *m, int id)
{
    for (int k = 0; k < m->norder; k++) memo_filter(m, m->order[k], refs_hop, &id);
    prune_dangling(m);
}

void cg_select(CgContext *c, Memo *m, CgPolicy policy, const CgMachine *mc, EnumStats *es)
{
    if (policy != CG_COST_BASED && policy != CG_STITCH_EXPLORER)
        for (int i = 0; i < m->norder; i++) memo_filter(m, m->order[i], drop_dominated, NULL);
    if (policy == CG_FUSE_NO_REDUNDANCY) {
        for (int i = 0; i < m->norder; i++) {
            memo_filter(m, m->order[i], drop_multi_refs, NULL);
            memo_filter(m, m->order[i], drop_invalid_leftovers, NULL);
        }
        prune_dangling(m);
    } else if (policy == CG_COST_BASED) {
        cg_select_cost(c, m, mc, es);
    } else if (policy == CG_STITCH_EXPLORER) {
        cg_select_fx(m, mc, es);
    }
    select_fuse_all(m);
}

/* ---- the fused operators to build ---- */

typedef struct Walk {
    const Memo *m;
    CgBestFn best;         /* the entries: the selection's (sel_best), or */
    const void *barg;      /*   a candidate's as the cost model has it */
    char *needed;          /* by hop id */
    char *inreg;           /* scratch: hops of the current region */
    Selection *s;
} Walk;

static void add_op(Selection *s, TplType t, Hop *root)
{
    if (!br_grow((void **)&s->ops, &s->cap, s->nops + 1, sizeof *s->ops)) return;
    FusedOp *f = &s->ops[s->nops++];
    memset(f, 0, sizeof *f);
    f->type = t;
    f->root = root;
}

typedef struct HList { Hop **v; int n, cap; } HList;

static void hl_add(HList *l, Hop *h)
{
    if (!br_grow((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v)) return;
    l->v[l->n++] = h;
}

/* Visits the region of a fused operator below h (entry e): marks its
 * hops in inreg and collects its materialized inputs. */
static void region(Walk *w, Hop *h, const MEntry *e, HList *ins)
{
    if (w->inreg[h->id]) return;
    w->inreg[h->id] = 1;
    for (int i = 0; i < h->nin; i++) {
        Hop *in = h->in[i];
        if (!in) continue;
        MEntry *ie = (i < e->nin && e->ref[i] >= 0) ? w->best(w->barg, in, e->type) : NULL;
        if (ie) region(w, in, ie, ins);
        else if (e->type == T_OUTER && i == 1 && in->kind == H_REORG && in->op == OP_TRANS &&
                 h->kind == H_MATMUL && h->op == OP_MATMUL)
            hl_add(ins, in->in[0]);   /* t(V) of U %*% t(V) is covered */
        else hl_add(ins, in);
    }
}

static void clear_region(Walk *w, Hop *h, const MEntry *e)
{
    if (!w->inreg[h->id]) return;
    w->inreg[h->id] = 0;
    for (int i = 0; i < h->nin; i++) {
        Hop *in = h->in[i];
        if (!in) continue;
        MEntry *ie = (i < e->nin && e->ref[i] >= 0) ? w->best(w->barg, in, e->type) : NULL;
        if (ie) clear_region(w, in, ie);
    }
}

/* h's value is needed: a fused operator rooted at h computes it when the
 * selection kept a valid plan with fused inputs; otherwise h runs as a
 * basic operator. Recurses into what that computation reads. */
static void need(Walk *w, Hop *h)
{
    if (!h || w->needed[h->id]) return;
    w->needed[h->id] = 1;
    MEntry *e = w->best(w->barg, h, T__N);
    if (e && memo_nrefs(e) > 0) {
        add_op(w->s, e->type, h);
        HList ins = {0};
        region(w, h, e, &ins);
        clear_region(w, h, e);
        for (int i = 0; i < ins.n; i++) need(w, ins.v[i]);
        free(ins.v);
        return;
    }
    for (int i = 0; i < h->nin; i++) need(w, h->in[i]);
}

/* Does the value of `from` depend on hop `to`? */
static bool depends(const Memo *m, const Hop *from, const Hop *to, char *seen)
{
    if (!from) return false;
    if (from == to) return true;
    if (seen[from->id]) return false;
    seen[from->id] = 1;
    for (int i = 0; i < from->nin; i++)
        if (depends(m, from->in[i], to, seen)) return true;
    return false;
}

/* Materialized inputs of the Cell region under h (into list). */
static void cell_inputs(const Walk *w, Hop *h, const MEntry *e, Hop **list, int *n, int max, char *seen)
{
    if (seen[h->id]) return;
    seen[h->id] = 1;
    for (int i = 0; i < h->nin; i++) {
        Hop *in = h->in[i];
        if (!in) continue;
        MEntry *ie = (i < e->nin && e->ref[i] >= 0) ? w->best(w->barg, in, e->type) : NULL;
        if (ie) cell_inputs(w, in, ie, list, n, max, seen);
        else if (in->dt == DT_MATRIX && *n < max) list[(*n)++] = in;
    }
}

/* Merges Cell full aggregates with equal iteration shape, a shared
 * matrix input and no dependency between them into MAgg operators. */
static void form_magg(const Walk *wk, Selection *s)
{
    const Memo *m = wk->m;
    int n = s->nops;
    int *grp = br_calloc((size_t)n + 1, sizeof(int));
    Hop ***ins = br_calloc((size_t)n + 1, sizeof(Hop **));
    int *nins = br_calloc((size_t)n + 1, sizeof(int));
    char *seen = br_calloc((size_t)m->nid, 1);
    if (!grp || !ins || !nins || !seen) goto done;
    for (int i = 0; i < n; i++) {
        grp[i] = -1;
        FusedOp *f = &s->ops[i];
        Hop *r = f->root;
        if (f->type != T_CELL || r->kind != H_AGG || r->dir != DIR_FULL) continue;
        ins[i] = br_calloc(16, sizeof(Hop *));
        if (!ins[i]) continue;
        memset(seen, 0, (size_t)m->nid);
        MEntry *e = wk->best(wk->barg, r, T__N);
        if (e) cell_inputs(wk, r, e, ins[i], &nins[i], 16, seen);
        grp[i] = i;
    }
    for (int i = 0; i < n; i++) {
        if (grp[i] != i) continue;
        int members[CG_MAXOUT], nm = 1;
        members[0] = i;
        for (int j = i + 1; j < n && nm < CG_MAXOUT; j++) {
            if (grp[j] != j) continue;
            Hop *a = s->ops[i].root->in[0], *b = s->ops[j].root->in[0];
            if (a->rows != b->rows || a->cols != b->cols) continue;
            bool share = false;
            for (int x = 0; x < nins[i] && !share; x++)
                for (int y = 0; y < nins[j]; y++) if (ins[i][x] == ins[j][y]) { share = true; break; }
            if (!share) continue;
            bool indep = true;
            for (int k = 0; k < nm && indep; k++) {
                Hop *p = s->ops[members[k]].root, *q = s->ops[j].root;
                memset(seen, 0, (size_t)m->nid);
                if (depends(m, p, q, seen)) indep = false;
                memset(seen, 0, (size_t)m->nid);
                if (indep && depends(m, q, p, seen)) indep = false;
            }
            if (!indep) continue;
            members[nm++] = j;
            grp[j] = i;
        }
        if (nm < 2) continue;
        FusedOp *f = &s->ops[i];
        f->type = T_MAGG;
        f->roots = br_calloc((size_t)nm, sizeof(Hop *));
        if (!f->roots) { f->type = T_CELL; continue; }
        for (int k = 0; k < nm; k++) f->roots[k] = s->ops[members[k]].root;
        f->nroots = nm;
    }
    /* drop the merged members */
    int w = 0;
    for (int i = 0; i < n; i++)
        if (grp[i] < 0 || grp[i] == i) s->ops[w++] = s->ops[i];
    s->nops = w;
done:
    for (int i = 0; i < n && ins; i++) free(ins[i]);
    free(ins); free(nins); free(grp); free(seen);
}

/* The fused operators of the entries best(barg, ...) (cg_choose_ops,
 * cg_magg_partners). */
static Selection *choose_ops(const Memo *m, CgBestFn best, const void *barg)
{
    Selection *s = br_calloc(1, sizeof *s);
    if (!s) return NULL;
    Walk w = {.m = m, .best = best, .barg = barg, .s = s};
    w.needed = br_calloc((size_t)m->nid, 1);
    w.inreg = br_calloc((size_t)m->nid, 1);
    if (!w.needed || !w.inreg) { free(w.needed); free(w.inreg); free(s); return NULL; }
    for (int i = 0; i < m->d->nroots; i++) need(&w, m->d->roots[i]);
    for (int i = 0; i < m->d->nw; i++) need(&w, m->d->whops[i]);
    free(w.needed);
    free(w.inreg);
    form_magg(&w, s);
    return s;
}

static MEntry *sel_best_of(const void *m, const Hop *h, int consumer) { return sel_best(m, h, consumer); }

Selection *cg_choose_ops(Memo *m) { return choose_ops(m, sel_best_of, m); }

/* Where the operators compute what a comparison reads (cg_split_compare):
 * per chosen operator the hops of its region, and which operator's root
 * each hop is. A site is an operator's index, or -1: a basic operator. */
typedef struct Sites {
    const Memo *m;
    int nops;
    char **reg;            /* [op][hop id] */
    int *rootop;           /* [hop id]: the operator it is the root of, -1 */
    char *vis;             /* [(site + 1) * nid + hop id] */
    int pair[64][2], npair;
    int bad;
} Sites;

/* The site of h's value as read from a computation at site ctx: inside
 * ctx's region, or materialized by the operator it is the root of (or a
 * basic operator). */
static int site_of(const Sites *x, const Hop *h, int ctx)
{
    if (ctx >= 0 && x->reg[ctx][h->id]) return ctx;
    return x->rootop[h->id];
}

/* A value whose bits depend on the order of its additions (a product, a
 * summing aggregate: sum, sumsq, mean, var, ...): two computations of it
 * may differ in the last bit. Minima, maxima and their indices are exact. */
static bool order_dependent(const Hop *h)
{
    if (h->kind == H_MATMUL) return true;
    if (h->kind != H_AGG) return false;
    int acc = op_info[h->op].acc & AC_COMB;
    return acc != AC_MIN && acc != AC_MAX;
}

/* Where h's value jumps when its operands' last bits change: -1 nowhere;
 * 0 at once over all its operands (a comparison, rounding: round,
 * floor, ceil, sign, %/%, %%, a test against zero: !, and
 * rowIndexMax/rowIndexMin); 1 in each operand alone (&, |, xor test
 * each against zero); 2 in its first operand (ifelse's condition). */
static int jumps(const Hop *h)
{
    if (h->kind == H_AGG) return op_info[h->op].acc & AC_IDX ? 0 : -1;
    if (h->kind == H_TERNARY) return h->op == OP_IFELSE && h->nin == 3 ? 2 : -1;
    if (h->kind != H_UNARY && h->kind != H_BINARY) return -1;
    if (op_info[h->op].flags & OF_CMP) return h->kind == H_BINARY ? 0 : -1;
    switch (h->op) {
    case OP_NOT: case OP_ROUND: case OP_FLOOR: case OP_CEIL: case OP_SIGN: case OP_MOD: case OP_INTDIV: return 0;
    case OP_AND: case OP_OR: case OP_XOR: return h->kind == H_BINARY ? 1 : -1;
    default: return -1;
    }
}

/* Records the site of every order-dependent value below h (h's value
 * computed at site); two sites of one value set x->bad. */
static void gather(Sites *x, const Hop *h, int site)
{
    if (!h || x->bad >= 0) return;
    char *v = &x->vis[(size_t)(site + 1) * (size_t)x->m->nid + (size_t)h->id];
    if (*v) return;
    *v = 1;
    if (order_dependent(h)) {
        int k = 0;
        while (k < x->npair && x->pair[k][0] != h->id) k++;
        if (k == x->npair && k < 64) { x->pair[k][0] = h->id; x->pair[k][1] = site; x->npair++; }
        else if (k == 64 || x->pair[k][1] != site) { x->bad = h->id; return; }
    }
    for (int i = 0; i < h->nin; i++) if (h->in[i]) gather(x, h->in[i], site_of(x, h->in[i], site));
}

int cg_split_compare(const Memo *m, const Selection *s)
{
    int nid = m->nid;
    Sites x = {.m = m, .nops = s->nops, .bad = -1};
    x.reg = br_calloc((size_t)s->nops + 1, sizeof *x.reg);
    x.rootop = br_malloc((size_t)nid * sizeof *x.rootop);
    x.vis = br_calloc((size_t)(s->nops + 1) * (size_t)nid, 1);
    char *inreg = br_calloc((size_t)nid, 1);
    bool ok = x.reg && x.rootop && x.vis && inreg;
    for (int h = 0; ok && h < nid; h++) x.rootop[h] = -1;
    Walk w = {.m = m, .best = sel_best_of, .barg = m, .inreg = inreg};
    for (int i = 0; ok && i < s->nops; i++) {
        const FusedOp *f = &s->ops[i];
        Hop *const *roots = f->nroots ? f->roots : &f->root;
        int nr = f->nroots ? f->nroots : 1;
        memset(inreg, 0, (size_t)nid);
        HList ins = {0};
        for (int r = 0; r < nr; r++) {
            if (x.rootop[roots[r]->id] < 0) x.rootop[roots[r]->id] = i;
            MEntry *e = sel_best(m, roots[r], T__N);
            if (e) region(&w, roots[r], e, &ins);
            else inreg[roots[r]->id] = 1;
        }
        free(ins.v);
        x.reg[i] = br_malloc((size_t)nid);
        if (!x.reg[i]) { ok = false; break; }
        memcpy(x.reg[i], inreg, (size_t)nid);
    }
    /* every computation of every comparison (and other jump): inside
     * each operator whose region holds it, or a basic operator; what
     * jumps at once is gathered together */
    for (int k = 0; ok && k < m->norder && x.bad < 0; k++) {
        const Hop *c = m->order[k];
        int j = jumps(c);
        if (j < 0) continue;
        bool any = false;
        for (int o = 0; o <= s->nops && x.bad < 0; o++) {
            if (o < s->nops && !x.reg[o][c->id]) continue;
            if (o == s->nops && any) break;
            any = true;
            int site = o < s->nops ? o : -1;
            for (int i = 0; i < (j == 0 ? 1 : j == 1 ? c->nin : 1) && x.bad < 0; i++) {
                x.npair = 0;
                memset(x.vis, 0, (size_t)(s->nops + 1) * (size_t)nid);
                if (j == 0) gather(&x, c, site);
                else if (c->in[i]) gather(&x, c->in[i], site_of(&x, c->in[i], site));
            }
        }
    }
    for (int i = 0; x.reg && i < s->nops; i++) free(x.reg[i]);
    free(x.reg); free(x.rootop); free(x.vis); free(inreg);
    return x.bad;
}

int cg_magg_partners(const Memo *m, CgBestFn best, const void *barg, const Hop *h, const Hop **roots, int max)
{
    MEntry *e = best(barg, h, T__N);
    if (!e || e->type != T_CELL || h->kind != H_AGG || h->dir != DIR_FULL || memo_nrefs(e) == 0) return 0;
    Selection *s = choose_ops(m, best, barg);
    int n = 0;
    for (int i = 0; s && i < s->nops && !n; i++) {
        const FusedOp *f = &s->ops[i];
        bool mine = false;
        for (int r = 0; r < f->nroots && f->type == T_MAGG; r++) mine |= f->roots[r] == h;
        for (int r = 0; mine && r < f->nroots && n < max; r++) roots[n++] = f->roots[r];
    }
    sel_free(s);
    return n;
}

void sel_free(Selection *s)
{
    if (!s) return;
    for (int i = 0; i < s->nops; i++) free(s->ops[i].roots);
    free(s->ops);
    free(s->best);
    free(s);
}

/* Is p a Row plan aggregating over all rows (its outputs small)? */
static bool row_aggregating(const CPlan *p)
{
    return p && p->tpl == T_ROW && p->main >= 0 && p->in[p->main].hop &&
           (p->var == V_COL_AGG || p->var == V_FULL_AGG || p->var == V_COL_T_AGG);
}

/* Do plans a and b read the same input hops? Then every run-time
 * decision that looks at the inputs (non-finite side inputs sending a
 * plan to the reference kernels, exec.c) is the same for each of them as
 * for their merged plan, and merging changes no result. */
static bool same_inputs(const CPlan *a, const CPlan *b)
{
    for (int pass = 0; pass < 2; pass++) {
        const CPlan *x = pass ? b : a, *y = pass ? a : b;
        for (int i = 0; i < x->nin; i++) {
            bool found = false;
            for (int j = 0; j < y->nin && !found; j++) found = x->in[i].hop == y->in[j].hop;
            if (!found) return false;
        }
    }
    return true;
}

/* Are the roots of group g[0..n) and root r free of dependencies? */
static bool independent(const Memo *m, Selection *s, const int *g, int n, int j, char *seen)
{
    for (int k = 0; k < n; k++) {
        Hop *p = s->ops[g[k]].root, *q = s->ops[j].root;
        memset(seen, 0, (size_t)m->nid);
        if (depends(m, p, q, seen)) return false;
        memset(seen, 0, (size_t)m->nid);
        if (depends(m, q, p, seen)) return false;
    }
    return true;
}

void cg_merge_rows(const Memo *m, Selection *s, CPlan **plans)
{
    int n = s->nops;
    char *seen = br_calloc((size_t)m->nid + 1, 1);
    char *gone = br_calloc((size_t)n + 1, 1);
    if (!seen || !gone) { free(seen); free(gone); return; }
    for (int i = 0; i < n; i++) {
        if (gone[i] || !row_aggregating(plans[i])) continue;
        const Hop *main = plans[i]->in[plans[i]->main].hop;
        int g[CG_MAXOUT], ng = 1;
        g[0] = i;
        for (int j = i + 1; j < n && ng < CG_MAXOUT; j++) {
            if (gone[j] || !row_aggregating(plans[j]) || plans[j]->in[plans[j]->main].hop != main ||
                !same_inputs(plans[i], plans[j]))
                continue;
            if (independent(m, s, g, ng, j, seen)) g[ng++] = j;
        }
        if (ng < 2) continue;
        Hop **roots = br_calloc((size_t)ng, sizeof(Hop *));
        if (!roots) continue;
        for (int k = 0; k < ng; k++) roots[k] = s->ops[g[k]].root;
        FusedOp f = {.type = T_ROW, .root = roots[0], .roots = roots, .nroots = ng};
        CPlan *mp = cplan_build(m, &f);
        /* the merged plan must still be driven by the same input */
        if (!mp || mp->var != V_MULTI || mp->in[mp->main].hop != main) { cplan_free(mp); free(roots); continue; }
        for (int k = 0; k < ng; k++) { cplan_free(plans[g[k]]); plans[g[k]] = NULL; }
        plans[i] = mp;
        s->ops[i] = f;
        for (int k = 1; k < ng; k++) gone[g[k]] = 1;
    }
    int w = 0;
    for (int i = 0; i < n; i++) {
        if (gone[i]) continue;
        s->ops[w] = s->ops[i];
        plans[w++] = plans[i];
    }
    s->nops = w;
    free(seen);
    free(gone);
}

/* ---- CPU stitching (docs/codegen.md, "CPU stitching") ---- */

/* Marks the hops plan p of op f covers: from its roots down to its
 * inputs (not marked). */
static void cover(const CPlan *p, Hop *h, char *mark)
{
    if (!h || mark[h->id]) return;
    for (int k = 0; k < p->nin; k++) if (p->in[k].hop == h) return;
    mark[h->id] = 1;
    for (int i = 0; i < h->nin; i++) cover(p, h->in[i], mark);
}

int cg_pre_build(Hop *h, Hop **x, SpPre *e, Hop **hs, int *nh)
{
    if (e->n == SPOOF_PREMAX || *nh == SPOOF_PREMAX) return -1;
    SpPreNode n = {0};
    if (h->kind == H_LIT) {
        if (h->dt != DT_SCALAR || !val_is_numeric(&h->lit)) return -1;
        n = (SpPreNode){SPP_CONST, 0, 0, 0, val_as_double(&h->lit)};
    } else if (h->dt != DT_MATRIX) {
        return -1;
    } else if (h->kind == H_AGG) {
        if (h->dir != DIR_COL || h->nin != 1 || !k_pre_agg_ok(h->op) || (*x && h->in[0] != *x)) return -1;
        *x = h->in[0];
        n = (SpPreNode){SPP_AGG, h->op, 0, 0, 0};
    } else if ((h->kind == H_UNARY || h->kind == H_BINARY) && !hop_lazy_ifelse(h)) {
        const OpInfo *oi = &op_info[h->op];
        int ar = h->kind == H_UNARY ? 1 : 2;
        if (oi->kind != (ar == 1 ? OK_UNARY : OK_BINARY) || !(oi->tpl & FT_CELL) || h->nin != ar) return -1;
        int c[2];
        for (int i = 0; i < ar; i++) {
            const Hop *q = h->in[i];
            /* row vectors (the aggregates' shape) and scalars only */
            if (q->dt == DT_MATRIX && q->rows != 1) return -1;
            if ((c[i] = cg_pre_build(h->in[i], x, e, hs, nh)) < 0) return -1;
        }
        if (e->n == SPOOF_PREMAX) return -1;
        n = (SpPreNode){ar == 1 ? SPP_UN : SPP_BIN, h->op, c[0], ar == 2 ? c[1] : 0, 0};
    } else {
        return -1;
    }
    if (h->kind != H_LIT) hs[(*nh)++] = h;
    e->x[e->n] = n;
    return e->n++;
}

/* Is hop h read only inside plan i (its cover in mark, or the expression
 * hs[0..nh)), no DAG output, no other operator's root or input? */
static bool only_inside(const Memo *m, const Selection *s, CPlan **plans, int i, int absorb, const Hop *h,
                        const char *mark, Hop *const *hs, int nh)
{
    if (m->out[h->id] || m->npar[h->id] == 0) return false;
    for (int q = 0; q < m->npar[h->id]; q++) {
        const Hop *c = m->par[h->id][q];
        bool in = mark[c->id] != 0;
        for (int t = 0; t < nh && !in; t++) in = hs[t] == c;
        if (!in) return false;
    }
    for (int j = 0; j < s->nops; j++) {
        const FusedOp *g = &s->ops[j];
        if (j == absorb) continue;
        for (int q = 0; j != i && plans[j] && q < plans[j]->nin; q++) if (plans[j]->in[q].hop == h) return false;
        if (g->root == h) return false;
        for (int r = 0; g->roots && r < g->nroots; r++) if (g->roots[r] == h) return false;
    }
    return true;
}

/* May plan p read its matrix x as the source of stitched inputs: Row: x
 * is the main input; Cell/MAgg: a full input read whole (no slice). */
static bool pre_source(const CPlan *p, const Hop *x)
{
    if (p->tpl == T_ROW) return p->main >= 0 && p->in[p->main].hop == x;
    if (p->tpl != T_CELL && p->tpl != T_MAGG) return false;
    for (int k = 0; k < p->nin; k++)
        if (p->in[k].hop == x && !p->in[k].scalar && p->in[k].mode == IM_FULL && p->in[k].slice < 0) return true;
    return false;
}

/* The operator of s other than i whose root is h, when the expression
 * hs[0..nh) holds everything it covers (a Cell operator over the vector
 * expression, which the stitching plan then computes in its place): its
 * index; -1 when there is none; -2 when there is another one. */
static int absorbable(const Memo *m, const Selection *s, CPlan **plans, int i, const Hop *h, Hop *const *hs, int nh,
                      const char *gone, char *mark2)
{
    for (int j = 0; j < s->nops; j++) {
        const FusedOp *g = &s->ops[j];
        bool root = g->root == h;
        for (int r = 0; g->roots && r < g->nroots; r++) root |= g->roots[r] == h;
        if (j == i || !root) continue;
        if (gone[j] || g->type != T_CELL || g->roots || !plans[j] || plans[j]->var != V_NO_AGG) return -2;
        memset(mark2, 0, (size_t)m->nid);
        cover(plans[j], g->root, mark2);
        for (int q = 0; q < m->nid; q++) {
            if (!mark2[q]) continue;
            bool in = false;
            for (int t = 0; t < nh && !in; t++) in = hs[t]->id == q;
            if (!in) return -2;
        }
        return j;
    }
    return -1;
}

/* The cost-based choice for stitching vector h into the plan whose
 * cover is mark: 1 when its consumers there have stitch points that all
 * chose stitching, 0 when one chose not to, -1 when none has one (the
 * structural rule decides). */
static int stitch_choice(const Memo *m, const Hop *h, const char *mark)
{
    int r = -1;
    for (int t = 0; t < m->nspt; t++) {
        if (m->spt[t].h != h->id || !mark[m->spt[t].c]) continue;
        if (!m->sdo[t]) return 0;
        r = 1;
    }
    return r;
}

bool cg_on_ranks(const Hop *h)
{
    return h && h->exec == EX_DIST && br_dist_available() && dist_size() >= 2;
}

bool cg_stitch_allowed(const Hop *h)
{
    const char *env = getenv("BRAID_CG_STITCH");
    if (env && !strcmp(env, "0")) return false;
    return !cg_on_ranks(h);
}

int cg_stitch(const Memo *m, Selection *s, CPlan **plans)
{
    if (!cg_stitch_allowed(NULL)) return 0;
    char *mark = br_calloc((size_t)m->nid + 1, 1), *mark2 = br_calloc((size_t)m->nid + 1, 1);
    char *gone = br_calloc((size_t)s->nops + 1, 1);
    if (!mark || !mark2 || !gone) { free(mark); free(mark2); free(gone); return 0; }
    int done = 0;
    for (int i = 0; i < s->nops; i++) {
        CPlan *p = plans[i];
        const FusedOp *f = &s->ops[i];
        if (gone[i] || !p || (p->tpl != T_ROW && p->tpl != T_CELL && p->tpl != T_MAGG)) continue;
        if (!cg_stitch_allowed(f->root)) continue;
        memset(mark, 0, (size_t)m->nid);
        if (f->roots) for (int r = 0; r < f->nroots; r++) cover(p, f->roots[r], mark);
        else cover(p, f->root, mark);
        /* twice: an input whose aggregate an expression stitched in the
         * first round also reads is then read inside the plan only */
        int any = 0;
        for (int round = 0, k = 0; round < 2 && any < CG_MAXPRE; k = (k + 1) % p->nin, round += k == 0) {
            Hop *h = p->in[k].hop, *x = NULL, *hs[SPOOF_PREMAX];
            SpPre e = {0};
            int nh = 0;
            if (!h || p->in[k].scalar || p->in[k].mode != IM_ROW || p->in[k].pre.n) continue;
            if (cg_pre_build(h, &x, &e, hs, &nh) < 0 || !x || !pre_source(p, x)) continue;
            /* the cost-based selection's choice at the stitch points of
             * this input's consumers in the plan; without one, every hop
             * of the expression read only here (else it would be
             * computed twice) */
            int chosen = stitch_choice(m, h, mark);
            if (chosen == 0) continue;
            int ab = absorbable(m, s, plans, i, h, hs, nh, gone, mark2);
            bool inside = ab != -2;
            for (int t = 0; t < nh && inside; t++) inside = only_inside(m, s, plans, i, ab, hs[t], mark, hs, nh);
            if (!inside && chosen < 0) continue;
            if (!inside) ab = -1;   /* chosen with redundancy: its operators stay */
            if (ab >= 0) { gone[ab] = 1; cplan_free(plans[ab]); plans[ab] = NULL; }
            p->in[k].pre = e;
            p->in[k].hop = x;
            for (int t = 0; t < nh; t++) mark[hs[t]->id] = 1;   /* now inside the plan */
            any++;
        }
        done += any;
        if (any) cplan_resign(p);
    }
    int w = 0;
    for (int i = 0; i < s->nops; i++) {
        if (gone[i]) continue;
        s->ops[w] = s->ops[i];
        plans[w++] = plans[i];
    }
    s->nops = w;
    free(mark);
    free(mark2);
    free(gone);
    return done;
}
