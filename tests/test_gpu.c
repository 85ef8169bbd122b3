/* test_gpu.c: the OpenCL backend (gpu/) against the CPU reference kernels
 * over swept shapes (none a multiple of a work-group size), sparsities
 * and special values; the buffer pool's residency and eviction; kernel
 * launch counts. Runs on whatever OpenCL device the ICD loader offers
 * (PoCL in CI: tools/deps.sh installs it); no device is a failure. */
#include <math.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t.h"
#include "gpu/gpu.h"
#include "kernels/agg.h"
#include "kernels/ew.h"
#include "kernels/mm.h"
#include "kernels/reorg.h"
#include "matrix/cmb.h"
#include "kernels/cla.h"

static unsigned t_seed = 7;
static double urand(void)
{
    t_seed = t_seed * 1103515245u + 12345u;
    return (double)((t_seed >> 8) & 0xFFFFFF) / (double)0x1000000;
}

/* Random r x c block with about sp non-zeros in [-4, 4]; special: some
 * NaN, Inf and -0 cells too. Sparse format when sparse. */
static MB *rnd(int64_t r, int64_t c, double sp, bool sparse, bool special)
{
    BrErr e = {0};
    MB *m = mb_dense(r, c, &e);
    for (int64_t i = 0; i < r * c; i++) {
        if (urand() >= sp) continue;
        double v = urand() * 8 - 4;
        if (special) {
            double u = urand();
            v = u < 0.02 ? NAN : u < 0.04 ? INFINITY : u < 0.06 ? -INFINITY : u < 0.1 ? round(v) : v;
        }
        m->d[i] = v == 0 ? 0.25 : v;
    }
    mb_recount_nnz(m);
    if (sparse) mb_make_sparse(m, &e);
    return m;
}

static const int64_t shapes[][2] = {{1, 1}, {7, 13}, {33, 65}, {100, 3}, {3, 300}, {257, 31}};
#define NSHAPES (int)(sizeof shapes / sizeof shapes[0])
static const double sps[] = {1.0, 0.3, 0.05};

/* got against want: both NULL with no error is "not handled" (a shape
 * the CPU kernel rejects too); otherwise equal within rtol. */
static void same(MB *got, MB *want, BrErr *ge, double rtol, const char *what, int64_t r, int64_t c, double sp)
{
    T_CHECK(!ge->code, "%s %lldx%lld sp %.2f: device error %s", what, (long long)r, (long long)c, sp, ge->msg);
    if (!want) {
        T_CHECK(!got, "%s %lldx%lld: the CPU rejects it, the GPU did not", what, (long long)r, (long long)c);
    } else {
        T_MB_EQ(got, want, rtol, "%s %lldx%lld sp %.2f", what, (long long)r, (long long)c, sp);
        T_CHECK(!got || mb_valid(got, true), "%s: invalid block", what);
    }
    mb_release(got);
    mb_release(want);
}

static void test_unary(void)
{
    for (int s = 0; s < NSHAPES; s++)
        for (int p = 0; p < 3; p++)
            for (int op = 0; op < OP__COUNT; op++) {
                if (op_info[op].kind != OK_UNARY) continue;
                int64_t r = shapes[s][0], c = shapes[s][1];
                MB *a = rnd(r, c, sps[p], sps[p] < 0.4, true);
                BrErr e = {0}, ge = {0};
                same(gpu_unary(op, a, &ge), k_unary(op, a, &e), &ge, 1e-10, op_info[op].name, r, c, sps[p]);
                mb_release(a);
            }
}

static void test_binary(void)
{
    for (int s = 0; s < NSHAPES; s++)
        for (int p = 0; p < 3; p++)
            for (int op = 0; op < OP__COUNT; op++) {
                if (op_info[op].kind != OK_BINARY) continue;
                int64_t r = shapes[s][0], c = shapes[s][1];
                bool sp = sps[p] < 0.4;
                MB *a = rnd(r, c, sps[p], sp, op != OP_MULT), *b = rnd(r, c, 0.7, false, false);
                MB *bs = rnd(r, c, sps[p], sp, false);
                MB *row = rnd(1, c, 1, false, false), *col = rnd(r, 1, 0.8, false, true);
                BrErr e = {0}, ge = {0};
                const char *nm = op_info[op].name;
                same(gpu_binary(op, a, b, &ge), k_binary(op, a, b, &e), &ge, 1e-10, nm, r, c, sps[p]);
                same(gpu_binary(op, b, a, &ge), k_binary(op, b, a, &e), &ge, 1e-10, nm, r, c, sps[p]);
                same(gpu_binary(op, a, bs, &ge), k_binary(op, a, bs, &e), &ge, 1e-10, nm, r, c, sps[p]);
                same(gpu_binary(op, a, row, &ge), k_binary(op, a, row, &e), &ge, 1e-10, nm, r, c, sps[p]);
                same(gpu_binary(op, col, a, &ge), k_binary(op, col, a, &e), &ge, 1e-10, nm, r, c, sps[p]);
                same(gpu_binary(op, col, row, &ge), k_binary(op, col, row, &e), &ge, 1e-10, nm, r, c, sps[p]);
                same(gpu_binary_ms(op, a, 2.5, false, &ge), k_binary_ms(op, a, 2.5, &e), &ge, 1e-10, nm, r, c,
                     sps[p]);
                same(gpu_binary_ms(op, a, -3, true, &ge), k_binary_sm(op, -3, a, &e), &ge, 1e-10, nm, r, c, sps[p]);
                /* a shape mismatch is the CPU's error, not the device's */
                MB *bad = rnd(r + 2, c + 1, 1, false, false);
                same(gpu_binary(op, a, bad, &ge), NULL, &ge, 0, nm, r, c, sps[p]);
                mb_release(bad);
                mb_release(a), mb_release(b), mb_release(bs), mb_release(row), mb_release(col);
            }
}

static MB *rnd_prod(int64_t r, int64_t c, double sp, bool sparse);

/* ops in every direction over the swept shapes, sparsity, special values */
static void agg_sweep(const OpCode *ops, int nops)
{
    const AggDir dirs[] = {DIR_FULL, DIR_ROW, DIR_COL};
    for (int s = 0; s < NSHAPES; s++)
        for (int p = 0; p < 3; p++)
            for (int o = 0; o < nops; o++)
                for (int d = 0; d < 3; d++)
                    for (int special = 0; special < 2; special++) {
                        int64_t r = shapes[s][0], c = shapes[s][1];
                        MB *a = ops[o] == OP_PROD && !special ? rnd_prod(r, c, sps[p], sps[p] < 0.4)
                                                              : rnd(r, c, sps[p], sps[p] < 0.4, special);
                        BrErr e = {0}, ge = {0};
                        MB *want;
                        if (dirs[d] == DIR_FULL) {
                            double v = 0;
                            want = k_agg_full(ops[o], a, &v, &e) ? NULL : mb_scalar(v, &e);
                        } else {
                            want = k_agg(ops[o], dirs[d], a, &e);
                        }
                        same(gpu_agg(ops[o], dirs[d], a, &ge), want, &ge, 1e-8, op_info[ops[o]].name, r, c, sps[p]);
                        mb_release(a);
                    }
}

/* a and b equal to the bit (both NaN counts as equal; -0.0 is not 0.0) */
static void bits_eq(MB *a, MB *b, const char *what, int64_t r, int64_t c, double sp)
{
    BrErr e = {0};
    T_CHECK(a && b && !mb_host(a, &e) && !mb_host(b, &e), "%s %lldx%lld sp %.2f: results", what, (long long)r,
            (long long)c, sp);
    MB *x = a && b ? mb_to_dense(a, &e) : NULL, *y = x ? mb_to_dense(b, &e) : NULL;
    bool same = x && y && x->rows == y->rows && x->cols == y->cols;
    int64_t bad = -1;
    for (int64_t k = 0; same && k < x->rows * x->cols; k++)
        if (!(isnan(x->d[k]) && isnan(y->d[k])) && memcmp(&x->d[k], &y->d[k], sizeof(double))) bad = k, same = false;
    T_CHECK(same, "%s %lldx%lld sp %.2f: CSR vs dense differ at cell %lld (%.17g vs %.17g)", what, (long long)r,
            (long long)c, sp, (long long)bad, bad >= 0 ? x->d[bad] : 0.0, bad >= 0 ? y->d[bad] : 0.0);
    mb_release(x), mb_release(y), mb_release(a), mb_release(b);
}

/* Column walks over a CSR operand (clsrc.c agg_col, agg_seg_col,
 * cum_col: a band of GPU_CSR_SEG columns per work-item, each row's
 * band by a cursor; agg_seg's rows and full walks by a row cursor):
 * every aggregate in every direction and every cumulative aggregate
 * over a CSR a equals the device's result over a's dense copy to the
 * bit, with NaN, Inf and stored -0.0 among the entries, over one row,
 * one column, bands cut short (31, 33, 65 and 300 columns) and
 * densities 0, 5% and 30%. */
static void test_colwalk(void)
{
    const int64_t shp[][2] = {{1, 70}, {70, 1}, {33, 65}, {3, 300}, {257, 31}, {40, 33}};
    const double dn[] = {0, 0.05, 0.3};
    const OpCode aggs[] = {OP_SUM, OP_SUMSQ, OP_MEAN, OP_AMIN, OP_AMAX, OP_PROD, OP_VAR, OP_SD, OP_IDXMAX, OP_IDXMIN};
    const OpCode cums[] = {OP_CUMSUM, OP_CUMPROD, OP_CUMMIN, OP_CUMMAX};
    const AggDir dirs[] = {DIR_COL, DIR_ROW, DIR_FULL};
    for (int s = 0; s < 6; s++)
        for (int p = 0; p < 3; p++) {
            int64_t r = shp[s][0], c = shp[s][1];
            BrErr e = {0};
            MB *a = rnd(r, c, dn[p], true, true);
            if (!a->sparse) mb_make_sparse(a, &e);
            for (int64_t k = 0; a->sparse && k < a->nnz; k += 5) a->v[k] = -0.0;
            MB *d = mb_to_dense(a, &e);
            T_CHECK(a->sparse && d && !d->sparse, "colwalk %lldx%lld: a CSR a and its dense copy", (long long)r,
                    (long long)c);
            for (int o = 0; o < 10 && d; o++)
                for (int q = 0; q < 3; q++) {
                    /* (rowIndexMax/Min: rows only; sum, min, max by rows
                     * and in full visit the entries only: agg_row,
                     * agg_part, not walks of every cell) */
                    if ((o >= 8 && dirs[q] != DIR_ROW) || (o < 5 && dirs[q] != DIR_COL)) continue;
                    BrErr g1 = {0}, g2 = {0};
                    char what[48];
                    snprintf(what, sizeof what, "%s %s", op_info[aggs[o]].name, q == 0 ? "cols" : q == 1 ? "rows" : "full");
                    bits_eq(gpu_agg(aggs[o], dirs[q], a, &g1), gpu_agg(aggs[o], dirs[q], d, &g2), what, r, c, dn[p]);
                }
            for (int o = 0; o < 4 && d; o++) {
                BrErr g1 = {0}, g2 = {0};
                bits_eq(gpu_cum(cums[o], a, &g1), gpu_cum(cums[o], d, &g2), op_info[cums[o]].name, r, c, dn[p]);
            }
            mb_release(a), mb_release(d);
        }
}

