/* bench_wide_rows.c: the cost model's wide-row rule (codegen/cost.c
 * row_wide) against measurement. For Row patterns over a dense main X of
 * 2e7 cells (known non-zeros) and a sweep of widths, in one process:
 *   update   t(X) %*% q, q a hinge term per row (L2SVM's gradient)
 *   mmchain  t(X) %*% ((y + 1) * (X %*% v))
 * the fused plan (fuse_all: one Row operator) and the unfused plan
 * (codegen off: dgemv, the mmchain kernel) run alternated, reps x passes
 * each, and their process CPU (getrusage) is compared; the cost-based
 * plan's choice (Row operators in its -explain codegen text, with the
 * machine constants of BRAID_CG_MACHINE or measured) is printed beside
 * it, with the largest relative difference between the two results.
 *
 * Usage: bench_wide_rows [threads=1] [reps=4] [passes=20] [widths=250,500,
 * 1000,2000,4000,8000] [cells=2e7] (BENCH_NO_MALLOPT=1: glibc's default
 * malloc thresholds; BRAID_POOL_MB=0: no buffer pool); bench/wide_rows.sh runs the sweep
 * (1 and 2 threads, pinned constants) and records the load. */
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "base/diag.h"
#include "codegen/codegen.h"
#include "lang/load.h"
#include "plan/build.h"
#include "runtime/interp.h"

static double cpu(void)
{
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return (double)r.ru_utime.tv_sec + (double)r.ru_stime.tv_sec +
           1e-6 * (double)(r.ru_utime.tv_usec + r.ru_stime.tv_usec);
}

/* pool: the plan's buffer pool, kept across its passes as an embedding
 * script keeps one across its runs (api/api.c, base.h) */
typedef struct P { RtProgram *p; Diag *d; Program *ast; NameSet on, live; BrPool *pool; } P;
static const char *names[] = {"X", "v", "w", "y"};

static P build(const char *src, const CgOptions *o)
{
    P r;
    r.d = diag_new();
    LangOptions lo = {.predefined = names, .npredefined = 4};
    r.ast = lang_load_string(src, "<wide>", &lo, r.d);
    const char *outs[] = {"R"};
    r.p = r.ast ? plan_build_program_outputs(r.ast, r.d, 2, o, outs, 1) : NULL;
    if (!r.p) { fprintf(stderr, "%s\n", diag_first_message(r.d)); exit(2); }
    r.on = (NameSet){0};
    r.live = (NameSet){0};
    ns_add(&r.on, "R");
    plan_liveness(&r.p->main, &r.on, &r.live);
    size_t cap = br_pool_default_cap();
    r.pool = cap ? br_pool_new(cap) : NULL;
    return r;
}

/* Runs pp passes times on in[]; the last pass's R (dense; caller
 * releases). */
static MB *run(P *pp, MB **in, int passes)
{
    RtOptions ro = {.out = stdout, .seed = -1, .pool = pp->pool};
    MB *res = NULL;
    BrPool *prev = br_pool_bind(pp->pool);
    for (int k = 0; k < passes; k++) {
        Rt rt;
        rt_init(&rt, pp->p, pp->d, &ro);
        Frame f;
        st_init(&f.vars);
        f.depth = 0;
        for (int i = 0; i < 4; i++) st_put(&f.vars, names[i], val_matrix(mb_retain(in[i])));
        if (rt_run_main(&rt, &f)) { rt_print_error(&rt, stderr); exit(2); }
        Value *v = st_get(&f.vars, "R");
        if (k == passes - 1 && v && v->kind == V_MATRIX) res = mb_to_dense(v->m, &(BrErr){0});
        st_free(&f.vars);
        rt_destroy(&rt);
    }
    br_pool_bind(prev);
    return res;
}

