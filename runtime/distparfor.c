/* distparfor.c: remote parfor on the MPI ranks (seed 002's remote parfor
 * jobs; SystemDS's parfor(..., mode=REMOTE_SPARK)). Rank 0 collects the
 * frame's distributed variables, sends the frame (scalars, strings,
 * matrices) and the iteration range as one task (dist/disttask.c); every
 * rank, rank 0 included, runs iterations r, r + N, r + 2N, ... of the
 * loop body locally, on its threads where the loop and the memory budget
 * allow (workers compile the script on their first task: the same
 * script, arguments and configuration give the same program, and the
 * loop is found by its function and its position in the script; a
 * function's body is compiled on the worker when first needed and kept
 * for later tasks) and returns its
 * result variables; rank 0 merges them as the local parfor does
 * (rt_parfor_merge: compare with the original, accumulators summed). */
#include "distexec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/strbuf.h"
#include "../dist/dist.h"
#include "../lang/load.h"

#define TASK_MAGIC 0x50465232u   /* "PFR2" */

/* ---- values as bytes ---- */

static void put(StrBuf *b, const void *p, size_t n) { sb_put(b, p, n); }

static void put_name(StrBuf *b, const char *s)
{
    uint32_t n = (uint32_t)strlen(s);
    put(b, &n, sizeof n);
    put(b, s, n + 1);
}

/* false: a kind a task does not carry (lists, frames, ...). */
static bool put_value(StrBuf *b, const Value *v)
{
    int32_t k = v->kind;
    switch (v->kind) {
    case V_DOUBLE: put(b, &k, sizeof k); put(b, &v->d, sizeof v->d); return true;
    case V_INT: put(b, &k, sizeof k); put(b, &v->i, sizeof v->i); return true;
    case V_BOOL: { uint8_t x = v->b; put(b, &k, sizeof k); put(b, &x, 1); return true; }
    case V_STRING: {
        uint64_t n = v->s->len;
        put(b, &k, sizeof k), put(b, &n, sizeof n), put(b, v->s->s, n);
        return true;
    }
    case V_MATRIX: {
        size_t n;
        char *m = dist_pack_mb(v->m, &n);
        if (!m) { b->oom = true; return true; }
        uint64_t len = n;
        put(b, &k, sizeof k), put(b, &len, sizeof len), put(b, m, n);
        free(m);
        return true;
    }
    default: return false;
    }
}

typedef struct Rd { const char *p, *end; bool bad; } Rd;

static const void *take(Rd *r, size_t n)
{
    if (r->bad || (size_t)(r->end - r->p) < n) { r->bad = true; return NULL; }
    const void *q = r->p;
    r->p += n;
    return q;
}

/* n bytes into out (zeros past the end, which marks r bad) */
static void get(Rd *r, void *out, size_t n)
{
    const void *q = take(r, n);
    if (q) memcpy(out, q, n);
    else memset(out, 0, n);
}

static int32_t get_i32(Rd *r) { int32_t x; get(r, &x, sizeof x); return x; }
static uint64_t get_u64(Rd *r) { uint64_t x; get(r, &x, sizeof x); return x; }
static uint8_t get_u8(Rd *r) { uint8_t x; get(r, &x, 1); return x; }

/* A name inside the buffer (NUL-terminated there). */
static const char *get_name(Rd *r)
{
    uint32_t n;
    get(r, &n, sizeof n);
    const char *s = take(r, (size_t)n + 1);
    return s && s[n] == 0 ? s : (r->bad = true, NULL);
}

