/* ops.h: enums and property lookups generated from ops.def, plus the scalar
 * semantics of every elementwise operator (one definition, used by matrix
 * kernels and scalar evaluation alike). */
#ifndef BRAID_OPS_H
#define BRAID_OPS_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Data and value types (declared types of DML, HOPs, builtin results). */
typedef enum { DT_ANY, DT_MATRIX, DT_FRAME, DT_LIST, DT_SCALAR } DataType;
typedef enum { VT_UNKNOWN, VT_DOUBLE, VT_INT, VT_BOOL, VT_STRING } ValueType;

typedef enum {
#define UNARY(id, ...) OP_##id,
#define BINARY(id, ...) OP_##id,
#define TERNARY(id, ...) OP_##id,
#define AGG(id, ...) OP_##id,
#define OP(id, ...) OP_##id,
#include "ops.def"
    OP__COUNT
} OpCode;

typedef enum { OK_UNARY, OK_BINARY, OK_TERNARY, OK_AGG, OK_CUM, OK_MATMUL,
               OK_REORG, OK_GEN, OK_LA, OK_MISC } OpKind;

/* flags (ops.def) */
enum { OF_SAFE = 1, OF_MULT = 2, OF_CMP = 4, OF_COMM = 8, OF_ID0 = 16,
       OF_ID1 = 32, OF_PERM = 64, OF_NONDET = 128 };
/* fusion templates that accept an operator */
enum { FT_CELL = 1, FT_ROW = 2, FT_OUTER = 4, FT_EW = FT_CELL | FT_ROW | FT_OUTER };
/* value type of a scalar result */
typedef enum { TY_NONE, TY_NUM, TY_DBL, TY_BOOL } OpType;
/* how an aggregate accumulates a stream of cells: AC_SUM, AC_MIN or
 * AC_MAX (AC_COMB bits), modified by AC_SQ, AC_MEAN, AC_IDX */
enum { AC_SUM = 1, AC_MIN = 2, AC_MAX = 3, AC_COMB = 3, AC_SQ = 4, AC_MEAN = 8, AC_IDX = 16 };

/* The columns of an operator's row (ops.def explains them). */
typedef struct OpInfo {
    const char *name;
    OpKind kind;
    int arity;          /* operands; -1: varies */
    int flags;          /* OF_* */
    int tpl;            /* FT_*: fusion templates that accept it */
    OpType type;        /* value type of a scalar result (elementwise) */
    int cost;           /* flops per cell (elementwise) */
    int acc;            /* AC_*: streaming form of an aggregate, or 0 */
    const char *cgen;   /* C text in generated code, or NULL */
} OpInfo;

extern const OpInfo op_info[OP__COUNT];

typedef enum {
#define BUILTIN(id, ...) BI_##id,
#include "ops.def"
    BI__COUNT
} BuiltinId;

/* Aggregation direction. */
typedef enum { DIR_FULL, DIR_ROW, DIR_COL } AggDir;

/* Output shape of a generic builtin HOP (ops.def's MATRIX_* results). */
typedef enum { BS_NONE, BS_SAME, BS_NX1, BS_1XN } BuiltinShape;

typedef struct BuiltinInfo {
    BuiltinId id;
    const char *name;
    const char *params;   /* see ops.def */
    OpCode op;            /* the operator it lowers to, OP__COUNT: none */
    AggDir dir;           /*   and its direction (aggregates) */
    DataType dt;          /* result of the generic builtin HOP */
    ValueType vt;
    int nouts;            /* outputs ([a, b] = f(...)) */
    bool sidefx;          /* never removed or moved */
    BuiltinShape shape;
} BuiltinInfo;

extern const BuiltinInfo builtin_info[BI__COUNT];
/* Builtin by DML name, or NULL. */
const BuiltinInfo *ops_builtin(const char *name);
/* Comparison operator by its DML spelling (">", "<=", "!=", ...; ppred's
 * third argument), or OP__COUNT. */
OpCode ops_cmp_by_name(const char *name);

/* ---- scalar semantics (SystemDS's, see DML.md) ---- */

