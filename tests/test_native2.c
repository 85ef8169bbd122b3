/* test_native2.c: fft/ifft (2-D and linearized), stft and rowClassMeet
 * (kernels/fft.c) against direct references: the O(n^2) DFT sum, framing
 * by hand, class numbering by linear search. Sweeps shapes, sparsity,
 * dense/sparse inputs, a given or absent imaginary part and 1 or 2
 * threads; checks the error cases (non-power-of-two, empty, mismatches). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/fft.h"
#include "tests/t.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static uint64_t rng = 88172645463325252ULL;
static double urand(void)
{
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

/* A rows x cols block with about sp of its cells non-zero (values in
 * [-1, 1), or small integer labels when labels > 0), in the format fmt
 * (0 dense, 1 sparse). */
static MB *gen(int64_t rows, int64_t cols, double sp, int fmt, int labels)
{
    BrErr e = {0};
    MB *m = mb_dense(rows, cols, &e);
    for (int64_t i = 0; i < rows * cols; i++)
        if (urand() < sp) m->d[i] = labels > 0 ? (double)(1 + (int)(urand() * labels)) : 2 * urand() - 1;
    mb_recount_nnz(m);
    if (fmt == 1) mb_make_sparse(m, &e);
    return m;
}

/* Direct DFT reference of a rows x cols complex matrix: 2-D (all) or per
 * row; inverse scales by 1/n per transformed dimension. Outputs are new
 * dense arrays (caller frees). */
static void dft_ref(const MB *re, const MB *im, bool inv, bool rows_only, double **ore, double **oim)
{
    int64_t R = re->rows, C = re->cols, n = R * C;
    double *xr = calloc((size_t)n, sizeof(double)), *xi = calloc((size_t)n, sizeof(double));
    double *tr = calloc((size_t)n, sizeof(double)), *ti = calloc((size_t)n, sizeof(double));
    for (int64_t i = 0; i < R; i++)
        for (int64_t j = 0; j < C; j++) {
            xr[i * C + j] = mb_get(re, i, j);
            xi[i * C + j] = im ? mb_get(im, i, j) : 0;
        }
    double sg = inv ? 1 : -1;
    /* rows: direct sum per row */
    for (int64_t i = 0; i < R; i++)
        for (int64_t k = 0; k < C; k++) {
            double sr = 0, si = 0;
            for (int64_t j = 0; j < C; j++) {
                double a = sg * 2 * M_PI * (double)((j * k) % C) / (double)C;
                sr += xr[i * C + j] * cos(a) - xi[i * C + j] * sin(a);
                si += xr[i * C + j] * sin(a) + xi[i * C + j] * cos(a);
            }
            tr[i * C + k] = inv ? sr / (double)C : sr;
            ti[i * C + k] = inv ? si / (double)C : si;
        }
    if (!rows_only) {   /* then columns: direct sum per column */
        for (int64_t j = 0; j < C; j++)
            for (int64_t k = 0; k < R; k++) {
                double sr = 0, si = 0;
                for (int64_t i = 0; i < R; i++) {
                    double a = sg * 2 * M_PI * (double)((i * k) % R) / (double)R;
                    sr += tr[i * C + j] * cos(a) - ti[i * C + j] * sin(a);
                    si += tr[i * C + j] * sin(a) + ti[i * C + j] * cos(a);
                }
                xr[k * C + j] = inv ? sr / (double)R : sr;
                xi[k * C + j] = inv ? si / (double)R : si;
            }
        free(tr); free(ti);
        *ore = xr; *oim = xi;
    } else {
        free(xr); free(xi);
        *ore = tr; *oim = ti;
    }
}

/* The full 2-D DFT as one double sum (small shapes): checks that the
 * separable reference above is the 2-D transform. */
static void dft2_full(const MB *re, int64_t k, int64_t l, double *sr, double *si)
{
    int64_t R = re->rows, C = re->cols;
    *sr = *si = 0;
    for (int64_t i = 0; i < R; i++)
        for (int64_t j = 0; j < C; j++) {
            double a = -2 * M_PI * ((double)((i * k) % R) / (double)R + (double)((j * l) % C) / (double)C);
            double x = mb_get(re, i, j);
            *sr += x * cos(a);
            *si += x * sin(a);
        }
}

