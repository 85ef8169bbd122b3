/* validate.c: semantic checks that need no sizes, run by the loader on
 * every file: calls resolved (by the loader's resolver, load_resolve_call) and their arguments
 * checked against the callee's parameters (user functions) or the params
 * spec of ops.def (builtins); variables used before any assignment;
 * function outputs never assigned (warning); multi-assignment targets.
 *
 * Definedness is "possibly defined in program order": after an if, a
 * variable assigned in either branch counts as defined; inside a loop, a
 * use before the first assignment in the body is only a warning when the
 * body assigns it later (loop-carried), otherwise an error. The constants
 * pi, Inf and NaN are identifiers the script has not assigned; they are
 * turned into double literals here. */
#include "langint.h"
#include "where.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A set of variable names (small: linear search). */
typedef struct Env {
    const char **v;
    int n, cap;
} Env;

typedef struct V {
    Program *prog;
    LFile *file;
    Diag *d;
    LangResolve resolve;   /* the loader's call resolver */
    Env env;
    const Block **loops;   /* enclosing loop bodies, innermost last */
    int nloops, caploops;
    bool oom;
} V;

static bool env_has(const Env *e, const char *name)
{
    for (int i = e->n - 1; i >= 0; i--)
        if (strcmp(e->v[i], name) == 0) return true;
    return false;
}

static void env_add(V *vs, const char *name)
{
    Env *e = &vs->env;
    if (env_has(e, name)) return;
    if (e->n == e->cap) {
        int nc = e->cap ? 2 * e->cap : 32;
        const char **nv = realloc(e->v, (size_t)nc * sizeof(char *));
        if (!nv) {
            vs->oom = true;
            return;
        }
        e->v = nv;
        e->cap = nc;
    }
    e->v[e->n++] = name;
}

/* ---- assignments inside a block (for loop-carried uses) ---- */

static bool assigns(const Block *b, const char *name);

static bool stmt_assigns(const Stmt *s, const char *name)
{
    switch (s->kind) {
    case ST_ASSIGN: return strcmp(s->assign.target.name, name) == 0;
    case ST_MASSIGN:
        for (int i = 0; i < s->massign.n; i++)
            if (strcmp(s->massign.targets[i].name, name) == 0) return true;
        return false;
    case ST_IF: return assigns(&s->if_.then_b, name) || assigns(&s->if_.else_b, name);
    case ST_FOR:
        return strcmp(s->for_.var, name) == 0 || assigns(&s->for_.body, name);
    case ST_WHILE: return assigns(&s->while_.body, name);
    case ST_EXPR: return false;
    }
    return false;
}

static bool assigns(const Block *b, const char *name)
{
    for (int i = 0; i < b->n; i++)
        if (stmt_assigns(b->stmts[i], name)) return true;
    return false;
}

/* ---- variable uses ---- */

/* Checks a read of variable name at span; e (may be NULL) is the EX_IDENT
 * node, turned into a literal for the constants pi, Inf and NaN. */
static void use_var(V *vs, const char *name, Span at, Expr *e)
{
    if (env_has(&vs->env, name)) return;
    if (e && e->kind == EX_IDENT) {
        double c = 0;
        bool is_const = true;
        if (strcmp(name, "pi") == 0) c = M_PI;
        else if (strcmp(name, "Inf") == 0 || strcmp(name, "INF") == 0) c = INFINITY;
        else if (strcmp(name, "NaN") == 0) c = NAN;
        else is_const = false;
        if (is_const) {
            e->kind = EX_DOUBLE;
            e->dval = c;
            return;
        }
    }
    for (int i = vs->nloops - 1; i >= 0; i--) {
        if (assigns(vs->loops[i], name)) {
            diag_warning(vs->d, at, "variable '%s' may be used before it is assigned "
                         "(it is assigned later in the loop)", name);
            env_add(vs, name);
            return;
        }
    }
    diag_error(vs->d, at, "undefined variable '%s'", name);
    env_add(vs, name);  /* report each name once */
}

static void walk_expr(V *vs, Expr *e);

static void walk_dim(V *vs, IndexDim *d)
{
    if (d->all) return;
    walk_expr(vs, d->lo);
    walk_expr(vs, d->hi);
}

/* ---- call arguments ---- */

