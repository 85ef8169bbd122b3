/* test_gen.c: data generation kernels (gen.h): seq lengths and values
 * (conformance cases build_seq, build_seq_neg_frac), rand determinism
 * across thread counts, moments, sparsity and format, sample. */
#include "t.h"
#include "kernels/gen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* seq(from, to, incr) has n elements, from + i*incr, last one want_last. */
static void check_seq(double from, double to, double incr, int64_t n, double last)
{
    BrErr e = {0};
    MB *s = k_seq(from, to, incr, &e);
    T_CHECK(s && s->rows == n && s->cols == 1, "seq(%g, %g, %g) length %lld (got %lld)",
            from, to, incr, (long long)n, s ? (long long)s->rows : -1LL);
    if (!s || s->rows != n) { mb_release(s); return; }
    double inc = incr;
    bool ok = true;
    for (int64_t i = 0; i + 1 < n; i++) ok = ok && mb_get(s, i, 0) == from + (double)i * inc;
    ok = ok && fabs(mb_get(s, n - 1, 0) - last) <= 1e-12 * fmax(1, fabs(last));
    int64_t nnz = 0;
    for (int64_t i = 0; i < n; i++) nnz += mb_get(s, i, 0) != 0;
    T_CHECK(ok && s->nnz == nnz, "seq(%g, %g, %g) values", from, to, incr);
    mb_release(s);
}

static void seq_tests(void)
{
    /* build_seq */
    check_seq(1, 5, 1, 5, 5);
    check_seq(5, 1, -1, 5, 1);
    check_seq(0, 1, 0.25, 5, 1);
    check_seq(10, 1, -3, 4, 1);
    check_seq(2, 11, 3, 4, 11);
    check_seq(1.5, 3.5, 1, 3, 3.5);
    check_seq(-2, 2, 1, 5, 2);
    check_seq(3, 3, 1, 1, 3);
    check_seq(1, 100, 7, 15, 99);
    /* build_seq_neg_frac */
    check_seq(1, 0, -0.25, 5, 0);
    /* an increment of 0 is an error, as in SystemDS (no silent default) */
    {
        BrErr e = {0};
        MB *z = k_seq(1, 10, 0, &e);
        T_CHECK(!z && strstr(e.msg, "wrong sequence increment"), "seq(1, 10, 0) is an error (got '%s')", e.msg);
        mb_release(z);
    }
    check_seq(-1, -3, -0.5, 5, -3);
    check_seq(3, -3, -1.5, 5, -3);
    check_seq(0, -1, -0.125, 9, -1);
    check_seq(1, 2, 0.1, 11, 2);
    check_seq(2.5, -1, -0.75, 5, -0.5);
    check_seq(9, 1, -2, 5, 1);
    check_seq(2, 3, 5, 1, 2);
    check_seq(4, 4, -2, 1, 4);
    check_seq(-2, -2.5, -1, 1, -2);
    check_seq(0, 0.3, 0.1, 4, 0.3);     /* 0.3/0.1 = 2.9999999999999996 */
    check_seq(0, 1, 0.1, 11, 1);
    /* exact values of seq(1, 2, 0.1) as R gives them */
    BrErr e = {0};
    MB *f = k_seq(1, 2, 0.1, &e);
    T_CHECK(f && mb_get(f, 1, 0) == 1.1000000000000001 && mb_get(f, 4, 0) == 1.3999999999999999 &&
            mb_get(f, 7, 0) == 1.7000000000000002, "seq(1, 2, 0.1) values");
    mb_release(f);
    MB *s = k_seq(0, -1, -0.125, &e);
    double sum = 0;
    for (int64_t i = 0; s && i < s->rows; i++) sum += mb_get(s, i, 0);
    T_CHECK(sum == -4.5, "sum(seq(0, -1, -0.125))");
    mb_release(s);
    /* a large one, parallel */
    br_set_threads(2);
    s = k_seq(1, 200000, 1, &e);
    T_CHECK(s && s->rows == 200000 && mb_get(s, 199999, 0) == 200000 && s->nnz == 200000, "long seq");
    mb_release(s);
    br_set_threads(0);
    /* errors */
    br_err_clear(&e);
    s = k_seq(1, 5, -1, &e);
    T_CHECK(!s && strstr(e.msg, "wrong sign"), "seq wrong sign: %s", e.msg);
    br_err_clear(&e);
    s = k_seq(5, 1, 2, &e);
    T_CHECK(!s && strstr(e.msg, "wrong sign"), "seq wrong sign down");
    br_err_clear(&e);
    s = k_seq(1, INFINITY, 1, &e);
    T_CHECK(!s && e.code, "seq infinite");
}

