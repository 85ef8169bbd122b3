/* distmm.c: distributed operators that move rows between ranks:
 * products of two large operands (cpmm, rmm; seed 002 section 3.3 with
 * the costs of its reference [5]), transpose and rbind.
 *
 * With A (n x k) and B (k x m) both row-partitioned over N ranks:
 *   rmm   replicates B: every rank gathers all of B (N broadcasts, one
 *         per rank's rows) and multiplies its rows of A; the result is
 *         partitioned as A. Volume (N-1)|B|; memory |B| per rank.
 *   cpmm  joins on the common dimension: rank s gets the columns of A
 *         that meet its rows of B (an all-to-all of A, volume about
 *         |A|(N-1)/N), forms the partial product A[, cols_s] B_s (n x m)
 *         and the partials are summed into the result's row blocks (one
 *         reduction per block, volume (N-1)|C|); memory |C| per rank.
 * mapmm (dist.c) broadcasts a B that rank 0 holds; a distributed B would
 * first be collected, so it costs N|B|. dist_mm_method picks the least
 * volume among the operators whose memory fits the budget. */
#include "distint.h"

#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/reorg.h"

#define CHUNK ((size_t)1 << 27)   /* doubles per reduction */

/* Every rank's partition of id broadcast to all, stacked: the whole
 * matrix on every rank (rows rows, cols columns). */
