/* stitch.h: FusionStitching's code generator (seed 001, section 4) for
 * fused regions with reductions in the middle (docs/gpu.md). A region is
 * a small DAG over one matrix X whose reductions run along segments (rows
 * for DIR_ROW, columns for DIR_COL) and feed elementwise consumers:
 * layernorm, softmax, column standardization. It becomes one OpenCL
 * kernel under one of the composition schemes:
 *
 *   ST_THREAD     one work-item per segment: reductions in registers, the
 *                 producers recomputed from global memory in every pass
 *                 (XLA's thread composition)
 *   ST_SUBGROUP   W lanes per segment, several segments per work-group:
 *                 sub-group reductions (cl_khr_subgroups where the device
 *                 has it; else a W-lane tree in local memory)
 *   ST_WORKGROUP  one work-group per segment: a tree in local memory with
 *                 barriers, the result shared by all lanes
 *   ST_XLA        the baseline: one kernel per reduction depth, the
 *                 reductions' results through global memory
 *
 * and kernel packing (stitch_run_packed) puts independent regions in one
 * launch. The schemes that keep segments on chip also keep X's cells in
 * registers across the passes when a segment fits (VPT cells per lane):
 * X is read once and nothing is recomputed. The latency evaluator
 * (section 4.3) picks scheme and work-group size from the device's
 * properties. */
#ifndef BRAID_STITCH_H
#define BRAID_STITCH_H

#include "gpu.h"

/* SN_X: input 0 (a matrix of the region's shape); SN_IN: matrix input a
 * (>= 1) read as its mode says; SN_SC: scalar argument a (a value given
 * per run, so one program serves every value); SN_LEN: the segment's
 * length (a per-segment value); SN_VARDIV: a / (len - 1), 0 when len is 1
 * (the sample variance from a sum of squared deviations, as the CPU's
 * var/sd aggregates). */
typedef enum { SN_X, SN_CONST, SN_LEN, SN_UN, SN_BIN, SN_RED, SN_IN, SN_SC, SN_VARDIV } SNodeKind;

typedef struct SNode {
    SNodeKind k;
    OpCode op;        /* SN_UN, SN_BIN; SN_RED: OP_SUM, OP_MEAN, OP_AMIN, OP_AMAX */
    int a, b;         /* operand nodes (earlier in the array); SN_IN, SN_SC: index */
    double c;         /* SN_CONST (finite) */
} SNode;

/* How a matrix input is read: SI_CELL a matrix of the region's shape;
 * SI_SEG one value per segment (DIR_ROW: a column vector, DIR_COL: a row
 * vector); SI_POS one value per position along a segment (DIR_ROW: a row
 * vector, DIR_COL: a column vector); SI_POST the same values in the other
 * orientation (DIR_ROW: a column vector of cols values, as the v of X
 * %*% v: the same layout in memory). */
typedef enum { SI_CELL, SI_SEG, SI_POS, SI_POST } StitchInMode;

#define ST_MAX_NODES 48
#define ST_MAX_IN 8
#define ST_MAX_SC 32   /* scalar arguments (a buffer: literals go there too) */
/* outputs of one region (the root and 7 more): the stitched vectors of
 * one codegen operator (CG_MAXPRE) fit one region in its launch; the
 * regions stitchpass.c forms keep at most ST_PASS_OUT */
#define ST_MAX_OUT 8
#define ST_PASS_OUT 4

typedef struct StitchRegion {
    AggDir dir;       /* DIR_ROW or DIR_COL: what a segment is */
    int n;
    SNode nodes[ST_MAX_NODES];
    int root;         /* the output: a cell value (X's shape), or a
                         per-segment value (DIR_ROW: rows x 1, DIR_COL:
                         1 x cols) */
    int nin;          /* matrix inputs (X is input 0; 0 counts as 1) */
    StitchInMode mode[ST_MAX_IN];
    int nsc;          /* scalar arguments */
    int nxout;        /* outputs beyond the root (multi-output regions): */
    int xout[ST_MAX_OUT - 1];  /* nodes computed by the same launch,
                                  each a cell or a per-segment value */
} StitchRegion;

