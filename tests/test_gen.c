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

/* Philox4x64-10's known answers (Random123's kat_vectors) and the
 * counter-based pdfs' behaviour: [0, 1) uniforms, standard normals, min
 * and max ignored (as SystemDS), sparsity 0 empty, other sparsities below
 * 1 refused (SystemDS leaves them all zeros), the same numbers at any
 * thread count and block layout of threads. */
static void cb_tests(void)
{
    static const uint64_t kat[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x16554d9eca36314cULL, 0xdb20fe9d672d0fdcULL, 0xd7e772cee186176bULL,
         0x7e68b68aec7ba23bULL},
        {~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, 0x87b092c3013fe90bULL, 0x438c3c67be8d0224ULL,
         0x9cc7d7c69cd777b6ULL, 0xa09caebf594f0ba0ULL},
        {0x243f6a8885a308d3ULL, 0x13198a2e03707344ULL, 0xa4093822299f31d0ULL, 0x082efa98ec4e6c89ULL,
         0x452821e638d01377ULL, 0xbe5466cf34e90c6cULL, 0xa528f45403e61d95ULL, 0x38c72dbd566e9788ULL,
         0xa5a1610e72fd18b5ULL, 0x57bd43b5e52b7fe6ULL}};
    for (int k = 0; k < 3; k++) {
        uint64_t out[4];
        k_philox4x64(kat[k] + 4, kat[k], out);
        T_CHECK(!memcmp(out, kat[k] + 6, sizeof out), "philox4x64-10 known answer %d", k);
    }
    BrErr e = {0};
    double mean, var;
    MB *u = k_rand(300, 301, 5, 7, 1, "cb_uniform", 1, 123, &e);
    bool in = u && !u->sparse;
    for (int64_t k = 0; in && k < 300 * 301; k++) in = u->d[k] >= 0 && u->d[k] < 1;
    moments(u, &mean, &var);
    T_CHECK(in && fabs(mean - 0.5) < 0.005 && fabs(var - 1.0 / 12) < 0.002, "cb_uniform [0,1): %g %g", mean, var);
    MB *n = k_rand(300, 301, 0, 1, 1, "CB_NORMAL", 1, 123, &e);
    moments(n, &mean, &var);
    T_CHECK(n && fabs(mean) < 0.015 && fabs(var - 1) < 0.02, "cb_normal moments %g %g", mean, var);
    /* several blocks, any thread count */
    br_set_blocksize(64);
    for (int th = 1; th <= 3; th++) {
        br_set_threads(th);
        MB *a = k_rand(300, 301, 0, 1, 1, "cb_normal", 1, 123, &e);
        MB *b = k_rand(300, 301, 0, 1, 1, "cb_normal", 1, 123, &e);
        T_CHECK(a && b && mb_equal(a, b, 0) && !mb_equal(a, n, 0), "cb_normal blocks, %d threads", th);
        mb_release(a); mb_release(b);
    }
    br_set_blocksize(0);
    br_set_threads(0);
    MB *z = k_rand(20, 30, 0, 1, 0, "cb_uniform", 1, 1, &e);
    T_CHECK(z && z->nnz == 0 && z->rows == 20 && z->cols == 30, "cb_uniform sparsity 0");
    T_CHECK(!k_rand(20, 30, 0, 1, 0.5, "cb_uniform", 1, 1, &e) && e.code == BR_EARG &&
            strstr(e.msg, "sparsity"), "cb_uniform sparsity 0.5 refused");
    br_err_clear(&e);
    mb_release(u); mb_release(n); mb_release(z);
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
    /* a tiny sparsity on a big matrix: geometric skips, 10,000 blocks */
    MB *big = k_rand(100000, 100000, 0, 1, 1e-6, "uniform", 1, 3, &e);
    T_CHECK(big && big->sparse && big->nnz > 9000 && big->nnz < 11000 && valid(big),
            "big sparse rand nnz %lld", big ? (long long)big->nnz : -1LL);
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
    /* min > max: min + (max - min) u over the same u, as SystemDS */
    MB *up = k_rand(20, 20, 0, 1, 1, "uniform", 1, 7, &e), *down = k_rand(20, 20, 3, 1, 1, "uniform", 1, 7, &e);
    bool same = up && down && !up->sparse && !down->sparse;
    for (int64_t i = 0; same && i < 400; i++) same = down->d[i] == 3 + (1.0 - 3) * up->d[i] && down->d[i] > 1;
    T_CHECK(same, "min > max draws from (max, min]");
    mb_release(up); mb_release(down);
    br_err_clear(&e);
    T_CHECK(!k_rand(-1, 2, 0, 1, 1, "uniform", 1, 1, &e) && e.code, "negative rows");
    br_err_clear(&e);
    cb_tests();
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

