/* cmb.c: compressed matrix blocks: groups, row iteration, decompression
 * (matrix/cmb.h). */
#include "cmb.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* ---- groups and indexes ---- */

ClaGroup *cla_group_new(ClaEnc enc, int ncols, int32_t ndict)
{
    ClaGroup *g = br_calloc(1, sizeof *g);
    if (!g) return NULL;
    g->refs = 1;
    g->enc = enc;
    g->ncols = ncols;
    g->ndict = ndict;
    g->cols = br_calloc((size_t)ncols + 1, sizeof(int32_t));
    g->dict = br_calloc((size_t)ndict * (size_t)ncols + 1, sizeof(double));
    g->counts = br_calloc((size_t)ndict + 1, sizeof(int64_t));
    if (!g->cols || !g->dict || !g->counts) {
        cla_group_release(g);
        return NULL;
    }
    return g;
}

ClaGroup *cla_group_retain(ClaGroup *g)
{
    if (g) __atomic_add_fetch(&g->refs, 1, __ATOMIC_RELAXED);
    return g;
}

void cla_group_release(ClaGroup *g)
{
    if (!g || __atomic_sub_fetch(&g->refs, 1, __ATOMIC_ACQ_REL) > 0) return;
    free(g->cols);
    free(g->dict);
    free(g->counts);
    cla_index_release(g->ix);
    mb_release(g->unc);
    free(g);
}

ClaIndex *cla_index_new(void)
{
    ClaIndex *x = br_calloc(1, sizeof *x);
    if (x) x->refs = 1;
    return x;
}

ClaIndex *cla_index_retain(ClaIndex *x)
{
    if (x) __atomic_add_fetch(&x->refs, 1, __ATOMIC_RELAXED);
    return x;
}

void cla_index_release(ClaIndex *x)
{
    if (!x || __atomic_sub_fetch(&x->refs, 1, __ATOMIC_ACQ_REL) > 0) return;
    free(x->c1);
    free(x->c2);
    free(x->ptr);
    free(x->data);
    free(x);
}

size_t cla_group_bytes(const ClaGroup *g, int64_t rows)
{
    size_t b = sizeof *g + (size_t)g->ncols * sizeof(int32_t) +
               (size_t)g->ndict * ((size_t)g->ncols * sizeof(double) + sizeof(int64_t));
    switch (g->enc) {
    case CLA_DDC1: b += (size_t)rows; break;
    case CLA_DDC2: b += 2 * (size_t)rows; break;
    case CLA_OLE: case CLA_RLE:
        b += ((size_t)g->ndict + 1) * sizeof(int64_t) + (size_t)g->ix->ptr[g->ndict] * sizeof(uint16_t);
        break;
    case CLA_UNC: b += mb_bytes(g->unc); break;
    default: break;
    }
    return b;
}

int64_t cla_group_nnz(const ClaGroup *g, int64_t rows)
{
    if (g->enc == CLA_UNC) return g->unc->nnz;
    int64_t n = 0;
    for (int32_t t = 0; t < g->ndict; t++) {
        int64_t nz = 0;
        for (int j = 0; j < g->ncols; j++) nz += g->dict[(int64_t)t * g->ncols + j] != 0;
        n += nz * g->counts[t];
    }
    return n;
}

/* ---- blocks ---- */

MB *cmb_new(int64_t rows, int64_t cols, ClaGroup **groups, int n, BrErr *e)
{
    struct CMB *c = br_calloc(1, sizeof *c);
    MB *m = br_calloc(1, sizeof *m);
    if (!c || !m) {
        free(c);
        free(m);
        for (int i = 0; i < n; i++) cla_group_release(groups[i]);
        br_err(e, BR_ENOMEM, "out of memory");
        return NULL;
    }
    c->groups = groups;
    c->ngroups = n;
    m->rows = rows;
    m->cols = cols;
    m->refs = 1;
    m->cmb = c;
    for (int i = 0; i < n; i++) m->nnz += cla_group_nnz(groups[i], rows);
    return m;
}

void cmb_free(struct CMB *c)
{
    if (!c) return;
    mb_release(c->dec);
    for (int i = 0; i < c->ngroups; i++) cla_group_release(c->groups[i]);
    free(c->groups);
    free(c);
}

size_t cmb_bytes(const MB *m)
{
    size_t b = sizeof *m + sizeof *m->cmb + (size_t)m->cmb->ngroups * sizeof(void *);
    for (int i = 0; i < m->cmb->ngroups; i++) b += cla_group_bytes(m->cmb->groups[i], m->rows);
    return b;
}

/* ---- row iteration ---- */

bool cla_iter_init(ClaIter *it, const ClaGroup *g, int64_t rl)
{
    memset(it, 0, sizeof *it);
    it->g = g;
    it->row = rl;
    if (g->enc != CLA_OLE && g->enc != CLA_RLE) return true;
    size_t n = (size_t)g->ndict + 1;
    it->pos = br_malloc(n * sizeof(int64_t));
    it->aux = br_calloc(n, sizeof(int64_t));
    it->cur = br_malloc(n * sizeof(int64_t));
    if (!it->pos || !it->aux || !it->cur) {
        cla_iter_free(it);
        return false;
    }
    const int64_t *ptr = g->ix->ptr;
    const uint16_t *data = g->ix->data;
    for (int32_t t = 0; t < g->ndict; t++) {
        it->pos[t] = ptr[t];
        if (g->enc == CLA_RLE) {
            it->cur[t] = 0;      /* an empty run [0, 0): the next one follows */
            continue;
        }
        /* OLE: skip the segments that end at or before rl */
        int64_t s = -1, p = ptr[t];
        while (p < ptr[t + 1] && (s + 2) * (int64_t)CLA_SEG <= rl) p += 1 + data[p], s++;
        it->pos[t] = p;
        it->cur[t] = s;
    }
    return true;
}

