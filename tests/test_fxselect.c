/* test_fxselect.c: FusionStitching's explorer as codegen's second plan
 * selector (codegen/fxselect.c, docs/gpu.md) against MPSkipEnum on the
 * seeds' examples: layernorm, softmax, column standardization, an
 * MLogreg step, a GLM-like step, a Row template with products and an
 * Outer template. Per plan partition: the explorer's plan is valid
 * (fx_valid on the graph built from the DAG), MPSkipEnum's plan costs no
 * more than the explorer's under codegen's model (MPSkipEnum is exact
 * there for these sizes), and the table of both plans under both cost
 * models is printed for the docs. End to end, each script run with
 * sysds.codegen.optimizer = fusion_stitching equals the unfused run
 * (relative 1e-9: fused operators sum in another order). Machine
 * constants are pinned (t_pin_machine), inputs seeded. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "gpu/gpu.h"
#include "plan/program.h"
#include "tests/t.h"
#include "tests/t_dml.h"

typedef struct Ex {
    const char *name;
    const char *src;       /* over X (200 x 30), B (30 x 4), v (30 x 1), U (200 x 8), V (30 x 8) */
    const char *out;
    double xsp;            /* X's sparsity at compile time (0: dense) */
} Ex;

static const Ex exs[] = {
    {"layernorm", "C = X - rowMeans(X)\nR = C / sqrt(rowMeans(C ^ 2) + 1e-5)\n", "R", 0},
    {"softmax", "E = exp(X - rowMaxs(X))\nR = E / rowSums(E)\n", "R", 0},
    {"colstd", "R = (X - colMeans(X)) / colSds(X)\n", "R", 0},
    {"mlogreg step", "LT = X %*% B\nE = exp(LT - rowMaxs(LT))\nR = E / rowSums(E)\n", "R", 0},
    {"glm step", "e = exp(X %*% v)\nR = (e / (1 + e)) * rowSums(X * X)\n", "R", 0},
    {"row products", "R = t(X) %*% ((X %*% v) * rowSums(X))\n", "R", 0},
    /* the Outer template's case: X sparse (known dense, MPSkipEnum
     * rightly cuts the product: the template saves nothing) */
    {"outer", "R = as.matrix(sum(X * log(U %*% t(V) + 1)))\n", "R", 0.05},
};
#define NEX (int)(sizeof exs / sizeof exs[0])

typedef struct Acc {
    const char *name;
    int parts;
} Acc;

static void row(void *arg, const CgFxResult *r)
{
    Acc *a = arg;
    a->parts++;
    T_CHECK(r->fx_valid, "%s: the explorer's plan is valid", a->name);
    /* MPSkipEnum is optimal under codegen's own cost model */
    T_CHECK(r->mpskip_cost <= r->fx_cost * (1 + 1e-12), "%s: MPSkipEnum %.6g above the explorer's %.6g", a->name,
            r->mpskip_cost, r->fx_cost);
    /* the skinny, dot and outer products are stitchable for the explorer
     * (fxselect.c fx_kind): on these examples it cuts nothing, as
     * MPSkipEnum, and the MLogreg step and the Outer template keep their
     * product inside the one operator (they were cut while products were
     * opaque) */
    T_CHECK(r->fx_cut == 0 && r->fx_kernels == r->mpskip_kernels, "%s: the explorer cuts %d points, %d kernels for %d",
            a->name, r->fx_cut, r->fx_kernels, r->mpskip_kernels);
    printf("| %s | %d | %d | %d / %d (%d) | %d / %d | %.3g / %.3g | %.3g / %.3g (%.3g) | %.1f / %.1f |\n", a->name,
           r->nhops, r->npts, r->mpskip_kernels, r->fx_kernels, r->fx_own_kernels, r->mpskip_cut, r->fx_cut,
           r->mpskip_cost * 1e6, r->fx_cost * 1e6, r->mpskip_latency * 1e6, r->fx_latency * 1e6,
           r->fx_own_latency * 1e6, (double)r->mpskip_ns / 1e3, (double)r->fx_ns / 1e3);
}

static const char *names[5] = {"X", "B", "v", "U", "V"};

