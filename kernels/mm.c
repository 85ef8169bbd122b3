/* mm.c: matrix multiplication kernels: %*%, t(X)%*%X / X%*%t(X) (tsmm),
 * and t(a)%*%b (the mmchain t(X)%*%(w*(X%*%v)) is in mmchain.c).
 *
 * Dense x dense goes to OpenBLAS (dgemm/dgemv/dsyrk). Everything with a
 * sparse side runs here, row-parallel: each output row is computed by one
 * thread in a fixed order, so results do not depend on the thread count.
 * Sparse outputs are built Gustavson-style: a per-thread dense accumulator
 * plus the list of touched columns, compacted per row into per-block pieces
 * that are concatenated in row order at the end.
 */
#include "mm.h"
#include "../matrix/cmb.h"
#include "mm_int.h"
#include "leaf.h"
#include "ew.h"
#include "reorg.h"

#include <assert.h>
#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25    /* Linux 6.1; glibc 2.36's headers lack it */
#endif

void openblas_set_num_threads(int);
int openblas_get_num_threads(void);

/* Largest dense t(x)%*%x (n x n) built by scattering rows of a sparse x
 * straight into the output (it stays cache-resident); larger ones go row
 * by row over the transpose. */
#define TSMM_SMALL_OUT 1024

/* Largest row count handed to one BLAS call (BLAS ints are 32-bit). */
#define BLAS_CHUNK ((int64_t)INT_MAX / 16 * 16)

/* Dense tsmm with a long inner dimension: number of fixed ranges of it
 * computed in parallel, and the least length of one range. */
#define TSMM_GROUPS 8
#define TSMM_GROUP_MIN 1024
/* Columns of t(X) %*% X that the leaf's loops take (docs/DESIGN.md,
 * "Kernels for narrow shapes"): tsmm_small up to 16, tsmm_mid up to
 * TSMM_MID_MAX (its 4-row passes waste less of the triangle there than
 * the packed tiles of 8 x 8), tsmm_wide up to TSMM_WIDE_MAX (past it
 * dsyrk's rate is as good). By the column count only, so every level
 * that has the leaves gives the same bits. */
#define TSMM_MID_MAX 23
#define TSMM_WIDE_MAX 640

/* OpenBLAS's packing buffers on huge pages. Each OpenBLAS thread, and
 * each thread that calls OpenBLAS, maps a 128 MB buffer (mmap, no
 * advice) at its first call (the CLI's restart of OpenBLAS's workers maps
 * one too) and packs into its first megabytes: with 4 KB pages a
 * process's first products took about a thousand faults a thread, ~10 us
 * each on the benchmark VM (the autoencoder's first epoch: ~2000 faults,
 * 20 ms; docs/perf.md "Fresh memory"). Once, before braid's first BLAS
 * product of BLAS_WARM_MIN multiply-adds or more: products on all of
 * OpenBLAS's threads and on each of braid's threads at once make every
 * buffer exist; then each anonymous mapping of
 * 32 MB to 16 GB that is nearly all untouched (at most a sixteenth of its
 * pages resident: the buffers, not data) is advised MADV_HUGEPAGE, and
 * its 2 MB ranges holding a touched page are collapsed into huge pages
 * (MADV_COLLAPSE, Linux 6.1; where that fails they stay as they are).
 * Nothing else changes: OpenBLAS computes what it did. */

/* An n x n x n product of zeros on OpenBLAS. */
static void blas_warm_gemm(int n)
{
    double *a = br_calloc(3 * (size_t)n * (size_t)n, sizeof(double));
    if (!a) return;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, a + n * n, n, 0.0, a + 2 * n * n, n);
    free(a);
}

/* Advises the mapping [lo, hi) as above when at most a sixteenth of it
 * is resident; res: room for a 2 MB range's mincore vector. One mincore
 * pass counts the resident pages and notes the touched ranges. */
static void advise_buffer(uintptr_t lo, uintptr_t hi, unsigned char *res)
{
    const uintptr_t huge = (uintptr_t)2 << 20, np = huge / 4096;
    const uintptr_t r0 = (lo + huge - 1) & ~(huge - 1), nr = hi > r0 ? (hi - r0) / huge : 0;
    bool *touched = nr ? br_calloc(nr, sizeof *touched) : NULL;
    size_t resident = 0;
    bool ok = touched != NULL;
    for (uintptr_t k = 0; ok && k < nr; k++) {
        ok = mincore((void *)(r0 + k * huge), huge, res) == 0;
        size_t c = 0;
        for (size_t p = 0; ok && p < np; p++) c += res[p] & 1;
        resident += c;
        touched[k] = c > 0;
    }
    if (ok && resident * 4096 * 16 <= hi - lo && madvise((void *)lo, hi - lo, MADV_HUGEPAGE) == 0)
        for (uintptr_t k = 0; k < nr; k++)
            if (touched[k]) (void)madvise((void *)(r0 + k * huge), huge, MADV_COLLAPSE);
    free(touched);
}

static void blas_buffers_huge(void)
{
    /* one product on all of OpenBLAS's threads (72^3 is above its
     * threshold for threads, 4 * 65536: its workers' buffers), then one
     * on each of braid's threads at once (gemm_in_blocks: each concurrent
     * caller packs into a buffer of its own; 128^3, a few tenths of a
     * millisecond, so that the calls overlap) */
    const int T = br_threads();
    if (openblas_get_num_threads() != T) openblas_set_num_threads(T);
    blas_warm_gemm(72);
    if (T > 1) {
        openblas_set_num_threads(1);
        #pragma omp parallel num_threads(T)
        {
            #pragma omp barrier
            blas_warm_gemm(128);
        }
    }
    unsigned char *res = br_malloc(((size_t)2 << 20) / 4096);
    FILE *f = res ? fopen("/proc/self/maps", "r") : NULL;
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perm[8];
        int tail = 0;
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &lo, &hi, perm, &tail) != 3 || !tail) continue;
        if ((line[tail] && line[tail] != '\n') || strncmp(perm, "rw", 2) || hi - lo < ((unsigned long)32 << 20) ||
            hi - lo > ((unsigned long)16 << 30))
            continue;   /* a file, [heap], [stack]; read-only; small; reserved
                         * address space (AddressSanitizer's shadow) */
        advise_buffer(lo, hi, res);
    }
    if (f) fclose(f);
    free(res);
}

static pthread_once_t g_blas_huge = PTHREAD_ONCE_INIT;

/* Least multiply-adds of a product that prepares the buffers (0.1-0.3
 * ms, and 2 MB of new memory per collapsed range): a smaller product
 * touches only a few pages of a buffer. LAPACK's calls do not prepare. */
#define BLAS_WARM_MIN ((double)(1 << 20))

void k_blas_ready(double work)
{
    if (work >= BLAS_WARM_MIN) pthread_once(&g_blas_huge, blas_buffers_huge);
}

/* OpenBLAS's thread count is asked from OpenBLAS itself (a plain read),
 * not cached here: anything else in the process may set it. */
void k_blas_threads(void)
{
    int t = br_threads();
    if (openblas_get_num_threads() != t) openblas_set_num_threads(t);
}

/* Makes OpenBLAS single-threaded for calls made from inside braid's own
 * parallel regions; the next k_blas_threads() restores br_threads(). */
static void blas_serial(void)
{
    if (openblas_get_num_threads() != 1) openblas_set_num_threads(1);
}

/* Least multiply-adds of one BLAS call that may use OpenBLAS's threads
 * (about half a millisecond of one core). Below it the call runs on the
 * calling thread: waking OpenBLAS's pthread workers costs more than the
 * call, and after it they spin (sched_yield) for a while next to braid's
 * OpenMP threads on the same cores; in a loop of small operators (the
 * 256-row mini-batches of autoencoder_2layer) that made every following
 * parallel region several times slower. Dense products at or above it
 * do not take OpenBLAS's threads either (gemm_blocks: its split changes
 * the bits with its AVX-512 kernels); dsyrk and dgemv do. */
#define BLAS_PAR_MIN ((double)(1 << 23))

/* Least multiply-adds of a BLAS call that uses OpenBLAS's threads while
 * the machine is crowded (br_par): its workers sync by spinning on
 * sched_yield, and next to other processes a call of 5e8 multiply-adds
 * (MLogreg's t(X) %*% (w * X) over 50000 x 100, 2 threads, load 35-55)
 * took about 10x its single-threaded time, with the process mostly off
 * the CPU. About a second of one core; the result does not depend on
 * OpenBLAS's thread count (above). */
#define BLAS_PAR_CROWDED_MIN ((double)(1 << 30))

/* OpenBLAS's thread count for a call of `work` multiply-adds. */
static void blas_threads_for(double work)
{
    k_blas_ready(work);
    /* br_par's units are cells of a pass: 2^30 multiply-adds count as
     * 2^20 when they reach BLAS_PAR_CROWDED_MIN */
    if (work < BLAS_PAR_MIN || !br_par(BR_MAX((double)BR_PAR_MIN, work / 1024))) blas_serial();
    else k_blas_threads();
}

/* Dense products of GEMM_SPLIT_MIN to BLAS_PAR_MIN multiply-adds run as
 * up to GEMM_SPLIT_BLOCKS fixed blocks of output rows (GEMM_SPLIT_ROWS
 * or more each), one single-threaded dgemm per block, spread over
 * braid's threads (warm, unlike OpenBLAS's: see BLAS_PAR_MIN). The
 * blocks do not depend on the thread count, so neither do the bits
 * (OpenBLAS's edge kernels round differently). DESIGN.md, "Small-matrix
 * path": 256 x 100 by 100 x 100 took 94 us as one call, 42 us so. */
#define GEMM_SPLIT_MIN ((double)(1 << 18))
#define GEMM_SPLIT_ROWS 32
#define GEMM_SPLIT_BLOCKS 4

/* Products of BLAS_PAR_MIN multiply-adds or more run as GEMM_BIG_BLOCKS
 * fixed blocks of at least GEMM_BIG_MIN output rows, or else of output
 * columns, one single-threaded dgemm each, spread over braid's threads:
 * OpenBLAS's own split follows its thread count, and with its SkylakeX
 * and Cooperlake kernels the cells at the split's edges round
 * differently (a 16 x 7000 by 7000 x 300 product differed in its last
 * bits between one and two threads); its Haswell kernels did not. */
#define GEMM_BIG_BLOCKS 8
#define GEMM_BIG_MIN 64

/* Blocks of a product of `work` multiply-adds with `rows` x `cols`
 * output: > 1, that many row blocks; < -1, that many column bands; 1:
 * one BLAS call (blas_threads_for decides its threads); 0: a large
 * product too small in both directions to split, by groups of the inner
 * dimension (gemm_in_blocks). */
static int gemm_blocks(double work, int64_t rows, int64_t cols)
{
    if (work < GEMM_SPLIT_MIN) return 1;
    if (work >= BLAS_PAR_MIN) {
        if (rows >= 2 * GEMM_BIG_MIN) return (int)BR_MIN((int64_t)GEMM_BIG_BLOCKS, rows / GEMM_BIG_MIN);
        if (cols >= 2 * GEMM_BIG_MIN) return -(int)BR_MIN((int64_t)GEMM_BIG_BLOCKS, cols / GEMM_BIG_MIN);
        return 0;
    }
    int64_t b = BR_MIN((int64_t)GEMM_SPLIT_BLOCKS, rows / GEMM_SPLIT_ROWS);
    return b > 1 ? (int)b : 1;
}

