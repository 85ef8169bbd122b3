/* mpskip.c: MPSkipEnum (seed 000, section 4.4). Per plan partition the
 * interesting points span a linearized search space of 2^n boolean plan
 * assignments, enumerated from all-false (fuse-all, a good first upper
 * bound) towards all-true. Cost-based pruning: when a lower bound of a
 * plan (static costs plus the minimal materialization costs of its true
 * points) exceeds the best cost, the whole subtree of plans that only add
 * true points is skipped; partial costing stops at the best cost.
 * Structural pruning: a cut set (a composite point: all consumers of one
 * intermediate, or a pair of them) whose materialization splits the remaining points into
 * two independent sub-problems is placed first; once its points are all
 * true the sub-problems are optimized separately (recursively) and
 * combined. The best assignment prunes the memo table: entries that fuse
 * across a materialized point are removed.
 * Budgets keep it bounded and deterministic: (sub-)problems with more than
 * MAX_POINTS points take the best of the fuse-all / fuse-no-redundancy /
 * materialize-all assignments plus one greedy pass over composite points;
 * at most MAX_EVAL plans are costed per partition. Then a greedy pass
 * (unfuse) takes the products inside fused Row and Outer operators out of
 * them where the cost model says the unfused plan is cheaper (a dgemm
 * instead of row-wise products against a wide side matrix, no expansion
 * of a sparse side input, no Outer operator over a dense driver): the
 * decisions exec.c used to take at run time on size grounds. Chosen
 * assignments and those choices are cached in the context by partition
 * signature (structure plus log2 classes of sizes), so recompiled DAGs
 * skip the enumeration. */
#include "cgint.h"
#include "../base/vec.h"
#include "../gpu/gpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Hard budgets (deterministic): a (sub-)problem with more points than
 * MAX_POINTS is not enumerated but solved by heuristics plus a greedy pass
 * (large_problem); at most MAX_EVAL plans are costed per partition, after
 * which the best plan found so far is kept. */
#define MAX_POINTS 16
#define MAX_EVAL 16384
#define MAX_UNFUSE 64          /* plans costed by the greedy pass */

typedef struct Enum {
    CostCtx *x;
    int npts;                  /* points of the partition */
    EnumStats *es;
    int64_t evals;
} Enum;

/* Costs one assignment against the budget. */
static double eval(Enum *en, const bool *cur, double bound)
{
    en->evals++;
    return cg_plan_cost(en->x, cur, bound);
}

/* The fuse-no-redundancy assignment of points idx[0..n) (over base): a
 * point is materialized when its target has several consumers. */
static void no_redundancy(const Enum *en, const int *idx, int n, bool *cur)
{
    const Memo *m = en->x->m;
    for (int i = 0; i < n; i++) cur[idx[i]] = m->nuse[en->x->p->pts[idx[i]].h] > 1;
}

/* A (sub-)problem too large to enumerate: the best of the fuse-all,
 * fuse-no-redundancy and materialize-all assignments, then one greedy pass
 * that flips the composite point of each target (all its consumers) while
 * that lowers the cost, within the evaluation budget. Writes the best
 * assignment into best; returns its cost. */
static double large_problem(Enum *en, const int *idx, int n, const bool *base, bool *best)
{
    int np = en->npts;
    bool *cur = br_malloc((size_t)np * sizeof(bool));
    double bestc = INFINITY;
    memcpy(best, base, (size_t)np * sizeof(bool));
    if (!cur) return cg_plan_cost(en->x, base, INFINITY);
    for (int cand = 0; cand < 3; cand++) {
        memcpy(cur, base, (size_t)np * sizeof(bool));
        if (cand == 1) no_redundancy(en, idx, n, cur);
        else for (int i = 0; i < n; i++) cur[idx[i]] = cand == 2;
        double c = eval(en, cur, bestc);
        en->es->enumerated++;
        if (c < bestc) { bestc = c; memcpy(best, cur, (size_t)np * sizeof(bool)); }
    }
    const Part *p = en->x->p;
    for (int t = 0; t < n && en->evals < MAX_EVAL && bestc < INFINITY; t++) {
        int h = p->pts[idx[t]].h;
        bool first = true;
        for (int u = 0; u < t && first; u++) first = p->pts[idx[u]].h != h;
        if (!first) continue;
        memcpy(cur, best, (size_t)np * sizeof(bool));
        bool to = !best[idx[t]];
        for (int u = t; u < n; u++) if (p->pts[idx[u]].h == h) cur[idx[u]] = to;
        en->es->enumerated++;
        double c = eval(en, cur, bestc);
        if (c < bestc) { bestc = c; memcpy(best, cur, (size_t)np * sizeof(bool)); }
    }
    free(cur);
    return bestc;
}

/* Hops reachable downward from `from` within the partition, not entering
 * hops marked in stop (by id); marks them in seen. */
