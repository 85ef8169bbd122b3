/* reorg.h: reorganization, indexing and grouping kernels.
 *
 *   reorg.c  t, rev, diag, reshape, lower.tri/upper.tri, order, removeEmpty,
 *            replace, outer, matrix() from a list of values
 *   index.c  right indexing (slices), left indexing (copy and in place),
 *            cbind, rbind
 *   group.c  table (contingency tables), aggregate (grouped aggregates),
 *            unique
 *
 * Conventions of this C API: indexes are 0-based and ranges half-open
 * [lo, hi); the DML layer converts DML's 1-based inclusive ranges. Error
 * messages quote ranges the DML way (1-based, inclusive).
 *
 * Every function returning MB * returns a NEW block the caller owns
 * (refs 1, release with mb_release), or NULL with e set; inputs are never
 * modified (except by the *_inplace functions, which say so). Inputs may
 * be dense or sparse (including the empty sparse block) and of any shape;
 * the output format follows mb_examine's rule. Shape errors contain the
 * word "dimension", out-of-bounds errors the word "index".
 */
#ifndef BRAID_K_REORG_H
#define BRAID_K_REORG_H

#include "../base/ops.h"
#include "../matrix/mb.h"

/* ---- reorg.c ---- */

/* t(a): cols x rows. */
MB *k_transpose(const MB *a, BrErr *e);
/* t(a) as k_transpose, kept on a host sparse a (MB.t_copy) for the next
 * caller while a's values stay (mb_values_changed drops it): an operator
 * driven by the columns of a loop-invariant sparse W (Outer's right_mm)
 * transposes W once, not once per call. Other blocks (dense, compressed,
 * borrowed storage, on the device) are transposed afresh. A new reference
 * either way (release it); the kept block is never to be modified. */
MB *k_transpose_kept(const MB *a, BrErr *e);
/* Transposes k_transpose_kept has made and reused (counted from 0). */
void k_transpose_kept_counts(int64_t *made, int64_t *reused);
/* rev(a): the rows in reverse order. */
MB *k_rev(const MB *a, BrErr *e);
/* diag(a): column vector n x 1 -> n x n diagonal matrix; square n x n ->
 * its diagonal as n x 1; otherwise a "dimension" error. */
MB *k_diag(const MB *a, BrErr *e);
/* matrix(a, rows=, cols=, byrow=): byrow reads and fills row-major,
 * !byrow column-major (as R's matrix()). Cell counts must match. */
MB *k_reshape(const MB *a, int64_t rows, int64_t cols, bool byrow, BrErr *e);
/* lower.tri (lower) / upper.tri (!lower): cells strictly below (above) the
 * diagonal, and the diagonal itself when diag; values keeps the values,
 * otherwise a 0/1 mask. Works for rectangular matrices too. */
MB *k_tri(const MB *a, bool lower, bool diag, bool values, BrErr *e);
/* order(a, by=, decreasing=, index.return=): stable sort of the rows by
 * column by (0-based); ties keep their original order in both directions;
 * NaN sorts last in both directions. Returns the sorted rows, or with
 * index_return the 1-based original row indexes as an n x 1 column. */
MB *k_order(const MB *a, int64_t by, bool decreasing, bool index_return,
            BrErr *e);
/* order(a, by=[k1, k2, ...]): as k_order, by the columns by[0..nby) (0-based)
 * lexicographically: by[0] first, later columns break its ties. */
MB *k_order_multi(const MB *a, const int64_t *by, int64_t nby, bool decreasing,
                  bool index_return, BrErr *e);
/* removeEmpty(a, margin = rows ? "rows" : "cols", select=, empty.return=):
 * keeps the rows (columns) with a non-zero, or, with select (a vector with
 * one entry per row (column)), exactly those whose select entry is
 * non-zero. When nothing is kept: 1 x ncol (nrow x 1) zeros if
 * empty_return, else 0 x ncol (nrow x 0). A select with more cells than
 * that (any shape) acts as SystemDS's: its first cells in row-major order
 * select; a unchanged when its non-zeros number nrow (ncol); with rows,
 * as many rows as its non-zeros, the kept rows first, then zero rows. */
MB *k_rmempty(const MB *a, bool rows, const MB *select, bool empty_return,
              BrErr *e);
/* replace(a, pattern=, replacement=): pattern NaN matches NaN cells;
 * pattern 0 matches zeros (implicit ones too). */
MB *k_replace(const MB *a, double pattern, double replacement, BrErr *e);
/* outer(x, y, op): x n x 1, y 1 x m -> n x m with ops_binary(op, x_i, y_j). */
MB *k_outer(const MB *x, const MB *y, OpCode op, BrErr *e);
/* matrix("v1 v2 ...", rows=, cols=, byrow=): n == rows*cols fills
 * (byrow: row-major, else column-major); n == 1 fills with that value;
 * otherwise a "dimension" error. */
