/* cgdist.c: fused operators over row partitions (seed 000 section 5.5;
 * docs/dist.md). A fused operator iterates over the rows of its main
 * input, so it runs on every rank's rows with the inputs that share those
 * rows partitioned alike and the others (row vectors, the right side of a
 * vector-matrix product, Outer's V) broadcast. Here: which inputs are
 * partitioned and how the partial results combine (cg_dist_describe),
 * the CPlan as bytes for the workers (cg_plan_pack) and a worker's run of
 * shipped bytes (cg_exec_packed: the in-memory plan cache by hash and
 * signature, else the same generated source compiled or loaded from the
 * disk cache). */
#include "cgint.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../dist/dist.h"

/* ---- the CPlan as bytes ---- */

/* Every rank runs the same braid binary (mpirun starts one program), so
 * the structs travel as they are; the sizes guard against a mismatch. */
typedef struct PackHead {
    uint32_t magic, plan_size, node_size, in_size;
    int64_t nn, nin, siglen;
} PackHead;

#define PACK_MAGIC 0x42435031u   /* "BCP1" */

/* The signature's bytes per node (cplan.c writes an operator, its
 * operands and its shape per node; about this much in the algorithms'
 * plans). */
#define SIG_PER_NODE 24

double cg_plan_bytes_est(int ops, int nin)
{
    int nn = ops + nin;   /* an input is a node too */
    return (double)(sizeof(PackHead) + sizeof(CPlan) + (size_t)nn * (sizeof(CNode) + SIG_PER_NODE) +
                    (size_t)nin * sizeof(CInput));
}

/* ---- the plan bytes a job sends, as the cost model prices them ---- */

/* A fused operator's region as a key: a hash of its structure (every
 * fused hop's kind, operator and shape with its operands in order; an
 * operand read from outside by its shape and its order of first
 * appearance, a literal by its value, as the plan has it), so that the
 * cost model (a candidate, fused(arg, h, root, i) as its cut has it) and
 * the build of the chosen operator (the memo's selection) reach the same
 * key, as does the same expression placed elsewhere or recompiled (its
 * plan is the same). 0: none (too large to walk). */
typedef struct KeyWalk {
    KeyFusedFn fused;
    const void *arg;
    const Hop *seen[64];   /* operands read from outside, in order */
    int nseen, steps;
} KeyWalk;

static uint64_t kmix(uint64_t k, uint64_t v)
{
    k = (k ^ v) * 1099511628211ull;
    k ^= k >> 29;
    return k;
}

/* h's hash, h built under an entry for consumer (T__N: the root) */
static uint64_t key_walk(KeyWalk *w, const Hop *h, int consumer)
{
    if (++w->steps > 4096) return 0;
    uint64_t k = 1469598103934665603ull;
    k = kmix(k, (uint64_t)h->kind), k = kmix(k, (uint64_t)h->op), k = kmix(k, (uint64_t)h->dir);
    k = kmix(k, (uint64_t)h->bi), k = kmix(k, (uint64_t)h->rows), k = kmix(k, (uint64_t)h->cols);
    k = kmix(k, (uint64_t)h->nin);
    for (int i = 0; i < h->nin; i++) {
        const Hop *in = h->in[i];
        if (!in) { k = kmix(k, 0x9e3779b97f4a7c15ull); continue; }
        int t = w->fused(w->arg, h, consumer, i);
        if (t >= 0) { k = kmix(k, key_walk(w, in, t)); continue; }
        if (in->kind == H_LIT && val_is_numeric(&in->lit)) {
            double d = val_as_double(&in->lit);
            uint64_t bits;
            memcpy(&bits, &d, sizeof bits);
            k = kmix(kmix(k, 0x6c69746cull), bits);
            continue;
        }
        int o = 0;
        while (o < w->nseen && w->seen[o] != in) o++;
        if (o == w->nseen && w->nseen < 64) w->seen[w->nseen++] = in;
        k = kmix(kmix(k, (uint64_t)o), (uint64_t)in->rows);
        k = kmix(kmix(k, (uint64_t)in->cols), (uint64_t)in->dt);
    }
    return k;
}

