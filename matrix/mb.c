/* mb.c: matrix block construction, conversion, format choice, estimates. */
#include "mb.h"
#include "cmb.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static MB *mb_new(int64_t rows, int64_t cols, BrErr *e)
{
    if (rows < 0 || cols < 0) {
        br_err(e, BR_EDIM, "invalid matrix dimensions %lldx%lld",
               (long long)rows, (long long)cols);
        return NULL;
    }
    if (cols > INT32_MAX) {
        br_err(e, BR_EDIM, "too many columns: %lld", (long long)cols);
        return NULL;
    }
    MB *m = br_calloc(1, sizeof *m);
    if (!m) { br_err(e, BR_ENOMEM, "out of memory"); return NULL; }
    m->rows = rows; m->cols = cols; m->refs = 1;
    return m;
}

int (*mb_dev_land)(MB *m, BrErr *e);

int mb_host(const MB *m, BrErr *e)
{
    if (!m || !__atomic_load_n(&m->dev, __ATOMIC_ACQUIRE)) return 0;
    if (!mb_dev_land) return br_err(e, BR_EFAIL, "device-only matrix without a GPU backend");
    /* landing fills the block's arrays once, under the backend's lock;
     * readers see either dev set or the finished host arrays */
    return mb_dev_land((MB *)m, e);
}

/* for readers that cannot return an error (mb_get, predicates): a failed
 * landing is reported on stderr, the cells read as NaN (d stays NULL) */
static bool host_or_warn(const MB *m)
{
    BrErr e;
    if (!mb_host(m, &e)) return true;
    fprintf(stderr, "braid: %s\n", e.msg);
    return false;
}

MB *mb_dev_shell(int64_t rows, int64_t cols, BrErr *e)
{
    MB *m = mb_new(rows, cols, e);
    if (m) { m->dev = true; m->nnz = rows * cols; }
    return m;
}

static MB *oom(MB *m, BrErr *e, const char *what, int64_t r, int64_t c)
{
    br_err(e, BR_ENOMEM, "out of memory allocating %s %lldx%lld matrix",
           what, (long long)r, (long long)c);
    mb_release(m);
    return NULL;
}

static MB *dense_alloc(int64_t rows, int64_t cols, bool zero, BrErr *e)
{
    MB *m = mb_new(rows, cols, e);
    if (!m) return NULL;
    size_t cells, bytes;
    if (!br_mul_ok((size_t)rows, (size_t)cols, &cells) ||
        !br_mul_ok(cells, sizeof(double), &bytes))
        return oom(m, e, "dense", rows, cols);
    if (cells) {
        m->d = zero ? br_calloc_aligned(bytes) : br_alloc_aligned(bytes);
        if (!m->d) return oom(m, e, "dense", rows, cols);
    }
    return m;
}

MB *mb_dense(int64_t rows, int64_t cols, BrErr *e) { return dense_alloc(rows, cols, true, e); }
MB *mb_dense_uninit(int64_t rows, int64_t cols, BrErr *e) { return dense_alloc(rows, cols, false, e); }

MB *mb_sp_alloc(int64_t rows, int64_t cols, int64_t cap, BrErr *e)
{
    MB *m = mb_new(rows, cols, e);
    if (!m) return NULL;
    m->sparse = true;
    /* the arrays from the aligned allocator (its pools, huge pages):
     * glibc's 4 KB pages cost a fault each on first touch, about 10 us on
     * the benchmark VM (a fresh 55 MB value array 130 ms) */
    m->rp = br_calloc_aligned(((size_t)rows + 1) * sizeof(int64_t));
    if (cap < 1) cap = 1;
    m->ci = br_alloc_aligned((size_t)cap * sizeof(int32_t));
    m->v = br_alloc_aligned((size_t)cap * sizeof(double));
    if (!m->rp || !m->ci || !m->v) return oom(m, e, "sparse", rows, cols);
    m->cap = cap;
    return m;
}

MB *mb_empty(int64_t rows, int64_t cols, BrErr *e)
{
    return mb_keep_sparse(rows, cols, 0) || (double)rows * (double)cols == 0
               ? mb_sp_alloc(rows, cols, 1, e) : mb_dense(rows, cols, e);
}

