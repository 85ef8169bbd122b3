/* index.c: right indexing (slices), left indexing (into a copy and in
 * place) and n-ary cbind/rbind. Indexes are 0-based, ranges half-open;
 * error messages quote them 1-based inclusive as DML does. */
#include "reorg.h"
#include "leaf.h"

#include <stdlib.h>
#include <float.h>
#include <math.h>
#include <string.h>

/* Checks the range [rl,ru) x [cl,cu) against a's shape; "index" error
 * quoting the range 1-based inclusive. */
static int check_range(const char *what, const MB *a, int64_t rl, int64_t ru,
                       int64_t cl, int64_t cu, BrErr *e)
{
    if (rl < 0 || ru > a->rows || rl > ru)
        return br_err(e, BR_EINDEX, "%sindex out of bounds: rows %lld:%lld of "
                      "a %lldx%lld matrix", what, (long long)(rl + 1),
                      (long long)ru, (long long)a->rows, (long long)a->cols);
    if (cl < 0 || cu > a->cols || cl > cu)
        return br_err(e, BR_EINDEX, "%sindex out of bounds: columns %lld:%lld "
                      "of a %lldx%lld matrix", what, (long long)(cl + 1),
                      (long long)cu, (long long)a->rows, (long long)a->cols);
    return 0;
}

/* --------------------------------------------------------------- slice */

#define CC_CHUNK ((int64_t)1 << 15)   /* cells per task of copy_count */

/* Copies a row of n doubles: up to 4 cell by cell, where a memcpy call
 * per row cost several times the copy (a column sliced from, written
 * into or bound to a tall matrix), longer ones with memcpy. */
static inline void copy_row(double *restrict d, const double *restrict s, int64_t n)
{
    switch (n) {
    case 4: d[3] = s[3]; /* fallthrough */
    case 3: d[2] = s[2]; /* fallthrough */
    case 2: d[1] = s[1]; /* fallthrough */
    case 1: d[0] = s[0]; /* fallthrough */
    case 0: break;
    default: memcpy(d, s, (size_t)n * sizeof(double));
    }
}

/* Copies n doubles from s to d in parallel chunks (a single thread's
 * memcpy reaches about half the memory bandwidth) and, when count, returns
 * the non-zeros, each chunk counted while it is in cache, and sets
 * *nonfinite when one of them is NaN or infinite (the same pass). */
static int64_t copy_count(double *d, const double *s, int64_t n, bool count, int *nonfinite)
{
    int64_t nch = (n + CC_CHUNK - 1) / CC_CHUNK, nz = 0;
    int bad = 0;
    const KEwLeaf *L = k_leaves(k_isa())->ew;
    #pragma omp parallel for schedule(static) reduction(+:nz) reduction(|:bad) \
        num_threads(br_threads()) if (br_par((double)n / 4))
    for (int64_t t = 0; t < nch; t++) {
        int64_t k0 = t * CC_CHUNK, w = BR_MIN(CC_CHUNK, n - k0);
        memcpy(d + k0, s + k0, (size_t)w * sizeof(double));
        if (count) nz += L->nz_count_fin(s + k0, w, &bad);
    }
    *nonfinite |= bad;
    return nz;
}

/* A slice's finiteness flag (mb.h): `seen` when the copy checked every
 * value it took (bad: one was NaN or infinite); else what the source's
 * flag tells: a slice of finite values is finite, the whole block has
 * the source's answer. c: the finished slice (NULL is fine). */
static MB *slice_fin(MB *c, const MB *a, bool seen, int bad)
{
    uint8_t f = mb_fin_known(a);
    bool whole = c && c->rows == a->rows && c->cols == a->cols;
    if (seen) mb_fin_set(c, bad != 0);
    else if (f == MB_FIN_FINITE || (whole && f == MB_FIN_NONFINITE)) mb_fin_set(c, f == MB_FIN_NONFINITE);
    return c;
}

/* Is one of x[0..n) NaN or infinite? */
static int any_nonfinite(const double *x, int64_t n)
{
    int bad = 0;
    for (int64_t q = 0; q < n; q++) bad |= !(fabs(x[q]) <= DBL_MAX);
    return bad;
}

