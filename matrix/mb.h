/* mb.h: matrix blocks, braid's one in-memory matrix representation.
 *
 * A block is dense or sparse:
 *  - dense:  d[i*cols + j], row-major FP64, 64-byte aligned; d may be NULL
 *            only when rows*cols == 0.
 *  - sparse: CSR. rp[0..rows] row pointers, ci[k] column (0-based, sorted
 *            ascending within a row), v[k] value; rp always allocated
 *            (rows+1 entries). Explicit zeros are not stored by braid's
 *            kernels (mb_sp_append drops them).
 * An all-zero ("empty") block is a sparse block with nnz == 0: cheap.
 *
 * A third form, the compressed block (matrix/cmb.h, docs/cla.md), has cmb
 * set and no d/rp: only the operators that know it (kernels/cla*.c) are
 * given one; the interpreter decompresses it for all others. The functions
 * here that read cells (copies, conversions, mb_get, mb_equal,
 * mb_cells_rowmajor) accept it and decompress.
 * Borrowed storage: a block may view memory it does not own (a caller's
 * buffer bound through the embedding API without a copy). ext says which
 * arrays are borrowed (MB_EXT_D, MB_EXT_RP, MB_EXT_CI, MB_EXT_V); the
 * block never frees or reallocates those, and calls ext_free(ext_ctx) once
 * when it is freed. The caller keeps one reference for as long as the
 * binding lasts, so the runtime never sees such a block with refs == 1 and
 * never writes into it (copy-on-write, as for any shared block). Borrowed
 * dense data need not be 64-byte aligned (kernels check alignment before
 * using aligned paths).
 *
 * Device-only blocks (docs/gpu.md "Lazy copy-back"): a GPU result may
 * stay on the device; then dev is set, the block has no host arrays,
 * sparse tells the device copy's format (dense, or CSR), and nnz is an
 * upper bound (rows * cols, or the CSR copy's stored entries): the exact
 * count and the format rule are applied when the cells land on the host. mb_host lands them
 * (through the hook the GPU backend installs); the interpreter calls it
 * for the inputs of every instruction that runs on the CPU, and the
 * functions here that read cells (copies, conversions, mb_get, mb_equal,
 * mb_has_nonfinite, mb_cells_rowmajor) call it themselves.
 *
 * nnz is always exact (except device-only blocks, above). Blocks are reference counted (mb_retain/mb_release)
 * so the runtime can share them between variables; a block with refs > 1 is
 * treated as immutable (copy before writing: mb_copy).
 *
 * Building sparse blocks: mb_sp_new() then mb_sp_append() in row-major
 * order (rows ascending, columns ascending within a row), then
 * mb_sp_finish(). Kernels that know counts per row can instead allocate
 * with mb_sp_alloc() and fill rp/ci/v directly.
 */
#ifndef BRAID_MB_H
#define BRAID_MB_H

#include "../base/base.h"

struct CMB;

typedef struct MB {
    int64_t rows, cols;
    int64_t nnz;        /* exact number of non-zeros */
    bool sparse;
    double *d;          /* dense values (dense only) */
    int64_t *rp;        /* CSR row pointers, rows+1 (sparse only) */
    int32_t *ci;        /* CSR column indexes (sparse only) */
    double *v;          /* CSR values (sparse only) */
    int64_t cap;        /* capacity of ci/v in entries (sparse only) */
    int64_t build_row;  /* while building with mb_sp_append: current row */
    int refs;           /* reference count, starts at 1 */
    struct CMB *cmb;    /* compressed block (matrix/cmb.h), else NULL */
    /* a deferred compress()'s compressed copy of these values, shared by
     * every holder of the block (runtime/cla_rt.c): owned; the block
     * itself when compression kept it; set once (atomically), dropped by
     * mb_values_changed */
    struct MB *cla_copy;
    /* the block's transpose, kept by the first operator that wanted it
     * (k_transpose_kept, kernels/reorg.c: an Outer operator driven by the
     * columns of a loop-invariant W): owned; set once (atomically),
     * dropped by mb_values_changed and when the block is freed */
    struct MB *t_copy;
    unsigned ext;       /* MB_EXT_* bits: arrays borrowed, not owned */
    void (*ext_free)(void *ctx); /* called once when the block is freed */
    void *ext_ctx;
    bool dev;           /* device-only: cells on the GPU, not yet on the host */
    uint8_t fin;        /* MB_FIN_*: are the values known to be finite? */
} MB;