static void test_agg(void)
{
    const OpCode ops[] = {OP_SUM, OP_SUMSQ, OP_MEAN, OP_AMIN, OP_AMAX};
    agg_sweep(ops, 5);
    /* a long full sum: many work-groups, two stages */
    MB *a = rnd(1000, 1001, 1, false, false);
    BrErr e = {0}, ge = {0};
    double v = 0;
    k_agg_full(OP_SUM, a, &v, &e);
    same(gpu_agg(OP_SUM, DIR_FULL, a, &ge), mb_scalar(v, &e), &ge, 1e-8, "sum", 1000, 1001, 1);
    mb_release(a);
}

/* cells exp(u - 0.5), u uniform: products of thousands stay in range in
 * any order (the CPU multiplies blocks, the device in sequence) */
static MB *rnd_prod(int64_t r, int64_t c, double sp, bool sparse)
{
    MB *m = rnd(r, c, sp, sparse, false);
    MB *d = m->sparse ? NULL : m;
    for (int64_t i = 0; d && i < r * c; i++)
        if (d->d[i] != 0) d->d[i] = (d->d[i] < 0 ? -1 : 1) * exp(urand() - 0.5);
    for (int64_t k = 0; !d && k < m->nnz; k++) m->v[k] = (m->v[k] < 0 ? -1 : 1) * exp(urand() - 0.5);
    return m;
}

/* prod, var, sd in every direction; rowIndexMax/Min (rows; the other
 * directions are the CPU's errors); cumulative aggregates (bit for bit:
 * the same order) */
static void test_agg_more(void)
{
    const OpCode ops[] = {OP_PROD, OP_VAR, OP_SD, OP_IDXMAX, OP_IDXMIN};
    agg_sweep(ops, 5);
    const OpCode cum[] = {OP_CUMSUM, OP_CUMPROD, OP_CUMMIN, OP_CUMMAX};
    for (int s = 0; s < NSHAPES; s++)
        for (int p = 0; p < 3; p++)
            for (int o = 0; o < 4; o++)
                for (int special = 0; special < 2; special++) {
                    int64_t r = shapes[s][0], c = shapes[s][1];
                    MB *a = rnd(r, c, sps[p], sps[p] < 0.4, special);
                    BrErr e = {0}, ge = {0};
                    same(gpu_cum(cum[o], a, &ge), k_cum(cum[o], a, &e), &ge, 0, op_info[cum[o]].name, r, c, sps[p]);
                    mb_release(a);
                }
}

/* ifelse with every broadcast of each operand and scalars; right
 * indexing of ranges at the edges */
static void test_ifelse_slice(void)
{
    for (int s = 1; s < NSHAPES; s++)
        for (int p = 0; p < 3; p++) {
            int64_t r = shapes[s][0], c = shapes[s][1];
            bool sp = sps[p] < 0.4;
            MB *full = rnd(r, c, sps[p], sp, true), *row = rnd(1, c, 0.7, false, false), *col = rnd(r, 1, 0.7, false, false);
            MB *cond = rnd(r, c, 0.5, sp, false);
            const MB *opts[4] = {full, row, col, NULL};
            for (int k = 0; k < 64; k++) {
                const MB *x = k % 4 == 0 ? cond : opts[k % 4], *y = opts[(k / 4) % 4], *z = opts[(k / 16) % 4];
                if (!x && !y && !z) continue;
                BrErr e = {0}, ge = {0};
                same(gpu_ifelse(x, 0.5, y, -2, z, 3, &ge), k_ifelse(x, 0.5, y, -2, z, 3, &e), &ge, 0, "ifelse", r, c,
                     sps[p]);
            }
            const int64_t rg[][4] = {{0, r, 0, c}, {0, 1, 0, 1}, {r - 1, r, 0, c}, {0, r, c - 1, c}, {r / 2, r, c / 3, c}};
            for (int k = 0; k < 5; k++) {
                BrErr e = {0}, ge = {0};
                same(gpu_slice(full, rg[k][0], rg[k][1], rg[k][2], rg[k][3], &ge),
                     k_slice(full, rg[k][0], rg[k][1], rg[k][2], rg[k][3], &e), &ge, 0, "slice", r, c, sps[p]);
                /* left indexing: a source of the range's shape (sparse or
                 * dense), one cell by a scalar, a source of another shape
                 * (both refuse: the CPU reports it) */
                int64_t h = rg[k][1] - rg[k][0], w = rg[k][3] - rg[k][2];
                MB *src = rnd(h, w, sps[p], sp, false), *bad = rnd(h + 1, w, 1, false, false);
                /* the source in the target's format and in the other;
                 * a CSR target or source is read as CSR (lix_rows): one
                 * launch, no dense copy (GpuStats.expand_bytes) */
                MB *src2 = sp ? mb_to_dense(src, &e) : mb_to_sparse(src, &e);
                const MB *srcs[2] = {src, src2};
                for (int f = 0; f < 2; f++) {
                    gpu_stats_reset();
                    MB *gl = gpu_lix(full, rg[k][0], rg[k][1], rg[k][2], rg[k][3], srcs[f], 0, &ge);
                    GpuStats ls = gpu_stats();
                    T_CHECK(!gl || (ls.launches == 1 && ls.expand_bytes == 0),
                            "lix %lldx%lld sp %.2f (source %s): %lld launches, %lld bytes expanded", (long long)r,
                            (long long)c, sps[p], srcs[f]->sparse ? "CSR" : "dense", (long long)ls.launches,
                            (long long)ls.expand_bytes);
                    same(gl, k_lix(full, rg[k][0], rg[k][1], rg[k][2], rg[k][3], srcs[f], &e), &ge, 0, "lix", r, c,
                         sps[p]);
                }
                gpu_stats_reset();
                MB *gs = gpu_lix(full, rg[k][0], rg[k][0] + 1, rg[k][2], rg[k][2] + 1, NULL, -7.5, &ge);
                GpuStats ss = gpu_stats();
                T_CHECK(!gs || (ss.launches == 1 && ss.expand_bytes == 0),
                        "lix scalar %lldx%lld sp %.2f: %lld launches, %lld bytes expanded", (long long)r, (long long)c,
                        sps[p], (long long)ss.launches, (long long)ss.expand_bytes);
                same(gs, k_lix_scalar(full, rg[k][0], rg[k][2], -7.5, &e), &ge, 0, "lix scalar", r, c, sps[p]);
                mb_release(src2);
                T_CHECK(!gpu_lix(full, rg[k][0], rg[k][1], rg[k][2], rg[k][3], bad, 0, &ge) && !ge.code,
                        "lix: a source of another shape is the CPU's to report");
                mb_release(src), mb_release(bad);
            }
            mb_release(full), mb_release(row), mb_release(col), mb_release(cond);
        }
}

static void test_matmul(void)
{
    const int64_t dims[][3] = {{1, 1, 1}, {7, 13, 5}, {33, 65, 1}, {100, 3, 17}, {3, 300, 2}, {129, 31, 67}};
    for (int s = 0; s < 6; s++)
        for (int p = 0; p < 3; p++) {
            int64_t m = dims[s][0], k = dims[s][1], n = dims[s][2];
            bool sp = sps[p] < 0.4;
            MB *a = rnd(m, k, sps[p], sp, false), *b = rnd(k, n, 0.9, false, false), *bs = rnd(k, n, sps[p], sp, false);
            BrErr e = {0}, ge = {0};
            same(gpu_matmul(a, b, &ge), k_matmul(a, b, &e), &ge, 1e-10, "matmul", m, n, sps[p]);
            /* mismatched inner sizes where n != k */
            same(gpu_matmul(b, bs, &ge), k_matmul(b, bs, &e), &ge, 1e-10, "matmul mismatch?", k, n, sps[p]);
            br_err_clear(&e);
            MB *bt = k_transpose(bs, &e);
            same(gpu_matmul(a, bt, &ge), k_matmul(a, bt, &e), &ge, 1e-10, "matmul mismatch?", m, k, sps[p]);
            br_err_clear(&e);
            MB *at = k_transpose(a, &e);
            same(gpu_matmul(at, a, &ge), k_matmul(at, a, &e), &ge, 1e-10, "matmul t(A) A", k, k, sps[p]);
            /* t(A) %*% C without forming t(A); a mismatch where m != k */
            MB *c = rnd(m, n, sps[p], sp, false);
            same(gpu_matmul_tl(a, c, &ge), k_matmul_tl(a, c, &e), &ge, 1e-10, "tmm", k, n, sps[p]);
            br_err_clear(&e);
            same(gpu_matmul_tl(a, b, &ge), k_matmul_tl(a, b, &e), &ge, 1e-10, "tmm mismatch?", k, n, sps[p]);
            br_err_clear(&e);
            mb_release(c);
            same(gpu_tsmm(a, true, &ge), k_tsmm(a, true, &e), &ge, 1e-10, "tsmm left", k, k, sps[p]);
            same(gpu_tsmm(a, false, &ge), k_tsmm(a, false, &e), &ge, 1e-10, "tsmm right", m, m, sps[p]);
            same(gpu_transpose(a, &ge), k_transpose(a, &e), &ge, 0, "transpose", m, k, sps[p]);
            MB *ts = gpu_tsmm(a, true, &ge);
            bool sym = ts != NULL;
            for (int64_t i = 0; ts && i < k; i++)
                for (int64_t j = 0; j < k; j++) sym = sym && mb_get(ts, i, j) == mb_get(ts, j, i);
            T_CHECK(sym, "tsmm is exactly symmetric");
            mb_release(ts);
            mb_release(a), mb_release(b), mb_release(bs), mb_release(bt), mb_release(at);
        }
}

/* IEEE products (docs/DESIGN.md "NaN and Inf", issue 23): a NaN or an
 * infinity meeting a zero gives NaN in every format, as the CPU kernels
 * (k_matmul, k_matmul_tl, k_tsmm) do: a CSR a times a dense b with NaN/Inf
 * must not skip a's zeros. And a product must not depend on what the
 * device memory held before (gemm's beta = 0 must not read C): freed
 * buffers full of NaN come first. */
static void test_matmul_nonfinite(void)
{
    const int64_t dims[][3] = {{7, 13, 5}, {33, 65, 1}, {100, 3, 17}, {129, 31, 67}};
    for (int s = 0; s < 4; s++)
        for (int p = 0; p < 3; p++)
            for (int side = 0; side < 2; side++) {   /* the NaN/Inf in b, or in a */
                int64_t m = dims[s][0], k = dims[s][1], n = dims[s][2];
                bool sp = sps[p] < 0.4;
                MB *a = rnd(m, k, sps[p], sp, side == 1), *b = rnd(k, n, side ? sps[p] : 0.9, false, side == 0);
                MB *c = rnd(m, n, 0.5, false, side == 0);
                BrErr e = {0}, ge = {0};
                /* NaN garbage in memory the driver may hand out again */
                MB *z = mb_dense(m, n > k ? n : k, &e);
                for (int q = 0; q < 3; q++) mb_release(gpu_binary(OP_DIV, z, z, &ge));
                mb_release(z);
                same(gpu_matmul(a, b, &ge), k_matmul(a, b, &e), &ge, 1e-10, "matmul nonfinite", m, n, sps[p]);
                same(gpu_matmul_tl(a, c, &ge), k_matmul_tl(a, c, &e), &ge, 1e-10, "tmm nonfinite", k, n, sps[p]);
                same(gpu_tsmm(a, true, &ge), k_tsmm(a, true, &e), &ge, 1e-10, "tsmm nonfinite", k, k, sps[p]);
                same(gpu_tsmm(a, false, &ge), k_tsmm(a, false, &e), &ge, 1e-10, "tsmm right nonfinite", m, m, sps[p]);
                mb_release(a), mb_release(b), mb_release(c);
            }
}