static void reach_down(const Memo *m, const Part *p, int id, const char *stop, char *seen)
{
    if (seen[id] || (stop && stop[id])) return;
    seen[id] = 1;
    const Hop *h = m->hop[id];
    for (int i = 0; i < h->nin; i++)
        if (h->in[i] && p->in[h->in[i]->id]) reach_down(m, p, h->in[i]->id, stop, seen);
}

/* Tries the cut set of the points with target h1 or h2 (h2 < 0: h1 only)
 * among points idx[0..n): the other points must split into independent
 * sets a1 (above) and a2 (below): their consumers reachable only from the
 * roots without entering the cut's targets, or only from those targets,
 * and no hop the target of points on both sides (materializing it for a
 * consumer on one side writes it for the other side too, so the costs
 * would not be separable). Returns the cut's size and fills c, a1, a2
 * (*k1, *k2), or 0 when the cut is not valid. stop, above and below are
 * scratch marks over the memo's hop ids. */
static int try_cut(const Enum *en, const int *idx, int n, int h1, int h2, int *c, int *a1, int *k1, int *a2,
                   int *k2, char *stop, char *above, char *below)
{
    const Memo *m = en->x->m;
    const Part *p = en->x->p;
    int k = 0;
    *k1 = *k2 = 0;
    for (int u = 0; u < n; u++)
        if (p->pts[idx[u]].h == h1 || p->pts[idx[u]].h == h2) c[k++] = idx[u];
    memset(stop, 0, (size_t)m->nid);
    memset(above, 0, (size_t)m->nid);
    memset(below, 0, (size_t)m->nid);
    stop[h1] = 1;
    if (h2 >= 0) stop[h2] = 1;
    for (int r = 0; r < p->nroots; r++) reach_down(m, p, p->roots[r], stop, above);
    reach_down(m, p, h1, NULL, below);
    if (h2 >= 0) reach_down(m, p, h2, NULL, below);
    for (int u = 0; u < n; u++) {
        int q = idx[u];
        if (p->pts[q].h == h1 || p->pts[q].h == h2) continue;
        bool ab = above[p->pts[q].c], be = below[p->pts[q].c];
        if (ab == be) return 0;
        if (ab) a1[(*k1)++] = q;
        else a2[(*k2)++] = q;
    }
    for (int u = 0; u < *k1; u++)
        for (int v = 0; v < *k2; v++)
            if (p->pts[a1[u]].h == p->pts[a2[v]].h) return 0;
    return *k1 && *k2 ? k : 0;
}

/* The best cut set among points idx[0..n) (seed 000 section 4.4,
 * structural pruning). Candidates: the composite point of each target
 * (all its consumers in the partition; a single point of a target with
 * several consumers leaves the target reachable from above through the
 * others, so it never splits the rest), and every pair of these, which
 * separates where neither alone does (two paths that meet again). The
 * score counts the plans enumerated with that layout (seed equation 5's
 * intent: small cut sets that split evenly); the least wins, the first
 * found on ties. Fills cut, s1 (above) and s2 (below); returns the cut's
 * size, 0 if none pays off. tests/test_mpskip.c checks against
 * exhaustive enumeration that the plan costs stay separable. */
static int find_cut(const Enum *en, const int *idx, int n, int *cut, int *s1, int *n1, int *s2, int *n2)
{
    const Memo *m = en->x->m;
    const Part *p = en->x->p;
    if (n < 4) return 0;
    double bestscore = ldexp(1.0, n);
    int bestk = 0;
    char *stop = br_calloc((size_t)m->nid, 1), *above = br_calloc((size_t)m->nid, 1),
         *below = br_calloc((size_t)m->nid, 1);
    int *c = br_malloc((size_t)n * sizeof(int)), *a1 = br_malloc((size_t)n * sizeof(int)),
        *a2 = br_malloc((size_t)n * sizeof(int)), *tg = br_malloc((size_t)n * sizeof(int));
    if (!stop || !above || !below || !c || !a1 || !a2 || !tg) goto done;
    /* the distinct targets, in point order */
    int nt = 0;
    for (int t = 0; t < n; t++) {
        int h = p->pts[idx[t]].h;
        bool first = true;
        for (int u = 0; u < nt && first; u++) first = tg[u] != h;
        if (first) tg[nt++] = h;
    }
    for (int i = 0; i < nt; i++)
        for (int j = i; j < nt; j++) {
            int k1, k2;
            int k = try_cut(en, idx, n, tg[i], j == i ? -1 : tg[j], c, a1, &k1, a2, &k2, stop, above, below);
            if (!k) continue;
            double score = (ldexp(1.0, k) - 1) * ldexp(1.0, n - k) + ldexp(1.0, k1) + ldexp(1.0, k2);
            if (score < bestscore) {
                bestscore = score;
                bestk = k;
                memcpy(cut, c, (size_t)k * sizeof(int));
                memcpy(s1, a1, (size_t)k1 * sizeof(int));
                memcpy(s2, a2, (size_t)k2 * sizeof(int));
                *n1 = k1;
                *n2 = k2;
            }
        }
done:
    free(stop); free(above); free(below); free(c); free(a1); free(a2); free(tg);
    return bestk;
}

