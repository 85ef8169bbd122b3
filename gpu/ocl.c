/* ocl.c: the OpenCL device of the backend: selection (-gpu, sysds.gpu),
 * the context and queue, the one program of fixed kernels (built once per
 * process, on first use), launches and the device properties the cost
 * models read. Portable OpenCL 1.2 host code: it runs on any ICD (NVIDIA,
 * AMD, Intel, PoCL). */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_int.h"

GpuCtx gpu_ctx;
pthread_mutex_t gpu_lock = PTHREAD_MUTEX_INITIALIZER;
GpuStats gpu_st;

static GpuMode g_mode = GPU_OFF;
static int g_device = -1;
static double g_budget = 0;
static int g_state = 0;            /* 0 not tried, 1 ready, -1 failed */
static BrErr g_err;                /* why gpu_init failed (reported again) */

static const char *const kernel_names[K_COUNT] = {
    "ew_unary", "ew_binary", "csr_binary", "csr_unary", "csr_to_dense", "csr_mm",
    "col_nonfinite", "csr_row_bad", "csr_tmm", "dense_csr_mm", "tmm_csrb", "csr_csr_mm", "csr_tsmm_r", "part_sum",
    "transpose", "sym_lower", "agg_row", "agg_col", "agg_part", "agg_seg", "agg_seg_col", "cum_col", "ew_ifelse", "slice", "lix", "lix_rows", "cla_group", "cla_unc_csr", "cla_lists",
    "probe_nop", "probe_rd", "probe_cp",
};

void gpu_configure(GpuMode mode, int device, double pool_budget)
{
    g_mode = mode;
    g_device = device;
    g_budget = pool_budget;
    /* once the device is up, <= 0 restores the default (half its memory) */
    if (g_state == 1) gpu_ctx.budget = pool_budget > 0 ? pool_budget : (double)gpu_ctx.info.global_mem / 2;
}

GpuMode gpu_mode(void) { return g_mode; }

static bool g_stitch = true;
void gpu_set_stitch(bool on) { g_stitch = on; }
bool gpu_stitch_on(void) { return g_mode != GPU_OFF && g_stitch; }
const GpuInfo *gpu_info(void) { return &gpu_ctx.info; }

int gpu_clerr(BrErr *e, cl_int rc, const char *what)
{
    return br_err(e, BR_EFAIL, "GPU (OpenCL): %s failed (error %d)", what, (int)rc);
}

/* All devices of all platforms in ICD order; the chosen one by index, or
 * the first GPU, or the first device. */
static int pick_device(cl_device_id *dev, BrErr *e)
{
    cl_platform_id plats[16];
    cl_uint np = 0;
    if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS || np == 0)
        return br_err(e, BR_EFAIL, "GPU: no OpenCL platform (install an OpenCL driver, e.g. Debian's "
                      "pocl-opencl-icd, or run without -gpu)");
    cl_device_id all[64];
    int n = 0;
    for (cl_uint p = 0; p < np && n < 64; p++) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, (cl_uint)(64 - n), all + n, &nd) == CL_SUCCESS)
            n += (int)nd;
    }
    if (n == 0) return br_err(e, BR_EFAIL, "GPU: no OpenCL device on %u platform(s) (run without -gpu)", np);
    if (g_device >= n)
        return br_err(e, BR_EARG, "GPU: device %d requested (sysds.gpu.device), but there are only %d", g_device, n);
    int pick = g_device >= 0 ? g_device : 0;
    if (g_device < 0)
        for (int i = 0; i < n; i++) {
            cl_device_type t;
            if (clGetDeviceInfo(all[i], CL_DEVICE_TYPE, sizeof t, &t, NULL) == CL_SUCCESS && (t & CL_DEVICE_TYPE_GPU)) {
                pick = i;
                break;
            }
        }
    *dev = all[pick];
    return 0;
}

/* A cl_uint / cl_ulong device property (0 when the driver has none). */
static cl_uint dev_uint(cl_device_id d, cl_device_info what)
{
    cl_uint u = 0;
    clGetDeviceInfo(d, what, sizeof u, &u, NULL);
    return u;
}

static cl_ulong dev_ulong(cl_device_id d, cl_device_info what)
{
    cl_ulong l = 0;
    clGetDeviceInfo(d, what, sizeof l, &l, NULL);
    return l;
}

