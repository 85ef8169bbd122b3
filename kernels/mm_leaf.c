/* mm_leaf.c: leaf kernels of mm.c (see leaf.h): the register-blocked
 * row loops of skinny products (B of at most 16 columns, held in 4-wide
 * vectors) and, with AVX-512, of low-rank products (inner dimension of
 * at most 32). Each row is summed over l in order in both, so results do
 * not depend on the thread count; the skinny loop's vectors are written
 * out lane by lane, so every SIMD level computes the same bits. */
#include "leaf.h"
#include "../base/base.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <string.h>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

/* v4d values stay inside this file's static functions (the tables hold
 * no vector types): the ABI note of the generic copy is moot. */
#pragma GCC diagnostic ignored "-Wpsabi"

typedef double v4d __attribute__((vector_size(32)));

/* Rows [r0, r1) of C = A %*% B for a skinny B padded to NV*4 columns in bp
 * (k x 4*NV, zero padding); each row is summed over l in order, RB rows
 * at a time (independent chains): 8 while their accumulators fit the
 * vector registers (NV 1, and 2 with AVX-512's 32), else 4. The rows of
 * the group SK_PF rows ahead are prefetched into L1, one line per step
 * over l (their span is RB * k / 8 lines: a line a step for RB 8, every
 * other step for RB 4): on an AMD Zen 5 (2026-12-06) four chains and
 * hardware prefetching alone left memory and the FMAs taking turns
 * (MLogreg's X %*% B over 100 columns, 4 columns of B: 53 -> 31 ns a
 * row on one thread with the span in one burst before the group;
 * 2026-12-07, spread over the loop: 4.5-5.0 -> 3.4 ms a 250,000-row
 * product on 2 threads).
 * Returns the non-zeros written, and
 * sets *nonfinite when a value written is NaN or infinite (the compare
 * of nz_count_fin, beside the count). NV is a literal at every call
 * (inlined). */
#define SK_PF 16
static inline __attribute__((always_inline)) int64_t
skinny_rows(const double *A, const v4d *bp, double *C, int64_t k, int64_t n, int64_t ldc,
            int64_t r0, int64_t r1, int NV, int *nonfinite)
{
#if defined(__AVX512F__)
    const int RB = NV <= 2 ? 8 : 4;
#else
    const int RB = NV == 1 ? 8 : 4;
#endif
    int64_t nz = 0;
    int bad = 0;
    for (int64_t i = r0; i < r1; i += RB) {
        int R = (int)BR_MIN(RB, r1 - i);
        const double *a = A + i * k;
        const bool pf = i + SK_PF + RB <= r1;
        const char *p = pf ? (const char *)(a + SK_PF * k) : NULL;
        v4d acc[8][4];
        memset(acc, 0, sizeof acc);
        if (R == RB) {
            for (int64_t l = 0; l < k; l++) {
                if (pf && (RB == 8 || !(l & 1))) __builtin_prefetch(p + (RB == 8 ? l : l / 2) * 64, 0, 3);
#pragma GCC unroll 4
                for (int q = 0; q < NV; q++) {
                    v4d b = bp[l * NV + q];
#pragma GCC unroll 8
                    for (int r = 0; r < RB; r++) acc[r][q] += a[r * k + l] * b;
                }
            }
            if (pf) __builtin_prefetch(p + RB * k * 8 - 1, 0, 3);   /* a last partial line */
        } else {
            for (int r = 0; r < R; r++)
                for (int64_t l = 0; l < k; l++)
                    for (int q = 0; q < NV; q++) acc[r][q] += a[r * k + l] * bp[l * NV + q];
        }
        for (int r = 0; r < R; r++) {
            double out[16];
            memcpy(out, acc[r], sizeof out);
            double *c = C + (i + r) * ldc;
            for (int64_t j = 0; j < n; j++) {
                c[j] = out[j];
                nz += out[j] != 0;
                bad |= !(fabs(out[j]) <= DBL_MAX);
            }
        }
    }
    *nonfinite |= bad;
    return nz;
}

#if defined(__AVX512F__)
/* The 8 x 8 block of 8 rows' 8 values r[0..8) transposed: t[l] holds the
 * rows' values at column l. */
static inline __attribute__((always_inline)) void sk_tr8(const __m512d r[8], __m512d t[8])
{
    __m512d a[8], b[4], c[4];
#pragma GCC unroll 4
    for (int p = 0; p < 4; p++) {
        a[2 * p] = _mm512_unpacklo_pd(r[2 * p], r[2 * p + 1]);
        a[2 * p + 1] = _mm512_unpackhi_pd(r[2 * p], r[2 * p + 1]);
    }
    /* rows 0-3 (b) and 4-7 (c): columns 0/4, 2/6, 1/5, 3/7 */
    b[0] = _mm512_shuffle_f64x2(a[0], a[2], 0x88);
    b[1] = _mm512_shuffle_f64x2(a[0], a[2], 0xdd);
    b[2] = _mm512_shuffle_f64x2(a[1], a[3], 0x88);
    b[3] = _mm512_shuffle_f64x2(a[1], a[3], 0xdd);
    c[0] = _mm512_shuffle_f64x2(a[4], a[6], 0x88);
    c[1] = _mm512_shuffle_f64x2(a[4], a[6], 0xdd);
    c[2] = _mm512_shuffle_f64x2(a[5], a[7], 0x88);
    c[3] = _mm512_shuffle_f64x2(a[5], a[7], 0xdd);
    t[0] = _mm512_shuffle_f64x2(b[0], c[0], 0x88);
    t[4] = _mm512_shuffle_f64x2(b[0], c[0], 0xdd);
    t[2] = _mm512_shuffle_f64x2(b[1], c[1], 0x88);
    t[6] = _mm512_shuffle_f64x2(b[1], c[1], 0xdd);
    t[1] = _mm512_shuffle_f64x2(b[2], c[2], 0x88);
    t[5] = _mm512_shuffle_f64x2(b[2], c[2], 0xdd);
    t[3] = _mm512_shuffle_f64x2(b[3], c[3], 0x88);
    t[7] = _mm512_shuffle_f64x2(b[3], c[3], 0xdd);
}

