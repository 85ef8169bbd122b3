/* build.c: from the AST to the runtime program. Statements are split into
 * program blocks at control flow; each basic block becomes one HOP DAG
 * (seed 002, section 2), with sizes propagated where they are known at
 * compile time; instructions are then generated from each DAG. */
#include "build.h"
#include "pfdep.h"

#include "../base/vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/diag.h"
#include "../lang/load.h"
#include "../lang/where.h"
#include "../builtins/builtins.h"
#include "../kernels/apply.h"
#include "../io/io.h"
#include "../dist/dist.h"
#include "../runtime/interp.h"
#include "../runtime/cla_rt.h"
#include "../runtime/distexec.h"

/* ---- compile-time variable information ---- */

typedef struct VInfo {
    const char *name;
    DataType dt;
    ValueType vt;
    int64_t rows, cols;
    int64_t nnz;     /* non-zeros of a matrix, -1 unknown */
    bool nnz_ub;     /* nnz only an upper bound (hop.h) */
    int64_t wrows, wcols;   /* worst-case dimensions (hop.h), -1 unbounded */
    double cbytes;   /* a matrix known compressed at compile time (read
                        from a compressed binary file): its bytes; -1:
                        compressed (maybe) at run time, bytes unknown
                        (compress()); 0: not compressed */
    Value cval;      /* known constant scalar (int/double/bool) or V_NONE */
} VInfo;

/* oom: an entry could not be added for want of memory (sticky, carried
 * by copies and merges; reported when the build ends) */
typedef struct VMap { VInfo *v; int n, cap; bool oom; } VMap;

static VInfo *vm_get(VMap *m, const char *name)
{
    for (int i = 0; i < m->n; i++)
        if (strcmp(m->v[i].name, name) == 0) return &m->v[i];
    return NULL;
}

static void vm_set(VMap *m, const char *name, DataType dt, ValueType vt, int64_t r, int64_t c)
{
    VInfo *vi = vm_get(m, name);
    if (!vi) {
        if (!br_grow((void **)&m->v, &m->cap, m->n + 1, sizeof *m->v)) { m->oom = true; return; }
        vi = &m->v[m->n++];
        vi->name = name;
    }
    vi->dt = dt; vi->vt = vt; vi->rows = r; vi->cols = c;
    vi->nnz = -1;
    vi->nnz_ub = false;
    vi->wrows = r; vi->wcols = c;
    vi->cbytes = 0;
    vi->cval = val_none();
}

static VMap vm_copy(const VMap *m)
{
    VMap c = {.oom = m->oom};
    if (m->n) {
        c.v = malloc((size_t)m->n * sizeof *m->v);
        if (!c.v) { c.oom = true; return c; }
        memcpy(c.v, m->v, (size_t)m->n * sizeof *m->v);
        c.n = c.cap = m->n;
    }
    return c;
}

/* After a branch: keep what both sides agree on. */
static void vm_merge(VMap *into, const VMap *other)
{
    if (other->oom) into->oom = true;
    for (int i = 0; i < other->n; i++) {
        const VInfo *o = &other->v[i];
        VInfo *t = vm_get(into, o->name);
        if (!t) {
            vm_set(into, o->name, o->dt, o->vt, o->rows, o->cols);
            if ((t = vm_get(into, o->name))) { t->nnz = o->nnz; t->nnz_ub = o->nnz_ub; t->wrows = o->wrows; t->wcols = o->wcols; t->cbytes = o->cbytes; }
            continue;
        }
        if (t->dt != o->dt) t->dt = DT_ANY;
        if (t->vt != o->vt) t->vt = VT_UNKNOWN;
        if (t->rows != o->rows) t->rows = -1;
        if (t->cols != o->cols) t->cols = -1;
        if (t->nnz != o->nnz || t->rows < 0 || t->cols < 0) t->nnz = -1;
        t->nnz_ub = t->nnz >= 0 && (t->nnz_ub || o->nnz_ub);
        /* bounds that differ are dropped: after a loop's body a bound
         * may keep growing with each iteration */
        if (t->wrows != o->wrows) t->wrows = t->rows;
        if (t->wcols != o->wcols) t->wcols = t->cols;
        if (t->cbytes != o->cbytes)   /* maybe compressed: -1, or -2 where only auto may compress */
            t->cbytes = t->cbytes == -1 || o->cbytes == -1 || t->cbytes > 0 || o->cbytes > 0 ? -1 : -2;
        if (t->cval.kind != o->cval.kind || val_as_double(&t->cval) != val_as_double(&o->cval))
            t->cval = val_none();
    }
    /* a constant known on only one side is not constant afterwards */
    for (int i = 0; i < into->n; i++) {
        bool found = false;
        for (int k = 0; k < other->n; k++)
            if (strcmp(other->v[k].name, into->v[i].name) == 0) found = true;
        if (!found) into->v[i].cval = val_none();
    }
}

/* ---- context ---- */

typedef struct BCtx {
    RtProgram *prog;
    Diag *diag;
    Func *func;          /* function being compiled, NULL for main */
    VMap vars;
    HopDag *dag;         /* current DAG */
    int nerr;
    int spec_depth;      /* nesting of speculative loop builds */
    /* while a call's default argument is built: the callee and the HOPs
     * of its first npargs parameters, which the default may name */
    const Func *pfunc;
    Hop **pargs;
    int npargs;
    int cond_depth;      /* nesting of if/else branches and loop bodies being built */
} BCtx;

static void err(BCtx *c, Span sp, const char *fmt, const char *a, const char *b)
{
    char msg[512];
    snprintf(msg, sizeof msg, fmt, a ? a : "", b ? b : "");
    diag_error(c->diag, sp, "%s", msg);
    c->nerr++;
}

/* Reports running out of memory while building at sp. */
static void oom(BCtx *c, Span sp)
{
    diag_error(c->diag, sp, "out of memory");
    c->nerr++;
}

static Hop *build_expr(BCtx *c, Expr *e);
static FProg *specialize(BCtx *c, Hop *call);
static FProg *function_build(RtProgram *p, Func *f, FSig *sig, Diag *d);

/* Constant folding during construction (so constants propagate into
 * later statements): hop_fold, the same folding as the static rewrites. */
static Hop *fold(BCtx *c, Hop *h)
{
    if (c->prog->optlevel == 0) return h;
    Hop *r = hop_fold(c->dag, h);
    if (r != h) plan_rw(c->prog)->folded++;
    return r;
}

/* Current value of variable name in the DAG: its binding, or a TREAD. */
static Hop *lookup(BCtx *c, const char *name, Span sp)
{
    HopDag *d = c->dag;
    for (int i = 0; i < c->npargs; i++)
        if (c->pargs[i] && strcmp(c->pfunc->in[i].name, name) == 0) return c->pargs[i];
    for (int i = 0; i < d->nw; i++)
        if (strcmp(d->wnames[i], name) == 0) return d->whops[i];
    for (int i = 0; i < d->n; i++)
        if (d->hops[i]->kind == H_TREAD && !d->hops[i]->flag && strcmp(d->hops[i]->name, name) == 0)
            return d->hops[i];
    VInfo *vi = vm_get(&c->vars, name);
    if (vi && vi->cval.kind != V_NONE && c->prog->optlevel > 0)
        return hop_lit(d, vi->cval, sp);
    Hop *h = hop_new(d, H_TREAD, sp, 0);
    h->name = name;
    if (vi) {
        h->dt = vi->dt; h->vt = vi->vt; h->rows = vi->rows; h->cols = vi->cols; h->nnz = vi->nnz;
        h->nnz_ub = vi->nnz_ub;
        h->wrows = vi->wrows; h->wcols = vi->wcols;
    }
    else { h->dt = DT_ANY; h->vt = VT_UNKNOWN; }
    hop_infer(h);
    if (vi && h->dt == DT_MATRIX) h->cbytes = vi->cbytes;   /* codegen's costs (cost.c) */
    hop_add_read(d, name);
    return h;
}

static void bind(BCtx *c, const char *name, Hop *h)
{
    hop_set_write(c->dag, name, h);
    vm_set(&c->vars, name, h->dt, h->vt, h->dt == DT_MATRIX ? h->rows : -1,
           h->dt == DT_MATRIX ? h->cols : -1);
    VInfo *vi = vm_get(&c->vars, name);
    if (!vi) return;   /* out of memory: c->vars.oom is set */
    if (h->dt == DT_MATRIX) { vi->nnz = h->nnz; vi->nnz_ub = h->nnz_ub; vi->wrows = h->wrows; vi->wcols = h->wcols; vi->cbytes = h->cbytes; }
    if (h->kind == H_LIT && val_is_numeric(&h->lit)) vi->cval = h->lit;
}

static Hop *lit(BCtx *c, Value v, Span sp) { return hop_lit(c->dag, v, sp); }
static Hop *unary(BCtx *c, OpCode op, Hop *a, Span sp) { return hop_unary(c->dag, op, a, sp); }

static bool knownm(const Hop *h) { return h->dt == DT_MATRIX && h->rows >= 0 && h->cols >= 0; }

/* A dimension mismatch of operands with known sizes. At the top level a
 * compile error; inside an if/else branch or a loop body (SystemDS
 * validates those as conditional blocks, where a mismatch is a warning,
 * and its inter-procedural analysis may prove a branch dead) the operator
 * becomes stop(msg), kept as a side effect, so the error is raised only
 * when the statement runs. Returns the HOP to use. */
static Hop *dim_error(BCtx *c, Span sp, const char *msg, Hop *h)
{
    if (c->cond_depth == 0) {
        err(c, sp, "%s%s", msg, "");
        return h;
    }
    diag_warning(c->diag, sp, "%s (an error if the statement runs)", msg);
    Hop *s = hop_new(c->dag, H_BUILTIN, sp, 1);
    s->bi = BI_STOP;
    s->in[0] = lit(c, val_string(msg), sp);
    s->sidefx = true;
    s->dt = DT_MATRIX;
    s->vt = VT_DOUBLE;
    s->rows = s->cols = -1;
    hop_add_root(c->dag, s);
    return s;
}

static Hop *binary(BCtx *c, OpCode op, Hop *a, Hop *b, Span sp)
{
    Hop *h = hop_binary(c->dag, op, a, b, sp);
    if (knownm(a) && knownm(b)) {
        bool ok = (a->rows == b->rows && a->cols == b->cols) ||
                  (b->rows == 1 && b->cols == a->cols) || (b->cols == 1 && b->rows == a->rows) ||
                  (a->rows == 1 && a->cols == b->cols) || (a->cols == 1 && a->rows == b->rows) ||
                  (a->cols == 1 && b->rows == 1) || (a->rows == 1 && a->cols == 1) ||
                  (b->rows == 1 && b->cols == 1);
        if (!ok) {
            char x[64], y[64];
            snprintf(x, sizeof x, "%lldx%lld", (long long)a->rows, (long long)a->cols);
            snprintf(y, sizeof y, "%lldx%lld", (long long)b->rows, (long long)b->cols);
            char m[200];
            snprintf(m, sizeof m, "dimension mismatch in '%s': %s vs %s", op_info[op].name, x, y);
            return dim_error(c, sp, m, h);
        }
    }
    return h;
}

static bool one_cell(const Hop *h) { return knownm(h) && h->rows == 1 && h->cols == 1; }

/* X %*% Y. Inner sizes that are known and differ are an error (SystemDS's
 * parser), except inside an if/else branch where one operand is known to
 * be 1x1: there SystemDS warns and its rewrite simplifyScalarMatrixMult
 * makes the product the scalar product as.scalar(y) * X, which runs. */
