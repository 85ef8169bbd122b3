/* api.c: the embedding API (include/braid.h) over the loader, the plan
 * builder and the interpreter. */
#include "../include/braid.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../base/diag.h"
#include "../lang/load.h"
#include "../plan/build.h"
#include "../runtime/interp.h"
#include "script.h"



static char *dupmsg(const char *m) { return m ? strdup(m) : strdup("unknown error"); }

/* braid_set_home's folder (an installed Python package's copy of the
 * library); written once before scripts are prepared */
static char *api_home;

void braid_set_home(const char *dir)
{
    free(api_home);
    api_home = dir ? strdup(dir) : NULL;
}

char *api_builtin_dir(void)
{
    const char *home = getenv("BRAID_HOME");
    if (!home) home = api_home;
    char buf[8192];
#ifdef BRAID_SOURCE_DIR
    snprintf(buf, sizeof buf, "%s/scripts/builtin", home ? home : BRAID_SOURCE_DIR);
#else
    snprintf(buf, sizeof buf, "%s/scripts/builtin", home ? home : ".");
#endif
    return strdup(buf);
}

static RtProgram *build_prog(BraidScript *s);

static BraidScript *prepare(const char *text, const char *path, const char *const *an,
                            const char *const *av, int nargs, const char *const *inputs, int ninputs,
                            const char *const *outputs, int noutputs, char **err)
{
    BraidScript *s = calloc(1, sizeof *s);
    if (!s) { if (err) *err = dupmsg("out of memory"); return NULL; }
    s->diag = diag_new();
    s->bdir = api_builtin_dir();
    s->inputs = calloc((size_t)ninputs + 1, sizeof(char *));
    s->transposed = calloc((size_t)ninputs + 1, sizeof(bool));
    s->outputs = calloc((size_t)noutputs + 1, sizeof(char *));
    for (int i = 0; i < ninputs; i++) s->inputs[i] = strdup(inputs[i]);
    for (int i = 0; i < noutputs; i++) s->outputs[i] = strdup(outputs[i]);
    s->ninputs = ninputs;
    s->noutputs = noutputs;
    st_init(&s->bound);
    st_init(&s->results);
    LangOptions lo = {.builtin_dir = s->bdir, .arg_names = an, .arg_values = av, .nargs = nargs,
                      .predefined = (const char *const *)s->inputs, .npredefined = ninputs};
    s->ast = text ? lang_load_string(text, "<script>", &lo, s->diag) : lang_load_file(path, &lo, s->diag);
    if (!s->ast || diag_nerrors(s->diag) || !(s->prog = build_prog(s))) {
        if (err) *err = dupmsg(diag_first_message(s->diag));
        braid_script_free(s);
        return NULL;
    }
    return s;
}

/* The fusion options of s's programs: sysds.compressed.linalg reaches the
 * planner (plan/build.c marks what the run time compresses). */
static CgOptions script_cg(const BraidScript *s)
{
    return (CgOptions){.enabled = true, .plancache = true, .policy = CG_COST_BASED, .async = true,
                       .cla = s->cla};
}

/* s's program from its AST, outputs live to the end; NULL on errors (in
 * s->diag). */
static RtProgram *build_prog(BraidScript *s)
{
    CgOptions cg = script_cg(s);
    RtProgram *p = plan_build_program_outputs(s->ast, s->diag, 2, &cg, (const char *const *)s->outputs,
                                              s->noutputs);
    if (!p || diag_nerrors(s->diag)) {
        plan_program_free(p);
        return NULL;
    }
    NameSet outs = {0}, in = {0};
    for (int i = 0; i < s->noutputs; i++) ns_add(&outs, s->outputs[i]);
    plan_liveness(&p->main, &outs, &in);
    ns_free(&outs);
    ns_free(&in);
    return p;
}