/* The first of the n ascending offsets d not below v: 0 at once when
 * the first is, else by galloping from the start (O(log answer): the
 * answer is usually a step's worth of rows on, and an iterator opened
 * inside a segment passes its first rows once; a bisection of a long
 * list was a chain of dependent loads far apart, a linear scan quadratic
 * over row windows opened one after another), then bisection without
 * branches on the data inside the last gallop. */
static int64_t first_at(const uint16_t *d, int64_t n, int64_t v)
{
    if (n == 0 || d[0] >= v) return 0;
    int64_t lo = 0, step = 1;   /* d[lo] < v */
    while (lo + step < n && d[lo + step] < v) {
        lo += step;
        step *= 2;
    }
    int64_t hi = lo + step < n ? lo + step : n;   /* hi == n or d[hi] >= v */
    if (hi - lo <= 1) return hi;
    const uint16_t *b = d + lo + 1;
    for (int64_t len = hi - lo - 1; len > 1;) {
        int64_t h = len / 2;
        b = b[h] < v ? b + h : b;
        len -= h;
    }
    return (b - d) + (*b < v);
}

/* Tuples ahead whose list position ole_rows prefetches: the callers take
 * the tuples in order, and each tuple's list is elsewhere in memory (a
 * miss to memory per tuple and window, 899 tuples at 1.5 listed rows
 * each per window took most of an OLE group's pass). */
#define OLE_AHEAD 8

/* OLE: tuple t's rows in [lo, hi), the iterator moved past them, as
 * offsets from lo into rows[] (mode OW_ROWS, their number returned), or
 * used in place: *sum += v[offset] (OW_SUM: four partial sums by list
 * position, each piece's added in order), o[offset] += x (OW_ADD),
 * rows[offset] = t (OW_CODES: rows as the range's codes). The
 * modes in place save the rows' round trip through memory (mnist-like
 * t(X) %*% y: 140 OLE groups, one a pixel column). */
typedef enum { OW_ROWS, OW_SUM, OW_ADD, OW_CODES } OleWalk;

static inline int64_t ole_walk(ClaIter *it, int32_t t, int64_t lo, int64_t hi, OleWalk mode, int32_t *rows,
                               const double *v, double x, double *o, double *sum)
{
    const uint16_t *data = it->g->ix->data;
    int64_t end = it->g->ix->ptr[t + 1];
    if (t + OLE_AHEAD < it->g->ndict) __builtin_prefetch(data + it->pos[t + OLE_AHEAD]);
    int64_t p = it->pos[t], left = it->aux[t], s = it->cur[t], k = 0;
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (;;) {
        if (left == 0) {
            /* the next segment's header, unless it starts at or after hi */
            if (p >= end || (s + 1) * (int64_t)CLA_SEG >= hi) break;
            s++;
            left = data[p++];
            continue;
        }
        /* the segment's offsets in [lo, hi) (sorted: found by galloping),
         * those below lo passed over, then used by loops that vectorize
         * (one compare and branch an offset bound X %*% v over OLE groups) */
        int64_t base = s * (int64_t)CLA_SEG;
        int64_t j0 = lo > base ? first_at(data + p, left, lo - base) : 0;
        int64_t j1 = hi - base >= CLA_SEG ? left : first_at(data + p, left, hi - base);
        const int32_t off = (int32_t)(base - lo);
        const uint16_t *d = data + p;
        if (mode == OW_ROWS) {
            int32_t *r = rows + k;
#pragma omp simd
            for (int64_t j = j0; j < j1; j++) r[j - j0] = off + d[j];
        } else if (mode == OW_SUM) {
            int64_t j = j0;
            for (; j + 4 <= j1; j += 4)
                s0 += v[off + d[j]], s1 += v[off + d[j + 1]], s2 += v[off + d[j + 2]], s3 += v[off + d[j + 3]];
            for (; j < j1; j++) s0 += v[off + d[j]];
        } else if (mode == OW_ADD) {
            for (int64_t j = j0; j < j1; j++) o[off + d[j]] += x;
        } else {
            for (int64_t j = j0; j < j1; j++) rows[off + d[j]] = t;
        }
        k += j1 - j0;
        p += j1;
        left -= j1;
        if (left > 0) break;   /* the next is at or past hi */
    }
    it->pos[t] = p;
    it->aux[t] = left;
    it->cur[t] = s;
    if (mode == OW_SUM) *sum += (s0 + s1) + (s2 + s3);
    return k;
}

static int64_t ole_rows(ClaIter *it, int32_t t, int64_t lo, int64_t hi, int32_t *rows)
{
    return ole_walk(it, t, lo, hi, OW_ROWS, rows, NULL, 0, NULL, NULL);
}

double cla_iter_sum1(ClaIter *it, int32_t t, int64_t n, const double *v)
{
    double s = 0;
    ole_walk(it, t, it->row, it->row + n, OW_SUM, NULL, v, 0, NULL, &s);
    return s;
}

void cla_iter_add1(ClaIter *it, int32_t t, int64_t n, double x, double *o)
{
    ole_walk(it, t, it->row, it->row + n, OW_ADD, NULL, NULL, x, o, NULL);
}

/* RLE: the next run of tuple t within [lo, hi) as [*a, *b), false when
 * none is left there. The iterator keeps the run's rest (from hi on) for
 * the next range. */
