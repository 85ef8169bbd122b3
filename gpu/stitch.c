/* stitch.c: generated stitched kernels (stitch.h, docs/gpu.md). One
 * generator covers the schemes: a segment is processed by LS lanes (1:
 * thread composition, a power of two below the work-group: sub-group
 * composition, the work-group: work-group composition); the reductions
 * of one depth share a pass over the segment, their results go to every
 * lane through one local scratch array that all reductions reuse
 * (section 4.4), and each cell node is computed once per pass into a
 * register (section 4.5). ST_XLA is the same generator cut into one
 * kernel per pass, the reductions' results through global memory. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_int.h"
#include "stitch.h"
#include "../base/strbuf.h"
#include "../base/vec.h"
#include "../kernels/agg.h"
#include "../kernels/ew.h"

/* cells a lane keeps in registers across passes (when a segment fits) */
#define VPT 8

/* ---- building regions ---- */

static int add(StitchRegion *r, SNode n)
{
    if (r->n >= ST_MAX_NODES) return -1;
    r->nodes[r->n] = n;
    r->root = r->n;
    return r->n++;
}

int st_x(StitchRegion *r) { return add(r, (SNode){.k = SN_X}); }
int st_const(StitchRegion *r, double c) { return isfinite(c) ? add(r, (SNode){.k = SN_CONST, .c = c}) : -1; }
int st_len(StitchRegion *r) { return add(r, (SNode){.k = SN_LEN}); }
int st_un(StitchRegion *r, OpCode op, int a)
{
    return a < 0 || op_info[op].kind != OK_UNARY ? -1 : add(r, (SNode){.k = SN_UN, .op = op, .a = a});
}
int st_bin(StitchRegion *r, OpCode op, int a, int b)
{
    return a < 0 || b < 0 || op_info[op].kind != OK_BINARY ? -1 : add(r, (SNode){.k = SN_BIN, .op = op, .a = a, .b = b});
}

/* per segment (uniform over a segment's cells) or per cell */
static bool is_seg(const StitchRegion *r, int i)
{
    const SNode *n = &r->nodes[i];
    switch (n->k) {
    case SN_X: return false;
    case SN_CONST: case SN_RED: case SN_LEN: return true;
    case SN_UN: return is_seg(r, n->a);
    default: return is_seg(r, n->a) && is_seg(r, n->b);
    }
}

int st_red(StitchRegion *r, OpCode op, int a)
{
    if (a < 0 || is_seg(r, a) || (op != OP_SUM && op != OP_MEAN && op != OP_AMIN && op != OP_AMAX)) return -1;
    return add(r, (SNode){.k = SN_RED, .op = op, .a = a});
}

void st_layernorm(StitchRegion *r, double eps)
{
    memset(r, 0, sizeof *r);
    r->dir = DIR_ROW;
    int x = st_x(r), mu = st_red(r, OP_MEAN, x), c = st_bin(r, OP_MINUS, x, mu);
    int var = st_red(r, OP_MEAN, st_bin(r, OP_MULT, c, c));
    st_bin(r, OP_DIV, c, st_un(r, OP_SQRT, st_bin(r, OP_PLUS, var, st_const(r, eps))));
}

void st_softmax(StitchRegion *r)
{
    memset(r, 0, sizeof *r);
    r->dir = DIR_ROW;
    int x = st_x(r), m = st_red(r, OP_AMAX, x), ex = st_un(r, OP_EXP, st_bin(r, OP_MINUS, x, m));
    st_bin(r, OP_DIV, ex, st_red(r, OP_SUM, ex));
}

void st_colstd(StitchRegion *r)
{
    memset(r, 0, sizeof *r);
    r->dir = DIR_COL;
    int x = st_x(r), mu = st_red(r, OP_MEAN, x), c = st_bin(r, OP_MINUS, x, mu);
    int ss = st_red(r, OP_SUM, st_bin(r, OP_MULT, c, c));
    /* sd with n - 1, as DML's colSds */
    int n1 = st_bin(r, OP_MINUS, st_len(r), st_const(r, 1));
    st_bin(r, OP_DIV, c, st_un(r, OP_SQRT, st_bin(r, OP_DIV, ss, n1)));
}

