/* test_dnn.c: the deep-learning kernels (kernels/dnn.h) against naive
 * reference loops over mb_get, sweeping batch sizes, channels, image and
 * filter shapes (1x1, non-square), strides 1/2, paddings 0/1/2, dense and
 * sparse inputs (sparsity 0 .. 1) and thread counts 1 and 2; gradient
 * checks of the backward functions by finite differences of the forward
 * ones; shape errors. */
#include "t.h"
#include "kernels/dnn.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng;

static double urand(void)
{
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (double)(rng >> 11) * (1.0 / 9007199254740992.0);
}

/* m x n, each cell non-zero with probability sp; ints: small integers in
 * [-4, 4] \ {0} (ties), else uniform in (-1, 1); format forced. */
static MB *gen(int64_t m, int64_t n, double sp, bool sparse, bool ints, uint64_t seed)
{
    BrErr e = {0};
    MB *d = mb_dense(m, n, &e);
    rng = seed * 0x9E3779B97F4A7C15ull + 12345;
    for (int64_t i = 0; i < m * n; i++)
        if (urand() < sp) {
            double v = ints ? floor(urand() * 8) - 4 : 2 * urand() - 1;
            d->d[i] = ints && v >= 0 ? v + 1 : v == 0 ? 0.5 : v;
        }
    mb_recount_nnz(d);
    if (sparse) mb_make_sparse(d, &e);
    return d;
}

/* Structural invariants of a kernel result (exact nnz, sorted CSR without
 * zeros, refs 1). */
static bool valid(const MB *r)
{
    if (!r || r->refs != 1) return false;
    if (r->sparse) {
        if (r->rp[0] != 0 || r->rp[r->rows] != r->nnz) return false;
        for (int64_t i = 0; i < r->rows; i++)
            for (int64_t k = r->rp[i]; k < r->rp[i + 1]; k++) {
                if (r->ci[k] < 0 || r->ci[k] >= r->cols || r->v[k] == 0) return false;
                if (k > r->rp[i] && r->ci[k] <= r->ci[k - 1]) return false;
            }
        return true;
    }
    int64_t c = 0;
    for (int64_t i = 0; i < r->rows * r->cols; i++) c += r->d[i] != 0;
    return c == r->nnz;
}

/* ---- reference implementations (naive loops over mb_get) ---- */

static double xat(const MB *x, const DnnShape *s, int64_t n, int64_t c, int64_t h, int64_t w)
{
    return mb_get(x, n, (c * s->H + h) * s->W + w);
}

static MB *ref_conv2d(const MB *x, const MB *w, const DnnShape *s)
{
    BrErr e = {0};
    MB *o = mb_dense(s->N, s->K * s->P * s->Q, &e);
    for (int64_t n = 0; n < s->N; n++)
        for (int64_t k = 0; k < s->K; k++)
            for (int64_t p = 0; p < s->P; p++)
                for (int64_t q = 0; q < s->Q; q++) {
                    double acc = 0;
                    for (int64_t c = 0; c < s->C; c++)
                        for (int64_t r = 0; r < s->R; r++)
                            for (int64_t t = 0; t < s->S; t++) {
                                int64_t h = p * s->sh - s->ph + r, ww = q * s->sw - s->pw + t;
                                if (h < 0 || h >= s->H || ww < 0 || ww >= s->W) continue;
                                acc += xat(x, s, n, c, h, ww) * mb_get(w, k, (c * s->R + r) * s->S + t);
                            }
                    o->d[n * o->cols + (k * s->P + p) * s->Q + q] = acc;
                }
    mb_recount_nnz(o);
    return o;
}

static MB *ref_bwf(const MB *x, const MB *dout, const DnnShape *s)
{
    BrErr e = {0};
    MB *o = mb_dense(s->K, s->C * s->R * s->S, &e);
    for (int64_t k = 0; k < s->K; k++)
        for (int64_t c = 0; c < s->C; c++)
            for (int64_t r = 0; r < s->R; r++)
                for (int64_t t = 0; t < s->S; t++) {
                    double acc = 0;
                    for (int64_t n = 0; n < s->N; n++)
                        for (int64_t p = 0; p < s->P; p++)
                            for (int64_t q = 0; q < s->Q; q++) {
                                int64_t h = p * s->sh - s->ph + r, ww = q * s->sw - s->pw + t;
                                if (h < 0 || h >= s->H || ww < 0 || ww >= s->W) continue;
                                acc += xat(x, s, n, c, h, ww) * mb_get(dout, n, (k * s->P + p) * s->Q + q);
                            }
                    o->d[k * o->cols + (c * s->R + r) * s->S + t] = acc;
                }
    mb_recount_nnz(o);
    return o;
}

