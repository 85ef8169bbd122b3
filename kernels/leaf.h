/* leaf.h: the ISA leaf kernels of kernels/ and their choice at run time
 * (ARCHITECTURE.md: SIMD code lives only in leaf files, chosen by cpuid).
 * Internal to kernels/ (and codegen/'s machine measurements).
 *
 * A leaf file (kernels/<name>_leaf.c) holds the inner loops of kernels: no
 * threads, no allocation, no error paths. The Makefile compiles it once
 * for the target's baseline (the generic copy: the portable fallback)
 * and, on x86-64, once more per SIMD level with -march=x86-64-v3 (avx2)
 * and -march=x86-64-v4 (avx512) and -DK_ISA=<level>. Each copy defines
 * one table of function pointers named K_LEAF(name), i.e. name_<level>,
 * so every copy has the same signatures; callers take the table of the
 * level k_isa() chose, e.g. k_leaves(k_isa())->ew->unary(...).
 *
 * Results: the copies compile the same C (explicit fma, no contraction:
 * -std=c11 implies -ffp-contract=off) with every lane written out, so
 * they give the same bits, except where a leaf file says otherwise
 * (`omp simd` reductions, whose partial sums follow the vector width).
 * Intrinsics appear only under the feature macros of their level
 * (__AVX2__, __AVX512F__); the generic copy leaves such entries NULL or
 * runs the portable loop. */
#ifndef BRAID_K_LEAF_H
#define BRAID_K_LEAF_H

#include <stdbool.h>
#include <stdint.h>

#include "../base/ops.h"
#include "../matrix/mb.h"

/* SIMD levels, lowest first. */
typedef enum { K_ISA_GENERIC, K_ISA_AVX2, K_ISA_AVX512, K_ISA__COUNT } KIsa;

/* The level in use: the highest this CPU and OS run (k_isa_cpu), capped
 * by BRAID_ISA=generic|avx2|avx512 (read once) or by k_isa_set. */
KIsa k_isa(void);
/* The highest level this CPU and OS run (generic off x86-64). */
KIsa k_isa_cpu(void);
/* Caps the level in use at isa (process-wide; tests and benchmarks
 * compare the copies); returns the level now in use. */
KIsa k_isa_set(KIsa isa);
/* "generic", "avx2", "avx512". */
const char *k_isa_name(KIsa isa);

/* The table name of the copy being compiled (see above). */
#ifndef K_ISA
#define K_ISA generic
#endif
#define K_LEAF_CAT_(name, isa) name##_##isa
#define K_LEAF_CAT(name, isa) K_LEAF_CAT_(name, isa)
#define K_LEAF(name) K_LEAF_CAT(name, K_ISA)

/* ---- reorg_leaf.c: transposition ---- */
typedef struct KReorgLeaf {
    /* Transposes the tile rows [i0, i1) x columns [j0, j1) of the
     * row-major m x n matrix a into c (n x m row-major): c[j*m + i] =
     * a[i*n + j]. nt: the tile may be written with non-temporal stores
     * (then a store fence), when c + j*m + i is 32-byte aligned for
     * i - i0 a multiple of 8 (the caller checks); a hint. */
    void (*transpose_tile)(const double *a, double *c, int64_t m, int64_t n, int64_t i0, int64_t i1,
                           int64_t j0, int64_t j1, bool nt);
} KReorgLeaf;
extern const KReorgLeaf k_reorg_leaf_generic, k_reorg_leaf_avx2, k_reorg_leaf_avx512;

/* ---- ew_leaf.c: flat elementwise loops ---- */
typedef struct KEwLeaf {
    /* o[k] = op(x[k]), k < n (op: a unary elementwise operator; o may
     * be x) */
    void (*unary)(OpCode op, const double *x, double *o, int64_t n);
    /* o[ci[k]] = op(v[k]), k < n */
    void (*unary_scatter)(OpCode op, const double *v, const int32_t *ci, double *o, int64_t n);
    /* o[k] = x[k] op y[k]; x[k] op s; s op y[k] (op: binary elementwise) */
    void (*bin_vv)(OpCode op, const double *x, const double *y, double *o, int64_t n);
    void (*bin_vs)(OpCode op, const double *x, double s, double *o, int64_t n);
    void (*bin_sv)(OpCode op, double s, const double *y, double *o, int64_t n);
    /* rows x n row-major blocks: o[i][k] = x[i][k] op c[i] (vc), c[i] op
     * x[i][k] (cv): a column vector broadcast over rows of a few cells,
     * the operator switched on once for all the rows */
    void (*bin_vc)(OpCode op, const double *x, const double *c, double *o, int64_t rows, int64_t n);
    void (*bin_cv)(OpCode op, const double *c, const double *x, double *o, int64_t rows, int64_t n);
    /* o[k] = v */
    void (*fill)(double *o, double v, int64_t n);
    /* o[k] = c[k] != 0 ? a[k] : b[k] */
    void (*select)(const double *c, const double *a, const double *b, double *o, int64_t n);
    /* the non-zeros among x[0..n) */
    int64_t (*nz_count)(const double *x, int64_t n);
    /* the same, and *nonfinite |= 1 when one of x[0..n) is NaN or
     * infinite (the finiteness flag of a kernel's output, in the pass
     * that counts it) */
    int64_t (*nz_count_fin)(const double *x, int64_t n, int *nonfinite);
} KEwLeaf;
extern const KEwLeaf k_ew_leaf_generic, k_ew_leaf_avx2, k_ew_leaf_avx512;

