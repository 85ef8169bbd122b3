/* test_mm.c: matrix multiplication kernels (k_matmul, k_matmul_tl, k_tsmm,
 * k_mmchain) against naive reference loops, over shapes, sparsity, formats
 * and thread counts. */
#include "t.h"
#include "io/io.h"
#include "kernels/gen.h"
#include "kernels/leaf.h"
#include "kernels/mm.h"
#include "kernels/reorg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t rng;

static double urand(void)
{
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (double)(rng >> 11) * (1.0 / 9007199254740992.0);
}

/* m x n with each cell non-zero with probability sp (values in [-1, 1)),
 * deterministic in seed; sparse or dense format as asked. */
static MB *gen(int64_t m, int64_t n, double sp, bool sparse, uint64_t seed)
{
    BrErr e = {0};
    MB *d = mb_dense(m, n, &e);
    rng = seed * 0x9E3779B97F4A7C15ull + 12345;
    for (int64_t i = 0; i < m * n; i++)
        if (urand() < sp) {
            double v = urand() * 2 - 1;
            d->d[i] = v == 0 ? 0.5 : v;
        }
    mb_recount_nnz(d);
    if (sparse) mb_make_sparse(d, &e);
    return d;
}

/* Structural invariants of a kernel result and SystemDS's format rule. */
static bool valid(const MB *r)
{
    if (!r || r->refs != 1) return false;
    if (r->sparse) {
        if (r->rp[0] != 0 || r->rp[r->rows] != r->nnz) return false;
        for (int64_t i = 0; i < r->rows; i++) {
            if (r->rp[i + 1] < r->rp[i]) return false;
            for (int64_t k = r->rp[i]; k < r->rp[i + 1]; k++) {
                if (r->ci[k] < 0 || r->ci[k] >= r->cols || r->v[k] == 0) return false;
                if (k > r->rp[i] && r->ci[k] <= r->ci[k - 1]) return false;
            }
        }
    } else {
        int64_t c = 0;
        for (int64_t i = 0; i < r->rows * r->cols; i++) c += r->d[i] != 0;
        if (c != r->nnz) return false;
    }
    if (r->rows * r->cols > 0) {
        bool want = mb_should_be_sparse(r->rows, r->cols, r->nnz) || (r->nnz == 0 && r->rows + 1 < r->rows * r->cols);
        if (want != r->sparse) return false;
    }
    return true;
}

/* Dense copy as a plain array (caller frees). */
static double *arr(const MB *m)
{
    double *a = calloc((size_t)(m->rows * m->cols) + 1, sizeof(double));
    for (int64_t i = 0; i < m->rows; i++)
        for (int64_t j = 0; j < m->cols; j++) a[i * m->cols + j] = mb_get(m, i, j);
    return a;
}

/* Reference: op(a) %*% b with op = transpose when ta. */
static MB *ref_mm(const MB *a, bool ta, const MB *b)
{
    BrErr e = {0};
    int64_t m = ta ? a->cols : a->rows, k = ta ? a->rows : a->cols, n = b->cols;
    double *A = arr(a), *B = arr(b);
    MB *r = mb_dense(m, n, &e);
    for (int64_t i = 0; i < m; i++)
        for (int64_t l = 0; l < k; l++) {
            double av = ta ? A[l * m + i] : A[i * k + l];
            if (av == 0) continue;
            for (int64_t j = 0; j < n; j++) r->d[i * n + j] += av * B[l * n + j];
        }
    free(A); free(B);
    mb_recount_nnz(r);
    return r;
}

/* Reference transpose. */
static MB *ref_t(const MB *a)
{
    BrErr e = {0};
    MB *r = mb_dense(a->cols, a->rows, &e);
    for (int64_t i = 0; i < a->rows; i++)
        for (int64_t j = 0; j < a->cols; j++) r->d[j * a->rows + i] = mb_get(a, i, j);
    mb_recount_nnz(r);
    return r;
}

/* Reference mmchain: t(x) %*% (w * (x %*% v)). */
static MB *ref_chain(const MB *x, const MB *v, const MB *w)
{
    BrErr e = {0};
    MB *q = ref_mm(x, false, v);
    if (w)
        for (int64_t i = 0; i < q->rows; i++)
            for (int64_t l = 0; l < q->cols; l++)
                q->d[i * q->cols + l] *= mb_get(w, i, w->cols == 1 ? 0 : l);
    mb_recount_nnz(q);
    MB *r = ref_mm(x, true, q);
    mb_release(q);
    (void)e;
    return r;
}

static const double SPS[] = {0, 0.001, 0.1, 1};

static void test_matmul(void)
{
    /* m, k, n */
    static const int64_t shapes[][3] = {
        {0, 3, 4}, {3, 0, 4}, {3, 4, 0}, {0, 0, 0}, {1, 1, 1}, {7, 5, 1}, {1, 5, 7},
        {1, 6, 1}, {8, 1, 9}, {60, 4, 3}, {3, 4, 60}, {20, 20, 20}, {200, 150, 120},
    };
    int nshape = (int)(sizeof shapes / sizeof *shapes);
    for (int s = 0; s < nshape; s++)
        for (int sa = 0; sa < 4; sa++)
            for (int sb = 0; sb < 4; sb++) {
                int64_t m = shapes[s][0], k = shapes[s][1], n = shapes[s][2];
                MB *ad = gen(m, k, SPS[sa], false, (uint64_t)(s * 100 + sa * 10 + sb));
                MB *bd = gen(k, n, SPS[sb], false, (uint64_t)(s * 100 + sa * 10 + sb + 5000));
                MB *ref = ref_mm(ad, false, bd);
                MB *as = mb_to_sparse(ad, &(BrErr){0}), *bs = mb_to_sparse(bd, &(BrErr){0});
                /* t(a) stored, for the transpose-left form */
                MB *atd = ref_t(ad), *ats = mb_to_sparse(atd, &(BrErr){0});
                for (int fmt = 0; fmt < 4; fmt++)
                    for (int th = 1; th <= 2; th++) {
                        br_set_threads(th);
                        const MB *a = fmt & 1 ? as : ad, *b = fmt & 2 ? bs : bd;
                        const MB *at = fmt & 1 ? ats : atd;
                        BrErr e = {0};
                        MB *r = k_matmul(a, b, &e);
                        T_CHECK(r && valid(r), "matmul valid %dx%dx%d sp %g/%g fmt %d th %d: %s",
                                (int)m, (int)k, (int)n, SPS[sa], SPS[sb], fmt, th, e.msg);
                        if (r)
                            T_MB_EQ(r, ref, 1e-12, "matmul %dx%dx%d sp %g/%g fmt %d th %d",
                                    (int)m, (int)k, (int)n, SPS[sa], SPS[sb], fmt, th);
                        mb_release(r);
                        r = k_matmul_tl(at, b, &e);
                        T_CHECK(r && valid(r), "tl valid %dx%dx%d fmt %d: %s",
                                (int)m, (int)k, (int)n, fmt, e.msg);
                        if (r)
                            T_MB_EQ(r, ref, 1e-12, "matmul_tl %dx%dx%d sp %g/%g fmt %d th %d",
                                    (int)m, (int)k, (int)n, SPS[sa], SPS[sb], fmt, th);
                        mb_release(r);
                        T_CHECK(a->refs == 1 && b->refs == 1, "inputs untouched");
                    }
                mb_release(ad); mb_release(bd); mb_release(as); mb_release(bs);
                mb_release(atd); mb_release(ats); mb_release(ref);
            }
    br_set_threads(2);
}

/* Sparse a %*% dense b of 2 to 200 columns (the sparse leaf's sd_row:
 * tiles of 4 vectors, one vector, 4, 2 and 1 columns with the sums in
 * registers; one column is sd_row1's four sums): the bits of the reference's
 * per-non-zero order, with NaN and Inf among a's entries (in b they
 * would meet a's zeros: k_mm_ieee_zeros), an empty row, 1 and 2
 * threads. */
static void test_sd_narrow(void)
{
    for (int64_t n = 2; n <= 200; n++) {
        if (n > 21 && n % 16 != 0 && n % 16 != 1 && n % 16 != 15 && n % 8 != 6 && n % 32 != 4) continue;
        MB *ad = gen(41, 57, 0.2, false, (uint64_t)(900 + n));
        for (int64_t l = 0; l < ad->cols; l++) ad->d[5 * ad->cols + l] = 0;   /* an empty row */
        ad->d[3 * ad->cols + 7] = NAN;
        ad->d[11 * ad->cols + 30] = INFINITY;
        ad->d[20 * ad->cols + 56] = -INFINITY;
        mb_recount_nnz(ad);
        MB *bd = gen(57, n, 1, false, (uint64_t)(1900 + n));
        MB *ref = ref_mm(ad, false, bd);
        MB *as = mb_to_sparse(ad, &(BrErr){0});
        for (int th = 1; th <= 2; th++) {
            br_set_threads(th);
            BrErr e = {0};
            MB *r = k_matmul(as, bd, &e);
            T_CHECK(r && valid(r), "sd narrow valid n %lld th %d: %s", (long long)n, th, e.msg);
            if (r) T_MB_EQ(r, ref, 0, "sd narrow 41x57x%lld th %d: other bits", (long long)n, th);
            mb_release(r);
        }
        mb_release(ad); mb_release(bd); mb_release(as); mb_release(ref);
    }
    br_set_threads(2);
}

/* Dense products of 2^18 to 2^23 multiply-adds (fixed row blocks of
 * the output, one BLAS call each, spread over the threads; autoencoder
 * mini-batches), a %*% b and t(a) %*% b: equal to the reference and the
 * same bits with 1 and 2 threads. */
static void test_gemm_blocks(void)
{
    /* m, k, n */
    /* (the next four: t(a) %*% b of 2 to 8 columns, or of 2 to 8 rows in
     * the output, by tmm_rows over fixed row groups: gemm_tn_cols; then
     * bands of b's columns: up to 16 for a of up to 512 columns, up to
     * 48 for up to 256, and the transposed forms; the next two past the
     * bands' limits, by dgemm; then over BLAS_PAR_MIN: 16 rows by column
     * bands, and 60 x 100 outputs by groups of k, gemm_k_groups) */
    static const int64_t shapes[][3] = {{256, 100, 100}, {101, 300, 90}, {130, 257, 61}, {70, 2000, 40},
                                        {100, 20000, 4}, {5, 20000, 70}, {3000, 700, 2}, {37, 5000, 8},
                                        {40, 9000, 9}, {100, 3000, 12}, {300, 2000, 16}, {200, 1000, 33},
                                        {17, 6000, 48}, {16, 7000, 300}, {47, 3000, 10}, {600, 500, 12},
                                        {100, 700, 49}, {60, 20000, 100}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        int64_t m = shapes[s][0], k = shapes[s][1], n = shapes[s][2];
        MB *a = gen(m, k, 1, false, 900 + s), *b = gen(k, n, 1, false, 950 + s), *at = ref_t(a);
        MB *ref = ref_mm(a, false, b), *r1[2] = {NULL, NULL};
        for (int th = 1; th <= 2; th++) {
            br_set_threads(th);
            for (int tl = 0; tl < 2; tl++) {
                BrErr e = {0};
                MB *r = tl ? k_matmul_tl(at, b, &e) : k_matmul(a, b, &e);
                T_CHECK(r && valid(r), "gemm blocks valid %zu tl %d: %s", s, tl, e.msg);
                if (r) T_MB_EQ(r, ref, 1e-12, "gemm blocks %zu tl %d th %d", s, tl, th);
                if (th == 1) r1[tl] = r;
                else {
                    T_CHECK(r && r1[tl] && mb_equal(r, r1[tl], 0), "gemm blocks %zu tl %d thread-independent", s, tl);
                    mb_release(r);
                }
            }
        }
        mb_release(r1[0]); mb_release(r1[1]); mb_release(a); mb_release(b); mb_release(at); mb_release(ref);
    }
    br_set_threads(2);
}

