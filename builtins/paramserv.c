/* paramserv.c: SystemDS's paramserv() builtin on one machine (mode
 * "LOCAL"): data-parallel training of a model list with a user gradient
 * function (upd) and a user aggregation function (agg).
 *
 *   model2 = paramserv(model=list(...), features=X, labels=Y, upd="f",
 *                      agg="g", utype="BSP"|"ASP"|"SBP",
 *                      freq="BATCH"|"EPOCH"|"NBATCHES", epochs=, batchsize=,
 *                      k=, scheme=, hyperparams=list(...), ...)
 *
 *   upd(model, hyperparams, features, labels) -> gradients (a list)
 *   agg(model, hyperparams, gradients)        -> model     (a list)
 *
 * The rows of X and Y are partitioned among k workers (scheme); each worker
 * walks its partition in batches of batchsize rows, every epoch in the same
 * order. A worker's "push" covers one batch (freq BATCH), nbatches batches
 * (NBATCHES) or its whole partition (EPOCH): it starts from the server's
 * model, and for every batch but the last of the push computes gradients
 * and updates its local copy with agg; it pushes the sum of the push's
 * gradients (SystemDS's LocalPSWorker). The server applies a push with
 * agg(global, hyperparams, pushed gradients).
 *
 * The result is deterministic (independent of the thread count):
 *   BSP, SBP  each round, every worker with batches left in the epoch
 *             computes its push from the same model (in parallel threads,
 *             each with its own frame, as parfor runs iterations); the
 *             server then aggregates the pushes in worker order. (SBP's
 *             backup workers only matter for stragglers: here it is BSP.)
 *   ASP       workers take turns in worker order: a worker's push is
 *             computed from the current model and aggregated at once.
 * modelAvg=TRUE (BSP/SBP): workers also apply their last batch locally and
 * push their models; the server's new model is the mean of the pushed
 * models (in worker order). Validation data, checkpointing and val= are
 * accepted and ignored; so is num_backup_workers= (SBP: checked to be
 * below k); he=TRUE (federated homomorphic encryption) is an error. */
#include "builtins.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../kernels/gen.h"
#include "../lang/load.h"
#include "../kernels/reorg.h"

enum { U_BSP, U_ASP, U_SBP };
enum { F_BATCH, F_EPOCH, F_NBATCHES };
enum { S_DC, S_DRR, S_DR, S_OR };

/* Argument positions (base/ops.def, BUILTIN PARAMSERV). */
enum {
    A_MODEL, A_FEAT, A_LAB, A_VFEAT, A_VLAB, A_UPD, A_AGG, A_MODE, A_UTYPE, A_FREQ,
    A_EPOCHS, A_BS, A_K, A_SCHEME, A_HP, A_CKPT, A_NBATCHES, A_MAVG, A_SEED, A_VAL, A_HE, A_NBACKUP
};

typedef struct Part { MB *x, *y; int64_t nb; } Part;

typedef struct Ps {
    Rt *rt;
    Frame *f;
    Func *upd, *agg;
    Value hp;                 /* hyperparameter list (owned) */
    int utype, freq, scheme;
    int64_t epochs, bs, k, nbatches, seed;
    bool mavg;
    Part *parts;              /* k partitions (owned) */
    BrErr *e;
} Ps;

static int pick(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcasecmp(s, names[i])) return i;
    return -1;
}

/* Integer argument a (or dflt when not given). */
static int int_arg(const Value *a, const char *what, int64_t dflt, int64_t *out, BrErr *e)
{
    double d;
    if (!bi_given(a)) { *out = dflt; return 0; }
    if (bi_num(a, what, &d, e)) return e->code;
    if (d != floor(d) || !(fabs(d) < 9e15)) return br_err(e, BR_EARG, "paramserv: argument '%s' must be an integer, got %g", what, d);
    *out = (int64_t)d;
    return 0;
}

/* Enumeration argument a (case-insensitive) or dflt. */
static int enum_arg(const Value *a, const char *what, const char *const *names, int n, int dflt, int *out, BrErr *e)
{
    if (!bi_given(a)) { *out = dflt; return 0; }
    const char *s = bi_str(a, what, e);
    if (!s) return e->code;
    *out = pick(s, names, n);
    if (*out < 0) {
        char valid[160] = "";
        for (int i = 0; i < n; i++) {
            strcat(valid, i ? ", " : "");
            strcat(valid, names[i]);
        }
        return br_err(e, BR_EARG, "paramserv: unsupported %s '%s' (valid: %s)", what, s, valid);
    }
    return 0;
}