static void compare(const Ex *ex)
{
    Diag *d = diag_new();
    LangOptions lo = {0};
    char src[1024];
    /* sizes known at compile time: the inputs as reads of known shape */
    snprintf(src, sizeof src,
             "X = rand(rows=200, cols=30, sparsity=%g, seed=1)\nB = rand(rows=30, cols=4, seed=2)\n"
             "v = rand(rows=30, cols=1, seed=3)\nU = rand(rows=200, cols=8, seed=4)\n"
             "V = rand(rows=30, cols=8, seed=5)\n%s", ex->xsp > 0 ? ex->xsp : 1.0, ex->src);
    Program *ast = lang_load_string(src, "<fx>", &lo, d);
    const char *outs[1] = {ex->out};
    RtProgram *p = ast && !diag_nerrors(d) ? plan_build_program_outputs(ast, d, 2, NULL, outs, 1) : NULL;
    T_CHECK(p != NULL, "%s: compile: %s", ex->name, diag_nerrors(d) ? diag_first_message(d) : "?");
    Acc a = {ex->name, 0};
    for (int i = 0; p && i < p->main.n; i++) {
        HopDag *dag = plan_dag(p->main.v[i]);
        if (dag && cg_fx_compare(dag, row, &a) < 0) T_CHECK(false, "%s: out of memory", ex->name);
    }
    T_CHECK(a.parts > 0, "%s: a partition with interesting points", ex->name);
    plan_program_free(p);
    lang_program_free(ast);
    diag_free(d);
}

/* The explorer's choice for a column mean read by two operators
 * (explore.h FNode.src): stitched into both it is computed twice, one
 * pass over X each; materialized once, for a launch and the vector's
 * write and reads. X of rows x 100 (compiled, not run): cut[0] the
 * points the explorer cuts, cut[1] MPSkipEnum's. */
static void shared_row(void *arg, const CgFxResult *r)
{
    int *cut = arg;
    cut[0] += r->fx_cut;
    cut[1] += r->mpskip_cut;
}

static void shared_choice(int64_t rows, int *cut)
{
    Diag *d = diag_new();
    LangOptions lo = {0};
    char src[512];
    snprintf(src, sizeof src,
             "X = rand(rows=%lld, cols=100, seed=1)\nB = rand(rows=100, cols=4, seed=2)\n"
             "A = X - colMeans(X)\nY = A %%*%% B\nz = rowSums(A * colMeans(X))\nR = sum(Y) + sum(z)\n",
             (long long)rows);
    Program *ast = lang_load_string(src, "<fx>", &lo, d);
    const char *outs[1] = {"R"};
    RtProgram *p = ast && !diag_nerrors(d) ? plan_build_program_outputs(ast, d, 2, NULL, outs, 1) : NULL;
    T_CHECK(p != NULL, "shared: compile");
    cut[0] = cut[1] = 0;
    for (int i = 0; p && i < p->main.n; i++) {
        HopDag *dag = plan_dag(p->main.v[i]);
        if (dag && cg_fx_compare(dag, shared_row, cut) < 0) T_CHECK(false, "shared: out of memory");
    }
    printf("shared colMeans, X %lld x 100: points cut by the explorer %d, by MPSkipEnum %d\n", (long long)rows, cut[0],
           cut[1]);
    plan_program_free(p);
    lang_program_free(ast);
    diag_free(d);
}

/* The explorer's constants (fxselect.c fx_constants): with the device
 * backend on, the device profile's read bandwidth and launch; off, the
 * machine file's read bandwidth (pinned: 4.07684e10 B/s) and the
 * explorer's 5 us. The latency of MPSkipEnum's plan of layernorm, summed
 * over its partitions, under each. */
static void lat_row(void *arg, const CgFxResult *r) { *(double *)arg += r->mpskip_latency; }

static double layernorm_latency(void)
{
    Diag *d = diag_new();
    LangOptions lo = {0};
    char src[512];
    snprintf(src, sizeof src, "X = rand(rows=200, cols=30, seed=1)\n%s", exs[0].src);
    Program *ast = lang_load_string(src, "<fx>", &lo, d);
    const char *outs[1] = {exs[0].out};
    RtProgram *p = ast && !diag_nerrors(d) ? plan_build_program_outputs(ast, d, 2, NULL, outs, 1) : NULL;
    double t = 0;
    for (int i = 0; p && i < p->main.n; i++) {
        HopDag *dag = plan_dag(p->main.v[i]);
        if (dag && cg_fx_compare(dag, lat_row, &t) < 0) T_CHECK(false, "latency: out of memory");
    }
    plan_program_free(p);
    lang_program_free(ast);
    diag_free(d);
    return t;
}