uint64_t cg_region_key(const Hop *root, KeyFusedFn fused, const void *arg)
{
    KeyWalk w = {.fused = fused, .arg = arg};
    uint64_t k = key_walk(&w, root, T__N);
    return w.steps > 4096 ? 0 : k;
}

/* A region as cplan_build walks it under the entries of best (the
 * selection's, or a candidate's as the cost model has it): h's entry for
 * consumer, and input i fused under the entry's type (a MAgg or merged
 * Row operator's roots are Cell or Row entries, their inputs fused under
 * those types, not the operator's). */
typedef struct BestArg { CgBestFn best; const void *arg; } BestArg;

static int best_fused(const void *arg, const Hop *h, int consumer, int i)
{
    const BestArg *b = arg;
    MEntry *e = b->best(b->arg, h, consumer);
    bool in = e && i < e->nin && e->ref[i] >= 0 && h->in[i] && b->best(b->arg, h->in[i], e->type);
    return in ? (int)e->type : -1;
}

static MEntry *sel_best_of(const void *m, const Hop *h, int consumer) { return sel_best(m, h, consumer); }

/* The operations and inputs other than literals of the union of the
 * regions of roots[0..nr) (a MAgg operator's plan: its roots share
 * what their regions share), for the estimate of its plan's size. */
typedef struct SizeWalk {
    const BestArg *b;
    const Hop *op[512], *in[512];
    int nop, nin;
} SizeWalk;

static bool seen_add(const Hop **v, int *n, const Hop *h)
{
    for (int k = 0; k < *n; k++) if (v[k] == h) return false;
    if (*n < 512) v[(*n)++] = h;
    return true;
}

static void size_walk(SizeWalk *w, const Hop *h, int consumer)
{
    if (!seen_add(w->op, &w->nop, h)) return;
    for (int i = 0; i < h->nin; i++) {
        const Hop *in = h->in[i];
        if (!in) continue;
        int t = best_fused(w->b, h, consumer, i);
        if (t >= 0) size_walk(w, in, t);
        else if (in->kind != H_LIT) seen_add(w->in, &w->nin, in);
    }
}

/* Rank 0: the plans of the fused operators placed on the ranks, by the
 * key of their region (a slot per key, the last one wins), with the bytes
 * a candidate of that region is priced when the workers do not hold the
 * plan. Two tables: the whole plans under their operators' keys (a
 * multi-root operator's: its roots' keys summed), and the shares of
 * merged Row groups (the cost model prices a group's first root alone,
 * then the group) under each root's key, with the other roots, so that a
 * root is priced by its share only where those roots are there again
 * (the group is formed again): a root standing alone has a plan of its
 * own. A MAgg root needs no share: the cost model forms the MAgg as
 * select.c does (cg_magg_partners) and prices it whole. */
typedef struct CgSibling {
    uint64_t key;         /* its region's key */
    HopKind kind;         /* its root hop */
    OpCode op;
    AggDir dir;
    int64_t rows, cols;
} CgSibling;

#define PRICES 512
typedef struct Price {
    uint64_t key;
    char *plan;
    size_t len;
    double bytes;
    CgSibling sib[CG_MAXOUT];   /* shares: the other roots */
    int nsib;
} Price;
static Price g_whole[PRICES], g_share[PRICES];
static pthread_mutex_t g_price_lock = PTHREAD_MUTEX_INITIALIZER;

/* Under g_price_lock: key's record in table t, or NULL. */
static const Price *price_find(const Price *t, uint64_t key)
{
    const Price *r = &t[key % PRICES];
    return key && r->plan && r->key == key ? r : NULL;
}

/* Under g_price_lock: the price of key's plan in table t; est when
 * unknown. */
static double price_of(const Price *t, uint64_t key, double est)
{
    const Price *r = price_find(t, key);
    if (!r) return est;
    return dist_fused_plan_held(r->plan, r->len) ? 0 : r->bytes;
}