MB *k_slice(const MB *a, int64_t rl, int64_t ru, int64_t cl, int64_t cu,
            BrErr *e)
{
    if (check_range("", a, rl, ru, cl, cu, e)) return NULL;
    int64_t m = ru - rl, n = cu - cl, an = a->cols;
    if (!a->sparse) {
        MB *c = mb_dense_uninit(m, n, e);
        if (!c) return NULL;
        int64_t nnz = 0;
        int bad = 0;
        bool seen = false;
        if (n == an && m > 0 && n > 0) {
            /* whole rows (and column vectors): one contiguous copy */
            seen = m < a->rows;
            nnz = copy_count(c->d, a->d + rl * an, m * n, seen, &bad);
            if (m == a->rows) nnz = a->nnz;
        } else if (n > 0) {
            seen = true;
            #pragma omp parallel for schedule(static) reduction(+:nnz) reduction(|:bad) \
                num_threads(br_threads()) if (br_par((double)(m * n)))
            for (int64_t i = 0; i < m; i++) {
                const double *s = a->d + (rl + i) * an + cl;
                copy_row(c->d + i * n, s, n);
                for (int64_t j = 0; j < n; j++) {
                    nnz += s[j] != 0;
                    bad |= !(fabs(s[j]) <= DBL_MAX);
                }
            }
        }
        c->nnz = nnz;
        return slice_fin(mb_finish(c, e), a, seen, bad);
    }
    if (cl == 0 && cu == an) {
        int64_t s0 = a->rp[rl], len = a->rp[ru] - s0;
        MB *c = mb_sp_alloc(m, n, len, e);
        if (!c) return NULL;
        for (int64_t i = 0; i <= m; i++) c->rp[i] = a->rp[rl + i] - s0;
        memcpy(c->ci, a->ci + s0, (size_t)len * sizeof(int32_t));
        memcpy(c->v, a->v + s0, (size_t)len * sizeof(double));
        /* the copied values read for NaN and infinities unless a's flag
         * answers for any slice (finite): a non-finite or unknown a's
         * slice of some rows may be either */
        bool seen = mb_fin_known(a) != MB_FIN_FINITE;
        int bad = seen ? any_nonfinite(c->v, len) : 0;
        mb_sp_done(c, len);
        return slice_fin(mb_finish(c, e), a, seen, bad);
    }
    /* column range: per row the entries between two binary searches */
    int64_t *lo = br_malloc((size_t)(m + 1) * sizeof(int64_t));
    int64_t *cnt = br_malloc((size_t)(m + 1) * sizeof(int64_t));
    if (!lo || !cnt) { free(lo); free(cnt); return mb_oom(NULL, e); }
    int64_t total = 0;
    #pragma omp parallel for schedule(static) reduction(+:total) \
        num_threads(br_threads()) if (br_par(16 * (double)m))
    for (int64_t i = 0; i < m; i++) {
        int64_t a0 = a->rp[rl + i], a1 = a->rp[rl + i + 1];
        lo[i] = mb_csr_lower(a->ci, a0, a1, cl);
        cnt[i] = mb_csr_lower(a->ci, lo[i], a1, cu) - lo[i];
        total += cnt[i];
    }
    MB *c = mb_sp_alloc(m, n, total, e);
    if (!c) { free(lo); free(cnt); return NULL; }
    for (int64_t i = 0; i < m; i++) c->rp[i + 1] = c->rp[i] + cnt[i];
    bool seen = mb_fin_known(a) != MB_FIN_FINITE;   /* as the rows' slice above */
    int bad = 0;
    #pragma omp parallel for schedule(static) reduction(|:bad) num_threads(br_threads()) \
        if (br_par((double)total))
    for (int64_t i = 0; i < m; i++) {
        int64_t p = c->rp[i];
        for (int64_t k = lo[i]; k < lo[i] + cnt[i]; k++, p++) {
            c->ci[p] = (int32_t)(a->ci[k] - cl);
            c->v[p] = a->v[k];
            if (seen) bad |= !(fabs(a->v[k]) <= DBL_MAX);
        }
    }
    free(lo);
    free(cnt);
    mb_sp_done(c, total);
    return slice_fin(mb_finish(c, e), a, seen, bad);
}

