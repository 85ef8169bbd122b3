/* test_dnn2.c: batch_norm2d, lstm and their backward functions
 * (kernels/dnn2.h) against naive reference loops over mb_get, sweeping
 * batch sizes (0, 1, more than one row block), channels, image sizes,
 * sequence lengths, feature and hidden sizes, dense and sparse inputs
 * (sparsity 0 .. 1), empty initial states and thread counts 1 and 2;
 * gradient checks of the backward functions by central finite
 * differences of the forward ones; results equal across thread counts;
 * shape errors. */
#include "t.h"
#include "kernels/dnn2.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng;

static double urand(void)
{
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (double)(rng >> 11) * (1.0 / 9007199254740992.0);
}

/* m x n, each cell non-zero with probability sp, uniform in (-a, a)
 * shifted by off; format forced. */
static MB *gen(int64_t m, int64_t n, double sp, bool sparse, double a, double off, uint64_t seed)
{
    BrErr e = {0};
    MB *d = mb_dense(m, n, &e);
    rng = seed * 0x9E3779B97F4A7C15ull + 12345;
    for (int64_t i = 0; i < m * n; i++)
        if (urand() < sp) {
            double v = (2 * urand() - 1) * a + off;
            d->d[i] = v == 0 ? 0.25 : v;
        }
    mb_recount_nnz(d);
    if (sparse) mb_make_sparse(d, &e);
    else mb_make_dense(d, &e);
    return d;
}

static bool valid(const MB *r)
{
    if (!r || r->refs != 1) return false;
    if (r->sparse) {
        if (r->rp[0] != 0 || r->rp[r->rows] != r->nnz) return false;
        for (int64_t i = 0; i < r->rows; i++)
            for (int64_t k = r->rp[i]; k < r->rp[i + 1]; k++)
                if (r->ci[k] < 0 || r->ci[k] >= r->cols || r->v[k] == 0) return false;
        return true;
    }
    int64_t c = 0;
    for (int64_t i = 0; i < r->rows * r->cols; i++) c += r->d[i] != 0;
    return c == r->nnz;
}

static MB *dense_from(const double *v, int64_t m, int64_t n)
{
    BrErr e = {0};
    MB *d = mb_dense(m, n, &e);
    if (m > 0 && n > 0) memcpy(d->d, v, (size_t)(m * n) * sizeof(double));
    mb_recount_nnz(d);
    return d;
}

static double sum_prod(const MB *a, const MB *b)
{
    double s = 0;
    for (int64_t i = 0; i < a->rows; i++)
        for (int64_t j = 0; j < a->cols; j++) s += mb_get(a, i, j) * mb_get(b, i, j);
    return s;
}

/* ---- references: naive loops over mb_get ---- */

/* batch_norm2d as SystemDS's nn layer computes it. */
static void ref_bn(const MB *X, const MB *g, const MB *bt, const MB *em, const MB *ev, bool train, double eps,
                   double mu, MB *o[5])
{
    int64_t N = X->rows, C = g->rows, HW = X->cols / C;
    double *mean = calloc((size_t)C, sizeof(double)), *var = calloc((size_t)C, sizeof(double));
    double *r[5];
    r[0] = calloc((size_t)(N * C * HW) + 1, sizeof(double));
    for (int k = 1; k < 5; k++) r[k] = calloc((size_t)C, sizeof(double));
    for (int64_t c = 0; c < C; c++) {
        if (train) {
            double s = 0, q = 0;
            for (int64_t i = 0; i < N; i++)
                for (int64_t j = 0; j < HW; j++) s += mb_get(X, i, c * HW + j);
            mean[c] = s / (double)(N * HW);
            for (int64_t i = 0; i < N; i++)
                for (int64_t j = 0; j < HW; j++) {
                    double d = mb_get(X, i, c * HW + j) - mean[c];
                    q += d * d;
                }
            var[c] = q / (double)(N * HW);
            r[1][c] = mu * mb_get(em, c, 0) + (1 - mu) * mean[c];
            r[2][c] = mu * mb_get(ev, c, 0) + (1 - mu) * var[c];
        } else {
            mean[c] = r[1][c] = mb_get(em, c, 0);
            var[c] = r[2][c] = mb_get(ev, c, 0);
        }
        r[3][c] = mean[c];
        r[4][c] = 1 / sqrt(var[c] + eps);
        for (int64_t i = 0; i < N; i++)
            for (int64_t j = 0; j < HW; j++)
                r[0][i * C * HW + c * HW + j] =
                    (mb_get(X, i, c * HW + j) - mean[c]) * r[4][c] * mb_get(g, c, 0) + mb_get(bt, c, 0);
    }
    o[0] = dense_from(r[0], N, C * HW);
    for (int k = 1; k < 5; k++) o[k] = dense_from(r[k], C, 1);
    for (int k = 0; k < 5; k++) free(r[k]);
    free(mean); free(var);
}