int braid_set_compressed_linalg(BraidScript *s, const char *mode)
{
    int cla = !mode ? -1 : !strcasecmp(mode, "false") ? RT_CLA_OFF : !strcasecmp(mode, "true") ? RT_CLA_ON
            : !strcasecmp(mode, "auto") ? RT_CLA_AUTO : -1;
    if (cla < 0) {
        char m[300];
        snprintf(m, sizeof m, "sysds.compressed.linalg must be true, false or auto, not '%.200s'",
                 mode ? mode : "(null)");
        return api_fail(s, m);
    }
    if (cla == s->cla) return 0;
    int old = s->cla;
    s->cla = cla;
    RtProgram *p = build_prog(s);
    if (!p) {
        s->cla = old;
        return api_fail(s, diag_first_message(s->diag));
    }
    plan_program_free(s->prog);
    s->prog = p;
    plan_program_free(s->tprog);   /* the transposed variant is rebuilt on use */
    free(s->tmain);
    free(s->tpattern);
    s->tprog = NULL;
    s->tmain = NULL;
    s->tpattern = NULL;
    return 0;
}

BraidScript *braid_prepare(const char *script, const char *const *inputs, int ninputs,
                           const char *const *outputs, int noutputs, char **err)
{
    return prepare(script, NULL, NULL, NULL, 0, inputs, ninputs, outputs, noutputs, err);
}

BraidScript *braid_prepare_file(const char *path, const char *const *arg_names,
                                const char *const *arg_values, int nargs,
                                const char *const *inputs, int ninputs,
                                const char *const *outputs, int noutputs, char **err)
{
    return prepare(NULL, path, arg_names, arg_values, nargs, inputs, ninputs, outputs, noutputs, err);
}

void braid_script_free(BraidScript *s)
{
    if (!s) return;
    st_free(&s->bound);
    st_free(&s->results);
    br_pool_free(s->pool);
    plan_program_free(s->prog);
    plan_program_free(s->tprog);
    free(s->tmain);
    lang_program_free(s->ast);
    free(s->transposed);
    free(s->tpattern);
    diag_free(s->diag);
    for (int i = 0; i < s->ninputs; i++) free(s->inputs[i]);
    for (int i = 0; i < s->noutputs; i++) free(s->outputs[i]);
    free(s->inputs);
    free(s->outputs);
    free(s->bdir);
    free(s->recompiled);
    free(s->recompiled_dot);
    free(s->printed);
    api_free_loops(s);
    free(s);
}

int api_fail(BraidScript *s, const char *msg)
{
    size_t n = strlen(msg) < sizeof s->err ? strlen(msg) : sizeof s->err - 1;
    memcpy(s->err, msg, n);
    s->err[n] = 0;
    return -1;
}

static int bind_as(BraidScript *s, const char *name, Value v, bool transposed)
{
    int i = 0;
    while (i < s->ninputs && strcmp(s->inputs[i], name)) i++;
    if (i == s->ninputs) {
        val_release(&v);
        char m[300];
        snprintf(m, sizeof m, "'%s' is not a declared input of the script", name);
        return api_fail(s, m);
    }
    if (st_put(&s->bound, s->inputs[i], v)) return api_fail(s, "out of memory");
    s->transposed[i] = transposed;
    return 0;
}

int api_bind(BraidScript *s, const char *name, Value v) { return bind_as(s, name, v, false); }
int api_bind_transposed(BraidScript *s, const char *name, Value v) { return bind_as(s, name, v, true); }

/* The variant of prog whose first statements are X = t(X) for each
 * transposed input X: the rewrites see t(view) in the DAG of the
 * script's first block (t(t(V)) -> V, t(X) %*% X -> tsmm, ...). */
