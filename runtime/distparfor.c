/* distparfor.c: remote parfor on the MPI ranks (seed 002's remote parfor
 * jobs; SystemDS's parfor(..., mode=REMOTE_SPARK)). Rank 0 collects the
 * frame's distributed variables, sends the frame (scalars, strings,
 * matrices) and the iteration range as one task (dist/disttask.c); every
 * rank, rank 0 included, runs iterations r, r + N, r + 2N, ... of the
 * loop body locally, on its threads where the loop and the memory budget
 * allow (the task carries the loop as rank 0 compiled it, planship.c;
 * where it cannot, workers compile the script: the same script,
 * arguments and configuration give the same program, and the loop is
 * found by its function and its position in the script) and returns its
 * result variables; rank 0 merges them as the local parfor does
 * (rt_parfor_merge: compare with the original, accumulators summed). */
#include "distexec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/strbuf.h"
#include "planship.h"
#include "wire.h"
#include "../dist/dist.h"
#include "../lang/load.h"

#define TASK_MAGIC 0x50465232u   /* "PFR2" */

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
    w_put_name(b, fp ? fp->func->ns : "");
    w_put_name(b, fp ? fp->func->name : "");
    return fp && !ps_put_sig(b, fp->func, fp->sig) ? -1 : fp ? 0 : (w_put(b, &(uint8_t){0}, 1), 0);
}

/* The function a task's loop is in, compiled here as on rank 0 (the same
 * specialization, found or compiled now, and kept for later tasks). */
static FProg *task_func(Rt *rt, WRd *r, const char *ns, const char *name, BrErr *e)
{
    Func *fn = lang_find_func(rt->prog->ast, ns, name);
    if (!fn || r->bad) return NULL;
    bool has;
    FSig *sig = ps_get_sig(r, fn, &has, e);
    if (!has) return r->bad ? NULL : rt->prog->hooks->function(rt->prog, fn, rt->diag);
    FProg *fp = sig ? rt->prog->hooks->function_sig(rt->prog, fn, sig, rt->diag) : NULL;
    ps_free_sig(fn, sig);
    return fp;
}

/* A worker's program and runtime: the shell its shipped plans join
 * (parsed, nothing compiled), or the whole script compiled (tasks whose
 * plan could not be shipped). */
typedef struct WProg {
    RtProgram *prog;
    Rt rt;
    bool tried;
} WProg;

/* Workers: their programs, made on the first task that needs them. */
static struct {
    RtProgram *(*compile)(void *arg, bool full, Diag **d);
    void *arg;
    RtOptions ro;
    WProg shell, full;
    PsCache *cache;   /* the plans shipped so far */
} g_w;

/* Rank 0's runtime while its share runs. */
static Rt *g_rt0;

/* What a task did to a worker's program: plans decoded now, programs
 * and functions compiled now (the -stats check that workers run the
 * shipped plan), shipped copies dropped, functions received from rank 0
 * on request, the counts before it. */
typedef struct WShare { int32_t decoded, compiled, dups, fetched, funcs0, shipped0, dups0, fetched0; } WShare;
#define WSHARE_SENT 4   /* the fields a worker's result carries */
static int32_t g_built;   /* programs the task's worker compiled first */

/* ---- functions from rank 0 on request ----
 * A worker's shell program holds the functions its plans shipped. A call
 * of one it does not hold (eval of a builtin library function by a name
 * built at run time: no candidate ships for it, docs/dist.md) asks rank
 * 0, while the shares run, for the function as rank 0 compiled it
 * (compiled there now if it had not been), with the functions it calls,
 * as a plan of functions (planship.c ps_pack_func); the worker compiles
 * nothing. Rank 0 answers ANS_OK and the plan's bytes, or 0 and why it
 * cannot (it does not find the function by the name the worker's
 * script gave it, or the function does not compile there): the worker's
 * call then fails with that reason. */
#define ANS_OK 1
#define ANS_NONE 2   /* REQ_LIB: rank 0 has no library file of that name */
#define REQ_FUNC 1   /* a function's plan */
#define REQ_LIB 2    /* a builtin library file's text */
static pthread_mutex_t g_fetch_lock = PTHREAD_MUTEX_INITIALIZER;
static int32_t g_fetched;             /* functions a worker received */
static __thread char tl_why[320];     /* why this thread's last request failed */

