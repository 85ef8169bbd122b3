/* cla_leaf.c: the per-row loops of the compressed products (kernels/
 * cla_ops.c; see leaf.h): gathers of per-tuple rows by code (X %*% B,
 * the row bundles, the fused chain's first step) and scatters of rows
 * into per-tuple sums (t(X) %*% Y, A %*% X). Plain adds, one per cell in
 * row order, so every copy gives the same bits. */
#include "leaf.h"

#include "../matrix/cmb.h"

#include <string.h>

/* Rows of 2, 4 and 8 values as one GCC vector (split into the level's
 * registers by the compiler): the row-wise lookups pad their rows to
 * these widths (cla_ops.c pad_k), and the plain loops below stayed
 * scalar and rolled at those widths (one dependent add per value; GCC
 * -O2 did not vectorize the read-modify-write rows). Lane-wise adds in
 * the same order: the same bits as the plain loops. */
typedef double VD2 __attribute__((vector_size(16)));
typedef double VD4 __attribute__((vector_size(32)));
typedef double VD8 __attribute__((vector_size(64)));
#define LDV(K, p) ({ VD##K v_; memcpy(&v_, (p), sizeof v_); v_; })
#define STV(K, p, x) do { VD##K s_ = (x); memcpy((p), &s_, sizeof s_); } while (0)

/* M(K) at the widths without a vector, V(K) at 2, 4 and 8, W(k) past 8
 * (rows taken in chunks of 8 columns, one vector each, and a plain tail:
 * at a width known only at run time the plain loops stayed scalar, and
 * X %*% B at k = 16 ran at 0.54 of BLAS where k = 8 ran at 1.35) */
#define CLA_VWIDTHS(k, M, V, W)                                                              \
    switch (k) {                                                                             \
    case 2: V(2) break;                                                                      \
    case 3: M(3) break;                                                                      \
    case 4: V(4) break;                                                                      \
    case 5: M(5) break;                                                                      \
    case 6: M(6) break;                                                                      \
    case 7: M(7) break;                                                                      \
    case 8: V(8) break;                                                                      \
    default:                                                                                 \
        if ((k) > 8) {                                                                       \
            W(k)                                                                             \
        } else {                                                                             \
            M(k)                                                                             \
        }                                                                                    \
        break;                                                                               \
    }
/* A wide row's columns [0, k): E(c) over chunks of 8 from c (one VD8
 * each), then T(c) over the tail one at a time; every cell keeps its
 * adds in order, so the bits of the plain loops. */
#define WIDE_COLS(k, E, T)                                                                   \
    {                                                                                        \
        int64_t c_ = 0;                                                                      \
        for (; c_ + 8 <= (k); c_ += 8) E(c_)                                                 \
        for (; c_ < (k); c_++) T(c_)                                                         \
    }

/* o[i*k + c] += p[cd[i]*k + c]; A[cd[i]*k + c] += b[i*k + c] (cd: the
 * codes, one loop per code width so that the load is no branch a row) */
#define GATHER_LOOP(K, cd)                                                                   \
    for (int64_t i = 0; i < n; i++) {                                                       \
        const double *restrict pr = p + (int64_t)cd[i] * (K);                               \
        double *restrict oi = o + i * (K);                                                  \
        for (int cc = 0; cc < (K); cc++) oi[cc] += pr[cc];                                  \
    }
#define SCATTER_LOOP(K, cd)                                                                  \
    for (int64_t i = 0; i < n; i++) {                                                       \
        double *restrict a = A + (int64_t)cd[i] * (K);                                      \
        const double *restrict br = b + i * (K);                                            \
        for (int cc = 0; cc < (K); cc++) a[cc] += br[cc];                                   \
    }
#define GATHER_VLOOP(K, cd)                                                                  \
    for (int64_t i = 0; i < n; i++) STV(K, o + i * (K), LDV(K, o + i * (K)) + LDV(K, p + (int64_t)cd[i] * (K)));
#define SCATTER_VLOOP(K, cd)                                                                 \
    for (int64_t i = 0; i < n; i++) {                                                       \
        double *a = A + (int64_t)cd[i] * (K);                                                \
        STV(K, a, LDV(K, a) + LDV(K, b + i * (K)));                                             \
    }
