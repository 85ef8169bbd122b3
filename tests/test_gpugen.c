/* test_gpugen.c: codegen's Row, Outer, Cell and MAgg operators in OpenCL
 * (codegen/cgen_cl.c, gpu/spoof_cl.c; docs/gpu.md). Each script runs with codegen on (fused
 * operators kept on every shape, stitching off so that codegen fuses)
 * twice: with the GPU backend off (the reference: the same plan through
 * the reference kernels, or, with NaN/Inf in the inputs, the CPU's
 * generated operators) and forced on; the outputs must agree, and every operator
 * placed must have run on the device (the backend's counters: operators
 * on the device == operators placed, none left to the CPU). Row: every variant
 * (NO_AGG, ROW_AGG, COL_AGG, FULL_AGG, COL_T_AGG and multi-output
 * plans), with products of one and several columns, side inputs of every
 * mode. Outer: NO_AGG, FULL_AGG, LEFT_MM, RIGHT_MM and RIGHT_T_MM over
 * CSR drivers and dense ones with zeros, factors of rank 1 and 3.
 * Cell/MAgg: every variant and aggregate, sparse-safe plans over CSR
 * main inputs (min/max meeting the implicit zeros), fused slices, row
 * and column vectors. Over shapes with 1 and odd sizes, dense and CSR
 * main inputs, and once with NaN, Inf and -Inf in the inputs. Launch
 * counts; asynchronous builds (the CPU's operator until the kernel is
 * built). Cell terms are positive or of one sign per aggregate, so the
 * bound below holds for them too.
 *
 * Tolerance: the device sums products in another order than the CPU
 * (plain sums per column in row order; the CPU's 16 partial sums) and
 * adds the work-items' partials in block order. A sum of n terms carries
 * an absolute error of at most n u sum|terms| (u = 2^-53) on either side.
 * The inputs are in [0, 1) (X, V, W) and [-1, 1) (Y), n <= 1001 rows or
 * 37 columns, and the sums nest at most three deep, so the error is at
 * most 3 n u sum|terms| <= 3.4e-13 sum|terms|; the terms' magnitudes
 * stay below 1e3 times the result's max(|x|, 1) for these scripts
 * (positive terms give sum|terms| = |result|), which bounds the
 * difference by 3.4e-10 of it: rtol 1e-9. exp(.) of products amplifies
 * by its argument (< 37): still inside. */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "t.h"
#include "t_dml.h"
#include "gpu/gpu.h"
#include "gpu/stitch.h"
#include "kernels/cla.h"

typedef struct Case {
    const char *name;
    const char *src;
    int nout;
    const char *out[3];   /* read by t_run_dml as const char ** */
} Case;

static const Case cases[] = {
    /* NO_AGG: a product of several columns feeding elementwise work */
    {"no_agg X %*% V", "S = exp((X %*% V) * 0.1) + W[, 1:ncol(V)] * 0\n", 1, {"S"}},
    {"no_agg row ops", "S = (X %*% V) / (1 + rowSums(X))\n", 1, {"S"}},
    /* ROW_AGG */
    {"row_agg", "s = rowSums(exp((X %*% V) * 0.1))\n", 1, {"s"}},
    {"row_agg max", "s = rowMaxs(X * W[, 1:ncol(X)]) + rowMeans(X)\n", 1, {"s"}},
    /* slices of the rows' vectors (bounds are scalar arguments) */
    {"row slices", "P = X %*% V\ns = rowSums(exp(P[, 1:ceil(ncol(P) / 2)] * 0.1)) + rowMaxs(X[, ceil(ncol(X) / 2):ncol(X)])\n", 1, {"s"}},
    /* COL_AGG and FULL_AGG over the rows' vectors */
    {"col_agg", "s = colSums(X / (1 + rowSums(X)))\n", 1, {"s"}},
    {"col_agg min", "s = colMins(X * (X %*% v))\n", 1, {"s"}},
    {"full_agg", "s = sum((X %*% V) ^ 2)\n", 1, {"s"}},
    /* COL_T_AGG: t(X) %*% (...) accumulations */
    /* (t(X) %*% (X %*% v) itself is the mmchain operator, not codegen's) */
    {"t(X) exp(X v)", "q = t(X) %*% exp((X %*% v) * 0.1)\n", 1, {"q"}},
    {"t(X) (X V)", "Q = t(X) %*% ((X %*% V) * 2)\n", 1, {"Q"}},
    {"t(X) (w * exp(X v))", "q = t(X) %*% (w * exp((X %*% v) * 0.1))\n", 1, {"q"}},
    {"t(X) (P - Y) mlogreg", "LT = X %*% V\nE = exp(LT - rowMaxs(LT))\nP = E / rowSums(E)\nG = t(X) %*% (P - Y)\n", 1, {"G"}},
    /* multi-output: aggregates over the rows of one main input */
    {"multi", "G = t(X) %*% (Y * (X %*% v))\nc = colSums(X * (X %*% v))\ns = sum(X %*% v)\n", 3, {"G", "c", "s"}},
    /* Outer: U %*% t(V) only at the driver X's non-zeros */
    {"outer no_agg", "S = X * exp(U %*% t(Vc))\n", 1, {"S"}},
    {"outer full_agg", "s = sum(X * log(U %*% t(Vc) + 1))\n", 1, {"s"}},
    {"outer left", "L = (X * (U %*% t(Vc) + X)) %*% Vc\n", 1, {"L"}},
    {"outer right", "R = t(X * (U %*% t(Vc) - X)) %*% U\n", 1, {"R"}},
    {"outer right_t", "T = t(U) %*% (X * (U %*% t(Vc) - 2))\n", 1, {"T"}},
    /* Cell: NO_AGG (every cell; sparse-safe plans over X's entries) */
    {"cell no_agg", "S = exp(X * 0.5) + W[, 1:ncol(X)] * w\n", 1, {"S"}},
    {"cell no_agg safe", "S = X * exp(W[, 1:ncol(X)] + w)\n", 1, {"S"}},
    {"cell row vector", "S = (X + t(v)) * w\n", 1, {"S"}},
    /* ROW_AGG: sums, min/max with the implicit zeros of CSR rows, means */
    {"cell row_agg", "s = rowSums(X * W[, 1:ncol(X)] + 1)\n", 1, {"s"}},
    {"cell row min max", "s = rowMaxs(X * -2)\nt = rowMins(X * 3)\n", 2, {"s", "t"}},
    {"cell row mean", "s = rowMeans(X ^ 2)\n", 1, {"s"}},
    /* COL_AGG */
    {"cell col_agg", "s = colSums(X * W[, 1:ncol(X)])\n", 1, {"s"}},
    {"cell col min max", "s = colMins(X * 3)\nt = colMaxs(X * -1)\n", 2, {"s", "t"}},
    {"cell col mean", "s = colMeans(exp(X) * w)\n", 1, {"s"}},
    /* FULL_AGG and MAgg */
    {"cell full_agg", "s = sum(X * log(W[, 1:ncol(X)] + 1))\n", 1, {"s"}},
    {"cell full min max", "a = max(X * -1)\nb = min(X * 2 + 0)\nc = sum(X ^ 2)\n", 3, {"a", "b", "c"}},
    {"cell full mean", "s = mean(X ^ 2 + w)\n", 1, {"s"}},
    {"magg", "a = sum(X ^ 2)\nb = sum(X * W[, 1:ncol(X)])\nc = sum(X * w)\n", 3, {"a", "b", "c"}},
};
#define NCASES ((int)(sizeof cases / sizeof *cases))

/* rows, columns of the main input, columns of V (the products' widths:
 * 11: odd, wider than the others; at 17 fuse_all makes a Cell
 * plan over the materialized product instead) */
static const int64_t shapes[][3] = {{1, 13, 2}, {7, 1, 5}, {130, 37, 11}, {1001, 9, 3}};

