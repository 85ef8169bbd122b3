/* test_cla_est.c: the sample-based distinct estimate of compression
 * planning (kernels/cla_est.c, Haas and Stokes' hybrid) on populations
 * of known distinct counts: uniform class sizes from a handful of values
 * to all distinct, Zipf-skewed values, one dominant value with a tail,
 * and a mix of frequent and rare values. Each population and each 5%
 * sample (without replacement, as planning samples rows) comes from a
 * fixed seed, so every estimate here is one deterministic number.
 * Checked: the estimate lies in [seen, N]; its ratio error
 * max(est/D, D/est) meets the bound that planning needs (below); on the
 * skewed populations it is at least as close as the first-order
 * jackknife Duj1 that planning used before. Also the run estimate
 * (check_runs). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "kernels/cla.h"

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static double urand(void) { return (double)(next() >> 11) / 9007199254740992.0; }

#define N 200000
#define NS 10000   /* 5%: planning's default share */

typedef struct Case {
    const char *name;
    int kind;      /* 0 uniform over D, 1 Zipf(s) over D, 2 dominant value + tail, 3 frequent + rare */
    int64_t D;
    double s;
    bool skewed;
} Case;

static int64_t zipf_cdf_pick(const double *cdf, int64_t D, double u)
{
    int64_t lo = 0, hi = D - 1;
    while (lo < hi) {
        int64_t m = (lo + hi) / 2;
        if (cdf[m] < u) lo = m + 1;
        else hi = m;
    }
    return lo;
}

/* The population's values (class ids) of c, seeded. */
static void population(const Case *c, int64_t *v)
{
    if (c->kind == 0) {
        for (int64_t i = 0; i < N; i++) v[i] = i % c->D;   /* equal class sizes */
    } else if (c->kind == 1) {
        double *cdf = malloc((size_t)c->D * sizeof(double)), t = 0;
        for (int64_t k = 0; k < c->D; k++) cdf[k] = t += pow((double)(k + 1), -c->s);
        for (int64_t k = 0; k < c->D; k++) cdf[k] /= t;
        for (int64_t i = 0; i < N; i++) v[i] = zipf_cdf_pick(cdf, c->D, urand());
        free(cdf);
    } else if (c->kind == 2) {
        for (int64_t i = 0; i < N; i++) v[i] = urand() < 0.9 ? 0 : 1 + (int64_t)(urand() * (double)(c->D - 1));
    } else {
        for (int64_t i = 0; i < N; i++) v[i] = urand() < 0.5 ? (int64_t)(urand() * 20) : 20 + (int64_t)(urand() * (double)(c->D - 20));
    }
}

/* Distinct values of v[0..n) (ids below N). */
static int64_t distinct(const int64_t *v, int64_t n, int64_t *cnt)
{
    memset(cnt, 0, (size_t)N * sizeof(int64_t));
    int64_t d = 0;
    for (int64_t i = 0; i < n; i++) d += cnt[v[i]]++ == 0;
    return d;
}

/* The run estimate (cla_est_runs) on populations of known runs: runs of
 * geometric lengths (means 4, 40, 400) over 5 non-zero values and zero
 * (30% of the runs), a sorted column (one run per value), independent
 * values (runs of about one row). For each, NS rows sampled uniformly
 * without replacement with the row before each, 5 fixed seeds. A
 * sampled row starts a run with probability p = R / N, so the starts
 * seen are hypergeometric with variance at most NS p (1 - p): each
 * estimate must lie within 5 standard deviations (plus one start) of R,
 * and the mean of the 5 within 5 / sqrt(5) of them (unbiased). */