/* batch_norm2d_backward as SystemDS's nn layer computes it (branches). */
static void ref_bn_bwd(const MB *X, const MB *dy, const MB *g, const MB *cm, const MB *ci, MB *o[3])
{
    int64_t N = X->rows, C = g->rows, HW = X->cols / C;
    double cnt = (double)(N * HW);
    double *dx = calloc((size_t)(N * C * HW) + 1, sizeof(double)), *dg = calloc((size_t)C, sizeof(double)),
           *db = calloc((size_t)C, sizeof(double));
    for (int64_t c = 0; c < C; c++) {
        double m = mb_get(cm, c, 0), iv = mb_get(ci, c, 0), gc = mb_get(g, c, 0);
        double dvar = 0, dmn = 0, dmv = 0;
        for (int64_t i = 0; i < N; i++)
            for (int64_t j = 0; j < HW; j++) {
                double x = mb_get(X, i, c * HW + j) - m, d = mb_get(dy, i, c * HW + j);
                dg[c] += d * x * iv;
                db[c] += d;
                dvar += -0.5 * x * iv * iv * iv * d * gc;
                dmn += -d * gc * iv;
                dmv += -2.0 / cnt * x;
            }
        double dmean = dmn + dmv * dvar;
        for (int64_t i = 0; i < N; i++)
            for (int64_t j = 0; j < HW; j++) {
                double x = mb_get(X, i, c * HW + j) - m, d = mb_get(dy, i, c * HW + j);
                dx[i * C * HW + c * HW + j] = d * gc * iv + dmean / cnt + 2.0 / cnt * x * dvar;
            }
    }
    o[0] = dense_from(dx, N, C * HW);
    o[1] = dense_from(dg, C, 1);
    o[2] = dense_from(db, C, 1);
    free(dx); free(dg); free(db);
}

static double sg(double x) { return 1 / (1 + exp(-x)); }

/* lstm forward, timestep by timestep with full caches (T x N x ...). */
static void ref_lstm(const MB *X, const MB *W, const MB *b, const MB *o0, const MB *c0, bool seq, MB *o[5])
{
    int64_t M = W->cols / 4, D = W->rows - M, N = X->rows, T = X->cols / D;
    double *hs = calloc((size_t)(T * N * M) + 1, sizeof(double)), *cs = calloc((size_t)(T * N * M) + 1, sizeof(double)),
           *gs = calloc((size_t)(T * N * 4 * M) + 1, sizeof(double)),
           *out = calloc((size_t)(N * (seq ? T : 1) * M) + 1, sizeof(double)), *cf = calloc((size_t)(N * M) + 1, sizeof(double));
    bool e0 = o0->rows == 0 || o0->cols == 0, e1 = c0->rows == 0 || c0->cols == 0;
    for (int64_t t = 0; t < T; t++)
        for (int64_t i = 0; i < N; i++) {
            double *g = gs + (t * N + i) * 4 * M;
            for (int64_t k = 0; k < 4 * M; k++) {
                double s = mb_get(b, 0, k);
                for (int64_t d = 0; d < D; d++) s += mb_get(X, i, t * D + d) * mb_get(W, d, k);
                for (int64_t m = 0; m < M; m++) {
                    double hp = t ? hs[((t - 1) * N + i) * M + m] : e0 ? 0 : mb_get(o0, i, m);
                    s += hp * mb_get(W, D + m, k);
                }
                g[k] = k < 3 * M ? sg(s) : tanh(s);
            }
            for (int64_t m = 0; m < M; m++) {
                double cp = t ? cs[((t - 1) * N + i) * M + m] : e1 ? 0 : mb_get(c0, i, m);
                double c = g[M + m] * cp + g[m] * g[3 * M + m];
                cs[(t * N + i) * M + m] = c;
                hs[(t * N + i) * M + m] = g[2 * M + m] * tanh(c);
                if (seq) out[i * T * M + t * M + m] = hs[(t * N + i) * M + m];
                else if (t == T - 1) out[i * M + m] = hs[(t * N + i) * M + m];
                if (t == T - 1) cf[i * M + m] = c;
            }
        }
    o[0] = dense_from(out, N, (seq ? T : 1) * M);
    o[1] = dense_from(cf, N, M);
    o[2] = dense_from(hs, T, N * M);
    o[3] = dense_from(cs, T, N * M);
    o[4] = dense_from(gs, T, N * 4 * M);
    free(hs); free(cs); free(gs); free(out); free(cf);
}

/* lstm_backward following SystemDS's nn layer: reverse timesteps over the
 * forward caches. */
