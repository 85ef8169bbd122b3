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

/* SN_LEN: the segment's length (a per-segment value) */
typedef enum { SN_X, SN_CONST, SN_LEN, SN_UN, SN_BIN, SN_RED } SNodeKind;

typedef struct SNode {
    SNodeKind k;
    OpCode op;        /* SN_UN, SN_BIN; SN_RED: OP_SUM, OP_MEAN, OP_AMIN, OP_AMAX */
    int a, b;         /* operand nodes (earlier in the array) */
    double c;         /* SN_CONST (finite) */
} SNode;

#define ST_MAX_NODES 48

typedef struct StitchRegion {
    AggDir dir;       /* DIR_ROW or DIR_COL: what a segment is */
    int n;
    SNode nodes[ST_MAX_NODES];
    int root;         /* the output: a cell value (X's shape) */
} StitchRegion;

typedef enum { ST_THREAD, ST_SUBGROUP, ST_WORKGROUP, ST_XLA, ST_NSCHEMES } StitchScheme;

/* A schedule: scheme and lanes (ST_SUBGROUP: lanes per segment W and the
 * work-group size; ST_WORKGROUP: the work-group size). */
typedef struct StitchSched {
    StitchScheme scheme;
    int lanes;        /* lanes per segment */
    int wg;           /* work-group size */
    double cycles;    /* the latency evaluator's estimate */
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
/* The regions of the tests and benchmarks: layernorm over rows
 * ((X - mean) / sqrt(var + eps)), softmax over rows, column
 * standardization ((X - colMeans) / colSds). */
void st_layernorm(StitchRegion *r, double eps);
void st_softmax(StitchRegion *r);
void st_colstd(StitchRegion *r);

/* The latency evaluator's estimate of a schedule for X rows x cols. */
double stitch_cost(const StitchRegion *r, int64_t rows, int64_t cols, StitchSched *s);
/* All candidate schedules, best first (at most max); returns the count. */
int stitch_enumerate(const StitchRegion *r, int64_t rows, int64_t cols, StitchSched *out, int max);
/* The OpenCL C of the region under s (malloc'd), for tests and -explain. */
char *stitch_source(const StitchRegion *r, const StitchSched *s);
/* Runs the region over X under s (NULL: the evaluator's pick); a new
 * rows x cols block, or NULL with e set. */
MB *stitch_run(const StitchRegion *r, const MB *x, const StitchSched *s, BrErr *e);
/* Kernel packing: n independent regions (work-group scheme) in one
 * launch; out[k] gets region k's result. */
int stitch_run_packed(const StitchRegion *const *r, const MB *const *x, int n, MB **out, BrErr *e);
/* The reference: the region's operators one by one on the CPU kernels. */
MB *stitch_reference(const StitchRegion *r, const MB *x, BrErr *e);
const char *stitch_scheme_name(StitchScheme s);

#endif
