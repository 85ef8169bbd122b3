/* test_stitch.c: FusionStitching's generated kernels (gpu/stitch.c)
 * against the unfused CPU reference, per composition scheme, for
 * layernorm, softmax, column standardization and random regions with
 * reductions in the middle, over shapes that are not multiples of the
 * work-group sizes; kernel packing; the latency evaluator's choices; the
 * launch counts of XLA-style, stitched and per-operator plans (printed:
 * docs/gpu.md quotes them). */
#include <math.h>
#include <string.h>

#include "t.h"
#include "gpu/stitch.h"
#include "kernels/agg.h"
#include "kernels/ew.h"

static unsigned t_seed = 11;
static double urand(void)
{
    t_seed = t_seed * 1103515245u + 12345u;
    return (double)((t_seed >> 8) & 0xFFFFFF) / (double)0x1000000;
}

static MB *rnd(int64_t r, int64_t c, double sp)
{
    BrErr e = {0};
    MB *m = mb_dense(r, c, &e);
    for (int64_t i = 0; i < r * c; i++)
        if (urand() < sp) m->d[i] = urand() * 8 - 4;
    mb_recount_nnz(m);
    return m;
}

/* A random region: X, then cheap bounded cell operators, reductions of
 * random cell nodes in the middle, and a root combining a cell node with
 * the last per-segment value. */
static void random_region(StitchRegion *r)
{
    memset(r, 0, sizeof *r);
    r->dir = urand() < 0.5 ? DIR_ROW : DIR_COL;
    int cellv[ST_MAX_NODES], nc = 0, segv = -1;
    cellv[nc++] = st_x(r);
    const OpCode un[] = {OP_NEG, OP_ABS, OP_SIN, OP_TANH};
    const OpCode bin[] = {OP_PLUS, OP_MINUS, OP_MULT, OP_MIN, OP_MAX};
    const OpCode red[] = {OP_SUM, OP_MEAN, OP_AMIN, OP_AMAX};
    int steps = 4 + (int)(urand() * 8);
    for (int s = 0; s < steps; s++) {
        double u = urand();
        int a = cellv[(int)(urand() * nc)];
        if (u < 0.3) {
            segv = st_red(r, red[(int)(urand() * 4)], a);
        } else if (u < 0.5) {
            cellv[nc++] = st_un(r, un[(int)(urand() * 4)], a);
        } else {
            int b = segv >= 0 && urand() < 0.6 ? segv : cellv[(int)(urand() * nc)];
            cellv[nc++] = st_bin(r, bin[(int)(urand() * 5)], a, b);
        }
    }
    if (segv < 0) segv = st_red(r, OP_SUM, cellv[nc - 1]);
    st_bin(r, OP_MINUS, cellv[nc - 1], st_un(r, OP_TANH, segv));
}

static const int64_t shapes[][2] = {{1, 1}, {5, 3}, {37, 29}, {3, 301}, {130, 7}, {70, 257}};

static void check_all_schemes(const StitchRegion *r, const char *name)
{
    for (int s = 0; s < 6; s++) {
        int64_t rows = shapes[s][0], cols = shapes[s][1];
        MB *x = rnd(rows, cols, s == 4 ? 0.3 : 1);
        BrErr e = {0};
        MB *want = stitch_reference(r, x, &e);
        T_CHECK(want != NULL, "%s: reference: %s", name, e.msg);
        StitchSched cand[16];
        int n = stitch_enumerate(r, rows, cols, cand, 16);
        T_CHECK(n >= 9, "%s: %d schedules", name, n);
        bool seen[ST_NSCHEMES] = {0};
        for (int k = 0; k < n; k++) {
            BrErr ge = {0};
            MB *got = stitch_run(r, x, &cand[k], &ge);
            T_CHECK(got != NULL, "%s %s/%d: %s", name, stitch_scheme_name(cand[k].scheme), cand[k].lanes, ge.msg);
            T_MB_EQ(got, want, 1e-8, "%s %lldx%lld %s lanes %d wg %d", name, (long long)rows, (long long)cols,
                    stitch_scheme_name(cand[k].scheme), cand[k].lanes, cand[k].wg);
            seen[cand[k].scheme] = true;
            mb_release(got);
        }
        for (int k = 0; k < ST_NSCHEMES; k++) T_CHECK(seen[k], "%s: scheme %s enumerated", name, stitch_scheme_name(k));
        /* the evaluator's pick */
        MB *got = stitch_run(r, x, NULL, &e);
        T_MB_EQ(got, want, 1e-8, "%s %lldx%lld best schedule", name, (long long)rows, (long long)cols);
        mb_release(got), mb_release(want), mb_release(x);
    }
}