#define ADD8_(d, x) STV(8, (d), LDV(8, (d)) + LDV(8, (x)));
#define GATHER_WLOOP(k, cd)                                                                  \
    for (int64_t i = 0; i < n; i++) {                                                       \
        const double *pr = p + (int64_t)cd[i] * (k);                                         \
        double *oi = o + i * (k);                                                            \
        WIDE_COLS(k, GW_E, GW_T)                                                             \
    }
#define GW_E(c) ADD8_(oi + (c), pr + (c))
#define GW_T(c) oi[c] += pr[c];
#define SCATTER_WLOOP(k, cd)                                                                 \
    for (int64_t i = 0; i < n; i++) {                                                       \
        double *a = A + (int64_t)cd[i] * (k);                                                \
        const double *br = b + i * (k);                                                      \
        WIDE_COLS(k, SW_E, SW_T)                                                             \
    }
#define SW_E(c) ADD8_(a + (c), br + (c))
#define SW_T(c) a[c] += br[c];
#define GATHER_C1(K) GATHER_LOOP(K, c1)
#define GATHER_C2(K) GATHER_LOOP(K, c2)
#define SCATTER_C1(K) SCATTER_LOOP(K, c1)
#define SCATTER_C2(K) SCATTER_LOOP(K, c2)
#define GATHER_VC1(K) GATHER_VLOOP(K, c1)
#define GATHER_VC2(K) GATHER_VLOOP(K, c2)
#define SCATTER_VC1(K) SCATTER_VLOOP(K, c1)
#define SCATTER_VC2(K) SCATTER_VLOOP(K, c2)
#define GATHER_WC1(k) GATHER_WLOOP(k, c1)
#define GATHER_WC2(k) GATHER_WLOOP(k, c2)
#define SCATTER_WC1(k) SCATTER_WLOOP(k, c1)
#define SCATTER_WC2(k) SCATTER_WLOOP(k, c2)

/* KClaLeaf.gather */
static void gather(const uint8_t *c1, const uint16_t *c2, int64_t n, const double *p, int64_t k, double *o)
{
    if (k == 1 && c1)
        for (int64_t i = 0; i < n; i++) o[i] += p[c1[i]];
    else if (k == 1)
        for (int64_t i = 0; i < n; i++) o[i] += p[c2[i]];
    else if (c1)
        CLA_VWIDTHS(k, GATHER_C1, GATHER_VC1, GATHER_WC1)
    else
        CLA_VWIDTHS(k, GATHER_C2, GATHER_VC2, GATHER_WC2)
}

/* KClaLeaf.scatter */
static void scatter(const uint8_t *c1, const uint16_t *c2, int64_t n, const double *b, int64_t k, double *A)
{
    if (c1)
        CLA_VWIDTHS(k, SCATTER_C1, SCATTER_VC1, SCATTER_WC1)
    else
        CLA_VWIDTHS(k, SCATTER_C2, SCATTER_VC2, SCATTER_WC2)
}

#define FUSED_K(K)                                                                           \
    for (int64_t i = 0; i < n; i++) {                                                       \
        double acc[K], *oi = o + i * (K);                                                   \
        for (int cc = 0; cc < (K); cc++) acc[cc] = oi[cc];                                  \
        for (int r = 0; r < m; r++) {                                                       \
            const double *pr = P[r] + (int64_t)cd[r][i] * (K);                              \
            for (int cc = 0; cc < (K); cc++) acc[cc] += pr[cc];                             \
        }                                                                                   \
        for (int cc = 0; cc < (K); cc++) oi[cc] = acc[cc];                                  \
    }

#define FUSED_V(K)                                                                           \
    for (int64_t i = 0; i < n; i++) {                                                       \
        VD##K acc = LDV(K, o + i * (K));                                                      \
        for (int r = 0; r < m; r++) acc += LDV(K, P[r] + (int64_t)cd[r][i] * (K));            \
        STV(K, o + i * (K), acc);                                                             \
    }

#define FUSED_W(k)                                                                           \
    for (int64_t i = 0; i < n; i++) {                                                       \
        double *oi = o + i * (k);                                                            \
        WIDE_COLS(k, FW_E, FW_T)                                                             \
    }
#define FW_E(c)                                                                              \
    {                                                                                        \
        VD8 acc = LDV(8, oi + (c));                                                          \
        for (int r = 0; r < m; r++) acc += LDV(8, P[r] + (int64_t)cd[r][i] * (k) + (c));     \
        STV(8, oi + (c), acc);                                                               \
    }
