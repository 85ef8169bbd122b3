/* cgen_c.c: C code generation by template expansion (seed 000, section
 * 2.2). For each template the whole loop is generated, with the CPlan's
 * operations inlined into it: over blocks of dense rows and cells, over
 * the non-zeros of sparse rows for sparse-safe plans, over rows with
 * vector primitives for Row plans, over the non-zeros of the driver for
 * Outer plans. Skeletons (kernels/spoof*.c) call these loops per block;
 * the ABI is described in kernels/spoof.h. Scalars are read from sc[],
 * never baked in as literals, so plans differing only in constants share
 * their compiled code. */
#include "cgint.h"

#include <stdlib.h>
#include <string.h>

#include "../kernels/spoof.h"

/* Access context of the cell values of a template body. */
typedef enum { AX_CELL, AX_FLAT, AX_SPARSE, AX_OROW, AX_OCOL, AX_NARROW } AxCtx;

typedef struct Gen {
    const CPlan *p;
    StrBuf *b;
    AxCtx ax;
    bool sp;               /* Row: main row read sparse */
    bool blk;              /* Row: inside the loop over a block of rows */
    const int *klen;       /* blocked loop: per node, the compile-time
                              length of a row vector fed by a specialized
                              product (0: run-time length) */
    bool soa;              /* blocked loop, emit_row_soa: the body over the
                              block's rows by columns (w<i>[k][r]) */
    bool lane[SPOOF_MAXOUT]; /* under emit_row_soa: output t, a Kahan sum
                              (colSums, sum) of body values, accumulated
                              per row lane in the SIMD loop (soa_lane) */
    int nprod;             /* Row, dense: the main row's products the
                              skeleton may pass in P[nin] (pq, rows of
                              pqw values; cplan_row_main_prods) */
    int prod[SPOOF_MAXPROD];
    int ntq;               /* Row, dense: the outputs t(main) %*% q whose
                              q rows the skeleton may take in P[nin + 1]
                              (tq, rows of tqw values;
                              cplan_row_main_taggs), by output index */
    int tq[SPOOF_MAXOUT];
    bool tq_left[SPOOF_MAXOUT];
    bool cq;               /* Row, dense: the loop over a compressed main
                              input whose every product and q the skeleton
                              gives (pq, tq): the main row is not read */
    bool rb;               /* Row, dense, the main loop: one-column updates
                              t(main) %*% q are buffered and done 4 rows at
                              a time (row_buffered, cg_outer_add_rows) */
} Gen;

/* C expression of operator node x over operand expressions a[] (ops.def's
 * cgen column; NaN for an operator without one). */
void cg_op_expr(char *buf, size_t n, const CNode *x, char a[3][48])
{
    int na = x->kind == CN_UN ? 1 : x->kind == CN_BIN ? 2 : 3;
    const char *f = op_info[x->op].arity == na ? op_info[x->op].cgen : NULL;
    if (!f) f = na == 1 ? "(NAN + 0 * (%s))" : na == 2 ? "(NAN + 0 * (%s) * (%s))" : "(NAN + 0 * (%s) * (%s) * (%s))";
    snprintf(buf, n, f, a[0], a[1], a[2]);
}

/* An aggregate's accumulation (ops.def's acc column): "min" / "max" for
 * cg_minstep / cg_maxstep, NULL for Kahan sums; its empty value; whether
 * it sums squares. */
static const char *acc_step(OpCode op)
{
    int c = op_info[op].acc & AC_COMB;
    return c == AC_MIN ? "min" : c == AC_MAX ? "max" : NULL;
}

static const char *acc_init(OpCode op)
{
    int c = op_info[op].acc & AC_COMB;
    return c == AC_MIN ? "INFINITY" : c == AC_MAX ? "-INFINITY" : "0";
}

static bool acc_sq(OpCode op) { return (op_info[op].acc & AC_SQ) != 0; }

/* Expression of the value of node n at the current cell (Cell, Outer)
 * or, for Row, of a scalar-per-row or constant node. */
static void cell_operand(const Gen *g, int n, char *buf, size_t len)
{
    const CPlan *p = g->p;
    const CNode *x = &p->n[n];
    /* Cell/MAgg: X[, lo:hi] reads X's cell, its pointer set at the slice
     * (exec.c, kernels/spoof_cell.c) */
    if (x->kind == CN_SLICE && (p->tpl == T_CELL || p->tpl == T_MAGG)) { cell_operand(g, x->a[0], buf, len); return; }
    if (x->kind != CN_IN) { snprintf(buf, len, "t%d", n); return; }
    int k = x->in;
    const CInput *c = &p->in[k];
    switch (c->mode) {
    case IM_SCALAR: snprintf(buf, len, "s%d", k); return;
    case IM_COL:
        if (g->ax == AX_NARROW) snprintf(buf, len, "cx%d[c]", k);
        else if (g->ax == AX_OCOL) snprintf(buf, len, "P[%d][i]", k);
        else snprintf(buf, len, "c%d", k);
        return;
    case IM_ROW:
        if (g->ax == AX_NARROW) snprintf(buf, len, "rx%d[c]", k);
        else if (g->ax == AX_OCOL) snprintf(buf, len, "r%d", k);
        else snprintf(buf, len, "p%d[j]", k);
        return;
    case IM_FULL:
        if (k == p->main && (g->ax == AX_SPARSE)) { snprintf(buf, len, "av[k]"); return; }
        if (k == p->main && (g->ax == AX_OROW || g->ax == AX_OCOL)) { snprintf(buf, len, "wv[k]"); return; }
        if (g->ax == AX_OCOL) snprintf(buf, len, "P[%d][i * S[%d] + j]", k, k);
        else if (g->ax == AX_NARROW) snprintf(buf, len, "p%d[c]", k);
        else snprintf(buf, len, "p%d[j]", k);
        return;
    default:
        snprintf(buf, len, "0.0");
        return;
    }
}

static void emit_scalars(const Gen *g)
{
    for (int k = 0; k < g->p->nin; k++)
        if (g->p->in[k].mode == IM_SCALAR) sb_printf(g->b, "    const double s%d = sc[%d];\n", k, k);
}

/* Statements of the elementwise cell nodes (all but inputs, aggregates,
 * products, transposes), in topological order. */
static void emit_cell_body(const Gen *g, const char *ind)
{
    const CPlan *p = g->p;
    for (int i = 0; i < p->nn; i++) {
        const CNode *x = &p->n[i];
        if (x->kind != CN_UN && x->kind != CN_BIN && x->kind != CN_TER) continue;
        char a[3][48], e[512];
        for (int k = 0; k < x->na; k++) cell_operand(g, x->a[k], a[k], sizeof a[k]);
        cg_op_expr(e, sizeof e, x, a);
        sb_printf(g->b, "%sconst double t%d = %s;\n", ind, i, e);
    }
}

/* The cell expression under output r of a Cell/MAgg plan. */
static int cell_root(const CPlan *p, int r)
{
    const CNode *x = &p->n[p->out[r]];
    return x->kind == CN_AGG ? x->a[0] : p->out[r];
}

/* ---- Cell / MAgg ---- */

/* Is p a Cell/MAgg plan whose outputs are all full aggregates (sum, sum
 * of squares, min, max, mean)? */
static bool cell_full_agg(const CPlan *p)
{
    if (p->var == V_NO_AGG || p->var == V_ROW_AGG || p->var == V_COL_AGG) return false;
    for (int r = 0; r < p->nout; r++) {
        const CNode *x = &p->n[p->out[r]];
        if (x->kind != CN_AGG || !(op_info[x->op].tpl & FT_CELL)) return false;
    }
    return true;
}

/* The aggregation step of output r at lane l for the cell value o; nc:
 * Kahan sums without the infinity check (cg_kadd_nc, the group loops). */
static void emit_agg_step(const CPlan *p, StrBuf *b, int r, const char *o, const char *ind, bool nc)
{
    const char *ka = nc ? "cg_kadd_nc" : "cg_kadd";
    OpCode op = p->n[p->out[r]].op;
    const char *st = acc_step(op);
    if (st) sb_printf(b, "%sas%d[l] = cg_%sstep(as%d[l], %s);\n", ind, r, st, r, o);
    else if (acc_sq(op)) sb_printf(b, "%s{ const double q = %s; %s(&as%d[l], &ac%d[l], q * q); }\n", ind, o, ka, r, r);
    else sb_printf(b, "%s%s(&as%d[l], &ac%d[l], %s);\n", ind, ka, r, r, o);
}

/* Distance of the software prefetches of the full-group loops (bytes):
 * a streaming loop whose cells cost a few ns (exp, log) left too few
 * cache misses in flight on this machine, the hardware prefetchers did
 * not make up for it (sum(log(X+1)) over 160 MB: 4.5 -> 1.4 ns a cell,
 * one thread). */
#define CG_PREFETCH 2048

/* The lane loops of cg_fullagg over j0 <= j < j1 (C expressions) at
 * indentation ind: full groups of W = banks * SPOOF_AL cells (a simd
 * loop, cell j0 + q into lane q % W, Kahan steps without the infinity
 * check: the skeleton redoes a call whose sums end non-finite), then the
 * rest into lanes 0... In the sparse context the loops run over the
 * row's non-zeros k (av[k] at column ai[k]). */
static void emit_lane_loops(Gen *g, const char *j0, const char *j1, const char *ind, int banks)
{
    bool sp = g->ax == AX_SPARSE;    /* q0 + l: a non-zero k of the row, j = ai[k] */
    const CPlan *p = g->p;
    StrBuf *b = g->b;
    const int W = SPOOF_AL * banks;
    char o[48], in2[40], in3[40];
    snprintf(in2, sizeof in2, "%s    ", ind);
    snprintf(in3, sizeof in3, "%s        ", ind);
    sb_printf(b, "%sint64_t q0 = %s;\n", ind, j0);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 0) {
            sb_printf(b, "%sfor (; q0 + %d <= %s; q0 += %d) {\n", ind, W, j1, W);
            /* dense inputs: software prefetch CG_PREFETCH bytes ahead */
            for (int k = 0; k < p->nin && !sp; k++)
                if (p->in[k].mode == IM_FULL)
                    sb_printf(b, "%sfor (int l = 0; l < %d; l += 8) "
                                 "__builtin_prefetch((const void *)((uintptr_t)(p%d + q0 + l) + %d));\n",
                              in2, W, k, CG_PREFETCH);
            sb_printf(b, "#pragma omp simd\n%sfor (int l = 0; l < %d; l++) {\n", in2, W);
        } else
            sb_printf(b, "%s{\n%sfor (int l = 0; l < %s - q0; l++) {\n", ind, in2, j1);
        if (sp) sb_printf(b, "%sconst int64_t k = q0 + l, j = ai[k];\n%s(void)j;\n", in3, in3);
        else sb_printf(b, "%sconst int64_t j = q0 + l;\n", in3);
        emit_cell_body(g, in3);
        for (int r = 0; r < p->nout; r++) {
            cell_operand(g, cell_root(p, r), o, sizeof o);
            emit_agg_step(p, b, r, o, in3, pass == 0);
        }
        sb_printf(b, "%s}\n%s}\n", in2, ind);
    }
}

/* How emit_row_inputs names the main input's row. */
enum { MAIN_SKIP, MAIN_A, MAIN_P };

/* The row-i pointers (p<k>) and column-vector values (c<k>) of a plan's
 * inputs; the main input is left out (sparse loops), named `a` (Row
 * bodies) or p<main> (dense Cell loops). */
static void emit_row_inputs(const Gen *g, const char *ind, int main_as)
{
    const CPlan *p = g->p;
    for (int k = 0; k < p->nin; k++) {
        InMode md = p->in[k].mode;
        if (k == p->main && main_as != MAIN_P) {
            if (main_as == MAIN_A) sb_printf(g->b, "%sconst double *restrict a = P[%d] + i * S[%d];\n", ind, k, k);
            continue;
        }
        if (md == IM_FULL || md == IM_ROW)
            sb_printf(g->b, "%sconst double *restrict p%d = P[%d] + i * S[%d];\n", ind, k, k, k);
        else if (md == IM_COL)
            sb_printf(g->b, "%sconst double c%d = P[%d][i];\n", ind, k, k);
    }
}

/* Software prefetch of the dense rows the per-row loop streams (the main
 * input and full side inputs), about 8 KB ahead: a row body with a long
 * dependence chain (dot product, exp, division, then the rank-1 update
 * of t(X) %*% (.)) keeps few rows in flight, and the hardware prefetcher
 * alone left the memory idle between them (the logistic-regression
 * gradient step read at 71% of the in-run bandwidth, 83-85% with it;
 * docs/perf.md). `pfd`: rows ahead, declared before the loop. */
static void emit_row_prefetch(const Gen *g, bool decl, const char *ind)
{
    const CPlan *p = g->p;
    StrBuf *b = g->b;
    if (decl) {
        sb_printf(b, "%sconst int64_t pfs = 0", ind);
        for (int k = 0; k < p->nin; k++)
            if (k == p->main || p->in[k].mode == IM_FULL) sb_printf(b, " + S[%d]", k);
        sb_printf(b, ";\n%sconst int64_t pfd = pfs > 0 ? (1024 + pfs - 1) / pfs : 0;\n", ind);
        return;
    }
    if (g->cq) return;   /* no row read but the side inputs' (few, short) */
    sb_printf(b, "%sif (i + pfd < r1) {\n", ind);
    for (int k = 0; k < p->nin; k++) {
        if (k == p->main) sb_printf(b, "%s    cg_pfrow(a + pfd * S[%d], L[%d]);\n", ind, k, k);
        else if (p->in[k].mode == IM_FULL) sb_printf(b, "%s    cg_pfrow(p%d + pfd * S[%d], L[%d]);\n", ind, k, k, k);
    }
    sb_printf(b, "%s}\n", ind);
}

/* Declares and loads (load) or stores back the aggregation lanes as<r>,
 * ac<r> of every output from/to acc. With banks = 2 the lanes
 * SPOOF_AL.. are a second bank, starting empty and folded lane by lane
 * into the first before the store (Kahan steps; min/max steps). */