static bool rle_next(ClaIter *it, int32_t t, int64_t lo, int64_t hi, int64_t *a, int64_t *b)
{
    const uint16_t *data = it->g->ix->data;
    int64_t end = it->g->ix->ptr[t + 1];
    int64_t p = it->pos[t], rs = it->cur[t], re = it->aux[t];
    bool got = false;
    for (;;) {
        if (rs >= re) {   /* the current run is used up: load the next */
            if (p >= end) break;
            rs = re + data[p];
            re = rs + data[p + 1];
            p += 2;
            continue;
        }
        if (rs >= hi) break;
        *a = rs > lo ? rs : lo;
        *b = re < hi ? re : hi;
        rs = *b;
        got = true;
        break;
    }
    it->pos[t] = p;
    it->cur[t] = rs;
    it->aux[t] = re;
    return got;
}

static int64_t rle_rows(ClaIter *it, int32_t t, int64_t lo, int64_t hi, int32_t *rows)
{
    int64_t k = 0, a, b;
    while (rle_next(it, t, lo, hi, &a, &b))
        for (int64_t r = a; r < b; r++) rows[k++] = (int32_t)(r - lo);
    return k;
}

bool cla_iter_run(ClaIter *it, int32_t t, int64_t n, int64_t *a, int64_t *b)
{
    int64_t lo = it->row;
    if (!rle_next(it, t, lo, lo + n, a, b)) return false;
    *a -= lo;
    *b -= lo;
    return true;
}

int64_t cla_iter_rows(ClaIter *it, int32_t t, int64_t n, int32_t *rows)
{
    int64_t lo = it->row;
    return it->g->enc == CLA_OLE ? ole_rows(it, t, lo, lo + n, rows) : rle_rows(it, t, lo, lo + n, rows);
}

void cla_iter_next(ClaIter *it, int64_t n, int32_t *codes)
{
    const ClaGroup *g = it->g;
    int64_t lo = it->row;
    switch (g->enc) {
    case CLA_DDC1:
        for (int64_t i = 0; i < n; i++) codes[i] = g->ix->c1[lo + i];
        break;
    case CLA_DDC2:
        for (int64_t i = 0; i < n; i++) codes[i] = g->ix->c2[lo + i];
        break;
    case CLA_CONST:
        for (int64_t i = 0; i < n; i++) codes[i] = 0;
        break;
    case CLA_OLE: case CLA_RLE:   /* (the whole range at once: the cost per tuple is per call) */
        for (int64_t i = 0; i < n; i++) codes[i] = -1;
        for (int32_t t = 0; t < g->ndict; t++) {
            if (g->enc == CLA_OLE) {
                ole_walk(it, t, lo, lo + n, OW_CODES, codes, NULL, 0, NULL, NULL);
                continue;
            }
            int64_t a, b;
            while (rle_next(it, t, lo, lo + n, &a, &b))
                for (int64_t r = a; r < b; r++) codes[r - lo] = t;
        }
        break;
    default:
        for (int64_t i = 0; i < n; i++) codes[i] = -1;
        break;
    }
    it->row = lo + n;
}

void cla_iter_free(ClaIter *it)
{
    free(it->pos);
    free(it->aux);
    free(it->cur);
    it->pos = it->aux = it->cur = NULL;
}

/* ---- decompression ---- */

/* A DDC group's rows [lo, lo+n) into out (ld values per row), the codes
 * read straight from the index; up to 4 columns with constant loop
 * bounds (one group per column, or a few co-coded, is the common case of
 * the windows the per-cell skeletons read). */
#define DDC_ROWS(CODE, NC)                                                     \
    if (contig) {                                                              \
        double *o = out + cols[0];                                             \
        for (int64_t i = 0; i < n; i++)                                        \
            memcpy(o + i * ld, g->dict + (int64_t)(CODE) * (NC), (size_t)(NC) * sizeof(double)); \
    } else                                                                     \
        for (int64_t i = 0; i < n; i++) {                                      \
            const double *tp = g->dict + (int64_t)(CODE) * (NC);              \
            double *o = out + i * ld;                                          \
            _Pragma("GCC unroll 4")                                            \
            for (int j = 0; j < (NC); j++) o[cols[j]] = tp[j];                 \
        }

/* Are g's columns one range (a tuple is then one short copy)? */
static bool cols_contig(const ClaGroup *g)
{
    return g->ncols > 0 && g->cols[g->ncols - 1] - g->cols[0] == g->ncols - 1;
}

static void ddc_rows(const ClaGroup *g, int64_t lo, int64_t n, double *out, int64_t ld)
{
    const int32_t *cols = g->cols;
    int nc = g->ncols;
    bool contig = cols_contig(g);   /* (columns ascend) */
    if (g->enc == CLA_DDC1) {
        const uint8_t *c = g->ix->c1 + lo;
        switch (nc) {
        case 1: DDC_ROWS(c[i], 1) break;
        case 2: DDC_ROWS(c[i], 2) break;
        case 3: DDC_ROWS(c[i], 3) break;
        case 4: DDC_ROWS(c[i], 4) break;
        default: DDC_ROWS(c[i], nc) break;
        }
    } else {
        const uint16_t *c = g->ix->c2 + lo;
        switch (nc) {
        case 1: DDC_ROWS(c[i], 1) break;
        case 2: DDC_ROWS(c[i], 2) break;
        default: DDC_ROWS(c[i], nc) break;
        }
    }
}

/* RLE: tuple t's runs among rows [lo, lo+n) written straight into out
 * (a run is a loop of stores of one tuple; no list of its rows). */
static void rle_fill(ClaIter *it, int32_t t, int64_t lo, int64_t n, double *out, int64_t ld)
{
    const ClaGroup *g = it->g;
    const double *tp = g->dict + (int64_t)t * g->ncols;
    int64_t a, b;
    while (rle_next(it, t, lo, lo + n, &a, &b)) {
        if (g->ncols == 1) {
            double v = tp[0], *o = out + g->cols[0];
            for (int64_t r = a; r < b; r++) o[(r - lo) * ld] = v;
            continue;
        }
        for (int64_t r = a; r < b; r++)
            for (int j = 0; j < g->ncols; j++) out[(r - lo) * ld + g->cols[j]] = tp[j];
    }
}

