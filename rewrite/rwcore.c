/* rwcore.c: the rewrite pass driver, common subexpression elimination and
 * constant folding (seed 002, section 3.1). */
#include "rewrite.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>


/* ---- driver ---- */

static Hop *final(RwPass *p, Hop *h)
{
    while (h && h->id < p->cap && p->map[h->id]) h = p->map[h->id];
    return h;
}

/* Hops whose sizes a rewrite pass infers again from their inputs: not
 * reads of variables, call outputs or builtins (their sizes may come from
 * elsewhere: a .mtd, the builder), except a builtin matrix of unknown
 * size, which only gains from it: matrix(1, rows=1, cols=ncol(X)) is
 * sized once recompilation folds ncol(X) to a literal (it stayed
 * unknown, and so did what it feeds, which codegen then left unfused). */
static bool infer_kind(const Hop *h)
{
    if (h->kind == H_BUILTIN) return h->dt == DT_MATRIX && (h->rows < 0 || h->cols < 0);
    return h->kind != H_TREAD && h->kind != H_FCALL && h->kind != H_OUT;
}

void rw_run(HopDag *d, RwRule rule, RwStats *st)
{
    for (int iter = 0; iter < 8; iter++) {
        RwPass p = {.d = d, .st = st};
        p.cap = d->n + 1;
        p.map = calloc((size_t)p.cap + 1, sizeof(Hop *));
        int n;
        Hop **order = p.map ? hop_walk(d, &n, NULL) : NULL;
        if (!order) {
            /* out of memory: stop rewriting (plan_compile reports it) */
            d->oom = true;
            free(p.map);
            break;
        }
        for (int i = 0; i < n; i++) {
            Hop *h = order[i];
            for (int k = 0; k < h->nin; k++) h->in[k] = final(&p, h->in[k]);
            if (infer_kind(h)) hop_infer(h);
            Hop *r = rule(&p, h);
            if (r && r != h) {
                if (h->id < p.cap) p.map[h->id] = r;
                p.changed++;
            }
        }
        for (int i = 0; i < d->nroots; i++) d->roots[i] = final(&p, d->roots[i]);
        for (int i = 0; i < d->nw; i++) d->whops[i] = final(&p, d->whops[i]);
        free(order);
        free(p.map);
        if (!p.changed) break;
    }
}

void rw_propagate_sizes(HopDag *d)
{
    int n;
    Hop **order = hop_walk(d, &n, NULL);
    if (!order) return;
    for (int i = 0; i < n; i++) if (infer_kind(order[i])) hop_infer(order[i]);
    free(order);
}

int rw_uses(const HopDag *d, const Hop *h)
{
    int n, u = 0;
    Hop **order = hop_walk(d, &n, NULL);
    if (!order) return INT_MAX;   /* out of memory: "many", no rewrite */
    for (int i = 0; i < n; i++)
        for (int k = 0; k < order[i]->nin; k++) u += order[i]->in[k] == h;
    for (int i = 0; i < d->nw; i++) u += d->whops[i] == h;
    free(order);
    return u;
}

bool rw_is_lit(const Hop *h, double v)
{
    if (!h || h->kind != H_LIT) return false;
    if (h->lit.kind == V_INT) return (double)h->lit.i == v;
    if (h->lit.kind == V_DOUBLE) return h->lit.d == v;
    return false;
}

bool rw_same_dims(const Hop *a, const Hop *b)
{
    return a->dt == DT_MATRIX && b->dt == DT_MATRIX && a->rows >= 0 && a->cols >= 0 &&
           a->rows == b->rows && a->cols == b->cols;
}

/* Unknown sizes, or a variable of unknown non-zeros with the shape of an
 * outer-product-like product (hop_outer_like) of at least 2^16 cells:
 * whether it is sparse decides whether the
 * product is computed only at its non-zeros (a fused Outer operator) or
 * materialized dense, and only its value knows (a matrix made by rand
 * or an operation in an earlier block reaches later blocks without its
 * non-zeros). */
bool rw_needs_recompile(const HopDag *d)
{
    int n;
    bool r = false;
    Hop **order = hop_walk(d, &n, NULL);
    if (!order) return true;      /* out of memory: the safe answer */
    for (int i = 0; i < n && !r; i++) {
        const Hop *h = order[i];
        if (h->dt == DT_ANY && h->kind != H_FCALL && !h->sidefx) r = true;
        if (h->dt == DT_MATRIX && (h->rows < 0 || h->cols < 0)) r = true;
        if (h->kind == H_TREAD && h->cbytes == -1) r = true;   /* compressed at run time (docs/cla.md) */
        int64_t rank;
        if (hop_outer_like(h, &rank) && h->rows * h->cols >= ((int64_t)1 << 16))
            for (int k = 0; k < n && !r; k++)
                r = order[k]->kind == H_TREAD && order[k]->nnz < 0 && rw_same_dims(order[k], h);
    }
    free(order);
    return r;
}

bool rw_cla_maybe(const HopDag *d)
{
    for (int i = 0; d && i < d->n; i++)
        if (d->hops[i]->kind == H_TREAD && d->hops[i]->cbytes == -2) return true;
    return false;
}

int rw_const_pred(const HopDag *d)
{
    if (!d || d->nroots != 1 || !d->roots[0]) return -1;
    const Hop *h = d->roots[0];
    if (h->kind != H_LIT) return -1;
    if (h->lit.kind == V_BOOL) return h->lit.b;
    if (h->lit.kind == V_INT) return h->lit.i != 0;
    if (h->lit.kind == V_DOUBLE) return h->lit.d != 0;
    return -1;
}

