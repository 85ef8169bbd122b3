/* signature.c: introspection for clients that build DML (the Python
 * package's lazy API, python/braid/lazy.py): the builtin names DML
 * resolves, their signatures, and a prepared script's plan as text.
 * Signatures come from the same sources the compiler uses: the native
 * rows of base/ops.def and the DML functions of the builtin library,
 * loaded through the front end, so a wrapper generated from them calls
 * exactly what a script calling the name would. */
#include "../include/braid.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/ops.h"
#include "../lang/dump.h"
#include "../lang/load.h"
#include "../plan/program.h"
#include "script.h"

int braid_explain(BraidScript *s, const char *kind, char **text)
{
    char *buf = NULL;
    size_t len = 0;
    if (kind && (!strcmp(kind, "recompile_hops") || !strcmp(kind, "recompile_dot"))) {
        const char *t = !strcmp(kind, "recompile_hops") ? s->recompiled : s->recompiled_dot;
        *text = strdup(t ? t : "");
        return *text ? 0 : api_fail(s, "out of memory");
    }
    if (!kind || (strcmp(kind, "hops") && strcmp(kind, "runtime") && strcmp(kind, "dot") && strcmp(kind, "dot_all")))
        return api_fail(s, "explain: kind must be \"hops\", \"runtime\", \"dot\", \"dot_all\", "
                           "\"recompile_hops\" or \"recompile_dot\"");
    RtProgram *p = api_program(s);   /* with transposed views bound: their variant */
    if (!p) return -1;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return api_fail(s, "out of memory");
    if (!strcmp(kind, "hops")) plan_print_hops(p, f);
    else if (!strcmp(kind, "runtime")) plan_print(p, f);
    else plan_print_dot(p, f, !strcmp(kind, "dot_all"));
    if (fclose(f) != 0 || !buf) { free(buf); return api_fail(s, "out of memory"); }
    *text = buf;
    return 0;
}

void braid_trace_recompile(BraidScript *s, bool on) { s->trace = on; }

/* ---- loop statistics ---- */

void braid_count_loops(BraidScript *s, bool on) { s->count_loops = on; }

int braid_loops(const BraidScript *s, const BraidLoop **loops)
{
    *loops = s->loops;
    return s->nloops;
}

void api_free_loops(BraidScript *s)
{
    for (int i = 0; i < s->nloops; i++) free((char *)s->loops[i].file);
    free(s->loops);
    s->loops = NULL;
    s->nloops = 0;
}

int api_keep_loops(BraidScript *s, const Rt *rt)
{
    api_free_loops(s);
    if (!rt->nloops) return 0;
    if (!(s->loops = calloc((size_t)rt->nloops, sizeof *s->loops))) return -1;
    for (int i = 0; i < rt->nloops; i++, s->nloops++) {
        const RtLoop *l = &rt->loops[i];
        s->loops[i] = (BraidLoop){.file = strdup(l->span.file ? l->span.file : "<script>"), .line = l->span.line,
                                  .col = l->span.col, .entries = l->entries, .iterations = l->iterations,
                                  .max_iterations = l->max_iterations};
        if (!s->loops[i].file) return -1;
    }
    return 0;
}

/* ---- names ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends a copy of name to the growing array; -1 when out of memory. */
static int push_name(char ***v, int *n, int *cap, const char *name, size_t len)
{
    if (*n == *cap) {
        int nc = *cap ? 2 * *cap : 256;
        char **nv = realloc(*v, (size_t)nc * sizeof *nv);
        if (!nv) return -1;
        *v = nv;
        *cap = nc;
    }
    char *c = strndup(name, len);
    if (!c) return -1;
    (*v)[(*n)++] = c;
    return 0;
}

int braid_builtin_names(char ***names, int *n)
{
    char **v = NULL;
    int cnt = 0, cap = 0, rc = 0;
    for (int i = 0; i < BI__COUNT && rc == 0; i++)
        rc = push_name(&v, &cnt, &cap, builtin_info[i].name, strlen(builtin_info[i].name));
    char *dir = api_builtin_dir();
    DIR *d = dir ? opendir(dir) : NULL;
    for (struct dirent *e; d && rc == 0 && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len > 4 && !strcmp(e->d_name + len - 4, ".dml"))
            rc = push_name(&v, &cnt, &cap, e->d_name, len - 4);
    }
    if (d) closedir(d);
    free(dir);
    if (rc != 0) {
        for (int i = 0; i < cnt; i++) free(v[i]);
        free(v);
        return -1;
    }
    qsort(v, (size_t)cnt, sizeof *v, cmp_str);
    int w = 0;   /* drop duplicates (a name both native and a library file) */
    for (int i = 0; i < cnt; i++) {
        if (w > 0 && !strcmp(v[w - 1], v[i])) free(v[i]);
        else v[w++] = v[i];
    }
    *names = v;
    *n = w;
    return 0;
}

/* ---- signatures ---- */

static const char *dt_text(DataType dt)
{
    switch (dt) {
    case DT_MATRIX: return "matrix";
    case DT_FRAME: return "frame";
    case DT_LIST: return "list";
    case DT_SCALAR: return "scalar";
    default: return "any";
    }
}

static const char *vt_text(ValueType vt)
{
    switch (vt) {
    case VT_DOUBLE: return "double";
    case VT_INT: return "int";
    case VT_BOOL: return "boolean";
    case VT_STRING: return "string";
    default: return "";
    }
}