static Hop *matmul(BCtx *c, Hop *a, Hop *b, Span sp)
{
    Hop *h = hop_matmul(c->dag, OP_MATMUL, a, b, sp);
    if (knownm(a) && knownm(b) && a->cols != b->rows) {
        char m[200];
        snprintf(m, sizeof m, "dimension mismatch in '%%*%%': %lldx%lld %%*%% %lldx%lld (inner dimensions differ)",
                 (long long)a->rows, (long long)a->cols, (long long)b->rows, (long long)b->cols);
        if (c->cond_depth > 0 && (one_cell(a) || one_cell(b))) {
            diag_warning(c->diag, sp, "%s; the 1x1 operand is used as a scalar", m);
            Hop *s = hop_as_scalar(c->dag, one_cell(a) ? a : b, sp);
            if (!s) { oom(c, sp); return h; }
            return one_cell(a) ? binary(c, OP_MULT, s, b, sp) : binary(c, OP_MULT, a, s, sp);
        }
        return dim_error(c, sp, m, h);
    }
    return h;
}

static Hop *agg(BCtx *c, OpCode op, AggDir dir, Hop *a, Span sp) { return hop_agg(c->dag, op, dir, a, sp); }
static Hop *reorg(BCtx *c, OpCode op, Hop *a, Span sp) { return hop_reorg(c->dag, op, a, sp); }

/* ---- builtin parameter specs (ops.def) ---- */

typedef struct SpecParam { char name[32]; char deflt[64]; bool has_default; } SpecParam;

/* Parses a params spec; returns the number of named params, *variadic set
 * when the spec ends with "...". */
static int spec_parse(const char *spec, SpecParam *out, int max, bool *variadic)
{
    int n = 0;
    *variadic = false;
    const char *p = spec;
    while (*p && n < max) {
        if (strncmp(p, "...", 3) == 0) { *variadic = true; break; }
        SpecParam *sp = &out[n];
        memset(sp, 0, sizeof *sp);
        int k = 0;
        while (*p && *p != ',' && *p != '=' && k < 31) sp->name[k++] = *p++;
        if (*p == '=') {
            p++;
            sp->has_default = true;
            bool inq = false;
            k = 0;
            while (*p && (inq || *p != ',') && k < 63) {
                if (*p == '"') inq = !inq;
                if (*p == '\\' && p[1]) { sp->deflt[k++] = *p++; }
                sp->deflt[k++] = *p++;
            }
        }
        n++;
        if (*p == ',') p++;
    }
    return n;
}

/* A literal from a default text in ops.def; NULL for "NULL". */
static Hop *default_hop(BCtx *c, const char *t, Span sp)
{
    if (strcmp(t, "NULL") == 0) return NULL;
    if (strcmp(t, "TRUE") == 0) return lit(c, val_bool(true), sp);
    if (strcmp(t, "FALSE") == 0) return lit(c, val_bool(false), sp);
    if (t[0] == '"') {
        char buf[64];
        size_t k = 0;
        for (const char *p = t + 1; *p && *p != '"' && k < sizeof buf - 1; p++) {
            if (*p == '\\' && p[1] == 'n') { buf[k++] = '\n'; p++; }
            else buf[k++] = *p;
        }
        buf[k] = 0;
        return lit(c, val_string(buf), sp);
    }
    if (strchr(t, '.') || strchr(t, 'e')) return lit(c, val_double(strtod(t, NULL)), sp);
    return lit(c, val_int(strtoll(t, NULL, 10)), sp);
}

/* Binds the arguments of a builtin call to its parameters. Returns the hop
 * (kind H_BUILTIN) with in[] = named params in order, then variadic args. */
static Hop *bind_builtin(BCtx *c, Expr *e, const BuiltinInfo *bi)
{
    SpecParam ps[32];   /* as lang/validate.c's MAX_SPEC */
    bool variadic;
    int np = spec_parse(bi->params, ps, 32, &variadic);
    Hop *args[32] = {0};
    bool given[32] = {0};
    int nargs = e->call.nargs;
    Hop **var = nargs ? calloc((size_t)nargs, sizeof(Hop *)) : NULL;
    const char **vnames = nargs ? calloc((size_t)nargs, sizeof(char *)) : NULL;
    if (nargs && (!var || !vnames)) {
        free(var);
        free(vnames);
        oom(c, e->span);
        return lit(c, val_double(0), e->span);
    }
    int nvar = 0, pos = 0;
    for (int i = 0; i < nargs; i++) {
        Arg *a = &e->call.args[i];
        Hop *v = build_expr(c, a->value);
        if (a->name) {
            int k = -1;
            for (int j = 0; j < np; j++)
                if (strcmp(ps[j].name, a->name) == 0) k = j;
            if (k < 0 && variadic) { vnames[nvar] = a->name; var[nvar++] = v; continue; }
            if (k < 0) { err(c, a->span, "unknown argument '%s' for builtin '%s'", a->name, bi->name); continue; }
            args[k] = v;
            given[k] = true;
        } else {
            while (pos < np && given[pos]) pos++;
            if (pos < np) { args[pos] = v; given[pos] = true; pos++; }
            else if (variadic) var[nvar++] = v;
            else err(c, a->span, "too many arguments for builtin '%s'%s", bi->name, "");
        }
    }
    for (int j = 0; j < np; j++)
        if (!given[j]) {
            if (ps[j].has_default) args[j] = default_hop(c, ps[j].deflt, e->span);
            else err(c, e->span, "missing argument '%s' for builtin '%s'", ps[j].name, bi->name);
        }
    Hop *h = hop_new(c->dag, H_BUILTIN, e->span, np + nvar);
    h->bi = bi->id;
    h->nvar = nvar;
    for (int j = 0; j < np; j++) h->in[j] = args[j];
    bool anynames = false;
    for (int j = 0; j < nvar; j++) { h->in[np + j] = var[j]; if (vnames[j]) anynames = true; }
    if (anynames) {
        h->anames = arena_alloc(c->dag->arena, (size_t)nvar * sizeof(char *));
        for (int j = 0; j < nvar; j++) h->anames[j] = vnames[j];
    }
    free(var);
    free(vnames);
    h->dt = DT_ANY;
    return h;
}

/* exists(X) / exists("X"): TRUE if X is written earlier in this block or
 * bound to a constant, else a read of X flagged optional (flag 1: an
 * undefined variable reads as nothing instead of failing). */
static Hop *build_exists(BCtx *c, const char *name, Span sp)
{
    HopDag *d = c->dag;
    VInfo *vi = vm_get(&c->vars, name);
    bool defined = vi && vi->cval.kind != V_NONE;
    for (int i = 0; i < d->nw && !defined; i++) defined = strcmp(d->wnames[i], name) == 0;
    Hop *h = hop_new(d, H_BUILTIN, sp, 1);
    h->bi = BI_EXISTS;
    if (defined) {
        h->in[0] = lit(c, val_bool(true), sp);
    } else {
        Hop *r = hop_new(d, H_TREAD, sp, 0);
        r->name = name;
        r->flag = 1;
        r->dt = DT_ANY;
        r->vt = VT_UNKNOWN;
        hop_infer(r);
        hop_add_read(d, name);
        h->in[0] = r;
    }
    h->dt = DT_SCALAR;
    h->vt = VT_BOOL;
    hop_infer(h);
    return h;
}

/* Arguments of a builtin call: the i-th positional argument's hop. */
static Hop *arg_pos(BCtx *c, Expr *e, int i)
{
    int k = 0;
    for (int j = 0; j < e->call.nargs; j++)
        if (!e->call.args[j].name) { if (k == i) return build_expr(c, e->call.args[j].value); k++; }
    return NULL;
}

static int npos(const Expr *e)
{
    int k = 0;
    for (int j = 0; j < e->call.nargs; j++) k += !e->call.args[j].name;
    return k;
}

/* The operator HOP of a builtin call (ops.def's lowers column: abs ->
 * unary abs, rowSums -> row aggregate sum, t -> transpose, ...) when the
 * call has as many arguments as the operator has operands, positional
 * when more than one; NULL otherwise. */
static Hop *lower_to_op(BCtx *c, Expr *e, const BuiltinInfo *bi)
{
    int n = e->call.nargs;
    if (bi->op == OP__COUNT || n != op_info[bi->op].arity || (n > 1 && npos(e) != n)) return NULL;
    OpKind k = op_info[bi->op].kind;
    if (k != OK_UNARY && k != OK_BINARY && k != OK_TERNARY && k != OK_AGG && k != OK_REORG) return NULL;
    Hop *x[3];
    for (int i = 0; i < n; i++) x[i] = build_expr(c, e->call.args[i].value);
    if (k == OK_UNARY) return unary(c, bi->op, x[0], e->span);
    if (k == OK_BINARY) return binary(c, bi->op, x[0], x[1], e->span);
    if (k == OK_AGG) return agg(c, bi->op, bi->dir, x[0], e->span);
    if (k == OK_REORG) return reorg(c, bi->op, x[0], e->span);
    Hop *h = hop_new(c->dag, H_TERNARY, e->span, 3);
    h->op = bi->op;
    for (int i = 0; i < 3; i++) h->in[i] = x[i];
    hop_infer(h);
    return h;
}

/* The builtins whose lowering depends on their arguments: log(X) vs
 * log(X, b), ppred's comparison, min(X) vs min(X, Y, ...), the weighted
 * mean, exists. NULL for the
 * others. */
static Hop *lower_special(BCtx *c, Expr *e, const BuiltinInfo *bi)
{
    Span sp = e->span;
    int n = e->call.nargs;
    bool allpos = npos(e) == n;
    if (bi->id == BI_LOG && allpos && (n == 1 || n == 2)) {
        Hop *a = arg_pos(c, e, 0);
        if (n == 1) return unary(c, OP_LOG, a, sp);
        return binary(c, OP_LOGB, a, arg_pos(c, e, 1), sp);
    }
    /* old SystemML ppred(X, Y, ">"): the comparison operator itself */
    if (bi->id == BI_PPRED && n == 3 && allpos && e->call.args[2].value->kind == EX_STRING) {
        const char *s = e->call.args[2].value->sval;
        OpCode cmp = ops_cmp_by_name(s);
        if (cmp != OP__COUNT) return binary(c, cmp, arg_pos(c, e, 0), arg_pos(c, e, 1), sp);
        err(c, e->call.args[2].value->span, "ppred: unknown comparison '%s' (use one of > >= < <= == !=)", s, NULL);
    }
    if ((bi->id == BI_MIN || bi->id == BI_MAX || bi->id == BI_PMIN || bi->id == BI_PMAX) && allpos && n >= 1) {
        bool isMin = bi->id == BI_MIN || bi->id == BI_PMIN;
        if (n == 1) return agg(c, isMin ? OP_AMIN : OP_AMAX, DIR_FULL, arg_pos(c, e, 0), sp);
        Hop *acc = arg_pos(c, e, 0);
        for (int i = 1; i < n; i++) acc = binary(c, isMin ? OP_MIN : OP_MAX, acc, arg_pos(c, e, i), sp);
        return acc;
    }
    /* weighted mean(X, W) (SystemDS: central moment of order 0) = sum(X * W) / sum(W) */
    if (bi->id == BI_MEAN && n == 2) {
        Hop *h = bind_builtin(c, e, bi);
        Hop *xw = agg(c, OP_SUM, DIR_FULL, binary(c, OP_MULT, h->in[0], h->in[1], sp), sp);
        return binary(c, OP_DIV, xw, agg(c, OP_SUM, DIR_FULL, h->in[1], sp), sp);
    }
    if (bi->id == BI_EXISTS && n == 1 && !e->call.args[0].name &&
        (e->call.args[0].value->kind == EX_IDENT || e->call.args[0].value->kind == EX_STRING)) {
        Expr *a = e->call.args[0].value;
        return build_exists(c, a->kind == EX_IDENT ? a->ident : a->sval, sp);
    }
    return NULL;
}