static void check_out_tol(const Case *c, int k, const Value *a, const Value *b, double tol, const char *what)
{
    if (a->kind == V_MATRIX && b->kind == V_MATRIX) {
        T_MB_EQ(a->m, b->m, tol, "%s: output %s (%s)", c->name, c->out[k], what);
    } else if (val_is_numeric(a) && val_is_numeric(b)) {
        double x = val_as_double(a), y = val_as_double(b);
        bool same = (isnan(x) && isnan(y)) || x == y;   /* NaN, infinities */
        T_CHECK(same || fabs(x - y) <= tol * fmax(fmax(fabs(x), fabs(y)), 1), "%s: output %s %.17g vs %.17g (%s)", c->name,
                c->out[k], x, y, what);
    } else {
        T_CHECK(false, "%s: output %s of kinds %d and %d (%s)", c->name, c->out[k], a->kind, b->kind, what);
    }
}

static void check_out(const Case *c, int k, const Value *a, const Value *b, const char *what)
{
    check_out_tol(c, k, a, b, 1e-9, what);
}

/* X with NaN, Inf and -Inf in some cells (nf), dense or CSR. */
static MB *gen_main(int64_t rows, int64_t cols, double sp, bool sparse, bool nf)
{
    MB *x = t_gen(rows, cols, sp, 0, 1, sparse && !nf);
    if (!nf) return x;
    static const double bad[] = {NAN, INFINITY, -INFINITY};
    for (int64_t q = 0; q < rows * cols; q += 7) mb_dset(x, q / cols, q % cols, bad[(q / 7) % 3]);
    mb_recount_nnz(x);
    if (!sparse) return x;
    BrErr e = {0};
    MB *s = mb_to_sparse(x, &e);
    mb_release(x);
    return s;
}

/* nf: non-finite values in X (and one in W) */
/* X on a grid of quarters, compressed (forced): codegen's compressed
 * main input */
static int cmb_enc = -1;   /* the groups' encoding (ClaPlanOpts.enc) */

static MB *compressed(MB *x)
{
    for (int64_t i = 0; i < x->rows; i++)
        for (int64_t j = 0; j < x->cols; j++) mb_dset(x, i, j, floor(mb_get(x, i, j) * 4) / 4);
    mb_recount_nnz(x);
    ClaPlanOpts o = {.force = true, .cocode = true, .enc = cmb_enc, .lut = true};
    BrErr e = {0};
    MB *c = cla_compress(x, &o, &e);
    T_CHECK(c && c->cmb, "X compressed: %s", e.msg);
    mb_release(x);
    return c;
}

/* The inputs X, W, V, v, w, Y, U, Vc of the cases (Outer's factors of
 * rank 3, or 1 when 3 divides the columns). */
static const char *names[8] = {"X", "W", "V", "v", "w", "Y", "U", "Vc"};

static void gen_inputs(MB **in, const Case *c, int64_t rows, int64_t cols, int64_t k, bool sparse, bool nf)
{
    t_seed(500 + (uint64_t)rows * 31 + (uint64_t)cols + sparse);
    int64_t r = cols % 3 ? 3 : 1;
    /* Outer drivers have zeros in the dense case too */
    bool outer = strstr(c->name, "outer") != NULL;
    in[0] = gen_main(rows, cols, sparse ? 0.2 : outer ? 0.3 : 1, sparse, nf);
    in[1] = t_gen(rows, cols + k, 1, 0, 1, false);
    in[2] = t_gen(cols, k, 1, 0, 1, false);
    in[3] = t_gen(cols, 1, 1, 0, 1, false);
    in[4] = t_gen(rows, 1, 1, 0, 1, false);
    in[5] = t_gen(rows, k, 1, -1, 1, false);
    in[6] = t_gen(rows, r, 1, 0, 1, false);
    in[7] = t_gen(cols, r, 1, 0, 1, false);
}

static void run_case_x(const Case *c, int64_t rows, int64_t cols, int64_t k, bool sparse, bool nf, bool cmb)
{
    char what[96];
    snprintf(what, sizeof what, "%lldx%lld k=%lld%s%s%s", (long long)rows, (long long)cols, (long long)k,
             sparse ? " CSR" : "", nf ? " NaN/Inf" : "", cmb ? " compressed" : "");
    bool outer = strstr(c->name, "outer") != NULL, cell = !strncmp(c->name, "cell", 4) || !strcmp(c->name, "magg");
    MB *in[8];
    gen_inputs(in, c, rows, cols, k, sparse, nf);
    if (nf && in[1]->rows * in[1]->cols > 2) mb_dset(in[1], 0, 1, INFINITY);
    if (cmb) in[0] = compressed(in[0]);
    CgOptions o = {.enabled = true, .plancache = true, .policy = CG_FUSE_ALL, .keep_fused = true};
    /* the reference: the same plan through the reference kernels
     * (codegen's interpret option; test_codegen holds the generated C to
     * them), so that no C compile is spent on it (the device run compiles
     * the C only of what the device declines: codegen.c compile_lazily);
     * with NaN/Inf in a plan with products (Row, Outer) the generated C
     * (the interpreter's products skip the zeros of their left operand,
     * 0 * Inf, where generated ones do not; the device declines such
     * calls and the CPU's C runs them) */
    CgOptions ro = o;
    ro.interpret = !nf || cell;
    TRun want, got;
    gpu_configure(GPU_OFF, -1, 0);
    t_run_dml(c->src, &ro, 8, names, in, c->nout, (const char **)c->out, &want);
    T_CHECK(want.rc == 0, "%s %s: CPU run: %s", c->name, what, want.err);
    gpu_configure(GPU_FORCE, -1, 0);
    gpu_set_stitch(false);
    gpu_stats_reset();
    t_run_dml(c->src, &o, 8, names, in, c->nout, (const char **)c->out, &got);
    GpuStats st = gpu_stats();
    T_CHECK(got.rc == 0, "%s %s: GPU run: %s", c->name, what, got.err);
    if (!want.rc && !got.rc) {
        for (int t = 0; t < c->nout; t++) check_out(c, t, &got.out[t], &want.out[t], what);
        /* every operator placed ran on the device (NaN/Inf: Row's
         * multi-output and CSR-driven plans and Outer's decline, as on
         * the CPU, exec.c) */
        int64_t all = got.st.fused[0] + got.st.fused[1] + got.st.fused[2] + got.st.fused[3];
        T_CHECK(nf ? st.fused_ops + st.fused_cpu == all : st.fused_ops == all && st.fused_cpu == 0,
                "%s %s: %lld operators on the device, %lld on the CPU; %lld placed", c->name, what,
                (long long)st.fused_ops, (long long)st.fused_cpu, (long long)all);
        if (nf && cell)
            T_CHECK(st.fused_ops == all && st.fused_cpu == 0, "%s %s: Cell/MAgg on the device (%lld of %lld)", c->name,
                    what, (long long)st.fused_ops, (long long)all);
        /* the shapes with more than one row and column form Row, Outer or
         * Cell/MAgg plans */
        if (rows > 1 && cols > 1 && !cell)
            T_CHECK(got.st.fused[outer ? 3 : 1] >= 1, "%s %s: a%s operator placed", c->name, what, outer ? "n Outer" : " Row");
        /* products run tiled (docs/gpu.md, "Tiled products") */
        if (rows > 1 && cols > 1 && !nf && strstr(c->src, "%*%"))
            T_CHECK(st.tiled >= 1, "%s %s: %lld tiled launches", c->name, what, (long long)st.tiled);
        if (rows > 1 && cols > 1 && cell)
            T_CHECK(got.st.fused[0] + got.st.fused[2] >= 1, "%s %s: a Cell or MAgg operator placed", c->name, what);
    }
    gpu_set_stitch(true);
    t_run_free(&want);
    t_run_free(&got);
    for (int q = 0; q < 8; q++) mb_release(in[q]);
}

static void run_case_nf(const Case *c, int64_t rows, int64_t cols, int64_t k, bool sparse, bool nf)
{
    run_case_x(c, rows, cols, k, sparse, nf, false);
}

static void run_case(const Case *c, int64_t rows, int64_t cols, int64_t k, bool sparse)
{
    run_case_nf(c, rows, cols, k, sparse, false);
}

