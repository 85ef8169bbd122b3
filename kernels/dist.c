/* dist.c: probability distributions of DML's cdf/icdf builtins (see
 * dist.h). Everything here is written from the mathematical definitions:
 *
 *  - normal cdf: erfc with a first-order correction for the rounding of
 *    z/sqrt(2), so tails keep full relative precision;
 *  - normal quantile: Acklam's rational approximation (relative error
 *    about 1e-9) refined by Halley steps on the cdf, or by Newton steps on
 *    log Phi (through the Mills ratio) in the far tail;
 *  - incomplete gamma: the power series (x < a+1) or the Legendre
 *    continued fraction (x >= a+1), each giving the smaller tail directly;
 *  - incomplete beta: the continued fraction of I_x(a,b) on the side of
 *    (a+1)/(a+b+2) where it converges fast, the other tail by symmetry;
 *    for large a and small b (where that fraction loses digits) an
 *    asymptotic expansion in incomplete gamma functions (beta_asym);
 *  - the prefactors x^a e^-x / Gamma(a+1) and x^a y^b / B(a,b) by Loader's
 *    saddle-point form (Stirling remainders and the deviance bd0), which
 *    stays accurate when a and b are large and x is near the mean;
 *  - other quantiles: Newton on log(tail) as a function of log(x), with a
 *    bracket kept from every evaluation and bisection when a step leaves
 *    it (Student t through |T|, whose tails are power laws there).
 */
#include "dist.h"

#include <float.h>
#include <math.h>
#include <strings.h>

#define LN_SQRT_2PI 0.918938533204672741780329736406   /* log(sqrt(2 pi)) */
#define SQRT_2PI    2.506628274631000502415765284811   /* sqrt(2 pi) */
#define TWO_PI      6.283185307179586476925286766559
#define INV_SQRT2_HI 0.7071067811865476                 /* 1/sqrt(2) rounded */
#define INV_SQRT2_LO (-4.833646656726457e-17)           /* 1/sqrt(2) - HI */
#define TWO_OVER_SQRT_PI 1.128379167095512573896158903122
#define TINY 1e-300
#define CF_MAXIT 100000000L

static double lgam(double x)
{
    int sign;
    return lgamma_r(x, &sign);
}

/* ---- building blocks ---- */

/* Stirling remainder: log(n!) - log(sqrt(2 pi n) (n/e)^n), n > 0 (also
 * equal to lgamma(n) - ((n-1/2) log n - n + log sqrt(2 pi))). */
static double stirlerr(double n)
{
    if (n < 10) return lgam(n + 1) - (n + 0.5) * log(n) + n - LN_SQRT_2PI;
    double r = 1 / n, r2 = r * r;
    /* sum of B_2k / (2k (2k-1) n^(2k-1)), k = 1..7 */
    return r * (1.0 / 12 - r2 * (1.0 / 360 - r2 * (1.0 / 1260 - r2 * (1.0 / 1680 -
           r2 * (1.0 / 1188 - r2 * (691.0 / 360360 - r2 / 156))))));
}

/* Deviance term x log(x/M) + M - x for x, M > 0, by its series in
 * v = (x-M)/(x+M) when x is near M (no cancellation). */
static double bd0(double x, double M)
{
    if (fabs(x - M) < 0.1 * (x + M)) {
        double v = (x - M) / (x + M), v2 = v * v;
        double s = (x - M) * v, ej = 2 * x * v;
        for (int j = 1; j < 1000; j++) {
            ej *= v2;
            double s1 = s + ej / (2 * j + 1);
            if (s1 == s) break;
            s = s1;
        }
        return s;
    }
    double r = x / M;
    double lr = (r > 0 && isfinite(r)) ? log(r) : log(x) - log(M);
    return x * lr + M - x;
}

