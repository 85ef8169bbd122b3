/* test_cgstitch.c: CPU stitching (docs/codegen.md, "CPU stitching";
 * codegen/select.c cg_stitch, kernels/spoof_row.c run_stitched). A
 * Row operator whose row-vector input is a column aggregate (colSums,
 * colMeans, colMins, colMaxs) of its own main input takes the aggregate
 * in: the skeleton computes the column partials over row blocks, merges
 * them after a barrier and runs the rows over the same blocks in the
 * same parallel region. Each script runs three times: stitched (the
 * default), with stitching off (BRAID_CG_STITCH=0: the aggregate is its
 * own instruction, the unstitched plan) and with codegen off (the
 * reference kernels). Checks: the stitched run stitched at least one
 * aggregate (the counter), the unstitched one none, and the outputs
 * agree. Over shapes with one row or column and sizes that are no
 * multiple of the blocks, dense and CSR main inputs, two fusion
 * policies, and once with NaN, Inf and -Inf in X.
 *
 * Exactness: the stitched aggregate is computed by k_agg's own column
 * kernels in phases (kernels/agg.c k_colagg_*: the same row blocks, leaf
 * kernels and merge order), and the Row operator's aggregates use the
 * same super-blocks stitched or not, so the stitched and the unstitched
 * runs agree to the bit (rtol 0; NaN equals NaN, an infinity only
 * itself). Against codegen off (other kernels for the rest of the plan:
 * BLAS products, the reference kernels' sums) within rounding: rtol 1e-9
 * relative to max(|x|, 1), as in test_gpugen (X in [0, 1), at most 3000
 * rows and 40 columns, sums nesting at most three deep).
 */
#include <math.h>
#include <string.h>

#include "t.h"
#include "t_dml.h"
#include "gpu/gpu.h"
#include "gpu/stitch.h"
#include "kernels/cla.h"
#include "plan/recompile.h"

typedef struct Case {
    const char *name;
    const char *src;
    const char *out;
} Case;

static const Case cases[] = {
    /* X - colMeans(X) feeding a product (the example) */
    {"centre %*% B", "Y = (X - colMeans(X)) %*% B\n", "Y"},
    /* scaling by column minima, maxima and sums, feeding a product (a
     * CSR column without stored values divides by a zero maximum: the
     * same Inf/NaN stitched or not) */
    {"scale %*% B", "Y = ((X - colMins(X)) / colMaxs(X)) %*% B\n", "Y"},
    {"normalize %*% B", "Y = (X / colSums(X)) %*% B\n", "Y"},
    /* row aggregates of centred rows after a product */
    {"centre row_agg", "y = rowSums(((X - colMeans(X)) %*% B) ^ 2)\n", "y"},
    /* aggregates over all rows: column sums of squares of the centred
     * product (COL_AGG), a full sum (FULL_AGG), t(X) %*% (.) (COL_T_AGG) */
    {"centre col_agg", "c = colSums(((X - colMeans(X)) %*% B) ^ 2)\n", "c"},
    {"centre full_agg", "s = sum(((X - colMeans(X)) %*% B) ^ 2)\n", "s"},
    {"centre col_t_agg", "G = t(X) %*% ((X - colMeans(X)) %*% B)\n", "G"},
    /* vector expressions of aggregates: a constant, a unary function, an
     * aggregate read twice (colMins), a variance */
    {"expression", "Y = (X / (colSums(X) + 1)) %*% B\n", "Y"},
    {"minmax %*% B", "Y = ((X - colMins(X)) / (colMaxs(X) - colMins(X))) %*% B\n", "Y"},
    {"var %*% B", "Y = ((X - colMeans(X)) / sqrt(colVars(X) + 1e-8)) %*% B\n", "Y"},
    /* Cell plans: column standardization (NO_AGG; a colSds(X) of a
     * single row divides by 0), its column sums of squares (COL_AGG);
     * then a unary function of a negated aggregate, which the default
     * policy fuses into a Cell operator of its own over the vector (the
     * stitching plan takes that operator in) */
    {"standardize", "Y = (X - colMeans(X)) / colSds(X)\n", "Y"},
    {"standardize col_agg", "c = colSums(((X - colMeans(X)) / colSds(X)) ^ 2)\n", "c"},
    {"exp scale %*% B", "Y = (X * exp(-colMeans(X))) %*% B\n", "Y"},
};
#define NCASE ((int)(sizeof cases / sizeof *cases))

static void check_out(const Case *c, const Value *a, const Value *b, double tol, const char *what)
{
    if (a->kind == V_MATRIX && b->kind == V_MATRIX) {
        T_MB_EQ(a->m, b->m, tol, "%s: %s (%s)", c->name, c->out, what);
    } else if (val_is_numeric(a) && val_is_numeric(b)) {
        double x = val_as_double(a), y = val_as_double(b);
        bool same = (isnan(x) && isnan(y)) || x == y;
        T_CHECK(same || fabs(x - y) <= tol * fmax(fmax(fabs(x), fabs(y)), 1), "%s: %s %.17g vs %.17g (%s)", c->name,
                c->out, x, y, what);
    } else {
        T_CHECK(false, "%s: %s of kinds %d and %d (%s)", c->name, c->out, a->kind, b->kind, what);
    }
}

static int64_t nstitched;   /* stitched aggregates over all runs */

static void run_case(const Case *c, int64_t rows, int64_t cols, bool sparse, bool nf, int pol)
{
    char what[96];
    snprintf(what, sizeof what, "%lldx%lld%s%s %s", (long long)rows, (long long)cols, sparse ? " CSR" : "",
             nf ? " NaN/Inf" : "", pol ? "cost_based" : "fuse_all");
    t_seed(900 + (uint64_t)rows * 17 + (uint64_t)cols + sparse);
    MB *x = t_gen(rows, cols, sparse ? 0.2 : 1, 0, 1, sparse && !nf);
    if (nf) {
        static const double bad[] = {NAN, INFINITY, -INFINITY};
        for (int64_t q = 0; q < rows * cols; q += 11) mb_dset(x, q / cols, q % cols, bad[(q / 11) % 3]);
        mb_recount_nnz(x);
        if (sparse) {
            BrErr e = {0};
            MB *s = mb_to_sparse(x, &e);
            mb_release(x);
            x = s;
        }
    }
    MB *in[2] = {x, t_gen(cols, 3, 1, 0, 1, false)};
    const char *names[2] = {"X", "B"};
    CgOptions on = {.enabled = true, .plancache = true, .policy = pol ? CG_COST_BASED : CG_FUSE_ALL,
                    .keep_fused = true};
    CgOptions off = {0};
    TRun st, un, ref;
    const char *outs[1] = {c->out};
    unsetenv("BRAID_CG_STITCH");
    t_run_dml(c->src, &on, 2, names, in, 1, outs, &st);
    setenv("BRAID_CG_STITCH", "0", 1);
    t_run_dml(c->src, &on, 2, names, in, 1, outs, &un);
    unsetenv("BRAID_CG_STITCH");
    t_run_dml(c->src, &off, 2, names, in, 1, outs, &ref);
    T_CHECK(st.rc == 0 && un.rc == 0 && ref.rc == 0, "%s %s: runs: %s / %s / %s", c->name, what, st.err, un.err, ref.err);
    if (!st.rc && !un.rc && !ref.rc) {
        /* stitching moves only where the aggregate is computed: the same
         * bits as the plan without it where that plan fuses the consumer
         * alike; cost_based may price another plan for the product without
         * the stitched Row (under AVX2's kernel shapes, an AMULET
         * where-loop for (X * exp(-colMeans(X))) %*% B), whose sums run in
         * another order: then the reference's tolerance */
        bool alike = un.st.amulet == st.st.amulet && un.st.fused[1] == st.st.fused[1];
        check_out(c, &st.out[0], &un.out[0], alike ? 0 : 1e-9, what);
        check_out(c, &st.out[0], &ref.out[0], 1e-9, what);
        T_CHECK(un.st.stitched == 0, "%s %s: nothing stitched with stitching off", c->name, what);
        /* fuse_all fuses the consumer into a Row or Cell operator wherever the
         * shape has more than one row and column */
        if (pol == 0 && rows > 1 && cols > 1)
            T_CHECK(st.st.stitched >= 1, "%s %s: an aggregate stitched (%lld)", c->name, what, (long long)st.st.stitched);
        nstitched += st.st.stitched;
    }
    t_run_free(&st);
    t_run_free(&un);
    t_run_free(&ref);
    mb_release(in[0]);
    mb_release(in[1]);
}

/* An aggregate read outside the Row operator too stays an instruction
 * (stitching it would compute it twice): nothing stitched. */
static void test_shared(void)
{
    t_seed(5);
    MB *in[2] = {t_gen(200, 9, 1, 0, 1, false), t_gen(9, 3, 1, 0, 1, false)};
    const char *names[2] = {"X", "B"}, *outs[2] = {"Y", "m"};
    CgOptions on = {.enabled = true, .plancache = true, .policy = CG_FUSE_ALL, .keep_fused = true};
    TRun r;
    t_run_dml("m = colMeans(X)\nY = (X - m) %*% B\n", &on, 2, names, in, 2, outs, &r);
    T_CHECK(r.rc == 0 && r.st.stitched == 0, "shared aggregate: rc %d, %lld stitched", r.rc, (long long)r.st.stitched);
    t_run_free(&r);
    mb_release(in[0]);
    mb_release(in[1]);
}

