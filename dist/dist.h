/* dist.h: distributed execution over MPI (seed 002: hybrid plans of
 * local and distributed operators; docs/dist.md).
 *
 * `mpirun -np N braid -f script.dml`: every rank starts braid; rank 0
 * compiles and runs the control program, the other ranks serve jobs
 * (dist_serve) until rank 0 stops them. A distributed matrix is row-block
 * partitioned: blocks of `blocksize` rows (sysds.defaultblocksize), rank r
 * holding the contiguous blocks [r*nb/N, (r+1)*nb/N) as one local block
 * (rank 0 holds a partition too). Rank 0 knows it by a handle (V_DIST in
 * matrix/value.h) with its sizes; the partitions live in each rank's
 * registry under the handle's id.
 *
 * A job is one header broadcast by rank 0 (the operator and its operands:
 * partitions by id, or values broadcast with the job), the same local
 * kernel (kernels/apply.h) on every rank's partition, and either a new
 * distributed result (map jobs: elementwise, row aggregates, mapmm) or a
 * reduction of the partial results to rank 0 (full and column aggregates,
 * tsmm, t(X)%*%y, mmchain, a broadcast left side times a distributed
 * right). Every rank agrees on success after its local work, so an error
 * on any rank ends the job everywhere with the failing rank's message.
 *
 * A plain `braid` run (no mpirun in the environment) never initializes
 * MPI: dist_active() is false and nothing here runs. */
#ifndef BRAID_DIST_H
#define BRAID_DIST_H

#include <stdio.h>

#include "../io/io.h"
#include "../kernels/apply.h"
#include "../matrix/value.h"

/* Launched by mpirun (its environment variables are set). */
bool dist_launched(void);
/* This process's rank, also before dist_init (mpirun's environment);
 * 0 when not launched. */
int dist_launched_rank(void);
/* Initializes MPI when launched; 0 also when not launched. */
int dist_init(BrErr *e);
/* MPI is initialized (any number of ranks, 1 included). */
bool dist_active(void);
int dist_rank(void);
int dist_size(void);
/* Ranks on this machine (sharing its cores). */
int dist_local_size(void);
/* Rows per block of new distributed matrices (> 0). */
void dist_set_blocksize(int64_t rows);
/* The network's rate between ranks in bytes/s, for the cost model:
 * given (set before dist_init; > 0, sysds.dist.netrate) or measured by
 * dist_init with a ping-pong between ranks 0 and 1 (1 GB/s when there
 * is one rank or MPI is not up). */
void dist_set_net_rate(double bytes_per_s);
double dist_net_rate(void);
/* The bytes a distributed operator moves in the plan's model: ctrl
 * bytes of the job's control messages and bcast bytes of broadcast
 * operands to every other rank, and reduce bytes of a result that every
 * other rank sends a partial of (codegen/cost.c prices it at
 * dist_net_rate; -stats sets it beside the bytes jobs sent). */
double dist_volume(double ctrl, double bcast, double reduce);
/* The control bytes of jobs jobs (their headers) with nval broadcast
 * values (a header each; a scalar travels in it) and members fused
 * operators of nin inputs in all (a header each, an operand descriptor
 * per input), plan the bytes of their operator plans that the workers
 * do not hold yet (workers keep the plans they got: a plan is sent once,
 * not with every job). */
double dist_ctrl_bytes(int jobs, int nval, int members, int nin, double plan);
/* Rank 0: do the workers hold the fused operator plan of these packed
 * bytes (sent with an earlier job and kept), so that a job running it
 * sends no plan? The cost model prices a plan by it. */
bool dist_fused_plan_held(const char *plan, size_t len);
/* The bytes of a rows x cols matrix of nnz non-zeros (< 0: unknown) as
 * it travels: a header and its cells in the format its sparsity gives. */
