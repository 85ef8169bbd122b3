/* fft.c: fft/ifft (2-D and per row), stft and rowClassMeet (see fft.h).
 *
 * The transform is an iterative radix-2 Cooley-Tukey FFT over contiguous
 * buffers: bit-reversal permutation, then log2(n) butterfly passes with
 * twiddles cos/sin(2 pi k / n) computed once per length. Rows transform in
 * place in the output block; columns (2-D case) are gathered eight at a
 * time into a per-thread buffer, transformed and scattered back. Every
 * row/column is computed by one thread with the same operations whatever
 * the thread count, so results do not depend on it. */
#include "fft.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#define COLBLK 8   /* columns gathered per task in the column pass */

static bool pow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

/* The n/2 twiddles cos(2 pi k/n), sin(2 pi k/n) interleaved (caller frees),
 * or NULL when out of memory. n = 1 gets a harmless one-entry table. */
static double *twiddles(int64_t n)
{
    int64_t h = n / 2 > 0 ? n / 2 : 1;
    double *t = br_malloc((size_t)h * 2 * sizeof(double));
    if (!t) return NULL;
    for (int64_t k = 0; k < h; k++) {
        double a = 2.0 * M_PI * (double)k / (double)n;
        t[2 * k] = cos(a);
        t[2 * k + 1] = sin(a);
    }
    return t;
}

/* In-place FFT of the n complex values (re[j], im[j]), n a power of two;
 * the inverse uses the conjugate twiddles and divides by n. */
static void fft1(double *re, double *im, int64_t n, const double *tw, bool inv)
{
    if (n <= 1) return;
    for (int64_t i = 1, j = 0; i < n; i++) {   /* bit reversal */
        int64_t bit = n >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j |= bit;
        if (i < j) {
            double t = re[i]; re[i] = re[j]; re[j] = t;
            t = im[i]; im[i] = im[j]; im[j] = t;
        }
    }
    double sg = inv ? 1.0 : -1.0;
    for (int64_t len = 2; len <= n; len <<= 1) {
        int64_t half = len >> 1, step = n / len;
        for (int64_t i = 0; i < n; i += len) {
            for (int64_t k = 0; k < half; k++) {
                double wr = tw[2 * k * step], wi = sg * tw[2 * k * step + 1];
                int64_t p = i + k, q = p + half;
                double xr = re[q] * wr - im[q] * wi, xi = re[q] * wi + im[q] * wr;
                re[q] = re[p] - xr; im[q] = im[p] - xi;
                re[p] += xr; im[p] += xi;
            }
        }
    }
    if (inv) {
        double s = 1.0 / (double)n;
        for (int64_t i = 0; i < n; i++) { re[i] *= s; im[i] *= s; }
    }
}

/* The cells of m (NULL: zeros) into the dense array d of m's shape. */
static void load(const MB *m, double *d, int64_t rows, int64_t cols)
{
    size_t n = (size_t)(rows * cols);
    if (!m || m->sparse || n == 0) {
        if (n) memset(d, 0, n * sizeof(double));
        if (!m || n == 0) return;
        for (int64_t i = 0; i < rows; i++)
            for (int64_t k = m->rp[i]; k < m->rp[i + 1]; k++) d[i * cols + m->ci[k]] = m->v[k];
        return;
    }
    memcpy(d, m->d, n * sizeof(double));
}

/* Transforms every row of the rows x cols arrays re/im in place. */
static void rows_pass(double *re, double *im, int64_t rows, int64_t cols, const double *tw, bool inv)
{
    int64_t work = rows * cols;
    #pragma omp parallel for schedule(static) num_threads(br_threads()) if (work >= BR_PAR_MIN && rows > 1)
    for (int64_t i = 0; i < rows; i++) fft1(re + i * cols, im + i * cols, cols, tw, inv);
}

/* Transforms every column of the rows x cols arrays re/im in place; 0 or
 * BR_ENOMEM when a thread could not get its gather buffer. */
