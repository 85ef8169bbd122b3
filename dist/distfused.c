/* distfused.c: fused operators over row partitions (seed 000 section
 * 5.5; docs/dist.md). dist/ sits below codegen, so it never sees a CPlan:
 * rank 0 ships the plan as bytes (codegen's cg_plan_pack) with the job,
 * and each worker hands them to the runner the upper layer registered
 * (dist_set_fused_runner), which finds the compiled operator in its plan
 * cache or compiles the same source (on one machine the shared disk cache
 * already holds rank 0's object). The job: the plan, every input's role
 * (a partition id, or a value broadcast with the job), the operator on
 * each rank's rows, one agreement, then either the result's partitions
 * kept (map) or the partial results reduced to rank 0 by their combine
 * operators (reduce). */
#include "distint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static DistFusedRun g_runner;
void dist_set_fused_runner(DistFusedRun fn) { g_runner = fn; }

/* Rank 0's job while it runs (under g_lock). */
static const DistFused *g_f;
static Value **g_args;

typedef struct FHead {
    int64_t plen;
    int32_t kind, nout;
    int32_t red[DF_MAXOUT];
} FHead;

typedef struct FArg { int32_t kind, pad; int64_t id; } FArg;

/* Out of memory in the middle of a collective: a clear end beats a hang. */
static void *must_alloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "braid: rank %d: out of memory in a fused job\n", g_rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

/* The local result's form, agreed by all ranks (a rank without rows has
 * none): 1 scalar, 2 matrix, 3 list of scalars; rows and cols of a
 * matrix, the length of a list. */
enum { F_NONE, F_SCALAR, F_MATRIX, F_LIST };

static void form_of(const Value *v, int64_t sh[3])
{
    sh[0] = F_NONE, sh[1] = 0, sh[2] = 0;
    if (v->kind == V_MATRIX) sh[0] = F_MATRIX, sh[1] = v->m->rows, sh[2] = v->m->cols;
    else if (v->kind == V_LIST) sh[0] = F_LIST, sh[1] = v->l->n;
    else if (val_is_numeric(v)) sh[0] = F_SCALAR, sh[1] = sh[2] = 1;
}

static double red_ident(int red) { return red == DF_MIN ? INFINITY : red == DF_MAX ? -INFINITY : 0; }
static MPI_Op red_op(int red) { return red == DF_MIN ? MPI_MIN : red == DF_MAX ? MPI_MAX : MPI_SUM; }

/* The local result as n doubles (the identities where this rank has
 * none); output k of a list combines by red[k], everything else by
 * red[0]. */
static double *flatten(const FHead *h, const int64_t sh[3], const Value *loc, size_t *n)
{
    *n = sh[0] == F_MATRIX ? (size_t)(sh[1] * sh[2]) : sh[0] == F_LIST ? (size_t)sh[1] : 1;
    double *buf = must_alloc(*n * sizeof *buf);
    for (size_t i = 0; i < *n; i++) buf[i] = red_ident(h->red[sh[0] == F_LIST && (int)i < h->nout ? i : 0]);
    if (loc->kind == V_MATRIX)
        for (int64_t r = 0; r < loc->m->rows && r < sh[1]; r++)
            for (int64_t c = 0; c < loc->m->cols && c < sh[2]; c++) buf[r * sh[2] + c] = mb_get(loc->m, r, c);
    else if (loc->kind == V_LIST)
        for (int64_t i = 0; i < loc->l->n && i < (int64_t)*n; i++) {
            const Value *x = &loc->l->items[i];
            buf[i] = x->kind == V_MATRIX ? mb_get(x->m, 0, 0) : val_as_double(x);
        }
    else if (loc->kind != V_NONE)
        buf[0] = val_as_double(loc);
    return buf;
}

/* Every rank: the partials of each combine operator reduced to rank 0. */
static void reduce_all(const FHead *h, const int64_t sh[3], double *buf, size_t n)
{
    if (sh[0] != F_LIST) { reduce_to_0(buf, n, red_op(h->red[0])); return; }
    for (int red = DF_SUM; red <= DF_MAX; red++) {
        double tmp[DF_MAXOUT];
        size_t m = 0;
        for (size_t i = 0; i < n && i < DF_MAXOUT; i++) if (h->red[i] == red) tmp[m++] = buf[i];
        if (!m) continue;
        reduce_to_0(tmp, m, red_op(red));
        m = 0;
        for (size_t i = 0; i < n && i < DF_MAXOUT; i++) if (h->red[i] == red) buf[i] = tmp[m++];
    }
}

