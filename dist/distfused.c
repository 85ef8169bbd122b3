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

/* Rank 0's job while it runs (under g_lock): its members (one, or a
 * piggybacked group of reduce operators over the same rows). */
static const DistFused *const *g_fs;
static Value **const *g_fargs;
static Value **g_fouts;

/* The workers' plan cache: every worker keeps the last PC_SLOTS plans it
 * got, so that a plan is sent once, not with every job (a loop's fused
 * operator runs one job per iteration; its plan is about 2 KB). Rank 0
 * decides the slots: it keeps the same plans (compared byte for byte,
 * their hash first), and each member's header says the slot of its plan
 * and whether the plan follows (a new plan, stored there by every worker,
 * replacing the oldest) or the workers hold it. Every worker receives
 * every job, so all caches hold the same plans. */
#define PC_SLOTS 256
static struct { uint64_t hash; char *plan; size_t len; } g_pc[PC_SLOTS];
static int g_pc_next;                   /* the slot a new plan takes */
static int g_pc_n;                      /* slots in use: PC_SLOTS, or fewer
                                           (BRAID_DIST_PLAN_SLOTS, tests) */
static int64_t g_pc_sent, g_pc_held;    /* rank 0: plans sent, found held */
static double g_plan_sent;              /* rank 0: plan bytes sent since read */
static double g_plan_total;             /* rank 0: plan bytes sent in all */
static double g_plan_priced, g_plan_full; /* rank 0: plan bytes the cost
                                           model priced for the operators
                                           placed on the ranks, and their
                                           plans' estimated sizes (what
                                           pricing every plan in full gave) */
/* g_pc on rank 0: jobs (under g_lock) change it, compiles read it
 * (dist_fused_plan_held), maybe while a job runs */
static pthread_mutex_t g_pc_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t plan_hash(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return h;
}

/* The slot holding a plan, -1 if none (under g_pc_lock). */
static int pc_find(const char *plan, size_t len)
{
    uint64_t h = plan_hash(plan, len);
    for (int s = 0; s < PC_SLOTS; s++)
        if (g_pc[s].plan && g_pc[s].hash == h && g_pc[s].len == len && !memcmp(g_pc[s].plan, plan, len)) return s;
    return -1;
}

bool dist_fused_plan_held(const char *plan, size_t len)
{
    if (!g_on || g_rank != 0 || !plan) return false;
    pthread_mutex_lock(&g_pc_lock);
    bool held = pc_find(plan, len) >= 0;
    pthread_mutex_unlock(&g_pc_lock);
    return held;
}

/* Rank 0: the placements whose jobs ran (an open-addressing set of
 * their ids, under g_pc_lock). A fused operator placed on the ranks is
 * priced once, at its compile; a recompiled block's operator is a new
 * placement. Operators placed but whose jobs never ran (run locally at
 * run time, or inside a remote parfor body) count nothing. */
static int64_t *g_places;
static size_t g_nplaces, g_capplaces;

static bool place_add(int64_t id)
{
    if (2 * (g_nplaces + 1) > g_capplaces) {
        size_t cap = g_capplaces ? 2 * g_capplaces : 64;
        int64_t *v = calloc(cap, sizeof *v);
        if (!v) return false;
        for (size_t i = 0; i < g_capplaces; i++)
            if (g_places[i])
                for (size_t j = (size_t)g_places[i] % cap;; j = (j + 1) % cap)
                    if (!v[j]) { v[j] = g_places[i]; break; }
        free(g_places);
        g_places = v, g_capplaces = cap;
    }
    for (size_t j = (size_t)id % g_capplaces;; j = (j + 1) % g_capplaces) {
        if (g_places[j] == id) return false;
        if (!g_places[j]) { g_places[j] = id; g_nplaces++; return true; }
    }
}

