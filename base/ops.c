/* ops.c: property tables generated from ops.def. */
#include "ops.h"

#include <stddef.h>

const OpInfo op_info[OP__COUNT] = {
#define UNARY(id, nm, fl, tp, ty, co, ref, cg) [OP_##id] = { nm, OK_UNARY, 1, fl, tp, ty, co, 0, cg },
#define BINARY(id, nm, fl, tp, ty, co, ref, cg) [OP_##id] = { nm, OK_BINARY, 2, fl, tp, ty, co, 0, cg },
#define TERNARY(id, nm, fl, tp, ty, co, ref, cg) [OP_##id] = { nm, OK_TERNARY, 3, fl, tp, ty, co, 0, cg },
#define AGG(id, nm, fl, tp, ac, cg) [OP_##id] = { nm, OK_AGG, 1, fl, tp, TY_DBL, 1, ac, cg },
#define OP(id, nm, kind, ar, fl) [OP_##id] = { nm, kind, ar, fl, 0, TY_NONE, 1, 0, NULL },
#include "ops.def"
};

/* the lowers and result columns of BUILTIN rows, as initializers */
#define NONE            .op = OP__COUNT
#define TO(o)           .op = OP_##o, .dir = DIR_FULL
#define TO_ROW(o)       .op = OP_##o, .dir = DIR_ROW
#define TO_COL(o)       .op = OP_##o, .dir = DIR_COL
#define ANY             .dt = DT_ANY, .vt = VT_UNKNOWN, .nouts = 1
#define SCALAR(v)       .dt = DT_SCALAR, .vt = VT_##v, .nouts = 1
#define MATRIX          .dt = DT_MATRIX, .vt = VT_DOUBLE, .nouts = 1
#define MATRIX_SAME     MATRIX, .shape = BS_SAME
#define MATRIX_NX1      MATRIX, .shape = BS_NX1
#define MATRIX_1XN      MATRIX, .shape = BS_1XN
#define FRAME           .dt = DT_FRAME, .vt = VT_STRING, .nouts = 1
#define LIST            .dt = DT_LIST, .vt = VT_UNKNOWN, .nouts = 1
#define LIST_OF(n)      .dt = DT_LIST, .vt = VT_UNKNOWN, .nouts = n
#define SIDEFX(r)       r, .sidefx = true

const BuiltinInfo builtin_info[BI__COUNT] = {
#define BUILTIN(bid, nm, lowers, result, handler, ps) [BI_##bid] = { .id = BI_##bid, .name = nm, .params = ps, lowers, result },
#include "ops.def"
};
#undef NONE
#undef TO
#undef TO_ROW
#undef TO_COL
#undef ANY
#undef SCALAR
#undef MATRIX
#undef MATRIX_SAME
#undef MATRIX_NX1
#undef MATRIX_1XN
#undef FRAME
#undef LIST
#undef LIST_OF
#undef SIDEFX

static const struct { const char *name; BuiltinId id; } builtin_alias[] = {
#define BUILTIN_ALIAS(nm, id) { nm, BI_##id },
#include "ops.def"
};

const BuiltinInfo *ops_builtin(const char *name)
{
    for (int i = 0; i < BI__COUNT; i++)
        if (strcmp(builtin_info[i].name, name) == 0) return &builtin_info[i];
    for (size_t i = 0; i < sizeof builtin_alias / sizeof *builtin_alias; i++)
        if (strcmp(builtin_alias[i].name, name) == 0) return &builtin_info[builtin_alias[i].id];
    return NULL;
}

OpCode ops_cmp_by_name(const char *name)
{
    for (int i = 0; i < OP__COUNT; i++)
        if ((op_info[i].flags & OF_CMP) && strcmp(op_info[i].name, name) == 0) return (OpCode)i;
    return OP__COUNT;
}
