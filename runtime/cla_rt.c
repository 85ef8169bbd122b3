/* cla_rt.c: compressed blocks in the interpreter (runtime/cla_rt.h,
 * docs/cla.md). */
#include "cla_rt.h"
#include "../kernels/cla.h"

#include <stdlib.h>
#include <string.h>

static const MB *mat(const Value *v) { return v->kind == V_MATRIX ? v->m : NULL; }
static bool is_cmb(const Value *v) { return v->kind == V_MATRIX && mb_is_cmb(v->m); }

bool cla_rt_has_input(const Instr *in, const Value *regs)
{
    for (int k = 0; k < in->nin; k++)
        if (in->in[k] >= 0 && is_cmb(&regs[in->in[k]])) return true;
    return false;
}

/* Builtins that take a compressed block as it is: they read only its
 * shape, pass it on, or (compress) are about compression. */
static bool builtin_keeps(BuiltinId bi)
{
    switch (bi) {
    case BI_COMPRESS: case BI_DECOMPRESS: case BI_NROW: case BI_NCOL: case BI_LENGTH:
    case BI_EXISTS: case BI_TYPEOF: case BI_WRITE:   /* io writes binary compressed */
        return true;
    default:
        return false;
    }
}

/* Can fused operator in run over its compressed inputs (those of regs, or
 * when regs is NULL the inputs in register r)? */
static bool fused_ok(const Instr *in, const Value *regs, int r)
{
    bool local[16] = {false}, *cin = in->nin <= 16 ? local : malloc((size_t)in->nin * sizeof(bool));
    if (!cin || !in->fused) { if (cin != local) free(cin); return false; }
    for (int j = 0; j < in->nin; j++)
        cin[j] = in->in[j] >= 0 && (regs ? is_cmb(&regs[in->in[j]]) : in->in[j] == r);
    /* auto's static check (regs NULL) leaves out plans over blocks of
     * decompressed rows: they decompress (by blocks) every time they run */
    bool ok = (cg_cla_gen(in->fused, cin) && (regs || !cg_cla_rows(in->fused, cin))) || cg_cla_ok(in->fused, cin);
    if (cin != local) free(cin);
    return ok;
}

/* Does in's operator take its input k compressed? */
static bool accepts(const Instr *in, int k, const Value *regs)
{
    const MB *ins[2] = {NULL, NULL};
    for (int j = 0; j < in->nin && j < 2; j++)
        if (in->in[j] >= 0) ins[j] = mat(&regs[in->in[j]]);
    switch (in->kind) {
    case I_UNARY: return cla_handles(CLA_F_UNARY, in->op, in->dir, in->left, k, in->nin, ins);
    case I_BINARY: return cla_handles(CLA_F_BINARY, in->op, in->dir, in->left, k, in->nin, ins);
    case I_AGG: return cla_handles(CLA_F_AGG, in->op, in->dir, in->left, k, in->nin, ins);
    case I_MATMUL:
        /* a second compressed operand is decompressed (ins[] sees it) */
        return cla_handles(CLA_F_MATMUL, in->op, in->dir, in->left, k, in->nin, ins) &&
               !(k == 0 && in->nin > 1 && ins[1] && ins[1]->cmb) && !(k == 1 && ins[0] && ins[0]->cmb);
    case I_RIX: return cla_handles(CLA_F_RIX, in->op, in->dir, in->left, k, in->nin, ins);
    case I_CALL: case I_OUT: return true;   /* functions get the compressed value */
    case I_BUILTIN: return builtin_keeps(in->bi);
    case I_FUSED: return fused_ok(in, regs, -1);
    default: return false;
    }
}

/* A fused operator over compressed inputs (seed 000 section 5.2): Cell
 * and MAgg plans with one compressed full input run their generated code
 * once per distinct tuple (cg_exec, kernels/spoof_cla.c); Row plans of
 * matrix-vector products run their unfused plan when every step of it
 * runs compressed, other Row plans their generated code over blocks of
 * decompressed rows of the compressed main input (kernels/spoof_row.c);
 * other accepted plans run their unfused plan, whose steps run over the
 * dictionaries. */
