/* bench_codegen.c: operator fusion on the seed's micro-benchmark patterns
 * (seed 000, section 5.2), reported as ratios measured in one run:
 *   Cell   sum(X*Y*Z)
 *   MAgg   sum(X*Y), sum(X*Z)
 *   Row    t(X)%*%(w*(X%*%v)) and t(X)%*%(X%*%V), V of 2, 5, 10, 16 columns
 *   Outer  sum(W*log(U%*%t(V)+1e-15)), W sparse n x n (1e-3, 1e-2), rank 100
 *   Row variants with the bodies of the algorithms' inner loops: the
 *          logistic-regression gradient t(X)%*%(1/(1+exp(-X%*%w))-y)/n,
 *          GLM Poisson's t(X)%*%(y-exp(X%*%w)) (and GLM's weighted sum
 *          t(X)%*%(w*(X%*%v)) above), MLogreg's Hessian-vector product
 *          t(X)%*%(Q-P*rowSums(Q)), Q = P*(X%*%V), V of 2 and 4 columns,
 *          and a k-means iteration (kmeans.dml's lloyd_run: distances to k
 *          = 5 centroids, row minima, assignment, counts, centroid sums:
 *          one multi-output Row operator, the cost-based plan since
 *          mpskip.c's without_amulet, docs/perf.md), also against scikit-learn's
 *          Lloyd iteration (lloyd_iter_chunked_dense) when it has one
 * against (a) an in-run STREAM-style loop reading the same bytes with the
 * same threads (hashed values, vectorized sum: the memory bandwidth) and,
 * for Row patterns, a roof max(read time, flops / in-run dgemm rate), the
 * dgemm rate of a 2000^3 OpenBLAS product with the same threads, (b) braid with
 * codegen off, (c) NumPy (when /usr/bin/python3 has it). Each pattern and mode runs in its own process, so the peak RSS
 * of each is reported too (codegen on and off, relative to the inputs).
 *
 * Usage: bench_codegen [rows=1000000] [cols=100] [outer_n=20000]
 * (make bench-codegen; OMP_NUM_THREADS / br_threads: 2 by default;
 * BRAID_BENCH_ONLY=text runs only the patterns whose name contains it). */
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/diag.h"
#include "codegen/codegen.h"
#include "lang/load.h"
#include "plan/build.h"
#include "runtime/interp.h"
#include "bench/rates.h"

static int64_t ROWS = 1000000, COLS = 100, ON = 20000;


static MB *dense(int64_t r, int64_t c, uint64_t seed)
{
    BrErr e = {0};
    MB *m = mb_dense_uninit(r, c, &e);
    if (!m) { fprintf(stderr, "out of memory\n"); exit(2); }
    int64_t n = r * c;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) m->d[i] = 0.1 + hval((uint64_t)i, seed);
    m->nnz = n;
    return m;
}

static MB *sparse(int64_t r, int64_t c, double sp, uint64_t seed)
{
    BrErr e = {0};
    MB *m = mb_sp_new(r, c, (int64_t)((double)r * (double)c * sp * 1.1) + 16, &e);
    for (int64_t i = 0; i < r; i++) {
        int64_t k = (int64_t)((double)c * sp);
        /* sorted distinct columns: one per stride */
        double step = k ? (double)c / (double)k : 0;
        for (int64_t t = 0; t < k; t++) {
            int64_t j = (int64_t)(t * step + hval((uint64_t)(i * 7 + t), seed) * step * 0.999);
            mb_sp_append(m, i, j, 0.5 + hval((uint64_t)(i * c + j), seed + 1), &e);
        }
    }
    mb_sp_finish(m);
    return m;
}

typedef struct Pat {
    const char *name;
    const char *src;
    int nin;
    const char *names[4];
    double stream_bytes;   /* bytes a STREAM loop reads for the same data */
    bool fuse_all;         /* planned under fuse_all (else cost-based) */
} Pat;

