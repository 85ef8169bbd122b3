/* gpu.h: the GPU backend on OpenCL (docs/gpu.md). One OpenCL device per
 * process, chosen by -gpu / sysds.gpu and created on first use; matrices
 * live on the device in a buffer pool (gpu/pool.c) keyed by the host
 * block, uploaded on first use and kept while the block lives and the
 * pool's budget allows (least recently used entries are evicted). Every
 * operator here takes and returns blocks (MB): results, dense or CSR,
 * stay on the device only (MB.dev) until the host reads them (mb_host
 * lands them; eviction lands a block still held).
 *
 * Operators return a new block, or NULL: with e set on a device error,
 * with e clear when they do not handle these operands (shapes that the
 * CPU kernel rejects, compressed blocks, empty matrices), in which case
 * the caller runs the CPU kernel. All entry points are thread-safe (one
 * lock: parfor workers share the device). */
#ifndef BRAID_GPU_H
#define BRAID_GPU_H

#include <stdio.h>

#include "../base/ops.h"
#include "../matrix/mb.h"

/* sysds.gpu / -gpu: off, on (per instruction by cost), force (every
 * operator the backend has runs on the device: tests). */
typedef enum { GPU_OFF, GPU_ON, GPU_FORCE } GpuMode;

/* Settings, before the first operator: mode, device index over all
 * platforms' devices in ICD order (-1: the first GPU, else the first
 * device of any type), pool budget in bytes (<= 0: half the device's
 * global memory). */
void gpu_configure(GpuMode mode, int device, double pool_budget);
GpuMode gpu_mode(void);
/* sysds.gpu.stitch: form stitched regions from DML (default on; only
 * with the backend on). */
void gpu_set_stitch(bool on);
bool gpu_stitch_on(void);

/* Creates the context (once): 0, or an error saying why there is no
 * device ("no OpenCL platform/device: ..."). */
int gpu_init(BrErr *e);

/* The device profile the plan choice prices the device side with
 * (gpu/profile.c; docs/gpu.md, "The device profile"): codegen/cost.c's
 * stitched vectors, the cost rule (gpu_worth), the latency evaluator
 * (stitch_cost) and the explorer's delta evaluator. launch_s: seconds
 * of an empty launch, pipelined; bw: bytes per second a kernel reads;
 * xfer_bw: host-to-device bytes per second (pageable memory); sync_s:
 * an empty launch waited for (clFinish); copy_bw: bytes read and
 * written per second by a copy kernel; down_bw: device-to-host bytes
 * per second. Whichever comes first: a test's (gpu_set_profile), the
 * config key sysds.gpu.profile (gpu_configure_profile), the variable
 * BRAID_GPU_PROFILE (read once), the device's measurement (measured on
 * creation, or read from the file of an earlier one), else nominal: 10
 * us, 500 GB/s, 12 GB/s (sync_s, copy_bw, down_bw as launch_s, bw,
 * xfer_bw). A 0 in the last three fields of a set profile means as
 * their first three. */
typedef struct GpuProfile { double launch_s, bw, xfer_bw, sync_s, copy_bw, down_bw; } GpuProfile;
typedef enum { GPU_PROF_NOMINAL, GPU_PROF_MEASURED, GPU_PROF_FILE, GPU_PROF_CONFIG, GPU_PROF_TEST } GpuProfSource;
GpuProfile gpu_profile(void);
/* The compute units and clock (MHz) the latency evaluator prices a
 * schedule with (gpu/stitch.c stitch_cost, stitch_comb_cost): the
 * device's, unless the variable BRAID_GPU_UNITS="CUS MHZ" pins them
 * (read once). The tests pin them with the profile (tests/t.h
 * t_pin_machine), so the choices they check do not flip with the
 * device's size (an H200's 132 units against PoCL's cores: a combine
 * of a few cells' partials in the operator's launch or in a launch of
 * its own), and with them the codegen operators' blocks of rows
 * (gpu/spoof_cl.c row_blocks: their partials are what a combine
 * walks). */
void gpu_units(double *cus, double *mhz);
GpuProfSource gpu_profile_source(void);
const char *gpu_profile_source_name(GpuProfSource s);
void gpu_set_profile(const GpuProfile *p);
/* "launch_s bw xfer_bw" or "launch_s bw xfer_bw sync_s copy_bw down_bw"
 * (positive, finite); false when spec is not such a list. */
