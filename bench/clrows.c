/* clrows: what bounds a stitched row kernel's bandwidth on an OpenCL
 * device. Hand-written layernorm kernels over a dense X (rows x cols,
 * default 65536 x 1024, fp64) in the stitched kernels' shape (LS lanes
 * a row, X kept in VPT registers a lane, the reductions across the row's
 * lanes, one pass written), built with compile-time switches, each
 * timed alone, X resident (20 launches then clFinish, best of 5):
 *   copy      the same geometry reading X and writing Y, no arithmetic:
 *             the pattern's ceiling
 *   KAHAN     the sums compensated (braid's cg_kadd) or plain
 *   DIV       each cell divided by the deviation (braid's bits) or
 *             multiplied by its reciprocal
 *   SHFL      the in-warp steps of the reductions by warp shuffles
 *             (gpu_int.h GPU_CL_SHFL, inline PTX: NVIDIA only) or
 *             the local-memory tree with a barrier a step
 *   LS, VPT   lanes a row (32: a warp a row, 4 rows a work-group of
 *             128) and cells a lane
 * So a gap between the copy and braid's arithmetic (KAHAN=1 DIV=1)
 * splits into the arithmetic's share and the reductions' share. Every
 * variant's output is checked against the host's (1e-12 relative).
 *   build/bench/clrows [ROWS COLS]
 * Results: bench/results/gpu-*.txt; docs/gpu.md, "Benchmark". */
#define CL_TARGET_OPENCL_VERSION 120
#define CL_BENCH_NAME "clrows"
#include <math.h>
#include <string.h>

#include "clbench.h"
#include "gpu/gpu_int.h"   /* GPU_CL_SHFL: the stitched kernels' warp shuffle */

static const char *src =
    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    "#pragma OPENCL FP_CONTRACT OFF\n"
    GPU_CL_SHFL
    "static inline void kadd(double *s, double *c, double x)\n{\n"
    "#if KAHAN\n"
    "    double y = x + *c, t = *s + y;\n    *c = fabs(t) <= DBL_MAX ? y - (t - *s) : 0;\n    *s = t;\n"
    "#else\n    *s += x;\n#endif\n}\n"
    "static double rsum(double a, __local double *sh, int l, int lane, int slot)\n{\n"
    "#if SHFL\n"
    "    if (LS > 32) {\n        sh[l] = a;\n        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "        for (int w = LS / 2; w >= 32; w /= 2) {\n            if (lane < w) sh[l] += sh[l + w];\n"
    "            barrier(CLK_LOCAL_MEM_FENCE);\n        }\n        a = sh[l];\n    }\n"
    "    for (int w = (LS > 32 ? 32 : LS) / 2; w > 0; w /= 2) {\n"
    "        const double o = ST_SHFL(a, w);\n        a = (lane & w) ? o + a : a + o;\n    }\n"
    "    if (LS > 32) {\n        if (lane == 0) sh[slot * LS] = a;\n        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "        a = sh[slot * LS];\n        barrier(CLK_LOCAL_MEM_FENCE);\n    }\n    return a;\n"
    "#else\n"
    "    sh[l] = a;\n    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (int w = LS / 2; w > 0; w /= 2) {\n        if (lane < w) sh[l] += sh[l + w];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n    }\n"
    "    a = sh[slot * LS];\n    barrier(CLK_LOCAL_MEM_FENCE);\n    return a;\n"
    "#endif\n}\n"
    "__kernel void ln(long rows, long cols, __global const double *x, __global double *y, __local double *sh)\n{\n"
    "    const int l = get_local_id(0), lane = l % LS, slot = l / LS;\n"
    "    const long row = get_group_id(0) * (long)(get_local_size(0) / LS) + slot;\n"
    "    const bool act = row < rows;\n"
    "    __global const double *xr = x + row * cols;\n    __global double *yr = y + row * cols;\n"
    "    double xv[VPT];\n"
    "#pragma unroll\n"
    "    for (int t = 0; t < VPT; t++) {\n        const long p = lane + (long)t * LS;\n"
    "        xv[t] = act && p < cols ? xr[p] : 0;\n    }\n"
    "#if COPY\n"
    "#pragma unroll\n"
    "    for (int t = 0; t < VPT; t++) {\n        const long p = lane + (long)t * LS;\n"
    "        if (act && p < cols) yr[p] = xv[t];\n    }\n"
    "#else\n"
    "    double s = 0, c = 0;\n"
    "#pragma unroll\n"
    "    for (int t = 0; t < VPT; t++) if (lane + (long)t * LS < cols) kadd(&s, &c, xv[t]);\n"
    "    s += c;\n"
    "    const double mu = rsum(s, sh, l, lane, slot) / (double)cols;\n"
    "    double s2 = 0, c2 = 0;\n"
    "#pragma unroll\n"
    "    for (int t = 0; t < VPT; t++)\n"
    "        if (lane + (long)t * LS < cols) {\n            const double d = xv[t] - mu;\n            kadd(&s2, &c2, d * d);\n        }\n"
    "    s2 += c2;\n"
    "    const double sd = sqrt(rsum(s2, sh, l, lane, slot) / (double)cols + 1e-5);\n"
    "#if !DIV\n    const double r = 1.0 / sd;\n#endif\n"
    "#pragma unroll\n"
    "    for (int t = 0; t < VPT; t++) {\n        const long p = lane + (long)t * LS;\n"
    "#if DIV\n        if (act && p < cols) yr[p] = (xv[t] - mu) / sd;\n"
    "#else\n        if (act && p < cols) yr[p] = (xv[t] - mu) * r;\n#endif\n    }\n"
    "#endif\n}\n";