/* ------------------------------------------------------- left indexing */

static int check_lix(const MB *t, int64_t rl, int64_t ru, int64_t cl,
                     int64_t cu, const MB *src, BrErr *e)
{
    if (check_range("left indexing: ", t, rl, ru, cl, cu, e)) return e->code;
    if (src->rows != ru - rl || src->cols != cu - cl)
        return br_err(e, BR_EDIM, "left indexing: dimension mismatch: target "
                      "block [%lld:%lld, %lld:%lld] is %lldx%lld, right-hand "
                      "side is %lldx%lld", (long long)(rl + 1), (long long)ru,
                      (long long)(cl + 1), (long long)cu, (long long)(ru - rl),
                      (long long)(cu - cl), (long long)src->rows,
                      (long long)src->cols);
    return 0;
}

/* Non-zeros of a sparse t inside [rl,ru) x [cl,cu). */
static int64_t sp_region_nnz(const MB *t, int64_t rl, int64_t ru, int64_t cl,
                             int64_t cu)
{
    if (cl == 0 && cu == t->cols) return t->rp[ru] - t->rp[rl];
    int64_t n = 0;
    for (int64_t r = rl; r < ru; r++) {
        int64_t lo = mb_csr_lower(t->ci, t->rp[r], t->rp[r + 1], cl);
        n += mb_csr_lower(t->ci, lo, t->rp[r + 1], cu) - lo;
    }
    return n;
}

/* Writes src into the dense t at (rl, cl) and keeps t->nnz exact.
 * O(size of src). */
static void dense_write(MB *t, int64_t rl, int64_t cl, const MB *src)
{
    int64_t m = src->rows, n = src->cols, tc = t->cols;
    int64_t old = 0, nw = 0;
    if (m == 0 || n == 0) return;
    #pragma omp parallel for schedule(static) reduction(+:old, nw) \
        num_threads(br_threads()) if (br_par((double)(m * n)))
    for (int64_t i = 0; i < m; i++) {
        double *tr = t->d + (rl + i) * tc + cl;
        for (int64_t j = 0; j < n; j++) old += tr[j] != 0;
        if (!src->sparse) {
            const double *sr = src->d + i * n;
            copy_row(tr, sr, n);
            for (int64_t j = 0; j < n; j++) nw += sr[j] != 0;
        } else {
            memset(tr, 0, (size_t)n * sizeof(double));
            for (int64_t k = src->rp[i]; k < src->rp[i + 1]; k++) {
                tr[src->ci[k]] = src->v[k];
                nw += src->v[k] != 0;
            }
        }
    }
    t->nnz += nw - old;
}

/* Replaces rows [rl,ru) x cols [cl,cu) of the CSR block t (exclusively
 * owned) by src: builds the new entries of those rows in scratch arrays,
 * moves the entries after them once and patches the row pointers.
 * O(region + nnz after it + rows). t is unchanged on error. */
