/* sp_leaf.c: leaf kernels (see leaf.h) of the CSR row loops behind
 * sparse matrix-vector products: X %*% v (mm.c, the sparse Row
 * operators' products) and t(X) %*% q (mm.c, mmchain, the Row operators'
 * t(X) %*% q roots).
 *
 * Rows of a sparse X hold few values (L2SVM's 1% of 1000 columns: ten),
 * and a loop over each row's values ends at a different count every
 * row: on an AMD Zen 5 (2026-12-06) the mispredicted loop exits took
 * half the time of X %*% v (the same loops over rows of exactly ten
 * values ran 2x faster). So rows are read in fixed chunks of S values
 * (8 or 16) whose lanes past the row's end are masked to zero, and one
 * chunk covers most rows; t(X) %*% q first spreads each row's q over its
 * values (fixed-width stores, the next row overwrites the overhang) and
 * then adds v * q into the sums in one flat loop without a row
 * boundary. Gathers were slower than scalar loads on that machine. */
#include "leaf.h"
#include "../base/base.h"
#include "../matrix/mb.h"

#include <string.h>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

/* The generic order of mv_rows: the row's k-th value into sum k % 4. */
static inline double row_dot(const int32_t *ci, const double *v, int64_t len, const double *x)
{
    double s[4] = {0, 0, 0, 0};
    for (int64_t k = 0; k < len; k++) s[k & 3] += v[k] * x[ci[k]];
    return (s[0] + s[1]) + (s[2] + s[3]);
}

#if defined(__AVX2__)
/* Row i's dot product in chunks of S values, lanes at or past len masked
 * (the loaded values beyond the row belong to the next rows: finite or
 * not, the mask makes them +0, and adding +0 keeps every sum's bits).
 * Lane l of the one 4-lane sum is row_dot's s[l]: the k-th value goes
 * into lane k % 4 in the same order. The indexed values are loaded one
 * by one into a vector (gathers were slower), the products, masks and
 * sums are 4 lanes at a time: 1.25-1.45x the scalar-lane version at 3
 * to 50 values a row on an AMD EPYC (2026-12-07). */
static inline __attribute__((always_inline)) double
chunk_dot(const int32_t *ci, const double *v, int64_t len, const double *x, const int S)
{
    const __m256i iota = _mm256_set_epi64x(3, 2, 1, 0);
    __m256d s = _mm256_setzero_pd();
    int64_t k0 = 0;
    do {
        const __m256i L = _mm256_set1_epi64x(len - k0);
        const int32_t *c = ci + k0;
        const double *w = v + k0;
#pragma GCC unroll 4
        for (int q = 0; q < S; q += 4) {
            const __m256d xv = _mm256_set_pd(x[c[q + 3]], x[c[q + 2]], x[c[q + 1]], x[c[q]]);
            const __m256d t = _mm256_mul_pd(_mm256_loadu_pd(w + q), xv);
            const __m256i m = _mm256_cmpgt_epi64(L, _mm256_add_epi64(iota, _mm256_set1_epi64x(q)));
            s = _mm256_add_pd(s, _mm256_and_pd(t, _mm256_castsi256_pd(m)));
        }
        k0 += S;
    } while (k0 < len);
    const __m128d lo = _mm256_castpd256_pd128(s), hi = _mm256_extractf128_pd(s, 1);
    return (_mm_cvtsd_f64(lo) + _mm_cvtsd_f64(_mm_unpackhi_pd(lo, lo))) +
           (_mm_cvtsd_f64(hi) + _mm_cvtsd_f64(_mm_unpackhi_pd(hi, hi)));
}

static inline __attribute__((always_inline)) void
mv_chunked(const int64_t *rp, const int32_t *ci, const double *v, int64_t nz, const double *x, int64_t r0,
           int64_t r1, double *y, const int S)
{
    for (int64_t i = r0; i < r1; i++) {
        int64_t p = rp[i], e = rp[i + 1];
        if (__builtin_expect(e + S <= nz, 1)) y[i - r0] = chunk_dot(ci + p, v + p, e - p, x, S);
        else y[i - r0] = row_dot(ci + p, v + p, e - p, x);
    }
}
#endif

