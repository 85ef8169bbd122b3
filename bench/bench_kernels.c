/* bench_kernels.c: braid's kernel benchmark (`make bench-kernels`; not a
 * test). In one run it measures
 *   - STREAM-style bandwidth loops (read-only sum, copy, scale, add, triad)
 *     on 8e7 doubles with the configured threads,
 *   - braid's kernels on the same amount of data: sum, X+Y, X*s, rowSums,
 *     colSums, t(X), each compared with the bandwidth loop of the same
 *     access pattern (bytes read + written per second),
 *   - dense matrix multiplies (gemm, tall-skinny gemv, t(X)%*%X, mmchain,
 *     and the L2SVM-sized X %*% v) against calling OpenBLAS directly on the
 *     same arrays,
 *   - binary and CSV read and write in MB/s of file bytes,
 * and the peak RSS of each case. Every case runs in a forked child, so its
 * peak is clean: the child reports ru_maxrss minus its resident size at
 * the start (the inputs inherited from the parent), i.e. the memory the
 * case added on top of its inputs.
 *
 * The parent never starts OpenMP or OpenBLAS threads (libgomp's pool does
 * not survive fork), so inputs are filled serially.
 *
 * Environment: BENCH_REPS (default 5; best of N is reported),
 * BENCH_QUICK=1 (8x smaller sizes, for trying the program), BENCH_ONLY
 * (run only cases whose name contains this string), BENCH_TAG (suffix of
 * the results file name), BENCH_DIR (scratch directory for the files).
 * The final table is printed and saved to bench/results/kernels-<date>.txt.
 */
#include "../base/base.h"
#include "../base/ops.h"
#include "../io/io.h"
#include "../kernels/agg.h"
#include "../kernels/ew.h"
#include "../kernels/mm.h"
#include "../kernels/reorg.h"
#include "../matrix/mb.h"

#include <cblas.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void openblas_set_num_threads(int);
int openblas_get_parallel(void);
char *openblas_get_config(void);

/* ------------------------------------------------------------------ */
/* inputs (filled by the parent, shared read-only with the children)   */
/* ------------------------------------------------------------------ */

static int64_t g_n;            /* cells of the big arrays (8e7) */
static int64_t g_r, g_c;       /* X is g_r x g_c dense */
static int64_t g_gm;           /* gemm size (g_gm x g_gm) */
static int64_t g_tr, g_tc;     /* tall-skinny view of X: g_tr x g_tc */
static int64_t g_csv_r, g_csv_c; /* CSV matrix */
static int g_reps;
static MB *g_X, *g_Y, *g_A, *g_B;
static MB *g_lu, *g_lv;         /* low-rank factors: LR_M x LR_K, LR_K x LR_N */
#define LR_M 5000
#define LR_K 20
#define LR_N 2000
static MB *g_v50, *g_w;        /* 50 x 1 vector; tall-skinny row weights */
static char g_dir[512];        /* scratch directory for the files */

/* A view of X's values with another shape (never released). */
static MB view(const MB *x, int64_t rows, int64_t cols)
{
    MB v = *x;
    v.rows = rows;
    v.cols = cols;
    return v;
}

static double now_s(void) { return (double)br_now_ns() * 1e-9; }

/* Resident set size now, in KiB (from /proc/self/statm). */
static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, res = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &size, &res) != 2) res = 0;
        fclose(f);
    }
    return res * (sysconf(_SC_PAGESIZE) / 1024);
}

static long maxrss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* Deterministic non-zero values in [-1, 1] (a hash of the index). */
static double val_at(uint64_t i, uint64_t seed)
{
    uint64_t z = i * 0x9E3779B97F4A7C15ULL + seed;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    double u = (double)((z >> 11) % 1999 + 1) / 1000.0 - 1.0; /* never 0 */
    return u == 0 ? 0.5 : u;
}

/* A dense block with hashed values (serial fill; caller releases). */
static MB *make_dense(int64_t rows, int64_t cols, uint64_t seed)
{
    BrErr e = {0};
    MB *m = mb_dense_uninit(rows, cols, &e);
    if (!m) { fprintf(stderr, "bench: %s\n", e.msg); exit(1); }
    int64_t n = rows * cols;
    for (int64_t i = 0; i < n; i++) m->d[i] = val_at((uint64_t)i, seed);
    m->nnz = n;
    return m;
}

/* ------------------------------------------------------------------ */
/* cases                                                               */
/* ------------------------------------------------------------------ */

/* Result of one case, sent from the child through a pipe. */
typedef struct Res {
    int ok;
    double best, mean;   /* seconds per run (per call for batched cases) */
    double ref_best;     /* best of the reference, run interleaved (or 0) */
    long extra_kb;       /* peak RSS over the child's start */
    char note[160];
} Res;

/* One timed run; returns seconds or < 0 on failure (note set). */
typedef double (*RunFn)(void *arg, Res *r);

typedef enum { U_BW, U_GFLOPS, U_FILE } Unit;