enum { MB_EXT_D = 1, MB_EXT_RP = 2, MB_EXT_CI = 4, MB_EXT_V = 8 };

/* The block's invariants, for assertions: sizes >= 0, refs > 0, dense
 * data present when there are cells, CSR row pointers from 0 to nnz.
 * full also walks the data (O(rows + nnz)): row pointers monotone,
 * columns in range and ascending within a row. */
bool mb_valid(const MB *m, bool full);

/* Does m hold a NaN or an infinity? Skipping the zeros of a sparse
 * operand of a multiplication is exact only when the other operands are
 * finite (0 * Inf and 0 * NaN are NaN: docs/DESIGN.md "NaN and Inf"). */
bool mb_has_nonfinite(const MB *m);

/* What is known of a block's values being finite (docs/DESIGN.md "NaN and
 * Inf", "Finiteness flag"). mb_has_nonfinite answers from it and saves
 * the answer of its scan in it, so that a product over a block with a zero
 * on the other side (k_mm_ieee_zeros) reads the block once, not twice.
 * New blocks start unknown; copies and conversions (mb_copy,
 * mb_to_dense, mb_to_sparse) keep their source's; producers that know
 * their values set it with mb_fin_set: readers, rand, seq, sample,
 * mb_fill, the elementwise kernels and products (in the
 * pass that counts their non-zeros), slices (k_slice); every update of the
 * values of an existing block (in-place left indexing, a where-loop's
 * result) calls mb_values_changed. Blocks borrowing a caller's storage
 * never keep it (the caller may change its buffer). The sanitizer build
 * (SAN=1, BRAID_VERIFY_FIN) rescans on every question and aborts when the
 * flag disagrees: a missed update shows in the tests, never as a wrong
 * number. */
enum { MB_FIN_UNKNOWN = 0, MB_FIN_FINITE = 1, MB_FIN_NONFINITE = 2 };
void mb_fin_set(MB *m, bool nonfinite);
/* The flag (MB_FIN_*) m's values may be taken by: m's own, unknown for a
 * block borrowing a caller's storage or a compressed one (its
 * dictionaries answer: mb_has_nonfinite). (Parfor workers may store one
 * shared block's answer at once: read atomically.) */
static inline uint8_t mb_fin_known(const MB *m)
{
    return m->ext || m->cmb ? MB_FIN_UNKNOWN : __atomic_load_n(&m->fin, __ATOMIC_RELAXED);
}
void mb_values_changed(MB *m);
/* Scans of values mb_has_nonfinite made (the flag was unknown), for tests
 * and benchmarks. */
int64_t mb_fin_scans(void);

/* The GPU backend's landing hook: copies a device-only block's cells to
 * the host (exact nnz, format rule) and clears dev; 0 or -1 with e set. */
extern int (*mb_dev_land)(MB *m, BrErr *e);
/* Makes m's cells readable on the host: 0 at once for a host block. */
int mb_host(const MB *m, BrErr *e);
/* A device-only block shell (dev set, no host arrays), refs 1. */
MB *mb_dev_shell(int64_t rows, int64_t cols, BrErr *e);
/* The landing's last step: src's arrays (a host block, refs 1, released
 * here) become device-only m's, then dev is cleared. */
void mb_dev_fill(MB *m, MB *src);

/* Sparsity below which a block may be sparse (SystemDS's rule). */
#define MB_SPARSITY_TURN_POINT 0.4

/* Constructors. All return a block with refs == 1, or NULL with e set.
 * Caller owns the block (release with mb_release). */
MB *mb_dense(int64_t rows, int64_t cols, BrErr *e);        /* zeroed */
MB *mb_dense_uninit(int64_t rows, int64_t cols, BrErr *e); /* not zeroed */
/* all zeros, nnz 0: sparse, but dense where the row pointers would be as
 * large as the dense array (a column vector; mb_keep_sparse) */
MB *mb_empty(int64_t rows, int64_t cols, BrErr *e);
MB *mb_fill(int64_t rows, int64_t cols, double val, BrErr *e);
MB *mb_scalar(double val, BrErr *e);                       /* 1x1 dense */
/* Sparse with capacity for cap entries; rp zeroed. */
MB *mb_sp_alloc(int64_t rows, int64_t cols, int64_t cap, BrErr *e);

