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

static const struct { const char *name; BuiltinId id; } builtin_alias[] = {
#define OP(id, name, kind, flags)
#define BUILTIN_ALIAS(name, id) { name, BI_##id },
#include "ops.def"
#undef BUILTIN_ALIAS
#undef OP
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