/* Threads for nb fixed blocks of single-threaded dgemm calls (their
 * split does not depend on the team, so neither do the bits) over `work`
 * multiply-adds: up to nb, but one inside a parallel region, and one
 * while the machine is crowded (br_par) under 8 * BR_PAR_CROWDED_MIN
 * multiply-adds, about a millisecond of one core's dgemm: less than the
 * time slice a team waits for its members (a dense multiply-add counts
 * as 1/8 of a cell of a pass; the uncrowded threshold is unchanged). */
static int gemm_team(double work, int nb)
{
    if (omp_in_parallel() || !br_par(BR_MAX((double)BR_PAR_MIN, work / 8))) return 1;
    return BR_MIN(br_threads(), nb);
}

/* Least inner dimension of a group of gemm_k_groups. */
#define GEMM_K_MIN 1024

/* C (m x n) = A %*% B (ta: t(A) %*% B) as fixed groups of the inner
 * dimension k (up to GEMM_BIG_BLOCKS of GEMM_K_MIN or more), one
 * single-threaded dgemm each into C or a partial, the partials then
 * added to C in group order: the bits depend on the shape only. One call
 * when k is too short or the partials cannot be had. */
static void gemm_k_groups(bool ta, const double *A, const double *B, double *C, int64_t m, int64_t k, int64_t n)
{
    int G = (int)BR_MIN((int64_t)GEMM_BIG_BLOCKS, k / GEMM_K_MIN);
    size_t mn = (size_t)m * (size_t)n;
    double *part = G > 1 ? br_malloc((size_t)(G - 1) * mn * sizeof(double)) : NULL;
    if (!part) G = 1;
    const int T = G > 1 ? gemm_team((double)m * (double)k * (double)n, G) : 1;
    blas_serial();
    #pragma omp parallel for num_threads(T) schedule(static) if (T > 1)
    for (int g = 0; g < G; g++) {
        int64_t k0 = k * g / G, k1 = k * (g + 1) / G;
        double *Cg = g == 0 ? C : part + (size_t)(g - 1) * mn;
        cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)(k1 - k0), 1.0,
                    ta ? A + k0 * m : A + k0, ta ? (int)m : (int)k, B + k0 * n, (int)n, 0.0, Cg, (int)n);
    }
    for (int g = 1; g < G; g++) {
        const double *restrict p = part + (size_t)(g - 1) * mn;
        for (size_t c = 0; c < mn; c++) C[c] += p[c];
    }
    free(part);
}

/* C (m x n) = A %*% B (ta: t(A) %*% B, A k x m) in nb row blocks of C
 * (gemm_blocks: nb > 1), row-major, rows r0..r1 of C taking rows (ta:
 * columns) r0..r1 of A; or in -nb column bands (nb < -1) of multiples of
 * 8 columns, columns c0..c1 of C taking those of B; or (nb == 0) by
 * groups of k (gemm_k_groups). */
static void gemm_in_blocks(bool ta, const double *A, const double *B, double *C, int64_t m, int64_t k,
                           int64_t n, int nb)
{
    k_blas_ready((double)m * (double)k * (double)n);
    if (nb == 0) {
        gemm_k_groups(ta, A, B, C, m, k, n);
        return;
    }
    const int nbl = nb < 0 ? -nb : nb;
    const int T = gemm_team((double)m * (double)k * (double)n, nbl);
    blas_serial();
    #pragma omp parallel for num_threads(T) schedule(static) if (T > 1)
    for (int q = 0; q < nbl; q++) {
        int64_t r0 = 0, r1 = m, c0 = 0, c1 = n;
        if (nb > 0) { r0 = m * q / nbl; r1 = m * (q + 1) / nbl; }
        if (nb < 0) { c0 = n * q / nbl / 8 * 8; c1 = q + 1 == nbl ? n : n * (q + 1) / nbl / 8 * 8; }
        cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, CblasNoTrans, (int)(r1 - r0), (int)(c1 - c0),
                    (int)k, 1.0, ta ? A + r0 : A + r0 * k, ta ? (int)m : (int)k, B + c0, (int)n, 0.0,
                    C + r0 * n + c0, (int)n);
    }
}

/* Recount non-zeros (dense; in parallel for large blocks) and pick the
 * format; releases r on failure (mm_int.h). The recount of a dense
 * result also sets its finiteness flag (mb.h), so that a product or
 * where-loop over it does not scan it again. */
MB *mm_finish(MB *r, BrErr *e)
{
    if (!r) return NULL;
    int bad = 0;
    bool dense = !r->sparse;
    if (dense) {
        int64_t cells = r->rows * r->cols, nz = 0;
        const double *d = r->d;
        const KEwLeaf *L = k_leaves(k_isa())->ew;
        int T = br_par((double)cells / 16) ? br_threads() : 1;   /* 16 * BR_PAR_MIN cells or more */
        #pragma omp parallel for num_threads(T) reduction(+ : nz) reduction(| : bad) if (T > 1)
        for (int t = 0; t < T; t++)
            nz += L->nz_count_fin(d + cells * t / T, cells * (t + 1) / T - cells * t / T, &bad);
        r->nnz = nz;
    }
    if (mb_examine(r, e)) { mb_release(r); return NULL; }
    if (dense) mb_fin_set(r, bad != 0);
    return r;
}

static MB *oom(BrErr *e)
{
    br_err(e, BR_ENOMEM, "out of memory in matrix multiplication");
    return NULL;
}

/* Threads of a product's own parallel region over `work` multiply-adds:
 * BR_PAR_MIN or more, fewer than BR_PAR_CROWDED_MIN ones on one thread
 * while the machine is crowded (br_par). Every region that asks splits
 * its work independently of the team (fixed row or column ranges, whole
 * output cells per iteration), so the bits do not depend on it. */
static int nthreads_for(double work)
{
    return br_par(work) ? br_threads() : 1;
}

/* ---------------------------------------------------------------------- */
/* Small structural helpers                                               */

/* Number of non-empty rows of a sparse block. */
static int64_t nonempty_rows(const MB *a)
{
    int64_t c = 0;
    for (int64_t i = 0; i < a->rows; i++) c += a->rp[i + 1] > a->rp[i];
    return c;
}

/* Number of non-empty columns of a sparse block, or -1 on OOM. */
static int64_t nonempty_cols(const MB *a)
{
    uint8_t *seen = br_calloc((size_t)a->cols, 1);
    if (!seen) return -1;
    int64_t c = 0;
    for (int64_t k = 0; k < a->nnz; k++)
        if (!seen[a->ci[k]]) { seen[a->ci[k]] = 1; c++; }
    free(seen);
    return c;
}

/* Transpose of a sparse block as a new CSR block (caller owns). */
static MB *sp_transpose(const MB *a, BrErr *e)
{
    MB *t = mb_sp_alloc(a->cols, a->rows, a->nnz, e);
    if (!t) return NULL;
    int64_t *pos = br_malloc((size_t)(a->cols + 1) * sizeof(int64_t));
    if (!pos) { mb_release(t); return oom(e); }
    for (int64_t k = 0; k < a->nnz; k++) t->rp[a->ci[k] + 1]++;
    for (int64_t j = 0; j < a->cols; j++) t->rp[j + 1] += t->rp[j];
    memcpy(pos, t->rp, (size_t)(a->cols + 1) * sizeof(int64_t));
    for (int64_t i = 0; i < a->rows; i++)
        for (int64_t k = a->rp[i]; k < a->rp[i + 1]; k++) {
            int64_t p = pos[a->ci[k]]++;
            t->ci[p] = (int32_t)i;
            t->v[p] = a->v[k];
        }
    free(pos);
    t->nnz = a->nnz;
    t->build_row = t->rows;
    return t;
}

/* Transpose of a dense block (caller owns). */
static MB *dense_transpose(const MB *a, BrErr *e)
{
    MB *t = mb_dense_uninit(a->cols, a->rows, e);
    if (!t) return NULL;
    int64_t m = a->rows, n = a->cols;
    for (int64_t i0 = 0; i0 < m; i0 += 32)
        for (int64_t j0 = 0; j0 < n; j0 += 32)
            for (int64_t i = i0; i < BR_MIN(m, i0 + 32); i++)
                for (int64_t j = j0; j < BR_MIN(n, j0 + 32); j++)
                    t->d[j * m + i] = a->d[i * n + j];
    t->nnz = a->nnz;
    return t;
}

/* Splits [0, len) into nr ranges of about equal total weight:
 * bounds[0..nr], bounds[0] = 0, bounds[nr] = len. */
static void split_weighted(const int64_t *wgt, int64_t len, int nr, int64_t *bounds)
{
    double total = 0, acc = 0;
    for (int64_t j = 0; j < len; j++) total += (double)wgt[j];
    int g = 1;
    bounds[0] = 0;
    for (int64_t j = 0; j < len && g < nr; j++) {
        acc += (double)wgt[j];
        while (g < nr && acc * nr >= total * g) bounds[g++] = j + 1;
    }
    while (g <= nr) bounds[g++] = len;
}

/* ---------------------------------------------------------------------- */
/* BLAS wrappers (dense x dense)                                          */

/* Matrix-vector products run single-threaded on ranges of rows, the
 * ranges in parallel on braid's OpenMP threads: an iterative algorithm
 * alternates them with elementwise kernels, and OpenBLAS's own (pthread)
 * threads spin-waiting next to braid's OpenMP threads on the same cores
 * cost a scheduler time slice per call (milliseconds for a 0.1 ms gemv).
 * The ranges run the leaf's tvec_rows/mvec_rows (AVX2 and AVX-512: the
 * read rate, where OpenBLAS's dgemv kernels read rows of 10 to 200
 * columns at half of it or less), else single-threaded dgemv.
 * A %*% x splits the rows evenly over the threads at multiples of 16 rows
 * (OpenBLAS's kernel takes rows in blocks, and a row's sum order depends
 * on its place in its block: aligned ranges keep it the same for any thread
 * count; the leaf's rows do not depend on it). t(A) %*% x sums partial
 * vectors of fixed groups of about GEMV_CELLS cells (at least 64 rows) in
 * group order, so the result depends on the shape only, never on the
 * thread count; with more than GEMV_TMAX columns it keeps OpenBLAS's
 * threading. */
#define GEMV_CELLS ((int64_t)1 << 15)
#define GEMV_TMAX 4096

/* y (m) = A (m x k, row-major) %*% x (k); returns the non-zeros of y,
 * counted by each thread over its rows while they are in cache, and
 * sets *nonfinite when one is NaN or infinite (in the same pass). */