/* Zeros g's columns of n rows of out (groups with implicit zeros, when
 * the rows are not zeroed as a whole). */
static void zero_cols(const ClaGroup *g, int64_t n, double *out, int64_t ld)
{
    if (g->ncols == 1) {   /* (a memset call per cell cost more than the cells) */
        double *o = out + g->cols[0];
        for (int64_t i = 0; i < n; i++) o[i * ld] = 0;
        return;
    }
    for (int64_t i = 0; i < n; i++)
        for (int j = 0; j < g->ncols; j++) out[i * ld + g->cols[j]] = 0;
}

/* Writes the cells of group g for rows [lo, lo+n) into out (row-major, ld
 * values per row; zeroed: the rows are zero, else g writes its zeros
 * too); it is positioned at lo. */
static void group_rows(ClaIter *it, int64_t lo, int64_t n, int32_t *codes, double *out, int64_t ld, bool zeroed)
{
    const ClaGroup *g = it->g;
    bool implicit = g->enc == CLA_OLE || g->enc == CLA_RLE || g->enc == CLA_EMPTY ||
                    (g->enc == CLA_UNC && g->unc->sparse);
    if (!zeroed && implicit) zero_cols(g, n, out, ld);
    if (g->enc == CLA_UNC) {
        const MB *u = g->unc;
        for (int64_t i = 0; i < n; i++) {
            double *o = out + i * ld;
            if (u->sparse) {
                for (int64_t k = u->rp[lo + i]; k < u->rp[lo + i + 1]; k++) o[g->cols[u->ci[k]]] = u->v[k];
            } else {
                const double *r = u->d + (lo + i) * g->ncols;
                for (int j = 0; j < g->ncols; j++) o[g->cols[j]] = r[j];
            }
        }
        it->row += n;
        return;
    }
    if (g->enc == CLA_EMPTY) { it->row += n; return; }
    int nc = g->ncols;
    if (g->enc == CLA_RLE) {
        for (int32_t t = 0; t < g->ndict; t++) rle_fill(it, t, lo, n, out, ld);
        cla_iter_skip(it, n);
        return;
    }
    if (g->enc == CLA_OLE) {
        /* only the rows each tuple lists (n <= CLA_BLK; codes as rows) */
        for (int32_t t = 0; t < g->ndict; t++) {
            int64_t k = cla_iter_rows(it, t, n, codes);
            const double *tp = g->dict + (int64_t)t * nc;
            if (nc == 1) {   /* one store per listed row */
                double *o = out + g->cols[0];
                for (int64_t q = 0; q < k; q++) o[codes[q] * ld] = tp[0];
                continue;
            }
            for (int64_t q = 0; q < k; q++) {
                double *o = out + codes[q] * ld;
                for (int j = 0; j < nc; j++) o[g->cols[j]] = tp[j];
            }
        }
        cla_iter_skip(it, n);
        return;
    }
    if (g->enc == CLA_DDC1 || g->enc == CLA_DDC2) {
        ddc_rows(g, lo, n, out, ld);
        it->row += n;
        return;
    }
    cla_iter_next(it, n, codes);
    for (int64_t i = 0; i < n; i++) {
        if (codes[i] < 0) continue;
        const double *tp = g->dict + (int64_t)codes[i] * nc;
        double *o = out + i * ld;
        for (int j = 0; j < nc; j++) o[g->cols[j]] = tp[j];
    }
}

/* Iterators of every group of c at row rl, and a codes buffer. Thin
 * list groups (cursor_windows, thin[k]): their codes decoded a window of
 * up to W rows at a time into wc[k] (rows [wlo[k], wlo[k] + wlen[k]),
 * room for wcap[k]), the reads served from there. */
typedef struct RowCursor {
    ClaIter *its;
    int32_t *codes;
    int n;
    bool *thin;
    int32_t **wc;
    int64_t *wlo, *wlen, *wcap, W, rows, bound;   /* (bound: the reads end there, 0: unknown) */
} RowCursor;

static void cursor_free(RowCursor *rc)
{
    if (rc->its)
        for (int k = 0; k < rc->n; k++) cla_iter_free(&rc->its[k]);
    for (int k = 0; rc->wc && k < rc->n; k++) free(rc->wc[k]);
    free(rc->its);
    free(rc->codes);
    free(rc->thin);
    free(rc->wc);
    free(rc->wlo);
    free(rc->wlen);
    free(rc->wcap);
}

/* OLE/RLE groups whose tuples list fewer than 16 rows a read of blk
 * rows on average cost per tuple and read: a row reader over a co-coded
 * OLE group of 1000 tuples (10 binary columns at 20% non-zeros) paid 1000
 * list steps every 2048 rows, and l2svm's line search under
 * sysds.compressed.linalg=true, 201 fused aggregates over X's rows, took
 * 0.6-1 s against 0.02 s uncompressed. Those groups are decoded a window
 * of up to 65536 rows at a time (the codes of all such groups at most
 * 8 MB; the buffers taken at the first read, as long as the reads go).
 * False when out of memory. */
#define WIN_CODES (1 << 21)

