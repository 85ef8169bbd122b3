/* distexec.h: instructions over distributed matrices (distexec.c). */
#ifndef BRAID_DISTEXEC_H
#define BRAID_DISTEXEC_H

#include "interp.h"
#include "../base/strbuf.h"
#include "../lang/load.h"
#include "../io/io.h"

/* Under MPI, before instruction in of c runs: an EX_DIST instruction runs
 * as a distributed operator where dist/ has one; a local one gets its
 * distributed operands collected to rank 0 (nrow, ncol and length are
 * answered from the handle). 1: done, 0: run it locally, -1: error in e. */
int rt_dist_step(Rt *rt, const Code *c, Frame *f, const Instr *in, Value *regs, BrErr *e);
/* Workers: run the fused operators rank 0 ships with the options o (a
 * context of their own, made on the first job; api/run.c registers it). */
void rt_dist_fused_worker(const CgOptions *o);
/* Between runs of one process (`braid ... -then ...`), every rank after
 * rank 0's dist_end_run: dist_reset, and what the runtime and codegen
 * keep of the ranks (rank 0's priced plans, a worker's codegen context
 * of the last run's options). */
void rt_dist_reset(void);

/* read()'s arguments (builtins/core.c's b_read positions: file, format,
 * rows, cols, header, sep, fill, default, naStrings, data_type, ...,
 * indSep at 15, dataset at 16)
 * as io's options; false when they are not plain values (the local read
 * then reports what is wrong). naStrings: at most RT_MAX_NA items in na,
 * pointing into the instruction's values or *nabuf (the caller frees
 * it). */
#define RT_MAX_NA 16
bool rt_read_opts(const Instr *in, Value *regs, IoReadOpts *o, const char **na, char **nabuf);
/* The same from the argument values a[0 .. RT_READ_NARGS - 1] (NULL:
 * not given), e.g. a read's literals at compile time. */
#define RT_READ_NARGS 17
bool rt_read_opts_of(const Value *const *a, IoReadOpts *o, const char **na, char **nabuf);

/* -explain: the instruction index that leads the piggybacked job
 * instruction i of c is expected to join (itself when it leads one), -1
 * when none: distributed reduce operators over the same register whose
 * operands are ready when the first of them runs (the run-time rule of
 * piggyback() with the execution types in place of the operands'
 * kinds). */
int rt_dist_group(const Code *c, int i);
/* Remote parfor (distparfor.c): rank 0 runs the iterations of parfor b
 * on every rank (mode=REMOTE_SPARK under mpirun) and merges the results
 * into f; DIST_LOCAL when it cannot (a parfor inside a function, a
 * variable a task does not carry): run it locally. */
int rt_dist_parfor(Rt *rt, Frame *f, PBlock *b, double from, double incr, int64_t n, bool ints, uint64_t sbase);
/* Workers: compile(arg, full, &diag) makes a program: full, the script
 * compiled (for tasks whose plan was not shipped), else a shell with the
 * script parsed and nothing compiled, which shipped plans join (NULL:
 * failed). _end hands back both programs, to free; _release then frees
 * the shipped plans' bytes their functions point into. */
void rt_dist_parfor_worker(RtProgram *(*compile)(void *arg, bool full, Diag **d), void *arg, const RtOptions *ro);
void rt_dist_parfor_worker_end(RtProgram **shell, RtProgram **full);
void rt_dist_parfor_worker_release(void);
/* Why this thread's last request to rank 0 for a function failed (a
 * worker's shell program, RtProgram.fetch); NULL when it did not. */
const char *rt_dist_fetch_why(void);
/* A worker's LangOptions.lib_fetch: the builtin library file of function
 * name as rank 0 loaded it (asked while a task runs): 1, 0 when rank 0
 * has none, -1 outside a task or on a damaged answer. */
int rt_dist_lib_fetch(void *arg, const char *name, LangSource *s);
/* Requests of a worker to rank 0 while a task runs, and rank 0's
 * answers (docs/dist.md "Functions from rank 0"). rt_dist_func_request
 * appends to q the request for fn (for specialization sig, NULL: the
 * generic version), with fn's parameter names and the compiled functions
 * program p holds (NULL: none), which rank 0 does not send again (their
 * heads only, planship.c ps_pack_func); rt_dist_serve is rank 0's
 * answer from runtime rt to any request (*ans malloc'd; -1: out of
 * memory, as its server's -1); rt_dist_func_answer reads the answer to a function request:
 * the plan's bytes (inside a), or -1 with why not in e (rank 0 refuses a
 * function it does not find, that does not compile, or whose parameters
 * differ from the worker's). 0, or non-zero with e set. */
int rt_dist_func_request(StrBuf *q, const Func *fn, const FSig *sig, RtProgram *p, BrErr *e);
int rt_dist_serve(Rt *rt, const char *req, size_t n, char **ans, size_t *alen);
int rt_dist_func_answer(const char *a, size_t n, const char **plan, size_t *len, BrErr *e);

#endif
