/* compile.c: the one compile pipeline of a DAG (plan_compile), used by
 * the first compile of every block and by dynamic recompilation, and the
 * hooks through which the runtime asks for the compiler (recompilation,
 * functions compiled on their first call, explain and statistics). */
#include "build.h"
#include "recompile.h"
#include "dagship.h"
#include "../lang/load.h"
#include "../gpu/gpu.h"

#include <stdlib.h>

Code *plan_compile(RtProgram *p, HopDag *d, int mode, int flags, RwStats *st)
{
    if (!d || d->oom) return NULL;   /* out of memory building d */
    RwStats scratch = {0};
    if (!st) st = &scratch;
    /* a script that calls lineage() keeps its calls (inlining would add
     * the parameters' casts to the trace; SystemDS's calls and inlined
     * functions alike pass the arguments' lineage through) */
    if ((flags & PC_INLINE) && p->optlevel > 0 && p->diag && !lang_uses_lineage(p->ast))
        st->inlined += plan_inline_calls(p, d, p->diag);
    if (d->oom) return NULL;   /* inlining ran out of memory */
    if ((flags & PC_REWRITE) && p->optlevel > 0) {
        rw_static(d, st);
        rw_dynamic(d, st);
        if (!lang_uses_lineage(p->ast)) rw_operator_pairs(d, st);
    }
    if (flags & PC_MARK) {
        /* with codegen on, a wide rank-1 update over a variable of
         * unknown non-zeros is planned with its value (cost.c row_wide) */
        d->recompile = rw_needs_recompile(d) || cg_wide_nnz_unknown(p->cg, d);
        d->cla_maybe = !d->recompile && rw_cla_maybe(d);
    }
    if (!(flags & PC_LOWER)) return NULL;
    /* stitched regions first (-gpu): they take the row/column aggregates
     * in the middle of elementwise work, codegen fuses the rest */
    /* a script that calls lineage() runs unfused: its trace names the
     * operators, as SystemDS's traces of fused operators do
     * (LineageCodegenItem; runtime/lineage.h) */
    bool fuse = (flags & PC_FUSE) && !lang_uses_lineage(p->ast);
    if (fuse && gpu_stitch_on()) cg_stitch_dag(d, p->cg != NULL);
    if (fuse && p->cg) cg_optimize_dag(p->cg, d);
    return plan_codegen_dag(d, mode);
}

/* ---- hooks ---- */

static Code *hook_recompile(RtProgram *p, PBlock *b, SymTab *vars, int mode, bool concurrent, void **ref,
                           bool *hit)
{
    RwStats st = {0};
    RcCode *r = rc_get(p, b, vars, mode, concurrent, &st, hit);
    *ref = r;
    return rc_code(r);
}

static void hook_release(void *ref) { rc_release(ref); }

static void hook_explain(void *ref, FILE *out) { hop_dag_print(rc_dag(ref), out, 2); }

static void hook_free_dag(void *dag) { hop_dag_free(dag); }

static void hook_print_stats(const RtProgram *p, FILE *f)
{
    const RwStats *rw = plan_rw(p);
    if (rw->cse + rw->folded + rw->simplified + rw->physical)
        fprintf(f, "Rewrites (compile time):\t%d CSE, %d folded, %d simplified, %d dynamic, %d mmchain, "
                   "%d physical, %d inlined.\n", rw->cse, rw->folded, rw->simplified,
                rw->dynamic, rw->mmchain, rw->physical, rw->inlined);
}

const RtHooks plan_hooks = {
    .recompile = hook_recompile,
    .release = hook_release,
    .explain = hook_explain,
    .function = plan_function,
    .function_sig = plan_function_sig,
    .free_dag = hook_free_dag,
    .print_stats = hook_print_stats,
    .dagship = &plan_dagship,
};