void spec_parse(const char *params, Spec *sp)
{
    memset(sp, 0, sizeof *sp);
    size_t len = strlen(params);
    if (len >= sizeof sp->buf) len = sizeof sp->buf - 1;
    memcpy(sp->buf, params, len);
    sp->buf[len] = 0;
    char *s = sp->buf;
    while (*s && sp->n < MAX_SPEC) {
        char *start = s;
        char q = 0;
        /* find the end of this item: a comma outside quotes */
        while (*s && (q || *s != ',')) {
            if (q && *s == '\\' && s[1]) s++;
            else if (*s == '"' || *s == '\'') q = q == *s ? 0 : (q ? q : *s);
            s++;
        }
        if (*s) *s++ = 0;
        if (strcmp(start, "...") == 0) {
            sp->variadic = true;
            continue;
        }
        char *eq = strchr(start, '=');
        if (eq) *eq = 0;
        if (!*start) continue;
        sp->name[sp->n] = start;
        sp->has_default[sp->n] = eq != NULL;
        sp->n++;
    }
}

/* Checks a call's arguments against a parameter list (names[i], whether
 * it has a default). variadic: extra positional and unknown named args
 * are accepted. who: how the callee is named in messages. */
static void check_args(V *vs, const Expr *e, int np, const char *const *names,
                       const bool *has_default, bool variadic, const char *who)
{
    bool is_func = e->call.func != NULL;
    bool filled[MAX_SPEC + 256] = { 0 }, by_name[MAX_SPEC + 256] = { 0 };
    bool named_seen = false, too_many = false;
    int pos = 0;
    if (np > (int)(sizeof filled / sizeof filled[0])) return;  /* absurd signature */
    for (int i = 0; i < e->call.nargs; i++) {
        const Arg *a = &e->call.args[i];
        if (a->name) {
            named_seen = true;
            int k = -1;
            for (int j = 0; j < np; j++)
                if (strcmp(names[j], a->name) == 0) k = j;
            if (k < 0) {
                if (!variadic)
                    diag_error(vs->d, a->span, "%s has no parameter named '%s'", who, a->name);
                continue;
            }
            /* f(cv=TRUE, cv=3): SystemDS binds the arguments in order, so
             * the last one is the value (its fit_pipeline test script
             * passes one twice); a positional argument and a named one
             * for the same parameter stay an error */
            if (filled[k] && by_name[k])
                diag_warning(vs->d, a->span, "argument '%s' of %s is given twice; the last value is used", a->name,
                             who);
            else if (filled[k])
                diag_error(vs->d, a->span, "argument '%s' of %s is given twice", a->name, who);
            filled[k] = by_name[k] = true;
        } else {
            if (named_seen && !is_func) {
                diag_error(vs->d, a->span, "positional argument after named arguments "
                           "in the call of %s", who);
                continue;
            }
            /* a function call mixing them (SystemDS's nn scripts do:
             * init(D=C, M=classes, seed)): a warning, and the argument
             * takes the next parameter not given (plan/build.c binds so) */
            if (named_seen)
                diag_warning(vs->d, a->span, "positional argument after named arguments in the call of %s "
                             "(it takes the next parameter not given by name)", who);
            while (named_seen && pos < np && filled[pos]) pos++;
            int k = pos++;
            if (k >= np) {
                if (!variadic && !too_many) {
                    diag_error(vs->d, a->span, "too many arguments in the call of %s "
                               "(it takes %d)", who, np);
                    too_many = true;
                }
                continue;
            }
            filled[k] = true;
        }
    }
    for (int j = 0; j < np; j++)
        if (!filled[j] && !has_default[j])
            diag_error(vs->d, e->span, "missing argument '%s' in the call of %s", names[j], who);
}

static void check_call(V *vs, const Expr *e)
{
    char who[200];
    if (e->call.func) {
        const Func *f = e->call.func;
        snprintf(who, sizeof who, "function '%.150s'", e->call.name);
        int np = f->nin;
        const char **names = malloc((size_t)(np ? np : 1) * sizeof(char *));
        bool *dflt = malloc((size_t)(np ? np : 1) * sizeof(bool));
        if (names && dflt) {
            for (int i = 0; i < np; i++) {
                names[i] = f->in[i].name;
                dflt[i] = f->in[i].deflt != NULL;
            }
            check_args(vs, e, np, names, dflt, false, who);
        } else {
            vs->oom = true;
        }
        free(names);
        free(dflt);
    } else if (e->call.builtin) {
        Spec sp;
        spec_parse(e->call.builtin->params, &sp);
        snprintf(who, sizeof who, "builtin '%.150s'", e->call.name);
        check_args(vs, e, sp.n, sp.name, sp.has_default, sp.variadic, who);
    }
}

/* ---- expressions and statements ---- */

static void walk_expr(V *vs, Expr *e);

/* ---- where-loops (docs/amulet.md) ---- */

