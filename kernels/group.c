/* group.c: grouping kernels: table() (contingency tables), aggregate()
 * (grouped aggregates) and unique(). See reorg.h for the contracts. */
#include "reorg.h"
#include "jhashset.h"

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

/* The operands of table(): each a matrix's row-major cells (d; a copy
 * when the matrix is sparse, freed by ops_free) or a scalar (d NULL). */
typedef struct {
    const double *d[3];
    double *own[3];
    double s[3];
    int64_t n;
} TabIn;

static void ops_free(TabIn *t)
{
    for (int i = 0; i < 3; i++) free(t->own[i]);
}

/* Tuple i of t: 1-based ids (ri, cj) and weight w; 0 when it has a NaN
 * (skipped), -1 for a non-positive id (an error), 1 otherwise. */
static inline int tuple(const TabIn *t, int64_t i, int64_t *ri, int64_t *cj, double *w)
{
    double a = t->d[0] ? t->d[0][i] : t->s[0], b = t->d[1] ? t->d[1][i] : t->s[1];
    double x = t->d[2] ? t->d[2][i] : t->s[2];
    if (isnan(a) || isnan(b) || isnan(x)) return 0;
    *ri = to_id(a);
    *cj = to_id(b);
    *w = x;
    return *ri <= 0 || *cj <= 0 ? -1 : 1;
}

/* Summary of a range of tuples (the first pass of table). */
typedef struct {
    int64_t maxr, maxc;    /* largest ids of the valid tuples */
    int64_t nt;            /* tuples inside the bounds with weight != 0 */
    int64_t first, last;   /* row ids of the first/last of those */
    bool sorted;           /* their row ids never decrease */
    bool strict;           /* their row ids increase (one per row) */
    int64_t bad;           /* first tuple with a non-positive id, or -1 */
} TabSum;

#define TAB_CHUNK 65536

/* Summarizes tuples [i0, i1) against the bounds Rb x Cb. */
static TabSum tab_scan(const TabIn *t, int64_t i0, int64_t i1, int64_t Rb, int64_t Cb)
{
    TabSum s = {0, 0, 0, 0, 0, true, true, -1};
    int64_t r, c;
    double w;
    for (int64_t i = i0; i < i1; i++) {
        int k = tuple(t, i, &r, &c, &w);
        if (k < 0) { s.bad = i; break; }
        if (k == 0) continue;
        s.maxr = BR_MAX(s.maxr, r);
        s.maxc = BR_MAX(s.maxc, c);
        if (r > Rb || c > Cb || w == 0) continue;
        if (s.nt++ == 0) s.first = r;
        else if (r <= s.last) {
            s.strict = false;
            s.sorted = s.sorted && r == s.last;
        }
        s.last = r;
    }
    return s;
}

/* The sparse R x C table of the nt tuples inside it: placed by row into
 * the output's arrays (in input order when the rows come sorted, else by
 * a stable counting sort), then sorted by column within each row that
 * needs it (stably), summing the weights of equal cells in input order
 * (as the dense path does). NULL with e set on failure. */
