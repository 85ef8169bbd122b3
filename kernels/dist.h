/* dist.h: the probability distributions behind DML's cdf/icdf family
 * (normal, Student t, F, chi-squared, exponential) and the special
 * functions they rest on: the standard normal cdf and quantile, the
 * regularized incomplete gamma function P(a,x)/Q(a,x) and the regularized
 * incomplete beta function I_x(a,b).
 *
 * Accuracy: about 1e-14 relative in the body and the tails, down to the
 * underflow threshold (upper tails are computed directly, never as
 * 1 - lower); about 1e-12 when a shape parameter reaches 1e8 and more
 * (the cost grows like its square root: 0.4 ms at df = 2^31).
 * Methods: erfc with an argument correction (normal), series and
 * continued fractions with Loader's saddle-point prefactors (gamma,
 * beta), an asymptotic expansion in incomplete gamma functions for
 * I_x(a, b) with large a and small b (Student t with large df), Acklam's
 * rational approximation refined by Halley steps (normal quantile),
 * Newton on log tail probabilities against log x with a bisection
 * safeguard (other quantiles; 0 or Inf beyond the double range).
 *
 * All functions are pure and thread-safe. */
#ifndef BRAID_K_DIST_H
#define BRAID_K_DIST_H

#include <stdbool.h>

#include "../base/base.h"

typedef enum { DIST_NORMAL, DIST_T, DIST_F, DIST_CHISQ, DIST_EXP } DistKind;

/* A distribution with its parameters:
 *   DIST_NORMAL  p1 = mean, p2 = sd (> 0)
 *   DIST_T       p1 = df (> 0; +Inf gives the standard normal)
 *   DIST_F       p1 = df1, p2 = df2 (both > 0 and finite)
 *   DIST_CHISQ   p1 = df (> 0 and finite)
 *   DIST_EXP     p1 = rate (> 0 and finite; mean 1/rate) */
typedef struct Dist {
    DistKind kind;
    double p1, p2;
} Dist;

/* The kind named by "normal", "t", "f", "chisq" or "exp" (case-insensitive,
 * as SystemDS), or -1. */
int dist_kind(const char *name);

/* Checks the parameters of d; 0 or BR_EARG with a message. */
int dist_check(const Dist *d, BrErr *e);

/* P[X <= x] (lower) or P[X > x] (!lower). NaN x gives NaN. */
int dist_cdf(const Dist *d, double x, bool lower, double *out, BrErr *e);

/* The quantile: x with P[X <= x] = p (lower) or P[X > x] = p (!lower).
 * p must be in [0, 1] (BR_EARG otherwise); p = 0 and 1 give the ends of
 * the support (possibly infinite). NaN p gives NaN. */
int dist_icdf(const Dist *d, double p, bool lower, double *out, BrErr *e);

/* ---- special functions (NaN arguments give NaN) ---- */

/* Standard normal: Phi(z) (lower) or 1 - Phi(z) (!lower). */
double dist_pnorm(double z, bool lower);
/* Standard normal quantile for p in [0, 1]; +-Inf at the ends. */
double dist_qnorm(double p, bool lower);
/* Regularized incomplete gamma P(a, x) (lower) or Q(a, x) (!lower),
 * a > 0. */
double dist_gamma_p(double a, double x, bool lower);
/* Regularized incomplete beta I_x(a, b) (lower) or 1 - I_x(a, b)
 * (!lower), a, b > 0, x in [0, 1]; y must be 1 - x, passed separately so
 * that callers who know it more precisely than 1 - x keep the precision. */
double dist_beta_i(double x, double y, double a, double b, bool lower);

#endif
