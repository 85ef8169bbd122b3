/* bench_cla_look.c: the two parts of a Row plan over a compressed main
 * input measured apart, per dictionary (table) size, to fit the lookup
 * rule (kernels/cla.h cla_look_cells, cla_row_cells) that the Row
 * skeleton and the planner share:
 * - dec: decompressing all rows through cla_rows_read in windows of
 *   CLA_BLK rows (what the generated code over decompressed rows reads),
 *   per cell;
 * - prod: the standalone compressed x %*% B (cla_matmul_right, B m x k,
 *   the result materialized: what the unfused plan's ba+* runs), per row;
 * - mat: writing a new n x k block alone (the product's result; the
 *   unfused plan prices it as materialization, mat_w);
 * - look: the Row skeleton's lookups of the same product (cla_rowmm_read
 *   into a window, nothing materialized), per row.
 * Data: n rows of G groups of c co-coded columns (cbind(A, 2A+1, ...),
 * A uniform over d values: one DDC group of d tuples each), d swept so
 * the dictionary (d c 8 bytes) and the lookup table (d kp 8 bytes) run
 * from 16 KB to 8 MB. Every time is the process CPU time
 * (CLOCK_PROCESS_CPUTIME_ID, braid's and OpenBLAS's threads at 1) of
 * one pass, best of R rounds, the sizes and parts alternated within each
 * round. The unit is the decompressed cell of the smallest dictionary
 * (cla_look_cells' unit); each row prints the rule's price of the
 * lookups (cla_look_cells) beside the measured ones.
 * Run: OPENBLAS_NUM_THREADS=1 build/bench/bench_cla_look [R [n]] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "kernels/cla.h"

static uint64_t s = 88172645463325252ULL;
static double ur(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return (double)(s >> 11) / 9007199254740992.0; }
static double cpu(void) { struct timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec / 1e9; }

typedef struct {
    int c, G;
    int64_t d;
    MB *x, *b;
    double dec, prod, look, mat;   /* best seconds */
    double rule;              /* cla_look_cells(k) */
} Case;

static MB *make(int64_t n, int G, int c, int64_t d, BrErr *e)
{
    MB *x = mb_dense(n, (int64_t)G * c, e);
    if (!x) return NULL;
    for (int64_t i = 0; i < n; i++)
        for (int g = 0; g < G; g++) {
            double a = 1 + (double)(int64_t)(ur() * (double)d);
            for (int j = 0; j < c; j++) x->d[i * G * c + g * c + j] = (j + 1) * a + j;
        }
    mb_recount_nnz(x);
    ClaPlanOpts o = cla_plan_defaults();
    o.force = true;
    MB *y = cla_compress(x, &o, e);
    mb_release(x);
    return y;
}