static MB *ref_bwd(const MB *w, const MB *dout, const DnnShape *s)
{
    BrErr e = {0};
    MB *o = mb_dense(s->N, s->C * s->H * s->W, &e);
    for (int64_t n = 0; n < s->N; n++)
        for (int64_t k = 0; k < s->K; k++)
            for (int64_t p = 0; p < s->P; p++)
                for (int64_t q = 0; q < s->Q; q++) {
                    double g = mb_get(dout, n, (k * s->P + p) * s->Q + q);
                    for (int64_t c = 0; c < s->C; c++)
                        for (int64_t r = 0; r < s->R; r++)
                            for (int64_t t = 0; t < s->S; t++) {
                                int64_t h = p * s->sh - s->ph + r, ww = q * s->sw - s->pw + t;
                                if (h < 0 || h >= s->H || ww < 0 || ww >= s->W) continue;
                                o->d[n * o->cols + (c * s->H + h) * s->W + ww] +=
                                    g * mb_get(w, k, (c * s->R + r) * s->S + t);
                            }
                }
    mb_recount_nnz(o);
    return o;
}

/* Pooling reference; with dout, the backward function instead. */
static MB *ref_pool(const MB *x, const MB *dout, const DnnShape *s, bool avg)
{
    BrErr e = {0};
    MB *o = dout ? mb_dense(s->N, s->C * s->H * s->W, &e) : mb_dense(s->N, s->C * s->P * s->Q, &e);
    for (int64_t n = 0; n < s->N; n++)
        for (int64_t c = 0; c < s->C; c++)
            for (int64_t p = 0; p < s->P; p++)
                for (int64_t q = 0; q < s->Q; q++) {
                    double acc = avg ? 0 : -DBL_MAX;
                    int64_t bh = -1, bw = -1;
                    double g = dout ? mb_get(dout, n, (c * s->P + p) * s->Q + q) : 0;
                    for (int64_t r = 0; r < s->R; r++)
                        for (int64_t t = 0; t < s->S; t++) {
                            int64_t h = p * s->sh - s->ph + r, ww = q * s->sw - s->pw + t;
                            if (h < 0 || h >= s->H || ww < 0 || ww >= s->W) continue;
                            double v = xat(x, s, n, c, h, ww);
                            if (avg) {
                                acc += v;
                                if (dout) o->d[n * o->cols + (c * s->H + h) * s->W + ww] += g / (double)(s->R * s->S);
                            } else if (v > acc) { acc = v; bh = h; bw = ww; }
                        }
                    if (!dout) o->d[n * o->cols + (c * s->P + p) * s->Q + q] = avg ? acc / (double)(s->R * s->S) : acc;
                    else if (!avg && bh >= 0) o->d[n * o->cols + (c * s->H + bh) * s->W + bw] += g;
                }
    mb_recount_nnz(o);
    return o;
}

static MB *ref_bias(const MB *x, const MB *b, bool mult)
{
    BrErr e = {0};
    MB *o = mb_dense(x->rows, x->cols, &e);
    int64_t pq = x->cols / b->rows;
    for (int64_t i = 0; i < x->rows; i++)
        for (int64_t j = 0; j < x->cols; j++)
            o->d[i * x->cols + j] = mult ? mb_get(x, i, j) * mb_get(b, j / pq, 0) : mb_get(x, i, j) + mb_get(b, j / pq, 0);
    mb_recount_nnz(o);
    return o;
}

/* ---- sweeps ---- */

static int nconf;

/* All kernels on one shape, x/w/dout dense or sparse by the bits of fmt,
 * at the given sparsity; results compared with the references and across
 * thread counts (identical bits expected). */
