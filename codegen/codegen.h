/* codegen.h: operator fusion with generated code (seed 000): candidate
 * exploration over a memo table (OFMC templates Cell, Row, MAgg, Outer),
 * plan selection (fuse_all, fuse_no_redundancy, cost-based MPSkipEnum),
 * CPlans, C code generation, JIT compilation and the plan cache.
 *
 * Integration: plan_compile_dag (initial compile) and rc_recompile
 * (dynamic recompilation) call cg_optimize_dag after the dynamic rewrites;
 * it replaces fused sub-DAGs by H_SPOOF hops whose inputs are the fused
 * operator's inputs. The interpreter runs an H_SPOOF hop with cg_exec. */
#ifndef BRAID_CODEGEN_H
#define BRAID_CODEGEN_H

#include <stdio.h>

#include "../hops/hop.h"

typedef enum { CG_FUSE_ALL, CG_FUSE_NO_REDUNDANCY, CG_COST_BASED } CgPolicy;

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
} CgOptions;

/* Counters for -stats. */
typedef struct CgStats {
    int64_t dags;          /* DAGs optimized */
    int64_t cplans;        /* CPlans created */
    int64_t compiled;      /* operators compiled */
    int64_t cache_hits;    /* plan cache hits (in memory) */
    int64_t disk_hits;     /* operators loaded from the disk cache */
    int64_t failed;        /* operators that did not compile */
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
} CgStats;

/* The codegen context of one runtime program: plan cache, compiled
 * operators, statistics. Thread-safe. */
typedef struct CgContext CgContext;

CgContext *cg_context_new(const CgOptions *o);
void cg_context_free(CgContext *c);
const CgStats *cg_stats(const CgContext *c);

/* Fuses operators of d (in place). No-op when codegen is disabled. */
void cg_optimize_dag(CgContext *c, HopDag *d);
/* Executes the fused operator h over its input values (args[i] for
 * h->in[i]); *out receives a new value. */
struct Value;
int cg_exec(CgContext *c, const Hop *h, struct Value *args, struct Value *out, BrErr *e);
/* -explain codegen: prints the CPlans and generated C of d's operators. */
void cg_explain_dag(CgContext *c, const HopDag *d, FILE *out);
/* -stats: the codegen lines. */
void cg_print_stats(const CgContext *c, FILE *out);
/* Number of fused operators in d by template (Cell, Row, MAgg, Outer);
 * for tests and tools. */
void cg_dag_fused(const HopDag *d, int counts[4]);

#endif