/* Under `-gpu force` stitched plans run on the device (exec.c dev_pre:
 * the stitched vectors by the device's column aggregates, then the
 * plan's kernel, whose source is the unstitched plan's): Row (NO_AGG)
 * and Cell (NO_AGG) scripts stitch (Row COL_AGG and vector expressions:
 * test_device_row's "row colsums" and "row sd mm", test_device_region's
 * "var expr", each a program of its own), every
 * fused operator runs on the device, with the unstitched device plan's
 * results to the bit (the same aggregate kernels, the same operator
 * kernel; the expression's + and sqrt are correctly rounded on both) and
 * in no more launches, and with the CPU's unstitched plan within
 * rounding (the device sums in another order) (a CSR X:
 * test_device_csr); under cost_based
 * MPSkipEnum chooses stitching at the stitch points. (The plan cache:
 * the unstitched device run takes the CPU run's compiled operators.) */
static void test_device(void)
{
    BrErr e = {0};
    gpu_configure(GPU_FORCE, -1, 0);
    int rc = gpu_init(&e);
    T_CHECK(rc == 0, "an OpenCL device: %s", e.msg);
    static const struct { int c; bool sparse, cost; } which[] = {
        {0, false, false}, {10, false, false}, {0, false, true}, {10, false, true}};
    for (size_t q = 0; q < sizeof which / sizeof *which && !rc; q++) {
        const Case *c = &cases[which[q].c];
        const char *sp = which[q].sparse ? " CSR" : which[q].cost ? " cost_based" : "";
        t_seed(31 + q);
        MB *in[2] = {t_gen(130, 37, which[q].sparse ? 0.2 : 1, 0, 1, which[q].sparse), t_gen(37, 3, 1, 0, 1, false)};
        const char *names[2] = {"X", "B"}, *outs[1] = {c->out};
        CgOptions on = {.enabled = true, .plancache = true, .policy = which[q].cost ? CG_COST_BASED : CG_FUSE_ALL,
                        .keep_fused = true};
        TRun un, du, ds;
        gpu_configure(GPU_OFF, -1, 0);
        setenv("BRAID_CG_STITCH", "0", 1);
        t_run_dml(c->src, &on, 2, names, in, 1, outs, &un);
        gpu_configure(GPU_FORCE, -1, 0);
        gpu_set_stitch(false);
        gpu_stats_reset();
        t_run_dml(c->src, &on, 2, names, in, 1, outs, &du);
        GpuStats gu = gpu_stats();
        unsetenv("BRAID_CG_STITCH");
        gpu_spoof_pre(1);   /* the vectors in gpu_agg's order (test_device_multi: the others) */
        gpu_stats_reset();
        t_run_dml(c->src, &on, 2, names, in, 1, outs, &ds);
        GpuStats g = gpu_stats();
        gpu_spoof_pre(0);
        gpu_set_stitch(true);
        gpu_configure(GPU_OFF, -1, 0);
        T_CHECK(un.rc == 0 && du.rc == 0 && ds.rc == 0, "%s%s under -gpu: %s / %s / %s", c->name, sp, un.err, du.err,
                ds.err);
        if (!un.rc && !du.rc && !ds.rc) {
            check_out(c, &ds.out[0], &du.out[0], 0, "-gpu force, stitched vs unstitched");
            check_out(c, &ds.out[0], &un.out[0], 1e-9, "-gpu force vs the CPU");
            T_CHECK(ds.st.stitched >= 1 && du.st.stitched == 0, "%s%s under -gpu: %lld stitched (%lld unstitched)",
                    c->name, sp, (long long)ds.st.stitched, (long long)du.st.stitched);
            T_CHECK(g.fused_ops >= 1 && g.fused_cpu == 0 && gu.fused_cpu == 0,
                    "%s%s under -gpu: %lld fused operators on the device, %lld on the CPU (unstitched %lld)", c->name,
                    sp, (long long)g.fused_ops, (long long)g.fused_cpu, (long long)gu.fused_cpu);
            /* cost-based: MPSkipEnum enumerates the stitch points
             * under -gpu too and stitches each vector read once */
            if (which[q].cost)
                T_CHECK(ds.st.stitch_pts[1] >= 1 && ds.st.stitch_pts[0] == 0, "%s%s under -gpu: points %lld stitched, %lld not",
                        c->name, sp, (long long)ds.st.stitch_pts[1], (long long)ds.st.stitch_pts[0]);
            T_CHECK(g.launches <= gu.launches, "%s%s under -gpu: %lld launches stitched, %lld unstitched", c->name, sp,
                    (long long)g.launches, (long long)gu.launches);
            printf("-gpu force %s%s: launches stitched %lld, unstitched %lld\n", c->name, sp, (long long)g.launches,
                   (long long)gu.launches);
        }
        t_run_free(&un);
        t_run_free(&du);
        t_run_free(&ds);
        mb_release(in[0]);
        mb_release(in[1]);
    }
    gpu_configure(GPU_OFF, -1, 0);
}

/* Stitched Cell plans in one launch (codegen/cgregion.c): under `-gpu
 * force` a Cell NO_AGG or COL_AGG plan whose stitched vectors aggregate
 * one dense X runs as one DIR_COL region, so the script (whose only
 * operator is that plan) takes exactly 1 launch (the unstitched device
 * plan: the aggregates', the expression's and the plan's kernels, and
 * a COL_AGG's combine). Its results equal the unstitched device plan's
 * to the bit where the sums run in the same order (the stitched
 * vectors: a column by one lane with Kahan sums, as gpu_agg; the cell
 * body: the same operators), and within 1e-9 for a COL_AGG sum (the
 * plan sums blocks of rows, the region a column in one lane). Inputs
 * beyond X: a matrix W of X's shape, a column vector v, a row vector u
 * not stitched, scalars. Shapes that are not multiples of a
 * work-group. A CSR X (and the Row plan) runs the vectors in the
 * operator's launch instead (test_device_row, test_device_csr): also
 * one launch and one region run. */
static void test_device_region(void)
{
    /* csr: also over a CSR X at 130 x 37 (the others' CSR runs:
     * test_device_csr) in that many launches: 1, also where the plan's
     * main input is W and X a side input, whose rows the operator's
     * kernel expands itself (test_gpugen test_csr_side; before, one
     * launch more expanded X) */
    static const struct { const char *name, *src, *out; double tol; bool region; int csr; } cs[] = {
        {"centre", "Y = (X - colMeans(X)) * 2\n", "Y", 0, true, 0},
        {"minmax", "Y = (X - colMins(X)) / (colMaxs(X) - colMins(X))\n", "Y", 0, true, 1},
        {"standardize", "Y = (X - colMeans(X)) / colSds(X)\n", "Y", 0, true, 0},
        {"var expr", "Y = (X - colMeans(X)) / sqrt(colVars(X) + 1e-8)\n", "Y", 0, true, 0},
        {"inputs", "Y = ((X * W - colSums(X) / 3) * v + u) * 1.75 - exp(-colMeans(X))\n", "Y", 0, true, 1},
        {"col_agg max", "c = colMaxs(abs(X - colMeans(X)) * W)\n", "c", 0, true, 1},
        {"col_agg sum", "c = colSums(((X - colMeans(X)) / colSds(X)) ^ 2)\n", "c", 1e-9, true, 1},
        {"col_agg mean", "c = colMeans((X - colMins(X)) * v)\n", "c", 1e-9, true, 0},
        {"row plan", "Y = (X - colMeans(X)) %*% B\n", "Y", 0, true, 0},
    };
    static const int64_t shapes[][2] = {{130, 37}, {1001, 9}, {7, 3}};
    BrErr e = {0};
    gpu_configure(GPU_FORCE, -1, 0);
    int rc = gpu_init(&e);
    T_CHECK(rc == 0, "an OpenCL device: %s", e.msg);
    for (int si = 0; si < 3 && !rc; si++)
        for (int sparse = 0; sparse < 2; sparse++)
            for (size_t q = 0; q < sizeof cs / sizeof *cs; q++) {
                /* (under the sanitizers every other script at the
                 * second and third shape: the same programs) */
                if ((sparse && (si > 0 || !cs[q].csr)) || (si > 0 && !t_keep(q + si, 2))) continue;
                int64_t M = shapes[si][0], N = shapes[si][1];
                Case c = {cs[q].name, cs[q].src, cs[q].out};
                t_seed(77 + q + 10 * (uint64_t)si);
                MB *in[5] = {t_gen(M, N, sparse ? 0.2 : 1, 0, 1, sparse), t_gen(M, N, 1, 0.5, 2, false),
                             t_gen(M, 1, 1, -1, 1, false), t_gen(1, N, 1, -1, 1, false), t_gen(N, 3, 1, 0, 1, false)};
                const char *names[5] = {"X", "W", "v", "u", "B"}, *outs[1] = {cs[q].out};
                CgOptions on = {.enabled = true, .plancache = true, .policy = CG_FUSE_ALL, .keep_fused = true};
                TRun du, ds;
                gpu_set_stitch(false);
                setenv("BRAID_CG_STITCH", "0", 1);
                gpu_stats_reset();
                t_run_dml(cs[q].src, &on, 5, names, in, 1, outs, &du);
                GpuStats gu = gpu_stats();
                unsetenv("BRAID_CG_STITCH");
                gpu_spoof_pre(1);   /* (the Row plan's vectors in gpu_agg's order) */
                gpu_stats_reset();
                t_run_dml(cs[q].src, &on, 5, names, in, 1, outs, &ds);
                GpuStats g = gpu_stats();
                gpu_spoof_pre(0);
                gpu_set_stitch(true);
                char what[64];
                snprintf(what, sizeof what, "%lldx%lld%s", (long long)M, (long long)N, sparse ? " CSR" : "");
                T_CHECK(du.rc == 0 && ds.rc == 0, "%s %s: %s / %s", c.name, what, du.err, ds.err);
                if (!du.rc && !ds.rc) {
                    check_out(&c, &ds.out[0], &du.out[0], cs[q].tol, what);
                    bool one = cs[q].region;
                    T_CHECK(ds.st.stitched >= 1 && g.fused_cpu == 0 && gu.fused_cpu == 0,
                            "%s %s: %lld stitched, %lld/%lld on the CPU", c.name, what, (long long)ds.st.stitched,
                            (long long)g.fused_cpu, (long long)gu.fused_cpu);
                    T_CHECK(one ? g.fused_region == 1 && g.launches == (sparse ? cs[q].csr : 1) : g.fused_region == 0,
                            "%s %s: %lld region runs, %lld launches (unstitched %lld)", c.name, what,
                            (long long)g.fused_region, (long long)g.launches, (long long)gu.launches);
                    T_CHECK(gu.launches > 1 && gu.fused_region == 0, "%s %s: unstitched %lld launches", c.name, what,
                            (long long)gu.launches);
                    if (si == 0)
                        printf("-gpu force one launch %s%s: launches stitched %lld, unstitched %lld\n", c.name,
                               sparse ? " CSR" : "", (long long)g.launches, (long long)gu.launches);
                }
                t_run_free(&du);
                t_run_free(&ds);
                for (int k = 0; k < 5; k++) mb_release(in[k]);
            }
    gpu_configure(GPU_OFF, -1, 0);
}