static int64_t gemv_rows(const double *A, const double *x, double *y, int64_t m, int64_t k, int *nonfinite)
{
    int T = nthreads_for((double)m * (double)k);
    if (T > m) T = (int)m;
    int64_t nz = 0;
    int bad = 0;
    const KEwLeaf *L = k_leaves(k_isa())->ew;
    const KMmLeaf *M = k_leaves(k_isa())->mm;
    blas_serial();
    #pragma omp parallel for num_threads(T) schedule(static, 1) reduction(+ : nz) reduction(| : bad) if (T > 1)
    for (int t = 0; t < T; t++) {
        int64_t r0 = t * m / T / 16 * 16, r1 = t + 1 == T ? m : (t + 1) * m / T / 16 * 16;
        if (M->mvec_rows) M->mvec_rows(A, x, k, r0, r1, y);
        else
            for (int64_t c0 = r0; c0 < r1; c0 += BLAS_CHUNK) {
                int rr = (int)BR_MIN(r1 - c0, BLAS_CHUNK);
                cblas_dgemv(CblasRowMajor, CblasNoTrans, rr, (int)k, 1.0, A + c0 * k, (int)k,
                            x, 1, 0.0, y + c0, 1);
            }
        nz += L->nz_count_fin(y + r0, r1 - r0, &bad);
    }
    *nonfinite |= bad;
    return nz;
}

/* y (k) = t(A) %*% x for A (m x k, row-major), x (m). Returns 0, or -1
 * when out of memory. */
static int gemv_trows(const double *A, const double *x, double *y, int64_t m, int64_t k)
{
    int64_t rows = BR_MAX(64, GEMV_CELLS / BR_MAX(k, 1)), ng = (m + rows - 1) / rows;
    double *part = NULL;
    const KMmLeaf *M = k_leaves(k_isa())->mm;
    if (ng > 1 && k <= GEMV_TMAX &&
        !(part = br_malloc((size_t)(ng - 1) * (size_t)k * sizeof(double))))
        return -1;
    if (!part && M->tvec_rows && k <= GEMV_TMAX) {
        M->tvec_rows(A, x, k, 0, m, y);
        return 0;
    }
    if (!part) {
        blas_threads_for((double)m * (double)k);
        for (int64_t r0 = 0; r0 < m; r0 += BLAS_CHUNK) {
            int mm = (int)BR_MIN(m - r0, BLAS_CHUNK);
            cblas_dgemv(CblasRowMajor, CblasTrans, mm, (int)k, 1.0, A + r0 * k, (int)k,
                        x + r0, 1, r0 == 0 ? 0.0 : 1.0, y, 1);
        }
        return 0;
    }
    int T = nthreads_for((double)m * (double)k);
    if (T > ng) T = (int)ng;
    blas_serial();
    #pragma omp parallel for num_threads(T) schedule(static) if (T > 1)
    for (int64_t g = 0; g < ng; g++) {
        int64_t r0 = g * rows, rr = BR_MIN(rows, m - r0);
        double *out = g == 0 ? y : part + (size_t)(g - 1) * (size_t)k;
        if (M->tvec_rows) M->tvec_rows(A, x, k, r0, r0 + rr, out);
        else
            cblas_dgemv(CblasRowMajor, CblasTrans, (int)rr, (int)k, 1.0, A + r0 * k, (int)k,
                        x + r0, 1, 0.0, out, 1);
    }
    for (int64_t g = 1; g < ng; g++) {
        const double *p = part + (size_t)(g - 1) * (size_t)k;
        for (int64_t j = 0; j < k; j++) y[j] += p[j];
    }
    free(part);
    return 0;
}

/* Skinny right sides (B of at most SK_NMAX columns and SK_KMAX rows, e.g.
 * the distances X %*% t(C) of k-means, MLogreg's X %*% B): OpenBLAS's
 * dgemm packs and pads so poorly there that a row loop with B held in
 * registers/L1/L2 is several times faster and reads A once. Measured
 * (2 threads, AMD Zen 5, 2026-12-07) against dgemm up to k = 50000: A of
 * 200 MB times B of 2-16 columns 3.3-4.7x faster at k = 1000, 2.6x at k
 * = 50000 (dgemm's copy of A took most of its time). */
#define SK_NMAX 48        /* by bands of at most SK_BAND columns past SK_BAND */
#define SK_BAND 16
#define SK_KMAX 65536
#define SK_ROWS 1024      /* rows per parallel task, at most SK_CELLS cells */
#define SK_CELLS 131072
#define SK_SUB_CELLS 32768   /* rows a task runs through every band at a time (L2) */

/* C (m x n) = A (m x k) %*% B (k x n) for n <= SK_NMAX, k <= SK_KMAX,
 * parallel over fixed row ranges; returns the non-zeros of C, or -1 when
 * out of memory, and sets *nonfinite when C holds a NaN or infinity.
 * Past SK_BAND columns B goes by bands of SK_BAND (the last one the
 * rest), each padded apart; a task's rows go through every band a
 * sub-range at a time, so the bands after the first read them from L2.
 * Each cell is its row summed over l in order, whatever the band. */
static int64_t gemm_skinny(const double *A, const double *B, double *C,
                           int64_t m, int64_t k, int64_t n, int *nonfinite)
{
    const int64_t nb = (n + SK_BAND - 1) / SK_BAND;
    int64_t off[SK_NMAX / SK_BAND + 1], tot = 0;
    for (int64_t b = 0; b < nb; b++) {
        off[b] = tot;
        tot += k * ((BR_MIN(SK_BAND, n - b * SK_BAND) + 3) / 4 * 4);
    }
    size_t bytes = (size_t)(tot + 4) * sizeof(double);
    double *bp = br_alloc_aligned(bytes);
    if (!bp) return -1;
    memset(bp, 0, bytes);
    for (int64_t b = 0; b < nb; b++) {
        const int64_t c0 = b * SK_BAND, wb = BR_MIN(SK_BAND, n - c0), w = (wb + 3) / 4 * 4;
        for (int64_t l = 0; l < k; l++)
            for (int64_t j = 0; j < wb; j++) bp[off[b] + l * w + j] = B[l * n + c0 + j];
    }
    const int64_t rows = BR_MAX(8, BR_MIN(SK_ROWS, SK_CELLS / k) / 8 * 8);
    const int64_t sub = nb > 1 ? BR_MAX(8, SK_SUB_CELLS / k / 8 * 8) : rows;
    int64_t nt = (m + rows - 1) / rows, nz = 0;
    int T = nthreads_for((double)m * (double)k * (double)((n + 3) / 4));
    if (T > nt) T = (int)nt;
    const KMmLeaf *L = k_leaves(k_isa())->mm;
    int bad = 0;
    #pragma omp parallel for num_threads(T) schedule(static) reduction(+ : nz) reduction(| : bad) if (T > 1)
    for (int64_t t = 0; t < nt; t++) {
        const int64_t r1 = BR_MIN(m, t * rows + rows);
        for (int64_t r0 = t * rows; r0 < r1; r0 += sub)
            for (int64_t b = 0; b < nb; b++) {
                const int64_t c0 = b * SK_BAND;
                nz += L->skinny_rows(A, bp + off[b], C + c0, k, BR_MIN(SK_BAND, n - c0), n, r0, BR_MIN(r1, r0 + sub),
                                     &bad);
            }
    }
    br_free_aligned(bp);
    *nonfinite |= bad;
    return nz;
}

/* Low-rank products (inner dimension k <= LK_KMAX, U %*% t(V) of a
 * factorization), with AVX-512 (mm_leaf.c): OpenBLAS's dgemm with beta = 0
 * first zeroes C, then accumulates into it (a read and a write), and
 * mm_finish() counts the non-zeros in a fourth pass; for small k those
 * passes over C cost more than the k multiply-adds per cell. The leaf
 * writes each cell once, from R x 32 register tiles summed over l in
 * order (so the result does not depend on the thread count), and counts
 * the non-zeros on the way. */
#define LK_KMAX 32
#define LK_ROWS 256       /* rows per parallel task */

/* C (m x n) = A (m x k) %*% B (k x n) for k <= LK_KMAX through the leaf
 * kernel lowk; returns the non-zeros of C and sets *nonfinite when C
 * holds a NaN or infinity. */
static int64_t gemm_lowk(KMmRows lowk, const double *A, const double *B, double *C, int64_t m, int64_t k,
                         int64_t n, int *nonfinite)
{
    int64_t nt = (m + LK_ROWS - 1) / LK_ROWS, nz = 0;
    int T = nthreads_for((double)m * (double)n * (double)k), bad = 0;
    if (T > nt) T = (int)nt;
    #pragma omp parallel for num_threads(T) schedule(static) reduction(+ : nz) reduction(| : bad) if (T > 1)
    for (int64_t t = 0; t < nt; t++)
        nz += lowk(A, B, C, k, n, t * LK_ROWS, BR_MIN(m, (t + 1) * LK_ROWS), &bad);
    *nonfinite |= bad;
    return nz;
}

/* C (m x n) = A (m x k) * B (k x n), all row-major (C need not be zeroed).
 * Sets *nnz to the non-zeros of C when it counted them, else to -1, and
 * where it counted them *nonfinite to whether C holds a NaN or infinity
 * (the leaves check their values in the counting pass).
 * Returns 0, or -1 when out of memory. */
static int gemm_nn(const double *A, const double *B, double *C,
                   int64_t m, int64_t k, int64_t n, int64_t *nnz, int *nonfinite)
{
    *nnz = -1;
    *nonfinite = 0;
    if (n == 1) { *nnz = gemv_rows(A, B, C, m, k, nonfinite); return 0; }
    if (m == 1) return gemv_trows(B, A, C, k, n);
    KMmRows lowk = k_leaves(k_isa())->mm->lowk_rows;
    if (lowk && k <= LK_KMAX && n >= 32 && (double)m * (double)n >= 65536) {
        *nnz = gemm_lowk(lowk, A, B, C, m, k, n, nonfinite);
        return 0;
    }
    if (n <= SK_NMAX && k <= SK_KMAX) {
        *nnz = gemm_skinny(A, B, C, m, k, n, nonfinite);
        return *nnz < 0 ? -1 : 0;
    }
    int nb = k <= BLAS_CHUNK && m <= BLAS_CHUNK ? gemm_blocks((double)m * (double)k * (double)n, m, n) : 1;
    if (nb != 1) { gemm_in_blocks(false, A, B, C, m, k, n, nb); return 0; }
    blas_threads_for((double)m * (double)k * (double)n);
    for (int64_t r0 = 0; r0 < m; r0 += BLAS_CHUNK) {
        int mm = (int)BR_MIN(m - r0, BLAS_CHUNK);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, mm, (int)n, (int)k,
                    1.0, A + r0 * k, (int)k, B, (int)n, 0.0, C + r0 * n, (int)n);
    }
    return 0;
}

