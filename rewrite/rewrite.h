/* rewrite.h: HOP DAG rewrites (seed 002, section 3.1) and program-level
 * optimizations (section 3.2):
 *  - static, size-independent: common subexpression elimination, constant
 *    folding (by executing the operators on literals), algebraic
 *    simplifications, a second CSE pass;
 *  - dynamic, size-dependent: removal of unnecessary indexing and
 *    aggregates over vectors, empty-operand removal, diag simplifications,
 *    matrix multiplication chain ordering, then physical operator
 *    selection (tsmm, mmchain, transpose-free t(X)%*%y) and memory
 *    estimates;
 *  - program level: branch removal for constant predicates.
 * Every rewrite keeps results equal to the unrewritten plan. */
#ifndef BRAID_REWRITE_H
#define BRAID_REWRITE_H

#include "../hops/hop.h"

/* Counters of applied rewrites (for -stats and tests). */
typedef struct RwStats {
    int cse, folded, simplified, dynamic, mmchain, physical, inlined;
} RwStats;

/* Static rewrites of one DAG. */
void rw_static(HopDag *d, RwStats *st);
/* Dynamic rewrites and operator selection of one DAG (sizes as known). */
void rw_dynamic(HopDag *d, RwStats *st);
/* After rw_dynamic: two operators of one input computed as one
 * (rw_tsmm_cbind), then CSE. Not for a script that calls lineage(): its
 * trace names SystemDS's operators (tsmm, ba+*). */
void rw_operator_pairs(HopDag *d, RwStats *st);
/* Re-infers sizes bottom-up (after TREAD sizes changed). */
void rw_propagate_sizes(HopDag *d);
/* True if some matrix HOP of d has unknown dimensions. */
bool rw_needs_recompile(const HopDag *d);
/* Does d read a variable that sysds.compressed.linalg=auto may compress
 * at a loop's entry (an H_TREAD of cbytes -2)? Such a DAG is recompiled
 * only when the value it reads is compressed (Code.cla_maybe). */
bool rw_cla_maybe(const HopDag *d);
/* Value of a literal predicate DAG: 1 true, 0 false, -1 not constant. */
int rw_const_pred(const HopDag *d);


/* Internal: the pass driver shared by the rewrite files. */
typedef struct RwPass RwPass;
typedef Hop *(*RwRule)(RwPass *p, Hop *h);
struct RwPass {
    HopDag *d;
    Hop **map;       /* replacement of hop id, or NULL */
    int cap;
    int changed;
    RwStats *st;
};
/* Applies rule to every reachable hop bottom-up until nothing changes. */
void rw_run(HopDag *d, RwRule rule, RwStats *st);
Hop *rw_simplify(RwPass *p, Hop *h);     /* simplify.c */
Hop *rw_dynamic_rule(RwPass *p, Hop *h); /* dynamic.c */
Hop *rw_physical_rule(RwPass *p, Hop *h);/* dynamic.c */
void rw_mmchain(HopDag *d, RwStats *st); /* dynamic.c */
/* t(X) %*% X and t(X) %*% v of one X in a DAG -> tsmma(X, v) and two
 * blocks of it: one pass over X (dynamic.c) */
int rw_tsmm_cbind(HopDag *d, RwStats *st);   /* the pairs */
bool rw_is_lit(const Hop *h, double v);  /* numeric literal equal to v */
bool rw_same_dims(const Hop *a, const Hop *b);
int rw_uses(const HopDag *d, const Hop *h); /* consumers of h (incl. writes, roots) */

#endif
