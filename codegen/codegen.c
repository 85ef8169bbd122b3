/* codegen.c: entry points of operator fusion (seed 000, section 2.1).
 * cg_optimize_dag runs the five steps on one HOP DAG with known sizes:
 * candidate exploration (memo table), candidate selection (policy),
 * CPlan construction, code generation and compilation (plan cache), and
 * the replacement of covered HOPs by fused operators (H_SPOOF hops; for
 * multi-aggregates one H_SPOOF producing a list read by H_OUT hops). The
 * unfused HOPs a fused operator covers stay in the DAG for its other
 * consumers; DAGs whose sizes are unknown are left alone, since dynamic
 * recompilation fuses their copy with the real sizes. */
#include "cgint.h"
#include "../kernels/cla.h"
#include "../matrix/cmb.h"
#include "../gpu/gpu.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

CgContext *cg_context_new(const CgOptions *o)
{
    CgContext *c = br_calloc(1, sizeof *c);
    if (!c) return NULL;
    c->opt = *o;
    const char *as = getenv("BRAID_CODEGEN_ASYNC");
    /* schedule perturbation: kernels compile before use, and
     * cg_op_exec draws when each becomes "ready" (perturb.h); with
     * BRAID_CODEGEN_ASYNC=1 set too, real background compiles race as
     * well (more cases, but no exact replay) */
    if (br_perturb_on()) c->opt.async = false;
    if (as && *as) c->opt.async = strcmp(as, "0") != 0;
    c->stopfd = -1;
    pthread_mutex_init(&c->lock, NULL);
    pthread_mutex_init(&c->jitlock, NULL);
    pthread_cond_init(&c->async_done, NULL);
    return c;
}

void cg_context_free(CgContext *c)
{
    if (!c) return;
    /* background compiles read the operators: stop them starting new
     * compiles and wait for the running ones */
    jit_stop(c);
    pthread_mutex_lock(&c->lock);
    while (c->nasync > 0) pthread_cond_wait(&c->async_done, &c->lock);
    pthread_mutex_unlock(&c->lock);
    for (int i = 0; i < c->nops; i++) {
        CgOp *op = c->ops[i];
        if (op->dl) dlclose(op->dl);
        cplan_free(op->plan);
        free(op->src);
        free(op->clsrc);
        free(op->am_key);
        free(op);
    }
    free(c->ops);
    free(c->am_loops);
    arena_free(c->am_arena);
    mb_release(c->am_spsrc);
    mb_release(c->am_sptr);
    selcache_free(c->selc);
    cache_dir_cleanup(c);
    if (c->stopfd >= 0) close(c->stopfd);
    pthread_mutex_destroy(&c->lock);
    pthread_mutex_destroy(&c->jitlock);
    pthread_cond_destroy(&c->async_done);
    free(c);
}

const CgStats *cg_stats(const CgContext *c) { return &c->st; }

static int tpl_index(TplType t)
{
    switch (t) {
    case T_CELL: return 0;
    case T_ROW: return 1;
    case T_MAGG: return 2;
    default: return 3;
    }
}

/* Replaces the covered root(s) of f by the fused operator op reading ins. */
static void replace(HopDag *d, const FusedOp *f, CgOp *op, Hop **ins, int nin, int64_t place, const double price[2])
{
    Hop **in = arena_alloc(d->arena, (size_t)BR_MAX(nin, 1) * sizeof(Hop *));
    if (!in) return;
    memcpy(in, ins, (size_t)nin * sizeof(Hop *));
    if (f->nroots > 1) {    /* MAgg, multi-output Row: a list */
        Hop *s = hop_new(d, H_SPOOF, f->roots[0]->span, 0);
        if (!s) return;
        s->in = in;
        s->nin = nin;
        s->spoof = op;
        s->plan_place = place;
        s->plan_price[0] = price[0], s->plan_price[1] = price[1];
        s->name = op->name;
        s->dt = DT_LIST;
        s->nouts = f->nroots;
        hop_infer(s);
        for (int r = 0; r < f->nroots; r++) {
            Hop *h = f->roots[r];
            Hop **one = arena_alloc(d->arena, sizeof(Hop *));
            if (!one) return;
            one[0] = s;
            h->kind = H_OUT;
            h->in = one;
            h->nin = 1;
            h->out_index = r;
            hop_infer(h);
        }
        return;
    }
    Hop *h = f->root;
    h->kind = H_SPOOF;
    h->in = in;
    h->nin = nin;
    h->spoof = op;
    h->plan_place = place;
    h->plan_price[0] = price[0], h->plan_price[1] = price[1];
    h->name = op->name;
    hop_infer(h);
}