static void emit_lanes(Gen *g, bool load, int banks)
{
    const int W = SPOOF_AL, WB = SPOOF_AL * banks;
    for (int r = 0; r < g->p->nout; r++) {
        OpCode op = g->p->n[g->p->out[r]].op;
        if (load) {
            sb_printf(g->b, "    double as%d[%d], ac%d[%d];\n"
                            "    for (int l = 0; l < %d; l++) { as%d[l] = acc[%d + l]; ac%d[l] = acc[%d + l]; }\n",
                      r, WB, r, WB, W, r, 2 * W * r, r, 2 * W * r + W);
            if (banks > 1)
                sb_printf(g->b, "    for (int l = %d; l < %d; l++) { as%d[l] = %s; ac%d[l] = 0; }\n", W, WB, r,
                          acc_init(op), r);
            continue;
        }
        if (banks > 1 && acc_step(op))
            sb_printf(g->b, "    for (int l = 0; l < %d; l++) as%d[l] = cg_%sstep(as%d[l], as%d[%d + l]);\n", W, r,
                      acc_step(op), r, r, W);
        else if (banks > 1)
            sb_printf(g->b, "    for (int l = 0; l < %d; l++) {\n"
                            "        cg_kadd(&as%d[l], &ac%d[l], as%d[%d + l]);\n"
                            "        cg_kadd(&as%d[l], &ac%d[l], ac%d[%d + l]);\n    }\n",
                      W, r, r, r, W, r, r, r, W);
        sb_printf(g->b, "    for (int l = 0; l < %d; l++) { acc[%d + l] = as%d[l]; acc[%d + l] = ac%d[l]; }\n", W,
                  2 * W * r, r, 2 * W * r + W, r);
    }
}

/* cg_fullagg: full aggregates computed in the loop (no buffer of
 * values). flat (plans without vector inputs): the flat cells
 * r0 <= c < r1, every matrix input full and dense (S unused); else rows
 * r0 <= i < r1 with n columns, inputs as for cg_dense (the skeleton
 * calls each variant only in its case, kernels/spoof.h). SPOOF_AL lanes
 * per output, Kahan sums (or min/max steps) per lane: the lanes are
 * independent vector accumulators and the order is fixed by the call's
 * range. acc: per output r, the lane values at acc[2 * AL * r] and their
 * corrections after them, read and updated. The flat loop runs two
 * banks of lanes (groups of 2 * SPOOF_AL cells): with one bank a single
 * Kahan sum was bound by the latency of its add chain (4 zmm vectors per
 * output), and streaming MAgg loops of 2..5 sums ran 12-15% faster with
 * two although their lanes then spill. CG_WIDE: 512-bit vectors where
 * available. */
static void emit_full_agg(Gen *g, bool flat)
{
    const CPlan *p = g->p;
    StrBuf *b = g->b;
    int banks = flat ? 2 : 1;
    sb_puts(b, "\nCG_WIDE void cg_fullagg(const double *const *restrict P, const int64_t *restrict S,\n"
               "                        const double *restrict sc, int64_t r0, int64_t r1, int64_t n,\n"
               "                        double *restrict acc)\n{\n");
    sb_puts(b, flat ? "    (void)S; (void)n;\n" : "");
    emit_scalars(g);
    emit_lanes(g, true, banks);
    if (flat) {
        g->ax = AX_FLAT;
        sb_puts(b, "    {\n");
        for (int k = 0; k < p->nin; k++)
            if (p->in[k].mode == IM_FULL) sb_printf(b, "        const double *restrict p%d = P[%d];\n", k, k);
        emit_lane_loops(g, "r0", "r1", "        ", banks);
    } else {
        g->ax = AX_CELL;
        sb_puts(b, "    for (int64_t i = r0; i < r1; i++) {\n");
        emit_row_inputs(g, "        ", MAIN_P);
        emit_lane_loops(g, "0", "n", "        ", 1);
    }
    sb_puts(b, "    }\n");
    emit_lanes(g, false, banks);
    sb_puts(b, "}\n");
}

/* cg_sparseagg: the full aggregates of a sparse-safe plan over the
 * non-zeros of rows r0 <= i < r1 of the main input (CSR rp, ci, cv),
 * computed in the loop; lanes and acc as for cg_fullagg, restarting at
 * each row (kernels/spoof.h). */
static void emit_sparse_agg(Gen *g)
{
    StrBuf *b = g->b;
    g->ax = AX_SPARSE;
    sb_puts(b, "\nvoid cg_sparseagg(const double *const *restrict P, const int64_t *restrict S,\n"
               "                  const double *restrict sc, int64_t r0, int64_t r1, const int64_t *restrict rp,\n"
               "                  const int32_t *restrict ci, const double *restrict cv, double *restrict acc)\n{\n");
    emit_scalars(g);
    emit_lanes(g, true, 1);
    sb_puts(b, "    for (int64_t i = r0; i < r1; i++) {\n"
               "        const int32_t *restrict ai = ci + rp[i];\n"
               "        const double *restrict av = cv + rp[i];\n"
               "        const int64_t anz = rp[i + 1] - rp[i];\n");
    emit_row_inputs(g, "        ", MAIN_SKIP);
    emit_lane_loops(g, "0", "anz", "        ", 1);
    sb_puts(b, "    }\n");
    emit_lanes(g, false, 1);
    sb_puts(b, "}\n");
}

/* The store of Cell output r's value o at dst, and with count (a no_agg
 * plan of one output: the *nz variants) the value counted into nz and
 * checked into nf. */
static void emit_cell_store(Gen *g, int r, const char *dst, const char *ind, bool count)
{
    char o[48];
    cell_operand(g, cell_root(g->p, r), o, sizeof o);
    if (!count) { sb_printf(g->b, "%s%s = %s;\n", ind, dst, o); return; }
    sb_printf(g->b, "%sconst double v = %s;\n%s%s = v;\n%snz += v != 0;\n%snf |= !(fabs(v) <= DBL_MAX);\n", ind, o,
              ind, dst, ind, ind);
}

/* cg_dense over one column (j1 == j0 + 1: column vectors whose inputs
 * are not all flat, say a column slice Y[, 1] read in place or a sparse
 * input expanded a block of rows at a time): one loop over the rows that
 * the compiler vectorizes, with strided loads (gathers), instead of the
 * row loop below, which ran one cell per row with every pointer set up
 * again (GLM's n x 1 chains at ~25 ns a cell). One loop for every
 * stride: a second, contiguous copy of the body made each Cell kernel's
 * compile ~30% longer. The same expression per cell, so the same values. */
static void emit_cell_column(Gen *g, bool count)
{
    const CPlan *p = g->p;
    StrBuf *b = g->b;
    char dst[32];
    sb_puts(b, "    if (j1 == j0 + 1) {\n        const int64_t j = j0;\n        (void)j;\n");
    for (int r = 0; r < p->nout; r++) sb_printf(b, "        double *restrict o%d = out[%d];\n", r, r);
    sb_puts(b, count ? "#pragma omp simd reduction(+:nz) reduction(|:nf)\n" : "#pragma omp simd\n");
    sb_puts(b, "        for (int64_t i = r0; i < r1; i++) {\n");
    for (int k = 0; k < p->nin; k++) {
        InMode md = p->in[k].mode;
        if (md == IM_FULL || md == IM_ROW)
            sb_printf(b, "            const double *p%d = P[%d] + i * S[%d];\n", k, k, k);
        else if (md == IM_COL)
            sb_printf(b, "            const double c%d = P[%d][i];\n", k, k);
    }
    emit_cell_body(g, "            ");
    for (int r = 0; r < p->nout; r++) {
        snprintf(dst, sizeof dst, "o%d[(i - r0) * ldo]", r);
        emit_cell_store(g, r, dst, "            ", count);
    }
    sb_puts(b, count ? "        }\n        *bad |= nf;\n        return nz;\n    }\n" : "        }\n        return;\n    }\n");
}

/* cg_dense of a plan over narrow rows (cplan_cell_narrow: 2..15 columns,
 * not a multiple of 4, at compile time; a row or column vector input).
 * The per-row loop runs each row's w cells as one short vector loop and a
 * scalar rest (MLogreg's exp(LT - rowMaxs(LT)) over 5 columns spent 40%
 * of its time on the fifth cell of each row); here tiles of rows run as
 * one loop over their cells c: full inputs at p<k>[c] (the rows in place
 * where they are contiguous, else copied into px<k>), column vectors'
 * values spread over their rows' cells (cx<k>), row vectors' repeated
 * per row (rx<k>, once per column chunk), the output in place where its
 * rows are contiguous, else through ox<r>.
 * Tiles of NARROW_T rows up to NARROW_W columns, else of NARROW_C / w rows
 * (wider calls by chunks of NARROW_C columns, a row at a time). The
 * same expression per cell: the same values. This loop replaces the
 * per-row one (one copy of the body: each copy lengthens the compile,
 * emit_cell_column). */
#define NARROW_W 16
#define NARROW_T 32
#define NARROW_C 2048
static void emit_cell_narrow(Gen *g)
{
    const CPlan *p = g->p;
    StrBuf *b = g->b;
    char dst[32];
    sb_printf(b, "    for (int64_t jc = j0; jc < j1; jc += %d) {\n"
                 "    const int64_t w = j1 - jc < %d ? j1 - jc : %d, tr = w <= %d ? %d : %d / w;\n",
              NARROW_C, NARROW_C, NARROW_C, NARROW_W, NARROW_T, NARROW_C);
    for (int k = 0; k < p->nin; k++) {
        InMode md = p->in[k].mode;
        if (md == IM_ROW)
            sb_printf(b, "    double rx%d[%d];\n"
                         "    for (int64_t r = 0; r < tr; r++)\n"
                         "        for (int64_t j = 0; j < w; j++) rx%d[r * w + j] = P[%d][jc + j];\n",
                      k, NARROW_C, k, k);
        else if (md == IM_COL)
            sb_printf(b, "    double cx%d[%d];\n", k, NARROW_C);
        else if (md == IM_FULL)
            sb_printf(b, "    double px%d[%d];\n", k, NARROW_C);
    }
    for (int r = 0; r < p->nout; r++) sb_printf(b, "    double ox%d[%d];\n", r, NARROW_C);
    sb_puts(b, "    for (int64_t rs = r0; rs < r1; rs += tr) {\n"
               "        const int64_t nt = r1 - rs < tr ? r1 - rs : tr, nc = nt * w;\n");
    for (int k = 0; k < p->nin; k++) {
        InMode md = p->in[k].mode;
        if (md == IM_COL)
            sb_printf(b, "        for (int64_t r = 0; r < nt; r++) {\n"
                         "            const double v = P[%d][rs + r];\n"
                         "            for (int64_t j = 0; j < w; j++) cx%d[r * w + j] = v;\n"
                         "        }\n", k, k);
        else if (md == IM_FULL)
            sb_printf(b, "        const double *restrict p%d = P[%d] + rs * w;\n"
                         "        if (jc != 0 || S[%d] != w) {\n"
                         "            for (int64_t r = 0; r < nt; r++)\n"
                         "                for (int64_t j = 0; j < w; j++) px%d[r * w + j] = P[%d][(rs + r) * S[%d] + jc + j];\n"
                         "            p%d = px%d;\n"
                         "        }\n", k, k, k, k, k, k, k, k);
    }
    for (int r = 0; r < p->nout; r++)
        sb_printf(b, "        double *restrict o%d = ldo == w ? out[%d] + (rs - r0) * w : ox%d;\n", r, r, r);
    sb_puts(b, "#pragma omp simd\n        for (int64_t c = 0; c < nc; c++) {\n");
    g->ax = AX_NARROW;
    emit_cell_body(g, "            ");
    for (int r = 0; r < p->nout; r++) {
        snprintf(dst, sizeof dst, "o%d[c]", r);
        emit_cell_store(g, r, dst, "            ", false);
    }
    g->ax = AX_CELL;
    sb_puts(b, "        }\n");
    for (int r = 0; r < p->nout; r++)
        sb_printf(b, "        if (ldo != w)\n"
                     "            for (int64_t r = 0; r < nt; r++)\n"
                     "                for (int64_t j = 0; j < w; j++) out[%d][(rs - r0 + r) * ldo + (jc - j0) + j] = ox%d[r * w + j];\n",
                  r, r);
    sb_puts(b, "    }\n    }\n");
}

/* The head of a Cell function: with count, the counting variant's (never
 * inlined into the plain one that calls it, so its loops are compiled
 * once) and its count and flag; else the plain one's. */
static void emit_cell_head(StrBuf *b, bool count, const char *nz_head, const char *plain_head)
{
    if (count) sb_printf(b, "\n__attribute__((noinline)) %s\n{\n    int64_t nz = 0;\n    int nf = 0;\n", nz_head);
    else sb_printf(b, "\n%s\n{\n", plain_head);
}

/* The plain function of a plan with counting variants: calls the
 * counting one (call: its arguments) and drops the count (its other
 * callers: blocks of compressed or windowed inputs). */
static void emit_cell_plain(StrBuf *b, const char *plain_head, const char *call)
{
    sb_printf(b, "\n%s\n{\n    int bad = 0;\n    (void)%s;\n}\n", plain_head, call);
}

static const char cell_dense_head[] =
    "void cg_dense(const double *const *restrict P, const int64_t *restrict S, const double *restrict sc,\n"
    "              int64_t r0, int64_t r1, int64_t j0, int64_t j1, double *const *restrict out, int64_t ldo)";
static const char cell_flat_head[] =
    "void cg_flat(const double *const *restrict P, const double *restrict sc, int64_t c0, int64_t c1,\n"
    "             double *const *restrict out)";

/* cg_dense, or with count cg_densenz (the same cells, returning the
 * non-zeros among them and *bad |= 1 where one is NaN or infinite:
 * kernels/spoof.h SpCellDenseNzFn) and a cg_dense calling it. */
