/* reorg_leaf.c: leaf kernels of reorg.c (see leaf.h): the transposition
 * of a tile, through 8 x 8 register transposes with AVX2, else cell by
 * cell. */
#include "leaf.h"

#if defined(__AVX2__)
#include <immintrin.h>

/* 4 x 4 transpose of the rows r0..r3 (4 doubles each) into o0..o3. */
static inline void tr4(__m256d r0, __m256d r1, __m256d r2, __m256d r3, __m256d *o0,
                       __m256d *o1, __m256d *o2, __m256d *o3)
{
    __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
    __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
    *o0 = _mm256_permute2f128_pd(t0, t2, 0x20);
    *o1 = _mm256_permute2f128_pd(t1, t3, 0x20);
    *o2 = _mm256_permute2f128_pd(t0, t2, 0x31);
    *o3 = _mm256_permute2f128_pd(t1, t3, 0x31);
}

/* 8 x 8 block: a (stride lda) into c (stride ldc); nt: non-temporal
 * stores (each output row gets whole 64-byte lines). */
static inline void tr8(const double *a, int64_t lda, double *c, int64_t ldc, bool nt)
{
    __m256d lo[8], hi[8], o[16];
    for (int k = 0; k < 8; k++) {
        lo[k] = _mm256_loadu_pd(a + k * lda);
        hi[k] = _mm256_loadu_pd(a + k * lda + 4);
    }
    /* output row q (= input column q) is o[2q] (input rows 0-3) and
     * o[2q+1] (input rows 4-7) */
    for (int g = 0; g < 2; g++) {
        tr4(lo[4 * g], lo[4 * g + 1], lo[4 * g + 2], lo[4 * g + 3], &o[0 + g], &o[2 + g],
            &o[4 + g], &o[6 + g]);
        tr4(hi[4 * g], hi[4 * g + 1], hi[4 * g + 2], hi[4 * g + 3], &o[8 + g], &o[10 + g],
            &o[12 + g], &o[14 + g]);
    }
    if (nt) {
        for (int q = 0; q < 8; q++) {
            _mm256_stream_pd(c + q * ldc, o[2 * q]);
            _mm256_stream_pd(c + q * ldc + 4, o[2 * q + 1]);
        }
    } else {
        for (int q = 0; q < 8; q++) {
            _mm256_storeu_pd(c + q * ldc, o[2 * q]);
            _mm256_storeu_pd(c + q * ldc + 4, o[2 * q + 1]);
        }
    }
}
#endif

/* KReorgLeaf.transpose_tile */
static void transpose_tile(const double *a, double *c, int64_t m, int64_t n, int64_t i0, int64_t i1,
                           int64_t j0, int64_t j1, bool nt)
{
    int64_t ie = i0, je = j0;
#if defined(__AVX2__)
    ie = i0 + (i1 - i0) / 8 * 8;
    je = j0 + (j1 - j0) / 8 * 8;
    for (int64_t j = j0; j < je; j += 8)
        for (int64_t i = i0; i < ie; i += 8) tr8(a + i * n + j, n, c + j * m + i, m, nt);
    if (nt) _mm_sfence();
#else
    (void)nt;
#endif
    /* ragged edges (all of the tile without AVX2): columns [je, j1) of
     * all rows, rows [ie, i1) of [j0, je) */
    for (int64_t j = je; j < j1; j++)
        for (int64_t i = i0; i < i1; i++) c[j * m + i] = a[i * n + j];
    for (int64_t j = j0; j < je; j++)
        for (int64_t i = ie; i < i1; i++) c[j * m + i] = a[i * n + j];
}

const KReorgLeaf K_LEAF(k_reorg_leaf) = {transpose_tile};