/* Prints the fused operators of one optimized DAG (-explain codegen). */
static void explain(CgContext *c, const HopDag *d, CgOp **ops, const Selection *s, FILE *f, const EnumStats *es)
{
    int line = d->nroots ? d->roots[0]->span.line : 0;
    fprintf(f, "CODEGEN DAG (line %d): %d fused operator%s", line, s->nops, s->nops == 1 ? "" : "s");
    int ns = cg_stitch_count(d);
    if (ns) fprintf(f, ", %d stitched region%s", ns, ns == 1 ? "" : "s");
    if (es->partitions) fprintf(f, ", %lld partitions, %lld interesting points, %lld/%lld plans enumerated/evaluated"
                                ", %lld selections cached",
                                (long long)es->partitions, (long long)es->points, (long long)es->enumerated,
                                (long long)es->evaluated, (long long)es->cached);
    fprintf(f, "\n");
    for (int i = 0; i < s->nops; i++) {
        CgOp *op = ops[i];
        if (s->ops[i].type == T_AMULET) continue;   /* printed as it was placed */
        if (!op) { fprintf(f, " (no valid CPlan for hop %d)\n", s->ops[i].root->id); continue; }
        fprintf(f, " %s at hop %d%s\n", op->name, s->ops[i].root->id,
                op->ready == 1 ? "" : op->ready < 0 ? " (compilation failed: unfused)"
                : op->lazy ? " (compiled on its first CPU call)" : " (pending)");
        cplan_print(op->plan, f);
        const char *body = strstr(op->src, "\nconst unsigned long long cg_hash");
        fprintf(f, "  generated C (after the shared prelude):%s\n", body ? body : op->src);
    }
    cg_stitch_explain(d, f);
    (void)c;
}

/* -explain codegen of a DAG codegen fused nothing in: its stitched
 * regions (-gpu: the pass took their operators first), if it has any */
static void explain_unfused(CgContext *c, const HopDag *d)
{
    int ns = c->opt.explain ? cg_stitch_count(d) : 0;
    if (!ns) return;
    pthread_mutex_lock(&c->lock);
    fprintf(c->opt.explain, "CODEGEN DAG (line %d): 0 fused operators, %d stitched region%s\n",
            d->nroots ? d->roots[0]->span.line : 0, ns, ns == 1 ? "" : "s");
    cg_stitch_explain(d, c->opt.explain);
    pthread_mutex_unlock(&c->lock);
}

/* Asynchronous mode compiles in the background only the operators of
 * DAGs over small inputs: with an input of ASYNC_MAX_CELLS cells or more
 * the compile (0.1-0.5 s) is small next to the work, and the unfused
 * plan's intermediates would cost memory, so such a batch compiles
 * synchronously and runs fused from its first execution. */
#define ASYNC_MAX_CELLS 4194304.0   /* 2^22 cells: 32 MB dense */

void cg_machine_ctx(CgContext *c, CgMachine *mc)
{
    pthread_mutex_lock(&c->lock);
    if (!c->have_mc) {
        cache_dir_init(c);
        cg_machine(c->disk_ok ? c->cachedir : NULL, c->have_prebuilt ? c->prebuilt : NULL, &c->mc);
        c->have_mc = true;
    }
    *mc = c->mc;
    pthread_mutex_unlock(&c->lock);
}

/* Can the planner place AMULET loops (docs/amulet.md): the template is
 * on (BRAID_AMULET_FUSE) and a C compiler is there (without one the
 * loop would run in the evaluator)? */
static bool amulet_ok(CgContext *c)
{
    if (!strcmp(am_tpl_mode(), "0") || c->opt.interpret) return false;
    pthread_mutex_lock(&c->lock);
    bool cc = jit_prepare(c) == 0;
    pthread_mutex_unlock(&c->lock);
    return cc;
}

/* Are the operators planned now compiled on their first CPU call instead
 * (CgOp.lazy)? When their generated C may never run: under the interpret
 * option (the reference kernels run them) and under -gpu force with
 * synchronous compiles (the device runs what it takes; what it declines,
 * or a run without a device, compiles when the CPU first calls it,
 * cg_op_exec_as). The kernel and the results are those of a compile at
 * planning time; the C compiler's seconds are spent only where the CPU
 * runs an operator. (Asynchronous compiles keep compiling at planning
 * time: a compile at the first call would stall the run they keep
 * going.) */
static bool compile_lazily(const CgContext *c)
{
    return c->opt.interpret || (!c->opt.async && !br_perturb_on() && gpu_mode() == GPU_FORCE);
}