/* Residency: a result is found on the device by the next operator; a
 * small budget evicts and results stay right. */
static void test_pool(void)
{
    BrErr e = {0}, ge = {0};
    gpu_pool_clear();
    MB *a = rnd(50, 40, 1, false, false);
    gpu_stats_reset();
    MB *b = gpu_unary(OP_EXP, a, &ge);
    MB *c = gpu_binary(OP_PLUS, b, a, &ge);
    GpuStats st = gpu_stats();
    T_CHECK(st.misses == 1 && st.hits == 2, "a result stays on the device: %lld misses, %lld hits",
            (long long)st.misses, (long long)st.hits);
    T_CHECK(st.h2d_bytes == 50 * 40 * 8, "one upload, %lld bytes", (long long)st.h2d_bytes);
    T_CHECK(st.launches == 2, "two launches, %lld", (long long)st.launches);
    /* lazy copy-back: the chain made no transfer to the host; the first
     * host read lands c once (exact nnz, the CPU's values), b stays */
    T_CHECK(st.d2h_bytes == 0 && st.landed == 0, "no copy to the host in a chain: %lld bytes",
            (long long)st.d2h_bytes);
    T_CHECK(b && c && b->dev && c->dev && !c->d, "results are device-only");
    MB *ew = k_unary(OP_EXP, a, &e), *cw = k_binary(OP_PLUS, ew, a, &e);
    mb_release(ew);
    T_CHECK(c && mb_host(c, &ge) == 0 && !c->dev && c->nnz == cw->nnz, "landed with the exact nnz");
    T_MB_EQ(c, cw, 1e-12, "a landed result");
    T_CHECK(mb_host(c, &ge) == 0, "landing twice");
    st = gpu_stats();
    T_CHECK(st.d2h_bytes == 50 * 40 * 8 && st.landed == 1 && b->dev, "one landing, %lld bytes, %lld landed",
            (long long)st.d2h_bytes, (long long)st.landed);
    /* the landed block keeps its device copy: no upload for the next op */
    MB *c2 = gpu_unary(OP_ABS, c, &ge);
    T_CHECK(gpu_stats().h2d_bytes == 50 * 40 * 8, "a landed block stays on the device");
    mb_release(c2);
    /* freed with the value: the pool drops an unlanded result whose last
     * reference is released, at the next operator (which trims b and the
     * released c2, and adds its own result: one block less) */
    double held = gpu_pool_bytes();
    mb_release(b);
    mb_release(gpu_unary(OP_ABS, a, &ge));
    T_CHECK(gpu_pool_bytes() == held - 50 * 40 * 8, "a released device-only result is freed: %.0f of %.0f bytes",
            gpu_pool_bytes(), held);
    mb_release(c), mb_release(cw);
    /* budget of three 16 KB matrices: a chain of ten evicts */
    gpu_configure(GPU_FORCE, -1, 3 * 50 * 40 * 8.0 + 100);
    gpu_stats_reset();
    MB *x = mb_retain(a);
    for (int i = 0; i < 10; i++) {
        MB *y = gpu_binary_ms(OP_MULT, x, 1.5, false, &ge);
        mb_release(x);
        x = y;
    }
    MB *want = mb_retain(a);
    for (int i = 0; i < 10; i++) {
        MB *y = k_binary_ms(OP_MULT, want, 1.5, &e);
        mb_release(want);
        want = y;
    }
    T_MB_EQ(x, want, 1e-12, "a chain under a small budget");
    /* every earlier result is dead once released: trimmed, not evicted;
     * keep them alive to force evictions */
    MB *keep[6];
    for (int i = 0; i < 6; i++) keep[i] = gpu_binary_ms(OP_PLUS, x, i, false, &ge);
    T_CHECK(gpu_stats().evictions > 0, "evictions under the budget: %lld", (long long)gpu_stats().evictions);
    /* evicting a device-only block someone holds copies it to the host */
    T_CHECK(gpu_stats().landed > 0, "evicted device-only blocks landed: %lld", (long long)gpu_stats().landed);
    for (int i = 0; i < 6; i++) {
        MB *w = k_binary_ms(OP_PLUS, want, i, &e);
        MB *g = gpu_binary_ms(OP_MINUS, keep[i], 1, false, &ge);   /* re-uploads an evicted input */
        MB *w2 = k_binary_ms(OP_MINUS, w, 1, &e);
        T_MB_EQ(g, w2, 1e-12, "an evicted block re-uploaded");
        mb_release(w), mb_release(g), mb_release(w2), mb_release(keep[i]);
    }
    gpu_configure(GPU_FORCE, -1, 0);
    mb_release(x), mb_release(want), mb_release(a);
    /* a result examined to sparse on the host keeps its dense device copy:
     * the next operators go by the device format */
    MB *d = rnd(40, 30, 0.05, false, false), *o = rnd(40, 30, 1, false, false);
    MB *r = gpu_unary(OP_ABS, d, &ge);
    T_CHECK(r && r->dev && mb_host(r, &ge) == 0 && r->sparse, "a sparse result of a dense input, once landed");
    MB *rr = k_unary(OP_ABS, d, &e);
    same(gpu_binary(OP_MULT, r, o, &ge), k_binary(OP_MULT, rr, o, &e), &ge, 1e-12, "sparse host, dense device", 40, 30, 0.05);
    same(gpu_binary(OP_MULT, o, r, &ge), k_binary(OP_MULT, o, rr, &e), &ge, 1e-12, "sparse host, dense device", 40, 30, 0.05);
    MB *ot = k_transpose(o, &e);
    same(gpu_matmul(r, ot, &ge), k_matmul(rr, ot, &e), &ge, 1e-12, "sparse host, dense device", 40, 40, 0.05);
    mb_release(ot);
    same(gpu_unary(OP_SQRT, r, &ge), k_unary(OP_SQRT, rr, &e), &ge, 1e-12, "sparse host, dense device", 40, 30, 0.05);
    mb_release(d), mb_release(o), mb_release(r), mb_release(rr);
    gpu_pool_clear();
}

/* The allocator's cache (pool.c): a released result's buffer serves
 * the next result of its size or up to a quarter smaller, with every
 * cell written again (stale contents never show); a CSR result, which
 * shares its input's row pointers and columns, does not hand them to
 * the cache while the input's copy uses them. */
static void test_bufcache(void)
{
    BrErr e = {0}, ge = {0};
    gpu_pool_clear();
    gpu_stats_reset();
    MB *a = rnd(50, 40, 1, false, false), *a2 = rnd(48, 40, 1, false, false);
    mb_release(gpu_unary(OP_EXP, a, &ge));
    /* the next operator trims the dead result first: its buffer is the
     * new result's */
    MB *g = gpu_unary(OP_SIN, a, &ge), *w = k_unary(OP_SIN, a, &e);
    T_CHECK(gpu_stats().buf_reused >= 1, "a released buffer reused: %lld", (long long)gpu_stats().buf_reused);
    T_MB_EQ(g, w, 1e-12, "a result in a reused buffer");
    mb_release(g), mb_release(w);
    int64_t before = gpu_stats().buf_reused;
    g = gpu_unary(OP_COS, a2, &ge), w = k_unary(OP_COS, a2, &e);
    T_CHECK(gpu_stats().buf_reused > before, "a 4%% smaller result takes a cached buffer");
    T_MB_EQ(g, w, 1e-12, "a smaller result in a reused buffer");
    mb_release(g), mb_release(w);
    /* ten times larger: a new buffer */
    MB *big = rnd(500, 40, 1, false, false);
    before = gpu_stats().buf_reused;
    g = gpu_unary(OP_ABS, big, &ge), w = k_unary(OP_ABS, big, &e);
    T_CHECK(gpu_stats().buf_reused == before, "a larger result takes no smaller buffer");
    T_MB_EQ(g, w, 1e-12, "a larger result");
    mb_release(g), mb_release(w), mb_release(big);
    /* CSR: results sharing x's structure come and go; x's copy stays right */
    MB *x = rnd(60, 45, 0.1, true, false);
    for (int i = 0; i < 4; i++) {
        MB *r = gpu_binary_ms(OP_MULT, x, 2.0 + i, false, &ge);
        T_CHECK(r && r->dev, "a CSR result on the device");
        mb_release(r);
    }
    g = gpu_unary(OP_ABS, x, &ge), w = k_unary(OP_ABS, x, &e);
    T_MB_EQ(g, w, 1e-12, "a CSR input after its structure's sharers were freed");
    mb_release(g), mb_release(w), mb_release(x);
    /* more released buffers than the cache keeps (64), of 70 sizes: the
     * oldest go; every later result still right */
    MB *many[70];
    for (int i = 0; i < 70; i++) many[i] = gpu_unary(OP_EXP, a, &ge);
    for (int i = 0; i < 70; i++) mb_release(many[i]);
    for (int i = 0; i < 70; i++) {
        MB *x2 = rnd(10 + i, 7, 1, false, false);
        many[i] = gpu_unary(OP_SQRT, x2, &ge);
        mb_release(x2);
    }
    for (int i = 0; i < 70; i++) mb_release(many[i]);
    g = gpu_unary(OP_TANH, a, &ge), w = k_unary(OP_TANH, a, &e);
    T_MB_EQ(g, w, 1e-12, "a result after the cache overflowed");
    mb_release(g), mb_release(w);
    mb_release(a), mb_release(a2);
    gpu_pool_clear();
}

/* CSR results stay on the device (lazy copy-back, docs/gpu.md): a chain
 * of sparse-preserving operators over a CSR input copies nothing to the
 * host; the first read lands the CSR copy once (row pointers, columns,
 * values: exact bytes), with the explicit zeros that x * 0 left in the
 * structure dropped (the CPU's exact nnz and format); a device-only CSR
 * block feeds the next operators (product, unary) from the device. */
static void test_csr_lazy(void)
{
    BrErr e = {0}, ge = {0};
    const int64_t R = 60, C = 50;
    gpu_pool_clear();
    MB *d = rnd(R, C, 0.08, true, false), *o = rnd(R, C, 0.5, false, false);
    gpu_stats_reset();
    MB *r1 = gpu_unary(OP_ABS, d, &ge);
    MB *r2 = r1 ? gpu_binary(OP_MULT, r1, o, &ge) : NULL;
    MB *r3 = r2 ? gpu_binary_ms(OP_MULT, r2, 3, false, &ge) : NULL;
    GpuStats st = gpu_stats();
    T_CHECK(!ge.code && r3 && r1->dev && r2->dev && r3->dev, "CSR results are device-only: %s", ge.msg);
    T_CHECK(st.d2h_bytes == 0 && st.landed == 0, "a CSR chain copies nothing to the host: %lld bytes",
            (long long)st.d2h_bytes);
    int64_t csr_bytes = (R + 1) * 8 + d->nnz * 12;
    T_CHECK(st.h2d_bytes == csr_bytes + R * C * 8, "uploads: the CSR input and the dense operand, %lld bytes",
            (long long)st.h2d_bytes);
    MB *w1 = k_unary(OP_ABS, d, &e), *w2 = k_binary(OP_MULT, w1, o, &e), *w3 = k_binary_ms(OP_MULT, w2, 3, &e);
    T_CHECK(w2->nnz < d->nnz, "the test needs explicit zeros: %lld of %lld", (long long)w2->nnz, (long long)d->nnz);
    if (r3) {
        T_CHECK(mb_host(r3, &ge) == 0 && !r3->dev && mb_valid(r3, true), "landed: %s", ge.msg);
        st = gpu_stats();
        T_CHECK(st.landed == 1 && st.d2h_bytes == csr_bytes, "one landing of the CSR copy: %lld bytes",
                (long long)st.d2h_bytes);
        T_CHECK(r3->nnz == w3->nnz && r3->sparse == w3->sparse, "landed nnz %lld (%s), the CPU's %lld (%s)",
                (long long)r3->nnz, r3->sparse ? "sparse" : "dense", (long long)w3->nnz, w3->sparse ? "sparse" : "dense");
        T_MB_EQ(r3, w3, 0, "a landed CSR chain");
        /* a device-only CSR block (r2, explicit zeros stored) into a
         * product and a unary operator */
        MB *ot = k_transpose(o, &e);
        same(gpu_matmul(r2, ot, &ge), k_matmul(w2, ot, &e), &ge, 1e-12, "device-only CSR product", R, R, 0.08);
        same(gpu_unary(OP_SQRT, r2, &ge), k_unary(OP_SQRT, w2, &e), &ge, 0, "device-only CSR unary", R, C, 0.08);
        T_CHECK(r2->dev, "r2 still device-only");
        mb_release(ot);
    }
    mb_release(r1), mb_release(r2), mb_release(r3), mb_release(w1), mb_release(w2), mb_release(w3);
    mb_release(d), mb_release(o);
    gpu_pool_clear();
}

