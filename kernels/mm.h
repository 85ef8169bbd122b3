/* mm.h: matrix multiplication kernels (%*% and its physical variants).
 *
 * Every function returns a NEW block the caller owns (release with
 * mb_release), or NULL with e set; inputs are never modified. Inputs may be
 * dense or sparse (including the empty sparse block); the output format
 * follows the data (mb_examine's rule). Dense x dense products go to
 * OpenBLAS; products with a sparse side use braid's own kernels,
 * parallel over output rows with OpenMP (br_threads()).
 */
#ifndef BRAID_K_MM_H
#define BRAID_K_MM_H

#include "../matrix/mb.h"

/* a (m x k) %*% b (k x n) -> m x n. Shape mismatch: error "dimension". */
MB *k_matmul(const MB *a, const MB *b, BrErr *e);

/* Transpose-self product: left ? t(x) %*% x : x %*% t(x). */
MB *k_tsmm(const MB *x, bool left, BrErr *e);

/* t([x v]) %*% [x v] (x: n x m, v: n x k) -> (m+k) x (m+k): t(x) %*% x,
 * t(x) %*% v and t(v) %*% v in one pass over x (lmDS's normal
 * equations, rewrite/dynamic.c). Dense x and v: TSMM_GROUPS fixed row
 * ranges, each by blocks of ~256 KB of x (t(x) %*% x of a block by
 * tsmm's leaves, then the products with v from L2), partials added in
 * range order: the same bits for every thread count. Otherwise the three
 * parts from k_tsmm and k_matmul_tl, put together by k_tsmm_cbind_of
 * (a: m x m, b: m x k, c: k x k). */
MB *k_tsmm_cbind(const MB *x, const MB *v, BrErr *e);
MB *k_tsmm_cbind_of(const MB *a, const MB *b, const MB *c, BrErr *e);

/* Matrix-multiply chain t(x) %*% (w * (x %*% v)) in one pass over x.
 * x: m x n; v: n x c (a column vector or a few columns); w: NULL (then
 * t(x) %*% (x %*% v)), m x 1 (scales rows) or m x c (elementwise).
 * Result n x c. Dense x multiplies every cell (IEEE: 0 * Inf is NaN, as
 * BLAS); sparse x only its stored values. Rows are summed in fixed blocks
 * whose partials are added in block order: the result has the same bits
 * for every thread count. */
MB *k_mmchain(const MB *x, const MB *v, const MB *w, BrErr *e);

/* t(a) %*% b without materializing t(a) where possible: a (k x m),
 * b (k x n) -> m x n. */
MB *k_matmul_tl(const MB *a, const MB *b, BrErr *e);

/* IEEE products over zeros (docs/DESIGN.md, "NaN and Inf"): r is
 * op(a) %*% op(b) (op: t() where ta/tb) from a kernel that may skip the
 * zeros of an operand (sparse formats, empty operands, compressed
 * groups); every cell whose dot product has a term 0 * Inf or 0 * NaN
 * becomes NaN, as IEEE arithmetic, BLAS and the fused plans give it.
 * Takes r (NULL passes through); returns it or a dense copy, or NULL with
 * e set. */
MB *k_mm_ieee_zeros(const MB *a, bool ta, const MB *b, bool tb, MB *r, BrErr *e);

/* Sets OpenBLAS's thread count to br_threads() (cheap when unchanged).
 * Called before every BLAS/LAPACK call made by the kernels. */
void k_blas_threads(void);
/* Once per process, before the first BLAS product of at least
 * BLAS_WARM_MIN multiply-adds (work): OpenBLAS's packing buffers advised
 * for huge pages (mm.c blas_buffers_huge). Callers of large BLAS
 * products call it before their call. */
void k_blas_ready(double work);

#endif