/* x^a e^-x / Gamma(a + 1) for a > 0, x >= 0. */
static double dpois_raw(double a, double x)
{
    if (x <= 0 || isinf(x)) return 0;
    if (a < 10) {
        /* pow keeps x^a to an ulp where exp(a log x) would not */
        double xa = pow(x, a);
        if (xa > DBL_MIN && isfinite(xa)) return xa * exp(-x - lgam(a + 1));
        return exp(a * log(x) - x - lgam(a + 1));
    }
    if (x < 0.135 * a) {   /* far below the saddle: (x/a)^a e^(a-x) by pow */
        double r = pow(x / a, a);
        if (r > DBL_MIN) return r * exp(a - x - stirlerr(a)) / sqrt(TWO_PI * a);
    }
    return exp(-stirlerr(a) - bd0(a, x)) / sqrt(TWO_PI * a);
}

/* bd0(x, M) = x log(x/M) + D for D = M - x known more precisely than
 * M - x (M itself accurate in relative terms). */
static double bd0_diff(double x, double M, double D)
{
    if (fabs(D) < 0.1 * (2 * x + D)) {
        double v = -D / (2 * x + D), v2 = v * v;
        double s = -D * v, ej = 2 * x * v;
        for (int j = 1; j < 1000; j++) {
            ej *= v2;
            double s1 = s + ej / (2 * j + 1);
            if (s1 == s) break;
            s = s1;
        }
        return s;
    }
    if (M < 0.5 * x) return x * log(x / M) + D;
    return D - x * log1p(D / x);   /* x log(x/M) = -x log1p(D/x) */
}

/* log B(s, L) for L >= 10: lgamma(L) - lgamma(s+L) in Stirling form, so
 * no large logarithms cancel. */
static double lbeta_big(double s, double L)
{
    return lgam(s) - (L - 0.5) * log1p(s / L) - s * log(s + L) + s
         + stirlerr(L) - stirlerr(s + L);
}

/* x^a y^b / B(a, b) for y = 1 - x, a, b > 0. Of x and y, the smaller one
 * is taken as exact and the other as 1 minus it (a value near 1 carries
 * an absolute rounding error that a large exponent would amplify). */
static double beta_pref(double x, double y, double a, double b)
{
    if (x <= 0 || y <= 0) return 0;
    bool xsmall = x <= y;
    if (a >= 10 && b >= 10) {
        /* Loader: exp(stirlerr(n) - stirlerr(a) - stirlerr(b) - bd0(a, nx)
         * - bd0(b, ny)) sqrt(ab / (2 pi n)), with nx - a = -(ny - b) */
        double n = a + b;
        double D = xsmall ? fma(n, x, -a) : -fma(n, y, -b);   /* n x - a */
        double Ma = xsmall ? n * x : a + D, Mb = xsmall ? b - D : n * y;
        double lc = stirlerr(n) - stirlerr(a) - stirlerr(b) - bd0_diff(a, Ma, D) - bd0_diff(b, Mb, -D);
        return exp(lc) * sqrt(a / (TWO_PI * n)) * sqrt(b);
    }
    double lx = xsmall ? log(x) : log1p(-y), ly = xsmall ? log1p(-x) : log(y);
    double s = a, L = b;
    if (a > b) { s = b; L = a; }
    double lb = L >= 10 ? lbeta_big(s, L) : lgam(a) + lgam(b) - lgam(a + b);
    /* the smaller of x, y to its power by pow (its logarithm may be large) */
    double pw = xsmall ? pow(x, a) : pow(y, b);
    if (pw > DBL_MIN && isfinite(pw)) return pw * exp((xsmall ? b * ly : a * lx) - lb);
    return exp(a * lx + b * ly - lb);
}

/* ---- normal ---- */

static double mills(double t);

double dist_pnorm(double z, bool lower)
{
    if (isnan(z)) return z;
    double u = lower ? -z : z;   /* result: P[Z > u] = erfc(u/sqrt2)/2 */
    if (isinf(u)) return u > 0 ? 0 : 1;
    if (u > 37) {   /* erfc underflows: phi(u) times the Mills ratio */
        return exp(-0.5 * u * u - LN_SQRT_2PI + log(mills(u)));
    }
    double t = u * INV_SQRT2_HI;
    double dt = fma(u, INV_SQRT2_HI, -t) + u * INV_SQRT2_LO;   /* u/sqrt2 - t */
    double r = erfc(t);
    if (dt != 0 && t < 27) r -= dt * TWO_OVER_SQRT_PI * exp(-t * t);
    return 0.5 * r;
}