/* MPSkipEnum over points idx[0..n) with the other points fixed as in
 * base; returns the best cost and writes the best assignment into best
 * (a full vector over the partition's points). */
static double mpskip(Enum *en, const int *idx, int n, const bool *base, bool *best)
{
    int np = en->npts;
    memcpy(best, base, (size_t)np * sizeof(bool));
    if (n == 0) return eval(en, base, INFINITY);
    if (n > MAX_POINTS) return large_problem(en, idx, n, base, best);
    int *order = br_malloc((size_t)n * sizeof(int)), *cut = br_malloc((size_t)n * sizeof(int)),
        *s1 = br_malloc((size_t)n * sizeof(int)), *s2 = br_malloc((size_t)n * sizeof(int));
    bool *cur = br_malloc((size_t)np * sizeof(bool)), *tmp = br_malloc((size_t)np * sizeof(bool)),
         *tmp2 = br_malloc((size_t)np * sizeof(bool));
    double bestc = INFINITY;
    if (!order || !cut || !s1 || !s2 || !cur || !tmp || !tmp2) goto done;
    int n1 = 0, n2 = 0;
    int k = find_cut(en, idx, n, cut, s1, &n1, s2, &n2);
    /* layout: the cut set first, then the rest */
    int w = 0;
    if (k) {
        for (int i = 0; i < k; i++) order[w++] = cut[i];
        for (int i = 0; i < n1; i++) order[w++] = s1[i];
        for (int i = 0; i < n2; i++) order[w++] = s2[i];
    } else {
        for (int i = 0; i < n; i++) order[w++] = idx[i];
    }
    uint64_t total = (uint64_t)1 << n;
    uint64_t cutblock = k ? (((uint64_t)1 << k) - 1) << (n - k) : total;
    for (uint64_t i = 0; i < total; i++) {
        if (en->evals >= MAX_EVAL) {
            /* budget exhausted: keep the best so far, or the
             * fuse-no-redundancy plan if that is cheaper */
            memcpy(cur, base, (size_t)np * sizeof(bool));
            no_redundancy(en, idx, n, cur);
            double c = cg_plan_cost(en->x, cur, bestc);
            if (c < bestc) { bestc = c; memcpy(best, cur, (size_t)np * sizeof(bool)); }
            break;
        }
        en->es->enumerated++;
        memcpy(cur, base, (size_t)np * sizeof(bool));
        for (int b = 0; b < n; b++) cur[order[b]] = (i >> (n - 1 - b)) & 1;
        if (k && i == cutblock) {
            /* structural pruning: the cut set materialized, the sub-problems
             * are independent */
            double c1 = mpskip(en, s1, n1, cur, tmp);
            for (int b = 0; b < n1; b++) cur[s1[b]] = tmp[s1[b]];
            double c2 = mpskip(en, s2, n2, cur, tmp2);
            for (int b = 0; b < n2; b++) cur[s2[b]] = tmp2[s2[b]];
            (void)c1; (void)c2;
            double c = eval(en, cur, bestc);
            if (c < bestc) { bestc = c; memcpy(best, cur, (size_t)np * sizeof(bool)); }
            break;
        }
        /* cost-based pruning of the subtree of supersets */
        if (bestc < INFINITY && i > 0 && cg_lower_bound(en->x, cur) >= bestc) {
            uint64_t low = i & (~i + 1);      /* lowest set bit */
            i += low - 1;
            continue;
        }
        double c = eval(en, cur, bestc);
        if (c < bestc) { bestc = c; memcpy(best, cur, (size_t)np * sizeof(bool)); }
    }
done:
    free(order); free(cut); free(s1); free(s2); free(cur); free(tmp); free(tmp2);
    return bestc;
}

/* ---- products the cost model takes out of fused operators ---- */

/* Does partition p hold a product with a Row or Outer plan? */
static bool has_products(const Memo *m, const Part *p)
{
    for (int k = 0; k < p->nh; k++) {
        const Hop *h = m->hop[p->hops[k]];
        if (h->kind != H_MATMUL || (h->op != OP_MATMUL && h->op != OP_MATMULTL)) continue;
        if (memo_has_type(m, h, T_ROW, false) || memo_has_type(m, h, T_OUTER, false) ||
            memo_has_type(m, h, T_AMULET, false))
            return true;
    }
    return false;
}

/* Does partition p hold a Cell entry at a hop that reads a sparse
 * matrix (by its estimate)? Such a Cell operator may visit every cell
 * where the basic operators' sparse kernels visit the non-zeros: the
 * greedy pass weighs it (cost.c open_op). */
static bool has_sparse_cells(const Memo *m, const Part *p)
{
    for (int k = 0; k < p->nh; k++) {
        const Hop *h = m->hop[p->hops[k]];
        if (!memo_has_type(m, h, T_CELL, false)) continue;
        for (int i = 0; i < h->nin; i++) {
            const Hop *in = h->in[i];
            if (in && in->dt == DT_MATRIX && in->nnz >= 0 && in->rows > 0 && in->cols > 0 &&
                (double)in->nnz < MB_SPARSITY_TURN_POINT * (double)in->rows * (double)in->cols)
                return true;
        }
    }
    return false;
}