static bool cursor_windows(RowCursor *rc, const MB *m, int64_t blk)
{
    const struct CMB *c = m->cmb;
    size_t ng = (size_t)c->ngroups + 1;
    int thin = 0;
    if (!(rc->thin = br_calloc(ng, sizeof(bool)))) return false;
    for (int k = 0; k < c->ngroups; k++) {
        const ClaGroup *g = c->groups[k];
        if ((g->enc != CLA_OLE && g->enc != CLA_RLE) || g->ndict == 0) continue;
        int64_t listed = 0;
        for (int32_t t = 0; t < g->ndict; t++) listed += g->counts[t];
        thin += rc->thin[k] = 16.0 * (double)g->ndict * (double)m->rows > (double)blk * (double)(listed > 0 ? listed : 1);
    }
    if (!thin) return true;
    rc->rows = m->rows;
    rc->W = BR_MAX(blk, BR_MIN(65536, WIN_CODES / thin));
    rc->wc = br_calloc(ng, sizeof(int32_t *));
    rc->wlo = br_calloc(ng, sizeof(int64_t));
    rc->wlen = br_calloc(ng, sizeof(int64_t));
    rc->wcap = br_calloc(ng, sizeof(int64_t));
    return rc->wc && rc->wlo && rc->wlen && rc->wcap;
}

/* Rows [lo, lo+n) of a thin group k from its window (refilled from the
 * group's iterator when the rows pass it: the reads are in order). Out
 * of memory for a window, the group is read as the others are from then
 * on (false). */
static bool window_rows(RowCursor *rc, int k, int64_t lo, int64_t n, double *out, int64_t ld, bool zeroed)
{
    ClaIter *it = &rc->its[k];
    const ClaGroup *g = it->g;
    int64_t done = 0;
    while (done < n) {
        int64_t r = lo + done;
        if (r < rc->wlo[k] || r >= rc->wlo[k] + rc->wlen[k]) {
            int64_t end = rc->bound >= r + n - done ? rc->bound : rc->rows;
            int64_t len = BR_MIN(rc->W, end - r);
            if (len > rc->wcap[k]) {
                int32_t *b = br_realloc(rc->wc[k], (size_t)len * sizeof(int32_t));
                if (!b) {
                    it->row = r;
                    rc->thin[k] = false;
                    group_rows(it, r, n - done, rc->codes, out + done * ld, ld, zeroed);
                    return false;
                }
                rc->wc[k] = b;
                rc->wcap[k] = len;
            }
            it->row = r;   /* (where the last window ended) */
            cla_iter_next(it, len, rc->wc[k]);
            rc->wlo[k] = r;
            rc->wlen[k] = len;
        }
        int64_t len = BR_MIN(n - done, rc->wlo[k] + rc->wlen[k] - r);
        if (!zeroed) zero_cols(g, len, out + done * ld, ld);
        const int32_t *cd = rc->wc[k] + (r - rc->wlo[k]);
        for (int64_t i = 0; i < len; i++) {
            if (cd[i] < 0) continue;
            const double *tp = g->dict + (int64_t)cd[i] * g->ncols;
            double *o = out + (done + i) * ld;
            for (int j = 0; j < g->ncols; j++) o[g->cols[j]] = tp[j];
        }
        done += len;
    }
    return true;
}

static bool cursor_init(RowCursor *rc, const struct CMB *c, int64_t rl)
{
    rc->n = c->ngroups;
    rc->its = br_calloc((size_t)c->ngroups + 1, sizeof(ClaIter));
    rc->codes = br_malloc(CLA_BLK * sizeof(int32_t));
    if (!rc->its || !rc->codes) { cursor_free(rc); return false; }
    for (int k = 0; k < c->ngroups; k++)
        if (!cla_iter_init(&rc->its[k], c->groups[k], rl)) { cursor_free(rc); return false; }
    return true;
}

/* One-column DDC1 groups (2 to DDC1_RUN of them, wherever they are in
 * the group list: the groups' columns are disjoint) written in one pass
 * over the rows: each row's cells of those groups stored together (a
 * pass per group wrote one strided cell per row and paid the loop per
 * cell). sel: their iterators. */
#define DDC1_RUN 8
#define DDC1_RUN_ROWS(M)                                                       \
    for (int64_t i = 0; i < n; i++) {                                          \
        double *o = out + i * ld;                                              \
        _Pragma("GCC unroll 8")                                                \
        for (int r = 0; r < (M); r++) o[col[r]] = dv[r][cd[r][i]];             \
    }

static void ddc1_run_rows(ClaIter *const *sel, int m, int64_t lo, int64_t n, double *out, int64_t ld)
{
    const uint8_t *cd[DDC1_RUN];
    const double *dv[DDC1_RUN];
    int32_t col[DDC1_RUN];
    for (int r = 0; r < m; r++) {
        const ClaGroup *g = sel[r]->g;
        cd[r] = g->ix->c1 + lo;
        dv[r] = g->dict;
        col[r] = g->cols[0];
        sel[r]->row += n;
    }
    CLA_WIDTHS(m, DDC1_RUN_ROWS)
}

static bool ddc1_one(const ClaGroup *g) { return g->enc == CLA_DDC1 && g->ncols == 1; }

/* Rows [lo, lo+n) (n <= CLA_BLK) of every group into out (zeroed: the
 * rows are zero; else every group writes all its cells). The one-column
 * DDC1 groups go by runs of up to DDC1_RUN, the others one by one. */
static void cursor_rows(RowCursor *rc, int64_t lo, int64_t n, double *out, int64_t ld, bool zeroed)
{
    ClaIter *sel[DDC1_RUN];
    int m = 0, left = 0;
    for (int k = 0; k < rc->n; k++) left += ddc1_one(rc->its[k].g);
    for (int k = 0; k < rc->n; k++) {
        if (rc->thin && rc->thin[k] && rc->wc) {
            window_rows(rc, k, lo, n, out, ld, zeroed);
            continue;
        }
        if (!ddc1_one(rc->its[k].g) || left < 2) {
            group_rows(&rc->its[k], lo, n, rc->codes, out, ld, zeroed);
            continue;
        }
        sel[m++] = &rc->its[k];
        left--;
        if (m == DDC1_RUN || left == 0 || (left < 2 && m >= 2)) {
            ddc1_run_rows(sel, m, lo, n, out, ld);
            m = 0;
        }
    }
    if (m == 1) group_rows(sel[0], lo, n, rc->codes, out, ld, zeroed);
    else if (m > 1) ddc1_run_rows(sel, m, lo, n, out, ld);
}

