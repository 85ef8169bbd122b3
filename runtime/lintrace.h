/* lintrace.h: lineage items of the interpreter's instructions
 * (runtime/lineage.h; the interpreter calls these only while tracing). */
#ifndef BRAID_LINTRACE_H
#define BRAID_LINTRACE_H

#include "lineage.h"
#include "program.h"

/* Opcode of the item of a call's outputs (inputs: the outputs' items in
 * order), which the call's I_OUT instructions take apart. */
extern const char LIN_FCALL[];

/* The item of in's result in regs[in->out], from its inputs' items lr
 * (an input without one counts as a literal of its value); for every
 * kind but I_READ, I_CALL and I_OUT, which the interpreter traces. NULL
 * without memory. */
LinItem *lin_after(LinTrace *t, const Instr *in, const Value *regs, LinItem *const *lr);
/* lineage(X) while tracing: *out = the trace of in's argument as a
 * string; 1 when done, -1 with e set. */
int lin_builtin(LinTrace *t, const Instr *in, LinItem *const *lr, Value *out, BrErr *e);

#endif
