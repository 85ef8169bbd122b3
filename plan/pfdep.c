/* pfdep.c: dependency analysis of parfor result variables.
 *
 * A parfor body may left-index matrices defined before the loop (its
 * results); the runtime gives each worker a copy and merges the changed
 * cells afterwards (runtime/interp.c). That is correct only when no cell
 * one iteration writes is written or read by another iteration. As in
 * SystemDS (ParForStatementBlock), every index of a result access is
 * reduced to an affine function of the loop variable,
 *
 *     a * i + b (+ s)       a, b integers, s a loop-invariant expression,
 *
 * with scalars assigned earlier in the body substituted and constants of
 * the enclosing program folded in; a range lo:hi gives two of them. Two
 * accesses (one a write) are independent when, in some dimension, the
 * cells of iteration i1 and of iteration i2 != i1 never meet:
 *   - equal coefficients a: the accesses of iterations d apart are the
 *     same intervals shifted by a*step*d, so they meet iff a nonzero
 *     multiple of a*step (|d| < n when n is known) lies between the
 *     intervals' offsets: exact;
 *   - different coefficients: short known ranges (<= ENUM_MAX iterations)
 *     exactly, by enumeration; otherwise the GCD test (single indexes,
 *     known start);
 *   - an index that is none of these (i %% 3, X[i, 1], a variable set in a
 *     branch or an inner loop) may be anything: it proves nothing.
 * Whatever is not proved counts as a dependency (the loop then runs
 * serially, or is refused when the caller says so). */
#include "pfdep.h"
#include "../lang/where.h"

#include <stdlib.h>
#include <string.h>

#define ENUM_MAX 512       /* iterations enumerated exactly (O(n^2) pairs) */
#define MAX_ACC 256        /* accesses of one result considered */

/* a*i + b + sym; ok false: not affine (anything) */
typedef struct Aff {
    bool ok;
    int64_t a, b;
    const Expr *sym;
} Aff;

/* One dimension of an access: all, or the interval [lo, hi] (a single
 * index has lo == hi) */
typedef struct Dim {
    bool all;
    Aff lo, hi;
} Dim;

typedef struct Acc {
    bool write;
    Dim d[2];
} Acc;

/* What is known of the iteration space i = L + k*s, k = 0..n-1. */
typedef struct Iter {
    bool lknown, sknown, nknown;
    int64_t L, s, n;
} Iter;

typedef struct Env {
    const char **name;   /* variables assigned in the body */
    Aff *val;            /* their affine value here (ok false: unknown) */
    int n, cap;
    bool oom;
} Env;

typedef struct Ctx {
    const char *var;     /* the parfor variable */
    const char *res;     /* the result variable collected */
    PfConst konst;
    void *arg;
    Env env;
    NameSet assigned;    /* every variable the body assigns */
    Acc acc[MAX_ACC];
    int nacc;
    bool overflow;       /* more accesses than MAX_ACC: dependent */
} Ctx;

static const Aff NOT_AFF = {.ok = false};

static bool expr_same(const Expr *a, const Expr *b);

static bool dim_same(const IndexDim *a, const IndexDim *b)
{
    return a->all == b->all && expr_same(a->lo, b->lo) && expr_same(a->hi, b->hi);
}

/* Structural equality of expressions (a loop-invariant offset is the same
 * in two indexes only when it is written the same way). */