/* Builds the inputs of pattern k. */
static void inputs(int k, int64_t vk, double sp, MB **in)
{
    switch (k) {
    case 0: case 1:
        in[0] = dense(ROWS, COLS, 1); in[1] = dense(ROWS, COLS, 2); in[2] = dense(ROWS, COLS, 3);
        break;
    case 2:
        in[0] = dense(ROWS, COLS, 1); in[1] = dense(COLS, 1, 2); in[2] = dense(ROWS, 1, 3);
        break;
    case 3:
        in[0] = dense(ROWS, COLS, 1); in[1] = dense(COLS, vk, 2);
        break;
    case 4:
        in[0] = sparse(ON, ON, sp, 1); in[1] = dense(ON, 100, 2); in[2] = dense(ON, 100, 3);
        break;
    case 5: case 6:   /* X, a coefficient vector (centered), labels/counts */
        in[0] = dense(ROWS, COLS, 1); in[1] = dense(COLS, 1, 2); in[2] = dense(ROWS, 1, 3);
        for (int64_t j = 0; j < COLS; j++) in[1]->d[j] = (in[1]->d[j] - 0.6) * 0.1;
        break;
    case 8:           /* X, C (k centroids) */
        in[0] = dense(ROWS, COLS, 1); in[1] = dense(vk, COLS, 2);
        break;
    default:          /* X, V (k columns), P (k probabilities a row) */
        in[0] = dense(ROWS, COLS, 1); in[1] = dense(COLS, vk, 2); in[2] = dense(ROWS, vk, 3);
        break;
    }
}

static const Pat pats[] = {
    {"Cell sum(X*Y*Z)", "s = sum(X * Y * Z)", 3, {"X", "Y", "Z"}, 3, false},
    {"MAgg sum(X*Y),sum(X*Z)", "a = sum(X * Y)\nb = sum(X * Z)\ns = a + b", 3, {"X", "Y", "Z"}, 3, false},
    {"Row t(X)%*%(w*(X%*%v))", "R = t(X) %*% (w * (X %*% v))\ns = sum(R)", 3, {"X", "v", "w"}, 1, false},
    {"Row t(X)%*%(X%*%V)", "R = t(X) %*% (X %*% V)\ns = sum(R)", 2, {"X", "V"}, 1, false},
    {"Outer sum(W*log(UV'+eps))", "s = sum(W * log(U %*% t(V) + 1e-15))", 3, {"W", "U", "V"}, 0, false},
    /* Row variants with the bodies of the algorithms' inner loops */
    {"Row LogReg t(X)%*%(sigm(Xw)-y)", "p = 1 / (1 + exp(-(X %*% w)))\nR = t(X) %*% (p - y) / nrow(X)\ns = sum(R)", 3,
     {"X", "w", "y"}, 1, false},
    {"Row GLM t(X)%*%(y-exp(Xb))", "R = t(X) %*% (y - exp(X %*% w))\ns = sum(R)", 3, {"X", "w", "y"}, 1, false},
    {"Row MLogreg t(X)%*%(P*XV-P*rs)", "Q = P * (X %*% V)\nR = t(X) %*% (Q - P * rowSums(Q))\ns = sum(R)", 3,
     {"X", "V", "P"}, 1, false},
    {"Row KMeans step", "D = -2 * (X %*% t(C)) + t(rowSums(C ^ 2))\ndmin = rowMins(D)\nw = sum(dmin)\nP = D <= dmin\n"
     "P = P / rowSums(P)\ncnt = colSums(P)\nS = t(P) %*% X\ns = w + sum(cnt) + sum(S)", 2, {"X", "C"}, 1, false},
};

/* Runs pattern k with codegen on or off in this process: best of reps
 * execution times (the first run compiles). */