typedef struct Case {
    const char *name;
    const char *group;   /* "bw", "kernel", "mm", "io" */
    RunFn fn;
    void *arg;
    double bytes;        /* bytes moved (U_BW/U_FILE) or flops (U_GFLOPS) */
    Unit unit;
    const char *ref;     /* name of the reference case, or NULL */
    double in_mb;        /* inputs of the case (MB) */
    double out_mb;       /* expected output (MB) */
    int reps;            /* 0: g_reps */
    Res res;
    bool ran;
} Case;

#define MAXC 64
static Case g_cases[MAXC];
static int g_nc;

static Case *add_case(const char *name, const char *group, RunFn fn, void *arg,
                      double bytes, Unit unit, const char *ref, double in_mb,
                      double out_mb)
{
    Case *c = &g_cases[g_nc++];
    memset(c, 0, sizeof *c);
    c->name = name; c->group = group; c->fn = fn; c->arg = arg;
    c->bytes = bytes; c->unit = unit; c->ref = ref;
    c->in_mb = in_mb; c->out_mb = out_mb;
    return c;
}

static Case *find_case(const char *name)
{
    for (int i = 0; i < g_nc; i++)
        if (!strcmp(g_cases[i].name, name)) return &g_cases[i];
    return NULL;
}

static void note(Res *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->note, sizeof r->note, fmt, ap);
    va_end(ap);
}

/* Releases a kernel result, or records the failure; returns t or -1. */
static double done_mb(MB *m, BrErr *e, double t, Res *r)
{
    if (!m) { note(r, "error: %s", e->msg); return -1; }
    mb_release(m);
    return t;
}

/* ---- bandwidth loops (OpenMP, static schedule, simd) ---- */

static double *g_z;   /* the loops' output array, allocated in the child */

static int bw_prep(Res *r)
{
    if (g_z) return 0;
    g_z = br_alloc_aligned((size_t)g_n * sizeof(double));
    if (!g_z) { note(r, "out of memory"); return -1; }
    double *z = g_z;
    int64_t n = g_n;
    #pragma omp parallel for simd schedule(static) num_threads(br_threads())
    for (int64_t i = 0; i < n; i++) z[i] = 0;
    return 0;
}

static volatile double g_sink;

static double bw_read(void *arg, Res *r)
{
    const double *restrict x = g_X->d;
    int64_t n = g_n;
    double s = 0, t = now_s();
    #pragma omp parallel for simd schedule(static) reduction(+ : s) num_threads(br_threads())
    for (int64_t i = 0; i < n; i++) s += x[i];
    t = now_s() - t;
    g_sink = s;
    return t;
}

static double bw_copy(void *arg, Res *r)
{
    if (bw_prep(r)) return -1;
    const double *restrict x = g_X->d;
    double *restrict z = g_z;
    int64_t n = g_n;
    double t = now_s();
    #pragma omp parallel for simd schedule(static) num_threads(br_threads())
    for (int64_t i = 0; i < n; i++) z[i] = x[i];
    return now_s() - t;
}

static double bw_scale(void *arg, Res *r)
{
    if (bw_prep(r)) return -1;
    const double *restrict x = g_X->d;
    double *restrict z = g_z, s = 2.5;
    int64_t n = g_n;
    double t = now_s();
    #pragma omp parallel for simd schedule(static) num_threads(br_threads())
    for (int64_t i = 0; i < n; i++) z[i] = s * x[i];
    return now_s() - t;
}

static double bw_add(void *arg, Res *r)
{
    if (bw_prep(r)) return -1;
    const double *restrict x = g_X->d, *restrict y = g_Y->d;
    double *restrict z = g_z;
    int64_t n = g_n;
    double t = now_s();
    #pragma omp parallel for simd schedule(static) num_threads(br_threads())
    for (int64_t i = 0; i < n; i++) z[i] = x[i] + y[i];
    return now_s() - t;
}

static double bw_triad(void *arg, Res *r)
{
    if (bw_prep(r)) return -1;
    const double *restrict x = g_X->d, *restrict y = g_Y->d;
    double *restrict z = g_z, s = 2.5;
    int64_t n = g_n;
    double t = now_s();
    #pragma omp parallel for simd schedule(static) num_threads(br_threads())
    for (int64_t i = 0; i < n; i++) z[i] = x[i] + s * y[i];
    return now_s() - t;
}

/* The add loop into a freshly allocated output each run (page faults
 * included), to show what a new output costs. */
static double bw_add_fresh(void *arg, Res *r)
{
    const double *restrict x = g_X->d, *restrict y = g_Y->d;
    int64_t n = g_n;
    double t = now_s();
    double *restrict z = br_alloc_aligned((size_t)n * sizeof(double));
    if (!z) { note(r, "out of memory"); return -1; }
    #pragma omp parallel for simd schedule(static) num_threads(br_threads())
    for (int64_t i = 0; i < n; i++) z[i] = x[i] + y[i];
    t = now_s() - t;
    br_free_aligned(z);
    return t;
}

/* ---- braid's elementwise, aggregate and reorg kernels ---- */

