/* where.c: helpers over where-loops (see where.h). */
#include "where.h"

#include <string.h>

int where_var(const WhereLoop *w, const Expr *e)
{
    if (!e || e->kind != EX_IDENT) return -1;
    for (int v = 0; v < w->nvars; v++)
        if (!strcmp(w->vars[v].name, e->ident)) return v;
    return -1;
}

static void add_leaf(const char *name, const char **names, int max, int *n)
{
    for (int i = 0; i < *n && i < max; i++)
        if (!strcmp(names[i], name)) return;
    if (*n < max) names[*n] = name;
    (*n)++;
}

static void leaves_of(const WhereLoop *w, const Expr *e, const char **names, int max, int *n)
{
    if (!e) return;
    switch (e->kind) {
    case EX_IDENT:
        if (where_var(w, e) < 0) add_leaf(e->ident, names, max, n);
        return;
    case EX_INDEX: add_leaf(e->index.name, names, max, n); return;
    case EX_UNARY: leaves_of(w, e->unary.a, names, max, n); return;
    case EX_BINARY:
        leaves_of(w, e->binary.a, names, max, n);
        leaves_of(w, e->binary.b, names, max, n);
        return;
    case EX_CALL:
        for (int i = 0; i < e->call.nargs; i++) leaves_of(w, e->call.args[i].value, names, max, n);
        return;
    default: return;
    }
}

int where_leaves(const WhereLoop *w, const char **names, int max)
{
    int n = 0;
    leaves_of(w, w->value, names, max, &n);
    return n;
}