static int cols_pass(double *re, double *im, int64_t rows, int64_t cols, const double *tw, bool inv)
{
    int64_t nblk = (cols + COLBLK - 1) / COLBLK, work = rows * cols;
    int fail = 0;
    #pragma omp parallel num_threads(br_threads()) if (work >= BR_PAR_MIN && nblk > 1)
    {
        double *buf = br_malloc((size_t)rows * 2 * COLBLK * sizeof(double));
        if (!buf) {
            #pragma omp atomic write
            fail = 1;
        }
        #pragma omp for schedule(static)
        for (int64_t b = 0; b < nblk; b++) {
            if (!buf) continue;
            int64_t c0 = b * COLBLK, nc = cols - c0 < COLBLK ? cols - c0 : COLBLK;
            for (int64_t r = 0; r < rows; r++)
                for (int64_t c = 0; c < nc; c++) {
                    buf[c * rows + r] = re[r * cols + c0 + c];
                    buf[(COLBLK + c) * rows + r] = im[r * cols + c0 + c];
                }
            for (int64_t c = 0; c < nc; c++) fft1(buf + c * rows, buf + (COLBLK + c) * rows, rows, tw, inv);
            for (int64_t r = 0; r < rows; r++)
                for (int64_t c = 0; c < nc; c++) {
                    re[r * cols + c0 + c] = buf[c * rows + r];
                    im[r * cols + c0 + c] = buf[(COLBLK + c) * rows + r];
                }
        }
        free(buf);
    }
    return fail ? BR_ENOMEM : 0;
}

/* Two dense outputs of rows x cols (uninitialised) or an error. */
static int two_dense(int64_t rows, int64_t cols, MB **a, MB **b, BrErr *e)
{
    *a = mb_dense_uninit(rows, cols, e);
    *b = *a ? mb_dense_uninit(rows, cols, e) : NULL;
    if (*b) return 0;
    mb_release(*a);
    *a = NULL;
    return e->code ? e->code : br_err(e, BR_ENOMEM, "out of memory");
}

/* Recounts and formats both outputs; releases both on an error. */
static int finish_two(MB **a, MB **b, BrErr *e)
{
    mb_recount_nnz(*a);
    mb_recount_nnz(*b);
    if (mb_examine(*a, e) || mb_examine(*b, e)) {
        mb_release(*a); mb_release(*b);
        *a = *b = NULL;
        return e->code;
    }
    return 0;
}

/* fft, ifft and their _linearized forms (see fft.h). */
int k_fft(const MB *re, const MB *im, bool inverse, bool rows_only, MB **ore, MB **oim, BrErr *e)
{
    const char *fn = inverse ? (rows_only ? "ifft_linearized" : "ifft") : (rows_only ? "fft_linearized" : "fft");
    *ore = *oim = NULL;
    int64_t rows = re->rows, cols = re->cols;
    if (im && (im->rows != rows || im->cols != cols))
        return br_err(e, BR_EDIM, "%s: dimension mismatch: real part is %lldx%lld, imaginary part %lldx%lld", fn,
                      (long long)rows, (long long)cols, (long long)im->rows, (long long)im->cols);
    if (!pow2(cols) || (!rows_only && !pow2(rows)) || rows < 1)
        return br_err(e, BR_EDIM, "%s: dimensions must be powers of two%s, got %lldx%lld", fn,
                      rows_only ? " (columns; at least one row)" : "", (long long)rows, (long long)cols);
    if (two_dense(rows, cols, ore, oim, e)) return e->code;
    load(re, (*ore)->d, rows, cols);
    load(im, (*oim)->d, rows, cols);
    double *twc = twiddles(cols), *twr = rows_only ? NULL : twiddles(rows);
    int rc = 0;
    if (!twc || (!rows_only && !twr)) rc = BR_ENOMEM;
    if (!rc) rows_pass((*ore)->d, (*oim)->d, rows, cols, twc, inverse);
    if (!rc && !rows_only && rows > 1) rc = cols_pass((*ore)->d, (*oim)->d, rows, cols, twr, inverse);
    free(twc);
    free(twr);
    if (rc) {
        mb_release(*ore); mb_release(*oim);
        *ore = *oim = NULL;
        return br_err(e, BR_ENOMEM, "%s: out of memory", fn);
    }
    return finish_two(ore, oim, e);
}