/* reduction depth: 1 + the deepest reduction below (0 for none) */
static int depth(const StitchRegion *r, int i)
{
    const SNode *n = &r->nodes[i];
    switch (n->k) {
    case SN_X: case SN_CONST: case SN_LEN: return 0;
    case SN_UN: return depth(r, n->a);
    case SN_RED: return 1 + depth(r, n->a);
    default: { int a = depth(r, n->a), b = depth(r, n->b); return a > b ? a : b; }
    }
}

/* the passes: one per reduction depth, then the output's */
static int npasses(const StitchRegion *r) { return depth(r, r->root) + 1; }

/* marks the cell nodes pass p computes: the cone of its reductions (or
 * of the root in the last pass) down to per-segment values */
static void mark_cells(const StitchRegion *r, int i, bool *need)
{
    if (need[i] || is_seg(r, i)) return;
    need[i] = true;
    const SNode *n = &r->nodes[i];
    if (n->k == SN_UN || n->k == SN_BIN) mark_cells(r, n->a, need);
    if (n->k == SN_BIN) mark_cells(r, n->b, need);
}

/* ---- code generation ---- */

static void expr(StrBuf *b, const StitchRegion *r, int i)
{
    const SNode *n = &r->nodes[i];
    char x[16], y[16], t[512];
    snprintf(x, sizeof x, "v%d", n->a);
    snprintf(y, sizeof y, "v%d", n->b);
    switch (n->k) {
    case SN_CONST: sb_printf(b, "%.17g", n->c); return;
    case SN_LEN: sb_puts(b, "(double)len"); return;
    case SN_UN: snprintf(t, sizeof t, op_info[n->op].cgen, x); sb_puts(b, t); return;
    case SN_BIN: snprintf(t, sizeof t, op_info[n->op].cgen, x, y); sb_puts(b, t); return;
    default: return;
    }
}

static const char *red_init(OpCode op) { return op == OP_AMIN ? "INFINITY" : op == OP_AMAX ? "-INFINITY" : "0.0"; }
static const char *red_comb(OpCode op) { return op == OP_AMIN ? "cg_minstep" : op == OP_AMAX ? "cg_maxstep" : "st_add"; }

/* The body function k of region r: LS lanes per segment, X cached in
 * registers when cache, only pass only_pass (>= 0: ST_XLA's kernel of
 * that pass; the earlier reductions come from segv, this pass's go
 * there). */
