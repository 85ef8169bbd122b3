/* test_stats.c: the distributions of kernels/dist.c against a table of R
 * reference values (test_stats_ref.h, written by tests/stats_ref.R: both
 * tails, df = 1 to 1e9, p down to 1e-300), quantile/cdf roundtrips in the
 * regions R's own quantiles get wrong, identities and invalid arguments;
 * and the kernels of kernels/stat2.c (interQuartileMean, interQuantile,
 * roll, countDistinct, cumsumprod, contains) against naive references
 * over mb_get, sweeping shapes, sparsity, formats and thread counts. */
#include "t.h"
#include "kernels/dist.h"
#include "kernels/stat2.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { SF_GAMMA = 100, SF_BETA = 101 };

typedef struct RefRow {
    int kind;
    double p1, p2, x;
    int lower, inv;
    double val;
} RefRow;

#include "test_stats_ref.h"

static bool close_rel(double got, double want, double rtol)
{
    if (isnan(got) || isnan(want)) return isnan(got) && isnan(want);
    if (isinf(got) || isinf(want)) return got == want;
    return fabs(got - want) <= rtol * fmax(fabs(got), fabs(want)) || fabs(got - want) < 1e-320;
}

static const char *kname(int k)
{
    static const char *n[] = {"normal", "t", "f", "chisq", "exp"};
    return k == SF_GAMMA ? "gamma_p" : k == SF_BETA ? "beta_i" : n[k];
}

/* ---- R reference table ---- */

static void test_reference(void)
{
    int n = (int)(sizeof REF_ROWS / sizeof *REF_ROWS);
    double worst = 0;
    for (int i = 0; i < n; i++) {
        const RefRow *r = &REF_ROWS[i];
        double got;
        BrErr e = {0};
        if (r->kind == SF_GAMMA) got = dist_gamma_p(r->p1, r->x, r->lower);
        else if (r->kind == SF_BETA) got = dist_beta_i(r->x, 1 - r->x, r->p1, r->p2, r->lower);
        else {
            Dist d = {(DistKind)r->kind, r->p1, r->p2};
            int rc = r->inv ? dist_icdf(&d, r->x, r->lower, &got, &e) : dist_cdf(&d, r->x, r->lower, &got, &e);
            T_CHECK(rc == 0, "%s(%g, %g) at %g: error %s", kname(r->kind), r->p1, r->p2, r->x, e.msg);
        }
        /* values near the underflow threshold carry fewer bits */
        double tol = fabs(r->val) < 1e-290 ? 1e-10 : 1e-13;
        if (r->inv && (r->kind == DIST_T || r->kind == DIST_F)) {
            /* R's qt and qf are approximate (to about 1e-8 in far tails,
             * 1e-12 in the body): the quantile must agree loosely and
             * reproduce p through the cdf, which matches R to 1e-13 */
            Dist d = {(DistKind)r->kind, r->p1, r->p2};
            double back = NAN;
            BrErr e2 = {0};
            dist_cdf(&d, got, r->lower, &back, &e2);
            T_CHECK(close_rel(back, r->x, 1e-12), "inverse %s(%g, %g) at %.17g lower=%d: cdf of %.17g is %.17g",
                    kname(r->kind), r->p1, r->p2, r->x, r->lower, got, back);
            tol = 1e-8;
        }
        if (tol == 1e-13 && isfinite(got) && isfinite(r->val) && r->val != 0)
            worst = fmax(worst, fabs(got - r->val) / fabs(r->val));
        T_CHECK(close_rel(got, r->val, tol), "%s%s(%g, %g) at %.17g lower=%d: got %.17g, R %.17g",
                r->inv ? "inverse " : "", kname(r->kind), r->p1, r->p2, r->x, r->lower, got, r->val);
    }
    printf("reference: %d rows, worst relative difference to R %.2e (rows checked to 1e-13)\n", n, worst);
}

/* ---- roundtrips: cdf(icdf(p)) = p, in both tails ---- */