/* Mills ratio (1 - Phi(t)) / phi(t) for t >= 8 by its continued fraction
 * 1/(t + 1/(t + 2/(t + 3/(t + ...)))) (modified Lentz). */
static double mills(double t)
{
    double f = t, C = t, D = 0;
    for (int k = 1; k < 10000; k++) {
        D = t + k * D;
        if (D == 0) D = TINY;
        C = t + k / C;
        if (C == 0) C = TINY;
        D = 1 / D;
        double del = C * D;
        f *= del;
        if (fabs(del - 1) <= DBL_EPSILON) break;
    }
    return 1 / f;
}

/* x <= 0 with Phi(x) = p, 0 < p <= 1/2. */
static double qnorm_lower(double p)
{
    static const double a[6] = {-3.969683028665376e+01, 2.209460984245205e+02,
        -2.759285104469687e+02, 1.383577518672690e+02, -3.066479806614716e+01,
        2.506628277459239e+00};
    static const double b[5] = {-5.447609879822406e+01, 1.615858368580409e+02,
        -1.556989798598866e+02, 6.680131188771972e+01, -1.328068155288572e+01};
    static const double c[6] = {-7.784894002430293e-03, -3.223964580411365e-01,
        -2.400758277161838e+00, -2.549732539343734e+00, 4.374664141464968e+00,
        2.938163982698783e+00};
    static const double d[4] = {7.784695709041462e-03, 3.224671290700398e-01,
        2.445134137142996e+00, 3.754408661907416e+00};
    if (p == 0.5) return 0;
    double x;
    if (p < 0.02425) {
        double q = sqrt(-2 * log(p));
        x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    } else {
        double q = p - 0.5, r = q * q;
        x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
            (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
    }
    if (x > -35) {
        /* Halley on Phi(x) - p (phi(x) does not underflow here) */
        for (int it = 0; it < 3; it++) {
            double e = dist_pnorm(x, true) - p;
            double u = e * SQRT_2PI * exp(0.5 * x * x);
            double dx = u / (1 + 0.5 * x * u);
            x -= dx;
            if (fabs(dx) <= 1e-17 * fabs(x)) break;
        }
        return x;
    }
    /* far tail: Newton on log Phi(x) - log p; d/dx log Phi = 1/mills(-x) */
    double lp = log(p);
    for (int it = 0; it < 60; it++) {
        double R = mills(-x);
        double lP = -0.5 * x * x - LN_SQRT_2PI + log(R);
        double dx = (lP - lp) * R;
        x -= dx;
        if (fabs(dx) <= 1e-17 * fabs(x)) break;
    }
    return x;
}

double dist_qnorm(double p, bool lower)
{
    if (isnan(p)) return p;
    if (p <= 0) return lower ? -INFINITY : INFINITY;
    if (p >= 1) return lower ? INFINITY : -INFINITY;
    double s = lower ? 1 : -1;
    if (p > 0.5) return -s * qnorm_lower(1 - p);   /* 1 - p is exact here */
    return s * qnorm_lower(p);
}

/* ---- incomplete gamma ---- */

/* P(a, x) by x^a e^-x / Gamma(a+1) * sum x^n / ((a+1)...(a+n)), x < a+1. */
static double gamma_series(double a, double x)
{
    double pre = dpois_raw(a, x);
    if (pre == 0) return 0;
    double sum = 1, term = 1;
    for (long n = 1; n < CF_MAXIT; n++) {
        term *= x / (a + n);
        sum += term;
        /* the remaining terms sum to at most term * x / (a + n + 1 - x) */
        if (term * x <= sum * (a + n + 1 - x) * (DBL_EPSILON / 4)) break;
    }
    return pre * sum;
}

/* The Legendre continued fraction 1/(x+1-a- 1(1-a)/(x+3-a- 2(2-a)/(x+5-a-
 * ...))) = Q(a, x) Gamma(a) e^x x^-a, for x >= a+1 (modified Lentz). */
static double gamma_cf_ratio(double a, double x)
{
    double b = x + 1 - a, c = 1 / TINY, d = 1 / b, h = d;
    for (long i = 1; i < CF_MAXIT; i++) {
        double an = -(double)i * (i - a);
        b += 2;
        d = an * d + b;
        if (fabs(d) < TINY) d = TINY;
        c = b + an / c;
        if (fabs(c) < TINY) c = TINY;
        d = 1 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) <= DBL_EPSILON) break;
    }
    return h;
}

