/* recompile.c: dynamic recompilation (seed 002, section 4). A DAG whose
 * sizes were unknown at compile time is recompiled right before each
 * execution: a deep copy of the DAG gets the live variables' real sizes
 * (and the values of scalar variables as literals), then static and
 * dynamic rewrites, memory estimates, operator selection and instruction
 * generation run on the copy. The original DAG stays for later runs.
 * rc_get reuses the code of earlier recompilations of a block when its
 * sizes are the same (see "reuse of recompiled code" below). */
#include "recompile.h"
#include "build.h"
#include "../base/perturb.h"
#include "../kernels/cla.h"
#include "../matrix/cmb.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Deep copy of the hops of src (all of them, so hop i of the copy is hop
 * i of src); NULL when out of memory. */
static HopDag *dag_copy(const HopDag *src)
{
    HopDag *d = hop_dag_new();
    Hop **map = calloc((size_t)src->n + 2, sizeof(Hop *));
    if (!d || !map || src->oom) goto fail;
    for (int i = 0; i < src->n; i++) {
        const Hop *s = src->hops[i];
        Hop *h = hop_new(d, s->kind, s->span, s->nin);
        if (!h) goto fail;
        Hop **in = h->in;
        int id = h->id;
        *h = *s;
        h->in = in;
        h->id = id;
        if (s->kind == H_LIT) h->lit = val_retain(s->lit);
        map[s->id] = h;
    }
    for (int i = 0; i < src->n; i++) {
        const Hop *s = src->hops[i];
        Hop *h = map[s->id];
        for (int k = 0; k < s->nin; k++) h->in[k] = s->in[k] ? map[s->in[k]->id] : NULL;
    }
    for (int i = 0; i < src->nroots; i++) hop_add_root(d, map[src->roots[i]->id]);
    for (int i = 0; i < src->nw; i++) hop_set_write(d, src->wnames[i], map[src->whops[i]->id]);
    for (int i = 0; i < src->nr; i++) hop_add_read(d, src->rnames[i]);
    if (d->oom) goto fail;
    free(map);
    return d;
fail:
    free(map);
    hop_dag_free(d);
    return NULL;
}

/* Compressed block m's groups as the Row skeleton's lookup rule reads
 * them (kernels/cla.h), in d's arena; NULL when out of memory. */
static const ClaLook *look_of(HopDag *d, const MB *m)
{
    ClaLook *l = arena_alloc(d->arena, sizeof *l);
    ClaLookGroup *g = arena_alloc(d->arena, ((size_t)cla_look_groups(m) + 1) * sizeof *g);
    if (!l || !g) return NULL;
    cla_look_fill(m, l, g);
    return l;
}

/* Statistics of the live variables into the copy's transient reads.
 * Scalar reads are replaced by literals, except those with param[i] set
 * (hop i of the DAG; param may be NULL): they stay variables read at run
 * time, with their current value in lit for the sizes of index ranges
 * (hop_infer). */
