/* dist.c: the MPI transport, the partition registry, jobs and the worker
 * loop (dist.h describes the model). */
#include "dist.h"

#include <mpi.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../io/io.h"
#include "../kernels/reorg.h"
#include "distint.h"

bool g_on;
int g_rank, g_size = 1, g_local = 1;
static int64_t g_bs = 1000;
int64_t g_next_id = 1;
/* rank 0: jobs come from the interpreter's threads (parfor workers) one
 * at a time; recursive, as releasing a handle inside a job frees it */
pthread_mutex_t g_lock;

bool dist_launched(void) { return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_RANK") || getenv("PMIX_RANK"); }
int dist_launched_rank(void)
{
    if (g_on) return g_rank;
    const char *names[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
    for (int i = 0; i < 3; i++) {
        const char *v = getenv(names[i]);
        if (v) return atoi(v);
    }
    return 0;
}
bool dist_active(void) { return g_on; }
int dist_rank(void) { return g_rank; }
int dist_size(void) { return g_size; }
int dist_local_size(void) { return g_local; }
void dist_set_blocksize(int64_t rows) { g_bs = rows > 0 ? rows : 1000; }
static bool g_piggyback = true;
void dist_set_piggyback(bool on) { g_piggyback = on; }
bool dist_piggyback(void) { return g_piggyback; }

int dist_init(BrErr *e)
{
    if (!dist_launched()) return 0;
    /* a later run of the process (after dist_reset): the rate again */
    if (g_on) { net_init(); return 0; }
    /* ranks that wait yield their core (OpenMPI does so by itself only
     * with more ranks than cores): on 2 shared cores L2SVM's 960 jobs took
     * 2.0-2.2 s spinning against 0.6-1.3 s yielding at 2 ranks, 10-11 s
     * against 0.3-0.6 s at 3; a user's setting wins */
    setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
    int prov = 0;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &prov) != MPI_SUCCESS)
        return br_err(e, BR_EFAIL, "MPI initialization failed");
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    MPI_Comm node;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_size(node, &g_local);
        MPI_Comm_free(&node);
    }
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&g_lock, &a);
    pthread_mutexattr_destroy(&a);
    g_on = true;
    fault_init();
    net_init();
    return 0;
}

/* ---- statistics (rank 0) ---- */


static const char *job_names[J_NTYPES] = {
    "stop", "scatter", "collect", "free", "unary", "binary", "ternary", "rowagg", "agg", "colagg",
    "mapmm", "mapmm-left", "tsmm", "tmm", "mmchain", "colslice", "rowslice", "cbind", "read", "table",
    "read-text", "write", "cpmm", "rmm", "transpose", "rbind", "piggyback", "var", "rev", "leftindex", "fused", "parfor", "diag",
};

/* pred: the bytes the plan's volume model gives the jobs (job_volume;
 * modeled: it gives them any) */
static struct { int64_t count, ns, bytes, saved; double pred; bool modeled; } g_stat[J_NTYPES];

/* Rank 0: counts a job of type t; with BRAID_DIST_TRACE=1 (tests) also
 * prints "dist job TYPE" on stdout, in order with the script's prints,
 * so that a run of several parts tells which part ran which jobs. A
 * piggyback job's line adds its reduce operators and how many of them
 * are fused ("dist job piggyback 6 2"), a fused job's its fused
 * operators (members: -1 prints nothing more). */
static void count_job(int t, int members, int fused)
{
    static int trace = -1;
    if (trace < 0) {
        const char *v = getenv("BRAID_DIST_TRACE");
        trace = v && !strcmp(v, "1");
    }
    g_stat[t].count++;
    if (trace) {
        if (members < 0) printf("dist job %s\n", job_names[t]);
        else if (t == J_MULTI) printf("dist job %s %d %d\n", job_names[t], members, fused);
        else printf("dist job %s %d\n", job_names[t], members);
        fflush(stdout);
    }
}
int64_t g_bytes; /* bytes moved by the job now running */
static double job_volume(const Job *j, const MB *src, const Value *bv, const Value *res);
static int64_t g_piggy_ops; /* reduce operators run in piggyback jobs */
int64_t g_piggy_fused;      /* fused reduce operators run in groups */

void dist_print_stats(FILE *f)
{
    if (!g_on) return;
    int64_t jobs = 0, bytes = 0, ns = 0;
    for (int t = J_SCATTER; t < J_NTYPES; t++) { jobs += g_stat[t].count; bytes += g_stat[t].bytes; ns += g_stat[t].ns; }
    fprintf(f, "Distributed jobs (%d ranks):\t%lld (%.3f sec, %lld bytes sent).\n", g_size, (long long)jobs,
            (double)ns / 1e9, (long long)bytes);
    net_print_stats(f);
    fault_print_stats(f);
    for (int t = J_SCATTER; t < J_NTYPES; t++)
        if (g_stat[t].count) {
            char pred[32] = "-";
            if (g_stat[t].modeled) snprintf(pred, sizeof pred, "%.0f", g_stat[t].pred);
            fprintf(f, "  %-12s %8lld jobs %9.3f sec %14lld bytes %14s predicted\n", job_names[t],
                    (long long)g_stat[t].count, (double)g_stat[t].ns / 1e9, (long long)g_stat[t].bytes, pred);
        }
    if (g_stat[J_SCATTER].saved)
        fprintf(f, "  (%lld scatters of a matrix already partitioned were saved)\n", (long long)g_stat[J_SCATTER].saved);
    if (g_piggy_ops)
        fprintf(f, "  (piggyback jobs ran %lld reduce operators over shared partitions)\n", (long long)g_piggy_ops);
    if (g_piggy_fused)
        fprintf(f, "  (fused jobs ran %lld piggybacked fused reduce operators)\n", (long long)g_piggy_fused);
    fused_print_stats(f);
    if (g_stat[J_TASK].count)
        fprintf(f, "  (remote parfor: %lld of the loops inside functions; up to %d threads per rank)\n",
                (long long)g_pf_funcs, g_pf_threads);
    if (g_stat[J_TASK].count) {
        fprintf(f, "  (remote parfor plans: %lld shipped, %lld not%s%s; workers decoded %lld and compiled %lld "
                "programs or functions", (long long)g_pf_shipped, (long long)g_pf_unshipped,
                g_pf_why ? ": " : "", g_pf_why ? g_pf_why : "", (long long)g_pf_decoded, (long long)g_pf_compiled);
        if (g_pf_dups) fprintf(f, "; %lld shipped functions were copies the workers held", (long long)g_pf_dups);
        if (g_pf_fetched)
            fprintf(f, "; %lld functions came from rank 0 on request", (long long)g_pf_fetched);
        fprintf(f, ")\n");
    }
    if (g_pf_asks[0] + g_pf_asks[1] + g_pf_asks[2])
        fprintf(f, "  (remote parfor requests to rank 0: functions %lld, library files %lld, names without a library "
                "file %lld)\n", (long long)g_pf_asks[0], (long long)g_pf_asks[1], (long long)g_pf_asks[2]);
    if (g_pf_asks[0])
        fprintf(f, "  (remote parfor answers with functions: %lld sent whole, %lld named that the worker held; %lld "
                "bytes)\n", (long long)g_pf_ans[0], (long long)g_pf_ans[1], (long long)g_pf_ans[2]);
}

/* ---- transport: byte messages of any size (MPI counts are int) ---- */

#define CHUNK ((size_t)1 << 30)

void bcast_bytes(void *p, size_t n)
{
    for (size_t o = 0; o < n; o += CHUNK) {
        size_t k = n - o < CHUNK ? n - o : CHUNK;
        MPI_Bcast((char *)p + o, (int)k, MPI_BYTE, 0, MPI_COMM_WORLD);
    }
    if (g_rank == 0) g_bytes += (int64_t)n * (g_size - 1);
}

