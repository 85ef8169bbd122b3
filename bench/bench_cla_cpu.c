/* bench_cla_cpu.c: compressed (CLA) against uncompressed (ULA) kernels by
 * the CPU time of the one thread running them (CLOCK_THREAD_CPUTIME_ID,
 * braid's and OpenBLAS's threads set to 1), alternated in one run, best of
 * R (argument; 9). On a shared machine wall times swing several-fold with
 * the load; the thread's CPU time counts only while it runs, so the
 * ratios hold to a few percent (cache interference remains). Data: an
 * Airline-like 1M x 16 table (8 categorical columns, 4 half-step
 * numerics, 2 with runs, 2 mostly-zero flags). Operations: X %*% v,
 * t(X) %*% y, decompression against a copy, and reading all rows through
 * cla_rows_read in windows of 2048 rows (what the per-cell Cell/MAgg and
 * Outer skeletons do) against copying the same rows of the dense block,
 * t(X) %*% Y and X %*% B with K = 8 columns (multi-column products),
 * mmchain t(X) %*% (y * (X %*% v)) (the fused compressed chain against
 * the dense one; "mmchain 2p": the ULA column is the compressed chain as
 * two products and a multiply, so the ratio is the fusion's gain);
 * and compression with direct code tables against hashing. The
 * compressed side runs twice, alternated with the rest: with the leaf
 * kernels of the highest SIMD level (CLA) and of the generic copy
 * (CLA generic, kernels/cla_leaf.c; BRAID_ISA caps the former).
 * Run: OPENBLAS_NUM_THREADS=1 build/bench/bench_cla_cpu [R [op]]
 * (op 0-7: only that operation, then compression). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "kernels/cla.h"
#include "kernels/ew.h"
#include "kernels/mm.h"
#include "kernels/leaf.h"
static uint64_t s = 88172645463325252ULL;
static double ur(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return (double)(s >> 11) / 9007199254740992.0; }
static double cpu(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec / 1e9; }
int main(int argc, char **argv)
{
    int64_t n = 1000000, m = 16; int R = argc > 1 ? atoi(argv[1]) : 9;
    br_set_threads(1);
    setenv("OPENBLAS_NUM_THREADS", "1", 0);   /* (read when BLAS starts; set it outside too) */
    BrErr e = {0};
    MB *x = mb_dense(n, m, &e);
    int card[8] = {2, 5, 10, 30, 100, 7, 3, 12};
    for (int64_t i = 0; i < n; i++) {
        double *r = x->d + i * m;
        for (int j = 0; j < 8; j++) r[j] = 1 + (int)(ur() * card[j]);
        for (int j = 8; j < 12; j++) r[j] = 0.5 * (int)(ur() * 20);
        r[12] = 1990 + i * 20 / n; r[13] = (double)((i / 1000) % 12);
        r[14] = ur() < 0.9 ? 0 : 1; r[15] = ur() < 0.9 ? 0 : (int)(ur() * 4);
    }
    mb_recount_nnz(x);
    ClaPlanOpts o = cla_plan_defaults();
    MB *c = cla_compress(x, &o, &e);
    printf("groups %d ratio %.2f:", c->cmb->ngroups, (double)mb_bytes(x) / mb_bytes(c));
    for (int g = 0; g < c->cmb->ngroups; g++) printf(" %s/%d/%d", cla_enc_name(c->cmb->groups[g]->enc), c->cmb->groups[g]->ncols, (int)c->cmb->groups[g]->ndict);
    printf("\n");
    MB *v = mb_dense(m, 1, &e), *y = mb_dense(n, 1, &e);
    for (int j = 0; j < m; j++) v->d[j] = ur();
    for (int64_t i = 0; i < n; i++) y->d[i] = ur();
    mb_recount_nnz(v); mb_recount_nnz(y);
    int64_t K = 8;
    MB *Y = mb_dense(n, K, &e), *B = mb_dense(m, K, &e);
    for (int64_t i = 0; i < n * K; i++) Y->d[i] = ur();
    for (int64_t i = 0; i < m * K; i++) B->d[i] = ur();
    mb_recount_nnz(Y); mb_recount_nnz(B);
    const char *names[] = {"X %*% v", "t(X) %*% y", "decompress", "window rows", "t(X) %*% Y", "X %*% B",
                           "mmchain", "mmchain 2p"};
    double *buf = malloc(2048 * m * sizeof(double));
    int op0 = argc > 2 ? atoi(argv[2]) : 0, op1 = argc > 2 ? op0 + 1 : 8;
    for (int op = op0; op < op1; op++) {
        double bu = 1e9, bc = 1e9, bg = 1e9;
        KIsa top = k_isa();
        for (int r = 0; r < R; r++)
            for (int side = 0; side < 3; side++) {
                int sd = (side + r) % 3, comp = sd > 0;   /* 0 ULA, 1 CLA, 2 CLA generic */
                k_isa_set(sd == 2 ? K_ISA_GENERIC : top);
                MB *in = comp ? c : x, *res = NULL;
                double t = cpu();
                if (op == 0) res = comp ? cla_matmul_right(in, v, &e) : k_matmul(in, v, &e);
                else if (op == 1) res = comp ? cla_matmul_tl(in, y, &e) : k_matmul_tl(in, y, &e);
                else if (op == 2) res = comp ? cmb_decompress(in, &e) : mb_copy(in, &e);
                else if (op == 4) res = comp ? cla_matmul_tl(in, Y, &e) : k_matmul_tl(in, Y, &e);
                else if (op == 5) res = comp ? cla_matmul_right(in, B, &e) : k_matmul(in, B, &e);
                else if (op == 6) res = comp ? cla_mmchain(in, v, y, &e) : k_mmchain(in, v, y, &e);
                else if (op == 7 && comp) {   /* the fused chain against its two products */
                    res = cla_mmchain(in, v, y, &e);
                } else if (op == 7) {
                    MB *q = cla_matmul_right(c, v, &e), *qw = k_binary(OP_MULT, y, q, &e);
                    res = cla_matmul_tl(c, qw, &e);
                    mb_release(q), mb_release(qw);
                }
                else if (comp) {
                    ClaRows *rd = cla_rows_open(in, 0);
                    for (int64_t lo = 0; lo < n; lo += 2048) cla_rows_read(rd, 2048, buf);
                    cla_rows_close(rd);
                } else {
                    for (int64_t lo = 0; lo < n; lo += 2048) memcpy(buf, in->d + lo * m, 2048 * m * sizeof(double));
                }
                t = cpu() - t;
                mb_release(res);
                if (sd == 2) bg = t < bg ? t : bg;
                else if (comp) bc = t < bc ? t : bc;
                else bu = t < bu ? t : bu;
            }
        k_isa_set(top);
        printf("%-12s ULA %.5f s  CLA %.5f s  ULA/CLA %.2f  (%s; generic: CLA %.5f s, ULA/CLA %.2f)\n", names[op], bu,
               bc, bu / bc, k_isa_name(top), bg, bu / bg);
    }
    /* compression with the direct code tables against hashing every
     * row that differs from the one before (ClaPlanOpts.lut), alternated */
    double tl = 1e9, th = 1e9;
    for (int r = 0; r < 3; r++)
        for (int lut = 0; lut < 2; lut++) {
            ClaPlanOpts q = o;
            q.lut = (lut + r) % 2;
            double t = cpu();
            MB *k = cla_compress(x, &q, &e);
            t = cpu() - t;
            mb_release(k);
            if (q.lut) tl = t < tl ? t : tl;
            else th = t < th ? t : th;
        }
    printf("compression  hashing %.4f s  tables %.4f s  hashing/tables %.2f\n", th, tl, th / tl);
    free(buf);
    mb_release(v); mb_release(y); mb_release(Y); mb_release(B); mb_release(c); mb_release(x);
    return 0;
}