static void update_stats(HopDag *d, SymTab *vars, const unsigned char *param)
{
    for (int i = 0; i < d->n; i++) {
        Hop *h = d->hops[i];
        if (h->kind != H_TREAD) continue;
        Value *v = st_get(vars, h->name);
        if (!v) continue;
        h->distval = v->kind == V_DIST;
        if (param && param[i] && (v->kind == V_INT || v->kind == V_DOUBLE || v->kind == V_BOOL)) {
            h->lit = *v;
            h->known = true;
            h->dt = DT_SCALAR;
            h->vt = v->kind == V_INT ? VT_INT : v->kind == V_BOOL ? VT_BOOL : VT_DOUBLE;
            continue;
        }
        if (v->kind == V_MATRIX) {
            h->dt = DT_MATRIX;
            h->vt = VT_DOUBLE;
            h->rows = v->m->rows;
            h->cols = v->m->cols;
            h->nnz = v->m->nnz;
            h->nnz_ub = false;
            h->mem = (double)mb_bytes(v->m);
            h->memlb = h->mem;   /* real data: its non-zeros are exact */
            h->cbytes = v->m->cmb ? h->mem : 0;   /* codegen's costs (cost.c) */
            h->cgroups = v->m->cmb ? (double)v->m->cmb->ngroups : 0;
            h->clook = v->m->cmb ? look_of(d, v->m) : NULL;
        } else if (v->kind == V_DIST) {
            h->dt = DT_MATRIX;
            h->vt = VT_DOUBLE;
            h->rows = v->dm->rows;
            h->cols = v->dm->cols;
            h->nnz = v->dm->nnz;
            h->nnz_ub = false;
            h->mem = h->memlb = mb_est_size(h->rows, h->cols, h->nnz);
        } else if (!h->move && (v->kind == V_INT || v->kind == V_DOUBLE || v->kind == V_BOOL)) {
            /* literal replacement of scalar variables */
            h->kind = H_LIT;
            h->lit = *v;
            h->name = NULL;
            hop_infer(h);
        } else if (v->kind == V_LIST) {
            h->dt = DT_LIST;
        } else if (v->kind == V_STRING) {
            h->dt = DT_SCALAR;
            h->vt = VT_STRING;
        }
    }
}

/* Calls whose arguments now have known sizes (a loop body compiled with
 * unknown ones) run the callee's specialization for those sizes, and
 * their outputs get its output sizes (IPA at run time; by sizes only: a
 * loop variable passed as an argument would otherwise make a
 * specialization per iteration). True if any output size changed. */
static bool specialize_calls(RtProgram *p, HopDag *d)
{
    bool changed = false;
    for (int i = 0; i < d->n; i++) {
        Hop *h = d->hops[i];
        if (h->kind != H_FCALL || h->spec) continue;
        h->spec = plan_specialize(p, h, NULL, false);
    }
    for (int i = 0; i < d->n; i++) {
        Hop *o = d->hops[i];
        const FProg *fp = o->kind == H_OUT && o->in[0] && o->in[0]->kind == H_FCALL ? o->in[0]->spec : NULL;
        if (!fp || o->dt != DT_MATRIX || o->rows >= 0) continue;
        o->rows = fp->out_dims[2 * o->out_index];
        o->cols = fp->out_dims[2 * o->out_index + 1];
        changed |= o->rows >= 0;
    }
    return changed;
}

Code *rc_recompile(RtProgram *p, HopDag *src, SymTab *vars, int mode, HopDag **copy, RwStats *st)
{
    HopDag *d = dag_copy(src);
    *copy = d;
    if (!d) return NULL;
    update_stats(d, vars, NULL);
    rw_propagate_sizes(d);
    if (specialize_calls(p, d)) rw_propagate_sizes(d);
    *copy = d;
    return plan_compile(p, d, mode, PC_REWRITE | PC_FUSE | PC_LOWER, st);
}

/* ---- reuse of recompiled code ----
 *
 * In loops over mini-batches the same block is recompiled every
 * iteration, with the same sizes but other scalar values (the batch
 * bounds). Scalar variables that matter only as values, not for the
 * plan, are therefore kept as variables (read at run time) instead of
 * being replaced by literals: those whose every use, through scalar
 * arithmetic, is an elementwise matrix operation, the seed of rand or
 * sample, the bounds of an index range (whose sizes hop_infer evaluates
 * from their current values), a left-indexing bound, an argument of
 * print (the autoencoder's per-batch progress line: its bounds had made
 * every iteration's key new, 40 recompilations a run, none reused), also
 * through string concatenation (print("Iter " + i)), a stop's message,
 * an assert's condition, or a write of the block. The compiled code then depends only on the sizes (rows, cols,
 * nnz, memory) of every HOP after size propagation and the values of the
 * literals, which form the key; each block keeps the code of its last
 * RC_KEEP keys. */
#define RC_KEEP 4

