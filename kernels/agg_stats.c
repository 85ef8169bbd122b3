/* agg_stats.c: order statistics (median, quantile, optionally weighted)
 * and moments (central moments, covariance) of column vectors.
 *
 * Unweighted order statistics copy the stored values, split them into
 * negatives and positives (zeros, implicit or stored, and NaNs are only
 * counted) and select with quickselect, so a sparse vector is never
 * densified. Weighted ones sort (value, weight) pairs; a sparse vector's
 * zeros become one pair carrying their total weight. Position rule
 * (SystemDS's pickValue): pos = ceil(p * W), the first value whose
 * cumulative weight reaches pos; median averages with the next value when
 * W is even and the cumulative weight hits pos exactly.
 */
#include "agg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Cell i of a column vector (dense or sparse), O(1). */
static inline double cv_get(const MB *m, int64_t i)
{
    if (!m->sparse) return m->d[i];
    return m->rp[i + 1] > m->rp[i] ? m->v[m->rp[i]] : 0;
}

static int need_colvec(const MB *m, const char *what, BrErr *e)
{
    if (m->cols == 1) return 0;
    return br_err(e, BR_EDIM, "%s requires a column vector, got dimensions %lldx%lld",
                  what, (long long)m->rows, (long long)m->cols);
}

static int need_same_rows(const MB *a, const MB *b, const char *what, BrErr *e)
{
    if (b->cols == 1 && b->rows == a->rows) return 0;
    return br_err(e, BR_EDIM, "%s: dimension mismatch, %lldx%lld and %lldx%lld",
                  what, (long long)a->rows, (long long)a->cols,
                  (long long)b->rows, (long long)b->cols);
}

static int check_p(double p, BrErr *e)
{
    if (p >= 0 && p <= 1) return 0;
    return br_err(e, BR_EARG, "quantile probability %g is not in [0, 1]", p);
}

/* ------------------------------------------------------------------ */
/* unweighted: value multiset = neg[] + nzero zeros + pos[] + nnan NaNs */
/* ------------------------------------------------------------------ */

typedef struct Vals {
    double *neg, *pos;   /* owned; order changes while selecting */
    int64_t nneg, npos, nzero, nnan;
} Vals;

static void vals_free(Vals *v) { free(v->neg); free(v->pos); }

/* Splits the cells of column vector a into a Vals. */
static int vals_make(const MB *a, Vals *v, BrErr *e)
{
    memset(v, 0, sizeof *v);
    const double *x = a->sparse ? a->v : a->d;
    int64_t len = a->sparse ? a->nnz : a->rows;
    v->neg = br_malloc((size_t)BR_MAX(len, 1) * sizeof(double));
    v->pos = br_malloc((size_t)BR_MAX(len, 1) * sizeof(double));
    if (!v->neg || !v->pos) { vals_free(v); return br_err(e, BR_ENOMEM, "out of memory"); }
    for (int64_t k = 0; k < len; k++) {
        double t = x[k];
        if (t < 0) v->neg[v->nneg++] = t;
        else if (t > 0) v->pos[v->npos++] = t;
        else if (t == 0) v->nzero++;
        else v->nnan++;
    }
    v->nzero += a->rows - len;
    return 0;
}

static inline void swapd(double *a, double *b) { double t = *a; *a = *b; *b = t; }

/* Rearranges x[0..n) so that x[k] is the (k+1)-th smallest (no NaNs). */
static void select_k(double *x, int64_t n, int64_t k)
{
    int64_t lo = 0, hi = n - 1;
    while (hi > lo) {
        if (hi - lo < 16) { /* insertion sort */
            for (int64_t i = lo + 1; i <= hi; i++) {
                double t = x[i];
                int64_t j = i - 1;
                while (j >= lo && x[j] > t) { x[j + 1] = x[j]; j--; }
                x[j + 1] = t;
            }
            return;
        }
        int64_t mid = lo + (hi - lo) / 2;
        if (x[mid] < x[lo]) swapd(&x[mid], &x[lo]);
        if (x[hi] < x[lo]) swapd(&x[hi], &x[lo]);
        if (x[hi] < x[mid]) swapd(&x[hi], &x[mid]);
        double piv = x[mid];
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (x[i] < piv) i++;
            while (x[j] > piv) j--;
            if (i <= j) { swapd(&x[i], &x[j]); i++; j--; }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else return;
    }
}

/* The k-th smallest (1-based) value of the multiset; NaNs sort last. */
static double vals_kth(Vals *v, int64_t k)
{
    if (k <= v->nneg) { select_k(v->neg, v->nneg, k - 1); return v->neg[k - 1]; }
    k -= v->nneg;
    if (k <= v->nzero) return 0;
    k -= v->nzero;
    if (k <= v->npos) { select_k(v->pos, v->npos, k - 1); return v->pos[k - 1]; }
    return NAN;
}