typedef enum { ST_THREAD, ST_SUBGROUP, ST_WORKGROUP, ST_XLA, ST_NSCHEMES } StitchScheme;

/* A schedule: scheme and lanes (ST_SUBGROUP: lanes per segment W and the
 * work-group size; ST_WORKGROUP: the work-group size). */
typedef struct StitchSched {
    StitchScheme scheme;
    int lanes;        /* lanes per segment */
    int wg;           /* work-group size */
    double cycles;    /* the latency evaluator's estimate */
    double instr;     /* its instruction part (ties among schedules at
                         the bandwidth floor go to the smaller) */
    int launches;     /* kernels launched */
    double lmem;      /* bytes of local memory per work-group (after reuse) */
    double lmem_noreuse;
} StitchSched;

/* Builders (return the node's index, -1 when full). */
int st_x(StitchRegion *r);
int st_const(StitchRegion *r, double c);
int st_len(StitchRegion *r);
int st_un(StitchRegion *r, OpCode op, int a);
int st_bin(StitchRegion *r, OpCode op, int a, int b);
int st_red(StitchRegion *r, OpCode op, int a);
/* matrix input k >= 1 read by mode; scalar argument k */
int st_in(StitchRegion *r, int k, StitchInMode mode);
int st_sc(StitchRegion *r, int k);
int st_vardiv(StitchRegion *r, int a);
/* Makes node i (not a scalar: a cell or per-segment value) one more
 * output of the region; its index among the outputs (1..), -1 when full. */
int st_output(StitchRegion *r, int i);
/* Outputs of the region: the root, then xout. */
int st_nout(const StitchRegion *r);
int st_out_node(const StitchRegion *r, int k);
/* Is node i per segment (uniform over a segment's cells)? */
bool st_is_seg(const StitchRegion *r, int i);
/* The regions of the tests and benchmarks: layernorm over rows
 * ((X - mean) / sqrt(var + eps)), softmax over rows, column
 * standardization ((X - colMeans) / colSds). */
void st_layernorm(StitchRegion *r, double eps);
void st_softmax(StitchRegion *r);
void st_colstd(StitchRegion *r);

/* The latency evaluator's estimate of a schedule for X rows x cols. */
double stitch_cost(const StitchRegion *r, int64_t rows, int64_t cols, StitchSched *s);
/* The latency evaluator's price (cycles) of combining ng blocks'
 * partials of nout aggregated outputs (reads[t] doubles of a block's
 * partial, cells[t] result cells): inside the operator's launch by its
 * last work-group of wg lanes (inl), or by a cg_comb launch per output. */
double stitch_comb_cost(const int64_t *reads, const int64_t *cells, int nout, int64_t ng, int wg, bool inl);
/* The schedule of a region run by the first work-groups of another
 * kernel's launch in groups of wg lanes (gpu/spoof_cl.c): ST_THREAD (a
 * segment per lane, lanes 1: the per-operator kernels' order) or
 * ST_WORKGROUP (a segment per group, lanes wg: the local-memory tree),
 * whichever the latency evaluator prices lower (mode 0; 1 thread, 2
 * work-group: a test's choice); *cache: X kept in registers. */
StitchSched stitch_inlaunch_sched(const StitchRegion *r, int64_t rows, int64_t cols, int wg, int mode, int *cache);
/* All candidate schedules, best first (at most max); returns the count. */
int stitch_enumerate(const StitchRegion *r, int64_t rows, int64_t cols, StitchSched *out, int max);
/* The OpenCL C of the region under s (malloc'd), for tests and -explain. */
char *stitch_source(const StitchRegion *r, const StitchSched *s);
/* The region's helpers and its body function `body0` (malloc'd), as
 * the region's kernel calls it: (nseg, len, cols, x, out, segv, sh,
 * grp, ngrp, LS, cache[, i1..][, sc][, o1..]): work-group grp of ngrp
 * takes segments grp * SPG, (grp + ngrp) * SPG, ... (SPG = the group's
 * size / LS); for another kernel that runs a region inside its own
 * launch (gpu/spoof_cl.c, the stitched codegen operators). csr: X is
 * CSR, passed as its values x followed by its row pointers and columns
 * (x, xrp, xci); each cell is looked up in its row, so the walk, its
 * order and the results are the dense X's. */