double dist_wire_bytes(int64_t rows, int64_t cols, int64_t nnz);
/* Every rank, collectively, right after dist_init: rank 0's n bytes at
 * p (n < 0: none) on every rank (malloc'd with a NUL after them, *len
 * bytes; NULL and *len -1 for none, or out of memory on rank 0). */
char *dist_share(const char *p, int64_t n, int64_t *len);
/* Workers (rank > 0): serve jobs until rank 0 stops; the exit status. */
int dist_serve(void);
/* Rank 0: stops the workers; every rank: finalizes MPI. */
void dist_finish(void);
/* Several runs in one process (`braid ... -then ...`, docs/dist.md):
 * rank 0 ends a run with dist_end_run (frees what it scattered; the
 * workers' dist_serve returns, MPI stays up), then every rank calls
 * dist_reset, collectively: every partition dropped, the fused plan
 * caches emptied, the statistics zeroed, the network rate unknown again.
 * The next run's dist_init gives or measures the rate; the run then
 * starts as in a new process (a long-lived process stays safe: nothing
 * of the last run is held or counted). */
void dist_end_run(void);
void dist_reset(void);
/* The instruction now running (named in fault messages). */
void dist_set_context(const char *what, int line);
/* -stats: jobs per operator, time and bytes moved. */
void dist_print_stats(FILE *f);

/* Operators, called on rank 0 with the instruction's operands (which may
 * be distributed or local; a local operand that must be partitioned is
 * scattered and replaced by its handle in place). 0: done (*out local or
 * distributed); DIST_LOCAL: no distributed operator for these operands
 * (run it locally); -1: error in e. */
enum { DIST_LOCAL = 1 };
int dist_unary(OpCode op, Value *a, Value *out, BrErr *e);
int dist_binary(OpCode op, Value *a, Value *b, Value *out, BrErr *e);
int dist_ternary(Value *c, Value *a, Value *b, Value *out, BrErr *e);
int dist_agg(OpCode op, AggDir dir, Value *a, Value *out, BrErr *e);
int dist_matmul(OpCode op, int left, Value *a, Value *b, Value *c, Value *out, BrErr *e);
/* The physical operator of A (n x k) %*% B (k x m) when both are large
 * (distmm.c): MM_MAPMM (B broadcast from rank 0), MM_RMM (B replicated
 * rank to rank) or MM_CPMM (joined on k, partial products summed): the
 * least communication volume among those whose memory per rank fits the
 * budget. dist_mm2 runs rmm or cpmm. */
enum { MM_MAPMM, MM_RMM, MM_CPMM };
int dist_mm_method(int64_t n, int64_t k, int64_t m, double a_bytes, double b_bytes, bool b_dist, double budget);
int dist_mm2(int method, Value *a, Value *b, Value *out, BrErr *e);
/* t(X) and rev(X) of a distributed X (rows move between ranks: the
 * result stays distributed). */
int dist_reorg(OpCode op, Value *a, Value *out, BrErr *e);
/* rbind(A, B) with one distributed: rows move to their new ranks. */
int dist_rbind(Value **v, int n, Value *out, BrErr *e);
/* var and sd, full or by column, of a distributed X: the local kernel's
 * two passes (sums all-reduced to the mean, then squared deviations). */
int dist_var(OpCode op, AggDir dir, Value *a, Value *out, BrErr *e);
/* Piggybacking (seed 002 section 3.4): between begin and end, reduce
 * operators (full and column aggregates, tsmm, t(X) %*% Y, mmchain)
 * are held instead of run; end runs them as one job: one header, every
 * member's kernel on each rank's rows, one agreement and one reduction
 * per reduction operator over all members' partial results. Their
 * results land in the out slots given to the operators. Map operators
 * and row moves still run at once. */
void dist_set_piggyback(bool on);
bool dist_piggyback(void);
void dist_group_begin(void);
int dist_group_end(BrErr *e);
/* x[r[0]:r[1], r[2]:r[3]] (0-based, half-open) of a distributed x: all
 * rows stay distributed (each rank slices its columns), a row range goes
 * to rank 0 (only the ranks holding its rows send). */