void cg_optimize_dag(CgContext *c, HopDag *d)
{
    if (!c || !c->opt.enabled || !d || d->recompile) return;
    cg_fx_log(d);
    int64_t t0 = br_now_ns();
    __atomic_add_fetch(&c->st.dags, 1, __ATOMIC_RELAXED);
    /* products that must be computed once (cg_split_compare): the DAG
     * is planned again with their fusion into consumers banned */
    enum { CG_MAXBAN = 4 };
    int ban[CG_MAXBAN], nban = 0;
replan:;
    Memo *m = memo_new(d);
    if (!m) return;
    m->amulet = c->opt.policy == CG_COST_BASED && amulet_ok(c);
    cg_explore(m);
    for (int b = 0; b < nban; b++) memo_ban_fused(m, ban[b]);
    bool any = false;
    for (int k = 0; k < m->norder && !any; k++) any = m->g[m->order[k]->id] && m->g[m->order[k]->id]->n;
    if (!any) {
        memo_free(m);
        __atomic_add_fetch(&c->st.optimize_ns, br_now_ns() - t0, __ATOMIC_RELAXED);
        explain_unfused(c, d);
        return;
    }
    CgMachine mc = {0};
    if (c->opt.policy == CG_COST_BASED) cg_machine_ctx(c, &mc);
    /* compressed inputs: the cost of a decompressed cell (cost.c) */
    for (int i = 0; i < d->n && c->opt.policy == CG_COST_BASED && !mc.cla_dec; i++)
        if (d->hops[i]->dt == DT_MATRIX && (d->hops[i]->cbytes > 0 || (d->hops[i]->cbytes == -1 && d->hops[i]->cest > 0))) {
            ClaMachine cw;
            cg_cla_machine_ctx(c, &cw);
            mc.cla_dec = cw.dec_w;
        }
    for (int k = 0; k < m->norder && m->amulet; k++)
        if (memo_has_type(m, m->order[k], T_AMULET, false)) { cg_amulet_share(c, &mc); break; }
    EnumStats es = {0};
    cg_select(c, m, c->opt.policy, &mc, &es);
    __atomic_add_fetch(&c->st.enumerated, es.enumerated, __ATOMIC_RELAXED);
    __atomic_add_fetch(&c->st.evaluated, es.evaluated, __ATOMIC_RELAXED);
    __atomic_add_fetch(&c->st.sel_cached, es.cached, __ATOMIC_RELAXED);
    Selection *s = cg_choose_ops(m);
    if (!s || !s->nops) {
        sel_free(s);
        memo_free(m);
        __atomic_add_fetch(&c->st.optimize_ns, br_now_ns() - t0, __ATOMIC_RELAXED);
        explain_unfused(c, d);
        return;
    }
    int n = s->nops;
    CgOp **ops = br_calloc((size_t)n, sizeof *ops);
    Hop ***ins = br_calloc((size_t)n, sizeof *ins);
    int *nins = br_calloc((size_t)n, sizeof *nins);
    int64_t *place = br_calloc((size_t)n, sizeof *place);        /* cg_dist_note_plan */
    double (*price)[2] = br_calloc((size_t)n, sizeof *price);
    if (!ops || !ins || !nins || !place || !price) goto done;
    /* all CPlans first: they read the DAG before any replacement */
    CPlan **pl = br_calloc((size_t)n, sizeof *pl);
    if (!pl) goto done;
    for (int i = 0; i < n; i++) pl[i] = s->ops[i].type == T_AMULET ? NULL : cplan_build(m, &s->ops[i]);
    cg_merge_rows(m, s, pl);
    int bad = cg_split_compare(m, s);
    if (bad >= 0) {
        for (int i = 0; i < s->nops; i++) cplan_free(pl[i]);
        free(pl); free(ops); free(ins); free(nins); free(place); free(price);
        sel_free(s);
        memo_free(m);
        if (nban == CG_MAXBAN) {
            /* still split after the bans: the DAG keeps its basic
             * operators, which compute every value once */
            __atomic_add_fetch(&c->st.optimize_ns, br_now_ns() - t0, __ATOMIC_RELAXED);
            explain_unfused(c, d);
            return;
        }
        ban[nban++] = bad;
        goto replan;
    }
    for (int t = 0; t < m->nspt; t++) __atomic_add_fetch(&c->st.stitch_pts[m->sdo[t]], 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&c->st.stitched, cg_stitch(m, s, pl), __ATOMIC_RELAXED);
    n = s->nops;
    for (int i = 0; i < n; i++) {
        if (s->ops[i].type == T_AMULET) continue;   /* below */
        CPlan *p = pl[i];
        if (!p) { __atomic_add_fetch(&c->st.invalid, 1, __ATOMIC_RELAXED); continue; }
        ins[i] = br_malloc((size_t)(p->nin + 1) * sizeof(Hop *));
        if (!ins[i]) { cplan_free(p); continue; }
        for (int k = 0; k < p->nin; k++) ins[i][k] = p->in[k].hop;
        nins[i] = p->nin;
        ops[i] = cg_op_get(c, p);
        place[i] = cg_dist_note_plan(m, &s->ops[i], ops[i], price[i]);
    }
    free(pl);
    /* AMULET loops: the product hop becomes an H_WHERE hop in place (the
     * CPlans above hold pointers to hops, never to what they read) */
    for (int i = 0; i < n; i++)
        if (s->ops[i].type == T_AMULET && !cg_amulet_realize(c, d, m, s->ops[i].root))
            __atomic_add_fetch(&c->st.invalid, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&c->st.optimize_ns, br_now_ns() - t0, __ATOMIC_RELAXED);
    /* operators not compiled yet: this batch takes those nobody else is
     * compiling; synchronous mode waits for every pending one */
    CgOp **todo = br_calloc((size_t)n, sizeof *todo);
    int ntodo = 0;
    bool pending = false, big = false, lazy = compile_lazily(c);
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < n && todo; i++) {
        if (!ops[i] || __atomic_load_n(&ops[i]->ready, __ATOMIC_ACQUIRE) != 0) continue;
        if (lazy && !ops[i]->amulet && !ops[i]->queued) {
            __atomic_store_n(&ops[i]->lazy, true, __ATOMIC_RELEASE);
            continue;
        }
        pending = true;
        if (!ops[i]->queued) { ops[i]->queued = true; todo[ntodo++] = ops[i]; }
        for (int k = 0; k < nins[i]; k++) {
            const Hop *h = ins[i][k];
            if (h->rows > 0 && h->cols > 0 && (double)h->rows * (double)h->cols >= ASYNC_MAX_CELLS) big = true;
        }
    }
    pthread_mutex_unlock(&c->lock);
    bool bg = c->opt.async && !big;
    /* asynchronous mode: what the disk cache holds is loaded at once */
    if (pending && bg && todo) {
        jit_load_cached(c, todo, ntodo);
        int k = 0;
        for (int i = 0; i < ntodo; i++)
            if (__atomic_load_n(&todo[i]->ready, __ATOMIC_ACQUIRE) == 0) todo[k++] = todo[i];
        ntodo = k;
    }
    if (pending && (!bg || !jit_compile_async(c, todo, ntodo))) {
        pthread_mutex_lock(&c->jitlock);
        jit_compile_all(c, todo, ntodo);
        pthread_mutex_unlock(&c->jitlock);
    }
    free(todo);
    /* synchronous mode: an operator another thread queued (parfor workers
     * planning the same body) is waited for; that thread holds jitlock
     * while it compiles, or is about to take it. (Without the wait, this
     * DAG ran unfused whenever the other thread had not taken the lock
     * yet: results then depended on timing in their last bits.) */
    for (int i = 0; i < n && pending && !bg; i++)
        for (int64_t t0 = br_now_ns(); ops[i] && __atomic_load_n(&ops[i]->ready, __ATOMIC_ACQUIRE) == 0 &&
                                       br_now_ns() - t0 < (int64_t)120e9;) {
            pthread_mutex_lock(&c->jitlock);
            pthread_mutex_unlock(&c->jitlock);
            if (__atomic_load_n(&ops[i]->ready, __ATOMIC_ACQUIRE) == 0) {
                struct timespec ts = {0, 200000};   /* 0.2 ms */
                nanosleep(&ts, NULL);
            }
        }
    for (int i = 0; i < n; i++) {
        if (!ops[i]) continue;
        int rdy = __atomic_load_n(&ops[i]->ready, __ATOMIC_ACQUIRE);
        if (rdy < 0 || (rdy == 0 && !c->opt.async && !__atomic_load_n(&ops[i]->lazy, __ATOMIC_ACQUIRE))) {
            __atomic_add_fetch(&c->st.failed, 1, __ATOMIC_RELAXED);
            continue;
        }
        replace(d, &s->ops[i], ops[i], ins[i], nins[i], place[i], price[i]);
        __atomic_add_fetch(&c->st.fused[tpl_index(s->ops[i].type)], 1, __ATOMIC_RELAXED);
    }
    if (c->opt.explain) {
        pthread_mutex_lock(&c->lock);
        explain(c, d, ops, s, c->opt.explain, &es);
        pthread_mutex_unlock(&c->lock);
    }