MB *k_matrix_from_values(const double *vals, int64_t n, int64_t rows,
                         int64_t cols, bool byrow, BrErr *e);

/* ---- index.c ---- */

/* a[rl:ru, cl:cu] (half-open), bounds-checked ("index" error). */
MB *k_slice(const MB *a, int64_t rl, int64_t ru, int64_t cl, int64_t cu,
            BrErr *e);
/* A new block equal to target with [rl:ru, cl:cu] replaced by src, which
 * must be (ru-rl) x (cu-cl) ("dimension" error otherwise). */
MB *k_lix(const MB *target, int64_t rl, int64_t ru, int64_t cl, int64_t cu,
          const MB *src, BrErr *e);
/* The same, modifying target in place (the caller owns it exclusively,
 * refs == 1). Costs O(size of src) for a dense target. A sparse target is
 * made dense first when the result would be dense, or when src is dense
 * and the dense target is small (K_LIX_DENSIFY_CELLS); otherwise it stays
 * sparse and the changed rows are spliced into its CSR arrays (cost
 * O(region + nnz after it + rows)). The format is not re-examined
 * afterwards (the runtime does that when the loop ends). Returns 0 or an
 * error code (target unchanged on error). */
int k_lix_inplace(MB *target, int64_t rl, int64_t ru, int64_t cl, int64_t cu,
                  const MB *src, BrErr *e);
/* target[r, c] = v, in place (refs == 1) or into a new block. A sparse
 * target with at most K_LIX_SCALAR_DENSIFY_CELLS cells is made dense by the
 * in-place variant before inserting a new non-zero. */
int k_lix_scalar_inplace(MB *target, int64_t r, int64_t c, double v, BrErr *e);
MB *k_lix_scalar(const MB *target, int64_t r, int64_t c, double v, BrErr *e);
/* Densification thresholds of the in-place left indexing (cells). */
#define K_LIX_DENSIFY_CELLS (INT64_C(1) << 22)
#define K_LIX_SCALAR_DENSIFY_CELLS (INT64_C(1) << 16)

/* cbind / rbind of n >= 1 blocks. Row (column) counts must agree
 * ("dimension" error); a 0 x 0 operand is skipped. */
MB *k_cbind(int n, const MB *const *ms, BrErr *e);
MB *k_rbind(int n, const MB *const *ms, BrErr *e);

/* ---- group.c ---- */

/* table(A, B, W, odim1, odim2): for each cell i (row-major) of the vector
 * operands, out[A_i, B_i] += W_i. A NULL matrix operand stands for its
 * scalar (as, bs, ws) broadcast over the length of the matrix operands;
 * all matrix operands must have the same shape ("dimension"), except that
 * a row and a column vector of the same length pair up in order, and an
 * operand with more rows or columns (and at least as many of both) than
 * the first one contributes its leading block of the first one's shape
 * (SystemDS's MatrixBlock.ctableOperations loops over the first operand's
 * cells and reads the others at the same index). Ids are
 * 1-based (floored); a non-positive id is an error; tuples with a NaN are
 * skipped. The output is max(A) x max(B) when odim1/odim2 < 0, else exactly
 * odim1 x odim2 (entries outside are dropped). */
MB *k_table(const MB *A, double as, const MB *B, double bs, const MB *W,
            double ws, int64_t odim1, int64_t odim2, BrErr *e);
/* aggregate(target=, groups=, fn=, ngroups=, weights=): groups is a vector
 * with one 1-based group id per row of target; fn is "sum", "count",
 * "mean", "variance" (n-1), "min" or "max" (centralmoment: below). One output row per group
 * 1..max(groups), or exactly ngroups rows when ngroups > 0 (larger ids are
 * dropped); groups without rows give 0. Each column of target is
 * aggregated separately. weights (nullable) has target's rows and weighs
 * each row (or target's shape and weighs each cell). */
MB *k_groupagg(const MB *target, const MB *groups, const MB *weights,
               const char *fn, int64_t ngroups, BrErr *e);
/* aggregate(fn="centralmoment", order=): per group the weighted central
 * moment sum_i w_i (x_i - mean)^order / sum_i w_i (as moment(), divided
 * by the total weight), order 2, 3 or 4; same shapes and rules as
 * k_groupagg. */
MB *k_groupagg_cm(const MB *target, const MB *groups, const MB *weights,
                  int order, int64_t ngroups, BrErr *e);
/* unique(a, dir) as SystemDS's (LibMatrixSketch): dir 0 ("rc"): the
 * distinct values of all cells (row-major) as a column vector; 1 ("r"):
 * per row its distinct values, rows padded with zeros to the widest; 2
 * ("c"): the same per column. Values come in the iteration order of
 * Java's HashSet<Double> they are put in (kernels/jhashset.h; one set,
 * cleared between rows or columns, over two passes as SystemDS's): NaNs
 * are one value, -0 and 0 two. */
MB *k_unique(const MB *a, int dir, BrErr *e);

#endif
