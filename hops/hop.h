/* hop.h: high-level operators (HOPs) and their DAGs, one DAG per basic
 * block (seed 002, sections 2-3). A HOP is a node of the DAG: an operator
 * from base/ops.def (or a builtin, a function call, a literal, a read of a
 * variable) with its inputs, data/value type, sizes and memory estimate.
 *
 * HOPs of a DAG live in the DAG's arena; DAGs are owned by program blocks
 * (plan/program.h). */
#ifndef BRAID_HOP_H
#define BRAID_HOP_H

#include "../base/arena.h"
#include "../lang/ast.h"
#include "../runtime/value.h"

typedef enum {
    H_LIT,       /* literal: lit */
    H_TREAD,     /* transient read of variable `name` */
    H_UNARY,     /* op (OK_UNARY), elementwise or scalar */
    H_BINARY,    /* op (OK_BINARY) */
    H_TERNARY,   /* op (OP_IFELSE) */
    H_AGG,       /* op (OK_AGG), dir */
    H_MATMUL,    /* op: OP_MATMUL (physical: OP_TSMM, OP_MMCHAIN) */
    H_REORG,     /* op: OP_TRANS, OP_REV, OP_DIAG */
    H_RIX,       /* right indexing: in = target, rl, ru, cl, cu */
    H_LIX,       /* left indexing: in = target, source, rl, ru, cl, cu */
    H_BUILTIN,   /* builtin bi; in = bound arguments in parameter order */
    H_FCALL,     /* call of func; in = bound arguments; value: a tuple */
    H_OUT,       /* out_index-th output of the H_FCALL/H_BUILTIN in[0] */
} HopKind;

/* Execution types (seed 002, section 3.3); the distributed backend is a
 * later stage: an operation that needs it fails with a clear error. */
enum { EX_CP = 0, EX_DIST = 1 };

/* Index dimension modes of H_RIX / H_LIX. */
enum { IX_ALL = 0, IX_SINGLE = 1, IX_RANGE = 2 };

typedef struct Hop Hop;
struct Hop {
    int id;
    HopKind kind;
    OpCode op;
    AggDir dir;
    BuiltinId bi;
    Func *func;         /* H_FCALL */
    int out_index;      /* H_OUT */
    int nouts;          /* H_FCALL / multi-output builtins: outputs */
    Hop **in;           /* inputs; entries may be NULL (absent argument) */
    int nin;
    int nvar;           /* H_BUILTIN with "...": number of variadic inputs */
    const char **anames;/* H_BUILTIN list(...): argument names (or NULL) */
    Value lit;          /* H_LIT (owned by the DAG) */
    const char *name;   /* H_TREAD: variable */
    bool move;          /* H_TREAD: take the value out of the variable
                           (update in place of X[...] = ... in loops) */
    bool sidefx;        /* must run even if unused (print, write, calls) */
    int flag;           /* physical variant: OP_TSMM 1 = t(X)%*%X, 0 = X%*%t(X) */
    int exec;           /* execution type: EX_CP (local) or EX_DIST */
    double opmem;       /* worst-case operation memory: inputs + output */
    int rmode, cmode;   /* H_RIX / H_LIX: IX_ALL, IX_SINGLE, IX_RANGE */
    bool has_col;       /* H_RIX / H_LIX: two index dimensions */
    DataType dt;
    ValueType vt;
    int64_t rows, cols, nnz;   /* -1: unknown */
    double mem;                /* worst-case output memory (bytes) */
    Span span;
    int nuse;           /* consumers within the DAG (+ block outputs) */
    int reg;            /* register assigned by instruction generation */
};

/* A DAG: the HOPs of one basic block (or predicate), its roots in
 * statement order, and the variables it writes (transient writes). */
typedef struct HopDag {
    Arena *arena;
    Hop **hops; int n, cap;        /* all HOPs, creation order */
    Hop **roots; int nroots, rcap; /* statement roots, in order */
    const char **wnames;           /* transient writes: variable names */
    Hop **whops;                   /*   and the HOPs bound to them */
    int nw, wcap;
    const char **rnames;           /* variables read (TREADs) */
    int nr;
    bool recompile;                /* sizes unknown at compile time:
                                      recompile before each execution */
} HopDag;

HopDag *hop_dag_new(void);
void hop_dag_free(HopDag *d);
Hop *hop_new(HopDag *d, HopKind kind, Span span, int nin);
void hop_add_root(HopDag *d, Hop *h);
void hop_set_write(HopDag *d, const char *name, Hop *h);

/* Constructors of common HOPs (sizes inferred from the inputs). */
Hop *hop_lit(HopDag *d, Value v, Span sp);          /* takes v */
Hop *hop_unary(HopDag *d, OpCode op, Hop *a, Span sp);
Hop *hop_binary(HopDag *d, OpCode op, Hop *a, Hop *b, Span sp);
Hop *hop_agg(HopDag *d, OpCode op, AggDir dir, Hop *a, Span sp);
Hop *hop_reorg(HopDag *d, OpCode op, Hop *a, Span sp);
Hop *hop_matmul(HopDag *d, OpCode op, Hop *a, Hop *b, Span sp);

/* Sizes and memory estimate of h from its inputs (call after creating). */
void hop_infer(Hop *h);
/* The local memory budget (bytes): 70% of physical memory. Operations
 * whose worst-case memory exceeds it get exec = EX_DIST. */
double hop_mem_budget(void);
/* Print the DAG (-explain hops). */
void hop_dag_print(const HopDag *d, FILE *out, int indent);
/* Write the DAG as a Graphviz cluster (-explain dot). */
void hop_dag_dot(const HopDag *d, FILE *out, const char *cluster);
const char *hop_opname(const Hop *h);

#endif