static void price_note(Price *t, uint64_t key, const char *plan, size_t len, double bytes, const CgSibling *sib,
                       int nsib)
{
    Price *r = &t[key % PRICES];
    char *copy = key ? malloc(len ? len : 1) : NULL;
    if (!copy) return;
    memcpy(copy, plan, len);
    free(r->plan);
    r->key = key, r->plan = copy, r->len = len, r->bytes = bytes, r->nsib = nsib;
    if (nsib > 0) memcpy(r->sib, sib, (size_t)nsib * sizeof *sib);
}

void cg_dist_reset(void)
{
    pthread_mutex_lock(&g_price_lock);
    for (int t = 0; t < 2; t++) {
        Price *tab = t ? g_share : g_whole;
        for (int i = 0; i < PRICES; i++) {
            free(tab[i].plan);
            tab[i] = (Price){0};
        }
    }
    pthread_mutex_unlock(&g_price_lock);
}

static double plan_price(const Price *t, uint64_t key, double est)
{
    if (!key || !br_dist_available() || dist_rank() != 0) return est;
    pthread_mutex_lock(&g_price_lock);
    double b = price_of(t, key, est);
    pthread_mutex_unlock(&g_price_lock);
    return b;
}

double cg_dist_plan_price(uint64_t key, int ops, int nin) { return plan_price(g_whole, key, cg_plan_bytes_est(ops, nin)); }

/* The other roots of the merged Row group placed before with a root of
 * region key (at most max; 0 when none). */
static int plan_siblings(uint64_t key, CgSibling *sib, int max)
{
    if (!key || !br_dist_available() || dist_rank() != 0) return 0;
    pthread_mutex_lock(&g_price_lock);
    const Price *r = price_find(g_share, key);
    int n = r ? BR_MIN(r->nsib, max) : 0;
    if (n > 0) memcpy(sib, r->sib, (size_t)n * sizeof *sib);
    pthread_mutex_unlock(&g_price_lock);
    return n;
}

/* Is key, the region of a Row operator rooted at h, one root of a merged
 * Row group placed before whose other roots are in this DAG again, with
 * the same regions under the entries of b? Then the workers' copy of the
 * group's plan serves this root: its share is priced. Otherwise the
 * operator rooted here has a plan of its own. */
static bool shares_again(const Memo *m, const BestArg *b, const Hop *h, uint64_t key)
{
    CgSibling sib[CG_MAXOUT];
    int n = plan_siblings(key, sib, CG_MAXOUT);
    if (n <= 0) return false;
    for (int s = 0; s < n; s++) {
        bool found = false;
        for (int j = 0; j < m->nid && !found; j++) {
            const Hop *o = m->hop[j];
            if (!o || o == h || o->kind != sib[s].kind || o->op != sib[s].op || o->dir != sib[s].dir ||
                o->rows != sib[s].rows || o->cols != sib[s].cols)
                continue;
            MEntry *e = b->best(b->arg, o, T__N);
            found = e && memo_nrefs(e) > 0 && cg_region_key(o, best_fused, b) == sib[s].key;
        }
        if (!found) return false;
    }
    return true;
}

double cg_dist_root_price(const Memo *m, CgBestFn best, const void *barg, const Hop *h, int ops, int nin,
                          uint64_t *key)
{
    BestArg b = {best, barg};
    *key = cg_region_key(h, best_fused, &b);
    if (!br_dist_available() || dist_rank() != 0) return cg_plan_bytes_est(ops, nin);
    /* a MAgg root: the whole operator's plan, split among its roots */
    const Hop *roots[CG_MAXOUT];
    int nr = cg_magg_partners(m, best, barg, h, roots, CG_MAXOUT);
    if (nr > 1) {
        uint64_t all = 0;
        SizeWalk w = {.b = &b};
        for (int r = 0; r < nr; r++) {
            uint64_t k = cg_region_key(roots[r], best_fused, &b);
            if (!k) return cg_plan_bytes_est(ops, nin) * nr;
            all += k;
            size_walk(&w, roots[r], T__N);
        }
        return plan_price(g_whole, all, cg_plan_bytes_est(w.nop, w.nin)) / nr;
    }
    double est = cg_plan_bytes_est(ops, nin);
    return plan_price(shares_again(m, &b, h, *key) ? g_share : g_whole, *key, est);
}

