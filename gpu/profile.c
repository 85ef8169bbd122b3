/* profile.c: the device profile (gpu.h gpu_profile; docs/gpu.md, "The
 * device profile"): the launch latency, device bandwidth and transfer
 * rates the plan choice prices the device side with. Fixed by
 * sysds.gpu.profile or BRAID_GPU_PROFILE; otherwise measured by short
 * probes when the device is created (about 100 ms: empty launches,
 * a read and a copy kernel, transfers both ways) and kept per device in
 * the user's cache folder (gpu-<key hash>.txt, keyed by platform,
 * device, driver version and GPU_PROBE_VERSION), so a later process
 * reads it instead; a file that does not parse, names another device or
 * probe version, or holds a value outside the plausible bounds is
 * measured again and rewritten, never trusted. A measurement taken on a
 * busy host (crowded run queue, or probes that disagree) is not final:
 * later processes measure again and keep the best of each value (gpu.h
 * GpuProbe). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpu_int.h"

/* Bumped when the probe measures differently: older files are measured
 * again (2: the file holds its rounds and whether it is final). */
#define GPU_PROBE_VERSION 2
/* The probe's time budget: growth and repetitions stop past it (each
 * quantity is measured at least once). */
#define GPU_PROBE_NS 100000000LL
/* Sanitizer builds time the host side slower: a file of their own (as
 * codegen/cost.c's machine file). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PROF_SUFFIX "-san"
#else
#define PROF_SUFFIX ""
#endif

static const GpuProfile g_nominal = {10e-6, 500e9, 12e9, 10e-6, 500e9, 12e9};

static pthread_mutex_t g_plock = PTHREAD_MUTEX_INITIALIZER;
static GpuProfile g_test, g_cfg, g_env, g_dev;
static bool g_has_test, g_has_cfg, g_has_env, g_has_dev;
static GpuProfSource g_dev_src = GPU_PROF_NOMINAL;
static pthread_once_t g_env_once = PTHREAD_ONCE_INIT;

/* the plausible range of each value (a file or a measurement outside is
 * not used) */
static bool prof_plausible(const GpuProfile *p)
{
    const double v[6] = {p->launch_s, p->bw, p->xfer_bw, p->sync_s, p->copy_bw, p->down_bw};
    const double lo[6] = {1e-8, 1e7, 1e6, 1e-8, 1e7, 1e6}, hi[6] = {1, 1e15, 1e14, 1, 1e15, 1e14};
    for (int k = 0; k < 6; k++)
        if (!(v[k] >= lo[k] && v[k] <= hi[k])) return false;
    return true;
}

static void env_read(void)
{
    const char *v = getenv("BRAID_GPU_PROFILE");
    if (!v || !*v) return;
    if (gpu_profile_parse(v, &g_env)) g_has_env = true;
    else
        fprintf(stderr, "braid: warning: BRAID_GPU_PROFILE=\"%s\" ignored: 3 or 6 positive numbers (launch "
                        "seconds, device read and host-to-device bytes per second; then seconds of a launch "
                        "with a finish, copy and device-to-host bytes per second) expected\n", v);
}

/* 0: back to the nominal values where a field is 0 */
static GpuProfile complete(GpuProfile p)
{
    if (p.sync_s <= 0) p.sync_s = p.launch_s;
    if (p.copy_bw <= 0) p.copy_bw = p.bw;
    if (p.down_bw <= 0) p.down_bw = p.xfer_bw;
    return p;
}

static pthread_once_t g_units_once = PTHREAD_ONCE_INIT;
static bool g_units_pinned;
static double g_units_cus, g_units_mhz;

static void units_read(void)
{
    const char *v = getenv("BRAID_GPU_UNITS");
    g_units_pinned = v && sscanf(v, "%lf %lf", &g_units_cus, &g_units_mhz) == 2 && g_units_cus >= 1 &&
                     g_units_mhz > 0;
}

void gpu_units(double *cus, double *mhz)
{
    pthread_once(&g_units_once, units_read);
    const GpuInfo *g = gpu_info();
    *cus = g_units_pinned ? g_units_cus : BR_MAX(1, g->compute_units);
    *mhz = g_units_pinned ? g_units_mhz : g->clock_mhz;
}

GpuProfile gpu_profile(void)
{
    pthread_once(&g_env_once, env_read);
    pthread_mutex_lock(&g_plock);
    GpuProfile p = g_has_test ? g_test : g_has_cfg ? g_cfg : g_has_env ? g_env : g_has_dev ? g_dev : g_nominal;
    pthread_mutex_unlock(&g_plock);
    return p;
}