static void gen_body(StrBuf *b, const StitchRegion *r, int k, int only_pass)
{
    int P = npasses(r);
    int rid[ST_MAX_NODES], nred = 0;
    for (int i = 0; i < r->n; i++) rid[i] = r->nodes[i].k == SN_RED ? nred++ : -1;
    sb_printf(b, "static void body%d(long nseg, long len, long cols, __global const double *x, __global double *out,\n"
                 "    __global double *segv, __local double *sh, long grp, long ngrp, int LS, int cache)\n{\n", k);
    sb_puts(b, "    const int l = get_local_id(0), L = get_local_size(0), SPG = L / LS;\n");
    sb_puts(b, "    const int lane = l % LS, slot = l / LS;\n");
    sb_puts(b, "    for (long s0 = grp * SPG; s0 < nseg; s0 += ngrp * SPG) {\n");
    sb_puts(b, "        const long seg = s0 + slot;\n        const bool act = seg < nseg;\n");
    if (only_pass < 0) sb_printf(b, "        double xv[%d];\n", VPT);
    /* seg values: emitted when their reductions are known */
    bool have[ST_MAX_NODES] = {0};
    for (int p = 0; p < P; p++) {
        if (only_pass >= 0 && p > only_pass) break;
        /* reductions of earlier passes from global memory (ST_XLA) */
        for (int i = 0; i < r->n; i++)
            if (only_pass >= 0 && r->nodes[i].k == SN_RED && depth(r, i) <= p && !have[i] && p == only_pass) {
                sb_printf(b, "        double v%d = act ? segv[%d * nseg + seg] : 0;\n", i, rid[i]);
                have[i] = true;
            }
        for (int i = 0; i < r->n; i++) {
            if (have[i] || !is_seg(r, i) || r->nodes[i].k == SN_RED || depth(r, i) > p) continue;
            if (only_pass >= 0 && p != only_pass) continue;
            sb_printf(b, "        double v%d = ", i);
            expr(b, r, i);
            sb_puts(b, ";\n");
            have[i] = true;
        }
        if (only_pass >= 0 && p != only_pass) continue;
        bool need[ST_MAX_NODES] = {0};
        bool last = p == P - 1;
        int reds[ST_MAX_NODES], nr = 0;
        if (last) mark_cells(r, r->root, need);
        for (int i = 0; i < r->n; i++)
            if (!last && r->nodes[i].k == SN_RED && depth(r, i) == p + 1) {
                reds[nr++] = i;
                mark_cells(r, r->nodes[i].a, need);
            }
        for (int q = 0; q < nr; q++) sb_printf(b, "        double a%d = %s;\n", reds[q], red_init(r->nodes[reds[q]].op));
        /* the pass over the segment's cells */
        sb_puts(b, "        for (long p = lane, t = 0; act && p < len; p += LS, t++) {\n");
        sb_printf(b, "            const long ix = %s;\n", r->dir == DIR_ROW ? "seg * cols + p" : "p * cols + seg");
        for (int i = 0; i < r->n; i++) {
            if (!need[i]) continue;
            if (r->nodes[i].k == SN_X) {
                if (only_pass >= 0) sb_printf(b, "            double v%d = x[ix];\n", i);
                else if (p == 0) sb_printf(b, "            double v%d = x[ix];\n            if (cache) xv[t] = v%d;\n", i, i);
                else sb_printf(b, "            double v%d = cache ? xv[t] : x[ix];\n", i);
                continue;
            }
            sb_printf(b, "            double v%d = ", i);
            expr(b, r, i);
            sb_puts(b, ";\n");
        }
        for (int q = 0; q < nr; q++)
            sb_printf(b, "            a%d = %s(a%d, v%d);\n", reds[q], red_comb(r->nodes[reds[q]].op), reds[q],
                      r->nodes[reds[q]].a);
        if (last) sb_printf(b, "            out[ix] = v%d;\n", r->root);
        sb_puts(b, "        }\n");
        /* the reductions across the segment's lanes: a tree in the one
         * scratch array (reused by every reduction), result to all lanes */
        for (int q = 0; q < nr; q++) {
            int i = reds[q];
            const char *comb = red_comb(r->nodes[i].op);
            /* LS is uniform over the work-group: every lane takes the
             * same branch, so the barriers are reached by all */
            sb_printf(b, "        double v%d = a%d;\n        if (LS > 1) {\n", i, i);
            sb_printf(b, "            sh[l] = a%d;\n            barrier(CLK_LOCAL_MEM_FENCE);\n", i);
            sb_printf(b, "            for (int w = LS / 2; w > 0; w /= 2) {\n"
                         "                if (lane < w) sh[l] = %s(sh[l], sh[l + w]);\n"
                         "                barrier(CLK_LOCAL_MEM_FENCE);\n            }\n", comb);
            sb_printf(b, "            v%d = sh[slot * LS];\n            barrier(CLK_LOCAL_MEM_FENCE);\n        }\n", i);
            if (r->nodes[i].op == OP_MEAN) sb_printf(b, "        v%d /= (double)len;\n", i);
            if (only_pass >= 0) sb_printf(b, "        if (act && lane == 0) segv[%d * nseg + seg] = v%d;\n", rid[i], i);
            have[i] = true;
        }
    }
    sb_puts(b, "    }\n}\n");
}

static const char st_helpers[] =
    "CG_INL double st_add(double a, double b) { return a + b; }\n";

/* cache X in registers when every lane's share of a segment fits */
static bool use_cache(const StitchRegion *r, int64_t len, int LS, StitchScheme s)
{
    return s != ST_XLA && npasses(r) > 1 && len <= (int64_t)LS * VPT;
}

static int lanes_of(const StitchSched *s) { return s->scheme == ST_THREAD ? 1 : s->lanes; }

/* the one-region kernel of pass only_pass (-1 all); lanes per segment
 * and caching are arguments, so one program serves every schedule */
static char *gen_kernel(const StitchRegion *r, int only_pass)
{
    StrBuf b = {0};
    char *pre = gpu_cl_prelude();
    if (!pre) return NULL;
    sb_puts(&b, pre);
    free(pre);
    sb_puts(&b, st_helpers);
    gen_body(&b, r, 0, only_pass);
    sb_puts(&b, "__kernel void stitch(long nseg, long len, long cols, __global const double *x, __global double *out,\n"
                "    __global double *segv, __local double *sh, int LS, int cache)\n{\n"
                "    body0(nseg, len, cols, x, out, segv, sh, get_group_id(0), get_num_groups(0), LS, cache);\n}\n");
    if (b.oom) { free(b.s); return NULL; }
    return b.s;
}

