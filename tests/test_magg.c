/* test_magg.c: Cell and MAgg full aggregates computed inside the
 * generated loop (cg_fullagg over flat cells or dense rows, cg_sparseagg
 * over sparse rows; kernels/spoof_cell.c run_full) against a
 * naive reference (loops over mb_get, long double sums) and against the
 * unfused plan under every codegen policy:
 *  - sum, sum of squares, min, max, mean, one output (Cell) and several
 *    outputs over shared inputs (MAgg);
 *  - shapes 0 x n, n x 0, 1 x 1, 1 x n, n x 1, cell counts that are not
 *    multiples of the lane width (32) or of a call's block (2048), several
 *    aggregation super-blocks;
 *  - sparsity 1, 0.1, 0.001, 0 of X, dense and sparse formats (sparse X:
 *    cg_sparseagg for sparse-safe plans, the buffer paths otherwise);
 *  - NaN, +-Inf and -0 among the cells, sums that overflow (the
 *    generated loops add without the infinity check; the skeleton redoes
 *    such super-blocks); min/max of empty matrices;
 *  - results bit-identical with 1 and 2 threads (the specials: checked
 *    in `check` only);
 *  - the generated source of a dense MAgg has the in-loop aggregate.
 * Thread counts 1 and 2. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/t.h"
#include "tests/t_dml.h"

/* codegen off, then every policy of t_pols */
static const TPol off = {"off", {.enabled = false}};
static const TPol *pol(int p) { return p < 0 ? &off : &t_pols[p]; }

/* The outputs of the scripts below and their naive reference: per cell
 * value v(i, j) and aggregate. */
enum { A_SUM, A_SUMSQ, A_MIN, A_MAX, A_MEAN };
typedef struct Out { const char *name; int agg; int expr; } Out;

/* the cell expressions: 0 X*Y, 1 X*Z, 2 X+Y, 3 X*Y*Z, 4 abs(X)-Z, with
 * a row vector v (1 x n) and a column vector c (m x 1): 5 X*v, 6 Y-c,
 * 7 X*v+c, 8 Z-v */
static double cell(int expr, double x, double y, double z, double v, double c)
{
    switch (expr) {
    case 0: return x * y;
    case 1: return x * z;
    case 2: return x + y;
    case 3: return x * y * z;
    case 4: return fabs(x) - z;
    case 5: return x * v;
    case 6: return y - c;
    case 7: return x * v + c;
    default: return z - v;
    }
}

static const char *magg_src = "a = sum(X * Y)\nb = sum(X * Z)\n";
static const Out magg_out[] = {{"a", A_SUM, 0}, {"b", A_SUM, 1}};
static const char *mix_src = "a = sum(X * Y)\nb = min(X * Z)\nc = max(X + Y)\nd = mean(X * Z)\ne = sum((X * Y)^2)\n";
static const Out mix_out[] = {{"a", A_SUM, 0}, {"b", A_MIN, 1}, {"c", A_MAX, 2}, {"d", A_MEAN, 1}, {"e", A_SUMSQ, 0}};
static const char *cell_src = "s = sum(X * Y * Z)\n";
static const Out cell_out[] = {{"s", A_SUM, 3}};
static const char *cell2_src = "m = min(abs(X) - Z)\n";
static const Out cell2_out[] = {{"m", A_MIN, 4}};
static const char *cell3_src = "q = sum((X * Y)^2)\n";
static const Out cell3_out[] = {{"q", A_SUMSQ, 0}};
static const char *cell4_src = "mu = mean(X + Y)\n";
static const Out cell4_out[] = {{"mu", A_MEAN, 2}};
static const char *cell5_src = "M = max(X * Z)\n";
static const Out cell5_out[] = {{"M", A_MAX, 1}};
static const char *cell6_src = "s = sum(abs(X) - Z)\n";
static const Out cell6_out[] = {{"s", A_SUM, 4}};
/* vector inputs: the dense-rows path */
static const char *vec_src = "a = sum(X * v)\nb = sum((Y - c)^2)\nm = min(X * v + c)\nM = max(Z - v)\n";
static const Out vec_out[] = {{"a", A_SUM, 5}, {"b", A_SUMSQ, 6}, {"m", A_MIN, 7}, {"M", A_MAX, 8}};
static const char *vec2_src = "a = sum(X * v)\nb = mean(X * v + c)\n";
static const Out vec2_out[] = {{"a", A_SUM, 5}, {"b", A_MEAN, 7}};
static const char *vec3_src = "s = sum(X * v)\n";
static const Out vec3_out[] = {{"s", A_SUM, 5}};