static double run_pattern(int k, int64_t vk, double sp, bool cg, int reps, double *inbytes)
{
    MB *in[4] = {0};
    inputs(k, vk, sp, in);
    *inbytes = 0;
    for (int i = 0; i < pats[k].nin; i++) *inbytes += (double)mb_bytes(in[i]);
    Diag *d = diag_new();
    LangOptions lo = {.predefined = pats[k].names, .npredefined = pats[k].nin};
    Program *ast = lang_load_string(pats[k].src, "<bench>", &lo, d);
    CgOptions o = {.enabled = cg, .plancache = true, .policy = pats[k].fuse_all ? CG_FUSE_ALL : CG_COST_BASED};
    const char *outnames[] = {"s"};
    RtProgram *p = ast ? plan_build_program_outputs(ast, d, 2, &o, outnames, 1) : NULL;
    if (!p) { fprintf(stderr, "bench: %s\n", diag_first_message(d)); exit(2); }
    NameSet outs = {0}, live = {0};
    ns_add(&outs, "s");
    plan_liveness(&p->main, &outs, &live);
    RtOptions ro = {.out = stdout, .seed = -1};
    double best = 1e30;
    for (int r = 0; r <= reps; r++) {
        Rt rt;
        rt_init(&rt, p, d, &ro);
        Frame f;
        st_init(&f.vars);
        f.depth = 0;
        for (int i = 0; i < pats[k].nin; i++) st_put(&f.vars, pats[k].names[i], val_matrix(mb_retain(in[i])));
        int64_t t0 = br_now_ns();
        if (rt_run_main(&rt, &f)) { rt_print_error(&rt, stderr); exit(2); }
        double t = (double)(br_now_ns() - t0) / 1e9;
        if (r > 0 && t < best) best = t;
        st_free(&f.vars);
        rt_destroy(&rt);
    }
    ns_free(&outs);
    ns_free(&live);
    plan_program_free(p);
    lang_program_free(ast);
    diag_free(d);
    for (int i = 0; i < 4; i++) mb_release(in[i]);
    return best;
}

typedef struct Res { double t, inbytes, rss; } Res;

/* Runs one measurement in a fresh process (fork + exec of this program,
 * so no OpenMP state crosses a fork); collects its time and peak RSS. */
static Res measure(int k, int64_t vk, double sp, bool cg)
{
    int fd[2];
    Res r = {-1, 0, 0};
    if (pipe(fd)) return r;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], 1);
        char a[8][64];
        snprintf(a[0], 64, "%d", k);
        snprintf(a[1], 64, "%lld", (long long)vk);
        snprintf(a[2], 64, "%.17g", sp);
        snprintf(a[3], 64, "%d", cg ? 1 : 0);
        snprintf(a[4], 64, "%lld", (long long)ROWS);
        snprintf(a[5], 64, "%lld", (long long)COLS);
        snprintf(a[6], 64, "%lld", (long long)ON);
        snprintf(a[7], 64, "%d", br_threads());
        char *argv[] = {"bench_codegen", "--child", a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], NULL};
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    close(fd[1]);
    FILE *f = fdopen(fd[0], "r");
    double t = -1, ib = 0, hwm = 0;
    if (!f || fscanf(f, "%lf %lf %lf", &t, &ib, &hwm) != 3) t = -1;
    if (f) fclose(f);
    int status;
    struct rusage ru;
    wait4(pid, &status, 0, &ru);
    r.t = t;
    r.inbytes = ib;
    r.rss = hwm > 0 ? hwm : (double)ru.ru_maxrss * 1024.0;
    return r;
}



/* The overlap reference of Row patterns: the same rows read (rows x cols,
 * hashed values) with the pattern's multiply-adds per row done as
 * vector FMAs on independent accumulators (no reductions, no side
 * matrices, no dependences between rows; each row's vectors in turn),
 * rows prefetched 16 ahead. It measures how well this machine overlaps a
 * row's compute with the memory stream: the best a streaming kernel with
 * that many FMAs per row can expect (roughly; not a strict bound), where
 * the roof above assumes perfect overlap. fmas: FMAs a row (set to the
 * count done: whole passes over the row's vectors). */
