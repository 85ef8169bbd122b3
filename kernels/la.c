/* la.c: linear algebra builtins on LAPACKE (row-major layout throughout;
 * LAPACK works on a dense copy of every input). Output conventions follow
 * SystemDS (which uses Apache Commons Math): see la.h. */
#include "la.h"
#include "mm.h"

#include <lapacke.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Recount non-zeros of a dense result and pick its format; releases r on
 * failure. LAPACK wrote the values of r, a conversion of an operand
 * (mb_to_dense keeps the operand's finiteness flag): dropped. */
static MB *finish(MB *r, BrErr *e)
{
    if (!r) return NULL;
    mb_values_changed(r);
    if (!r->sparse) mb_recount_nnz(r);
    if (mb_examine(r, e)) { mb_release(r); return NULL; }
    return r;
}

static int too_big(const MB *a, const char *op, BrErr *e)
{
    if (a->rows > INT_MAX || a->cols > INT_MAX)
        return br_err(e, BR_EDIM, "%s: matrix too large for LAPACK (%lldx%lld)", op,
                      (long long)a->rows, (long long)a->cols);
    return 0;
}

static int need_square(const MB *a, const char *op, BrErr *e)
{
    if (a->rows != a->cols)
        return br_err(e, BR_EDIM, "%s requires a square matrix, got dimensions %lldx%lld",
                      op, (long long)a->rows, (long long)a->cols);
    return too_big(a, op, e);
}

static int need_finite(const MB *a, const char *op, BrErr *e)
{
    int64_t n = a->sparse ? a->nnz : a->rows * a->cols;
    const double *v = a->sparse ? a->v : a->d;
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return br_err(e, BR_EARG, "%s: input contains non-finite values (NaN or Inf)", op);
    return 0;
}

static int lapack_fail(const char *op, int info, BrErr *e)
{
    return br_err(e, BR_EFAIL, "%s: LAPACK failed (info %d)", op, info);
}

/* True if the square row-major d is symmetric within relative tol. */
static bool is_symmetric(const double *d, int64_t n, double tol)
{
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++) {
            double x = d[i * n + j], y = d[j * n + i];
            if (fabs(x - y) > tol * fmax(fabs(x), fabs(y))) return false;
        }
    return true;
}

/* solve(a, b) (see la.h). SystemDS solves with a QR decomposition and
 * fails only on an exactly singular factor; dgesv/dgels do the same. */
MB *k_solve(const MB *a, const MB *b, BrErr *e)
{
    int64_t m = a->rows, n = a->cols, c = b->cols;
    if (b->rows != m) {
        br_err(e, BR_EDIM, "solve: dimension mismatch: A is %lldx%lld, b is %lldx%lld",
               (long long)m, (long long)n, (long long)b->rows, (long long)c);
        return NULL;
    }
    if (too_big(a, "solve", e) || too_big(b, "solve", e)) return NULL;
    if (m == 0 || n == 0 || c == 0) return mb_empty(n, c, e);
    MB *A = mb_to_dense(a, e), *B = NULL, *x = NULL;
    if (!A) return NULL;
    k_blas_threads();
    if (m == n) {
        lapack_int *ipiv = br_malloc((size_t)n * sizeof *ipiv);
        if (!ipiv) { br_err(e, BR_ENOMEM, "solve: out of memory"); goto done; }
        if (!(B = mb_to_dense(b, e))) { free(ipiv); goto done; }
        int info = LAPACKE_dgesv(LAPACK_ROW_MAJOR, (int)n, (int)c, A->d, (int)n, ipiv,
                                 B->d, (int)c);
        free(ipiv);
        if (info > 0) { br_err(e, BR_EARG, "solve: matrix is singular"); goto done; }
        if (info < 0) { lapack_fail("solve", info, e); goto done; }
        x = B; B = NULL;
    } else {
        /* dgels needs b with max(m, n) rows; the solution is the top n */
        int64_t rows = BR_MAX(m, n);
        MB *bd = mb_to_dense(b, e);
        if (!bd) goto done;
        B = mb_dense(rows, c, e);
        if (!B) { mb_release(bd); goto done; }
        memcpy(B->d, bd->d, (size_t)(m * c) * sizeof(double));
        mb_release(bd);
        int info = LAPACKE_dgels(LAPACK_ROW_MAJOR, 'N', (int)m, (int)n, (int)c, A->d, (int)n,
                                 B->d, (int)c);
        if (info > 0) {
            br_err(e, BR_EARG, "solve: matrix is singular (not of full rank)");
            goto done;
        }
        if (info < 0) { lapack_fail("solve", info, e); goto done; }
        if (!(x = mb_dense_uninit(n, c, e))) goto done;
        memcpy(x->d, B->d, (size_t)(n * c) * sizeof(double));
    }
done:
    mb_release(A);
    mb_release(B);
    return finish(x, e);
}