/* The function named by argument a ("f", "ns::f" or "file.dml::f"), looked
 * up from the calling file, then from the main script. */
static Func *find_fn(Ps *ps, const Instr *h, const Value *a, const char *what)
{
    if (!bi_given(a)) { br_err(ps->e, BR_EARG, "paramserv: missing argument '%s' (a function name)", what); return NULL; }
    const char *name = bi_str(a, what, ps->e);
    if (!name) return NULL;
    const Program *p = ps->rt->prog->ast;
    Func *fn = lang_find_func(p, bi_ns_of(ps->rt, h->span), name);
    if (!fn) fn = lang_find_func(p, "", name);
    if (!fn) br_err(ps->e, BR_EARG, "paramserv: unknown %s function '%s'", what, name);
    else if (fn->nout < 1) { br_err(ps->e, BR_EARG, "paramserv: %s function '%s' returns nothing", what, name); fn = NULL; }
    return fn;
}

/* Calls fn with the n values vals (borrowed): a value binds to the
 * parameter called names[i] when fn has one, else to the next free
 * parameter in order; unbound parameters take their defaults. The first
 * output must be a list: *out receives it (caller owns). Returns 0, or -1
 * with the error recorded. */
static int call(Ps *ps, Func *fn, const char *what, const char *const *names, const Value *vals, int n, Value *out,
                BrErr *e)
{
    Value *bound = calloc((size_t)fn->nin + 1, sizeof(Value));
    if (!bound) return br_err(e, BR_ENOMEM, "paramserv: out of memory");
    int rc = 0;
    bool used[8] = {0};
    for (int i = 0; i < n; i++)
        for (int j = 0; j < fn->nin; j++)
            if (!strcmp(fn->in[j].name, names[i]) && bound[j].kind == V_NONE) {
                bound[j] = val_retain(vals[i]);
                used[i] = true;
                break;
            }
    int pos = 0;
    for (int i = 0; i < n && !rc; i++) {
        if (used[i]) continue;
        while (pos < fn->nin && bound[pos].kind != V_NONE) pos++;
        if (pos >= fn->nin) {
            rc = br_err(e, BR_EARG, "paramserv: %s function '%s' takes %d parameters, needs %d (%s)", what,
                        fn->name, fn->nin, n, n == 4 ? "model, hyperparams, features, labels" : "model, hyperparams, gradients");
            break;
        }
        bound[pos++] = val_retain(vals[i]);
    }
    Value res = val_none();
    char label[32];
    snprintf(label, sizeof label, "%s function ", what);
    if (!rc) rc = bi_call_defaults(ps->rt, ps->f, fn, bound, "paramserv", label, &res, e);
    for (int j = 0; j < fn->nin; j++) val_release(&bound[j]);
    free(bound);
    if (rc) return rc;
    if (res.l->n < 1 || res.l->items[0].kind != V_LIST) {
        const char *k = res.l->n < 1 ? "nothing" : val_kind_name(res.l->items[0].kind);
        val_release(&res);
        return br_err(e, BR_EARG, "paramserv: %s function '%s' must return a list, not a %s", what, fn->name, k);
    }
    *out = val_retain(res.l->items[0]);
    val_release(&res);
    return 0;
}

static int call_upd(Ps *ps, const Value *model, MB *x, MB *y, Value *grads, BrErr *e)
{
    static const char *const nm[4] = { "model", "hyperparams", "features", "labels" };
    Value v[4] = { *model, ps->hp, val_matrix(x), val_matrix(y) };
    return call(ps, ps->upd, "update", nm, v, 4, grads, e);
}

static int call_agg(Ps *ps, const Value *model, const Value *grads, Value *nmodel, BrErr *e)
{
    static const char *const nm[3] = { "model", "hyperparams", "gradients" };
    Value v[3] = { *model, ps->hp, *grads };
    return call(ps, ps->agg, "aggregation", nm, v, 3, nmodel, e);
}