static void read_info(cl_device_id d, GpuInfo *gi)
{
    memset(gi, 0, sizeof *gi);
    clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof gi->name - 1, gi->name, NULL);
    cl_device_type t = 0;
    clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof t, &t, NULL);
    gi->is_cpu = (t & CL_DEVICE_TYPE_CPU) != 0;
    gi->compute_units = (int)dev_uint(d, CL_DEVICE_MAX_COMPUTE_UNITS);
    gi->clock_mhz = (int)dev_uint(d, CL_DEVICE_MAX_CLOCK_FREQUENCY);
    clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof gi->max_wg, &gi->max_wg, NULL);
    gi->local_mem = (size_t)dev_ulong(d, CL_DEVICE_LOCAL_MEM_SIZE);
    gi->global_mem = (double)dev_ulong(d, CL_DEVICE_GLOBAL_MEM_SIZE);
    gi->max_alloc = (size_t)dev_ulong(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    char ext[8192] = {0};
    clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, sizeof ext - 1, ext, NULL);
    gi->has_subgroups = strstr(ext, "cl_khr_subgroups") != NULL;
    /* the SIMD width a work-group is scheduled in: the preferred multiple
     * of the work-group size is the warp/wavefront width on GPUs */
    gi->sub_group = 0;
    if (gi->max_wg == 0) gi->max_wg = 1;
}

static void probe_shfl(const char *vendor);

static int build_all(BrErr *e)
{
    cl_int rc;
    cl_device_id dev;
    if (pick_device(&dev, e)) return -1;
    cl_uint fp64 = 0;
    clGetDeviceInfo(dev, CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE, sizeof fp64, &fp64, NULL);
    if (fp64 == 0) return br_err(e, BR_EFAIL, "GPU: the OpenCL device has no double precision (cl_khr_fp64)");
    gpu_ctx.dev = dev;
    read_info(dev, &gpu_ctx.info);
    gpu_ctx.ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &rc);
    if (rc != CL_SUCCESS) return gpu_clerr(e, rc, "clCreateContext");
    gpu_ctx.q = clCreateCommandQueue(gpu_ctx.ctx, dev, 0, &rc);
    if (rc != CL_SUCCESS) return gpu_clerr(e, rc, "clCreateCommandQueue");
    char *src = gpu_cl_source();
    if (!src) return br_err(e, BR_ENOMEM, "out of memory");
    gpu_ctx.prog = gpu_build(src, e);
    free(src);
    if (!gpu_ctx.prog) return -1;
    char vendor[256] = {0};
    clGetDeviceInfo(dev, CL_DEVICE_VENDOR, sizeof vendor - 1, vendor, NULL);
    probe_shfl(vendor);
    for (int k = 0; k < K_COUNT; k++) {
        gpu_ctx.k[k] = clCreateKernel(gpu_ctx.prog, kernel_names[k], &rc);
        if (rc != CL_SUCCESS) return gpu_clerr(e, rc, kernel_names[k]);
    }
    /* kernels with local tiles need a work-group of 256 (transpose: 16x16) */
    gpu_ctx.budget = g_budget > 0 ? g_budget : gpu_ctx.info.global_mem / 2;
    return 0;
}

/* Builds of generated programs (after the fixed kernels'): their count
 * and total time, for the cost rule's build term (gpu_build_seconds). */
static int64_t g_builds, g_build_ns;

double gpu_build_seconds(void)
{
    int64_t n = __atomic_load_n(&g_builds, __ATOMIC_RELAXED), ns = __atomic_load_n(&g_build_ns, __ATOMIC_RELAXED);
    /* before the first one: 50 ms, about what PoCL and NVIDIA's driver
     * take for a small kernel (the fixed kernels' build, much larger,
     * is not counted) */
    return n ? (double)ns / 1e9 / (double)n : 0.05;
}

/* the generated programs' build options: warp shuffles where probed */
static const char *g_opts = "-cl-std=CL1.2";