static bool expr_same(const Expr *a, const Expr *b)
{
    if (!a || !b) return a == b;
    if (a->kind != b->kind) return false;
    switch (a->kind) {
    case EX_INT: return a->ival == b->ival;
    case EX_DOUBLE: return a->dval == b->dval;
    case EX_BOOL: return a->bval == b->bval;
    case EX_STRING: return strcmp(a->sval, b->sval) == 0;
    case EX_IDENT: return strcmp(a->ident, b->ident) == 0;
    case EX_UNARY: return a->unary.op == b->unary.op && expr_same(a->unary.a, b->unary.a);
    case EX_BINARY:
        return a->binary.op == b->binary.op && expr_same(a->binary.a, b->binary.a) &&
               expr_same(a->binary.b, b->binary.b);
    case EX_CALL:
        if (a->call.nargs != b->call.nargs || strcmp(a->call.name, b->call.name) != 0 ||
            (a->call.ns == NULL) != (b->call.ns == NULL) || (a->call.ns && strcmp(a->call.ns, b->call.ns) != 0))
            return false;
        for (int i = 0; i < a->call.nargs; i++) {
            const char *na = a->call.args[i].name, *nb = b->call.args[i].name;
            if ((na == NULL) != (nb == NULL) || (na && strcmp(na, nb) != 0)) return false;
            if (!expr_same(a->call.args[i].value, b->call.args[i].value)) return false;
        }
        return true;
    case EX_INDEX:
        return strcmp(a->index.name, b->index.name) == 0 && a->index.has_col == b->index.has_col &&
               dim_same(&a->index.row, &b->index.row) && dim_same(&a->index.col, &b->index.col);
    case EX_WHERE: return a->where == b->where;
    }
    return false;
}

/* ---- the environment of body-assigned scalars ---- */

static Aff *env_get(Env *e, const char *name)
{
    for (int i = 0; i < e->n; i++)
        if (strcmp(e->name[i], name) == 0) return &e->val[i];
    return NULL;
}

static void env_set(Env *e, const char *name, Aff v)
{
    Aff *p = env_get(e, name);
    if (p) { *p = v; return; }
    if (e->n == e->cap) {
        int nc = e->cap ? 2 * e->cap : 16;
        const char **nn = realloc(e->name, (size_t)nc * sizeof *nn);
        if (nn) e->name = nn;
        Aff *nv = nn ? realloc(e->val, (size_t)nc * sizeof *nv) : NULL;
        if (!nv) { e->oom = true; return; }
        e->val = nv;
        e->cap = nc;
    }
    e->name[e->n] = name;
    e->val[e->n++] = v;
}

/* Every variable block b assigns (targets, loop variables), into s. */
static void assigned_in(const Block *b, NameSet *s)
{
    for (int i = 0; i < b->n; i++) {
        const Stmt *st = b->stmts[i];
        switch (st->kind) {
        case ST_ASSIGN:   /* a left-indexed write keeps the variable's shape */
            if (!st->assign.target.indexed) ns_add(s, st->assign.target.name);
            break;
        case ST_MASSIGN:
            for (int k = 0; k < st->massign.n; k++) ns_add(s, st->massign.targets[k].name);
            break;
        case ST_IF: assigned_in(&st->if_.then_b, s); assigned_in(&st->if_.else_b, s); break;
        case ST_FOR: ns_add(s, st->for_.var); assigned_in(&st->for_.body, s); break;
        case ST_WHILE: assigned_in(&st->while_.body, s); break;
        case ST_EXPR: break;
        }
    }
}

/* Marks every variable block b assigns as unknown (values that change
 * within an inner loop or in one branch). */
static void forget_assigned(Ctx *c, const Block *b)
{
    NameSet s = {0};
    assigned_in(b, &s);
    for (int i = 0; i < s.n; i++) env_set(&c->env, s.v[i], NOT_AFF);
    if (s.oom) c->env.oom = true;
    ns_free(&s);
}

/* ---- affine forms ---- */

static bool is_const(Aff x) { return x.ok && x.a == 0 && !x.sym; }