static void test_roundtrip(void)
{
    const Dist ds[] = {
        {DIST_NORMAL, 0, 1}, {DIST_NORMAL, -4, 0.5}, {DIST_T, 1, 0}, {DIST_T, 2, 0},
        {DIST_T, 3.5, 0}, {DIST_T, 40, 0}, {DIST_T, 1e6, 0}, {DIST_T, 0.7, 0},
        {DIST_F, 1, 1}, {DIST_F, 2, 4}, {DIST_F, 5, 2}, {DIST_F, 50, 1e5}, {DIST_F, 1e4, 1e4},
        {DIST_F, 0.6, 3}, {DIST_CHISQ, 1, 0}, {DIST_CHISQ, 2, 0}, {DIST_CHISQ, 7, 0},
        {DIST_CHISQ, 1e4, 0}, {DIST_CHISQ, 0.5, 0}, {DIST_EXP, 2, 0},
    };
    const double ps[] = {1e-300, 1e-200, 1e-100, 1e-30, 1e-10, 1e-4, 0.01, 0.1, 0.3, 0.5};
    for (size_t k = 0; k < sizeof ds / sizeof *ds; k++)
        for (size_t j = 0; j < sizeof ps / sizeof *ps; j++)
            for (int lower = 0; lower < 2; lower++) {
                BrErr e = {0};
                double q, back;
                int rc = dist_icdf(&ds[k], ps[j], lower, &q, &e);
                rc = rc || dist_cdf(&ds[k], q, lower, &back, &e);
                T_CHECK(rc == 0, "roundtrip %s: %s", kname(ds[k].kind), e.msg);
                /* skip quantiles outside the double range (then back is 0 or 1) */
                if (q == 0 || isinf(q) || fabs(q) < 1e-300) continue;
                T_CHECK(close_rel(back, ps[j], 1e-11), "roundtrip %s(%g, %g) p=%g lower=%d: q=%.17g cdf=%.17g",
                        kname(ds[k].kind), ds[k].p1, ds[k].p2, ps[j], lower, q, back);
            }
}

/* ---- identities, closed forms, ends of the support ---- */

static double cdf1(DistKind k, double p1, double p2, double x, bool lower)
{
    Dist d = {k, p1, p2};
    double r = NAN;
    BrErr e = {0};
    dist_cdf(&d, x, lower, &r, &e);
    return r;
}

static double icdf1(DistKind k, double p1, double p2, double p, bool lower)
{
    Dist d = {k, p1, p2};
    double r = NAN;
    BrErr e = {0};
    dist_icdf(&d, p, lower, &r, &e);
    return r;
}