/* round() as SystemDS computes it, Java's Math.round: half up, exactly
 * (floor(x + 0.5) would round 0.49999999999999994 up), then the long it
 * returns: NaN gives 0, beyond +-2^63 it saturates, -0 is 0. Selects,
 * not branches, so that loops over it vectorize (floor is one rounding
 * instruction from SSE4.1). A macro so that generated code gets the
 * same text (OPS_SCALAR_SRC). */
#define OPS_ROUND_DEF(NAME, ATTR) \
ATTR double NAME(double x) \
{ \
    const double f = floor(x); \
    double r = x - f >= 0.5 ? f + 1 : f; \
    r = r >= 9223372036854775807.0 ? 9223372036854775807.0 : r; \
    r = r <= -9223372036854775808.0 ? -9223372036854775808.0 : r; \
    return r != r ? 0 : r + 0.0; \
}
OPS_ROUND_DEF(ops_round, static inline)

/* Java's (long) cast: NaN -> 0, out-of-range values saturate. */
static inline int64_t ops_to_i64(double x)
{
    if (x != x) return 0;
    if (x >= 9223372036854775807.0) return INT64_MAX;
    if (x <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)x;
}

/* SystemDS's double -> integer conversion (UtilFunctions.toLong, used by
 * as.integer, integer parameters and loop bounds): toward zero after
 * adding 2^-53 to the magnitude, saturating. */
static inline int64_t ops_dml_long(double x)
{
    double a = floor(fabs(x) + 0x1p-53);
    return ops_to_i64(x < 0 ? -a : a);
}

static inline double ops_intdiv(double a, double b)
{
    if (b == 0) return NAN;
    double q = a / b;
    return isfinite(q) ? trunc(q) : q;
}

static inline double ops_mod(double a, double b)
{
    if (b == 0) return NAN;
    double q = ops_intdiv(a, b);
    return a - q * b;
}

/* Horner's rule for the Taylor coefficients of (exp(r) - 1 - r) / r^2
 * from 1/12! down to 1/2, continuing from q (tanh's expm1 and exp). */
#define OPS_EXP_TAIL(q, r) \
    q = fma(q, r, 1.0 / 479001600.0); \
    q = fma(q, r, 1.0 / 39916800.0); \
    q = fma(q, r, 1.0 / 3628800.0); \
    q = fma(q, r, 1.0 / 362880.0); \
    q = fma(q, r, 1.0 / 40320.0); \
    q = fma(q, r, 1.0 / 5040.0); \
    q = fma(q, r, 1.0 / 720.0); \
    q = fma(q, r, 1.0 / 120.0); \
    q = fma(q, r, 1.0 / 24.0); \
    q = fma(q, r, 1.0 / 6.0); \
    q = fma(q, r, 0.5)

/* tanh(x) = e / (e + 2) with e = expm1(2|x|), the sign of x (-0 stays
 * -0, NaN stays NaN, |x| >= 20 gives +-1). Written with explicit fma and
 * no calls so that `omp simd` loops vectorize it (glibc's tanh does not
 * vectorize and costs ~15 ns a cell, the largest single cost of a tanh
 * network on small batches) and every build computes the same bits;
 * within 1 ulp of tanhl in our sweeps (glibc's tanh: 2). The definition
 * is a macro so that codegen/prims.c puts the same text into generated
 * code as cg_tanh (which must agree bit for bit). expm1 by
 * y = k ln 2 + r, k = floor(y / ln 2) (so 2^k expm1(r) + 2^k - 1 never cancels), the Taylor series of expm1(r) to
 * degree 16 for r in [0, ln 2); the quotient with the rounding errors of
 * e + 2 and of the division corrected. */