static int64_t vals_n(const Vals *v) { return v->nneg + v->npos + v->nzero + v->nnan; }

static int64_t qpos(double p, double n)
{
    double pos = ceil(p * n);
    return pos < 1 ? 1 : (int64_t)pos;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ------------------------------------------------------------------ */
/* weighted: sorted (value, weight) pairs                              */
/* ------------------------------------------------------------------ */

typedef struct VW { double v, w; } VW;

static int cmp_vw(const void *a, const void *b)
{
    double x = ((const VW *)a)->v, y = ((const VW *)b)->v;
    if (isnan(x) || isnan(y)) return isnan(x) - isnan(y);
    return (x > y) - (x < y);
}

/* Sorted pairs of a (n x 1) and weights w (n x 1) with positive weight;
 * *out owned by the caller. Returns 0 or an error code. */
static int vw_make(const MB *a, const MB *w, VW **out, int64_t *np, double *wsum, BrErr *e)
{
    if (need_colvec(a, "weighted order statistic", e) ||
        need_same_rows(a, w, "weights", e)) return e->code;
    int64_t n = a->rows, k = 0;
    VW *p = br_malloc((size_t)BR_MAX(n + 1, 1) * sizeof(VW));
    if (!p) return br_err(e, BR_ENOMEM, "out of memory");
    double zw = 0, tot = 0;
    for (int64_t i = 0; i < n; i++) {
        double wi = cv_get(w, i), xi = cv_get(a, i);
        if (!(wi >= 0)) { free(p); return br_err(e, BR_EARG, "weights must be non-negative"); }
        tot += wi;
        if (wi == 0) continue;
        if (xi == 0 && a->sparse) { zw += wi; continue; }
        p[k].v = xi; p[k].w = wi; k++;
    }
    if (zw > 0) { p[k].v = 0; p[k].w = zw; k++; }
    qsort(p, (size_t)k, sizeof(VW), cmp_vw);
    *out = p; *np = k; *wsum = tot;
    return 0;
}

/* Weighted pick: pos = ceil(q*W); average with the next value when asked,
 * W even and the cumulative weight equals pos. */
static double vw_pick(const VW *p, int64_t n, double W, double q, bool average)
{
    if (n == 0 || W <= 0) return NAN;
    double pos = ceil(q * W);
    if (pos < 1) pos = 1;
    average = average && fmod(W, 2) == 0;
    double cum = 0;
    for (int64_t i = 0; i < n; i++) {
        cum += p[i].w;
        if (cum >= pos) {
            if (average && cum == pos && i + 1 < n) return (p[i].v + p[i + 1].v) / 2;
            return p[i].v;
        }
    }
    return p[n - 1].v;
}

/* ------------------------------------------------------------------ */
/* public: median, quantile                                            */
/* ------------------------------------------------------------------ */

int k_median(const MB *a, double *out, BrErr *e)
{
    if (need_colvec(a, "median", e)) return e->code;
    Vals v;
    if (vals_make(a, &v, e)) return e->code;
    int64_t n = vals_n(&v);
    if (n == 0) *out = NAN;
    else if (n % 2) *out = vals_kth(&v, (n + 1) / 2);
    else *out = (vals_kth(&v, n / 2) + vals_kth(&v, n / 2 + 1)) / 2;
    vals_free(&v);
    return 0;
}

int k_median_w(const MB *a, const MB *w, double *out, BrErr *e)
{
    if (!w) return k_median(a, out, e);
    VW *p; int64_t n; double W;
    if (vw_make(a, w, &p, &n, &W, e)) return e->code;
    *out = vw_pick(p, n, W, 0.5, true);
    free(p);
    return 0;
}

int k_quantile1(const MB *a, double p, double *out, BrErr *e)
{
    if (need_colvec(a, "quantile", e) || check_p(p, e)) return e->code;
    Vals v;
    if (vals_make(a, &v, e)) return e->code;
    int64_t n = vals_n(&v);
    *out = n == 0 ? NAN : vals_kth(&v, qpos(p, (double)n));
    vals_free(&v);
    return 0;
}

/* Probabilities of p (any vector) into a new array; NULL with e set. */
static double *probs(const MB *p, int64_t *np, BrErr *e)
{
    if (p->rows != 1 && p->cols != 1) {
        br_err(e, BR_EDIM, "quantile probabilities must be a vector, got dimensions %lldx%lld",
               (long long)p->rows, (long long)p->cols);
        return NULL;
    }
    int64_t n = p->rows * p->cols;
    double *q = br_malloc((size_t)BR_MAX(n, 1) * sizeof(double));
    if (!q) { br_err(e, BR_ENOMEM, "out of memory"); return NULL; }
    for (int64_t k = 0; k < n; k++) {
        q[k] = p->rows == 1 ? mb_get(p, 0, k) : mb_get(p, k, 0);
        if (check_p(q[k], e)) { free(q); return NULL; }
    }
    *np = n;
    return q;
}

/* quantile(a, P): column vector of quantiles; caller owns it. */
MB *k_quantile(const MB *a, const MB *p, BrErr *e)
{
    if (need_colvec(a, "quantile", e)) return NULL;
    int64_t np;
    double *q = probs(p, &np, e);
    if (!q) return NULL;
    Vals v;
    MB *out = NULL;
    if (vals_make(a, &v, e)) { free(q); return NULL; }
    out = mb_dense(np, 1, e);
    if (out) {
        int64_t n = vals_n(&v);
        if (np > 8) { /* many probabilities: sort once */
            qsort(v.neg, (size_t)v.nneg, sizeof(double), cmp_double);
            qsort(v.pos, (size_t)v.npos, sizeof(double), cmp_double);
        }
        for (int64_t k = 0; k < np; k++)
            out->d[k] = n == 0 ? NAN : vals_kth(&v, qpos(q[k], (double)n));
        mb_recount_nnz(out);
    }
    vals_free(&v);
    free(q);
    return out;
}

/* Weighted quantiles (w NULL: unweighted); caller owns the result. */
MB *k_quantile_w(const MB *a, const MB *w, const MB *p, BrErr *e)
{
    if (!w) return k_quantile(a, p, e);
    int64_t np, n;
    double *q = probs(p, &np, e), W;
    if (!q) return NULL;
    VW *pr;
    if (vw_make(a, w, &pr, &n, &W, e)) { free(q); return NULL; }
    MB *out = mb_dense(np, 1, e);
    if (out) {
        for (int64_t k = 0; k < np; k++) out->d[k] = vw_pick(pr, n, W, q[k], false);
        mb_recount_nnz(out);
    }
    free(pr);
    free(q);
    return out;
}

/* ------------------------------------------------------------------ */
/* moments                                                             */
/* ------------------------------------------------------------------ */

/* Kahan accumulator (same rule as agg.c: infinite sums drop the
 * correction). */
typedef struct KS { double s, c; } KS;

static inline void ks_add(KS *k, double x)
{
    double y = x + k->c, t = k->s + y;
    k->c = fabs(t) <= 1.7976931348623157e308 ? y - (t - k->s) : 0;
    k->s = t;
}

static inline double ks_val(KS k) { return k.s + k.c; }

int k_moment(const MB *x, int order, const MB *w, double *out, BrErr *e)
{
    if (need_colvec(x, "moment", e)) return e->code;
    if (w && need_same_rows(x, w, "moment weights", e)) return e->code;
    if (order < 2 || order > 4)
        return br_err(e, BR_EARG, "moment order must be 2, 3 or 4, got %d", order);
    int64_t n = x->rows;
    KS sw = {0, 0}, sx = {0, 0};
    for (int64_t i = 0; i < n; i++) {
        double wi = w ? cv_get(w, i) : 1;
        ks_add(&sw, wi);
        ks_add(&sx, wi * cv_get(x, i));
    }
    double W = ks_val(sw), mean = ks_val(sx) / W;
    KS m = {0, 0};
    for (int64_t i = 0; i < n; i++) {
        double wi = w ? cv_get(w, i) : 1, d = cv_get(x, i) - mean;
        double t = order == 2 ? d * d : order == 3 ? d * d * d : d * d * d * d;
        ks_add(&m, wi * t);
    }
    *out = W == 0 ? NAN : ks_val(m) / W;
    return 0;
}

int k_cov(const MB *x, const MB *y, const MB *w, double *out, BrErr *e)
{
    if (need_colvec(x, "cov", e) || need_same_rows(x, y, "cov", e)) return e->code;
    if (w && need_same_rows(x, w, "cov weights", e)) return e->code;
    int64_t n = x->rows;
    KS sw = {0, 0}, sx = {0, 0}, sy = {0, 0};
    for (int64_t i = 0; i < n; i++) {
        double wi = w ? cv_get(w, i) : 1;
        ks_add(&sw, wi);
        ks_add(&sx, wi * cv_get(x, i));
        ks_add(&sy, wi * cv_get(y, i));
    }
    double W = ks_val(sw), mx = ks_val(sx) / W, my = ks_val(sy) / W;
    KS c = {0, 0};
    for (int64_t i = 0; i < n; i++) {
        double wi = w ? cv_get(w, i) : 1;
        ks_add(&c, wi * (cv_get(x, i) - mx) * (cv_get(y, i) - my));
    }
    *out = W == 0 ? NAN : W == 1 ? 0 : ks_val(c) / (W - 1);
    return 0;
}
