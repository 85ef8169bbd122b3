/* spoof.h: skeletons of fused operators (seed 000, section 2.2, "runtime
 * integration"). A skeleton owns data access, threading, blocking and
 * aggregation over dense and sparse inputs; the generated code (codegen/)
 * is a set of loops over rows or cells with the operator's body inlined,
 * called once per block of rows (dense) or per row (sparse); Cell full
 * aggregates once per super-block, aggregating inside the loop. Skeletons
 * know nothing of HOPs or CPlans: they take matrices, access modes,
 * scalars and the generated functions.
 *
 * The ABI between skeletons and generated code uses plain C types only.
 * For each input k of an operator:
 *   P[k]  dense base pointer (full matrix, a row vector, a column vector,
 *         or a scratch row holding an expanded sparse row)
 *   S[k]  row stride: cols of a dense full matrix, 0 for a vector read the
 *         same in every row or for a scratch row
 *   L[k]  columns of the input (vector lengths of the Row template)
 *   sc[k] the value of a scalar input
 * Column-vector inputs are read as P[k][i].
 *
 * Every function returns 0 or an error code with e set; blocks returned
 * in *out are new (caller owns). Results do not depend on the thread
 * count: aggregations run over fixed super-blocks of rows (or cells) whose
 * partials (Kahan sums) are merged in order. */
#ifndef BRAID_K_SPOOF_H
#define BRAID_K_SPOOF_H

#include "../matrix/mb.h"

/* Access modes (codegen's InMode has the same numbering). */
enum { SPM_SCALAR, SPM_FULL, SPM_ROW, SPM_COL, SPM_MAT, SPM_VROW, SPM_BT };
/* Aggregate functions. */
enum { SPA_NONE, SPA_SUM, SPA_SUMSQ, SPA_MIN, SPA_MAX, SPA_MEAN };
/* Aggregation directions of Cell. */
enum { SPD_NONE, SPD_ROW, SPD_COL, SPD_FULL };
/* Row variants. */
enum { SPR_NO_AGG, SPR_ROW_AGG, SPR_COL_AGG, SPR_FULL_AGG, SPR_COL_T_AGG, SPR_MULTI };
/* Outer variants. */
enum { SPO_NO_AGG, SPO_FULL_AGG, SPO_LEFT, SPO_RIGHT, SPO_RIGHT_T };

/* ---- generated function types ---- */

/* Cell, dense: values of cells (i, j), r0 <= i < r1, j0 <= j < j1, into
 * out[t][(i - r0) * ldo + (j - j0)] for each output t. */
typedef void (*SpCellDenseFn)(const double *const *P, const int64_t *S, const double *sc, int64_t r0, int64_t r1,
                              int64_t j0, int64_t j1, double *const *out, int64_t ldo);
/* Cell, flat: all matrix inputs full and dense; cells c0 <= c < c1 in
 * row-major order into out[t][c - c0]. */
typedef void (*SpCellFlatFn)(const double *const *P, const double *sc, int64_t c0, int64_t c1, double *const *out);
/* Cell, flat, counting (no_agg plans of one output): as SpCellFlatFn,
 * and returns the non-zeros among the cells written, *bad |= 1 when one
 * is NaN or infinite (the output's count and finiteness flag from the
 * loop that writes it). */
typedef int64_t (*SpCellFlatNzFn)(const double *const *P, const double *sc, int64_t c0, int64_t c1,
                                  double *const *out, int *bad);
/* Cell, dense, counting (no_agg plans of one output): as SpCellDenseFn,
 * returning the non-zeros among the cells written, *bad as above. */
typedef int64_t (*SpCellDenseNzFn)(const double *const *P, const int64_t *S, const double *sc, int64_t r0,
                                   int64_t r1, int64_t j0, int64_t j1, double *const *out, int64_t ldo, int *bad);