/* ---- agg_leaf.c: aggregation loops ---- */
typedef struct KKahan { double s, c; } KKahan; /* Kahan sum s, correction c */
enum { KM_X, KM_SQ, KM_DEV2 };                  /* summands: x, x*x, (x-m)^2 */
enum { CM_SUM, CM_SQ, CM_DEV2, CM_MIN, CM_MAX, CM_PROD };   /* column modes */
#define K_AGG_LANES 32   /* Kahan lanes of ksum, used from 4 * K_AGG_LANES cells */
typedef struct KAggLeaf {
    /* Kahan sum of the summands (mode KM_*, m the mean of KM_DEV2) of
     * x[0..n): in K_AGG_LANES lanes merged by a fixed tree from
     * 4 * K_AGG_LANES cells on, else in one chain */
    KKahan (*ksum)(const double *x, int64_t n, int mode, double m);
    /* OP_AMIN / OP_AMAX (NaN propagating, +-Inf for n = 0) or OP_PROD of
     * x[0..n) */
    double (*minmaxprod)(OpCode op, const double *x, int64_t n);
    /* One column task of a dense N-column block x: rows [r0, r1),
     * columns [j0, j0+w), L rows per lane group (L > 1 only when w ==
     * N), mode cm (CM_*, m: column means for CM_DEV2); writes each
     * column's partial to ps/pc, or its final value to ps when pc is
     * NULL. s, c, mr: scratch of L*w doubles each. */
    void (*col_task)(const double *x, int64_t N, int64_t r0, int64_t r1, int64_t j0, int64_t w, int64_t L,
                     int cm, const double *m, double *ps, double *pc, double *s, double *c, double *mr);
    /* Kahan sums (KM_X or KM_SQ) of the rows [r0, r1) of a dense block
     * with N < 4 * K_AGG_LANES columns into res[r0..r1), each row one
     * chain in column order (the same numbers as ksum) */
    void (*rows_sum)(const double *x, int64_t N, int64_t r0, int64_t r1, int mode, double *res);
    /* Kahan sums (KM_X or KM_SQ) of the rows [r0, r1) of a CSR block
     * (rp by row, v; nz = rp[rows]: reads stay below it) with at most 16
     * values into res[r0..r1), each row one chain over its values in
     * order (ksum's numbers); the indexes of longer rows go to longs
     * (room for r1 - r0), their count returned, their res untouched */
    int64_t (*sp_rows_sum)(const int64_t *rp, const double *v, int64_t nz, int64_t r0, int64_t r1, int mode,
                           double *res, int64_t *longs);
    /* rowMins/rowMaxs/rowIndexMin/rowIndexMax (k_agg's semantics) of the
     * rows [r0, r1) of a dense block with N columns into res[r0..r1)
     * (rowMins/rowMaxs of rows up to FB cells: agg.c's blocks of longer
     * rows merge in their own order) */
    void (*rows_minmax)(OpCode op, const double *x, int64_t N, int64_t r0, int64_t r1, double *res);
    /* One row of a cumulative aggregate (OP_CUMSUM, OP_CUMPROD, OP_CUMMIN,
     * OP_CUMMAX) over w columns: s (and for sums the corrections c) carry
     * the running values and are updated; o[k] gets the row's result */
    void (*cum_row)(OpCode op, const double *x, double *o, double *s, double *c, int64_t w);
} KAggLeaf;
extern const KAggLeaf k_agg_leaf_generic, k_agg_leaf_avx2, k_agg_leaf_avx512;