/* generated by tests/data/RandRef.java (see sds_ref_tests) */
static const double sds_ref0[] = { /* rand 3 4 -1 2 1 uniform 1 7 1000 */
    0x1.705d37e3ca938p-2, -0x1.e78be1b5a8f7ap-1, -0x1.7bcd83f5da678p-1, 0x1.946ed848f6cb8p-1,
    -0x1.aa5ca65066cc6p-1, -0x1.abe5bf3fa2736p-1, 0x1.884ed97845f28p-2, 0x1.54ce3b43ed2fep0,
    0x1.c6e7bf3560698p-3, 0x1.0ac7c9da78c56p-1, -0x1.541fb683cf32p-5, -0x1.916ba733e1383p-1,
};
static const double sds_ref1[] = { /* rand 6 5 0 1 0.3 uniform 1 11 1000 */
    0x1.1e93c7e0dada2p-1, 0, 0x1.0ddc370414adep-2, 0,
    0, 0, 0, 0,
    0, 0x1.7f87951878b4fp-1, 0, 0x1.13b082fb348a4p-1,
    0, 0, 0x1.43e5ffd52f5dp-5, 0,
    0x1.e55872d8c9246p-2, 0, 0, 0,
    0, 0x1.1cdfa24ed699p-1, 0, 0,
    0, 0, 0, 0,
    0, 0,
};
static const double sds_ref2[] = { /* rand 10 10 0 1 0.05 uniform 1 3 1000 */
    0, 0, 0, 0,
    0, 0, 0, 0,
    0, 0, 0, 0,
    0, 0, 0, 0,
    0, 0, 0, 0,
    0, 0, 0, 0,
    0, 0, 0, 0,
    0, 0, 0, 0,
    0, 0, 0, 0,
    0, 0, 0, 0,
    0, 0x1.6088d4b573338p-1, 0, 0,
    0, 0, 0, 0x1.a6df1a0322c06p-2,
    0, 0, 0, 0,
    0, 0, 0, 0,
    0, 0, 0, 0,
    0, 0, 0, 0,
    0, 0, 0, 0,
    0, 0, 0, 0x1.8c52596c94c32p-2,
    0, 0, 0, 0,
    0, 0, 0, 0,
    0, 0, 0x1.bcb2f947ebd34p-2, 0x1.7ef559d280388p-4,
    0, 0, 0, 0,
    0, 0, 0, 0,
    0, 0, 0, 0,
    0, 0, 0, 0,
};
static const double sds_ref3[] = { /* rand 5 3 0 1 1 normal 1 5 1000 */
    0x1.d267e1896fc58p-10, -0x1.008de8585449ap1, -0x1.8f388411c54ap-2, -0x1.314f0675f3ba1p0,
    -0x1.b6e0afed863e4p-1, 0x1.c36db4e698096p-1, -0x1.83be1ac4c1a2ep-3, 0x1.69ff95e7e0e72p-5,
    0x1.d0ec278919bcbp-2, -0x1.003c06f11322ep0, 0x1.365ba6e1a85dcp0, 0x1.0f5723c676951p1,
    0x1.d2548e93edc1bp-3, 0x1.0583c79f012d2p-2, 0x1.57f6c945291d8p-1,
};
static const double sds_ref4[] = { /* rand 4 4 0 1 1 poisson 3.5 9 1000 */
    0x1.4p2, 0x1.8p1, 0x1.8p1, 0x1.8p1,
    0x1.8p1, 0x1.8p1, 0x1.0p2, 0x1.8p1,
    0x1.4p2, 0x1.0p2, 0x1.4p2, 0x1.8p1,
    0x1.0p0, 0x1.0p0, 0, 0x1.0p1,
};
static const double sds_ref5[] = { /* rand 3 3 0 1 1 poisson 55.3 13 1000 */
    0x1.c8p5, 0x1.68p5, 0x1.fp5, 0x1.e8p5,
    0x1.3p5, 0x1.68p5, 0x1.08p6, 0x1.8p5,
    0x1.b8p5,
};
static const double sds_ref6[] = { /* rand 7 6 0 1 0.5 uniform 1 21 4 */
    0, 0x1.f45f670a81e2ep-1, 0, 0,
    0, 0x1.1a1ef373fabc2p-1, 0, 0,
    0, 0x1.7d79e7af637b4p-1, 0x1.8e8cb764597f6p-2, 0x1.0504db809dc24p-1,
    0x1.926332b7f7a21p-1, 0, 0x1.eab3ba537706ap-2, 0,
    0x1.0b6fe701a0482p-2, 0x1.4452af833c8ap-1, 0, 0,
    0x1.c0dd1f3c81fd4p-1, 0, 0, 0,
    0x1.256b891f1966ap-1, 0x1.3be2038ee921ep-1, 0x1.15c15d493ca62p-2, 0x1.2f9a6ed9b3c4cp-2,
    0x1.0930b1725d87dp-1, 0x1.dd726f59bed9cp-2, 0x1.dc59db5b8f38ap-1, 0x1.f4add8382c858p-3,
    0x1.e903f2cec9c81p-1, 0, 0, 0x1.2ad5ed1b0da41p-1,
    0, 0x1.eff3b89cfd4a3p-1, 0x1.5f0de4e384b93p-1, 0x1.1b49c5330a12ap-1,
    0, 0x1.5d15f3a3b962ap-1,
};
static const double sds_ref7[] = { /* sample 20 6 false 5 */
    0x1.4p3, 0x1.cp2, 0x1.ap3, 0x1.1p4,
    0x1.0p3, 0x1.cp3,
};
static const double sds_ref8[] = { /* sample 20 6 true 5 */
    0x1.1p4, 0x1.0p0, 0x1.8p1, 0x1.0p4,
    0x1.cp2, 0x1.8p3,
};
static const double sds_ref9[] = { /* sample 3000 4 false 42 */
    0x1.6ap10, 0x1.a5cp10, 0x1.92p8, 0x1.526p11,
};
static const double sds_ref10[] = { /* rand 7 5 0 1 1 cb_uniform 1 3 4 */
    0x1.1d355e8e30f7ap-2, 0x1.3c9e8cfbf1116p-1, 0x1.55ef3368a8808p-3, 0x1.62ef9a53c27bep-1,
    0x1.5ffc5de5f6434p-3, 0x1.84fb4f8f5fcd8p-3, 0x1.1dfa7c242bf85p-1, 0x1.fd135c623655ep-1,
    0x1.467ac66aaf718p-4, 0x1.d6de2960e1752p-2, 0x1.bd4c56a3c3bf2p-1, 0x1.56c1e41a76428p-5,
    0x1.63d7f4a5d45bep-1, 0x1.233efed7a4220p-3, 0x1.c6f080ea19106p-1, 0x1.66fb8736d91cap-1,
    0x1.50c5295599709p-1, 0x1.a358b6c37e40ep-2, 0x1.5795992baeb30p-3, 0x1.405113289ce80p-9,
    0x1.5f986ed4da4c4p-1, 0x1.0053242fc3418p-3, 0x1.9bfdc1c93b818p-1, 0x1.53835d7347faap-2,
    0x1.218bd515085b6p-2, 0x1.4ae5c203ffa79p-1, 0x1.b00ba7dd1e0e0p-1, 0x1.8383e17fd4355p-1,
    0x1.fed4fc49aa874p-1, 0x1.6c90abf0477edp-2, 0x1.bb89d52add5fcp-2, 0x1.fed6d6686f9f2p-1,
    0x1.118baf721c092p-2, 0x1.51b47c7b1f15cp-1, 0x1.98c3e3d3599a9p-1,
};
static const double sds_ref11[] = { /* rand 9 7 0 1 1 cb_normal 1 21 4 */
    -0x1.65b69f2b3a26dp-3, -0x1.769c29aa9f678p-2, -0x1.9a88a20dc6ed8p-1, -0x1.a690b7e0b0388p+0,
    0x1.0e3ff1fa0fea7p+0, 0x1.f113e50f32aa9p-3, -0x1.68e506aa56004p+0, -0x1.4c089bac9b260p-1,
    0x1.4806cbcf074dcp+0, -0x1.0b2dfa76db6ccp-2, -0x1.9b0f1073acd6ap-2, -0x1.d25a2a3eded29p-5,
    -0x1.027c6f7e6029dp+0, -0x1.5b2f00de74277p-2, -0x1.01ce63d356063p+1, -0x1.4e485a214b688p+0,
    -0x1.30d4c78af3156p+0, 0x1.dd55dd9a5f0c0p-2, 0x1.20a0ac0f90512p-4, 0x1.59bb7c8a634b4p-3,
    -0x1.48d399ae5d250p-2, -0x1.d2a7009b12ae1p-1, -0x1.57ba89fb45d8dp-2, 0x1.dde2bfa0b2b8fp-1,
    -0x1.2a5c2a1b6e411p-3, 0x1.72a8bd4fdaef8p+0, -0x1.926b7570e2494p+0, 0x1.9917ea9369a11p-2,
    0x1.efe6668813821p-2, 0x1.0716e9f2f330ap+0, 0x1.03428dc4e7f1fp-3, -0x1.07808760a95e0p+0,
    -0x1.ddff8f016c2d2p-2, 0x1.b1ed14d8f800cp-1, -0x1.f4fae0b87b2ccp-1, -0x1.738481c4ccaf1p-2,
    0x1.1f0d9e4ba14ddp-2, 0x1.2fedda7ae3fd5p-2, -0x1.9bdfa9da21755p-2, -0x1.ca0520ff4856dp-1,
    0x1.d1f76b76c5958p-1, -0x1.7838b317f0fbbp-3, 0x1.daad311b32cb3p+0, -0x1.9564a701e6e29p+0,
    0x1.c6e2bab52fa80p+0, -0x1.b986d68bfa09dp-1, 0x1.04e59caa5d602p-4, -0x1.12c61df78849bp-2,
    -0x1.19f85391a9fe9p-2, -0x1.e413003834295p-1, -0x1.4a0f32c858596p-1, 0x1.52a073001ca92p+0,
    0x1.ee5e7f7d67ec8p-2, -0x1.cd946d875229cp+0, -0x1.42b2f6b722a03p+1, 0x1.f2da5dfb5ca3cp-3,
    -0x1.1c4a9e345f0c7p+0, -0x1.dad856e2826adp-3, 0x1.34b4e90a0fbfbp-2, -0x1.5716eb8f46bcdp-4,
    -0x1.3c1cd0b1432abp-2, 0x1.07cae080fecb0p+0, -0x1.011fcf4196be7p-1,
};
static const double sds_ref12[] = { /* rand 3 3 0 1 1 cb_normal 1 8 1000 */
    -0x1.28890fad5b4f2p+0, 0x1.5bcc796229547p-1, 0x1.5f3023c7f13adp+0, 0x1.9db8a763f0f39p+0,
    -0x1.18ca1b3317421p-1, 0x1.f96c047d0b186p-4, 0x1.ff0cf2fd78758p-2, 0x1.0f308e0a011b8p+0,
    -0x1.145612244ece3p-5,
};

