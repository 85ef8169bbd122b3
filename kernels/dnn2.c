/* dnn2.c: batch_norm2d, batch_norm2d_backward, lstm and lstm_backward
 * (semantics and layouts in dnn2.h).
 *
 * Parallelism: rows (images, sequences) are split into fixed blocks whose
 * boundaries depend on N only. Batch-norm statistics are Kahan sums per
 * block and channel, added in block order; an LSTM block runs all its
 * timesteps with single-threaded OpenBLAS dgemm calls of fixed shapes,
 * and the weight gradients of the blocks are added in block order. */
#include "dnn2.h"
#include "leaf.h"

#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "../base/ops.h"
#include "mm.h"

void openblas_set_num_threads(int);

/* Rows per batch-norm statistics block. */
#define BN_BLOCK 64
/* Most row blocks of an LSTM (each keeps partial weight gradients). */
#define LSTM_BLOCKS 32

static void release_all(MB **o, int n)
{
    for (int i = 0; i < n; i++) { mb_release(o[i]); o[i] = NULL; }
}

/* Error unless m is rows x cols. */
static int want(const MB *m, int64_t rows, int64_t cols, const char *fn, const char *what, BrErr *e)
{
    if (m->rows == rows && m->cols == cols) return 0;
    return br_err(e, BR_EDIM, "%s: dimension mismatch: %s is %lldx%lld, expected %lldx%lld", fn, what,
                  (long long)m->rows, (long long)m->cols, (long long)rows, (long long)cols);
}

/* All cells of m, row-major, in a new array (free with free), or NULL
 * with e set. */
static double *cells(const MB *m, BrErr *e)
{
    size_t n = (size_t)(m->rows * m->cols);
    double *d = calloc(n ? n : 1, sizeof(double));
    if (!d) { br_err(e, BR_ENOMEM, "out of memory"); return NULL; }
    if (!m->sparse) { if (n) memcpy(d, m->d, n * sizeof(double)); return d; }
    for (int64_t i = 0; i < m->rows; i++)
        for (int64_t k = m->rp[i]; k < m->rp[i + 1]; k++) d[i * m->cols + m->ci[k]] = m->v[k];
    return d;
}

/* Columns [c0, c0+n) of row i of m into dst. */
static void row_part(const MB *m, int64_t i, int64_t c0, int64_t n, double *dst)
{
    if (!m->sparse) { memcpy(dst, m->d + i * m->cols + c0, (size_t)n * sizeof(double)); return; }
    memset(dst, 0, (size_t)n * sizeof(double));
    for (int64_t k = m->rp[i]; k < m->rp[i + 1]; k++)
        if (m->ci[k] >= c0 && m->ci[k] < c0 + n) dst[m->ci[k] - c0] = m->v[k];
}

/* Kahan accumulator. */
typedef struct { double s, c; } Kahan;

static inline void kadd(Kahan *k, double x)
{
    double y = x - k->c, t = k->s + y;
    k->c = (t - k->s) - y;
    k->s = t;
}

/* A C x 1 block holding v. */
static MB *column(const double *v, int64_t C, BrErr *e)
{
    MB *m = mb_dense_uninit(C, 1, e);
    if (!m) return NULL;
    if (C) memcpy(m->d, v, (size_t)C * sizeof(double));
    mb_recount_nnz(m);
    if (mb_examine(m, e)) { mb_release(m); return NULL; }
    return m;
}

/* ---- batch normalization ---- */

/* Checks the batch-norm shapes: X N x C*HW with C = nrow(gamma) >= 1,
 * and every C x 1 argument; sets *HW. */
static int bn_shapes(const MB *X, const MB *gamma, const MB *const *cols, const char *const *names, int n,
                     const char *fn, int64_t *HW, BrErr *e)
{
    int64_t C = gamma->rows;
    if (C < 1 || gamma->cols != 1)
        return br_err(e, BR_EDIM, "%s: dimension mismatch: the scale must be a C x 1 column with C >= 1, got %lldx%lld",
                      fn, (long long)gamma->rows, (long long)gamma->cols);
    for (int i = 0; i < n; i++)
        if (want(cols[i], C, 1, fn, names[i], e)) return e->code;
    if (X->cols % C != 0)
        return br_err(e, BR_EDIM, "%s: dimension mismatch: input has %lld columns, not a multiple of %lld channels", fn,
                      (long long)X->cols, (long long)C);
    *HW = X->cols / C;
    return 0;
}