#if defined(__AVX512F__)
#include <immintrin.h>
typedef __m512d ovd;
#define OV_W 8
#define OV_LD(p) _mm512_loadu_pd(p)
#define OV_FMA(a, b, c) _mm512_fmadd_pd(a, b, c)
#define OV_SET(x) _mm512_set1_pd(x)
#define OV_SUM(a) _mm512_reduce_add_pd(a)
#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
typedef __m256d ovd;
#define OV_W 4
#define OV_LD(p) _mm256_loadu_pd(p)
#define OV_FMA(a, b, c) _mm256_fmadd_pd(a, b, c)
#define OV_SET(x) _mm256_set1_pd(x)
#define OV_SUM(a) ((a)[0] + (a)[1] + (a)[2] + (a)[3])
#endif
#ifdef OV_W
/* Rows [r0, r1) of x (cols wide, NV vectors a row), passes FMAs per
 * vector; NV a constant at each call (no branches in the FMA loop). */
static inline __attribute__((always_inline)) double ov_rows(const double *x, int64_t r0, int64_t r1, int64_t cols,
                                                              int passes, const int NV)
{
    const int64_t pf = r1 - 16;
    const ovd c = OV_SET(0.999);
    ovd a[16];
#pragma GCC unroll 16
    for (int v = 0; v < NV; v++) a[v] = OV_SET(0);
    for (int64_t r = r0; r < r1; r++) {
        const double *row = x + r * cols;
        if (r < pf)
            for (int64_t b = 0; b < cols * 8; b += 64) _mm_prefetch((const char *)(row + 16 * cols) + b, _MM_HINT_T1);
        for (int q = 0; q < passes; q++)
#pragma GCC unroll 16
            for (int v = 0; v < NV; v++) a[v] = OV_FMA(OV_LD(row + v * OV_W), c, a[v]);
    }
#pragma GCC unroll 16
    for (int v = 1; v < NV; v++) a[0] += a[v];
    return OV_SUM(a[0]);
}
#endif

static double overlap_ref(int64_t rows, int64_t cols, double *fmas)
{
#ifdef OV_W
    const int64_t nv = (cols + OV_W - 1) / OV_W;
    if (nv > 16) return -1;
    const int passes = (int)fmax(1, round(*fmas / (double)nv));
    *fmas = (double)passes * (double)nv;
    /* OV_W doubles of slack: the last vector of the last row reads past it */
    double *x = br_alloc_aligned((size_t)(rows * cols + OV_W) * sizeof(double));
#pragma omp parallel for schedule(static)
    for (int64_t j = 0; j < rows * cols + OV_W; j++) x[j] = hval((uint64_t)j, 13) * 1e-3;
    double best = 1e30, sink = 0;
    for (int rep = 0; rep < 4; rep++) {
        int64_t t0 = br_now_ns();
        double s = 0;
#pragma omp parallel reduction(+:s) num_threads(br_threads())
        {
            const int nt = omp_get_num_threads(), id = omp_get_thread_num();
            const int64_t r0 = rows * id / nt, r1 = rows * (id + 1) / nt;
            switch (nv) {
#define OV_CASE(k) case k: s += ov_rows(x, r0, r1, cols, passes, k); break;
            OV_CASE(1) OV_CASE(2) OV_CASE(3) OV_CASE(4) OV_CASE(5) OV_CASE(6) OV_CASE(7) OV_CASE(8)
            OV_CASE(9) OV_CASE(10) OV_CASE(11) OV_CASE(12) OV_CASE(13) OV_CASE(14) OV_CASE(15) OV_CASE(16)
#undef OV_CASE
            }
        }
        double t = (double)(br_now_ns() - t0) / 1e9;
        sink += s;
        if (t < best) best = t;
    }
    br_free_aligned(x);
    if (sink == 1.2345) printf(" ");
    return best;
#else
    (void)rows; (void)cols; (void)fmas;
    return -1;
#endif
}