static void ref_lstm_bwd(const MB *X, const MB *W, const MB *b, const MB *o0, const MB *c0, bool seq, const MB *dout,
                         const MB *dc, MB *o[5])
{
    int64_t M = W->cols / 4, D = W->rows - M, N = X->rows, T = X->cols / D, DM = D + M;
    MB *f[5];
    ref_lstm(X, W, b, o0, c0, seq, f);
    bool e0 = o0->rows == 0 || o0->cols == 0, e1 = c0->rows == 0 || c0->cols == 0, e2 = dc->rows == 0 || dc->cols == 0;
    double *dX = calloc((size_t)(N * T * D) + 1, sizeof(double)), *dW = calloc((size_t)(DM * 4 * M), sizeof(double)),
           *db = calloc((size_t)(4 * M), sizeof(double)), *dh = calloc((size_t)(N * T * M) + 1, sizeof(double)),
           *dct = calloc((size_t)(N * M) + 1, sizeof(double)), *dout0 = calloc((size_t)(N * M) + 1, sizeof(double)),
           *dr = calloc((size_t)(N * 4 * M) + 1, sizeof(double));
    for (int64_t i = 0; i < N; i++)
        for (int64_t t = 0; t < T; t++)
            for (int64_t m = 0; m < M; m++)
                dh[i * T * M + t * M + m] = seq ? mb_get(dout, i, t * M + m) : t == T - 1 ? mb_get(dout, i, m) : 0;
    for (int64_t i = 0; i < N; i++)
        for (int64_t m = 0; m < M; m++) dct[i * M + m] = e2 ? 0 : mb_get(dc, i, m);
    for (int64_t t = T - 1; t >= 0; t--) {
        for (int64_t i = 0; i < N; i++)
            for (int64_t m = 0; m < M; m++) {
                double ct = mb_get(f[3], t, i * M + m), d = dh[i * T * M + t * M + m];
                double cp = t ? mb_get(f[3], t - 1, i * M + m) : e1 ? 0 : mb_get(c0, i, m);
                double gi = mb_get(f[4], t, i * 4 * M + m), gf = mb_get(f[4], t, i * 4 * M + M + m);
                double go = mb_get(f[4], t, i * 4 * M + 2 * M + m), gg = mb_get(f[4], t, i * 4 * M + 3 * M + m);
                double dcv = dct[i * M + m] + go * (1 - tanh(ct) * tanh(ct)) * d;
                dr[i * 4 * M + m] = gi * (1 - gi) * gg * dcv;
                dr[i * 4 * M + M + m] = gf * (1 - gf) * cp * dcv;
                dr[i * 4 * M + 2 * M + m] = go * (1 - go) * tanh(ct) * d;
                dr[i * 4 * M + 3 * M + m] = (1 - gg * gg) * gi * dcv;
                dct[i * M + m] = gf * dcv;
            }
        for (int64_t i = 0; i < N; i++)
            for (int64_t r = 0; r < DM; r++) {
                double in = r < D ? mb_get(X, i, t * D + r)
                                  : t ? mb_get(f[2], t - 1, i * M + r - D) : e0 ? 0 : mb_get(o0, i, r - D);
                double s = 0;
                for (int64_t k = 0; k < 4 * M; k++) {
                    dW[r * 4 * M + k] += in * dr[i * 4 * M + k];
                    s += dr[i * 4 * M + k] * mb_get(W, r, k);
                }
                if (r < D) dX[i * T * D + t * D + r] = s;
                else if (t) dh[i * T * M + (t - 1) * M + r - D] += s;
                else dout0[i * M + r - D] = s;
            }
        for (int64_t i = 0; i < N; i++)
            for (int64_t k = 0; k < 4 * M; k++) db[k] += dr[i * 4 * M + k];
    }
    o[0] = dense_from(dX, N, T * D);
    o[1] = dense_from(dW, DM, 4 * M);
    o[2] = dense_from(db, 1, 4 * M);
    o[3] = dense_from(dout0, N, M);
    o[4] = dense_from(dct, N, M);
    for (int k = 0; k < 5; k++) mb_release(f[k]);
    free(dX); free(dW); free(db); free(dh); free(dct); free(dout0); free(dr);
}

static void rel(MB **o, int n)
{
    for (int i = 0; i < n; i++) { mb_release(o[i]); o[i] = NULL; }
}

/* ---- sweeps ---- */