MB *mb_fill(int64_t rows, int64_t cols, double val, BrErr *e)
{
    if (val == 0) {
        MB *z = mb_empty(rows, cols, e);
        mb_fin_set(z, false);   /* no stored value */
        return z;
    }
    MB *m = mb_dense_uninit(rows, cols, e);
    if (!m) return NULL;
    int64_t n = rows * cols;
    for (int64_t i = 0; i < n; i++) m->d[i] = val;
    m->nnz = n;
    mb_fin_set(m, !isfinite(val));   /* every value is val */
    return m;
}

MB *mb_scalar(double val, BrErr *e)
{
    MB *m = mb_dense(1, 1, e);
    if (!m) return NULL;
    m->d[0] = val;
    m->nnz = val != 0;
    return m;
}

MB *mb_sp_new(int64_t rows, int64_t cols, int64_t cap_hint, BrErr *e)
{
    MB *m = mb_sp_alloc(rows, cols, cap_hint < 16 ? 16 : cap_hint, e);
    if (m) m->build_row = 0;
    return m;
}

int mb_sp_reserve(MB *m, int64_t n, BrErr *e)
{
    if (n <= m->cap) return 0;
    assert(!(m->ext & (MB_EXT_CI | MB_EXT_V)));   /* borrowed arrays never grow */
    int64_t nc = m->cap * 2;
    if (nc < n) nc = n;
    int32_t *ci = br_realloc_aligned(m->ci, (size_t)m->cap * sizeof(int32_t), (size_t)nc * sizeof(int32_t));
    if (!ci) return br_err(e, BR_ENOMEM, "out of memory growing sparse matrix");
    m->ci = ci;
    double *v = br_realloc_aligned(m->v, (size_t)m->cap * sizeof(double), (size_t)nc * sizeof(double));
    if (!v) return br_err(e, BR_ENOMEM, "out of memory growing sparse matrix");
    m->v = v;
    m->cap = nc;
    return 0;
}

int mb_sp_append(MB *m, int64_t r, int64_t c, double val, BrErr *e)
{
    if (r < m->build_row || r >= m->rows || c < 0 || c >= m->cols)
        return br_err(e, BR_EINDEX, "sparse append out of order at (%lld,%lld)",
                      (long long)r, (long long)c);
    if (val == 0) return 0;
    /* close rows before r */
    while (m->build_row < r) {
        m->rp[m->build_row + 1] = m->nnz;
        m->build_row++;
    }
    if (m->nnz == m->cap && mb_sp_reserve(m, m->nnz + 1, e)) return e->code;
    m->ci[m->nnz] = (int32_t)c;
    m->v[m->nnz] = val;
    m->nnz++;
    return 0;
}

void mb_sp_finish(MB *m)
{
    assert(m->sparse && m->build_row <= m->rows);
    while (m->build_row < m->rows) {
        m->rp[m->build_row + 1] = m->nnz;
        m->build_row++;
    }
    m->rp[m->rows] = m->nnz;
    assert(mb_valid(m, true));
}

static int64_t fin_scans;

int64_t mb_fin_scans(void) { return __atomic_load_n(&fin_scans, __ATOMIC_RELAXED); }

void mb_fin_set(MB *m, bool nonfinite)
{
    if (m && !m->ext) __atomic_store_n(&m->fin, nonfinite ? MB_FIN_NONFINITE : MB_FIN_FINITE, __ATOMIC_RELAXED);
}

/* The copies derived from the block's values (MB.cla_copy, MB.t_copy). */
static void drop_copies(MB *m)
{
    MB *c = __atomic_exchange_n(&m->cla_copy, NULL, __ATOMIC_ACQ_REL);
    if (c && c != m) mb_release(c);
    mb_release(__atomic_exchange_n(&m->t_copy, NULL, __ATOMIC_ACQ_REL));
}

void mb_values_changed(MB *m)
{
    if (!m) return;
    __atomic_store_n(&m->fin, MB_FIN_UNKNOWN, __ATOMIC_RELAXED);
    drop_copies(m);
}