/* t(A) %*% B for A (k x m, m <= GEMV_TMAX) and B (k x n) of 2 to
 * TN_MAX columns into C (m x n), the leaf's tmm_rows present: per fixed
 * row group of gemv_trows's size (about 256 KB of A), tmm_rows (B's
 * columns of a row in registers against tiles of A's columns, the group
 * from L2 after the first tile) over bands of at most TN_COLS of B's
 * columns (n > TN_COLS: ceil(n / TN_COLS) bands of nearly equal width,
 * each at least 2 wide; the group stays in L2 for the next band); the
 * groups' partials added in group order, so the bits depend on the shape
 * only (each column is tvec_rows's chain, whatever the band). OpenBLAS's
 * dgemm took 12-35 ms for a 250,000 x 100 A and 2 to 32 columns, where
 * one read of A takes about 4; at 12 and 16 columns 43-44 ms, and 98 ms
 * for a 2,500,000 x 10 A by 12 columns (docs/perf.md). Returns 0, or -1
 * when out of memory. */
#define TN_COLS 8
/* bands (n > TN_COLS) only while a group of rows (at least 64) stays in
 * L2 across them: up to 16 columns for A of at most 512 columns, up to
 * TN_MAX for at most TN_WIDE_M (measured, docs/perf.md: at 4000 columns
 * two bands took 48 ms where dgemm took 26) */
#define TN_MAX 48
#define TN_WIDE_M 256
static bool tn_banded(int64_t m, int64_t n)
{
    return n <= TN_COLS ? m <= GEMV_TMAX : (n <= 16 && m <= 512) || (n <= TN_MAX && m <= TN_WIDE_M);
}
static int gemm_tn_cols(const double *A, const double *B, double *C, int64_t k, int64_t m, int64_t n)
{
    const KMmLeaf *M = k_leaves(k_isa())->mm;
    const int64_t rows = BR_MAX(64, GEMV_CELLS / BR_MAX(m, 1)), ng = (k + rows - 1) / rows;
    const int64_t nb = (n + TN_COLS - 1) / TN_COLS;   /* bands: band b is [n * b / nb, n * (b + 1) / nb) */
    int T = nthreads_for((double)k * (double)m * (double)n);
    if (T > ng) T = (int)ng;
    double *part = br_malloc((size_t)(ng * n * m) * sizeof(double));
    if (!part) return -1;
    /* a group's partial: band b's m x w block at m * (its first column) */
    #pragma omp parallel for num_threads(T) schedule(static) if (T > 1)
    for (int64_t g = 0; g < ng; g++)
        for (int64_t b = 0; b < nb; b++) {
            const int64_t c0 = n * b / nb, w = n * (b + 1) / nb - c0;
            M->tmm_rows(A, B + c0, m, w, n, g * rows, BR_MIN(k, g * rows + rows), part + g * m * n + m * c0);
        }
    for (int64_t b = 0; b < nb; b++) {
        const int64_t c0 = n * b / nb, w = n * (b + 1) / nb - c0;
        for (int64_t i = 0; i < m; i++)
            for (int64_t c = 0; c < w; c++) {
                double t = part[m * c0 + i * w + c];
                for (int64_t g = 1; g < ng; g++) t += part[g * m * n + m * c0 + i * w + c];
                C[i * n + c0 + c] = t;
            }
    }
    free(part);
    return 0;
}

/* C (m x n) = t(A) * B with A (k x m), B (k x n), row-major (C need not
 * be zeroed). Returns 0, or -1 when out of memory. */
static int gemm_tn(const double *A, const double *B, double *C,
                   int64_t k, int64_t m, int64_t n)
{
    if (n == 1) return gemv_trows(A, B, C, k, m);
    if (m == 1) return gemv_trows(B, A, C, k, n);
    if (k_leaves(k_isa())->mm->tmm_rows) {
        if (tn_banded(m, n)) return gemm_tn_cols(A, B, C, k, m, n);
        if (tn_banded(n, m)) {
            /* t(t(B) %*% A), transposed into C */
            double *t = br_malloc((size_t)(m * n) * sizeof(double));
            if (!t || gemm_tn_cols(B, A, t, k, n, m)) { free(t); return -1; }
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++) C[i * n + j] = t[j * m + i];
            free(t);
            return 0;
        }
    }
    int nb = k <= BLAS_CHUNK ? gemm_blocks((double)m * (double)k * (double)n, m, n) : 1;
    if (nb != 1) { gemm_in_blocks(true, A, B, C, m, k, n, nb); return 0; }
    blas_threads_for((double)m * (double)k * (double)n);
    for (int64_t r0 = 0; r0 < k; r0 += BLAS_CHUNK) {
        int kk = (int)BR_MIN(k - r0, BLAS_CHUNK);
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)m, (int)n, kk,
                    1.0, A + r0 * m, (int)m, B + r0 * n, (int)n, r0 == 0 ? 0.0 : 1.0, C,
                    (int)n);
    }
    return 0;
}

/* Dense x dense: BLAS with beta = 0 writes every output cell, so the
 * output is not zeroed first. */
static MB *mul_dd(const MB *a, const MB *b, BrErr *e)
{
    MB *r = mb_dense_uninit(a->rows, b->cols, e);
    int64_t nnz;
    int bad;
    if (!r) return NULL;
    if (gemm_nn(a->d, b->d, r->d, a->rows, a->cols, b->cols, &nnz, &bad)) {
        mb_release(r);
        return oom(e);
    }
    if (nnz < 0) return mm_finish(r, e);
    r->nnz = nnz;
    if (mb_examine(r, e)) { mb_release(r); return NULL; }
    /* the counting leaves' flag, as mm_finish's (a sparse result: its
     * values are the same, all checked) */
    mb_fin_set(r, bad != 0);
    return r;
}

/* ---------------------------------------------------------------------- */
/* Row kernels with a sparse side                                         */

typedef struct Work {     /* per-thread accumulator for one output row */
    double *val;          /* n values, all zero between rows */
    int32_t *idx;         /* touched columns of the current row */
    uint8_t *mark;        /* mark[j] != 0: column j is in idx */
    int64_t cnt;          /* entries in idx (full mode: n or 0) */
    bool full;            /* row written densely into val: scan all */
} Work;

typedef struct Piece {    /* CSR entries of one block of output rows */
    int32_t *ci;
    double *v;
    int64_t n, cap;
} Piece;

typedef void (*RowDense)(const MB *a, const MB *b, int64_t i, double *row);
typedef void (*RowAcc)(const MB *a, const MB *b, int64_t i, Work *w);

/* sparse a x dense b, output row i += a[i,k] * b[k,:]: the sparse leaf's
 * sd_row (tiles of columns with their sums in registers; each cell sums
 * the same products in the same order from 0: the same bits at every
 * level and as the reference's per-non-zero order from a zero row). */
static void sd_row(const MB *a, const MB *b, int64_t i, double *row)
{
    const int64_t p0 = a->rp[i];
    k_leaves(k_isa())->sp->sd_row(a->ci + p0, a->v + p0, a->rp[i + 1] - p0, b->d, b->cols, row);
}

/* dense a x sparse b. */
static void ds_row(const MB *a, const MB *b, int64_t i, double *row)
{
    int64_t k = a->cols;
    const double *ar = a->d + i * k;
    for (int64_t l = 0; l < k; l++) {
        double av = ar[l];
        if (av == 0) continue;
        for (int64_t q = b->rp[l]; q < b->rp[l + 1]; q++) row[b->ci[q]] += av * b->v[q];
    }
}

/* sparse a x sparse b. */
static void ss_row(const MB *a, const MB *b, int64_t i, double *row)
{
    for (int64_t p = a->rp[i]; p < a->rp[i + 1]; p++) {
        double av = a->v[p];
        int64_t l = a->ci[p];
        for (int64_t q = b->rp[l]; q < b->rp[l + 1]; q++) row[b->ci[q]] += av * b->v[q];
    }
}

static void sd_acc(const MB *a, const MB *b, int64_t i, Work *w)
{
    w->full = true;
    w->cnt = a->rp[i + 1] > a->rp[i] ? b->cols : 0;
    sd_row(a, b, i, w->val);
}

static inline void touch(Work *w, int32_t j)
{
    if (!w->mark[j]) { w->mark[j] = 1; w->idx[w->cnt++] = j; }
}

static void ds_acc(const MB *a, const MB *b, int64_t i, Work *w)
{
    int64_t k = a->cols;
    const double *ar = a->d + i * k;
    for (int64_t l = 0; l < k; l++) {
        double av = ar[l];
        if (av == 0) continue;
        for (int64_t q = b->rp[l]; q < b->rp[l + 1]; q++) {
            touch(w, b->ci[q]);
            w->val[b->ci[q]] += av * b->v[q];
        }
    }
}

static void ss_acc(const MB *a, const MB *b, int64_t i, Work *w)
{
    for (int64_t p = a->rp[i]; p < a->rp[i + 1]; p++) {
        double av = a->v[p];
        int64_t l = a->ci[p];
        for (int64_t q = b->rp[l]; q < b->rp[l + 1]; q++) {
            touch(w, b->ci[q]);
            w->val[b->ci[q]] += av * b->v[q];
        }
    }
}

/* Sorts x[0..n) ascending: quicksort (median of three, recursion on the
 * smaller part) with insertion sort for short runs. */
static void sort_i32(int32_t *x, int64_t n)
{
    while (n > 24) {
        int32_t a = x[0], b = x[n / 2], c = x[n - 1];
        int32_t piv = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        int64_t i = 0, j = n - 1;
        for (;;) {
            while (x[i] < piv) i++;
            while (x[j] > piv) j--;
            if (i >= j) break;
            int32_t t = x[i]; x[i] = x[j]; x[j] = t;
            i++; j--;
        }
        /* [0, j] <= piv <= [j+1, n) */
        if (j + 1 < n - j - 1) { sort_i32(x, j + 1); x += j + 1; n -= j + 1; }
        else { sort_i32(x + j + 1, n - j - 1); n = j + 1; }
    }
    for (int64_t i = 1; i < n; i++) {
        int32_t t = x[i];
        int64_t j = i;
        while (j > 0 && x[j - 1] > t) { x[j] = x[j - 1]; j--; }
        x[j] = t;
    }
}

/* Moves the accumulated row out of w into pc (sorted, zeros dropped) and
 * clears w. Sets *count to the entries appended. Returns 0 or -1 (OOM). */
static int emit_row(Work *w, int64_t n, Piece *pc, int64_t *count)
{
    *count = 0;
    if (w->cnt == 0) { w->full = false; return 0; }
    int64_t need = pc->n + w->cnt;
    if (need > pc->cap) {
        int64_t nc = BR_MAX(need, pc->cap * 2);
        int32_t *ci = br_realloc_aligned(pc->ci, (size_t)pc->n * sizeof(int32_t), (size_t)nc * sizeof(int32_t));
        if (!ci) return -1;
        pc->ci = ci;
        double *v = br_realloc_aligned(pc->v, (size_t)pc->n * sizeof(double), (size_t)nc * sizeof(double));
        if (!v) return -1;
        pc->v = v;
        pc->cap = nc;
    }
    int64_t k = pc->n;
    double *val = w->val, *ov = pc->v;
    uint8_t *mark = w->mark;
    int32_t *oci = pc->ci;
    if (w->full) {
        for (int64_t j = 0; j < n; j++) {
            double x = val[j];
            if (x != 0) { oci[k] = (int32_t)j; ov[k++] = x; val[j] = 0; }
        }
    } else if (w->cnt * 32 > n) {   /* scanning the marks beats sorting */
        for (int64_t j0 = 0; j0 < n; j0 += 8) {
            uint64_t word;          /* marks are 0/1 bytes; n rounded up to 8 */
            memcpy(&word, mark + j0, sizeof word);
            if (!word) continue;
            memset(mark + j0, 0, sizeof word);
            while (word) {
                int64_t j = j0 + __builtin_ctzll(word) / 8;
                word &= word - 1;
                double x = val[j];
                val[j] = 0;
                if (x != 0) { oci[k] = (int32_t)j; ov[k++] = x; }
            }
        }
    } else {
        sort_i32(w->idx, w->cnt);
        for (int64_t t = 0; t < w->cnt; t++) {
            int32_t j = w->idx[t];
            double x = val[j];
            mark[j] = 0; val[j] = 0;
            if (x != 0) { oci[k] = j; ov[k++] = x; }
        }
    }
    *count = k - pc->n;
    pc->n = k;
    w->cnt = 0;
    w->full = false;
    return 0;
}

