/* distint.h: what the dist/ files share (not included outside dist/):
 * the job header and its types, the transport, the partition registry
 * and the job plumbing of dist.c (dist.h describes the model). */
#ifndef BRAID_DISTINT_H
#define BRAID_DISTINT_H

#include <mpi.h>
#include <pthread.h>

#include "dist.h"

typedef enum {
    J_STOP, J_SCATTER, J_COLLECT, J_FREE, J_UNARY, J_BINARY, J_TERNARY, J_RAGG, J_FAGG, J_CAGG,
    J_MAPMM, J_LMM, J_TSMM, J_TMM, J_MMCHAIN, J_CSLICE, J_RSLICE, J_CBIND, J_READ, J_TABLE,
    J_READT, J_WRITE, J_CPMM, J_RMM, J_TRANSPOSE, J_RBIND, J_MULTI, J_VAR, J_REV, J_LIX, J_FUSED, J_TASK, J_DIAG, J_NTYPES
} JobType;

/* Operand roles: none, a partitioned matrix (by id), a broadcast value. */
enum { A_NONE, A_DIST, A_BCAST };

typedef struct Job {
    int32_t type, op, dir, left;
    int32_t nin;
    int32_t kind[3];
    int64_t id[3];      /* A_DIST: partitions */
    int64_t out;        /* map jobs: the result's id */
    int64_t rows, cols; /* shape of the (first) partitioned operand */
    int64_t orows, ocols; /* reduce jobs: the result's shape */
    int64_t ix[4];      /* slices: rows ix[0]:ix[1], columns ix[2]:ix[3] */
} Job;

/* MPI state (dist.c). g_lock serializes rank 0's jobs; g_bytes counts
 * the bytes the running job moves (rank 0's statistics). */
extern bool g_on;
extern int g_rank, g_size;
extern int64_t g_next_id, g_bytes;
extern int64_t g_piggy_fused;   /* -stats: fused operators run in groups */
extern pthread_mutex_t g_lock;

/* Transport (dist.c). */
void bcast_bytes(void *p, size_t n);
int bcast_value(Value *v, BrErr *e);
char *pack(const MB *m, size_t *n);
MB *unpack(const char *buf, size_t n, BrErr *e);
bool send_mb(const MB *m, int to);
MB *recv_mb(int from, BrErr *e);

/* Partitions (dist.c): rank r's rows [lo, hi) of an n-row matrix, and the
 * registry of this rank's partitions by id. */
void part_range(int64_t n, int r, int64_t *lo, int64_t *hi);
int part_put(int64_t id, MB *m);
MB *part_get(int64_t id);
void part_drop(int64_t id);

/* Jobs (dist.c). agree: every rank learns whether any failed (rank 0
 * gets the lowest failing rank's message). finish_map: keeps loc as the
 * job's new partition and gives rank 0 the handle. start_job: rank 0
 * broadcasts the header and runs the job. */
int agree(bool failed, BrErr *e);
DM *dm_new(int64_t rows, int64_t cols, int64_t nnz, int64_t id);
int finish_map(const Job *j, Value *loc, Value *res, BrErr *e);
int start_job(Job *j, const MB *src, Value *bv, Value *res, BrErr *e);
/* -stats: bytes the plan's volume model gives a job of this type
 * (dist.c; the model: dist_volume). */
void stat_predict(int type, double bytes);
/* The bytes of a reduced result's partial from one rank. */
double partial_bytes(const Value *v);
/* A fused member's header: its plan's length, the worker plan cache's
 * slot of the plan, and whether the plan follows (else the workers hold
 * it in that slot); and an operand's role. */
typedef struct FHead {
    int64_t plen;
    int32_t kind, nout, nin, slot, sent, pad;
    int32_t red[DF_MAXOUT];
} FHead;
typedef struct FArg { int32_t kind, pad; int64_t id; } FArg;
/* A broadcast value's header (dist.c bcast_value). */
typedef struct VHead { int32_t kind; int32_t pad; int64_t len; union { double d; int64_t i; } u; } VHead;
/* The model's volume of n fused operators with their operands and
 * results (distfused.c), the job header not included; plan: the bytes of
 * their plans the job sent (fused_plan_bytes, read after the job). */
double fused_volume(const DistFused *const *fs, Value **const *args, Value **outs, int n, double plan);
/* Rank 0: bytes of operator plans sent since the last call (and resets). */
double fused_plan_bytes(void);
/* -stats: operator plans sent and found in the workers' plan cache. */
void fused_print_stats(FILE *f);
/* dist_reset's parts, every rank: the plan cache emptied (rank 0's
 * mirror and the workers' alike) and the fused statistics; the remote
 * parfor statistics; the network rate back to unknown (dist_init gives
 * or measures it again); the instruction named in fault messages. */
