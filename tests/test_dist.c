/* test_dist.c: a remote parfor worker's requests to rank 0, without
 * mpirun (runtime/distparfor.c, docs/dist.md "Functions from rank 0").
 * The request a worker's shell program makes for a function it does not
 * hold (rt_dist_func_request) is answered by rank 0's runtime
 * (rt_dist_serve) and read back (rt_dist_func_answer, ps_func) as over
 * MPI, for:
 * - the generic version and a specialization (a signature with a
 *   matrix's dimensions and a scalar's value): the plan joins the
 *   worker's program, which compiles nothing;
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
              "X = matrix(1, rows=2, cols=3)\nz = f(X, 2)\nprint(z)\n"

/* A worker's parsed script (its f is the function asked for). */
static Program *worker_ast(const char *src, Diag *d)
{
    LangOptions lo = {0};
    Program *p = lang_load_string(src, "<script>", &lo, d);
    T_CHECK(p && !diag_nerrors(d), "the worker's script loads: %s", diag_nerrors(d) ? diag_first_message(d) : "");
    return p;
}

/* Rank 0's answer to the worker's request for f of ast (sig: NULL, the
 * generic version): 0 and the plan's bytes in *ans, or -1 with why in e. */
static int ask(Rt *rt0, Program *ast, const FSig *sig, char **ans, size_t *alen, const char **plan, size_t *len,
               BrErr *e)
{
    Func *fn = lang_find_func(ast, "", "f");
    T_CHECK(fn != NULL, "the worker's f");
    StrBuf q = {0};
    *ans = NULL;
    int rc = !fn || rt_dist_func_request(&q, fn, sig, e) ? -1 : rt_dist_serve(rt0, q.s, q.n, ans, alen);
    T_CHECK(rc == 0, "rank 0 answers (%s)", e->msg);
    free(q.s);
    return rc ? -1 : rt_dist_func_answer(*ans, *alen, plan, len, e);
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
    /* the request for the specialization cut short at every length:
     * refused, never read past its end (its names, signature and
     * parameter names each cut) */
    Func *fw = astw ? lang_find_func(astw, "", "f") : NULL;
    StrBuf qf = {0};
    BrErr ef = {0};
    if (fw && !rt_dist_func_request(&qf, fw, sig, &ef)) {
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
    if (fg && !rt_dist_func_request(&q, fg, NULL, &e) && !rt_dist_serve(&rt0, q.s, q.n, &ans, &alen)) {
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
