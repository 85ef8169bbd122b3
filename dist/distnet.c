/* distnet.c: the network's rate between ranks, for the fusion cost model
 * (codegen/cost.c prices broadcasts and reductions with it).
 *
 * Unless sysds.dist.netrate gives it, dist_init measures it: ranks 0 and
 * 1 bounce a message back and forth (a ping-pong: one warm-up round,
 * then NET_ROUNDS timed ones) and rank 0 broadcasts the rate, so every
 * rank prices plans alike. The message is large enough (NET_BYTES) that
 * latency adds little, small enough that startup stays quick (about a
 * millisecond over shared memory). Ranks 0 and 1 stand for every pair:
 * mpirun places them as it places the rest. A test that needs the same
 * plans on every run gives the rate. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "distint.h"

#define NET_BYTES (1 << 20)
#define NET_ROUNDS 4
#define NET_DEFAULT 1.0e9

static double g_rate = NET_DEFAULT;
static bool g_given, g_measured;

void dist_set_net_rate(double bytes_per_s)
{
    g_given = bytes_per_s > 0;
    if (g_given) g_rate = bytes_per_s;
}

double dist_net_rate(void) { return g_rate; }

void net_reset(void)
{
    g_rate = NET_DEFAULT;
    g_given = g_measured = false;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Ranks 0 and 1: seconds for NET_ROUNDS round trips of NET_BYTES. */
static double ping_pong(char *buf)
{
    double t0 = 0;
    for (int k = 0; k <= NET_ROUNDS; k++) {
        if (k == 1) t0 = now();   /* round 0 warms the connection up */
        if (g_rank == 0) {
            MPI_Send(buf, NET_BYTES, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
            MPI_Recv(buf, NET_BYTES, MPI_BYTE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, NET_BYTES, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, NET_BYTES, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
        }
    }
    return now() - t0;
}

void net_init(void)
{
    if (g_given || g_size < 2) return;
    double rate = 0;
    if (g_rank <= 1) {
        char *buf = calloc(NET_BYTES, 1);
        /* without the buffer both ranks skip alike: the peer's calloc
         * result is unknown, so agree first */
        int have = buf != NULL, both = 0;
        MPI_Allreduce(&have, &both, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (both) {
            double s = ping_pong(buf);
            if (s > 0) rate = 2.0 * NET_ROUNDS * NET_BYTES / s;
        }
        free(buf);
    } else {
        int have = 1, both = 0;
        MPI_Allreduce(&have, &both, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    }
    MPI_Bcast(&rate, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rate > 0) {
        g_rate = rate;
        g_measured = true;
    }
}

void net_print_stats(FILE *f)
{
    fprintf(f, "  network rate %.3g GB/s (%s)\n", g_rate / 1e9,
            g_given ? "sysds.dist.netrate" : g_measured ? "measured at startup" : "default");
}