static Value get_value(Rd *r, BrErr *e)
{
    int32_t k = get_i32(r);
    switch (k) {
    case V_DOUBLE: { double d; get(r, &d, sizeof d); return val_double(d); }
    case V_INT: { int64_t i; get(r, &i, sizeof i); return val_int(i); }
    case V_BOOL: return val_bool(get_u8(r) != 0);
    case V_STRING: {
        uint64_t n = get_u64(r);
        const char *s = take(r, n);
        return s ? val_string_n(s, n) : val_none();
    }
    case V_MATRIX: {
        uint64_t n = get_u64(r);
        const char *s = take(r, n);
        MB *m = s ? dist_unpack_mb(s, n, e) : NULL;
        return m ? val_matrix(m) : val_none();
    }
    default: r->bad = true; return val_none();
    }
}

/* ---- the loop ---- */

typedef struct TaskHead {
    uint32_t magic;
    int32_t line, col, ints;
    double from, incr;
    int64_t n;
    uint64_t sbase;   /* the loop's seed base (runtime/seeds.c) */
} TaskHead;

/* The head is followed by the loop's place: the namespace key and name of
 * the function holding it (two empty names: the main program). */

/* The parfor block at a position of the script. */
static PBlock *find_loop(PBList *l, int line, int col)
{
    for (int i = 0; i < l->n; i++) {
        PBlock *b = l->v[i];
        if (b->kind == PB_FOR && b->parfor && b->span.line == line && b->span.col == col) return b;
        PBlock *x = find_loop(&b->body, line, col);
        if (!x) x = find_loop(&b->els, line, col);
        if (x) return x;
    }
    return NULL;
}

/* Does list l hold block x (at any depth)? */
static bool holds(const PBList *l, const PBlock *x)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i] == x || holds(&l->v[i]->body, x) || holds(&l->v[i]->els, x)) return true;
    return false;
}

/* The compiled function (a generic version or a specialization) whose
 * body holds loop b (NULL: the main program or none); *found whether
 * any does. */
static FProg *loop_func(RtProgram *p, const PBlock *b, bool *found)
{
    *found = holds(&p->main, b);
    if (*found) return NULL;
    pthread_mutex_lock(&p->lock);
    FProg *fp = NULL;
    for (int i = 0; i < p->nfuncs && !fp; i++)
        if (holds(&p->funcs[i]->body, b)) fp = p->funcs[i];
    pthread_mutex_unlock(&p->lock);
    *found = fp != NULL;
    return fp;
}

/* The loop's place after the task's head: the namespace key and name of
 * its function (two empty names: the main program) and, for a
 * specialization, what it was compiled for (per parameter: rows, cols and
 * the scalar value or none). Non-zero: a signature value a task does not
 * carry. */
static int put_place(StrBuf *b, const FProg *fp)
{
    put_name(b, fp ? fp->func->ns : "");
    put_name(b, fp ? fp->func->name : "");
    uint8_t has = fp && fp->sig;
    put(b, &has, 1);
    for (int i = 0; has && i < fp->func->nin; i++) {
        put(b, &fp->sig[i].rows, sizeof fp->sig[i].rows);
        put(b, &fp->sig[i].cols, sizeof fp->sig[i].cols);
        int32_t none = V_NONE;
        if (fp->sig[i].v.kind == V_NONE) put(b, &none, sizeof none);
        else if (!put_value(b, &fp->sig[i].v)) return -1;
    }
    return 0;
}

/* The function a task's loop is in, compiled here as on rank 0 (the same
 * specialization, found or compiled now, and kept for later tasks). */
static FProg *task_func(Rt *rt, Rd *r, const char *ns, const char *name, BrErr *e)
{
    Func *fn = lang_find_func(rt->prog->ast, ns, name);
    bool has = get_u8(r) != 0;
    if (!fn || r->bad) return NULL;
    if (!has) return rt->prog->hooks->function(rt->prog, fn, rt->diag);
    FSig *sig = calloc((size_t)fn->nin + 1, sizeof *sig);
    if (!sig) { br_err(e, BR_ENOMEM, "out of memory"); return NULL; }
    for (int i = 0; i < fn->nin; i++) {
        sig[i].rows = (int64_t)get_u64(r);
        sig[i].cols = (int64_t)get_u64(r);
        Rd peek = *r;
        if (get_i32(&peek) == V_NONE) *r = peek, sig[i].v = val_none();
        else sig[i].v = get_value(r, e);
    }
    FProg *fp = r->bad ? NULL : rt->prog->hooks->function_sig(rt->prog, fn, sig, rt->diag);
    for (int i = 0; i < fn->nin; i++) val_release(&sig[i].v);
    free(sig);
    return fp;
}