/* True if the LU factor (n x n) has a zero pivot or one below 1e-11 times
 * the largest pivot (SystemDS's LU singularity threshold is 1e-11; made
 * relative here so scaling a matrix does not change the answer). */
static bool lu_singular(const double *lu, int64_t n)
{
    double mx = 0;
    for (int64_t i = 0; i < n; i++) mx = fmax(mx, fabs(lu[i * n + i]));
    for (int64_t i = 0; i < n; i++) {
        double d = fabs(lu[i * n + i]);
        if (d == 0 || d < 1e-11 * mx) return true;
    }
    return false;
}

/* inv(a) (see la.h). */
MB *k_inv(const MB *a, BrErr *e)
{
    if (need_square(a, "inv", e)) return NULL;
    int64_t n = a->rows;
    if (n == 0) return mb_empty(0, 0, e);
    MB *A = mb_to_dense(a, e);
    if (!A) return NULL;
    lapack_int *ipiv = br_malloc((size_t)n * sizeof *ipiv);
    if (!ipiv) {
        mb_release(A);
        br_err(e, BR_ENOMEM, "inv: out of memory");
        return NULL;
    }
    k_blas_threads();
    int rc = 0;
    int info = LAPACKE_dgetrf(LAPACK_ROW_MAJOR, (int)n, (int)n, A->d, (int)n, ipiv);
    if (info > 0 || (info == 0 && lu_singular(A->d, n)))
        rc = br_err(e, BR_EARG, "inv: cannot invert a singular matrix");
    else if (info < 0)
        rc = lapack_fail("inv", info, e);
    else if ((info = LAPACKE_dgetri(LAPACK_ROW_MAJOR, (int)n, A->d, (int)n, ipiv)) != 0)
        rc = info > 0 ? br_err(e, BR_EARG, "inv: cannot invert a singular matrix")
                      : lapack_fail("inv", info, e);
    free(ipiv);
    if (rc) { mb_release(A); return NULL; }
    return finish(A, e);
}

/* cholesky(a) (see la.h). Symmetry is checked like Commons Math's
 * CholeskyDecomposition as SystemDS calls it (LibCommonsMath's relative
 * threshold 1e-6: covariances computed as t(X) %*% X - t(M) %*% M, as in
 * gmm's "EEE" model, are symmetric only up to rounding). */
MB *k_cholesky(const MB *a, BrErr *e)
{
    if (need_square(a, "cholesky", e)) return NULL;
    int64_t n = a->rows;
    if (n == 0) return mb_empty(0, 0, e);
    MB *A = mb_to_dense(a, e);
    if (!A) return NULL;
    if (!is_symmetric(A->d, n, 1e-6)) {
        br_err(e, BR_EARG, "cholesky: matrix is not symmetric");
        mb_release(A);
        return NULL;
    }
    k_blas_threads();
    int info = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', (int)n, A->d, (int)n);
    if (info != 0) {
        if (info > 0) br_err(e, BR_EARG, "cholesky: matrix is not positive definite");
        else lapack_fail("cholesky", info, e);
        mb_release(A);
        return NULL;
    }
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++) A->d[i * n + j] = 0;
    return finish(A, e);
}