/* Reads every stored value of a host block. */
static bool scan_nonfinite(const MB *m)
{
    const double *x = m->sparse ? m->v : m->d;
    int64_t n = m->sparse ? m->nnz : m->rows * m->cols;
    int bad = 0;
    #pragma omp parallel for schedule(static) num_threads(br_threads()) if (br_par(n)) reduction(|:bad)
    for (int64_t i = 0; i < n; i++) bad |= !isfinite(x[i]);
    return bad != 0;
}

bool mb_has_nonfinite(const MB *m)
{
    if (!m) return false;
    if (m->cmb) return cmb_has_nonfinite(m);
    if (!host_or_warn(m)) return true;
    /* (parfor workers may ask about one shared block at once: they store
     * the same answer) */
    uint8_t f = mb_fin_known(m);
#ifndef BRAID_VERIFY_FIN
    if (f != MB_FIN_UNKNOWN) return f == MB_FIN_NONFINITE;
#endif
    /* (the sanitizer build's verifying rescans are not counted: the
     * count is of the scans the flag could not spare) */
    if (f == MB_FIN_UNKNOWN) __atomic_add_fetch(&fin_scans, 1, __ATOMIC_RELAXED);
    bool bad = scan_nonfinite(m);
#ifdef BRAID_VERIFY_FIN
    if (f != MB_FIN_UNKNOWN && (f == MB_FIN_NONFINITE) != bad) {
        fprintf(stderr, "braid: internal error: a %lldx%lld block's finiteness flag says %s, its values say %s "
                "(an update of its values did not call mb_values_changed)\n",
                (long long)m->rows, (long long)m->cols, f == MB_FIN_FINITE ? "finite" : "non-finite",
                bad ? "non-finite" : "finite");
        abort();
    }
#endif
    mb_fin_set((MB *)m, bad);
    return bad;
}

bool mb_valid(const MB *m, bool full)
{
    if (!m || m->rows < 0 || m->cols < 0 || m->nnz < 0 || m->refs <= 0) return false;
    if (m->cmb) return !m->d && !m->rp && !m->sparse;
    /* device-only (or landing: its arrays are filled under the GPU
     * backend's lock, then dev is cleared): no host arrays to check */
    if (__atomic_load_n(&m->dev, __ATOMIC_ACQUIRE)) return true;
    if (!m->sparse) return m->d || m->rows * m->cols == 0;
    if (!m->rp || m->rp[0] != 0 || m->rp[m->rows] != m->nnz || m->nnz > m->cap) return false;
    if (!full) return true;
    for (int64_t i = 0; i < m->rows; i++) {
        if (m->rp[i] > m->rp[i + 1]) return false;
        for (int64_t k = m->rp[i]; k < m->rp[i + 1]; k++)
            if (m->ci[k] < 0 || m->ci[k] >= m->cols || (k > m->rp[i] && m->ci[k] <= m->ci[k - 1])) return false;
    }
    return true;
}

MB *mb_retain(MB *m)
{
    if (m) {
        assert(m->refs > 0);
        __atomic_add_fetch(&m->refs, 1, __ATOMIC_RELAXED);
    }
    return m;
}

static void mb_free_data(MB *m)
{
    if (!(m->ext & MB_EXT_D)) br_free_aligned(m->d);
    if (!(m->ext & MB_EXT_RP)) br_free_aligned(m->rp);
    if (!(m->ext & MB_EXT_CI)) br_free_aligned(m->ci);
    if (!(m->ext & MB_EXT_V)) br_free_aligned(m->v);
    if (m->ext_free) m->ext_free(m->ext_ctx);
    m->ext = 0; m->ext_free = NULL; m->ext_ctx = NULL;
    m->d = NULL; m->rp = NULL; m->ci = NULL; m->v = NULL; m->cap = 0;
}

void mb_release(MB *m)
{
    if (!m) return;
    int left = __atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL);
    assert(left >= 0);   /* released more often than retained */
    if (left > 0) return;
    drop_copies(m);
    mb_free_data(m);
    cmb_free(m->cmb);
    free(m);
}

/* r, a new block of m's values, takes m's finiteness flag (a borrowed
 * or compressed m's is not kept: mb.h) */
static MB *keep_fin(MB *r, const MB *m)
{
    uint8_t f = mb_fin_known(m);
    if (r && f != MB_FIN_UNKNOWN) mb_fin_set(r, f == MB_FIN_NONFINITE);
    return r;
}

