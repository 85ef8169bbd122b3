/* spoof_cl.c: codegen's fused operators on the device (docs/gpu.md,
 * "Codegen's Row, Outer, Cell and MAgg operators in OpenCL").
 * codegen/cgen_cl.c generates the kernel `cg_main` of a CPlan; this file
 * is its skeleton, the device twin of kernels/spoof_row.c, spoof_outer.c
 * and spoof_cell.c: it binds the inputs (device copies from the pool;
 * CSR side inputs of the iteration shape, row and column vectors passed
 * as CSR to the kernel that reads them so, a product's sparse operand
 * expanded on the device; a CSR main input passed as its row pointers,
 * columns and values), launches one work-item per
 * contiguous block of rows, each with its own scratch, and for the
 * aggregating variants adds the work-items' partials in a fixed order
 * (cg_comb: one work-item per output cell, blocks 0, 1, ... in turn), so
 * the result does not depend on the schedule (no atomics; where the
 * latency evaluator says so, the launch's last row group runs the same
 * combine for every aggregated output, counted by an atomic, in place
 * of cg_comb's launches: comb_nbufs). NO_AGG and ROW_AGG write their rows
 * directly. Programs are built once per source,
 * in the background under sysds.gpu.async (the CPU's operator runs
 * until then). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_int.h"
#include "stitch.h"
#include "../base/strbuf.h"
#include "../base/vec.h"
#include "../kernels/spoof.h"

/* Helpers of the generated code over global memory (the row vectors, the
 * side inputs and the scratch all live there), with the CPU prelude's
 * semantics (codegen/prims.c): Kahan sums, NaN-sticky min/max, the last
 * extreme index. Then the fixed combine kernel. */
#define STR_(x) #x
#define STR(x) STR_(x)
static const char row_helpers[] =
    "typedef __global const double *gcd;\n"
    "#define CG_TJ " STR(GPU_CG_TJ) "\n"
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
    /* cg_vecmatg over a CSR B (row pointers RP, columns CI, values V):
     * row j's entries scattered into out, in j's order (cg_vecmatg's
     * sums to the bit: the zeros it adds change no sum); a NaN or Inf
     * a[j] by every column, the row's cursor giving its values and zeros
     * elsewhere (Inf * 0: NaN as there) */
    "CG_INL void cg_vecmatc(gcd a, long n, gcd V, __global const long *RP, __global const int *CI, long nc, __global double *out)\n"
    "{\n"
    "    for (long c = 0; c < nc; c++) out[c] = 0;\n"
    "    for (long j = 0; j < n; j++) {\n"
    "        const double x = a[j];\n"
    "        const long qa = RP[j], qe = RP[j + 1];\n"
    "        if (isfinite(x)) { for (long q = qa; q < qe; q++) out[CI[q]] += x * V[q]; continue; }\n"
    "        for (long c = 0, q = qa; c < nc; c++) { double bv = 0; if (q < qe && CI[q] == c) bv = V[q++]; out[c] += x * bv; }\n"
    "    }\n"
    "}\n"
    /* cg_dotg against a CSR n x 1 B: row j's one entry, if any */
    "CG_INL double cg_dotc(gcd a, long n, gcd V, __global const long *RP)\n"
    "{ double s = 0; for (long j = 0; j < n; j++) s += a[j] * (RP[j + 1] > RP[j] ? V[RP[j]] : 0.0); return s; }\n"
    /* out = a B over a row-major n x nc B by B's tiles of tk rows and tj
     * columns in local memory bt, loaded by the whole work-group (every
     * work-item calls it: uniform n, nc); each work-item's tj sums in
     * registers, in k's order (cg_vecmatg's sums, bit for bit) */
    "CG_INL void cg_vecmatl(gcd a, long n, gcd B, long nc, __global double *out, __local double *bt, long tk, long tj)\n"
    "{\n"
    "    const long lid = get_local_id(0), wg = get_local_size(0);\n"
    "    for (long c0 = 0; c0 < nc; c0 += tj) {\n"
    "        const long cn = min(tj, nc - c0);\n"
    "        double acc[CG_TJ];\n"
    "        for (long c = 0; c < cn; c++) acc[c] = 0;\n"
    "        for (long k0 = 0; k0 < n; k0 += tk) {\n"
    "            const long kn = min(tk, n - k0);\n"
    "            barrier(CLK_LOCAL_MEM_FENCE);\n"
    "            for (long t = lid; t < kn * cn; t += wg) bt[t] = B[(k0 + t / cn) * nc + c0 + t % cn];\n"
    "            barrier(CLK_LOCAL_MEM_FENCE);\n"
    "            for (long k = 0; k < kn; k++) { const double av = a[k0 + k]; for (long c = 0; c < cn; c++) acc[c] += av * bt[k * cn + c]; }\n"
    "        }\n"
    "        for (long c = 0; c < cn; c++) out[c0 + c] = acc[c];\n"
    "    }\n"
    "}\n"
    /* the partials of ng blocks (psz doubles each) of one output at off:
     * kind 0 a Kahan pair layout (n sums, then n corrections), 1 plain
     * cells; agg 0 sum, 1 min, 2 max; div: the mean's divisor (1) */
    /* (volatile: read past the caches, so a stitched launch's last
     * work-group (stitched_source) sees the other groups' partials) */
    "CG_INL void cg_comb1(long j, long ng, long psz, long off, long n, int kind, int agg, double div, double zm,\n"
    "                     __global const volatile double *part, __global double *res)\n"
    "{\n"
    "    double s = agg == 1 ? INFINITY : agg == 2 ? -INFINITY : 0, c = 0, cnt = 0;\n"
    "    for (long g = 0; g < ng; g++) {\n"
    "        __global const volatile double *p = part + g * psz + off;\n"
    "        if (agg == 1) s = cg_minstep(s, p[j]);\n"
    "        else if (agg == 2) s = cg_maxstep(s, p[j]);\n"
    "        else if (kind == 1) cg_kadd(&s, &c, p[j]);\n"
    "        else { cg_kadd(&s, &c, p[j]); cg_kadd(&s, &c, p[n + j]); }\n"
    "        if (agg && zm > 0) cnt += p[n + j];\n"
    "    }\n"
    /* zm > 0: min/max over the stored values of a sparse input, their
     * counts after the values; implicit zeros when fewer than zm */
    "    if (agg && zm > 0 && cnt < zm) s = agg == 1 ? cg_minstep(s, 0.0) : cg_maxstep(s, 0.0);\n"
    "    res[j] = agg ? s : (s + c) / div;\n"
    "}\n"
    "__kernel void cg_comb(long ng, long psz, long off, long n, int kind, int agg, double div, double zm,\n"
    "                      __global const double *part, __global double *res)\n"
    "{\n"
    "    long j = get_global_id(0);\n"
    "    if (j < n) cg_comb1(j, ng, psz, off, n, kind, agg, div, zm, part, res);\n"
    "}\n";

/* A generated operator's program: state 1 built, 0 building in the
 * background (sysds.gpu.async), -1 failed. */
/* tiled: cg_main takes GPU_TILE_ARGS; wg, tk, tj its tiles (tile_sizes) */
typedef struct RowProg { char *src; cl_program p; cl_kernel row, comb; int state; bool tiled, outer; size_t wg; long tk, tj; } RowProg;   /* row: cg_main */
static RowProg *progs;
static int nprogs, cprogs;
static pthread_cond_t prog_built = PTHREAD_COND_INITIALIZER;   /* a program's state left 0 (with gpu_lock) */

/* A test's tile sizes (gpu_spoof_tiles; 0: the device's). */
static int tile_wg, tile_tk, tile_tj;
/* A test's override of a stitched region's schedule (gpu_spoof_pre). */
static int pre_mode;

void gpu_spoof_tiles(int wg, int tk, int tj)
{
    pthread_mutex_lock(&gpu_lock);
    tile_wg = wg, tile_tk = tk, tile_tj = tj;
    pthread_mutex_unlock(&gpu_lock);
}

/* The tiles of a tiled program (built): a work-group of wg work-items
 * (at most 64, the device's and the kernel's limits, a power of two),
 * tj = GPU_CG_TJ columns (V's rows for Outer), and tk, a power of two up
 * to 64, as large as lets the group's tiles (Row: B's tk x tj; Outer:
 * U's wg x tk and V's tj x tk) take at most half the local memory the
 * kernel leaves (two groups per compute unit). */