static void test_bn(void)
{
    static const int64_t sh[][3] = {{0, 1, 1}, {1, 1, 1}, {1, 3, 1}, {5, 1, 4}, {3, 2, 6}, {70, 3, 5}, {2, 4, 1},
                                    {130, 2, 3}};
    static const double sps[] = {0, 0.001, 0.1, 1};
    uint64_t seed = 1;
    for (size_t s = 0; s < sizeof sh / sizeof sh[0]; s++)
        for (size_t p = 0; p < 4; p++)
            for (int fmt = 0; fmt < 4; fmt++)
                for (int th = 1; th <= 2; th++) {
                    br_set_threads(th);
                    int64_t N = sh[s][0], C = sh[s][1], HW = sh[s][2];
                    MB *X = gen(N, C * HW, sps[p], fmt & 1, 2, 0.5, seed++);
                    MB *dy = gen(N, C * HW, sps[p] < 0.1 ? 0.5 : sps[p], fmt & 2, 1, 0, seed++);
                    MB *g = gen(C, 1, 1, false, 1, 1.5, seed++), *bt = gen(C, 1, 0.7, fmt & 2, 1, 0, seed++);
                    MB *em = gen(C, 1, 1, false, 1, 0, seed++), *ev = gen(C, 1, 1, fmt & 1, 0.5, 1, seed++);
                    for (int train = 0; train <= 1; train++) {
                        BrErr e = {0};
                        MB *o[5], *r[5], *bo[3], *br[3];
                        double eps = 1e-5, mu = 0.9;
                        int rc = k_batch_norm2d(X, g, bt, em, ev, train, eps, mu, o, &e);
                        T_CHECK(rc == 0, "bn rc %d: %s", rc, e.msg);
                        if (rc) continue;
                        ref_bn(X, g, bt, em, ev, train, eps, mu, r);
                        for (int k = 0; k < 5; k++) {
                            T_CHECK(valid(o[k]), "bn out %d invalid", k);
                            if (N == 0 && train && k > 0) continue;   /* NaN statistics */
                            T_MB_EQ(o[k], r[k], 1e-9, "bn out %d N=%lld C=%lld HW=%lld sp=%g fmt=%d th=%d train=%d",
                                    k, (long long)N, (long long)C, (long long)HW, sps[p], fmt, th, train);
                        }
                        rc = k_batch_norm2d_bwd(X, dy, g, eps, o[3], o[4], bo, &e);
                        T_CHECK(rc == 0, "bn bwd rc %d: %s", rc, e.msg);
                        if (!rc) {
                            ref_bn_bwd(X, dy, g, o[3], o[4], br);
                            for (int k = 0; k < 3; k++) {
                                T_CHECK(valid(bo[k]), "bn bwd out %d invalid", k);
                                if (N == 0 && train) continue;
                                T_MB_EQ(bo[k], br[k], 1e-8, "bn bwd %d N=%lld C=%lld HW=%lld sp=%g fmt=%d th=%d", k,
                                        (long long)N, (long long)C, (long long)HW, sps[p], fmt, th);
                            }
                            rel(bo, 3); rel(br, 3);
                        }
                        rel(o, 5); rel(r, 5);
                    }
                    mb_release(X); mb_release(dy); mb_release(g); mb_release(bt); mb_release(em); mb_release(ev);
                }
    br_set_threads(0);
}

/* Loss of a batch_norm2d training step: sum(out .* R). */
static double bn_loss(const MB *X, const MB *g, const MB *bt, const MB *R)
{
    BrErr e = {0};
    MB *o[5];
    MB *em = mb_dense(g->rows, 1, &e), *ev = mb_fill(g->rows, 1, 1, &e);
    k_batch_norm2d(X, g, bt, em, ev, true, 1e-3, 0.9, o, &e);
    double l = sum_prod(o[0], R);
    rel(o, 5);
    mb_release(em); mb_release(ev);
    return l;
}

/* Perturbs cell (i, j) of dense m by h. */
static void bump(MB *m, int64_t i, int64_t j, double h)
{
    m->d[i * m->cols + j] += h;
}

