/* distexec.c: the interpreter's side of distributed execution (dist/):
 * instructions whose execution type is EX_DIST run as distributed
 * operators; a local instruction that meets a distributed operand has it
 * collected to rank 0 first; and a variable whose matrix was scattered
 * for an operator keeps the distributed form, so later blocks (and loop
 * iterations) find it partitioned instead of scattering it again. */
#include "distexec.h"

#include "../dist/dist.h"
#include "../io/io.h"
#include "../codegen/cgrun.h"

#include <stdlib.h>

#include <string.h>
#include <sys/stat.h>

/* After a distributed operator scattered one of its inputs: the variable
 * the input was read from now names the distributed matrix (registers are
 * numbered by the instruction that writes them). */
#define MAX_BEFORE 32   /* inputs whose kinds are remembered (fused operators have many) */
static int keep_scattered(const Code *c, Frame *f, const Instr *in, const VKind *before, Value *regs)
{
    for (int k = 0; k < in->nin; k++) {
        int r = in->in[k];
        if (r < 0 || k >= MAX_BEFORE || before[k] != V_MATRIX || regs[r].kind != V_DIST) continue;
        const Instr *src = &c->ins[r];
        if (src->kind == I_READ && !src->move && st_put(&f->vars, src->name, val_retain(regs[r]))) return -1;
    }
    return 0;
}

/* Argument k of an instruction, NULL when not given. */
static Value *arg(const Instr *in, Value *regs, int k)
{
    return k < in->nin && in->in[k] >= 0 && regs[in->in[k]].kind != V_NONE ? &regs[in->in[k]] : NULL;
}

/* A count argument (rows, cols) that fits an int64. */
static bool count_arg(const Value *v, int64_t *out)
{
    if (!val_is_numeric(v)) return false;
    double d = val_as_double(v);
    if (!(d > -1e18 && d < 1e18)) return false;
    *out = (int64_t)d;
    return true;
}

/* naStrings: a list of strings, or one string of comma-separated ones
 * (as b_read splits it); items point into *buf (the caller frees it). */