static void tile_sizes(RowProg *r)
{
    size_t kwg = 0;
    cl_ulong kloc = 0;
    if (clGetKernelWorkGroupInfo(r->row, gpu_ctx.dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg, &kwg, NULL) != CL_SUCCESS)
        kwg = 1;
    if (clGetKernelWorkGroupInfo(r->row, gpu_ctx.dev, CL_KERNEL_LOCAL_MEM_SIZE, sizeof kloc, &kloc, NULL) != CL_SUCCESS)
        kloc = 0;
    size_t wg = BR_MIN(BR_MIN((size_t)64, gpu_ctx.info.max_wg), BR_MAX(kwg, (size_t)1)), w = 1;
    while (w * 2 <= wg) w *= 2;
    bool outer = r->outer;
    double avail = gpu_ctx.info.local_mem > kloc ? (double)(gpu_ctx.info.local_mem - kloc) / 2 : 0;
    long tj = GPU_CG_TJ, tk = 64;
    for (;;) {
        double need = 8.0 * (double)tk * (double)(outer ? (long)w + tj : tj) + (outer ? 8 : 0);
        if (need <= avail) break;
        if (tk > 1) tk /= 2;
        else if (w > 1) w /= 2;
        else if (tj > 1) tj /= 2;
        else break;
    }
    r->wg = w, r->tk = tk, r->tj = tj;
}

/* Builds the full text (prelude, helpers, src) into progs[i]'s kernels;
 * the build itself runs without gpu_lock when `unlocked`. */
static void prog_build(int i, char *full, bool unlocked)
{
    BrErr e = {0};
    if (unlocked) pthread_mutex_unlock(&gpu_lock);
    cl_program p = gpu_build(full, &e);
    cl_int rc = CL_SUCCESS;
    cl_kernel row = p ? clCreateKernel(p, "cg_main", &rc) : NULL;
    cl_kernel comb = row ? clCreateKernel(p, "cg_comb", &rc) : NULL;
    if (unlocked) pthread_mutex_lock(&gpu_lock);
    RowProg *r = &progs[i];
    r->p = p, r->row = row, r->comb = comb;
    r->state = comb ? 1 : -1;
    if (comb && r->tiled) tile_sizes(r);
    free(full);
    pthread_cond_broadcast(&prog_built);
}

typedef struct ProgJob { int i; char *full; } ProgJob;

/* The background build of a program (sysds.gpu.async). */
static void *prog_job(void *arg)
{
    ProgJob *j = arg;
    gpu_async_gate();
    pthread_mutex_lock(&gpu_lock);
    prog_build(j->i, j->full, true);
    gpu_async_done();
    pthread_mutex_unlock(&gpu_lock);
    free(j);
    return NULL;
}

/* The kernels of generated source src (under gpu_lock; built once; NULL
 * with e set when the build failed, then and at every later call).
 * Under sysds.gpu.async the first call starts the build in the
 * background and this and later calls return NULL with e clear and
 * *pending set until it is done: the CPU's operator runs meanwhile. */
