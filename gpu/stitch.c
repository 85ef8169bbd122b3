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
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_int.h"
#include "stitch.h"
#include "../base/strbuf.h"
#include "../base/vec.h"
#include "../kernels/agg.h"
#include "../kernels/ew.h"
#include "../kernels/reorg.h"

/* cells a lane keeps in registers across passes (when a segment fits) */
#define VPT 8
#define ST_MAX_PASSES (ST_MAX_NODES + 1)   /* one per reduction depth, then the outputs' */

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

static int nin_of(const StitchRegion *r) { return r->nin > 0 ? r->nin : 1; }

int st_in(StitchRegion *r, int k, StitchInMode mode)
{
    if (k < 1 || k >= ST_MAX_IN) return -1;
    if (r->nin <= k) r->nin = k + 1;
    r->mode[0] = SI_CELL;
    r->mode[k] = mode;
    return add(r, (SNode){.k = SN_IN, .a = k});
}

int st_sc(StitchRegion *r, int k)
{
    if (k < 0 || k >= ST_MAX_SC) return -1;
    if (r->nsc <= k) r->nsc = k + 1;
    return add(r, (SNode){.k = SN_SC, .a = k});
}

/* per segment (uniform over a segment's cells) or per cell */
static bool is_seg(const StitchRegion *r, int i)
{
    const SNode *n = &r->nodes[i];
    switch (n->k) {
    case SN_X: return false;
    case SN_IN: return r->mode[n->a] == SI_SEG;
    case SN_CONST: case SN_RED: case SN_LEN: case SN_SC: return true;
    case SN_UN: case SN_VARDIV: return is_seg(r, n->a);
    default: return is_seg(r, n->a) && is_seg(r, n->b);
    }
}

bool st_is_seg(const StitchRegion *r, int i) { return is_seg(r, i); }

/* does node i read a matrix (else it is one scalar for the whole region) */
static bool reads_data(const StitchRegion *r, int i)
{
    const SNode *n = &r->nodes[i];
    switch (n->k) {
    case SN_X: case SN_IN: case SN_RED: return true;
    case SN_CONST: case SN_SC: case SN_LEN: return false;
    case SN_UN: case SN_VARDIV: return reads_data(r, n->a);
    default: return reads_data(r, n->a) || reads_data(r, n->b);
    }
}

int st_output(StitchRegion *r, int i)
{
    if (i < 0 || i >= r->n || r->nxout >= ST_MAX_OUT - 1) return -1;
    /* a value of scalars alone (a constant, an argument) has no shape */
    if (!reads_data(r, i)) return -1;
    r->xout[r->nxout++] = i;
    return r->nxout;
}

int st_nout(const StitchRegion *r) { return 1 + r->nxout; }
int st_out_node(const StitchRegion *r, int k) { return k == 0 ? r->root : r->xout[k - 1]; }

int st_vardiv(StitchRegion *r, int a)
{
    return a < 0 || !is_seg(r, a) ? -1 : add(r, (SNode){.k = SN_VARDIV, .a = a});
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
    case SN_X: case SN_CONST: case SN_LEN: case SN_IN: case SN_SC: return 0;
    case SN_UN: case SN_VARDIV: return depth(r, n->a);
    case SN_RED: return 1 + depth(r, n->a);
    default: { int a = depth(r, n->a), b = depth(r, n->b); return a > b ? a : b; }
    }
}

/* the passes: one per reduction depth, then the outputs' */
static int npasses(const StitchRegion *r)
{
    int d = 0;
    for (int k = 0; k < st_nout(r); k++) d = BR_MAX(d, depth(r, st_out_node(r, k)));
    return d + 1;
}

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
    case SN_SC: sb_printf(b, "sc[%d]", n->a); return;
    case SN_VARDIV: sb_printf(b, "(len > 1 ? %s / (double)(len - 1) : 0.0)", x); return;
    case SN_IN:
        switch (r->mode[n->a]) {
        case SI_CELL: sb_printf(b, "i%d[ix]", n->a); return;
        case SI_POS: case SI_POST: sb_printf(b, "i%d[p]", n->a); return;
        case SI_SEG: sb_printf(b, "(act ? i%d[seg] : 0.0)", n->a); return;
        }
        return;
    case SN_UN: snprintf(t, sizeof t, op_info[n->op].cgen, x); sb_puts(b, t); return;
    case SN_BIN: snprintf(t, sizeof t, op_info[n->op].cgen, x, y); sb_puts(b, t); return;
    default: return;
    }
}

static const char *red_init(OpCode op) { return op == OP_AMIN ? "INFINITY" : op == OP_AMAX ? "-INFINITY" : "0.0"; }
/* sums add with Kahan compensation per lane (the CPU's sums are Kahan
 * sums: without it the cancellation in X - rowMeans(X) differs) */
static bool red_kahan(OpCode op) { return op == OP_SUM || op == OP_MEAN; }

/* the kernel parameters of the inputs beyond X and of the scalars */
static bool has_extra(const StitchRegion *r) { return nin_of(r) > 1 || r->nsc > 0; }
static void extra_params(StrBuf *b, const StitchRegion *r)
{
    for (int k = 1; has_extra(r) && k < nin_of(r); k++) sb_printf(b, ", __global const double *i%d", k);
    if (has_extra(r)) sb_puts(b, ", __global const double *sc");
    for (int k = 1; k < st_nout(r); k++) sb_printf(b, ", __global double *o%d", k);
}
static void extra_args(StrBuf *b, const StitchRegion *r)
{
    for (int k = 1; has_extra(r) && k < nin_of(r); k++) sb_printf(b, ", i%d", k);
    if (has_extra(r)) sb_puts(b, ", sc");
    for (int k = 1; k < st_nout(r); k++) sb_printf(b, ", o%d", k);
}
static const char *red_comb(OpCode op) { return op == OP_AMIN ? "cg_minstep" : op == OP_AMAX ? "cg_maxstep" : "st_add"; }

/* need[p][i]: the cell nodes pass p computes (the cone of its
 * reductions, or of the outputs in the last pass) */