static void test_bn_grad(void)
{
    static const int64_t sh[][3] = {{1, 1, 3}, {3, 2, 2}, {4, 1, 5}, {70, 2, 1}};
    for (size_t s = 0; s < 4; s++) {
        int64_t N = sh[s][0], C = sh[s][1], HW = sh[s][2];
        BrErr e = {0};
        MB *X = gen(N, C * HW, 1, false, 2, 0.3, 50 + s), *g = gen(C, 1, 1, false, 0.5, 1, 60 + s);
        MB *bt = gen(C, 1, 1, false, 1, 0, 70 + s), *R = gen(N, C * HW, 1, false, 1, 0, 80 + s);
        MB *em = mb_dense(C, 1, &e), *ev = mb_fill(C, 1, 1, &e), *o[5], *bo[3];
        k_batch_norm2d(X, g, bt, em, ev, true, 1e-3, 0.9, o, &e);
        int rc = k_batch_norm2d_bwd(X, R, g, 1e-3, o[3], o[4], bo, &e);
        T_CHECK(rc == 0, "bn grad bwd: %s", e.msg);
        const double h = 1e-6;
        double maxerr = 0;
        MB *ps[3] = {X, g, bt};
        for (int q = 0; q < 3 && !rc; q++)
            for (int64_t i = 0; i < ps[q]->rows; i++)
                for (int64_t j = 0; j < ps[q]->cols; j++) {
                    bump(ps[q], i, j, h);
                    double lp = bn_loss(X, g, bt, R);
                    bump(ps[q], i, j, -2 * h);
                    double lm = bn_loss(X, g, bt, R);
                    bump(ps[q], i, j, h);
                    double fd = (lp - lm) / (2 * h), an = mb_get(bo[q], i, j);
                    double err = fabs(fd - an) / fmax(1, fabs(fd));
                    if (err > maxerr) maxerr = err;
                }
        T_CHECK(maxerr < 1e-6, "bn gradient check N=%lld C=%lld HW=%lld: max rel err %g", (long long)N, (long long)C,
                (long long)HW, maxerr);
        rel(o, 5);
        if (!rc) rel(bo, 3);
        mb_release(X); mb_release(g); mb_release(bt); mb_release(R); mb_release(em); mb_release(ev);
    }
}

static void test_lstm(void)
{
    /* N, T, D, M */
    static const int64_t sh[][4] = {{0, 1, 1, 1}, {1, 1, 1, 1}, {3, 2, 2, 3}, {40, 3, 2, 2},
                                    {5, 4, 3, 1}, {2, 1, 5, 4}, {70, 2, 1, 2}};
    static const double sps[] = {0, 0.1, 1};
    uint64_t seed = 1000;
    for (size_t s = 0; s < sizeof sh / sizeof sh[0]; s++)
        for (size_t p = 0; p < 3; p++)
            for (int fmt = 0; fmt < 4; fmt++)
                for (int seq = 0; seq <= 1; seq++) {
                    int th = 1 + (int)((s + p + (size_t)fmt) % 2);
                    br_set_threads(th);
                    int64_t N = sh[s][0], T = sh[s][1], D = sh[s][2], M = sh[s][3];
                    BrErr e = {0};
                    MB *X = gen(N, T * D, sps[p], fmt & 1, 1, 0, seed++);
                    MB *W = gen(D + M, 4 * M, 0.9, fmt & 2, 0.8, 0, seed++), *b = gen(1, 4 * M, 0.8, false, 0.5, 0, seed++);
                    bool emp = fmt == 3;
                    MB *o0 = emp ? mb_empty(0, 0, &e) : gen(N, M, 0.7, fmt & 1, 1, 0, seed++);
                    MB *c0 = emp ? mb_empty(N, 0, &e) : gen(N + (fmt == 1), M, 0.7, false, 1, 0, seed++);
                    MB *dout = gen(N, (seq ? T : 1) * M, 0.8, fmt & 2, 1, 0, seed++);
                    MB *dc = fmt == 2 ? mb_empty(0, 0, &e) : gen(N, M, 0.5, false, 1, 0, seed++);
                    MB *o[5], *r[5];
                    int rc = k_lstm(X, W, b, o0, c0, seq, o, &e);
                    T_CHECK(rc == 0, "lstm rc %d: %s", rc, e.msg);
                    if (!rc) {
                        MB *c0r = c0;
                        ref_lstm(X, W, b, o0, c0r, seq, r);
                        for (int k = 0; k < 5; k++) {
                            T_CHECK(valid(o[k]), "lstm out %d invalid", k);
                            T_MB_EQ(o[k], r[k], 1e-10, "lstm out %d N=%lld T=%lld D=%lld M=%lld sp=%g fmt=%d seq=%d th=%d",
                                    k, (long long)N, (long long)T, (long long)D, (long long)M, sps[p], fmt, seq, th);
                        }
                        rel(o, 5); rel(r, 5);
                    }
                    /* backward needs initial states of exactly N rows */
                    if (fmt == 1) { mb_release(c0); c0 = gen(N, M, 0.7, false, 1, 0, seed++); }
                    rc = k_lstm_bwd(X, W, b, o0, c0, seq, dout, dc, o, &e);
                    T_CHECK(rc == 0, "lstm bwd rc %d: %s", rc, e.msg);
                    if (!rc) {
                        ref_lstm_bwd(X, W, b, o0, c0, seq, dout, dc, r);
                        for (int k = 0; k < 5; k++) {
                            T_CHECK(valid(o[k]), "lstm bwd out %d invalid", k);
                            T_MB_EQ(o[k], r[k], 1e-9, "lstm bwd %d N=%lld T=%lld D=%lld M=%lld sp=%g fmt=%d seq=%d th=%d",
                                    k, (long long)N, (long long)T, (long long)D, (long long)M, sps[p], fmt, seq, th);
                        }
                        rel(o, 5); rel(r, 5);
                    }
                    mb_release(X); mb_release(W); mb_release(b); mb_release(o0); mb_release(c0);
                    mb_release(dout); mb_release(dc);
                }
    br_set_threads(0);
}