/* A random region as the DML pass forms them: inputs beyond X (cells,
 * per-segment and per-position vectors), scalar arguments, var through
 * SN_VARDIV, a root per cell or per segment; X may first be read after a
 * reduction over another input (X then fills its register cache in a
 * later pass). */
static void random_region_io(StitchRegion *r)
{
    memset(r, 0, sizeof *r);
    r->dir = urand() < 0.5 ? DIR_ROW : DIR_COL;
    int cellv[ST_MAX_NODES], nc = 0, segs[ST_MAX_NODES], ns = 0;
    cellv[nc++] = st_in(r, 1, SI_CELL);
    cellv[nc++] = st_in(r, 2, SI_POS);
    segs[ns++] = st_in(r, 3, SI_SEG);
    segs[ns++] = st_sc(r, 0);
    segs[ns++] = st_red(r, OP_SUM, cellv[0]);
    cellv[nc++] = st_bin(r, OP_MULT, st_x(r), segs[ns - 1]);
    const OpCode bin[] = {OP_PLUS, OP_MINUS, OP_MULT, OP_MIN, OP_MAX};
    int steps = 3 + (int)(urand() * 6);
    for (int s = 0; s < steps; s++) {
        double u = urand();
        int a = cellv[(int)(urand() * nc)];
        if (u < 0.25) {
            segs[ns++] = st_red(r, urand() < 0.5 ? OP_MEAN : OP_AMAX, a);
        } else if (u < 0.4) {
            /* the sample variance: mean, squared deviations, / (n - 1) */
            int c = st_bin(r, OP_MINUS, a, st_red(r, OP_MEAN, a));
            segs[ns++] = st_un(r, OP_SQRT, st_vardiv(r, st_red(r, OP_SUM, st_bin(r, OP_MULT, c, c))));
        } else {
            int b = urand() < 0.6 ? segs[(int)(urand() * ns)] : cellv[(int)(urand() * nc)];
            cellv[nc++] = st_bin(r, bin[(int)(urand() * 5)], a, b);
        }
    }
    int last = cellv[nc - 1], sv = segs[(int)(urand() * ns)];
    if (urand() < 0.3) st_bin(r, OP_PLUS, st_red(r, OP_AMIN, last), st_un(r, OP_TANH, sv));
    else st_bin(r, OP_MINUS, last, st_un(r, OP_TANH, sv));
}

/* a region's inputs for X of rows x cols (by mode) */
static void io_inputs(const StitchRegion *r, int64_t rows, int64_t cols, MB **in, double *sc, int s)
{
    in[0] = rnd(rows, cols, s == 4 ? 0.3 : 1);
    for (int k = 1; k < r->nin; k++) {
        bool rowsv = (r->dir == DIR_ROW) == (r->mode[k] == SI_SEG);
        in[k] = r->mode[k] == SI_CELL ? rnd(rows, cols, 1) : rowsv ? rnd(rows, 1, 1) : rnd(1, cols, 1);
    }
    for (int k = 0; k < r->nsc; k++) sc[k] = urand() * 4 - 2;
}

static void check_io(const StitchRegion *r, const char *name)
{
    for (int s = 0; s < 6; s++) {
        int64_t rows = shapes[s][0], cols = shapes[s][1];
        MB *in[ST_MAX_IN] = {0};
        double sc[ST_MAX_SC] = {0};
        io_inputs(r, rows, cols, in, sc, s);
        BrErr e = {0};
        MB *want = stitch_reference_in(r, (const MB *const *)in, sc, &e);
        T_CHECK(want != NULL, "%s: reference: %s", name, e.msg);
        StitchSched cand[16];
        int n = stitch_enumerate(r, rows, cols, cand, 16);
        for (int k = 0; k < n && want; k++) {
            BrErr ge = {0};
            MB *got = stitch_exec(r, (const MB *const *)in, sc, &cand[k], &ge);
            T_CHECK(got != NULL, "%s %s/%d: %s", name, stitch_scheme_name(cand[k].scheme), cand[k].lanes, ge.msg);
            T_MB_EQ(got, want, 1e-8, "%s %lldx%lld %s lanes %d wg %d", name, (long long)rows, (long long)cols,
                    stitch_scheme_name(cand[k].scheme), cand[k].lanes, cand[k].wg);
            mb_release(got);
        }
        mb_release(want);
        for (int k = 0; k < ST_MAX_IN; k++) mb_release(in[k]);
    }
}

