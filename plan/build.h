/* build.h: AST -> runtime program (program blocks, HOP DAGs, instructions). */
#ifndef BRAID_PLAN_BUILD_H
#define BRAID_PLAN_BUILD_H

#include "program.h"
#include "../base/diag.h"

/* Builds the main program (optlevel: sysds.optlevel; cg: operator fusion
 * options, NULL for none); NULL on errors (reported to d). The program
 * references ast, which must outlive it. Free with plan_program_free. */
RtProgram *plan_build_program(Program *ast, Diag *d, int optlevel, const CgOptions *cg);
/* The same, with variables the caller reads after the run (kept live). */
RtProgram *plan_build_program_outputs(Program *ast, Diag *d, int optlevel, const CgOptions *cg,
                                      const char *const *outputs, int noutputs);
/* The same, with main (in ast's arena) as the main statements instead
 * of ast's own (lang_main_transposed). */
RtProgram *plan_build_program_main(Program *ast, const Block *main, Diag *d, int optlevel,
                                   const CgOptions *cg, const char *const *outputs, int noutputs);
/* The compiled form of function f (compiled on first use, thread-safe);
 * NULL if it has errors (reported to d). */
FProg *plan_function(RtProgram *p, Func *f, Diag *d);
void plan_program_free(RtProgram *p);
/* The specialization of call's callee for the sizes of its matrix
 * arguments (and, with values, its literal number arguments), compiled on
 * first use; NULL when nothing is known or the function has its quota
 * (inter-procedural analysis, plan/build.c). Thread-safe. */
FProg *plan_specialize(RtProgram *p, Hop *call, Diag *d, bool values);
/* The specialization of f for signature sig (one entry per parameter),
 * found or compiled (a remote parfor worker: the one rank 0 ran). */
FProg *plan_function_sig(RtProgram *p, Func *f, const FSig *sig, Diag *d);
/* Inlines calls of small single-block side-effect-free functions into d;
 * returns how many (plan/inline.c). */
int plan_inline_calls(RtProgram *p, HopDag *d, Diag *diag);

#endif
