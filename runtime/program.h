/* program.h: the runtime program (seed 002, section 2: statement blocks ->
 * HOP DAGs -> LOPs -> runtime program): program blocks (generic, if, for,
 * parfor, while) holding instructions. plan/ lowers each HOP DAG into
 * instructions; the interpreter (runtime/interp.c) runs them and never
 * sees a HOP. Each instruction carries its own opcode, physical operator,
 * execution type and operands (SystemML's LOPs). The DAG a block was
 * compiled from stays with the block as an opaque handle for dynamic
 * recompilation, which the compiler provides through RtHooks. */
#ifndef BRAID_PROGRAM_H
#define BRAID_PROGRAM_H

#include <pthread.h>
#include <stdio.h>

#include "../base/diag.h"
#include "../codegen/cgrun.h"
#include "../kernels/apply.h"
#include "../lang/ast.h"

/* What an instruction does (one per kind of HOP it was lowered from). */
typedef enum {
    I_LIT,       /* lit */
    I_READ,      /* read variable name (move: take it out of the variable;
                    optional: exists(X), an absent variable reads as none) */
    I_UNARY,     /* op */
    I_BINARY,    /* op */
    I_TERNARY,   /* ifelse */
    I_AGG,       /* op, dir */
    I_MATMUL,    /* physical operator op: OP_MATMUL, OP_TSMM (left),
                    OP_MMCHAIN, OP_MATMULTL */
    I_REORG,     /* op: t, rev, diag */
    I_RIX,       /* right indexing: ix; in = target, rl, ru, cl, cu */
    I_LIX,       /* left indexing: ix; in = target, source, rl, ru, cl, cu */
    I_BUILTIN,   /* builtin bi; in = bound arguments in parameter order */
    I_CALL,      /* call of func; out: a list of its outputs */
    I_OUT,       /* out_index-th element of the list in in[0] */
    I_FUSED,     /* a fused operator (fused: codegen's handle) */
    I_WHERE,     /* a where-loop (where; inputs as H_WHERE's) */
    I_STITCH,    /* a stitched region (fused: the region; gpu/stitch.h) */
} InstrKind;

/* One instruction: reads registers in[], writes register out; registers
 * whose last use this is are freed after it. */
/* Instr.name of the cast that gives a function's scalar parameter its
 * declared value type (plan/build.c): lineage passes through it, as
 * through SystemDS's calls. */
#define INSTR_PARAM_CAST "(param)"

typedef struct Instr {
    InstrKind kind;
    OpCode op;
    AggDir dir;
    BuiltinId bi;
    int exec;              /* EX_CP or EX_DIST */
    bool left;             /* OP_TSMM: t(X) %*% X (else X %*% t(X)) */
    bool move, optional;   /* I_READ */
    IxSpec ix;             /* I_RIX / I_LIX */
    Value lit;             /* I_LIT (borrowed from the compiled DAG) */
    const char *name;      /* I_READ: the variable; I_BUILTIN: INSTR_PARAM_CAST */
    Func *func;            /* I_CALL */
    int out_index;         /* I_OUT */
    int nvar;              /* I_BUILTIN with "...": variadic inputs */
    const char **anames;   /* I_BUILTIN list(...): argument names or NULL */
    void *fused;           /* I_FUSED: codegen's operator */
    int64_t plan_place;    /* I_FUSED: its hop's placement on the ranks */
    double plan_price[2];  /*   (Hop.plan_place, .plan_price) */
    struct FProg *spec;    /* I_CALL: the function specialized for this
                              call's sizes (NULL: the generic one) */
    const WhereLoop *where;/* I_WHERE: the loop */
    int64_t *est;          /* I_FUSED: rows, cols, nnz of every input as
                              compiled (-1 unknown), 3 * nin entries;
                              I_MATMUL: the product's rows, cols (-1
                              unknown; NULL in older plans);
                              I_BUILTIN read(): rows, cols compiled from
                              the .mtd (NULL: not known) */
    double opmem;          /* worst-case memory: inputs and output */
    const char *opname;    /* name in -explain runtime */
    const char *statname;  /* name in -stats (SystemDS's opcodes) */
    Span span;
    /* ifelse with a scalar condition runs only the taken branch (as
     * SystemDS's removeUnnecessaryIfElse rewrite leaves it): an
     * instruction needed only by one branch of the I_TERNARY at index
     * guard - 1 (0: none) runs only when that ternary runs and its
     * condition picks guard_then (TRUE) or the other side; skipped, its
     * register stays empty. lazy: this I_TERNARY may find a skipped
     * branch (plan/instgen.c decides, docs/DML.md) */
    int guard;
    bool guard_then, lazy;
    int out;
    int *in;               /* one per input; -1 for an absent input */
    int nin;
    int *frees;            /* registers to release after this instruction */
    int nfree;
} Instr;