/* skinny_rows with AVX-512, R <= 8 rows from i (a literal N of B's
 * columns): the rows' values go transposed (8 x 8 blocks), a vector lane
 * per row, so each multiply and add serves 8 cells of one column where
 * skinny_rows's served 4 columns of one row (B's padding included) and
 * the instructions, not the memory, bounded it. Each cell is still its
 * products added in order over l, a multiply then an add: the same bits
 * (test_isa: against the generic copy). The rows SK_PF ahead are
 * prefetched as one span, 8 lines a step (a line of each row a step was
 * slower). `X %*% B` over 250,000 x 100 in a DML loop (2 threads, AMD
 * EPYC, 2026-12-07, alternated builds): by 2 columns 4.9-5.5 -> 3.3-3.5
 * ms a call, by 4 5.9-6.5 -> 5.7-6.1, by 8 9.7-9.9 -> 6.2-7.1, by 16
 * 18.5-18.7 -> 9.9-11.0. */
static inline __attribute__((always_inline)) int64_t
sk8_rows(const double *A, const double *bp, double *C, int64_t k, int64_t w, int64_t ldc, int64_t i, int R,
         const char *pf, int N, int *bad)
{
    __m512d acc[16], x[8], t[8];
#pragma GCC unroll 16
    for (int c = 0; c < N; c++) acc[c] = _mm512_setzero_pd();
    const double *a = A + i * k;
    int64_t l0 = 0;
    for (; l0 + 8 <= k; l0 += 8) {
        if (pf)   /* the 8 rows SK_PF ahead: 8 lines of their span a step */
#pragma GCC unroll 8
            for (int q = 0; q < 8; q++) __builtin_prefetch(pf + (l0 + q) * 64, 0, 3);
#pragma GCC unroll 8
        for (int r = 0; r < 8; r++) x[r] = r < R ? _mm512_loadu_pd(a + r * k + l0) : _mm512_setzero_pd();
        sk_tr8(x, t);
        const double *b = bp + l0 * w;
#pragma GCC unroll 8
        for (int l = 0; l < 8; l++)
#pragma GCC unroll 16
            for (int c = 0; c < N; c++)
                acc[c] = _mm512_add_pd(acc[c], _mm512_mul_pd(t[l], _mm512_set1_pd(b[l * w + c])));
    }
    if (pf)   /* the span's last lines */
        for (int64_t c = l0 * 64; c < 64 * k; c += 64) __builtin_prefetch(pf + c, 0, 3);
    if (l0 < k) {
        /* the last columns (masked loads; only the kt columns added) */
        const int64_t kt = k - l0;
        const __mmask8 m = (__mmask8)((1u << kt) - 1);
#pragma GCC unroll 8
        for (int r = 0; r < 8; r++) x[r] = r < R ? _mm512_maskz_loadu_pd(m, a + r * k + l0) : _mm512_setzero_pd();
        sk_tr8(x, t);
        const double *b = bp + l0 * w;
#pragma GCC unroll 8
        for (int l = 0; l < 8; l++)
            if (l < kt)
#pragma GCC unroll 16
                for (int c = 0; c < N; c++)
                    acc[c] = _mm512_add_pd(acc[c], _mm512_mul_pd(t[l], _mm512_set1_pd(b[l * w + c])));
    }
    const __mmask8 valid = (__mmask8)((1u << R) - 1);
    const __m512d big = _mm512_set1_pd(DBL_MAX);
    __mmask8 nf = 0;
    int64_t nz = 0;
    double o[16 * 8] __attribute__((aligned(64)));
#pragma GCC unroll 16
    for (int c = 0; c < N; c++) {
        nz += __builtin_popcount(_mm512_mask_cmp_pd_mask(valid, acc[c], _mm512_setzero_pd(), _CMP_NEQ_UQ));
        nf |= _mm512_mask_cmp_pd_mask(valid, _mm512_abs_pd(acc[c]), big, _CMP_NLE_UQ);
        _mm512_store_pd(o + 8 * c, acc[c]);
    }
    for (int r = 0; r < R; r++)
#pragma GCC unroll 16
        for (int c = 0; c < N; c++) C[(i + r) * ldc + c] = o[8 * c + r];
    *bad |= nf != 0;
    return nz;
}

static inline __attribute__((always_inline)) int64_t
sk8(const double *A, const double *bp, double *C, int64_t k, int64_t ldc, int64_t r0, int64_t r1, int N, int *bad)
{
    const int64_t w = (N + 3) / 4 * 4;
    int64_t nz = 0, i = r0;
    for (; i + 8 <= r1; i += 8) {
        const char *pf = i + SK_PF + 8 <= r1 ? (const char *)(A + (i + SK_PF) * k) : NULL;
        nz += sk8_rows(A, bp, C, k, w, ldc, i, 8, pf, N, bad);
    }
    if (i < r1) nz += sk8_rows(A, bp, C, k, w, ldc, i, (int)(r1 - i), NULL, N, bad);
    return nz;
}
#endif

/* KMmLeaf.skinny_rows */
static int64_t skinny(const double *A, const double *bp, double *C, int64_t k, int64_t n, int64_t ldc, int64_t r0,
                      int64_t r1, int *nonfinite)
{
    assert(n >= 1 && n <= 16 && ldc >= n);
#if defined(__AVX512F__)
    int bad = 0;
    int64_t nz = 0;
    switch (n) {
#define SK8(N) case N: nz = sk8(A, bp, C, k, ldc, r0, r1, N, &bad); break;
    SK8(1) SK8(2) SK8(3) SK8(4) SK8(5) SK8(6) SK8(7) SK8(8)
    SK8(9) SK8(10) SK8(11) SK8(12) SK8(13) SK8(14) SK8(15) SK8(16)
#undef SK8
    default: break;
    }
    *nonfinite |= bad;
    return nz;
#else
    const v4d *b = (const v4d *)(const void *)bp;
    switch ((n + 3) / 4) {
    case 1: return skinny_rows(A, b, C, k, n, ldc, r0, r1, 1, nonfinite);
    case 2: return skinny_rows(A, b, C, k, n, ldc, r0, r1, 2, nonfinite);
    case 3: return skinny_rows(A, b, C, k, n, ldc, r0, r1, 3, nonfinite);
    default: return skinny_rows(A, b, C, k, n, ldc, r0, r1, 4, nonfinite);
    }
#endif
}