/* Whether block m equals the dense array want within tol * scale. */
static bool near(const MB *m, const double *want, int64_t rows, int64_t cols, double tol)
{
    if (!m || m->rows != rows || m->cols != cols) return false;
    double scale = 1;
    for (int64_t i = 0; i < rows * cols; i++) scale = fmax(scale, fabs(want[i]));
    int64_t nnz = 0;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) {
            double g = mb_get(m, i, j);
            if (g != 0) nnz++;
            if (!(fabs(g - want[i * cols + j]) <= tol * scale)) return false;
        }
    return nnz == m->nnz;
}

static bool has(const BrErr *e, const char *w) { return e->code && strstr(e->msg, w); }

static void test_fft(void)
{
    static const int64_t R2[] = {1, 2, 4, 8, 32};
    static const int64_t C2[] = {1, 2, 4, 16, 64};
    static const double sps[] = {0, 0.001, 0.1, 1};
    for (int th = 1; th <= 2; th++) {
        br_set_threads(th);
        for (int ri = 0; ri < 5; ri++)
            for (int ci = 0; ci < 5; ci++)
                for (int si = 0; si < 4; si++)
                    for (int fmt = 0; fmt < 2; fmt++)
                        for (int withim = 0; withim < 2; withim++)
                            for (int lin = 0; lin < 2; lin++) {
                                int64_t R = lin ? R2[ri] + (ri % 2 ? 1 : 0) : R2[ri], C = C2[ci];
                                MB *re = gen(R, C, sps[si], fmt, 0);
                                MB *im = withim ? gen(R, C, sps[3 - si], 1 - fmt, 0) : NULL;
                                for (int inv = 0; inv < 2; inv++) {
                                    if (!inv && im) continue;   /* fft: real input only (DML) */
                                    BrErr e = {0};
                                    MB *orr = NULL, *oi = NULL;
                                    int rc = k_fft(re, im, inv, lin, &orr, &oi, &e);
                                    double *wr, *wi;
                                    dft_ref(re, im, inv, lin, &wr, &wi);
                                    T_CHECK(!rc && near(orr, wr, R, C, 1e-10) && near(oi, wi, R, C, 1e-10),
                                            "fft inv=%d lin=%d %lldx%lld sp=%g fmt=%d im=%d th=%d: %s", inv, lin,
                                            (long long)R, (long long)C, sps[si], fmt, withim, th, e.msg);
                                    free(wr); free(wi);
                                    mb_release(orr); mb_release(oi);
                                }
                                mb_release(re); mb_release(im);
                            }
    }
    br_set_threads(0);
    /* the separable reference is the 2-D DFT */
    MB *x = gen(4, 8, 1, 0, 0);
    double *wr, *wi, sr, si;
    dft_ref(x, NULL, false, false, &wr, &wi);
    bool ok = true;
    for (int k = 0; k < 4; k++)
        for (int l = 0; l < 8; l++) {
            dft2_full(x, k, l, &sr, &si);
            ok = ok && fabs(sr - wr[k * 8 + l]) < 1e-12 && fabs(si - wi[k * 8 + l]) < 1e-12;
        }
    T_CHECK(ok, "2-D reference equals the double sum");
    free(wr); free(wi);
    mb_release(x);

    /* large: parallel paths, thread-count independence, round trip */
    MB *big = gen(128, 512, 0.5, 0, 0), *r1 = NULL, *i1 = NULL, *r2 = NULL, *i2 = NULL, *b1 = NULL, *b2 = NULL;
    BrErr e = {0};
    br_set_threads(1);
    k_fft(big, NULL, false, false, &r1, &i1, &e);
    br_set_threads(2);
    k_fft(big, NULL, false, false, &r2, &i2, &e);
    T_MB_EQ(r1, r2, 0, "fft 128x512: same real part on 1 and 2 threads");
    T_MB_EQ(i1, i2, 0, "fft 128x512: same imaginary part on 1 and 2 threads");
    k_fft(r2, i2, true, false, &b1, &b2, &e);
    T_MB_EQ(b1, big, 1e-12, "ifft(fft(X)) = X (real)");
    T_CHECK(b2 && b2->nnz >= 0, "ifft(fft(X)) imaginary part exists");
    double mx = 0;
    for (int64_t i = 0; b2 && i < b2->rows; i++)
        for (int64_t j = 0; j < b2->cols; j++) mx = fmax(mx, fabs(mb_get(b2, i, j)));
    T_CHECK(mx < 1e-12, "ifft(fft(X)) imaginary part ~ 0, max %g", mx);
    double *wr2, *wi2;
    dft_ref(big, NULL, false, false, &wr2, &wi2);
    T_CHECK(near(r1, wr2, 128, 512, 1e-10) && near(i1, wi2, 128, 512, 1e-10), "fft 128x512 vs DFT");
    free(wr2); free(wi2);
    mb_release(r1); mb_release(i1); mb_release(r2); mb_release(i2); mb_release(b1); mb_release(b2);
    MB *l1 = NULL, *l2 = NULL, *m1 = NULL, *m2 = NULL;
    br_set_threads(1);
    k_fft(big, NULL, false, true, &l1, &l2, &e);
    br_set_threads(2);
    k_fft(big, NULL, false, true, &m1, &m2, &e);
    T_MB_EQ(l1, m1, 0, "fft_linearized: same on 1 and 2 threads");
    T_MB_EQ(l2, m2, 0, "fft_linearized: same imaginary on 1 and 2 threads");
    mb_release(l1); mb_release(l2); mb_release(m1); mb_release(m2);
    mb_release(big);
    br_set_threads(0);

    /* all-zero input: empty (sparse) outputs */
    MB *z = mb_empty(4, 4, &e), *zr = NULL, *zi = NULL;
    T_CHECK(!k_fft(z, NULL, false, false, &zr, &zi, &e) && zr->nnz == 0 && zr->sparse && zi->nnz == 0,
            "fft of zeros is empty");
    mb_release(z); mb_release(zr); mb_release(zi);

    /* errors */
    static const int64_t bad[][3] = {{3, 4, 0}, {4, 3, 0}, {0, 4, 0}, {4, 0, 0}, {3, 6, 1}, {0, 4, 1}, {2, 0, 1}};
    for (int k = 0; k < 7; k++) {
        BrErr be = {0};
        MB *bx = mb_dense(bad[k][0], bad[k][1], &be), *o1 = NULL, *o2 = NULL;
        int rc = k_fft(bx, NULL, false, bad[k][2], &o1, &o2, &be);
        T_CHECK(rc && has(&be, "dimension") && !o1 && !o2, "fft %lldx%lld lin=%lld rejected: %s",
                (long long)bad[k][0], (long long)bad[k][1], (long long)bad[k][2], be.msg);
        mb_release(bx);
    }
    BrErr me = {0};
    MB *p = mb_dense(4, 4, &me), *q = mb_dense(4, 2, &me), *o1 = NULL, *o2 = NULL;
    T_CHECK(k_fft(p, q, true, false, &o1, &o2, &me) && has(&me, "dimension"), "ifft re/im mismatch: %s", me.msg);
    mb_release(p); mb_release(q);
    /* linearized accepts any row count */
    BrErr le = {0};
    MB *lx = gen(3, 8, 1, 0, 0);
    T_CHECK(!k_fft(lx, NULL, false, true, &o1, &o2, &le) && o1->rows == 3, "fft_linearized 3x8 works");
    mb_release(o1); mb_release(o2); mb_release(lx);
}