static double k_sum_full(void *arg, Res *r)
{
    MB x = view(g_X, (int64_t)(intptr_t)arg ? g_n : g_r, (int64_t)(intptr_t)arg ? 1 : g_c);
    BrErr e = {0};
    double s, t = now_s();
    int rc = k_agg_full(OP_SUM, &x, &s, &e);
    t = now_s() - t;
    if (rc) { note(r, "error: %s", e.msg); return -1; }
    g_sink = s;
    return t;
}

static double k_add(void *arg, Res *r)
{
    BrErr e = {0};
    double t = now_s();
    MB *m = k_binary(OP_PLUS, g_X, g_Y, &e);
    return done_mb(m, &e, now_s() - t, r);
}

static double k_scale(void *arg, Res *r)
{
    BrErr e = {0};
    double t = now_s();
    MB *m = k_binary_ms(OP_MULT, g_X, 2.5, &e);
    return done_mb(m, &e, now_s() - t, r);
}

static double k_rowsums(void *arg, Res *r)
{
    BrErr e = {0};
    double t = now_s();
    MB *m = k_agg(OP_SUM, DIR_ROW, g_X, &e);
    return done_mb(m, &e, now_s() - t, r);
}

static double k_colsums(void *arg, Res *r)
{
    MB x = view(g_X, (int64_t)(intptr_t)arg ? g_tr : g_r, (int64_t)(intptr_t)arg ? g_tc : g_c);
    BrErr e = {0};
    double t = now_s();
    MB *m = k_agg(OP_SUM, DIR_COL, &x, &e);
    return done_mb(m, &e, now_s() - t, r);
}

static double k_trans(void *arg, Res *r)
{
    BrErr e = {0};
    double t = now_s();
    MB *m = k_transpose(g_X, &e);
    return done_mb(m, &e, now_s() - t, r);
}

/* ---- matrix multiply: braid vs OpenBLAS on the same arrays ---- */

static double *g_c_out;   /* OpenBLAS output buffer (child) */

static double *blas_out(size_t cells, Res *r)
{
    if (!g_c_out) {
        g_c_out = br_calloc_aligned(cells * sizeof(double));
        if (!g_c_out) note(r, "out of memory");
    }
    openblas_set_num_threads(br_threads());
    return g_c_out;
}

static double mm_gemm_braid(void *arg, Res *r)
{
    BrErr e = {0};
    double t = now_s();
    MB *m = k_matmul(g_A, g_B, &e);
    return done_mb(m, &e, now_s() - t, r);
}

static double mm_gemm_blas(void *arg, Res *r)
{
    int n = (int)g_gm;
    double *c = blas_out((size_t)n * n, r);
    if (!c) return -1;
    double t = now_s();
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, g_A->d, n,
                g_B->d, n, 0.0, c, n);
    return now_s() - t;
}

/* U %*% V of a rank-LR_K factorization (LR_M x LR_N output) */
static double mm_lowk_braid(void *arg, Res *r)
{
    BrErr e = {0};
    double t = now_s();
    MB *m = k_matmul(g_lu, g_lv, &e);
    return done_mb(m, &e, now_s() - t, r);
}

static double mm_lowk_blas(void *arg, Res *r)
{
    static double *c;
    if (!c) c = br_alloc_aligned((size_t)LR_M * LR_N * sizeof(double));
    if (!c) { note(r, "out of memory"); return -1; }
    openblas_set_num_threads(br_threads());
    double t = now_s();
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, LR_M, LR_N, LR_K, 1.0, g_lu->d, LR_K,
                g_lv->d, LR_N, 0.0, c, LR_N);
    return now_s() - t;
}

static double mm_gemv_braid(void *arg, Res *r)
{
    MB x = view(g_X, g_tr, g_tc);
    BrErr e = {0};
    double t = now_s();
    MB *m = k_matmul(&x, g_v50, &e);
    return done_mb(m, &e, now_s() - t, r);
}

static double mm_gemv_blas(void *arg, Res *r)
{
    double *c = blas_out((size_t)g_tr, r);
    if (!c) return -1;
    double t = now_s();
    cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)g_tr, (int)g_tc, 1.0, g_X->d, (int)g_tc,
                g_v50->d, 1, 0.0, c, 1);
    return now_s() - t;
}

static double mm_tsmm_braid(void *arg, Res *r)
{
    MB x = view(g_X, g_tr, g_tc);
    BrErr e = {0};
    double t = now_s();
    MB *m = k_tsmm(&x, true, &e);
    return done_mb(m, &e, now_s() - t, r);
}

static double mm_tsmm_blas(void *arg, Res *r)
{
    int n = (int)g_tc;
    double *c = blas_out((size_t)n * n, r);
    if (!c) return -1;
    double t = now_s();
    if (arg)
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, n, (int)g_tr, 1.0, g_X->d, n,
                    g_X->d, n, 0.0, c, n);
    else
        cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, n, (int)g_tr, 1.0, g_X->d, n, 0.0,
                    c, n);
    return now_s() - t;
}