static RtProgram *build_transposed(BraidScript *s)
{
    const char **names = malloc((size_t)(s->ninputs + 1) * sizeof *names);
    bool *pattern = malloc((size_t)(s->ninputs + 1) * sizeof *pattern);
    int n = 0;
    if (!names || !pattern) goto oom;
    for (int i = 0; i < s->ninputs; i++)
        if ((pattern[i] = s->transposed[i])) names[n++] = s->inputs[i];
    Block *main = lang_main_transposed(s->ast, names, n);
    if (!main) goto oom;
    CgOptions cg = script_cg(s);
    RtProgram *p = plan_build_program_main(s->ast, main, s->diag, 2, &cg, (const char *const *)s->outputs,
                                           s->noutputs);
    free(names);
    if (!p) {
        free(main);
        free(pattern);
        api_fail(s, diag_first_message(s->diag));
        return NULL;
    }
    plan_program_free(s->tprog);   /* the last pattern's, then its statements */
    free(s->tmain);
    free(s->tpattern);
    s->tprog = p;
    s->tmain = main;
    s->tpattern = pattern;
    return p;
oom:
    free(names);
    free(pattern);
    api_fail(s, "out of memory");
    return NULL;
}

RtProgram *api_program(BraidScript *s)
{
    bool any = false, same = s->tpattern != NULL;
    for (int i = 0; i < s->ninputs; i++) {
        any |= s->transposed[i];
        same = same && s->tpattern[i] == s->transposed[i];
    }
    return !any ? s->prog : same ? s->tprog : build_transposed(s);
}

MB *api_dense_copy(const double *data, int64_t rows, int64_t cols, BrErr *e)
{
    MB *m = mb_dense_uninit(rows, cols, e);
    if (!m) return NULL;
    if (rows > 0 && cols > 0) memcpy(m->d, data, (size_t)(rows * cols) * sizeof(double));
    mb_recount_nnz(m);
    return mb_finish(m, e);
}

int braid_bind_matrix(BraidScript *s, const char *name, const double *data, int64_t rows, int64_t cols)
{
    BrErr e = {0};
    MB *m = api_dense_copy(data, rows, cols, &e);
    return m ? api_bind(s, name, val_matrix(m)) : api_fail(s, e.msg);
}

int braid_bind_double(BraidScript *s, const char *name, double v) { return api_bind(s, name, val_double(v)); }
int braid_bind_int(BraidScript *s, const char *name, int64_t v) { return api_bind(s, name, val_int(v)); }
int braid_bind_bool(BraidScript *s, const char *name, bool v) { return api_bind(s, name, val_bool(v)); }
int braid_bind_string(BraidScript *s, const char *name, const char *v) { return api_bind(s, name, val_string(v)); }

int braid_execute(BraidScript *s)
{
    s->err[0] = 0;
    for (int i = 0; i < s->ninputs; i++)
        if (!st_get(&s->bound, s->inputs[i])) {
            char m[300];
            snprintf(m, sizeof m, "input '%s' is not bound", s->inputs[i]);
            return api_fail(s, m);
        }
    RtProgram *prog = api_program(s);
    if (!prog) return -1;
    size_t pcap = br_pool_default_cap();
    if (!s->pool && pcap) s->pool = br_pool_new(pcap);   /* without memory: none */
    RtOptions ro = {.out = stdout, .seed = -1, .cla = s->cla, .explain_recompile = s->trace, .loop_stats = s->count_loops,
                    .pool = s->pool};
    char *trace = NULL, *dots = NULL, *printed = NULL;
    size_t tlen = 0, dlen = 0, plen = 0;
    FILE *dot_out = NULL;
    if ((s->trace && (!(ro.explain_out = open_memstream(&trace, &tlen)) ||
                      !(dot_out = open_memstream(&dots, &dlen)))) ||
        (s->capture && !(ro.out = open_memstream(&printed, &plen)))) {
        if (ro.explain_out) fclose(ro.explain_out);
        if (dot_out) fclose(dot_out);
        free(trace);
        free(dots);
        return api_fail(s, "out of memory");
    }
    if (dot_out) {
        ro.recompiled = api_dot_to_stream;
        ro.recompiled_ctx = dot_out;
    }
    /* the blocks this run frees (the last run's results, its variables)
     * go back to the script's pool too */
    BrPool *prev_pool = br_pool_bind(s->pool);
    Rt rt;
    rt_init(&rt, prog, s->diag, &ro);
    Frame f = {.depth = 0};
    int rc = st_copy(&f.vars, &s->bound) ? rt_fail(&rt, (Span){0}, BR_ENOMEM, "out of memory")
                                          : rt_run_main(&rt, &f);
    if (rc) {
        char m[2048], pos[1000];
        rt_err_pos(&rt, pos, sizeof pos);
        snprintf(m, sizeof m, "%s%s", pos, rt.err.msg);
        api_fail(s, m);
    } else {
        st_free(&s->results);
        st_init(&s->results);
        for (int i = 0; i < s->noutputs; i++) {
            Value *v = st_get(&f.vars, s->outputs[i]);
            if (v && st_put(&s->results, s->outputs[i], val_retain(*v))) {
                api_fail(s, "out of memory");
                rc = -1;
                break;
            }
        }
    }
    st_free(&f.vars);
    if (s->count_loops && api_keep_loops(s, &rt) && !rc) rc = api_fail(s, "out of memory");
    rt_destroy(&rt);
    if (ro.explain_out) {
        fclose(ro.explain_out);
        fclose(dot_out);
        free(s->recompiled);
        free(s->recompiled_dot);
        s->recompiled = trace;
        s->recompiled_dot = dots;
    }
    free(s->printed);   /* what the run printed, also when it failed */
    s->printed = NULL;
    if (s->capture) {
        fclose(ro.out);
        s->printed = printed;
    }
    br_pool_bind(prev_pool);
    return rc ? -1 : 0;
}

