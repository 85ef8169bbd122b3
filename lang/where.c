/* where.c: helpers over where-loops (see where.h). */
#include "where.h"

#include <stdlib.h>
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

bool where_builtin_ok(const BuiltinInfo *bi, int nargs)
{
    if (bi->id == BI_IFELSE) return nargs == 3;
    if (bi->id == BI_MIN || bi->id == BI_MAX) return nargs == 2;
    if (bi->id == BI_LOG) return nargs == 1;
    return nargs == 1 && bi->op < OP__COUNT && op_info[bi->op].kind == OK_UNARY;
}

/* ---- nested for loops as where-loops (seed 4.1) ---- */

static bool is_target(const Expr *e, const LValue *t)
{
    if (!e || e->kind != EX_INDEX || strcmp(e->index.name, t->name) || e->index.has_col != t->has_col) return false;
    const IndexDim *a[2] = {&e->index.row, &e->index.col}, *b[2] = {&t->row, &t->col};
    for (int k = 0; k < (t->has_col ? 2 : 1); k++)
        if (a[k]->all || a[k]->hi || !a[k]->lo || a[k]->lo->kind != EX_IDENT || !b[k]->lo ||
            b[k]->lo->kind != EX_IDENT || strcmp(a[k]->lo->ident, b[k]->lo->ident))
            return false;
    return true;
}

static bool index_ok(const WhereLoop *w, const IndexDim *d)
{
    return !d->all && !d->hi && where_var(w, d->lo) >= 0;
}

/* Would the validator accept e as the body of w (without messages), with
 * every index two-dimensional (the lifted loop must mean what the for
 * loop meant whatever the shapes)? */
static bool body_ok(const WhereLoop *w, const Expr *e)
{
    if (!e) return false;
    switch (e->kind) {
    case EX_INT: case EX_DOUBLE: case EX_BOOL: return true;
    case EX_IDENT: return where_var(w, e) < 0 && strcmp(e->ident, w->target.name);
    case EX_UNARY: return body_ok(w, e->unary.a);
    case EX_BINARY: return e->binary.op != OP_MATMUL && body_ok(w, e->binary.a) && body_ok(w, e->binary.b);
    case EX_INDEX:
        /* X[i] of a matrix is its row i in a for loop: only X[i, j] lifts */
        if (!strcmp(e->index.name, w->target.name) || !e->index.has_col || !index_ok(w, &e->index.row)) return false;
        return index_ok(w, &e->index.col) && where_var(w, e->index.row.lo) != where_var(w, e->index.col.lo);
    case EX_CALL:
        if (!e->call.builtin || !where_builtin_ok(e->call.builtin, e->call.nargs)) return false;
        for (int i = 0; i < e->call.nargs; i++)
            if (e->call.args[i].name || !body_ok(w, e->call.args[i].value)) return false;
        return true;
    default: return false;
    }
}

/* Does e read any of the first n loop variables of w (bounds of inner
 * loops that depend on outer ones: not a rectangle)? */
static bool reads_var(const WhereLoop *w, int n, const Expr *e)
{
    if (!e) return false;
    switch (e->kind) {
    case EX_IDENT: { int v = where_var(w, e); return v >= 0 && v < n; }
    case EX_UNARY: return reads_var(w, n, e->unary.a);
    case EX_BINARY: return reads_var(w, n, e->binary.a) || reads_var(w, n, e->binary.b);
    case EX_CALL:
        if (!e->call.builtin) return true;   /* user functions: not lifted */
        for (int i = 0; i < e->call.nargs; i++) if (reads_var(w, n, e->call.args[i].value)) return true;
        return false;
    case EX_INDEX:
        return true;   /* conservative */
    case EX_INT: case EX_DOUBLE: case EX_BOOL: case EX_STRING: return false;
    default: return true;
    }
}

/* The where-loop equivalent of the for-nest s, or NULL: perfectly nested
 * `for (v in a:b)` loops (1 to 3, distinct variables, bounds free of the
 * outer variables and of user functions), around one statement
 * R[..] += e, R[..] = R[..] + e, R[..] = min(R[..], e) / max(...), or
 * R[..] = e with every loop variable indexing R; e a valid where body. */