static int run_fused(Rt *rt, const Instr *in, Value *regs, BrErr *e)
{
    Value none = val_none(), local[8];
    bool cl[8];
    Value *args = in->nin <= 8 ? local : malloc((size_t)in->nin * sizeof(Value));
    bool *cin = in->nin <= 8 ? cl : malloc((size_t)in->nin * sizeof(bool));
    int rc = 0;
    if (!args || !cin) rc = br_err(e, BR_ENOMEM, "out of memory");
    for (int k = 0; k < in->nin && !rc; k++) {
        args[k] = in->in[k] >= 0 ? regs[in->in[k]] : none;
        cin[k] = is_cmb(&args[k]);
    }
    if (!rc && !rt->prog->cg) rc = br_err(e, BR_EFAIL, "fused operator '%s' is not available", in->opname);
    /* Row plans of matrix-vector products whose steps all run compressed
     * keep their compressed products (gathers per distinct value: about
     * as fast as the uncompressed ones, and faster than decompressing
     * rows); wider products (kmeans' X %*% t(C)) read blocks of
     * decompressed rows, which avoids materializing them (bench/cla_e2e.sh) */
    bool gen = !rc && cg_cla_gen(in->fused, cin);
    if (gen && cg_cla_row_narrow(in->fused) && cg_cla_ok(in->fused, cin)) gen = false;
    if (!rc && gen) {
        rc = cg_exec(rt->prog->cg, in->fused, NULL, in->nin, args, &regs[in->out], e);
    } else if (!rc) {
        cla_stats_op("spoof");
        rc = cg_exec_unfused(rt->prog->cg, in->fused, in->nin, args, &regs[in->out], e);
    }
    if (args != local) free(args);
    if (cin != cl) free(cin);
    return rc;
}

int cla_rt_exec(Rt *rt, Frame *f, const Instr *in, Value *regs, int nregs, ClaRunFn run, BrErr *e)
{
    Value *sh = malloc(((size_t)nregs + 1) * sizeof(Value));
    int *subst = malloc(((size_t)in->nin + 1) * sizeof(int));
    MB **tmp = malloc(((size_t)in->nin + 1) * sizeof(MB *));
    if (!sh || !subst || !tmp) {
        free(sh);
        free(subst);
        free(tmp);
        return br_err(e, BR_ENOMEM, "out of memory");
    }
    memcpy(sh, regs, (size_t)nregs * sizeof(Value));
    int ns = 0, rc = 0;
    for (int k = 0; k < in->nin && !rc; k++) {
        int r = in->in[k];
        if (r < 0 || !is_cmb(&sh[r]) || accepts(in, k, regs)) continue;
        int64_t t0 = br_now_ns();
        MB *d = cmb_decompress(sh[r].m, e);
        if (!d) { rc = e->code; break; }
        cla_stats_decompress(br_now_ns() - t0);
        sh[r] = val_matrix(d);
        subst[ns] = r;
        tmp[ns++] = d;
    }
    bool kept = false;   /* a compressed input stays compressed */
    for (int k = 0; k < in->nin; k++) kept |= in->in[k] >= 0 && is_cmb(&sh[in->in[k]]);
    if (!rc) {
        rc = in->kind == I_FUSED && kept ? run_fused(rt, in, sh, e) : run(rt, f, in, sh, e);
        /* what run did to the registers: the output, and an input that
         * an in-place update stole (left indexing sets it to none) */
        for (int k = 0; k < in->nin; k++) {
            int r = in->in[k];
            bool sub = false;
            for (int q = 0; q < ns; q++) sub |= subst[q] == r;
            if (r >= 0 && !sub) regs[r] = sh[r];
        }
        regs[in->out] = sh[in->out];
    }
    for (int q = 0; q < ns; q++) {
        int r = subst[q];
        /* stolen by an in-place update (left indexing): the result owns it */
        if (!rc && r != in->out && sh[r].kind == V_NONE) continue;
        mb_release(tmp[q]);
    }
    free(sh);
    free(subst);
    free(tmp);
    return rc;
}

/* The plan options of the mode: true forces compression (every column
 * group, incompressible ones uncompressed), auto needs a ratio of 1.5. */
static ClaPlanOpts mode_opts(int mode)
{
    ClaPlanOpts o = cla_plan_defaults();
    o.force = mode == RT_CLA_ON;
    o.min_ratio = 1.5;
    return o;
}

int cla_rt_after(Rt *rt, const Instr *in, Value *out, BrErr *e)
{
    if (rt->opt.cla != RT_CLA_ON || in->kind != I_BUILTIN || in->bi != BI_READ) return 0;
    if (out->kind != V_MATRIX || out->m->cmb || out->m->rows < 2) return 0;
    ClaPlanOpts o = mode_opts(RT_CLA_ON);
    MB *c = cla_compress(out->m, &o, e);
    if (!c) return e->code;
    mb_release(out->m);
    out->m = c;
    return 0;
}

/* ---- loop-invariant matrices ---- */

static void code_names(const Code *c, NameSet *rd, NameSet *wr)
{
    if (!c) return;
    for (int i = 0; i < c->n; i++)
        if (c->ins[i].kind == I_READ) ns_add(rd, c->ins[i].name);
    for (int i = 0; i < c->nw; i++) ns_add(wr, c->wnames[i]);
}