#if defined(__AVX512F__)
/* C rows of R x 32 register tiles: see KMmLeaf.lowk_rows. */
static inline __attribute__((always_inline)) int64_t
lowk_tile(const double *a, const double *B, double *c, int64_t k, int64_t n, int64_t j, int R, int *nonfinite)
{
    const int64_t w = BR_MIN(32, n - j);
    __mmask8 mk[4];
    for (int q = 0; q < 4; q++) {
        int64_t left = w - 8 * q;
        mk[q] = left >= 8 ? (__mmask8)0xff : left <= 0 ? (__mmask8)0 : (__mmask8)((1u << left) - 1);
    }
    __m512d acc[4][4];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int q = 0; q < 4; q++) acc[r][q] = _mm512_setzero_pd();
    for (int64_t l = 0; l < k; l++) {
        const double *b = B + l * n + j;
        __m512d bv[4];
#pragma GCC unroll 4
        for (int q = 0; q < 4; q++) bv[q] = _mm512_maskz_loadu_pd(mk[q], b + 8 * q);
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            const __m512d av = _mm512_set1_pd(a[r * k + l]);
#pragma GCC unroll 4
            for (int q = 0; q < 4; q++) acc[r][q] = _mm512_fmadd_pd(av, bv[q], acc[r][q]);
        }
    }
    int64_t nz = 0;
    __mmask8 bad = 0;
    const __m512d big = _mm512_set1_pd(DBL_MAX);
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int q = 0; q < 4; q++) {
            _mm512_mask_storeu_pd(c + r * n + j + 8 * q, mk[q], acc[r][q]);
            nz += __builtin_popcount(_mm512_mask_cmp_pd_mask(mk[q], acc[r][q], _mm512_setzero_pd(), _CMP_NEQ_UQ));
            /* NaN or infinite: not |x| <= DBL_MAX (unordered: true) */
            bad |= _mm512_mask_cmp_pd_mask(mk[q], _mm512_abs_pd(acc[r][q]), big, _CMP_NLE_UQ);
        }
    *nonfinite |= bad != 0;
    return nz;
}

/* KMmLeaf.lowk_rows */
static int64_t lowk_rows(const double *A, const double *B, double *C, int64_t k, int64_t n, int64_t r0,
                         int64_t r1, int *nonfinite)
{
    int64_t nz = 0;
    for (int64_t i = r0; i < r1; i += 4) {
        const double *a = A + i * k;
        double *c = C + i * n;
        switch (BR_MIN(4, r1 - i)) {
        case 4: for (int64_t j = 0; j < n; j += 32) nz += lowk_tile(a, B, c, k, n, j, 4, nonfinite); break;
        case 3: for (int64_t j = 0; j < n; j += 32) nz += lowk_tile(a, B, c, k, n, j, 3, nonfinite); break;
        case 2: for (int64_t j = 0; j < n; j += 32) nz += lowk_tile(a, B, c, k, n, j, 2, nonfinite); break;
        default: for (int64_t j = 0; j < n; j += 32) nz += lowk_tile(a, B, c, k, n, j, 1, nonfinite); break;
        }
    }
    return nz;
}
#endif

#if defined(__AVX2__)
/* Unaligned vector loads of the rows of x (tsmm_small). */
typedef double v4du __attribute__((vector_size(32), aligned(8)));

/* Rows of x per chunk of tsmm_small: its sum restarts at each chunk,
 * which the block passes read from L1 (128 x 16 doubles: 16 KB). */
#define TSMM_CHUNK 128
/* Vectors per register pass (of 4 columns in tsmm_small, of the level's
 * width in tsmm_mid): 4 rows x QMAX accumulators (AVX-512 has 32 vector
 * registers, AVX2 16). Which pass computes a cell
 * changes nothing in its sum. */
#if defined(__AVX512F__)
#define TSMM_QMAX 4
#else
#define TSMM_QMAX 3
#endif

/* The rows [r0, end) of the m x n x whose reads, `span` doubles from a
 * row's start, stay inside x; the rows from end to r1 (the matrix's last
 * few) are read from pad_rows' copy. */
static int64_t rows_in_place(int64_t m, int64_t n, int64_t span, int64_t r0, int64_t r1)
{
    const int64_t lim = m * n - span;   /* row r is inside for r <= lim / n */
    return lim < 0 ? r0 : BR_MAX(r0, BR_MIN(r1, lim / n + 1));
}

/* Rows [r0, r1) of x into pad, `span` doubles a row, zeros past n. */
static void pad_rows(const double *X, int64_t n, int64_t span, int64_t r0, int64_t r1, double *pad)
{
    for (int64_t r = 0; r < r1 - r0; r++)
        for (int64_t j = 0; j < span; j++) pad[r * span + j] = j < n ? X[(r0 + r) * n + j] : 0;
}

/* Rows 4*AB .. 4*AB+3 of the chunk's C against the column vectors
 * [q0, q1) (q0 >= AB), over R rows of x of stride S doubles (vector q of
 * a row: its columns 4q .. 4q+3, the lanes past the row's n columns
 * reading the next row: lanes of cells never kept); each cell the sum of
 * its rows in order from 0, added to acc. HV (a literal): column 0 of a
 * row is vp[r] instead (tsmm_small_v; the row's own lane 0 is never
 * read otherwise). */
static inline __attribute__((always_inline)) void
tsmm_pass(const double *p, const double *vp, int HV, int64_t S, int64_t R, int AB, int q0, int q1, v4d acc[16][4])
{
    v4d t[4][TSMM_QMAX];
#pragma GCC unroll 4
    for (int a = 0; a < 4; a++)
#pragma GCC unroll 4
        for (int q = 0; q < TSMM_QMAX; q++) t[a][q] = (v4d){0, 0, 0, 0};
    for (int64_t r = 0; r < R; r++) {
        const double *xr = p + r * S;
#pragma GCC unroll 4
        for (int q = q0; q < q1; q++) {
            v4d b = *(const v4du *)(xr + 4 * q);
            const v4d vb = HV ? (v4d)_mm256_broadcast_sd(vp + r) : (v4d){0};
            if (HV && q == 0) b = (v4d)_mm256_blend_pd(b, vb, 1);
#pragma GCC unroll 4
            for (int a = 0; a < 4; a++)
                t[a][q - q0] += (HV && AB == 0 && a == 0 ? vb : (v4d)_mm256_broadcast_sd(xr + AB * 4 + a)) * b;
        }
    }
#pragma GCC unroll 4
    for (int a = 0; a < 4; a++)
#pragma GCC unroll 4
        for (int q = q0; q < q1; q++) acc[AB * 4 + a][q] += t[a][q - q0];
}

#if defined(__AVX512F__)
/* Block rows [A0, A1) of the chunk's upper block triangle in one pass
 * over its R rows (at most 24 accumulators: 4 (NV - ab) a block row), the
 * row's vectors from A0 on loaded once. With AVX-512's 32 registers a
 * pass per block row left the last ones with 4 or 8 accumulators, so
 * their FMAs waited on each other (t(X) %*% X over 5e6 x 10: 3 passes,
 * the last latency-bound); each cell still sums its rows in order. */