/* Stitched Row, Cell and MAgg plans whose vectors run in the
 * operator's own launch (cgregion.c cg_pre_region, gpu/spoof_cl.c
 * stitched_source): under `-gpu force`, fuse_all, each plan's stitched
 * vectors and the plan itself take exactly `launches` launches (one,
 * plus the combine of each aggregate output), where the unstitched
 * device plan takes more; the result equals the unstitched device
 * plan's to the bit (the region's columns in gpu_agg's order, the
 * operator's partials and combine unchanged) and the CPU's within
 * 1e-9. Shapes: ragged work-group tails (1001 rows, 150 columns: three
 * region groups of 64), one row, one column; the degenerate ones need
 * not be stitched (rewrites), but must agree. */
static void test_device_row(void)
{
    static const struct { const char *name, *src, *out; int launches; } cs[] = {
        {"row mm", "Y = (X - colMeans(X)) %*% B\n", "Y", 1},
        {"row sd mm", "Y = ((X - colMeans(X)) / colSds(X)) %*% B\n", "Y", 1},
        {"row rowsums", "y = rowSums(((X - colMins(X)) %*% B) ^ 2)\n", "y", 1},
        {"row full", "s = sum((X - colMeans(X)) %*% B)\n", "s", 1},
        {"row colsums", "z = colSums((X - colMeans(X)) %*% B)\n", "z", 1},
        {"cell rowsums", "y = rowSums((X - colMeans(X)) ^ 2 * v)\n", "y", 1},
        {"cell full", "s = sum((X - colMins(X)) ^ 2)\n", "s", 1},
        {"cell full mean", "s = mean((X - colMeans(X)) ^ 2 * v)\n", "s", 1},
        {"cell full max", "s = max(abs(X - colMeans(X)) / colSds(X))\n", "s", 1},
        {"magg", "s = sum((X - colMins(X)) ^ 2) + 3 * sum(abs(X - colMaxs(X)) / colSds(X))\n", "s", 1},
        {"cell colsums ternary", "z = colSums(ifelse(X > colMeans(X), X - colMeans(X), 0) * v)\n", "z", 1},
        {"magg min max", "s = min((X - colMeans(X)) * v) + 2 * max((X - colMins(X)) ^ 2)\n", "s", 1},
    };
    enum { NC = sizeof cs / sizeof *cs, NS = 5 };
    static const int64_t shapes[NS][2] = {{130, 37}, {1001, 9}, {20, 150}, {1, 37}, {57, 1}};
    /* the CPU's results first (the device off), then the device's (the
     * backend set up once: its programs stay built) */
    static TRun ref[NS][NC];
    MB *in[NS][NC][3] = {{{0}}};
    const char *names[3] = {"X", "v", "B"};
    /* (the plan cache: each plan's CPU code compiled once across the
     * shapes) */
    CgOptions off = {0}, on = {.enabled = true, .plancache = true, .policy = CG_FUSE_ALL, .keep_fused = true};
    int kept = 0;
    for (int si = 0; si < NS; si++)
        for (int q = 0; q < NC; q++) {
            /* every case at 130 x 37, every other one at 1001 x 9 and
             * 20 x 150 (alternating: the same programs); at one row a
             * Row plan ("row sd mm"), at one column a Cell plan ("cell
             * full"): other plans, two programs each; under the
             * sanitizers every other of those */
            if ((si > 0 && (q + si) % 2) || (si >= 3 && q != (si == 3 ? 1 : 6)) || !t_keep(kept++, 2)) continue;
            int64_t M = shapes[si][0], N = shapes[si][1];
            t_seed(301 + (uint64_t)q + 10 * (uint64_t)si);
            in[si][q][0] = t_gen(M, N, 1, -1, 2, false);
            in[si][q][1] = t_gen(M, 1, 1, 0, 1, false);
            in[si][q][2] = t_gen(N, 3, 1, -1, 1, false);
            const char *outs[1] = {cs[q].out};
            t_run_dml(cs[q].src, &off, 3, names, in[si][q], 1, outs, &ref[si][q]);
        }
    BrErr e = {0};
    gpu_configure(GPU_FORCE, -1, 0);
    int rc = gpu_init(&e);
    T_CHECK(rc == 0, "an OpenCL device: %s", e.msg);
    for (int si = 0; si < NS; si++)
        for (int q = 0; q < NC; q++) {
            if (!in[si][q][0]) continue;
            int64_t M = shapes[si][0], N = shapes[si][1];
            Case c = {cs[q].name, cs[q].src, cs[q].out};
            const char *outs[1] = {cs[q].out};
            TRun du = {0}, ds = {0};
            GpuStats gu = {0}, g = {0};
            /* the region's schedule: thread composition (the unstitched
             * plan's bits), every third run work-group composition (the
             * local-memory tree: within rounding). The unstitched device
             * plan only in the plain build: under the sanitizers its own
             * programs were most of this test's time (a PoCL program
             * costs 4-12 s of CPU there, about 1 s plain); the stitched
             * run is still checked against the CPU's result there */
            bool wgc = (q + si) % 3 == 2, un = !T_SAN;
            if (!rc) {
                gpu_set_stitch(false);
                setenv("BRAID_CG_STITCH", "0", 1);
                gpu_stats_reset();
                if (un) t_run_dml(cs[q].src, &on, 3, names, in[si][q], 1, outs, &du);
                gu = gpu_stats();
                unsetenv("BRAID_CG_STITCH");
                gpu_spoof_pre(wgc ? 2 : 1);
                gpu_stats_reset();
                t_run_dml(cs[q].src, &on, 3, names, in[si][q], 1, outs, &ds);
                g = gpu_stats();
                gpu_spoof_pre(0);
                gpu_set_stitch(true);
            }
            char what[64];
            snprintf(what, sizeof what, "%lldx%lld", (long long)M, (long long)N);
            TRun *r = &ref[si][q];
            if (!rc) T_CHECK(r->rc == 0 && du.rc == 0 && ds.rc == 0, "%s %s: %s / %s / %s", c.name, what, r->err, du.err, ds.err);
            if (!rc && !r->rc && !du.rc && !ds.rc) {
                if (un) check_out(&c, &ds.out[0], &du.out[0], wgc ? 1e-9 : 0, what);
                check_out(&c, &ds.out[0], &r->out[0], 1e-9, what);
                T_CHECK(g.fused_cpu == 0 && gu.fused_cpu == 0, "%s %s: %lld/%lld on the CPU", c.name, what,
                        (long long)g.fused_cpu, (long long)gu.fused_cpu);
                T_CHECK(g.pre_wg == (wgc ? g.fused_region : 0), "%s %s: %lld of %lld in-launch runs by work-group",
                        c.name, what, (long long)g.pre_wg, (long long)g.fused_region);
                if (M > 1 && N > 1) {
                    T_CHECK(ds.st.stitched >= 1 && g.fused_region == 1 && g.launches == cs[q].launches,
                            "%s %s: %lld stitched, %lld in-launch runs, %lld launches (want %d)", c.name, what,
                            (long long)ds.st.stitched, (long long)g.fused_region, (long long)g.launches,
                            cs[q].launches);
                    if (un)
                        T_CHECK(gu.fused_region == 0 && gu.launches > g.launches, "%s %s: unstitched %lld launches",
                                c.name, what, (long long)gu.launches);
                }
                if (si == 0)
                    printf("-gpu force in-launch %s: launches stitched %lld, unstitched %lld\n", c.name,
                           (long long)g.launches, (long long)gu.launches);
            }
            t_run_free(r);
            t_run_free(&du);
            t_run_free(&ds);
            for (int k = 0; k < 3; k++) mb_release(in[si][q][k]);
        }
    gpu_configure(GPU_OFF, -1, 0);
}