int dist_rix(Value *x, const int64_t r[4], Value *out, BrErr *e);
/* x[r[0]:r[1], r[2]:r[3]] = src of a distributed x: src broadcast, each
 * rank replaces its rows of the range (a new distributed result). */
int dist_lix(Value *x, Value *src, const int64_t r[4], Value *out, BrErr *e);
/* cbind of 2 or 3 matrices of the same rows, one of them distributed. */
int dist_cbind(Value **v, int n, Value *out, BrErr *e);
/* table(a, b, w, odim1, odim2) (-1, -1: without dimensions, found by an
 * all-reduce of the ranks' largest ids first; w: NULL, an n x 1 weight
 * vector partitioned with a, or a number) of n x 1 vectors (one
 * distributed). When
 * odim1 = n and each rank's row ids fall within its rows (as with
 * seq(1, n)): the n x odim2 result stays distributed; DIST_LOCAL when
 * the ids do not stay within the ranks' rows. */
int dist_table(Value *a, Value *b, Value *w, int64_t odim1, int64_t odim2, Value *out, BrErr *e);
/* read() of a binary matrix file: every rank reads its rows (positioned
 * reads of just their bytes). */
int dist_read_binary(Value *path, Value *out, BrErr *e);
/* read() of a csv, text or libsvm matrix file (p: io_read_plan's merge
 * of the .mtd and the arguments): every rank parses the lines that begin
 * in its share of the bytes, then the rows go to the ranks that hold
 * them. Errors name the file and the line. DIST_LOCAL for options it does
 * not take (too many naStrings, other formats). */
int dist_read_text(Value *path, const IoReadPlan *p, Value *out, BrErr *e);
/* write() of a distributed matrix as csv, text or binary: every rank
 * writes its rows as a part file of a temporary folder, which rank 0
 * commits with one .mtd over path (nothing under path on failure);
 * DIST_LOCAL for other formats. */
int dist_write(Value *x, const char *path, const IoWriteOpts *o, BrErr *e);
/* Fused operators over row partitions (seed 000 section 5.5,
 * docs/dist.md): codegen describes an operator (cg_dist_describe) and
 * ships its CPlan as bytes; every rank runs it over its rows of the
 * partitioned inputs with the others broadcast. A map operator's result
 * (rows of the main input) stays distributed; a reduce operator's partial
 * results (full or column aggregates, t(X) %*% Y, several for a
 * multi-aggregate) are reduced to rank 0 by their combine operator. */
enum { DF_MAP, DF_REDUCE };
enum { DF_SUM, DF_MIN, DF_MAX };
#define DF_MAXOUT 8
typedef struct DistFused {
    char *plan;              /* the operator's CPlan as bytes (cg_plan_pack) */
    size_t plen;
    int kind;                /* DF_MAP or DF_REDUCE */
    int main;                /* the input whose rows are partitioned */
    int nin;                 /* inputs */
    const bool *part;        /* per input: partitioned with main's rows
                                (else broadcast) */
    int nout;                /* DF_REDUCE: outputs (a list when > 1) */
    int red[DF_MAXOUT];      /* their combine operators */
    /* rank 0 runs the operator it holds: local(ctx, nin, args, out, e) */
    int (*local)(void *ctx, int nin, Value *args, Value *out, BrErr *e);
    void *ctx;
    int64_t place;           /* the operator's placement (0: none): the
                                first job of each adds price[0], the plan
                                bytes the cost model priced at its compile,
                                and price[1], the plan's estimated size,
                                to -stats */
    double price[2];
} DistFused;
/* Workers run a shipped plan with this function (registered by the
 * layer that owns codegen before dist_serve). */
typedef int (*DistFusedRun)(const char *plan, size_t plen, int nin, Value *args, Value *out, BrErr *e);
void dist_set_fused_runner(DistFusedRun fn);
/* Rank 0: runs f over args[0..nin) (partitioned ones scattered if local,
 * broadcast ones collected if distributed). */
