/* interp.c: executes the runtime program. Each generic block runs its
 * instructions over a register file; variables move between the frame's
 * symbol table and registers through TREAD instructions and the block's
 * transient writes; after every block, variables that liveness says are
 * dead are released. */
#include "interp.h"
#include "cla_rt.h"
#include "distexec.h"
#include "gpuexec.h"
#include "bindcheck.h"
#include "bound.h"
#include "lintrace.h"
#include "../base/perturb.h"
#include "../gpu/gpu.h"
#include "../base/vec.h"
#include "../dist/dist.h"
#include "../io/io.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "../lang/load.h"

#define MAX_DEPTH 2000

void rt_init(Rt *rt, RtProgram *p, Diag *d, const RtOptions *o)
{
    memset(rt, 0, sizeof *rt);
    rt->prog = p;
    rt->diag = d;
    rt->opt = *o;
    if (!rt->opt.out) rt->opt.out = stdout;
    pthread_mutex_init(&rt->lock, NULL);
    cla_stats_init(&rt->cla);
    size_t pcap = o->pool ? 0 : br_pool_default_cap();
    rt->own_pool = pcap > 0;
    rt->pool = o->pool ? o->pool : pcap ? br_pool_new(pcap) : NULL;   /* without memory: none */
    /* the loader's static check: only scripts that ask for a trace pay
     * for one (without memory, lineage() fails as untraced) */
    if (p && lang_uses_lineage(p->ast)) rt->lin = lin_new();
}

void rt_destroy(Rt *rt)
{
    free(rt->stats);
    free(rt->rc_samples);
    free(rt->loops);
    lin_free(rt->lin);
    if (rt->own_pool) br_pool_free(rt->pool);
    pthread_mutex_destroy(&rt->lock);
    cla_stats_destroy(&rt->cla);
}

void rt_print_line(Rt *rt, const char *s)
{
    pthread_mutex_lock(&rt->lock);
    fputs(s, rt->opt.out);
    fputc('\n', rt->opt.out);
    fflush(rt->opt.out);
    pthread_mutex_unlock(&rt->lock);
}

int rt_fail(Rt *rt, Span sp, int code, const char *fmt, ...)
{
    pthread_mutex_lock(&rt->lock);
    if (!rt->err.code) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(rt->err.msg, sizeof rt->err.msg, fmt, ap);
        va_end(ap);
        rt->err.code = code ? code : BR_EFAIL;
        rt->err.at = sp;
    }
    rt->stopped = true;
    pthread_mutex_unlock(&rt->lock);
    return -1;
}

void rt_err_pos(const Rt *rt, char *buf, size_t n)
{
    const Span *at = &rt->err.at;
    buf[0] = 0;
    if (at->file || at->line > 0)
        snprintf(buf, n, "%s:%d:%d: ", at->file ? at->file : "<script>", at->line, at->col);
}

void rt_print_error(const Rt *rt, FILE *f)
{
    if (!rt->err.code) return;
    char pos[1200];
    rt_err_pos(rt, pos, sizeof pos);
    fprintf(f, "%serror: %s\n", pos, rt->err.msg);
}

/* ---- statistics ---- */

static void stat_add(Rt *rt, const char *name, int64_t ns, double bound)
{
    pthread_mutex_lock(&rt->lock);
    int i;
    for (i = 0; i < rt->nstats; i++)
        if (strcmp(rt->stats[i].name, name) == 0) break;
    if (i == rt->nstats) {
        /* out of memory: this instruction goes uncounted (statistics only) */
        if (!br_grow((void **)&rt->stats, &rt->scap, rt->nstats + 1, sizeof *rt->stats)) {
            pthread_mutex_unlock(&rt->lock);
            return;
        }
        rt->stats[i].name = name;
        rt->stats[i].count = 0;
        rt->stats[i].ns = 0;
        rt->stats[i].bound = 0;
        rt->nstats++;
    }
    rt->stats[i].count++;
    rt->stats[i].ns += ns;
    rt->stats[i].bound += bound;
    pthread_mutex_unlock(&rt->lock);
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : x > y;
}

