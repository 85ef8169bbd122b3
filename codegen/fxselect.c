/* fxselect.c: FusionStitching's explorer (gpu/explore.c, seed 001
 * section 5) as a second plan selector of codegen, next to MPSkipEnum
 * (sysds.codegen.optimizer = fusion_stitching; docs/gpu.md "The explorer
 * as a plan selector").
 *
 * Per plan partition the partition's hops become the explorer's operator
 * graph: aggregates are reductions (fusable with their consumers by
 * stitching), elementwise operators are light or expensive by the
 * operator table's cost, the products a stitching scheme holds (skinny,
 * dot and outer products: fx_kind) reductions or expensive elementwise
 * work, everything else (gemm-class products, reorganizations,
 * builtins) is opaque, never fused; a vertex is an output when it is a
 * root of the partition or read outside it. The explorer's plan (kernels
 * as groups of vertices) becomes an assignment of the partition's
 * interesting points: a point (consumer c, producer h) stays fused when c
 * and h are in one kernel, else it is materialized; the memo is then
 * pruned as MPSkipEnum's assignment prunes it, and codegen's templates
 * form the operators. Opaque vertices never share a kernel: the seed's
 * explorer does not fuse library calls.
 *
 * cg_fx_compare runs both selectors on every partition of a DAG and
 * reports each one's plan cost under both cost models (codegen's
 * getPlanCost and the explorer's latency estimate) and its optimization
 * time. */
