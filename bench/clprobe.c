/* clprobe: the facts and rates of an OpenCL device that braid's GPU
 * profile stands for (gpu/profile.c gpu_profile: launch seconds, device and
 * transfer bytes per second), measured directly through OpenCL:
 *   build/bench/clprobe [N]   (N doubles per buffer, default 2^27 = 1 GiB)
 * Prints every platform's devices (version, memory, compute units,
 * extensions), then on the device braid takes by default (the first GPU
 * over all platforms, else the first device): a program build,
 * host<->device copies (pageable memory), the latency of an empty kernel
 * (pipelined and with clFinish after each), what a buffer made and
 * released around each launch costs against one buffer reused (the
 * pattern of an allocator without a cache), and a copy and a read-only
 * kernel's bytes per second (best of 9). Results: bench/results/gpu-*.txt. */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_BENCH_NAME "clprobe"
#include "clbench.h"

static const char *src =
    "__kernel void nop(__global double *a) { if (get_global_id(0) == 0x7fffffff) a[0] = 1; }\n"
    "__kernel void cp(__global const double *a, __global double *b, long n)\n"
    "{ for (long i = get_global_id(0); i < n; i += get_global_size(0)) b[i] = a[i]; }\n"
    "__kernel void rd(__global const double *a, __global double *b, long n)\n"
    "{ double s = 0; for (long i = get_global_id(0); i < n; i += get_global_size(0)) s += a[i];\n"
    "  if (s == -1.2345) b[0] = s; }\n";