char *dist_share(const char *p, int64_t n, int64_t *len)
{
    char *buf = g_rank == 0 && n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (g_rank == 0) n = buf ? n : -1;
    MPI_Bcast(&n, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    *len = n;
    if (n < 0) return NULL;
    if (g_rank != 0 && !(buf = malloc((size_t)n + 1))) {
        fprintf(stderr, "braid: rank %d: out of memory receiving %lld bytes\n", g_rank, (long long)n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (g_rank == 0) memcpy(buf, p, (size_t)n);
    bcast_bytes(buf, (size_t)n);
    buf[n] = 0;
    return buf;
}

void send_bytes(const void *p, size_t n, int to)
{
    MPI_Send(&n, (int)sizeof n, MPI_BYTE, to, 1, MPI_COMM_WORLD);
    for (size_t o = 0; o < n; o += CHUNK) {
        size_t k = n - o < CHUNK ? n - o : CHUNK;
        MPI_Send((const char *)p + o, (int)k, MPI_BYTE, to, 2, MPI_COMM_WORLD);
    }
    if (g_rank == 0) g_bytes += (int64_t)n;
}

/* A message sent by send_bytes (malloc'd, *n its size; NULL for 0). */
char *recv_bytes(int from, size_t *n)
{
    MPI_Recv(n, (int)sizeof *n, MPI_BYTE, from, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    char *p = *n ? malloc(*n) : NULL;
    if (*n && !p) {
        /* cannot refuse a message in flight: a clear end beats a hang */
        fprintf(stderr, "braid: rank %d: out of memory receiving %zu bytes\n", g_rank, *n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (size_t o = 0; o < *n; o += CHUNK) {
        size_t k = *n - o < CHUNK ? *n - o : CHUNK;
        MPI_Recv(p + o, (int)k, MPI_BYTE, from, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (g_rank == 0) g_bytes += (int64_t)*n;
    return p;
}

/* ---- matrix blocks as bytes ---- */

typedef struct MBHead { int64_t rows, cols, nnz, sparse; } MBHead;

static size_t packed_size(const MB *m)
{
    if (!m) return 0;
    if (m->sparse)
        return sizeof(MBHead) + (size_t)(m->rows + 1) * 8 + (size_t)m->nnz * (4 + 8);
    return sizeof(MBHead) + (size_t)(m->rows * m->cols) * 8;
}

char *pack(const MB *m, size_t *n)
{
    *n = packed_size(m);
    char *buf = *n ? malloc(*n) : NULL;
    if (!buf) return NULL;
    MBHead h = {m->rows, m->cols, m->nnz, m->sparse};
    memcpy(buf, &h, sizeof h);
    char *p = buf + sizeof h;
    if (m->sparse) {
        memcpy(p, m->rp, (size_t)(m->rows + 1) * 8);
        p += (m->rows + 1) * 8;
        memcpy(p, m->ci, (size_t)m->nnz * 4);
        p += m->nnz * 4;
        memcpy(p, m->v, (size_t)m->nnz * 8);
    } else if (m->rows * m->cols > 0) {
        memcpy(p, m->d, (size_t)(m->rows * m->cols) * 8);
    }
    return buf;
}

MB *unpack(const char *buf, size_t n, BrErr *e)
{
    if (n < sizeof(MBHead)) return NULL;
    MBHead h;
    memcpy(&h, buf, sizeof h);
    const char *p = buf + sizeof h;
    if (h.sparse) {
        MB *m = mb_sp_alloc(h.rows, h.cols, h.nnz > 0 ? h.nnz : 1, e);
        if (!m) return NULL;
        memcpy(m->rp, p, (size_t)(h.rows + 1) * 8);
        p += (h.rows + 1) * 8;
        memcpy(m->ci, p, (size_t)h.nnz * 4);
        p += h.nnz * 4;
        memcpy(m->v, p, (size_t)h.nnz * 8);
        mb_sp_done(m, h.nnz);
        return m;
    }
    MB *m = mb_dense_uninit(h.rows, h.cols, e);
    if (!m) return NULL;
    if (h.rows * h.cols > 0) memcpy(m->d, p, (size_t)(h.rows * h.cols) * 8);
    m->nnz = h.nnz;
    return m;
}

/* Sends m (NULL: an empty partition); out of memory packing it, the
 * receiver gets an empty message and the job's agreement reports it. */
bool send_mb(const MB *m, int to)
{
    size_t n = 0;
    char *buf = m ? pack(m, &n) : NULL;
    bool ok = !m || buf;
    send_bytes(buf, ok ? n : 0, to);
    free(buf);
    return ok;
}

MB *recv_mb(int from, BrErr *e)
{
    size_t n;
    char *buf = recv_bytes(from, &n);
    MB *m = buf ? unpack(buf, n, e) : NULL;
    free(buf);
    return m;
}

/* A value broadcast from rank 0 (a scalar or a local matrix). */

int bcast_value(Value *v, BrErr *e)
{
    VHead h = {0};
    char *buf = NULL;
    if (g_rank == 0) {
        h.kind = v->kind;
        if (v->kind == V_DOUBLE) h.u.d = v->d;
        else if (v->kind == V_INT) h.u.i = v->i;
        else if (v->kind == V_BOOL) h.u.i = v->b;
        else if (v->kind == V_STRING) { h.len = (int64_t)v->s->len; buf = v->s->s; }
        else if (v->kind == V_MATRIX) {
            size_t n;
            buf = pack(v->m, &n);
            h.len = buf ? (int64_t)n : -1;
        }
    }
    bcast_bytes(&h, sizeof h);
    if (h.len < 0) return br_err(e, BR_ENOMEM, "out of memory broadcasting an operand");
    if (g_rank != 0 && h.len > 0 && !(buf = malloc((size_t)h.len))) {
        fprintf(stderr, "braid: rank %d: out of memory receiving an operand\n", g_rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (h.len > 0) bcast_bytes(buf, (size_t)h.len);
    if (g_rank == 0) {
        if (v->kind == V_MATRIX) free(buf);
        return 0;
    }
    switch (h.kind) {
    case V_DOUBLE: *v = val_double(h.u.d); break;
    case V_INT: *v = val_int(h.u.i); break;
    case V_BOOL: *v = val_bool(h.u.i != 0); break;
    case V_STRING: *v = val_string_n(buf, (size_t)h.len); break;
    case V_MATRIX: {
        MB *m = unpack(buf, (size_t)h.len, e);
        *v = m ? val_matrix(m) : val_none();
        break;
    }
    default: *v = val_none(); break;
    }
    free(buf);
    return 0;
}

/* ---- partitions ---- */

typedef struct Part { int64_t id; MB *m; } Part;
static Part *g_parts;
static int g_nparts, g_pcap;

/* Rows [lo, hi) of an n-row matrix held by rank r. */
void part_range(int64_t n, int r, int64_t *lo, int64_t *hi)
{
    int64_t nb = (n + g_bs - 1) / g_bs;
    int64_t b0 = nb * r / g_size, b1 = nb * (r + 1) / g_size;
    *lo = BR_MIN(n, b0 * g_bs);
    *hi = BR_MIN(n, b1 * g_bs);
}

int part_put(int64_t id, MB *m)
{
    if (g_nparts == g_pcap) {
        int nc = g_pcap ? 2 * g_pcap : 16;
        Part *p = realloc(g_parts, (size_t)nc * sizeof *p);
        if (!p) return -1;
        g_parts = p;
        g_pcap = nc;
    }
    g_parts[g_nparts++] = (Part){id, m};
    return 0;
}

MB *part_get(int64_t id)
{
    for (int i = 0; i < g_nparts; i++)
        if (g_parts[i].id == id) return g_parts[i].m;
    return NULL;
}

void part_drop(int64_t id)
{
    for (int i = 0; i < g_nparts; i++)
        if (g_parts[i].id == id) {
            mb_release(g_parts[i].m);
            g_parts[i] = g_parts[--g_nparts];
            return;
        }
}

/* ---- agreement: every rank learns whether any failed ---- */

/* The script file of the last error a rank reported with its position
 * (BrErr.at.file on rank 0 points here until the next such error). */
static char g_err_file[1024];

int agree(bool failed, BrErr *e)
{
    /* the lowest failing rank reports: for a parallel read, the error of
     * the earliest line. Its message travels with its script position
     * (line, column, file; none: line 0), so that rank 0 names the file
     * of a remote parfor body's function as a local error does */
    int mine = failed ? g_rank : g_size, who = g_size;
    MPI_Allreduce(&mine, &who, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (who == g_size) return 0;
    if (who != 0 && g_rank == who) {
        int32_t at[2] = {e->at.line > 0 ? e->at.line : 0, e->at.col};
        const char *file = e->at.line > 0 && e->at.file ? e->at.file : "";
        size_t fl = strnlen(file, sizeof g_err_file - 1), ml = strlen(e->msg);
        char *b = malloc(sizeof at + fl + 1 + ml + 1);
        if (b) {
            memcpy(b, at, sizeof at);
            memcpy(b + sizeof at, file, fl);
            b[sizeof at + fl] = 0;
            memcpy(b + sizeof at + fl + 1, e->msg, ml + 1);
        }
        if (b) send_bytes(b, sizeof at + fl + 1 + ml + 1, 0);
        else send_bytes("\0\0\0\0\0\0\0\0\0out of memory", 23, 0);
        free(b);
    }
    if (who != 0 && g_rank == 0) {
        size_t n;
        char *b = recv_bytes(who, &n);
        int32_t at[2] = {0, 0};
        const char *file = "", *msg = "failed";
        if (b && n > sizeof at) {
            memcpy(at, b, sizeof at);
            file = b + sizeof at;
            const char *z = memchr(file, 0, n - sizeof at);
            msg = z && z + 1 < b + n && !b[n - 1] ? z + 1 : (at[0] = 0, file = "", "a damaged error message");
        }
        br_err(e, BR_EFAIL, "rank %d: %s", who, msg);
        if (at[0] > 0) {
            snprintf(g_err_file, sizeof g_err_file, "%s", file);
            e->at = (Span){g_err_file[0] ? g_err_file : NULL, at[0], at[1]};
        }
        free(b);
    }
    return -1;
}

/* ---- jobs ---- */


static bool is_map(int t)
{
    return t == J_DIAG || t == J_LIX || t == J_REV || t == J_UNARY || t == J_BINARY || t == J_TERNARY || t == J_RAGG || t == J_MAPMM || t == J_CSLICE ||
           t == J_CBIND || t == J_TABLE || t == J_CPMM || t == J_RMM || t == J_TRANSPOSE || t == J_RBIND;
}

/* Reduction operator of a full or column aggregate (op on partials). */
static MPI_Op reduce_op(const Job *j, double *ident)
{
    if (j->type == J_FAGG || j->type == J_CAGG) {
        if (j->op == OP_AMIN) { *ident = INFINITY; return MPI_MIN; }
        if (j->op == OP_AMAX) { *ident = -INFINITY; return MPI_MAX; }
        if (j->op == OP_PROD) { *ident = 1; return MPI_PROD; }
    }
    *ident = 0;
    return MPI_SUM;
}

/* diag() of this rank's rows [lo, hi): of an n x 1 vector, its rows of
 * the n x n diagonal matrix (sparse: one cell per row, at column lo + r);
 * of a square matrix, its diagonal cells as a column. */
static int local_diag(const Job *j, const Value *in, int64_t lo, int64_t hi, Value *out, BrErr *e)
{
    const MB *x = in->m;
    int64_t n = hi - lo;
    MB *r;
    if (j->cols == 1) {
        if (!(r = mb_sp_alloc(n, j->rows, n > 0 ? n : 1, e))) return -1;
        int64_t k = 0;
        for (int64_t i = 0; i < n; i++) {
            double v = mb_get(x, i, 0);
            r->rp[i] = k;
            if (v != 0) r->ci[k] = (int32_t)(lo + i), r->v[k++] = v;
        }
        r->rp[n] = k;
        mb_sp_done(r, k);
    } else {
        if (!(r = mb_dense_uninit(n, 1, e))) return -1;
        for (int64_t i = 0; i < n; i++) r->d[i] = mb_get(x, i, lo + i);
        mb_recount_nnz(r);
    }
    if (!(r = mb_finish(r, e))) return -1;
    *out = val_matrix(r);
    return 0;
}

/* The kernel of one job on this rank's rows [lo, hi). */
static int local_op(const Job *j, Value *in, int64_t lo, int64_t hi, Value *out, BrErr *e)
{
    OpCode agg = j->op == OP_MEAN ? OP_SUM : (OpCode)j->op;
    switch ((JobType)j->type) {
    case J_UNARY: return ap_unary(j->op, &in[0], out, e);
    case J_BINARY: return ap_binary(j->op, &in[0], &in[1], out, e);
    case J_TERNARY: return ap_ternary(&in[0], &in[1], &in[2], out, e);
    case J_RAGG: return ap_agg(j->op, DIR_ROW, &in[0], out, e);
    case J_FAGG: return ap_agg(agg, DIR_FULL, &in[0], out, e);
    case J_CAGG: return ap_agg(agg, DIR_COL, &in[0], out, e);
    case J_MAPMM: return ap_matmul(OP_MATMUL, 0, &in[0], &in[1], &in[2], out, e);
    case J_TSMM: return ap_matmul(OP_TSMM, 1, &in[0], &in[1], &in[2], out, e);
    case J_TMM: return ap_matmul(OP_MATMULTL, 0, &in[0], &in[1], &in[2], out, e);
    case J_MMCHAIN: return ap_matmul(OP_MMCHAIN, 0, &in[0], &in[1], &in[2], out, e);
    case J_CSLICE: {
        MB *s = k_slice(in[0].m, 0, in[0].m->rows, j->ix[2], j->ix[3], e);
        if (!s) return -1;
        *out = val_matrix(s);
        return 0;
    }
    case J_CBIND: {
        const MB *ms[3];
        for (int k = 0; k < j->nin; k++) ms[k] = in[k].m;
        MB *s = k_cbind(j->nin, ms, e);
        if (!s) return -1;
        *out = val_matrix(s);
        return 0;
    }
    case J_LIX: {
        /* X[ix0:ix1, ix2:ix3] = src: this rank's rows of the range */
        int64_t a = BR_MAX(lo, j->ix[0]), b = BR_MIN(hi, j->ix[1]);
        if (a >= b) { *out = val_matrix(mb_retain(in[0].m)); return 0; }
        MB *src = in[1].kind == V_MATRIX ? k_slice(in[1].m, a - j->ix[0], b - j->ix[0], 0, in[1].m->cols, e)
                                         : mb_fill(1, 1, val_as_double(&in[1]), e);
        MB *r = src ? k_lix(in[0].m, a - lo, b - lo, j->ix[2], j->ix[3], src, e) : NULL;
        mb_release(src);
        if (!r) return -1;
        *out = val_matrix(r);
        return 0;
    }
    case J_DIAG: return local_diag(j, &in[0], lo, hi, out, e);
    case J_LMM: {
        /* the broadcast left side's columns that meet this rank's rows */
        const MB *l = in[0].m;
        MB *s = k_slice(l, 0, l->rows, lo, hi, e);
        if (!s) return -1;
        Value sv = val_matrix(s);
        int rc = ap_matmul(OP_MATMUL, 0, &sv, &in[1], &in[2], out, e);
        val_release(&sv);
        return rc;
    }
    default: br_err(e, BR_EFAIL, "unknown distributed job %d", j->type); return -1;
    }
}

/* Partial result of a reduce job as orows x ocols doubles (the identity
 * for a rank without rows). */
static double *partial(const Job *j, const Value *loc, size_t *n)
{
    *n = (size_t)(j->orows * j->ocols);
    double *buf = malloc(*n * sizeof(double) + 8);
    if (!buf) return NULL;
    double ident;
    reduce_op(j, &ident);
    for (size_t i = 0; i < *n; i++) buf[i] = ident;
    if (loc->kind == V_MATRIX) {
        for (int64_t r = 0; r < loc->m->rows && r < j->orows; r++)
            for (int64_t c = 0; c < loc->m->cols && c < j->ocols; c++) buf[r * j->ocols + c] = mb_get(loc->m, r, c);
    } else if (loc->kind != V_NONE && *n >= 1) {
        buf[0] = val_as_double(loc);
    }
    return buf;
}

/* Rank 0: the reduced partials as the job's result. */
static int finish_reduce(const Job *j, double *buf, Value *res, BrErr *e)
{
    double div = j->op == OP_MEAN ? (j->type == J_FAGG ? (double)j->rows * (double)j->cols : (double)j->rows) : 1;
    if (j->type == J_FAGG) {
        *res = val_double(buf[0] / div);
        return 0;
    }
    MB *m = mb_dense_uninit(j->orows, j->ocols, e);
    if (!m) return -1;
    for (int64_t i = 0; i < j->orows * j->ocols; i++) m->d[i] = buf[i] / div;
    mb_recount_nnz(m);
    m = mb_finish(m, e);
    if (!m) return -1;
    *res = val_matrix(m);
    return 0;
}

static void dm_free(DM *d);

DM *dm_new(int64_t rows, int64_t cols, int64_t nnz, int64_t id)
{
    DM *d = malloc(sizeof *d);
    if (!d) return NULL;
    *d = (DM){.refs = 1, .rows = rows, .cols = cols, .nnz = nnz, .id = id, .free = dm_free};
    return d;
}

/* Every rank's part of a map job's end: keep the partition, tell rank 0
 * the result's non-zeros and columns. */
int finish_map(const Job *j, Value *loc, Value *res, BrErr *e)
{
    MB *m = loc->kind == V_MATRIX ? mb_retain(loc->m) : NULL;
    bool failed = loc->kind != V_MATRIX && loc->kind != V_NONE;
    if (failed) br_err(e, BR_EFAIL, "a distributed operator gave a %s", val_kind_name(loc->kind));
    if (!failed && part_put(j->out, m)) { mb_release(m); failed = true; br_err(e, BR_ENOMEM, "out of memory"); }
    if (agree(failed, e)) { part_drop(j->out); return -1; }
    int64_t mine[2] = {m ? m->nnz : 0, m ? m->cols : -1}, nnz = 0, cols = -1;
    MPI_Reduce(&mine[0], &nnz, 1, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mine[1], &cols, 1, MPI_INT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
    if (g_rank != 0) return 0;
    if (cols < 0) cols = BR_MAX(j->ocols, 0);   /* no rank holds rows: the job knows the columns */
    DM *d = dm_new(j->rows, cols, nnz, j->out);
    if (!d) { part_drop(j->out); br_err(e, BR_ENOMEM, "out of memory"); return -1; }
    res->kind = V_DIST;
    res->dm = d;
    return 0;
}

/* One compute job on every rank (rank 0 passes the broadcast operands in
 * bv and receives the result in res). */
/* The local phase of a compute job: its operands (broadcast ones
 * received) and the kernel on this rank's rows into *loc; false on
 * failure (e set). */
static bool compute_local(const Job *j, Value *bv, Value *loc, BrErr *e)
{
    Value in[3] = {val_none(), val_none(), val_none()};
    bool failed = false;
    for (int k = 0; k < j->nin; k++) {
        if (j->kind[k] == A_DIST) {
            MB *m = part_get(j->id[k]);
            if (m) in[k] = val_matrix(mb_retain(m));
        } else if (j->kind[k] == A_BCAST) {
            if (g_rank == 0) in[k] = val_retain(bv[k]);
            if (bcast_value(&in[k], e)) failed = true;
        }
    }
    int64_t lo, hi;
    part_range(j->rows, g_rank, &lo, &hi);
    *loc = val_none();
    if (!failed && hi > lo) failed = local_op(j, in, lo, hi, loc, e) != 0;
    for (int k = 0; k < 3; k++) val_release(&in[k]);
    return !failed;
}

/* Reduces n doubles to rank 0 with op (in pieces: MPI counts are int). */
void reduce_to_0(double *buf, size_t n, MPI_Op op)
{
    for (size_t o = 0; o < n; o += CHUNK / 8) {
        int k = (int)(n - o < CHUNK / 8 ? n - o : CHUNK / 8);
        if (g_rank == 0) MPI_Reduce(MPI_IN_PLACE, buf + o, k, MPI_DOUBLE, op, 0, MPI_COMM_WORLD);
        else MPI_Reduce(buf + o, NULL, k, MPI_DOUBLE, op, 0, MPI_COMM_WORLD);
    }
    if (g_rank == 0) g_bytes += (int64_t)(n * 8) * (g_size - 1);
}

/* One compute job on every rank (rank 0 passes the broadcast operands in
 * bv and receives the result in res). */
static int run_compute(const Job *j, Value *bv, Value *res, BrErr *e)
{
    Value loc;
    bool failed = !compute_local(j, bv, &loc, e);
    int rc;
    if (is_map(j->type)) {
        rc = failed ? (agree(true, e), -1) : finish_map(j, &loc, res, e);
        val_release(&loc);
        return rc;
    }
    size_t n = 0;
    double *buf = failed ? NULL : partial(j, &loc, &n);
    val_release(&loc);
    if (!failed && !buf) { failed = true; br_err(e, BR_ENOMEM, "out of memory"); }
    if (agree(failed, e)) { free(buf); return -1; }
    double ident;
    reduce_to_0(buf, n, reduce_op(j, &ident));
    rc = g_rank == 0 ? finish_reduce(j, buf, res, e) : 0;
    free(buf);
    return rc;
}

/* ---- piggybacking: reduce jobs over the same partitions as one job ---- */

static void job_header(Job *j);

/* Rank 0: while a group is open, reduce jobs are held (their header,
 * broadcast operands and result slot) and run together at its end. */
#define MAX_GROUP 16
static struct { Job j; Value bv[3]; Value *out; } g_pend[MAX_GROUP];
static int g_npend = -1;   /* -1: no group open */
/* The fused reduce members of the open group (rank 0), over g_frows rows. */
static const DistFused *g_ffs[MAX_GROUP];
static Value **g_fargs[MAX_GROUP];
static Value *g_fout[MAX_GROUP];
static int g_nfpend;
static int64_t g_frows;


static bool defer(const Job *j, Value *bv, Value *out)
{
    if (g_npend < 0 || g_npend == MAX_GROUP || is_map(j->type)) return false;
    g_pend[g_npend].j = *j;
    for (int k = 0; k < 3; k++) g_pend[g_npend].bv[k] = k < j->nin && j->kind[k] == A_BCAST ? val_retain(bv[k]) : val_none();
    g_pend[g_npend].out = out;
    g_npend++;
    return true;
}

/* Every rank: the members' kernels one after the other, one agreement,
 * and one reduction per reduction operator over all members' partials
 * (the header carried the count in nin; the members' headers follow). */
static int run_multi(const Job *head, Job *subs, BrErr *e)
{
    int n = head->nin, nf = head->op;
    Job *js = subs;
    if (g_rank != 0 && !(js = malloc((size_t)n * sizeof *js))) {
        fprintf(stderr, "braid: rank %d: out of memory\n", g_rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    bcast_bytes(js, (size_t)n * sizeof *js);
    double *part[MAX_GROUP] = {0};
    size_t len[MAX_GROUP] = {0};
    bool failed = false;
    for (int k = 0; k < n; k++) {
        Value loc;
        if (!compute_local(&js[k], g_rank == 0 ? g_pend[k].bv : NULL, &loc, e)) { failed = true; continue; }
        if (!failed && !(part[k] = partial(&js[k], &loc, &len[k]))) failed = true, br_err(e, BR_ENOMEM, "out of memory");
        val_release(&loc);
    }
    /* fused reduce members over the same rows (distfused.c) */
    FusedPart fp = {0};
    if (nf) fpart_run(&fp, nf, head->rows, &failed, e);
    int rc = agree(failed, e);
    if (!rc && nf) rc = fpart_flatten(&fp, e);
    /* the partials of each reduction operator in one buffer, basic and
     * fused members' alike */
    MPI_Op ops[4] = {MPI_SUM, MPI_MIN, MPI_MAX, MPI_PROD};
    for (int o = 0; !rc && o < 4; o++) {
        size_t tot = 0;
        double ident;
        for (int k = 0; k < n; k++) if (reduce_op(&js[k], &ident) == ops[o]) tot += len[k];
        for (int m = 0; m < nf; m++)
            for (size_t i = 0; i < fp.len[m]; i++) tot += fpart_op(&fp, m, i) == ops[o];
        if (!tot) continue;
        double *buf = malloc(tot * sizeof *buf), *p = buf;
        if (!buf) { fprintf(stderr, "braid: rank %d: out of memory\n", g_rank); MPI_Abort(MPI_COMM_WORLD, 1); }
        for (int k = 0; k < n; k++)
            if (reduce_op(&js[k], &ident) == ops[o]) memcpy(p, part[k], len[k] * sizeof *p), p += len[k];
        for (int m = 0; m < nf; m++)
            for (size_t i = 0; i < fp.len[m]; i++) if (fpart_op(&fp, m, i) == ops[o]) *p++ = fp.buf[m][i];
        reduce_to_0(buf, tot, ops[o]);
        p = buf;
        for (int k = 0; k < n; k++)
            if (reduce_op(&js[k], &ident) == ops[o]) memcpy(part[k], p, len[k] * sizeof *p), p += len[k];
        for (int m = 0; m < nf; m++)
            for (size_t i = 0; i < fp.len[m]; i++) if (fpart_op(&fp, m, i) == ops[o]) fp.buf[m][i] = *p++;
        free(buf);
    }
    for (int k = 0; k < n; k++) {
        if (!rc && g_rank == 0 && finish_reduce(&js[k], part[k], g_pend[k].out, e)) rc = -1;
        free(part[k]);
    }
    if (nf && fpart_finish(&fp, !rc, g_fout, e)) rc = -1;
    if (js != subs) free(js);
    return rc;
}

void dist_group_begin(void)
{
    pthread_mutex_lock(&g_lock);
    g_npend = 0;
    g_nfpend = 0;
}

int dist_group_fused(const DistFused *f, Value **args, Value *out, BrErr *e)
{
    if (g_npend < 0 || g_nfpend == MAX_GROUP || f->kind != DF_REDUCE) return DIST_LOCAL;
    int64_t rows = 0;
    int rc = fused_place(f, args, &rows, e);
    if (rc) return rc;
    if (g_nfpend > 0 && rows != g_frows) return DIST_LOCAL;
    g_frows = rows;
    g_ffs[g_nfpend] = f, g_fargs[g_nfpend] = args, g_fout[g_nfpend] = out;
    g_nfpend++;
    return 0;
}

int dist_group_end(BrErr *e)
{
    int n = g_npend, nf = g_nfpend, rc = 0;
    g_npend = -1;
    g_nfpend = 0;
    Job subs[MAX_GROUP];
    for (int k = 0; k < n; k++) subs[k] = g_pend[k].j;
    if (n == 0 && nf > 0) rc = dist_fused_group(g_ffs, g_fargs, g_fout, nf, e);
    else if (n == 1 && nf == 0) rc = start_job(&subs[0], NULL, g_pend[0].bv, g_pend[0].out, e);
    else if (n + nf > 1) {
        Job head = {.type = J_MULTI, .nin = n, .op = nf, .rows = g_frows};
        fused_members(g_ffs, g_fargs, g_fout);
        int64_t t0 = br_now_ns();
        g_bytes = 0;
        (void)fused_plan_bytes();
        job_header(&head);
        rc = run_multi(&head, subs, e);
        count_job(J_MULTI, n + nf, nf);
        g_stat[J_MULTI].ns += br_now_ns() - t0;
        g_stat[J_MULTI].bytes += g_bytes;
        /* the group's header, then its members' */
        double v = dist_volume(dist_ctrl_bytes(1, 0, 0, 0, 0), 0, 0);
        for (int k = 0; k < n; k++) v += fmax(0, job_volume(&subs[k], NULL, g_pend[k].bv, g_pend[k].out));
        if (!rc) stat_predict(J_MULTI, v + fused_volume(g_ffs, g_fargs, g_fout, nf, fused_plan_bytes()));
        g_piggy_ops += n + nf;
        g_piggy_fused += nf;
        fused_members(NULL, NULL, NULL);
    }
    for (int k = 0; k < n; k++)
        for (int i = 0; i < 3; i++) val_release(&g_pend[k].bv[i]);
    pthread_mutex_unlock(&g_lock);
    return rc;
}

/* Scatter (rank 0 sends each rank its rows of m) and collect (each rank
 * sends its partition to rank 0, which stacks them). */
static int run_scatter(const Job *j, const MB *m, BrErr *e)
{
    bool failed = false;
    if (g_rank == 0) {
        for (int r = g_size - 1; r >= 0; r--) {
            int64_t lo, hi;
            part_range(j->rows, r, &lo, &hi);
            MB *s = hi > lo ? k_slice(m, lo, hi, 0, m->cols, e) : NULL;
            if (hi > lo && !s) failed = true;
            if (r > 0) {
                if (!send_mb(s, r)) failed = true;
                mb_release(s);
            } else if (part_put(j->out, s)) {
                mb_release(s);
                failed = true;
            }
        }
    } else {
        BrErr le = {0};
        MB *s = recv_mb(0, &le);
        int64_t lo, hi;
        part_range(j->rows, g_rank, &lo, &hi);
        if ((hi > lo && !s) || part_put(j->out, s)) {
            mb_release(s);
            failed = true;
            br_err(e, BR_ENOMEM, "out of memory receiving a partition");
        }
    }
    if (agree(failed, e)) { part_drop(j->out); return -1; }
    return 0;
}

static int run_collect(const Job *j, Value *res, BrErr *e)
{
    if (g_rank != 0) {
        send_mb(part_get(j->id[0]), 0);
        return agree(false, e);
    }
    MB **parts = calloc((size_t)g_size, sizeof(MB *));
    bool failed = !parts;
    int n = 0;
    if (parts) {
        MB *mine = part_get(j->id[0]);
        if (mine) parts[n++] = mb_retain(mine);
        for (int r = 1; r < g_size; r++) {
            MB *s = recv_mb(r, e);
            if (s) parts[n++] = s;
        }
    }
    MB *m = NULL;
    if (!failed) m = n == 1 ? mb_retain(parts[0]) : n ? k_rbind(n, (const MB *const *)parts, e) : mb_empty(j->rows, j->ocols, e);
    for (int i = 0; i < n; i++) mb_release(parts[i]);
    free(parts);
    if (!m) failed = true;
    if (agree(failed, e)) { mb_release(m); return -1; }
    *res = val_matrix(m);
    return 0;
}

/* Rows ix[0]:ix[1], columns ix[2]:ix[3] of a distributed matrix to rank
 * 0: each rank sends the rows it holds of the range. */
static int run_rslice(const Job *j, Value *res, BrErr *e)
{
    int64_t lo, hi;
    part_range(j->rows, g_rank, &lo, &hi);
    int64_t a = BR_MAX(lo, j->ix[0]), b = BR_MIN(hi, j->ix[1]);
    MB *mine = NULL;
    bool failed = false;
    if (a < b) {
        mine = k_slice(part_get(j->id[0]), a - lo, b - lo, j->ix[2], j->ix[3], e);
        failed = !mine;
    }
    if (g_rank != 0) {
        send_mb(mine, 0);
        mb_release(mine);
        return agree(failed, e);
    }
    MB **parts = calloc((size_t)g_size, sizeof(MB *));
    int n = 0;
    if (mine && parts) parts[n++] = mine;
    else mb_release(mine);
    for (int r = 1; r < g_size; r++) {
        MB *s = recv_mb(r, e);
        if (s && parts) parts[n++] = s;
        else mb_release(s);
    }
    MB *m = NULL;
    if (!parts) failed = true;
    else if (!failed)
        m = n == 1 ? mb_retain(parts[0]) : n ? k_rbind(n, (const MB *const *)parts, e)
                                              : mb_empty(j->ix[1] - j->ix[0], j->ix[3] - j->ix[2], e);
    for (int i = 0; i < n; i++) mb_release(parts[i]);
    free(parts);
    if (!m) failed = true;
    if (agree(failed, e)) { mb_release(m); return -1; }
    *res = val_matrix(m);
    return 0;
}

/* A binary matrix file read by all ranks, each its rows (the path comes
 * with the job). */
static int run_read(const Job *j, Value *path, Value *res, BrErr *e)
{
    Value p = g_rank == 0 ? val_retain(*path) : val_none();
    bool failed = bcast_value(&p, e) != 0 || p.kind != V_STRING;
    int64_t lo, hi, rows, cols;
    part_range(j->rows, g_rank, &lo, &hi);
    MB *m = NULL;
    if (!failed && hi > lo) {
        m = io_read_binary_rows(p.s->s, lo, hi, &rows, &cols, e);
        failed = !m || rows != j->rows || cols != j->cols;
        if (m && failed) br_err(e, BR_EIO, "%s changed while it was read", p.s->s);
    }
    val_release(&p);
    Value loc = m ? val_matrix(m) : val_none();
    int rc = failed ? (agree(true, e), -1) : finish_map(j, &loc, res, e);
    val_release(&loc);
    return rc;
}

/* table(A, B, n, k) with A and B co-partitioned n x 1 vectors: when
 * every rank's row ids A fall within its own rows (table(seq(1, n), y,
 * n, k), KMeans's one-hot assignments), each rank builds its rows of the
 * n x k result; otherwise every rank returns without a result and rank
 * 0 runs it locally (*fallback). */
/* table(a, b, orows, ocols) of co-partitioned vectors in general: each
 * rank counts its rows' pairs into a dense orows x ocols block (k_table
 * with the dimensions given: pairs beyond them dropped, as locally), the
 * blocks are summed to rank 0. */
/* A weighted table's weights on this rank: its rows of a co-partitioned
 * W (*w), or a scalar weight (*ws) the job carries in ix[0]. */
static void table_weights(const Job *j, const MB **w, double *ws)
{
    *w = NULL, *ws = 1;
    if (j->nin < 3) return;
    if (j->kind[2] == A_DIST) *w = part_get(j->id[2]);
    else memcpy(ws, &j->ix[0], sizeof *ws);
}

static int table_sum(const Job *j, const MB *a, const MB *b, int64_t lo, int64_t hi, Value *res, BrErr *e)
{
    size_t n = (size_t)(j->orows * j->ocols);
    double *buf = calloc(n ? n : 1, sizeof *buf);
    bool failed = !buf;
    if (!buf) br_err(e, BR_ENOMEM, "out of memory");
    if (!failed && hi > lo) {
        const MB *w;
        double ws;
        table_weights(j, &w, &ws);
        MB *t = k_table(a, 0, b, 0, w, ws, j->orows, j->ocols, e);
        if (!t) failed = true;
        for (int64_t r = 0; t && r < t->rows && r < j->orows; r++)
            for (int64_t c = 0; c < t->cols && c < j->ocols; c++) buf[r * j->ocols + c] = mb_get(t, r, c);
        mb_release(t);
    }
    if (agree(failed, e)) { free(buf); return -1; }
    reduce_to_0(buf, n, MPI_SUM);
    int rc = 0;
    if (g_rank == 0) {
        MB *m = mb_dense_uninit(j->orows, j->ocols, e);
        if (m) {
            if (n) memcpy(m->d, buf, n * sizeof *buf);
            mb_recount_nnz(m);
            m = mb_finish(m, e);
        }
        if (m) *res = val_matrix(m);
        else rc = -1;
    }
    free(buf);
    return rc;
}

/* table(a, b) without dimensions: the result's extent is the largest
 * category ids of all ranks (what the local kernel finds), so every
 * rank tables its rows alone (its errors, a category id <= 0, the local
 * kernel's) and an all-reduce of the partial tables' sizes gives the
 * dimensions; the table then runs as with them. */
static int table_dims(Job *j, const MB *a, const MB *b, int64_t lo, int64_t hi, BrErr *e)
{
    int64_t d[2] = {0, 0}, all[2];
    bool failed = false;
    if (hi > lo) {
        const MB *w;
        double ws;
        table_weights(j, &w, &ws);
        MB *t = a && b ? k_table(a, 0, b, 0, w, ws, -1, -1, e) : NULL;
        if (!a || !b) br_err(e, BR_EFAIL, "rank %d: partition missing", g_rank);
        if (t) d[0] = t->rows, d[1] = t->cols;
        else failed = true;
        mb_release(t);
    }
    if (agree(failed, e)) return -1;
    MPI_Allreduce(d, all, 2, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    if (j->orows < 0) j->orows = all[0];
    if (j->ocols < 0) j->ocols = all[1];
    return 0;
}

static int run_table(const Job *job, Value *res, bool *fallback, BrErr *e)
{
    int64_t lo, hi;
    part_range(job->rows, g_rank, &lo, &hi);
    const MB *a = part_get(job->id[0]), *b = part_get(job->id[1]);
    Job jj = *job;
    const Job *j = &jj;
    if ((jj.orows < 0 || jj.ocols < 0) && table_dims(&jj, a, b, lo, hi, e)) return -1;
    MB *ids = NULL;
    int local = 1;
    if (hi > lo && (!a || !b || a->cols != 1 || b->cols != 1)) local = 0;
    if (hi > lo && local) {
        ids = mb_dense_uninit(hi - lo, 1, e);
        for (int64_t r = 0; ids && r < hi - lo; r++) {
            double v = floor(mb_get(a, r, 0));
            if (!isnan(v) && (v <= (double)lo || v > (double)hi)) local = 0;
            ids->d[r] = v - (double)lo;   /* 1-based within the partition */
        }
        if (!ids) local = 0;
    }
    if (j->orows != j->rows) local = 0;   /* the result has other rows */
    int all = 0;
    MPI_Allreduce(&local, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
        mb_release(ids);
        /* the general table: partial counts summed (when they fit) */
        if ((double)j->orows * (double)j->ocols * 8 <= br_mem_budget()) return table_sum(j, a, b, lo, hi, res, e);
        *fallback = true;
        return 0;
    }
    Value loc = val_none();
    bool failed = false;
    if (hi > lo) {
        mb_recount_nnz(ids);
        const MB *w;
        double ws;
        table_weights(j, &w, &ws);
        MB *t = k_table(ids, 0, b, 0, w, ws, hi - lo, j->ocols, e);
        if (t) loc = val_matrix(t);
        else failed = true;
    }
    mb_release(ids);
    int rc = failed ? (agree(true, e), -1) : finish_map(j, &loc, res, e);
    val_release(&loc);
    return rc;
}

/* Any job on this rank (rank 0 after broadcasting the header). */
static int run_job(const Job *j, const MB *src, Value *bv, Value *res, BrErr *e)
{
    switch ((JobType)j->type) {
    case J_SCATTER: return run_scatter(j, src, e);
    case J_COLLECT: return run_collect(j, res, e);
    case J_RSLICE: return run_rslice(j, res, e);
    case J_READ: return run_read(j, bv, res, e);
    case J_TABLE: {
        bool fallback = false;
        int rc = run_table(j, res, &fallback, e);
        return fallback ? DIST_LOCAL : rc;
    }
    case J_FREE: part_drop(j->id[0]); return 0;
    case J_READT: return run_readt(j, bv, res, e);
    case J_WRITE: return run_write(j, bv, e);
    case J_CPMM: return run_cpmm(j, res, e);
    case J_RMM: return run_rmm(j, res, e);
    case J_TRANSPOSE: return run_transpose(j, res, e);
    case J_RBIND: return run_rbind(j, res, e);
    case J_MULTI: return run_multi(j, NULL, e);
    case J_VAR: return run_var(j, res, e);
    case J_REV: return run_rev(j, res, e);
    case J_FUSED: return run_fused(j, res, e);
    case J_TASK: return run_task(j, e);
    default: return run_compute(j, bv, res, e);
    }
}

/* The job header from rank 0 to all. It is a nonblocking broadcast
 * (on every rank, as MPI requires the same kind of collective): a worker
 * waiting for its next job polls it, yielding the core for the first
 * 2000 polls (jobs in a row) and then sleeping between polls (1 us
 * doubling to 1 ms), instead of spinning in a blocking broadcast while
 * rank 0 runs local instructions on the same cores. */
static void job_header(Job *j)
{
    MPI_Request rq;
    MPI_Ibcast(j, (int)sizeof *j, MPI_BYTE, 0, MPI_COMM_WORLD, &rq);
    if (g_rank == 0) {
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        g_bytes += (int64_t)sizeof *j * (g_size - 1);
        return;
    }
    long ns = 1000;
    for (int polls = 0;; polls++) {
        int done = 0;
        MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
        if (done) return;
        if (polls < 2000) { sched_yield(); continue; }   /* jobs in a row */
        struct timespec ts = {0, ns};
        nanosleep(&ts, NULL);
        if (ns < 1000000) ns *= 2;
    }
}

/* ---- the plan's volume model against the bytes sent (-stats) ----
 *
 * The volume the cost model prices for a distributed operator
 * (codegen/cost.c dist_cost; dist_mm_method for products of two large
 * operands): every broadcast operand goes to the N-1 other ranks, and a
 * result that is not partitioned (an aggregate, t(X) %*% Y) comes from
 * N-1 partials; a scattered or collected matrix moves all but rank 0's
 * share. Evaluated with the operands' sizes at run time (the sizes the
 * recompiled plan priced), it is set beside the bytes the job sent, per
 * job type: bench/dist_scaling.sh reports their ratio. Row moves (rbind,
 * transpose, table, reads), writes and parfor tasks are not in the
 * model (-). */
double dist_volume(double ctrl, double bcast, double reduce) { return (g_size - 1) * (ctrl + bcast + reduce); }

double dist_ctrl_bytes(int jobs, int nval, int members, int nin, double plan)
{
    return jobs * (double)sizeof(Job) + nval * (double)sizeof(VHead) + members * (double)sizeof(FHead) +
           nin * (double)sizeof(FArg) + plan;
}

double dist_wire_bytes(int64_t rows, int64_t cols, int64_t nnz)
{
    double cells = (double)rows * (double)cols;
    if (nnz >= 0 && mb_should_be_sparse(rows, cols, nnz)) return (double)sizeof(MBHead) + 8.0 * ((double)rows + 1) + 12.0 * (double)nnz;
    return (double)sizeof(MBHead) + 8 * cells;
}

static double val_bytes(const Value *v)
{
    if (is_mat(v)) return v->kind == V_DIST ? dist_wire_bytes(v->dm->rows, v->dm->cols, v->dm->nnz)
                                            : dist_wire_bytes(v->m->rows, v->m->cols, v->m->nnz);
    return v->kind == V_NONE ? 0 : 8;
}

/* A reduced result's partial: its cells as doubles (a scalar: one). */
double partial_bytes(const Value *v) { return is_mat(v) ? 8.0 * (double)vrows(v) * (double)vcols(v) : 8; }

void stat_predict(int type, double bytes)
{
    g_stat[type].pred += bytes;
    g_stat[type].modeled = true;
}

/* The share of an n-row matrix's rows that the ranks other than 0 hold
 * (about (N-1)/N; all of a matrix of fewer blocks than ranks but one). */
static double others_share(int64_t n)
{
    int64_t lo, hi;
    part_range(n, 0, &lo, &hi);
    return n > 0 ? (double)(n - (hi - lo)) / (double)n : 0;
}

/* The model's volume of job j (bv: its broadcast operands; res: its
 * result on rank 0); -1 where it has none or the caller gives it. */
static double job_volume(const Job *j, const MB *src, const Value *bv, const Value *res)
{
    switch ((JobType)j->type) {
    case J_SCATTER: return dist_volume(dist_ctrl_bytes(1, 0, 0, 0, 0), 0, 0) + (src ? dist_wire_bytes(src->rows, src->cols, src->nnz) * others_share(src->rows) : 0);
    case J_COLLECT: return dist_volume(dist_ctrl_bytes(1, 0, 0, 0, 0), 0, 0) + (res ? val_bytes(res) * others_share(vrows(res)) : 0);
    case J_UNARY: case J_BINARY: case J_TERNARY: case J_RAGG: case J_FAGG: case J_CAGG: case J_MAPMM:
    case J_LMM: case J_TSMM: case J_TMM: case J_MMCHAIN: case J_CSLICE: case J_LIX: case J_DIAG: case J_REV:
        break;
    default: return -1;
    }
    double b = 0;
    int nval = 0;
    for (int k = 0; bv && k < j->nin && k < 3; k++)
        if (j->kind[k] == A_BCAST) b += is_mat(&bv[k]) ? val_bytes(&bv[k]) : 0, nval++;
    bool reduce = res && res->kind != V_DIST && res->kind != V_NONE;
    return dist_volume(dist_ctrl_bytes(1, nval, 0, 0, 0), b, reduce ? partial_bytes(res) : 0);
}

/* Rank 0: broadcasts the header and runs the job here. */
int start_job(Job *j, const MB *src, Value *bv, Value *res, BrErr *e)
{
    int64_t t0 = br_now_ns();
    g_bytes = 0;
    job_header(j);
    int rc = run_job(j, src, bv, res, e);
    count_job(j->type, j->type == J_FUSED ? j->op : -1, 0);
    g_stat[j->type].ns += br_now_ns() - t0;
    g_stat[j->type].bytes += g_bytes;
    double v = rc ? -1 : job_volume(j, src, bv, res);
    if (v >= 0) stat_predict(j->type, v);
    return rc;
}

/* A J_STOP header's op: the process ends (MPI finalized), or another
 * run follows (dist_end_run: MPI stays up, dist_reset comes next). */
enum { STOP_END, STOP_RUN };

int dist_serve(void)
{
    for (;;) {
        Job j;
        job_header(&j);
        if (j.type == J_STOP && j.op == STOP_RUN) return 0;
        if (j.type == J_STOP) { fault_stopping(); break; }
        BrErr e = {0};
        run_job(&j, NULL, NULL, NULL, &e);
    }
    MPI_Finalize();
    g_on = false;
    return 0;
}

static void drop_all_scattered(void);

/* Rank 0: frees what it scattered and sends the workers a stop of kind
 * how (their ends are expected only at STOP_END). */
static void stop_workers(int how)
{
    pthread_mutex_lock(&g_lock);
    drop_all_scattered();
    if (how == STOP_END) fault_stopping();
    Job j = {.type = J_STOP, .op = how};
    job_header(&j);
    pthread_mutex_unlock(&g_lock);
}

void dist_finish(void)
{
    if (!g_on) return;
    if (g_rank == 0) stop_workers(STOP_END);
    g_on = false;
    MPI_Finalize();
}

void dist_end_run(void)
{
    if (g_on && g_rank == 0) stop_workers(STOP_RUN);
}

void dist_reset(void)
{
    if (!g_on) return;
    pthread_mutex_lock(&g_lock);
    /* partitions a handle that outlived its run still named (its later
     * free finds nothing: ids are never reused) */
    for (int i = 0; i < g_nparts; i++) mb_release(g_parts[i].m);
    g_nparts = 0;
    memset(g_stat, 0, sizeof g_stat);
    g_piggy_ops = g_piggy_fused = 0;
    g_npend = -1;
    g_nfpend = 0;
    g_bytes = 0;
    fused_reset();
    task_reset();
    net_reset();
    fault_reset();
    pthread_mutex_unlock(&g_lock);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void dm_free(DM *d)
{
    if (g_on) {
        pthread_mutex_lock(&g_lock);
        Job j = {.type = J_FREE, .nin = 1, .id = {d->id}};
        BrErr e = {0};
        start_job(&j, NULL, NULL, NULL, &e);
        pthread_mutex_unlock(&g_lock);
    }
    free(d);
}

/* ---- operators (rank 0) ---- */

bool is_mat(const Value *v) { return v->kind == V_MATRIX || v->kind == V_DIST; }
int64_t vrows(const Value *v) { return v->kind == V_DIST ? v->dm->rows : v->kind == V_MATRIX ? v->m->rows : 0; }
/* bytes of a matrix in its format (its non-zeros known) */
static double vbytes(const Value *v)
{
    if (v->kind == V_DIST) return mb_est_size(v->dm->rows, v->dm->cols, v->dm->nnz);
    return v->kind == V_MATRIX ? mb_est_size(v->m->rows, v->m->cols, v->m->nnz) : 0;
}
int64_t vcols(const Value *v) { return v->kind == V_DIST ? v->dm->cols : v->kind == V_MATRIX ? v->m->cols : 0; }

/* Local matrices already scattered, so that one passed down function
 * calls (each level's variable holding the same local block) or to a
 * function called again is partitioned once: the block and its handle,
 * both retained. An entry lives while something else holds the block:
 * once the table's is its last reference (every variable that held the
 * local matrix is gone), the next scatter drops the entry and frees the
 * partitions (sweep). Only blocks other values hold at scatter time are
 * remembered (a variable replaced by its distributed form, the common
 * case, would otherwise keep its local block alive). Under g_lock. */
#define MAX_SCATTERED 32
static struct { MB *m; DM *d; } g_scat[MAX_SCATTERED];
static int g_nscat;

static void dm_unref(DM *d)
{
    if (__atomic_sub_fetch(&d->refs, 1, __ATOMIC_ACQ_REL) == 0) d->free(d);
}

static void drop_scattered(int i)
{
    MB *m = g_scat[i].m;
    DM *d = g_scat[i].d;
    g_scat[i] = g_scat[--g_nscat];
    mb_release(m);
    dm_unref(d);
}

static void drop_all_scattered(void)
{
    while (g_nscat) drop_scattered(g_nscat - 1);
}

static void sweep_scattered(void)
{
    for (int i = g_nscat - 1; i >= 0; i--)
        if (__atomic_load_n(&g_scat[i].m->refs, __ATOMIC_ACQUIRE) == 1) drop_scattered(i);
}

int dist_scatter(Value *v, BrErr *e)
{
    if (v->kind != V_MATRIX) return 0;
    pthread_mutex_lock(&g_lock);
    sweep_scattered();
    DM *d = NULL;
    for (int i = 0; i < g_nscat && !d; i++)
        if (g_scat[i].m == v->m) d = g_scat[i].d;
    if (d) {
        __atomic_add_fetch(&d->refs, 1, __ATOMIC_RELAXED);
        g_stat[J_SCATTER].saved++;
    } else {
        Job j = {.type = J_SCATTER, .out = g_next_id++, .rows = v->m->rows};
        if (start_job(&j, v->m, NULL, NULL, e)) { pthread_mutex_unlock(&g_lock); return -1; }
        d = dm_new(v->m->rows, v->m->cols, v->m->nnz, j.out);
        if (d && __atomic_load_n(&v->m->refs, __ATOMIC_RELAXED) > 1 && g_nscat < MAX_SCATTERED) {
            g_scat[g_nscat].m = mb_retain(v->m), g_scat[g_nscat++].d = d;
            __atomic_add_fetch(&d->refs, 1, __ATOMIC_RELAXED);
        }
    }
    pthread_mutex_unlock(&g_lock);
    if (!d) { br_err(e, BR_ENOMEM, "out of memory"); return -1; }
    val_release(v);
    v->kind = V_DIST;
    v->dm = d;
    return 0;
}

int dist_collect(Value *v, BrErr *e)
{
    if (v->kind != V_DIST) return 0;
    DM *d = v->dm;
    double need = mb_est_size(d->rows, d->cols, d->nnz);
    if (need > br_mem_physical()) {
        br_err(e, BR_ENOMEM,
               "a local operation needs the distributed %lld x %lld matrix on rank 0 (%.*f GB), more "
               "than its memory (%.*f GB)",
               (long long)d->rows, (long long)d->cols, br_gb_digits(need / 1e9), need / 1e9,
               br_gb_digits(br_mem_physical() / 1e9), br_mem_physical() / 1e9);
        return -1;
    }
    pthread_mutex_lock(&g_lock);
    Job j = {.type = J_COLLECT, .nin = 1, .id = {d->id}, .rows = d->rows, .ocols = d->cols};
    Value r = val_none();
    int rc = start_job(&j, NULL, NULL, &r, e);
    pthread_mutex_unlock(&g_lock);
    if (rc) return -1;
    val_release(v);
    *v = r;
    return 0;
}

/* Operand roles: partitioned (scattered if local) with the job's rows, or
 * broadcast (collected if distributed). */
int as_part(Job *j, int k, Value *v, BrErr *e)
{
    if (dist_scatter(v, e)) return -1;
    j->kind[k] = A_DIST;
    j->id[k] = v->dm->id;
    return 0;
}

int as_bcast(Job *j, int k, Value *v, BrErr *e)
{
    if (v->kind == V_NONE) { j->kind[k] = A_NONE; return 0; }
    if (dist_collect(v, e)) return -1;
    j->kind[k] = A_BCAST;
    return 0;
}

int run_op(Job *j, Value **v, Value *out, BrErr *e)
{
    Value bv[3] = {val_none(), val_none(), val_none()};
    for (int k = 0; k < j->nin; k++)
        if (j->kind[k] == A_BCAST) bv[k] = *v[k];
    pthread_mutex_lock(&g_lock);
    if (is_map(j->type)) j->out = g_next_id++;
    int rc = defer(j, bv, out) ? 0 : start_job(j, NULL, bv, out, e);
    pthread_mutex_unlock(&g_lock);
    return rc;
}

/* Elementwise over the operands v: the matrices with the most rows are
 * partitioned alike, row vectors and scalars broadcast. */
static int elementwise(int type, OpCode op, Value **v, int nin, Value *out, BrErr *e)
{
    int64_t n = 0;
    for (int k = 0; k < nin; k++)
        if (is_mat(v[k]) && vrows(v[k]) > n) n = vrows(v[k]);
    if (n <= 1) return DIST_LOCAL;
    for (int k = 0; k < nin; k++)
        if (is_mat(v[k]) && vrows(v[k]) != n && vrows(v[k]) != 1) return DIST_LOCAL; /* local error message */
    Job j = {.type = type, .op = op, .nin = nin, .rows = n};
    for (int k = 0; k < nin; k++) {
        int rc = is_mat(v[k]) && vrows(v[k]) == n ? as_part(&j, k, v[k], e) : as_bcast(&j, k, v[k], e);
        if (rc) return -1;
    }
    return run_op(&j, v, out, e);
}

int dist_unary(OpCode op, Value *a, Value *out, BrErr *e)
{
    Value *v[1] = {a};
    return is_mat(a) ? elementwise(J_UNARY, op, v, 1, out, e) : DIST_LOCAL;
}

int dist_binary(OpCode op, Value *a, Value *b, Value *out, BrErr *e)
{
    Value *v[2] = {a, b};
    return elementwise(J_BINARY, op, v, 2, out, e);
}

int dist_ternary(Value *c, Value *a, Value *b, Value *out, BrErr *e)
{
    Value *v[3] = {c, a, b};
    return elementwise(J_TERNARY, 0, v, 3, out, e);
}

int dist_agg(OpCode op, AggDir dir, Value *a, Value *out, BrErr *e)
{
    if (!is_mat(a) || vrows(a) <= 1) return DIST_LOCAL;
    bool combinable = op == OP_SUM || op == OP_SUMSQ || op == OP_MEAN || op == OP_AMIN || op == OP_AMAX ||
                      op == OP_PROD;
    if (dir != DIR_ROW && (op == OP_VAR || op == OP_SD)) return dist_var(op, dir, a, out, e);
    if (dir != DIR_ROW && !combinable) return DIST_LOCAL;
    if (dir == DIR_ROW && op == OP_TRACE) return DIST_LOCAL;
    Job j = {.type = dir == DIR_ROW ? J_RAGG : dir == DIR_COL ? J_CAGG : J_FAGG, .op = op, .dir = dir, .nin = 1,
             .rows = vrows(a), .cols = vcols(a), .orows = 1, .ocols = dir == DIR_COL ? vcols(a) : 1};
    if (as_part(&j, 0, a, e)) return -1;
    Value *v[1] = {a};
    return run_op(&j, v, out, e);
}

int dist_matmul(OpCode op, int left, Value *a, Value *b, Value *c, Value *out, BrErr *e)
{
    Value *v[3] = {a, b, c};
    Job j = {.nin = 3, .rows = vrows(a)};
    int rc = 0;
    if (!is_mat(a) || (op != OP_TSMM && !is_mat(b))) return DIST_LOCAL;
    if (op == OP_TSMM) {
        if (!left) return DIST_LOCAL;   /* X %*% t(X): an n x n result */
        j.type = J_TSMM;
        j.orows = j.ocols = vcols(a);
        rc = as_part(&j, 0, a, e);
    } else if (op == OP_MATMULTL) {      /* t(a) %*% b */
        if (vrows(b) != vrows(a)) return DIST_LOCAL;
        j.type = J_TMM;
        j.orows = vcols(a);
        j.ocols = vcols(b);
        rc = as_part(&j, 0, a, e) || as_part(&j, 1, b, e);
    } else if (op == OP_MMCHAIN) {       /* t(X) %*% (w * (X %*% v)) */
        if (vcols(a) != vrows(b) || (is_mat(c) && vrows(c) != vrows(a))) return DIST_LOCAL;
        j.type = J_MMCHAIN;
        j.orows = vcols(a);
        j.ocols = 1;
        rc = as_part(&j, 0, a, e) || as_bcast(&j, 1, b, e) || (is_mat(c) ? as_part(&j, 2, c, e) : as_bcast(&j, 2, c, e));
    } else if (op == OP_MATMUL) {
        if (vcols(a) != vrows(b)) return DIST_LOCAL;
        /* two large operands: mapmm, rmm or cpmm by their volumes */
        double ab = vbytes(a), bb = vbytes(b), budget = br_mem_budget();
        bool both = (a->kind == V_DIST && b->kind == V_DIST) || (a->kind == V_DIST && bb > budget) ||
                    (b->kind == V_DIST && ab > budget);
        if (both && vrows(a) > 1 && vrows(b) > 1) {
            int mm = dist_mm_method(vrows(a), vcols(a), vcols(b), ab, bb, b->kind == V_DIST, budget);
            if (mm != MM_MAPMM) return dist_mm2(mm, a, b, out, e);
        }
        /* partition the distributed (or larger) side, broadcast the other */
        bool right = b->kind == V_DIST && a->kind != V_DIST;
        if (both) right = false;
        if (a->kind != V_DIST && b->kind != V_DIST) right = vrows(b) * vcols(b) > vrows(a) * vcols(a);
        if (!right) {
            if (vrows(a) <= 1) return DIST_LOCAL;
            j.type = J_MAPMM;
            rc = as_part(&j, 0, a, e) || as_bcast(&j, 1, b, e);
        } else {
            if (vrows(b) <= 1) return DIST_LOCAL;
            j.type = J_LMM;
            j.rows = vrows(b);
            j.orows = vrows(a);
            j.ocols = vcols(b);
            rc = as_bcast(&j, 0, a, e) || as_part(&j, 1, b, e);
        }
        j.kind[2] = A_NONE;
    } else {
        return DIST_LOCAL;
    }
    if (rc) return -1;
    return run_op(&j, v, out, e);
}

int dist_rix(Value *x, const int64_t r[4], Value *out, BrErr *e)
{
    if (x->kind != V_DIST) return DIST_LOCAL;
    Job j = {.type = J_CSLICE, .nin = 1, .rows = x->dm->rows, .cols = x->dm->cols,
             .ix = {r[0], r[1], r[2], r[3]}, .kind = {A_DIST}, .id = {x->dm->id}};
    Value *v[1] = {x};
    if (r[0] == 0 && r[1] == x->dm->rows) return run_op(&j, v, out, e);
    /* a row range: to rank 0, which must hold it */
    double need = mb_est_dense(r[1] - r[0], r[3] - r[2]);
    if (need > br_mem_physical()) {
        br_err(e, BR_ENOMEM, "rows %lld:%lld of a distributed matrix need %.*f GB on rank 0, more than its memory (%.*f GB)",
               (long long)r[0] + 1, (long long)r[1], br_gb_digits(need / 1e9), need / 1e9,
               br_gb_digits(br_mem_physical() / 1e9), br_mem_physical() / 1e9);
        return -1;
    }
    j.type = J_RSLICE;
    pthread_mutex_lock(&g_lock);
    int rc = start_job(&j, NULL, NULL, out, e);
    pthread_mutex_unlock(&g_lock);
    return rc;
}

int dist_lix(Value *x, Value *src, const int64_t r[4], Value *out, BrErr *e)
{
    if (x->kind != V_DIST) return DIST_LOCAL;
    bool mat = is_mat(src);
    /* a source of the wrong shape: the local operator says so */
    if (mat ? vrows(src) != r[1] - r[0] || vcols(src) != r[3] - r[2]
            : !val_is_numeric(src) || r[1] - r[0] != 1 || r[3] - r[2] != 1)
        return DIST_LOCAL;
    Job j = {.type = J_LIX, .nin = 2, .rows = x->dm->rows, .cols = x->dm->cols, .ix = {r[0], r[1], r[2], r[3]},
             .ocols = x->dm->cols};
    if (as_part(&j, 0, x, e) || as_bcast(&j, 1, src, e)) return -1;
    Value *v[2] = {x, src};
    return run_op(&j, v, out, e);
}

int dist_cbind(Value **v, int n, Value *out, BrErr *e)
{
    if (n < 2 || n > 3) return DIST_LOCAL;
    int64_t rows = vrows(v[0]);
    bool any = false;
    for (int k = 0; k < n; k++) {
        if (!is_mat(v[k]) || vrows(v[k]) != rows) return DIST_LOCAL;
        any |= v[k]->kind == V_DIST;
    }
    if (!any || rows <= 1) return DIST_LOCAL;
    Job j = {.type = J_CBIND, .nin = n, .rows = rows};
    for (int k = 0; k < n; k++)
        if (as_part(&j, k, v[k], e)) return -1;
    return run_op(&j, v, out, e);
}

int dist_read_binary(Value *path, Value *out, BrErr *e)
{
    if (path->kind != V_STRING) return DIST_LOCAL;
    int64_t rows, cols;
    MB *none = io_read_binary_rows(path->s->s, 0, 0, &rows, &cols, e);   /* the header */
    if (!none) return -1;
    mb_release(none);
    Job j = {.type = J_READ, .rows = rows, .cols = cols};
    pthread_mutex_lock(&g_lock);
    j.out = g_next_id++;
    int rc = start_job(&j, NULL, path, out, e);
    pthread_mutex_unlock(&g_lock);
    return rc;
}

int dist_table(Value *a, Value *b, Value *w, int64_t odim1, int64_t odim2, Value *out, BrErr *e)
{
    if (!is_mat(a) || !is_mat(b) || (a->kind != V_DIST && b->kind != V_DIST && !(w && w->kind == V_DIST)))
        return DIST_LOCAL;
    int64_t n = vrows(a);
    if (n <= 1 || vrows(b) != n || vcols(a) != 1 || vcols(b) != 1 || odim1 < -1 || odim2 < -1) return DIST_LOCAL;
    /* weights: an n x 1 vector partitioned alike, or a number */
    if (w && !(is_mat(w) && vrows(w) == n && vcols(w) == 1) && !val_is_numeric(w)) return DIST_LOCAL;
    Job j = {.type = J_TABLE, .nin = w ? 3 : 2, .rows = n, .orows = odim1, .ocols = odim2};
    if (as_part(&j, 0, a, e) || as_part(&j, 1, b, e)) return -1;
    if (w && is_mat(w) && as_part(&j, 2, w, e)) return -1;
    if (w && !is_mat(w)) {
        double ws = val_as_double(w);
        memcpy(&j.ix[0], &ws, sizeof ws);   /* the scalar weight travels in the header */
    }
    Value *v[3] = {a, b, w};
    return run_op(&j, v, out, e);
}