static inline __attribute__((always_inline)) void
tsmm_band(const double *p, const double *vp, int HV, int64_t S, int64_t R, int A0, int A1, int NV,
          v4d acc[16][4])
{
    v4d t[4][4][4];
#pragma GCC unroll 4
    for (int ab = A0; ab < A1; ab++)
#pragma GCC unroll 4
        for (int q = ab; q < NV; q++)
#pragma GCC unroll 4
            for (int a = 0; a < 4; a++) t[ab - A0][q][a] = (v4d){0, 0, 0, 0};
    for (int64_t r = 0; r < R; r++) {
        const double *xr = p + r * S;
        v4d b[4];
#pragma GCC unroll 4
        for (int q = A0; q < NV; q++) b[q] = *(const v4du *)(xr + 4 * q);
        const v4d vb = HV ? (v4d)_mm256_broadcast_sd(vp + r) : (v4d){0};
        if (HV && A0 == 0) b[0] = (v4d)_mm256_blend_pd(b[0], vb, 1);
#pragma GCC unroll 4
        for (int ab = A0; ab < A1; ab++)
#pragma GCC unroll 4
            for (int a = 0; a < 4; a++) {
                const v4d s = HV && ab == 0 && a == 0 ? vb : (v4d)_mm256_broadcast_sd(xr + ab * 4 + a);
#pragma GCC unroll 4
                for (int q = ab; q < NV; q++) t[ab - A0][q][a] += s * b[q];
            }
    }
#pragma GCC unroll 4
    for (int ab = A0; ab < A1; ab++)
#pragma GCC unroll 4
        for (int a = 0; a < 4; a++)
#pragma GCC unroll 4
            for (int q = ab; q < NV; q++) acc[ab * 4 + a][q] += t[ab - A0][q][a];
}
#endif

/* All passes of a chunk: the upper block triangle (blocks of 4 x 4
 * cells) of the n <= 4*NV columns (NV a literal at every call). */
static inline __attribute__((always_inline)) void
tsmm_chunk(const double *p, const double *vp, int HV, int64_t S, int64_t R, int NV, v4d acc[16][4])
{
#if defined(__AVX512F__)
    /* bands of at most 24 accumulators: NV 1-3 in one, 4 as 1 + 3 */
    if (NV <= 3) {
        tsmm_band(p, vp, HV, S, R, 0, NV, NV, acc);
    } else {
        tsmm_band(p, vp, HV, S, R, 0, 1, NV, acc);
        tsmm_band(p, vp, HV, S, R, 1, NV, NV, acc);
    }
#else
#pragma GCC unroll 4
    for (int ab = 0; ab < NV; ab++)
        for (int q0 = ab; q0 < NV; q0 += TSMM_QMAX)
            tsmm_pass(p, vp, HV, S, R, ab, q0, BR_MIN(NV, q0 + TSMM_QMAX), acc);
#endif
}

static inline __attribute__((always_inline)) void
tsmm_rows(const double *X, int64_t m, int64_t n, int64_t r0, int64_t r1, double *C, int NV)
{
    v4d acc[16][4];
    memset(acc, 0, sizeof acc);
    /* a row reads its 4 * NV columns' vectors */
    const int64_t rd = rows_in_place(m, n, 4 * NV, r0, r1);
    for (int64_t c0 = r0; c0 < rd; c0 += TSMM_CHUNK)
        tsmm_chunk(X + c0 * n, NULL, 0, n, BR_MIN(TSMM_CHUNK, rd - c0), NV, acc);
    if (rd < r1) {
        double pad[4 * 16];
        assert(r1 - rd <= 4);
        pad_rows(X, n, 4 * NV, rd, r1, pad);
        tsmm_chunk(pad, NULL, 0, 4 * NV, r1 - rd, NV, acc);
    }
    for (int64_t a = 0; a < n; a++)
        for (int64_t b = a / 4 * 4; b < n; b++) C[a * n + b] = acc[a][b / 4][b % 4];
}

/* t([v X]) %*% [v X] (n + 1 <= 16 columns, v a column): tsmm_rows over
 * the rows of X read from one double before each (that lane, column 0,
 * is v's, put in the register), so the x columns are 1 .. n. Rows whose
 * reads would leave X (row 0's double before it; the last rows' lanes
 * past the end) are read from pad_rows' copy, shifted by one; the
 * chunks restart at r0 and at these rows. */
static inline __attribute__((always_inline)) void
tsmm_rows_v(const double *X, const double *v, int64_t m, int64_t n, int64_t r0, int64_t r1, double *C, int NV)
{
    v4d acc[16][4];
    memset(acc, 0, sizeof acc);
    const int64_t o = n + 1, span = 4 * NV;
    double pad[5 * 16];
    int64_t a0 = r0;
    if (a0 == 0 && a0 < r1) {
        pad[0] = 0;
        pad_rows(X, n, span - 1, 0, 1, pad + 1);
        tsmm_chunk(pad, v, 1, span, 1, NV, acc);
        a0 = 1;
    }
    /* row r's reads: X + r n - 1 .. + span, inside X while r n - 1 + span <= m n */
    const int64_t lim = m * n + 1 - span;
    const int64_t rd = lim < 0 ? a0 : BR_MAX(a0, BR_MIN(r1, lim / n + 1));
    for (int64_t c0 = a0; c0 < rd; c0 += TSMM_CHUNK)
        tsmm_chunk(X + c0 * n - 1, v + c0, 1, n, BR_MIN(TSMM_CHUNK, rd - c0), NV, acc);
    if (rd < r1) {
        assert(r1 - rd <= 5);
        for (int64_t r = 0; r < r1 - rd; r++) {
            pad[r * span] = 0;
            pad_rows(X, n, span - 1, rd + r, rd + r + 1, pad + r * span + 1);
        }
        tsmm_chunk(pad, v + rd, 1, span, r1 - rd, NV, acc);
    }
    for (int64_t a = 0; a < o; a++)
        for (int64_t b = a / 4 * 4; b < o; b++) C[a * o + b] = acc[a][b / 4][b % 4];
}