/* Floating-point operations of pattern k (Row patterns; 0 otherwise):
 * two products of X with a vector or k-column matrix. */
static double pattern_flops(int k, int64_t vk)
{
    if (k == 2) return 4.0 * (double)ROWS * (double)COLS;
    if (k == 3 || k == 7 || k == 8) return 4.0 * (double)ROWS * (double)COLS * (double)vk;
    if (k == 5 || k == 6) return 4.0 * (double)ROWS * (double)COLS;
    return 0;
}

/* Runs Python program py with this run's threads; the number it prints
 * (seconds), or -1. */
static double python_time(const char *py)
{
    char path[] = "/tmp/bench_codegen_XXXXXX.py";
    int fdp = mkstemps(path, 3);
    if (fdp < 0) return -1;
    if (write(fdp, py, strlen(py)) < 0) { close(fdp); return -1; }
    close(fdp);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "OMP_NUM_THREADS=%d OPENBLAS_NUM_THREADS=%d /usr/bin/python3 %s 2>/dev/null",
             br_threads(), br_threads(), path);
    FILE *f = popen(cmd, "r");
    double t = -1;
    if (f) { if (fscanf(f, "%lf", &t) != 1) t = -1; pclose(f); }
    unlink(path);
    return t;
}

/* NumPy time of the same pattern (best of 3), or -1. */
static double numpy_time(int k, int64_t vk, double sp)
{
    char py[4096];
    const char *body;
    switch (k) {
    case 0: body = "X=np.random.rand(R,C);Y=np.random.rand(R,C);Z=np.random.rand(R,C)\nf=lambda: (X*Y*Z).sum()"; break;
    case 1: body = "X=np.random.rand(R,C);Y=np.random.rand(R,C);Z=np.random.rand(R,C)\nf=lambda: ((X*Y).sum(),(X*Z).sum())"; break;
    case 2: body = "X=np.random.rand(R,C);v=np.random.rand(C,1);w=np.random.rand(R,1)\nf=lambda: X.T@(w*(X@v))"; break;
    case 3: body = "X=np.random.rand(R,C);V=np.random.rand(C,K)\nf=lambda: X.T@(X@V)"; break;
    case 5: body = "X=np.random.rand(R,C);w=np.random.rand(C,1)*0.1-0.05;y=np.random.rand(R,1)\n"
                   "f=lambda: X.T@(1/(1+np.exp(-(X@w)))-y)/R"; break;
    case 6: body = "X=np.random.rand(R,C);w=np.random.rand(C,1)*0.1-0.05;y=np.random.rand(R,1)\n"
                   "f=lambda: X.T@(y-np.exp(X@w))"; break;
    case 7: body = "X=np.random.rand(R,C);V=np.random.rand(C,K);P=np.random.rand(R,K)\n"
                   "g=lambda Q: X.T@(Q-P*Q.sum(axis=1,keepdims=True))\nf=lambda: g(P*(X@V))"; break;
    case 8: body = "X=np.random.rand(R,C);Ce=np.random.rand(K,C)\n"
                   "def f():\n D=-2*(X@Ce.T)+(Ce**2).sum(axis=1)\n m=D.min(axis=1,keepdims=True)\n P=(D<=m)\n"
                   " P=P/P.sum(axis=1,keepdims=True)\n return (m.sum(),P.sum(axis=0),P.T@X)"; break;
    default: return -1;   /* no sparse outer product in NumPy */
    }
    snprintf(py, sizeof py,
             "import time, numpy as np\nR=%lld;C=%lld;K=%lld\n%s\nf()\nb=1e30\n"
             "for i in range(3):\n t=time.perf_counter(); f(); b=min(b,time.perf_counter()-t)\nprint(b)\n",
             (long long)ROWS, (long long)COLS, (long long)vk, body);
    (void)sp;
    return python_time(py);
}

/* scikit-learn's Lloyd iteration over the same shape (best of 3: its
 * chunked dense kernel, distances, labels and centroid update in one
 * pass, as KMeans.fit runs it per iteration), or -1 without it. */