/* t(X) %*% X over X viewed with (intptr_t)arg columns (the leaves
 * tsmm_small, tsmm_mid and tsmm_wide) against OpenBLAS's dsyrk on
 * braid's thread count */
static double mm_tsmm_narrow_braid(void *arg, Res *r)
{
    int64_t c = (int64_t)(intptr_t)arg;
    MB x = view(g_X, g_n / c, c);
    BrErr e = {0};
    double t = now_s();
    MB *m = k_tsmm(&x, true, &e);
    return done_mb(m, &e, now_s() - t, r);
}

static double mm_tsmm_narrow_blas(void *arg, Res *r)
{
    int c = (int)(intptr_t)arg;
    double *o = blas_out((size_t)c * c, r);
    if (!o) return -1;
    double t = now_s();
    cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, c, (int)(g_n / c), 1.0, g_X->d, c, 0.0, o, c);
    return now_s() - t;
}

/* t(X) %*% (w * (X %*% v)): braid's one-pass mmchain vs two OpenBLAS
 * gemv calls around the scaling. */
static double mm_chain_braid(void *arg, Res *r)
{
    MB x = view(g_X, g_tr, g_tc);
    BrErr e = {0};
    double t = now_s();
    MB *m = k_mmchain(&x, g_v50, g_w, &e);
    return done_mb(m, &e, now_s() - t, r);
}

static double mm_chain_blas(void *arg, Res *r)
{
    double *q = blas_out((size_t)g_tr + (size_t)g_tc, r);
    if (!q) return -1;
    int m = (int)g_tr, n = (int)g_tc;
    const double *w = g_w->d;
    double t = now_s();
    cblas_dgemv(CblasRowMajor, CblasNoTrans, m, n, 1.0, g_X->d, n, g_v50->d, 1, 0.0, q, 1);
    for (int i = 0; i < m; i++) q[i] *= w[i];
    cblas_dgemv(CblasRowMajor, CblasTrans, m, n, 1.0, g_X->d, n, q, 1, 0.0, q + m, 1);
    return now_s() - t;
}

/* L2SVM-sized X (16000 x 50) %*% v and t(X) %*% y, batches of calls
 * (result: seconds per call). */
#define SVM_M 16000
#define SVM_CALLS 200

static double mm_svm_braid(void *arg, Res *r)
{
    bool tl = arg != NULL;
    MB x = view(g_X, SVM_M, g_tc), y = view(g_Y, SVM_M, 1);
    BrErr e = {0};
    double t = now_s();
    for (int k = 0; k < SVM_CALLS; k++) {
        MB *m = tl ? k_matmul_tl(&x, &y, &e) : k_matmul(&x, g_v50, &e);
        if (!m) { note(r, "error: %s", e.msg); return -1; }
        mb_release(m);
    }
    return (now_s() - t) / SVM_CALLS;
}

static double mm_svm_blas(void *arg, Res *r)
{
    bool tl = arg != NULL;
    double *c = blas_out(SVM_M, r);
    if (!c) return -1;
    int n = (int)g_tc;
    double t = now_s();
    for (int k = 0; k < SVM_CALLS; k++) {
        if (tl)
            cblas_dgemv(CblasRowMajor, CblasTrans, SVM_M, n, 1.0, g_X->d, n, g_Y->d, 1, 0.0, c, 1);
        else
            cblas_dgemv(CblasRowMajor, CblasNoTrans, SVM_M, n, 1.0, g_X->d, n, g_v50->d, 1, 0.0,
                        c, 1);
    }
    return (now_s() - t) / SVM_CALLS;
}

/* The small calls of an iterative algorithm (L2SVM's line search): X %*% v
 * (16000 x 50) alternating with an elementwise op over a 200000 x 1
 * vector, which runs as an OpenMP region. Returns the mean seconds per
 * pair of a batch; the reference (mean gemv call + mean elementwise call,
 * each from a batch of its own, same run) goes to g_self_ref. When
 * OpenBLAS's threads and braid's OpenMP threads both spin on 2 cores, the
 * pair costs far more than its parts. */
#define ALT_VEC 200000
static double g_self_ref;

static double mm_alt(void *arg, Res *r)
{
    MB x = view(g_X, SVM_M, g_tc), y = view(g_Y, ALT_VEC, 1);
    BrErr e = {0};
    double t[3];
    for (int mode = 0; mode < 3; mode++) {   /* gemv alone, ew alone, pairs */
        double t0 = now_s();
        for (int k = 0; k < SVM_CALLS; k++) {
            MB *a = mode != 1 ? k_matmul(&x, g_v50, &e) : NULL;
            MB *b = mode != 0 ? k_binary_ms(OP_MULT, &y, 1.5, &e) : NULL;
            bool bad = (mode != 1 && !a) || (mode != 0 && !b);
            mb_release(a);
            mb_release(b);
            if (bad) { note(r, "error: %s", e.msg); return -1; }
        }
        t[mode] = (now_s() - t0) / SVM_CALLS;
    }
    if (!(g_self_ref > 0) || t[0] + t[1] < g_self_ref) g_self_ref = t[0] + t[1];
    return t[2];
}

