/* dnn.c: convolution, pooling and bias kernels of DML's deep-learning
 * builtins (see dnn.h for layouts and SystemDS's semantics).
 *
 * Convolutions lower one image at a time (im2col): the C*R*S x P*Q matrix
 * of the image's receptive fields, built from a dense row directly or
 * scattered from a sparse row's non-zeros, then one OpenBLAS dgemm with
 * the filters. Very sparse rows (of the input, or of dout for
 * conv2d_backward_data) skip the lowering: their non-zeros are scattered
 * straight into the output. Images run in parallel (OpenMP, one column buffer per
 * thread) with OpenBLAS single-threaded inside. Pooling works on one image
 * row at a time (sparse rows expanded into a per-thread buffer). */
#include "dnn.h"

#include <cblas.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/ops.h"
#include "mm.h"

void openblas_set_num_threads(int);
int openblas_get_num_threads(void);

/* Largest number of fixed image blocks whose partial filter gradients
 * conv2d_backward_filter keeps (a block sums its images in order). */
#define BWF_BLOCKS 32
#define BWF_BLOCK_MIN 4

/* Least multiply-adds of one dgemm that may use OpenBLAS's threads (as
 * in mm.c: below it waking them costs more than the call). */
#define BLAS_PAR_MIN ((double)(1 << 23))

/* Whether a convolution runs in parallel over its units (images or
 * image blocks): with at least as many units as threads and enough work.
 * Then OpenBLAS runs on the calling threads; otherwise the units run one
 * after the other and a large dgemm may use OpenBLAS's threads (which
 * split the output, so sums keep their order). k_blas_threads()
 * restores the default afterwards. */
static bool units_parallel(int64_t units, double work)
{
    k_blas_ready(work);
    bool par = units >= br_threads() && br_par(work);
    if (!par && units > 0 && work / (double)units >= BLAS_PAR_MIN) k_blas_threads();
    else if (openblas_get_num_threads() != 1) openblas_set_num_threads(1);
    return par;
}

int dnn_shape_check(DnnShape *s, bool conv, const char *fn, BrErr *e)
{
    if (s->N < 0 || s->C < 1 || s->H < 1 || s->W < 1)
        return br_err(e, BR_EDIM, "%s: invalid input dimensions [N,C,H,W] = [%lld,%lld,%lld,%lld]", fn,
                      (long long)s->N, (long long)s->C, (long long)s->H, (long long)s->W);
    if ((conv && s->K < 1) || s->R < 1 || s->S < 1)
        return br_err(e, BR_EDIM, "%s: invalid %s dimensions %lldx%lld%s", fn, conv ? "filter" : "pool",
                      (long long)s->R, (long long)s->S, conv && s->K < 1 ? " (no filters)" : "");
    if (s->sh < 1 || s->sw < 1 || s->ph < 0 || s->pw < 0)
        return br_err(e, BR_EARG, "%s: strides must be >= 1 and paddings >= 0, got stride [%lld,%lld] padding [%lld,%lld]",
                      fn, (long long)s->sh, (long long)s->sw, (long long)s->ph, (long long)s->pw);
    int64_t hh = s->H + 2 * s->ph - s->R, ww = s->W + 2 * s->pw - s->S;
    if (hh < 0 || ww < 0)
        return br_err(e, BR_EDIM, "%s: dimension mismatch: window %lldx%lld larger than the padded input %lldx%lld", fn,
                      (long long)s->R, (long long)s->S, (long long)(s->H + 2 * s->ph), (long long)(s->W + 2 * s->pw));
    s->P = hh / s->sh + 1;
    s->Q = ww / s->sw + 1;
    /* every row length and BLAS extent must fit a 32-bit int */
    double k = conv ? (double)s->K : 1.0, c = (double)s->C;
    double lim = (double)INT_MAX;
    if (c * (double)s->H * (double)s->W > lim || c * (double)s->R * (double)s->S > lim ||
        k * (double)s->P * (double)s->Q > lim || c * (double)s->P * (double)s->Q > lim)
        return br_err(e, BR_EDIM, "%s: dimensions too large (rows of more than 2^31 cells)", fn);
    return 0;
}