#define OPS_TANH_DEF(NAME, ATTR) \
ATTR double NAME(double x) \
{ \
    const double a = fabs(x); \
    const double y = 2 * (a < 20 ? a : 20);           /* NaN and huge: 40 */ \
    const double yl = y * 0x1.71547652b82fep0;        /* y / ln 2 */ \
    const double kn = fma(y, 0x1.71547652b82fep0, 0x1.8p52) - 0x1.8p52; \
    const double k = kn > yl ? kn - 1 : kn;           /* in [0, 57] */ \
    double r = fma(k, -0x1.62e42fee00000p-1, y); \
    r = fma(k, -0x1.a39ef35793c76p-33, r); \
    double q = 1.0 / 355687428096000.0; \
    q = fma(q, r, 1.0 / 20922789888000.0); \
    q = fma(q, r, 1.0 / 1307674368000.0); \
    q = fma(q, r, 1.0 / 87178291200.0); \
    q = fma(q, r, 1.0 / 6227020800.0); \
    OPS_EXP_TAIL(q, r); \
    const double p = fma(r * r, q, r);                /* expm1(r) */ \
    union { double d; int64_t i; } u = {k + 0x1.8p52}; \
    u.i = (u.i - 0x4338000000000000LL + 1023) * ((int64_t)1 << 52);   /* 2^k */ \
    const double e = fma(u.d, p, u.d - 1.0);          /* expm1(y) */ \
    const double d = e + 2.0, z = d - e; \
    const double err = (2.0 - z) + (e - (d - z));     /* d + err = e + 2 */ \
    const double t0 = e / d; \
    const double t = copysign(t0 + fma(-t0, err, fma(-t0, d, e)) / d, x); \
    return x != x ? x : t; \
}
OPS_TANH_DEF(ops_tanh, static inline __attribute__((always_inline)))

/* exp(x), branch-free for the same reasons as tanh (glibc's exp does not
 * vectorize without -ffast-math): x = k ln 2 + r with k = round(x / ln 2)
 * (the shifter 1.5 * 2^52 rounds; |r| <= ln 2 / 2), r by a two-constant
 * reduction (k * ln2hi is exact, so only the second step rounds), the
 * Taylor series of exp(r) to degree 13, and 2^k exp(r) as
 * fma(2^k1, t, 2^k1 h) * 2^k2 with k1 = floor(k / 2), k2 = k - k1: both
 * factors stay normal for k in [-1076, 1024], so results near overflow
 * and in the subnormal range round once from a 53-bit value (x is first
 * clamped to [-746, 710]: inf and 0 follow from the scaling). The
 * reduced argument is r + rl (the second step's rounding error) and
 * exp(r) = h + t with h = 1 + r exactly split, so the last fma is the
 * only large rounding. NaN stays NaN (through t), exp(0) = 1 exactly;
 * within 1 ulp of expl in our sweeps, ~99% correctly rounded. Also the
 * generated code's cg_exp (codegen/prims.c), bit for bit. */
#define OPS_EXP_DEF(NAME, ATTR) \
ATTR double NAME(double x) \
{ \
    const double xc = x < -746 ? -746 : (x > 710 ? 710 : x);   /* NaN stays */ \
    const double kb = fma(xc, 0x1.71547652b82fep0, 0x1.8p52); \
    const double k = kb - 0x1.8p52;                   /* round(x / ln 2) */ \
    const double r1 = fma(k, -0x1.62e42fee00000p-1, xc);   /* exact */ \
    const double r = fma(k, -0x1.a39ef35793c76p-33, r1); \
    const double rl = fma(k, -0x1.a39ef35793c76p-33, r1 - r);   /* r + rl: the reduced x */ \
    double q = 1.0 / 6227020800.0; \
    OPS_EXP_TAIL(q, r); \
    const double h = 1.0 + r, hl = (1.0 - h) + r;    /* h + hl = 1 + r */ \
    const double t = fma(r * r, q, rl) + hl;          /* exp(r) = h + t */ \
    union { double d; uint64_t i; } u = {kb}, s1, s2; \
    const int64_t ki = (int64_t)(u.i - 0x4338000000000000ULL), k1 = ki >> 1; \
    s1.i = (uint64_t)(k1 + 1023) << 52;               /* 2^k1 */ \
    s2.i = (uint64_t)(ki - k1 + 1023) << 52;          /* 2^k2 */ \
    return fma(s1.d, t, s1.d * h) * s2.d;             /* NaN: t is NaN */ \
}
OPS_EXP_DEF(ops_exp, static inline __attribute__((always_inline)))

