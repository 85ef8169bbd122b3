/* value.h: run-time values of DML: matrices, scalars (double, int64,
 * boolean, string) and lists. Values are small structs passed by value;
 * the heap parts (matrix blocks, strings, lists) are reference counted:
 * val_retain() adds a reference, val_release() drops one. A Value held in
 * a variable or register owns one reference. */
#ifndef BRAID_VALUE_H
#define BRAID_VALUE_H

#include "../base/base.h"
#include "../matrix/fb.h"
#include "../matrix/mb.h"

typedef enum { V_NONE, V_MATRIX, V_DOUBLE, V_INT, V_BOOL, V_STRING, V_LIST, V_FRAME, V_DIST } VKind;

/* A distributed matrix (dist/): rows x cols, row-block partitioned over
 * the MPI ranks, known on rank 0 by this handle. Only its sizes are
 * readable here; dist/ owns the partitions and frees them (free) when the
 * last reference goes. */
typedef struct DM DM;
struct DM {
    int refs;
    int64_t rows, cols, nnz;
    int64_t id;             /* the partitions' name on every rank */
    void (*free)(DM *);
};

typedef struct Str { int refs; size_t len; char s[]; } Str;
typedef struct List List;

typedef struct Value {
    VKind kind;
    /* V_MATRIX: compress(X)'s result, its compression deferred to the
     * first loop whose uses repay it (runtime/cla_rt.c, docs/cla.md
     * "When braid compresses"); copies of the value carry it */
    bool cla_lazy;
    union {
        MB *m;
        double d;
        int64_t i;
        bool b;
        Str *s;
        List *l;
        FB *f;         /* V_FRAME */
        DM *dm;        /* V_DIST */
    };
} Value;

struct List {
    int refs;
    int n, cap;
    Value *items;
    char **names;      /* NULL, or n names (NULL entries: unnamed) */
};

static inline Value val_double(double d) { Value v = {.kind = V_DOUBLE}; v.d = d; return v; }
static inline Value val_int(int64_t i) { Value v = {.kind = V_INT}; v.i = i; return v; }
static inline Value val_bool(bool b) { Value v = {.kind = V_BOOL}; v.b = b; return v; }
static inline Value val_none(void) { Value v = {.kind = V_NONE}; v.i = 0; return v; }
/* Takes ownership of the caller's reference to m. */
static inline Value val_matrix(MB *m) { Value v = {.kind = V_MATRIX}; v.m = m; return v; }
/* Takes ownership of the caller's reference to f. */
static inline Value val_frame(FB *f) { Value v = {.kind = V_FRAME}; v.f = f; return v; }
Value val_string(const char *s);               /* copies s */
Value val_string_n(const char *s, size_t n);
Value val_list_new(int cap);                   /* empty list, refs 1 */
/* Appends (takes ownership of item; name copied, may be NULL). */
int list_append(List *l, Value item, const char *name, BrErr *e);
int list_find(const List *l, const char *name); /* index or -1 */

Value val_retain(Value v);
void val_release(Value *v);                    /* sets *v to V_NONE */

static inline bool val_is_scalar(const Value *v) {
    return v->kind == V_DOUBLE || v->kind == V_INT || v->kind == V_BOOL || v->kind == V_STRING;
}
static inline bool val_is_numeric(const Value *v) {
    return v->kind == V_DOUBLE || v->kind == V_INT || v->kind == V_BOOL;
}
/* Numeric value of a scalar (booleans 0/1; strings parsed; else NaN). */
double val_as_double(const Value *v);
/* Lands device-only matrices (mb_host) of v, list items included: before
 * CPU code reads the cells. 0, or -1 with e set. */
int val_host(const Value *v, BrErr *e);
const char *val_kind_name(VKind k);
/* A list copy sharing items (for copy-on-write of lists). */
Value val_list_copy(const List *l, BrErr *e);

/* Text of a scalar as print() shows it (malloc'd, caller frees); for_file:
 * booleans as write() puts them into a file ("true"/"false"). */
char *val_text(const Value *v, bool for_file);
/* The truth of a predicate value (a scalar, a 1x1 matrix, "TRUE"/"FALSE");
 * false with e set for anything else. */
bool val_truth(const Value *v, bool *out, BrErr *e);

#endif
