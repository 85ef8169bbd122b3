/* disttask.c: tasks run by every rank (remote parfor, docs/dist.md).
 * dist/ does not know what a task is: rank 0 broadcasts its payload,
 * every rank hands it to the runner the upper layer registered (rank 0
 * to the one it passes), all agree on success, and rank 0 receives every
 * rank's result bytes. */
#include "distint.h"

#include <stdlib.h>
#include <string.h>

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

int64_t g_pf_shipped, g_pf_unshipped, g_pf_decoded, g_pf_compiled, g_pf_dups;
const char *g_pf_why;   /* the first reason a plan was not shipped */

void task_reset(void)
{
    g_pf_threads = 0;
    g_pf_funcs = 0;
    g_pf_shipped = g_pf_unshipped = g_pf_decoded = g_pf_compiled = g_pf_dups = 0;
    g_pf_why = NULL;
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
    bool failed = !fn ? br_err(e, BR_EFAIL, "rank %d cannot run tasks", g_rank) != 0
                      : fn(payload, n, &res, &rlen, e) != 0;
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