/* Does partition p hold AMULET entries? */
static bool has_amulet(const Memo *m, const Part *p)
{
    for (int k = 0; k < p->nh; k++)
        if (memo_has_type(m, m->hop[p->hops[k]], T_AMULET, false)) return true;
    return false;
}

/* Bans the Outer template at the outer product h and at every consumer
 * above it (within the partition) that has Outer entries: all Outer
 * plans grow from an outer product, so none is left half built. */
static void ban_outer(const CostCtx *x, int h, uint8_t *ban)
{
    const Memo *m = x->m;
    int *stack = br_malloc((size_t)m->nid * sizeof(int)), n = 0;
    if (!stack) return;
    stack[n++] = h;
    ban[h] |= (uint8_t)(1u << T_OUTER);
    while (n > 0) {
        int id = stack[--n];
        for (int u = 0; u < m->npar[id]; u++) {
            const Hop *c = m->par[id][u];
            if (!x->p->in[c->id] || ((ban[c->id] >> T_OUTER) & 1) || !memo_has_type(m, c, T_OUTER, false)) continue;
            ban[c->id] |= (uint8_t)(1u << T_OUTER);
            stack[n++] = c->id;
        }
    }
    free(stack);
}

/* Bans the elementwise templates (Cell, Row, MAgg) at h and at every hop
 * below it in the partition that has such entries: the region runs as
 * basic operators (a Cell region over sparse inputs whose sub-plans
 * would visit every cell too: sum(abs(Z - X) * 2)). */
static void ban_cells(const CostCtx *x, int h, uint8_t *ban)
{
    const Memo *m = x->m;
    const uint8_t ew = (uint8_t)((1u << T_CELL) | (1u << T_ROW) | (1u << T_MAGG));
    int *stack = br_malloc((size_t)m->nid * sizeof(int)), n = 0;
    if (!stack) return;
    stack[n++] = h;
    ban[h] |= ew;
    while (n > 0) {
        const Hop *c = m->hop[stack[--n]];
        for (int i = 0; i < c->nin; i++) {
            const Hop *in = c->in[i];
            if (!in || !x->p->in[in->id] || (ban[in->id] & ew) == ew) continue;
            if (!memo_has_type(m, in, T_CELL, false) && !memo_has_type(m, in, T_ROW, false) &&
                !memo_has_type(m, in, T_MAGG, false))
                continue;
            ban[in->id] |= ew;
            stack[n++] = in->id;
        }
    }
    free(stack);
}

/* Greedy pass over the plan with assignment best: for each product
 * inside a fused Row operator (or each outer product of an Outer
 * operator, with the Outer plans above it), bans that template there
 * (ban: by hop id, bits 1 << TplType) when the plan then costs at least
 * 0.1% less, until no ban pays off or MAX_UNFUSE plans were costed.
 * The unfused alternative is costed like any plan (dgemm's rate for
 * dense products, materialized intermediates written and read), so this
 * is where Row plans with wide side matrices at small sizes, Row plans
 * expanding a sparse side input and Outer plans over small dense drivers
 * lose, and where an AMULET loop loses to the Row plan or Cell + dgemm
 * (banning it, then also Row at its product). only_amulet: the context
 * keeps fused operators (CgOptions.keep_fused), so only AMULET loops are
 * weighed. Returns the cost of the final plan. */
static double unfuse(CostCtx *x, const bool *best, uint8_t *ban, bool only_amulet)
{
    int n = x->m->nid;
    x->ban = ban;
    double c0 = cg_plan_cost(x, best, INFINITY);
    int *cand = br_malloc((size_t)n * sizeof(int));
    uint8_t *save = br_malloc((size_t)n);
    char *tried = br_calloc((size_t)n * T__N, 1);
    int evals = 0;
    while (cand && save && tried && c0 < INFINITY && evals < MAX_UNFUSE) {
        int nc = x->ncand;
        memcpy(cand, x->cand, (size_t)nc * sizeof(int));
        bool accepted = false;
        for (int i = 0; i < nc && evals < MAX_UNFUSE && !accepted; i++) {
            if (tried[cand[i]]) continue;
            tried[cand[i]] = 1;
            int h = cand[i] / T__N, t = cand[i] % T__N;
            if (only_amulet && t != T_AMULET) continue;
            memcpy(save, ban, (size_t)n);
            if (t == T_OUTER) ban_outer(x, h, ban);
            ban[h] |= (uint8_t)(1u << t);
            evals++;
            double c1 = cg_plan_cost(x, best, c0);
            /* a Cell operator over a sparse input (cost.c open_op) may
             * lose to the basic operators where the Row and MAgg plans
             * at its root visit every cell too: ban them with it */
            if (t == T_CELL && !(c1 < c0 * (1 - 1e-3)) && evals < MAX_UNFUSE) {
                ban_cells(x, h, ban);
                evals++;
                c1 = cg_plan_cost(x, best, c0);
            }
            /* an AMULET loop's next plan may be Row: try Cell + dgemm too */
            if (t == T_AMULET && !(c1 < c0 * (1 - 1e-3)) && memo_has_type(x->m, x->m->hop[h], T_ROW, false) &&
                evals < MAX_UNFUSE) {
                ban[h] |= (uint8_t)(1u << T_ROW);
                evals++;
                c1 = cg_plan_cost(x, best, c0);
            }
            if (c1 < c0 * (1 - 1e-3)) {
                accepted = true;
                c0 = cg_plan_cost(x, best, INFINITY);   /* refreshes the candidates */
            } else {
                memcpy(ban, save, (size_t)n);
            }
        }
        if (!accepted) break;
    }
    free(cand); free(save); free(tried);
    x->ban = NULL;
    return c0;
}

