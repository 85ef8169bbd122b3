/* bound.h: the physical-bound meter of the end-to-end benchmark
 * (docs/perf.md). With BRAID_BOUND="READ_GBS GEMM_GFS" in the
 * environment (rates measured in the same run by bench/rates), every
 * executed instruction adds the time the machine needs at least for it:
 * max(bytes it reads and writes / READ_GBS, FLOPs / GEMM_GFS), with the
 * FLOPs of its matrix products (fused operators: their products). time()
 * marks the running sum; at exit the bound between the last two marks is
 * printed on stderr as "BOUND seconds=... read_bytes=... write_bytes=...
 * flops=...". Off (one branch per instruction) without the variable. */
#ifndef BRAID_RUNTIME_BOUND_H
#define BRAID_RUNTIME_BOUND_H

#include "program.h"

extern int rt_bound_on;   /* -1 unknown, 0 off, 1 on */

/* Reads BRAID_BOUND once; true when the meter runs. */
bool rt_bound_enabled(void);
/* Adds instruction in (executed; its registers still hold its inputs
 * and output); returns its bound in seconds (-stats shows them summed
 * per heavy hitter). */
double rt_bound_instr(const Instr *in, const Value *regs);
/* A time() call: the mark the interval at exit ends with. */
void rt_bound_mark(void);

#endif