/* Tiled products (docs/gpu.md, "Tiled products"). The sweep in main
 * runs its device runs under tiles that divide none of its dimensions
 * (tk = 1, 2, 5; tj = 1, 3, 16; work-groups of 1 and of 3 left partly
 * empty, a power of two left partly empty by the default 64 at 130 and
 * 1001 rows; 1001 x 9: blocks of rows, the last short) against the CPU.
 * (PoCL compiles a kernel once per work-group size: the two non-default
 * sizes 1 and 3 cost one compile each per program, where 1, 4 and 3
 * cost three.)
 * Here: every case with a product (Row's X %*% V, Outer's U %*% t(Vc))
 * over a dense and a CSR X of 130 x 37 under tiles of 3, 2, 3 is bit for
 * bit the device's own tiles' result (the sums run in the same order
 * whatever the tiles) and the CPU's within rtol, and launched a tiled
 * kernel; over an empty X (0 x 37) it agrees with the CPU. The kernels are the sweep's (tiles
 * are launch arguments: no builds). */
static const int sweep_tiles[][3] = {{0, 0, 0}, {1, 5, 1}, {3, 2, 3}, {3, 1, 16}};

static void test_tiles(void)
{
    CgOptions o = {.enabled = true, .plancache = true, .policy = CG_FUSE_ALL, .keep_fused = true};
    for (int c = 0; c < NCASES; c++) {
        const Case *cs = &cases[c];
        if (!strstr(cs->src, "%*%")) continue;
        for (int sp = 0; sp < 2; sp++) {
            if (!t_keep(c + sp, 2)) continue;   /* T_SAN: dense or CSR, by case */
            gpu_set_stitch(false);
            MB *in[8];
            gen_inputs(in, cs, 130, 37, 11, sp, false);
            TRun want, dflt, got;
            /* the plans compiled with the device off, as in the sweep (the
             * plan cache keeps them) */
            gpu_configure(GPU_OFF, -1, 0);
            t_run_dml(cs->src, &o, 8, names, in, cs->nout, (const char **)cs->out, &want);
            gpu_configure(GPU_FORCE, -1, 0);
            t_run_dml(cs->src, &o, 8, names, in, cs->nout, (const char **)cs->out, &dflt);
            gpu_spoof_tiles(3, 2, 3);
            gpu_stats_reset();
            t_run_dml(cs->src, &o, 8, names, in, cs->nout, (const char **)cs->out, &got);
            GpuStats st = gpu_stats();
            gpu_spoof_tiles(0, 0, 0);
            const char *what = sp ? "CSR" : "dense";
            T_CHECK(want.rc == 0 && dflt.rc == 0 && got.rc == 0, "%s %s tiles: %s %s %s", cs->name, what, want.err, dflt.err,
                    got.err);
            T_CHECK(st.tiled >= 1 && st.fused_cpu == 0, "%s %s: %lld tiled launches, %lld on the CPU", cs->name, what,
                    (long long)st.tiled, (long long)st.fused_cpu);
            for (int t = 0; t < cs->nout && !want.rc && !dflt.rc && !got.rc; t++) {
                check_out(cs, t, &got.out[t], &want.out[t], what);
                const Value *x = &got.out[t], *y = &dflt.out[t];
                if (x->kind == V_MATRIX && y->kind == V_MATRIX)
                    T_MB_EQ(x->m, y->m, 0, "%s: %s bit for bit under other tiles (%s)", cs->name, cs->out[t], what);
                else
                    T_CHECK(val_as_double(x) == val_as_double(y), "%s: %s %.17g vs %.17g under other tiles (%s)",
                            cs->name, cs->out[t], val_as_double(x), val_as_double(y), what);
            }
            t_run_free(&want);
            t_run_free(&dflt);
            t_run_free(&got);
            for (int q = 0; q < 8; q++) mb_release(in[q]);
        }
        /* an empty X (no launch) */
        run_case(cs, 0, 37, 11, false);
    }
    gpu_set_stitch(true);
}

/* A compressed X (docs/gpu.md, "Compressed inputs"): Row, Outer, Cell
 * and MAgg plans decompress it for the device under force and agree with
 * the CPU's operators over the compressed block (Cell/MAgg over its
 * dictionaries); every operator placed ran on the device. Outer's W
 * with its groups by size and with OLE and RLE forced. The shape and
 * plans of the dense runs above (their kernels are built already). */
static void test_compressed(void)
{
    static const char *which[] = {"row_agg", "col_agg", "full_agg", "cell no_agg", "cell row_agg", "cell col mean",
                                  "cell full min max", "magg"};
    for (size_t q = 0; q < sizeof which / sizeof *which; q++)
        for (int c = 0; c < NCASES; c++)
            if (!strcmp(cases[c].name, which[q])) run_case_x(&cases[c], 130, 37, 11, false, false, true);
    /* Outer over a compressed W: groups by size, OLE and RLE forced */
    static const int encs[] = {-1, CLA_OLE, CLA_RLE};
    for (size_t q = 0; q < sizeof encs / sizeof *encs; q++) {
        cmb_enc = encs[q];
        for (int c = 0; c < NCASES; c++)   /* T_SAN: every other Outer case per encoding */
            if (!strncmp(cases[c].name, "outer", 5) && t_keep(c + (int)q, 2))
                run_case_x(&cases[c], 130, 37, 11, false, false, true);
    }
    cmb_enc = -1;
}

/* A non-finite side input of a multi-output plan: the CPU runs the
 * unfused plan (its products skip the zeros of their left operand, 0 *
 * Inf); the device declines the same way (counted), and the results
 * are the CPU's, NaN included. */
static void test_nonfinite(void)
{
    const Case *c = &cases[12];
    T_CHECK(!strcmp(c->name, "multi"), "the multi-output case");
    t_seed(77);
    MB *in[4] = {t_gen(40, 9, 0.3, 0, 1, true), t_gen(9, 1, 1, 0, 1, false), t_gen(40, 3, 1, -1, 1, false), NULL};
    mb_dset(in[2], 5, 1, NAN);
    const char *names[3] = {"X", "v", "Y"};
    CgOptions o = {.enabled = true, .plancache = true, .policy = CG_FUSE_ALL, .keep_fused = true};
    TRun want, got;
    gpu_configure(GPU_OFF, -1, 0);
    t_run_dml(c->src, &o, 3, names, in, c->nout, (const char **)c->out, &want);
    gpu_configure(GPU_FORCE, -1, 0);
    gpu_set_stitch(false);
    gpu_stats_reset();
    t_run_dml(c->src, &o, 3, names, in, c->nout, (const char **)c->out, &got);
    GpuStats st = gpu_stats();
    T_CHECK(want.rc == 0 && got.rc == 0, "non-finite side input: %s %s", want.err, got.err);
    if (!want.rc && !got.rc) {
        for (int t = 0; t < c->nout; t++) check_out(c, t, &got.out[t], &want.out[t], "NaN in Y");
        T_CHECK(st.fused_cpu >= 1, "non-finite side input: the multi-output operator left to the CPU (%lld)",
                (long long)st.fused_cpu);
    }
    gpu_set_stitch(true);
    t_run_free(&want);
    t_run_free(&got);
    for (int q = 0; q < 3; q++) mb_release(in[q]);
}

/* The aggregated outputs combined inside the operator's launch
 * (docs/gpu.md, "The combine in the operator's launch"): multi-output
 * Row plans (the GLM step's t(X) %*% (w * q), colSums(X * (w * q)) and
 * max(w * q); MLogreg's t(X) %*% (P - Y) with sum(P * Y); COL_T_AGG,
 * COL_AGG and FULL_AGG together), a Row COL_T_AGG, Outer's RIGHT_MM and
 * a MAgg of three sums, over shapes that are not multiples of the
 * work-group (1 x 13, 7 x 1, 130 x 37, 1001 x 9, 20 x 150: 150 columns
 * cross the combine's lanes), dense and CSR, and with NaN/Inf in X.
 * Each runs with the combine in the launch (gpu_spoof_comb(1)) and as
 * cg_comb launches (-1): the same bits (the same combine in the same
 * order), the CPU's results within rtol, and one launch against one
 * plus one per aggregated output (scripts whose only operator is the
 * fused one). The evaluator's choice (0): in the launch for these
 * small outputs; cg_comb's launch for a 600 x 40 product's partials,
 * which one work-group would walk alone. */