/* x + k*y with overflow checks; syms must cancel or be on one side */
static Aff aff_add(Aff x, Aff y, int64_t k)
{
    if (!x.ok || !y.ok) return NOT_AFF;
    Aff r = {.ok = true};
    int64_t ya, yb;
    if (__builtin_mul_overflow(y.a, k, &ya) || __builtin_mul_overflow(y.b, k, &yb) ||
        __builtin_add_overflow(x.a, ya, &r.a) || __builtin_add_overflow(x.b, yb, &r.b))
        return NOT_AFF;
    if (x.sym && y.sym) {
        if (k != -1 || !expr_same(x.sym, y.sym)) return NOT_AFF;
        r.sym = NULL;
    } else if (y.sym) {
        if (k != 1) return NOT_AFF;
        r.sym = y.sym;
    } else {
        r.sym = x.sym;
    }
    return r;
}

static Aff aff_scale(Aff x, int64_t k)
{
    if (!x.ok || (x.sym && k != 1)) return NOT_AFF;
    Aff r = {.ok = true, .sym = x.sym};
    if (__builtin_mul_overflow(x.a, k, &r.a) || __builtin_mul_overflow(x.b, k, &r.b)) return NOT_AFF;
    return r;
}

static bool mentions_body_var(const Ctx *c, const Expr *e);

static bool args_mention(const Ctx *c, const Expr *e)
{
    for (int i = 0; i < e->call.nargs; i++)
        if (mentions_body_var(c, e->call.args[i].value)) return true;
    return false;
}

/* Does e mention the loop variable or a variable the body assigns? */
static bool mentions_body_var(const Ctx *c, const Expr *e)
{
    if (!e) return false;
    switch (e->kind) {
    case EX_IDENT: return strcmp(e->ident, c->var) == 0 || ns_has(&c->assigned, e->ident);
    case EX_UNARY: return mentions_body_var(c, e->unary.a);
    case EX_BINARY: return mentions_body_var(c, e->binary.a) || mentions_body_var(c, e->binary.b);
    case EX_CALL: return args_mention(c, e);
    case EX_INDEX: return true;   /* cells the body may write */
    default: return e->kind == EX_WHERE;
    }
}

/* Calls whose value depends on their arguments only, so that a call of
 * loop-invariant arguments is invariant (rand or sample are not). */
static bool pure_size_call(const Expr *e)
{
    static const char *const ok[] = {"nrow", "ncol", "length", "as.integer", "as.double", "floor", "ceil",
                                     "round", "abs", "min", "max"};
    if (e->call.ns) return false;
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (strcmp(e->call.name, ok[i]) == 0) return true;
    return false;
}

static Aff aff_of(Ctx *c, const Expr *e)
{
    if (!e) return NOT_AFF;
    switch (e->kind) {
    case EX_INT: return (Aff){.ok = true, .b = e->ival};
    case EX_DOUBLE:
        if (e->dval == (double)(int64_t)e->dval && e->dval > -9e15 && e->dval < 9e15)
            return (Aff){.ok = true, .b = (int64_t)e->dval};
        return NOT_AFF;
    case EX_BOOL: return (Aff){.ok = true, .b = e->bval};
    case EX_IDENT: {
        if (strcmp(e->ident, c->var) == 0) return (Aff){.ok = true, .a = 1};
        Aff *v = env_get(&c->env, e->ident);
        if (v) return *v;
        if (ns_has(&c->assigned, e->ident)) return NOT_AFF;   /* used before its assignment */
        int64_t k;
        if (c->konst && c->konst(c->arg, e->ident, &k)) return (Aff){.ok = true, .b = k};
        return (Aff){.ok = true, .sym = e};                   /* defined before the loop */
    }
    case EX_UNARY:
        return e->unary.op == OP_NEG ? aff_scale(aff_of(c, e->unary.a), -1) : NOT_AFF;
    case EX_BINARY: {
        Aff x = aff_of(c, e->binary.a), y = aff_of(c, e->binary.b);
        switch (e->binary.op) {
        case OP_PLUS: return aff_add(x, y, 1);
        case OP_MINUS: return aff_add(x, y, -1);
        case OP_MULT:
            if (is_const(x)) return aff_scale(y, x.b);
            if (is_const(y)) return aff_scale(x, y.b);
            return NOT_AFF;
        case OP_INTDIV:
            if (is_const(x) && is_const(y) && y.b != 0) {
                int64_t q = x.b / y.b;
                if ((x.b % y.b != 0) && ((x.b < 0) != (y.b < 0))) q--;   /* floor */
                return (Aff){.ok = true, .b = q};
            }
            break;
        default: break;
        }
        /* loop-invariant otherwise: the same value in every iteration */
        return mentions_body_var(c, e) ? NOT_AFF : (Aff){.ok = true, .sym = e};
    }
    case EX_CALL:
        return pure_size_call(e) && !mentions_body_var(c, e) ? (Aff){.ok = true, .sym = e} : NOT_AFF;
    default: return NOT_AFF;
    }
}