int64_t cg_dist_note_plan(const Memo *m, const FusedOp *f, const CgOp *op, double price[2])
{
    static int64_t places;
    const CPlan *p = op ? op->plan : NULL;
    int nr = f->nroots > 1 ? f->nroots : 1;
    const Hop *const *roots = f->nroots > 1 ? (const Hop *const *)f->roots : (const Hop *const *)&f->root;
    price[0] = price[1] = 0;
    /* every operator, also one placed locally: the runtime runs it on the
     * ranks when its operands are distributed there (a block recompiled
     * with a local root over distributed inputs); its price then counts
     * at that first job */
    if (!p || !roots[0] || !br_dist_available() || dist_size() < 2 || dist_rank() != 0 || !cg_op_shippable(op))
        return 0;
    if (nr > CG_MAXOUT) return 0;
    BestArg b = {sel_best_of, m};
    uint64_t keys[CG_MAXOUT], all = 0;
    for (int r = 0; r < nr; r++) all += keys[r] = cg_region_key(roots[r], best_fused, &b);
    size_t n = 0;
    char *plan = cg_plan_pack(op, &n);
    if (!plan) return 0;
    /* -stats, when this placement's first job runs: what the cost model
     * priced for this operator's plan (the cache's state now, as at its
     * costing moments ago: each root by the cost model's own pricing,
     * cg_dist_root_price, a MAgg's as its share of the whole; a merged
     * Row group by its whole plan, as row_group prices it), beside its
     * estimated size (what pricing every plan in full gave) */
    price[1] = cg_plan_bytes_est(cplan_nops(p), p->nin);
    if (f->type == T_ROW && nr > 1) price[0] = plan_price(g_whole, all, price[1]);
    else {
        uint64_t k;
        for (int r = 0; r < nr; r++) price[0] += cg_dist_root_price(m, sel_best_of, m, roots[r], cplan_nops(p), p->nin, &k);
    }
    pthread_mutex_lock(&g_price_lock);
    price_note(g_whole, all, plan, n, (double)n, NULL, 0);
    for (int r = 0; r < nr && nr > 1 && f->type == T_ROW; r++) {
        CgSibling sib[CG_MAXOUT];
        int ns = 0;
        for (int q = 0; q < nr; q++)
            if (q != r)
                sib[ns++] = (CgSibling){keys[q], roots[q]->kind, roots[q]->op, roots[q]->dir, roots[q]->rows,
                                        roots[q]->cols};
        price_note(g_share, keys[r], plan, n, (double)n / nr, sib, ns);
    }
    int64_t id = __atomic_add_fetch(&places, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&g_price_lock);
    free(plan);
    return id;
}

char *cg_plan_pack(const void *handle, size_t *n)
{
    const CgOp *op = handle;
    const CPlan *p = op->plan;
    size_t sl = strlen(p->sig ? p->sig : "");
    PackHead h = {PACK_MAGIC, sizeof(CPlan), sizeof(CNode), sizeof(CInput), p->nn, p->nin, (int64_t)sl};
    *n = sizeof h + sizeof *p + (size_t)p->nn * sizeof(CNode) + (size_t)p->nin * sizeof(CInput) + sl;
    char *buf = malloc(*n), *q = buf;
    if (!buf) return NULL;
    memcpy(q, &h, sizeof h), q += sizeof h;
    memcpy(q, p, sizeof *p), q += sizeof *p;
    memcpy(q, p->n, (size_t)p->nn * sizeof(CNode)), q += p->nn * sizeof(CNode);
    for (int k = 0; k < p->nin; k++) {
        CInput ci = p->in[k];
        ci.hop = NULL;
        memcpy(q, &ci, sizeof ci), q += sizeof ci;
    }
    memcpy(q, p->sig ? p->sig : "", sl);
    return buf;
}