/* ---- Operators reading CSR operands in their own launch ---- */

/* The operators of test_csr_direct: name, launches with CSR operands
 * (a full aggregate is two stages), the tolerance against the CPU, and
 * whether it equals the same operator over dense copies to the bit
 * (row and full aggregates visit a CSR input's entries only: another
 * order) */
static const struct { const char *name; int launches; double rtol; bool exact; } dcase[] = {
    {"exp(X)", 1, 1e-10, true}, {"abs(X)", 1, 0, true}, {"X + 1", 1, 0, true}, {"X * 2", 1, 0, true},
    {"X ^ 2", 1, 0, true}, {"X + D", 1, 0, true}, {"X + Y", 1, 0, true}, {"X * Y", 1, 0, true},
    {"X - r", 1, 0, true}, {"c * X", 1, 0, true}, {"X / c", 1, 0, true}, {"c + r", 1, 0, true},
    {"rowSums", 1, 1e-8, false}, {"rowMins", 1, 0, false}, {"rowMaxs", 1, 0, false}, {"rowMeans", 1, 1e-8, false},
    {"colSums", 1, 1e-8, true}, {"colMins", 1, 0, true}, {"colSumsSq", 1, 1e-8, true},
    {"sum", 2, 1e-8, false}, {"min", 2, 0, false}, {"max", 2, 0, false}, {"mean", 2, 1e-8, false},
    {"colVars", 1, 1e-8, true}, {"rowProds", 1, 1e-10, true}, {"sd", 1, 1e-8, true},
    {"rowIndexMax", 1, 0, true}, {"cumsum", 1, 0, true}, {"cummin", 1, 0, true}, {"t(X)", 1, 0, true},
    {"X[slice]", 1, 0, true}, {"ifelse(X, D, 2)", 1, 0, true}, {"ifelse(c, Y, r)", 1, 0, true},
};
#define NDCASE (int)(sizeof dcase / sizeof dcase[0])

/* Case k over x, y (r x c), d (dense r x c), row (1 x c), col (r x 1):
 * on the device (gpu) or by the CPU kernels */
static MB *dcase_run(int k, bool gpu, const MB *x, const MB *y, const MB *d, const MB *row, const MB *col, BrErr *e)
{
    int64_t r = x->rows, c = x->cols;
    double v = 0;
    static const OpCode aggs[] = {OP_SUM, OP_AMIN, OP_AMAX, OP_MEAN};
    switch (k) {
    case 0: return gpu ? gpu_unary(OP_EXP, x, e) : k_unary(OP_EXP, x, e);
    case 1: return gpu ? gpu_unary(OP_ABS, x, e) : k_unary(OP_ABS, x, e);
    case 2: return gpu ? gpu_binary_ms(OP_PLUS, x, 1, false, e) : k_binary_ms(OP_PLUS, x, 1, e);
    case 3: return gpu ? gpu_binary_ms(OP_MULT, x, 2, false, e) : k_binary_ms(OP_MULT, x, 2, e);
    case 4: return gpu ? gpu_binary_ms(OP_POW, x, 2, false, e) : k_binary_ms(OP_POW, x, 2, e);
    case 5: return gpu ? gpu_binary(OP_PLUS, x, d, e) : k_binary(OP_PLUS, x, d, e);
    case 6: return gpu ? gpu_binary(OP_PLUS, x, y, e) : k_binary(OP_PLUS, x, y, e);
    case 7: return gpu ? gpu_binary(OP_MULT, x, y, e) : k_binary(OP_MULT, x, y, e);
    case 8: return gpu ? gpu_binary(OP_MINUS, x, row, e) : k_binary(OP_MINUS, x, row, e);
    case 9: return gpu ? gpu_binary(OP_MULT, col, x, e) : k_binary(OP_MULT, col, x, e);
    case 10: return gpu ? gpu_binary(OP_DIV, x, col, e) : k_binary(OP_DIV, x, col, e);
    case 11: return gpu ? gpu_binary(OP_PLUS, col, row, e) : k_binary(OP_PLUS, col, row, e);
    case 12: case 13: case 14: case 15:
        return gpu ? gpu_agg(aggs[k - 12], DIR_ROW, x, e) : k_agg(aggs[k - 12], DIR_ROW, x, e);
    case 16: return gpu ? gpu_agg(OP_SUM, DIR_COL, x, e) : k_agg(OP_SUM, DIR_COL, x, e);
    case 17: return gpu ? gpu_agg(OP_AMIN, DIR_COL, x, e) : k_agg(OP_AMIN, DIR_COL, x, e);
    case 18: return gpu ? gpu_agg(OP_SUMSQ, DIR_COL, x, e) : k_agg(OP_SUMSQ, DIR_COL, x, e);
    case 19: case 20: case 21: case 22:
        if (gpu) return gpu_agg(aggs[k - 19], DIR_FULL, x, e);
        return k_agg_full(aggs[k - 19], x, &v, e) ? NULL : mb_scalar(v, e);
    case 23: return gpu ? gpu_agg(OP_VAR, DIR_COL, x, e) : k_agg(OP_VAR, DIR_COL, x, e);
    case 24: return gpu ? gpu_agg(OP_PROD, DIR_ROW, x, e) : k_agg(OP_PROD, DIR_ROW, x, e);
    case 25:
        if (gpu) return gpu_agg(OP_SD, DIR_FULL, x, e);
        return k_agg_full(OP_SD, x, &v, e) ? NULL : mb_scalar(v, e);
    case 26: return gpu ? gpu_agg(OP_IDXMAX, DIR_ROW, x, e) : k_agg(OP_IDXMAX, DIR_ROW, x, e);
    case 27: return gpu ? gpu_cum(OP_CUMSUM, x, e) : k_cum(OP_CUMSUM, x, e);
    case 28: return gpu ? gpu_cum(OP_CUMMIN, x, e) : k_cum(OP_CUMMIN, x, e);
    case 29: return gpu ? gpu_transpose(x, e) : k_transpose(x, e);
    case 30: return gpu ? gpu_slice(x, r / 2, r, c / 3, c, e) : k_slice(x, r / 2, r, c / 3, c, e);
    case 31: return gpu ? gpu_ifelse(x, 0, d, 0, NULL, 2, e) : k_ifelse(x, 0, d, 0, NULL, 2, e);
    default: return gpu ? gpu_ifelse(col, 0, y, 0, row, 0, e) : k_ifelse(col, 0, y, 0, row, 0, e);
    }
}

/* A random CSR block (special values when asked), every third row
 * empty when holes */
static MB *rnd_csr(int64_t r, int64_t c, double sp, bool special, bool holes)
{
    BrErr e = {0};
    MB *m = rnd(r, c, sp, false, special);
    for (int64_t i = 0; holes && i < r; i += 3) memset(m->d + i * c, 0, (size_t)c * sizeof(double));
    mb_recount_nnz(m);
    mb_make_sparse(m, &e);
    return m;
}

/* Sparse-unsafe elementwise operators, aggregates, cumulative
 * aggregates, transposes, slices and ifelse read CSR operands in their
 * own kernel: one launch (a full aggregate two), where each CSR operand
 * used to be expanded by a launch of its own first; sparse-safe ones
 * keep the structure. Values against the CPU and (cell by cell
 * operators) the dense operands' run to the bit, over 1 x n, n x 1,
 * all-zero, empty rows and special values. */
static void test_csr_direct(void)
{
    static const int64_t sh[][2] = {{1, 1}, {1, 37}, {41, 1}, {33, 65}, {130, 7}};
    static const double dens[] = {0, 0.02, 0.3, 0.3};
    for (int s = 0; s < 5; s++)
        for (int p = 0; p < 4; p++) {
            int64_t r = sh[s][0], c = sh[s][1];
            bool holes = p == 3, special = s % 2 == 1;
            BrErr e = {0};
            MB *x = rnd_csr(r, c, dens[p], special, holes), *y = rnd_csr(r, c, dens[p], false, false);
            MB *row = rnd_csr(1, c, dens[p] + 0.2, false, false), *col = rnd_csr(r, 1, dens[p] + 0.2, false, holes);
            MB *d = rnd(r, c, 0.7, false, false);
            MB *xd = mb_to_dense(x, &e), *yd = mb_to_dense(y, &e), *rd = mb_to_dense(row, &e), *cd = mb_to_dense(col, &e);
            T_CHECK(x->sparse && y->sparse && row->sparse && col->sparse && !xd->sparse, "CSR operands");
            for (int k = 0; k < NDCASE; k++) {
                BrErr ge = {0}, ce = {0}, de = {0};
                MB *dense = dcase[k].exact ? dcase_run(k, true, xd, yd, d, rd, cd, &de) : NULL;
                gpu_stats_reset();
                MB *got = dcase_run(k, true, x, y, d, row, col, &ge);
                GpuStats st = gpu_stats();
                /* abs over no entries: nothing to launch */
                int want = k == 1 && x->nnz == 0 ? 0 : dcase[k].launches;
                T_CHECK(got && st.launches == want, "%s %lldx%lld sp %.2f%s: %lld launches, want %d (%s)",
                        dcase[k].name, (long long)r, (long long)c, dens[p], holes ? " holes" : "",
                        (long long)st.launches, want, ge.msg);
                if (dense) {
                    T_MB_EQ(got, dense, 0, "%s %lldx%lld sp %.2f%s: CSR and dense operands differ", dcase[k].name,
                            (long long)r, (long long)c, dens[p], holes ? " holes" : "");
                }
                mb_release(dense);
                same(got, dcase_run(k, false, x, y, d, row, col, &ce), &ge, dcase[k].rtol, dcase[k].name, r, c,
                     dens[p]);
            }
            mb_release(x), mb_release(y), mb_release(row), mb_release(col), mb_release(d);
            mb_release(xd), mb_release(yd), mb_release(rd), mb_release(cd);
            gpu_pool_clear();
        }
}

static bool near(double a, double b) { return fabs(a - b) <= 1e-12 * fabs(b); }

/* ---- Products over CSR operands, read as CSR on the device ---- */

/* One product case under the stats: the launches and dense expansion
 * bytes it took, its value against the CPU's */