static void emit_cell_dense(Gen *g, bool count)
{
    const CPlan *p = g->p;
    StrBuf *b = g->b;
    char dst[32];
    g->ax = AX_CELL;
    emit_cell_head(b, count,
                   "int64_t cg_densenz(const double *const *restrict P, const int64_t *restrict S,\n"
                   "                   const double *restrict sc, int64_t r0, int64_t r1, int64_t j0, int64_t j1,\n"
                   "                   double *const *restrict out, int64_t ldo, int *restrict bad)",
                   cell_dense_head);
    emit_scalars(g);
    emit_cell_column(g, count);
    if (cplan_cell_narrow(p)) {
        emit_cell_narrow(g);
    } else {
        sb_puts(b, "    for (int64_t i = r0; i < r1; i++) {\n");
        emit_row_inputs(g, "        ", MAIN_P);
        for (int r = 0; r < p->nout; r++)
            sb_printf(b, "        double *restrict o%d = out[%d] + (i - r0) * ldo;\n", r, r);
        sb_puts(b, "#pragma omp simd\n        for (int64_t j = j0; j < j1; j++) {\n");
        emit_cell_body(g, "            ");
        for (int r = 0; r < p->nout; r++) {
            snprintf(dst, sizeof dst, "o%d[j - j0]", r);
            emit_cell_store(g, r, dst, "            ", false);
        }
        sb_puts(b, "        }\n    }\n");
    }
    if (!count) { sb_puts(b, "}\n"); return; }
    /* rows: the count in the row loop cost a vector reduction per row
     * (through the stack: slower than the pass it saved at 20 values a
     * row), so the call's cells, at most a chunk and still in L1, are
     * counted after it, in one loop where the rows are contiguous */
    sb_puts(b, "    const double *restrict o = out[0];\n"
               "    const int64_t w = j1 - j0, nr = ldo == w ? 1 : r1 - r0, len = ldo == w ? (r1 - r0) * w : w;\n"
               "    for (int64_t i = 0; i < nr; i++)\n"
               "#pragma omp simd reduction(+:nz) reduction(|:nf)\n"
               "        for (int64_t k = 0; k < len; k++) {\n"
               "            const double v = o[i * ldo + k];\n"
               "            nz += v != 0;\n"
               "            nf |= !(fabs(v) <= DBL_MAX);\n"
               "        }\n"
               "    *bad |= nf;\n    return nz;\n}\n");
    emit_cell_plain(b, cell_dense_head, "cg_densenz(P, S, sc, r0, r1, j0, j1, out, ldo, &bad)");
}

/* cg_flat, or with count cg_flatnz (SpCellFlatNzFn) and a cg_flat
 * calling it: every matrix input full and dense, the cells c0 <= c < c1
 * in order. */
static void emit_cell_flat(Gen *g, bool count)
{
    const CPlan *p = g->p;
    StrBuf *b = g->b;
    char dst[32];
    g->ax = AX_FLAT;
    emit_cell_head(b, count,
                   "int64_t cg_flatnz(const double *const *restrict P, const double *restrict sc, int64_t c0,\n"
                   "                  int64_t c1, double *const *restrict out, int *restrict bad)",
                   cell_flat_head);
    emit_scalars(g);
    for (int k = 0; k < p->nin; k++)
        if (p->in[k].mode == IM_FULL) sb_printf(b, "    const double *restrict p%d = P[%d];\n", k, k);
    for (int r = 0; r < p->nout; r++) sb_printf(b, "    double *restrict o%d = out[%d];\n", r, r);
    sb_puts(b, count ? "#pragma omp simd reduction(+:nz) reduction(|:nf)\n" : "#pragma omp simd\n");
    sb_puts(b, "    for (int64_t j = c0; j < c1; j++) {\n");
    emit_cell_body(g, "        ");
    for (int r = 0; r < p->nout; r++) {
        snprintf(dst, sizeof dst, "o%d[j - c0]", r);
        emit_cell_store(g, r, dst, "        ", count);
    }
    sb_puts(b, count ? "    }\n    *bad |= nf;\n    return nz;\n}\n" : "    }\n}\n");
    if (count) emit_cell_plain(b, cell_flat_head, "cg_flatnz(P, sc, c0, c1, out, &bad)");
}

/* A Cell plan's functions. A no_agg plan of one output gets the
 * counting variants of its dense and flat loops (kernels/spoof_cell.c
 * run_none_dense): the output's non-zeros counted and its finiteness
 * checked in the loop that writes it, where a pass over the written
 * cells afterwards cost up to two thirds of the operator when its inputs
 * are in cache. Its cg_dense and cg_flat call them, so each loop is
 * compiled once (a second copy of a loop lengthens the compile by about
 * 30%, see emit_cell_column). */
static void gen_cell(const CPlan *p, StrBuf *b)
{
    Gen g = {.p = p, .b = b, .ax = AX_CELL};
    bool vec = false, count = p->var == V_NO_AGG && p->nout == 1;
    char o[48];
    for (int k = 0; k < p->nin; k++) vec |= p->in[k].mode == IM_ROW || p->in[k].mode == IM_COL;
    /* dense blocks of rows */
    emit_cell_dense(&g, count);
    /* flat: every matrix input full and dense */
    if (!vec) emit_cell_flat(&g, count);
    if (cell_full_agg(p)) emit_full_agg(&g, !vec);
    if (cell_full_agg(p) && p->sparse_safe && p->main >= 0) emit_sparse_agg(&g);
    /* sparse-safe: non-zeros of the main input's row */
    if (p->sparse_safe && p->main >= 0) {
        g.ax = AX_SPARSE;
        sb_puts(b, "\nvoid cg_sparse(const double *const *restrict P, const int64_t *restrict S, const double *restrict sc,\n"
                   "               int64_t i, const int32_t *restrict ci, const double *restrict av, int64_t nz,\n"
                   "               double *const *restrict out)\n{\n");
        emit_scalars(&g);
        emit_row_inputs(&g, "    ", MAIN_SKIP);
        for (int r = 0; r < p->nout; r++) sb_printf(b, "    double *restrict o%d = out[%d];\n", r, r);
        sb_puts(b, "    for (int64_t k = 0; k < nz; k++) {\n        const int64_t j = ci[k];\n        (void)j;\n");
        emit_cell_body(&g, "        ");
        for (int r = 0; r < p->nout; r++) {
            cell_operand(&g, cell_root(p, r), o, sizeof o);
            sb_printf(b, "        o%d[k] = %s;\n", r, o);
        }
        sb_puts(b, "    }\n}\n");
    }
}

/* ---- Row ---- */

/* Pointer expression and length expression of a vector-valued node. */
static void vec_ref(const Gen *g, int n, char *ptr, size_t pl, char *len, size_t ll)
{
    const CPlan *p = g->p;
    const CNode *x = &p->n[n];
    if (x->kind == CN_IN) {
        if (x->in == p->main) snprintf(ptr, pl, "a");
        else snprintf(ptr, pl, "p%d", x->in);
        if (g->klen && g->klen[n]) snprintf(len, ll, "%d", g->klen[n]);
        else snprintf(len, ll, "L[%d]", x->in);
    } else {
        snprintf(ptr, pl, "v%d", n);
        if (g->klen && g->klen[n]) snprintf(len, ll, "%d", g->klen[n]);
        else snprintf(len, ll, "L[%d]", x->vlen);
    }
}

/* Expression of a Row node inside an elementwise vector loop over k. */
static void row_elem(const Gen *g, int n, char *buf, size_t len)
{
    const CNode *x = &g->p->n[n];
    if (g->soa && x->vc == VC_VEC && x->kind == CN_MM) {
        snprintf(buf, len, "bq%d[k * CG_RB + r]", n);
        return;
    }
    if (g->soa && x->vc == VC_VEC && x->kind != CN_IN) { snprintf(buf, len, "w%d[k][r]", n); return; }
    if (x->vc == VC_VEC) {
        char ptr[32], l[32];
        vec_ref(g, n, ptr, sizeof ptr, l, sizeof l);
        snprintf(buf, len, "%s[k]", ptr);
        return;
    }
    if (x->kind == CN_IN && g->p->in[x->in].mode == IM_SCALAR) { snprintf(buf, len, "s%d", x->in); return; }
    if (x->kind == CN_IN) { snprintf(buf, len, "c%d", x->in); return; }
    snprintf(buf, len, "t%d", n);
}

/* Pointer and length of node n as a vector: a vector node itself, a
 * scalar node through a local `qb` emitted at ind (a vector of 1). */
static void vec_or_scalar_ref(const Gen *g, int n, const char *ind, char *ptr, size_t pl, char *len, size_t ll)
{
    if (g->p->n[n].vc == VC_VEC) {
        vec_ref(g, n, ptr, pl, len, ll);
        return;
    }
    char q[48];
    row_elem(g, n, q, sizeof q);
    sb_printf(g->b, "%sconst double qb = %s;\n", ind, q);
    snprintf(ptr, pl, "&qb");
    snprintf(len, ll, "1");
}

static bool is_main(const CPlan *p, int n) { return p->n[n].kind == CN_IN && p->n[n].in == p->main; }

/* A vector-matrix product in the sparse row function (cg_sparse): side
 * matrices arrive row-major there (kernels/spoof.h), so the main row's
 * non-zeros are read once for all columns, with the sums in registers
 * for a compile-time width of 2..16 (checked at run time). */
static void emit_row_mm_sp(const Gen *g, int i, const char *ind)
{
    const CPlan *p = g->p;
    StrBuf *b = g->b;
    const CNode *x = &p->n[i];
    int bi = p->n[x->a[1]].in, k = cplan_row_kwidth(p, i);
    bool sp = is_main(p, x->a[0]);
    char ptr[32], len[32];
    vec_ref(g, x->a[0], ptr, sizeof ptr, len, sizeof len);
    if (x->vc == VC_CELL) {    /* one column: both layouts agree */
        if (sp) sb_printf(b, "%sconst double t%d = cg_dot_sp(av, ai, anz, P[%d]);\n", ind, i, bi);
        else sb_printf(b, "%sconst double t%d = cg_dot(%s, P[%d], %s);\n", ind, i, ptr, bi, len);
    } else if (sp && k && g->klen && g->klen[i] == k) {
        /* under emit_row_sparse's guard: L[bi] == k */
        sb_printf(b, "%scg_vecmat_sp_k(av, ai, anz, P[%d], %d, v%d);\n", ind, bi, k, i);
    } else if (sp && k) {
        sb_printf(b, "%sif (L[%d] == %d) cg_vecmat_sp_k(av, ai, anz, P[%d], %d, v%d);\n", ind, bi, k, bi, k, i);
        sb_printf(b, "%selse cg_vecmat_sp(av, ai, anz, P[%d], L[%d], v%d);\n", ind, bi, bi, i);
    } else if (sp) {
        sb_printf(b, "%scg_vecmat_sp(av, ai, anz, P[%d], L[%d], v%d);\n", ind, bi, bi, i);
    } else {
        sb_printf(b, "%scg_vecmat(%s, %s, P[%d], L[%d], v%d);\n", ind, ptr, len, bi, bi, i);
    }
}

/* The t(A) %*% B root in the sparse row function: the partial is not
 * transposed there (ncol(A) x ncol(B), kernels/spoof.h); for A the main
 * row, each non-zero adds x * B into its output row in one pass. */
static void emit_row_tagg_sp(const Gen *g, int r, const char *out, const char *ind)
{
    const CPlan *p = g->p;
    StrBuf *b = g->b;
    int k = cplan_row_kwidth(p, r);
    const CNode *x = &p->n[r], *A = &p->n[x->a[0]], *B = &p->n[x->a[1]];
    char ptr[32], len[32], bp[48], bl[32], q[48];
    vec_or_scalar_ref(g, x->a[1], ind, bp, sizeof bp, bl, sizeof bl);
    if (A->vc != VC_VEC) {
        row_elem(g, x->a[0], q, sizeof q);
        sb_printf(b, "%scg_axpy(%s, %s, %s, %s);\n", ind, q, bp, bl, out);
    } else if (is_main(p, x->a[0]) && k && B->vc == VC_VEC && g->klen && g->klen[x->a[1]] == k) {
        /* under emit_row_sparse's guard: B's width is k */
        sb_printf(b, "%scg_outer_add_sp_k(av, ai, anz, %s, %d, %s);\n", ind, bp, k, out);
    } else if (is_main(p, x->a[0]) && k && B->vc == VC_VEC) {
        sb_printf(b, "%sif (%s == %d) cg_outer_add_sp_k(av, ai, anz, %s, %d, %s);\n", ind, bl, k, bp, k, out);
        sb_printf(b, "%selse cg_outer_add_sp(av, ai, anz, %s, %s, %s);\n", ind, bp, bl, out);
    } else if (is_main(p, x->a[0])) {
        sb_printf(b, "%scg_outer_add_sp(av, ai, anz, %s, %s, %s);\n", ind, bp, bl, out);
    } else {
        vec_ref(g, x->a[0], ptr, sizeof ptr, len, sizeof len);
        sb_printf(b, "%scg_outer_add(%s, %s, %s, %s, %s);\n", ind, ptr, len, bp, bl, out);
    }
}

/* Node i's index among the products the skeleton may pass (Gen.prod),
 * -1 if none; off: its offset in a row of pq (an expression). */
static int pq_index(const Gen *g, int i, char *off, size_t len)
{
    int j = 0;
    while (j < g->nprod && g->prod[j] != i) j++;
    if (j == g->nprod) return -1;
    int n = snprintf(off, len, "0");
    for (int q = 0; q < j && n > 0 && (size_t)n < len; q++)
        n += snprintf(off + n, len - (size_t)n, " + L[%d]", g->p->n[g->p->n[g->prod[q]].a[1]].in);
    return j;
}

/* The q operand of output root r (cplan_row_main_taggs: the operand
 * that is not the main row), its index among them and its offset in a
 * row of tq (an expression); -1 if r is none of them. */
static int tq_index(const Gen *g, int r, int *qn, char *off, size_t len)
{
    const CPlan *p = g->p;
    int j = 0;
    while (j < g->ntq && p->out[g->tq[j]] != r) j++;
    if (j == g->ntq || g->sp) return -1;
    int n = snprintf(off, len, "0");
    for (int q = 0; q <= j && n > 0 && (size_t)n < len; q++) {
        const CNode *x = &p->n[p->out[g->tq[q]]];
        const CNode *v = &p->n[g->tq_left[q] ? x->a[1] : x->a[0]];
        if (q == j) *qn = g->tq_left[q] ? x->a[1] : x->a[0];
        else if (v->vc == VC_VEC) n += snprintf(off + n, len - (size_t)n, " + L[%d]", v->vlen);
        else n += snprintf(off + n, len - (size_t)n, " + 1");
    }
    return j;
}