static void devices(cl_platform_id pl)
{
    cl_device_id d[8];
    cl_uint nd = 0;
    if (clGetDeviceIDs(pl, CL_DEVICE_TYPE_ALL, 8, d, &nd) != CL_SUCCESS) return;
    for (cl_uint i = 0; i < nd; i++) {
        static char s[16384];
        cl_ulong u;
        size_t z;
        cl_uint c;
        clGetDeviceInfo(d[i], CL_DEVICE_NAME, sizeof s, s, NULL), printf(" device %u: %s\n", i, s);
        clGetDeviceInfo(d[i], CL_DEVICE_VERSION, sizeof s, s, NULL), printf("  %s\n", s);
        clGetDeviceInfo(d[i], CL_DEVICE_OPENCL_C_VERSION, sizeof s, s, NULL), printf("  %s\n", s);
        clGetDeviceInfo(d[i], CL_DRIVER_VERSION, sizeof s, s, NULL), printf("  driver %s\n", s);
        clGetDeviceInfo(d[i], CL_DEVICE_GLOBAL_MEM_SIZE, 8, &u, NULL), printf("  global memory %llu\n", (unsigned long long)u);
        clGetDeviceInfo(d[i], CL_DEVICE_MAX_MEM_ALLOC_SIZE, 8, &u, NULL), printf("  largest allocation %llu\n", (unsigned long long)u);
        clGetDeviceInfo(d[i], CL_DEVICE_LOCAL_MEM_SIZE, 8, &u, NULL), printf("  local memory %llu\n", (unsigned long long)u);
        clGetDeviceInfo(d[i], CL_DEVICE_MAX_COMPUTE_UNITS, 4, &c, NULL), printf("  compute units %u\n", c);
        clGetDeviceInfo(d[i], CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof z, &z, NULL), printf("  largest work-group %zu\n", z);
        clGetDeviceInfo(d[i], CL_DEVICE_MAX_CLOCK_FREQUENCY, 4, &c, NULL), printf("  clock %u MHz\n", c);
        clGetDeviceInfo(d[i], CL_DEVICE_EXTENSIONS, sizeof s, s, NULL), printf("  extensions %s\n", s);
    }
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    long n = argc > 1 ? atol(argv[1]) : 1L << 27;
    if (n < 1024) n = 1024;
    cl_platform_id pl[8];
    cl_uint np;
    CK(clGetPlatformIDs(8, pl, &np));
    for (cl_uint p = 0; p < np; p++) {
        char b[4096];
        clGetPlatformInfo(pl[p], CL_PLATFORM_NAME, sizeof b, b, NULL), printf("platform %u: %s\n", p, b);
        clGetPlatformInfo(pl[p], CL_PLATFORM_VERSION, sizeof b, b, NULL), printf("  version %s\n", b);
        devices(pl[p]);
    }
    cl_device_id dev = NULL;
    for (cl_uint p = 0; p < np && !dev; p++)
        if (clGetDeviceIDs(pl[p], CL_DEVICE_TYPE_GPU, 1, &dev, NULL) != CL_SUCCESS) dev = NULL;
    if (!dev) CK(clGetDeviceIDs(pl[0], CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    {
        char b[256];
        clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof b, b, NULL), printf("measured: %s\n", b);
    }
    cl_int rc;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &rc);
    CK(rc);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &rc);
    CK(rc);

    double t0 = now();
    cl_program pr = clCreateProgramWithSource(ctx, 1, &src, NULL, &rc);
    CK(rc);
    if (clBuildProgram(pr, 1, &dev, "", NULL, NULL) != CL_SUCCESS) {
        static char log[8192];
        clGetProgramBuildInfo(pr, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "clprobe: build failed: %s\n", log);
        return 1;
    }
    printf("build of a program of 3 small kernels: %.3f s\n", now() - t0);

    size_t bytes = (size_t)n * sizeof(double);
    double *h = malloc(bytes);
    if (!h) { fprintf(stderr, "clprobe: out of memory\n"); return 1; }
    for (long i = 0; i < n; i++) h[i] = (double)i;
    cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &rc);
    CK(rc);
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &rc);
    CK(rc);
    for (int r = 0; r < 3; r++) {
        t0 = now();
        CK(clEnqueueWriteBuffer(q, a, CL_TRUE, 0, bytes, h, 0, NULL, NULL));
        double tw = now() - t0;
        t0 = now();
        CK(clEnqueueReadBuffer(q, a, CL_TRUE, 0, bytes, h, 0, NULL, NULL));
        double tr = now() - t0;
        printf("transfer of %zu bytes (pageable): to the device %.2f GB/s, to the host %.2f GB/s\n", bytes,
               (double)bytes / tw / 1e9, (double)bytes / tr / 1e9);
    }

    cl_kernel nop = clCreateKernel(pr, "nop", &rc);
    CK(rc);
    CK(clSetKernelArg(nop, 0, sizeof a, &a));
    size_t one = 1;
    for (int r = 0; r < 100; r++) CK(clEnqueueNDRangeKernel(q, nop, 1, NULL, &one, &one, 0, NULL, NULL));
    CK(clFinish(q));
    int launches = 2000;
    t0 = now();
    for (int r = 0; r < launches; r++) CK(clEnqueueNDRangeKernel(q, nop, 1, NULL, &one, &one, 0, NULL, NULL));
    CK(clFinish(q));
    printf("empty kernel, pipelined: %.2f us a launch\n", (now() - t0) / launches * 1e6);
    t0 = now();
    for (int r = 0; r < 200; r++) {
        CK(clEnqueueNDRangeKernel(q, nop, 1, NULL, &one, &one, 0, NULL, NULL));
        CK(clFinish(q));
    }
    printf("empty kernel, launch and clFinish: %.2f us\n", (now() - t0) / 200 * 1e6);

    /* a buffer made before each launch and released after it, against
     * one buffer reused: per launch, pipelined (clFinish at the end) */
    for (size_t sz = 8192; sz <= ((size_t)32 << 20); sz *= 64) {
        int reps = 200;
        t0 = now();
        for (int r = 0; r < reps; r++) {
            cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sz, NULL, &rc);
            CK(rc);
            CK(clSetKernelArg(nop, 0, sizeof m, &m));
            CK(clEnqueueNDRangeKernel(q, nop, 1, NULL, &one, &one, 0, NULL, NULL));
            CK(clReleaseMemObject(m));
        }
        CK(clFinish(q));
        double tf = (now() - t0) / reps;
        CK(clSetKernelArg(nop, 0, sizeof a, &a));
        t0 = now();
        for (int r = 0; r < reps; r++) CK(clEnqueueNDRangeKernel(q, nop, 1, NULL, &one, &one, 0, NULL, NULL));
        CK(clFinish(q));
        double tr = (now() - t0) / reps;
        printf("launch with a fresh %zu-byte buffer: %.2f us, with a reused one: %.2f us\n", sz, tf * 1e6, tr * 1e6);
    }

    cl_uint cus;
    clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, 4, &cus, NULL);
    const char *names[2] = {"cp", "rd"};
    for (int k = 0; k < 2; k++) {
        cl_kernel kr = clCreateKernel(pr, names[k], &rc);
        CK(rc);
        CK(clSetKernelArg(kr, 0, sizeof a, &a));
        CK(clSetKernelArg(kr, 1, sizeof b, &b));
        CK(clSetKernelArg(kr, 2, sizeof n, &n));
        size_t local = 256, global = (size_t)cus * 2048;
        double best = 1e30;
        for (int r = 0; r < 10; r++) {
            t0 = now();
            CK(clEnqueueNDRangeKernel(q, kr, 1, NULL, &global, &local, 0, NULL, NULL));
            CK(clFinish(q));
            double t = now() - t0;
            if (r > 0 && t < best) best = t;
        }
        double moved = (k == 0 ? 2.0 : 1.0) * (double)bytes;
        printf("%s kernel: %.3f ms, %.1f GB/s (%s)\n", k == 0 ? "copy" : "read-only sum", best * 1e3,
               moved / best / 1e9, k == 0 ? "bytes read and written" : "bytes read");
        clReleaseKernel(kr);
    }
    free(h);
    return 0;
}
