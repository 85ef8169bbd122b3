/* ops.c: the backend's operators over host blocks: inputs from the pool
 * (uploaded on a miss), one or two launches of the fixed kernels (or a
 * CLBlast call for dense products), the result a device-only block
 * registered in the pool (the next operator finds it on the device; the
 * host gets the cells when it reads them: pool.c). Sparse inputs: CSR
 * results where the operator keeps the sparse structure (a sparse
 * operand of a multiplication-like binary operator, sparse-safe unary
 * operators and scalars); the other elementwise operators, ifelse, the
 * aggregates, cumulative aggregates, slices and transposes read the CSR
 * arrays in their own kernel (clsrc.c's MAT operands) and write a dense
 * result; products and tsmm over a CSR operand run CSR kernels (csr_mm,
 * csr_csr_mm, dense_csr_mm, csr_tmm, tmm_csrb, csr_tsmm_r), dense ones
 * CLBlast. Left indexing reads a CSR target or source as CSR
 * (lix_rows), CLA's UNC groups a CSR block (cla_unc_csr). */
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_int.h"
#include "../matrix/cmb.h"
#include <clblast_c.h>

/* Aggregate codes of clsrc.c's kernels. */
enum { AG_SUM, AG_SUMSQ, AG_MIN, AG_MAX };

/* Every operator: context, lock, dead entries out; the end unpins. */
static bool begin(BrErr *e)
{
    if (gpu_init(e)) return false;
    pthread_mutex_lock(&gpu_lock);
    gpu_pool_trim();
    return true;
}

static MB *end(MB *r)
{
    gpu_unpin_all();
    if (r) gpu_st.ops++;
    pthread_mutex_unlock(&gpu_lock);
    return r;
}

static cl_kernel K(GpuKernel k) { return gpu_ctx.k[k]; }

/* A kernel's MAT operand (clsrc.c): a dense buffer (its row pointers
 * and columns unread: the buffer again) or a CSR copy's three arrays. */
typedef struct DevMat { cl_mem v, rp, ci; cl_int sp; } DevMat;

static DevMat dev_mat(const GpuBuf *b)
{
    return b->sparse ? (DevMat){b->v, b->rp, b->ci, 1} : (DevMat){b->d, b->d, b->d, 0};
}

/* gpu_args' four (size, pointer) pairs of a MAT operand */
#define MAT_ARGS(m) sizeof(cl_mem), &(m).v, sizeof(cl_mem), &(m).rp, sizeof(cl_mem), &(m).ci, sizeof(cl_int), &(m).sp

/* A dense device view of an input: its own buffer, or (sparse) a new one
 * filled by csr_to_dense, which *tmp then holds for the caller. */
cl_mem gpu_dense_view(const MB *m, const GpuBuf *b, cl_mem *tmp, BrErr *e)
{
    *tmp = NULL;
    if (!b->sparse) return b->d;
    cl_mem d = gpu_alloc((size_t)(m->rows * m->cols) * sizeof(double), e);
    if (!d) return NULL;
    gpu_st.expand_bytes += m->rows * m->cols * (int64_t)sizeof(double);
    cl_long r = m->rows, c = m->cols;
    if (gpu_args(K(K_CSR_TO_DENSE), e, sizeof r, &r, sizeof c, &c, sizeof(cl_mem), &b->rp, sizeof(cl_mem), &b->ci,
                 sizeof(cl_mem), &b->v, sizeof(cl_mem), &d, (size_t)0) ||
        gpu_launch1(K(K_CSR_TO_DENSE), (size_t)m->rows, 0, e)) {
        gpu_free(d);
        return NULL;
    }
    *tmp = d;
    return d;
}

/* The dense result in d (owned: kept by the pool or released) as a host
 * block with exact nnz and the CPU's format rule. */
MB *gpu_dense_result(int64_t rows, int64_t cols, cl_mem d, BrErr *e)
{
    /* device-only: no copy to the host until the host reads it (pool.c
     * lands it then, with the exact nnz and the format rule) */
    MB *r = mb_dev_shell(rows, cols, e);
    if (!r) { gpu_free(d); return NULL; }
    GpuBuf b = {.d = d};
    if (!gpu_put(r, &b)) { mb_release(r); return br_err(e, BR_ENOMEM, "out of memory"), NULL; }
    return r;
}

/* A sparse result with the structure of the CSR device copy ab (of a
 * block of a's shape) and the values in v (owned: kept by the pool with
 * the new block, or released): device-only, as dense results are. Its
 * device copy shares ab's row pointers and columns and may hold
 * explicit zeros (f(x) = 0 for a stored x); the landing drops them and
 * applies the format rule (pool.c). */
MB *gpu_csr_result(const MB *a, const GpuBuf *ab, cl_mem v, BrErr *e)
{
    MB *r = mb_dev_shell(a->rows, a->cols, e);
    if (!r) { gpu_free(v); return NULL; }
    r->sparse = true;   /* the device copy's format, no host arrays */
    r->nnz = ab->nnz;   /* an upper bound until it lands */
    if (!gpu_share(ab->rp)) { mb_release(r); gpu_free(v); return br_err(e, BR_ENOMEM, "out of memory"), NULL; }
    if (!gpu_share(ab->ci)) {
        gpu_free(ab->rp);
        mb_release(r);
        gpu_free(v);
        return br_err(e, BR_ENOMEM, "out of memory"), NULL;
    }
    GpuBuf b = {.rp = ab->rp, .ci = ab->ci, .v = v, .sparse = true, .nnz = ab->nnz};
    if (!gpu_put(r, &b)) { mb_release(r); return br_err(e, BR_ENOMEM, "out of memory"), NULL; }
    return r;
}

static cl_mem out_buf(int64_t cells, BrErr *e) { return gpu_alloc((size_t)cells * sizeof(double), e); }

/* The cells per work-item of the cell by cell kernels (clsrc.c SEG):
 * GPU_CSR_SEG of a row where an operand is CSR (its cursor opened once
 * per segment by a binary search), one over dense operands (a work-item
 * per cell, coalesced) */
static cl_long seg_of(bool csr) { return csr ? GPU_CSR_SEG : 1; }

/* The work-items of a rows x cols iteration in segments of seg */
static size_t seg_items(int64_t rows, int64_t cols, cl_long seg) { return (size_t)(rows * ((cols + seg - 1) / seg)); }

MB *gpu_unary(OpCode op, const MB *a, BrErr *e)
{
    if (op_info[op].kind != OK_UNARY || a->cmb || a->rows * a->cols == 0) return NULL;
    if (!begin(e)) return NULL;
    GpuBuf ab;
    MB *r = NULL;
    cl_int opi = op;
    if (gpu_get(a, &ab, e)) return end(NULL);
    if (ab.sparse && (op_info[op].flags & OF_SAFE)) {
        cl_long nnz = ab.nnz;
        cl_mem v = out_buf(ab.nnz, e);
        if (!v) return end(NULL);
        if (gpu_args(K(K_CSR_UNARY), e, sizeof opi, &opi, sizeof nnz, &nnz, sizeof(cl_mem), &ab.v,
                     sizeof(cl_mem), &v, (size_t)0) ||
            gpu_launch1(K(K_CSR_UNARY), (size_t)nnz, 0, e)) {
            gpu_free(v);
            return end(NULL);
        }
        return end(gpu_csr_result(a, &ab, v, e));
    }
    DevMat in = dev_mat(&ab);
    cl_long rows = a->rows, cols = a->cols, seg = seg_of(ab.sparse);
    cl_mem o = out_buf(rows * cols, e);
    if (o && !gpu_args(K(K_EW_UNARY), e, sizeof opi, &opi, sizeof rows, &rows, sizeof cols, &cols, sizeof seg, &seg,
                       MAT_ARGS(in), sizeof(cl_mem), &o, (size_t)0) &&
        !gpu_launch1(K(K_EW_UNARY), seg_items(rows, cols, seg), 0, e))
        r = gpu_dense_result(a->rows, a->cols, o, e);
    else if (o)
        gpu_free(o);
    return end(r);
}