static MB *table_sparse(const TabIn *t, int64_t R, int64_t C, int64_t nt, bool sorted,
                        BrErr *e)
{
    MB *out = mb_sp_alloc(R, C, nt, e);
    int64_t *pos = sorted ? NULL : br_calloc((size_t)R + 1, sizeof(int64_t));
    if (!out || (!sorted && !pos)) { free(pos); return out ? mb_oom(out, e) : NULL; }
    int64_t *rp = out->rp, r, c, q = 0;
    int32_t *sc = out->ci;
    double *sw = out->v, w;
    for (int64_t i = 0; i < t->n; i++)
        if (tuple(t, i, &r, &c, &w) > 0 && r <= R && c <= C && w != 0) {
            rp[r]++;
            if (sorted) { sc[q] = (int32_t)(c - 1); sw[q++] = w; }
        }
    int64_t longest = 0;
    for (int64_t i = 0; i < R; i++) {
        longest = BR_MAX(longest, rp[i + 1]);
        rp[i + 1] += rp[i];
    }
    if (!sorted) {
        memcpy(pos, rp, (size_t)R * sizeof(int64_t));
        for (int64_t i = 0; i < t->n; i++)
            if (tuple(t, i, &r, &c, &w) > 0 && r <= R && c <= C && w != 0) {
                q = pos[r - 1]++;
                sc[q] = (int32_t)(c - 1);
                sw[q] = w;
            }
        free(pos);
    }
    int32_t *tc = NULL;
    double *tw = NULL;
    if (longest > 32) {
        tc = br_malloc((size_t)longest * sizeof(int32_t));
        tw = br_malloc((size_t)longest * sizeof(double));
        if (!tc || !tw) { free(tc); free(tw); return mb_oom(out, e); }
    }
    int64_t nnz = 0, beg = 0;
    for (int64_t i = 0; i < R; i++) {
        int64_t end = rp[i + 1];
        bool ok = true;
        for (int64_t p = beg + 1; p < end && ok; p++) ok = sc[p - 1] <= sc[p];
        if (!ok) mb_sort_entries(sc + beg, sw + beg, end - beg, tc, tw);
        /* compacts in place: nnz <= p */
        for (int64_t p = beg; p < end;) {
            double sum = 0;
            int64_t p1 = p;
            for (; p1 < end && sc[p1] == sc[p]; p1++) sum += sw[p1];
            if (sum != 0) { sc[nnz] = sc[p]; sw[nnz++] = sum; }
            p = p1;
        }
        rp[i + 1] = nnz;
        beg = end;
    }
    mb_sp_done(out, nnz);
    free(tc); free(tw);
    return out;
}

/* A 1 x n or n x 1 block: table() pairs the cells of a row vector with those
 * of a column vector of the same length in order (SystemDS's KM.dml relies on
 * it). An operand with more columns than the first one (and at least its
 * rows) contributes its leading block of the first one's shape, as SystemDS
 * reads it cell (i, j) for each cell of the first operand (decision-tree.dml
 * passes an order()ed two-column matrix whose first column is the ids). */
static bool is_vec(const MB *m) { return m->rows == 1 || m->cols == 1; }

/* The sparse R x C table of nt tuples whose rows strictly increase (at
 * most one per row), in parallel over the chunks of the first pass (cs,
 * nch): each chunk writes its entries at its offset, and each row pointer
 * is set by the first entry of a later row, so no two threads write the
 * same cell. NULL with e set on failure. */
static MB *table_strict(const TabIn *t, const TabSum *cs, int64_t nch, int64_t R,
                        int64_t C, int64_t nt, BrErr *e)
{
    MB *out = mb_sp_alloc(R, C, nt, e);
    int64_t *off = br_malloc((size_t)(2 * nch + 1) * sizeof(int64_t));
    if (!out || !off) { free(off); return out ? mb_oom(out, e) : NULL; }
    int64_t *prev = off + nch + 1, q = 0, last = 0;
    for (int64_t k = 0; k < nch; k++) {
        off[k] = q;
        prev[k] = last;    /* row (1-based) of the entry before chunk k, 0: none */
        q += cs[k].nt;
        if (cs[k].nt) last = cs[k].last;
    }
    int64_t *rp = out->rp;
    #pragma omp parallel for num_threads(br_threads()) schedule(static) if (t->n >= BR_PAR_MIN)
    for (int64_t k = 0; k < nch; k++) {
        int64_t p = off[k], pr = prev[k], r, c;
        double w;
        for (int64_t i = k * TAB_CHUNK, i1 = BR_MIN(t->n, i + TAB_CHUNK); i < i1; i++)
            if (tuple(t, i, &r, &c, &w) > 0 && r <= R && c <= C && w != 0) {
                for (int64_t j = pr; j < r; j++) rp[j] = p;
                out->ci[p] = (int32_t)(c - 1);
                out->v[p++] = w;
                pr = r;
            }
    }
    for (int64_t j = last; j <= R; j++) rp[j] = nt;
    free(off);
    mb_sp_done(out, nt);
    return out;
}