static void pass_needs(const StitchRegion *r, bool need[][ST_MAX_NODES])
{
    int P = npasses(r);
    for (int p = 0; p < P; p++) {
        memset(need[p], 0, sizeof need[p]);
        if (p == P - 1)
            for (int k = 0; k < st_nout(r); k++) mark_cells(r, st_out_node(r, k), need[p]);
        else
            for (int i = 0; i < r->n; i++)
                if (r->nodes[i].k == SN_RED && depth(r, i) == p + 1) mark_cells(r, r->nodes[i].a, need[p]);
    }
}

/* Computation reuse across passes (seed section 4.5): a dear cell node
 * (an operator of 10 or more flops a cell: exp, log, pow, tanh ...)
 * that more than one pass computes keeps its values beside X's where X
 * is cached (cv<i>[t]): a later pass reads them instead of computing
 * them again (softmax's exp(x - max) in its sum and its output pass).
 * Same values, so the same bits. need: pass_needs's; reuse[i] (may be
 * NULL); the count.
 * BRAID_STITCH_REUSE=0 turns it off (comparisons: bench_stitch). */
static pthread_once_t reuse_once = PTHREAD_ONCE_INIT;
static bool reuse_on;

static void reuse_init(void)
{
    const char *v = getenv("BRAID_STITCH_REUSE");
    reuse_on = !(v && !strcmp(v, "0"));
}

static int reused_nodes(const StitchRegion *r, bool need[][ST_MAX_NODES], bool *reuse)
{
    int P = npasses(r), n = 0;
    pthread_once(&reuse_once, reuse_init);
    if (!reuse_on) {
        if (reuse) memset(reuse, 0, sizeof *reuse * (size_t)r->n);
        return 0;
    }
    for (int i = 0; i < r->n; i++) {
        const SNode *x = &r->nodes[i];
        int passes = 0;
        for (int p = 0; p < P; p++) passes += need[p][i];
        bool on = passes > 1 && (x->k == SN_UN || x->k == SN_BIN) && op_info[x->op].cost >= 10;
        if (reuse) reuse[i] = on;
        n += on;
    }
    return n;
}

/* The body function k of region r: LS lanes per segment, X cached in
 * registers when cache, only pass only_pass (>= 0: ST_XLA's kernel of
 * that pass; the earlier reductions come from segv, this pass's go
 * there). */