/* det(a) (see la.h): product of the LU pivots with the permutation sign. */
int k_det(const MB *a, double *out, BrErr *e)
{
    int rc = need_square(a, "det", e);
    if (rc) return rc;
    int64_t n = a->rows;
    *out = 1;
    if (n == 0) return 0;
    if (a->nnz == 0) { *out = 0; return 0; }
    MB *A = mb_to_dense(a, e);
    if (!A) return BR_ENOMEM;
    lapack_int *ipiv = br_malloc((size_t)n * sizeof *ipiv);
    if (!ipiv) { mb_release(A); return br_err(e, BR_ENOMEM, "det: out of memory"); }
    k_blas_threads();
    int info = LAPACKE_dgetrf(LAPACK_ROW_MAJOR, (int)n, (int)n, A->d, (int)n, ipiv);
    if (info < 0) rc = lapack_fail("det", info, e);
    double d = 1;
    for (int64_t i = 0; i < n; i++) {
        d *= A->d[i * n + i];
        if (ipiv[i] != i + 1) d = -d;
    }
    free(ipiv);
    mb_release(A);
    if (!rc) *out = d;
    return rc;
}

/* Stable insertion sort of idx[0..n) by key ascending (n is small next to
 * the O(n^3) decomposition). */
static void sort_by_key(int64_t *idx, const double *key, int64_t n)
{
    for (int64_t i = 1; i < n; i++) {
        int64_t t = idx[i], j = i;
        while (j > 0 && key[idx[j - 1]] > key[t]) { idx[j] = idx[j - 1]; j--; }
        idx[j] = t;
    }
}

/* Non-symmetric eigen decomposition with dgeev; real spectra only. Fills
 * w (n) and Z (n x n, columns = unit eigenvectors), unsorted. */
static int eigen_general(MB *A, double *w, MB *Z, BrErr *e)
{
    int64_t n = A->rows;
    int rc = 0;
    double *wi = br_malloc((size_t)n * sizeof(double));
    if (!wi) return br_err(e, BR_ENOMEM, "eigen: out of memory");
    int info = LAPACKE_dgeev(LAPACK_ROW_MAJOR, 'N', 'V', (int)n, A->d, (int)n, w, wi,
                             NULL, 1, Z->d, (int)n);
    if (info > 0) rc = br_err(e, BR_EFAIL, "eigen: the QR algorithm did not converge");
    else if (info < 0) rc = lapack_fail("eigen", info, e);
    else
        for (int64_t i = 0; i < n && !rc; i++)
            if (wi[i] != 0)
                rc = br_err(e, BR_EARG, "eigen: matrix has complex eigenvalues (not supported)");
    free(wi);
    return rc;
}