/* Q(a, x) = x^a e^-x / Gamma(a) times the continued fraction, x >= a+1. */
static double gamma_cf(double a, double x)
{
    double pre = a * dpois_raw(a, x);
    if (pre == 0) return 0;
    return pre * gamma_cf_ratio(a, x);
}

double dist_gamma_p(double a, double x, bool lower)
{
    if (isnan(a) || isnan(x) || !(a > 0)) return NAN;
    if (x <= 0) return lower ? 0 : 1;
    if (isinf(x)) return lower ? 1 : 0;
    if (isinf(a)) return lower ? 0 : 1;
    if (x < a + 1) {
        double p = gamma_series(a, x);
        return lower ? p : 1 - p;
    }
    double q = gamma_cf(a, x);
    return lower ? 1 - q : q;
}

/* ---- incomplete beta ---- */

/* I_x(a, b) by x^a y^b / (a B(a,b)) times the continued fraction
 * 1/(1+ d1/(1+ d2/(1+ ...))), d_2m = m(b-m)x/((a+2m-1)(a+2m)),
 * d_2m+1 = -(a+m)(a+b+m)x/((a+2m)(a+2m+1)); fast for x < (a+1)/(a+b+2). */
static double beta_cf(double x, double y, double a, double b)
{
    double pre = beta_pref(x, y, a, b);
    if (pre == 0) return 0;
    double qab = a + b, qap = a + 1, qam = a - 1;
    double c = 1;
    /* d = 1 - qab x / qap, in the form without cancellation */
    double d = x < 0.5 ? 1 - qab * x / qap : (1 - b + qab * y) / qap;
    if (fabs(d) < TINY) d = TINY;
    d = 1 / d;
    double h = d;
    for (long m = 1; m < CF_MAXIT; m++) {
        double m2 = 2.0 * m;
        double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1 + aa * d;
        if (fabs(d) < TINY) d = TINY;
        c = 1 + aa / c;
        if (fabs(c) < TINY) c = TINY;
        d = 1 / d;
        h *= d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1 + aa * d;
        if (fabs(d) < TINY) d = TINY;
        c = 1 + aa / c;
        if (fabs(c) < TINY) c = TINY;
        d = 1 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) <= DBL_EPSILON) break;
    }
    return pre * h / a;
}

/* B_2k / (2k (2k)!), k = 1..20: log(sinh(w/2)/(w/2)) = sum l_k w^2k. */
static const double LSINH[20] = {
    4.16666666666666644e-02, -3.47222222222222235e-04, 5.51146384479717850e-06,
    -1.03339947089947094e-07, 2.08767569878681002e-09, -4.40349178223957768e-11,
    9.55895466477476975e-13, -2.11855018520161420e-14, 4.77003447570991398e-16,
    -1.08743434927903093e-17, 2.50409219470919546e-19, -5.81436028575521788e-21,
    1.35950270754979524e-22, -3.19768479537055250e-24, 7.55984150779227651e-26,
    -1.79524708402256327e-27, 4.27991904592607298e-29, -1.02388748351814169e-30,
    2.45703533081448546e-32, -5.91255603925157489e-34};