static void check_shape(DnnShape s, double sp, int fmt, uint64_t seed)
{
    BrErr e = {0};
    if (dnn_shape_check(&s, true, "conv2d", &e)) {
        T_CHECK(strstr(e.msg, "dimension") != NULL, "shape error without 'dimension': %s", e.msg);
        return;
    }
    nconf++;
    int64_t CHW = s.C * s.H * s.W, CRS = s.C * s.R * s.S, PQ = s.P * s.Q;
    bool xs = fmt & 1, ws = fmt & 2, ds = fmt & 4;
    MB *x = gen(s.N, CHW, sp, xs, seed & 1, seed);
    MB *w = gen(s.K, CRS, sp < 0.5 ? 0.5 : 1.0, ws, false, seed + 1);
    MB *dout = gen(s.N, s.K * PQ, sp, ds, false, seed + 2);
    MB *dpool = gen(s.N, s.C * PQ, sp, ds, false, seed + 3);
    MB *rc = ref_conv2d(x, w, &s), *rf = ref_bwf(x, dout, &s), *rd = ref_bwd(w, dout, &s);
    MB *rmp = ref_pool(x, NULL, &s, false), *rap = ref_pool(x, NULL, &s, true);
    MB *rmb = ref_pool(x, dpool, &s, false), *rab = ref_pool(x, dpool, &s, true);
    MB *prev[7] = {0};
    char what[160];
    snprintf(what, sizeof what, "N%lld C%lld %lldx%lld K%lld %lldx%lld s%lld,%lld p%lld,%lld sp%g fmt%d",
             (long long)s.N, (long long)s.C, (long long)s.H, (long long)s.W, (long long)s.K, (long long)s.R,
             (long long)s.S, (long long)s.sh, (long long)s.sw, (long long)s.ph, (long long)s.pw, sp, fmt);
    for (int th = 1; th <= 2; th++) {
        br_set_threads(th);
        MB *got[7] = {
            k_conv2d(x, w, &s, &e), k_conv2d_bwd_filter(x, dout, &s, &e), k_conv2d_bwd_data(w, dout, &s, &e),
            k_pool(x, &s, false, &e), k_pool(x, &s, true, &e), k_pool_bwd(x, dpool, &s, false, &e),
            k_pool_bwd(x, dpool, &s, true, &e)};
        const MB *want[7] = {rc, rf, rd, rmp, rap, rmb, rab};
        static const char *names[7] = {"conv2d", "bwd_filter", "bwd_data", "max_pool", "avg_pool", "max_pool_bwd",
                                       "avg_pool_bwd"};
        T_CHECK(e.code == 0, "%s: error %s", what, e.msg);
        for (int i = 0; i < 7; i++) {
            T_CHECK(valid(got[i]), "%s %s threads %d: invalid block", names[i], what, th);
            T_MB_EQ(got[i], want[i], 1e-12, "%s %s threads %d", names[i], what, th);
            if (prev[i]) T_MB_EQ(got[i], prev[i], 0, "%s %s: thread counts differ", names[i], what);
            mb_release(prev[i]);
            prev[i] = got[i];
        }
    }
    for (int i = 0; i < 7; i++) mb_release(prev[i]);
    MB *all[] = {x, w, dout, dpool, rc, rf, rd, rmp, rap, rmb, rab};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) mb_release(all[i]);
}

