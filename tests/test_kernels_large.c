/* test_kernels_large.c: shapes large enough to reach the kernels' blocked
 * and vectorized paths (grouped tsmm over a long shared dimension, the
 * AVX2 non-temporal transpose, threaded matrix-vector products, parallel
 * row slices), against naive references, identical for 1 and 2 threads. */
#include <math.h>
#include <stdlib.h>

#include "kernels/mm.h"
#include "kernels/reorg.h"
#include "t.h"

static MB *gen(int64_t m, int64_t n, uint64_t seed)
{
    BrErr e = {0};
    MB *d = mb_dense_uninit(m, n, &e);
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int64_t i = 0; i < m * n; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        d->d[i] = (double)(s >> 11) / 9007199254740992.0 - 0.5;
    }
    mb_recount_nnz(d);
    return d;
}

/* Relative closeness of two dense blocks. */
static bool close(const MB *a, const MB *b, double tol)
{
    if (a->rows != b->rows || a->cols != b->cols) return false;
    for (int64_t i = 0; i < a->rows; i++)
        for (int64_t j = 0; j < a->cols; j++) {
            double x = mb_get(a, i, j), y = mb_get(b, i, j);
            if (fabs(x - y) > tol * fmax(1, fmax(fabs(x), fabs(y)))) return false;
        }
    return true;
}

static bool same(const MB *a, const MB *b) { return mb_equal(a, b, 0); }

int main(void)
{
    BrErr e = {0};
    /* tsmm over a long shared dimension, left and right */
    MB *X = gen(20000, 20, 1), *Xt = k_transpose(X, &e);
    MB *ref = mb_dense(20, 20, &e);
    for (int64_t i = 0; i < 20; i++)
        for (int64_t j = 0; j < 20; j++) {
            double s = 0;
            for (int64_t k = 0; k < 20000; k++) s += X->d[k * 20 + i] * X->d[k * 20 + j];
            ref->d[i * 20 + j] = s;
        }
    MB *r1[2], *r2[2];
    for (int t = 1; t <= 2; t++) {
        br_set_threads(t);
        r1[t - 1] = k_tsmm(X, true, &e);
        r2[t - 1] = k_tsmm(Xt, false, &e);
    }
    T_CHECK(r1[0] && close(r1[0], ref, 1e-10), "tsmm left 20000x20");
    T_CHECK(r2[0] && close(r2[0], ref, 1e-10), "tsmm right 20x20000");
    T_CHECK(r1[1] && same(r1[0], r1[1]) && same(r2[0], r2[1]), "tsmm identical for 1 and 2 threads");
    /* transpose through the vectorized kernel, odd edges */
    int64_t shapes[2][2] = {{2048, 2052}, {2052, 2048}};
    for (int s = 0; s < 2; s++) {
        MB *A = gen(shapes[s][0], shapes[s][1], 7 + (uint64_t)s), *T = k_transpose(A, &e);
        bool ok = T && T->rows == A->cols && T->cols == A->rows;
        for (int64_t i = 0; ok && i < A->rows; i++)
            for (int64_t j = 0; j < A->cols; j++)
                if (T->d[j * A->rows + i] != A->d[i * A->cols + j]) { ok = false; break; }
        T_CHECK(ok, "transpose %lldx%lld", (long long)shapes[s][0], (long long)shapes[s][1]);
        mb_release(A);
        mb_release(T);
    }
    /* matrix-vector products, both orientations */
    MB *L = gen(300000, 5, 3), *v5 = gen(5, 1, 4), *w = gen(300000, 1, 5);
    MB *Lt = k_transpose(L, &e);
    MB *mv[2], *tv[2], *lv[2];
    for (int t = 1; t <= 2; t++) {
        br_set_threads(t);
        mv[t - 1] = k_matmul(L, v5, &e);
        tv[t - 1] = k_matmul_tl(L, w, &e);
        lv[t - 1] = k_matmul(Lt, w, &e);
    }
    MB *mvref = mb_dense(300000, 1, &e), *tvref = mb_dense(5, 1, &e);
    for (int64_t i = 0; i < 300000; i++) {
        double s = 0;
        for (int64_t j = 0; j < 5; j++) {
            s += L->d[i * 5 + j] * v5->d[j];
            tvref->d[j] += L->d[i * 5 + j] * w->d[i];
        }
        mvref->d[i] = s;
    }
    T_CHECK(mv[0] && close(mv[0], mvref, 1e-12) && same(mv[0], mv[1]), "X %%*%% v 300000x5");
    T_CHECK(tv[0] && close(tv[0], tvref, 1e-9) && same(tv[0], tv[1]), "t(X) %%*%% w 300000x5");
    T_CHECK(lv[0] && close(lv[0], tvref, 1e-9) && same(lv[0], lv[1]), "5x300000 %%*%% w");
    /* long row slice */
    MB *S = gen(300000, 7, 9), *sl[2];
    for (int t = 1; t <= 2; t++) { br_set_threads(t); sl[t - 1] = k_slice(S, 999, 250000, 0, 7, &e); }
    bool ok = sl[0] && sl[0]->rows == 249001 && sl[0]->cols == 7;
    for (int64_t i = 0; ok && i < sl[0]->rows * 7; i++) ok = sl[0]->d[i] == S->d[999 * 7 + i];
    T_CHECK(ok && same(sl[0], sl[1]) && sl[0]->nnz == sl[1]->nnz, "row slice 1000:250000 of 300000x7");
    br_set_threads(0);
    MB *all[] = {X, Xt, ref, r1[0], r1[1], r2[0], r2[1], L, v5, w, Lt, mv[0], mv[1], tv[0], tv[1],
                 lv[0], lv[1], mvref, tvref, S, sl[0], sl[1]};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) mb_release(all[i]);
    return t_done("test_kernels_large");
}