#include "cgint.h"
#include "../base/vec.h"
#include "../gpu/explore.h"
#include "../gpu/gpu.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The explorer's kind of hop h. Products that a stitching scheme holds
 * are not opaque: a skinny X %*% V (the Row template's product) is a
 * reduction along each row of X against V, which every segment reads
 * whole (the row's lanes multiply their slice and reduce, as a row sum
 * of X * t(v)); t(x) %*% y over vectors is a full reduction; an
 * outer-product-like U %*% t(V) computes each cell of its space from a
 * row of U and a row of V (elementwise over the cells, rank r of work
 * each: expensive). Other products are library calls (gemm), never
 * fused, as in the seed. */
static FKind fx_kind(const Hop *h)
{
    if (h->kind == H_AGG) return FK_REDUCE;
    if (h->kind == H_MATMUL && (tpl_row_mm(h) || tpl_dot(h))) return FK_REDUCE;
    if (h->kind == H_MATMUL && tpl_outer_mm(h)) return FK_EXPENSIVE;
    if ((h->kind == H_UNARY || h->kind == H_BINARY || h->kind == H_TERNARY) && op_info[h->op].cgen &&
        !hop_lazy_ifelse(h))
        return op_info[h->op].cost > 2 ? FK_EXPENSIVE : FK_LIGHT;
    return FK_OPAQUE;
}

static double out_bytes(const Hop *h)
{
    if (h->dt != DT_MATRIX) return 8;
    if (h->mem > 0) return h->mem;
    return h->rows > 0 && h->cols > 0 ? 8.0 * (double)h->rows * (double)h->cols : 8;
}

/* Is hop id the vector of one of p's stitch points? */
static bool stitch_target(const Part *p, int id)
{
    for (int t = 0; t < p->npts; t++) if (p->pts[t].stitch && p->pts[t].h == id) return true;
    return false;
}

/* The graph of partition p: vertices in the memo's topological order;
 * loc (by hop id) gets each member's vertex, -1 for others. The vector
 * of a stitch point (docs/codegen.md, "CPU stitching") is a vertex too:
 * a reduction (its column aggregates) without producers in the graph,
 * so the explorer stitches it into its consumer's kernel or not, and
 * the latency evaluator prices that (a launch and the vector's write
 * and read saved, against X's passes, FNode.src: once more for each
 * consumer that takes it in, so a vector read by two operators is
 * computed twice when stitched into both). */
static int build_graph(const Memo *m, const Part *p, FGraph *g, int *loc)
{
    g->n = 0;
    g->v = br_calloc((size_t)BR_MAX(p->nh + p->npts, 1), sizeof *g->v);
    if (!g->v) return -1;
    for (int i = 0; i < m->nid; i++) loc[i] = -1;
    for (int k = 0; k < m->norder; k++) {
        const Hop *h = m->order[k];
        bool st = !p->in[h->id] && stitch_target(p, h->id);
        if (!p->in[h->id] && !st) continue;
        loc[h->id] = g->n;
        FNode *v = &g->v[g->n++];
        v->kind = st ? FK_REDUCE : fx_kind(h);
        v->bytes = out_bytes(h);
        for (int i = 0; i < h->nin; i++)
            if (h->in[i] && loc[h->in[i]->id] >= 0 && v->nin < FX_MAX_IN) v->in[v->nin++] = loc[h->in[i]->id];
        /* read outside: a root of the partition or of the DAG */
        v->output = m->out[h->id] != 0;
        if (st) {
            /* its column aggregates' passes over X */
            Hop *X = NULL, *hs[SPOOF_PREMAX];
            SpPre e = {0};
            int nh = 0;
            if (cg_pre_build((Hop *)h, &X, &e, hs, &nh) >= 0 && X) v->src = cg_pre_passes(hs, nh) * out_bytes(X);
        }
    }
    for (int r = 0; r < p->nroots; r++)
        if (loc[p->roots[r]] >= 0) g->v[loc[p->roots[r]]].output = true;
    /* a member read by a hop outside the partition */
    for (int k = 0; k < m->norder; k++) {
        const Hop *h = m->order[k];
        if (p->in[h->id]) continue;
        for (int i = 0; i < h->nin; i++)
            if (h->in[i] && loc[h->in[i]->id] >= 0) g->v[loc[h->in[i]->id]].output = true;
    }
    return 0;
}

/* The assignment of the explorer's plan: materialized unless consumer
 * and producer share a kernel (a stitch point: stitched when the vector
 * shares its consumer's kernel). */
static void plan_cut(const Part *p, const int *loc, const FPlan *pl, bool *cut)
{
    for (int t = 0; t < p->npts; t++) {
        int c = loc[p->pts[t].c], h = loc[p->pts[t].h];
        cut[t] = c < 0 || h < 0 || pl->kernel[c] != pl->kernel[h];
    }
}

/* The kernels codegen builds from an assignment, for the explorer's
 * latency model: a consumer and its input share a kernel when a memo
 * entry at the consumer fuses that input and no materialized point
 * separates them (union-find; what the fuse-all pass then picks). */
static int find(int *up, int i) { while (up[i] != i) i = up[i] = up[up[i]]; return i; }

static bool is_cut(const Part *p, const bool *cut, int c, int h)
{
    for (int t = 0; t < p->npts; t++) if (cut[t] && p->pts[t].c == c && p->pts[t].h == h) return true;
    return false;
}

static void cut_plan(const Memo *m, const FGraph *g, const Part *p, const int *loc, const bool *cut, FPlan *pl)
{
    int *up = pl->kernel;
    for (int i = 0; i < g->n; i++) up[i] = i;
    for (int k = 0; k < p->nh; k++) {
        int c = p->hops[k];
        const MGroup *mg = m->g[c];
        for (int e = 0; mg && e < mg->n; e++)
            for (int i = 0; i < mg->e[e].nin; i++) {
                int h = mg->e[e].ref[i];
                if (h >= 0 && loc[h] >= 0 && loc[c] >= 0 && !is_cut(p, cut, c, h)) up[find(up, loc[c])] = find(up, loc[h]);
            }
    }
    /* a stitched vector runs in its consumer's kernel */
    for (int t = 0; t < p->npts; t++)
        if (p->pts[t].stitch && !cut[t] && loc[p->pts[t].c] >= 0 && loc[p->pts[t].h] >= 0)
            up[find(up, loc[p->pts[t].c])] = find(up, loc[p->pts[t].h]);
    for (int i = 0; i < g->n; i++) up[i] = find(up, i);
    /* kernel ids 0..nkernels-1 */
    int *id = br_malloc((size_t)BR_MAX(g->n, 1) * sizeof(int));
    pl->nkernels = 0;
    if (!id) return;
    for (int i = 0; i < g->n; i++) id[i] = -1;
    for (int i = 0; i < g->n; i++) {
        if (id[up[i]] < 0) id[up[i]] = pl->nkernels++;
        up[i] = id[up[i]];
    }
    free(id);
}

/* Stitch vertices the explorer left alone (its patterns grow from one
 * producer down, so two vectors read by one consumer are not both taken
 * in): each joins the kernel of its consumers when they share one and
 * the latency evaluator says the plan gets faster (it has no producers,
 * so no cycle can form). */
static void absorb_stitched(const Part *p, const int *loc, const FGraph *g, FPlan *pl)
{
    for (int t = 0; t < p->npts; t++) {
        if (!p->pts[t].stitch) continue;
        int u = loc[p->pts[t].h], k = -1, alone = 0;
        bool one = u >= 0;
        for (int w = 0; w < g->n && one; w++) {
            for (int j = 0; j < g->v[w].nin && one; j++)
                if (g->v[w].in[j] == u) {
                    one = k < 0 || pl->kernel[w] == k;
                    k = pl->kernel[w];
                }
            alone += pl->kernel[w] == (u >= 0 ? pl->kernel[u] : -1);
        }
        if (!one || k < 0 || k == pl->kernel[u] || alone != 1) continue;
        double before = fx_latency(g, pl);
        int old = pl->kernel[u];
        pl->kernel[u] = k;
        pl->nkernels--;
        if (fx_latency(g, pl) < before) {
            /* ids stay 0..nkernels-1: the last id takes the freed one */
            for (int w = 0; w < g->n; w++) if (pl->kernel[w] == pl->nkernels) pl->kernel[w] = old;
        } else {
            pl->kernel[u] = old;
            pl->nkernels++;
        }
    }
}

/* Stitch vertices the explorer took into a kernel whose passes over X
 * (FNode.src) cost more there than alone: each moves to a kernel of its
 * own when the latency evaluator says the plan gets faster and the plan
 * stays valid (a vertex without producers closes no cycle; its old
 * kernel must stay connected). */
static void detach_stitched(const Part *p, const int *loc, const FGraph *g, FPlan *pl)
{
    for (int t = 0; t < p->npts; t++) {
        int u = loc[p->pts[t].h];
        if (!p->pts[t].stitch || u < 0 || g->v[u].src <= 0) continue;
        int old = pl->kernel[u], n = 0;
        for (int w = 0; w < g->n; w++) n += pl->kernel[w] == old;
        if (n < 2) continue;
        double before = fx_latency(g, pl);
        pl->kernel[u] = pl->nkernels++;
        if (!(fx_latency(g, pl) < before) || !fx_valid(g, pl)) {
            pl->kernel[u] = old;
            pl->nkernels--;
        }
    }
}

/* The evaluators' constants of g (FGraph.bw, launch_s): a plan the
 * device runs (the backend on) by the device profile (gpu_profile: its
 * read bandwidth and pipelined launch), a CPU plan by the machine
 * file's read bandwidth (mc; NULL: the explorer's defaults) and the
 * explorer's launch constant (the machine file has none). */
static void fx_constants(FGraph *g, const CgMachine *mc)
{
    if (gpu_mode() != GPU_OFF) {
        GpuProfile gp = gpu_profile();
        g->bw = gp.bw, g->launch_s = gp.launch_s;
    } else {
        g->bw = mc ? mc->read_bw : 0, g->launch_s = 0;
    }
}

/* The explorer's assignment of partition p into cut (npts entries): 0,
 * or -1 without memory. */
static int fx_assign(const Memo *m, const Part *p, const CgMachine *mc, bool *cut, FGraph *g, int *loc, FPlan *pl)
{
    if (build_graph(m, p, g, loc)) return -1;
    fx_constants(g, mc);
    if (fx_explore(g, 3, 3, pl)) return -1;
    absorb_stitched(p, loc, g, pl);
    detach_stitched(p, loc, g, pl);
    plan_cut(p, loc, pl, cut);
    return 0;
}

void cg_select_fx(Memo *m, const CgMachine *mc, EnumStats *es)
{
    int np = 0;
    Part *ps = cg_partitions(m, &np);
    if (!ps) return;
    es->partitions += np;
    int *loc = br_malloc((size_t)m->nid * sizeof(int));
    for (int q = 0; loc && q < np; q++) {
        Part *p = &ps[q];
        if (!p->in || !p->npts) continue;
        es->points += p->npts;
        bool *cut = br_calloc((size_t)p->npts, sizeof(bool));
        FGraph g = {0};
        FPlan pl = {0};
        if (cut && !fx_assign(m, p, mc, cut, &g, loc, &pl)) {
            cg_apply_cut(m, p, cut, NULL);
            es->evaluated++;
        }
        fplan_free(&pl);
        free(g.v);
        free(cut);
    }
    free(loc);
    parts_free(ps, np);
}

int cg_fx_compare(HopDag *d, CgFxFn f, void *arg)
{
    Memo *m = memo_new(d);
    if (!m) return -1;
    cg_explore(m);
    CgMachine mc = {0};
    cg_machine(NULL, NULL, &mc);
    int np = 0, done = 0;
    Part *ps = cg_partitions(m, &np);
    int *loc = ps ? br_malloc((size_t)m->nid * sizeof(int)) : NULL;
    if (!loc) done = -1;
    for (int q = 0; done >= 0 && q < np; q++) {
        Part *p = &ps[q];
        if (!p->in) continue;
        EnumStats es = {0};
        CostCtx x;
        if (cost_init(&x, m, &mc, p, &es)) { done = -1; break; }
        bool *mp = br_calloc((size_t)BR_MAX(p->npts, 1), sizeof(bool)),
             *fx = br_calloc((size_t)BR_MAX(p->npts, 1), sizeof(bool));
        FGraph g = {0};
        FPlan pl = {0}, mpl = {0}, fpl = {0};
        CgFxResult r = {.npts = p->npts, .nhops = p->nh};
        int64_t t0 = br_now_ns();
        bool ok = mp && fx && cg_mpskip_assign(&x, mp, &es) < INFINITY;
        r.mpskip_ns = br_now_ns() - t0;
        t0 = br_now_ns();
        ok = ok && !fx_assign(m, p, &mc, fx, &g, loc, &pl);
        r.fx_ns = br_now_ns() - t0;
        mpl.kernel = ok ? br_malloc((size_t)BR_MAX(g.n, 1) * sizeof(int)) : NULL;
        fpl.kernel = ok ? br_malloc((size_t)BR_MAX(g.n, 1) * sizeof(int)) : NULL;
        if (ok && mpl.kernel && fpl.kernel) {
            cut_plan(m, &g, p, loc, mp, &mpl);
            cut_plan(m, &g, p, loc, fx, &fpl);
            r.mpskip_cost = cg_plan_cost(&x, mp, INFINITY);
            r.fx_cost = cg_plan_cost(&x, fx, INFINITY);
            r.mpskip_latency = fx_latency(&g, &mpl);
            r.fx_latency = fx_latency(&g, &fpl);
            r.fx_own_latency = fx_latency(&g, &pl);
            r.mpskip_kernels = mpl.nkernels;
            r.fx_kernels = fpl.nkernels;
            r.fx_own_kernels = pl.nkernels;
            r.fx_valid = fx_valid(&g, &pl);
            for (int t = 0; t < p->npts; t++) { r.mpskip_cut += mp[t]; r.fx_cut += fx[t]; }
            f(arg, &r);
            done++;
        } else {
            done = -1;
        }
        fplan_free(&pl);
        fplan_free(&mpl);
        fplan_free(&fpl);
        free(g.v);
        free(mp);
        free(fx);
        cost_free(&x);
    }
    free(loc);
    if (ps) parts_free(ps, np);
    memo_free(m);
    return done;
}

/* BRAID_FX_COMPARE=path: every DAG codegen optimizes is first compared
 * under both selectors (cg_fx_compare), one tab-separated line per plan
 * partition appended to path (tools/fx_table.py reads them). So the
 * explorer runs over the DAGs of whole scripts (the algorithm builtins
 * of tests/dml's alg_* cases: run_all.sh), and an invalid plan of it is
 * seen there. The lines of one DAG are written under a lock, each with
 * one write to an O_APPEND file, so parallel processes do not mix them. */
static pthread_mutex_t fx_log_lock = PTHREAD_MUTEX_INITIALIZER;

static void fx_log_row(void *arg, const CgFxResult *r)
{
    FILE *f = arg;
    char line[512];
    int n = snprintf(line, sizeof line, "fx\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\t%.3f\t%.3f\n",
                     r->nhops, r->npts, r->fx_valid, r->mpskip_kernels, r->fx_kernels, r->fx_own_kernels,
                     r->mpskip_cut, r->fx_cut, r->mpskip_cost * 1e6, r->fx_cost * 1e6, r->mpskip_latency * 1e6,
                     r->fx_latency * 1e6, r->fx_own_latency * 1e6, (double)r->mpskip_ns / 1e3, (double)r->fx_ns / 1e3);
    if (n > 0 && n < (int)sizeof line) {
        fputs(line, f);
        fflush(f);
    }
}

void cg_fx_log(HopDag *d)
{
    const char *path = getenv("BRAID_FX_COMPARE");
    if (!path || !*path) return;
    pthread_mutex_lock(&fx_log_lock);
    FILE *f = fopen(path, "a");
    if (f) {
        setvbuf(f, NULL, _IOLBF, 0);
        if (cg_fx_compare(d, fx_log_row, f) < 0) fputs("fx-oom\n", f);
        fclose(f);
    }
    pthread_mutex_unlock(&fx_log_lock);
}
