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
    for (const WhereLoop *x = w; x; x = x->more) leaves_of(w, x->value, names, max, &n);
    return n;
}

int where_nres(const WhereLoop *w)
{
    int n = 0;
    for (; w; w = w->more) n++;
    return n;
}

bool where_result(const WhereLoop *w, const char *name)
{
    for (; w; w = w->more)
        if (!strcmp(w->target.name, name)) return true;
    return false;
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

/* One update statement st of the innermost loop as a result of w (w's
 * variables): R[..] += e, R[..] = R[..] + e, R[..] = min(R[..], e) /
 * max(...), or R[..] = e with every loop variable indexing R; false for
 * anything else. */
static bool lift_result(const WhereLoop *w, const Stmt *st, WhereLoop *x)
{
    if (st->kind != ST_ASSIGN || !st->assign.target.indexed || !st->assign.target.has_col) return false;
    const LValue *t = &st->assign.target;
    memcpy(x->vars, w->vars, sizeof w->vars);
    x->nvars = w->nvars;
    x->target = *t;
    x->span = w->span;
    if (!index_ok(x, &t->row) || (t->has_col && !index_ok(x, &t->col))) return false;
    if (t->has_col && where_var(x, t->row.lo) == where_var(x, t->col.lo)) return false;
    Expr *e = st->assign.value;
    if (st->assign.accum) {
        x->acc = WA_ADD;
        x->value = e;
    } else if (e->kind == EX_BINARY && e->binary.op == OP_PLUS && is_target(e->binary.a, t)) {
        x->acc = WA_ADD;
        x->value = e->binary.b;
    } else if (e->kind == EX_BINARY && e->binary.op == OP_PLUS && is_target(e->binary.b, t)) {
        x->acc = WA_ADD;
        x->value = e->binary.a;
    } else if (e->kind == EX_CALL && e->call.builtin && e->call.nargs == 2 && !e->call.args[0].name &&
               !e->call.args[1].name && (e->call.builtin->id == BI_MIN || e->call.builtin->id == BI_MAX) &&
               (is_target(e->call.args[0].value, t) || is_target(e->call.args[1].value, t))) {
        x->acc = e->call.builtin->id == BI_MIN ? WA_MIN : WA_MAX;
        x->value = e->call.args[is_target(e->call.args[0].value, t) ? 1 : 0].value;
    } else {
        x->acc = WA_SET;
        x->value = e;
        int nix = t->has_col ? 2 : 1;
        if (nix != w->nvars) return false;
    }
    return true;
}

/* The where-loop equivalent of the for-nest s, or NULL: perfectly nested
 * `for (v in a:b)` loops (1 to 3, distinct variables, bounds free of the
 * outer variables and of user functions), around one or more update
 * statements (lift_result) of distinct results, each body a valid where
 * body that reads none of the results (so the statements' order within
 * an iteration does not matter either): one loop nest computing them
 * all. */
static WhereLoop *lift(Arena *a, const Stmt *s, const Stmt **inner)
{
    WhereLoop w = {0};
    const Stmt *st = s;
    const Block *body = NULL;
    w.span = s->span;
    while (st->kind == ST_FOR && !st->for_.parfor && !st->for_.incr && st->for_.nopts == 0 && w.nvars < WHERE_MAXVARS) {
        for (int v = 0; v < w.nvars; v++) if (!strcmp(w.vars[v].name, st->for_.var)) return NULL;
        w.vars[w.nvars] = (WhereVar){st->for_.var, st->for_.from, st->for_.to, st->span, NULL};
        w.nvars++;
        if (reads_var(&w, w.nvars, st->for_.from) || reads_var(&w, w.nvars, st->for_.to)) return NULL;
        body = &st->for_.body;
        if (body->n != 1) break;
        st = body->stmts[0];
    }
    if (!body || body->n < 1 || body->n > WHERE_MAXRES) return NULL;
    WhereLoop *r = arena_alloc(a, (size_t)body->n * sizeof *r);
    if (!r) return NULL;
    for (int q = 0; q < body->n; q++) {
        memset(&r[q], 0, sizeof r[q]);
        if (!lift_result(&w, body->stmts[q], &r[q])) return NULL;
        for (int u = 0; u < q; u++)
            if (!strcmp(r[u].target.name, r[q].target.name)) return NULL;
        if (q) r[q - 1].more = &r[q];
    }
    /* every body valid and free of every result */
    for (int q = 0; q < body->n; q++)
        for (int u = 0; u < body->n; u++)
            if (!body_ok(&r[u], r[q].value)) return NULL;
    const char *names[1];
    if (where_leaves(r, names, 0) > WHERE_MAXLEAVES) return NULL;
    *inner = body->stmts[body->n - 1];
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
        if (k == 0 && w->more) {   /* several results: [R, S, ...] = where */
            int nr = where_nres(w), q = 0;
            LValue *t = arena_alloc(a, (size_t)nr * sizeof *t);
            if (!t) return NULL;
            memset(t, 0, (size_t)nr * sizeof *t);
            for (const WhereLoop *x = w; x; x = x->more, q++) {
                t[q].name = x->target.name;
                t[q].span = x->target.span;
            }
            st->kind = ST_MASSIGN;
            st->massign.targets = t;
            st->massign.n = nr;
            st->massign.call = we;
            continue;
        }
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

/* ---- loops over k of rank-one outer products ---- */

/* A loop `for (k in a:b) { T1 = e1; ...; R = R + f(...) }` whose body
 * combines outer products A[,k] %*% B[k,] with elementwise operators is
 * the where-loop over (i, j, k) of f with A[,k] read as A[i,k] and B[k,]
 * as B[k,j] (seed 4.1's compatibility path for the vectorized form). The
 * translation keeps, per expression, which of i and j its DML value is
 * known to be indexed by (a column of k-indexed reads: i; a row: j), so
 * that `%*%` is taken only where it is an outer product. Other variables
 * become broadcast reads X[i,j] (WhereLoop.bcast: resolved by X's shape
 * at run time as DML's elementwise operators broadcast it; t(X): X[j,i]).
 */
enum { RK_I = 1, RK_J = 2 };
typedef struct RkVal {
    Expr *e;               /* the where-body expression */
    int cls;               /* RK_I | RK_J bits the value is indexed by */
    bool known;            /* cls is exact (no broadcast read inside) */
    Expr *rows, *cols;     /* extent of i / j (nrow(A) ...), NULL unknown */
} RkVal;

#define RK_MAXTEMPS 16
typedef struct RkCtx {
    Arena *a;
    const Stmt *loop;      /* the for statement */
    const char *k, *r;     /* the loop variable, the result */
    const char *tname[RK_MAXTEMPS];
    RkVal tval[RK_MAXTEMPS];
    int nt;
    const Block *body;
} RkCtx;

static const char *const rk_i = "#i", *const rk_j = "#j";   /* never DML names */

static Expr *rk_ident(Arena *a, const char *name, Span sp)
{
    Expr *e = new_expr(a, EX_IDENT, sp);
    if (e) e->ident = name;
    return e;
}

/* X[r, c] with loop variables r and c (bcast: a broadcast read). */
static Expr *rk_index(Arena *a, const char *x, const char *r, const char *c, Span sp)
{
    Expr *e = new_expr(a, EX_INDEX, sp);
    if (!e) return NULL;
    e->index.name = x;
    e->index.has_col = true;
    e->index.row.lo = rk_ident(a, r, sp);
    e->index.col.lo = rk_ident(a, c, sp);
    return e->index.row.lo && e->index.col.lo ? e : NULL;
}

/* nrow(x) or ncol(x). */
static Expr *rk_extent(Arena *a, const char *x, bool rows, Span sp)
{
    Expr *c = new_expr(a, EX_CALL, sp);
    Arg *arg = arena_alloc(a, sizeof *arg);
    Expr *v = rk_ident(a, x, sp);
    if (!c || !arg || !v) return NULL;
    *arg = (Arg){.value = v, .span = sp};
    c->call.name = rows ? "nrow" : "ncol";
    c->call.args = arg;
    c->call.nargs = 1;
    c->call.builtin = ops_builtin(c->call.name);
    return c->call.builtin ? c : NULL;
}

/* Is name assigned anywhere in the loop body (a temporary or the result)? */
static bool rk_assigned(const RkCtx *c, const char *name)
{
    for (int i = 0; i < c->body->n; i++)
        if (!strcmp(c->body->stmts[i]->assign.target.name, name)) return true;
    return false;
}

/* Is d the single index k (true) or the whole dimension (false, *all)? */
static bool rk_dim(const RkCtx *c, const IndexDim *d, bool *all)
{
    *all = d->all;
    return !d->all && !d->hi && d->lo && d->lo->kind == EX_IDENT && !strcmp(d->lo->ident, c->k);
}

/* A[,k] (column: i), A[k,] (row: j), with tr their transposes t(A[k,]),
 * t(A[,k]). */
static bool rk_slice(RkCtx *c, const Expr *e, bool tr, RkVal *out)
{
    if (e->kind != EX_INDEX || !e->index.has_col || rk_assigned(c, e->index.name) || !strcmp(e->index.name, c->k))
        return false;
    bool rall, call;
    bool rk = rk_dim(c, &e->index.row, &rall), ck = rk_dim(c, &e->index.col, &call);
    const char *x = e->index.name;
    if (ck && rall) {          /* A[,k]: i of the rows; t(): j */
        out->cls = tr ? RK_J : RK_I;
        out->e = rk_index(c->a, x, tr ? rk_j : rk_i, c->k, e->span);
        *(tr ? &out->cols : &out->rows) = rk_extent(c->a, x, true, e->span);
    } else if (rk && call) {   /* B[k,]: j of the columns; t(): i */
        out->cls = tr ? RK_I : RK_J;
        out->e = rk_index(c->a, x, c->k, tr ? rk_i : rk_j, e->span);
        *(tr ? &out->rows : &out->cols) = rk_extent(c->a, x, false, e->span);
    } else {
        return false;
    }
    out->known = true;
    return out->e && (out->rows || out->cols);
}

static bool rk_expr(RkCtx *c, const Expr *e, RkVal *out);

/* Combines the operands' classes and extents into out. */
static void rk_join(RkVal *out, const RkVal *v, int n)
{
    out->cls = 0;
    out->known = true;
    for (int i = 0; i < n; i++) {
        out->cls |= v[i].cls;
        out->known &= v[i].known;
        if (!out->rows) out->rows = v[i].rows;
        if (!out->cols) out->cols = v[i].cols;
    }
}

/* outer(u, v, op) of a column and a row: u[i] op v[j]. */
static bool rk_outer(RkCtx *c, const Expr *e, RkVal *out)
{
    const char *name = "*";
    int n = e->call.nargs;
    if (n < 2 || n > 3 || e->call.args[0].name || e->call.args[1].name) return false;
    if (n == 3) {
        const Arg *o = &e->call.args[2];
        if ((o->name && strcmp(o->name, "op")) || o->value->kind != EX_STRING) return false;
        name = o->value->sval;
    }
    OpCode op = OP__COUNT;
    for (int i = 0; i < OP__COUNT && op == OP__COUNT; i++)
        if (op_info[i].kind == OK_BINARY && !strcmp(op_info[i].name, name)) op = (OpCode)i;
    RkVal v[2];
    Expr *x = new_expr(c->a, EX_BINARY, e->span);
    if (op == OP__COUNT || !x || !rk_expr(c, e->call.args[0].value, &v[0]) || !rk_expr(c, e->call.args[1].value, &v[1]))
        return false;
    if (!(v[0].known && v[0].cls == RK_I && v[1].known && v[1].cls == RK_J)) return false;
    x->binary.op = op;
    x->binary.a = v[0].e;
    x->binary.b = v[1].e;
    rk_join(out, v, 2);
    out->e = x;
    return true;
}

static bool rk_call(RkCtx *c, const Expr *e, RkVal *out)
{
    const BuiltinInfo *bi = e->call.builtin;
    if (!bi) return false;
    if (bi->id == BI_OUTER) return rk_outer(c, e, out);
    for (int i = 0; i < e->call.nargs; i++) if (e->call.args[i].name) return false;
    if (bi->id == BI_T && e->call.nargs == 1) {
        const Expr *x = e->call.args[0].value;
        if (x->kind != EX_IDENT) return rk_slice(c, x, true, out);
        /* t(X) of a variable: the broadcast read X[j,i] */
        if (!strcmp(x->ident, c->k) || rk_assigned(c, x->ident)) return false;
        for (int t = 0; t < c->nt; t++) if (!strcmp(c->tname[t], x->ident)) return false;
        out->e = rk_index(c->a, x->ident, rk_j, rk_i, e->span);
        return out->e != NULL;
    }
    if (!where_builtin_ok(bi, e->call.nargs)) return false;
    RkVal v[3] = {{0}};
    Expr *x = new_expr(c->a, EX_CALL, e->span);
    Arg *args = arena_alloc(c->a, (size_t)e->call.nargs * sizeof *args);
    if (!x || !args) return false;
    for (int i = 0; i < e->call.nargs; i++) {
        if (!rk_expr(c, e->call.args[i].value, &v[i])) return false;
        args[i] = (Arg){.value = v[i].e, .span = e->call.args[i].span};
    }
    x->call = e->call;
    x->call.args = args;
    rk_join(out, v, e->call.nargs);
    out->e = x;
    return true;
}

/* The where-body form of loop-body expression e, or false when e is
 * outside the recognized shape. */
static bool rk_expr(RkCtx *c, const Expr *e, RkVal *out)
{
    memset(out, 0, sizeof *out);
    switch (e->kind) {
    case EX_INT: case EX_DOUBLE: case EX_BOOL:
        out->e = (Expr *)e;
        out->known = true;
        return true;
    case EX_IDENT:
        for (int t = c->nt - 1; t >= 0; t--)
            if (!strcmp(c->tname[t], e->ident)) { *out = c->tval[t]; return true; }
        /* the loop variable as a value, the result, or a variable the
         * body assigns later (its value would come from the previous
         * iteration): not a where body */
        if (!strcmp(e->ident, c->k) || rk_assigned(c, e->ident)) return false;
        out->e = rk_index(c->a, e->ident, rk_i, rk_j, e->span);
        return out->e != NULL;
    case EX_INDEX: return rk_slice(c, e, false, out);
    case EX_UNARY: {
        RkVal v;
        Expr *x = new_expr(c->a, EX_UNARY, e->span);
        if (!x || !rk_expr(c, e->unary.a, &v)) return false;
        x->unary.op = e->unary.op;
        x->unary.a = v.e;
        *out = v;
        out->e = x;
        return true;
    }
    case EX_BINARY: {
        RkVal v[2];
        Expr *x = new_expr(c->a, EX_BINARY, e->span);
        if (!x || !rk_expr(c, e->binary.a, &v[0]) || !rk_expr(c, e->binary.b, &v[1])) return false;
        /* u %*% v of a column and a row: the outer product u[i] * v[j] */
        if (e->binary.op == OP_MATMUL &&
            !(v[0].known && v[0].cls == RK_I && v[1].known && v[1].cls == RK_J))
            return false;
        x->binary.op = e->binary.op == OP_MATMUL ? OP_MULT : e->binary.op;
        x->binary.a = v[0].e;
        x->binary.b = v[1].e;
        rk_join(out, v, 2);
        out->e = x;
        return true;
    }
    case EX_CALL: return rk_call(c, e, out);
    default: return false;
    }
}

static bool is_name(const Expr *e, const char *name)
{
    return e->kind == EX_IDENT && !strcmp(e->ident, name);
}

/* e without the term r at the left end of its chain of + and -
 * (R + a - b: a - b), *none when e was r alone; NULL when r is not there. */
static Expr *rk_strip(Arena *a, Expr *e, const char *r, bool *none)
{
    *none = false;
    if (is_name(e, r)) { *none = true; return e; }
    if (e->kind != EX_BINARY || (e->binary.op != OP_PLUS && e->binary.op != OP_MINUS)) return NULL;
    bool n;
    Expr *l = rk_strip(a, e->binary.a, r, &n);
    Expr *x = l ? new_expr(a, n && e->binary.op == OP_MINUS ? EX_UNARY : EX_BINARY, e->span) : NULL;
    if (!x) return NULL;
    if (n && e->binary.op == OP_PLUS) return e->binary.b;
    if (n) {
        x->unary.op = OP_NEG;
        x->unary.a = e->binary.b;
    } else {
        x->binary.op = e->binary.op;
        x->binary.a = l;
        x->binary.b = e->binary.b;
    }
    return x;
}

/* The accumulation of the loop's last statement R += e, R = R + e - f
 * (R first in a chain of + and -), R = e + R, R = min(R, e) / max
 * (either order): its operator and the accumulated value; false for
 * anything else. */
static bool rk_update(RkCtx *c, const Stmt *st, WhereAcc *acc, Expr **val)
{
    const LValue *t = &st->assign.target;
    Expr *e = st->assign.value;
    bool none;
    if (st->kind != ST_ASSIGN || t->indexed) return false;
    *acc = WA_ADD;
    if (st->assign.accum) { *val = e; return true; }
    if ((*val = rk_strip(c->a, e, t->name, &none)) != NULL) return !none;
    if (e->kind == EX_BINARY && e->binary.op == OP_PLUS && is_name(e->binary.b, t->name)) {
        *val = e->binary.a;
        return true;
    }
    if (e->kind != EX_CALL || !e->call.builtin || e->call.nargs != 2 || e->call.args[0].name ||
        e->call.args[1].name || (e->call.builtin->id != BI_MIN && e->call.builtin->id != BI_MAX))
        return false;
    bool r0 = is_name(e->call.args[0].value, t->name), r1 = is_name(e->call.args[1].value, t->name);
    if (r0 == r1) return false;
    *acc = e->call.builtin->id == BI_MIN ? WA_MIN : WA_MAX;
    *val = e->call.args[r0 ? 1 : 0].value;
    return true;
}

/* The increment of a stepped loop `for (k in seq(a, b, s))` the rewrite
 * takes: a non-zero integer literal (as - literal too); 0 when there is
 * none or it is something else. */
static int64_t rk_step(const Stmt *s)
{
    const Expr *x = s->for_.incr;
    if (!x) return 0;
    bool neg = x->kind == EX_UNARY && x->unary.op == OP_NEG;
    if (neg) x = x->unary.a;
    if (x->kind != EX_INT || x->ival == 0) return 0;
    return neg ? -x->ival : x->ival;
}

/* The where-loop of one update of the loop body (c's temporaries so far),
 * or NULL. */
static WhereLoop *rk_loop(RkCtx *c, const Stmt *s, const Stmt *st)
{
    Arena *a = c->a;
    WhereLoop w = {0};
    Expr *e = NULL;
    RkVal v;
    if (!rk_update(c, st, &w.acc, &e) || !rk_expr(c, e, &v) || !v.rows || !v.cols) return NULL;
    w.nvars = 3;
    w.vars[0] = (WhereVar){rk_i, new_expr(a, EX_INT, s->span), v.rows, s->span, NULL};
    w.vars[1] = (WhereVar){rk_j, new_expr(a, EX_INT, s->span), v.cols, s->span, NULL};
    w.vars[2] = (WhereVar){s->for_.var, s->for_.from, s->for_.to, s->span, s->for_.incr};
    if (!w.vars[0].from || !w.vars[1].from) return NULL;
    w.vars[0].from->ival = w.vars[1].from->ival = 1;
    w.target = st->assign.target;
    w.target.indexed = true;
    w.target.has_col = true;
    w.target.row.lo = rk_ident(a, rk_i, s->span);
    w.target.col.lo = rk_ident(a, rk_j, s->span);
    w.value = v.e;
    w.span = s->span;
    w.bcast = true;
    const char *names[1];
    if (!w.target.row.lo || !w.target.col.lo || where_leaves(&w, names, 0) > WHERE_MAXLEAVES) return NULL;
    WhereLoop *r = arena_alloc(a, sizeof *r);
    if (r) *r = w;
    return r;
}

/* The where-loops of a loop over k of rank-one outer products: one per
 * result the body updates (R = R + e, ...; each result updated once and
 * read nowhere else, which rk_expr's rule for assigned variables
 * ensures), the other statements temporaries; into ws[], returns their
 * number (0: not such a loop). tmp[i]: statement i is a temporary. */
#define RK_MAXRES 8
static int lift_rank1(Arena *a, const Stmt *s, WhereLoop **ws, bool *tmp)
{
    if (s->kind != ST_FOR || s->for_.parfor || s->for_.nopts || s->for_.body.n < 1) return 0;
    if (s->for_.incr && !rk_step(s)) return 0;
    WhereLoop probe = {0};
    if (reads_var(&probe, 0, s->for_.from) || reads_var(&probe, 0, s->for_.to)) return 0;
    const Block *body = &s->for_.body;
    if (body->n > RK_MAXTEMPS + RK_MAXRES) return 0;
    for (int i = 0; i < body->n; i++) {
        const Stmt *st = body->stmts[i];
        if (st->kind != ST_ASSIGN || st->assign.target.indexed || !strcmp(st->assign.target.name, s->for_.var))
            return 0;
        for (int j = 0; j < i; j++)   /* each variable assigned once */
            if (!strcmp(body->stmts[j]->assign.target.name, st->assign.target.name)) return 0;
    }
    RkCtx c = {.a = a, .loop = s, .k = s->for_.var, .body = body};
    int nw = 0;
    for (int i = 0; i < body->n; i++) {
        const Stmt *st = body->stmts[i];
        WhereAcc acc;
        Expr *e;
        /* an update reads its own target, which no temporary may (the
         * rule for assigned variables): the statements it matches */
        tmp[i] = !rk_update(&c, st, &acc, &e);
        if (!tmp[i]) {
            if (nw == RK_MAXRES || !(ws[nw] = rk_loop(&c, s, st))) return 0;
            nw++;
            continue;
        }
        if (st->assign.accum || c.nt == RK_MAXTEMPS || !rk_expr(&c, st->assign.value, &c.tval[c.nt])) return 0;
        c.tname[c.nt++] = st->assign.target.name;
    }
    return nw;
}

/* A call of builtin name with arguments x[0..n). */
static Expr *rk_call_of(Arena *a, const char *name, Expr **x, int n, Span sp)
{
    Expr *c = new_expr(a, EX_CALL, sp);
    Arg *args = arena_alloc(a, (size_t)n * sizeof *args);
    if (!c || !args) return NULL;
    for (int i = 0; i < n; i++) {
        if (!x[i]) return NULL;
        args[i] = (Arg){.value = x[i], .span = sp};
    }
    c->call.name = name;
    c->call.args = args;
    c->call.nargs = n;
    c->call.builtin = ops_builtin(name);
    return c->call.builtin ? c : NULL;
}

static Expr *rk_bin(Arena *a, OpCode op, Expr *x, Expr *y, Span sp)
{
    Expr *e = x && y ? new_expr(a, EX_BINARY, sp) : NULL;
    if (!e) return NULL;
    e->binary.op = op;
    e->binary.a = x;
    e->binary.b = y;
    return e;
}

/* Stepped loop seq(a, b, s): the value k leaves, as.integer(a) +
 * floor((as.integer(b) - as.integer(a)) / s) * s, as an integer; and
 * the condition that the loop runs at all (runtime/interp.c's count:
 * (as.integer(b) - as.integer(a)) * s >= 0 and b / s - a / s >= 0). */
static Expr *rk_last(Arena *a, const Stmt *s, Expr **cond)
{
    Span sp = s->span;
    Expr *from = s->for_.from, *to = s->for_.to;
    Expr *ia = rk_call_of(a, "as.integer", &from, 1, sp);
    Expr *ib = rk_call_of(a, "as.integer", &to, 1, sp);
    Expr *d = rk_bin(a, OP_MINUS, ib, ia, sp);
    Expr *q = rk_bin(a, OP_DIV, d, s->for_.incr, sp);
    Expr *f = rk_call_of(a, "floor", &q, 1, sp);
    Expr *last = rk_bin(a, OP_PLUS, ia, rk_bin(a, OP_MULT, f, s->for_.incr, sp), sp);
    Expr *zero = new_expr(a, EX_INT, sp);
    if (zero) zero->ival = 0;
    Expr *c1 = rk_bin(a, OP_GE, rk_bin(a, OP_MULT, d, s->for_.incr, sp), zero, sp);
    Expr *c2 = rk_bin(a, OP_GE,
                      rk_bin(a, OP_MINUS, rk_bin(a, OP_DIV, s->for_.to, s->for_.incr, sp),
                             rk_bin(a, OP_DIV, s->for_.from, s->for_.incr, sp), sp), zero, sp);
    *cond = rk_bin(a, OP_AND, c1, c2, sp);
    return rk_call_of(a, "as.integer", &last, 1, sp);
}

/* Are range expressions x and y the same (numbers, variables and calls
 * of them, as rk_expr writes extents: nrow(A), ncol(B))? */
static bool rk_same(const Expr *x, const Expr *y)
{
    if (!x || !y || x->kind != y->kind) return false;
    switch (x->kind) {
    case EX_INT: return x->ival == y->ival;
    case EX_IDENT: return !strcmp(x->ident, y->ident);
    case EX_CALL:
        if (strcmp(x->call.name, y->call.name) || x->call.nargs != y->call.nargs || x->call.ns || y->call.ns)
            return false;
        for (int i = 0; i < x->call.nargs; i++)
            if (x->call.args[i].name || y->call.args[i].name || !rk_same(x->call.args[i].value, y->call.args[i].value))
                return false;
        return true;
    default: return false;
    }
}

/* Several results over the same extents become one where-loop with
 * several results (one loop nest, one kernel: ws[0]->more ...); true
 * when they were chained. */
static bool rk_chain(WhereLoop **ws, int nw)
{
    for (int q = 1; q < nw; q++)
        if (!rk_same(ws[q]->vars[0].to, ws[0]->vars[0].to) || !rk_same(ws[q]->vars[1].to, ws[0]->vars[1].to))
            return false;
    for (int q = 1; q < nw; q++) {
        memcpy(ws[q]->vars, ws[0]->vars, sizeof ws[0]->vars);
        ws[q - 1]->more = ws[q];
    }
    return nw > 1;
}

/* The statements replacing the rank-one loop s: each result = <where>,
 * k = as the loop leaves it, then the temporaries once more for that k
 * (their values after the loop are those of its last iteration). A
 * stepped loop's statements go inside `if (<the loop runs>)`. */
static Stmt **rank1_stmts(Arena *a, const Stmt *s, WhereLoop **ws, int nw, const bool *tmp, int *n)
{
    int nb = s->for_.body.n, m = 0;
    Stmt **v = arena_alloc(a, (size_t)(nw + 1 + nb) * sizeof *v);
    if (!v) return NULL;
    Stmt *kst = NULL;
    bool chained = rk_chain(ws, nw);
    for (int q = 0; q < (chained ? 1 : nw); q++) {
        int nk = 0;
        Stmt **head = lifted_stmts(a, s, ws[q], &nk);   /* R = where; #i, #j, k */
        if (!head) return NULL;
        v[m++] = head[0];
        kst = head[3];
    }
    Expr *cond = NULL;
    if (s->for_.incr && !(kst->assign.value = rk_last(a, s, &cond))) return NULL;
    if (s->for_.incr && !cond) return NULL;
    v[m++] = kst;
    for (int i = 0; i < nb; i++) if (tmp[i]) v[m++] = s->for_.body.stmts[i];
    if (!s->for_.incr) { *n = m; return v; }
    Stmt *st = arena_alloc(a, sizeof *st), **one = arena_alloc(a, sizeof *one);
    if (!st || !one) return NULL;
    memset(st, 0, sizeof *st);
    st->kind = ST_IF;
    st->span = s->span;
    st->if_.cond = cond;
    st->if_.then_b = (Block){v, m};
    one[0] = st;
    *n = 1;
    return one;
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
        WhereLoop *ws[RK_MAXRES];
        bool tmp[RK_MAXTEMPS + RK_MAXRES];
        int nw = rep ? 0 : lift_rank1(a, s, ws, tmp);
        if (nw) rep = rank1_stmts(a, s, ws, nw, tmp, &n);
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
