/* spoof_cl.c: codegen's Row operators on the device (docs/gpu.md,
 * "Codegen's Row operators in OpenCL"). codegen/cgen_cl.c generates the
 * kernel `cg_row` of a Row CPlan; this file is its skeleton, the device
 * twin of kernels/spoof_row.c: it binds the inputs (device copies from
 * the pool; sparse side inputs expanded on the device; a CSR main input
 * passed as its row pointers, columns and values), launches one
 * work-item per contiguous block of rows, each with its own scratch for
 * the row's vector temporaries, and for the aggregating variants adds
 * the work-items' partials in a fixed order (cg_comb: one work-item per
 * output cell, blocks 0, 1, ... in turn), so the result does not depend
 * on the schedule (no atomics). NO_AGG and ROW_AGG write their rows
 * directly. Programs are built once per source. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_int.h"
#include "../base/strbuf.h"
#include "../base/vec.h"
#include "../kernels/spoof.h"

/* Helpers of the generated code over global memory (the row vectors, the
 * side inputs and the scratch all live there), with the CPU prelude's
 * semantics (codegen/prims.c): Kahan sums, NaN-sticky min/max, the last
 * extreme index. Then the fixed combine kernel. */
static const char row_helpers[] =
    "typedef __global const double *gcd;\n"
    "CG_INL void cg_kaddg(__global double *s, __global double *c, double x)\n"
    "{\n"
    "    double y = x + *c, t = *s + y;\n"
    "    *c = fabs(t) <= DBL_MAX ? y - (t - *s) : 0;\n"
    "    *s = t;\n"
    "}\n"
    "CG_INL double cg_vsum(gcd a, long n) { double s = 0, c = 0; for (long k = 0; k < n; k++) cg_kadd(&s, &c, a[k]); return s + c; }\n"
    "CG_INL double cg_vsumsq(gcd a, long n) { double s = 0, c = 0; for (long k = 0; k < n; k++) cg_kadd(&s, &c, a[k] * a[k]); return s + c; }\n"
    "CG_INL double cg_vmin(gcd a, long n) { double s = INFINITY; for (long k = 0; k < n; k++) s = cg_minstep(s, a[k]); return s; }\n"
    "CG_INL double cg_vmax(gcd a, long n) { double s = -INFINITY; for (long k = 0; k < n; k++) s = cg_maxstep(s, a[k]); return s; }\n"
    "CG_INL double cg_vidxmin(gcd a, long n)\n"
    "{ double s = INFINITY; long ix = 0; for (long k = 0; k < n; k++) { int t = a[k] <= s; s = t ? a[k] : s; ix = t ? k : ix; } return (double)(ix + 1); }\n"
    "CG_INL double cg_vidxmax(gcd a, long n)\n"
    "{ double s = -INFINITY; long ix = 0; for (long k = 0; k < n; k++) { int t = a[k] >= s; s = t ? a[k] : s; ix = t ? k : ix; } return (double)(ix + 1); }\n"
    "CG_INL double cg_dotg(gcd a, gcd b, long n) { double s = 0; for (long k = 0; k < n; k++) s += a[k] * b[k]; return s; }\n"
    /* out[c] = sum_j a[j] B[j, c] over a row-major n x nc B */
    "CG_INL void cg_vecmatg(gcd a, long n, gcd B, long nc, __global double *out)\n"
    "{\n"
    "    for (long c = 0; c < nc; c++) { double s = 0; for (long j = 0; j < n; j++) s += a[j] * B[j * nc + c]; out[c] = s; }\n"
    "}\n"
    /* the partials of ng blocks (psz doubles each) of one output at off:
     * kind 0 a Kahan pair layout (n sums, then n corrections), 1 plain
     * cells; agg 0 sum, 1 min, 2 max; div: the mean's divisor (1) */
    "__kernel void cg_comb(long ng, long psz, long off, long n, int kind, int agg, double div,\n"
    "                      __global const double *part, __global double *res)\n"
    "{\n"
    "    long j = get_global_id(0);\n"
    "    if (j >= n) return;\n"
    "    double s = agg == 1 ? INFINITY : agg == 2 ? -INFINITY : 0, c = 0;\n"
    "    for (long g = 0; g < ng; g++) {\n"
    "        __global const double *p = part + g * psz + off;\n"
    "        if (agg == 1) s = cg_minstep(s, p[j]);\n"
    "        else if (agg == 2) s = cg_maxstep(s, p[j]);\n"
    "        else if (kind == 1) cg_kadd(&s, &c, p[j]);\n"
    "        else { cg_kadd(&s, &c, p[j]); cg_kadd(&s, &c, p[n + j]); }\n"
    "    }\n"
    "    res[j] = agg ? s : (s + c) / div;\n"
    "}\n";

typedef struct RowProg { char *src; cl_program p; cl_kernel row, comb; bool failed; } RowProg;
static RowProg *progs;
static int nprogs, cprogs;

/* The kernels of generated source src (built once; NULL with e set when
 * the build failed, then and at every later call). */