GpuProfSource gpu_profile_source(void)
{
    pthread_once(&g_env_once, env_read);
    pthread_mutex_lock(&g_plock);
    GpuProfSource s = g_has_test ? GPU_PROF_TEST : g_has_cfg || g_has_env ? GPU_PROF_CONFIG
                      : g_has_dev ? g_dev_src : GPU_PROF_NOMINAL;
    pthread_mutex_unlock(&g_plock);
    return s;
}

const char *gpu_profile_source_name(GpuProfSource s)
{
    static const char *const n[] = {"nominal", "measured", "file", "config", "test"};
    return (unsigned)s < sizeof n / sizeof n[0] ? n[s] : "?";
}

void gpu_set_profile(const GpuProfile *p)
{
    pthread_mutex_lock(&g_plock);
    g_has_test = p != NULL;
    if (p) g_test = complete(*p);
    pthread_mutex_unlock(&g_plock);
}

void gpu_configure_profile(const GpuProfile *p)
{
    pthread_mutex_lock(&g_plock);
    g_has_cfg = p != NULL;
    if (p) g_cfg = complete(*p);
    pthread_mutex_unlock(&g_plock);
}

/* ---- the probe ---- */

static double secs_since(int64_t t0) { return (double)(br_now_ns() - t0) * 1e-9; }

/* One launch of k over n items (work-groups of l), waited for: seconds. */
static double run_once(cl_kernel k, size_t n, size_t l)
{
    int64_t t0 = br_now_ns();
    if (clEnqueueNDRangeKernel(gpu_ctx.q, k, 1, NULL, &n, &l, 0, NULL, NULL) != CL_SUCCESS) return -1;
    if (clFinish(gpu_ctx.q) != CL_SUCCESS) return -1;
    return secs_since(t0);
}

/* Launch latency: pipelined (64 empty launches, one finish) and with a
 * finish after each (best of 16). */
static bool probe_launch(GpuProfile *p, cl_mem a)
{
    cl_kernel k = gpu_ctx.k[K_PROBE_NOP];
    size_t one = 1;
    if (clSetKernelArg(k, 0, sizeof a, &a) != CL_SUCCESS) return false;
    double best = 1e30;
    for (int r = 0; r < 17; r++) {
        double t = run_once(k, one, one);
        if (t < 0) return false;
        if (r > 0 && t < best) best = t;   /* the first builds PoCL's work-group function */
    }
    int64_t t0 = br_now_ns();
    for (int r = 0; r < 64; r++)
        if (clEnqueueNDRangeKernel(gpu_ctx.q, k, 1, NULL, &one, &one, 0, NULL, NULL) != CL_SUCCESS) return false;
    if (clFinish(gpu_ctx.q) != CL_SUCCESS) return false;
    p->launch_s = secs_since(t0) / 64;
    p->sync_s = best;
    return true;
}

/* Device bandwidth: a read and a copy kernel over n doubles, grown 4x
 * from 4 MiB while a run takes under 2 ms (up to 256 MiB, an eighth of
 * the device's memory, its largest buffer), then best of up to 3; the
 * launch-and-finish latency is taken off each time (down to half). */