char *stitch_source(const StitchRegion *r, const StitchSched *s)
{
    return gen_kernel(r, s->scheme == ST_XLA ? 0 : -1);
}

/* ---- programs: each generated source built once per process ---- */

typedef struct Prog { char *src; cl_program p; cl_kernel k; } Prog;
static Prog *progs;
static int nprogs, cprogs;

static cl_kernel kernel_for(char *src, const char *name, BrErr *e)
{
    for (int i = 0; i < nprogs; i++)
        if (!strcmp(progs[i].src, src)) { free(src); return progs[i].k; }
    cl_program p = gpu_build(src, e);
    cl_int rc;
    cl_kernel k = p ? clCreateKernel(p, name, &rc) : NULL;
    if (p && rc != CL_SUCCESS) { gpu_clerr(e, rc, "clCreateKernel"); clReleaseProgram(p); k = NULL; }
    if (!k || !br_grow((void **)&progs, &cprogs, nprogs + 1, sizeof *progs)) {
        if (k) { clReleaseKernel(k); clReleaseProgram(p); br_err(e, BR_ENOMEM, "out of memory"); }
        free(src);
        return NULL;
    }
    progs[nprogs++] = (Prog){src, p, k};
    return k;
}

/* ---- the latency evaluator (section 4.3) ---- */

/* lanes the device runs in lock step (a warp or wavefront): 32 on GPUs,
 * 8 on a CPU device (its SIMD width in doubles, AVX-512) */
static int simd(void) { return gpu_info()->is_cpu ? 8 : 32; }

static int cell_ops(const StitchRegion *r, bool *need)
{
    int c = 0;
    for (int i = 0; i < r->n; i++)
        if (need[i]) c += r->nodes[i].k == SN_X ? 0 : (int)op_info[r->nodes[i].op].cost;
    return c;
}

/* L = N_wave * L_warp: N_wave = warps / resident warps (occupancy from
 * the work-group size, local memory and estimated registers), L_warp =
 * instructions * CPI, plus a launch's latency per kernel */
double stitch_cost(const StitchRegion *r, int64_t rows, int64_t cols, StitchSched *s)
{
    const GpuInfo *g = gpu_info();
    int64_t nseg = r->dir == DIR_ROW ? rows : cols, len = r->dir == DIR_ROW ? cols : rows;
    int LS = lanes_of(s), L = s->wg, W = simd(), P = npasses(r);
    int nred = 0;
    for (int i = 0; i < r->n; i++) nred += r->nodes[i].k == SN_RED;
    bool cache = use_cache(r, len, LS, s->scheme);
    int64_t groups = (nseg + (L / LS) - 1) / (L / LS);
    double warps = (double)groups * ((L + W - 1) / W);
    /* occupancy: resident lanes per compute unit bounded by 2048, by local
     * memory and by registers (64K per unit, 16 + cached cells + nodes) */
    s->lmem = LS > 1 ? (double)L * 8 : 0;
    s->lmem_noreuse = LS > 1 ? (double)L * 8 * nred : 0;
    double regs = 16 + (cache ? VPT * 2 : 0) + r->n;
    double per_cu = 2048.0 / L;
    if (s->lmem > 0) per_cu = BR_MIN(per_cu, (double)g->local_mem / s->lmem);
    per_cu = BR_MIN(per_cu, 65536.0 / (regs * L));
    per_cu = BR_MAX(1.0, floor(per_cu));
    double resident = per_cu * ((L + W - 1) / W) * BR_MAX(1, g->compute_units);
    double waves = ceil(warps / resident);
    /* instructions per lane: every pass reads (cached: once) and computes
     * its cells; a thread-per-segment row walk is not coalesced (W
     * transactions per warp access); tree steps with a barrier each */
    double cells = ceil((double)len / LS);
    double ops = 0;
    for (int p = 0; p < P; p++) {
        bool need[ST_MAX_NODES] = {0};
        if (p == P - 1) mark_cells(r, r->root, need);
        for (int i = 0; i < r->n; i++)
            if (p < P - 1 && r->nodes[i].k == SN_RED && depth(r, i) == p + 1) mark_cells(r, r->nodes[i].a, need);
        ops += cells * cell_ops(r, need);
    }
    double coalesce = (LS == 1 && r->dir == DIR_ROW) ? W : 1;
    double mem = cells * (cache ? 2 : P + 1) * 20 * coalesce;   /* ~20 cycles a transaction, amortized */
    double tree = LS > 1 ? nred * log2((double)LS) * (LS > W ? 30 : 8) : 0;
    int launches = s->scheme == ST_XLA ? P : 1;
    double launch = 5e-6 * BR_MAX(g->clock_mhz, 1000) * 1e6;   /* ~5 us a launch */
    s->cycles = waves * (ops + mem + tree) * 4 + launches * launch;
    s->launches = launches;
    return s->cycles;
}