/* The loop a task names, in this rank's program. */
static PBlock *task_loop(Rt *rt, Rd *r, const TaskHead *h, BrErr *e)
{
    const char *ns = get_name(r), *name = get_name(r);
    if (h->magic != TASK_MAGIC || r->bad) return NULL;
    if (!name[0]) {
        get_u8(r);
        return find_loop(&rt->prog->main, h->line, h->col);
    }
    FProg *fp = task_func(rt, r, ns, name, e);
    if (!fp) {
        if (!e->code) br_err(e, BR_EFAIL, "rank %d: function %s could not be compiled for its parfor", dist_rank(), name);
        return NULL;
    }
    return find_loop(&fp->body, h->line, h->col);
}

/* This rank's iterations of the payload's loop over the shipped frame,
 * on its threads where the loop and memory allow (rt_parfor_share); its
 * result variables as bytes. */
static int run_share(Rt *rt, const char *payload, size_t n, char **res, size_t *rlen, BrErr *e)
{
    Rd r = {payload, payload + n, false};
    TaskHead h;
    get(&r, &h, sizeof h);
    PBlock *b = task_loop(rt, &r, &h, e);
    if (!b && e->code) return -1;
    if (!b) return br_err(e, BR_EFAIL, "rank %d: no parfor at line %d, column %d of its program", dist_rank(), h.line, h.col);
    Frame f = {.depth = 0};
    st_init(&f.vars);
    int32_t nv = get_i32(&r);
    for (int32_t i = 0; i < nv && !r.bad; i++) {
        const char *name = get_name(&r);
        Value v = get_value(&r, e);
        if (name && v.kind != V_NONE && st_put(&f.vars, name, v)) r.bad = true;
    }
    int rc = r.bad ? br_err(e, BR_EFAIL, "rank %d: a damaged parfor task", dist_rank()) : 0;
    /* rank r's iterations, as the local parfor deals them to threads */
    rt->err = (BrErr){0};
    rt->stopped = false;
    int32_t deg = 1;
    /* iteration k draws the seeds of (the loop's base, k), whatever rank runs it */
    if (!rc && rt_parfor_share(rt, &f, b, h.from, h.incr, h.ints != 0, h.n, dist_rank(), dist_size(), h.sbase, &deg))
        rc = rt->err.at.line > 0 ? br_err(e, rt->err.code, "line %d: %s", rt->err.at.line, rt->err.msg)
                                 : br_err(e, BR_EFAIL, "%s", rt->err.msg[0] ? rt->err.msg : "parfor body failed");
    StrBuf out = {0};
    int32_t nr = b->results.n + b->accums.n;
    put(&out, &deg, sizeof deg);   /* the threads this rank used */
    put(&out, &nr, sizeof nr);
    for (int i = 0; i < nr && !rc; i++) {
        const char *name = i < b->results.n ? b->results.v[i] : b->accums.v[i - b->results.n];
        const Value *v = st_get(&f.vars, name);
        put_name(&out, name);
        uint8_t has = v && v->kind == V_MATRIX;
        put(&out, &has, 1);
        if (has) put_value(&out, v);
    }
    st_free(&f.vars);
    if (!rc && out.oom) rc = br_err(e, BR_ENOMEM, "out of memory");
    if (rc) { free(out.s); return -1; }
    *res = out.s, *rlen = out.n;
    return 0;
}

/* Workers: their own runtime over the program compiled on the first task. */
static struct {
    RtProgram *(*compile)(void *arg, Diag **d);
    void *arg;
    RtOptions ro;
    RtProgram *prog;
    Diag *diag;
    Rt rt;
    bool tried;
} g_w;