/* One index of a where-loop body or target: a loop variable by itself. */
static int where_index(V *vs, const WhereLoop *w, const IndexDim *d, Span at, const char *name)
{
    int v = d->all || d->hi ? -1 : where_var(w, d->lo);
    if (v < 0)
        diag_error(vs->d, d->lo && !d->all ? d->lo->span : at,
                   "an index of '%s' in a where-loop must be one of its loop variables", name);
    return v;
}

/* Checks a where-loop body expression: loop variables only as indices,
 * every index a loop variable, no read of the result (its value would
 * depend on the iteration order), elementwise operators and builtins. */
static void where_body(V *vs, const WhereLoop *w, Expr *e)
{
    if (!e) return;
    switch (e->kind) {
    case EX_INT: case EX_DOUBLE: case EX_BOOL:
        return;
    case EX_STRING:
        diag_error(vs->d, e->span, "a where-loop body computes numbers; strings are not allowed");
        return;
    case EX_IDENT:
        if (where_var(w, e) >= 0)
            diag_error(vs->d, e->span, "loop variable '%s' may appear only as an index in a where-loop body",
                       e->ident);
        else if (where_result(w, e->ident))
            diag_error(vs->d, e->span, "the where-loop body reads its result '%s': the result would depend "
                       "on the iteration order", e->ident);
        else use_var(vs, e->ident, e->span, e);
        return;
    case EX_UNARY:
        where_body(vs, w, e->unary.a);
        return;
    case EX_BINARY:
        if (e->binary.op == OP_MATMUL)
            diag_error(vs->d, e->span, "'%%*%%' in a where-loop body: the body is elementwise over scalars");
        where_body(vs, w, e->binary.a);
        where_body(vs, w, e->binary.b);
        return;
    case EX_INDEX: {
        if (where_result(w, e->index.name)) {
            diag_error(vs->d, e->span, "the where-loop body reads its result '%s': the result would depend "
                       "on the iteration order", e->index.name);
            return;
        }
        use_var(vs, e->index.name, e->span, NULL);
        int a = where_index(vs, w, &e->index.row, e->span, e->index.name);
        int b = e->index.has_col ? where_index(vs, w, &e->index.col, e->span, e->index.name) : -2;
        if (a >= 0 && a == b)
            diag_error(vs->d, e->span, "'%s' is indexed twice by '%s' (a diagonal); write it as a vector",
                       e->index.name, w->vars[a].name);
        return;
    }
    case EX_CALL: {
        if (!vs->resolve(vs->prog, vs->file, e, vs->d)) return;
        const BuiltinInfo *bi = e->call.builtin;
        bool named = false;
        for (int i = 0; i < e->call.nargs; i++) named |= e->call.args[i].name != NULL;
        if (!bi || named || !where_builtin_ok(bi, e->call.nargs)) {
            diag_error(vs->d, e->span, "'%s(...)' cannot be used in a where-loop body (allowed: elementwise "
                       "builtins such as ifelse(c, a, b), min(a, b), max(a, b), abs, sqrt, exp, log, with "
                       "positional arguments)", e->call.name);
            return;
        }
        for (int i = 0; i < e->call.nargs; i++) where_body(vs, w, e->call.args[i].value);
        return;
    }
    case EX_WHERE:
        diag_error(vs->d, e->span, "a where-loop cannot be nested in a where-loop body");
        return;
    }
}

static void check_where_result(V *vs, const WhereLoop *w, WhereLoop *x);

/* Checks a where-loop: ranges, distinct loop variables, a target indexed
 * by distinct loop variables that exists already, an order-independent
 * accumulation, and the body (where_body). */
static void check_where(V *vs, WhereLoop *w)
{
    for (int v = 0; v < w->nvars; v++) {
        walk_expr(vs, w->vars[v].from);
        walk_expr(vs, w->vars[v].to);
        for (int u = 0; u < v; u++)
            if (!strcmp(w->vars[u].name, w->vars[v].name))
                diag_error(vs->d, w->vars[v].span, "loop variable '%s' is declared twice", w->vars[v].name);
    }
    for (WhereLoop *x = w; x; x = x->more) check_where_result(vs, w, x);
    const char *names[1];
    if (where_leaves(w, names, 0) > WHERE_MAXLEAVES)
        diag_error(vs->d, w->span, "a where-loop body may read at most %d variables", WHERE_MAXLEAVES);
    /* the loop variables are visible in the body only */
    int n0 = vs->env.n;
    for (int v = 0; v < w->nvars; v++) env_add(vs, w->vars[v].name);
    for (WhereLoop *x = w; x; x = x->more) where_body(vs, w, x->value);
    vs->env.n = n0;
}

