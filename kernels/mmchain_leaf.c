/* mmchain_leaf.c: leaf kernels of mmchain.c (see leaf.h): one row block
 * of t(X) %*% (w * (X %*% v)), dense (AVX-512: groups of 16 and 8 rows
 * through intrinsics, X of at most 16 columns and one column of v in
 * groups of 8 with the result in registers; every level: groups of 4
 * rows with `omp simd` reductions) or sparse. The dot products' `omp
 * simd` reductions follow the vector width, so the levels differ in the
 * last bits (each is the same for every thread count). */
#include "leaf.h"

#include <math.h>
#include <string.h>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

/* Rows of a chunk of chain_sparse with one column (c = 1). */
#define CHAIN_SP_ROWS 256

/* Software prefetch distance of the dense loop in bytes of x (about 64
 * rows of 100 columns). For rows of at most CHAIN_PREFETCH / 16 bytes it
 * measured from even to 10% faster than the hardware prefetcher alone
 * (loaded machine; 16 KB and non-temporal hints were slower); longer rows
 * were slower with it and go without. */
#define CHAIN_PREFETCH (48 << 10)

/* Weight of row i, output column l (1 without w). */
static inline double chain_w(const KChain *ch, int64_t i, int64_t l)
{
    return ch->w ? ch->w[i * ch->wc + (ch->wc == 1 ? 0 : l)] : 1.0;
}

#if defined(__AVX512F__)
#define CHAIN_PFD 32           /* rows prefetched ahead by chain_group, for */
#define CHAIN_PF_MIN (4 << 20) /* x of more bytes (beyond L2; in cache PF costs) */
/* Sum of the lanes of each of d[0..7]: lane k of the result is the sum of
 * d[k]'s lanes (a fixed tree of in-lane pairs, then 128-bit lanes). */
static inline __m512d chain_hsum8(const __m512d d[8])
{
    __m512d t[4];
    #pragma GCC unroll 8
    for (int k = 0; k < 4; k++)
        t[k] = _mm512_add_pd(_mm512_unpacklo_pd(d[2 * k], d[2 * k + 1]),
                             _mm512_unpackhi_pd(d[2 * k], d[2 * k + 1]));
    __m512d u0 = _mm512_add_pd(_mm512_shuffle_f64x2(t[0], t[1], 0x88),
                               _mm512_shuffle_f64x2(t[0], t[1], 0xdd));
    __m512d u1 = _mm512_add_pd(_mm512_shuffle_f64x2(t[2], t[3], 0x88),
                               _mm512_shuffle_f64x2(t[2], t[3], 0xdd));
    return _mm512_add_pd(_mm512_shuffle_f64x2(u0, u1, 0x88), _mm512_shuffle_f64x2(u0, u1, 0xdd));
}

/* The lanes of mask mt of the 8 doubles at p, the others 0 (kv: those
 * lanes' bits all set): a whole load where p + 8 lies inside x (full),
 * the lanes kept by a bitwise and, else a masked load; the same values
 * either way. Masked loads were the slow part of the narrow loops on AMD
 * Zen 5 (GCC folds a load then a zero-masking move into one, hence the
 * and). */
static inline __m512d chain_lanes(const double *p, __mmask8 mt, __m512d kv, bool full)
{
    if (mt == 0xff) return _mm512_loadu_pd(p);
    return full ? _mm512_and_pd(_mm512_loadu_pd(p), kv) : _mm512_maskz_loadu_pd(mt, p);
}

static inline __m512d chain_kv(__mmask8 mt) { return _mm512_castsi512_pd(_mm512_maskz_set1_epi64(mt, -1)); }

/* Dense x, AVX-512: acc (c x n) += q_il * x_i for the G rows i of one
 * group starting at x_i0 (G = 8 or 16, a constant after inlining). Per
 * output column: G dot products sharing each load of v (row tails by
 * masked loads), then one pass over acc adding the G scaled rows (read
 * again from L1), so acc is loaded and stored once per G rows. PF: column
 * 0 prefetches the rows CHAIN_PFD ahead, spread evenly (half the rows in each
 * pass; 1e6 x 100, c = 1, 2 threads: 69 -> 55 ns per row, a plain read 53). */