static cl_program build_opts(const char *src, const char *opts, BrErr *e)
{
    cl_int rc;
    cl_program p = clCreateProgramWithSource(gpu_ctx.ctx, 1, &src, NULL, &rc);
    if (rc != CL_SUCCESS) { gpu_clerr(e, rc, "clCreateProgramWithSource"); return NULL; }
    int64_t t0 = br_now_ns();
    rc = clBuildProgram(p, 1, &gpu_ctx.dev, opts, NULL, NULL);
    if (__atomic_load_n(&g_state, __ATOMIC_RELAXED) == 1) {
        __atomic_add_fetch(&g_build_ns, br_now_ns() - t0, __ATOMIC_RELAXED);
        __atomic_add_fetch(&g_builds, 1, __ATOMIC_RELAXED);
    }
    if (rc != CL_SUCCESS) {
        char log[2048] = {0};
        clGetProgramBuildInfo(p, gpu_ctx.dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        br_err(e, BR_EFAIL, "GPU: building the OpenCL program failed (error %d): %s", (int)rc, log);
        clReleaseProgram(p);
        return NULL;
    }
    return p;
}

cl_program gpu_build(const char *src, BrErr *e) { return build_opts(src, g_opts, e); }

/* Warp shuffles (GPU_CL_SHFL) in the stitched trees, BRAID_GPU_SHFL=1:
 * on an NVIDIA device, where a probe kernel of two warps runs the
 * butterfly over lane values and gives each lane its warp's sum (an
 * inline-PTX program the driver refuses, or a wrong answer, leaves the
 * trees in local memory); =emu: the emulation on any device (tests).
 * Off by default until timed on a GPU (docs/gpu.md, "Warp shuffles"). */
static void probe_shfl(const char *vendor)
{
    const char *v = getenv("BRAID_GPU_SHFL");
    if (!v || !strcmp(v, "0")) return;
    if (!strcmp(v, "emu")) {
        gpu_ctx.info.warp_shfl = 2;
        g_opts = "-cl-std=CL1.2 -DST_NV=1 -DST_SHFL_EMU=1";
        return;
    }
    if (!strstr(vendor, "NVIDIA") || gpu_ctx.info.is_cpu || gpu_ctx.info.max_wg < 64) return;
    static const char src[] = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" GPU_CL_SHFL
                              "__kernel void shfl_probe(__global double *o)\n{\n"
                              "    const int l = get_local_id(0);\n    double v = 0.5 * (l + 1);\n"
                              "    for (int w = 16; w > 0; w /= 2) {\n"
                              "        const double p = ST_SHFL(v, w);\n        v = (l & w) ? p + v : v + p;\n    }\n"
                              "    o[get_global_id(0)] = v;\n}\n";
    BrErr e = {0};
    cl_program p = build_opts(src, "-cl-std=CL1.2 -DST_NV=1", &e);
    if (!p) return;
    cl_int rc;
    cl_kernel k = clCreateKernel(p, "shfl_probe", &rc);
    cl_mem o = rc == CL_SUCCESS ? clCreateBuffer(gpu_ctx.ctx, CL_MEM_WRITE_ONLY, 64 * sizeof(double), NULL, &rc) : NULL;
    double r[64] = {0};
    size_t g = 64, lsz = 64;
    if (rc == CL_SUCCESS) rc = clSetKernelArg(k, 0, sizeof o, &o);
    if (rc == CL_SUCCESS) rc = clEnqueueNDRangeKernel(gpu_ctx.q, k, 1, NULL, &g, &lsz, 0, NULL, NULL);
    if (rc == CL_SUCCESS) rc = clEnqueueReadBuffer(gpu_ctx.q, o, CL_TRUE, 0, sizeof r, r, 0, NULL, NULL);
    bool ok = rc == CL_SUCCESS;
    for (int i = 0; i < 64 && ok; i++) ok = r[i] == (i < 32 ? 264.0 : 776.0);   /* 0.5 * (1 + ... + 32), (33 .. 64) */
    if (o) clReleaseMemObject(o);
    if (k) clReleaseKernel(k);
    clReleaseProgram(p);
    if (ok) {
        gpu_ctx.info.warp_shfl = 1;
        g_opts = "-cl-std=CL1.2 -DST_NV=1";
    }
}

/* At exit, the queue's commands finish first: PoCL compiles a kernel's
 * work-group function on its own threads when a command is enqueued, and
 * a process leaving (an error exit right after a launch) would otherwise
 * run LLVM's static destructors under that compile (a crash: signal 6 or
 * 11). Registered after the driver was loaded, so it runs before the
 * driver's destructors. */
static void drain_at_exit(void)
{
    if (gpu_ctx.q) clFinish(gpu_ctx.q);
}

GpuCl gpu_cl;

int gpu_cl_load(BrErr *e)
{
    static void *dl;
    if (dl) return 0;
    const char *lib = getenv("BRAID_OPENCL_LIB");   /* another loader, or a vendor's library */
    if (!lib || !*lib) lib = "libOpenCL.so.1";
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) return br_err(e, BR_EFAIL, "GPU: the OpenCL ICD loader %s (Debian's ocl-icd-libopencl1; "
                          "BRAID_OPENCL_LIB names another) could not be loaded", lib);
    bool ok = true;
#define GPU_CL_SYM(f) ok = ok && (*(void **)&gpu_cl.p_##f = dlsym(h, #f)) != NULL;
    GPU_CL_FNS(GPU_CL_SYM)
#undef GPU_CL_SYM
    if (!ok) {
        dlclose(h);
        memset(&gpu_cl, 0, sizeof gpu_cl);
        return br_err(e, BR_EFAIL, "GPU: the OpenCL ICD loader lacks an OpenCL 1.2 function");
    }
    dl = h;
    return 0;
}