static void sweep(void)
{
    static const int64_t hw[][2] = {{1, 1}, {4, 4}, {5, 3}, {3, 6}};
    static const int64_t rs[][2] = {{1, 1}, {3, 3}, {2, 3}};
    static const double sps[] = {0, 0.1, 1};
    uint64_t seed = 1;
    for (int64_t N = 1; N <= 4; N += 3)
        for (int64_t C = 1; C <= 3; C++)
            for (size_t a = 0; a < 4; a++)
                for (size_t b = 0; b < 3; b++)
                    for (int64_t st = 1; st <= 2; st++)
                        for (int64_t pd = 0; pd <= 2; pd++) {
                            DnnShape s = {.N = N, .C = C, .H = hw[a][0], .W = hw[a][1], .K = 1 + (int64_t)(seed % 3),
                                          .R = rs[b][0], .S = rs[b][1], .sh = st, .sw = st, .ph = pd, .pw = pd};
                            int fmt = (int)(seed % 8);
                            check_shape(s, sps[seed % 3], fmt, seed);
                            seed++;
                        }
    /* mixed strides and paddings, N = 0, 2, 3 */
    for (int fmt = 0; fmt < 8; fmt++) {
        DnnShape s1 = {.N = 2, .C = 2, .H = 6, .W = 5, .K = 2, .R = 3, .S = 2, .sh = 2, .sw = 1, .ph = 1, .pw = 0};
        check_shape(s1, 0.5, fmt, 100 + fmt);
        DnnShape s2 = {.N = 0, .C = 2, .H = 3, .W = 3, .K = 2, .R = 2, .S = 2, .sh = 1, .sw = 1, .ph = 0, .pw = 0};
        check_shape(s2, 1, fmt, 200 + fmt);
        DnnShape s3 = {.N = 3, .C = 3, .H = 7, .W = 7, .K = 3, .R = 3, .S = 3, .sh = 2, .sw = 2, .ph = 2, .pw = 1};
        check_shape(s3, 0.3, fmt, 300 + fmt);
    }
    /* large enough to run in parallel (work >= BR_PAR_MIN) */
    static const double big_sp[] = {0.001, 0.1, 1};
    for (int i = 0; i < 3; i++)
        for (int fmt = 0; fmt < 8; fmt += 3) {
            DnnShape s = {.N = 9, .C = 3, .H = 12, .W = 11, .K = 4, .R = 3, .S = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1};
            check_shape(s, big_sp[i], fmt, 400 + (uint64_t)(i * 8 + fmt));
            DnnShape t = {.N = 10, .C = 2, .H = 16, .W = 16, .K = 3, .R = 1, .S = 1, .sh = 1, .sw = 1, .ph = 0, .pw = 0};
            check_shape(t, big_sp[i], fmt, 500 + (uint64_t)(i * 8 + fmt));
        }
    /* one large image: images one after the other (BLAS may thread) */
    for (int fmt = 0; fmt < 8; fmt += 7) {
        DnnShape s = {.N = 1, .C = 2, .H = 40, .W = 37, .K = 4, .R = 3, .S = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1};
        check_shape(s, 0.2, fmt, 600 + (uint64_t)fmt);
    }
    T_CHECK(nconf > 300, "only %d shapes ran", nconf);
}

/* ---- bias_add / bias_multiply ---- */

static void bias_tests(void)
{
    static const int64_t shapes[][3] = {{0, 4, 2}, {3, 0, 2}, {1, 1, 1}, {4, 6, 3}, {5, 12, 2}, {300, 300, 3}};
    static const double sps[] = {0, 0.001, 0.1, 1};
    BrErr e = {0};
    for (size_t k = 0; k < 6; k++)
        for (size_t a = 0; a < 4; a++)
            for (int fmt = 0; fmt < 4; fmt++)
                for (int th = 1; th <= 2; th++) {
                    br_set_threads(th);
                    int64_t n = shapes[k][0], m = shapes[k][1], c = shapes[k][2];
                    MB *x = gen(n, m, sps[a], fmt & 1, true, k * 10 + a);
                    MB *b = gen(c, 1, fmt & 2 ? 0.5 : 1, fmt & 2, true, k * 10 + a + 5);
                    for (int mult = 0; mult <= 1; mult++) {
                        MB *got = mult ? k_bias_mult(x, b, &e) : k_bias_add(x, b, &e);
                        MB *want = ref_bias(x, b, mult);
                        T_CHECK(valid(got), "bias %d %lldx%lld: invalid", mult, (long long)n, (long long)m);
                        T_MB_EQ(got, want, 0, "bias %d %lldx%lld sp %g fmt %d", mult, (long long)n, (long long)m,
                                sps[a], fmt);
                        mb_release(got);
                        mb_release(want);
                    }
                    mb_release(x);
                    mb_release(b);
                }
    /* shape errors */
    MB *x = gen(2, 5, 1, false, true, 1), *b = gen(2, 1, 1, false, true, 2), *bt = gen(1, 2, 1, false, true, 3);
    e = (BrErr){0};
    T_CHECK(!k_bias_add(x, b, &e) && strstr(e.msg, "dimension"), "bias_add 5 cols / 2 channels: %s", e.msg);
    e = (BrErr){0};
    T_CHECK(!k_bias_mult(x, bt, &e) && strstr(e.msg, "dimension"), "bias_multiply row bias: %s", e.msg);
    mb_release(x); mb_release(b); mb_release(bt);
}