/* Broadcast modes as k_binary checks them: 0 full, 1 row vector, 2 column
 * vector, 3 scalar. False: a shape k_binary rejects (the CPU reports it). */
static bool modes(const MB *a, const MB *b, int *am, int *bm, int64_t *rows, int64_t *cols)
{
    *am = *bm = 0;
    *rows = a->rows, *cols = a->cols;
    if (a->rows == b->rows && a->cols == b->cols) return true;
    if (b->rows == 1 && b->cols == a->cols) { *bm = 1; return true; }
    if (b->cols == 1 && b->rows == a->rows) { *bm = 2; return true; }
    *rows = b->rows, *cols = b->cols;
    if (a->rows == 1 && a->cols == b->cols) { *am = 1; return true; }
    if (a->cols == 1 && a->rows == b->rows) { *am = 2; return true; }
    if (a->cols == 1 && b->rows == 1) { *am = 2; *bm = 1; *rows = a->rows; *cols = b->cols; return true; }
    return false;
}

/* a op b over the sparse structure of s (the other operand o dense or
 * CSR, broadcast by om); swap: s is the right operand. */
static MB *binary_csr(OpCode op, const MB *s, const GpuBuf *sb, DevMat o, int om, bool swap, BrErr *e)
{
    cl_int opi = op, omi = om, sw = swap;
    cl_long rows = s->rows, cols = s->cols;
    cl_double zero = 0;
    cl_mem v = out_buf(sb->nnz, e);
    if (!v) return NULL;
    if (gpu_args(K(K_CSR_BINARY), e, sizeof opi, &opi, sizeof rows, &rows, sizeof cols, &cols, sizeof(cl_mem), &sb->rp,
                 sizeof(cl_mem), &sb->ci, sizeof(cl_mem), &sb->v, MAT_ARGS(o), sizeof omi, &omi, sizeof zero, &zero,
                 sizeof sw, &sw, sizeof(cl_mem), &v, (size_t)0) ||
        gpu_launch1(K(K_CSR_BINARY), (size_t)rows, 0, e)) {
        gpu_free(v);
        return NULL;
    }
    return gpu_csr_result(s, sb, v, e);
}

/* The dense kernel over two operands, each dense or CSR (either may be
 * the scalar s). */
static MB *binary_dense(OpCode op, DevMat a, int am, double as, DevMat b, int bm, double bs, int64_t rows,
                        int64_t cols, BrErr *e)
{
    cl_int opi = op, ami = am, bmi = bm;
    cl_long r = rows, c = cols, seg = seg_of((a.sp && am != 3) || (b.sp && bm != 3));
    cl_mem o = out_buf(rows * cols, e);
    if (!o) return NULL;
    if (gpu_args(K(K_EW_BINARY), e, sizeof opi, &opi, sizeof r, &r, sizeof c, &c, sizeof seg, &seg, MAT_ARGS(a),
                 sizeof ami, &ami, sizeof as, &as, MAT_ARGS(b), sizeof bmi, &bmi, sizeof bs, &bs,
                 (size_t)sizeof(cl_mem), &o, (size_t)0) ||
        gpu_launch1(K(K_EW_BINARY), seg_items(rows, cols, seg), 0, e)) {
        gpu_free(o);
        return NULL;
    }
    return gpu_dense_result(rows, cols, o, e);
}

/* Whether a sparse operand of op keeps its structure with other as the
 * other operand: x * y-like operators, other finite (0 * NaN is NaN:
 * docs/DESIGN.md "NaN and Inf"; a device-only block's finiteness is not
 * known on the host). gpu_binary and gpu_price_binary. */
static bool keeps_structure(OpCode op, const MB *other)
{
    return (op_info[op].flags & OF_MULT) && !other->dev && !mb_has_nonfinite(other);
}

MB *gpu_binary(OpCode op, const MB *a, const MB *b, BrErr *e)
{
    int am, bm;
    int64_t rows, cols;
    if (op_info[op].kind != OK_BINARY || a->cmb || b->cmb || !modes(a, b, &am, &bm, &rows, &cols) ||
        rows * cols == 0)
        return NULL;
    bool fa = keeps_structure(op, a), fb = keeps_structure(op, b);
    if (!begin(e)) return NULL;
    GpuBuf ab, bb;
    MB *r = NULL;
    if (gpu_get(a, &ab, e) || gpu_get(b, &bb, e)) return end(NULL);
    /* the device copy's format decides (a sparse host block may have a
     * dense device copy: a result examined after the kernel) */
    bool sa = fb && ab.sparse && am == 0, sb = !sa && fa && bb.sparse && bm == 0;
    if (sa) r = binary_csr(op, a, &ab, dev_mat(&bb), bm, false, e);
    else if (sb) r = binary_csr(op, b, &bb, dev_mat(&ab), am, true, e);
    else r = binary_dense(op, dev_mat(&ab), am, 0, dev_mat(&bb), bm, 0, rows, cols, e);
    return end(r);
}

bool gpu_ms_keeps_csr(OpCode op, double s, bool scalar_left)
{
    /* sparse-safe with this scalar: f(0, s) = 0 keeps a's structure */
    double z = scalar_left ? ops_binary(op, s, 0) : ops_binary(op, 0, s);
    return op_info[op].kind == OK_BINARY && z == 0 && isfinite(s);
}

MB *gpu_binary_ms(OpCode op, const MB *a, double s, bool scalar_left, BrErr *e)
{
    if (op_info[op].kind != OK_BINARY || a->cmb || a->rows * a->cols == 0) return NULL;
    if (!begin(e)) return NULL;
    GpuBuf ab;
    MB *r = NULL;
    if (gpu_get(a, &ab, e)) return end(NULL);
    if (ab.sparse && gpu_ms_keeps_csr(op, s, scalar_left)) {
        cl_int opi = op, om = 3, sw = scalar_left;
        cl_long rows = a->rows, cols = a->cols;
        DevMat unread = {ab.v, ab.v, ab.v, 0};   /* the scalar mode reads no operand */
        cl_mem v = out_buf(ab.nnz, e);
        if (!v) return end(NULL);
        if (gpu_args(K(K_CSR_BINARY), e, sizeof opi, &opi, sizeof rows, &rows, sizeof cols, &cols, sizeof(cl_mem),
                     &ab.rp, sizeof(cl_mem), &ab.ci, sizeof(cl_mem), &ab.v, MAT_ARGS(unread), sizeof om, &om,
                     sizeof s, &s, sizeof sw, &sw, sizeof(cl_mem), &v, (size_t)0) ||
            gpu_launch1(K(K_CSR_BINARY), (size_t)rows, 0, e)) {
            gpu_free(v);
            return end(NULL);
        }
        return end(gpu_csr_result(a, &ab, v, e));
    }
    DevMat da = dev_mat(&ab);
    r = scalar_left ? binary_dense(op, da, 3, s, da, 0, 0, a->rows, a->cols, e)
                    : binary_dense(op, da, 0, 0, da, 3, s, a->rows, a->cols, e);
    return end(r);
}

static int agg_code(OpCode op)
{
    switch (op) {
    case OP_SUM: case OP_MEAN: return AG_SUM;
    case OP_SUMSQ: return AG_SUMSQ;
    case OP_AMIN: return AG_MIN;
    case OP_AMAX: return AG_MAX;
    default: return -1;
    }
}

/* The largest power of two <= n and the device's work-group limit. */
static size_t pow2_wg(size_t n)
{
    size_t l = 1;
    while (l * 2 <= n && l * 2 <= gpu_ctx.info.max_wg) l *= 2;
    return l;
}

/* One work-group per row of the rows x cols matrix d (dense or CSR)
 * into o. */
static int agg_rows(int ag, int64_t rows, int64_t cols, double div, DevMat d, cl_mem o, BrErr *e)
{
    cl_int opi = ag;
    cl_long r = rows, c = cols;
    size_t L = pow2_wg(cols < 256 ? (size_t)cols : 256);
    size_t groups = (size_t)(rows < 4096 ? rows : 4096);
    cl_kernel k = K(K_AGG_ROW);
    if (gpu_args(k, e, sizeof opi, &opi, sizeof r, &r, sizeof c, &c, sizeof div, &div, MAT_ARGS(d), sizeof(cl_mem),
                 &o, (size_t)0))
        return -1;
    cl_int rc = clSetKernelArg(k, 9, L * sizeof(double), NULL);
    if (rc != CL_SUCCESS) return gpu_clerr(e, rc, "clSetKernelArg");
    return gpu_launch1(k, groups * L, L, e);
}

