/* test_dist.c: a remote parfor worker's requests to rank 0, without
 * mpirun (runtime/distparfor.c, docs/dist.md "Functions from rank 0").
 * The request a worker's shell program makes for a function it does not
 * hold (rt_dist_func_request) is answered by rank 0's runtime
 * (rt_dist_serve) and read back (rt_dist_func_answer, ps_func) as over
 * MPI, for:
 * - the generic version and a specialization (a signature with a
 *   matrix's dimensions and a scalar's value): the plan joins the
 *   worker's program, which compiles nothing;
 * - what the worker holds: its request lists it, and rank 0 names those
 *   functions by their heads instead of sending them again (f2 calls h,
 *   which the worker asked for first), so its answer is shorter and the
 *   worker drops no copies;
 * - the parameter-name guard: rank 0 refuses a function whose parameters
 *   on the worker differ from its own (names, or their number), with
 *   the message the worker's call reports;
 * - a function rank 0 does not have, and damaged requests. */
#include <stdlib.h>
#include <string.h>

#include "lang/load.h"
#include "plan/build.h"
#include "runtime/distexec.h"
#include "runtime/planship.h"
#include "tests/t.h"

#define RANK0 "f = function(Matrix[Double] a, Double b) return (Double y) { y = sum(a) * b }\n" \
              "h = function(Matrix[Double] a) return (Double y) {\n" \
              "  y = 0\n  for (i in 1:nrow(a)) { y = y + sum(a[i, ]) }\n}\n" \
              "f2 = function(Matrix[Double] a, Double b) return (Double y) { y = h(a) * b }\n" \
              "X = matrix(1, rows=2, cols=3)\nz = f(X, 2)\nprint(z)\nprint(f2(X, 3))\n"

/* A worker's parsed script (its f is the function asked for). */
static Program *worker_ast(const char *src, Diag *d)
{
    LangOptions lo = {0};
    Program *p = lang_load_string(src, "<script>", &lo, d);
    T_CHECK(p && !diag_nerrors(d), "the worker's script loads: %s", diag_nerrors(d) ? diag_first_message(d) : "");
    return p;
}

/* Rank 0's answer to the request for function name of ast (sig: NULL,
 * the generic version) of a worker whose program is held (NULL: it
 * names none it holds): 0 and the plan's bytes in *ans, or -1 with why
 * in e. */
static int ask_for(Rt *rt0, Program *ast, const char *name, RtProgram *held, const FSig *sig, char **ans,
                   size_t *alen, const char **plan, size_t *len, BrErr *e)
{
    Func *fn = lang_find_func(ast, "", name);
    T_CHECK(fn != NULL, "the worker's %s", name);
    StrBuf q = {0};
    *ans = NULL;
    int rc = !fn || rt_dist_func_request(&q, fn, sig, held, e) ? -1 : rt_dist_serve(rt0, q.s, q.n, ans, alen);
    T_CHECK(rc == 0, "rank 0 answers (%s)", e->msg);
    free(q.s);
    return rc ? -1 : rt_dist_func_answer(*ans, *alen, plan, len, e);
}

static int ask(Rt *rt0, Program *ast, const FSig *sig, char **ans, size_t *alen, const char **plan, size_t *len,
               BrErr *e)
{
    return ask_for(rt0, ast, "f", NULL, sig, ans, alen, plan, len, e);
}

/* f2 calls h: a worker holding h asks for f2. Rank 0 names h by its
 * head (the answer is shorter than one to a request that lists
 * nothing), and the worker adds f2 alone, dropping no copy. */
