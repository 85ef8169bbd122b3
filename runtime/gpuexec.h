/* gpuexec.h: the instruction layer's choice of the GPU (gpuexec.c). */
#ifndef BRAID_GPUEXEC_H
#define BRAID_GPUEXEC_H

#include "interp.h"

/* With the GPU backend on (-gpu, sysds.gpu), before instruction in runs:
 * an operator the backend has, over plain matrices, runs on the device
 * when the cost rule says so (always under force). 1: done (regs[out]
 * set), 0: run it on the CPU, -1: device error in e. */
int rt_gpu_step(const Instr *in, Value *regs, BrErr *e);

#endif