/* Cell full aggregates (every output SPA_SUM/SUMSQ/MIN/MAX/MEAN)
 * computed inside the loop. Plans without vector inputs (ff set): flat
 * cells r0 <= c < r1 as for SpCellFlatFn (S and n unused); plans with
 * vector inputs (no ff): rows r0 <= i < r1, all n columns, inputs as for
 * SpCellDenseFn, the lanes restarting at each row. The q-th cell (of the
 * call, or of the row) goes into lane q % SPOOF_AL of each output (flat
 * loops: into lane q % (2 * SPOOF_AL), the second bank folded into the
 * first at the end of the call). acc (read and
 * updated): per output t, SPOOF_AL lane values at acc[2 * SPOOF_AL * t]
 * (sums, or min/max) followed by SPOOF_AL Kahan corrections. Sums that
 * end non-finite (an infinity, NaN or overflow met without the
 * infinity check) are redone by the caller. */
#define SPOOF_AL 32
typedef void (*SpCellAggFn)(const double *const *P, const int64_t *S, const double *sc, int64_t r0, int64_t r1,
                            int64_t n, double *acc);
/* Cell full aggregates of a sparse-safe plan over the main input's
 * non-zeros, computed inside the loop: rows r0 <= i < r1 of the main's
 * CSR arrays (rp by row, ci, v); the q-th non-zero of a row into lane
 * q % SPOOF_AL; acc as for SpCellAggFn. Implicit zeros are the
 * skeleton's (min, max, mean). */
typedef void (*SpCellSparseAggFn)(const double *const *P, const int64_t *S, const double *sc, int64_t r0,
                                  int64_t r1, const int64_t *rp, const int32_t *ci, const double *v, double *acc);
/* Cell, sparse-safe: the non-zeros (ci[k], av[k]) of row i of the main
 * input; values into out[t][k]. */
typedef void (*SpCellSparseFn)(const double *const *P, const int64_t *S, const double *sc, int64_t i,
                               const int32_t *ci, const double *av, int64_t nz, double *const *out);
/* Row, dense main input: rows r0 <= i < r1. out: NO_AGG/ROW_AGG the
 * output at row r0 (row stride ldo); otherwise the partial accumulator
 * (COL_T_AGG: transposed, ocols x orows). Side matrices (SPM_MAT) are
 * passed transposed, as ncol x nrow dense arrays.
 * tmp: scratch of SpRowTmpFn(L) doubles.
 * P[n] (n the inputs): NULL, or the products of the call's rows with the
 * side matrices SpoofRow.prod_in lists, row i's at P[n] + (i - r0) * W,
 * W the sum of their widths L[prod_in[j]], product j at offset
 * L[prod_in[0]] + .. + L[prod_in[j - 1]] of the row: the generated code
 * reads them instead of computing them from the main row (a compressed
 * main input, seed 000 section 5.2: products looked up per group).
 * P[n + 1]: NULL, or where the generated code writes the rows of q of
 * the t(main) %*% q and t(q) %*% main outputs SpoofRow.tq_out lists
 * instead of accumulating them into their partials: row i's at
 * P[n + 1] + (i - r0) * W, W the sum of their q widths (1 for a q that
 * is a scalar per row), output j's at the sum of the earlier widths; the
 * skeleton accumulates them per tuple of the compressed main input
 * (cla_rowtl_*), whose rows are then not read for them. */
typedef void (*SpRowDenseFn)(const double *const *P, const int64_t *S, const int64_t *L, const double *sc,
                             int64_t r0, int64_t r1, double *out, int64_t ldo, double *tmp);
/* Row, sparse main input: rows r0 <= i < r1 of the main's CSR arrays
 * (rp indexed by row, ci, v); out as for the dense function (output at
 * row r0 with stride ldo, or the partial), except that side matrices
 * (SPM_MAT) are passed row-major (nrow x ncol, the k values of a row of
 * V adjacent) and the COL_T_AGG partial is not transposed (orows x
 * ocols): the non-zeros are read once for all k columns. */
typedef void (*SpRowSparseFn)(const double *const *P, const int64_t *S, const int64_t *L, const double *sc,
                              int64_t r0, int64_t r1, const int64_t *rp, const int32_t *ci, const double *v,
                              double *out, int64_t ldo, double *tmp);