/* stft reference: frames by hand, DFT of each. */
static void stft_ref(const MB *re, const MB *im, int64_t win, int64_t ovl, double **ore, double **oim, int64_t *ocols)
{
    int64_t R = re->rows, C = re->cols, step = win - ovl;
    int64_t frames = 0;
    for (int64_t s = 0; s < C - ovl; s += step) frames++;
    *ocols = frames * win;
    *ore = calloc((size_t)(R * *ocols + 1), sizeof(double));
    *oim = calloc((size_t)(R * *ocols + 1), sizeof(double));
    for (int64_t h = 0; h < R; h++)
        for (int64_t f = 0; f < frames; f++)
            for (int64_t k = 0; k < win; k++) {
                double sr = 0, si = 0;
                for (int64_t j = 0; j < win; j++) {
                    int64_t c = f * step + j;
                    double xr = c < C ? mb_get(re, h, c) : 0, xi = c < C && im ? mb_get(im, h, c) : 0;
                    double a = -2 * M_PI * (double)((j * k) % win) / (double)win;
                    sr += xr * cos(a) - xi * sin(a);
                    si += xr * sin(a) + xi * cos(a);
                }
                (*ore)[h * *ocols + f * win + k] = sr;
                (*oim)[h * *ocols + f * win + k] = si;
            }
}