/* Sums over one channel segment of n cells: (x - m), and when asked
 * (x - m)^2, dy, dy (x - m); four interleaved partial sums per quantity
 * (a fixed order, so the result is reproducible). */
static void seg_sums(const double *x, const double *g, int64_t n, double m, bool sq, double out[4])
{
    double a[4] = {0, 0, 0, 0}, q[4] = {0, 0, 0, 0}, s[4] = {0, 0, 0, 0}, t[4] = {0, 0, 0, 0};
    int64_t j = 0;
    for (; j + 4 <= n; j += 4)
        for (int k = 0; k < 4; k++) {
            double d = x[j + k] - m;
            a[k] += d;
            if (sq) q[k] += d * d;
            if (g) { s[k] += g[j + k]; t[k] += g[j + k] * d; }
        }
    for (; j < n; j++) {
        double d = x[j] - m;
        a[0] += d;
        if (sq) q[0] += d * d;
        if (g) { s[0] += g[j]; t[0] += g[j] * d; }
    }
    out[0] = (a[0] + a[1]) + (a[2] + a[3]);
    out[1] = (q[0] + q[1]) + (q[2] + q[3]);
    out[2] = (s[0] + s[1]) + (s[2] + s[3]);
    out[3] = (t[0] + t[1]) + (t[2] + t[3]);
}

/* Per-channel sums over all rows of X of (x - shift[c]) (into s1), with
 * s2 given also of (x - shift[c])^2; with dy given, also of dy and
 * dy*(x - shift[c]) (into s3, s4). Segment sums (one row, one channel)
 * are Kahan-added per fixed row block; blocks are combined in order.
 * Returns 0 or an error code. */
static int channel_sums(const MB *X, const MB *dy, int64_t C, int64_t HW, const double *shift, double *s1, double *s2,
                        double *s3, double *s4, BrErr *e)
{
    int64_t N = X->rows, nb = (N + BN_BLOCK - 1) / BN_BLOCK, L = C * HW;
    const int nq = 4;
    Kahan *part = calloc((size_t)(nb * C * nq) + 1, sizeof(Kahan));
    double *buf = malloc((size_t)(2 * L * br_threads()) * sizeof(double) + 1);
    if (!part || !buf) { free(part); free(buf); return br_err(e, BR_ENOMEM, "out of memory"); }
    double work = (double)N * (double)L;
#pragma omp parallel for num_threads(br_threads()) schedule(dynamic, 1) if (nb > 1 && br_par(work))
    for (int64_t b = 0; b < nb; b++) {
        int tid = omp_get_thread_num();
        double *xb = buf + (size_t)(2 * L * tid), *gb = xb + L;
        Kahan *p = part + b * C * nq;
        for (int64_t i = b * BN_BLOCK; i < N && i < (b + 1) * BN_BLOCK; i++) {
            const double *xr = xb, *gr = NULL;
            if (X->sparse) row_part(X, i, 0, L, xb);
            else xr = X->d + i * L;
            if (dy && dy->sparse) { row_part(dy, i, 0, L, gb); gr = gb; }
            else if (dy) gr = dy->d + i * L;
            for (int64_t c = 0; c < C; c++) {
                double o[4];
                seg_sums(xr + c * HW, gr ? gr + c * HW : NULL, HW, shift[c], s2 != NULL, o);
                for (int q = 0; q < nq; q++) kadd(&p[c * nq + q], o[q]);
            }
        }
    }
    for (int64_t c = 0; c < C; c++) {
        Kahan a[4] = {{0, 0}, {0, 0}, {0, 0}, {0, 0}};
        for (int64_t b = 0; b < nb; b++)
            for (int q = 0; q < nq; q++) kadd(&a[q], part[(b * C + c) * nq + q].s);
        s1[c] = a[0].s;
        if (s2) s2[c] = a[1].s;
        if (dy) { s3[c] = a[2].s; s4[c] = a[3].s; }
    }
    free(part);
    free(buf);
    return 0;
}

