/* dump.c: s-expression printer for the AST. */
#include "dump.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Shortest %g form that reads back as d, always with a fraction or an
 * exponent (so 2.0 is told apart from the integer 2). */
static void dump_double(FILE *f, double d)
{
    if (isnan(d)) {
        fputs("NaN", f);
        return;
    }
    if (isinf(d)) {
        fputs(d > 0 ? "Inf" : "-Inf", f);
        return;
    }
    char buf[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, d);
        if (strtod(buf, NULL) == d) break;
    }
    fputs(buf, f);
    if (!strpbrk(buf, ".e")) fputs(".0", f);
}

static void dump_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        switch (*s) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\t': fputs("\\t", f); break;
        case '\r': fputs("\\r", f); break;
        default: fputc(*s, f); break;
        }
    }
    fputc('"', f);
}

static void dump_dim(FILE *f, const IndexDim *d)
{
    if (d->all) {
        fputc('_', f);
    } else if (d->hi) {
        fputs("(: ", f);
        lang_dump_expr(f, d->lo);
        fputc(' ', f);
        lang_dump_expr(f, d->hi);
        fputc(')', f);
    } else {
        lang_dump_expr(f, d->lo);
    }
}

static void dump_index(FILE *f, const char *name, const IndexDim *row,
                       const IndexDim *col, bool has_col)
{
    fprintf(f, "(idx %s ", name);
    dump_dim(f, row);
    if (has_col) {
        fputc(' ', f);
        dump_dim(f, col);
    }
    fputc(')', f);
}

void lang_dump_expr(FILE *f, const Expr *e)
{
    if (!e) {
        fputs("<null>", f);
        return;
    }
    switch (e->kind) {
    case EX_INT: fprintf(f, "%lld", (long long)e->ival); break;
    case EX_DOUBLE: dump_double(f, e->dval); break;
    case EX_BOOL: fputs(e->bval ? "TRUE" : "FALSE", f); break;
    case EX_STRING: dump_string(f, e->sval ? e->sval : ""); break;
    case EX_IDENT: fputs(e->ident, f); break;
    case EX_UNARY:
        fprintf(f, "(%s ", e->unary.op == OP_NEG ? "neg" : op_info[e->unary.op].name);
        lang_dump_expr(f, e->unary.a);
        fputc(')', f);
        break;
    case EX_BINARY:
        fprintf(f, "(%s ", op_info[e->binary.op].name);
        lang_dump_expr(f, e->binary.a);
        fputc(' ', f);
        lang_dump_expr(f, e->binary.b);
        fputc(')', f);
        break;
    case EX_CALL:
        fputc('(', f);
        if (e->call.ns) fprintf(f, "%s::", e->call.ns);
        fputs(e->call.name, f);
        for (int i = 0; i < e->call.nargs; i++) {
            fputc(' ', f);
            if (e->call.args[i].name) fprintf(f, "%s=", e->call.args[i].name);
            lang_dump_expr(f, e->call.args[i].value);
        }
        fputc(')', f);
        break;
    case EX_INDEX:
        dump_index(f, e->index.name, &e->index.row, &e->index.col, e->index.has_col);
        break;
    case EX_WHERE: {
        static const char *const acc[] = {"=", "+=", "min=", "max="};
        const WhereLoop *w = e->where;
        fputs("(where", f);
        for (int v = 0; v < w->nvars; v++) {
            fprintf(f, " (%s ", w->vars[v].name);
            lang_dump_expr(f, w->vars[v].from);
            fputc(' ', f);
            lang_dump_expr(f, w->vars[v].to);
            if (w->vars[v].step) {
                fputc(' ', f);
                lang_dump_expr(f, w->vars[v].step);
            }
            fputc(')', f);
        }
        for (const WhereLoop *x = w; x; x = x->more) {
            fputc(' ', f);
            dump_index(f, x->target.name, &x->target.row, &x->target.col, x->target.has_col);
            fprintf(f, " %s ", acc[x->acc]);
            lang_dump_expr(f, x->value);
        }
        fputc(')', f);
        break;
    }
    }
}