typedef int64_t (*SpRowTmpFn)(const int64_t *L);
/* Outer: the non-zeros of row i (by-row variants: ix are columns j) or
 * of column j (right variants: ix are rows i) of the driver W. out: the
 * values (NO_AGG), the Kahan pair (FULL_AGG) or the output row. */
typedef void (*SpOuterFn)(const double *const *P, const int64_t *S, const int64_t *L, const double *sc,
                          int64_t i, const int32_t *ix, const double *wv, int64_t nz, double *out);

/* ---- operator descriptions ---- */

#define SPOOF_MAXOUT 8
#define SPOOF_MAXPROD 8

typedef struct SpoofIn {
    int n;                 /* inputs */
    const MB *const *m;    /* matrix of input k (NULL for scalars) */
    const int *mode;       /* SPM_* */
    const double *sc;      /* scalar of input k */
    const int64_t *coff;   /* Cell: input k read in place as columns
                              coff[k] .. coff[k] + cols - 1 of its matrix
                              (X[, lo:hi] fused), -1 none; NULL: none */
} SpoofIn;

/* CPU stitching: the vector expression of a stitched input over the
 * column aggregates of the operator's main matrix X (spoof_pre.c). Nodes
 * in evaluation order, the last one the value: SPP_AGG the column
 * aggregate op (OP_SUM, OP_MEAN, OP_AMIN, OP_AMAX, OP_VAR, OP_SD) of X,
 * SPP_CONST the scalar c, SPP_UN op of node a, SPP_BIN op of nodes a and
 * b (elementwise, a scalar node broadcast). A plain struct: plans carry
 * it in their inputs and ship it whole. */
#define SPOOF_PREMAX 8
enum { SPP_AGG = 1, SPP_CONST, SPP_UN, SPP_BIN };
typedef struct SpPreNode {
    int kind, op, a, b;
    double c;
} SpPreNode;
typedef struct SpPre {
    int n;                 /* 0: not stitched */
    SpPreNode x[SPOOF_PREMAX];
} SpPre;

typedef struct SpoofCell {
    SpoofIn in;
    int64_t rows, cols;    /* iteration space */
    int main;              /* sparse driver, -1 */
    bool sparse_safe;      /* fs may run over main's non-zeros */
    int dir;               /* SPD_* */
    int nout;
    int agg[SPOOF_MAXOUT]; /* SPA_* per output (SPD_NONE: SPA_NONE) */
    SpCellDenseFn fd;
    SpCellFlatFn ff;       /* NULL if the plan has vector inputs */
    SpCellFlatNzFn ffn;    /* ff counting; NULL: ff, then a counting pass */
    SpCellDenseNzFn fdn;   /* fd counting; NULL: fd, then a counting pass */
    SpCellAggFn fa;        /* SPD_FULL in the loop; NULL: fd/ff + buffer */
    SpCellSparseAggFn fsa; /* SPD_FULL over sparse rows in the loop; NULL: fs */
    SpCellSparseFn fs;     /* NULL unless sparse-safe */
    double work;           /* elementwise work per cell (ops.def's cost
                              column summed over the plan; 0: unknown).
                              Only threads and task sizes follow it. */
} SpoofCell;

/* One output of a Row operator: variant, aggregate, shape. */
typedef struct SpRowOut {
    int var, agg;
    int64_t orows, ocols;
} SpRowOut;

