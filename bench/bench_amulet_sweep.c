/* bench_amulet_sweep.c: two AMULET measurements that need a peer in the
 * same run (docs/amulet.md, "Benchmark"):
 *
 * 1. Adaptive parameters against an exhaustive sweep (seed 4.4-4.6: the
 *    seed's search came within 7%). Per query (plain matmul, the seed's
 *    Q1 with thres[j] and Q3 with a constant threshold), the parameters the run-time
 *    search picks in a fresh plan cache, then every (kc, nc, pack) of a
 *    grid pinned with BRAID_AMULET_PARAMS, all timed round-robin (best of
 *    5; with one thread in process CPU time, so that a run descheduled
 *    on a shared machine is not charged for the wait): each of three
 *    searches' choices / best of the grid (the grid holds the adaptive choice
 *    too, so a ratio below 1 is the noise of the machine; BENCH_REPS=r:
 *    best of r instead of 5). The round-robin starts each rep at another
 *    point and runs every other rep backwards, so that no configuration
 *    is always timed first (on the quiet Xeon of 2026-12-01, the search's
 *    pick 512 384 0, timed first in every rep, measured 1.26x its own
 *    twin in the grid); "twin" is the grid's time of the pick's
 *    configuration, tw/bst its ratio to the grid's best.
 *    BENCH_QUERY=name: only the queries whose name starts with it.
 *    With N >= 2 threads the sweep runs at 1 thread, then at N (ad/bst
 *    of both in one run; the search's parameters are kept per thread
 *    count). At N, then per query the scaling of the grid's
 *    best and of the first search's parameters (1 thread over N, wall
 *    clock, alternated) against OpenBLAS dgemm's in the same run.
 * 2. The sparse kernel (a sparse A read by its CSR rows, A[i,k] and the
 *    transposed A[k,i]) against braid's sparse matrix product (A %*% B,
 *    t(A) %*% B) and the vectorized evaluator (BRAID_AMULET=eval), sides
 *    alternated; cc_ms: the first run's compile time (the sparse
 *    kernel's own source: 0 where an earlier row compiled it).
 *
 *   build/bench/bench_amulet_sweep [n [threads]]   (default 768, 1)
 *
 * The machine may be shared: read the ratios of one run, not the rates. */
#include "tests/t.h"
#include "tests/t_dml.h"
#include "amulet_trace.h"
#include "amulet_queries.h"

#include <cblas.h>

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void openblas_set_num_threads(int n);

static double now(void) { return omp_get_wtime(); }

/* The sweep's clock: with one thread the process's CPU time (a run
 * descheduled on the shared machine is not charged for the wait, so the
 * grid's points compare), else the wall clock. */