MB *mb_copy(const MB *m, BrErr *e)
{
    assert(mb_valid(m, false));
    if (m->cmb) return cmb_decompress(m, e);
    if (mb_host(m, e)) return NULL;
    if (!m->sparse) {
        MB *r = mb_dense_uninit(m->rows, m->cols, e);
        if (!r) return NULL;
        if (m->rows > 0 && m->cols > 0)
            memcpy(r->d, m->d, (size_t)(m->rows * m->cols) * sizeof(double));
        r->nnz = m->nnz;
        return keep_fin(r, m);
    }
    MB *r = mb_sp_alloc(m->rows, m->cols, m->nnz, e);
    if (!r) return NULL;
    memcpy(r->rp, m->rp, (size_t)(m->rows + 1) * sizeof(int64_t));
    memcpy(r->ci, m->ci, (size_t)m->nnz * sizeof(int32_t));
    memcpy(r->v, m->v, (size_t)m->nnz * sizeof(double));
    r->nnz = m->nnz;
    r->build_row = r->rows;
    return keep_fin(r, m);
}

/* A compressed m decompressed into *tmp (caller releases), else m. */
static const MB *plain(const MB *m, MB **tmp, BrErr *e)
{
    *tmp = NULL;
    if (!m->cmb) return m;
    return *tmp = cmb_decompress(m, e);
}

MB *mb_to_dense(const MB *m, BrErr *e)
{
    assert(mb_valid(m, false));
    if (mb_host(m, e)) return NULL;
    if (m->cmb) {
        MB *r = cmb_decompress(m, e);
        if (r && mb_make_dense(r, e)) { mb_release(r); return NULL; }
        return r;
    }
    if (!m->sparse) return mb_copy(m, e);
    MB *r = mb_dense(m->rows, m->cols, e);
    if (!r) return NULL;
    /* indexed, not a row pointer: a matrix of no columns has no array */
    for (int64_t i = 0; i < m->rows; i++)
        for (int64_t k = m->rp[i]; k < m->rp[i + 1]; k++) r->d[i * m->cols + m->ci[k]] = m->v[k];
    r->nnz = m->nnz;
    return keep_fin(r, m);
}

MB *mb_to_sparse(const MB *m, BrErr *e)
{
    assert(mb_valid(m, false));
    if (mb_host(m, e)) return NULL;
    if (m->cmb) {
        MB *r = cmb_decompress(m, e);
        if (r && mb_make_sparse(r, e)) { mb_release(r); return NULL; }
        return r;
    }
    if (m->sparse) return mb_copy(m, e);
    MB *r = mb_sp_alloc(m->rows, m->cols, m->nnz, e);
    if (!r) return NULL;
    int64_t k = 0;
    for (int64_t i = 0; i < m->rows; i++) {
        for (int64_t j = 0; j < m->cols; j++) {
            double x = m->d[i * m->cols + j];
            if (x != 0) { r->ci[k] = (int32_t)j; r->v[k] = x; k++; }
        }
        r->rp[i + 1] = k;
    }
    r->nnz = k;
    r->build_row = r->rows;
    return keep_fin(r, m);
}

void mb_dev_fill(MB *m, MB *src)
{
    assert(m->dev && src->refs == 1 && !src->dev && m->rows == src->rows && m->cols == src->cols);
    m->sparse = src->sparse; m->d = src->d; m->rp = src->rp; m->ci = src->ci;
    m->v = src->v; m->cap = src->cap; m->nnz = src->nnz; m->build_row = src->build_row;
    src->d = NULL; src->rp = NULL; src->ci = NULL; src->v = NULL;
    mb_release(src);
    mb_values_changed(m);
    __atomic_store_n(&m->dev, false, __ATOMIC_RELEASE);
}

/* Move the representation of src into m (both exclusively owned). */
static void mb_take(MB *m, MB *src)
{
    assert(m->refs == 1 && src->refs == 1 && m->rows == src->rows && m->cols == src->cols);
    mb_free_data(m);
    m->sparse = src->sparse; m->d = src->d; m->rp = src->rp; m->ci = src->ci;
    m->v = src->v; m->cap = src->cap; m->nnz = src->nnz; m->build_row = src->build_row;
    src->d = NULL; src->rp = NULL; src->ci = NULL; src->v = NULL;
    mb_release(src);
}