/* Larger sparse products that take the parallel sparse-output paths. */
static void test_matmul_big_sparse(void)
{
    struct { int64_t m, k, n; double sa, sb; bool da, db; } cs[] = {
        {3000, 2000, 3000, 0.002, 0.002, false, false},  /* ss -> sparse, parallel */
        {2000, 300, 400, 0.0005, 1, false, false},       /* sd -> sparse rows */
        {2000, 300, 400, 0.0005, 1, false, true},
        {500, 200, 3000, 0.3, 0.0002, true, false},      /* ds -> few columns */
        {1000, 500, 300, 0.05, 0.05, false, false},      /* ss -> dense, parallel */
        {20000, 700, 3, 0.01, 1, false, true},           /* sd, narrow b: t(X) %*% v */
    };
    for (size_t c = 0; c < sizeof cs / sizeof *cs; c++) {
        MB *a = gen(cs[c].m, cs[c].k, cs[c].sa, !cs[c].da, 900 + c);
        MB *b = gen(cs[c].k, cs[c].n, cs[c].sb, !cs[c].db, 1900 + c);
        MB *ref = ref_mm(a, false, b);
        MB *r1 = NULL;
        for (int th = 1; th <= 2; th++) {
            br_set_threads(th);
            BrErr e = {0};
            MB *r = k_matmul(a, b, &e);
            T_CHECK(r && valid(r), "big matmul %zu valid th %d: %s", c, th, e.msg);
            if (r) T_MB_EQ(r, ref, 1e-12, "big matmul %zu th %d", c, th);
            if (th == 1) r1 = r;
            else {
                T_CHECK(r && r1 && mb_equal(r, r1, 0), "big matmul %zu thread-independent", c);
                mb_release(r);
            }
        }
        T_CHECK(!r1 || r1->sparse == (c < 4), "big matmul %zu format %d", c, r1 ? r1->sparse : -1);
        /* transpose-left on the same data */
        MB *at = ref_t(a);
        if (!cs[c].da) mb_make_sparse(at, &(BrErr){0});
        BrErr e = {0};
        MB *rt = k_matmul_tl(at, b, &e);
        T_CHECK(rt && valid(rt), "big tl %zu valid: %s", c, e.msg);
        if (rt) T_MB_EQ(rt, ref, 1e-12, "big tl %zu", c);
        mb_release(rt); mb_release(at);
        mb_release(r1); mb_release(a); mb_release(b); mb_release(ref);
    }
    br_set_threads(2);
}

/* Skinny right sides (the register kernel, up to 48 columns of b, by
 * bands of 16 past 16, and 65536 rows; tasks of at most 1024 rows and
 * 131072 cells) and small
 * transpose-left outputs with a sparse left side (one pass with fixed row
 * blocks), against the reference, with results identical for 1 and 2
 * threads. */
static void test_skinny(void)
{
    static const int64_t mm[][3] = {
        {5000, 10, 5}, {4099, 3, 2}, {3001, 17, 16}, {2000, 128, 9}, {2000, 129, 4},
        {70001, 10, 5}, {6, 7, 13}, {5, 1, 3},
        /* wide rows: several tasks of fewer rows; past SK_KMAX (dgemm) */
        {3001, 1000, 4}, {1203, 4999, 16}, {97, 20000, 7}, {40, 65537, 3},
        /* bands of 16 columns (the last the rest), sub-ranges of rows;
         * past SK_NMAX (dgemm) */
        {3001, 100, 20}, {1500, 37, 33}, {800, 300, 48}, {7, 2000, 17}, {20000, 3, 18}, {500, 90, 49},
    };
    for (size_t c = 0; c < sizeof mm / sizeof *mm; c++)
        for (int sp = 2; sp < 4; sp++) {
            MB *a = gen(mm[c][0], mm[c][1], SPS[sp], false, 300 + c * 10 + sp);
            MB *b = gen(mm[c][1], mm[c][2], 1, false, 400 + c);
            MB *ref = ref_mm(a, false, b), *r1 = NULL;
            for (int th = 1; th <= 2; th++) {
                br_set_threads(th);
                BrErr e = {0};
                MB *r = k_matmul(a, b, &e);
                T_CHECK(r && valid(r), "skinny valid %zu: %s", c, e.msg);
                if (r) T_MB_EQ(r, ref, 1e-12, "skinny %zu sp %g th %d", c, SPS[sp], th);
                if (th == 1) r1 = r;
                else {
                    T_CHECK(r && r1 && mb_equal(r, r1, 0), "skinny %zu thread-independent", c);
                    mb_release(r);
                }
            }
            mb_release(r1); mb_release(a); mb_release(b); mb_release(ref);
        }
    /* t(a) %*% b, a sparse k x m: k, m, n, sparsity (0: one entry per row) */
    static const struct { int64_t k, m, n; double sp; } tl[] = {
        {10000, 5, 10, 0}, {70001, 5, 10, 0}, {9000, 64, 32, 0.05}, {5000, 1, 9, 0.3},
        {20000, 3, 12, 0.001}, {3, 5, 10, 0.5},
        /* past 4096 cells (fixed blocks of rows, their partials up to
         * TLS_PART_CELLS), past 65536 (ranges of output rows, one a
         * thread) */
        {30000, 100, 60, 0.02}, {3000, 400, 200, 0.05},
    };
    for (size_t c = 0; c < sizeof tl / sizeof *tl; c++) {
        MB *a;
        if (tl[c].sp > 0) a = gen(tl[c].k, tl[c].m, tl[c].sp, true, 500 + c);
        else {   /* an indicator matrix, like table(seq(1, n), labels) */
            BrErr e = {0};
            a = mb_sp_alloc(tl[c].k, tl[c].m, tl[c].k, &e);
            rng = 77 + c;
            for (int64_t i = 0; i < tl[c].k; i++) {
                a->ci[i] = (int32_t)(urand() * (double)tl[c].m);
                a->v[i] = 1;
                a->rp[i + 1] = i + 1;
            }
            mb_sp_done(a, tl[c].k);
        }
        MB *b = gen(tl[c].k, tl[c].n, 1, false, 600 + c);
        MB *ref = ref_mm(a, true, b), *reft = ref_t(ref), *r1 = NULL, *q1 = NULL;
        for (int th = 1; th <= 2; th++) {
            br_set_threads(th);
            BrErr e = {0};
            MB *r = k_matmul_tl(a, b, &e);
            T_CHECK(r && valid(r), "tl small valid %zu: %s", c, e.msg);
            if (r) T_MB_EQ(r, ref, 1e-12, "tl small %zu th %d", c, th);
            /* the dense side on the left: t(t(a) %*% b) by the same pass */
            MB *q = k_matmul_tl(b, a, &e);
            T_CHECK(q && valid(q), "tl small dense-left valid %zu: %s", c, e.msg);
            if (q) T_MB_EQ(q, reft, 1e-12, "tl small dense-left %zu th %d", c, th);
            if (th == 1) { r1 = r; q1 = q; }
            else {
                T_CHECK(r && r1 && mb_equal(r, r1, 0), "tl small %zu thread-independent", c);
                T_CHECK(q && q1 && mb_equal(q, q1, 0), "tl small dense-left %zu thread-independent", c);
                mb_release(r); mb_release(q);
            }
        }
        mb_release(r1); mb_release(q1); mb_release(a); mb_release(b); mb_release(ref); mb_release(reft);
    }
    br_set_threads(2);
}

/* Low-rank products (inner dimension up to 32, wide outputs: the
 * one-pass register-tile kernel), with zero rows and a NaN so that the
 * non-zeros it counts are checked too. */
static void test_lowk(void)
{
    static const int64_t mm[][3] = {
        {257, 20, 300}, {1030, 1, 64}, {33, 32, 2000}, {4, 7, 16385}, {515, 13, 129},
        {2049, 5, 40}, {3, 32, 30000}, {600, 33, 200}, {300, 32, 33},
    };
    for (size_t c = 0; c < sizeof mm / sizeof *mm; c++)
        for (int sp = 1; sp < 4; sp++) {
            MB *a = gen(mm[c][0], mm[c][1], SPS[sp], false, 700 + c * 10 + sp);
            MB *b = gen(mm[c][1], mm[c][2], sp == 3 ? 1 : 0.5, false, 800 + c);
            if (sp == 2) {   /* NaN propagates and counts as a non-zero */
                a->d[0] = NAN;
                mb_recount_nnz(a);
            }
            MB *ref = ref_mm(a, false, b), *r1 = NULL;
            for (int th = 1; th <= 2; th++) {
                br_set_threads(th);
                BrErr e = {0};
                MB *r = k_matmul(a, b, &e);
                T_CHECK(r && valid(r), "lowk valid %zu: %s", c, e.msg);
                if (r) T_MB_EQ(r, ref, 1e-12, "lowk %zu sp %g th %d", c, SPS[sp], th);
                if (th == 1) r1 = r;
                else {
                    T_CHECK(r && r1 && mb_equal(r, r1, 0), "lowk %zu thread-independent", c);
                    mb_release(r);
                }
            }
            mb_release(r1); mb_release(a); mb_release(b); mb_release(ref);
        }
    br_set_threads(2);
}

/* t(X) %*% X of 1 to 16 columns (the leaf's tsmm_small on AVX2 and
 * AVX-512, dsyrk in the generic copy), of 17 to 23 (tsmm_mid), 24 to 640
 * (tsmm_wide; dsyrk outside the fixed row groups past 64) and 641
 * (dsyrk): against the reference product,
 * exactly symmetric, the same bits for 1 and 2 threads and for every
 * level that has the leaf; with rows short of a whole vector at the
 * matrix's end (read from a padded copy), NaN and Inf, and row counts
 * that take the fixed groups (8 x 1024 rows or more). The leaf itself
 * over row ranges of an exactly sized buffer (reads past it: ASan). */