/* The naive reference of o over X, Y, Z; *mag gets the sum of the
 * absolute terms (the scale of the rounding error of a sum). */
static double reference(const Out *o, const MB *X, const MB *Y, const MB *Z, const MB *V, const MB *C,
                        double *mag)
{
    long double s = 0, m = 0;
    double r = o->agg == A_MIN ? INFINITY : o->agg == A_MAX ? -INFINITY : 0;
    bool nan = false;
    int64_t M = X->rows, N = X->cols;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double v = cell(o->expr, mb_get(X, i, j), mb_get(Y, i, j), mb_get(Z, i, j), mb_get(V, 0, j),
                            mb_get(C, i, 0));
            if (o->agg == A_SUMSQ) v = v * v;
            if (isnan(v)) nan = true;
            if (o->agg == A_MIN) r = v < r ? v : r;
            else if (o->agg == A_MAX) r = v > r ? v : r;
            else { s += v; m += fabsl((long double)v); }
        }
    *mag = (double)m;
    if (nan) return NAN;
    if (o->agg == A_MIN || o->agg == A_MAX) return r;
    double v = (double)s;
    return o->agg == A_MEAN ? v / (double)(M * N) : v;
}

static bool near(double got, double want, double mag, double tol)
{
    if (isnan(want) || isnan(got)) return isnan(want) && isnan(got);
    if (got == want) return true;
    if (isinf(want) || isinf(got)) return false;
    return fabs(got - want) <= tol * fmax(mag, 1e-300);
}

static double out_val(const Value *v)
{
    if (v->kind == V_MATRIX && v->m->rows * v->m->cols == 1) return mb_get(v->m, 0, 0);
    return val_is_numeric(v) ? val_as_double(v) : NAN - 1;
}

/* Runs src (outputs outs) over X, Y, Z under every policy: each output
 * equals the naive reference (1e-12 of the sum of the absolute terms;
 * min/max exactly) and, when two thread counts are asked, the fused
 * results do not depend on them. */
static void check(const char *what, const char *src, const Out *outs, int nout, MB **in, bool threads)
{
    const char *nm[] = {"X", "Y", "Z", "v", "c"};
    MB *X = in[0], *Y = in[1], *Z = in[2], *V = in[3], *C = in[4];
    MB *ins[] = {X, Y, Z, V, C};
    const char *on[8];
    double want[8], mag[8];
    for (int k = 0; k < nout; k++) {
        on[k] = outs[k].name;
        want[k] = reference(&outs[k], X, Y, Z, V, C, &mag[k]);
    }
    for (int p = -1; p < T_NPOL; p++) {
        TRun r;
        t_run_dml(src, &pol(p)->o, 5, nm, ins, nout, on, &r);
        T_CHECK(r.rc == 0, "%s [%s]: %s", what, pol(p)->name, r.err);
        for (int k = 0; k < nout && r.rc == 0; k++) {
            double g = out_val(&r.out[k]);
            T_CHECK(near(g, want[k], mag[k], 1e-12), "%s [%s]: %s = %.17g, reference %.17g", what, pol(p)->name,
                    on[k], g, want[k]);
        }
        if (p >= 0 && p != 3) T_CHECK(r.st.failed == 0, "%s [%s]: compile failed", what, pol(p)->name);
        t_run_free(&r);
    }
    if (!threads) return;
    TRun r1, r2;
    int th = br_threads();
    br_set_threads(1);
    t_run_dml(src, &t_pols[0].o, 5, nm, ins, nout, on, &r1);
    br_set_threads(2);
    t_run_dml(src, &t_pols[0].o, 5, nm, ins, nout, on, &r2);
    br_set_threads(th);
    T_CHECK(r1.rc == 0 && r2.rc == 0, "%s: thread runs: %s %s", what, r1.err, r2.err);
    for (int k = 0; k < nout && r1.rc == 0 && r2.rc == 0; k++) {
        double a = out_val(&r1.out[k]), b = out_val(&r2.out[k]);
        T_CHECK(memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b)), "%s: %s %.17g (1 thread) vs %.17g (2)",
                what, on[k], a, b);
    }
    t_run_free(&r1);
    t_run_free(&r2);
}

/* Puts special values (NaN, +-Inf, -0) into some cells of a dense m, or
 * into some non-zeros of a sparse m (kind: 1 NaN, 2 +Inf, 3 -Inf and
 * +Inf, 4 -0 everywhere a value is set, 5 1.6e308 at cells 0, 64, 128
 * (one lane of the generated loops) and the last: the sum of abs(X)
 * overflows). */