void fused_reset(void);
void task_reset(void);
void net_reset(void);
void fault_reset(void);
bool is_mat(const Value *v);
int64_t vrows(const Value *v);
int64_t vcols(const Value *v);
int as_part(Job *j, int k, Value *v, BrErr *e);
int as_bcast(Job *j, int k, Value *v, BrErr *e);
int run_op(Job *j, Value **v, Value *out, BrErr *e);
/* Reduces n doubles to rank 0 with op (an MPI_Op; in pieces). */
void reduce_to_0(double *buf, size_t n, MPI_Op op);

/* Moving rows between ranks (distshuffle.c). A piece is a block of
 * rows that starts at global row off. redistribute: every rank gives
 * its pieces of a total-row matrix and gets its rows of
 * the row-block partitioning (part_range), stacked in row order (NULL:
 * no rows). Collective; the bytes moved by all ranks count on rank 0. */
typedef struct Piece { int64_t off; MB *m; } Piece;
int redistribute(const Piece *pc, int np, int64_t total, MB **out, BrErr *e);
/* shuffle: every rank sends pcs[t][0..npc[t]) to every rank t and gets
 * the pieces sent to it, sorted by off (*nout of them; NULL on error).
 * Collective. */
Piece *shuffle(Piece *const *pcs, const int *npc, int *nout, BrErr *e);
void pieces_free(Piece *p, int n);
/* Received pieces stacked by rows (or by columns), which must add up to
 * want rows (columns). */
MB *stack_pieces(const Piece *got, int n, int64_t want, bool by_cols, BrErr *e);
/* all-to-all of byte messages: send[t] (slen[t] bytes) to every rank t;
 * recv[s] (malloc'd, rlen[s]) from every rank s; the own message is
 * copied. Collective; out of memory ends the run (MPI_Abort). */
void exchange(char **send, const size_t *slen, char **recv, size_t *rlen);

/* Jobs of the other files, run on every rank. */
int run_readt(const Job *j, Value *path, Value *res, BrErr *e);   /* distio.c */
int run_write(const Job *j, Value *dir, BrErr *e);
int run_cpmm(const Job *j, Value *res, BrErr *e);                  /* distmm.c */
int run_rmm(const Job *j, Value *res, BrErr *e);
int run_transpose(const Job *j, Value *res, BrErr *e);
int run_rbind(const Job *j, Value *res, BrErr *e);
int run_var(const Job *j, Value *res, BrErr *e);
int run_rev(const Job *j, Value *res, BrErr *e);
int run_fused(const Job *j, Value *res, BrErr *e);                 /* distfused.c */
int run_task(const Job *j, BrErr *e);                              /* disttask.c */
/* Fused reduce members of a job (distfused.c; a piggyback job mixes them
 * with basic reduce operators, dist.c run_multi): run over this rank's
 * rows, flattened after the agreement (shapes agreed), each entry's
 * reduction operator, rank 0's results. */
typedef struct FusedPart {
    int n;
    struct FHead *h;
    Value *loc;
    int64_t *sh;
    double **buf;
    size_t *len;
} FusedPart;
void fpart_run(FusedPart *p, int n, int64_t rows, bool *failed, BrErr *e);
int fpart_flatten(FusedPart *p, BrErr *e);
MPI_Op fpart_op(const FusedPart *p, int m, size_t i);
int fpart_finish(FusedPart *p, bool ok, Value **outs, BrErr *e);
/* Rank 0: member f's operands placed (partitioned ones scattered,
 * broadcast ones collected), its rows in *rows; DIST_LOCAL when it does
 * not split by rows. fused_members: the members the next job runs. */
int fused_place(const DistFused *f, Value **args, int64_t *rows, BrErr *e);
void fused_members(const DistFused *const *fs, Value **const *args, Value **outs);
extern int g_pf_threads;   /* remote parfor statistics (disttask.c) */
extern int64_t g_pf_funcs;
extern int64_t g_pf_shipped, g_pf_unshipped, g_pf_decoded, g_pf_compiled, g_pf_dups, g_pf_fetched, g_pf_asks[3], g_pf_ans[3];
extern const char *g_pf_why;
/* Fault reporting (distfault.c), after MPI is up: the SIGTERM handler
 * and, under braid's launcher, this rank's marks for it. */
void fault_init(void);
/* Rank 0 is about to stop the workers: their exits are no deaths. */
void fault_stopping(void);
/* -stats: how rank 0 watches the ranks (traced, by pidfd, other machines). */
void fault_print_stats(FILE *f);
/* The network rate (distnet.c): measured unless given; collective. */
void net_init(void);
void net_print_stats(FILE *f);
/* Point-to-point byte messages (dist.c; malloc'd, NULL for 0 bytes). */
void send_bytes(const void *p, size_t n, int to);
char *recv_bytes(int from, size_t *n);

#endif