MB *k_table(const MB *A, double as, const MB *B, double bs, const MB *W,
            double ws, int64_t odim1, int64_t odim2, BrErr *e)
{
    const MB *ops[3] = {A, B, W}, *ref = NULL;
    for (int i = 0; i < 3; i++) {
        if (!ops[i]) continue;
        if (!ref) ref = ops[i];
        else if ((ops[i]->rows != ref->rows || ops[i]->cols != ref->cols) &&
                 !(is_vec(ops[i]) && is_vec(ref) &&   /* a row and a column vector */
                   ops[i]->rows * ops[i]->cols == ref->rows * ref->cols) &&
                 !(ops[i]->rows >= ref->rows && ops[i]->cols >= ref->cols)) {
            br_err(e, BR_EDIM, "table: dimension mismatch: inputs of shapes "
                   "%lldx%lld and %lldx%lld", (long long)ref->rows,
                   (long long)ref->cols, (long long)ops[i]->rows,
                   (long long)ops[i]->cols);
            return NULL;
        }
    }
    TabIn t = {.s = {as, bs, ws}, .n = ref ? ref->rows * ref->cols : 1};
    for (int i = 0; i < 3; i++) {
        if (!ops[i]) continue;
        bool wider = ops[i]->cols > ref->cols && !(is_vec(ops[i]) && is_vec(ref) &&
                     ops[i]->rows * ops[i]->cols == ref->rows * ref->cols);
        if (!ops[i]->sparse && !wider) { t.d[i] = ops[i]->d; continue; }
        if (!(t.d[i] = t.own[i] = mb_cells_rowmajor(ops[i]))) {
            ops_free(&t);
            return mb_oom(NULL, e);
        }
        for (int64_t r = 0; wider && r < ref->rows; r++)   /* its leading columns */
            memmove(t.own[i] + r * ref->cols, t.own[i] + r * ops[i]->cols,
                    (size_t)ref->cols * sizeof(double));
    }
    /* first pass, in parallel over fixed chunks: validate, find the
     * extent, count the tuples inside the output, see whether they come
     * sorted by row */
    int64_t Rb = odim1 >= 0 ? odim1 : INT64_MAX, Cb = odim2 >= 0 ? odim2 : INT64_MAX;
    int64_t nch = (t.n + TAB_CHUNK - 1) / TAB_CHUNK;
    TabSum *cs = br_malloc((size_t)(nch + 1) * sizeof(TabSum));
    if (!cs) { ops_free(&t); return mb_oom(NULL, e); }
    #pragma omp parallel for num_threads(br_threads()) schedule(static) if (t.n >= BR_PAR_MIN)
    for (int64_t k = 0; k < nch; k++)
        cs[k] = tab_scan(&t, k * TAB_CHUNK, BR_MIN(t.n, (k + 1) * TAB_CHUNK), Rb, Cb);
    TabSum all = {0, 0, 0, 0, 0, true, true, -1};
    for (int64_t k = 0; k < nch && all.bad < 0; k++) {
        all.bad = cs[k].bad;
        all.maxr = BR_MAX(all.maxr, cs[k].maxr);
        all.maxc = BR_MAX(all.maxc, cs[k].maxc);
        if (!cs[k].nt) continue;
        all.sorted = all.sorted && cs[k].sorted && (all.nt == 0 || cs[k].first >= all.last);
        all.strict = all.strict && cs[k].strict && (all.nt == 0 || cs[k].first > all.last);
        all.last = cs[k].last;
        all.nt += cs[k].nt;
    }
    if (all.bad < 0 && all.strict && all.nt > 0) {
        /* at most one entry per row, rows in order (table(seq(1, n), v)):
         * filled in parallel, no sorting or summing */
        int64_t R = odim1 >= 0 ? odim1 : all.maxr, C = odim2 >= 0 ? odim2 : all.maxc;
        MB *out = (double)R * (double)C > 4096 && mb_should_be_sparse(R, C, all.nt)
                ? table_strict(&t, cs, nch, R, C, all.nt, e) : NULL;
        if (out || e->code) {
            free(cs);
            ops_free(&t);
            return mb_finish(out, e);
        }
    }
    free(cs);
    if (all.bad >= 0) {
        int64_t i = all.bad;
        br_err(e, BR_EARG, "table: erroneous input (a category id is <= 0): %g %g",
               t.d[0] ? t.d[0][i] : as, t.d[1] ? t.d[1][i] : bs);
        ops_free(&t);
        return NULL;
    }
    int64_t R = odim1 >= 0 ? odim1 : all.maxr, C = odim2 >= 0 ? odim2 : all.maxc;
    MB *out;
    if ((double)R * (double)C <= 4096 || !mb_should_be_sparse(R, C, all.nt)) {
        /* small or dense output: accumulate densely in input order */
        out = mb_dense(R, C, e);
        int64_t r, c;
        double w;
        for (int64_t i = 0; out && i < t.n; i++)
            if (tuple(&t, i, &r, &c, &w) > 0 && r <= R && c <= C)
                out->d[(r - 1) * C + c - 1] += w;
        if (out) mb_recount_nnz(out);
    } else {
        out = table_sparse(&t, R, C, all.nt, all.sorted, e);
    }
    ops_free(&t);
    return mb_finish(out, e);
}

