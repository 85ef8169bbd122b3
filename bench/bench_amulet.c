/* bench_amulet.c: scaled processing rate (SPR = M*N*K / seconds / 1e9) of
 * where-loops (AMULET, docs/amulet.md) against peers measured in the same
 * run, sides alternated, best of the repetitions: OpenBLAS dgemm for plain
 * matrix multiplication, and the best-order (i, k, j) C loop compiled with
 * the benchmark's flags (-O2 -march=native plus `optimize("O3")`: gcc -O3
 * vectorizing for this CPU) for every query. Not part of the tests.
 *
 *   build/bench/bench_amulet [n ...]      (default 1024)
 *
 * Also braid's DML alternative, the loop over k of rank-one outer products
 * (once, 1 thread). cold_s: the first run of a query (kernel compiled into
 * a fresh plan cache, parameters searched); cc_ms: its compile time.
 * The machine may be shared: read the ratios, not the absolute rates. */
#include "tests/t.h"
#include "tests/t_dml.h"

#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void openblas_set_num_threads(int n);

enum { QMM, Q1, Q2, Q3, NQ };
static const char *qname[NQ] = {"matmul", "Q1 thres[j]", "Q2 thres[i]", "Q3 const"};
/* braid's DML alternative: a loop over k of rank-one outer products with
 * elementwise operators (K passes over an M x N matrix) */
static const char *qouter[NQ] = {
    "R = R + P",
    "R = R + P - (P > thj) * P * t(dis)",
    "R = R + P + (P > thi) * (P - thi)",
    "R = R + (P > 0.25)",
};
static const char *qbody[NQ] = {
    "R[i,j] += A[i,k]*B[k,j]",
    "R[i,j] += A[i,k]*B[k,j] - (A[i,k]*B[k,j] > thj[j]) * A[i,k]*B[k,j]*dis[j]",
    "R[i,j] += A[i,k]*B[k,j] + (A[i,k]*B[k,j] > thi[i]) * (A[i,k]*B[k,j] - thi[i])",
    "R[i,j] += (A[i,k]*B[k,j] > 0.25)",
};

/* The seed's baseline: the loop in its best order (i, k, j: unit stride
 * over j), parallel over i when nt > 1. */
__attribute__((optimize("O3"))) static void peer(int q, int64_t n, const double *A, const double *B,
                                                 const double *thi, const double *thj, const double *dis, double *R,
                                                 int nt)
{
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < n; k++) {
            double a = A[i * n + k];
            const double *b = B + k * n;
            double *r = R + i * n;
            switch (q) {
            case QMM: for (int64_t j = 0; j < n; j++) r[j] += a * b[j]; break;
            case Q1:
                for (int64_t j = 0; j < n; j++) { double p = a * b[j]; r[j] += p - (p > thj[j]) * p * dis[j]; }
                break;
            case Q2:
                for (int64_t j = 0; j < n; j++) { double p = a * b[j]; r[j] += p + (p > thi[i]) * (p - thi[i]); }
                break;
            default: for (int64_t j = 0; j < n; j++) r[j] += a * b[j] > 0.25; break;
            }
        }
}

static double now(void) { return omp_get_wtime(); }

int main(int argc, char **argv)
{
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
    printf("AMULET benchmark (machine possibly shared; SPR = n^3 / s / 1e9; ratios from the same run)\n");
    printf("%-12s %5s %2s %9s %9s %9s %9s %9s %9s %9s %8s %8s\n", "query", "n", "t", "braid", "gcc-O3", "dgemm",
           "outer", "b/gcc", "b/dgemm", "b/outer", "cold_s", "cc_ms");
    for (int si = 0; si < ns; si++) {
        int64_t n = sizes[si];
        t_seed(7);
        MB *A = t_gen(n, n, 1, -1, 1, false), *B = t_gen(n, n, 1, -1, 1, false);
        MB *thi = t_gen(n, 1, 1, -0.5, 0.5, false), *thj = t_gen(1, n, 1, -0.5, 0.5, false);
        MB *dis = t_gen(n, 1, 1, 0, 1, false);
        double *R = malloc((size_t)(n * n) * sizeof *R);
        const char *names[] = {"A", "B", "thi", "thj", "dis"}, *on[] = {"R"};
        MB *ins[] = {A, B, thi, thj, dis};
        for (int nt = 1; nt <= 2; nt++) {
            br_set_threads(nt);
            openblas_set_num_threads(nt);
            for (int q = 0; q < NQ; q++) {
                char src[600];
                snprintf(src, sizeof src,
                         "R = matrix(0, rows=nrow(A), cols=ncol(B))\n"
                         "where (i in 1:nrow(A), j in 1:ncol(B), k in 1:ncol(A)) { %s }\n", qbody[q]);
                double tb = INFINITY, tp = INFINITY, tg = INFINITY, cold = 0, ccms = 0;
                for (int rep = 0; rep < 3; rep++) {
                    TRun r;
                    double t0 = now();
                    t_run_dml(src, &cg, 5, names, ins, 1, on, &r);
                    double t = now() - t0;
                    if (r.rc) { fprintf(stderr, "%s\n", r.err); return 1; }
                    if (rep == 0) { cold = t; ccms = r.st.compile_ns / 1e6; }
                    else tb = fmin(tb, t);
                    t_run_free(&r);
                    memset(R, 0, (size_t)(n * n) * sizeof *R);
                    t0 = now();
                    peer(q, n, A->d, B->d, thi->d, thj->d, dis->d, R, nt);
                    tp = fmin(tp, now() - t0);
                    if (q == QMM) {
                        t0 = now();
                        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0, A->d,
                                    (int)n, B->d, (int)n, 0.0, R, (int)n);
                        tg = fmin(tg, now() - t0);
                    }
                }
                double w = (double)n * n * n / 1e9, to = NAN;
                if (nt == 1) {   /* the outer-product loop: once, 1 thread */
                    snprintf(src, sizeof src,
                             "R = matrix(0, rows=nrow(A), cols=ncol(B))\n"
                             "for (k in 1:ncol(A)) { P = A[,k] %%*%% B[k,]; %s }\n", qouter[q]);
                    TRun r;
                    double t0 = now();
                    t_run_dml(src, &cg, 5, names, ins, 1, on, &r);
                    to = now() - t0;
                    if (r.rc) { fprintf(stderr, "%s\n", r.err); return 1; }
                    t_run_free(&r);
                }
                printf("%-12s %5lld %2d %9.2f %9.2f %9s %9.2f %9.2f %9s %9.1f %8.2f %8.0f\n", qname[q], (long long)n, nt,
                       w / tb, w / tp, q == QMM ? "" : "-", w / to, tp / tb, "", to / tb, cold, ccms);
                if (q == QMM)
                    printf("%-12s %5s %2s %9s %9s %9.2f %9s %9s %9.2f\n", "", "", "", "", "", w / tg, "", "", tg / tb);
                fflush(stdout);
            }
        }
        free(R);
        mb_release(A); mb_release(B); mb_release(thi); mb_release(thj); mb_release(dis);
    }
    return 0;
}