static RowProg *prog_for(const char *src, bool *pending, BrErr *e)
{
    *pending = false;
    bool exact = !strncmp(src, GPU_CG_EXACT, strlen(GPU_CG_EXACT));
    for (int i = 0; i < nprogs; i++)
        if (!strcmp(progs[i].src, src)) {
            /* another thread builds it: an exact operator runs on the CPU
             * meanwhile, any other waits */
            while (!exact && progs[i].state == 0) pthread_cond_wait(&prog_built, &gpu_lock);
            if (progs[i].state < 0) { br_err(e, BR_EFAIL, "GPU: the fused operator's kernel did not build"); return NULL; }
            if (progs[i].state == 0) { *pending = true; return NULL; }
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
    r->tiled = strstr(src, GPU_TILE_ARGS) != NULL;
    r->outer = strstr(src, GPU_OUTER_TILES) != NULL;   /* cgen_cl_outer's U and V tiles */
    int i = nprogs++;
    ProgJob *j = stitch_async() && exact ? malloc(sizeof *j) : NULL;
    if (j) {
        *j = (ProgJob){i, b.s};
        if (gpu_async_start(prog_job, j)) { *pending = true; return NULL; }
        free(j);
    }
    /* under async an operator that is not exact builds here, without
     * the lock (the other operators keep launching; its other callers
     * wait above) */
    prog_build(i, b.s, stitch_async());
    if (progs[i].state < 0) return br_err(e, BR_EFAIL, "GPU: the fused operator's kernel did not build"), NULL;
    return &progs[i];
}

bool gpu_spoof_built(const char *src)
{
    bool built = false;
    pthread_mutex_lock(&gpu_lock);
    for (int i = 0; i < nprogs && !built; i++) built = progs[i].state == 1 && !strcmp(progs[i].src, src);
    pthread_mutex_unlock(&gpu_lock);
    return built;
}

/* A small buffer holding bytes (L, scalars; none: an unwritten one of
 * gpu_alloc's least size). */
static cl_mem small_buf(const void *p, size_t bytes, BrErr *e)
{
    cl_mem m = gpu_upload_small(p, bytes, e);
    if (m) gpu_st.h2d_bytes += (int64_t)bytes;
    return m;
}

/* Work-items (blocks of rows): enough to fill the device (64 per
 * compute unit: gpu_units, the device's unless a test pins them, since
 * the block count is the number of partials the latency evaluator
 * prices a combine by), each block at least one row, and the partials
 * and scratch within a quarter of the pool's budget. */
static int64_t row_blocks(int64_t rows, int64_t per_block)
{
    double cus, mhz;
    gpu_units(&cus, &mhz);
    int64_t g = (int64_t)cus * 64;
    double cap = gpu_ctx.budget / 4 / ((double)BR_MAX(per_block, 1) * 8);
    if ((double)g > cap) g = (int64_t)BR_MAX(1.0, cap);
    return BR_MIN(g, BR_MAX(rows, 1));
}

/* cg_comb's arguments for output o over M rows: its cells n, the
 * partials' layout (kind), the aggregate, the mean's divisor. */
static void comb_args(const SpRowOut *o, int64_t M, cl_long *n, cl_int *kind, cl_int *agg, cl_double *div)
{
    /* (Outer's products come as COL_T_AGG outputs: plain cells) */
    *n = o->var == SPR_FULL_AGG ? 1 : o->orows * o->ocols;
    *kind = o->var == SPR_COL_T_AGG, *agg = o->agg == SPA_MIN ? 1 : o->agg == SPA_MAX ? 2 : 0;
    *div = o->agg != SPA_MEAN ? 1 : o->var == SPR_FULL_AGG ? (double)M * (double)o->ocols : (double)M;
}

/* The combined output o (its partials at off) into a new device buffer
 * of its cells: a block (device-only) or, for a full aggregate, *v. */
static int combine(RowProg *pr, const SpRowOut *o, cl_mem part, int64_t ng, int64_t psz, int64_t off, int64_t M,
                   double zm, MB **res, double *v, BrErr *e)
{
    cl_long n, lng = ng, lpsz = psz, loff = off;
    cl_int kind, agg;
    cl_double div;
    comb_args(o, M, &n, &kind, &agg, &div);
    cl_mem r = gpu_alloc((size_t)BR_MAX(n, 1) * sizeof(double), e);
    if (!r) return e->code ? -1 : -2;   /* beyond the largest buffer: the CPU */
    if (gpu_args(pr->comb, e, sizeof lng, &lng, sizeof lpsz, &lpsz, sizeof loff, &loff, sizeof n, &n, sizeof kind, &kind,
                 sizeof agg, &agg, sizeof div, &div, sizeof zm, &zm, sizeof(cl_mem), &part, sizeof(cl_mem), &r,
                 (size_t)0) ||
        gpu_launch1(pr->comb, (size_t)n, 0, e)) {
        gpu_free(r);
        return -1;
    }
    if (o->var == SPR_FULL_AGG) {
        cl_int rc = clEnqueueReadBuffer(gpu_ctx.q, r, CL_TRUE, 0, sizeof(double), v, 0, NULL, NULL);
        gpu_free(r);
        if (rc != CL_SUCCESS) return gpu_clerr(e, rc, "clEnqueueReadBuffer");
        gpu_st.d2h_bytes += sizeof(double);
        return 0;
    }
    return (*res = gpu_dense_result(o->orows, o->ocols, r, e)) ? 0 : -1;
}

/* Binds input k as the kernel's argument: dense buffer, the main
 * input's CSR arrays in rp/ci, a CSR side input the program reads as
 * CSR (side: its parameters RP<k>, CI<k>) by its arrays in rp/ci too,
 * any other sparse input expanded (its buffer kept in *tmp). */
static int bind_input(int main, const MB *m, int k, bool side, cl_mem *arg, cl_mem *tmp, cl_mem *rp, cl_mem *ci,
                      BrErr *e)
{
    if (!m) return 0;
    GpuBuf b;
    if (gpu_get(m, &b, e)) return -1;
    if (!b.sparse) { *arg = b.d; return 0; }
    if (k == main || side) { *arg = b.v, *rp = b.rp, *ci = b.ci; return 0; }
    return (*arg = gpu_dense_view(m, &b, tmp, e)) ? 0 : e->code ? -1 : -2;
}

/* The inputs of generated src that it can read as CSR side inputs
 * (codegen/cgen_cl.c csr_side_in: the parameters RP<k>, CI<k> after the
 * inputs' P<k>): side[k] for k < n; their count. */
static int csr_side_params(const char *src, int n, bool *side)
{
    const char *h = strstr(src, "\n__kernel void cg_main(");
    const char *ps = h ? strchr(h, '(') + 1 : NULL, *pe = ps ? strstr(ps, ")\n{\n") : NULL;
    int c = 0;
    for (const char *q = ps; q && q < pe && (q = strstr(q, "__global const long *RP")) && q < pe; q++) {
        char *end;
        long k = strtol(q + strlen("__global const long *RP"), &end, 10);
        if (end != q + strlen("__global const long *RP") && *end == ',' && k >= 0 && k < n && !side[k]) side[k] = true, c++;
    }
    return c;
}

/* Does a CSR side input of mode md take scratch (a row expanded)? Row's
 * side matrices and Outer's factors and side matrices are read by
 * their entries in place (codegen/cgen_cl.c csr_mat_in). */
static bool side_scratch(int md)
{
    return md == SPM_FULL || md == SPM_ROW || md == SPM_COL;
}

/* The scratch doubles per row that generated src takes for the CSR side
 * inputs of in (csr_side_params; main and a stitched call's replaced
 * inputs excepted): their columns (a column vector's one, unused; Outer
 * takes none: its kernel has no scratch); sp: a Cell/MAgg call on the
 * sparse path (msp 2), whose full side inputs take none (cell_side_len). */
static int64_t csr_side_len(const char *src, const SpoofIn *in, int main, const GpuStitchIn *st, bool sp)
{
    bool *side = br_calloc((size_t)in->n + 1, sizeof *side);
    int64_t len = 0;
    if (side && csr_side_params(src, in->n, side) > 0)
        for (int k = 0; k < in->n; k++)
            if (side[k] && k != main && !(st && st->slot[k] >= 0) && in->m[k] && in->m[k]->sparse &&
                !(sp && in->mode[k] == SPM_FULL) && side_scratch(in->mode[k]))
                len += in->m[k]->cols;
    free(side);
    return len;
}

/* The arguments of a generated cg_main: the inputs' buffers, the main
 * input's CSR arrays (NULL when dense), L, the scalars, rows, rows per
 * work-item, work-items, scratch doubles per work-item, partial doubles
 * per work-item, a template's extent (Row: output columns; Outer: W's
 * columns), whether the main input is CSR, scratch, output. */
static int set_main_args(cl_kernel k, int n, const cl_mem *arg, const bool *side, const cl_mem *srp, const cl_mem *sci,
                         cl_mem rp, cl_mem ci, cl_mem L, cl_mem sc, cl_long rows, cl_long rb, cl_long ng, cl_long tlen,
                         cl_long psz, cl_long ext, cl_int msp, cl_mem scratch, cl_mem out, BrErr *e)
{
    cl_uint a = 0;
    cl_int cr = CL_SUCCESS;
    for (int q = 0; q < n && cr == CL_SUCCESS; q++) cr = clSetKernelArg(k, a++, sizeof(cl_mem), &arg[q]);
    /* the CSR side inputs' row pointers and columns (NULL: dense) */
    for (int q = 0; q < n && cr == CL_SUCCESS; q++) {
        if (!side[q]) continue;
        cr = clSetKernelArg(k, a++, sizeof(cl_mem), &srp[q]);
        if (cr == CL_SUCCESS) cr = clSetKernelArg(k, a++, sizeof(cl_mem), &sci[q]);
    }
    const void *vals[] = {&rp, &ci, &L, &sc, &rows, &rb, &ng, &tlen, &psz, &ext, &msp, &scratch, &out};
    const size_t szs[] = {sizeof rp, sizeof ci, sizeof L, sizeof sc, 8, 8, 8, 8, 8, 8, sizeof msp, sizeof scratch, sizeof out};
    for (size_t q = 0; q < sizeof szs / sizeof *szs && cr == CL_SUCCESS; q++) cr = clSetKernelArg(k, a++, szs[q], vals[q]);
    return cr != CL_SUCCESS ? gpu_clerr(e, cr, "clSetKernelArg") : 0;
}

/* One call of a generated operator: its program, the inputs' device
 * buffers (arg; expanded sparse side inputs in tmp), the main input's
 * CSR arrays (rp, ci: NULL when dense), L and the scalars, scratch and
 * output buffers. call_open takes the backend's lock; call_close
 * releases what the call holds and the lock, counting an operator that
 * ran (rc 1). */
static int call_buf(cl_mem *m, int64_t cells, BrErr *e);
static cl_mem small_buf(const void *p, size_t bytes, BrErr *e);

typedef struct Call {
    bool locked, pending;   /* pending: the kernel builds in the background */
    bool declined;          /* the launch found a stitched vector NaN/Inf */
    int n;
    RowProg *pr;
    cl_mem *arg, *tmp;
    /* the inputs the program reads as CSR side inputs (side, nside of
     * them; csr_side_params), the row pointers and columns of those
     * bound CSR (srp, sci: else NULL) and their scratch doubles per
     * row (slen: their columns) */
    bool *side;
    int nside;
    cl_mem *srp, *sci;
    int64_t slen;
    cl_mem rp, ci, L, sc, scratch, out;
    /* a stitched call (st): X's buffer (the pool's), the region's
     * outputs, its scalars, the tickets and the finished count */
    const GpuStitchIn *st;
    cl_mem sx, sxp, sxi, so[ST_MAX_OUT], rsc, cnt, segv;   /* sxp, sxi: a CSR X's */
    /* its aggregated outputs combined in the launch (comb_prepare): ncd
     * descriptors (cd), the buffers of their cells (cr[0..ncr): the full
     * aggregates together, every other output its own); ncr: the
     * buffers the program takes (comb_nbufs), 0 when it combines
     * nothing (a stitched call's program always takes cr[0]) */
    cl_int ncd;
    int ncr;
    cl_mem cd, cr[SPOOF_MAXOUT];
} Call;

/* ---- a stitched operator in one launch (GpuStitchIn) ----
 * The generated cg_main becomes a function cg_row(g, ...) of its
 * work-item index; a new cg_main takes its parameters and the region's
 * and runs, per work-group, by a ticket taken as the group starts:
 * tickets below ga run the region's body (gpu/stitch.c body0: columns
 * t * wg, (t + ga) * wg, ... one per lane) and count themselves
 * finished; the others wait for that count to reach ga and run cg_row
 * for work-items (t - ga) * wg + lid with the region's outputs in place
 * of the stitched inputs. A group waits only for groups that took a
 * lower ticket, so have started: no deadlock on a device that keeps a
 * started group running (every GPU, and PoCL's threads), however many
 * groups are resident. With aggregated outputs (ncd > 0, comb_prepare)
 * the row group that counts itself finished last (cnt[2]) combines the
 * blocks' partials by cg_comb's body into CR (last-block-done). */
static const char k_head[] = "\n__kernel void cg_main(", k_gline[] = "    const long g = get_global_id(0);\n";

/* the identifier that ends each comma-separated parameter of ps..pe
 * (names[k], at most max; -1 when one is too long) */
static int param_names(const char *ps, const char *pe, char (*names)[24], int max)
{
    int n = 0;
    while (ps < pe && n < max) {
        const char *c = ps;
        while (c < pe && *c != ',') c++;
        const char *q = c;
        while (q > ps && !(q[-1] == '_' || (q[-1] >= '0' && q[-1] <= '9') || (q[-1] >= 'a' && q[-1] <= 'z') ||
                           (q[-1] >= 'A' && q[-1] <= 'Z')))
            q--;
        const char *a = q;
        while (a > ps && (a[-1] == '_' || (a[-1] >= '0' && a[-1] <= '9') || (a[-1] >= 'a' && a[-1] <= 'z') ||
                          (a[-1] >= 'A' && a[-1] <= 'Z')))
            a--;
        if (q - a < 1 || q - a >= 24) return -1;
        memcpy(names[n], a, (size_t)(q - a));
        names[n++][q - a] = 0;
        ps = c + 1;
    }
    return ps < pe ? -1 : n;
}

/* The region's arguments after the main ones: its scalars (rsc) when it
 * has any, then its outputs SO<from>..SO<nout-1>, declared (decl) or
 * passed by name. */
static void region_args(StrBuf *b, const GpuStitchIn *st, int nout, int from, bool decl)
{
    if (st->r->nsc > 0) sb_puts(b, decl ? ", __global const double *rsc" : ", rsc");
    for (int q = from; q < nout; q++) sb_printf(b, decl ? ", __global double *SO%d" : ", SO%d", q);
}

/* The combine's buffer arguments CR, CR1, ... CR<ncr - 1>, declared
 * (decl) or passed by name. */
static void comb_bufs_args(StrBuf *b, int ncr, bool decl)
{
    for (int q = 1; q < ncr; q++) sb_printf(b, decl ? ", __global double *CR%d" : ", CR%d", q);
}

/* The end of a wrapped cg_main (stitched_source): the last row group to
 * finish (ga groups ran the region) combines the blocks' partials
 * (cg_comb's order) of every aggregated output into its buffer
 * (descriptor word 7: CR, CR1, ...). */
static void comb_tail(StrBuf *b, int ncr)
{
    sb_puts(b, "    if (ncd == 0) return;\n"
               "    mem_fence(CLK_GLOBAL_MEM_FENCE);\n"
               "    barrier(CLK_GLOBAL_MEM_FENCE);\n"
               "    if (lid == 0) cg_last = atomic_inc(&cnt[2]) == (int)(get_num_groups(0) - ga) - 1;\n"
               "    barrier(CLK_LOCAL_MEM_FENCE);\n"
               "    if (!cg_last) return;\n"
               "    mem_fence(CLK_GLOBAL_MEM_FENCE);\n"
               "    for (int q = 0; q < ncd; q++) {\n"
               "        __global const double *d = CD + 8 * q;\n"
               "        const long cn = (long)d[1];\n"
               "        const int rb = (int)d[7];\n"
               "        __global double *r = CR;\n");
    for (int q = 1; q < ncr; q++) sb_printf(b, "        if (rb == %d) r = CR%d;\n", q, q);
    sb_puts(b, "        for (long j = lid; j < cn; j += (long)get_local_size(0))\n"
               "            cg_comb1(j, ng, psz, (long)d[0], cn, (int)d[2], (int)d[3], d[4], d[5], out, r + (long)d[6]);\n"
               "    }\n"
               "}\n");
}

/* Does the kernel body from b on declare local memory (a __local
 * variable, not a pointer into the kernel's tiles)? */
static bool declares_local(const char *b)
{
    for (const char *p = strstr(b, "__local "); p; p = strstr(p + 1, "__local ")) {
        const char *q = p + strlen("__local ");
        while (*q == '_' || *q == ' ' || (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9'))
            q++;
        if (*q != '*') return true;
    }
    return false;
}

/* The program text of a call of generated src that runs more than the
 * operator's rows in its launch (malloc'd): a stitched call (st), or
 * one whose aggregated outputs the launch combines into ncr buffers
 * (st NULL, ncr > 0). NULL when src is not of kernel_head's form or
 * declares local memory in its body, which a function cannot. */
static char *stitched_source(const char *src, const GpuStitchIn *st, int nin, int ncr)
{
    const char *h = strstr(src, k_head);
    const char *ps = h ? h + strlen(k_head) : NULL, *pe = ps ? strstr(ps, ")\n{\n") : NULL;
    const char *gl = pe ? strstr(pe, k_gline) : NULL;
    if (!gl || declares_local(pe)) return NULL;
    char names[64 + 24][24];
    int nn = param_names(ps, pe, names, 64 + 24);
    if (nn < nin) return NULL;
    bool csr = st && st->x->sparse;   /* X's CSR arrays (SXP, SXI) after its values */
    char *body = st ? stitch_body_source(st->r, csr) : NULL;
    if (st && !body) return NULL;
    size_t xl = strlen(GPU_CG_EXACT);
    bool exact = !strncmp(src, GPU_CG_EXACT, xl);
    const char *s0 = exact ? src + xl : src;
    int nout = st ? st_nout(st->r) : 0;
    StrBuf b = {0};
    if (exact) sb_puts(&b, GPU_CG_EXACT);
    if (body) sb_puts(&b, body);
    free(body);
    sb_put(&b, s0, (size_t)(h - s0));
    sb_puts(&b, "\nCG_INL void cg_row(long g, ");
    sb_put(&b, ps, (size_t)(pe - ps));
    sb_puts(&b, ")\n{\n");
    sb_put(&b, pe + 4, (size_t)(gl - (pe + 4)));
    sb_puts(&b, gl + strlen(k_gline));
    sb_puts(&b, k_head);
    sb_put(&b, ps, (size_t)(pe - ps));
    if (!st) {
        /* the rows, then the combine (no region: ga 0) */
        sb_puts(&b, ",\n    volatile __global int *cnt, __global const double *CD, int ncd, __global double *CR");
        comb_bufs_args(&b, ncr, true);
        sb_puts(&b, ")\n{\n"
                    "    __local int cg_last;\n"
                    "    const long lid = get_local_id(0), ga = 0;\n"
                    "    cg_row(get_global_id(0)");
        for (int k = 0; k < nn; k++) sb_printf(&b, ", %s", names[k]);
        sb_puts(&b, ");\n");
        comb_tail(&b, ncr);
        if (b.oom) { free(b.s); return NULL; }
        return b.s;
    }
    sb_puts(&b, ",\n    __global const double *SX, ");
    if (csr) sb_puts(&b, "__global const long *SXP, __global const int *SXI, ");
    sb_puts(&b, "long sxr, long sxc, __global double *SG, volatile __global int *cnt, "
                "long ga, int rls, int rcache, int nfchk, __global const double *CD, int ncd, __global double *CR, "
                "__local double *sh");
    region_args(&b, st, nout, 0, true);
    comb_bufs_args(&b, ncr, true);
    /* the region's groups: rls lanes per column (1: thread composition,
     * the group: work-group composition); with nfchk, the lane that
     * wrote a column's vectors flags (cnt[3]) any NaN or Inf among them,
     * and the row groups then skip their rows (the call is declined) */
    sb_puts(&b, ")\n{\n"
                "    __local int cg_t, cg_last, cg_bad;\n"
                "    const long lid = get_local_id(0);\n"
                "    if (lid == 0) cg_t = atomic_inc(&cnt[0]);\n"
                "    barrier(CLK_LOCAL_MEM_FENCE);\n"
                "    const long t = cg_t;\n"
                "    if (t < ga) {\n"
                "        body0(sxc, sxr, sxc, SX, ");
    if (csr) sb_puts(&b, "SXP, SXI, ");
    sb_puts(&b, "SO0, SG, sh, t, ga, rls, rcache");
    region_args(&b, st, nout, 1, false);
    sb_puts(&b, ");\n"
                "        const long spg = (long)get_local_size(0) / rls;\n"
                "        for (long s0 = t * spg; nfchk && s0 < sxc; s0 += ga * spg) {\n"
                "            const long seg = s0 + lid / rls;\n"
                "            if (lid % rls == 0 && seg < sxc && (0");
    for (int q = 0; q < nout; q++) sb_printf(&b, " || !isfinite(SO%d[seg])", q);
    sb_puts(&b, ")) atomic_or(&cnt[3], 1);\n"
                "        }\n"
                "        barrier(CLK_GLOBAL_MEM_FENCE);\n"
                "        if (lid == 0) { mem_fence(CLK_GLOBAL_MEM_FENCE); atomic_inc(&cnt[1]); }\n"
                "        return;\n"
                "    }\n"
                "    if (lid == 0) { while (atomic_add(&cnt[1], 0) < ga) {} cg_bad = atomic_add(&cnt[3], 0); }\n"
                "    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);\n"
                "    if (!cg_bad) cg_row((t - ga) * (long)get_local_size(0) + lid");
    for (int k = 0; k < nn; k++) {
        if (k < nin && st->slot[k] >= 0) sb_printf(&b, ", SO%d", st->slot[k]);
        else sb_printf(&b, ", %s", names[k]);
    }
    /* the aggregated outputs: the last row group to finish combines them */
    sb_puts(&b, ");\n");
    comb_tail(&b, ncr);
    if (b.oom) { free(b.s); return NULL; }
    return b.s;
}

/* The call's counters (zeros): the tickets, the finished region groups,
 * the finished row groups, the region's NaN/Inf flag. 0, or -1 with e
 * set. */
static int call_cnt(Call *x, BrErr *e)
{
    cl_int zero[4] = {0, 0, 0, 0};
    return (x->cnt = gpu_upload_small(zero, sizeof zero, e)) ? 0 : -1;
}

/* The stitched call's buffers (under gpu_lock): 0, -1 with e set, -2
 * when the device does not take them. */
static int stitch_bufs(Call *x, BrErr *e)
{
    const GpuStitchIn *st = x->st;
    GpuBuf xb;
    if (gpu_get(st->x, &xb, e)) return -1;
    /* (the program reads X as it was when generated) */
    if (xb.sparse != st->x->sparse) return -2;
    x->sx = xb.sparse ? xb.v : xb.d;
    x->sxp = xb.rp, x->sxi = xb.ci;
    for (int q = 0; q < st_nout(st->r); q++) {
        int rq = call_buf(&x->so[q], st->x->cols, e);
        if (rq) return rq;
    }
    if (call_cnt(x, e)) return -1;
    int rc = call_buf(&x->segv, 1, e);
    if (rc) return rc;
    if (st->r->nsc > 0 && !(x->rsc = small_buf(st->sc, (size_t)st->r->nsc * sizeof(double), e))) return -1;
    return 0;
}

/* A non-tiled kernel's work-group for a stitched launch: a power of two
 * up to 64 within the kernel's and the device's limits. */
static size_t stitch_wg(cl_kernel k)
{
    size_t kwg = 0, w = 1;
    if (clGetKernelWorkGroupInfo(k, gpu_ctx.dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg, &kwg, NULL) != CL_SUCCESS)
        kwg = 1;
    size_t wg = BR_MIN(BR_MIN((size_t)64, gpu_ctx.info.max_wg), BR_MAX(kwg, (size_t)1));
    while (w * 2 <= wg) w *= 2;
    return w;
}

/* The stitched arguments from a0 on, and the launch: ga region groups
 * of wg work-items, then nall work-items (whole groups) of the
 * operator. */
static int stitch_launch(Call *x, cl_uint a0, int64_t nall, size_t wg, BrErr *e)
{
    const GpuStitchIn *st = x->st;
    cl_kernel k = x->pr->row;
    cl_long sxr = st->x->rows, sxc = st->x->cols;
    /* the region's schedule by the latency evaluator: a column per lane
     * (ceil(cols / wg) groups) or per group (up to 1024 groups, each
     * taking every ga-th column) */
    int cache = 0;
    StitchSched s = stitch_inlaunch_sched(st->r, sxr, sxc, (int)wg, pre_mode, &cache);
    cl_int rls = s.scheme == ST_WORKGROUP ? (cl_int)wg : 1, rcache = cache, nfchk = st->nfchk;
    cl_long ga = rls > 1 ? BR_MIN(sxc, 1024) : (sxc + (cl_long)wg - 1) / (cl_long)wg;
    gpu_st.pre_wg += rls > 1;
    cl_mem cdm = x->ncd ? x->cd : x->segv, crm = x->ncd ? x->cr[0] : x->segv;
    const void *vals[] = {&x->sx, &sxr, &sxc, &x->segv, &x->cnt, &ga, &rls, &rcache, &nfchk, &cdm, &x->ncd, &crm};
    const size_t szs[] = {sizeof(cl_mem), 8, 8, sizeof(cl_mem), sizeof(cl_mem), 8, sizeof(cl_int), sizeof(cl_int),
                          sizeof(cl_int), sizeof(cl_mem), sizeof(cl_int), sizeof(cl_mem)};
    cl_int cr = CL_SUCCESS;
    for (size_t q = 0; q < sizeof szs / sizeof *szs && cr == CL_SUCCESS; q++) {
        cr = clSetKernelArg(k, a0++, szs[q], vals[q]);
        /* a CSR X: its row pointers and columns after its values */
        if (q == 0 && st->x->sparse && cr == CL_SUCCESS) cr = clSetKernelArg(k, a0++, sizeof(cl_mem), &x->sxp);
        if (q == 0 && st->x->sparse && cr == CL_SUCCESS) cr = clSetKernelArg(k, a0++, sizeof(cl_mem), &x->sxi);
    }
    if (cr == CL_SUCCESS) cr = clSetKernelArg(k, a0++, wg * sizeof(double), NULL);
    if (cr == CL_SUCCESS && st->r->nsc > 0) cr = clSetKernelArg(k, a0++, sizeof(cl_mem), &x->rsc);
    for (int q = 0; q < st_nout(st->r) && cr == CL_SUCCESS; q++) cr = clSetKernelArg(k, a0++, sizeof(cl_mem), &x->so[q]);
    for (int q = 1; q < x->ncr && cr == CL_SUCCESS; q++)
        cr = clSetKernelArg(k, a0++, sizeof(cl_mem), x->ncd ? &x->cr[q] : &x->segv);
    if (cr != CL_SUCCESS) return gpu_clerr(e, cr, "clSetKernelArg");
    int64_t groups = ga + (nall + (int64_t)wg - 1) / (int64_t)wg;
    return gpu_launch1(k, (size_t)groups * wg, wg, e);
}

/* The combine's arguments from a0 on (a call whose launch combines its
 * aggregated outputs, not stitched: comb_prepare) and the launch of
 * nall work-items in whole groups of wg. */
static int comb_launch(Call *x, cl_uint a0, int64_t nall, size_t wg, BrErr *e)
{
    cl_kernel k = x->pr->row;
    cl_int cr = clSetKernelArg(k, a0++, sizeof(cl_mem), &x->cnt);
    if (cr == CL_SUCCESS) cr = clSetKernelArg(k, a0++, sizeof(cl_mem), &x->cd);
    if (cr == CL_SUCCESS) cr = clSetKernelArg(k, a0++, sizeof(cl_int), &x->ncd);
    for (int q = 0; q < x->ncr && cr == CL_SUCCESS; q++) cr = clSetKernelArg(k, a0++, sizeof(cl_mem), &x->cr[q]);
    if (cr != CL_SUCCESS) return gpu_clerr(e, cr, "clSetKernelArg");
    int64_t groups = (nall + (int64_t)wg - 1) / (int64_t)wg;
    return gpu_launch1(k, (size_t)groups * wg, wg, e);
}

/* The launch of a call's cg_main whose arguments from a0 on are a
 * stitched call's or the combine's (over ng rows' work-items, groups of
 * wg), or the plain launch (wg 0: the device's choice). */
static int main_launch(Call *x, cl_uint a0, int64_t ng, size_t wg, BrErr *e)
{
    if (x->st) return stitch_launch(x, a0, ng, wg ? wg : stitch_wg(x->pr->row), e);
    if (x->ncd) return comb_launch(x, a0, ng, wg ? wg : stitch_wg(x->pr->row), e);
    return ng > 0 && gpu_launch1(x->pr->row, (size_t)ng, wg, e) ? -1 : 0;
}

/* 0, or -1 with e set, or -2 when the device does not take the inputs.
 * ncr: the buffers of the outputs the launch combines (comb_nbufs; 0
 * none, or a program that cannot be wrapped: x->ncr 0). */
static int call_open(Call *x, const char *src, const SpoofIn *in, int main, const int64_t *L, int nL,
                     const GpuStitchIn *st, int ncr, BrErr *e)
{
    memset(x, 0, sizeof *x);
    if (gpu_init(e)) return -1;
    char *ssrc = NULL;
    if ((st || ncr > 0) && !(ssrc = stitched_source(src, st, in->n, ncr)) && st) return -2;   /* the caller's other path */
    x->ncr = ssrc ? ncr : 0;
    pthread_mutex_lock(&gpu_lock);
    x->locked = true;
    x->st = st;
    gpu_pool_trim();
    x->n = in->n;
    x->pr = prog_for(ssrc ? ssrc : src, &x->pending, e);
    free(ssrc);
    if (x->pending) return -2;
    x->arg = br_calloc((size_t)x->n + 1, sizeof *x->arg);
    x->tmp = br_calloc((size_t)x->n + 1, sizeof *x->tmp);
    x->srp = br_calloc((size_t)x->n + 1, sizeof *x->srp);
    x->sci = br_calloc((size_t)x->n + 1, sizeof *x->sci);
    x->side = br_calloc((size_t)x->n + 1, sizeof *x->side);
    if (!x->pr || !x->arg || !x->tmp || !x->srp || !x->sci || !x->side)
        return e->code ? -1 : br_err(e, BR_ENOMEM, "out of memory");
    x->nside = csr_side_params(src, x->n, x->side);
    int rc = 0;
    /* (a stitched call's inputs that its region's outputs replace take
     * no buffer: a CSR X bound there would be expanded for nothing) */
    for (int k = 0; k < x->n && !rc; k++) {
        if (st && st->slot[k] >= 0) continue;
        bool side = x->side[k] && k != main;
        rc = bind_input(main, in->m[k], k, side, &x->arg[k], &x->tmp[k], side ? &x->srp[k] : &x->rp,
                        side ? &x->sci[k] : &x->ci, e);
        if (!rc && x->srp[k] && side_scratch(in->mode[k])) x->slen += in->m[k]->cols;
    }
    if (rc) return rc;
    if (!(x->L = small_buf(L, (size_t)nL * sizeof(int64_t), e)) ||
        !(x->sc = small_buf(in->sc, (size_t)x->n * sizeof(double), e)))
        return -1;
    return st ? stitch_bufs(x, e) : 0;
}

/* The scratch doubles per row of a Cell/MAgg call's bound CSR side
 * inputs (codegen/cgen_cl.c csr_side_scratch): a full input's and a row
 * vector's columns, a column vector's none (read in place), and on the
 * sparse path (sp: msp 2) a full input's none either (cell_loop's
 * cursor reads it; the kernel's scratch layout skips it then). */
static int64_t cell_side_len(const Call *x, const SpoofIn *in, bool sp)
{
    int64_t len = 0;
    for (int k = 0; k < x->n; k++)
        if (x->srp[k] && in->mode[k] != SPM_COL && !(sp && in->mode[k] == SPM_FULL)) len += in->m[k]->cols;
    return len;
}

/* A buffer of doubles for the call (0, -1 with e set, -2 beyond the
 * device's largest buffer). */
static int call_buf(cl_mem *m, int64_t cells, BrErr *e)
{
    *m = gpu_alloc((size_t)BR_MAX(cells, 1) * sizeof(double), e);
    return *m ? 0 : e->code ? -1 : -2;
}

/* call_buf for the scratch, its bytes counted (GpuStats.scratch_bytes) */
static int scratch_buf(cl_mem *m, int64_t cells, BrErr *e)
{
    gpu_st.scratch_bytes += (int64_t)sizeof(double) * BR_MAX(cells, 1);
    return call_buf(m, cells, e);
}

/* The call's tiles (a tiled program's, or the test's override) and the
 * work-items a launch of ng runs (rounded up to whole groups). */
static int64_t call_tiles(const Call *x, int64_t ng, size_t *wg, cl_long *tk, cl_long *tj)
{
    const RowProg *r = x->pr;
    *wg = tile_wg > 0 ? (size_t)tile_wg : r->wg;
    *tk = tile_tk > 0 ? tile_tk : r->tk;
    *tj = tile_tj > 0 ? BR_MIN(tile_tj, GPU_CG_TJ) : r->tj;
    return r->tiled ? (ng + (int64_t)*wg - 1) / (int64_t)*wg * (int64_t)*wg : ng;
}

/* Launches cg_main over ng work-items (see set_main_args); a tiled
 * kernel in groups of wg with its local tiles. */
static int call_main(Call *x, int64_t rows, int64_t rb, int64_t ng, int64_t tlen, int64_t psz, int64_t ext, BrErr *e)
{
    cl_int msp = x->rp != NULL;
    cl_kernel k = x->pr->row;
    if (set_main_args(k, x->n, x->arg, x->side, x->srp, x->sci, x->rp, x->ci, x->L, x->sc, rows, rb, ng, tlen, psz, ext,
                      msp, x->scratch, x->out, e))
        return -1;
    cl_uint a = (cl_uint)(x->n + 2 * x->nside) + 13;
    if (!x->pr->tiled) return main_launch(x, a, ng, 0, e);
    size_t wg;
    cl_long tk, tj;
    call_tiles(x, ng, &wg, &tk, &tj);
    bool outer = x->pr->outer;
    size_t lbytes = 8 * (size_t)tk * (size_t)(outer ? (cl_long)wg + tj : tj) + (outer ? 8 : 0);   /* (+ anyp) */
    cl_int cr = clSetKernelArg(k, a, lbytes, NULL);
    if (cr == CL_SUCCESS) cr = clSetKernelArg(k, a + 1, sizeof tk, &tk);
    if (cr == CL_SUCCESS) cr = clSetKernelArg(k, a + 2, sizeof tj, &tj);
    if (cr != CL_SUCCESS) return gpu_clerr(e, cr, "clSetKernelArg");
    if (main_launch(x, a + 3, ng, wg, e)) return -1;
    if (ng > 0) gpu_st.tiled++;
    return 0;
}

/* Ends the call: rc 1 ran, -2 (the CPU runs it) becomes 0. */
static int call_close(Call *x, int rc)
{
    for (int k = 0; k < x->n && x->tmp; k++) gpu_free(x->tmp[k]);
    cl_mem held[] = {x->L,     x->sc,    x->scratch, x->out,   x->rsc,   x->cnt, x->segv,
                     x->so[0], x->so[1], x->so[2],   x->so[3], x->cd};
    for (size_t k = 0; k < sizeof held / sizeof *held; k++) gpu_free(held[k]);
    for (int q = 0; q < SPOOF_MAXOUT; q++) gpu_free(x->cr[q]);
    free(x->arg);
    free(x->tmp);
    free(x->srp);
    free(x->sci);
    free(x->side);
    if (x->locked) {
        gpu_unpin_all();
        if (rc == 1) gpu_st.ops++, gpu_st.fused_ops++, gpu_st.fused_region += x->st != NULL;
        if (x->pending) gpu_st.fused_cpu++, gpu_st.fused_async++;
        if (x->declined) gpu_st.fused_cpu++, gpu_st.fused_declined++;
        pthread_mutex_unlock(&gpu_lock);
    }
    return rc == -2 ? 0 : rc;
}

/* A test's override of the combine's place (gpu_spoof_comb). */
static int comb_mode;

void gpu_spoof_pre(int mode)
{
    pthread_mutex_lock(&gpu_lock);
    pre_mode = mode;
    pthread_mutex_unlock(&gpu_lock);
}

/* Did the stitched launch find a vector NaN or Inf (GpuStitchIn.nfchk:
 * the call is declined, rc -2)? 0, or -1 with e set. */
static int call_declined(Call *x, BrErr *e)
{
    if (!x->st || !x->st->nfchk) return 0;
    cl_int bad = 0, rc = clEnqueueReadBuffer(gpu_ctx.q, x->cnt, CL_TRUE, 3 * sizeof bad, sizeof bad, &bad, 0, NULL, NULL);
    if (rc != CL_SUCCESS) return gpu_clerr(e, rc, "clEnqueueReadBuffer");
    gpu_st.d2h_bytes += (int64_t)sizeof bad;
    x->declined = bad != 0;
    return bad ? -2 : 0;
}

void gpu_spoof_comb(int mode)
{
    pthread_mutex_lock(&gpu_lock);
    comb_mode = mode;
    pthread_mutex_unlock(&gpu_lock);
}

/* The buffer of output t among o[0..nout) when the launch combines
 * them: the full aggregates share buffer 0, every other output has its
 * own, in order. */
static int comb_buf_of(const SpRowOut *o, int nout, int t)
{
    int b = 0;
    for (int q = 0; q < nout; q++) b += o[q].var == SPR_FULL_AGG;
    b = b > 0;
    for (int q = 0; q < t; q++) b += o[q].var != SPR_FULL_AGG;
    return o[t].var == SPR_FULL_AGG ? 0 : b;
}

/* Does the launch of ng blocks combine the aggregated outputs
 * o[0..nout) (the latency evaluator, stitch_comb_cost, against a
 * cg_comb launch per output; gpu_spoof_comb's override)? The buffers
 * its program takes then (comb_buf_of), else 0. */
static int comb_nbufs(const SpRowOut *o, int nout, int64_t ng)
{
    if (ng <= 0 || nout < 1 || nout > SPOOF_MAXOUT) return 0;
    int64_t reads[SPOOF_MAXOUT], cells[SPOOF_MAXOUT];
    for (int t = 0; t < nout; t++) {
        reads[t] = k_spoof_row_psize(&o[t]);
        cells[t] = o[t].var == SPR_FULL_AGG ? 1 : o[t].orows * o[t].ocols;
    }
    int wg = (int)BR_MIN((size_t)64, BR_MAX(gpu_ctx.info.max_wg, (size_t)1));
    pthread_mutex_lock(&gpu_lock);
    int mode = comb_mode;
    pthread_mutex_unlock(&gpu_lock);
    bool inl = mode > 0 || (mode == 0 && stitch_comb_cost(reads, cells, nout, ng, wg, true) <=
                                             stitch_comb_cost(reads, cells, nout, ng, wg, false));
    int nb = 0;
    for (int t = 0; t < nout; t++) nb = BR_MAX(nb, comb_buf_of(o, nout, t) + 1);
    return inl ? nb : 0;
}

/* The aggregated outputs o[0..nout) of a call whose launch combines
 * them (x->ncr > 0: comb_nbufs; partials at offs, zm as cg_comb's): its
 * last row group (stitched_source) combines every output instead of a
 * cg_comb launch each. Fills x->cd (per output: its partials' offset,
 * cells, kind, aggregate, divisor, zm, offset in its buffer, its buffer)
 * and x->cr[0..ncr) and sets x->ncd; x->ncd stays 0 (the cg_comb
 * launches) where it does not apply. 0, or -1 with e set, -2 (the CPU)
 * beyond the device's largest buffer. */
static int comb_prepare(Call *x, const SpRowOut *o, int nout, const int64_t *offs, const double *zm, int64_t M,
                        int64_t ng, BrErr *e)
{
    if (x->ncr <= 0 || ng <= 0 || nout < 1 || nout > SPOOF_MAXOUT) return 0;
    double d[8 * SPOOF_MAXOUT];
    int64_t cells[SPOOF_MAXOUT] = {0};
    for (int t = 0; t < nout; t++) {
        cl_long n;
        cl_int kind, agg;
        cl_double div;
        comb_args(&o[t], M, &n, &kind, &agg, &div);
        int b = comb_buf_of(o, nout, t);
        double *q = d + 8 * t;
        q[0] = (double)offs[t], q[1] = (double)n, q[2] = kind, q[3] = agg, q[4] = div, q[5] = zm[t];
        q[6] = (double)cells[b], q[7] = b;
        cells[b] += n;
    }
    if (!(x->cd = small_buf(d, 8 * (size_t)nout * sizeof(double), e))) return -1;
    int rc = 0;
    for (int b = 0; b < x->ncr && !rc; b++) rc = call_buf(&x->cr[b], cells[b], e);
    if (!rc && !x->cnt && call_cnt(x, e)) return -1;
    if (!rc) x->ncd = nout;
    return rc;
}

/* The outputs the launch combined (comb_prepare): the full aggregates
 * into v by one read of cr[0], every other output the device-only
 * block of its buffer. */
static int comb_take(Call *x, const SpRowOut *o, int nout, MB **res, double *v, BrErr *e)
{
    int nfull = 0;
    for (int t = 0; t < nout; t++) nfull += o[t].var == SPR_FULL_AGG;
    double f[SPOOF_MAXOUT];
    if (nfull > 0) {
        cl_int rc = clEnqueueReadBuffer(gpu_ctx.q, x->cr[0], CL_TRUE, 0, (size_t)nfull * sizeof(double), f, 0, NULL, NULL);
        if (rc != CL_SUCCESS) return gpu_clerr(e, rc, "clEnqueueReadBuffer");
        gpu_st.d2h_bytes += (int64_t)nfull * (int64_t)sizeof(double);
    }
    for (int t = 0, k = 0; t < nout; t++) {
        if (o[t].var == SPR_FULL_AGG) { v[t] = f[k++]; continue; }
        int b = comb_buf_of(o, nout, t);
        res[t] = gpu_dense_result(o[t].orows, o[t].ocols, x->cr[b], e);
        x->cr[b] = NULL;
        if (!res[t]) return -1;
    }
    return 0;
}

/* Rows per work-item and work-items for M rows and ng wanted. */
static void blocks_of(int64_t M, int64_t *ng, int64_t *rb)
{
    *rb = (M + *ng - 1) / BR_MAX(*ng, 1);
    *ng = M > 0 ? (M + *rb - 1) / BR_MAX(*rb, 1) : 0;
}

int gpu_spoof_row(const char *src, const SpoofRow *op, int nL, int64_t tmplen, const GpuStitchIn *st, MB **res,
                  double *v, BrErr *e)
{
    if (gpu_init(e)) return -1;
    SpRowOut o[SPOOF_MAXOUT];
    int nout = k_spoof_row_outs(op, o);
    int64_t psz = 0, offs[SPOOF_MAXOUT], M = op->rows;
    for (int t = 0; t < nout; t++) offs[t] = psz, psz += k_spoof_row_psize(&o[t]);
    /* (the scratch of CSR side inputs: csr_side_len, then as bound) */
    int64_t ng = row_blocks(M, psz + tmplen + csr_side_len(src, &op->in, op->main, st, false)), rb;
    blocks_of(M, &ng, &rb);
    bool rowout = op->var == SPR_NO_AGG || op->var == SPR_ROW_AGG;
    Call x;
    int rc = call_open(&x, src, &op->in, op->main, op->L, nL, st, rowout ? 0 : comb_nbufs(o, nout, ng), e);
    size_t wg;
    cl_long tk, tj;
    /* a tiled kernel's work-items past ng compute too (scratch for all) */
    int64_t nall = rc ? ng : call_tiles(&x, ng, &wg, &tk, &tj);
    tmplen += x.slen;
    if (!rc) rc = scratch_buf(&x.scratch, nall * tmplen, e);
    if (!rc) rc = call_buf(&x.out, rowout ? M * op->ocols : ng * psz, e);
    const double zm[SPOOF_MAXOUT] = {0};
    if (!rc && !rowout) rc = comb_prepare(&x, o, nout, offs, zm, M, ng, e);
    if (!rc) rc = call_main(&x, M, rb, ng, tmplen, psz, rowout ? op->ocols : 0, e);
    if (!rc) rc = call_declined(&x, e);
    if (!rc && rowout) {
        res[0] = gpu_dense_result(M, op->ocols, x.out, e);
        x.out = NULL;
        return call_close(&x, res[0] ? 1 : -1);
    }
    if (!rc && x.ncd) rc = comb_take(&x, o, nout, res, v, e);
    for (int t = 0; t < nout && !rc && !x.ncd; t++)
        rc = combine(x.pr, &o[t], x.out, ng, psz, offs[t], M, 0, &res[t], &v[t], e);
    if (rc) for (int t = 0; t < nout; t++) mb_release(res[t]), res[t] = NULL;
    return call_close(&x, rc ? rc : 1);
}

/* Outer: the kernel cg_main over blocks of W's rows, then NO_AGG's
 * values in W's structure (CSR W: the values of its entries, a
 * device-only CSR block sharing W's row pointers and columns; dense W: a
 * dense block), LEFT's rows written directly, FULL_AGG, RIGHT and
 * RIGHT_T from the blocks' partials (cg_comb's launch, or its body in
 * the launch's last group: comb_nbufs). */
int gpu_spoof_outer(const char *src, const SpoofOuter *op, int nL, MB **res, double *v, BrErr *e)
{
    if (gpu_init(e)) return -1;
    int64_t M = op->m, N = op->n, k = op->ocols;
    /* the aggregated result as a Row output: FULL_AGG, or the product's
     * cells (RIGHT: n x k, RIGHT_T: k x n), combined in the launch where
     * the evaluator says so (comb_nbufs) */
    SpRowOut o = {op->var == SPO_FULL_AGG ? SPR_FULL_AGG : SPR_COL_T_AGG, op->var == SPO_FULL_AGG ? op->agg : SPA_NONE,
                  op->var == SPO_RIGHT_T ? k : N, op->var == SPO_RIGHT_T ? N : k};
    bool agg = op->var == SPO_FULL_AGG || op->var == SPO_RIGHT || op->var == SPO_RIGHT_T;
    int64_t psz = !agg ? 0 : k_spoof_row_psize(&o);
    int64_t ng = agg ? row_blocks(M, psz) : BR_MAX(M, 1), rb;
    blocks_of(M, &ng, &rb);
    Call x;
    int rc = call_open(&x, src, &op->in, op->main, op->L, nL, NULL, agg ? comb_nbufs(&o, 1, ng) : 0, e);
    GpuBuf wb = {0};
    if (!rc && x.rp && gpu_get(op->in.m[op->main], &wb, e)) rc = -1;
    if (!rc) rc = call_buf(&x.out, agg ? ng * psz : op->var == SPO_LEFT ? M * k : x.rp ? wb.nnz : M * N, e);
    const int64_t off0 = 0;
    const double zm0 = 0;
    if (!rc && agg) rc = comb_prepare(&x, &o, 1, &off0, &zm0, M, ng, e);
    if (!rc) rc = call_main(&x, M, rb, ng, 0, psz, N, e);
    if (!rc && agg) {
        rc = x.ncd ? comb_take(&x, &o, 1, res, v, e) : combine(x.pr, &o, x.out, ng, psz, 0, M, 0, &res[0], &v[0], e);
        return call_close(&x, rc ? rc : 1);
    }
    if (!rc) {
        res[0] = op->var == SPO_NO_AGG && x.rp ? gpu_csr_result(op->in.m[op->main], &wb, x.out, e)
                                                : gpu_dense_result(M, op->var == SPO_LEFT ? k : N, x.out, e);
        x.out = NULL;
        rc = res[0] ? 1 : -1;
    }
    return call_close(&x, rc);
}

/* Cell and MAgg: cg_main over blocks of rows; NO_AGG's cells (on the
 * sparse path the values of the main input's entries, a device-only CSR
 * block sharing its structure), ROW_AGG's rows written directly; COL_AGG
 * and the full aggregates from the blocks' partials (cg_comb; on the
 * sparse path min and max count the stored values, and the combine adds
 * the implicit zeros as the CPU's skeleton does). L: per input its row
 * stride, then its column offset (a fused X[, lo:hi]). */
int gpu_spoof_cell(const char *src, const SpoofCell *op, const GpuStitchIn *st, MB **res, double *v, BrErr *e)
{
    int n = op->in.n;
    int64_t *L = br_calloc(2 * (size_t)n + 1, sizeof *L);
    if (!L) return br_err(e, BR_ENOMEM, "out of memory");
    int main = op->main >= 0 && op->in.mode[op->main] == SPM_FULL ? op->main : -1;
    for (int k = 0; k < n; k++) {
        L[k] = op->in.m[k] ? op->in.m[k]->cols : 0;
        L[n + k] = op->in.coff && op->in.coff[k] > 0 ? op->in.coff[k] : 0;
    }
    int64_t M = op->rows, N = op->cols;
    int nout = op->dir == SPD_FULL ? op->nout : 1;
    int64_t psz = op->dir == SPD_COL ? 2 * N : op->dir == SPD_FULL ? 2 * (int64_t)nout : 0;
    /* the aggregated outputs; the counts of min/max on the sparse path:
     * implicit zeros below M (columns) or M N (full) stored values */
    SpRowOut o[SPOOF_MAXOUT];
    int64_t offs[SPOOF_MAXOUT];
    double zm[SPOOF_MAXOUT];
    bool agg = op->dir == SPD_COL || op->dir == SPD_FULL;
    for (int t = 0; agg && t < nout && t < SPOOF_MAXOUT; t++) {
        o[t] = (SpRowOut){op->dir == SPD_COL ? SPR_COL_AGG : SPR_FULL_AGG, op->agg[t], 1, N};
        offs[t] = 2 * t;
    }
    /* the combine's place, by the blocks the launch runs (a CSR main
     * input the plan is not sparse-safe over expands each row into
     * scratch: tlen below) */
    int ncr = 0;
    bool csr = main >= 0 && op->in.m[main] && op->in.m[main]->sparse;
    bool sp0 = csr && op->sparse_safe && !(op->in.coff && op->in.coff[main] >= 0);
    int64_t slen = csr_side_len(src, &op->in, main, st, sp0);
    if (agg && !gpu_init(e)) {
        int64_t ng0 = row_blocks(M, psz + (csr && !sp0 ? op->in.m[main]->cols : 0) + slen), rb0;
        blocks_of(M, &ng0, &rb0);
        ncr = comb_nbufs(o, nout, ng0);
    }
    Call x;
    int rc = call_open(&x, src, &op->in, main, L, 2 * n, st, ncr, e);
    free(L);
    GpuBuf wb = {0};
    bool sp = !rc && x.rp && op->sparse_safe && !(op->in.coff && op->in.coff[main] >= 0);
    if (sp && gpu_get(op->in.m[main], &wb, e)) rc = -1;
    int64_t tlen = (!rc && x.rp && !sp ? op->in.m[main]->cols : 0) + (rc ? 0 : cell_side_len(&x, &op->in, sp));
    int64_t ng = row_blocks(M, psz + tlen), rb;
    blocks_of(M, &ng, &rb);
    int64_t cells = op->dir == SPD_NONE ? (sp ? wb.nnz : M * N) : op->dir == SPD_ROW ? M : ng * psz;
    if (!rc) rc = scratch_buf(&x.scratch, ng * tlen, e);
    if (!rc) rc = call_buf(&x.out, cells, e);
    for (int t = 0; agg && t < nout && t < SPOOF_MAXOUT; t++)
        zm[t] = !sp ? 0 : op->dir == SPD_COL ? (double)M : (double)M * (double)N;
    if (!rc && agg) rc = comb_prepare(&x, o, nout, offs, zm, M, ng, e);
    if (!rc) {
        cl_int msp = sp ? 2 : x.rp != NULL;
        if (set_main_args(x.pr->row, n, x.arg, x.side, x.srp, x.sci, x.rp, x.ci, x.L, x.sc, M, rb, ng, tlen, psz, N,
                          msp, x.scratch, x.out, e) ||
            main_launch(&x, (cl_uint)(n + 2 * x.nside) + 13, ng, 0, e))
            rc = -1;
    }
    if (!rc && (op->dir == SPD_NONE || op->dir == SPD_ROW)) {
        res[0] = op->dir == SPD_NONE && sp ? gpu_csr_result(op->in.m[main], &wb, x.out, e)
                                           : gpu_dense_result(M, op->dir == SPD_ROW ? 1 : N, x.out, e);
        x.out = NULL;
        return call_close(&x, res[0] ? 1 : -1);
    }
    if (!rc && x.ncd) rc = comb_take(&x, o, nout, res, v, e);
    for (int t = 0; t < nout && !rc && !x.ncd; t++)
        rc = combine(x.pr, &o[t], x.out, ng, psz, offs[t], M, zm[t], &res[t], &v[t], e);
    if (rc) mb_release(res[0]), res[0] = NULL;
    return call_close(&x, rc ? rc : 1);
}

void gpu_count_fused_cpu(void)
{
    pthread_mutex_lock(&gpu_lock);
    gpu_st.fused_cpu++;
    pthread_mutex_unlock(&gpu_lock);
}

void gpu_count_fused_region(void)
{
    pthread_mutex_lock(&gpu_lock);
    gpu_st.fused_ops++;
    gpu_st.fused_region++;
    pthread_mutex_unlock(&gpu_lock);
}
