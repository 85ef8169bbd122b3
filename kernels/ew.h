/* ew.h: elementwise kernels (unary, binary with broadcasting, matrix-scalar,
 * ternary ifelse).
 *
 * Every function returns a NEW block the caller owns (release with
 * mb_release), or NULL with e set; inputs are never modified. Inputs may be
 * dense or sparse (including the empty sparse block). Per-cell semantics are
 * those of ops_unary / ops_binary (base/ops.h), so scalar and matrix
 * evaluation agree. Sparse-safe operators (OF_SAFE, OF_MULT, or f(0,s)==0
 * for a scalar s) iterate non-zeros and keep sparse outputs; the others
 * produce dense outputs. Outputs whose nnz may change go through mb_examine.
 *
 * Like SystemDS, multiplicative operators (OF_MULT) on a sparse operand
 * iterate only its non-zeros, so 0 * Inf / 0 * NaN in cells where the sparse
 * side holds an implicit zero give 0 rather than NaN.
 */
#ifndef BRAID_K_EW_H
#define BRAID_K_EW_H

#include "../base/ops.h"
#include "../matrix/mb.h"

/* f(a) cellwise for an OK_UNARY operator. */
MB *k_unary(OpCode op, const MB *a, BrErr *e);

/* a op b cellwise for an OK_BINARY operator. Shapes (checked in this
 * order): equal; b a row vector (1 x ncol(a)) or a column vector
 * (nrow(a) x 1) broadcast over a; a a row vector (1 x ncol(b)) or column
 * vector (nrow(b) x 1) broadcast over b; a (m x 1) with b (1 x n) gives the
 * m x n outer result; b of 1 x 1 with any a: a op as.scalar(b)
 * (SystemDS's simplifyScalarMVBinaryOperation). Anything else: error
 * "dimension mismatch". */
MB *k_binary(OpCode op, const MB *a, const MB *b, BrErr *e);

/* a op s (matrix-scalar) and s op a (scalar-matrix). */
MB *k_binary_ms(OpCode op, const MB *a, double s, BrErr *e);
MB *k_binary_sm(OpCode op, double s, const MB *a, BrErr *e);

/* ifelse(c, a, b) cellwise: (c != 0) ? a : b (NaN counts as true). Each
 * operand is the matrix given or, when its pointer is NULL, the scalar next
 * to it. Matrix operands must have the output shape or be a row vector
 * (1 x n) / column vector (m x 1) broadcast over it. All scalars: 1x1. */
MB *k_ifelse(const MB *c, double cs, const MB *a, double as, const MB *b,
             double bs, BrErr *e);

#endif
