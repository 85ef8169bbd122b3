/* bench_amulet.c: scaled processing rate (SPR = M*N*K / seconds / 1e9) of
 * where-loops (AMULET, docs/amulet.md) against peers measured in the same
 * run, sides alternated, best of the repetitions:
 *   gcc      the best-order (i, k, j) C loop, gcc -O3 -march=native
 *            (vectorized for this CPU; the benchmark's flags plus
 *            `optimize("O3")`)
 *   gcc-gen  the same loop, gcc -O3 for generic x86-64 (the seed's
 *            baseline: not vectorized beyond SSE2)
 *   dgemm    OpenBLAS dgemm of the same n (plain matrix multiplication;
 *            for Q1-Q3 the ceiling of a loop of n^3 multiply-adds)
 *   numpy    NumPy's best formulation (bench/amulet_numpy.py, a python3
 *            process: A @ B, or loops of broadcast outer products)
 *   lifted   braid running the DML loop over k of rank-one outer products
 *            (`for (k in ...) { P = A[,k] %*% B[k,]; R = R + f(P) }`),
 *            rewritten to the where-loop (lang/where.c)
 *   outer    the same loop kept as a loop (BRAID_AMULET_LIFT=0; K passes
 *            over M x N; timed over the first 64 k, 1 thread)
 *   bound    the instruction bound of the generated kernel, measured:
 *            its inner loop's mix of vector operations (BRAID_AMULET_TRACE:
 *            multiplies, compares, others per vector) replayed in a
 *            register-only loop of 24 independent chains on nt threads at
 *            once (mix_rate; the highest of the row's repetitions: the
 *            least disturbed), scaled by the kernel's inner operations
 *            over all of its operations per iteration. It counts the
 *            machine's real ports: a core with separate multiply and add
 *            pipes (AMD Zen 4/5: 2 + 2) runs a mixed body up to twice as
 *            fast as 2 ports for every operation, the model used before
 *            2026-11-30 (bnd2p: ops per iteration over 2 ports at the
 *            clock of a chain of dependent adds, printed for comparison;
 *            the kernel beat it, 1.39x for Q1). Without AVX-512 the bound
 *            is the 2-port model
 * and the 2-thread scaling (rows of 2 threads): t1/t2, braid's time on 1
 * thread over 2 (the aim: 1.8); bl1/2, dgemm's in the same run (the
 * machine's scaling of FMA-bound code with packing: a ceiling that is the
 * hardware's, not braid's); sc/bl, braid's scaling over dgemm's; cpu21,
 * braid's process CPU time on 2 threads over 1 (best of the repetitions:
 * 1.00 when the split adds no work, spinning at barriers and idling in
 * imbalance included; on a shared machine it also holds contention);
 * bcpu21, dgemm's; wcpu21, the team's work CPU per iteration (packing
 * and tiles, without the waits at barriers: the trace of one more, warm,
 * run per row) on 2 threads over 1: where cpu21 is over 1 and wcpu21 is
 * not, the threads wait (imbalance, barriers); where wcpu21 is too, the
 * tiles themselves run slower on 2 threads (shared caches, memory, the
 * clock); under each 2-thread row, that run's phases: per team thread
 * its wall milliseconds from the fork to its start, in packing, waiting
 * at the barrier after packing, in tiles, and waiting from its last tile
 * to the join, and the milliseconds outside the teams (the serial part
 * of the kernel's run), against the whole script's run (parse, bind,
 * R's allocation: serial too). The aims' alt1/2 is the same 1-thread over
 * 2-thread time from pairs of runs alternated at the end (alternate).
 * A last row per thread count
 * times three results in one where-loop (R += A*B, C += (A*B > 0.25),
 * S min= A + B: one nest, one kernel) against the same three as three
 * where-loops (sep/b), dgemm and the shared kernel's bound. Not part of
 * the tests.
 *
 *   [BENCH_REPS=r] build/bench/bench_amulet [n ...]      (default 1024; r 3)
 *
 * BENCH_ALT_ONLY=1 times braid alone, 1 and 2 threads alternated
 * (alt_only): two builds' 2-thread scaling compared on a loaded machine;
 * matmul's runs alternate with dgemm's at the same thread count (b/blas
 * from wall and process CPU).
 *
 * dgemm runs on OpenBLAS's AVX-512 kernel where the CPU has AVX-512 and
 * the library would run its AVX2 one (blas_core: BENCH_BLAS_CORE=keep
 * keeps the library's or OPENBLAS_CORETYPE's choice).
 *
 * The issue's sizes, one size per run on an idle machine (wall time at
 * r = 3: about 1 minute at 1024, 7 at 2048; at 4096 about 10, estimated
 * from the 2048 run's rates, since the C loops then run on a sub-block:
 * peer_rows, and NumPy on fewer k: numpy_k; the run says so):
 *
 *   BENCH_REPS=3 build/bench/bench_amulet 1024
 *   BENCH_REPS=3 build/bench/bench_amulet 2048
 *   BENCH_REPS=3 build/bench/bench_amulet 4096
 *
 * kc/nc/pack: the parameters the cold run's search chose (the timed runs
 * reuse them from the plan cache).
 * cold_s: the first run of a query (kernel compiled into a fresh plan
 * cache, parameters searched); cc_ms: its kernel's compile time (all of
 * the run's compile time: matmul's row, the first, includes what a fresh
 * cache directory costs once; the kernels include no intrinsics header,
 * so no precompiled one is waited for). The machine may be
 * shared: read the ratios, not the absolute rates. */