int mb_make_dense(MB *m, BrErr *e)
{
    if (!m->sparse) return 0;
    MB *r = mb_to_dense(m, e);
    if (!r) return e->code;
    mb_take(m, r);
    assert(!m->sparse && mb_valid(m, false));
    return 0;
}

int mb_make_sparse(MB *m, BrErr *e)
{
    if (m->sparse) return 0;
    MB *r = mb_to_sparse(m, e);
    if (!r) return e->code;
    mb_take(m, r);
    assert(m->sparse && mb_valid(m, false));
    return 0;
}

int64_t mb_recount_nnz(MB *m)
{
    if (m->sparse) return m->nnz = m->rp[m->rows];
    int64_t n = m->rows * m->cols, c = 0;
    const double *d = m->d;
    for (int64_t i = 0; i < n; i++) c += d[i] != 0;
    return m->nnz = c;
}

double mb_est_dense(int64_t rows, int64_t cols)
{
    return 64.0 + 8.0 * (double)rows * (double)cols;
}

double mb_est_sparse(int64_t rows, int64_t cols, int64_t nnz)
{
    (void)cols;
    return 64.0 + 8.0 * ((double)rows + 1) + 12.0 * (double)nnz;
}

bool mb_should_be_sparse(int64_t rows, int64_t cols, int64_t nnz)
{
    double cells = (double)rows * (double)cols;
    if (cells == 0) return false;
    double sp = (double)nnz / cells;
    return sp < MB_SPARSITY_TURN_POINT &&
           mb_est_sparse(rows, cols, nnz) < mb_est_dense(rows, cols);
}

bool mb_keep_sparse(int64_t rows, int64_t cols, int64_t nnz)
{
    /* empty is cheap, unless its row pointers are as large as the dense
     * array (a column vector: each consumer would make a dense copy) */
    if (nnz == 0 && (double)rows * (double)cols > 0)
        return mb_est_sparse(rows, cols, 0) < mb_est_dense(rows, cols);
    return mb_should_be_sparse(rows, cols, nnz);
}

double mb_est_size(int64_t rows, int64_t cols, int64_t nnz)
{
    return mb_should_be_sparse(rows, cols, nnz) ? mb_est_sparse(rows, cols, nnz)
                                                : mb_est_dense(rows, cols);
}

size_t mb_bytes(const MB *m)
{
    if (m->cmb) return cmb_bytes(m);
    if (!m->sparse) return sizeof *m + (size_t)(m->rows * m->cols) * sizeof(double);
    return sizeof *m + (size_t)(m->rows + 1) * sizeof(int64_t) +
           (size_t)m->cap * (sizeof(int32_t) + sizeof(double));
}

int mb_examine(MB *m, BrErr *e)
{
    assert(mb_valid(m, false));
    bool want = mb_keep_sparse(m->rows, m->cols, m->nnz);
    if (want == m->sparse) return 0;
    return want ? mb_make_sparse(m, e) : mb_make_dense(m, e);
}

double mb_get(const MB *m, int64_t r, int64_t c)
{
    assert(r >= 0 && r < m->rows && c >= 0 && c < m->cols);
    if (m->cmb) {
        BrErr e;
        MB *row = cmb_decompress_rows(m, r, r + 1, &e);
        double v = row ? mb_get(row, 0, c) : NAN;
        mb_release(row);
        return v;
    }
    if (!host_or_warn(m)) return NAN;
    if (!m->sparse) return m->d[r * m->cols + c];
    int64_t lo = m->rp[r], hi = m->rp[r + 1];
    while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        if (m->ci[mid] < c) lo = mid + 1;
        else if (m->ci[mid] > c) hi = mid;
        else return m->v[mid];
    }
    return 0;
}