static void dump_lvalue(FILE *f, const LValue *lv)
{
    if (lv->indexed) dump_index(f, lv->name, &lv->row, &lv->col, lv->has_col);
    else fputs(lv->name, f);
}

static void dump_stmt(FILE *f, const Stmt *s, int ind)
{
    fprintf(f, "%*s", ind, "");
    switch (s->kind) {
    case ST_ASSIGN:
        dump_lvalue(f, &s->assign.target);
        fputs(s->assign.accum ? " += " : " = ", f);
        lang_dump_expr(f, s->assign.value);
        fputc('\n', f);
        break;
    case ST_MASSIGN:
        fputc('[', f);
        for (int i = 0; i < s->massign.n; i++) {
            if (i) fputs(", ", f);
            dump_lvalue(f, &s->massign.targets[i]);
        }
        fputs("] = ", f);
        lang_dump_expr(f, s->massign.call);
        fputc('\n', f);
        break;
    case ST_IF:
        fputs("if ", f);
        lang_dump_expr(f, s->if_.cond);
        fputc('\n', f);
        lang_dump_block(f, &s->if_.then_b, ind + 2);
        if (s->if_.else_b.n) {
            fprintf(f, "%*selse\n", ind, "");
            lang_dump_block(f, &s->if_.else_b, ind + 2);
        }
        fprintf(f, "%*send\n", ind, "");
        break;
    case ST_FOR:
        fprintf(f, "%s %s in ", s->for_.parfor ? "parfor" : "for", s->for_.var);
        lang_dump_expr(f, s->for_.from);
        fputs(" : ", f);
        lang_dump_expr(f, s->for_.to);
        if (s->for_.incr) {
            fputs(" by ", f);
            lang_dump_expr(f, s->for_.incr);
        }
        for (int i = 0; i < s->for_.nopts; i++) {
            fprintf(f, ", %s=", s->for_.opts[i].name);
            lang_dump_expr(f, s->for_.opts[i].value);
        }
        fputc('\n', f);
        lang_dump_block(f, &s->for_.body, ind + 2);
        fprintf(f, "%*send\n", ind, "");
        break;
    case ST_WHILE:
        fputs("while ", f);
        lang_dump_expr(f, s->while_.cond);
        fputc('\n', f);
        lang_dump_block(f, &s->while_.body, ind + 2);
        fprintf(f, "%*send\n", ind, "");
        break;
    case ST_EXPR:
        lang_dump_expr(f, s->expr.e);
        fputc('\n', f);
        break;
    }
}

void lang_dump_block(FILE *f, const Block *b, int indent)
{
    for (int i = 0; i < b->n; i++) dump_stmt(f, b->stmts[i], indent);
}

static const char *type_name(DataType dt, ValueType vt)
{
    static const char *const vts[] = { "Unknown", "Double", "Integer", "Boolean", "String" };
    static const char *const m[] = { "Matrix[Unknown]", "Matrix[Double]", "Matrix[Integer]",
                                     "Matrix[Boolean]", "Matrix[String]" };
    switch (dt) {
    case DT_MATRIX: return m[vt];
    case DT_FRAME: return "Frame";
    case DT_LIST: return "List";
    case DT_SCALAR: return vts[vt];
    default: return "Unknown";
    }
}

void lang_dump_func(FILE *f, const Func *fn)
{
    fprintf(f, "function %s%s%s(", fn->ns && fn->ns[0] ? fn->ns : "",
            fn->ns && fn->ns[0] ? "::" : "", fn->name);
    for (int i = 0; i < fn->nin; i++) {
        fprintf(f, "%s%s %s", i ? ", " : "", type_name(fn->in[i].dt, fn->in[i].vt), fn->in[i].name);
        if (fn->in[i].deflt) {
            fputs(" = ", f);
            lang_dump_expr(f, fn->in[i].deflt);
        }
    }
    fputs(") -> (", f);
    for (int i = 0; i < fn->nout; i++)
        fprintf(f, "%s%s %s", i ? ", " : "", type_name(fn->out[i].dt, fn->out[i].vt),
                fn->out[i].name);
    fputs(")\n", f);
    lang_dump_block(f, &fn->body, 2);
}