/* The small-block rule. A block recompiled again and again on small data
 * (the per-node loops of tree learners) spends more in fusion planning,
 * ~10 us a DAG, than fused operators can save on a few hundred cells.
 * Once the last RC_SMALL_RUNS compiled versions of a block produced no
 * matrix over RC_SMALL_CELLS cells (rc_set_small_cells) when they ran,
 * and no hop of the new copy is known to be larger, the copy is compiled
 * unfused. Any larger matrix seen at run time ends the streak, so the
 * next recompilation fuses again. Fused and unfused operators agree only
 * to the last bits, so the rule must not depend on timing: in parfor
 * bodies (concurrent: workers share the block, and which compiled
 * version ran before which depends on the schedule) the history is not
 * used, and a copy is compiled unfused only when every matrix in it has
 * a known size within the limit (univar's parfor over columns gave
 * results that changed from run to run in the last bits). */
#define RC_SMALL_CELLS 4096
#define RC_SMALL_RUNS 2

/* the rule's threshold in cells (0: off); -1 not yet read from
 * BRAID_RECOMPILE_SMALL */
static int64_t small_cells = -1;

void rc_set_small_cells(int64_t cells) { __atomic_store_n(&small_cells, cells < 0 ? 0 : cells, __ATOMIC_RELAXED); }

static int64_t small_limit(void)
{
    int64_t s = __atomic_load_n(&small_cells, __ATOMIC_RELAXED);
    if (s < 0) {
        const char *v = getenv("BRAID_RECOMPILE_SMALL");
        s = v && *v ? atoll(v) : RC_SMALL_CELLS;
        if (s < 0) s = 0;
        __atomic_store_n(&small_cells, s, __ATOMIC_RELAXED);
    }
    return s;
}

struct RcCode {
    unsigned char *key;
    size_t klen;
    uint64_t hash;
    Code *code;
    HopDag *dag;
    int refs;           /* the cache's and the callers' references */
};
typedef RcCode RcEnt;

typedef struct RcCache {
    pthread_mutex_t lock;
    const HopDag *src;      /* the DAG the entries were compiled from */
    unsigned char *param;   /* per hop of src: keep the TREAD a variable */
    HopDag *scratch;        /* a copy of src for the sizes of the key */
    RcEnt *e[RC_KEEP];      /* most recently used first */
    int small;              /* compiled versions in a row that ran small */
} RcCache;

static pthread_mutex_t new_lock = PTHREAD_MUTEX_INITIALIZER;

/* 1 on, 0 off, -1 not yet read from BRAID_RECOMPILE_CACHE */
static int cache_state = -1;

void rc_set_cache(bool on) { __atomic_store_n(&cache_state, on ? 1 : 0, __ATOMIC_RELAXED); }

static bool cache_on(void)
{
    int s = __atomic_load_n(&cache_state, __ATOMIC_RELAXED);
    if (s < 0) {
        const char *v = getenv("BRAID_RECOMPILE_CACHE");
        s = !(v && !strcmp(v, "0"));
        __atomic_store_n(&cache_state, s, __ATOMIC_RELAXED);
    }
    return s == 1;
}

static void ent_release(RcEnt *e)
{
    if (!e || __atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) > 0) return;
    plan_code_free(e->code);
    hop_dag_free(e->dag);
    free(e->key);
    free(e);
}

static void cache_clear(RcCache *c)
{
    for (int i = 0; i < RC_KEEP; i++) { ent_release(c->e[i]); c->e[i] = NULL; }
    free(c->param);
    c->param = NULL;
    hop_dag_free(c->scratch);
    c->scratch = NULL;
    c->src = NULL;
}