static void specials(MB *m, int kind)
{
    int64_t n = m->sparse ? m->nnz : m->rows * m->cols;
    double *v = m->sparse ? m->v : m->d;
    if (!n) return;
    switch (kind) {
    case 1: v[n / 2] = NAN; break;
    case 2: v[n - 1] = INFINITY; break;
    case 3: v[0] = -INFINITY; v[n - 1] = INFINITY; break;
    case 4: for (int64_t k = 0; k < n; k += 3) v[k] = -0.0; break;
    case 5: for (int64_t k = 0; k < n && k <= 128; k += 64) v[k] = 1.6e308; v[n - 1] = 1.6e308; break;
    default: break;
    }
    if (!m->sparse) mb_recount_nnz(m);
}

/* X (sparsity sp, dense or sparse format), Y, Z dense, v 1 x n, c m x 1
 * into in[0..5); the caller releases them. */
static void gen_inputs(int64_t m, int64_t n, double sp, bool sparse, MB **in)
{
    in[0] = t_gen(m, n, sp, -2, 2, sparse);
    in[1] = t_gen(m, n, 1, -1, 1, false);
    in[2] = t_gen(m, n, 0.8, -1, 1, false);
    in[3] = t_gen(1, n, 1, -1, 1, false);
    in[4] = t_gen(m, 1, 1, -1, 1, false);
}

static void release_inputs(MB **in)
{
    for (int k = 0; k < 5; k++) mb_release(in[k]);
}

static void test_shapes(bool quick)
{
    /* lane width 32, call block 2048 cells, super-blocks of >= 32768
     * cells, parallel from 65536 cells; rows path from 32 columns */
    static const int64_t shapes[][2] = {{0, 5}, {5, 0}, {0, 40}, {1, 1}, {1, 33}, {33, 1}, {37, 3}, {2, 31},
                                        {7, 300}, {9, 32}, {2100, 3}, {1, 4099}, {300, 130}, {1000, 71}};
    static const double sps[] = {1, 0.1, 0.001, 0};
    int ns = (int)(sizeof shapes / sizeof *shapes);
    for (int s = 0; s < ns; s++)
        for (int q = 0; q < 4; q++)
            for (int fmt = 0; fmt < 2; fmt++) {
                if (quick && (q >= 2 || fmt == 1)) continue;
                int64_t m = shapes[s][0], n = shapes[s][1];
                MB *in[5];
                gen_inputs(m, n, sps[q], fmt == 1, in);
                char what[96];
                snprintf(what, sizeof what, "%lldx%lld sp %g %s", (long long)m, (long long)n, sps[q],
                         fmt ? "sparse" : "dense");
                bool th = m * n >= 65536;
                check(what, magg_src, magg_out, 2, in, th);
                check(what, mix_src, mix_out, 5, in, th);
                check(what, cell_src, cell_out, 1, in, th);
                check(what, vec_src, vec_out, 4, in, th);
                check(what, vec3_src, vec3_out, 1, in, th);
                if (q == 0) {
                    check(what, cell2_src, cell2_out, 1, in, false);
                    check(what, cell3_src, cell3_out, 1, in, false);
                    check(what, cell4_src, cell4_out, 1, in, false);
                    check(what, cell5_src, cell5_out, 1, in, false);
                    check(what, vec2_src, vec2_out, 2, in, false);
                }
                release_inputs(in);
            }
}

static void test_specials(void)
{
    static const int64_t shapes[][2] = {{1, 1}, {3, 37}, {41, 50}, {1000, 71}};
    for (int s = 0; s < 4; s++)
        for (int kind = 1; kind <= 5; kind++)
            for (int fmt = 0; fmt < 2; fmt++) {
                int64_t m = shapes[s][0], n = shapes[s][1];
                MB *in[5];
                gen_inputs(m, n, fmt ? 0.1 : 1, fmt == 1, in);
                if (kind == 4) { specials(in[1], kind); specials(in[2], kind); specials(in[3], kind); }
                else { specials(in[0], kind); if (kind == 1) specials(in[4], 2); }
                char what[96];
                snprintf(what, sizeof what, "specials %d %lldx%lld %s", kind, (long long)m, (long long)n,
                         fmt ? "sparse" : "dense");
                bool th = m * n >= 65536;
                check(what, cell6_src, cell6_out, 1, in, th);
                if (kind == 5) {   /* signed sums of such cells may overflow in any order */
                    check(what, cell2_src, cell2_out, 1, in, false);
                    release_inputs(in);
                    continue;
                }
                check(what, magg_src, magg_out, 2, in, th);
                check(what, mix_src, mix_out, 5, in, false);
                check(what, cell2_src, cell2_out, 1, in, false);
                check(what, cell5_src, cell5_out, 1, in, false);
                check(what, vec_src, vec_out, 4, in, th);
                release_inputs(in);
            }
}