/* ---- gradient checks: backward functions vs central differences of
 * L(x) = sum(f(x) .* G) ---- */

static double loss(MB *(*fwd)(const MB *, const MB *, const DnnShape *, bool, BrErr *), const MB *a, const MB *b,
                   const DnnShape *s, bool avg, const MB *g)
{
    BrErr e = {0};
    MB *y = fwd(a, b, s, avg, &e);
    double acc = 0;
    for (int64_t i = 0; i < y->rows; i++)
        for (int64_t j = 0; j < y->cols; j++) acc += mb_get(y, i, j) * mb_get(g, i, j);
    mb_release(y);
    return acc;
}

static MB *f_conv_x(const MB *x, const MB *w, const DnnShape *s, bool avg, BrErr *e) { (void)avg; return k_conv2d(x, w, s, e); }
static MB *f_conv_w(const MB *w, const MB *x, const DnnShape *s, bool avg, BrErr *e) { (void)avg; return k_conv2d(x, w, s, e); }
static MB *f_pool(const MB *x, const MB *unused, const DnnShape *s, bool avg, BrErr *e) { (void)unused; return k_pool(x, s, avg, e); }

/* Numeric gradient of L with respect to a (dense copy perturbed cell by
 * cell) compared with the analytic gradient. */
static void grad_check(MB *(*fwd)(const MB *, const MB *, const DnnShape *, bool, BrErr *), const MB *a0,
                       const MB *b, const DnnShape *s, bool avg, const MB *g, const MB *analytic, const char *what)
{
    BrErr e = {0};
    MB *a = mb_to_dense(a0, &e);
    const double h = 1e-6;
    double maxerr = 0, scale = 1;
    for (int64_t i = 0; i < a->rows * a->cols; i++) {
        double v = a->d[i];
        a->d[i] = v + h; mb_recount_nnz(a);
        double lp = loss(fwd, a, b, s, avg, g);
        a->d[i] = v - h; mb_recount_nnz(a);
        double lm = loss(fwd, a, b, s, avg, g);
        a->d[i] = v; mb_recount_nnz(a);
        double num = (lp - lm) / (2 * h), an = mb_get(analytic, i / a->cols, i % a->cols);
        if (fabs(an) > scale) scale = fabs(an);
        if (fabs(num - an) > maxerr) maxerr = fabs(num - an);
    }
    T_CHECK(maxerr <= 1e-6 * scale, "gradient %s: max error %g", what, maxerr);
    mb_release(a);
}

static void gradients(void)
{
    BrErr e = {0};
    DnnShape shapes[] = {
        {.N = 2, .C = 2, .H = 5, .W = 4, .K = 3, .R = 3, .S = 2, .sh = 1, .sw = 1, .ph = 1, .pw = 0},
        {.N = 3, .C = 1, .H = 6, .W = 6, .K = 2, .R = 2, .S = 2, .sh = 2, .sw = 2, .ph = 0, .pw = 0},
        {.N = 1, .C = 3, .H = 4, .W = 5, .K = 2, .R = 1, .S = 1, .sh = 1, .sw = 2, .ph = 2, .pw = 1},
        {.N = 2, .C = 2, .H = 7, .W = 5, .K = 2, .R = 3, .S = 3, .sh = 2, .sw = 1, .ph = 1, .pw = 1},
    };
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        DnnShape s = shapes[k];
        if (dnn_shape_check(&s, true, "conv2d", &e)) { T_CHECK(0, "bad test shape: %s", e.msg); continue; }
        for (int sparse = 0; sparse <= 1; sparse++) {
            MB *x = gen(s.N, s.C * s.H * s.W, sparse ? 0.3 : 1, sparse, false, 700 + k);
            MB *w = gen(s.K, s.C * s.R * s.S, 1, false, false, 710 + k);
            MB *g = gen(s.N, s.K * s.P * s.Q, sparse ? 0.4 : 1, sparse, false, 720 + k);
            MB *gp = gen(s.N, s.C * s.P * s.Q, 1, false, false, 730 + k);
            MB *dw = k_conv2d_bwd_filter(x, g, &s, &e), *dx = k_conv2d_bwd_data(w, g, &s, &e);
            grad_check(f_conv_w, w, x, &s, false, g, dw, "conv2d_backward_filter");
            grad_check(f_conv_x, x, w, &s, false, g, dx, "conv2d_backward_data");
            for (int avg = 0; avg <= 1; avg++) {
                MB *dp = k_pool_bwd(x, gp, &s, avg, &e);
                /* max pooling: differentiable where no window has ties
                 * (continuous values; sparse zeros tie, so dense only),
                 * and windows all in the padding give -DBL_MAX */
                if ((avg || !sparse) && s.ph < s.R && s.pw < s.S) grad_check(f_pool, x, NULL, &s, avg, gp, dp, avg ? "avg_pool_backward" : "max_pool_backward");
                mb_release(dp);
            }
            mb_release(dw); mb_release(dx); mb_release(x); mb_release(w); mb_release(g); mb_release(gp);
        }
    }
}