/* Frees a block's cache (PBlock.rc_free). */
static void cache_free(void *p)
{
    RcCache *c = p;
    if (!c) return;
    cache_clear(c);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static bool elementwise(const Hop *h)
{
    return h->kind == H_UNARY || h->kind == H_BINARY || h->kind == H_TERNARY;
}

/* Whether every use of scalar hop h is a value only (see above); st[]:
 * 0 unknown, 1 yes, 2 no, 3 in progress; users[i]: consumers of hop i
 * (hop i has id i + 1). */
static bool value_only(const HopDag *d, const Hop *h, int **users, const int *nusers, unsigned char *st)
{
    int id = h->id - 1;
    if (st[id]) return st[id] == 1;
    st[id] = 3;
    bool ok = true;
    for (int u = 0; u < nusers[id] && ok; u++) {
        const Hop *c = d->hops[users[id][u]];
        for (int k = 0; k < c->nin && ok; k++) {
            if (c->in[k] != h) continue;
            if (elementwise(c) && c->dt == DT_MATRIX) continue;
            /* a scalar result (or one of unknown type) must be a value
             * only too; so must a string one ("Iter " + i), whose uses
             * are checked the same way: printed, concatenated again, or
             * anything else (a file name, a comparison feeding a size)
             * makes i a plan input */
            if (elementwise(c) && (c->dt == DT_ANY || c->dt == DT_SCALAR))
                ok = value_only(d, c, users, nusers, st);
            else if (c->kind == H_RIX && k >= 1) continue;
            else if (c->kind == H_LIX && k >= 2) continue;
            /* the seed of rand / sample shapes the data, not the plan */
            else if (k == hop_seed_arg(c)) continue;
            /* printed (a mini-batch loop's bounds in its progress
             * line), a stop's message, an assert's condition */
            else if (c->kind == H_BUILTIN && (c->bi == BI_PRINT || c->bi == BI_STOP || c->bi == BI_ASSERT)) continue;
            else ok = false;
        }
    }
    st[id] = ok ? 1 : 2;
    return ok;
}

/* Marks the scalar TREADs of d that can stay variables; NULL if none. */
static unsigned char *classify(const HopDag *d)
{
    int n = d->n;
    int *nusers = calloc((size_t)n + 1, sizeof(int));
    int **users = calloc((size_t)n + 1, sizeof(int *));
    unsigned char *st = calloc((size_t)n + 1, 1);
    unsigned char *param = calloc((size_t)n + 1, 1);
    bool any = false;
    if (!nusers || !users || !st || !param) goto out;
    for (int i = 0; i < n; i++) {
        if (d->hops[i]->id != i + 1) goto out;  /* hop i has id i + 1 */
        for (int k = 0; k < d->hops[i]->nin; k++)
            if (d->hops[i]->in[k]) nusers[d->hops[i]->in[k]->id - 1]++;
    }
    for (int i = 0; i < n; i++) {
        users[i] = malloc(((size_t)nusers[i] + 1) * sizeof(int));
        if (!users[i]) goto out;
        nusers[i] = 0;
    }
    for (int i = 0; i < n; i++)
        for (int k = 0; k < d->hops[i]->nin; k++) {
            const Hop *x = d->hops[i]->in[k];
            if (!x) continue;
            int xi = x->id - 1, *u = users[xi];
            if (!nusers[xi] || u[nusers[xi] - 1] != i) u[nusers[xi]++] = i;
        }
    for (int i = 0; i < n; i++) {
        const Hop *h = d->hops[i];
        if (h->kind != H_TREAD || h->move || h->dt != DT_SCALAR ||
            (h->vt != VT_INT && h->vt != VT_DOUBLE && h->vt != VT_BOOL)) continue;
        if (value_only(d, h, users, nusers, st)) param[i] = 1, any = true;
    }
out:
    for (int i = 0; users && i < n; i++) free(users[i]);
    free(users);
    free(nusers);
    free(st);
    if (!any) { free(param); param = NULL; }
    return param;
}

static void put(unsigned char **k, size_t *len, size_t *cap, const void *v, size_t n)
{
    if (*len + n > *cap) {
        size_t nc = *cap ? *cap * 2 : 1024;
        while (nc < *len + n) nc *= 2;
        unsigned char *nk = realloc(*k, nc);
        if (!nk) { free(*k); *k = NULL; *cap = 0; return; }
        *k = nk;
        *cap = nc;
    }
    if (*k) memcpy(*k + *len, v, n);
    *len += n;
}

/* The key of a copy after update_stats and size propagation: mode, every
 * hop's kind, sizes and memory estimate, the values of literals. Returns
 * a malloc'ed byte string (NULL: no memory). */
static unsigned char *make_key(const HopDag *d, int mode, size_t *len)
{
    unsigned char *k = NULL;
    size_t cap = 0;
    *len = 0;
    put(&k, len, &cap, &mode, sizeof mode);
    for (int i = 0; i < d->n && (k || !*len); i++) {
        const Hop *h = d->hops[i];
        struct { int32_t kind, dt, vt, lk; int64_t r, c, z; double mem; int64_t lv; } e;
        memset(&e, 0, sizeof e);
        e.kind = (int32_t)h->kind;
        e.dt = (int32_t)h->dt;
        e.vt = (int32_t)h->vt;
        e.r = h->rows;
        e.c = h->cols;
        /* the target of an update in place (X[i, ] = ... in a loop) fills
         * up from one iteration to the next: its non-zeros would make
         * every iteration's key new; only whether it is empty changes the
         * plan (the rewrites of empty operands), the rest only estimates */
        e.z = h->kind == H_TREAD && h->move && h->nnz != 0 ? -2 : h->nnz;
        e.mem = h->mem;
        if (h->kind == H_LIT) {
            e.lk = (int32_t)h->lit.kind;
            if (h->lit.kind == V_DOUBLE) memcpy(&e.lv, &h->lit.d, sizeof e.lv);
            else if (h->lit.kind == V_INT) e.lv = h->lit.i;
            else if (h->lit.kind == V_BOOL) e.lv = h->lit.b;
            else e.lv = (int64_t)(intptr_t)h->lit.s;  /* strings: shared with the source DAG */
        }
        put(&k, len, &cap, &e, sizeof e);
    }
    return k;
}

/* Hash of a key (its length is a multiple of 4 bytes): 8 bytes a step. */
static uint64_t key_hash(const unsigned char *k, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, k + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
    }
    for (; i < n; i++) h = (h ^ k[i]) * 0x100000001b3ULL;
    return h;
}