int dist_fused(const DistFused *f, Value **args, int nin, Value *out, BrErr *e);
/* Piggybacking of fused operators: n reduce operators over the same
 * rows (their main inputs partitioned alike) as one job: every rank runs
 * them all, one agreement, one all-reduce of their result shapes and one
 * reduction per combine operator over all their partial results; member
 * m's result lands in *outs[m]. DIST_LOCAL when they do not form such a
 * group (the caller runs them one by one). */
int dist_fused_group(const DistFused *const *fs, Value **const *args, Value **outs, int n, BrErr *e);
/* A fused reduce operator joins the open piggyback group
 * (dist_group_begin): its operands placed now, it runs in the group's
 * job with the basic reduce operators (one agreement, one reduction per
 * operator for all). f and args must live until dist_group_end; its
 * result lands in *out. DIST_LOCAL when it cannot join (not a reduce,
 * other rows, the group full). */
int dist_group_fused(const DistFused *f, Value **args, Value *out, BrErr *e);
/* Tasks (remote parfor, docs/dist.md): rank 0 broadcasts a payload,
 * every rank (rank 0 included) runs it with the runner the upper layer
 * registered and returns a result as bytes; rank 0 receives them all.
 * DistTaskRun: *res (malloc'd, *rlen bytes) is the rank's result; -1 on
 * error (e set). dist_task: res[r], rlen[r] for every rank r (dist_size
 * entries, the caller frees them); on error -1 (the failing rank's
 * message) and nothing in res. */
typedef int (*DistTaskRun)(const char *payload, size_t n, char **res, size_t *rlen, BrErr *e);
void dist_set_task_runner(DistTaskRun fn);
int dist_task(const char *payload, size_t n, DistTaskRun local, char **res, size_t *rlen, BrErr *e);
/* Requests during a task: a worker's runner may ask rank 0 for bytes
 * (dist_task_ask, from any of its threads, one request at a time: the
 * answer, malloc'd, *alen bytes; NULL with e set outside a task or for a
 * request of 0 or 2 GiB bytes or more). Rank 0 answers them with the
 * server the upper layer registered (dist_set_task_server: *ans
 * malloc'd, *alen bytes; -1 when it cannot answer, and then the answer
 * is one byte 0, as without a server), on a thread of its own while its
 * own share runs, until every worker's share has ended. */
typedef int (*DistTaskServe)(const char *req, size_t n, char **ans, size_t *alen);
void dist_set_task_server(DistTaskServe fn);
char *dist_task_ask(const char *req, size_t n, size_t *alen, BrErr *e);
/* -stats of remote parfor loops: one ran with up to threads threads on a
 * rank, in_func: the loop is inside a function. */
void dist_note_parfor(int threads, bool in_func);
/* -stats of remote parfor plans: shipped (else why not), plans the
 * workers decoded, programs or functions they compiled, and shipped
 * functions they dropped as copies of ones they held. */
void dist_note_plan(bool shipped, int decoded, int compiled, int dups, const char *why);
/* -stats: functions workers received from rank 0 on request. */
void dist_note_fetched(int fetched);
/* -stats: a request rank 0 answered: what 0 for a function, 1 for a
 * library file it has, 2 for a name it has no library file for. */
void dist_note_ask(int what);
/* -stats: rank 0's answer to a request for a function: bytes long, with
 * bodies functions packed whole and heads named by their heads only (the
 * worker held them). */
void dist_note_answer(int bodies, int heads, size_t bytes);
/* A matrix block as bytes and back (what jobs send). */
char *dist_pack_mb(const MB *m, size_t *n);
MB *dist_unpack_mb(const char *buf, size_t n, BrErr *e);
/* A distributed matrix to a local one in place (refused when it exceeds
 * the physical memory limit, br_mem_physical). */
int dist_collect(Value *v, BrErr *e);
/* A local matrix to a distributed one in place. */
int dist_scatter(Value *v, BrErr *e);

#endif