static int sched_cmp(const void *a, const void *b)
{
    double x = ((const StitchSched *)a)->cycles, y = ((const StitchSched *)b)->cycles;
    return x < y ? -1 : x > y;
}

int stitch_enumerate(const StitchRegion *r, int64_t rows, int64_t cols, StitchSched *out, int max)
{
    size_t maxwg = gpu_info()->max_wg;
    StitchSched c[16];
    int n = 0;
    c[n++] = (StitchSched){.scheme = ST_THREAD, .lanes = 1, .wg = 64};
    for (int ls = 4; ls <= 32; ls *= 2) c[n++] = (StitchSched){.scheme = ST_SUBGROUP, .lanes = ls, .wg = 64};
    for (int wg = 64; wg <= 256 && (size_t)wg <= maxwg; wg *= 2)
        c[n++] = (StitchSched){.scheme = ST_WORKGROUP, .lanes = wg, .wg = wg};
    c[n++] = (StitchSched){.scheme = ST_XLA, .lanes = 64, .wg = 64};
    for (int i = 0; i < n; i++) stitch_cost(r, rows, cols, &c[i]);
    qsort(c, (size_t)n, sizeof *c, sched_cmp);
    int k = n < max ? n : max;
    memcpy(out, c, (size_t)k * sizeof *c);
    return k;
}

const char *stitch_scheme_name(StitchScheme s)
{
    static const char *const names[] = {"thread", "subgroup", "workgroup", "xla"};
    return s < ST_NSCHEMES ? names[s] : "?";
}

/* ---- running ---- */

static int launch_pass(cl_kernel k, const MB *x, cl_mem xd, cl_mem o, cl_mem segv, const StitchRegion *r,
                       const StitchSched *s, BrErr *e)
{
    cl_long nseg = r->dir == DIR_ROW ? x->rows : x->cols, len = r->dir == DIR_ROW ? x->cols : x->rows, cols = x->cols;
    size_t L = (size_t)s->wg, spg = L / (size_t)lanes_of(s);
    size_t groups = (size_t)((nseg + (cl_long)spg - 1) / (cl_long)spg);
    if (groups > 65536) groups = 65536;
    if (gpu_args(k, e, sizeof nseg, &nseg, sizeof len, &len, sizeof cols, &cols, sizeof(cl_mem), &xd,
                 sizeof(cl_mem), &o, sizeof(cl_mem), &segv, (size_t)0))
        return -1;
    cl_int ls = lanes_of(s), cache = use_cache(r, len, ls, s->scheme);
    cl_int rc = clSetKernelArg(k, 6, L * sizeof(double), NULL);
    if (rc == CL_SUCCESS) rc = clSetKernelArg(k, 7, sizeof ls, &ls);
    if (rc == CL_SUCCESS) rc = clSetKernelArg(k, 8, sizeof cache, &cache);
    if (rc != CL_SUCCESS) return gpu_clerr(e, rc, "clSetKernelArg");
    return gpu_launch1(k, groups * L, L, e);
}