#include "tests/t.h"
#include "tests/t_dml.h"
#include "kernels/leaf.h"
#include "amulet_trace.h"
#include "amulet_queries.h"

#include <cblas.h>
#include <immintrin.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/* The bytes of a traced run's phases line kept (traced_run). */
#define PHASES 600

void openblas_set_num_threads(int n);
char *openblas_get_corename(void);

/* OpenBLAS's dgemm on its best kernel for this CPU. OpenBLAS picks its
 * kernel (the "core") when the library loads, or takes it from
 * OPENBLAS_CORETYPE: this machine's environment sets Haswell (its AVX2
 * kernel), and 0.3.21 would fall back to it anyway (it does not know
 * AMD's family 26, Zen 5). That kernel ran 1024^3 at ~22 SPR on 1 thread
 * where the AVX-512 SkylakeX kernel ran ~41 (the instruction bound: ~50),
 * so against it braid's matmul read 1.18-1.39x OpenBLAS. Where the CPU
 * has AVX-512 and the core is an AVX2 one (Haswell, Zen), the benchmark
 * runs itself again with OPENBLAS_CORETYPE=SkylakeX; BENCH_BLAS_CORE=keep
 * keeps the core as it is (the peer of the results before 2026-12-02).
 * The header line and the alternated rows name the core. */
static void blas_core(char **argv)
{
    const char *keep = getenv("BENCH_BLAS_CORE");
    if (keep && !strcmp(keep, "keep")) return;
    const char *core = openblas_get_corename();
    __builtin_cpu_init();
    if (!core || !__builtin_cpu_supports("avx512f") ||
        (strcasecmp(core, "haswell") && strcasecmp(core, "zen")))
        return;
    const char *was = getenv("OPENBLAS_CORETYPE");
    setenv("BENCH_BLAS_WAS", was ? was : core, 1);
    setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
    execv("/proc/self/exe", argv);
    perror("execv");   /* then the core as it is */
    if (was) setenv("OPENBLAS_CORETYPE", was, 1);
    else unsetenv("OPENBLAS_CORETYPE");
}

/* braid's DML alternative: a loop over k of rank-one outer products with
 * elementwise operators (K passes over an M x N matrix) */
static const char *qouter[NQ] = {
    "R = R + P",
    "R = R + P - (P > thj) * P * t(dis)",
    "R = R + P + (P > thi) * (P - thi)",
    "R = R + (P > 0.25)",
};

/* The seed's baseline: the loop in its best order (i, k, j: unit stride
 * over j), parallel over i when nt > 1, over the first m rows of i (the
 * rest of the n x n task scaled from them: peer_rows). One text, compiled for this CPU
 * (peer) and for generic x86-64 (peer_generic): a macro, since a shared
 * function could not be inlined across the two targets. */
#define PEER_LOOP                                                                                              \
    _Pragma("omp parallel for num_threads(nt) schedule(static)")                                             \
    for (int64_t i = 0; i < m; i++)                                                                            \
        for (int64_t k = 0; k < n; k++) {                                                                      \
            double a = A[i * n + k];                                                                           \
            const double *b = B + k * n;                                                                       \
            double *r = R + i * n;                                                                             \
            switch (q) {                                                                                       \
            case QMM: for (int64_t j = 0; j < n; j++) r[j] += a * b[j]; break;                                 \
            case Q1:                                                                                           \
                for (int64_t j = 0; j < n; j++) { double p = a * b[j]; r[j] += p - (p > thj[j]) * p * dis[j]; } \
                break;                                                                                         \
            case Q2:                                                                                           \
                for (int64_t j = 0; j < n; j++) { double p = a * b[j]; r[j] += p + (p > thi[i]) * (p - thi[i]); } \
                break;                                                                                         \
            default: for (int64_t j = 0; j < n; j++) r[j] += a * b[j] > 0.25; break;                           \
            }                                                                                                  \
        }

__attribute__((optimize("O3"))) static void peer(int q, int64_t m, int64_t n, const double *A, const double *B,
                                                 const double *thi, const double *thj, const double *dis, double *R,
                                                 int nt)
{
    PEER_LOOP
}

/* The same loop for generic x86-64 (no AVX): gcc -O3 as the seed ran it. */
__attribute__((optimize("O3"), target("arch=x86-64"))) static void peer_generic(
    int q, int64_t m, int64_t n, const double *A, const double *B, const double *thi, const double *thj,
    const double *dis, double *R, int nt)
{
    PEER_LOOP
}

static double now(void) { return omp_get_wtime(); }