/* Elementwise a op b over two lists of the same length (names of a kept);
 * *out is a new list. */
static int list_binary(OpCode op, const List *a, const Value *b, bool b_is_list, Value *out, BrErr *e)
{
    if (b_is_list && b->l->n != a->n)
        return br_err(e, BR_EDIM, "paramserv: dimension mismatch: gradient lists of %d and %d items", a->n, b->l->n);
    Value r = val_list_new(a->n);
    for (int i = 0; i < a->n; i++) {
        Value c = val_none();
        if (ap_binary(op, &a->items[i], b_is_list ? &b->l->items[i] : b, &c, e) ||
            list_append(r.l, c, a->names ? a->names[i] : NULL, e)) {
            val_release(&r);
            return e->code ? e->code : BR_EFAIL;
        }
    }
    *out = r;
    return 0;
}

/* Rows idx[0..n) (0-based) of m as a new block. */
static MB *gather(const MB *m, const int64_t *idx, int64_t n, BrErr *e)
{
    if (m->sparse) {
        MB *r = mb_sp_new(n, m->cols, 0, e);
        for (int64_t i = 0; r && i < n; i++)
            for (int64_t p = m->rp[idx[i]]; p < m->rp[idx[i] + 1]; p++)
                if (mb_sp_append(r, i, m->ci[p], m->v[p], e)) { mb_release(r); return NULL; }
        if (r) mb_sp_finish(r);
        return mb_finish(r, e);
    }
    MB *r = mb_dense_uninit(n, m->cols, e);
    if (!r) return NULL;
    for (int64_t i = 0; i < n; i++)
        memcpy(r->d + i * m->cols, m->d + idx[i] * m->cols, (size_t)m->cols * sizeof(double));
    r->nnz = 0;
    for (int64_t i = 0; i < n * m->cols; i++) r->nnz += r->d[i] != 0;
    return mb_finish(r, e);
}

/* A random permutation of 0..n-1 from seed (sample(n, n)); caller frees. */
static int64_t *perm(int64_t n, int64_t seed, BrErr *e)
{
    int64_t *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
    if (!p) { br_err(e, BR_ENOMEM, "paramserv: out of memory"); return NULL; }
    if (n == 0) return p;
    MB *s = k_sample(n, n, false, seed, e);
    if (!s) { free(p); return NULL; }
    for (int64_t i = 0; i < n; i++) p[i] = (int64_t)mb_get(s, i, 0) - 1;
    mb_release(s);
    return p;
}

/* Splits X, Y among the k workers by the scheme (SystemDS's local
 * partitioners): contiguous blocks of ceil(n/k) rows; rows i, i+k, ...;
 * contiguous blocks of a random permutation; every worker all rows in its
 * own random order. */
static int partition(Ps *ps, const MB *X, const MB *Y)
{
    BrErr *e = ps->e;
    int64_t n = X->rows, k = ps->k;
    ps->parts = calloc((size_t)k, sizeof(Part));
    int64_t *idx = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
    if (!ps->parts || !idx) { free(idx); return br_err(e, BR_ENOMEM, "paramserv: out of memory"); }
    int64_t *pm = NULL;
    if (ps->scheme == S_DR && !(pm = perm(n, ps->seed, e))) { free(idx); return e->code; }
    int64_t blk = (n + k - 1) / k;
    for (int64_t w = 0; w < k; w++) {
        int64_t m = 0;
        if (ps->scheme == S_DC || ps->scheme == S_DR) {
            int64_t lo = w * blk < n ? w * blk : n, hi = (w + 1) * blk < n ? (w + 1) * blk : n;
            for (int64_t i = lo; i < hi; i++) idx[m++] = pm ? pm[i] : i;
        } else if (ps->scheme == S_DRR) {
            for (int64_t i = w; i < n; i += k) idx[m++] = i;
        } else {
            int64_t *q = perm(n, ps->seed < 0 ? -1 : ps->seed + w, e);
            if (!q) break;
            memcpy(idx, q, (size_t)n * sizeof(int64_t));
            m = n;
            free(q);
        }
        Part *p = &ps->parts[w];
        if (!(p->x = gather(X, idx, m, e)) || !(p->y = gather(Y, idx, m, e))) break;
        p->nb = (m + ps->bs - 1) / ps->bs;
    }
    free(pm);
    free(idx);
    return e->code;
}