static void test_identities(void)
{
    for (double z = -9; z <= 9; z += 0.37) {
        T_CHECK(dist_pnorm(-z, true) == dist_pnorm(z, false), "pnorm symmetry at %g", z);
        T_CHECK(cdf1(DIST_T, 4, 0, -z, true) == cdf1(DIST_T, 4, 0, z, false), "pt symmetry at %g", z);
        /* Cauchy: 1/2 + atan(t)/pi */
        T_CHECK(close_rel(cdf1(DIST_T, 1, 0, z, true), 0.5 + atan(z) / M_PI, 1e-14), "pt df=1 at %g", z);
        /* t with 2 df: 1/2 + t / (2 sqrt(2 + t^2)) */
        T_CHECK(close_rel(cdf1(DIST_T, 2, 0, z, true), 0.5 + z / (2 * sqrt(2 + z * z)), 1e-14), "pt df=2 at %g", z);
    }
    for (double x = 0.01; x < 40; x *= 1.7) {
        /* chi-squared with 2 df is exponential with rate 1/2 */
        T_CHECK(close_rel(cdf1(DIST_CHISQ, 2, 0, x, false), exp(-x / 2), 1e-14), "pchisq df=2 at %g", x);
        T_CHECK(close_rel(cdf1(DIST_EXP, 3, 0, x, false), exp(-3 * x), 1e-15), "pexp at %g", x);
        /* F(2, 2): x / (1 + x) */
        T_CHECK(close_rel(cdf1(DIST_F, 2, 2, x, true), x / (1 + x), 1e-14), "pf(2,2) at %g", x);
        for (double a = 0.3; a < 300; a *= 3.1) {
            double P = dist_gamma_p(a, x, true), Q = dist_gamma_p(a, x, false);
            T_CHECK(fabs(P + Q - 1) < 1e-14, "gamma P+Q at a=%g x=%g", a, x);
        }
    }
    for (double x = 0.05; x < 1; x += 0.1)
        for (double a = 0.4; a < 100; a *= 2.3)
            for (double b = 0.7; b < 100; b *= 2.9) {
                double I = dist_beta_i(x, 1 - x, a, b, true);
                T_CHECK(fabs(I + dist_beta_i(x, 1 - x, a, b, false) - 1) < 1e-14, "beta I + (1-I) at %g %g %g", x, a, b);
                T_CHECK(close_rel(I, dist_beta_i(1 - x, x, b, a, false), 1e-13), "beta symmetry at %g %g %g", x, a, b);
            }
    /* ends of the supports and of the probability range */
    T_CHECK(icdf1(DIST_NORMAL, 0, 1, 0, true) == -INFINITY && icdf1(DIST_NORMAL, 0, 1, 1, true) == INFINITY, "qnorm ends");
    T_CHECK(icdf1(DIST_NORMAL, 0, 1, 0, false) == INFINITY, "qnorm upper end");
    T_CHECK(icdf1(DIST_T, 3, 0, 1, false) == -INFINITY, "qt ends");
    T_CHECK(icdf1(DIST_CHISQ, 3, 0, 0, true) == 0 && icdf1(DIST_CHISQ, 3, 0, 1, true) == INFINITY, "qchisq ends");
    T_CHECK(icdf1(DIST_F, 3, 4, 1, false) == 0 && icdf1(DIST_EXP, 1, 0, 0, false) == INFINITY, "qf/qexp ends");
    T_CHECK(icdf1(DIST_NORMAL, 0, 1, 0.5, true) == 0 && icdf1(DIST_T, 7, 0, 0.5, false) == 0, "median 0");
    T_CHECK(cdf1(DIST_T, 5, 0, -INFINITY, true) == 0 && cdf1(DIST_T, 5, 0, INFINITY, false) == 0, "pt at infinity");
    T_CHECK(cdf1(DIST_F, 5, 3, -1, true) == 0 && cdf1(DIST_CHISQ, 5, 0, -2, false) == 1, "negative x");
    T_CHECK(cdf1(DIST_EXP, 2, 0, -1, true) == 0, "pexp below 0");
    T_CHECK(cdf1(DIST_T, INFINITY, 0, 1.3, true) == dist_pnorm(1.3, true), "t with infinite df");
    T_CHECK(isnan(cdf1(DIST_NORMAL, 0, 1, NAN, true)) && isnan(icdf1(DIST_CHISQ, 2, 0, NAN, true)), "NaN in, NaN out");
    /* extreme tails stay accurate (not 1 - cdf) */
    T_CHECK(close_rel(cdf1(DIST_NORMAL, 0, 1, 30, false), 4.906713927148187e-198, 1e-13), "normal upper tail at 30");
    T_CHECK(cdf1(DIST_NORMAL, 0, 1, 40, false) == 0 && cdf1(DIST_NORMAL, 0, 1, 40, true) == 1, "beyond underflow");
    T_CHECK(close_rel(icdf1(DIST_T, 1, 0, 1e-300, true), -1 / tan(M_PI * 1e-300), 1e-14), "qt df=1 far tail");
    /* the quantile of t with df 0.5 beyond 1e154 (s^2 overflows) */
    double q = icdf1(DIST_T, 0.5, 0, 1e-100, true);
    T_CHECK(close_rel(cdf1(DIST_T, 0.5, 0, q, true), 1e-100, 1e-11) && q < -1e198, "qt df=0.5 p=1e-100: %g", q);
    /* quantiles beyond the double range: 0 and Inf */
    T_CHECK(icdf1(DIST_F, 1, 4, 1e-200, true) == 0, "qf below the subnormals: %g", icdf1(DIST_F, 1, 4, 1e-200, true));
    T_CHECK(icdf1(DIST_CHISQ, 0.5, 0, 1e-100, true) == 0, "qchisq below the subnormals");
    T_CHECK(icdf1(DIST_F, 2, 1, 1e-200, false) == INFINITY && icdf1(DIST_F, 50, 1, 1e-300, false) == INFINITY,
            "qf beyond DBL_MAX");
    T_CHECK(close_rel(icdf1(DIST_F, 2, 4, 1e-300, true), 1e-300, 1e-12), "qf(2, 4) tiny p: %g",
            icdf1(DIST_F, 2, 4, 1e-300, true));
    /* names */
    T_CHECK(dist_kind("normal") == DIST_NORMAL && dist_kind("T") == DIST_T && dist_kind("F") == DIST_F &&
            dist_kind("ChiSq") == DIST_CHISQ && dist_kind("exp") == DIST_EXP, "dist_kind");
    T_CHECK(dist_kind("gamma") == -1 && dist_kind("") == -1, "dist_kind unknown");
}