/* ---- mm_leaf.c: row loops of matrix products ---- */
/* Rows [r0, r1) of C (n columns) = A (k columns) %*% B, row-major, each
 * row summed over l in order; returns the non-zeros written and sets
 * *nonfinite (never clears it) when a value written is NaN or infinite
 * (the caller's finiteness flag, matrix/mb.h). */
typedef int64_t (*KMmRows)(const double *A, const double *B, double *C, int64_t k, int64_t n, int64_t r0,
                           int64_t r1, int *nonfinite);
/* KMmRows with C's row stride ldc (>= n): C may be a band of a wider
 * matrix's columns */
typedef int64_t (*KMmBand)(const double *A, const double *B, double *C, int64_t k, int64_t n, int64_t ldc,
                           int64_t r0, int64_t r1, int *nonfinite);
typedef struct KMmLeaf {
    /* B of n <= 16 columns, given padded: k rows of (n + 3) / 4 * 4
     * doubles (zeros past column n), 32-byte aligned */
    KMmBand skinny_rows;
    /* B (k x n) as it is, for small k (register tiles of 4 x 32); NULL
     * below AVX-512 (the caller uses BLAS) */
    KMmRows lowk_rows;
    /* t(X) %*% X over the rows [r0, r1) of the dense m x n X (n <= 16,
     * row-major) into C (n x n): the cells (a, b) with b >= a rounded
     * down to a multiple of 4 are written, each the sum of its rows'
     * products x[a] * x[b] in row order, restarted every 128 rows from
     * r0 and added up (the same bits at every level that has it; reads
     * stay inside the m rows). NULL in the generic copy (there its
     * 4-wide vectors spill: the caller uses BLAS). */
    void (*tsmm_small)(const double *X, int64_t m, int64_t n, int64_t r0, int64_t r1, double *C);
    /* The same for [v X], v a column of m values, n + 1 <= 16: C is
     * (n + 1) x (n + 1), v's cells in row and column 0; each cell the
     * sum of its rows' products in row order, restarted every 128 rows
     * from r0, at row 1 and at the last few rows (NULL where tsmm_small
     * is) */
    void (*tsmm_small_v)(const double *X, const double *v, int64_t m, int64_t n, int64_t r0, int64_t r1,
                         double *C);
    /* The same for 17 <= n <= 64 columns, with fma: C's upper triangle
     * (b >= a) is written (the other cells hold partial sums), each cell
     * an fma chain over its rows in order, restarted every chunk of
     * about 32 KB of x (from n only) and added up; the same bits on AVX2
     * and AVX-512. NULL in the generic copy. */
    void (*tsmm_mid)(const double *X, int64_t m, int64_t n, int64_t r0, int64_t r1, double *C);
    /* The same for n > 16 columns by a packed GEMM-like loop (rows in
     * chunks of tsmm_wide_kc(n), packed into P, which holds
     * tsmm_wide_scratch(n) doubles, 64-byte aligned): C's upper triangle
     * is written, each cell one fma chain over the rows [r0, r1) in order
     * (never restarted; r0 < r1), the same bits on AVX2 and AVX-512; the
     * cells below the diagonal inside the diagonal blocks of 4 or 8 are
     * written too, the other cells below it are not touched. NULL in the
     * generic copy. */
    void (*tsmm_wide)(const double *X, int64_t m, int64_t n, int64_t r0, int64_t r1, double *C, double *P);
    /* y[0 .. k) = t(A[r0 .. r1)) %*% x[r0 .. r1) for the dense row-major
     * A of k columns: each y[j] one fma chain x[r] * A[r, j] over the rows
     * in order from 0 (r0 < r1). mvec_rows: y[r] = A[r, ] %*% v for the
     * rows [r0, r1), column j's products fma-chained in lane j % 8 in
     * column order, the 8 lanes then summed as ((0+4) + (2+6)) + ((1+5) +
     * (3+7)). Both read A at the read rate where BLAS's gemv kernels for
     * narrow rows do not, and give the same bits on AVX2 and AVX-512;
     * NULL in the generic copy. */
    void (*tvec_rows)(const double *A, const double *x, int64_t k, int64_t r0, int64_t r1, double *y);
    /* tmm_rows: t(A) %*% B over the rows [r0, r1) (A with k columns, B
     * with n of 2 to 8 and a row stride of ldb >= n, both row-major:
     * B may be a band of a wider matrix's columns): C[j * n + c] =
     * tvec_rows's chain for column c of B (the same bits), the n columns
     * a row in registers by tiles of A's columns; NULL in the generic
     * copy */
    void (*tmm_rows)(const double *A, const double *B, int64_t k, int64_t n, int64_t ldb, int64_t r0, int64_t r1,
                     double *C);
    void (*mvec_rows)(const double *A, const double *v, int64_t k, int64_t r0, int64_t r1, double *y);
} KMmLeaf;

