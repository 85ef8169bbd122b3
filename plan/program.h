/* program.h: the runtime program: program blocks (generic, if, for,
 * parfor, while) holding the HOP DAG of each basic block and the
 * instructions generated from it (seed 002, section 2: statement blocks ->
 * HOP DAGs -> runtime program). */
#ifndef BRAID_PROGRAM_H
#define BRAID_PROGRAM_H

#include "../hops/hop.h"
#include "../rewrite/rewrite.h"
#include "../codegen/codegen.h"
#include <pthread.h>

/* One instruction: executes one HOP, reading registers in[] and writing
 * register out; registers whose last use this is are freed after it. */
typedef struct Instr {
    Hop *hop;
    int out;
    int *in;            /* one per hop input; -1 for an absent input */
    int *frees;         /* registers to release after this instruction */
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
    int64_t seen_cells;    /* run time: cells of the largest matrix an
                              execution produced (-1: not executed yet;
                              read by recompile.c's small-block rule) */
} Code;

typedef enum { PB_GENERIC, PB_IF, PB_WHILE, PB_FOR } PBKind;

/* A set of variable names (small; linear search). */
typedef struct NameSet { const char **v; int n, cap; } NameSet;
bool ns_has(const NameSet *s, const char *name);
bool ns_add(NameSet *s, const char *name);    /* true if added */
void ns_free(NameSet *s);

typedef struct PBlock PBlock;
typedef struct PBList { PBlock **v; int n, cap; } PBList;

struct PBlock {
    PBKind kind;
    Span span;
    HopDag *dag;        /* generic: the block; if/while: predicate;
                           for: header (roots from, to, incr) */
    Code *code;
    PBList body;        /* if: then; loops: body */
    PBList els;         /* if: else */
    const char *var;    /* for: loop variable */
    bool parfor;
    bool parfor_check;  /* check=1 (dependency analysis) */
    int parfor_par;     /* par= (0: all cores) */
    NameSet live_out;   /* variables live after this block */
    NameSet results;    /* parfor: result variables (left-indexed) */
    NameSet accums;     /* parfor: accumulator results (R += ...): merged
                           as R + the sum of every worker's change */
    bool par_ok;        /* parfor: analysis allows parallel execution */
    void *rc_cache;     /* runtime/recompile.c: code of earlier dynamic
                           recompilations, freed by rc_free */
    void (*rc_free)(void *);
};

/* A compiled function. */
typedef struct FProg {
    Func *func;
    PBList body;
    bool compiled;
} FProg;

/* The whole runtime program. */
typedef struct RtProgram {
    Program *ast;
    PBList main;
    FProg **funcs;        /* compiled functions (lazily, on first call) */
    int nfuncs, fcap;
    pthread_mutex_t lock; /* guards lazy compilation of functions */
    int optlevel;         /* 0: no rewrites (sysds.optlevel), 2: default */
    CgContext *cg;        /* operator fusion (codegen/), NULL: off */
    Diag *diag;           /* compile errors of lazily compiled functions */
    RwStats rw;           /* rewrites applied (compile time) */
} RtProgram;

/* Rewrites (per optlevel), recompilation flag and instructions of a DAG. */
Code *plan_compile_dag(RtProgram *p, HopDag *d, int mode, RwStats *st);
void plan_rewrite_dag(RtProgram *p, HopDag *d, RwStats *st);

void pbl_add(PBList *l, PBlock *b);
void pblock_free(PBlock *b);

/* Instruction generation for one DAG (plan/instgen.c). */
Code *plan_codegen_dag(HopDag *d, int mode);
enum { CG_BLOCK, CG_PRED, CG_FORHDR };
void plan_code_free(Code *c);

/* Liveness over a block list: fills live_out of every block; returns the
 * variables live on entry in *live_in (caller frees with ns_free). */
void plan_liveness(PBList *l, const NameSet *live_after, NameSet *live_in);

/* Print the runtime program (-explain runtime). */
void plan_print(const RtProgram *p, FILE *out);
/* Print every HOP DAG (-explain hops) / as Graphviz (-explain dot). */
void plan_print_hops(const RtProgram *p, FILE *out);
void plan_print_dot(const RtProgram *p, FILE *out);

#endif