/* eigen(a) (see la.h). */
int k_eigen(const MB *a, MB **values, MB **vectors, BrErr *e)
{
    *values = *vectors = NULL;
    int rc = need_square(a, "eigen", e);
    if (!rc) rc = need_finite(a, "eigen", e);
    if (rc) return rc;
    int64_t n = a->rows;
    MB *A = NULL, *W = NULL, *Z = NULL, *V = NULL;
    lapack_int *isuppz = NULL;
    int64_t *idx = NULL;
    if (n == 0) {
        W = mb_empty(0, 1, e);
        V = mb_empty(0, 0, e);
        goto done;
    }
    A = mb_to_dense(a, e);
    W = mb_dense(n, 1, e);
    Z = mb_dense(n, n, e);
    V = mb_dense_uninit(n, n, e);
    isuppz = br_malloc((size_t)(2 * n) * sizeof *isuppz);
    idx = br_malloc((size_t)n * sizeof *idx);
    if (!A || !W || !Z || !V || !isuppz || !idx) goto done;
    k_blas_threads();
    /* Commons Math's symmetry test: relative 10 * n * n * eps */
    if (is_symmetric(A->d, n, 10.0 * (double)n * (double)n * 2.220446049250313e-16)) {
        int found = 0;
        int info = LAPACKE_dsyevr(LAPACK_ROW_MAJOR, 'V', 'A', 'L', (int)n, A->d, (int)n,
                                  0.0, 0.0, 0, 0, 0.0, &found, W->d, Z->d, (int)n, isuppz);
        if (info > 0) rc = br_err(e, BR_EFAIL, "eigen: did not converge");
        else if (info < 0) rc = lapack_fail("eigen", info, e);
    } else {
        rc = eigen_general(A, W->d, Z, e);
    }
    if (rc) goto done;
    /* ascending eigenvalues (dsyevr already sorts; dgeev does not) */
    for (int64_t i = 0; i < n; i++) idx[i] = i;
    sort_by_key(idx, W->d, n);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) V->d[i * n + j] = Z->d[i * n + idx[j]];
    for (int64_t j = 0; j < n; j++) A->d[j] = W->d[idx[j]];  /* A reused as scratch */
    memcpy(W->d, A->d, (size_t)n * sizeof(double));
    W = finish(W, e);
    V = finish(V, e);
done:
    if (!rc && (!W || !V)) rc = br_err(e, BR_ENOMEM, "eigen: out of memory");
    if (rc) { mb_release(W); mb_release(V); W = V = NULL; }
    *values = W;
    *vectors = V;
    mb_release(A); mb_release(Z);
    free(isuppz); free(idx);
    return rc;
}

/* svd(a) (see la.h), dgesvd with economy-size U and V. */
int k_svd(const MB *a, MB **U, MB **S, MB **V, BrErr *e)
{
    *U = *S = *V = NULL;
    int rc = too_big(a, "svd", e);
    if (!rc) rc = need_finite(a, "svd", e);
    if (rc) return rc;
    int64_t m = a->rows, n = a->cols, p = BR_MIN(m, n);
    MB *A = NULL, *Vt = NULL, *s = NULL, *u = NULL, *sm = NULL, *v = NULL;
    double *superb = NULL;
    if (p == 0) {
        u = mb_empty(m, 0, e); sm = mb_empty(0, 0, e); v = mb_empty(n, 0, e);
        goto done;
    }
    A = mb_to_dense(a, e);
    s = mb_dense(p, 1, e);
    Vt = mb_dense(p, n, e);
    u = mb_dense(m, p, e);
    sm = mb_dense(p, p, e);
    v = mb_dense_uninit(n, p, e);
    superb = br_malloc((size_t)p * sizeof(double));
    if (!A || !s || !Vt || !u || !sm || !v || !superb) goto done;
    k_blas_threads();
    int info = LAPACKE_dgesvd(LAPACK_ROW_MAJOR, 'S', 'S', (int)m, (int)n, A->d, (int)n,
                              s->d, u->d, (int)p, Vt->d, (int)n, superb);
    if (info > 0) { rc = br_err(e, BR_EFAIL, "svd: did not converge"); goto done; }
    if (info < 0) { rc = lapack_fail("svd", info, e); goto done; }
    for (int64_t i = 0; i < p; i++) sm->d[i * p + i] = s->d[i];
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < p; j++) v->d[i * p + j] = Vt->d[j * n + i];
    u = finish(u, e);
    sm = finish(sm, e);
    v = finish(v, e);
done:
    if (!rc && (!u || !sm || !v)) rc = br_err(e, BR_ENOMEM, "svd: out of memory");
    if (rc) { mb_release(u); mb_release(sm); mb_release(v); u = sm = v = NULL; }
    *U = u; *S = sm; *V = v;
    mb_release(A); mb_release(Vt); mb_release(s);
    free(superb);
    return rc;
}