done:
    for (int i = 0; ins && i < n; i++) free(ins[i]);
    free(ins);
    free(nins);
    free(place);
    free(price);
    free(ops);
    sel_free(s);
    memo_free(m);
}

int cg_exec(CgContext *c, void *handle, const int64_t *est, int nin, Value *args, Value *out, BrErr *e)
{
    CgOp *op = handle;
    if (!c || !op) return br_err(e, BR_EFAIL, "fused operator is not available");
    __atomic_add_fetch(&op->uses, 1, __ATOMIC_RELAXED);
    return cg_op_exec(c, op, nin == op->plan->nin ? est : NULL, args, nin, out, e);
}

bool cg_ready_all(CgContext *c, void *const *handles, int n)
{
    bool all = c != NULL;
    /* every operator is asked (one perturbation draw each, as for calls) */
    for (int i = 0; i < n; i++)
        if (!handles[i] || !cg_op_ready(c, handles[i])) all = false;
    return all;
}

int cg_exec_as(CgContext *c, void *handle, const int64_t *est, int nin, Value *args, Value *out, BrErr *e,
               bool fused)
{
    CgOp *op = handle;
    if (!c || !op) return br_err(e, BR_EFAIL, "fused operator is not available");
    __atomic_add_fetch(&op->uses, 1, __ATOMIC_RELAXED);
    return cg_op_exec_as(c, op, nin == op->plan->nin ? est : NULL, args, nin, out, e, fused);
}