static int worker_task(const char *payload, size_t n, char **res, size_t *rlen, BrErr *e)
{
    if (!g_w.tried) {
        g_w.tried = true;
        g_w.prog = g_w.compile(g_w.arg, &g_w.diag);
        if (g_w.prog) {
            rt_init(&g_w.rt, g_w.prog, g_w.diag, &g_w.ro);
            g_w.rt.no_dist = true;   /* a worker runs its iterations itself */
        }
    }
    if (!g_w.prog) return br_err(e, BR_EFAIL, "rank %d could not compile the script", dist_rank());
    return run_share(&g_w.rt, payload, n, res, rlen, e);
}

void rt_dist_parfor_worker(RtProgram *(*compile)(void *arg, Diag **d), void *arg, const RtOptions *ro)
{
    g_w.compile = compile, g_w.arg = arg, g_w.ro = *ro;
    dist_set_task_runner(worker_task);
}

void rt_dist_parfor_worker_end(RtProgram **prog, Diag **d)
{
    if (g_w.prog) rt_destroy(&g_w.rt);
    *prog = g_w.prog, *d = g_w.diag;
    g_w.prog = NULL, g_w.diag = NULL;
}

/* Rank 0's share: its own runtime, locally. */
static Rt *g_rt0;

static int local_task(const char *payload, size_t n, char **res, size_t *rlen, BrErr *e)
{
    Rt *rt = g_rt0;
    bool nd = rt->no_dist;
    rt->no_dist = true;   /* its threads run the iterations (no jobs) */
    BrErr keep = rt->err;
    int rc = run_share(rt, payload, n, res, rlen, e);
    rt->no_dist = nd;
    if (!rc) rt->err = keep;
    return rc;
}

/* Variable i of the frame into the payload (a distributed matrix
 * collected first); DIST_LOCAL for a kind a task does not carry. */
static int put_var(Frame *f, int i, StrBuf *b, BrErr *e)
{
    Value *v = &f->vars.vals[i];
    if (v->kind == V_DIST && dist_collect(v, e)) return -1;
    put_name(b, f->vars.keys[i]);
    return put_value(b, v) ? 0 : DIST_LOCAL;
}

/* The variables the blocks of l read (their I_READ instructions, in
 * predicates and loop headers too; a function called reads only its
 * arguments, which are read here). */
static void reads_of(const PBList *l, NameSet *s)
{
    for (int i = 0; i < l->n; i++) {
        const PBlock *b = l->v[i];
        for (int k = 0; b->code && k < b->code->n; k++)
            if (b->code->ins[k].kind == I_READ && b->code->ins[k].name) ns_add(s, b->code->ins[k].name);
        reads_of(&b->body, s);
        reads_of(&b->els, s);
    }
}

/* Does the task carry variable name: one the body reads, or a result
 * (every rank starts from its value)? */
static bool shipped(const PBlock *b, const NameSet *reads, const char *name)
{
    return ns_has(reads, name) || ns_has(&b->results, name) || ns_has(&b->accums, name);
}

/* The frame as a task payload: the variables the body reads and the
 * results, not the rest of the frame; DIST_LOCAL when one is of a kind a
 * task does not carry. Distributed matrices are collected first. */
static int payload(Frame *f, const PBlock *lp, const TaskHead *h, const FProg *fp, StrBuf *b, BrErr *e)
{
    NameSet reads = {0};
    reads_of(&lp->body, &reads);
    if (reads.oom) { ns_free(&reads); return br_err(e, BR_ENOMEM, "out of memory"); }
    put(b, h, sizeof *h);
    if (put_place(b, fp)) { ns_free(&reads); return DIST_LOCAL; }
    int32_t nv = 0;
    for (int i = st_next(&f->vars, 0); i >= 0; i = st_next(&f->vars, i + 1))
        nv += shipped(lp, &reads, f->vars.keys[i]);
    put(b, &nv, sizeof nv);
    int rc = 0;
    for (int i = st_next(&f->vars, 0); i >= 0 && !rc; i = st_next(&f->vars, i + 1)) {
        if (!shipped(lp, &reads, f->vars.keys[i])) continue;
        rc = put_var(f, i, b, e);
    }
    ns_free(&reads);
    if (rc) return rc;
    return b->oom ? br_err(e, BR_ENOMEM, "out of memory") : 0;
}

