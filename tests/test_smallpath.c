/* test_smallpath.c: the small-matrix path (docs/DESIGN.md, "Small-matrix
 * path"):
 *  - ops_tanh (base/ops.h): within 2 ulp of tanhl over a sweep of
 *    magnitudes, right at special values, and the vectorized
 *    kernel (k_unary) equal bit for bit to the scalar semantics, over
 *    every shape, both formats and 1 and 2 threads;
 *  - ops_exp and ops_log: within 1 ulp of expl/logl (and of glibc's exp
 *    and log) over random sweeps of the whole range, near 0 and 1, in
 *    the subnormal range, at powers of two and special values; k_unary
 *    of exp, log and sigmoid equal to the scalar semantics as for tanh;
 *  - the run-time fallbacks of fused operators (codegen/exec.c): t(P) %*%
 *    f(X) with a permutation matrix P (a Row plan that would expand P's
 *    rows densely) and an Outer plan over a small dense driver run the
 *    unfused kernels and give the unfused results; a sparse driver stays
 *    fused;
 *  - X ^ 2 inside fused operators (built as X * X) equals the unfused
 *    plan bit for bit;
 *  - small matrix products give the same bits with 1 and 2 threads
 *    (OpenBLAS runs small calls on the calling thread), large ones agree
 *    within rounding. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "codegen/codegen.h"
#include "kernels/ew.h"
#include "kernels/mm.h"
#include "lang/load.h"
#include "plan/build.h"
#include "runtime/interp.h"
#include "tests/t.h"
#include "tests/t_dml.h"

/* ---- tanh ---- */

/* Distance in units in the last place (same-signed doubles). */
static double ulps(double a, double b)
{
    if (a == b) return 0;
    if (signbit(a) != signbit(b)) return INFINITY;
    int64_t ia, ib;
    memcpy(&ia, &a, sizeof ia);
    memcpy(&ib, &b, sizeof ib);
    return (double)(ia > ib ? ia - ib : ib - ia);
}

/* Equal values (-0 == 0: a kernel may store an all-zero block sparse),
 * or both NaN. */
static bool same_value(double a, double b)
{
    return a == b || (isnan(a) && isnan(b));
}

static void test_tanh_scalar(void)
{
    double worst = 0, at = 0;
    for (int dec = -12; dec <= 2; dec++)
        for (int k = 0; k < 4000; k++) {
            double x = (2 * t_urand() - 1) * pow(10, dec + t_urand());
            double u = ulps(ops_tanh(x), (double)tanhl((long double)x));
            if (u > worst) { worst = u; at = x; }
        }
    T_CHECK(worst <= 2, "tanh: %g ulp from tanhl at %.17g", worst, at);
    static const double sv[] = {0.0, -0.0, 1e-320, -1e-320, 5e-324, 1e-300, 0.5, -0.5, 19.0, 20.0, 21.0,
                                1e300, -1e300, INFINITY, -INFINITY};
    for (size_t i = 0; i < sizeof sv / sizeof *sv; i++) {
        double got = ops_tanh(sv[i]), want = (double)tanhl((long double)sv[i]);
        T_CHECK(ulps(got, want) <= 1 && signbit(got) == signbit(want), "tanh(%g) = %.17g, want %.17g", sv[i],
                got, want);
    }
    T_CHECK(isnan(ops_tanh(NAN)), "tanh(NaN) is not NaN");
    T_CHECK(ops_tanh(1e-10) == 1e-10 && ops_tanh(-3.0) < 0 && fabs(ops_tanh(40)) == 1, "tanh: basic values");
}

/* ---- exp, log ---- */

/* Worst ulp distance of f from the long double reference g (and from
 * glibc's h) over xs[0..n); reports the worst argument. */
static void check_ulps(const char *what, double (*f)(double), long double (*g)(long double), double (*h)(double),
                       const double *xs, int n)
{
    double worst = 0, wg = 0, at = 0, atg = 0;
    for (int k = 0; k < n; k++) {
        double y = f(xs[k]), u = ulps(y, (double)g((long double)xs[k])), v = ulps(y, h(xs[k]));
        if (isnan(y) && isnan(h(xs[k]))) u = v = 0;
        if (u > worst) { worst = u; at = xs[k]; }
        if (v > wg) { wg = v; atg = xs[k]; }
    }
    T_CHECK(worst <= 1, "%s: %g ulp from the long double value at %.17g", what, worst, at);
    T_CHECK(wg <= 1, "%s: %g ulp from glibc at %.17g", what, wg, atg);
}

