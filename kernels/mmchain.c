/* mmchain.c: the mmchain t(X) %*% (w * (X %*% v)) (k_mmchain, mm.h) in
 * one pass over X: fixed row blocks with n x c partials added in a fixed
 * tree, so results do not depend on the thread count. */
#include "mm.h"
#include "mm_int.h"
#include "leaf.h"
#include "ew.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

static MB *chain_oom(BrErr *e)
{
    br_err(e, BR_ENOMEM, "out of memory in matrix multiplication");
    return NULL;
}

static int nthreads_for(double work)
{
    return work >= BR_PAR_MIN ? br_threads() : 1;
}

/* ---------------------------------------------------------------------- */
/* mmchain                                                                */

/* mmchain row blocks, fixed by the data alone (never by the thread
 * count): about work / CHAIN_WORK blocks (work = multiply-adds of one
 * product), at most CHAIN_BLOCKS, at most CHAIN_MEM bytes of n x c block
 * partials (but at least CHAIN_MIN_BLOCKS blocks when the work allows),
 * and each block's work at least 4 n c, so it dwarfs zeroing and adding
 * its partial. Dense x: equal row counts (multiples of 8); sparse x: about
 * equal non-zero counts. */
#define CHAIN_WORK (1 << 16)
#define CHAIN_BLOCKS 256
#define CHAIN_MIN_BLOCKS 4
#define CHAIN_MEM ((int64_t)16 << 20)