/* Rows per pass over the groups when decompressing dense rows: about 32
 * KB of them, so that the groups' passes (a column each, strided) stay in
 * L1; unless OLE/RLE groups have so many tuples that their per-tuple
 * steps per pass would cost more than the rows. */
static int64_t pass_rows(const MB *m)
{
    int64_t b = m->cols > 0 ? 4096 / m->cols : CLA_BLK;
    b = b < 16 ? 16 : b > CLA_BLK ? CLA_BLK : b;
    for (int k = 0; k < m->cmb->ngroups; k++) {
        const ClaGroup *g = m->cmb->groups[k];
        if ((g->enc == CLA_OLE || g->enc == CLA_RLE) && 4 * (int64_t)g->ndict > b) return CLA_BLK;
    }
    return b;
}

/* full: the groups cover every column, and each writes every cell of its
 * rows (groups with implicit zeros zero their own columns first), so the
 * rows need no zeroing as a whole (a memset of every read block cost
 * about a third of a copy's time). */
struct ClaRows { RowCursor rc; int64_t row; int64_t cols; bool full; int64_t blk; };

ClaRows *cla_rows_open(const MB *m, int64_t rl)
{
    ClaRows *r = br_calloc(1, sizeof *r);
    if (!r) return NULL;
    if (!cursor_init(&r->rc, m->cmb, rl)) { free(r); return NULL; }
    r->row = rl;
    r->cols = m->cols;
    int64_t covered = 0;   /* (groups hold disjoint columns) */
    for (int k = 0; k < m->cmb->ngroups; k++) covered += m->cmb->groups[k]->ncols;
    r->full = covered == m->cols;
    r->blk = pass_rows(m);
    if (!cursor_windows(&r->rc, m, r->blk)) { cla_rows_close(r); return NULL; }
    return r;
}

void cla_rows_read(ClaRows *r, int64_t n, double *out)
{
    if (!r->full) memset(out, 0, (size_t)(n * r->cols) * sizeof(double));
    for (int64_t lo = 0; lo < n; lo += r->blk) {
        int64_t len = n - lo < r->blk ? n - lo : r->blk;
        cursor_rows(&r->rc, r->row + lo, len, out + lo * r->cols, r->cols, !r->full);
    }
    r->row += n;
}

void cla_rows_bound(ClaRows *r, int64_t ru) { r->rc.bound = ru; }

void cla_rows_close(ClaRows *r)
{
    if (!r) return;
    cursor_free(&r->rc);
    free(r);
}

bool cla_win_init(ClaWin *w, const MB *m, int64_t cap)
{
    memset(w, 0, sizeof *w);
    w->m = m;
    w->cap = cap < 1 ? 1 : cap;
    w->buf = br_malloc((size_t)(w->cap * (m->cols > 0 ? m->cols : 1)) * sizeof(double));
    return w->buf != NULL;
}

const double *cla_win_row(ClaWin *w, int64_t i, int64_t lim)
{
    if (i < w->lo || i >= w->hi) {
        if (w->rd && w->rd->row != i) { cla_rows_close(w->rd); w->rd = NULL; }
        if (!w->rd && !(w->rd = cla_rows_open(w->m, i))) return NULL;
        if (lim > w->m->rows) lim = w->m->rows;
        cla_rows_bound(w->rd, lim);
        int64_t n = lim - i < w->cap ? lim - i : w->cap;
        if (n < 1) n = 1;
        cla_rows_read(w->rd, n, w->buf);
        w->lo = i;
        w->hi = i + n;
    }
    return w->buf + (i - w->lo) * w->m->cols;
}

void cla_win_free(ClaWin *w)
{
    cla_rows_close(w->rd);
    free(w->buf);
    memset(w, 0, sizeof *w);
}

bool cmb_has_nonfinite(const MB *m)
{
    const struct CMB *c = m->cmb;
    for (int k = 0; k < c->ngroups; k++) {
        const ClaGroup *g = c->groups[k];
        if (g->enc == CLA_UNC) {
            if (mb_has_nonfinite(g->unc)) return true;
            continue;
        }
        for (int64_t q = 0; q < (int64_t)g->ndict * g->ncols; q++)
            if (!isfinite(g->dict[q])) return true;
    }
    return false;
}

/* The rows of thread tid of nt over [rl, ru), aligned to CLA_BLK. */
static void thread_range(int64_t rl, int64_t ru, int tid, int nt, int64_t *a, int64_t *b)
{
    int64_t nb = (ru - rl + CLA_BLK - 1) / CLA_BLK;
    *a = rl + nb * tid / nt * CLA_BLK;
    *b = rl + nb * (tid + 1) / nt * CLA_BLK;
    if (*a > ru) *a = ru;
    if (*b > ru) *b = ru;
}

/* Dense decompression of rows [rl, ru) into r (ru-rl rows, zeroed). */
static bool dec_dense(const MB *m, int64_t rl, int64_t ru, MB *r)
{
    int nt = (ru - rl) * m->cols >= BR_PAR_MIN ? br_threads() : 1;
    bool ok = true;
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        int tid = 0, n = 1;
#ifdef _OPENMP
        tid = omp_get_thread_num();
        n = omp_get_num_threads();
#endif
        int64_t a, b;
        thread_range(rl, ru, tid, n, &a, &b);
        RowCursor rc = {0};
        if (a < b && !cursor_init(&rc, m->cmb, a)) {
#pragma omp atomic write
            ok = false;
        } else if (a < b) {
            int64_t blk = pass_rows(m);
            for (int64_t lo = a; lo < b; lo += blk) {
                int64_t len = b - lo < blk ? b - lo : blk;
                cursor_rows(&rc, lo, len, r->d + (lo - rl) * m->cols, m->cols, true);
            }
            cursor_free(&rc);
        }
    }
    return ok;
}

