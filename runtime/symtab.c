/* symtab.c: open-addressing symbol table with tombstones. */
#include "symtab.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

static const char TOMB[] = "";

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    while (*s) { h ^= (unsigned char)*s++; h *= 1099511628211ULL; }
    return h;
}

void st_init(SymTab *t) { memset(t, 0, sizeof *t); }

void st_free(SymTab *t)
{
    for (int i = 0; i < t->cap; i++)
        if (t->keys[i] && t->keys[i] != TOMB) val_release(&t->vals[i]);
    free(t->keys);
    free(t->vals);
    free(t->lin);
    memset(t, 0, sizeof *t);
}

static int find(const SymTab *t, const char *name)
{
    if (!t->cap) return -1;
    int mask = t->cap - 1;
    for (int i = (int)(hash(name) & (uint64_t)mask), k = 0; k < t->cap; i = (i + 1) & mask, k++) {
        if (!t->keys[i]) return -1;
        if (t->keys[i] != TOMB && strcmp(t->keys[i], name) == 0) return i;
    }
    return -1;
}

/* Rehashes t into ncap slots (a power of two); false (t unchanged) when
 * out of memory. */
static bool rehash(SymTab *t, int ncap)
{
    assert(ncap > 0 && (ncap & (ncap - 1)) == 0 && ncap > t->n);
    SymTab o = *t;
    const char **keys = calloc((size_t)ncap, sizeof(char *));
    Value *vals = calloc((size_t)ncap, sizeof(Value));
    void **lin = o.lin ? calloc((size_t)ncap, sizeof(void *)) : NULL;
    if (!keys || !vals || (o.lin && !lin)) {
        free(keys);
        free(vals);
        free(lin);
        return false;
    }
    t->keys = keys;
    t->vals = vals;
    t->lin = lin;
    t->cap = ncap;
    t->n = 0;
    for (int i = 0; i < o.cap; i++)
        if (o.keys[i] && o.keys[i] != TOMB) {
            int mask = ncap - 1;
            int j = (int)(hash(o.keys[i]) & (uint64_t)mask);
            while (t->keys[j]) j = (j + 1) & mask;
            t->keys[j] = o.keys[i];
            t->vals[j] = o.vals[i];
            if (lin) lin[j] = o.lin[i];
            t->n++;
        }
    free(o.keys);
    free(o.vals);
    free(o.lin);
    return true;
}

Value *st_get(SymTab *t, const char *name)
{
    int i = find(t, name);
    return i < 0 ? NULL : &t->vals[i];
}

int st_put(SymTab *t, const char *name, Value v)
{
    int i = find(t, name);
    if (i >= 0) {
        val_release(&t->vals[i]);
        t->vals[i] = v;
        if (t->lin) t->lin[i] = NULL;
        return 0;
    }
    if ((t->n + 1) * 2 > t->cap && !rehash(t, t->cap ? t->cap * 2 : 16)) {
        val_release(&v);
        return BR_ENOMEM;
    }
    int mask = t->cap - 1;
    int j = (int)(hash(name) & (uint64_t)mask);
    while (t->keys[j] && t->keys[j] != TOMB) j = (j + 1) & mask;
    t->keys[j] = name;
    t->vals[j] = v;
    if (t->lin) t->lin[j] = NULL;
    t->n++;
    return 0;
}

Value st_take(SymTab *t, const char *name)
{
    int i = find(t, name);
    if (i < 0) return val_none();
    Value v = t->vals[i];
    t->keys[i] = TOMB;
    t->vals[i] = val_none();
    if (t->lin) t->lin[i] = NULL;
    t->n--;
    return v;
}

void st_remove(SymTab *t, const char *name)
{
    Value v = st_take(t, name);
    val_release(&v);
}

int st_copy(SymTab *dst, const SymTab *src)
{
    st_init(dst);
    for (int i = 0; i < src->cap; i++)
        if (src->keys[i] && src->keys[i] != TOMB &&
            (st_put(dst, src->keys[i], val_retain(src->vals[i])) ||
             (src->lin && src->lin[i] && st_set_lin(dst, src->keys[i], src->lin[i]))))
            return BR_ENOMEM;
    return 0;
}

void *st_get_lin(const SymTab *t, const char *name)
{
    if (!t->lin) return NULL;
    int i = find(t, name);
    return i < 0 ? NULL : t->lin[i];
}

int st_set_lin(SymTab *t, const char *name, void *item)
{
    int i = find(t, name);
    if (i < 0) return 0;
    if (!t->lin && !(t->lin = calloc((size_t)t->cap, sizeof(void *)))) return BR_ENOMEM;
    t->lin[i] = item;
    return 0;
}

int st_next(const SymTab *t, int i)
{
    for (; i < t->cap; i++)
        if (t->keys[i] && t->keys[i] != TOMB) return i;
    return -1;
}