static double exp_fn(double x) { return ops_exp(x); }
static double log_fn(double x) { return ops_log(x); }

/* A random double with bits uniform over [0, 0x7ff0...): every positive
 * finite double (subnormals included) by binade. */
static double rand_positive(void)
{
    uint64_t b = (uint64_t)(t_urand() * (double)0x7ff0000000000000ULL);
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

static void test_exp_log_scalar(void)
{
    enum { N = 40000 };
    static double xs[N];
    /* exp: the whole range, near 0, results near overflow and subnormal */
    for (int k = 0; k < N; k++) xs[k] = -746 + 1456 * t_urand();
    check_ulps("exp whole range", exp_fn, expl, exp, xs, N);
    for (int k = 0; k < N; k++) xs[k] = (2 * t_urand() - 1) * pow(2, -60 * t_urand());
    check_ulps("exp near 0", exp_fn, expl, exp, xs, N);
    for (int k = 0; k < N; k++) xs[k] = k % 2 ? 700 + 9.8 * t_urand() : -745.2 + 37 * t_urand();
    check_ulps("exp near overflow and subnormal", exp_fn, expl, exp, xs, N);
    for (int k = 0; k < N; k++) xs[k] = (k - N / 2) * 0.0346573590279972654709 + 1e-13 * (2 * t_urand() - 1);
    check_ulps("exp near k ln2 / 2", exp_fn, expl, exp, xs, N);
    /* log: every binade, near 1, subnormals, powers of two */
    for (int k = 0; k < N; k++) xs[k] = rand_positive();
    check_ulps("log positive doubles", log_fn, logl, log, xs, N);
    for (int k = 0; k < N; k++) xs[k] = 1 + (2 * t_urand() - 1) * pow(2, -52 * t_urand());
    check_ulps("log near 1", log_fn, logl, log, xs, N);
    for (int k = 0; k < N; k++) xs[k] = t_urand() * 0x1p-1022;
    check_ulps("log subnormals", log_fn, logl, log, xs, N);
    for (int k = 0; k < N; k++) xs[k] = k % 2 ? 0.70710678118654752 * (1 + 1e-6 * (2 * t_urand() - 1))
                                              : 1.4142135623730950 * (1 + 1e-6 * (2 * t_urand() - 1));
    check_ulps("log near sqrt(1/2), sqrt(2)", log_fn, logl, log, xs, N);
    int np = 0;
    for (int e = -1074; e <= 1023; e++) xs[np++] = ldexp(1.0, e);
    check_ulps("log powers of two", log_fn, logl, log, xs, np);
    /* special values */
    T_CHECK(ops_exp(0) == 1 && ops_exp(-0.0) == 1, "exp(0) != 1");
    T_CHECK(isnan(ops_exp(NAN)) && ops_exp(INFINITY) == INFINITY && ops_exp(-INFINITY) == 0 &&
                !signbit(ops_exp(-INFINITY)), "exp of NaN / inf / -inf");
    T_CHECK(ops_exp(709.79) == INFINITY && ops_exp(1e300) == INFINITY && ops_exp(DBL_MAX) == INFINITY,
            "exp overflow");
    T_CHECK(ops_exp(709.78) < INFINITY && ops_exp(-745.2) == 0 && ops_exp(-1e300) == 0 &&
                ops_exp(-745.1) == 0x1p-1074 && ops_exp(-720) == exp(-720), "exp near the ends of its range");
    T_CHECK(ops_log(1) == 0 && !signbit(ops_log(1)), "log(1) != +0");
    T_CHECK(ops_log(0) == -INFINITY && ops_log(-0.0) == -INFINITY, "log(0) != -inf");
    T_CHECK(isnan(ops_log(-1)) && isnan(ops_log(-1e-310)) && isnan(ops_log(-INFINITY)) && isnan(ops_log(NAN)),
            "log of negative values or NaN is not NaN");
    T_CHECK(ops_log(INFINITY) == INFINITY && ops_log(DBL_MAX) == log(DBL_MAX) &&
                ops_log(0x1p-1074) == log(0x1p-1074), "log of inf / extreme values");
}

/* k_unary(op) equals ops_unary per cell, bit for bit. */
static void test_unary_kernel(OpCode op, const char *name)
{
    static const int64_t shapes[][2] = {{0, 5}, {5, 0}, {1, 1}, {7, 1}, {1, 9}, {300, 17}, {3, 2000}, {257, 100}};
    static const double sps[] = {0, 0.001, 0.1, 1};
    BrErr e = {0};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (size_t q = 0; q < sizeof sps / sizeof *sps; q++)
            for (int fmt = 0; fmt < 2; fmt++) {
                MB *a = t_gen(shapes[s][0], shapes[s][1], sps[q], op == OP_LOG ? 0 : -25, 25, false);
                if (a->rows * a->cols > 0) a->d[0] = a->rows * a->cols > 1 ? NAN : -0.0;
                mb_recount_nnz(a);
                if (fmt == 1 && a->rows * a->cols > 0) mb_make_sparse(a, &e);
                MB *r = k_unary(op, a, &e);
                bool ok = r && r->rows == a->rows && r->cols == a->cols;
                for (int64_t i = 0; ok && i < a->rows; i++)
                    for (int64_t j = 0; ok && j < a->cols; j++)
                        ok = same_value(mb_get(r, i, j), ops_unary(op, mb_get(a, i, j)));
                T_CHECK(ok, "k_unary %s %lldx%lld sp %g %s: differs from ops_unary", name, (long long)a->rows,
                        (long long)a->cols, sps[q], fmt ? "sparse" : "dense");
                mb_release(a);
                mb_release(r);
            }
}

/* src fused (fuse-all) and unfused; results within rtol (0: the same
 * bits). Returns the fused run's statistics. */
static CgStats fused_vs_unfused(const char *what, const char *src, int nin, const char **names, MB **ins,
                                double rtol)
{
    CgOptions off = {.enabled = false};
    CgOptions on = {.enabled = true, .plancache = true, .policy = CG_FUSE_ALL};
    const char *outs[] = {"R"};
    TRun ref, got;
    t_run_dml(src, &off, nin, names, ins, 1, outs, &ref);
    t_run_dml(src, &on, nin, names, ins, 1, outs, &got);
    bool ok = ref.rc == 0 && got.rc == 0 && ref.out[0].kind == V_MATRIX && got.out[0].kind == V_MATRIX;
    T_CHECK(ok, "%s: %s / %s", what, ref.err, got.err);
    if (ok) T_MB_EQ(got.out[0].m, ref.out[0].m, rtol, "%s: fused result differs", what);
    t_run_free(&ref);
    t_run_free(&got);
    return got.st;
}

/* n x n permutation matrix (sparse). */
static MB *perm_matrix(int64_t n)
{
    BrErr e = {0};
    int64_t *p = malloc((size_t)n * sizeof *p);
    for (int64_t i = 0; i < n; i++) p[i] = i;
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)(t_urand() * (double)(i + 1)), t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
    MB *m = mb_sp_new(n, n, n, &e);
    for (int64_t i = 0; i < n; i++) mb_sp_append(m, i, p[i], 1, &e);
    mb_sp_finish(m);
    free(p);
    return m;
}

