/* stat2.c: tier-2 statistical kernels (see stat2.h): interQuartileMean,
 * interQuantile, countDistinct, roll, cumsumprod, contains. */
#include "stat2.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "reorg.h"

/* Cell i of a column vector (dense or sparse). */
static inline double cv_get(const MB *m, int64_t i)
{
    if (!m->sparse) return m->d[i];
    return m->rp[i + 1] > m->rp[i] ? m->v[m->rp[i]] : 0;
}

/* Ascending with NaN last; -0 and 0 compare equal. */
static int cmp_nan_last(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    if (isnan(a) || isnan(b)) return isnan(a) - isnan(b);
    return (a > b) - (a < b);
}

typedef struct VW { double v, w; } VW;

static int cmp_vw(const void *pa, const void *pb)
{
    return cmp_nan_last(&((const VW *)pa)->v, &((const VW *)pb)->v);
}

/* The values of column vector x with their weights (w, or 1 each when w is
 * NULL), zero weights dropped, implicit zeros of a sparse x merged into
 * one pair, sorted by value (NaN last). *out is owned by the caller. */
static int sorted_pairs(const MB *x, const MB *w, const char *what, VW **out,
                        int64_t *np, double *wsum, BrErr *e)
{
    if (x->cols != 1)
        return br_err(e, BR_EDIM, "%s requires a column vector, got dimensions %lldx%lld",
                      what, (long long)x->rows, (long long)x->cols);
    if (w && (w->cols != 1 || w->rows != x->rows))
        return br_err(e, BR_EDIM, "%s: weights must match the data's dimensions (%lldx1), got %lldx%lld",
                      what, (long long)x->rows, (long long)w->rows, (long long)w->cols);
    int64_t n = x->rows, k = 0;
    VW *p = br_malloc((size_t)(n + 1) * sizeof(VW));
    if (!p) return br_err(e, BR_ENOMEM, "out of memory");
    double zw = 0, tot = 0;
    for (int64_t i = 0; i < n; i++) {
        double wi = w ? cv_get(w, i) : 1, xi = cv_get(x, i);
        if (!(wi >= 0) || isinf(wi)) {
            free(p);
            return br_err(e, BR_EARG, "%s: weights must be non-negative and finite, got %g", what, wi);
        }
        tot += wi;
        if (wi == 0) continue;
        if (xi == 0) { zw += wi; continue; }
        p[k].v = xi; p[k].w = wi; k++;
    }
    if (zw > 0) { p[k].v = 0; p[k].w = zw; k++; }
    qsort(p, (size_t)k, sizeof(VW), cmp_vw);
    *out = p; *np = k; *wsum = tot;
    return 0;
}

int k_iqm(const MB *x, const MB *w, double *out, BrErr *e)
{
    VW *p;
    int64_t n;
    double S;
    if (sorted_pairs(x, w, "interQuartileMean", &p, &n, &S, e)) return e->code;
    if (!(S > 0)) { free(p); *out = NAN; return 0; }
    double lo = 0.25 * S, hi = 0.75 * S, cum = 0, s = 0, c = 0;
    for (int64_t i = 0; i < n && cum < hi; i++) {
        double prev = cum;
        cum += p[i].w;
        double part = fmin(cum, hi) - fmax(prev, lo);
        if (part <= 0) continue;
        /* Kahan sum of value * covered weight */
        double y = p[i].v * part - c, t = s + y;
        c = (t - s) - y;
        s = t;
    }
    free(p);
    *out = s / (0.5 * S);
    return 0;
}