static int sp_splice(MB *t, int64_t rl, int64_t ru, int64_t cl, int64_t cu,
                     const MB *src, BrErr *e)
{
    int64_t m = ru - rl, n = cu - cl;
    int64_t s0 = t->rp[rl], s1 = t->rp[ru];
    int64_t cap = (s1 - s0) + (src->sparse ? src->rp[src->rows] : m * n);
    int32_t *nci = br_malloc((size_t)cap * sizeof(int32_t));
    double *nv = br_malloc((size_t)cap * sizeof(double));
    int64_t *rlen = br_malloc((size_t)(m + 1) * sizeof(int64_t));
    if (!nci || !nv || !rlen) {
        free(nci); free(nv); free(rlen);
        return br_err(e, BR_ENOMEM, "out of memory");
    }
    int64_t p = 0;
    for (int64_t i = 0; i < m; i++) {
        int64_t r = rl + i, a0 = t->rp[r], a1 = t->rp[r + 1], q0 = p;
        int64_t lo = mb_csr_lower(t->ci, a0, a1, cl);
        int64_t hi = mb_csr_lower(t->ci, lo, a1, cu);
        for (int64_t k = a0; k < lo; k++, p++) { nci[p] = t->ci[k]; nv[p] = t->v[k]; }
        if (src->sparse) {
            for (int64_t k = src->rp[i]; k < src->rp[i + 1]; k++)
                if (src->v[k] != 0) {
                    nci[p] = (int32_t)(src->ci[k] + cl); nv[p++] = src->v[k];
                }
        } else {
            const double *sr = src->d + i * n;
            for (int64_t j = 0; j < n; j++)
                if (sr[j] != 0) { nci[p] = (int32_t)(j + cl); nv[p++] = sr[j]; }
        }
        for (int64_t k = hi; k < a1; k++, p++) { nci[p] = t->ci[k]; nv[p] = t->v[k]; }
        rlen[i] = p - q0;
    }
    int64_t delta = p - (s1 - s0), tail = t->rp[t->rows] - s1;
    if (delta > 0 && mb_sp_reserve(t, t->rp[t->rows] + delta, e)) {
        free(nci); free(nv); free(rlen);
        return e->code;
    }
    if (delta != 0 && tail > 0) {
        memmove(t->ci + s1 + delta, t->ci + s1, (size_t)tail * sizeof(int32_t));
        memmove(t->v + s1 + delta, t->v + s1, (size_t)tail * sizeof(double));
    }
    memcpy(t->ci + s0, nci, (size_t)p * sizeof(int32_t));
    memcpy(t->v + s0, nv, (size_t)p * sizeof(double));
    for (int64_t i = 0; i < m; i++) t->rp[rl + i + 1] = t->rp[rl + i] + rlen[i];
    if (delta != 0)
        for (int64_t r = ru + 1; r <= t->rows; r++) t->rp[r] += delta;
    t->nnz = t->rp[t->rows];
    free(nci); free(nv); free(rlen);
    return 0;
}

/* The finiteness flag of c after values of flag `wrote` (MB_FIN_*) were
 * written into it, tfin: were c's values before known finite
 * (mb_fin_known, asked before the write): non-finite when the
 * written values were, finite when both were known finite, else unknown
 * (never a wrong "finite"). */
static void lix_fin(MB *c, bool tfin, int wrote)
{
    mb_values_changed(c);
    if (wrote == MB_FIN_NONFINITE) mb_fin_set(c, true);
    else if (tfin && wrote == MB_FIN_FINITE) mb_fin_set(c, false);
}

/* The finiteness flag of c, a copy of target (mb_copy keeps target's
 * flag) into which values of flag `wrote` were written (lix_fin). */
static void lix_copy_fin(MB *c, const MB *target, int wrote)
{
    lix_fin(c, mb_fin_known(target) == MB_FIN_FINITE, wrote);
}

MB *k_lix(const MB *target, int64_t rl, int64_t ru, int64_t cl, int64_t cu,
          const MB *src, BrErr *e)
{
    if (check_lix(target, rl, ru, cl, cu, src, e)) return NULL;
    int64_t old = target->sparse ? sp_region_nnz(target, rl, ru, cl, cu) : 0;
    int64_t nnz2 = target->nnz - old + src->nnz;
    int wrote = mb_fin_known(src);
    if (target->sparse && (nnz2 == 0 ||
        mb_should_be_sparse(target->rows, target->cols, nnz2))) {
        MB *c = mb_copy(target, e);
        if (!c) return NULL;
        if (sp_splice(c, rl, ru, cl, cu, src, e)) { mb_release(c); return NULL; }
        lix_copy_fin(c, target, wrote);
        return mb_finish(c, e);
    }
    MB *c = mb_to_dense(target, e);
    if (!c) return NULL;
    dense_write(c, rl, cl, src);
    lix_copy_fin(c, target, wrote);
    return mb_finish(c, e);
}