/* Rank 0: the reduced partials in the local operator's form. */
static int reduced_value(const int64_t sh[3], const double *buf, Value *res, BrErr *e)
{
    if (sh[0] == F_SCALAR) { *res = val_double(buf[0]); return 0; }
    if (sh[0] == F_LIST) {
        Value l = val_list_new((int)sh[1]);
        if (l.kind != V_LIST) return br_err(e, BR_ENOMEM, "out of memory");
        for (int64_t i = 0; i < sh[1]; i++)
            if (list_append(l.l, val_double(buf[i]), NULL, e)) { val_release(&l); return -1; }
        *res = l;
        return 0;
    }
    MB *m = mb_dense_uninit(sh[1], sh[2], e);
    if (!m) return -1;
    memcpy(m->d, buf, (size_t)(sh[1] * sh[2]) * sizeof *buf);
    mb_recount_nnz(m);
    if (!(m = mb_finish(m, e))) return -1;
    *res = val_matrix(m);
    return 0;
}

/* The reduce job's end on every rank: shapes agreed, partials reduced. */
static int finish_fused_reduce(const FHead *h, Value *loc, Value *res, BrErr *e)
{
    int64_t mine[3], sh[3];
    form_of(loc, mine);
    MPI_Allreduce(mine, sh, 3, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    if (sh[0] == F_NONE) return g_rank == 0 ? br_err(e, BR_EFAIL, "a distributed fused operator gave no value") : -1;
    size_t n;
    double *buf = flatten(h, sh, loc, &n);
    reduce_all(h, sh, buf, n);
    int rc = g_rank == 0 ? reduced_value(sh, buf, res, e) : 0;
    free(buf);
    return rc;
}

/* Every rank: the plan and the operands, the operator on this rank's rows. */
int run_fused(const Job *j, Value *res, BrErr *e)
{
    int nin = j->nin;
    FHead h = {0};
    if (g_rank == 0) {
        h.plen = (int64_t)g_f->plen, h.kind = g_f->kind, h.nout = g_f->nout;
        memcpy(h.red, g_f->red, sizeof h.red);
    }
    bcast_bytes(&h, sizeof h);
    char *plan = g_rank == 0 ? g_f->plan : must_alloc((size_t)h.plen);
    bcast_bytes(plan, (size_t)h.plen);
    FArg *fa = must_alloc((size_t)nin * sizeof *fa);
    if (g_rank == 0)
        for (int k = 0; k < nin; k++)
            fa[k] = g_args[k]->kind == V_DIST ? (FArg){A_DIST, 0, g_args[k]->dm->id} : (FArg){A_BCAST, 0, 0};
    bcast_bytes(fa, (size_t)nin * sizeof *fa);
    Value *in = must_alloc((size_t)nin * sizeof *in);
    bool failed = false;
    for (int k = 0; k < nin; k++) {
        in[k] = val_none();
        if (fa[k].kind == A_DIST) {
            MB *m = part_get(fa[k].id);
            if (m) in[k] = val_matrix(mb_retain(m));
        } else {
            if (g_rank == 0) in[k] = val_retain(*g_args[k]);
            if (bcast_value(&in[k], e)) failed = true;
        }
    }
    int64_t lo, hi;
    part_range(j->rows, g_rank, &lo, &hi);
    Value loc = val_none();
    if (!failed && hi > lo) {
        if (g_rank == 0) failed = g_f->local(g_f->ctx, nin, in, &loc, e) != 0;
        else if (!g_runner) failed = br_err(e, BR_EFAIL, "no fused operator runner on rank %d", g_rank) != 0;
        else failed = g_runner(plan, (size_t)h.plen, nin, in, &loc, e) != 0;
    }
    for (int k = 0; k < nin; k++) val_release(&in[k]);
    free(in);
    free(fa);
    if (g_rank != 0) free(plan);
    int rc;
    if (h.kind == DF_MAP) rc = failed ? (agree(true, e), -1) : finish_map(j, &loc, res, e);
    else rc = agree(failed, e) ? -1 : finish_fused_reduce(&h, &loc, res, e);
    val_release(&loc);
    return rc;
}

int dist_fused(const DistFused *f, Value **args, int nin, Value *out, BrErr *e)
{
    if (!g_on || f->main < 0 || f->main >= nin || !is_mat(args[f->main])) return DIST_LOCAL;
    int64_t n = vrows(args[f->main]);
    for (int k = 0; k < nin; k++) {
        if (f->part[k] && (!is_mat(args[k]) || vrows(args[k]) != n)) return DIST_LOCAL;
        if (f->part[k] ? dist_scatter(args[k], e) : dist_collect(args[k], e)) return -1;
    }
    pthread_mutex_lock(&g_lock);
    Job j = {.type = J_FUSED, .nin = nin, .rows = n, .out = g_next_id++};
    g_f = f, g_args = args;
    int rc = start_job(&j, NULL, NULL, out, e);
    g_f = NULL, g_args = NULL;
    pthread_mutex_unlock(&g_lock);
    return rc;
}