/* Rows of i the C loops run at size n: all of them up to n = 2048; above,
 * the first 2^31 / n^2 (128 at n = 4096; at least 16), the rate per
 * iteration scaled to the whole task: the (i, k, j) loop streams all of B
 * and the same row of R for every i, so each row's iterations cost the
 * same (the generic Q1 loop, 0.18 SPR at n = 2048, would take over six
 * minutes per repetition at 4096). BENCH_PEER_ROWS=m sets it (a check of
 * the scaling at a small n against the full loop). */
static int64_t peer_rows(int64_t n)
{
    const char *env = getenv("BENCH_PEER_ROWS");
    int64_t m = env ? atoll(env) : n <= 2048 ? n : BR_MAX((int64_t)16, ((int64_t)1 << 31) / (n * n));
    return BR_MAX((int64_t)1, BR_MIN(m, n));
}

/* Values of k NumPy's Q1-Q3 loops are timed over (their rate per
 * iteration does not depend on K): 64 up to n = 2048, 16 above (at 0.07
 * SPR, 64 of them at n = 4096 take 15 s per formulation). */
static int64_t numpy_k(int64_t n) { return n <= 2048 ? 64 : 16; }

/* The process's CPU time, all threads (the 2-thread split's cost in work:
 * a team that waits spins in CPU time too, so 2-thread CPU over 1-thread
 * CPU is the work the split adds, barriers and imbalance included). */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The clock in GHz: a chain of dependent adds (one cycle each). */
static double clock_ghz(void)
{
    uint64_t x = 0;
    const int64_t it = 50000000;
    double t0 = now();
    for (int64_t i = 0; i < it; i++) __asm__ volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0" : "+r"(x));
    return 4.0 * (double)it / (now() - t0) / 1e9;
}

/* Seconds of OpenBLAS dgemm n x n x n into R; *cpu: its process CPU
 * seconds (NULL: not wanted). */
static double time_dgemm(int64_t n, const double *A, const double *B, double *R, double *cpu)
{
    double c0 = cpu_now(), t0 = now();
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0, A, (int)n, B, (int)n, 0.0, R,
                (int)n);
    double t = now() - t0;
    if (cpu) *cpu = cpu_now() - c0;
    return t;
}

static double traced_run(const char *src, CgOptions *cg, const char **names, MB **ins, TRun *r, int mix[3],
                         char *par, double *wcpu, char *phases);

/* The kernel's instruction bound in SPR from the mix's measured rate
 * (vectors per ns, all threads; the kernel's other operations per
 * iteration, hoisted per i or j, taken at the same rate), else the
 * 2-port model at ghz. */
static double bound_spr(double mrate, const int mix[3], double per, double ghz, int nt)
{
    if (mrate > 0 && per > 0) return mrate * (mix[0] + mix[1] + mix[2]) / per;
    return 2.0 * ghz / per * nt;
}

/* The kernel's inner mix replayed (bound): mix[0] multiplies, mix[1]
 * compares (each feeding a masked add, one of the others), mix[2]
 * others, per vector; 24 independent chains per thread, nt threads at
 * once. Returns the mix's vectors per nanosecond over all threads (0
 * without AVX-512). */
__attribute__((target("avx512f"))) static double mix_rate(const int mix[3], int nt)
{
    if (k_isa() != K_ISA_AVX512 || mix[0] + mix[1] + mix[2] == 0) return 0;
    const int64_t it = 400000;
    double t0 = now(), sink = 0;
#pragma omp parallel num_threads(nt) reduction(+ : sink)
    {
        __m512d x[24];
        for (int c = 0; c < 24; c++) x[c] = _mm512_set1_pd(1.0 + c * 1e-3);
        const __m512d m = _mm512_set1_pd(0.9999999), a = _mm512_set1_pd(1e-9), t = _mm512_set1_pd(0.5);
        int nm = mix[0], nc = mix[1], na = mix[2] > mix[1] ? mix[2] - mix[1] : 0;
        for (int64_t r = 0; r < it; r++) {
            for (int q = 0; q < nm; q++)
#pragma GCC unroll 24
                for (int c = 0; c < 24; c++) x[c] = _mm512_mul_pd(x[c], m);
            for (int q = 0; q < nc; q++)
#pragma GCC unroll 24
                for (int c = 0; c < 24; c++) x[c] = _mm512_mask_add_pd(x[c], _mm512_cmp_pd_mask(x[c], t, _CMP_GT_OQ), x[c], a);
            for (int q = 0; q < na; q++)
#pragma GCC unroll 24
                for (int c = 0; c < 24; c++) x[c] = _mm512_add_pd(x[c], a);
        }
        for (int c = 0; c < 24; c++) sink += _mm512_reduce_add_pd(x[c]);
    }
    double dt = now() - t0;
    if (sink == 42.4242) printf(" ");   /* keeps the chains live */
    return (double)nt * (double)it * 24 / dt / 1e9;
}

/* Three results in one where-loop (one nest, one kernel) against the
 * same results as three where-loops, dgemm and the shared kernel's
 * instruction bound, alternated, best of 3 (the first run of the shared
 * loop traced and not timed). */