/* Worker w's push for batches [j0, j1) of its partition, starting from
 * model: the sum of the batches' gradients (or, with modelAvg, its model
 * after applying all of them). *push is a new list. */
static int push_of(Ps *ps, int64_t w, const Value *model, int64_t j0, int64_t j1, Value *push, BrErr *e)
{
    Part *p = &ps->parts[w];
    Value local = val_retain(*model), acc = val_none();
    int rc = 0;
    for (int64_t j = j0; j < j1 && !rc; j++) {
        int64_t lo = j * ps->bs, hi = lo + ps->bs < p->x->rows ? lo + ps->bs : p->x->rows;
        MB *xb = k_slice(p->x, lo, hi, 0, p->x->cols, e);
        MB *yb = xb ? k_slice(p->y, lo, hi, 0, p->y->cols, e) : NULL;
        Value g = val_none();
        if (!yb) rc = e->code;
        else rc = call_upd(ps, &local, xb, yb, &g, e);
        mb_release(xb);
        mb_release(yb);
        if (rc) break;
        if (!ps->mavg) {
            if (acc.kind == V_NONE) acc = val_retain(g);
            else {
                Value s = val_none();
                rc = list_binary(OP_PLUS, acc.l, &g, true, &s, e);
                val_release(&acc);
                acc = s;
            }
        }
        if (!rc && (ps->mavg || j + 1 < j1)) {
            Value nm = val_none();
            rc = call_agg(ps, &local, &g, &nm, e);
            val_release(&local);
            local = nm;
        }
        val_release(&g);
    }
    if (rc) { val_release(&local); val_release(&acc); return rc; }
    if (ps->mavg) { *push = local; val_release(&acc); }
    else { *push = acc; val_release(&local); }
    return 0;
}

/* Batches per push of a worker with nb batches. */
static int64_t period(const Ps *ps, int64_t nb)
{
    return ps->freq == F_BATCH ? 1 : ps->freq == F_NBATCHES ? ps->nbatches : (nb > 0 ? nb : 1);
}