/* The enumeration varies the points only; the template of each fused
 * operator is the ranking's (prefer.c), which puts an AMULET loop first
 * and leaves it to the greedy pass to ban it where it loses. But the best
 * assignment under that ranking may avoid an expensive AMULET loop by
 * materializing its operands (k-means: D and P written, four basic
 * operators), and then holds no AMULET loop for the greedy pass to ban,
 * so the fused Row plan that only the ban would reveal (k-means: one
 * multi-output pass over X, 3-4x faster) is never costed. A second
 * enumeration runs with AMULET banned at every hop of partition p (then
 * the greedy pass from there); the cheaper of the two plans (best, ban,
 * cost c) is kept. Returns its cost. Not when AMULET is forced
 * (BRAID_AMULET_FUSE=force: every candidate placed). */
static double without_amulet(CostCtx *x, const Part *p, const int *idx, const bool *base, bool *best, uint8_t *ban,
                             double c, bool only_amulet)
{
    int n = x->m->nid;
    bool *best2 = br_calloc((size_t)BR_MAX(p->npts, 1), sizeof(bool));
    uint8_t *ban2 = br_malloc((size_t)n);
    if (!best2 || !ban2) goto done;
    memcpy(ban2, ban, (size_t)n);
    for (int k = 0; k < p->nh; k++) ban2[p->hops[k]] |= (uint8_t)(1u << T_AMULET);
    Enum en = {.x = x, .npts = p->npts, .es = x->es};
    x->ban = ban2;
    double c2 = p->npts ? mpskip(&en, idx, p->npts, base, best2) : cg_plan_cost(x, best2, INFINITY);
    x->ban = NULL;
    if (c2 < INFINITY) c2 = unfuse(x, best2, ban2, only_amulet);   /* Row at a product may lose too */
    if (c2 < c * (1 - 1e-3)) {
        memcpy(best, best2, (size_t)p->npts * sizeof(bool));
        memcpy(ban, ban2, (size_t)n);
        c = c2;
    }
done:
    free(best2);
    free(ban2);
    return c;
}

/* ---- the selection cache ---- */

/* One cached selection: the partition signature and its best assignment. */
typedef struct SelEntry {
    uint64_t hash;
    int64_t *sig;
    int nsig;
    bool *best;            /* by point */
    int npts;
    uint8_t *ban;          /* by partition hop (p->hops order): banned
                              templates (unfuse) */
    int nh;
} SelEntry;

struct SelCache {
    SelEntry *v;
    int n, cap;
};

#define SELCACHE_MAX 4096      /* entries kept per context */

void selcache_free(SelCache *s)
{
    if (!s) return;
    for (int i = 0; i < s->n; i++) { free(s->v[i].sig); free(s->v[i].best); free(s->v[i].ban); }
    free(s->v);
    free(s);
}

/* log2 class of a size (-1 unknown, 0 for 0). */
static int64_t bucket(double v)
{
    if (v < 0) return -1;
    if (v < 1) return 0;
    return 1 + (int64_t)floor(log2(v));
}

typedef struct Sig { int64_t *v; int n, cap; bool fail; } Sig;

static void sig_add(Sig *s, int64_t x)
{
    if (s->fail) return;
    if (!br_grow((void **)&s->v, &s->cap, s->n + 1, sizeof *s->v)) { s->fail = true; return; }
    s->v[s->n++] = x;
}

static void sig_hop_sizes(Sig *s, const Hop *h)
{
    sig_add(s, h->kind);
    sig_add(s, h->dt);
    sig_add(s, bucket((double)h->rows));
    sig_add(s, bucket((double)h->cols));
    sig_add(s, bucket((double)h->nnz));
    sig_add(s, bucket(h->mem));
    /* compressed (known, or a read's estimate): cost.c prices it apart */
    sig_add(s, bucket(h->cbytes > 0 ? h->cbytes : h->cbytes == -1 && h->cest > 0 ? h->cest : 0));
}

/* The GPU mode and, with the device on, the device profile (their
 * bits): cost.c prices the stitch points' device side by them
 * (dev_vec_time, host_or_dev), so a selection made under one mode or
 * profile is not the one under another. */