/* ------------------------------------------------------------------ rand */

static bool same(const MB *a, const MB *b)
{
    return a && b && a->sparse == b->sparse && a->nnz == b->nnz && mb_equal(a, b, 0);
}

static bool valid(const MB *r)
{
    if (!r || r->refs != 1) return false;
    if (r->sparse) {
        if (r->rp[0] != 0 || r->rp[r->rows] != r->nnz) return false;
        for (int64_t i = 0; i < r->rows; i++)
            for (int64_t k = r->rp[i]; k < r->rp[i + 1]; k++) {
                if (r->ci[k] < 0 || r->ci[k] >= r->cols || r->v[k] == 0) return false;
                if (k > r->rp[i] && r->ci[k] <= r->ci[k - 1]) return false;
            }
        return true;
    }
    int64_t c = 0;
    for (int64_t i = 0; i < r->rows * r->cols; i++) c += r->d[i] != 0;
    return c == r->nnz;
}

/* mean and variance (n-1) over all cells. */
static void moments(const MB *m, double *mean, double *var)
{
    double n = (double)m->rows * (double)m->cols, s = 0, ss = 0;
    for (int64_t i = 0; i < m->rows; i++)
        for (int64_t j = 0; j < m->cols; j++) s += mb_get(m, i, j);
    *mean = s / n;
    for (int64_t i = 0; i < m->rows; i++)
        for (int64_t j = 0; j < m->cols; j++) {
            double d = mb_get(m, i, j) - *mean;
            ss += d * d;
        }
    *var = ss / (n - 1);
}