/* Error unless m is rows x cols. */
static int check_in(const MB *m, int64_t rows, int64_t cols, const char *fn, const char *what, BrErr *e)
{
    if (m->rows == rows && m->cols == cols) return 0;
    return br_err(e, BR_EDIM, "%s: dimension mismatch: %s is %lldx%lld but the shapes require %lldx%lld", fn, what,
                  (long long)m->rows, (long long)m->cols, (long long)rows, (long long)cols);
}

/* Row i of m as n dense values: a pointer into a dense m, or buf filled
 * from a sparse row. */
static const double *row_of(const MB *m, int64_t i, double *buf)
{
    if (!m->sparse) return m->d + i * m->cols;
    memset(buf, 0, (size_t)m->cols * sizeof(double));
    for (int64_t k = m->rp[i]; k < m->rp[i + 1]; k++) buf[m->ci[k]] = m->v[k];
    return buf;
}

static bool row_empty(const MB *m, int64_t i)
{
    return m->sparse && m->rp[i] == m->rp[i + 1];
}

/* Dense values of a (small) matrix: m->d, or a copy in *tofree. */
static const double *dense_of(const MB *m, double **tofree, BrErr *e)
{
    *tofree = NULL;
    if (!m->sparse) return m->d;
    *tofree = mb_cells_rowmajor(m);
    if (!*tofree && m->rows * m->cols > 0) br_err(e, BR_ENOMEM, "out of memory");
    return *tofree;
}

/* Whether the receptive fields are the image itself (1x1, stride 1, no
 * padding): then im2col is the identity on a dense row. */
static bool is_identity(const DnnShape *s)
{
    return s->R == 1 && s->S == 1 && s->sh == 1 && s->sw == 1 && s->ph == 0 && s->pw == 0;
}

/* im2col of one dense image x (C x H x W) into col (CRS x PQ). */
static void im2col_dense(const double *x, const DnnShape *s, double *col)
{
    const int64_t H = s->H, W = s->W, P = s->P, Q = s->Q, PQ = P * Q;
    for (int64_t c = 0; c < s->C; c++)
        for (int64_t r = 0; r < s->R; r++)
            for (int64_t t = 0; t < s->S; t++) {
                double *o = col + ((c * s->R + r) * s->S + t) * PQ;
                const double *xc = x + c * H * W;
                for (int64_t p = 0; p < P; p++) {
                    int64_t h = p * s->sh - s->ph + r;
                    double *op = o + p * Q;
                    if (h < 0 || h >= H) { memset(op, 0, (size_t)Q * sizeof(double)); continue; }
                    const double *xr = xc + h * W;
                    for (int64_t q = 0; q < Q; q++) {
                        int64_t w = q * s->sw - s->pw + t;
                        op[q] = (w >= 0 && w < W) ? xr[w] : 0.0;
                    }
                }
            }
}

/* im2col of row i of a sparse x: each non-zero scattered to the fields
 * that contain it. */
static void im2col_sparse(const MB *x, int64_t i, const DnnShape *s, double *col)
{
    const int64_t HW = s->H * s->W, PQ = s->P * s->Q;
    memset(col, 0, (size_t)(s->C * s->R * s->S * PQ) * sizeof(double));
    for (int64_t k = x->rp[i]; k < x->rp[i + 1]; k++) {
        int64_t idx = x->ci[k], c = idx / HW, h = idx % HW / s->W, w = idx % s->W;
        double v = x->v[k];
        for (int64_t r = 0; r < s->R; r++) {
            int64_t hp = h + s->ph - r;
            if (hp < 0) break;
            if (hp % s->sh) continue;
            int64_t p = hp / s->sh;
            if (p >= s->P) continue;
            for (int64_t t = 0; t < s->S; t++) {
                int64_t wq = w + s->pw - t;
                if (wq < 0) break;
                if (wq % s->sw) continue;
                int64_t q = wq / s->sw;
                if (q >= s->Q) continue;
                col[((c * s->R + r) * s->S + t) * PQ + p * s->Q + q] = v;
            }
        }
    }
}

/* Receptive fields of image row i of x: a pointer to x's row itself
 * (identity lowering of a dense x) or col filled. */
static const double *lower(const MB *x, int64_t i, const DnnShape *s, double *col)
{
    const int64_t CHW = s->C * s->H * s->W;
    if (x->sparse) { im2col_sparse(x, i, s, col); return col; }
    if (is_identity(s)) return x->d + i * CHW;
    im2col_dense(x->d + i * CHW, s, col);
    return col;
}