/* Dense N x C*HW output with row i = (x_i - mean[c]) * scale[c] + add[c]
 * per channel, in parallel over rows; sparse rows expand per thread. */
static MB *bn_apply(const MB *X, int64_t C, int64_t HW, const double *mean, const double *scale, const double *add,
                    BrErr *e)
{
    int64_t N = X->rows, L = C * HW;
    MB *o = mb_dense_uninit(N, L, e);
    if (!o) return NULL;
    double work = (double)N * (double)L;
#pragma omp parallel for num_threads(br_threads()) schedule(static) if (br_par(work))
    for (int64_t i = 0; i < N; i++) {
        double *r = o->d + i * L;
        row_part(X, i, 0, L, r);
        for (int64_t c = 0; c < C; c++)
            for (int64_t j = c * HW; j < (c + 1) * HW; j++) r[j] = (r[j] - mean[c]) * scale[c] + add[c];
    }
    mb_recount_nnz(o);
    if (mb_examine(o, e)) { mb_release(o); return NULL; }
    return o;
}

int k_batch_norm2d(const MB *X, const MB *gamma, const MB *beta, const MB *ema_mean, const MB *ema_var,
                   bool train, double eps, double mu, MB *out[5], BrErr *e)
{
    static const char *fn = "batch_norm2d";
    static const char *names[] = {"shift", "ema_mean", "ema_var"};
    const MB *cols[] = {beta, ema_mean, ema_var};
    for (int i = 0; i < 5; i++) out[i] = NULL;
    int64_t HW;
    if (bn_shapes(X, gamma, cols, names, 3, fn, &HW, e)) return e->code;
    int64_t C = gamma->rows;
    double *g = cells(gamma, e), *bt = g ? cells(beta, e) : NULL, *em = bt ? cells(ema_mean, e) : NULL,
           *ev = em ? cells(ema_var, e) : NULL;
    double *ws = ev ? calloc((size_t)(6 * C), sizeof(double)) : NULL;
    if (ev && !ws) br_err(e, BR_ENOMEM, "out of memory");
    if (!ws) { free(g); free(bt); free(em); free(ev); return e->code; }
    double *mean = ws, *var = ws + C, *inv = ws + 2 * C, *scale = ws + 3 * C, *emu = ws + 4 * C, *evu = ws + 5 * C;
    int rc = 0;
    if (train) {
        /* two passes: the mean, then the mean squared deviation */
        double cnt = (double)X->rows * (double)HW;
        rc = channel_sums(X, NULL, C, HW, inv /* zeros */, mean, NULL, NULL, NULL, e);
        for (int64_t c = 0; !rc && c < C; c++) mean[c] /= cnt;
        if (!rc) rc = channel_sums(X, NULL, C, HW, mean, inv, var, NULL, NULL, e);
        for (int64_t c = 0; !rc && c < C; c++) {
            /* var = E[(x-m)^2] - (E[x-m])^2 corrects the mean's rounding */
            double d = inv[c] / cnt;
            var[c] = var[c] / cnt - d * d;
            if (var[c] < 0) var[c] = 0;   /* rounding of a constant channel (NaN stays) */
            emu[c] = mu * em[c] + (1 - mu) * mean[c];
            evu[c] = mu * ev[c] + (1 - mu) * var[c];
        }
    } else {
        for (int64_t c = 0; c < C; c++) { mean[c] = em[c]; var[c] = ev[c]; emu[c] = em[c]; evu[c] = ev[c]; }
    }
    for (int64_t c = 0; !rc && c < C; c++) {
        inv[c] = 1.0 / sqrt(var[c] + eps);
        scale[c] = inv[c] * g[c];
    }
    if (!rc && (!(out[0] = bn_apply(X, C, HW, mean, scale, bt, e)) || !(out[1] = column(emu, C, e)) ||
                !(out[2] = column(evu, C, e)) || !(out[3] = column(mean, C, e)) || !(out[4] = column(inv, C, e))))
        rc = e->code ? e->code : BR_EFAIL;
    if (rc) release_all(out, 5);
    free(g); free(bt); free(em); free(ev); free(ws);
    return rc;
}