static void multi_row(CgOptions *cg, int64_t n, int nt, const char **names, MB **ins, double *R)
{
    const char *init = "R = matrix(0, nrow(A), ncol(B)); C = R; S = matrix(1e300, nrow(A), ncol(B))\n";
    const char *shared = "where (i in 1:nrow(A), j in 1:ncol(B), k in 1:ncol(A)) {\n"
                         "  R[i,j] += A[i,k]*B[k,j]; C[i,j] += (A[i,k]*B[k,j] > 0.25); S[i,j] min= A[i,k] + B[k,j] }\n";
    const char *sep = "where (i in 1:nrow(A), j in 1:ncol(B), k in 1:ncol(A)) { R[i,j] += A[i,k]*B[k,j] }\n"
                      "where (i in 1:nrow(A), j in 1:ncol(B), k in 1:ncol(A)) { C[i,j] += (A[i,k]*B[k,j] > 0.25) }\n"
                      "where (i in 1:nrow(A), j in 1:ncol(B), k in 1:ncol(A)) { S[i,j] min= A[i,k] + B[k,j] }\n";
    char s1[900], s2[900];
    snprintf(s1, sizeof s1, "%s%s", init, shared);
    snprintf(s2, sizeof s2, "%s%s", init, sep);
    double tb = INFINITY, ts = INFINITY, tg = INFINITY, per = NAN, rghz = 0, mrate = 0;
    int mix[3] = {0, 0, 0};
    const char *on[] = {"R", "C", "S"};   /* all live: no loop is dead code */
    for (int rep = 0; rep < 4; rep++) {
        TRun r;
        rghz = fmax(rghz, clock_ghz());
        if (rep > 0) mrate = fmax(mrate, mix_rate(mix, nt));
        double t0 = now();
        char par[24];
        if (rep == 0) per = traced_run(s1, cg, names, ins, &r, mix, par, NULL, NULL);
        else t_run_dml(s1, cg, 5, names, ins, 3, on, &r);
        if (rep > 0) tb = fmin(tb, now() - t0);
        if (r.rc) { fprintf(stderr, "%s\n", r.err); exit(1); }
        t_run_free(&r);
        t0 = now();
        t_run_dml(s2, cg, 5, names, ins, 3, on, &r);
        if (rep > 0) ts = fmin(ts, now() - t0);
        if (r.rc) { fprintf(stderr, "%s\n", r.err); exit(1); }
        t_run_free(&r);
        tg = fmin(tg, time_dgemm(n, ins[0]->d, ins[1]->d, R, NULL));
    }
    double w = (double)n * n * n / 1e9, bound = bound_spr(mrate, mix, per, rghz, nt);
    printf("%-11s %5lld %1d %7.2f (3 results)  separate %7.2f  dgemm %7.2f  bound %7.2f | sep/b %5.2f  b/blas %5.2f  "
           "b/bnd %5.2f  (%.3f vector ops per iteration; inner mix %d/%d/%d; b/bnd2p %.2f)\n",
           "3 results", (long long)n, nt, w / tb, w / ts, w / tg, bound, ts / tb, tg / tb, w / tb / bound, per, mix[0],
           mix[1], mix[2], w / tb / (2.0 * rghz / per * nt));
    fflush(stdout);
}

/* NumPy's SPR for query q (bench/amulet_numpy.py), NAN if it fails. */
static double numpy_spr(int q, int64_t n, int nt)
{
    static const char *qn[NQ] = {"matmul", "Q1", "Q2", "Q3"};
    char cmd[600];
    snprintf(cmd, sizeof cmd,
             "OPENBLAS_NUM_THREADS=%d OMP_NUM_THREADS=%d /usr/bin/python3 %s/bench/amulet_numpy.py %s %lld %lld "
             "2>/dev/null",
             nt, nt, BRAID_SOURCE_DIR, qn[q], (long long)n, (long long)numpy_k(n));
    FILE *f = popen(cmd, "r");
    double v = NAN;
    if (f && fscanf(f, "%lf", &v) != 1) v = NAN;
    if (f) pclose(f);
    return v;
}

/* Runs src once with the kernel trace on; returns the kernel's vector
 * operations per iteration (NAN when no kernel ran). */
static double traced_run(const char *src, CgOptions *cg, const char **names, MB **ins, TRun *r, int mix[3],
                         char *par, double *wcpu, char *phases)
{
    FILE *f = amulet_traced(src, cg, names, ins, 5, r);
    double per = NAN;
    char line[1000];
    mix[0] = mix[1] = mix[2] = 0;
    snprintf(par, 24, "-");
    if (wcpu) *wcpu = NAN;
    while (f && fgets(line, sizeof line, f)) {
        /* the searched parameters (the first kernel's), kc/nc/pack */
        long long kc, nc;
        int pk;
        const char *q = strstr(line, "kernel, kc ");
        if (q && par[0] == '-' && sscanf(q, "kernel, kc %lld nc %lld pack %d", &kc, &nc, &pk) == 3)
            snprintf(par, 24, "%lld/%lld/%d", kc, nc, pk);
        /* a run with remembered parameters: its team's work CPU */
        q = strstr(line, "work CPU ");
        if (q && wcpu) *wcpu = atof(q + strlen("work CPU "));
        /* and where its threads' wall time went (PHASES bytes) */
        q = strstr(line, "amulet: phases of ");
        if (q && phases) {
            snprintf(phases, PHASES, "%s", q + strlen("amulet: "));
            phases[strcspn(phases, "\n")] = 0;
        }
        const char *p = strstr(line, "temporaries, ");
        if (p) per = atof(p + strlen("temporaries, "));
        p = strstr(line, "per vector: ");
        if (p && sscanf(p, "per vector: %d multiply, %d compare, %d other", &mix[0], &mix[1], &mix[2]) != 3)
            mix[0] = mix[1] = mix[2] = 0;
    }
    if (f) fclose(f);
    return per;
}