/* One plan over in (X, v, B) three ways: the CPU (ref), the unstitched
 * device plan (du, gu; when un), the stitched one (ds, g) with the
 * vectors' region under schedule pre (gpu_spoof_pre), the
 * FusionStitching pass off (codegen's stitching on the device). Checks
 * the three results against each other (ds against the CPU within
 * 1e-9, against du to the bit, or 1e-9 under work-group composition,
 * unless nf: the launch declined) and, where X has more than one row
 * and column, that at least nst aggregates were stitched and ds took
 * exactly one launch with one in-launch run
 * (none when nf: declined by its flag, the CPU's results) and du more
 * than one. The runs are freed. */
static void dev_three(const Case *c, MB **in, const char *what, bool un, int pre, bool nf, int nst)
{
    const char *names[3] = {"X", "v", "B"}, *outs[1] = {c->out};
    CgOptions off = {0}, on = {.enabled = true, .plancache = true, .policy = CG_FUSE_ALL, .keep_fused = true};
    BrErr e = {0};
    TRun ref, du = {0}, ds;
    gpu_configure(GPU_OFF, -1, 0);
    t_run_dml(c->src, &off, 3, names, in, 1, outs, &ref);
    gpu_configure(GPU_FORCE, -1, 0);
    int rc = gpu_init(&e);
    T_CHECK(rc == 0, "an OpenCL device: %s", e.msg);
    gpu_set_stitch(false);
    GpuStats gu = {0};
    if (un) {
        setenv("BRAID_CG_STITCH", "0", 1);
        gpu_stats_reset();
        t_run_dml(c->src, &on, 3, names, in, 1, outs, &du);
        gu = gpu_stats();
        unsetenv("BRAID_CG_STITCH");
    }
    gpu_spoof_pre(pre);
    gpu_stats_reset();
    t_run_dml(c->src, &on, 3, names, in, 1, outs, &ds);
    GpuStats g = gpu_stats();
    gpu_spoof_pre(0);
    gpu_set_stitch(true);
    gpu_configure(GPU_OFF, -1, 0);
    T_CHECK(!rc && ref.rc == 0 && du.rc == 0 && ds.rc == 0, "%s %s: %s / %s / %s", c->name, what, ref.err, du.err,
            ds.err);
    int64_t M = in[0]->rows, N = in[0]->cols;
    bool wgc = pre == 2;
    if (!rc && !ref.rc && !du.rc && !ds.rc) {
        check_out(c, &ds.out[0], &ref.out[0], 1e-9, what);
        if (!nf && un) check_out(c, &ds.out[0], &du.out[0], wgc ? 1e-9 : 0, what);
        if (M > 1 && N > 1) {
            T_CHECK(ds.st.stitched >= nst && g.fused_region == !nf && g.launches == 1 && g.fused_declined == nf &&
                        g.pre_wg == wgc,
                    "%s %s: %lld stitched, %lld in-launch runs (%lld by work-group), %lld declined, %lld launches",
                    c->name, what, (long long)ds.st.stitched, (long long)g.fused_region, (long long)g.pre_wg,
                    (long long)g.fused_declined, (long long)g.launches);
            T_CHECK(!un || (gu.fused_region == 0 && gu.launches > 1), "%s %s: unstitched %lld launches", c->name,
                    what, (long long)gu.launches);
        }
        if (un) printf("-gpu force %s %s: launches stitched %lld, unstitched %lld\n", c->name, what,
                       (long long)g.launches, (long long)gu.launches);
    }
    t_run_free(&ref);
    t_run_free(&du);
    t_run_free(&ds);
    for (int k = 0; k < 3; k++) mb_release(in[k]);
}

/* A CSR X in the stitched launch (docs/gpu.md, "A CSR X in the
 * stitched launch"): the region's columns read X by lookups in its CSR
 * rows (csr_at, gpu/gpu_int.h), the operator reads X as its CSR main
 * input, so the vectors, the rows and the combine are one launch (the
 * unstitched device plan, and before this path every stitched plan over
 * a CSR X: the aggregates' launches, the vectors landed, the plan's
 * kernel). Over shapes (2 to 3000 rows; 1, 9, 37, 65, 150 columns: not
 * multiples of the work-group) and sparsity (a fully empty X, 0.001,
 * 0.05, 0.5, every third row empty), Row NO_AGG, ROW_AGG, COL_AGG
 * (the combine in the launch) and Cell NO_AGG (a variance: two region
 * passes) and FULL_AGG plans: equal to the unstitched device plan to
 * the bit under thread composition (within 1e-9 under work-group
 * composition, every third run; at the first shape only: the
 * unstitched plan's programs, built once more per launch size, cost
 * more than the rest, and test_device_region's and test_device_multi's
 * CSR runs compare with it too) and to the CPU within 1e-9; where X
 * has more than one row and column, one launch and one in-launch run.
 * A Row plan whose vector is not finite over a finite X (exp of a
 * large column maximum: Inf) is declined by the launch's flag (the
 * CPU's results, Inf and NaN where they are), in one launch. The
 * programs depend on the plan only, so each script's are built once
 * across the shapes; the scripts but the last are test_device_row's and
 * test_device_region's, whose CPU operators and unstitched device
 * programs (one source for a dense and a CSR main input) they share;
 * the one-column shape (other plans) runs one script. */
static void test_device_csr(void)
{
    static const Case cs[] = {
        {"csr row mm", "Y = (X - colMeans(X)) %*% B\n", "Y"},
        {"csr row rowsums", "y = rowSums(((X - colMins(X)) %*% B) ^ 2)\n", "y"},
        {"csr row colsums", "z = colSums((X - colMeans(X)) %*% B)\n", "z"},
        {"csr cell var", "Y = (X - colMeans(X)) / sqrt(colVars(X) + 1e-8)\n", "Y"},
        {"csr cell full", "s = sum((X - colMins(X)) ^ 2)\n", "s"},
        {"csr row inf", "Y = (X - exp(colMaxs(X) * 1000)) %*% B\n", "Y"},
    };
    /* rows, columns, density, every third row empty, the scripts run
     * (bits of cs; the last one's vector is Inf in every column, where
     * each has a value above 0.71) */
    static const struct { int64_t m, n; double d; bool er; int which; } run[] = {
        {130, 37, 0.05, false, 0x1f}, {1001, 9, 0.5, false, 0x35}, {2, 150, 0.5, false, 0x0a},
        {7, 65, 0.001, false, 0x1f},  {64, 65, 0, false, 0x0d},    {500, 20, 0.05, true, 0x32},
        {3000, 40, 0.001, true, 0x05}, {300, 1, 0.5, false, 0x01},
    };
    enum { NC = sizeof cs / sizeof *cs, NR = sizeof run / sizeof *run };
    BrErr e = {0};
    int kept = 0;
    for (int ri = 0; ri < NR; ri++)
        for (int q = 0; q < NC; q++) {
            if (!(run[ri].which >> q & 1) || !t_keep(kept++, 2)) continue;
            int64_t M = run[ri].m, N = run[ri].n;
            t_seed(1301 + (uint64_t)q + 10 * (uint64_t)ri);
            MB *x = t_gen(M, N, run[ri].d, -1, 2, false);
            for (int64_t i = 0; run[ri].er && i < M; i += 3)
                for (int64_t j = 0; j < N; j++) mb_dset(x, i, j, 0);
            mb_recount_nnz(x);
            MB *in[3] = {mb_to_sparse(x, &e), t_gen(M, 1, 1, 0, 1, false), t_gen(N, 3, 1, -1, 1, false)};
            mb_release(x);
            T_CHECK(in[0] && in[0]->sparse, "X CSR: %s", e.msg);
            if (!in[0]) continue;
            char what[96];
            snprintf(what, sizeof what, "%lldx%lld CSR %g%s", (long long)M, (long long)N, run[ri].d,
                     run[ri].er ? " empty rows" : "");
            /* the unstitched device plan (its programs compiled by PoCL
             * once more per launch size) at the first shape;
             * every third run under work-group composition; the last
             * script's vector Inf: declined by the launch */
            dev_three(&cs[q], in, what, ri == 0, (q + ri) % 3 == 2 ? 2 : 1, q == 5, 1);
        }
}