static void sig_device(Sig *s)
{
    GpuMode md = gpu_mode();
    sig_add(s, md);
    if (md == GPU_OFF) return;
    GpuProfile g = gpu_profile();
    const double v[6] = {g.launch_s, g.bw, g.xfer_bw, g.sync_s, g.copy_bw, g.down_bw};
    for (int k = 0; k < 6; k++) {
        int64_t b;
        memcpy(&b, &v[k], sizeof b);
        sig_add(s, b);
    }
}

/* Canonical signature of partition p: its hops in topological order with
 * operators, coarse sizes (log2 classes of rows, cols, nnz, memory),
 * consumer counts, inputs as local indexes, memo entries, roots, inputs
 * and interesting points, and the device the cost model prices
 * (sig_device). Hop ids do not enter, so the copies of a DAG made for
 * recompilation have equal signatures. Returns false on allocation
 * failure; the caller frees s->v. */
static bool part_sig(const Memo *m, const Part *p, Sig *s)
{
    int *loc = br_malloc((size_t)m->nid * sizeof(int));
    if (!loc) return false;
    for (int i = 0; i < m->nid; i++) loc[i] = -1;
    for (int k = 0; k < p->nh; k++) loc[p->hops[k]] = k;
    for (int k = 0; k < p->ninputs; k++) loc[p->inputs[k]] = -2 - k;
    sig_add(s, p->nh); sig_add(s, p->nroots); sig_add(s, p->ninputs); sig_add(s, p->npts);
    sig_device(s);
    for (int k = 0; k < p->nh; k++) {
        int id = p->hops[k];
        const Hop *h = m->hop[id];
        sig_hop_sizes(s, h);
        sig_add(s, h->op);
        sig_add(s, h->dir);
        sig_add(s, m->nuse[id]);
        sig_add(s, m->out[id]);
        sig_add(s, h->nin);
        for (int i = 0; i < h->nin; i++) sig_add(s, h->in[i] ? loc[h->in[i]->id] : -1);
        const MGroup *g = m->g[id];
        sig_add(s, g ? g->n : 0);
        for (int e = 0; g && e < g->n; e++) {
            sig_add(s, g->e[e].type);
            sig_add(s, g->e[e].closed);
            sig_add(s, g->e[e].nin);
            for (int i = 0; i < g->e[e].nin; i++) sig_add(s, g->e[e].ref[i] >= 0 ? loc[g->e[e].ref[i]] : -1);
        }
    }
    for (int k = 0; k < p->nroots; k++) sig_add(s, loc[p->roots[k]]);
    for (int k = 0; k < p->ninputs; k++) {
        const Hop *h = m->hop[p->inputs[k]];
        sig_hop_sizes(s, h);
        /* Outer plans read V of an input t(V) */
        const Hop *v = h->kind == H_REORG && h->op == OP_TRANS && h->nin ? h->in[0] : NULL;
        sig_add(s, v != NULL);
        if (v) sig_hop_sizes(s, v);
    }
    for (int t = 0; t < p->npts; t++) {
        sig_add(s, loc[p->pts[t].c]);
        sig_add(s, loc[p->pts[t].h]);
        sig_add(s, p->pts[t].stitch);
        if (!p->pts[t].stitch) continue;
        /* a stitch point's expression: its operations, X, and its hops'
         * readers (what getPlanCost prices) */
        Hop *X = NULL, *hs[SPOOF_PREMAX];
        SpPre e = {0};
        int nh = 0;
        cg_pre_build(m->hop[p->pts[t].h], &X, &e, hs, &nh);
        sig_add(s, X ? loc[X->id] : -1);
        for (int q = 0; q < nh; q++) {
            sig_add(s, hs[q]->kind);
            sig_add(s, hs[q]->op);
            sig_add(s, m->nuse[hs[q]->id]);
            sig_add(s, m->out[hs[q]->id]);
        }
    }
    free(loc);
    return !s->fail;
}

/* Looks up a cached assignment for signature s; copies it into best and
 * the bans of the partition's hops (p->hops order) into ban (by hop id). */
static bool cache_get(CgContext *c, const Sig *s, uint64_t hash, bool *best, int npts, const Part *p, uint8_t *ban)
{
    bool hit = false;
    if (br_perturb_miss(PT_SEL_MISS, hash)) return false;   /* schedule perturbation */
    pthread_mutex_lock(&c->lock);
    for (int i = 0; c->selc && i < c->selc->n && !hit; i++) {
        const SelEntry *e = &c->selc->v[i];
        if (e->hash != hash || e->nsig != s->n || e->npts != npts || e->nh != p->nh) continue;
        if (memcmp(e->sig, s->v, (size_t)s->n * sizeof(int64_t))) continue;
        memcpy(best, e->best, (size_t)npts * sizeof(bool));
        for (int k = 0; k < p->nh; k++) ban[p->hops[k]] = e->ban[k];
        hit = true;
    }
    pthread_mutex_unlock(&c->lock);
    return hit;
}