/* Each query's where-loop timed on 1 and 2 threads alternated, `reps`
 * pairs, each run with its parameters remembered by the rows before (the
 * plan cache keeps them per thread count); t12[q]: the best 1-thread
 * time over the best 2-thread one. The rows' t1/t2 compares runs minutes
 * apart (a drift of the machine between the 1- and 2-thread halves
 * counts in it); these pairs are a second apart. No dgemm runs between
 * them: OpenBLAS's workers, which spin after a call, first get a
 * moment to sleep. */
static void alternate(CgOptions *cg, int64_t n, int reps, const char **names, MB **ins, double *t12)
{
    const char *on[] = {"R"};
    usleep(200000);
    for (int q = 0; q < NQ; q++) {
        char src[600];
        snprintf(src, sizeof src,
                 "R = matrix(0, rows=nrow(A), cols=ncol(B))\n"
                 "where (i in 1:nrow(A), j in 1:ncol(B), k in 1:ncol(A)) { %s }\n", qbody[q]);
        double t[2] = {INFINITY, INFINITY};
        for (int rep = 0; rep < reps; rep++)
            for (int nt = 1; nt <= 2; nt++) {
                br_set_threads(nt);
                TRun r;
                double t0 = now();
                t_run_dml(src, cg, 5, names, ins, 1, on, &r);
                t[nt - 1] = fmin(t[nt - 1], now() - t0);
                if (r.rc) { fprintf(stderr, "%s\n", r.err); exit(1); }
                t_run_free(&r);
            }
        t12[q] = t[0] / t[1];
    }
}

/* BENCH_ALT_ONLY=1: braid's where-loops alone (no peers, bound or
 * table), for A/B comparisons of braid builds on a loaded machine: each
 * query compiled and searched once per thread count (untimed), then
 * `reps` rounds of a 1-thread and a 2-thread run, alternated; per query
 * the best wall and process CPU of each thread count, t1/t2 (wall) and
 * cpu21 (2-thread CPU over 1-thread). */
static void alt_only(CgOptions *cg, int64_t n, int reps, const char **names, MB **ins, double *R)
{
    const char *on[] = {"R"};
    printf("alternated only (BENCH_ALT_ONLY), n %lld, %d rounds; ms best wall and CPU per thread count; matmul "
           "also against dgemm (OpenBLAS %s kernel), alternated with braid's runs\n",
           (long long)n, reps, openblas_get_corename());
    for (int q = 0; q < NQ; q++) {
        char src[600];
        snprintf(src, sizeof src,
                 "R = matrix(0, rows=nrow(A), cols=ncol(B))\n"
                 "where (i in 1:nrow(A), j in 1:ncol(B), k in 1:ncol(A)) { %s }\n", qbody[q]);
        double t[2] = {INFINITY, INFINITY}, c[2] = {INFINITY, INFINITY};
        double bt[2] = {INFINITY, INFINITY}, bc[2] = {INFINITY, INFINITY};   /* dgemm's (matmul) */
        for (int rep = -1; rep < reps; rep++)
            for (int nt = 1; nt <= 2; nt++) {
                br_set_threads(nt);
                TRun r;
                double t0 = now(), c0 = cpu_now();
                t_run_dml(src, cg, 5, names, ins, 1, on, &r);
                if (rep >= 0) t[nt - 1] = fmin(t[nt - 1], now() - t0), c[nt - 1] = fmin(c[nt - 1], cpu_now() - c0);
                if (r.rc) { fprintf(stderr, "%s\n", r.err); exit(1); }
                t_run_free(&r);
                if (q == QMM && rep >= 0) {
                    openblas_set_num_threads(nt);
                    double cb;
                    bt[nt - 1] = fmin(bt[nt - 1], time_dgemm(n, ins[0]->d, ins[1]->d, R, &cb));
                    bc[nt - 1] = fmin(bc[nt - 1], cb);
                }
            }
        printf("%-11s wall %.1f / %.1f ms, CPU %.1f / %.1f ms: t1/t2 %.3f cpu21 %.3f\n", qname[q], t[0] * 1e3,
               t[1] * 1e3, c[0] * 1e3, c[1] * 1e3, t[0] / t[1], c[1] / c[0]);
        if (q == QMM)
            printf("  dgemm      wall %.1f / %.1f ms, CPU %.1f / %.1f ms: b/blas (dgemm's time over braid's, 1 / 2 "
                   "threads) wall %.3f / %.3f, CPU %.3f / %.3f\n", bt[0] * 1e3, bt[1] * 1e3, bc[0] * 1e3,
                   bc[1] * 1e3, bt[0] / t[0], bt[1] / t[1], bc[0] / c[0], bc[1] / c[1]);
        fflush(stdout);
    }
}