/* More than 4 distinct stitched vectors in the operator's launch
 * (docs/gpu.md, "The stitched vectors inside the operator's launch"):
 * the vectors' region has up to ST_MAX_OUT (8, codegen's CG_MAXPRE)
 * outputs, so a Row plan reading 5 and a Cell FULL_AGG plan reading 6
 * are one launch (before: more than 4 took dev_pre, the aggregates'
 * launches), dense (1001 x 9, 20 x 150: three region groups) and CSR
 * (130 x 37 at 5%), against the CPU within 1e-9; the Row plan at
 * 1001 x 9 under thread composition against the unstitched device plan
 * to the bit; each script under each schedule once. */
static void test_device_many(void)
{
    static const Case cs[] = {
        {"five vectors", "Y = ((X - colMeans(X)) * colMaxs(X) + (X - colMins(X)) * colSums(X) + X / (colSds(X) + 1)) %*% B\n",
         "Y"},
        {"six vectors", "s = sum((X - colMeans(X)) * colMaxs(X) + (X - colMins(X)) * colSums(X) + X * colSds(X) + X * colVars(X))\n",
         "s"},
    };
    /* each script dense and CSR, once under each schedule (pre); the
     * unstitched device plan (its own programs) for the Row plan only;
     * under the sanitizers the first and the last run (both scripts,
     * dense and CSR, both schedules) */
    static const struct { int q; int64_t m, n; double d; bool un; int pre; } run[] = {
        {0, 1001, 9, 1, true, 1}, {1, 20, 150, 1, false, 2}, {0, 130, 37, 0.05, false, 2}, {1, 130, 37, 0.05, false, 1}};
    for (int ri = 0; ri < 4; ri++) {
        if (T_SAN && (ri == 1 || ri == 2)) continue;
        int q = run[ri].q;
        int64_t M = run[ri].m, N = run[ri].n;
        t_seed(1501 + (uint64_t)q + 10 * (uint64_t)ri);
        MB *in[3] = {t_gen(M, N, run[ri].d, -1, 2, run[ri].d < 1), t_gen(M, 1, 1, 0, 1, false),
                     t_gen(N, 3, 1, -1, 1, false)};
        char what[64];
        snprintf(what, sizeof what, "%lldx%lld%s", (long long)M, (long long)N, run[ri].d < 1 ? " CSR" : "");
        dev_three(&cs[q], in, what, run[ri].un, run[ri].pre, false, 5 + q);
    }
}

/* Multi-output Row plans (V_MULTI) whose stitched vectors run inside
 * the operator's launch (docs/gpu.md, "The stitched vectors inside the
 * operator's launch"): the GLM step over centred columns (COL_T_AGG,
 * COL_AGG, FULL_AGG) and t(X) %*% (w * P) with sum(P * w) over
 * standardized columns (a variance: two passes of the region, X in
 * registers where a lane's share fits), over shapes that are not multiples of the
 * work-group (1001 x 9, 20 x 150, 130 x 37, 2 x 1100: more columns than
 * the region's 1024 groups), each under the region's three schedules:
 * thread composition (gpu_spoof_pre(1): the unstitched device plan's
 * vectors, so its results to the bit), work-group composition (2: the
 * local-memory tree; the CPU's within 1e-9) and the latency evaluator's
 * (0: the bits of the one it picked, counted by pre_wg). On the device
 * one launch (the unstitched plan: the aggregates' launches too). NaN
 * and Inf: in X the plan declines on the host before the device (the
 * CPU's rule for side inputs, X bound as one); X finite but a vector
 * not (two 1e308 in a column: its colMeans overflows to Inf) the launch
 * flags it and declines (fused_declined; the
 * CPU's operator: its results, NaN where they are), in one launch. A
 * CSR X too is one launch (test_device_csr). */
static void test_device_multi(void)
{
    static const Case cs[] = {
        {"multi glm", "q = (X - colMeans(X)) %*% v\ng = t(X) %*% (w * q)\nh = colSums(X * (w * q))\nm = max(w * q)\n", "g"},
        {"multi sd", "P = ((X - colMeans(X)) / colSds(X)) %*% v\nG = t(X) %*% (w * P)\ns = sum(P * w)\n", "G"},
    };
    static const char *outs[][3] = {{"g", "h", "m"}, {"G", "s", NULL}};
    /* shape, X's format: 0 dense, 1 CSR, 2 NaN/Inf in X, 3 a vector
     * non-finite (X finite) */
    static const struct { int c; int64_t m, n; int fmt; } run[] = {
        {0, 1001, 9, 0}, {0, 20, 150, 0}, {0, 2, 1100, 0}, {0, 130, 37, 1}, {0, 130, 37, 3}, {0, 1001, 9, 3},
        {1, 130, 37, 0}, {1, 1001, 9, 0}, {1, 20, 150, 0}, {1, 130, 37, 2},
    };
    const char *names[3] = {"X", "v", "w"};
    CgOptions off = {0}, on = {.enabled = true, .plancache = true, .policy = CG_FUSE_ALL, .keep_fused = true};
    BrErr e = {0};
    int64_t nwg = 0, nthr = 0;
    for (size_t k = 0; k < sizeof run / sizeof *run; k++) {
        if (!t_keep((long)k, 2)) continue;
        const Case *c = &cs[run[k].c];
        const char **o = outs[run[k].c];
        int no = o[2] ? 3 : 2, fmt = run[k].fmt;
        int64_t M = run[k].m, N = run[k].n;
        char what[64];
        static const char *const fn[] = {"", " CSR", " NaN/Inf in X", " a vector NaN/Inf"};
        snprintf(what, sizeof what, "%lldx%lld%s", (long long)M, (long long)N, fn[fmt]);
        t_seed(700 + k);
        MB *in[3] = {t_gen(M, N, fmt == 1 ? 0.3 : 1, -1, 2, fmt == 1), t_gen(N, 1, 1, -1, 1, false),
                     t_gen(M, 1, 1, 0, 1, false)};
        if (fmt == 2)
            for (int64_t q = 0; q < M * N; q += 13) mb_dset(in[0], q / N, q % N, q % 2 ? NAN : -INFINITY);
        if (fmt == 3) mb_dset(in[0], 0, 0, 1e308), mb_dset(in[0], 1, 0, 1e308);   /* colMeans: Inf */
        if (fmt >= 2) mb_recount_nnz(in[0]);
        TRun ref, du, ds[3];
        GpuStats gu, g[3];
        gpu_configure(GPU_OFF, -1, 0);
        t_run_dml(c->src, &off, 3, names, in, no, o, &ref);
        gpu_configure(GPU_FORCE, -1, 0);
        int rc = gpu_init(&e);
        T_CHECK(rc == 0, "an OpenCL device: %s", e.msg);
        gpu_set_stitch(false);
        setenv("BRAID_CG_STITCH", "0", 1);
        gpu_stats_reset();
        t_run_dml(c->src, &on, 3, names, in, no, o, &du);
        gu = gpu_stats();
        unsetenv("BRAID_CG_STITCH");
        for (int mode = 0; mode < 3; mode++) {
            gpu_spoof_pre(mode);
            gpu_stats_reset();
            t_run_dml(c->src, &on, 3, names, in, no, o, &ds[mode]);
            g[mode] = gpu_stats();
        }
        gpu_spoof_pre(0);
        gpu_set_stitch(true);
        gpu_configure(GPU_OFF, -1, 0);
        bool ok = !rc && !ref.rc && !du.rc && !ds[0].rc && !ds[1].rc && !ds[2].rc;
        T_CHECK(ok, "%s %s: %s / %s / %s %s %s", c->name, what, ref.err, du.err, ds[0].err, ds[1].err, ds[2].err);
        for (int t = 0; ok && t < no; t++) {
            Case ct = {c->name, c->src, o[t]};
            char w2[192];
            for (int mode = 0; mode < 3; mode++) {
                snprintf(w2, sizeof w2, "%s, schedule %d, against the CPU", what, mode);
                check_out(&ct, &ds[mode].out[t], &ref.out[t], 1e-9, w2);
            }
            /* thread composition: the unstitched device plan's bits; the
             * evaluator's: the bits of the schedule it picked */
            snprintf(w2, sizeof w2, "%s, thread composition against unstitched", what);
            check_out(&ct, &ds[1].out[t], &du.out[t], 0, w2);
            snprintf(w2, sizeof w2, "%s, the evaluator's against its pick", what);
            check_out(&ct, &ds[0].out[t], &ds[g[0].pre_wg ? 2 : 1].out[t], 0, w2);
        }
        if (ok) {
            /* the stitched aggregates were stitched, and the plan is one
             * Row operator */
            T_CHECK(ds[0].st.stitched >= 1 && ds[0].st.fused[1] == 1, "%s %s: %lld stitched, %lld Row operators",
                    c->name, what, (long long)ds[0].st.stitched, (long long)ds[0].st.fused[1]);
            for (int mode = 0; mode < 3; mode++) {
                const GpuStats *s = &g[mode];
                if (fmt == 0)
                    T_CHECK(s->fused_ops == 1 && s->fused_region == 1 && s->fused_cpu == 0 && s->launches == 1 &&
                                gu.launches > 1 && s->pre_wg == (mode == 2 || (mode == 0 && g[0].pre_wg)),
                            "%s %s schedule %d: %lld on the device (%lld in-launch, %lld work-group), %lld on the CPU, "
                            "%lld launches (unstitched %lld)", c->name, what, mode, (long long)s->fused_ops,
                            (long long)s->fused_region, (long long)s->pre_wg, (long long)s->fused_cpu,
                            (long long)s->launches, (long long)gu.launches);
                if (fmt == 1)
                    T_CHECK(s->fused_ops == 1 && s->fused_region == 1 && s->launches == 1 && gu.launches > 1,
                            "%s %s schedule %d: CSR: %lld on the device, %lld in-launch, %lld launches (unstitched %lld)",
                            c->name, what, mode, (long long)s->fused_ops, (long long)s->fused_region,
                            (long long)s->launches, (long long)gu.launches);
                if (fmt == 2)
                    T_CHECK(s->fused_ops == 0 && s->fused_cpu == 1 && s->fused_declined == 0 && s->launches == 0,
                            "%s %s schedule %d: NaN/Inf X: %lld on the device, %lld on the CPU, %lld launches", c->name,
                            what, mode, (long long)s->fused_ops, (long long)s->fused_cpu, (long long)s->launches);
                if (fmt == 3)
                    T_CHECK(s->fused_ops == 0 && s->fused_cpu == 1 && s->fused_declined == 1 && s->launches == 1,
                            "%s %s schedule %d: a vector NaN/Inf: %lld on the device, %lld on the CPU (%lld declined by "
                            "the launch), %lld launches", c->name, what, mode, (long long)s->fused_ops,
                            (long long)s->fused_cpu, (long long)s->fused_declined, (long long)s->launches);
            }
            if (fmt == 0) nwg += g[0].pre_wg, nthr += !g[0].pre_wg;
            if (fmt == 0 && k == 0)
                printf("-gpu force multi-output Row, stitched vectors in the launch: %s %s: launches %lld, unstitched %lld\n",
                       c->name, what, (long long)g[0].launches, (long long)gu.launches);
        }
        t_run_free(&ref);
        t_run_free(&du);
        for (int mode = 0; mode < 3; mode++) t_run_free(&ds[mode]);
        for (int q = 0; q < 3; q++) mb_release(in[q]);
    }
    /* the evaluator picks each schedule somewhere: thread composition for
     * 2 rows (a lane's walk is 2 cells, the tree's steps cost more),
     * work-group composition for 1001 rows of 9 columns (9 lanes would
     * walk 1001 rows each) */
    StitchRegion r = {0};
    st_colstd(&r);
    int cache;
    T_CHECK(stitch_inlaunch_sched(&r, 2, 1100, 64, 0, &cache).scheme == ST_THREAD, "2 x 1100: thread composition");
    T_CHECK(stitch_inlaunch_sched(&r, 1001, 9, 64, 0, &cache).scheme == ST_WORKGROUP && !cache,
            "1001 x 9: work-group composition, X not cached");
    T_CHECK(stitch_inlaunch_sched(&r, 130, 37, 64, 0, &cache).scheme == ST_WORKGROUP && cache,
            "130 x 37: work-group composition, X cached (3 cells a lane)");
    T_CHECK(stitch_inlaunch_sched(&r, 1001, 9, 64, 1, &cache).scheme == ST_THREAD, "the test's override");
    printf("multi-output Row in-launch runs: work-group composition %lld, thread %lld\n", (long long)nwg,
           (long long)nthr);
}

