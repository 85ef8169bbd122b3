/* interp.h: the interpreter over the runtime program: program blocks,
 * instructions, a symbol table per call frame, liveness-driven freeing,
 * function calls and parfor workers. */
#ifndef BRAID_INTERP_H
#define BRAID_INTERP_H

#include <stdio.h>
#include <pthread.h>

#include "program.h"
#include "../kernels/apply.h"
#include "../kernels/cla.h"
#include "symtab.h"

typedef struct RtOptions {
    FILE *out;            /* where print() goes (stdout) */
    bool stats;           /* collect heavy-hitter statistics */
    int64_t seed;         /* -seed: base for rand/sample without seed; -1 none */
    bool explain_recompile; /* reserved: -explain recompile_hops */
    FILE *explain_out;    /* where it goes; NULL: out */
    /* -explain recompile_dot / braid_trace_recompile: called (under the
     * run's lock) with each DAG dynamic recompilation made (ref: the
     * hooks' handle, RtHooks.dot draws it); NULL: none */
    void (*recompiled)(void *ctx, const struct PBlock *b, void *ref);
    void *recompiled_ctx;
    bool loop_stats;      /* count the loops' iterations (rt->loops) */
    int cla;              /* sysds.compressed.linalg: RT_CLA_OFF/ON/AUTO */
    /* -bindcheck: calls of DML functions print their bindings instead of
     * running the body (bindcheck.h) */
    bool bindcheck;
    /* the buffer pool of the context that owns this run (base.h: an
     * embedding script's, kept across its runs); NULL: the run makes its
     * own, freed by rt_destroy */
    BrPool *pool;
} RtOptions;

/* Compressed linear algebra modes (docs/cla.md). */
enum { RT_CLA_OFF, RT_CLA_ON, RT_CLA_AUTO };

/* one heavy hitter: its calls, time and (with the bound meter on,
 * runtime/bound.h) the sum of its calls' bounds */
typedef struct RtStat { const char *name; int64_t count; int64_t ns; double bound; } RtStat;

/* Iterations of one loop (by its script position) in a run: how often
 * the loop statement ran, its body's runs in all, and the most of any one
 * entry. A machine-readable count for clients (braid_loops), where a
 * builtin returns none (the Python estimators' n_iter_). */
typedef struct RtLoop { Span span; int64_t entries, iterations, max_iterations; } RtLoop;

typedef struct Rt {
    RtProgram *prog;
    Diag *diag;               /* errors of functions compiled lazily */
    RtOptions opt;
    pthread_mutex_t lock;     /* error, stats, printing */
    BrErr err;                /* the first error, with its script position */
    bool stopped;             /* stop() or an error: unwind */
    RtStat *stats; int nstats, scap;
    int64_t seed_counter;     /* rand without seed under -seed */
    bool in_parfor;
    bool no_dist;             /* run everything locally: a remote parfor's
                                 iterations (runtime/distparfor.c) */
    int64_t nrecompile;       /* dynamic recompilations and their time */
    int64_t recompile_ns;
    int64_t nrc_hits;         /* recompilations answered by the block's cache */
    int64_t rc_hit_ns;
    int32_t *rc_samples;      /* recompile times (us) of the first 65536 */
    int nrc_samples;
    int64_t npf_memlimited;   /* parfor loops run with fewer workers than
                                 threads for want of memory */
    int pf_least_degree;      /*   and the least degree they ran with */
    BrPool *pool;             /* large freed blocks kept for reuse, bound to
                                 the threads that run this context (base.h,
                                 docs/DESIGN.md "Buffer pools"); NULL: none */
    bool own_pool;            /*   made by rt_init (else opt.pool) */
    RtLoop *loops;            /* opt.loop_stats: per loop, first run first */
    int nloops, lcap;
    ClaStats cla;             /* -stats of compressed linear algebra (this run's) */
    struct LinTrace *lin;     /* lineage tracing (runtime/lineage.h): on for
                                 scripts that call lineage(), else NULL */
} Rt;