static void test_fallbacks(void)
{
    const char *nm[] = {"X", "W", "U", "V", "A", "S", "P", "W2", "b1", "b2"};
    int64_t n = 600;
    MB *X = t_gen(n, 30, 1, -1, 1, false), *W = t_gen(20, 30, 1, -1, 1, false);
    MB *U = t_gen(n, 6, 1, -1, 1, false), *V = t_gen(6, 30, 1, -1, 1, false);
    MB *A = t_gen(n, 30, 1, -0.9, 0.9, false), *S = t_gen(n, 30, 0.02, 0.1, 1, true);
    MB *P = perm_matrix(n), *W2 = t_gen(5, 20, 1, -1, 1, false);
    MB *b1 = t_gen(20, 1, 1, -1, 1, false), *b2 = t_gen(5, 1, 1, -1, 1, false);
    MB *ins[] = {X, W, U, V, A, S, P, W2, b1, b2};
    /* t(P) %*% H with a permutation P (the end of autoencoder_2layer):
     * a Row plan would expand P's rows densely; unfused, equal results */
    CgStats st = fused_vs_unfused("t(P) %*% H",
                                  "H = tanh(tanh(X %*% t(W) + t(b1)) %*% t(W2) + t(b2))\nR = t(P) %*% H",
                                  10, nm, ins, 1e-12);
    if (st.fused[1] > 0)
        T_CHECK(st.fallback >= 1, "permutation Row plan: %lld fallbacks", (long long)st.fallback);
    /* Outer plan over a small dense driver: unfused, equal results */
    st = fused_vs_unfused("(U %*% V) * (1 - A^2) dense", "R = (U %*% V) * (1 - A ^ 2)", 10, nm, ins, 1e-12);
    if (st.fused[3] > 0)
        T_CHECK(st.fallback >= 1, "dense Outer plan: %lld fallbacks", (long long)st.fallback);
    /* a sparse driver stays fused */
    st = fused_vs_unfused("S * (U %*% V) sparse", "R = S * (U %*% V)", 10, nm, ins, 1e-12);
    T_CHECK(st.fallback == 0, "sparse Outer plan: %lld fallbacks", (long long)st.fallback);
    /* X ^ 2 in fused operators: the same bits as the unfused plan (Cell),
     * within rounding where a Row plan sums its products differently */
    fused_vs_unfused("tanh(X)^2", "R = (1 - tanh(X + 0.5) ^ 2) * A + X ^ 2.5 + abs(X) ^ 2", 10, nm, ins, 0);
    fused_vs_unfused("row x^2", "R = (X %*% t(W)) * (1 - tanh(X %*% t(W)) ^ 2)", 10, nm, ins, 1e-12);
    for (int k = 0; k < 10; k++) mb_release(ins[k]);
}

