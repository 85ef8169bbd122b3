/* disttask.c: tasks run by every rank (remote parfor, docs/dist.md).
 * dist/ does not know what a task is: rank 0 broadcasts its payload,
 * every rank hands it to the runner the upper layer registered (rank 0
 * to the one it passes), all agree on success, and rank 0 receives every
 * rank's result bytes. While the shares run, a worker may ask rank 0 for
 * bytes (a function's compiled program): rank 0 answers on a thread of
 * its own (its share makes no MPI calls: MPI_THREAD_SERIALIZED holds)
 * until every worker has said its share ended. */
#include "distint.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TAG_ASK 11      /* a worker's request; empty: its share ended */
#define TAG_ANSWER 12   /* rank 0's answer */

static DistTaskRun g_task;
static DistTaskRun g_local;   /* rank 0's runner while its task runs */
static const char *g_payload;
static size_t g_plen;
static char **g_res;
static size_t *g_rlen;

void dist_set_task_runner(DistTaskRun fn) { g_task = fn; }

int g_pf_threads;    /* the most threads a rank ran a remote parfor's share on */
int64_t g_pf_funcs;  /* remote parfor loops inside functions */

void dist_note_parfor(int threads, bool in_func)
{
    if (threads > g_pf_threads) g_pf_threads = threads;
    g_pf_funcs += in_func;
}

int64_t g_pf_shipped, g_pf_unshipped, g_pf_decoded, g_pf_compiled, g_pf_dups, g_pf_fetched;
int64_t g_pf_asks[3];   /* requests rank 0 answered (dist_note_ask) */
int64_t g_pf_ans[3];    /* its function answers: bodies, heads, bytes (dist_note_answer) */
const char *g_pf_why;   /* the first reason a plan was not shipped */

void task_reset(void)
{
    g_pf_threads = 0;
    g_pf_funcs = 0;
    g_pf_shipped = g_pf_unshipped = g_pf_decoded = g_pf_compiled = g_pf_dups = g_pf_fetched = 0;
    memset(g_pf_asks, 0, sizeof g_pf_asks);
    memset(g_pf_ans, 0, sizeof g_pf_ans);
    g_pf_why = NULL;
}

void dist_note_fetched(int fetched) { g_pf_fetched += fetched; }
void dist_note_ask(int what) { if (what >= 0 && what < 3) g_pf_asks[what]++; }
void dist_note_answer(int bodies, int heads, size_t bytes)
{
    g_pf_ans[0] += bodies, g_pf_ans[1] += heads, g_pf_ans[2] += (int64_t)bytes;
}

void dist_note_plan(bool shipped, int decoded, int compiled, int dups, const char *why)
{
    if (shipped) g_pf_shipped++;
    else g_pf_unshipped++;
    g_pf_decoded += decoded, g_pf_compiled += compiled, g_pf_dups += dups;
    if (why && !g_pf_why) g_pf_why = why;
}

char *dist_pack_mb(const MB *m, size_t *n)
{
    BrErr e;
    /* a GPU result still on the device lands first (NULL: as out of memory) */
    return mb_host(m, &e) ? NULL : pack(m, n);
}
MB *dist_unpack_mb(const char *buf, size_t n, BrErr *e) { return unpack(buf, n, e); }

/* ---- requests during a task ---- */

static DistTaskServe g_serve;
static bool g_in_task;   /* a worker: its share is running (requests go) */
static pthread_mutex_t g_ask_lock = PTHREAD_MUTEX_INITIALIZER;

void dist_set_task_server(DistTaskServe fn) { g_serve = fn; }

