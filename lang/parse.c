/* parse.c: recursive-descent parser for DML (grammar: DML.md, with
 * SystemDS's Dml.g4 as the reference where DML.md is silent).
 *
 * Error recovery: the first error in a statement is reported at the
 * offending token ("panic" mode suppresses follow-up errors), then tokens
 * are skipped to the next statement start (sync) and parsing continues, so
 * one run reports several mistakes. Nesting deeper than PARSE_MAX_DEPTH is
 * an error that stops the parse. */
#include "parse.h"
#include "lex.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_ERRORS 25

typedef struct P {
    Arena *a;
    Diag *d;
    const char *file;
    const LangOptions *o;
    Token *t;
    int n, pos;
    int depth;          /* current nesting (expressions and statements) */
    bool panic;         /* an error was reported in the current statement */
    bool fatal;         /* stop parsing (too deep, too many errors, OOM) */
    int nerr;
    int err_line;       /* line of the last reported error (for sync) */
    Func **funcs; int nfuncs, capfuncs;
    SourceImport *imps; int nimps, capimps;
    const char *wd;     /* setwd("dir"): the folder later source() paths start from */
    _Alignas(16) unsigned char scratch[512]; /* stands in for a node when
                                                 the arena is exhausted */
} P;

_Static_assert(sizeof(Expr) <= 512 && sizeof(Stmt) <= 512 && sizeof(Func) <= 512,
               "scratch node too small");

/* ---- tokens ---- */

static Token *cur(P *p) { return &p->t[p->pos]; }

static Token *peek(P *p, int k)
{
    int i = p->pos + k;
    return &p->t[i < p->n ? i : p->n - 1];
}

static Token *prev(P *p) { return &p->t[p->pos > 0 ? p->pos - 1 : 0]; }

/* Consumes the current token (never moves past EOF) and returns it. */
static Token *advance(P *p)
{
    Token *t = cur(p);
    if (t->kind != TK_EOF) p->pos++;
    return t;
}

static bool accept(P *p, TokKind k)
{
    if (cur(p)->kind != k) return false;
    advance(p);
    return true;
}

static Span span_of(P *p, const Token *t)
{
    Span s = { p->file, t->line, t->col };
    return s;
}

static bool is_word(const Token *t, const char *w)
{
    return t->kind == TK_IDENT && strcmp(t->text, w) == 0;
}

/* ---- errors ---- */

/* Reports a syntax error unless one was already reported for the current
 * statement; enters panic mode (see sync). */
static void report(P *p, int line, int col, const char *msg)
{
    if (p->panic || p->fatal) return;
    Span s = { p->file, line, col };
    diag_error(p->d, s, "%s", msg);
    p->panic = true;
    p->err_line = line;
    if (++p->nerr >= MAX_ERRORS) p->fatal = true;
}