/* The CPlan of packed bytes (NULL when they are not one). */
static CPlan *plan_unpack(const char *buf, size_t n)
{
    PackHead h;
    if (n < sizeof h) return NULL;
    memcpy(&h, buf, sizeof h);
    if (h.magic != PACK_MAGIC || h.plan_size != sizeof(CPlan) || h.node_size != sizeof(CNode) ||
        h.in_size != sizeof(CInput) || h.nn < 0 || h.nin < 0 || h.siglen < 0 ||
        n != sizeof h + sizeof(CPlan) + (size_t)h.nn * sizeof(CNode) + (size_t)h.nin * sizeof(CInput) + (size_t)h.siglen)
        return NULL;
    const char *q = buf + sizeof h;
    CPlan *p = br_calloc(1, sizeof *p);
    if (!p) return NULL;
    memcpy(p, q, sizeof *p), q += sizeof *p;
    p->n = br_malloc((size_t)(h.nn + 1) * sizeof(CNode));
    p->in = br_malloc((size_t)(h.nin + 1) * sizeof(CInput));
    p->sig = br_malloc((size_t)h.siglen + 1);
    if (!p->n || !p->in || !p->sig) { cplan_free(p); return NULL; }
    memcpy(p->n, q, (size_t)h.nn * sizeof(CNode)), q += h.nn * sizeof(CNode);
    memcpy(p->in, q, (size_t)h.nin * sizeof(CInput)), q += h.nin * sizeof(CInput);
    memcpy(p->sig, q, (size_t)h.siglen);
    p->sig[h.siglen] = 0;
    p->nn = (int)h.nn, p->nin = (int)h.nin, p->ncap = p->nn + 1, p->icap = p->nin + 1;
    return p;
}

void cg_op_compiled(CgContext *c, void *handle)
{
    CgOp *op = handle;
    if (!c || !op) return;
    /* a background compile of it: wait for its end */
    pthread_mutex_lock(&c->lock);
    while (__atomic_load_n(&op->ready, __ATOMIC_ACQUIRE) == 0 && op->queued && c->nasync > 0)
        pthread_cond_wait(&c->async_done, &c->lock);
    pthread_mutex_unlock(&c->lock);
    /* one compile per operator, as parfor workers share one (cache.c) */
    if (__atomic_load_n(&op->ready, __ATOMIC_ACQUIRE) == 0) {
        pthread_mutex_lock(&c->jitlock);
        if (__atomic_load_n(&op->ready, __ATOMIC_ACQUIRE) == 0) jit_compile_all(c, &op, 1);
        pthread_mutex_unlock(&c->jitlock);
    }
}

bool cg_op_shippable(const void *handle)
{
    const CgOp *op = handle;
    return op && op->plan && !op->amulet;
}

void *cg_op_unpack(CgContext *c, const char *buf, size_t n)
{
    CPlan *p = plan_unpack(buf, n);
    CgOp *op = p ? cg_op_get(c, p) : NULL;
    if (op) cg_op_compiled(c, op);
    return op;
}

int cg_exec_packed(CgContext *c, const char *buf, size_t n, int nin, Value *args, Value *out, BrErr *e)
{
    CgOp *op = cg_op_unpack(c, buf, n);
    if (!op) return br_err(e, BR_EFAIL, "a shipped fused operator is damaged (ranks running different braid builds?) "
                           "or did not compile");
    __atomic_add_fetch(&op->uses, 1, __ATOMIC_RELAXED);
    return cg_op_exec(c, op, NULL, args, nin, out, e);
}

/* ---- how an operator runs over row partitions ---- */

/* The combine operator of aggregate op's partial results; -1 when they
 * do not combine by one (mean, index aggregates). */
static int combine(OpCode op)
{
    int acc = op_info[op].acc;
    if (!acc || (acc & (AC_IDX | AC_MEAN))) return -1;
    switch (acc & AC_COMB) {
    case AC_SUM: return DF_SUM;
    case AC_MIN: return DF_MIN;
    case AC_MAX: return DF_MAX;
    default: return -1;
    }
}

/* The combine operator of output node o of a reduce plan: an aggregate's,
 * or a sum for a product over the rows (t(X) %*% Y). */