/* KMmLeaf.tsmm_small_v */
static void tsmm_small_v(const double *X, const double *v, int64_t m, int64_t n, int64_t r0, int64_t r1, double *C)
{
    assert(n >= 1 && n <= 15);
    switch ((n + 4) / 4) {
    case 1: tsmm_rows_v(X, v, m, n, r0, r1, C, 1); break;
    case 2: tsmm_rows_v(X, v, m, n, r0, r1, C, 2); break;
    case 3: tsmm_rows_v(X, v, m, n, r0, r1, C, 3); break;
    default: tsmm_rows_v(X, v, m, n, r0, r1, C, 4); break;
    }
}

/* KMmLeaf.tsmm_small */
static void tsmm_small(const double *X, int64_t m, int64_t n, int64_t r0, int64_t r1, double *C)
{
    assert(n >= 1 && n <= 16);
    switch ((n + 3) / 4) {
    case 1: tsmm_rows(X, m, n, r0, r1, C, 1); break;
    case 2: tsmm_rows(X, m, n, r0, r1, C, 2); break;
    case 3: tsmm_rows(X, m, n, r0, r1, C, 3); break;
    default: tsmm_rows(X, m, n, r0, r1, C, 4); break;
    }
}

/* tsmm_mid: t(X) %*% X of 17 to 64 columns with fma, in vectors of the
 * level's width (AVX-512 8, AVX2 4: each lane does the same fma in the
 * same order, so both give the same bits). */
#if defined(__AVX512F__)
#define MID_W 8
#define MID_FMA(a, b, c) _mm512_fmadd_pd(_mm512_set1_pd(a), b, c)
#define MID_FMA_V(a, b, c) _mm512_fmadd_pd(a, b, c)
#else
#define MID_W 4
#define MID_FMA(a, b, c) _mm256_fmadd_pd(_mm256_set1_pd(a), b, c)
#define MID_FMA_V(a, b, c) _mm256_fmadd_pd(a, b, c)
#endif
typedef double vmid __attribute__((vector_size(MID_W * 8)));
typedef double vmidu __attribute__((vector_size(MID_W * 8), aligned(8)));
#define MID_NMAX 64

/* Reads of a row reach its columns rounded up to 8 at every level (so
 * that the rows read in place, the chunks and the padded tail, and with
 * them the sums, do not depend on the level). */
static inline int64_t mid_span(int64_t n) { return (n + 7) / 8 * 8; }

/* Rows of a chunk: about 32 KB of x, from the column count only. */
static inline int64_t mid_chunk(int64_t n) { return BR_MAX(16, 4096 / mid_span(n) / 8 * 8); }

/* Output rows a0 .. a0+3 by the vectors q0 .. q0+Q-1 (Q a literal) over
 * R rows of stride S: each cell's fma chain over the rows in order from
 * 0, then added to C (the lanes of columns past n dropped). */
static inline __attribute__((always_inline)) void
mid_pass(const double *p, int64_t S, int64_t R, int64_t n, int64_t a0, int64_t q0, int Q, double *C)
{
    vmid t[4][TSMM_QMAX];
#pragma GCC unroll 4
    for (int a = 0; a < 4; a++)
#pragma GCC unroll 4
        for (int q = 0; q < TSMM_QMAX; q++) t[a][q] = (vmid){0};
    for (int64_t r = 0; r < R; r++) {
        const double *xr = p + r * S;
        vmid b[TSMM_QMAX];
#pragma GCC unroll 4
        for (int q = 0; q < Q; q++) b[q] = *(const vmidu *)(xr + (q0 + q) * MID_W);
#pragma GCC unroll 4
        for (int a = 0; a < 4; a++)
#pragma GCC unroll 4
            for (int q = 0; q < Q; q++) t[a][q] = MID_FMA(xr[a0 + a], b[q], t[a][q]);
    }
    for (int64_t a = 0; a < 4 && a0 + a < n; a++)
        for (int q = 0; q < Q; q++) {
            double *c = C + (a0 + a) * n + (q0 + q) * MID_W;
            const int64_t lanes = BR_MIN(MID_W, n - (q0 + q) * MID_W);
            for (int64_t l = 0; l < lanes; l++) c[l] += t[a][q][l];
        }
}

static void mid_chunk_rows(const double *p, int64_t S, int64_t R, int64_t n, double *C)
{
    const int64_t NV = (n + MID_W - 1) / MID_W;
    for (int64_t a0 = 0; a0 < n; a0 += 4)
        for (int64_t q0 = a0 / MID_W; q0 < NV; q0 += TSMM_QMAX) {
            switch (BR_MIN(TSMM_QMAX, NV - q0)) {
            case 1: mid_pass(p, S, R, n, a0, q0, 1, C); break;
            case 2: mid_pass(p, S, R, n, a0, q0, 2, C); break;
#if TSMM_QMAX > 3
            case 3: mid_pass(p, S, R, n, a0, q0, 3, C); break;
#endif
            default: mid_pass(p, S, R, n, a0, q0, TSMM_QMAX, C); break;
            }
        }
}

/* KMmLeaf.tsmm_mid */
static void tsmm_mid(const double *X, int64_t m, int64_t n, int64_t r0, int64_t r1, double *C)
{
    assert(n > 16 && n <= MID_NMAX);
    memset(C, 0, (size_t)(n * n) * sizeof(double));
    /* the matrix's last row at most (n > 16 > w - n) from the copy */
    const int64_t w = mid_span(n), ch = mid_chunk(n), rd = rows_in_place(m, n, w, r0, r1);
    for (int64_t c0 = r0; c0 < rd; c0 += ch) mid_chunk_rows(X + c0 * n, n, BR_MIN(ch, rd - c0), n, C);
    if (rd < r1) {
        double pad[MID_NMAX];
        assert(r1 - rd == 1);
        pad_rows(X, n, w, rd, r1, pad);
        mid_chunk_rows(pad, w, 1, n, C);
    }
}

/* tsmm_wide: t(X) %*% X of more columns (leaf.h), a GEMM-like packed
 * loop: the rows of x come in chunks of kc (tsmm_wide_kc), each packed
 * into panels of MID_W columns (kc x MID_W doubles each, zeros past n;
 * the panels are what the register tiles stream), and every tile of the
 * upper block triangle, one panel's MID_W output rows by up to WIDE_Q
 * panels (24 accumulators with AVX-512, 12 with AVX2), runs its fma
 * chains over the chunk's rows from C's sums of the chunks before (zeros
 * at the first chunk). Each cell is one fma chain over its rows in order, whatever the
 * chunk, tile or vector width, so AVX2 and AVX-512 give the same bits.
 * The next chunk's rows are prefetched into L2 one line a row step,
 * spread over the chunk's tiles, so that reading x from memory overlaps
 * the multiply-adds (without it packing waited on memory: a quarter of
 * the time at 100 columns). */