/* Recompiles dag of p (rc_recompile, over vars' sizes) under GPU mode
 * `mode` and profile prof: the stitch points it stitched (*st) and
 * materialized (*mat) and its selections from the cache (*hit); false
 * when it did not compile. The cost model only: no device is used. */
static bool recompile_under(RtProgram *p, HopDag *dag, SymTab *vars, GpuMode mode, const GpuProfile *prof, int64_t *st,
                            int64_t *mat, int64_t *hit)
{
    CgStats b = *cg_stats(p->cg);
    gpu_configure(mode, -1, 0);
    gpu_set_profile(prof);
    HopDag *copy = NULL;
    RwStats rw = {0};
    Code *c = rc_recompile(p, dag, vars, EX_CP, &copy, &rw);
    gpu_set_profile(NULL);
    gpu_configure(GPU_OFF, -1, 0);
    const CgStats *a = cg_stats(p->cg);
    *st = a->stitch_pts[1] - b.stitch_pts[1], *mat = a->stitch_pts[0] - b.stitch_pts[0];
    *hit = a->sel_cached - b.sel_cached;
    bool ok = c != NULL;
    plan_code_free(c);
    hop_dag_free(copy);
    return ok;
}

/* The selection cache (codegen/mpskip.c part_sig) keys a partition by a
 * signature that holds the GPU mode and the device profile, which price
 * the stitch points' device side: one DAG recompiled (rc_recompile,
 * one CgContext) under `-gpu force` with slow launches stitches both
 * points, under slow memory materializes them (not the cached choice),
 * under slow launches again takes the cache, and with the device off
 * selects by the CPU model (no entry of the device's). No device is
 * needed: the cost model reads the mode and the profile only. */
static void test_profile_cache(void)
{
    const char *src = "A = X - colMeans(X)\nY = exp(A) * 2\nz = colSums(A * colMeans(X))\ns = sum(Y) + sum(z)\n";
    const char *names[1] = {"X"};
    static const GpuProfile prof[2] = {{1e-3, 1e12, 1e12, 1e-3, 1e12, 1e12}, {1e-9, 1e6, 1e6, 1e-9, 1e6, 1e6}};
    /* steps: mode, profile; the stitch points wanted (stitched,
     * materialized) and whether the selection comes from the cache */
    static const struct { GpuMode mode; int prof; int64_t st, mat; bool cached; } step[] = {
        {GPU_FORCE, 0, 2, 0, false}, {GPU_FORCE, 1, 0, 2, false}, {GPU_FORCE, 0, 2, 0, true}, {GPU_OFF, 1, 0, 2, false}};
    Diag *d = diag_new();
    LangOptions lo = {.predefined = names, .npredefined = 1};
    Program *ast = lang_load_string(src, "<profile-cache>", &lo, d);
    CgOptions on = {.enabled = true, .plancache = true, .policy = CG_COST_BASED, .keep_fused = true};
    const char *outs[] = {"s"};
    RtProgram *p = ast && !diag_nerrors(d) ? plan_build_program_outputs(ast, d, 2, &on, outs, 1) : NULL;
    T_CHECK(p && p->cg, "profile cache: compile: %s", diag_nerrors(d) ? diag_first_message(d) : "?");
    HopDag *dag = NULL;
    for (int i = 0; p && p->cg && i < p->main.n && !dag; i++) dag = plan_dag(p->main.v[i]);
    T_CHECK(dag != NULL, "profile cache: no DAG");
    SymTab vars;
    st_init(&vars);
    t_seed(11);
    st_put(&vars, "X", val_matrix(t_gen(300, 20, 1, 0, 1, false)));   /* X's sizes for the recompilations */
    gpu_set_stitch(false);
    for (size_t k = 0; dag && k < sizeof step / sizeof *step; k++) {
        int64_t st, mat, hit;
        bool ok = recompile_under(p, dag, &vars, step[k].mode, &prof[step[k].prof], &st, &mat, &hit);
        T_CHECK(ok && st == step[k].st && mat == step[k].mat && (hit > 0) == step[k].cached,
                "profile cache step %zu: %lld stitched, %lld materialized, %lld from the cache (want %lld, %lld, %s)",
                k, (long long)st, (long long)mat, (long long)hit, (long long)step[k].st, (long long)step[k].mat,
                step[k].cached ? "some" : "none");
    }
    gpu_set_stitch(true);
    st_free(&vars);
    plan_program_free(p);
    lang_program_free(ast);
    diag_free(d);
}

/* The device side of stitch points priced as exec.c runs it (cost.c
 * dev_vec_time): a vector stitched into a Row operator, or into any
 * operator over a CSR X, is computed in the operator's own launch (the
 * in-launch region; a CSR X read in place, a binary search per cell),
 * so it costs no launch of its own. Under `-gpu` (auto: the cheaper of
 * the host's and the device's price) with a profile of slow launches
 * (1 ms) and fast memory, a vector read by two Row operators over a
 * dense X, and one read by two Cell operators over a CSR X (5%), is
 * stitched into both; priced as dev_pre's launches (before) the host's
 * price won and both were materialized. With slow memory (1 MB/s) the
 * host's price wins and both are materialized, and with the device off
 * the CPU model materializes them too. The same where the Cell
 * operators' main input is a W sparser than X (1%) and the CSR X a side
 * input ("csr side": its rows expanded in the operator's launch, cost.c
 * csr_side; before, a launch of its own was priced and the host's
 * price won).
 * "csr side zero": under `-gpu force` with 3.5 ms launches and 1 GB/s,
 * stitching into both operators pays two passes over X (2.7 ms), and
 * two expansions of X where X is a side input (+1.9 ms), against one
 * launch and pass (3.6 ms): W * f(X) with a dense W is driven by W (W
 * is zero-preserving, X is not: cplan.c choose_main), so X is a side
 * input and the vector is materialized; csr_side taking the sparsest
 * input (X) as the driver (before) stitched both. "csr side cursor": the
 * same with W at 1% as CSR, so both operators take the sparse path and
 * read X's cells by a cursor (X's entries, 0.1 ms each, no expansion):
 * stitching into both (2.9 ms) beats materializing (3.6 ms); priced as
 * two expansions (before) it did not. With slow memory (1 MB/s) both
 * are materialized. The cost model only:
 * the DAG recompiled (rc_recompile) with X's sizes, no device needed. */