/* The -explain codegen text of src over in[] (malloc; caller frees);
 * *nmagg gets the fused MAgg operators. */
static char *explain(const char *src, MB **in, int nout, const char **on, int64_t *nmagg)
{
    const char *nm[] = {"X", "Y", "Z", "v", "c"};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    T_CHECK(f != NULL, "open_memstream");
    if (!f) return NULL;
    CgOptions o = {.enabled = true, .plancache = true, .policy = CG_FUSE_ALL, .explain = f};
    TRun r;
    t_run_dml(src, &o, 5, nm, in, nout, on, &r);
    T_CHECK(r.rc == 0, "explain: %s", r.err);
    *nmagg = r.st.fused[2];
    t_run_free(&r);
    fclose(f);
    return buf;
}

/* The generated sources of MAgg operators have the in-loop aggregates:
 * flat without vector inputs, by rows with them, over sparse rows for
 * sparse-safe plans. */
static void test_generated(void)
{
    MB *in[5];
    gen_inputs(50, 40, 1, false, in);
    const char *on[] = {"a", "b"};
    int64_t nm = 0;
    char *t = explain(magg_src, in, 2, on, &nm);
    T_CHECK(nm == 1, "generated: %lld MAgg operators for sum(X*Y), sum(X*Z)", (long long)nm);
    T_CHECK(t && strstr(t, "void cg_fullagg(") && strstr(t, "(void)S; (void)n;"), "generated: no flat cg_fullagg");
    T_CHECK(t && strstr(t, "void cg_sparseagg("), "generated: no cg_sparseagg for a sparse-safe MAgg");
    free(t);
    t = explain(vec2_src, in, 2, on, &nm);
    T_CHECK(nm == 1, "generated: %lld MAgg operators for sum(X*v), mean(X*v+c)", (long long)nm);
    T_CHECK(t && strstr(t, "void cg_fullagg(") && !strstr(t, "(void)S; (void)n;"),
            "generated: cg_fullagg by rows with vectors");
    free(t);
    release_inputs(in);
}

/* The finiteness flag of a fused Cell operator's matrix output
 * (kernels/spoof_cell.c: run_none_dense checks its cells in the pass
 * that counts them, run_none_sparse the values it keeps, the row and
 * column aggregates' vectors in their recount): set, and true, with
 * and without a NaN or an overflow to Inf in one cell, dense and sparse
 * X (sparse-safe: the sparse path), one row and one column aggregate.
 * Each run must place a fused Cell operator. */
static void test_fin_flag(void)
{
    static const char *const srcs[3] = {"R = X * Y * 2 + X * X\n", "R = rowSums(X * Y * 2 + X * X)\n",
                                        "R = colSums(X * Y * 2 + X * X)\n"};
    const char *nm[] = {"X", "Y"}, *on[] = {"R"};
    for (int sp = 0; sp < 2; sp++)
        for (int bad = 0; bad < 3; bad++)   /* finite, NaN, 1e200 * 1e200 * 2 */
            for (int q = 0; q < 3; q++) {
                MB *X = t_gen(120, 90, sp ? 0.05 : 1, -1, 1, sp), *Y = t_gen(120, 90, 1, -1, 1, false);
                int64_t c = sp ? X->ci[X->nnz - 1] : 90 * 120 - 1, row = sp ? 119 : 119;
                if (sp) {
                    while (X->rp[row] == X->rp[row + 1]) row--;
                    c = X->ci[X->rp[row + 1] - 1];
                }
                if (bad) {
                    double *xv = sp ? &X->v[X->rp[row + 1] - 1] : &X->d[c];
                    *xv = bad == 1 ? NAN : 1e200;
                    Y->d[(sp ? row * 90 + c : c)] = 1e200;
                }
                MB *ins[] = {X, Y};
                TRun r;
                t_run_dml(srcs[q], &t_pols[0].o, 2, nm, ins, 1, on, &r);
                const MB *R = r.rc == 0 && r.out[0].kind == V_MATRIX ? r.out[0].m : NULL;
                bool nf = false;
                for (int64_t i = 0; R && i < (R->sparse ? R->nnz : R->rows * R->cols); i++)
                    nf |= !isfinite(R->sparse ? R->v[i] : R->d[i]);
                T_CHECK(R && r.st.fused[0] >= 1 && R->fin == (bad ? MB_FIN_NONFINITE : MB_FIN_FINITE) && nf == (bad != 0),
                        "fused output flag (%s X, bad %d, %d): rc %d, fused %lld, flag %d, non-finite %d", sp ? "sparse" : "dense",
                        bad, q, r.rc, (long long)r.st.fused[0], R ? R->fin : -1, nf);
                t_run_free(&r);
                mb_release(X);
                mb_release(Y);
            }
}

