/* distshuffle.c: moving rows between ranks: an all-to-all of byte
 * messages, and the redistribution of row pieces into the row-block
 * partitioning (a parallel read's rows, rbind, transpose). */
#include "distint.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/reorg.h"

#define CHUNK ((size_t)1 << 30)

/* Out of memory in the middle of a collective: the other ranks wait in
 * it, so the run ends (a clear end beats a hang). */
static void *must_alloc(size_t n)
{
    void *p = malloc(n);
    if (!p) {
        fprintf(stderr, "braid: rank %d: out of memory receiving %zu bytes\n", g_rank, n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

void exchange(char **send, const size_t *slen, char **recv, size_t *rlen)
{
    int64_t sent = 0;
    for (int t = 0; t < g_size; t++) recv[t] = NULL, rlen[t] = 0;
    rlen[g_rank] = slen[g_rank];
    if (slen[g_rank]) memcpy(recv[g_rank] = must_alloc(slen[g_rank]), send[g_rank], slen[g_rank]);
    /* round s: send to rank+s, receive from rank-s (paired, so no rank
     * waits on one that sends elsewhere) */
    for (int s = 1; s < g_size; s++) {
        int to = (g_rank + s) % g_size, from = (g_rank - s + g_size) % g_size;
        size_t n = slen[to], m = 0;
        MPI_Sendrecv(&n, (int)sizeof n, MPI_BYTE, to, 3, &m, (int)sizeof m, MPI_BYTE, from, 3, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        rlen[from] = m;
        if (m) recv[from] = must_alloc(m);
        /* the chunks of each direction as their own messages (a zero-byte
         * message would still have to be matched) */
        size_t nreq = (n + CHUNK - 1) / CHUNK + (m + CHUNK - 1) / CHUNK, q = 0;
        MPI_Request *rq = must_alloc((nreq + 1) * sizeof *rq);
        for (size_t o = 0; o < m; o += CHUNK)
            MPI_Irecv(recv[from] + o, (int)BR_MIN(CHUNK, m - o), MPI_BYTE, from, 4, MPI_COMM_WORLD, &rq[q++]);
        for (size_t o = 0; o < n; o += CHUNK)
            MPI_Isend(send[to] + o, (int)BR_MIN(CHUNK, n - o), MPI_BYTE, to, 4, MPI_COMM_WORLD, &rq[q++]);
        MPI_Waitall((int)q, rq, MPI_STATUSES_IGNORE);
        free(rq);
        sent += (int64_t)n;
    }
    int64_t all = 0;
    MPI_Reduce(&sent, &all, 1, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (g_rank == 0) g_bytes += all;
}

/* A message of pieces: count, then per piece its row offset, its packed
 * size and the packed block. */
static char *pack_pieces(const Piece *pc, int np, size_t *len, BrErr *e)
{
    size_t *sz = calloc((size_t)np + 1, sizeof *sz);
    char **bufs = calloc((size_t)np + 1, sizeof *bufs);
    char *msg = NULL;
    bool ok = sz && bufs;
    size_t n = 8;
    for (int i = 0; ok && i < np; i++) {
        ok = (bufs[i] = pack(pc[i].m, &sz[i])) != NULL;
        n += 16 + sz[i];
    }
    if (ok && (msg = malloc(n))) {
        int64_t cnt = np;
        char *p = msg;
        memcpy(p, &cnt, 8), p += 8;
        for (int i = 0; i < np; i++) {
            int64_t h[2] = {pc[i].off, (int64_t)sz[i]};
            memcpy(p, h, 16), p += 16;
            memcpy(p, bufs[i], sz[i]), p += sz[i];
        }
        *len = n;
    }
    for (int i = 0; bufs && i < np; i++) free(bufs[i]);
    free(bufs);
    free(sz);
    if (!msg) br_err(e, BR_ENOMEM, "out of memory sending rows");
    return msg;
}

static int by_off(const void *a, const void *b)
{
    int64_t x = ((const Piece *)a)->off, y = ((const Piece *)b)->off;
    return x < y ? -1 : x > y;
}

/* The pieces of all received messages, sorted by row offset. */
static Piece *unpack_pieces(char **recv, const size_t *rlen, int *np, BrErr *e)
{
    int n = 0, cap = 0;
    Piece *all = NULL;
    for (int s = 0; s < g_size; s++) {
        if (!rlen[s]) continue;
        const char *p = recv[s], *end = recv[s] + rlen[s];
        int64_t cnt = 0;
        if (rlen[s] >= 8) memcpy(&cnt, p, 8), p += 8;
        for (int64_t i = 0; i < cnt && p + 16 <= end; i++) {
            int64_t h[2];
            memcpy(h, p, 16), p += 16;
            if (n == cap) {
                Piece *na = realloc(all, (size_t)(cap = cap ? 2 * cap : 8) * sizeof *na);
                if (!na) goto oom;
                all = na;
            }
            all[n].off = h[0];
            if (!(all[n].m = unpack(p, (size_t)h[1], e))) goto oom;
            n++;
            p += h[1];
        }
    }
    if (n > 1) qsort(all, (size_t)n, sizeof *all, by_off);
    if (!all && !(all = malloc(sizeof *all))) goto oom;   /* none: an empty list, not an error */
    *np = n;
    return all;
oom:
    for (int i = 0; i < n; i++) mb_release(all[i].m);
    free(all);
    br_err(e, BR_ENOMEM, "out of memory receiving rows");
    return NULL;
}

Piece *shuffle(Piece *const *pcs, const int *npc, int *nout, BrErr *e)
{
    size_t N = (size_t)g_size;
    char **send = memset(must_alloc(N * sizeof *send), 0, N * sizeof *send);
    char **recv = must_alloc(N * sizeof *recv);
    size_t *slen = memset(must_alloc(N * sizeof *slen), 0, N * sizeof *slen), *rlen = must_alloc(N * sizeof *rlen);
    bool failed = false;
    for (int t = 0; t < g_size && !failed; t++)
        if (npc[t]) failed = !(send[t] = pack_pieces(pcs[t], npc[t], &slen[t], e));
    if (failed)   /* still in the exchange, with nothing: the receivers see rows missing */
        for (int t = 0; t < g_size; t++) slen[t] = 0;
    exchange(send, slen, recv, rlen);
    Piece *got = failed ? NULL : unpack_pieces(recv, rlen, nout, e);
    for (int t = 0; t < g_size; t++) free(send[t]), free(recv[t]);
    free(send), free(recv), free(slen), free(rlen);
    return got;
}

void pieces_free(Piece *p, int n)
{
    for (int i = 0; p && i < n; i++) mb_release(p[i].m);
    free(p);
}

int redistribute(const Piece *pc, int np, int64_t total, MB **out, BrErr *e)
{
    *out = NULL;
    size_t N = (size_t)g_size;
    Piece **per = must_alloc(N * sizeof *per);
    int *npc = memset(must_alloc(N * sizeof *npc), 0, N * sizeof *npc);
    bool failed = false;
    /* every target's slices of my pieces */
    for (int t = 0; t < g_size; t++) {
        int64_t lo, hi;
        part_range(total, t, &lo, &hi);
        per[t] = must_alloc(((size_t)np + 1) * sizeof **per);
        for (int i = 0; i < np && !failed; i++) {
            int64_t a = BR_MAX(lo, pc[i].off), b = BR_MIN(hi, pc[i].off + pc[i].m->rows);
            if (a >= b) continue;
            Piece *sl = &per[t][npc[t]];
            sl->off = a;
            sl->m = k_slice(pc[i].m, a - pc[i].off, b - pc[i].off, 0, pc[i].m->cols, e);
            failed = !sl->m;
            if (sl->m) npc[t]++;
        }
    }
    if (failed) memset(npc, 0, N * sizeof *npc);
    int n = 0;
    Piece *got = shuffle(per, npc, &n, e);
    for (int t = 0; t < g_size; t++) {
        for (int i = 0; i < npc[t]; i++) mb_release(per[t][i].m);
        free(per[t]);
    }
    free(per);
    free(npc);
    failed |= !got;
    int64_t lo, hi;
    part_range(total, g_rank, &lo, &hi);
    if (!failed && hi > lo) {
        *out = stack_pieces(got, n, hi - lo, false, e);
        failed = !*out;
    }
    pieces_free(got, n);
    return failed ? -1 : 0;
}

MB *stack_pieces(const Piece *got, int n, int64_t want, bool by_cols, BrErr *e)
{
    int64_t have = 0;
    for (int i = 0; i < n; i++) have += by_cols ? got[i].m->cols : got[i].m->rows;
    if (have != want) {
        br_err(e, BR_EFAIL, "%lld of %lld %s arrived", (long long)have, (long long)want, by_cols ? "columns" : "rows");
        return NULL;
    }
    if (n == 1) return mb_retain(got[0].m);
    const MB **ms = malloc((size_t)n * sizeof *ms);
    if (!ms) { br_err(e, BR_ENOMEM, "out of memory"); return NULL; }
    for (int i = 0; i < n; i++) ms[i] = got[i].m;
    MB *m = by_cols ? k_cbind(n, ms, e) : k_rbind(n, ms, e);
    free(ms);
    return m;
}