/* Resets the hops of copy d (from dag_copy(src), possibly changed by
 * update_stats and size propagation) to those of src. */
static void dag_reset(HopDag *d, const HopDag *src)
{
    for (int i = 0; i < src->n; i++) {
        const Hop *s = src->hops[i];
        Hop *h = d->hops[i];
        if (h->kind == H_LIT) val_release(&h->lit);
        Hop **in = h->in;
        int id = h->id;
        *h = *s;
        h->in = in;
        h->id = id;
        if (s->kind == H_LIT) h->lit = val_retain(s->lit);
    }
}

RcCode *rc_get(RtProgram *p, PBlock *b, SymTab *vars, int mode, bool concurrent, RwStats *st, bool *hit)
{
    *hit = false;
    if (!cache_on()) {
        /* as before the cache: every scalar a literal, nothing kept */
        RcEnt *e = calloc(1, sizeof *e);
        if (!e) return NULL;
        e->code = rc_recompile(p, b->dag, vars, mode, &e->dag, st);
        e->refs = 1;
        return e;
    }
    RcCache *c = __atomic_load_n(&b->rc_cache, __ATOMIC_ACQUIRE);
    if (!c) {
        pthread_mutex_lock(&new_lock);
        c = b->rc_cache;
        if (!c && (c = calloc(1, sizeof *c))) {
            pthread_mutex_init(&c->lock, NULL);
            b->rc_free = cache_free;
            __atomic_store_n(&b->rc_cache, c, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&new_lock);
    }
    const unsigned char *param = NULL;
    size_t klen = 0;
    unsigned char *key = NULL;
    if (c) {
        /* the key from the block's scratch copy (no allocation of hops) */
        pthread_mutex_lock(&c->lock);
        if (c->src != b->dag) {
            /* classified on a copy with the types of the live variables
             * (every scalar a variable); later types only change the key */
            cache_clear(c);
            c->src = b->dag;
            c->scratch = dag_copy(b->dag);
            if (!c->scratch) c->src = NULL;   /* out of memory: no reuse */
            unsigned char *all = c->scratch ? malloc((size_t)plan_dag(b)->n + 1) : NULL;
            if (all) {
                memset(all, 1, (size_t)plan_dag(b)->n + 1);
                update_stats(c->scratch, vars, all);
                rw_propagate_sizes(c->scratch);
                c->param = classify(c->scratch);
                free(all);
            }
        }
        if (c->scratch) {
            dag_reset(c->scratch, b->dag);
            param = c->param;
            update_stats(c->scratch, vars, param);
            rw_propagate_sizes(c->scratch);
            key = make_key(c->scratch, mode, &klen);
        }
        pthread_mutex_unlock(&c->lock);
    }
    uint64_t kh = key ? key_hash(key, klen) : 0;
    HopDag *d = NULL;
    bool small = false;
    int64_t limit = small_limit();
    if (key) {
        pthread_mutex_lock(&c->lock);
        /* schedule perturbation: some lookups miss (a fresh compile) */
        bool miss = br_perturb_miss_early(PT_RC_MISS, kh);
        for (int i = 0; i < RC_KEEP && !miss; i++) {
            RcEnt *e = c->e[i];
            if (!e || e->hash != kh || e->klen != klen || memcmp(e->key, key, klen)) continue;
            memmove(&c->e[1], &c->e[0], (size_t)i * sizeof(RcEnt *));
            c->e[0] = e;
            __atomic_add_fetch(&e->refs, 1, __ATOMIC_RELAXED);
            pthread_mutex_unlock(&c->lock);
            free(key);
            *hit = true;
            return e;
        }
        /* the copy to compile, while param is c's */
        d = dag_copy(b->dag);
        if (d) update_stats(d, vars, param);
        if (concurrent) {
            small = limit > 0;
        } else {
            if (c->e[0]) {
                int64_t seen = __atomic_load_n(&c->e[0]->code->seen_cells, __ATOMIC_RELAXED);
                c->small = seen >= 0 && seen <= limit ? c->small + 1 : 0;
            }
            small = limit > 0 && c->small >= RC_SMALL_RUNS;
        }
        pthread_mutex_unlock(&c->lock);
    } else {
        d = dag_copy(b->dag);
        if (d) update_stats(d, vars, NULL);
    }
    if (!d) { free(key); return NULL; }
    rw_propagate_sizes(d);
    /* calls whose arguments now have known sizes run specializations
     * (the key holds those sizes: a hit has the right ones) */
    if (specialize_calls(p, d)) rw_propagate_sizes(d);
    for (int i = 0; i < d->n && small; i++) {
        const Hop *h = d->hops[i];
        if (h->dt != DT_MATRIX) continue;
        if (concurrent ? h->rows < 0 || h->cols < 0 || (double)h->rows * (double)h->cols > (double)limit
                       : h->rows > 0 && h->cols > 0 && (double)h->rows * (double)h->cols > (double)limit)
            small = false;
    }
    Code *code = plan_compile(p, d, mode, PC_REWRITE | (small ? 0 : PC_FUSE) | PC_LOWER, st);
    RcEnt *e = calloc(1, sizeof *e);
    if (!e) { free(key); plan_code_free(code); hop_dag_free(d); return NULL; }
    e->code = code;
    e->dag = d;
    e->refs = 1;
    e->key = key;
    e->klen = klen;
    e->hash = kh;
    if (key && code) {
        pthread_mutex_lock(&c->lock);
        if (c->src == b->dag) {
            ent_release(c->e[RC_KEEP - 1]);
            memmove(&c->e[1], &c->e[0], (RC_KEEP - 1) * sizeof(RcEnt *));
            c->e[0] = e;
            e->refs++;
        }
        pthread_mutex_unlock(&c->lock);
    }
    return e;
}

Code *rc_code(RcCode *r) { return r ? r->code : NULL; }

HopDag *rc_dag(RcCode *r) { return r ? r->dag : NULL; }

void rc_release(RcCode *r) { ent_release(r); }