static double arg_cells(const Value *v, bool nnz)
{
    if (v->kind != V_MATRIX || !v->m) return 0;
    return nnz && v->m->sparse ? (double)v->m->nnz : (double)v->m->rows * (double)v->m->cols;
}

static int64_t arg_cols(const Value *v) { return v->kind == V_MATRIX && v->m ? v->m->cols : 1; }

static int64_t p_rows(const Value *v) { return v->kind == V_MATRIX && v->m ? v->m->rows : 1; }

static bool is_main_node(const CPlan *p, int n) { return p->n[n].kind == CN_IN && p->n[n].in == p->main; }

double cg_flops(const void *handle, int nin, const Value *args)
{
    const CgOp *op = handle;
    const CPlan *p = op->plan;
    if (!p || op->amulet || nin != p->nin || p->main < 0) return 0;
    double main = arg_cells(&args[p->main], true), fl = 0;
    for (int i = 0; i < p->nn; i++) {
        const CNode *x = &p->n[i], *b = x->na > 1 ? &p->n[x->a[1]] : NULL;
        if (x->kind == CN_MM && p->tpl == T_OUTER) {
            /* U %*% t(V) at the driver's cells: a dot product of rank ncol(U) */
            const CNode *u = &p->n[x->a[0]];
            if (u->kind == CN_IN) fl += 2 * main * (double)arg_cols(&args[u->in]);
        } else if (x->kind == CN_MM && p->tpl == T_ROW && b && b->kind == CN_IN) {
            /* the main row times a side matrix; another row vector: the
             * whole side matrix per row */
            if (is_main_node(p, x->a[0])) fl += 2 * main * (double)(x->vc == VC_CELL ? 1 : arg_cols(&args[b->in]));
            else fl += 2 * (double)p_rows(&args[p->main]) * arg_cells(&args[b->in], false);
        } else if (x->kind == CN_MMTL && p->tpl == T_ROW && b) {
            /* (a slice's length: the width of what it slices, a bound) */
            double w = (double)(b->vc == VC_VEC && b->vlen >= 0 && b->vlen < nin ? arg_cols(&args[b->vlen]) : 1);
            const CNode *a = &p->n[x->a[0]];
            double len = a->vc == VC_VEC && a->vlen >= 0 && a->vlen < nin ? (double)arg_cols(&args[a->vlen]) : 1;
            fl += 2 * w * (is_main_node(p, x->a[0]) ? main : (double)p_rows(&args[p->main]) * len);
        }
    }
    return fl;
}