/* One result of where-loop w (x: w or a link of w->more): its target
 * indexed by distinct loop variables, exists, assigned by one statement
 * only, with an order-independent accumulation. */
static void check_where_result(V *vs, const WhereLoop *w, WhereLoop *x)
{
    LValue *t = &x->target;
    for (const WhereLoop *y = w; y != x; y = y->more)
        if (!strcmp(y->target.name, t->name))
            diag_error(vs->d, t->span, "'%s' is the target of two statements of one where-loop", t->name);
    use_var(vs, t->name, t->span, NULL);
    bool inx[WHERE_MAXVARS] = {false};
    int a = where_index(vs, w, &t->row, t->span, t->name);
    int b = t->has_col ? where_index(vs, w, &t->col, t->span, t->name) : -2;
    if (a >= 0) inx[a] = true;
    if (b >= 0) inx[b] = true;
    if (a >= 0 && a == b)
        diag_error(vs->d, t->span, "the target '%s' is indexed twice by '%s'", t->name, w->vars[a].name);
    for (int v = 0; v < w->nvars && x->acc == WA_SET && a >= 0 && b != -1; v++)
        if (!inx[v]) {
            diag_error(vs->d, t->span, "'=' assigns %s[...] once per value of '%s', which does not index it: "
                       "the result would depend on the iteration order (use +=, min= or max=)",
                       t->name, w->vars[v].name);
            break;
        }
}


static void walk_expr(V *vs, Expr *e)
{
    if (!e) return;
    switch (e->kind) {
    case EX_INT: case EX_DOUBLE: case EX_BOOL: case EX_STRING:
        return;
    case EX_IDENT:
        use_var(vs, e->ident, e->span, e);
        return;
    case EX_UNARY:
        walk_expr(vs, e->unary.a);
        return;
    case EX_BINARY:
        walk_expr(vs, e->binary.a);
        walk_expr(vs, e->binary.b);
        return;
    case EX_INDEX:
        use_var(vs, e->index.name, e->span, NULL);
        walk_dim(vs, &e->index.row);
        if (e->index.has_col) walk_dim(vs, &e->index.col);
        return;
    case EX_WHERE:
        check_where(vs, e->where);
        return;
    case EX_CALL: {
        bool resolved = vs->resolve(vs->prog, vs->file, e, vs->d);
        bool is_exists = e->call.builtin && e->call.builtin->id == BI_EXISTS;
        for (int i = 0; i < e->call.nargs; i++) {
            Expr *a = e->call.args[i].value;
            if (is_exists && a && a->kind == EX_IDENT) continue;
            walk_expr(vs, a);
        }
        if (resolved) check_call(vs, e);
        return;
    }
    }
}

static void walk_block(V *vs, Block *b);

/* Checks an assignment target: an indexed or accumulated target must
 * exist already. Does not define it (the caller does, after the value). */
static void walk_target(V *vs, LValue *lv, bool reads)
{
    if (lv->indexed || reads) use_var(vs, lv->name, lv->span, NULL);
    if (lv->indexed) {
        walk_dim(vs, &lv->row);
        if (lv->has_col) walk_dim(vs, &lv->col);
    }
}

static void push_loop(V *vs, const Block *b)
{
    if (vs->nloops == vs->caploops) {
        int nc = vs->caploops ? 2 * vs->caploops : 8;
        const Block **nv = realloc(vs->loops, (size_t)nc * sizeof(Block *));
        if (!nv) {
            vs->oom = true;
            return;
        }
        vs->loops = nv;
        vs->caploops = nc;
    }
    vs->loops[vs->nloops++] = b;
}