static void list_names(const PBList *l, NameSet *rd, NameSet *wr);

static void block_names(const PBlock *b, NameSet *rd, NameSet *wr)
{
    code_names(b->code, rd, wr);
    if (b->kind == PB_FOR && b->var) ns_add(wr, b->var);
    list_names(&b->body, rd, wr);
    list_names(&b->els, rd, wr);
}

static void list_names(const PBList *l, NameSet *rd, NameSet *wr)
{
    for (int i = 0; i < l->n; i++) block_names(l->v[i], rd, wr);
}

/* Would instruction k of c, reading the candidate in register r, take it
 * compressed (statically, from the instruction alone: a binary operator's
 * other operand must be a literal, a full aggregate or the candidate)? */
static bool static_ok(const Code *c, int k, int r)
{
    const Instr *in = &c->ins[k];
    switch (in->kind) {
    case I_AGG: return cla_handles(CLA_F_AGG, in->op, in->dir, 0, 0, 1, NULL);
    case I_UNARY: case I_RIX: case I_CALL: return true;
    case I_MATMUL: return in->op != OP_TSMM || in->left;
    case I_FUSED: return fused_ok(in, NULL, r);
    case I_BUILTIN: return builtin_keeps(in->bi);
    case I_BINARY:
        for (int j = 0; j < in->nin; j++) {
            int o = in->in[j];
            if (o == r || o < 0) continue;
            bool scalar = false;
            for (int q = 0; q < k; q++)
                if (c->ins[q].out == o)   /* the last writer of o before k */
                    scalar = c->ins[q].kind == I_LIT || (c->ins[q].kind == I_AGG && c->ins[q].dir == DIR_FULL);
            if (!scalar) return false;
        }
        return true;
    default: return false;
    }
}

/* Does every instruction of the loop that reads variable name take it
 * compressed (auto: no decompression per iteration)? */
static bool uses_ok(const PBList *l, const char *name);

static bool code_ok(const Code *c, const char *name)
{
    if (!c) return true;
    for (int k = 0; k < c->n; k++) {
        if (c->ins[k].kind != I_READ || strcmp(c->ins[k].name, name)) continue;
        int r = c->ins[k].out;
        for (int q = k + 1; q < c->n; q++) {
            const Instr *in = &c->ins[q];
            bool reads = false;
            for (int j = 0; j < in->nin; j++) reads |= in->in[j] == r;
            if (reads && !static_ok(c, q, r)) return false;
            if (in->out == r) break;   /* the register is reused */
        }
    }
    return true;
}

static bool block_ok(const PBlock *b, const char *name)
{
    return code_ok(b->code, name) && uses_ok(&b->body, name) && uses_ok(&b->els, name);
}

static bool uses_ok(const PBList *l, const char *name)
{
    for (int i = 0; i < l->n; i++)
        if (!block_ok(l->v[i], name)) return false;
    return true;
}

/* Loops that auto compresses for: read often enough (unknown counts,
 * while loops, are taken as often), and matrices large against the
 * memory budget: bench/cla_e2e.sh measured compressed iterations slower
 * than uncompressed ones while the data fit comfortably (docs/cla.md). */
#define AUTO_MIN_ITERS 4
#define AUTO_BUDGET_SHARE 16   /* at least 1/16 of the memory budget */

int cla_rt_loop_entry(Rt *rt, Frame *f, const PBlock *b, int64_t n)
{
    int mode = rt->opt.cla;
    if (mode == RT_CLA_OFF) return 0;
    if (mode == RT_CLA_AUTO && n >= 0 && n < AUTO_MIN_ITERS) return 0;
    NameSet rd = {0}, wr = {0};
    block_names(b, &rd, &wr);
    int rc = 0;
    ClaPlanOpts o = mode_opts(mode);
    for (int i = 0; i < rd.n && !rc; i++) {
        if (ns_has(&wr, rd.v[i])) continue;
        Value *v = st_get(&f->vars, rd.v[i]);
        if (!v || v->kind != V_MATRIX || v->m->cmb || v->m->rows < 2) continue;
        if (mode == RT_CLA_AUTO && ((double)mb_bytes(v->m) * AUTO_BUDGET_SHARE < br_mem_budget() ||
                                    !block_ok(b, rd.v[i])))
            continue;
        BrErr e = {0};
        MB *c = cla_compress(v->m, &o, &e);
        if (!c) { rc = rt_fail(rt, b->span, e.code, "%s", e.msg); break; }
        if (c == v->m) { mb_release(c); continue; }
        mb_release(v->m);   /* the variable's reference; others keep theirs */
        v->m = c;
    }
    ns_free(&rd);
    ns_free(&wr);
    return rc;
}
