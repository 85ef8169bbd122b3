/* codegen.c: entry points of operator fusion (placeholder: no fusion yet;
 * the codegen issue fills this folder in). */
#include "codegen.h"

#include <stdlib.h>

#include "../runtime/value.h"

struct CgContext {
    CgOptions opt;
    CgStats st;
};

CgContext *cg_context_new(const CgOptions *o)
{
    CgContext *c = br_calloc(1, sizeof *c);
    if (c) c->opt = *o;
    return c;
}

void cg_context_free(CgContext *c) { free(c); }
const CgStats *cg_stats(const CgContext *c) { return &c->st; }

void cg_optimize_dag(CgContext *c, HopDag *d)
{
    if (!c || !c->opt.enabled) return;
    (void)d;
}

int cg_exec(CgContext *c, const Hop *h, Value *args, Value *out, BrErr *e)
{
    (void)c; (void)args; (void)out;
    return br_err(e, BR_EFAIL, "fused operator '%s' is not available", hop_opname(h));
}

void cg_explain_dag(CgContext *c, const HopDag *d, FILE *out) { (void)c; (void)d; (void)out; }
