/* group.c: grouping kernels: table() (contingency tables), aggregate()
 * (grouped aggregates) and unique(). See reorg.h for the contracts. */
#include "reorg.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* A 1-based category/group id as SystemDS casts it: floor(v + eps),
 * saturated far beyond any matrix dimension. */
static int64_t to_id(double v)
{
    double f = floor(v + DBL_EPSILON);
    if (f > 4e18) return INT64_C(4000000000000000000);
    if (f < -4e18) return -INT64_C(4000000000000000000);
    return (int64_t)f;
}

/* -------------------------------------------------------------- table */

typedef struct { int64_t r, c, seq; double w; } Tup;

static int tup_cmp(const void *x, const void *y)
{
    const Tup *a = x, *b = y;
    if (a->r != b->r) return a->r < b->r ? -1 : 1;
    if (a->c != b->c) return a->c < b->c ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

MB *k_table(const MB *A, double as, const MB *B, double bs, const MB *W,
            double ws, int64_t odim1, int64_t odim2, BrErr *e)
{
    const MB *ops[3] = {A, B, W}, *ref = NULL;
    for (int i = 0; i < 3; i++) {
        if (!ops[i]) continue;
        if (!ref) ref = ops[i];
        else if (ops[i]->rows != ref->rows || ops[i]->cols != ref->cols) {
            br_err(e, BR_EDIM, "table: dimension mismatch: inputs of shapes "
                   "%lldx%lld and %lldx%lld", (long long)ref->rows,
                   (long long)ref->cols, (long long)ops[i]->rows,
                   (long long)ops[i]->cols);
            return NULL;
        }
    }
    int64_t n = ref ? ref->rows * ref->cols : 1;
    double *va = A ? mb_cells_rowmajor(A) : NULL;
    double *vb = B ? mb_cells_rowmajor(B) : NULL;
    double *vw = W ? mb_cells_rowmajor(W) : NULL;
    Tup *t = br_malloc((size_t)n * sizeof(Tup));
    if ((A && !va) || (B && !vb) || (W && !vw) || !t) {
        free(va); free(vb); free(vw); free(t);
        return mb_oom(NULL, e);
    }
    int64_t maxr = 0, maxc = 0, nt = 0;
    for (int64_t i = 0; i < n; i++) {
        double a = va ? va[i] : as, b = vb ? vb[i] : bs, w = vw ? vw[i] : ws;
        if (isnan(a) || isnan(b) || isnan(w)) continue;
        int64_t r = to_id(a), c = to_id(b);
        if (r <= 0 || c <= 0) {
            br_err(e, BR_EARG, "table: erroneous input (a category id is <= "
                   "0): %g %g", a, b);
            free(va); free(vb); free(vw); free(t);
            return NULL;
        }
        maxr = BR_MAX(maxr, r);
        maxc = BR_MAX(maxc, c);
        t[nt++] = (Tup){r - 1, c - 1, i, w};
    }
    free(va); free(vb); free(vw);
    int64_t R = odim1 >= 0 ? odim1 : maxr, C = odim2 >= 0 ? odim2 : maxc;
    /* drop tuples outside the output and zero weights */
    int64_t k = 0;
    for (int64_t i = 0; i < nt; i++)
        if (t[i].r < R && t[i].c < C && t[i].w != 0) t[k++] = t[i];
    nt = k;
    MB *out;
    if ((double)R * (double)C <= 8.0 * (double)nt + 4096) {
        /* small output: accumulate densely in input order */
        out = mb_dense(R, C, e);
        if (out) {
            for (int64_t i = 0; i < nt; i++) out->d[t[i].r * C + t[i].c] += t[i].w;
            mb_recount_nnz(out);
        }
    } else {
        /* sort by (row, col, input order) and sum runs: same order of
         * additions as the dense path */
        qsort(t, (size_t)nt, sizeof(Tup), tup_cmp);
        out = mb_sp_new(R, C, nt, e);
        for (int64_t i = 0; out && i < nt;) {
            double s = 0;
            int64_t j = i;
            for (; j < nt && t[j].r == t[i].r && t[j].c == t[i].c; j++) s += t[j].w;
            if (mb_sp_append(out, t[i].r, t[i].c, s, e)) { mb_release(out); out = NULL; }
            i = j;
        }
        if (out) mb_sp_finish(out);
    }
    free(t);
    return mb_finish(out, e);
}

/* ---------------------------------------------------------- aggregate */

typedef enum { GA_SUM, GA_COUNT, GA_MEAN, GA_VAR, GA_MIN, GA_MAX } GaFn;

/* Per-group running state of one column. */
typedef struct {
    double w;          /* sum of weights (the count); rows for min/max */
    double s, corr;    /* Kahan sum of w*x and its correction */
    double mean, m2;   /* weighted Welford mean and sum of squares */
    double mn, mx;     /* min / max */
} GaState;

/* Reads column j of the column-major view t (t = t(target), a block whose
 * row j holds column j), feeding each value with its group and weight. */
static void ga_column(const MB *t, int64_t j, const int64_t *gid,
                      const double *wrow, const MB *wt, GaFn fn, int64_t k,
                      GaState *st, double *out, int64_t ocols)
{
    int64_t n = t->cols;
    for (int64_t g = 0; g < k; g++)
        st[g] = (GaState){0, 0, 0, 0, 0, INFINITY, -INFINITY};
    int64_t p = t->sparse ? t->rp[j] : 0, pend = t->sparse ? t->rp[j + 1] : 0;
    int64_t pw = wt && wt->sparse ? wt->rp[j] : 0;
    int64_t pwend = wt && wt->sparse ? wt->rp[j + 1] : 0;
    for (int64_t i = 0; i < n; i++) {
        double x;
        if (t->sparse) x = (p < pend && t->ci[p] == i) ? t->v[p++] : 0;
        else x = t->d[j * n + i];
        double w = 1;
        if (wrow) w = wrow[i];
        else if (wt) {
            if (wt->sparse) w = (pw < pwend && wt->ci[pw] == i) ? wt->v[pw++] : 0;
            else w = wt->d[j * n + i];
        }
        int64_t g = gid[i];
        if (g < 0) continue;
        GaState *s = &st[g];
        switch (fn) {
        case GA_SUM: case GA_COUNT: {
            double y = w * x - s->corr, tt = s->s + y;
            s->corr = (tt - s->s) - y;
            s->s = tt;
            s->w += w;
            break;
        }
        case GA_MEAN: case GA_VAR: {
            if (w == 0) break;
            double w2 = s->w + w, d = x - s->mean;
            s->mean += d * w / w2;
            s->m2 += w * d * (x - s->mean);
            s->w = w2;
            break;
        }
        case GA_MIN: if (isnan(x) || x < s->mn) s->mn = x; s->w += 1; break;
        case GA_MAX: if (isnan(x) || x > s->mx) s->mx = x; s->w += 1; break;
        }
    }
    for (int64_t g = 0; g < k; g++) {
        const GaState *s = &st[g];
        double r = 0;
        switch (fn) {
        case GA_SUM: r = s->s; break;
        case GA_COUNT: r = s->w; break;
        case GA_MEAN: r = s->w != 0 ? s->mean : 0; break;
        case GA_VAR: r = (s->w == 0 || s->w == 1) ? 0 : s->m2 / (s->w - 1); break;
        case GA_MIN: r = s->w != 0 ? s->mn : 0; break;
        case GA_MAX: r = s->w != 0 ? s->mx : 0; break;
        }
        out[g * ocols + j] = r;
    }
}

MB *k_groupagg(const MB *target, const MB *groups, const MB *weights,
               const char *fn, int64_t ngroups, BrErr *e)
{
    static const struct { const char *name; GaFn fn; } fns[] = {
        {"sum", GA_SUM}, {"count", GA_COUNT}, {"mean", GA_MEAN},
        {"variance", GA_VAR}, {"min", GA_MIN}, {"max", GA_MAX}};
    int fi = -1;
    for (int i = 0; i < (int)(sizeof fns / sizeof *fns); i++)
        if (fn && !strcmp(fn, fns[i].name)) fi = i;
    if (fi < 0) {
        br_err(e, BR_EARG, "aggregate: unknown function '%s' (use sum, count, "
               "mean, variance, min or max)", fn ? fn : "");
        return NULL;
    }
    GaFn f = fns[fi].fn;
    int64_t n = target->rows, m = target->cols;
    if ((groups->rows != 1 && groups->cols != 1) || groups->rows * groups->cols != n) {
        br_err(e, BR_EDIM, "aggregate: dimension mismatch: groups is %lldx%lld "
               "but target has %lld rows", (long long)groups->rows,
               (long long)groups->cols, (long long)n);
        return NULL;
    }
    bool wrow = false;
    if (weights) {
        bool vec = (weights->rows == 1 || weights->cols == 1) &&
                   weights->rows * weights->cols == n;
        bool same = weights->rows == n && weights->cols == m;
        if (!vec && !same) {
            br_err(e, BR_EDIM, "aggregate: dimension mismatch: weights is "
                   "%lldx%lld, target %lldx%lld", (long long)weights->rows,
                   (long long)weights->cols, (long long)n, (long long)m);
            return NULL;
        }
        wrow = vec && !(same && m > 1);
    }
    double *gv = mb_cells_rowmajor(groups);
    int64_t *gid = br_malloc((size_t)(n + 1) * sizeof(int64_t));
    if (!gv || !gid) { free(gv); free(gid); return mb_oom(NULL, e); }
    int64_t maxg = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t g = isnan(gv[i]) ? 0 : to_id(gv[i]);
        if (g <= 0) {
            br_err(e, BR_EARG, "aggregate: invalid group id %g (ids are "
                   "1-based)", gv[i]);
            free(gv); free(gid);
            return NULL;
        }
        maxg = BR_MAX(maxg, g);
        gid[i] = g - 1;
    }
    free(gv);
    int64_t k = ngroups > 0 ? ngroups : maxg;
    for (int64_t i = 0; i < n; i++) if (gid[i] >= k) gid[i] = -1;
    double *wv = NULL;
    MB *tt = NULL, *wt = NULL;
    MB *out = mb_dense(k, m, e);
    if (!out) { free(gid); return NULL; }
    /* column-major views: row j of tt is column j of target */
    bool bad = !(tt = k_transpose(target, e));
    if (!bad && weights && wrow && !(wv = mb_cells_rowmajor(weights)))
        bad = br_err(e, BR_ENOMEM, "out of memory") != 0;
    if (!bad && weights && !wrow) bad = !(wt = k_transpose(weights, e));
    if (bad) {
        mb_release(tt); mb_release(wt); free(wv); free(gid);
        mb_release(out);
        return NULL;
    }
    int nth = br_threads();
    GaState *st = br_malloc((size_t)(k + 1) * (size_t)nth * sizeof(GaState));
    if (!st) {
        mb_release(tt); mb_release(wt); free(wv); free(gid);
        return mb_oom(out, e);
    }
    #pragma omp parallel for schedule(dynamic, 1) num_threads(nth) \
        if (n * m >= BR_PAR_MIN && m > 1)
    for (int64_t j = 0; j < m; j++) {
        int th = 0;
#ifdef _OPENMP
        th = omp_get_thread_num();
#endif
        ga_column(tt, j, gid, wv, wt, f, k, st + (size_t)th * (size_t)(k + 1),
                  out->d, m);
    }
    free(st);
    mb_release(tt); mb_release(wt); free(wv); free(gid);
    mb_recount_nnz(out);
    return mb_finish(out, e);
}