/* The issue's aims at size n from this run's rows (bl1/2: dgemm's own
 * scaling, this machine's ceiling for the 2-thread aim). */
static void aims(int64_t n, double ablas[2][NQ], double abnd[2][NQ], double abnd2p[2][NQ], double acc[2][NQ],
                 const double *t12, const double *bl12, const double *mix12, const double *cpu21,
                 const double *wcpu21, const double *alt12)
{
    printf("aims at n = %lld (this run):\n", (long long)n);
    printf("  matmul >= 0.90 of dgemm: b/blas %.2f (1 thread), %.2f (2)\n", ablas[0][QMM], ablas[1][QMM]);
    double lo[2] = {INFINITY, INFINITY};
    for (int x = 0; x < 2; x++)
        for (int q = Q1; q < NQ; q++) lo[x] = fmin(lo[x], abnd[x][q]);
    printf("  Q1-Q3 >= 0.70 of their bound: lowest b/bnd %.2f (1 thread), %.2f (2)\n", lo[0], lo[1]);
    printf("    per query b/bnd (1 thread; 2):");
    for (int q = Q1; q < NQ; q++) printf(" Q%d %.2f; %.2f", q, abnd[0][q], abnd[1][q]);
    printf("; the 2-port model's b/bnd2p:");
    for (int q = Q1; q < NQ; q++) printf(" Q%d %.2f; %.2f", q, abnd2p[0][q], abnd2p[1][q]);
    printf("\n");
    printf("  2 threads >= 1.8x one: t1/t2");
    for (int q = 0; q < NQ; q++) printf(" %s %.2f", q == QMM ? "matmul" : q == Q1 ? "Q1" : q == Q2 ? "Q2" : "Q3", t12[q]);
    printf("; alternated (alt1/2)");
    for (int q = 0; q < NQ; q++) printf(" %.2f", alt12[q]);
    printf("; dgemm's own (bl1/2, the same rows)");
    for (int q = 0; q < NQ; q++) printf(" %.2f", bl12[q]);
    printf("; each kernel's op mix replayed (mix1/2)");
    for (int q = 0; q < NQ; q++) printf(" %.2f", mix12[q]);
    printf("\n    2-thread CPU over 1-thread, process (cpu21: barrier waits included) and the team's work (wcpu21: "
           "packing and tiles only):");
    for (int q = 0; q < NQ; q++) printf(" %.2f/%.2f", cpu21[q], wcpu21[q]);
    printf("\n");
    double cold = 0, warm = 0;
    for (int q = 0; q < NQ; q++) cold = fmax(cold, acc[0][q]), warm = fmax(warm, acc[1][q]);
    printf("  compile < 300 ms per kernel cold, none warm: largest cc_ms %.0f cold, %.0f warm\n", cold, warm);
    printf("  adaptive parameters within 5%% of a sweep: bench_amulet_sweep n 2 (ad/bst at 1 and 2 threads)\n");
}

