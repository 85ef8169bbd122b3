/* cla_ieee.c: IEEE products over the zeros of compressed operands
 * (docs/cla.md, "NaN and Inf in products").
 *
 * The ordinary kernels give a product cell NaN when one of its terms is
 * 0 * Inf or 0 * NaN (k_mm_ieee_zeros, kernels/mm.h), whatever the format.
 * The compressed products never see most of those terms: OLE/RLE groups
 * skip their unlisted zero rows, the right product skips zero dictionary
 * values, and a tuple's summed rows (t(x) %*% b) hide that one of them
 * met a zero. So after a compressed product the cells with such a term
 * are marked here, exactly as the ordinary kernel marks them.
 *
 * Cost: when the other side is finite, one pass over it (vectorized) and
 * a scan of the dictionaries; only when a non-finite value can meet a
 * zero are x's rows read, by windows of decompressed rows (never the
 * whole block at once). */
#include "cla.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Any NaN or Inf among n values of one window row: v * 0 is NaN exactly
 * for those (one vectorized pass, no branch per value). */
static bool any_nonfinite(const double *v, int64_t n)
{
    double s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t i = 0; i < n; i++) s += v[i] * 0.0;
    return s != s;
}

/* Per row of the dense b (n x k): bit 1 a non-finite value, bit 2 a zero. */
enum { ROW_NF = 1, ROW_ZERO = 2 };

static uint8_t *row_flags(const MB *b)
{
    int64_t n = b->rows, k = b->cols;
    uint8_t *f = br_calloc((size_t)n + 1, 1);
    if (!f) return NULL;
    for (int64_t i = 0; i < n; i++) {
        const double *r = b->d + i * k;
        for (int64_t c = 0; c < k; c++) {
            if (!isfinite(r[c])) f[i] |= ROW_NF;
            else if (r[c] == 0) f[i] |= ROW_ZERO;
        }
    }
    return f;
}

/* Which sides need marking (as k_mm_ieee_zeros decides): fx, a
 * non-finite value of x can meet a zero of b; fb, a non-finite value of
 * b can meet a zero of x. */
static void sides(const MB *x, const MB *b, bool *fx, bool *fb)
{
    int64_t bn = b->rows * b->cols;
    /* mb_has_nonfinite: b's finiteness flag spares the pass when known */
    *fb = x->nnz < x->rows * x->cols && mb_has_nonfinite(b);
    *fx = false;
    if (!cmb_has_nonfinite(x)) return;
    for (int64_t i = 0; i < bn && !*fx; i++) *fx = b->d[i] == 0;
}

/* Rows per window: about 32768 cells. */
static int64_t win_rows(const MB *x)
{
    int64_t c = x->cols ? 32768 / x->cols : CLA_BLK;
    return BR_MAX(1, BR_MIN(CLA_BLK, c));
}

/* r = x %*% b (x: n x m compressed, b: m x k dense, r: n x k dense).
 * r[i, c] is NaN when for some u x[i, u] == 0 and b[u, c] is not finite,
 * or x[i, u] is not finite and b[u, c] == 0. */
bool cla_ieee_right(const MB *x, const MB *b, double *r)
{
    bool fx, fb;
    sides(x, b, &fx, &fb);
    if (!fx && !fb) return true;
    int64_t n = x->rows, m = x->cols, k = b->cols;
    uint8_t *fl = row_flags(b);
    int32_t *us = br_malloc(((size_t)m + 1) * sizeof(int32_t));   /* the rows of b that matter */
    ClaWin w;
    bool win = fl && us && cla_win_init(&w, x, win_rows(x)), ok = win;
    int64_t nu = 0;
    for (int64_t u = 0; ok && u < m; u++)
        if ((fb && (fl[u] & ROW_NF)) || (fx && (fl[u] & ROW_ZERO))) us[nu++] = (int32_t)u;
    for (int64_t i = 0; ok && nu > 0 && i < n; i++) {
        const double *xr = cla_win_row(&w, i, n);
        if (!(ok = xr != NULL)) break;
        double *ri = r + i * k;
        for (int64_t q = 0; q < nu; q++) {
            int64_t u = us[q];
            double xv = xr[u];
            const double *bu = b->d + u * k;
            if (fb && xv == 0 && (fl[u] & ROW_NF)) {
                for (int64_t c = 0; c < k; c++)
                    if (!isfinite(bu[c])) ri[c] = NAN;
            } else if (fx && !isfinite(xv) && (fl[u] & ROW_ZERO)) {
                for (int64_t c = 0; c < k; c++)
                    if (bu[c] == 0) ri[c] = NAN;
            }
        }
    }
    if (win) cla_win_free(&w);
    free(fl);
    free(us);
    return ok;
}

/* Marks the cells of r = t(x) %*% b for row xr of x and row br of b:
 * r[j, c] NaN where x[i, j] == 0 meets a non-finite b[i, c] (fb), or a
 * non-finite x[i, j] meets b[i, c] == 0 (fx). */
static void mark_tl_row(const double *xr, int64_t m, const double *br, int64_t k, bool fx, bool fb, double *r)
{
    for (int64_t j = 0; j < m; j++) {
        double xv = xr[j];
        double *rj = r + j * k;
        if (fb && xv == 0) {
            for (int64_t c = 0; c < k; c++)
                if (!isfinite(br[c])) rj[c] = NAN;
        } else if (fx && !isfinite(xv)) {
            for (int64_t c = 0; c < k; c++)
                if (br[c] == 0) rj[c] = NAN;
        }
    }
}

/* r = t(x) %*% b (x: n x m compressed, b: n x k dense, r: m x k dense),
 * or with b NULL, t(x) %*% x (b's rows are x's). Only the rows of x where
 * b's row can meet x's are read. */
bool cla_ieee_tl(const MB *x, const MB *b, double *r)
{
    int64_t n = x->rows, m = x->cols;
    bool fx, fb;
    uint8_t *fl = NULL;
    if (b) {
        sides(x, b, &fx, &fb);
        if (!fx && !fb) return true;
        if (!(fl = row_flags(b))) return false;
    } else {
        fx = fb = x->nnz < n * m && cmb_has_nonfinite(x);
        if (!fx) return true;
    }
    int64_t k = b ? b->cols : m;
    ClaWin w;
    if (!cla_win_init(&w, x, win_rows(x))) { free(fl); return false; }
    bool ok = true;
    for (int64_t i = 0; i < n; i++) {
        if (fl && !((fb && (fl[i] & ROW_NF)) || (fx && (fl[i] & ROW_ZERO)))) continue;
        const double *xr = cla_win_row(&w, i, n);
        if (!(ok = xr != NULL)) break;
        if (!b && !any_nonfinite(xr, m)) continue;
        mark_tl_row(xr, m, b ? b->d + i * k : xr, k, fx, fb, r);
    }
    cla_win_free(&w);
    free(fl);
    return ok;
}