/* The training loop (see the file comment); *model is replaced. */
static int train(Ps *ps, Value *model)
{
    BrErr *e = ps->e;
    int64_t k = ps->k;
    int64_t *pos = calloc((size_t)k, sizeof(int64_t));
    Value *pushes = calloc((size_t)k, sizeof(Value));
    int *rcs = calloc((size_t)k, sizeof(int));
    BrErr *errs = calloc((size_t)k, sizeof(BrErr));
    if (!pos || !pushes || !rcs || !errs) {
        free(pos); free(pushes); free(rcs); free(errs);
        return br_err(e, BR_ENOMEM, "paramserv: out of memory");
    }
    int rc = 0;
    for (int64_t ep = 0; ep < ps->epochs && !rc; ep++) {
        for (int64_t w = 0; w < k; w++) pos[w] = 0;
        for (;;) {
            bool any = false;
            for (int64_t w = 0; w < k; w++) any |= pos[w] < ps->parts[w].nb;
            if (!any || rc) break;
            if (ps->utype == U_ASP) {
                for (int64_t w = 0; w < k && !rc; w++) {
                    Part *p = &ps->parts[w];
                    if (pos[w] >= p->nb) continue;
                    int64_t j1 = pos[w] + period(ps, p->nb);
                    if (j1 > p->nb) j1 = p->nb;
                    Value g = val_none(), nm = val_none();
                    rc = push_of(ps, w, model, pos[w], j1, &g, e);
                    if (!rc) rc = call_agg(ps, model, &g, &nm, e);
                    val_release(&g);
                    if (!rc) { val_release(model); *model = nm; }
                    pos[w] = j1;
                }
                continue;
            }
            /* BSP / SBP: all pushes from the same model (computed in
             * parallel, as parfor runs its iterations), then aggregated */
            int np = 0;
            for (int64_t w = 0; w < k; w++) {
                pushes[w] = val_none();
                rcs[w] = 0;
                errs[w].code = 0;
                errs[w].msg[0] = 0;
                np += pos[w] < ps->parts[w].nb;
            }
            int nt = np < br_threads() ? np : br_threads();
            bool par = nt >= 2 && !ps->rt->in_parfor;
            if (par) ps->rt->in_parfor = true;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (par)
            for (int64_t w = 0; w < k; w++) {
                Part *p = &ps->parts[w];
                if (pos[w] >= p->nb || ps->rt->stopped) continue;
                int64_t j1 = pos[w] + period(ps, p->nb);
                if (j1 > p->nb) j1 = p->nb;
                BrPool *prev_pool = br_pool_bind(ps->rt->pool);   /* the run's pool (base.h) */
                rcs[w] = push_of(ps, w, model, pos[w], j1, &pushes[w], &errs[w]);
                br_pool_bind(prev_pool);
            }
            if (par) ps->rt->in_parfor = false;
            for (int64_t w = 0; w < k; w++) {
                Part *p = &ps->parts[w];
                if (pos[w] < p->nb) pos[w] = pos[w] + period(ps, p->nb) < p->nb ? pos[w] + period(ps, p->nb) : p->nb;
                if (rcs[w] && !rc) {   /* the first failing worker's error */
                    rc = rcs[w];
                    if (errs[w].code) *e = errs[w];
                }
            }
            if (!rc && ps->rt->stopped) rc = -1;
            if (!rc && ps->mavg) {
                Value sum = val_none();
                for (int64_t w = 0; w < k && !rc; w++) {
                    if (pushes[w].kind == V_NONE) continue;
                    if (sum.kind == V_NONE) { sum = val_retain(pushes[w]); continue; }
                    Value s = val_none();
                    rc = list_binary(OP_PLUS, sum.l, &pushes[w], true, &s, e);
                    val_release(&sum);
                    sum = s;
                }
                Value cnt = val_double((double)np), avg = val_none();
                if (!rc) rc = list_binary(OP_DIV, sum.l, &cnt, false, &avg, e);
                val_release(&sum);
                if (!rc) { val_release(model); *model = avg; }
            }
            for (int64_t w = 0; w < k && !rc && !ps->mavg; w++) {
                if (pushes[w].kind == V_NONE) continue;
                Value nm = val_none();
                rc = call_agg(ps, model, &pushes[w], &nm, e);
                if (!rc) { val_release(model); *model = nm; }
            }
            for (int64_t w = 0; w < k; w++) val_release(&pushes[w]);
        }
    }
    free(pos);
    free(pushes);
    free(rcs);
    free(errs);
    return rc;
}