/* Sparse building (see above). Append returns 0 or an error code. */
MB *mb_sp_new(int64_t rows, int64_t cols, int64_t cap_hint, BrErr *e);
int mb_sp_append(MB *m, int64_t r, int64_t c, double val, BrErr *e);
void mb_sp_finish(MB *m);
/* Ensure capacity for at least n entries. */
int mb_sp_reserve(MB *m, int64_t n, BrErr *e);

/* Kernel epilogues. mb_oom releases m, reports out of memory and returns
 * NULL; mb_finish picks m's format by the rule (NULL, m released, on an
 * error or when m is NULL); mb_sp_done closes a CSR block whose rp/ci/v a
 * kernel filled directly with nnz entries. */
MB *mb_oom(MB *m, BrErr *e);
MB *mb_finish(MB *m, BrErr *e);
void mb_sp_done(MB *m, int64_t nnz);

MB *mb_retain(MB *m);
void mb_release(MB *m);   /* frees at refs == 0; NULL is fine */

/* Copies and conversions (new blocks, caller owns). */
/* The copies and conversions keep m's finiteness flag (not a borrowed
 * or compressed m's): a caller that writes into one calls
 * mb_values_changed (k_lix, k_lix_scalar, parfor's result merge, the
 * LAPACK kernels' results, a where-loop's result, a writable view). */
MB *mb_copy(const MB *m, BrErr *e);
MB *mb_to_dense(const MB *m, BrErr *e);
MB *mb_to_sparse(const MB *m, BrErr *e);
/* In-place format change of a block the caller owns exclusively. */
int mb_make_dense(MB *m, BrErr *e);
int mb_make_sparse(MB *m, BrErr *e);

/* Recount nnz of a dense block (after a kernel wrote d). */
int64_t mb_recount_nnz(MB *m);
/* Stable sort of the entries (c[i], w[i]), i < n, by c (a CSR row's
 * columns and values): insertion sort for short runs, merge sort through
 * tc/tw (room for n entries each) otherwise. */
void mb_sort_entries(int32_t *c, double *w, int64_t n, int32_t *tc, double *tw);
/* Choose the format by the rule: sparse when sparsity < 0.4 and the sparse
 * form is smaller; converts in place. Call after kernels that change nnz. */
int mb_examine(MB *m, BrErr *e);
bool mb_should_be_sparse(int64_t rows, int64_t cols, int64_t nnz);
/* mb_examine's rule: mb_should_be_sparse, and an empty matrix is sparse
 * whenever its row pointers are smaller than the dense array (not a
 * column vector) */
bool mb_keep_sparse(int64_t rows, int64_t cols, int64_t nnz);

/* The cells of m in row-major order as a new array of rows*cols doubles
 * (caller frees with free), or NULL when out of memory. */
double *mb_cells_rowmajor(const MB *m);

/* Cell access (slow paths, tests, printing). */
double mb_get(const MB *m, int64_t r, int64_t c);

/* The first position p in [lo, hi) of a CSR row's column indexes ci
 * (ascending) with ci[p] >= c; hi when none. */
static inline int64_t mb_csr_lower(const int32_t *ci, int64_t lo, int64_t hi, int64_t c)
{
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (ci[mid] < c) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}
/* Set a cell of an exclusively owned dense block (convert first). */
static inline void mb_dset(MB *m, int64_t r, int64_t c, double v) {
    m->d[r * m->cols + c] = v;
}

/* Memory estimates in bytes (the optimizer's size model). */
double mb_est_dense(int64_t rows, int64_t cols);
double mb_est_sparse(int64_t rows, int64_t cols, int64_t nnz);
double mb_est_size(int64_t rows, int64_t cols, int64_t nnz); /* chosen fmt */
size_t mb_bytes(const MB *m);           /* actual bytes of this block */

/* Equality within tolerance (tests): |a-b| <= tol*max(|a|,|b|,1); NaN==NaN. */
bool mb_equal(const MB *a, const MB *b, double rtol);
/* Debug print to stderr. */
void mb_dump(const MB *m, const char *name);

#endif