bool gpu_profile_parse(const char *spec, GpuProfile *p);
/* sysds.gpu.profile's profile (NULL: none), before the first operator. */
void gpu_configure_profile(const GpuProfile *p);
/* Calibration (gpu_init does it once per process, unless a profile is
 * fixed): the profile file <dir>/gpu-<hash>.txt of this device (dir
 * NULL: the user's cache folder, br_cache_dir; "": no file) if it is
 * valid, else probe->measure (NULL: the device's probes, about 100 ms),
 * written to the file. Returns where the device's profile came from:
 * file, measured, nominal (no device, or a failed or implausible
 * measurement: nothing kept) or config (a fixed profile: nothing done).
 * Tests call it with their folder and probe. */
/* A measurement is trusted (final) only when it was quiet: the host's
 * run queue not crowded before and after it (crowded: NULL with a
 * measure of the test's means never crowded; probe NULL: the device's
 * probe and br_queue_crowded) and two measurements in a row agree
 * (within GPU_PROBE_AGREE in every value; up to GPU_PROBE_TRIES
 * measurements, each value the best seen). A busy one is used but
 * written as not final: a later process on a quiet host measures again
 * and keeps each value's best (a busy host makes rates low and
 * latencies high, never the other way), until a quiet measurement or
 * GPU_PROBE_ROUNDS of them; on a crowded host it uses the file as it
 * is. */
typedef struct GpuProbe {
    bool (*measure)(void *arg, GpuProfile *p);
    void *arg;
    bool (*crowded)(void *arg);
} GpuProbe;
#define GPU_PROBE_TRIES 3
#define GPU_PROBE_ROUNDS 4
#define GPU_PROBE_AGREE 1.5
GpuProfSource gpu_profile_calibrate(const char *dir, const GpuProbe *probe);
/* The file's path for this device in dir (the device created). */
void gpu_profile_path(const char *dir, char *path, size_t n);

/* What gpu_init found: name, type and the properties the cost models use. */
typedef struct GpuInfo {
    char name[128];
    bool is_cpu;               /* CL_DEVICE_TYPE_CPU (PoCL): host memory */
    int compute_units;
    int clock_mhz;
    size_t max_wg;             /* max work-group size */
    size_t local_mem;          /* bytes of local memory per work-group */
    size_t sub_group;          /* sub-group (warp) width, 0 if unknown */
    bool has_subgroups;        /* cl_khr_subgroups or OpenCL >= 2.1 */
    int warp_shfl;             /* generated programs built with ST_NV
                                  (gpu_int.h GPU_CL_SHFL): 1 warp shuffles
                                  by inline PTX (BRAID_GPU_SHFL=1 on an
                                  NVIDIA device whose probe kernel gave
                                  the butterfly's sums), 2 emulated
                                  (BRAID_GPU_SHFL=emu, tests), 0 none */
    double global_mem;         /* bytes */
    size_t max_alloc;          /* bytes of the largest buffer */
} GpuInfo;
const GpuInfo *gpu_info(void);

