/* bench_cla_mix.c: the compressed products against the uncompressed
 * kernels (BLAS for dense blocks, braid's sparse kernels for sparse
 * ones) per encoding mix, by the CPU time of the one thread running them
 * (CLOCK_THREAD_CPUTIME_ID; braid's and OpenBLAS's threads set to 1),
 * alternated in one run, best of R. Data (n rows x 16 columns, generated):
 *   airline  8 categorical columns of 2-100 values, 4 half-steps, 2 with
 *            runs, 2 mostly-zero flags (a DDC1 mix with RLE)
 *   ddc2     1000-4000 values a column (DDC2)
 *   ole      95% zeros, the rest of 8 values, scattered (OLE)
 *   rle      runs of about 300 rows of 20 values, 60% zero runs (RLE)
 *   unc      random dense values (one UNC group; compression forced)
 *   csr      random values at 8% non-zeros (sparse uncompressed columns;
 *            forced: DDC2/RLE or the shared CSR group)
 * Operations: X %*% v, t(X) %*% y, X %*% B and t(X) %*% Y with k = 2, 4,
 * 8, 16 columns (KMeans' distances, multi-class gradients), t(X) %*% X.
 * Each line: ULA and CLA seconds and ULA/CLA (above 1: compressed
 * faster), and the largest relative difference of the results.
 * Run: OPENBLAS_NUM_THREADS=1 build/bench/bench_cla_mix [R [n [set [op]]]]
 * (op 0-4: X %*% B at k = 1, 2, 4, 8, 16; 5-9: t(X) %*% Y; 10: tsmm). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "kernels/cla.h"
#include "kernels/mm.h"
static uint64_t s = 88172645463325252ULL;
static double ur(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return (double)(s >> 11) / 9007199254740992.0; }
static double cpu(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec / 1e9; }

static void gen(const char *set, MB *x, int64_t n, int64_t m)
{
    for (int64_t j = 0; j < m; j++) {
        double cur = 0; int64_t left = 0;
        for (int64_t i = 0; i < n; i++) {
            double *c = x->d + i * m + j, u = ur();
            if (!strcmp(set, "airline")) {
                static const int card[8] = {2, 5, 10, 30, 100, 7, 3, 12};
                if (j < 8) *c = 1 + (int)(u * card[j]);
                else if (j < 12) *c = 0.5 * (int)(u * 20);
                else if (j == 12) *c = 1990 + i * 20 / n;
                else if (j == 13) *c = (double)((i / 1000) % 12);
                else if (j == 14) *c = u < 0.9 ? 0 : 1;
                else *c = u < 0.9 ? 0 : (int)(ur() * 4);
            } else if (!strcmp(set, "ddc2")) *c = (int)(u * (1000 + 200 * j));
            else if (!strcmp(set, "ole")) *c = u < 0.95 ? 0 : 1 + (int)(ur() * 8);
            else if (!strcmp(set, "rle")) {
                if (left-- <= 0) { left = 150 + (int64_t)(u * 300); cur = ur() < 0.6 ? 0 : 1 + (int)(ur() * 20); }
                *c = cur;
            } else if (!strcmp(set, "unc")) *c = u;
            else *c = u < 0.92 ? 0 : ur();
        }
    }
    mb_recount_nnz(x);
}

static double reldiff(const MB *a, const MB *b)
{
    BrErr e = {0};
    MB *da = mb_to_dense(a, &e), *db = mb_to_dense(b, &e);
    double mx = 0, sc = 0;
    for (int64_t i = 0; i < da->rows * da->cols; i++) sc = fmax(sc, fabs(db->d[i]));
    for (int64_t i = 0; i < da->rows * da->cols; i++) mx = fmax(mx, fabs(da->d[i] - db->d[i]) / (sc > 0 ? sc : 1));
    mb_release(da), mb_release(db);
    return mx;
}

int main(int argc, char **argv)
{
    int R = argc > 1 ? atoi(argv[1]) : 5;
    int64_t n = argc > 2 ? atoll(argv[2]) : 500000, m = 16;
    const char *only = argc > 3 ? argv[3] : NULL;
    int op1 = argc > 4 ? atoi(argv[4]) : -1;   /* only this operation (0-10) */
    br_set_threads(1);
    setenv("OPENBLAS_NUM_THREADS", "1", 0);
    const char *sets[] = {"airline", "ddc2", "ole", "rle", "unc", "csr"};
    const int64_t ks[] = {1, 2, 4, 8, 16};
    BrErr e = {0};
    for (int si = 0; si < 6; si++) {
        if (only && strcmp(only, sets[si])) continue;
        MB *x = mb_dense(n, m, &e);
        gen(sets[si], x, n, m);
        ClaPlanOpts o = cla_plan_defaults();
        o.force = true;
        MB *c = cla_compress(x, &o, &e);
        MB *u = x;
        if (mb_should_be_sparse(x->rows, x->cols, x->nnz)) u = mb_to_sparse(x, &e), mb_release(x);
        printf("== %s: %s ULA, ratio %.2f, groups", sets[si], u->d ? "dense" : "sparse", (double)mb_bytes(u) / mb_bytes(c));
        for (int g = 0; g < c->cmb->ngroups; g++) {
            const ClaGroup *gr = c->cmb->groups[g];
            printf(" %s/%d/%d%s", cla_enc_name(gr->enc), gr->ncols, (int)gr->ndict,
                   gr->enc == CLA_UNC && gr->unc && !gr->unc->d ? "csr" : "");
        }
        printf("\n");
        for (int op = 0; op < 11; op++) {
            if (op1 >= 0 && op != op1) continue;
            /* 0-4: X %*% B, k = ks[op]; 5-9: t(X) %*% Y, k = ks[op - 5]; 10 tsmm */
            int64_t k = op < 10 ? ks[op % 5] : 0;
            MB *B = NULL;
            if (op < 5) B = mb_dense(m, k, &e);
            else if (op < 10) B = mb_dense(n, k, &e);
            if (B) { for (int64_t i = 0; i < B->rows * k; i++) B->d[i] = ur() - 0.3; mb_recount_nnz(B); }
            double bu = 1e9, bc = 1e9, rd = 0;
            for (int r = 0; r < R; r++) {
                MB *res[2] = {NULL, NULL};
                for (int side = 0; side < 2; side++) {
                    int comp = (side + r) % 2;
                    MB *in = comp ? c : u;
                    double t = cpu();
                    if (op < 5) res[comp] = comp ? cla_matmul_right(in, B, &e) : k_matmul(in, B, &e);
                    else if (op < 10) res[comp] = comp ? cla_matmul_tl(in, B, &e) : k_matmul_tl(in, B, &e);
                    else res[comp] = comp ? cla_tsmm(in, &e) : k_tsmm(in, true, &e);
                    t = cpu() - t;
                    if (comp) bc = t < bc ? t : bc;
                    else bu = t < bu ? t : bu;
                }
                if (!res[0] || !res[1]) { fprintf(stderr, "error: %s\n", e.msg); return 1; }
                rd = fmax(rd, reldiff(res[1], res[0]));
                mb_release(res[0]), mb_release(res[1]);
            }
            char name[32];
            if (op < 5) snprintf(name, sizeof name, "X %%*%% B k=%d", (int)k);
            else if (op < 10) snprintf(name, sizeof name, "t(X) %%*%% Y k=%d", (int)k);
            else snprintf(name, sizeof name, "tsmm");
            printf("  %-16s ULA %.5f s  CLA %.5f s  ULA/CLA %.2f  maxrel %.1e\n", name, bu, bc, bu / bc, rd);
            fflush(stdout);
            mb_release(B);
        }
        mb_release(c), mb_release(u);
    }
    return 0;
}
