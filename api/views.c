/* views.c: the embedding API's zero-copy paths (include/braid.h): dense
 * and CSR inputs that borrow the caller's arrays (matrix blocks with
 * borrowed storage, matrix/mb.h), column-major and CSC inputs borrowed
 * as the row-major / CSR block of their transpose and read by the script
 * as t(block) (api.c's transposed program, docs/python.md), strided and
 * non-canonical inputs copied into braid's form, and output views that
 * hold a reference to the block. */
#include "../matrix/cmb.h"
#include <stdlib.h>
#include <string.h>

#include "script.h"

/* A borrowed block: ext arrays are the caller's; release runs when the
 * block is freed (or now, when there is no memory for the header). */
static MB *borrowed(int64_t rows, int64_t cols, unsigned ext, BraidRelease release, void *ctx, BrErr *e)
{
    MB *m = mb_dense_uninit(0, 0, e);   /* the header only: no storage */
    if (!m) { release(ctx); return NULL; }
    m->rows = rows;
    m->cols = cols;
    m->ext = ext;
    m->ext_free = release;
    m->ext_ctx = ctx;
    return m;
}

static int bad_dims(BraidScript *s, int64_t rows, int64_t cols)
{
    if (rows >= 0 && cols >= 0 && cols <= INT32_MAX) return 0;
    char m[200];
    snprintf(m, sizeof m, "invalid matrix dimensions %lldx%lld", (long long)rows, (long long)cols);
    return api_fail(s, m);
}

int braid_bind_matrix_view(BraidScript *s, const char *name, const double *data, int64_t rows,
                           int64_t cols, BraidRelease release, void *ctx)
{
    if (!release) return braid_bind_matrix(s, name, data, rows, cols);
    if (bad_dims(s, rows, cols) || (rows * cols > 0 && !data)) {
        release(ctx);
        return data ? -1 : api_fail(s, "no data");
    }
    BrErr e = {0};
    MB *m = borrowed(rows, cols, MB_EXT_D, release, ctx, &e);
    if (!m) return api_fail(s, e.msg);
    m->d = (double *)data;   /* never written: the binding keeps refs > 1 */
    mb_recount_nnz(m);
    return api_bind(s, name, val_matrix(m));
}

int braid_bind_matrix_view_colmajor(BraidScript *s, const char *name, const double *data, int64_t rows,
                                    int64_t cols, BraidRelease release, void *ctx)
{
    if (rows == 1 || cols == 1)   /* a vector: the same cells in either order */
        return braid_bind_matrix_view(s, name, data, rows, cols, release, ctx);
    if (!release) return braid_bind_matrix_strided(s, name, data, rows, cols, 1, rows);
    if (bad_dims(s, cols, rows) || (rows * cols > 0 && !data)) {
        release(ctx);
        return data ? -1 : api_fail(s, "no data");
    }
    BrErr e = {0};
    MB *m = borrowed(cols, rows, MB_EXT_D, release, ctx, &e);   /* row-major cols x rows */
    if (!m) return api_fail(s, e.msg);
    m->d = (double *)data;
    mb_recount_nnz(m);
    return api_bind_transposed(s, name, val_matrix(m));
}

int braid_bind_matrix_strided(BraidScript *s, const char *name, const double *data, int64_t rows,
                              int64_t cols, int64_t row_stride, int64_t col_stride)
{
    if (bad_dims(s, rows, cols)) return -1;
    BrErr e = {0};
    MB *m = mb_dense_uninit(rows, cols, &e);
    if (!m) return api_fail(s, e.msg);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) m->d[i * cols + j] = data[i * row_stride + j * col_stride];
    mb_recount_nnz(m);
    if (mb_examine(m, &e)) { mb_release(m); return api_fail(s, e.msg); }
    return api_bind(s, name, val_matrix(m));
}

/* ---- CSR ---- */

typedef struct Csr {
    int64_t rows, cols;
    const void *rp; int rp_bits;
    const void *ci; int ci_bits;
    const double *v;
    const char *form, *line, *index;   /* messages: "CSR", "row", "column" (CSC: swapped) */
} Csr;

static int64_t csr_rp(const Csr *c, int64_t i)
{
    return c->rp_bits == 64 ? ((const int64_t *)c->rp)[i] : ((const int32_t *)c->rp)[i];
}

static int64_t csr_ci(const Csr *c, int64_t k)
{
    return c->ci_bits == 64 ? ((const int64_t *)c->ci)[k] : ((const int32_t *)c->ci)[k];
}