/* ---------------------------------------------------------- aggregate */

typedef enum { GA_SUM, GA_COUNT, GA_MEAN, GA_VAR, GA_MIN, GA_MAX, GA_CM } GaFn;

/* Per-group running state of one column. */
typedef struct {
    double w;          /* sum of weights (the count); rows for min/max */
    double s, corr;    /* Kahan sum of w*x and its correction */
    double mean, m2;   /* weighted Welford mean and sum of squares */
    double m3, m4;     /* centralmoment: sums of cubed / 4th-power deviations */
    double mn, mx;     /* min / max */
} GaState;

/* Reads column j of the column-major view t (t = t(target), a block whose
 * row j holds column j), feeding each value with its group and weight. */
static void ga_column(const MB *t, int64_t j, const int64_t *gid,
                      const double *wrow, const MB *wt, GaFn fn, int order, int64_t k,
                      GaState *st, double *out, int64_t ocols)
{
    int64_t n = t->cols;
    for (int64_t g = 0; g < k; g++)
        st[g] = (GaState){0, 0, 0, 0, 0, 0, 0, INFINITY, -INFINITY};
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
        case GA_CM: {
            /* adding x with weight w to (W, mean, M2, M3, M4): Pebay's
             * update of the central sums, higher orders first */
            if (w == 0) break;
            double W = s->w, n2 = W + w, d = x - s->mean, dn = d * w / n2;
            double t2 = d * dn * W;   /* d^2 W w / n */
            s->m4 += t2 * dn * dn * (W * W - W * w + w * w) / (w * w) + 6 * dn * dn * s->m2 - 4 * dn * s->m3;
            s->m3 += t2 * dn * (W - w) / w - 3 * dn * s->m2;
            s->m2 += t2;
            s->mean += dn;
            s->w = n2;
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
        case GA_CM: r = s->w == 0 ? 0 : (order == 2 ? s->m2 : order == 3 ? s->m3 : s->m4) / s->w; break;
        }
        out[g * ocols + j] = r;
    }
}

static MB *groupagg(const MB *target, const MB *groups, const MB *weights, GaFn f, int order,
                    int64_t ngroups, BrErr *e);

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
               "mean, variance, centralmoment, min or max)", fn ? fn : "");
        return NULL;
    }
    return groupagg(target, groups, weights, fns[fi].fn, 0, ngroups, e);
}