/* One message with tag from rank r (malloc'd), *n its size. */
static char *recv_any(int r, int tag, size_t *n)
{
    MPI_Status st;
    int cnt = 0;
    MPI_Probe(r, tag, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_BYTE, &cnt);
    char *p = malloc(cnt > 0 ? (size_t)cnt : 1);
    if (!p) {
        /* cannot refuse a message in flight: a clear end beats a hang */
        fprintf(stderr, "braid: rank %d: out of memory receiving %d bytes\n", g_rank, cnt);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Recv(p, cnt, MPI_BYTE, st.MPI_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    *n = (size_t)cnt;
    return p;
}

char *dist_task_ask(const char *req, size_t n, size_t *alen, BrErr *e)
{
    if (!g_on || g_rank == 0 || !g_in_task) {
        br_err(e, BR_EFAIL, "rank %d: a request to rank 0 outside a task", g_rank);
        return NULL;
    }
    if (n == 0 || n >= INT_MAX) { br_err(e, BR_EFAIL, "rank %d: a request of %zu bytes", g_rank, n); return NULL; }
    pthread_mutex_lock(&g_ask_lock);   /* MPI_THREAD_SERIALIZED: one thread at a time */
    MPI_Send(req, (int)n, MPI_BYTE, 0, TAG_ASK, MPI_COMM_WORLD);
    char *a = recv_any(0, TAG_ANSWER, alen);
    pthread_mutex_unlock(&g_ask_lock);
    return a;
}

/* Rank 0: answers the workers' requests until every worker's share has
 * ended (an empty message), polling so that its own share keeps the
 * core (100 us doubling to 5 ms between polls; reset by a request). An
 * answer the server cannot make is one byte 0 (the worker's side reads
 * it as a refusal). Returns the bytes sent and received. */
static void *serve(void *arg)
{
    int64_t *bytes = arg;
    long ns = 100000;
    for (int left = g_size - 1; left > 0;) {
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, TAG_ASK, MPI_COMM_WORLD, &flag, &st);
        if (!flag) {
            struct timespec ts = {0, ns};
            nanosleep(&ts, NULL);
            if (ns < 5000000) ns *= 2;
            continue;
        }
        ns = 100000;
        size_t n;
        char *req = recv_any(st.MPI_SOURCE, TAG_ASK, &n);
        if (n == 0) { left--; free(req); continue; }
        char *ans = NULL;
        size_t alen = 0;
        if (!g_serve || g_serve(req, n, &ans, &alen) || alen >= INT_MAX) free(ans), ans = NULL, alen = 1;
        MPI_Send(ans ? ans : "", (int)alen, MPI_BYTE, st.MPI_SOURCE, TAG_ANSWER, MPI_COMM_WORLD);
        *bytes += (int64_t)(n + alen);
        free(req), free(ans);
    }
    return NULL;
}

int run_task(const Job *j, BrErr *e)
{
    (void)j;
    uint64_t n = g_rank == 0 ? g_plen : 0;
    bcast_bytes(&n, sizeof n);
    char *payload = g_rank == 0 ? (char *)g_payload : malloc(n ? n : 1);
    if (!payload) {
        fprintf(stderr, "braid: rank %d: out of memory receiving a task\n", g_rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    bcast_bytes(payload, n);
    char *res = NULL;
    size_t rlen = 0;
    DistTaskRun fn = g_rank == 0 ? g_local : g_task;
    /* rank 0 answers requests on a thread while its share runs (without
     * one, after it: a worker waits, nothing deadlocks) */
    pthread_t th;
    int64_t served = 0;
    bool thread = g_rank == 0 && g_size > 1 && pthread_create(&th, NULL, serve, &served) == 0;
    g_in_task = g_rank != 0;
    bool failed = !fn ? br_err(e, BR_EFAIL, "rank %d cannot run tasks", g_rank) != 0
                      : fn(payload, n, &res, &rlen, e) != 0;
    g_in_task = false;
    if (g_rank != 0) MPI_Send("", 0, MPI_BYTE, 0, TAG_ASK, MPI_COMM_WORLD);   /* its share ended */
    if (thread) pthread_join(th, NULL);
    else if (g_rank == 0 && g_size > 1) serve(&served);
    g_bytes += served;
    if (g_rank != 0) free(payload);
    if (agree(failed, e)) { free(res); return -1; }
    if (g_rank != 0) {
        send_bytes(res, rlen, 0);
        free(res);
        return 0;
    }
    g_res[0] = res, g_rlen[0] = rlen;
    for (int r = 1; r < g_size; r++) g_res[r] = recv_bytes(r, &g_rlen[r]);
    return 0;
}

int dist_task(const char *payload, size_t n, DistTaskRun local, char **res, size_t *rlen, BrErr *e)
{
    if (!g_on) return DIST_LOCAL;
    pthread_mutex_lock(&g_lock);
    g_local = local, g_payload = payload, g_plen = n, g_res = res, g_rlen = rlen;
    Job j = {.type = J_TASK};
    int rc = start_job(&j, NULL, NULL, NULL, e);
    g_local = NULL, g_payload = NULL, g_res = NULL, g_rlen = NULL;
    pthread_mutex_unlock(&g_lock);
    return rc;
}