/* col2im: adds the fields dcol (CRS x PQ) into the image dx (C x H x W). */
static void col2im_add(const double *dcol, const DnnShape *s, double *dx)
{
    const int64_t H = s->H, W = s->W, P = s->P, Q = s->Q, PQ = P * Q;
    for (int64_t c = 0; c < s->C; c++)
        for (int64_t r = 0; r < s->R; r++)
            for (int64_t t = 0; t < s->S; t++) {
                const double *o = dcol + ((c * s->R + r) * s->S + t) * PQ;
                double *xc = dx + c * H * W;
                for (int64_t p = 0; p < P; p++) {
                    int64_t h = p * s->sh - s->ph + r;
                    if (h < 0 || h >= H) continue;
                    for (int64_t q = 0; q < Q; q++) {
                        int64_t w = q * s->sw - s->pw + t;
                        if (w >= 0 && w < W) xc[h * W + w] += o[p * Q + q];
                    }
                }
            }
}

/* Whether a sparse row with nnz non-zeros goes through the scatter
 * kernels below instead of the dense lowering: when they need 8 times
 * fewer multiply-adds (dense_len: the row length at which both match). */
static bool use_scatter(const MB *m, int64_t i, int64_t dense_len)
{
    return m->sparse && (m->rp[i + 1] - m->rp[i]) * 8 < dense_len;
}

/* Scatter conv2d of sparse row i of x: for every non-zero and every field
 * that contains it, o[k, pq] += w[k, crs] * v (o: K x PQ, zeroed); with
 * dw (K x CRS) and d (K x PQ) instead, the filter gradient
 * dw[k, crs] += d[k, pq] * v. */
static void conv_scatter(const MB *x, int64_t i, const DnnShape *s, const double *wd, double *o,
                         const double *d, double *dw)
{
    const int64_t HW = s->H * s->W, PQ = s->P * s->Q, CRS = s->C * s->R * s->S, K = s->K;
    for (int64_t k = x->rp[i]; k < x->rp[i + 1]; k++) {
        int64_t idx = x->ci[k], c = idx / HW, h = idx % HW / s->W, w = idx % s->W;
        double v = x->v[k];
        for (int64_t r = 0; r < s->R; r++) {
            int64_t hp = h + s->ph - r;
            if (hp < 0) break;
            if (hp % s->sh || hp / s->sh >= s->P) continue;
            for (int64_t t = 0; t < s->S; t++) {
                int64_t wq = w + s->pw - t;
                if (wq < 0) break;
                if (wq % s->sw || wq / s->sw >= s->Q) continue;
                int64_t crs = (c * s->R + r) * s->S + t, pq = hp / s->sh * s->Q + wq / s->sw;
                if (o)
                    for (int64_t f = 0; f < K; f++) o[f * PQ + pq] += wd[f * CRS + crs] * v;
                else
                    for (int64_t f = 0; f < K; f++) dw[f * CRS + crs] += d[f * PQ + pq] * v;
            }
        }
    }
}

/* Scatter conv2d_backward_data of sparse row i of dout into the image dx:
 * each non-zero g at (k, p, q) adds w[k, crs] * g to the cells of its
 * field. */
static void bwd_data_scatter(const MB *dout, int64_t i, const DnnShape *s, const double *wd, double *dx)
{
    const int64_t PQ = s->P * s->Q, CRS = s->C * s->R * s->S;
    for (int64_t k = dout->rp[i]; k < dout->rp[i + 1]; k++) {
        int64_t idx = dout->ci[k], f = idx / PQ, p = idx % PQ / s->Q, q = idx % s->Q;
        double g = dout->v[k];
        const double *wf = wd + f * CRS;
        for (int64_t c = 0; c < s->C; c++)
            for (int64_t r = 0; r < s->R; r++) {
                int64_t h = p * s->sh - s->ph + r;
                if (h < 0 || h >= s->H) continue;
                for (int64_t t = 0; t < s->S; t++) {
                    int64_t w = q * s->sw - s->pw + t;
                    if (w >= 0 && w < s->W) dx[(c * s->H + h) * s->W + w] += wf[(c * s->R + r) * s->S + t] * g;
                }
            }
    }
}

/* Final step of the kernels that fill a dense output: count, choose the
 * format (m released on error). */
static MB *finish_dense(MB *m, BrErr *e)
{
    mb_recount_nnz(m);
    return mb_finish(m, e);
}