static void test_tsmm_small(void)
{
    static const int64_t rows[] = {1, 2, 3, 5, 127, 129, 1000, 8191, 8192 * 2 + 3};
    static const int64_t wide[] = {17, 20, 23, 24, 31, 32, 33, 48, 63, 64, 65, 101, 161, 641};
    KIsa isa0 = k_isa();
    for (int64_t ni = 0; ni < 16 + (int64_t)(sizeof wide / sizeof *wide); ni++)
        for (size_t q = 0; q < sizeof rows / sizeof *rows; q++) {
            int64_t n = ni < 16 ? ni + 1 : wide[ni - 16];
            int64_t m = rows[q];
            if (m > 1000 && n % 5 != 1 && n != 64) continue;
            if (n > 100 && m > 8191 && n != 161) continue;   /* the reference's time */
            MB *x = gen(m, n, q % 3 == 2 ? 0.5 : 1.0, false, 9000 + (uint64_t)(n * 16) + q);
            if (q == 4) {   /* NaN and Inf: propagate as in the reference */
                x->d[(m / 2) * n] = NAN;
                x->d[m * n - 1] = INFINITY;
                mb_recount_nnz(x);
            }
            MB *ref = ref_mm(x, true, x), *first = NULL;
            for (int isa = K_ISA_GENERIC; isa <= (int)k_isa_cpu(); isa++)
                for (int th = 1; th <= 2; th++) {
                    k_isa_set((KIsa)isa);
                    br_set_threads(th);
                    BrErr e = {0};
                    MB *r = k_tsmm(x, true, &e);
                    T_CHECK(r && valid(r), "tsmm small %lldx%lld %s: %s", (long long)m, (long long)n,
                            k_isa_name((KIsa)isa), e.msg);
                    if (!r) continue;
                    T_MB_EQ(r, ref, 1e-12, "tsmm small %lldx%lld %s th %d", (long long)m, (long long)n,
                            k_isa_name((KIsa)isa), th);
                    bool sym = true;
                    for (int64_t i = 0; i < n; i++)
                        for (int64_t j = 0; j < i; j++) {
                            double u = mb_get(r, i, j), v = mb_get(r, j, i);
                            if (!(u == v || (isnan(u) && isnan(v)))) sym = false;
                        }
                    T_CHECK(sym, "tsmm small %lldx%lld %s symmetric", (long long)m, (long long)n,
                            k_isa_name((KIsa)isa));
                    /* past 64 columns outside the fixed row groups (tsmm_dense's
                     * rule) dsyrk threads by itself: no claim on its bits */
                    const bool grouped = m >= 8 * 1024 && 8 * n * n * 4 <= m * n;
                    if (isa == K_ISA_GENERIC || (n > 64 && !grouped)) { mb_release(r); continue; }
                    if (!first) { first = r; continue; }
                    T_CHECK(mb_equal(r, first, 0), "tsmm small %lldx%lld: %s th %d gives other bits",
                            (long long)m, (long long)n, k_isa_name((KIsa)isa), th);
                    mb_release(r);
                }
            mb_release(first); mb_release(ref); mb_release(x);
        }
    k_isa_set(isa0);
    br_set_threads(2);
    /* the leaves over row ranges of an exactly sized buffer (tsmm_wide
     * also over several chunks: tsmm_wide_kc rows each) */
    for (int isa = K_ISA_AVX2; isa <= (int)k_isa_cpu(); isa++) {
        const KMmLeaf *L = k_leaves((KIsa)isa)->mm;
        T_CHECK(L->tsmm_small && L->tsmm_mid && L->tsmm_wide, "tsmm leaves present at %s",
                k_isa_name((KIsa)isa));
        if (!L->tsmm_small || !L->tsmm_mid || !L->tsmm_wide) continue;
        static const int64_t ns[] = {1, 2, 3, 5, 8, 9, 12, 16, 17, 23, 24, 25, 33, 41, 57, 64, 65, 99, 130};
        for (size_t ni = 0; ni < sizeof ns / sizeof *ns; ni++)
            for (int64_t m = 1; m <= 9; m++) {
                const int64_t n = ns[ni], rows = m < 8 ? m : m == 8 ? 2 * tsmm_wide_kc(n) + 3 : 600;
                for (int w = 0; w < 2; w++) {
                    if (w == 0 && n > 64) continue;
                    if (w == 1 && n <= 16) continue;
                    const char *name = w ? "tsmm_wide" : n <= 16 ? "tsmm_small" : "tsmm_mid";
                    double *x = malloc((size_t)(rows * n) * sizeof(double));
                    double *c = malloc((size_t)(n * n) * sizeof(double));
                    double *p = br_alloc_aligned((size_t)tsmm_wide_scratch(n) * sizeof(double));
                    for (int64_t k = 0; k < rows * n; k++) x[k] = (double)((k * 7) % 11) - 5;
                    for (int64_t r0 = 0; r0 < rows; r0 += r0 < 7 ? 1 : 61) {
                        for (int64_t k = 0; k < n * n; k++) c[k] = NAN;   /* every cell written */
                        if (w) L->tsmm_wide(x, rows, n, r0, rows, c, p);
                        else (n <= 16 ? L->tsmm_small : L->tsmm_mid)(x, rows, n, r0, rows, c);
                        bool ok = true;
                        for (int64_t a = 0; a < n; a++)
                            for (int64_t b = a; b < n; b++) {
                                double want = 0;
                                for (int64_t r = r0; r < rows; r++) want += x[r * n + a] * x[r * n + b];
                                ok &= c[a * n + b] == want;
                            }
                        T_CHECK(ok, "%s %s rows %lld..%lld of %lldx%lld", name, k_isa_name((KIsa)isa),
                                (long long)r0, (long long)rows, (long long)rows, (long long)n);
                    }
                    br_free_aligned(p);
                    free(c);
                    free(x);
                }
            }
    }
}

/* The matrix-vector leaves (tvec_rows: t(A) %*% x, mvec_rows: A %*% v)
 * over row ranges of exactly sized buffers (masked loads of the last
 * lanes: ASan), against exact sums of small integers; the same bits on
 * every level that has them over random doubles; through k_matmul and
 * k_matmul_tl the same bits on 1 and 2 threads, NaN and Inf included. */
static void test_gemv_leaves(void)
{
    static const int64_t ks[] = {1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 24, 31, 33, 47, 48, 49, 63, 64,
                                 65, 96, 100, 127, 128, 129, 130, 200, 257};
    for (size_t ki = 0; ki < sizeof ks / sizeof *ks; ki++) {
        const int64_t k = ks[ki], m = 41;   /* (tmm_rows: rows in chunks of 16) */
        double *a = malloc((size_t)(m * k) * sizeof(double)), *x = malloc((size_t)m * sizeof(double));
        double *v = malloc((size_t)k * sizeof(double)), *y = malloc((size_t)k * sizeof(double));
        double *z = malloc((size_t)m * sizeof(double)), *first_y = NULL, *first_z = NULL;
        for (int data = 0; data < 2; data++) {
            rng = 77 + (uint64_t)k;
            for (int64_t q = 0; q < m * k; q++) a[q] = data ? urand() - 0.5 : (double)((q * 7) % 11) - 5;
            for (int64_t q = 0; q < m; q++) x[q] = data ? urand() - 0.5 : (double)(q % 5) - 2;
            for (int64_t q = 0; q < k; q++) v[q] = data ? urand() - 0.5 : (double)(q % 7) - 3;
            for (int isa = K_ISA_AVX2; isa <= (int)k_isa_cpu(); isa++) {
                const KMmLeaf *L = k_leaves((KIsa)isa)->mm;
                T_CHECK(L->tvec_rows && L->mvec_rows, "gemv leaves present at %s", k_isa_name((KIsa)isa));
                if (!L->tvec_rows || !L->mvec_rows) continue;
                for (int64_t r0 = 0; r0 < m; r0++) {
                    L->tvec_rows(a, x, k, r0, m, y);
                    for (int64_t q = 0; q < m; q++) z[q] = NAN;
                    L->mvec_rows(a, v, k, r0, m, z);
                    bool ok = true, okz = true;
                    for (int64_t j = 0; j < k && !data; j++) {
                        double want = 0;
                        for (int64_t r = r0; r < m; r++) want += x[r] * a[r * k + j];
                        ok &= y[j] == want;
                    }
                    for (int64_t r = 0; r < m; r++) {
                        double want = 0;
                        for (int64_t j = 0; j < k; j++) want += a[r * k + j] * v[j];
                        okz &= r < r0 ? isnan(z[r]) : data ? fabs(z[r] - want) <= 1e-12 * k : z[r] == want;
                    }
                    T_CHECK(ok, "tvec_rows %s k %lld rows %lld..%lld", k_isa_name((KIsa)isa), (long long)k,
                            (long long)r0, (long long)m);
                    /* tmm_rows: B of 2 to 8 columns, each column tvec_rows's bits
                     * (exactly sized buffers: ASan sees the masked lanes) */
                    T_CHECK(L->tmm_rows != NULL, "tmm_rows present at %s", k_isa_name((KIsa)isa));
                    for (int64_t n = 2; n <= 8 && L->tmm_rows; n++) {
                        double *b = malloc((size_t)(m * n) * sizeof(double)), *c = malloc((size_t)(k * n) * sizeof(double));
                        double *col = malloc((size_t)m * sizeof(double)), *yc = malloc((size_t)k * sizeof(double));
                        for (int64_t q = 0; q < m * n; q++) b[q] = data ? urand() - 0.5 : (double)(q % 9) - 4;
                        L->tmm_rows(a, b, k, n, n, r0, m, c);
                        /* the same columns as a band of a wider b (row stride n + 3) */
                        double *bw = malloc((size_t)(m * (n + 3)) * sizeof(double)),
                               *cw = malloc((size_t)(k * n) * sizeof(double));
                        for (int64_t r = 0; r < m; r++)
                            for (int64_t q = 0; q < n + 3; q++) bw[r * (n + 3) + q] = q < n ? b[r * n + q] : NAN;
                        L->tmm_rows(a, bw, k, n, n + 3, r0, m, cw);
                        T_CHECK(!memcmp(c, cw, (size_t)(k * n) * sizeof(double)),
                                "tmm_rows %s k %lld n %lld: a band of a wider b differs", k_isa_name((KIsa)isa),
                                (long long)k, (long long)n);
                        free(bw); free(cw);
                        bool okc = true;
                        for (int64_t cc = 0; cc < n; cc++) {
                            for (int64_t r = 0; r < m; r++) col[r] = b[r * n + cc];
                            L->tvec_rows(a, col, k, r0, m, yc);
                            for (int64_t j = 0; j < k; j++) okc &= !memcmp(&c[j * n + cc], &yc[j], sizeof(double));
                        }
                        T_CHECK(okc, "tmm_rows %s k %lld n %lld rows %lld..%lld: not tvec_rows's bits",
                                k_isa_name((KIsa)isa), (long long)k, (long long)n, (long long)r0, (long long)m);
                        free(b); free(c); free(col); free(yc);
                    }
                    T_CHECK(okz, "mvec_rows %s k %lld rows %lld..%lld", k_isa_name((KIsa)isa), (long long)k,
                            (long long)r0, (long long)m);
                }
                if (!data) continue;
                if (!first_y) {
                    first_y = malloc((size_t)k * sizeof(double));
                    first_z = malloc((size_t)m * sizeof(double));
                    memcpy(first_y, y, (size_t)k * sizeof(double));
                    memcpy(first_z, z, (size_t)m * sizeof(double));
                    continue;
                }
                T_CHECK(!memcmp(first_y, y, (size_t)k * sizeof(double)) && !memcmp(first_z, z, (size_t)m * sizeof(double)),
                        "gemv leaves k %lld: %s gives other bits", (long long)k, k_isa_name((KIsa)isa));
            }
        }
        free(a); free(x); free(v); free(y); free(z); free(first_y); free(first_z);
    }
    /* through the products: row groups and thread ranges */
    KIsa isa0 = k_isa();
    static const int64_t shapes[][2] = {{100000, 3}, {20000, 100}, {3000, 200}, {700, 1000}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        const int64_t m = shapes[s][0], k = shapes[s][1];
        MB *a = gen(m, k, 1.0, false, 600 + s), *x = gen(m, 1, 1.0, false, 610 + s), *v = gen(k, 1, 1.0, false, 620 + s);
        a->d[(m / 3) * k + k / 2] = NAN;
        a->d[(m / 2) * k + k - 1] = INFINITY;
        mb_recount_nnz(a);
        MB *rt = ref_mm(a, true, x), *rv = ref_mm(a, false, v), *first[2] = {NULL, NULL};
        for (int isa = K_ISA_AVX2; isa <= (int)k_isa_cpu(); isa++)
            for (int th = 1; th <= 2; th++) {
                k_isa_set((KIsa)isa);
                br_set_threads(th);
                BrErr e = {0};
                MB *r[2] = {k_matmul_tl(a, x, &e), k_matmul(a, v, &e)};
                for (int w = 0; w < 2; w++) {
                    T_CHECK(r[w] && valid(r[w]), "gemv %lldx%lld %d: %s", (long long)m, (long long)k, w, e.msg);
                    if (!r[w]) continue;
                    T_MB_EQ(r[w], w ? rv : rt, 1e-12, "gemv %lldx%lld %s th %d %s", (long long)m, (long long)k,
                            k_isa_name((KIsa)isa), th, w ? "X %*% v" : "t(X) %*% y");
                    if (!first[w]) { first[w] = r[w]; continue; }
                    T_CHECK(mb_equal(r[w], first[w], 0), "gemv %lldx%lld %s th %d %s: other bits", (long long)m,
                            (long long)k, k_isa_name((KIsa)isa), th, w ? "X %*% v" : "t(X) %*% y");
                    mb_release(r[w]);
                }
            }
        k_isa_set(isa0);
        br_set_threads(2);
        mb_release(first[0]); mb_release(first[1]); mb_release(rt); mb_release(rv);
        mb_release(a); mb_release(x); mb_release(v);
    }
}

