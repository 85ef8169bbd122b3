/* test_la.c: linear algebra builtins checked through their invariants
 * (A inv(A) = I, L t(L) = A, A V = V diag(w), U S t(V) = A, Q R = A,
 * P A = L U, solve residuals) and the conformance cases' values, over
 * sizes, input formats and thread counts. */
#include "t.h"
#include "kernels/la.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng;

static double urand(void)
{
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (double)(rng >> 11) * (1.0 / 9007199254740992.0);
}

/* m x n, cells non-zero with probability sp, values in [-1, 1). */
static MB *gen(int64_t m, int64_t n, double sp, uint64_t seed)
{
    BrErr e = {0};
    MB *d = mb_dense(m, n, &e);
    rng = seed * 0x9E3779B97F4A7C15ull + 777;
    for (int64_t i = 0; i < m * n; i++)
        if (urand() < sp) d->d[i] = urand() * 2 - 1;
    mb_recount_nnz(d);
    return d;
}

static MB *from(int64_t m, int64_t n, const double *v)
{
    BrErr e = {0};
    MB *d = mb_dense(m, n, &e);
    if (m > 0 && n > 0) memcpy(d->d, v, (size_t)(m * n) * sizeof(double));
    mb_recount_nnz(d);
    return d;
}

/* Naive op(a) %*% op(b) (dense result). */
static MB *mm(const MB *a, bool ta, const MB *b, bool tb)
{
    BrErr e = {0};
    int64_t m = ta ? a->cols : a->rows, k = ta ? a->rows : a->cols;
    int64_t n = tb ? b->rows : b->cols;
    MB *r = mb_dense(m, n, &e);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t l = 0; l < k; l++)
                s += (ta ? mb_get(a, l, i) : mb_get(a, i, l)) *
                     (tb ? mb_get(b, j, l) : mb_get(b, l, j));
            r->d[i * n + j] = s;
        }
    mb_recount_nnz(r);
    return r;
}

static MB *eye(int64_t n)
{
    BrErr e = {0};
    MB *r = mb_dense(n, n, &e);
    for (int64_t i = 0; i < n; i++) r->d[i * n + i] = 1;
    mb_recount_nnz(r);
    return r;
}

/* Well-conditioned square matrix: random + n on the diagonal. */
static MB *wellcond(int64_t n, double sp, bool sparse, uint64_t seed)
{
    BrErr e = {0};
    MB *a = gen(n, n, sp, seed);
    for (int64_t i = 0; i < n; i++) a->d[i * n + i] += (double)n + 1;
    mb_recount_nnz(a);
    if (sparse) mb_make_sparse(a, &e);
    return a;
}

/* Symmetric positive definite: t(B) B + I. */
static MB *spd(int64_t n, bool sparse, uint64_t seed)
{
    BrErr e = {0};
    MB *b = gen(n + 2, n, 0.7, seed);
    MB *a = mm(b, true, b, false);
    for (int64_t i = 0; i < n; i++) a->d[i * n + i] += 1;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < i; j++) a->d[i * n + j] = a->d[j * n + i];
    mb_recount_nnz(a);
    if (sparse) mb_make_sparse(a, &e);
    mb_release(b);
    return a;
}

static bool is_upper(const MB *r)
{
    for (int64_t i = 0; i < r->rows; i++)
        for (int64_t j = 0; j < BR_MIN(i, r->cols); j++)
            if (mb_get(r, i, j) != 0) return false;
    return true;
}

static bool is_lower(const MB *r)
{
    for (int64_t i = 0; i < r->rows; i++)
        for (int64_t j = i + 1; j < r->cols; j++)
            if (mb_get(r, i, j) != 0) return false;
    return true;
}

static bool has_err(const BrErr *e, const char *word)
{
    return e->code && strstr(e->msg, word);
}

static const int64_t SIZES[] = {0, 1, 2, 5, 30};
#define NSIZES (int)(sizeof SIZES / sizeof *SIZES)