static const Case comb_cases[] = {
    {"comb glm", "q = X %*% v\ng = t(X) %*% (w * q)\nh = colSums(X * (w * q))\nm = max(w * q)\n", 3, {"g", "h", "m"}},
    {"comb mlogreg", "LT = X %*% V\nE = exp(LT - rowMaxs(LT))\nP = E / rowSums(E)\nG = t(X) %*% (P - Y)\nl = sum(P * Y)\n", 2,
     {"G", "l"}},
    {"comb multi", "G = t(X) %*% (Y * (X %*% v))\nc = colSums(X * (X %*% v))\ns = sum(X %*% v)\n", 3, {"G", "c", "s"}},
    {"comb col_t_agg", "q = t(X) %*% exp((X %*% v) * 0.1)\n", 1, {"q"}},
    {"comb outer right", "R = t(X * (U %*% t(Vc) - X)) %*% U\n", 1, {"R"}},
    {"comb magg", "a = sum(X ^ 2)\nb = sum(X * W[, 1:ncol(X)])\nc = sum(X * w)\n", 3, {"a", "b", "c"}},
};

/* One run of c under the combine's mode (GPU_OFF: mode ignored, the
 * CPU's operators); its device counters in *st. */
static void comb_run(const Case *c, MB **in, int mode, bool dev, TRun *r, GpuStats *st)
{
    CgOptions o = {.enabled = true, .plancache = true, .policy = CG_FUSE_ALL, .keep_fused = true};
    gpu_configure(dev ? GPU_FORCE : GPU_OFF, -1, 0);
    gpu_set_stitch(false);
    gpu_spoof_comb(mode);
    gpu_stats_reset();
    t_run_dml(c->src, &o, 8, names, in, c->nout, (const char **)c->out, r);
    *st = gpu_stats();
    gpu_spoof_comb(0);
    gpu_set_stitch(true);
}

/* (with_sep: also as cg_comb launches, once per case: their program is
 * another build, their runs add no path) */
static void comb_case(const Case *c, int64_t rows, int64_t cols, int64_t k, bool sparse, bool nf, bool with_sep)
{
    char what[96];
    snprintf(what, sizeof what, "%lldx%lld%s%s", (long long)rows, (long long)cols, sparse ? " CSR" : "",
             nf ? " NaN/Inf" : "");
    MB *in[8];
    gen_inputs(in, c, rows, cols, k, sparse, nf);
    TRun want, inl, sep = {0};
    GpuStats s0, s1, s2 = {0};
    comb_run(c, in, 0, false, &want, &s0);
    comb_run(c, in, 1, true, &inl, &s1);
    if (with_sep) comb_run(c, in, -1, true, &sep, &s2);
    T_CHECK(want.rc == 0 && inl.rc == 0 && sep.rc == 0, "%s %s: %s %s %s", c->name, what, want.err, inl.err, sep.err);
    if (!want.rc && !inl.rc && !sep.rc) {
        for (int t = 0; t < c->nout; t++) {
            check_out(c, t, &inl.out[t], &want.out[t], what);
            if (with_sep) check_out_tol(c, t, &inl.out[t], &sep.out[t], 0, "in the launch vs cg_comb, to the bit");
        }
        int64_t all = inl.st.fused[0] + inl.st.fused[1] + inl.st.fused[2] + inl.st.fused[3];
        /* NaN/Inf: plans over a CSR X and Outer's decline where the CPU
         * does (exec.c) */
        bool decl = nf && (sparse || strstr(c->name, "outer"));
        T_CHECK(decl ? s1.fused_ops + s1.fused_cpu == all : s1.fused_ops == all && s1.fused_cpu == 0,
                "%s %s: %lld on the device, %lld on the CPU, %lld placed", c->name, what, (long long)s1.fused_ops,
                (long long)s1.fused_cpu, (long long)all);
        /* on the device, the combine's launches saved (more than one row
         * and column: aggregated outputs over several blocks) */
        if (with_sep && !decl && rows > 1 && cols > 1)
            T_CHECK(s1.fused_ops == s2.fused_ops && s2.launches > s1.launches,
                    "%s %s: %lld launches in the launch, %lld with cg_comb (%d outputs)", c->name, what,
                    (long long)s1.launches, (long long)s2.launches, c->nout);
    }
    t_run_free(&want);
    t_run_free(&inl);
    t_run_free(&sep);
    for (int q = 0; q < 8; q++) mb_release(in[q]);
}

static void test_comb(void)
{
    static const int64_t sh[][3] = {{1, 13, 2}, {7, 1, 5}, {130, 37, 11}, {1001, 9, 3}, {20, 150, 3}};
    int nc = (int)(sizeof comb_cases / sizeof *comb_cases), ns = (int)(sizeof sh / sizeof *sh);
    /* Each case meets every other shape (each shape half the cases;
     * T_SAN: every fourth), CSR once, and NaN/Inf in one format
     * (alternating; T_SAN: every other case). Every shape and format
     * still meets several cases: each run compiles its own kernels, so
     * the full cross product cost about 70 s of CPU for no new path.
     * The cg_comb launches (the bit comparison) once per case: at its
     * first dense shape of several rows and columns (odd cases) or
     * CSR (even ones, or where no such dense shape ran). */
    for (int c = 0; c < nc; c++) {
        bool sep = false;
        for (int s = 0; s < ns; s++)
            if ((c + s) % 2 == 0 && t_keep((c + s) / 2, 2)) {
                bool w = c % 2 && !sep && sh[s][0] > 1 && sh[s][1] > 1;
                comb_case(&comb_cases[c], sh[s][0], sh[s][1], sh[s][2], false, false, w);
                sep |= w;
            }
        comb_case(&comb_cases[c], 130, 37, 5, true, false, !sep);
        if (t_keep(c, 2)) comb_case(&comb_cases[c], 130, 37, 5, c % 4 < 2, true, false);
    }
    /* exact counts: the multi-output Row plan (dense 130 x 37) and the
     * product X %*% v it shares with them (a Row NO_AGG operator): 2
     * launches, 5 with cg_comb's; the evaluator's choice: 2 */
    const Case *m = &comb_cases[2];
    MB *in[8];
    gen_inputs(in, m, 130, 37, 5, false, false);
    for (int mode = -1; mode <= 1; mode++) {
        TRun r;
        GpuStats st;
        comb_run(m, in, mode, true, &r, &st);
        int want = mode < 0 ? 5 : 2;
        T_CHECK(r.rc == 0 && st.fused_ops == 2 && st.ops == 2 && st.launches == want,
                "multi-output Row, combine mode %d: %lld operators, %lld launches, want 2 and %d: %s", mode,
                (long long)st.ops, (long long)st.launches, want, r.err);
        t_run_free(&r);
    }
    for (int q = 0; q < 8; q++) mb_release(in[q]);
    /* the evaluator: a cell or a few (one lane each) cheaper in the launch
     * than a launch; a 600 x 40 product's partials over 128 blocks walked
     * by one work-group dearer than cg_comb's launch across the device */
    int64_t r1[3] = {2, 2 * 37, 37 * 5}, c1[3] = {1, 37, 37 * 5};
    T_CHECK(stitch_comb_cost(r1, c1, 3, 128, 64, true) < stitch_comb_cost(r1, c1, 3, 128, 64, false),
            "small outputs: in the launch (%.0f vs %.0f cycles)", stitch_comb_cost(r1, c1, 3, 128, 64, true),
            stitch_comb_cost(r1, c1, 3, 128, 64, false));
    int64_t r2[1] = {600 * 40}, c2[1] = {600 * 40};
    T_CHECK(stitch_comb_cost(r2, c2, 1, 128, 64, true) > stitch_comb_cost(r2, c2, 1, 128, 64, false),
            "a 600 x 40 product: cg_comb's launch (%.0f vs %.0f cycles)", stitch_comb_cost(r2, c2, 1, 128, 64, true),
            stitch_comb_cost(r2, c2, 1, 128, 64, false));
    /* and the run follows it: t(X) %*% ((X %*% V) * 2), X 200 x 600, V
     * 600 x 40: the kernel and one cg_comb launch */
    t_seed(4242);
    MB *big[2] = {t_gen(200, 600, 1, 0, 1, false), t_gen(600, 40, 1, 0, 1, false)};
    const char *bn[2] = {"X", "V"}, *bo[1] = {"Q"};
    CgOptions o = {.enabled = true, .plancache = true, .policy = CG_FUSE_ALL, .keep_fused = true};
    TRun want, got;
    gpu_configure(GPU_OFF, -1, 0);
    t_run_dml("Q = t(X) %*% ((X %*% V) * 2)\n", &o, 2, bn, big, 1, bo, &want);
    gpu_configure(GPU_FORCE, -1, 0);
    gpu_set_stitch(false);
    gpu_stats_reset();
    t_run_dml("Q = t(X) %*% ((X %*% V) * 2)\n", &o, 2, bn, big, 1, bo, &got);
    GpuStats st = gpu_stats();
    gpu_set_stitch(true);
    T_CHECK(want.rc == 0 && got.rc == 0 && st.fused_ops == 1 && st.launches == 2,
            "a 600 x 40 COL_T_AGG by the evaluator: %lld operators, %lld launches, want 1 and 2: %s %s",
            (long long)st.fused_ops, (long long)st.launches, want.err, got.err);
    if (!want.rc && !got.rc) T_MB_EQ(got.out[0].m, want.out[0].m, 1e-9, "a 600 x 40 COL_T_AGG");
    t_run_free(&want);
    t_run_free(&got);
    mb_release(big[0]);
    mb_release(big[1]);
}