/* qr(a) (see la.h): dgeqrf, then H column j = tau_j * v_j (v_j[j] = 1). */
int k_qr(const MB *a, MB **H, MB **R, BrErr *e)
{
    *H = *R = NULL;
    int rc = too_big(a, "qr", e);
    if (rc) return rc;
    int64_t m = a->rows, n = a->cols, p = BR_MIN(m, n);
    MB *A = NULL, *h = NULL, *r = NULL;
    double *tau = NULL;
    if (p == 0 || a->nnz == 0) {
        h = mb_empty(m, n, e);
        r = mb_empty(m, n, e);
        goto done;
    }
    A = mb_to_dense(a, e);
    tau = br_malloc((size_t)p * sizeof(double));
    h = mb_dense(m, n, e);
    r = mb_dense(m, n, e);
    if (!A || !tau || !h || !r) goto done;
    k_blas_threads();
    int info = LAPACKE_dgeqrf(LAPACK_ROW_MAJOR, (int)m, (int)n, A->d, (int)n, tau);
    if (info != 0) { rc = lapack_fail("qr", info, e); goto done; }
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double x = A->d[i * n + j];
            if (j >= i) r->d[i * n + j] = x;
            else if (j < p) h->d[i * n + j] = tau[j] * x;
        }
    for (int64_t j = 0; j < p; j++) h->d[j * n + j] = tau[j];
    h = finish(h, e);
    r = finish(r, e);
done:
    if (!rc && (!h || !r)) rc = br_err(e, BR_ENOMEM, "qr: out of memory");
    if (rc) { mb_release(h); mb_release(r); h = r = NULL; }
    *H = h; *R = r;
    mb_release(A);
    free(tau);
    return rc;
}

/* lu(a) (see la.h): dgetrf; P from the row interchanges. An exactly
 * singular U (info > 0) is still a valid factorization. */
int k_lu(const MB *a, MB **P, MB **L, MB **U, BrErr *e)
{
    *P = *L = *U = NULL;
    int rc = need_square(a, "lu", e);
    if (rc) return rc;
    int64_t n = a->rows;
    MB *A = NULL, *p = NULL, *l = NULL, *u = NULL;
    lapack_int *ipiv = NULL;
    int64_t *perm = NULL;
    if (n == 0) {
        p = mb_empty(0, 0, e); l = mb_empty(0, 0, e); u = mb_empty(0, 0, e);
        goto done;
    }
    A = mb_to_dense(a, e);
    ipiv = br_malloc((size_t)n * sizeof *ipiv);
    perm = br_malloc((size_t)n * sizeof *perm);
    p = mb_dense(n, n, e);
    l = mb_dense(n, n, e);
    u = mb_dense(n, n, e);
    if (!A || !ipiv || !perm || !p || !l || !u) goto done;
    k_blas_threads();
    int info = LAPACKE_dgetrf(LAPACK_ROW_MAJOR, (int)n, (int)n, A->d, (int)n, ipiv);
    if (info < 0) { rc = lapack_fail("lu", info, e); goto done; }
    for (int64_t i = 0; i < n; i++) perm[i] = i;
    for (int64_t i = 0; i < n; i++) {
        int64_t k = ipiv[i] - 1, t = perm[i];
        perm[i] = perm[k];
        perm[k] = t;
    }
    for (int64_t i = 0; i < n; i++) {
        p->d[i * n + perm[i]] = 1;
        l->d[i * n + i] = 1;
        for (int64_t j = 0; j < n; j++) {
            double x = A->d[i * n + j];
            if (j < i) l->d[i * n + j] = x;
            else u->d[i * n + j] = x;
        }
    }
    p = finish(p, e);
    l = finish(l, e);
    u = finish(u, e);
done:
    if (!rc && (!p || !l || !u)) rc = br_err(e, BR_ENOMEM, "lu: out of memory");
    if (rc) { mb_release(p); mb_release(l); mb_release(u); p = l = u = NULL; }
    *P = p; *L = l; *U = u;
    mb_release(A);
    free(ipiv);
    free(perm);
    return rc;
}