/* Type and outputs of a generic builtin HOP: ops.def's result column,
 * then the builtins whose result depends on their arguments. */
static void builtin_result(Hop *h, const BuiltinInfo *bi)
{
    h->dt = bi->dt;
    h->vt = bi->vt;
    h->nouts = bi->nouts;
    h->sidefx = bi->sidefx;
    switch (bi->id) {
    case BI_QUANTILE:
        h->dt = (h->in[1] && h->in[1]->dt == DT_SCALAR) ? DT_SCALAR : DT_ANY;
        h->vt = VT_DOUBLE;
        break;
    case BI_MAP:   /* a frame, or a scalar for a scalar target (runtime/framemap.c) */
        if (h->in[0] && h->in[0]->dt == DT_SCALAR) { h->dt = DT_SCALAR; h->vt = VT_UNKNOWN; }
        else { h->dt = DT_FRAME; h->vt = VT_STRING; }
        break;
    case BI_COMPRESS: case BI_DECOMPRESS:
        if (h->in[0]) { h->dt = h->in[0]->dt; h->vt = h->in[0]->vt; }
        /* compressed at run time, its bytes unknown until then: the
         * blocks reading it are recompiled with the value at hand
         * (rw_needs_recompile), so their costs see the compressed bytes */
        if (bi->id == BI_COMPRESS && h->dt == DT_MATRIX) h->cbytes = -1;
        break;
    case BI_QCOMPRESS:
        if (h->dt == DT_MATRIX) h->cbytes = -1;
        break;
    case BI_CDAPPROX:
    case BI_COUNTDISTINCT:   /* dir "rc" (default): int scalar; "r", "c": matrix */
        if (h->in[1] && h->in[1]->kind == H_LIT && h->in[1]->lit.kind == V_STRING) {
            bool rc = !strcasecmp(h->in[1]->lit.s->s, "rc");
            h->dt = rc ? DT_SCALAR : DT_MATRIX;
            h->vt = rc ? VT_INT : VT_DOUBLE;
        }
        break;
    default: break;
    }
    /* frames: cbind/rbind of frames, read(data_type="frame"), as.scalar of a frame cell */
    for (int i = h->nin - h->nvar; (bi->id == BI_CBIND || bi->id == BI_RBIND) && i < h->nin; i++)
        if (h->in[i]->dt == DT_FRAME) { h->dt = DT_FRAME; h->vt = VT_STRING; }
    if (bi->id == BI_READ && h->in[9] && h->in[9]->kind == H_LIT && h->in[9]->lit.kind == V_STRING &&
        !strcmp(h->in[9]->lit.s->s, "frame")) { h->dt = DT_FRAME; h->vt = VT_STRING; }
    if (bi->id == BI_ASSCALAR && h->in[0] && h->in[0]->dt == DT_FRAME) h->vt = VT_UNKNOWN;
    if ((bi->id == BI_RMEMPTY || bi->id == BI_REPLACE) && h->in[0] && h->in[0]->dt == DT_FRAME) {
        h->dt = DT_FRAME;
        h->vt = VT_STRING;
    }
    if (bi->id == BI_CBIND && h->nvar >= 2) {   /* append("a", "b"): a string */
        bool scalars = true;
        for (int i = h->nin - h->nvar; i < h->nin && scalars; i++) scalars = h->in[i]->dt == DT_SCALAR;
        if (scalars) { h->dt = DT_SCALAR; h->vt = VT_STRING; }
        if (h->nvar == 2 && h->in[h->nin - 2]->dt == DT_LIST) h->dt = DT_LIST;   /* append(L, x) */
    }
}

/* ---- sizes of persistent reads (seed 002, section 3.1) ---- */

/* The path of a write() call statement: its literal, "" when the path is
 * an expression, NULL when s is not a write. */
static const char *write_path(const Stmt *s)
{
    if (s->kind != ST_EXPR || s->expr.e->kind != EX_CALL) return NULL;
    const Expr *e = s->expr.e;
    if (!e->call.builtin || e->call.builtin->id != BI_WRITE) return NULL;
    const Expr *f = NULL;
    for (int i = 0, pos = 0; i < e->call.nargs; i++) {
        const Arg *a = &e->call.args[i];
        if (a->name ? strcmp(a->name, "file") == 0 : pos++ == 1) f = a->value;
    }
    return f && f->kind == EX_STRING ? f->sval : "";
}

static void scan_writes(PlanState *ps, const Block *b)
{
    for (int i = 0; i < b->n; i++) {
        const Stmt *s = b->stmts[i];
        const char *w = write_path(s);
        if (w && !*w) ps->writes_unknown = true;
        else if (w) ns_add(&ps->written, w);
        switch (s->kind) {
        case ST_IF: scan_writes(ps, &s->if_.then_b); scan_writes(ps, &s->if_.else_b); break;
        case ST_FOR: scan_writes(ps, &s->for_.body); break;
        case ST_WHILE: scan_writes(ps, &s->while_.body); break;
        default: break;
        }
    }
}

/* May the .mtd of path be read at compile time? Not if the program
 * itself may write the file before reading it (then the .mtd found now
 * is stale); every write in the main script and in user functions is
 * looked at once. The read instruction checks the sizes it compiled
 * with (interp.c), so a file changed by someone else between compile and
 * run is an error, never a wrong result. */
static bool mtd_trusted(BCtx *c, const char *path)
{
    PlanState *ps = c->prog->cstate;
    if (!ps->writes_scanned) {
        ps->writes_scanned = true;
        scan_writes(ps, lang_main(c->prog->ast));
        for (int i = 0; i < lang_nfuncs(c->prog->ast); i++) {
            const Func *f = lang_func(c->prog->ast, i);
            if (!f->builtin_lib) scan_writes(ps, &f->body);
        }
    }
    return !ps->writes_unknown && !ps->written.oom && !ns_has(&ps->written, path);
}

/* read(path) of a matrix whose .mtd gives its size: known rows, cols
 * and non-zeros from compile time on; a compressed block in braid's
 * binary format (the .mtd's compressed_bytes) is read compressed, and
 * codegen's costs see its bytes from the first compilation on. */
static void mtd_sizes(BCtx *c, Hop *h)
{
    Hop *f = h->in[0];
    if (c->prog->optlevel == 0 || !f || f->kind != H_LIT || f->lit.kind != V_STRING || h->dt == DT_FRAME)
        return;
    for (int i = 9; i < h->nin && i <= 10; i++)
        if (h->in[i]) return;   /* data_type / value_type given: as the runtime decides */
    const char *path = f->lit.s->s;
    IoMeta m;
    BrErr e = {0};
    bool found = false;
    io_meta_init(&m);
    if (!mtd_trusted(c, path) || io_read_mtd(path, &m, &found, &e) || !found) return;
    if (m.data_type[0] && strcmp(m.data_type, "matrix") != 0) return;
    if (m.rows < 0 || m.cols < 0) return;
    h->dt = DT_MATRIX;
    h->vt = VT_DOUBLE;
    h->rows = m.rows;
    h->cols = m.cols;
    h->nnz = m.nnz >= 0 && (double)m.nnz <= (double)m.rows * (double)m.cols ? m.nnz : -1;
    hop_infer(h);   /* memory estimates from the sizes */
    if (m.cbytes > 0 && !strcmp(m.format, "braid-binary")) {
        h->cbytes = (double)m.cbytes;
        hop_infer(h);   /* the compressed bytes decide its memory */
    }
}

/* The options of read h as IoReadOpts, when every one given is a
 * literal (rt_read_opts_of on constants); naStrings and data_type are
 * not taken, nor negative sizes (false). */
static bool read_lit_opts(const Hop *h, IoReadOpts *o)
{
    const Value *a[RT_READ_NARGS] = {0};
    for (int i = 1; i < h->nin && i < RT_READ_NARGS; i++) {
        const Hop *x = h->in[i];
        if (!x) continue;
        if (x->kind != H_LIT || i == 8 || i == 9 ||
            ((i == 2 || i == 3) && val_is_numeric(&x->lit) && val_as_double(&x->lit) < 0))
            return false;
        a[i] = &x->lit;
    }
    return rt_read_opts_of(a, o, NULL, NULL);
}

/* Under sysds.compressed.linalg=true the run time compresses what read()
 * gives (runtime/cla_rt.c, cla_rt_after): a matrix read is marked
 * compressed at run time, as compress() is (bytes unknown until then), so
 * the blocks reading it are recompiled with the compressed value. */
static void cla_read_mark(BCtx *c, Hop *h)
{
    if (h->dt != DT_MATRIX || h->cbytes != 0) return;
    if (h->rows >= 0 && h->rows < 2) return;   /* (not compressed) */
    /* under auto, a read whose matrix surely exceeds the local budget is
     * compressed by the run time when that makes it fit (cla_rt_after;
     * docs/cla.md "Larger than the budget"); under mpirun it stays
     * distributed */
    bool over = c->prog->cla == RT_CLA_AUTO && !dist_active() && br_exec_mode() != BR_EXEC_DIST &&
                h->memlb > br_mem_budget();
    if (c->prog->cla != RT_CLA_ON && !over) return;
    /* the compressed bytes estimated from a sample of the file (docs/cla.md
     * "Estimated at compile time"), where its sizes are known */
    IoReadOpts ro;
    ClaFileEst est;
    const Hop *f = h->in[0];
    bool have = c->prog->optlevel > 0 && knownm(h) && f && f->kind == H_LIT && f->lit.kind == V_STRING &&
                mtd_trusted(c, f->lit.s->s) && read_lit_opts(h, &ro) &&
                cla_rt_est_file(f->lit.s->s, &ro, c->prog->cla == RT_CLA_ON, &est);
    /* auto: a read the estimate says will not compress (under compress()'s
     * ratio, 1.1) or will not fit even so (its lower bound past the
     * budget) stays as it is: its uncompressed size decides */
    if (over && have &&
        (est.bytes * 1.1 > est.raw || est.bytes / HOP_CEST_FACTOR > br_mem_budget()))
        return;
    h->cbytes = -1;
    if (have) {
        h->cest = est.bytes;
        h->cgroups = est.groups;
    }
    hop_infer(h);   /* the memory estimates of a compressed read */
}

/* Under true/auto the run time compresses, at a loop's entry, the
 * matrices the loop reads and does not assign (cla_rt_loop_entry; auto
 * when it pays): every matrix variable not assigned in the loop is
 * marked maybe compressed from the loop on (the mark matters only where
 * a block reads it: that block is recompiled with the value at hand).
 * Under true always (-1); under auto (-2) only when the value it reads
 * is compressed (Code.cla_maybe): where auto declines, as for most
 * loops, the blocks keep their compiled plans. */
static void cla_loop_marks(BCtx *c, const NameSet *as, const NameSet *ix)
{
    if (c->prog->cla != RT_CLA_ON && c->prog->cla != RT_CLA_AUTO) return;
    for (int i = 0; i < c->vars.n; i++) {
        VInfo *vi = &c->vars.v[i];
        if (vi->dt != DT_MATRIX || vi->cbytes != 0 || (vi->rows >= 0 && vi->rows < 2)) continue;
        if (ns_has(as, vi->name) || ns_has(ix, vi->name)) continue;
        vi->cbytes = c->prog->cla == RT_CLA_ON ? -1 : -2;
    }
}

/* A builtin call: the operator it lowers to, else a generic builtin HOP
 * over its bound arguments. */