/* stft (see fft.h): one task per row, frames in order. */
int k_stft(const MB *re, const MB *im, int64_t win, int64_t overlap, MB **ore, MB **oim, BrErr *e)
{
    *ore = *oim = NULL;
    int64_t rows = re->rows, cols = re->cols;
    if (im && (im->rows != rows || im->cols != cols))
        return br_err(e, BR_EDIM, "stft: dimension mismatch: real part is %lldx%lld, imaginary part %lldx%lld",
                      (long long)rows, (long long)cols, (long long)im->rows, (long long)im->cols);
    if (!pow2(win))
        return br_err(e, BR_EARG, "stft: windowSize must be a power of two, got %lld", (long long)win);
    if (overlap < 0 || overlap >= win)
        return br_err(e, BR_EARG, "stft: overlap must be at least 0 and less than windowSize %lld, got %lld",
                      (long long)win, (long long)overlap);
    int64_t step = win - overlap;
    int64_t frames = cols > overlap ? (cols - overlap + step - 1) / step : 0;
    int64_t ocols = frames * win;
    if (two_dense(rows, ocols, ore, oim, e)) return e->code;
    double *xr = br_malloc((size_t)(rows * cols > 0 ? rows * cols : 1) * sizeof(double));
    double *xi = br_malloc((size_t)(rows * cols > 0 ? rows * cols : 1) * sizeof(double));
    double *tw = twiddles(win);
    if (!xr || !xi || !tw) {
        free(xr); free(xi); free(tw);
        mb_release(*ore); mb_release(*oim);
        *ore = *oim = NULL;
        return br_err(e, BR_ENOMEM, "stft: out of memory");
    }
    load(re, xr, rows, cols);
    load(im, xi, rows, cols);
    double *dr = (*ore)->d, *di = (*oim)->d;
    int64_t work = rows * ocols;
    #pragma omp parallel for schedule(static) num_threads(br_threads()) if (work >= BR_PAR_MIN && rows > 1)
    for (int64_t h = 0; h < rows; h++) {
        for (int64_t f = 0; f < frames; f++) {
            double *pr = dr + h * ocols + f * win, *pi = di + h * ocols + f * win;
            for (int64_t j = 0; j < win; j++) {
                int64_t c = f * step + j;
                pr[j] = c < cols ? xr[h * cols + c] : 0.0;
                pi[j] = c < cols ? xi[h * cols + c] : 0.0;
            }
            fft1(pr, pi, win, tw, false);
        }
    }
    free(xr); free(xi); free(tw);
    return finish_two(ore, oim, e);
}

/* A non-zero cell of a row (label pair a, b; column first), then a class:
 * its first column, its number (label) and size (count). */
typedef struct { int64_t a, b; int64_t first, label, count; } Cls;

static int cls_cmp_ab(const void *x, const void *y)
{
    const Cls *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    if (p->b != q->b) return p->b < q->b ? -1 : 1;
    return p->first < q->first ? -1 : p->first > q->first;
}

static int cls_cmp_first(const void *x, const void *y)
{
    const Cls *p = x, *q = y;
    return p->first < q->first ? -1 : p->first > q->first;
}

/* Truncation of a label to an integer as Java's (int) cast does: NaN is 0,
 * beyond the int range saturates. */
static int64_t label_of(double v)
{
    if (isnan(v)) return 0;
    if (v >= 2147483647.0) return 2147483647;
    if (v <= -2147483648.0) return -2147483648LL;
    return (int64_t)v;
}

/* The values of row r of m in columns 0..nc-1 into out (dense). */
static void row_vals(const MB *m, int64_t r, int64_t nc, double *out)
{
    if (!m->sparse) { memcpy(out, m->d + r * m->cols, (size_t)nc * sizeof(double)); return; }
    memset(out, 0, (size_t)nc * sizeof(double));
    for (int64_t k = m->rp[r]; k < m->rp[r + 1] && m->ci[k] < nc; k++) out[m->ci[k]] = m->v[k];
}

