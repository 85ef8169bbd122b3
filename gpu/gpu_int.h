/* gpu_int.h: the backend's internals shared by its files (ocl.c: device,
 * program, launches; pool.c: resident buffers; ops.c: operators;
 * stitch.c: stitched kernels). */
#ifndef BRAID_GPU_INT_H
#define BRAID_GPU_INT_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <pthread.h>

#include "gpu.h"

/* OpenCL's entry points, through pointers that gpu_init loads
 * (gpu_cl_load: dlopen of the ICD loader, libOpenCL.so.1) the first time
 * the GPU backend is asked for, so that a run without it does not load
 * the loader and CLBlast's C++ libraries at every start. The names stay
 * OpenCL's: the macros below point each at its pointer. */
#define GPU_CL_FNS(X) \
    X(clSetKernelArg) X(clGetDeviceInfo) X(clEnqueueReadBuffer) X(clReleaseMemObject) X(clCreateBuffer) \
    X(clCreateKernel) X(clEnqueueNDRangeKernel) X(clFinish) X(clReleaseProgram) X(clEnqueueWriteBuffer) \
    X(clEnqueueFillBuffer) X(clReleaseKernel) X(clGetKernelWorkGroupInfo) X(clReleaseEvent) \
    X(clEnqueueCopyBuffer) X(clCreateProgramWithSource) X(clCreateContext) X(clCreateCommandQueue) \
    X(clWaitForEvents) X(clRetainMemObject) X(clGetProgramBuildInfo) X(clGetPlatformInfo) X(clGetPlatformIDs) \
    X(clGetMemObjectInfo) X(clGetEventInfo) X(clGetDeviceIDs) X(clBuildProgram)
typedef struct GpuCl {
#define GPU_CL_PTR(f) __typeof__(f) *p_##f;
    GPU_CL_FNS(GPU_CL_PTR)
#undef GPU_CL_PTR
} GpuCl;
extern GpuCl gpu_cl;
/* Loads them once (false, with e set, when the ICD loader is missing). */
int gpu_cl_load(BrErr *e);
#define clSetKernelArg (*gpu_cl.p_clSetKernelArg)
#define clGetDeviceInfo (*gpu_cl.p_clGetDeviceInfo)
#define clEnqueueReadBuffer (*gpu_cl.p_clEnqueueReadBuffer)
#define clReleaseMemObject (*gpu_cl.p_clReleaseMemObject)
#define clCreateBuffer (*gpu_cl.p_clCreateBuffer)
#define clCreateKernel (*gpu_cl.p_clCreateKernel)
#define clEnqueueNDRangeKernel (*gpu_cl.p_clEnqueueNDRangeKernel)
#define clFinish (*gpu_cl.p_clFinish)
#define clReleaseProgram (*gpu_cl.p_clReleaseProgram)
#define clEnqueueWriteBuffer (*gpu_cl.p_clEnqueueWriteBuffer)
#define clEnqueueFillBuffer (*gpu_cl.p_clEnqueueFillBuffer)
#define clReleaseKernel (*gpu_cl.p_clReleaseKernel)
#define clGetKernelWorkGroupInfo (*gpu_cl.p_clGetKernelWorkGroupInfo)
#define clReleaseEvent (*gpu_cl.p_clReleaseEvent)
#define clEnqueueCopyBuffer (*gpu_cl.p_clEnqueueCopyBuffer)
#define clCreateProgramWithSource (*gpu_cl.p_clCreateProgramWithSource)
#define clCreateContext (*gpu_cl.p_clCreateContext)
#define clCreateCommandQueue (*gpu_cl.p_clCreateCommandQueue)
#define clWaitForEvents (*gpu_cl.p_clWaitForEvents)
#define clRetainMemObject (*gpu_cl.p_clRetainMemObject)
#define clGetProgramBuildInfo (*gpu_cl.p_clGetProgramBuildInfo)
#define clGetPlatformInfo (*gpu_cl.p_clGetPlatformInfo)
#define clGetPlatformIDs (*gpu_cl.p_clGetPlatformIDs)
#define clGetMemObjectInfo (*gpu_cl.p_clGetMemObjectInfo)
#define clGetEventInfo (*gpu_cl.p_clGetEventInfo)
#define clGetDeviceIDs (*gpu_cl.p_clGetDeviceIDs)
#define clBuildProgram (*gpu_cl.p_clBuildProgram)