typedef struct Code {
    Instr *ins;
    int n;
    int nregs;
    const char **wnames;   /* variables written at block end */
    int *wregs;            /*   from these registers */
    int nw;
    int pred_reg;          /* predicate blocks: register of the result */
    int for_regs[3];       /* for headers: from, to, incr (-1 absent) */
    bool recompile;        /* sizes unknown at compile time: recompile
                              before each execution (RtHooks) */
    bool cla_maybe;        /* HopDag.cla_maybe: recompile when a variable
                              it reads (I_READ) holds a compressed value */
    int64_t seen_cells;    /* run time: cells of the largest matrix an
                              execution produced (-1: not executed yet;
                              read by the small-block rule of dynamic
                              recompilation) */
} Code;

/* Kinds of code: a block, a predicate, a for header. */
enum { CG_BLOCK, CG_PRED, CG_FORHDR };

void plan_code_free(Code *c);

typedef enum { PB_GENERIC, PB_IF, PB_WHILE, PB_FOR } PBKind;

/* A set of variable names (small; linear search). oom: a name could not
 * be added for want of memory (sticky; the compiler reports it). */
typedef struct NameSet { const char **v; int n, cap; bool oom; } NameSet;
bool ns_has(const NameSet *s, const char *name);
bool ns_add(NameSet *s, const char *name);    /* true if added */
void ns_free(NameSet *s);

typedef struct PBlock PBlock;
typedef struct PBList { PBlock **v; int n, cap; } PBList;

struct PBlock {
    PBKind kind;
    Span span;
    void *dag;          /* the compiler's DAG of the block (generic), the
                           predicate (if/while) or header (for: roots
                           from, to, incr); opaque here */
    Code *code;
    PBList body;        /* if: then; loops: body */
    PBList els;         /* if: else */
    const char *var;    /* for: loop variable */
    bool parfor;
    bool parfor_check;  /* check=1 (dependency analysis) */
    int parfor_par;     /* par= (0: all cores) */
    bool parfor_remote; /* mode=REMOTE_SPARK (any REMOTE_ mode): iterations on
                           the MPI ranks (runtime/distparfor.c) */
    NameSet live_out;   /* variables live after this block */
    NameSet results;    /* parfor: result variables (left-indexed) */
    NameSet accums;     /* parfor: accumulator results (R += ...): merged
                           as R + the sum of every worker's change */
    bool par_ok;        /* parfor: analysis allows parallel execution */
    void *rc_cache;     /* code of earlier dynamic recompilations (the
                           compiler's), freed by rc_free */
    void (*rc_free)(void *);
};

/* Appends b to l; false when out of memory (l unchanged, b still the
 * caller's). */
bool pbl_add(PBList *l, PBlock *b);

/* What a specialized function was compiled for, per parameter: the
 * matrix's dimensions (rows, cols >= 0) or the scalar's value (v; kind
 * V_NONE: any value). */
typedef struct FSig {
    int64_t rows, cols;
    Value v;
} FSig;

