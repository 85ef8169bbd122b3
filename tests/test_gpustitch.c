/* test_gpustitch.c: stitched regions formed from DML (codegen/stitchpass.c,
 * docs/gpu.md). Each script runs with the GPU backend off (the CPU
 * reference) and forced on; the outputs must agree (relative 1e-8: every
 * output here depends on a reduction, whose order differs: Kahan sums on
 * both sides give errors near 1e-15 for these lengths, so 1e-8 leaves a
 * wide margin without hiding a wrong operator), and the GPU counters must
 * show the regions the pass should form: how many stitched runs, and one
 * kernel launch per run (deterministic: the counts do not depend on the
 * device's size or speed). With sysds.gpu.stitch off the same scripts run
 * per operator, and their launch counts are printed for docs/gpu.md. Shapes
 * are not multiples of any work-group size; one input is sparse. */
#include <math.h>
#include <string.h>

#include "t.h"
#include "t_dml.h"
#include "gpu/gpu.h"
#include "gpu/stitch.h"

typedef struct Case {
    const char *name;
    const char *src;
    const char *out;       /* the output variable */
    int regions;           /* stitched runs expected */
} Case;

static const Case cases[] = {
    {"softmax", "m = rowMaxs(X)\nE = exp(X - m)\nS = E / rowSums(E)\n", "S", 1},
    {"layernorm", "mu = rowMeans(X)\nC = X - mu\nV = rowMeans(C ^ 2)\nS = C / sqrt(V + 1e-5)\n", "S", 1},
    {"column standardization", "S = (X - colMeans(X)) / colSds(X)\n", "S", 1},
    {"row standardization (sd)", "S = (X - rowMeans(X)) / (rowSds(X) + 1)\n", "S", 1},
    /* a per-segment result: log-sum-exp */
    {"logsumexp", "m = rowMaxs(X)\nS = m + log(rowSums(exp(X - m)))\n", "S", 1},
    /* MLogreg's inner step: the product outside, its softmax stitched */
    {"mlogreg step", "LT = X %*% B\nLT = LT - rowMaxs(LT)\nP = exp(LT)\nS = P / rowSums(P)\n", "S", 1},
    /* MLogreg's broadcast written as outer products with ones */
    {"outer-product broadcast",
     "E = exp(X - rowMaxs(X) %*% matrix(1, rows=1, cols=ncol(X)))\n"
     "S = E / (rowSums(E) %*% matrix(1, rows=1, cols=ncol(X)))\n", "S", 1},
    /* other inputs: a matrix of the shape, a row vector, a scalar */
    {"inputs and scalar", "s = sum(B)\nS = (X - s * rowMeans(X * W)) * W + v\n", "S", 1},
    /* ALS/GLM-like: a row aggregate of a product feeding a division */
    {"rowsum division", "w = rowSums(X * W)\nS = X / (abs(w) + 1)\n", "S", 1},
    /* aggregates of both directions: the first met decides, the other is
     * an input computed before */
    {"both directions", "S = X / (abs(rowSums(X * W)) + 1) - colMins(W)\n", "S", 2},
    /* two regions in one block (column sums of a squared residual) */
    {"two regions", "R = X - rowMeans(X)\nA = colSums(R ^ 2)\nS = exp(W - rowMaxs(W)) + sum(A)\n", "S", 2},
    /* two inlined calls give two regions over the same input that differ
     * only in a constant: CSE must not merge them (it did) */
    {"inlined calls", "f = function(Matrix[Double] X, Double a = 2.0) return (Matrix[Double] Y) { Y = a * X + 1 }\n"
     "S = cbind(f(X), f(X, 3.0))\n", "S", 2},
    /* an elementwise chain: one region of one pass */
    {"elementwise only", "S = exp(X) * 2 + W\n", "S", 1},
    /* a full aggregate of elementwise work: the region ends in its row
     * aggregate; a single operator is no region */
    {"full aggregate", "s = sum((X - W) ^ 2) + mean(abs(X) * 2)\nS = X * s\n", "S", 2},
    /* matrix-vector products (the Row template's X %*% v) inside
     * regions: GLM's link, a product over row sums (c: cols x 1) */
    {"matrix-vector product", "e = exp(X %*% c)\nS = W * (e / (1 + e))\n", "S", 1},
    {"product over row sums", "S = (X %*% c) / (1 + rowSums(abs(W)))\n", "S", 1},
};
#define NCASES ((int)(sizeof cases / sizeof *cases))