static void gen_body(StrBuf *b, const StitchRegion *r, int k, int only_pass, bool csr)
{
    int P = npasses(r);
    /* X's cell (p's row of segment seg's column, or the transpose): a
     * dense read, or on a CSR X the row's entry found by a binary search
     * over its sorted columns (0 where none), so the walk and its order
     * are the dense X's */
    const char *xat = !csr ? "x[ix]" : r->dir == DIR_ROW ? "csr_at(xrp, xci, x, seg, p)" : "csr_at(xrp, xci, x, p, seg)";
    int rid[ST_MAX_NODES], nred = 0;
    for (int i = 0; i < r->n; i++) rid[i] = r->nodes[i].k == SN_RED ? nred++ : -1;
    sb_printf(b, "static void body%d(long nseg, long len, long cols, __global const double *x,%s __global double *out,\n"
                 "    __global double *segv, __local double *sh, long grp, long ngrp, int LS, int cache", k,
              csr ? " __global const long *xrp, __global const int *xci," : "");
    extra_params(b, r);
    sb_puts(b, ")\n{\n");
    sb_puts(b, "    const int l = get_local_id(0), L = get_local_size(0), SPG = L / LS;\n");
    sb_puts(b, "    const int lane = l % LS, slot = l / LS;\n");
    sb_puts(b, "    for (long s0 = grp * SPG; s0 < nseg; s0 += ngrp * SPG) {\n");
    sb_puts(b, "        const long seg = s0 + slot;\n        const bool act = seg < nseg;\n");
    bool need[ST_MAX_PASSES][ST_MAX_NODES], reuse[ST_MAX_NODES] = {0}, computed[ST_MAX_NODES] = {0};
    pass_needs(r, need);
    if (only_pass < 0) {
        sb_printf(b, "        double xv[%d];\n", VPT);
        reused_nodes(r, need, reuse);
        for (int i = 0; i < r->n; i++) if (reuse[i]) sb_printf(b, "        double cv%d[%d];\n", i, VPT);
    }
    /* seg values: emitted when their reductions are known */
    bool have[ST_MAX_NODES] = {0};
    bool xloaded = false;
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
        bool last = p == P - 1;
        int reds[ST_MAX_NODES], nr = 0;
        for (int i = 0; i < r->n; i++)
            if (!last && r->nodes[i].k == SN_RED && depth(r, i) == p + 1) reds[nr++] = i;
        for (int q = 0; q < nr; q++) {
            sb_printf(b, "        double a%d = %s;\n", reds[q], red_init(r->nodes[reds[q]].op));
            if (red_kahan(r->nodes[reds[q]].op)) sb_printf(b, "        double k%d = 0.0;\n", reds[q]);
        }
        /* the pass over the segment's cells */
        sb_puts(b, "        for (long p = lane, t = 0; act && p < len; p += LS, t++) {\n");
        sb_printf(b, "            const long ix = %s;\n", r->dir == DIR_ROW ? "seg * cols + p" : "p * cols + seg");
        for (int i = 0; i < r->n; i++) {
            if (!need[p][i]) continue;
            if (r->nodes[i].k == SN_X) {
                if (only_pass >= 0) sb_printf(b, "            double v%d = %s;\n", i, xat);
                else if (!xloaded) sb_printf(b, "            double v%d = %s;\n            if (cache) xv[t] = v%d;\n", i, xat, i);
                else sb_printf(b, "            double v%d = cache ? xv[t] : %s;\n", i, xat);
                xloaded = true;   /* the first pass that reads X fills xv */
                continue;
            }
            if (reuse[i] && computed[i]) {   /* a later pass: the kept values */
                sb_printf(b, "            double v%d = cache ? cv%d[t] : ", i, i);
                expr(b, r, i);
                sb_puts(b, ";\n");
                continue;
            }
            sb_printf(b, "            double v%d = ", i);
            expr(b, r, i);
            sb_puts(b, ";\n");
            if (reuse[i]) sb_printf(b, "            if (cache) cv%d[t] = v%d;\n", i, i);
            computed[i] = true;
        }
        for (int q = 0; q < nr; q++) {
            if (red_kahan(r->nodes[reds[q]].op))
                sb_printf(b, "            cg_kadd(&a%d, &k%d, v%d);\n", reds[q], reds[q], r->nodes[reds[q]].a);
            else
                sb_printf(b, "            a%d = %s(a%d, v%d);\n", reds[q], red_comb(r->nodes[reds[q]].op), reds[q],
                          r->nodes[reds[q]].a);
        }
        /* outputs: output 0 is out, output k is ok; cells in the pass,
         * per-segment values once per segment */
        char on[ST_MAX_OUT][8];
        for (int q = 0; q < st_nout(r); q++) snprintf(on[q], sizeof on[q], q ? "o%d" : "out", q);
        for (int q = 0; last && q < st_nout(r); q++)
            if (!is_seg(r, st_out_node(r, q))) sb_printf(b, "            %s[ix] = v%d;\n", on[q], st_out_node(r, q));
        sb_puts(b, "        }\n");
        for (int q = 0; last && q < st_nout(r); q++)
            if (is_seg(r, st_out_node(r, q)))
                sb_printf(b, "        if (act && lane == 0) %s[seg] = v%d;\n", on[q], st_out_node(r, q));
        for (int q = 0; q < nr; q++)
            if (red_kahan(r->nodes[reds[q]].op)) sb_printf(b, "        a%d += k%d;\n", reds[q], reds[q]);
        /* the reductions across the segment's lanes: a tree in the one
         * scratch array (reused by every reduction), result to all lanes */
        for (int q = 0; q < nr; q++) {
            int i = reds[q];
            const char *comb = red_comb(r->nodes[i].op);
            /* LS is uniform over the work-group: every lane takes the
             * same branch, so the barriers are reached by all */
            sb_printf(b, "        double v%d = a%d;\n", i, i);
            /* a segment that is exactly one sub-group sums by the
             * device's sub-group reduction where it has one (ST_SG);
             * min/max keep the tree, whose NaN semantics are the CPU's
             * (sub_group_reduce_min follows fmin, which drops NaN) */
            if (!strcmp(comb, "st_add"))
                sb_printf(b, "#ifdef ST_SG\n        if (LS > 1 && LS == (int)get_sub_group_size()) v%d = sub_group_reduce_add(a%d);\n"
                             "        else\n#endif\n", i, i);
            /* ST_NV (warp shuffles, gpu.h warp_shfl): the tree's steps
             * across warps (w >= 32) in local memory, the rest by
             * butterflies in registers, then (LS > 32) lane 0's value to
             * the segment's lanes; each pair of lanes combines (lower
             * lane's value, upper's) as the tree does, so lane l ends
             * with the tree's value at l mod w: the same bits */
            sb_puts(b, "        if (LS > 1) {\n#ifdef ST_NV\n");
            sb_printf(b, "            if (LS > 32) {\n"
                         "                sh[l] = a%d;\n                barrier(CLK_LOCAL_MEM_FENCE);\n"
                         "                for (int w = LS / 2; w >= 32; w /= 2) {\n"
                         "                    if (lane < w) sh[l] = %s(sh[l], sh[l + w]);\n"
                         "                    barrier(CLK_LOCAL_MEM_FENCE);\n                }\n"
                         "                v%d = sh[l];\n            }\n", i, comb, i);
            sb_printf(b, "            for (int w = (LS > 32 ? 32 : LS) / 2; w > 0; w /= 2) {\n"
                         "                const double o = ST_SHFL(v%d, w);\n"
                         "                v%d = (lane & w) ? %s(o, v%d) : %s(v%d, o);\n            }\n",
                      i, i, comb, i, comb, i);
            sb_printf(b, "            if (LS > 32) {\n"
                         "                if (lane == 0) sh[slot * LS] = v%d;\n"
                         "                barrier(CLK_LOCAL_MEM_FENCE);\n"
                         "                v%d = sh[slot * LS];\n                barrier(CLK_LOCAL_MEM_FENCE);\n"
                         "            }\n#else\n", i, i);
            sb_printf(b, "            sh[l] = a%d;\n            barrier(CLK_LOCAL_MEM_FENCE);\n", i);
            sb_printf(b, "            for (int w = LS / 2; w > 0; w /= 2) {\n"
                         "                if (lane < w) sh[l] = %s(sh[l], sh[l + w]);\n"
                         "                barrier(CLK_LOCAL_MEM_FENCE);\n            }\n", comb);
            sb_printf(b, "            v%d = sh[slot * LS];\n            barrier(CLK_LOCAL_MEM_FENCE);\n#endif\n        }\n", i);
            if (r->nodes[i].op == OP_MEAN) sb_printf(b, "        v%d /= (double)len;\n", i);
            if (only_pass >= 0) sb_printf(b, "        if (act && lane == 0) segv[%d * nseg + seg] = v%d;\n", rid[i], i);
            have[i] = true;
        }
    }
    sb_puts(b, "    }\n}\n");
}

/* ST_SG: the device's sub-group functions (cl_khr_subgroups, or the
 * OpenCL 3.0 feature); without them the trees in local memory run */
static const char st_helpers[] =
    "CG_INL double st_add(double a, double b) { return a + b; }\n"
    "#if defined(cl_khr_subgroups) || defined(__opencl_c_subgroups)\n"
    "#ifdef cl_khr_subgroups\n#pragma OPENCL EXTENSION cl_khr_subgroups : enable\n#endif\n"
    "#define ST_SG 1\n"
    "#endif\n"
    GPU_CL_SHFL;

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
    gen_body(&b, r, 0, only_pass, false);
    sb_puts(&b, "__kernel void stitch(long nseg, long len, long cols, __global const double *x, __global double *out,\n"
                "    __global double *segv, __local double *sh, int LS, int cache");
    extra_params(&b, r);
    sb_puts(&b, ")\n{\n    body0(nseg, len, cols, x, out, segv, sh, get_group_id(0), get_num_groups(0), LS, cache");
    extra_args(&b, r);
    sb_puts(&b, ");\n}\n");
    if (b.oom) { free(b.s); return NULL; }
    return b.s;
}