/* Kernel launches of one fused operator run on the device: the main
 * kernel, and with the combine's launches (gpu_spoof_comb(-1)) one
 * combine per aggregated output, or none (dense: the combine in the
 * launch, 1; CSR: the evaluator's choice, in the launch for these
 * outputs) (deterministic: the counts do not depend on the device).
 * Scripts of the sweep whose only operator is the fused one, over the
 * sweep's inputs at 130 x 37 (its programs: no builds); the cg_comb
 * counts under mode -1 at the dense scripts whose unwrapped program
 * test_comb builds anyway. */
static void test_launches(void)
{
    static const struct { const char *name; int launches; } L[] = {
        {"row_agg", 1}, {"t(X) exp(X v)", 2}, {"col_agg min", 2}, {"outer no_agg", 1}, {"outer right", 2},
        /* Cell: one launch, plus a combine per aggregated output */
        {"cell no_agg safe", 1}, {"cell row mean", 1}, {"cell col_agg", 2}, {"cell full_agg", 2},
    };
    for (int sp = 0; sp < 2; sp++)
        for (size_t k = 0; k < sizeof L / sizeof *L; k++) {
            const Case *c = NULL;
            for (int q = 0; q < NCASES; q++)
                if (!strcmp(cases[q].name, L[k].name)) c = &cases[q];
            T_CHECK(c && c->nout == 1, "launches: the sweep's case %s", L[k].name);
            if (!c || c->nout != 1) continue;
            MB *in[8];
            gen_inputs(in, c, 130, 37, sp ? 5 : 11, sp, false);   /* (the sweep's: its programs) */
            CgOptions o = {.enabled = true, .plancache = true, .policy = CG_FUSE_ALL, .keep_fused = true};
            bool in_comb = false;
            for (size_t q = 0; q < sizeof comb_cases / sizeof *comb_cases; q++)
                in_comb |= !strcmp(comb_cases[q].src, c->src);
            int m0 = sp ? 0 : 1, m1 = !sp && in_comb ? -1 : m0;
            for (int mode = m0; mode >= m1; mode -= 2) {
                TRun r;
                gpu_configure(GPU_FORCE, -1, 0);
                gpu_set_stitch(false);
                gpu_spoof_comb(mode);
                gpu_stats_reset();
                t_run_dml(c->src, &o, 8, names, in, 1, (const char **)c->out, &r);
                GpuStats st = gpu_stats();
                gpu_spoof_comb(0);
                int want = mode < 0 ? L[k].launches : 1;
                T_CHECK(r.rc == 0 && st.fused_ops == 1 && st.ops == 1 && st.launches == want,
                        "launches of '%s'%s, combine mode %d: %lld operators (%lld fused), %lld launches, want 1 and %d: %s",
                        c->name, sp ? " CSR" : "", mode, (long long)st.ops, (long long)st.fused_ops,
                        (long long)st.launches, want, r.err);
                t_run_free(&r);
            }
            for (int q = 0; q < 8; q++) mb_release(in[q]);
        }
    gpu_set_stitch(true);
}

/* A CSR X read as a side input (codegen/cgen_cl.c csr_side_in; the
 * plan's main input is W): the kernel takes X's row pointers and
 * columns and expands each row into its scratch, so no launch expands X
 * first. Each script's only operator runs in one launch (the combine in
 * the launch: gpu_spoof_comb(1)) with X CSR as with X dense (the same
 * program: dense inputs bind NULL row pointers), equals the CPU's
 * result within rtol and the dense X's to the bit. Cell NO_AGG, ROW_AGG,
 * COL_AGG, a column slice of X, MAgg (full aggregates: Cell FULL_AGG's
 * kernel), Row NO_AGG (the other Row variants expand the side row in
 * the same loop head); main input W dense, CSR on
 * the sparse path (Ws: sparser than X, the plan sparse-safe over it)
 * and CSR off it (Wn: nothing zero-preserving; both expanded in one
 * scratch). Shapes with ragged blocks, one row, one column; X at 1%,
 * 20% and 60% non-zeros (a row with none at 1%). */
/* The three runs of a case with CSR inputs (fused everywhere, the
 * combine in the launch, the stitch pass off): on the CPU (want), under
 * -gpu force with the inputs as given (got; its device counters g), and
 * with the inputs at idx[0..nsub) replaced by their dense copies dn_
 * (dense; gd). True when all three ran. */
static bool csr_runs(const Case *c, const char *what, int nin, const char **nm, MB **in, int nsub, const int *idx, MB **dn_,
                     TRun *want, TRun *got, TRun *dense, GpuStats *g, GpuStats *gd)
{
    CgOptions o = {.enabled = true, .plancache = true, .policy = CG_FUSE_ALL, .keep_fused = true};
    MB *sp[16];
    assert(nsub <= 16);
    gpu_configure(GPU_OFF, -1, 0);
    t_run_dml(c->src, &o, nin, nm, in, c->nout, (const char **)c->out, want);
    gpu_configure(GPU_FORCE, -1, 0);
    gpu_set_stitch(false);
    gpu_spoof_comb(1);
    gpu_stats_reset();
    t_run_dml(c->src, &o, nin, nm, in, c->nout, (const char **)c->out, got);
    *g = gpu_stats();
    for (int k = 0; k < nsub; k++) sp[k] = in[idx[k]], in[idx[k]] = dn_[k];
    gpu_stats_reset();
    t_run_dml(c->src, &o, nin, nm, in, c->nout, (const char **)c->out, dense);
    *gd = gpu_stats();
    for (int k = 0; k < nsub; k++) in[idx[k]] = sp[k];
    gpu_spoof_comb(0);
    gpu_set_stitch(true);
    T_CHECK(want->rc == 0 && got->rc == 0 && dense->rc == 0, "%s %s: %s / %s / %s", c->name, what, want->err, got->err,
            dense->err);
    return !want->rc && !got->rc && !dense->rc;
}

/* One run of test_csr_side's case c at M x N (side inputs at density
 * dn): on the CPU, under -gpu force with the CSR side inputs X, r, c
 * bound as CSR, and with them dense. no_scratch: the plan reads its CSR
 * side inputs without scratch (a cursor on the sparse path), so the
 * calls reserve the bytes they reserve with them dense. */