/* First row of block b. */
static int64_t chain_row0(const KChain *ch, int64_t b)
{
    const MB *x = ch->x;
    if (b <= 0) return 0;
    if (b >= ch->nb) return x->rows;
    if (!x->sparse) return b * ch->bw;
    int64_t target = b * ch->bw, lo = 0, hi = x->rows;   /* first row with rp >= target */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (x->rp[mid] < target) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Number of row blocks and block width (ch->nb, ch->bw) for x and c. */
static void chain_blocks(KChain *ch)
{
    const MB *x = ch->x;
    int64_t nc = x->cols * ch->c;
    double work = x->sparse ? (double)x->nnz * (double)ch->c : (double)x->rows * (double)nc;
    double nb = ceil(work / CHAIN_WORK);
    nb = fmin(nb, CHAIN_BLOCKS);
    nb = fmin(nb, fmax(CHAIN_MIN_BLOCKS, (double)(CHAIN_MEM / 8 / nc)));
    nb = fmin(nb, floor(work / (4.0 * (double)nc)));
    if (nb < 1) nb = 1;
    if (x->sparse) {
        ch->bw = (int64_t)ceil((double)x->nnz / nb);
        ch->nb = (x->nnz + ch->bw - 1) / ch->bw;
    } else {
        ch->bw = ((int64_t)ceil((double)x->rows / nb) + 7) / 8 * 8;
        ch->nb = (x->rows + ch->bw - 1) / ch->bw;
    }
}

/* t(x) %*% (w * (x %*% v)) (see mm.h), one pass over x. Rows of x are
 * cut into fixed blocks (chain_blocks); threads take blocks dynamically,
 * each block sums its rows in order into its own n x c partial, and the
 * partials are then added pairwise in a fixed tree (block b += block
 * b + s for s = 1, 2, 4, ...), so the result has the same bits for every
 * thread count and no thread ever waits for another before the end.
 * Dense x accumulates the transposed result (c x n) so every inner loop
 * runs along a row of x. */
static MB *chain_steps(const MB *x, const MB *v, const MB *w, BrErr *e)
{
    MB *q = k_matmul(x, v, e);
    if (q && w) {
        MB *wq = k_binary(OP_MULT, w, q, e);
        mb_release(q);
        q = wq;
    }
    if (!q) return NULL;
    MB *r = k_matmul_tl(x, q, e);
    mb_release(q);
    return r;
}

static MB *chain_one_pass(const MB *x, const MB *v, const MB *w, BrErr *e)
{
    int64_t m = x->rows, n = x->cols, c = v->cols;
    if (v->rows != n || (w && (w->rows != m || (w->cols != 1 && w->cols != c)))) {
        br_err(e, BR_EDIM, "mmchain dimension mismatch: X %lldx%lld, v %lldx%lld, w %lldx%lld",
               (long long)m, (long long)n, (long long)v->rows, (long long)c,
               (long long)(w ? w->rows : 0), (long long)(w ? w->cols : 0));
        return NULL;
    }
    if (m == 0 || n == 0 || c == 0 || x->nnz == 0 || v->nnz == 0 || (w && w->nnz == 0))
        return mb_empty(n, c, e);
    MB *vd = NULL, *wd = NULL, *r = NULL;
    double *vt = NULL, *part = NULL, *qs = NULL;
    size_t nc = (size_t)n * (size_t)c, bytes;
    if (v->sparse && !(vd = mb_to_dense(v, e))) goto done;
    if (w && w->sparse && !(wd = mb_to_dense(w, e))) goto done;
    const double *vv = vd ? vd->d : v->d;
    KChain ch = { x, vv, w ? (wd ? wd->d : w->d) : NULL, c, w ? w->cols : 1, 0, 0 };
    chain_blocks(&ch);
    bool tr = !x->sparse && c > 1;      /* accumulate c x n, transpose at the end */
    /* each block's partial on lines of its own (a stride of whole
     * 128-byte pairs of lines): blocks next to each other run at the
     * same time on two threads, and their shared line went back and
     * forth between the cores (and every other partial of 100 values
     * started half a line off, its loads split) */
    size_t ps = br_line_pairs(nc);
    if (!br_mul_ok(ps * sizeof(double), (size_t)ch.nb, &bytes)) { chain_oom(e); goto done; }
    if (!(part = br_alloc_aligned(bytes)) ||
        !(qs = br_malloc((size_t)ch.nb * (size_t)c * sizeof(double)))) { chain_oom(e); goto done; }
    if (tr) {
        if (!(vt = br_alloc_aligned(nc * sizeof(double)))) { chain_oom(e); goto done; }
        for (int64_t j = 0; j < n; j++)
            for (int64_t l = 0; l < c; l++) vt[l * n + j] = vv[j * c + l];
        ch.v = vt;
    }
    double work = x->sparse ? (double)x->nnz * (double)c : (double)m * (double)nc;
    int T = nthreads_for(2 * work);
    if (T > ch.nb) T = (int)ch.nb;
    const KMmchainLeaf *L = k_leaves(k_isa())->mmchain;
    #pragma omp parallel for num_threads(T) schedule(dynamic, 1) if (T > 1)
    for (int64_t b = 0; b < ch.nb; b++) {
        double *acc = part + (size_t)b * ps;
        memset(acc, 0, nc * sizeof(double));
        int64_t r0 = chain_row0(&ch, b), r1 = chain_row0(&ch, b + 1);
        if (x->sparse) L->sparse(&ch, r0, r1, acc, qs + b * c);
        else L->dense(&ch, r0, r1, acc);
    }
    for (int64_t s = 1; s < ch.nb; s *= 2) {
        int64_t pairs = (ch.nb - s + 2 * s - 1) / (2 * s);
        int TP = nthreads_for((double)pairs * (double)nc);
        if (TP > pairs) TP = (int)pairs;
        #pragma omp parallel for num_threads(TP) if (TP > 1)
        for (int64_t b = 0; b < ch.nb - s; b += 2 * s) {
            double *pa = part + (size_t)b * ps;
            const double *pb = part + (size_t)(b + s) * ps;
            #pragma omp simd
            for (size_t k = 0; k < nc; k++) pa[k] += pb[k];
        }
    }
    if (!(r = mb_dense_uninit(n, c, e))) goto done;
    if (tr)
        for (int64_t j = 0; j < n; j++)
            for (int64_t l = 0; l < c; l++) r->d[j * c + l] = part[l * n + j];
    else
        memcpy(r->d, part, nc * sizeof(double));
    r = mm_finish(r, e);
done:
    mb_release(vd);
    mb_release(wd);
    br_free_aligned(vt);
    br_free_aligned(part);
    free(qs);
    return r;
}

/* The one pass visits only the stored values of a sparse x (and returns
 * empty for an empty operand), so it leaves out the terms 0 * Inf and
 * 0 * NaN that make a cell NaN in IEEE arithmetic (as BLAS and the fused
 * plans compute it). Such a term needs a zero somewhere and a NaN/Inf in
 * v, w or the intermediate w * (x %*% v); a NaN/Inf stored in x always
 * makes the one-pass result non-finite too. Only then the chain runs as
 * its three steps, each with IEEE products over zeros (mm_ieee_zeros,
 * k_binary's union of non-zeros): a check of the small result, v and w. */
MB *k_mmchain(const MB *x, const MB *v, const MB *w, BrErr *e)
{
    MB *r = chain_one_pass(x, v, w, e);
    if (!r || x->cmb) return r;
    bool zeros = x->nnz < x->rows * x->cols || v->nnz < v->rows * v->cols || (w && w->nnz < w->rows * w->cols);
    bool nonfinite = mb_has_nonfinite(r) || mb_has_nonfinite(v) || (w && mb_has_nonfinite(w)) ||
                     (r->nnz == 0 && mb_has_nonfinite(x));
    if (!zeros || !nonfinite) return r;
    mb_release(r);
    return chain_steps(x, v, w, e);
}