static const int64_t shapes[][2] = {{37, 53}, {130, 7}, {3, 301}};

static void run_case(const Case *c, int64_t rows, int64_t cols, bool sparse)
{
    t_seed(1000 + (uint64_t)rows * 7 + (uint64_t)cols + sparse);
    MB *in[5] = {
        t_gen(rows, cols, sparse ? 0.2 : 1, -3, 3, sparse),
        t_gen(rows, cols, 1, -2, 2, false),
        t_gen(cols, 4, 1, -1, 1, false),
        t_gen(1, cols, 1, -1, 1, false),
        t_gen(cols, 1, 1, -1, 1, false),
    };
    const char *names[5] = {"X", "W", "B", "v", "c"};
    /* the mlogreg step multiplies by B (cols x 4); the others read B whole */
    CgOptions off = {.enabled = false};
    const char *outs[1] = {c->out};
    TRun want, got;
    gpu_configure(GPU_OFF, -1, 0);
    t_run_dml(c->src, &off, 5, names, in, 1, outs, &want);
    T_CHECK(want.rc == 0, "%s: CPU run: %s", c->name, want.err);
    gpu_configure(GPU_FORCE, -1, 0);
    gpu_set_stitch(true);
    gpu_stats_reset();
    t_run_dml(c->src, &off, 5, names, in, 1, outs, &got);
    GpuStats st = gpu_stats();
    T_CHECK(got.rc == 0, "%s: GPU run: %s", c->name, got.err);
    if (!want.rc && !got.rc) {
        T_CHECK(got.out[0].kind == V_MATRIX, "%s: a matrix", c->name);
        if (got.out[0].kind == V_MATRIX)
            T_MB_EQ(got.out[0].m, want.out[0].m, 1e-8, "%s %lldx%lld%s: GPU vs CPU", c->name, (long long)rows,
                    (long long)cols, sparse ? " sparse" : "");
    }
    /* a region over a sparse input runs on the CPU kernels (they keep it
     * sparse); the regions over W alone still run stitched */
    T_CHECK(sparse ? st.stitched <= c->regions : st.stitched == c->regions, "%s %lldx%lld%s: %lld stitched runs, want %d",
            c->name, (long long)rows, (long long)cols, sparse ? " sparse" : "", (long long)st.stitched, c->regions);
    T_CHECK(st.stitch_launches == st.stitched, "%s: %lld launches for %lld stitched runs", c->name,
            (long long)st.stitch_launches, (long long)st.stitched);
    /* codegen on: the regions are taken first (a full aggregate of
     * elementwise work alone is left to codegen's Cell operator, which
     * runs on the device), so no fused operator is left to run on the
     * CPU, and the results are the same */
    CgOptions on = {.enabled = true, .plancache = true, .policy = CG_COST_BASED};
    TRun cg;
    gpu_stats_reset();
    t_run_dml(c->src, &on, 5, names, in, 1, outs, &cg);
    T_CHECK(cg.rc == 0, "%s: GPU run with codegen: %s", c->name, cg.err);
    if (!want.rc && !cg.rc && cg.out[0].kind == V_MATRIX)
        T_MB_EQ(cg.out[0].m, want.out[0].m, 1e-8, "%s with codegen: GPU vs CPU", c->name);
    GpuStats cs = gpu_stats();
    T_CHECK(cs.fused_cpu == 0, "%s: %lld codegen operators left on the CPU", c->name, (long long)cs.fused_cpu);
    t_run_free(&cg);
    t_run_free(&want);
    t_run_free(&got);
    for (int k = 0; k < 5; k++) mb_release(in[k]);
}

/* A region and the per-operator GPU plan of the same expression agree to
 * the last bit (rt_stitch_exec runs regions in the per-operator kernels'
 * reduction order): alg_metrics compares X - colMeans(X) computed both
 * ways for equality. */