/* -stats: placement f's price, at its first job. */
static void place_note(const DistFused *f)
{
    if (f->place <= 0) return;
    pthread_mutex_lock(&g_pc_lock);
    if (place_add(f->place)) {
        g_plan_priced += f->price[0];
        g_plan_full += f->price[1];
    }
    pthread_mutex_unlock(&g_pc_lock);
}

/* Rank 0: the slot of a plan (*sent: it must follow, and now takes the
 * slot); -1 when out of memory (the plan follows and no slot keeps it). */
static int pc_slot_locked(const char *plan, size_t len, bool *sent)
{
    int found = pc_find(plan, len);
    if (found >= 0) {
        *sent = false;
        g_pc_held++;
        return found;
    }
    *sent = true;
    g_pc_sent++;
    g_plan_sent += (double)len;
    g_plan_total += (double)len;
    uint64_t h = plan_hash(plan, len);
    char *copy = malloc(len ? len : 1);
    if (!copy) return -1;
    memcpy(copy, plan, len);
    if (!g_pc_n) {
        const char *v = getenv("BRAID_DIST_PLAN_SLOTS");
        g_pc_n = v && atoi(v) > 0 && atoi(v) < PC_SLOTS ? atoi(v) : PC_SLOTS;
    }
    int s = g_pc_next;
    g_pc_next = (g_pc_next + 1) % g_pc_n;
    free(g_pc[s].plan);
    g_pc[s].plan = copy, g_pc[s].len = len, g_pc[s].hash = h;
    return s;
}

static int pc_slot(const char *plan, size_t len, bool *sent)
{
    pthread_mutex_lock(&g_pc_lock);
    int s = pc_slot_locked(plan, len, sent);
    pthread_mutex_unlock(&g_pc_lock);
    return s;
}

double fused_plan_bytes(void)
{
    double b = g_plan_sent;
    g_plan_sent = 0;
    return b;
}

void fused_print_stats(FILE *f)
{
    if (g_pc_sent + g_pc_held)
        fprintf(f, "  (fused operator plans: %lld sent, %lld found on the workers)\n", (long long)g_pc_sent,
                (long long)g_pc_held);
    if (g_pc_sent + g_pc_held || g_plan_priced > 0)
        fprintf(f, "  (fused operator plan bytes: %.0f sent, %.0f priced by the fusion cost model, %.0f in full)\n",
                g_plan_total, g_plan_priced, g_plan_full);
}

void fused_reset(void)
{
    pthread_mutex_lock(&g_pc_lock);
    for (int s = 0; s < PC_SLOTS; s++) {
        free(g_pc[s].plan);
        g_pc[s].plan = NULL, g_pc[s].len = 0, g_pc[s].hash = 0;
    }
    g_pc_next = 0;
    g_pc_sent = g_pc_held = 0;
    g_plan_sent = g_plan_total = g_plan_priced = g_plan_full = 0;
    free(g_places);
    g_places = NULL, g_nplaces = g_capplaces = 0;
    pthread_mutex_unlock(&g_pc_lock);
}

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

/* The combine operator of entry i of a member's flattened result. */
static int entry_red(const FHead *h, const int64_t sh[3], size_t i)
{
    return h->red[sh[0] == F_LIST && (int)i < h->nout ? i : 0];
}

/* The local result as n doubles (the identities where this rank has
 * none); output k of a list combines by red[k], everything else by
 * red[0]. */