int bi_paramserv(Rt *rt, Frame *f, const Instr *h, Value *a, Value *out, BrErr *e)
{
    static const char *const modes[] = { "LOCAL", "REMOTE_SPARK", "FEDERATED" };
    static const char *const utypes[] = { "BSP", "ASP", "SBP" };
    static const char *const freqs[] = { "BATCH", "EPOCH", "NBATCHES" };
    static const char *const schemes[] = { "DISJOINT_CONTIGUOUS", "DISJOINT_ROUND_ROBIN", "DISJOINT_RANDOM",
                                           "OVERLAP_RESHUFFLE" };
    Ps ps = { .rt = rt, .f = f, .e = e, .hp = val_none() };
    int mode;
    if (a[A_MODEL].kind != V_LIST)
        return br_err(e, BR_EARG, "paramserv: model must be a list, not a %s", val_kind_name(a[A_MODEL].kind));
    if (a[A_FEAT].kind != V_MATRIX || a[A_LAB].kind != V_MATRIX)
        return br_err(e, BR_EARG, "paramserv: features and labels must be matrices");
    const MB *X = a[A_FEAT].m, *Y = a[A_LAB].m;
    if (X->rows != Y->rows)
        return br_err(e, BR_EDIM, "paramserv: dimension mismatch: %lld feature rows but %lld label rows",
                      (long long)X->rows, (long long)Y->rows);
    if (enum_arg(&a[A_MODE], "mode", modes, 3, 0, &mode, e)) return e->code;
    if (mode != 0)
        return br_err(e, BR_EARG, "paramserv: mode '%s' is not supported by braid (single machine: use \"LOCAL\")",
                      modes[mode]);
    if (bi_given(&a[A_UTYPE]) && a[A_UTYPE].kind == V_STRING && !strcasecmp(a[A_UTYPE].s->s, "SSP"))
        return br_err(e, BR_EARG, "paramserv: update type 'SSP' is not supported (as in SystemDS)");
    if (enum_arg(&a[A_UTYPE], "utype", utypes, 3, U_ASP, &ps.utype, e) ||
        enum_arg(&a[A_FREQ], "freq", freqs, 3, F_EPOCH, &ps.freq, e) ||
        enum_arg(&a[A_SCHEME], "scheme", schemes, 4, S_DC, &ps.scheme, e)) return e->code;
    if (!bi_given(&a[A_EPOCHS])) return br_err(e, BR_EARG, "paramserv: missing argument 'epochs'");
    if (int_arg(&a[A_EPOCHS], "epochs", 1, &ps.epochs, e) || int_arg(&a[A_BS], "batchsize", 64, &ps.bs, e) ||
        int_arg(&a[A_K], "k", br_threads(), &ps.k, e) || int_arg(&a[A_NBATCHES], "nbatches", 1, &ps.nbatches, e) ||
        int_arg(&a[A_SEED], "seed", -1, &ps.seed, e)) return e->code;
    if (ps.epochs <= 0) return br_err(e, BR_EARG, "paramserv: argument 'epochs' must be positive, got %lld", (long long)ps.epochs);
    if (ps.bs <= 0) return br_err(e, BR_EARG, "paramserv: argument 'batchsize' must be positive, got %lld", (long long)ps.bs);
    if (ps.k <= 0 || ps.k > 1024) return br_err(e, BR_EARG, "paramserv: argument 'k' must be in 1..1024, got %lld", (long long)ps.k);
    if (ps.nbatches <= 0) return br_err(e, BR_EARG, "paramserv: argument 'nbatches' must be positive, got %lld", (long long)ps.nbatches);
    if (bi_given(&a[A_MAVG]) && bi_bool(&a[A_MAVG], "modelAvg", &ps.mavg, e)) return e->code;
    /* he= (homomorphic encryption) exists for federated workers only */
    bool he = false;
    if (bi_given(&a[A_HE]) && bi_bool(&a[A_HE], "he", &he, e)) return e->code;
    if (he) return br_err(e, BR_EARG, "paramserv: he=TRUE needs mode FEDERATED, which braid does not support");
    /* num_backup_workers= (SBP): the rounds here aggregate every worker's
     * push (see above), so it only has to be valid */
    int64_t nbackup = 0;
    if (int_arg(&a[A_NBACKUP], "num_backup_workers", 0, &nbackup, e)) return e->code;
    if (nbackup < 0 || (bi_given(&a[A_NBACKUP]) && nbackup >= ps.k))
        return br_err(e, BR_EARG, "paramserv: num_backup_workers must be in 0..k-1 (k = %lld), got %lld",
                      (long long)ps.k, (long long)nbackup);
    if (ps.mavg && ps.utype == U_ASP)
        return br_err(e, BR_EARG, "paramserv: modelAvg=TRUE is supported with utype BSP or SBP only");
    if (ps.seed == -1) ps.seed = rt_next_seed(rt);   /* -seed N (runtime/seeds.c); else stays -1 */
    if (ps.seed == -1 && (ps.scheme == S_DR || ps.scheme == S_OR)) ps.seed = k_fresh_seed();
    if (bi_given(&a[A_HP]) && a[A_HP].kind != V_LIST)
        return br_err(e, BR_EARG, "paramserv: hyperparams must be a list, not a %s", val_kind_name(a[A_HP].kind));
    if (!(ps.upd = find_fn(&ps, h, &a[A_UPD], "upd")) || !(ps.agg = find_fn(&ps, h, &a[A_AGG], "agg"))) return e->code;
    ps.hp = bi_given(&a[A_HP]) ? val_retain(a[A_HP]) : val_list_new(0);
    Value model = val_retain(a[A_MODEL]);
    int rc = partition(&ps, X, Y);
    if (!rc) rc = train(&ps, &model);
    for (int64_t w = 0; ps.parts && w < ps.k; w++) { mb_release(ps.parts[w].x); mb_release(ps.parts[w].y); }
    free(ps.parts);
    val_release(&ps.hp);
    if (rc) { val_release(&model); return rc; }
    *out = model;
    return 0;
}
