/* cla_est.c: the number of distinct values (tuples) of a column group
 * estimated from a uniform row sample, for compression planning
 * (docs/cla.md). Elgohary et al. (PVLDB 9(12), 2016, section 4.1) plan
 * compression from a sample with Haas and Stokes' hybrid estimator
 * ("Estimating the number of classes in a finite population", JASA 93,
 * 1998, section 6): the unsmoothed first-order jackknife Duj1 gives a
 * first estimate D1 and, from it, the squared coefficient of variation
 * of the class sizes (eq. 16); low skew takes the second-order jackknife
 * Duj2 (eq. 18b); otherwise its stabilized form Duj2a (the classes seen
 * more than c times removed, their population sizes solved by the
 * method of moments, and added back) unless the classes it keeps are
 * skewed too, then Shlosser's estimator Sh3 (eq. 30b). (Haas and Stokes
 * switch to Sh3 on the skew of the whole sample; but Duj2a counts the
 * frequent classes exactly, so the tail's skew is what matters: a
 * dominant value over a uniform tail took Sh3 and came out 2.5-2.8x too
 * high, where Duj2a is within 1.25x; Zipf tails stay with Sh3;
 * tests/test_cla_est.c.) Duj1 alone underestimates skewed columns
 * (a few frequent values and a tail of rare ones) 5-6x, which made
 * planning take DDC for columns that need DDC2 or stay uncompressed. */
#include "cla.h"

#include <math.h>
#include <stdlib.h>

#define HS_ALPHA1 0.9      /* skew below: the jackknife */
#define HS_C 50            /* Duj2a: classes seen more than c times removed */

static double duj1(double q, double f1, double ns, double d) { return d / (1 - (1 - q) * f1 / ns); }

/* The squared coefficient of variation of the class sizes given an
 * estimate D (eq. 16), over the frequencies f[1..fmax] of ns sample rows
 * (classes seen more than cut times left out) from N rows. */
static double gamma2(double D, const int64_t *f, int64_t fmax, int64_t cut, double ns, double N)
{
    double s = 0;
    for (int64_t i = 2; i <= fmax && i <= cut; i++) s += (double)i * (double)(i - 1) * (double)f[i];
    double g = D / (ns * ns) * s + D / N - 1;
    return g > 0 ? g : 0;
}

static double duj2(double q, double f1, double ns, double d, double g)
{
    return (d - (1 - q) * f1 * log(1 - q) * g / q) / (1 - (1 - q) * f1 / ns);
}

/* The population size x of a class seen k times in a sample of fraction
 * q: the root of q x / (1 - (1 - q)^x) = k in [1, N] (the expected sample
 * count of a class of x rows, given that it is seen; increasing in x). */
static double moments_size(int64_t k, double q, double N)
{
    double lo = 1, hi = N;
    for (int it = 0; it < 100 && hi - lo > 1e-9 * hi; it++) {
        double x = 0.5 * (lo + hi);
        if (q * x / (1 - pow(1 - q, x)) < (double)k) lo = x;
        else hi = x;
    }
    return 0.5 * (lo + hi);
}

/* Duj2a; *gr: the skew of the classes it keeps (those seen at most c
 * times), or -1 when it removed all. */
static double duj2a(double q, const int64_t *f, int64_t fmax, double ns, double d, double N, double *gr)
{
    *gr = -1;
    double nb = 0, db = 0, Nr = N;
    for (int64_t i = HS_C + 1; i <= fmax; i++) {
        if (!f[i]) continue;
        nb += (double)i * (double)f[i];
        db += (double)f[i];
        Nr -= (double)f[i] * moments_size(i, q, N);
    }
    double nsr = ns - nb, dr = d - db;
    if (nsr <= 0 || dr <= 0 || Nr <= nsr) return d;   /* only frequent classes: all seen */
    double d1 = duj1(q, (double)f[1], nsr, dr);
    *gr = gamma2(d1, f, fmax, HS_C, nsr, Nr);
    return duj2(q, (double)f[1], nsr, dr, *gr) + db;
}

/* Shlosser's third-order estimator (eq. 30b); powers of (1 - q) and
 * (1 - q^2) only, so nothing overflows. Negative when undefined. */
static double sh3(double q, const int64_t *f, int64_t fmax, double d)
{
    double a = 0, b = 0, c = 0, e = 0;
    for (int64_t i = 1; i <= fmax; i++) {
        if (!f[i]) continue;
        double fi = (double)f[i], p1 = pow(1 - q, (double)i), p2 = pow(1 - q * q, (double)i);
        a += (double)i * q * q * pow(1 - q * q, (double)(i - 1)) * fi;
        b += (p2 - p1) * fi;
        c += p1 * fi;
        e += (double)i * q * pow(1 - q, (double)(i - 1)) * fi;
    }
    if (b <= 0 || e <= 0) return -1;
    return d + (double)f[1] * a / b * (c / e) * (c / e);
}

double cla_est_distinct(int64_t N, int64_t ns, int64_t d, const int64_t *f, int64_t fmax)
{
    if (ns >= N || d == 0) return (double)d;
    double q = (double)ns / (double)N, f1 = fmax >= 1 ? (double)f[1] : 0;
    double d1 = duj1(q, f1, (double)ns, (double)d);
    double g = gamma2(d1, f, fmax, fmax, (double)ns, (double)N), est;
    double gr = -1;
    if (g < HS_ALPHA1) est = duj2(q, f1, (double)ns, (double)d, g);
    else est = duj2a(q, f, fmax, (double)ns, (double)d, (double)N, &gr);
    if (g >= HS_ALPHA1 && gr >= HS_ALPHA1) est = sh3(q, f, fmax, (double)d);
    if (!(est >= 0) || !isfinite(est)) est = d1;   /* undefined: Duj1 */
    if (est < (double)d) est = (double)d;
    if (est > (double)N) est = (double)N;
    return est;
}

double cla_est_duj1(int64_t N, int64_t ns, int64_t d, int64_t f1)
{
    if (ns >= N) return (double)d;
    double est = duj1((double)ns / (double)N, (double)f1, (double)ns, (double)d);
    if (!(est >= (double)d)) est = (double)d;
    return est > (double)N ? (double)N : est;
}

/* Runs from the sample (RLE sizes, Elgohary et al. section 4.1 estimate
 * them from the sample too): a run of a non-zero tuple starts at row i
 * when row i holds it and row i - 1 does not, so with each sampled row
 * the row before it is read, and the run starts seen among the ns
 * uniformly sampled rows, scaled by N / ns, estimate the runs without
 * bias (a sampled row is a start with probability runs / N; the
 * relative standard error is about sqrt((1 - p) / (ns p)), p = runs /
 * N). Bounded below by the non-zero tuples (each has a run) and above by
 * the estimated non-zero rows. Exact for a full sample. */
double cla_est_runs(int64_t N, int64_t ns, int64_t starts, double dnz, int64_t nzrows)
{
    if (ns <= 0) return 0;
    double q = (double)N / (double)ns;
    double r = (double)starts * q, hi = (double)nzrows * q;
    if (r < dnz) r = dnz;
    return r < hi ? r : hi;
}