static double sweep_now(void)
{
    if (br_threads() > 1) return now();
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Runs src (inputs names/ins, output R) once; seconds (sweep_now), or -1
 * on error; *cc_ms (if given): the run's compile time. */
static double timed_cc(const char *src, CgOptions *cg, const char **names, MB **ins, int nin, double *cc_ms)
{
    const char *on[] = {"R"};
    TRun r;
    double t0 = sweep_now();
    t_run_dml(src, cg, nin, names, ins, 1, on, &r);
    double t = sweep_now() - t0;
    if (r.rc) { fprintf(stderr, "%s\n", r.err); t = -1; }
    if (cc_ms) *cc_ms = (double)r.st.compile_ns / 1e6;
    t_run_free(&r);
    return t;
}

static double timed(const char *src, CgOptions *cg, const char **names, MB **ins, int nin)
{
    return timed_cc(src, cg, names, ins, nin, NULL);
}

/* The parameters the search chose (its trace line), from a run with the
 * trace on into a file. */
static bool searched(const char *src, CgOptions *cg, const char **names, MB **ins, int nin, long long *kc,
                     long long *nc, int *pack, int *nr)
{
    setenv("BRAID_AMULET", "search", 1);
    TRun r;
    FILE *f = amulet_traced(src, cg, names, ins, nin, &r);
    unsetenv("BRAID_AMULET");
    bool ok = false;
    char line[400];
    while (f && fgets(line, sizeof line, f)) {
        int mr;
        if (sscanf(line, "amulet: %d x %d kernel, kc %lld nc %lld pack %d", &mr, nr, kc, nc, pack) == 5) ok = true;
    }
    if (f) fclose(f);
    if (r.rc) fprintf(stderr, "%s\n", r.err);
    ok &= r.rc == 0;
    t_run_free(&r);
    return ok;
}

/* Wall seconds of src pinned to parameters c (BRAID_AMULET_PARAMS) on
 * nt threads, or -1. */
static double pinned(const char *src, CgOptions *cg, const char **names, MB **ins, const long long *c, int nt)
{
    char pin[80];
    snprintf(pin, sizeof pin, "%lld %lld %d", c[0], c[1], (int)c[2]);
    setenv("BRAID_AMULET_PARAMS", pin, 1);
    setenv("BRAID_AMULET", "kernel", 1);
    br_set_threads(nt);
    const char *on[] = {"R"};
    TRun r;
    double t0 = now();
    t_run_dml(src, cg, 5, names, ins, 1, on, &r);
    double t = now() - t0;
    if (r.rc) { fprintf(stderr, "%s\n", r.err); t = -1; }
    t_run_free(&r);
    unsetenv("BRAID_AMULET_PARAMS");
    unsetenv("BRAID_AMULET");
    return t;
}

/* The 2-thread scaling of the grid's best parameters (gb) and of the
 * first search's (ad) against OpenBLAS dgemm's, all in wall clock,
 * alternated, best of reps: t1/tN of each and braid's over dgemm's
 * (dgemm's scaling is what this machine gives FMA-bound code with
 * packing: the ceiling braid's split is judged against). */
static void scaling(const char *src, CgOptions *cg, const char **names, MB **ins, int64_t n, const long long *gb,
                    const long long *ad, const char *qn, int reps)
{
    int nt = br_threads();
    double tg[2] = {INFINITY, INFINITY}, ta[2] = {INFINITY, INFINITY}, td[2] = {INFINITY, INFINITY};
    double *C = malloc((size_t)(n * n) * sizeof *C);
    for (int rep = 0; rep < reps && C; rep++)
        for (int x = 0; x < 2; x++) {
            int t = x ? nt : 1;
            double v = pinned(src, cg, names, ins, gb, t);
            if (v >= 0) tg[x] = fmin(tg[x], v);
            v = pinned(src, cg, names, ins, ad, t);
            if (v >= 0) ta[x] = fmin(ta[x], v);
            openblas_set_num_threads(t);
            double t0 = now();
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0, ins[0]->d, (int)n,
                        ins[1]->d, (int)n, 0.0, C, (int)n);
            td[x] = fmin(td[x], now() - t0);
        }
    br_set_threads(nt);
    openblas_set_num_threads(nt);
    free(C);
    printf("%-12s %d threads over 1 (wall): grid's best %.2f, adaptive %.2f, dgemm %.2f; over dgemm's: %.2f, %.2f\n",
           qn, nt, tg[0] / tg[1], ta[0] / ta[1], td[0] / td[1], tg[0] / tg[1] / (td[0] / td[1]),
           ta[0] / ta[1] / (td[0] / td[1]));
}

