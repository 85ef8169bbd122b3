/* value.c: reference-counted run-time values. */
#include "value.h"

#include "format.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

Value val_string_n(const char *s, size_t n)
{
    Value v = {.kind = V_STRING};
    Str *st = br_malloc(sizeof *st + n + 1);
    if (!st) { v.kind = V_NONE; return v; }
    st->refs = 1;
    st->len = n;
    memcpy(st->s, s, n);
    st->s[n] = 0;
    v.s = st;
    return v;
}

Value val_string(const char *s) { return val_string_n(s, strlen(s)); }

Value val_list_new(int cap)
{
    Value v = {.kind = V_LIST};
    List *l = br_calloc(1, sizeof *l);
    if (!l) { v.kind = V_NONE; return v; }
    l->refs = 1;
    if (cap > 0) {
        l->items = br_calloc((size_t)cap, sizeof(Value));
        if (!l->items) { free(l); v.kind = V_NONE; return v; }
        l->cap = cap;
    }
    v.l = l;
    return v;
}

int list_append(List *l, Value item, const char *name, BrErr *e)
{
    /* on failure the item is released: callers hand it over either way */
    bool ok = l != NULL;
    if (ok && l->n == l->cap) {
        int nc = l->cap ? l->cap * 2 : 4;
        Value *it = br_realloc(l->items, (size_t)nc * sizeof(Value));
        if (it) l->items = it;
        char **nm = it && l->names ? br_realloc(l->names, (size_t)nc * sizeof(char *)) : NULL;
        if (nm) l->names = nm;
        ok = it && (!l->names || nm);
        if (ok) l->cap = nc;
    }
    if (ok && name && !l->names) ok = (l->names = br_calloc((size_t)l->cap, sizeof(char *))) != NULL;
    char *nmc = ok && name ? br_strdup(name) : NULL;
    if (!ok || (name && !nmc)) {
        val_release(&item);
        return br_err(e, BR_ENOMEM, "out of memory");
    }
    if (l->names) l->names[l->n] = nmc;
    l->items[l->n++] = item;
    return 0;
}

int list_find(const List *l, const char *name)
{
    if (!l->names) return -1;
    for (int i = 0; i < l->n; i++)
        if (l->names[i] && strcmp(l->names[i], name) == 0) return i;
    return -1;
}

Value val_retain(Value v)
{
    switch (v.kind) {
    case V_MATRIX: mb_retain(v.m); break;
    case V_STRING: __atomic_add_fetch(&v.s->refs, 1, __ATOMIC_RELAXED); break;
    case V_LIST: __atomic_add_fetch(&v.l->refs, 1, __ATOMIC_RELAXED); break;
    case V_FRAME: fb_retain(v.f); break;
    case V_DIST: __atomic_add_fetch(&v.dm->refs, 1, __ATOMIC_RELAXED); break;
    default: break;
    }
    return v;
}

static void list_free(List *l)
{
    for (int i = 0; i < l->n; i++) {
        val_release(&l->items[i]);
        if (l->names) free(l->names[i]);
    }
    free(l->items);
    free(l->names);
    free(l);
}

void val_release(Value *v)
{
    switch (v->kind) {
    case V_MATRIX: mb_release(v->m); break;
    case V_STRING: {
        int left = __atomic_sub_fetch(&v->s->refs, 1, __ATOMIC_ACQ_REL);
        assert(left >= 0);   /* released more often than retained */
        if (left == 0) free(v->s);
        break;
    }
    case V_LIST: {
        int left = __atomic_sub_fetch(&v->l->refs, 1, __ATOMIC_ACQ_REL);
        assert(left >= 0);
        if (left == 0) list_free(v->l);
        break;
    }
    case V_FRAME: fb_release(v->f); break;
    case V_DIST: {
        int left = __atomic_sub_fetch(&v->dm->refs, 1, __ATOMIC_ACQ_REL);
        assert(left >= 0);
        if (left == 0) v->dm->free(v->dm);
        break;
    }
    default: break;
    }
    v->kind = V_NONE;
    v->i = 0;
}

int val_host(const Value *v, BrErr *e)
{
    if (v->kind == V_MATRIX) return mb_host(v->m, e);
    if (v->kind != V_LIST || !v->l) return 0;
    for (int64_t i = 0; i < v->l->n; i++)
        if (val_host(&v->l->items[i], e)) return -1;
    return 0;
}

double val_as_double(const Value *v)
{
    switch (v->kind) {
    case V_DOUBLE: return v->d;
    case V_INT: return (double)v->i;
    case V_BOOL: return v->b ? 1.0 : 0.0;
    case V_STRING: { char *end; double d = strtod(v->s->s, &end); return end != v->s->s ? d : NAN; }
    case V_MATRIX: return (v->m->rows == 1 && v->m->cols == 1) ? mb_get(v->m, 0, 0) : NAN;
    default: return NAN;
    }
}

const char *val_kind_name(VKind k)
{
    switch (k) {
    case V_MATRIX: return "matrix";
    case V_DOUBLE: return "double";
    case V_INT: return "integer";
    case V_BOOL: return "boolean";
    case V_STRING: return "string";
    case V_LIST: return "list";
    case V_FRAME: return "frame";
    case V_DIST: return "matrix";
    default: return "none";
    }
}

Value val_list_copy(const List *l, BrErr *e)
{
    Value r = val_list_new(l->n);
    if (r.kind == V_NONE) { br_err(e, BR_ENOMEM, "out of memory"); return r; }
    for (int i = 0; i < l->n; i++)
        if (list_append(r.l, val_retain(l->items[i]), l->names ? l->names[i] : NULL, e)) {
            val_release(&r);
            return r;
        }
    return r;
}

char *val_text(const Value *v, bool for_file)
{
    char buf[64];
    switch (v->kind) {
    case V_DOUBLE: fmt_double(v->d, buf, sizeof buf); return br_strdup(buf);
    case V_INT: fmt_int(v->i, buf, sizeof buf); return br_strdup(buf);
    case V_BOOL: return br_strdup(for_file ? fmt_bool_file(v->b) : fmt_bool(v->b));
    case V_STRING: return br_strdup(v->s->s);
    default: return br_strdup(val_kind_name(v->kind));
    }
}

bool val_truth(const Value *v, bool *out, BrErr *e)
{
    switch (v->kind) {
    case V_BOOL: *out = v->b; return true;
    case V_INT: *out = v->i != 0; return true;
    case V_DOUBLE: *out = v->d != 0; return true;
    case V_MATRIX:
        if (v->m->rows == 1 && v->m->cols == 1) { *out = mb_get(v->m, 0, 0) != 0; return true; }
        br_err(e, BR_EARG, "a predicate must be a scalar, not a %lldx%lld matrix",
               (long long)v->m->rows, (long long)v->m->cols);
        return false;
    case V_STRING:
        if (strcmp(v->s->s, "TRUE") == 0 || strcmp(v->s->s, "true") == 0) { *out = true; return true; }
        if (strcmp(v->s->s, "FALSE") == 0 || strcmp(v->s->s, "false") == 0) { *out = false; return true; }
        br_err(e, BR_EARG, "a predicate must be boolean, not the string \"%s\"", v->s->s);
        return false;
    default:
        br_err(e, BR_EARG, "a predicate must be a scalar, not a %s", val_kind_name(v->kind));
        return false;
    }
}