static void mm_case(const char *what, MB *got, MB *want, BrErr *ge, int launches, int64_t m, int64_t k, int64_t n,
                    double sp, bool special)
{
    GpuStats st = gpu_stats();
    T_CHECK(got && st.launches == launches && st.expand_bytes == 0,
            "%s %lldx%lldx%lld sp %.2f%s: %lld launches (want %d), %lld bytes expanded (want 0) (%s)", what,
            (long long)m, (long long)k, (long long)n, sp, special ? " NaN/Inf" : "", (long long)st.launches,
            launches, (long long)st.expand_bytes, ge->msg);
    same(got, want, ge, 1e-10, what, m, n, sp);
}

/* X %*% B, D %*% X, t(X) %*% B, both tsmm, X %*% Y, t(X) %*% W and
 * t(D) %*% W with X, Y, W CSR run CSR kernels (csr_mm, dense_csr_mm,
 * csr_tmm, tmm_csrb, csr_tsmm_r, csr_csr_mm): no dense copy of a CSR
 * operand on the device (GpuStats.expand_bytes), the launches of the
 * kernels alone (csr_mm's pass over b's NaN/Inf where b is not known
 * finite on the host: NaN/Inf in it, or device-only; csr_row_bad's over
 * a CSR right operand's rows likewise; the partial sums or tsmm's
 * mirror), values against the CPU
 * with IEEE's 0 * NaN/Inf over 1 x n, n x 1, all-zero, empty rows and
 * shapes off the work-group sizes. */
static void test_csr_mm(void)
{
    static const int64_t dims[][3] = {{1, 1, 1}, {1, 37, 3}, {41, 1, 2}, {37, 19, 1}, {130, 7, 5}, {9, 300, 2},
                                      {300, 21, 3}};
    static const double dens[] = {0, 0.02, 0.3, 0.3};
    for (int s = 0; s < 7; s++)
        for (int p = 0; p < 4; p++)
            for (int special = 0; special < 2; special++) {
                int64_t m = dims[s][0], k = dims[s][1], n = dims[s][2];
                bool holes = p == 3;
                BrErr e = {0}, ge = {0};
                MB *x = rnd_csr(m, k, dens[p], special, holes), *b = rnd(k, n, 0.8, false, special);
                MB *c = rnd(m, n, 0.8, false, special), *d = rnd(n, m, 0.8, false, special);
                T_CHECK(x->sparse, "CSR X");
                /* uploads first: the counts below are the product's own */
                mb_release(gpu_transpose(x, &ge)), mb_release(gpu_transpose(b, &ge));
                mb_release(gpu_transpose(c, &ge)), mb_release(gpu_transpose(d, &ge));
                gpu_stats_reset();
                mm_case("X %*% B", gpu_matmul(x, b, &ge), k_matmul(x, b, &e), &ge, 1 + mb_has_nonfinite(b), m, k, n, dens[p], special);
                /* B device-only: its finiteness is not known on the host */
                MB *bd = gpu_binary_ms(OP_MULT, b, 1, false, &ge);
                T_CHECK(bd && bd->dev, "device-only B");
                gpu_stats_reset();
                mm_case("X %*% B device-only", gpu_matmul(x, bd, &ge), k_matmul(x, b, &e), &ge, 2, m, k, n, dens[p],
                        special);
                gpu_stats_reset();
                mm_case("D %*% X", gpu_matmul(d, x, &ge), k_matmul(d, x, &e), &ge, 1, n, m, k, dens[p], special);
                gpu_stats_reset();
                MB *tl = gpu_matmul_tl(x, c, &ge);
                int tlaunch = (int)gpu_stats().launches;
                T_CHECK(tlaunch == 1 || tlaunch == 2, "t(X) %%*%% C: csr_tmm and at most its partial sums (%d)",
                        tlaunch);
                mm_case("t(X) %*% C", tl, k_matmul_tl(x, c, &e), &ge, tlaunch, k, m, n, dens[p], special);
                gpu_stats_reset();
                MB *tsl = gpu_tsmm(x, true, &ge);
                bool sym = tsl != NULL;
                for (int64_t i = 0; tsl && i < k; i++)
                    for (int64_t j = 0; j < k; j++) sym = sym && !memcmp(&(double){mb_get(tsl, i, j)},
                                                                         &(double){mb_get(tsl, j, i)}, 8);
                T_CHECK(sym, "t(X) X exactly symmetric");
                mm_case("t(X) X", tsl, k_tsmm(x, true, &e), &ge, 2 + mb_has_nonfinite(x), k, m, k, dens[p],
                        special);
                gpu_stats_reset();
                mm_case("X t(X)", gpu_tsmm(x, false, &ge), k_tsmm(x, false, &e), &ge, 1, m, k, m, dens[p], special);
                /* both operands CSR: csr_csr_mm and tmm_csrb (Y's row
                 * flags first unless Y is known finite) */
                MB *y = rnd_csr(k, n, dens[(p + 1) % 4], special, false), *w = rnd_csr(m, n, 0.3, special, holes);
                mb_release(gpu_transpose(y, &ge)), mb_release(gpu_transpose(w, &ge));
                gpu_stats_reset();
                mm_case("X %*% Y", gpu_matmul(x, y, &ge), k_matmul(x, y, &e), &ge, 1 + mb_has_nonfinite(y), m, k, n,
                        dens[p], special);
                gpu_stats_reset();
                MB *tw = gpu_matmul_tl(x, w, &ge);
                tlaunch = (int)gpu_stats().launches - mb_has_nonfinite(w);
                T_CHECK(tlaunch == 1 || tlaunch == 2, "t(X) %%*%% W: tmm_csrb and at most its partial sums (%d)",
                        tlaunch);
                mm_case("t(X) %*% W", tw, k_matmul_tl(x, w, &e), &ge, tlaunch + mb_has_nonfinite(w), k, m, n, dens[p],
                        special);
                MB *dc = rnd(m, k, 0.8, false, special);
                mb_release(gpu_transpose(dc, &ge));
                gpu_stats_reset();
                MB *td = gpu_matmul_tl(dc, w, &ge);
                tlaunch = (int)gpu_stats().launches - mb_has_nonfinite(w);
                T_CHECK(tlaunch == 1 || tlaunch == 2, "t(D) %%*%% W: tmm_csrb and at most its partial sums (%d)",
                        tlaunch);
                mm_case("t(D) %*% W", td, k_matmul_tl(dc, w, &e), &ge, tlaunch + mb_has_nonfinite(w), k, m, n,
                        dens[p], special);
                mb_release(y), mb_release(w), mb_release(dc);
                mb_release(x), mb_release(b), mb_release(bd), mb_release(c), mb_release(d);
                gpu_pool_clear();
            }
}

/* gpu_price_mm: the CSR kernels' work is their entries' (and the passes
 * they add), a dense operand's its cells */
static void test_csr_mm_price(void)
{
    MB *x = rnd_csr(400, 60, 0.05, false, false), *xd = rnd(400, 60, 0.5, false, false);
    MB *b = rnd(60, 3, 0.8, false, false), *c = rnd(400, 3, 0.8, false, false), *bn = rnd(60, 3, 0.8, false, true);
    double nz = (double)x->nnz;
    GpuXfer p = {0};
    gpu_price_mm(OP_MATMUL, false, x, b, &p);
    T_CHECK(p.flops == 2 * nz * 3 && p.hscale == 1 && p.out == 400 * 3 * 8, "X %%*%% B: X's entries, %g", p.flops);
    gpu_price_mm(OP_MATMUL, false, x, bn, &p);
    T_CHECK(p.flops == 2 * nz * 3 + 60 * 3 && near(p.flops * p.hscale, 2 * nz * 3),
            "X %%*%% B with NaN/Inf: the pass over B on the device side");
    gpu_price_mm(OP_MATMUL, false, xd, b, &p);
    T_CHECK(p.flops == 2.0 * 400 * 60 * 3 && p.hscale == 1, "dense X %%*%% B: every cell");
    gpu_price_mm(OP_MATMULTL, false, x, c, &p);
    T_CHECK(p.flops == 2 * nz * 3 + 2 * 60 * 3 && near(p.flops * p.hscale, 2 * nz * 3) && p.out == 60 * 3 * 8,
            "t(X) %%*%% C: X's entries and the partial sums");
    MB *y = rnd_csr(60, 3, 0.1, false, false);
    gpu_price_mm(OP_MATMUL, false, x, y, &p);
    T_CHECK(near(p.flops, 2 * nz * (double)y->nnz / 60) && p.hscale == 1, "X %%*%% Y: X's entries times Y's rows");
    mb_release(y);
    gpu_price_mm(OP_TSMM, true, x, NULL, &p);
    T_CHECK(p.flops < 400.0 * 60 * 60 / 4 && near(p.flops * p.hscale, nz * nz / 400) && p.out == 60 * 60 * 8,
            "t(X) X over CSR: far below the dense cells' %g (%g)", 400.0 * 60 * 60, p.flops);
    /* tmm_csrb over a CSR a: two cursors per row's band of GPU_CSR_SEG
     * columns (a step per column each, a binary search per band) */
    double pr = 1 + ceil(log2(nz / 400 + 1));
    T_CHECK(near(p.flops, 400.0 * 60 * 2 * (1 + pr / 32) + nz * nz / 400 + 60.0 * 60),
            "t(X) X over CSR: cursors per band, %g", p.flops);
    gpu_price_mm(OP_TSMM, false, x, NULL, &p);
    T_CHECK(p.flops == 400 * nz + 400.0 * 400 && p.out == 400.0 * 400 * 8, "X t(X) over CSR: a merge per cell");
    gpu_price_mm(OP_TSMM, true, xd, NULL, &p);
    T_CHECK(p.flops == 400.0 * 60 * 60 && p.hscale == 1, "dense t(X) X: every cell");
    mb_release(x), mb_release(xd), mb_release(b), mb_release(c), mb_release(bn);
}

/* gpu_price_*: the work of what runs over a CSR operand (its entries
 * where the kernel visits only those) against a dense one's cells */