/* Is node i's every value exactly +0.0 or 1.0 (a comparison or logical
 * operator: ops.def's TY_BOOL)? A sum of such values is exact below
 * 2^53, so its Kahan steps leave the correction 0 and a plain sum gives
 * the same bits; and x / y = x * (1 / y) bit for bit for x in {+0, 1}
 * (1 / y is exact for x = 1; for x = +0 both are 0 of y's sign, or NaN
 * where y is 0 or NaN). */
static bool bool_node(const CPlan *p, int i)
{
    const CNode *x = &p->n[i];
    return (x->kind == CN_UN || x->kind == CN_BIN) && op_info[x->op].type == TY_BOOL;
}

/* A vector node b / s of a boolean vector b and a scalar s (bool_node):
 * one division per row, then a multiply per value (k-means' P / rowSums(P)
 * over its k values: 5 divisions a row into 1). */
static bool bool_div(const CPlan *p, int i)
{
    const CNode *x = &p->n[i];
    return x->kind == CN_BIN && x->op == OP_DIV && x->vc == VC_VEC && bool_node(p, x->a[0]) &&
           p->n[x->a[1]].vc != VC_VEC;
}

/* One Row node (not the root of an aggregating variant). */
static void emit_row_node(const Gen *g, int i, const char *ind)
{
    const CPlan *p = g->p;
    StrBuf *b = g->b;
    const CNode *x = &p->n[i];
    char ptr[32], len[32], e[512], a[3][48];
    switch (x->kind) {
    case CN_UN: case CN_BIN: case CN_TER:
        for (int k = 0; k < x->na; k++) row_elem(g, x->a[k], a[k], sizeof a[k]);
        if (bool_div(p, i)) {
            vec_ref(g, i, ptr, sizeof ptr, len, sizeof len);
            sb_printf(b, "%s{ const double rq = 1.0 / %s; for (int64_t k = 0; k < %s; k++) v%d[k] = %s * rq; }\n",
                      ind, a[1], len, i, a[0]);
            break;
        }
        cg_op_expr(e, sizeof e, x, a);
        if (x->vc == VC_VEC && g->klen && g->klen[i])
            sb_printf(b, "%sfor (int64_t k = 0; k < %d; k++) v%d[k] = %s;\n", ind, g->klen[i], i, e);
        else if (x->vc == VC_VEC)
            sb_printf(b, "%sfor (int64_t k = 0; k < L[%d]; k++) v%d[k] = %s;\n", ind, x->vlen, i, e);
        else
            sb_printf(b, "%sconst double t%d = %s;\n", ind, i, e);
        break;
    case CN_AGG: {
        const CNode *c = &p->n[x->a[0]];
        if (c->vc != VC_VEC) {
            row_elem(g, x->a[0], a[0], sizeof a[0]);
            int acc = op_info[x->op].acc;
            if (acc & AC_SQ) sb_printf(b, "%sconst double t%d = %s * %s;\n", ind, i, a[0], a[0]);
            else if (acc & AC_IDX) sb_printf(b, "%sconst double t%d = 1;\n", ind, i);
            else sb_printf(b, "%sconst double t%d = %s;\n", ind, i, a[0]);
            break;
        }
        /* the vector primitive of ops.def's cgen column (over a sparse
         * main row: its non-zeros, sparse-safe sums only, cplan.c) */
        const char *f = op_info[x->op].cgen;
        if (g->sp && is_main(p, x->a[0])) {
            sb_printf(b, "%sconst double t%d = %s_sp(av, anz);\n", ind, i, f);
            break;
        }
        vec_ref(g, x->a[0], ptr, sizeof ptr, len, sizeof len);
        /* a boolean vector's sum (or sum of squares: the same values)
         * is exact: plain adds, the same bits as the Kahan steps */
        if (bool_node(p, x->a[0]) && (op_info[x->op].acc & (AC_SUM | AC_IDX | AC_COMB)) == AC_SUM)
            f = "cg_vsum_exact";
        if (op_info[x->op].acc & AC_MEAN)
            sb_printf(b, "%sconst double t%d = %s(%s, %s) / (double)%s;\n", ind, i, f, ptr, len, len);
        else sb_printf(b, "%sconst double t%d = %s(%s, %s);\n", ind, i, f, ptr, len);
        break;
    }
    case CN_SLICE:
        /* columns L[vlen + 1] .. of the child row (exec.c checked the
         * bounds); a copy, so that consumers see an ordinary vector */
        vec_ref(g, x->a[0], ptr, sizeof ptr, len, sizeof len);
        if (x->vc == VC_CELL)
            sb_printf(b, "%sconst double t%d = %s[L[%d]];\n", ind, i, ptr, x->vlen + 1);
        else if (g->klen && g->klen[i])
            sb_printf(b, "%sfor (int64_t k = 0; k < %d; k++) v%d[k] = %s[k + L[%d]];\n", ind, g->klen[i], i, ptr,
                      x->vlen + 1);
        else
            sb_printf(b, "%sfor (int64_t k = 0; k < L[%d]; k++) v%d[k] = %s[k + L[%d]];\n", ind, x->vlen, i, ptr,
                      x->vlen + 1);
        break;
    case CN_MM: {
        if (g->sp) { emit_row_mm_sp(g, i, ind); break; }
        int bi = p->n[x->a[1]].in;
        bool sp = g->sp && is_main(p, x->a[0]);
        if (g->blk && cplan_row_kwidth(p, i)) {
            /* computed for the whole block by cg_bvm */
            sb_printf(b, "%sconst double *restrict v%d = bq%d + (i - i0) * CG_KP(%d);\n", ind, i, i,
                      cplan_row_kwidth(p, i));
            break;
        }
        vec_ref(g, x->a[0], ptr, sizeof ptr, len, sizeof len);
        char off[160];
        if (!sp && pq_index(g, i, off, sizeof off) >= 0) {
            /* the skeleton's product of the row (P[nin]), if given */
            if (g->cq && x->vc == VC_CELL)
                sb_printf(b, "%sconst double t%d = pq[(i - r0) * pqw + %s];\n", ind, i, off);
            else if (g->cq)
                sb_printf(b, "%sfor (int64_t k = 0; k < L[%d]; k++) v%d[k] = pq[(i - r0) * pqw + %s + k];\n", ind, bi, i,
                          off);
            else if (x->vc == VC_CELL)
                sb_printf(b, "%sconst double t%d = pq ? pq[(i - r0) * pqw + %s] : cg_dot(%s, P[%d], %s);\n", ind, i,
                          off, ptr, bi, len);
            else
                sb_printf(b, "%sif (pq) { for (int64_t k = 0; k < L[%d]; k++) v%d[k] = pq[(i - r0) * pqw + %s + k]; }\n"
                             "%selse cg_vecmat_t(%s, %s, P[%d], L[%d], v%d);\n", ind, bi, i, off, ind, ptr, len, bi, bi, i);
            break;
        }
        /* side matrices arrive transposed (c x n): dot products */
        if (x->vc == VC_CELL) {
            if (sp) sb_printf(b, "%sconst double t%d = cg_dot_sp(av, ai, anz, P[%d]);\n", ind, i, bi);
            else sb_printf(b, "%sconst double t%d = cg_dot(%s, P[%d], %s);\n", ind, i, ptr, bi, len);
        } else {
            if (sp) sb_printf(b, "%scg_vecmat_sp_t(av, ai, anz, P[%d], %s, L[%d], v%d);\n", ind, bi, len, bi, i);
            else sb_printf(b, "%scg_vecmat_t(%s, %s, P[%d], L[%d], v%d);\n", ind, ptr, len, bi, bi, i);
        }
        break;
    }
    default:
        break;
    }
}

/* Is output t of a Row plan a one-column update of the main row,
 * t(X) %*% q with q a scalar per row, that the dense main loop buffers
 * (g->rb): the rows' pointers (into X, stable) and q values of up to 4
 * rows in rba<t>, rbq<t>, then one pass over the partial for the 4
 * (cg_outer_add_rows): the partial is read and written once per 4 rows,
 * not per row (wide rows ran the per-row update at ~20 GB/s a thread,
 * flat in the width, while dgemv and k_mmchain sped up with it). The
 * same additions in the same order: the same bits as per row. */
static bool row_buffered(const Gen *g, int t)
{
    const CPlan *p = g->p;
    if (!g->rb || g->sp || g->blk || g->cq || cplan_row_ovar(p, t) != V_COL_T_AGG) return false;
    const CNode *x = &p->n[p->out[t]];
    return p->n[x->a[0]].vc == VC_VEC && is_main(p, x->a[0]) && p->n[x->a[1]].vc != VC_VEC;
}

/* Declares (decl) or flushes after the main loop the buffers of the
 * outputs row_buffered takes. */
static void emit_row_buffers(const Gen *g, bool decl)
{
    const CPlan *p = g->p;
    for (int t = 0; t < p->nout; t++) {
        if (!row_buffered(g, t)) continue;
        if (decl)
            sb_printf(g->b,
                      "    const double *rba%d[CG_RB_NARROW];\n    double rbq%d[CG_RB_NARROW];\n    int rbn%d = 0;\n"
                      "    const int rbk%d = CG_RB_ROWS(L[%d]);\n",
                      t, t, t, t, p->main);
        else if (p->var == V_MULTI)
            sb_printf(g->b, "    if (rbn%d) cg_outer_add_rows(rba%d, rbq%d, rbn%d, L[%d], o%d);\n", t, t, t, t, p->main, t);
        else
            sb_printf(g->b, "    if (rbn%d) cg_outer_add_rows(rba%d, rbq%d, rbn%d, L[%d], out);\n", t, t, t, t, p->main);
    }
}

/* The root of a Row plan: output row, or accumulation into the partial. */
static void emit_row_out(const Gen *g, int t, const char *out, const char *ind, const char *orow)
{
    const CPlan *p = g->p;
    StrBuf *b = g->b;
    int r = p->out[t];
    const CNode *x = &p->n[r];
    char ptr[32], len[32], e[48];
    Variant var = cplan_row_ovar(p, t);
    switch (var) {
    case V_NO_AGG:
        vec_ref(g, r, ptr, sizeof ptr, len, sizeof len);
        sb_printf(b, "%s{ double *restrict o = %s; for (int64_t k = 0; k < %s; k++) o[k] = %s[k]; }\n", ind, orow,
                  len, ptr);
        break;
    case V_ROW_AGG:
        row_elem(g, r, e, sizeof e);
        sb_printf(b, "%s%s[0] = %s;\n", ind, orow, e);
        break;
    case V_COL_AGG: case V_FULL_AGG: {
        const CNode *c = &p->n[x->a[0]];
        char acc[64];
        bool col = var == V_COL_AGG;
        const char *o = col ? "k" : "0", *st = acc_step(x->op);
        if (st) snprintf(acc, sizeof acc, "%s[%s] = cg_%sstep(%s[%s], xv)", out, o, st, out, o);
        else snprintf(acc, sizeof acc, "cg_kadd(&%s[%s], &%s[%s], %s)", out, o, out, col ? "nc + k" : "1",
                      acc_sq(x->op) ? "xv * xv" : "xv");
        if (c->vc == VC_VEC) {
            vec_ref(g, x->a[0], ptr, sizeof ptr, len, sizeof len);
            sb_printf(b, "%s{ const int64_t nc = %s; (void)nc; for (int64_t k = 0; k < nc; k++) { const double xv = %s[k]; %s; } }\n",
                      ind, len, ptr, acc);
        } else {
            row_elem(g, x->a[0], e, sizeof e);
            sb_printf(b, "%s{ const int64_t nc = 1, k = 0; (void)nc; (void)k; const double xv = %s; %s; }\n", ind, e, acc);
        }
        break;
    }
    case V_COL_T_AGG: {
        if (g->sp) { emit_row_tagg_sp(g, r, out, ind); break; }
        const CNode *A = &p->n[x->a[0]];
        char toff[256];
        int qn = -1;
        bool tqr = tq_index(g, r, &qn, toff, sizeof toff) >= 0;
        if (tqr) {
            /* q's row to the skeleton (P[nin + 1]), if it takes it */
            const char *cond = g->cq ? "" : "if (tq) ";
            if (p->n[qn].vc == VC_VEC) {
                vec_ref(g, qn, ptr, sizeof ptr, len, sizeof len);
                sb_printf(b, "%s%s{ double *restrict d = tq + (i - r0) * tqw + %s; for (int64_t k = 0; k < %s; k++) d[k] = %s[k]; }\n",
                          ind, cond, toff, len, ptr);
            } else {
                row_elem(g, qn, e, sizeof e);
                sb_printf(b, "%s%stq[(i - r0) * tqw + %s] = %s;\n", ind, cond, toff, e);
            }
            if (g->cq) break;
            sb_printf(b, "%selse {\n", ind);
        }
        char bp[48], bl[32];
        vec_or_scalar_ref(g, x->a[1], ind, bp, sizeof bp, bl, sizeof bl);
        /* the partial is accumulated transposed (ncol(B) x ncol(A)) */
        if (A->vc == VC_VEC) {
            vec_ref(g, x->a[0], ptr, sizeof ptr, len, sizeof len);
            if (g->sp && is_main(p, x->a[0]))
                sb_printf(b, "%scg_outer_add_sp_t(av, ai, anz, %s, %s, %s, %s);\n", ind, bp, bl, len, out);
            else if (row_buffered(g, t))
                sb_printf(b, "%srba%d[rbn%d] = %s; rbq%d[rbn%d] = (%s)[0];\n"
                             "%sif (++rbn%d == rbk%d) { cg_outer_add_rows(rba%d, rbq%d, rbk%d, %s, %s); rbn%d = 0; }\n",
                          ind, t, t, ptr, t, t, bp, ind, t, t, t, t, t, len, out, t);
            else
                sb_printf(b, "%scg_outer_add_t(%s, %s, %s, %s, %s);\n", ind, ptr, len, bp, bl, out);
        } else {
            row_elem(g, x->a[0], e, sizeof e);
            sb_printf(b, "%scg_axpy(%s, %s, %s, %s);\n", ind, e, bp, bl, out);
        }
        if (tqr) sb_printf(b, "%s}\n", ind);
        break;
    }
    default:
        break;
    }
}