int k_batch_norm2d_bwd(const MB *X, const MB *dout, const MB *gamma, double eps, const MB *cache_mean,
                       const MB *cache_inv_var, MB *out[3], BrErr *e)
{
    static const char *fn = "batch_norm2d_backward";
    static const char *names[] = {"cache_mean", "cache_inv_var"};
    const MB *cols[] = {cache_mean, cache_inv_var};
    for (int i = 0; i < 3; i++) out[i] = NULL;
    (void)eps;
    int64_t HW;
    if (bn_shapes(X, gamma, cols, names, 2, fn, &HW, e) || want(dout, X->rows, X->cols, fn, "dout", e))
        return e->code;
    int64_t C = gamma->rows, N = X->rows, L = C * HW;
    double *g = cells(gamma, e), *mean = g ? cells(cache_mean, e) : NULL, *inv = mean ? cells(cache_inv_var, e) : NULL;
    double *ws = inv ? calloc((size_t)(8 * C), sizeof(double)) : NULL;
    if (inv && !ws) br_err(e, BR_ENOMEM, "out of memory");
    if (!ws) { free(g); free(mean); free(inv); return e->code; }
    double *sc = ws, *sdy = ws + 2 * C, *sdyc = ws + 3 * C;
    double *a = ws + 4 * C, *bb = ws + 5 * C, *k0 = ws + 6 * C, *dgam = ws + 7 * C;
    int rc = channel_sums(X, dout, C, HW, mean, sc, NULL, sdy, sdyc, e);
    double cnt = (double)N * (double)HW;
    /* dX = dy*gamma*inv + dmean/cnt + 2/cnt*(x-mean)*dvar with
     * dvar = -1/2 inv^3 gamma sum(dy (x-mean)) and
     * dmean = -inv gamma sum(dy) - 2/cnt dvar sum(x-mean):
     * dX = a*dy + bb*(x-mean) + k0 per channel */
    for (int64_t c = 0; !rc && c < C; c++) {
        double i3 = inv[c] * inv[c] * inv[c];
        double dvar = -0.5 * i3 * g[c] * sdyc[c];
        double dmean = -inv[c] * g[c] * sdy[c] - 2.0 / cnt * dvar * sc[c];
        a[c] = g[c] * inv[c];
        bb[c] = 2.0 / cnt * dvar;
        k0[c] = dmean / cnt;
        dgam[c] = sdyc[c] * inv[c];
    }
    MB *dx = rc ? NULL : mb_dense_uninit(N, L, e);
    double *xb = dx ? malloc((size_t)(L * br_threads()) * sizeof(double) + 1) : NULL;
    if (dx && !xb) br_err(e, BR_ENOMEM, "out of memory");
    if (xb) {
        double work = (double)N * (double)L;
#pragma omp parallel for num_threads(br_threads()) schedule(static) if (br_par(work))
        for (int64_t i = 0; i < N; i++) {
            int tid = omp_get_thread_num();
            const double *xr = X->sparse ? xb + (size_t)(L * tid) : X->d + i * L;
            double *r = dx->d + i * L;
            if (X->sparse) row_part(X, i, 0, L, xb + (size_t)(L * tid));
            row_part(dout, i, 0, L, r);
            for (int64_t c = 0; c < C; c++)
                for (int64_t j = c * HW; j < (c + 1) * HW; j++)
                    r[j] = a[c] * r[j] + bb[c] * (xr[j] - mean[c]) + k0[c];
        }
        mb_recount_nnz(dx);
    }
    if (!xb || mb_examine(dx, e) || !(out[1] = column(dgam, C, e)) || !(out[2] = column(sdy, C, e))) {
        rc = e->code ? e->code : BR_EFAIL;
        mb_release(dx);
        release_all(out, 3);
    } else {
        out[0] = dx;
    }
    free(xb); free(g); free(mean); free(inv); free(ws);
    return rc;
}

/* ---- LSTM ---- */