/* Loss of an lstm forward: sum(out .* R) + sum(c .* Rc). */
static double lstm_loss(const MB *X, const MB *W, const MB *b, const MB *o0, const MB *c0, bool seq, const MB *R,
                        const MB *Rc)
{
    BrErr e = {0};
    MB *o[5];
    k_lstm(X, W, b, o0, c0, seq, o, &e);
    double l = sum_prod(o[0], R) + sum_prod(o[1], Rc);
    rel(o, 5);
    return l;
}

static void test_lstm_grad(void)
{
    static const int64_t sh[][4] = {{2, 3, 2, 2}, {1, 1, 1, 1}, {3, 2, 1, 3}, {35, 2, 1, 1}};
    for (size_t s = 0; s < 4; s++)
        for (int seq = 0; seq <= 1; seq++) {
            int64_t N = sh[s][0], T = sh[s][1], D = sh[s][2], M = sh[s][3];
            BrErr e = {0};
            MB *X = gen(N, T * D, 1, false, 1, 0, 7 + s), *W = gen(D + M, 4 * M, 1, false, 0.8, 0, 17 + s);
            MB *b = gen(1, 4 * M, 1, false, 0.5, 0, 27 + s), *o0 = gen(N, M, 1, false, 0.5, 0, 37 + s);
            MB *c0 = gen(N, M, 1, false, 0.5, 0, 47 + s), *R = gen(N, (seq ? T : 1) * M, 1, false, 1, 0, 57 + s);
            MB *Rc = gen(N, M, 1, false, 1, 0, 67 + s), *g[5];
            int rc = k_lstm_bwd(X, W, b, o0, c0, seq, R, Rc, g, &e);
            T_CHECK(rc == 0, "lstm grad bwd: %s", e.msg);
            MB *ps[5] = {X, W, b, o0, c0};
            double maxerr = 0, h = 1e-6;
            for (int q = 0; q < 5 && !rc; q++)
                for (int64_t i = 0; i < ps[q]->rows; i++)
                    for (int64_t j = 0; j < ps[q]->cols; j++) {
                        bump(ps[q], i, j, h);
                        double lp = lstm_loss(X, W, b, o0, c0, seq, R, Rc);
                        bump(ps[q], i, j, -2 * h);
                        double lm = lstm_loss(X, W, b, o0, c0, seq, R, Rc);
                        bump(ps[q], i, j, h);
                        double fd = (lp - lm) / (2 * h), an = mb_get(g[q], i, j);
                        double err = fabs(fd - an) / fmax(1, fabs(fd));
                        if (err > maxerr) maxerr = err;
                    }
            T_CHECK(maxerr < 1e-6, "lstm gradient check N=%lld T=%lld D=%lld M=%lld seq=%d: max rel err %g",
                    (long long)N, (long long)T, (long long)D, (long long)M, seq, maxerr);
            if (!rc) rel(g, 5);
            mb_release(X); mb_release(W); mb_release(b); mb_release(o0); mb_release(c0); mb_release(R); mb_release(Rc);
        }
}