/* The Row and Outer operators' dense outputs (k_spoof_count_fin, the
 * pass that counts their non-zeros): flagged with the values' answer,
 * finite, NaN, or Inf from 1e200 * 1e200 in one cell. Row: a NO_AGG
 * output (X * Y) %*% V and a column aggregate t(X) %*% ((X * Y) %*% V);
 * Outer: X * (U %*% t(V)) (the values it keeps), and over a sparse X
 * the left product (X * (U %*% t(V))) %*% V and the right product
 * t(X * (U %*% t(V))) %*% U. Each run must place the operator. */
static void test_fin_flag_row_outer(void)
{
    static const struct { const char *src; int tpl; } cs[] = {
        {"R = (X * Y) %*% V\n", 1},
                {"R = t(X) %*% ((X * Y) %*% V)\n", 1},
        {"R = X * (U %*% t(V))\n", 3},
        {"R = (X * (U %*% t(V))) %*% V\n", 3},
        {"R = t(X * (U %*% t(V))) %*% U\n", 3}};
    const char *nm[] = {"X", "Y", "U", "V"}, *on[] = {"R"};
    for (size_t q = 0; q < sizeof cs / sizeof *cs; q++)
        for (int bad = 0; bad < 3; bad++) {   /* finite, NaN, 1e200 * 1e200 */
            bool sp = cs[q].tpl == 3 && q > 2;
            MB *X = t_gen(300, 90, sp ? 0.1 : 1, -1, 1, sp), *Y = t_gen(300, 90, 1, -1, 1, false);
            MB *U = t_gen(300, 8, 1, -1, 1, false), *V = t_gen(90, 8, 1, -1, 1, false);
            /* one stored cell of X: NaN, or 1e200 with a product of 1e400 */
            int64_t r0 = 5, c0 = sp ? X->ci[X->rp[5]] : 7;
            double *x0 = sp ? &X->v[X->rp[5]] : &X->d[5 * 90 + 7];
            if (bad) *x0 = bad == 1 ? NAN : 1e200, Y->d[r0 * 90 + c0] = 1e200;
            if (bad == 2 && cs[q].tpl == 3) U->d[r0 * 8] = 1e200, V->d[c0 * 8] = 1e200;
            MB *ins[] = {X, Y, U, V};
            TRun r;
            t_run_dml(cs[q].src, &t_pols[0].o, 4, nm, ins, 1, on, &r);
            const MB *R = r.rc == 0 && r.out[0].kind == V_MATRIX ? r.out[0].m : NULL;
            bool nf = false;
            for (int64_t i = 0; R && i < (R->sparse ? R->nnz : R->rows * R->cols); i++)
                nf |= !isfinite(R->sparse ? R->v[i] : R->d[i]);
            T_CHECK(R && r.st.fused[cs[q].tpl] >= 1 && R->fin == (nf ? MB_FIN_NONFINITE : MB_FIN_FINITE) &&
                        nf == (bad != 0),
                    "fused output flag (%s, bad %d): rc %d %s, fused %lld, flag %d, non-finite %d", cs[q].src, bad, r.rc,
                    r.err, (long long)r.st.fused[cs[q].tpl], R ? R->fin : -1, nf);
            t_run_free(&r);
            mb_release(X); mb_release(Y); mb_release(U); mb_release(V);
        }
}

int main(void)
{
    t_pin_machine();
    t_seed(20261122);
    test_generated();
    for (int th = 1; th <= 2; th++) {
        br_set_threads(th);
        test_shapes(th == 2);
    }
    br_set_threads(1);
    test_specials();
    test_fin_flag();
    test_fin_flag_row_outer();
    return t_done("test_magg");
}