/* log(x), branch-free: subnormals scaled by 2^54 first; x = 2^e m with
 * m in [sqrt(1/2), sqrt(2)) from integer operations on the bits (the
 * bits of sqrt(1/2) subtracted before the exponent is taken), then
 * log(m) = 2 atanh(s), s = f / (2 + f), f = m - 1 (exact): 2s + 2s^3 P(s^2)
 * with the series of atanh to s^21 (|s| <= 0.172). The rounding errors
 * of 2 + f and of the quotient are carried in sl (one division), e ln 2
 * is split in an exact e * ln2hi and e * ln2lo, and e * ln2hi + 2s is
 * summed exactly (Fast2Sum: |e ln2hi| >= |2s| unless e = 0), so only the
 * last addition rounds to speak of. log(1) = 0, log(0) = -inf, log(x < 0)
 * = NaN, log(inf) = inf, NaN stays NaN; within 1 ulp of logl in our
 * sweeps. Also the generated code's cg_log, bit for bit. */
#define OPS_LOG_DEF(NAME, ATTR) \
ATTR double NAME(double x) \
{ \
    const double sc = x < 0x1p-1022 ? 0x1p54 : 1.0;  /* both selects first: */ \
    const double ea = x < 0x1p-1022 ? 54.0 : 0.0;     /* GCC vectorizes that */ \
    union { double d; uint64_t i; } u = {x * sc}; \
    const int64_t ek = (int64_t)(u.i - 0x3fe6a09e667f3bcdULL) >> 52; \
    u.i -= (uint64_t)ek << 52;                        /* m in [sqrt(1/2), sqrt(2)) */ \
    const double e = (double)ek - ea; \
    const double f = u.d - 1.0; \
    const double d = 2.0 + f, dl = (2.0 - d) + f;     /* d + dl = 2 + f */ \
    const double inv = 1.0 / d, s = f * inv; \
    const double sl = (fma(-s, d, f) - s * dl) * inv; /* s + sl = f / (2 + f) */ \
    const double z = s * s; \
    double q = 1.0 / 21; \
    q = fma(q, z, 1.0 / 19); \
    q = fma(q, z, 1.0 / 17); \
    q = fma(q, z, 1.0 / 15); \
    q = fma(q, z, 1.0 / 13); \
    q = fma(q, z, 1.0 / 11); \
    q = fma(q, z, 1.0 / 9); \
    q = fma(q, z, 1.0 / 7); \
    q = fma(q, z, 1.0 / 5); \
    q = fma(q, z, 1.0 / 3); \
    const double lo = fma(2 * s * z, q, 2 * sl);      /* 2 atanh(s) - 2s */ \
    const double a = e * 0x1.62e42fee00000p-1;        /* exact */ \
    const double h = a + 2 * s, hl = (a - h) + 2 * s; \
    const double y = h + (fma(e, 0x1.a39ef35793c76p-33, lo) + hl); \
    /* y is finite for every x (m stays in range): special values by an \
     * addition (a select would let GCC sink y under a branch) */ \
    const double w = x > 0 ? (x < INFINITY ? 0.0 : x) : (x == 0 ? -INFINITY : NAN); \
    return y + w; \
}
OPS_LOG_DEF(ops_log, static inline __attribute__((always_inline)))

/* The scalar semantics above as source text for generated code: codegen's
 * C prelude (codegen/prims.c) and the GPU's OpenCL program (gpu/clsrc.c)
 * both start from it, so they agree with each other and with ops_*. The
 * functions are named cg_* and qualified by CG_INL, which the including
 * prelude defines. cg_to_i64 is Java's (long) cast; cg_minstep and
 * cg_maxstep are aggregation steps in which NaN is sticky (kernels/agg.c). */