/* conv2d (see dnn.h): out_n (K x PQ) = W (K x CRS) %*% im2col(x_n). */
MB *k_conv2d(const MB *x, const MB *w, const DnnShape *s, BrErr *e)
{
    const int64_t N = s->N, K = s->K, CHW = s->C * s->H * s->W, CRS = s->C * s->R * s->S;
    const int64_t PQ = s->P * s->Q, KPQ = K * PQ;
    if (check_in(x, N, CHW, "conv2d", "input", e) || check_in(w, K, CRS, "conv2d", "filter", e)) return NULL;
    if (N == 0 || x->nnz == 0 || w->nnz == 0) return mb_empty(N, KPQ, e);
    double *wfree;
    const double *wd = dense_of(w, &wfree, e);
    if (!wd) return NULL;
    MB *out = mb_dense(N, KPQ, e);
    if (!out) { free(wfree); return NULL; }
    bool need_col = x->sparse || !is_identity(s);
    int fail = 0;
    double work = (double)N * (double)KPQ * (double)CRS;
    bool par = units_parallel(N, work);
    #pragma omp parallel num_threads(br_threads()) if (par)
    {
        double *col = need_col ? br_malloc((size_t)(CRS * PQ) * sizeof(double)) : NULL;
        if (need_col && !col) {
            #pragma omp atomic write
            fail = 1;
        }
        #pragma omp for schedule(dynamic, 1)
        for (int64_t n = 0; n < N; n++) {
            if ((need_col && !col) || row_empty(x, n)) continue;
            if (use_scatter(x, n, s->C * PQ)) { conv_scatter(x, n, s, wd, out->d + n * KPQ, NULL, NULL); continue; }
            const double *c = lower(x, n, s, col);
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)K, (int)PQ, (int)CRS, 1.0, wd, (int)CRS,
                        c, (int)PQ, 0.0, out->d + n * KPQ, (int)PQ);
        }
        free(col);
    }
    k_blas_threads();
    free(wfree);
    if (fail) return mb_oom(out, e);
    return finish_dense(out, e);
}

/* conv2d_backward_filter (see dnn.h): dW = sum_n dout_n (K x PQ) %*%
 * t(im2col(x_n)); images summed in fixed blocks, blocks added in order. */
MB *k_conv2d_bwd_filter(const MB *x, const MB *dout, const DnnShape *s, BrErr *e)
{
    const char *fn = "conv2d_backward_filter";
    const int64_t N = s->N, K = s->K, CHW = s->C * s->H * s->W, CRS = s->C * s->R * s->S;
    const int64_t PQ = s->P * s->Q, KPQ = K * PQ, KCRS = K * CRS;
    if (check_in(x, N, CHW, fn, "input", e) || check_in(dout, N, KPQ, fn, "dout", e)) return NULL;
    if (N == 0 || x->nnz == 0 || dout->nnz == 0) return mb_empty(K, CRS, e);
    int64_t nb = (N + BWF_BLOCK_MIN - 1) / BWF_BLOCK_MIN;
    if (nb > BWF_BLOCKS) nb = BWF_BLOCKS;
    int64_t bs = (N + nb - 1) / nb;
    nb = (N + bs - 1) / bs;
    double *part = br_calloc((size_t)(nb * KCRS), sizeof(double));
    MB *out = part ? mb_dense(K, CRS, e) : NULL;
    if (!out) { free(part); if (!e->code) br_err(e, BR_ENOMEM, "%s: out of memory", fn); return NULL; }
    bool need_col = x->sparse || !is_identity(s);
    int fail = 0;
    double work = (double)N * (double)KCRS * (double)PQ;
    bool par = units_parallel(nb, work);
    #pragma omp parallel num_threads(br_threads()) if (par)
    {
        double *col = need_col ? br_malloc((size_t)(CRS * PQ) * sizeof(double)) : NULL;
        double *dbuf = dout->sparse ? br_malloc((size_t)KPQ * sizeof(double)) : NULL;
        bool bad = (need_col && !col) || (dout->sparse && !dbuf);
        if (bad) {
            #pragma omp atomic write
            fail = 1;
        }
        #pragma omp for schedule(dynamic, 1)
        for (int64_t b = 0; b < nb; b++) {
            if (bad) continue;
            double *acc = part + b * KCRS;
            int64_t hi = (b + 1) * bs < N ? (b + 1) * bs : N;
            for (int64_t n = b * bs; n < hi; n++) {
                if (row_empty(x, n) || row_empty(dout, n)) continue;
                const double *d = row_of(dout, n, dbuf);
                if (use_scatter(x, n, s->C * PQ)) { conv_scatter(x, n, s, NULL, NULL, d, acc); continue; }
                const double *c = lower(x, n, s, col);
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)K, (int)CRS, (int)PQ, 1.0, d, (int)PQ,
                            c, (int)PQ, 1.0, acc, (int)CRS);
            }
        }
        free(col);
        free(dbuf);
    }
    k_blas_threads();
    if (fail) { free(part); return mb_oom(out, e); }
    for (int64_t b = 0; b < nb; b++) {
        const double *pb = part + b * KCRS;
        for (int64_t i = 0; i < KCRS; i++) out->d[i] += pb[i];
    }
    free(part);
    return finish_dense(out, e);
}