/* The fixed kernels of clsrc.c (ocl.c looks each up once). */
typedef enum {
    K_EW_UNARY, K_EW_BINARY, K_CSR_BINARY, K_CSR_UNARY, K_CSR_TO_DENSE, K_CSR_MM,
    K_COL_NONFINITE, K_CSR_ROW_BAD, K_CSR_TMM, K_DENSE_CSR_MM, K_TMM_CSRB, K_CSR_CSR_MM, K_CSR_TSMM_R, K_PART_SUM,
    K_TRANSPOSE, K_SYM_LOWER, K_AGG_ROW, K_AGG_COL, K_AGG_PART, K_AGG_SEG, K_AGG_SEG_COL, K_CUM_COL, K_IFELSE,
    K_SLICE, K_LIX, K_LIX_ROWS, K_CLA_GROUP, K_CLA_UNC_CSR, K_CLA_LISTS, K_PROBE_NOP, K_PROBE_RD, K_PROBE_CP, K_COUNT
} GpuKernel;

typedef struct GpuCtx {
    cl_context ctx;
    cl_device_id dev;
    cl_command_queue q;
    cl_program prog;
    cl_kernel k[K_COUNT];
    GpuInfo info;
    double budget;             /* pool budget in bytes */
} GpuCtx;

/* The context (after gpu_init succeeded) and the lock every entry point
 * holds while it uses it. */
extern GpuCtx gpu_ctx;
extern pthread_mutex_t gpu_lock;
extern GpuStats gpu_st;

/* OpenCL C: the cell (i, j) of a CSR matrix (row pointers rp, sorted
 * column indices ci, values v), found by a binary search of row i; 0
 * where none is stored. The fixed kernels (clsrc.c) and the stitched
 * regions over a CSR X (stitch.c) both read cells with it. */
#define GPU_CL_CSR_AT                                                                                       \
    "static inline double csr_at(__global const long *rp, __global const int *ci, __global const double *v,\n" \
    "                            long i, long j)\n"                                                        \
    "{\n"                                                                                                  \
    "    long lo = rp[i], hi = rp[i + 1];\n"                                                               \
    "    while (lo < hi) {\n"                                                                              \
    "        long m = lo + (hi - lo) / 2, c = ci[m];\n"                                                    \
    "        if (c == j) return v[m];\n"                                                                   \
    "        if (c < j) lo = m + 1;\n"                                                                     \
    "        else hi = m;\n"                                                                               \
    "    }\n"                                                                                              \
    "    return 0.0;\n"                                                                                    \
    "}\n"
/* OpenCL C: ST_SHFL(v, w), the value of lane l ^ w of the warp (a
 * butterfly step), where the program is built with ST_NV (ocl.c
 * gpu_build's options, GpuInfo.warp_shfl): on NVIDIA's driver by inline
 * PTX (shfl.sync.bfly, the double's two halves), which OpenCL C 1.2 has
 * no function for; with ST_SHFL_EMU too (BRAID_GPU_SHFL=emu, for the
 * tests on other devices) through the work-group's scratch array sh and
 * two barriers, so every work-item must reach it, as it reaches the
 * trees. A work-group's warps are runs of 32 consecutive local ids. */
#define GPU_CL_SHFL                                                                                         \
    "#ifdef ST_NV\n"                                                                                         \
    "#ifdef ST_SHFL_EMU\n"                                                                                   \
    "#define ST_SHFL(v, w) st_shfl_emu(sh, l, v, w)\n"                                                       \
    "static inline double st_shfl_emu(__local double *sh, int l, double v, int w)\n"                         \
    "{\n"                                                                                                    \
    "    sh[l] = v;\n"                                                                                       \
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"                                                                    \
    "    const double o = sh[l ^ w];\n"                                                                      \
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"                                                                    \
    "    return o;\n"                                                                                        \
    "}\n"                                                                                                    \
    "#else\n"                                                                                                \
    "#define ST_SHFL(v, w) st_shfl(v, w)\n"                                                                  \
    "static inline double st_shfl(double v, int w)\n"                                                       \
    "{\n"                                                                                                    \
    "    const uint2 h = as_uint2(v);\n"                                                                     \
    "    uint lo, hi;\n"                                                                                     \
    "    asm volatile(\"shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;\" : \"=r\"(lo) : \"r\"(h.x), \"r\"(w));\n" \
    "    asm volatile(\"shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;\" : \"=r\"(hi) : \"r\"(h.y), \"r\"(w));\n" \
    "    return as_double((uint2)(lo, hi));\n"                                                               \
    "}\n"                                                                                                    \
    "#endif\n"                                                                                               \
    "#endif\n"
/* The cells of one row a work-item of the cell by cell fixed kernels
 * (ew_unary, ew_binary, ew_ifelse, slice) takes where an operand is CSR
 * (clsrc.c SEG, CUR, CV: one binary search per segment, then a cursor) */
#define GPU_CSR_SEG 32
/* The source of the fixed kernels (malloc'd; NULL without memory). */
char *gpu_cl_source(void);
/* The scalar helpers alone (malloc'd): the head of generated kernels. */
char *gpu_cl_prelude(void);
/* Builds a program from source for the device; NULL with e set (the
 * build log in the message). */