/* sparse a x dense b of n <= K_SP_NARROW columns: blocks of rows, each
 * by the sparse leaf's mv_rows for a column vector (rows read in fixed
 * chunks of values: a loop per row ended at a different count each row,
 * and its mispredicted exits took half the time, sp_leaf.c) or sd_rows
 * (a row's n sums in registers, the width a literal). */
static MB *sd_narrow(const MB *a, const MB *b, double work, BrErr *e)
{
    int64_t m = a->rows, n = b->cols;
    MB *r = mb_dense_uninit(m, n, e);
    if (!r) return NULL;
    int T = nthreads_for(work);
    int64_t nb = T > 1 ? BR_MIN(m, (int64_t)T * 16) : 1;
    const KSpLeaf *L = k_leaves(k_isa())->sp;
    #pragma omp parallel for num_threads(T) schedule(dynamic, 1) if (T > 1)
    for (int64_t g = 0; g < nb; g++) {
        int64_t r0 = g * m / nb, r1 = (g + 1) * m / nb;
        if (n == 1) L->mv_rows(a->rp, a->ci, a->v, a->rp[m], b->d, r0, r1, r->d + r0);
        else L->sd_rows(a->rp, a->ci, a->v, b->d, n, r0, r1, r->d + r0 * n);
    }
    return mm_finish(r, e);
}

/* Product a %*% b with a dense output computed row by row by fn. */
static MB *dense_out(const MB *a, const MB *b, RowDense fn, double work, BrErr *e)
{
    int64_t m = a->rows, n = b->cols;
    MB *r = mb_dense(m, n, e);
    if (!r) return NULL;
    int T = nthreads_for(work);
    if (T > m) T = (int)m;   /* no idle threads (t(v) %*% X has one row) */
    int64_t chunk = BR_MAX(1, m / ((int64_t)T * 16));
    #pragma omp parallel for num_threads(T) schedule(dynamic, chunk) if (T > 1)
    for (int64_t i = 0; i < m; i++) fn(a, b, i, r->d + i * n);
    return mm_finish(r, e);
}

/* Product a %*% b with a sparse output built row by row by fn. */
static MB *sparse_out(const MB *a, const MB *b, RowAcc fn, double work, BrErr *e)
{
    int64_t m = a->rows, n = b->cols;
    int T = nthreads_for(work);
    int64_t nblk = T > 1 ? BR_MIN(m, (int64_t)T * 8) : 1;
    Piece *pcs = br_calloc((size_t)nblk, sizeof *pcs);
    int64_t *cnt = br_calloc((size_t)m, sizeof *cnt);
    int fail = !pcs || !cnt;
    if (!fail) {
        #pragma omp parallel num_threads(T) if (T > 1)
        {
            Work w = { br_calloc((size_t)n, sizeof(double)),
                       br_malloc((size_t)n * sizeof(int32_t)),
                       br_calloc((size_t)n + 8, 1), 0, false };
            if (!w.val || !w.idx || !w.mark) __atomic_store_n(&fail, 1, __ATOMIC_RELAXED);
            #pragma omp for schedule(dynamic, 1)
            for (int64_t g = 0; g < nblk; g++) {
                if (__atomic_load_n(&fail, __ATOMIC_RELAXED)) continue;
                int64_t r0 = g * m / nblk, r1 = (g + 1) * m / nblk;
                for (int64_t i = r0; i < r1; i++) {
                    fn(a, b, i, &w);
                    if (emit_row(&w, n, &pcs[g], &cnt[i])) {
                        __atomic_store_n(&fail, 1, __ATOMIC_RELAXED);
                        break;
                    }
                }
            }
            free(w.val); free(w.idx); free(w.mark);
        }
    }
    MB *r = NULL;
    if (!fail) {
        int64_t total = 0;
        for (int64_t g = 0; g < nblk; g++) total += pcs[g].n;
        r = mb_sp_alloc(m, n, total, e);
        if (r) {
            for (int64_t i = 0; i < m; i++) r->rp[i + 1] = r->rp[i] + cnt[i];
            int64_t k = 0;
            for (int64_t g = 0; g < nblk; g++) {
                if (pcs[g].n == 0) continue;
                memcpy(r->ci + k, pcs[g].ci, (size_t)pcs[g].n * sizeof(int32_t));
                memcpy(r->v + k, pcs[g].v, (size_t)pcs[g].n * sizeof(double));
                k += pcs[g].n;
            }
            r->nnz = total;
            r->build_row = m;
        }
    } else {
        oom(e);
    }
    if (pcs)
        for (int64_t g = 0; g < nblk; g++) { br_free_aligned(pcs[g].ci); br_free_aligned(pcs[g].v); }
    free(pcs);
    free(cnt);
    return mm_finish(r, e);
}

/* a %*% b, shapes already checked. */
static MB *mul(const MB *a, const MB *b, BrErr *e)
{
    int64_t m = a->rows, k = a->cols, n = b->cols;
    if (m == 0 || n == 0 || k == 0 || a->nnz == 0 || b->nnz == 0)
        return mb_empty(m, n, e);
    if (!a->sparse && !b->sparse) return mul_dd(a, b, e);
    double bound, work;
    if (a->sparse && !b->sparse) {
        bound = (double)nonempty_rows(a) * (double)n;
        work = (double)a->nnz * (double)n;
        if (mb_should_be_sparse(m, n, (int64_t)bound))
            return sparse_out(a, b, sd_acc, work, e);
        return n <= K_SP_NARROW ? sd_narrow(a, b, work, e) : dense_out(a, b, sd_row, work, e);
    }
    if (!a->sparse) {
        int64_t nc = nonempty_cols(b);
        if (nc < 0) return oom(e);
        bound = (double)m * (double)nc;
        work = (double)m * (double)k + (double)a->nnz * ((double)b->nnz / (double)k);
        if (mb_should_be_sparse(m, n, (int64_t)bound))
            return sparse_out(a, b, ds_acc, work, e);
        return dense_out(a, b, ds_row, work, e);
    }
    /* sparse x sparse: exact upper bound of the output's non-zeros */
    bound = 0;
    work = 0;
    for (int64_t i = 0; i < m; i++) {
        double s = 0;
        for (int64_t p = a->rp[i]; p < a->rp[i + 1]; p++)
            s += (double)(b->rp[a->ci[p] + 1] - b->rp[a->ci[p]]);
        work += s;
        bound += s < (double)n ? s : (double)n;
    }
    work += (double)a->nnz;
    if (mb_should_be_sparse(m, n, (int64_t)bound))
        return sparse_out(a, b, ss_acc, work, e);
    return dense_out(a, b, ss_row, work, e);
}

/* a %*% b (see mm.h). */
/* ---------------------------------------------------------------------- */
/* IEEE products over zeros (docs/DESIGN.md, "NaN and Inf")                */

/* Does m hold a zero cell (stored or not)? nnz counts the non-zeros. */
static bool has_zero(const MB *m)
{
    return m->nnz < m->rows * m->cols;
}

static double get_t(const MB *m, bool t, int64_t i, int64_t j)
{
    return t ? mb_get(m, j, i) : mb_get(m, i, j);
}

/* The cells (row, col) of m that are NaN or +-Inf, into *out (count
 * returned; -1: out of memory). */
static int64_t nonfinite_cells(const MB *m, int64_t **out)
{
    int64_t n = 0, cap = 16;
    int64_t *c = br_malloc((size_t)cap * 2 * sizeof(int64_t));
    if (!c) return -1;
    for (int64_t i = 0; i < m->rows; i++) {
        int64_t lo = m->sparse ? m->rp[i] : 0, hi = m->sparse ? m->rp[i + 1] : m->cols;
        for (int64_t p = lo; p < hi; p++) {
            double v = m->sparse ? m->v[p] : m->d[i * m->cols + p];
            if (isfinite(v)) continue;
            if (n == cap) {
                int64_t *g = br_realloc(c, (size_t)cap * 4 * sizeof(int64_t));
                if (!g) { free(c); return -1; }
                c = g;
                cap *= 2;
            }
            c[2 * n] = i;
            c[2 * n + 1] = m->sparse ? m->ci[p] : p;
            n++;
        }
    }
    *out = c;
    return n;
}

/* BRAID_MM_ZEROS=skip: the products that meet a zero times NaN/Inf skip
 * the terms whose left factor is zero, as SystemDS's Java matrix-matrix
 * kernels do (its dense kernel copies the non-zeros of a's row first, its
 * sparse ones visit only the stored cells), instead of IEEE's NaN. Only
 * for reference runs of SystemDS's scripts (tests/parity/gen.py): braid's
 * own semantics stay IEEE for every plan (docs/DESIGN.md, "NaN and Inf").
 * Read once per such product, which is rare. */
static bool skip_left_zeros(void)
{
    const char *v = getenv("BRAID_MM_ZEROS");
    return v && !strcmp(v, "skip");
}

/* r = op(a) %*% op(b) summed over the terms with a non-zero left factor
 * (a plain loop: reference runs only, on small data). */
static MB *mm_skip_left(const MB *a, bool ta, const MB *b, bool tb, MB *r, BrErr *e)
{
    int64_t m = r->rows, n = r->cols, K = ta ? a->rows : a->cols;
    if (r->sparse && mb_make_dense(r, e)) { mb_release(r); return NULL; }
    memset(r->d, 0, (size_t)(m * n) * sizeof(double));
    for (int64_t i = 0; i < m; i++)
        for (int64_t k = 0; k < K; k++) {
            double av = get_t(a, ta, i, k);
            if (av == 0) continue;
            for (int64_t j = 0; j < n; j++) r->d[i * n + j] += av * get_t(b, tb, k, j);
        }
    return r;
}

/* Marks with NaN the cells of r = op(a) %*% op(b) (op: t() where ta/tb)
 * whose dot product has a term 0 * Inf or 0 * NaN (see mm.h). A
 * compressed operand is decompressed for this, only when it meets such a
 * term. */