static void csr_side_run(const Case *c, int64_t M, int64_t N, double dn, bool one, bool no_scratch)
{
    const char *nm[9] = {"X", "W", "Ws", "Wn", "B", "U", "V", "r", "c"};
    static const int side[] = {0, 7, 8};   /* X, r, c: CSR, then dense */
    char what[64];
    snprintf(what, sizeof what, "%lldx%lld at %g", (long long)M, (long long)N, dn);
    MB *in[9] = {t_gen(M, N, dn, 0, 1, true),      t_gen(M, N, 1, 0.5, 2, false), t_gen(M, N, dn / 4, 0.5, 2, true),
                 t_gen(M, N, 0.3, 0.5, 2, true),   t_gen(N, 3, 1, -1, 1, false),  t_gen(M, 3, 1, 0, 1, false),
                 t_gen(N, 3, 1, 0, 1, false),      t_gen(1, N, dn, 0, 1, true),   t_gen(M, 1, dn, 0, 1, true)};
    MB *dn_[3] = {NULL, NULL, NULL};
    BrErr e = {0};
    bool ok = true;
    for (int k = 0; k < 3 && ok; k++) ok = (dn_[k] = mb_to_dense(in[side[k]], &e)) != NULL;
    T_CHECK(ok, "%s %s: dense side inputs: %s", c->name, what, e.msg);
    TRun want = {0}, got = {0}, dense = {0};
    GpuStats g = {0}, gd = {0};
    if (ok && csr_runs(c, what, 9, nm, in, 3, side, dn_, &want, &got, &dense, &g, &gd)) {
        for (int t = 0; t < c->nout; t++) {
            check_out(c, t, &got.out[t], &want.out[t], what);
            check_out(c, t, &dense.out[t], &want.out[t], what);
            check_out_tol(c, t, &got.out[t], &dense.out[t], 0, "side inputs CSR vs dense, to the bit");
        }
        int64_t all = got.st.fused[0] + got.st.fused[1] + got.st.fused[2] + got.st.fused[3];
        T_CHECK(g.fused_ops == all && g.fused_cpu == 0, "%s %s: %lld on the device, %lld on the CPU, %lld placed", c->name,
                what, (long long)g.fused_ops, (long long)g.fused_cpu, (long long)all);
        /* (one row or one column: other plans, or none: the counts must
         * still agree where codegen places operators; without them the
         * basic operators expand their sparse inputs) */
        if (one && M > 1 && N > 1)
            T_CHECK(all == 1 && g.launches == 1, "%s %s: %lld operators, %lld launches (want 1 and 1)", c->name, what,
                    (long long)all, (long long)g.launches);
        T_CHECK(all == 0 || g.launches == gd.launches, "%s %s: %lld launches with the side inputs CSR, %lld dense", c->name, what,
                (long long)g.launches, (long long)gd.launches);
        T_CHECK(!no_scratch || g.scratch_bytes == gd.scratch_bytes,
                "%s %s: %lld scratch bytes with the side inputs CSR, %lld dense", c->name, what,
                (long long)g.scratch_bytes, (long long)gd.scratch_bytes);
        if (M == 130 && dn == 0.2)
            printf("CSR side input %s: %lld launches (dense: %lld)\n", c->name, (long long)g.launches, (long long)gd.launches);
    }
    t_run_free(&want);
    t_run_free(&got);
    t_run_free(&dense);
    for (int k = 0; k < 3; k++) mb_release(dn_[k]);
    for (int k = 0; k < 9; k++) mb_release(in[k]);
}

/* CSR side inputs read inside the operator's own launch (docs/gpu.md,
 * "CSR side inputs"): a full input of the iteration shape other than the
 * main input (Row, Cell/MAgg: its rows expanded in the kernel's scratch;
 * Outer: each visited cell by a cursor along the row's entries), and
 * sparse row (r: 1 x n) and column (c: m x 1) vectors. X at densities
 * 1%, 20% and 60%, r and c alike; one operator in one launch, the same
 * launches as with the side inputs dense, equal to the CPU, and to the
 * bit to the dense run. */
static void test_csr_side(void)
{
    static const Case S[] = {
        {"side no_agg", "S = W * exp(X)\n", 1, {"S"}},
        {"side row_agg", "s = rowSums(W * exp(X))\n", 1, {"s"}},
        {"side col_agg", "s = colMaxs(W * cos(X))\n", 1, {"s"}},
        {"side slice", "S = W[, 1:ncol(W) - 1] * exp(X[, 2:ncol(X)])\n", 1, {"S"}},
        {"side magg", "a = sum(W * exp(X))\nb = min(W * cos(X))\n", 2, {"a", "b"}},
        {"side sparse-safe main", "S = Ws * exp(X)\n", 1, {"S"}},
        {"side both CSR", "s = colSums(exp(Wn) * (X + 1))\n", 1, {"s"}},
        {"side row", "Z = (W * (X + 1)) %*% B\n", 1, {"Z"}},
        /* Outer: W's non-zeros visit X's cells in column order */
        {"side outer full_agg", "s = sum(Ws * (X - U %*% t(V)) ^ 2)\n", 1, {"s"}},
        {"side outer no_agg", "S = Ws * (X + exp(U %*% t(V)))\n", 1, {"S"}},
        {"side outer left", "Z = (Ws * (X + U %*% t(V))) %*% V\n", 1, {"Z"}},
        {"side outer vectors", "s = sum(Ws * (X - U %*% t(V) * r) * c)\n", 1, {"s"}},
        /* sparse row and column vectors */
        {"side vectors cell", "s = rowSums((W + r) * c)\n", 1, {"s"}},
        {"side vectors row", "Z = ((W + r) * c) %*% B\n", 1, {"Z"}},
    };
    static const int64_t shp[][2] = {{130, 37}, {1001, 9}, {1, 13}, {7, 1}};
    static const double dens[] = {0.01, 0.2, 0.6};
    int run = 0;
    for (size_t q = 0; q < sizeof S / sizeof *S; q++)
        for (int si = 0; si < 4; si++)
            for (int di = 0; di < 3; di++) {
                /* every script at 130 x 37 and every density, the other
                 * shapes in turn (the same program: no builds); under the
                 * sanitizers every other run */
                if ((si > 0 && (int)(q + si + di) % 3) || !t_keep(run++, 2)) continue;
                t_seed(1700 + q * 31 + (uint64_t)si * 7 + (uint64_t)di);
                bool cursor = !strcmp(S[q].name, "side sparse-safe main");
                csr_side_run(&S[q], shp[si][0], shp[si][1], dens[di], true, cursor);
            }
}

/* CSR factors and side matrices read in the operator's launch
 * (codegen/cgen_cl.c csr_mat_in; docs/gpu.md, "CSR factors and side
 * matrices"): Row's B of a vector-matrix product (B: N x 3, b: N x 1,
 * C: 3 x 4 for a second product) and Outer's U (M x 3), V (N x 3) and
 * side matrix, bound as CSR with no dense copy on the device
 * (GpuStats.expand_bytes 0, the launches of the dense run). One run of
 * case c at M x N with those inputs at density dn (nf: NaN, Inf and
 * -Inf in W, and Inf in the driver Ws): on the CPU, under -gpu force
 * with them CSR, and with them dense; the CSR run equals the CPU within
 * rtol and the dense run to the bit. */