cl_program gpu_build(const char *src, BrErr *e);
/* Background kernel builds (sysds.gpu.async; stitch.c owns the hold and
 * the count that stitch_async_wait waits for): gpu_async_start, under
 * gpu_lock, starts job(arg) in a detached thread and counts it (false:
 * no thread, the caller builds now); the job calls gpu_async_gate
 * (without the lock: waits while tests hold builds back) before it
 * builds, and gpu_async_done (under the lock) at its end. */
bool gpu_async_start(void *(*job)(void *), void *arg);
void gpu_async_gate(void);
void gpu_async_done(void);
/* Calibrates the device profile once (profile.c), under gpu_lock, the
 * device created; gpu_print_profile: its -stats line. */
void gpu_profile_device(void);
void gpu_print_profile(FILE *f);
/* an OpenCL error as a braid error */
int gpu_clerr(BrErr *e, cl_int rc, const char *what);

/* A device buffer of bytes (at least 1); NULL with e set, or with e
 * clear when bytes exceed the device's largest buffer (the operator then
 * falls back to the CPU). Evicts pool entries when the budget would be
 * exceeded. */
cl_mem gpu_alloc(size_t bytes, BrErr *e);
/* Releases a buffer of gpu_alloc's (every buffer the backend frees is
 * one): held by no one else, it goes to the allocator's cache for
 * gpu_alloc to hand out again (pool.c). NULL is ignored. */
void gpu_free(cl_mem m);
/* A second holder of m (clRetainMemObject, counted so that gpu_free
 * caches m only when its last holder frees it); false without memory
 * (m not retained). */
bool gpu_share(cl_mem m);
/* Frees every cached buffer (gpu_pool_clear; allocation failures). */
void gpu_cache_clear(void);
/* Launch a 1-D kernel over n items (local size chosen by the driver
 * unless local > 0, rounded up), counted in the stats. */
int gpu_launch1(cl_kernel k, size_t n, size_t local, BrErr *e);
int gpu_launch2(cl_kernel k, size_t n0, size_t n1, size_t l0, size_t l1, BrErr *e);
/* A new device buffer holding bytes of host memory p (counted as a
 * transfer); NULL with e set. */
cl_mem gpu_upload(const void *p, size_t bytes, BrErr *e);
/* A device buffer holding a copy of bytes of host memory p, written
 * without waiting (the copy is freed once the write completed): for the
 * small arrays of a launch (scalars, offsets, counters), which a
 * buffer created per launch or a blocking write (the host waiting for
 * every earlier kernel) made dear. Not counted as a transfer (the
 * caller counts what it counts); NULL with e set. */
cl_mem gpu_upload_small(const void *p, size_t bytes, BrErr *e);
/* Sets kernel arguments: a list of (size, pointer) pairs ending in 0. */
int gpu_args(cl_kernel k, BrErr *e, ...);

/* A resident copy of a host block: dense d, or CSR rp/ci/v with nnz
 * entries (a device result's may include explicit zeros: it has its
 * input's structure; landing drops them). */
typedef struct GpuBuf {
    cl_mem d, rp, ci, v;
    bool sparse;
    int64_t nnz;
} GpuBuf;
/* The device copy of m (uploaded on a miss); pinned until gpu_unpin_all. */
int gpu_get(const MB *m, GpuBuf *out, BrErr *e);
/* Registers a result: the host block r (the caller's) now has the device
 * copy b, which the pool owns from here (released when evicted). False
 * without memory for the entry (b released: a device-only r lost its
 * cells, the caller fails). */
bool gpu_put(MB *r, const GpuBuf *b);
void gpu_unpin_all(void);
/* Installs the pool's landing of device-only blocks as mb_dev_land. */
void gpu_pool_hook(void);
/* Frees entries whose host block only the pool holds. */
void gpu_pool_trim(void);
void gpubuf_release(GpuBuf *b);
/* A dense device view of m (its copy b): b's buffer, or (sparse) a new
 * one filled by csr_to_dense, which *tmp then holds for the caller;
 * NULL with e set, or clear for a buffer beyond the largest. */
cl_mem gpu_dense_view(const MB *m, const GpuBuf *b, cl_mem *tmp, BrErr *e);
/* A sparse result with the structure of the CSR device copy ab (of a
 * block of a's shape) and the values in v (owned): device-only, sharing
 * ab's row pointers and columns (explicit zeros dropped on landing). */
MB *gpu_csr_result(const MB *a, const GpuBuf *ab, cl_mem v, BrErr *e);
/* The dense result in d (owned: kept by the pool with the new block, or
 * released) as a host block with exact nnz and the CPU's format rule. */
MB *gpu_dense_result(int64_t rows, int64_t cols, cl_mem d, BrErr *e);

#endif