typedef struct SpoofRow {
    SpoofIn in;
    const int64_t *L;
    int64_t rows;          /* rows of the main input */
    int main;
    int var;               /* SPR_* */
    int agg;               /* COL/FULL: SPA_* */
    int64_t orows, ocols;  /* output shape; FULL_AGG: ocols = cells per row
                              aggregated (for the mean) */
    int nout;              /* SPR_MULTI: several aggregates of one pass */
    SpRowOut mo[SPOOF_MAXOUT];   /* SPR_MULTI: each output (COL_AGG,
                              FULL_AGG or COL_T_AGG); their partials lie
                              one after the other in the order of mo
                              (COL_AGG 2 ocols, FULL_AGG 2, COL_T_AGG
                              orows x ocols doubles), as the generated
                              code accumulates them */
    SpRowDenseFn fd;
    SpRowSparseFn fs;      /* NULL: sparse main rows are expanded */
    SpRowTmpFn ft;
    int nprod;             /* the main row's products with side matrices
                              (SPM_MAT inputs prod_in[0..nprod), in the
                              generated code's order) the generated code
                              reads from P[n] when given (SpRowDenseFn);
                              0: none, or the code does not read them */
    int prod_in[SPOOF_MAXPROD];
    bool prod_only;        /* nothing else reads the main row (but
                              those products and the tq_out outputs) */
    int ntq;               /* aggregated outputs t(main) %*% q or
                              t(q) %*% main whose q rows the generated
                              code writes to P[n + 1] when given
                              (SpRowDenseFn): their indexes among the
                              aggregated outputs (k_spoof_row_outs: 0 for
                              a single COL_T_AGG), in the generated code's
                              order; 0: none */
    int tq_out[SPOOF_MAXOUT];
    bool tq_left[SPOOF_MAXOUT];  /* the main row is the left operand:
                              t(main) %*% q (else t(q) %*% main) */
    bool fd_cq;            /* fd has a loop that reads no main row when
                              P[n] and P[n + 1] are given (prod_only
                              and no blocked products: cgen_c.c); a
                              sparse main input then runs by blocks
                              (spoof_row.c sq_rows) */
    int cla_look;          /* a compressed main input's products and q
                              rows taken per tuple (prod_in, tq_out):
                              where the passes per row pay (0), always
                              (1, tests), never (-1) */
    const SpPre *pre;      /* CPU stitching (NULL: none): pre[k].n > 0 for
                              an SPM_ROW input k bound to the main matrix
                              X (dense or CSR, not compressed) whose row
                              vector is the expression pre[k] of X's
                              column aggregates: the skeleton computes
                              the aggregates (agg.h k_colagg_*: k_agg's
                              values to the bit) over row blocks, merges
                              them after a barrier, evaluates the
                              expression (the unfused kernels, so the
                              vector is the unfused plan's to the bit)
                              and runs the rows over the same rows in the
                              same parallel region (spoof_pre.c) */
} SpoofRow;

typedef struct SpoofOuter {
    SpoofIn in;
    const int64_t *L;
    int main;              /* the sparse driver W (m x n) */
    int v;                 /* V (n x r) or B (r x n, SPM_BT) input */
    int64_t m, n;
    int var;               /* SPO_* */
    int agg;               /* FULL_AGG: SPA_SUM / SPA_SUMSQ */
    int64_t ocols;         /* LEFT/RIGHT: columns of the output */
    SpOuterFn frow;        /* by rows of W (NO_AGG, FULL_AGG, LEFT) */
    SpOuterFn fcol;        /* by columns of W (RIGHT, RIGHT_T) */
} SpoofOuter;

/* Cell and MAgg. SPD_NONE/ROW/COL: *out = new block; SPD_FULL: res[t]
 * for every output. */
int k_spoof_cell(const SpoofCell *op, MB **out, double *res, BrErr *e);
/* Recounts the non-zeros of a fused operator's dense output m and sets
 * its finiteness flag from the same pass (mb.h; spoof_cell.c). */
void k_spoof_count_fin(MB *m);
/* spoof_cla.c: a Cell/MAgg operator whose one full input is compressed
 * and whose other inputs are scalars or row vectors, over the
 * dictionaries (the generated body once per distinct tuple, aggregates
 * from the counts; seed 000 section 5.2). _ok: can it run so? The run
 * sets *declined (and nothing else) when the result cannot stay
 * compressed: the caller then runs it per cell. */