static void sweep(int64_t n, CgOptions *cg, const char **names, MB **ins)
{
    /* BENCH_REPS: the grid's repetitions (best of; default 5) */
    int reps = getenv("BENCH_REPS") ? atoi(getenv("BENCH_REPS")) : 5;
    if (reps < 1) reps = 1;
    /* plain matmul, Q1 (a threshold per j) and Q3 (a constant one: a
     * compare and a masked add per term, no multiply-add) */
    static const int qs[] = {QMM, Q1, Q3};
    printf("\nadaptive parameters vs an exhaustive sweep (n = %lld, %d thread%s)\n", (long long)n, br_threads(),
           br_threads() == 1 ? "" : "s");
    printf("%-12s %-22s %9s %-22s %9s %8s %6s %9s %6s\n", "query", "adaptive (kc nc pack)", "s", "best of grid", "s",
           "configs", "ad/bst", "twin", "tw/bst");
    const char *only = getenv("BENCH_QUERY");
    for (int qi = 0; qi < (int)(sizeof qs / sizeof *qs); qi++) {
        int q = qs[qi];
        if (only && strncmp(qname[q], only, strlen(only))) continue;
        char src[400];
        snprintf(src, sizeof src,
                 "R = matrix(0, rows=nrow(A), cols=ncol(B))\n"
                 "where (i in 1:nrow(A), j in 1:ncol(B), k in 1:ncol(A)) { %s }\n", qbody[q]);
        /* the search three times (each in search mode, fresh), then the
         * grid: kc 32..512, nc 8 nr .. 64 nr and all of N, both packings */
        enum { NS = 3 };
        long long cfg[64][3];
        int nc = 0, nr = 0;
        for (int si = 0; si < NS; si++) {
            long long akc, anc;
            int apk;
            if (!searched(src, cg, names, ins, 5, &akc, &anc, &apk, &nr)) break;
            cfg[nc][0] = akc, cfg[nc][1] = anc, cfg[nc][2] = apk, nc++;
        }
        if (nc < NS) { printf("%s: no search trace\n", qname[q]); continue; }
        for (long long kc = 32; kc <= 512 && kc <= n; kc *= 2)
            for (long long m = 8; m <= 128; m *= 2) {
                long long w = m == 128 ? n : m * nr;
                if (w > n && m != 128) continue;
                if (w == n && m != 128) continue;   /* all of N once */
                for (int pk = 0; pk < 2 && nc < 64; pk++) cfg[nc][0] = kc, cfg[nc][1] = w, cfg[nc][2] = pk, nc++;
            }
        double best[64];
        for (int c = 0; c < nc; c++) best[c] = INFINITY;
        for (int rep = 0; rep < reps; rep++)
            for (int i = 0; i < nc; i++) {
                /* rotated start, every other rep backwards */
                int c = (int)(((rep % 2 ? nc - 1 - i : i) + (int64_t)rep * nc / reps) % nc);
                char pin[80];
                snprintf(pin, sizeof pin, "%lld %lld %d", cfg[c][0], cfg[c][1], (int)cfg[c][2]);
                setenv("BRAID_AMULET_PARAMS", pin, 1);
                setenv("BRAID_AMULET", "kernel", 1);
                double t = timed(src, cg, names, ins, 5);
                unsetenv("BRAID_AMULET_PARAMS");
                unsetenv("BRAID_AMULET");
                if (t >= 0) best[c] = fmin(best[c], t);
            }
        int b = NS;
        for (int c = NS; c < nc; c++) if (best[c] < best[b]) b = c;
        /* BENCH_GRID=1: every point of the grid (stderr) */
        if (getenv("BENCH_GRID"))
            for (int c = 0; c < nc; c++)
                fprintf(stderr, "%s grid %lld %lld %lld %.4f %.3f\n", qname[q], cfg[c][0], cfg[c][1], cfg[c][2], best[c],
                        best[c] / best[b]);
        char bs[40];
        snprintf(bs, sizeof bs, "%lld %lld %lld", cfg[b][0], cfg[b][1], cfg[b][2]);
        for (int si = 0; si < NS; si++) {
            char ad[40];
            snprintf(ad, sizeof ad, "%lld %lld %lld", cfg[si][0], cfg[si][1], cfg[si][2]);
            /* the pick's twin in the grid (nc at or past n: all of N) */
            int tw = -1;
            for (int c = NS; c < nc && tw < 0; c++)
                if (cfg[c][0] == cfg[si][0] && cfg[c][2] == cfg[si][2] &&
                    (cfg[c][1] == cfg[si][1] || (cfg[c][1] >= n && cfg[si][1] >= n)))
                    tw = c;
            printf("%-12s %-22s %9.4f %-22s %9.4f %8d %6.3f %9.4f %6.3f\n", qname[q], ad, best[si], bs, best[b],
                   nc - NS, best[si] / best[b], tw >= 0 ? best[tw] : NAN, tw >= 0 ? best[tw] / best[b] : NAN);
        }
        if (br_threads() > 1) scaling(src, cg, names, ins, n, cfg[b], cfg[0], qname[q], reps);
        fflush(stdout);
    }
}