/* KSpLeaf.mv_rows */
static void mv_rows(const int64_t *rp, const int32_t *ci, const double *v, int64_t nz, const double *x, int64_t r0,
                    int64_t r1, double *y)
{
    if (r1 <= r0) return;
#if defined(__AVX2__)
    /* 16-value chunks unless the rows are short (a chunk's masked lanes
     * cost about as much as its values) */
    if (rp[r1] - rp[r0] <= 6 * (r1 - r0)) mv_chunked(rp, ci, v, nz, x, r0, r1, y, 8);
    else mv_chunked(rp, ci, v, nz, x, r0, r1, y, 16);
#else
    (void)nz;
    for (int64_t i = r0; i < r1; i++) y[i - r0] = row_dot(ci + rp[i], v + rp[i], rp[i + 1] - rp[i], x);
#endif
}

/* KSpLeaf.tmv_rows: each row's q spread over its values' slots in w,
 * then one flat loop adds v * w into the sums in value order (the
 * products 4 at a time, the adds one by one), prefetching X's values and
 * columns SP_AHEAD values ahead: 1.45x the flat scalar loop without
 * prefetches over 250,000 x 1000 at 1% (one thread, AMD EPYC,
 * 2026-12-07). */
#define SP_AHEAD 512
static void tmv_rows(const int64_t *rp, const int32_t *ci, const double *v, const double *q, int64_t r0, int64_t r1,
                     double *restrict acc)
{
#if defined(__AVX2__)
    double w[K_SP_SCRATCH] __attribute__((aligned(32)));   /* each value's q (32 KB) */
    int64_t i = r0;
    while (i < r1) {
        const int64_t base = rp[i];
        /* the rows [i, e) whose values fit w with a chunk to spare */
        int64_t lo = i, hi = r1;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo + 1) / 2;
            if (rp[mid] - base + 16 <= K_SP_SCRATCH) lo = mid;
            else hi = mid - 1;
        }
        const int64_t e = lo;
        if (e == i) {   /* a row longer than w */
            const double qi = q[i - r0];
            for (int64_t p = rp[i]; p < rp[i + 1]; p++) acc[ci[p]] += v[p] * qi;
            i++;
            continue;
        }
        for (int64_t r = i; r < e; r++) {
            const int64_t o = rp[r] - base, len = rp[r + 1] - rp[r];
            const __m256d b = _mm256_set1_pd(q[r - r0]);
            double *d = w + o;
            _mm256_storeu_pd(d, b); _mm256_storeu_pd(d + 4, b);
            _mm256_storeu_pd(d + 8, b); _mm256_storeu_pd(d + 12, b);
            if (__builtin_expect(len > 16, 0))
                for (int64_t t = 16; t < len; t += 4) _mm256_storeu_pd(d + t, b);
        }
        const int32_t *c = ci + base;
        const double *a = v + base;
        const int64_t K = rp[e] - base;
        int64_t p = 0;
        for (; p + 4 <= K; p += 4) {
            if (!(p & 7)) {   /* without: from memory about twice the in-cache time a value */
                _mm_prefetch((const char *)(a + p + SP_AHEAD), _MM_HINT_T0);
                _mm_prefetch((const char *)(c + p + SP_AHEAD), _MM_HINT_T0);
            }
            const __m256d t = _mm256_mul_pd(_mm256_loadu_pd(a + p), _mm256_load_pd(w + p));
            const __m128d lo = _mm256_castpd256_pd128(t), hi = _mm256_extractf128_pd(t, 1);
            acc[c[p]] += _mm_cvtsd_f64(lo);
            acc[c[p + 1]] += _mm_cvtsd_f64(_mm_unpackhi_pd(lo, lo));
            acc[c[p + 2]] += _mm_cvtsd_f64(hi);
            acc[c[p + 3]] += _mm_cvtsd_f64(_mm_unpackhi_pd(hi, hi));
        }
        for (; p < K; p++) acc[c[p]] += a[p] * w[p];
        i = e;
    }
#else
    for (int64_t i = r0; i < r1; i++) {
        const double qi = q[i - r0];
        for (int64_t p = rp[i]; p < rp[i + 1]; p++) acc[ci[p]] += v[p] * qi;
    }
#endif
}

/* tsd_rows from A's first column (i0 = 0) for a
 * literal width N <= K_SP_NARROW: a value's N products added into its
 * output row as vectors of 4, 2 and 1 (a loop over a run-time width of 4
 * cost its setup and epilogue per value: MLogreg's t(X) %*% Q, K = 4,
 * about 6 ms over 250,000 x 1000 at 1%) */