/* conv2d_backward_data (see dnn.h): dx_n = col2im(t(W) %*% dout_n). */
MB *k_conv2d_bwd_data(const MB *w, const MB *dout, const DnnShape *s, BrErr *e)
{
    const char *fn = "conv2d_backward_data";
    const int64_t N = s->N, K = s->K, CHW = s->C * s->H * s->W, CRS = s->C * s->R * s->S;
    const int64_t PQ = s->P * s->Q, KPQ = K * PQ;
    if (check_in(w, K, CRS, fn, "filter", e) || check_in(dout, N, KPQ, fn, "dout", e)) return NULL;
    if (N == 0 || w->nnz == 0 || dout->nnz == 0) return mb_empty(N, CHW, e);
    double *wfree;
    const double *wd = dense_of(w, &wfree, e);
    if (!wd) return NULL;
    MB *out = mb_dense(N, CHW, e);
    if (!out) { free(wfree); return NULL; }
    bool direct = is_identity(s);
    int fail = 0;
    double work = (double)N * (double)KPQ * (double)CRS;
    bool par = units_parallel(N, work);
    #pragma omp parallel num_threads(br_threads()) if (par)
    {
        double *dcol = direct ? NULL : br_malloc((size_t)(CRS * PQ) * sizeof(double));
        double *dbuf = dout->sparse ? br_malloc((size_t)KPQ * sizeof(double)) : NULL;
        bool bad = (!direct && !dcol) || (dout->sparse && !dbuf);
        if (bad) {
            #pragma omp atomic write
            fail = 1;
        }
        #pragma omp for schedule(dynamic, 1)
        for (int64_t n = 0; n < N; n++) {
            if (bad || row_empty(dout, n)) continue;
            if (use_scatter(dout, n, KPQ)) { bwd_data_scatter(dout, n, s, wd, out->d + n * CHW); continue; }
            const double *d = row_of(dout, n, dbuf);
            double *o = direct ? out->d + n * CHW : dcol;
            cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)CRS, (int)PQ, (int)K, 1.0, wd, (int)CRS,
                        d, (int)PQ, 0.0, o, (int)PQ);
            if (!direct) col2im_add(dcol, s, out->d + n * CHW);
        }
        free(dcol);
        free(dbuf);
    }
    k_blas_threads();
    free(wfree);
    if (fail) return mb_oom(out, e);
    return finish_dense(out, e);
}

/* Window of output cell (p, q): rows [*h0, *h1), columns [*w0, *w1). */
static void window(const DnnShape *s, int64_t p, int64_t q, int64_t *h0, int64_t *h1, int64_t *w0, int64_t *w1)
{
    int64_t a = p * s->sh - s->ph, b = q * s->sw - s->pw;
    *h0 = a < 0 ? 0 : a;
    *h1 = a + s->R < s->H ? a + s->R : s->H;
    *w0 = b < 0 ? 0 : b;
    *w1 = b + s->S < s->W ? b + s->S : s->W;
}