/* Multi-output regions: nodes inside the region (intermediate cells,
 * reductions, per-segment work) as further outputs of the same launch,
 * each against the reference under every schedule. */
static void add_outputs(StitchRegion *r)
{
    int want = 1 + (int)(urand() * 3);
    for (int tries = 0; tries < 64 && r->nxout < want; tries++) {
        int i = (int)(urand() * r->n);
        bool dup = i == r->root;
        for (int k = 0; k < r->nxout; k++) dup |= r->xout[k] == i;
        if (!dup) st_output(r, i);   /* refuses scalar nodes */
    }
}

static void check_multi(const StitchRegion *r, const char *name)
{
    for (int s = 0; s < 6; s++) {
        int64_t rows = shapes[s][0], cols = shapes[s][1];
        MB *in[ST_MAX_IN] = {0}, *want[ST_MAX_OUT] = {0};
        double sc[ST_MAX_SC] = {0};
        io_inputs(r, rows, cols, in, sc, s);
        BrErr e = {0};
        int rc = stitch_reference_all(r, (const MB *const *)in, sc, want, &e);
        T_CHECK(rc == 0, "%s: reference: %s", name, e.msg);
        StitchSched cand[16];
        int n = stitch_enumerate(r, rows, cols, cand, 16);
        for (int k = 0; k < n && !rc; k++) {
            BrErr ge = {0};
            MB *got[ST_MAX_OUT] = {0};
            gpu_stats_reset();
            int grc = stitch_exec_all(r, (const MB *const *)in, sc, &cand[k], got, &ge);
            T_CHECK(grc == 0 && got[0], "%s %s/%d: %s", name, stitch_scheme_name(cand[k].scheme), cand[k].lanes, ge.msg);
            /* every output from the same launches as one */
            T_CHECK(gpu_stats().launches == stitch_launches(r, &cand[k]), "%s: %lld launches for %d outputs", name,
                    (long long)gpu_stats().launches, st_nout(r));
            for (int o = 0; o < st_nout(r); o++) {
                T_MB_EQ(got[o], want[o], 1e-8, "%s %lldx%lld %s lanes %d output %d", name, (long long)rows,
                        (long long)cols, stitch_scheme_name(cand[k].scheme), cand[k].lanes, o);
                mb_release(got[o]);
            }
        }
        for (int o = 0; o < ST_MAX_OUT; o++) mb_release(want[o]);
        for (int k = 0; k < ST_MAX_IN; k++) mb_release(in[k]);
    }
}

/* Launches of layernorm as braid's per-operator GPU plan runs it. */
static int64_t unfused_layernorm_launches(const MB *x)
{
    BrErr e = {0};
    gpu_stats_reset();
    MB *mu = gpu_agg(OP_MEAN, DIR_ROW, x, &e);
    MB *c = gpu_binary(OP_MINUS, x, mu, &e);
    MB *sq = gpu_binary(OP_MULT, c, c, &e);
    MB *var = gpu_agg(OP_MEAN, DIR_ROW, sq, &e);
    MB *ve = gpu_binary_ms(OP_PLUS, var, 1e-5, false, &e);
    MB *sd = gpu_unary(OP_SQRT, ve, &e);
    MB *y = gpu_binary(OP_DIV, c, sd, &e);
    int64_t n = gpu_stats().launches;
    mb_release(mu), mb_release(c), mb_release(sq), mb_release(var), mb_release(ve), mb_release(sd), mb_release(y);
    return n;
}

static int64_t unfused_softmax_launches(const MB *x)
{
    BrErr e = {0};
    gpu_stats_reset();
    MB *m = gpu_agg(OP_AMAX, DIR_ROW, x, &e);
    MB *c = gpu_binary(OP_MINUS, x, m, &e);
    MB *ex = gpu_unary(OP_EXP, c, &e);
    MB *s = gpu_agg(OP_SUM, DIR_ROW, ex, &e);
    MB *y = gpu_binary(OP_DIV, ex, s, &e);
    int64_t n = gpu_stats().launches;
    mb_release(m), mb_release(c), mb_release(ex), mb_release(s), mb_release(y);
    return n;
}

static int64_t run_launches(const StitchRegion *r, const MB *x, StitchScheme sch)
{
    StitchSched s = {.scheme = sch, .lanes = sch == ST_THREAD ? 1 : 64, .wg = 64};
    BrErr e = {0};
    gpu_stats_reset();
    MB *y = stitch_run(r, x, &s, &e);
    mb_release(y);
    return gpu_stats().launches;
}

