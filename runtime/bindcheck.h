/* bindcheck.h: `braid -bindcheck` (docs/parity.md, "Signatures checked
 * by calls"). In this mode a call of a DML function (the script's own or
 * the builtin library's) does not run the function's body: it prints one
 * line saying which value each parameter received (the argument given by
 * position or by name, or the parameter's default), after the conversion
 * to the parameter's declared type that the body would see, and the
 * function's outputs; the outputs are empty values of their declared
 * types. A test makes SystemDS-style calls and compares these bindings
 * with SystemDS's signatures.
 *
 * The line, on the run's print output:
 *   bind NAME FILE|p1=VALUE|p2=VALUE|...|->|TYPE out1|TYPE out2
 * VALUE: "double X" (Java's Double.toString), "int N", "boolean TRUE",
 * "string "S"" (\\, \" and control characters escaped), "matrix RxC V"
 * (V: cell (1,1), "-" when empty), "frame RxC "S"" (cell (1,1) as text,
 * "-" when empty, null when missing), "list N (VALUE, name=VALUE, ...)",
 * "none". TYPE: matrix, frame, list, double, int, boolean, string. */
#ifndef BRAID_RUNTIME_BINDCHECK_H
#define BRAID_RUNTIME_BINDCHECK_H

#include "interp.h"

/* Prints fn's binding line for args (fn->nin values, as the call
 * instruction passes them) and sets *out to the list of fn->nout empty
 * outputs. 0, or -1 with the run's error set. */
int rt_bindcheck_call(Rt *rt, const Func *fn, const Value *args, Value *out);

#endif