static void test_stft(void)
{
    static const int64_t shapes[][2] = {{1, 1}, {1, 8}, {3, 10}, {2, 17}, {5, 64}, {0, 8}, {4, 0}, {1, 3}};
    static const int64_t wo[][2] = {{1, 0}, {2, 1}, {4, 0}, {4, 2}, {8, 7}, {16, 3}};
    for (int th = 1; th <= 2; th++) {
        br_set_threads(th);
        for (int s = 0; s < 8; s++)
            for (int w = 0; w < 6; w++)
                for (int fmt = 0; fmt < 2; fmt++)
                    for (int withim = 0; withim < 2; withim++) {
                        int64_t R = shapes[s][0], C = shapes[s][1];
                        MB *re = gen(R, C, fmt ? 0.1 : 1, fmt, 0), *im = withim ? gen(R, C, 0.5, 0, 0) : NULL;
                        BrErr e = {0};
                        MB *o1 = NULL, *o2 = NULL;
                        int rc = k_stft(re, im, wo[w][0], wo[w][1], &o1, &o2, &e);
                        double *wr, *wi;
                        int64_t oc;
                        stft_ref(re, im, wo[w][0], wo[w][1], &wr, &wi, &oc);
                        T_CHECK(!rc && near(o1, wr, R, oc, 1e-10) && near(o2, wi, R, oc, 1e-10),
                                "stft %lldx%lld win=%lld ovl=%lld fmt=%d im=%d th=%d: %s", (long long)R, (long long)C,
                                (long long)wo[w][0], (long long)wo[w][1], fmt, withim, th, e.msg);
                        free(wr); free(wi);
                        mb_release(o1); mb_release(o2); mb_release(re); mb_release(im);
                    }
    }
    br_set_threads(0);
    MB *big = gen(64, 2048, 1, 0, 0), *a1 = NULL, *a2 = NULL, *b1 = NULL, *b2 = NULL;
    BrErr e = {0};
    br_set_threads(1);
    k_stft(big, NULL, 64, 16, &a1, &a2, &e);
    br_set_threads(2);
    k_stft(big, NULL, 64, 16, &b1, &b2, &e);
    T_MB_EQ(a1, b1, 0, "stft: same on 1 and 2 threads");
    T_MB_EQ(a2, b2, 0, "stft: same imaginary on 1 and 2 threads");
    mb_release(a1); mb_release(a2); mb_release(b1); mb_release(b2); mb_release(big);
    br_set_threads(0);
    MB *x = gen(2, 8, 1, 0, 0), *o1 = NULL, *o2 = NULL;
    BrErr e1 = {0}, e2 = {0}, e3 = {0};
    T_CHECK(k_stft(x, NULL, 3, 1, &o1, &o2, &e1) && strstr(e1.msg, "power of two"), "stft win 3: %s", e1.msg);
    T_CHECK(k_stft(x, NULL, 4, 4, &o1, &o2, &e2) && strstr(e2.msg, "overlap"), "stft overlap 4: %s", e2.msg);
    MB *y = gen(2, 4, 1, 0, 0);
    T_CHECK(k_stft(x, y, 4, 1, &o1, &o2, &e3) && has(&e3, "dimension"), "stft re/im mismatch: %s", e3.msg);
    mb_release(x); mb_release(y);
}

/* rowClassMeet reference: classes by linear search in first-occurrence
 * order. */
