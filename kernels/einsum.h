/* einsum.h: Einstein summation over matrices, SystemDS's einsum():
 *
 *   einsum("ij,jk->ik", A, B)       (A %*% B)
 *
 * The equation names each operand's axes with one or two letters (rows,
 * then columns; one letter: a column vector, n x 1), operands separated by
 * ','; blanks are ignored. Every combination of values of the letters
 * contributes the product of the operands' cells to the output cell its
 * output letters select; letters not in the output are summed over. After
 * "->" come 0 to 2 distinct output letters (rows, then columns; one
 * letter: n x 1); without output letters, or without "->" at all (as
 * SystemDS reads "ij,ij"), the result is the full sum, a scalar. A letter
 * must have one size wherever it appears; a repeated letter within an
 * operand ("ii") walks its diagonal.
 */
#ifndef BRAID_K_EINSUM_H
#define BRAID_K_EINSUM_H

#include "../matrix/mb.h"

/* The result of eq over ops[0..n): a new block (1 x 1 when *scalar), or
 * NULL with e set (the message says what in eq is wrong). */
MB *k_einsum(const char *eq, const MB *const *ops, int n, bool *scalar, BrErr *e);

#endif
