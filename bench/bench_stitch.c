/* bench_stitch.c: stitched kernels against the XLA-style plan (a kernel
 * per reduction depth) and braid's per-operator GPU plan, on whatever
 * OpenCL device the ICD loader gives (make bench-stitch). The three
 * plans run alternately in one process, REPS rounds, and the medians'
 * ratios are printed; also every stitched schedule's time next to the
 * latency evaluator's rank (does its pick come out fast?). Every plan
 * is timed from the same state: X resident on the device (uploaded by
 * the warm-up runs, never dropped: a plan that cleared the pool made
 * the next plan pay X's upload), BATCH runs enqueued back to back, then
 * gpu_finish (launches are asynchronous: without it a plan's time was
 * its enqueueing, and its kernels ran inside the next plan's time);
 * the time per run is the batch's over BATCH. Results stay on the
 * device (as in a chain of device operators) and are released. The
 * bandwidth printed counts X read once and Y written once. On a GPU
 * three more shapes of 128-512 MiB, past the device's L2 cache; the
 * same shapes in PyTorch: bench/torch_stitch.py. */
#include <stdio.h>
#include <stdlib.h>

#include "gpu/stitch.h"

#define REPS 7

/* runs per timed batch: 1 on a CPU device (PoCL: each run takes
 * milliseconds), 20 on a GPU (a run takes tens of microseconds, near a
 * launch's cost) */
static int batch = 1;

static double median(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) { double t = v[j]; v[j] = v[j - 1]; v[j - 1] = t; }
    return v[n / 2];
}

static double time_sched(const StitchRegion *r, const MB *x, const StitchSched *s)
{
    BrErr e = {0};
    gpu_finish();
    int64_t t0 = br_now_ns();
    for (int b = 0; b < batch; b++) {
        MB *y = stitch_run(r, x, s, &e);
        if (!y) { fprintf(stderr, "bench_stitch: %s\n", e.msg); exit(1); }
        mb_release(y);
    }
    gpu_finish();
    return (double)(br_now_ns() - t0) / 1e6 / batch;
}

/* layernorm or softmax as braid's per-operator GPU plan runs it (one
 * run; the result device-only) */
static MB *run_ops(const MB *x, bool softmax, BrErr *e)
{
    MB *y;
    if (softmax) {
        MB *m = gpu_agg(OP_AMAX, DIR_ROW, x, e), *c = gpu_binary(OP_MINUS, x, m, e), *ex = gpu_unary(OP_EXP, c, e);
        MB *s = gpu_agg(OP_SUM, DIR_ROW, ex, e);
        y = gpu_binary(OP_DIV, ex, s, e);
        mb_release(m), mb_release(c), mb_release(ex), mb_release(s);
    } else {
        MB *mu = gpu_agg(OP_MEAN, DIR_ROW, x, e), *c = gpu_binary(OP_MINUS, x, mu, e);
        MB *sq = gpu_binary(OP_MULT, c, c, e), *var = gpu_agg(OP_MEAN, DIR_ROW, sq, e);
        MB *ve = gpu_binary_ms(OP_PLUS, var, 1e-5, false, e), *sd = gpu_unary(OP_SQRT, ve, e);
        y = gpu_binary(OP_DIV, c, sd, e);
        mb_release(mu), mb_release(c), mb_release(sq), mb_release(var), mb_release(ve), mb_release(sd);
    }
    return y;
}

static double time_ops(const MB *x, bool softmax)
{
    BrErr e = {0};
    gpu_finish();
    int64_t t0 = br_now_ns();
    for (int b = 0; b < batch; b++) {
        MB *y = run_ops(x, softmax, &e);
        if (!y) { fprintf(stderr, "bench_stitch: %s\n", e.msg); exit(1); }
        mb_release(y);
    }
    gpu_finish();
    return (double)(br_now_ns() - t0) / 1e6 / batch;
}

static void bench(const char *name, const StitchRegion *r, int64_t rows, int64_t cols, bool softmax)
{
    BrErr e = {0};
    MB *x = mb_dense(rows, cols, &e);
    for (int64_t i = 0; i < rows * cols; i++) x->d[i] = (double)((i * 7919) % 1000) / 250.0 - 2;
    mb_recount_nnz(x);
    StitchSched c[16];
    int n = stitch_enumerate(r, rows, cols, c, 16);
    StitchSched xla = {.scheme = ST_XLA, .lanes = 64, .wg = 64};
    for (int k = 0; k < n; k++) time_sched(r, x, &c[k]);   /* compile everything first */
    time_ops(x, softmax);
    double tb[REPS], tx[REPS], to[REPS];
    for (int i = 0; i < REPS; i++) {
        tb[i] = time_sched(r, x, &c[0]);
        tx[i] = time_sched(r, x, &xla);
        to[i] = time_ops(x, softmax);
    }
    double mb_ = median(tb, REPS), mx = median(tx, REPS), mo = median(to, REPS);
    double gb = 2.0 * (double)rows * (double)cols * 8 / 1e9;   /* X read, Y written, GB */
    printf("%s %lldx%lld: stitched (%s, %d lanes) %.3f ms, XLA-style %.3f ms, per operator %.3f ms; "
           "XLA/stitched %.2fx, per-operator/stitched %.2fx; stitched %.3g GB/s (X read + Y written once)\n",
           name, (long long)rows, (long long)cols, stitch_scheme_name(c[0].scheme), c[0].lanes, mb_, mx, mo, mx / mb_,
           mo / mb_, gb / (mb_ / 1e3));
    printf("  schedule (evaluator rank: scheme/lanes/wg: estimated cycles, measured ms):");
    for (int k = 0; k < n; k++) {
        double t[3];
        for (int i = 0; i < 3; i++) t[i] = time_sched(r, x, &c[k]);
        printf(" %d:%s/%d/%d:%.3g,%.3f", k, stitch_scheme_name(c[k].scheme), c[k].lanes, c[k].wg, c[k].cycles,
               median(t, 3));
    }
    printf("\n");
    mb_release(x);
}

int main(void)
{
    gpu_configure(GPU_FORCE, -1, 0);
    BrErr e = {0};
    if (gpu_init(&e)) { fprintf(stderr, "bench_stitch: %s\n", e.msg); return 1; }
    printf("device: %s (%d compute units); warp shuffles in the trees: %s\n", gpu_info()->name,
           gpu_info()->compute_units, (const char *[]){"no", "yes", "emulated"}[gpu_info()->warp_shfl]);
    if (!gpu_info()->is_cpu) batch = 20;
    printf("runs per timed batch: %d; times per run, device work to the end (clFinish), X on the device\n", batch);
    StitchRegion ln, sm;
    st_layernorm(&ln, 1e-5);
    st_softmax(&sm);
    bench("layernorm", &ln, 4096, 1024, false);
    bench("layernorm", &ln, 65536, 16, false);
    bench("softmax", &sm, 4096, 1024, true);
    if (!gpu_info()->is_cpu) {   /* past a GPU's L2 cache (the H200's is 60 MB) */
        bench("layernorm", &ln, 65536, 1024, false);
        bench("layernorm", &ln, 1048576, 16, false);
        bench("softmax", &sm, 65536, 1024, true);
    }
    return 0;
}