int k_lix_inplace(MB *target, int64_t rl, int64_t ru, int64_t cl, int64_t cu,
                  const MB *src, BrErr *e)
{
    if (check_lix(target, rl, ru, cl, cu, src, e)) return e->code;
    if (src == target || (ru - rl) * (cu - cl) == 0) return 0;
    /* the values change (lix_fin; mb.h, the finiteness flag): the
     * written values' flag and the target's, asked before the write */
    bool tfin = mb_fin_known(target) == MB_FIN_FINITE;
    int wrote = mb_fin_known(src);
    mb_values_changed(target);
    if (target->sparse) {
        int64_t old = sp_region_nnz(target, rl, ru, cl, cu);
        int64_t nnz2 = target->nnz - old + src->nnz;
        bool dense = nnz2 > 0 &&
                     !mb_should_be_sparse(target->rows, target->cols, nnz2);
        if (!dense && !src->sparse && src->nnz > 0 &&
            (double)target->rows * (double)target->cols <= (double)K_LIX_DENSIFY_CELLS)
            dense = true;
        if (!dense) {
            if (sp_splice(target, rl, ru, cl, cu, src, e)) return e->code;
            lix_fin(target, tfin, wrote);
            return 0;
        }
        if (mb_make_dense(target, e)) return e->code;
    }
    dense_write(target, rl, cl, src);
    lix_fin(target, tfin, wrote);
    return 0;
}

/* Sets one cell of the CSR block t (exclusively owned): overwrite, delete
 * (v == 0) or insert (moves the entries after it). */
static int sp_set_cell(MB *t, int64_t r, int64_t c, double v, BrErr *e)
{
    int64_t a1 = t->rp[r + 1], nnz = t->rp[t->rows];
    int64_t pos = mb_csr_lower(t->ci, t->rp[r], a1, c);
    bool found = pos < a1 && t->ci[pos] == c;
    if (found && v != 0) { t->v[pos] = v; return 0; }
    if (!found && v == 0) return 0;
    if (found) {
        memmove(t->ci + pos, t->ci + pos + 1, (size_t)(nnz - pos - 1) * sizeof(int32_t));
        memmove(t->v + pos, t->v + pos + 1, (size_t)(nnz - pos - 1) * sizeof(double));
        for (int64_t k = r + 1; k <= t->rows; k++) t->rp[k]--;
    } else {
        if (mb_sp_reserve(t, nnz + 1, e)) return e->code;
        memmove(t->ci + pos + 1, t->ci + pos, (size_t)(nnz - pos) * sizeof(int32_t));
        memmove(t->v + pos + 1, t->v + pos, (size_t)(nnz - pos) * sizeof(double));
        t->ci[pos] = (int32_t)c;
        t->v[pos] = v;
        for (int64_t k = r + 1; k <= t->rows; k++) t->rp[k]++;
    }
    t->nnz = t->rp[t->rows];
    return 0;
}

static int check_cell(const MB *t, int64_t r, int64_t c, BrErr *e)
{
    if (r < 0 || r >= t->rows || c < 0 || c >= t->cols)
        return br_err(e, BR_EINDEX, "left indexing: index out of bounds: cell "
                      "[%lld, %lld] of a %lldx%lld matrix", (long long)(r + 1),
                      (long long)(c + 1), (long long)t->rows, (long long)t->cols);
    return 0;
}

int k_lix_scalar_inplace(MB *target, int64_t r, int64_t c, double v, BrErr *e)
{
    if (check_cell(target, r, c, e)) return e->code;
    bool tfin = mb_fin_known(target) == MB_FIN_FINITE;   /* as k_lix_inplace */
    int wrote = isfinite(v) ? MB_FIN_FINITE : MB_FIN_NONFINITE;
    mb_values_changed(target);
    if (target->sparse) {
        if (v == 0 || mb_get(target, r, c) != 0 ||
            (double)target->rows * (double)target->cols > (double)K_LIX_SCALAR_DENSIFY_CELLS) {
            if (sp_set_cell(target, r, c, v, e)) return e->code;
            lix_fin(target, tfin, wrote);
            return 0;
        }
        if (mb_make_dense(target, e)) return e->code;
    }
    double *p = target->d + r * target->cols + c;
    target->nnz += (v != 0) - (*p != 0);
    *p = v;
    lix_fin(target, tfin, wrote);
    return 0;
}