static Dim dim_of(Ctx *c, const IndexDim *d, bool present)
{
    Dim r = {.all = true};
    if (!present || d->all) return r;
    r.lo = aff_of(c, d->lo);
    r.hi = d->hi ? aff_of(c, d->hi) : r.lo;
    r.all = !r.lo.ok || !r.hi.ok;
    return r;
}

/* ---- collecting the accesses of the result variable ---- */

static void add_acc(Ctx *c, bool write, Dim r, Dim col)
{
    if (c->nacc == MAX_ACC) { c->overflow = true; return; }
    c->acc[c->nacc++] = (Acc){.write = write, .d = {r, col}};
}

static void whole(Ctx *c, bool write)
{
    Dim all = {.all = true};
    add_acc(c, write, all, all);
}

static void reads_of(Ctx *c, const Expr *e);

/* nrow(X), ncol(X), length(X): reads no cells */
static bool size_of_var(const Expr *e)
{
    return !e->call.ns && e->call.nargs == 1 && e->call.args[0].value->kind == EX_IDENT &&
           (!strcmp(e->call.name, "nrow") || !strcmp(e->call.name, "ncol") || !strcmp(e->call.name, "length"));
}

static void reads_dim(Ctx *c, const IndexDim *d)
{
    reads_of(c, d->lo);
    reads_of(c, d->hi);
}

/* The reads of the result variable in e. */
static void reads_of(Ctx *c, const Expr *e)
{
    if (!e) return;
    switch (e->kind) {
    case EX_IDENT: if (strcmp(e->ident, c->res) == 0) whole(c, false); break;
    case EX_UNARY: reads_of(c, e->unary.a); break;
    case EX_BINARY: reads_of(c, e->binary.a); reads_of(c, e->binary.b); break;
    case EX_CALL:
        if (size_of_var(e)) break;   /* nrow(R): results keep their shape */
        for (int i = 0; i < e->call.nargs; i++) reads_of(c, e->call.args[i].value);
        break;
    case EX_INDEX:
        if (strcmp(e->index.name, c->res) == 0)
            add_acc(c, false, dim_of(c, &e->index.row, true), dim_of(c, &e->index.col, e->index.has_col));
        reads_dim(c, &e->index.row);
        reads_dim(c, &e->index.col);
        break;
    case EX_WHERE: whole(c, false); break;   /* conservatively: all of it */
    default: break;
    }
}

static void walk(Ctx *c, const Block *b, bool nested);

/* The cells of a where-loop variable's range from:to (its values, or
 * with a step a subset of them): an interval when both ends are affine
 * with the same coefficient and offset, so that its width is a known
 * constant (the order being free, to < from covers to:from); else all. */
static Dim where_range(Ctx *c, const WhereVar *v)
{
    Dim r = {.all = true};
    Aff lo = aff_of(c, v->from), hi = aff_of(c, v->to);
    if (!lo.ok || !hi.ok || lo.a != hi.a || !expr_same(lo.sym, hi.sym)) return r;
    if (hi.b < lo.b) { Aff t = lo; lo = hi; hi = t; }
    return (Dim){.lo = lo, .hi = hi};
}