/* ------------------------------------------------------------- unique */

/* Open-addressing set of doubles (bit patterns; -0 folded into 0, all NaNs
 * into one). */
typedef struct {
    uint64_t *keys;
    uint8_t *used;
    int64_t cap, n;
} DSet;

static uint64_t dkey(double x)
{
    if (x == 0) x = 0;            /* -0 -> 0 */
    if (isnan(x)) x = NAN;
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static uint64_t hash64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static bool dset_init(DSet *s, int64_t cap)
{
    s->cap = cap; s->n = 0;
    s->keys = br_malloc((size_t)cap * sizeof(uint64_t));
    s->used = br_calloc((size_t)cap, 1);
    return s->keys && s->used;
}

static void dset_free(DSet *s) { free(s->keys); free(s->used); }

/* Inserts key; returns 1 if new, 0 if present, -1 out of memory. */
static int dset_add(DSet *s, uint64_t key)
{
    if (2 * (s->n + 1) > s->cap) {
        DSet g;
        if (!dset_init(&g, s->cap * 2)) { dset_free(&g); return -1; }
        for (int64_t i = 0; i < s->cap; i++)
            if (s->used[i]) {
                int64_t h = (int64_t)(hash64(s->keys[i]) & (uint64_t)(g.cap - 1));
                while (g.used[h]) h = (h + 1) & (g.cap - 1);
                g.used[h] = 1; g.keys[h] = s->keys[i];
            }
        g.n = s->n;
        dset_free(s);
        *s = g;
    }
    int64_t h = (int64_t)(hash64(key) & (uint64_t)(s->cap - 1));
    while (s->used[h]) {
        if (s->keys[h] == key) return 0;
        h = (h + 1) & (s->cap - 1);
    }
    s->used[h] = 1; s->keys[h] = key; s->n++;
    return 1;
}

/* Growing list of the distinct values in order of first occurrence. */
typedef struct {
    DSet set;
    double *vals;
    int64_t n, cap;
} Uniq;

/* Adds x if not seen yet; returns 0, or -1 when out of memory. */
static int uniq_add(Uniq *u, double x)
{
    int r = dset_add(&u->set, dkey(x));
    if (r <= 0) return r;
    if (u->n == u->cap) {
        double *nv = br_realloc(u->vals, (size_t)u->cap * 2 * sizeof(double));
        if (!nv) return -1;
        u->vals = nv;
        u->cap *= 2;
    }
    u->vals[u->n++] = x == 0 ? 0.0 : x;
    return 0;
}

MB *k_unique(const MB *a, BrErr *e)
{
    int64_t m = a->rows, n = a->cols;
    Uniq u = {.n = 0, .cap = 64};
    bool ok = dset_init(&u.set, 64);
    u.vals = br_malloc((size_t)u.cap * sizeof(double));
    ok = ok && u.vals;
    /* visit the cells row-major; in a sparse row the implicit zeros are met
     * at its first gap */
    bool zero_seen = false;
    for (int64_t i = 0; i < m && ok; i++) {
        if (!a->sparse) {
            const double *r = a->d + i * n;
            for (int64_t j = 0; j < n && ok; j++) ok = uniq_add(&u, r[j]) == 0;
            continue;
        }
        int64_t expect = 0;
        for (int64_t k = a->rp[i]; k < a->rp[i + 1] && ok; k++) {
            if (!zero_seen && a->ci[k] > expect) {
                zero_seen = true;
                ok = uniq_add(&u, 0.0) == 0;
            }
            ok = ok && uniq_add(&u, a->v[k]) == 0;
            expect = a->ci[k] + 1;
        }
        if (ok && !zero_seen && expect < n) {
            zero_seen = true;
            ok = uniq_add(&u, 0.0) == 0;
        }
    }
    dset_free(&u.set);
    if (!ok) { free(u.vals); return mb_oom(NULL, e); }
    MB *c = mb_dense_uninit(u.n, 1, e);
    if (c) {
        if (u.n) memcpy(c->d, u.vals, (size_t)u.n * sizeof(double));
        mb_recount_nnz(c);
    }
    free(u.vals);
    return mb_finish(c, e);
}
