/* ast.h: the abstract syntax tree of DML, with source spans.
 *
 * Produced by the loader (lang/load.h): lexer -> parser -> AST, with
 * $-arguments and ifdef() already substituted, source() files loaded, and
 * every call resolved (to a user/library function or a builtin). Consumed
 * by the validator (lang/) and the HOP builder (hops/).
 *
 * All AST memory lives in the Program's arena and is freed with the
 * Program (lang_program_free). Strings are NUL-terminated arena copies. */
#ifndef BRAID_AST_H
#define BRAID_AST_H

#include "../base/base.h"
#include "../base/diag.h"   /* Span: file (arena string), line, col */
#include "../base/ops.h"

/* DataType and ValueType (declared types of function signatures, value
 * types) live in base/ops.h, with the builtins' result types. */

typedef struct Expr Expr;
typedef struct Stmt Stmt;
typedef struct Func Func;

typedef struct Arg {
    const char *name;   /* NULL for a positional argument */
    Expr *value;
    Span span;
} Arg;

/* One dimension of an index expression X[row, col]. */
typedef struct IndexDim {
    bool all;           /* X[, j]: the whole dimension */
    Expr *lo;           /* X[i, ] (single) or X[lo:hi, ] */
    Expr *hi;           /* NULL for a single index */
} IndexDim;

typedef enum {
    EX_INT,      /* ival (int64 literal) */
    EX_DOUBLE,   /* dval */
    EX_BOOL,     /* bval */
    EX_STRING,   /* sval */
    EX_IDENT,    /* ident: a variable */
    EX_UNARY,    /* op in {OP_NEG, OP_NOT}; unary + is dropped by the parser */
    EX_BINARY,   /* op: OP_PLUS ... OP_OR (&&: OP_AND, ||: OP_OR), OP_MATMUL */
    EX_CALL,     /* call: builtin or function call */
    EX_INDEX,    /* index: X[r, c] (matrix/frame) or L[i] (list: has_col false) */
    EX_WHERE,    /* where: a where-loop (braid's extension, docs/amulet.md);
                    only as the value of the ST_ASSIGN of its result */
} ExprKind;

typedef struct WhereLoop WhereLoop;

struct Expr {
    ExprKind kind;
    Span span;
    union {
        int64_t ival;
        double dval;
        bool bval;
        const char *sval;
        const char *ident;
        struct { OpCode op; Expr *a; } unary;
        struct { OpCode op; Expr *a, *b; } binary;
        struct {
            const char *ns;     /* namespace as written (NULL: none) */
            const char *name;   /* function name as written */
            Arg *args;
            int nargs;
            /* resolution, filled by the loader: exactly one is set */
            Func *func;                     /* user or library function */
            const BuiltinInfo *builtin;     /* builtin (ops.def) */
        } call;
        struct {
            const char *name;   /* the indexed variable */
            IndexDim row, col;
            bool has_col;       /* false for L[i] / X[i] with one dimension */
        } index;
        WhereLoop *where;
    };
};

/* The target of an assignment: a variable, optionally left-indexed. */
typedef struct LValue {
    const char *name;
    bool indexed;
    IndexDim row, col;
    bool has_col;
    Span span;
} LValue;

/* A where-loop (docs/amulet.md):
 *   where (i in 1:M, j in 1:N, k in 1:K) { R[i,j] += body }
 * The statement is an ST_ASSIGN of R (not indexed) whose value is an
 * EX_WHERE expression: the new R. Iteration order is free; the validator
 * rejects bodies whose result would depend on it. */
typedef enum { WA_SET, WA_ADD, WA_MIN, WA_MAX } WhereAcc;
typedef struct WhereVar {
    const char *name;
    Expr *from, *to;         /* the range from:to */
    Span span;
    Expr *step;              /* NULL: from:to; else the values from,
                                from + step, ... up to to, as a for loop
                                over seq(from, to, step) (loops of outer
                                products lifted by lang/where.c) */
} WhereVar;
#define WHERE_MAXVARS 3
#define WHERE_MAXRES 8     /* results of one where-loop */
struct WhereLoop {
    WhereVar vars[WHERE_MAXVARS];
    int nvars;
    LValue target;           /* R[a, b] or R[a]: indices are loop variables */
    WhereAcc acc;            /* =, +=, min=, max= */
    Expr *value;             /* the body's right-hand side */
    Span span;
    bool bcast;              /* lifted from a loop over k of rank-one outer
                                products (lang/where.c): reads X[i,j] by
                                R's variables and R itself follow DML's
                                elementwise broadcasting (X a scalar, a row
                                or column vector, or the full matrix), and
                                every dimension indexed by i or j must
                                match its range exactly */
    struct WhereLoop *more;  /* a loop nest with several results, each
                                accumulated by its own statement
                                (`R[i,j] += e1; S[i,j] min= e2`): the next
                                result (its target, acc, value; vars, span
                                and bcast are the head's), NULL after the
                                last. The statement is then an ST_MASSIGN
                                of every result from one EX_WHERE */
};

typedef struct Block {
    Stmt **stmts;
    int n;
} Block;

typedef enum {
    ST_ASSIGN,   /* assign: x = e, x += e, X[i,j] = e */
    ST_MASSIGN,  /* massign: [a, b] = f(...) */
    ST_IF,
    ST_FOR,      /* for and parfor */
    ST_WHILE,
    ST_EXPR,     /* a call evaluated for its effect: print(...), f(x) */
} StmtKind;

struct Stmt {
    StmtKind kind;
    Span span;
    union {
        struct { LValue target; bool accum; Expr *value; } assign;
        struct { LValue *targets; int n; Expr *call; } massign;
        struct { Expr *cond; Block then_b, else_b; } if_;
        struct {
            const char *var;
            Expr *from, *to, *incr;  /* a:b -> incr NULL; seq(f,t[,i]) */
            Block body;
            bool parfor;
            Arg *opts;               /* parfor options: name = value;  */
            int nopts;               /* bare identifiers become strings */
        } for_;
        struct { Expr *cond; Block body; } while_;
        struct { Expr *e; } expr;
    };
};

typedef struct Param {
    const char *name;
    DataType dt;
    ValueType vt;
    Expr *deflt;        /* inputs only; NULL if none */
    Span span;
} Param;

struct Func {
    const char *name;       /* as defined, e.g. "m_l2svm" or "double_it" */
    const char *ns;         /* namespace key of its file ("" for the main
                               script); unique per loaded file */
    const char *file;       /* the file it was defined in */
    Param *in;  int nin;
    Param *out; int nout;
    Block body;
    Span span;
    bool builtin_lib;       /* loaded from scripts/builtin */
    const char *external;   /* externalFunction: its Java class (the body
                               is a stop(); braid cannot run Java UDFs) */
    Func **dflt_fn;         /* NULL, or nin functions computing the defaults
                               of eval calls (lang_default_func) */
};

typedef struct Program Program; /* opaque: lang/load.h */

#endif