/* ---- matrix products: the same bits with 1 and 2 threads ---- */

static void test_mm_threads(void)
{
    static const int64_t dims[][3] = {{256, 100, 100}, {256, 100, 10}, {100, 256, 100}, {2000, 100, 100},
                                      {3, 5, 7}, {1, 100, 50}, {64, 64, 1}};
    BrErr e = {0};
    for (size_t d = 0; d < sizeof dims / sizeof *dims; d++) {
        MB *a = t_gen(dims[d][0], dims[d][1], 1, -1, 1, false), *b = t_gen(dims[d][1], dims[d][2], 1, -1, 1, false);
        MB *at = t_gen(dims[d][1], dims[d][0], 1, -1, 1, false);
        MB *r[2][2];
        for (int t = 0; t < 2; t++) {
            br_set_threads(t + 1);
            r[t][0] = k_matmul(a, b, &e);
            r[t][1] = k_matmul_tl(at, b, &e);
        }
        /* below BLAS_PAR_MIN (kernels/mm.c) OpenBLAS runs single-threaded
         * either way: the same bits; above it its threads split the output
         * (within rounding) */
        double tol = (double)dims[d][0] * (double)dims[d][1] * (double)dims[d][2] < (1 << 23) ? 0 : 1e-12;
        T_MB_EQ(r[0][0], r[1][0], tol, "%lldx%lldx%lld: %%*%% differs between 1 and 2 threads", (long long)dims[d][0],
                (long long)dims[d][1], (long long)dims[d][2]);
        T_MB_EQ(r[0][1], r[1][1], tol, "%lldx%lldx%lld: t(a) %%*%% b differs between 1 and 2 threads",
                (long long)dims[d][0], (long long)dims[d][1], (long long)dims[d][2]);
        for (int t = 0; t < 2; t++) { mb_release(r[t][0]); mb_release(r[t][1]); }
        mb_release(a);
        mb_release(b);
        mb_release(at);
    }
}

int main(void)
{
    t_pin_machine();
    t_seed(0x9E3779B97F4A7C15ULL);
    test_tanh_scalar();
    test_exp_log_scalar();
    for (int th = 1; th <= 2; th++) {
        br_set_threads(th);
        test_unary_kernel(OP_TANH, "tanh");
        test_unary_kernel(OP_EXP, "exp");
        test_unary_kernel(OP_LOG, "log");
        test_unary_kernel(OP_SIGMOID, "sigmoid");
        test_fallbacks();
    }
    test_mm_threads();
    br_set_threads(2);
    return t_done("test_smallpath");
}
