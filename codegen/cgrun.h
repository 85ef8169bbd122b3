/* cgrun.h: the run-time half of operator fusion: the codegen context
 * (plan cache, compiled operators, JIT), running a fused operator, and
 * statistics. It knows nothing of HOPs: the interpreter calls cg_exec
 * with the operator handle of an I_FUSED instruction. (codegen.h is the
 * compile half: exploration, selection, CPlans, generated code.) */
#ifndef BRAID_CGRUN_H
#define BRAID_CGRUN_H

#include <stdio.h>

#include "../matrix/value.h"

/* CG_STITCH_EXPLORER: FusionStitching's explorer chooses the plan
 * (codegen/fxselect.c), the cost-based selector's alternative. */
typedef enum { CG_FUSE_ALL, CG_FUSE_NO_REDUNDANCY, CG_COST_BASED, CG_STITCH_EXPLORER } CgPolicy;

typedef struct CgOptions {
    bool enabled;          /* sysds.codegen.enabled (default true) */
    CgPolicy policy;       /* sysds.codegen.optimizer */
    bool plancache;        /* sysds.codegen.plancache (memory and disk) */
    const char *cachedir;  /* on-disk plan cache; NULL: per-user default */
    FILE *explain;         /* -explain codegen: CPlans and C of every DAG */
    bool interpret;        /* run fused operators through the reference
                              kernels (debugging, differential tests) */
    bool async;            /* compile in the background; until an operator
                              is ready it runs through the reference kernels
                              (also BRAID_CODEGEN_ASYNC=1) */
    bool keep_fused;       /* never swap a fused operator for the unfused
                              plan on size grounds (small dense inputs):
                              differential tests exercise the generated
                              code on every shape */
    int cla;               /* sysds.compressed.linalg (RT_CLA_OFF/ON/AUTO,
                              runtime/interp.h): the planner marks what the
                              run time compresses (plan/build.c) */
} CgOptions;

/* Counters for -stats. */
typedef struct CgStats {
    int64_t dags;          /* DAGs optimized */
    int64_t cplans;        /* CPlans created */
    int64_t compiled;      /* operators compiled */
    int64_t cache_hits;    /* plan cache hits (in memory) */
    int64_t disk_hits;     /* operators loaded from the disk cache */
    int64_t prebuilt_hits; /* of those, from the prebuilt set (cache.c) */
    int64_t failed;        /* operators that did not compile */
    int64_t invalid;       /* selected operators dropped when their CPlan
                              was built (covering one operator only, or
                              not valid for their template): run unfused */
    int64_t fused[4];      /* fused operators placed: Cell, Row, MAgg, Outer */
    int64_t fallback;      /* executions through the reference kernels */
    int64_t enumerated;    /* plans enumerated by MPSkipEnum */
    int64_t evaluated;     /* plans whose cost was computed */
    int64_t sel_cached;    /* plan partitions whose cost-based selection
                              came from the selection cache */
    int64_t compile_ns;    /* time spent compiling generated code */
    int64_t optimize_ns;   /* time spent exploring and selecting */
    int64_t cc_runs;       /* compiler processes started (one per bundle
                              of operators) */
    int64_t cc_cpu_ns;     /* CPU time of the bundles' compilers braid
                              reaped (with their cc1, as, ld) */
    int64_t cc_pch_cpu_ns; /* the same of the precompiled prelude's build
                              when braid reaped it (not when left to a
                              finishing shell at the context's end) */
    int64_t amulet;        /* products placed as AMULET where-loops by the
                              fusion planner (amulet_tpl.c) */
    int64_t stitched;      /* column aggregates stitched into Row
                              operators (select.c cg_stitch) */
    int64_t stitch_pts[2]; /* stitch points the cost-based selection
                              decided: [0] materialized, [1] stitched */
} CgStats;

/* The codegen context of one runtime program: plan cache, compiled
 * operators, statistics. Thread-safe. */
typedef struct CgContext CgContext;

CgContext *cg_context_new(const CgOptions *o);
void cg_context_free(CgContext *c);
/* The AMULET template's mode for the runs from now on (a run's
 * sysds.amulet.fuse): 0 off, 1 cost, 2 force; -1 BRAID_AMULET_FUSE's,
 * else cost (docs/amulet.md). */
void cg_set_amulet_mode(int mode);
const CgStats *cg_stats(const CgContext *c);

