/* ops.c: property tables generated from ops.def. */
#include "ops.h"

#include <stddef.h>

const OpInfo op_info[OP__COUNT] = {
#define OP(id, name, kind, flags) [OP_##id] = { name, kind, flags },
#include "ops.def"
#undef OP
};

const BuiltinInfo builtin_info[BI__COUNT] = {
#define OP(id, name, kind, flags)
#define BUILTIN(id, name, params) [BI_##id] = { BI_##id, name, params },
#include "ops.def"
#undef BUILTIN
#undef OP
};

const BuiltinInfo *ops_builtin(const char *name)
{
    for (int i = 0; i < BI__COUNT; i++)
        if (strcmp(builtin_info[i].name, name) == 0) return &builtin_info[i];
    return NULL;
}