const char *rt_dist_fetch_why(void) { return tl_why[0] ? tl_why : NULL; }

/* Rank 0's answer to a request for the library file of function name:
 * ANS_OK, its path, canonical path and text, ANS_NONE when it has none,
 * or 0 and why not (a damaged request). */
static int serve_lib(Rt *rt, WRd *r, char **ans, size_t *alen)
{
    const char *name = w_get_name(r);
    LangSource src;
    StrBuf o = {0};
    bool has = name && !r->bad && lang_library_source(rt->prog->ast, name, &src);
    if (name && !r->bad) dist_note_ask(has ? 1 : 2);
    if (has) {
        w_put(&o, &(uint8_t){ANS_OK}, 1);
        w_put_name(&o, src.path);
        w_put_name(&o, src.canon);
        w_put(&o, &(uint64_t){src.len}, sizeof(uint64_t));
        w_put(&o, src.text, src.len);
    } else if (name && !r->bad) {
        w_put(&o, &(uint8_t){ANS_NONE}, 1);
    } else {
        const char *msg = "a damaged request";
        w_put(&o, &(uint8_t){0}, 1);
        w_put(&o, msg, strlen(msg));
    }
    if (o.oom) { free(o.s); return -1; }
    *ans = o.s, *alen = o.n;
    return 0;
}

/* Do the worker's parameter names (the request's rest) match fn's, the
 * function rank 0 compiled? Else why not, in msg. */
static bool same_params(WRd *r, const Func *fn, char *msg, size_t cap)
{
    int32_t nin = w_get_i32(r);
    if (r->bad || nin < 0) { snprintf(msg, cap, "a damaged request"); return false; }
    char theirs[160] = "", ours[160] = "";
    bool same = nin == fn->nin;
    for (int32_t i = 0; i < nin || i < fn->nin; i++) {
        const char *t = i < nin ? w_get_name(r) : NULL;
        if (i < nin && (r->bad || !t)) { snprintf(msg, cap, "a damaged request"); return false; }
        same = same && t && !strcmp(t, fn->in[i].name);
        if (t) snprintf(theirs + strlen(theirs), sizeof theirs - strlen(theirs), "%s%s", i ? ", " : "", t);
        if (i < fn->nin)
            snprintf(ours + strlen(ours), sizeof ours - strlen(ours), "%s%s", i ? ", " : "", fn->in[i].name);
    }
    if (!same)
        snprintf(msg, cap, "its parameters there (%.100s) are not rank 0's (%.100s) (do the ranks' libraries differ?)",
                 theirs, ours);
    return same;
}

/* Rank 0's answer to request req[0..n): REQ_LIB and a library file's
 * function name (serve_lib), or REQ_FUNC, the namespace key and name of
 * a function, its specialization's signature or none, the worker's
 * parameter names for it and the functions it holds (rt_dist_func_request):
 * these travel by their heads only (ps_pack_func). */
int rt_dist_serve(Rt *rt, const char *req, size_t n, char **ans, size_t *alen)
{
    WRd r = {req, req + n, false};
    uint8_t kind = w_get_u8(&r);
    if (kind == REQ_LIB) return serve_lib(rt, &r, ans, alen);
    dist_note_ask(0);
    const char *ns = w_get_name(&r), *name = w_get_name(&r);
    Func *fn = kind == REQ_FUNC && name && !r.bad ? ps_find_func(rt->prog->ast, ns ? ns : "", name) : NULL;
    StrBuf o = {0};
    w_put(&o, &(uint8_t){ANS_OK}, 1);
    Diag *d = diag_new();
    const char *why = kind != REQ_FUNC || !name || r.bad ? "a damaged request" : NULL;
    char msg[300] = "";
    if (!why && !fn)
        snprintf(msg, sizeof msg, "it finds no function '%.200s' (do the ranks' libraries differ?)", name);
    if (!why && fn) {
        bool has;
        BrErr e = {0};
        FSig *sig = ps_get_sig(&r, fn, &has, &e);
        int sent[2] = {0, 0};
        int rc = has && !sig ? (why = "a damaged request", 1)
               : !same_params(&r, fn, msg, sizeof msg) ? 1
               : ps_pack_func(rt->prog, fn, sig, &r, d, &o, &why, sent);
        if (rc == 0) dist_note_answer(sent[0], sent[1], o.n);
        ps_free_sig(fn, sig);
        if (rc < 0) { diag_free(d); free(o.s); return -1; }
        const char *dm = rc > 0 && why ? diag_first_message(d) : NULL;
        if (rc > 0 && why) snprintf(msg, sizeof msg, "%s%s%.200s", why, dm ? ": " : "", dm ? dm : "");
    }
    if (why && !msg[0]) snprintf(msg, sizeof msg, "%s", why);
    diag_free(d);
    if (msg[0]) {
        o.n = 0;
        w_put(&o, &(uint8_t){0}, 1);
        w_put(&o, msg, strlen(msg));
    }
    if (o.oom) { free(o.s); return -1; }
    *ans = o.s, *alen = o.n;
    return 0;
}