/* The accesses of a where-loop statement (R = where(...), or several
 * results): each result R[i,j] written over the ranges of i and j (and
 * read there when accumulated: +=, min=, max=); a body that reads R reads
 * all of it; the ranges' expressions are read. */
static void walk_where(Ctx *c, const WhereLoop *w)
{
    for (int v = 0; v < w->nvars; v++) {
        reads_of(c, w->vars[v].from);
        reads_of(c, w->vars[v].to);
        reads_of(c, w->vars[v].step);
    }
    const char *names[WHERE_MAXLEAVES];
    int nl = where_leaves(w, names, WHERE_MAXLEAVES);
    bool body_reads = nl > WHERE_MAXLEAVES;
    for (int k = 0; k < nl && k < WHERE_MAXLEAVES; k++) body_reads |= strcmp(names[k], c->res) == 0;
    if (body_reads) whole(c, false);
    for (const WhereLoop *x = w; x; x = x->more) {
        const LValue *t = &x->target;
        env_set(&c->env, t->name, NOT_AFF);
        if (strcmp(t->name, c->res) != 0) continue;
        int vr = t->indexed ? where_var(w, t->row.lo) : -1, vc = t->has_col ? where_var(w, t->col.lo) : -1;
        Dim all = {.all = true};
        Dim r = vr >= 0 ? where_range(c, &w->vars[vr]) : all;
        Dim col = vc >= 0 ? where_range(c, &w->vars[vc]) : all;
        if (!t->indexed || (t->has_col && vc < 0)) r = col = all;
        if (x->acc != WA_SET) add_acc(c, false, r, col);
        add_acc(c, true, r, col);
    }
}

static void walk_assign(Ctx *c, const Stmt *st, bool nested)
{
    if (st->assign.value && st->assign.value->kind == EX_WHERE) { walk_where(c, st->assign.value->where); return; }
    const LValue *lv = &st->assign.target;
    reads_of(c, st->assign.value);
    if (lv->indexed) {
        reads_dim(c, &lv->row);
        if (lv->has_col) reads_dim(c, &lv->col);
    }
    if (strcmp(lv->name, c->res) == 0) {
        if (!lv->indexed) { whole(c, true); return; }   /* R = ... or R += ...: all of it */
        Dim r = dim_of(c, &lv->row, true), col = dim_of(c, &lv->col, lv->has_col);
        if (st->assign.accum) add_acc(c, false, r, col);   /* R[...] += v reads those cells */
        add_acc(c, true, r, col);
        return;
    }
    /* a scalar assigned once, unconditionally: its affine value from here */
    Aff v = !lv->indexed && !nested && !st->assign.accum ? aff_of(c, st->assign.value) : NOT_AFF;
    env_set(&c->env, lv->name, v);
}

static void walk(Ctx *c, const Block *b, bool nested)
{
    for (int i = 0; i < b->n; i++) {
        const Stmt *st = b->stmts[i];
        switch (st->kind) {
        case ST_ASSIGN: walk_assign(c, st, nested); break;
        case ST_MASSIGN:
            if (st->massign.call && st->massign.call->kind == EX_WHERE) {
                walk_where(c, st->massign.call->where);
                break;
            }
            reads_of(c, st->massign.call);
            for (int k = 0; k < st->massign.n; k++) {
                if (strcmp(st->massign.targets[k].name, c->res) == 0) whole(c, true);
                env_set(&c->env, st->massign.targets[k].name, NOT_AFF);
            }
            break;
        case ST_IF:
            reads_of(c, st->if_.cond);
            forget_assigned(c, &st->if_.then_b);
            forget_assigned(c, &st->if_.else_b);
            walk(c, &st->if_.then_b, true);
            walk(c, &st->if_.else_b, true);
            break;
        case ST_FOR:
            reads_of(c, st->for_.from);
            reads_of(c, st->for_.to);
            reads_of(c, st->for_.incr);
            env_set(&c->env, st->for_.var, NOT_AFF);
            forget_assigned(c, &st->for_.body);
            walk(c, &st->for_.body, true);
            break;
        case ST_WHILE:
            forget_assigned(c, &st->while_.body);
            reads_of(c, st->while_.cond);
            walk(c, &st->while_.body, true);
            break;
        case ST_EXPR: reads_of(c, st->expr.e); break;
        }
    }
}