static bool probe_bw(GpuProfile *p, int64_t deadline)
{
    const GpuInfo *gi = &gpu_ctx.info;
    size_t cap = (size_t)256 << 20;
    if (gi->max_alloc && gi->max_alloc < cap) cap = gi->max_alloc;
    if (gi->global_mem > 0 && gi->global_mem / 8 < (double)cap) cap = (size_t)(gi->global_mem / 8);
    size_t l = gi->max_wg < 256 ? gi->max_wg : 256;
    size_t groups = (size_t)BR_MAX(gi->compute_units, 1) * 8;
    double rd = 0, cp = 0;
    BrErr e = {0};
    for (size_t bytes = (size_t)4 << 20;; bytes *= 4) {
        if (bytes > cap) bytes = cap;
        cl_long n = (cl_long)(bytes / sizeof(double));
        size_t g = groups * l;
        if ((size_t)n < g) g = ((size_t)n + l - 1) / l * l;
        cl_int rc, rc2;
        cl_mem a = clCreateBuffer(gpu_ctx.ctx, CL_MEM_READ_WRITE, bytes, NULL, &rc);
        cl_mem b = clCreateBuffer(gpu_ctx.ctx, CL_MEM_READ_WRITE, bytes, NULL, &rc2);
        double one = 1, trd = 1e30, tcp = 1e30;
        bool ok = rc == CL_SUCCESS && rc2 == CL_SUCCESS &&
                  clEnqueueFillBuffer(gpu_ctx.q, a, &one, sizeof one, 0, bytes, 0, NULL, NULL) == CL_SUCCESS &&
                  clEnqueueFillBuffer(gpu_ctx.q, b, &one, sizeof one, 0, bytes, 0, NULL, NULL) == CL_SUCCESS &&
                  clFinish(gpu_ctx.q) == CL_SUCCESS;
        for (int k = K_PROBE_RD; ok && k <= K_PROBE_CP; k++)
            ok = !gpu_args(gpu_ctx.k[k], &e, sizeof n, &n, sizeof a, &a, sizeof b, &b, (size_t)0);
        /* a first run of each (PoCL builds the work-group function, a GPU
         * maps the pages), then best of 3 within the budget */
        for (int r = 0; ok && r < 4 && (r < 2 || br_now_ns() < deadline); r++) {
            double t1 = run_once(gpu_ctx.k[K_PROBE_RD], g, l), t2 = run_once(gpu_ctx.k[K_PROBE_CP], g, l);
            ok = t1 > 0 && t2 > 0;
            if (ok && r > 0) trd = fmin(trd, t1), tcp = fmin(tcp, t2);
        }
        if (a) clReleaseMemObject(a);
        if (b) clReleaseMemObject(b);
        if (!ok) return false;
        rd = (double)bytes / fmax(trd - p->sync_s, trd / 2);
        cp = 2.0 * (double)bytes / fmax(tcp - p->sync_s, tcp / 2);
        if (bytes >= cap || trd >= 2e-3 || br_now_ns() >= deadline) break;
    }
    p->bw = rd;
    p->copy_bw = cp;
    return true;
}

/* Transfers of pageable host memory both ways (blocking), grown 4x from
 * 1 MiB while one takes under 2 ms (up to 64 MiB), best of up to 3. */
static bool probe_xfer(GpuProfile *p, int64_t deadline)
{
    size_t cap = (size_t)64 << 20;
    if (gpu_ctx.info.max_alloc && gpu_ctx.info.max_alloc < cap) cap = gpu_ctx.info.max_alloc;
    double up = 0, down = 0;
    for (size_t bytes = (size_t)1 << 20;; bytes *= 4) {
        if (bytes > cap) bytes = cap;
        cl_int rc;
        char *h = malloc(bytes);
        cl_mem d = h ? clCreateBuffer(gpu_ctx.ctx, CL_MEM_READ_WRITE, bytes, NULL, &rc) : NULL;
        bool ok = d != NULL;
        double tu = 1e30, td = 1e30;
        if (ok) memset(h, 1, bytes);
        for (int r = 0; ok && r < 4 && (r < 2 || br_now_ns() < deadline); r++) {
            int64_t t0 = br_now_ns();
            ok = clEnqueueWriteBuffer(gpu_ctx.q, d, CL_TRUE, 0, bytes, h, 0, NULL, NULL) == CL_SUCCESS;
            double t1 = secs_since(t0);
            t0 = br_now_ns();
            ok = ok && clEnqueueReadBuffer(gpu_ctx.q, d, CL_TRUE, 0, bytes, h, 0, NULL, NULL) == CL_SUCCESS;
            double t2 = secs_since(t0);
            if (ok && r > 0) tu = fmin(tu, t1), td = fmin(td, t2);
        }
        if (d) clReleaseMemObject(d);
        free(h);
        if (!ok) return false;
        up = (double)bytes / fmax(tu, 1e-9);
        down = (double)bytes / fmax(td, 1e-9);
        if (bytes >= cap || fmin(tu, td) >= 2e-3 || br_now_ns() >= deadline) break;
    }
    p->xfer_bw = up;
    p->down_bw = down;
    return true;
}

/* The device's probe (GpuProbe.measure): the launch latencies, then the
 * bandwidths and transfers, within GPU_PROBE_NS (each measured at least
 * once). Needs gpu_lock and the device; counts no launch in gpu_st. */
static bool probe_device(void *arg, GpuProfile *p)
{
    (void)arg;
    int64_t deadline = br_now_ns() + GPU_PROBE_NS;
    cl_int rc;
    cl_mem a = clCreateBuffer(gpu_ctx.ctx, CL_MEM_READ_WRITE, sizeof(double), NULL, &rc);
    if (rc != CL_SUCCESS) return false;
    bool ok = probe_launch(p, a);
    clReleaseMemObject(a);
    return ok && probe_bw(p, deadline) && probe_xfer(p, deadline);
}

/* The device's key: platform, device and driver names with the probe
 * version (tabs and newlines replaced: one line). */