static MB *replicate(int64_t id, int64_t rows, int64_t cols, BrErr *e)
{
    MB **got = calloc((size_t)g_size, sizeof *got);
    int n = 0;
    int64_t sent = 0;
    bool failed = !got;
    for (int r = 0; r < g_size; r++) {
        size_t len = 0;
        char *buf = NULL;
        if (g_rank == r) {
            MB *m = part_get(id);
            buf = m ? pack(m, &len) : NULL;
            if (m && !buf) failed = true;
            sent += (int64_t)len * (g_size - 1);
        }
        MPI_Bcast(&len, (int)sizeof len, MPI_BYTE, r, MPI_COMM_WORLD);
        if (g_rank != r && len && !(buf = malloc(len))) {
            fprintf(stderr, "braid: rank %d: out of memory receiving %zu bytes\n", g_rank, len);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (size_t o = 0; o < len; o += (size_t)1 << 30) {
            size_t k = BR_MIN((size_t)1 << 30, len - o);
            MPI_Bcast(buf + o, (int)k, MPI_BYTE, r, MPI_COMM_WORLD);
        }
        MB *m = len ? unpack(buf, len, e) : NULL;
        if (len && !m) failed = true;
        if (m && got) got[n++] = m;
        else mb_release(m);
        free(buf);
    }
    int64_t all = 0;
    MPI_Reduce(&sent, &all, 1, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (g_rank == 0) g_bytes += all;
    MB *m = NULL;
    if (!failed) {
        int64_t have = 0;
        for (int i = 0; i < n; i++) have += got[i]->rows;
        if (have != rows) br_err(e, BR_EFAIL, "replicated %lld of %lld rows", (long long)have, (long long)rows);
        else if (n == 0) m = mb_empty(rows, cols, e);
        else m = n == 1 ? mb_retain(got[0]) : k_rbind(n, (const MB *const *)got, e);
    }
    for (int i = 0; i < n; i++) mb_release(got[i]);
    free(got);
    return m;
}

/* A (id[0], j->rows rows) times B (id[1], ix[0] x ix[1]). */
int run_rmm(const Job *j, Value *res, BrErr *e)
{
    MB *b = replicate(j->id[1], j->ix[0], j->ix[1], e);
    MB *a = part_get(j->id[0]);
    Value loc = val_none();
    bool failed = !b;
    if (!failed && a) {
        Value av = val_matrix(mb_retain(a)), bv = val_matrix(mb_retain(b)), none = val_none();
        failed = ap_matmul(OP_MATMUL, 0, &av, &bv, &none, &loc, e) != 0;
        val_release(&av);
        val_release(&bv);
    }
    mb_release(b);
    int rc = failed ? (agree(true, e), -1) : finish_map(j, &loc, res, e);
    val_release(&loc);
    return rc;
}

/* Sums every rank's n x m partial p into the result's row blocks: rank
 * t receives rows [lo_t, hi_t) (one reduction per block). */
static MB *reduce_scatter(double *p, int64_t n, int64_t m, BrErr *e)
{
    MB *mine = NULL;
    for (int t = 0; t < g_size; t++) {
        int64_t lo, hi;
        part_range(n, t, &lo, &hi);
        size_t cnt = (size_t)((hi - lo) * m);
        double *dst = NULL;
        if (g_rank == t && cnt) {
            mine = mb_dense_uninit(hi - lo, m, e);
            dst = mine ? mine->d : NULL;
            if (!dst) { fprintf(stderr, "braid: rank %d: out of memory\n", g_rank); MPI_Abort(MPI_COMM_WORLD, 1); }
        }
        for (size_t o = 0; o < cnt; o += CHUNK) {
            int k = (int)BR_MIN(CHUNK, cnt - o);
            MPI_Reduce(p + lo * m + o, dst ? dst + o : NULL, k, MPI_DOUBLE, MPI_SUM, t, MPI_COMM_WORLD);
        }
    }
    if (g_rank == 0) g_bytes += (int64_t)(n * m) * 8 * (g_size - 1);
    if (mine) mb_recount_nnz(mine);
    return mine;
}

/* A (id[0], j->rows x j->cols) times B (id[1], j->cols x ocols). */
int run_cpmm(const Job *j, Value *res, BrErr *e)
{
    int64_t n = j->rows, k = j->cols, m = j->ocols, lo, hi;
    part_range(n, g_rank, &lo, &hi);
    MB *a = part_get(j->id[0]), *b = part_get(j->id[1]);
    /* A's columns to the ranks holding the matching rows of B */
    Piece **per = calloc((size_t)g_size, sizeof *per);
    Piece *cell = calloc((size_t)g_size, sizeof *cell);
    int *npc = calloc((size_t)g_size, sizeof *npc);
    double *p = calloc((size_t)(n * m) + 1, sizeof *p);
    if (!per || !cell || !npc || !p) { fprintf(stderr, "braid: rank %d: out of memory\n", g_rank); MPI_Abort(MPI_COMM_WORLD, 1); }
    bool failed = false;
    for (int t = 0; t < g_size; t++) {
        int64_t blo, bhi;
        part_range(k, t, &blo, &bhi);
        per[t] = &cell[t];
        if (!a || bhi <= blo || failed) continue;
        cell[t] = (Piece){lo, k_slice(a, 0, a->rows, blo, bhi, e)};
        failed = !cell[t].m;
        npc[t] = cell[t].m != NULL;
    }
    int ng = 0;
    Piece *got = shuffle(per, npc, &ng, e);
    for (int t = 0; t < g_size; t++) mb_release(cell[t].m);
    free(per), free(cell), free(npc);
    failed |= !got;
    /* the partial product over this rank's slice of the common dimension */
    if (!failed && b && b->rows > 0) {
        MB *acols = stack_pieces(got, ng, n, false, e);
        Value av = acols ? val_matrix(acols) : val_none(), bv = val_matrix(mb_retain(b)), none = val_none(), pv;
        failed = !acols || ap_matmul(OP_MATMUL, 0, &av, &bv, &none, &pv, e) != 0;
        if (!failed) {
            const MB *pm = pv.kind == V_MATRIX ? pv.m : NULL;
            for (int64_t r = 0; pm && r < n; r++)
                for (int64_t c = 0; c < m; c++) p[r * m + c] = mb_get(pm, r, c);
            val_release(&pv);
        }
        val_release(&av);
        val_release(&bv);
    }
    pieces_free(got, ng);
    /* every rank reduces (a failed one adds zeros); then they agree */
    MB *mine = reduce_scatter(p, n, m, e);
    free(p);
    if (mine && mb_examine(mine, e)) failed = true;
    Value loc = mine ? val_matrix(mine) : val_none();
    int rc = failed ? (agree(true, e), -1) : finish_map(j, &loc, res, e);
    val_release(&loc);
    return rc;
}

/* t(X) of X (id[0], j->rows x j->cols): rank r's rows are columns
 * [lo_r, hi_r) of the result; each target gets its rows of them. */
int run_transpose(const Job *j, Value *res, BrErr *e)
{
    int64_t n = j->rows, m = j->cols, lo, hi;
    part_range(n, g_rank, &lo, &hi);
    MB *x = part_get(j->id[0]);
    MB *tx = x ? k_transpose(x, e) : NULL;
    bool failed = x && !tx;
    Piece **per = calloc((size_t)g_size, sizeof *per);
    Piece *cell = calloc((size_t)g_size, sizeof *cell);
    int *npc = calloc((size_t)g_size, sizeof *npc);
    if (!per || !cell || !npc) { fprintf(stderr, "braid: rank %d: out of memory\n", g_rank); MPI_Abort(MPI_COMM_WORLD, 1); }
    for (int t = 0; t < g_size; t++) {
        int64_t plo, phi;
        part_range(m, t, &plo, &phi);
        per[t] = &cell[t];
        if (!tx || phi <= plo || failed) continue;
        cell[t] = (Piece){lo, k_slice(tx, plo, phi, 0, tx->cols, e)};   /* ordered by column offset */
        failed = !cell[t].m;
        npc[t] = cell[t].m != NULL;
    }
    mb_release(tx);
    int ng = 0;
    Piece *got = shuffle(per, npc, &ng, e);
    for (int t = 0; t < g_size; t++) mb_release(cell[t].m);
    free(per), free(cell), free(npc);
    failed |= !got;
    int64_t plo, phi;
    part_range(m, g_rank, &plo, &phi);
    MB *mine = NULL;
    if (!failed && phi > plo) {
        mine = stack_pieces(got, ng, n, true, e);
        failed = !mine || mb_examine(mine, e);
    }
    pieces_free(got, ng);
    Job jj = *j;
    jj.rows = m;
    jj.ocols = n;
    Value loc = mine ? val_matrix(mine) : val_none();
    int rc = failed ? (agree(true, e), -1) : finish_map(&jj, &loc, res, e);
    val_release(&loc);
    return rc;
}

/* rbind(A, B) of A (id[0], j->rows rows) and B (id[1], ix[0] rows). */
int run_rbind(const Job *j, Value *res, BrErr *e)
{
    int64_t n1 = j->rows, n2 = j->ix[0], alo, ahi, blo, bhi;
    part_range(n1, g_rank, &alo, &ahi);
    part_range(n2, g_rank, &blo, &bhi);
    Piece pc[2];
    int np = 0;
    MB *a = part_get(j->id[0]), *b = part_get(j->id[1]);
    if (a) pc[np++] = (Piece){alo, a};
    if (b) pc[np++] = (Piece){n1 + blo, b};
    Job jj = *j;
    jj.rows = n1 + n2;
    jj.ocols = j->cols;
    MB *mine = NULL;
    bool failed = redistribute(pc, np, n1 + n2, &mine, e) != 0;
    if (mine && mb_examine(mine, e)) failed = true;
    Value loc = mine ? val_matrix(mine) : val_none();
    int rc = failed ? (agree(true, e), -1) : finish_map(&jj, &loc, res, e);
    val_release(&loc);
    return rc;
}

/* ---- rank 0 ---- */

/* The bytes method moves for A (n rows) %*% B (m columns) in the model. */
static double mm_volume(int method, int64_t n, int64_t m, double a_bytes, double b_bytes, bool b_dist)
{
    int N = g_size;
    double c_bytes = mb_est_dense(n, m);
    switch (method) {
    case MM_MAPMM: return (b_dist ? N : N - 1) * b_bytes;
    case MM_RMM: return (N - 1) * b_bytes + (b_dist ? 0 : b_bytes);   /* B scattered first */
    default: return a_bytes * (N - 1) / N + (N - 1) * c_bytes;
    }
}

int dist_mm_method(int64_t n, int64_t k, int64_t m, double a_bytes, double b_bytes, bool b_dist, double budget)
{
    int N = g_size;
    double c_bytes = mb_est_dense(n, m);
    double vol_map = mm_volume(MM_MAPMM, n, m, a_bytes, b_bytes, b_dist);
    double vol_rmm = mm_volume(MM_RMM, n, m, a_bytes, b_bytes, b_dist);
    double vol_cpmm = mm_volume(MM_CPMM, n, m, a_bytes, b_bytes, b_dist);
    (void)k;
    int best = -1;
    double v = 0;
    if (b_bytes <= budget) best = MM_MAPMM, v = vol_map;
    if (b_bytes + c_bytes / N <= budget && (best < 0 || vol_rmm < v)) best = MM_RMM, v = vol_rmm;
    if (c_bytes <= budget && (best < 0 || vol_cpmm < v)) best = MM_CPMM, v = vol_cpmm;
    return best < 0 ? (vol_cpmm < vol_rmm ? MM_CPMM : MM_RMM) : best;   /* none fits: the least volume */
}

int dist_mm2(int method, Value *a, Value *b, Value *out, BrErr *e)
{
    Job j = {.type = method == MM_CPMM ? J_CPMM : J_RMM, .nin = 2, .rows = vrows(a), .cols = vcols(a),
             .ocols = vcols(b), .ix = {vrows(b), vcols(b)}};
    bool b_dist = b->kind == V_DIST;
    double vol = mm_volume(method, vrows(a), vcols(b), mb_est_size(vrows(a), vcols(a), a->kind == V_DIST ? a->dm->nnz : a->m->nnz),
                           mb_est_size(vrows(b), vcols(b), b_dist ? b->dm->nnz : b->m->nnz), b_dist);
    if (as_part(&j, 0, a, e) || as_part(&j, 1, b, e)) return -1;
    Value *v[2] = {a, b};
    int rc = run_op(&j, v, out, e);
    if (!rc) stat_predict(j.type, vol);
    return rc;
}

int dist_reorg(OpCode op, Value *a, Value *out, BrErr *e)
{
    if ((op != OP_TRANS && op != OP_REV && op != OP_DIAG) || a->kind != V_DIST) return DIST_LOCAL;
    /* diag of a vector or of a square matrix: each rank its rows */
    if (op == OP_DIAG && (vrows(a) < 2 || (vcols(a) != 1 && vcols(a) != vrows(a)))) return DIST_LOCAL;
    Job j = {.type = op == OP_REV ? J_REV : op == OP_DIAG ? J_DIAG : J_TRANSPOSE, .nin = 1, .rows = vrows(a),
             .cols = vcols(a), .ocols = op == OP_DIAG && vcols(a) == 1 ? vrows(a) : 1};
    if (as_part(&j, 0, a, e)) return -1;
    Value *v[1] = {a};
    return run_op(&j, v, out, e);
}

int dist_rbind(Value **v, int n, Value *out, BrErr *e)
{
    if (n != 2 || !is_mat(v[0]) || !is_mat(v[1]) || vcols(v[0]) != vcols(v[1])) return DIST_LOCAL;
    if (v[0]->kind != V_DIST && v[1]->kind != V_DIST) return DIST_LOCAL;
    Job j = {.type = J_RBIND, .nin = 2, .rows = vrows(v[0]), .cols = vcols(v[0]), .ix = {vrows(v[1])}};
    if (as_part(&j, 0, v[0], e) || as_part(&j, 1, v[1], e)) return -1;
    return run_op(&j, v, out, e);
}

/* ---- variance and reversal ---- */

/* var or sd, full (dir DIR_FULL) or by column, of X (id[0], rows x
 * cols) in the local kernel's two passes: the mean from all-reduced sums,
 * then the reduced sums of squared deviations from it. */
int run_var(const Job *j, Value *res, BrErr *e)
{
    bool full = j->dir == DIR_FULL;
    int64_t w = full ? 1 : j->cols;
    MB *x = part_get(j->id[0]);
    Value xv = x ? val_matrix(mb_retain(x)) : val_none(), s = val_none(), dev = val_none(), ss = val_none();
    double *sum = calloc((size_t)w, sizeof *sum), *sq = calloc((size_t)w, sizeof *sq);
    if (!sum || !sq) { fprintf(stderr, "braid: rank %d: out of memory\n", g_rank); MPI_Abort(MPI_COMM_WORLD, 1); }
    bool failed = x && ap_agg(OP_SUM, full ? DIR_FULL : DIR_COL, &xv, &s, e) != 0;
    for (int64_t c = 0; !failed && x && c < w; c++) sum[c] = s.kind == V_MATRIX ? mb_get(s.m, 0, c) : val_as_double(&s);
    MPI_Allreduce(MPI_IN_PLACE, sum, (int)w, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double cnt = full ? (double)j->rows * (double)j->cols : (double)j->rows;
    MB *mean = full ? NULL : mb_dense_uninit(1, w, e);
    Value mv = full ? val_double(sum[0] / cnt) : mean ? val_matrix(mean) : val_none();
    for (int64_t c = 0; mean && c < w; c++) mean->d[c] = sum[c] / cnt;
    if (mean) mb_recount_nnz(mean);
    if (!full && !mean) failed = true;
    if (!failed && x)
        failed = ap_binary(OP_MINUS, &xv, &mv, &dev, e) || ap_agg(OP_SUMSQ, full ? DIR_FULL : DIR_COL, &dev, &ss, e);
    for (int64_t c = 0; !failed && x && c < w; c++) sq[c] = ss.kind == V_MATRIX ? mb_get(ss.m, 0, c) : val_as_double(&ss);
    val_release(&xv), val_release(&s), val_release(&dev), val_release(&ss), val_release(&mv);
    int rc = agree(failed, e);
    if (!rc) {
        if (g_rank == 0) MPI_Reduce(MPI_IN_PLACE, sq, (int)w, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        else MPI_Reduce(sq, NULL, (int)w, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (g_rank == 0) g_bytes += (int64_t)w * 16 * (g_size - 1);
    }
    if (!rc && g_rank == 0) {
        for (int64_t c = 0; c < w; c++) {
            double v = cnt == 0 ? NAN : cnt == 1 ? 0 : sq[c] / (cnt - 1);
            sq[c] = j->op == OP_SD ? sqrt(v) : v;
        }
        if (full) *res = val_double(sq[0]);
        else {
            MB *m = mb_dense_uninit(1, w, e);
            if (m) {
                memcpy(m->d, sq, (size_t)w * sizeof *sq);
                mb_recount_nnz(m);
                *res = val_matrix(m);
            } else rc = -1;
        }
    }
    free(sum);
    free(sq);
    return rc;
}

/* rev(X): rank r's rows, reversed, are rows [n-hi, n-lo) of the result. */
int run_rev(const Job *j, Value *res, BrErr *e)
{
    int64_t n = j->rows, lo, hi;
    part_range(n, g_rank, &lo, &hi);
    MB *x = part_get(j->id[0]), *r = x ? k_rev(x, e) : NULL;
    bool failed = x && !r;
    Piece pc = {n - hi, r};
    MB *mine = NULL;
    failed |= redistribute(&pc, r != NULL, n, &mine, e) != 0;
    mb_release(r);
    if (mine && mb_examine(mine, e)) failed = true;
    Job jj = *j;
    jj.ocols = j->cols;
    Value loc = mine ? val_matrix(mine) : val_none();
    int rc = failed ? (agree(true, e), -1) : finish_map(&jj, &loc, res, e);
    val_release(&loc);
    return rc;
}

int dist_var(OpCode op, AggDir dir, Value *a, Value *out, BrErr *e)
{
    if ((op != OP_VAR && op != OP_SD) || dir == DIR_ROW || a->kind != V_DIST) return DIST_LOCAL;
    Job j = {.type = J_VAR, .op = op, .dir = dir, .nin = 1, .rows = vrows(a), .cols = vcols(a)};
    if (as_part(&j, 0, a, e)) return -1;
    pthread_mutex_lock(&g_lock);
    int rc = start_job(&j, NULL, NULL, out, e);
    pthread_mutex_unlock(&g_lock);
    return rc;
}