/* ------------------------------------------------- SystemDS's streams */

/* rand and sample draw SystemDS's numbers for a seed: each case's cells
 * (row-major) against the values tests/data/RandRef.java printed with
 * java.util.Random and Commons Math 3's Well1024a and
 * PoissonDistribution. Dense and Bernoulli-selected blocks, a
 * geometric-skip block, normal pairs, both Poisson methods, several
 * blocks (block size 4), sample with and without replacement, the
 * counter-based pdfs over several blocks (the counter carried from block
 * to block, blocks of 4k+3 cells; RandRef's Philox checked against
 * SystemDS's own PhiloxUniformCBPRNGenerator/PhiloxNormalCBPRNGenerator
 * over a 1003 x 2001 matrix: uniform bit-exact, normal within 1 ulp).
 * Normal values may differ in the last bit (Java's and C's log, cos and
 * sin). */
typedef struct { int64_t r, c; double min, max, sp; const char *pdf; double lam; int64_t seed, blen; } SdsCase;

static void sds_ref_tests(void)
{
    static const SdsCase rc[] = {
        {3, 4, -1, 2, 1, "uniform", 1, 7, 1000}, {6, 5, 0, 1, 0.3, "uniform", 1, 11, 1000},
        {10, 10, 0, 1, 0.05, "uniform", 1, 3, 1000}, {5, 3, 0, 1, 1, "normal", 1, 5, 1000},
        {4, 4, 0, 1, 1, "poisson", 3.5, 9, 1000}, {3, 3, 0, 1, 1, "poisson", 55.3, 13, 1000},
        {7, 6, 0, 1, 0.5, "uniform", 1, 21, 4}, {7, 5, 0, 1, 1, "cb_uniform", 1, 3, 4},
        {9, 7, 0, 1, 1, "cb_normal", 1, 21, 4}, {3, 3, 0, 1, 1, "cb_normal", 1, 8, 1000}};
    static const double *ref[] = {sds_ref0, sds_ref1, sds_ref2, sds_ref3, sds_ref4, sds_ref5, sds_ref6,
                                  sds_ref10, sds_ref11, sds_ref12};
    BrErr e = {0};
    for (int k = 0; k < 10; k++) {
        const SdsCase *q = &rc[k];
        br_set_blocksize(q->blen);
        for (int th = 1; th <= 2; th++) {
            br_set_threads(th);
            MB *a = k_rand(q->r, q->c, q->min, q->max, q->sp, q->pdf, q->lam, q->seed, &e);
            bool ok = a && valid(a);
            for (int64_t i = 0; ok && i < q->r * q->c; i++) {
                double x = mb_get(a, i / q->c, i % q->c), y = ref[k][i];
                ok = x == y || (strstr(q->pdf, "normal") && fabs(x - y) <= 4e-16 * fabs(y));
            }
            T_CHECK(ok, "rand as SystemDS: case %d (%s, sparsity %g), %d threads", k, q->pdf, q->sp, th);
            mb_release(a);
        }
    }
    br_set_blocksize(0);
    br_set_threads(0);
    static const int64_t sc[][4] = {{20, 6, 0, 5}, {20, 6, 1, 5}, {3000, 4, 0, 42}};
    static const double *sref[] = {sds_ref7, sds_ref8, sds_ref9};
    for (int k = 0; k < 3; k++) {
        MB *a = k_sample(sc[k][0], sc[k][1], sc[k][2], sc[k][3], &e);
        bool ok = a && a->rows == sc[k][1];
        for (int64_t i = 0; ok && i < sc[k][1]; i++) ok = mb_get(a, i, 0) == sref[k][i];
        T_CHECK(ok, "sample as SystemDS: case %d", k);
        mb_release(a);
    }
}

/* The parallel regions of gen.c ask br_par: seq, rand (its row blocks,
 * and a dense result's count of non-zeros), kept on one thread when
 * crowded, with the same bits (every block draws from its own seed). */
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
    t_crowded("gen", 4, 4, crowded_gen_run, &e);
}

int main(void)
{
    seq_tests();
    rand_tests();
    sample_tests();
    sds_ref_tests();
    crowded_gen();
    return t_done("test_gen");
}