/* Larger inputs: identical results with 1 and 2 threads. */
static void test_threads(void)
{
    BrErr e = {0};
    MB *X = gen(300, 4 * 64, 0.5, false, 2, 0.1, 5), *g = gen(4, 1, 1, false, 1, 1, 6), *bt = gen(4, 1, 1, false, 1, 0, 7);
    MB *em = mb_dense(4, 1, &e), *ev = mb_fill(4, 1, 1, &e), *a[5], *c[5], *ba[3], *bc[3];
    br_set_threads(1);
    k_batch_norm2d(X, g, bt, em, ev, true, 1e-5, 0.9, a, &e);
    k_batch_norm2d_bwd(X, X, g, 1e-5, a[3], a[4], ba, &e);
    br_set_threads(2);
    k_batch_norm2d(X, g, bt, em, ev, true, 1e-5, 0.9, c, &e);
    k_batch_norm2d_bwd(X, X, g, 1e-5, c[3], c[4], bc, &e);
    for (int k = 0; k < 5; k++) T_MB_EQ(a[k], c[k], 1e-13, "bn threads out %d", k);
    for (int k = 0; k < 3; k++) T_MB_EQ(ba[k], bc[k], 1e-13, "bn bwd threads out %d", k);
    rel(a, 5); rel(c, 5); rel(ba, 3); rel(bc, 3);
    mb_release(X); mb_release(g); mb_release(bt); mb_release(em); mb_release(ev);

    int64_t N = 200, T = 5, D = 8, M = 16;
    X = gen(N, T * D, 1, false, 1, 0, 8);
    MB *W = gen(D + M, 4 * M, 1, false, 0.3, 0, 9), *b = gen(1, 4 * M, 1, false, 0.3, 0, 10);
    MB *o0 = gen(N, M, 1, false, 0.5, 0, 11), *c0 = gen(N, M, 1, false, 0.5, 0, 12);
    MB *dout = gen(N, T * M, 1, false, 1, 0, 13), *dc = gen(N, M, 1, false, 1, 0, 14);
    MB *la[5], *lc[5];
    br_set_threads(1);
    k_lstm(X, W, b, o0, c0, true, la, &e);
    br_set_threads(2);
    k_lstm(X, W, b, o0, c0, true, lc, &e);
    for (int k = 0; k < 5; k++) T_MB_EQ(la[k], lc[k], 1e-13, "lstm threads out %d", k);
    rel(la, 5); rel(lc, 5);
    br_set_threads(1);
    k_lstm_bwd(X, W, b, o0, c0, true, dout, dc, la, &e);
    br_set_threads(2);
    k_lstm_bwd(X, W, b, o0, c0, true, dout, dc, lc, &e);
    for (int k = 0; k < 5; k++) T_MB_EQ(la[k], lc[k], 1e-13, "lstm bwd threads out %d", k);
    rel(la, 5); rel(lc, 5);
    br_set_threads(0);
    mb_release(X); mb_release(W); mb_release(b); mb_release(o0); mb_release(c0); mb_release(dout); mb_release(dc);
}

static void test_errors(void)
{
    BrErr e = {0};
    MB *o[5];
    MB *X = gen(3, 6, 1, false, 1, 0, 1), *g2 = mb_fill(2, 1, 1, &e), *g4 = mb_fill(4, 1, 1, &e);
    MB *g23 = mb_fill(2, 3, 1, &e), *g0 = mb_fill(0, 1, 1, &e);
    int rc = k_batch_norm2d(X, g4, g4, g4, g4, true, 1e-5, 0.9, o, &e);
    T_CHECK(rc && strstr(e.msg, "dimension") && strstr(e.msg, "batch_norm2d"), "bn channels: %s", e.msg);
    e = (BrErr){0};
    rc = k_batch_norm2d(X, g2, g4, g2, g2, true, 1e-5, 0.9, o, &e);
    T_CHECK(rc && strstr(e.msg, "dimension") && strstr(e.msg, "shift"), "bn shift: %s", e.msg);
    e = (BrErr){0};
    rc = k_batch_norm2d(X, g23, g2, g2, g2, true, 1e-5, 0.9, o, &e);
    T_CHECK(rc && strstr(e.msg, "dimension"), "bn scale shape: %s", e.msg);
    e = (BrErr){0};
    rc = k_batch_norm2d(X, g0, g0, g0, g0, true, 1e-5, 0.9, o, &e);
    T_CHECK(rc && strstr(e.msg, "dimension"), "bn no channels: %s", e.msg);
    e = (BrErr){0};
    MB *dy = gen(3, 5, 1, false, 1, 0, 2);
    rc = k_batch_norm2d_bwd(X, dy, g2, 1e-5, g2, g2, o, &e);
    T_CHECK(rc && strstr(e.msg, "dimension") && strstr(e.msg, "batch_norm2d_backward"), "bn bwd dout: %s", e.msg);
    e = (BrErr){0};
    rc = k_batch_norm2d_bwd(X, X, g2, 1e-5, g4, g2, o, &e);
    T_CHECK(rc && strstr(e.msg, "dimension") && strstr(e.msg, "cache_mean"), "bn bwd cache: %s", e.msg);
    for (int i = 0; i < 5; i++) T_CHECK(o[i] == NULL, "outputs NULL on error");
    /* lstm: D = 2, M = 1, T = 3 */
    MB *W = gen(3, 4, 1, false, 1, 0, 3), *b = mb_fill(1, 4, 0, &e), *s = mb_fill(3, 1, 0, &e);
    MB *W5 = gen(3, 5, 1, false, 1, 0, 4), *W44 = gen(1, 4, 1, false, 1, 0, 5), *b3 = mb_fill(1, 3, 0, &e);
    MB *s2 = mb_fill(2, 1, 0, &e), *s32 = mb_fill(3, 2, 0, &e), *X5 = gen(3, 5, 1, false, 1, 0, 6);
    e = (BrErr){0};
    rc = k_lstm(X, W, b, s, s, false, o, &e);
    T_CHECK(rc == 0 && o[0]->rows == 3 && o[0]->cols == 1 && o[2]->rows == 3 && o[2]->cols == 3, "lstm ok: %s", e.msg);
    if (!rc) rel(o, 5);
    struct { const MB *X, *W, *b, *o0, *c0; const char *what; } bad[] = {
        {X, W5, b, s, s, "columns"}, {X, W44, b, s, s, "rows"}, {X5, W, b, s, s, "X has"},
        {X, W, b3, s, s, "bias"}, {X, W, b, s2, s, "out0"}, {X, W, b, s, s32, "c0"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        e = (BrErr){0};
        rc = k_lstm(bad[i].X, bad[i].W, bad[i].b, bad[i].o0, bad[i].c0, true, o, &e);
        T_CHECK(rc && strstr(e.msg, "dimension") && strstr(e.msg, bad[i].what) && strstr(e.msg, "lstm"),
                "lstm bad %zu: %s", i, e.msg);
    }
    MB *dout = mb_fill(3, 2, 1, &e), *s4 = mb_fill(4, 1, 0, &e);
    e = (BrErr){0};
    rc = k_lstm_bwd(X, W, b, s, s, false, dout, s, o, &e);
    T_CHECK(rc && strstr(e.msg, "dimension") && strstr(e.msg, "dout"), "lstm bwd dout: %s", e.msg);
    e = (BrErr){0};
    rc = k_lstm_bwd(X, W, b, s, s, false, s, s2, o, &e);
    T_CHECK(rc && strstr(e.msg, "dimension") && strstr(e.msg, "dc"), "lstm bwd dc: %s", e.msg);
    e = (BrErr){0};
    rc = k_lstm_bwd(X, W, b, s4, s, false, s, s, o, &e);
    T_CHECK(rc && strstr(e.msg, "dimension") && strstr(e.msg, "out0"), "lstm bwd out0 rows: %s", e.msg);
    MB *all[] = {X, g2, g4, g23, g0, dy, W, b, s, W5, W44, b3, s2, s32, X5, dout, s4};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) mb_release(all[i]);
}

