/* pfdep.h: parfor dependency analysis over result variables. */
#ifndef BRAID_PLAN_PFDEP_H
#define BRAID_PLAN_PFDEP_H

#include "../lang/ast.h"
#include "../runtime/program.h"

#include <stdbool.h>

/* The value of a variable defined before the loop when it is a known
 * integer at compile time; false when unknown. */
typedef bool (*PfConst)(void *arg, const char *name, int64_t *v);

/* Do the iterations of parfor (var in from:to by incr) { body } touch the
 * result variables (left-indexed matrices defined before the loop)
 * independently: no cell that one iteration writes is written or read by
 * another? Proved with affine index functions of var (GCD and interval
 * tests, exact enumeration for short known ranges); anything it cannot
 * prove counts as a dependency. *who receives the first result variable
 * with a possible dependency. */
bool pf_results_independent(const Block *body, const char *var, const Expr *from, const Expr *to,
                            const Expr *incr, const NameSet *results, PfConst konst, void *arg,
                            const char **who);

#endif
