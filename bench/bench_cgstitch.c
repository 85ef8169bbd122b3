/* bench_cgstitch.c: CPU stitching against two passes (docs/codegen.md,
 * "CPU stitching"). Each script is compiled twice, stitched (the
 * default) and with BRAID_CG_STITCH=0 (the column aggregates their own
 * instructions, then the Row or Cell operator: two or more passes over
 * X), and the two programs run
 * alternately REPS rounds in one process; the medians and their ratio
 * (two passes / stitched: above 1 means stitching is faster) are printed,
 * of wall time and of the process's CPU time (all threads: less noisy
 * on a loaded machine). Each run includes its dynamic recompilation.
 * Usage: bench_cgstitch [rows...] (default 2000 20000 200000; 100
 * columns, B 100 x 4). Results: bench/results/cgstitch-*.txt. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/diag.h"
#include "codegen/codegen.h"
#include "lang/load.h"
#include "plan/build.h"
#include "runtime/interp.h"

#define REPS 15

static double median(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) { double t = v[j]; v[j] = v[j - 1]; v[j - 1] = t; }
    return v[n / 2];
}

static MB *rnd(int64_t r, int64_t c, uint64_t seed)
{
    BrErr e = {0};
    MB *m = mb_dense(r, c, &e);
    uint64_t s = seed;
    for (int64_t k = 0; k < r * c; k++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        m->d[k] = (double)(s >> 11) / 9007199254740992.0;
    }
    mb_recount_nnz(m);
    return m;
}

typedef struct Prog { RtProgram *p; Program *ast; Diag *d; } Prog;

static Prog compile(const char *src, bool stitch, const char **names, const char *out)
{
    if (stitch) unsetenv("BRAID_CG_STITCH");
    else setenv("BRAID_CG_STITCH", "0", 1);
    Prog g = {0};
    g.d = diag_new();
    LangOptions lo = {.predefined = names, .npredefined = 2};
    g.ast = lang_load_string(src, "<bench>", &lo, g.d);
    CgOptions cg = {.enabled = true, .plancache = true, .policy = CG_COST_BASED};
    const char *outs[1] = {out};
    g.p = g.ast && !diag_nerrors(g.d) ? plan_build_program_outputs(g.ast, g.d, 2, &cg, outs, 1) : NULL;
    if (!g.p) { fprintf(stderr, "bench_cgstitch: compile failed\n"); exit(1); }
    return g;
}

/* One run of g over X, B: milliseconds; *stitched the program's count.
 * The run recompiles its DAGs (X's size is known only at run time): the
 * switch must hold then too. */
static double run(Prog *g, bool stitch, MB *X, MB *B, const char **names, int64_t *stitched, double *cpu)
{
    if (stitch) unsetenv("BRAID_CG_STITCH");
    else setenv("BRAID_CG_STITCH", "0", 1);
    RtOptions ro = {.out = stdout, .seed = -1};
    Rt rt;
    rt_init(&rt, g->p, g->d, &ro);
    Frame f;
    st_init(&f.vars);
    f.depth = 0;
    st_put(&f.vars, names[0], val_matrix(mb_retain(X)));
    st_put(&f.vars, names[1], val_matrix(mb_retain(B)));
    struct timespec c0, c1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    int64_t t0 = br_now_ns();
    int rc = rt_run_main(&rt, &f);
    int64_t t1 = br_now_ns();
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    *cpu = (double)(c1.tv_sec - c0.tv_sec) * 1e3 + (double)(c1.tv_nsec - c0.tv_nsec) / 1e6;
    if (rc) { fprintf(stderr, "bench_cgstitch: %s\n", rt.err.msg); exit(1); }
    if (g->p->cg) *stitched = cg_stats(g->p->cg)->stitched;
    st_free(&f.vars);
    rt_destroy(&rt);
    return (double)(t1 - t0) / 1e6;
}

int main(int argc, char **argv)
{
    static const struct { const char *name, *src, *out; } scripts[] = {
        {"(X - colMeans(X)) %*% B", "Y = (X - colMeans(X)) %*% B\n", "Y"},
        {"colSums(((X - colMeans(X)) %*% B)^2)", "c = colSums(((X - colMeans(X)) %*% B) ^ 2)\n", "c"},
        {"t(X) %*% ((X - colMeans(X)) %*% B)", "G = t(X) %*% ((X - colMeans(X)) %*% B)\n", "G"},
        /* vector expressions, variances, Cell plans */
        {"(X / (colSums(X) + 1)) %*% B", "Y = (X / (colSums(X) + 1)) %*% B\n", "Y"},
        {"(X - colMeans(X)) / colSds(X)", "Y = (X - colMeans(X)) / colSds(X)\n", "Y"},
        {"colSums(((X - colMeans(X)) / colSds(X))^2)", "c = colSums(((X - colMeans(X)) / colSds(X)) ^ 2)\n", "c"},
        {"minmax(X) %*% B", "Y = ((X - colMins(X)) / (colMaxs(X) - colMins(X))) %*% B\n", "Y"},
    };
    int64_t rows[8] = {2000, 20000, 200000};
    int nr = 3;
    if (argc > 1) {
        nr = 0;
        for (int i = 1; i < argc && nr < 8; i++) rows[nr++] = atoll(argv[i]);
    }
    const char *names[2] = {"X", "B"};
    printf("%-44s %7s %9s %9s %6s %9s %9s %6s %s\n", "script", "rows", "st wall", "2p wall", "ratio", "st cpu", "2p cpu",
           "ratio", "(stitched aggs)");
    for (size_t s = 0; s < sizeof scripts / sizeof *scripts; s++) {
        Prog on = compile(scripts[s].src, true, names, scripts[s].out);
        Prog off = compile(scripts[s].src, false, names, scripts[s].out);
        unsetenv("BRAID_CG_STITCH");
        for (int r = 0; r < nr; r++) {
            MB *X = rnd(rows[r], 100, 7 + (uint64_t)r), *B = rnd(100, 4, 99);
            double ton[REPS], toff[REPS], con[REPS], coff[REPS], cw;
            int64_t son = 0, soff = 0;
            run(&on, true, X, B, names, &son, &cw);   /* warm: JIT, recompiles */
            run(&off, false, X, B, names, &soff, &cw);
            for (int k = 0; k < REPS; k++) {
                ton[k] = run(&on, true, X, B, names, &son, &con[k]);
                toff[k] = run(&off, false, X, B, names, &soff, &coff[k]);
            }
            double a = median(ton, REPS), b = median(toff, REPS), ca = median(con, REPS), cb = median(coff, REPS);
            printf("%-44s %7lld %9.3f %9.3f %6.2f %9.3f %9.3f %6.2f (%lld/%lld)\n", scripts[s].name, (long long)rows[r], a, b,
                   b / a, ca, cb, cb / ca, (long long)son, (long long)soff);
            mb_release(X);
            mb_release(B);
        }
        plan_program_free(on.p); lang_program_free(on.ast); diag_free(on.d);
        plan_program_free(off.p); lang_program_free(off.ast); diag_free(off.d);
    }
    return 0;
}
