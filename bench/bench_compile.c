/* bench_compile.c: compile time (parse to runtime program) of every DML
 * script of the builtin library: load, validate, build the HOP DAGs of all
 * its functions with rewrites, generate instructions. Best of 5 runs.
 * Usage: bench_compile [scripts/builtin] */
#include <glob.h>
#include <stdio.h>
#include <string.h>

#include "base/diag.h"
#include "lang/load.h"
#include "plan/build.h"

static double compile_ms(const char *path, const char *bdir, int *nfunc, bool *ok)
{
    int64_t t0 = br_now_ns();
    Diag *d = diag_new();
    LangOptions lo = {.builtin_dir = bdir};
    Program *ast = lang_load_file(path, &lo, d);
    RtProgram *p = ast && !diag_nerrors(d) ? plan_build_program(ast, d, 2, NULL) : NULL;
    *nfunc = 0;
    *ok = p != NULL;
    if (p)
        for (int i = 0; i < lang_nfuncs(ast); i++) {
            if (!plan_function(p, lang_func(ast, i), d)) *ok = false;
            (*nfunc)++;
        }
    int64_t t1 = br_now_ns();
    plan_program_free(p);
    lang_program_free(ast);
    diag_free(d);
    return (double)(t1 - t0) / 1e6;
}

int main(int argc, char **argv)
{
    const char *bdir = argc > 1 ? argv[1] : "scripts/builtin";
    char pat[4096];
    snprintf(pat, sizeof pat, "%s/*.dml", bdir);
    glob_t g;
    if (glob(pat, 0, NULL, &g)) { fprintf(stderr, "no scripts in %s\n", bdir); return 1; }
    printf("%-28s %8s %6s\n", "script", "ms", "funcs");
    double worst = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        double best = 1e9;
        int nf = 0;
        bool ok = true;
        for (int r = 0; r < 5; r++) {
            double t = compile_ms(g.gl_pathv[i], bdir, &nf, &ok);
            if (t < best) best = t;
        }
        const char *name = strrchr(g.gl_pathv[i], '/');
        printf("%-28s %8.2f %6d%s\n", name ? name + 1 : g.gl_pathv[i], best, nf, ok ? "" : "  (errors)");
        if (best > worst) worst = best;
    }
    printf("max compile time: %.2f ms (aim: < 50 ms)\n", worst);
    globfree(&g);
    return 0;
}