static WhereLoop *lift(Arena *a, const Stmt *s, const Stmt **inner)
{
    WhereLoop w = {0};
    const Stmt *st = s;
    while (st->kind == ST_FOR && !st->for_.parfor && !st->for_.incr && st->for_.nopts == 0 && w.nvars < WHERE_MAXVARS) {
        for (int v = 0; v < w.nvars; v++) if (!strcmp(w.vars[v].name, st->for_.var)) return NULL;
        w.vars[w.nvars] = (WhereVar){st->for_.var, st->for_.from, st->for_.to, st->span};
        w.nvars++;
        if (reads_var(&w, w.nvars, st->for_.from) || reads_var(&w, w.nvars, st->for_.to)) return NULL;
        if (st->for_.body.n != 1) return NULL;
        st = st->for_.body.stmts[0];
    }
    if (st->kind != ST_ASSIGN || !st->assign.target.indexed || !st->assign.target.has_col) return NULL;
    const LValue *t = &st->assign.target;
    w.target = *t;
    w.span = s->span;
    if (!index_ok(&w, &t->row) || (t->has_col && !index_ok(&w, &t->col))) return NULL;
    if (t->has_col && where_var(&w, t->row.lo) == where_var(&w, t->col.lo)) return NULL;
    Expr *e = st->assign.value;
    if (st->assign.accum) {
        w.acc = WA_ADD;
        w.value = e;
    } else if (e->kind == EX_BINARY && e->binary.op == OP_PLUS && is_target(e->binary.a, t)) {
        w.acc = WA_ADD;
        w.value = e->binary.b;
    } else if (e->kind == EX_BINARY && e->binary.op == OP_PLUS && is_target(e->binary.b, t)) {
        w.acc = WA_ADD;
        w.value = e->binary.a;
    } else if (e->kind == EX_CALL && e->call.builtin && e->call.nargs == 2 && !e->call.args[0].name &&
               !e->call.args[1].name && (e->call.builtin->id == BI_MIN || e->call.builtin->id == BI_MAX) &&
               (is_target(e->call.args[0].value, t) || is_target(e->call.args[1].value, t))) {
        w.acc = e->call.builtin->id == BI_MIN ? WA_MIN : WA_MAX;
        w.value = e->call.args[is_target(e->call.args[0].value, t) ? 1 : 0].value;
    } else {
        w.acc = WA_SET;
        w.value = e;
        int nix = t->has_col ? 2 : 1;
        if (nix != w.nvars) return NULL;
    }
    if (!body_ok(&w, w.value)) return NULL;
    const char *names[1];
    if (where_leaves(&w, names, 0) > WHERE_MAXLEAVES) return NULL;
    WhereLoop *r = arena_alloc(a, sizeof *r);
    if (r) *r = w;
    *inner = st;
    return r;
}

static Expr *new_expr(Arena *a, ExprKind k, Span sp)
{
    Expr *e = arena_alloc(a, sizeof *e);
    if (e) { memset(e, 0, sizeof *e); e->kind = k; e->span = sp; }
    return e;
}

/* The statements replacing for-nest s: R = <where>, then each loop
 * variable set to its last value (as.integer(to), as the loop leaves it). */
static Stmt **lifted_stmts(Arena *a, const Stmt *s, WhereLoop *w, int *n)
{
    Stmt **v = arena_alloc(a, (size_t)(1 + w->nvars) * sizeof *v);
    Expr *we = new_expr(a, EX_WHERE, s->span);
    if (!v || !we) return NULL;
    we->where = w;
    for (int k = 0; k <= w->nvars; k++) {
        Stmt *st = arena_alloc(a, sizeof *st);
        if (!st) return NULL;
        memset(st, 0, sizeof *st);
        st->kind = ST_ASSIGN;
        st->span = s->span;
        v[k] = st;
        if (k == 0) {
            st->assign.target.name = w->target.name;
            st->assign.target.span = w->target.span;
            st->assign.value = we;
            continue;
        }
        const WhereVar *wv = &w->vars[k - 1];
        Expr *c = new_expr(a, EX_CALL, wv->span);
        Arg *arg = arena_alloc(a, sizeof *arg);
        if (!c || !arg) return NULL;
        *arg = (Arg){.value = wv->to, .span = wv->span};
        c->call.name = "as.integer";
        c->call.args = arg;
        c->call.nargs = 1;
        c->call.builtin = ops_builtin("as.integer");
        st->assign.target.name = wv->name;
        st->assign.target.span = wv->span;
        st->assign.value = c;
    }
    *n = 1 + w->nvars;
    return v;
}

void where_lift_block(Arena *a, Block *b)
{
    for (int i = 0; i < b->n; i++) {
        Stmt *s = b->stmts[i];
        switch (s->kind) {
        case ST_IF: where_lift_block(a, &s->if_.then_b); where_lift_block(a, &s->if_.else_b); continue;
        case ST_WHILE: where_lift_block(a, &s->while_.body); continue;
        case ST_FOR: break;
        default: continue;
        }
        const Stmt *inner = NULL;
        WhereLoop *w = lift(a, s, &inner);
        int n = 0;
        Stmt **rep = w ? lifted_stmts(a, s, w, &n) : NULL;
        if (!rep) { where_lift_block(a, &s->for_.body); continue; }
        Stmt **nv = arena_alloc(a, (size_t)(b->n + n - 1) * sizeof *nv);
        if (!nv) continue;
        memcpy(nv, b->stmts, (size_t)i * sizeof *nv);
        memcpy(nv + i, rep, (size_t)n * sizeof *nv);
        memcpy(nv + i + n, b->stmts + i + 1, (size_t)(b->n - i - 1) * sizeof *nv);
        b->stmts = nv;
        b->n += n - 1;
        i += n - 1;
    }
}