static void test_same_bits(void)
{
    const char *srcs[] = {"S = X - colMeans(X)\n", "S = X / rowSums(X) + rowMeans(X ^ 2)\n",
                          "E = exp(X - rowMaxs(X))\nS = E / rowSums(E)\n"};
    const int64_t dims[][2] = {{37, 53}, {300, 7}, {5, 700}};
    for (int k = 0; k < 3; k++)
        for (int s = 0; s < 3; s++) {
            t_seed(50 + (uint64_t)(k * 3 + s));
            MB *in[1] = {t_gen(dims[s][0], dims[s][1], 1, -3, 3, false)};
            const char *names[1] = {"X"}, *outs[1] = {"S"};
            CgOptions off = {.enabled = false};
            TRun a, b;
            gpu_configure(GPU_FORCE, -1, 0);
            gpu_set_stitch(false);
            t_run_dml(srcs[k], &off, 1, names, in, 1, outs, &a);
            gpu_set_stitch(true);
            gpu_stats_reset();
            t_run_dml(srcs[k], &off, 1, names, in, 1, outs, &b);
            T_CHECK(a.rc == 0 && b.rc == 0 && gpu_stats().stitched == 1, "same bits %d: %s %s", k, a.err, b.err);
            if (!a.rc && !b.rc) T_MB_EQ(b.out[0].m, a.out[0].m, 0, "region %d %lldx%lld equals the per-operator plan", k,
                                        (long long)dims[s][0], (long long)dims[s][1]);
            t_run_free(&a);
            t_run_free(&b);
            mb_release(in[0]);
        }
}

/* kernel launches of a script with and without stitching (docs/gpu.md) */
static void print_launches(const Case *c)
{
    t_seed(7);
    MB *in[4] = {t_gen(64, 48, 1, -3, 3, false), t_gen(64, 48, 1, -2, 2, false), t_gen(48, 4, 1, -1, 1, false),
                 t_gen(1, 48, 1, -1, 1, false)};
    const char *names[4] = {"X", "W", "B", "v"};
    CgOptions off = {.enabled = false};
    const char *outs[1] = {c->out};
    int64_t n[2];
    for (int s = 0; s < 2; s++) {
        gpu_configure(GPU_FORCE, -1, 0);
        gpu_set_stitch(s == 1);
        TRun r;
        gpu_stats_reset();
        t_run_dml(c->src, &off, 4, names, in, 1, outs, &r);
        n[s] = gpu_stats().launches;
        T_CHECK(r.rc == 0, "%s: %s", c->name, r.err);
        t_run_free(&r);
    }
    gpu_set_stitch(true);
    printf("launches %s: per operator %lld, stitched %lld\n", c->name, (long long)n[0], (long long)n[1]);
    T_CHECK(n[1] < n[0], "%s: stitching saves launches (%lld vs %lld)", c->name, (long long)n[1], (long long)n[0]);
    for (int k = 0; k < 4; k++) mb_release(in[k]);
}

/* Left indexing of a device result. Device-only (never read by the
 * host): the updates run on the device (gpu_lix), nothing is copied to
 * the host. Landed first (rev, a CPU operator, reads it): the CPU
 * updates it in place at its last use, the pool dropping its copy (the
 * other reference) first. The results are the CPU's. */
static void test_inplace(void)
{
    const char *srcs[2] = {"Y = exp(X) * 2\nfor (i in 1:5) {\n  Y[i, 1] = i\n  Y[i + 1, 2:3] = X[i, 1:2]\n}\nS = Y + 1\n",
                           "Y = exp(X) * 2\nR = rev(Y)\nfor (i in 1:5) {\n  Y[i, 1] = i\n}\nS = Y + R\n"};
    t_seed(3);
    MB *in[1] = {t_gen(20, 9, 1, -1, 1, false)};
    const char *names[1] = {"X"}, *outs[1] = {"S"};
    CgOptions off = {.enabled = false};
    for (int k = 0; k < 2; k++) {
        TRun want, got;
        gpu_configure(GPU_OFF, -1, 0);
        t_run_dml(srcs[k], &off, 1, names, in, 1, outs, &want);
        gpu_configure(GPU_FORCE, -1, 0);
        gpu_stats_reset();
        t_run_dml(srcs[k], &off, 1, names, in, 1, outs, &got);
        GpuStats st = gpu_stats();
        T_CHECK(want.rc == 0 && got.rc == 0, "left indexing %d: %s %s", k, want.err, got.err);
        if (!want.rc && !got.rc) T_MB_EQ(got.out[0].m, want.out[0].m, 1e-12, "left indexing %d of a device result", k);
        if (k == 0)
            T_CHECK(st.landed == 0 && st.forgotten == 0, "left indexing on the device: %lld landed, %lld forgotten",
                    (long long)st.landed, (long long)st.forgotten);
        else
            T_CHECK(st.landed == 1 && st.forgotten >= 1, "in place on the host: %lld landed, %lld forgotten",
                    (long long)st.landed, (long long)st.forgotten);
        t_run_free(&want);
        t_run_free(&got);
    }
    mb_release(in[0]);
}