bool k_spoof_cell_cla_ok(const SpoofCell *op);
int k_spoof_cell_cla(const SpoofCell *op, MB **out, double *res, bool *declined, BrErr *e);
/* spoof_row.c: can the Row skeleton take op's compressed main input (by
 * blocks of decompressed rows: seed 000 section 5.2)? Every other input
 * must be ordinary, full ones dense. */
bool k_spoof_row_cla_ok(const SpoofRow *op);
/* spoof_row.c: Row operators whose sparse main input ran by blocks of
 * rows (sq_rows: products and t(X) %*% q by the sparse leaf) since the
 * process started (tests). */
int64_t k_spoof_row_sq_runs(void);
/* The same for a dense main input (dq_rows: one-column products and
 * t(X) %*% q by the matrix-vector leaves). */
int64_t k_spoof_row_dq_runs(void);
/* The aggregated outputs of op (SPR_MULTI: its list; a single aggregate:
 * itself; none for NO_AGG / ROW_AGG) into o, their count; the doubles of
 * one output's partial (COL_AGG 2 ocols, FULL_AGG 2, COL_T_AGG orows x
 * ocols). gpu/spoof_cl.c lays out its partials the same way. */
int k_spoof_row_outs(const SpoofRow *op, SpRowOut *o);
int64_t k_spoof_row_psize(const SpRowOut *o);
/* Row. FULL_AGG: *res; otherwise *out. SPR_MULTI: out[t] or res[t] for
 * each output t (FULL_AGG outputs in res, the others in out). */
int k_spoof_row(const SpoofRow *op, MB **out, double *res, BrErr *e);
/* spoof_pre.c: the stitched inputs pre[0..n) (pre[k].n == 0: none) of an
 * operator over its main matrix x, in phases a skeleton runs inside its
 * own parallel region: k_pre_begin plans the distinct column aggregates
 * (NULL with e set: out of memory, or an aggregate not supported:
 * k_pre_agg_ok); k_pre_ntasks / k_pre_task run the current phase's
 * tasks (concurrently, in any order; false: out of memory); k_pre_next,
 * after them, merges the phase in block order and returns 1 when
 * another phase of tasks follows, 0 when done, -1 on error
 * (k_pre_err); then k_pre_eval writes input k's vector (x->cols
 * doubles) into out. k_pre_run does it all in parallel regions of its
 * own into vec[k] (malloc, for the stitched inputs). */
typedef struct SpPreRun SpPreRun;
bool k_pre_agg_ok(int op);
SpPreRun *k_pre_begin(const SpPre *pre, int n, const MB *x, BrErr *e);
int64_t k_pre_ntasks(const SpPreRun *r);
bool k_pre_task(SpPreRun *r, int64_t t);
int k_pre_next(SpPreRun *r);
const BrErr *k_pre_err(const SpPreRun *r);
int k_pre_eval(SpPreRun *r, int k, double *out, BrErr *e);
void k_pre_free(SpPreRun *r);
/* The expression p with the unfused kernels (apply.h), its aggregates
 * from agg(arg, op, out, e); 0 or an error code. */
struct Value;
typedef int (*KPreAggFn)(void *arg, int op, struct Value *out, BrErr *e);
int k_pre_apply(const SpPre *p, KPreAggFn agg, void *arg, struct Value *out, BrErr *e);
int k_pre_run(const SpPre *pre, int n, const MB *x, double **vec, BrErr *e);

/* Outer. FULL_AGG: *res; otherwise *out. */
int k_spoof_outer(const SpoofOuter *op, MB **out, double *res, BrErr *e);

/* Kahan-lane accumulators shared by the skeletons. */
#define SPOOF_KL 16
typedef struct SpAcc { double s[SPOOF_KL], c[SPOOF_KL]; } SpAcc;
void spacc_init(SpAcc *a, int agg);
void spacc_add(SpAcc *a, int agg, const double *v, int64_t n);
void spacc_merge(SpAcc *a, const SpAcc *b, int agg);
/* Final value; count: cells aggregated (for the mean). */
double spacc_value(const SpAcc *a, int agg, double count);

#endif