static int out_combine(const CPlan *p, int o)
{
    const CNode *x = &p->n[p->out[o]];
    if (x->kind == CN_AGG) return combine(x->op);
    return x->kind == CN_MMTL || x->kind == CN_MM ? DF_SUM : -1;
}

/* Is the plan a map (its result has the main input's rows), a reduce, or
 * neither (-1)? */
static int plan_kind(const CPlan *p)
{
    if (cplan_stitched(p)) return -1;   /* its column aggregates need all rows */
    switch (p->tpl) {
    case T_CELL: case T_ROW:
        if (p->var == V_NO_AGG || p->var == V_ROW_AGG) return DF_MAP;
        return p->var == V_COL_AGG || p->var == V_FULL_AGG || p->var == V_COL_T_AGG ? DF_REDUCE : -1;
    case T_MAGG: return DF_REDUCE;
    case T_OUTER:
        if (p->var == V_NO_AGG || p->var == V_LEFT_MM) return DF_MAP;
        return p->var == V_FULL_AGG || p->var == V_RIGHT_MM || p->var == V_RIGHT_T_MM ? DF_REDUCE : -1;
    default: return -1;
    }
}

static bool is_matrix(const Value *v) { return v->kind == V_MATRIX || v->kind == V_DIST; }
static int64_t rows_of(const Value *v) { return v->kind == V_DIST ? v->dm->rows : v->kind == V_MATRIX ? v->m->rows : 0; }

/* Is input k read by rows of the iteration space (partitioned with the
 * main input)? Full and column-vector inputs, Outer's U, and the side
 * input of t(O) %*% U2 (and t(U2) %*% O). */
static bool by_rows(const CPlan *p, int k)
{
    if (p->in[k].scalar) return false;
    if (p->in[k].mode == IM_FULL || p->in[k].mode == IM_COL) return true;
    if (p->tpl != T_OUTER) return false;
    int u, v, side;
    cg_outer_inputs(p, &u, &v, &side);
    return k == u || (k == side && (p->var == V_RIGHT_MM || p->var == V_RIGHT_T_MM));
}

/* The main input of plan p (the first full one when it names none). */
static int main_input(const CPlan *p)
{
    int main = p->main;
    for (int k = 0; k < p->nin && main < 0; k++)
        if (!p->in[k].scalar && p->in[k].mode == IM_FULL) main = k;
    return main;
}

int cg_dist_reduce_main(const void *handle)
{
    const CgOp *op = handle;
    if (!op || op->amulet || !op->plan || plan_kind(op->plan) != DF_REDUCE) return -1;
    const CPlan *p = op->plan;
    int nout = p->tpl == T_MAGG ? p->nout : 1;
    if (nout > DF_MAXOUT) return -1;
    for (int o = 0; o < nout; o++)
        if (out_combine(p, o) < 0) return -1;
    return main_input(p);
}

bool cg_dist_describe(const void *handle, int nin, const Value *args, bool *part, DistFused *d)
{
    const CgOp *op = handle;
    if (!op || op->amulet || !op->plan || nin != op->plan->nin) return false;
    const CPlan *p = op->plan;
    int main = main_input(p);
    if (main < 0 || !is_matrix(&args[main])) return false;
    int kind = plan_kind(p);
    if (kind < 0) return false;
    int64_t n = rows_of(&args[main]);
    if (n < 2) return false;
    memset(d, 0, sizeof *d);
    d->kind = kind, d->main = main, d->part = part, d->nin = nin;
    for (int k = 0; k < nin; k++) {
        part[k] = k == main || (by_rows(p, k) && is_matrix(&args[k]));
        if (part[k] && rows_of(&args[k]) != n) return false;
    }
    if (kind == DF_REDUCE) {
        d->nout = p->tpl == T_MAGG ? p->nout : 1;
        if (d->nout > DF_MAXOUT) return false;
        for (int o = 0; o < d->nout; o++)
            if ((d->red[o] = out_combine(p, o)) < 0) return false;
    }
    return true;
}