/* I_x(a, b) for large a (>= 15), small b and x >= 1/2, where the
 * continued fraction loses digits (its partial numerators approach -1).
 * With t = e^-s: I = (1/B) int_{s0}^inf e^(-nu s) s^(b-1) h(s) ds,
 * s0 = -log x, nu = a + (b-1)/2, h(s) = (sinh(s/2)/(s/2))^(b-1) =
 * sum d_n s^2n; termwise I = s0^b x^nu / B(a,b) sum d_n e_n with
 * e_n = Gamma(b+2n, z) e^z z^-b / nu^2n, z = nu s0, and
 * e_(n+1) = ((b+2n)(b+2n+1) e_n + (b+2n+1+z) s0^2n) / nu^2. An
 * asymptotic series in 1/nu whose terms fall like (2n)!/(2 pi nu)^2n. */
static double beta_asym(double y, double a, double b)
{
    double s0 = -log1p(-y), nu = a + (b - 1) / 2, z = nu * s0, nu2 = nu * nu;
    double lpre = b * log(s0) - z - lbeta_big(b, a);
    if (lpre < -760) return 0;
    double e0;   /* Gamma(b, z) e^z z^-b */
    if (z >= b + 1) e0 = gamma_cf_ratio(b, z);
    else e0 = (1 - gamma_series(b, z)) / (b * dpois_raw(b, z));
    double d[21] = {1}, en = e0, sum = e0, s2n = 1;
    for (int n = 0; n < 20; n++) {
        en = ((b + 2 * n) * (b + 2 * n + 1) * en + (b + 2 * n + 1 + z) * s2n) / nu2;
        s2n *= s0 * s0;
        double dn = 0;
        for (int k = 1; k <= n + 1; k++) dn += k * LSINH[k - 1] * d[n + 1 - k];
        d[n + 1] = (b - 1) / (n + 1) * dn;
        double term = d[n + 1] * en;
        sum += term;
        if (fabs(term) <= DBL_EPSILON / 4 * fabs(sum)) break;
    }
    return exp(lpre) * sum;
}

/* I_x(a, b) on the side where it is the smaller tail (x below about the
 * mean): the asymptotic expansion when a is large and b small next to it
 * (there the continued fraction would lose about log10(a/b) digits),
 * else the continued fraction. */
static double beta_lower(double x, double y, double a, double b)
{
    if (a >= 15 && x >= 0.5 && (b <= 1 || (b <= 50 && a >= 1000 * b))) return beta_asym(y, a, b);
    return beta_cf(x, y, a, b);
}

double dist_beta_i(double x, double y, double a, double b, bool lower)
{
    if (isnan(x) || isnan(y) || isnan(a) || isnan(b) || !(a > 0) || !(b > 0)) return NAN;
    if (x <= 0) return lower ? 0 : 1;
    if (y <= 0) return lower ? 1 : 0;
    if (x < (a + 1) / (a + b + 2)) {
        double v = beta_lower(x, y, a, b);
        return lower ? v : 1 - v;
    }
    double v = beta_lower(y, x, b, a);
    return lower ? 1 - v : v;
}

/* ---- the distributions ---- */

/* w = n/(n+s^2) and 1 - w for Student t with n degrees of freedom. */
static void t_w(double s, double n, double *w, double *w1)
{
    double s2 = s * s;
    if (s2 > n) { double r = n / s2; *w = r / (1 + r); *w1 = 1 / (1 + r); }
    else { double r = s2 / n; *w = 1 / (1 + r); *w1 = r / (1 + r); }
}

/* P[|T| > s] for s > 1e150, where w = n/(n+s^2) < 1e-300 * n and
 * I_w(n/2, 1/2) = w^(n/2) / ((n/2) B(n/2, 1/2)) (1 + O(w)). */
static double big_t_upper(double s, double n)
{
    double lw = log(n) - 2 * log(s);
    return exp(n / 2 * lw - log(n / 2) - (lgam(n / 2) + lgam(0.5) - lgam(n / 2 + 0.5)));
}