static void sparse(int64_t n, CgOptions *cg)
{
    static const double dens[] = {0.01, 0.001};
    int64_t N = 256;
    printf("\nsparse A (%lld x %lld) times dense B (%lld x %lld), %d thread%s: seconds, best of 5, alternated\n",
           (long long)n, (long long)n, (long long)n, (long long)N, br_threads(), br_threads() == 1 ? "" : "s");
    printf("%-9s %-8s %9s %9s %9s %8s %8s %6s\n", "density", "read", "kernel", "A%*%B", "eval", "mm/kern", "ev/kern",
           "cc_ms");
    for (int di = 0; di < 2; di++)
        for (int tr = 0; tr < 2; tr++) {
            t_seed(11 + di);
            MB *A = t_gen(n, n, dens[di], -1, 1, true), *B = t_gen(n, N, 1, -1, 1, false);
            const char *names[] = {"A", "B"};
            MB *ins[] = {A, B};
            char wsrc[300], msrc[200];
            snprintf(wsrc, sizeof wsrc,
                     "R = matrix(0, rows=%lld, cols=ncol(B))\n"
                     "where (i in 1:%lld, j in 1:ncol(B), k in 1:%lld) { R[i,j] += %s * B[k,j] }\n", (long long)n,
                     (long long)n, (long long)n, tr ? "A[k,i]" : "A[i,k]");
            snprintf(msrc, sizeof msrc, "R = %s %%*%% B\n", tr ? "t(A)" : "A");
            double tk = INFINITY, tm = INFINITY, te = INFINITY, cc = NAN;
            timed_cc(wsrc, cg, names, ins, 2, &cc);   /* compile the kernel */
            for (int rep = 0; rep < 5; rep++) {
                setenv("BRAID_AMULET", "kernel", 1);
                tk = fmin(tk, timed(wsrc, cg, names, ins, 2));
                setenv("BRAID_AMULET", "eval", 1);
                te = fmin(te, timed(wsrc, cg, names, ins, 2));
                unsetenv("BRAID_AMULET");
                tm = fmin(tm, timed(msrc, cg, names, ins, 2));
            }
            printf("%-9g %-8s %9.4f %9.4f %9.4f %8.2f %8.2f %6.0f\n", dens[di], tr ? "A[k,i]" : "A[i,k]", tk, tm, te,
                   tm / tk, te / tk, cc);
            fflush(stdout);
            mb_release(A);
            mb_release(B);
        }
}

int main(int argc, char **argv)
{
    int64_t n = argc > 1 ? atoll(argv[1]) : 768;
    int nt = argc > 2 ? atoi(argv[2]) : 1;
    char dir[] = "/tmp/braid-amulet-sweep-XXXXXX";
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    CgOptions cg = t_pols[2].o;
    cg.cachedir = dir;
    br_set_threads(nt);
    t_seed(7);
    MB *A = t_gen(n, n, 1, -1, 1, false), *B = t_gen(n, n, 1, -1, 1, false);
    MB *thi = t_gen(n, 1, 1, -0.5, 0.5, false), *thj = t_gen(1, n, 1, -0.5, 0.5, false);
    MB *dis = t_gen(n, 1, 1, 0, 1, false);
    const char *names[] = {"A", "B", "thi", "thj", "dis"};
    MB *ins[] = {A, B, thi, thj, dis};
    printf("AMULET parameter sweep and sparse kernel (machine possibly shared; ratios from one run)\n");
    /* with N > 1 threads the sweep at 1 thread too, in the same run: the
     * search's ad/bst at both */
    for (int t = nt > 1 ? 1 : nt; t <= nt; t = t < nt ? nt : nt + 1) {
        br_set_threads(t);
        sweep(n, &cg, names, ins);
    }
    if (!getenv("BENCH_NOSPARSE")) sparse(4 * n, &cg);
    for (int i = 0; i < 5; i++) mb_release(ins[i]);
    return 0;
}