static void test_tsmm(void)
{
    static const int64_t shapes[][2] = {
        {0, 4}, {4, 0}, {1, 1}, {9, 1}, {1, 9}, {50, 6}, {6, 50}, {2000, 100}, {300, 40},
        {2000, 1500}, {300, 1100},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (int sp = 0; sp < 4; sp++) {
            int64_t m = shapes[s][0], n = shapes[s][1];
            if (m * n >= 200000 && SPS[sp] > 0.1) continue;
            if (m * n > 1000000 && SPS[sp] > 0.01) continue;
            MB *xd = gen(m, n, SPS[sp], false, 7000 + s * 10 + sp);
            MB *xs = mb_to_sparse(xd, &(BrErr){0});
            MB *xt = ref_t(xd);
            MB *refl = ref_mm(xd, true, xd), *refr = ref_mm(xd, false, xt), *l1 = NULL, *r1 = NULL;
            for (int fmt = 0; fmt < 2; fmt++)
                for (int th = 1; th <= 2; th++) {
                    br_set_threads(th);
                    const MB *x = fmt ? xs : xd;
                    BrErr e = {0};
                    MB *l = k_tsmm(x, true, &e), *r = k_tsmm(x, false, &e);
                    T_CHECK(l && valid(l) && r && valid(r), "tsmm valid %dx%d sp %g fmt %d: %s",
                            (int)m, (int)n, SPS[sp], fmt, e.msg);
                    if (l) T_MB_EQ(l, refl, 1e-12, "tsmm left %dx%d sp %g fmt %d th %d",
                                   (int)m, (int)n, SPS[sp], fmt, th);
                    if (r) T_MB_EQ(r, refr, 1e-12, "tsmm right %dx%d sp %g fmt %d th %d",
                                   (int)m, (int)n, SPS[sp], fmt, th);
                    /* exact symmetry */
                    bool sym = true;
                    for (int64_t i = 0; l && i < l->rows && sym; i++)
                        for (int64_t j = 0; j < i; j++)
                            if (mb_get(l, i, j) != mb_get(l, j, i)) { sym = false; break; }
                    T_CHECK(sym, "tsmm left symmetric %dx%d fmt %d", (int)m, (int)n, fmt);
                    /* a sparse x: each cell summed in row order, whatever
                     * the thread count */
                    if (fmt == 1 && th == 1) { l1 = l; r1 = r; continue; }
                    if (fmt == 1)
                        T_CHECK(l && r && mb_equal(l, l1, 0) && mb_equal(r, r1, 0),
                                "tsmm sparse %dx%d sp %g thread-independent", (int)m, (int)n, SPS[sp]);
                    mb_release(l); mb_release(r);
                }
            mb_release(l1); mb_release(r1);
            mb_release(xd); mb_release(xs); mb_release(xt);
            mb_release(refl); mb_release(refr);
        }
    br_set_threads(2);
}

/* [x v] as one dense block (the reference's input). */
static MB *cbind_of(const MB *x, const MB *v)
{
    BrErr e = {0};
    MB *c = mb_dense(x->rows, x->cols + v->cols, &e);
    for (int64_t i = 0; i < x->rows; i++) {
        for (int64_t j = 0; j < x->cols; j++) c->d[i * c->cols + j] = mb_get(x, i, j);
        for (int64_t j = 0; j < v->cols; j++) c->d[i * c->cols + x->cols + j] = mb_get(v, i, j);
    }
    mb_recount_nnz(c);
    return c;
}

/* k_tsmm_cbind (t([x v]) %*% [x v] in one pass, lmDS's normal equations)
 * against the reference product of the bound block, over row counts
 * around its 8 fixed ranges and 4-row steps and blocks, widths of x
 * through each tsmm leaf (small, mid, wide) and 1-3 columns of v, dense
 * and sparse x of several densities, 1 and 2 threads: equal within
 * 1e-12, exactly symmetric, the same bits for both thread counts; with
 * NaN and Inf in x, the cells of the separate kernels' IEEE products;
 * mismatched rows an error. */
static void test_tsmm_cbind(void)
{
    static const int64_t ns[] = {1, 5, 8, 9, 37, 1000, 20011};
    static const int64_t ms[] = {1, 2, 3, 4, 7, 10, 12, 15, 16, 17, 23, 24, 32, 41};
    for (size_t a = 0; a < sizeof ns / sizeof *ns; a++)
        for (size_t b = 0; b < sizeof ms / sizeof *ms; b++)
            for (int64_t k = 1; k <= 3; k++)
                for (int sp = 1; sp < 4; sp++) {
                    int64_t n = ns[a], m = ms[b];
                    if (n * m > 200000 && sp < 3) continue;
                    uint64_t seed = 9100 + a * 1000 + b * 10 + (uint64_t)(k * 3 + sp);
                    MB *xd = gen(n, m, SPS[sp], false, seed), *v = gen(n, k, 1.0, false, seed + 5);
                    MB *xs = mb_to_sparse(xd, &(BrErr){0});
                    MB *xv = cbind_of(xd, v), *ref = ref_mm(xv, true, xv);
                    MB *first = NULL;
                    for (int fmt = 0; fmt < 2; fmt++)
                        for (int th = 1; th <= 2; th++) {
                            br_set_threads(th);
                            BrErr e = {0};
                            MB *r = k_tsmm_cbind(fmt ? xs : xd, v, &e);
                            T_CHECK(r && valid(r) && r->rows == m + k && r->cols == m + k,
                                    "tsmm of [x v] %lldx%lld + %lld sp %g fmt %d: %s", (long long)n, (long long)m,
                                    (long long)k, SPS[sp], fmt, e.msg);
                            if (!r) continue;
                            T_MB_EQ(r, ref, 1e-12, "tsmm of [x v] %lldx%lld + %lld sp %g fmt %d th %d",
                                    (long long)n, (long long)m, (long long)k, SPS[sp], fmt, th);
                            bool sym = true;
                            for (int64_t i = 0; i < r->rows && sym; i++)
                                for (int64_t j = 0; j < i; j++)
                                    if (mb_get(r, i, j) != mb_get(r, j, i)) { sym = false; break; }
                            T_CHECK(sym, "tsmm of [x v] symmetric %lldx%lld fmt %d", (long long)n, (long long)m, fmt);
                            if (fmt == 0 && th == 1) first = r;
                            else {
                                if (fmt == 0) {
                                    bool same = true;
                                    for (int64_t i = 0; i < r->rows * r->cols && same; i++)
                                        same = mb_get(r, i / r->cols, i % r->cols) ==
                                               mb_get(first, i / r->cols, i % r->cols);
                                    T_CHECK(same, "tsmm of [x v] %lldx%lld + %lld: the same bits on 1 and 2 threads",
                                            (long long)n, (long long)m, (long long)k);
                                }
                                mb_release(r);
                            }
                        }
                    /* every ISA level (the small leaf with v's lane: AVX2
                     * and AVX-512, the same bits) */
                    KIsa isa0 = k_isa();
                    MB *top = NULL;
                    for (int isa = K_ISA_GENERIC; isa <= (int)k_isa_cpu() && sp == 3; isa++) {
                        k_isa_set((KIsa)isa);
                        BrErr e = {0};
                        MB *r = k_tsmm_cbind(xd, v, &e);
                        T_CHECK(r != NULL, "tsmm of [x v] at %s: %s", k_isa_name((KIsa)isa), e.msg);
                        if (!r) continue;
                        T_MB_EQ(r, ref, 1e-12, "tsmm of [x v] %lldx%lld + %lld at %s", (long long)n, (long long)m,
                                (long long)k, k_isa_name((KIsa)isa));
                        if (isa < K_ISA_AVX2) { mb_release(r); continue; }
                        if (top) {
                            T_CHECK(!memcmp(top->d, r->d, (size_t)(r->rows * r->cols) * sizeof(double)),
                                    "tsmm of [x v] %lldx%lld + %lld: the same bits at %s as at AVX2", (long long)n,
                                    (long long)m, (long long)k, k_isa_name((KIsa)isa));
                            mb_release(r);
                        } else {
                            top = r;
                        }
                    }
                    k_isa_set(isa0);
                    mb_release(top);
                    mb_release(first);
                    mb_release(xd); mb_release(xs); mb_release(v); mb_release(xv); mb_release(ref);
                }
    /* NaN and Inf in x: the IEEE cells of tsmm over the bound block */
    BrErr e = {0};
    MB *x = gen(3001, 7, 1.0, false, 77), *v = gen(3001, 2, 1.0, false, 78);
    x->d[5 * 7 + 2] = NAN;
    x->d[900 * 7 + 6] = INFINITY;
    v->d[1500 * 2 + 1] = -INFINITY;
    MB *xv = cbind_of(x, v), *want = k_tsmm(xv, true, &e), *got = k_tsmm_cbind(x, v, &e);
    T_CHECK(want && got, "non-finite: both ran (%s)", e.msg);
    if (want && got) T_MB_EQ(got, want, 1e-12, "tsmm of [x v] with NaN and Inf: the IEEE cells");
    mb_release(want); mb_release(got); mb_release(xv); mb_release(v);
    /* the same with one column v (the small leaf's v lane), Inf in v's
     * first and last rows (the padded reads) */
    v = gen(3001, 1, 1.0, false, 80);
    v->d[0] = INFINITY;
    v->d[3000] = -INFINITY;
    xv = cbind_of(x, v), want = k_tsmm(xv, true, &e), got = k_tsmm_cbind(x, v, &e);
    T_CHECK(want && got, "non-finite, one v: both ran (%s)", e.msg);
    if (want && got) T_MB_EQ(got, want, 1e-12, "tsmm of [x v] with NaN and Inf, one v: the IEEE cells");
    mb_release(want); mb_release(got); mb_release(xv); mb_release(v);
    /* rows that do not match: an error */
    MB *w = gen(3000, 1, 1.0, false, 79);
    BrErr e2 = {0};
    MB *bad = k_tsmm_cbind(x, w, &e2);
    T_CHECK(!bad && e2.code && strstr(e2.msg, "rows"), "mismatched rows: error (%s)", e2.msg);
    mb_release(bad); mb_release(w); mb_release(x);
    br_set_threads(2);
}

static void test_mmchain(void)
{
    static const int64_t shapes[][2] = {
        {0, 4}, {4, 0}, {1, 1}, {9, 1}, {1, 9}, {50, 6}, {6, 50}, {3000, 60}, {400, 700},
        {37, 3}, {2001, 13}, {5, 9}, {203, 10}, {96, 8}, {77, 16}, {1003, 5},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (int sp = 0; sp < 4; sp++)
            for (int c = 1; c <= 3; c += 2)
                for (int wk = 0; wk < 3; wk++) {   /* no w, m x 1, m x c */
                    int64_t m = shapes[s][0], n = shapes[s][1];
                    uint64_t seed = 9000 + s * 100 + sp * 10 + c + wk;
                    MB *xd = gen(m, n, SPS[sp], false, seed);
                    MB *xs = mb_to_sparse(xd, &(BrErr){0});
                    MB *v = gen(n, c, 1, false, seed + 1);
                    MB *w = wk ? gen(m, wk == 1 ? 1 : c, 0.9, wk == 2, seed + 2) : NULL;
                    MB *ref = ref_chain(xd, v, w);
                    for (int fmt = 0; fmt < 2; fmt++) {
                        MB *r1 = NULL;
                        for (int th = 1; th <= 2; th++) {
                            br_set_threads(th);
                            BrErr e = {0};
                            const MB *x = fmt ? xs : xd;
                            MB *r = k_mmchain(x, v, w, &e);
                            T_CHECK(r && valid(r), "mmchain valid %dx%d c %d w %d: %s",
                                    (int)m, (int)n, c, wk, e.msg);
                            if (r) T_MB_EQ(r, ref, 1e-12, "mmchain %dx%d sp %g c %d w %d fmt %d th %d",
                                           (int)m, (int)n, SPS[sp], c, wk, fmt, th);
                            if (th == 2) {
                                MB *r2 = k_mmchain(x, v, w, &e);
                                T_CHECK(r && r2 && mb_equal(r, r2, 0), "mmchain deterministic");
                                T_CHECK(r && r1 && mb_equal(r, r1, 0),
                                        "mmchain thread-independent %dx%d sp %g c %d w %d fmt %d",
                                        (int)m, (int)n, SPS[sp], c, wk, fmt);
                                mb_release(r2);
                                mb_release(r);
                            } else {
                                r1 = r;
                            }
                        }
                        mb_release(r1);
                    }
                    mb_release(xd); mb_release(xs); mb_release(v); mb_release(w);
                    mb_release(ref);
                }
    br_set_threads(2);
}

/* Reference mmchain with IEEE products: t(x) %*% (w * (x %*% v)) where
 * every cell of x multiplies, dense or sparse (0 * Inf is NaN, as in BLAS
 * and the fused plans: one semantics for every format, issue 23). */
static MB *ref_chain_ieee(const MB *x, const MB *v, const MB *w)
{
    BrErr e = {0};
    int64_t m = x->rows, n = x->cols, c = v->cols;
    MB *r = mb_dense(n, c, &e);
    double *q = calloc((size_t)c + 1, sizeof(double));
    for (int64_t i = 0; i < m; i++) {
        for (int64_t l = 0; l < c; l++) {
            q[l] = 0;
            for (int64_t j = 0; j < n; j++) {
                double a = mb_get(x, i, j);
                q[l] += a * mb_get(v, j, l);
            }
            if (w) q[l] *= mb_get(w, i, w->cols == 1 ? 0 : l);
        }
        for (int64_t j = 0; j < n; j++) {
            double a = mb_get(x, i, j);
            for (int64_t l = 0; l < c; l++) r->d[j * c + l] += a * q[l];
        }
    }
    free(q);
    mb_recount_nnz(r);
    return r;
}

/* mmchain over several fixed row blocks (about one per 2^16 multiply-adds,
 * so 2 to 13 blocks here, most not a power of 2): tall, wide and odd
 * widths, c = 1, 2, 5, v and w dense or sparse, against the reference and
 * bitwise equal for 1 and 2 threads. */
static void test_mmchain_blocks(void)
{
    static const struct { int64_t m, n; double sp; } cs[] = {
        {4099, 100, 1}, {20000, 7, 1}, {300, 1000, 1}, {5000, 1, 1}, {1025, 33, 0.5},
        {20000, 40, 0.1}, {500, 3000, 0.02}, {60000, 12, 0.1}, {40000, 20, 0.001},
        {3, 20000, 1}, {8195, 9, 1}, {6001, 24, 0.7},
    };
    for (size_t k = 0; k < sizeof cs / sizeof *cs; k++)
        for (int c = 1; c <= 5; c += c == 1 ? 1 : 3)
            for (int wk = 0; wk < 3; wk++) {
                int64_t m = cs[k].m, n = cs[k].n;
                if (c > 1 && m * n > 2000000) continue;
                uint64_t seed = 12000 + k * 100 + c * 10 + wk;
                MB *xd = gen(m, n, cs[k].sp, false, seed);
                MB *xs = mb_to_sparse(xd, &(BrErr){0});
                MB *v = gen(n, c, wk == 1 ? 0.3 : 1, wk == 1, seed + 1);
                MB *w = wk ? gen(m, wk == 1 ? 1 : c, 0.8, wk == 2, seed + 2) : NULL;
                MB *ref = ref_chain(xd, v, w);
                for (int fmt = 0; fmt < 2; fmt++) {
                    const MB *x = fmt ? xs : xd;
                    MB *r1 = NULL;
                    for (int th = 1; th <= 2; th++) {
                        br_set_threads(th);
                        BrErr e = {0};
                        MB *r = k_mmchain(x, v, w, &e);
                        T_CHECK(r && valid(r), "mmchain blocks valid %zu c %d w %d: %s", k, c, wk,
                                e.msg);
                        if (r) T_MB_EQ(r, ref, 1e-12, "mmchain blocks %zu c %d w %d fmt %d th %d",
                                       k, c, wk, fmt, th);
                        if (th == 1) r1 = r;
                        else {
                            T_CHECK(r && r1 && mb_equal(r, r1, 0),
                                    "mmchain blocks %zu c %d w %d fmt %d thread-independent",
                                    k, c, wk, fmt);
                            mb_release(r);
                        }
                    }
                    mb_release(r1);
                }
                mb_release(xd); mb_release(xs); mb_release(v); mb_release(w); mb_release(ref);
            }
    br_set_threads(2);
}

/* NaN and Inf in x, v and w: dense and sparse x follow IEEE products
 * (like BLAS); 1 and 2 threads agree bitwise. */
static void test_mmchain_nonfinite(void)
{
    static const int64_t shapes[][2] = { {7, 5}, {9, 1}, {1, 9}, {2100, 37}, {203, 10}, {48, 8}, {64, 13} };
    static const double bad[] = { NAN, INFINITY, -INFINITY };
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (int where = 0; where < 3; where++)       /* x, v, w */
            for (int b = 0; b < 3; b++)
                for (int c = 1; c <= 2; c++) {
                    int64_t m = shapes[s][0], n = shapes[s][1];
                    uint64_t seed = 15000 + s * 100 + where * 10 + b * 3 + c;
                    MB *xd = gen(m, n, 0.5, false, seed);
                    MB *v = gen(n, c, 1, false, seed + 1);
                    MB *w = gen(m, 1, 1, false, seed + 2);
                    MB *t = where == 0 ? xd : where == 1 ? v : w;
                    int64_t cell = (int64_t)(urand() * (double)(t->rows * t->cols));
                    if (t->d[cell] == 0) t->nnz++;
                    t->d[cell] = bad[b];
                    if (where == 0 && m > 2) {          /* a second one, in another row */
                        xd->d[(m / 2) * n] = bad[(b + 1) % 3];
                        mb_recount_nnz(xd);
                    }
                    MB *xs = mb_to_sparse(xd, &(BrErr){0});
                    for (int fmt = 0; fmt < 2; fmt++) {
                        const MB *x = fmt ? xs : xd;
                        MB *ref = ref_chain_ieee(x, v, w), *r1 = NULL;
                        for (int th = 1; th <= 2; th++) {
                            br_set_threads(th);
                            BrErr e = {0};
                            MB *r = k_mmchain(x, v, w, &e);
                            T_CHECK(r && valid(r), "mmchain nonfinite valid: %s", e.msg);
                            if (r) T_MB_EQ(r, ref, 1e-12,
                                           "mmchain nonfinite %dx%d in %d val %g c %d fmt %d th %d",
                                           (int)m, (int)n, where, bad[b], c, fmt, th);
                            if (th == 1) r1 = r;
                            else {
                                T_CHECK(r && r1 && mb_equal(r, r1, 0),
                                        "mmchain nonfinite thread-independent");
                                mb_release(r);
                            }
                        }
                        mb_release(r1);
                        mb_release(ref);
                    }
                    mb_release(xd); mb_release(xs); mb_release(v); mb_release(w);
                }
    br_set_threads(2);
}

/* The narrow dense kernel (AVX-512 chain_narrow, X of at most 16
 * columns, one column of v): a group's row tails are read as whole
 * vectors reaching into the next row, whose lanes must not take part.
 * A dense X without zeros (so no fallback to the two products) and v
 * without zeros, one +Inf in row r at column j: the exact result has
 * +Inf in every cell (all values positive); a next-row Inf leaking into
 * row r - 1's dot product as Inf * 0 would make NaN there. Every r and j
 * around the group boundaries, widths 1..16, against the IEEE reference,
 * 1 and 2 threads. */
static void test_mmchain_narrow(void)
{
    static const int64_t ns[] = { 1, 2, 3, 5, 7, 8, 9, 10, 13, 15, 16 };
    const int64_t m = 35;
    for (size_t a = 0; a < sizeof ns / sizeof *ns; a++)
        for (int64_t r = 1; r < m; r += 3) {
            int64_t n = ns[a], j = (r / 3) % n;
            BrErr e = {0};
            MB *x = mb_dense(m, n, &e), *v = mb_dense(n, 1, &e);
            for (int64_t i = 0; i < m * n; i++) x->d[i] = 0.5 + (double)((i * 7) % 11) / 16;
            for (int64_t i = 0; i < n; i++) v->d[i] = 0.25 + (double)(i % 3) / 8;
            x->d[r * n + j] = INFINITY;
            mb_recount_nnz(x);
            mb_recount_nnz(v);
            MB *ref = ref_chain_ieee(x, v, NULL);
            for (int th = 1; th <= 2; th++) {
                br_set_threads(th);
                MB *got = k_mmchain(x, v, NULL, &e);
                T_CHECK(got && valid(got), "mmchain narrow valid: %s", e.msg);
                if (got) T_MB_EQ(got, ref, 0, "mmchain narrow %lldx%lld Inf at (%lld, %lld) th %d", (long long)m,
                                 (long long)n, (long long)r, (long long)j, th);
                mb_release(got);
            }
            mb_release(ref); mb_release(x); mb_release(v);
        }
    br_set_threads(2);
}

/* The dense kernel's groups of 8 rows (AVX-512) and the row tails after
 * them: row counts around multiples of 8, widths around multiples of 8
 * (masked row tails), c = 1, 2, 3, w none / m x 1 / m x c, each finite
 * and with one NaN or Inf (in turn: in the masked tail of x, in a full
 * vector of x, in v's tail, in w), against the IEEE reference; 1 and 2
 * threads agree bitwise. */
static void test_mmchain_groups(void)
{
    static const int64_t ms[] = { 8, 15, 16, 17, 24, 71 };
    static const int64_t ns[] = { 1, 3, 7, 8, 9, 15, 16, 17, 24, 100 };
    static const double bad[] = { NAN, INFINITY, -INFINITY };
    for (size_t a = 0; a < sizeof ms / sizeof *ms; a++)
        for (size_t b = 0; b < sizeof ns / sizeof *ns; b++)
            for (int c = 1; c <= 3; c++)
                for (int wk = 0; wk < 3; wk++)
                    for (int mk = 0; mk < 2; mk++) {
                        int mode = mk ? 1 + (int)((a + b + (size_t)c + (size_t)wk) % 4) : 0;
                        int64_t m = ms[a], n = ns[b];
                        uint64_t seed = 17000 + a * 1000 + b * 100 + c * 20 + wk * 5 + mode;
                        MB *xd = gen(m, n, 0.9, false, seed);
                        MB *v = gen(n, c, 1, false, seed + 1);
                        MB *w = wk ? gen(m, wk == 1 ? 1 : c, 1, false, seed + 2) : NULL;
                        double val = bad[(a + b + (size_t)c) % 3];
                        int64_t row = (m / 8) * 8 - 1 - (int64_t)(seed % 3);   /* in the last group */
                        if (row < 0) row = 0;
                        if (mode == 1) xd->d[row * n + n - 1] = val;             /* masked tail */
                        else if (mode == 2) xd->d[row * n] = val;                 /* first vector */
                        else if (mode == 3) v->d[(n - 1) * c + c - 1] = val;
                        else if (mode == 4 && w) w->d[row * w->cols] = val;
                        mb_recount_nnz(xd); mb_recount_nnz(v);
                        if (w) mb_recount_nnz(w);
                        MB *ref = ref_chain_ieee(xd, v, w), *r1 = NULL;
                        for (int th = 1; th <= 2; th++) {
                            br_set_threads(th);
                            BrErr e = {0};
                            MB *r = k_mmchain(xd, v, w, &e);
                            T_CHECK(r && valid(r), "mmchain groups valid: %s", e.msg);
                            if (r) T_MB_EQ(r, ref, 1e-12, "mmchain groups %dx%d c %d w %d mode %d th %d",
                                           (int)m, (int)n, c, wk, mode, th);
                            if (th == 1) r1 = r;
                            else {
                                T_CHECK(r && r1 && mb_equal(r, r1, 0),
                                        "mmchain groups thread-independent %dx%d c %d w %d mode %d",
                                        (int)m, (int)n, c, wk, mode);
                                mb_release(r);
                            }
                        }
                        mb_release(r1); mb_release(ref);
                        mb_release(xd); mb_release(v); mb_release(w);
                    }
    br_set_threads(2);
}

static void test_errors(void)
{
    BrErr e = {0};
    MB *a = gen(2, 3, 1, false, 1), *b = gen(2, 3, 1, true, 2), *v = gen(3, 1, 1, false, 3);
    MB *r = k_matmul(a, b, &e);
    T_CHECK(!r && e.code && strstr(e.msg, "dimension") && strstr(e.msg, "2x3"),
            "matmul dimension error: %s", e.msg);
    br_err_clear(&e);
    r = k_matmul_tl(a, v, &e);
    T_CHECK(!r && strstr(e.msg, "dimension"), "tl dimension error: %s", e.msg);
    br_err_clear(&e);
    r = k_mmchain(a, a, NULL, &e);
    T_CHECK(!r && strstr(e.msg, "dimension"), "mmchain dimension error: %s", e.msg);
    br_err_clear(&e);
    r = k_mmchain(a, v, v, &e);
    T_CHECK(!r && strstr(e.msg, "dimension"), "mmchain w dimension error: %s", e.msg);
    mb_release(a); mb_release(b); mb_release(v);

    /* empty products are cheap sparse blocks */
    br_err_clear(&e);
    MB *z = mb_empty(100000, 1000, &e), *d = gen(1000, 50, 1, false, 4);
    r = k_matmul(z, d, &e);
    T_CHECK(r && r->sparse && r->nnz == 0 && r->rows == 100000 && r->cols == 50, "empty product");
    mb_release(r);
    MB *i0a = gen(4, 0, 1, false, 5), *i0b = gen(0, 3, 1, false, 6);
    r = k_matmul(i0a, i0b, &e);
    T_CHECK(r && r->rows == 4 && r->cols == 3 && r->nnz == 0, "inner dimension 0");
    mb_release(r); mb_release(i0a); mb_release(i0b);
    mb_release(z); mb_release(d);
}

/* y %*% X, X %*% y, t(y) %*% X and t(X) %*% y with a 1x1 y and inner
 * sizes that differ: the scalar product y * X of X's shape (op(X)'s), as
 * SystemDS computes it once it knows y is 1x1; every cell one IEEE
 * product, so compared bit for bit with y * x per cell, y non-finite and
 * zero included. A 1x1 y with matching inner sizes goes the product's
 * usual way and gives the same values. */
static void test_one_cell(void)
{
    static const int64_t SH[][2] = {{2, 3}, {3, 1}, {1, 4}, {37, 29}, {300, 7}};
    static const double YS[] = {2.5, 0, -1, NAN, INFINITY};
    BrErr e = {0};
    for (size_t s = 0; s < sizeof SH / sizeof SH[0]; s++)
        for (size_t q = 0; q < sizeof SPS / sizeof SPS[0]; q++)
            for (int sparse = 0; sparse < 2; sparse++)
                for (size_t w = 0; w < sizeof YS / sizeof YS[0]; w++) {
                    int64_t m = SH[s][0], n = SH[s][1];
                    MB *x = gen(m, n, SPS[q], sparse, 100 + s * 10 + q);
                    MB *y = mb_dense(1, 1, &e);
                    y->d[0] = YS[w];
                    mb_recount_nnz(y);
                    for (int form = 0; form < 4; form++) {
                        bool tx = form == 3;      /* t(X) %*% y */
                        bool left = form == 0 || form == 2;
                        int64_t inner_l = left ? 1 : (tx ? m : n), inner_r = left ? m : 1;
                        if (inner_l == inner_r && !(form == 0 && m == 1)) continue;
                        MB *r = form == 0 ? k_matmul(y, x, &e) : form == 1 ? k_matmul(x, y, &e)
                              : form == 2 ? k_matmul_tl(y, x, &e) : k_matmul_tl(x, y, &e);
                        int64_t rr = tx ? n : m, rc = tx ? m : n;
                        bool ok = r && valid(r) && r->rows == rr && r->cols == rc;
                        for (int64_t i = 0; ok && i < rr; i++)
                            for (int64_t j = 0; ok && j < rc; j++) {
                                double want = YS[w] * (tx ? mb_get(x, j, i) : mb_get(x, i, j));
                                double got = mb_get(r, i, j);
                                ok = (isnan(want) && isnan(got)) || memcmp(&want, &got, sizeof want) == 0 ||
                                     (want == 0 && got == 0);
                            }
                        T_CHECK(ok, "one cell form %d %lldx%lld sp %g %s y %g: %s", form, (long long)m,
                                (long long)n, SPS[q], sparse ? "sparse" : "dense", YS[w], r ? "" : e.msg);
                        br_err_clear(&e);
                        mb_release(r);
                    }
                    mb_release(x);
                    mb_release(y);
                }
}

/* The conformance case mm_chain: C1 = t(X) %*% (w * (X %*% v)). */
static void test_conformance_values(void)
{
    BrErr e = {0};
    double xv[] = {1, 2, 0, -1, 3, 1, 2, 2, 2, 0, 1, -2, 4, 0, 1};
    double vv[] = {0.5, -1, 2}, wv[] = {1, 2, 0.5, 3, 1}, c1[] = {20.5, -24, 34};
    MB *x = mb_dense(5, 3, &e), *v = mb_dense(3, 1, &e), *w = mb_dense(5, 1, &e);
    MB *want = mb_dense(3, 1, &e);
    memcpy(x->d, xv, sizeof xv); memcpy(v->d, vv, sizeof vv);
    memcpy(w->d, wv, sizeof wv); memcpy(want->d, c1, sizeof c1);
    mb_recount_nnz(x); mb_recount_nnz(v); mb_recount_nnz(w); mb_recount_nnz(want);
    MB *r = k_mmchain(x, v, w, &e);
    T_MB_EQ(r, want, 1e-14, "mm_chain C1");
    mb_release(r);
    double g1[] = {22, 3, 7, 3, 18, 5, 7, 5, 10};
    MB *g = mb_dense(3, 3, &e);
    memcpy(g->d, g1, sizeof g1);
    mb_recount_nnz(g);
    r = k_tsmm(x, true, &e);
    T_MB_EQ(r, g, 0, "mm_gram XtX");
    mb_release(r);
    mb_release(x); mb_release(v); mb_release(w); mb_release(want); mb_release(g);
}

/* IEEE products over zeros in every format (issue 23): a NaN or +-Inf
 * meeting a zero makes its dot product NaN, also where a sparse operand's
 * zeros are skipped or an operand is empty. k_matmul, k_matmul_tl and
 * k_tsmm over dense and sparse a and b give the bits of a dense
 * reference product that multiplies every cell. */
/* BRAID_MM_ZEROS=skip (SystemDS's products, for reference runs): the
 * reference leaves out the terms whose left factor is zero */
static bool ref_skip_left;

static MB *ref_ieee(const MB *a, bool ta, const MB *b, bool tb)
{
    BrErr e = {0};
    int64_t m = ta ? a->cols : a->rows, k = ta ? a->rows : a->cols, n = tb ? b->rows : b->cols;
    MB *r = mb_dense(m, n, &e);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t l = 0; l < k; l++) {
                double av = ta ? mb_get(a, l, i) : mb_get(a, i, l);
                if (av != 0 || !ref_skip_left) s += av * (tb ? mb_get(b, j, l) : mb_get(b, l, j));
            }
            r->d[i * n + j] = s;
        }
    mb_recount_nnz(r);
    return r;
}