struct ClaAfter;
typedef struct Frame {
    SymTab vars;
    int depth;                /* call depth (recursion limit) */
    /* the callers' uses, after the calls that lead here, of the blocks
     * of this frame's deferred compress(X) arguments (runtime/cla_rt.h;
     * NULL in the main frame); parfor workers share their frame's */
    const struct ClaAfter *cla_after;
} Frame;

void rt_init(Rt *rt, RtProgram *p, Diag *d, const RtOptions *o);
void rt_destroy(Rt *rt);
/* Runs the main program. Returns 0, or non-zero with rt->err set. */
int rt_run_main(Rt *rt, Frame *f);
/* opt.loop_stats: records that loop b ran n iterations (runtime/loops.c);
 * without memory the count is dropped (statistics, not results). */
void rt_loop_done(Rt *rt, const struct PBlock *b, int64_t n);
int rt_exec_list(Rt *rt, Frame *f, PBList *l);
/* The block lists this thread is running (rt_exec_list), innermost
 * first: list l's block i runs in frame f. What a frame runs after its
 * current block is the rest of its lists (runtime/cla_rt.c prices a
 * deferred compress(X)'s later uses from it). */
typedef struct RtCont {
    const PBList *l;
    int i;
    const Frame *f;
    const struct RtCont *up;
    double left;   /* l a loop's body: its runs after this one (-1: unknown); else 0 */
} RtCont;
const RtCont *rt_cont(void);
/* rt_exec_list for a loop's body with `left` runs after this one (-1:
 * unknown; RtCont.left) */
int rt_exec_body(Rt *rt, Frame *f, PBList *l, double left);
/* parfor's result merge (SystemDS's compare-with-original): every cell
 * of a result variable that worker frame w[t] changed is taken from it;
 * accumulators (R += ...) get the sum of every worker's change. f's
 * results must be matrices. */
int rt_parfor_merge(Rt *rt, Frame *f, PBlock *b, Frame *w, int k);

/* Seeds of rand()/sample() without a seed under -seed (runtime/seeds.c):
 * the next one of the calling thread's stream (-1 without -seed). A
 * parfor takes a base from its caller's stream; each iteration then
 * draws from a stream of (base, iteration index), whatever worker runs
 * it. Save and restore the calling thread's stream around a loop. */
typedef struct { bool on; uint64_t base, iter, count; } RtSeedState;
int64_t rt_next_seed(Rt *rt);
uint64_t rt_seed_loop_base(Rt *rt);
void rt_seed_iter(Rt *rt, uint64_t base, int64_t iter);
RtSeedState rt_seed_save(void);
void rt_seed_restore(RtSeedState s);
/* Iterations first, first + step, ... below n of parfor b (iteration k's
 * value from + k * incr) into f, on this process's threads where the loop
 * allows and memory suffices (a remote parfor rank's share); *degree
 * receives the threads that ran them. sbase: the loop's seed base
 * (rt_seed_loop_base of the process that started the loop). */
int rt_parfor_share(Rt *rt, Frame *f, PBlock *b, double from, double incr, bool ints, int64_t n, int64_t first,
                    int64_t step, uint64_t sbase, int *degree);
/* Calls f with args (bound in parameter order, borrowed); on success *out
 * is a list of f's outputs (caller owns). */
int rt_call(Rt *rt, Frame *caller, Func *f, Value *args, Value *out);
/* Writes s and a newline to the run's print output (rt->opt.out) under
 * the run's lock, flushed: what print() shows. */
void rt_print_line(Rt *rt, const char *s);
/* Records an error at span (first error wins). Returns -1. */
int rt_fail(Rt *rt, Span sp, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* "file:line:col: " of the error ("" without a position) into buf. */
void rt_err_pos(const Rt *rt, char *buf, size_t n);
/* Prints the error as file:line:col: error: message. */
void rt_print_error(const Rt *rt, FILE *f);
void rt_print_stats(Rt *rt, FILE *f, int top);

#endif