/* The parallel regions of dnn2.c ask br_par: batch_norm2d's channel
 * sums and apply pass, its backward pass, lstm and lstm_backward (fixed
 * row blocks, block partials added in block order, per-thread scratch),
 * kept on one thread when crowded (all below BR_PAR_CROWDED_MIN), with
 * the same bits. */
typedef struct CrowdDnn2 { MB *X, *g, *bt, *em, *ev, *LX, *W, *b, *o0, *c0, *dout, *dc; BrErr e; } CrowdDnn2;

static void crowded_dnn2_run(void *arg, MB **r)
{
    CrowdDnn2 *c = arg;
    k_batch_norm2d(c->X, c->g, c->bt, c->em, c->ev, true, 1e-5, 0.9, r, &c->e);
    if (r[3] && r[4]) k_batch_norm2d_bwd(c->X, c->X, c->g, 1e-5, r[3], r[4], r + 5, &c->e);
    k_lstm(c->LX, c->W, c->b, c->o0, c->c0, true, r + 8, &c->e);
    k_lstm_bwd(c->LX, c->W, c->b, c->o0, c->c0, true, c->dout, c->dc, r + 13, &c->e);
}

static void crowded_dnn2(void)
{
    BrErr e = {0};
    int64_t N = 100, T = 4, D = 8, M = 8;
    CrowdDnn2 c = {.X = gen(300, 4 * 64, 0.5, false, 2, 0.1, 21), .g = gen(4, 1, 1, false, 1, 1, 22),
                   .bt = gen(4, 1, 1, false, 1, 0, 23), .em = mb_dense(4, 1, &e), .ev = mb_fill(4, 1, 1, &e),
                   .LX = gen(N, T * D, 1, false, 1, 0, 24), .W = gen(D + M, 4 * M, 1, false, 0.3, 0, 25),
                   .b = gen(1, 4 * M, 1, false, 0.3, 0, 26), .o0 = gen(N, M, 1, false, 0.5, 0, 27),
                   .c0 = gen(N, M, 1, false, 0.5, 0, 28), .dout = gen(N, T * M, 1, false, 1, 0, 29),
                   .dc = gen(N, M, 1, false, 1, 0, 30)};
    t_crowded("dnn2", 18, 5, crowded_dnn2_run, &c);
    MB *in[] = {c.X, c.g, c.bt, c.em, c.ev, c.LX, c.W, c.b, c.o0, c.c0, c.dout, c.dc};
    for (size_t i = 0; i < sizeof in / sizeof *in; i++) mb_release(in[i]);
}

int main(void)
{
    test_bn();
    test_bn_grad();
    test_lstm();
    test_lstm_grad();
    test_threads();
    crowded_dnn2();
    test_errors();
    return t_done("test_dnn2");
}