/* ---- shape errors and SystemDS's pooling edge rules ---- */

static void errors(void)
{
    BrErr e = {0};
    DnnShape s = {.N = 2, .C = 1, .H = 3, .W = 3, .K = 1, .R = 5, .S = 2, .sh = 1, .sw = 1, .ph = 0, .pw = 0};
    T_CHECK(dnn_shape_check(&s, true, "conv2d", &e) && strstr(e.msg, "dimension"), "window > image: %s", e.msg);
    e = (BrErr){0};
    s.R = 2; s.ph = 1; s.sh = 0;
    T_CHECK(dnn_shape_check(&s, true, "conv2d", &e) && strstr(e.msg, "stride"), "stride 0: %s", e.msg);
    e = (BrErr){0};
    s.sh = 1; s.C = 0;
    T_CHECK(dnn_shape_check(&s, false, "max_pool", &e) && strstr(e.msg, "dimension"), "C = 0: %s", e.msg);
    e = (BrErr){0};
    DnnShape ok = {.N = 2, .C = 1, .H = 3, .W = 3, .K = 2, .R = 2, .S = 2, .sh = 1, .sw = 1, .ph = 0, .pw = 0};
    T_CHECK(dnn_shape_check(&ok, true, "conv2d", &e) == 0 && ok.P == 2 && ok.Q == 2, "P, Q");
    MB *x = gen(2, 9, 1, false, false, 1), *xbad = gen(3, 9, 1, false, false, 2), *w = gen(2, 4, 1, false, false, 3);
    MB *wbad = gen(2, 5, 1, false, false, 4), *dbad = gen(2, 7, 1, false, false, 5);
    e = (BrErr){0};
    T_CHECK(!k_conv2d(xbad, w, &ok, &e) && strstr(e.msg, "dimension"), "conv2d rows: %s", e.msg);
    e = (BrErr){0};
    T_CHECK(!k_conv2d(x, wbad, &ok, &e) && strstr(e.msg, "dimension"), "conv2d filter: %s", e.msg);
    e = (BrErr){0};
    T_CHECK(!k_conv2d_bwd_filter(x, dbad, &ok, &e) && strstr(e.msg, "dimension"), "bwd_filter dout: %s", e.msg);
    e = (BrErr){0};
    T_CHECK(!k_conv2d_bwd_data(w, dbad, &ok, &e) && strstr(e.msg, "dimension"), "bwd_data dout: %s", e.msg);
    e = (BrErr){0};
    T_CHECK(!k_pool_bwd(x, dbad, &ok, false, &e) && strstr(e.msg, "dimension"), "pool_bwd dout: %s", e.msg);
    e = (BrErr){0};
    T_CHECK(!k_pool(xbad, &ok, true, &e) && strstr(e.msg, "dimension"), "pool input: %s", e.msg);
    mb_release(x); mb_release(xbad); mb_release(w); mb_release(wbad); mb_release(dbad);

    /* max pooling ignores padding: all-negative image, pad 1 */
    e = (BrErr){0};
    DnnShape p = {.N = 1, .C = 1, .H = 2, .W = 2, .R = 2, .S = 2, .sh = 1, .sw = 1, .ph = 1, .pw = 1};
    dnn_shape_check(&p, false, "max_pool", &e);
    MB *neg = mb_fill(1, 4, -3, &e);
    MB *mp = k_pool(neg, &p, false, &e), *ap = k_pool(neg, &p, true, &e);
    T_CHECK(mp && mp->cols == 9 && mb_get(mp, 0, 0) == -3 && mb_get(mp, 0, 4) == -3, "max_pool pads ignored");
    T_CHECK(ap && mb_get(ap, 0, 0) == -0.75 && mb_get(ap, 0, 4) == -3, "avg_pool divides by R*S");
    /* NaN propagates through max pooling */
    MB *nanx = mb_dense(1, 4, &e);
    nanx->d[1] = NAN; nanx->d[2] = 5; mb_recount_nnz(nanx);
    MB *np = k_pool(nanx, &p, false, &e);
    T_CHECK(np && isnan(mb_get(np, 0, 4)) && mb_get(np, 0, 6) == 5 && isnan(mb_get(np, 0, 2)), "max_pool NaN");
    /* ties: the first maximum in row-major order gets the gradient */
    MB *tie = mb_fill(1, 4, 2, &e), *g1 = mb_fill(1, 9, 1, &e);
    MB *tb = k_pool_bwd(tie, g1, &p, false, &e);
    T_CHECK(tb && mb_get(tb, 0, 0) == 4 && mb_get(tb, 0, 1) == 2 && mb_get(tb, 0, 2) == 2 && mb_get(tb, 0, 3) == 1,
            "max_pool_backward ties");
    MB *all[] = {neg, mp, ap, nanx, np, tie, g1, tb};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) mb_release(all[i]);
}