char *stitch_body_source(const StitchRegion *r, bool csr)
{
    StrBuf b = {0};
    sb_puts(&b, st_helpers);
    if (csr) sb_puts(&b, GPU_CL_CSR_AT);
    gen_body(&b, r, 0, -1, csr);
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

/* The kernel of region r's pass (-1: all passes), found by the region's
 * structure before any source is generated: DML runs the same region
 * many times (a paramserv test: tens of thousands), and generating and
 * comparing its source each time cost more than the launch. state: 1
 * built, 0 compiling in the background, -1 failed (err says why). */
typedef struct RKern { StitchRegion r; int pass; cl_kernel k; int state; BrErr err; } RKern;
static RKern *rkerns;
static int nrk, crk;

static bool region_eq(const StitchRegion *a, const StitchRegion *b)
{
    if (a->dir != b->dir || a->n != b->n || a->root != b->root || nin_of(a) != nin_of(b) || a->nsc != b->nsc ||
        a->nxout != b->nxout || memcmp(a->xout, b->xout, (size_t)a->nxout * sizeof a->xout[0]))
        return false;
    for (int k = 1; k < nin_of(a); k++) if (a->mode[k] != b->mode[k]) return false;
    for (int i = 0; i < a->n; i++) {
        const SNode *x = &a->nodes[i], *y = &b->nodes[i];
        if (x->k != y->k || x->op != y->op || x->a != y->a || x->b != y->b || memcmp(&x->c, &y->c, sizeof x->c))
            return false;
    }
    return true;
}

/* Calls of each region not built yet (stitch_build_share). */
typedef struct RCalls { StitchRegion r; int64_t n; } RCalls;
static RCalls *rcalls;
static int nrc, crc;

double stitch_build_share(const StitchRegion *r)
{
    pthread_mutex_lock(&gpu_lock);
    double share = 0;
    bool built = false;
    for (int i = 0; i < nrk && !built; i++) built = rkerns[i].state == 1 && region_eq(&rkerns[i].r, r);
    if (!built) {
        int i = 0;
        while (i < nrc && !region_eq(&rcalls[i].r, r)) i++;
        if (i == nrc && br_grow((void **)&rcalls, &crc, nrc + 1, sizeof *rcalls)) rcalls[nrc++] = (RCalls){*r, 0};
        int64_t n = i < nrc ? ++rcalls[i].n : 1;
        share = gpu_build_seconds() / (double)n;
    }
    pthread_mutex_unlock(&gpu_lock);
    return share;
}

/* ---- asynchronous compilation (seed 001: the unfused plan runs while
 * the stitched kernel compiles) ----
 * A region's first run under sysds.gpu.async starts a detached thread
 * that generates and builds its kernel without the backend's lock; until
 * it is built, runs of the region take the per-operator GPU kernels
 * (stitch_unfused_gpu_all), whose reductions run in the order of the
 * stitched kernel under stitch_unfused_order: the results are the same
 * bits either way, so nothing depends on when the build ends. Builds
 * still running at exit are waited for (atexit). */
static bool g_async, g_hold, g_exit_hooked;
static int g_building;
static pthread_cond_t g_build_cv = PTHREAD_COND_INITIALIZER;

void stitch_set_async(bool on) { g_async = on; }
bool stitch_async(void) { return g_async; }

void stitch_async_hold(bool hold)
{
    pthread_mutex_lock(&gpu_lock);
    g_hold = hold;
    pthread_cond_broadcast(&g_build_cv);
    pthread_mutex_unlock(&gpu_lock);
}

void stitch_async_wait(void)
{
    pthread_mutex_lock(&gpu_lock);
    g_hold = false;
    pthread_cond_broadcast(&g_build_cv);
    while (g_building > 0) pthread_cond_wait(&g_build_cv, &gpu_lock);
    pthread_mutex_unlock(&gpu_lock);
}

static void wait_at_exit(void) { stitch_async_wait(); }

bool gpu_async_start(void *(*job)(void *), void *arg)
{
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    bool ok = !pthread_create(&t, &at, job, arg);
    pthread_attr_destroy(&at);
    if (!ok) return false;
    if (!g_exit_hooked) g_exit_hooked = !atexit(wait_at_exit);
    g_building++;
    return true;
}

void gpu_async_gate(void)
{
    pthread_mutex_lock(&gpu_lock);
    while (g_hold) pthread_cond_wait(&g_build_cv, &gpu_lock);
    pthread_mutex_unlock(&gpu_lock);
}

void gpu_async_done(void)
{
    g_building--;
    pthread_cond_broadcast(&g_build_cv);
}

static void *build_job(void *arg)
{
    StitchRegion *r = arg;
    gpu_async_gate();
    /* generation and the driver's compiler, off the lock: the launches of
     * other operators go on meanwhile (OpenCL calls are thread-safe) */
    BrErr e = {0};
    char *src = gen_kernel(r, -1);
    cl_program p = src ? gpu_build(src, &e) : NULL;
    cl_int rc = CL_SUCCESS;
    cl_kernel k = p ? clCreateKernel(p, "stitch", &rc) : NULL;
    if (!src) br_err(&e, BR_ENOMEM, "out of memory");
    else if (p && rc != CL_SUCCESS) gpu_clerr(&e, rc, "clCreateKernel");
    pthread_mutex_lock(&gpu_lock);
    if (k && !br_grow((void **)&progs, &cprogs, nprogs + 1, sizeof *progs)) {
        clReleaseKernel(k), k = NULL;
        br_err(&e, BR_ENOMEM, "out of memory");
    }
    if (k) progs[nprogs++] = (Prog){src, p, k}, src = NULL, p = NULL;
    for (int i = 0; i < nrk; i++)
        if (rkerns[i].pass == -1 && rkerns[i].state == 0 && region_eq(&rkerns[i].r, r))
            rkerns[i].k = k, rkerns[i].state = k ? 1 : -1, rkerns[i].err = e;
    gpu_async_done();
    pthread_mutex_unlock(&gpu_lock);
    if (p) clReleaseProgram(p);
    free(src);
    free(r);
    return NULL;
}

/* Starts the background build of r's kernel (under gpu_lock): false
 * when no thread could be started (the caller builds it now). */
static bool start_build(const StitchRegion *r)
{
    StitchRegion *c = malloc(sizeof *c);
    if (!c || !br_grow((void **)&rkerns, &crk, nrk + 1, sizeof *rkerns)) { free(c); return false; }
    *c = *r;
    if (!gpu_async_start(build_job, c)) { free(c); return false; }
    rkerns[nrk++] = (RKern){*r, -1, NULL, 0, {0}};
    return true;
}

/* The kernel of r's pass (under gpu_lock); NULL with e clear and
 * *pending set while it builds in the background. */
static cl_kernel region_kernel(const StitchRegion *r, int pass, bool *pending, BrErr *e)
{
    for (int i = 0; i < nrk; i++)
        if (rkerns[i].pass == pass && region_eq(&rkerns[i].r, r)) {
            if (rkerns[i].state < 0) *e = rkerns[i].err;
            *pending = rkerns[i].state == 0;
            return rkerns[i].k;
        }
    if (pass < 0 && g_async && start_build(r)) { *pending = true; return NULL; }
    char *src = gen_kernel(r, pass);
    if (!src) return br_err(e, BR_ENOMEM, "out of memory"), NULL;
    cl_kernel k = kernel_for(src, "stitch", e);
    if (k && br_grow((void **)&rkerns, &crk, nrk + 1, sizeof *rkerns)) rkerns[nrk++] = (RKern){*r, pass, k, 1, {0}};
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
 * instructions * CPI, at least the bytes moved at the profile's
 * bandwidth, plus the profile's launch latency per kernel */
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
    bool need[ST_MAX_PASSES][ST_MAX_NODES];
    pass_needs(r, need);
    double regs = 16 + (cache ? VPT * 2 * (1 + reused_nodes(r, need, NULL)) : 0) + r->n;
    double per_cu = 2048.0 / L;
    if (s->lmem > 0) per_cu = BR_MIN(per_cu, (double)g->local_mem / s->lmem);
    per_cu = BR_MIN(per_cu, 65536.0 / (regs * L));
    per_cu = BR_MAX(1.0, floor(per_cu));
    double ncu, mhz;
    gpu_units(&ncu, &mhz);
    double resident = per_cu * ((L + W - 1) / W) * ncu;
    double waves = ceil(warps / resident);
    /* instructions per lane: every pass reads (cached: once) and computes
     * its cells; a thread-per-segment row walk is not coalesced (W
     * transactions per warp access); tree steps with a barrier each */
    double cells = ceil((double)len / LS);
    double ops = 0;
    for (int p = 0; p < P; p++) ops += cells * cell_ops(r, need[p]);
    double coalesce = (LS == 1 && r->dir == DIR_ROW) ? W : 1;
    double mem = cells * (cache ? 2 : P + 1) * 20 * coalesce;   /* ~20 cycles a transaction, amortized */
    double steps = LS > 1 ? log2((double)LS) : 0, tree = nred * steps * (LS > W ? 30 : 8);
    /* warp shuffles (gpu.h warp_shfl 1): the steps across warps through
     * local memory, the last 5 in registers, lane 0's value handed on */
    if (g->warp_shfl == 1 && LS > 32) tree = nred * ((steps - 5) * 30 + 5 * 8 + 30);
    int launches = s->scheme == ST_XLA ? P : 1;
    /* the device profile (gpu_profile): a launch's latency, and the
     * passes over X (once when cached) and the outputs at the device's
     * read bandwidth as the floor of the instruction estimate */
    GpuProfile gp = gpu_profile();
    double hz = BR_MAX(mhz, 1000) * 1e6, launch = gp.launch_s * hz;
    double bytes = (double)rows * (double)cols * 8 * (cache ? 1 : P) + (double)nseg * 8 * st_nout(r);
    s->instr = waves * (ops + mem + tree) * 4 + launches * launch;
    s->cycles = fmax(waves * (ops + mem + tree) * 4, bytes / gp.bw * hz) + launches * launch;
    s->launches = launches;
    return s->cycles;
}

/* The combine of an operator's aggregated outputs (docs/gpu.md, "The
 * combine in the same launch"), priced with the terms above: ng blocks'
 * partials of nout outputs, reads[t] doubles per block for output t and
 * cells[t] cells, added block after block (a Kahan step a partial).
 * inl: by the operator's last work-group of wg lanes, which walks the
 * outputs in turn (ceil(cells / wg) steps each), its reads at one
 * compute unit's share of the bandwidth; otherwise one cg_comb launch
 * per output, a lane per cell over the device's resident lanes, at the
 * whole bandwidth, plus the launch latency each. Cycles. */
double stitch_comb_cost(const int64_t *reads, const int64_t *cells, int nout, int64_t ng, int wg, bool inl)
{
    GpuProfile gp = gpu_profile();
    double cu, mhz;
    gpu_units(&cu, &mhz);
    double hz = BR_MAX(mhz, 1000) * 1e6, launch = gp.launch_s * hz;
    double lanes = inl ? BR_MAX(wg, 1) : 2048.0 * cu;
    double bw = inl ? gp.bw / cu : gp.bw, t = 0;
    for (int k = 0; k < nout; k++) {
        /* a step: the partial's read (~20 cycles, amortized) and a Kahan
         * add (4 operations), 4 cycles an instruction as above */
        double steps = ceil((double)BR_MAX(cells[k], 1) / lanes) * (double)ng, per = (20 + 4) * 4;
        double bytes = (double)ng * (double)reads[k] * 8;
        t += fmax(steps * per, bytes / bw * hz) + (inl ? 0 : launch);
    }
    return t;
}

static int sched_cmp(const void *a, const void *b)
{
    const StitchSched *p = a, *q = b;
    if (p->cycles != q->cycles) return p->cycles < q->cycles ? -1 : 1;
    return p->instr < q->instr ? -1 : p->instr > q->instr;
}

/* The schedule of a region run by the first work-groups of another
 * kernel's launch (gpu/spoof_cl.c, a stitched codegen operator), groups
 * of wg lanes: thread composition (a segment per lane: the per-operator
 * kernels' order, so the unstitched device plan's bits) or work-group
 * composition (a segment per group, its reductions by the tree in local
 * memory, as the seed's block composition), whichever the evaluator
 * prices lower; mode 1 or 2: a test's choice of the one or the other.
 * *cache: X kept in registers across the passes (use_cache). */
StitchSched stitch_inlaunch_sched(const StitchRegion *r, int64_t rows, int64_t cols, int wg, int mode, int *cache)
{
    StitchSched t = {.scheme = ST_THREAD, .lanes = 1, .wg = wg}, w = {.scheme = ST_WORKGROUP, .lanes = wg, .wg = wg};
    stitch_cost(r, rows, cols, &t);
    stitch_cost(r, rows, cols, &w);
    bool wgc = wg > 1 && (mode == 2 || (mode == 0 && sched_cmp(&w, &t) < 0));
    StitchSched s = wgc ? w : t;
    int64_t len = r->dir == DIR_ROW ? cols : rows;
    *cache = use_cache(r, len, lanes_of(&s), s.scheme);
    return s;
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

/* the device buffers of a run: inputs beyond X and the scalars */
typedef struct Extra { cl_mem in[ST_MAX_IN]; cl_mem sc; cl_mem out[ST_MAX_OUT]; } Extra;

static int launch_pass(cl_kernel k, const MB *x, cl_mem xd, cl_mem o, cl_mem segv, const StitchRegion *r,
                       const StitchSched *s, const Extra *ex, BrErr *e)
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
    cl_uint arg = 9;
    for (int i = 1; has_extra(r) && i < nin_of(r) && rc == CL_SUCCESS; i++)
        rc = clSetKernelArg(k, arg++, sizeof(cl_mem), &ex->in[i]);
    if (has_extra(r) && rc == CL_SUCCESS) rc = clSetKernelArg(k, arg++, sizeof(cl_mem), &ex->sc);
    for (int q = 1; q < st_nout(r) && rc == CL_SUCCESS; q++) rc = clSetKernelArg(k, arg++, sizeof(cl_mem), &ex->out[q]);
    if (rc != CL_SUCCESS) return gpu_clerr(e, rc, "clSetKernelArg");
    return gpu_launch1(k, groups * L, L, e);
}

StitchSched stitch_unfused_order(const StitchRegion *r, int64_t rows, int64_t cols)
{
    StitchSched s = {.scheme = ST_THREAD, .lanes = 1, .wg = 64};
    if (r->dir == DIR_ROW) {
        size_t n = cols < 256 ? (size_t)cols : 256, l = 1;
        while (l * 2 <= n && l * 2 <= gpu_info()->max_wg) l *= 2;
        s = (StitchSched){.scheme = l > 1 ? ST_WORKGROUP : ST_THREAD, .lanes = (int)l, .wg = l > 1 ? (int)l : 64};
    }
    stitch_cost(r, rows, cols, &s);
    return s;
}

int stitch_launches(const StitchRegion *r, const StitchSched *s) { return s->scheme == ST_XLA ? npasses(r) : 1; }

/* the segments, their length, and the output's shape */
static int64_t nseg_of(const StitchRegion *r, const MB *x) { return r->dir == DIR_ROW ? x->rows : x->cols; }

bool stitch_shapes_ok(const StitchRegion *r, const MB *const *in)
{
    const MB *x = in[0];
    for (int k = 0; k < nin_of(r); k++) {
        const MB *m = in[k];
        if (!m) return false;
        StitchInMode md = k == 0 ? SI_CELL : r->mode[k];
        bool seg_is_rows = (r->dir == DIR_ROW) == (md == SI_SEG || md == SI_POST);
        if (md == SI_CELL ? (m->rows != x->rows || m->cols != x->cols)
                          : seg_is_rows ? (m->rows != (md == SI_POST ? x->cols : x->rows) || m->cols != 1)
                                        : (m->rows != 1 || m->cols != (md == SI_POST ? x->rows : x->cols)))
            return false;
    }
    return true;
}

/* the evaluator's best stitched schedule (ST_XLA, the baseline, is
 * enumerated for comparison only: a region always runs as one kernel) */
static void pick(const StitchRegion *r, int64_t rows, int64_t cols, StitchSched *s)
{
    StitchSched c[16];
    int n = stitch_enumerate(r, rows, cols, c, 16), k = 0;
    while (k < n - 1 && c[k].scheme == ST_XLA) k++;
    *s = c[k];
}

/* rows x cols of output k: X's shape, or one value per segment */
static void out_shape(const StitchRegion *r, int k, const MB *x, int64_t *rows, int64_t *cols)
{
    bool seg = is_seg(r, st_out_node(r, k));
    *rows = seg && r->dir == DIR_COL ? 1 : x->rows;
    *cols = seg && r->dir == DIR_ROW ? 1 : x->cols;
}

int stitch_exec_all(const StitchRegion *r, const MB *const *in, const double *sc, const StitchSched *sp, MB **out,
                    BrErr *e)
{
    const MB *x = in[0];
    int nout = st_nout(r);
    for (int k = 0; k < nout; k++) out[k] = NULL;
    for (int k = 0; k < nin_of(r); k++)
        if (!in[k] || in[k]->cmb || in[k]->rows * in[k]->cols == 0) return 0;
    if (!stitch_shapes_ok(r, in)) return 0;
    if (gpu_init(e)) return -1;
    StitchSched s;
    if (sp) s = *sp;
    else pick(r, x->rows, x->cols, &s);
    if ((size_t)s.wg > gpu_info()->max_wg)
        return br_err(e, BR_EARG, "work-group of %d lanes: the device has %zu", s.wg, gpu_info()->max_wg);
    pthread_mutex_lock(&gpu_lock);
    gpu_pool_trim();
    MB *dense[ST_MAX_IN] = {0};
    Extra ex = {0};
    cl_mem segv = NULL, xd = NULL;
    int64_t nseg = nseg_of(r, x), orows[ST_MAX_OUT], ocols[ST_MAX_OUT];
    bool ok = false, pending = false;
    /* inputs: the pool's copies (sparse ones as dense blocks first) */
    for (int k = 0; k < nin_of(r); k++) {
        const MB *m = in[k];
        if (m->sparse && !(m = dense[k] = mb_to_dense(in[k], e))) goto done;
        GpuBuf b;
        if (gpu_get(m, &b, e)) goto done;
        if (k == 0) xd = b.d;
        else ex.in[k] = b.d;
    }
    double scv[ST_MAX_SC] = {0};
    for (int k = 0; k < r->nsc; k++) scv[k] = sc[k];
    if (has_extra(r) && !(ex.sc = gpu_upload_small(scv, sizeof scv, e))) goto done;
    int nred = 0;
    for (int i = 0; i < r->n; i++) nred += r->nodes[i].k == SN_RED;
    for (int k = 0; k < nout; k++) {
        out_shape(r, k, x, &orows[k], &ocols[k]);
        if (!(ex.out[k] = gpu_alloc((size_t)(orows[k] * ocols[k]) * sizeof(double), e))) break;
    }
    segv = ex.out[nout - 1] ? gpu_alloc((size_t)(BR_MAX(nred, 1) * nseg) * sizeof(double), e) : NULL;
    if (!segv) { if (!e->code) br_err(e, BR_ENOMEM, "GPU: matrix too large"); goto done; }
    int passes = stitch_launches(r, &s);
    ok = true;
    for (int p = 0; p < passes && ok; p++) {
        cl_kernel k = region_kernel(r, s.scheme == ST_XLA ? p : -1, &pending, e);
        ok = k && !launch_pass(k, x, xd, ex.out[0], segv, r, &s, &ex, e);
    }
    if (pending) gpu_st.stitch_fallbacks++;
    if (ok) {
        gpu_st.stitched++;
        gpu_st.stitch_launches += passes;
        /* each output a device-only result, which owns its buffer
         * (gpu_dense_result releases it when it fails) */
        for (int k = 0; k < nout; k++) {
            cl_mem o = ex.out[k];
            ex.out[k] = NULL;
            if (ok && !(out[k] = gpu_dense_result(orows[k], ocols[k], o, e))) ok = false;
            else if (!ok) gpu_free(o);
        }
    }
done:
    for (int k = 0; k < nout; k++) gpu_free(ex.out[k]);
    gpu_free(segv);
    gpu_free(ex.sc);
    if (ok) gpu_st.ops++;
    gpu_unpin_all();
    pthread_mutex_unlock(&gpu_lock);
    for (int k = 0; k < ST_MAX_IN; k++) mb_release(dense[k]);
    if (!ok) for (int k = 0; k < nout; k++) { mb_release(out[k]); out[k] = NULL; }
    /* the kernel is still building: the per-operator kernels, same bits */
    if (pending && !e->code) return stitch_unfused_gpu_all(r, in, sc, out, e);
    return e->code ? -1 : 0;
}

MB *stitch_exec(const StitchRegion *r, const MB *const *in, const double *sc, const StitchSched *sp, BrErr *e)
{
    MB *out[ST_MAX_OUT];
    if (stitch_exec_all(r, in, sc, sp, out, e)) return NULL;
    for (int k = 1; k < st_nout(r); k++) mb_release(out[k]);
    return out[0];
}

MB *stitch_run(const StitchRegion *r, const MB *x, const StitchSched *sp, BrErr *e)
{
    const MB *in[1] = {x};
    if (nin_of(r) != 1 || r->nsc) return br_err(e, BR_EARG, "stitch_run: a region over X alone"), NULL;
    return stitch_exec(r, in, NULL, sp, e);
}

int stitch_run_packed(const StitchRegion *const *r, const MB *const *x, int n, MB **out, BrErr *e)
{
    if (gpu_init(e)) return -1;
    for (int k = 0; k < n; k++)
        if (has_extra(r[k]) || r[k]->nxout) return br_err(e, BR_EARG, "packed regions are over X alone, one output each");
    const int L = 64;
    StrBuf b = {0};
    char *pre = gpu_cl_prelude();
    if (!pre) return br_err(e, BR_ENOMEM, "out of memory");
    sb_puts(&b, pre);
    free(pre);
    sb_puts(&b, st_helpers);
    for (int k = 0; k < n; k++) {
        gen_body(&b, r[k], k, -1, false);
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
    if (kern) {
        dd = gpu_upload_small(dims, sizeof(cl_long) * 3 * (size_t)n, e);
        fd = dd ? gpu_upload_small(firsts, sizeof(cl_long) * (size_t)(n + 1), e) : NULL;
        bool args = dd && fd;   /* (else e says why) */
        if (args && (clSetKernelArg(kern, 0, sizeof dd, &dd) != CL_SUCCESS ||
                     clSetKernelArg(kern, 1, sizeof fd, &fd) != CL_SUCCESS ||
                     clSetKernelArg(kern, (cl_uint)(2 + 2 * n), L * sizeof(double), NULL) != CL_SUCCESS)) {
            gpu_clerr(e, -1, "packed kernel arguments");
            args = false;
        }
        if (args && !gpu_launch1(kern, (size_t)firsts[n] * L, L, e)) rc = 0;
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
        gpu_free(o[k]);
    }
    gpu_free(dd);
    gpu_free(fd);
    gpu_unpin_all();
    pthread_mutex_unlock(&gpu_lock);
    return rc;
}

/* ---- the unfused plans: CPU kernels (the reference), GPU operators ---- */

/* The operators an unfused evaluation runs: the CPU kernels, or the GPU
 * backend's per-operator kernels (what the asynchronous compilation runs
 * while a region's kernel builds: the same reduction order as the
 * stitched kernel under stitch_unfused_order, so the same bits). */
typedef struct UnOps {
    MB *(*unary)(OpCode op, const MB *a, BrErr *e);
    MB *(*binary)(OpCode op, const MB *a, const MB *b, BrErr *e);
    MB *(*binary_ms)(OpCode op, const MB *a, double s, bool scalar_left, BrErr *e);
    MB *(*agg)(OpCode op, AggDir dir, const MB *a, BrErr *e);
    MB *(*transpose)(const MB *a, BrErr *e);
} UnOps;

static MB *cpu_binary_ms(OpCode op, const MB *a, double s, bool left, BrErr *e)
{
    return left ? k_binary_sm(op, s, a, e) : k_binary_ms(op, a, s, e);
}

static const UnOps cpu_ops = {k_unary, k_binary, cpu_binary_ms, k_agg, k_transpose};

/* The GPU operators; one the backend does not take (NULL, e clear) runs
 * on the CPU kernel after its operands land, as the per-operator plan. */
static bool lands(const MB *a, const MB *b, BrErr *e) { return !mb_host(a, e) && (!b || !mb_host(b, e)); }

static MB *dev_unary(OpCode op, const MB *a, BrErr *e)
{
    MB *r = gpu_unary(op, a, e);
    return r || e->code || !lands(a, NULL, e) ? r : k_unary(op, a, e);
}

static MB *dev_binary(OpCode op, const MB *a, const MB *b, BrErr *e)
{
    MB *r = gpu_binary(op, a, b, e);
    return r || e->code || !lands(a, b, e) ? r : k_binary(op, a, b, e);
}

static MB *dev_binary_ms(OpCode op, const MB *a, double s, bool left, BrErr *e)
{
    MB *r = gpu_binary_ms(op, a, s, left, e);
    return r || e->code || !lands(a, NULL, e) ? r : cpu_binary_ms(op, a, s, left, e);
}

static MB *dev_agg(OpCode op, AggDir dir, const MB *a, BrErr *e)
{
    MB *r = gpu_agg(op, dir, a, e);
    return r || e->code || !lands(a, NULL, e) ? r : k_agg(op, dir, a, e);
}

static MB *dev_transpose(const MB *a, BrErr *e)
{
    MB *r = gpu_transpose(a, e);
    return r || e->code || !lands(a, NULL, e) ? r : k_transpose(a, e);
}

static const UnOps dev_ops = {dev_unary, dev_binary, dev_binary_ms, dev_agg, dev_transpose};

/* a / (n - 1) per segment value, 0 when n is 1 (SN_VARDIV) */
static MB *vardiv(const MB *a, int64_t n, BrErr *e)
{
    MB *v = mb_to_dense(a, e);
    if (!v) return NULL;
    for (int64_t k = 0; k < v->rows * v->cols; k++) v->d[k] = n > 1 ? v->d[k] / (double)(n - 1) : 0.0;
    mb_values_changed(v);   /* (mb_to_dense kept a's flag) */
    mb_recount_nnz(v);
    return v;
}

/* a per-position vector as the cells it stands for (X's shape): a cell
 * value, which the kernels then combine with per-segment vectors; t:
 * the vector in the other orientation (SI_POST), transposed first */
static MB *spread(const UnOps *o, const MB *v, const MB *x, bool t, BrErr *e)
{
    MB *vt = t ? o->transpose(v, e) : mb_retain((MB *)v);
    MB *z = vt ? mb_dense(x->rows, x->cols, e) : NULL;
    MB *r = z ? o->binary(OP_PLUS, z, vt, e) : NULL;
    mb_release(z);
    mb_release(vt);
    return r;
}

/* The region's operators one by one through o. */
static int unfused_all(const UnOps *o, const StitchRegion *r, const MB *const *in, const double *sc, MB **out,
                       BrErr *e)
{
    const MB *x = in[0];
    MB *v[ST_MAX_NODES] = {0};
    double c[ST_MAX_NODES] = {0};
    bool isc[ST_MAX_NODES] = {0};
    int64_t len = r->dir == DIR_ROW ? x->cols : x->rows;
    for (int i = 0; i < r->n && !e->code; i++) {
        const SNode *n = &r->nodes[i];
        switch (n->k) {
        /* the region's operators make new blocks: inputs are shared */
        case SN_X: v[i] = mb_retain((MB *)x); break;
        case SN_IN:
            if (r->mode[n->a] == SI_POS || r->mode[n->a] == SI_POST)
                v[i] = spread(o, in[n->a], x, r->mode[n->a] == SI_POST, e);
            else
                v[i] = mb_retain((MB *)in[n->a]);
            break;
        case SN_SC: c[i] = sc[n->a], isc[i] = true; break;
        case SN_CONST: c[i] = n->c, isc[i] = true; break;
        case SN_LEN: c[i] = (double)len, isc[i] = true; break;
        case SN_VARDIV:
            if (isc[n->a]) c[i] = len > 1 ? c[n->a] / (double)(len - 1) : 0.0, isc[i] = true;
            else v[i] = vardiv(v[n->a], len, e);
            break;
        case SN_UN:
            if (isc[n->a]) c[i] = ops_unary(n->op, c[n->a]), isc[i] = true;
            else v[i] = o->unary(n->op, v[n->a], e);
            break;
        case SN_BIN:
            if (isc[n->a] && isc[n->b]) c[i] = ops_binary(n->op, c[n->a], c[n->b]), isc[i] = true;
            else if (isc[n->b]) v[i] = o->binary_ms(n->op, v[n->a], c[n->b], false, e);
            else if (isc[n->a]) v[i] = o->binary_ms(n->op, v[n->b], c[n->a], true, e);
            else v[i] = o->binary(n->op, v[n->a], v[n->b], e);
            break;
        case SN_RED: v[i] = o->agg(n->op, r->dir, v[n->a], e); break;
        }
        if (!e->code && !isc[i] && !v[i]) br_err(e, BR_ENOMEM, "out of memory");
    }
    for (int k = 0; k < st_nout(r); k++) {
        int q = st_out_node(r, k);
        out[k] = !e->code && !isc[q] ? mb_retain(v[q]) : NULL;
        if (!e->code && isc[q]) br_err(e, BR_EARG, "stitched region: a scalar result");
    }
    for (int i = 0; i < r->n; i++) mb_release(v[i]);
    if (!e->code) return 0;
    for (int k = 0; k < st_nout(r); k++) { mb_release(out[k]); out[k] = NULL; }
    return -1;
}

int stitch_reference_all(const StitchRegion *r, const MB *const *in, const double *sc, MB **out, BrErr *e)
{
    return unfused_all(&cpu_ops, r, in, sc, out, e);
}

int stitch_unfused_gpu_all(const StitchRegion *r, const MB *const *in, const double *sc, MB **out, BrErr *e)
{
    return unfused_all(&dev_ops, r, in, sc, out, e);
}

MB *stitch_reference_in(const StitchRegion *r, const MB *const *in, const double *sc, BrErr *e)
{
    MB *out[ST_MAX_OUT];
    if (stitch_reference_all(r, in, sc, out, e)) return NULL;
    for (int k = 1; k < st_nout(r); k++) mb_release(out[k]);
    return out[0];
}

MB *stitch_reference(const StitchRegion *r, const MB *x, BrErr *e)
{
    const MB *in[1] = {x};
    return stitch_reference_in(r, in, NULL, e);
}