static void test_launches(void)
{
    StitchRegion ln, sm, cs;
    st_layernorm(&ln, 1e-5);
    st_softmax(&sm);
    st_colstd(&cs);
    MB *x = rnd(64, 100, 1);
    int64_t lx = run_launches(&ln, x, ST_XLA), ls = run_launches(&ln, x, ST_WORKGROUP);
    int64_t sx = run_launches(&sm, x, ST_XLA), ss = run_launches(&sm, x, ST_WORKGROUP);
    int64_t cx = run_launches(&cs, x, ST_XLA), cst = run_launches(&cs, x, ST_WORKGROUP);
    int64_t lu = unfused_layernorm_launches(x), su = unfused_softmax_launches(x);
    printf("launches per region (per operator / XLA-style / stitched): layernorm %lld/%lld/%lld, "
           "softmax %lld/%lld/%lld, column standardization -/%lld/%lld\n",
           (long long)lu, (long long)lx, (long long)ls, (long long)su, (long long)sx, (long long)ss, (long long)cx,
           (long long)cst);
    T_CHECK(lx == 3 && sx == 3 && cx == 3, "XLA-style: a kernel per reduction depth and the output");
    T_CHECK(ls == 1 && ss == 1 && cst == 1, "stitched: one kernel");
    T_CHECK(lu == 7 && su == 5, "per operator: one launch each (%lld, %lld)", (long long)lu, (long long)su);
    /* local memory: one scratch array for all reductions (section 4.4) */
    StitchSched w = {.scheme = ST_WORKGROUP, .lanes = 128, .wg = 128};
    stitch_cost(&cs, 64, 100, &w);
    T_CHECK(w.lmem == 128 * 8 && w.lmem_noreuse == 2 * 128 * 8, "scratch reused: %.0f of %.0f bytes", w.lmem,
            w.lmem_noreuse);
    printf("local memory per work-group (column standardization, 128 lanes): %.0f bytes with reuse, %.0f without\n",
           w.lmem, w.lmem_noreuse);
    /* the evaluator: short rows favour fewer lanes per segment, long rows
     * a work-group per row */
    StitchSched best;
    stitch_enumerate(&ln, 100000, 4, &best, 1);
    StitchSched best2;
    stitch_enumerate(&ln, 16, 100000, &best2, 1);
    printf("evaluator's pick: layernorm 100000x4 %s/%d lanes, 16x100000 %s/%d lanes\n",
           stitch_scheme_name(best.scheme), best.lanes, stitch_scheme_name(best2.scheme), best2.lanes);
    T_CHECK(best.scheme != ST_XLA && best2.scheme == ST_WORKGROUP && best.lanes < best2.lanes,
            "the evaluator adapts lanes per segment to the segment length");
    /* the device profile prices it (gpu_profile): a launch's latency per
     * kernel, and the bytes moved at the device's bandwidth as a floor */
    const GpuProfile slow_l = {1e-3, 1e15, 1e9, 1e-3, 1e15, 1e9}, slow_m = {1e-9, 1e6, 1e9, 1e-9, 1e6, 1e9};
    double hz = BR_MAX(gpu_info()->clock_mhz, 1000) * 1e6;
    StitchSched xs = {.scheme = ST_XLA, .lanes = 64, .wg = 64}, ws = {.scheme = ST_WORKGROUP, .lanes = 128, .wg = 128};
    gpu_set_profile(&slow_l);
    stitch_cost(&ln, 64, 100, &xs);
    stitch_cost(&ln, 64, 100, &ws);
    T_CHECK(xs.cycles >= 3e-3 * hz && xs.cycles - ws.cycles >= 1.9e-3 * hz,
            "1 ms launches: XLA-style's 3 cost 3 ms, 2 more than stitched (%g, %g cycles)", xs.cycles, ws.cycles);
    gpu_set_profile(&slow_m);
    stitch_cost(&ln, 64, 100, &ws);
    T_CHECK(ws.cycles >= 64 * 100 * 8 / 1e6 * hz, "1 MB/s: at least X's bytes (%g cycles)", ws.cycles);
    gpu_set_profile(NULL);
    mb_release(x);
}