typedef double sp_v4 __attribute__((vector_size(32), may_alias, aligned(8)));
typedef double sp_v2 __attribute__((vector_size(16), may_alias, aligned(8)));
/* X(N) for each literal width 2 .. K_SP_NARROW of tsd_rows_k and sd_rows_k */
#define SP_NARROW_WIDTHS(X) X(2) X(3) X(4) X(5) X(6) X(7) X(8)
static inline __attribute__((always_inline)) void
tsd_rows_k(const int64_t *rp, const int32_t *ci, const double *v, const double *b, int64_t l0, int64_t l1,
           int64_t i1, double *restrict acc, const int N)
{
    for (int64_t l = l0; l < l1; l++) {
        const int64_t p0 = rp[l];
        int64_t hi = rp[l + 1];
        if (hi > p0 && ci[hi - 1] >= i1) hi = mb_csr_lower(ci, p0, hi, i1);
        const double *br = b + l * N;
        sp_v4 b4[K_SP_NARROW / 4];
        sp_v2 b2 = {0};
        double b1 = 0;
        for (int c = 0; c < N / 4; c++) b4[c] = *(const sp_v4 *)(br + 4 * c);
        if (N & 2) b2 = *(const sp_v2 *)(br + (N & ~3));
        if (N & 1) b1 = br[N - 1];
        for (int64_t p = p0; p < hi; p++) {
            const double av = v[p];
            double *o = acc + (int64_t)ci[p] * N;
            for (int c = 0; c < N / 4; c++) *(sp_v4 *)(o + 4 * c) += av * b4[c];
            if (N & 2) *(sp_v2 *)(o + (N & ~3)) += av * b2;
            if (N & 1) o[N - 1] += av * b1;
        }
    }
}

/* KSpLeaf.tsd_rows: a row's values outside [i0, i1) skipped by a binary
 * search (i0 > 0) and the loop's end; each value's row of B added into
 * its output row in one vector loop (the same product and sum per cell at
 * every level: no contraction under -std=c11) */
static void tsd_rows(const int64_t *rp, const int32_t *ci, const double *v, const double *b, int64_t n, int64_t l0,
                     int64_t l1, int64_t i0, int64_t i1, double *restrict acc)
{
    if (i0 == 0 && n >= 2 && n <= K_SP_NARROW) {
        switch (n) {
#define TSD_CASE(N) case N: tsd_rows_k(rp, ci, v, b, l0, l1, i1, acc, N); return;
        SP_NARROW_WIDTHS(TSD_CASE)
#undef TSD_CASE
        default: break;
        }
    }
    for (int64_t l = l0; l < l1; l++) {
        int64_t p = rp[l];
        const int64_t hi = rp[l + 1];
        if (p == hi || ci[hi - 1] < i0 || ci[p] >= i1) continue;
        if (i0 > 0) p = mb_csr_lower(ci, p, hi, i0);
        const double *restrict br = b + l * n;
        for (; p < hi && ci[p] < i1; p++) {
            const double av = v[p];
            double *restrict row = acc + (ci[p] - i0) * n;
#pragma omp simd
            for (int64_t j = 0; j < n; j++) row[j] += av * br[j];
        }
    }
}

/* KSpLeaf.sd_row: tiles of 4 vectors, then of one, then single columns,
 * each tile's sums in registers over the row's values (a load-add-store
 * of the output per value was a store-forwarding chain: MLogreg's X %*%
 * B, 4 columns, about 8 cycles a value) */
#if defined(__AVX512F__)
#define SD_W 8
#elif defined(__AVX2__)
#define SD_W 4
#else
#define SD_W 2
#endif
typedef double sd_vec __attribute__((vector_size(SD_W * 8), may_alias, aligned(8)));
typedef double sd_v4 __attribute__((vector_size(32), may_alias, aligned(8)));
typedef double sd_v2 __attribute__((vector_size(16), may_alias, aligned(8)));
static void sd_row(const int32_t *ci, const double *v, int64_t len, const double *b, int64_t n, double *restrict row)
{
    int64_t j = 0;
    for (; j + 4 * SD_W <= n; j += 4 * SD_W) {
        sd_vec s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};
        for (int64_t p = 0; p < len; p++) {
            const double x = v[p];
            const double *br = b + (int64_t)ci[p] * n + j;
            s0 += x * *(const sd_vec *)br;
            s1 += x * *(const sd_vec *)(br + SD_W);
            s2 += x * *(const sd_vec *)(br + 2 * SD_W);
            s3 += x * *(const sd_vec *)(br + 3 * SD_W);
        }
        *(sd_vec *)(row + j) += s0;
        *(sd_vec *)(row + j + SD_W) += s1;
        *(sd_vec *)(row + j + 2 * SD_W) += s2;
        *(sd_vec *)(row + j + 3 * SD_W) += s3;
    }
    for (; j + SD_W <= n; j += SD_W) {
        sd_vec s0 = {0};
        for (int64_t p = 0; p < len; p++) s0 += v[p] * *(const sd_vec *)(b + (int64_t)ci[p] * n + j);
        *(sd_vec *)(row + j) += s0;
    }
