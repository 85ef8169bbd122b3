/* builtins.h: the native builtin library of DML (builtins/): builtin
 * functions over values (core.c), statistics (stats.c), deep learning
 * (dnn.c), signal processing (signal.c), frames (frame*.c), transformations
 * (transform.c), Java lambdas of map() (jl*.c), paramserv
 * (paramserv.c) and autoDiff (autodiff.c). The interpreter (runtime/) runs I_BUILTIN instructions
 * through the function registered in its program (RtProgram.builtin),
 * which is bi_builtin; the library calls back into the interpreter for
 * DML functions (eval, paramserv, ...) and for printing. */
#ifndef BRAID_BUILTINS_H
#define BRAID_BUILTINS_H

#include "../runtime/interp.h"

/* Runs the builtin of instruction h (builtins/core.c): a frame argument
 * goes to bi_frame, everything else to the builtin's handler in ops.def's
 * handler column. On error returns non-zero with e set; *out receives a
 * new value. */
int bi_builtin(Rt *rt, Frame *f, const Instr *h, Value *args, Value *out, BrErr *e);
/* A handler of ops.def's handler column: BI_NOT_MINE for a builtin it does
 * not run. */
typedef int (*BiHandler)(Rt *rt, Frame *f, const Instr *h, Value *args, Value *out, BrErr *e);
int bi_core(Rt *rt, Frame *f, const Instr *h, Value *args, Value *out, BrErr *e);
/* A builtin that lowers to an operator (abs, rowSums, t, ...), called by
 * name at run time: the operator's semantics. */
int bi_operator(Rt *rt, Frame *f, const Instr *h, Value *args, Value *out, BrErr *e);
/* Argument helpers of the builtins (builtins/core.c): whether an
 * optional argument was given, a number (also a 1x1 matrix or a numeric
 * string), a boolean, a string; errors name the argument. bi_ret_mb wraps
 * a kernel result (NULL: the kernel's error). */
bool bi_given(const Value *v);
int bi_num(const Value *v, const char *what, double *out, BrErr *e);
int bi_bool(const Value *v, const char *what, bool *out, BrErr *e);
const char *bi_str(const Value *v, const char *what, BrErr *e);
int bi_ret_mb(MB *m, Value *out, BrErr *e);
/* Splits a comma-separated string argument into at most max items that
 * point into *buf (caller frees it); returns the count or -1. */
int bi_split(const Value *v, const char *what, const char **items, int max, char **buf, BrErr *e);

/* The other handlers, in their own files (stats.c, frame.c, dnn.c,
 * signal.c); each returns BI_NOT_MINE for a builtin it does not run. */
#define BI_NOT_MINE (-1000)
int bi_stats(Rt *rt, Frame *f, const Instr *h, Value *args, Value *out, BrErr *e);
int bi_frame(Rt *rt, Frame *f, const Instr *h, Value *args, Value *out, BrErr *e);
int bi_dnn(Rt *rt, Frame *f, const Instr *h, Value *args, Value *out, BrErr *e);
int bi_signal(Rt *rt, Frame *f, const Instr *h, Value *args, Value *out, BrErr *e);
/* autoDiff(output=, lineage=) from a lineage trace (builtins/autodiff.c) */
int bi_autodiff(Rt *rt, Frame *f, const Instr *h, Value *args, Value *out, BrErr *e);
int bi_count_distinct(const Value *a, const char *fn, Value *out, BrErr *e);   /* stats.c */
/* Fills fn's unbound parameters in bound[0..fn->nin) with their defaults
 * (literals, or the default function of the parameters before them) and
 * calls fn (*res: its outputs as a list, caller releases); errors read
 * "<who>: missing argument 'p' of <what>'fn'". Returns 0 or -1/code. */
/* The namespace key of the file a span lies in ("" if unknown), for
 * looking up functions named at run time from the calling file. */
const char *bi_ns_of(const Rt *rt, Span sp);
int bi_call_defaults(Rt *rt, Frame *f, Func *fn, Value *bound, const char *who, const char *what, Value *res,
                     BrErr *e);
/* paramserv(model=, features=, labels=, upd=, agg=, ...) (builtins/paramserv.c) */
int bi_paramserv(Rt *rt, Frame *f, const Instr *h, Value *args, Value *out, BrErr *e);

#endif