typedef struct {
    int64_t N, D, M, T;
    const MB *X, *out0, *c0;
    const double *W, *b;   /* dense (D+M) x 4M and 4M */
    bool retseq;
} Lstm;

/* Shapes of lstm / lstm_backward; sets L. Initial states must have at
 * least (backward: exactly) N rows and M columns, or be empty. */
static int lstm_shapes(Lstm *L, const MB *X, const MB *W, const MB *b, const MB *out0, const MB *c0, bool bwd,
                       const char *fn, BrErr *e)
{
    memset(L, 0, sizeof *L);
    if (W->cols < 4 || W->cols % 4 != 0)
        return br_err(e, BR_EDIM, "%s: dimension mismatch: W has %lld columns, expected 4*M with M >= 1", fn,
                      (long long)W->cols);
    int64_t M = W->cols / 4, D = W->rows - M;
    if (D < 1)
        return br_err(e, BR_EDIM, "%s: dimension mismatch: W has %lld rows, expected D+M with D >= 1 and M = %lld", fn,
                      (long long)W->rows, (long long)M);
    if (X->cols < D || X->cols % D != 0)
        return br_err(e, BR_EDIM, "%s: dimension mismatch: X has %lld columns, expected T*D with D = %lld", fn,
                      (long long)X->cols, (long long)D);
    if (want(b, 1, 4 * M, fn, "bias", e)) return e->code;
    const MB *st[2] = {out0, c0};
    const char *nm[2] = {"out0", "c0"};
    for (int k = 0; k < 2; k++) {
        const MB *s = st[k];
        if (s->rows == 0 || s->cols == 0) continue;
        if (s->cols != M || s->rows < X->rows || (bwd && s->rows != X->rows))
            return br_err(e, BR_EDIM, "%s: dimension mismatch: %s is %lldx%lld, expected %lldx%lld", fn, nm[k],
                          (long long)s->rows, (long long)s->cols, (long long)X->rows, (long long)M);
    }
    L->N = X->rows; L->D = D; L->M = M; L->T = X->cols / D;
    L->X = X; L->out0 = out0; L->c0 = c0;
    return 0;
}

/* Row i of an initial state (zeros when the state is empty). */
static void state_row(const MB *s, int64_t i, int64_t M, double *dst)
{
    if (s->rows == 0 || s->cols == 0) memset(dst, 0, (size_t)M * sizeof(double));
    else row_part(s, i, 0, M, dst);
}

/* Row blocks of n rows: count and size (depend on n only). */
static int64_t lstm_blocks(int64_t n, int64_t *bs)
{
    int64_t nb = n < LSTM_BLOCKS ? n : LSTM_BLOCKS;
    if (nb < 1) { *bs = 1; return 0; }
    *bs = (n + nb - 1) / nb;
    return (n + *bs - 1) / *bs;
}

/* Forward pass of rows [r0, r0+nb): hs/cs (T x nb x M, out_t and c_t)
 * and gs (T x nb x 4M, activated gates); in is scratch of nb x (D+M). */
static void lstm_block_fwd(const Lstm *L, int64_t r0, int64_t nb, double *in, double *hs, double *cs, double *gs)
{
    const int64_t D = L->D, M = L->M, DM = D + M, M4 = 4 * M;
    for (int64_t t = 0; t < L->T; t++) {
        double *g = gs + t * nb * M4, *h = hs + t * nb * M, *c = cs + t * nb * M;
        for (int64_t i = 0; i < nb; i++) {
            row_part(L->X, r0 + i, t * D, D, in + i * DM);
            if (t == 0) state_row(L->out0, r0 + i, M, in + i * DM + D);
            else memcpy(in + i * DM + D, hs + ((t - 1) * nb + i) * M, (size_t)M * sizeof(double));
            memcpy(g + i * M4, L->b, (size_t)M4 * sizeof(double));
        }
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nb, (int)M4, (int)DM, 1.0, in, (int)DM, L->W,
                    (int)M4, 1.0, g, (int)M4);
        for (int64_t i = 0; i < nb; i++) {
            double *gi = g + i * M4, cprev[1];
            k_leaves(k_isa())->ew->unary(OP_SIGMOID, gi, gi, 3 * M);   /* in place */
            for (int64_t j = 3 * M; j < M4; j++) gi[j] = tanh(gi[j]);
            for (int64_t j = 0; j < M; j++) {
                if (t == 0) {
                    if (L->c0->rows == 0 || L->c0->cols == 0) cprev[0] = 0;
                    else cprev[0] = L->c0->sparse ? mb_get(L->c0, r0 + i, j) : L->c0->d[(r0 + i) * M + j];
                } else {
                    cprev[0] = cs[((t - 1) * nb + i) * M + j];
                }
                double cv = gi[M + j] * cprev[0] + gi[j] * gi[3 * M + j];
                c[i * M + j] = cv;
                h[i * M + j] = gi[2 * M + j] * tanh(cv);
            }
        }
    }
}

