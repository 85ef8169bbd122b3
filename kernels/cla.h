/* cla.h: compressed linear algebra (docs/cla.md): compression planning
 * and compression (cla.c), operations over compressed blocks (cla_ops.c).
 * Compressed blocks themselves: matrix/cmb.h. */
#ifndef BRAID_K_CLA_H
#define BRAID_K_CLA_H

#include <pthread.h>
#include <stdio.h>

#include "../base/ops.h"
#include "../matrix/cmb.h"

/* ---- compression (cla.c) ---- */

typedef struct ClaPlanOpts {
    bool force;        /* compress even when the ratio does not pay (the
                          incompressible columns form one UNC group) */
    double min_ratio;  /* else: compress only at an estimated ratio >= this */
    int64_t sample;    /* rows sampled for planning (0: the default) */
    bool cocode;       /* greedy co-coding of columns (default on) */
    int enc;           /* -1: choose by size; else a ClaEnc every group
                          takes where it can (tests; EMPTY/CONST stay) */
    bool lut;          /* code groups of columns on small grids (counts,
                          categories, decimals, multiples) through a
                          direct table sized from the sample (default
                          on; off: every row hashed, for tests) */
    int64_t pop_rows;  /* > x's rows: x is a sample of a matrix of this
                          many rows (a file sampled at compile time,
                          docs/cla.md "Estimated at compile time"): its
                          rows are the sample, the estimates are for
                          pop_rows rows; 0: x itself */
} ClaPlanOpts;

/* A default: not forced, ratio 1.1, default sample, co-coding, encodings
 * by size. */
ClaPlanOpts cla_plan_defaults(void);

/* The planned column groups of x: group k holds cols[start[k] ..
 * start[k+1]). est_bytes: the estimated compressed size (of pop_rows
 * rows where the options say so). */
typedef struct ClaPlan {
    int ngroups;
    int *start;
    int32_t *cols;
    int unc_group;     /* the group of incompressible columns, or -1 */
    double est_bytes;
    /* per column of x: every finite sampled value on the grid glo + k /
     * ginv, k an integer in [0, gspan) (gspan 0: not so, or the table
     * is off) */
    double *glo, *ginv;
    int32_t *gspan;
} ClaPlan;

/* Plans x's groups from a sample of its rows (per-column statistics,
 * greedy co-coding). Returns 0 or an error. */
int cla_plan(const MB *x, const ClaPlanOpts *o, ClaPlan *p, BrErr *e);
void cla_plan_free(ClaPlan *p);

/* The distinct values (tuples) of a column group of N rows estimated
 * from a uniform sample of ns rows holding d distinct ones, f[i] of them
 * seen exactly i times (1 <= i <= fmax): Haas and Stokes' hybrid
 * estimator (cla_est.c), in [d, N]. cla_est_duj1: their first-order
 * jackknife alone (f1 = f[1]), kept for comparison. */
double cla_est_distinct(int64_t N, int64_t ns, int64_t d, const int64_t *f, int64_t fmax);
double cla_est_duj1(int64_t N, int64_t ns, int64_t d, int64_t f1);
/* The runs of non-zero tuples of a group of N rows estimated from ns
 * uniformly sampled rows, starts of which hold a non-zero tuple the row
 * before does not (a run start), dnz the estimated non-zero tuples and
 * nzrows the sample rows holding one (cla_est.c). */
double cla_est_runs(int64_t N, int64_t ns, int64_t starts, double dnz, int64_t nzrows);

/* x compressed (a new compressed block), or x itself retained when it is
 * compressed already, empty of cells, or (not forced) the compressed size
 * would not pay. NULL with e set on error. Groups are encoded in parallel;
 * each group's encoding is chosen by its exact size after extraction. */
MB *cla_compress(const MB *x, const ClaPlanOpts *o, BrErr *e);


/* Compression of a matrix that arrives by blocks of rows (a read larger
 * than the memory budget, docs/cla.md "Compressed as it is read"):
 * rd(arg, r0, r1, e) returns rows [r0, r1) of the n x m matrix as an
 * ordinary block (caller releases; NULL with e set on an error). The
 * plan comes from a sample of so->sample_rows rows in sample_parts
 * ranges spread over the rows (0 parts: the first rows); then every
 * block of so->blk_rows rows (0: about 8 MB) is coded into the planned
 * groups and released, the codes kept at one byte a row (two past 256
 * tuples). A group whose dictionary passes MAX_DICT tuples mid-way, or
 * whose exact size is smallest uncompressed, keeps its columns' values
 * (its earlier rows decoded from its codes) in the UNC group. The values
 * are x's exactly; the groups may differ from cla_compress(x)'s (the
 * plan's sample). Returns the compressed block; NULL with e->code 0 and
 * info->declined when the plan says it does not pay (!o->force: an
 * estimated ratio under o->min_ratio; the caller reads it whole), NULL
 * with e set on an error. info->peak: the most bytes held at once
 * (a block, the codes, tuples and values kept, the groups made; the
 * value columns grow with the rows read). With so->max_bytes, a matrix
 * whose value columns alone pass it stops there (NULL, e->code 0,
 * info->over; the result could not be smaller). */