/* max_pool / avg_pool (see dnn.h). */
MB *k_pool(const MB *x, const DnnShape *s, bool avg, BrErr *e)
{
    const char *fn = avg ? "avg_pool" : "max_pool";
    const int64_t N = s->N, C = s->C, HW = s->H * s->W, CHW = C * HW, P = s->P, Q = s->Q, PQ = P * Q;
    if (check_in(x, N, CHW, fn, "input", e)) return NULL;
    if (N == 0 || (avg && x->nnz == 0)) return mb_empty(N, C * PQ, e);
    MB *out = mb_dense_uninit(N, C * PQ, e);
    if (!out) return NULL;
    const double mult = 1.0 / (double)(s->R * s->S);
    int fail = 0;
    double work = (double)N * (double)C * (double)PQ * (double)(s->R * s->S);
    #pragma omp parallel num_threads(br_threads()) if (br_par(work))
    {
        double *buf = x->sparse ? br_malloc((size_t)CHW * sizeof(double)) : NULL;
        if (x->sparse && !buf) {
            #pragma omp atomic write
            fail = 1;
        }
        #pragma omp for schedule(dynamic, 1)
        for (int64_t n = 0; n < N; n++) {
            if (x->sparse && !buf) continue;
            const double *xi = row_of(x, n, buf);
            double *o = out->d + n * C * PQ;
            for (int64_t c = 0; c < C; c++)
                for (int64_t p = 0; p < P; p++)
                    for (int64_t q = 0; q < Q; q++) {
                        int64_t h0, h1, w0, w1;
                        window(s, p, q, &h0, &h1, &w0, &w1);
                        double acc = avg ? 0.0 : -DBL_MAX;
                        for (int64_t h = h0; h < h1; h++) {
                            const double *xr = xi + c * HW + h * s->W;
                            for (int64_t w = w0; w < w1; w++) {
                                double v = xr[w];
                                if (avg) acc += v;
                                else if (v > acc || isnan(v)) acc = isnan(acc) ? acc : v;
                            }
                        }
                        o[c * PQ + p * Q + q] = avg ? acc * mult : acc;
                    }
        }
        free(buf);
    }
    if (fail) return mb_oom(out, e);
    return finish_dense(out, e);
}

/* max_pool_backward / avg_pool_backward (see dnn.h). */
MB *k_pool_bwd(const MB *x, const MB *dout, const DnnShape *s, bool avg, BrErr *e)
{
    const char *fn = avg ? "avg_pool_backward" : "max_pool_backward";
    const int64_t N = s->N, C = s->C, HW = s->H * s->W, CHW = C * HW, P = s->P, Q = s->Q, PQ = P * Q;
    if (check_in(x, N, CHW, fn, "input", e) || check_in(dout, N, C * PQ, fn, "dout", e)) return NULL;
    if (N == 0 || dout->nnz == 0) return mb_empty(N, CHW, e);
    MB *out = mb_dense(N, CHW, e);
    if (!out) return NULL;
    const double mult = 1.0 / (double)(s->R * s->S);
    int fail = 0;
    double work = (double)N * (double)C * (double)PQ * (double)(s->R * s->S);
    bool xbuf = !avg && x->sparse;
    #pragma omp parallel num_threads(br_threads()) if (br_par(work))
    {
        double *buf = xbuf ? br_malloc((size_t)CHW * sizeof(double)) : NULL;
        double *dbuf = dout->sparse ? br_malloc((size_t)(C * PQ) * sizeof(double)) : NULL;
        bool bad = (xbuf && !buf) || (dout->sparse && !dbuf);
        if (bad) {
            #pragma omp atomic write
            fail = 1;
        }
        #pragma omp for schedule(dynamic, 1)
        for (int64_t n = 0; n < N; n++) {
            if (bad || row_empty(dout, n)) continue;
            const double *xi = avg ? NULL : row_of(x, n, buf);
            const double *d = row_of(dout, n, dbuf);
            double *o = out->d + n * CHW;
            for (int64_t c = 0; c < C; c++)
                for (int64_t p = 0; p < P; p++)
                    for (int64_t q = 0; q < Q; q++) {
                        double g = d[c * PQ + p * Q + q];
                        if (g == 0) continue;
                        int64_t h0, h1, w0, w1;
                        window(s, p, q, &h0, &h1, &w0, &w1);
                        if (avg) {
                            double gv = g * mult;
                            for (int64_t h = h0; h < h1; h++)
                                for (int64_t w = w0; w < w1; w++) o[c * HW + h * s->W + w] += gv;
                            continue;
                        }
                        int64_t best = -1;
                        double m = -DBL_MAX;
                        for (int64_t h = h0; h < h1; h++)
                            for (int64_t w = w0; w < w1; w++) {
                                int64_t ix = c * HW + h * s->W + w;
                                if (m < xi[ix]) { m = xi[ix]; best = ix; }
                            }
                        if (best >= 0) o[best] += g;
                    }
        }
        free(buf);
        free(dbuf);
    }
    if (fail) return mb_oom(out, e);
    return finish_dense(out, e);
}