/* Is node i a t(.) %*% (.) root the blocked loop accumulates per block
 * (cg_bouter into bacc<i>): a single COL_T_AGG output over the main, or
 * a COL_T_AGG output of a multi-output plan? */
static bool blk_root(const CPlan *p, int i)
{
    return p->n[i].kind == CN_MMTL && cplan_row_kwidth(p, i);
}

/* The roots of a Row plan: one output (into out), or the aggregates of a
 * multi-output plan, each into its partial o<t> (emit_multi_outs). */
static void emit_row_root(const Gen *g, const char *ind, const char *orow)
{
    const CPlan *p = g->p;
    if (p->var != V_MULTI) { emit_row_out(g, 0, "out", ind, orow); return; }
    for (int t = 0; t < p->nout; t++) {
        if (g->blk && blk_root(p, p->out[t])) continue;   /* per block: emit_row_blocked */
        if (g->blk && g->lane[t]) continue;                /* per lane: emit_row_soa */
        char o[16];
        snprintf(o, sizeof o, "o%d", t);
        emit_row_out(g, t, o, ind, orow);
    }
}

/* Length expression of Row node n's row (1 for a scalar). */
static void row_len_expr(const Gen *g, int n, char *len, size_t ll)
{
    char ptr[32];
    if (g->p->n[n].vc == VC_VEC) vec_ref(g, n, ptr, sizeof ptr, len, ll);
    else snprintf(len, ll, "1");
}

/* A multi-output Row plan's partials, one after the other in the order
 * of its outputs (kernels/spoof.h: COL_AGG 2 ncol, FULL_AGG 2,
 * COL_T_AGG the product's cells). */
static void emit_multi_outs(const Gen *g)
{
    const CPlan *p = g->p;
    if (p->var != V_MULTI) return;
    sb_puts(g->b, "    int64_t oo = 0;\n");
    for (int t = 0; t < p->nout; t++) {
        const CNode *x = &p->n[p->out[t]];
        char la[32], lb[32];
        row_len_expr(g, x->a[0], la, sizeof la);
        sb_printf(g->b, "    double *restrict o%d = out + oo; ", t);
        switch (cplan_row_ovar(p, t)) {
        case V_COL_AGG: sb_printf(g->b, "oo += 2 * %s;\n", la); break;
        case V_FULL_AGG: sb_puts(g->b, "oo += 2;\n"); break;
        default:
            row_len_expr(g, x->a[1], lb, sizeof lb);
            sb_printf(g->b, "oo += %s * %s;\n", la, lb);
            break;
        }
    }
    sb_puts(g->b, "    (void)oo;\n");
}

/* Is node i an output its plan aggregates over rows (the generated code
 * accumulates it into the partial, never forms it as a value)? */
bool cg_row_agg_root(const CPlan *p, int i)
{
    for (int t = 0; t < p->nout; t++) {
        Variant v = cplan_row_ovar(p, t);
        if (p->out[t] == i && (v == V_COL_AGG || v == V_FULL_AGG || v == V_COL_T_AGG)) return true;
    }
    return false;
}

/* Is node i an output that is not a row vector (no temporary row)? */
bool cg_row_no_temp(const CPlan *p, int i)
{
    for (int t = 0; t < p->nout; t++) if (p->out[t] == i && cplan_row_ovar(p, t) != V_NO_AGG) return true;
    return false;
}

/* Declarations of the row temporaries (offsets into tmp). */
static void emit_row_temps(const Gen *g, bool densify)
{
    const CPlan *p = g->p;
    sb_puts(g->b, "    int64_t off = 0;\n");
    for (int i = 0; i < p->nn; i++) {
        const CNode *x = &p->n[i];
        if (x->kind == CN_IN || x->vc != VC_VEC) continue;
        if (cg_row_no_temp(p, i)) continue;
        sb_printf(g->b, "    double *restrict v%d = tmp + off; off += L[%d];\n", i, x->vlen);
    }
    if (densify) sb_printf(g->b, "    double *restrict a = tmp + off; off += L[%d];\n", p->main);
    sb_puts(g->b, "    (void)off;\n");
}

static void emit_row_body(const Gen *g, const char *ind)
{
    const CPlan *p = g->p;
    for (int i = 0; i < p->nn; i++) {
        if (p->n[i].kind == CN_IN) continue;
        if (cg_row_agg_root(p, i)) continue;
        emit_row_node(g, i, ind);
    }
}

/* Largest main row length of the blocked path (its buffers hold n x 16). */
#define BLK_MAXN 4096

/* The input whose run-time length the blocked loop of node i checks. */
static int blk_width_input(const CPlan *p, int i)
{
    return blk_root(p, i) ? p->n[cplan_row_tvec(p, i)].vlen : p->n[p->n[i].a[1]].in;
}

/* Blocked Row path: buffers after the row temporaries (cg_tmp and the
 * dense loop agree on the layout): per specialized product its padded
 * side matrix and the block's results, then per blocked root the
 * block's vectors and its private accumulator. They start on a 64-byte
 * line (tmp is 64-byte aligned, spoof_row.c run_rows) and their sizes
 * are whole lines under AVX-512, so the kernels' vector loads never
 * split a line (tmp 16 bytes off a line: MLogreg's K = 4 pass 4.5 ->
 * 8.4 ms on the Zen 5). */
static void emit_blk_buffers(const Gen *g, bool decl)
{
    const CPlan *p = g->p;
    StrBuf *b = g->b;
    int m = p->main;
    sb_puts(b, "        off = (off + 7) / 8 * 8;\n");
    for (int i = 0; i < p->nn; i++) {
        int k = cplan_row_kwidth(p, i);
        if (!k || blk_root(p, i)) continue;
        if (decl)
            sb_printf(b, "        double *restrict bv%d = tmp + off; off += CG_BVSZ(L[%d], %d);\n"
                         "        double *restrict bq%d = tmp + off; off += CG_RB * CG_KP(%d);\n", i, m, k, i, k);
        else sb_printf(b, "        off += CG_BVSZ(L[%d], %d) + CG_RB * CG_KP(%d);\n", m, k, k);
    }
    for (int i = 0; i < p->nn; i++) {
        int kb = cplan_row_kwidth(p, i);
        if (!kb || !blk_root(p, i)) continue;
        if (decl)
            sb_printf(b, "        double *restrict bqo%d = tmp + off; off += CG_RB * CG_KP(%d);\n"
                         "        double *restrict bacc%d = tmp + off; off += CG_BVSZ(L[%d], %d);\n", i, kb, i, m, kb);
        else sb_printf(b, "        off += CG_RB * CG_KP(%d) + CG_BVSZ(L[%d], %d);\n", kb, m, kb);
    }
}

static bool body_node(const CPlan *p, int i)
{
    if (p->n[i].kind == CN_IN) return false;
    return !cg_row_agg_root(p, i);
}

static bool narrow_agg(const CPlan *p, const int *klen, int i)
{
    const CNode *x = &p->n[i];
    return x->kind == CN_AGG && x->dir == DIR_ROW && body_node(p, i) && p->n[x->a[0]].vc == VC_VEC &&
           klen[x->a[0]] > 0 &&
           acc_step(x->op) != NULL;
}

/* Blocked Row loop: the row aggregates (min, max, index of min/max) over
 * vectors of a specialized product's width that can be computed for the
 * whole block of rows at once, one row per SIMD lane: by node, 1 if
 * deferred (malloc, caller frees), NULL if none. The row body splits at
 * the first deferred aggregate: nodes before it run per row and store the
 * aggregated vectors by columns of the block; nodes after it may use only
 * inputs, deferred aggregates and nodes after it. */
static char *row_deferred(const CPlan *p, const int *klen)
{
    char *def = calloc((size_t)p->nn + 1, 1);
    if (!def) return NULL;
    int split = -1;
    for (int i = 0; i < p->nn; i++) if (narrow_agg(p, klen, i)) { def[i] = 1; if (split < 0) split = i; }
    /* a deferred aggregate must read a vector of the first part */
    for (bool chg = true; chg && split >= 0;) {
        chg = false;
        for (int i = 0; i < p->nn; i++)
            if (def[i] && p->n[i].a[0] > split) { def[i] = 0; chg = true; }
        split = -1;
        for (int i = 0; i < p->nn && split < 0; i++) if (def[i]) split = i;
    }
    bool ok = split >= 0;
    for (int i = split + 1; ok && i < p->nn; i++) {
        if (!body_node(p, i) && !cg_row_agg_root(p, i)) continue;
        if (def[i]) continue;
        const CNode *x = &p->n[i];
        for (int k = 0; k < x->na; k++) {
            int c = x->a[k];
            if (!(p->n[c].kind == CN_IN || def[c] || c > split)) ok = false;
        }
    }
    if (!ok) { free(def); return NULL; }
    return def;
}

/* The row body of a block with deferred aggregates (row_deferred): the
 * first part per row, the aggregates over the block, the rest per row
 * (the caller emits the root after it, inside the second loop). */
static void emit_row_deferred(const Gen *g, const char *def)
{
    const CPlan *p = g->p;
    StrBuf *b = g->b;
    const char *ind = "                ";
    int split = 0;
    while (!def[split]) split++;
    for (int i = 0; i < split; i++) if (body_node(p, i)) emit_row_node(g, i, ind);
    for (int i = 0; i < p->nn; i++) {
        if (!def[i]) continue;
        char ptr[32], len[32];
        int c = p->n[i].a[0];
        vec_ref(g, c, ptr, sizeof ptr, len, sizeof len);
        sb_printf(b, "%sfor (int k = 0; k < %d; k++) bd%d[k * CG_RB + (i - i0)] = %s[k];\n", ind, g->klen[c], i, ptr);
    }
    sb_puts(b, "            }\n");
    for (int i = 0; i < p->nn; i++) {
        if (!def[i]) continue;
        int acc = op_info[p->n[i].op].acc;
        int K = g->klen[p->n[i].a[0]];
        int code = ((acc & AC_COMB) == AC_MAX) + ((acc & AC_IDX) ? 2 : 0);   /* cg_bagg's min, max, idxmin, idxmax */
        sb_printf(b, "            cg_bagg(bd%d, %d, %d, ta%d);\n", i, K, code, i);
    }
    sb_puts(b, "            for (int64_t i = i0; i < i0 + CG_RB; i++) {\n");
    emit_row_inputs(g, ind, MAIN_A);
    sb_puts(b, "                (void)a;\n");
    for (int i = 0; i < p->nn; i++) if (def[i]) sb_printf(b, "%sconst double t%d = ta%d[i - i0];\n", ind, i, i);
    for (int i = split + 1; i < p->nn; i++) if (body_node(p, i) && !def[i]) emit_row_node(g, i, ind);
}

/* The row body of a block by columns (emit_row_soa): is every body
 * node a scalar per row or a vector of a specialized product's width
 * (klen), computed from such nodes, the block's products, side inputs
 * and scalars, with row aggregates only of the kinds emit_soa_node
 * folds? Then the body runs over the block's rows as one SIMD loop. */
static bool row_soa(const CPlan *p, const int *klen)
{
    for (int i = 0; i < p->nn; i++) {
        const CNode *x = &p->n[i];
        if (!body_node(p, i)) continue;
        if (x->kind == CN_MM) {
            if (!cplan_row_kwidth(p, i)) return false;
            continue;
        }
        if (x->vc == VC_VEC && !klen[i]) return false;
        if (x->kind == CN_AGG) {
            const CNode *c = &p->n[x->a[0]];
            if (c->vc == VC_VEC && (c->kind == CN_IN || !klen[x->a[0]] || !op_info[x->op].cgen)) return false;
            if (x->dir != DIR_ROW && c->vc == VC_VEC) return false;
        } else if (x->kind != CN_UN && x->kind != CN_BIN && x->kind != CN_TER) {
            return false;
        }
        for (int k = 0; k < x->na; k++) {
            const CNode *c = &p->n[x->a[k]];
            if (c->kind == CN_IN && c->in == p->main) return false;
            if (c->kind != CN_IN && c->vc == VC_VEC && !klen[x->a[k]]) return false;
        }
    }
    return true;
}

/* Node i of the SIMD loop over the block's rows r (emit_row_soa): a
 * vector into w<i>[0..K)[r], a scalar as t<i>; a row aggregate folds its
 * K values in the order of its vector primitive (prims.c: cg_vsum,
 * cg_vsumsq, cg_vmin, cg_vmax, cg_vidxmin, cg_vidxmax), so every row gets
 * the bits of the per-row loop. */