/* ---- the tests ---- */

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

/* The same invariant offset in all four bounds (or none): it cancels. */
static bool syms_cancel(const Dim *x, const Dim *y)
{
    const Expr *s = x->lo.sym;
    return expr_same(s, x->hi.sym) && expr_same(s, y->lo.sym) && expr_same(s, y->hi.sym);
}

/* f at iteration k (i = L + k*s); false on overflow */
static bool at(Aff f, const Iter *it, int64_t k, int64_t *v)
{
    int64_t i, t;
    return !__builtin_mul_overflow(k, it->s, &i) && !__builtin_add_overflow(it->L, i, &i) &&
           !__builtin_mul_overflow(f.a, i, &t) && !__builtin_add_overflow(t, f.b, v);
}

/* Exact: no interval of x in iteration k1 meets y's in k2 != k1 (an
 * index that overflows proves nothing). */
static bool disjoint_enum(const Dim *x, const Dim *y, const Iter *it)
{
    for (int64_t k1 = 0; k1 < it->n; k1++) {
        int64_t xl, xh;
        if (!at(x->lo, it, k1, &xl) || !at(x->hi, it, k1, &xh)) return false;
        for (int64_t k2 = 0; k2 < it->n; k2++) {
            int64_t yl, yh;
            if (k2 == k1) continue;
            if (!at(y->lo, it, k2, &yl) || !at(y->hi, it, k2, &yh)) return false;
            if (xl <= yh && yl <= xh) return false;
        }
    }
    return true;
}

/* Equal coefficients a: iterations d apart meet iff a*s*d lies in
 * [y.lo.b - x.hi.b, y.hi.b - x.lo.b] for some d != 0 (|d| < n). */
static bool disjoint_shift(const Dim *x, const Dim *y, const Iter *it)
{
    int64_t a = x->lo.a, lo, hi;
    if (__builtin_sub_overflow(y->lo.b, x->hi.b, &lo) || __builtin_sub_overflow(y->hi.b, x->lo.b, &hi) ||
        lo == INT64_MIN)
        return false;
    if (a == 0) return lo > 0 || hi < 0;   /* the same cells in every iteration */
    if (!it->sknown) return false;
    int64_t g;
    if (__builtin_mul_overflow(a, it->s, &g) || g == INT64_MIN) return false;
    if (g < 0) g = -g;
    int64_t mlo = -floor_div(-lo, g), mhi = floor_div(hi, g);   /* ceil(lo/g), floor(hi/g) */
    if (it->nknown) {
        if (mlo < -(it->n - 1)) mlo = -(it->n - 1);
        if (mhi > it->n - 1) mhi = it->n - 1;
    }
    if (mlo > mhi) return true;
    return mlo == 0 && mhi == 0;   /* only d = 0: the same iteration */
}

static int64_t gcd(int64_t a, int64_t b)
{
    if (a < 0) a = -a;
    if (b < 0) b = -b;
    while (b) { int64_t t = a % b; a = b; b = t; }
    return a;
}

/* Single indexes a1*i1 + b1 = a2*i2 + b2 with i = L + k*s: no integer
 * solution when gcd(a1*s, a2*s) does not divide b2 - b1 - (a1-a2)*L. */