/* Dense W and b of an LSTM (into *Wd, *bd; free both). */
static int lstm_params(Lstm *L, const MB *W, const MB *b, double **Wd, double **bd, BrErr *e)
{
    *Wd = cells(W, e);
    *bd = *Wd ? cells(b, e) : NULL;
    if (!*bd) { free(*Wd); *Wd = NULL; return e->code; }
    L->W = *Wd; L->b = *bd;
    return 0;
}

int k_lstm(const MB *X, const MB *W, const MB *b, const MB *out0, const MB *c0, bool retseq, MB *out[5],
           BrErr *e)
{
    static const char *fn = "lstm";
    for (int i = 0; i < 5; i++) out[i] = NULL;
    Lstm L;
    double *Wd, *bd;
    if (lstm_shapes(&L, X, W, b, out0, c0, false, fn, e) || lstm_params(&L, W, b, &Wd, &bd, e)) return e->code;
    L.retseq = retseq;
    const int64_t N = L.N, M = L.M, T = L.T, D = L.D, M4 = 4 * M;
    out[0] = mb_dense(N, retseq ? T * M : M, e);
    out[1] = out[0] ? mb_dense(N, M, e) : NULL;
    out[2] = out[1] ? mb_dense(T, N * M, e) : NULL;
    out[3] = out[2] ? mb_dense(T, N * M, e) : NULL;
    out[4] = out[3] ? mb_dense(T, N * M4, e) : NULL;
    int rc = out[4] ? 0 : (e->code ? e->code : BR_ENOMEM);
    int64_t bs, nblk = rc ? 0 : lstm_blocks(N, &bs);
    bool fail = false;
    double work = (double)N * (double)T * (double)(D + M) * (double)M4;
    k_blas_ready(work);
    openblas_set_num_threads(1);
#pragma omp parallel for num_threads(br_threads()) schedule(dynamic, 1) if (nblk > 1 && br_par(work))
    for (int64_t k = 0; k < nblk; k++) {
        int64_t r0 = k * bs, nb = r0 + bs <= N ? bs : N - r0;
        double *in = malloc((size_t)(nb * (D + M) + T * nb * 6 * M) * sizeof(double));
        if (!in) { fail = true; continue; }
        double *hs = in + nb * (D + M), *cs = hs + T * nb * M, *gs = cs + T * nb * M;
        lstm_block_fwd(&L, r0, nb, in, hs, cs, gs);
        for (int64_t t = 0; t < T; t++)
            for (int64_t i = 0; i < nb; i++) {
                const double *h = hs + (t * nb + i) * M, *c = cs + (t * nb + i) * M;
                memcpy(out[2]->d + t * N * M + (r0 + i) * M, h, (size_t)M * sizeof(double));
                memcpy(out[3]->d + t * N * M + (r0 + i) * M, c, (size_t)M * sizeof(double));
                memcpy(out[4]->d + t * N * M4 + (r0 + i) * M4, gs + (t * nb + i) * M4, (size_t)M4 * sizeof(double));
                if (retseq) memcpy(out[0]->d + (r0 + i) * T * M + t * M, h, (size_t)M * sizeof(double));
                else if (t == T - 1) memcpy(out[0]->d + (r0 + i) * M, h, (size_t)M * sizeof(double));
                if (t == T - 1) memcpy(out[1]->d + (r0 + i) * M, c, (size_t)M * sizeof(double));
            }
        free(in);
    }
    k_blas_threads();
    if (!rc && fail) rc = br_err(e, BR_ENOMEM, "out of memory");
    for (int i = 0; !rc && i < 5; i++) {
        mb_recount_nnz(out[i]);
        if (mb_examine(out[i], e)) rc = e->code;
    }
    if (rc) release_all(out, 5);
    free(Wd); free(bd);
    return rc;
}