static void emit_soa_node(const Gen *g, int i, const char *ind)
{
    const CPlan *p = g->p;
    StrBuf *b = g->b;
    const CNode *x = &p->n[i];
    char e[512], a[3][48];
    if (x->kind == CN_MM) return;   /* the block's product bq<i> */
    if (x->kind == CN_AGG && p->n[x->a[0]].vc == VC_VEC) {
        int acc = op_info[x->op].acc, K = g->klen[x->a[0]];
        row_elem(g, x->a[0], a[0], sizeof a[0]);
        sb_printf(b, "%sdouble t%d;\n%s{\n", ind, i, ind);
        if (acc & AC_IDX) {
            bool mx = (acc & AC_COMB) == AC_MAX;
            sb_printf(b, "%s    double s = %s; int64_t ix = 0;\n"
                         "#pragma GCC unroll 16\n"
                         "%s    for (int64_t k = 0; k < %d; k++) { const int u = %s %s s; s = u ? %s : s; ix = u ? k : ix; }\n"
                         "%s    t%d = (double)(ix + 1);\n",
                      ind, mx ? "-INFINITY" : "INFINITY", ind, K, a[0], mx ? ">=" : "<=", a[0], ind, i);
        } else if (acc_step(x->op)) {
            sb_printf(b, "%s    double s = %s;\n"
                         "#pragma GCC unroll 16\n"
                         "%s    for (int64_t k = 0; k < %d; k++) s = cg_%sstep(s, %s);\n%s    t%d = s;\n",
                      ind, acc_init(x->op), ind, K, acc_step(x->op), a[0], ind, i);
        } else if (bool_node(p, x->a[0])) {   /* exact: plain adds (bool_node) */
            sb_printf(b, "%s    double s = 0;\n"
                         "#pragma GCC unroll 16\n"
                         "%s    for (int64_t k = 0; k < %d; k++) s += %s;\n"
                         "%s    t%d = s;\n",
                      ind, ind, K, a[0], ind, i);
            if (acc & AC_MEAN) sb_printf(b, "%s    t%d = t%d / (double)%d;\n", ind, i, i, K);
        } else {
            sb_printf(b, "%s    double s = 0, c = 0;\n"
                         "#pragma GCC unroll 16\n"
                         "%s    for (int64_t k = 0; k < %d; k++) { const double q = %s; cg_kadd(&s, &c, %s); }\n"
                         "%s    t%d = s + c;\n",
                      ind, ind, K, a[0], acc_sq(x->op) ? "q * q" : "q", ind, i);
            if (acc & AC_MEAN) sb_printf(b, "%s    t%d = t%d / (double)%d;\n", ind, i, i, K);
        }
        sb_printf(b, "%s}\n", ind);
        return;
    }
    if (x->kind == CN_AGG) { emit_row_node(g, i, ind); return; }
    for (int k = 0; k < x->na; k++) row_elem(g, x->a[k], a[k], sizeof a[k]);
    if (bool_div(p, i)) {
        sb_printf(b, "%sconst double rq%d = 1.0 / %s;\n#pragma GCC unroll 16\n"
                     "%sfor (int64_t k = 0; k < %d; k++) w%d[k][r] = %s * rq%d;\n",
                  ind, i, a[1], ind, g->klen[i], i, a[0], i);
        return;
    }
    cg_op_expr(e, sizeof e, x, a);
    if (x->vc == VC_VEC)
        sb_printf(b, "#pragma GCC unroll 16\n%sfor (int64_t k = 0; k < %d; k++) w%d[k][r] = %s;\n", ind, g->klen[i], i, e);
    else
        sb_printf(b, "%sconst double t%d = %s;\n", ind, i, e);
}

/* Is body node c an output (a row written or a row aggregate) or an
 * operand of an output, so the per-row loop after the SIMD loop needs
 * it? (A blocked t(.) %*% (.) root reads its vector by columns, from
 * w<c> or bq<c>: blk_soa_src.) */
static bool soa_used(const Gen *g, int c)
{
    const CPlan *p = g->p;
    for (int t = 0; t < p->nout; t++) if (p->out[t] == c && !blk_root(p, c)) return true;
    for (int i = 0; i < p->nn; i++) {
        if (body_node(p, i) || p->n[i].kind == CN_IN || blk_root(p, i)) continue;
        bool lane = false;
        for (int t = 0; t < p->nout; t++) lane |= p->var == V_MULTI && p->out[t] == i && g->lane[t];
        if (lane) continue;
        for (int k = 0; k < p->n[i].na; k++) if (p->n[i].a[k] == c) return true;
    }
    return false;
}

/* Under emit_row_soa: is output t of a multi-output plan a Kahan sum
 * (colSums, sum, of values or squares) of a body node? Then the SIMD loop
 * adds each row's values into per-lane Kahan accumulators (row r of every
 * block into lane r: a fixed order for fixed row ranges, so the partials
 * do not depend on the thread count), merged into the partial in lane
 * order after the blocks: no loop-carried chain of dependent additions
 * per row (with 6 such sums, k-means' step spent a quarter of its time
 * there). */
static bool soa_lane(const Gen *g, int t)
{
    const CPlan *p = g->p;
    if (p->var != V_MULTI) return false;
    Variant var = cplan_row_ovar(p, t);
    const CNode *x = &p->n[p->out[t]];
    if ((var != V_COL_AGG && var != V_FULL_AGG) || x->kind != CN_AGG || acc_step(x->op)) return false;
    int c = x->a[0];
    if (!body_node(p, c)) return false;
    return p->n[c].vc != VC_VEC || (g->klen[c] > 0 && p->n[c].kind != CN_MM);
}

/* Under emit_row_soa: the block's vector of blocked root i by columns
 * (K x CG_RB): the block's product bq<q>, or the SIMD loop's w<q>; false
 * for a side input's rows (copied per row into bqo<i>, by rows). */
static bool blk_soa_src(const Gen *g, int i, char *src, size_t len)
{
    const CPlan *p = g->p;
    int q = cplan_row_tvec(p, i);
    if (q < 0 || !body_node(p, q) || p->n[q].vc != VC_VEC) return false;
    if (p->n[q].kind == CN_MM) snprintf(src, len, "bq%d", q);
    else snprintf(src, len, "&w%d[0][0]", q);
    return true;
}

/* The row body of a block as one SIMD loop over its CG_RB rows, by
 * columns: per vector node w<i>[K][CG_RB], the products read from the
 * block's bq<i>, scalars per row (t<i>, kept in ws<i>[CG_RB] when an
 * output reads them); then the caller's per-row loop takes the outputs in
 * row order from these (emit_soa_reload). One row per SIMD lane: the
 * division, minimum and comparisons of k-means' assignment run 8 rows at
 * once instead of a scalar chain per row, with the same values. */
static void emit_row_soa(Gen *g)
{
    const CPlan *p = g->p;
    StrBuf *b = g->b;
    const char *ind = "                ";
    for (int i = 0; i < p->nn; i++) {
        if (!body_node(p, i) || p->n[i].kind == CN_MM) continue;
        if (p->n[i].vc == VC_VEC)
            sb_printf(b, "            double w%d[%d][CG_RB] __attribute__((aligned(64)));\n", i, g->klen[i]);
        else if (soa_used(g, i))
            sb_printf(b, "            double ws%d[CG_RB] __attribute__((aligned(64)));\n", i);
    }
    sb_puts(b, "            /* soa: the block's row body by columns */\n"
               "#pragma omp simd\n"
               "            for (int64_t r = 0; r < CG_RB; r++) {\n"
               "                const int64_t i = i0 + r;\n");
    emit_row_inputs(g, ind, MAIN_SKIP);
    g->soa = true;
    for (int i = 0; i < p->nn; i++) {
        if (!body_node(p, i)) continue;
        emit_soa_node(g, i, ind);
        if (p->n[i].vc != VC_VEC && soa_used(g, i)) sb_printf(b, "%sws%d[r] = t%d;\n", ind, i, i);
    }
    /* the outputs summed per lane (soa_lane), after their operands */
    for (int t = 0; t < p->nout; t++) {
        if (!g->lane[t]) continue;
        const CNode *x = &p->n[p->out[t]];
        int c = x->a[0];
        const char *sq = acc_sq(x->op) ? " * xv" : "";
        if (p->n[c].vc != VC_VEC)
            sb_printf(b, "%s{ const double xv = t%d; cg_kadd(&ls%d[0][r], &lc%d[0][r], xv%s); }\n", ind, c, t, t, sq);
        else if (cplan_row_ovar(p, t) == V_COL_AGG)
            sb_printf(b, "#pragma GCC unroll 16\n%sfor (int64_t k = 0; k < %d; k++) { const double xv = w%d[k][r]; "
                         "cg_kadd(&ls%d[k][r], &lc%d[k][r], xv%s); }\n", ind, g->klen[c], c, t, t, sq);
        else
            sb_printf(b, "#pragma GCC unroll 16\n%sfor (int64_t k = 0; k < %d; k++) { const double xv = w%d[k][r]; "
                         "cg_kadd(&ls%d[0][r], &lc%d[0][r], xv%s); }\n", ind, g->klen[c], c, t, t, sq);
    }
    g->soa = false;
    sb_puts(b, "                (void)i;\n            }\n");
}

/* In the per-row loop after emit_row_soa: the values the outputs read,
 * under the names the per-row body gives them. */
static void emit_soa_reload(const Gen *g, const char *ind)
{
    const CPlan *p = g->p;
    StrBuf *b = g->b;
    for (int i = 0; i < p->nn; i++) {
        if (!body_node(p, i) || !soa_used(g, i)) continue;
        if (p->n[i].kind == CN_MM)   /* by columns (cg_bvm_c) */
            sb_printf(b, "%sfor (int64_t k = 0; k < %d; k++) v%d[k] = bq%d[k * CG_RB + (i - i0)];\n", ind,
                      cplan_row_kwidth(p, i), i, i);
        else if (p->n[i].vc == VC_VEC)
            sb_printf(b, "%sfor (int64_t k = 0; k < %d; k++) v%d[k] = w%d[k][i - i0];\n", ind, g->klen[i], i, i);
        else
            sb_printf(b, "%sconst double t%d = ws%d[i - i0];\n", ind, i, i);
    }
}

/* The dense Row loop over blocks of CG_RB rows (rows i0.. ; the per-row
 * loop takes the rest): vector-matrix products of the main rows with
 * small side matrices for the whole block (cg_bvm), the row body per
 * row, and for t(main) %*% B roots the block's rank update of a private
 * n x K accumulator (cg_bouter), added to the transposed partial at the
 * end. Taken when the call has at least two blocks and the run-time
 * widths are the compiled ones. */
static void emit_row_blocked(Gen *g)
{
    const CPlan *p = g->p;
    StrBuf *b = g->b;
    int m = p->main, nroot = 0;
    sb_printf(b, "    if (r1 - r0 >= 2 * CG_RB && L[%d] <= %d", m, BLK_MAXN);
    for (int i = 0; i < p->nn; i++) {
        int k = cplan_row_kwidth(p, i);
        if (!k) continue;
        nroot += blk_root(p, i);
        int w = blk_width_input(p, i);
        bool seen = false;    /* one test per input */
        for (int i2 = 0; i2 < i; i2++) seen |= cplan_row_kwidth(p, i2) && blk_width_input(p, i2) == w;
        if (!seen) sb_printf(b, " && L[%d] == %d", w, k);
    }
    sb_puts(b, ") {\n");
    emit_blk_buffers(g, true);
    for (int i = 0; i < p->nn; i++) {
        int k = cplan_row_kwidth(p, i);
        if (k && !blk_root(p, i))
            sb_printf(b, "        cg_bpad(P[%d], L[%d], %d, CG_KP(%d), bv%d);\n", p->n[p->n[i].a[1]].in, m, k, k, i);
    }
    /* each blocked root's vectors: a blocked product's rows, or copies */
    for (int i = 0; i < p->nn; i++) {
        int kb = blk_root(p, i) ? cplan_row_kwidth(p, i) : 0;
        if (kb)
            sb_printf(b, "        memset(bqo%d, 0, (size_t)(CG_RB * CG_KP(%d)) * sizeof(double));\n"
                         "        memset(bacc%d, 0, (size_t)CG_BVSZ(L[%d], %d) * sizeof(double));\n", i, kb, i, m, kb);
    }
    /* row vectors computed from a specialized product have its width
     * (elementwise operands have equal lengths): literal loop bounds, so
     * the short loops over k values unroll */
    int *klen = calloc((size_t)p->nn + 1, sizeof *klen);
    for (int i = 0; klen && i < p->nn; i++) {
        const CNode *x = &p->n[i];
        if (x->kind == CN_MM && !blk_root(p, i)) klen[i] = cplan_row_kwidth(p, i);
        else if ((x->kind == CN_UN || x->kind == CN_BIN || x->kind == CN_TER) && x->vc == VC_VEC)
            for (int k = 0; k < x->na; k++)
                if (p->n[x->a[k]].vc == VC_VEC && klen[x->a[k]]) klen[i] = klen[x->a[k]];
    }
    char *def = nroot || !klen ? NULL : row_deferred(p, klen);
    /* by columns (emit_row_soa): the block's products too (K x CG_RB,
     * cg_bvm_c), read along the rows by the SIMD loop */
    bool soa = !def && klen && row_soa(p, klen);
    g->klen = klen;
    for (int t = 0; t < p->nout; t++) {
        g->lane[t] = soa && soa_lane(g, t);
        if (!g->lane[t]) continue;
        int c = p->n[p->out[t]].a[0], w = p->n[c].vc == VC_VEC && cplan_row_ovar(p, t) == V_COL_AGG ? klen[c] : 1;
        sb_printf(b, "        double ls%d[%d][CG_RB] __attribute__((aligned(64))) = {{0}};\n"
                     "        double lc%d[%d][CG_RB] __attribute__((aligned(64))) = {{0}};\n", t, w, t, w);
    }
    sb_printf(b, "        for (; i0 + CG_RB <= r1; i0 += CG_RB) {\n"
                 "            const double *restrict ab = P[%d] + i0 * S[%d];\n", m, m);
    for (int i = 0; i < p->nn; i++) {
        int k = cplan_row_kwidth(p, i);
        if (!k || blk_root(p, i)) continue;
        char off[160];
        const char *c = soa ? "_c" : "";
        if (pq_index(g, i, off, sizeof off) >= 0)
            sb_printf(b, "            if (pq) cg_bqload%s(pq + (i0 - r0) * pqw + %s, pqw, %d, bq%d);\n"
                         "            else cg_bvm%s(ab, S[%d], L[%d], bv%d, %d, bq%d);\n", c, off, k, i, c, m, m, i, k, i);
        else sb_printf(b, "            cg_bvm%s(ab, S[%d], L[%d], bv%d, %d, bq%d);\n", c, m, m, i, k, i);
    }
    /* deferred block aggregates: per block, the aggregated vectors by
     * columns and the results (stack arrays of literal sizes) */
    for (int i = 0; def && i < p->nn; i++)
        if (def[i]) sb_printf(b, "            double bd%d[CG_RB * %d], ta%d[CG_RB];\n", i, klen[p->n[i].a[0]], i);
    g->blk = true;
    if (soa) emit_row_soa(g);
    sb_puts(b, "            for (int64_t i = i0; i < i0 + CG_RB; i++) {\n");
    emit_row_inputs(g, "                ", MAIN_A);
    if (def) emit_row_deferred(g, def);
    else if (soa) emit_soa_reload(g, "                ");
    else emit_row_body(g, "                ");
    free(def);
    for (int i = 0; i < p->nn; i++) {
        int kb = blk_root(p, i) ? cplan_row_kwidth(p, i) : 0, q = kb ? cplan_row_tvec(p, i) : -1;
        char src[32];
        if (!kb || cplan_row_kwidth(p, q) == kb) continue;   /* a blocked product: read in place */
        if (soa && blk_soa_src(g, i, src, sizeof src)) continue;   /* read by columns */
        char ptr[32], len[32];
        vec_ref(g, q, ptr, sizeof ptr, len, sizeof len);
        sb_printf(b, "                { double *restrict d = bqo%d + (i - i0) * CG_KP(%d); "
                     "for (int l = 0; l < %d; l++) d[l] = %s[l]; }\n", i, kb, kb, ptr);
    }
    /* the other roots per row (emit_row_root skips the blocked ones) */
    if (!nroot || p->var == V_MULTI)
        emit_row_root(g, "                ", p->var == V_NO_AGG || p->var == V_ROW_AGG ? "(out + (i - r0) * ldo)" : "out");
    sb_puts(b, "                (void)a;\n");
    sb_puts(b, "            }\n");
    for (int i = 0; i < p->nn; i++) {
        int kb = blk_root(p, i) ? cplan_row_kwidth(p, i) : 0, q = kb ? cplan_row_tvec(p, i) : -1;
        if (!kb) continue;
        char src[32], toff[256];
        int qn = -1;
        /* by columns under emit_row_soa (bq<q> or w<q>), else by rows */
        const char *c = soa && blk_soa_src(g, i, src, sizeof src) ? "_c" : "";
        if (!*c && cplan_row_kwidth(p, q) == kb) snprintf(src, sizeof src, "bq%d", q);
        else if (!*c) snprintf(src, sizeof src, "bqo%d", i);
        /* the block's q rows to the skeleton (P[nin + 1]), if it takes them */
        if (tq_index(g, i, &qn, toff, sizeof toff) >= 0)
            sb_printf(b, "            if (tq) cg_bqstore%s(%s, %d, tq + (i0 - r0) * tqw + %s, tqw);\n            else ", c, src,
                      kb, toff);
        else sb_puts(b, "            ");
        sb_printf(b, "cg_bouter%s(ab, S[%d], L[%d], %s, %d, bacc%d);\n", c, m, m, src, kb, i);
    }
    g->blk = false;
    sb_puts(b, "        }\n");
    /* the lanes into the partials, in lane order (soa_lane) */
    for (int t = 0; t < p->nout; t++) {
        if (!g->lane[t]) continue;
        int c = p->n[p->out[t]].a[0], w = p->n[c].vc == VC_VEC && cplan_row_ovar(p, t) == V_COL_AGG ? klen[c] : 1;
        sb_printf(b, "        for (int r = 0; r < CG_RB; r++)\n"
                     "            for (int k = 0; k < %d; k++) {\n"
                     "                cg_kadd(&o%d[k], &o%d[%d + k], ls%d[k][r]);\n"
                     "                cg_kadd(&o%d[k], &o%d[%d + k], lc%d[k][r]);\n"
                     "            }\n", w, t, t, w, t, t, t, w, t);
        g->lane[t] = false;
    }
    g->klen = NULL;
    free(klen);
    /* the accumulators into the partials: transposed (k x n) for
     * t(main) %*% q, n x k for t(q) %*% main (emit_row_out's layouts) */
    for (int i = 0; i < p->nn; i++) {
        int kb = blk_root(p, i) ? cplan_row_kwidth(p, i) : 0;
        if (!kb) continue;
        int t = 0;
        while (p->var == V_MULTI && t < p->nout && p->out[t] != i) t++;
        char o[16];
        snprintf(o, sizeof o, p->var == V_MULTI ? "o%d" : "out", t);
        bool left = p->n[p->n[i].a[0]].kind == CN_IN && p->n[p->n[i].a[0]].in == m;
        sb_printf(b, "        %scg_bflush%s(bacc%d, L[%d], %d, CG_KP(%d), %s);\n", g->ntq ? "if (!tq) " : "", left ? "" : "n", i,
                  m, kb, kb, o);
    }
    sb_puts(b, "    }\n");
}