int rt_dist_parfor(Rt *rt, Frame *f, PBlock *b, double from, double incr, int64_t n, bool ints, uint64_t sbase)
{
    /* the workers find the loop by its function and position */
    bool found;
    FProg *fp = loop_func(rt->prog, b, &found);
    if (!found || (fp && lang_find_func(rt->prog->ast, fp->func->ns, fp->func->name) != fp->func)) return DIST_LOCAL;
    for (int r = 0; r < b->results.n + b->accums.n; r++) {
        const char *name = r < b->results.n ? b->results.v[r] : b->accums.v[r - b->results.n];
        Value *v = st_get(&f->vars, name);
        if (!v || (v->kind != V_MATRIX && v->kind != V_DIST)) return DIST_LOCAL;
    }
    BrErr e = {0};
    TaskHead h = {TASK_MAGIC, b->span.line, b->span.col, ints, from, incr, n, sbase};
    StrBuf pl = {0};
    dist_set_context("parfor", b->span.line);
    int rc = payload(f, b, &h, fp, &pl, &e);
    if (rc) { free(pl.s); return rc == DIST_LOCAL ? DIST_LOCAL : rt_fail(rt, b->span, e.code, "%s", e.msg); }
    int np = dist_size();
    char **res = calloc((size_t)np, sizeof *res);
    size_t *rlen = calloc((size_t)np, sizeof *rlen);
    Frame *w = calloc((size_t)np, sizeof *w);
    if (!res || !rlen || !w) { free(pl.s), free(res), free(rlen), free(w); return rt_fail(rt, b->span, BR_ENOMEM, "out of memory"); }
    g_rt0 = rt;
    rc = dist_task(pl.s, pl.n, local_task, res, rlen, &e);
    free(pl.s);
    if (rc) rc = rt_fail(rt, b->span, e.code ? e.code : BR_EFAIL, "%s", e.msg);
    /* every rank's results as a worker frame of the merge */
    int32_t most = 0;
    for (int t = 0; t < np; t++) {
        st_init(&w[t].vars);
        Rd r = {res[t], res[t] + rlen[t], false};
        int32_t deg = rc ? 0 : get_i32(&r);
        if (deg > most) most = deg;
        int32_t nr = rc ? 0 : get_i32(&r);
        for (int32_t i = 0; i < nr && !r.bad; i++) {
            const char *name = get_name(&r);
            uint8_t has = get_u8(&r);
            if (!has || !name) continue;
            /* the frame's own name (the key must outlive the table) */
            const char *key = NULL;
            for (int k = 0; k < b->results.n + b->accums.n; k++) {
                const char *x = k < b->results.n ? b->results.v[k] : b->accums.v[k - b->results.n];
                if (!strcmp(x, name)) key = x;
            }
            Value v = get_value(&r, &e);
            if (key && v.kind != V_NONE && st_put(&w[t].vars, key, v)) r.bad = true;
        }
        if (r.bad && !rc) rc = rt_fail(rt, b->span, BR_EFAIL, "a damaged parfor result from rank %d", t);
    }
    if (!rc) dist_note_parfor(most, fp != NULL);
    if (!rc) rc = rt_parfor_merge(rt, f, b, w, np);
    for (int t = 0; t < np; t++) { st_free(&w[t].vars); free(res[t]); }
    free(w), free(res), free(rlen);
    return rc;
}