static void test_matmul_nonfinite(void)
{
    static const int64_t shapes[][3] = { {7, 5, 4}, {30, 12, 9}, {1, 6, 5}, {9, 1, 3}, {40, 20, 1} };
    static const double bad[] = { NAN, INFINITY, -INFINITY };
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (int where = 0; where < 3; where++)        /* a, b, both */
            for (int sp = 0; sp < 3; sp++) {            /* density 0.3, 0.05, empty */
                int64_t m = shapes[s][0], k = shapes[s][1], n = shapes[s][2];
                uint64_t seed = 17000 + s * 100 + where * 10 + sp;
                double dens = sp == 0 ? 0.3 : sp == 1 ? 0.05 : 0;
                MB *a = gen(m, k, where == 1 ? 0.6 : dens, false, seed), *b = gen(k, n, where == 0 ? 0.6 : dens,
                                                                                     false, seed + 1);
                for (int q = 0; q < 2; q++) {
                    MB *t = q == 0 ? a : b;
                    if (where != 2 && where != q) continue;
                    int64_t cell = (int64_t)(urand() * (double)(t->rows * t->cols));
                    t->d[cell] = bad[(seed + q) % 3];
                    mb_recount_nnz(t);
                }
                MB *ref = ref_ieee(a, false, b, false), *reft = NULL, *refs = ref_ieee(a, true, a, false);
                MB *at = mb_dense(k, m, &(BrErr){0});
                for (int64_t i = 0; i < m; i++)
                    for (int64_t l = 0; l < k; l++) at->d[l * m + i] = a->d[i * k + l];
                mb_recount_nnz(at);
                reft = ref_ieee(at, true, b, false);
                for (int fa = 0; fa < 2; fa++)
                    for (int fb = 0; fb < 2; fb++) {
                        BrErr e = {0};
                        MB *x = fa ? mb_to_sparse(a, &e) : mb_retain(a), *y = fb ? mb_to_sparse(b, &e) : mb_retain(b);
                        MB *xt = fa ? mb_to_sparse(at, &e) : mb_retain(at);
                        MB *r = k_matmul(x, y, &e), *rt = k_matmul_tl(xt, y, &e), *rs = k_tsmm(x, true, &e);
                        T_CHECK(r && rt && rs && valid(r) && valid(rt) && valid(rs), "matmul nonfinite valid: %s",
                                e.msg);
                        if (r && rt && rs) {
                            T_MB_EQ(r, ref, 1e-12, "matmul nonfinite %zu in %d sp %d fmt %d%d", s, where, sp, fa, fb);
                            T_MB_EQ(rt, reft, 1e-12, "matmul_tl nonfinite %zu in %d sp %d fmt %d%d", s, where, sp,
                                    fa, fb);
                            T_MB_EQ(rs, refs, 1e-12, "tsmm nonfinite %zu in %d sp %d fmt %d", s, where, sp, fa);
                        }
                        mb_release(r); mb_release(rt); mb_release(rs);
                        mb_release(x); mb_release(y); mb_release(xt);
                    }
                mb_release(a); mb_release(b); mb_release(at);
                mb_release(ref); mb_release(reft); mb_release(refs);
            }
}