static RowProg *prog_for(const char *src, BrErr *e)
{
    for (int i = 0; i < nprogs; i++)
        if (!strcmp(progs[i].src, src)) {
            if (progs[i].failed) { br_err(e, BR_EFAIL, "GPU: the fused operator's kernel did not build"); return NULL; }
            return &progs[i];
        }
    if (!br_grow((void **)&progs, &cprogs, nprogs + 1, sizeof *progs)) return br_err(e, BR_ENOMEM, "out of memory"), NULL;
    RowProg *r = &progs[nprogs];
    memset(r, 0, sizeof *r);
    char *pre = gpu_cl_prelude();
    StrBuf b = {0};
    sb_puts(&b, pre ? pre : "");
    sb_puts(&b, row_helpers);
    sb_puts(&b, src);
    free(pre);
    if (!(r->src = strdup(src)) || b.oom) { free(b.s); free(r->src); return br_err(e, BR_ENOMEM, "out of memory"), NULL; }
    nprogs++;
    r->p = gpu_build(b.s, e);
    free(b.s);
    cl_int rc = CL_SUCCESS;
    if (r->p) r->row = clCreateKernel(r->p, "cg_row", &rc);
    if (r->p && rc == CL_SUCCESS) r->comb = clCreateKernel(r->p, "cg_comb", &rc);
    if (r->p && rc != CL_SUCCESS) gpu_clerr(e, rc, "clCreateKernel");
    if (!r->comb) { r->failed = true; return NULL; }
    return r;
}

/* A small read-only buffer holding bytes (L, scalars). */
static cl_mem small_buf(const void *p, size_t bytes, BrErr *e)
{
    cl_int rc;
    double dummy = 0;
    cl_mem m = clCreateBuffer(gpu_ctx.ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes ? bytes : sizeof dummy,
                              bytes ? (void *)p : &dummy, &rc);
    if (rc != CL_SUCCESS) return gpu_clerr(e, rc, "clCreateBuffer"), NULL;
    gpu_st.h2d_bytes += (int64_t)bytes;
    return m;
}

/* Work-items (blocks of rows): enough to fill the device, each block at
 * least one row, and the partials and scratch within a quarter of the
 * pool's budget. */
static int64_t row_blocks(int64_t rows, int64_t per_block)
{
    int64_t g = (int64_t)BR_MAX(1, gpu_ctx.info.compute_units) * 64;
    double cap = gpu_ctx.budget / 4 / ((double)BR_MAX(per_block, 1) * 8);
    if ((double)g > cap) g = (int64_t)BR_MAX(1.0, cap);
    return BR_MIN(g, BR_MAX(rows, 1));
}

/* The combined output o (its partials at off) into a new device buffer
 * of its cells: a block (device-only) or, for a full aggregate, *v. */
static int combine(RowProg *pr, const SpRowOut *o, cl_mem part, int64_t ng, int64_t psz, int64_t off, int64_t M,
                   MB **res, double *v, BrErr *e)
{
    cl_long n = o->var == SPR_FULL_AGG ? 1 : o->orows * o->ocols, lng = ng, lpsz = psz, loff = off;
    cl_int kind = o->var == SPR_COL_T_AGG, agg = o->agg == SPA_MIN ? 1 : o->agg == SPA_MAX ? 2 : 0;
    cl_double div = o->agg != SPA_MEAN ? 1 : o->var == SPR_FULL_AGG ? (double)M * (double)o->ocols : (double)M;
    cl_mem r = gpu_alloc((size_t)BR_MAX(n, 1) * sizeof(double), e);
    if (!r) return e->code ? -1 : -2;   /* beyond the largest buffer: the CPU */
    if (gpu_args(pr->comb, e, sizeof lng, &lng, sizeof lpsz, &lpsz, sizeof loff, &loff, sizeof n, &n, sizeof kind, &kind,
                 sizeof agg, &agg, sizeof div, &div, sizeof(cl_mem), &part, sizeof(cl_mem), &r, (size_t)0) ||
        gpu_launch1(pr->comb, (size_t)n, 0, e)) {
        clReleaseMemObject(r);
        return -1;
    }
    if (o->var == SPR_FULL_AGG) {
        cl_int rc = clEnqueueReadBuffer(gpu_ctx.q, r, CL_TRUE, 0, sizeof(double), v, 0, NULL, NULL);
        clReleaseMemObject(r);
        if (rc != CL_SUCCESS) return gpu_clerr(e, rc, "clEnqueueReadBuffer");
        gpu_st.d2h_bytes += sizeof(double);
        return 0;
    }
    return (*res = gpu_dense_result(o->orows, o->ocols, r, e)) ? 0 : -1;
}

/* Binds input k as the kernel's argument: dense buffer, a sparse side
 * input expanded (its buffer kept in *tmp), the main input's CSR arrays
 * in rp/ci. */