/* ---- invalid arguments ---- */

static void bad(DistKind k, double p1, double p2, double x, bool inv, const char *word)
{
    Dist d = {k, p1, p2};
    double r = 0;
    BrErr e = {0};
    int rc = inv ? dist_icdf(&d, x, true, &r, &e) : dist_cdf(&d, x, true, &r, &e);
    T_CHECK(rc == BR_EARG && strstr(e.msg, word), "%s(%g, %g) at %g should fail with '%s', got rc %d '%s'",
            kname(k), p1, p2, x, word, rc, e.msg);
}

static void test_errors(void)
{
    bad(DIST_NORMAL, 0, 0, 1, false, "standard deviation");
    bad(DIST_NORMAL, 0, -1, 1, true, "standard deviation");
    bad(DIST_NORMAL, 0, NAN, 1, false, "standard deviation");
    bad(DIST_T, 0, 0, 1, false, "degrees of freedom");
    bad(DIST_T, -2, 0, 0.5, true, "degrees of freedom");
    bad(DIST_F, 3, 0, 1, false, "degrees of freedom");
    bad(DIST_F, INFINITY, 3, 1, false, "degrees of freedom");
    bad(DIST_CHISQ, 0, 0, 1, true, "degrees of freedom");
    bad(DIST_CHISQ, INFINITY, 0, 1, false, "degrees of freedom");
    bad(DIST_EXP, 0, 0, 1, false, "rate");
    bad(DIST_EXP, -3, 0, 0.5, true, "rate");
    bad(DIST_NORMAL, 0, 1, -0.1, true, "probability");
    bad(DIST_CHISQ, 3, 0, 1.5, true, "probability");
    bad(DIST_T, 3, 0, -INFINITY, true, "probability");
    T_CHECK(isnan(dist_gamma_p(-1, 2, true)) && isnan(dist_beta_i(0.5, 0.5, 0, 1, true)), "special functions: bad a");
}

/* ---- stat2 kernels ---- */

static unsigned t_seed = 11;
static double urand(void)
{
    t_seed = t_seed * 1103515245u + 12345u;
    return (double)((t_seed >> 8) & 0xFFFFFF) / (double)0x1000000;
}

/* r x c with about sp non-zeros from a small value set (duplicates),
 * occasionally NaN or -0 when special. */
static MB *rnd(int64_t r, int64_t c, double sp, bool sparse, bool special)
{
    BrErr e = {0};
    MB *m = mb_dense(r, c, &e);
    for (int64_t i = 0; i < r * c; i++) {
        if (urand() >= sp) { if (special && urand() < 0.05) m->d[i] = -0.0; continue; }
        double v = floor(urand() * 9) - 4;
        if (v == 0) v = 5;
        if (special && urand() < 0.05) v = NAN;
        m->d[i] = v + (urand() < 0.3 ? 0.5 : 0);
    }
    mb_recount_nnz(m);
    if (sparse) mb_make_sparse(m, &e);
    return m;
}

static int cmp_nan_last(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    if (isnan(a) || isnan(b)) return isnan(a) - isnan(b);
    return (a > b) - (a < b);
}

/* naive distinct count of v[0..n) by pairwise comparison */
static int64_t naive_distinct(const double *v, int64_t n)
{
    int64_t cnt = 0;
    for (int64_t i = 0; i < n; i++) {
        bool seen = false;
        for (int64_t j = 0; j < i && !seen; j++)
            seen = v[i] == v[j] || (isnan(v[i]) && isnan(v[j]));
        cnt += !seen;
    }
    return cnt;
}