static void csr_mat_run(const Case *c, int64_t M, int64_t N, double dn, bool nf)
{
    const char *nm[7] = {"W", "Ws", "B", "b", "C", "U", "V"};
    char what[64];
    snprintf(what, sizeof what, "%lldx%lld at %g%s", (long long)M, (long long)N, dn, nf ? " NaN/Inf" : "");
    MB *in[7] = {gen_main(M, N, 1, false, nf), t_gen(M, N, 0.1, 0.5, 2, true), t_gen(N, 3, dn, -1, 1, true),
                 t_gen(N, 1, dn, -1, 1, true), t_gen(3, 4, dn, -1, 1, true), t_gen(M, 3, dn, 0, 1, true),
                 t_gen(N, 3, dn, 0, 1, true)};
    if (nf && M * N > 3) {
        /* Inf among the driver's entries (an Outer cell value Inf meets
         * the side matrix's zeros: NaN as with it dense) */
        MB *d = mb_to_dense(in[1], &(BrErr){0});
        mb_dset(d, M / 2, N / 2, INFINITY);
        mb_recount_nnz(d);
        mb_release(in[1]);
        in[1] = mb_to_sparse(d, &(BrErr){0});
        mb_release(d);
    }
    MB *dn_[5] = {NULL};
    BrErr e = {0};
    bool ok = in[1] != NULL;
    for (int k = 0; k < 5 && ok; k++) ok = (dn_[k] = mb_to_dense(in[k + 2], &e)) != NULL;
    T_CHECK(ok, "%s %s: dense inputs: %s", c->name, what, e.msg);
    static const int mat[] = {2, 3, 4, 5, 6};   /* B, b, C, U, V: CSR, then dense */
    TRun want = {0}, got = {0}, dense = {0};
    GpuStats g = {0}, gd = {0};
    if (ok && csr_runs(c, what, 7, nm, in, 5, mat, dn_, &want, &got, &dense, &g, &gd)) {
        for (int t = 0; t < c->nout; t++) {
            check_out(c, t, &got.out[t], &want.out[t], what);
            check_out_tol(c, t, &got.out[t], &dense.out[t], 0, "CSR vs dense, to the bit");
        }
        int64_t all = got.st.fused[0] + got.st.fused[1] + got.st.fused[2] + got.st.fused[3];
        /* (a CSR main input with NaN/Inf: Row declines, as on the CPU) */
        bool decl = nf && strstr(c->name, "CSR main");
        T_CHECK(decl ? g.fused_ops + g.fused_cpu == all : g.fused_ops == all && g.fused_cpu == 0,
                "%s %s: %lld on the device, %lld on the CPU, %lld placed", c->name, what, (long long)g.fused_ops,
                (long long)g.fused_cpu, (long long)all);
        /* (sparser factors: the planner may leave the product unfused,
         * or fold an all-zero one away) */
        bool outer = strstr(c->name, "outer") != NULL;
        if (M > 1 && N > 1 && dn >= 0.3)
            T_CHECK(got.st.fused[outer ? 3 : 1] >= 1, "%s %s: a%s operator placed", c->name, what, outer ? "n Outer" : " Row");
        T_CHECK(g.expand_bytes == 0, "%s %s: %lld bytes expanded", c->name, what, (long long)g.expand_bytes);
        /* (read in place: no scratch row per CSR factor, spoof_cl.c
         * side_scratch; sparser factors may form other plans, whose CSR
         * side inputs of the iteration shape expand rows into scratch) */
        T_CHECK(dn < 0.3 || g.scratch_bytes == gd.scratch_bytes, "%s %s: %lld scratch bytes with CSR inputs, %lld dense", c->name,
                what, (long long)g.scratch_bytes, (long long)gd.scratch_bytes);
        /* (one row or column: the basic operators, some of which launch
         * differently over CSR) */
        if (M > 1 && N > 1)
            T_CHECK(g.launches == gd.launches, "%s %s: %lld launches with CSR inputs, %lld dense", c->name, what,
                    (long long)g.launches, (long long)gd.launches);
        if (M == 130 && dn == 0.3 && !nf)
            printf("CSR factor %s: %lld launches (dense: %lld)\n", c->name, (long long)g.launches, (long long)gd.launches);
    }
    t_run_free(&want);
    t_run_free(&got);
    t_run_free(&dense);
    for (int k = 0; k < 5; k++) mb_release(dn_[k]);
    for (int k = 0; k < 7; k++) mb_release(in[k]);
}

/* Row's side matrices (tiled: one product; not: two products) and dot
 * products, over a dense and a CSR main input; Outer's NO_AGG, FULL_AGG,
 * LEFT, RIGHT and RIGHT_T. Every case at 130 x 37 and densities 0 (all
 * zero), 2% (most rows empty) and 30%, with NaN/Inf at 30%; the other
 * shapes (1001 x 9: blocks of rows, not multiples of the work-group; 1 x
 * 13; 7 x 1) in turn. */
static void test_csr_mat(void)
{
    static const Case S[] = {
        {"mat row", "Z = exp(W * 0.5) %*% B\n", 1, {"Z"}},
        {"mat row dot", "z = exp((W * 0.5) %*% b)\n", 1, {"z"}},
        {"mat row full_agg", "s = sum(((W + 1) %*% B) ^ 2)\n", 1, {"s"}},
        {"mat row two products", "Z = exp((W + 1) %*% B * 0.1) * ((W * 2) %*% V)\n", 1, {"Z"}},
        {"mat row CSR main", "Z = (Ws * 2 + Ws ^ 2) %*% B\n", 1, {"Z"}},
        {"mat outer full_agg", "s = sum(Ws * (U %*% t(V)))\n", 1, {"s"}},
        {"mat outer no_agg", "S = Ws * exp(U %*% t(V))\n", 1, {"S"}},
        {"mat outer left", "Z = (Ws * (U %*% t(V) + 1)) %*% V\n", 1, {"Z"}},
        {"mat outer right", "R = t(Ws * (U %*% t(V) - 1)) %*% U\n", 1, {"R"}},
        {"mat outer right_t", "T = t(U) %*% (Ws * (U %*% t(V) - 2))\n", 1, {"T"}},
    };
    static const int64_t shp[][2] = {{130, 37}, {1001, 9}, {1, 13}, {7, 1}};
    static const double dens[] = {0, 0.02, 0.3};
    int run = 0;
    for (size_t q = 0; q < sizeof S / sizeof *S; q++) {
        for (int si = 0; si < 4; si++)
            for (int di = 0; di < 3; di++) {
                if ((si > 0 && (int)(q + si + di) % 3) || !t_keep(run++, 2)) continue;
                t_seed(1900 + q * 31 + (uint64_t)si * 7 + (uint64_t)di);
                csr_mat_run(&S[q], shp[si][0], shp[si][1], dens[di], false);
            }
        t_seed(1990 + q);
        csr_mat_run(&S[q], 130, 37, 0.3, true);
    }
}

/* Compiled on the first CPU call (docs/codegen.md; codegen.c
 * compile_lazily): under -gpu force (synchronous compiles) an operator
 * the device runs compiles no C, and one it declines (a CSR main input
 * with NaN/Inf: the CPU runs it) compiles on its first CPU call; under
 * the interpret option nothing compiles. Each run in a kernel cache of
 * its own (nothing on disk), 130 x 37 CSR, against the GPU-off run's
 * compiled operators. Fails where operators compile when planned. */