MB *k_mm_ieee_zeros(const MB *a, bool ta, const MB *b, bool tb, MB *r, BrErr *e)
{
    if (!r || r->cmb) return r;
    /* (the scans only where a zero of the other side can meet them) */
    bool fa = has_zero(b) && mb_has_nonfinite(a), fb = has_zero(a) && mb_has_nonfinite(b);
    if (!fa && !fb) return r;
    MB *ad = a->cmb ? cmb_decompress(a, e) : NULL, *bd = b->cmb ? cmb_decompress(b, e) : NULL;
    if ((a->cmb && !ad) || (b->cmb && !bd)) { mb_release(ad); mb_release(bd); mb_release(r); return NULL; }
    if (ad) a = ad;
    if (bd) b = bd;
    int64_t m = r->rows, n = r->cols;
    bool skip = skip_left_zeros();
    if (skip) r = mm_skip_left(a, ta, b, tb, r, e);
    for (int side = 0; side < 2 && r && !skip; side++) {
        if (!(side ? fb : fa)) continue;
        const MB *x = side ? b : a;
        int64_t *c = NULL, nc = nonfinite_cells(x, &c);
        if (nc < 0) { mb_release(r); r = oom(e); break; }
        if (nc > 0 && r->sparse && mb_make_dense(r, e)) { free(c); mb_release(r); r = NULL; break; }
        for (int64_t q = 0; q < nc; q++) {
            bool tx = side ? tb : ta;
            /* the cell of op(x): (i, k) on a's side, (k, j) on b's */
            int64_t u = tx ? c[2 * q + 1] : c[2 * q], w = tx ? c[2 * q] : c[2 * q + 1];
            if (side == 0) {
                for (int64_t j = 0; j < n; j++)
                    if (get_t(b, tb, w, j) == 0) r->d[u * n + j] = NAN;
            } else {
                for (int64_t i = 0; i < m; i++)
                    if (get_t(a, ta, i, u) == 0) r->d[i * n + w] = NAN;
            }
        }
        free(c);
    }
    mb_release(ad);
    mb_release(bd);
    return mm_finish(r, e);
}

/* op(a) %*% b whose inner sizes differ with op(a) or b 1x1: the scalar
 * product, as SystemDS (its rewrite simplifyScalarMatrixMult makes the
 * product as.scalar(y) * X once recompilation knows y is 1x1; braid's
 * rewrite rule in rewrite/dynamic.c where the builder knows it). NULL
 * with *done false when the sizes are no such case. */
static MB *one_cell(const MB *a, bool ta, const MB *b, BrErr *e, bool *done)
{
    int64_t ar = ta ? a->cols : a->rows, ac = ta ? a->rows : a->cols;
    *done = ac != b->rows && ((ar == 1 && ac == 1) || (b->rows == 1 && b->cols == 1));
    if (!*done) return NULL;
    if (ar == 1 && ac == 1) return k_binary_sm(OP_MULT, mb_get(a, 0, 0), b, e);
    if (!ta) return k_binary_ms(OP_MULT, a, mb_get(b, 0, 0), e);
    MB *t = k_transpose(a, e);
    MB *r = t ? k_binary_ms(OP_MULT, t, mb_get(b, 0, 0), e) : NULL;
    mb_release(t);
    return r;
}

MB *k_matmul(const MB *a, const MB *b, BrErr *e)
{
    assert(mb_valid(a, false) && mb_valid(b, false));
    bool done;
    MB *r = one_cell(a, false, b, e, &done);
    if (done) return r;
    if (a->cols != b->rows) {
        br_err(e, BR_EDIM,
               "matrix multiplication dimension mismatch: %lldx%lld %%*%% %lldx%lld",
               (long long)a->rows, (long long)a->cols,
               (long long)b->rows, (long long)b->cols);
        return NULL;
    }
    return k_mm_ieee_zeros(a, false, b, false, mul(a, b, e), e);
}

/* ---------------------------------------------------------------------- */
/* t(a) %*% b                                                             */

/* t(a) %*% b for sparse a (k x m), dense b (k x n) into a dense m x n,
 * parallel over ranges of output rows (= columns of a): each range scans
 * all rows of a, so every output cell is summed in row order. */
static MB *tl_sd_dense(const MB *a, const MB *b, BrErr *e)
{
    int64_t k = a->rows, m = a->cols, n = b->cols;
    MB *r = mb_dense(m, n, e);
    if (!r) return NULL;
    int T = nthreads_for((double)a->nnz * (double)n);
    int64_t *wgt = br_calloc((size_t)m, sizeof(int64_t));
    int64_t *bounds = br_malloc((size_t)(T + 1) * sizeof(int64_t));
    if (!wgt || !bounds) { free(wgt); free(bounds); mb_release(r); return oom(e); }
    for (int64_t p = 0; p < a->nnz; p++) wgt[a->ci[p]]++;
    split_weighted(wgt, m, T, bounds);   /* one range a thread (see tsmm_sparse_left_dense) */
    #pragma omp parallel for num_threads(T) schedule(static, 1) if (T > 1)
    for (int g = 0; g < T; g++) {
        int64_t i0 = bounds[g], i1 = bounds[g + 1];
        if (i0 == i1) continue;
        k_leaves(k_isa())->sp->tsd_rows(a->rp, a->ci, a->v, b->d, n, 0, k, i0, i1, r->d + i0 * n);
    }
    free(wgt);
    free(bounds);
    return mm_finish(r, e);
}

/* t(p), released p; NULL passes through (p's error set). */
static MB *transposed(MB *p, BrErr *e)
{
    if (!p) return NULL;
    MB *r = p->sparse ? sp_transpose(p, e) : dense_transpose(p, e);
    mb_release(p);
    return r ? mm_finish(r, e) : NULL;
}

/* t(a) %*% b for sparse a and a dense b of few columns (t(X) %*% v) as
 * t(t(b) %*% a): one pass over the non-zeros of a per column of b, where
 * tl_sd_dense scans every row of a once per thread range. */
static MB *tl_sd_narrow(const MB *a, const MB *b, BrErr *e)
{
    MB *bt = dense_transpose(b, e);
    if (!bt) return NULL;
    MB *p = dense_out(bt, a, ds_row, (double)a->nnz * (double)b->cols, e);
    mb_release(bt);
    return transposed(p, e);
}

/* Small outputs of t(a) %*% b for sparse a (k x m) and dense b, m*n <=
 * TLS_CELLS (the new centroids t(P) %*% X of k-means, the gradient
 * t(X) %*% s of a GLM): one pass over a, in parallel. Rows of a go in
 * fixed blocks (their count depends on the shape only: at most
 * TLS_BLOCKS, fewer where their partials would pass TLS_PART_CELLS
 * together), each summed into its own m x n partial; the partials are
 * added in block order, so results do not depend on the thread count. */
#define TLS_CELLS 65536
#define TLS_BLOCKS 256
#define TLS_PART_CELLS (1 << 20)
static MB *tl_sd_small(const MB *a, const MB *b, BrErr *e)
{
    int64_t k = a->rows, m = a->cols, n = b->cols, cells = m * n;
    int64_t rows = BR_MAX((int64_t)4096, (k + TLS_BLOCKS - 1) / TLS_BLOCKS);
    const int64_t per = TLS_PART_CELLS / cells;   /* blocks within TLS_PART_CELLS together */
    rows = BR_MAX(rows, (k + per - 1) / per);
    int64_t nb = (k + rows - 1) / rows;
    MB *r = mb_dense(m, n, e);
    double *part = br_calloc((size_t)(nb * cells), sizeof(double));
    if (!r) { free(part); return NULL; }
    if (!part) { mb_release(r); return oom(e); }
    int T = nthreads_for((double)a->nnz * (double)n + (double)k);
    if (n == 1) {
        /* t(X) %*% v: the sparse leaf's flat loop over a block's values
         * (the same sums, in the same order, as the loop below) */
        const KSpLeaf *L = k_leaves(k_isa())->sp;
        #pragma omp parallel for num_threads(T) schedule(static) if (T > 1)
        for (int64_t g = 0; g < nb; g++)
            L->tmv_rows(a->rp, a->ci, a->v, b->d + g * rows, g * rows, BR_MIN(k, g * rows + rows), part + g * cells);
    } else {
        const KSpLeaf *L = k_leaves(k_isa())->sp;
        #pragma omp parallel for num_threads(T) schedule(static) if (T > 1)
        for (int64_t g = 0; g < nb; g++)
            L->tsd_rows(a->rp, a->ci, a->v, b->d, n, g * rows, BR_MIN(k, g * rows + rows), 0, m, part + g * cells);
    }
    for (int64_t g = 0; g < nb; g++)
        for (int64_t c = 0; c < cells; c++) r->d[c] += part[g * cells + c];
    free(part);
    return mm_finish(r, e);
}

/* t(a) %*% b (see mm.h). */
static MB *matmul_tl(const MB *a, const MB *b, BrErr *e)
{
    assert(mb_valid(a, false) && mb_valid(b, false));
    if (a->rows != b->rows) {
        br_err(e, BR_EDIM,
               "matrix multiplication dimension mismatch: t(%lldx%lld) %%*%% %lldx%lld",
               (long long)a->rows, (long long)a->cols,
               (long long)b->rows, (long long)b->cols);
        return NULL;
    }
    int64_t k = a->rows, m = a->cols, n = b->cols;
    if (m == 0 || n == 0 || k == 0 || a->nnz == 0 || b->nnz == 0)
        return mb_empty(m, n, e);
    if (!a->sparse && !b->sparse) {
        MB *r = mb_dense_uninit(m, n, e);   /* the first BLAS call has beta 0 */
        if (!r) return NULL;
        if (gemm_tn(a->d, b->d, r->d, k, m, n)) {
            mb_release(r);
            return oom(e);
        }
        return mm_finish(r, e);
    }
    /* a small output: dense while summing (finish picks the format) */
    if (a->sparse && !b->sparse && m * n <= TLS_CELLS) return tl_sd_small(a, b, e);
    /* a dense a and a sparse b: t(t(b) %*% a), the sparse side's paths
     * (one pass over b's values by rows, the output transposed after) */
    if (!a->sparse && b->sparse && m * n <= TLS_CELLS) return transposed(tl_sd_small(b, a, e), e);
    if (a->sparse != b->sparse) {
        int64_t nc = nonempty_cols(a->sparse ? a : b);
        if (nc < 0) return oom(e);
        if (!mb_should_be_sparse(m, n, nc * (a->sparse ? n : m))) {
            if (a->sparse) return n <= 8 ? tl_sd_narrow(a, b, e) : tl_sd_dense(a, b, e);
            return transposed(m <= 8 ? tl_sd_narrow(b, a, e) : tl_sd_dense(b, a, e), e);
        }
    }
    /* sparse x sparse, or a likely sparse result: transpose a (O(nnz) for
     * sparse a) and use the row-wise kernels */
    MB *t = a->sparse ? sp_transpose(a, e) : dense_transpose(a, e);
    if (!t) return NULL;
    MB *r = mul(t, b, e);
    mb_release(t);
    return r;
}

/* ---------------------------------------------------------------------- */
/* tsmm                                                                   */