static void test_count_distinct(void)
{
    const int64_t shapes[][2] = {{0, 3}, {3, 0}, {1, 1}, {17, 1}, {1, 17}, {40, 7}, {7, 40}, {300, 260}};
    const double sps[] = {0, 0.001, 0.1, 1};
    for (int th = 1; th <= 2; th++) {
        br_set_threads(th);
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
            for (size_t q = 0; q < 4; q++)
                for (int sp = 0; sp < 2; sp++) {
                    int64_t r = shapes[s][0], c = shapes[s][1];
                    MB *x = rnd(r, c, sps[q], sp, true);
                    BrErr e = {0};
                    double *v = malloc((size_t)(r * c + 1) * sizeof(double));
                    for (int64_t i = 0; i < r * c; i++) v[i] = mb_get(x, i / c, i % c);
                    int64_t got = -1;
                    T_CHECK(k_count_distinct(x, &got, &e) == 0, "countDistinct: %s", e.msg);
                    if (r * c <= 2000)
                        T_CHECK(got == naive_distinct(v, r * c), "countDistinct %lldx%lld sp=%g: %lld vs %lld",
                                (long long)r, (long long)c, sps[q], (long long)got, (long long)naive_distinct(v, r * c));
                    for (int dir = 0; dir < 2; dir++) {
                        MB *o = k_count_distinct_dir(x, dir == 0, &e);
                        T_CHECK(o && o->rows == (dir == 0 ? r : 1) && o->cols == (dir == 0 ? 1 : c),
                                "countDistinct dir shape %lldx%lld", (long long)r, (long long)c);
                        if (!o) continue;
                        bool ok = true;
                        int64_t len = dir == 0 ? c : r;
                        double *b = malloc((size_t)(len + 1) * sizeof(double));
                        for (int64_t k = 0; k < (dir == 0 ? r : c) && ok; k++) {
                            for (int64_t j = 0; j < len; j++) b[j] = dir == 0 ? v[k * c + j] : v[j * c + k];
                            ok = mb_get(o, dir == 0 ? k : 0, dir == 0 ? 0 : k) == (double)naive_distinct(b, len);
                        }
                        free(b);
                        T_CHECK(ok, "countDistinct %s %lldx%lld sp=%g sparse=%d threads=%d", dir == 0 ? "rows" : "cols",
                                (long long)r, (long long)c, sps[q], sp, th);
                        mb_release(o);
                    }
                    free(v);
                    mb_release(x);
                }
    }
    br_set_threads(0);
}

static void test_roll(void)
{
    const int64_t shapes[][2] = {{0, 3}, {3, 0}, {1, 1}, {9, 1}, {1, 9}, {40, 7}, {7, 40}, {300, 260}};
    const double sps[] = {0, 0.001, 0.1, 1};
    const int64_t shifts[] = {0, 1, -1, 3, 7, 600, -601};
    for (int th = 1; th <= 2; th++) {
        br_set_threads(th);
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
            for (size_t q = 0; q < 4; q++)
                for (int sp = 0; sp < 2; sp++)
                    for (size_t k = 0; k < sizeof shifts / sizeof *shifts; k++) {
                        int64_t r = shapes[s][0], c = shapes[s][1], sh = shifts[k];
                        MB *x = rnd(r, c, sps[q], sp, false);
                        BrErr e = {0};
                        MB *o = k_roll(x, sh, &e);
                        bool ok = o && o->rows == r && o->cols == c && o->nnz == x->nnz && o->sparse == x->sparse;
                        for (int64_t i = 0; ok && i < r; i++) {
                            int64_t src = ((i - sh) % r + r) % r;
                            for (int64_t j = 0; ok && j < c; j++) ok = mb_get(o, i, j) == mb_get(x, src, j);
                        }
                        T_CHECK(ok, "roll %lldx%lld sp=%g sparse=%d shift=%lld threads=%d", (long long)r,
                                (long long)c, sps[q], sp, (long long)sh, th);
                        mb_release(o);
                        mb_release(x);
                    }
    }
    br_set_threads(0);
}

/* cumsumprod against y_i = a_i + b_i y_(i-1) over mb_get: shapes, sparsity,
 * formats, thread counts (the kernel is sequential; results must not
 * change), the carry idiom (b in {0, 1}) and a wrong column count. */