static inline __attribute__((always_inline)) void
chain_group(const KChain *ch, int64_t i0, int G, int PF, double *restrict acc)
{
    int64_t n = ch->x->cols, nf = n & ~(int64_t)7;
    const double *x = ch->x->d + i0 * n;
    __mmask8 mt = (__mmask8)((1u << (n & 7)) - 1);
    for (int64_t l = 0; l < ch->c; l++) {
        const double *vl = ch->v + l * n;
        double *a = acc + l * n;
        __m512d d[16], qk[16];
        #pragma GCC unroll 16
        for (int k = 0; k < G; k++) d[k] = _mm512_setzero_pd();
        int64_t j = 0;
        for (; j < nf; j += 8) {
            __m512d vj = _mm512_loadu_pd(vl + j);
            #pragma GCC unroll 16
            for (int k = 0; k < G; k++) {
                d[k] = _mm512_fmadd_pd(_mm512_loadu_pd(x + k * n + j), vj, d[k]);
                if (PF && l == 0 && k < G / 2) _mm_prefetch((const char *)(x + (k + CHAIN_PFD) * n + j), _MM_HINT_T1);
            }
        }
        if (mt) {
            __m512d vj = _mm512_maskz_loadu_pd(mt, vl + j);
            #pragma GCC unroll 16
            for (int k = 0; k < G; k++) {
                d[k] = _mm512_fmadd_pd(_mm512_maskz_loadu_pd(mt, x + k * n + j), vj, d[k]);
                if (PF && l == 0 && k < G / 2) _mm_prefetch((const char *)(x + (k + CHAIN_PFD) * n + j), _MM_HINT_T1);
            }
        }
        for (int h = 0; h < G; h += 8) {
            __m512d q = chain_hsum8(d + h);
            int64_t i = i0 + h;
            if (ch->w && ch->wc == 1) {
                q = _mm512_mul_pd(q, _mm512_loadu_pd(ch->w + i));
            } else if (ch->w) {               /* w_il of rows i..i+7, stride wc */
                int64_t o = i * ch->wc + l, s = ch->wc;
                __m512i ix = _mm512_set_epi64(o + 7 * s, o + 6 * s, o + 5 * s, o + 4 * s,
                                              o + 3 * s, o + 2 * s, o + s, o);
                q = _mm512_mul_pd(q, _mm512_i64gather_pd(ix, ch->w, 8));
            }
            #pragma GCC unroll 8
            for (int k = 0; k < 8; k++) qk[h + k] = _mm512_permutexvar_pd(_mm512_set1_epi64(k), q);
        }
        for (j = 0; j < nf; j += 8) {
            __m512d t = _mm512_loadu_pd(a + j);
            #pragma GCC unroll 16
            for (int k = 0; k < G; k++) {
                t = _mm512_fmadd_pd(qk[k], _mm512_loadu_pd(x + k * n + j), t);
                if (PF && l == 0 && k >= G / 2) _mm_prefetch((const char *)(x + (k + CHAIN_PFD) * n + j), _MM_HINT_T1);
            }
            _mm512_storeu_pd(a + j, t);
        }
        if (mt) {
            __m512d t = _mm512_maskz_loadu_pd(mt, a + j);
            #pragma GCC unroll 16
            for (int k = 0; k < G; k++) {
                t = _mm512_fmadd_pd(qk[k], _mm512_maskz_loadu_pd(mt, x + k * n + j), t);
                if (PF && l == 0 && k >= G / 2) _mm_prefetch((const char *)(x + (k + CHAIN_PFD) * n + j), _MM_HINT_T1);
            }
            _mm512_mask_storeu_pd(a + j, mt, t);
        }
    }
}

/* Dense x of n <= 8 * NV columns (NV = 1 or 2, a literal), one column of
 * v (c = 1, w of one column or none), AVX-512: the rows of [r0, r1) in
 * groups of 8 with acc in registers over the whole range; returns the
 * first row not done (at most 7 before r1). Each row's vectors are
 * loaded once and serve its dot product and its update. The same sums
 * in the same order as chain_group (the dot products by vector, then
 * chain_hsum8; acc updated row after row), so the same bits. chain_group
 * kept acc in memory and its group's 32 vectors did not fit the
 * registers: at 10 columns it took 53 ms over 5e6 rows (2 threads, Zen
 * 5), 5x a plain read, 6x its own time at 16 columns. */