/* Lazy copy-back (docs/gpu.md): a chain of device operators (regions,
 * a product, a transpose) copies nothing to the host; an operator the
 * backend lacks (rev) lands its input once; the outputs equal the CPU's.
 * The byte counts are exact (no timing or device size enters them). */
static void test_lazy(void)
{
    const char *srcs[2] = {"Y = exp(X) + W\nZ = t(Y) %*% W\nS = Z * 2 - 1\n",
                           "Y = exp(X) * 2\nZ = rev(Y)\nS = Z + W\n"};
    const int64_t rows = 37, cols = 53, bytes = rows * cols * 8;
    const int64_t want_d2h[2] = {0, bytes}, want_landed[2] = {0, 1};
    t_seed(11);
    MB *in[2] = {t_gen(rows, cols, 1, -1, 1, false), t_gen(rows, cols, 1, -1, 1, false)};
    const char *names[2] = {"X", "W"}, *outs[1] = {"S"};
    CgOptions off = {.enabled = false};
    for (int k = 0; k < 2; k++) {
        TRun want, got;
        gpu_configure(GPU_OFF, -1, 0);
        t_run_dml(srcs[k], &off, 2, names, in, 1, outs, &want);
        gpu_configure(GPU_FORCE, -1, 0);
        gpu_pool_clear();   /* X and W not resident from an earlier run */
        gpu_stats_reset();
        t_run_dml(srcs[k], &off, 2, names, in, 1, outs, &got);
        GpuStats st = gpu_stats();
        T_CHECK(want.rc == 0 && got.rc == 0, "lazy %d: %s %s", k, want.err, got.err);
        T_CHECK(st.d2h_bytes == want_d2h[k] && st.landed == want_landed[k],
                "lazy %d: %lld bytes to the host in %lld copies, want %lld in %lld", k, (long long)st.d2h_bytes,
                (long long)st.landed, (long long)want_d2h[k], (long long)want_landed[k]);
        T_CHECK(st.h2d_bytes == (k == 0 ? 2 : 3) * bytes, "lazy %d: %lld bytes up", k, (long long)st.h2d_bytes);
        bool dev = !got.rc && got.out[0].kind == V_MATRIX && got.out[0].m->dev;
        T_CHECK(dev, "lazy %d: the output is still on the device", k);
        if (!want.rc && !got.rc) T_MB_EQ(got.out[0].m, want.out[0].m, 1e-10, "lazy %d: GPU vs CPU", k);
        T_CHECK(gpu_stats().landed == want_landed[k] + 1, "lazy %d: the output lands when read", k);
        t_run_free(&want);
        t_run_free(&got);
    }
    mb_release(in[0]), mb_release(in[1]);
}

/* CSR results stay on the device in DML too: abs of a sparse X, times a
 * dense W (sparse structure kept), times 2, then a product: no copy to
 * the host during the run, the output device-only, the values and the
 * landed intermediate's nnz the CPU's. Stitching off (a region would take
 * the elementwise chain through the CPU kernels: sparse input). */
static void test_lazy_csr(void)
{
    const char *src = "Y = abs(X) * W\nZ = Y * 2\nS = Z %*% B\n", *names[3] = {"X", "W", "B"}, *outs[2] = {"S", "Z"};
    t_seed(41);
    MB *in[3] = {t_gen(70, 40, 0.1, -2, 2, true), t_gen(70, 40, 0.6, -1, 1, false), t_gen(40, 3, 1, -1, 1, false)};
    CgOptions off = {.enabled = false};
    TRun want, got;
    gpu_configure(GPU_OFF, -1, 0);
    t_run_dml(src, &off, 3, names, in, 2, outs, &want);
    gpu_configure(GPU_FORCE, -1, 0);
    gpu_set_stitch(false);
    gpu_pool_clear();
    gpu_stats_reset();
    t_run_dml(src, &off, 3, names, in, 2, outs, &got);
    GpuStats st = gpu_stats();
    gpu_set_stitch(true);
    T_CHECK(want.rc == 0 && got.rc == 0, "lazy csr: %s %s", want.err, got.err);
    T_CHECK(st.d2h_bytes == 0 && st.landed == 0 && st.ops == 4, "lazy csr: %lld bytes down, %lld operators",
            (long long)st.d2h_bytes, (long long)st.ops);
    if (!want.rc && !got.rc) {
        const MB *z = got.out[1].m;
        T_CHECK(z->dev && z->sparse, "lazy csr: Z is a device-only CSR block");
        T_MB_EQ(got.out[0].m, want.out[0].m, 1e-12, "lazy csr: S, GPU vs CPU");
        T_MB_EQ(z, want.out[1].m, 0, "lazy csr: Z, GPU vs CPU");
        T_CHECK(!z->dev && z->nnz == want.out[1].m->nnz, "lazy csr: Z landed with nnz %lld, the CPU's %lld",
                (long long)z->nnz, (long long)want.out[1].m->nnz);
    }
    t_run_free(&want);
    t_run_free(&got);
    for (int k = 0; k < 3; k++) mb_release(in[k]);
}