static void test_lazy_compile(void)
{
    char dir[] = "/tmp/braid-test-gpugen-XXXXXX";
    if (!mkdtemp(dir)) { T_CHECK(false, "mkdtemp"); return; }
    const Case *c = &cases[2];   /* row_agg: s = rowSums(exp((X %*% V) * 0.1)) */
    for (int q = 0; q < 3; q++) {
        bool nf = q == 1, interp = q == 2;
        char sub[64];
        snprintf(sub, sizeof sub, "%s/%d", dir, q);
        MB *in[8];
        gen_inputs(in, c, 130, 37, 5, true, nf);
        CgOptions o = {.enabled = true, .plancache = true, .policy = CG_FUSE_ALL, .keep_fused = true, .cachedir = sub};
        CgOptions lo = o;
        lo.interpret = interp;
        TRun got, want;
        gpu_configure(interp ? GPU_OFF : GPU_FORCE, -1, 0);
        gpu_set_stitch(false);
        gpu_stats_reset();
        t_run_dml(c->src, &lo, 8, names, in, c->nout, (const char **)c->out, &got);
        GpuStats st = gpu_stats();
        gpu_configure(GPU_OFF, -1, 0);
        gpu_set_stitch(true);
        t_run_dml(c->src, &o, 8, names, in, c->nout, (const char **)c->out, &want);
        const char *what = interp ? "interpreted" : nf ? "-gpu force, declined (NaN/Inf)" : "-gpu force";
        T_CHECK(got.rc == 0 && want.rc == 0, "lazy %s: %s / %s", what, got.err, want.err);
        if (!got.rc && !want.rc) {
            check_out(c, 0, &got.out[0], &want.out[0], what);
            int64_t all = got.st.fused[0] + got.st.fused[1] + got.st.fused[2] + got.st.fused[3];
            int64_t built = got.st.compiled + got.st.disk_hits;
            T_CHECK(all >= 1 && want.st.compiled + want.st.disk_hits >= 1, "lazy %s: %lld placed, GPU off compiled %lld",
                    what, (long long)all, (long long)(want.st.compiled + want.st.disk_hits));
            if (nf)
                T_CHECK(st.fused_cpu >= 1 && got.st.compiled >= 1, "lazy %s: %lld on the CPU, %lld compiled", what,
                        (long long)st.fused_cpu, (long long)got.st.compiled);
            else
                T_CHECK(built == 0 && got.st.cc_runs == 0 && (interp || (st.fused_ops == all && st.fused_cpu == 0)),
                        "lazy %s: %lld operators compiled or loaded, %lld compiler runs; %lld of %lld on the device", what,
                        (long long)built, (long long)got.st.cc_runs, (long long)st.fused_ops, (long long)all);
        }
        t_run_free(&got);
        t_run_free(&want);
        for (int k = 0; k < 8; k++) mb_release(in[k]);
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    T_CHECK(system(cmd) == 0, "%s", cmd);
}

/* sysds.gpu.async (docs/gpu.md, "Asynchronous compilation"): with the
 * background builds held, an exact operator (GPU_CG_EXACT: elementwise,
 * correctly rounded operations only) runs on the CPU while its kernel
 * builds and gives the bits its kernel gives once built; any other (row
 * sums, a product, column sums, full aggregates: the device adds in
 * another order; exp) waits for its build on its first call and runs
 * on the device, so its results never depend on when a build ends. */
static void test_async(void)
{
    static const Case A[] = {
        {"async row", "s = rowSums(exp((X %*% V) * 0.25) + 2)\n", 1, {"s"}},
        {"async outer", "s = sum(X * exp(U %*% t(Vc) + 3))\n", 1, {"s"}},
        {"async cell", "s = colSums(exp(X * 0.75) - w)\n", 1, {"s"}},
        {"async magg", "a = sum(X ^ 3)\nb = max(X * w + 5)\n", 2, {"a", "b"}},
        {"async exact", "Y = abs(X * 0.75 - w) / (X + 2)\n", 1, {"Y"}},
    };
    stitch_set_async(true);
    for (size_t k = 0; k < sizeof A / sizeof *A; k++) {
        const Case *c = &A[k];
        bool exact = k == 4;
        t_seed(1300 + k);
        MB *in[5] = {t_gen(130, 37, 0.3, 0, 1, true), t_gen(37, 4, 1, 0, 1, false), t_gen(130, 1, 1, 0, 1, false),
                     t_gen(130, 3, 1, 0, 1, false), t_gen(37, 3, 1, 0, 1, false)};
        const char *names[5] = {"X", "V", "w", "U", "Vc"};
        CgOptions o = {.enabled = true, .plancache = true, .policy = CG_FUSE_ALL, .keep_fused = true};
        TRun want, pend, done;
        gpu_configure(GPU_OFF, -1, 0);
        t_run_dml(c->src, &o, 5, names, in, c->nout, (const char **)c->out, &want);
        gpu_configure(GPU_FORCE, -1, 0);
        gpu_set_stitch(false);
        stitch_async_hold(true);
        gpu_stats_reset();
        t_run_dml(c->src, &o, 5, names, in, c->nout, (const char **)c->out, &pend);
        GpuStats s1 = gpu_stats();
        stitch_async_wait();
        gpu_stats_reset();
        t_run_dml(c->src, &o, 5, names, in, c->nout, (const char **)c->out, &done);
        GpuStats s2 = gpu_stats();
        int64_t all = done.st.fused[0] + done.st.fused[1] + done.st.fused[2] + done.st.fused[3];
        T_CHECK(want.rc == 0 && pend.rc == 0 && done.rc == 0, "%s: %s %s %s", c->name, want.err, pend.err, done.err);
        if (!want.rc && !pend.rc && !done.rc) {
            for (int t = 0; t < c->nout; t++) {
                check_out(c, t, &pend.out[t], &want.out[t], "while compiling");
                check_out(c, t, &done.out[t], &want.out[t], "compiled");
                check_out_tol(c, t, &pend.out[t], &done.out[t], 0, "while compiling vs compiled, to the bit");
            }
            if (exact)
                T_CHECK(all >= 1 && s1.fused_ops == 0 && s1.fused_async == all && s1.fused_cpu == all,
                        "%s: while compiling %lld on the device, %lld on the CPU (%lld compiling), %lld placed", c->name,
                        (long long)s1.fused_ops, (long long)s1.fused_cpu, (long long)s1.fused_async, (long long)all);
            else
                T_CHECK(all >= 1 && s1.fused_ops == all && s1.fused_cpu == 0 && s1.fused_async == 0,
                        "%s: first run (waits for its build) %lld on the device, %lld on the CPU (%lld compiling), %lld placed",
                        c->name, (long long)s1.fused_ops, (long long)s1.fused_cpu, (long long)s1.fused_async,
                        (long long)all);
            T_CHECK(s2.fused_ops == all && s2.fused_cpu == 0 && s2.fused_async == 0,
                    "%s: compiled: %lld on the device, %lld on the CPU, %lld placed", c->name, (long long)s2.fused_ops,
                    (long long)s2.fused_cpu, (long long)all);
        }
        gpu_set_stitch(true);
        t_run_free(&want);
        t_run_free(&pend);
        t_run_free(&done);
        for (int q = 0; q < 5; q++) mb_release(in[q]);
    }
    stitch_async_hold(false);
    stitch_set_async(false);
}

int main(void)
{
    t_pin_machine();
    gpu_configure(GPU_FORCE, -1, 0);
    BrErr e = {0};
    int rc = gpu_init(&e);
    T_CHECK(rc == 0, "an OpenCL device: %s", e.msg);
    if (rc) return t_done("test_gpugen");
    /* every case at 130 x 37 and 1001 x 9 and one degenerate shape;
     * under the sanitizers (T_SAN) every case runs, with one of 130 x
     * 37 and 1001 x 9 (tiles), every other case's degenerate shape and
     * one of its NaN/Inf runs, rotating by case, so that every shape,
     * tile and NaN/Inf run still meets Row, Outer and Cell/MAgg plans
     * (their kernels are all built: the same programs) */
    for (int c = 0; c < NCASES; c++) {
        for (int s = 0; s < 4; s++) {
            /* the degenerate shapes (1 x 13, 7 x 1) plan each case into
             * operators of their own (a program each): one of them per
             * case, alternating, so each still meets half the cases of
             * every template; under T_SAN every other case's */
            bool degen = s < 2;
            if (degen ? s != c % 2 || !t_keep(c / 2, 2) : !t_keep(c + s, 2)) continue;
            gpu_spoof_tiles(sweep_tiles[s][0], sweep_tiles[s][1], sweep_tiles[s][2]);
            run_case(&cases[c], shapes[s][0], shapes[s][1], shapes[s][2], false);
        }
        run_case(&cases[c], 130, 37, 5, true);
        gpu_spoof_tiles(0, 0, 0);
    }
    /* NaN, Inf and -Inf in X and W: Cell/MAgg dense and CSR */
    for (int c = 0; c < NCASES; c++) {
        if (t_keep(c, 2)) run_case_nf(&cases[c], 130, 37, 5, false, true);
        if (t_keep(c + 1, 2)) run_case_nf(&cases[c], 130, 37, 5, true, true);
    }
    test_tiles();
    test_compressed();
    test_nonfinite();
    test_launches();
    test_csr_side();
    test_csr_mat();
    test_comb();
    test_async();
    test_lazy_compile();
    gpu_pool_clear();
    return t_done("test_gpugen");
}
