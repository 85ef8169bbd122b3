/* ew_leaf.c: leaf kernels of ew.c (see leaf.h): the flat loops over
 * contiguous arrays. The operator is switched on outside the loops and
 * every case is an `omp simd` loop over the reference expression of the
 * operator's row in ops.def (generated: one loop per UNARY / BINARY row),
 * so the compiler vectorizes the cheap operators (and exp, log, tanh:
 * branch-free with explicit fma) while the semantics stay exactly those
 * of ops_unary / ops_binary. */
#include "leaf.h"

#include <float.h>
#include <math.h>

#define LOOP(expr) do { \
    _Pragma("omp simd") \
    for (int64_t k = 0; k < n; k++) o[k] = (expr); \
} while (0)

/* o[k] = ref, ops.def's reference expression, at cell k: over x = ex
 * (unary), or a = ea and b = eb (binary). */
#define LOOP_X(ex, ref) do { \
    _Pragma("omp simd") \
    for (int64_t k = 0; k < n; k++) { const double x = (ex); o[k] = (ref); } \
} while (0)
#define LOOP_AB(ea, eb, ref) do { \
    _Pragma("omp simd") \
    for (int64_t k = 0; k < n; k++) { const double a = (ea), b = (eb); o[k] = (ref); } \
} while (0)

/* KEwLeaf.unary: one loop per UNARY row of ops.def (o may be x: `omp
 * simd` needs no restrict). */
static void un_v(OpCode op, const double *x, double *o, int64_t n)
{
    const double *in = x;   /* the rows' reference expressions name the cell x */
    switch (op) {
#define UNARY(id, name, flags, tpl, type, cost, ref, cgen) case OP_##id: LOOP_X(in[k], ref); break;
#include "../base/ops.def"
    default:
        for (int64_t k = 0; k < n; k++) o[k] = ops_unary(op, in[k]);
    }
}

/* KEwLeaf.unary_scatter: o[ci[k]] = op(v[k]) for k < n. */
static void un_scatter(OpCode op, const double *restrict v, const int32_t *restrict ci, double *restrict o,
                       int64_t n)
{
    for (int64_t k = 0; k < n; k++) o[ci[k]] = ops_unary(op, v[k]);
}

/* KEwLeaf.bin_vv: o[k] = xa[k] op xb[k], one loop per BINARY row. */
static void bin_vv(OpCode op, const double *restrict xa, const double *restrict xb, double *restrict o,
                   int64_t n)
{
    switch (op) {
#define BINARY(id, name, flags, tpl, type, cost, ref, cgen) case OP_##id: LOOP_AB(xa[k], xb[k], ref); break;
#include "../base/ops.def"
    default:
        for (int64_t k = 0; k < n; k++) o[k] = ops_binary(op, xa[k], xb[k]);
    }
}

/* KEwLeaf.bin_vs: o[k] = xa[k] op s. */
static void bin_vs(OpCode op, const double *restrict xa, double s, double *restrict o, int64_t n)
{
    if (op == OP_POW && s == 2) { LOOP(xa[k] * xa[k]); return; }
    switch (op) {
#define BINARY(id, name, flags, tpl, type, cost, ref, cgen) case OP_##id: LOOP_AB(xa[k], s, ref); break;
#include "../base/ops.def"
    default:
        for (int64_t k = 0; k < n; k++) o[k] = ops_binary(op, xa[k], s);
    }
}

/* KEwLeaf.bin_sv: o[k] = s op xb[k]. */
static void bin_sv(OpCode op, double s, const double *restrict xb, double *restrict o, int64_t n)
{
    switch (op) {
#define BINARY(id, name, flags, tpl, type, cost, ref, cgen) case OP_##id: LOOP_AB(s, xb[k], ref); break;
#include "../base/ops.def"
    default:
        for (int64_t k = 0; k < n; k++) o[k] = ops_binary(op, s, xb[k]);
    }
}

/* o[i][k] = ref over a = ea and b = eb at row i's cell k, s = c[i] */
#define LOOP_ROWS(ea, eb, ref) do { \
    for (int64_t i = 0; i < rows; i++) { \
        const double s = c[i], *restrict xr = x + i * n; \
        double *restrict orow = o + i * n; \
        _Pragma("omp simd") \
        for (int64_t k = 0; k < n; k++) { const double a = (ea), b = (eb); orow[k] = (ref); } \
    } \
} while (0)

/* KEwLeaf.bin_vc: o[i][k] = x[i][k] op c[i]. */
static void bin_vc(OpCode op, const double *restrict x, const double *restrict c, double *restrict o, int64_t rows,
                   int64_t n)
{
    switch (op) {
#define BINARY(id, name, flags, tpl, type, cost, ref, cgen) case OP_##id: LOOP_ROWS(xr[k], s, ref); break;
#include "../base/ops.def"
    default:
        for (int64_t i = 0; i < rows; i++)
            for (int64_t k = 0; k < n; k++) o[i * n + k] = ops_binary(op, x[i * n + k], c[i]);
    }
}

/* KEwLeaf.bin_cv: o[i][k] = c[i] op x[i][k]. */
static void bin_cv(OpCode op, const double *restrict c, const double *restrict x, double *restrict o, int64_t rows,
                   int64_t n)
{
    switch (op) {
#define BINARY(id, name, flags, tpl, type, cost, ref, cgen) case OP_##id: LOOP_ROWS(s, xr[k], ref); break;
#include "../base/ops.def"
    default:
        for (int64_t i = 0; i < rows; i++)
            for (int64_t k = 0; k < n; k++) o[i * n + k] = ops_binary(op, c[i], x[i * n + k]);
    }
}

#undef LOOP_ROWS
#undef LOOP_X
#undef LOOP_AB

/* KEwLeaf.fill: o[k] = v. */
static void fill(double *restrict o, double v, int64_t n) { LOOP(v); }

/* KEwLeaf.select: o[k] = c[k] != 0 ? a[k] : b[k] (ifelse). */
static void ifelse_v(const double *restrict c, const double *restrict a, const double *restrict b,
                   double *restrict o, int64_t n)
{
    LOOP(c[k] != 0 ? a[k] : b[k]);
}

#undef LOOP

/* KEwLeaf.nz_count: the non-zeros among x[0..n). */
static int64_t nz_count(const double *restrict x, int64_t n)
{
    int64_t c = 0;
#pragma omp simd reduction(+:c)
    for (int64_t k = 0; k < n; k++) c += x[k] != 0;
    return c;
}

/* KEwLeaf.nz_count_fin: nz_count, and whether a value is NaN or
 * infinite (!(|x| <= DBL_MAX), a compare the loop vectorizes). */
static int64_t nz_count_fin(const double *restrict x, int64_t n, int *nonfinite)
{
    int64_t c = 0;
    int bad = 0;
#pragma omp simd reduction(+:c) reduction(|:bad)
    for (int64_t k = 0; k < n; k++) {
        c += x[k] != 0;
        bad |= !(fabs(x[k]) <= DBL_MAX);
    }
    *nonfinite |= bad;
    return c;
}

const KEwLeaf K_LEAF(k_ew_leaf) = {
    .unary = un_v, .unary_scatter = un_scatter, .bin_vv = bin_vv, .bin_vs = bin_vs, .bin_sv = bin_sv,
    .bin_vc = bin_vc, .bin_cv = bin_cv, .fill = fill, .select = ifelse_v, .nz_count = nz_count, .nz_count_fin = nz_count_fin,
};