void braid_capture_output(BraidScript *s, bool on) { s->capture = on; }

const char *braid_output(const BraidScript *s) { return s->printed ? s->printed : ""; }

int braid_get_matrix(BraidScript *s, const char *name, double **data, int64_t *rows, int64_t *cols)
{
    Value *v = st_get(&s->results, name);
    if (!v) return api_fail(s, "no such output (or the script did not assign it)");
    BrErr e = {0};
    if (val_is_numeric(v)) {
        *data = malloc(sizeof(double));
        **data = val_as_double(v);
        *rows = *cols = 1;
        return 0;
    }
    if (v->kind != V_MATRIX) return api_fail(s, "output is not a matrix");
    MB *d = mb_to_dense(v->m, &e);
    if (!d) return api_fail(s, e.msg);
    size_t n = (size_t)(d->rows * d->cols);
    *data = malloc(n ? n * sizeof(double) : 1);
    if (n) memcpy(*data, d->d, n * sizeof(double));
    *rows = d->rows;
    *cols = d->cols;
    mb_release(d);
    return 0;
}

int braid_get_double(BraidScript *s, const char *name, double *out)
{
    Value *v = st_get(&s->results, name);
    if (!v) return api_fail(s, "no such output (or the script did not assign it)");
    if (val_is_numeric(v) || (v->kind == V_MATRIX && v->m->rows == 1 && v->m->cols == 1)) {
        *out = val_as_double(v);
        return 0;
    }
    return api_fail(s, "output is not a scalar");
}

int braid_get_int(BraidScript *s, const char *name, int64_t *out)
{
    Value *v = st_get(&s->results, name);
    if (!v) return api_fail(s, "no such output (or the script did not assign it)");
    if (v->kind == V_INT || v->kind == V_BOOL) { *out = v->kind == V_INT ? v->i : v->b; return 0; }
    double d;
    if (braid_get_double(s, name, &d)) return -1;
    if (d != (double)(int64_t)d) return api_fail(s, "output is not an integer");
    *out = (int64_t)d;
    return 0;
}

int braid_get_string(BraidScript *s, const char *name, char **out)
{
    Value *v = st_get(&s->results, name);
    if (!v) return api_fail(s, "no such output (or the script did not assign it)");
    if (!val_is_scalar(v)) return api_fail(s, "output is not a scalar");
    *out = val_text(v, false);
    return 0;
}

const char *braid_error(const BraidScript *s) { return s ? s->err : "no script"; }
void braid_set_threads(int n) { br_set_threads(n); }
void braid_free(void *p) { free(p); }