/* The work-items of a column walk over cols columns: one per column
 * over a dense operand; over a CSR one, one per band of GPU_CSR_SEG
 * columns (clsrc.c CSR_BAND) */
static int64_t band_items(int64_t cols) { return (cols + GPU_CSR_SEG - 1) / GPU_CSR_SEG; }

/* agg_seg's operator codes (clsrc.c), -1 for the others */
static int seg_code(OpCode op)
{
    switch (op) {
    case OP_PROD: return 0;
    case OP_VAR: return 1;
    case OP_SD: return 2;
    case OP_IDXMAX: return 3;
    case OP_IDXMIN: return 4;
    default: return -1;
    }
}

/* prod, var, sd (any direction) and rowIndexMax/Min (rows): one
 * work-item per segment */
static MB *agg_seg(int sc, AggDir dir, const MB *a, BrErr *e)
{
    GpuBuf ab;
    if (gpu_get(a, &ab, e)) return NULL;
    DevMat d = dev_mat(&ab);
    int64_t rows = a->rows, cols = a->cols;
    cl_long cc = cols;
    cl_int opi = sc;
    cl_long nseg = dir == DIR_ROW ? rows : dir == DIR_COL ? cols : 1;
    cl_long len = dir == DIR_ROW ? cols : dir == DIR_COL ? rows : rows * cols;
    cl_long ss = dir == DIR_ROW ? cols : dir == DIR_COL ? 1 : 0, es = dir == DIR_COL ? cols : 1;
    MB *r = NULL;
    cl_mem o = out_buf(nseg, e);
    /* a CSR a's columns: bands of columns walked by rows (agg_seg_col);
     * its rows and all cells: agg_seg's cursor */
    cl_long rr = rows;
    int bad = !o;
    if (!bad && ab.sparse && dir == DIR_COL)
        bad = gpu_args(K(K_AGG_SEG_COL), e, sizeof opi, &opi, sizeof rr, &rr, sizeof cc, &cc, MAT_ARGS(d),
                       sizeof(cl_mem), &o, (size_t)0) ||
              gpu_launch1(K(K_AGG_SEG_COL), (size_t)band_items(cols), 0, e);
    else if (!bad)
        bad = gpu_args(K(K_AGG_SEG), e, sizeof opi, &opi, sizeof nseg, &nseg, sizeof len, &len, sizeof ss, &ss,
                       sizeof es, &es, sizeof cc, &cc, MAT_ARGS(d), sizeof(cl_mem), &o, (size_t)0) ||
              gpu_launch1(K(K_AGG_SEG), (size_t)nseg, 0, e);
    if (!bad) r = gpu_dense_result(dir == DIR_COL ? 1 : nseg, dir == DIR_COL ? nseg : 1, o, e), o = NULL;
    gpu_free(o);
    return r;
}

MB *gpu_agg(OpCode op, AggDir dir, const MB *a, BrErr *e)
{
    int ag = agg_code(op), sc = seg_code(op);
    if ((ag < 0 && sc < 0) || a->cmb || a->rows * a->cols == 0) return NULL;
    /* rowIndexMax/Min have rows only (the CPU reports the rest) */
    if (sc >= 3 && dir != DIR_ROW) return NULL;
    if (sc >= 0) {
        if (!begin(e)) return NULL;
        return end(agg_seg(sc, dir, a, e));
    }
    if (!begin(e)) return NULL;
    GpuBuf ab;
    MB *r = NULL;
    if (gpu_get(a, &ab, e)) return end(NULL);
    DevMat d = dev_mat(&ab);
    int64_t rows = a->rows, cols = a->cols, n = rows * cols;
    bool mean = op == OP_MEAN;
    cl_mem o = NULL, part = NULL;
    if (dir == DIR_ROW) {
        if ((o = out_buf(rows, e)) && !agg_rows(ag, rows, cols, mean ? (double)cols : 1, d, o, e))
            r = gpu_dense_result(rows, 1, o, e), o = NULL;
    } else if (dir == DIR_COL) {
        cl_int opi = ag;
        cl_long rr = rows, cc = cols;
        double div = mean ? (double)rows : 1;
        if ((o = out_buf(cols, e)) &&
            !gpu_args(K(K_AGG_COL), e, sizeof opi, &opi, sizeof rr, &rr, sizeof cc, &cc, sizeof div, &div,
                      MAT_ARGS(d), sizeof(cl_mem), &o, (size_t)0) &&
            !gpu_launch1(K(K_AGG_COL), (size_t)(ab.sparse ? band_items(cols) : cols), 0, e))
            r = gpu_dense_result(1, cols, o, e), o = NULL;
    } else {
        /* two stages: partials of G work-groups, then one row of G; a
         * CSR matrix's stored values, and for min/max a 0 when it has
         * an implicit zero */
        size_t L = pow2_wg(256);
        int64_t vals = ab.sparse ? ab.nnz : n;
        int64_t G = (vals + (int64_t)L - 1) / (int64_t)L;
        G = G < 1 ? 1 : G > 256 ? 256 : G;
        cl_int opi = ag, zero = ab.sparse && ab.nnz < n && ag >= AG_MIN;
        cl_long nn = vals;
        cl_kernel k = K(K_AGG_PART);
        if ((part = out_buf(G, e)) && (o = out_buf(1, e)) &&
            !gpu_args(k, e, sizeof opi, &opi, sizeof nn, &nn, sizeof zero, &zero, sizeof(cl_mem), &d.v,
                      sizeof(cl_mem), &part, (size_t)0)) {
            cl_int rc = clSetKernelArg(k, 5, L * sizeof(double), NULL);
            DevMat pm = {part, part, part, 0};
            if (rc != CL_SUCCESS) gpu_clerr(e, rc, "clSetKernelArg");
            else if (!gpu_launch1(k, (size_t)G * L, L, e) &&
                     !agg_rows(ag == AG_SUMSQ ? AG_SUM : ag, 1, G, mean ? (double)n : 1, pm, o, e))
                r = gpu_dense_result(1, 1, o, e), o = NULL;
        }
    }
    gpu_free(o);
    gpu_free(part);
    return end(r);
}

static int blas_err(BrErr *e, CLBlastStatusCode s, const char *what)
{
    return br_err(e, BR_EFAIL, "GPU (CLBlast): %s failed (status %d)", what, (int)s);
}

/* CLBlast is loaded at its first product (dlopen, libclblast.so.1): a
 * run without the GPU backend does not load it and its C++ libraries at
 * every start (the calls hold gpu_lock). */