/* Executes the fused operator op (an H_SPOOF hop's handle) over its
 * input values args[0..nin); est holds the rows, cols and nnz of every
 * input as compiled (3 * nin entries, -1 unknown; NULL: none), against
 * which size surprises are judged. *out receives a new value. */
int cg_exec(CgContext *c, void *op, const int64_t *est, int nin, Value *args, Value *out, BrErr *e);
/* One decision for the fused operators of one DAG execution
 * (docs/codegen.md, "One readiness per DAG"): operators of a DAG may
 * compute a shared subexpression each (redundant plans), and the
 * reference kernels round differently from the generated code, so a DAG
 * whose operators ran partly fused and partly unfused (an asynchronous
 * compile landing between two of them) could compare values that should
 * be equal (kmeans' D <= rowMins(D) without a hit in a row: NaN
 * centroids). cg_ready_all: is every operator of handles[0..n) ready
 * now? The interpreter asks once per execution of a block's code and
 * runs each of its fused operators with cg_exec_as(..., fused = that
 * answer): all through their kernels, or all through the reference
 * kernels. */
bool cg_ready_all(CgContext *c, void *const *handles, int n);
int cg_exec_as(CgContext *c, void *op, const int64_t *est, int nin, Value *args, Value *out, BrErr *e,
               bool fused);
/* Under -gpu: runs fused operator op on the device when its template
 * has a generator there (Row, Outer, Cell, MAgg: cgen_cl.c,
 * gpu/spoof_cl.c) and its kernel is built (sysds.gpu.async), its
 * operands are taken and the device is worth it (gpu_worth): 1 with *out
 * set; 0 when not (the caller runs cg_exec, after landing the inputs);
 * -1 with e set. */
int cg_exec_gpu(CgContext *c, void *op, const int64_t *est, int nin, Value *args, Value *out, BrErr *e);
/* FLOPs of one run of fused operator op over args (runtime/bound.c):
 * 2 per multiply-add of its matrix products, over the stored cells of
 * the main input (its non-zeros when sparse); elementwise work is not
 * counted. 0 when args do not match the plan. */
double cg_flops(const void *op, int nin, const Value *args);
/* Runs the where-loop w (AMULET, docs/amulet.md) over its input values
 * (the inputs of its H_WHERE hop: R, the ranges, the variables the body
 * reads); *out receives the new R. take: args[0] is R's last use: a dense
 * R block nothing else holds is updated in place (args[0] then becomes
 * none: its reference moved to *out). c may be NULL (codegen disabled):
 * the loop then runs through the vectorized evaluator. */
struct WhereLoop;
int cg_where_exec(CgContext *c, const struct WhereLoop *w, Value *args, int nargs, bool take, Value *out, BrErr *e);
/* The where-loops the AMULET template made (codegen/amulet_tpl.c) travel
 * by their body text, the key they are interned by (a remote parfor's
 * plan, runtime/planship.c): cg_amulet_loop_sig gives w's text, NULL when
 * c did not make w (a loop of the script); cg_amulet_loop the loop of
 * text sig in c, made now if c has not met it (NULL when sig is not a
 * body the template makes, or out of memory). */
const char *cg_amulet_loop_sig(CgContext *c, const struct WhereLoop *w);
const struct WhereLoop *cg_amulet_loop(CgContext *c, const char *sig, Span sp);
/* -stats: the codegen lines. */
void cg_print_stats(const CgContext *c, FILE *out);

/* Compressed inputs (docs/cla.md, seed 000 section 5.2). cg_cla_ok: with
 * the inputs cin[k] compressed, can op run through its unfused plan with
 * every step on compressed values being one that runs compressed
 * (elementwise operations whose other operand is a scalar or the same
 * value, sum/sumsq/mean/min/max aggregates, x %*% B and t(x) %*% B with x
 * compressed)? Cell, MAgg and Row plans; never Outer. cg_exec_unfused
 * runs op through its unfused plan (kernels/apply.c), which keeps
 * compressed values compressed. */
bool cg_cla_ok(const void *op, const bool *cin);
/* Does op's skeleton take the compressed inputs cin: a Cell or MAgg plan
 * (whose one compressed input is a full matrix and whose other inputs
 * are scalars or row vectors: the generated code once per distinct
 * tuple, kernels/spoof_cla.c; otherwise per cell over windows of
 * decompressed rows, kernels/spoof_cell.c), an Outer plan (windows by
 * rows of W, kernels/spoof_outer.c), or a Row plan whose main input is
 * the only compressed one (read by blocks of decompressed rows)? Then
 * cg_exec runs it (inputs it cannot take at run time, a sparse full side
 * input of a Row plan say, send it to the unfused plan). */