static int serve_func(const char *req, size_t n, char **ans, size_t *alen)
{
    return g_rt0 ? rt_dist_serve(g_rt0, req, n, ans, alen) : -1;
}

int rt_dist_func_request(StrBuf *q, const Func *fn, const FSig *sig, RtProgram *p, BrErr *e)
{
    w_put(q, &(uint8_t){REQ_FUNC}, 1);
    w_put_name(q, fn->ns);
    w_put_name(q, fn->name);
    bool sok = ps_put_sig(q, fn, sig);
    w_put_i32(q, fn->nin);   /* rank 0 checks them against its function */
    for (int i = 0; i < fn->nin; i++) w_put_name(q, fn->in[i].name);
    if (!p) w_put_i32(q, 0);
    else if (!ps_put_held(q, p)) return br_err(e, BR_ENOMEM, "out of memory");
    if (!sok) return br_err(e, BR_EFAIL, "a specialization for a list cannot be asked for");
    return q->oom ? br_err(e, BR_ENOMEM, "out of memory") : 0;
}

int rt_dist_func_answer(const char *a, size_t n, const char **plan, size_t *len, BrErr *e)
{
    *plan = NULL, *len = 0;
    if (n == 0 || (uint8_t)a[0] != ANS_OK)
        return br_err(e, BR_EFAIL, "rank 0 could not send it: %.*s", n > 1 ? (int)(n - 1) : 23,
                      n > 1 ? a + 1 : "it answers no requests");
    WRd r = {a + 1, a + n, false};
    uint64_t l = w_get_u64(&r);
    const char *p = r.bad ? NULL : w_take(&r, l);
    if (!p || r.p != r.end) return br_err(e, BR_EFAIL, "rank %d: rank 0's answer is damaged", dist_rank());
    *plan = p, *len = (size_t)l;
    return 0;
}

/* RtProgram.fetch of a worker's shell program: fn (for sig) from rank 0. */
static FProg *fetch_func(RtProgram *p, Func *fn, const FSig *sig, Diag *d)
{
    (void)d;
    tl_why[0] = 0;
    BrErr e = {0};
    pthread_mutex_lock(&g_fetch_lock);
    FProg *fp = ps_held(p, fn, sig);   /* another thread's request brought it */
    if (!fp) {
        StrBuf q = {0};
        size_t n = 0, len;
        char *a = rt_dist_func_request(&q, fn, sig, p, &e) ? NULL : dist_task_ask(q.s, q.n, &n, &e);
        free(q.s);
        const char *plan;
        if (a && !rt_dist_func_answer(a, n, &plan, &len, &e)) fp = ps_func(&g_w.cache, p, plan, len, fn, &e);
        g_fetched += fp != NULL;
        free(a);
    }
    pthread_mutex_unlock(&g_fetch_lock);
    if (!fp) snprintf(tl_why, sizeof tl_why, "%.300s", e.msg[0] ? e.msg : "rank 0 could not send it");
    return fp;
}

/* LangOptions.lib_fetch of a worker's program: the builtin library file
 * of function name from rank 0 (a worker reads no library file of its
 * own: rank 0's texts give rank 0's functions, parameter names
 * included). 0 when rank 0 has none, -1 when it could not be asked
 * (outside a task) or its answer was damaged. */