/* Backward pass of rows [r0, r0+nb) after lstm_block_fwd: accumulates
 * dW (D+M x 4M) and db (4M) of the block, writes the block's rows of dX,
 * dout0, dc0. sc is scratch of nb * (2(D+M) + 4M + 3M). */
static void lstm_block_bwd(const Lstm *L, const MB *dout, const MB *dc, int64_t r0, int64_t nb, const double *hs,
                           const double *cs, const double *gs, double *sc, double *dW, double *db, MB *dX, MB *dout0,
                           MB *dc0)
{
    const int64_t D = L->D, M = L->M, DM = D + M, M4 = 4 * M, T = L->T;
    double *in = sc, *din = in + nb * DM, *dr = din + nb * DM, *dh = dr + nb * M4, *dct = dh + nb * M,
           *tmp = dct + nb * M;
    memset(dh, 0, (size_t)(nb * M) * sizeof(double));
    for (int64_t i = 0; i < nb; i++) {
        if (dc->rows == 0 || dc->cols == 0) memset(dct + i * M, 0, (size_t)M * sizeof(double));
        else row_part(dc, r0 + i, 0, M, dct + i * M);
    }
    for (int64_t t = T - 1; t >= 0; t--) {
        for (int64_t i = 0; i < nb; i++) {
            /* dout_t plus the gradient from timestep t+1 */
            double *dht = tmp + i * M;
            if (L->retseq) row_part(dout, r0 + i, t * M, M, dht);
            else if (t == T - 1) row_part(dout, r0 + i, 0, M, dht);
            else memset(dht, 0, (size_t)M * sizeof(double));
            const double *g = gs + (t * nb + i) * M4, *c = cs + (t * nb + i) * M;
            double *cp = in + i * DM + D;   /* c_prev, then out_prev */
            if (t > 0) memcpy(cp, cs + ((t - 1) * nb + i) * M, (size_t)M * sizeof(double));
            else state_row(L->c0, r0 + i, M, cp);
            double *dri = dr + i * M4, *dci = dct + i * M;
            for (int64_t j = 0; j < M; j++) {
                double dhj = dht[j] + dh[i * M + j], tc = tanh(c[j]);
                double gi = g[j], gf = g[M + j], go = g[2 * M + j], gg = g[3 * M + j];
                double dcj = dci[j] + go * (1 - tc * tc) * dhj;
                dri[j] = gi * (1 - gi) * gg * dcj;
                dri[M + j] = gf * (1 - gf) * cp[j] * dcj;
                dri[2 * M + j] = go * (1 - go) * tc * dhj;
                dri[3 * M + j] = (1 - gg * gg) * gi * dcj;
                dci[j] = gf * dcj;   /* dc_prev */
            }
            row_part(L->X, r0 + i, t * D, D, in + i * DM);
            if (t > 0) memcpy(cp, hs + ((t - 1) * nb + i) * M, (size_t)M * sizeof(double));
            else state_row(L->out0, r0 + i, M, cp);
        }
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)DM, (int)M4, (int)nb, 1.0, in, (int)DM, dr, (int)M4,
                    1.0, dW, (int)M4);
        for (int64_t i = 0; i < nb; i++)
            for (int64_t j = 0; j < M4; j++) db[j] += dr[i * M4 + j];
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nb, (int)DM, (int)M4, 1.0, dr, (int)M4, L->W,
                    (int)M4, 0.0, din, (int)DM);
        for (int64_t i = 0; i < nb; i++) {
            memcpy(dX->d + (r0 + i) * L->T * D + t * D, din + i * DM, (size_t)D * sizeof(double));
            memcpy(dh + i * M, din + i * DM + D, (size_t)M * sizeof(double));
        }
    }
    memcpy(dout0->d + r0 * M, dh, (size_t)(nb * M) * sizeof(double));
    memcpy(dc0->d + r0 * M, dct, (size_t)(nb * M) * sizeof(double));
}