MB *k_interquantile(const MB *x, const MB *w, double p, BrErr *e)
{
    if (!(p >= 0 && p <= 1)) {
        br_err(e, BR_EARG, "interQuantile: probability %g is not in [0, 1]", p);
        return NULL;
    }
    VW *v;
    int64_t n;
    double S;
    if (sorted_pairs(x, w, "interQuantile", &v, &n, &S, e)) return NULL;
    double lpos = fmax(ceil(S * p), 1), upos = ceil(S * (1 - p));
    /* count the output rows: positions j in [lpos, upos] with
     * cum_prev < j <= cum */
    int64_t rows = 0;
    double cum = 0;
    for (int64_t i = 0; i < n; i++) {
        double prev = cum;
        cum += v[i].w;
        double from = fmax(floor(prev) + 1, lpos), to = fmin(floor(cum), upos);
        if (to >= from) rows += (int64_t)(to - from + 1);
    }
    MB *r = mb_dense(rows, 1, e);
    if (!r) { free(v); return NULL; }
    int64_t k = 0;
    cum = 0;
    for (int64_t i = 0; i < n && k < rows; i++) {
        double prev = cum;
        cum += v[i].w;
        double from = fmax(floor(prev) + 1, lpos), to = fmin(floor(cum), upos);
        for (double j = from; j <= to && k < rows; j++) r->d[k++] = v[i].v;
    }
    free(v);
    mb_recount_nnz(r);
    if (mb_examine(r, e)) { mb_release(r); return NULL; }
    return r;
}

MB *k_roll(const MB *x, int64_t shift, BrErr *e)
{
    int64_t m = x->rows, c = x->cols;
    int64_t s = m > 0 ? ((shift % m) + m) % m : 0;
    if (!x->sparse) {
        MB *r = mb_dense_uninit(m, c, e);
        if (!r) return NULL;
        int64_t work = m * c;
#pragma omp parallel for num_threads(br_threads()) if (br_par((double)work)) schedule(static)
        for (int64_t i = 0; i < m; i++)
            if (c > 0) memcpy(r->d + ((i + s) % m) * c, x->d + i * c, (size_t)c * sizeof(double));
        r->nnz = x->nnz;
        return r;
    }
    MB *r = mb_sp_alloc(m, c, x->nnz, e);
    if (!r) return NULL;
    for (int64_t i = 0; i < m; i++) {   /* output row i holds input row i - s */
        int64_t src = (i - s + m) % m;
        r->rp[i + 1] = r->rp[i] + (x->rp[src + 1] - x->rp[src]);
    }
    int64_t work = x->nnz;
#pragma omp parallel for num_threads(br_threads()) if (br_par((double)work)) schedule(static)
    for (int64_t i = 0; i < m; i++) {
        int64_t src = (i - s + m) % m, len = x->rp[src + 1] - x->rp[src];
        if (len == 0) continue;
        memcpy(r->ci + r->rp[i], x->ci + x->rp[src], (size_t)len * sizeof(int32_t));
        memcpy(r->v + r->rp[i], x->v + x->rp[src], (size_t)len * sizeof(double));
    }
    r->nnz = x->nnz;
    return r;
}

/* Number of distinct values among v[0..n) (sorted in place) plus the value
 * 0 when zero is true and no 0 is among them. */
static int64_t distinct_sorted(double *v, int64_t n, bool zero)
{
    qsort(v, (size_t)n, sizeof(double), cmp_nan_last);
    int64_t cnt = 0;
    bool has0 = false;
    for (int64_t i = 0; i < n; i++) {
        if (v[i] == 0) has0 = true;
        if (i == 0 || cmp_nan_last(&v[i - 1], &v[i]) != 0) cnt++;
    }
    return cnt + (zero && !has0);
}

int k_count_distinct(const MB *x, int64_t *out, BrErr *e)
{
    int64_t cells = x->rows * x->cols;
    int64_t n = x->sparse ? x->nnz : cells;
    double *v = br_malloc((size_t)(n + 1) * sizeof(double));
    if (!v) return br_err(e, BR_ENOMEM, "out of memory");
    if (n > 0) memcpy(v, x->sparse ? x->v : x->d, (size_t)n * sizeof(double));
    *out = distinct_sorted(v, n, n < cells);
    free(v);
    return 0;
}

/* Distinct counts of every row of x into r->d (dense, nrow x 1). */
static int rows_distinct(const MB *x, MB *r, BrErr *e)
{
    int64_t m = x->rows, c = x->cols;
    int nt = br_threads();
    double *buf = br_malloc((size_t)nt * (size_t)(c + 1) * sizeof(double));
    if (!buf) return br_err(e, BR_ENOMEM, "out of memory");
    int64_t work = x->sparse ? x->nnz : m * c;
#pragma omp parallel for num_threads(nt) if (br_par((double)work)) schedule(dynamic, 64)
    for (int64_t i = 0; i < m; i++) {
        double *b = buf + (size_t)omp_get_thread_num() * (size_t)(c + 1);
        int64_t len;
        len = x->sparse ? x->rp[i + 1] - x->rp[i] : c;
        if (len > 0) memcpy(b, x->sparse ? x->v + x->rp[i] : x->d + i * c, (size_t)len * sizeof(double));
        r->d[i] = (double)distinct_sorted(b, len, len < c);
    }
    free(buf);
    return 0;
}

