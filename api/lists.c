/* lists.c: DML lists through the embedding API (include/braid.h). A
 * BraidList handle is a Value of kind V_LIST holding one reference to the
 * list; appending builds a private list, binding and reading share it. */
#include <stdlib.h>
#include <string.h>

#include "script.h"

struct BraidList { Value v; };

static BraidList *handle(Value v)
{
    BraidList *l = malloc(sizeof *l);
    if (!l) { val_release(&v); return NULL; }
    l->v = v;
    return l;
}

BraidList *braid_list_new(void)
{
    Value v = val_list_new(4);
    return v.kind == V_LIST ? handle(v) : NULL;
}

void braid_list_free(BraidList *l)
{
    if (!l) return;
    val_release(&l->v);
    free(l);
}

/* Appends item (ownership taken) to a list still being built. */
static int append(BraidList *l, const char *name, Value item)
{
    BrErr e = {0};
    if (item.kind == V_NONE || l->v.l->refs != 1 || list_append(l->v.l, item, name, &e)) {
        val_release(&item);
        return -1;
    }
    return 0;
}

int braid_list_append_matrix(BraidList *l, const char *name, const double *data, int64_t rows, int64_t cols)
{
    BrErr e = {0};
    MB *m = api_dense_copy(data, rows, cols, &e);
    return m ? append(l, name, val_matrix(m)) : -1;
}

int braid_list_append_double(BraidList *l, const char *name, double v) { return append(l, name, val_double(v)); }
int braid_list_append_int(BraidList *l, const char *name, int64_t v) { return append(l, name, val_int(v)); }
int braid_list_append_string(BraidList *l, const char *name, const char *v) { return append(l, name, val_string(v)); }

int braid_list_append_frame(BraidList *l, const char *name, int64_t rows, const BraidColumn *cols, int ncols)
{
    BrErr e = {0};
    FB *f = api_frame_copy(rows, cols, ncols, &e);
    return f ? append(l, name, val_frame(f)) : -1;
}

int braid_list_append_list(BraidList *l, const char *name, const BraidList *item)
{
    return item == l ? -1 : append(l, name, val_retain(item->v));
}

int braid_bind_list(BraidScript *s, const char *name, const BraidList *l)
{
    return api_bind(s, name, val_retain(l->v));
}

int braid_get_list(BraidScript *s, const char *name, BraidList **out)
{
    Value *v = st_get(&s->results, name);
    if (!v) return api_fail(s, "no such output (or the script did not assign it)");
    if (v->kind != V_LIST) return api_fail(s, "output is not a list");
    *out = handle(val_retain(*v));
    return *out ? 0 : api_fail(s, "out of memory");
}

static const Value *item(const BraidList *l, int64_t i)
{
    return l && i >= 0 && i < l->v.l->n ? &l->v.l->items[i] : NULL;
}

int64_t braid_list_length(const BraidList *l) { return l ? l->v.l->n : 0; }

const char *braid_list_name(const BraidList *l, int64_t i)
{
    return item(l, i) && l->v.l->names ? l->v.l->names[i] : NULL;
}

BraidKind braid_list_kind(const BraidList *l, int64_t i) { return api_kind(item(l, i)); }

int braid_list_get_double(const BraidList *l, int64_t i, double *v)
{
    const Value *it = item(l, i);
    if (!it || !val_is_numeric(it)) return -1;
    *v = val_as_double(it);
    return 0;
}

int braid_list_get_int(const BraidList *l, int64_t i, int64_t *v)
{
    const Value *it = item(l, i);
    if (!it || (it->kind != V_INT && it->kind != V_BOOL)) return -1;
    *v = it->kind == V_INT ? it->i : it->b;
    return 0;
}

int braid_list_get_string(const BraidList *l, int64_t i, char **v)
{
    const Value *it = item(l, i);
    if (!it || !val_is_scalar(it)) return -1;
    *v = val_text(it, false);
    return *v ? 0 : -1;
}

int braid_list_get_matrix_view(const BraidList *l, int64_t i, bool dense, BraidMatrix *out)
{
    const Value *it = item(l, i);
    BrErr e = {0};
    memset(out, 0, sizeof *out);
    return it && !api_matrix_view(it, dense, out, &e) ? 0 : -1;
}

int braid_list_get_list(const BraidList *l, int64_t i, BraidList **out)
{
    const Value *it = item(l, i);
    if (!it || it->kind != V_LIST) return -1;
    *out = handle(val_retain(*it));
    return *out ? 0 : -1;
}

int braid_list_get_frame_view(const BraidList *l, int64_t i, BraidFrame *out)
{
    BrErr e = {0};
    return api_frame_view(item(l, i), out, &e) ? -1 : 0;
}