static void device_key(char *key, size_t n)
{
    char plat[256] = "", dev[256] = "", drv[256] = "";
    cl_platform_id pl = NULL;
    clGetDeviceInfo(gpu_ctx.dev, CL_DEVICE_PLATFORM, sizeof pl, &pl, NULL);
    if (pl) clGetPlatformInfo(pl, CL_PLATFORM_NAME, sizeof plat - 1, plat, NULL);
    clGetDeviceInfo(gpu_ctx.dev, CL_DEVICE_NAME, sizeof dev - 1, dev, NULL);
    clGetDeviceInfo(gpu_ctx.dev, CL_DRIVER_VERSION, sizeof drv - 1, drv, NULL);
    snprintf(key, n, "probe %d" PROF_SUFFIX "|%s|%s|%s", GPU_PROBE_VERSION, plat, dev, drv);
    for (char *c = key; *c; c++)
        if (*c == '\n' || *c == '\r' || *c == '\t') *c = ' ';
}

static uint64_t fnv(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

void gpu_profile_path(const char *dir, char *path, size_t n)
{
    char key[1024];
    device_key(key, sizeof key);
    snprintf(path, n, "%s/gpu-%016llx.txt", dir, (unsigned long long)fnv(key));
}

/* The file's profile if it is braid's for this device and plausible:
 * its values, then its rounds (measurements merged, 1..) and whether it
 * is final (a quiet measurement is in it: 1, else 0). */
static bool file_read(const char *path, GpuProfile *p, int *rounds, int *final)
{
    char key[1024], line[1100], nums[512];
    device_key(key, sizeof key);
    FILE *f = fopen(path, "r");
    if (!f) return false;
    bool ok = fgets(line, sizeof line, f) && !strcmp(line, "braid gpu profile\n") && fgets(line, sizeof line, f) &&
              strlen(line) == strlen(key) + 1 && !strncmp(line, key, strlen(key)) && line[strlen(key)] == '\n' &&
              fgets(nums, sizeof nums, f) && !fgets(line, sizeof line, f);
    fclose(f);
    /* six values, the rounds and the final flag, nothing else */
    char *c = nums, *end = NULL;
    for (int k = 0; ok && k < 6; k++) {
        while (*c == ' ') c++;
        while (*c && *c != ' ' && *c != '\n') c++;
    }
    char *c6 = c;
    long r = ok ? strtol(c6, &end, 10) : 0, q = ok && end != c6 ? strtol(end, &c, 10) : -1;
    ok = ok && end != c && r >= 1 && r <= GPU_PROBE_ROUNDS && (q == 0 || q == 1) && !strcmp(c, "\n");
    if (ok) *c6 = 0;
    GpuProfile v;
    if (!ok || !gpu_profile_parse(nums, &v) || !prof_plausible(&v)) return false;
    /* (the parser takes 3 or 6 values: 6 here) */
    if (v.sync_s <= 0 || v.copy_bw <= 0 || v.down_bw <= 0) return false;
    *p = v, *rounds = (int)r, *final = (int)q;
    return true;
}

/* Written through a temporary file, so readers see the old file or the
 * new one. */
static void file_write(const char *path, const GpuProfile *p, int rounds, int final)
{
    char key[1024], tmp[1300];
    device_key(key, sizeof key);
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) return;
    fprintf(f, "braid gpu profile\n%s\n%.6g %.6g %.6g %.6g %.6g %.6g %d %d\n", key, p->launch_s, p->bw, p->xfer_bw,
            p->sync_s, p->copy_bw, p->down_bw, rounds, final);
    bool ok = fclose(f) == 0;
    chmod(tmp, 0600);
    if (!ok || rename(tmp, path)) remove(tmp);
}

/* The best of each value of a and b: the lower latencies, the higher
 * rates (load only makes them worse). */
static GpuProfile prof_best(GpuProfile a, GpuProfile b)
{
    return (GpuProfile){fmin(a.launch_s, b.launch_s), fmax(a.bw, b.bw),           fmax(a.xfer_bw, b.xfer_bw),
                        fmin(a.sync_s, b.sync_s),     fmax(a.copy_bw, b.copy_bw), fmax(a.down_bw, b.down_bw)};
}

/* Do a and b agree: every value within GPU_PROBE_AGREE of the other's? */
static bool prof_agree(GpuProfile a, GpuProfile b)
{
    const double x[6] = {a.launch_s, a.bw, a.xfer_bw, a.sync_s, a.copy_bw, a.down_bw};
    const double y[6] = {b.launch_s, b.bw, b.xfer_bw, b.sync_s, b.copy_bw, b.down_bw};
    for (int k = 0; k < 6; k++)
        if (!(x[k] <= GPU_PROBE_AGREE * y[k] && y[k] <= GPU_PROBE_AGREE * x[k])) return false;
    return true;
}