static inline __attribute__((always_inline)) int64_t
chain_narrow(const KChain *ch, int64_t r0, int64_t r1, double *restrict acc, int NV)
{
    const int64_t n = ch->x->cols, end = ch->x->rows * n;
    const double *X = ch->x->d;
    const __mmask8 m0 = NV == 1 ? (__mmask8)((1u << n) - 1) : (__mmask8)0xff;
    const __mmask8 m1 = NV == 2 ? (__mmask8)((1u << (n - 8)) - 1) : 0;
    const __m512d k0 = chain_kv(m0), k1 = chain_kv(m1);
    const __m512d v0 = _mm512_maskz_loadu_pd(m0, ch->v), v1 = NV == 2 ? _mm512_maskz_loadu_pd(m1, ch->v + 8) : v0;
    __m512d a0 = _mm512_maskz_loadu_pd(m0, acc), a1 = NV == 2 ? _mm512_maskz_loadu_pd(m1, acc + 8) : a0;
    int64_t i = r0;
    for (; i + 8 <= r1; i += 8) {
        const double *x = X + i * n;
        /* whole vectors while the group's last one ends inside x */
        const bool full = (i + 7) * n + 8 * NV <= end;
        __m512d x0[8], x1[8], d[8];
        #pragma GCC unroll 8
        for (int k = 0; k < 8; k++) {
            x0[k] = NV == 1 ? chain_lanes(x + k * n, m0, k0, full) : _mm512_loadu_pd(x + k * n);
            d[k] = _mm512_fmadd_pd(x0[k], v0, _mm512_setzero_pd());
            if (NV == 2) {
                x1[k] = chain_lanes(x + k * n + 8, m1, k1, full);
                d[k] = _mm512_fmadd_pd(x1[k], v1, d[k]);
            }
        }
        __m512d q = chain_hsum8(d);
        if (ch->w) q = _mm512_mul_pd(q, _mm512_loadu_pd(ch->w + i));
        #pragma GCC unroll 8
        for (int k = 0; k < 8; k++) {
            const __m512d qk = _mm512_permutexvar_pd(_mm512_set1_epi64(k), q);
            a0 = _mm512_fmadd_pd(qk, x0[k], a0);
            if (NV == 2) a1 = _mm512_fmadd_pd(qk, x1[k], a1);
        }
    }
    _mm512_mask_storeu_pd(acc, m0, a0);
    if (NV == 2) _mm512_mask_storeu_pd(acc + 8, m1, a1);
    return i;
}

/* Dense x, AVX-512: rows of [r0, r1) in groups of 16, then one of 8 if
 * 8 or more are left (chain_group); returns the first row not done (at
 * most 7 before r1). 16 rows per group read x at about the speed of a
 * plain sum when x is prefetched (larger than CHAIN_PF_MIN); 8 rows at ~92%
 * of it and the 4-row portable loop at ~75-80% (bound by the loads and
 * stores of acc). */
static int64_t chain_dense16(const KChain *ch, int64_t r0, int64_t r1, double *restrict acc)
{
    const int64_t n = ch->x->cols;
    if (ch->c == 1 && (!ch->w || ch->wc == 1) && n <= 16)
        return n <= 8 ? chain_narrow(ch, r0, r1, acc, 1) : chain_narrow(ch, r0, r1, acc, 2);
    int64_t i = r0;
    if ((double)ch->x->rows * (double)ch->x->cols * sizeof(double) > CHAIN_PF_MIN)
        for (; i + 16 <= r1; i += 16) chain_group(ch, i, 16, 1, acc);
    else
        for (; i + 16 <= r1; i += 16) chain_group(ch, i, 16, 0, acc);
    if (i + 8 <= r1) {
        chain_group(ch, i, 8, 0, acc);
        i += 8;
    }
    return i;
}
#endif

/* KMmchainLeaf.dense: acc (c x n, zeroed by the caller) += q_il * x_i over rows i in
 * [r0, r1) and l < c, where q_il = w_il * (x_i . v_l). Rows go in groups
 * of 4: four dot products in flight and one pass over acc per group, so
 * the loop runs at memory speed (omp simd: the sums are reassociated
 * into vector lanes, the same way on every thread; explicit fma: the
 * build does not contract a * b + c, and fused it ran 10-15% faster). Each group of narrow
 * rows prefetches (to L2) the lines CHAIN_PREFETCH bytes ahead of it.
 * With AVX-512, chain_dense16 does the groups of 16 and 8 rows first and
 * this loop only the last r1 - r0 mod 8 rows. */