#define OPS_STR_(...) #__VA_ARGS__
#define OPS_STR(...) OPS_STR_(__VA_ARGS__)
#define OPS_SCALAR_SRC \
    OPS_STR(OPS_ROUND_DEF(cg_round, CG_INL)) "\n" \
    "CG_INL int64_t cg_to_i64(double x)\n" \
    "{\n" \
    "    if (x != x) return 0;\n" \
    "    if (x >= 9223372036854775807.0) return INT64_MAX;\n" \
    "    if (x <= -9223372036854775808.0) return INT64_MIN;\n" \
    "    return (int64_t)x;\n" \
    "}\n" \
    "CG_INL double cg_intdiv(double a, double b)\n" \
    "{\n" \
    "    if (b == 0) return NAN;\n" \
    "    double q = a / b;\n" \
    "    return isfinite(q) ? trunc(q) : q;\n" \
    "}\n" \
    "CG_INL double cg_mod(double a, double b)\n" \
    "{\n" \
    "    if (b == 0) return NAN;\n" \
    "    double q = cg_intdiv(a, b);\n" \
    "    return a - q * b;\n" \
    "}\n" \
    "CG_INL double cg_sign(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : (x == 0 ? 0.0 : x); }\n" \
    "CG_INL double cg_min(double a, double b) { return (isnan(a) || isnan(b)) ? NAN : (a < b ? a : b); }\n" \
    "CG_INL double cg_max(double a, double b) { return (isnan(a) || isnan(b)) ? NAN : (a > b ? a : b); }\n" \
    "CG_INL double cg_pow(double a, double b) { return b == 2 ? a * a : pow(a, b); }\n" \
    OPS_STR(OPS_TANH_DEF(cg_tanh, CG_INL)) "\n" \
    OPS_STR(OPS_EXP_DEF(cg_exp, CG_INL)) "\n" \
    OPS_STR(OPS_LOG_DEF(cg_log, CG_INL)) "\n" \
    "CG_INL double cg_minstep(double s, double v) { return (v < s || v != v) ? v : s; }\n" \
    "CG_INL double cg_maxstep(double s, double v) { return (v > s || v != v) ? v : s; }\n"

/* log(a) / log(b) (OP_LOGB; inlined where a loop over it vectorizes) */
static inline __attribute__((always_inline)) double ops_logb(double a, double b)
{
    return ops_log(a) / ops_log(b);
}

/* The helpers of ops.def's reference expressions (each inlined into the
 * kernels' loops). */
#define OPS_INL static inline __attribute__((always_inline))
OPS_INL double ops_sign(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : (x == 0 ? 0.0 : x); }
OPS_INL double ops_min(double a, double b) { return (isnan(a) || isnan(b)) ? NAN : (a < b ? a : b); }
OPS_INL double ops_max(double a, double b) { return (isnan(a) || isnan(b)) ? NAN : (a > b ? a : b); }
OPS_INL double ops_bitand(double a, double b) { return (double)(ops_to_i64(a) & ops_to_i64(b)); }
OPS_INL double ops_bitor(double a, double b) { return (double)(ops_to_i64(a) | ops_to_i64(b)); }
OPS_INL double ops_bitxor(double a, double b) { return (double)(ops_to_i64(a) ^ ops_to_i64(b)); }
OPS_INL double ops_shiftl(double a, double b)
{
    return (double)(int64_t)((uint64_t)ops_to_i64(a) << (ops_to_i64(b) & 63));
}
OPS_INL double ops_shiftr(double a, double b) { return (double)(ops_to_i64(a) >> (ops_to_i64(b) & 63)); }

/* f(x) of a unary elementwise operator (ops.def's ref; NaN for others). */
OPS_INL double ops_unary(OpCode op, double x)
{
    switch (op) {
#define UNARY(id, name, flags, tpl, type, cost, ref, cgen) case OP_##id: return (ref);
#include "ops.def"
    default: return NAN;
    }
}

/* a op b of a binary elementwise operator (ops.def's ref; NaN for others). */
static inline double ops_binary(OpCode op, double a, double b)
{
    switch (op) {
#define BINARY(id, name, flags, tpl, type, cost, ref, cgen) case OP_##id: return (ref);
#include "ops.def"
    default: return NAN;
    }
}

/* f(a, b, c) of a ternary elementwise operator (ops.def's ref). */
OPS_INL double ops_ternary(OpCode op, double a, double b, double c)
{
    switch (op) {
#define TERNARY(id, name, flags, tpl, type, cost, ref, cgen) case OP_##id: return (ref);
#include "ops.def"
    default: return NAN;
    }
}
#undef OPS_INL

#endif