static void test_cumsumprod(void)
{
    const int64_t rows[] = {0, 1, 2, 9, 300, 2000};
    const double sps[] = {0, 0.001, 0.1, 1};
    for (int th = 1; th <= 2; th++) {
        br_set_threads(th);
        for (size_t s = 0; s < sizeof rows / sizeof *rows; s++)
            for (size_t q = 0; q < 4; q++)
                for (int sp = 0; sp < 2; sp++)
                    for (int carry = 0; carry < 2; carry++) {
                        int64_t n = rows[s];
                        MB *x = rnd(n, 2, sps[q], false, false);
                        BrErr e = {0};
                        if (carry)   /* b in {0, 1}: fill forward */
                            for (int64_t i = 0; i < n; i++) x->d[2 * i + 1] = x->d[2 * i + 1] != 0;
                        mb_recount_nnz(x);
                        if (sp) mb_make_sparse(x, &e);
                        MB *o = k_cumsumprod(x, &e);
                        bool ok = o && o->rows == n && o->cols == 1;
                        double y = 0;
                        int64_t nnz = 0;
                        for (int64_t i = 0; ok && i < n; i++) {
                            y = mb_get(x, i, 0) + mb_get(x, i, 1) * y;
                            ok = mb_get(o, i, 0) == y;
                            nnz += y != 0;
                        }
                        ok = ok && o->nnz == nnz;
                        T_CHECK(ok, "cumsumprod %lldx2 sp=%g sparse=%d carry=%d threads=%d: %s", (long long)n,
                                sps[q], sp, carry, th, e.msg);
                        mb_release(o);
                        mb_release(x);
                    }
    }
    br_set_threads(0);
    BrErr e = {0};
    MB *x = rnd(4, 3, 1, false, false);
    T_CHECK(!k_cumsumprod(x, &e) && strstr(e.msg, "dimension"), "cumsumprod 3 columns: %s", e.msg);
    mb_release(x);
}

/* contains against a scan over mb_get: values present, absent, 0 (implicit
 * in sparse blocks), NaN; row patterns copied from a row or altered;
 * shapes, sparsity, formats, thread counts; a pattern of the wrong width. */
static void test_contains(void)
{
    const int64_t shapes[][2] = {{0, 3}, {3, 0}, {1, 1}, {9, 1}, {1, 9}, {40, 7}, {300, 260}};
    const double sps[] = {0, 0.001, 0.1, 1};
    for (int th = 1; th <= 2; th++) {
        br_set_threads(th);
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
            for (size_t q = 0; q < 4; q++)
                for (int sp = 0; sp < 2; sp++) {
                    int64_t r = shapes[s][0], c = shapes[s][1];
                    MB *x = rnd(r, c, sps[q], sp, true);
                    const double probes[] = {0, 5, 1.5, -4, 7, NAN};
                    for (size_t k = 0; k < sizeof probes / sizeof *probes; k++) {
                        bool want = false, got = true;
                        for (int64_t i = 0; i < r; i++)
                            for (int64_t j = 0; j < c; j++) {
                                double v = mb_get(x, i, j);
                                want = want || v == probes[k] || (isnan(v) && isnan(probes[k]));
                            }
                        BrErr e = {0};
                        T_CHECK(k_contains(x, NULL, probes[k], &got, &e) == 0 && got == want,
                                "contains %lldx%lld sp=%g sparse=%d value %g threads=%d", (long long)r, (long long)c,
                                sps[q], sp, probes[k], th);
                    }
                    for (int alter = 0; alter < 2 && r > 0 && c > 0; alter++) {
                        BrErr e = {0};
                        MB *p = mb_dense(1, c, &e);
                        int64_t src = r / 2;
                        for (int64_t j = 0; j < c; j++) p->d[j] = mb_get(x, src, j);
                        if (alter) p->d[c - 1] = 1e9;
                        mb_recount_nnz(p);
                        bool want = false, got = !want;
                        for (int64_t i = 0; i < r && !want; i++) {
                            bool eq = true;
                            for (int64_t j = 0; j < c && eq; j++) {
                                double v = mb_get(x, i, j);
                                eq = v == p->d[j] || (isnan(v) && isnan(p->d[j]));
                            }
                            want = eq;
                        }
                        T_CHECK(k_contains(x, p, 0, &got, &e) == 0 && got == want && (alter || got),
                                "contains row %lldx%lld sp=%g sparse=%d alter=%d threads=%d", (long long)r, (long long)c,
                                sps[q], sp, alter, th);
                        mb_release(p);
                    }
                    mb_release(x);
                }
    }
    br_set_threads(0);
    BrErr e = {0};
    bool got;
    MB *x = rnd(4, 3, 1, false, false), *p = rnd(1, 2, 1, false, false);
    T_CHECK(k_contains(x, p, 0, &got, &e) && strstr(e.msg, "dimension"), "contains width: %s", e.msg);
    mb_release(x);
    mb_release(p);
}

/* The weighted sequence expanded: value i repeated w_i times (integer
 * weights), sorted; *S its length. Caller frees. */
