/* gpuexec.h: the instruction layer's choice of the GPU (gpuexec.c). */
#ifndef BRAID_GPUEXEC_H
#define BRAID_GPUEXEC_H

#include "interp.h"

/* With the GPU backend on (-gpu, sysds.gpu), before instruction in runs:
 * an operator the backend has, over plain matrices, runs on the device
 * when the cost rule says so (always under force). 1: done (regs[out]
 * set), 0: run it on the CPU, -1: device error in e. */
int rt_gpu_step(const Instr *in, Value *regs, BrErr *e);
/* Runs a stitched region (I_STITCH) over its argument values: one
 * stitched kernel on the device when the cost rule says so, else (or
 * when the device does not take the operands) the region's operators on
 * the CPU kernels. *out receives a new matrix. */
int rt_stitch_exec(const Instr *in, Value *args, Value *out, BrErr *e);

#endif