int main(int argc, char **argv)
{
    int R = argc > 1 ? atoi(argv[1]) : 5;
    int64_t n = argc > 2 ? atoll(argv[2]) : 500000, k = 8;
    br_set_threads(1);
    setenv("OPENBLAS_NUM_THREADS", "1", 0);
    BrErr e = {0};
    /* (c, G): pairs as the rs case of tests/test_cla_auto.c, and groups
     * of 8 columns (dictionary and table of one size at k = 8) */
    static const int shapes[][2] = {{2, 6}, {8, 2}};
    static const int64_t ds[] = {256, 1024, 2048, 4096, 8192, 16384, 32768, 65536};
    enum { NS = 2, ND = 8 };
    Case cs[NS * ND];
    int nc = 0;
    for (int si = 0; si < NS; si++)
        for (int di = 0; di < ND; di++) {
            Case *q = &cs[nc++];
            memset(q, 0, sizeof *q);
            q->c = shapes[si][0], q->G = shapes[si][1], q->d = ds[di];
            q->x = make(n, q->G, q->c, q->d, &e);
            if (!q->x) { fprintf(stderr, "%s\n", e.msg); return 1; }
            int64_t m = q->x->cols;
            q->b = mb_dense(m, k, &e);
            for (int64_t i = 0; i < m * k; i++) q->b->d[i] = ur() - 0.5;
            mb_recount_nnz(q->b);
            ClaLookGroup *lg = malloc(((size_t)cla_look_groups(q->x) + 1) * sizeof *lg);
            ClaLook l;
            cla_look_fill(q->x, &l, lg);
            q->rule = cla_look_cells(&l, k);
            free(lg);
            q->dec = q->prod = q->look = q->mat = 1e30;
        }
    double *buf = malloc(sizeof(double) * CLA_BLK * 16 * 8);
    double sink = 0;
    for (int r = 0; r < R; r++)
        for (int i = 0; i < nc; i++) {
            Case *q = &cs[(i + r * 3) % nc];   /* a different order each round */
            int64_t m = q->x->cols;
            double t = cpu();
            ClaRows *rd = cla_rows_open(q->x, 0);
            for (int64_t i0 = 0; i0 < n; i0 += CLA_BLK) {
                int64_t len = n - i0 < CLA_BLK ? n - i0 : CLA_BLK;
                cla_rows_read(rd, len, buf);
                sink += buf[(len - 1) * m];
            }
            cla_rows_close(rd);
            t = cpu() - t;
            if (t < q->dec) q->dec = t;
            t = cpu();
            MB *p = cla_matmul_right(q->x, q->b, &e);
            t = cpu() - t;
            if (!p) { fprintf(stderr, "%s\n", e.msg); return 1; }
            sink += p->d[n * k - 1];
            mb_release(p);
            if (t < q->prod) q->prod = t;
            t = cpu();
            ClaRowMM *pm = cla_rowmm_new(q->x, q->b, &e);
            ClaRowMMCur *cur = pm ? cla_rowmm_open(pm, 0) : NULL;
            if (!cur) { fprintf(stderr, "rowmm: %s\n", e.msg); return 1; }
            for (int64_t i0 = 0; i0 < n; i0 += CLA_BLK) {
                int64_t len = n - i0 < CLA_BLK ? n - i0 : CLA_BLK;
                cla_rowmm_read(cur, len, buf);
                sink += buf[(len - 1) * k];
            }
            cla_rowmm_close(cur);
            cla_rowmm_free(pm);
            t = cpu() - t;
            if (t < q->look) q->look = t;
            t = cpu();   /* the n x k result written alone (a new block, as the product's) */
            p = mb_dense(n, k, &e);
            if (!p) { fprintf(stderr, "%s\n", e.msg); return 1; }
            for (int64_t i0 = 0; i0 < n * k; i0++) p->d[i0] = (double)i0;
            sink += p->d[n * k - 1];
            mb_release(p);
            t = cpu() - t;
            if (t < q->mat) q->mat = t;
        }
    /* the unit: a decompressed cell of the smallest dictionary of pairs */
    double cell = cs[0].dec / ((double)n * cs[0].x->cols);
    printf("# n %lld, k %lld, best of %d, 1 thread; unit: a decompressed cell at d = %lld pairs: %.3f ns\n",
           (long long)n, (long long)k, R, (long long)cs[0].d, cell * 1e9);
    printf("# c G d enc dict_KB table_KB | dec/cell | prod/row mat/row look/row (cells) | rule/row | "
           "(prod-mat)/rule look/rule | per group: prod-mat look (cells)\n");
    for (int i = 0; i < nc; i++) {
        Case *q = &cs[i];
        double m = (double)q->x->cols;
        double dec = q->dec / ((double)n * m) / cell, prod = q->prod / (double)n / cell, look = q->look / (double)n / cell;
        double mat = q->mat / (double)n / cell, pl = prod - mat;
        printf("%d %d %lld %s %.0f %.0f | %.2f | %.2f %.2f %.2f | %.1f | %.2f %.2f | %.2f %.2f\n", q->c, q->G,
               (long long)q->d, cla_enc_name(q->x->cmb->groups[0]->enc), (double)q->d * q->c * 8 / 1024,
               (double)q->d * k * 8 / 1024, dec, prod, mat, look, q->rule, pl / q->rule, look / q->rule, pl / q->G,
               look / q->G);
    }
    fprintf(stderr, "(%g)\n", sink);
    for (int i = 0; i < nc; i++) mb_release(cs[i].x), mb_release(cs[i].b);
    free(buf);
    return 0;
}