static void constants(void)
{
    gpu_configure(GPU_OFF, -1, 0);
    double cpu = layernorm_latency();
    const char *pin = getenv("BRAID_CG_MACHINE");
    char *keep = pin ? strdup(pin) : NULL;
    setenv("BRAID_CG_MACHINE", "4.07684e+08 3.07256e+10 5.60535e+09 6.16694e+10 3.40088e+10", 1);
    double cpu_slow = layernorm_latency();
    if (keep) setenv("BRAID_CG_MACHINE", keep, 1);
    free(keep);
    gpu_configure(GPU_FORCE, -1, 0);
    gpu_set_stitch(false);   /* (the stitch pass would take layernorm) */
    const GpuProfile same = {5e-6, 4.07684e10, 1e10, 0, 0, 0}, slow = {5e-4, 4.07684e8, 1e10, 0, 0, 0};
    gpu_set_profile(&same);
    double dev = layernorm_latency();
    gpu_set_profile(&slow);
    double dev_slow = layernorm_latency();
    gpu_set_profile(NULL);
    gpu_set_stitch(true);
    gpu_configure(GPU_OFF, -1, 0);
    T_CHECK(cpu > 0 && cpu_slow > 2 * cpu, "layernorm's latency on the CPU: %g s, %g s with the machine file's read "
            "bandwidth 100 times lower", cpu, cpu_slow);
    T_CHECK(dev > 0 && fabs(dev_slow - 100 * dev) <= 1e-9 * dev_slow,
            "layernorm's latency on the device: %g s, %g s by a profile 100 times slower", dev, dev_slow);
}

static void end_to_end(const Ex *ex, MB **in)
{
    const char *outs[1] = {ex->out};
    CgOptions off = {.enabled = false}, fx = {.enabled = true, .plancache = true, .policy = CG_STITCH_EXPLORER};
    TRun want, got;
    t_run_dml(ex->src, &off, 5, names, in, 1, outs, &want);
    t_run_dml(ex->src, &fx, 5, names, in, 1, outs, &got);
    T_CHECK(want.rc == 0 && got.rc == 0, "%s: %s %s", ex->name, want.err, got.err);
    if (!want.rc && !got.rc) T_MB_EQ(got.out[0].m, want.out[0].m, 1e-9, "%s: fusion_stitching vs unfused", ex->name);
    int64_t fused = got.st.fused[0] + got.st.fused[1] + got.st.fused[2] + got.st.fused[3];
    printf("%s: %lld fused operators under the explorer\n", ex->name, (long long)fused);
    t_run_free(&want);
    t_run_free(&got);
}

int main(void)
{
    t_pin_machine();
    printf("| example | hops | points | kernels MPSkip / FX (FX's own) | cut MPSkip / FX | getPlanCost us MPSkip / FX "
           "| FX latency us MPSkip / FX (FX's own) | optimize us MPSkip / FX |\n");
    for (int k = 0; k < NEX; k++) compare(&exs[k]);
    /* small X: a launch costs more than a second pass, both stitched;
     * 160 MB: the passes cost more, the vector is materialized */
    int small[2], big[2];
    shared_choice(20, small);
    shared_choice(200000, big);
    T_CHECK(small[0] == 0, "shared, small X: the explorer cuts %d points", small[0]);
    T_CHECK(big[0] >= 2, "shared, big X: the explorer cuts %d points (stitched redundantly)", big[0]);
    constants();
    t_seed(17);
    MB *in[5] = {t_gen(200, 30, 1, -1, 1, false), t_gen(30, 4, 1, -1, 1, false), t_gen(30, 1, 1, -1, 1, false),
                 t_gen(200, 8, 1, 0, 1, false), t_gen(30, 8, 1, 0, 1, false)};
    for (int k = 0; k < NEX; k++) end_to_end(&exs[k], in);
    for (int k = 0; k < 5; k++) mb_release(in[k]);
    return t_done("test_fxselect");
}