static Hop *build_builtin(BCtx *c, Expr *e)
{
    const BuiltinInfo *bi = e->call.builtin;
    Hop *h = lower_special(c, e, bi);
    if (!h) h = lower_to_op(c, e, bi);
    if (h) return h;
    h = bind_builtin(c, e, bi);
    if (!h || h->kind != H_BUILTIN) return h;   /* out of memory (reported) */
    builtin_result(h, bi);
    hop_infer(h);
    if (bi->id == BI_READ) mtd_sizes(c, h);
    if (bi->id == BI_READ) cla_read_mark(c, h);
    return fold(c, h);
}

/* Binds call arguments to a user function's parameters. */
/* As SystemDS, a scalar argument takes its parameter's declared value
 * type (Double x given 3 sees 3.0, Integer k given 2.0 sees 2): a cast
 * unless the argument already has that type. */
static Hop *convert_arg(BCtx *c, Hop *v, const Param *p)
{
    BuiltinId b;
    if (p->dt != DT_SCALAR || !v || (v->dt != DT_SCALAR && v->dt != DT_ANY)) return v;
    switch (p->vt) {
    case VT_DOUBLE: b = BI_ASDOUBLE; break;
    case VT_INT: b = BI_ASINTEGER; break;
    case VT_BOOL: b = BI_ASLOGICAL; break;
    default: return v;
    }
    if (v->dt == DT_SCALAR && (v->vt == p->vt || v->vt == VT_STRING)) return v;
    if (v->kind == H_LIT && val_is_numeric(&v->lit)) {
        double d = val_as_double(&v->lit);
        Value cv = p->vt == VT_DOUBLE ? val_double(d) : p->vt == VT_INT ? val_int(ops_dml_long(d)) : val_bool(d != 0);
        return lit(c, cv, v->span);
    }
    Hop *h = hop_new(c->dag, H_BUILTIN, v->span, 1);
    h->bi = b;
    h->name = INSTR_PARAM_CAST;
    h->in[0] = v;
    h->dt = DT_SCALAR;
    h->vt = p->vt;
    hop_infer(h);
    return h;
}

static Hop *build_fcall(BCtx *c, Expr *e)
{
    Func *f = e->call.func;
    Hop *h = hop_new(c->dag, H_FCALL, e->span, f->nin);
    h->func = f;
    h->nouts = f->nout;
    h->sidefx = true;
    h->dt = DT_LIST;
    bool *given = calloc((size_t)f->nin + 1, 1);
    if (!given) {
        oom(c, e->span);
        return h;
    }
    int pos = 0;
    for (int i = 0; i < e->call.nargs; i++) {
        Arg *a = &e->call.args[i];
        Hop *v = build_expr(c, a->value);
        int k = -1;
        if (a->name) {
            for (int j = 0; j < f->nin; j++)
                if (strcmp(f->in[j].name, a->name) == 0) k = j;
            if (k < 0) { err(c, a->span, "unknown argument '%s' of function '%s'", a->name, f->name); continue; }
        } else {
            while (pos < f->nin && given[pos]) pos++;
            if (pos >= f->nin) { err(c, a->span, "too many arguments for function '%s'%s", f->name, ""); continue; }
            k = pos++;
        }
        h->in[k] = convert_arg(c, v, &f->in[k]);
        given[k] = true;
    }
    for (int j = 0; j < f->nin; j++)
        if (!given[j]) {
            if (f->in[j].deflt) {
                /* a default may use the earlier parameters (K = ncol(A)):
                 * their names stand for this call's arguments */
                const Func *sf = c->pfunc;
                Hop **sa = c->pargs;
                int sn = c->npargs;
                c->pfunc = f;
                c->pargs = h->in;
                c->npargs = j;
                Hop *dv = build_expr(c, f->in[j].deflt);
                c->pfunc = sf;
                c->pargs = sa;
                c->npargs = sn;
                h->in[j] = convert_arg(c, dv, &f->in[j]);
            }
            else err(c, e->span, "missing argument '%s' of function '%s'", f->in[j].name, f->name);
        }
    free(given);
    h->spec = specialize(c, h);
    return h;
}

/* ---- inter-procedural analysis (seed 002, section 3.1) ----
 *
 * A call whose arguments have sizes known at compile time, or are
 * literal numbers, gets the callee compiled for exactly those (a
 * specialization: sizes and constants propagate into the body, so its
 * blocks need no dynamic recompilation and branches on them are
 * removed), and the sizes of the callee's outputs known at the end of its
 * body flow back into the caller. One specialization serves every call
 * with the same signature; a function gets at most MAX_SPECS of them,
 * later signatures use the generic version. At run time the call checks
 * that its arguments match the signature (interp.c) and uses the
 * generic version otherwise. */
#define MAX_SPECS 8

/* What the call knows of argument a: true if anything. */
static bool sig_of(const Hop *a, const Param *pa, FSig *g)
{
    g->rows = g->cols = -1;
    g->v = val_none();
    if (!a) return false;
    if (pa->dt == DT_MATRIX && a->dt == DT_MATRIX && a->rows >= 0 && a->cols >= 0) {
        g->rows = a->rows;
        g->cols = a->cols;
        return true;
    }
    if (pa->dt == DT_SCALAR && a->kind == H_LIT && val_is_numeric(&a->lit)) {
        g->v = a->lit;
        return true;
    }
    return false;
}

static bool sig_equal(const FSig *a, const FSig *b, int n)
{
    for (int i = 0; i < n; i++) {
        const Value *x = &a[i].v, *y = &b[i].v;
        if (a[i].rows != b[i].rows || a[i].cols != b[i].cols || x->kind != y->kind) return false;
        if ((x->kind == V_INT && x->i != y->i) || (x->kind == V_BOOL && x->b != y->b) ||
            (x->kind == V_DOUBLE && memcmp(&x->d, &y->d, sizeof x->d) != 0))
            return false;
    }
    return true;
}

/* The specialization of call's callee for its arguments (NULL: none, use
 * the generic version). Errors while building it are not the user's
 * (the function may never be called so): it is then dropped, and the
 * generic version reports them if it runs. */
static FProg *specialize(BCtx *c, Hop *call)
{
    return plan_specialize(c->prog, call, c->diag, true);
}

/* Finds or builds (without the quota: another process built it) the
 * specialization of f for sig (copied). */
FProg *plan_function_sig(RtProgram *p, Func *f, const FSig *sig, Diag *d)
{
    pthread_mutex_lock(&p->lock);
    FProg *fp = NULL;
    for (int i = 0; i < p->nfuncs && !fp; i++)
        if (p->funcs[i]->func == f && p->funcs[i]->sig && sig_equal(p->funcs[i]->sig, sig, f->nin)) fp = p->funcs[i];
    if (!fp && p->fetch) {   /* a worker's shell: from rank 0 */
        pthread_mutex_unlock(&p->lock);
        return p->fetch(p, f, sig, d);
    }
    FSig *own = fp ? NULL : calloc((size_t)f->nin, sizeof *own);
    if (own) {
        for (int k = 0; k < f->nin; k++) own[k] = (FSig){sig[k].rows, sig[k].cols, val_retain(sig[k].v)};
        fp = function_build(p, f, own, d);
        if (!fp) {
            for (int k = 0; k < f->nin; k++) val_release(&own[k].v);
            free(own);
        }
    }
    pthread_mutex_unlock(&p->lock);
    return fp && fp->compiled ? fp : NULL;
}

FProg *plan_specialize(RtProgram *p, Hop *call, Diag *diag, bool values)
{
    Func *f = call->func;
    if (p->optlevel == 0 || f->external || f->nin == 0) return NULL;
    FSig *sig = calloc((size_t)f->nin, sizeof *sig);
    if (!sig) return NULL;
    bool any = false;
    for (int k = 0; k < f->nin; k++) {
        sig_of(call->in[k], &f->in[k], &sig[k]);
        if (!values) sig[k].v = val_none();
        any |= sig[k].rows >= 0 || sig[k].v.kind != V_NONE;
    }
    FProg *fp = NULL;
    int nspec = 0;
    pthread_mutex_lock(&p->lock);
    for (int i = 0; i < p->nfuncs && any && !fp; i++) {
        FProg *q = p->funcs[i];
        if (q->func != f || !q->sig) continue;
        nspec++;
        if (sig_equal(q->sig, sig, f->nin)) fp = q;
    }
    if (fp || !any || nspec >= MAX_SPECS) {
        free(sig);
    } else if (p->fetch) {
        /* a worker's shell (a remote parfor's recompiled DAG): the
         * specialization from rank 0, as plan_function_sig asks for it,
         * so the worker compiles nothing; NULL (not sent): the generic
         * version, asked for in turn where the call runs */
        pthread_mutex_unlock(&p->lock);
        fp = p->fetch(p, f, sig, diag);
        free(sig);
        return fp && fp->compiled ? fp : NULL;
    } else {
        Diag *scratch = diag_new();
        fp = scratch ? function_build(p, f, sig, scratch) : NULL;
        if (fp && fp->compiled) diag_add_warnings(diag, scratch);
        if (!fp) free(sig);
        diag_free(scratch);
    }
    pthread_mutex_unlock(&p->lock);
    return fp && fp->compiled ? fp : NULL;
}

/* A literal number of hop h, if it is one. */
static bool lit_number(const Hop *h, double *v)
{
    if (!h || h->kind != H_LIT || !val_is_numeric(&h->lit)) return false;
    *v = val_as_double(&h->lit);
    return true;
}

/* Sizes of the two outputs of the fft-like builtins and rowClassMeet
 * (kernels/fft.h) from known input sizes and literal stft arguments. */
static void signal_out_size(const Hop *call, Hop *o)
{
    const Hop *a = call->nin > 0 ? call->in[0] : NULL, *b = call->nin > 1 ? call->in[1] : NULL;
    if (!a || a->rows < 0 || a->cols < 0) return;
    double w, v;
    switch (call->bi) {
    case BI_FFT: case BI_IFFT: case BI_FFT_LIN: case BI_IFFT_LIN:
        o->rows = a->rows; o->cols = a->cols;
        break;
    case BI_RCM:
        if (b && b->rows >= 0 && b->cols >= 0) {
            o->rows = a->rows > b->rows ? a->rows : b->rows;
            o->cols = a->cols > b->cols ? a->cols : b->cols;
        }
        break;
    case BI_STFT: {   /* stft(re, w, v) arrives as (re, w, v, NULL) */
        bool three = call->nin > 3 && !call->in[3];
        const Hop *hw = call->nin > 3 ? call->in[three ? 1 : 2] : NULL, *hv = call->nin > 3 ? call->in[three ? 2 : 3] : NULL;
        if (lit_number(hw, &w) && lit_number(hv, &v) && w >= 1 && v >= 0 && v < w && w < 9e15 && w == (double)(int64_t)w && v == (double)(int64_t)v) {
            int64_t win = (int64_t)w, ovl = (int64_t)v, step = win - ovl;
            o->rows = a->rows;
            o->cols = (a->cols > ovl ? (a->cols - ovl + step - 1) / step : 0) * win;
        }
        break;
    }
    default: break;
    }
}

