/* interp.h: the interpreter over the runtime program: program blocks,
 * instructions, a symbol table per call frame, liveness-driven freeing,
 * function calls and parfor workers. */
#ifndef BRAID_INTERP_H
#define BRAID_INTERP_H

#include <stdio.h>
#include <pthread.h>

#include "program.h"
#include "../kernels/apply.h"
#include "symtab.h"

typedef struct RtOptions {
    FILE *out;            /* where print() goes (stdout) */
    bool stats;           /* collect heavy-hitter statistics */
    int64_t seed;         /* -seed: base for rand/sample without seed; -1 none */
    bool explain_recompile; /* reserved: -explain recompile_hops */
} RtOptions;

typedef struct RtStat { const char *name; int64_t count; int64_t ns; } RtStat;

typedef struct Rt {
    RtProgram *prog;
    Diag *diag;               /* errors of functions compiled lazily */
    RtOptions opt;
    pthread_mutex_t lock;     /* error, stats, printing */
    BrErr err;
    Span err_span;
    bool has_span;
    bool stopped;             /* stop() or an error: unwind */
    RtStat *stats; int nstats, scap;
    int64_t seed_counter;     /* rand without seed under -seed */
    bool in_parfor;
    int64_t nrecompile;       /* dynamic recompilations and their time */
    int64_t recompile_ns;
    int64_t nrc_hits;         /* recompilations answered by the block's cache */
    int64_t rc_hit_ns;
    int32_t *rc_samples;      /* recompile times (us) of the first 65536 */
    int nrc_samples;
} Rt;

typedef struct Frame {
    SymTab vars;
    int depth;                /* call depth (recursion limit) */
} Frame;

void rt_init(Rt *rt, RtProgram *p, Diag *d, const RtOptions *o);
void rt_destroy(Rt *rt);
/* Runs the main program. Returns 0, or non-zero with rt->err set. */
int rt_run_main(Rt *rt, Frame *f);
int rt_exec_list(Rt *rt, Frame *f, PBList *l);
/* Calls f with args (bound in parameter order, borrowed); on success *out
 * is a list of f's outputs (caller owns). */
int rt_call(Rt *rt, Frame *caller, Func *f, Value *args, Value *out);
/* Records an error at span (first error wins). Returns -1. */
int rt_fail(Rt *rt, Span sp, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Prints the error as file:line:col: error: message. */
void rt_print_error(const Rt *rt, FILE *f);
void rt_print_stats(Rt *rt, FILE *f, int top);

/* Builtin functions (runtime/builtins.c). On error they return non-zero
 * with e set; *out receives a new value. */
int rt_builtin(Rt *rt, Frame *f, const Instr *h, Value *args, Value *out, BrErr *e);
/* Argument helpers of the builtins (runtime/builtins.c): whether an
 * optional argument was given, a number (also a 1x1 matrix or a numeric
 * string), a boolean, a string; errors name the argument. rt_ret_mb wraps
 * a kernel result (NULL: the kernel's error). */
bool rt_given(const Value *v);
int rt_num(const Value *v, const char *what, double *out, BrErr *e);
int rt_bool(const Value *v, const char *what, bool *out, BrErr *e);
const char *rt_str(const Value *v, const char *what, BrErr *e);
int rt_ret_mb(MB *m, Value *out, BrErr *e);
/* Splits a comma-separated string argument into at most max items that
 * point into *buf (caller frees it); returns the count or -1. */
int rt_split(const Value *v, const char *what, const char **items, int max, char **buf, BrErr *e);

/* Tier-2 builtins in their own files; each returns RT_NOT_MINE for a
 * builtin it does not implement (runtime/builtins_stats.c, frame.c). */
#define RT_NOT_MINE (-1000)
int rt_builtin_stats(Rt *rt, Frame *f, const Instr *h, Value *args, Value *out, BrErr *e);
int rt_builtin_frame(Rt *rt, Frame *f, const Instr *h, Value *args, Value *out, BrErr *e);
int rt_builtin_dnn(Rt *rt, Frame *f, const Instr *h, Value *args, Value *out, BrErr *e);
int rt_builtin_signal(Rt *rt, Frame *f, const Instr *h, Value *args, Value *out, BrErr *e);
int rt_count_distinct(const Value *a, const char *fn, Value *out, BrErr *e);   /* builtins_stats.c */
/* Fills fn's unbound parameters in bound[0..fn->nin) with their defaults
 * (literals, or the default function of the parameters before them) and
 * calls fn (*res: its outputs as a list, caller releases); errors read
 * "<who>: missing argument 'p' of <what>'fn'". Returns 0 or -1/code. */
int rt_call_defaults(Rt *rt, Frame *f, Func *fn, Value *bound, const char *who, const char *what, Value *res,
                     BrErr *e);
/* paramserv(model=, features=, labels=, upd=, agg=, ...) (runtime/paramserv.c) */
int rt_paramserv(Rt *rt, Frame *f, const Instr *h, Value *args, Value *out, BrErr *e);

#endif