static void test_packed(void)
{
    StitchRegion ln, sm, cs;
    st_layernorm(&ln, 1e-3);
    st_softmax(&sm);
    st_colstd(&cs);
    MB *x[3] = {rnd(33, 17, 1), rnd(5, 300, 1), rnd(70, 9, 1)};
    const StitchRegion *rs[3] = {&ln, &sm, &cs};
    MB *out[3];
    BrErr e = {0};
    gpu_stats_reset();
    int rc = stitch_run_packed(rs, (const MB *const *)x, 3, out, &e);
    T_CHECK(rc == 0, "packed: %s", e.msg);
    T_CHECK(gpu_stats().launches == 1, "three regions, one launch (%lld)", (long long)gpu_stats().launches);
    for (int k = 0; k < 3; k++) {
        MB *want = stitch_reference(rs[k], x[k], &e);
        T_MB_EQ(rc == 0 ? out[k] : NULL, want, 1e-8, "packed region %d", k);
        mb_release(want);
        if (rc == 0) mb_release(out[k]);
        mb_release(x[k]);
    }
}

int main(void)
{
    /* the nominal device profile: the cost rule's and the evaluator's
     * choices checked here do not depend on the device's measurement */
    setenv("BRAID_GPU_PROFILE", "10e-6 500e9 12e9", 0);
    gpu_configure(GPU_FORCE, -1, 0);
    BrErr e = {0};
    int rc = gpu_init(&e);
    T_CHECK(rc == 0, "an OpenCL device: %s", e.msg);
    if (rc) return t_done("test_stitch");
    StitchRegion r;
    st_layernorm(&r, 1e-5);
    check_all_schemes(&r, "layernorm");
    st_softmax(&r);
    check_all_schemes(&r, "softmax");
    st_colstd(&r);
    check_all_schemes(&r, "colstd");
    for (int k = 0; k < 8; k++) {
        random_region(&r);
        char nm[32];
        snprintf(nm, sizeof nm, "random %d", k);
        check_all_schemes(&r, nm);
    }
    for (int k = 0; k < 6; k++) {
        random_region_io(&r);
        char nm[32];
        snprintf(nm, sizeof nm, "random with inputs %d", k);
        check_io(&r, nm);
    }
    /* layernorm with its mean and variance as outputs (per segment) */
    st_layernorm(&r, 1e-5);
    st_output(&r, 1);
    st_output(&r, 4);
    check_multi(&r, "layernorm + mean + var");
    for (int k = 0; k < 4; k++) {
        random_region_io(&r);
        add_outputs(&r);
        char nm[32];
        snprintf(nm, sizeof nm, "multi-output %d", k);
        check_multi(&r, nm);
    }
    /* sub-group sums: in the source for devices that have them (PoCL has
     * not: the fallback tree is what ran above) */
    st_softmax(&r);
    StitchSched sg = {.scheme = ST_SUBGROUP, .lanes = 8, .wg = 64};
    char *src = stitch_source(&r, &sg);
    T_CHECK(src && strstr(src, "sub_group_reduce_add") && strstr(src, "#ifdef ST_SG"),
            "the sub-group reduction for devices with cl_khr_subgroups");
    T_CHECK(src && !strstr(src, "sub_group_reduce_max"), "max keeps the NaN-sticky tree");
    /* computation reuse (seed 4.5): softmax's exp(x - max) (node 3),
     * computed by the sum's pass and the output pass, is kept beside the
     * cached X by the first and read by the second; a cheap node or one
     * pass's node is not kept */
    T_CHECK(src && strstr(src, "double cv3[") && strstr(src, "cv3[t] = v3;") && strstr(src, "cache ? cv3[t] :"),
            "softmax keeps exp(x - max) for its output pass");
    T_CHECK(src && !strstr(src, "double cv2[") && !strstr(src, "double cv0["), "x - max and x are not kept");
    free(src);
    st_layernorm(&r, 1e-5);
    src = stitch_source(&r, &sg);
    T_CHECK(src && !strstr(src, "double cv"), "layernorm keeps nothing (no dear node)");
    free(src);
    memset(&r, 0, sizeof r);
    r.dir = DIR_ROW;
    {
        int x = st_x(&r), e = st_un(&r, OP_EXP, x);
        st_bin(&r, OP_DIV, e, st_red(&r, OP_SUM, x));
    }
    src = stitch_source(&r, &sg);
    T_CHECK(src && !strstr(src, "double cv"), "exp(x) / sum(x): exp in one pass only, not kept");
    free(src);
    check_all_schemes(&r, "exp(x) / sum(x)");
    test_launches();
    test_packed();
    return t_done("test_stitch");
}