static void rand_tests(void)
{
    BrErr e = {0};
    const char *pdfs[] = {"uniform", "normal", "poisson"};
    double sps[] = {0, 0.001, 0.1, 0.35, 0.5, 1};
    int64_t shapes[][2] = {{0, 5}, {5, 0}, {1, 1}, {7, 1}, {1, 9}, {300, 250}, {40, 3000}};
    /* the same seed gives the same matrix at 1 and 2 threads */
    for (int p = 0; p < 3; p++)
        for (int k = 0; k < 6; k++)
            for (int s = 0; s < 7; s++) {
                int64_t m = shapes[s][0], n = shapes[s][1];
                br_set_threads(1);
                MB *a = k_rand(m, n, -2, 3, sps[k], pdfs[p], 4, 42, &e);
                br_set_threads(2);
                MB *b = k_rand(m, n, -2, 3, sps[k], pdfs[p], 4, 42, &e);
                MB *c = k_rand(m, n, -2, 3, sps[k], pdfs[p], 4, 43, &e);
                T_CHECK(valid(a) && valid(b) && a->rows == m && a->cols == n,
                        "rand valid %s sp=%g %lldx%lld", pdfs[p], sps[k], (long long)m, (long long)n);
                T_CHECK(same(a, b), "rand same across threads %s sp=%g %lldx%lld", pdfs[p], sps[k],
                        (long long)m, (long long)n);
                if (m * n >= 1000 && sps[k] >= 0.1)
                    T_CHECK(!mb_equal(a, c, 0), "rand other seed differs %s", pdfs[p]);
                if (m * n >= 10000 && sps[k] > 0) {
                    T_CHECK(a->sparse == (sps[k] < 0.4), "rand format sp=%g", sps[k]);
                    double frac = (double)a->nnz / (double)(m * n);
                    double want = sps[k] * (p == 2 ? 1 - exp(-4.0) : 1);
                    double tol = 4 * sqrt(want * (1 - want) / (double)(m * n)) + 1e-9;
                    T_CHECK(fabs(frac - want) <= tol, "rand sparsity %s sp=%g: %g", pdfs[p], sps[k], frac);
                }
                if (p == 0) {
                    bool in = true;
                    for (int64_t i = 0; i < m && in; i++)
                        for (int64_t j = 0; j < n && in; j++) {
                            double x = mb_get(a, i, j);
                            in = x == 0 || (x >= -2 && x < 3);
                        }
                    T_CHECK(in, "rand uniform bounds");
                }
                mb_release(a); mb_release(b); mb_release(c);
            }
    br_set_threads(0);

    /* moments */
    double mean, var;
    MB *u = k_rand(300, 300, 2, 5, 1, "uniform", 1, 5, &e);
    moments(u, &mean, &var);
    T_CHECK(fabs(mean - 3.5) < 0.02 && fabs(var - 0.75) < 0.02, "uniform moments %g %g", mean, var);
    mb_release(u);
    MB *nm = k_rand(300, 300, 0, 1, 1, "normal", 1, 11, &e);
    moments(nm, &mean, &var);
    T_CHECK(fabs(mean) < 0.015 && fabs(var - 1) < 0.02, "normal moments %g %g", mean, var);
    mb_release(nm);
    double lams[] = {0.5, 3, 29.5, 50, 1000};
    for (int l = 0; l < 5; l++) {
        MB *po = k_rand(300, 300, 0, 1, 1, "poisson", lams[l], 17 + l, &e);
        moments(po, &mean, &var);
        double se = sqrt(lams[l] / 90000.0);
        bool ints = true;
        for (int64_t i = 0; i < 300 && ints; i++)
            for (int64_t j = 0; j < 300 && ints; j++) {
                double x = mb_get(po, i, j);
                ints = x >= 0 && x == floor(x);
            }
        T_CHECK(ints && fabs(mean - lams[l]) < 5 * se && fabs(var / lams[l] - 1) < 0.03,
                "poisson(%g) moments %g %g", lams[l], mean, var);
        mb_release(po);
    }
    /* values of a sparse draw are uniform too */
    MB *su = k_rand(1000, 1000, 1, 2, 0.05, "uniform", 1, 9, &e);
    double s = 0;
    for (int64_t k = 0; su && k < su->nnz; k++) s += su->v[k];
    T_CHECK(su && su->sparse && fabs(s / (double)su->nnz - 1.5) < 0.01, "sparse uniform mean");
    mb_release(su);
    /* a tiny sparsity on a big matrix stays cheap (geometric skips) */
    int64_t t0 = br_now_ns();
    MB *big = k_rand(100000, 100000, 0, 1, 1e-6, "uniform", 1, 3, &e);
    T_CHECK(big && big->sparse && big->nnz > 9000 && big->nnz < 11000 && valid(big),
            "big sparse rand nnz %lld", big ? (long long)big->nnz : -1LL);
    T_CHECK(br_now_ns() - t0 < 2000000000LL, "big sparse rand fast");
    mb_release(big);

    /* constants and special cases */
    MB *k5 = k_rand(2, 3, 5, 5, 1, "uniform", 1, -1, &e);
    T_CHECK(k5 && k5->nnz == 6 && mb_get(k5, 1, 2) == 5 && mb_get(k5, 0, 0) == 5, "min == max");
    mb_release(k5);
    MB *z = k_rand(20, 30, 0, 0, 1, "uniform", 1, 1, &e);
    T_CHECK(z && z->nnz == 0 && z->sparse, "min == max == 0");
    mb_release(z);
    MB *r1 = k_rand(50, 50, 0, 1, 1, "uniform", 1, -1, &e);
    MB *r2 = k_rand(50, 50, 0, 1, 1, "uniform", 1, -1, &e);
    T_CHECK(r1 && r2 && !mb_equal(r1, r2, 0), "seed -1 gives fresh matrices");
    mb_release(r1); mb_release(r2);
    br_err_clear(&e);
    T_CHECK(!k_rand(2, 2, 0, 1, 1, "gamma", 1, 1, &e) && e.code, "unknown pdf");
    br_err_clear(&e);
    T_CHECK(!k_rand(2, 2, 0, 1, 1.5, "uniform", 1, 1, &e) && e.code, "bad sparsity");
    br_err_clear(&e);
    T_CHECK(!k_rand(2, 2, 3, 1, 1, "uniform", 1, 1, &e) && e.code, "min > max");
    br_err_clear(&e);
    T_CHECK(!k_rand(-1, 2, 0, 1, 1, "uniform", 1, 1, &e) && e.code, "negative rows");
}