static void rcm_ref(const MB *a, const MB *b, double **c, double **n, int64_t *nr, int64_t *nc)
{
    *nr = a->rows > b->rows ? a->rows : b->rows;
    *nc = a->cols > b->cols ? a->cols : b->cols;
    int64_t mc = a->cols < b->cols ? a->cols : b->cols;
    *c = calloc((size_t)(*nr * *nc + 1), sizeof(double));
    *n = calloc((size_t)(*nr * *nc + 1), sizeof(double));
    double *pa = malloc((size_t)(mc + 1) * sizeof(double)), *pb = malloc((size_t)(mc + 1) * sizeof(double));
    for (int64_t i = 0; i < *nr; i++) {
        int np = 0;
        for (int64_t j = 0; j < mc; j++) {
            int64_t x = (int64_t)mb_get(a, a->rows == 1 ? 0 : i, j), y = (int64_t)mb_get(b, b->rows == 1 ? 0 : i, j);
            if (!x || !y) continue;
            int k = 0;
            while (k < np && !(pa[k] == (double)x && pb[k] == (double)y)) k++;
            if (k == np) { pa[np] = (double)x; pb[np] = (double)y; np++; }
            (*c)[i * *nc + j] = k + 1;
        }
        for (int64_t j = 0; j < mc; j++) {
            double l = (*c)[i * *nc + j];
            if (l == 0) continue;
            int cnt = 0;
            for (int64_t t = 0; t < mc; t++) cnt += (*c)[i * *nc + t] == l;
            (*n)[i * *nc + j] = cnt;
        }
    }
    free(pa); free(pb);
}

static void test_rcm(void)
{
    static const int64_t sh[][4] = {{0, 3, 0, 3}, {3, 0, 3, 0}, {1, 1, 1, 1}, {5, 1, 5, 1}, {1, 6, 1, 6},
                                    {4, 7, 4, 7}, {4, 7, 1, 7}, {1, 5, 6, 5}, {6, 9, 6, 4}, {30, 40, 30, 40},
                                    {300, 64, 300, 64}};
    static const double sps[] = {0, 0.001, 0.1, 1};
    for (int th = 1; th <= 2; th++) {
        br_set_threads(th);
        for (int s = 0; s < 11; s++)
            for (int si = 0; si < 4; si++)
                for (int fa = 0; fa < 2; fa++)
                    for (int fb = 0; fb < 2; fb++) {
                        MB *a = gen(sh[s][0], sh[s][1], sps[si], fa, 4);
                        MB *b = gen(sh[s][2], sh[s][3], sps[3 - si / 2], fb, 3);
                        BrErr e = {0};
                        MB *c = NULL, *n = NULL;
                        int rc = k_rcm(a, b, &c, &n, &e);
                        double *wc, *wn;
                        int64_t nr, nc;
                        rcm_ref(a, b, &wc, &wn, &nr, &nc);
                        T_CHECK(!rc && near(c, wc, nr, nc, 0) && near(n, wn, nr, nc, 0),
                                "rcm %lldx%lld / %lldx%lld sp=%g fa=%d fb=%d th=%d: %s", (long long)sh[s][0],
                                (long long)sh[s][1], (long long)sh[s][2], (long long)sh[s][3], sps[si], fa, fb, th,
                                e.msg);
                        free(wc); free(wn);
                        mb_release(c); mb_release(n); mb_release(a); mb_release(b);
                    }
    }
    br_set_threads(0);
    BrErr e = {0};
    MB *a = gen(3, 4, 1, 0, 3), *b = gen(2, 4, 1, 0, 3), *c = NULL, *n = NULL;
    T_CHECK(k_rcm(a, b, &c, &n, &e) && has(&e, "dimension"), "rcm 3 vs 2 rows: %s", e.msg);
    mb_release(a); mb_release(b);
    /* fractional and negative labels truncate like Java's (int) */
    MB *x = mb_dense(1, 4, &e), *y = mb_fill(1, 4, 1, &e);
    x->d[0] = 1.7; x->d[1] = 1.2; x->d[2] = -2.5; x->d[3] = 0.5;
    mb_recount_nnz(x);
    T_CHECK(!k_rcm(x, y, &c, &n, &e) && mb_get(c, 0, 0) == 1 && mb_get(c, 0, 1) == 1 && mb_get(c, 0, 2) == 2 &&
            mb_get(c, 0, 3) == 0 && mb_get(n, 0, 0) == 2 && mb_get(n, 0, 2) == 1, "rcm truncates labels");
    mb_release(c); mb_release(n); mb_release(x); mb_release(y);
}

int main(void)
{
    test_fft();
    test_stft();
    test_rcm();
    return t_done("test_native2");
}