typedef MB *(*ClaRowsFn)(void *arg, int64_t r0, int64_t r1, BrErr *e);
typedef struct ClaStreamOpts {
    int64_t blk_rows;
    int sample_parts;
    int64_t sample_rows;   /* at most blk_rows */
    double max_bytes;      /* > 0: stop once the value columns alone
                              (their UNC block with the non-zeros seen)
                              pass it: NULL, e->code 0, info->over */
} ClaStreamOpts;
typedef struct ClaStreamInfo {
    int64_t blocks, peak;
    int64_t rows;          /* over: the rows read when it stopped */
    bool declined, over;
} ClaStreamInfo;
ClaStreamOpts cla_stream_defaults(void);
MB *cla_compress_rows(ClaRowsFn rd, void *arg, int64_t n, int64_t m, const ClaPlanOpts *o, const ClaStreamOpts *so,
                      ClaStreamInfo *info, BrErr *e);

/* Rows [rl, ru) of a compressed group g (not UNC) as a new group, its
 * encoding chosen by exact size among the compressed ones (right
 * indexing of row ranges). NULL with e set when out of memory, NULL
 * without an error when the range needs more than 65536 tuples. */
ClaGroup *cla_group_rows(const ClaGroup *g, int64_t rl, int64_t ru, BrErr *e);

/* ---- statistics (-stats), per run ----
 * The counters of one run (the interpreter's Rt holds one): a thread
 * counts into the ClaStats bound to it (cla_stats_bind: the run's thread
 * and its parfor workers), else into a process-wide default; so runs in
 * one process (the API, Python) count apart. */

typedef struct ClaStats {
    pthread_mutex_t lock;
    int64_t n, ns, in_bytes, out_bytes;   /* compressions: count, time, bytes */
    int64_t coded, hashed;                /* rows of groups coded; those
                                             the hash coded (not the run
                                             or table shortcuts) */
    int64_t dec_n, dec_ns;                /* decompressions */
    int64_t lazy[3];                      /* deferred compress(X)'s
                                             decisions: ClaLazy */
    int64_t rd_n, rd_stream, rd_blocks, rd_held;   /* reads past the
                                             budget: count, those
                                             streamed, their blocks,
                                             the most bytes one
                                             by blocks held */
    const char *opname[32];
    int64_t opcount[32];
} ClaStats;

void cla_stats_init(ClaStats *s);
void cla_stats_destroy(ClaStats *s);
/* Binds s (NULL: the default) to the calling thread; returns the
 * previous binding, for restoring it. */
ClaStats *cla_stats_bind(ClaStats *s);
/* Counts an operation run over a compressed input (name: a literal). */
void cla_stats_op(const char *name);
void cla_stats_decompress(int64_t ns);
/* A decision on a deferred compress(X) (runtime/cla_rt.c): compressed,
 * declined, or the compressed copy another holder of the block made
 * taken. */
typedef enum { CLA_LAZY_COMPRESSED, CLA_LAZY_DECLINED, CLA_LAZY_SHARED } ClaLazy;
void cla_stats_lazy(ClaLazy what);
/* A read() past the budget (docs/cla.md "Compressed as it is read"):
 * blocks, the row blocks it was compressed from (0: read whole, then
 * compressed), held, the most bytes it held at once (kept for those
 * by blocks). */
void cla_stats_read(int64_t blocks, int64_t held);
/* The -stats lines of s (nothing when it made no compression). */
void cla_print_stats(ClaStats *s, FILE *f);

/* ---- operations over compressed blocks (cla_ops.c) ----
 * Every function takes a compressed x (mb_is_cmb) and returns a new block
 * (caller releases) or NULL with e set. */

/* Does this operation have a compressed implementation for a compressed
 * input in argument position pos? (The interpreter decompresses every
 * other input; docs/cla.md.) Families follow the instruction kinds. */
typedef enum { CLA_F_UNARY, CLA_F_BINARY, CLA_F_AGG, CLA_F_MATMUL, CLA_F_RIX } ClaFamily;
bool cla_handles(ClaFamily f, OpCode op, AggDir dir, int left, int pos, int nin, const MB *const *ins);

