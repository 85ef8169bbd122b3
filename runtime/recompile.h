/* recompile.h: dynamic recompilation of HOP DAGs with run-time sizes. */
#ifndef BRAID_RECOMPILE_H
#define BRAID_RECOMPILE_H

#include "../plan/program.h"
#include "symtab.h"

/* Recompiles a copy of src with the sizes (and scalar values) of vars;
 * returns its instructions. The caller frees both (plan_code_free,
 * hop_dag_free on *copy). */
Code *rc_recompile(RtProgram *p, HopDag *src, SymTab *vars, int mode, HopDag **copy, RwStats *st);

#endif