/* Checks the structure; *canonical: columns strictly ascending in every
 * row and no stored zeros (braid's CSR invariants, matrix/mb.h). */
static int csr_check(BraidScript *s, const Csr *c, bool *canonical)
{
    char m[300];
    *canonical = true;
    if (csr_rp(c, 0) != 0) {
        snprintf(m, sizeof m, "%s indptr[0] is not 0", c->form);
        return api_fail(s, m);
    }
    for (int64_t i = 0; i < c->rows; i++) {
        int64_t a = csr_rp(c, i), b = csr_rp(c, i + 1);
        if (b < a) {
            snprintf(m, sizeof m, "%s indptr decreases at %s %lld", c->form, c->line, (long long)i);
            return api_fail(s, m);
        }
        for (int64_t k = a; k < b; k++) {
            int64_t j = csr_ci(c, k);
            if (j < 0 || j >= c->cols) {
                snprintf(m, sizeof m, "%s %s index %lld out of range [0, %lld) in %s %lld", c->form, c->index,
                         (long long)j, (long long)c->cols, c->line, (long long)i);
                return api_fail(s, m);
            }
            if ((k > a && j <= csr_ci(c, k - 1)) || c->v[k] == 0) *canonical = false;
        }
    }
    return 0;
}

typedef struct Ent { int64_t j; double v; } Ent;

static int ent_cmp(const void *a, const void *b)
{
    int64_t x = ((const Ent *)a)->j, y = ((const Ent *)b)->j;
    return (x > y) - (x < y);
}

/* A copy in braid's form: each row sorted, duplicates summed, zeros
 * dropped. */
static MB *csr_copy(const Csr *c, BrErr *e)
{
    int64_t nnz = csr_rp(c, c->rows), w = 0, maxrow = 0;
    for (int64_t i = 0; i < c->rows; i++)
        if (csr_rp(c, i + 1) - csr_rp(c, i) > maxrow) maxrow = csr_rp(c, i + 1) - csr_rp(c, i);
    MB *m = mb_sp_alloc(c->rows, c->cols, nnz, e);
    Ent *row = malloc((size_t)(maxrow ? maxrow : 1) * sizeof *row);
    if (!m || !row) { free(row); return m ? mb_oom(m, e) : NULL; }
    for (int64_t i = 0; i < c->rows; i++) {
        int64_t a = csr_rp(c, i), n = csr_rp(c, i + 1) - a;
        for (int64_t k = 0; k < n; k++) row[k] = (Ent){csr_ci(c, a + k), c->v[a + k]};
        qsort(row, (size_t)n, sizeof *row, ent_cmp);
        for (int64_t k = 0; k < n;) {
            int64_t j = row[k].j;
            double sum = 0;
            for (; k < n && row[k].j == j; k++) sum += row[k].v;
            if (sum != 0) { m->ci[w] = (int32_t)j; m->v[w] = sum; w++; }
        }
        m->rp[i + 1] = w;
    }
    free(row);
    mb_sp_done(m, w);
    return mb_finish(m, e);
}

/* A block borrowing the arrays that already have braid's types. */
static MB *csr_borrow(const Csr *c, BraidRelease release, void *ctx, BrErr *e)
{
    unsigned ext = MB_EXT_CI | MB_EXT_V | (c->rp_bits == 64 ? MB_EXT_RP : 0);
    MB *m = borrowed(c->rows, c->cols, ext, release, ctx, e);
    if (!m) return NULL;
    m->sparse = true;
    m->ci = (int32_t *)c->ci;
    m->v = (double *)c->v;
    if (c->rp_bits == 64) m->rp = (int64_t *)c->rp;
    else {
        m->rp = br_alloc_aligned((size_t)(c->rows + 1) * sizeof(int64_t));
        if (!m->rp) return mb_oom(m, e);
        for (int64_t i = 0; i <= c->rows; i++) m->rp[i] = csr_rp(c, i);
    }
    m->nnz = m->cap = m->rp[c->rows];
    m->build_row = c->rows;
    return m;
}