bool cg_cla_ok(const void *handle, const bool *cin)
{
    const CPlan *p = ((const CgOp *)handle)->plan;
    if (p->tpl == T_OUTER) return false;
    bool *cm = br_calloc((size_t)p->nn + 1, sizeof(bool));   /* node value compressed */
    if (!cm) return false;
    bool ok = true;
    for (int i = 0; i < p->nn && ok; i++) {
        const CNode *x = &p->n[i];
        bool c0 = x->na > 0 && cm[x->a[0]], c1 = x->na > 1 && cm[x->a[1]];
        switch (x->kind) {
        case CN_IN: cm[i] = cin[x->in]; break;
        case CN_UN: cm[i] = c0; break;
        case CN_BIN: {
            /* the other operand a scalar, or the same node */
            bool s0 = p->n[x->a[0]].scalar, s1 = p->n[x->a[1]].scalar;
            if ((c0 && !s1 && x->a[0] != x->a[1]) || (c1 && !s0 && x->a[0] != x->a[1])) ok = false;
            cm[i] = c0 || c1;
            break;
        }
        case CN_AGG:
            if (c0 && x->op != OP_SUM && x->op != OP_SUMSQ && x->op != OP_MEAN && x->op != OP_AMIN && x->op != OP_AMAX)
                ok = false;
            break;
        case CN_MM: case CN_MMTL:
            /* x %*% B, t(x) %*% B with x compressed and B ordinary */
            if (c1) ok = false;
            break;
        default:
            if (c0 || c1 || (x->na > 2 && cm[x->a[2]])) ok = false;
            break;
        }
    }
    free(cm);
    return ok;
}

/* The Row choice over a compressed main input, costed in cell operations
 * at run time (the shapes and the compressed block in hand):
 * - the generated code over blocks of decompressed rows: the skeleton's
 *   rule (kernels/cla.h cla_row_cells, in decompressed cells, dec_w
 *   each): the lookups of the main row's products with side matrices
 *   and of the q rows of t(main) %*% q roots, plus the row where
 *   something else reads it, or the decompressed row and those
 *   products' multiply-adds; other dense products' multiply-adds at the
 *   rule's rate (dec_w / 12); plus the plan's work per row, nothing
 *   materialized;
 * - the unfused plan (cg_exec_unfused): a product of the compressed input
 *   costs its lookups (cla_look_cells of its width, dec_w each), a
 *   cellwise step over it only its dictionaries; every other step
 *   computes as the generated code does and materializes its n x w
 *   result (mat_w per cell: written, read back).
 * The weights are this machine's (cla_machine.c: measured against a
 * cell operation, cached; defaults 2 and 2 when pinned).
 * Narrow products over few groups favour the unfused plan (l2svm's,
 * lm's t(X) %*% (X %*% v)); wide products whose results feed several
 * steps (kmeans' rowIndexMin(... - 2 * (X %*% t(C)))) the decompressed
 * rows. */

static double arg_width(const Value *args, int nargs, const CNode *x)
{
    if (x->vc != VC_VEC || x->vlen < 0 || x->vlen >= nargs || args[x->vlen].kind != V_MATRIX) return 1;
    return (double)args[x->vlen].m->cols;
}

bool cg_cla_row_unfused(const void *handle, const Value *args, int nargs, const ClaMachine *mw)
{
    const CgOp *op = handle;
    const CPlan *p = op->plan;
    if (op->amulet || p->tpl != T_ROW || p->main < 0 || p->main >= nargs || args[p->main].kind != V_MATRIX ||
        !args[p->main].m->cmb)
        return false;
    const MB *x = args[p->main].m;
    double n = (double)x->rows, m = (double)x->cols, G = (double)x->cmb->ngroups;
    bool *cm = br_calloc((size_t)p->nn + 1, sizeof(bool));   /* node value compressed */
    ClaLookGroup *lg = br_malloc(((size_t)cla_look_groups(x) + 1) * sizeof *lg);
    if (!cm || !lg) {
        free(cm), free(lg);
        return false;
    }
    ClaLook l;
    cla_look_fill(x, &l, lg);
    /* the main row's products with side matrices are looked up per group
     * over decompressed rows too (kernels/spoof_row.c); rows that only
     * they read are not decompressed */
    int pn[SPOOF_MAXPROD], tq[SPOOF_MAXOUT];
    bool only;
    int np = cplan_row_main_prods(p, pn, &only), nt = cplan_row_main_taggs(p, tq, NULL);
    /* and the q rows of t(main) %*% q roots are added per tuple (over a
     * finite X: its zeros are skipped) */
    int np0 = np, nt0 = nt;
    if (2 * G > m) np = nt = 0;   /* not looked up (kernels/spoof_row.c prod_init, tq_init) */
    if (nt && mb_has_nonfinite(x)) nt = 0;
    bool read = !only || np != np0 || nt != nt0;
    /* the skeleton's rule over those (kernels/cla.h cla_row_cells): the
     * lookups (plus the row where something else reads it) or the
     * decompressed row and the products' multiply-adds, per row */
    double wp = 0, wt = 0;
    for (int j = 0; j < np; j++) wp += arg_width(args, nargs, &p->n[pn[j]]);
    for (int j = 0; j < nt; j++) {
        const CNode *c = &p->n[p->out[tq[j]]];
        bool left = p->n[c->a[0]].kind == CN_IN && p->n[c->a[0]].in == p->main;
        wt += arg_width(args, nargs, &p->n[c->a[left ? 1 : 0]]);
    }
    bool look = false;
    double rows = np + nt ? n * mw->dec_w * cla_row_cells(&l, (int64_t)wp, (int64_t)wt, read, &look) : n * m * mw->dec_w;
    double unf = 0;
    for (int i = 0; i < p->nn; i++) {
        const CNode *c = &p->n[i];
        bool c0 = c->na > 0 && cm[c->a[0]];
        double w = arg_width(args, nargs, c);
        switch (c->kind) {
        case CN_IN: cm[i] = c->in == p->main; break;
        case CN_TRANS: break;
        case CN_MM: case CN_MMTL: {
            double wl = arg_width(args, nargs, &p->n[c->a[0]]);
            double k = c->kind == CN_MM ? w : arg_width(args, nargs, &p->n[c->a[1]]);
            bool ruled = false;   /* priced by the rule above */
            for (int j = 0; j < np; j++) ruled |= pn[j] == i;
            for (int j = 0; j < nt; j++) ruled |= p->out[tq[j]] == i;
            if (!ruled) rows += n * wl * k * mw->dec_w / 12;
            unf += c0 ? n * mw->dec_w * cla_look_cells(&l, (int64_t)k) : n * wl * k + mw->mat_w * n * k;
            break;
        }
        default:
            cm[i] = c0 || (c->na > 1 && cm[c->a[1]]);
            if (c->scalar) break;
            rows += n * w;
            unf += cm[i] ? 0 : n * w * (1 + mw->mat_w);
            break;
        }
    }
    free(cm), free(lg);
    return unf < rows;
}