#define WIDE_Q 3

/* Rows [0, R) of x (stride n) into the panels of P (NP of them, panel p
 * at P + p * R * MID_W): panel by panel, the full ones by vector. */
static void wide_pack(const double *X, int64_t n, int64_t R, int64_t NP, double *P)
{
    const int64_t full = n / MID_W;
    for (int64_t p = 0; p < full; p++) {
        vmid *d = (vmid *)(P + p * R * MID_W);
        for (int64_t r = 0; r < R; r++) d[r] = *(const vmidu *)(X + r * n + p * MID_W);
    }
    for (int64_t p = full; p < NP; p++)
        for (int64_t r = 0; r < R; r++)
            for (int64_t l = 0; l < MID_W; l++) {
                const int64_t j = p * MID_W + l;
                P[(p * R + r) * MID_W + l] = j < n ? X[r * n + j] : 0;
            }
}

/* Output rows a0 .. a0+MID_W-1 (a0 a panel's first column; the rows
 * below n) by the panels q0 ..
 * q0+Q-1 (Q a literal) of C (stride n, the lanes past n kept out), over
 * the chunk's R packed rows; the chains start from C's cells unless
 * `first`. One line of pf prefetched per row step while r < npf. */
static inline __attribute__((always_inline)) void
wide_tile(const double *P, int64_t R, int64_t n, int64_t a0, int64_t q0, int Q, double *C, bool first,
          const char *pf, int64_t npf)
{
    vmid t[MID_W][WIDE_Q];
    const int64_t rows = BR_MIN(MID_W, n - a0), lanes = BR_MIN(MID_W, n - (q0 + Q - 1) * MID_W);
#pragma GCC unroll 8
    for (int a = 0; a < MID_W; a++)
#pragma GCC unroll 4
        for (int q = 0; q < Q; q++) {
            t[a][q] = (vmid){0};
            if (first || a >= rows) continue;
            const double *c = C + (a0 + a) * n + (q0 + q) * MID_W;
            if (q < Q - 1 || lanes == MID_W) t[a][q] = *(const vmidu *)c;
            else
                for (int64_t l = 0; l < lanes; l++) t[a][q][l] = c[l];
        }
    const double *A = P + a0 * R;   /* the panel of the tile's rows */
    const double *B = P + q0 * R * MID_W;
    for (int64_t r = 0; r < R; r++) {
        if (r < npf) __builtin_prefetch(pf + r * 64, 0, 2);
        vmid b[WIDE_Q];
#pragma GCC unroll 4
        for (int q = 0; q < Q; q++) b[q] = *(const vmid *)(B + (q * R + r) * MID_W);
#pragma GCC unroll 8
        for (int a = 0; a < MID_W; a++)
#pragma GCC unroll 4
            for (int q = 0; q < Q; q++) t[a][q] = MID_FMA(A[r * MID_W + a], b[q], t[a][q]);
    }
    for (int a = 0; a < rows; a++)
        for (int q = 0; q < Q; q++) {
            double *c = C + (a0 + a) * n + (q0 + q) * MID_W;
            if (q < Q - 1 || lanes == MID_W) *(vmidu *)c = t[a][q];
            else
                for (int64_t l = 0; l < lanes; l++) c[l] = t[a][q][l];
        }
}

/* Every tile of the chunk's upper block triangle; the next chunk (nx,
 * nbytes) prefetched over them. */
static void wide_chunk(const double *P, int64_t R, int64_t n, double *C, bool first, const char *nx,
                       int64_t nbytes)
{
    const int64_t NP = (n + MID_W - 1) / MID_W;
    int64_t tiles = 0;
    for (int64_t pa = 0; pa < NP; pa++) tiles += (NP - pa + WIDE_Q - 1) / WIDE_Q;
    const int64_t lines = (nbytes + 63) / 64, per = (lines + tiles - 1) / tiles;
    int64_t done = 0;
    for (int64_t pa = 0; pa < NP; pa++)
        for (int64_t q0 = pa; q0 < NP; q0 += WIDE_Q) {
            const int64_t a0 = pa * MID_W;
            const int64_t npf = BR_MAX(0, BR_MIN(per, lines - done));
            const char *pf = nx + done * 64;
            done += npf;
            switch (BR_MIN(WIDE_Q, NP - q0)) {
            case 1: wide_tile(P, R, n, a0, q0, 1, C, first, pf, npf); break;
            case 2: wide_tile(P, R, n, a0, q0, 2, C, first, pf, npf); break;
            default: wide_tile(P, R, n, a0, q0, WIDE_Q, C, first, pf, npf); break;
            }
        }
}

/* KMmLeaf.tsmm_wide */
static void tsmm_wide(const double *X, int64_t m, int64_t n, int64_t r0, int64_t r1, double *C, double *P)
{
    (void)m;
    assert(n > 16 && r0 < r1);
    const int64_t kc = tsmm_wide_kc(n), NP = (n + MID_W - 1) / MID_W;
    for (int64_t c0 = r0; c0 < r1; c0 += kc) {
        const int64_t R = BR_MIN(kc, r1 - c0), next = BR_MIN(kc, r1 - c0 - R);
        wide_pack(X + c0 * n, n, R, NP, P);
        wide_chunk(P, R, n, C, c0 == r0, (const char *)(X + (c0 + R) * n), next * n * (int64_t)sizeof(double));
    }
}

/* Matrix-vector products of a dense row-major A at the read rate
 * (leaf.h: tvec_rows, mvec_rows). Vectors of the level's width with the
 * lanes past the row's k columns loaded as zeros (masked), so that each
 * cell's fma chain is the same on AVX2 and AVX-512. */
#if defined(__AVX512F__)
static inline vmid vload_n(const double *p, int64_t n)
{
    return (vmid)_mm512_maskz_loadu_pd((__mmask8)((1u << n) - 1), p);
}
#define TV_Q 16
#else
static inline vmid vload_n(const double *p, int64_t n)
{
    const __m256i lanes = _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), _mm256_setr_epi64x(0, 1, 2, 3));
    return (vmid)_mm256_maskload_pd(p, lanes);
}
#define TV_Q 12
#endif

/* y[0 .. k) over the rows [r0, r1) for k of Q vectors (a literal; the
 * last one masked at k): fma chains in registers. */