/* Copies the upper triangle of the n x n row-major c into the lower, in
 * 64 x 64 tiles (parallel over block rows). */
static void mirror_upper(double *c, int64_t n)
{
    int T = nthreads_for((double)n * (double)n);
    int64_t nb = (n + 63) / 64;
    #pragma omp parallel for num_threads(T) schedule(dynamic, 1) if (T > 1)
    for (int64_t bi = 0; bi < nb; bi++) {
        int64_t i0 = bi * 64, i1 = BR_MIN(n, i0 + 64);
        for (int64_t j0 = 0; j0 <= i0; j0 += 64) {
            int64_t j1 = BR_MIN(n, j0 + 64);
            for (int64_t i = i0; i < i1; i++)
                for (int64_t j = j0; j < BR_MIN(j1, i); j++) c[i * n + j] = c[j * n + i];
        }
    }
}

/* Upper triangle of x %*% t(x) (m x m) over the columns [r0, r1) of the
 * dense m x n x into c (written): single-threaded dsyrk calls. */
static void syrk_right(const MB *x, int64_t r0, int64_t r1, double *c)
{
    int64_t m = x->rows, n = x->cols;
    for (int64_t k0 = r0; k0 < r1; k0 += BLAS_CHUNK) {
        int kk = (int)BR_MIN(r1 - k0, BLAS_CHUNK);
        cblas_dsyrk(CblasRowMajor, CblasUpper, CblasNoTrans, (int)m, kk, 1.0, x->d + k0, (int)n,
                    k0 == r0 ? 0.0 : 1.0, c, (int)m);
    }
}

/* The upper triangle of t(d) %*% d over the rows [r0, r1) of the dense
 * rows x n array d into c (written): the leaf's register-blocked loops
 * for up to 16 columns and 17 to 23 (with fma), its packed loop up to
 * TSMM_WIDE_MAX columns when given its scratch P (tsmm_wide_scratch(n)
 * doubles, 64-byte aligned; r0 < r1), else single-threaded dsyrk. */
static void tsmm_rows(const double *d, int64_t rows, int64_t n, int64_t r0, int64_t r1, double *c, double *P)
{
    const KMmLeaf *L = k_leaves(k_isa())->mm;
    if (n <= 16 && L->tsmm_small) { L->tsmm_small(d, rows, n, r0, r1, c); return; }
    if (n <= TSMM_MID_MAX && L->tsmm_mid) { L->tsmm_mid(d, rows, n, r0, r1, c); return; }
    if (n <= TSMM_WIDE_MAX && P && L->tsmm_wide) { L->tsmm_wide(d, rows, n, r0, r1, c, P); return; }
    for (int64_t k0 = r0; k0 < r1; k0 += BLAS_CHUNK) {
        int kk = (int)BR_MIN(r1 - k0, BLAS_CHUNK);
        cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, (int)n, kk, 1.0, d + k0 * n, (int)n, k0 == r0 ? 0.0 : 1.0,
                    c, (int)n);
    }
}

/* The upper triangle of t(x)%*%x (left) or x%*%t(x) over the rows
 * (left) or columns [r0, r1) into c (written): the leaf's register-
 * blocked loops for t(x)%*%x of up to 16 columns (about 3x dsyrk's rate
 * on such tall-skinny x, which it packs in panels of 2 to 8 columns) and
 * of 17 to 23 (with fma), its packed loop from 24 to TSMM_WIDE_MAX
 * columns (1.3-2x single-threaded dsyrk's rate up to 200 columns; its
 * scratch from the pool), else single-threaded dsyrk. grouped: a call of
 * tsmm_dense's fixed row groups (otherwise dsyrk's own threads serve the
 * wider products). */
static void tsmm_part(const MB *x, bool left, bool grouped, int64_t r0, int64_t r1, double *c)
{
    if (!left) {
        syrk_right(x, r0, r1, c);
        return;
    }
    const KMmLeaf *L = k_leaves(k_isa())->mm;
    const int64_t n = x->cols;
    /* the wide leaf single-threaded: in the fixed row groups, or narrow
     * enough (its scratch only where the narrower leaves do not serve) */
    bool wide = !(n <= 16 && L->tsmm_small) && !(n <= TSMM_MID_MAX && L->tsmm_mid) && (grouped || n <= 64) &&
                n <= TSMM_WIDE_MAX && r0 < r1 && L->tsmm_wide;
    double *p = wide ? br_alloc_scratch((size_t)tsmm_wide_scratch(n) * sizeof(double)) : NULL;
    tsmm_rows(x->d, x->rows, n, r0, r1, c, p);
    br_free_aligned(p);
}

/* c (o x o) += the upper triangles of the TSMM_GROUPS - 1 partials in
 * part (o x o each), in group order (parallel over rows of c). */
static void add_groups(double *c, const double *part, int64_t o)
{
    const size_t oo = (size_t)o * (size_t)o;
    int TC = nthreads_for((double)oo * TSMM_GROUPS);
    #pragma omp parallel for num_threads(TC) schedule(static) if (TC > 1)
    for (int64_t i = 0; i < o; i++)
        for (int g = 1; g < TSMM_GROUPS; g++) {
            const double *pr = part + (size_t)(g - 1) * oo + (size_t)i * (size_t)o;
            double *cr = c + i * o;
            for (int64_t j = i; j < o; j++) cr[j] += pr[j];
        }
}

/* Dense t(x)%*%x (left) or x%*%t(x) via tsmm_part, then mirrored. When the
 * inner dimension (rows for left, columns for right) is long against the
 * output side, OpenBLAS's own threading of dsyrk (over the output) gains
 * nothing, so the inner dimension is cut into TSMM_GROUPS fixed ranges,
 * one single-threaded dsyrk each on braid's threads, and the partials are
 * added in range order: the result depends on the shape only, never on
 * the thread count. */
static MB *tsmm_dense(const MB *x, bool left, BrErr *e)
{
    int64_t m = x->rows, n = x->cols;
    int64_t o = left ? n : m, k = left ? m : n;
    MB *r = mb_dense_uninit(o, o, e);   /* syrk writes the upper triangle, */
    if (!r) return NULL;                /* mirror_upper the lower one */
    size_t oo = (size_t)o * (size_t)o;
    double *part = NULL;
    /* grouped when the partials cost at most a quarter of x */
    if (k >= TSMM_GROUPS * TSMM_GROUP_MIN && (double)TSMM_GROUPS * (double)o * (double)o * 4 <=
        (double)m * (double)n)
        part = br_alloc_aligned((TSMM_GROUPS - 1) * oo * sizeof(double));
    if (!part) {
        blas_threads_for((double)o * (double)o * (double)k / 2);
        tsmm_part(x, left, false, 0, k, r->d);
    } else {
        int T = gemm_team((double)o * (double)o * (double)k / 2, TSMM_GROUPS);
        blas_serial();
        #pragma omp parallel for num_threads(T) schedule(dynamic, 1) if (T > 1)
        for (int g = 0; g < TSMM_GROUPS; g++)
            tsmm_part(x, left, true, g * k / TSMM_GROUPS, (g + 1) * k / TSMM_GROUPS,
                      g == 0 ? r->d : part + (size_t)(g - 1) * oo);
        add_groups(r->d, part, o);
        br_free_aligned(part);
    }
    mirror_upper(r->d, o);
    return mm_finish(r, e);
}

/* t(x) %*% x for sparse x into a dense n x n: the upper triangle by ranges
 * of output rows (each range scans all rows of x, summing each cell in row
 * order), then mirrored. One range a thread, balanced by the work per
 * column: a range's scan of x costs about 20 ns a row that has cells in
 * it (the row's tests and loop exits mispredict), so more ranges than
 * threads cost more than their balance gains (500,000 x 1000 at 1%, 2
 * threads: 8 ranges 70-85 ms, 2 ranges 34 ms; docs/perf.md "Sparse
 * t(X) %*% X"). The work per column is counted by fixed row groups in
 * parallel (integer sums, so any order). */
static MB *tsmm_sparse_left_dense(const MB *x, BrErr *e)
{
    int64_t m = x->rows, n = x->cols;
    MB *r = mb_dense(n, n, e);
    if (!r) return NULL;
    double work = 0;
    for (int64_t i = 0; i < m; i++) {
        const double c = (double)(x->rp[i + 1] - x->rp[i]);
        work += c * (c + 1) / 2;
    }
    int T = nthreads_for(work);
    int64_t *wgt = br_calloc((size_t)n * (size_t)T, sizeof(int64_t));
    int64_t *bounds = br_malloc((size_t)(T + 1) * sizeof(int64_t));
    if (!wgt || !bounds) { free(wgt); free(bounds); mb_release(r); return oom(e); }
    #pragma omp parallel num_threads(T) if (T > 1)
    {
        int64_t *w = wgt + (int64_t)omp_get_thread_num() * n;
        #pragma omp for schedule(static)
        for (int64_t i = 0; i < m; i++)
            for (int64_t p = x->rp[i]; p < x->rp[i + 1]; p++) w[x->ci[p]] += x->rp[i + 1] - p;
    }
    for (int t = 1; t < T; t++)
        for (int64_t j = 0; j < n; j++) wgt[j] += wgt[t * n + j];
    split_weighted(wgt, n, T, bounds);
    #pragma omp parallel for num_threads(T) schedule(static, 1) if (T > 1)
    for (int g = 0; g < T; g++) {
        int64_t j0 = bounds[g], j1 = bounds[g + 1];
        if (j0 == j1) continue;
        for (int64_t i = 0; i < m; i++) {
            int64_t lo = x->rp[i], hi = x->rp[i + 1];
            if (lo == hi || x->ci[hi - 1] < j0 || x->ci[lo] >= j1) continue;
            for (int64_t p = mb_csr_lower(x->ci, lo, hi, j0); p < hi && x->ci[p] < j1; p++) {
                double vp = x->v[p];
                double *row = r->d + (int64_t)x->ci[p] * n;
                for (int64_t q = p; q < hi; q++) row[x->ci[q]] += vp * x->v[q];
            }
        }
    }
    free(wgt);
    free(bounds);
    mirror_upper(r->d, n);
    return mm_finish(r, e);
}

/* a %*% t(a) for sparse a, given b = t(a), into a dense result: row i of
 * the upper triangle accumulates, for each a[i,l], row l of b from column
 * i on (so writes stay within one output row, cache-friendly for large
 * outputs); then mirrored. Used for t(x)%*%x (a = t(x)) and x%*%t(x). */
static MB *syrk_rows(const MB *a, const MB *b, BrErr *e)
{
    int64_t n = a->rows;
    MB *r = mb_dense(n, n, e);
    if (!r) return NULL;
    double work = 0;
    for (int64_t p = 0; p < a->nnz; p++)
        work += (double)(b->rp[a->ci[p] + 1] - b->rp[a->ci[p]]) / 2;
    int T = nthreads_for(work);
    #pragma omp parallel for num_threads(T) schedule(dynamic, 16) if (T > 1)
    for (int64_t i = 0; i < n; i++) {
        double *row = r->d + i * n;
        for (int64_t p = a->rp[i]; p < a->rp[i + 1]; p++) {
            int64_t l = a->ci[p], hi = b->rp[l + 1];
            double av = a->v[p];
            for (int64_t q = mb_csr_lower(b->ci, b->rp[l], hi, i); q < hi; q++)
                row[b->ci[q]] += av * b->v[q];
        }
    }
    mirror_upper(r->d, n);
    return mm_finish(r, e);
}