static __typeof__(CLBlastDgemm) *p_dgemm;
static int clblast_load(BrErr *e)
{
    if (p_dgemm) return 0;
    void *h = dlopen("libclblast.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h) *(void **)&p_dgemm = dlsym(h, "CLBlastDgemm");
    if (!p_dgemm) {
        if (h) dlclose(h);
        return br_err(e, BR_EFAIL, "GPU: CLBlast (libclblast.so.1, Debian's libclblast1) could not be loaded");
    }
    return 0;
}

/* C = op(A) op(B) with CLBlast (row-major); one launch counted. */
static int gemm(bool ta, bool tb, size_t m, size_t n, size_t k, cl_mem a, size_t lda, cl_mem b, size_t ldb,
                cl_mem c, BrErr *e)
{
    if (clblast_load(e)) return e->code;
    CLBlastStatusCode s = (*p_dgemm)(CLBlastLayoutRowMajor, ta ? CLBlastTransposeYes : CLBlastTransposeNo,
                                       tb ? CLBlastTransposeYes : CLBlastTransposeNo, m, n, k, 1.0, a, 0, lda, b, 0,
                                       ldb, 0.0, c, 0, n, &gpu_ctx.q, NULL);
    if (s != CLBlastSuccess) return blas_err(e, s, "Dgemm");
    gpu_st.launches++;
    return 0;
}

/* Whether the host knows m is finite (a device-only block's cells are
 * on the device alone) */
static bool host_finite(const MB *m) { return !m->dev && !mb_has_nonfinite(m); }

/* out (rows x cols) = the sum of the G partial blocks in part (sym: the
 * lower triangle mirrors the upper one) */
static int part_sum_run(int64_t G, int64_t rows, int64_t cols, int sym, cl_mem part, cl_mem o, BrErr *e)
{
    cl_long g = G, r = rows, c = cols;
    cl_int sy = sym;
    if (gpu_args(K(K_PART_SUM), e, sizeof g, &g, sizeof r, &r, sizeof c, &c, sizeof sy, &sy, sizeof(cl_mem), &part,
                 sizeof(cl_mem), &o, (size_t)0))
        return -1;
    return gpu_launch1(K(K_PART_SUM), (size_t)(rows * cols), 0, e);
}

/* The rows per chunk of the partial-block kernels (csr_tmm, tmm_csrb)
 * over k rows, width work-items per chunk, partial blocks of cells:
 * enough chunks for 256 work-items, at least 8 rows each, their blocks
 * within an eighth of the pool's budget (one chunk writes the result
 * itself) */
static int64_t part_chunk(int64_t k, int64_t width, double cells)
{
    int64_t G = (256 + width - 1) / BR_MAX(width, 1);
    if (G > (k + 7) / 8) G = (k + 7) / 8;
    while (G > 1 && (double)G * cells * 8 > gpu_ctx.budget / 8) G /= 2;
    G = BR_MAX(G, 1);
    return (k + G - 1) / G;
}

/* A partial-block buffer of G blocks of cells (o itself for one) */
static cl_mem part_buf(int64_t G, double cells, cl_mem o, BrErr *e)
{
    if (G == 1) return o;
    gpu_st.part_bytes += (int64_t)((double)G * cells * 8);
    return gpu_alloc((size_t)((double)G * cells * 8), e);
}

/* CSR a (its copy ab, m x k) times the dense k x n buffer db into o:
 * csr_mm, after col_nonfinite's counts of b's NaN/Inf unless b is known
 * finite. 0, or -1 (e set, or clear for a buffer beyond the largest). */
static int csr_mm_run(const GpuBuf *ab, int64_t m, int64_t k, int64_t n, cl_mem db, bool finite, cl_mem o,
                      BrErr *e)
{
    cl_long rr = m, kk = k, nn = n;
    cl_int use = !finite;
    cl_mem nf = NULL;
    int rc = -1;
    if (use && (!(nf = gpu_alloc((size_t)n * sizeof(cl_long), e)) ||
                gpu_args(K(K_COL_NONFINITE), e, sizeof kk, &kk, sizeof nn, &nn, sizeof(cl_mem), &db, sizeof(cl_mem),
                         &nf, (size_t)0) ||
                gpu_launch1(K(K_COL_NONFINITE), (size_t)n, 0, e)))
        goto done;
    cl_mem nfa = nf ? nf : db;   /* unread without use */
    if (!gpu_args(K(K_CSR_MM), e, sizeof rr, &rr, sizeof nn, &nn, sizeof(cl_mem), &ab->rp, sizeof(cl_mem), &ab->ci,
                  sizeof(cl_mem), &ab->v, sizeof(cl_mem), &db, sizeof(cl_mem), &nfa, sizeof use, &use, sizeof(cl_mem),
                  &o, (size_t)0) &&
        !gpu_launch1(K(K_CSR_MM), (size_t)(m * n), 0, e))
        rc = 0;
done:
    gpu_free(nf);
    return rc;
}

/* dense a (m x k, buffer da) times CSR b (its copy bb, k x n) into o */
static int dense_csr_run(cl_mem da, const GpuBuf *bb, int64_t m, int64_t k, int64_t n, cl_mem o, BrErr *e)
{
    cl_long mm = m, kk = k, nn = n;
    if (gpu_args(K(K_DENSE_CSR_MM), e, sizeof mm, &mm, sizeof kk, &kk, sizeof nn, &nn, sizeof(cl_mem), &da,
                 sizeof(cl_mem), &bb->rp, sizeof(cl_mem), &bb->ci, sizeof(cl_mem), &bb->v, sizeof(cl_mem), &o,
                 (size_t)0))
        return -1;
    return gpu_launch1(K(K_DENSE_CSR_MM), (size_t)m, 0, e);
}

/* t(a) %*% b for CSR a (copy ab, k x m) and the dense k x n buffer db:
 * csr_tmm's partial blocks per chunk of rows, then part_sum (one chunk:
 * into o directly) */
static int csr_tmm_run(const GpuBuf *ab, int64_t k, int64_t m, int64_t n, cl_mem db, cl_mem o, BrErr *e)
{
    double cells = (double)m * (double)n;
    int64_t chunk = part_chunk(k, n, cells), G = (k + chunk - 1) / chunk;
    cl_mem part = part_buf(G, cells, o, e);
    if (!part) return -1;
    cl_long kk = k, mm = m, nn = n, ch = chunk;
    int rc = gpu_args(K(K_CSR_TMM), e, sizeof kk, &kk, sizeof mm, &mm, sizeof nn, &nn, sizeof ch, &ch, sizeof(cl_mem),
                      &ab->rp, sizeof(cl_mem), &ab->ci, sizeof(cl_mem), &ab->v, sizeof(cl_mem), &db, sizeof(cl_mem),
                      &part, (size_t)0) ||
                     gpu_launch1(K(K_CSR_TMM), (size_t)(G * n), 0, e) ||
                     (G > 1 && part_sum_run(G, m, n, 0, part, o, e))
                 ? -1
                 : 0;
    if (part != o) gpu_free(part);
    return rc;
}

/* bad[r] for the rows of CSR b (copy bb, k rows): csr_row_bad's flags
 * (NaN/Inf in the row) unless b is known finite (*bad NULL). 0, or -1
 * (e set, or clear for a buffer beyond the largest). */
static int row_bad_run(const GpuBuf *bb, int64_t k, bool finite, cl_mem *bad, BrErr *e)
{
    cl_long kk = k;
    *bad = NULL;
    if (finite) return 0;
    if (!(*bad = gpu_alloc((size_t)k * sizeof(cl_int), e)) ||
        gpu_args(K(K_CSR_ROW_BAD), e, sizeof kk, &kk, sizeof(cl_mem), &bb->rp, sizeof(cl_mem), &bb->v, sizeof(cl_mem),
                 bad, (size_t)0) ||
        gpu_launch1(K(K_CSR_ROW_BAD), (size_t)k, 0, e))
        return -1;
    return 0;
}

/* t(a) %*% b for CSR b (copy bb, k x n) and a (k x m, dense or CSR)
 * into o: row_bad_run's flags, tmm_csrb's partial blocks per chunk of
 * rows, then part_sum (one chunk: into o directly). upper (tsmm, a =
 * b): the upper triangles, mirrored by part_sum (one chunk: sym_lower
 * on o). */
static int tmm_csrb_run(DevMat a, const GpuBuf *bb, int64_t k, int64_t m, int64_t n, bool finite, bool upper, cl_mem o,
                        BrErr *e)
{
    double cells = (double)m * (double)n;
    int64_t chunk = part_chunk(k, m, cells), G = (k + chunk - 1) / chunk;
    cl_long kk = k, mm = m, nn = n, ch = chunk;
    cl_int use = !finite, up = upper;
    cl_mem bad = NULL, part = part_buf(G, cells, o, e);
    int rc = -1;
    if (!part) return -1;
    if (row_bad_run(bb, k, finite, &bad, e)) goto done;
    cl_mem ba = bad ? bad : bb->v;   /* unread without use */
    if (gpu_args(K(K_TMM_CSRB), e, sizeof kk, &kk, sizeof mm, &mm, sizeof nn, &nn, sizeof ch, &ch, MAT_ARGS(a),
                 sizeof(cl_mem), &bb->rp, sizeof(cl_mem), &bb->ci, sizeof(cl_mem), &bb->v, sizeof(cl_mem), &ba,
                 sizeof use, &use, sizeof up, &up, sizeof(cl_mem), &part, (size_t)0) ||
        gpu_launch1(K(K_TMM_CSRB), (size_t)(G * (a.sp ? band_items(m) : m)), 0, e))
        goto done;
    if (G > 1) rc = part_sum_run(G, m, n, upper, part, o, e);
    else if (!upper) rc = 0;
    else if (!gpu_args(K(K_SYM_LOWER), e, sizeof nn, &nn, sizeof(cl_mem), &o, (size_t)0))
        rc = gpu_launch1(K(K_SYM_LOWER), (size_t)(n * n), 0, e);
done:
    gpu_free(bad);
    if (part != o) gpu_free(part);
    return rc;
}

/* CSR a (copy ab, m x k) times CSR b (copy bb, k x n) into o:
 * row_bad_run's flags of b, then csr_csr_mm */
static int csr_csr_run(const GpuBuf *ab, const GpuBuf *bb, int64_t m, int64_t k, int64_t n, bool finite, cl_mem o,
                       BrErr *e)
{
    cl_long mm = m, kk = k, nn = n;
    cl_int use = !finite;
    cl_mem bad = NULL;
    int rc = -1;
    if (row_bad_run(bb, k, finite, &bad, e)) goto done;
    cl_mem ba = bad ? bad : bb->v;   /* unread without use */
    if (!gpu_args(K(K_CSR_CSR_MM), e, sizeof mm, &mm, sizeof kk, &kk, sizeof nn, &nn, sizeof(cl_mem), &ab->rp,
                  sizeof(cl_mem), &ab->ci, sizeof(cl_mem), &ab->v, sizeof(cl_mem), &bb->rp, sizeof(cl_mem), &bb->ci,
                  sizeof(cl_mem), &bb->v, sizeof(cl_mem), &ba, sizeof use, &use, sizeof(cl_mem), &o, (size_t)0) &&
        !gpu_launch1(K(K_CSR_CSR_MM), (size_t)m, 0, e))
        rc = 0;
done:
    gpu_free(bad);
    return rc;
}

/* X %*% t(X) for CSR X (copy xb, m rows) into o: csr_tsmm_r */
static int csr_tsmm_r_run(const GpuBuf *xb, int64_t m, cl_mem o, BrErr *e)
{
    cl_long mm = m;
    if (gpu_args(K(K_CSR_TSMM_R), e, sizeof mm, &mm, sizeof(cl_mem), &xb->rp, sizeof(cl_mem), &xb->ci, sizeof(cl_mem),
                 &xb->v, sizeof(cl_mem), &o, (size_t)0))
        return -1;
    return gpu_launch1(K(K_CSR_TSMM_R), (size_t)(m * m), 0, e);
}

/* The m x n result in o when ok (o then the pool's), else o released */
static MB *mm_result(bool ok, int64_t m, int64_t n, cl_mem o, BrErr *e)
{
    if (ok) return gpu_dense_result(m, n, o, e);
    gpu_free(o);
    return NULL;
}

MB *gpu_matmul(const MB *a, const MB *b, BrErr *e)
{
    if (a->cmb || b->cmb || a->cols != b->rows || a->rows * a->cols == 0 || b->rows * b->cols == 0) return NULL;
    if (!begin(e)) return NULL;
    GpuBuf ab, bb;
    if (gpu_get(a, &ab, e) || gpu_get(b, &bb, e)) return end(NULL);
    int64_t m = a->rows, k = a->cols, n = b->cols;
    cl_mem o = out_buf(m * n, e);
    if (!o) return end(NULL);
    bool ok;
    /* the device copies' formats decide: CSR a by csr_mm or (CSR b)
     * csr_csr_mm, dense a times CSR b by dense_csr_mm, both dense by
     * CLBlast */
    if (ab.sparse && bb.sparse) {
        ok = !csr_csr_run(&ab, &bb, m, k, n, host_finite(b), o, e);
    } else if (ab.sparse) {
        ok = !csr_mm_run(&ab, m, k, n, bb.d, host_finite(b), o, e);
    } else if (bb.sparse) {
        ok = !dense_csr_run(ab.d, &bb, m, k, n, o, e);
    } else {
        ok = !gemm(false, false, (size_t)m, (size_t)n, (size_t)k, ab.d, (size_t)k, bb.d, (size_t)n, o, e);
    }
    return end(mm_result(ok, m, n, o, e));
}

MB *gpu_matmul_tl(const MB *a, const MB *b, BrErr *e)
{
    if (a->cmb || b->cmb || a->rows != b->rows || a->rows * a->cols == 0 || b->rows * b->cols == 0) return NULL;
    if (!begin(e)) return NULL;
    GpuBuf ab, bb;
    if (gpu_get(a, &ab, e) || gpu_get(b, &bb, e)) return end(NULL);
    int64_t m = a->cols, k = a->rows, n = b->cols;
    cl_mem o = out_buf(m * n, e);
    if (!o) return end(NULL);
    /* CSR b by tmm_csrb (a dense or CSR), CSR a by csr_tmm; dense by
     * CLBlast with op(A) = a^T (lda = a's columns): t(a) is never
     * formed */
    bool ok = bb.sparse  ? !tmm_csrb_run(dev_mat(&ab), &bb, k, m, n, host_finite(b), false, o, e)
              : ab.sparse ? !csr_tmm_run(&ab, k, m, n, bb.d, o, e)
                          : !gemm(true, false, (size_t)m, (size_t)n, (size_t)k, ab.d, (size_t)a->cols, bb.d, (size_t)n,
                                  o, e);
    return end(mm_result(ok, m, n, o, e));
}

MB *gpu_tsmm(const MB *x, bool left, BrErr *e)
{
    if (x->cmb || x->rows * x->cols == 0) return NULL;
    if (!begin(e)) return NULL;
    GpuBuf xb;
    if (gpu_get(x, &xb, e)) return end(NULL);
    int64_t n = left ? x->cols : x->rows, k = left ? x->rows : x->cols;
    cl_mem o = out_buf(n * n, e);
    if (!o) return end(NULL);
    cl_long nn = n;
    bool ok;
    /* CSR X: tmm_csrb's upper triangles (t(X) X) / csr_tsmm_r. Dense: t(X) X: op(A) = X^T (lda =
     * cols), B = X; X t(X): A = X, op(B) = X^T; then the upper triangle
     * mirrored. Either way the result is exactly symmetric, as the
     * CPU's. */
    if (xb.sparse)
        ok = !(left ? tmm_csrb_run(dev_mat(&xb), &xb, x->rows, x->cols, x->cols, host_finite(x), true, o, e)
                    : csr_tsmm_r_run(&xb, x->rows, o, e));
    else
        ok = !gemm(left, !left, (size_t)n, (size_t)n, (size_t)k, xb.d, (size_t)x->cols, xb.d, (size_t)x->cols, o, e) &&
             !gpu_args(K(K_SYM_LOWER), e, sizeof nn, &nn, sizeof(cl_mem), &o, (size_t)0) &&
             !gpu_launch1(K(K_SYM_LOWER), (size_t)(n * n), 0, e);
    return end(mm_result(ok, n, n, o, e));
}

MB *gpu_transpose(const MB *a, BrErr *e)
{
    if (a->cmb || a->rows * a->cols == 0) return NULL;
    if (!begin(e)) return NULL;
    GpuBuf ab;
    MB *r = NULL;
    if (gpu_get(a, &ab, e)) return end(NULL);
    DevMat d = dev_mat(&ab);
    cl_mem o = out_buf(a->rows * a->cols, e);
    cl_long rows = a->rows, cols = a->cols;
    size_t t = gpu_ctx.info.max_wg >= 256 ? 16 : 1;
    if (o && !gpu_args(K(K_TRANSPOSE), e, sizeof rows, &rows, sizeof cols, &cols, MAT_ARGS(d), sizeof(cl_mem), &o,
                       (size_t)0) &&
        !gpu_launch2(K(K_TRANSPOSE), (size_t)cols, (size_t)rows, t, t, e))
        r = gpu_dense_result(cols, rows, o, e), o = NULL;
    gpu_free(o);
    return end(r);
}

/* ---- The work of the operators above, as their kernels do it ---- */

/* Probes of one csr_at lookup in a CSR a's rows (binary search over a
 * row's mean entry count); 0 for a dense a */
static double csr_probes(const MB *a)
{
    if (!a->sparse || a->rows == 0) return 0;
    return 1 + ceil(log2((double)a->nnz / (double)a->rows + 1));
}

static double mb_cells(const MB *m) { return (double)m->rows * (double)m->cols; }

/* Per cell, the work of the cell by cell kernels' cursor over a CSR a
 * (a step, and a binary search per segment of GPU_CSR_SEG cells); 0
 * for a dense a */
static double csr_walk(const MB *a) { return a->sparse ? 1 + csr_probes(a) / GPU_CSR_SEG : 0; }

/* dev: the device's flops, host: the CPU kernel's (which skips what a
 * CSR operand does not store where the device does too) */
static void price(GpuXfer *x, double dev, double host, double out)
{
    x->flops = dev;
    x->hscale = dev > 0 ? host / dev : 1;
    x->out = out;
}

void gpu_price_unary(OpCode op, const MB *a, GpuXfer *x)
{
    double w = op_info[op].cost, n = mb_cells(a), nz = (double)a->nnz;
    if (a->sparse && (op_info[op].flags & OF_SAFE)) price(x, nz * w, nz * w, nz * 8);
    else price(x, n * (w + csr_walk(a)), n * w, n * 8);
}

void gpu_price_ms(OpCode op, const MB *a, double s, bool scalar_left, GpuXfer *x)
{
    double w = op_info[op].cost, n = mb_cells(a), nz = (double)a->nnz;
    if (a->sparse && gpu_ms_keeps_csr(op, s, scalar_left)) price(x, nz * w, nz * w, nz * 8);
    else price(x, n * (w + csr_walk(a)), n * w, n * 8);
}

void gpu_price_binary(OpCode op, const MB *a, const MB *b, GpuXfer *x)
{
    double w = op_info[op].cost, n = fmax(mb_cells(a), mb_cells(b));
    /* gpu_binary's choice (by the host flags: a device-only block's
     * flag is its device copy's format) */
    bool af = a->rows >= b->rows && a->cols >= b->cols, bf = b->rows >= a->rows && b->cols >= a->cols;
    bool fa = keeps_structure(op, a), fb = keeps_structure(op, b);
    const MB *s = fb && a->sparse && af ? a : fa && b->sparse && bf ? b : NULL;
    if (s) {
        double nz = (double)s->nnz;
        /* csr_binary: a cursor over a CSR other operand's rows */
        const MB *o = s == a ? b : a;
        price(x, nz * w + (o->sparse ? nz + (double)o->nnz : 0), nz * w, nz * 8);
    } else {
        price(x, n * (w + csr_walk(a) + csr_walk(b)), n * w, n * 8);
    }
}

void gpu_price_agg(OpCode op, AggDir dir, const MB *a, GpuXfer *x)
{
    double n = mb_cells(a), nz = a->sparse ? (double)a->nnz : n;
    double out = 8 * (dir == DIR_ROW ? (double)a->rows : dir == DIR_COL ? (double)a->cols : 1);
    /* agg_row and agg_part visit a CSR input's entries (and a 0 per row
     * for min/max); agg_col, agg_seg and agg_seg_col step every cell,
     * over a CSR input by a cursor (a binary search per GPU_CSR_SEG
     * cells of a row: csr_walk) */
    if (agg_code(op) >= 0 && dir != DIR_COL) price(x, nz + (a->sparse ? (double)a->rows : 0), nz, out);
    else price(x, n * (1 + csr_walk(a)), agg_code(op) >= 0 ? nz : n, out);
}

void gpu_price_mm(OpCode op, bool left, const MB *a, const MB *b, GpuXfer *x)
{
    double nza = (double)a->nnz;
    if (op == OP_TSMM) {
        /* tmm_csrb (a = b, upper): per row and column a's cell and b's
         * row from that column, by two cursors over the row's band of
         * columns (csr_walk each), then each row's products from that
         * column on (about nnz^2 / k
         * over the rows, as the CPU's scatter), the flags of rows with
         * NaN/Inf unless a is known finite; csr_tsmm_r: a merge of two
         * rows per upper cell; dense: CLBlast */
        double k = left ? (double)a->rows : (double)a->cols, n = left ? (double)a->cols : (double)a->rows;
        double prod = nza * nza / fmax(k, 1), flags = host_finite(a) ? 0 : nza;
        if (!a->sparse) price(x, k * n * n, k * n * n, n * n * 8);
        else if (left) price(x, k * n * 2 * csr_walk(a) + prod + n * n + flags, prod, n * n * 8);
        else price(x, n * nza + n * n, prod, n * n * 8);
        return;
    }
    bool tl = op == OP_MATMULTL;
    double m = tl ? (double)a->cols : (double)a->rows, k = tl ? (double)a->rows : (double)a->cols;
    double n = (double)b->cols, nzb = (double)b->nnz;
    /* the passes over b for its NaN/Inf unless b is known finite:
     * col_nonfinite over b's cells (csr_mm), csr_row_bad over its
     * entries (CSR b) */
    double pass = host_finite(b) ? 0 : b->sparse ? nzb : k * n;
    if (tl && b->sparse) {
        /* tmm_csrb: a's cell per row and output row (a CSR a's by a
         * cursor over the row's band: csr_walk), times b's row */
        double look = k * m * (a->sparse ? csr_walk(a) : 1);
        price(x, look + 2 * m * nzb + pass, 2 * (a->sparse ? nza * nzb / fmax(k, 1) : m * nzb), m * n * 8);
    } else if (tl && a->sparse) {
        /* csr_tmm and its partial sums */
        price(x, 2 * nza * n + 2 * m * n, 2 * nza * n, m * n * 8);
    } else if (a->sparse) {
        /* csr_mm (csr_csr_mm over a CSR b: b's rows per entry of a,
         * every row of b per row of a for the flags); the CPU visits a's
         * entries (and b's where both are sparse) */
        double work = b->sparse ? 2 * nza * nzb / fmax(k, 1) : 2 * nza * n;
        price(x, work + pass + (b->sparse && pass > 0 ? m * k : 0), work, m * n * 8);
    } else if (b->sparse && !tl) {
        /* dense_csr_mm: each row of a over b's entries */
        price(x, 2 * m * nzb, 2 * m * nzb, m * n * 8);
    } else {
        price(x, 2 * m * k * n, 2 * m * k * n, m * n * 8);
    }
}

bool gpu_cost_rule(const GpuInfo *g, const GpuProfile *p, int threads, const GpuXfer *x)
{
    double host_flops = threads * 8 * 2.5e9, flops = x->flops;
    double hflops = flops * (x->hscale > 0 ? x->hscale : 1);
    if (g->is_cpu) {
        /* a CPU device (PoCL) computes on the host's cores and its
         * buffers are host memory: both sides compute alike, so the device
         * pays only when the host would first have to copy a device-only
         * input out (a landing) for more than a launch costs */
        double t_gpu = p->launch_s + x->build + x->pre + x->up / p->xfer_bw + flops / host_flops;
        double t_cpu = x->down / p->down_bw + hflops / host_flops;
        return t_gpu < t_cpu;
    }
    /* seconds, by the device profile (gpu_profile): a launch, the
     * transfers each way, device compute (compute units x clock x 32
     * lanes, fp64 at 1/2) or its memory bandwidth, against the host
     * (cores x 8 flops/cycle at 2.5 GHz, or its memory bandwidth); the
     * host first downloads the device-only inputs (their cells are on the
     * device alone), the device first uploads the host-only ones and its
     * result lands */
    double mem = x->up + x->down + x->out;
    double t_gpu = p->launch_s + x->build + x->pre + x->up / p->xfer_bw + x->out / p->down_bw +
                   fmax(flops / (g->compute_units * g->clock_mhz * 1e6 * 32.0), mem / p->bw);
    double t_cpu = x->down / p->down_bw + BR_MAX(hflops / host_flops, mem / 20e9);
    return t_gpu < t_cpu;
}

bool gpu_worth(const GpuXfer *x)
{
    if (gpu_mode() == GPU_FORCE) return true;
    if (gpu_mode() == GPU_OFF) return false;
    BrErr e = {0};
    if (gpu_init(&e)) return false;
    GpuProfile p = gpu_profile();
    return gpu_cost_rule(gpu_info(), &p, br_threads(), x);
}

MB *gpu_cum(OpCode op, const MB *a, BrErr *e)
{
    int code = op == OP_CUMSUM ? 0 : op == OP_CUMPROD ? 1 : op == OP_CUMMIN ? 2 : op == OP_CUMMAX ? 3 : -1;
    if (code < 0 || a->cmb || a->rows * a->cols == 0) return NULL;
    if (!begin(e)) return NULL;
    GpuBuf ab;
    MB *r = NULL;
    if (gpu_get(a, &ab, e)) return end(NULL);
    DevMat d = dev_mat(&ab);
    cl_int opi = code;
    cl_long rows = a->rows, cols = a->cols;
    cl_mem o = out_buf(rows * cols, e);
    if (o && !gpu_args(K(K_CUM_COL), e, sizeof opi, &opi, sizeof rows, &rows, sizeof cols, &cols, MAT_ARGS(d),
                       sizeof(cl_mem), &o, (size_t)0) &&
        !gpu_launch1(K(K_CUM_COL), (size_t)(ab.sparse ? band_items(cols) : cols), 0, e))
        r = gpu_dense_result(rows, cols, o, e), o = NULL;
    gpu_free(o);
    return end(r);
}

/* k_ifelse's broadcast of one operand over rows x cols: 0 full, 1 row
 * vector, 2 column vector, 3 scalar (m NULL); -1 a shape it rejects */
static int ifelse_mode(const MB *m, int64_t rows, int64_t cols)
{
    if (!m) return 3;
    if (m->rows == rows && m->cols == cols) return 0;
    if (m->rows == 1 && m->cols == cols) return 1;
    if (m->cols == 1 && m->rows == rows) return 2;
    return -1;
}

MB *gpu_ifelse(const MB *c, double cs, const MB *a, double as, const MB *b, double bs, BrErr *e)
{
    const MB *ms[3] = {c, a, b};
    int64_t rows = 0, cols = 0;
    for (int k = 0; k < 3; k++)
        if (ms[k]) {
            if (ms[k]->cmb) return NULL;
            rows = BR_MAX(rows, ms[k]->rows), cols = BR_MAX(cols, ms[k]->cols);
        }
    int md[3];
    for (int k = 0; k < 3; k++)
        if ((md[k] = ifelse_mode(ms[k], rows, cols)) < 0) return NULL;
    if (rows * cols == 0) return NULL;
    if (!begin(e)) return NULL;
    DevMat dv[3];
    MB *r = NULL;
    cl_mem o = out_buf(rows * cols, e);
    bool ok = o != NULL;
    for (int k = 0; k < 3 && ok; k++) {
        GpuBuf bb;
        if (!ms[k]) { dv[k] = (DevMat){o, o, o, 0}; continue; }   /* a scalar: the buffer is not read */
        if ((ok = !gpu_get(ms[k], &bb, e))) dv[k] = dev_mat(&bb);
    }
    cl_long rr = rows, cc = cols, seg = seg_of(ok && (dv[0].sp || dv[1].sp || dv[2].sp));
    cl_int m0 = md[0], m1 = md[1], m2 = md[2];
    if (ok && !gpu_args(K(K_IFELSE), e, sizeof rr, &rr, sizeof cc, &cc, sizeof seg, &seg, MAT_ARGS(dv[0]), sizeof m0,
                        &m0, sizeof cs, &cs, MAT_ARGS(dv[1]), sizeof m1, &m1, sizeof as, &as, MAT_ARGS(dv[2]),
                        sizeof m2, &m2, sizeof bs, &bs, sizeof(cl_mem), &o, (size_t)0) &&
        !gpu_launch1(K(K_IFELSE), seg_items(rows, cols, seg), 0, e))
        r = gpu_dense_result(rows, cols, o, e), o = NULL;
    gpu_free(o);
    return end(r);
}

MB *gpu_slice(const MB *a, int64_t rl, int64_t ru, int64_t cl, int64_t cu, BrErr *e)
{
    if (a->cmb || rl < 0 || cl < 0 || ru > a->rows || cu > a->cols || ru <= rl || cu <= cl) return NULL;
    if (!begin(e)) return NULL;
    GpuBuf ab;
    MB *r = NULL;
    if (gpu_get(a, &ab, e)) return end(NULL);
    DevMat d = dev_mat(&ab);
    cl_long cols = a->cols, l0 = rl, c0 = cl, m = ru - rl, n = cu - cl, seg = seg_of(ab.sparse);
    cl_mem o = out_buf(m * n, e);
    if (o && !gpu_args(K(K_SLICE), e, sizeof cols, &cols, sizeof l0, &l0, sizeof c0, &c0, sizeof m, &m, sizeof n, &n,
                       sizeof seg, &seg, MAT_ARGS(d), sizeof(cl_mem), &o, (size_t)0) &&
        !gpu_launch1(K(K_SLICE), seg_items(m, n, seg), 0, e))
        r = gpu_dense_result(m, n, o, e), o = NULL;
    gpu_free(o);
    return end(r);
}

MB *gpu_lix(const MB *x, int64_t rl, int64_t ru, int64_t cl, int64_t cu, const MB *y, double s, BrErr *e)
{
    if (x->cmb || (y && y->cmb) || rl < 0 || cl < 0 || ru > x->rows || cu > x->cols || ru <= rl || cu <= cl)
        return NULL;
    if (y ? y->rows != ru - rl || y->cols != cu - cl : ru - rl != 1 || cu - cl != 1) return NULL;
    if (!begin(e)) return NULL;
    GpuBuf xb, yb = {0};
    MB *r = NULL;
    if (gpu_get(x, &xb, e) || (y && gpu_get(y, &yb, e))) return end(NULL);
    cl_mem o = out_buf(x->rows * x->cols, e);
    cl_long rows = x->rows, cols = x->cols, l0 = rl, c0 = cl, m = ru - rl, n = cu - cl;
    cl_int scalar = y == NULL;
    cl_double sv = s;
    if (o && (xb.sparse || yb.sparse)) {
        /* a CSR target or source: read as CSR by lix_rows, one launch
         * (no dense copy first); the scalar form passes x as y (unread) */
        DevMat dx = dev_mat(&xb), dy = y ? dev_mat(&yb) : dx;
        if (!gpu_args(K(K_LIX_ROWS), e, sizeof rows, &rows, sizeof cols, &cols, sizeof l0, &l0, sizeof c0, &c0, sizeof m,
                      &m, sizeof n, &n, MAT_ARGS(dx), MAT_ARGS(dy), sizeof sv, &sv, sizeof scalar, &scalar,
                      sizeof(cl_mem), &o, (size_t)0) &&
            !gpu_launch1(K(K_LIX_ROWS), (size_t)rows, 0, e))
            r = gpu_dense_result(x->rows, x->cols, o, e), o = NULL;
        gpu_free(o);
        return end(r);
    }
    size_t bytes = (size_t)(x->rows * x->cols) * sizeof(double);
    cl_int rc = o ? clEnqueueCopyBuffer(gpu_ctx.q, xb.d, o, 0, 0, bytes, 0, NULL, NULL) : CL_SUCCESS;
    if (rc != CL_SUCCESS) gpu_clerr(e, rc, "clEnqueueCopyBuffer");
    /* the scalar form passes the target as y (unread) */
    cl_mem src = y ? yb.d : xb.d;
    if (o && rc == CL_SUCCESS &&
        !gpu_args(K(K_LIX), e, sizeof cols, &cols, sizeof l0, &l0, sizeof c0, &c0, sizeof m, &m, sizeof n, &n,
                  sizeof(cl_mem), &src, sizeof sv, &sv, sizeof scalar, &scalar, sizeof(cl_mem), &o, (size_t)0) &&
        !gpu_launch1(K(K_LIX), (size_t)(m * n), 0, e))
        r = gpu_dense_result(x->rows, x->cols, o, e), o = NULL;
    gpu_free(o);
    return end(r);
}

/* ---- CLA decompression on the device ---- */

bool gpu_cla_ok(const MB *c)
{
    if (!c || !c->cmb) return false;
    for (int k = 0; k < c->cmb->ngroups; k++) {
        const ClaGroup *g = c->cmb->groups[k];
        if ((g->enc == CLA_OLE || g->enc == CLA_RLE) &&
            (g->ndict < 0 || !g->ix || !g->ix->ptr || (g->ndict > 0 && (!g->dict || !g->ix->data))))
            return false;
        if ((g->enc == CLA_DDC1 || g->enc == CLA_DDC2 || g->enc == CLA_CONST) && (g->ndict < 1 || !g->dict)) return false;
        if ((g->enc == CLA_DDC1 && (!g->ix || !g->ix->c1)) || (g->enc == CLA_DDC2 && (!g->ix || !g->ix->c2))) return false;
        if (g->enc == CLA_UNC && (!g->unc || g->unc->cmb || g->unc->rows != c->rows || g->unc->cols != g->ncols))
            return false;
    }
    return true;
}

/* An OLE or RLE group's tuples into out (rows x cols, zeroed): its
 * lists uploaded as they are, with (OLE) each tuple's segment starts
 * found on the host (a walk over the segment headers), one launch. 0, or
 * -1 with e set. */
static int cla_lists_run(const ClaGroup *g, int64_t rows, int64_t cols, cl_mem out, BrErr *e)
{
    const int64_t *ptr = g->ix->ptr;
    int64_t nd = ptr[g->ndict];
    if (g->ndict == 0 || nd == 0) return 0;
    cl_int rle = g->enc == CLA_RLE;
    cl_long nseg = rle ? 1 : (rows + CLA_SEG - 1) / CLA_SEG;
    size_t ns = (size_t)g->ndict * (size_t)nseg + 1;
    int64_t *st = br_malloc(ns * sizeof *st);
    if (!st) { br_err(e, BR_ENOMEM, "out of memory"); return -1; }
    if (rle) memcpy(st, ptr, ns * sizeof *st);
    for (int32_t t = 0; !rle && t < g->ndict; t++)
        for (int64_t s = 0, p = ptr[t]; s < nseg; s++) {
            st[t * nseg + s] = p < ptr[t + 1] ? p : -1;
            if (p < ptr[t + 1]) p += 1 + g->ix->data[p];
        }
    if (!rle) st[ns - 1] = nd;
    cl_mem gc = gpu_upload(g->cols, (size_t)g->ncols * sizeof(int32_t), e), dict = NULL, data = NULL, sb = NULL;
    int rc = -1;
    if (!gc) goto done;
    if (!(dict = gpu_upload(g->dict, (size_t)g->ndict * (size_t)g->ncols * sizeof(double), e)) ||
        !(data = gpu_upload(g->ix->data, (size_t)nd * sizeof(uint16_t), e)) || !(sb = gpu_upload(st, ns * sizeof *st, e)))
        goto done;
    cl_long r = rows, c = cols;
    cl_int nc = g->ncols, nt = g->ndict;
    if (!gpu_args(K(K_CLA_LISTS), e, sizeof r, &r, sizeof c, &c, sizeof nc, &nc, sizeof(cl_mem), &gc, sizeof(cl_mem),
                  &dict, sizeof(cl_mem), &data, sizeof(cl_mem), &sb, sizeof nt, &nt, sizeof nseg, &nseg, sizeof rle,
                  &rle, sizeof(cl_mem), &out, (size_t)0) &&
        !gpu_launch1(K(K_CLA_LISTS), (size_t)g->ndict * (size_t)nseg, 0, e))
        rc = 0;
done:
    free(st);
    gpu_free(gc);
    gpu_free(dict);
    gpu_free(data);
    gpu_free(sb);
    return rc;
}

/* Group g's columns into out (rows x cols): its compact form uploaded,
 * one launch. 0, or -1 with e set. */
static int cla_group_run(const ClaGroup *g, int64_t rows, int64_t cols, cl_mem out, BrErr *e)
{
    if (g->enc == CLA_EMPTY || g->ncols == 0 || rows == 0) return 0;
    if (g->enc == CLA_OLE || g->enc == CLA_RLE) return cla_lists_run(g, rows, cols, out, e);
    cl_int mode = g->enc == CLA_DDC1 ? 1 : g->enc == CLA_DDC2 ? 2 : g->enc == CLA_UNC ? 3 : 0;
    cl_mem gc = gpu_upload(g->cols, (size_t)g->ncols * sizeof(int32_t), e), dict = NULL, codes = NULL, u = NULL;
    GpuBuf ub = {0};
    int rc = -1;
    if (!gc) return -1;
    if (mode != 3 && !(dict = gpu_upload(g->dict, (size_t)g->ndict * (size_t)g->ncols * sizeof(double), e))) goto done;
    if (mode == 1 && !(codes = gpu_upload(g->ix->c1, (size_t)rows, e))) goto done;
    if (mode == 2 && !(codes = gpu_upload(g->ix->c2, (size_t)rows * sizeof(uint16_t), e))) goto done;
    if (mode == 3 && gpu_get(g->unc, &ub, e)) goto done;
    cl_long r = rows, c = cols;
    if (mode == 3 && ub.sparse) {
        /* a CSR block: its entries scattered into the zeroed out (no
         * dense copy first) */
        if (!gpu_args(K(K_CLA_UNC_CSR), e, sizeof r, &r, sizeof c, &c, sizeof(cl_mem), &gc, sizeof(cl_mem), &ub.rp,
                      sizeof(cl_mem), &ub.ci, sizeof(cl_mem), &ub.v, sizeof(cl_mem), &out, (size_t)0) &&
            !gpu_launch1(K(K_CLA_UNC_CSR), (size_t)rows, 0, e))
            rc = 0;
        goto done;
    }
    if (mode == 3) u = ub.d;
    cl_int nc = g->ncols;
    cl_mem dd = dict ? dict : out, c1 = mode == 1 ? codes : out, c2 = mode == 2 ? codes : out, uu = u ? u : out;
    if (!gpu_args(K(K_CLA_GROUP), e, sizeof r, &r, sizeof c, &c, sizeof nc, &nc, sizeof(cl_mem), &gc, sizeof(cl_mem),
                  &dd, sizeof(cl_mem), &c1, sizeof(cl_mem), &c2, sizeof(cl_mem), &uu, sizeof mode, &mode,
                  sizeof(cl_mem), &out, (size_t)0) &&
        !gpu_launch1(K(K_CLA_GROUP), (size_t)(rows * g->ncols), 0, e))
        rc = 0;
done:
    gpu_free(gc);
    gpu_free(dict);
    gpu_free(codes);
    return rc;
}

MB *gpu_cla_decompress(const MB *c, BrErr *e)
{
    if (!gpu_cla_ok(c) || c->rows * c->cols == 0) return NULL;
    if (!begin(e)) return NULL;
    MB *r = NULL;
    cl_mem o = out_buf(c->rows * c->cols, e);
    const cl_double zero = 0;
    cl_int rc = o ? clEnqueueFillBuffer(gpu_ctx.q, o, &zero, sizeof zero, 0,
                                        (size_t)(c->rows * c->cols) * sizeof(double), 0, NULL, NULL)
                  : CL_SUCCESS;
    if (rc != CL_SUCCESS) gpu_clerr(e, rc, "clEnqueueFillBuffer");
    bool ok = o && rc == CL_SUCCESS;
    for (int k = 0; ok && k < c->cmb->ngroups; k++) ok = !cla_group_run(c->cmb->groups[k], c->rows, c->cols, o, e);
    if (ok) r = gpu_dense_result(c->rows, c->cols, o, e), o = NULL;
    gpu_free(o);
    return end(r);
}