/* ---------------------------------------------------------------- sample */

static void sample_tests(void)
{
    BrErr e = {0};
    int64_t cases[][3] = {{10, 10, 0}, {10, 3, 0}, {1000, 500, 0}, {1000000000000LL, 2000, 0},
                          {100000, 20000, 0}, {10, 50, 1}, {1, 5, 1}, {7, 0, 0}, {1, 1, 0}};
    for (int c = 0; c < 9; c++) {
        int64_t range = cases[c][0], size = cases[c][1];
        bool rep = cases[c][2];
        br_set_threads(1);
        MB *a = k_sample(range, size, rep, 7, &e);
        br_set_threads(2);
        MB *b = k_sample(range, size, rep, 7, &e);
        MB *d = k_sample(range, size, rep, 8, &e);
        T_CHECK(valid(a) && a->rows == size && a->cols == 1, "sample shape %d", c);
        T_CHECK(same(a, b), "sample same across threads %d", c);
        bool ok = true;
        for (int64_t i = 0; a && i < size && ok; i++) {
            double x = mb_get(a, i, 0);
            ok = x >= 1 && x <= (double)range && x == floor(x);
        }
        T_CHECK(ok, "sample range %d", c);
        if (!rep && a) {
            double *v = malloc((size_t)(size + 1) * sizeof(double));
            for (int64_t i = 0; i < size; i++) v[i] = mb_get(a, i, 0);
            bool distinct = true;
            for (int64_t i = 0; i < size; i++)      /* insertion sort, then scan */
                for (int64_t j = i; j > 0 && v[j] < v[j - 1]; j--) { double t = v[j]; v[j] = v[j - 1]; v[j - 1] = t; }
            for (int64_t i = 1; i < size; i++) distinct = distinct && v[i] != v[i - 1];
            T_CHECK(distinct, "sample without replacement is distinct %d", c);
            free(v);
        }
        if (size >= 100) T_CHECK(!mb_equal(a, d, 0), "sample other seed differs %d", c);
        mb_release(a); mb_release(b); mb_release(d);
    }
    br_set_threads(0);
    /* roughly uniform */
    MB *s = k_sample(10, 20000, true, 3, &e);
    int cnt[11] = {0};
    for (int64_t i = 0; s && i < 20000; i++) cnt[(int)mb_get(s, i, 0)]++;
    bool ok = true;
    for (int k = 1; k <= 10; k++) ok = ok && abs(cnt[k] - 2000) < 200;
    T_CHECK(ok, "sample with replacement is uniform");
    mb_release(s);
    /* a full permutation puts each value first about equally often */
    int first[6] = {0};
    for (int seed = 0; seed < 3000; seed++) {
        MB *p = k_sample(5, 5, false, seed, &e);
        first[(int)mb_get(p, 0, 0)]++;
        mb_release(p);
    }
    ok = true;
    for (int k = 1; k <= 5; k++) ok = ok && abs(first[k] - 600) < 100;
    T_CHECK(ok, "sample permutations are uniform");
    br_err_clear(&e);
    T_CHECK(!k_sample(5, 6, false, 1, &e) && e.code, "sample size > range");
    br_err_clear(&e);
    T_CHECK(!k_sample(0, 1, true, 1, &e) && e.code, "sample range 0");
}

/* The parallel regions of gen.c ask br_par: seq, rand (dense, and
 * sparse: its counting and filling passes) and sample, kept on one thread
 * when crowded, with the same bits (every cell's value comes from its
 * own position's counter-based draw). */
static void crowded_gen_run(void *arg, MB **r)
{
    BrErr *e = arg;
    r[0] = k_seq(1, 100000, 1, e);
    r[1] = k_rand(400, 300, -1, 2, 1.0, "normal", 1, 7, e);
    r[2] = k_rand(2000, 300, 0, 1, 0.3, "uniform", 1, 9, e);
    r[3] = k_sample(1000000, 100000, true, 11, e);
}

static void crowded_gen(void)
{
    BrErr e = {0};
    t_crowded("gen", 4, 5, crowded_gen_run, &e);
}

int main(void)
{
    seq_tests();
    rand_tests();
    sample_tests();
    crowded_gen();
    return t_done("test_gen");
}