/* Multi-output regions: a region whose intermediate is also read
 * outside (or is a variable the block writes) computes it in the same
 * launch as one more output, and a consumer of its members joins as one
 * more output, unless the outside reader feeds the region back (a
 * cycle: then the region stops there). Both outputs against the CPU;
 * the stitched runs and all launches are exact counts. */
static void test_multi(void)
{
    static const struct { const char *src; const char *outs[2]; int runs, launches; } mc[] = {
        /* softmax and log-sum-exp share exp(X - max) and its row sums:
         * the region rooted at L takes S = E / s as a consumer output
         * (E and s then have all their uses inside): one launch */
        {"E = exp(X - rowMaxs(X))\ns = rowSums(E)\nS = E / s\nL = log(s) + rowMaxs(X)\n", {"S", "L"}, 1, 1},
        /* layernorm that also returns its centered input */
        {"C = X - rowMeans(X)\nY = C / sqrt(rowMeans(C ^ 2) + 1e-5)\n", {"Y", "C"}, 1, 1},
        /* an output read by a product (D: two columns, no region takes
         * it) that feeds the region back: no cycle, the region ends there
         * (Y its own region; the product and its row sums two more
         * launches) */
        {"Y = exp(X) * 2\nm = rowSums(Y %*% D)\nZ = (Y + 1) / rowSums(Y * m)\n", {"Z", "Y"}, 2, 4},
        /* a chain rooted at T grows to the centered C, then C's other
         * consumers join (C ^ 2, its column sums, the division): column
         * standardization and T from one launch */
        {"C = X - colMeans(X)\nS = C / sqrt(colSums(C ^ 2))\nT = exp(C) * 3\n", {"S", "T"}, 1, 1},
        /* a consumer whose other input depends on the region (a product
         * of a member): it stays outside */
        {"Y = exp(X - rowMaxs(X))\nm = rowSums(Y %*% D)\nZ = Y / m\n", {"Z", "Y"}, 1, 4},
        /* the same with a matrix-vector product: it joins the region, so
         * there is no cycle and all of it is one launch */
        {"Y = exp(X) * 2\nm = Y %*% B\nZ = (Y + 1) / rowSums(Y * m)\n", {"Z", "Y"}, 1, 1},
    };
    t_seed(21);
    MB *in[3] = {t_gen(37, 53, 1, -2, 2, false), t_gen(53, 1, 1, -1, 1, false), t_gen(53, 2, 1, -1, 1, false)};
    const char *names[3] = {"X", "B", "D"};
    CgOptions off = {.enabled = false};
    for (int k = 0; k < (int)(sizeof mc / sizeof *mc); k++) {
        TRun want, got;
        const char *outs[2] = {mc[k].outs[0], mc[k].outs[1]};
        gpu_configure(GPU_OFF, -1, 0);
        t_run_dml(mc[k].src, &off, 3, names, in, 2, outs, &want);
        gpu_configure(GPU_FORCE, -1, 0);
        gpu_set_stitch(true);
        gpu_stats_reset();
        t_run_dml(mc[k].src, &off, 3, names, in, 2, outs, &got);
        GpuStats st = gpu_stats();
        T_CHECK(want.rc == 0 && got.rc == 0, "multi %d: %s %s", k, want.err, got.err);
        for (int o = 0; o < 2 && !want.rc && !got.rc; o++)
            T_MB_EQ(got.out[o].m, want.out[o].m, 1e-8, "multi %d output %s: GPU vs CPU", k, mc[k].outs[o]);
        T_CHECK(st.stitched == mc[k].runs && st.stitch_launches == st.stitched, "multi %d: %lld stitched runs, want %d",
                k, (long long)st.stitched, mc[k].runs);
        T_CHECK(st.launches == mc[k].launches, "multi %d: %lld launches, want %d", k, (long long)st.launches,
                mc[k].launches);
        printf("multi-output %d: %lld launches, %lld stitched runs\n", k, (long long)st.launches, (long long)st.stitched);
        t_run_free(&want);
        t_run_free(&got);
    }
    mb_release(in[0]), mb_release(in[1]), mb_release(in[2]);
}