static int bind_input(const SpoofRow *op, int k, cl_mem *arg, cl_mem *tmp, cl_mem *rp, cl_mem *ci, BrErr *e)
{
    const MB *m = op->in.m[k];
    if (!m) return 0;
    GpuBuf b;
    if (gpu_get(m, &b, e)) return -1;
    if (!b.sparse) { *arg = b.d; return 0; }
    if (k == op->main) { *arg = b.v, *rp = b.rp, *ci = b.ci; return 0; }
    return (*arg = gpu_dense_view(m, &b, tmp, e)) ? 0 : e->code ? -1 : -2;
}

int gpu_spoof_row(const char *src, const SpoofRow *op, int nL, int64_t tmplen, MB **res, double *v, BrErr *e)
{
    if (gpu_init(e)) return -1;
    pthread_mutex_lock(&gpu_lock);
    gpu_pool_trim();
    int n = op->in.n, rc = 0;
    RowProg *pr = prog_for(src, e);
    cl_mem *arg = br_calloc((size_t)n + 1, sizeof *arg), *tmp = br_calloc((size_t)n + 1, sizeof *tmp);
    cl_mem rp = NULL, ci = NULL, L = NULL, sc = NULL, scratch = NULL, out = NULL;
    SpRowOut o[SPOOF_MAXOUT];
    int nout = k_spoof_row_outs(op, o);
    int64_t psz = 0, offs[SPOOF_MAXOUT], M = op->rows;
    for (int t = 0; t < nout; t++) offs[t] = psz, psz += k_spoof_row_psize(&o[t]);
    if (!pr || !arg || !tmp) { rc = -1; if (!e->code) br_err(e, BR_ENOMEM, "out of memory"); goto done; }
    for (int k = 0; k < n && !rc; k++) rc = bind_input(op, k, &arg[k], &tmp[k], &rp, &ci, e);
    if (rc) { rc = rc == -2 ? 0 : -1; goto done; }
    int64_t ng = row_blocks(M, psz + tmplen), rb = (M + ng - 1) / BR_MAX(ng, 1);
    ng = M > 0 ? (M + rb - 1) / rb : 0;
    bool rowout = op->var == SPR_NO_AGG || op->var == SPR_ROW_AGG;
    int64_t ocells = rowout ? M * op->ocols : ng * psz;
    if (!(L = small_buf(op->L, (size_t)nL * sizeof(int64_t), e)) || !(sc = small_buf(op->in.sc, (size_t)n * sizeof(double), e)) ||
        !(scratch = gpu_alloc((size_t)BR_MAX(ng * tmplen, 1) * sizeof(double), e)) ||
        !(out = gpu_alloc((size_t)BR_MAX(ocells, 1) * sizeof(double), e))) {
        rc = e->code ? -1 : 0;   /* a buffer beyond the device's largest: the CPU */
        goto done;
    }
    cl_long lM = M, lrb = rb, lng = ng, ltmp = tmplen, lpsz = psz, loc = rowout ? op->ocols : 0;
    cl_int msp = rp != NULL;
    cl_uint a = 0;
    cl_int cr = CL_SUCCESS;
    for (int k = 0; k < n && cr == CL_SUCCESS; k++) cr = clSetKernelArg(pr->row, a++, sizeof(cl_mem), &arg[k]);
    const void *vals[] = {&rp, &ci, &L, &sc, &lM, &lrb, &lng, &ltmp, &lpsz, &loc, &msp, &scratch, &out};
    const size_t szs[] = {sizeof rp, sizeof ci, sizeof L, sizeof sc, 8, 8, 8, 8, 8, 8, sizeof msp, sizeof scratch, sizeof out};
    for (size_t q = 0; q < sizeof szs / sizeof *szs && cr == CL_SUCCESS; q++) cr = clSetKernelArg(pr->row, a++, szs[q], vals[q]);
    if (cr != CL_SUCCESS) { rc = gpu_clerr(e, cr, "clSetKernelArg"); goto done; }
    if (ng > 0 && gpu_launch1(pr->row, (size_t)ng, 0, e)) { rc = -1; goto done; }
    if (rowout) {
        res[0] = gpu_dense_result(M, op->ocols, out, e);
        out = NULL;
        rc = res[0] ? 1 : -1;
        goto done;
    }
    for (int t = 0; t < nout && !rc; t++) rc = combine(pr, &o[t], out, ng, psz, offs[t], M, &res[t], &v[t], e);
    if (!rc) rc = 1;
    else {
        for (int t = 0; t < nout; t++) mb_release(res[t]), res[t] = NULL;
        rc = rc == -2 ? 0 : -1;
    }
done:
    for (int k = 0; k < n && tmp; k++) if (tmp[k]) clReleaseMemObject(tmp[k]);
    if (L) clReleaseMemObject(L);
    if (sc) clReleaseMemObject(sc);
    if (scratch) clReleaseMemObject(scratch);
    if (out) clReleaseMemObject(out);
    free(arg);
    free(tmp);
    gpu_unpin_all();
    if (rc == 1) gpu_st.ops++, gpu_st.fused_ops++;
    pthread_mutex_unlock(&gpu_lock);
    return rc;
}

void gpu_count_fused_cpu(void)
{
    pthread_mutex_lock(&gpu_lock);
    gpu_st.fused_cpu++;
    pthread_mutex_unlock(&gpu_lock);
}