static BraidSignature *sig_new(const char *name, int nin, int nout)
{
    BraidSignature *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->name = strdup(name);
    s->in = calloc((size_t)nin + 1, sizeof *s->in);
    s->out = calloc((size_t)nout + 1, sizeof *s->out);
    if (!s->name || !s->in || !s->out) { braid_signature_free(s); return NULL; }
    return s;
}

/* Fills p; the strings are copies (deflt may be NULL). -1: out of memory. */
static int set_param(BraidParam *p, const char *name, size_t len, const char *type,
                     const char *vt, const char *deflt)
{
    p->name = strndup(name, len);
    p->type = strdup(type);
    p->value_type = strdup(vt);
    p->deflt = deflt ? strdup(deflt) : NULL;
    return p->name && p->type && p->value_type && (!deflt || p->deflt) ? 0 : -1;
}

/* The result kind of a native builtin: an aggregate over all cells is a
 * scalar; one over rows or columns a matrix; else the table's type. */
static const char *native_result(const BuiltinInfo *b)
{
    if (b->op != OP__COUNT && op_info[b->op].kind == OK_AGG)
        return b->dir == DIR_FULL ? "scalar" : "matrix";
    return dt_text(b->dt);
}

/* A native builtin from its params column ("a,b=1,..."). */
static BraidSignature *native_signature(const BuiltinInfo *b)
{
    int nin = 0;
    bool varargs = false;
    for (const char *p = b->params; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 3 && !strncmp(p, "...", 3)) varargs = true;
        else if (len > 0) nin++;
        p += len + (end ? 1 : 0);
    }
    int nout = b->nouts > 1 ? b->nouts : 1;
    BraidSignature *s = sig_new(b->name, nin, nout);
    if (!s) return NULL;
    s->varargs = varargs;
    s->sidefx = b->sidefx;
    int rc = 0;
    for (const char *p = b->params; *p && rc == 0;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        if (!(len == 3 && !strncmp(p, "...", 3)) && len > 0) {
            char *dflt = eq ? strndup(eq + 1, len - (size_t)(eq + 1 - p)) : NULL;
            rc = (eq && !dflt) ? -1
               : set_param(&s->in[s->nin++], p, eq ? (size_t)(eq - p) : len, "any", "", dflt);
            free(dflt);
        }
        p += len + (end ? 1 : 0);
    }
    const char *res = b->nouts > 1 ? "any" : native_result(b);
    for (int i = 0; i < nout && rc == 0; i++, s->nout++)
        rc = set_param(&s->out[i], "", 0, res, b->nouts > 1 ? "" : vt_text(b->vt), NULL);
    if (rc != 0) { braid_signature_free(s); return NULL; }
    return s;
}

/* A default expression as braid prints it ((neg 1), TRUE, "a", ...). */
static char *expr_text(const Expr *e)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    lang_dump_expr(f, e);
    if (fclose(f) != 0) { free(buf); return NULL; }
    return buf;
}

static int copy_params(BraidParam *dst, const Param *src, int n, int *count)
{
    for (int i = 0; i < n; i++) {
        (*count)++;   /* counted first: a failed copy is freed with the rest */
        char *d = src[i].deflt ? expr_text(src[i].deflt) : NULL;
        int rc = (src[i].deflt && !d) ? -1
               : set_param(&dst[i], src[i].name, strlen(src[i].name), dt_text(src[i].dt),
                           vt_text(src[i].vt), d);
        free(d);
        if (rc != 0) return -1;
    }
    return 0;
}

static BraidSignature *library_signature(const char *name, char **err)
{
    char *dir = api_builtin_dir();
    Diag *d = diag_new();
    LangOptions lo = {.builtin_dir = dir};
    Program *p = dir && d ? lang_load_string("", "<signature>", &lo, d) : NULL;
    Func *f = p ? lang_find_func(p, NULL, name) : NULL;
    BraidSignature *s = f ? sig_new(name, f->nin, f->nout) : NULL;
    if (s) {
        s->library = true;
        s->file = strdup(f->file ? f->file : "");
        if (!s->file || copy_params(s->in, f->in, f->nin, &s->nin) != 0
            || copy_params(s->out, f->out, f->nout, &s->nout) != 0) {
            braid_signature_free(s);
            s = NULL;
            if (err) *err = strdup("out of memory");
        }
    } else if (err) {
        char m[400];
        snprintf(m, sizeof m, "'%s' is no builtin function of braid (no native builtin and no "
                 "loadable %s/%s.dml)", name, dir ? dir : "scripts/builtin", name);
        *err = strdup(m);
    }
    lang_program_free(p);
    diag_free(d);
    free(dir);
    return s;
}

BraidSignature *braid_builtin_signature(const char *name, char **err)
{
    if (err) *err = NULL;
    const BuiltinInfo *b = ops_builtin(name);
    if (b) {   /* DML resolves a native builtin before the library */
        BraidSignature *s = native_signature(b);
        if (!s && err) *err = strdup("out of memory");
        return s;
    }
    return library_signature(name, err);
}

static void params_free(BraidParam *p, int n)
{
    for (int i = 0; p && i < n; i++) {
        free((char *)p[i].name);
        free((char *)p[i].type);
        free((char *)p[i].value_type);
        free((char *)p[i].deflt);
    }
    free(p);
}

void braid_signature_free(BraidSignature *s)
{
    if (!s) return;
    params_free(s->in, s->nin);
    params_free(s->out, s->nout);
    free((char *)s->name);
    free((char *)s->file);
    free(s);
}
