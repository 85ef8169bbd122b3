/* symtab.h: a symbol table (variable name -> Value) for one call frame.
 * Open addressing on names; the table owns one reference of every value.
 * Names are not copied: they must outlive the table (AST arena strings). */
#ifndef BRAID_SYMTAB_H
#define BRAID_SYMTAB_H

#include "../matrix/value.h"

typedef struct SymTab {
    const char **keys;
    Value *vals;
    void **lin;        /* lineage item per slot (runtime/lineage.h), NULL
                          until st_set_lin: tables of untraced runs have none */
    int cap, n;
} SymTab;

void st_init(SymTab *t);
void st_free(SymTab *t);                 /* releases every value */
Value *st_get(SymTab *t, const char *name);         /* NULL if unbound */
/* Binds name to v, taking ownership of v; releases the old value.
 * Returns 0, or BR_ENOMEM (v released, the table unchanged). */
int st_put(SymTab *t, const char *name, Value v);
/* Removes name; returns its value (ownership to the caller) or V_NONE. */
Value st_take(SymTab *t, const char *name);
void st_remove(SymTab *t, const char *name);         /* and releases */
/* Copy sharing values (retained): parfor workers. Returns 0, or
 * BR_ENOMEM (dst then holds part of src; free it with st_free). */
int st_copy(SymTab *dst, const SymTab *src);
/* The lineage item bound with name (NULL: none or unbound). Binding a
 * value (st_put) clears it; st_copy copies it. */
void *st_get_lin(const SymTab *t, const char *name);
/* Sets name's lineage item (name must be bound); BR_ENOMEM or 0. */
int st_set_lin(SymTab *t, const char *name, void *item);
/* Iteration: index of the next used slot >= i, or -1. */
int st_next(const SymTab *t, int i);

#endif
