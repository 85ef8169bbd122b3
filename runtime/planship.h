/* planship.h: a remote parfor's compiled plan as bytes (SystemDS ships
 * the serialized parfor body to its remote workers; docs/dist.md,
 * "Remote parfor"). Rank 0 packs the loop block with everything under
 * it (program blocks, instructions, literals, the functions the body
 * calls, transitively, as compiled, and its fused operators by their
 * CPlan, the plan cache's key); a worker unpacks the bytes into blocks
 * of its own program, whose functions table the shipped functions join,
 * and runs exactly the plan rank 0 compiled, without compiling. */
#ifndef BRAID_PLANSHIP_H
#define BRAID_PLANSHIP_H

#include "../base/strbuf.h"
#include "program.h"
#include "wire.h"

/* How a DAG's references travel (planship.c fills it): a call's
 * function by name (by_name: does fn travel so; func: fn again on the
 * worker, NULL marks the plan bad), its specialization by index into
 * the plan's functions (spec_index adds it when packing; spec_at: -1 is
 * none), a where-loop by its place in the script (-1: not found). */
typedef struct PsRefs {
    void *ctx;
    BrErr *e;
    bool (*by_name)(void *ctx, const Func *fn);
    int32_t (*spec_index)(void *ctx, void *fprog);
    int32_t (*where_index)(void *ctx, const WhereLoop *w);
    Func *(*func)(void *ctx, const char *ns, const char *name);
    void *(*spec_at)(void *ctx, int32_t i);
    const WhereLoop *(*where_at)(void *ctx, int32_t i);
    void (*bad)(void *ctx, const char *why);   /* marks the bytes damaged */
} PsRefs;

/* A block's DAG in a plan, through the compiler (RtHooks.dagship,
 * plan/dagship.c): check gives why it cannot travel (NULL: it can),
 * put appends it, get reads one (freed with RtHooks.free_dag). */
struct RtDagShip {
    const char *(*check)(const void *dag, const PsRefs *r);
    void (*put)(const void *dag, StrBuf *o, const PsRefs *r);
    void *(*get)(WRd *rd, const PsRefs *r);
};

/* Packs loop b of program p (functions the body calls that rank 0 has
 * not compiled yet are compiled now, their errors into d) and appends
 * the bytes to out. With an eval whose name is not a literal, every
 * function of the script ships too. Returns 0, or 1 with *why naming the first thing that cannot be
 * shipped (the caller falls back to the workers compiling the script);
 * -1 out of memory. */
int ps_pack(RtProgram *p, const PBlock *b, Diag *d, StrBuf *out, const char **why);

/* A function a worker asks rank 0 for while its share runs (runtime/
 * distparfor.c): packs rank 0's compiled fn (the specialization for
 * sig, or with sig NULL the generic version; compiled now if rank 0 has
 * not yet, its errors into d) with the functions it calls, as ps_pack
 * packs a loop's, except those the worker holds: have reads, to its
 * end, the worker's list (ps_put_held; NULL: none), and a function on it
 * travels by its head only. sent (may be NULL): the functions packed
 * with their bodies, and by their heads. Returns 0, 1 with *why (a
 * damaged list, not found by its name, does not compile, cannot
 * travel), -1 out of memory. */
int ps_pack_func(RtProgram *p, Func *fn, const FSig *sig, WRd *have, Diag *d, StrBuf *out, const char **why,
                 int sent[2]);
/* Appends to q the list of the compiled functions p holds (the worker's
 * side of ps_pack_func's have): a count, then per function its
 * namespace key, name and signature (its length first, so rank 0 skips
 * a function it does not find). false: out of memory. */
bool ps_put_held(StrBuf *q, RtProgram *p);
/* The function of name (in the namespace of key ns) as plans name it
 * (a function computing an eval call's default parameter included). */
Func *ps_find_func(const Program *ast, const char *ns, const char *name);

/* Plans unpacked on a worker, kept for later tasks (by the bytes' hash). */
typedef struct PsCache PsCache;
/* The loop of plan bytes buf[0..n) in program p: from the cache, or
 * unpacked now (*fresh true; the functions join p->funcs). NULL with e
 * set when the bytes are damaged or come from another braid build. */
PBlock *ps_loop(PsCache **cache, RtProgram *p, const char *buf, size_t n, bool *fresh, BrErr *e);
/* The function plan bytes from ps_pack_func hold for fn, now in p's
 * table (with the functions it calls; the bytes join the cache, as its
 * instructions point into them); NULL with e set when the bytes are
 * damaged, come from another build or hold another function. */
FProg *ps_func(PsCache **cache, RtProgram *p, const char *buf, size_t n, const Func *fn, BrErr *e);
/* The compiled version of fn for sig (NULL: the generic one) p holds
 * (shipped, or compiled here); NULL if none. */
FProg *ps_held(RtProgram *p, Func *fn, const FSig *sig);
/* The functions every plan in the cache added to p->funcs. */
int ps_funcs(const PsCache *cache);
/* The shipped functions the plans did not add, as p held the same
 * function for the same signature (one copy of each stays). */
int ps_dups(const PsCache *cache);
/* Frees the loops (ps_free_loops, before or after the program) and the
 * bytes and literals the shipped functions point into (ps_free, after
 * the program that holds those functions is freed). */
void ps_free_loops(PsCache *cache);
void ps_free(PsCache *cache);

/* A specialization's signature (per parameter: rows, cols, the scalar
 * value or none) after a flag; put: false for a value a message does not
 * carry; get: NULL for the generic version (*has false) or on error. */
bool ps_put_sig(StrBuf *b, const Func *fn, const FSig *sig);
FSig *ps_get_sig(WRd *r, const Func *fn, bool *has, BrErr *e);
void ps_free_sig(const Func *fn, FSig *sig);

#endif