/* P[|T| > s] (upper) or P[|T| <= s] (lower), s >= 0. */
static double abs_t_tail(double s, double n, bool upper)
{
    if (n == 1) {   /* Cauchy: P[|T| > s] = (2/pi) atan(1/s) */
        double u = s > 1 ? 2 / M_PI * atan(1 / s) : 1 - 2 / M_PI * atan(s);
        double l = s > 1 ? 1 - 2 / M_PI * atan(1 / s) : 2 / M_PI * atan(s);
        return upper ? u : l;
    }
    if (s > 1e150) {   /* w = n/(n+s^2) may underflow: I_w(n/2, 1/2) ~ w^(n/2) / (n/2 B) */
        double u = big_t_upper(s, n);
        return upper ? u : 1 - u;
    }
    double w, w1;
    t_w(s, n, &w, &w1);
    return dist_beta_i(w, w1, n / 2, 0.5, upper);
}

static double pt(double t, double n, bool lower)
{
    if (isinf(n)) return dist_pnorm(t, lower);
    double tail = 0.5 * abs_t_tail(fabs(t), n, true);   /* P[T > |t|] */
    if (lower == (t < 0)) return tail;
    return 0.5 + 0.5 * abs_t_tail(fabs(t), n, false);
}

/* w = d1 f / (d1 f + d2) and 1 - w. */
static void f_w(double f, double d1, double d2, double *w, double *w1)
{
    if (f > d2 / d1) { double r = d2 / d1 / f; *w = 1 / (1 + r); *w1 = r / (1 + r); }
    else { double r = d1 / d2 * f; *w = r / (1 + r); *w1 = 1 / (1 + r); }
}

static double pf(double f, double d1, double d2, bool lower)
{
    if (f <= 0) return lower ? 0 : 1;
    if (isinf(f)) return lower ? 1 : 0;
    double w, w1;
    f_w(f, d1, d2, &w, &w1);
    return dist_beta_i(w, w1, d1 / 2, d2 / 2, lower);
}

/* Positive-support helpers for the quantile search: the tail probability
 * and x times the density. kind DIST_T stands for |T| here. */
static double pos_tail(const Dist *d, double x, bool lower)
{
    switch (d->kind) {
    case DIST_CHISQ: return dist_gamma_p(d->p1 / 2, x / 2, lower);
    case DIST_F: return pf(x, d->p1, d->p2, lower);
    case DIST_T: return abs_t_tail(x, d->p1, !lower);
    default: return NAN;
    }
}

static double pos_xdens(const Dist *d, double x)
{
    double w, w1;
    switch (d->kind) {
    case DIST_CHISQ: return d->p1 / 2 * dpois_raw(d->p1 / 2, x / 2);
    case DIST_F:
        f_w(x, d->p1, d->p2, &w, &w1);
        return beta_pref(w, w1, d->p1 / 2, d->p2 / 2);
    case DIST_T:
        if (d->p1 == 1) return 2 / M_PI * x / (1 + x * x);
        if (x > 1e150) return d->p1 * big_t_upper(x, d->p1);
        t_w(x, d->p1, &w, &w1);
        return 2 * beta_pref(w, w1, d->p1 / 2, 0.5);
    default: return NAN;
    }
}

/* A starting point for the quantile search (the search converges from any
 * start; a good one saves iterations). p <= 1/2 is the tail probability. */