static void test_inv_solve_det_lu(void)
{
    for (int s = 0; s < NSIZES; s++)
        for (int fmt = 0; fmt < 2; fmt++) {
            int64_t n = SIZES[s];
            BrErr e = {0};
            MB *a = wellcond(n, 0.3, fmt, 100 + s);
            MB *I = eye(n);
            MB *ai = k_inv(a, &e);
            T_CHECK(ai && ai->rows == n && ai->cols == n, "inv n=%d fmt %d: %s", (int)n, fmt, e.msg);
            if (ai) {
                MB *p = mm(a, false, ai, false);
                T_MB_EQ(p, I, 1e-12, "A inv(A) = I n=%d fmt %d", (int)n, fmt);
                mb_release(p);
            }
            /* solve with 1 and 3 right-hand sides */
            for (int c = 1; c <= 3; c += 2) {
                MB *b = gen(n, c, 1, 200 + s + c);
                MB *x = k_solve(a, b, &e);
                T_CHECK(x && x->rows == n && x->cols == c, "solve n=%d: %s", (int)n, e.msg);
                if (x) {
                    MB *ax = mm(a, false, x, false);
                    T_MB_EQ(ax, b, 1e-12, "solve residual n=%d c=%d fmt %d", (int)n, c, fmt);
                    mb_release(ax);
                }
                mb_release(x); mb_release(b);
            }
            /* lu: P A = L U */
            MB *P, *L, *U;
            T_CHECK(k_lu(a, &P, &L, &U, &e) == 0, "lu n=%d: %s", (int)n, e.msg);
            if (P) {
                MB *pa = mm(P, false, a, false), *lu = mm(L, false, U, false);
                T_MB_EQ(pa, lu, 1e-12, "P A = L U n=%d fmt %d", (int)n, fmt);
                bool perm = true;
                for (int64_t i = 0; i < n; i++) {
                    double rs = 0, cs = 0;
                    for (int64_t j = 0; j < n; j++) {
                        double pv = mb_get(P, i, j);
                        if (pv != 0 && pv != 1) perm = false;
                        rs += pv;
                        cs += mb_get(P, j, i);
                    }
                    if (rs != 1 || cs != 1 || mb_get(L, i, i) != 1) perm = false;
                }
                T_CHECK(perm && is_lower(L) && is_upper(U), "lu structure n=%d", (int)n);
                /* det(A) = det(P) * prod(diag(U)); det(P) = +-1 from its inversions */
                double d, pu = 1;
                T_CHECK(k_det(a, &d, &e) == 0, "det n=%d: %s", (int)n, e.msg);
                for (int64_t i = 0; i < n; i++) pu *= mb_get(U, i, i);
                int64_t inv = 0;
                for (int64_t i = 0; i < n; i++)
                    for (int64_t j = i + 1; j < n; j++) {
                        int64_t ci = -1, cj = -1;
                        for (int64_t k = 0; k < n; k++) {
                            if (mb_get(P, i, k) == 1) ci = k;
                            if (mb_get(P, j, k) == 1) cj = k;
                        }
                        inv += ci > cj;
                    }
                if (inv % 2) pu = -pu;
                T_CHECK(fabs(d - pu) <= 1e-12 * fmax(1, fabs(d)), "det = det(P) prod(diag U): %g vs %g",
                        d, pu);
                mb_release(pa); mb_release(lu);
            }
            mb_release(P); mb_release(L); mb_release(U);
            mb_release(a); mb_release(ai); mb_release(I);
        }

    /* least squares (tall) and minimum norm (wide) */
    BrErr e = {0};
    MB *a = gen(20, 5, 1, 301), *b = gen(20, 2, 1, 302);
    MB *x = k_solve(a, b, &e);
    T_CHECK(x && x->rows == 5 && x->cols == 2, "solve least squares: %s", e.msg);
    if (x) {   /* normal equations: t(A) (A x - b) = 0 */
        MB *ax = mm(a, false, x, false);
        for (int64_t i = 0; i < 40; i++) ax->d[i] -= mb_get(b, i / 2, i % 2);
        MB *g = mm(a, true, ax, false), *z = mb_dense(5, 2, &e);
        T_MB_EQ(g, z, 1e-12, "least-squares normal equations");
        mb_release(ax); mb_release(g); mb_release(z);
    }
    mb_release(a); mb_release(b); mb_release(x);
    a = gen(3, 7, 1, 303); b = gen(3, 1, 1, 304);
    x = k_solve(a, b, &e);
    T_CHECK(x && x->rows == 7 && x->cols == 1, "solve underdetermined: %s", e.msg);
    if (x) {
        MB *ax = mm(a, false, x, false);
        T_MB_EQ(ax, b, 1e-12, "underdetermined A x = b");
        mb_release(ax);
    }
    mb_release(a); mb_release(b); mb_release(x);

    /* errors */
    double sing[] = {1, 2, 2, 4}, seq9[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    MB *s2 = from(2, 2, sing), *s3 = from(3, 3, seq9), *r23 = gen(2, 3, 1, 5), *b3 = gen(3, 1, 1, 6);
    br_err_clear(&e);
    T_CHECK(!k_inv(s2, &e) && has_err(&e, "singular"), "inv singular: %s", e.msg);
    br_err_clear(&e);
    T_CHECK(!k_inv(s3, &e) && has_err(&e, "singular"), "inv nearly singular: %s", e.msg);
    br_err_clear(&e);
    MB *b2 = gen(2, 1, 1, 7);
    T_CHECK(!k_solve(s2, b2, &e) && has_err(&e, "singular"), "solve singular: %s", e.msg);
    br_err_clear(&e);
    T_CHECK(!k_inv(r23, &e) && has_err(&e, "dimension"), "inv non-square: %s", e.msg);
    br_err_clear(&e);
    T_CHECK(!k_solve(r23, b3, &e) && has_err(&e, "dimension"), "solve shapes: %s", e.msg);
    br_err_clear(&e);
    double d;
    T_CHECK(k_det(r23, &d, &e) != 0 && has_err(&e, "dimension"), "det non-square: %s", e.msg);
    br_err_clear(&e);
    MB *P, *L, *U;
    T_CHECK(k_lu(r23, &P, &L, &U, &e) != 0 && !P && has_err(&e, "dimension"), "lu non-square");
    br_err_clear(&e);
    T_CHECK(k_det(s2, &d, &e) == 0 && d == 0, "det singular = 0");
    MB *z = mb_empty(3, 3, &e);
    T_CHECK(k_det(z, &d, &e) == 0 && d == 0, "det empty block = 0");
    mb_release(z); mb_release(b2);
    mb_release(s2); mb_release(s3); mb_release(r23); mb_release(b3);

    /* conformance la_det, la_solve_inv values */
    double A[] = {2, -1, 0, 1, 3, 2, 0, 1, 4}, B[] = {1, 3, 2, 2, -1, 0, 0, 1, 4};
    double C[] = {4, 1, 0, 1, 2, 5, 2, 0, 0, 1, 6, 1, 1, 0, 2, 3};
    MB *ma = from(3, 3, A), *mbb = from(3, 3, B), *mc = from(4, 4, C), *id = eye(4);
    T_CHECK(k_det(ma, &d, &e) == 0 && fabs(d - 24) < 1e-12, "det A = 24 (%.17g)", d);
    T_CHECK(k_det(mbb, &d, &e) == 0 && fabs(d + 24) < 1e-12, "det B = -24 (%.17g)", d);
    T_CHECK(k_det(mc, &d, &e) == 0 && fabs(d - 230) < 1e-11, "det C = 230 (%.17g)", d);
    T_CHECK(k_det(id, &d, &e) == 0 && d == 1, "det I = 1");
    double bv[] = {1, 2, 3, 4};
    double xw[] = {-0.14782608695652183, 0.36521739130434788, 0.2347826086956521,
                   1.2260869565217394};
    MB *bb = from(4, 1, bv), *want = from(4, 1, xw);
    x = k_solve(mc, bb, &e);
    T_MB_EQ(x, want, 1e-13, "la_solve_inv x");
    MB *ci = k_inv(mc, &e);
    T_CHECK(ci && fabs(mb_get(ci, 0, 0) - 0.32173913043478264) < 1e-14 &&
            fabs(mb_get(ci, 3, 3) - 0.43478260869565222) < 1e-14, "la_solve_inv Ainv");
    mb_release(ci); mb_release(x); mb_release(bb); mb_release(want);
    mb_release(ma); mb_release(mbb); mb_release(mc); mb_release(id);
}

static void test_cholesky(void)
{
    for (int s = 0; s < NSIZES; s++)
        for (int fmt = 0; fmt < 2; fmt++) {
            int64_t n = SIZES[s];
            BrErr e = {0};
            MB *a = spd(n, fmt, 400 + s);
            MB *l = k_cholesky(a, &e);
            T_CHECK(l && l->rows == n && l->cols == n && is_lower(l), "cholesky n=%d: %s",
                    (int)n, e.msg);
            if (l) {
                MB *llt = mm(l, false, l, true);
                T_MB_EQ(llt, a, 1e-12, "L t(L) = A n=%d fmt %d", (int)n, fmt);
                mb_release(llt);
            }
            mb_release(a); mb_release(l);
        }
    BrErr e = {0};
    double npd[] = {1, 2, 2, 1}, nsym[] = {2, 1, 0, 2};
    MB *a = from(2, 2, npd), *b = from(2, 2, nsym), *r = gen(2, 3, 1, 9);
    T_CHECK(!k_cholesky(a, &e) && has_err(&e, "positive definite"), "not PD: %s", e.msg);
    br_err_clear(&e);
    T_CHECK(!k_cholesky(b, &e) && has_err(&e, "symmetric"), "not symmetric: %s", e.msg);
    br_err_clear(&e);
    T_CHECK(!k_cholesky(r, &e) && has_err(&e, "dimension"), "non-square: %s", e.msg);
    mb_release(a); mb_release(b); mb_release(r);
    /* conformance la_cholesky */
    double A[] = {6, 2, 1, 0, 2, 5, 2, 1, 1, 2, 4, 1, 0, 1, 1, 3};
    double W[] = {2.4494897427831779, 0, 0, 0, 0.81649658092772615, 2.0816659994661326, 0, 0,
                  0.40824829046386307, 0.80064076902543568, 1.786703022974913, 0,
                  0, 0.48038446141526142, 0.34442467912769403, 1.6280670777454331};
    MB *ma = from(4, 4, A), *want = from(4, 4, W);
    MB *l = k_cholesky(ma, &e);
    T_MB_EQ(l, want, 1e-14, "la_cholesky L");
    mb_release(l); mb_release(ma); mb_release(want);
}

static void test_eigen(void)
{
    for (int s = 0; s < NSIZES; s++)
        for (int fmt = 0; fmt < 2; fmt++) {
            int64_t n = SIZES[s];
            BrErr e = {0};
            MB *a = gen(n, n, fmt ? 0.2 : 1, 500 + s);
            for (int64_t i = 0; i < n; i++)     /* symmetrize */
                for (int64_t j = 0; j < i; j++) a->d[i * n + j] = a->d[j * n + i];
            mb_recount_nnz(a);
            if (fmt) mb_make_sparse(a, &e);
            MB *w, *v;
            T_CHECK(k_eigen(a, &w, &v, &e) == 0 && w && v, "eigen n=%d: %s", (int)n, e.msg);
            if (w) {
                T_CHECK(w->rows == n && w->cols == 1 && v->rows == n && v->cols == n, "eigen shapes");
                bool asc = true;
                for (int64_t i = 1; i < n; i++) asc &= mb_get(w, i - 1, 0) <= mb_get(w, i, 0);
                T_CHECK(asc, "eigenvalues ascending n=%d", (int)n);
                MB *av = mm(a, false, v, false), *vd = mm(v, false, v, false);
                for (int64_t i = 0; i < n; i++)      /* vd = V diag(w) */
                    for (int64_t j = 0; j < n; j++) vd->d[i * n + j] = mb_get(v, i, j) * mb_get(w, j, 0);
                T_MB_EQ(av, vd, 1e-12, "A V = V diag(w) n=%d fmt %d", (int)n, fmt);
                MB *vtv = mm(v, true, v, false), *I = eye(n);
                T_MB_EQ(vtv, I, 1e-12, "t(V) V = I n=%d", (int)n);
                mb_release(av); mb_release(vd); mb_release(vtv); mb_release(I);
            }
            mb_release(w); mb_release(v); mb_release(a);
        }
    /* non-symmetric with a real spectrum */
    BrErr e = {0};
    double ns[] = {2, 1, 0, 0, 3, 1, 0, 0, 1};
    MB *a = from(3, 3, ns), *w, *v;
    T_CHECK(k_eigen(a, &w, &v, &e) == 0, "eigen non-symmetric: %s", e.msg);
    if (w) {
        T_CHECK(mb_get(w, 0, 0) == 1 && fabs(mb_get(w, 1, 0) - 2) < 1e-14 &&
                fabs(mb_get(w, 2, 0) - 3) < 1e-14, "non-symmetric values");
        MB *av = mm(a, false, v, false), *vd = mb_copy(v, &e);
        mb_make_dense(vd, &e);
        for (int64_t i = 0; i < 3; i++)
            for (int64_t j = 0; j < 3; j++) vd->d[i * 3 + j] *= mb_get(w, j, 0);
        T_MB_EQ(av, vd, 1e-12, "non-symmetric A V = V diag(w)");
        mb_release(av); mb_release(vd);
    }
    mb_release(w); mb_release(v); mb_release(a);
    double rot[] = {0, -1, 1, 0};
    a = from(2, 2, rot);
    br_err_clear(&e);
    T_CHECK(k_eigen(a, &w, &v, &e) != 0 && !w && !v && has_err(&e, "complex"), "complex: %s", e.msg);
    mb_release(a);
    /* conformance la_eigen */
    double A[] = {4, 1, 0, 0, 1, 3, 1, 0, 0, 1, 2, 1, 0, 0, 1, 1};
    double W[] = {0.25471875982586667, 1.8227170808871129, 3.1772829191128942,
                  4.7452812401741387};
    a = from(4, 4, A);
    MB *want = from(4, 1, W);
    br_err_clear(&e);
    T_CHECK(k_eigen(a, &w, &v, &e) == 0, "la_eigen");
    T_MB_EQ(w, want, 1e-13, "la_eigen values");
    if (v) T_CHECK(fabs(fabs(mb_get(v, 0, 0)) - 0.062465125787784161) < 1e-12, "la_eigen vector");
    mb_release(w); mb_release(v); mb_release(a); mb_release(want);
}

static void test_svd(void)
{
    static const int64_t shapes[][2] = {{0, 3}, {3, 0}, {1, 1}, {6, 1}, {1, 6}, {5, 5},
                                        {30, 7}, {7, 30}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (int fmt = 0; fmt < 2; fmt++) {
            int64_t m = shapes[s][0], n = shapes[s][1], p = BR_MIN(m, n);
            BrErr e = {0};
            MB *a = gen(m, n, fmt ? 0.2 : 1, 600 + s);
            if (fmt) mb_make_sparse(a, &e);
            MB *U, *S, *V;
            T_CHECK(k_svd(a, &U, &S, &V, &e) == 0 && U && S && V, "svd %dx%d: %s",
                    (int)m, (int)n, e.msg);
            if (!U) { mb_release(a); continue; }
            T_CHECK(U->rows == m && U->cols == p && S->rows == p && S->cols == p &&
                    V->rows == n && V->cols == p, "svd shapes %dx%d", (int)m, (int)n);
            MB *us = mm(U, false, S, false), *r = mm(us, false, V, true);
            T_MB_EQ(r, a, 1e-12, "U S t(V) = A %dx%d fmt %d", (int)m, (int)n, fmt);
            MB *utu = mm(U, true, U, false), *vtv = mm(V, true, V, false), *I = eye(p);
            bool diag_ok = true;
            for (int64_t i = 0; i < p; i++)
                for (int64_t j = 0; j < p; j++) {
                    double x = mb_get(S, i, j);
                    if (i != j && x != 0) diag_ok = false;
                    if (i == j && (x < 0 || (i > 0 && x > mb_get(S, i - 1, i - 1)))) diag_ok = false;
                }
            T_CHECK(diag_ok, "S diagonal, descending %dx%d", (int)m, (int)n);
            /* U may have zero columns for zero singular values in sparse cases: check
             * only when A has full rank (dense random) */
            if (!fmt) {
                T_MB_EQ(utu, I, 1e-12, "t(U) U = I %dx%d", (int)m, (int)n);
                T_MB_EQ(vtv, I, 1e-12, "t(V) V = I %dx%d", (int)m, (int)n);
            }
            mb_release(us); mb_release(r); mb_release(utu); mb_release(vtv); mb_release(I);
            mb_release(U); mb_release(S); mb_release(V); mb_release(a);
        }
    /* conformance la_svd */
    BrErr e = {0};
    double A[] = {3, 1, 1, -1, 3, 1, 2, 0, 1, 1, 2, 2, 0, 1, 4};
    MB *a = from(5, 3, A), *U, *S, *V;
    T_CHECK(k_svd(a, &U, &S, &V, &e) == 0, "la_svd");
    if (S) T_CHECK(fabs(mb_get(S, 0, 0) - 5.7982878519107688) < 1e-13 &&
                   fabs(mb_get(S, 1, 1) - 3.6730125444799104) < 1e-13 &&
                   fabs(mb_get(S, 2, 2) - 2.4266925710681204) < 1e-13, "la_svd values");
    mb_release(U); mb_release(S); mb_release(V); mb_release(a);
    double nanv[] = {1, NAN, 0, 1};
    a = from(2, 2, nanv);
    br_err_clear(&e);
    T_CHECK(k_svd(a, &U, &S, &V, &e) != 0 && !U && has_err(&e, "non-finite"), "svd NaN");
    mb_release(a);
}

/* Q = P_1 ... P_p from the Householder vectors in H (P_j = I - h h'/h_j). */
static MB *q_from_h(const MB *H)
{
    int64_t m = H->rows, p = BR_MIN(H->rows, H->cols);
    MB *Q = eye(m);
    for (int64_t j = p - 1; j >= 0; j--) {   /* Q = P_j Q, right to left */
        double hj = mb_get(H, j, j);
        if (hj == 0) continue;
        for (int64_t c = 0; c < m; c++) {
            double s = 0;
            for (int64_t i = 0; i < m; i++) s += mb_get(H, i, j) * Q->d[i * m + c];
            for (int64_t i = 0; i < m; i++) Q->d[i * m + c] -= mb_get(H, i, j) * s / hj;
        }
    }
    mb_recount_nnz(Q);
    return Q;
}

static void test_qr(void)
{
    static const int64_t shapes[][2] = {{0, 3}, {3, 0}, {1, 1}, {6, 1}, {1, 6}, {5, 5},
                                        {30, 7}, {7, 30}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (int fmt = 0; fmt < 2; fmt++) {
            int64_t m = shapes[s][0], n = shapes[s][1];
            BrErr e = {0};
            MB *a = gen(m, n, fmt ? 0.3 : 1, 700 + s);
            if (fmt) mb_make_sparse(a, &e);
            MB *H, *R;
            T_CHECK(k_qr(a, &H, &R, &e) == 0 && H && R, "qr %dx%d: %s", (int)m, (int)n, e.msg);
            if (!H) { mb_release(a); continue; }
            T_CHECK(H->rows == m && H->cols == n && R->rows == m && R->cols == n && is_upper(R) &&
                    is_lower(H), "qr shapes/structure %dx%d", (int)m, (int)n);
            MB *Q = q_from_h(H), *qr = mm(Q, false, R, false);
            T_MB_EQ(qr, a, 1e-12, "Q R = A %dx%d fmt %d", (int)m, (int)n, fmt);
            MB *qtq = mm(Q, true, Q, false), *I = eye(m);
            T_MB_EQ(qtq, I, 1e-12, "Q orthogonal %dx%d", (int)m, (int)n);
            MB *rtr = mm(R, true, R, false), *ata = mm(a, true, a, false);
            T_MB_EQ(rtr, ata, 1e-12, "t(R) R = t(A) A %dx%d", (int)m, (int)n);
            mb_release(Q); mb_release(qr); mb_release(qtq); mb_release(I);
            mb_release(rtr); mb_release(ata);
            mb_release(H); mb_release(R); mb_release(a);
        }
    /* conformance la_qr */
    BrErr e = {0};
    double A[] = {3, 1, 1, -1, 3, 1, 2, 0, 1, 1, 2, 2, 0, 1, 4};
    MB *a = from(5, 3, A), *H, *R;
    T_CHECK(k_qr(a, &H, &R, &e) == 0, "la_qr");
    if (R) T_CHECK(fabs(fabs(mb_get(R, 0, 0)) - 3.872983346207417) < 1e-13 &&
                   fabs(fabs(mb_get(R, 1, 1)) - 3.8384024454626084) < 1e-13 &&
                   fabs(fabs(mb_get(R, 2, 2)) - 3.4764885805477248) < 1e-13, "la_qr diag");
    /* Commons Math's H: column 0 is (x - a e1) / -a with a = -sign(x0) |x| */
    if (H) {
        double nx = sqrt(15.0), a0 = -nx;
        T_CHECK(fabs(mb_get(H, 0, 0) - (3 - a0) / -a0) < 1e-14 &&
                fabs(mb_get(H, 1, 0) - (-1 / -a0)) < 1e-14, "H matches Commons Math");
    }
    mb_release(H); mb_release(R); mb_release(a);
}

int main(void)
{
    for (int th = 1; th <= 2; th++) {
        br_set_threads(th);
        test_inv_solve_det_lu();
        test_cholesky();
        test_eigen();
        test_svd();
        test_qr();
    }
    return t_done("test_la");
}