int rt_dist_lib_fetch(void *arg, const char *name, LangSource *s)
{
    (void)arg;
    StrBuf q = {0};
    w_put(&q, &(uint8_t){REQ_LIB}, 1);
    w_put_name(&q, name);
    BrErr e = {0};
    size_t n = 0;
    char *a = q.oom ? NULL : dist_task_ask(q.s, q.n, &n, &e);
    free(q.s);
    bool ok = false, none = a && n == 1 && (uint8_t)a[0] == ANS_NONE;
    if (a && n > 0 && (uint8_t)a[0] == ANS_OK) {
        WRd r = {a + 1, a + n, false};
        const char *path = w_get_name(&r), *canon = w_get_name(&r);
        uint64_t len = w_get_u64(&r);
        const char *text = r.bad ? NULL : w_take(&r, len);
        if (path && canon && text && r.p == r.end) {
            char *t = malloc(len + 1);
            *s = (LangSource){strdup(path), strdup(canon), t, len};
            if (t) memcpy(t, text, len), t[len] = 0;
            ok = s->path && s->canon && t;
            if (!ok) {
                free((char *)s->path), free((char *)s->canon), free(t);
                *s = (LangSource){0};
            }
        }
    }
    free(a);
    return ok ? 1 : none ? 0 : -1;
}

/* The loop of the plan bytes in a task (unpacked, or from the cache). */
static PBlock *shipped_loop(Rt *rt, const char *plan, size_t n, WShare *ws, BrErr *e)
{
    bool fresh;
    PBlock *b = ps_loop(&g_w.cache, rt->prog, plan, n, &fresh, e);
    ws->decoded += fresh;
    return b;
}