#if SD_W > 4
    for (; j + 4 <= n; j += 4) {
        sd_v4 s0 = {0};
        for (int64_t p = 0; p < len; p++) s0 += v[p] * *(const sd_v4 *)(b + (int64_t)ci[p] * n + j);
        *(sd_v4 *)(row + j) += s0;
    }
#endif
#if SD_W > 2
    for (; j + 2 <= n; j += 2) {
        sd_v2 s0 = {0};
        for (int64_t p = 0; p < len; p++) s0 += v[p] * *(const sd_v2 *)(b + (int64_t)ci[p] * n + j);
        *(sd_v2 *)(row + j) += s0;
    }
#endif
    for (; j < n; j++) {
        double s0 = 0;
        for (int64_t p = 0; p < len; p++) s0 += v[p] * b[(int64_t)ci[p] * n + j];
        row[j] += s0;
    }
}

/* KSpLeaf.sd_rows for a literal width N: the row's sums as vectors of
 * 4, 2 and 1 in registers, stored once (sd_row's tiles for a run-time
 * width of 4 cost a loop setup, two indirect calls and a store-add per
 * row: MLogreg's X %*% V, K = 4, about 3.5 ms over 250,000 x 1000 at
 * 1%) */
static inline __attribute__((always_inline)) void
sd_rows_k(const int64_t *rp, const int32_t *ci, const double *v, const double *b, int64_t r0, int64_t r1,
          double *restrict out, const int N)
{
    for (int64_t i = r0; i < r1; i++) {
        sp_v4 s4[K_SP_NARROW / 4];
        for (int c = 0; c < N / 4; c++) s4[c] = (sp_v4){0, 0, 0, 0};
        sp_v2 s2 = {0};
        double s1 = 0;
        for (int64_t p = rp[i]; p < rp[i + 1]; p++) {
            const double x = v[p];
            const double *br = b + (int64_t)ci[p] * N;
            for (int c = 0; c < N / 4; c++) s4[c] += x * *(const sp_v4 *)(br + 4 * c);
            if (N & 2) s2 += x * *(const sp_v2 *)(br + (N & ~3));
            if (N & 1) s1 += x * br[N - 1];
        }
        double *o = out + (i - r0) * N;
        for (int c = 0; c < N / 4; c++) *(sp_v4 *)(o + 4 * c) = s4[c];
        if (N & 2) *(sp_v2 *)(o + (N & ~3)) = s2;
        if (N & 1) o[N - 1] = s1;
    }
}

/* KSpLeaf.sd_rows */
static void sd_rows(const int64_t *rp, const int32_t *ci, const double *v, const double *b, int64_t n, int64_t r0,
                    int64_t r1, double *restrict out)
{
    switch (n) {
#define SD_CASE(N) case N: sd_rows_k(rp, ci, v, b, r0, r1, out, N); return;
    SP_NARROW_WIDTHS(SD_CASE)
#undef SD_CASE
    default:   /* (no literal width: sd_row's tiles into zeroed rows) */
        for (int64_t i = r0; i < r1; i++) {
            double *o = out + (i - r0) * n;
            memset(o, 0, (size_t)n * sizeof(double));
            sd_row(ci + rp[i], v + rp[i], rp[i + 1] - rp[i], b, n, o);
        }
    }
}

const KSpLeaf K_LEAF(k_sp_leaf) = {
    .mv_rows = mv_rows, .tmv_rows = tmv_rows, .tsd_rows = tsd_rows, .sd_row = sd_row, .sd_rows = sd_rows};