/* The finiteness flag (matrix/mb.h): k_mm_ieee_zeros asks whether an
 * operand holds NaN/Inf only when the other holds a zero; a known flag
 * answers without reading the block again. Results must be the IEEE
 * reference's bits whatever the flag, and the flag must follow every
 * change of the values: rand and readers set it, a scan saves it,
 * in-place left indexing keeps it only where both sides are known
 * finite. Scans are counted (mb_fin_scans), not timed. */
static void fin_product(MB *x, const MB *w, int64_t want_scans, const char *what)
{
    BrErr e = {0};
    int64_t s0 = mb_fin_scans();
    MB *r = k_matmul(x, w, &e), *ref = ref_ieee(x, false, w, false);
    T_CHECK(mb_fin_scans() - s0 == want_scans, "%s: %lld scans, want %lld", what,
            (long long)(mb_fin_scans() - s0), (long long)want_scans);
    T_CHECK(r && valid(r), "%s: valid (%s)", what, e.msg);
    if (r) T_MB_EQ(r, ref, 1e-12, "%s", what);
    mb_release(r);
    mb_release(ref);
}

static void test_fin_flag(void)
{
    BrErr e = {0};
    MB *w = gen(6, 1, 1.0, false, 31);
    w->d[2] = 0;   /* the zero that makes the product ask about x */
    mb_recount_nnz(w);
    /* rand knows its values: no scan at all */
    MB *x = k_rand(300, 6, -2, 3, 1.0, "uniform", 0, 7, &e);
    T_CHECK(x && x->fin == MB_FIN_FINITE, "rand: flag finite");
    fin_product(x, w, 0, "rand X %*% w");
    MB *big = k_rand(3, 3, -1e308, 1e308, 1.0, "uniform", 0, 7, &e);
    T_CHECK(big && big->fin == MB_FIN_UNKNOWN, "rand near the largest double: flag unknown");
    mb_release(big);
    /* a block built by hand: scanned once, then the flag answers */
    for (int sparse = 0; sparse < 2; sparse++) {
        MB *y = gen(40, 6, sparse ? 0.2 : 1.0, sparse, 41 + (uint64_t)sparse);
        T_CHECK(y->fin == MB_FIN_UNKNOWN, "new block: flag unknown");
        fin_product(y, w, 1 + sparse, "first product scans");   /* sparse y: w too, once */
        T_CHECK(y->fin == MB_FIN_FINITE, "the scan is kept");
        fin_product(y, w, 0, "second product reads the flag");
        /* a NaN written in place: the flag says so (no scan), the
         * product marks row 3 */
        T_CHECK(k_lix_scalar_inplace(y, 3, 2, NAN, &e) == 0 && y->fin == MB_FIN_NONFINITE, "lix NaN sets it");
        fin_product(y, w, 0, "product after an in-place NaN");
        T_CHECK(y->fin == MB_FIN_NONFINITE, "NaN kept");
        fin_product(y, w, 0, "NaN known");
        /* a finite block over the NaN: unknown again, then finite */
        MB *one = k_rand(1, 1, 1, 1, 1.0, "uniform", 0, 3, &e);
        T_CHECK(k_lix_inplace(y, 3, 4, 2, 3, one, &e) == 0 && y->fin == MB_FIN_UNKNOWN, "lix over a NaN");
        fin_product(y, w, 1, "product after the NaN is overwritten");
        T_CHECK(y->fin == MB_FIN_FINITE, "finite again");
        /* known finite on both sides stays known; an unknown side or a
         * non-finite scalar drops it */
        T_CHECK(k_lix_inplace(y, 0, 1, 0, 1, one, &e) == 0 && y->fin == MB_FIN_FINITE, "finite into finite");
        T_CHECK(k_lix_scalar_inplace(y, 1, 1, 2.5, &e) == 0 && y->fin == MB_FIN_FINITE, "finite scalar");
        MB *u = gen(1, 1, 1.0, false, 5);
        u->d[0] = INFINITY;
        T_CHECK(k_lix_inplace(y, 5, 6, 2, 3, u, &e) == 0 && y->fin == MB_FIN_UNKNOWN, "unknown source");
        fin_product(y, w, 1, "product after an in-place Inf");
        T_CHECK(k_lix_scalar_inplace(y, 5, 2, -INFINITY, &e) == 0 && y->fin == MB_FIN_NONFINITE, "Inf scalar");
        fin_product(y, w, 0, "product after an in-place -Inf");
        mb_release(u);
        mb_release(one);
        mb_release(y);
    }
    /* borrowed storage never keeps an answer (its owner may write) */
    MB *b = gen(5, 6, 1.0, false, 51);
    b->ext = MB_EXT_D;
    mb_fin_set(b, false);
    T_CHECK(b->fin == MB_FIN_UNKNOWN, "borrowed: not set");
    fin_product(b, w, 1, "borrowed: scanned");
    fin_product(b, w, 1, "borrowed: scanned again");
    b->ext = 0;
    mb_release(b);
    /* a dense product's result gets its flag from the recount of its
     * non-zeros (mm_finish, after dgemm: k over the skinny and low-rank
     * leaves' 128 and 32): a product over it asks the flag, also when a
     * row of 1e308 overflowed to Inf */
    MB *ones = k_rand(160, 6, 1, 1, 1.0, "uniform", 0, 3, &e);
    for (int over = 0; over < 2; over++) {
        MB *y = gen(40, 160, 1.0, false, 61);
        if (over)
            for (int j = 0; j < 160; j++) y->d[7 * 160 + j] = 1e308;
        MB *p = k_matmul(y, ones, &e);
        T_CHECK(p && !p->sparse && p->fin == (over ? MB_FIN_NONFINITE : MB_FIN_FINITE),
                "product result (overflow %d): flag %d", over, p ? p->fin : -1);
        fin_product(p, w, 0, over ? "product over a product with Inf" : "product over a finite product");
        mb_release(p);
        mb_release(y);
    }
    mb_release(ones);
    /* the products whose leaves count the non-zeros themselves (gemv's
     * rows, the skinny leaf, the low-rank leaf on AVX-512; mm_finish is
     * not called) set the flag in that pass: finite, and non-finite
     * when a row of 1e308 overflows, at every SIMD level */
    {
        static const int64_t sh[3][3] = {{70, 40, 1}, {90, 100, 8}, {300, 20, 300}};   /* m, k, n */
        static const char *const nm[3] = {"gemv", "skinny", "low-rank"};
        KIsa isa0 = k_isa();
        for (int isa = K_ISA_GENERIC; isa <= (int)k_isa_cpu(); isa++) {
            k_isa_set((KIsa)isa);
            for (int q = 0; q < 3; q++) {
                MB *rhs = k_rand(sh[q][1], sh[q][2], 1, 1, 1.0, "uniform", 0, 3, &e);
                for (int over = 0; over < 2; over++) {
                    MB *y = gen(sh[q][0], sh[q][1], 1.0, false, 71 + (uint64_t)q);
                    if (over)
                        for (int j = 0; j < sh[q][1]; j++) y->d[(sh[q][0] - 1) * sh[q][1] + j] = 1e308;
                    int64_t s0 = mb_fin_scans();
                    MB *p = k_matmul(y, rhs, &e);
                    T_CHECK(p && p->fin == (over ? MB_FIN_NONFINITE : MB_FIN_FINITE) && mb_fin_scans() == s0,
                            "%s %s (overflow %d): flag %d, %lld scans", nm[q], k_isa_name((KIsa)isa), over,
                            p ? p->fin : -1, (long long)(mb_fin_scans() - s0));
                    mb_release(p);
                    mb_release(y);
                }
                mb_release(rhs);
            }
        }
        k_isa_set(isa0);
    }
    /* readers of text formats leave the answer */
    char dir[] = "/tmp/braid_finflag_XXXXXX", path[64];
    T_CHECK(mkdtemp(dir) != NULL, "tmpdir");
    static const char *const csv[2] = {"1,2\n3,4\n", "1,nan\n3,4\n"};
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/m%d.csv", dir, k);
        t_put(path, csv[k]);
        IoReadOpts o;
        io_read_opts_init(&o);
        o.format = "csv";
        MB *m = io_read_matrix(path, &o, &e);
        T_CHECK(m && m->fin == (k ? MB_FIN_NONFINITE : MB_FIN_FINITE), "csv %d: flag %d (%s)", k, m ? m->fin : -1,
                e.msg);
        mb_release(m);
        unlink(path);
    }
    rmdir(dir);
    mb_release(x);
    mb_release(w);
}