/* ---- files ---- */

typedef struct IoArg { const char *fmt; int64_t rows, cols; char path[600]; } IoArg;

static double io_file_bytes(const char *path)
{
    struct stat st;
    return stat(path, &st) ? 0 : (double)st.st_size;
}

static double io_write(void *arg, Res *r)
{
    IoArg *a = arg;
    MB x = view(g_X, a->rows, a->cols);
    IoWriteOpts o;
    io_write_opts_init(&o);
    o.format = a->fmt;
    BrErr e = {0};
    double t = now_s();
    int rc = io_write_matrix(a->path, &x, &o, &e);
    t = now_s() - t;
    if (rc) { note(r, "error: %s", e.msg); return -1; }
    note(r, "%.0f MB file", io_file_bytes(a->path) / 1e6);
    return t;
}

static double io_read(void *arg, Res *r)
{
    IoArg *a = arg;
    IoReadOpts o;
    io_read_opts_init(&o);
    BrErr e = {0};
    double t = now_s();
    MB *m = io_read_matrix(a->path, &o, &e);
    t = now_s() - t;
    if (!m) { note(r, "error: %s", e.msg); return -1; }
    if (m->rows != a->rows || m->cols != a->cols) {
        note(r, "read back %lldx%lld", (long long)m->rows, (long long)m->cols);
        t = -1;
    }
    mb_release(m);
    return t;
}

/* ------------------------------------------------------------------ */
/* running                                                             */
/* ------------------------------------------------------------------ */

/* Runs case c in a forked child: a warm-up run, then reps timed runs
 * (the peak RSS is taken here, before any reference ran), then, when c
 * has a reference, reps pairs (reference, case) interleaved so both see the
 * same machine load; best times over all runs. */
static void run_case(Case *c)
{
    const Case *ref = c->ref ? find_case(c->ref) : NULL;
    int fd[2];
    if (pipe(fd)) { perror("pipe"); exit(1); }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); exit(1); }
    if (pid == 0) {
        close(fd[0]);
        Res r, rr;
        memset(&r, 0, sizeof r);
        memset(&rr, 0, sizeof rr);
        long base = rss_kb();
        int reps = c->reps ? c->reps : g_reps;
        double best = INFINITY, rbest = INFINITY, sum = 0;
        r.ok = 1;
        if (c->fn(c->arg, &r) < 0) r.ok = 0;     /* warm-up */
        for (int k = 0; k < reps && r.ok; k++) {
            double t = c->fn(c->arg, &r);
            if (t < 0) { r.ok = 0; break; }
            best = t < best ? t : best;
            sum += t;
        }
        r.extra_kb = maxrss_kb() - base;
        if (!ref && g_self_ref > 0) r.ref_best = g_self_ref;
        if (ref && r.ok && ref->fn(ref->arg, &rr) >= 0) {
            for (int k = 0; k < reps && r.ok; k++) {
                double tr = ref->fn(ref->arg, &rr), t = c->fn(c->arg, &r);
                if (t < 0 || tr < 0) { r.ok = 0; break; }
                best = t < best ? t : best;
                rbest = tr < rbest ? tr : rbest;
            }
            r.ref_best = rbest;
        }
        r.best = best;
        r.mean = sum / reps;
        if (write(fd[1], &r, sizeof r) != (ssize_t)sizeof r) _exit(2);
        _exit(0);
    }
    close(fd[1]);
    Res r;
    memset(&r, 0, sizeof r);
    ssize_t got = read(fd[0], &r, sizeof r);
    close(fd[0]);
    int st;
    waitpid(pid, &st, 0);
    if (got != (ssize_t)sizeof r) {
        r.ok = 0;
        snprintf(r.note, sizeof r.note, "child died (status %d)", st);
    }
    c->res = r;
    c->ran = true;
}

/* Rate of a case in its unit (GB/s, GFLOP/s or MB/s). */
static double rate(const Case *c)
{
    if (!c->ran || !c->res.ok) return NAN;
    double s = c->res.best;
    switch (c->unit) {
    case U_BW: return c->bytes / s / 1e9;
    case U_GFLOPS: return c->bytes / s / 1e9;
    default: return c->bytes / s / 1e6;
    }
}

static const char *unit_name(Unit u)
{
    return u == U_BW ? "GB/s" : u == U_GFLOPS ? "GFLOP/s" : "MB/s";
}

/* Ratio of a case to its reference: rates for bandwidth cases, times for
 * the rest (reference time / case time). The reference's time is the one
 * measured interleaved with the case (its own row may differ: load). */
static double ratio(const Case *c)
{
    const Case *r = c->ref ? find_case(c->ref) : NULL;
    if (!c->ran || !c->res.ok || !(c->res.ref_best > 0)) return NAN;
    if (!r) return c->res.ref_best / c->res.best;
    return c->res.ref_best / c->res.best * (c->unit == U_BW ? c->bytes / r->bytes : 1.0);
}