/* Asynchronous compilation (sysds.gpu.async, docs/gpu.md): with the
 * background builds held (a test switch: no timing enters), every region
 * of every case runs on the per-operator GPU kernels (one fallback per
 * region, no stitched run); after the builds finish the same script runs
 * stitched, and both results are the same bits (the per-operator kernels
 * reduce in the stitched kernel's order) and equal the CPU's (1e-8).
 * Runs first: no region's kernel may be built before. */
static void test_async(void)
{
    t_seed(77);
    MB *in[5] = {t_gen(37, 53, 1, -3, 3, false), t_gen(37, 53, 1, -2, 2, false), t_gen(53, 4, 1, -1, 1, false),
                 t_gen(1, 53, 1, -1, 1, false), t_gen(53, 1, 1, -1, 1, false)};
    const char *names[5] = {"X", "W", "B", "v", "c"};
    CgOptions off = {.enabled = false};
    gpu_set_stitch(true);
    stitch_set_async(true);
    for (int k = 0; k < NCASES; k++) {
        const Case *c = &cases[k];
        const char *outs[1] = {c->out};
        TRun want, held, built;
        gpu_configure(GPU_OFF, -1, 0);
        t_run_dml(c->src, &off, 5, names, in, 1, outs, &want);
        gpu_configure(GPU_FORCE, -1, 0);
        stitch_async_hold(true);
        gpu_stats_reset();
        t_run_dml(c->src, &off, 5, names, in, 1, outs, &held);
        GpuStats st = gpu_stats();
        /* the MLogreg step's and the outer-product broadcast's region is
         * softmax's (the product is outside): built by the first case */
        bool seen = !strcmp(c->name, "mlogreg step") || !strcmp(c->name, "outer-product broadcast");
        if (seen)
            T_CHECK(st.stitched == c->regions && st.stitch_fallbacks == 0, "async %s: the region is softmax's", c->name);
        else
            T_CHECK(st.stitched == 0 && st.stitch_fallbacks == c->regions,
                "async %s: %lld stitched, %lld unfused runs while compiling, want 0 and %d", c->name,
                (long long)st.stitched, (long long)st.stitch_fallbacks, c->regions);
        stitch_async_wait();
        gpu_stats_reset();
        t_run_dml(c->src, &off, 5, names, in, 1, outs, &built);
        st = gpu_stats();
        T_CHECK(st.stitched == c->regions && st.stitch_fallbacks == 0, "async %s: %lld stitched runs once built",
                c->name, (long long)st.stitched);
        T_CHECK(want.rc == 0 && held.rc == 0 && built.rc == 0, "async %s: %s %s %s", c->name, want.err, held.err,
                built.err);
        if (!want.rc && !held.rc && !built.rc) {
            T_MB_EQ(held.out[0].m, built.out[0].m, 0, "async %s: unfused while compiling = stitched, bit for bit",
                    c->name);
            T_MB_EQ(built.out[0].m, want.out[0].m, 1e-8, "async %s: GPU vs CPU", c->name);
        }
        t_run_free(&want), t_run_free(&held), t_run_free(&built);
    }
    stitch_set_async(false);
    for (int k = 0; k < 5; k++) mb_release(in[k]);
}

/* The cost rule under -gpu (not force) counts the download a device-only
 * input would cost the CPU (docs/gpu.md): on PoCL (a CPU device) a chain
 * over a device-only 400 x 500 input stays on the device (no landing),
 * the same chain over a host input stays on the host (no upload), and
 * over a device-only 2 x 3 input (a landing cheaper than a launch) it
 * lands the input once and runs on the host. Counts, not times. */