/* Sparse decompression without dense rows: work in O(non-zeros + rows x
 * groups). A first pass counts each row's non-zeros (per tuple, its
 * non-zero values; OLE/RLE rows only where a tuple is listed), a second
 * appends each group's non-zeros to its rows at their cursors. A group's
 * columns ascend; when the groups, taken by their first column, also
 * cover disjoint column ranges (the usual case), appending them in that
 * order gives sorted rows; otherwise (co-coded groups interleave) each
 * row is sorted after its block. */

/* The non-zeros of g's dictionary by tuple, as CSR over the tuples
 * (tuple t's at [ptr[t], ptr[t+1]), output columns ascending): a row's
 * entries are copied without passing its tuple's zeros (one-hot groups of
 * 50 columns, one non-zero a tuple, took 50 compares a row and group:
 * decompression of one-hot data ran at 0.03 of a copy). */
typedef struct TupNz { int32_t *ptr, *col; double *val; } TupNz;

static void tuple_nz_free(TupNz *z) { free(z->ptr), free(z->col), free(z->val); }

static bool tuple_nz(const ClaGroup *g, TupNz *z)
{
    int64_t nz = 0, cells = (int64_t)g->ndict * g->ncols;
    for (int64_t i = 0; i < cells; i++) nz += g->dict[i] != 0;
    z->ptr = br_malloc(((size_t)g->ndict + 1) * sizeof(int32_t));
    z->col = br_malloc(((size_t)nz + 1) * sizeof(int32_t));
    z->val = br_malloc(((size_t)nz + 1) * sizeof(double));
    if (!z->ptr || !z->col || !z->val) return false;
    int32_t k = 0;
    for (int32_t t = 0; t < g->ndict; t++) {
        z->ptr[t] = k;
        const double *tp = g->dict + (int64_t)t * g->ncols;
        for (int j = 0; j < g->ncols; j++)
            if (tp[j] != 0) z->col[k] = g->cols[j], z->val[k++] = tp[j];
    }
    z->ptr[g->ndict] = k;
    return true;
}

/* One tuple's non-zeros at row position *at of the output. */
static inline void put_tuple(const TupNz *z, int32_t t, int64_t *at, MB *r)
{
    int64_t k = *at;
    for (int32_t p = z->ptr[t]; p < z->ptr[t + 1]; p++, k++) r->ci[k] = z->col[p], r->v[k] = z->val[p];
    *at = k;
}

/* Rows [lo, lo+n) (n <= CLA_BLK) of group g: adds each row's non-zeros to
 * cnt[i] (fill false) or appends them at at[i] (fill true). */
static void group_sparse(ClaIter *it, const TupNz *z, int64_t lo, int64_t n, int32_t *codes, int64_t *at,
                         bool fill, MB *r)
{
    const int32_t *ptr = z->ptr;
    const ClaGroup *g = it->g;
    if (g->enc == CLA_EMPTY) { it->row += n; return; }
    if (g->enc == CLA_UNC) {
        const MB *u = g->unc;
        for (int64_t i = 0; i < n; i++) {
            const double *row = u->sparse ? u->v + u->rp[lo + i] : u->d + (lo + i) * g->ncols;
            const int32_t *ci = u->sparse ? u->ci + u->rp[lo + i] : NULL;
            int64_t len = u->sparse ? u->rp[lo + i + 1] - u->rp[lo + i] : g->ncols;
            for (int64_t p = 0; p < len; p++) {
                if (row[p] == 0) continue;   /* (a sparse block's stored zeros too) */
                if (fill) { r->ci[at[i]] = g->cols[ci ? ci[p] : p]; r->v[at[i]] = row[p]; }
                at[i]++;
            }
        }
        it->row += n;
        return;
    }
    if (g->enc == CLA_OLE || g->enc == CLA_RLE) {
        for (int32_t t = 0; t < g->ndict; t++) {
            int64_t k = cla_iter_rows(it, t, n, codes);   /* (also keeps the iterator in step) */
            int32_t nz = ptr[t + 1] - ptr[t];
            if (!nz) continue;
            for (int64_t q = 0; q < k; q++) {
                if (fill) put_tuple(z, t, &at[codes[q]], r);
                else at[codes[q]] += nz;
            }
        }
        cla_iter_skip(it, n);
        return;
    }
    cla_iter_next(it, n, codes);
    for (int64_t i = 0; i < n; i++) {
        if (codes[i] < 0) continue;
        if (fill) put_tuple(z, codes[i], &at[i], r);
        else at[i] += ptr[codes[i] + 1] - ptr[codes[i]];
    }
}

/* The groups in the order of their first columns (ord), and whether
 * appending them in that order leaves rows sorted. */
static int32_t first_col(const ClaGroup *g) { return g->ncols ? g->cols[0] : INT32_MAX; }

static bool group_order(const struct CMB *c, int *ord)
{
    for (int k = 0; k < c->ngroups; k++) ord[k] = k;
    for (int k = 1; k < c->ngroups; k++) {   /* insertion: few groups */
        int x = ord[k], j = k;
        for (; j > 0 && first_col(c->groups[ord[j - 1]]) > first_col(c->groups[x]); j--) ord[j] = ord[j - 1];
        ord[j] = x;
    }
    int32_t last = -1;   /* the last column of the groups so far (groups without columns add none) */
    for (int k = 0; k < c->ngroups; k++) {
        const ClaGroup *g = c->groups[ord[k]];
        if (!g->ncols) continue;
        if (g->cols[0] < last) return false;
        last = g->cols[g->ncols - 1];
    }
    return true;
}

