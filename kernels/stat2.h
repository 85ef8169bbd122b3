/* stat2.h: tier-2 statistical kernels of DML (stat2.c): the inter-quartile
 * mean, inter-quantile ranges, distinct counts, the circular row shift
 * roll, cumsumprod and contains. (The distributions of cdf/icdf are in
 * dist.h.)
 *
 * Functions returning MB * give a NEW block the caller owns (release with
 * mb_release), or NULL with e set; int functions return 0 or an error
 * code with e set. Inputs are never modified and may be dense or sparse
 * (including the empty block). Shape errors contain "dimension".
 *
 * Order statistics (SystemDS semantics): data are column vectors (n x 1);
 * weights, when given, are a column vector of the same length with
 * non-negative entries, value i counting w_i times. NaN sorts after every
 * number. */
#ifndef BRAID_K_STAT2_H
#define BRAID_K_STAT2_H

#include "../matrix/mb.h"

/* interQuartileMean(x[, w]): the mean of the middle half of the sorted
 * (weighted) values, S = sum of weights: the integral of the quantile
 * step function over (S/4, 3S/4] divided by S/2, so values straddling a
 * quartile count with the part of their weight inside. NaN for S = 0.
 * w may be NULL. */
int k_iqm(const MB *x, const MB *w, double *out, BrErr *e);

/* interQuantile(x[, w], p): the sorted values at the positions
 * ceil(S p) .. ceil(S (1-p)) (1-based, inclusive, the lower bound at
 * least 1) of the weighted sorted sequence, each value repeated as often
 * as its weight covers positions there; a column vector, 0 x 1 when the
 * range is empty (p > 1/2). p in [0, 1]. w may be NULL. */
MB *k_interquantile(const MB *x, const MB *w, double p, BrErr *e);

/* roll(x, shift): circular shift of the rows: row i moves to row
 * (i + shift) mod nrow (negative shifts move rows up). Same shape and
 * format as x. */
MB *k_roll(const MB *x, int64_t shift, BrErr *e);

/* countDistinct(x) over all cells (implicit zeros count as the value 0;
 * all NaNs count as one value; -0 equals 0). */
int k_count_distinct(const MB *x, int64_t *out, BrErr *e);

/* countDistinct per row (rows: nrow x 1) or per column (!rows: 1 x ncol). */
MB *k_count_distinct_dir(const MB *x, bool rows, BrErr *e);

/* contains(target=x, pattern=p): does x hold the value val (row NULL; NaN
 * finds NaN) or, with row a 1 x ncol(x) vector, a row equal to it
 * (NaN equal to NaN)? Sets *out; 0 or an error code ("dimension" when
 * row's width differs). */
int k_contains(const MB *x, const MB *row, double val, bool *out, BrErr *e);

/* cumsumprod(x): x has two columns (a, b); the n x 1 result holds
 * y_i = a_i + b_i * y_(i-1) with y_0 = 0 (SystemDS's running sum of
 * products, na_locf's fill-forward: b = 1 carries the previous value). */
MB *k_cumsumprod(const MB *x, BrErr *e);

#endif