static void test_worth(void)
{
    const char *src = "S = Y * 2 + 1\n", *names[1] = {"Y"}, *outs[1] = {"S"};
    const int64_t shape[3][2] = {{400, 500}, {400, 500}, {2, 3}};
    const bool on_dev[3] = {true, false, true};
    const int64_t want_ops[3] = {2, 0, 0}, want_landed[3] = {0, 0, 1};
    CgOptions off = {.enabled = false};
    t_seed(31);
    for (int k = 0; k < 3; k++) {
        MB *x = t_gen(shape[k][0], shape[k][1], 1, -1, 1, false), *in[1] = {x};
        BrErr e = {0};
        TRun want, got;
        gpu_configure(GPU_OFF, -1, 0);
        t_run_dml(src, &off, 1, names, in, 1, outs, &want);
        gpu_configure(GPU_FORCE, -1, 0);
        gpu_pool_clear();
        MB *y = NULL;
        if (on_dev[k]) {
            /* a device-only block with x's exact values: the transpose
             * of its transpose */
            MB *t = gpu_transpose(x, &e);
            y = t ? gpu_transpose(t, &e) : NULL;
            mb_release(t);
            in[0] = y;
        }
        T_CHECK(!on_dev[k] || (y && y->dev), "worth %d: a device-only input: %s", k, e.msg);
        gpu_configure(GPU_ON, -1, 0);
        gpu_set_stitch(false);
        gpu_stats_reset();
        t_run_dml(src, &off, 1, names, in, 1, outs, &got);
        GpuStats st = gpu_stats();
        T_CHECK(want.rc == 0 && got.rc == 0, "worth %d: %s %s", k, want.err, got.err);
        T_CHECK(st.ops == want_ops[k] && st.landed == want_landed[k] && st.h2d_bytes == 0,
                "worth %d: %lld operators on the device, %lld landings, %lld bytes up", k, (long long)st.ops,
                (long long)st.landed, (long long)st.h2d_bytes);
        if (!want.rc && !got.rc) T_MB_EQ(got.out[0].m, want.out[0].m, 0, "worth %d: GPU vs CPU", k);
        t_run_free(&want);
        t_run_free(&got);
        mb_release(y);
        mb_release(x);
    }
    gpu_set_stitch(true);
    gpu_configure(GPU_FORCE, -1, 0);
    gpu_pool_clear();
}

/* The build term for stitched regions (stitch_build_share): under -gpu
 * (not force) a region over a device-only 400 x 500 input whose kernel
 * is not built yet runs on the host (the build's share, the whole mean
 * build time on its first call, outweighs the 80 us landing: the input
 * lands), and on the device once a forced run has built its kernel. */
static void test_worth_build(void)
{
    const char *src = "S = exp(Y * 0.375) + 1.25\n", *names[1] = {"Y"}, *outs[1] = {"S"};
    CgOptions off = {.enabled = false};
    t_seed(33);
    for (int k = 0; k < 2; k++) {
        MB *x = t_gen(400, 500, 1, -1, 1, false), *in[1] = {x};
        BrErr e = {0};
        TRun want, got;
        gpu_configure(GPU_OFF, -1, 0);
        t_run_dml(src, &off, 1, names, in, 1, outs, &want);
        gpu_configure(GPU_FORCE, -1, 0);
        gpu_set_stitch(true);
        if (k == 1) {
            TRun b;
            t_run_dml(src, &off, 1, names, in, 1, outs, &b);
            t_run_free(&b);
        }
        gpu_pool_clear();
        MB *t = gpu_transpose(x, &e), *y = t ? gpu_transpose(t, &e) : NULL;
        mb_release(t);
        in[0] = y;
        T_CHECK(y && y->dev, "build %d: a device-only input: %s", k, e.msg);
        gpu_configure(GPU_ON, -1, 0);
        gpu_stats_reset();
        t_run_dml(src, &off, 1, names, in, 1, outs, &got);
        GpuStats st = gpu_stats();
        T_CHECK(want.rc == 0 && got.rc == 0, "build %d: %s %s", k, want.err, got.err);
        T_CHECK(k ? st.stitched == 1 && st.landed == 0 : st.stitched == 0 && st.landed == 1,
                "build %d: %lld regions on the device, %lld landings", k, (long long)st.stitched, (long long)st.landed);
        if (!want.rc && !got.rc) T_MB_EQ(got.out[0].m, want.out[0].m, 1e-12, "build %d: GPU vs CPU", k);
        t_run_free(&want);
        t_run_free(&got);
        mb_release(y);
        mb_release(x);
    }
    gpu_configure(GPU_FORCE, -1, 0);
    gpu_pool_clear();
}

/* -explain codegen under -gpu with codegen on (src's blocks, stitch
 * pass on or off) into text, the launches into *launches */