static void test_csr_price(void)
{
    MB *x = rnd_csr(200, 50, 0.05, false, false), *d = rnd(200, 50, 0.5, false, false);
    double n = 200.0 * 50, nz = (double)x->nnz, w = op_info[OP_ABS].cost;
    GpuXfer p = {0};
    gpu_price_unary(OP_ABS, x, &p);
    T_CHECK(p.flops == nz * w && p.out == nz * 8 && p.hscale == 1, "abs over CSR: its %g entries, %g flops",
            nz, p.flops);
    gpu_price_unary(OP_EXP, x, &p);
    T_CHECK(p.flops > n * op_info[OP_EXP].cost && near(p.flops * p.hscale, n * op_info[OP_EXP].cost) &&
                p.out == n * 8, "exp over CSR: every cell, the lookups on the device side only");
    /* a cursor per segment of GPU_CSR_SEG cells: a step per cell and
     * one binary search (1 + log2(entries per row + 1) probes) per
     * segment, not per cell */
    gpu_price_unary(OP_EXP, x, &p);
    double probes = 1 + ceil(log2(nz / 200 + 1));
    T_CHECK(near(p.flops, n * (op_info[OP_EXP].cost + 1 + probes / 32)), "exp over CSR: a cursor, %g", p.flops);
    gpu_price_binary(OP_PLUS, x, x, &p);
    T_CHECK(near(p.flops, n * (op_info[OP_PLUS].cost + 2 + 2 * probes / 32)), "X + X over CSR: two cursors, %g",
            p.flops);
    gpu_price_unary(OP_EXP, d, &p);
    T_CHECK(p.flops == n * op_info[OP_EXP].cost && p.hscale == 1, "exp over dense: its cells");
    gpu_price_ms(OP_MULT, x, 3, false, &p);
    T_CHECK(p.flops == nz * op_info[OP_MULT].cost && p.out == nz * 8, "X * 3 over CSR: its entries");
    gpu_price_ms(OP_PLUS, x, 3, false, &p);
    T_CHECK(near(p.flops * p.hscale, n * op_info[OP_PLUS].cost) && p.out == n * 8, "X + 3 over CSR: every cell");
    gpu_price_binary(OP_MULT, x, d, &p);
    T_CHECK(p.flops == nz * op_info[OP_MULT].cost && p.out == nz * 8, "X * D: X's entries");
    gpu_price_binary(OP_PLUS, x, d, &p);
    T_CHECK(near(p.flops * p.hscale, n * op_info[OP_PLUS].cost) && p.out == n * 8, "X + D: every cell");
    gpu_price_agg(OP_SUM, DIR_ROW, x, &p);
    T_CHECK(p.flops == nz + 200 && near(p.flops * p.hscale, nz) && p.out == 200 * 8, "rowSums over CSR: its entries");
    gpu_price_agg(OP_SUM, DIR_FULL, d, &p);
    T_CHECK(p.flops == n && p.out == 8, "sum over dense: its cells");
    /* column walks (agg_col, agg_seg_col, agg_seg's rows): a step per
     * cell and a binary search per band of GPU_CSR_SEG cells of a row */
    gpu_price_agg(OP_SUM, DIR_COL, x, &p);
    T_CHECK(near(p.flops, n * (2 + probes / 32)) && near(p.flops * p.hscale, nz) && p.out == 50 * 8,
            "colSums over CSR: a cursor per band, %g", p.flops);
    gpu_price_agg(OP_PROD, DIR_COL, x, &p);
    T_CHECK(near(p.flops, n * (2 + probes / 32)) && near(p.flops * p.hscale, n), "colProds over CSR: a cursor, %g",
            p.flops);
    gpu_price_agg(OP_VAR, DIR_ROW, x, &p);
    T_CHECK(near(p.flops, n * (2 + probes / 32)), "rowVars over CSR: a cursor, %g", p.flops);
    gpu_price_agg(OP_SUM, DIR_COL, d, &p);
    T_CHECK(p.flops == n && p.hscale == 1, "colSums over dense: its cells");
    mb_release(x), mb_release(d);
}

/* The cost rule (docs/gpu.md) on a discrete device and a CPU device: an
 * input whose cells are on the device alone costs the CPU its download,
 * a host-only input costs the device its upload. No timing enters: the
 * rule is arithmetic over the device's properties. */
static void test_cost_rule(void)
{
    GpuInfo gpu = {.compute_units = 80, .clock_mhz = 1500}, cpu = {.is_cpu = true, .compute_units = 8};
    const GpuProfile nom = {10e-6, 500e9, 12e9, 10e-6, 500e9, 12e9};
    const double mb8 = 8e6;
    /* a small elementwise operator: the launch dominates */
    GpuXfer small = {.out = 8e3, .flops = 1e3};
    T_CHECK(!gpu_cost_rule(&gpu, &nom, 8, &small), "small operator on the host");
    /* the same operator whose input is device-only: the host would first
     * download 8 MB (667 us over PCIe), the device computes in place */
    GpuXfer dev_in = {.down = mb8, .out = 8e3, .flops = 1e3};
    T_CHECK(gpu_cost_rule(&gpu, &nom, 8, &dev_in), "a device-only input keeps the operator on the device");
    /* a host-only input of the same size: the upload costs the device */
    GpuXfer host_in = {.up = mb8, .out = 8e3, .flops = 1e3};
    T_CHECK(!gpu_cost_rule(&gpu, &nom, 8, &host_in), "a host-only input keeps the operator on the host");
    /* heavy compute pays for the upload */
    GpuXfer heavy = {.up = mb8, .out = mb8, .flops = 1e12};
    T_CHECK(gpu_cost_rule(&gpu, &nom, 8, &heavy), "a large product goes to the device");
    /* a CPU device computes on the host's cores: only a landing the host
     * would have to make (larger than a launch) pays */
    T_CHECK(!gpu_cost_rule(&cpu, &nom, 8, &heavy) && !gpu_cost_rule(&cpu, &nom, 8, &small), "CPU device: no gain without landing");
    T_CHECK(gpu_cost_rule(&cpu, &nom, 8, &dev_in), "CPU device: a device-only input stays there");
    GpuXfer tiny_dev = {.down = 48, .out = 48, .flops = 6};
    T_CHECK(!gpu_cost_rule(&cpu, &nom, 8, &tiny_dev), "CPU device: a tiny device-only input lands");
    /* a kernel build the call would start (a generated operator's first
     * device calls, GpuXfer.build: the mean build time over the calls so
     * far): 50 ms outweighs the 0.4 ms the device-only input saves on
     * one call, not its share over 200 calls; 10 s outweighs even the
     * large product's 6 s, 50 ms does not */
    GpuXfer dev_b = dev_in;
    dev_b.build = 0.05;
    T_CHECK(!gpu_cost_rule(&cpu, &nom, 8, &dev_b), "CPU device: a build not amortized keeps the operator on the host");
    dev_b.build = 0.05 / 200;
    T_CHECK(gpu_cost_rule(&cpu, &nom, 8, &dev_b), "CPU device: a build amortized over 200 calls");
    GpuXfer heavy_b = heavy;
    heavy_b.build = 10;
    T_CHECK(!gpu_cost_rule(&gpu, &nom, 8, &heavy_b), "a 10 s build outweighs the product");
    heavy_b.build = 0.05;
    T_CHECK(gpu_cost_rule(&gpu, &nom, 8, &heavy_b), "a 50 ms build does not");
    /* a compressed input (GpuXfer.pre, hscale): the device side first
     * decompresses it on the host; the host runs a Cell operator over
     * the dictionaries (flops scaled by the compression ratio). The
     * large product's 6 s on the host: at ratio 0.01 (62 ms) the host
     * beats the device's 0.26 s; decompressing for 8 ms still pays at
     * ratio 1, for 10 s it does not */
    GpuXfer heavy_c = heavy;
    heavy_c.hscale = 0.01;
    T_CHECK(!gpu_cost_rule(&gpu, &nom, 8, &heavy_c), "a compressed Cell input at ratio 0.01 stays on the host");
    heavy_c.hscale = 1;
    heavy_c.pre = 8e-3;
    T_CHECK(gpu_cost_rule(&gpu, &nom, 8, &heavy_c), "decompressing for 8 ms pays for the product");
    heavy_c.pre = 10;
    T_CHECK(!gpu_cost_rule(&gpu, &nom, 8, &heavy_c), "decompressing for 10 s does not");
    /* before any generated program was built: the 50 ms prior */
    T_CHECK(gpu_build_seconds() > 0, "a build estimate (%g s)", gpu_build_seconds());
}

/* The device profile (gpu/profile.c; docs/gpu.md, "The device
 * profile"), through a probe the test controls: a measurement is used
 * (the per-instruction choice follows it) and written to the device's
 * file; the file is reused (no probe); a corrupt, foreign, older or
 * implausible file is measured again and rewritten; a fixed profile
 * (sysds.gpu.profile) wins over file and probe. Then the device's own
 * probe: plausible values, written, read back. No check depends on a
 * time. */
typedef struct FakeProbe { GpuProfile p; int calls; } FakeProbe;

static bool fake_measure(void *arg, GpuProfile *p)
{
    FakeProbe *f = arg;
    f->calls++;
    *p = f->p;
    return true;
}

static bool prof_eq(GpuProfile a, GpuProfile b, double rtol)
{
    const double x[6] = {a.launch_s, a.bw, a.xfer_bw, a.sync_s, a.copy_bw, a.down_bw};
    const double y[6] = {b.launch_s, b.bw, b.xfer_bw, b.sync_s, b.copy_bw, b.down_bw};
    for (int k = 0; k < 6; k++)
        if (!(fabs(x[k] - y[k]) <= rtol * fabs(y[k]))) return false;
    return true;
}