MB *stitch_run(const StitchRegion *r, const MB *x, const StitchSched *sp, BrErr *e)
{
    if (x->cmb || x->rows * x->cols == 0) return NULL;
    if (gpu_init(e)) return NULL;
    StitchSched s;
    if (sp) s = *sp;
    else stitch_enumerate(r, x->rows, x->cols, &s, 1);
    if ((size_t)s.wg > gpu_info()->max_wg) return br_err(e, BR_EARG, "work-group of %d lanes: the device has %zu",
                                                         s.wg, gpu_info()->max_wg), NULL;
    pthread_mutex_lock(&gpu_lock);
    gpu_pool_trim();
    MB *out = NULL, *dense = NULL;
    const MB *xs = x;
    if (x->sparse && !(xs = dense = mb_to_dense(x, e))) goto done;
    int nred = 0;
    for (int i = 0; i < r->n; i++) nred += r->nodes[i].k == SN_RED;
    int64_t nseg = r->dir == DIR_ROW ? x->rows : x->cols;
    GpuBuf xb;
    if (gpu_get(xs, &xb, e)) goto done;
    cl_mem o = gpu_alloc((size_t)(x->rows * x->cols) * sizeof(double), e);
    cl_mem segv = o ? gpu_alloc((size_t)(BR_MAX(nred, 1) * nseg) * sizeof(double), e) : NULL;
    if (!segv) { if (o) clReleaseMemObject(o); if (!e->code) br_err(e, BR_ENOMEM, "GPU: matrix too large"); goto done; }
    int passes = s.scheme == ST_XLA ? npasses(r) : 1;
    bool ok = true;
    for (int p = 0; p < passes && ok; p++) {
        char *src = gen_kernel(r, s.scheme == ST_XLA ? p : -1);
        cl_kernel k = src ? kernel_for(src, "stitch", e) : NULL;
        if (!src && !e->code) br_err(e, BR_ENOMEM, "out of memory");
        ok = k && !launch_pass(k, xs, xb.d, o, segv, r, &s, e);
    }
    clReleaseMemObject(segv);
    if (ok && (out = mb_dense_uninit(x->rows, x->cols, e))) {
        cl_int rc = clEnqueueReadBuffer(gpu_ctx.q, o, CL_TRUE, 0, (size_t)(x->rows * x->cols) * sizeof(double),
                                        out->d, 0, NULL, NULL);
        if (rc != CL_SUCCESS) { gpu_clerr(e, rc, "clEnqueueReadBuffer"); mb_release(out); out = NULL; }
        else { gpu_st.d2h_bytes += (int64_t)(x->rows * x->cols * 8); mb_recount_nnz(out); }
    }
    clReleaseMemObject(o);
done:
    gpu_unpin_all();
    pthread_mutex_unlock(&gpu_lock);
    mb_release(dense);
    return out;
}