static void row(FILE *f, const Case *c)
{
    char rt[32] = "", rat[32] = "", tm[32] = "";
    double rv = rate(c), q = ratio(c);
    if (c->ran && c->res.ok) {
        double s = c->res.best;
        if (s < 1e-3) snprintf(tm, sizeof tm, "%8.1f us", s * 1e6);
        else snprintf(tm, sizeof tm, "%8.2f ms", s * 1e3);
        if (!isnan(rv)) snprintf(rt, sizeof rt, "%7.2f %s", rv, unit_name(c->unit));
    } else {
        snprintf(tm, sizeof tm, "%11s", "FAILED");
    }
    if (!isnan(q)) snprintf(rat, sizeof rat, "%5.1f%%", 100 * q);
    double peak = c->in_mb + (double)c->res.extra_kb / 1024.0;
    fprintf(f, "%-34s %11s %15s %7s  %-16s %8.0f %8.0f %8.0f  %s\n", c->name, tm, rt, rat,
            c->ref ? c->ref : c->res.ref_best > 0 ? "both calls alone" : "", c->in_mb, c->out_mb,
            peak, c->res.note);
}

static void header(FILE *f)
{
    fprintf(f, "%-34s %11s %15s %7s  %-16s %8s %8s %8s  %s\n", "case", "best", "rate",
            "ratio", "vs", "in MB", "out MB", "peak MB", "note");
}

static bool wanted(const char *name)
{
    const char *only = getenv("BENCH_ONLY");
    return !only || !*only || strstr(name, only);
}

static int env_int(const char *name, int def)
{
    const char *s = getenv(name);
    return s && *s ? atoi(s) : def;
}