/* The host's run queue for the device probe: a CPU device computes on
 * every core, a GPU's probe needs one (its launches and transfers). */
static bool host_crowded(void *arg)
{
    (void)arg;
    return br_queue_crowded(gpu_ctx.info.is_cpu ? (int)BR_MAX(sysconf(_SC_NPROCESSORS_ONLN), 1) : 1);
}

/* Measures until two measurements in a row agree (at most
 * GPU_PROBE_TRIES), each value the best seen, into *p: false when a
 * measurement failed or is implausible. *busy: the host's run queue
 * was crowded before or after, or no two agreed. */
static bool measure_settled(const GpuProbe *probe, GpuProfile *p, bool *busy)
{
    bool (*crowded)(void *) = probe->crowded;
    bool crowd = crowded && crowded(probe->arg), agreed = false;
    GpuProfile last = {0}, best = {0};
    for (int t = 0; t < GPU_PROBE_TRIES && !agreed; t++) {
        GpuProfile m = {0};
        if (!probe->measure(probe->arg, &m) || !prof_plausible(&m)) return false;
        agreed = t > 0 && prof_agree(m, last);
        best = t > 0 ? prof_best(best, m) : m;
        last = m;
    }
    crowd = crowd || (crowded && crowded(probe->arg));
    *busy = crowd || !agreed;
    *p = best;
    return true;
}

static bool fixed(void)
{
    pthread_once(&g_env_once, env_read);
    pthread_mutex_lock(&g_plock);
    bool f = g_has_cfg || g_has_env;
    pthread_mutex_unlock(&g_plock);
    return f;
}

/* gpu_profile_calibrate under gpu_lock, the device created: a final
 * file is used; one that is not final is used as it is on a crowded
 * host, and otherwise measured again and merged (the best of each
 * value), one round more; no file: measured. A quiet measurement makes
 * the file final, and so do GPU_PROBE_ROUNDS rounds. */
static GpuProfSource calibrate(const char *dir, const GpuProbe *probe)
{
    if (fixed()) return GPU_PROF_CONFIG;
    const GpuProbe dev = {probe_device, NULL, host_crowded};
    const GpuProbe *pr = probe ? probe : &dev;
    char cdir[1024], path[1200] = "";
    if (dir ? dir[0] != 0 : br_cache_dir(NULL, cdir, sizeof cdir)) gpu_profile_path(dir ? dir : cdir, path, sizeof path);
    GpuProfile p = {0}, old = {0};
    int rounds = 0, final = 0;
    bool have = path[0] && file_read(path, &old, &rounds, &final);
    GpuProfSource src = GPU_PROF_FILE;
    if (have && (final || rounds >= GPU_PROBE_ROUNDS || (pr->crowded && pr->crowded(pr->arg)))) {
        p = old;
    } else {
        bool busy = true;
        if (!measure_settled(pr, &p, &busy)) {
            if (!have) return GPU_PROF_NOMINAL;
            p = old;   /* the file's, as it is */
        } else {
            src = GPU_PROF_MEASURED;
            if (have) p = prof_best(p, old);
            rounds = have ? rounds + 1 : 1;
            if (path[0]) file_write(path, &p, rounds, !busy || rounds >= GPU_PROBE_ROUNDS);
        }
    }
    pthread_mutex_lock(&g_plock);
    g_dev = p;
    g_has_dev = true;
    g_dev_src = src;
    pthread_mutex_unlock(&g_plock);
    return src;
}

GpuProfSource gpu_profile_calibrate(const char *dir, const GpuProbe *probe)
{
    BrErr e = {0};
    if (gpu_init(&e)) return GPU_PROF_NOMINAL;
    pthread_mutex_lock(&gpu_lock);
    GpuProfSource s = calibrate(dir, probe);
    pthread_mutex_unlock(&gpu_lock);
    return s;
}

void gpu_profile_device(void)
{
    static bool done;
    if (done || fixed()) return;
    done = true;
    calibrate(NULL, NULL);
}

void gpu_print_profile(FILE *f)
{
    GpuProfile p = gpu_profile();
    fprintf(f, "GPU profile (%s):\tlaunch %.2f us (%.2f us with a finish), read %.1f GB/s, copy %.1f GB/s, "
            "to the device %.2f GB/s, to the host %.2f GB/s.\n", gpu_profile_source_name(gpu_profile_source()),
            p.launch_s * 1e6, p.sync_s * 1e6, p.bw / 1e9, p.copy_bw / 1e9, p.xfer_bw / 1e9, p.down_bw / 1e9);
}