static bool dec_sparse(const MB *m, int64_t rl, int64_t ru, MB *r)
{
    const struct CMB *c = m->cmb;
    int64_t nrow = ru - rl;
    int ng = c->ngroups;
    int *ord = br_malloc((size_t)ng * sizeof *ord + 1);
    TupNz *tnz = br_calloc((size_t)ng + 1, sizeof *tnz);
    bool ok = ord && tnz;
    for (int k = 0; ok && k < ng; k++)
        if (c->groups[k]->enc != CLA_UNC && !tuple_nz(c->groups[k], &tnz[k])) ok = false;
    bool sorted = ok && group_order(c, ord);
    int nt = nrow * m->cols >= BR_PAR_MIN ? br_threads() : 1;
    for (int pass = 0; pass < 2 && ok; pass++) {
#pragma omp parallel num_threads(nt) if (nt > 1)
        {
            int tid = 0, n = 1;
#ifdef _OPENMP
            tid = omp_get_thread_num();
            n = omp_get_num_threads();
#endif
            int64_t a, b;
            thread_range(rl, ru, tid, n, &a, &b);
            RowCursor rc = {0};
            int64_t *at = br_malloc(CLA_BLK * sizeof *at);
            /* room for a row's entries, to sort them (each group's ascend already) */
            int32_t *tc = sorted ? NULL : br_malloc((size_t)(m->cols + 1) * sizeof *tc);
            double *tw = sorted ? NULL : br_malloc((size_t)(m->cols + 1) * sizeof *tw);
            if (a < b && (!at || (!sorted && (!tc || !tw)) || !cursor_init(&rc, c, a))) {
#pragma omp atomic write
                ok = false;
            } else if (a < b) {
                for (int64_t lo = a; lo < b; lo += CLA_BLK) {
                    int64_t len = b - lo < CLA_BLK ? b - lo : CLA_BLK, o = lo - rl;
                    for (int64_t i = 0; i < len; i++) at[i] = pass ? r->rp[o + i] : 0;
                    for (int q = 0; q < ng; q++)
                        group_sparse(&rc.its[ord[q]], &tnz[ord[q]], lo, len, rc.codes, at, pass == 1, r);
                    for (int64_t i = 0; i < len; i++) {
                        if (pass == 0) r->rp[o + i + 1] = at[i];
                        else if (!sorted)
                            mb_sort_entries(r->ci + r->rp[o + i], r->v + r->rp[o + i], at[i] - r->rp[o + i], tc, tw);
                    }
                }
                cursor_free(&rc);
            }
            free(at);
            free(tc);
            free(tw);
        }
        if (pass == 0)
            for (int64_t i = 0; i < nrow; i++) r->rp[i + 1] += r->rp[i];
        if (pass == 0 && ok && mb_sp_reserve(r, r->rp[nrow] + 1, &(BrErr){0})) ok = false;
    }
    if (ok) mb_sp_done(r, r->rp[nrow]);
    for (int k = 0; tnz && k < ng; k++) tuple_nz_free(&tnz[k]);
    free(tnz);
    free(ord);
    return ok;
}

/* The finiteness flag of r, rows [rl, ru) of compressed m decompressed
 * (mb.h): the dictionaries decide. Finite when every group's dictionary
 * values (an uncompressed group: its block) are finite; non-finite when
 * r is all of m and a tuple that some row holds (counts) has a NaN or
 * an infinity (an uncompressed group: its block has one); else unknown
 * (a range of rows may miss the tuple). */
static void dec_fin(const MB *m, int64_t rl, int64_t ru, MB *r)
{
    const struct CMB *c = m->cmb;
    bool finite = true, held = false;
    for (int k = 0; k < c->ngroups; k++) {
        const ClaGroup *g = c->groups[k];
        if (g->enc == CLA_EMPTY) continue;
        if (g->enc == CLA_UNC) {
            bool nf = mb_has_nonfinite(g->unc);
            finite &= !nf;
            held |= nf;
            continue;
        }
        for (int32_t t = 0; t < g->ndict; t++)
            for (int j = 0; j < g->ncols; j++)
                if (!(fabs(g->dict[(size_t)t * g->ncols + j]) <= DBL_MAX)) {
                    finite = false;
                    held |= g->counts[t] > 0;
                }
    }
    if (finite) mb_fin_set(r, false);
    else if (held && rl == 0 && ru == m->rows) mb_fin_set(r, true);
}

MB *cmb_decompress_rows(const MB *m, int64_t rl, int64_t ru, BrErr *e)
{
    assert(m->cmb && rl >= 0 && rl <= ru && ru <= m->rows);
    int64_t nrow = ru - rl;
    /* the format by the whole block's sparsity (the range's nnz is known
     * only after decompression) */
    int64_t enz = m->rows ? (int64_t)((double)m->nnz * (double)nrow / (double)m->rows) : 0;
    bool sparse = mb_should_be_sparse(nrow, m->cols, enz);
    MB *r = sparse ? mb_sp_alloc(nrow, m->cols, 1, e) : mb_dense(nrow, m->cols, e);
    if (!r) return NULL;
    if (!(sparse ? dec_sparse(m, rl, ru, r) : dec_dense(m, rl, ru, r))) return mb_oom(r, e);
    if (!sparse) {
        if (rl == 0 && ru == m->rows) r->nnz = m->nnz;
        else mb_recount_nnz(r);
    }
    r = mb_finish(r, e);
    dec_fin(m, rl, ru, r);
    return r;
}

MB *cmb_decompress(const MB *m, BrErr *e)
{
    return cmb_decompress_rows(m, 0, m->rows, e);
}
