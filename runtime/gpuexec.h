/* gpuexec.h: the instruction layer's choice of the GPU (gpuexec.c). */
#ifndef BRAID_GPUEXEC_H
#define BRAID_GPUEXEC_H

#include "interp.h"

/* With the GPU backend on (-gpu, sysds.gpu), before instruction in runs:
 * an operator the backend has, over plain matrices, runs on the device
 * when the cost rule says so (always under force). 1: done (regs[out]
 * set), 0: run it on the CPU, -1: device error in e. */
int rt_gpu_step(const Instr *in, Value *regs, BrErr *e);
/* A fused operator (I_FUSED) of codegen context cg on the device
 * (cg_exec_gpu: Row plans), as rt_gpu_step: 1 done, 0 the CPU, -1 error. */
int rt_gpu_fused(void *cg, const Instr *in, Value *regs, BrErr *e);
/* Runs a stitched region (I_STITCH) over its argument values: one
 * stitched kernel on the device when the cost rule says so, else (or
 * when the device does not take the operands) the region's operators on
 * the CPU kernels. *out receives a new matrix. */
int rt_stitch_exec(const Instr *in, Value *args, Value *out, BrErr *e);
/* Before instruction in runs on the CPU: its inputs' device-only
 * matrices (lazy copy-back, docs/gpu.md) land on the host. */
int rt_gpu_host_inputs(const Instr *in, const Value *regs, BrErr *e);
/* Before an in-place update of v's block (left indexing, where-loops at
 * the register's last use): a block held only by v and the device pool
 * leaves the pool, so that it is updated in place instead of copied. */
void rt_gpu_before_update(const Value *v);

#endif