/* A Cell or MAgg plan that runs once per distinct tuple: one compressed
 * full input, the others scalars or row vectors (k_spoof_cell_cla_ok). */
static bool cell_per_value(const CPlan *p, const bool *cin)
{
    if (p->var != V_FULL_AGG && p->var != V_MULTI && p->nout != 1) return false;
    int nc = 0;
    for (int k = 0; k < p->nin; k++) {
        if (cin[k] && p->in[k].mode != IM_FULL) return false;
        if (!cin[k] && !p->in[k].scalar && p->in[k].mode != IM_ROW) return false;
        nc += cin[k];
    }
    return nc == 1;
}

/* A Row plan over the compressed main input whose main row only its
 * products with side matrices (looked up per group) and t(main) %*% q
 * roots (q's rows added per tuple) read, one of them at least 2 columns
 * wide: its rows are not decompressed (kernels/spoof_row.c), where
 * co-coding leaves few groups (which the data decide at run time:
 * cg_cla_row_unfused), and its work per row shrinks from m k to G k
 * (kmeans' step: 0.59 of the uncompressed CPU, docs/cla.md). Narrow
 * ones (products with a vector, measured on par with the dense kernel)
 * are left to the rule for rows. */
static bool row_by_tuples(const CPlan *p, const bool *cin)
{
    if (p->main < 0 || !cin[p->main] || p->in[p->main].mode != IM_FULL) return false;
    for (int k = 0; k < p->nin; k++)
        if (k != p->main && cin[k]) return false;
    int pn[SPOOF_MAXPROD], tq[SPOOF_MAXOUT];
    bool only, wide = false;
    int np = cplan_row_main_prods(p, pn, &only), nt = cplan_row_main_taggs(p, tq, NULL);
    for (int j = 0; j < np; j++) wide |= cplan_row_kwidth(p, pn[j]) >= 2;
    for (int j = 0; j < nt; j++) wide |= cplan_row_kwidth(p, p->out[tq[j]]) >= 2;
    return only && np + nt > 0 && wide;
}

bool cg_cla_rows(const void *handle, const bool *cin)
{
    const CgOp *op = handle;
    const CPlan *p = op->plan;
    if (op->amulet) return false;
    if (p->tpl == T_ROW) return !row_by_tuples(p, cin);
    return p->tpl == T_OUTER || ((p->tpl == T_CELL || p->tpl == T_MAGG) && !cell_per_value(p, cin));
}

int cg_cla_row_main(const void *handle)
{
    const CgOp *op = handle;
    return op && !op->amulet && op->plan->tpl == T_ROW ? op->plan->main : -1;
}