/* Stores the assignment best and the bans of p's hops under signature s
 * (takes s->v). */
static void cache_put(CgContext *c, Sig *s, uint64_t hash, const bool *best, int npts, const Part *p,
                      const uint8_t *ban)
{
    pthread_mutex_lock(&c->lock);
    if (!c->selc) c->selc = br_calloc(1, sizeof *c->selc);
    SelCache *sc = c->selc;
    if (sc && sc->n < SELCACHE_MAX) {
        br_grow((void **)&sc->v, &sc->cap, sc->n + 1, sizeof *sc->v);   /* else not cached */
        bool *b = br_malloc((size_t)BR_MAX(npts, 1) * sizeof(bool));
        uint8_t *bn = br_malloc((size_t)BR_MAX(p->nh, 1));
        if (sc->n < sc->cap && b && bn) {
            memcpy(b, best, (size_t)npts * sizeof(bool));
            for (int k = 0; k < p->nh; k++) bn[k] = ban[p->hops[k]];
            sc->v[sc->n++] = (SelEntry){hash, s->v, s->n, b, npts, bn, p->nh};
            s->v = NULL;
        } else {
            free(b);
            free(bn);
        }
    }
    pthread_mutex_unlock(&c->lock);
}

typedef struct CutArg { const Part *p; const bool *cut; const uint8_t *ban; } CutArg;

/* Drops entries that fuse across a materialized point or whose template
 * the greedy pass banned at their hop. */
static bool drop_cut(const Memo *m, const Hop *h, const MEntry *e, void *arg)
{
    const CutArg *a = arg;
    if (a->ban && (((a->ban[h->id] >> e->type) & 1) || cg_dead_ref(m, a->ban, e))) return true;
    for (int t = 0; t < a->p->npts; t++) {
        if (!a->cut[t] || a->p->pts[t].c != h->id) continue;
        for (int i = 0; i < e->nin; i++) if (e->ref[i] == a->p->pts[t].h) return true;
    }
    return false;
}

/* Is e an Outer entry at h cut off from its outer product (h is none
 * and no fused input keeps an open Outer entry)? cost.c's outer_live
 * does not cost such entries, so they go with the cut ones. */
static bool dead_outer(const Memo *m, const Hop *h, const MEntry *e, void *arg)
{
    (void)arg;
    if (e->type != T_OUTER || tpl_outer_mm(h)) return false;
    for (int i = 0; i < e->nin && i < h->nin; i++) {
        const MGroup *g = e->ref[i] >= 0 && h->in[i] ? m->g[h->in[i]->id] : NULL;
        for (int k = 0; g && k < g->n; k++)
            if (g->e[k].type == T_OUTER && g->e[k].closed != CS_CLOSED_VALID && g->e[k].closed != CS_CLOSED_INVALID)
                return false;
    }
    return true;
}

/* After drop_cut: drops the dead Outer entries (dead_outer) of p's hops,
 * inputs before consumers (done: by hop id). */
static void drop_dead_outer(Memo *m, const Part *p, const Hop *h, char *done)
{
    if (!p->in[h->id] || done[h->id]) return;
    done[h->id] = 1;
    for (int i = 0; i < h->nin; i++) if (h->in[i]) drop_dead_outer(m, p, h->in[i], done);
    memo_filter(m, h, dead_outer, NULL);
}

/* Applies p's chosen assignment best and bans to the memo: drops the cut
 * entries (drop_cut), then the Outer entries left without their outer
 * product (drop_dead_outer over all of p's hops). */
void cg_apply_cut(Memo *m, const Part *p, const bool *best, const uint8_t *ban)
{
    CutArg a = {p, best, ban};
    for (int k = 0; k < p->nh; k++) memo_filter(m, m->hop[p->hops[k]], drop_cut, &a);
    /* the stitch points' choices, for select.c cg_stitch */
    for (int t = 0; t < p->npts; t++) {
        if (!p->pts[t].stitch) continue;
        Point *sp = br_realloc(m->spt, (size_t)(m->nspt + 1) * sizeof *sp);
        bool *sd = sp ? br_realloc(m->sdo, (size_t)(m->nspt + 1) * sizeof *sd) : NULL;
        if (sp) m->spt = sp;
        if (!sd) break;
        m->sdo = sd;
        m->spt[m->nspt] = p->pts[t];
        m->sdo[m->nspt++] = !best[t];

    }
    char *done = br_calloc((size_t)m->nid, 1);
    if (!done) return;
    for (int k = 0; k < p->nh; k++) drop_dead_outer(m, p, m->hop[p->hops[k]], done);
    free(done);
}

/* Cost-based candidate selection: per partition, the best assignment of
 * its interesting points by MPSkipEnum, then the greedy pass over its
 * products (unless the context keeps fused operators on every shape,
 * CgOptions.keep_fused); prunes m accordingly (the fuse-all selection
 * then picks the plans). */