static Hop *out_of(BCtx *c, Hop *call, int k, Span sp)
{
    Hop *o = hop_new(c->dag, H_OUT, sp, 1);
    o->in[0] = call;
    o->out_index = k;
    o->dt = DT_ANY;
    if (call->kind == H_FCALL && k < call->func->nout) {
        o->dt = call->func->out[k].dt;
        o->vt = call->func->out[k].vt;
        if (o->dt == DT_MATRIX) o->vt = VT_DOUBLE;
        const FProg *fp = call->spec;
        if (fp && o->dt == DT_MATRIX) { o->rows = fp->out_dims[2 * k]; o->cols = fp->out_dims[2 * k + 1]; }
    } else if (call->kind == H_BUILTIN) {
        o->dt = DT_MATRIX; o->vt = VT_DOUBLE;
        if ((call->bi == BI_TFENCODE || call->bi == BI_COMPRESSBIN) && k == 1) { o->dt = DT_FRAME; o->vt = VT_STRING; }
        if (call->bi == BI_REMOVE) { o->dt = k == 0 ? DT_LIST : DT_ANY; o->vt = VT_UNKNOWN; }
    } else if (call->kind == H_WHERE) {
        /* result k of a where-loop: its current value's shape, as a
         * one-result loop's (hops/hop.c) */
        const Hop *r = k == 0 ? call->in[0] : call->in[call->nin - call->nouts + k];
        o->dt = DT_MATRIX; o->vt = VT_DOUBLE;
        if (r->dt == DT_MATRIX && !call->where->bcast) { o->rows = r->rows; o->cols = r->cols; }
    }
    if (call->kind == H_BUILTIN) signal_out_size(call, o);
    if (o->rows >= 0) hop_infer(o);
    return o;
}

/* Index hops of one dimension: sets mode, fills lo/hi. */
static int build_ixdim(BCtx *c, const IndexDim *d, Hop **lo, Hop **hi)
{
    *lo = *hi = NULL;
    if (d->all) return IX_ALL;
    *lo = build_expr(c, d->lo);
    if (!d->hi) return IX_SINGLE;
    *hi = build_expr(c, d->hi);
    return IX_RANGE;
}

/* A where-loop: one H_WHERE hop over R, the ranges and the variables the
 * body reads (lang/where.h's order); AMULET (codegen/amulet.c) runs it. */
static Hop *build_where(BCtx *c, const WhereLoop *w, Span sp)
{
    const char *names[WHERE_MAXLEAVES];
    int nl = where_leaves(w, names, WHERE_MAXLEAVES);
    if (nl > WHERE_MAXLEAVES) nl = WHERE_MAXLEAVES;   /* the validator reported it */
    int ns = 0;   /* steps of stepped variables, after the variables read */
    for (int v = 0; v < w->nvars; v++) ns += w->vars[v].step != NULL;
    int nres = where_nres(w);
    Hop *h = hop_new(c->dag, H_WHERE, sp, 1 + 2 * w->nvars + nl + ns + (nres - 1));
    if (!h) return lit(c, val_double(0), sp);
    h->where = w;
    h->nouts = nres > 1 ? nres : 0;
    int q = 1 + 2 * w->nvars + nl + ns;   /* the other results' current values */
    for (const WhereLoop *x = w->more; x; x = x->more) h->in[q++] = lookup(c, x->target.name, x->target.span);
    h->in[0] = lookup(c, w->target.name, w->target.span);
    for (int v = 0, q = 0; v < w->nvars; v++) {
        h->in[1 + 2 * v] = build_expr(c, w->vars[v].from);
        h->in[2 + 2 * v] = build_expr(c, w->vars[v].to);
        if (w->vars[v].step) h->in[1 + 2 * w->nvars + nl + q++] = build_expr(c, w->vars[v].step);
    }
    for (int k = 0; k < nl; k++) h->in[1 + 2 * w->nvars + k] = lookup(c, names[k], sp);
    hop_infer(h);
    return h;
}

static Hop *build_expr(BCtx *c, Expr *e)
{
    Span sp = e->span;
    switch (e->kind) {
    case EX_INT: return lit(c, val_int(e->ival), sp);
    case EX_DOUBLE: return lit(c, val_double(e->dval), sp);
    case EX_BOOL: return lit(c, val_bool(e->bval), sp);
    case EX_STRING: {
        Value v = val_string(e->sval);
        if (v.kind != V_STRING) oom(c, sp);
        return lit(c, v, sp);
    }
    case EX_IDENT: return lookup(c, e->ident, sp);
    case EX_UNARY: return fold(c, unary(c, e->unary.op, build_expr(c, e->unary.a), sp));
    case EX_BINARY: {
        Hop *a = build_expr(c, e->binary.a);
        Hop *b = build_expr(c, e->binary.b);
        if (e->binary.op == OP_MATMUL) return matmul(c, a, b, sp);
        return fold(c, binary(c, e->binary.op, a, b, sp));
    }
    case EX_CALL:
        if (e->call.func) {
            Hop *call = build_fcall(c, e);
            return out_of(c, call, 0, sp);
        }
        if (e->call.builtin) {
            Hop *h = build_builtin(c, e);
            if (h->kind == H_BUILTIN && h->nouts > 1) return out_of(c, h, 0, sp);
            return h;
        }
        err(c, sp, "unknown function '%s'%s", e->call.name, "");
        return lit(c, val_double(0), sp);
    case EX_WHERE: return build_where(c, e->where, sp);
    case EX_INDEX: {
        Hop *t = lookup(c, e->index.name, sp);
        Hop *h = hop_new(c->dag, H_RIX, sp, 5);
        h->in[0] = t;
        h->ix.has_col = e->index.has_col;
        h->ix.rmode = build_ixdim(c, &e->index.row, &h->in[1], &h->in[2]);
        if (e->index.has_col) h->ix.cmode = build_ixdim(c, &e->index.col, &h->in[3], &h->in[4]);
        hop_infer(h);
        return h;
    }
    }
    return NULL;
}

/* ---- statements ---- */

static void stmt_assign(BCtx *c, Stmt *s)
{
    LValue *lv = &s->assign.target;
    const Expr *x = s->assign.value;
    if (!lv->indexed && !s->assign.accum && x->kind == EX_CALL && x->call.func && x->call.func->nout == 0) {
        /* x = f() of a function without outputs: as SystemDS, a warning;
         * the call runs and x stays unbound */
        diag_warning(c->diag, s->span, "function '%s' does not return a value but is assigned to '%s'",
                     x->call.name, lv->name);
        Hop *h = build_fcall(c, s->assign.value);
        h->sidefx = true;
        hop_add_root(c->dag, h);
        return;
    }
    Hop *v = build_expr(c, s->assign.value);
    if (!lv->indexed) {
        if (s->assign.accum) v = binary(c, OP_PLUS, lookup(c, lv->name, lv->span), v, s->span);
        hop_add_root(c->dag, v);
        bind(c, lv->name, v);
        return;
    }
    Hop *t = lookup(c, lv->name, lv->span);
    Hop *h = hop_new(c->dag, H_LIX, s->span, 6);
    h->in[0] = t;
    h->ix.has_col = lv->has_col;
    h->ix.rmode = build_ixdim(c, &lv->row, &h->in[2], &h->in[3]);
    if (lv->has_col) h->ix.cmode = build_ixdim(c, &lv->col, &h->in[4], &h->in[5]);
    if (s->assign.accum) {
        Hop *cur = hop_new(c->dag, H_RIX, s->span, 5);
        cur->in[0] = t;
        cur->ix = h->ix;
        for (int k = 0; k < 4; k++) cur->in[1 + k] = h->in[2 + k];
        hop_infer(cur);
        v = binary(c, OP_PLUS, cur, v, s->span);
    }
    h->in[1] = v;
    hop_infer(h);
    hop_add_root(c->dag, h);
    bind(c, lv->name, h);
}

static void stmt_massign(BCtx *c, Stmt *s)
{
    Expr *e = s->massign.call;
    Hop *call;
    if (e->kind == EX_CALL && e->call.func) {
        call = build_fcall(c, e);
        if (s->massign.n > e->call.func->nout)
            err(c, s->span, "function '%s' has fewer outputs than assigned%s", e->call.name, "");
    } else if (e->kind == EX_CALL && e->call.builtin) {
        call = build_builtin(c, e);
        if (call->kind != H_BUILTIN || call->nouts < s->massign.n) {
            err(c, s->span, "builtin '%s' does not return %s outputs", e->call.name, "that many");
            return;
        }
    } else if (e->kind == EX_WHERE) {
        call = build_where(c, e->where, e->span);   /* one loop nest, several results */
    } else {
        err(c, s->span, "multi-assignment needs a function call%s%s", "", "");
        return;
    }
    hop_add_root(c->dag, call);
    for (int k = 0; k < s->massign.n; k++) {
        Hop *o = out_of(c, call, k, s->span);
        hop_add_root(c->dag, o);
        bind(c, s->massign.targets[k].name, o);
    }
}

static void build_list(BCtx *c, Block *b, PBList *out);

/* A new program block; NULL (reported) when out of memory. */
static PBlock *pb_new(BCtx *c, PBKind k, Span sp)
{
    PBlock *b = br_calloc(1, sizeof *b);
    if (!b) { oom(c, sp); return NULL; }
    b->kind = k;
    b->span = sp;
    return b;
}

/* Appends b to out, or frees it and reports running out of memory. */
static bool add_block(BCtx *c, PBList *out, PBlock *b)
{
    if (pbl_add(out, b)) return true;
    oom(c, b->span);
    pblock_free(c->prog, b);
    return false;
}

/* Finishes the current generic block, if any. */
static void flush(BCtx *c, PBlock **cur)
{
    if (!*cur) return;
    /* rewrites now; fusion and instructions once liveness is known
     * (plan_finalize) */
    plan_compile(c->prog, (*cur)->dag, CG_BLOCK, PC_INLINE | PC_REWRITE, plan_rw(c->prog));
    c->dag = NULL;
    *cur = NULL;
}

static HopDag *pred_dag(BCtx *c, Expr *cond, Hop **root)
{
    HopDag *d = hop_dag_new();
    *root = NULL;
    if (!d) { oom(c, cond->span); return NULL; }
    c->dag = d;
    *root = build_expr(c, cond);
    hop_add_root(d, *root);
    c->dag = NULL;
    return d;
}

/* Variables assigned anywhere in a block; left indexing (which keeps a
 * matrix's dimensions) goes to *ix instead of *s when ix is given. */
static void assigned_vars_ix(Block *b, NameSet *s, NameSet *ix)
{
    for (int i = 0; i < b->n; i++) {
        Stmt *st = b->stmts[i];
        switch (st->kind) {
        case ST_ASSIGN:
            if (ix && st->assign.target.indexed) ns_add(ix, st->assign.target.name);
            else ns_add(s, st->assign.target.name);
            break;
        case ST_MASSIGN:
            for (int k = 0; k < st->massign.n; k++) ns_add(s, st->massign.targets[k].name);
            break;
        case ST_IF: assigned_vars_ix(&st->if_.then_b, s, ix); assigned_vars_ix(&st->if_.else_b, s, ix); break;
        case ST_FOR: ns_add(s, st->for_.var); assigned_vars_ix(&st->for_.body, s, ix); break;
        case ST_WHILE: assigned_vars_ix(&st->while_.body, s, ix); break;
        default: break;
        }
    }
}

/* Variables only updated by left indexing keep their dimensions but are
 * no longer constants. */
static void forget_values(BCtx *c, const NameSet *s)
{
    for (int i = 0; i < s->n; i++) {
        VInfo *vi = vm_get(&c->vars, s->v[i]);
        if (vi) { vi->cval = val_none(); vi->nnz = -1; vi->cbytes = 0; }
    }
}

static void forget(BCtx *c, const NameSet *s)
{
    for (int i = 0; i < s->n; i++) {
        VInfo *vi = vm_get(&c->vars, s->v[i]);
        if (vi) { vi->rows = vi->cols = vi->nnz = vi->wrows = vi->wcols = -1; vi->cbytes = 0; vi->cval = val_none(); }
    }
}