static inline __attribute__((always_inline)) void
tvec_tile(const double *A, const double *x, int64_t k, int64_t r0, int64_t r1, int Q, double *y)
{
    vmid t[TV_Q];
    const int64_t last = k - (Q - 1) * MID_W;
#pragma GCC unroll 16
    for (int q = 0; q < Q; q++) t[q] = (vmid){0};
    /* rows about 4 KB ahead prefetched, a row's lines a step (without,
     * t(X) %*% v over 500,000 x 100 took 1.25x X %*% v's time) */
    const int64_t pfd = BR_MAX(1, 4096 / (k * 8));
    for (int64_t r = r0; r < r1; r++) {
        const double *a = A + r * k;
        const double xr = x[r];
        if (r + pfd < r1)
            for (int64_t c = 0; c < k * 8; c += 64) __builtin_prefetch((const char *)(a + pfd * k) + c, 0, 3);
#pragma GCC unroll 16
        for (int q = 0; q < Q - 1; q++) t[q] = MID_FMA(xr, *(const vmidu *)(a + q * MID_W), t[q]);
        const vmid b = last == MID_W ? *(const vmidu *)(a + (Q - 1) * MID_W) : vload_n(a + (Q - 1) * MID_W, last);
        t[Q - 1] = MID_FMA(xr, b, t[Q - 1]);
    }
#pragma GCC unroll 16
    for (int q = 0; q < Q - 1; q++) *(vmidu *)(y + q * MID_W) = t[q];
    for (int64_t l = 0; l < last; l++) y[(Q - 1) * MID_W + l] = t[Q - 1][l];
}

/* KMmLeaf.tvec_rows: up to TV_Q vectors in registers, in one pass over
 * the rows; wider, every row's vectors fma'd into y in memory (L1), row
 * by row (the same chains: two passes over column tiles read the rows
 * at half the read rate). */
static void tvec_rows(const double *A, const double *x, int64_t k, int64_t r0, int64_t r1, double *y)
{
    const int64_t nv = (k + MID_W - 1) / MID_W;
    switch (nv) {
#define TV_CASE(Q) case Q: tvec_tile(A, x, k, r0, r1, Q, y); return;
    TV_CASE(1) TV_CASE(2) TV_CASE(3) TV_CASE(4) TV_CASE(5) TV_CASE(6) TV_CASE(7) TV_CASE(8)
    TV_CASE(9) TV_CASE(10) TV_CASE(11) TV_CASE(12)
#if TV_Q > 12
    TV_CASE(13) TV_CASE(14) TV_CASE(15) TV_CASE(16)
#endif
#undef TV_CASE
    default: break;
    }
    const int64_t full = k / MID_W * MID_W;
    memset(y, 0, (size_t)k * sizeof(double));
    for (int64_t r = r0; r < r1; r++) {
        const double *a = A + r * k;
        const double xr = x[r];
        for (int64_t j = 0; j < full; j += MID_W)
            *(vmidu *)(y + j) = MID_FMA(xr, *(const vmidu *)(a + j), *(const vmidu *)(y + j));
        for (int64_t j = full; j < k; j++) y[j] = fma(xr, a[j], y[j]);
    }
}

/* KMmLeaf.tmm_rows: tiles of Q full vectors of A's columns times the N
 * columns of B in registers (Q * N + N + 1 of the level's registers at
 * most); the last vector of a row that ends inside one (masked, its
 * lanes past k not stored) a tile of its own.
 *
 * Rows in chunks of TM_R (in L1 across the chunk's tiles), each tile's
 * sums carried from chunk to chunk in T (the same fma chain per cell,
 * so the same bits), each tile prefetching its own columns of the row
 * TM_PFR ahead: the memory streams while every tile computes. One pass
 * of all rows per tile (the first prefetching whole rows) read the rows
 * from memory in the first tile only and left the memory idle in the
 * others. 250,000 x 100 A, 2 threads, row groups as gemm_tn_cols's,
 * alternated builds (AMD EPYC, 2026-12-07): by 4 columns 5.4-5.8 ms ->
 * 4.4-5.2 (a plain read 3.0-3.5), by 8 columns 7.7-8.2 -> 4.6-4.9, by 2
 * 4.2-4.7 either way. Per-tile prefetches 16 rows ahead measured best
 * (8-64 rows, whole rows from the first tile, L2 hints: slower). Wide
 * rows whose sums do not fit TM_T keep the pass per tile. */
#define TM_PF 8
#define TM_R 16
#define TM_PFR 16
#define TM_T 4096   /* doubles of carried sums (32 KB) */
static inline __attribute__((always_inline)) void
tmm_tile(const double *A, const double *B, int64_t ldb, int64_t k, int64_t r0, int64_t r1, int64_t rend, int64_t j0,
         int Q, int N, bool first, bool chunked, vmid *T)
{
    vmid t[32];
    const int64_t last = BR_MIN(MID_W, k - j0);   /* lanes of a masked tile (Q == 1) */
    const bool tail = j0 + Q * MID_W >= k;         /* the tile holding the row's last column */
#pragma GCC unroll 16
    for (int i = 0; i < Q * N; i++) t[i] = first ? (vmid){0} : T[i];
    for (int64_t r = r0; r < r1; r++) {
        const double *ar = A + r * k + j0, *br = B + r * ldb;
        if (chunked) {
            if (r + TM_PFR < rend) {
                const double *p = ar + TM_PFR * k;
#pragma GCC unroll 8
                for (int q = 0; q < Q; q++) __builtin_prefetch(p + q * MID_W, 0, 3);
                if (tail) __builtin_prefetch(A + (r + TM_PFR) * k + k - 1, 0, 3);
                if (j0 == 0) __builtin_prefetch(B + (r + TM_PFR) * ldb, 0, 3);
            }
        } else if (j0 == 0 && r + TM_PF < r1) {
            const char *p = (const char *)(A + (r + TM_PF) * k);
            for (int64_t c = 0; c < k * 8; c += 64) __builtin_prefetch(p + c, 0, 3);
            __builtin_prefetch(B + (r + TM_PF) * ldb, 0, 3);
        }
#pragma GCC unroll 8
        for (int q = 0; q < Q; q++) {
            const vmid a = last < MID_W ? vload_n(ar, last) : *(const vmidu *)(ar + q * MID_W);
#pragma GCC unroll 8
            for (int c = 0; c < N; c++) t[c * Q + q] = MID_FMA(br[c], a, t[c * Q + q]);
        }
    }
#pragma GCC unroll 16
    for (int i = 0; i < Q * N; i++) T[i] = t[i];
}