static void held_not_sent(Rt *rt0, Program *astw, RtProgram *shell, PsCache **cache)
{
    char *ah = NULL, *a0 = NULL, *a1 = NULL;
    size_t nh = 0, n0 = 0, n1 = 0, lh = 0, l0 = 0, l1 = 0;
    const char *ph = NULL, *p0 = NULL, *p1 = NULL;
    BrErr e = {0};
    Func *h = lang_find_func(astw, "", "h"), *f2 = lang_find_func(astw, "", "f2");
    int rc = ask_for(rt0, astw, "h", shell, NULL, &ah, &nh, &ph, &lh, &e);
    FProg *fh = rc ? NULL : ps_func(cache, shell, ph, lh, h, &e);
    T_CHECK(fh && ps_held(shell, h, NULL) == fh, "the worker holds h (%s)", e.msg);
    int before = shell->nfuncs, dups = ps_dups(*cache);
    rc = ask_for(rt0, astw, "f2", NULL, NULL, &a0, &n0, &p0, &l0, &e) ||
         ask_for(rt0, astw, "f2", shell, NULL, &a1, &n1, &p1, &l1, &e);
    T_CHECK(!rc && l1 < l0, "rank 0 does not send h again: %zu bytes for f2 with h named, %zu with h (%s)", l1, l0,
            e.msg);
    FProg *fp = rc ? NULL : ps_func(cache, shell, p1, l1, f2, &e);
    T_CHECK(fp && fp->func == f2 && shell->nfuncs == before + 1 && ps_dups(*cache) == dups &&
                ps_held(shell, h, NULL) == fh,
            "the worker adds f2 alone and keeps its h (%d functions added, %d copies dropped: %s)",
            shell->nfuncs - before, ps_dups(*cache) - dups, e.msg);
    free(ah), free(a0), free(a1);
}

/* The parameter-name guard: the worker's f has parameters params (body
 * body); rank 0 must refuse it with why. */
static void refused(Rt *rt0, const char *params, const char *why)
{
    char src[400];
    snprintf(src, sizeof src, "f = function(%s) return (Double y) { y = 1 }\n", params);
    Diag *d = diag_new();
    Program *ast = worker_ast(src, d);
    char *ans = NULL;
    size_t alen = 0, len;
    const char *plan;
    BrErr e = {0};
    if (ast) {
        int rc = ask(rt0, ast, NULL, &ans, &alen, &plan, &len, &e);
        T_CHECK(rc != 0 && !plan && !strcmp(e.msg, why), "f(%s): refused with\n  %s\ngot (rc %d)\n  %s", params, why,
                rc, e.msg);
    }
    free(ans);
    lang_program_free(ast);
    diag_free(d);
}