static double pos_guess(const Dist *d, double p, bool lower)
{
    if (d->kind == DIST_CHISQ) {
        double df = d->p1, c = 2 / (9 * df);
        double g = 1 - c + dist_qnorm(p, lower) * sqrt(c);   /* Wilson-Hilferty */
        if (g > 0 && (!lower || g * g * g > 0.1)) return df * g * g * g;
        if (lower) {   /* P(a, x/2) ~ (x/2)^a / Gamma(a+1) for small x */
            double a = df / 2;
            return 2 * exp((log(p) + lgam(a + 1)) / a);
        }
        return df;
    }
    if (d->kind == DIST_T) {
        double n = d->p1, z = dist_qnorm(p / 2, lower);   /* two-sided */
        if (!lower) {
            double s = z * (1 + (z * z + 1) / (4 * n));
            if (z * z > n) {   /* power-law tail: P[|T| > s] ~ 2 n^(n/2-1) s^-n / B */
                double lb = lgam(n / 2) + lgam(0.5) - lgam(n / 2 + 0.5);
                s = exp((log(2.0) + (n / 2 - 1) * log(n) - log(p) - lb) / n);
            }
            return s > 0 && isfinite(s) ? s : 1;
        }
        return fmax(fabs(dist_qnorm(0.5 + p / 2, true)), 1e-300);
    }
    return 1;
}

/* The x > 0 with pos_tail(d, x, lower) = p, 0 < p < 1: Newton steps on
 * h(y) = +-(log tail(e^y) - log p), y = log x (h increasing), keeping a
 * bracket [xlo, xhi] from every evaluation and bisecting (geometrically)
 * when a step leaves it; the bracket grows by doubling steps in y until
 * the root is enclosed. Roots beyond the double range give 0 or Inf. */
static double q_pos_search(const Dist *d, double p, bool lower)
{
    if (p > 0.5) { p = 1 - p; lower = !lower; }   /* exact for p in [1/2, 1] */
    double lp = log(p);
    double x = pos_guess(d, p, lower);
    if (!(x > 0) || !isfinite(x)) x = 1;
    double xlo = 0, xhi = INFINITY, step = 1;
    for (int it = 0; it < 600; it++) {
        double T = pos_tail(d, x, lower);
        double h = lower ? log(T) - lp : lp - log(T);
        if (h == 0) return x;
        if (h < 0) xlo = x; else xhi = x;
        if (xlo > 0 && xhi - xlo <= 4 * DBL_EPSILON * xlo) return x;
        double fx = pos_xdens(d, x), xn = NAN;
        if (T > 0 && fx > 0 && isfinite(h)) {
            double dy = -h * T / fx;
            xn = x * exp(dy);
            if (xn > xlo && xn < xhi) {
                if (fabs(dy) <= 1e-14) return xn;
            } else xn = NAN;
        }
        if (isnan(xn)) {
            if (xlo > 0 && xhi < INFINITY) {
                xn = sqrt(xlo) * sqrt(xhi);
                if (xn <= xlo || xn >= xhi || xhi - xlo <= 2 * DBL_EPSILON * xlo) return xn;
            } else if (xlo > 0) {
                if (xlo >= DBL_MAX) return INFINITY;
                xn = fmin(xlo * exp(step), DBL_MAX);
                step *= 2;
            } else {
                if (xhi <= DBL_TRUE_MIN) return 0;
                xn = fmax(xhi * exp(-step), DBL_TRUE_MIN);
                step *= 2;
            }
        }
        x = xn;
    }
    return x;
}

/* q_pos_search, with roots below the subnormal range reported as 0: the
 * search ends at a subnormal x whose tail underflows in intermediate
 * steps (x/2, d1 x/d2) or still exceeds p. */
static double q_pos(const Dist *d, double p, bool lower)
{
    double x = q_pos_search(d, p, lower);
    if (x < 2 * DBL_TRUE_MIN) return 0;
    if (x < DBL_MIN) {
        bool lo = p > 0.5 ? !lower : lower;
        double pp = p > 0.5 ? 1 - p : p, T = pos_tail(d, x, lo);
        if (lo && !(T > 0 && T < 2 * pp)) return 0;
    }
    return x;
}