static double *expand(const MB *x, const MB *w, int64_t *S)
{
    int64_t n = x->rows, tot = 0;
    for (int64_t i = 0; i < n; i++) tot += w ? (int64_t)mb_get(w, i, 0) : 1;
    double *y = malloc((size_t)(tot + 1) * sizeof(double));
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < (w ? (int64_t)mb_get(w, i, 0) : 1); j++) y[k++] = mb_get(x, i, 0);
    qsort(y, (size_t)tot, sizeof(double), cmp_nan_last);
    *S = tot;
    return y;
}

/* SystemDS's interQuartileMean on an expanded sequence: positions k = 1..S
 * weighted by the length of (k-1, k] inside (S/4, 3S/4]. */
static double ref_iqm(const double *y, int64_t S)
{
    if (S == 0) return NAN;
    double lo = 0.25 * S, hi = 0.75 * S;
    long double s = 0;
    for (int64_t k = 1; k <= S; k++) {
        double part = fmin((double)k, hi) - fmax((double)(k - 1), lo);
        if (part > 0) s += (long double)y[k - 1] * part;
    }
    return (double)(s / (0.5L * S));
}

static void test_quantile_stats(void)
{
    const int64_t ns[] = {0, 1, 2, 3, 4, 5, 8, 13, 100, 1001};
    const double sps[] = {0, 0.001, 0.1, 1};
    const double ps[] = {0, 0.1, 0.25, 0.3, 0.5, 0.6, 1};
    for (size_t a = 0; a < sizeof ns / sizeof *ns; a++)
        for (size_t q = 0; q < 4; q++)
            for (int sp = 0; sp < 2; sp++)
                for (int weighted = 0; weighted < 2; weighted++) {
                    int64_t n = ns[a];
                    MB *x = rnd(n, 1, sps[q], sp, n % 2 == 1);
                    MB *w = NULL;
                    if (weighted) {
                        BrErr e0 = {0};
                        w = mb_dense(n, 1, &e0);
                        for (int64_t i = 0; i < n; i++) w->d[i] = floor(urand() * 4);
                        mb_recount_nnz(w);
                        if (sp) mb_make_sparse(w, &e0);
                    }
                    int64_t S;
                    double *y = expand(x, w, &S);
                    BrErr e = {0};
                    double got;
                    T_CHECK(k_iqm(x, w, &got, &e) == 0, "iqm: %s", e.msg);
                    double want = ref_iqm(y, S);
                    T_CHECK(close_rel(got, want, 1e-13), "iqm n=%lld sp=%g sparse=%d weighted=%d: %.17g vs %.17g",
                            (long long)n, sps[q], sp, weighted, got, want);
                    for (size_t k = 0; k < sizeof ps / sizeof *ps; k++) {
                        MB *o = k_interquantile(x, w, ps[k], &e);
                        int64_t lo = (int64_t)fmax(ceil(S * ps[k]), 1), hi = (int64_t)ceil(S * (1 - ps[k]));
                        int64_t len = hi >= lo ? hi - lo + 1 : 0;
                        bool ok = o && o->rows == len && o->cols == 1;
                        for (int64_t i = 0; ok && i < len; i++) {
                            double g = mb_get(o, i, 0), r = y[lo - 1 + i];
                            ok = g == r || (isnan(g) && isnan(r));
                        }
                        T_CHECK(ok, "interQuantile n=%lld p=%g sp=%g sparse=%d weighted=%d", (long long)n,
                                ps[k], sps[q], sp, weighted);
                        mb_release(o);
                    }
                    free(y);
                    mb_release(w);
                    mb_release(x);
                }
    /* the classic examples: 1..8 -> 4.5, 1..5 -> 3 (quartiles split values) */
    BrErr e = {0};
    double v8[8] = {8, 1, 7, 2, 6, 3, 5, 4}, r;
    MB *x8 = mb_dense(8, 1, &e);
    memcpy(x8->d, v8, sizeof v8);
    mb_recount_nnz(x8);
    T_CHECK(k_iqm(x8, NULL, &r, &e) == 0 && r == 4.5, "iqm 1..8 = %g", r);
    MB *o = k_interquantile(x8, NULL, 0.25, &e);
    T_CHECK(o && o->rows == 5 && mb_get(o, 0, 0) == 2 && mb_get(o, 4, 0) == 6, "interQuantile 1..8, 0.25");
    mb_release(o);
    x8->rows = 5;   /* the first five cells: 8 1 7 2 6 -> sorted 1 2 6 7 8 */
    T_CHECK(k_iqm(x8, NULL, &r, &e) == 0 && close_rel(r, (0.75 * 2 + 6 + 0.75 * 7) / 2.5, 1e-15), "iqm of 5: %g", r);
    x8->rows = 8;
    /* fractional weights: mass 1 at 0 and 3 at 10 -> (0.25..1: 0, 1..3: 10) */
    MB *x2 = mb_dense(2, 1, &e), *w2 = mb_dense(2, 1, &e);
    x2->d[0] = 0; x2->d[1] = 10; w2->d[0] = 1; w2->d[1] = 3;
    mb_recount_nnz(x2); mb_recount_nnz(w2);
    T_CHECK(k_iqm(x2, w2, &r, &e) == 0 && close_rel(r, 10 * 2.0 / 2, 1e-15), "weighted iqm %g", r);
    w2->d[1] = 1.5;   /* S = 2.5: (0.625, 1] at 0, (1, 1.875] at 10 */
    T_CHECK(k_iqm(x2, w2, &r, &e) == 0 && close_rel(r, 10 * 0.875 / 1.25, 1e-15), "fractional iqm %g", r);
    /* errors */
    MB *m = mb_dense(3, 2, &e);
    BrErr e1 = {0}, e2 = {0}, e3 = {0}, e4 = {0};
    T_CHECK(k_iqm(m, NULL, &r, &e1) == BR_EDIM && strstr(e1.msg, "dimension"), "iqm matrix: %s", e1.msg);
    T_CHECK(!k_interquantile(x8, m, 0.2, &e2) && strstr(e2.msg, "dimension"), "interQuantile weights: %s", e2.msg);
    T_CHECK(!k_interquantile(x8, NULL, 1.5, &e3) && e3.code == BR_EARG, "interQuantile p: %s", e3.msg);
    w2->d[0] = -1;
    x2->d[0] = 3;
    T_CHECK(k_iqm(x2, w2, &r, &e4) == BR_EARG && strstr(e4.msg, "non-negative"), "negative weight: %s", e4.msg);
    mb_release(m); mb_release(x2); mb_release(w2); mb_release(x8);
}