/* x %*% b (b: an ordinary ncol(x) x k block). */
MB *cla_matmul_right(const MB *x, const MB *b, BrErr *e);
/* t(x) %*% b (b: nrow(x) x k): ncol(x) x k. */
MB *cla_matmul_tl(const MB *x, const MB *b, BrErr *e);
/* a %*% x (a: k x nrow(x), k <= 256 or sparse): k x ncol(x). */
MB *cla_matmul_left(const MB *a, const MB *x, BrErr *e);
/* t(a) %*% x (a: nrow(x) x k, k <= 256 or sparse): k x ncol(x). */
MB *cla_matmul_tl_left(const MB *a, const MB *x, BrErr *e);
/* t(x) %*% x. */
MB *cla_tsmm(const MB *x, BrErr *e);
/* t(x) %*% (w * (x %*% v)) (w NULL: without weights). */
MB *cla_mmchain(const MB *x, const MB *v, const MB *w, BrErr *e);
/* Rows of x %*% b (b dense, m x k, finite: the zeros of x are skipped)
 * for any range of rows, as cla_matmul_right computes them: per group
 * the dictionary times b's rows at its columns once (cla_rowmm_new,
 * shared, read only), then per row the sum of the looked-up entries
 * (DDC groups bundled by joint codes). A cursor per thread reads the
 * next n <= CLA_BLK rows' products into out (n x k, overwritten). The
 * Row skeleton over a compressed main input takes its products so
 * (kernels/spoof_row.c). */
typedef struct ClaRowMM ClaRowMM;
typedef struct ClaRowMMCur ClaRowMMCur;
ClaRowMM *cla_rowmm_new(const MB *x, const MB *b, BrErr *e);
/* Lookups per row (a gather of k values each): bundles, other groups
 * with tables, and the columns of UNC groups (multiplied). */
int64_t cla_rowmm_passes(const ClaRowMM *p);
void cla_rowmm_free(ClaRowMM *p);
ClaRowMMCur *cla_rowmm_open(const ClaRowMM *p, int64_t row);
void cla_rowmm_read(ClaRowMMCur *c, int64_t n, double *out);
void cla_rowmm_close(ClaRowMMCur *c);
/* t(x) %*% q accumulated block by block for rows from row on, q's rows
 * given by the caller a block at a time (the Row skeleton's t(X) %*% q
 * roots over a compressed main input: q computed per row, x's rows never
 * read): each block's q rows are added into per-group tuple sums (as
 * t(x) %*% b: DDC groups bundled by joint codes, OLE/RLE lists, UNC
 * groups multiplied), and cla_rowtl_finish adds dict^T sums into out
 * (ncol(x) x k). The tuple sums skip x's zeros, so q and x must be
 * finite for results equal to the ordinary kernel's (an Inf met by a
 * zero is NaN there); a non-finite out after finishing means a sum
 * overflowed. One per thread. NULL: out of memory. */
typedef struct ClaRowTL ClaRowTL;
ClaRowTL *cla_rowtl_new(const MB *x, int64_t k, int64_t row);
/* The next n <= CLA_BLK rows' q (n x k). */
void cla_rowtl_add(ClaRowTL *t, int64_t n, const double *q);
void cla_rowtl_finish(ClaRowTL *t, double *out);
void cla_rowtl_free(ClaRowTL *t);
/* Scatter passes per row (bundles, other compressed groups, UNC
 * columns), and the doubles of one accumulator (tuple sums and UNC
 * sums), for k columns of q. */
int64_t cla_rowtl_passes(const MB *x, int64_t k);
int64_t cla_rowtl_cells(const MB *x, int64_t k);
/* What the Row skeleton's lookup rule reads of a compressed block, apart
 * from the block: the run time fills it from the block in hand
 * (cla_look_fill: g has cla_look_groups(x) entries), the planner keeps
 * one on a Hop read at dynamic recompilation (Hop.clook), so both price
 * the plan that runs by the same functions. */
typedef struct ClaLookGroup {
    int32_t enc;             /* ClaEnc */
    int32_t ndict, ncols;
    double listed;           /* OLE/RLE: the share of rows listed; else 1 */
} ClaLookGroup;
typedef struct ClaLook {
    int64_t rows, cols;
    int ng;
    const ClaLookGroup *g;
} ClaLook;
int cla_look_groups(const MB *x);
void cla_look_fill(const MB *x, ClaLook *l, ClaLookGroup *g);
/* The time per row of the lookups of k columns (cla_rowmm_read or
 * cla_rowtl_add: the same passes), in decompressed cells (a cell of
 * cla_rows_read, 0.68 ns on the machine measured): a pass of one or
 * two values 1, of a vector of up to 8 values (the rows padded, so
 * any k up to 8) 2 per vector, 3x that where the table exceeds 3 MB
 * (bench/bench_cla_look.c: against decompressing the same block, flat
 * up to 1 MB, 2.3-6.7x at 2 MB; docs/cla.md); OLE/RLE groups by their
 * listed rows' share; UNC columns a vector of multiply-adds each. The
 * base measured by perf over kmeans' step (1M x 12 Airline-like rows,
 * 5 groups, k = 5, one thread; docs/cla.md). INFINITY without memory. */