bool mb_equal(const MB *a, const MB *b, double rtol)
{
    if (a->rows != b->rows || a->cols != b->cols) return false;
    if (a->cmb || b->cmb) {
        BrErr e;
        MB *ta, *tb;
        const MB *pa = plain(a, &ta, &e), *pb = plain(b, &tb, &e);
        bool eq = pa && pb && mb_equal(pa, pb, rtol);
        mb_release(ta);
        mb_release(tb);
        return eq;
    }
    for (int64_t i = 0; i < a->rows; i++)
        for (int64_t j = 0; j < a->cols; j++) {
            double x = mb_get(a, i, j), y = mb_get(b, i, j);
            if (isnan(x) || isnan(y)) { if (isnan(x) != isnan(y)) return false; continue; }
            if (x == y) continue;
            /* an infinity equals only itself (the relative test below
             * would take Inf for any finite value or for -Inf) */
            if (isinf(x) || isinf(y)) return false;
            double s = fmax(fmax(fabs(x), fabs(y)), 1.0);
            if (!(fabs(x - y) <= rtol * s)) return false;
        }
    return true;
}

void mb_dump(const MB *m, const char *name)
{
    fprintf(stderr, "%s: %lldx%lld nnz=%lld %s\n", name ? name : "M",
            (long long)m->rows, (long long)m->cols, (long long)m->nnz,
            m->cmb ? "compressed" : m->sparse ? "sparse" : "dense");
    for (int64_t i = 0; i < m->rows && i < 20; i++) {
        for (int64_t j = 0; j < m->cols && j < 20; j++)
            fprintf(stderr, " %g", mb_get(m, i, j));
        fprintf(stderr, "\n");
    }
}

MB *mb_oom(MB *m, BrErr *e)
{
    mb_release(m);
    br_err(e, BR_ENOMEM, "out of memory");
    return NULL;
}

MB *mb_finish(MB *m, BrErr *e)
{
    if (!m) return NULL;
    if (mb_examine(m, e)) { mb_release(m); return NULL; }
    return m;
}

void mb_sp_done(MB *m, int64_t nnz)
{
    m->nnz = nnz;
    m->rp[m->rows] = nnz;
    m->build_row = m->rows;
}

double *mb_cells_rowmajor(const MB *a)
{
    if (a->cmb) {
        BrErr e;
        MB *t = cmb_decompress(a, &e);
        double *o = t ? mb_cells_rowmajor(t) : NULL;
        mb_release(t);
        return o;
    }
    if (!host_or_warn(a)) return NULL;
    int64_t n = a->rows * a->cols;
    if (!a->sparse) {
        double *o = br_malloc((size_t)n * sizeof(double));
        if (o && n) memcpy(o, a->d, (size_t)n * sizeof(double));
        return o;
    }
    double *o = br_calloc((size_t)n, sizeof(double));
    if (!o) return NULL;
    for (int64_t i = 0; i < a->rows; i++)
        for (int64_t k = a->rp[i]; k < a->rp[i + 1]; k++)
            o[i * a->cols + a->ci[k]] = a->v[k];
    return o;
}

/* Stable sort of the entries (c[i], w[i]), i < n, by c: insertion sort
 * for short runs, merge sort through tc/tw (n entries each) otherwise. */
void mb_sort_entries(int32_t *c, double *w, int64_t n, int32_t *tc, double *tw)
{
    if (n <= 32) {
        for (int64_t i = 1; i < n; i++) {
            int32_t cv = c[i];
            double wv = w[i];
            int64_t j = i;
            for (; j > 0 && c[j - 1] > cv; j--) { c[j] = c[j - 1]; w[j] = w[j - 1]; }
            c[j] = cv;
            w[j] = wv;
        }
        return;
    }
    int64_t h = n / 2;
    mb_sort_entries(c, w, h, tc, tw);
    mb_sort_entries(c + h, w + h, n - h, tc, tw);
    int64_t i = 0, j = h, k = 0;
    while (i < h && j < n) {
        if (c[j] < c[i]) { tc[k] = c[j]; tw[k++] = w[j++]; }
        else { tc[k] = c[i]; tw[k++] = w[i++]; }
    }
    while (i < h) { tc[k] = c[i]; tw[k++] = w[i++]; }
    while (j < n) { tc[k] = c[j]; tw[k++] = w[j++]; }
    memcpy(c, tc, (size_t)n * sizeof *c);
    memcpy(w, tw, (size_t)n * sizeof *w);
}