int main(void)
{
    Diag *d0 = diag_new();
    LangOptions lo = {0};
    Program *ast0 = lang_load_string(RANK0, "<script>", &lo, d0);
    RtProgram *p0 = ast0 && !diag_nerrors(d0) ? plan_build_program(ast0, d0, 2, NULL) : NULL;
    T_CHECK(p0 != NULL, "rank 0's program compiles: %s", diag_nerrors(d0) ? diag_first_message(d0) : "");
    if (!p0) return t_done("test_dist");
    RtOptions ro = {.out = stdout, .seed = -1};
    Rt rt0;
    rt_init(&rt0, p0, d0, &ro);

    /* the same function: rank 0's plan joins the worker's shell program
     * (its script parsed, nothing compiled), the generic version and a
     * specialization for a 2x3 matrix and b = 2 */
    Diag *dw = diag_new();
    Program *astw = worker_ast(RANK0, dw);
    Block none = {0};
    RtProgram *shell = astw ? plan_build_program_main(astw, &none, dw, 2, NULL, NULL, 0) : NULL;
    T_CHECK(shell != NULL, "the worker's shell program");
    PsCache *cache = NULL;
    FSig sig[2] = {{2, 3, {.kind = V_NONE}}, {-1, -1, val_double(2)}};
    for (int s = 0; s < 2 && shell; s++) {
        char *ans = NULL;
        size_t alen = 0, len = 0;
        const char *plan = NULL;
        BrErr e = {0};
        int rc = ask(&rt0, astw, s ? sig : NULL, &ans, &alen, &plan, &len, &e);
        T_CHECK(rc == 0 && plan && len > 0, "%s: rank 0 sends its plan (%s)", s ? "specialization" : "generic", e.msg);
        Func *fw = lang_find_func(astw, "", "f");
        int before = shell->nfuncs;
        FProg *fp = rc ? NULL : ps_func(&cache, shell, plan, len, fw, &e);
        T_CHECK(fp && fp->func == fw && fp->compiled && (s ? fp->sig && fp->sig[0].rows == 2 && fp->sig[0].cols == 3 &&
                                                                 fp->sig[1].v.kind == V_DOUBLE && fp->sig[1].v.d == 2
                                                           : !fp->sig),
                "%s: the worker holds rank 0's compiled f (%s)", s ? "specialization" : "generic", e.msg);
        T_CHECK(shell->nfuncs > before && ps_held(shell, fw, s ? sig : NULL) == fp, "%s: held for the next call",
                s ? "specialization" : "generic");
        free(ans);
    }
    if (shell) held_not_sent(&rt0, astw, shell, &cache);
    /* the request for the specialization cut short at every length:
     * refused, never read past its end (its names, signature,
     * parameter names and the list of what the worker holds each cut) */
    Func *fw = astw ? lang_find_func(astw, "", "f") : NULL;
    StrBuf qf = {0};
    BrErr ef = {0};
    if (fw && !rt_dist_func_request(&qf, fw, sig, shell, &ef)) {
        for (size_t n = 1; n < qf.n; n++) {
            char *ans = NULL;
            size_t alen = 0, len;
            const char *plan;
            ef = (BrErr){0};
            T_CHECK(!rt_dist_serve(&rt0, qf.s, n, &ans, &alen) &&
                        rt_dist_func_answer(ans, alen, &plan, &len, &ef) != 0 && strstr(ef.msg, "rank 0 could not send it: "),
                    "a request cut at %zu of %zu bytes is refused: %s", n, qf.n, ef.msg);
            free(ans);
        }
    }
    free(qf.s);
    ps_free_loops(cache);
    plan_program_free(shell);
    ps_free(cache);
    lang_program_free(astw);
    diag_free(dw);

    /* the guard: parameters on the worker that are not rank 0's (its
     * library or source()d file differs) */
    refused(&rt0, "Matrix[Double] a, Double c",
            "rank 0 could not send it: its parameters there (a, c) are not rank 0's (a, b) (do the ranks' libraries "
            "differ?)");
    refused(&rt0, "Matrix[Double] b, Double a",
            "rank 0 could not send it: its parameters there (b, a) are not rank 0's (a, b) (do the ranks' libraries "
            "differ?)");
    refused(&rt0, "Matrix[Double] a",
            "rank 0 could not send it: its parameters there (a) are not rank 0's (a, b) (do the ranks' libraries "
            "differ?)");
    refused(&rt0, "Matrix[Double] a, Double b, Double c = 0",
            "rank 0 could not send it: its parameters there (a, b, c) are not rank 0's (a, b) (do the ranks' "
            "libraries differ?)");

    /* a function rank 0 does not have, and damaged requests */
    const char *g = "g = function(Double x) return (Double y) { y = x }\nprint(g(1))\n";
    Diag *dg = diag_new();
    Program *astg = worker_ast(g, dg);
    Func *fg = astg ? lang_find_func(astg, "", "g") : NULL;
    StrBuf q = {0};
    BrErr e = {0};
    char *ans = NULL;
    size_t alen = 0, len;
    const char *plan;
    if (fg && !rt_dist_func_request(&q, fg, NULL, NULL, &e) && !rt_dist_serve(&rt0, q.s, q.n, &ans, &alen)) {
        T_CHECK(rt_dist_func_answer(ans, alen, &plan, &len, &e) != 0 &&
                    !strcmp(e.msg, "rank 0 could not send it: it finds no function 'g' (do the ranks' libraries differ?)"),
                "a function rank 0 does not have: %s", e.msg);
        free(ans);
        ans = NULL;
        /* a kind no request has */
        q.s[0] = 9;
        e = (BrErr){0};
        T_CHECK(!rt_dist_serve(&rt0, q.s, q.n, &ans, &alen) && rt_dist_func_answer(ans, alen, &plan, &len, &e) != 0 &&
                    !strcmp(e.msg, "rank 0 could not send it: a damaged request"),
                "a request of an unknown kind: %s", e.msg);
        free(ans);
    } else {
        T_CHECK(false, "the request for g: %s", e.msg);
    }
    /* answers: none (rank 0 could not answer: one byte 0) and a damaged plan */
    e = (BrErr){0};
    T_CHECK(rt_dist_func_answer("", 1, &plan, &len, &e) != 0 &&
                !strcmp(e.msg, "rank 0 could not send it: it answers no requests"), "an empty refusal: %s", e.msg);
    e = (BrErr){0};
    T_CHECK(rt_dist_func_answer("\001\377", 2, &plan, &len, &e) != 0 && strstr(e.msg, "rank 0's answer is damaged"),
            "a damaged answer: %s", e.msg);
    free(q.s);
    lang_program_free(astg);
    diag_free(dg);

    rt_destroy(&rt0);
    plan_program_free(p0);
    lang_program_free(ast0);
    diag_free(d0);
    return t_done("test_dist");
}
