/* bench_finflag.c: what the finiteness flag of a block (matrix/mb.h)
 * saves in a memory-bound product X %*% w whose w holds a zero (GLM's or
 * L2SVM's first iteration from w = 0, a sparse model). Without a known
 * flag, k_mm_ieee_zeros reads X a second time to look for NaN/Inf that a
 * zero of w would turn into NaN; with it, X is read once.
 *
 * Both sides run in this one process, alternating (flag known, flag
 * dropped with mb_values_changed before the call), best of REPS each; the
 * result is a ratio of the two, with the scans counted to show which side
 * scanned. Usage: bench_finflag [rows] [cols] [reps]; the machine may be
 * shared, so read the ratio, not the seconds. Build: make
 * build/bench/bench_finflag. */
#include "base/base.h"
#include "kernels/mm.h"
#include "matrix/mb.h"

#include <stdio.h>
#include <stdlib.h>

static double now_s(void) { return (double)br_now_ns() * 1e-9; }

/* Times one product; checks it is finite where it must be. */
static double one(const MB *x, const MB *w, bool drop, int64_t *scans)
{
    BrErr e = {0};
    if (drop) mb_values_changed((MB *)x);
    int64_t s0 = mb_fin_scans();
    double t = now_s();
    MB *r = k_matmul(x, w, &e);
    t = now_s() - t;
    *scans += mb_fin_scans() - s0;
    if (!r) { fprintf(stderr, "bench_finflag: %s\n", e.msg); exit(1); }
    mb_release(r);
    return t;
}

int main(int argc, char **argv)
{
    int64_t rows = argc > 1 ? atoll(argv[1]) : 2000000, cols = argc > 2 ? atoll(argv[2]) : 10;
    int reps = argc > 3 ? atoi(argv[3]) : 15;
    BrErr e = {0};
    MB *x = mb_dense_uninit(rows, cols, &e), *w = mb_dense(cols, 1, &e);
    if (!x || !w) { fprintf(stderr, "bench_finflag: %s\n", e.msg); return 1; }
    for (int64_t i = 0; i < rows * cols; i++) x->d[i] = 1.0 + (double)(i % 97) * 0.01;
    x->nnz = rows * cols;
    for (int64_t j = 1; j < cols; j++) w->d[j] = 0.5 * (double)j;   /* w[0] = 0 */
    w->nnz = cols - 1;
    double best[2] = {1e30, 1e30};
    int64_t scans[2] = {0, 0};
    (void)one(x, w, false, &scans[0]);   /* warm: the first call scans and keeps the answer */
    scans[0] = 0;
    for (int k = 0; k < reps; k++)
        for (int side = 0; side < 2; side++) {
            double t = one(x, w, side == 1, &scans[side]);
            if (t < best[side]) best[side] = t;
        }
    double gb = (double)rows * (double)cols * 8 / 1e9;
    printf("X %lldx%lld (%.2f GB) %%*%% w with a zero, best of %d, threads %d\n", (long long)rows,
           (long long)cols, gb, reps, br_threads());
    printf("  flag known:   %.4f s  (%.1f GB/s of X)  scans %lld\n", best[0], gb / best[0], (long long)scans[0]);
    printf("  flag unknown: %.4f s  (%.1f GB/s of X)  scans %lld\n", best[1], gb / best[1], (long long)scans[1]);
    printf("  ratio unknown/known: %.2f\n", best[1] / best[0]);
    mb_release(x);
    mb_release(w);
    return 0;
}