/* text with the first occurrence of from replaced by to (malloc'd) */
static char *swap_text(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    size_t n = strlen(text) + strlen(to) + 1;
    char *r = malloc(n);
    if (!at) { snprintf(r, n, "%s", text); return r; }
    snprintf(r, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    return r;
}

static void test_profile(void)
{
    char dir[] = "/tmp/braid-gpuprof-XXXXXX", path[1200];
    if (!mkdtemp(dir)) { T_CHECK(false, "mkdtemp"); return; }
    gpu_profile_path(dir, path, sizeof path);
    /* A: slow launches, fast landing (the host lands a device-only
     * input); B: fast launches, slow landing (the device keeps it) */
    const GpuProfile A = {2e-3, 7e11, 3e9, 5e-3, 9e11, 2e10}, B = {2e-8, 2e9, 1e6, 4e-8, 3e9, 1e6};
    const GpuProfile C = {7e-6, 1.5e12, 20e9, 9e-6, 2.5e12, 18e9};
    FakeProbe f = {A, 0};
    GpuProbe probe = {fake_measure, &f, NULL};
    GpuXfer dev_in = {.down = 8e6, .out = 8e3, .flops = 1e3};
    gpu_configure(GPU_ON, -1, 0);
    GpuProfSource src = gpu_profile_calibrate(dir, &probe);
    /* (two probes: the second agrees with the first, a quiet
     * measurement) */
    T_CHECK(src == GPU_PROF_MEASURED && f.calls == 2 && gpu_profile_source() == GPU_PROF_MEASURED,
            "no file: measured (%s, %d probes)", gpu_profile_source_name(src), f.calls);
    T_CHECK(prof_eq(gpu_profile(), A, 0), "the probe's values are the profile");
    T_CHECK(!gpu_worth(&dev_in), "profile A: slow launches, the host lands the input");
    char *good = t_slurp(path, NULL);
    T_CHECK(good && strstr(good, "braid gpu profile\n") == good, "the file is written: %s", good ? good : "(none)");
    /* reused: no probe, the file's values */
    f.p = B;
    src = gpu_profile_calibrate(dir, &probe);
    T_CHECK(src == GPU_PROF_FILE && f.calls == 2 && gpu_profile_source() == GPU_PROF_FILE && prof_eq(gpu_profile(), A, 1e-5),
            "the file is reused (%s, %d probes)", gpu_profile_source_name(src), f.calls);
    /* files not to trust: each is measured again (B) and rewritten */
    char *bad[14] = {0};
    int nb = 0;
    if (good) {
        char *nl = strchr(good + strlen("braid gpu profile\n"), '\n');
        const char *nums = nl ? nl + 1 : "";
        bad[nb++] = strdup("");
        bad[nb++] = strdup("garbage\n");
        bad[nb++] = swap_text(good, nums, "1e-5 5e11\n");                         /* too few values */
        bad[nb++] = swap_text(good, nums, "1e-5 5e11 1e10 1e-5 5e11 1e20 1 1\n");     /* implausible */
        bad[nb++] = swap_text(good, nums, "1e-5 5e11 1e10 1e-5 nan 1e10 1 1\n");      /* not a number */
        bad[nb++] = swap_text(good, nums, "1e-5 5e11 1e10 1e-5 5e11 1e10\n");         /* no rounds */
        bad[nb++] = swap_text(good, nums, "1e-5 5e11 1e10 1e-5 5e11 1e10 0 1\n");     /* rounds 0 */
        bad[nb++] = swap_text(good, nums, "1e-5 5e11 1e10 1e-5 5e11 1e10 1 2\n");     /* final 2 */
        bad[nb++] = swap_text(good, nums, "1e-5 5e11 1e10 1e-5 5e11 1e10 1.5 1\n");   /* rounds 1.5 */
        bad[nb++] = swap_text(good, "probe 2", "probe 1");                       /* an older probe */
        bad[nb++] = swap_text(good, "|", "|other platform ");                    /* a foreign device */
        bad[nb++] = swap_text(good, "braid gpu profile", "braid gpu profil");
        size_t n = strlen(good);
        bad[nb] = malloc(n + 8);
        snprintf(bad[nb++], n + 8, "%.*s 1\n", (int)n - 1, good);               /* a seventh value */
        bad[nb] = malloc(n + 8);
        snprintf(bad[nb], n + 8, "%sextra\n", good);                              /* a fourth line */
        nb++;
    }
    for (int k = 0; k < nb; k++) {
        t_put(path, bad[k]);
        int before = f.calls;
        f.p = k % 2 ? A : B;
        src = gpu_profile_calibrate(dir, &probe);
        T_CHECK(src == GPU_PROF_MEASURED && f.calls == before + 2 && prof_eq(gpu_profile(), f.p, 0),
                "untrusted file %d measured again (%s)", k, gpu_profile_source_name(src));
        char *now = t_slurp(path, NULL);
        T_CHECK(now && good && strstr(now, "braid gpu profile\n") == now && strcmp(now, bad[k]), "file %d rewritten", k);
        free(now);
        free(bad[k]);
    }
    /* the plan follows the profile: B keeps the device-only input there */
    f.p = B;
    t_put(path, "");
    gpu_profile_calibrate(dir, &probe);
    T_CHECK(gpu_worth(&dev_in), "profile B: slow landing, the device keeps the input");
    /* a fixed profile (sysds.gpu.profile) wins: no probe, no file read */
    int before = f.calls;
    gpu_configure_profile(&C);
    src = gpu_profile_calibrate(dir, &probe);
    T_CHECK(src == GPU_PROF_CONFIG && f.calls == before && gpu_profile_source() == GPU_PROF_CONFIG &&
            prof_eq(gpu_profile(), C, 0), "the fixed profile wins (%s)", gpu_profile_source_name(src));
    gpu_configure_profile(NULL);
    T_CHECK(prof_eq(gpu_profile(), B, 0), "unfixed: the device's profile again");
    free(good);
    /* the device's probe */
    src = gpu_profile_calibrate(dir, NULL);
    GpuProfile m = gpu_profile();
    T_CHECK(src == GPU_PROF_FILE && prof_eq(m, B, 1e-5), "a valid file: no probe (%s)", gpu_profile_source_name(src));
    remove(path);
    src = gpu_profile_calibrate(dir, NULL);
    m = gpu_profile();
    T_CHECK(src == GPU_PROF_MEASURED && m.launch_s > 0 && m.sync_s > 0 && m.bw > 1e7 && m.copy_bw > 1e7 &&
            m.xfer_bw > 1e6 && m.down_bw > 1e6, "the device's probe (%s): launch %g s (%g s waited), read %g, "
            "copy %g, up %g, down %g B/s", gpu_profile_source_name(src), m.launch_s, m.sync_s, m.bw, m.copy_bw,
            m.xfer_bw, m.down_bw);
    /* read back; a measurement this (loaded) host took busy is not
     * final: measured again unless the host is crowded, each value
     * the best of both */
    char *txt = t_slurp(path, NULL);
    bool fin = txt && strlen(txt) > 3 && !strcmp(txt + strlen(txt) - 3, " 1\n");
    free(txt);
    src = gpu_profile_calibrate(dir, NULL);
    GpuProfile m2 = gpu_profile();
    T_CHECK((src == GPU_PROF_FILE && prof_eq(m2, m, 1e-5)) ||
            (!fin && src == GPU_PROF_MEASURED && m2.launch_s <= m.launch_s * (1 + 1e-5) && m2.bw >= m.bw * (1 - 1e-5)),
            "the measurement is read back (%s; final %d)", gpu_profile_source_name(src), fin);
    remove(path);
    rmdir(dir);
    gpu_configure(GPU_FORCE, -1, 0);
}

/* A busy host (gpu/profile.c calibrate; gpu.h GpuProbe) through a probe
 * whose measurements and run queue the test sets: probes that disagree
 * are repeated until two agree (the best of each value kept); a
 * measurement on a crowded queue, or whose probes never agree, is used
 * but not final: the next process on a quiet queue measures again and
 * keeps the best of each value, one on a crowded queue uses the file as
 * it is, and GPU_PROBE_ROUNDS rounds make it final; a quiet one is
 * final at once. */
typedef struct SeqProbe { const GpuProfile *seq; int n, calls; bool crowd; } SeqProbe;

static bool seq_measure(void *arg, GpuProfile *p)
{
    SeqProbe *f = arg;
    *p = f->seq[f->calls % f->n];
    f->calls++;
    return true;
}

static bool seq_crowded(void *arg) { return ((SeqProbe *)arg)->crowd; }

/* the file's rounds and final flag (-1: none) */
static void file_state(const char *path, int *rounds, int *final)
{
    char *t = t_slurp(path, NULL);
    *rounds = *final = -1;
    const char *l = t ? strrchr(t, '\n') : NULL;
    while (l && l > t && l[-1] != ' ') l--;
    const char *r = l;
    if (r && r > t) r--;
    while (r && r > t && r[-1] != ' ') r--;
    if (l && r && l > t) *rounds = atoi(r), *final = atoi(l);
    free(t);
}

static void test_profile_busy(void)
{
    char dir[] = "/tmp/braid-gpubusy-XXXXXX", path[1200];
    if (!mkdtemp(dir)) { T_CHECK(false, "mkdtemp"); return; }
    gpu_profile_path(dir, path, sizeof path);
    const GpuProfile A = {1e-5, 4e11, 1e10, 2e-5, 3e11, 1e10};
    GpuProfile slow = A, fast = A;
    slow.launch_s *= 3, slow.bw /= 3;      /* a loaded moment: disagrees with A */
    fast.bw *= 2, fast.down_bw *= 2;       /* a later, quiet host */
    int rounds, final;
    /* disagreeing probes: repeated until two agree; the best of each */
    GpuProfile s1[3] = {A, slow, slow};
    SeqProbe f = {s1, 3, 0, false};
    GpuProbe probe = {seq_measure, &f, seq_crowded};
    GpuProfSource src = gpu_profile_calibrate(dir, &probe);
    file_state(path, &rounds, &final);
    T_CHECK(src == GPU_PROF_MEASURED && f.calls == 3 && prof_eq(gpu_profile(), A, 0) && rounds == 1 && final == 1,
            "disagreeing probes: %d probes (%s), the best of each, final %d", f.calls, gpu_profile_source_name(src),
            final);
    /* never two in a row that agree: used, not final */
    remove(path);
    GpuProfile s2[2] = {slow, A};
    f = (SeqProbe){s2, 2, 0, false};
    src = gpu_profile_calibrate(dir, &probe);
    file_state(path, &rounds, &final);
    T_CHECK(src == GPU_PROF_MEASURED && f.calls == GPU_PROBE_TRIES && prof_eq(gpu_profile(), A, 0) && rounds == 1 &&
            final == 0, "probes that never agree: %d probes, rounds %d, final %d", f.calls, rounds, final);
    /* on a crowded queue: the file as it is, no probe */
    f = (SeqProbe){&fast, 1, 0, true};
    src = gpu_profile_calibrate(dir, &probe);
    T_CHECK(src == GPU_PROF_FILE && f.calls == 0 && prof_eq(gpu_profile(), A, 1e-5),
            "not final, crowded host: the file (%s, %d probes)", gpu_profile_source_name(src), f.calls);
    /* a quiet host: measured again, the best of both, final */
    f.crowd = false;
    src = gpu_profile_calibrate(dir, &probe);
    file_state(path, &rounds, &final);
    T_CHECK(src == GPU_PROF_MEASURED && f.calls == 2 && prof_eq(gpu_profile(), fast, 1e-5) && rounds == 2 &&
            final == 1, "not final, quiet host: measured again (%s, %d probes), rounds %d, final %d",
            gpu_profile_source_name(src), f.calls, rounds, final);
    src = gpu_profile_calibrate(dir, &probe);
    T_CHECK(src == GPU_PROF_FILE && f.calls == 2, "final: the file (%s, %d probes)", gpu_profile_source_name(src),
            f.calls);
    /* a queue crowded during the measurement: not final, however well
     * the probes agree; a loaded host's low values are replaced by a
     * later quiet measurement's (never trusted for good) */
    remove(path);
    GpuProfile low = A;
    low.bw /= 10, low.xfer_bw /= 10;
    f = (SeqProbe){&low, 1, 0, true};
    src = gpu_profile_calibrate(dir, &probe);
    file_state(path, &rounds, &final);
    T_CHECK(src == GPU_PROF_MEASURED && f.calls == 2 && prof_eq(gpu_profile(), low, 0) && rounds == 1 && final == 0,
            "crowded while measuring: used (%s), rounds %d, final %d", gpu_profile_source_name(src), rounds, final);
    f = (SeqProbe){&A, 1, 0, false};
    src = gpu_profile_calibrate(dir, &probe);
    T_CHECK(src == GPU_PROF_MEASURED && prof_eq(gpu_profile(), A, 1e-5), "the quiet measurement replaces the loaded "
            "one (%s, read %g B/s)", gpu_profile_source_name(src), gpu_profile().bw);
    /* busy every time: GPU_PROBE_ROUNDS rounds, then final (no more
     * probes on a host whose measurements always read busy) */
    remove(path);
    f = (SeqProbe){s2, 2, 0, false};
    for (int r = 1; r <= GPU_PROBE_ROUNDS; r++) {
        gpu_profile_calibrate(dir, &probe);
        file_state(path, &rounds, &final);
        T_CHECK(rounds == r && final == (r == GPU_PROBE_ROUNDS), "busy round %d: rounds %d, final %d", r, rounds, final);
    }
    int calls = f.calls;
    src = gpu_profile_calibrate(dir, &probe);
    T_CHECK(src == GPU_PROF_FILE && f.calls == calls, "settled busy: the file (%s)", gpu_profile_source_name(src));
    remove(path);
    rmdir(dir);
}

/* -stats names the profile and its source: sysds.gpu.profile and
 * BRAID_GPU_PROFILE fix it (config); a malformed value is an error of
 * the configuration file (exit status 1). */
static int run_braid(const char *pre, const char *args, char *out, size_t n)
{
    const char *braid = getenv("BRAID");
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s '%s' -s 'print(1)' -gpu -stats %s 2>&1", pre, braid, args);
    FILE *p = popen(cmd, "r");
    size_t k = p ? fread(out, 1, n - 1, p) : 0;
    out[k] = 0;
    int st = p ? pclose(p) : -1;
    return st == -1 ? -1 : WEXITSTATUS(st);
}

static void test_profile_cli(void)
{
    if (!getenv("BRAID")) return;
    char dir[] = "/tmp/braid-gpuprof-XXXXXX", cfg[1200], arg[1300];
    if (!mkdtemp(dir)) { T_CHECK(false, "mkdtemp"); return; }
    snprintf(cfg, sizeof cfg, "%s/c.xml", dir);
    snprintf(arg, sizeof arg, "-config '%s'", cfg);
    static char out[65536];
    t_put(cfg, "<root><sysds.gpu.profile>7e-6 1.5e12 2e10</sysds.gpu.profile></root>\n");
    int rc = run_braid("BRAID_GPU_PROFILE=", arg, out, sizeof out);
    T_CHECK(rc == 0 && strstr(out, "GPU profile (config):\tlaunch 7.00 us (7.00 us with a finish), read 1500.0 GB/s, "
                                   "copy 1500.0 GB/s, to the device 20.00 GB/s, to the host 20.00 GB/s."),
            "sysds.gpu.profile in -stats: %s", out);
    rc = run_braid("BRAID_GPU_PROFILE='3e-6 9e11 1e10 4e-6 8e11 5e9'", "", out, sizeof out);
    T_CHECK(rc == 0 && strstr(out, "GPU profile (config):\tlaunch 3.00 us (4.00 us with a finish), read 900.0 GB/s, "
                                   "copy 800.0 GB/s, to the device 10.00 GB/s, to the host 5.00 GB/s."),
            "BRAID_GPU_PROFILE in -stats: %s", out);
    /* unfixed: the device's (measured, or read from the file) */
    /* (PoCL keeps its kernel cache under XDG_CACHE_HOME too: the
     * user's, so the fixed kernels are not built again) */
    snprintf(arg, sizeof arg, "POCL_CACHE_DIR=\"${POCL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pocl/kcache}\" "
             "BRAID_GPU_PROFILE= XDG_CACHE_HOME='%s'", dir);
    rc = run_braid(arg, "", out, sizeof out);
    T_CHECK(rc == 0 && strstr(out, "GPU profile (measured):"), "a cold cache measures: %s", out);
    /* a measurement that read busy (a loaded host) is written not final
     * and measured again by the next process, up to GPU_PROBE_ROUNDS
     * rounds; after those at the latest the file is used */
    int runs = 1;
    for (; runs <= GPU_PROBE_ROUNDS; runs++) {
        rc = run_braid(arg, "", out, sizeof out);
        if (rc != 0 || !strstr(out, "GPU profile (measured):")) break;
    }
    T_CHECK(rc == 0 && strstr(out, "GPU profile (file):"), "then the file (after %d runs): %s", runs, out);
    t_put(cfg, "<root><sysds.gpu.profile>7e-6 -1 2e10</sysds.gpu.profile></root>\n");
    snprintf(arg, sizeof arg, "-config '%s'", cfg);
    rc = run_braid("", arg, out, sizeof out);
    T_CHECK(rc == 1 && strstr(out, "sysds.gpu.profile"), "a malformed sysds.gpu.profile: %s", out);
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    T_CHECK(system(cmd) == 0, "cleanup");
}

/* -gpu without an OpenCL driver: a clear error and exit status 1 */
static void test_no_device(void)
{
    const char *braid = getenv("BRAID");
    if (!braid) return;
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "OCL_ICD_VENDORS=/nonexistent OCL_ICD_FILENAMES= '%s' -s 'print(1)' -gpu 2>&1", braid);
    FILE *p = popen(cmd, "r");
    char out[512] = {0};
    size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
    int st = p ? pclose(p) : -1;
    out[n] = 0;
    T_CHECK(st != -1 && WEXITSTATUS(st) == 1 && strstr(out, "no OpenCL platform"), "-gpu without a device: %s", out);
}