static double *flatten(const FHead *h, const int64_t sh[3], const Value *loc, size_t *n)
{
    *n = sh[0] == F_MATRIX ? (size_t)(sh[1] * sh[2]) : sh[0] == F_LIST ? (size_t)sh[1] : 1;
    double *buf = must_alloc(*n * sizeof *buf);
    for (size_t i = 0; i < *n; i++) buf[i] = red_ident(entry_red(h, sh, i));
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

/* Rank 0: the reduced partials in the local operator's form. */
static int reduced_value(const int64_t sh[3], const double *buf, Value *res, BrErr *e)
{
    if (sh[0] == F_SCALAR) { *res = val_double(buf[0]); return 0; }
    if (sh[0] == F_LIST) {
        Value l = val_list_new((int)sh[1]);
        if (l.kind != V_LIST) { br_err(e, BR_ENOMEM, "out of memory"); return -1; }
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

/* Every rank: member m's plan and operands, its operator on this rank's
 * rows [lo, hi) into *loc. false on failure (e set). */
static bool run_member(int m, const FHead *h, int64_t lo, int64_t hi, Value *loc, BrErr *e)
{
    int nin = h->nin;
    /* the plan: rank 0's own, or sent (a worker keeps it in its slot), or
     * the one the worker holds there */
    const char *plan = g_rank == 0 ? g_fs[m]->plan : NULL;
    if (g_rank != 0 && !h->sent) plan = h->slot >= 0 && h->slot < PC_SLOTS ? g_pc[h->slot].plan : NULL;
    if (h->sent) {
        char *got = g_rank == 0 ? g_fs[m]->plan : must_alloc((size_t)h->plen);
        bcast_bytes(got, (size_t)h->plen);
        if (g_rank != 0) {
            plan = got;
            if (h->slot >= 0 && h->slot < PC_SLOTS) {
                free(g_pc[h->slot].plan);
                g_pc[h->slot].plan = got, g_pc[h->slot].len = (size_t)h->plen;
            }
        }
    }
    FArg *fa = must_alloc((size_t)nin * sizeof *fa);
    if (g_rank == 0)
        for (int k = 0; k < nin; k++) {
            const Value *a = g_fargs[m][k];
            fa[k] = a->kind == V_DIST ? (FArg){A_DIST, 0, a->dm->id} : (FArg){A_BCAST, 0, 0};
        }
    bcast_bytes(fa, (size_t)nin * sizeof *fa);
    Value *in = must_alloc((size_t)nin * sizeof *in);
    bool failed = false;
    for (int k = 0; k < nin; k++) {
        in[k] = val_none();
        if (fa[k].kind == A_DIST) {
            MB *x = part_get(fa[k].id);
            if (x) in[k] = val_matrix(mb_retain(x));
        } else {
            if (g_rank == 0) in[k] = val_retain(*g_fargs[m][k]);
            if (bcast_value(&in[k], e)) failed = true;
        }
    }
    *loc = val_none();
    if (!failed && hi > lo) {
        if (g_rank == 0) failed = g_fs[m]->local(g_fs[m]->ctx, nin, in, loc, e) != 0;
        else if (!g_runner) failed = br_err(e, BR_EFAIL, "no fused operator runner on rank %d", g_rank) != 0;
        else if (!plan) failed = br_err(e, BR_EFAIL, "rank %d does not hold the operator plan of slot %d", g_rank, h->slot) != 0;
        else failed = g_runner(plan, (size_t)h->plen, nin, in, loc, e) != 0;
    }
    for (int k = 0; k < nin; k++) val_release(&in[k]);
    free(in);
    free(fa);
    /* a sent plan that no slot keeps */
    if (g_rank != 0 && h->sent && (h->slot < 0 || h->slot >= PC_SLOTS)) free((char *)plan);
    return !failed;
}

/* Every rank: n fused members (headers from rank 0's g_fs) over this
 * rank's rows of an n-row partitioning; *failed set when one failed. */
void fpart_run(FusedPart *p, int n, int64_t rows, bool *failed, BrErr *e)
{
    *p = (FusedPart){.n = n};
    p->h = must_alloc((size_t)n * sizeof *p->h);
    if (g_rank == 0)
        for (int m = 0; m < n; m++) {
            const DistFused *f = g_fs[m];
            bool sent = true;
            place_note(f);
            int slot = pc_slot(f->plan, f->plen, &sent);
            p->h[m] = (FHead){.plen = (int64_t)f->plen, .kind = f->kind, .nout = f->nout, .nin = f->nin,
                              .slot = slot, .sent = sent};
            memcpy(p->h[m].red, f->red, sizeof p->h[m].red);
        }
    bcast_bytes(p->h, (size_t)n * sizeof *p->h);
    int64_t lo, hi;
    part_range(rows, g_rank, &lo, &hi);
    p->loc = must_alloc((size_t)n * sizeof *p->loc);
    for (int m = 0; m < n; m++)
        if (!run_member(m, &p->h[m], lo, hi, &p->loc[m], e)) *failed = true;
}

/* Every rank, after the agreement: the members' result shapes agreed
 * (one all-reduce) and each local result flattened (identities where
 * this rank has none). */
int fpart_flatten(FusedPart *p, BrErr *e)
{
    int n = p->n;
    int64_t *mine = must_alloc((size_t)n * 3 * sizeof *mine);
    p->sh = must_alloc((size_t)n * 3 * sizeof *p->sh);
    for (int m = 0; m < n; m++) form_of(&p->loc[m], &mine[3 * m]);
    MPI_Allreduce(mine, p->sh, 3 * n, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    free(mine);
    int rc = 0;
    for (int m = 0; m < n; m++)
        if (p->sh[3 * m] == F_NONE) rc = g_rank == 0 ? br_err(e, BR_EFAIL, "a distributed fused operator gave no value") : -1;
    p->buf = must_alloc((size_t)n * sizeof *p->buf);
    p->len = must_alloc((size_t)n * sizeof *p->len);
    for (int m = 0; m < n; m++) {
        p->buf[m] = NULL, p->len[m] = 0;
        if (!rc) p->buf[m] = flatten(&p->h[m], &p->sh[3 * m], &p->loc[m], &p->len[m]);
    }
    return rc;
}

MPI_Op fpart_op(const FusedPart *p, int m, size_t i) { return red_op(entry_red(&p->h[m], &p->sh[3 * m], i)); }

/* Every rank: rank 0's results into outs (skipped when !ok); frees p. */
int fpart_finish(FusedPart *p, bool ok, Value **outs, BrErr *e)
{
    int rc = 0;
    for (int m = 0; m < p->n; m++) {
        if (ok && !rc && g_rank == 0 && reduced_value(&p->sh[3 * m], p->buf[m], outs[m], e)) rc = -1;
        if (p->buf) free(p->buf[m]);
        val_release(&p->loc[m]);
    }
    free(p->buf), free(p->len), free(p->sh), free(p->loc), free(p->h);
    *p = (FusedPart){0};
    return rc;
}

/* Every rank: the partials of all members reduced to rank 0, one
 * reduction per combine operator over every member's entries that
 * combine by it (piggybacking: one round of messages for the group). */
static void reduce_all(FusedPart *p)
{
    size_t tot = 0;
    for (int m = 0; m < p->n; m++) tot += p->len[m];
    double *tmp = must_alloc(tot * sizeof *tmp);
    for (int red = DF_SUM; red <= DF_MAX; red++) {
        size_t k = 0;
        for (int m = 0; m < p->n; m++)
            for (size_t i = 0; i < p->len[m]; i++)
                if (entry_red(&p->h[m], &p->sh[3 * m], i) == red) tmp[k++] = p->buf[m][i];
        if (!k) continue;
        reduce_to_0(tmp, k, red_op(red));
        k = 0;
        for (int m = 0; m < p->n; m++)
            for (size_t i = 0; i < p->len[m]; i++)
                if (entry_red(&p->h[m], &p->sh[3 * m], i) == red) p->buf[m][i] = tmp[k++];
    }
    free(tmp);
}

/* Every rank: the job's members (j->op of them; a group holds reduce
 * operators only) over this rank's rows, one agreement, then the map's
 * partitions kept or all members' partials reduced together. */
int run_fused(const Job *j, Value *res, BrErr *e)
{
    FusedPart p;
    bool failed = false;
    fpart_run(&p, j->op, j->rows, &failed, e);
    int rc;
    if (p.h[0].kind == DF_MAP) {
        rc = failed ? (agree(true, e), -1) : finish_map(j, &p.loc[0], res, e);
        fpart_finish(&p, false, NULL, e);
        return rc;
    }
    rc = agree(failed, e) ? -1 : fpart_flatten(&p, e);
    if (!rc) reduce_all(&p);
    int frc = fpart_finish(&p, !rc, g_fouts, e);
    return rc ? rc : frc;
}

/* Rank 0: member f's operands partitioned or broadcast as it says. */
static int place_args(const DistFused *f, Value **args, int64_t *rows, BrErr *e)
{
    if (f->main < 0 || f->main >= f->nin || !is_mat(args[f->main])) return DIST_LOCAL;
    int64_t n = vrows(args[f->main]);
    for (int k = 0; k < f->nin; k++)
        if (f->part[k] && (!is_mat(args[k]) || vrows(args[k]) != n)) return DIST_LOCAL;
    for (int k = 0; k < f->nin; k++)
        if (f->part[k] ? dist_scatter(args[k], e) : dist_collect(args[k], e)) return -1;
    *rows = n;
    return 0;
}

int fused_place(const DistFused *f, Value **args, int64_t *rows, BrErr *e) { return place_args(f, args, rows, e); }

void fused_members(const DistFused *const *fs, Value **const *args, Value **outs)
{
    g_fs = fs, g_fargs = args, g_fouts = outs;
}

double fused_volume(const DistFused *const *fs, Value **const *args, Value **outs, int n, double plan)
{
    double b = 0, r = 0;
    int nval = 0, nin = 0;
    for (int m = 0; m < n; m++) {
        nin += fs[m]->nin;
        for (int k = 0; k < fs[m]->nin; k++) {
            if (fs[m]->part[k]) continue;
            nval++;
            if (is_mat(args[m][k]))
                b += dist_wire_bytes(vrows(args[m][k]), vcols(args[m][k]), args[m][k]->kind == V_MATRIX ? args[m][k]->m->nnz : -1);
        }
        if (fs[m]->kind == DF_REDUCE && outs[m])
            r += outs[m]->kind != V_NONE ? partial_bytes(outs[m]) : 0;
    }
    return dist_volume(dist_ctrl_bytes(0, nval, n, nin, plan), b, r);
}

int dist_fused_group(const DistFused *const *fs, Value **const *args, Value **outs, int n, BrErr *e)
{
    if (!g_on || n < 1) return DIST_LOCAL;
    int64_t rows = -1;
    for (int m = 0; m < n; m++) {
        int64_t r = 0;
        int rc = place_args(fs[m], args[m], &r, e);
        if (rc) return rc;
        /* a group: reduce operators over the same rows */
        if (m > 0 && (r != rows || fs[m]->kind != DF_REDUCE || fs[0]->kind != DF_REDUCE)) return DIST_LOCAL;
        rows = r;
    }
    pthread_mutex_lock(&g_lock);
    Job j = {.type = J_FUSED, .op = n, .rows = rows, .out = g_next_id++};
    g_fs = fs, g_fargs = args, g_fouts = outs;
    (void)fused_plan_bytes();
    int rc = start_job(&j, NULL, NULL, outs[0], e);
    /* the job's header, then its members' */
    if (!rc) stat_predict(J_FUSED, dist_volume(dist_ctrl_bytes(1, 0, 0, 0, 0), 0, 0) + fused_volume(fs, args, outs, n, fused_plan_bytes()));
    if (n > 1) g_piggy_fused += n;
    g_fs = NULL, g_fargs = NULL, g_fouts = NULL;
    pthread_mutex_unlock(&g_lock);
    return rc;
}

int dist_fused(const DistFused *f, Value **args, int nin, Value *out, BrErr *e)
{
    if (nin != f->nin) return DIST_LOCAL;
    const DistFused *fs[1] = {f};
    Value **as[1] = {args};
    Value *outs[1] = {out};
    return dist_fused_group(fs, as, outs, 1, e);
}