/* A syntax error at token t. */
static void perr(P *p, const Token *t, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void perr(P *p, const Token *t, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    report(p, t->line, t->col, buf);
}

/* Describes a token for messages: 'name', '(' , end of file, ... */
static const char *describe(const Token *t, char *buf, size_t cap)
{
    switch (t->kind) {
    case TK_IDENT: snprintf(buf, cap, "'%.60s'", t->text); break;
    case TK_INT: snprintf(buf, cap, "'%lld'", (long long)t->ival); break;
    case TK_DOUBLE: snprintf(buf, cap, "number %.10g", t->dval); break;
    case TK_STRING: snprintf(buf, cap, "string \"%.30s\"", t->text); break;
    case TK_ARG: snprintf(buf, cap, "'$%.60s'", t->text); break;
    default: snprintf(buf, cap, "%s", lex_kind_name(t->kind)); break;
    }
    return buf;
}

/* "expected <what>, found <token>". When the offending token starts a
 * later line than the previous token, the error is placed just after the
 * previous token (where the missing piece belongs). */
static void perr_expected(P *p, const char *what)
{
    Token *t = cur(p), *pv = prev(p);
    char buf[128];
    int line = t->line, col = t->col;
    if (p->pos > 0 && t->line > pv->end_line) {
        line = pv->end_line;
        col = pv->end_col;
    }
    char msg[300];
    snprintf(msg, sizeof msg, "expected %s, found %s", what, describe(t, buf, sizeof buf));
    report(p, line, col, msg);
}

static bool expect(P *p, TokKind k, const char *what)
{
    if (accept(p, k)) return true;
    perr_expected(p, what);
    return false;
}

static void oom(P *p)
{
    if (!p->fatal) {
        Span s = { p->file, 0, 0 };
        diag_error(p->d, s, "out of memory while parsing");
    }
    p->fatal = true;
    p->panic = true;
}

/* ---- allocation ---- */

/* A zeroed node from the arena; on exhaustion a scratch node (the parse is
 * then fatal and its result discarded). */
static void *pnew(P *p, size_t n)
{
    void *x = arena_alloc(p->a, n);
    if (x) return x;
    oom(p);
    memset(p->scratch, 0, sizeof p->scratch);
    return p->scratch;
}

/* Makes room for element n of an arena vector (doubling); returns the
 * possibly moved array, or NULL when out of memory. */
static void *vgrow(P *p, void *arr, int n, int *cap, size_t el)
{
    if (n < *cap) return arr;
    int nc = *cap ? 2 * *cap : 4;
    void *na = arena_alloc(p->a, (size_t)nc * el);
    if (!na) {
        oom(p);
        return NULL;
    }
    if (n) memcpy(na, arr, (size_t)n * el);
    *cap = nc;
    return na;
}

static Expr *new_expr(P *p, ExprKind k, const Token *t)
{
    Expr *e = pnew(p, sizeof(Expr));
    e->kind = k;
    e->span = span_of(p, t);
    return e;
}

/* ---- $-arguments ---- */

static const char *arg_value(const LangOptions *o, const char *name)
{
    if (!o) return NULL;
    for (int i = 0; i < o->nargs; i++)
        if (o->arg_names && o->arg_names[i] && strcmp(o->arg_names[i], name) == 0)
            return o->arg_values ? o->arg_values[i] : NULL;
    return NULL;
}

static bool numeric_chars(const char *s)
{
    if (!*s) return false;
    for (; *s; s++)
        if (!strchr("0123456789+-.eE", *s)) return false;
    return true;
}

Expr *lang_arg_literal(Arena *a, const char *v, Span at)
{
    Expr *e = arena_alloc(a, sizeof(Expr));
    if (!e) return NULL;
    e->span = at;
    if (!v) v = "";
    if (strcmp(v, "TRUE") == 0 || strcmp(v, "FALSE") == 0) {
        e->kind = EX_BOOL;
        e->bval = v[0] == 'T';
        return e;
    }
    char *end;
    if (numeric_chars(v)) {
        errno = 0;
        long long iv = strtoll(v, &end, 10);
        if (*end == 0 && errno == 0) {
            e->kind = EX_INT;
            e->ival = iv;
            return e;
        }
        double dv = strtod(v, &end);
        if (*end == 0) {
            e->kind = EX_DOUBLE;
            e->dval = dv;
            return e;
        }
    } else if (!strcmp(v, "NaN") || !strcmp(v, "Inf") || !strcmp(v, "-Inf") ||
               !strcmp(v, "Infinity") || !strcmp(v, "-Infinity")) {
        e->kind = EX_DOUBLE;
        e->dval = strtod(v, NULL);
        return e;
    }
    e->kind = EX_STRING;
    e->sval = arena_strdup(a, v);
    if (!e->sval) return NULL;
    return e;
}

/* The literal for $name at token t, or an error (not a syntax error: the
 * parse goes on with a placeholder). */
static Expr *subst_arg(P *p, const Token *t)
{
    const char *v = arg_value(p->o, t->text);
    if (!v) {
        diag_error(p->d, span_of(p, t),
                   "no value given for command-line argument '$%s' "
                   "(pass it, or use ifdef($%s, default))", t->text, t->text);
        Expr *e = new_expr(p, EX_STRING, t);
        e->sval = "";
        return e;
    }
    Expr *e = lang_arg_literal(p->a, v, span_of(p, t));
    if (!e) {
        oom(p);
        return new_expr(p, EX_INT, t);
    }
    return e;
}

/* ---- expressions ---- */

enum { PREC_OR = 1, PREC_AND, PREC_NOT, PREC_CMP, PREC_ADD, PREC_MUL,
       PREC_MOD, PREC_MATMUL, PREC_UNARY, PREC_POW };

/* Precedence and opcode of a binary operator token (0: not one). */
static int binprec(TokKind k, OpCode *op)
{
    switch (k) {
    case TK_OR: case TK_OROR: *op = OP_OR; return PREC_OR;
    case TK_AND: case TK_ANDAND: *op = OP_AND; return PREC_AND;
    case TK_LT: *op = OP_LT; return PREC_CMP;
    case TK_LE: *op = OP_LE; return PREC_CMP;
    case TK_GT: *op = OP_GT; return PREC_CMP;
    case TK_GE: *op = OP_GE; return PREC_CMP;
    case TK_EQ: *op = OP_EQ; return PREC_CMP;
    case TK_NE: *op = OP_NE; return PREC_CMP;
    case TK_PLUS: *op = OP_PLUS; return PREC_ADD;
    case TK_MINUS: *op = OP_MINUS; return PREC_ADD;
    case TK_STAR: *op = OP_MULT; return PREC_MUL;
    case TK_SLASH: *op = OP_DIV; return PREC_MUL;
    case TK_INTDIV: *op = OP_INTDIV; return PREC_MOD;
    case TK_MOD: *op = OP_MOD; return PREC_MOD;
    case TK_MATMUL: *op = OP_MATMUL; return PREC_MATMUL;
    case TK_CARET: *op = OP_POW; return PREC_POW;
    default: return 0;
    }
}

static Expr *parse_binary(P *p, int minprec, int *h);

static Expr *parse_expr(P *p, int *h) { return parse_binary(p, PREC_OR, h); }

/* Enters one nesting level; false (with an error) when too deep. */
static bool enter(P *p)
{
    if (p->fatal) return false;
    if (++p->depth > PARSE_MAX_DEPTH) {
        perr(p, cur(p), "nesting too deep (more than %d levels)", PARSE_MAX_DEPTH);
        p->fatal = true;
        return false;
    }
    return true;
}

static void leave(P *p) { p->depth--; }

/* Checks an expression tree height; too high is fatal (later passes
 * recurse over the tree). */
static bool height_ok(P *p, int h, const Token *at)
{
    if (h <= PARSE_MAX_DEPTH) return true;
    perr(p, at, "expression too deeply nested (more than %d levels)", PARSE_MAX_DEPTH);
    p->fatal = true;
    return false;
}

/* Call arguments after '(' up to and including ')'. */
static bool parse_args(P *p, Arg **args, int *nargs, int *h, const char *fname)
{
    Arg *v = NULL;
    int n = 0, cap = 0;
    *h = 0;
    if (!accept(p, TK_RPAREN)) {
        for (;;) {
            Token *t = cur(p);
            Arg a = { 0 };
            a.span = span_of(p, t);
            if (t->kind == TK_IDENT && peek(p, 1)->kind == TK_ASSIGN) {
                a.name = t->text;
                advance(p);
                advance(p);
            }
            int ha;
            a.value = parse_expr(p, &ha);
            if (!a.value) return false;
            if (ha > *h) *h = ha;
            if (!(v = vgrow(p, v, n, &cap, sizeof(Arg)))) return false;
            v[n++] = a;
            if (accept(p, TK_COMMA)) continue;
            if (accept(p, TK_RPAREN)) break;
            char what[200];
            snprintf(what, sizeof what, "',' or ')' in the arguments of '%.60s'", fname);
            perr_expected(p, what);
            return false;
        }
    }
    *args = v;
    *nargs = n;
    return true;
}

/* ifdef($name, default): the argument's literal if given, else default. */
static Expr *parse_ifdef(P *p, int *h)
{
    advance(p);  /* ifdef */
    if (!expect(p, TK_LPAREN, "'(' after 'ifdef'")) return NULL;
    Token *at = cur(p);
    if (at->kind != TK_ARG) {
        perr(p, at, "ifdef expects a command-line argument such as $name as its first argument");
        return NULL;
    }
    advance(p);
    if (!expect(p, TK_COMMA, "',' after the argument of ifdef")) return NULL;
    Expr *dflt = parse_expr(p, h);
    if (!dflt) return NULL;
    if (!expect(p, TK_RPAREN, "')' to close ifdef(")) return NULL;
    const char *v = arg_value(p->o, at->text);
    if (!v) return dflt;
    *h = 1;
    Expr *e = lang_arg_literal(p->a, v, span_of(p, at));
    if (!e) oom(p);
    return e;
}

/* name(args) with name an identifier, possibly ns::name. */
static Expr *parse_call(P *p, int *h)
{
    Token *t = cur(p);
    if (strcmp(t->text, "ifdef") == 0) return parse_ifdef(p, h);
    advance(p);
    advance(p);  /* ( */
    Expr *e = new_expr(p, EX_CALL, t);
    const char *sep = strstr(t->text, "::");
    if (sep) {
        e->call.ns = arena_strndup(p->a, t->text, (size_t)(sep - t->text));
        e->call.name = sep + 2;
        if (!e->call.ns) oom(p);
    } else {
        e->call.name = t->text;
    }
    int ha = 0;
    if (!parse_args(p, &e->call.args, &e->call.nargs, &ha, t->text)) return NULL;
    /* SystemDS's grammar lets ';' follow any call, also inside an
     * expression: ifelse(c, a, n = ceil(x);) parses there */
    while (accept(p, TK_SEMI)) {}
    *h = ha + 1;
    return e;
}

/* One dimension of an index: empty (all), e, or lo:hi. */
static bool parse_dim(P *p, IndexDim *d, int *h)
{
    *h = 0;
    TokKind k = cur(p)->kind;
    if (k == TK_COMMA || k == TK_RBRACK) {
        d->all = true;
        return true;
    }
    d->lo = parse_expr(p, h);
    if (!d->lo) return false;
    if (accept(p, TK_COLON)) {
        int h2;
        d->hi = parse_expr(p, &h2);
        if (!d->hi) return false;
        if (h2 > *h) *h = h2;
    }
    return true;
}

/* '[' row [, col] ']' after an identifier; fills the index parts. */
static bool parse_index(P *p, IndexDim *row, IndexDim *col, bool *has_col, int *h)
{
    advance(p);  /* [ */
    int h1 = 0, h2 = 0;
    if (!parse_dim(p, row, &h1)) return false;
    *has_col = false;
    if (accept(p, TK_COMMA)) {
        *has_col = true;
        if (!parse_dim(p, col, &h2)) return false;
    }
    if (!expect(p, TK_RBRACK, "']' to close the index")) return false;
    *h = (h1 > h2 ? h1 : h2) + 1;
    return true;
}

static Expr *parse_primary(P *p, int *h)
{
    Token *t = cur(p);
    Expr *e;
    *h = 1;
    switch (t->kind) {
    case TK_INT:
        advance(p);
        e = new_expr(p, EX_INT, t);
        e->ival = t->ival;
        return e;
    case TK_DOUBLE:
        advance(p);
        e = new_expr(p, EX_DOUBLE, t);
        e->dval = t->dval;
        return e;
    case TK_STRING:
        advance(p);
        e = new_expr(p, EX_STRING, t);
        e->sval = t->text;
        return e;
    case TK_TRUE:
    case TK_FALSE:
        advance(p);
        e = new_expr(p, EX_BOOL, t);
        e->bval = t->kind == TK_TRUE;
        return e;
    case TK_ARG:
        advance(p);
        return subst_arg(p, t);
    case TK_LBRACK: {
        /* [e1, e2, ...]: SystemDS's expression list (frame(data=["a",
         * "b"]), schema=[...], naStrings=[...]), a call of list() */
        advance(p);
        e = new_expr(p, EX_CALL, t);
        e->call.name = "list";
        Arg *v = NULL;
        int n = 0, cap = 0, hm = 0;
        while (!accept(p, TK_RBRACK)) {
            if (n > 0 && !expect(p, TK_COMMA, "',' or ']' in the expression list")) return NULL;
            Arg a = { 0 };
            a.span = span_of(p, cur(p));
            int ha;
            if (!(a.value = parse_expr(p, &ha))) return NULL;
            if (ha > hm) hm = ha;
            if (!(v = vgrow(p, v, n, &cap, sizeof(Arg)))) return NULL;
            v[n++] = a;
        }
        e->call.args = v;
        e->call.nargs = n;
        *h = hm + 1;
        return e;
    }
    case TK_LPAREN: {
        advance(p);
        e = parse_expr(p, h);
        if (!e) return NULL;
        if (!expect(p, TK_RPAREN, "')'")) return NULL;
        return e;
    }
    case TK_IDENT: {
        Token *nx = peek(p, 1);
        if (nx->kind == TK_LPAREN) return parse_call(p, h);
        /* an index must follow on the same line: "x = a <newline> [b, c]
         * = f()" is an assignment followed by a multi-assignment */
        if (nx->kind == TK_LBRACK && nx->line == t->end_line) {
            if (strstr(t->text, "::")) {
                perr(p, t, "'%s' cannot be indexed (a namespace name is not a variable)", t->text);
                return NULL;
            }
            advance(p);
            e = new_expr(p, EX_INDEX, t);
            e->index.name = t->text;
            if (!parse_index(p, &e->index.row, &e->index.col, &e->index.has_col, h)) return NULL;
            return e;
        }
        if (strstr(t->text, "::")) {
            perr(p, t, "expected '(' after the function name '%s'", t->text);
            return NULL;
        }
        advance(p);
        e = new_expr(p, EX_IDENT, t);
        e->ident = t->text;
        return e;
    }
    default: {
        char buf[128];
        perr(p, t, "expected an expression, found %s", describe(t, buf, sizeof buf));
        return NULL;
    }
    }
}

/* Prefix operators: unary minus/plus bind tighter than everything but ^;
 * ! binds looser than comparisons (!a == b is !(a == b)). */
static Expr *parse_unary(P *p, int *h)
{
    Token *t = cur(p);
    if (t->kind == TK_MINUS || t->kind == TK_PLUS || t->kind == TK_NOT) {
        advance(p);
        int ha;
        Expr *a = parse_binary(p, t->kind == TK_NOT ? PREC_CMP : PREC_POW, &ha);
        if (!a) return NULL;
        if (t->kind == TK_PLUS) {
            *h = ha;
            return a;
        }
        Expr *e = new_expr(p, EX_UNARY, t);
        e->unary.op = t->kind == TK_NOT ? OP_NOT : OP_NEG;
        e->unary.a = a;
        *h = ha + 1;
        if (!height_ok(p, *h, t)) return NULL;
        return e;
    }
    return parse_primary(p, h);
}

/* Precedence climbing over the binary operators with precedence >=
 * minprec; ^ is right-associative, all others left-associative. */
static Expr *parse_binary(P *p, int minprec, int *h)
{
    if (!enter(p)) return NULL;
    int hl = 0;
    Expr *l = parse_unary(p, &hl);
    while (l) {
        OpCode op;
        int prec = binprec(cur(p)->kind, &op);
        if (prec == 0 || prec < minprec) break;
        Token *ot = advance(p);
        int hr;
        Expr *r = parse_binary(p, op == OP_POW ? prec : prec + 1, &hr);
        if (!r) {
            l = NULL;
            break;
        }
        Expr *e = new_expr(p, EX_BINARY, ot);
        e->binary.op = op;
        e->binary.a = l;
        e->binary.b = r;
        hl = (hl > hr ? hl : hr) + 1;
        l = e;
        if (!height_ok(p, hl, ot)) l = NULL;
    }
    leave(p);
    *h = hl;
    return l;
}

/* ---- statements ---- */

typedef struct SVec {
    Stmt **v;
    int n, cap;
} SVec;

static void svec_push(P *p, SVec *sv, Stmt *s)
{
    if (!s) return;
    Stmt **nv = vgrow(p, sv->v, sv->n, &sv->cap, sizeof(Stmt *));
    if (!nv) return;
    sv->v = nv;
    sv->v[sv->n++] = s;
}

static Stmt *new_stmt(P *p, StmtKind k, const Token *t)
{
    Stmt *s = pnew(p, sizeof(Stmt));
    s->kind = k;
    s->span = span_of(p, t);
    return s;
}

static bool stmt_start(TokKind k)
{
    return k == TK_IDENT || k == TK_LBRACK || k == TK_IF || k == TK_FOR ||
           k == TK_PARFOR || k == TK_WHILE;
}

/* Skips to the next statement: past a ';', before a '}' closing the
 * current block, or before a statement start on a later line than the
 * error. */
static void sync(P *p)
{
    int parens = 0, braces = 0;
    for (;;) {
        Token *t = cur(p);
        if (t->kind == TK_EOF) return;
        if (braces == 0) {
            if (t->kind == TK_RBRACE) return;
            if (parens == 0 && t->kind == TK_SEMI) {
                advance(p);
                return;
            }
            if (parens == 0 && t->line > p->err_line && stmt_start(t->kind)) return;
        }
        switch (t->kind) {
        case TK_LPAREN: case TK_LBRACK: parens++; break;
        case TK_RPAREN: case TK_RBRACK: if (parens > 0) parens--; break;
        case TK_LBRACE: braces++; break;
        case TK_RBRACE: braces--; break;
        default: break;
        }
        advance(p);
    }
}

static void parse_statement(P *p, SVec *out, bool top);

/* Statements up to a '}' (not consumed) or the end of file. */
static void parse_stmts(P *p, Block *b, bool top)
{
    SVec sv = { 0 };
    while (!p->fatal) {
        Token *t = cur(p);
        if (t->kind == TK_EOF) break;
        if (t->kind == TK_RBRACE) {
            if (!top) break;
            perr(p, t, "unexpected '}' (no block is open)");
            advance(p);
            p->panic = false;
            continue;
        }
        int start = p->pos;
        parse_statement(p, &sv, top);
        if (p->panic) {
            sync(p);
            p->panic = false;
        }
        TokKind k = cur(p)->kind;
        if (p->pos == start && k != TK_EOF && k != TK_RBRACE) advance(p);
    }
    b->stmts = sv.v;
    b->n = sv.n;
}

/* The body of if/else/for/while: a { block } or one statement. */
static void parse_body(P *p, Block *b)
{
    Token *t = cur(p);
    if (t->kind == TK_LBRACE) {
        advance(p);
        if (!enter(p)) return;
        parse_stmts(p, b, false);
        leave(p);
        if (!p->panic && cur(p)->kind != TK_RBRACE) {
            char what[64];
            snprintf(what, sizeof what, "'}' to close the block opened at line %d", t->line);
            perr_expected(p, what);
            return;
        }
        accept(p, TK_RBRACE);
        return;
    }
    if (t->kind == TK_EOF || t->kind == TK_RBRACE) {
        perr_expected(p, "a statement");
        return;
    }
    SVec sv = { 0 };
    if (!enter(p)) return;
    parse_statement(p, &sv, false);
    leave(p);
    b->stmts = sv.v;
    b->n = sv.n;
}

/* A variable, optionally indexed, as the target of an assignment. */
static bool parse_lvalue(P *p, LValue *lv)
{
    Token *t = cur(p);
    if (t->kind != TK_IDENT) {
        perr_expected(p, "a variable name");
        return false;
    }
    if (strstr(t->text, "::")) {
        perr(p, t, "cannot assign to '%s' (a namespace name is not a variable)", t->text);
        return false;
    }
    advance(p);
    lv->name = t->text;
    lv->span = span_of(p, t);
    if (cur(p)->kind == TK_LBRACK) {
        int h;
        lv->indexed = true;
        if (!parse_index(p, &lv->row, &lv->col, &lv->has_col, &h)) return false;
    }
    return true;
}

static bool is_assign(TokKind k) { return k == TK_ASSIGN || k == TK_LARROW; }

static Stmt *parse_assign(P *p)
{
    Token *t = cur(p);
    Stmt *s = new_stmt(p, ST_ASSIGN, t);
    if (!parse_lvalue(p, &s->assign.target)) return NULL;
    Token *op = cur(p);
    if (op->kind == TK_PLUSEQ) {
        s->assign.accum = true;
    } else if (!is_assign(op->kind)) {
        perr_expected(p, "'=', '<-' or '+=' (or a function call)");
        return NULL;
    }
    advance(p);
    int h;
    s->assign.value = parse_expr(p, &h);
    return s->assign.value ? s : NULL;
}

/* [a, b, ...] = f(...) */
static Stmt *parse_massign(P *p)
{
    Token *t = advance(p);  /* [ */
    Stmt *s = new_stmt(p, ST_MASSIGN, t);
    LValue *v = NULL;
    int n = 0, cap = 0;
    for (;;) {
        LValue lv = { 0 };
        Token *tt = cur(p);
        if (!parse_lvalue(p, &lv)) return NULL;
        if (lv.indexed) {
            /* SystemDS's translator drops the index here and binds the
             * whole output to the variable: refused rather than that */
            perr(p, tt, "left indexing in the targets of a multi-assignment is not supported (target "
                 "'%s'): assign the outputs to variables, then index into '%s'", lv.name, lv.name);
            return NULL;
        }
        if (!(v = vgrow(p, v, n, &cap, sizeof(LValue)))) return NULL;
        v[n++] = lv;
        if (accept(p, TK_COMMA)) continue;
        if (!expect(p, TK_RBRACK, "',' or ']' in the list of assignment targets")) return NULL;
        break;
    }
    if (!is_assign(cur(p)->kind)) {
        perr_expected(p, "'=' after the list of assignment targets");
        return NULL;
    }
    advance(p);
    Token *ft = cur(p);
    if (ft->kind != TK_IDENT || peek(p, 1)->kind != TK_LPAREN) {
        perr(p, ft, "a multi-assignment [a, b, ...] = ... needs a function call on the right");
        return NULL;
    }
    int h;
    Expr *e = parse_call(p, &h);
    if (!e) return NULL;
    if (e->kind != EX_CALL) {
        perr(p, ft, "a multi-assignment [a, b, ...] = ... needs a function call on the right");
        return NULL;
    }
    s->massign.targets = v;
    s->massign.n = n;
    s->massign.call = e;
    return s;
}

static Stmt *parse_if(P *p)
{
    Token *t = advance(p);
    Stmt *s = new_stmt(p, ST_IF, t);
    if (!expect(p, TK_LPAREN, "'(' after 'if'")) return NULL;
    int h;
    s->if_.cond = parse_expr(p, &h);
    if (!s->if_.cond) return NULL;
    if (!expect(p, TK_RPAREN, "')' to close the condition of 'if'")) return NULL;
    parse_body(p, &s->if_.then_b);
    if (p->panic) return s;
    if (accept(p, TK_ELSE)) parse_body(p, &s->if_.else_b);
    return s;
}

static const char *const parfor_opts[] = {
    "check", "par", "mode", "opt", "taskpartitioner", "tasksize",
    "datapartitioner", "resultmerge", "log", "profile",
};

static bool parfor_opt_ok(const char *name)
{
    for (size_t i = 0; i < sizeof parfor_opts / sizeof parfor_opts[0]; i++)
        if (strcmp(parfor_opts[i], name) == 0) return true;
    return false;
}

/* Takes from, to, incr out of seq(from, to[, incr]) (positional or named
 * from=, to=, incr=). */
static bool seq_range(P *p, Stmt *s, Expr *e)
{
    if (e->kind != EX_CALL || e->call.ns || strcmp(e->call.name, "seq") != 0) return false;
    Expr *part[3] = { 0 };
    static const char *const names[3] = { "from", "to", "incr" };
    int pos = 0;
    for (int i = 0; i < e->call.nargs; i++) {
        Arg *a = &e->call.args[i];
        int k = -1;
        if (a->name) {
            for (int j = 0; j < 3; j++)
                if (strcmp(a->name, names[j]) == 0) k = j;
        } else {
            k = pos++;
        }
        if (k < 0 || k > 2 || part[k]) return false;
        part[k] = a->value;
    }
    if (!part[0] || !part[1]) return false;
    s->for_.from = part[0];
    s->for_.to = part[1];
    s->for_.incr = part[2];
    return true;
}

/* for / parfor (var in from:to | seq(...) [, name=value ...]) body */
static Stmt *parse_for(P *p)
{
    Token *t = advance(p);
    Stmt *s = new_stmt(p, ST_FOR, t);
    s->for_.parfor = t->kind == TK_PARFOR;
    const char *kw = s->for_.parfor ? "parfor" : "for";
    char what[100];
    snprintf(what, sizeof what, "'(' after '%s'", kw);
    if (!expect(p, TK_LPAREN, what)) return NULL;
    Token *v = cur(p);
    if (v->kind != TK_IDENT || strstr(v->text, "::")) {
        perr_expected(p, "the loop variable");
        return NULL;
    }
    advance(p);
    s->for_.var = v->text;
    if (!is_word(cur(p), "in")) {
        perr_expected(p, "'in' after the loop variable");
        return NULL;
    }
    advance(p);
    int h;
    Expr *e = parse_expr(p, &h);
    if (!e) return NULL;
    if (accept(p, TK_COLON)) {
        s->for_.from = e;
        s->for_.to = parse_expr(p, &h);
        if (!s->for_.to) return NULL;
    } else if (!seq_range(p, s, e)) {
        perr(p, t, "expected a range 'from:to' or seq(from, to[, incr]) in '%s'", kw);
        return NULL;
    }
    Arg *opts = NULL;
    int n = 0, cap = 0;
    while (accept(p, TK_COMMA)) {
        Token *nt = cur(p);
        if (nt->kind != TK_IDENT || peek(p, 1)->kind != TK_ASSIGN) {
            perr_expected(p, "an option name=value");
            return NULL;
        }
        advance(p);
        advance(p);
        if (!parfor_opt_ok(nt->text)) {
            perr(p, nt, "unknown %s option '%s' (allowed: check, par, mode, opt, "
                 "taskpartitioner, tasksize, datapartitioner, resultmerge, log, profile)",
                 kw, nt->text);
            return NULL;
        }
        Arg a = { .name = nt->text, .span = span_of(p, nt) };
        a.value = parse_expr(p, &h);
        if (!a.value) return NULL;
        if (a.value->kind == EX_IDENT) {  /* mode=LOCAL: a bare word */
            const char *w = a.value->ident;
            a.value->kind = EX_STRING;
            a.value->sval = w;
        }
        if (!(opts = vgrow(p, opts, n, &cap, sizeof(Arg)))) return NULL;
        opts[n++] = a;
    }
    s->for_.opts = opts;
    s->for_.nopts = n;
    snprintf(what, sizeof what, "')' to close the header of '%s'", kw);
    if (!expect(p, TK_RPAREN, what)) return NULL;
    parse_body(p, &s->for_.body);
    return s;
}

static Stmt *parse_while(P *p)
{
    Token *t = advance(p);
    Stmt *s = new_stmt(p, ST_WHILE, t);
    if (!expect(p, TK_LPAREN, "'(' after 'while'")) return NULL;
    int h;
    s->while_.cond = parse_expr(p, &h);
    if (!s->while_.cond) return NULL;
    if (!expect(p, TK_RPAREN, "')' to close the condition of 'while'")) return NULL;
    parse_body(p, &s->while_.body);
    return s;
}

static int value_type(const char *w, ValueType *vt)
{
    if (!strcasecmp(w, "double")) *vt = VT_DOUBLE;
    else if (!strcasecmp(w, "int") || !strcasecmp(w, "integer")) *vt = VT_INT;
    else if (!strcasecmp(w, "boolean") || !strcasecmp(w, "bool")) *vt = VT_BOOL;
    else if (!strcasecmp(w, "string")) *vt = VT_STRING;
    else if (!strcasecmp(w, "unknown")) *vt = VT_UNKNOWN;
    else return 0;
    return 1;
}

static int data_type(const char *w, DataType *dt)
{
    if (!strcasecmp(w, "matrix")) *dt = DT_MATRIX;
    else if (!strcasecmp(w, "frame")) *dt = DT_FRAME;
    else if (!strcasecmp(w, "list")) *dt = DT_LIST;
    else if (!strcasecmp(w, "scalar")) *dt = DT_SCALAR;
    else return 0;
    return 1;
}

/* Matrix[Double], Frame[Unknown], Double, Integer, ... (case-insensitive). */
static bool parse_type(P *p, DataType *dt, ValueType *vt)
{
    Token *t = advance(p);
    if (accept(p, TK_LBRACK)) {
        if (!data_type(t->text, dt)) {
            perr(p, t, "unknown data type '%s' (expected Matrix, Frame, List or Scalar)", t->text);
            return false;
        }
        Token *v = cur(p);
        if (v->kind != TK_IDENT || !value_type(v->text, vt)) {
            perr_expected(p, "a value type (Double, Integer, Boolean, String, Unknown)");
            return false;
        }
        advance(p);
        return expect(p, TK_RBRACK, "']' after the value type");
    }
    if (value_type(t->text, vt)) {
        *dt = *vt == VT_UNKNOWN ? DT_ANY : DT_SCALAR;
        return true;
    }
    if (data_type(t->text, dt)) {
        *vt = *dt == DT_MATRIX ? VT_DOUBLE : VT_UNKNOWN;
        return true;
    }
    perr(p, t, "unknown type '%s'", t->text);
    return false;
}

/* One parameter: [Type] name [= default] (defaults for inputs only). */
static bool parse_param(P *p, Param *pr, bool input)
{
    Token *t = cur(p);
    if (t->kind != TK_IDENT) {
        perr_expected(p, input ? "a parameter (Type name)" : "an output (Type name)");
        return false;
    }
    TokKind nk = peek(p, 1)->kind;
    if (nk == TK_IDENT || nk == TK_LBRACK) {
        if (!parse_type(p, &pr->dt, &pr->vt)) return false;
    }
    Token *nt = cur(p);
    if (nt->kind != TK_IDENT || strstr(nt->text, "::")) {
        perr_expected(p, "a parameter name");
        return false;
    }
    advance(p);
    pr->name = nt->text;
    pr->span = span_of(p, nt);
    if (cur(p)->kind == TK_ASSIGN) {
        if (!input) {
            perr(p, cur(p), "function outputs cannot have default values");
            return false;
        }
        advance(p);
        int h;
        pr->deflt = parse_expr(p, &h);
        if (!pr->deflt) return false;
    }
    return true;
}

static bool parse_params(P *p, Param **out, int *nout, bool input)
{
    Param *v = NULL;
    int n = 0, cap = 0;
    if (!accept(p, TK_RPAREN)) {
        for (;;) {
            Param pr = { 0 };
            if (!parse_param(p, &pr, input)) return false;
            if (!(v = vgrow(p, v, n, &cap, sizeof(Param)))) return false;
            v[n++] = pr;
            if (accept(p, TK_COMMA)) continue;
            if (!expect(p, TK_RPAREN, "',' or ')' in the parameter list")) return false;
            break;
        }
    }
    *out = v;
    *nout = n;
    return true;
}

/* name = function(params) [return (outputs)] { body } */
static void parse_function(P *p, bool top)
{
    Token *t = advance(p);  /* name */
    advance(p);             /* = */
    advance(p);             /* function */
    if (!top) {
        perr(p, t, "function '%s' must be defined at the top level of the script", t->text);
        return;
    }
    if (strstr(t->text, "::")) {
        perr(p, t, "a function name cannot contain a namespace ('%s')", t->text);
        return;
    }
    Func *f = pnew(p, sizeof(Func));
    f->name = t->text;
    f->file = p->file;
    f->span = span_of(p, t);
    if (!expect(p, TK_LPAREN, "'(' after 'function'")) return;
    if (!parse_params(p, &f->in, &f->nin, true)) return;
    if (accept(p, TK_RETURN)) {
        if (!expect(p, TK_LPAREN, "'(' after 'return'")) return;
        if (!parse_params(p, &f->out, &f->nout, false)) return;
    }
    Token *ob = cur(p);
    if (!expect(p, TK_LBRACE, "'{' to start the function body")) return;
    if (!enter(p)) return;
    parse_stmts(p, &f->body, false);
    leave(p);
    if (!p->panic && cur(p)->kind != TK_RBRACE) {
        char what[160];
        snprintf(what, sizeof what, "'}' to close the body of '%.40s' (opened at line %d)",
                 t->text, ob->line);
        perr_expected(p, what);
        return;
    }
    accept(p, TK_RBRACE);
    Func **nv = vgrow(p, p->funcs, p->nfuncs, &p->capfuncs, sizeof(Func *));
    if (!nv) return;
    p->funcs = nv;
    p->funcs[p->nfuncs++] = f;
}

/* name = externalFunction(params) return (outputs)
 *        implemented in (classname="...", exectype="mem", ...)
 * SystemML's Java UDFs: the declaration parses, so that scripts which
 * declare one but take another path run; the function's body is a stop()
 * naming the class, so a call fails with a clear message. */
static void parse_external_function(P *p, bool top)
{
    Token *t = advance(p);  /* name */
    advance(p);             /* = */
    advance(p);             /* externalFunction */
    if (!top) {
        perr(p, t, "function '%s' must be defined at the top level of the script", t->text);
        return;
    }
    Func *f = pnew(p, sizeof(Func));
    f->name = t->text;
    f->file = p->file;
    f->span = span_of(p, t);
    if (!expect(p, TK_LPAREN, "'(' after 'externalFunction'")) return;
    if (!parse_params(p, &f->in, &f->nin, true)) return;
    if (accept(p, TK_RETURN)) {
        if (!expect(p, TK_LPAREN, "'(' after 'return'")) return;
        if (!parse_params(p, &f->out, &f->nout, false)) return;
    }
    if (!is_word(cur(p), "implemented")) { perr_expected(p, "'implemented in (...)'"); return; }
    advance(p);
    if (!is_word(cur(p), "in")) { perr_expected(p, "'in' after 'implemented'"); return; }
    advance(p);
    Token *lp = cur(p);
    if (!expect(p, TK_LPAREN, "'(' after 'implemented in'")) return;
    Arg *args = NULL;
    int nargs = 0, h = 0;
    if (!parse_args(p, &args, &nargs, &h, "implemented in")) return;
    const char *cls = "?";
    for (int i = 0; i < nargs; i++)
        if (args[i].name && strcmp(args[i].name, "classname") == 0 && args[i].value->kind == EX_STRING)
            cls = args[i].value->sval;
    char msg[400];
    snprintf(msg, sizeof msg, "external function '%s' (Java class %s) is not supported by braid",
             t->text, cls);
    f->external = arena_strndup(p->a, cls, strlen(cls));
    Expr *call = new_expr(p, EX_CALL, lp);
    call->call.name = "stop";
    call->call.nargs = 1;
    call->call.args = pnew(p, sizeof(Arg));
    call->call.args[0].value = new_expr(p, EX_STRING, lp);
    call->call.args[0].value->sval = arena_strndup(p->a, msg, strlen(msg));
    call->call.args[0].span = span_of(p, lp);
    Stmt *st = new_stmt(p, ST_EXPR, lp);
    st->expr.e = call;
    f->body.stmts = pnew(p, sizeof(Stmt *));
    f->body.stmts[0] = st;
    f->body.n = 1;
    if (!f->external || !call->call.args[0].value->sval) { oom(p); return; }
    Func **nv = vgrow(p, p->funcs, p->nfuncs, &p->capfuncs, sizeof(Func *));
    if (!nv) return;
    p->funcs = nv;
    p->funcs[p->nfuncs++] = f;
}

/* source("path") as ns */
static void parse_source(P *p)
{
    Token *t = advance(p);  /* source */
    advance(p);             /* ( */
    Token *path = advance(p);
    advance(p);             /* ) */
    if (!is_word(cur(p), "as")) {
        perr_expected(p, "'as' after source(...)");
        return;
    }
    advance(p);
    Token *al = cur(p);
    if (al->kind != TK_IDENT || strchr(al->text, ':') || strchr(al->text, '.')) {
        perr_expected(p, "a namespace name after 'as'");
        return;
    }
    advance(p);
    SourceImport *nv = vgrow(p, p->imps, p->nimps, &p->capimps, sizeof(SourceImport));
    if (!nv) return;
    p->imps = nv;
    SourceImport *si = &p->imps[p->nimps++];
    si->path = path->text;
    si->alias = al->text;
    si->wd = p->wd;
    si->span = span_of(p, t);
}

/* One result statement of a where-loop body: R[a, b] op= expr. */
static bool parse_where_result(P *p, WhereLoop *w)
{
    Token *tt = cur(p);
    if (!parse_lvalue(p, &w->target)) return false;
    if (!w->target.indexed) {
        perr(p, tt, "the target of a where-loop must be indexed by loop variables, e.g. R[i, j]");
        return false;
    }
    Token *op = cur(p);
    if (op->kind == TK_PLUSEQ) {
        w->acc = WA_ADD;
        advance(p);
    } else if (op->kind == TK_ASSIGN) {
        w->acc = WA_SET;
        advance(p);
    } else if (op->kind == TK_IDENT && (!strcmp(op->text, "min") || !strcmp(op->text, "max")) &&
               peek(p, 1)->kind == TK_ASSIGN) {
        w->acc = op->text[1] == 'i' ? WA_MIN : WA_MAX;
        advance(p);
        advance(p);
    } else {
        perr_expected(p, "'=', '+=', 'min=' or 'max=' in the body of 'where'");
        return false;
    }
    int h;
    return (w->value = parse_expr(p, &h)) != NULL;
}

/* where (v in from:to, ...) { R[a, b] op= expr }, op= one of =, +=,
 * min=, max= (braid's extension, docs/amulet.md): becomes the ST_ASSIGN
 * R = <EX_WHERE>; with several result statements (one loop nest, several
 * results: the seed's multiple outputs) the ST_MASSIGN [R, S, ...] =
 * <EX_WHERE>. `where` is a word only here (before '(' name 'in'). */
static Stmt *parse_where(P *p)
{
    Token *t = advance(p);   /* where */
    Stmt *s = new_stmt(p, ST_ASSIGN, t);
    WhereLoop *w = pnew(p, sizeof *w);
    if (!expect(p, TK_LPAREN, "'(' after 'where'")) return NULL;
    int h;
    for (;;) {
        Token *v = cur(p);
        if (v->kind != TK_IDENT || strstr(v->text, "::")) {
            perr_expected(p, "a loop variable");
            return NULL;
        }
        if (w->nvars == WHERE_MAXVARS) {
            perr(p, v, "a where-loop has at most %d loop variables", WHERE_MAXVARS);
            return NULL;
        }
        advance(p);
        WhereVar *wv = &w->vars[w->nvars++];
        wv->name = v->text;
        wv->span = span_of(p, v);
        if (!is_word(cur(p), "in")) {
            perr_expected(p, "'in' after the loop variable");
            return NULL;
        }
        advance(p);
        if (!(wv->from = parse_expr(p, &h))) return NULL;
        if (!expect(p, TK_COLON, "':' in the range from:to of a where-loop")) return NULL;
        if (!(wv->to = parse_expr(p, &h))) return NULL;
        if (accept(p, TK_COMMA)) continue;
        if (!expect(p, TK_RPAREN, "',' or ')' in the loop variables of 'where'")) return NULL;
        break;
    }
    if (!expect(p, TK_LBRACE, "'{' to open the body of 'where'")) return NULL;
    if (!parse_where_result(p, w)) return NULL;
    /* further results of the same loop nest: R[i,j] += e1; S[i,j] min= e2 */
    int nres = 1;
    WhereLoop *last = w;
    for (;;) {
        while (accept(p, TK_SEMI)) {}
        if (cur(p)->kind == TK_RBRACE || cur(p)->kind == TK_EOF) break;
        if (nres == WHERE_MAXRES) {
            perr(p, cur(p), "a where-loop computes at most %d results", WHERE_MAXRES);
            return NULL;
        }
        WhereLoop *x = pnew(p, sizeof *x);
        memcpy(x->vars, w->vars, sizeof w->vars);
        x->nvars = w->nvars;
        if (!parse_where_result(p, x)) return NULL;
        last->more = x;
        last = x;
        nres++;
    }
    if (!expect(p, TK_RBRACE, "'}' after the statements of a where-loop")) return NULL;
    w->span = span_of(p, t);
    for (WhereLoop *x = w->more; x; x = x->more) x->span = w->span;
    Expr *e = new_expr(p, EX_WHERE, t);
    e->where = w;
    if (nres == 1) {
        s->assign.target.name = w->target.name;
        s->assign.target.span = w->target.span;
        s->assign.value = e;
        return s;
    }
    /* several results: [R, S, ...] = <EX_WHERE> */
    Stmt *m = new_stmt(p, ST_MASSIGN, t);
    LValue *v = pnew(p, (size_t)nres * sizeof *v);
    int k = 0;
    for (WhereLoop *x = w; x; x = x->more, k++) {
        v[k].name = x->target.name;
        v[k].span = x->target.span;
    }
    m->massign.targets = v;
    m->massign.n = nres;
    m->massign.call = e;
    return m;
}

static void parse_statement(P *p, SVec *out, bool top)
{
    Token *t = cur(p);
    Token *n1 = peek(p, 1);
    Stmt *s = NULL;
    if (!enter(p)) return;
    switch (t->kind) {
    case TK_SEMI:
        advance(p);
        break;
    case TK_IF: s = parse_if(p); break;
    case TK_FOR:
    case TK_PARFOR: s = parse_for(p); break;
    case TK_WHILE: s = parse_while(p); break;
    case TK_LBRACK: s = parse_massign(p); break;
    case TK_LBRACE: {
        /* a bare { ... } block: its statements join the enclosing block */
        advance(p);
        Block b = { 0 };
        parse_stmts(p, &b, false);
        if (!p->panic && !expect(p, TK_RBRACE, "'}'")) break;
        for (int i = 0; i < b.n; i++) svec_push(p, out, b.stmts[i]);
        break;
    }
    case TK_IDENT:
        if (strcmp(t->text, "where") == 0 && n1->kind == TK_LPAREN && peek(p, 2)->kind == TK_IDENT &&
            is_word(peek(p, 3), "in")) {
            s = parse_where(p);
        } else if (strcmp(t->text, "source") == 0 && n1->kind == TK_LPAREN &&
            peek(p, 2)->kind == TK_STRING && peek(p, 3)->kind == TK_RPAREN) {
            parse_source(p);
        } else if (strcmp(t->text, "setwd") == 0 && n1->kind == TK_LPAREN &&
                   peek(p, 2)->kind == TK_STRING && peek(p, 3)->kind == TK_RPAREN) {
            /* setwd("dir"): SystemDS's path statement; source() paths
             * that follow are taken relative to dir */
            advance(p);
            advance(p);
            p->wd = advance(p)->text;
            advance(p);
        } else if (is_assign(n1->kind) && peek(p, 2)->kind == TK_FUNCTION) {
            parse_function(p, top);
        } else if (is_assign(n1->kind) && is_word(peek(p, 2), "externalFunction") &&
                   peek(p, 3)->kind == TK_LPAREN) {
            parse_external_function(p, top);
        } else if (n1->kind == TK_LPAREN) {
            int h;
            Expr *e = parse_expr(p, &h);
            if (e && e->kind != EX_CALL) {
                perr(p, t, "a statement must be an assignment or a function call");
            } else if (e) {
                s = new_stmt(p, ST_EXPR, t);
                s->expr.e = e;
            }
        } else {
            s = parse_assign(p);
        }
        break;
    case TK_ARG:
        perr(p, t, "cannot assign to the command-line argument '$%s'", t->text);
        break;
    default: {
        char buf[128];
        perr(p, t, "expected a statement, found %s", describe(t, buf, sizeof buf));
        break;
    }
    }
    leave(p);
    if (p->panic) return;
    svec_push(p, out, s);
    while (accept(p, TK_SEMI)) {}
}

/* ---- entry points ---- */

int parse_file(Arena *a, Diag *d, const char *file, const char *text,
               size_t len, const LangOptions *o, ParsedFile *out)
{
    memset(out, 0, sizeof *out);
    int before = diag_nerrors(d);
    int ntok;
    Token *toks = lex_tokens(a, d, file, text, len, &ntok);
    if (!toks) {
        Span s = { file, 0, 0 };
        diag_error(d, s, "out of memory while reading");
        return 1;
    }
    int lexerrs = diag_nerrors(d) - before;
    P *p = calloc(1, sizeof(P));
    if (!p) {
        free(toks);
        Span s = { file, 0, 0 };
        diag_error(d, s, "out of memory while parsing");
        return 1;
    }
    p->a = a;
    p->d = d;
    p->file = file;
    p->o = o;
    p->t = toks;
    p->n = ntok;
    parse_stmts(p, &out->main, true);
    out->funcs = p->funcs;
    out->nfuncs = p->nfuncs;
    out->imports = p->imps;
    out->nimports = p->nimps;
    int nerr = p->nerr + lexerrs;
    if (p->fatal && nerr == 0) nerr = 1;
    free(p);
    free(toks);
    return nerr;
}

Expr *parse_expression(Arena *a, Diag *d, const char *text, const LangOptions *o)
{
    int before = diag_nerrors(d);
    int ntok;
    Token *toks = lex_tokens(a, d, "<expr>", text, strlen(text), &ntok);
    if (!toks) return NULL;
    P *p = calloc(1, sizeof(P));
    if (!p) {
        free(toks);
        return NULL;
    }
    p->a = a;
    p->d = d;
    p->file = "<expr>";
    p->o = o;
    p->t = toks;
    p->n = ntok;
    int h;
    Expr *e = parse_expr(p, &h);
    if (e && cur(p)->kind != TK_EOF) {
        perr_expected(p, "end of expression");
        e = NULL;
    }
    if (p->fatal) e = NULL;
    free(p);
    free(toks);
    if (diag_nerrors(d) != before) return NULL;
    return e;
}
