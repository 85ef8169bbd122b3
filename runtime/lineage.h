/* lineage.h: lineage tracing for lineage(X), in SystemDS's form.
 *
 * Every value the interpreter computes while tracing is on carries an
 * item: a literal (a scalar constant, a loop variable's value), a creation
 * (rand, seq, read: the data is the instruction as SystemDS writes it) or
 * an instruction (an opcode, SystemDS's where it has one, over the items
 * of its inputs). Function calls pass their arguments' items through and
 * return their outputs' items, loops trace each iteration (no
 * deduplication), as SystemDS's tracing does. lineage(X) returns X's trace
 * as SystemDS's Explain.explain(LineageItem) writes it: one line per item
 * in post-order, "(id) (L|C|I) data-or-opcode (in1) (in2) ...\n".
 *
 * Tracing is on only for scripts that call lineage() (the loader's
 * static check, lang_uses_lineage): a script without it pays one
 * pointer test per instruction. Items live until the run ends (they are
 * shared between variables, as SystemDS's). docs/DESIGN.md "Lineage". */
#ifndef BRAID_LINEAGE_H
#define BRAID_LINEAGE_H

#include <pthread.h>
#include <stdint.h>

#include "../matrix/value.h"

typedef struct LinItem {
    int64_t id;
    const char *opcode;     /* "" for literals */
    const char *data;       /* "" for instructions */
    uint32_t mark;          /* explain's visit mark */
    int nin;
    struct LinItem *in[];   /* inputs (nin); no inputs: a leaf */
} LinItem;

typedef struct LinTrace LinTrace;

/* A trace for one run; NULL without memory. */
LinTrace *lin_new(void);
void lin_free(LinTrace *t);

/* An item; NULL without memory. The strings are copied. Thread-safe. */
LinItem *lin_item(LinTrace *t, const char *opcode, const char *data, LinItem *const *in, int nin);
/* A literal: SystemDS's "value·SCALAR·VT·true" for a scalar (one item per
 * distinct text, as SystemDS's literal map keeps them); anything else
 * "name·DT·VT·false", an untraced variable's name (name NULL: "_"). */
LinItem *lin_literal(LinTrace *t, const Value *v, const char *name);
/* Data and value type of v as SystemDS names them ("MATRIX", "FP64"). */
const char *lin_dtype(const Value *v);
const char *lin_vtype(const Value *v);

/* li's trace as SystemDS's Explain.explain writes it (malloc'd; NULL
 * without memory). Thread-safe. */
char *lin_explain(LinTrace *t, LinItem *li);

#endif