int main(int argc, char **argv)
{
    blas_core(argv);
    int64_t sizes[8] = {1024};
    int ns = 1;
    if (argc > 1) {
        ns = 0;
        for (int i = 1; i < argc && ns < 8; i++) sizes[ns++] = atoll(argv[i]);
    }
    /* a fresh plan cache: the first run of each query compiles its kernel
     * and searches its parameters (cold_s, cc_ms), the others reuse them */
    char dir[] = "/tmp/braid-amulet-bench-XXXXXX";
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    CgOptions cg = t_pols[2].o;
    cg.cachedir = dir;
    /* BENCH_REPS=r: r runs per query and thread count, the first cold
     * (traced, not timed), the others alternated with the peers, best of
     * them (default 3) */
    int reps = getenv("BENCH_REPS") ? atoi(getenv("BENCH_REPS")) : 3;
    if (reps < 2) reps = 2;
    bool alt_only_run = getenv("BENCH_ALT_ONLY") != NULL;
    double ghz = alt_only_run ? 0 : clock_ghz();
    if (!alt_only_run) {
        printf("AMULET benchmark (machine possibly shared; SPR = n^3 / s / 1e9; ratios from the same run)\n");
        printf("clock %.2f GHz (dependent adds), ISA %s, bound = the kernel's inner op mix (mix: "
               "multiply/compare/other per vector) replayed register-only on the row's threads; bnd2p = 2 vector "
               "ports x clock / ops per iteration x threads\n",
               ghz, k_isa_name(k_isa()));
        printf("dgemm: OpenBLAS %s kernel (blas_core; it was %s)\n", openblas_get_corename(),
               getenv("BENCH_BLAS_WAS") ? getenv("BENCH_BLAS_WAS") : "the same");
        printf("%-11s %5s %1s %7s %7s %7s %7s %7s %7s %7s %7s | %6s %6s %6s %6s %6s %6s %6s %5s %6s %5s | %5s %5s %5s "
               "%6s | %5s %6s  %s  %-12s %6s\n",
               "query", "n", "t", "braid", "lifted", "gcc", "gcc-gen", "dgemm", "numpy", "outer", "bound", "b/gcc",
               "b/gen", "b/blas", "b/np", "b/outr", "b/bnd", "lift/b", "t1/t2", "cold_s", "cc_ms", "bl1/2", "sc/bl",
               "cpu21", "bcpu21", "b/bnd2p", "mix1/2", "mix", "kc/nc/pack", "wcpu21");
    }
    for (int si = 0; si < ns; si++) {
        int64_t n = sizes[si];
        t_seed(7);
        MB *A = t_gen(n, n, 1, -1, 1, false), *B = t_gen(n, n, 1, -1, 1, false);
        MB *thi = t_gen(n, 1, 1, -0.5, 0.5, false), *thj = t_gen(1, n, 1, -0.5, 0.5, false);
        MB *dis = t_gen(n, 1, 1, 0, 1, false);
        if (alt_only_run) {
            const char *an[] = {"A", "B", "thi", "thj", "dis"};
            MB *ai[] = {A, B, thi, thj, dis};
            double *R = malloc((size_t)(n * n) * sizeof *R);   /* dgemm's, faulted in once */
            if (!R) return 1;
            memset(R, 0, (size_t)(n * n) * sizeof *R);
            alt_only(&cg, n, reps, an, ai, R);
            free(R);
            mb_release(A); mb_release(B); mb_release(thi); mb_release(thj); mb_release(dis);
            continue;
        }
        double *R = malloc((size_t)(n * n) * sizeof *R);
        int64_t pm = peer_rows(n);
        if (pm < n)
            printf("n = %lld: gcc and gcc-gen timed over the first %lld of %lld rows of i, scaled to n^3 (the same "
                   "work per row); numpy over the first %lld values of k\n",
                   (long long)n, (long long)pm, (long long)n, (long long)numpy_k(n));
        const char *names[] = {"A", "B", "thi", "thj", "dis"}, *on[] = {"R"};
        MB *ins[] = {A, B, thi, thj, dis};
        /* 1-thread times of braid and dgemm (wall, process CPU) */
        double t1[NQ] = {0}, g1[NQ] = {0}, c1[NQ] = {0}, gc1[NQ] = {0};
        /* per thread count (1, 2) and query: b/blas, b/bnd, cc_ms of
         * the first run (at 2 threads the kernel is in the plan cache:
         * the warm compile), for the aims' lines */
        double ablas[2][NQ], abnd[2][NQ], acc[2][NQ], at12[NQ] = {0}, abl12[NQ] = {0};
        /* the 2-port model's b/bnd, each bound at 1 thread, the mix's own
         * 2-thread scaling (its bound at 2 threads over 1) */
        double abnd2p[2][NQ], bnd1[NQ] = {0}, amix12[NQ] = {0};
        /* the team's work CPU per iteration at 1 thread, and per query
         * at 2 threads over 1: work CPU (wcpu21) and process CPU (cpu21) */
        double wc1[NQ] = {0}, awc21[NQ] = {0}, acpu21[NQ] = {0};
        for (int nt = 1; nt <= 2; nt++) {
            br_set_threads(nt);
            openblas_set_num_threads(nt);
            for (int q = 0; q < NQ; q++) {
                char src[600], lsrc[600];
                snprintf(src, sizeof src,
                         "R = matrix(0, rows=nrow(A), cols=ncol(B))\n"
                         "where (i in 1:nrow(A), j in 1:ncol(B), k in 1:ncol(A)) { %s }\n", qbody[q]);
                snprintf(lsrc, sizeof lsrc,
                         "R = matrix(0, rows=nrow(A), cols=ncol(B))\n"
                         "for (k in 1:KS) { P = A[,k] %%*%% B[k,]; %s }\n", qouter[q]);
                char full[700];
                snprintf(full, sizeof full, "KS = ncol(A)\n%s", lsrc);
                double tb = INFINITY, tl = INFINITY, tp = INFINITY, tq = INFINITY, tg = INFINITY, cold = 0,
                       ccms = 0, per = NAN, rghz = 0, cb = INFINITY, cgm = INFINITY, mrate = 0;
                int mix[3] = {0, 0, 0};
                char par[24] = "-";   /* the searched kc/nc/pack */
                for (int rep = 0; rep < reps; rep++) {
                    rghz = fmax(rghz, clock_ghz());
                    if (rep > 0) mrate = fmax(mrate, mix_rate(mix, nt));
                    TRun r;
                    double c0 = cpu_now(), t0 = now();
                    if (rep == 0) per = traced_run(src, &cg, names, ins, &r, mix, par, NULL, NULL);
                    else t_run_dml(src, &cg, 5, names, ins, 1, on, &r);
                    double t = now() - t0;
                    if (rep > 0) cb = fmin(cb, cpu_now() - c0);
                    if (r.rc) { fprintf(stderr, "%s\n", r.err); return 1; }
                    if (rep == 0) {
                        cold = t;
                        ccms = (double)r.st.compile_ns / 1e6;
                    }
                    else tb = fmin(tb, t);
                    t_run_free(&r);
                    t0 = now();
                    t_run_dml(full, &cg, 5, names, ins, 1, on, &r);
                    if (r.rc) { fprintf(stderr, "%s\n", r.err); return 1; }
                    if (rep > 0) tl = fmin(tl, now() - t0);
                    t_run_free(&r);
                    memset(R, 0, (size_t)(n * n) * sizeof *R);
                    t0 = now();
                    peer(q, pm, n, A->d, B->d, thi->d, thj->d, dis->d, R, nt);
                    tp = fmin(tp, (now() - t0) * n / pm);
                    memset(R, 0, (size_t)(n * n) * sizeof *R);
                    t0 = now();
                    peer_generic(q, pm, n, A->d, B->d, thi->d, thj->d, dis->d, R, nt);
                    tq = fmin(tq, (now() - t0) * n / pm);
                    double cg1;
                    tg = fmin(tg, time_dgemm(n, A->d, B->d, R, &cg1));
                    cgm = fmin(cgm, cg1);
                }
                double w = (double)n * n * n / 1e9, so = NAN;
                double snp = numpy_spr(q, n, nt);
                /* one more run, traced, warm: the team's work CPU per
                 * iteration (packing and tiles, without the waits at
                 * barriers), for wcpu21 */
                double wcpu = NAN;
                char phases[PHASES] = "";
                double trun = NAN;   /* that run's wall time, the script's all */
                {
                    TRun r;
                    int mx[3];
                    char pw[24];
                    double t0 = now();
                    traced_run(src, &cg, names, ins, &r, mx, pw, &wcpu, phases);
                    trun = now() - t0;
                    if (r.rc) { fprintf(stderr, "%s\n", r.err); return 1; }
                    t_run_free(&r);
                }
                if (nt == 1) {   /* the loop kept: the first 64 k, 1 thread */
                    int64_t ks = BR_MIN(64, n);
                    snprintf(full, sizeof full, "KS = %lld\n%s", (long long)ks, lsrc);
                    setenv("BRAID_AMULET_LIFT", "0", 1);
                    TRun r;
                    double t0 = now();
                    t_run_dml(full, &cg, 5, names, ins, 1, on, &r);
                    so = (double)n * n * ks / (now() - t0) / 1e9;
                    unsetenv("BRAID_AMULET_LIFT");
                    if (r.rc) { fprintf(stderr, "%s\n", r.err); return 1; }
                    t_run_free(&r);
                }
                double sb = w / tb, bound = bound_spr(mrate, mix, per, rghz, nt), b2p = 2.0 * rghz / per * nt;
                if (nt == 1) t1[q] = tb, g1[q] = tg, c1[q] = cb, gc1[q] = cgm, bnd1[q] = bound, wc1[q] = wcpu;
                if (nt == 2) awc21[q] = wcpu / wc1[q], acpu21[q] = cb / c1[q];
                abnd2p[nt - 1][q] = sb / b2p;
                if (nt == 2) amix12[q] = bound / bnd1[q];
                ablas[nt - 1][q] = tg / tb;
                abnd[nt - 1][q] = sb / bound;
                acc[nt - 1][q] = ccms;
                if (nt == 2) at12[q] = t1[q] / tb, abl12[q] = g1[q] / tg;
                bool two = nt == 2;
                printf("%-11s %5lld %1d %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f %7.3f %7.2f | %6.2f %6.2f %6.2f %6.2f %6.0f "
                       "%6.2f %6.2f %5.2f %6.2f %5.0f | %5.2f %5.2f %5.2f %6.2f | %5.2f %6.2f  %d/%d/%d  %-12s %6.2f\n",
                       qname[q], (long long)n, nt, sb, w / tl, w / tp, w / tq, w / tg, snp, so, bound,
                       tp / tb, tq / tb, tg / tb, sb / snp, sb / so, sb / bound, tb / tl,
                       two ? t1[q] / tb : NAN, cold, ccms, two ? g1[q] / tg : NAN,
                       two ? (t1[q] / tb) / (g1[q] / tg) : NAN, two ? cb / c1[q] : NAN, two ? cgm / gc1[q] : NAN,
                       sb / b2p, two ? bound / bnd1[q] : NAN, mix[0], mix[1], mix[2], par, two ? wcpu / wc1[q] : NAN);
                if (two && phases[0]) printf("    the run of %.3g ms: %s\n", trun * 1e3, phases);
                fflush(stdout);
            }
            multi_row(&cg, n, nt, names, ins, R);
        }
        double alt12[NQ];
        alternate(&cg, n, reps, names, ins, alt12);
        aims(n, ablas, abnd, abnd2p, acc, at12, abl12, amix12, acpu21, awc21, alt12);
        free(R);
        mb_release(A); mb_release(B); mb_release(thi); mb_release(thj); mb_release(dis);
    }
    /* the fresh plan cache of this run is not kept */
    char cmd[100];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "bench_amulet: could not remove %s\n", dir);
    return 0;
}