/* A compiled function: the generic version (sig NULL: parameters of
 * unknown size, compiled on its first call) or a specialization for the
 * sizes and constants of its call sites (inter-procedural analysis,
 * plan/build.c): sig has one entry per parameter, and the output sizes
 * known at the end of the body are recorded for the callers. */
typedef struct FProg {
    Func *func;
    PBList body;
    bool compiled;         /* false while being built: a recursive call
                              with that signature uses the generic version */
    FSig *sig;             /* NULL: generic */
    int64_t *out_dims;     /* specializations: rows, cols of each output (-1) */
} FProg;

/* Can a call with these argument values (after the parameter's type
 * conversion) run specialization fp? */
bool fprog_accepts(const FProg *fp, const Value *args);

typedef struct RtProgram RtProgram;
typedef struct RtDagShip RtDagShip;
struct SymTab;
struct Rt;
struct Frame;

/* The builtin library (builtins/) as registered in a program: runs the
 * I_BUILTIN instruction in over args; *out receives a new value. */
typedef int (*RtBuiltinFn)(struct Rt *rt, struct Frame *f, const Instr *in, Value *args, Value *out, BrErr *e);

/* What the runtime asks of the compiler that built the program (plan/
 * installs them): dynamic recompilation, compilation of functions on
 * their first call, freeing DAGs, printing. */
typedef struct RtHooks {
    /* Code for block b with the sizes and values of vars (mode CG_BLOCK,
     * CG_PRED or CG_FORHDR); *ref receives what keeps it alive (release
     * with release), *hit whether the block's cache answered. NULL only
     * without memory. */
    Code *(*recompile)(RtProgram *p, PBlock *b, struct SymTab *vars, int mode, bool concurrent, void **ref,
                      bool *hit);
    void (*release)(void *ref);
    /* -explain recompile_hops: prints the DAG behind ref. */
    void (*explain)(void *ref, FILE *out);
    /* Compiles fn on its first call; NULL when it does not compile
     * (errors in d). */
    FProg *(*function)(RtProgram *p, Func *fn, Diag *d);
    /* The specialization of fn for sig, found or compiled (NULL when it
     * does not compile). */
    FProg *(*function_sig)(RtProgram *p, Func *fn, const FSig *sig, Diag *d);
    /* Frees a block's DAG. */
    void (*free_dag)(void *dag);
    /* -stats: the compiler's lines (rewrites applied). */
    void (*print_stats)(const RtProgram *p, FILE *out);
    /* Remote parfor plans: blocks' DAGs as bytes (runtime/planship.h). */
    const struct RtDagShip *dagship;
} RtHooks;

/* The whole runtime program. */
struct RtProgram {
    Program *ast;
    PBList main;
    FProg **funcs;        /* compiled functions (lazily, on first call) */
    int nfuncs, fcap;
    pthread_mutex_t lock; /* guards lazy compilation of functions */
    int optlevel;         /* 0: no rewrites (sysds.optlevel), 2: default */
    CgContext *cg;        /* operator fusion (codegen/), NULL: off */
    int cla;              /* sysds.compressed.linalg (RT_CLA_*, interp.h) */
    Diag *diag;           /* compile errors of lazily compiled functions */
    const RtHooks *hooks;
    RtBuiltinFn builtin;  /* the builtin library (bi_builtin) */
    void *cstate;         /* the compiler's state (plan/: statistics) */
    /* Where a function this program does not hold comes from (the
     * compiler's function hooks ask it instead of compiling): a remote
     * parfor worker's shell program asks rank 0 (runtime/distparfor.c);
     * NULL: compiled here. NULL with errors in d when it cannot come. */
    FProg *(*fetch)(RtProgram *p, Func *fn, const FSig *sig, Diag *d);
};

void pblock_free(const RtProgram *p, PBlock *b);
void fprog_free(const RtProgram *p, FProg *fp);

#endif
