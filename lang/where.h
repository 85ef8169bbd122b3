/* where.h: helpers over where-loops (ast.h's WhereLoop, docs/amulet.md)
 * shared by the HOP builder (plan/) and AMULET (codegen/amulet*.c): both
 * must agree on the order of a where-loop's inputs. */
#ifndef BRAID_WHERE_H
#define BRAID_WHERE_H

#include "ast.h"
#include "../base/arena.h"

/* Maximum of distinct variables a where-loop body may read. */
#define WHERE_MAXLEAVES 32

/* The loop variable e names (an EX_IDENT), or -1. */
int where_var(const WhereLoop *w, const Expr *e);

/* The distinct variables the body of w reads (other than its loop
 * variables; over every result's body), in order of first appearance,
 * into names[0..max); returns
 * their number (more than max: the body reads too many). The input
 * order of a where-loop's HOP is: R, then from and to of each loop
 * variable, then these variables, then the step of each stepped loop
 * variable (WhereVar.step), in variable order. */
int where_leaves(const WhereLoop *w, const char **names, int max);

/* The results of w (1 + the links of w->more), and whether name is one
 * of them. A where-loop's HOP reads the current value of every result:
 * the first is its input 0, the others follow the steps, in order. */
int where_nres(const WhereLoop *w);
bool where_result(const WhereLoop *w, const char *name);

/* May a where-loop body call builtin bi with nargs positional arguments
 * (the elementwise ones: ifelse, binary min/max, unary operators)? */
bool where_builtin_ok(const BuiltinInfo *bi, int nargs);

/* Replaces in b (and the blocks inside it) every nest of `for` loops that
 * computes a where-loop (seed 4.1: perfectly nested loops over a:b around
 * one statement R[i,j] += e, R[i,j] = R[i,j] + e, R[i,j] = min(R[i,j], e)
 * / max, or R[i,j] = e over exactly R's indices; e a valid where body
 * whose matrices are all indexed by two loop variables, see
 * docs/amulet.md) by `R = where(...)` and the loop variables' final
 * values. Run on validated code; allocation in a. */
void where_lift_block(Arena *a, Block *b);

#endif