/* A tile's sums T (lane l of vector c * Q + q: column j0 + q * MID_W + l
 * of A, column c of B) into C. */
static inline __attribute__((always_inline)) void
tmm_put(const vmid *T, int64_t k, int64_t j0, int Q, int N, double *C)
{
    const int64_t last = BR_MIN(MID_W, k - j0);
    for (int c = 0; c < N; c++)
        for (int q = 0; q < Q; q++)
            for (int64_t l = 0; l < (Q == 1 ? last : MID_W); l++) C[(j0 + q * MID_W + l) * N + c] = T[c * Q + q][l];
}

/* tiles of 8, 4, 2 and 1 full vectors (as many as N leaves registers for),
 * then the masked last vector: each over the rows [r0, r1) into its
 * sums at T (put: then into C) */
static inline __attribute__((always_inline)) void
tmm_cols(const double *A, const double *B, int64_t ldb, int64_t k, int64_t r0, int64_t r1, int64_t rend, int N,
         bool first, bool chunked, vmid *T, double *C)
{
#if defined(__AVX512F__)
    const int qmax = N <= 2 ? 8 : N <= 5 ? 4 : 2;
#else
    const int qmax = N <= 2 ? 4 : N <= 4 ? 2 : 1;
#endif
    const int64_t full = k / MID_W;
    int64_t v = 0;
    vmid *t = T;
#define TM_TILE(Q) \
    do { \
        tmm_tile(A, B, ldb, k, r0, r1, rend, v * MID_W, Q, N, first, chunked, t); \
        if (C) tmm_put(t, k, v * MID_W, Q, N, C); \
        if (chunked) t += (Q) * N; \
    } while (0)
    if (qmax >= 8) for (; v + 8 <= full; v += 8) TM_TILE(8);
    if (qmax >= 4) for (; v + 4 <= full; v += 4) TM_TILE(4);
    if (qmax >= 2) for (; v + 2 <= full; v += 2) TM_TILE(2);
    for (; v < full; v++) TM_TILE(1);
    if (k > full * MID_W) TM_TILE(1);
#undef TM_TILE
}

static inline __attribute__((always_inline)) void
tmm_n(const double *A, const double *B, int64_t ldb, int64_t k, int64_t r0, int64_t r1, int N, double *C)
{
    if (((k + MID_W - 1) / MID_W) * N * MID_W > TM_T) {
        vmid t[32];
        tmm_cols(A, B, ldb, k, r0, r1, r1, N, true, false, t, C);
        return;
    }
    vmid T[TM_T / MID_W];
    for (int64_t rc = r0; rc < r1; rc += TM_R) {
        const int64_t re = BR_MIN(rc + TM_R, r1);
        tmm_cols(A, B, ldb, k, rc, re, r1, N, rc == r0, true, T, re == r1 ? C : NULL);
    }
}

static void tmm_rows(const double *A, const double *B, int64_t k, int64_t n, int64_t ldb, int64_t r0, int64_t r1,
                     double *C)
{
    switch (n) {
    case 2: tmm_n(A, B, ldb, k, r0, r1, 2, C); return;
    case 3: tmm_n(A, B, ldb, k, r0, r1, 3, C); return;
    case 4: tmm_n(A, B, ldb, k, r0, r1, 4, C); return;
    case 5: tmm_n(A, B, ldb, k, r0, r1, 5, C); return;
    case 6: tmm_n(A, B, ldb, k, r0, r1, 6, C); return;
    case 7: tmm_n(A, B, ldb, k, r0, r1, 7, C); return;
    case 8: tmm_n(A, B, ldb, k, r0, r1, 8, C); return;
    default: assert(0);
    }
}

/* The 8 lanes of a row's dot product (column j in lane j % 8: one
 * AVX-512 vector, two AVX2 ones) summed as ((0+4) + (2+6)) + ((1+5) +
 * (3+7)). */
#if defined(__AVX512F__)
static inline double lanes8(const vmid *t)
{
    const __m256d s4 = _mm256_add_pd(_mm512_castpd512_pd256((__m512d)t[0]),
                                     _mm512_extractf64x4_pd((__m512d)t[0], 1));
#else
static inline double lanes8(const vmid *t)
{
    const __m256d s4 = _mm256_add_pd((__m256d)t[0], (__m256d)t[1]);
#endif
    const __m128d s2 = _mm_add_pd(_mm256_castpd256_pd128(s4), _mm256_extractf128_pd(s4, 1));
    return _mm_cvtsd_f64(s2) + _mm_cvtsd_f64(_mm_unpackhi_pd(s2, s2));
}

/* KMmLeaf.mvec_rows: row by row (interleaving four rows' streams read
 * them at a third of the read rate on the machine measured). */
static void mvec_rows(const double *A, const double *v, int64_t k, int64_t r0, int64_t r1, double *y)
{
    enum { H = 8 / MID_W };   /* vectors per 8 lanes: 1 (AVX-512) or 2 (AVX2) */
    const int64_t full = k / 8 * 8, tail = k - full;
    for (int64_t r = r0; r < r1; r++) {
        vmid t[H];
#pragma GCC unroll 2
        for (int h = 0; h < H; h++) t[h] = (vmid){0};
        const double *a = A + r * k;
        for (int64_t j = 0; j < full; j += 8)
#pragma GCC unroll 2
            for (int h = 0; h < H; h++)
                t[h] = MID_FMA_V(*(const vmidu *)(a + j + h * MID_W), *(const vmidu *)(v + j + h * MID_W), t[h]);
        for (int h = 0; h < H && tail; h++) {
            const int64_t n = BR_MAX(0, BR_MIN(MID_W, tail - h * MID_W));
            if (n) t[h] = MID_FMA_V(vload_n(a + full + h * MID_W, n), vload_n(v + full + h * MID_W, n), t[h]);
        }
        y[r] = lanes8(t);
    }
}
#endif

const KMmLeaf K_LEAF(k_mm_leaf) = {
    .skinny_rows = skinny,
#if defined(__AVX512F__)
    .lowk_rows = lowk_rows,
#endif
#if defined(__AVX2__)
    .tsmm_small = tsmm_small,
    .tsmm_small_v = tsmm_small_v,
    .tsmm_mid = tsmm_mid,
    .tsmm_wide = tsmm_wide,
    .tvec_rows = tvec_rows,
    .tmm_rows = tmm_rows,
    .mvec_rows = mvec_rows,
#endif
};