int main(void)
{
    bool quick = env_int("BENCH_QUICK", 0) != 0;
    g_reps = env_int("BENCH_REPS", 5);
    if (g_reps < 1) g_reps = 1;
    int div = quick ? 8 : 1;
    g_r = 10000 / div; g_c = 8000;
    g_n = g_r * g_c;
    g_tc = 50; g_tr = g_n / g_tc;
    g_gm = quick ? 1000 : 2000;
    g_csv_r = 10000 / div; g_csv_c = 1000;
    const char *bd = getenv("BENCH_DIR");
    snprintf(g_dir, sizeof g_dir, "%s/braid-bench-%ld", bd && *bd ? bd : "/tmp", (long)getpid());
    if (mkdir(g_dir, 0700) && errno != EEXIST) { perror(g_dir); return 1; }

    int par = openblas_get_parallel();
    char cfg[256];
    snprintf(cfg, sizeof cfg, "%s", openblas_get_config());
    printf("braid kernel benchmark: %d threads (br_threads), OMP_NUM_THREADS=%s, best of %d\n",
           br_threads(), getenv("OMP_NUM_THREADS") ? getenv("OMP_NUM_THREADS") : "unset", g_reps);
    printf("OpenBLAS: %s; threading model %s\n", cfg,
           par == 0 ? "sequential" : par == 1 ? "pthreads" : par == 2 ? "OpenMP" : "?");
    if (par == 1)
        printf("WARNING: the pthreads build of OpenBLAS is loaded: its threads and braid's "
               "OpenMP threads compete for the cores\n");
    printf("filling inputs (serial)...\n");
    fflush(stdout);

    double t0 = now_s();
    g_X = make_dense(g_r, g_c, 1);
    g_Y = make_dense(g_r, g_c, 2);
    g_A = make_dense(g_gm, g_gm, 3);
    g_B = make_dense(g_gm, g_gm, 4);
    g_lu = make_dense(LR_M, LR_K, 5);
    g_lv = make_dense(LR_K, LR_N, 6);
    g_v50 = make_dense(g_tc, 1, 5);
    g_w = make_dense(g_tr, 1, 6);
    printf("inputs ready in %.1f s\n\n", now_s() - t0);

    double n = (double)g_n, mbX = n * 8 / 1e6, mbA = (double)g_gm * g_gm * 8 / 1e6;
    char nm[64][64];
    int ni = 0;
#define NAME(...) (snprintf(nm[ni], sizeof nm[ni], __VA_ARGS__), nm[ni++])

    /* bandwidth loops */
    add_case("bw read (sum loop)", "bw", bw_read, NULL, 8 * n, U_BW, NULL, mbX, 0);
    add_case("bw copy", "bw", bw_copy, NULL, 16 * n, U_BW, NULL, mbX, mbX);
    add_case("bw scale", "bw", bw_scale, NULL, 16 * n, U_BW, NULL, mbX, mbX);
    add_case("bw add", "bw", bw_add, NULL, 24 * n, U_BW, NULL, 2 * mbX, mbX);
    add_case("bw triad", "bw", bw_triad, NULL, 24 * n, U_BW, NULL, 2 * mbX, mbX);
    add_case("bw add, fresh output", "bw", bw_add_fresh, NULL, 24 * n, U_BW, "bw add",
             2 * mbX, mbX);

    /* kernels */
    add_case(NAME("sum(X) %lldx%lld", (long long)g_r, (long long)g_c), "kernel", k_sum_full,
             (void *)0, 8 * n, U_BW, "bw read (sum loop)", mbX, 0);
    add_case(NAME("sum(x) %lldx1", (long long)g_n), "kernel", k_sum_full, (void *)1, 8 * n,
             U_BW, "bw read (sum loop)", mbX, 0);
    add_case("X+Y", "kernel", k_add, NULL, 24 * n, U_BW, "bw add", 2 * mbX, mbX);
    add_case("X*s", "kernel", k_scale, NULL, 16 * n, U_BW, "bw scale", mbX, mbX);
    add_case("rowSums(X)", "kernel", k_rowsums, NULL, 8 * n, U_BW, "bw read (sum loop)", mbX,
             (double)g_r * 8 / 1e6);
    add_case("colSums(X)", "kernel", k_colsums, (void *)0, 8 * n, U_BW, "bw read (sum loop)",
             mbX, (double)g_c * 8 / 1e6);
    add_case(NAME("colSums(X) %lldx%lld", (long long)g_tr, (long long)g_tc), "kernel",
             k_colsums, (void *)1, 8 * n, U_BW, "bw read (sum loop)", mbX, 0);
    add_case("t(X)", "kernel", k_trans, NULL, 16 * n, U_BW, "bw copy", mbX, mbX);

    /* matrix multiply */
    double fl = 2.0 * (double)g_gm * g_gm * g_gm;
    Case *c;
    c = add_case(NAME("OpenBLAS dgemm %lld^2", (long long)g_gm), "mm", mm_gemm_blas, NULL, fl,
                 U_GFLOPS, NULL, 2 * mbA, mbA);
    add_case(NAME("A%%*%%B %lld^2", (long long)g_gm), "mm", mm_gemm_braid, NULL, fl, U_GFLOPS,
             c->name, 2 * mbA, mbA);
    double lrfl = 2.0 * LR_M * LR_K * LR_N, lrmb = (double)LR_M * LR_N * 8 / 1e6;
    c = add_case(NAME("OpenBLAS dgemm %dx%dx%d", LR_M, LR_K, LR_N), "mm", mm_lowk_blas, NULL, lrfl,
                 U_GFLOPS, NULL, 1.0, lrmb);
    add_case(NAME("U%%*%%V %dx%dx%d", LR_M, LR_K, LR_N), "mm", mm_lowk_braid, NULL, lrfl, U_GFLOPS, c->name,
             1.0, lrmb);
    c = add_case(NAME("OpenBLAS dgemv %lldx%lld", (long long)g_tr, (long long)g_tc), "mm",
                 mm_gemv_blas, NULL, 8 * n, U_BW, NULL, mbX, (double)g_tr * 8 / 1e6);
    add_case("X%*%v tall-skinny", "mm", mm_gemv_braid, NULL, 8 * n, U_BW, c->name, mbX,
             (double)g_tr * 8 / 1e6);
    add_case("OpenBLAS dsyrk t(X)X", "mm", mm_tsmm_blas, NULL, (double)g_tr * g_tc * g_tc,
             U_GFLOPS, NULL, mbX, 0.02);
    add_case("OpenBLAS dgemm t(X)X", "mm", mm_tsmm_blas, (void *)1,
             2.0 * (double)g_tr * g_tc * g_tc, U_GFLOPS, NULL, mbX, 0.02);
    add_case("t(X)%*%X tall-skinny", "mm", mm_tsmm_braid, NULL, (double)g_tr * g_tc * g_tc,
             U_GFLOPS, "OpenBLAS dsyrk t(X)X", mbX, 0.02);
    static const int tsmm_cols[] = {10, 16, 32, 100, 200};
    for (size_t q = 0; q < sizeof tsmm_cols / sizeof *tsmm_cols; q++) {
        const int nc = tsmm_cols[q];
        c = add_case(NAME("OpenBLAS dsyrk t(X)X %lldx%d", (long long)(g_n / nc), nc), "mm",
                     mm_tsmm_narrow_blas, (void *)(intptr_t)nc, 8 * n, U_BW, NULL, mbX, 0);
        add_case(NAME("t(X)%%*%%X %lldx%d", (long long)(g_n / nc), nc), "mm", mm_tsmm_narrow_braid,
                 (void *)(intptr_t)nc, 8 * n, U_BW, c->name, mbX, 0);
    }
    add_case("OpenBLAS 2x dgemv chain", "mm", mm_chain_blas, NULL, 16 * n, U_BW, NULL,
             mbX, 0);
    add_case("mmchain t(X)(w*(X v))", "mm", mm_chain_braid, NULL, 16 * n, U_BW,
             "OpenBLAS 2x dgemv chain", mbX, 0);
    double svm = (double)SVM_M * g_tc * 8;
    add_case("OpenBLAS dgemv 16000x50 (per call)", "mm", mm_svm_blas, NULL, svm, U_BW, NULL,
             svm / 1e6, 0.13);
    add_case("X%*%v 16000x50 (per call)", "mm", mm_svm_braid, NULL, svm, U_BW,
             "OpenBLAS dgemv 16000x50 (per call)", svm / 1e6, 0.13);
    add_case("OpenBLAS dgemv^T 16000x50 (per call)", "mm", mm_svm_blas, (void *)1, svm, U_BW,
             NULL, svm / 1e6, 0);
    add_case("t(X)%*%y 16000x50 (per call)", "mm", mm_svm_braid, (void *)1, svm, U_BW,
             "OpenBLAS dgemv^T 16000x50 (per call)", svm / 1e6, 0);

    add_case("gemv 16000x50 + ew 200000x1 (pair)", "mm", mm_alt, NULL, svm, U_BW,
             NULL, svm / 1e6 + 1.6, 1.7);

    /* files */
    static IoArg bin = { "binary", 0, 0, "" }, csv = { "csv", 0, 0, "" };
    bin.rows = g_r; bin.cols = g_c;
    csv.rows = g_csv_r; csv.cols = g_csv_c;
    snprintf(bin.path, sizeof bin.path, "%s/X.bin", g_dir);
    snprintf(csv.path, sizeof csv.path, "%s/X.csv", g_dir);
    c = add_case("binary write", "io", io_write, &bin, 0, U_FILE, NULL, mbX, 0);
    c->reps = 3;
    c = add_case("binary read", "io", io_read, &bin, 0, U_FILE, NULL, 0, mbX);
    c->reps = 3;
    double mbC = (double)g_csv_r * g_csv_c * 8 / 1e6;
    c = add_case(NAME("csv write %lldx%lld", (long long)g_csv_r, (long long)g_csv_c), "io",
                 io_write, &csv, 0, U_FILE, NULL, mbC, 0);
    c->reps = 2;
    c = add_case(NAME("csv read %lldx%lld", (long long)g_csv_r, (long long)g_csv_c), "io",
                 io_read, &csv, 0, U_FILE, NULL, 0, mbC);
    c->reps = 2;

    header(stdout);
    for (int i = 0; i < g_nc; i++) {
        c = &g_cases[i];
        bool need = wanted(c->name);
        /* references of wanted cases run too; reads need their writes */
        for (int j = i + 1; j < g_nc && !need; j++)
            if (wanted(g_cases[j].name) &&
                ((g_cases[j].ref && !strcmp(g_cases[j].ref, c->name)) ||
                 (g_cases[j].fn == io_read && c->fn == io_write && g_cases[j].arg == c->arg)))
                need = true;
        if (!need) continue;
        run_case(c);
        if (c->unit == U_FILE && c->res.ok) {   /* bytes: the file's size */
            IoArg *a = c->arg;
            c->bytes = io_file_bytes(a->path);
        }
        row(stdout, c);
        fflush(stdout);
    }

    /* the final table, printed and saved */
    char date[32], path[800];
    time_t tt = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d", localtime(&tt));
    const char *tag = getenv("BENCH_TAG");
    snprintf(path, sizeof path, "%s/bench/results", BRAID_SOURCE_DIR);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/bench/results/kernels-%s%s%s.txt", BRAID_SOURCE_DIR, date,
             tag && *tag ? "-" : "", tag && *tag ? tag : "");
    FILE *outs[2] = { stdout, fopen(path, "w") };
    for (int k = 0; k < 2; k++) {
        FILE *f = outs[k];
        if (!f) continue;
        fprintf(f, "\n== braid kernel benchmark %s: %d threads, best of %d%s ==\n", date,
                br_threads(), g_reps, quick ? " (QUICK sizes)" : "");
        fprintf(f, "OpenBLAS %s (%s)\n", cfg,
                par == 0 ? "sequential" : par == 1 ? "pthreads" : par == 2 ? "OpenMP" : "?");
        fprintf(f, "ratio: bandwidth of the case / bandwidth of the loop named in 'vs' "
                   "(bytes read + written); for mm, OpenBLAS time / braid time.\n"
                   "peak MB: the case's inputs + the RSS its child added over them.\n\n");
        const char *groups[] = { "bw", "kernel", "mm", "io" };
        const char *titles[] = { "bandwidth loops", "elementwise, aggregate, reorg kernels",
                                 "matrix multiply", "files (MB/s of file bytes)" };
        for (int g = 0; g < 4; g++) {
            fprintf(f, "-- %s\n", titles[g]);
            header(f);
            for (int i = 0; i < g_nc; i++)
                if (!strcmp(g_cases[i].group, groups[g]) && g_cases[i].ran) row(f, &g_cases[i]);
            fprintf(f, "\n");
        }
    }
    if (outs[1]) {
        fclose(outs[1]);
        printf("saved to %s\n", path);
    }
    /* scratch files */
    unlink(bin.path);
    unlink(csv.path);
    char mtd[700];
    snprintf(mtd, sizeof mtd, "%s.mtd", bin.path);
    unlink(mtd);
    snprintf(mtd, sizeof mtd, "%s.mtd", csv.path);
    unlink(mtd);
    rmdir(g_dir);
    return 0;
}