bool cg_cla_gen(const void *handle, const bool *cin)
{
    const CgOp *op = handle;
    const CPlan *p = op->plan;
    if (op->amulet) return false;
    if (p->tpl == T_ROW) {
        /* the main input read by blocks of decompressed rows */
        if (p->main < 0 || !cin[p->main] || p->in[p->main].mode != IM_FULL) return false;
        for (int k = 0; k < p->nin; k++)
            if (k != p->main && cin[k]) return false;
        return true;
    }
    /* Cell, MAgg: per distinct tuple, or per cell over windows of
     * decompressed rows (any input); Outer: windows by rows of W */
    return p->tpl == T_CELL || p->tpl == T_MAGG || p->tpl == T_OUTER;
}

int cg_exec_unfused(CgContext *c, void *handle, int nin, Value *args, Value *out, BrErr *e)
{
    CgOp *op = handle;
    if (!c || !op) return br_err(e, BR_EFAIL, "fused operator is not available");
    __atomic_add_fetch(&op->uses, 1, __ATOMIC_RELAXED);
    return cg_interpret(op->plan, args, nin, out, e);
}

void cg_explain_dag(CgContext *c, const HopDag *d, FILE *out)
{
    (void)c;
    for (int i = 0; i < d->n; i++) {
        const Hop *h = d->hops[i];
        if (h->kind != H_SPOOF || !h->spoof) continue;
        const CgOp *op = h->spoof;
        fprintf(out, " %s at hop %d\n", op->name, h->id);
        cplan_print(op->plan, out);
        const char *body = strstr(op->src, "\nconst unsigned long long cg_hash");
        fprintf(out, "  generated C (after the shared prelude):%s\n", body ? body : op->src);
    }
}

void cg_dag_fused(const HopDag *d, int counts[4])
{
    for (int k = 0; k < 4; k++) counts[k] = 0;
    for (int i = 0; i < d->n; i++) {
        const Hop *h = d->hops[i];
        if (h->kind != H_SPOOF || !h->spoof) continue;
        counts[tpl_index(((const CgOp *)h->spoof)->plan->tpl)]++;
    }
}

void cg_print_stats(const CgContext *c, FILE *f)
{
    if (!c) return;
    const CgStats *s = &c->st;
    fprintf(f, "Codegen compile (DAG, CP, JC):\t%lld/%lld/%lld.\n", (long long)s->dags, (long long)s->cplans,
            (long long)s->compiled);
    fprintf(f, "Codegen fused ops (C, R, MA, OP):\t%lld/%lld/%lld/%lld.\n", (long long)s->fused[0],
            (long long)s->fused[1], (long long)s->fused[2], (long long)s->fused[3]);
    fprintf(f, "Codegen enum (ALL, EVAL):\t%lld/%lld.\n", (long long)s->enumerated, (long long)s->evaluated);
    if (s->sel_cached)
        fprintf(f, "Codegen selection cache hits:\t%lld.\n", (long long)s->sel_cached);
    if (s->invalid)
        fprintf(f, "Codegen operators dropped (no valid CPlan):\t%lld.\n", (long long)s->invalid);
    fprintf(f, "Codegen compile times (DAG, JC):\t%.3f/%.3f sec.\n", (double)s->optimize_ns / 1e9,
            (double)s->compile_ns / 1e9);
    fprintf(f, "Codegen plan cache (hits, disk):\t%lld/%lld.\n", (long long)s->cache_hits, (long long)s->disk_hits);
    if (s->amulet) fprintf(f, "Codegen AMULET loops (planner):\t%lld.\n", (long long)s->amulet);
    if (s->stitched) fprintf(f, "Codegen column aggregates stitched (Row, Cell):\t%lld.\n", (long long)s->stitched);
    if (s->stitch_pts[0] + s->stitch_pts[1])
        fprintf(f, "Codegen stitch points (stitched, materialized):\t%lld/%lld.\n", (long long)s->stitch_pts[1],
                (long long)s->stitch_pts[0]);
    if (s->prebuilt_hits)
        fprintf(f, "Codegen prebuilt kernels loaded:\t%lld.\n", (long long)s->prebuilt_hits);
    if (s->cc_runs) fprintf(f, "Codegen compiler runs:\t%lld.\n", (long long)s->cc_runs);
    if (s->cc_runs || s->cc_pch_cpu_ns)
        fprintf(f, "Codegen compiler CPU (bundles, prelude):\t%.3f/%.3f sec.\n", (double)s->cc_cpu_ns / 1e9,
                (double)s->cc_pch_cpu_ns / 1e9);
    if (s->failed || s->fallback)
        fprintf(f, "Codegen failed compiles, fallbacks:\t%lld/%lld.\n", (long long)s->failed, (long long)s->fallback);
}