static void check_runs(int64_t *v, int64_t *idx)
{
    struct { const char *name; int kind; double len; } pops[] = {
        {"runs mean 4", 0, 4}, {"runs mean 40", 0, 40}, {"runs mean 400", 0, 400},
        {"sorted 50 values", 1, 0}, {"independent 10 values", 2, 0},
    };
    for (size_t q = 0; q < sizeof pops / sizeof *pops; q++) {
        for (int64_t i = 0; i < N;) {   /* the population */
            int64_t len = 1, val = 0;
            if (pops[q].kind == 0) {
                len = 1 + (int64_t)(log(1 - urand()) / log(1 - 1 / pops[q].len));
                val = urand() < 0.3 ? 0 : 1 + (int64_t)(urand() * 5);
            } else if (pops[q].kind == 1) {
                len = N / 50;
                val = 1 + i / len;
            } else {
                val = (int64_t)(urand() * 10);
            }
            for (int64_t k = 0; k < len && i < N; k++) v[i++] = val;
        }
        int64_t R = 0, nz = 0, dnz = 0;
        bool seen[64] = {0};
        for (int64_t i = 0; i < N; i++) {
            R += v[i] != 0 && (i == 0 || v[i - 1] != v[i]);
            if (v[i] != 0 && v[i] < 64 && !seen[v[i]]) { seen[v[i]] = true; dnz++; }
            nz += v[i] != 0;
        }
        double p = (double)R / N, sd = sqrt(NS * p * (1 - p)), mean = 0;
        double tol = (5 * sd + 1) / (NS * p);   /* relative, on R */
        const int seeds = 5;
        for (int sd_i = 0; sd_i < seeds; sd_i++) {
            for (int64_t i = 0; i < N; i++) idx[i] = i;
            int64_t starts = 0, nzs = 0;
            for (int64_t i = 0; i < NS; i++) {
                int64_t j = i + (int64_t)(urand() * (double)(N - i));
                int64_t t = idx[i]; idx[i] = idx[j]; idx[j] = t;
                int64_t r = idx[i];
                starts += v[r] != 0 && (r == 0 || v[r - 1] != v[r]);
                nzs += v[r] != 0;
            }
            double est = cla_est_runs(N, NS, starts, (double)dnz, nzs);
            mean += est / seeds;
            printf("  %-22s runs %7lld: estimate %9.1f (relative error %+.3f, bound %.3f)\n", pops[q].name,
                   (long long)R, est, est / (double)R - 1, tol);
            T_CHECK(fabs(est / (double)R - 1) <= tol, "%s seed %d: runs %.1f want %lld within %.3f", pops[q].name,
                    sd_i, est, (long long)R, tol);
        }
        T_CHECK(fabs(mean / (double)R - 1) <= tol / sqrt(seeds), "%s: mean %.1f want %lld within %.3f",
                pops[q].name, mean, (long long)R, tol / sqrt(seeds));
    }
    /* a full sample is exact; bounds: the non-zero values and rows */
    T_CHECK(cla_est_runs(100, 100, 7, 3, 50) == 7, "runs: full sample exact");
    T_CHECK(cla_est_runs(1000, 100, 0, 4, 10) == 4, "runs: at least one per non-zero value");
    T_CHECK(cla_est_runs(1000, 100, 30, 4, 20) == 200, "runs: at most the non-zero rows");
}

int main(void)
{
    Case cases[] = {
        {"uniform 10", 0, 10, 0, false},       {"uniform 1000", 0, 1000, 0, false},
        {"uniform 20000", 0, 20000, 0, false}, {"uniform 100000", 0, 100000, 0, false},
        {"all distinct", 0, N, 0, false},      {"zipf 1.1", 1, 50000, 1.1, true},
        {"zipf 1.5", 1, 50000, 1.5, true},     {"dominant 0 + 5000", 2, 5000, 0, true},
        {"20 frequent + rare", 3, 60000, 0, true},
    };
    int64_t *v = malloc(N * sizeof(int64_t)), *smp = malloc(NS * sizeof(int64_t));
    int64_t *cnt = malloc(N * sizeof(int64_t)), *f = malloc((NS + 2) * sizeof(int64_t));
    int64_t *idx = malloc(N * sizeof(int64_t));
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const Case *c = &cases[k];
        population(c, v);
        int64_t D = distinct(v, N, cnt);
        /* a sample without replacement: a partial Fisher-Yates shuffle */
        for (int64_t i = 0; i < N; i++) idx[i] = i;
        for (int64_t i = 0; i < NS; i++) {
            int64_t j = i + (int64_t)(urand() * (double)(N - i));
            int64_t t = idx[i]; idx[i] = idx[j]; idx[j] = t;
            smp[i] = v[idx[i]];
        }
        int64_t d = distinct(smp, NS, cnt), fm = 0;
        memset(f, 0, (NS + 2) * sizeof(int64_t));
        for (int64_t i = 0; i < NS; i++) {
            /* cnt holds the sample counts; each class once */
            if (cnt[smp[i]] > 0) { f[cnt[smp[i]]]++; if (cnt[smp[i]] > fm) fm = cnt[smp[i]]; cnt[smp[i]] = 0; }
        }
        double est = cla_est_distinct(N, NS, d, f, fm), old = cla_est_duj1(N, NS, d, f[1]);
        double err = fmax(est / (double)D, (double)D / est), err1 = fmax(old / (double)D, (double)D / old);
        printf("  %-20s D %6lld seen %5lld: hybrid %9.1f (ratio error %.3f), Duj1 %9.1f (%.3f)\n", c->name,
               (long long)D, (long long)d, est, err, old, err1);
        T_CHECK(est >= (double)d && est <= N, "%s: estimate %.1f in [%lld, %d]", c->name, est, (long long)d, N);
        /* Planning picks DDC1/DDC2/OLE by the distinct count: a ratio
         * error under 2 keeps the dictionary size within a factor 2 and
         * the code width (256 / 65536 tuples) right but at the borders. */
        T_CHECK(err < 2.0, "%s: ratio error %.3f under 2", c->name, err);
        if (c->skewed) T_CHECK(err <= err1, "%s: hybrid %.3f no worse than Duj1 %.3f", c->name, err, err1);
    }
    /* degenerate inputs: a full sample is exact; nothing sampled is 0 */
    int64_t f3[4] = {0, 0, 0, 5};
    T_CHECK(cla_est_distinct(15, 15, 5, f3, 3) == 5, "full sample: exact");
    T_CHECK(cla_est_distinct(100, 0, 0, f3, 0) == 0, "empty sample: 0");
    check_runs(v, idx);
    free(v); free(smp); free(cnt); free(f); free(idx);
    return t_done("test_cla_est");
}