/* left ? t(x) %*% x : x %*% t(x) (see mm.h). */
static MB *tsmm(const MB *x, bool left, BrErr *e)
{
    assert(mb_valid(x, false));
    int64_t o = left ? x->cols : x->rows;
    if (x->rows == 0 || x->cols == 0 || x->nnz == 0) return mb_empty(o, o, e);
    if (!x->sparse) return tsmm_dense(x, left, e);
    /* upper bound of the result's non-zeros decides the format */
    double bound = 0, full = (double)o * (double)o;
    MB *t = NULL, *r = NULL;
    if (left) {
        for (int64_t i = 0; i < x->rows; i++) {
            double c = (double)(x->rp[i + 1] - x->rp[i]);
            bound += c * c;
        }
        bound = bound < full ? bound : full;
        if (!mb_should_be_sparse(o, o, (int64_t)bound) && o <= TSMM_SMALL_OUT)
            return tsmm_sparse_left_dense(x, e);
        if (!(t = sp_transpose(x, e))) return NULL;
    } else {
        if (!(t = sp_transpose(x, e))) return NULL;
        for (int64_t i = 0; i < x->rows; i++) {
            double s = 0;
            for (int64_t p = x->rp[i]; p < x->rp[i + 1]; p++)
                s += (double)(t->rp[x->ci[p] + 1] - t->rp[x->ci[p]]);
            bound += s < (double)o ? s : (double)o;
        }
    }
    const MB *a = left ? t : x, *b = left ? x : t;
    if (mb_should_be_sparse(o, o, (int64_t)bound)) r = mul(a, b, e);
    else r = syrk_rows(a, b, e);
    mb_release(t);
    return r;
}

MB *k_matmul_tl(const MB *a, const MB *b, BrErr *e)
{
    bool done;
    MB *r = one_cell(a, true, b, e, &done);
    if (done) return r;
    return k_mm_ieee_zeros(a, true, b, false, matmul_tl(a, b, e), e);
}

MB *k_tsmm(const MB *x, bool left, BrErr *e)
{
    return k_mm_ieee_zeros(x, left, x, !left, tsmm(x, left, e), e);
}

/* ---------------------------------------------------------------------- */
/* t([x v]) %*% [x v] in one pass over x                                   */

/* One fixed row range [r0, r1) of k_tsmm_cbind's dense path: into the
 * (m+k) x (m+k) upper triangle z (written), t(x) %*% x by blocks of
 * about 256 KB of x, at least 8 m rows (tsmm's leaves), then
 * t(x) %*% v and t(v) %*% v over the block's rows from L2, four rows a
 * step (one load and store of the sums per four rows; the leaf's
 * tvec_rows, built to stream from memory, took 17.6 ms against 15 ms
 * for lm tall's X). A single v beside x of at most 15 columns instead
 * goes through tsmm's small leaf with x (tsmma_vleaf: lm tall's 10 + 1
 * columns fill lanes the leaf computes anyway; a copy of the rows of [x
 * v] for the leaf took 25 ms against 17.5). cb: tsmma_scratch(m, k)
 * doubles (the block's t(x) %*% x, the sums of t(x) %*% v; or [v x]'s
 * product); P: the wide leaf's scratch or NULL. */
#define TSMMA_BLOCK_CELLS 32768
static int64_t tsmma_block(int64_t m)
{
    /* at least 8 m rows: a block's m x m sums cost at most an eighth of
     * its reads of x (each block's t(x) %*% x is written and added);
     * whole chunks of the wide leaf */
    const int64_t kc = m > TSMM_MID_MAX ? tsmm_wide_kc(m) : 64;
    const int64_t want = BR_MAX(TSMMA_BLOCK_CELLS / BR_MAX(m, 1), 8 * m);
    return (want + kc - 1) / kc * kc;
}
/* lm's case: one column v and x of at most 15: the small leaf computes
 * t([v x]) %*% [v x] in one pass, v in the lane before each row's */
static bool tsmma_vleaf(int64_t m, int64_t k)
{
    return k == 1 && m <= 15 && k_leaves(k_isa())->mm->tsmm_small_v;
}
static int64_t tsmma_scratch(int64_t m, int64_t k)
{
    const int64_t o = m + k;
    return (BR_MAX(o * o, m * m + k * m) + 7) / 8 * 8;
}

static void tsmma_range(const MB *x, const MB *v, int64_t r0, int64_t r1, double *z, double *cb, double *P)
{
    const int64_t m = x->cols, k = v->cols, o = m + k, blk = tsmma_block(m);
    double *xv = cb + m * m;   /* t(x) %*% v by columns of v: xv[c * m + j] */
    memset(z, 0, (size_t)(o * o) * sizeof(double));
    if (tsmma_vleaf(m, k)) {
        /* cb: [v x]'s cells, v's at 0; z: x's at 0 .. m - 1, v's at m */
        k_leaves(k_isa())->mm->tsmm_small_v(x->d, v->d, x->rows, m, r0, r1, cb);
        for (int64_t i = 0; i < o; i++)
            for (int64_t j = i; j < o; j++) {
                const int64_t a = i == 0 ? m : i - 1, b = j == 0 ? m : j - 1;
                z[BR_MIN(a, b) * o + BR_MAX(a, b)] = cb[i * o + j];
            }
        return;
    }
    memset(xv, 0, (size_t)(k * m) * sizeof(double));
    for (int64_t b0 = r0; b0 < r1; b0 += blk) {
        const int64_t b1 = BR_MIN(r1, b0 + blk);
        tsmm_rows(x->d, x->rows, m, b0, b1, cb, P);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = i; j < m; j++) z[i * o + j] += cb[i * m + j];
        int64_t r = b0;
        for (; r + 4 <= b1; r += 4) {
            const double *restrict x0 = x->d + r * m, *restrict x1 = x0 + m, *restrict x2 = x1 + m,
                                   *restrict x3 = x2 + m, *restrict vr = v->d + r * k;
            for (int64_t c = 0; c < k; c++) {
                const double s0 = vr[c], s1 = vr[k + c], s2 = vr[2 * k + c], s3 = vr[3 * k + c];
                double *restrict a = xv + c * m;
                #pragma omp simd
                for (int64_t j = 0; j < m; j++) a[j] += (x0[j] * s0 + x1[j] * s1) + (x2[j] * s2 + x3[j] * s3);
                for (int64_t c2 = c; c2 < k; c2++)
                    z[(m + c) * o + m + c2] +=
                        (s0 * vr[c2] + s1 * vr[k + c2]) + (s2 * vr[2 * k + c2] + s3 * vr[3 * k + c2]);
            }
        }
        for (; r < b1; r++) {
            const double *restrict xr = x->d + r * m, *restrict vr = v->d + r * k;
            for (int64_t c = 0; c < k; c++) {
                const double s = vr[c];
                double *restrict a = xv + c * m;
                #pragma omp simd
                for (int64_t j = 0; j < m; j++) a[j] += xr[j] * s;
                for (int64_t c2 = c; c2 < k; c2++) z[(m + c) * o + m + c2] += s * vr[c2];
            }
        }
    }
    for (int64_t c = 0; c < k; c++)
        for (int64_t j = 0; j < m; j++) z[j * o + m + c] = xv[c * m + j];
}

MB *k_tsmm_cbind_of(const MB *a, const MB *b, const MB *c, BrErr *e)
{
    const int64_t m = a->rows, k = c->rows, o = m + k;
    if (a->cols != m || b->rows != m || b->cols != k || c->cols != k) {
        br_err(e, BR_EDIM, "tsmm of [x v]: parts %lldx%lld, %lldx%lld, %lldx%lld", (long long)a->rows,
               (long long)a->cols, (long long)b->rows, (long long)b->cols, (long long)c->rows, (long long)c->cols);
        return NULL;
    }
    MB *r = mb_dense_uninit(o, o, e);
    if (!r) return NULL;
    for (int64_t i = 0; i < o; i++)
        for (int64_t j = 0; j < o; j++)
            r->d[i * o + j] = i < m && j < m   ? mb_get(a, i, j)
                            : i < m            ? mb_get(b, i, j - m)
                            : j < m            ? mb_get(b, j, i - m)
                                               : mb_get(c, i - m, j - m);
    return mm_finish(r, e);
}

MB *k_tsmm_cbind(const MB *x, const MB *v, BrErr *e)
{
    assert(mb_valid(x, false) && mb_valid(v, false));
    if (x->rows != v->rows) {
        br_err(e, BR_EDIM, "tsmm of [x v]: x has %lld rows, v %lld", (long long)x->rows, (long long)v->rows);
        return NULL;
    }
    const int64_t n = x->rows, m = x->cols, k = v->cols, o = m + k;
    if (x->sparse || v->sparse || n < TSMM_GROUPS || m == 0 || k == 0) {
        /* the parts as the separate operators compute them */
        MB *a = k_tsmm(x, true, e), *b = a ? k_matmul_tl(x, v, e) : NULL, *c = b ? k_tsmm(v, true, e) : NULL;
        MB *r = c ? k_tsmm_cbind_of(a, b, c, e) : NULL;
        mb_release(a);
        mb_release(b);
        mb_release(c);
        return r;
    }
    const size_t oo = (size_t)o * (size_t)o;
    const int64_t ws = m <= TSMM_MID_MAX ? 0 : tsmm_wide_scratch(m);
    MB *r = mb_dense_uninit(o, o, e);
    double *part = r ? br_alloc_aligned((TSMM_GROUPS - 1) * oo * sizeof(double)) : NULL;
    if (!part) {
        mb_release(r);
        return oom(e);
    }
    int T = gemm_team((double)o * (double)o * (double)n / 2, TSMM_GROUPS);
    blas_serial();
    int bad = 0;
    /* TSMM_GROUPS fixed row ranges, their partials added in range order:
     * the same bits for every thread count */
    #pragma omp parallel for num_threads(T) schedule(dynamic, 1) if (T > 1) reduction(+ : bad)
    for (int g = 0; g < TSMM_GROUPS; g++) {
        /* the wide leaf's scratch at a 64-byte boundary after cb's own */
        const int64_t pw = tsmma_scratch(m, k);
        double *cb = br_alloc_scratch((size_t)(pw + ws) * sizeof(double));
        if (!cb) { bad++; continue; }
        tsmma_range(x, v, g * n / TSMM_GROUPS, (g + 1) * n / TSMM_GROUPS, g == 0 ? r->d : part + (size_t)(g - 1) * oo,
                    cb, ws ? cb + pw : NULL);
        br_free_aligned(cb);
    }
    if (bad) {
        br_free_aligned(part);
        mb_release(r);
        return oom(e);
    }
    add_groups(r->d, part, o);
    br_free_aligned(part);
    mirror_upper(r->d, o);
    return mm_finish(r, e);
}