static bool disjoint_gcd(const Dim *x, const Dim *y, const Iter *it)
{
    if (x->lo.a != x->hi.a || x->lo.b != x->hi.b || y->lo.a != y->hi.a || y->lo.b != y->hi.b) return false;
    if (!it->lknown || !it->sknown) return false;
    int64_t a1 = x->lo.a, a2 = y->lo.a, s1, s2, da, rhs, db;
    if (__builtin_mul_overflow(a1, it->s, &s1) || __builtin_mul_overflow(a2, it->s, &s2) ||
        s1 == INT64_MIN || s2 == INT64_MIN || __builtin_sub_overflow(a1, a2, &da) ||
        __builtin_mul_overflow(da, it->L, &rhs) || __builtin_sub_overflow(y->lo.b, x->lo.b, &db) ||
        __builtin_sub_overflow(db, rhs, &rhs))
        return false;
    int64_t g = gcd(s1, s2);
    return g != 0 && rhs % g != 0;
}

static bool dim_disjoint(const Dim *x, const Dim *y, const Iter *it)
{
    if (x->all || y->all || !syms_cancel(x, y)) return false;
    /* exact for equal coefficients (the common case), in O(1) */
    if (x->lo.a == x->hi.a && x->lo.a == y->lo.a && y->lo.a == y->hi.a) return disjoint_shift(x, y, it);
    if (it->nknown && it->lknown && it->sknown && it->n <= ENUM_MAX) return disjoint_enum(x, y, it);
    return disjoint_gcd(x, y, it);
}

static bool acc_independent(const Acc *x, const Acc *y, const Iter *it)
{
    return dim_disjoint(&x->d[0], &y->d[0], it) || dim_disjoint(&x->d[1], &y->d[1], it);
}

/* ---- the iteration space ---- */

static Iter iter_of(Ctx *c, const Expr *from, const Expr *to, const Expr *incr)
{
    Iter it = {0};
    Aff f = aff_of(c, from), t = aff_of(c, to);
    Aff s = incr ? aff_of(c, incr) : (Aff){.ok = true, .b = 1};
    it.lknown = is_const(f);
    it.L = f.b;
    if (is_const(s) && s.b != 0) {
        it.sknown = true;
        it.s = s.b;
    }
    /* a:b with a > b counts down; the magnitude of the step is what the
     * shift test needs, its sign what the enumeration needs */
    if (!incr && it.lknown && is_const(t) && t.b < f.b) it.s = -1;
    else if (!incr && !(it.lknown && is_const(t))) it.s = 1;   /* |step| = 1, direction unknown */
    int64_t span;
    if (it.lknown && is_const(t) && it.sknown && !__builtin_sub_overflow(t.b, f.b, &span) &&
        !(span == INT64_MIN && it.s == -1) && span / it.s < INT64_MAX) {
        it.nknown = true;
        it.n = (span != 0 && (span < 0) != (it.s < 0)) ? 0 : span / it.s + 1;
        if (span == 0) it.n = 1;
    }
    return it;
}

bool pf_results_independent(const Block *body, const char *var, const Expr *from, const Expr *to,
                            const Expr *incr, const NameSet *results, PfConst konst, void *arg,
                            const char **who)
{
    Ctx *c = calloc(1, sizeof *c);
    if (!c) { if (results->n) *who = results->v[0]; return results->n == 0; }
    c->var = var;
    c->konst = konst;
    c->arg = arg;
    assigned_in(body, &c->assigned);
    Iter it = iter_of(c, from, to, incr);
    bool ok = !c->assigned.oom;
    for (int r = 0; r < results->n && ok; r++) {
        c->res = results->v[r];
        c->nacc = 0;
        c->overflow = false;
        c->env.n = 0;
        walk(c, body, false);
        if (c->overflow || c->env.oom) ok = false;
        /* every write against every access, itself included */
        for (int x = 0; x < c->nacc && ok; x++) {
            if (!c->acc[x].write) continue;
            for (int y = 0; y < c->nacc && ok; y++)
                if (!(it.nknown && it.n <= 1) && !acc_independent(&c->acc[x], &c->acc[y], &it)) ok = false;
        }
        if (!ok) *who = results->v[r];
    }
    free(c->env.name);
    free(c->env.val);
    ns_free(&c->assigned);
    free(c);
    return ok;
}