/* ---- common subexpression elimination ---- */

static bool lit_eq(const Value *a, const Value *b)
{
    if (a->kind != b->kind) return false;
    switch (a->kind) {
    case V_INT: return a->i == b->i;
    case V_DOUBLE: return a->d == b->d || (a->d != a->d && b->d != b->d);
    case V_BOOL: return a->b == b->b;
    case V_STRING: return strcmp(a->s->s, b->s->s) == 0;
    default: return false;
    }
}

/* May h be merged with an equal hop? Not side effects, calls or
 * non-deterministic operators (rand/sample without a literal seed, time). */
static bool mergeable(const Hop *h)
{
    if (h->sidefx || h->kind == H_FCALL) return false;
    if (h->kind == H_BUILTIN) {
        if (h->bi == BI_TIME) return false;
        if (hop_draws_seed(h)) return false;
    }
    return true;
}

static bool same(const Hop *a, const Hop *b)
{
    if (a->kind != b->kind || a->nin != b->nin || a->op != b->op || a->dir != b->dir ||
        a->bi != b->bi || a->func != b->func || a->out_index != b->out_index ||
        a->ix.rmode != b->ix.rmode || a->ix.cmode != b->ix.cmode || a->ix.has_col != b->ix.has_col ||
        a->flag != b->flag || a->nvar != b->nvar || a->where != b->where || a->spoof != b->spoof)
        return false;   /* fused operators and stitched regions: the same one */
    if (a->kind == H_LIT) return lit_eq(&a->lit, &b->lit);
    if (a->kind == H_TREAD) return strcmp(a->name, b->name) == 0;
    for (int k = 0; k < a->nin; k++) if (a->in[k] != b->in[k]) return false;
    if (a->anames || b->anames) return false;
    return true;
}

static uint64_t hop_hash(const Hop *h)
{
    uint64_t x = (uint64_t)h->kind * 1000003u ^ (uint64_t)h->op * 10007u ^ (uint64_t)h->bi * 101u ^ (uint64_t)h->dir;
    if (h->kind == H_TREAD) for (const char *s = h->name; *s; s++) x = x * 31 + (unsigned char)*s;
    if (h->kind == H_LIT) {
        if (h->lit.kind == V_INT) x ^= (uint64_t)h->lit.i * 0x9E3779B97F4A7C15ULL;
        else if (h->lit.kind == V_DOUBLE) { uint64_t b; memcpy(&b, &h->lit.d, 8); x ^= b * 0x9E3779B97F4A7C15ULL; }
        else if (h->lit.kind == V_BOOL) x ^= (uint64_t)h->lit.b + 77;
        else if (h->lit.kind == V_STRING) for (const char *s = h->lit.s->s; *s; s++) x = x * 131 + (unsigned char)*s;
    }
    for (int k = 0; k < h->nin; k++) x = x * 1099511628211ULL ^ (uint64_t)(h->in[k] ? h->in[k]->id : 0);
    return x;
}

/* CSE: one bottom-up pass with a hash table of already seen hops. */
static void rw_cse(HopDag *d, RwStats *st)
{
    int n;
    Hop **order = hop_walk(d, &n, NULL);
    int cap = 64;
    while (cap < 2 * n + 2) cap *= 2;
    Hop **tab = calloc((size_t)cap, sizeof(Hop *));
    Hop **map = calloc((size_t)d->n + 2, sizeof(Hop *));
    if (!order || !tab || !map) {
        d->oom = true;
        free(order);
        free(tab);
        free(map);
        return;
    }
    for (int i = 0; i < n; i++) {
        Hop *h = order[i];
        for (int k = 0; k < h->nin; k++)
            if (h->in[k] && map[h->in[k]->id]) h->in[k] = map[h->in[k]->id];
        if (!mergeable(h)) continue;
        uint64_t hv = hop_hash(h);
        int j = (int)(hv & (uint64_t)(cap - 1));
        while (tab[j]) {
            if (same(tab[j], h)) break;
            j = (j + 1) & (cap - 1);
        }
        if (tab[j]) { map[h->id] = tab[j]; if (st) st->cse++; }
        else tab[j] = h;
    }
    for (int i = 0; i < d->nroots; i++) if (map[d->roots[i]->id]) d->roots[i] = map[d->roots[i]->id];
    for (int i = 0; i < d->nw; i++) if (map[d->whops[i]->id]) d->whops[i] = map[d->whops[i]->id];
    free(tab);
    free(map);
    free(order);
}

/* ---- constant folding (hop_fold) ---- */

static Hop *fold_rule(RwPass *p, Hop *h)
{
    Hop *r = hop_fold(p->d, h);
    if (r != h && p->st) p->st->folded++;
    return r;
}

void rw_static(HopDag *d, RwStats *st)
{
    rw_cse(d, st);
    rw_run(d, fold_rule, st);
    rw_run(d, rw_simplify, st);
    rw_run(d, fold_rule, st);
    rw_cse(d, st);
}

void rw_dynamic(HopDag *d, RwStats *st)
{
    /* chain order first: t(X) %*% diag(v) %*% X %*% d must become
     * t(X) %*% (diag(v) %*% (X %*% d)) before the rules see diag(v) %*% y
     * (seed 002, Example 2) */
    rw_mmchain(d, st);
    rw_run(d, rw_dynamic_rule, st);
    rw_run(d, rw_physical_rule, st);
    rw_cse(d, st);
}

void rw_operator_pairs(HopDag *d, RwStats *st)
{
    if (rw_tsmm_cbind(d, st)) rw_cse(d, st);
}