/* rowClassMeet (see fft.h): per row, the (A, B) label pairs of the
 * non-zero columns are sorted to find classes, then numbered by their
 * first column. Rows run in parallel; each row is independent. */
int k_rcm(const MB *a, const MB *b, MB **c, MB **n, BrErr *e)
{
    *c = *n = NULL;
    int64_t ra = a->rows, rb = b->rows;
    if (ra != rb && ra != 1 && rb != 1)
        return br_err(e, BR_EDIM, "rowClassMeet: dimension mismatch: %lld and %lld rows (need equal, or one row)",
                      (long long)ra, (long long)rb);
    int64_t nr = ra > rb ? ra : rb, nc = a->cols > b->cols ? a->cols : b->cols;
    int64_t mc = a->cols < b->cols ? a->cols : b->cols;
    *c = mb_dense(nr, nc, e);
    *n = *c ? mb_dense(nr, nc, e) : NULL;
    if (!*n) { mb_release(*c); *c = NULL; return e->code ? e->code : br_err(e, BR_ENOMEM, "out of memory"); }
    double *dc = (*c)->d, *dn = (*n)->d;
    int fail = 0;
    int64_t work = nr * mc * 8;
    #pragma omp parallel num_threads(br_threads()) if (work >= BR_PAR_MIN && nr > 1)
    {
        double *va = br_malloc((size_t)(mc > 0 ? mc : 1) * 2 * sizeof(double));
        Cls *cl = br_malloc((size_t)(mc > 0 ? mc : 1) * sizeof(Cls));
        if (!va || !cl) {
            #pragma omp atomic write
            fail = 1;
        }
        #pragma omp for schedule(static)
        for (int64_t i = 0; i < nr; i++) {
            if (!va || !cl || mc == 0) continue;
            double *vb = va + mc;
            row_vals(a, ra == 1 ? 0 : i, mc, va);
            row_vals(b, rb == 1 ? 0 : i, mc, vb);
            int64_t m = 0;
            for (int64_t j = 0; j < mc; j++) {
                int64_t la = label_of(va[j]), lb = label_of(vb[j]);
                if (la == 0 || lb == 0) continue;
                cl[m].a = la; cl[m].b = lb; cl[m].first = j; cl[m].label = 0; cl[m].count = 0;
                m++;
            }
            if (m == 0) continue;
            /* group equal pairs: sort by (a, b, column); each group's first
             * entry holds the first column and the count */
            qsort(cl, (size_t)m, sizeof(Cls), cls_cmp_ab);
            int64_t g = 0;
            for (int64_t k = 0; k < m; k++) {
                if (k == 0 || cl[k].a != cl[g].a || cl[k].b != cl[g].b) g = k;
                cl[g].count++;
                cl[k].label = g;   /* group leader index */
            }
            /* leaders in order of first column get labels 1, 2, ... */
            int64_t nl = 0;
            for (int64_t k = 0; k < m; k++)
                if (cl[k].label == k) cl[nl++] = cl[k];
            qsort(cl, (size_t)nl, sizeof(Cls), cls_cmp_first);
            for (int64_t k = 0; k < nl; k++) cl[k].label = k + 1;
            /* back in pair order (labels travel along) for the lookup */
            qsort(cl, (size_t)nl, sizeof(Cls), cls_cmp_ab);
            for (int64_t j = 0; j < mc; j++) {
                int64_t la = label_of(va[j]), lb = label_of(vb[j]);
                if (la == 0 || lb == 0) continue;
                int64_t lo = 0, hi = nl - 1;
                while (lo < hi) {
                    int64_t mid = (lo + hi) / 2;
                    const Cls *q = &cl[mid];
                    if (q->a < la || (q->a == la && q->b < lb)) lo = mid + 1;
                    else hi = mid;
                }
                const Cls *q = &cl[lo];
                dc[i * nc + j] = (double)q->label;
                dn[i * nc + j] = (double)q->count;
            }
        }
        free(va); free(cl);
    }
    if (fail) {
        mb_release(*c); mb_release(*n);
        *c = *n = NULL;
        return br_err(e, BR_ENOMEM, "rowClassMeet: out of memory");
    }
    return finish_two(c, n, e);
}