static void free_p(P *p)
{
    ns_free(&p->on);
    ns_free(&p->live);
    plan_program_free(p->p);
    lang_program_free(p->ast);
    diag_free(p->d);
    br_pool_free(p->pool);
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    int reps = argc > 2 ? atoi(argv[2]) : 4;
    int passes = argc > 3 ? atoi(argv[3]) : 20;
    const char *wl = argc > 4 ? argv[4] : "250,500,1000,2000,4000,8000";
    int64_t cells = argc > 5 ? (int64_t)atof(argv[5]) : 20000000;
    br_set_threads(threads);
    /* as braid's CLI does (cli/main.c): without it every intermediate
     * vector above 128 KB comes from fresh zero pages, which at 250
     * columns (80000-row vectors) doubled the unfused plan's CPU */
    if (!getenv("BENCH_NO_MALLOPT")) {
        mallopt(M_MMAP_THRESHOLD, 32 << 20);
        mallopt(M_TRIM_THRESHOLD, 64 << 20);
    }
    static const char *pname[] = {"update", "mmchain"};
    static const char *src[] = {
        "s = 1 - y * w\ns = (s > 0) * s\nR = t(X) %*% (s * y)\n",
        "R = t(X) %*% ((y + 1) * (X %*% v))\n",
    };
    printf("# threads %d, %d x %d passes per plan, X of %lld cells%s; CPU seconds per %d passes\n", threads, reps,
           passes, (long long)cells, getenv("BENCH_NO_MALLOPT") ? ", glibc's default mmap threshold" : "", passes);
    printf("%-8s %6s %8s %6s %9s %9s %8s %9s\n", "pattern", "cols", "rows", "vecKB", "fusedCPU", "unfusCPU",
           "ratio", "costRow");
    for (const char *w = wl; *w;) {
        int m = atoi(w);
        w += strcspn(w, ",");
        if (*w) w++;
        if (m <= 0) continue;
        int64_t n = cells / m;
        BrErr e = {0};
        MB *in[4];
        in[0] = mb_dense_uninit(n, m, &e);
        in[1] = mb_dense_uninit(m, 1, &e);
        in[2] = mb_dense_uninit(n, 1, &e);
        in[3] = mb_dense_uninit(n, 1, &e);
        if (!in[0] || !in[1] || !in[2] || !in[3]) { fprintf(stderr, "out of memory\n"); return 2; }
        for (int64_t i = 0; i < n * m; i++) in[0]->d[i] = (double)((i * 2654435761u) % 1000) / 1000.0 - 0.5;
        for (int j = 0; j < m; j++) in[1]->d[j] = 0.001 * ((j * 7) % 13 - 6);
        for (int64_t i = 0; i < n; i++) {
            in[2]->d[i] = 0.01 * (double)((i * 5) % 11);
            in[3]->d[i] = (i % 3) ? 1 : -1;
        }
        for (int k = 0; k < 4; k++) {
            int64_t z = 0;
            for (int64_t i = 0; i < in[k]->rows * in[k]->cols; i++) z += in[k]->d[i] != 0;
            in[k]->nnz = z;   /* known: the rule needs X's non-zeros */
        }
        for (int pat = 0; pat < 2; pat++) {
            CgOptions of = {.enabled = true, .plancache = true, .policy = CG_FUSE_ALL};
            CgOptions ou = {.enabled = false};
            char *ex = NULL;
            size_t exn = 0;
            FILE *exf = open_memstream(&ex, &exn);
            CgOptions oc = {.enabled = true, .plancache = true, .policy = CG_COST_BASED, .explain = exf};
            P on = build(src[pat], &of), off = build(src[pat], &ou), cb = build(src[pat], &oc);
            MB *rc = run(&cb, in, 1);
            fclose(exf);
            int rows = 0;
            for (const char *q = ex ? strstr(ex, "CPlan ROW") : NULL; q; q = strstr(q + 1, "CPlan ROW")) rows++;
            free(ex);
            MB *r1 = run(&on, in, 1), *r0 = run(&off, in, 1);   /* warm-up, compile */
            if (!r1 || !r0 || !rc) { fprintf(stderr, "no R\n"); return 2; }
            double worst = 0;
            for (int64_t j = 0; j < r0->rows * r0->cols; j++)
                worst = fmax(worst, fabs(r1->d[j] - r0->d[j]) / (1 + fabs(r0->d[j])));
            double con = 0, coff = 0;
            for (int r = 0; r < reps; r++)
                for (int k = 0; k < 2; k++) {
                    bool fused = (r + k) % 2 == 0;
                    double c0 = cpu();
                    MB *x = run(fused ? &on : &off, in, passes);
                    double c = cpu() - c0;
                    mb_release(x);
                    if (fused) con += c;
                    else coff += c;
                }
            int vecs = pat ? 3 : 2;
            printf("%-8s %6d %8lld %6.1f %9.3f %9.3f %8.3f %9s  maxrel %.1e\n", pname[pat], m, (long long)n,
                   8.0 * m * vecs / 1024, con / reps, coff / reps, con / coff, rows ? "fused" : "unfused", worst);
            fflush(stdout);
            mb_release(r0);
            mb_release(r1);
            mb_release(rc);
            free_p(&on);
            free_p(&off);
            free_p(&cb);
        }
        for (int k = 0; k < 4; k++) mb_release(in[k]);
    }
    return 0;
}