double cla_look_cells(const ClaLook *l, int64_t k);
/* The Row skeleton's rule (kernels/spoof_row.c look_choose; the planner's
 * codegen/cost.c row_look): the lookups of the main row's products (wp
 * values a row) and of its t(X) %*% q roots (wt), plus the row's m cells
 * where something else reads the row (read: decompressed anyway),
 * against decompressing the row and the generated code multiplying
 * (about 1/12 of a cell per multiply-add, measured as cla_look_cells):
 * the time per row of the cheaper way, in decompressed cells; *look:
 * the lookups. cla_looks_pay: *look alone. */
double cla_row_cells(const ClaLook *l, int64_t wp, int64_t wt, bool read, bool *look);
bool cla_looks_pay(const ClaLook *l, int64_t wp, int64_t wt, bool read);
/* cla_looks_pay over compressed block x (false without memory). */
bool cla_row_looks_pay(const MB *x, int64_t wp, int64_t wt, bool read);
/* IEEE products over zeros (cla_ieee.c): mark NaN in the dense result
 * r of x %*% b (_right) or t(x) %*% b (_tl; b NULL: t(x) %*% x) where a
 * term is 0 * Inf or 0 * NaN, as k_mm_ieee_zeros does for the ordinary
 * kernels (b dense). False when out of memory. */
bool cla_ieee_right(const MB *x, const MB *b, double *r);
bool cla_ieee_tl(const MB *x, const MB *b, double *r);
/* Aggregates: op in OP_SUM, OP_SUMSQ, OP_MEAN, OP_AMIN, OP_AMAX; any
 * direction. */
MB *cla_agg(OpCode op, AggDir dir, const MB *x, BrErr *e);
/* Cellwise f(x), x op s, s op x over the dictionaries: a compressed
 * result sharing x's row structures (scalar_left: s op x). NULL without
 * an error when the result cannot stay compressed (a group of 65536
 * tuples whose zero rows need one more): the caller decompresses. */
MB *cla_unary(OpCode op, const MB *x, BrErr *e);
MB *cla_scalar(OpCode op, const MB *x, double s, bool scalar_left, BrErr *e);
/* x op x cellwise (X * X), over the dictionaries as above. */
MB *cla_self(OpCode op, const MB *x, BrErr *e);
/* A cellwise function of nout outputs over value tuples of a group:
 * out[r][i * ncols + j] = output r at the value vals[i * ncols + j] of the
 * matrix's column cols[j] (n tuples of ncols values). 0 or an error code
 * with e set. */
#define CLA_MAXMAP 8
typedef int (*ClaMapFn)(void *arg, const double *vals, int64_t n, int ncols, const int32_t *cols, double *const *out,
                        BrErr *e);
/* The nout blocks f(x), each compressed and sharing x's row structures: f
 * runs once over each group's dictionary (once per distinct tuple) and
 * once over its zero tuple (the value of its implicit zeros; an OLE/RLE
 * group whose zeros map to non-zeros becomes DDC), and over the cells of
 * UNC groups. 0 with res[] set; 0 with res[] NULL when a result cannot
 * stay compressed (a group of 65536 tuples whose zero rows need one
 * more): the caller decompresses; or an error code. (Fused Cell and MAgg
 * operators over compressed inputs, codegen/exec.c.) */
int cla_map(const MB *x, int nout, ClaMapFn f, void *arg, MB **res, BrErr *e);
/* The full aggregates ops[r] (sum, sumsq, mean, min, max) of f(x)'s
 * outputs into vals[r], from f over the dictionaries and zero tuples and
 * the counts per tuple, without building the blocks. */
int cla_map_agg(const MB *x, int nout, ClaMapFn f, void *arg, const OpCode *ops, double *vals, BrErr *e);
/* x[rl:ru, cl:cu] (0-based, half-open): all rows stay compressed (groups
 * restricted to the columns, sharing row structures); a row range of at
 * least CLA_BLK rows stays compressed too (every group re-encoded for
 * its rows), a smaller one is decompressed for those rows only. */
MB *cla_slice(const MB *x, int64_t rl, int64_t ru, int64_t cl, int64_t cu, BrErr *e);

#endif
