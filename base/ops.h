/* ops.h: enums and property lookups generated from ops.def, plus the scalar
 * semantics of every elementwise operator (one definition, used by matrix
 * kernels and scalar evaluation alike). */
#ifndef BRAID_OPS_H
#define BRAID_OPS_H

#include <math.h>
#include <stdint.h>
#include <string.h>

typedef enum {
#define OP(id, name, kind, flags) OP_##id,
#include "ops.def"
#undef OP
    OP__COUNT
} OpCode;

typedef enum { OK_UNARY, OK_BINARY, OK_TERNARY, OK_AGG, OK_CUM, OK_MATMUL,
               OK_REORG, OK_GEN, OK_LA, OK_MISC } OpKind;

enum { OF_SAFE = 1, OF_MULT = 2, OF_CELL = 4, OF_AGGF = 8, OF_NONDET = 16,
       OF_CMP = 32 };

typedef struct OpInfo {
    const char *name;
    OpKind kind;
    int flags;
} OpInfo;

extern const OpInfo op_info[OP__COUNT];

typedef enum {
#define OP(id, name, kind, flags)
#define BUILTIN(id, name, params) BI_##id,
#include "ops.def"
#undef BUILTIN
#undef OP
    BI__COUNT
} BuiltinId;

typedef struct BuiltinInfo {
    BuiltinId id;
    const char *name;
    const char *params;   /* see ops.def */
} BuiltinInfo;

extern const BuiltinInfo builtin_info[BI__COUNT];
/* Builtin by DML name, or NULL. */
const BuiltinInfo *ops_builtin(const char *name);
/* Comparison operator by its DML spelling (">", "<=", "!=", ...; ppred's
 * third argument), or OP__COUNT. */
OpCode ops_cmp_by_name(const char *name);

/* Aggregation direction. */
typedef enum { DIR_FULL, DIR_ROW, DIR_COL } AggDir;

/* ---- scalar semantics (SystemDS's, see DML.md) ---- */

static inline double ops_round(double x) { return floor(x + 0.5); }

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

static inline double ops_unary(OpCode op, double x)
{
    switch (op) {
    case OP_NEG: return -x;
    case OP_NOT: return x == 0 ? 1.0 : 0.0;
    case OP_ABS: return fabs(x);
    case OP_EXP: return exp(x);
    case OP_LOG: return log(x);
    case OP_SQRT: return sqrt(x);
    case OP_ROUND: return ops_round(x);
    case OP_FLOOR: return floor(x);
    case OP_CEIL: return ceil(x);
    case OP_SIGN: return x > 0 ? 1.0 : x < 0 ? -1.0 : (x == 0 ? 0.0 : x);
    case OP_SIN: return sin(x);
    case OP_COS: return cos(x);
    case OP_TAN: return tan(x);
    case OP_ASIN: return asin(x);
    case OP_ACOS: return acos(x);
    case OP_ATAN: return atan(x);
    case OP_SINH: return sinh(x);
    case OP_COSH: return cosh(x);
    case OP_TANH: return tanh(x);
    case OP_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case OP_ISNA: return isnan(x) ? 1.0 : 0.0;
    case OP_ISNAN: return isnan(x) ? 1.0 : 0.0;
    case OP_ISINF: return isinf(x) ? 1.0 : 0.0;
    default: return NAN;
    }
}

static inline double ops_binary(OpCode op, double a, double b)
{
    switch (op) {
    case OP_PLUS: return a + b;
    case OP_MINUS: return a - b;
    case OP_MULT: return a * b;
    case OP_DIV: return a / b;
    case OP_POW: return pow(a, b);
    case OP_MOD: return ops_mod(a, b);
    case OP_INTDIV: return ops_intdiv(a, b);
    case OP_LT: return a < b;
    case OP_LE: return a <= b;
    case OP_GT: return a > b;
    case OP_GE: return a >= b;
    case OP_EQ: return a == b;
    case OP_NE: return a != b;
    case OP_AND: return (a != 0) && (b != 0);
    case OP_OR: return (a != 0) || (b != 0);
    case OP_XOR: return (a != 0) != (b != 0);
    case OP_MIN: return (isnan(a) || isnan(b)) ? NAN : (a < b ? a : b);
    case OP_MAX: return (isnan(a) || isnan(b)) ? NAN : (a > b ? a : b);
    case OP_LOGB: return log(a) / log(b);
    case OP_BITAND: return (double)(ops_to_i64(a) & ops_to_i64(b));
    case OP_BITOR: return (double)(ops_to_i64(a) | ops_to_i64(b));
    case OP_BITXOR: return (double)(ops_to_i64(a) ^ ops_to_i64(b));
    case OP_SHIFTL: return (double)(int64_t)((uint64_t)ops_to_i64(a) << (ops_to_i64(b) & 63));
    case OP_SHIFTR: return (double)(ops_to_i64(a) >> (ops_to_i64(b) & 63));
    default: return NAN;
    }
}

#endif
