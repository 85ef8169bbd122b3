/* codegen.h: operator fusion with generated code (seed 000): candidate
 * exploration over a memo table (OFMC templates Cell, Row, MAgg, Outer),
 * plan selection (fuse_all, fuse_no_redundancy, cost-based MPSkipEnum),
 * CPlans, C code generation, JIT compilation and the plan cache.
 *
 * Integration: plan_compile (plan/compile.c: the first compile and
 * dynamic recompilation) calls cg_optimize_dag after the dynamic rewrites;
 * it replaces fused sub-DAGs by H_SPOOF hops whose inputs are the fused
 * operator's inputs; they become I_FUSED instructions, which the
 * interpreter runs with cg_exec (cgrun.h, the run-time half). */
#ifndef BRAID_CODEGEN_H
#define BRAID_CODEGEN_H

#include <stdio.h>

#include "../hops/hop.h"
#include "cgrun.h"

/* Fuses operators of d (in place). No-op when codegen is disabled. */
void cg_optimize_dag(CgContext *c, HopDag *d);
/* Does d hold a one-column rank-1 update t(X) %*% q (or an mmchain) over
 * a variable X of unknown non-zeros whose rows would be too wide for a
 * Row operator's loop if X were dense (cost.c row_wide)? Then whether X
 * is sparse decides the cost-based plan, and only its value knows:
 * plan_compile marks d to be recompiled before it runs (Hop.nnz then
 * exact). False when c is NULL or not cost-based. */
bool cg_wide_nnz_unknown(const CgContext *c, const HopDag *d);
/* Forms stitched regions in d (codegen/stitchpass.c, docs/gpu.md): row
 * and column aggregates in the middle of elementwise work become H_STITCH
 * hops. With codegen on, a full aggregate of elementwise work alone is
 * left to its Cell FULL_AGG operator where that costs less. Returns the
 * number formed. */
int cg_stitch_dag(HopDag *d, bool codegen);
/* The H_STITCH hops of d, and (-explain codegen) each one's region:
 * under -gpu the pass takes its operators before codegen's exploration,
 * so a DAG's fusion decisions are codegen's operators and these. */
int cg_stitch_count(const HopDag *d);
void cg_stitch_explain(const HopDag *d, FILE *f);
/* -explain codegen: prints the CPlans and generated C of d's operators. */
void cg_explain_dag(CgContext *c, const HopDag *d, FILE *out);
/* Number of fused operators in d by template (Cell, Row, MAgg, Outer);
 * for tests and tools. */
void cg_dag_fused(const HopDag *d, int counts[4]);

/* The optimality oracle of MPSkipEnum (for tests): explores d's fusion
 * plans and, for every plan partition with 1..max_pts interesting points,
 * calls f with the number of points, the cost of MPSkipEnum's assignment
 * and the least cost over all 2^n assignments (exhaustive). The machine
 * constants are cg_machine's (BRAID_CG_MACHINE pins them). Returns the
 * number of partitions compared, -1 when out of memory. The memo holds
 * AMULET entries (unless BRAID_AMULET_FUSE=0); amulet tells whether the
 * partition has some. */
typedef void (*CgOracleFn)(void *arg, int npts, double mpskip_cost, double exhaustive_cost, bool amulet);
int cg_enum_oracle(HopDag *d, int max_pts, CgOracleFn f, void *arg);

/* MPSkipEnum against FusionStitching's explorer (codegen/fxselect.c), per
 * plan partition with interesting points: each selector's assignment
 * costed under codegen's model (getPlanCost, seconds) and the explorer's
 * latency estimate (seconds) of the kernels codegen builds from it
 * (a consumer and an input one memo entry fuses, not separated by a
 * materialized point), the points each materializes, whether the explorer's
 * plan is valid (fx_valid), and the optimization times. Returns the
 * partitions compared, -1 when out of memory. */
typedef struct CgFxResult {
    int npts, nhops;
    double mpskip_cost, fx_cost;         /* codegen's cost model */
    double mpskip_latency, fx_latency;   /* the explorer's latency model of
                                            the kernels codegen builds */
    int mpskip_kernels, fx_kernels;      /* those kernels */
    double fx_own_latency;               /* the explorer's own plan (its */
    int fx_own_kernels;                  /* kernels, which templates may not form) */
    int mpskip_cut, fx_cut;              /* points materialized */
    bool fx_valid;
    int64_t mpskip_ns, fx_ns;
} CgFxResult;
typedef void (*CgFxFn)(void *arg, const CgFxResult *r);
int cg_fx_compare(HopDag *d, CgFxFn f, void *arg);
/* With BRAID_FX_COMPARE=path set, appends cg_fx_compare's results for d
 * to path (one line per partition; codegen runs it on every DAG it
 * optimizes). */
void cg_fx_log(HopDag *d);

#endif