MB *k_groupagg_cm(const MB *target, const MB *groups, const MB *weights,
                  int order, int64_t ngroups, BrErr *e)
{
    if (order < 2 || order > 4) {
        br_err(e, BR_EARG, "aggregate: centralmoment needs order 2, 3 or 4, got %d", order);
        return NULL;
    }
    return groupagg(target, groups, weights, GA_CM, order, ngroups, e);
}

/* The grouped aggregate f (order: of GA_CM) of every column of target. */
static MB *groupagg(const MB *target, const MB *groups, const MB *weights, GaFn f, int order,
                    int64_t ngroups, BrErr *e)
{
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
        ga_column(tt, j, gid, wv, wt, f, order, k, st + (size_t)th * (size_t)(k + 1),
                  out->d, m);
    }
    free(st);
    mb_release(tt); mb_release(wt); free(wv); free(gid);
    mb_recount_nnz(out);
    return mb_finish(out, e);
}

/* ------------------------------------------------------------- unique */

/* Adds row i's cells to s in column order, as SystemDS's get(i, j) loop
 * meets them, without a lookup per cell: a dense row directly, a sparse
 * row's stored values with its implicit 0 added where it first occurs
 * (its first gap; later zeros add nothing). Returns false when out of
 * memory. */
static bool add_row(JHashSet *s, const MB *a, int64_t i)
{
    int64_t n = a->cols;
    if (!a->sparse) {
        const double *r = a->d + i * n;
        for (int64_t j = 0; j < n; j++)
            if (jhs_add(s, r[j]) < 0) return false;
        return true;
    }
    int64_t expect = 0;
    bool zero = false;
    for (int64_t k = a->rp[i]; k < a->rp[i + 1]; k++) {
        if (!zero && a->ci[k] > expect) {
            zero = true;
            if (jhs_add(s, 0.0) < 0) return false;
        }
        if (jhs_add(s, a->v[k]) < 0) return false;
        expect = a->ci[k] + 1;
    }
    return zero || expect >= n || jhs_add(s, 0.0) >= 0;
}

MB *k_unique(const MB *a, int dir, BrErr *e)
{
    int64_t m = a->rows, n = a->cols;
    JHashSet s;
    jhs_init(&s);
    MB *c = NULL;
    double *vals = NULL;
    bool ok = true;
    if (dir == 0) {
        for (int64_t i = 0; i < m && ok; i++) ok = add_row(&s, a, i);
        if (ok && (c = mb_dense_uninit(jhs_size(&s), 1, e))) jhs_values(&s, c->d);
    } else {
        /* the lines: rows (dir 1) or columns (dir 2); pass 1 sizes the
         * output, pass 2 fills it (the set keeps its table between) */
        int64_t lines = dir == 1 ? m : n, len = dir == 1 ? n : m, width = 0;
        for (int pass = 0; pass < 2 && ok; pass++) {
            if (pass == 1) {
                c = dir == 1 ? mb_dense(m, width, e) : mb_dense(width, n, e);
                vals = br_malloc((size_t)(width > 0 ? width : 1) * sizeof(double));
                if (!c || !vals) { ok = false; break; }
            }
            for (int64_t l = 0; l < lines && ok; l++) {
                jhs_clear(&s);
                if (dir == 1) ok = add_row(&s, a, l);
                for (int64_t k = 0; dir == 2 && k < len && ok; k++) ok = jhs_add(&s, mb_get(a, k, l)) >= 0;
                if (!ok) break;
                if (pass == 0) {
                    if (jhs_size(&s) > width) width = jhs_size(&s);
                    continue;
                }
                jhs_values(&s, vals);
                for (int64_t k = 0; k < jhs_size(&s); k++) {
                    if (dir == 1) c->d[l * width + k] = vals[k];
                    else c->d[k * n + l] = vals[k];
                }
            }
        }
    }
    jhs_free(&s);
    free(vals);
    if (!ok) { mb_release(c); return e->code ? NULL : mb_oom(NULL, e); }
    if (!c) return NULL;
    mb_recount_nnz(c);
    return mb_finish(c, e);
}