/* Rows of x per chunk of tsmm_wide: its packed panels, about 512 KB
 * (half the L2 of the machines measured), stream through the tiles from
 * L2; from 16 to 256 rows (a multiple of 8). */
static inline int64_t tsmm_wide_kc(int64_t n)
{
    const int64_t kc = 65536 / ((n + 7) / 8 * 8) / 8 * 8;
    return kc < 16 ? 16 : kc > 256 ? 256 : kc;
}
static inline int64_t tsmm_wide_scratch(int64_t n) { return tsmm_wide_kc(n) * ((n + 7) / 8 * 8); }
extern const KMmLeaf k_mm_leaf_generic, k_mm_leaf_avx2, k_mm_leaf_avx512;

/* ---- mmchain_leaf.c: row blocks of t(X) %*% (w * (X %*% v)) ---- */
typedef struct KChain {
    const MB *x;
    const double *v;      /* dense x: v transposed (c x n); sparse x: v (n x c) */
    const double *w;      /* m x wc, or NULL */
    int64_t c, wc;
    int64_t nb;           /* number of row blocks */
    int64_t bw;           /* dense x: rows per block; sparse: non-zeros per block */
} KChain;
typedef struct KMmchainLeaf {
    /* dense x: acc (c x n, zeroed by the caller) += q_il * x_i over the
     * rows i in [r0, r1) and l < c, q_il = w_il * (x_i . v_l) */
    void (*dense)(const KChain *ch, int64_t r0, int64_t r1, double *acc);
    /* sparse x: acc (n x c, zeroed by the caller) += x_i' q_i over the
     * rows i in [r0, r1), q_i = w_i * (x_i v); q: scratch of c doubles */
    void (*sparse)(const KChain *ch, int64_t r0, int64_t r1, double *acc, double *q);
} KMmchainLeaf;
extern const KMmchainLeaf k_mmchain_leaf_generic, k_mmchain_leaf_avx2, k_mmchain_leaf_avx512;

/* ---- spoof_leaf.c: loops of the fused-operator skeletons ---- */
typedef struct KSpoofLeaf {
    /* spacc_add (spoof.h) over the lanes s, c (SPOOF_KL each) */
    void (*acc_add)(double *s, double *c, int agg, const double *v, int64_t n);
    /* a Cell column aggregate's accumulators s, c (Kahan; cnt: values per
     * column, or NULL) take v[k] at column ci[k] (k when ci is NULL) */
    void (*col_add)(double *s, double *c, int64_t *cnt, int agg, const double *v, int64_t n, const int32_t *ci);
    /* col_add of nr dense rows of n values (v row-major), in row order */
    void (*col_add_rows)(double *s, double *c, int agg, const double *v, int64_t nr, int64_t n);
} KSpoofLeaf;
extern const KSpoofLeaf k_spoof_leaf_generic, k_spoof_leaf_avx2, k_spoof_leaf_avx512;

/* ---- probe_leaf.c: loops codegen/cost.c times (machine constants) ---- */
typedef struct KProbeLeaf {
    /* rows [r0, r1) of o (m x c) = x (m x n) %*% t(bt), bt c x n, c a
     * multiple of 4 (the generated code's row-wise vector-matrix loop) */
    void (*vecmat_t)(const double *x, const double *bt, double *o, int64_t n, int64_t c, int64_t r0,
                     int64_t r1);
    /* the sum of a[0..n) in vector lanes */
    double (*sum)(const double *a, int64_t n);
} KProbeLeaf;
extern const KProbeLeaf k_probe_leaf_generic, k_probe_leaf_avx2, k_probe_leaf_avx512;

