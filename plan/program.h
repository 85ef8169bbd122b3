/* program.h: the compiler's side of the runtime program (runtime/
 * program.h): the one compile pipeline of a DAG (rewrites, fusion,
 * lowering to instructions), liveness, dynamic recompilation and explain
 * output. Program blocks keep their HOP DAG (PBlock.dag) for
 * recompilation; the runtime reaches the compiler only through the hooks
 * plan installs (plan_hooks). */
#ifndef BRAID_PLAN_PROGRAM_H
#define BRAID_PLAN_PROGRAM_H

#include "../codegen/codegen.h"
#include "../hops/hop.h"
#include "../rewrite/rewrite.h"
#include "../runtime/program.h"

/* The compiler's state of a runtime program (RtProgram.cstate). */
typedef struct PlanState {
    RwStats rw;           /* rewrites applied (compile time) */
    /* files the program writes (write() with a literal path), and whether
     * some write's path is only known at run time: a read of such a file
     * cannot trust its .mtd at compile time (plan/build.c, mtd_sizes) */
    NameSet written;
    bool writes_unknown;
    bool writes_scanned;
} PlanState;

static inline RwStats *plan_rw(const RtProgram *p) { return &((PlanState *)p->cstate)->rw; }
static inline HopDag *plan_dag(const PBlock *b) { return (HopDag *)b->dag; }

/* The one compile pipeline of a DAG, used for the first compile and for
 * dynamic recompilation: the steps flags select, in order. */
enum {
    PC_INLINE = 1,     /* inline calls of small functions (first compile) */
    PC_REWRITE = 2,    /* static and dynamic rewrites (optlevel > 0) */
    PC_MARK = 4,       /* set the recompilation flag from unknown sizes */
    PC_FUSE = 8,       /* operator fusion (when codegen is on) */
    PC_LOWER = 16,     /* lower to instructions (else the result is NULL) */
};
#define PC_ALL (PC_INLINE | PC_REWRITE | PC_MARK | PC_FUSE | PC_LOWER)
/* NULL also when out of memory (d->oom set; the first compile reports it
 * in plan_finalize, recompilation through the interpreter). */
Code *plan_compile(RtProgram *p, HopDag *d, int mode, int flags, RwStats *st);

/* Lowering of one DAG to instructions (plan/instgen.c); NULL (d->oom set)
 * when out of memory. */
Code *plan_codegen_dag(HopDag *d, int mode);

/* Liveness over a block list: fills live_out of every block; returns the
 * variables live on entry in *live_in (caller frees with ns_free). */
void plan_liveness(PBList *l, const NameSet *live_after, NameSet *live_in);

/* The hooks the runtime calls (recompilation, lazy functions, ...). */
extern const RtHooks plan_hooks;

/* Print the runtime program (-explain runtime). */
void plan_print(const RtProgram *p, FILE *out);
/* Print every HOP DAG (-explain hops). */
void plan_print_hops(const RtProgram *p, FILE *out);
/* Calls visit(ctx, title, dag) for the DAG of every statement block
 * (predicates of if/while, ranges of for included) in program order: the
 * main program's, then the user's functions', then, with library, the
 * builtin library's. title: "scope: KIND line N[ (predicate)]". */
typedef void (*DagVisit)(void *ctx, const char *title, const HopDag *d);
void plan_each_dag(const RtProgram *p, bool library, DagVisit visit, void *ctx);
/* One Graphviz graph per DAG (hop_dag_dot), in plan_each_dag's order. */
void plan_print_dot(const RtProgram *p, FILE *out, bool library);

#endif