int k_lstm_bwd(const MB *X, const MB *W, const MB *b, const MB *out0, const MB *c0, bool retseq, const MB *dout,
               const MB *dc, MB *out[5], BrErr *e)
{
    static const char *fn = "lstm_backward";
    for (int i = 0; i < 5; i++) out[i] = NULL;
    Lstm L;
    double *Wd, *bd;
    if (lstm_shapes(&L, X, W, b, out0, c0, true, fn, e)) return e->code;
    const int64_t N = L.N, M = L.M, T = L.T, D = L.D, DM = D + M, M4 = 4 * M;
    if (want(dout, N, retseq ? T * M : M, fn, "dout", e) ||
        (dc->rows != 0 && dc->cols != 0 && want(dc, N, M, fn, "dc", e)) || lstm_params(&L, W, b, &Wd, &bd, e))
        return e->code;
    L.retseq = retseq;
    int64_t bs, nblk = lstm_blocks(N, &bs);
    out[0] = mb_dense(N, T * D, e);
    out[3] = out[0] ? mb_dense(N, M, e) : NULL;
    out[4] = out[3] ? mb_dense(N, M, e) : NULL;
    double *part = out[4] ? calloc((size_t)((nblk + 1) * (DM * M4 + M4)), sizeof(double)) : NULL;
    int rc = 0;
    if (!part) rc = e->code ? e->code : br_err(e, BR_ENOMEM, "out of memory");
    bool fail = false;
    double work = (double)N * (double)T * (double)DM * (double)M4;
    k_blas_ready(work);
    openblas_set_num_threads(1);
#pragma omp parallel for num_threads(br_threads()) schedule(dynamic, 1) if (!rc && nblk > 1 && br_par(work))
    for (int64_t k = 0; k < (rc ? 0 : nblk); k++) {
        int64_t r0 = k * bs, nb = r0 + bs <= N ? bs : N - r0;
        size_t n = (size_t)(nb * DM + T * nb * 6 * M + nb * (2 * DM + 4 * M + 3 * M));
        double *buf = malloc(n * sizeof(double));
        if (!buf) { fail = true; continue; }
        double *hs = buf + nb * DM, *cs = hs + T * nb * M, *gs = cs + T * nb * M, *sc = gs + T * nb * M4;
        lstm_block_fwd(&L, r0, nb, buf, hs, cs, gs);
        double *dW = part + k * (DM * M4 + M4);
        lstm_block_bwd(&L, dout, dc, r0, nb, hs, cs, gs, sc, dW, dW + DM * M4, out[0], out[3], out[4]);
        free(buf);
    }
    k_blas_threads();
    if (!rc && fail) rc = br_err(e, BR_ENOMEM, "out of memory");
    if (!rc) {
        out[1] = mb_dense(DM, M4, e);
        out[2] = out[1] ? mb_dense(1, M4, e) : NULL;
        if (!out[2]) rc = e->code ? e->code : BR_ENOMEM;
    }
    if (!rc) {
        /* block partials added in block order */
        double *tot = part + nblk * (DM * M4 + M4);
        for (int64_t j = 0; j < DM * M4 + M4; j++) {
            Kahan a = {0, 0};
            for (int64_t k = 0; k < nblk; k++) kadd(&a, part[k * (DM * M4 + M4) + j]);
            tot[j] = a.s;
        }
        memcpy(out[1]->d, tot, (size_t)(DM * M4) * sizeof(double));
        memcpy(out[2]->d, tot + DM * M4, (size_t)M4 * sizeof(double));
    }
    for (int i = 0; !rc && i < 5; i++) {
        mb_recount_nnz(out[i]);
        if (mb_examine(out[i], e)) rc = e->code;
    }
    if (rc) release_all(out, 5);
    free(part); free(Wd); free(bd);
    return rc;
}