char *stitch_body_source(const StitchRegion *r, bool csr);
/* Runs the region over X under s (NULL: the evaluator's best stitched
 * schedule, never ST_XLA); a new
 * rows x cols block, or NULL with e set. */
MB *stitch_run(const StitchRegion *r, const MB *x, const StitchSched *s, BrErr *e);
/* The general form: matrix inputs in[0..r->nin) (in[0] is X), scalar
 * arguments sc[0..r->nsc). The result (X's shape, or per segment) stays
 * resident in the device pool. NULL with e clear when the backend does
 * not take these operands (compressed, empty, shapes that do not match
 * the modes): the caller runs stitch_reference_in. */
MB *stitch_exec(const StitchRegion *r, const MB *const *in, const double *sc, const StitchSched *s, BrErr *e);
/* Every output of a (multi-output) region from one launch (while its
 * kernel compiles in the background: from the per-operator kernels):
 * out[0..st_nout) set and 0; 0 with out[0] NULL and e clear when the
 * backend does not take the operands; -1 with e set. */
int stitch_exec_all(const StitchRegion *r, const MB *const *in, const double *sc, const StitchSched *s, MB **out,
                    BrErr *e);
MB *stitch_reference_in(const StitchRegion *r, const MB *const *in, const double *sc, BrErr *e);
/* The reference of every output: 0, or -1 with e set. */
int stitch_reference_all(const StitchRegion *r, const MB *const *in, const double *sc, MB **out, BrErr *e);
/* Do the operands match the region (shapes by mode)? */
bool stitch_shapes_ok(const StitchRegion *r, const MB *const *in);
/* The schedule whose reductions run in the order of the per-operator GPU
 * kernels (gpu/ops.c: a row by a work-group of the largest power of two
 * <= min(cols, 256) lanes, a column by one lane): a region and the
 * unfused GPU plan of the same expression agree to the last bit. */
StitchSched stitch_unfused_order(const StitchRegion *r, int64_t rows, int64_t cols);
/* Kernel launches of one run of r under s's scheme (1 when stitched). */
int stitch_launches(const StitchRegion *r, const StitchSched *s);
/* Kernel packing: n independent regions (work-group scheme) in one
 * launch; out[k] gets region k's result. */
int stitch_run_packed(const StitchRegion *const *r, const MB *const *x, int n, MB **out, BrErr *e);
/* The region's operators one by one on the GPU backend's per-operator
 * kernels (the CPU kernels for what it does not take): what runs while
 * the region's kernel compiles; the same bits as the kernel under
 * stitch_unfused_order. */
int stitch_unfused_gpu_all(const StitchRegion *r, const MB *const *in, const double *sc, MB **out, BrErr *e);
/* Asynchronous compilation (sysds.gpu.async, default off): a region's
 * kernel builds in a background thread while its runs take
 * stitch_unfused_gpu_all (stitch_exec_all does this itself). hold: tests
 * keep background builds from starting until released; wait: releases
 * the hold and waits for every build running. */
/* The share of a kernel build a device run of region r bears (the cost
 * rule's GpuXfer.build, as codegen's operators bear theirs): 0 once a
 * kernel of r is built, else the mean build time (gpu_build_seconds)
 * over r's calls so far, counted here by the region's structure. */
double stitch_build_share(const StitchRegion *r);
void stitch_set_async(bool on);
bool stitch_async(void);
void stitch_async_hold(bool hold);
void stitch_async_wait(void);
/* The reference: the region's operators one by one on the CPU kernels. */
MB *stitch_reference(const StitchRegion *r, const MB *x, BrErr *e);
const char *stitch_scheme_name(StitchScheme s);

#endif