/* Lagged Row loop (emit_row_lagged): a plan t(main) %*% q whose scalar
 * q per row comes from dot products (or row aggregates) of the main row
 * and a scalar chain with a long latency (a node of cost >= 4 in
 * ops.def: division, square root, exp, log, ...), as in the logistic-
 * regression gradient t(X) %*% (1 / (1 + exp(-(X %*% w))) - y). The
 * per-row loop runs that chain once per row between the row's read and
 * its rank-1 update, so few rows are in flight and the row's compute
 * rivals its read. Phase nodes: 1 = from the main row (per row), 2 =
 * scalar (per block, vectorized across its rows); 0: not lagged. */
static int lag_phase(const CPlan *p, int i)
{
    const CNode *x = &p->n[i];
    if (x->vc == VC_VEC) return 0;
    if ((x->kind == CN_MM || x->kind == CN_AGG) && x->na > 0 && is_main(p, x->a[0])) return 1;
    if (x->kind == CN_UN || x->kind == CN_BIN || x->kind == CN_TER) return 2;
    if (x->kind == CN_AGG && p->n[x->a[0]].vc != VC_VEC) return 2;
    return 0;
}

static bool row_lagged(const CPlan *p)
{
    if (p->var != V_COL_T_AGG || p->nout != 1 || cplan_row_blocked(p)) return false;
    int r = p->out[0];
    const CNode *x = &p->n[r];
    if (x->kind != CN_MMTL || !is_main(p, x->a[0]) || p->n[x->a[1]].vc == VC_VEC) return false;
    int cost = 0;
    for (int i = 0; i < p->nn; i++) {
        if (p->n[i].kind == CN_IN || i == r) continue;
        int ph = lag_phase(p, i);
        if (!ph) return false;
        if (ph == 2 && p->n[i].kind != CN_AGG && op_info[p->n[i].op].cost > cost) cost = op_info[p->n[i].op].cost;
    }
    return cost >= 4;
}

/* The dense loop of a lagged plan over blocks of CG_LAG rows: per row
 * of the block its phase-1 values (dot products of the row just read)
 * and the rank-1 update of the block before (its rows still in L1),
 * then the block's scalar chain in one SIMD loop (exp and division over
 * 8 rows at once). Each row's update sees the same values in the same
 * row order as the per-row loop: the same bits. The per-row loop takes
 * the rest of the range. */
#define CG_LAG 16
static void emit_row_lagged(Gen *g)
{
    const CPlan *p = g->p;
    StrBuf *b = g->b;
    int m = p->main, r = p->out[0];
    const char *ind = "            ";
    sb_puts(b, "    {\n");
    for (int i = 0; i < p->nn; i++)
        if (p->n[i].kind != CN_IN && i != r && lag_phase(p, i) == 1) sb_printf(b, "        double lq%d[%d];\n", i, CG_LAG);
    sb_printf(b, "        double lo[%d];\n        int64_t ip = -1;\n"
                 "        for (; i0 + %d <= r1; i0 += %d) {\n"
                 "          for (int64_t r = 0; r < %d; r++) {\n"
                 "            const int64_t i = i0 + r;\n", CG_LAG, CG_LAG, CG_LAG, CG_LAG);
    emit_row_inputs(g, ind, MAIN_A);
    emit_row_prefetch(g, false, ind);
    for (int i = 0; i < p->nn; i++) {
        if (p->n[i].kind == CN_IN || i == r || lag_phase(p, i) != 1) continue;
        emit_row_node(g, i, ind);
        sb_printf(b, "%slq%d[r] = t%d;\n", ind, i, i);
    }
    /* (a lagged plan's one output, t(main) %*% q with a scalar q, is the
     * first q row the skeleton may take: tq + (i - r0) * tqw) */
    const char *tql = g->ntq ? "if (tq) tq[ip + r - r0] = lo[r];\n            else " : "";
    sb_printf(b, "%sif (ip >= 0) {\n            %scg_outer_add_t(P[%d] + (ip + r) * S[%d], L[%d], &lo[r], 1, out);\n%s}\n"
                 "%s(void)a;\n          }\n"
                 "#pragma omp simd\n"
                 "          for (int64_t r = 0; r < %d; r++) {\n"
                 "            const int64_t i = i0 + r;\n", ind, tql, m, m, m, ind, ind, CG_LAG);
    emit_row_inputs(g, ind, MAIN_SKIP);
    for (int i = 0; i < p->nn; i++) {
        if (p->n[i].kind == CN_IN || i == r || !lag_phase(p, i)) continue;
        if (lag_phase(p, i) == 1) sb_printf(b, "%sconst double t%d = lq%d[r];\n", ind, i, i);
        else emit_row_node(g, i, ind);
    }
    char e[48];
    row_elem(g, p->n[r].a[1], e, sizeof e);
    sb_printf(b, "%slo[r] = %s;\n          }\n          ip = i0;\n        }\n"
                 "        if (ip >= 0)\n"
                 "            for (int64_t r = 0; r < %d; r++) {\n            %scg_outer_add_t(P[%d] + (ip + r) * S[%d], L[%d], &lo[r], 1, out);\n            }\n"
                 "    }\n", ind, e, CG_LAG, tql, m, m, m);
}

/* The sparse Row function's literal widths: per vector node (the main
 * row excepted) whose length is a width the plan is specialized on
 * (cplan_row_kwidth, part of its signature: a product of the main row
 * with a side matrix of k columns, the k-vector q of a t(main) %*% q
 * root), k; 0 for the rest. Lengths spread through elementwise nodes,
 * whose vector operands and result have one length (as the blocked
 * dense loop's klen); a slice starts a length of its own. The guard,
 * `L[w] == k` for each specialized width joined by &&, goes to guard;
 * NULL when no node has one. Rows of a few non-zeros spend their time in
 * the body's short loops over k values, which unroll with a literal
 * bound (MLogreg's Hessian-vector product over 1000-column sparse X:
 * 1.8x). */
static int find_len(int *up, int i)
{
    while (up[i] != i) i = up[i] = up[up[i]];
    return i;
}

static int *sparse_klen(const CPlan *p, StrBuf *guard)
{
    int n = p->nn;
    int *klen = calloc((size_t)n + 1, sizeof *klen), *up = malloc(((size_t)n + 1) * sizeof *up);
    int *fix = calloc((size_t)n + 1, sizeof *fix), *gw = malloc(((size_t)n + 1) * sizeof *gw), ngw = 0;
    bool any = false;
    if (!klen || !up || !fix || !gw) goto done;
    for (int i = 0; i < n; i++) up[i] = i;
    for (int i = 0; i < n; i++) {
        const CNode *x = &p->n[i];
        if (x->vc != VC_VEC || (x->kind != CN_UN && x->kind != CN_BIN && x->kind != CN_TER)) continue;
        for (int a = 0; a < x->na; a++)
            if (p->n[x->a[a]].vc == VC_VEC) up[find_len(up, x->a[a])] = find_len(up, i);
    }
    /* the specialized widths: fixed per length class; two widths in one
     * class (not expected) leave it run-time (-1) */
    for (int i = 0; i < n; i++) {
        int k = cplan_row_kwidth(p, i), q = p->n[i].kind == CN_MM ? i : cplan_row_tvec(p, i);
        if (!k || q < 0 || p->n[q].vc != VC_VEC) continue;
        int w = p->n[q].kind == CN_MM ? p->n[p->n[q].a[1]].in : p->n[q].kind == CN_IN ? p->n[q].in : p->n[q].vlen;
        int c = find_len(up, q);
        fix[c] = fix[c] == 0 || fix[c] == k ? k : -1;
        /* one test per length (t(X) %*% (X %*% V): the product and the
         * root's q are one vector) */
        bool seen = false;
        for (int j = 0; j < ngw && !seen; j++) seen = gw[j] == w;
        if (seen) continue;
        gw[ngw++] = w;
        sb_printf(guard, "%sL[%d] == %d", guard->n ? " && " : "", w, k);
    }
    for (int i = 0; i < n; i++) {
        int k = fix[find_len(up, i)];
        if (p->n[i].vc != VC_VEC || is_main(p, i) || k <= 0) continue;
        klen[i] = k;
        any = true;
    }
done:
    free(up);
    free(fix);
    free(gw);
    if (!any) {
        free(klen);
        return NULL;
    }
    return klen;
}

/* The sparse Row function: rows r0 <= i < r1 of the main input's CSR
 * arrays (rp by absolute row), the row body per row over its non-zeros
 * (ai, av, anz); one call per range of rows (kernels/spoof.h). While the
 * run-time widths are the compiled ones (sparse_klen's guard), the rows
 * take a copy of the loop with literal widths. */
static void emit_row_sparse(Gen *g, bool rowout)
{
    StrBuf *b = g->b;
    sb_puts(b, "\nvoid cg_sparse(const double *const *restrict P, const int64_t *restrict S, const int64_t *restrict L,\n"
               "               const double *restrict sc, int64_t r0, int64_t r1, const int64_t *restrict rp,\n"
               "               const int32_t *restrict ci, const double *restrict cv, double *restrict out, int64_t ldo,\n"
               "               double *restrict tmp)\n{\n    (void)ldo; (void)r0;\n");
    emit_scalars(g);
    emit_row_temps(g, false);
    emit_multi_outs(g);
    StrBuf guard = {0};
    int *klen = sparse_klen(g->p, &guard);
    sb_puts(b, "    int64_t i = r0;\n");
    for (int pass = klen ? 0 : 1; pass < 2; pass++) {
        g->klen = pass ? NULL : klen;
        if (!pass) {
            /* the literal-width temporaries as arrays of the block, which
             * GCC keeps in registers: through tmp, a row's k values went
             * to memory as scalars and came back as a vector (a failed
             * store forward per row) */
            sb_printf(b, "    if (%s) {\n", guard.s);
            for (int j = 0; j < g->p->nn; j++) {
                const CNode *x = &g->p->n[j];
                if (x->kind == CN_IN || x->vc != VC_VEC || cg_row_no_temp(g->p, j) || klen[j] <= 0) continue;
                sb_printf(b, "    double v%d[%d];\n", j, klen[j]);
            }
        }
        sb_puts(b, "    for (; i < r1; i++) {\n"
                   "        const int32_t *restrict ai = ci + rp[i];\n"
                   "        const double *restrict av = cv + rp[i];\n"
                   "        const int64_t anz = rp[i + 1] - rp[i];\n"
                   "        (void)ai; (void)av; (void)anz;\n");
        emit_row_inputs(g, "        ", MAIN_SKIP);
        emit_row_body(g, "        ");
        emit_row_root(g, "        ", rowout ? "(out + (i - r0) * ldo)" : "out");
        sb_puts(b, pass ? "    }\n" : "    }\n    }\n");
    }
    g->klen = NULL;
    free(klen);
    free(guard.s);
    sb_puts(b, "}\n");
}

