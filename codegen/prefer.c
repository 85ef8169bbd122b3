/* prefer.c: which of two fusion plans of a HOP is the better one, the
 * rules that plan selection (select.c) and the cost model's partition
 * walk (cost.c) share: more fused inputs first, then the consumer's
 * template, valid roots, the template's rank and closed plans; a Row plan
 * that takes in a narrow product beats a Cell plan over the materialized
 * product (seed 000, section 4.1). Kept apart so that select.c, mpskip.c
 * and cost.c depend on each other in one direction only. */
#include "cgint.h"

bool sel_root_valid(const MEntry *e)
{
    return e->closed == CS_OPEN_VALID || e->closed == CS_CLOSED_VALID;
}

static int type_rank(TplType t)
{
    /* an AMULET plan first: the greedy pass of mpskip.c bans it where
     * the Row plan or Cell + BLAS cost less */
    switch (t) {
    case T_AMULET: return 4;
    case T_OUTER: return 3;
    case T_CELL: return 2;
    case T_ROW: return 1;
    default: return 0;
    }
}

/* Is a better than b for a consumer of template `consumer` (T__N: a root)? */
bool sel_better(const MEntry *a, const MEntry *b, int consumer)
{
    int ra = memo_nrefs(a), rb = memo_nrefs(b);
    if (ra != rb) return ra > rb;
    if (consumer != T__N && (a->type == (TplType)consumer) != (b->type == (TplType)consumer))
        return a->type == (TplType)consumer;
    bool va = sel_root_valid(a), vb = sel_root_valid(b);
    if (va != vb) return va;
    if (type_rank(a->type) != type_rank(b->type)) return type_rank(a->type) > type_rank(b->type);
    bool ca = a->closed == CS_CLOSED_VALID, cb = b->closed == CS_CLOSED_VALID;
    return ca && !cb;
}

/* Does Row entry e at h reach, through open Row entries of its referenced
 * inputs (those ok() accepts, all when ok is NULL), a product X %*% V
 * with a narrow V (at most 16 columns: the blocked kernels)? *budget
 * bounds the walk. */
static bool row_mm_reach(const Memo *m, const Hop *h, const MEntry *e, SelEntryOk ok, const void *arg, int *budget)
{
    if (e->type != T_ROW || --*budget < 0) return false;
    if (h->kind == H_MATMUL && h->op == OP_MATMUL && tpl_row_mm(h) && h->cols <= 16) return true;
    for (int i = 0; i < e->nin && i < h->nin; i++) {
        if (e->ref[i] < 0 || !h->in[i]) continue;
        const Hop *in = h->in[i];
        MGroup *g = in->id < m->nid ? m->g[in->id] : NULL;
        for (int k = 0; g && k < g->n; k++) {
            const MEntry *ie = &g->e[k];
            if (ie->type != T_ROW || ie->closed == CS_CLOSED_VALID || ie->closed == CS_CLOSED_INVALID) continue;
            if (ok && !ok(arg, in, ie)) continue;
            if (row_mm_reach(m, in, ie, ok, arg, budget)) return true;
        }
    }
    return false;
}

bool sel_better_at(const Memo *m, const Hop *h, const MEntry *a, const MEntry *b, int consumer, SelEntryOk ok,
                   const void *arg)
{
    /* equal references, neither preferred by the consumer: a Row plan
     * that takes in a narrow product X %*% V beats a Cell plan over the
     * materialized product (which writes and reads the m x k result) */
    if (memo_nrefs(a) == memo_nrefs(b) && (a->type == T_ROW) != (b->type == T_ROW) &&
        (a->type == T_CELL || b->type == T_CELL) && sel_root_valid(a) == sel_root_valid(b) &&
        (consumer == T__N || (a->type == (TplType)consumer) == (b->type == (TplType)consumer))) {
        const MEntry *r = a->type == T_ROW ? a : b;
        int budget = 256;
        if (row_mm_reach(m, h, r, ok, arg, &budget)) return r == a;
    }
    return sel_better(a, b, consumer);
}

MEntry *sel_best(const Memo *m, const Hop *h, int consumer)
{
    MGroup *g = h && h->id < m->nid ? m->g[h->id] : NULL;
    if (!g) return NULL;
    MEntry *best = NULL;
    for (int i = 0; i < g->n; i++) {
        MEntry *e = &g->e[i];
        if (consumer == T__N) {
            if (!sel_root_valid(e)) continue;
        } else {
            if (e->closed == CS_CLOSED_VALID || e->closed == CS_CLOSED_INVALID) continue;
            if (!memo_compatible((TplType)consumer, e->type)) continue;
        }
        if (!best || sel_better_at(m, h, e, best, consumer, NULL, NULL)) best = e;
    }
    return best;
}