/* ---- cla_leaf.c: per-row loops of the compressed products ---- */
typedef struct KClaLeaf {
    /* o[i*k + c] += p[code_i*k + c] for i < n, c < k, code_i = c1[i] when
     * c1 is not NULL, else c2[i] (a DDC group's or a bundle's codes; p:
     * ndict x k per-tuple rows) */
    void (*gather)(const uint8_t *c1, const uint16_t *c2, int64_t n, const double *p, int64_t k, double *o);
    /* A[code_i*k + c] += b[i*k + c] (codes as in gather; A: per-tuple
     * sums, ndict x k) */
    void (*scatter)(const uint8_t *c1, const uint16_t *c2, int64_t n, const double *b, int64_t k, double *A);
    /* o[i*k + c] += P[0][cd[0][i]*k + c] + ... + P[m-1][cd[m-1][i]*k + c],
     * added in that order (m DDC1 groups at once: o read and written once) */
    void (*gather_fused)(const uint8_t *const *cd, const double *const *P, int m, int64_t n, int64_t k, double *o);
    /* a[c] += b[rows[j]*k + c], j < nr in order (one tuple's listed rows
     * of an OLE/RLE group into its per-tuple sums) */
    void (*list_sum)(const int32_t *rows, int64_t nr, const double *b, int64_t k, double *a);
    /* o[rows[j]*k + c] += pr[c], j < nr (a tuple's row into its listed
     * rows of the result) */
    void (*list_add)(const int32_t *rows, int64_t nr, const double *pr, int64_t k, double *o);
} KClaLeaf;
extern const KClaLeaf k_cla_leaf_generic, k_cla_leaf_avx2, k_cla_leaf_avx512;

/* ---- sp_leaf.c: CSR row loops of sparse matrix-vector products ---- */
/* values of the rows tmv_rows spreads q over at a time (its stack) */
#define K_SP_SCRATCH 4096
typedef struct KSpLeaf {
    /* y[i - r0] = the sum over row i's values p of v[p] * x[ci[p]], rows
     * [r0, r1) of the CSR arrays (rp by row, ci, v; nz = the stored values,
     * rp[rows]: reads stay below it): the row's k-th value (from 0) into
     * sum k % 4, the sums then added as (s0 + s1) + (s2 + s3); the same
     * bits at every level */
    void (*mv_rows)(const int64_t *rp, const int32_t *ci, const double *v, int64_t nz, const double *x,
                    int64_t r0, int64_t r1, double *y);
    /* acc[ci[p]] += v[p] * q[i - r0] over the values p of the rows [r0,
     * r1) in order (every level the same bits) */
    void (*tmv_rows)(const int64_t *rp, const int32_t *ci, const double *v, const double *q, int64_t r0,
                     int64_t r1, double *acc);
    /* t(A) %*% B's rows [i0, i1) over A's rows [l0, l1) (CSR arrays rp,
     * ci, v; B dense with n columns, row l at b + l * n): acc[(ci[p] -
     * i0) * n + j] += v[p] * b[l * n + j] for j < n, the values p with
     * i0 <= ci[p] < i1 in row order (every level the same bits) */
    void (*tsd_rows)(const int64_t *rp, const int32_t *ci, const double *v, const double *b, int64_t n,
                     int64_t l0, int64_t l1, int64_t i0, int64_t i1, double *acc);
    /* one row of A %*% B (A's row: len values v at columns ci; B dense
     * with n columns): row[j] += s_j, s_j the sum from 0 of v[p] *
     * b[ci[p] * n + j] over p in order (every level the same bits; tiles
     * of columns with their sums in registers) */
    void (*sd_row)(const int32_t *ci, const double *v, int64_t len, const double *b, int64_t n, double *row);
    /* rows [r0, r1) of A %*% B for B of 2 <= n <= K_SP_NARROW columns:
     * out[(i - r0) * n + j] = s_j, the sums of sd_row from 0 (the same
     * bits; an empty row gives zeros), each row's n sums in registers
     * with the width a literal */
    void (*sd_rows)(const int64_t *rp, const int32_t *ci, const double *v, const double *b, int64_t n, int64_t r0,
                    int64_t r1, double *out);
} KSpLeaf;
/* the widest B of KSpLeaf.sd_rows (and of tsd_rows' literal widths) */
#define K_SP_NARROW 8
extern const KSpLeaf k_sp_leaf_generic, k_sp_leaf_avx2, k_sp_leaf_avx512;

/* ---- the tables of one level ---- */
typedef struct KLeaves {
    const KEwLeaf *ew;
    const KAggLeaf *agg;
    const KMmLeaf *mm;
    const KMmchainLeaf *mmchain;
    const KReorgLeaf *reorg;
    const KSpoofLeaf *spoof;
    const KProbeLeaf *probe;
    const KClaLeaf *cla;
    const KSpLeaf *sp;
} KLeaves;
/* The tables of level isa (off x86-64 every level has the generic
 * copies), e.g. k_leaves(k_isa())->ew. */
const KLeaves *k_leaves(KIsa isa);

#endif