static void test_profile_auto(void)
{
    static const GpuProfile prof[3] = {{1e-3, 1e12, 1e12, 1e-3, 1e12, 1e12},
                                       {1e-9, 1e6, 1e6, 1e-9, 1e6, 1e6},
                                       {3.5e-3, 1e9, 1e9, 3.5e-3, 1e9, 1e9}};
    /* per case its steps: mode, profile, the stitch points wanted
     * stitched (of 2) */
    typedef struct { GpuMode mode; int prof; int64_t st; } Step;
    static const struct { const char *name, *src; bool csr; double wsp; Step step[3]; } cs[] = {
        {"row", "A = X - colMeans(X)\nY = A %*% B\nz = rowSums(A * colMeans(X))\ns = sum(Y) + sum(z)\n", false, 1,
         {{GPU_ON, 0, 2}, {GPU_ON, 1, 0}, {GPU_OFF, 0, 0}}},
        {"csr", "A = X - colMeans(X)\nY = exp(A) * 2\nz = colSums(A * colMeans(X))\ns = sum(Y) + sum(z)\n", true, 1,
         {{GPU_ON, 0, 2}, {GPU_ON, 1, 0}, {GPU_OFF, 0, 0}}},
        {"csr side", "A = X - colMeans(X)\nY = exp(A) * W\nz = colSums(W * A * colMeans(X))\ns = sum(Y) + sum(z)\n", true, 0.01,
         {{GPU_ON, 0, 2}, {GPU_ON, 1, 0}, {GPU_OFF, 0, 0}}},
        {"csr side zero", "A = X - colMeans(X)\nY = exp(A) * W\nz = colSums(W * A * colMeans(X))\ns = sum(Y) + sum(z)\n",
         true, 1, {{GPU_FORCE, 2, 0}, {GPU_FORCE, 0, 2}, {GPU_OFF, 0, 0}}},
        {"csr side cursor", "A = X - colMeans(X)\nY = exp(A) * W\nz = colSums(W * A * colMeans(X))\ns = sum(Y) + sum(z)\n",
         true, 0.01, {{GPU_FORCE, 2, 2}, {GPU_FORCE, 1, 0}, {GPU_OFF, 0, 0}}},
        {"csr side magg", "A = X - colMeans(X)\na = sum(exp(A) * W)\nb = sum(exp(A) * V * colMeans(X))\ns = a + b\n",
         true, 0.01, {{GPU_FORCE, 2, 2}, {GPU_FORCE, 1, 0}, {GPU_OFF, 0, 0}}},
    };
    const char *names[4] = {"X", "B", "W", "V"}, *outs[1] = {"s"};
    t_seed(13);
    for (size_t k = 0; k < sizeof cs / sizeof *cs; k++) {
        Diag *d = diag_new();
        LangOptions lo = {.predefined = names, .npredefined = 4};
        Program *ast = lang_load_string(cs[k].src, "<profile-auto>", &lo, d);
        CgOptions on = {.enabled = true, .plancache = true, .policy = CG_COST_BASED, .keep_fused = true};
        RtProgram *p = ast && !diag_nerrors(d) ? plan_build_program_outputs(ast, d, 4, &on, outs, 1) : NULL;
        T_CHECK(p && p->cg, "profile auto %s: compile: %s", cs[k].name, diag_nerrors(d) ? diag_first_message(d) : "?");
        HopDag *dag = NULL;
        for (int i = 0; p && p->cg && i < p->main.n && !dag; i++) dag = plan_dag(p->main.v[i]);
        T_CHECK(dag != NULL, "profile auto %s: no DAG", cs[k].name);
        SymTab vars;
        st_init(&vars);
        st_put(&vars, "X", val_matrix(t_gen(3000, 40, cs[k].csr ? 0.05 : 1, 0, 1, cs[k].csr)));
        st_put(&vars, "B", val_matrix(t_gen(40, 3, 1, 0, 1, false)));
        st_put(&vars, "W", val_matrix(t_gen(3000, 40, cs[k].wsp, 0.5, 2, cs[k].wsp < 1)));
        st_put(&vars, "V", val_matrix(t_gen(3000, 40, 1, 0.5, 2, false)));
        gpu_set_stitch(false);
        for (size_t q = 0; dag && q < 3; q++) {
            const Step *sq = &cs[k].step[q];
            const GpuProfile *pf = &prof[sq->prof];
            const char *mode = sq->mode == GPU_OFF ? "device off" : sq->mode == GPU_FORCE ? "-gpu force" : "-gpu auto";
            int64_t st, mat, hit;
            bool ok = recompile_under(p, dag, &vars, sq->mode, pf, &st, &mat, &hit);
            T_CHECK(ok && st == sq->st && st + mat == 2,
                    "profile auto %s step %zu (%s, launch %g s, %g B/s): %lld stitched, %lld materialized (want %lld "
                    "stitched of 2)", cs[k].name, q, mode, pf->launch_s, pf->bw, (long long)st, (long long)mat,
                    (long long)sq->st);
            printf("profile auto %s, %s, launch %g s, bandwidth %g B/s: stitch points %lld stitched, %lld materialized\n",
                   cs[k].name, mode, pf->launch_s, pf->bw, (long long)st, (long long)mat);
        }
        gpu_set_stitch(true);
        st_free(&vars);
        plan_program_free(p);
        lang_program_free(ast);
        diag_free(d);
    }
}

/* The device side of stitch points in getPlanCost (cost.c dev_vec_time,
 * by the device profile): under `-gpu force`, colMeans(X) read by two
 * Cell operators is stitched into both (each a one-launch region,
 * saving the aggregate's launch) under a profile of slow launches
 * (1 ms) and fast memory, and materialized (computed once) under one of
 * slow memory (1 MB/s: each stitched copy re-reads X); the device off,
 * the profile changes nothing (the CPU model). The choice is checked,
 * not a time; results equal the CPU's within 1e-9 either way. */
static void test_profile(void)
{
    const char *src = "A = X - colMeans(X)\nY = exp(A) * 2\nz = colSums(A * colMeans(X))\ns = sum(Y) + sum(z)\n";
    static const GpuProfile prof[2] = {{1e-3, 1e12, 1e12, 1e-3, 1e12, 1e12}, {1e-9, 1e6, 1e6, 1e-9, 1e6, 1e6}};
    BrErr e = {0};
    gpu_configure(GPU_FORCE, -1, 0);
    int rc = gpu_init(&e);
    gpu_configure(GPU_OFF, -1, 0);
    T_CHECK(rc == 0, "an OpenCL device: %s", e.msg);
    if (rc) return;
    t_seed(11);
    MB *in[1] = {t_gen(300, 20, 1, 0, 1, false)};
    const char *names[1] = {"X"}, *outs[1] = {"s"};
    Case c = {"profile", src, "s"};
    CgOptions off = {0}, on = {.enabled = true, .plancache = true, .policy = CG_COST_BASED, .keep_fused = true};
    TRun ref;
    t_run_dml(src, &off, 1, names, in, 1, outs, &ref);
    int64_t pts[2][2][2];   /* [device on][profile][stitched, materialized] */
    for (int dev = 0; dev < 2; dev++)
        for (int q = 0; q < 2; q++) {
            gpu_configure(dev ? GPU_FORCE : GPU_OFF, -1, 0);
            gpu_set_stitch(false);
            gpu_set_profile(&prof[q]);
            TRun st;
            t_run_dml(src, &on, 1, names, in, 1, outs, &st);
            gpu_set_profile(NULL);
            gpu_set_stitch(true);
            gpu_configure(GPU_OFF, -1, 0);
            T_CHECK(st.rc == 0 && ref.rc == 0, "profile %d/%d: %s", dev, q, st.err);
            if (!st.rc && !ref.rc) check_out(&c, &st.out[0], &ref.out[0], 1e-9, dev ? "-gpu force" : "device off");
            pts[dev][q][0] = st.st.stitch_pts[1];
            pts[dev][q][1] = st.st.stitch_pts[0];
            printf("profile %s, launch %g s, bandwidth %g B/s: stitch points %lld stitched, %lld materialized\n",
                   dev ? "-gpu force" : "device off", prof[q].launch_s, prof[q].bw, (long long)pts[dev][q][0],
                   (long long)pts[dev][q][1]);
            t_run_free(&st);
        }
    T_CHECK(pts[1][0][0] == 2 && pts[1][0][1] == 0, "slow launches: %lld stitched, %lld materialized (want 2, 0)",
            (long long)pts[1][0][0], (long long)pts[1][0][1]);
    T_CHECK(pts[1][1][0] == 0 && pts[1][1][1] == 2, "slow memory: %lld stitched, %lld materialized (want 0, 2)",
            (long long)pts[1][1][0], (long long)pts[1][1][1]);
    T_CHECK(pts[0][0][0] == pts[0][1][0] && pts[0][0][1] == pts[0][1][1] && pts[0][0][0] + pts[0][0][1] == 2,
            "device off: the profile changed the choice (%lld/%lld vs %lld/%lld)", (long long)pts[0][0][0],
            (long long)pts[0][0][1], (long long)pts[0][1][0], (long long)pts[0][1][1]);
    t_run_free(&ref);
    mb_release(in[0]);
}