/* The C bias values of b (C x 1) for x with a multiple of C columns, in
 * *out (caller frees); 0 or an error. */
static int bias_vals(const MB *x, const MB *b, const char *fn, double **out, BrErr *e)
{
    *out = NULL;
    if (b->cols != 1 || b->rows < 1)
        return br_err(e, BR_EDIM, "%s: dimension mismatch: bias must be a column vector (C x 1), got %lldx%lld", fn,
                      (long long)b->rows, (long long)b->cols);
    if (x->cols % b->rows)
        return br_err(e, BR_EDIM, "%s: dimension mismatch: %lld input columns are not a multiple of %lld channels",
                      fn, (long long)x->cols, (long long)b->rows);
    double *v = br_malloc((size_t)b->rows * sizeof(double));
    if (!v) return br_err(e, BR_ENOMEM, "%s: out of memory", fn);
    for (int64_t c = 0; c < b->rows; c++) v[c] = mb_get(b, c, 0);
    *out = v;
    return 0;
}

/* bias_add (see dnn.h): x + b per channel block. A sparse x with a zero
 * bias stays as it is; otherwise the output is dense, then examined. */
MB *k_bias_add(const MB *x, const MB *b, BrErr *e)
{
    double *bv;
    if (bias_vals(x, b, "bias_add", &bv, e)) return NULL;
    const int64_t N = x->rows, L = x->cols, C = b->rows, PQ = L / C;
    bool zero = true;
    for (int64_t c = 0; c < C && zero; c++) zero = bv[c] == 0 && !signbit(bv[c]);
    if (zero && x->sparse) { free(bv); return mb_copy(x, e); }
    MB *out = mb_dense_uninit(N, L, e);
    if (!out) { free(bv); return NULL; }
    #pragma omp parallel for num_threads(br_threads()) schedule(static) if (br_par((double)N * (double)L))
    for (int64_t i = 0; i < N; i++) {
        double *o = out->d + i * L;
        if (!x->sparse) {
            const double *xr = x->d + i * L;
            for (int64_t j = 0; j < L; j++) o[j] = ops_binary(OP_PLUS, xr[j], bv[j / PQ]);
        } else {
            for (int64_t j = 0; j < L; j++) o[j] = ops_binary(OP_PLUS, 0.0, bv[j / PQ]);
            for (int64_t k = x->rp[i]; k < x->rp[i + 1]; k++)
                o[x->ci[k]] = ops_binary(OP_PLUS, x->v[k], bv[x->ci[k] / PQ]);
        }
    }
    free(bv);
    return finish_dense(out, e);
}

/* bias_multiply (see dnn.h): x * b per channel block; sparse-safe, a
 * sparse x gives a sparse output. */
MB *k_bias_mult(const MB *x, const MB *b, BrErr *e)
{
    double *bv;
    if (bias_vals(x, b, "bias_multiply", &bv, e)) return NULL;
    const int64_t N = x->rows, L = x->cols, C = b->rows, PQ = L / C;
    MB *out;
    if (x->sparse) {
        out = mb_sp_alloc(N, L, x->nnz, e);
        if (!out) { free(bv); return NULL; }
        int64_t nz = 0;
        for (int64_t i = 0; i < N; i++) {
            for (int64_t k = x->rp[i]; k < x->rp[i + 1]; k++) {
                double v = ops_binary(OP_MULT, x->v[k], bv[x->ci[k] / PQ]);
                if (v != 0) { out->ci[nz] = x->ci[k]; out->v[nz++] = v; }
            }
            out->rp[i + 1] = nz;
        }
        mb_sp_done(out, nz);
        free(bv);
        return mb_finish(out, e);
    }
    out = mb_dense_uninit(N, L, e);
    if (!out) { free(bv); return NULL; }
    #pragma omp parallel for num_threads(br_threads()) schedule(static) if (br_par((double)N * (double)L))
    for (int64_t i = 0; i < N; i++) {
        const double *xr = x->d + i * L;
        double *o = out->d + i * L;
        for (int64_t j = 0; j < L; j++) o[j] = ops_binary(OP_MULT, xr[j], bv[j / PQ]);
    }
    free(bv);
    return finish_dense(out, e);
}