/* With 2 threads, uncrowded and crowded (br_par pinned; counted as
 * -stats counts it): t(X) %*% X over a 512 x 512 X (6.7e7 multiply-adds,
 * over BLAS_PAR_MIN, under BLAS_PAR_CROWDED_MIN: one dsyrk) takes
 * OpenBLAS's threads when the machine is not crowded and one thread when
 * it is (its mirror of the triangle asks br_par too); a 512^3 product (fixed blocks of single-threaded dgemm calls,
 * gemm_blocks) a team of braid's threads in both states (over 8 *
 * BR_PAR_CROWDED_MIN multiply-adds, gemm_team); each the same values
 * either way (the product's bits too). */
static void test_blas_crowded(void)
{
    BrErr e = {0};
    int nt0 = br_threads();
    br_set_threads(2);
    MB *a = gen(512, 512, 1.0, false, 11), *b = gen(512, 512, 1.0, false, 12), *r[2][2];
    int64_t teams[2][2], kept[2][2];
    for (int op = 0; op < 2; op++)
        for (int pin = 0; pin < 2; pin++) {
            int64_t t0, k0;
            br_par_pin(pin);
            br_par_counts(&t0, &k0);
            r[op][pin] = op ? k_matmul(a, b, &e) : k_tsmm(a, true, &e);
            br_par_counts(&teams[op][pin], &kept[op][pin]);
            teams[op][pin] -= t0;
            kept[op][pin] -= k0;
        }
    br_par_pin(-1);
    T_CHECK(r[0][0] && r[0][1] && r[1][0] && r[1][1], "blas crowded: %s", e.msg);
    T_CHECK(teams[0][0] >= 1 && kept[0][0] == 0 && teams[0][1] == 0 && kept[0][1] >= 1,
            "blas crowded tsmm: teams %lld / %lld, kept %lld / %lld", (long long)teams[0][0],
            (long long)teams[0][1], (long long)kept[0][0], (long long)kept[0][1]);
    T_CHECK(teams[1][0] == 1 && kept[1][0] == 0 && teams[1][1] == 1 && kept[1][1] == 0,
            "blas crowded product: teams %lld / %lld, kept %lld / %lld", (long long)teams[1][0],
            (long long)teams[1][1], (long long)kept[1][0], (long long)kept[1][1]);
    if (r[0][0] && r[0][1]) T_MB_EQ(r[0][1], r[0][0], 1e-12, "blas crowded: 512 x 512 tsmm");
    if (r[1][0] && r[1][1]) T_MB_EQ(r[1][1], r[1][0], 0, "blas crowded: 512^3 product");
    for (int op = 0; op < 2; op++) { mb_release(r[op][0]); mb_release(r[op][1]); }
    mb_release(a); mb_release(b);
    br_set_threads(nt0);
}