/* Counters for tests and -stats. */
typedef struct GpuStats {
    int64_t launches;          /* kernel launches (CLBlast calls count one) */
    int64_t h2d_bytes, d2h_bytes;
    int64_t hits, misses;      /* pool lookups of inputs */
    int64_t evictions;
    int64_t buf_reused;        /* buffers gpu_alloc took from its cache
                                  instead of a new clCreateBuffer */
    int64_t forgotten;         /* entries dropped for an in-place update */
    int64_t landed;            /* device-only results copied to the host */
    int64_t ops;               /* operators run on the device */
    int64_t stitched;          /* stitched regions run (gpu/stitch.c) */
    int64_t stitch_launches;   /* their kernel launches */
    int64_t stitch_fallbacks;  /* region runs by the per-operator kernels
                                  while the region's kernel compiled
                                  (sysds.gpu.async) */
    int64_t fused_ops;         /* codegen's fused operators run on the
                                  device (gpu/spoof_cl.c) */
    int64_t fused_cpu;         /* codegen's fused operators the device
                                  did not take under -gpu (their template
                                  or operands, or their kernel still
                                  compiling; they ran on the CPU) */
    int64_t fused_async;       /* of those, runs while the kernel built in
                                  the background (sysds.gpu.async) */
    int64_t tiled;             /* launches of tiled generated kernels */
    int64_t fused_region;      /* of fused_ops, stitched plans whose
                                  vectors ran in the operator's own
                                  launch (codegen/cgregion.c: a Cell
                                  plan as one region, or a region inside
                                  the operator's kernel) */
    int64_t pre_wg;            /* of those in the operator's kernel, runs
                                  whose region took work-group
                                  composition (the latency evaluator) */
    int64_t fused_declined;    /* of fused_cpu, calls whose stitched
                                  vectors the launch found NaN or Inf
                                  (GpuStitchIn.nfchk) */
    int64_t scratch_bytes;     /* bytes of the per-work-item scratch that
                                  generated Row and Cell/MAgg operators'
                                  calls reserved (spoof_cl.c) */
    int64_t expand_bytes;      /* bytes of the dense copies of CSR
                                  operands made on the device before a
                                  launch (gpu_dense_view) */
    int64_t part_bytes;        /* bytes of the partial blocks of the CSR
                                  products (t(X) %*% B, t(X) %*% X) */
} GpuStats;
GpuStats gpu_stats(void);
void gpu_stats_reset(void);
/* Waits until the device has run every enqueued command (launches are
 * asynchronous; benchmarks time the device's work by it). */
void gpu_finish(void);
/* Lines for -stats (nothing with the backend off): the counters and the
 * device profile with its source. */
void gpu_print_stats(FILE *f);

/* Operators (semantics of kernels/ew.h, agg.h, mm.h, reorg.h). */
MB *gpu_unary(OpCode op, const MB *a, BrErr *e);
MB *gpu_binary(OpCode op, const MB *a, const MB *b, BrErr *e);
MB *gpu_binary_ms(OpCode op, const MB *a, double s, bool scalar_left, BrErr *e);
/* Does gpu_binary_ms keep a CSR operand's structure with the scalar s
 * (f(0, s) = 0 and s finite)? */
bool gpu_ms_keeps_csr(OpCode op, double s, bool scalar_left);
/* op in OP_SUM, OP_SUMSQ, OP_MEAN, OP_AMIN, OP_AMAX, OP_PROD, OP_VAR, OP_SD
 * (any direction), OP_IDXMAX, OP_IDXMIN (DIR_ROW); DIR_FULL gives 1x1 */
MB *gpu_agg(OpCode op, AggDir dir, const MB *a, BrErr *e);
MB *gpu_matmul(const MB *a, const MB *b, BrErr *e);
/* t(a) %*% b (OP_MATMULTL, k_matmul_tl): a k x m, b k x n */
MB *gpu_matmul_tl(const MB *a, const MB *b, BrErr *e);
MB *gpu_tsmm(const MB *x, bool left, BrErr *e);
MB *gpu_transpose(const MB *a, BrErr *e);
/* op in OP_CUMSUM, OP_CUMPROD, OP_CUMMIN, OP_CUMMAX (kernels/agg.h k_cum) */
MB *gpu_cum(OpCode op, const MB *a, BrErr *e);
/* ifelse as k_ifelse: each operand the matrix, or (NULL) the scalar next
 * to it; all scalars: NULL (the CPU gives a scalar) */
MB *gpu_ifelse(const MB *c, double cs, const MB *a, double as, const MB *b, double bs, BrErr *e);
/* a[rl:ru, cl:cu] (half-open); NULL for a range outside a (the CPU
 * reports it) */
MB *gpu_slice(const MB *a, int64_t rl, int64_t ru, int64_t cl, int64_t cu, BrErr *e);
/* Left indexing as k_lix / k_lix_scalar: a copy of x with x[rl:ru,
 * cl:cu] (half-open) replaced by y, or (y NULL) the one cell by s; NULL
 * for a range outside x or a source of another shape (the CPU reports
 * it). The target is copied on the device, never updated in place. */
MB *gpu_lix(const MB *x, int64_t rl, int64_t ru, int64_t cl, int64_t cu, const MB *y, double s, BrErr *e);