static void gen_row(const CPlan *p, StrBuf *b)
{
    Gen g = {.p = p, .b = b, .ax = AX_CELL};
    bool blocked = cplan_row_blocked(p);
    /* tmp size */
    sb_puts(b, "\nint64_t cg_tmp(const int64_t *restrict L)\n{\n    int64_t off = 0;\n");
    for (int i = 0; i < p->nn; i++) {
        const CNode *x = &p->n[i];
        if (x->kind == CN_IN || x->vc != VC_VEC) continue;
        if (cg_row_no_temp(p, i)) continue;
        sb_printf(b, "    off += L[%d];\n", x->vlen);
    }
    if (blocked) {
        sb_printf(b, "    if (L[%d] <= %d) {\n", p->main, BLK_MAXN);
        emit_blk_buffers(&g, false);
        sb_puts(b, "    }\n");
    }
    sb_puts(b, "    return off;\n}\n");
    bool rowout = p->var == V_NO_AGG || p->var == V_ROW_AGG;
    /* dense rows */
    sb_puts(b, "\nvoid cg_dense(const double *const *restrict P, const int64_t *restrict S, const int64_t *restrict L,\n"
               "              const double *restrict sc, int64_t r0, int64_t r1, double *restrict out, int64_t ldo,\n"
               "              double *restrict tmp)\n{\n    (void)ldo; (void)r0;\n");
    emit_scalars(&g);
    emit_row_temps(&g, false);
    emit_multi_outs(&g);
    sb_puts(b, "    int64_t i0 = r0;\n");
    bool only;
    g.nprod = cplan_row_main_prods(p, g.prod, &only);
    if (g.nprod) {
        sb_printf(b, "    const double *restrict pq = P[%d];\n    const int64_t pqw = 0", p->nin);
        for (int j = 0; j < g.nprod; j++) sb_printf(b, " + L[%d]", p->n[p->n[g.prod[j]].a[1]].in);
        sb_puts(b, ";\n    (void)pq; (void)pqw;\n");
    }
    g.ntq = cplan_row_main_taggs(p, g.tq, g.tq_left);
    if (g.ntq) {
        sb_printf(b, "    double *restrict tq = (double *)P[%d];\n    const int64_t tqw = 0", p->nin + 1);
        for (int j = 0; j < g.ntq; j++) {
            const CNode *x = &p->n[p->out[g.tq[j]]];
            const CNode *v = &p->n[g.tq_left[j] ? x->a[1] : x->a[0]];
            if (v->vc == VC_VEC) sb_printf(b, " + L[%d]", v->vlen);
            else sb_puts(b, " + 1");
        }
        sb_puts(b, ";\n    (void)tq; (void)tqw;\n");
    }
    /* a compressed main input whose products and q rows the skeleton
     * gives (kernels/spoof_row.c cmb_rows: its rows not decompressed): a
     * loop without the row, its branches and prefetches, that the
     * compiler can vectorize (l2svm's step ran its per-row loop at
     * about 9 ns a row beside the Cell operator's flat loop, docs/cla.md) */
    if (only && g.nprod + g.ntq > 0 && !blocked) {
        sb_printf(b, "    if (%s) {\n        for (int64_t i = r0; i < r1; i++) {\n",
                  !g.ntq ? "pq" : !g.nprod ? "tq" : "pq && tq");
        g.cq = true;
        emit_row_inputs(&g, "            ", MAIN_SKIP);
        emit_row_body(&g, "            ");
        emit_row_root(&g, "            ", rowout ? "(out + (i - r0) * ldo)" : "out");
        g.cq = false;
        sb_puts(b, "        }\n        return;\n    }\n");
    }
    if (blocked) emit_row_blocked(&g);
    emit_row_prefetch(&g, true, "    ");
    if (row_lagged(p)) emit_row_lagged(&g);
    g.rb = true;
    emit_row_buffers(&g, true);
    sb_puts(b, "    for (int64_t i = i0; i < r1; i++) {\n");
    emit_row_inputs(&g, "        ", MAIN_A);
    emit_row_prefetch(&g, false, "        ");
    emit_row_body(&g, "        ");
    emit_row_root(&g, "        ", rowout ? "(out + (i - r0) * ldo)" : "out");
    sb_puts(b, "    }\n");
    emit_row_buffers(&g, false);
    g.rb = false;
    sb_puts(b, "}\n");
    /* sparse main rows */
    if (p->main_sparse_ok) {
        g.nprod = 0;
        g.ntq = 0;
        g.sp = true;
        emit_row_sparse(&g, rowout);
    }
}

/* ---- Outer ---- */

/* Indexes of the U and V inputs and of the U %*% t(V) node. */
static void outer_parts(const CPlan *p, int *u, int *v, int *uv)
{
    *u = *v = *uv = -1;
    for (int i = 0; i < p->nn; i++) {
        const CNode *x = &p->n[i];
        if (x->kind != CN_MM) continue;
        const CNode *a = &p->n[x->a[0]];
        if (a->kind != CN_IN || p->in[a->in].mode != IM_MAT) continue;
        const CNode *bb = &p->n[x->a[1]];
        *u = a->in;
        *v = bb->kind == CN_TRANS ? p->n[bb->a[0]].in : bb->in;
        *uv = i;
        return;
    }
}

void cg_outer_inputs(const CPlan *p, int *u, int *v, int *side)
{
    int uv;
    outer_parts(p, u, v, &uv);
    *side = -1;
    const CNode *r = &p->n[p->out[0]];
    if (p->var == V_LEFT_MM) *side = p->n[r->a[1]].in;
    else if (p->var == V_RIGHT_MM) *side = p->n[r->a[1]].in;
    else if (p->var == V_RIGHT_T_MM) *side = p->n[r->a[0]].in;
}

static int outer_cell(const CPlan *p)
{
    const CNode *r = &p->n[p->out[0]];
    switch (p->var) {
    case V_FULL_AGG: case V_LEFT_MM: case V_RIGHT_MM: return r->a[0];
    case V_RIGHT_T_MM: return r->a[1];
    default: return p->out[0];
    }
}

/* The Outer loop over one row's (column's) non-zeros: rank r, and the
 * side matrix's width of the product variants, literals when R and RS
 * are given (0: run-time, L[u] and L[side]). */
static void emit_outer_loop(const CPlan *p, StrBuf *b, int u, int v, int uv, int side, int R, int RS)
{
    bool bycol = p->var == V_RIGHT_MM || p->var == V_RIGHT_T_MM;
    Gen g = {.p = p, .b = b, .ax = bycol ? AX_OCOL : AX_OROW};
    char e[48], sw[24];
    if (R) sb_printf(b, "    const int64_t r = %d;\n", R);
    else sb_printf(b, "    const int64_t r = L[%d];\n", u);
    if (side >= 0 && RS) snprintf(sw, sizeof sw, "%d", RS);
    else snprintf(sw, sizeof sw, "L[%d]", side);
    emit_scalars(&g);
    const char *fix = bycol ? "j" : "i", *var = bycol ? "i" : "j";
    if (!bycol) {
        sb_printf(b, "    const double *restrict ui = P[%d] + i * r;\n", u);
        for (int k = 0; k < p->nin; k++) {
            if (k == p->main) continue;
            if (p->in[k].mode == IM_FULL || p->in[k].mode == IM_ROW)
                sb_printf(b, "    const double *restrict p%d = P[%d] + i * S[%d];\n", k, k, k);
            else if (p->in[k].mode == IM_COL)
                sb_printf(b, "    const double c%d = P[%d][i];\n", k, k);
        }
    } else {
        sb_printf(b, "    const double *restrict vj = P[%d] + j * r;\n", v);
        for (int k = 0; k < p->nin; k++)
            if (p->in[k].mode == IM_ROW) sb_printf(b, "    const double r%d = P[%d][j];\n", k, k);
    }
    sb_puts(b, "    for (int64_t k0 = 0; k0 < nz; k0 += CG_OCH) {\n"
               "        const int64_t kn = nz - k0 < CG_OCH ? nz - k0 : CG_OCH;\n"
               "        double tb[CG_OCH], eb[CG_OCH];\n"
               "        for (int64_t q = 0; q < kn; q++) {\n"
               "            const int64_t k = k0 + q;\n");
    /* the gathered factor (V by rows of W, U by columns) against the fixed row */
    int gat = bycol ? u : v;
    sb_printf(b, "            if (k + CG_OPFD < nz) cg_pfrow(P[%d] + ix[k + CG_OPFD] * r, r);\n"
                 "            tb[q] = cg_dot%s(%s, P[%d] + ix[k] * r, r);\n", gat, R ? "_k" : "", bycol ? "vj" : "ui", gat);
    sb_puts(b, "        }\n");
    /* a literal side width: the chunk's updates of out, row ix[q] of the
     * side matrix times its value, after the chunk's values (eb), with
     * out in registers (cg_axpy_rows_k; the same additions in the same
     * order); per non-zero, out's load-add-store was a store-forwarding
     * chain (ALS-CG's rank-20 updates: most of their time) */
    bool mm = p->var == V_LEFT_MM || p->var == V_RIGHT_MM || p->var == V_RIGHT_T_MM;
    bool chunk_axpy = mm && RS > 0 && RS <= 35;
    bool simd = p->var == V_NO_AGG || p->var == V_FULL_AGG || chunk_axpy;
    if (simd) sb_puts(b, "#pragma omp simd\n");
    sb_printf(b, "        for (int64_t q = 0; q < kn; q++) {\n"
                 "            const int64_t k = k0 + q, %s = ix[k];\n"
                 "            const double t%d = tb[q];\n", var, uv);
    emit_cell_body(&g, "            ");
    cell_operand(&g, outer_cell(p), e, sizeof e);
    switch (p->var) {
    case V_NO_AGG: sb_printf(b, "            out[k] = %s;\n", e); break;
    case V_FULL_AGG:
        if (acc_sq(p->n[p->out[0]].op)) sb_printf(b, "            eb[q] = %s * %s;\n", e, e);
        else sb_printf(b, "            eb[q] = %s;\n", e);
        break;
    case V_LEFT_MM: case V_RIGHT_MM: case V_RIGHT_T_MM:
        if (chunk_axpy) sb_printf(b, "            eb[q] = %s;\n", e);
        else sb_printf(b, "            cg_axpy(%s, P[%d] + %s * %s, %s, out);\n", e, side, var, sw, sw);
        break;
    default:
        break;
    }
    sb_printf(b, "            (void)%s; (void)%s; (void)k;\n        }\n", fix, var);
    if (p->var == V_FULL_AGG)
        sb_puts(b, "        for (int64_t q = 0; q < kn; q++) cg_kadd(&out[0], &out[1], eb[q]);\n");
    if (chunk_axpy) sb_printf(b, "        cg_axpy_rows_k(eb, ix + k0, kn, P[%d], %d, out);\n", side, RS);
    sb_puts(b, "        (void)eb;\n    }\n");
}

static void gen_outer(const CPlan *p, StrBuf *b)
{
    int u, v, uv, side;
    outer_parts(p, &u, &v, &uv);
    cg_outer_inputs(p, &u, &v, &side);
    bool bycol = p->var == V_RIGHT_MM || p->var == V_RIGHT_T_MM;
    sb_printf(b, "\nvoid %s(const double *const *restrict P, const int64_t *restrict S, const int64_t *restrict L,\n"
                 "            const double *restrict sc, int64_t %s, const int32_t *restrict ix,\n"
                 "            const double *restrict wv, int64_t nz, double *restrict out)\n{\n",
              bycol ? "cg_col" : "cg_row", bycol ? "j" : "i");
    /* Chunks of CG_OCH non-zeros: first their dot products (independent,
     * the factor rows of the non-zero CG_OPFD ahead prefetched), then the
     * cell expression over the chunk (exp/log over several values at once,
     * not one long dependence chain per non-zero), then a full aggregate
     * adds the chunk's values in order */
    sb_puts(b, "#define CG_OPFD 16\n#define CG_OCH 16\n");
    /* while the rank (and the side matrix's width) are the compiled ones
     * (cplan_outer_lit, part of the signature), a copy of the loop with
     * literal widths: the dot products and updates of r values unrolled
     * (ALS-CG's rank 20: 2x a non-zero) */
    int R = cplan_outer_lit(p, u), RS = side >= 0 ? cplan_outer_lit(p, side) : 0;
    if (R) {
        sb_printf(b, "    if (L[%d] == %d", u, R);
        if (RS) sb_printf(b, " && L[%d] == %d", side, RS);
        sb_puts(b, ") {\n");
        emit_outer_loop(p, b, u, v, uv, side, R, RS);
        sb_puts(b, "    return;\n    }\n    {\n");
    }
    emit_outer_loop(p, b, u, v, uv, side, 0, 0);
    if (R) sb_puts(b, "    }\n");
    sb_puts(b, "}\n");
}

/* The C source of p's operator (malloc; caller frees). */
char *cgen_c(const CPlan *p)
{
    StrBuf b = {0};
    sb_puts(&b, cg_prelude);
    if (p->tpl == T_ROW && cplan_row_blocked(p)) sb_puts(&b, cg_prelude_blk);
    sb_printf(&b, "\nconst unsigned long long cg_hash = 0x%016llxULL;\n", (unsigned long long)p->hash);
    switch (p->tpl) {
    case T_CELL: case T_MAGG: gen_cell(p, &b); break;
    case T_ROW: gen_row(p, &b); break;
    case T_OUTER: gen_outer(p, &b); break;
    default: break;
    }
    return b.s;
}
