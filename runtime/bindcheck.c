/* bindcheck.c: the binding report of `braid -bindcheck` (bindcheck.h). */
#include "bindcheck.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../matrix/format.h"

/* s quoted, with backslash, quote and control characters escaped. */
static void put_quoted(FILE *f, const char *s, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\\' || c == '"') fprintf(f, "\\%c", c);
        else if (c == '\n') fputs("\\n", f);
        else if (c == '\t') fputs("\\t", f);
        else if (c < 0x20 || c == 0x7f) fprintf(f, "\\x%02x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

/* One value as bindcheck.h describes it. depth bounds nested lists. */
static int put_value(FILE *f, const Value *v, int depth, BrErr *e)
{
    char buf[FMT_NUM_MAX];
    switch (v->kind) {
    case V_DOUBLE:
        fmt_double(v->d, buf, sizeof buf);
        fprintf(f, "double %s", buf);
        return 0;
    case V_INT: fprintf(f, "int %lld", (long long)v->i); return 0;
    case V_BOOL: fprintf(f, "boolean %s", fmt_bool(v->b)); return 0;
    case V_STRING:
        fputs("string ", f);
        put_quoted(f, v->s->s, v->s->len);
        return 0;
    case V_MATRIX: {
        const MB *m = v->m;
        if (mb_host(m, e)) return -1;
        fprintf(f, "matrix %lldx%lld ", (long long)m->rows, (long long)m->cols);
        if (m->rows > 0 && m->cols > 0) {
            fmt_double(mb_get(m, 0, 0), buf, sizeof buf);
            fputs(buf, f);
        } else fputc('-', f);
        return 0;
    }
    case V_FRAME: {
        const FB *fb = v->f;
        fprintf(f, "frame %lldx%lld ", (long long)fb->rows, (long long)fb->cols);
        if (fb->rows > 0 && fb->cols > 0) {
            const char *t = fb_cell_text(fb, 0, 0, buf);
            if (t) put_quoted(f, t, strlen(t));
            else fputs("null", f);
        } else fputc('-', f);
        return 0;
    }
    case V_LIST: {
        const List *l = v->l;
        fprintf(f, "list %d (", l->n);
        for (int i = 0; i < l->n; i++) {
            if (i) fputs(", ", f);
            if (l->names && l->names[i]) fprintf(f, "%s=", l->names[i]);
            if (depth >= 8) fputs("...", f);
            else if (put_value(f, &l->items[i], depth + 1, e)) return -1;
        }
        fputc(')', f);
        return 0;
    }
    case V_DIST:
        fprintf(f, "matrix %lldx%lld distributed", (long long)v->dm->rows, (long long)v->dm->cols);
        return 0;
    case V_NONE: fputs("none", f); return 0;
    }
    fputs("none", f);
    return 0;
}

static const char *type_text(DataType dt, ValueType vt)
{
    switch (dt) {
    case DT_MATRIX: return "matrix";
    case DT_FRAME: return "frame";
    case DT_LIST: return "list";
    case DT_SCALAR:
        return vt == VT_DOUBLE ? "double" : vt == VT_INT ? "int" : vt == VT_BOOL ? "boolean"
             : vt == VT_STRING ? "string" : "scalar";
    default: return "unknown";
    }
}

/* An empty value of output p's declared type: a 0 x 0 matrix or frame,
 * an empty list, 0, FALSE or "". */
static Value empty_output(const Param *p, BrErr *e)
{
    switch (p->dt) {
    case DT_MATRIX: {
        MB *m = mb_dense(0, 0, e);
        return m ? val_matrix(m) : val_none();
    }
    case DT_FRAME: {
        FB *fb = fb_new(0, 0, NULL, e);
        return fb ? val_frame(fb) : val_none();
    }
    case DT_LIST: return val_list_new(0);
    case DT_SCALAR:
        return p->vt == VT_INT ? val_int(0) : p->vt == VT_BOOL ? val_bool(false)
             : p->vt == VT_STRING ? val_string("") : val_double(0);
    default: return val_double(0);
    }
}

int rt_bindcheck_call(Rt *rt, const Func *fn, const Value *args, Value *out)
{
    char *text = NULL;
    size_t len = 0;
    BrErr e = {0};
    FILE *f = open_memstream(&text, &len);
    if (!f) return rt_fail(rt, fn->span, BR_ENOMEM, "out of memory");
    int rc = 0;
    fprintf(f, "bind %s %s", fn->name, fn->file ? fn->file : "<script>");
    for (int i = 0; i < fn->nin && !rc; i++) {
        fprintf(f, "|%s=", fn->in[i].name);
        rc = put_value(f, &args[i], 0, &e);
    }
    fputs("|->", f);
    for (int i = 0; i < fn->nout; i++)
        fprintf(f, "|%s %s", type_text(fn->out[i].dt, fn->out[i].vt), fn->out[i].name);
    if (fclose(f) != 0 || !text) {
        free(text);
        return rt_fail(rt, fn->span, BR_ENOMEM, "out of memory");
    }
    if (rc) {
        free(text);
        return rt_fail(rt, fn->span, e.code ? e.code : BR_EFAIL, "%s", e.code ? e.msg : "failed");
    }
    rt_print_line(rt, text);
    free(text);

    Value l = val_list_new(fn->nout);
    if (l.kind != V_LIST) return rt_fail(rt, fn->span, BR_ENOMEM, "out of memory");
    for (int i = 0; i < fn->nout; i++) {
        Value v = empty_output(&fn->out[i], &e);
        if (v.kind == V_NONE || list_append(l.l, v, NULL, &e)) {
            val_release(&l);
            return rt_fail(rt, fn->span, e.code ? e.code : BR_ENOMEM, "%s", e.code ? e.msg : "out of memory");
        }
    }
    *out = l;
    return 0;
}
