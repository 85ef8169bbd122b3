/* agg.h: aggregate kernels: full/row/column aggregates, trace, cumulative
 * aggregates (agg.c) and order statistics and moments (agg_stats.c).
 *
 * Functions returning MB * give a NEW block the caller owns (release with
 * mb_release), or NULL with e set; int functions return 0 or an error code
 * with e set. Inputs are never modified and may be dense or sparse; implicit
 * zeros of sparse inputs count as cells (min of a sparse row with fewer
 * non-zeros than columns includes 0, mean and var run over all cells).
 *
 * Semantics (SystemDS's):
 *  - sums use Kahan summation within fixed-size blocks whose partials are
 *    combined in a fixed order, so results do not depend on the thread
 *    count; an infinite partial resets the correction (sum(c(Inf,1)) = Inf);
 *  - var/sd divide by n-1 (n == 1 gives 0), computed in two passes (mean,
 *    then squared deviations), so values far from zero keep their precision;
 *  - min/max propagate NaN; over 0 cells: sum 0, prod 1, min +Inf,
 *    max -Inf, mean/var/sd NaN;
 *  - rowIndexMax/rowIndexMin give the 1-based column of the LAST extreme
 *    cell (implicit zeros included); NaN cells are ignored, a row of only
 *    NaN gives 1, a row of a 0-column matrix gives 0.
 */
#ifndef BRAID_K_AGG_H
#define BRAID_K_AGG_H

#include "../base/ops.h"
#include "../matrix/mb.h"

/* op in OP_SUM, OP_SUMSQ, OP_MEAN, OP_VAR, OP_SD, OP_AMIN, OP_AMAX, OP_PROD
 * (any direction), OP_IDXMAX, OP_IDXMIN (DIR_ROW only). Result: DIR_FULL
 * 1x1, DIR_ROW nrow x 1, DIR_COL 1 x ncol. */
MB *k_agg(OpCode op, AggDir dir, const MB *a, BrErr *e);

/* A column aggregate in phases (CPU stitching, kernels/spoof_row.c):
 * the same row blocks, leaf kernels and merge order as k_agg's DIR_COL,
 * so the values are k_agg's to the bit. op: k_colagg_ok (OP_SUM, OP_MEAN,
 * OP_AMIN, OP_AMAX, and OP_VAR, OP_SD given m, the column means as
 * k_colagg_end of OP_MEAN gives them: the squared deviations' pass); a
 * plain (not compressed) matrix, which (and m) must outlive g. begin plans the tasks (row blocks, dense ones times column chunks)
 * and allocates their partials (NULL with e set: out of memory);
 * k_colagg_task runs task t (tasks may run concurrently, in any order;
 * false: out of memory); k_colagg_rows gives its rows; k_colagg_end
 * merges the blocks in order into res[0..cols) and frees g (k_colagg_free
 * frees it unfinished). */
typedef struct KColAgg KColAgg;
bool k_colagg_ok(OpCode op);
KColAgg *k_colagg_begin(OpCode op, const MB *a, const double *m, BrErr *e);
int64_t k_colagg_ntasks(const KColAgg *g);
void k_colagg_rows(const KColAgg *g, int64_t t, int64_t *r0, int64_t *r1);
bool k_colagg_task(KColAgg *g, int64_t t);
int k_colagg_end(KColAgg *g, double *res);
void k_colagg_free(KColAgg *g);

/* Full aggregate as a scalar in *out (same operators as k_agg, DIR_FULL). */
int k_agg_full(OpCode op, const MB *a, double *out, BrErr *e);

/* Sum of the diagonal of a square matrix (error "dimension" otherwise);
 * NaN with e set on error. */
double k_trace(const MB *a, BrErr *e);

/* Cumulative aggregate down each column: op in OP_CUMSUM (Kahan),
 * OP_CUMPROD, OP_CUMMIN, OP_CUMMAX (NaN propagates). Same shape as a. */
MB *k_cum(OpCode op, const MB *a, BrErr *e);

/* ---- order statistics and moments (agg_stats.c). Data arguments are
 * column vectors (n x 1; error "dimension" otherwise); weights, when
 * given, are a column vector of the same length, each value counted
 * weight times (non-negative). ---- */

/* Median: the middle value, or the mean of the two middle values when the
 * (total weight) count is even. NaN for an empty vector. */
int k_median(const MB *a, double *out, BrErr *e);
int k_median_w(const MB *a, const MB *w, double *out, BrErr *e);

/* quantile(a, p): the ceil(p*n)-th smallest value (p = 0: the smallest);
 * p in [0, 1]. k_quantile takes a column vector of probabilities and gives
 * a column vector of quantiles. NaN values sort last. */
int k_quantile1(const MB *a, double p, double *out, BrErr *e);
MB *k_quantile(const MB *a, const MB *p, BrErr *e);
MB *k_quantile_w(const MB *a, const MB *w, const MB *p, BrErr *e);

/* Central moment of order 2, 3 or 4, divided by n (weighted: by the sum of
 * the weights). w may be NULL. */
int k_moment(const MB *x, int order, const MB *w, double *out, BrErr *e);

/* Covariance of x and y, divided by n-1 (weighted: sum(w)-1; 0 when that
 * count is 1). w may be NULL. */
int k_cov(const MB *x, const MB *y, const MB *w, double *out, BrErr *e);

#endif