/* Products whose own parallel regions ask br_par (nthreads_for,
 * gemm_team), each between BR_PAR_MIN and the crowded threshold: teams
 * when the machine is not crowded, one thread when it is, the same bits
 * (t_crowded). */
typedef struct CrowdMm { MB *x, *v, *y, *a, *b, *s, *w, *w2, *t; } CrowdMm;

static void crowded_mm_run(void *arg, MB **r)
{
    const CrowdMm *c = arg;
    BrErr e = {0};
    r[0] = k_matmul(c->x, c->v, &e);      /* dgemv by row ranges */
    r[1] = k_matmul_tl(c->x, c->y, &e);   /* t(X) %*% y by row groups */
    r[2] = k_matmul(c->a, c->b, &e);      /* gemm_in_blocks */
    r[3] = k_matmul(c->s, c->w, &e);      /* sparse %*% dense */
    r[4] = k_matmul_tl(c->s, c->w2, &e);  /* t(sparse) %*% dense */
    r[5] = k_tsmm(c->t, true, &e);        /* syrk in fixed groups */
}

static void crowded_mm(void)
{
    CrowdMm c = {gen(2000, 100, 1.0, false, 21), gen(100, 1, 1.0, false, 22), gen(2000, 1, 1.0, false, 23),
                 gen(256, 100, 1.0, false, 24), gen(100, 100, 1.0, false, 25), gen(2000, 100, 0.1, true, 26),
                 gen(100, 4, 1.0, false, 27), gen(2000, 4, 1.0, false, 28), gen(8192, 16, 1.0, false, 29)};
    t_crowded("mm", 6, 6, crowded_mm_run, &c);
    MB *all[] = {c.x, c.v, c.y, c.a, c.b, c.s, c.w, c.w2, c.t};
    for (size_t q = 0; q < sizeof all / sizeof *all; q++) mb_release(all[q]);
}

/* Whether the mapping holding a is advised for huge pages; -1: not
 * found. */
static int advised_huge(const void *a)
{
    long huge = 0;
    bool advised = false;
    return t_smaps_of(a, &huge, &advised) ? advised : -1;
}

/* k_blas_ready (mm.c blas_buffers_huge), first in the process: it
 * advises nearly untouched large mappings (OpenBLAS's buffers) only; a
 * large array the process has written stays as it was, and products
 * after it are the same. */
static void test_blas_ready(void)
{
    size_t n = (size_t)48 << 20;
    double *data = malloc(n);   /* above the mmap threshold: a mapping of its own */
    T_CHECK(data != NULL, "48 MB array");
    if (!data) return;
    for (size_t i = 0; i < n / 8; i++) data[i] = (double)(i % 7);
    int before = advised_huge(data);
    k_blas_ready(1e9);
    /* (-1: no /proc/self/smaps to read) */
    T_CHECK(before == -1 || (before == 0 && advised_huge(data) == 0), "a written array is not advised (%d -> %d)",
            before, advised_huge(data));
    bool same = true;
    for (size_t i = 0; i < n / 8 && same; i++) same = data[i] == (double)(i % 7);
    T_CHECK(same, "the array keeps its values");
    free(data);
    BrErr e = {0};
    br_set_threads(2);
    MB *a = gen(300, 200, 1.0, false, 11), *b = gen(200, 150, 1.0, false, 12), *ref = ref_mm(a, false, b);
    MB *c = k_matmul(a, b, &e);
    T_CHECK(c && ref, "product after k_blas_ready: %s", e.msg);
    if (c && ref) T_MB_EQ(c, ref, 1e-12, "product after k_blas_ready");
    br_set_threads(0);
    mb_release(ref);
    mb_release(a);
    mb_release(b);
    mb_release(c);
}

int main(void)
{
    test_blas_ready();
    test_blas_crowded();
    crowded_mm();
    test_matmul();
    test_matmul_big_sparse();
    test_sd_narrow();
    test_gemm_blocks();
    test_skinny();
    test_lowk();
    test_tsmm();
    test_tsmm_cbind();
    test_tsmm_small();
    test_gemv_leaves();
    test_mmchain();
    test_mmchain_blocks();
    test_mmchain_nonfinite();
    test_matmul_nonfinite();
    /* the same products in SystemDS's reference mode, then IEEE again */
    setenv("BRAID_MM_ZEROS", "skip", 1);
    ref_skip_left = true;
    test_matmul_nonfinite();
    unsetenv("BRAID_MM_ZEROS");
    ref_skip_left = false;
    test_fin_flag();
    test_mmchain_groups();
    test_mmchain_narrow();
    test_errors();
    test_one_cell();
    test_conformance_values();
    return t_done("test_mm");
}