/* Stitch points (codegen/cost.c add_stitch_points): MPSkipEnum
 * enumerates them and getPlanCost prices them; the explorer
 * (fxselect.c) takes the vector into its consumer's kernel or not by
 * its latency evaluator. An aggregate read by one operator is stitched
 * under both (one vector write and read fewer, and for the explorer a
 * launch); two vectors read by one operator (column standardization)
 * are both stitched (the explorer's patterns grow from one producer:
 * absorb_stitched takes the second in); an aggregate read by two
 * operators of a partition is not stitched by MPSkipEnum (stitching it
 * into both computes it twice, which costs more than the vector's
 * write and read). All agree with the unstitched plan to the bit and
 * with codegen off within rounding. want[selector] = {stitched,
 * materialized} points, -1: not checked. */
static void test_choice(void)
{
    static const struct { const char *name, *src; int want[2][2]; } cs[] = {
        {"single", "Y = (X - colMeans(X)) %*% B\ns = sum(Y)\n", {{1, 0}, {1, 0}}},
        {"colstd", "s = sum((X - colMeans(X)) / colSds(X))\n", {{2, 0}, {2, 0}}},
        {"shared", "A = X - colMeans(X)\nY = A %*% B\nz = rowSums(A * colMeans(X))\ns = sum(Y) + sum(z)\n",
         {{0, 2}, {-1, -1}}},
    };
    static const CgPolicy sel[2] = {CG_COST_BASED, CG_STITCH_EXPLORER};
    t_seed(7);
    MB *in[2] = {t_gen(3000, 40, 1, 0, 1, false), t_gen(40, 3, 1, 0, 1, false)};
    const char *names[2] = {"X", "B"}, *outs[1] = {"s"};
    CgOptions off = {0};
    for (int k = 0; k < 3; k++) {
        Case c = {cs[k].name, cs[k].src, "s"};
        TRun ref;
        t_run_dml(c.src, &off, 2, names, in, 1, outs, &ref);
        for (int q = 0; q < 2; q++) {
            CgOptions on = {.enabled = true, .plancache = true, .policy = sel[q], .keep_fused = true};
            TRun st, un;
            t_run_dml(c.src, &on, 2, names, in, 1, outs, &st);
            setenv("BRAID_CG_STITCH", "0", 1);
            t_run_dml(c.src, &on, 2, names, in, 1, outs, &un);
            unsetenv("BRAID_CG_STITCH");
            T_CHECK(st.rc == 0 && un.rc == 0 && ref.rc == 0, "choice %s/%d: runs", c.name, q);
            if (!st.rc && !un.rc && !ref.rc) {
                check_out(&c, &st.out[0], &un.out[0], 0, q ? "choice, explorer" : "choice, MPSkipEnum");
                check_out(&c, &st.out[0], &ref.out[0], 1e-9, q ? "choice, explorer" : "choice, MPSkipEnum");
                const int *w = cs[k].want[q];
                T_CHECK(w[0] < 0 || (st.st.stitch_pts[1] == w[0] && st.st.stitch_pts[0] == w[1]),
                        "choice %s/%d: stitch points stitched %lld, materialized %lld (want %d, %d)", c.name, q,
                        (long long)st.st.stitch_pts[1], (long long)st.st.stitch_pts[0], w[0], w[1]);
                T_CHECK(w[0] < 0 || (st.st.stitched > 0) == (w[0] > 0), "choice %s/%d: %lld stitched", c.name, q,
                        (long long)st.st.stitched);
                T_CHECK(un.st.stitch_pts[0] + un.st.stitch_pts[1] == 0, "choice %s/%d: points with stitching off",
                        c.name, q);
                printf("choice %s/%s: stitch points %lld stitched, %lld materialized\n", c.name,
                       q ? "explorer" : "MPSkipEnum", (long long)st.st.stitch_pts[1], (long long)st.st.stitch_pts[0]);
            }
            t_run_free(&st);
            t_run_free(&un);
        }
        t_run_free(&ref);
    }
    mb_release(in[0]);
    mb_release(in[1]);
}

/* A compressed X (forced CLA: DDC groups of few distinct values): the
 * stitched inputs' vectors are computed by the unfused kernels over the
 * compressed block when the operator is bound (exec.c bind_cmb_pre) and
 * the skeleton runs over the block, where the whole operator used to
 * fall back to the unfused plan: equal to the unstitched plan to the
 * bit, fewer fallbacks than before (none where the unstitched plan has
 * none). */
static void test_compressed(void)
{
    BrErr e = {0};
    MB *d = mb_dense(3000, 12, &e);
    for (int64_t i = 0; i < 3000; i++)
        for (int j = 0; j < 12; j++) d->d[i * 12 + j] = 0.25 * (double)((i * (j + 3) + j) % (4 + j));
    mb_recount_nnz(d);
    ClaPlanOpts o = cla_plan_defaults();
    o.force = true;
    MB *x = cla_compress(d, &o, &e);
    T_CHECK(x && x->cmb, "compressed X: %s", e.msg);
    MB *in[2] = {x, t_gen(12, 3, 1, 0, 1, false)};
    const char *names[2] = {"X", "B"};
    CgOptions on = {.enabled = true, .plancache = true, .policy = CG_FUSE_ALL, .keep_fused = true}, off = {0};
    for (int c = 0; x && c < NCASE; c++) {
        TRun st, un, ref;
        const char *outs[1] = {cases[c].out};
        t_run_dml(cases[c].src, &on, 2, names, in, 1, outs, &st);
        setenv("BRAID_CG_STITCH", "0", 1);
        t_run_dml(cases[c].src, &on, 2, names, in, 1, outs, &un);
        unsetenv("BRAID_CG_STITCH");
        t_run_dml(cases[c].src, &off, 2, names, in, 1, outs, &ref);
        T_CHECK(st.rc == 0 && un.rc == 0 && ref.rc == 0, "%s compressed: runs", cases[c].name);
        if (!st.rc && !un.rc && !ref.rc) {
            /* to the bit, except where the CLA Row skeleton may take a
             * t(X) %*% q root per tuple (cla_rowtl_*, kernels/spoof_row.c
             * tq_init): its choice weighs the plan's row ranges, which the
             * stitched and unstitched plans may cut differently, and a
             * per-tuple sum adds in another order (col_t_agg) */
            check_out(&cases[c], &st.out[0], &un.out[0], strstr(cases[c].name, "col_t_agg") ? 1e-12 : 0,
                      "compressed");
            check_out(&cases[c], &st.out[0], &ref.out[0], 1e-9, "compressed");
            T_CHECK(st.st.stitched >= 1 && st.st.fallback <= un.st.fallback,
                    "%s compressed: %lld stitched, fallbacks %lld (unstitched %lld)", cases[c].name,
                    (long long)st.st.stitched, (long long)st.st.fallback, (long long)un.st.fallback);
            printf("compressed %s: fallbacks stitched %lld, unstitched %lld\n", cases[c].name,
                   (long long)st.st.fallback, (long long)un.st.fallback);
        }
        t_run_free(&st);
        t_run_free(&un);
        t_run_free(&ref);
    }
    mb_release(in[0]);
    mb_release(in[1]);
    mb_release(d);
}

int main(void)
{

    t_pin_machine();
    static const int64_t shapes[][2] = {{1, 13}, {7, 1}, {130, 37}, {3000, 40}};
    /* under the sanitizers (t_keep) each case, shape and format runs
     * under one of the two policies, rotating, so every case still meets
     * every shape and format and each policy every case; and each case's
     * NaN/Inf run in one of the formats, alternating */
    for (int pol = 0; pol < 2; pol++)
        for (int s = 0; s < 4; s++)
            for (int sp = 0; sp < 2; sp++)
                for (int c = 0; c < NCASE; c++)
                    if (t_keep(c + s + sp + pol, 2)) run_case(&cases[c], shapes[s][0], shapes[s][1], sp, false, pol);
    for (int sp = 0; sp < 2; sp++)
        for (int c = 0; c < NCASE; c++)
            if (t_keep(c + sp, 2)) run_case(&cases[c], 130, 37, sp, true, 0);
    test_shared();
    test_choice();
    test_compressed();
    test_device();
    test_device_region();
    test_device_row();
    test_device_multi();
    test_device_csr();
    test_device_many();
    test_profile();
    test_profile_cache();
    test_profile_auto();
    T_CHECK(nstitched > 0, "aggregates stitched: %lld", (long long)nstitched);
    printf("aggregates stitched over all runs: %lld\n", (long long)nstitched);
    return t_done("test_cgstitch");
}
