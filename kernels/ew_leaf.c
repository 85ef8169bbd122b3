/* ew_leaf.c: leaf kernels of ew.c (see leaf.h): the flat loops over
 * contiguous arrays. The operator is switched on outside the loops and
 * every case is an `omp simd` loop over ops_unary/ops_binary with a
 * constant opcode, so the compiler folds the switch and vectorizes the
 * cheap operators (and exp, log, tanh: branch-free with explicit fma)
 * while the semantics stay exactly those of base/ops.h. */
#include "leaf.h"

#define LOOP(expr) do { \
    _Pragma("omp simd") \
    for (int64_t k = 0; k < n; k++) o[k] = (expr); \
} while (0)

/* KEwLeaf.unary (o may be x: `omp simd` needs no restrict) */
static void un_v(OpCode op, const double *x, double *o, int64_t n)
{
#define UN(OPC) case OPC: LOOP(ops_unary(OPC, x[k])); break
    switch (op) {
    UN(OP_NEG); UN(OP_NOT); UN(OP_ABS); UN(OP_EXP); UN(OP_LOG); UN(OP_SQRT);
    UN(OP_ROUND); UN(OP_FLOOR); UN(OP_CEIL); UN(OP_SIGN); UN(OP_SIN);
    UN(OP_COS); UN(OP_TAN); UN(OP_ASIN); UN(OP_ACOS); UN(OP_ATAN);
    UN(OP_SINH); UN(OP_COSH); UN(OP_TANH); UN(OP_SIGMOID); UN(OP_ISNA);
    UN(OP_ISNAN); UN(OP_ISINF);
    default:
        for (int64_t k = 0; k < n; k++) o[k] = ops_unary(op, x[k]);
    }
#undef UN
}

/* KEwLeaf.unary_scatter: o[ci[k]] = op(v[k]) for k < n. */
static void un_scatter(OpCode op, const double *restrict v, const int32_t *restrict ci, double *restrict o,
                       int64_t n)
{
    for (int64_t k = 0; k < n; k++) o[ci[k]] = ops_unary(op, v[k]);
}

/* The binary operators with specialized (vectorizable) loops; the others
 * take the generic loop. */
#define FAST_BINARY(M) \
    M(OP_PLUS); M(OP_MINUS); M(OP_MULT); M(OP_DIV); M(OP_LT); M(OP_LE); \
    M(OP_GT); M(OP_GE); M(OP_EQ); M(OP_NE); M(OP_AND); M(OP_OR); \
    M(OP_XOR); M(OP_MIN); M(OP_MAX)

/* KEwLeaf.bin_vv: o[k] = x[k] op y[k]. */
static void bin_vv(OpCode op, const double *restrict x, const double *restrict y, double *restrict o, int64_t n)
{
#define VV(OPC) case OPC: LOOP(ops_binary(OPC, x[k], y[k])); break
    switch (op) {
    FAST_BINARY(VV);
    case OP_LOGB: LOOP(ops_logb(x[k], y[k])); break;
    default:
        for (int64_t k = 0; k < n; k++) o[k] = ops_binary(op, x[k], y[k]);
    }
#undef VV
}

/* KEwLeaf.bin_vs: o[k] = x[k] op s. */
static void bin_vs(OpCode op, const double *restrict x, double s, double *restrict o, int64_t n)
{
#define VS(OPC) case OPC: LOOP(ops_binary(OPC, x[k], s)); break
    switch (op) {
    FAST_BINARY(VS);
    case OP_LOGB: LOOP(ops_logb(x[k], s)); break;
    case OP_POW:
        if (s == 2) { LOOP(x[k] * x[k]); break; }
        /* fall through */
    default:
        for (int64_t k = 0; k < n; k++) o[k] = ops_binary(op, x[k], s);
    }
#undef VS
}

/* KEwLeaf.bin_sv: o[k] = s op y[k]. */
static void bin_sv(OpCode op, double s, const double *restrict y, double *restrict o, int64_t n)
{
#define SV(OPC) case OPC: LOOP(ops_binary(OPC, s, y[k])); break
    switch (op) {
    FAST_BINARY(SV);
    case OP_LOGB: LOOP(ops_logb(s, y[k])); break;
    default:
        for (int64_t k = 0; k < n; k++) o[k] = ops_binary(op, s, y[k]);
    }
#undef SV
}

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

const KEwLeaf K_LEAF(k_ew_leaf) = {
    .unary = un_v, .unary_scatter = un_scatter, .bin_vv = bin_vv, .bin_vs = bin_vs, .bin_sv = bin_sv,
    .fill = fill, .select = ifelse_v, .nz_count = nz_count,
};