bool cg_cla_gen(const void *op, const bool *cin);
/* Does op's skeleton read its compressed inputs cin as decompressed rows
 * every time it runs (Row, Outer, Cell/MAgg not per distinct tuple)? Not
 * a Row plan whose main row only looked-up products and t(main) %*% q
 * roots read, one at least 2 columns wide (per group and tuple,
 * kernels/spoof_row.c). */
bool cg_cla_rows(const void *op, const bool *cin);
/* The main input of a Row operator's generated code (-1: not a Row
 * plan): the only input its skeleton takes compressed; the interpreter
 * decompresses its other compressed inputs (runtime/cla_rt.c). */
int cg_cla_row_main(const void *op);
/* This machine's constants of compressed linear algebra (cla_machine.c,
 * docs/cla.md): a decompressed cell and a materialized cell in cell
 * operations (the Row-plan choice), and a compression in passes over the
 * matrix (auto). Measured once and cached in <cachedir>/cla-machine.txt;
 * BRAID_CLA_MACHINE="dec_w mat_w passes" pins them, and so does
 * BRAID_CG_MACHINE (to the defaults), so tests' plans do not depend on
 * a measurement. ctx: the context's (NULL: the defaults). */
typedef struct ClaMachine { double dec_w, mat_w, passes; } ClaMachine;
ClaMachine cg_cla_machine_defaults(void);
void cg_cla_machine(const char *cachedir, ClaMachine *cm);
void cg_cla_machine_ctx(CgContext *c, ClaMachine *cm);
/* A Row operator over the compressed main input in args: is its unfused
 * plan (compressed products) estimated cheaper than its generated code
 * over decompressed rows (codegen.c: cell operations of both, weighted
 * by cm)? */
bool cg_cla_row_unfused(const void *op, const Value *args, int nargs, const ClaMachine *cm);
int cg_exec_unfused(CgContext *c, void *op, int nin, Value *args, Value *out, BrErr *e);

/* Fused operators over row partitions (cgdist.c, docs/dist.md).
 * cg_dist_describe: can op run on every rank's rows of args? Then d says
 * how (map or reduce, the combine operators) and part[k] (nin entries,
 * the caller's) whether input k is partitioned with the main input's
 * rows; d->plan is not set. cg_plan_pack: op's CPlan as bytes (malloc'd;
 * NULL when out of memory). cg_exec_packed: a worker runs such bytes
 * over its args (the plan cache finds or compiles the operator). */
struct DistFused;
bool cg_dist_describe(const void *op, int nin, const Value *args, bool *part, struct DistFused *d);
/* cg_dist_reduce_main: the main input of op when it is a reduce operator
 * whose outputs combine by one operator each (so it may be piggybacked
 * with others over the same rows), else -1. */
int cg_dist_reduce_main(const void *op);
/* Between runs of one process (dist_reset): rank 0 forgets the plans it
 * priced (the workers hold none now), so the next run prices its first
 * plans by their estimate, as a new process does. */
void cg_dist_reset(void);
char *cg_plan_pack(const void *op, size_t *n);
/* The estimated bytes of a packed plan of ops operations over nin inputs
 * (codegen/cost.c prices sending it to the ranks). */
double cg_plan_bytes_est(int ops, int nin);
int cg_exec_packed(CgContext *c, const char *plan, size_t n, int nin, Value *args, Value *out, BrErr *e);
/* Remote parfor plans (runtime/planship.c): can op travel as its CPlan
 * (not an AMULET kernel)? cg_op_unpack: the operator of such bytes in c
 * (found in the plan cache, loaded from the disk cache or compiled now;
 * owned by c), NULL when they are damaged or it did not compile. */
bool cg_op_shippable(const void *op);
void *cg_op_unpack(CgContext *c, const char *plan, size_t n);
/* Waits until op is compiled (or failed): a background compile's end, or
 * a compile now. Rank 0 calls it before shipping op, so that workers on
 * the same machine load the object from the disk cache. */
void cg_op_compiled(CgContext *c, void *op);

#endif