/* The parallel regions of dnn.c ask br_par: conv2d, its backward
 * passes (filter: fixed image blocks; data), max and average pooling and
 * their backward passes, bias_add and bias_mult, kept on one thread when
 * crowded (all below BR_PAR_CROWDED_MIN), with the same bits. */
typedef struct CrowdDnn { DnnShape cs, ps; MB *x, *w, *d, *px, *pd, *b; BrErr e; } CrowdDnn;

static void crowded_dnn_run(void *arg, MB **r)
{
    CrowdDnn *c = arg;
    r[0] = k_conv2d(c->x, c->w, &c->cs, &c->e);
    r[1] = k_conv2d_bwd_filter(c->x, c->d, &c->cs, &c->e);
    r[2] = k_conv2d_bwd_data(c->w, c->d, &c->cs, &c->e);
    r[3] = k_pool(c->px, &c->ps, false, &c->e);
    r[4] = k_pool(c->px, &c->ps, true, &c->e);
    r[5] = k_pool_bwd(c->px, c->pd, &c->ps, false, &c->e);
    r[6] = k_pool_bwd(c->px, c->pd, &c->ps, true, &c->e);
    r[7] = k_bias_add(c->px, c->b, &c->e);
    r[8] = k_bias_mult(c->px, c->b, &c->e);
}

static void crowded_dnn(void)
{
    CrowdDnn c = {.cs = {.N = 8, .C = 3, .H = 12, .W = 12, .K = 4, .R = 3, .S = 3, .sh = 1, .sw = 1},
                  .ps = {.N = 16, .C = 8, .H = 32, .W = 32, .R = 2, .S = 2, .sh = 2, .sw = 2}};
    T_CHECK(dnn_shape_check(&c.cs, true, "conv2d", &c.e) == 0 && dnn_shape_check(&c.ps, false, "max_pool", &c.e) == 0,
            "crowded dnn shapes: %s", c.e.msg);
    c.x = gen(c.cs.N, c.cs.C * c.cs.H * c.cs.W, 1, false, false, 51);
    c.w = gen(c.cs.K, c.cs.C * c.cs.R * c.cs.S, 1, false, false, 52);
    c.d = gen(c.cs.N, c.cs.K * c.cs.P * c.cs.Q, 1, false, false, 53);
    c.px = gen(c.ps.N, c.ps.C * c.ps.H * c.ps.W, 1, false, false, 54);
    c.pd = gen(c.ps.N, c.ps.C * c.ps.P * c.ps.Q, 1, false, false, 55);
    c.b = gen(c.ps.C, 1, 1, false, false, 56);
    t_crowded("dnn", 9, 9, crowded_dnn_run, &c);
    mb_release(c.x); mb_release(c.w); mb_release(c.d); mb_release(c.px); mb_release(c.pd); mb_release(c.b);
}

int main(void)
{
    sweep();
    bias_tests();
    gradients();
    errors();
    crowded_dnn();
    br_set_threads(0);
    return t_done("test_dnn");
}