MB *k_lix_scalar(const MB *target, int64_t r, int64_t c, double v, BrErr *e)
{
    if (check_cell(target, r, c, e)) return NULL;
    MB *o = mb_copy(target, e);
    if (!o) return NULL;
    if (o->sparse) {
        if (sp_set_cell(o, r, c, v, e)) { mb_release(o); return NULL; }
    } else {
        double *p = o->d + r * o->cols + c;
        o->nnz += (v != 0) - (*p != 0);
        *p = v;
    }
    lix_copy_fin(o, target, isfinite(v) ? MB_FIN_FINITE : MB_FIN_NONFINITE);
    return mb_finish(o, e);
}

/* --------------------------------------------------------- cbind/rbind */

/* Rows of a cbind's task: each operand is copied over them in turn. */
#define BIND_ROWS 1024

/* Dense result of cbind (cb) or rbind of the k operands op. */
static MB *bind_dense(const MB **op, int k, bool cb, int64_t rows,
                      int64_t cols, int64_t nnz, BrErr *e)
{
    MB *c = mb_dense_uninit(rows, cols, e);
    if (!c) return NULL;
    if (cb) {
        /* by blocks of rows, operand by operand (copy_row: a GLM's
         * cbind of two 5e6-row columns); two dense columns interleaved
         * in one loop (GLM's probabilities P = cbind(p1, p2): copied
         * operand by operand, a double at a time with a stride, it took
         * 4x the time of p1 + p2) */
        const bool two_cols = k == 2 && cols == 2 && !op[0]->sparse && !op[1]->sparse;
        const int64_t nb = (rows + BIND_ROWS - 1) / BIND_ROWS;
        #pragma omp parallel for schedule(static) num_threads(br_threads()) \
            if (br_par((double)(rows * cols)))
        for (int64_t b = 0; b < nb; b++) {
            const int64_t i0 = b * BIND_ROWS, i1 = BR_MIN(rows, i0 + BIND_ROWS);
            if (two_cols) {
                const double *restrict p = op[0]->d, *restrict q = op[1]->d;
                double *restrict d = c->d;
                #pragma omp simd
                for (int64_t i = i0; i < i1; i++) {
                    d[2 * i] = p[i];
                    d[2 * i + 1] = q[i];
                }
                continue;
            }
            int64_t off = 0;
            for (int q = 0; q < k; q++) {
                const MB *a = op[q];
                const int64_t w = a->cols;
                double *cc = c->d + off;
                off += w;
                if (w == 0) continue;
                if (a->sparse) {
                    for (int64_t i = i0; i < i1; i++) {
                        double *cr = cc + i * cols;
                        memset(cr, 0, (size_t)w * sizeof(double));
                        for (int64_t p = a->rp[i]; p < a->rp[i + 1]; p++) cr[a->ci[p]] = a->v[p];
                    }
                    continue;
                }
                for (int64_t i = i0; i < i1; i++) copy_row(cc + i * cols, a->d + i * w, w);
            }
        }
    } else if (rows > 0 && cols > 0) {
        int64_t r0 = 0;
        for (int q = 0; q < k; q++) {
            const MB *a = op[q];
            double *cb0 = c->d + r0 * cols;
            if (!a->sparse) {
                if (a->rows > 0 && cols > 0)
                    memcpy(cb0, a->d, (size_t)(a->rows * cols) * sizeof(double));
            } else {
                if (a->rows > 0 && cols > 0)
                    memset(cb0, 0, (size_t)(a->rows * cols) * sizeof(double));
                for (int64_t i = 0; i < a->rows; i++)
                    for (int64_t p = a->rp[i]; p < a->rp[i + 1]; p++)
                        cb0[i * cols + a->ci[p]] = a->v[p];
            }
            r0 += a->rows;
        }
    }
    c->nnz = nnz;
    return c;
}

/* Non-zeros of row i of a (either format). */
static int64_t row_nnz(const MB *a, int64_t i)
{
    if (a->sparse) return a->rp[i + 1] - a->rp[i];
    int64_t n = 0;
    const double *r = a->d + i * a->cols;
    for (int64_t j = 0; j < a->cols; j++) n += r[j] != 0;
    return n;
}