int gpu_init(BrErr *e)
{
    static bool hooked;
    pthread_mutex_lock(&gpu_lock);
    if (g_state == 0) g_state = gpu_cl_load(&g_err) || build_all(&g_err) ? -1 : 1;
    if (g_state == 1 && !hooked) hooked = !atexit(drain_at_exit);
    if (g_state == 1) gpu_pool_hook();
    if (g_state == 1) gpu_profile_device();
    int st = g_state;
    pthread_mutex_unlock(&gpu_lock);
    if (st < 0) return br_err(e, g_err.code ? g_err.code : BR_EFAIL, "%s", g_err.msg);
    return 0;
}

int gpu_args(cl_kernel k, BrErr *e, ...)
{
    va_list ap;
    va_start(ap, e);
    for (cl_uint i = 0;; i++) {
        size_t sz = va_arg(ap, size_t);
        if (sz == 0) break;
        const void *p = va_arg(ap, const void *);
        cl_int rc = clSetKernelArg(k, i, sz, p);
        if (rc != CL_SUCCESS) { va_end(ap); return gpu_clerr(e, rc, "clSetKernelArg"); }
    }
    va_end(ap);
    return 0;
}

static size_t round_up(size_t n, size_t l) { return (n + l - 1) / l * l; }

int gpu_launch1(cl_kernel k, size_t n, size_t local, BrErr *e)
{
    if (n == 0) return 0;
    size_t l = local ? local : 64;
    if (l > gpu_ctx.info.max_wg) l = gpu_ctx.info.max_wg;
    size_t g = round_up(n, l);
    cl_int rc = clEnqueueNDRangeKernel(gpu_ctx.q, k, 1, NULL, &g, &l, 0, NULL, NULL);
    if (rc != CL_SUCCESS) return gpu_clerr(e, rc, "clEnqueueNDRangeKernel");
    gpu_st.launches++;
    return 0;
}

int gpu_launch2(cl_kernel k, size_t n0, size_t n1, size_t l0, size_t l1, BrErr *e)
{
    if (n0 == 0 || n1 == 0) return 0;
    size_t g[2] = {round_up(n0, l0), round_up(n1, l1)}, l[2] = {l0, l1};
    cl_int rc = clEnqueueNDRangeKernel(gpu_ctx.q, k, 2, NULL, g, l, 0, NULL, NULL);
    if (rc != CL_SUCCESS) return gpu_clerr(e, rc, "clEnqueueNDRangeKernel");
    gpu_st.launches++;
    return 0;
}

GpuStats gpu_stats(void)
{
    pthread_mutex_lock(&gpu_lock);
    GpuStats s = gpu_st;
    pthread_mutex_unlock(&gpu_lock);
    return s;
}

void gpu_finish(void)
{
    pthread_mutex_lock(&gpu_lock);
    if (gpu_ctx.q) clFinish(gpu_ctx.q);
    pthread_mutex_unlock(&gpu_lock);
}

void gpu_stats_reset(void)
{
    pthread_mutex_lock(&gpu_lock);
    memset(&gpu_st, 0, sizeof gpu_st);
    pthread_mutex_unlock(&gpu_lock);
}

void gpu_print_stats(FILE *f)
{
    if (g_mode == GPU_OFF || g_state != 1) return;
    GpuStats s = gpu_stats();
    fprintf(f, "GPU (%s):\t%lld ops, %lld launches, %.3f/%.3f MB up/down, %lld results copied to the host, "
            "pool %lld hits/%lld misses/%lld evictions, %lld buffers reused.\n",
            gpu_ctx.info.name, (long long)s.ops, (long long)s.launches, (double)s.h2d_bytes / 1e6,
            (double)s.d2h_bytes / 1e6, (long long)s.landed, (long long)s.hits, (long long)s.misses,
            (long long)s.evictions, (long long)s.buf_reused);
    gpu_print_profile(f);
    if (s.fused_ops || s.fused_cpu)
        fprintf(f, "GPU codegen operators:\t%lld on the device (%lld as one stitched launch), %lld on the CPU (%lld while "
                "compiling).\n", (long long)s.fused_ops, (long long)s.fused_region, (long long)s.fused_cpu,
                (long long)s.fused_async);
    if (s.stitched || s.stitch_fallbacks)
        fprintf(f, "GPU stitched regions:\t%lld runs, %lld launches, %lld runs unfused while compiling.\n",
                (long long)s.stitched, (long long)s.stitch_launches, (long long)s.stitch_fallbacks);
}
