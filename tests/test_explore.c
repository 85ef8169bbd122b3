/* test_explore.c: FusionStitching's explorer (gpu/explore.c) on random
 * operator graphs: every plan it returns is valid (fused kernels
 * connected, no opaque vertex fused, no cycle among kernels, every vertex
 * in exactly one kernel) and estimated no slower than no fusion; on
 * layernorm's graph it finds the one-kernel stitched plan. */
#include <math.h>
#include <string.h>

#include "t.h"
#include "gpu/explore.h"

static unsigned t_seed = 5;
static double urand(void)
{
    t_seed = t_seed * 1103515245u + 12345u;
    return (double)((t_seed >> 8) & 0xFFFFFF) / (double)0x1000000;
}

static void random_graph(FGraph *g, int n)
{
    *g = (FGraph){0};
    g->n = n;
    g->v = calloc((size_t)n, sizeof *g->v);
    for (int u = 0; u < n; u++) {
        FNode *v = &g->v[u];
        double r = urand();
        v->kind = u == 0 ? FK_LIGHT : r < 0.5 ? FK_LIGHT : r < 0.65 ? FK_EXPENSIVE : r < 0.85 ? FK_REDUCE : FK_OPAQUE;
        v->bytes = v->kind == FK_REDUCE ? 8e3 : 8e6;
        v->nin = u == 0 ? 0 : 1 + (int)(urand() * 2);
        for (int j = 0; j < v->nin; j++) v->in[j] = (int)(urand() * u);
        if (u > 0 && urand() < 0.1) v->nin = 0;   /* another input */
        v->output = u == n - 1 || urand() < 0.1;
    }
}

/* layernorm: X, mean (reduce), X - mean, ^2, mean (reduce), + eps,
 * sqrt, / */
static void layernorm_graph(FGraph *g)
{
    static FNode v[8];
    memset(v, 0, sizeof v);
    v[0] = (FNode){FK_LIGHT, 8e6, 0, {0}, false, 0};
    v[1] = (FNode){FK_REDUCE, 8e3, 1, {0}, false, 0};
    v[2] = (FNode){FK_LIGHT, 8e6, 2, {0, 1}, false, 0};
    v[3] = (FNode){FK_LIGHT, 8e6, 2, {2, 2}, false, 0};
    v[4] = (FNode){FK_REDUCE, 8e3, 1, {3}, false, 0};
    v[5] = (FNode){FK_LIGHT, 8e3, 1, {4}, false, 0};
    v[6] = (FNode){FK_EXPENSIVE, 8e3, 1, {5}, false, 0};
    v[7] = (FNode){FK_LIGHT, 8e6, 2, {2, 6}, true, 0};
    *g = (FGraph){8, v, 0, 0};
}

int main(void)
{
    for (int t = 0; t < 200; t++) {
        FGraph g;
        random_graph(&g, 2 + (int)(urand() * 40));
        FPlan p, u;
        T_CHECK(fx_explore(&g, 3, 3, &p) == 0, "explore");
        T_CHECK(fx_unfused(&g, &u) == 0, "unfused");
        T_CHECK(fx_valid(&g, &p), "graph %d (%d vertices): a valid plan", t, g.n);
        T_CHECK(p.latency <= u.latency, "graph %d: no slower than no fusion", t);
        bool opaque_alone = true;
        for (int a = 0; a < g.n; a++)
            for (int b = 0; b < g.n; b++)
                if (a != b && p.kernel[a] == p.kernel[b] && g.v[a].kind == FK_OPAQUE) opaque_alone = false;
        T_CHECK(opaque_alone, "graph %d: opaque vertices are never fused", t);
        fplan_free(&p), fplan_free(&u);
        free(g.v);
    }
    FGraph ln;
    layernorm_graph(&ln);
    FPlan p, u;
    fx_explore(&ln, 3, 3, &p);
    fx_unfused(&ln, &u);
    T_CHECK(p.nkernels == 1 && fx_valid(&ln, &p), "layernorm: one stitched kernel (%d)", p.nkernels);
    printf("layernorm graph: %d kernels explored (estimate %.1f us) against %d unfused (%.1f us)\n", p.nkernels,
           p.latency * 1e6, u.nkernels, u.latency * 1e6);
    fplan_free(&p), fplan_free(&u);
    /* a vector computed from X outside the graph (CPU stitching's column
     * aggregates, FNode.src) read by two consumers: stitched into both
     * while X's pass costs less than a launch, alone (computed once)
     * when X is large */
    for (int big = 0; big < 2; big++) {
        FNode sv[3] = {{FK_REDUCE, 800, 0, {0}, false, big ? 8e7 : 8e3},
                       {FK_LIGHT, 8e6, 1, {0}, true, 0}, {FK_LIGHT, 8e6, 1, {0}, true, 0}};
        FGraph sg = {3, sv, 0, 0};
        FPlan sp;
        T_CHECK(fx_explore(&sg, 3, 3, &sp) == 0 && fx_valid(&sg, &sp), "shared vector: a valid plan");
        bool alone = sp.kernel[0] != sp.kernel[1] && sp.kernel[0] != sp.kernel[2];
        T_CHECK(alone == (big == 1), "shared vector, X %s: %s", big ? "8e7 B" : "8e3 B",
                alone ? "computed alone" : "stitched");
        fplan_free(&sp);
    }
    /* the evaluators' constants (FGraph.bw, launch_s: a device's profile
     * or the CPU's machine file, codegen/fxselect.c): 0 is 500 GB/s and
     * 5 us; memory and launches 100 times slower price a plan 100 times
     * higher (every term is bytes / bw or launches x launch_s) */
    {
        FPlan lu;
        fx_unfused(&ln, &lu);
        double t0 = fx_latency(&ln, &lu);
        ln.bw = 500e9, ln.launch_s = 5e-6;
        double t1 = fx_latency(&ln, &lu);
        ln.bw = 5e9, ln.launch_s = 5e-4;
        double t2 = fx_latency(&ln, &lu);
        T_CHECK(t0 == t1 && fabs(t2 - 100 * t1) <= 1e-9 * t2, "layernorm unfused: %g s by default, %g s at 500 GB/s "
                "and 5 us, %g s at 5 GB/s and 500 us", t0, t1, t2);
        ln.bw = 0, ln.launch_s = 0;
        fplan_free(&lu);
    }
    /* and the explorer follows them: the shared vector over the large X
     * (computed alone above) is stitched into both consumers when a
     * launch costs 1 ms (X's pass, 0.16 ms, is cheaper) */
    {
        FNode sv[3] = {{FK_REDUCE, 800, 0, {0}, false, 8e7},
                       {FK_LIGHT, 8e6, 1, {0}, true, 0}, {FK_LIGHT, 8e6, 1, {0}, true, 0}};
        FGraph sg = {3, sv, 500e9, 1e-3};
        FPlan sp;
        T_CHECK(fx_explore(&sg, 3, 3, &sp) == 0 && fx_valid(&sg, &sp), "shared vector, slow launches: a valid plan");
        T_CHECK(sp.kernel[0] == sp.kernel[1] || sp.kernel[0] == sp.kernel[2],
                "shared vector, X 8e7 B, 1 ms launches: stitched");
        fplan_free(&sp);
    }
    /* an invalid plan is recognized: fusing 0 and 2 around 1 is a cycle */
    FPlan bad = {(int[]){0, 1, 0, 2, 3, 4, 5, 6}, 7, 0, 0};
    T_CHECK(!fx_valid(&ln, &bad), "a fused pair around an outside vertex is a cycle");
    return t_done("test_explore");
}