/* CLA decompression on the device (gpu_cla_decompress; docs/gpu.md,
 * "Compressed inputs"): blocks built group by group over every encoding
 * the kernel takes (EMPTY, CONST, DDC1, DDC2, UNC dense and CSR), with
 * interleaved columns, NaN/Inf/-0 in the dictionaries and row counts
 * that are no multiple of a work-group, against cmb_decompress bit for
 * bit; a DDC block uploads fewer bytes than its dense cells (it is
 * decompressed on the device); a block with an OLE group is refused
 * (the host decompresses it). */
static ClaGroup *cla_grp(ClaEnc enc, int64_t n, const int32_t *cols, int nc, int nd)
{
    ClaGroup *g = cla_group_new(enc, nc, enc == CLA_UNC || enc == CLA_EMPTY ? 0 : nd);
    memcpy(g->cols, cols, (size_t)nc * sizeof *cols);
    static const double sp[] = {NAN, INFINITY, -INFINITY, -0.0};
    for (int k = 0; k < g->ndict * nc; k++) g->dict[k] = k % 11 == 5 ? sp[(k / 11) % 4] : urand() * 4 - 2;
    if (enc == CLA_DDC1 || enc == CLA_DDC2) {
        g->ix = cla_index_new();
        if (enc == CLA_DDC1) g->ix->c1 = malloc((size_t)n);
        else g->ix->c2 = malloc((size_t)n * sizeof(uint16_t));
        for (int64_t i = 0; i < n; i++) {
            int c = (int)(urand() * nd);
            if (enc == CLA_DDC1) g->ix->c1[i] = (uint8_t)c;
            else g->ix->c2[i] = (uint16_t)c;
            g->counts[c]++;
        }
    } else if (enc == CLA_CONST) {
        g->counts[0] = n;
    } else if (enc == CLA_UNC) {
        g->unc = rnd(n, nc, 0.3, nd == 1, true);
    }
    return g;
}

static void test_cla_decompress(void)
{
    static const int64_t rows[] = {1, 7, 257, 1000};
    /* columns 0..8: DDC1 {0, 4, 7}, DDC2 {1, 5}, CONST {2}, UNC {3, 8}
     * (dense, then CSR), EMPTY {6} */
    static const int32_t c1[] = {0, 4, 7}, c2[] = {1, 5}, cc[] = {2}, cu[] = {3, 8}, ce[] = {6};
    for (int r = 0; r < 4; r++)
        for (int v = 0; v < 3; v++) {
            int64_t n = rows[r];
            BrErr e = {0}, ge = {0};
            ClaGroup **gs = calloc(5, sizeof *gs);
            int ng = 0;
            gs[ng++] = cla_grp(CLA_DDC1, n, c1, 3, 200);
            gs[ng++] = cla_grp(CLA_DDC2, n, c2, 2, v == 0 ? 3 : 300);
            gs[ng++] = cla_grp(CLA_CONST, n, cc, 1, 1);
            gs[ng++] = cla_grp(CLA_UNC, n, cu, 2, v == 2);   /* v 2: CSR */
            gs[ng++] = cla_grp(CLA_EMPTY, n, ce, 1, 0);
            MB *x = cmb_new(n, 9, gs, ng, &e);
            T_CHECK(x && x->cmb && gpu_cla_ok(x), "cla %lld/%d: block built", (long long)n, v);
            if (!x) continue;
            gpu_stats_reset();
            int64_t up = gpu_stats().h2d_bytes;
            MB *got = gpu_cla_decompress(x, &ge);
            T_CHECK(got && got->dev, "cla %lld/%d: decompressed on the device (%s)", (long long)n, v, ge.msg);
            GpuStats cs = gpu_stats();
            int64_t sent = cs.h2d_bytes - up;
            /* a launch per group but EMPTY; a CSR UNC block read as CSR
             * (cla_unc_csr): no dense copy first */
            T_CHECK(cs.launches == 4 && cs.expand_bytes == 0, "cla %lld/%d: %lld launches, %lld bytes expanded",
                    (long long)n, v, (long long)cs.launches, (long long)cs.expand_bytes);
            /* dense UNC columns go whole: the DDC/CONST ones as codes */
            T_CHECK(v == 2 || n < 257 || sent < 8 * n * 9, "cla %lld/%d: %lld bytes uploaded for %lld dense",
                    (long long)n, v, (long long)sent, (long long)(8 * n * 9));
            same(got, cmb_decompress(x, &e), &ge, 0, "cla decompress", n, 9, v);
            mb_release(x);
        }
    /* OLE and RLE groups (forced), multi-column (co-coded) and single,
     * 1 to 70000 rows (two OLE segments, RLE gaps and runs over 65535
     * split), zeros, runs, NaN/Inf/-0 in the dictionaries: against
     * cmb_decompress bit for bit */
    static const int64_t lrows[] = {1, 7, 257, 1000, 70000};
    static const double vals[] = {1.5, -2.25, NAN, INFINITY, -0.0, 3};
    for (int r = 0; r < 5; r++)
        for (int enc = CLA_OLE; enc <= CLA_RLE; enc++)
            for (int co = 0; co < 2; co++) {
                int64_t n = lrows[r];
                BrErr e = {0}, ge = {0};
                MB *a = mb_dense(n, 4, &e);
                for (int64_t i = 0; i < n; i++)
                    for (int j = 0; j < 4; j++) {
                        /* OLE: scattered non-zeros; RLE: runs of 37..., a
                         * gap past 65535 rows in column 3 */
                        int64_t b = enc == CLA_OLE ? (i * 7 + j * 3) % 11 : (i / (37 + 5 * j)) % 4;
                        bool zero = enc == CLA_OLE ? b > 4 : (b == 0 || (j == 3 && i < 66000));
                        a->d[i * 4 + j] = zero ? 0 : vals[(b + (co ? 0 : j)) % 6];
                    }
                mb_recount_nnz(a);
                ClaPlanOpts o = cla_plan_defaults();
                o.force = true;
                o.enc = enc;
                o.cocode = co == 1;
                MB *x = cla_compress(a, &o, &e);
                int nl = 0;
                for (int g = 0; x && x->cmb && g < x->cmb->ngroups; g++) nl += (int)x->cmb->groups[g]->enc == enc;
                T_CHECK(x && x->cmb && gpu_cla_ok(x) && (n < 257 || nl > 0), "cla %s %lld/%d: %d groups of it (%s)",
                        cla_enc_name((ClaEnc)enc), (long long)n, co, nl, e.msg);
                if (x && x->cmb) {
                    MB *got = gpu_cla_decompress(x, &ge);
                    T_CHECK(got && got->dev, "cla %s %lld/%d: decompressed on the device (%s)",
                            cla_enc_name((ClaEnc)enc), (long long)n, co, ge.msg);
                    same(got, cmb_decompress(x, &e), &ge, 0, enc == CLA_OLE ? "cla OLE" : "cla RLE", n, 4, co);
                }
                mb_release(x);
                mb_release(a);
            }
    BrErr e = {0}, ge = {0};
    /* compressing a device-only result (a GPU result a loop reads) lands
     * it first (it was sampled through its NULL host array) */
    MB *a = mb_dense(300, 4, &e);
    for (int64_t k = 0; k < 1200; k++) a->d[k] = (double)(k % 5);
    mb_recount_nnz(a);
    MB *d = gpu_unary(OP_ABS, a, &ge);
    ClaPlanOpts o = cla_plan_defaults();
    o.force = true;
    MB *c = d && d->dev ? cla_compress(d, &o, &e) : NULL;
    T_CHECK(c && c->cmb, "cla: a device-only block compressed (%s)", e.msg);
    if (c) same(cmb_decompress(c, &e), k_unary(OP_ABS, a, &e), &ge, 0, "cla of a device result", 300, 4, 1);
    mb_release(c);
    mb_release(d);
    mb_release(a);
}

int main(void)
{
    /* test_profile calibrates: no profile fixed from outside */
    unsetenv("BRAID_GPU_PROFILE");
    gpu_configure(GPU_FORCE, -1, 0);
    BrErr e = {0};
    int rc = gpu_init(&e);
    T_CHECK(rc == 0, "an OpenCL device: %s", e.msg);
    if (rc) return t_done("test_gpu");
    test_unary();
    test_binary();
    test_agg();
    test_agg_more();
    test_ifelse_slice();
    test_matmul();
    test_matmul_nonfinite();
    test_pool();
    test_bufcache();
    test_cost_rule();
    test_profile();
    test_profile_busy();
    test_csr_lazy();
    test_csr_direct();
    test_csr_price();
    test_colwalk();
    test_csr_mm();
    test_csr_mm_price();
    test_cla_decompress();
    test_no_device();
    test_profile_cli();
    return t_done("test_gpu");
}