static bool mentions(const Expr *e, const char *name);

/* Does where-loop w read variable name (its result, a range or the
 * body)? */
static bool where_reads(const WhereLoop *w, const char *name)
{
    const char *names[WHERE_MAXLEAVES];
    int nl = where_leaves(w, names, WHERE_MAXLEAVES);
    for (int k = 0; k < nl && k < WHERE_MAXLEAVES; k++)
        if (!strcmp(names[k], name)) return true;
    if (where_result(w, name)) return true;
    for (int v = 0; v < w->nvars; v++)
        if (mentions(w->vars[v].from, name) || mentions(w->vars[v].to, name) || mentions(w->vars[v].step, name))
            return true;
    return false;
}

/* Does expression e mention variable name? */
static bool mentions(const Expr *e, const char *name)
{
    if (!e) return false;
    switch (e->kind) {
    case EX_IDENT: return strcmp(e->ident, name) == 0;
    case EX_UNARY: return mentions(e->unary.a, name);
    case EX_BINARY: return mentions(e->binary.a, name) || mentions(e->binary.b, name);
    case EX_CALL:
        for (int i = 0; i < e->call.nargs; i++)
            if (mentions(e->call.args[i].value, name)) return true;
        return false;
    case EX_INDEX:
        return mentions(e->index.row.lo, name) || mentions(e->index.row.hi, name) ||
               mentions(e->index.col.lo, name) || mentions(e->index.col.hi, name);
    case EX_WHERE: return where_reads(e->where, name);
    default: return false;
    }
}

/* The where-loop a statement runs (R = where(...), or an ST_MASSIGN of
 * its several results), or NULL. Its results are written cell by cell
 * over the loop's ranges, as left-indexing writes them. */
static const WhereLoop *where_stmt(const Stmt *st)
{
    const Expr *e = st->kind == ST_ASSIGN ? st->assign.value : st->kind == ST_MASSIGN ? st->massign.call : NULL;
    return e && e->kind == EX_WHERE ? e->where : NULL;
}

/* The result variables of a parfor body: matrices defined before the
 * loop that it left-indexes or a where-loop writes (their accesses are
 * checked by pfdep.c; the workers' changed cells are merged), and
 * its accumulators (R += X on a variable defined before the loop,
 * SystemDS's parfor accumulators). */
static void parfor_results(BCtx *c, Block *b, NameSet *results, NameSet *accums)
{
    for (int i = 0; i < b->n; i++) {
        Stmt *st = b->stmts[i];
        const WhereLoop *w = where_stmt(st);
        for (const WhereLoop *x = w; x; x = x->more)
            if (vm_get(&c->vars, x->target.name)) ns_add(results, x->target.name);
        if (w) continue;
        switch (st->kind) {
        case ST_ASSIGN: {
            LValue *lv = &st->assign.target;
            if (!vm_get(&c->vars, lv->name)) break;
            if (!lv->indexed && st->assign.accum) ns_add(accums, lv->name);
            if (lv->indexed) ns_add(results, lv->name);
            break;
        }
        case ST_IF:
            parfor_results(c, &st->if_.then_b, results, accums);
            parfor_results(c, &st->if_.else_b, results, accums);
            break;
        case ST_FOR: parfor_results(c, &st->for_.body, results, accums); break;
        case ST_WHILE: parfor_results(c, &st->while_.body, results, accums); break;
        default: break;
        }
    }
}

/* Does expression e read variable name (directly or indexed)? */
static bool reads(const Expr *e, const char *name)
{
    if (!e) return false;
    switch (e->kind) {
    case EX_IDENT: return strcmp(e->ident, name) == 0;
    case EX_UNARY: return reads(e->unary.a, name);
    case EX_BINARY: return reads(e->binary.a, name) || reads(e->binary.b, name);
    case EX_CALL:
        for (int i = 0; i < e->call.nargs; i++)
            if (reads(e->call.args[i].value, name)) return true;
        return false;
    case EX_INDEX:
        return strcmp(e->index.name, name) == 0 || reads(e->index.row.lo, name) || reads(e->index.row.hi, name) ||
               reads(e->index.col.lo, name) || reads(e->index.col.hi, name);
    case EX_WHERE: return where_reads(e->where, name);
    default: return false;
    }
}

/* Does block b read name before every path through it has written it (a
 * read that sees the previous iteration's value)? *written: whether name
 * is written on every path so far; writes inside loops and one branch of
 * an if do not count. */
static bool upward_read(const Block *b, const char *name, bool *written)
{
    for (int i = 0; i < b->n && !*written; i++) {
        const Stmt *st = b->stmts[i];
        bool w1 = false, w2 = false;
        switch (st->kind) {
        case ST_ASSIGN: {
            const LValue *lv = &st->assign.target;
            if (reads(st->assign.value, name) || (lv->indexed && strcmp(lv->name, name) == 0) ||
                (lv->indexed && (reads(lv->row.lo, name) || reads(lv->row.hi, name) || reads(lv->col.lo, name) ||
                                 reads(lv->col.hi, name))))
                return true;
            if (!lv->indexed && strcmp(lv->name, name) == 0) *written = !st->assign.accum;
            if (st->assign.accum && strcmp(lv->name, name) == 0) return true;
            break;
        }
        case ST_MASSIGN:
            if (reads(st->massign.call, name)) return true;
            for (int k = 0; k < st->massign.n; k++)
                if (strcmp(st->massign.targets[k].name, name) == 0) *written = true;
            break;
        case ST_IF:
            if (reads(st->if_.cond, name) || upward_read(&st->if_.then_b, name, &w1) ||
                upward_read(&st->if_.else_b, name, &w2)) return true;
            *written = w1 && w2;
            break;
        case ST_FOR:
            if (reads(st->for_.from, name) || reads(st->for_.to, name) || reads(st->for_.incr, name) ||
                upward_read(&st->for_.body, name, &w1)) return true;
            break;
        case ST_WHILE:
            if (reads(st->while_.cond, name) || upward_read(&st->while_.body, name, &w1)) return true;
            break;
        case ST_EXPR:
            if (reads(st->expr.e, name)) return true;
            break;
        }
    }
    return false;
}

/* PfConst over the compile-time constants of the program so far. */
static bool known_int(void *arg, const char *name, int64_t *v)
{
    BCtx *c = arg;
    VInfo *vi = vm_get(&c->vars, name);
    if (!vi || !val_is_numeric(&vi->cval)) return false;
    double d = val_as_double(&vi->cval);
    if (d != (double)(int64_t)d || d < -9e15 || d > 9e15) return false;
    *v = (int64_t)d;
    return true;
}

/* A parfor body's plain (not left-indexed, not +=) writes to variables
 * defined before the loop are private to each iteration (as in SystemDS,
 * only left-indexed results and += accumulators leave a parfor), so a
 * body that reads such a variable before writing it (s = s + j) depends
 * on the previous iteration: a loop-carried data dependency. SystemDS
 * refuses such loops at compile time; with check=0 braid runs them
 * serially (the analysis is what makes a parallel run safe). Returns
 * false when the loop must run serially. */
static bool parfor_carried(BCtx *c, const Block *body, const Block *b, bool check, NameSet *seen)
{
    bool ok = true;
    for (int i = 0; i < b->n; i++) {
        const Stmt *st = b->stmts[i];
        const LValue *t = st->kind == ST_ASSIGN ? &st->assign.target : NULL;
        int nt = st->kind == ST_ASSIGN ? 1 : st->kind == ST_MASSIGN ? st->massign.n : 0;
        if (st->kind == ST_MASSIGN) t = st->massign.targets;
        for (int k = 0; k < nt; k++) {
            bool written = false;
            if (t[k].indexed || (st->kind == ST_ASSIGN && st->assign.accum) || where_stmt(st) ||
                !vm_get(&c->vars, t[k].name) ||
                ns_has(seen, t[k].name) || !upward_read(body, t[k].name, &written))
                continue;
            ns_add(seen, t[k].name);
            if (!check) { ok = false; continue; }
            err(c, t[k].span,
                "parfor loop dependency analysis: inter-iteration (loop-carried) dependency on variable "
                "'%s' (read before it is written in an iteration); ensure independence of iterations "
                "(or use check=0 to run the loop serially)%s", t[k].name, NULL);
        }
        if (st->kind == ST_IF)
            ok &= parfor_carried(c, body, &st->if_.then_b, check, seen) &
                  parfor_carried(c, body, &st->if_.else_b, check, seen);
        else if (st->kind == ST_FOR) ok &= parfor_carried(c, body, &st->for_.body, check, seen);
        else if (st->kind == ST_WHILE) ok &= parfor_carried(c, body, &st->while_.body, check, seen);
    }
    return ok;
}

/* Does a parfor body use accumulator name other than as the target of
 * "name += e" with e not reading it? Such a loop is not independent. */
static bool accum_conflict(const Block *b, const char *name)
{
    for (int i = 0; i < b->n; i++) {
        const Stmt *st = b->stmts[i];
        switch (st->kind) {
        case ST_ASSIGN: {
            const LValue *lv = &st->assign.target;
            if (reads(st->assign.value, name)) return true;
            if (strcmp(lv->name, name) == 0 && (lv->indexed || !st->assign.accum)) return true;
            if (lv->indexed && (reads(lv->row.lo, name) || reads(lv->row.hi, name) || reads(lv->col.lo, name) ||
                                reads(lv->col.hi, name))) return true;
            break;
        }
        case ST_MASSIGN:
            if (reads(st->massign.call, name)) return true;
            for (int k = 0; k < st->massign.n; k++)
                if (strcmp(st->massign.targets[k].name, name) == 0) return true;
            break;
        case ST_IF:
            if (reads(st->if_.cond, name) || accum_conflict(&st->if_.then_b, name) ||
                accum_conflict(&st->if_.else_b, name)) return true;
            break;
        case ST_FOR:
            if (reads(st->for_.from, name) || reads(st->for_.to, name) || reads(st->for_.incr, name) ||
                accum_conflict(&st->for_.body, name)) return true;
            break;
        case ST_WHILE:
            if (reads(st->while_.cond, name) || accum_conflict(&st->while_.body, name)) return true;
            break;
        case ST_EXPR:
            if (reads(st->expr.e, name)) return true;
            break;
        default: break;
        }
    }
    return false;
}

/* Does a block contain a parfor (whose warnings a speculative build would
 * swallow)? */
static bool has_parfor(const Block *b)
{
    for (int i = 0; i < b->n; i++) {
        const Stmt *st = b->stmts[i];
        if (st->kind == ST_FOR && (st->for_.parfor || has_parfor(&st->for_.body))) return true;
        if (st->kind == ST_WHILE && has_parfor(&st->while_.body)) return true;
        if (st->kind == ST_IF && (has_parfor(&st->if_.then_b) || has_parfor(&st->if_.else_b))) return true;
    }
    return false;
}

/* Did the body keep the dimensions every assigned variable had on entry? */
static bool same_dims(VMap *entry, VMap *end, const NameSet *as)
{
    for (int i = 0; i < as->n; i++) {
        VInfo *a = vm_get(entry, as->v[i]);
        if (!a || a->dt != DT_MATRIX || (a->wrows < 0 && a->wcols < 0)) continue;
        VInfo *b = vm_get(end, as->v[i]);
        /* sizes, and bounds (a bound from the entry must hold after any
         * number of iterations) */
        if (!b || b->dt != a->dt || b->rows != a->rows || b->cols != a->cols ||
            b->wrows != a->wrows || b->wcols != a->wcols) return false;
    }
    return true;
}

