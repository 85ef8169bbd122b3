/* reorg.c: reorganization kernels: t, rev, diag, reshape, lower.tri and
 * upper.tri, order, removeEmpty, replace, outer and matrix() from a list
 * of values. See reorg.h for the contracts. */
#include "reorg.h"
#include "leaf.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ t() */

#define TILE 32
/* Outputs of at least this many cells are written with non-temporal
 * stores (they would only evict the cache; no read-for-ownership). */
#define TR_NT_CELLS ((int64_t)1 << 22)

/* c (n x m) = t(a (m x n)), dense, in TILE x TILE tiles (reorg_leaf.c:
 * 8 x 8 register transposes with AVX2); tiles in parallel. */
static void dense_transpose(const double *a, double *c, int64_t m, int64_t n)
{
    if (m == 1 || n == 1) {
        memcpy(c, a, (size_t)(m * n) * sizeof(double));
        return;
    }
    const KReorgLeaf *leaf = k_leaves(k_isa())->reorg;
    bool nt = m * n >= TR_NT_CELLS && m % 4 == 0 && ((uintptr_t)c & 31) == 0;
    int64_t nbi = (m + TILE - 1) / TILE, nbj = (n + TILE - 1) / TILE;
    #pragma omp parallel for collapse(2) schedule(static) \
        num_threads(br_threads()) if (br_par((double)(m * n)))
    for (int64_t bi = 0; bi < nbi; bi++)
        for (int64_t bj = 0; bj < nbj; bj++) {
            int64_t i0 = bi * TILE, i1 = BR_MIN(i0 + TILE, m);
            int64_t j0 = bj * TILE, j1 = BR_MIN(j0 + TILE, n);
            leaf->transpose_tile(a, c, m, n, i0, i1, j0, j1, nt);
        }
}

/* Counting transpose of a CSR block into a new CSR block (rows sorted by
 * construction: rows of a are visited in order). Caller owns the result. */
static MB *sparse_transpose(const MB *a, BrErr *e)
{
    MB *c = mb_sp_alloc(a->cols, a->rows, a->nnz, e);
    if (!c) return NULL;
    int64_t nnz = a->rp[a->rows];
    for (int64_t k = 0; k < nnz; k++) c->rp[a->ci[k] + 1]++;
    for (int64_t j = 0; j < a->cols; j++) c->rp[j + 1] += c->rp[j];
    int64_t *pos = br_malloc((size_t)(a->cols + 1) * sizeof(int64_t));
    if (!pos) return mb_oom(c, e);
    memcpy(pos, c->rp, (size_t)(a->cols + 1) * sizeof(int64_t));
    for (int64_t i = 0; i < a->rows; i++)
        for (int64_t k = a->rp[i]; k < a->rp[i + 1]; k++) {
            int64_t p = pos[a->ci[k]]++;
            c->ci[p] = (int32_t)i;
            c->v[p] = a->v[k];
        }
    free(pos);
    mb_sp_done(c, nnz);
    return c;
}

MB *k_transpose(const MB *a, BrErr *e)
{
    assert(mb_valid(a, false));
    if (a->sparse) return mb_finish(sparse_transpose(a, e), e);
    MB *c = mb_dense_uninit(a->cols, a->rows, e);
    if (!c) return NULL;
    if (a->rows > 0 && a->cols > 0) dense_transpose(a->d, c->d, a->rows, a->cols);
    c->nnz = a->nnz;
    return mb_finish(c, e);
}

/* ---------------------------------------------------------------- rev() */

static int64_t kept_made, kept_reused;

void k_transpose_kept_counts(int64_t *made, int64_t *reused)
{
    *made = __atomic_load_n(&kept_made, __ATOMIC_RELAXED);
    *reused = __atomic_load_n(&kept_reused, __ATOMIC_RELAXED);
}

