/* recompile.h: dynamic recompilation of HOP DAGs with run-time sizes. */
#ifndef BRAID_RECOMPILE_H
#define BRAID_RECOMPILE_H

#include "program.h"
#include "../runtime/symtab.h"

/* Recompiles a copy of src with the sizes (and scalar values) of vars;
 * returns its instructions. The caller frees both (plan_code_free,
 * hop_dag_free on *copy). */
Code *rc_recompile(RtProgram *p, HopDag *src, SymTab *vars, int mode, HopDag **copy, RwStats *st);

/* Code for block b (its DAG b->dag) with the sizes of vars: reused from
 * the block's cache when the sizes and the scalar values that matter
 * equal those of an earlier recompilation (*hit), else recompiled and
 * cached. Scalar variables that only enter as values stay variables.
 * Thread-safe; NULL only without memory. Release with rc_release. */
typedef struct RcCode RcCode;
RcCode *rc_get(RtProgram *p, PBlock *b, SymTab *vars, int mode, bool concurrent, RwStats *st, bool *hit);
Code *rc_code(RcCode *r);
HopDag *rc_dag(RcCode *r);   /* the recompiled DAG the code refers to */
void rc_release(RcCode *r);
/* Turns the reuse on or off for the whole process (default: on unless
 * the environment has BRAID_RECOMPILE_CACHE=0); off, every execution
 * recompiles with all scalar variables as literals, as rc_recompile. */
void rc_set_cache(bool on);
/* The small-block rule (recompile.c): blocks whose recent compiled
 * versions ran on matrices of at most `cells` cells are recompiled
 * unfused. 0 turns it off; the default is 4096, or the environment's
 * BRAID_RECOMPILE_SMALL. */
void rc_set_small_cells(int64_t cells);

#endif