int stitch_run_packed(const StitchRegion *const *r, const MB *const *x, int n, MB **out, BrErr *e)
{
    if (gpu_init(e)) return -1;
    const int L = 64;
    StrBuf b = {0};
    char *pre = gpu_cl_prelude();
    if (!pre) return br_err(e, BR_ENOMEM, "out of memory");
    sb_puts(&b, pre);
    free(pre);
    sb_puts(&b, st_helpers);
    for (int k = 0; k < n; k++) {
        gen_body(&b, r[k], k, -1);
    }
    /* the packed kernel: work-groups [G0, G0 + G1) run region 1, ... */
    sb_puts(&b, "__kernel void packed(__global const long *dims, __global const long *firsts");
    for (int k = 0; k < n; k++) sb_printf(&b, ", __global const double *x%d, __global double *o%d", k, k);
    sb_puts(&b, ", __local double *sh)\n{\n    long g = get_group_id(0);\n");
    for (int k = 0; k < n; k++)
        sb_printf(&b, "    if (g >= firsts[%d] && g < firsts[%d])\n"
                      "        body%d(dims[%d], dims[%d], dims[%d], x%d, o%d, 0, sh, g - firsts[%d], firsts[%d] - firsts[%d], "
                      "%d, %d);\n",
                  k, k + 1, k, 3 * k, 3 * k + 1, 3 * k + 2, k, k, k, k + 1, k, L,
                  (int)use_cache(r[k], r[k]->dir == DIR_ROW ? x[k]->cols : x[k]->rows, L, ST_WORKGROUP));
    sb_puts(&b, "}\n");
    if (b.oom) { free(b.s); return br_err(e, BR_ENOMEM, "out of memory"); }
    pthread_mutex_lock(&gpu_lock);
    gpu_pool_trim();
    int rc = -1;
    cl_long dims[3 * 8], firsts[9] = {0};
    cl_mem o[8] = {0}, dd = NULL, fd = NULL;
    cl_kernel kern = n <= 8 ? kernel_for(b.s, "packed", e) : NULL;
    if (n > 8) { free(b.s); br_err(e, BR_EARG, "at most 8 regions in one packed kernel"); }
    for (int k = 0; kern && k < n; k++) {
        cl_long nseg = r[k]->dir == DIR_ROW ? x[k]->rows : x[k]->cols;
        dims[3 * k] = nseg;
        dims[3 * k + 1] = r[k]->dir == DIR_ROW ? x[k]->cols : x[k]->rows;
        dims[3 * k + 2] = x[k]->cols;
        firsts[k + 1] = firsts[k] + nseg;   /* one work-group per segment */
        GpuBuf xb;
        if (x[k]->sparse || gpu_get(x[k], &xb, e) ||
            !(o[k] = gpu_alloc((size_t)(x[k]->rows * x[k]->cols) * sizeof(double), e))) {
            if (!e->code) br_err(e, BR_EARG, "packed regions take dense inputs");
            kern = NULL;
            break;
        }
        cl_int c1 = clSetKernelArg(kern, (cl_uint)(2 + 2 * k), sizeof(cl_mem), &xb.d);
        cl_int c2 = clSetKernelArg(kern, (cl_uint)(3 + 2 * k), sizeof(cl_mem), &o[k]);
        if (c1 != CL_SUCCESS || c2 != CL_SUCCESS) { gpu_clerr(e, c1 ? c1 : c2, "clSetKernelArg"); kern = NULL; }
    }
    cl_int c;
    if (kern) {
        dd = clCreateBuffer(gpu_ctx.ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(cl_long) * 3 * (size_t)n, dims, &c);
        fd = clCreateBuffer(gpu_ctx.ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(cl_long) * (size_t)(n + 1), firsts, &c);
        if (!dd || !fd ||
            clSetKernelArg(kern, 0, sizeof dd, &dd) != CL_SUCCESS || clSetKernelArg(kern, 1, sizeof fd, &fd) != CL_SUCCESS ||
            clSetKernelArg(kern, (cl_uint)(2 + 2 * n), L * sizeof(double), NULL) != CL_SUCCESS)
            gpu_clerr(e, c, "packed kernel arguments");
        else if (!gpu_launch1(kern, (size_t)firsts[n] * L, L, e))
            rc = 0;
    }
    for (int k = 0; k < n; k++) {
        out[k] = NULL;
        if (!rc && (out[k] = mb_dense_uninit(x[k]->rows, x[k]->cols, e))) {
            if (clEnqueueReadBuffer(gpu_ctx.q, o[k], CL_TRUE, 0, (size_t)(x[k]->rows * x[k]->cols) * sizeof(double),
                                    out[k]->d, 0, NULL, NULL) != CL_SUCCESS)
                rc = gpu_clerr(e, -1, "clEnqueueReadBuffer");
            else
                mb_recount_nnz(out[k]);
        }
        if (o[k]) clReleaseMemObject(o[k]);
    }
    if (dd) clReleaseMemObject(dd);
    if (fd) clReleaseMemObject(fd);
    gpu_unpin_all();
    pthread_mutex_unlock(&gpu_lock);
    return rc;
}

/* ---- the unfused reference on the CPU kernels ---- */

MB *stitch_reference(const StitchRegion *r, const MB *x, BrErr *e)
{
    MB *v[ST_MAX_NODES] = {0};
    double c[ST_MAX_NODES] = {0};
    bool isc[ST_MAX_NODES] = {0};
    MB *res = NULL;
    for (int i = 0; i < r->n && !e->code; i++) {
        const SNode *n = &r->nodes[i];
        switch (n->k) {
        case SN_X: v[i] = mb_copy(x, e); break;
        case SN_CONST: c[i] = n->c, isc[i] = true; break;
        case SN_LEN: c[i] = (double)(r->dir == DIR_ROW ? x->cols : x->rows), isc[i] = true; break;
        case SN_UN:
            if (isc[n->a]) c[i] = ops_unary(n->op, c[n->a]), isc[i] = true;
            else v[i] = k_unary(n->op, v[n->a], e);
            break;
        case SN_BIN:
            if (isc[n->a] && isc[n->b]) c[i] = ops_binary(n->op, c[n->a], c[n->b]), isc[i] = true;
            else if (isc[n->b]) v[i] = k_binary_ms(n->op, v[n->a], c[n->b], e);
            else if (isc[n->a]) v[i] = k_binary_sm(n->op, c[n->a], v[n->b], e);
            else v[i] = k_binary(n->op, v[n->a], v[n->b], e);
            break;
        case SN_RED: v[i] = k_agg(n->op, r->dir, v[n->a], e); break;
        }
    }
    if (!e->code) res = mb_retain(v[r->root]);
    for (int i = 0; i < r->n; i++) mb_release(v[i]);
    return res;
}