/* The ordinary block of the compressed block c decompressed on the
 * device (docs/gpu.md, "Compressed inputs"): each group's compact form
 * uploaded (dictionary, codes, an UNC group's block), one launch per
 * group scattering its columns into a zeroed dense buffer; the result
 * is device-only, its cells equal to cmb_decompress's bit for bit.
 * gpu_cla_ok: are all of c's groups of the encodings the kernel takes
 * (EMPTY, CONST, DDC1, DDC2, UNC)? NULL (e clear) when one is not
 * (OLE, RLE: the host decompresses) or the buffer exceeds the largest. */
bool gpu_cla_ok(const MB *c);
MB *gpu_cla_decompress(const MB *c, BrErr *e);

/* Codegen's Row operators on the device (gpu/spoof_cl.c): src is the
 * kernel text codegen/cgen_cl.c generated for the plan (kernel cg_row),
 * op the skeleton's description as for k_spoof_row (fd, fs, ft unused),
 * L its nL lengths, tmplen the doubles of one work-item's scratch.
 * Results as k_spoof_row's: res[t] (device-only blocks) or v[t] (full
 * aggregates). 1 when it ran, 0 when the device does not take it (a
 * buffer beyond the largest: the caller runs the CPU operator), -1 with
 * e set. gpu_count_fused_cpu: counts a fused operator left to the CPU. */
/* Row kernels with a product (cg_vecmatl) and every Outer kernel are
 * tiled: cg_main takes these last arguments, a work-group's tiles in
 * local memory (lt) of tk values along the product's inner dimension
 * and tj columns (at most GPU_CG_TJ: a work-item's accumulators), sizes
 * chosen per kernel from the device's local memory and work-group limits
 * (gpu_spoof_tiles: a test's override). */
#define GPU_TILE_ARGS "__local double *lt, long tk, long tj"
/* An Outer kernel's tiles in lt: U's (tk values per work-item), V's (tj
 * rows of tk), then one value, the flag of a column tile with entries
 * (no local memory declared in the body, so the kernel can be wrapped
 * with the in-launch combine: gpu/spoof_cl.c stitched_source). */
#define GPU_OUTER_TILES "__local double *ut = lt + lid * tk, *vt = lt + wg * tk, *anyp = vt + tj * tk"
/* A generated source that begins with GPU_CG_EXACT says that the CPU's
 * generated operator gives its results to the bit (no sums, only
 * correctly rounded operations): only such an operator runs on the CPU
 * while its kernel builds under sysds.gpu.async; any other's first call
 * waits for its build (docs/gpu.md, "Asynchronous compilation"). */
#define GPU_CG_EXACT "/* exact */\n"
#define GPU_CG_TJ 16
void gpu_spoof_tiles(int wg, int tk, int tj);
/* The aggregated outputs of a Row, Outer, Cell or MAgg operator are
 * combined inside its own launch (its last work-group to finish, every
 * output) where the latency evaluator (stitch_comb_cost) prices that
 * below a cg_comb launch per output; gpu_spoof_comb: a test's override
 * (1 always in the launch, -1 never, 0 the evaluator's choice). */
void gpu_spoof_comb(int mode);
/* A stitched operator in one launch (docs/gpu.md, "Stitched codegen
 * plans in one launch"): a DIR_COL region r over the dense X
 * (gpu/stitch.h) whose outputs are the stitched inputs' vectors, its
 * scalar arguments sc, and by plan input k the region output bound in
 * its place (slot[k], -1 none). The launch's first work-groups run the
 * region (a column by one lane, as gpu_agg's column kernels, or by a
 * work-group, as the latency evaluator picks), the
 * others wait for them (a ticket per group, taken as it starts, and a
 * count of finished region groups) and then run the operator. */
struct StitchRegion;
typedef struct GpuStitchIn {
    const struct StitchRegion *r;
    const MB *x;
    const double *sc;
    const int *slot;
    bool nfchk;   /* the launch checks the vectors for NaN/Inf: with any,
                     the operator's rows are skipped and the call returns
                     0 (the CPU runs it: a multi-output Row plan's rule) */
} GpuStitchIn;
/* The region's schedule in a stitched launch (stitch_inlaunch_sched):
 * 0 the latency evaluator's, 1 thread composition (a column per lane,
 * gpu_agg's order), 2 work-group composition; a test's override. */
void gpu_spoof_pre(int mode);
struct SpoofRow;
/* st: NULL, or the stitched vectors computed in the same launch (the
 * inputs they replace bound to X) */