static bool na_opts(const Value *v, const char **items, int *n, char **buf)
{
    *n = 0;
    if (v->kind == V_LIST) {
        if (v->l->n > RT_MAX_NA) return false;
        for (int i = 0; i < v->l->n; i++) {
            if (v->l->items[i].kind != V_STRING) return false;
            items[(*n)++] = v->l->items[i].s->s;
        }
        return true;
    }
    if (v->kind != V_STRING || !(*buf = strdup(v->s->s))) return false;
    char *save = NULL;
    for (char *tok = strtok_r(*buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (*n == RT_MAX_NA) return false;
        items[(*n)++] = tok;
    }
    return true;
}

/* rt_read_opts_of: see distexec.h. */
bool rt_read_opts_of(const Value *const *a, IoReadOpts *o, const char **na, char **nabuf)
{
    io_read_opts_init(o);
    const Value *v;
    if ((v = a[1])) { if (v->kind != V_STRING) return false; o->format = v->s->s; }
    if ((v = a[2]) && !count_arg(v, &o->rows)) return false;
    if ((v = a[3]) && !count_arg(v, &o->cols)) return false;
    if ((v = a[4])) { if (v->kind != V_BOOL) return false; o->header = v->b; }
    if ((v = a[5])) { if (v->kind != V_STRING) return false; o->sep = v->s->s; }
    if ((v = a[6])) { if (v->kind != V_BOOL) return false; o->fill = v->b; }
    if ((v = a[7])) { if (!val_is_numeric(v)) return false; o->fill_value = val_as_double(v); o->has_fill_value = true; }
    if ((v = a[8])) {
        if (!na_opts(v, na, &o->n_na, nabuf)) return false;
        o->na_strings = na;
    }
    if ((v = a[9]) && (v->kind != V_STRING || strcmp(v->s->s, "matrix"))) return false;
    if ((v = a[15])) { if (v->kind != V_STRING) return false; o->ind_sep = v->s->s; }
    if ((v = a[16])) { if (v->kind != V_STRING) return false; o->dataset = v->s->s; }
    return true;
}

/* rt_read_opts: see distexec.h. */
bool rt_read_opts(const Instr *in, Value *regs, IoReadOpts *o, const char **na, char **nabuf)
{
    const Value *a[RT_READ_NARGS];
    for (int k = 0; k < RT_READ_NARGS; k++) a[k] = arg(in, regs, k);
    return rt_read_opts_of(a, o, na, nabuf);
}

/* read() of a matrix file in parallel when the instruction says so
 * (force) or, as the compiler does not know the file's size, when the
 * data exceed the local budget: binary files by rows, csv and text by
 * byte shares; DIST_LOCAL otherwise. */
static int dist_read(const Instr *in, Value *regs, bool force, BrErr *e)
{
    if (in->kind != I_BUILTIN || in->bi != BI_READ || !arg(in, regs, 0) || regs[in->in[0]].kind != V_STRING)
        return DIST_LOCAL;
    const char *path = regs[in->in[0]].s->s;
    IoReadOpts o;
    IoReadPlan p;
    BrErr pe = {0};
    const char *na[RT_MAX_NA];
    char *nabuf = NULL;
    int rc = DIST_LOCAL;
    if (!rt_read_opts(in, regs, &o, na, &nabuf) || io_read_plan(path, &o, &p, &pe)) goto done;
    if (p.meta.data_type[0] && strcmp(p.meta.data_type, "matrix")) goto done;
    /* libsvm shares are parsed with the default separators */
    if (!strcmp(p.format, "libsvm") && (p.lsep || p.lind)) goto done;
    /* local when, where the metadata give the size, the reader's need
     * fits (a local read past the budget would fail), and the file does:
     * the metadata first, so an oversized read opens no file here */
    if (!force && br_exec_mode() != BR_EXEC_DIST &&
        (p.rows < 0 || p.cols < 0 || io_read_need(p.rows, p.cols, p.nnz) <= br_mem_budget()) &&
        (double)io_data_bytes(path) <= br_mem_budget())
        goto done;
    if (io_fmt_anybin(p.format)) rc = dist_read_binary(&regs[in->in[0]], &regs[in->out], e);
    else rc = dist_read_text(&regs[in->in[0]], &p, &regs[in->out], e);
done:
    free(nabuf);
    return rc;
}

/* write() of a distributed matrix: part files written by every rank
 * (b_write's positions: x, file, format, header, sep). */
static int dist_write_instr(const Instr *in, Value *regs, BrErr *e)
{
    Value *x = arg(in, regs, 0), *f = arg(in, regs, 1), *fmt = arg(in, regs, 2), *hd = arg(in, regs, 3),
          *sep = arg(in, regs, 4);
    if (!x || x->kind != V_DIST || !f || f->kind != V_STRING || (fmt && fmt->kind != V_STRING) ||
        (hd && hd->kind != V_BOOL) || (sep && sep->kind != V_STRING))
        return DIST_LOCAL;
    IoWriteOpts o;
    io_write_opts_init(&o);
    o.format = fmt ? fmt->s->s : NULL;
    o.header = hd && hd->b;
    o.sep = sep ? sep->s->s : NULL;
    return dist_write(x, f->s->s, &o, e);
}

/* ---- fused operators over partitions (dist/distfused.c) ---- */

/* Rank 0's run of its own operator. */
/* (no size estimates: they are the whole matrix's, not the rank's rows) */
typedef struct FusedCtx { CgContext *cg; void *op; } FusedCtx;

static int fused_local(void *ctx, int nin, Value *args, Value *out, BrErr *e)
{
    FusedCtx *x = ctx;
    return cg_exec(x->cg, x->op, NULL, nin, args, out, e);
}

/* A fused instruction made ready for a distributed run: its
 * description (the plan packed, rank 0's own runner) and operands. Not
 * moved once prepared (d.ctx points into it). */
typedef struct FusedPrep {
    DistFused d;
    FusedCtx ctx;
    Value **args, *vals, none;
    bool *part;
} FusedPrep;

static void fused_unprep(FusedPrep *fp)
{
    free(fp->d.plan), free(fp->args), free(fp->vals), free(fp->part);
}

/* 0: prepared; DIST_LOCAL: it does not split by rows; -1: error. */
static int fused_prep(Rt *rt, const Instr *in, Value *regs, FusedPrep *fp, BrErr *e)
{
    CgContext *cg = rt->prog->cg;
    *fp = (FusedPrep){.none = val_none()};
    if (!cg || !in->fused || in->nin < 1) return DIST_LOCAL;
    fp->args = malloc((size_t)in->nin * sizeof *fp->args);
    fp->vals = malloc((size_t)in->nin * sizeof *fp->vals);
    fp->part = malloc((size_t)in->nin);
    if (!fp->args || !fp->vals || !fp->part) { br_err(e, BR_ENOMEM, "out of memory"); return -1; }
    for (int k = 0; k < in->nin; k++) {
        fp->args[k] = in->in[k] >= 0 ? &regs[in->in[k]] : &fp->none;
        fp->vals[k] = *fp->args[k];
    }
    if (!cg_dist_describe(in->fused, in->nin, fp->vals, fp->part, &fp->d)) return DIST_LOCAL;
    cg_op_compiled(cg, in->fused);
    fp->ctx = (FusedCtx){cg, in->fused};
    fp->d.local = fused_local, fp->d.ctx = &fp->ctx;
    fp->d.place = in->plan_place;
    fp->d.price[0] = in->plan_price[0], fp->d.price[1] = in->plan_price[1];
    if (!(fp->d.plan = cg_plan_pack(in->fused, &fp->d.plen))) { br_err(e, BR_ENOMEM, "out of memory"); return -1; }
    return 0;
}

/* A fused operator over distributed (or over-budget) operands: every
 * rank runs it over its rows; DIST_LOCAL when it does not split by rows
 * (then its operands are collected and it runs here). */
static int fused(Rt *rt, const Instr *in, Value *regs, BrErr *e)
{
    FusedPrep fp;
    int rc = fused_prep(rt, in, regs, &fp, e);
    if (!rc) rc = dist_fused(&fp.d, fp.args, in->nin, &regs[in->out], e);
    fused_unprep(&fp);
    return rc;
}

/* The partitions a fused reduce operator that may be piggybacked runs
 * over (its main input's), 0 if none. */
static int64_t fused_reduce_over(const Instr *in, const Value *regs)
{
    int m = in->kind == I_FUSED && in->fused ? cg_dist_reduce_main(in->fused) : -1;
    if (m < 0 || m >= in->nin || in->in[m] < 0 || regs[in->in[m]].kind != V_DIST) return 0;
    return regs[in->in[m]].dm->id;
}

static CgOptions g_wopt;
static CgContext *g_wcg;

static int fused_worker(const char *plan, size_t n, int nin, Value *args, Value *out, BrErr *e)
{
    if (!g_wcg && !(g_wcg = cg_context_new(&g_wopt))) return br_err(e, BR_ENOMEM, "out of memory");
    return cg_exec_packed(g_wcg, plan, n, nin, args, out, e);
}

void rt_dist_reset(void)
{
    dist_reset();
    cg_dist_reset();
    cg_context_free(g_wcg);
    g_wcg = NULL;
}

void rt_dist_fused_worker(const CgOptions *o)
{
    /* compiled before use (a job cannot wait for a background compile),
     * found again by the in-memory plan cache in every later job */
    g_wopt = *o;
    g_wopt.enabled = true, g_wopt.async = false, g_wopt.plancache = true, g_wopt.explain = NULL;
    dist_set_fused_runner(fused_worker);
}

/* An EX_DIST instruction as a distributed operator: 0 done, DIST_LOCAL
 * when there is none for these operands, -1 error. */
static int dist_instr(Rt *rt, const Code *c, Frame *f, const Instr *in, Value *regs, BrErr *e)
{
    Value none = val_none();
    Value *a[3];
    VKind before[MAX_BEFORE];
    for (int k = 0; k < MAX_BEFORE; k++) {
        Value *x = k < in->nin && in->in[k] >= 0 ? &regs[in->in[k]] : &none;
        if (k < 3) a[k] = x;
        before[k] = x->kind;
    }
    Value *out = &regs[in->out];
    dist_set_context(in->statname, in->span.line);
    int rc;
    switch (in->kind) {
    case I_UNARY: rc = dist_unary(in->op, a[0], out, e); break;
    case I_BINARY: rc = dist_binary(in->op, a[0], a[1], out, e); break;
    case I_TERNARY: rc = dist_ternary(a[0], a[1], a[2], out, e); break;
    case I_AGG: rc = dist_agg(in->op, in->dir, a[0], out, e); break;
    case I_MATMUL: rc = dist_matmul(in->op, in->left, a[0], a[1], a[2], out, e); break;
    case I_REORG: rc = dist_reorg(in->op, a[0], out, e); break;
    case I_BUILTIN: rc = dist_read(in, regs, true, e); break;
    case I_FUSED: rc = fused(rt, in, regs, e); break;
    default: rc = DIST_LOCAL; break;
    }
    if (rc >= 0 && keep_scattered(c, f, in, before, regs)) { br_err(e, BR_ENOMEM, "out of memory"); return -1; }
    return rc;
}

/* nrow, ncol and length of a distributed matrix: from its handle. */
static bool shape_builtin(const Instr *in, Value *regs)
{
    if (in->kind != I_BUILTIN || in->nin < 1 || in->in[0] < 0 || regs[in->in[0]].kind != V_DIST) return false;
    const DM *d = regs[in->in[0]].dm;
    switch (in->bi) {
    case BI_NROW: regs[in->out] = val_int(d->rows); return true;
    case BI_NCOL: regs[in->out] = val_int(d->cols); return true;
    case BI_LENGTH: regs[in->out] = val_int(d->rows * d->cols); return true;
    default: return false;
    }
}

/* Right indexing of a distributed matrix (only the selected rows move),
 * cbind of distributed matrices (partition by partition) and table of
 * distributed vectors, whatever the instruction's execution type. */
static int slice_or_bind(const Instr *in, Value *regs, BrErr *e)
{
    Value none = val_none();
    if (in->kind == I_RIX && in->nin >= 1 && in->in[0] >= 0 && regs[in->in[0]].kind == V_DIST) {
        Value args[5];
        for (int k = 0; k < 5; k++) {
            Value *a = k < in->nin && in->in[k] >= 0 ? &regs[in->in[k]] : &none;
            if (k > 0 && a->kind == V_DIST && dist_collect(a, e)) return -1;   /* an index */
            args[k] = *a;
        }
        const DM *d = regs[in->in[0]].dm;
        int64_t r[4];
        if (ap_rix_range(&in->ix, args, d->rows, d->cols, r, e)) return -1;
        return dist_rix(&regs[in->in[0]], r, &regs[in->out], e);
    }
    if (in->kind == I_LIX && in->nin >= 2 && in->in[0] >= 0 && regs[in->in[0]].kind == V_DIST) {
        /* the range from the index operands laid out as right indexing's */
        Value args[5] = {regs[in->in[0]], none, none, none, none};
        for (int k = 2; k < in->nin && k < 6; k++) {
            Value *a = in->in[k] >= 0 ? &regs[in->in[k]] : &none;
            if (a->kind == V_DIST && dist_collect(a, e)) return -1;
            args[k - 1] = *a;
        }
        const DM *d = regs[in->in[0]].dm;
        int64_t r[4];
        if (ap_rix_range(&in->ix, args, d->rows, d->cols, r, e)) return -1;
        Value *src = in->in[1] >= 0 ? &regs[in->in[1]] : &none;
        return dist_lix(&regs[in->in[0]], src, r, &regs[in->out], e);
    }
    if (in->kind == I_BUILTIN && in->bi == BI_TABLE && in->nin >= 2 && in->nin <= 6) {
        /* table(A, B[, W][, odim1, odim2][, outputEmptyBlocks]) */
        int nv = in->nin == 6 ? 5 : in->nin;
        Value *v[5];
        for (int k = 0; k < nv; k++) v[k] = in->in[k] >= 0 ? &regs[in->in[k]] : &none;
        Value *w = nv == 3 || nv == 5 ? v[2] : NULL;
        if (nv == 2 || nv == 3) return dist_table(v[0], v[1], w, -1, -1, &regs[in->out], e);   /* dimensions found first */
        const Value *o1 = v[nv - 2], *o2 = v[nv - 1];
        if (!val_is_numeric(o1) || !val_is_numeric(o2)) return DIST_LOCAL;
        int64_t d1 = (int64_t)val_as_double(o1), d2 = (int64_t)val_as_double(o2);
        if (d1 < 0 || d2 < 0) return DIST_LOCAL;
        return dist_table(v[0], v[1], w, d1, d2, &regs[in->out], e);
    }
    if (in->kind == I_BUILTIN && (in->bi == BI_CBIND || in->bi == BI_RBIND) && in->nin >= 2 && in->nin <= 3) {
        Value *v[3];
        for (int k = 0; k < in->nin; k++) v[k] = in->in[k] >= 0 ? &regs[in->in[k]] : &none;
        return in->bi == BI_CBIND ? dist_cbind(v, in->nin, &regs[in->out], e) : dist_rbind(v, in->nin, &regs[in->out], e);
    }
    if (in->kind == I_BUILTIN && in->bi == BI_WRITE) return dist_write_instr(in, regs, e);
    return DIST_LOCAL;
}

/* Before a local instruction: its distributed operands collected. 1:
 * answered from the handle, 0: run it, -1: error. */
static int dist_local(const Instr *in, Value *regs, BrErr *e)
{
    switch (in->kind) {
    case I_LIT: case I_READ: case I_OUT: case I_CALL: return 0;   /* values pass through */
    default: break;
    }
    if (shape_builtin(in, regs)) return 1;
    dist_set_context(in->statname, in->span.line);
    int rc = slice_or_bind(in, regs, e);
    if (rc == DIST_LOCAL && br_exec_mode() != BR_EXEC_SINGLENODE) rc = dist_read(in, regs, false, e);
    if (rc != DIST_LOCAL) return rc < 0 ? -1 : 1;
    for (int k = 0; k < in->nin; k++)
        if (in->in[k] >= 0 && regs[in->in[k]].kind == V_DIST && dist_collect(&regs[in->in[k]], e)) return -1;
    return 0;
}

/* Does a local instruction read a distributed matrix? Then it runs
 * distributed where it can: collecting the operand would move all of it
 * to rank 0, while the distributed operator moves its result or partial
 * results (sum(v) of a distributed vector: one number per rank). */
static bool reads_dist(const Instr *in, const Value *regs)
{
    for (int k = 0; k < in->nin; k++)
        if (in->in[k] >= 0 && regs[in->in[k]].kind == V_DIST) return true;
    return false;
}

/* A reduce operator over a distributed first operand (full or column
 * aggregate that combines, tsmm, t(X) %*% Y): the operators
 * piggybacking groups; the id of its partitions, 0 if not one. */
/* Is in a reduce operator piggybacking groups (before its operands'
 * kinds are known: t(X) %*% Y needs Y distributed too)? */
static bool reduce_kind(const Instr *in)
{
    if (in->nin < 1 || in->in[0] < 0) return false;
    if (in->kind == I_AGG)
        return in->dir != DIR_ROW && (in->op == OP_SUM || in->op == OP_SUMSQ || in->op == OP_MEAN ||
                                      in->op == OP_AMIN || in->op == OP_AMAX || in->op == OP_PROD);
    return in->kind == I_MATMUL && ((in->op == OP_TSMM && in->left) || (in->op == OP_MATMULTL && in->nin > 1 && in->in[1] >= 0));
}

static int64_t reduce_over(const Instr *in, const Value *regs)
{
    if (!reduce_kind(in) || regs[in->in[0]].kind != V_DIST) return 0;
    if (in->kind == I_MATMUL && in->op == OP_MATMULTL && regs[in->in[1]].kind != V_DIST) return 0;
    return regs[in->in[0]].dm->id;
}

/* The register whose partitions a reduce operator that piggybacks runs
 * over (a fused one's main input), -1 if it is not one. */
static int group_reg(const Instr *x)
{
    if (x->kind == I_FUSED) {
        int m = x->fused ? cg_dist_reduce_main(x->fused) : -1;
        return m >= 0 && m < x->nin ? x->in[m] : -1;
    }
    return reduce_kind(x) ? x->in[0] : -1;
}

/* Is register r, written by a later instruction of c, a number literal?
 * Then it is set now (what that instruction writes again; numbers hold
 * no references), so that an operator reading it can join a job before
 * it (a fused operator's scalar inputs). */
static const Instr *num_lit(const Code *c, int r)
{
    for (int i = 0; r >= 0 && i < c->n; i++) {
        const Instr *p = &c->ins[i];
        if (p->out == r) return p->kind == I_LIT && val_is_numeric(&p->lit) && p->lit.kind != V_STRING ? p : NULL;
    }
    return NULL;
}

static bool lit_ready(const Code *c, Value *regs, int r)
{
    if (r < 0) return true;
    const Instr *p = num_lit(c, r);
    if (p && regs[r].kind == V_NONE) regs[r] = p->lit;
    return p != NULL;
}

int rt_dist_group(const Code *c, int i)
{
    if (!dist_piggyback() || i < 0 || i >= c->n) return -1;
    int *grp = malloc((size_t)c->n * sizeof *grp);
    if (!grp) return -1;
    for (int j = 0; j < c->n; j++) grp[j] = -1;
    /* piggyback()'s walk: each reduce that runs (not already a member)
     * leads the later ones over the same register whose operands it
     * finds ready */
    for (int l = 0; l <= i; l++) {
        const Instr *x = &c->ins[l];
        int xr = group_reg(x);
        if (grp[l] >= 0 || x->exec != EX_DIST || xr < 0) continue;
        for (int j = l + 1; j < c->n; j++) {
            const Instr *y = &c->ins[j];
            bool ready = true;
            for (int k = 0; k < y->nin; k++) ready &= y->in[k] < l || num_lit(c, y->in[k]);
            if (grp[j] < 0 && ready && y->exec == EX_DIST && group_reg(y) == xr)
                grp[j] = grp[l] = l;
        }
    }
    int g = grp[i];
    free(grp);
    return g;
}

/* The partitions a reduce operator that piggybacks runs over (basic or
 * fused), 0 if it is not one over distributed partitions. */
static int64_t group_over(const Instr *in, const Value *regs)
{
    return in->kind == I_FUSED ? fused_reduce_over(in, regs) : reduce_over(in, regs);
}

/* Instruction x joins the open group: a basic reduce operator's job is
 * held (dist.c defers it), a fused one is prepared into fp and joins.
 * 0: joined; DIST_LOCAL: it runs on its own later; -1: error. */
static int join(Rt *rt, const Code *c, Frame *f, const Instr *x, Value *regs, FusedPrep *fp, BrErr *e)
{
    dist_set_context(x->statname, x->span.line);
    if (x->kind != I_FUSED) return dist_instr(rt, c, f, x, regs, e);
    int rc = fused_prep(rt, x, regs, fp, e);
    return rc ? rc : dist_group_fused(&fp->d, fp->args, &regs[x->out], e);
}

/* Piggybacking (seed 002 section 3.4, with seed 000's distributed fused
 * operators): a reduce operator (full or column aggregate, tsmm, t(X) %*%
 * Y, or a fused reduce over a distributed main input) and the later
 * reduce operators of the block, basic or fused, over the same partitions
 * whose inputs are ready now (registers of earlier instructions) run as
 * one job: one agreement, one reduction per reduction operator; the later
 * ones then find their result in place. 1: done as a group, 0: no
 * partners, -1: error. */
#define MAX_PIGGY 16

/* A distributed reduce operator over a matrix still local scatters it
 * first (as its own run would), so that it can lead a job; the variable
 * it was read from then names the distributed matrix. */
static int lead_scatter(const Code *c, Frame *f, const Instr *in, Value *regs, BrErr *e)
{
    int r = group_reg(in);
    if (!dist_piggyback() || in->exec != EX_DIST || r < 0 || regs[r].kind != V_MATRIX) return 0;
    VKind before[MAX_BEFORE];
    for (int k = 0; k < MAX_BEFORE; k++) before[k] = k < in->nin && in->in[k] >= 0 ? regs[in->in[k]].kind : V_NONE;
    if (dist_scatter(&regs[r], e)) return -1;
    return keep_scattered(c, f, in, before, regs) ? br_err(e, BR_ENOMEM, "out of memory") : 0;
}

static int piggyback(Rt *rt, const Code *c, Frame *f, const Instr *in, Value *regs, BrErr *e)
{
    if (lead_scatter(c, f, in, regs, e)) return -1;
    int64_t id = dist_piggyback() ? group_over(in, regs) : 0;
    if (!id) return 0;
    int me = (int)(in - c->ins), members[MAX_PIGGY] = {me}, n = 1;
    for (int j = me + 1; j < c->n && n < MAX_PIGGY; j++) {
        const Instr *x = &c->ins[j];
        if (regs[x->out].kind != V_NONE || group_over(x, regs) != id) continue;
        bool ready = true;
        for (int k = 0; k < x->nin; k++) ready &= x->in[k] < me || lit_ready(c, regs, x->in[k]);
        if (ready) members[n++] = j;
    }
    if (n < 2) return 0;
    FusedPrep fp[MAX_PIGGY];
    bool prepped[MAX_PIGGY] = {false};
    dist_group_begin();
    int rc = 0, lead = 0;
    for (int k = 0; k < n && rc >= 0; k++) {
        const Instr *x = &c->ins[members[k]];
        int jr = join(rt, c, f, x, regs, &fp[k], e);
        prepped[k] = x->kind == I_FUSED;
        if (jr < 0) rc = -1;
        if (k == 0) lead = jr;
    }
    if (dist_group_end(e)) rc = -1;
    for (int k = 0; k < n; k++) if (prepped[k]) fused_unprep(&fp[k]);
    return rc < 0 ? -1 : lead == 0 ? 1 : 0;
}

int rt_dist_step(Rt *rt, const Code *c, Frame *f, const Instr *in, Value *regs, BrErr *e)
{
    /* run earlier in a piggybacked job */
    if ((in->kind == I_AGG || in->kind == I_MATMUL || in->kind == I_FUSED) && regs[in->out].kind != V_NONE) return 1;
    int pg = piggyback(rt, c, f, in, regs, e);
    if (pg) return pg;
    if (in->exec == EX_DIST || reads_dist(in, regs)) {
        int rc = dist_instr(rt, c, f, in, regs, e);
        if (rc <= 0) return rc ? -1 : 1;
    }
    return dist_local(in, regs, e);
}