#define FW_T(c)                                                                              \
    {                                                                                        \
        double acc = oi[c];                                                                  \
        for (int r = 0; r < m; r++) acc += P[r][(int64_t)cd[r][i] * (k) + (c)];              \
        oi[c] = acc;                                                                         \
    }

/* KClaLeaf.gather_fused */
static void gather_fused(const uint8_t *const *cd, const double *const *P, int m, int64_t n, int64_t k, double *o)
{
    CLA_VWIDTHS(k, FUSED_K, FUSED_V, FUSED_W)
}

/* a[c] += b[rows[j]*k + c] over j in order (one tuple's listed rows),
 * the sums kept in registers; o[rows[j]*k + c] += pr[c] */
#define LIST_SUM_K(K)                                                                        \
    {                                                                                        \
        double acc[K];                                                                       \
        for (int cc = 0; cc < (K); cc++) acc[cc] = a[cc];                                    \
        for (int64_t j = 0; j < nr; j++) {                                                   \
            const double *br = b + (int64_t)rows[j] * (K);                                   \
            for (int cc = 0; cc < (K); cc++) acc[cc] += br[cc];                              \
        }                                                                                    \
        for (int cc = 0; cc < (K); cc++) a[cc] = acc[cc];                                    \
    }
#define LIST_ADD_K(K)                                                                        \
    for (int64_t j = 0; j < nr; j++) {                                                      \
        double *restrict oj = o + (int64_t)rows[j] * (K);                                   \
        for (int cc = 0; cc < (K); cc++) oj[cc] += pr[cc];                                  \
    }
#define LIST_SUM_V(K)                                                                        \
    {                                                                                        \
        VD##K acc = LDV(K, a);                                                                \
        for (int64_t j = 0; j < nr; j++) acc += LDV(K, b + (int64_t)rows[j] * (K));           \
        STV(K, a, acc);                                                                       \
    }
#define LIST_ADD_V(K)                                                                        \
    {                                                                                        \
        const VD##K r = LDV(K, pr);                                                           \
        for (int64_t j = 0; j < nr; j++) {                                                   \
            double *oj = o + (int64_t)rows[j] * (K);                                         \
            STV(K, oj, LDV(K, oj) + r);                                                        \
        }                                                                                    \
    }

#define LIST_SUM_W(k) WIDE_COLS(k, LS_E, LS_T)
#define LS_E(c)                                                                              \
    {                                                                                        \
        VD8 acc = LDV(8, a + (c));                                                           \
        for (int64_t j = 0; j < nr; j++) acc += LDV(8, b + (int64_t)rows[j] * (k) + (c));    \
        STV(8, a + (c), acc);                                                                \
    }
#define LS_T(c)                                                                              \
    {                                                                                        \
        double acc = a[c];                                                                   \
        for (int64_t j = 0; j < nr; j++) acc += b[(int64_t)rows[j] * (k) + (c)];             \
        a[c] = acc;                                                                          \
    }
#define LIST_ADD_W(k)                                                                        \
    for (int64_t j = 0; j < nr; j++) {                                                      \
        double *oj = o + (int64_t)rows[j] * (k);                                             \
        WIDE_COLS(k, LA_E, LA_T)                                                             \
    }
#define LA_E(c) ADD8_(oj + (c), pr + (c))
#define LA_T(c) oj[c] += pr[c];

/* KClaLeaf.list_sum */
static void list_sum(const int32_t *rows, int64_t nr, const double *b, int64_t k, double *a)
{
    if (k == 1) {   /* (a plain loop: one sum) */
        for (int64_t j = 0; j < nr; j++)
            for (int64_t cc = 0; cc < k; cc++) a[cc] += b[(int64_t)rows[j] * k + cc];
        return;
    }
    CLA_VWIDTHS(k, LIST_SUM_K, LIST_SUM_V, LIST_SUM_W)
}

/* KClaLeaf.list_add */
static void list_add(const int32_t *rows, int64_t nr, const double *restrict pr, int64_t k, double *o)
{
    CLA_VWIDTHS(k, LIST_ADD_K, LIST_ADD_V, LIST_ADD_W)
}

const KClaLeaf K_LEAF(k_cla_leaf) = {.gather = gather, .scatter = scatter, .gather_fused = gather_fused,
                                     .list_sum = list_sum, .list_add = list_add};