/* roll, rowwise distinct counts and contains ask br_par (base.h): on a
 * crowded machine (pinned) regions under BR_PAR_CROWDED_MIN cells stay
 * on one thread, uncrowded they fork; the same results either way (dense
 * and sparse, about 10^5 cells, 2 threads). */
static void test_crowded(void)
{
    BrErr e = {0};
    br_set_threads(2);
    for (int sp = 0; sp < 2; sp++) {
        MB *x = rnd(400, 300, sp ? 0.7 : 1.0, sp == 1, true);
        MB *r[2][2];
        bool found[2][2];
        for (int pin = 0; pin < 2; pin++) {
            br_par_pin(pin);
            int64_t t0, k0, t1, k1;
            br_par_counts(&t0, &k0);
            r[pin][0] = k_roll(x, 7, &e);
            r[pin][1] = k_count_distinct_dir(x, true, &e);
            T_CHECK(k_contains(x, NULL, 1234.5, &found[pin][0], &e) == 0 &&
                        k_contains(x, NULL, 5.5, &found[pin][1], &e) == 0,
                    "crowded contains: %s", e.msg);
            br_par_counts(&t1, &k1);
            T_CHECK(pin == 0 ? t1 > t0 && k1 == k0 : t1 == t0 && k1 > k0,
                    "crowded stats pin %d sp %d: teams %lld -> %lld, kept %lld -> %lld", pin, sp, (long long)t0,
                    (long long)t1, (long long)k0, (long long)k1);
        }
        for (int q = 0; q < 2; q++) {
            T_CHECK(r[0][q] && r[1][q] && mb_equal(r[0][q], r[1][q], 0), "crowded stats sp %d: result %d differs",
                    sp, q);
            mb_release(r[0][q]);
            mb_release(r[1][q]);
        }
        T_CHECK(found[0][0] == found[1][0] && found[0][1] == found[1][1] && !found[0][0],
                "crowded stats sp %d: contains differs", sp);
        mb_release(x);
    }
    br_par_pin(-1);
    br_set_threads(0);
}

int main(void)
{
    test_reference();
    test_roundtrip();
    test_identities();
    test_errors();
    test_count_distinct();
    test_roll();
    test_cumsumprod();
    test_contains();
    test_quantile_stats();
    test_crowded();
    return t_done("test_stats");
}