static double sklearn_kmeans_time(int64_t vk)
{
    char py[2048];
    snprintf(py, sizeof py,
             "import time, numpy as np\n"
             "from sklearn.cluster._k_means_lloyd import lloyd_iter_chunked_dense as it\n"
             "R=%lld;C=%lld;K=%lld;T=%d\nX=np.random.rand(R,C);c0=np.random.rand(K,C);w=np.ones(R)\n"
             "c1=np.empty_like(c0);wc=np.zeros(K);lab=np.zeros(R,dtype=np.int32);sh=np.zeros(K)\n"
             "f=lambda: it(X,w,c0,c1,wc,lab,sh,T,True)\nf()\nb=1e30\n"
             "for i in range(3):\n t=time.perf_counter(); f(); b=min(b,time.perf_counter()-t)\nprint(b)\n",
             (long long)ROWS, (long long)COLS, (long long)vk, br_threads());
    return python_time(py);
}

/* The peer of t(X) %*% (X %*% V) through BLAS: the two dgemm calls
 * (Q = X %*% V, then t(X) %*% Q) on the same X, best of 3, in this
 * process with braid's thread count for OpenBLAS. */
static double blas_chain_time(int64_t vk)
{
    MB *x = dense(ROWS, COLS, 1), *v = dense(COLS, vk, 2);
    double *q = br_alloc_aligned((size_t)(ROWS * vk) * sizeof(double));
    double *r = br_alloc_aligned((size_t)(COLS * vk) * sizeof(double));
    openblas_set_num_threads(br_threads());
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        int64_t t0 = br_now_ns();
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)ROWS, (int)vk, (int)COLS, 1.0, x->d, (int)COLS,
                    v->d, (int)vk, 0.0, q, (int)vk);
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)COLS, (int)vk, (int)ROWS, 1.0, x->d, (int)COLS, q,
                    (int)vk, 0.0, r, (int)vk);
        best = fmin(best, (double)(br_now_ns() - t0) / 1e9);
    }
    br_free_aligned(q);
    br_free_aligned(r);
    mb_release(x);
    mb_release(v);
    return best;
}

static double report(const char *name, int k, int64_t vk, double sp, bool off_ok)
{
    /* BRAID_BENCH_ONLY=text: only the patterns whose name contains it */
    const char *only = getenv("BRAID_BENCH_ONLY");
    if (only && *only && !strstr(name, only)) return -1;
    Res on = measure(k, vk, sp, true);
    Res off = off_ok ? measure(k, vk, sp, false) : (Res){-1, 0, 0};
    printf("%-30s fused %8.4f s", name, on.t);
    if (off.t > 0) printf("  off %8.4f s  speedup %5.2fx", off.t, off.t / on.t);
    else printf("  off        -                 ");
    double st = 0;
    if (pats[k].stream_bytes > 0) {
        st = stream_read((int)pats[k].stream_bytes, ROWS * COLS);
        printf("  stream %7.4f s  bw %4.0f%%", st, 100 * st / on.t);
    }
    double fl = pattern_flops(k, vk);
    if (fl > 0) {
        /* roof: the read or the flops at the dgemm rate, whichever is longer */
        double rate = dgemm_rate(2000), roof = fmax(st, fl / rate);
        printf("  dgemm %5.1f GF/s  roof %7.4f s  roof%% %4.0f%%", rate / 1e9, roof, 100 * roof / on.t);
#ifdef OV_W
        double fmas = fl / 2 / (double)ROWS / OV_W, ov = overlap_ref(ROWS, COLS, &fmas);
        if (ov > 0) printf("  overlap (%.0f FMA/row) %7.4f s  ov%% %4.0f%%", fmas, ov, 100 * ov / on.t);
#endif
    }
    double np = numpy_time(k, vk, sp);
    if (np > 0) printf("  numpy %7.4f s (%4.1fx)", np, np / on.t);
    /* t(X) %*% (X %*% V): BLAS's two calls against the fused time */
    double bl = k == 3 ? blas_chain_time(vk) : -1;
    if (bl > 0) printf("  blas2 %7.4f s (%4.1fx)", bl, bl / on.t);
    double sk = k == 8 ? sklearn_kmeans_time(vk) : -1;
    if (sk > 0) printf("  sklearn %7.4f s (%4.1fx)", sk, sk / on.t);
    printf("\n%-30s peak RSS fused %6.2f GB (%.2fx inputs)", "", on.rss / 1e9, on.rss / on.inbytes);
    if (off.t > 0) printf("  off %6.2f GB (%.2fx inputs)", off.rss / 1e9, off.rss / off.inbytes);
    printf("\n");
    fflush(stdout);
    return on.t;
}