static void chain_dense(const KChain *ch, int64_t r0, int64_t r1, double *restrict acc)
{
    int64_t n = ch->x->cols, c = ch->c, i = r0;
    const double *X = ch->x->d;
    const char *end = (const char *)(X + ch->x->rows * n);
    int64_t group = 4 * n * (int64_t)sizeof(double);
    int64_t pfb = group <= CHAIN_PREFETCH / 4 ? group : 0;   /* bytes prefetched per group */
#if defined(__AVX512F__)
    i = chain_dense16(ch, r0, r1, acc);
#endif
    for (; i + 4 <= r1; i += 4) {
        const double *x0 = X + i * n, *x1 = x0 + n, *x2 = x1 + n, *x3 = x2 + n;
        const char *pf = (const char *)x0 + CHAIN_PREFETCH;
        for (int64_t o = 0; o < pfb && pf + o < end; o += 64) __builtin_prefetch(pf + o, 0, 2);
        for (int64_t l = 0; l < c; l++) {
            const double *vl = ch->v + l * n;
            double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            #pragma omp simd reduction(+ : s0, s1, s2, s3)
            for (int64_t j = 0; j < n; j++) {
                double vj = vl[j];
                s0 = fma(x0[j], vj, s0);
                s1 = fma(x1[j], vj, s1);
                s2 = fma(x2[j], vj, s2);
                s3 = fma(x3[j], vj, s3);
            }
            s0 *= chain_w(ch, i, l);
            s1 *= chain_w(ch, i + 1, l);
            s2 *= chain_w(ch, i + 2, l);
            s3 *= chain_w(ch, i + 3, l);
            double *a = acc + l * n;
            #pragma omp simd
            for (int64_t j = 0; j < n; j++)
                a[j] = fma(s3, x3[j], fma(s2, x2[j], fma(s1, x1[j], fma(s0, x0[j], a[j]))));
        }
    }
    for (; i < r1; i++) {
        const double *xr = X + i * n;
        for (int64_t l = 0; l < c; l++) {
            const double *vl = ch->v + l * n;
            double s = 0;
            #pragma omp simd reduction(+ : s)
            for (int64_t j = 0; j < n; j++) s = fma(xr[j], vl[j], s);
            s *= chain_w(ch, i, l);
            double *a = acc + l * n;
            #pragma omp simd
            for (int64_t j = 0; j < n; j++) a[j] = fma(s, xr[j], a[j]);
        }
    }
}

/* KMmchainLeaf.sparse: acc (n x c, zeroed by the caller) += x_i' q_i over rows i in
 * [r0, r1), q_i = w_i * (x_i v); q is scratch of c doubles. A row whose
 * q is exactly 0 is skipped (c > 1): its values are then all finite (an
 * Inf or NaN makes q non-zero or NaN), so it would add only zeros. */
static void chain_sparse(const KChain *ch, int64_t r0, int64_t r1, double *restrict acc,
                         double *restrict q)
{
    const MB *x = ch->x;
    const int32_t *ci = x->ci;
    const double *xv = x->v, *v = ch->v;
    int64_t c = ch->c;
    if (c == 1) {
        /* by chunks of rows through the sparse leaf (sp_leaf.c: rows in
         * fixed chunks of values, t(X) %*% q in one flat loop; loops per
         * row of about ten values lost half their time to mispredicted
         * exits). Rows whose q is 0 add v * 0 = +-0 (their values are
         * finite, as above): the sums keep their bits. */
        const KSpLeaf *S = &K_LEAF(k_sp_leaf);
        double qc[CHAIN_SP_ROWS];
        for (int64_t i0 = r0; i0 < r1; i0 += CHAIN_SP_ROWS) {
            int64_t i1 = i0 + CHAIN_SP_ROWS < r1 ? i0 + CHAIN_SP_ROWS : r1;
            S->mv_rows(x->rp, ci, xv, x->rp[x->rows], v, i0, i1, qc);
            if (ch->w)
                for (int64_t i = i0; i < i1; i++) qc[i - i0] *= ch->w[i * ch->wc];
            S->tmv_rows(x->rp, ci, xv, qc, i0, i1, acc);
        }
        return;
    }
    for (int64_t i = r0; i < r1; i++) {
        int64_t lo = x->rp[i], hi = x->rp[i + 1];
        if (lo == hi) continue;
        memset(q, 0, (size_t)c * sizeof(double));
        for (int64_t p = lo; p < hi; p++) {
            const double *vr = v + (int64_t)ci[p] * c;
            double a = xv[p];
            #pragma omp simd
            for (int64_t l = 0; l < c; l++) q[l] += a * vr[l];
        }
        bool zero = true;
        for (int64_t l = 0; l < c; l++) {
            q[l] *= chain_w(ch, i, l);
            zero = zero && q[l] == 0;
        }
        if (zero) continue;
        for (int64_t p = lo; p < hi; p++) {
            double *ar = acc + (int64_t)ci[p] * c, a = xv[p];
            #pragma omp simd
            for (int64_t l = 0; l < c; l++) ar[l] += a * q[l];
        }
    }
}

const KMmchainLeaf K_LEAF(k_mmchain_leaf) = {.dense = chain_dense, .sparse = chain_sparse};