void cg_select_cost(CgContext *cx, Memo *m, const CgMachine *mc, EnumStats *es)
{
    int np = 0;
    Part *ps = cg_partitions(m, &np);
    if (!ps) return;
    es->partitions += np;
    bool greedy_ok = !(cx && cx->opt.keep_fused);
    for (int q = 0; q < np; q++) {
        Part *p = &ps[q];
        if (!p->in) continue;
        bool greedy = (has_products(m, p) || has_sparse_cells(m, p)) && (greedy_ok || has_amulet(m, p));
        if (!p->npts && !greedy) continue;
        es->points += p->npts;
        CostCtx x;
        if (cost_init(&x, m, mc, p, es)) continue;
        Enum en = {.x = &x, .npts = p->npts, .es = es};
        int *idx = br_malloc((size_t)BR_MAX(p->npts, 1) * sizeof(int));
        bool *base = br_calloc((size_t)BR_MAX(p->npts, 1), sizeof(bool)),
             *best = br_calloc((size_t)BR_MAX(p->npts, 1), sizeof(bool));
        uint8_t *ban = br_calloc((size_t)m->nid, 1);
        Sig sig = {0};
        uint64_t hash = 0;
        bool keyed = cx && idx && base && best && ban && part_sig(m, p, &sig);
        if (keyed) hash = cg_hash_bytes(sig.v, (size_t)sig.n * sizeof(int64_t), 0x5e1ec7);
        if (keyed && cache_get(cx, &sig, hash, best, p->npts, p, ban)) {
            es->cached++;
            cg_apply_cut(m, p, best, ban);
        } else if (idx && base && best && ban) {
            for (int t = 0; t < p->npts; t++) idx[t] = t;
            double c = p->npts ? mpskip(&en, idx, p->npts, base, best) : 0;
            if (c < INFINITY && greedy) c = unfuse(&x, best, ban, !greedy_ok);
            if (greedy && has_amulet(m, p) && strcmp(am_tpl_mode(), "force"))
                c = without_amulet(&x, p, idx, base, best, ban, c, !greedy_ok);
            if (c < INFINITY && keyed) cache_put(cx, &sig, hash, best, p->npts, p, ban);
            if (c < INFINITY) cg_apply_cut(m, p, best, ban);
        }
        free(sig.v);
        free(idx); free(base); free(best); free(ban);
        cost_free(&x);
    }
    parts_free(ps, np);
}

double cg_mpskip_assign(CostCtx *x, bool *best, EnumStats *es)
{
    int n = x->p->npts;
    Enum en = {.x = x, .npts = n, .es = es};
    int *idx = br_malloc((size_t)BR_MAX(n, 1) * sizeof(int));
    bool *base = br_calloc((size_t)BR_MAX(n, 1), sizeof(bool));
    double c = INFINITY;
    if (idx && base) {
        for (int t = 0; t < n; t++) idx[t] = t;
        c = n ? mpskip(&en, idx, n, base, best) : 0;
    }
    free(idx);
    free(base);
    return c;
}

/* ---- the optimality oracle (tests) ---- */

static double exhaustive(CostCtx *x, int n, bool *cur)
{
    double least = INFINITY;
    for (uint64_t i = 0; i < (uint64_t)1 << n; i++) {
        for (int b = 0; b < n; b++) cur[b] = (i >> b) & 1;
        double c = cg_plan_cost(x, cur, INFINITY);
        if (c < least) least = c;
    }
    return least;
}

int cg_enum_oracle(HopDag *d, int max_pts, CgOracleFn f, void *arg)
{
    Memo *m = memo_new(d);
    if (!m) return -1;
    m->amulet = strcmp(am_tpl_mode(), "0") != 0;
    cg_explore(m);
    CgMachine mc = {0};
    cg_machine(NULL, NULL, &mc);
    int np = 0, checked = 0;
    Part *ps = cg_partitions(m, &np);
    for (int q = 0; ps && q < np && checked >= 0; q++) {
        Part *p = &ps[q];
        if (!p->in || p->npts < 1 || p->npts > max_pts) continue;
        EnumStats es = {0};
        CostCtx x;
        if (cost_init(&x, m, &mc, p, &es)) { checked = -1; break; }
        Enum en = {.x = &x, .npts = p->npts, .es = &es};
        int *idx = br_malloc((size_t)p->npts * sizeof(int));
        bool *base = br_calloc((size_t)p->npts, sizeof(bool)), *best = br_calloc((size_t)p->npts, sizeof(bool));
        if (idx && base && best) {
            for (int t = 0; t < p->npts; t++) idx[t] = t;
            mpskip(&en, idx, p->npts, base, best);
            double mine = cg_plan_cost(&x, best, INFINITY);
            f(arg, p->npts, mine, exhaustive(&x, p->npts, base), has_amulet(m, p));
            checked++;
        } else {
            checked = -1;
        }
        free(idx); free(base); free(best);
        cost_free(&x);
    }
    if (!ps) checked = -1;
    parts_free(ps, np);
    memo_free(m);
    return checked;
}