static void pbl_clear(const RtProgram *p, PBList *l)
{
    for (int i = 0; i < l->n; i++) pblock_free(p, l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* Builds a loop's predicate (while: pred != NULL) and body. Size
 * propagation through loops (seed 002, IPA): first the body is built with
 * the sizes variables have on entry; if it leaves every variable it
 * assigns with the same dimensions, that build is consistent and kept.
 * Otherwise the sizes of the assigned variables are forgotten and the loop
 * is built again (its DAGs are then recompiled at run time). Returns false
 * for a while loop whose predicate is constant FALSE. */
/* A loop's body: conditional as an if/else branch (SystemDS validates
 * for, parfor and while bodies as conditional blocks: a known dimension
 * mismatch there is a warning and fails only when the statement runs). */
static void build_body(BCtx *c, Block *body, PBList *out)
{
    c->cond_depth++;
    build_list(c, body, out);
    c->cond_depth--;
}

static bool build_loop(BCtx *c, Stmt *s, PBlock *b, Block *body, Expr *pred)
{
    NameSet as = {0}, ix = {0};
    assigned_vars_ix(body, &as, &ix);
    if (s->kind == ST_FOR) ns_add(&as, s->for_.var);
    cla_loop_marks(c, &as, &ix);
    bool done = false, run = true;
    VMap start = {0};   /* state on loop entry, for the merge afterwards */
    if (c->prog->optlevel > 0 && c->spec_depth < 3 && !has_parfor(body)) {
        VMap entry = vm_copy(&c->vars);
        forget_values(c, &as);
        forget_values(c, &ix);
        start = vm_copy(&c->vars);
        Diag *saved = c->diag;
        int saved_nerr = c->nerr;
        c->diag = diag_new();
        c->spec_depth++;
        if (pred) {
            Hop *root;
            b->dag = pred_dag(c, pred, &root);
            b->code = plan_compile(c->prog, b->dag, CG_PRED, PC_ALL, plan_rw(c->prog));
            run = rw_const_pred(b->dag) != 0;
        }
        if (run) build_body(c, body, &b->body);
        c->spec_depth--;
        done = diag_nerrors(c->diag) == 0 && same_dims(&entry, &c->vars, &as);
        /* a kept build's warnings are the loop's (x = f() of a function
         * without outputs in a loop body warned nothing before) */
        if (done) diag_add_warnings(saved, c->diag);
        diag_free(c->diag);
        c->diag = saved;
        c->nerr = saved_nerr;
        if (done) {
            free(entry.v);
        } else {
            pbl_clear(c->prog, &b->body);
            if (pred) {   /* a for loop's dag/code are its header: keep */
                plan_code_free(b->code);
                hop_dag_free(b->dag);
                b->code = NULL;
                b->dag = NULL;
            }
            free(c->vars.v);
            c->vars = entry;
        }
    }
    if (!done) {
        forget(c, &as);
        forget_values(c, &ix);
        free(start.v);
        start = vm_copy(&c->vars);
        if (pred) {
            Hop *root;
            b->dag = pred_dag(c, pred, &root);
            b->code = plan_compile(c->prog, b->dag, CG_PRED, PC_ALL, plan_rw(c->prog));
            run = !(c->prog->optlevel > 0 && rw_const_pred(b->dag) == 0);
        }
        if (run) build_body(c, body, &b->body);
    }
    /* after the loop: what holds on entry (zero iterations) and after the
     * body; a literal assigned in the body is not a constant afterwards */
    vm_merge(&c->vars, &start);
    free(start.v);
    if (as.oom || ix.oom) oom(c, s->span);
    ns_free(&as);
    ns_free(&ix);
    return run;
}

static void build_control(BCtx *c, Stmt *s, PBList *out, HopDag *pdag, Code *pcode)
{
    switch (s->kind) {
    case ST_IF: {   /* its predicate is built (build_stmts): not constant */
        PBlock *b = pb_new(c, PB_IF, s->span);
        if (!b) { plan_code_free(pcode); hop_dag_free(pdag); break; }
        b->dag = pdag;
        b->code = pcode;
        VMap before = vm_copy(&c->vars);
        c->cond_depth++;
        build_list(c, &s->if_.then_b, &b->body);
        VMap after_then = c->vars;
        c->vars = before;
        build_list(c, &s->if_.else_b, &b->els);
        c->cond_depth--;
        vm_merge(&c->vars, &after_then);
        free(after_then.v);
        add_block(c, out, b);
        break;
    }
    case ST_WHILE: {
        PBlock *b = pb_new(c, PB_WHILE, s->span);
        if (!b) break;
        if (!build_loop(c, s, b, &s->while_.body, s->while_.cond)) {
            pblock_free(c->prog, b);   /* while (FALSE): never runs */
            break;
        }
        add_block(c, out, b);
        break;
    }
    case ST_FOR: {
        PBlock *b = pb_new(c, PB_FOR, s->span);
        if (!b) break;
        b->var = s->for_.var;
        HopDag *d = hop_dag_new();
        if (!d) { oom(c, s->span); pblock_free(c->prog, b); break; }
        c->dag = d;
        hop_add_root(d, build_expr(c, s->for_.from));
        hop_add_root(d, build_expr(c, s->for_.to));
        if (s->for_.incr) hop_add_root(d, build_expr(c, s->for_.incr));
        c->dag = NULL;
        b->dag = d;
        b->code = plan_compile(c->prog, d, CG_FORHDR, PC_ALL, plan_rw(c->prog));
        if (s->for_.parfor) {
            b->parfor = true;
            b->parfor_check = true;
            for (int i = 0; i < s->for_.nopts; i++) {
                Arg *o = &s->for_.opts[i];
                Expr *v = o->value;
                double num = v->kind == EX_INT ? (double)v->ival : v->kind == EX_DOUBLE ? v->dval
                           : v->kind == EX_BOOL ? v->bval : -1;
                if (strcmp(o->name, "check") == 0) b->parfor_check = num != 0;
                else if (strcmp(o->name, "par") == 0 && num > 0) b->parfor_par = (int)num;
                else if (strcmp(o->name, "mode") == 0 && v->kind == EX_STRING)
                    b->parfor_remote = strncmp(v->sval, "REMOTE_", 7) == 0;
            }
            parfor_results(c, &s->for_.body, &b->results, &b->accums);
            b->par_ok = true;
            for (int k = 0; k < b->accums.n && b->parfor_check; k++)
                if (accum_conflict(&s->for_.body, b->accums.v[k])) b->par_ok = false;
            NameSet seen = {0};
            if (!parfor_carried(c, &s->for_.body, &s->for_.body, b->parfor_check, &seen)) b->par_ok = false;
            ns_free(&seen);
            const char *who = NULL;
            if (b->parfor_check && !pf_results_independent(&s->for_.body, s->for_.var, s->for_.from, s->for_.to,
                                                           s->for_.incr, &b->results, known_int, c, &who))
                b->par_ok = false;
            if (b->results.oom || b->accums.oom) oom(c, s->span);
            if (!b->par_ok && who)
                diag_warning(c->diag, s->span,
                             "parfor: dependency analysis cannot prove that iterations access result '%s' "
                             "independently; running serially", who);
            else if (!b->par_ok)
                diag_warning(c->diag, s->span,
                             "parfor: dependency analysis cannot prove iterations independent; running serially");
        }
        vm_set(&c->vars, s->for_.var, DT_SCALAR, VT_INT, -1, -1);
        build_loop(c, s, b, &s->for_.body, NULL);
        add_block(c, out, b);
        break;
    }
    default: break;
    }
}

/* The predicate of if statement s, built and compiled: 1 or 0 when it
 * is constant (the taken branch), else -1. */
static int build_if_pred(BCtx *c, Stmt *s, HopDag **dag, Code **code)
{
    Hop *root;
    *dag = pred_dag(c, s->if_.cond, &root);
    *code = plan_compile(c->prog, *dag, CG_PRED, PC_ALL, plan_rw(c->prog));
    return c->prog->optlevel > 0 && *dag ? rw_const_pred(*dag) : -1;
}

/* Does the value of h have a size only known once it is computed (seed
 * 002: table, removeEmpty, unique, aggregate, transformapply, a read
 * without .mtd, a call's output that IPA could not size)? */
static bool data_dependent(const Hop *h)
{
    if (!h || h->dt != DT_MATRIX || (h->rows >= 0 && h->cols >= 0)) return false;
    if (h->kind == H_OUT) return h->in[0] && (h->in[0]->kind == H_FCALL || h->in[0]->kind == H_BUILTIN);
    if (h->kind != H_BUILTIN) return false;
    switch (h->bi) {
    case BI_TABLE: case BI_RMEMPTY: case BI_UNIQUE: case BI_AGGREGATE: case BI_TFAPPLY: case BI_READ: return true;
    default: return false;
    }
}

/* Split the block after statement s (SystemDS's DAG split after
 * data-dependent operators): when s binds a matrix whose size is known
 * only at run time, the statements after it go into a new block, which
 * dynamic recompilation then compiles with that size. */
static bool split_after(const BCtx *c, const Stmt *s)
{
    const HopDag *d = c->dag;
    if (!d || c->prog->optlevel == 0) return false;
    for (int i = 0; i < d->nw; i++) {
        bool target = false;
        if (s->kind == ST_ASSIGN) target = !strcmp(d->wnames[i], s->assign.target.name);
        for (int k = 0; s->kind == ST_MASSIGN && k < s->massign.n; k++)
            target |= !strcmp(d->wnames[i], s->massign.targets[k].name);
        if (target && data_dependent(d->whops[i])) return true;
    }
    return false;
}

/* The statements of blk into blocks of out; *cur is the generic block
 * being filled (NULL: none). Branch removal (seed 002, section 3.1): an
 * if whose predicate is constant is replaced by the taken branch's
 * statements, which continue the current block, so the blocks around a
 * removed branch merge into one DAG. */
static void build_stmts(BCtx *c, Block *blk, PBList *out, PBlock **cur)
{
    for (int i = 0; i < blk->n; i++) {
        Stmt *s = blk->stmts[i];
        HopDag *pdag = NULL;
        Code *pcode = NULL;
        if (s->kind == ST_IF) {
            int k = build_if_pred(c, s, &pdag, &pcode);
            c->dag = *cur ? (*cur)->dag : NULL;
            if (k >= 0) {
                plan_code_free(pcode);
                hop_dag_free(pdag);
                build_stmts(c, k ? &s->if_.then_b : &s->if_.else_b, out, cur);
                continue;
            }
        }
        if (s->kind == ST_IF || s->kind == ST_FOR || s->kind == ST_WHILE) {
            flush(c, cur);
            build_control(c, s, out, pdag, pcode);
            continue;
        }
        if (!*cur) {
            if (!(*cur = pb_new(c, PB_GENERIC, s->span))) return;
            if (!((*cur)->dag = hop_dag_new())) {
                oom(c, s->span);
                pblock_free(c->prog, *cur);   /* not in out: nobody else frees it */
                *cur = NULL;
                c->dag = NULL;
                return;
            }
            if (!add_block(c, out, *cur)) {   /* add_block freed it */
                *cur = NULL;
                c->dag = NULL;
                return;
            }
        }
        c->dag = (*cur)->dag;
        switch (s->kind) {
        case ST_ASSIGN: stmt_assign(c, s); break;
        case ST_MASSIGN: stmt_massign(c, s); break;
        case ST_EXPR: {
            /* a call as a statement: its outputs (maybe none) are dropped */
            Expr *x = s->expr.e;
            Hop *h = x->kind == EX_CALL && x->call.func ? build_fcall(c, x) : build_expr(c, x);
            h->sidefx = true;
            hop_add_root(c->dag, h);
            break;
        }
        default: break;
        }
        if (i + 1 < blk->n && split_after(c, s)) flush(c, cur);
    }
}

static void build_list(BCtx *c, Block *blk, PBList *out)
{
    PBlock *cur = NULL;
    build_stmts(c, blk, out, &cur);
    flush(c, &cur);
}

/* ---- entry points ---- */

/* Must h run in program order among a block's statements: a draw (rand
 * or sample without a seed) or a call (which may draw, run a parfor that
 * takes a seed, or print)? */
static bool ordered(const Hop *h)
{
    return hop_draws_seed(h) || h->kind == H_FCALL;
}

/* Draws and calls in program order (DESIGN.md "Seeds under -seed N"). A
 * statement root that drop_dead dropped leaves its draws and calls
 * (ordered) to the walk from later roots and writes, so a call written
 * after them ran first and took their seeds. d's roots become the kept
 * ones (keep[i] of orig[i]) with, at each dropped root's place, its live
 * draws and calls not under an earlier root: each one itself, or the
 * outermost scalar-condition ifelse of that statement whose branch holds
 * it (its condition then comes first, so an untaken branch still draws
 * and calls nothing; plan/instgen.c). Other operators stay where the
 * walk puts them. Out of memory: the roots stay as drop_dead left them. */
static void keep_draw_order(HopDag *d, Hop *const *orig, const char *keep, int n0)
{
    bool any = false;
    for (int i = 0; i < d->n && !any; i++) any = ordered(d->hops[i]);
    if (!any) return;
    int nl;
    char *live = NULL;
    free(hop_walk(d, &nl, &live));
    size_t nh = (size_t)d->n + 2;
    char *under = calloc(nh, 1), *done = calloc(nh, 1), *br = malloc(nh);
    Hop **owner = calloc(nh, sizeof(Hop *)), **roots = malloc((size_t)(n0 + d->n + 1) * sizeof(Hop *));
    Hop **l = malloc(2 * nh * sizeof(Hop *)), **below = l ? l + nh : NULL;
    if (!live || !under || !done || !br || !owner || !roots || !l) goto out;
    int nr = 0;
    for (int i = 0; i < n0; i++) {
        int m = 0;
        if (!hop_walk_below(d, orig[i], under, l, &m)) goto out;
        if (keep[i]) { roots[nr++] = orig[i]; continue; }
        bool draws = false;
        for (int j = 0; j < m && !draws; j++) draws = live[l[j]->id] && ordered(l[j]);
        if (!draws) continue;
        /* an ifelse after its branches (post-order): outer ones win */
        for (int j = 0; j < m; j++) {
            Hop *t = l[j];
            if (!live[t->id] || !hop_lazy_ifelse(t)) continue;
            memset(br, 0, nh);
            for (int k = 1; k <= 2; k++) {
                int nb = 0;
                if (!hop_walk_below(d, t->in[k], br, below, &nb)) goto out;
                for (int b = 0; b < nb; b++) if (ordered(below[b])) owner[below[b]->id] = t;
            }
        }
        for (int j = 0; j < m; j++) {
            Hop *h = l[j];
            if (!live[h->id] || !ordered(h)) continue;
            Hop *e = owner[h->id] ? owner[h->id] : h;
            if (!done[e->id]) { done[e->id] = 1; roots[nr++] = e; }
        }
    }
    d->nroots = 0;
    for (int i = 0; i < nr; i++) hop_add_root(d, roots[i]);
out:
    free(l);
    free(live);
    free(under);
    free(done);
    free(br);
    free(owner);
    free(roots);
}

/* Inlining, static and (compile-time) dynamic rewrites of one DAG. */
/* Dead-code elimination with liveness: writes of variables that are not
 * live after the block are dropped (so fusion need not materialize them),
 * and so are statement roots without side effects that nothing uses. */
static void drop_dead(PBlock *b)
{
    HopDag *d = b->dag;
    int w = 0;
    for (int i = 0; i < d->nw; i++)
        if (ns_has(&b->live_out, d->wnames[i])) {
            d->wnames[w] = d->wnames[i];
            d->whops[w] = d->whops[i];
            w++;
        }
    d->nw = w;
    int n0 = d->nroots;
    Hop **orig = malloc(((size_t)n0 + 1) * sizeof(Hop *));
    char *keep = malloc((size_t)n0 + 1);
    if (!orig || !keep) {   /* out of memory: every root stays */
        free(orig);
        free(keep);
        return;
    }
    memcpy(orig, d->roots, (size_t)n0 * sizeof(Hop *));
    int r = 0;
    for (int i = 0; i < n0; i++) {
        Hop *h = orig[i];
        bool k = h->sidefx || h->kind == H_FCALL ||
                 (h->kind == H_OUT && h->in[0] && (h->in[0]->sidefx || h->in[0]->kind == H_FCALL));
        for (int j = 0; j < d->nw && !k; j++) k = d->whops[j] == h;
        keep[i] = k;
        if (k) d->roots[r++] = h;
    }
    d->nroots = r;
    keep_draw_order(d, orig, keep, n0);
    free(orig);
    free(keep);
}

/* Finishes the generic blocks of a block list once liveness is known:
 * dead-code elimination, recompilation flag, fusion, instructions.
 * Returns the number of blocks that ran out of memory (reported to dg). */
static int plan_finalize(RtProgram *p, PBList *l, Diag *dg)
{
    int nerr = 0;
    for (int i = 0; i < l->n; i++) {
        PBlock *b = l->v[i];
        if (b->kind == PB_GENERIC && !b->code) {
            if (p->optlevel > 0 && !(b->dag && ((HopDag *)b->dag)->oom)) drop_dead(b);
            b->code = plan_compile(p, b->dag, CG_BLOCK, PC_MARK | PC_FUSE | PC_LOWER, NULL);
        }
        HopDag *d = b->dag;
        if ((b->kind == PB_GENERIC && !b->code) || (d && d->oom) || b->live_out.oom) {
            diag_error(dg, b->span, "out of memory compiling this block");
            nerr++;
        }
        nerr += plan_finalize(p, &b->body, dg);
        nerr += plan_finalize(p, &b->els, dg);
    }
    return nerr;
}

RtProgram *plan_build_program(Program *ast, Diag *d, int optlevel, const CgOptions *cg)
{
    return plan_build_program_outputs(ast, d, optlevel, cg, NULL, 0);
}

RtProgram *plan_build_program_outputs(Program *ast, Diag *d, int optlevel, const CgOptions *cg,
                                      const char *const *outputs, int noutputs)
{
    return plan_build_program_main(ast, lang_main(ast), d, optlevel, cg, outputs, noutputs);
}

RtProgram *plan_build_program_main(Program *ast, const Block *main, Diag *d, int optlevel,
                                   const CgOptions *cg, const char *const *outputs, int noutputs)
{
    RtProgram *p = br_calloc(1, sizeof *p);
    if (!p) return NULL;
    if (!(p->cstate = br_calloc(1, sizeof(PlanState)))) { free(p); return NULL; }
    p->hooks = &plan_hooks;
    p->builtin = bi_builtin;
    p->ast = ast;
    p->optlevel = optlevel;
    p->diag = d;
    if (cg && cg->enabled) p->cg = cg_context_new(cg);
    p->cla = cg ? cg->cla : 0;
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&p->lock, &ma);
    pthread_mutexattr_destroy(&ma);
    BCtx c = {.prog = p, .diag = d};
    build_list(&c, (Block *)main, &p->main);
    if (c.vars.oom) oom(&c, (Span){0});
    free(c.vars.v);
    NameSet outs = {0}, in = {0};
    for (int i = 0; i < noutputs; i++) ns_add(&outs, outputs[i]);
    plan_liveness(&p->main, &outs, &in);
    if (outs.oom || in.oom) oom(&c, (Span){0});
    ns_free(&outs);
    ns_free(&in);
    if (c.nerr || plan_finalize(p, &p->main, d)) { plan_program_free(p); return NULL; }
    return p;
}

/* Builds function f into a new FProg of p (added to p->funcs): the
 * generic version (sig NULL) or a specialization for sig, whose body
 * then knows its parameters' sizes and constants. Called with p->lock
 * held. */
static FProg *function_build(RtProgram *p, Func *f, FSig *sig, Diag *d)
{
    FProg *fp = br_calloc(1, sizeof *fp);
    if (!fp || !br_grow((void **)&p->funcs, &p->fcap, p->nfuncs + 1, sizeof *p->funcs)) {
        free(fp);
        diag_error(d, f->span, "out of memory compiling function %s", f->name);
        return NULL;
    }
    p->funcs[p->nfuncs++] = fp;
    fp->func = f;
    fp->sig = sig;
    BCtx c = {.prog = p, .diag = d, .func = f};
    for (int i = 0; i < f->nin; i++) {
        Param *pa = &f->in[i];
        const FSig *g = sig ? &sig[i] : NULL;
        bool dims = g && g->rows >= 0 && pa->dt == DT_MATRIX;
        vm_set(&c.vars, pa->name, pa->dt, pa->dt == DT_MATRIX ? VT_DOUBLE : pa->vt,
               dims ? g->rows : -1, dims ? g->cols : -1);
        VInfo *vi = vm_get(&c.vars, pa->name);
        if (vi && g && pa->dt == DT_SCALAR && val_is_numeric(&g->v)) vi->cval = g->v;
    }
    build_list(&c, &f->body, &fp->body);
    if (c.vars.oom) oom(&c, f->span);
    if (sig && (fp->out_dims = malloc(2 * ((size_t)f->nout + 1) * sizeof(int64_t))))
        for (int i = 0; i < f->nout; i++) {
            const VInfo *vi = vm_get(&c.vars, f->out[i].name);
            bool known = vi && vi->dt == DT_MATRIX && f->out[i].dt == DT_MATRIX;
            fp->out_dims[2 * i] = known ? vi->rows : -1;
            fp->out_dims[2 * i + 1] = known ? vi->cols : -1;
        }
    free(c.vars.v);
    NameSet outs = {0}, in = {0};
    for (int i = 0; i < f->nout; i++) ns_add(&outs, f->out[i].name);
    plan_liveness(&fp->body, &outs, &in);
    if (outs.oom || in.oom) oom(&c, f->span);
    ns_free(&outs);
    ns_free(&in);
    fp->compiled = c.nerr == 0 && plan_finalize(p, &fp->body, d) == 0 && (!sig || fp->out_dims);
    return fp;
}

FProg *plan_function(RtProgram *p, Func *f, Diag *d)
{
    pthread_mutex_lock(&p->lock);
    FProg *fp = NULL;
    for (int i = 0; i < p->nfuncs && !fp; i++)
        if (p->funcs[i]->func == f && !p->funcs[i]->sig) fp = p->funcs[i];
    if (!fp && p->fetch) {   /* a worker's shell: from rank 0 */
        pthread_mutex_unlock(&p->lock);
        return p->fetch(p, f, NULL, d);
    }
    if (!fp) fp = function_build(p, f, NULL, d);
    pthread_mutex_unlock(&p->lock);
    return fp && fp->compiled ? fp : NULL;
}

void plan_program_free(RtProgram *p)
{
    if (!p) return;
    for (int i = 0; i < p->main.n; i++) pblock_free(p, p->main.v[i]);
    free(p->main.v);
    for (int i = 0; i < p->nfuncs; i++) fprog_free(p, p->funcs[i]);
    free(p->funcs);
    cg_context_free(p->cg);
    pthread_mutex_destroy(&p->lock);
    ns_free(&((PlanState *)p->cstate)->written);
    free(p->cstate);
    free(p);
}