/* Appends row i of a, columns shifted by off, at c->ci/v[p]; returns the
 * new p. */
static int64_t put_row(MB *c, int64_t p, const MB *a, int64_t i, int64_t off)
{
    if (a->sparse) {
        for (int64_t k = a->rp[i]; k < a->rp[i + 1]; k++, p++) {
            c->ci[p] = (int32_t)(a->ci[k] + off);
            c->v[p] = a->v[k];
        }
    } else {
        const double *r = a->d + i * a->cols;
        for (int64_t j = 0; j < a->cols; j++)
            if (r[j] != 0) { c->ci[p] = (int32_t)(j + off); c->v[p++] = r[j]; }
    }
    return p;
}

/* Sparse result of cbind (cb) or rbind of the k operands op. */
static MB *bind_sparse(const MB **op, int k, bool cb, int64_t rows,
                       int64_t cols, int64_t nnz, BrErr *e)
{
    MB *c = mb_sp_alloc(rows, cols, nnz, e);
    if (!c) return NULL;
    if (cb) {
        #pragma omp parallel for schedule(static) num_threads(br_threads()) \
            if (br_par((double)(rows * k)))
        for (int64_t i = 0; i < rows; i++) {
            int64_t n = 0;
            for (int q = 0; q < k; q++) n += row_nnz(op[q], i);
            c->rp[i + 1] = n;
        }
        for (int64_t i = 0; i < rows; i++) c->rp[i + 1] += c->rp[i];
        #pragma omp parallel for schedule(static) num_threads(br_threads()) \
            if (br_par((double)nnz))
        for (int64_t i = 0; i < rows; i++) {
            int64_t p = c->rp[i], off = 0;
            for (int q = 0; q < k; q++) {
                p = put_row(c, p, op[q], i, off);
                off += op[q]->cols;
            }
        }
    } else {
        int64_t r0 = 0, p = 0;
        for (int q = 0; q < k; q++) {
            for (int64_t i = 0; i < op[q]->rows; i++) {
                p = put_row(c, p, op[q], i, 0);
                c->rp[r0 + i + 1] = p;
            }
            r0 += op[q]->rows;
        }
    }
    mb_sp_done(c, c->rp[rows]);
    return c;
}

/* cbind (cb) or rbind of n operands; 0 x 0 operands are skipped. */
static MB *bind(int n, const MB *const *ms, bool cb, BrErr *e)
{
    const char *name = cb ? "cbind" : "rbind";
    if (n < 1) {
        br_err(e, BR_EARG, "%s: needs at least one operand", name);
        return NULL;
    }
    const MB **op = br_malloc((size_t)n * sizeof(*op));
    if (!op) return mb_oom(NULL, e);
    int k = 0;
    for (int i = 0; i < n; i++)
        if (ms[i]->rows != 0 || ms[i]->cols != 0) op[k++] = ms[i];
    if (k == 0) { free(op); return mb_empty(0, 0, e); }
    int64_t fixed = cb ? op[0]->rows : op[0]->cols, total = 0, nnz = 0;
    for (int q = 0; q < k; q++) {
        int64_t f = cb ? op[q]->rows : op[q]->cols;
        if (f != fixed) {
            br_err(e, BR_EDIM, "%s: dimension mismatch: an operand has %lld "
                   "%s, another %lld", name, (long long)f, cb ? "rows" : "columns",
                   (long long)fixed);
            free(op);
            return NULL;
        }
        total += cb ? op[q]->cols : op[q]->rows;
        nnz += op[q]->nnz;
    }
    int64_t rows = cb ? fixed : total, cols = cb ? total : fixed;
    MB *c;
    if (mb_keep_sparse(rows, cols, nnz))
        c = bind_sparse(op, k, cb, rows, cols, nnz, e);
    else
        c = bind_dense(op, k, cb, rows, cols, nnz, e);
    free(op);
    return mb_finish(c, e);
}

MB *k_cbind(int n, const MB *const *ms, BrErr *e) { return bind(n, ms, true, e); }
MB *k_rbind(int n, const MB *const *ms, BrErr *e) { return bind(n, ms, false, e); }