/* The loop a task names, in this rank's program. */
static PBlock *task_loop(Rt *rt, WRd *r, const TaskHead *h, bool skip, BrErr *e)
{
    const char *ns = w_get_name(r), *name = w_get_name(r);
    if (h->magic != TASK_MAGIC || r->bad || !name) return NULL;
    if (skip) {   /* the loop came with its plan: only read past its place */
        Func *fn = name[0] ? lang_find_func(rt->prog->ast, ns, name) : NULL;
        bool has = w_get_u8(r) != 0;
        if (has && !fn) r->bad = true;
        if (has && fn) {
            *r = (WRd){r->p - 1, r->end, r->bad};
            ps_free_sig(fn, ps_get_sig(r, fn, &has, e));
        }
        return NULL;
    }
    if (!name[0]) {
        w_get_u8(r);
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
    WRd r = {payload, payload + n, false};
    TaskHead h;
    w_get(&r, &h, sizeof h);
    /* the plan rank 0 compiled (workers), else the loop's place */
    PBlock *b = NULL;
    WShare ws = {.compiled = g_built, .funcs0 = rt->prog->nfuncs, .shipped0 = ps_funcs(g_w.cache),
                 .dups0 = ps_dups(g_w.cache), .fetched0 = g_fetched};
    g_built = 0;
    if (w_get_u8(&r)) {
        uint64_t len = w_get_u64(&r);
        const char *plan = w_take(&r, len);
        if (plan && rt != g_rt0) b = shipped_loop(rt, plan, len, &ws, e);
        if (!b && e->code) return -1;
    }
    PBlock *own = task_loop(rt, &r, &h, b != NULL, e);
    if (!b) b = own;
    if (!b && e->code) return -1;
    if (!b) return br_err(e, BR_EFAIL, "rank %d: no parfor at line %d, column %d of its program", dist_rank(), h.line, h.col);
    Frame f = {.depth = 0};
    st_init(&f.vars);
    int32_t nv = w_get_i32(&r);
    for (int32_t i = 0; i < nv && !r.bad; i++) {
        const char *name = w_get_name(&r);
        Value v = w_get_value(&r, e);
        if (name && v.kind != V_NONE && st_put(&f.vars, name, v)) r.bad = true;
    }
    int rc = r.bad ? br_err(e, BR_EFAIL, "rank %d: a damaged parfor task", dist_rank()) : 0;
    /* rank r's iterations, as the local parfor deals them to threads */
    rt->err = (BrErr){0};
    rt->stopped = false;
    int32_t deg = 1;
    /* iteration k draws the seeds of (the loop's base, k), whatever rank runs it */
    if (!rc && rt_parfor_share(rt, &f, b, h.from, h.incr, h.ints != 0, h.n, dist_rank(), dist_size(), h.sbase, &deg)) {
        /* the error with its place: rank 0 reports it there (file:line:col) */
        rc = br_err(e, rt->err.code ? rt->err.code : BR_EFAIL, "%s", rt->err.msg[0] ? rt->err.msg : "parfor body failed");
        if (rt->err.at.line > 0) e->at = rt->err.at;
    }
    StrBuf out = {0};
    int32_t nr = b->results.n + b->accums.n;
    w_put(&out, &deg, sizeof deg);   /* the threads this rank used */
    if (rt != g_rt0) ws.compiled += rt->prog->nfuncs - ws.funcs0 - (ps_funcs(g_w.cache) - ws.shipped0);
    ws.dups = ps_dups(g_w.cache) - ws.dups0;
    ws.fetched = rt != g_rt0 ? g_fetched - ws.fetched0 : 0;
    /* plans decoded, programs and functions compiled, copies dropped, functions from rank 0 */
    w_put(&out, &ws, WSHARE_SENT * sizeof(int32_t));
    w_put(&out, &nr, sizeof nr);
    for (int i = 0; i < nr && !rc; i++) {
        const char *name = i < b->results.n ? b->results.v[i] : b->accums.v[i - b->results.n];
        const Value *v = st_get(&f.vars, name);
        w_put_name(&out, name);
        uint8_t has = v && v->kind == V_MATRIX;
        w_put(&out, &has, 1);
        if (has) w_put_value(&out, v);
    }
    st_free(&f.vars);
    if (!rc && out.oom) rc = br_err(e, BR_ENOMEM, "out of memory");
    if (rc) { free(out.s); return -1; }
    *res = out.s, *rlen = out.n;
    return 0;
}

static Rt *worker_rt(WProg *w, bool full, int32_t *built)
{
    if (!w->tried) {
        Diag *d = NULL;
        w->tried = true;
        w->prog = g_w.compile(g_w.arg, full, &d);
        *built += full && w->prog;
        if (w->prog && !full) w->prog->fetch = fetch_func;   /* the shell asks rank 0 for functions */
        if (w->prog) {
            rt_init(&w->rt, w->prog, d, &g_w.ro);
            w->rt.no_dist = true;   /* a worker runs its iterations itself */
        }
    }
    return w->prog ? &w->rt : NULL;
}

static int worker_task(const char *payload, size_t n, char **res, size_t *rlen, BrErr *e)
{
    /* a task with its plan runs in the shell, else the script is compiled */
    WRd r = {payload, payload + n, false};
    TaskHead h;
    w_get(&r, &h, sizeof h);
    bool plan = w_get_u8(&r) != 0;
    int32_t built = 0;
    Rt *rt = worker_rt(plan ? &g_w.shell : &g_w.full, !plan, &built);
    if (!rt) return br_err(e, BR_EFAIL, "rank %d could not %s the script", dist_rank(), plan ? "load" : "compile");
    /* library names rank 0 had no file for are asked again once per task:
     * between tasks its script may have written one into its folder */
    lang_library_forget(rt->prog->ast);
    g_built = built;
    return run_share(rt, payload, n, res, rlen, e);
}

void rt_dist_parfor_worker(RtProgram *(*compile)(void *arg, bool full, Diag **d), void *arg, const RtOptions *ro)
{
    g_w.compile = compile, g_w.arg = arg, g_w.ro = *ro;
    dist_set_task_runner(worker_task);
}

void rt_dist_parfor_worker_end(RtProgram **shell, RtProgram **full)
{
    WProg *w[2] = {&g_w.shell, &g_w.full};
    for (int i = 0; i < 2; i++) {
        if (w[i]->prog) rt_destroy(&w[i]->rt);
        /* a later run of the process (-then) makes its own on its first
         * task (before, it found this run's gone and its tasks failed:
         * "rank 1 could not load the script") */
        w[i]->tried = false;
    }
    ps_free_loops(g_w.cache);
    *shell = g_w.shell.prog, *full = g_w.full.prog;
    g_w.shell.prog = g_w.full.prog = NULL;
}

void rt_dist_parfor_worker_release(void)
{
    ps_free(g_w.cache);
    g_w.cache = NULL;
}

/* Rank 0's share: its own runtime, locally. */

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
    w_put_name(b, f->vars.keys[i]);
    return w_put_value(b, v) ? 0 : DIST_LOCAL;
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
static int payload(Frame *f, const PBlock *lp, const TaskHead *h, const FProg *fp, const StrBuf *plan, StrBuf *b,
                   BrErr *e)
{
    NameSet reads = {0};
    reads_of(&lp->body, &reads);
    if (reads.oom) { ns_free(&reads); return br_err(e, BR_ENOMEM, "out of memory"); }
    w_put(b, h, sizeof *h);
    w_put(b, &(uint8_t){plan->n > 0}, 1);
    if (plan->n) w_put(b, plan->s, plan->n);
    if (put_place(b, fp)) { ns_free(&reads); return DIST_LOCAL; }
    int32_t nv = 0;
    for (int i = st_next(&f->vars, 0); i >= 0; i = st_next(&f->vars, i + 1))
        nv += shipped(lp, &reads, f->vars.keys[i]);
    w_put(b, &nv, sizeof nv);
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
    /* the compiled loop travels with the task (planship.c), unless
     * something in it cannot: then the workers compile the script */
    StrBuf plan = {0};
    const char *why = NULL;
    int prc = ps_pack(rt->prog, b, rt->diag, &plan, &why);
    if (prc) plan.n = 0;
    int rc = prc < 0 ? br_err(&e, BR_ENOMEM, "out of memory") : payload(f, b, &h, fp, &plan, &pl, &e);
    free(plan.s);
    if (rc) { free(pl.s); return rc == DIST_LOCAL ? DIST_LOCAL : rt_fail(rt, b->span, e.code, "%s", e.msg); }
    int np = dist_size();
    char **res = calloc((size_t)np, sizeof *res);
    size_t *rlen = calloc((size_t)np, sizeof *rlen);
    Frame *w = calloc((size_t)np, sizeof *w);
    if (!res || !rlen || !w) { free(pl.s), free(res), free(rlen), free(w); return rt_fail(rt, b->span, BR_ENOMEM, "out of memory"); }
    g_rt0 = rt;
    dist_set_task_server(serve_func);
    rc = dist_task(pl.s, pl.n, local_task, res, rlen, &e);
    free(pl.s);
    if (rc) {
        /* a rank's error where it arose: the file as rank 0 loaded it
         * (the ranks load rank 0's files under rank 0's names) */
        Span at = b->span;
        if (e.at.line > 0) {
            const char *file = e.at.file ? lang_file_name(rt->prog->ast, e.at.file) : NULL;
            at = (Span){file ? file : e.at.file ? e.at.file : b->span.file, e.at.line, e.at.col};
        }
        rc = rt_fail(rt, at, e.code ? e.code : BR_EFAIL, "%s", e.msg);
    }
    /* every rank's results as a worker frame of the merge */
    int32_t most = 0, decoded = 0, compiled = 0, dups = 0, fetched = 0;
    for (int t = 0; t < np; t++) {
        st_init(&w[t].vars);
        WRd r = {res[t], res[t] + rlen[t], false};
        int32_t deg = rc ? 0 : w_get_i32(&r), built[WSHARE_SENT] = {0};
        if (deg > most) most = deg;
        if (!rc) w_get(&r, built, sizeof built);
        decoded += t > 0 ? built[0] : 0, compiled += t > 0 ? built[1] : 0, dups += t > 0 ? built[2] : 0;
        fetched += t > 0 ? built[3] : 0;
        int32_t nr = rc ? 0 : w_get_i32(&r);
        for (int32_t i = 0; i < nr && !r.bad; i++) {
            const char *name = w_get_name(&r);
            uint8_t has = w_get_u8(&r);
            if (!has || !name) continue;
            /* the frame's own name (the key must outlive the table) */
            const char *key = NULL;
            for (int k = 0; k < b->results.n + b->accums.n; k++) {
                const char *x = k < b->results.n ? b->results.v[k] : b->accums.v[k - b->results.n];
                if (!strcmp(x, name)) key = x;
            }
            Value v = w_get_value(&r, &e);
            if (key && v.kind != V_NONE && st_put(&w[t].vars, key, v)) r.bad = true;
        }
        if (r.bad && !rc) rc = rt_fail(rt, b->span, BR_EFAIL, "a damaged parfor result from rank %d", t);
    }
    if (!rc) dist_note_parfor(most, fp != NULL);
    if (!rc) dist_note_plan(prc == 0, decoded, compiled, dups, why);
    if (!rc) dist_note_fetched(fetched);
    if (!rc) rc = rt_parfor_merge(rt, f, b, w, np);
    for (int t = 0; t < np; t++) { st_free(&w[t].vars); free(res[t]); }
    free(w), free(res), free(rlen);
    return rc;
}