MB *k_count_distinct_dir(const MB *x, bool rows, BrErr *e)
{
    MB *t = NULL;
    const MB *src = x;
    if (!rows) {
        if (!(t = k_transpose(x, e))) return NULL;
        src = t;
    }
    MB *r = mb_dense(src->rows, 1, e);
    if (!r || rows_distinct(src, r, e)) { mb_release(r); mb_release(t); return NULL; }
    mb_release(t);
    if (!rows) { r->cols = r->rows; r->rows = 1; }   /* n x 1 -> 1 x n, same data */
    mb_recount_nnz(r);
    if (mb_examine(r, e)) { mb_release(r); return NULL; }
    return r;
}

/* cumsumprod (see stat2.h): one sequential pass down the rows. */
MB *k_cumsumprod(const MB *x, BrErr *e)
{
    if (x->cols != 2) {
        br_err(e, BR_EDIM, "cumsumprod: dimension mismatch: needs 2 columns, got %lldx%lld", (long long)x->rows,
               (long long)x->cols);
        return NULL;
    }
    int64_t n = x->rows;
    if (n == 0 || x->nnz == 0) return mb_empty(n, 1, e);
    MB *r = mb_dense_uninit(n, 1, e);
    if (!r) return NULL;
    double y = 0;
    for (int64_t i = 0; i < n; i++) {
        double a = 0, b = 0;
        if (!x->sparse) {
            a = x->d[2 * i];
            b = x->d[2 * i + 1];
        } else {
            for (int64_t k = x->rp[i]; k < x->rp[i + 1]; k++) {
                if (x->ci[k] == 0) a = x->v[k];
                else b = x->v[k];
            }
        }
        y = a + b * y;
        r->d[i] = y;
    }
    mb_recount_nnz(r);
    if (mb_examine(r, e)) { mb_release(r); return NULL; }
    return r;
}

static bool same_value(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

/* contains (see stat2.h): a scan over the cells (or rows) in parallel
 * chunks; the answer does not depend on the order. */
int k_contains(const MB *x, const MB *row, double val, bool *out, BrErr *e)
{
    int64_t n = x->rows, m = x->cols;
    *out = false;
    if (row) {
        if (row->rows != 1 || row->cols != m)
            return br_err(e, BR_EDIM, "contains: dimension mismatch: pattern is %lldx%lld, target has %lld columns",
                          (long long)row->rows, (long long)row->cols, (long long)m);
        double *p = br_malloc((size_t)(m > 0 ? m : 1) * sizeof(double));
        if (!p) return br_err(e, BR_ENOMEM, "out of memory");
        for (int64_t j = 0; j < m; j++) p[j] = mb_get(row, 0, j);
        bool found = false;
#pragma omp parallel for num_threads(br_threads()) if (br_par((double)(n * m))) schedule(static) reduction(|| : found)
        for (int64_t i = 0; i < n; i++) {
            bool eq = true;
            for (int64_t j = 0; j < m && eq; j++) eq = same_value(x->sparse ? mb_get(x, i, j) : x->d[i * m + j], p[j]);
            found = found || eq;
        }
        free(p);
        *out = found;
        return 0;
    }
    if (n * m == 0) return 0;
    if (x->sparse && (val == 0 && x->nnz < n * m)) { *out = true; return 0; }
    int64_t cells = x->sparse ? x->nnz : n * m;
    const double *v = x->sparse ? x->v : x->d;
    bool found = false;
#pragma omp parallel for num_threads(br_threads()) if (br_par((double)cells)) schedule(static) reduction(|| : found)
    for (int64_t k = 0; k < cells; k++) found = found || same_value(v[k], val);
    *out = found;
    return 0;
}