typedef struct { const char *name; int copy, kahan, div, shfl, ls, vpt, wg; } Variant;

int main(int argc, char **argv)
{
    long rows = argc > 2 ? atol(argv[1]) : 65536, cols = argc > 2 ? atol(argv[2]) : 1024;
    cl_platform_id pl[8];
    cl_uint np = 0;
    CK(clGetPlatformIDs(8, pl, &np));
    cl_device_id dev = NULL;
    for (cl_uint p = 0; p < np && !dev; p++) {   /* the first GPU, else the first device (as braid) */
        cl_uint nd = 0;
        if (clGetDeviceIDs(pl[p], CL_DEVICE_TYPE_GPU, 1, &dev, &nd) != CL_SUCCESS || !nd) dev = NULL;
    }
    if (!dev) CK(clGetDeviceIDs(pl[0], CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    char name[256] = {0}, vendor[256] = {0};
    clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name - 1, name, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_VENDOR, sizeof vendor - 1, vendor, NULL);
    int nv = strstr(vendor, "NVIDIA") != NULL;
    printf("clrows: %s (%s), X %ld x %ld fp64, X read and Y written once for GB/s\n", name, vendor, rows, cols);
    cl_int rc;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &rc);
    CK(rc);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &rc);
    CK(rc);
    size_t n = (size_t)rows * (size_t)cols, bytes = n * sizeof(double);
    double *hx = malloc(bytes), *hy = malloc(bytes), *want = malloc(bytes);
    if (!hx || !hy || !want) return 1;
    for (size_t i = 0; i < n; i++) hx[i] = (double)((i * 7919) % 1000) / 250.0 - 2;
    for (long r = 0; r < rows; r++) {   /* the host's layernorm */
        const double *xr = hx + r * cols;
        double s = 0, s2 = 0;
        for (long j = 0; j < cols; j++) s += xr[j];
        double mu = s / (double)cols;
        for (long j = 0; j < cols; j++) s2 += (xr[j] - mu) * (xr[j] - mu);
        double sd = sqrt(s2 / (double)cols + 1e-5);
        for (long j = 0; j < cols; j++) want[r * cols + j] = (xr[j] - mu) / sd;
    }
    cl_mem dx = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, hx, &rc);
    CK(rc);
    cl_mem dy = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &rc);
    CK(rc);
    long vcells = cols;   /* cells a lane must hold: cols / LS rounded up */
    const Variant vs[] = {
        {"copy, 128 lanes a row", 1, 0, 0, 0, 128, 0, 128},
        {"copy, a warp a row", 1, 0, 0, 0, 32, 0, 128},
        {"plain sums, reciprocal, tree, 128 lanes", 0, 0, 0, 0, 128, 0, 128},
        {"Kahan, division, tree, 128 lanes (braid's)", 0, 1, 1, 0, 128, 0, 128},
        {"plain sums, reciprocal, shuffles, 128 lanes", 0, 0, 0, 1, 128, 0, 128},
        {"Kahan, division, shuffles, 128 lanes", 0, 1, 1, 1, 128, 0, 128},
        {"Kahan, reciprocal, shuffles, 128 lanes", 0, 1, 0, 1, 128, 0, 128},
        {"plain sums, division, shuffles, 128 lanes", 0, 0, 1, 1, 128, 0, 128},
        {"Kahan, division, tree, 256 lanes", 0, 1, 1, 0, 256, 0, 256},
        {"Kahan, division, shuffles, 256 lanes", 0, 1, 1, 1, 256, 0, 256},
        {"plain sums, reciprocal, tree, a warp a row", 0, 0, 0, 0, 32, 0, 128},
        {"Kahan, division, tree, a warp a row", 0, 1, 1, 0, 32, 0, 128},
        {"plain sums, reciprocal, shuffles, a warp a row", 0, 0, 0, 1, 32, 0, 128},
        {"Kahan, division, shuffles, a warp a row", 0, 1, 1, 1, 32, 0, 128},
    };
    for (size_t v = 0; v < sizeof vs / sizeof vs[0]; v++) {
        Variant a = vs[v];
        if (a.shfl && !nv) continue;
        a.vpt = (int)((vcells + a.ls - 1) / a.ls);
        if (a.vpt > 64) { printf("%-48s skipped: %d cells a lane\n", a.name, a.vpt); continue; }
        char opts[256];
        snprintf(opts, sizeof opts, "-cl-std=CL1.2 -DCOPY=%d -DKAHAN=%d -DDIV=%d -DSHFL=%d -DLS=%d -DVPT=%d%s", a.copy,
                 a.kahan, a.div, a.shfl, a.ls, a.vpt, a.shfl ? " -DST_NV=1" : "");
        cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &rc);
        CK(rc);
        if (clBuildProgram(p, 1, &dev, opts, NULL, NULL) != CL_SUCCESS) {
            char log[4096] = {0};
            clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
            printf("%-48s build failed: %s\n", a.name, log);
            clReleaseProgram(p);
            continue;
        }
        cl_kernel k = clCreateKernel(p, "ln", &rc);
        CK(rc);
        CK(clSetKernelArg(k, 0, sizeof rows, &rows));
        CK(clSetKernelArg(k, 1, sizeof cols, &cols));
        CK(clSetKernelArg(k, 2, sizeof dx, &dx));
        CK(clSetKernelArg(k, 3, sizeof dy, &dy));
        CK(clSetKernelArg(k, 4, (size_t)a.wg * sizeof(double), NULL));
        size_t spg = (size_t)(a.wg / a.ls), lsz = (size_t)a.wg, gsz = ((size_t)rows + spg - 1) / spg * lsz;
        CK(clEnqueueNDRangeKernel(q, k, 1, NULL, &gsz, &lsz, 0, NULL, NULL));
        CK(clEnqueueReadBuffer(q, dy, CL_TRUE, 0, bytes, hy, 0, NULL, NULL));
        double err = 0;
        for (size_t i = 0; i < n; i++) {
            double w = a.copy ? hx[i] : want[i], d = fabs(hy[i] - w) / (fabs(w) > 1 ? fabs(w) : 1);
            if (!(d <= err)) err = d;
        }
        int batch = 20;
        double best = 1e30;
        for (int r = 0; r < 5; r++) {
            CK(clFinish(q));
            double t0 = now();
            for (int b = 0; b < batch; b++) CK(clEnqueueNDRangeKernel(q, k, 1, NULL, &gsz, &lsz, 0, NULL, NULL));
            CK(clFinish(q));
            double t = (now() - t0) / batch;
            if (t < best) best = t;
        }
        printf("%-48s LS %3d VPT %2d wg %3d: %8.3f ms %7.1f GB/s  max rel. error %.1e%s\n", a.name, a.ls, a.vpt, a.wg,
               best * 1e3, 2.0 * (double)bytes / best / 1e9, err, err > 1e-12 ? "  WRONG" : "");
        clReleaseKernel(k);
        clReleaseProgram(p);
    }
    clReleaseMemObject(dx);
    clReleaseMemObject(dy);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    free(hx), free(hy), free(want);
    return 0;
}