int main(int argc, char **argv)
{
    if (argc == 10 && !strcmp(argv[1], "--child")) {
        ROWS = atoll(argv[6]);
        COLS = atoll(argv[7]);
        ON = atoll(argv[8]);
        br_set_threads(atoi(argv[9]));
        double ib = 0;
        double t = run_pattern(atoi(argv[2]), atoll(argv[3]), atof(argv[4]), atoi(argv[5]) != 0, 3, &ib);
        /* peak RSS of this process image (VmHWM resets at exec) */
        double hwm = 0;
        FILE *st = fopen("/proc/self/status", "r");
        char line[256];
        while (st && fgets(line, sizeof line, st))
            if (!strncmp(line, "VmHWM:", 6)) hwm = atof(line + 6) * 1024.0;
        if (st) fclose(st);
        printf("%.9g %.9g %.9g\n", t, ib, hwm);
        return 0;
    }
    if (argc > 1) ROWS = atoll(argv[1]);
    if (argc > 2) COLS = atoll(argv[2]);
    if (argc > 3) ON = atoll(argv[3]);
    if (!getenv("OMP_NUM_THREADS")) br_set_threads(2);
    printf("bench_codegen: X %lld x %lld dense (%.2f GB each), %d threads; outer %lld x %lld\n", (long long)ROWS,
           (long long)COLS, (double)ROWS * COLS * 8 / 1e9, br_threads(), (long long)ON, (long long)ON);
    report(pats[0].name, 0, 0, 0, true);
    report(pats[1].name, 1, 0, 0, true);
    report(pats[2].name, 2, 0, 0, true);
    static const int vks[] = {2, 5, 10, 16};
    for (int q = 0; q < 4; q++) {
        char nm[64];
        snprintf(nm, sizeof nm, "%s V:%d", pats[3].name, vks[q]);
        report(nm, 3, vks[q], 0, true);
    }
    report(pats[5].name, 5, 1, 0, true);
    report(pats[6].name, 6, 1, 0, true);
    for (int q = 1; q <= 2; q++) {
        char nm[64];
        snprintf(nm, sizeof nm, "%s V:%d", pats[7].name, 2 * q);
        report(nm, 7, 2 * q, 0, true);
    }
    report("Row KMeans step k:5", 8, 5, 0, true);
    double t3 = 0, t2 = 0;
    for (int e = 3; e >= 2; e--) {
        double sp = pow(10, -e);
        char nm[64];
        snprintf(nm, sizeof nm, "%s sp=1e-%d", pats[4].name, e);
        /* codegen off materializes n x n dense twice: only when it fits */
        long pages = sysconf(_SC_AVPHYS_PAGES), ps = sysconf(_SC_PAGE_SIZE);
        bool fits = (double)ON * ON * 8 * 3 < 0.5 * (double)pages * (double)ps;
        double t = report(nm, 4, 0, sp, fits && e == 3);
        if (e == 3) t3 = t; else t2 = t;
    }
    if (t3 > 0 && t2 > 0) printf("Outer time ratio sp 1e-2 / 1e-3: %.1f (proportional to nnz: 10)\n", t2 / t3);
    return 0;
}