MB *k_transpose_kept(const MB *a, BrErr *e)
{
    if (!a->sparse || a->cmb || a->ext || __atomic_load_n(&a->dev, __ATOMIC_ACQUIRE)) return k_transpose(a, e);
    MB *t = __atomic_load_n(&a->t_copy, __ATOMIC_ACQUIRE);
    if (t) {
        assert(t->rows == a->cols && t->cols == a->rows && t->nnz == a->nnz);
        __atomic_add_fetch(&kept_reused, 1, __ATOMIC_RELAXED);
        return mb_retain(t);
    }
    if (!(t = k_transpose(a, e))) return NULL;
    __atomic_add_fetch(&kept_made, 1, __ATOMIC_RELAXED);
    /* (two callers at once, parfor workers over one W: the first one's
     * stays, the other's is theirs alone) */
    MB *was = NULL;
    if (__atomic_compare_exchange_n(&((MB *)a)->t_copy, &was, t, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        mb_retain(t);
    return t;
}

MB *k_rev(const MB *a, BrErr *e)
{
    assert(mb_valid(a, false));
    int64_t m = a->rows, n = a->cols;
    if (!a->sparse) {
        MB *c = mb_dense_uninit(m, n, e);
        if (!c) return NULL;
        #pragma omp parallel for schedule(static) num_threads(br_threads()) \
            if (br_par((double)(m * n)))
        for (int64_t i = 0; i < m; i++)
            if (n > 0) memcpy(c->d + i * n, a->d + (m - 1 - i) * n, (size_t)n * sizeof(double));
        c->nnz = a->nnz;
        return mb_finish(c, e);
    }
    MB *c = mb_sp_alloc(m, n, a->nnz, e);
    if (!c) return NULL;
    for (int64_t i = 0; i < m; i++)
        c->rp[i + 1] = c->rp[i] + (a->rp[m - i] - a->rp[m - 1 - i]);
    #pragma omp parallel for schedule(static) num_threads(br_threads()) \
        if (br_par((double)a->nnz))
    for (int64_t i = 0; i < m; i++) {
        int64_t s = a->rp[m - 1 - i], len = a->rp[m - i] - s;
        memcpy(c->ci + c->rp[i], a->ci + s, (size_t)len * sizeof(int32_t));
        memcpy(c->v + c->rp[i], a->v + s, (size_t)len * sizeof(double));
    }
    mb_sp_done(c, c->rp[m]);
    return mb_finish(c, e);
}

/* --------------------------------------------------------------- diag() */

MB *k_diag(const MB *a, BrErr *e)
{
    assert(mb_valid(a, false));
    if (a->rows == 1 && a->cols == 1) return mb_finish(mb_copy(a, e), e);
    if (a->cols == 1) {
        int64_t n = a->rows;
        MB *c = mb_sp_alloc(n, n, a->nnz, e);
        if (!c) return NULL;
        int64_t k = 0;
        for (int64_t i = 0; i < n; i++) {
            double v = a->sparse ? (a->rp[i + 1] > a->rp[i] ? a->v[a->rp[i]] : 0)
                                 : a->d[i];
            if (v != 0) { c->ci[k] = (int32_t)i; c->v[k] = v; k++; }
            c->rp[i + 1] = k;
        }
        mb_sp_done(c, k);
        return mb_finish(c, e);
    }
    if (a->rows == a->cols) {
        int64_t n = a->rows, nnz = 0;
        MB *c = mb_dense(n, 1, e);
        if (!c) return NULL;
        for (int64_t i = 0; i < n; i++) {
            c->d[i] = a->sparse ? mb_get(a, i, i) : a->d[i * n + i];
            nnz += c->d[i] != 0;
        }
        c->nnz = nnz;
        return mb_finish(c, e);
    }
    br_err(e, BR_EDIM, "diag: dimension mismatch: expected a column vector or "
           "a square matrix, got a %lldx%lld matrix",
           (long long)a->rows, (long long)a->cols);
    return NULL;
}

/* ------------------------------------------------------------ reshape */

MB *k_reshape(const MB *a, int64_t rows, int64_t cols, bool byrow, BrErr *e)
{
    assert(mb_valid(a, false));
    int64_t cells, want;
    if (rows < 0 || cols < 0 ||
        __builtin_mul_overflow(a->rows, a->cols, &cells) ||
        __builtin_mul_overflow(rows, cols, &want) || cells != want) {
        br_err(e, BR_EDIM, "reshape: dimension mismatch: cannot reshape a "
               "%lldx%lld matrix into %lldx%lld", (long long)a->rows,
               (long long)a->cols, (long long)rows, (long long)cols);
        return NULL;
    }
    if (rows == a->rows && cols == a->cols) return mb_finish(mb_copy(a, e), e);
    if (!a->sparse) {
        MB *c = mb_dense_uninit(rows, cols, e);
        if (!c) return NULL;
        if (byrow) {
            if (cells) memcpy(c->d, a->d, (size_t)cells * sizeof(double));
        } else {
            int64_t ar = a->rows, ac = a->cols;
            #pragma omp parallel for schedule(static) num_threads(br_threads()) \
                if (br_par((double)cells))
            for (int64_t r = 0; r < rows; r++)
                for (int64_t q = 0; q < cols; q++) {
                    int64_t k = q * rows + r;       /* column-major position */
                    c->d[r * cols + q] = a->d[(k % ar) * ac + k / ar];
                }
        }
        c->nnz = a->nnz;
        return mb_finish(c, e);
    }
    MB *c = mb_sp_alloc(rows, cols, a->nnz, e);
    if (!c) return NULL;
    int64_t p = 0;
    if (byrow) {
        /* row-major order is kept, so entries stay sorted */
        for (int64_t i = 0; i < a->rows; i++)
            for (int64_t k = a->rp[i]; k < a->rp[i + 1]; k++) {
                int64_t lin = i * a->cols + a->ci[k];
                c->rp[lin / cols + 1]++;
                c->ci[p] = (int32_t)(lin % cols);
                c->v[p++] = a->v[k];
            }
        for (int64_t r = 0; r < rows; r++) c->rp[r + 1] += c->rp[r];
    } else {
        /* visit a column-major (rows of t(a)); column-major positions then
         * ascend, so each output row receives ascending columns */
        MB *t = sparse_transpose(a, e);
        if (!t) return mb_oom(c, e);
        for (int64_t j = 0; j < t->rows; j++)
            for (int64_t k = t->rp[j]; k < t->rp[j + 1]; k++)
                c->rp[(j * a->rows + t->ci[k]) % rows + 1]++;
        for (int64_t r = 0; r < rows; r++) c->rp[r + 1] += c->rp[r];
        int64_t *pos = br_malloc((size_t)(rows + 1) * sizeof(int64_t));
        if (!pos) { mb_release(t); return mb_oom(c, e); }
        memcpy(pos, c->rp, (size_t)(rows + 1) * sizeof(int64_t));
        for (int64_t j = 0; j < t->rows; j++)
            for (int64_t k = t->rp[j]; k < t->rp[j + 1]; k++) {
                int64_t lin = j * a->rows + t->ci[k];
                int64_t q = pos[lin % rows]++;
                c->ci[q] = (int32_t)(lin / rows);
                c->v[q] = t->v[k];
            }
        free(pos);
        mb_release(t);
    }
    mb_sp_done(c, a->nnz);
    return mb_finish(c, e);
}

/* ------------------------------------------------- lower.tri/upper.tri */

/* Column range [*j0, *j1) of row i inside the triangle. */
static void tri_range(int64_t i, int64_t cols, bool lower, bool diag,
                      int64_t *j0, int64_t *j1)
{
    if (lower) { *j0 = 0; *j1 = BR_MIN(cols, i + (diag ? 1 : 0)); }
    else { *j0 = BR_MIN(cols, i + (diag ? 0 : 1)); *j1 = cols; }
}

MB *k_tri(const MB *a, bool lower, bool diag, bool values, BrErr *e)
{
    int64_t m = a->rows, n = a->cols;
    if (a->sparse && values) {
        MB *c = mb_sp_alloc(m, n, a->nnz, e);
        if (!c) return NULL;
        int64_t p = 0;
        for (int64_t i = 0; i < m; i++) {
            int64_t j0, j1;
            tri_range(i, n, lower, diag, &j0, &j1);
            for (int64_t k = a->rp[i]; k < a->rp[i + 1]; k++)
                if (a->ci[k] >= j0 && a->ci[k] < j1) {
                    c->ci[p] = a->ci[k]; c->v[p++] = a->v[k];
                }
            c->rp[i + 1] = p;
        }
        mb_sp_done(c, p);
        return mb_finish(c, e);
    }
    MB *c = mb_dense(m, n, e);
    if (!c) return NULL;
    int64_t nnz = 0;
    #pragma omp parallel for schedule(static) reduction(+:nnz) \
        num_threads(br_threads()) if (br_par((double)(m * n)))
    for (int64_t i = 0; i < m; i++) {
        int64_t j0, j1;
        tri_range(i, n, lower, diag, &j0, &j1);
        double *cr = c->d + i * n;
        if (!values) {
            for (int64_t j = j0; j < j1; j++) cr[j] = 1;
            nnz += j1 > j0 ? j1 - j0 : 0;
        } else if (!a->sparse) {
            const double *ar = a->d + i * n;
            for (int64_t j = j0; j < j1; j++) { cr[j] = ar[j]; nnz += ar[j] != 0; }
        }
    }
    c->nnz = nnz;
    return mb_finish(c, e);
}

/* -------------------------------------------------------------- order */

typedef struct { double key; int64_t idx; } KeyIdx;

/* x strictly before y: ascending or descending, NaN last either way. */
static inline bool key_before(double x, double y, bool desc)
{
    if (isnan(x)) return false;
    if (isnan(y)) return true;
    return desc ? x > y : x < y;
}

#define RUN 32

/* Stable sort of n key/index pairs: insertion-sorted runs of RUN, then
 * bottom-up merge passes; runs and merges of one pass run in parallel.
 * Returns the array holding the result (s or tmp). */
static KeyIdx *stable_sort(KeyIdx *s, KeyIdx *tmp, int64_t n, bool desc)
{
    int64_t nruns = (n + RUN - 1) / RUN;
    #pragma omp parallel for schedule(static) num_threads(br_threads()) \
        if (br_par(4.0 * (double)n))
    for (int64_t r = 0; r < nruns; r++) {
        int64_t lo = r * RUN, hi = BR_MIN(lo + RUN, n);
        for (int64_t i = lo + 1; i < hi; i++) {
            KeyIdx x = s[i];
            int64_t j = i;
            while (j > lo && key_before(x.key, s[j - 1].key, desc)) { s[j] = s[j - 1]; j--; }
            s[j] = x;
        }
    }
    KeyIdx *src = s, *dst = tmp;
    for (int64_t w = RUN; w < n; w *= 2) {
        int64_t npairs = (n + 2 * w - 1) / (2 * w);
        #pragma omp parallel for schedule(dynamic, 1) num_threads(br_threads()) \
            if (br_par(4.0 * (double)n))
        for (int64_t p = 0; p < npairs; p++) {
            int64_t lo = p * 2 * w, mid = BR_MIN(lo + w, n), hi = BR_MIN(lo + 2 * w, n);
            int64_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                dst[o++] = key_before(src[j].key, src[i].key, desc) ? src[j++] : src[i++];
            while (i < mid) dst[o++] = src[i++];
            while (j < hi) dst[o++] = src[j++];
        }
        KeyIdx *t = src; src = dst; dst = t;
    }
    return src;
}

MB *k_order(const MB *a, int64_t by, bool decreasing, bool index_return,
            BrErr *e)
{
    return k_order_multi(a, &by, 1, decreasing, index_return, e);
}

/* order by several columns: one stable sort per key, from the last key to
 * the first, so that the first key decides and later keys break its ties
 * (ties in every key keep their original order). */
MB *k_order_multi(const MB *a, const int64_t *by, int64_t nby, bool decreasing,
                  bool index_return, BrErr *e)
{
    int64_t m = a->rows, n = a->cols;
    if (nby < 1) {
        br_err(e, BR_EARG, "order: by= names no column");
        return NULL;
    }
    for (int64_t k = 0; k < nby; k++)
        if (by[k] < 0 || by[k] >= n) {
            br_err(e, BR_EINDEX, "order: index out of bounds: by=%lld for a "
                   "matrix with %lld columns", (long long)(by[k] + 1), (long long)n);
            return NULL;
        }
    KeyIdx *s = br_malloc((size_t)m * sizeof(KeyIdx));
    KeyIdx *tmp = br_malloc((size_t)m * sizeof(KeyIdx));
    if (!s || !tmp) { free(s); free(tmp); return mb_oom(NULL, e); }
    KeyIdx *o = s;
    for (int64_t i = 0; i < m; i++) o[i].idx = i;
    for (int64_t k = nby - 1; k >= 0; k--) {
        KeyIdx *in = o, *other = o == s ? tmp : s;
        for (int64_t i = 0; i < m; i++) {
            int64_t r = in[i].idx;
            in[i].key = a->sparse ? mb_get(a, r, by[k]) : a->d[r * n + by[k]];
        }
        o = stable_sort(in, other, m, decreasing);
    }
    MB *c = NULL;
    if (index_return) {
        c = mb_dense_uninit(m, 1, e);
        if (c) {
            for (int64_t i = 0; i < m; i++) c->d[i] = (double)(o[i].idx + 1);
            c->nnz = m;
        }
    } else if (!a->sparse) {
        c = mb_dense_uninit(m, n, e);
        if (c) {
            #pragma omp parallel for schedule(static) num_threads(br_threads()) \
                if (br_par((double)(m * n)))
            for (int64_t i = 0; i < m; i++)
                if (n > 0) memcpy(c->d + i * n, a->d + o[i].idx * n, (size_t)n * sizeof(double));
            c->nnz = a->nnz;
        }
    } else {
        c = mb_sp_alloc(m, n, a->nnz, e);
        if (c) {
            for (int64_t i = 0; i < m; i++)
                c->rp[i + 1] = c->rp[i] + a->rp[o[i].idx + 1] - a->rp[o[i].idx];
            #pragma omp parallel for schedule(static) num_threads(br_threads()) \
                if (br_par((double)a->nnz))
            for (int64_t i = 0; i < m; i++) {
                int64_t s0 = a->rp[o[i].idx], len = a->rp[o[i].idx + 1] - s0;
                memcpy(c->ci + c->rp[i], a->ci + s0, (size_t)len * sizeof(int32_t));
                memcpy(c->v + c->rp[i], a->v + s0, (size_t)len * sizeof(double));
            }
            mb_sp_done(c, c->rp[m]);
        }
    }
    free(s);
    free(tmp);
    return mb_finish(c, e);
}

/* -------------------------------------------------------- removeEmpty */

MB *k_rmempty(const MB *a, bool rows, const MB *select, bool empty_return,
              BrErr *e)
{
    int64_t m = a->rows, n = a->cols, len = rows ? m : n;
    /* a select with more cells than the margin: SystemDS's LibMatrixReorg
       reads its cells in row-major order as the flags of the first len
       rows (columns); the target comes back unchanged when the select's
       non-zeros number len, and the rows margin has as many rows as the
       select has non-zeros, the kept rows first, then zero rows */
    bool longer = select && select->rows * select->cols > len;
    int64_t selnz = 0;
    if (longer) {
        if (!select->sparse) {
            for (int64_t i = 0; i < select->rows * select->cols; i++) selnz += select->d[i] != 0;
        } else {
            for (int64_t k = 0; k < select->rp[select->rows]; k++) selnz += select->v[k] != 0;
        }
        if (selnz == len) return mb_finish(mb_copy(a, e), e);
    }
    if (select && !longer && ((select->rows != 1 && select->cols != 1) ||
                              select->rows * select->cols != len)) {
        br_err(e, BR_EDIM, "removeEmpty: dimension mismatch: select is "
               "%lldx%lld but the target has %lld %s", (long long)select->rows,
               (long long)select->cols, (long long)len, rows ? "rows" : "columns");
        return NULL;
    }
    int64_t *map = br_malloc((size_t)(len + 1) * sizeof(int64_t));
    uint8_t *keep = br_calloc((size_t)len + 1, 1);
    if (!map || !keep) { free(map); free(keep); return mb_oom(NULL, e); }
    if (select) {
        if (!select->sparse) {
            for (int64_t i = 0; i < len; i++) keep[i] = select->d[i] != 0;
        } else {
            for (int64_t i = 0; i < select->rows; i++)
                for (int64_t k = select->rp[i]; k < select->rp[i + 1]; k++) {
                    int64_t cell = i * select->cols + select->ci[k];
                    if (select->v[k] != 0 && cell < len) keep[cell] = 1;
                }
        }
    } else if (a->sparse) {
        for (int64_t i = 0; i < m; i++)
            for (int64_t k = a->rp[i]; k < a->rp[i + 1]; k++)
                if (a->v[k] != 0) keep[rows ? i : a->ci[k]] = 1;
    } else {
        for (int64_t i = 0; i < m; i++) {
            const double *ar = a->d + i * n;
            for (int64_t j = 0; j < n; j++)
                if (ar[j] != 0) { keep[rows ? i : j] = 1; if (rows) break; }
        }
    }
    int64_t kept = 0;
    for (int64_t i = 0; i < len; i++) map[i] = keep[i] ? kept++ : -1;
    free(keep);
    MB *c = NULL;
    int64_t total = rows && longer ? BR_MAX(selnz, empty_return ? 1 : 0) : kept;
    if (kept == 0) {
        int64_t z = empty_return ? 1 : 0;
        c = rows ? mb_empty(longer ? total : z, n, e) : mb_empty(m, z, e);
    } else if (rows) {
        int64_t *src = br_malloc((size_t)kept * sizeof(int64_t));
        if (!src) { free(map); return mb_oom(NULL, e); }
        for (int64_t i = 0; i < m; i++) if (map[i] >= 0) src[map[i]] = i;
        if (!a->sparse) {
            c = mb_dense_uninit(kept, n, e);
            if (c) {
                int64_t nnz = 0;
                for (int64_t i = 0; i < kept && n > 0; i++) {
                    const double *ar = a->d + src[i] * n;
                    memcpy(c->d + i * n, ar, (size_t)n * sizeof(double));
                    for (int64_t j = 0; j < n; j++) nnz += ar[j] != 0;
                }
                c->nnz = nnz;
            }
        } else {
            c = mb_sp_alloc(kept, n, a->nnz, e);
            if (c) {
                for (int64_t i = 0; i < kept; i++) {
                    int64_t s0 = a->rp[src[i]], l = a->rp[src[i] + 1] - s0;
                    memcpy(c->ci + c->rp[i], a->ci + s0, (size_t)l * sizeof(int32_t));
                    memcpy(c->v + c->rp[i], a->v + s0, (size_t)l * sizeof(double));
                    c->rp[i + 1] = c->rp[i] + l;
                }
                mb_sp_done(c, c->rp[kept]);
            }
        }
        free(src);
    } else if (!a->sparse) {
        c = mb_dense_uninit(m, kept, e);
        if (c) {
            int64_t nnz = 0;
            for (int64_t i = 0; i < m; i++) {
                const double *ar = a->d + i * n;
                double *cr = c->d + i * kept;
                for (int64_t j = 0; j < n; j++)
                    if (map[j] >= 0) { cr[map[j]] = ar[j]; nnz += ar[j] != 0; }
            }
            c->nnz = nnz;
        }
    } else {
        c = mb_sp_alloc(m, kept, a->nnz, e);
        if (c) {
            int64_t p = 0;
            for (int64_t i = 0; i < m; i++) {
                for (int64_t k = a->rp[i]; k < a->rp[i + 1]; k++)
                    if (map[a->ci[k]] >= 0 && a->v[k] != 0) {
                        c->ci[p] = (int32_t)map[a->ci[k]]; c->v[p++] = a->v[k];
                    }
                c->rp[i + 1] = p;
            }
            mb_sp_done(c, p);
        }
    }
    free(map);
    if (c && rows && kept > 0 && total > kept) {   /* SystemDS's zero rows */
        MB *z = mb_empty(total - kept, n, e), *parts[2] = {c, z};
        MB *r = z ? k_rbind(2, (const MB *const *)parts, e) : NULL;
        mb_release(z);
        mb_release(c);
        c = r;
    }
    return mb_finish(c, e);
}

/* ------------------------------------------------------------ replace */

MB *k_replace(const MB *a, double pattern, double replacement, BrErr *e)
{
    bool pnan = isnan(pattern);
    int64_t m = a->rows, n = a->cols, cells = m * n;
    if (!pnan && pattern == 0) {
        if (replacement == 0) return mb_finish(mb_copy(a, e), e);
        /* every zero, implicit or not, becomes non-zero: dense output */
        MB *c = mb_dense_uninit(m, n, e);
        if (!c) return NULL;
        if (!a->sparse) {
            #pragma omp parallel for schedule(static) num_threads(br_threads()) \
                if (br_par((double)cells))
            for (int64_t i = 0; i < cells; i++)
                c->d[i] = a->d[i] == 0 ? replacement : a->d[i];
        } else {
            for (int64_t i = 0; i < cells; i++) c->d[i] = replacement;
            for (int64_t i = 0; i < m; i++)
                for (int64_t k = a->rp[i]; k < a->rp[i + 1]; k++)
                    if (a->v[k] != 0) c->d[i * n + a->ci[k]] = a->v[k];
        }
        mb_recount_nnz(c);
        return mb_finish(c, e);
    }
    /* zeros never match: sparse-safe */
    if (!a->sparse) {
        MB *c = mb_dense_uninit(m, n, e);
        if (!c) return NULL;
        int64_t nnz = 0;
        #pragma omp parallel for schedule(static) reduction(+:nnz) \
            num_threads(br_threads()) if (br_par((double)cells))
        for (int64_t i = 0; i < cells; i++) {
            double x = a->d[i];
            bool hit = pnan ? isnan(x) : x == pattern;
            c->d[i] = hit ? replacement : x;
            nnz += c->d[i] != 0;
        }
        c->nnz = nnz;
        return mb_finish(c, e);
    }
    MB *c = mb_sp_alloc(m, n, a->nnz, e);
    if (!c) return NULL;
    int64_t p = 0;
    for (int64_t i = 0; i < m; i++) {
        for (int64_t k = a->rp[i]; k < a->rp[i + 1]; k++) {
            double x = a->v[k];
            bool hit = pnan ? isnan(x) : x == pattern;
            double y = hit ? replacement : x;
            if (y != 0) { c->ci[p] = a->ci[k]; c->v[p++] = y; }
        }
        c->rp[i + 1] = p;
    }
    mb_sp_done(c, p);
    return mb_finish(c, e);
}

/* -------------------------------------------------------------- outer */

MB *k_outer(const MB *x, const MB *y, OpCode op, BrErr *e)
{
    if (x->cols != 1 || y->rows != 1) {
        br_err(e, BR_EDIM, "outer: dimension mismatch: expected a column "
               "vector and a row vector, got %lldx%lld and %lldx%lld",
               (long long)x->rows, (long long)x->cols, (long long)y->rows,
               (long long)y->cols);
        return NULL;
    }
    if ((unsigned)op >= (unsigned)OP__COUNT || op_info[op].kind != OK_BINARY) {
        br_err(e, BR_EARG, "outer: not a binary operator");
        return NULL;
    }
    int64_t m = x->rows, n = y->cols;
    double *xv = mb_cells_rowmajor(x), *yv = mb_cells_rowmajor(y);
    if (!xv || !yv) { free(xv); free(yv); return mb_oom(NULL, e); }
    MB *c;
    if ((op_info[op].flags & OF_MULT) &&
        mb_should_be_sparse(m, n, x->nnz * y->nnz)) {
        /* f(0, .) = f(., 0) = 0: only pairs of non-zeros */
        c = mb_sp_new(m, n, x->nnz * y->nnz, e);
        bool bad = false;
        for (int64_t i = 0; c && i < m && !bad; i++) {
            if (xv[i] == 0) continue;
            for (int64_t j = 0; j < n && !bad; j++)
                if (yv[j] != 0)
                    bad = mb_sp_append(c, i, j, ops_binary(op, xv[i], yv[j]), e) != 0;
        }
        if (c) {
            if (bad) { mb_release(c); c = NULL; }
            else mb_sp_finish(c);
        }
    } else {
        c = mb_dense_uninit(m, n, e);
        if (c) {
            int64_t nnz = 0;
            #pragma omp parallel for schedule(static) reduction(+:nnz) \
                num_threads(br_threads()) if (br_par((double)(m * n)))
            for (int64_t i = 0; i < m; i++) {
                double *cr = c->d + i * n, xi = xv[i];
                for (int64_t j = 0; j < n; j++) {
                    cr[j] = ops_binary(op, xi, yv[j]);
                    nnz += cr[j] != 0;
                }
            }
            c->nnz = nnz;
        }
    }
    free(xv);
    free(yv);
    return mb_finish(c, e);
}

/* ------------------------------------------------ matrix("1 2 3", ...) */

MB *k_matrix_from_values(const double *vals, int64_t n, int64_t rows,
                         int64_t cols, bool byrow, BrErr *e)
{
    int64_t cells;
    if (rows < 0 || cols < 0 || __builtin_mul_overflow(rows, cols, &cells) ||
        (n != cells && n != 1)) {
        br_err(e, BR_EDIM, "matrix: dimension mismatch: %lld values do not "
               "fill a %lldx%lld matrix", (long long)n, (long long)rows,
               (long long)cols);
        return NULL;
    }
    if (n != cells) return mb_finish(mb_fill(rows, cols, vals[0], e), e);
    MB *c = mb_dense_uninit(rows, cols, e);
    if (!c) return NULL;
    if (byrow) {
        if (cells) memcpy(c->d, vals, (size_t)cells * sizeof(double));
    } else {
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++)
                c->d[i * cols + j] = vals[j * rows + i];
    }
    mb_recount_nnz(c);
    return mb_finish(c, e);
}