static void explain_run(const char *src, bool stitch, char *text, size_t cap, int64_t *launches)
{
    const char *outs[1] = {"S"};
    CgOptions on = {.enabled = true, .plancache = true, .policy = CG_COST_BASED, .explain = tmpfile()};
    T_CHECK(on.explain != NULL, "tmpfile");
    text[0] = 0;
    if (!on.explain) return;
    gpu_configure(GPU_FORCE, -1, 0);
    gpu_set_stitch(stitch);
    gpu_stats_reset();
    TRun r;
    t_run_dml(src, &on, 0, NULL, NULL, 1, outs, &r);
    *launches = gpu_stats().launches;
    T_CHECK(r.rc == 0, "explain run: %s", r.err);
    rewind(on.explain);
    size_t n = fread(text, 1, cap - 1, on.explain);
    text[n] = 0;
    fclose(on.explain);
    t_run_free(&r);
    gpu_set_stitch(true);
}

/* -explain codegen under -gpu with codegen on: a script that makes its
 * inputs with rand() in the block, whose work the stitch pass takes
 * before codegen's exploration, printed nothing (codegen fused nothing
 * and only printed DAGs with fused operators). The DAG's stitched
 * regions are its fusion decisions: they print as such (softmax, a row
 * aggregate in the middle). A full aggregate of elementwise work alone
 * (sum(exp(X) * W)) is left to codegen's Cell FULL_AGG operator, which
 * costs less than the region's row sums and the full aggregate over
 * them (stitchpass.c left_to_codegen): the same operator and launches
 * as with the pass off, no region (before: a region and more
 * launches). */
static void test_explain(void)
{
    char text[4096], off[4096];
    int64_t l_on = 0, l_off = 0;
    explain_run("X = rand(rows=60, cols=17, seed=3)\nE = exp(X - rowMaxs(X))\nS = E / rowSums(E)\n", true, text,
                sizeof text, &l_on);
    T_CHECK(strstr(text, "): 0 fused operators, 1 stitched region\n") != NULL,
            "-explain codegen: the DAG's stitched region is its fusion decision:\n%s", text);
    T_CHECK(strstr(text, "stitched region at hop") && strstr(text, "= row(max) N0") &&
                strstr(text, "= u(exp) N2") && strstr(text, "= b(/) N3 N4  [out]"),
            "-explain codegen: the region's nodes:\n%s", text);
    const char *src = "X = rand(rows=60, cols=17, seed=3)\nW = rand(rows=60, cols=17, seed=4)\n"
                      "s = sum(exp(X) * W)\nS = X * s\n";
    explain_run(src, true, text, sizeof text, &l_on);
    explain_run(src, false, off, sizeof off, &l_off);
    T_CHECK(strstr(text, "CODEGEN DAG") && strstr(text, "CELL FULL_AGG") && !strstr(text, "stitched region"),
            "-explain codegen, sum(exp(X) * W): codegen's Cell FULL_AGG, no region:\n%s", text);
    T_CHECK(strstr(off, "CELL FULL_AGG") && !strstr(off, "stitched region"),
            "-explain codegen, the pass off: codegen's operator, no region:\n%s", off);
    T_CHECK(l_on == l_off && l_on > 0, "sum(exp(X) * W): %lld launches with the pass, %lld without", (long long)l_on,
            (long long)l_off);
    printf("launches sum(exp(X) * W) with codegen: stitch pass on %lld, off %lld\n", (long long)l_on,
           (long long)l_off);
}

int main(void)
{
    /* the nominal device profile and the pinned CPU constants
     * (t_pin_machine): the cost rule's, the evaluator's and codegen's
     * choices checked here (no fused operator left on the CPU, the
     * -explain text) do not depend on a measurement under load */
    t_pin_machine();
    gpu_configure(GPU_FORCE, -1, 0);
    BrErr e = {0};
    int rc = gpu_init(&e);
    T_CHECK(rc == 0, "an OpenCL device: %s", e.msg);
    if (rc) return t_done("test_gpustitch");
    test_async();
    test_worth_build();
    for (int k = 0; k < NCASES; k++) {
        for (int s = 0; s < 3; s++) {
            /* the mlogreg step needs B with cols rows */
            run_case(&cases[k], shapes[s][0], shapes[s][1], false);
        }
        run_case(&cases[k], 37, 53, true);
        /* square: the product's vector and a per-row vector have one
         * shape (the region reads the product's along the rows) */
        if (strstr(cases[k].src, "%*% c")) run_case(&cases[k], 41, 41, false);
    }
    test_inplace();
    test_worth();
    test_lazy();
    test_lazy_csr();
    test_multi();
    test_same_bits();
    test_explain();
    print_launches(&cases[0]);
    print_launches(&cases[1]);
    print_launches(&cases[2]);
    print_launches(&cases[5]);
    return t_done("test_gpustitch");
}