static int bind_compressed(BraidScript *s, const char *name, int64_t rows, int64_t cols, const void *indptr,
                           int indptr_bits, const void *indices, int index_bits, const double *values,
                           BraidRelease release, void *ctx, bool transposed)
{
    Csr c = {rows, cols, indptr, indptr_bits, indices, index_bits, values, transposed ? "CSC" : "CSR",
             transposed ? "column" : "row", transposed ? "row" : "column"};
    bool canonical;
    int rc = -1;
    MB *m = NULL;
    BrErr e = {0};
    if ((indptr_bits != 32 && indptr_bits != 64) || (index_bits != 32 && index_bits != 64))
        api_fail(s, "CSR index widths must be 32 or 64 bits");
    else if (!bad_dims(s, rows, cols) && !csr_check(s, &c, &canonical)) {
        if (canonical && index_bits == 32 && release) {
            m = csr_borrow(&c, release, ctx, &e);
            release = NULL;   /* the block calls it now (or did, on failure) */
        } else
            m = csr_copy(&c, &e);
        rc = !m ? api_fail(s, e.msg)
           : transposed ? api_bind_transposed(s, name, val_matrix(m)) : api_bind(s, name, val_matrix(m));
    }
    if (release) release(ctx);
    return rc;
}

int braid_bind_csr(BraidScript *s, const char *name, int64_t rows, int64_t cols, const void *indptr,
                   int indptr_bits, const void *indices, int index_bits, const double *values,
                   BraidRelease release, void *ctx)
{
    return bind_compressed(s, name, rows, cols, indptr, indptr_bits, indices, index_bits, values, release, ctx,
                           false);
}

/* The CSC arrays of rows x cols are the CSR arrays of its transpose. */
int braid_bind_csc(BraidScript *s, const char *name, int64_t rows, int64_t cols, const void *indptr,
                   int indptr_bits, const void *indices, int index_bits, const double *values,
                   BraidRelease release, void *ctx)
{
    return bind_compressed(s, name, cols, rows, indptr, indptr_bits, indices, index_bits, values, release, ctx,
                           true);
}

/* ---- output views ---- */

int api_matrix_view(const Value *v, bool dense, BraidMatrix *out, BrErr *e)
{
    memset(out, 0, sizeof *out);
    MB *m;
    if (val_is_numeric(v)) m = mb_scalar(val_as_double(v), e);
    else if (v->kind != V_MATRIX) return br_err(e, BR_EARG, "output is not a matrix");
    else if (mb_host(v->m, e)) return e->code;   /* a GPU result still on the device */
    else if (v->m->cmb) m = dense ? mb_to_dense(v->m, e) : cmb_decompress(v->m, e);   /* compress(X) */
    else if (dense && v->m->sparse) m = mb_to_dense(v->m, e);
    else {
        /* only the results table holds it: no one else sees writes */
        bool alone = __atomic_load_n(&v->m->refs, __ATOMIC_ACQUIRE) == 1 && !v->m->ext;
        m = mb_retain(v->m);
        out->writable = alone;
    }
    if (!m) return e->code ? e->code : -1;
    if (m != v->m) {
        out->writable = true;
        mb_values_changed(m);   /* the caller may write the copy (a conversion kept v's flag) */
    }
    out->rows = m->rows;
    out->cols = m->cols;
    out->nnz = m->nnz;
    out->sparse = m->sparse;
    out->data = m->d;
    out->indptr = m->rp;
    out->indices = m->ci;
    out->values = m->v;
    out->handle = m;
    return 0;
}

int braid_get_matrix_view(BraidScript *s, const char *name, bool dense, BraidMatrix *out)
{
    memset(out, 0, sizeof *out);
    Value *v = st_get(&s->results, name);
    if (!v) return api_fail(s, "no such output (or the script did not assign it)");
    BrErr e = {0};
    return api_matrix_view(v, dense, out, &e) ? api_fail(s, e.msg) : 0;
}

void braid_matrix_free(BraidMatrix *m)
{
    if (!m) return;
    mb_release(m->handle);
    memset(m, 0, sizeof *m);
}

BraidKind api_kind(const Value *v)
{
    if (!v) return BRAID_NONE;
    switch (v->kind) {
    case V_MATRIX: return BRAID_MATRIX;
    case V_DOUBLE: return BRAID_DOUBLE;
    case V_INT: return BRAID_INT;
    case V_BOOL: return BRAID_BOOL;
    case V_STRING: return BRAID_STRING;
    case V_FRAME: return BRAID_FRAME;
    case V_LIST: return BRAID_LIST;
    case V_NONE: return BRAID_NONE;
    default: return BRAID_OTHER;
    }
}

BraidKind braid_output_kind(BraidScript *s, const char *name) { return api_kind(st_get(&s->results, name)); }