static int stat_cmp(const void *a, const void *b)
{
    const RtStat *x = a, *y = b;
    return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

void rt_print_stats(Rt *rt, FILE *f, int top)
{
    fprintf(f, "HOP DAGs recompiled:\t\t%lld\n", (long long)rt->nrecompile);
    int32_t med = 0;
    if (rt->nrc_samples) {
        qsort(rt->rc_samples, (size_t)rt->nrc_samples, sizeof(int32_t), cmp_i32);
        med = rt->rc_samples[rt->nrc_samples / 2];
    }
    fprintf(f, "HOP DAG recompile time:\t\t%.3f sec (median %d us, mean %.1f us per DAG).\n",
            (double)rt->recompile_ns / 1e9, (int)med,
            rt->nrecompile ? (double)rt->recompile_ns / 1e3 / (double)rt->nrecompile : 0.0);
    if (rt->nrc_hits)
        fprintf(f, "HOP DAG recompiles reused:\t%lld (%.3f sec, mean %.1f us per DAG).\n", (long long)rt->nrc_hits,
                (double)rt->rc_hit_ns / 1e9, (double)rt->rc_hit_ns / 1e3 / (double)rt->nrc_hits);
    if (rt->npf_memlimited)
        fprintf(f, "ParFor loops limited by memory:\t%lld (least degree %d).\n", (long long)rt->npf_memlimited,
                rt->pf_least_degree);
    if (rt->prog->hooks && rt->prog->hooks->print_stats) rt->prog->hooks->print_stats(rt->prog, f);
    if (rt->nstats) qsort(rt->stats, (size_t)rt->nstats, sizeof *rt->stats, stat_cmp);   /* none: NULL */
    /* with the bound meter on, each hitter's bound and time / bound */
    bool bd = __atomic_load_n(&rt_bound_on, __ATOMIC_RELAXED) == 1;
    fprintf(f, "Heavy hitter instructions:\n");
    fprintf(f, "  #  Instruction          Time(s)      Count%s\n", bd ? "   Bound(s)  Time/Bound" : "");
    for (int i = 0; i < rt->nstats && i < top; i++) {
        fprintf(f, "%3d  %-18s %9.3f %10lld", i + 1, rt->stats[i].name, (double)rt->stats[i].ns / 1e9,
                (long long)rt->stats[i].count);
        if (bd && rt->stats[i].bound > 0)
            fprintf(f, " %10.4f %11.2f", rt->stats[i].bound, (double)rt->stats[i].ns / 1e9 / rt->stats[i].bound);
        fputc('\n', f);
    }
}

/* ---- instructions ---- */


static int call(Rt *rt, Frame *caller, Func *fn, FProg *spec, Value *args, Value *out);

/* Lineage through calls (runtime/lineage.h): exec_code hands the I_CALL's
 * argument items to call() here, and call() hands back the item of its
 * outputs (LIN_FCALL), both on the calling thread. */
static __thread LinItem **tl_call_args;
static __thread LinItem *tl_call_out;
/* The caller's uses after the call of its deferred compress(X)
 * arguments (cla_rt_call_after): exec_code hands them to call() here. */
static __thread const ClaAfter *tl_call_after;

/* A read compiled with the sizes of its .mtd must read a matrix of those
 * sizes: the plan (folded nrow/ncol, chosen operators) depends on them,
 * so a file changed between compilation and execution is an error. */
static int check_read(const Instr *in, const Value *args, Value *out, BrErr *e)
{
    if (out->kind != V_MATRIX || (out->m->rows == in->est[0] && out->m->cols == in->est[1])) return 0;
    const char *file = args[0].kind == V_STRING ? args[0].s->s : "?";
    int rc = br_err(e, BR_EDIM, "read %s: the file has %lld x %lld cells, but its .mtd said %lld x %lld "
                    "when the script was compiled (was it changed meanwhile?)", file,
                    (long long)out->m->rows, (long long)out->m->cols, (long long)in->est[0], (long long)in->est[1]);
    val_release(out);
    return rc;
}

/* The fused operators of the code this thread runs now: all through their
 * kernels, or all unfused (cg_ready_all, set by exec_code before each
 * instruction, since a call in between runs code of its own). */
static __thread bool code_fused = true;

static int exec_instr(Rt *rt, Frame *f, const Instr *in, Value *regs, BrErr *e)
{
    Value *out = &regs[in->out];
    Value none = val_none();
#define ARG(k) (in->in[k] >= 0 ? &regs[in->in[k]] : &none)
    switch (in->kind) {
    case I_LIT:
        *out = val_retain(in->lit);
        return 0;
    case I_READ: {
        if (in->move) {
            Value v = st_take(&f->vars, in->name);
            if (v.kind != V_NONE) { *out = v; return 0; }
        } else {
            Value *v = st_get(&f->vars, in->name);
            if (v) { *out = val_retain(*v); return 0; }
        }
        if (in->optional) { *out = none; return 0; }   /* exists(X) */
        return br_err(e, BR_EARG, "undefined variable '%s'", in->name);
    }
    case I_UNARY: return ap_unary(in->op, ARG(0), out, e);
    case I_BINARY: return ap_binary(in->op, ARG(0), ARG(1), out, e);
    case I_TERNARY: return ap_ternary(ARG(0), ARG(1), ARG(2), out, e);
    case I_AGG: return ap_agg(in->op, in->dir, ARG(0), out, e);
    case I_REORG: return ap_reorg(in->op, ARG(0), out, e);
    case I_MATMUL:
        return ap_matmul(in->op, in->left, ARG(0), in->nin > 1 ? ARG(1) : &none, in->nin > 2 ? ARG(2) : &none, out, e);
    case I_OUT: {
        Value *t = ARG(0);
        if (t->kind != V_LIST || in->out_index >= t->l->n)
            return br_err(e, BR_EFAIL, "missing output %d of a call", in->out_index + 1);
        *out = val_retain(t->l->items[in->out_index]);
        return 0;
    }
    default: break;
    }
    /* instructions with many inputs: gather them */
    Value local[8];
    Value *args = in->nin <= 8 ? local : malloc((size_t)in->nin * sizeof(Value));
    if (!args) return br_err(e, BR_ENOMEM, "out of memory");
    for (int k = 0; k < in->nin; k++) args[k] = *ARG(k);
    int rc = 0;
    switch (in->kind) {
    case I_RIX: rc = ap_rix(&in->ix, args, out, e); break;
    case I_LIX: {
        /* in place when this is the target register's last use */
        bool last = false;
        for (int k = 0; k < in->nfree; k++) if (in->frees[k] == in->in[0]) last = true;
        for (int k = 1; k < in->nin; k++) if (in->in[k] == in->in[0]) last = false;
        if (last && gpu_mode() != GPU_OFF) rt_gpu_before_update(&args[0]);
        rc = ap_lix(&in->ix, args, last, out, e);
        if (last && args[0].kind == V_NONE) regs[in->in[0]] = val_none();
        break;
    }
    case I_BUILTIN:
        rc = rt->prog->builtin ? rt->prog->builtin(rt, f, in, args, out, e)
                               : br_err(e, BR_EFAIL, "builtin '%s' is not available", in->opname);
        if (!rc && in->est) rc = check_read(in, args, out, e);
        /* a value-returning builtin that returned nothing lost an
         * allocation it did not check (val_string, val_list_new return an
         * empty value then): an error, never "none" printed as a result */
        if (!rc && out->kind == V_NONE && !builtin_info[in->bi].sidefx && builtin_info[in->bi].dt != DT_ANY)
            rc = br_err(e, BR_ENOMEM, "out of memory: '%s' produced no value", in->opname);
        break;
    case I_FUSED:
        if (!rt->prog->cg || !in->fused) rc = br_err(e, BR_EFAIL, "fused operator '%s' is not available", in->opname);
        else rc = cg_exec_as(rt->prog->cg, in->fused, in->est, in->nin, args, out, e, code_fused);
        break;
    case I_STITCH: rc = rt_stitch_exec(in, args, out, e); break;
    case I_CALL:
        if (call(rt, f, in->func, in->spec, args, out)) rc = -1;
        break;
    case I_WHERE: {
        /* R updated in place at its register's last use (as I_LIX) */
        bool last = false;
        for (int k = 0; k < in->nfree; k++) if (in->frees[k] == in->in[0]) last = true;
        for (int k = 1; k < in->nin; k++) if (in->in[k] == in->in[0]) last = false;
        if (last && gpu_mode() != GPU_OFF) rt_gpu_before_update(&args[0]);
        rc = cg_where_exec(rt->prog->cg, in->where, args, in->nin, last, out, e);
        if (last && args[0].kind == V_NONE) regs[in->in[0]] = val_none();
        break;
    }
    default: rc = br_err(e, BR_EFAIL, "unknown instruction"); break;
    }
    if (args != local) free(args);
    return rc;
#undef ARG
}

/* Does instruction i run? Not when an ifelse guarding it (Instr.guard,
 * and the ifelses guarding that one) has a numeric condition that picks
 * the other branch. */
static bool guard_runs(const Code *c, const Value *regs, int i)
{
    for (int g = c->ins[i].guard; g; i = g - 1, g = c->ins[i].guard) {
        const Instr *t = &c->ins[g - 1];
        const Value *cv = t->in[0] >= 0 ? &regs[t->in[0]] : NULL;
        bool b;
        BrErr e;
        if (cv && (cv->kind == V_BOOL || cv->kind == V_INT || cv->kind == V_DOUBLE) && val_truth(cv, &b, &e) &&
            b != c->ins[i].guard_then)
            return false;
    }
    return true;
}

/* A lazy ifelse whose untaken branch was skipped: its result is the taken
 * branch (plan/instgen.c allowed the skip only where that is so); so it
 * is when both are matrices whose shapes differ at run time. 1 when done,
 * 0 for the ordinary ifelse. */
static int lazy_ifelse(const Instr *in, Value *regs, BrErr *e)
{
    Value none = val_none();
    const Value *a = in->in[1] >= 0 ? &regs[in->in[1]] : &none, *b = in->in[2] >= 0 ? &regs[in->in[2]] : &none;
    if (a->kind != V_NONE && b->kind != V_NONE) {
        /* both there: matrices whose shapes differ only at run time are
         * SystemDS's branch choice (its validation requires equal shapes,
         * and the rewrite leaves the branch once the condition is known),
         * not braid's row / column broadcast */
        const Value *cv = in->in[0] >= 0 ? &regs[in->in[0]] : &none;
        bool t;
        BrErr ce;
        if (a->kind != V_MATRIX || b->kind != V_MATRIX || !a->m || !b->m ||
            (a->m->rows == b->m->rows && a->m->cols == b->m->cols) ||
            (cv->kind != V_BOOL && cv->kind != V_INT && cv->kind != V_DOUBLE) || !val_truth(cv, &t, &ce))
            return 0;
        regs[in->out] = val_retain(t ? *a : *b);
        return 1;
    }
    if (a->kind == V_NONE && b->kind == V_NONE) return br_err(e, BR_EFAIL, "ifelse: neither branch was evaluated"), -1;
    regs[in->out] = val_retain(a->kind != V_NONE ? *a : *b);
    return 1;
}

/* Runs a DAG's instructions; writes its variables into f. If keep is
 * non-NULL, the registers are left for the caller (predicates, loop
 * headers) and must be released by it. */
static int exec_code(Rt *rt, Frame *f, const Code *c, Value **keep)
{
    /* small blocks use a register file on the stack (no allocation) */
    Value stackregs[32];
    bool onstack = !keep && c->nregs <= 32;
    Value *regs = onstack ? stackregs : calloc((size_t)c->nregs + 1, sizeof(Value));
    if (!regs) return rt_fail(rt, (Span){0}, BR_ENOMEM, "out of memory");
    if (onstack) memset(stackregs, 0, (size_t)c->nregs * sizeof(Value));
    int rc = 0;
    BrErr e;
    int64_t seen = 0;
    bool dist = dist_active() && !rt->no_dist, gpu = gpu_mode() != GPU_OFF;
    /* lineage tracing: an item per register */
    LinItem **lr = NULL;
    if (rt->lin && !(lr = calloc((size_t)c->nregs + 1, sizeof *lr))) {
        if (!onstack) free(regs);
        return rt_fail(rt, (Span){0}, BR_ENOMEM, "out of memory");
    }
    /* one readiness for all fused operators of this execution (cgrun.h:
     * a DAG's operators may share a subexpression; run partly fused, they
     * would compute it with different rounding) */
    bool fused = true;
    for (int i = 0; i < c->n && rt->prog->cg; i++)
        if (c->ins[i].kind == I_FUSED && c->ins[i].fused && !cg_ready_all(rt->prog->cg, &c->ins[i].fused, 1))
            fused = false;
    for (int i = 0; i < c->n && !rc; i++) {
        const Instr *in = &c->ins[i];
        br_err_clear(&e);
        code_fused = fused;
        int64_t t0 = rt->opt.stats ? br_now_ns() : 0;
        if (in->exec == EX_DIST && !dist && !rt->no_dist && br_exec_mode() == BR_EXEC_DIST) {
            rc = rt_fail(rt, in->span, BR_EFAIL,
                         "operation '%s' runs distributed (-exec distributed), and distributed execution is "
                         "not available (run under mpirun)", in->opname);
            break;
        }
        if (in->exec == EX_DIST && !dist && !rt->no_dist) {
            rc = rt_fail(rt, in->span, BR_ENOMEM,
                         "operation '%s' needs %.*f GB (inputs and output), more than the local memory "
                         "budget of %.*f GB, and distributed execution is not available (run under mpirun)",
                         in->opname, br_gb_digits(in->opmem / 1e9), in->opmem / 1e9, br_gb_digits(br_mem_budget() / 1e9),
                         br_mem_budget() / 1e9);
            break;
        }
        /* distributed instructions run as jobs (dist/); compressed
         * inputs are decompressed here for operators that do not take
         * them (docs/cla.md) */
        if (in->guard && !guard_runs(c, regs, i)) {   /* an untaken ifelse branch */
            for (int k = 0; k < in->nfree; k++) val_release(&regs[in->frees[k]]);
            continue;
        }
        int step = in->lazy ? lazy_ifelse(in, regs, &e) : 0;
        ClaAfter after_loc[8], *after = NULL;
        if (in->kind == I_CALL && step == 0) {
            after = in->nin <= 8 ? after_loc : malloc((size_t)in->nin * sizeof *after);
            tl_call_after = after ? cla_rt_call_after(f, c, i, regs, after) : NULL;
        }
        LinItem *lin_pre = NULL, *lin_args[16];
        if (lr) {
            if (in->kind == I_READ) {   /* before a move takes the variable */
                Value *v = st_get(&f->vars, in->name);
                lin_pre = st_get_lin(&f->vars, in->name);
                if (!lin_pre && v) lin_pre = lin_literal(rt->lin, v, in->name);
            } else if (in->kind == I_CALL) {
                LinItem **la = in->nin <= 16 ? lin_args : malloc((size_t)in->nin * sizeof *la);
                for (int k = 0; la && k < in->nin; k++) la[k] = in->in[k] >= 0 ? lr[in->in[k]] : NULL;
                tl_call_args = la;
            } else if (in->kind == I_BUILTIN && in->bi == BI_LINEAGE && step == 0)
                step = lin_builtin(rt->lin, in, lr, &regs[in->out], &e);
        }
        /* distributed jobs read their inputs' cells (lazy GPU results) */
        if (step == 0 && dist && gpu && in->exec == EX_DIST) step = rt_gpu_host_inputs(in, regs, &e);
        if (dist && step == 0) step = rt_dist_step(rt, c, f, in, regs, &e);
        /* the GPU backend where it has the operator (docs/gpu.md); on the
         * CPU, device-only inputs land first */
        if (step == 0 && gpu) step = rt_gpu_step(in, regs, &e);
        if (step == 0 && gpu && in->kind == I_FUSED && fused) step = rt_gpu_fused(rt->prog->cg, in, regs, &e);
        if (step == 0 && gpu) step = rt_gpu_host_inputs(in, regs, &e);
        /* a read the mode compresses may pass the budget (docs/cla.md
         * "Larger than the budget"; cla_rt_after checks the result) */
        bool past = step == 0 && !dist && cla_rt_read_past(rt, in);
        bool was_past = past ? io_read_past_budget(true) : false;
        /* a binary file larger than the budget: compressed as it is read */
        if (past) step = cla_rt_read_stream(rt, in, regs, &e);
        int xrc = step < 0 ? -1 : step > 0 ? 0
                : cla_rt_has_input(in, regs) ? cla_rt_exec(rt, f, in, regs, c->nregs, exec_instr, &e)
                                             : exec_instr(rt, f, in, regs, &e);
        if (past) io_read_past_budget(was_past);
        if (!xrc && step == 0 && (rt->opt.cla || (regs[in->out].kind == V_MATRIX && regs[in->out].cla_lazy)))
            xrc = cla_rt_after(rt, f, c, i, regs, &e);
        if (after != after_loc) free(after);
        tl_call_after = NULL;
        if (lr) {
            if (in->kind == I_CALL) {
                if (tl_call_args && tl_call_args != lin_args) free(tl_call_args);
                tl_call_args = NULL;
                lr[in->out] = xrc ? NULL : tl_call_out;
                tl_call_out = NULL;
            } else if (!xrc && in->kind == I_READ) lr[in->out] = lin_pre;
            else if (!xrc && in->kind == I_OUT) {
                /* a call's output, or one output of a builtin (its item) */
                LinItem *li = in->in[0] >= 0 ? lr[in->in[0]] : NULL;
                bool call = li && strcmp(li->opcode, LIN_FCALL) == 0 && in->out_index < li->nin;
                lr[in->out] = call ? li->in[in->out_index] : li;
            } else if (!xrc) lr[in->out] = lin_after(rt->lin, in, regs, lr);
        }
        if (xrc) {
            if (!rt->err.code) {
                if (e.code) rt_fail(rt, in->span, e.code, "%s", e.msg);
                else rt_fail(rt, in->span, BR_EFAIL, "failed");
            }
            rc = -1;
            break;
        }
        int64_t took = br_now_ns() - t0;
        double bnd = __atomic_load_n(&rt_bound_on, __ATOMIC_RELAXED) && rt_bound_enabled() ? rt_bound_instr(in, regs)
                                                                                            : 0;
        if (rt->opt.stats && in->kind != I_LIT) stat_add(rt, in->statname, took, bnd);
        const Value *o = &regs[in->out];
        if (o->kind == V_MATRIX && o->m && o->m->rows * o->m->cols > seen) seen = o->m->rows * o->m->cols;
        for (int k = 0; k < in->nfree; k++) val_release(&regs[in->frees[k]]);
        if (rt->stopped) rc = -1;
    }
    /* the code may run in several parfor workers at once: a relaxed
     * maximum (a lost update only delays the small-block rule) */
    if (__atomic_load_n(&c->seen_cells, __ATOMIC_RELAXED) < seen)
        __atomic_store_n(&((Code *)c)->seen_cells, seen, __ATOMIC_RELAXED);
    for (int i = 0; i < c->nw && !rc; i++)
        if (st_put(&f->vars, c->wnames[i], val_retain(regs[c->wregs[i]])) ||
            (lr && st_set_lin(&f->vars, c->wnames[i], lr[c->wregs[i]])))
            rc = rt_fail(rt, (Span){0}, BR_ENOMEM, "out of memory");
    free(lr);
    if (keep && !rc) { *keep = regs; return 0; }
    for (int i = 0; i < c->nregs; i++) val_release(&regs[i]);
    if (!onstack) free(regs);
    return rc;
}

static void free_regs(Value *regs, int n)
{
    for (int i = 0; i < n; i++) val_release(&regs[i]);
    free(regs);
}

/* Drops variables that are dead after block b. */
static void drop_dead(Frame *f, const PBlock *b)
{
    for (int i = st_next(&f->vars, 0); i >= 0; i = st_next(&f->vars, i + 1))
        if (!ns_has(&b->live_out, f->vars.keys[i])) st_remove(&f->vars, f->vars.keys[i]);
}

static int exec_block(Rt *rt, Frame *f, PBlock *b);

static __thread const RtCont *tl_cont;

const RtCont *rt_cont(void) { return tl_cont; }

int rt_exec_list(Rt *rt, Frame *f, PBList *l) { return rt_exec_body(rt, f, l, 0); }

int rt_exec_body(Rt *rt, Frame *f, PBList *l, double left)
{
    RtCont node = {l, 0, f, tl_cont, left};
    tl_cont = &node;
    int rc = 0;
    for (int i = 0; i < l->n && !rc; i++) {
        node.i = i;
        if (exec_block(rt, f, l->v[i])) rc = -1;
        else drop_dead(f, l->v[i]);
    }
    tl_cont = node.up;
    return rc;
}

/* Recompiles b's DAG with the frame's sizes (dynamic recompilation, seed
 * 002 section 4, through the compiler's hook), or reuses the code of an
 * earlier recompilation with the same sizes; returns the code to run
 * (release *ref with the hook), NULL without memory. */
static Code *recompile(Rt *rt, Frame *f, PBlock *b, int mode, void **ref)
{
    const RtHooks *hk = rt->prog->hooks;
    int64_t t0 = br_now_ns();
    bool hit = false;
    Code *code = hk->recompile(rt->prog, b, &f->vars, mode, rt->in_parfor, ref, &hit);
    int64_t dt = br_now_ns() - t0;
    if (hit) {
        __atomic_add_fetch(&rt->nrc_hits, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&rt->rc_hit_ns, dt, __ATOMIC_RELAXED);
        return code;
    }
    __atomic_add_fetch(&rt->nrecompile, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&rt->recompile_ns, dt, __ATOMIC_RELAXED);
    if (rt->opt.stats) {
        pthread_mutex_lock(&rt->lock);
        if (!rt->rc_samples) rt->rc_samples = malloc(65536 * sizeof(int32_t));
        if (rt->rc_samples && rt->nrc_samples < 65536) rt->rc_samples[rt->nrc_samples++] = (int32_t)(dt / 1000);
        pthread_mutex_unlock(&rt->lock);
    }
    if (rt->opt.explain_recompile && code) {
        pthread_mutex_lock(&rt->lock);
        FILE *eo = rt->opt.explain_out ? rt->opt.explain_out : rt->opt.out;
        fprintf(eo, "RECOMPILED DAG (%s:%d):\n", b->span.file ? b->span.file : "<script>", b->span.line);
        hk->explain(*ref, eo);
        pthread_mutex_unlock(&rt->lock);
    }
    if (rt->opt.recompiled && code) {
        pthread_mutex_lock(&rt->lock);
        rt->opt.recompiled(rt->opt.recompiled_ctx, b, *ref);
        pthread_mutex_unlock(&rt->lock);
    }
    return code;
}

/* Does b's code get recompiled before this execution? Always when its
 * sizes were unknown at compile time; when it reads a variable that
 * sysds.compressed.linalg=auto may compress (Code.cla_maybe), only if
 * one of its reads holds a compressed value now. */
static bool needs_recompile(const Rt *rt, Frame *f, const PBlock *b)
{
    const Code *c = b->code;
    if (!c || rt->prog->optlevel <= 0 || !rt->prog->hooks) return false;
    if (c->recompile) return true;
    for (int i = 0; c->cla_maybe && i < c->n; i++) {
        if (c->ins[i].kind != I_READ) continue;
        const Value *v = st_get(&f->vars, c->ins[i].name);
        if (v && v->kind == V_MATRIX && mb_is_cmb(v->m)) return true;
    }
    return false;
}

static int eval_pred(Rt *rt, Frame *f, PBlock *b, bool *res)
{
    Value *regs;
    void *ref = NULL;
    Code *code = b->code;
    if (needs_recompile(rt, f, b)) {
        if (!(code = recompile(rt, f, b, CG_PRED, &ref))) {
            rt->prog->hooks->release(ref);
            return rt_fail(rt, b->span, BR_ENOMEM, "out of memory in recompilation");
        }
    }
    int rc = exec_code(rt, f, code, &regs);
    bool ok = false;
    BrErr e = {0};
    if (!rc) {
        ok = val_truth(&regs[code->pred_reg], res, &e);
        free_regs(regs, code->nregs);
    }
    if (ref) rt->prog->hooks->release(ref);
    if (rc) return -1;
    if (!ok) return rt_fail(rt, b->span, e.code, "%s", e.msg);
    return 0;
}

/* Iteration values of a for/parfor header. */
typedef struct Iter { double from, to, incr; bool ints; int64_t n; } Iter;

static int eval_header(Rt *rt, Frame *f, PBlock *b, Iter *it)
{
    Value *regs;
    if (exec_code(rt, f, b->code, &regs)) return -1;
    Value *v[3] = {NULL, NULL, NULL};
    for (int k = 0; k < 3; k++) v[k] = b->code->for_regs[k] >= 0 ? &regs[b->code->for_regs[k]] : NULL;
    double x[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++) {
        if (!v[k]) continue;
        if (!val_is_numeric(v[k]) && !(v[k]->kind == V_MATRIX && v[k]->m->rows * v[k]->m->cols == 1)) {
            free_regs(regs, b->code->nregs);
            return rt_fail(rt, b->span, BR_EARG, "for loop bounds must be numeric scalars");
        }
        x[k] = v[k]->kind == V_MATRIX ? mb_get(v[k]->m, 0, 0) : val_as_double(v[k]);
    }
    free_regs(regs, b->code->nregs);
    if (isnan(x[0]) || isnan(x[1]) || isnan(x[2]))
        return rt_fail(rt, b->span, BR_EARG, "for loop bounds must not be NaN");
    /* the loop variable is a 64-bit integer: a bound it cannot hold
     * (1:2^63, 1:1e19, 1:(1/0)) is an error, not a saturated count */
    for (int k = 0; k < 3; k++)
        if (!(fabs(x[k]) < 0x1p63))
            return rt_fail(rt, b->span, BR_EARG, "for loop bound %g is out of the range of 64-bit integers", x[k]);
    /* As SystemDS: the loop variable is an integer; the bounds are cut
     * toward zero (so 1:n/2 runs to floor(n/2)); the count from the exact
     * bounds decides only whether the loop runs at all. */
    it->ints = true;
    it->from = (double)ops_dml_long(x[0]);
    it->to = (double)ops_dml_long(x[1]);
    it->incr = v[2] ? (double)ops_dml_long(x[2]) : (it->from <= it->to ? 1 : -1);
    if (it->incr == 0) {
        if (!v[2] || x[2] == 0) return rt_fail(rt, b->span, BR_EARG, "for loop increment must be non-zero");
        /* a fractional increment cut to 0: SystemDS then runs no
         * iteration when from < to, and never stops otherwise */
        if (it->from >= it->to)
            return rt_fail(rt, b->span, BR_EARG, "for loop increment %g is cut to 0 (loop variables are "
                           "integers): the loop would not end", x[2]);
        fprintf(stderr, "%s:%d:%d: warning: for loop increment %g is cut to 0 (loop variables are integers, "
                "as in SystemDS): the loop does not run\n", b->span.file ? b->span.file : "<script>",
                b->span.line, b->span.col, x[2]);
        it->n = 0;
        return 0;
    }
    double dincr = v[2] ? x[2] : it->incr;
    double cnt = floor((it->to - it->from) / it->incr) + 1;
    if (cnt >= 0x1p63)
        return rt_fail(rt, b->span, BR_EARG, "for loop runs %g iterations, more than a 64-bit count holds", cnt);
    it->n = cnt > 0 && 1 + floor(x[1] / dincr - x[0] / dincr) > 0 ? (int64_t)cnt : 0;
    return 0;
}

static Value iter_value(const Iter *it, int64_t k)
{
    double v = it->from + (double)k * it->incr;
    return it->ints ? val_int((int64_t)llround(v)) : val_double(v);
}


/* Merges a parfor accumulator result (R += ... in the body): R's value
 * before the loop plus every worker's change, added in worker order. */
static int merge_accum(Rt *rt, Frame *f, PBlock *b, Frame *w, int k, const char *name)
{
    MB *orig = st_get(&f->vars, name)->m;
    BrErr e = {0};
    MB *res = mb_to_dense(orig, &e);
    if (!res) return rt_fail(rt, b->span, e.code, "%s", e.msg);
    for (int t = 0; t < k; t++) {
        Value *wv = st_get(&w[t].vars, name);
        if (!wv || wv->kind != V_MATRIX || wv->m == orig) continue;
        MB *wm = wv->m;
        if (wm->rows != orig->rows || wm->cols != orig->cols) {
            mb_release(res);
            return rt_fail(rt, b->span, BR_EDIM, "parfor result '%s' changed its dimensions", name);
        }
        for (int64_t i = 0; i < orig->rows; i++)
            for (int64_t j = 0; j < orig->cols; j++)
                res->d[i * res->cols + j] += mb_get(wm, i, j) - mb_get(orig, i, j);
    }
    mb_values_changed(res);   /* (mb_to_dense kept orig's flag) */
    mb_recount_nnz(res);
    mb_examine(res, &e);
    if (st_put(&f->vars, name, val_matrix(res))) return rt_fail(rt, b->span, BR_ENOMEM, "out of memory");
    return 0;
}

/* The worst-case memory of one iteration of a loop body: its largest
 * operation whose worst-case estimate is bounded (plan time, hop.h);
 * 0 when none is. */
static double body_mem(const PBList *l)
{
    double m = 0;
    for (int i = 0; i < l->n; i++) {
        const PBlock *b = l->v[i];
        for (int k = 0; b->code && k < b->code->n; k++)
            if (b->code->ins[k].opmem > m) m = b->code->ins[k].opmem;
        double sub = body_mem(&b->body), els = body_mem(&b->els);
        if (sub > m) m = sub;
        if (els > m) m = els;
    }
    return m;
}

/* parfor's degree of parallelism: the threads (or par=), at most the
 * iterations, and at most as many workers as copies of the body's
 * largest operation fit in the memory budget (the parfor optimizer's
 * memory constraint; each worker runs its own iteration at a time).
 * pkey: this loop run's perturbation key (base/perturb.h). */
static int parfor_degree(Rt *rt, const PBlock *b, int64_t n, uint64_t pkey)
{
    int k = b->parfor_par > 0 ? b->parfor_par : br_threads();
    if (k > br_threads()) k = br_threads();
    /* schedule perturbation: 1 to 8 workers, whatever the threads */
    if (br_perturb_on() && n > 0) k = 1 + (int)br_perturb_draw(PT_PARFOR_DEGREE, pkey, 0, 8);
    if (k > n) k = (int)n;
    double m = body_mem(&b->body);
    if (k > 1 && m > 0 && (double)k * m > br_mem_budget()) {
        double fit = floor(br_mem_budget() / m);
        k = fit < 1 ? 1 : (int)fit;
        pthread_mutex_lock(&rt->lock);
        rt->npf_memlimited++;
        if (!rt->pf_least_degree || k < rt->pf_least_degree) rt->pf_least_degree = k;
        pthread_mutex_unlock(&rt->lock);
    }
    return k;
}

/* Schedule perturbation (perturb.h): a seeded order of the n iterations
 * (NULL when off, or too many to hold); key identifies this loop run. */
static int64_t *perturbed_order(int64_t n, uint64_t key)
{
    if (!br_perturb_on() || n > (1 << 22)) return NULL;
    int64_t *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);
    if (!p) return NULL;
    for (int64_t i = 0; i < n; i++) p[i] = i;
    for (int64_t i = n - 1; i > 0; i--) {   /* Fisher-Yates */
        int64_t j = (int64_t)br_perturb_draw(PT_PARFOR_ORDER, key, (uint64_t)i, (uint64_t)i + 1);
        int64_t t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
    return p;
}

/* The loop variable's item: a literal of its value (ForProgramBlock). */
static int lin_loopvar(Rt *rt, Frame *f, const PBlock *b)
{
    if (!rt->lin) return 0;
    LinItem *li = lin_literal(rt->lin, st_get(&f->vars, b->var), b->var);
    return li ? st_set_lin(&f->vars, b->var, li) : BR_ENOMEM;
}

/* A for loop: the iterations in order (seeds continue the caller's
 * stream, unlike a parfor's). */
static int exec_for(Rt *rt, Frame *f, PBlock *b, const Iter *it)
{
    for (int64_t k = 0; k < it->n; k++) {
        if (st_put(&f->vars, b->var, iter_value(it, k)) || lin_loopvar(rt, f, b))
            return rt_fail(rt, b->span, BR_ENOMEM, "out of memory");
        if (rt_exec_body(rt, f, &b->body, (double)(it->n - k - 1))) return -1;
    }
    return 0;
}

/* A parfor's iterations first, first + step, ... below it->n, serially,
 * each with its seed stream (seeds.c). */
static int exec_for_share(Rt *rt, Frame *f, PBlock *b, const Iter *it, int64_t first, int64_t step, uint64_t sbase)
{
    RtSeedState saved = rt_seed_save();
    int rc = 0;
    for (int64_t k = first; k < it->n && !rc; k += step) {
        rt_seed_iter(rt, sbase, k);
        if (st_put(&f->vars, b->var, iter_value(it, k)) || lin_loopvar(rt, f, b))
            rc = rt_fail(rt, b->span, BR_ENOMEM, "out of memory");
        else if (rt_exec_body(rt, f, &b->body, (double)((it->n - 1 - k) / step))) rc = -1;
    }
    rt_seed_restore(saved);
    return rc;
}

/* Iterations first, first + step, ... of parfor b on worker threads,
 * each with its own copy of the frame; result variables (left-indexed
 * matrices defined before the loop) are merged afterwards: every cell a
 * worker changed is taken from it. Serial where the loop cannot run in
 * parallel (analysis, one worker, already inside a parfor). Under
 * schedule perturbation the degree (1 to 8 workers, within the memory
 * budget), the order of the iterations and pauses between them are
 * seeded draws. */
static int exec_parfor_share(Rt *rt, Frame *f, PBlock *b, const Iter *it, int64_t first, int64_t step,
                             uint64_t sbase, int *degree)
{
    int64_t cnt = it->n > first ? (it->n - first + step - 1) / step : 0;
    uint64_t pkey = ((uint64_t)b->span.line << 32 | (uint64_t)b->span.col) ^ (br_perturb_next_call(PT_PARFOR_ORDER) << 48);
    int k = parfor_degree(rt, b, cnt, pkey);
    *degree = 1;
    if (!b->par_ok || k < 2 || rt->in_parfor) return exec_for_share(rt, f, b, it, first, step, sbase);
    /* results must exist as matrices before the loop */
    for (int r = 0; r < b->results.n; r++) {
        Value *v = st_get(&f->vars, b->results.v[r]);
        if (!v || v->kind != V_MATRIX || ns_has(&b->accums, b->results.v[r]))
            return exec_for_share(rt, f, b, it, first, step, sbase);
    }
    for (int r = 0; r < b->accums.n; r++) {
        Value *v = st_get(&f->vars, b->accums.v[r]);
        if (!v || v->kind != V_MATRIX) return exec_for_share(rt, f, b, it, first, step, sbase);
    }
    Frame *w = calloc((size_t)k, sizeof(Frame));
    if (!w) return rt_fail(rt, b->span, BR_ENOMEM, "out of memory");
    int oom = 0;
    for (int t = 0; t < k; t++) {
        oom |= st_copy(&w[t].vars, &f->vars);
        w[t].depth = f->depth;
        w[t].cla_after = f->cla_after;
    }
    if (oom) {
        for (int t = 0; t < k; t++) st_free(&w[t].vars);
        free(w);
        return rt_fail(rt, b->span, BR_ENOMEM, "out of memory");
    }
    rt->in_parfor = true;
    int nt = k;
    *degree = k;
    int64_t *order = perturbed_order(cnt, pkey);
#pragma omp parallel for num_threads(nt) schedule(static, 1)
    for (int t = 0; t < nt; t++) {
        ClaStats *prev = cla_stats_bind(&rt->cla);   /* workers count into the run's */
        BrPool *prev_pool = br_pool_bind(rt->pool);
        RtSeedState saved = rt_seed_save();
        PtThread pt = br_perturb_thread_save();
        if (order) br_perturb_thread_start(t);
        for (int64_t i = t; i < cnt && !rt->stopped; i += nt) {
            if (order) br_perturb_pause(pkey, (uint64_t)i);
            int64_t ix = first + (order ? order[i] : i) * step;
            rt_seed_iter(rt, sbase, ix);
            if (st_put(&w[t].vars, b->var, iter_value(it, ix))) {
                rt_fail(rt, b->span, BR_ENOMEM, "out of memory");
                break;
            }
            if (rt_exec_body(rt, &w[t], &b->body, (double)((cnt - 1 - i) / nt))) break;
        }
        if (order) br_perturb_thread_restore(&pt);   /* the thread's own streams again */
        rt_seed_restore(saved);
        cla_stats_bind(prev);
        br_pool_bind(prev_pool);
    }
    free(order);
    rt->in_parfor = false;
    int rc = rt->err.code ? -1 : rt_parfor_merge(rt, f, b, w, k);
    for (int t = 0; t < k; t++) st_free(&w[t].vars);
    free(w);
    return rc;
}

int rt_parfor_share(Rt *rt, Frame *f, PBlock *b, double from, double incr, bool ints, int64_t n, int64_t first,
                    int64_t step, uint64_t sbase, int *degree)
{
    Iter it = {.from = from, .incr = incr, .ints = ints, .n = n};
    return exec_parfor_share(rt, f, b, &it, first, step, sbase, degree);
}

/* parfor: on the MPI ranks (mode=REMOTE_SPARK under mpirun), else on
 * worker threads; iteration k draws its seeds from the stream of (the
 * loop's base, k) wherever it runs. */
static int exec_parfor(Rt *rt, Frame *f, PBlock *b, const Iter *it)
{
    uint64_t sbase = rt_seed_loop_base(rt);
    if (b->parfor_remote && b->par_ok && !rt->in_parfor && !rt->no_dist && dist_active() && dist_size() > 1) {
        int drc = rt_dist_parfor(rt, f, b, it->from, it->incr, it->n, it->ints, sbase);
        if (drc != DIST_LOCAL) return drc;
    }
    int k;
    return exec_parfor_share(rt, f, b, it, 0, 1, sbase, &k);
}

int rt_parfor_merge(Rt *rt, Frame *f, PBlock *b, Frame *w, int k)
{
    int rc = 0;
    for (int r = 0; r < b->results.n && !rc; r++) {
        const char *name = b->results.v[r];
        MB *orig = st_get(&f->vars, name)->m;
        BrErr e = {0};
        MB *res = mb_to_dense(orig, &e);
        if (!res) { rc = rt_fail(rt, b->span, e.code, "%s", e.msg); break; }
        for (int t = 0; t < k; t++) {
            Value *wv = st_get(&w[t].vars, name);
            if (!wv || wv->kind != V_MATRIX || wv->m == orig) continue;
            MB *wm = wv->m;
            if (wm->rows != orig->rows || wm->cols != orig->cols) {
                rc = rt_fail(rt, b->span, BR_EDIM, "parfor result '%s' changed its dimensions", name);
                break;
            }
            for (int64_t i = 0; i < orig->rows; i++)
                for (int64_t j = 0; j < orig->cols; j++) {
                    double nv = mb_get(wm, i, j), ov = mb_get(orig, i, j);
                    if (nv != ov && !(isnan(nv) && isnan(ov))) res->d[i * res->cols + j] = nv;
                }
        }
        mb_values_changed(res);   /* (mb_to_dense kept orig's flag) */
        mb_recount_nnz(res);
        mb_examine(res, &e);
        if (st_put(&f->vars, name, val_matrix(res))) rc = rt_fail(rt, b->span, BR_ENOMEM, "out of memory");
    }
    for (int r = 0; r < b->accums.n && !rc; r++) rc = merge_accum(rt, f, b, w, k, b->accums.v[r]);
    return rc;
}

static int exec_block(Rt *rt, Frame *f, PBlock *b)
{
    if (rt->stopped) return -1;
    switch (b->kind) {
    case PB_GENERIC:
        if (needs_recompile(rt, f, b)) {
            void *ref = NULL;
            Code *code = recompile(rt, f, b, CG_BLOCK, &ref);
            int rc = code ? exec_code(rt, f, code, NULL)
                          : rt_fail(rt, b->span, BR_ENOMEM, "out of memory in recompilation");
            rt->prog->hooks->release(ref);
            return rc;
        }
        return exec_code(rt, f, b->code, NULL);
    case PB_IF: {
        bool c;
        if (eval_pred(rt, f, b, &c)) return -1;
        return rt_exec_list(rt, f, c ? &b->body : &b->els);
    }
    case PB_WHILE:
        if (cla_rt_loop_entry(rt, f, b, -1)) return -1;
        for (int64_t n = 0;; n++) {
            bool c;
            if (eval_pred(rt, f, b, &c)) return -1;
            if (!c) {
                if (rt->opt.loop_stats) rt_loop_done(rt, b, n);
                return 0;
            }
            if (rt_exec_body(rt, f, &b->body, -1)) return -1;
        }
    case PB_FOR: {
        Iter it;
        if (eval_header(rt, f, b, &it)) return -1;
        if (cla_rt_loop_entry(rt, f, b, it.n)) return -1;
        int rc = b->parfor ? exec_parfor(rt, f, b, &it) : exec_for(rt, f, b, &it);
        if (!rc && rt->opt.loop_stats) rt_loop_done(rt, b, it.n);
        return rc;
    }
    }
    return 0;
}

int rt_run_main(Rt *rt, Frame *f)
{
    ClaStats *prev = cla_stats_bind(&rt->cla);   /* this run's counters */
    BrPool *prev_pool = br_pool_bind(rt->pool);
    int rc = rt_exec_list(rt, f, &rt->prog->main);
    br_pool_bind(prev_pool);
    cla_stats_bind(prev);
    return rc;
}

/* A new reference to an argument, a numeric scalar converted to its
 * parameter's declared value type as SystemDS does (Double x given 3
 * sees 3.0; Integer k given 2.7 sees 2). */
static Value convert_arg(const Param *p, Value v)
{
    if (p->dt != DT_SCALAR || !val_is_numeric(&v)) return val_retain(v);
    double d = val_as_double(&v);
    switch (p->vt) {
    case VT_DOUBLE: return v.kind == V_DOUBLE ? v : val_double(d);
    case VT_INT: return v.kind == V_INT ? v : val_int(ops_dml_long(d));
    case VT_BOOL: return v.kind == V_BOOL ? v : val_bool(d != 0);
    default: return val_retain(v);
    }
}

/* -bindcheck: the binding report of a call (bindcheck.h), with the
 * arguments converted as the body's frame would hold them. */
static int bindcheck(Rt *rt, const Func *fn, const Value *args, Value *out)
{
    Value loc[16], *cv = fn->nin <= 16 ? loc : malloc((size_t)fn->nin * sizeof *cv);
    if (!cv) return rt_fail(rt, fn->span, BR_ENOMEM, "out of memory");
    for (int i = 0; i < fn->nin; i++) cv[i] = convert_arg(&fn->in[i], args[i]);
    int rc = rt_bindcheck_call(rt, fn, cv, out);
    for (int i = 0; i < fn->nin; i++) val_release(&cv[i]);
    if (cv != loc) free(cv);
    return rc;
}

/* Bytes of stack left below the current frame on this thread (SIZE_MAX
 * if unknown); the bounds are looked up once per thread. */
static size_t stack_left(void)
{
    static __thread uintptr_t lo;
    static __thread bool known;
    if (!known) {
        known = true;
        pthread_attr_t a;
        void *addr = NULL;
        size_t size = 0;
        if (pthread_getattr_np(pthread_self(), &a) == 0) {
            if (pthread_attr_getstack(&a, &addr, &size) == 0) lo = (uintptr_t)addr;
            pthread_attr_destroy(&a);
        }
    }
    char here;
    uintptr_t sp = (uintptr_t)&here;
    return lo && sp > lo ? (size_t)(sp - lo) : SIZE_MAX;
}

int rt_call(Rt *rt, Frame *caller, Func *fn, Value *args, Value *out)
{
    int rc = call(rt, caller, fn, NULL, args, out);
    /* the caller is C code (a builtin: paramserv, eval) that reads the
     * results' cells: GPU results land here (docs/gpu.md) */
    BrErr e;
    if (!rc && gpu_mode() != GPU_OFF && val_host(out, &e)) rc = rt_fail(rt, fn->span, e.code, "%s", e.msg);
    return rc;
}

/* A call of fn: its specialization spec when the arguments are what it
 * was compiled for, else the generic version. */
static int call(Rt *rt, Frame *caller, Func *fn, FProg *spec, Value *args, Value *out)
{
    const ClaAfter *after = tl_call_after;   /* this call's, from exec_code */
    tl_call_after = NULL;
    Span sp = fn->span;
    /* deep recursion fails cleanly before the thread's stack runs out */
    if (caller->depth >= MAX_DEPTH || stack_left() < ((size_t)1 << 20))
        return rt_fail(rt, sp, BR_EFAIL, "function call depth %d exceeds the limit (infinite recursion?) in '%s'",
                       caller->depth + 1, fn->name);
    if (rt->opt.bindcheck) return bindcheck(rt, fn, args, out);
    FProg *fp = spec && fprog_accepts(spec, args) ? spec : rt->prog->hooks->function(rt->prog, fn, rt->diag);
    const char *why = !fp && rt->prog->fetch ? rt_dist_fetch_why() : NULL;
    if (why) return rt_fail(rt, sp, BR_EFAIL, "function '%s': %s", fn->name, why);
    if (!fp) return rt_fail(rt, sp, BR_EFAIL, "function '%s' failed to compile", fn->name);
    LinItem **largs = tl_call_args;   /* the caller's argument items */
    tl_call_args = NULL;
    Frame nf;
    st_init(&nf.vars);
    nf.depth = caller->depth + 1;
    nf.cla_after = after ? after : caller->cla_after;
    int rc = 0;
    /* lineage passes through a call: parameters carry the arguments'
     * items (FunctionCallCPInstruction), outputs return theirs */
    for (int i = 0; i < fn->nin && !rc; i++)
        if (args[i].kind != V_NONE &&
            (st_put(&nf.vars, fn->in[i].name, convert_arg(&fn->in[i], args[i])) ||
             (rt->lin && st_set_lin(&nf.vars, fn->in[i].name,
                                    largs && largs[i] ? largs[i] : lin_literal(rt->lin, &args[i], fn->in[i].name)))))
            rc = rt_fail(rt, sp, BR_ENOMEM, "out of memory");
    if (!rc) rc = rt_exec_list(rt, &nf, &fp->body);
    if (!rc) {
        Value l = val_list_new(fn->nout);
        BrErr e = {0};
        for (int i = 0; i < fn->nout && !rc; i++) {
            Value *v = st_get(&nf.vars, fn->out[i].name);
            if (!v) {
                rc = rt_fail(rt, fn->out[i].span, BR_EFAIL, "output '%s' of function '%s' was not assigned",
                             fn->out[i].name, fn->name);
                break;
            }
            if (list_append(l.kind == V_LIST ? l.l : NULL, val_retain(*v), NULL, &e))
                rc = rt_fail(rt, sp, e.code, "%s", e.msg);
        }
        if (rc) val_release(&l);
        else *out = l;
        if (!rc && rt->lin) {
            LinItem *lo[16], **o = fn->nout <= 16 ? lo : malloc((size_t)fn->nout * sizeof *o);
            int no = 0;
            for (int i = 0; o && i < fn->nout; i++) {
                LinItem *x = st_get_lin(&nf.vars, fn->out[i].name);
                if (!x) x = lin_literal(rt->lin, st_get(&nf.vars, fn->out[i].name), fn->out[i].name);
                if (x) o[no++] = x;
            }
            tl_call_out = o && no == fn->nout ? lin_item(rt->lin, LIN_FCALL, "", o, no) : NULL;
            if (o != lo) free(o);
        }
    }
    st_free(&nf.vars);
    return rc;
}