static double qt(double p, double n, bool lower)
{
    if (isinf(n)) return dist_qnorm(p, lower);
    if (p == 0.5) return 0;
    /* lower tail p < 1/2 at x < 0: P[|T| > -x] = 2p */
    bool neg = (p < 0.5) == lower;
    double q = p < 0.5 ? p : 1 - p;   /* exact */
    double s;
    if (n == 1)   /* Cauchy */
        s = q < 0.25 ? 1 / tan(M_PI * q) : tan(M_PI * (0.5 - q));
    else {
        Dist at = {DIST_T, n, 0};
        s = q_pos(&at, 2 * q, false);
    }
    return neg ? -s : s;
}

int dist_kind(const char *name)
{
    static const char *names[] = {"normal", "t", "f", "chisq", "exp"};
    static const DistKind kinds[] = {DIST_NORMAL, DIST_T, DIST_F, DIST_CHISQ, DIST_EXP};
    for (int i = 0; i < 5; i++)
        if (!strcasecmp(name, names[i])) return (int)kinds[i];
    return -1;
}

int dist_check(const Dist *d, BrErr *e)
{
    switch (d->kind) {
    case DIST_NORMAL:
        if (!(d->p2 > 0))
            return br_err(e, BR_EARG, "standard deviation for the normal distribution must be positive (%g)", d->p2);
        return 0;
    case DIST_T:
        if (!(d->p1 > 0))
            return br_err(e, BR_EARG, "degrees of freedom for the t distribution must be positive (%g)", d->p1);
        return 0;
    case DIST_F:
        if (!(d->p1 > 0) || !(d->p2 > 0) || isinf(d->p1) || isinf(d->p2))
            return br_err(e, BR_EARG, "degrees of freedom for the F distribution must be positive and finite (%g, %g)",
                          d->p1, d->p2);
        return 0;
    case DIST_CHISQ:
        if (!(d->p1 > 0) || isinf(d->p1))
            return br_err(e, BR_EARG, "degrees of freedom for the chi-squared distribution must be positive and finite (%g)",
                          d->p1);
        return 0;
    case DIST_EXP:
        if (!(d->p1 > 0) || isinf(d->p1))
            return br_err(e, BR_EARG, "rate for the exponential distribution must be positive and finite (%g)", d->p1);
        return 0;
    }
    return br_err(e, BR_EARG, "unknown distribution");
}

int dist_cdf(const Dist *d, double x, bool lower, double *out, BrErr *e)
{
    if (dist_check(d, e)) return e->code;
    if (isnan(x)) { *out = x; return 0; }
    switch (d->kind) {
    case DIST_NORMAL: *out = dist_pnorm((x - d->p1) / d->p2, lower); break;
    case DIST_T: *out = pt(x, d->p1, lower); break;
    case DIST_F: *out = pf(x, d->p1, d->p2, lower); break;
    case DIST_CHISQ:
        *out = x <= 0 ? (lower ? 0 : 1) : dist_gamma_p(d->p1 / 2, x / 2, lower);
        break;
    case DIST_EXP:
        if (x <= 0) *out = lower ? 0 : 1;
        else *out = lower ? -expm1(-d->p1 * x) : exp(-d->p1 * x);
        break;
    }
    return 0;
}

int dist_icdf(const Dist *d, double p, bool lower, double *out, BrErr *e)
{
    if (dist_check(d, e)) return e->code;
    if (isnan(p)) { *out = p; return 0; }
    if (p < 0 || p > 1)
        return br_err(e, BR_EARG, "probability %g is outside the range [0, 1]", p);
    bool pos = d->kind != DIST_NORMAL && d->kind != DIST_T;   /* support [0, Inf) */
    if (p == 0 || p == 1) {
        bool top = (p == 1) == lower;
        *out = top ? INFINITY : (pos ? 0 : -INFINITY);
        return 0;
    }
    switch (d->kind) {
    case DIST_NORMAL: *out = d->p1 + d->p2 * dist_qnorm(p, lower); break;
    case DIST_T: *out = qt(p, d->p1, lower); break;
    case DIST_F: case DIST_CHISQ: *out = q_pos(d, p, lower); break;
    case DIST_EXP: *out = (lower ? -log1p(-p) : -log(p)) / d->p1; break;
    }
    return 0;
}
