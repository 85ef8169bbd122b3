/* la.h: dense linear algebra builtins (solve inv cholesky det eigen svd qr
 * lu) via LAPACKE, with SystemDS's output conventions.
 *
 * Inputs may be dense or sparse (LAPACK works on dense copies). Every
 * returned block is new and owned by the caller (mb_release); on failure
 * functions return NULL / non-zero with e set and no outputs allocated.
 * Shape errors contain "dimension"; singular systems "singular".
 */
#ifndef BRAID_K_LA_H
#define BRAID_K_LA_H

#include "../matrix/mb.h"

/* solve(a, b): x with a %*% x = b. Square a: LU (dgesv); otherwise the
 * least-squares (m > n) or minimum-norm (m < n) solution (dgels).
 * a: m x n, b: m x c -> n x c. */
MB *k_solve(const MB *a, const MB *b, BrErr *e);

/* inv(a) for square a. Singular (a pivot below 1e-11 times the largest
 * pivot, or exactly zero) -> error "singular". */
MB *k_inv(const MB *a, BrErr *e);

/* cholesky(a): lower-triangular L with a = L %*% t(L). a must be square,
 * symmetric (relative tolerance 1e-6, as SystemDS) and positive definite. */
MB *k_cholesky(const MB *a, BrErr *e);

/* det(a) of a square a into *out (0x0: 1). Returns 0 or an error code. */
int k_det(const MB *a, double *out, BrErr *e);

/* eigen(a) of a square a: *values (n x 1, ascending) and *vectors (n x n,
 * unit eigenvectors as columns, matching order). Symmetric a uses dsyevr;
 * otherwise dgeev, and complex eigenvalues are an error. */
int k_eigen(const MB *a, MB **values, MB **vectors, BrErr *e);

/* svd(a) of a (m x n), economy form with p = min(m, n): *U (m x p),
 * *S (p x p diagonal, singular values descending), *V (n x p), with
 * a = U %*% S %*% t(V). */
int k_svd(const MB *a, MB **U, MB **S, MB **V, BrErr *e);

/* qr(a) of a (m x n): *H (m x n, lower trapezoidal; column j is the j-th
 * Householder vector h_j with reflector I - h_j t(h_j) / h_j[j], i.e.
 * LAPACK's tau_j * v_j as Apache Commons Math's getH) and *R (m x n,
 * upper triangular), a = Q %*% R with Q = P_1 %*% ... %*% P_p. */
int k_qr(const MB *a, MB **H, MB **R, BrErr *e);

/* lu(a) of a square a: permutation *P, unit lower-triangular *L and upper
 * triangular *U with P %*% a = L %*% U (partial pivoting). */
int k_lu(const MB *a, MB **P, MB **L, MB **U, BrErr *e);

#endif