int gpu_spoof_row(const char *src, const struct SpoofRow *op, int nL, int64_t tmplen, const GpuStitchIn *st, MB **res,
                  double *v, BrErr *e);
/* Outer operators likewise (src from cgen_cl_outer, op as for
 * k_spoof_outer; frow, fcol unused): res[0] or v[0]. */
struct SpoofOuter;
int gpu_spoof_outer(const char *src, const struct SpoofOuter *op, int nL, MB **res, double *v, BrErr *e);
/* Cell and MAgg operators likewise (src from cgen_cl_cell, op as for
 * k_spoof_cell with sparse_safe the run's decision; the generated
 * functions unused): res[0], or v[t] for full aggregates. */
struct SpoofCell;
int gpu_spoof_cell(const char *src, const struct SpoofCell *op, const GpuStitchIn *st, MB **res, double *v, BrErr *e);
void gpu_count_fused_cpu(void);
/* Counts a fused operator run as one stitched region (gpu/stitch.c). */
void gpu_count_fused_region(void);

/* The cost rule of the instruction layer: should an operator run on the
 * device? x: bytes of its inputs not yet on the device (up), bytes of
 * its device-only inputs, which the CPU would first copy to the host
 * (down), its result's bytes and floating-point work. Always true under
 * GPU_FORCE. gpu_cost_rule is the rule itself for a device g, its
 * profile p (gpu_worth: gpu_profile) and the host's thread count (tests
 * give it other devices). */
/* pre: seconds the device side spends on the host first (decompressing
 * a compressed input); hscale: the host side's share of flops (a Cell
 * operator over a compressed input runs its body once per distinct
 * value: compressed over dense bytes; 0: 1). */
typedef struct GpuXfer { double up, down, out, flops, build, pre, hscale; } GpuXfer;
bool gpu_worth(const GpuXfer *x);
/* x.build: seconds of a kernel build the device run would start (a
 * generated operator's first device call), the share this call bears:
 * gpu_build_seconds() / calls of the operator so far, so that an
 * operator called often enough amortizes its build and one called once
 * or twice stays on the host. gpu_build_seconds: the mean time of the
 * generated programs built so far (50 ms before the first). */
double gpu_build_seconds(void);
/* Is generated source src's program built (spoof_cl.c's programs)? */
bool gpu_spoof_built(const char *src);
bool gpu_cost_rule(const GpuInfo *g, const GpuProfile *p, int threads, const GpuXfer *x);
/* Adds m's part to x: its bytes to up when it has no device copy, to
 * down when it is device-only (MB.dev). */
void gpu_xfer_add(GpuXfer *x, const MB *m);
/* The work of gpu_unary, gpu_binary_ms, gpu_binary and gpu_agg over
 * their operands as the kernels that run do it, into x's flops (the
 * device's), hscale (the host's share: the CPU kernels skip what a CSR
 * operand does not store, as the device's CSR kernels do; the device's
 * binary searches of CSR cells are its own) and out (the result's
 * bytes; a CSR result's values only, its structure is the input's).
 * The instruction layer adds the transfers (gpu_xfer_add). */
void gpu_price_unary(OpCode op, const MB *a, GpuXfer *x);
void gpu_price_ms(OpCode op, const MB *a, double s, bool scalar_left, GpuXfer *x);
void gpu_price_binary(OpCode op, const MB *a, const MB *b, GpuXfer *x);
void gpu_price_agg(OpCode op, AggDir dir, const MB *a, GpuXfer *x);
/* The products: op OP_MATMUL (a %*% b), OP_MATMULTL (t(a) %*% b) or
 * OP_TSMM (left: t(a) %*% a, else a %*% t(a); b unused), priced by the
 * kernel that runs: a CSR operand's entries, the passes over b for its
 * NaN/Inf, the binary searches and the partial sums. */
void gpu_price_mm(OpCode op, bool left, const MB *a, const MB *b, GpuXfer *x);

/* Drops m's device copy (its reference with it): before m is updated in
 * place, when the pool holds the only other reference (the device copy
 * would be stale anyway). True when there was an entry. */
bool gpu_pool_forget(const MB *m);
/* Bytes the pool's entries hold on the device. */
double gpu_pool_bytes(void);
/* Drops every pool entry (tests of eviction; end of a run); device-only
 * blocks still held elsewhere land on the host first. */
void gpu_pool_clear(void);

#endif
