/* cla_leaf.c: the per-row loops of the compressed products (kernels/
 * cla_ops.c; see leaf.h): gathers of per-tuple rows by code (X %*% B,
 * the row bundles, the fused chain's first step) and scatters of rows
 * into per-tuple sums (t(X) %*% Y, A %*% X). Plain adds, one per cell in
 * row order, so every copy gives the same bits. */
#include "leaf.h"

#include "../matrix/cmb.h"

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
#define GATHER_C1(K) GATHER_LOOP(K, c1)
#define GATHER_C2(K) GATHER_LOOP(K, c2)
#define SCATTER_C1(K) SCATTER_LOOP(K, c1)
#define SCATTER_C2(K) SCATTER_LOOP(K, c2)

/* KClaLeaf.gather */
static void gather(const uint8_t *c1, const uint16_t *c2, int64_t n, const double *p, int64_t k, double *o)
{
    if (k == 1 && c1)
        for (int64_t i = 0; i < n; i++) o[i] += p[c1[i]];
    else if (k == 1)
        for (int64_t i = 0; i < n; i++) o[i] += p[c2[i]];
    else if (c1)
        CLA_WIDTHS(k, GATHER_C1)
    else
        CLA_WIDTHS(k, GATHER_C2)
}

/* KClaLeaf.scatter */
static void scatter(const uint8_t *c1, const uint16_t *c2, int64_t n, const double *b, int64_t k, double *A)
{
    if (c1)
        CLA_WIDTHS(k, SCATTER_C1)
    else
        CLA_WIDTHS(k, SCATTER_C2)
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

/* KClaLeaf.gather_fused */
static void gather_fused(const uint8_t *const *cd, const double *const *P, int m, int64_t n, int64_t k, double *o)
{
    CLA_WIDTHS(k, FUSED_K)
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

/* KClaLeaf.list_sum */
static void list_sum(const int32_t *rows, int64_t nr, const double *b, int64_t k, double *a)
{
    if (k == 1 || k > 8) {   /* (a plain loop: one sum, or no registers for the sums) */
        for (int64_t j = 0; j < nr; j++)
            for (int64_t cc = 0; cc < k; cc++) a[cc] += b[(int64_t)rows[j] * k + cc];
        return;
    }
    CLA_WIDTHS(k, LIST_SUM_K)
}

/* KClaLeaf.list_add */
static void list_add(const int32_t *rows, int64_t nr, const double *restrict pr, int64_t k, double *o)
{
    CLA_WIDTHS(k, LIST_ADD_K)
}

const KClaLeaf K_LEAF(k_cla_leaf) = {.gather = gather, .scatter = scatter, .gather_fused = gather_fused,
                                     .list_sum = list_sum, .list_add = list_add};