static void walk_stmt(V *vs, Stmt *s)
{
    switch (s->kind) {
    case ST_ASSIGN:
        walk_expr(vs, s->assign.value);
        walk_target(vs, &s->assign.target, s->assign.accum);
        env_add(vs, s->assign.target.name);
        break;
    case ST_MASSIGN: {
        Expr *c = s->massign.call;
        walk_expr(vs, c);
        if (c && c->kind == EX_CALL && c->call.func && s->massign.n > c->call.func->nout)
            diag_error(vs->d, s->span, "function '%s' returns %d value%s, but %d are assigned",
                       c->call.name, c->call.func->nout, c->call.func->nout == 1 ? "" : "s",
                       s->massign.n);
        for (int i = 0; i < s->massign.n; i++) walk_target(vs, &s->massign.targets[i], false);
        for (int i = 0; i < s->massign.n; i++) env_add(vs, s->massign.targets[i].name);
        break;
    }
    case ST_IF: {
        walk_expr(vs, s->if_.cond);
        int n0 = vs->env.n;
        walk_block(vs, &s->if_.then_b);
        /* names the then-branch added are not visible in the else-branch */
        int nthen = vs->env.n - n0;
        const char **added = NULL;
        if (nthen > 0) {
            added = malloc((size_t)nthen * sizeof(char *));
            if (added) memcpy(added, vs->env.v + n0, (size_t)nthen * sizeof(char *));
            else vs->oom = true;
        }
        vs->env.n = n0;
        walk_block(vs, &s->if_.else_b);
        for (int i = 0; added && i < nthen; i++) env_add(vs, added[i]);
        free(added);
        break;
    }
    case ST_FOR:
        walk_expr(vs, s->for_.from);
        walk_expr(vs, s->for_.to);
        walk_expr(vs, s->for_.incr);
        for (int i = 0; i < s->for_.nopts; i++) walk_expr(vs, s->for_.opts[i].value);
        env_add(vs, s->for_.var);
        push_loop(vs, &s->for_.body);
        walk_block(vs, &s->for_.body);
        if (vs->nloops) vs->nloops--;
        break;
    case ST_WHILE:
        walk_expr(vs, s->while_.cond);  /* evaluated before the first pass */
        push_loop(vs, &s->while_.body);
        walk_block(vs, &s->while_.body);
        if (vs->nloops) vs->nloops--;
        break;
    case ST_EXPR:
        walk_expr(vs, s->expr.e);
        break;
    }
}

static void walk_block(V *vs, Block *b)
{
    for (int i = 0; i < b->n; i++) walk_stmt(vs, b->stmts[i]);
}

static void validate_func(V *vs, Func *f)
{
    vs->env.n = 0;
    vs->nloops = 0;
    for (int i = 0; i < f->nin; i++) {
        for (int j = 0; j < i; j++)
            if (strcmp(f->in[j].name, f->in[i].name) == 0)
                diag_error(vs->d, f->in[i].span, "parameter '%s' of function '%s' is declared twice",
                           f->in[i].name, f->name);
        walk_expr(vs, f->in[i].deflt);  /* may use earlier parameters */
        env_add(vs, f->in[i].name);
    }
    for (int i = 0; i < f->nout; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(f->out[j].name, f->out[i].name) == 0)
                diag_error(vs->d, f->out[i].span, "output '%s' of function '%s' is declared twice",
                           f->out[i].name, f->name);
    walk_block(vs, &f->body);
    for (int i = 0; i < f->nout && !f->external; i++)
        if (!env_has(&vs->env, f->out[i].name))
            diag_warning(vs->d, f->out[i].span, "output '%s' of function '%s' is never assigned",
                         f->out[i].name, f->name);
}

void validate_file(Program *p, LFile *f, Diag *d, LangResolve resolve)
{
    V vs = { .prog = p, .file = f, .d = d, .resolve = resolve };
    int nerr0 = diag_nerrors(d);
    for (int i = 0; i < f->pf.nfuncs; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(f->pf.funcs[i]->name, f->pf.funcs[j]->name) == 0) {
                diag_error(d, f->pf.funcs[i]->span, "function '%s' is defined twice "
                           "(first at line %d)", f->pf.funcs[i]->name, f->pf.funcs[j]->span.line);
                break;
            }
    /* statements outside functions in a sourced file never run */
    if (f == p->files[0]) {
        for (int i = 0; i < p->opts.npredefined; i++)
            if (p->opts.predefined[i]) env_add(&vs, p->opts.predefined[i]);
        walk_block(&vs, &f->pf.main);
    }
    for (int i = 0; i < f->pf.nfuncs; i++) validate_func(&vs, f->pf.funcs[i]);
    if (vs.oom) {
        Span s = { f->path, 0, 0 };
        diag_error(d, s, "out of memory while checking");
    }
    free(vs.env.v);
    free(vs.loops);
    /* seed 4.1: nested for loops of the user's scripts that compute a
     * where-loop run as one (BRAID_AMULET_LIFT=0 keeps them as loops; the
     * builtin library is left as written) */
    const char *lift = getenv("BRAID_AMULET_LIFT");
    if (diag_nerrors(d) == nerr0 && !f->builtin_lib && !(lift && !strcmp(lift, "0"))) {
        if (f == p->files[0]) where_lift_block(p->arena, &f->pf.main);
        for (int i = 0; i < f->pf.nfuncs; i++) where_lift_block(p->arena, &f->pf.funcs[i]->body);
    }
}
