/* instgen.c: instructions from a HOP DAG. HOPs are linearized in
 * statement order (depth-first from each statement's root, so side effects
 * keep their order), each gets a register, and every register is released
 * right after its last use. Reads of a variable that is only updated by
 * left indexing and written back are marked `move`, so the update can run
 * in place (seed 002's update-in-place for loops over X[i,] = ...). */
#include "program.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

typedef struct Lin { Hop **v; int n; } Lin;

static bool is_write_of(const HopDag *d, const Hop *h, const char *name)
{
    for (int i = 0; i < d->nw; i++)
        if (d->whops[i] == h) return strcmp(d->wnames[i], name) == 0;
    return false;
}

static bool is_write(const HopDag *d, const Hop *h)
{
    for (int i = 0; i < d->nw; i++)
        if (d->whops[i] == h) return true;
    return false;
}

/* May where-loop h, whose R is TREAD t, take t's matrix (R = where(...)
 * written back to t's variable, t no other input of h)? */
static bool where_moves(const HopDag *d, const Hop *h, const Hop *t)
{
    if (h->nouts > 1) return false;   /* several results: new blocks */
    for (int k = 1; k < h->nin; k++) if (h->in[k] == t) return false;
    return is_write_of(d, h, t->name);
}

/* Marks TREADs (moves) that feed a chain of left indexing written back to
 * the same variable. Other consumers may read the variable too (as in
 * v[i,1] = v[i-1,1] * a): the runtime updates in place only at the
 * register's last use and when nothing else holds the matrix. -1 when
 * out of memory. */
static int mark_moves(HopDag *d, const Lin *l)
{
    int n = d->n + 1;
    int *uses = calloc((size_t)n, sizeof(int));
    Hop **only = calloc((size_t)n, sizeof(Hop *));
    if (!uses || !only) {
        free(uses);
        free(only);
        return -1;
    }
    for (int i = 0; i < l->n; i++) {
        Hop *h = l->v[i];
        for (int k = 0; k < h->nin; k++)
            if (h->in[k]) { uses[h->in[k]->id]++; only[h->in[k]->id] = h; }
    }
    for (int i = 0; i < d->nw; i++) uses[d->whops[i]->id]++;
    for (int i = 0; i < l->n; i++) {
        Hop *t = l->v[i];
        t->nuse = uses[t->id];
        if (t->kind != H_TREAD || t->flag || uses[t->id] < 1) continue;
        /* an optional read of the same variable (exists) must still see it */
        bool optread = false;
        for (int j = 0; j < l->n; j++)
            if (l->v[j]->kind == H_TREAD && l->v[j]->flag && !strcmp(l->v[j]->name, t->name)) optread = true;
        if (optread) continue;
        for (int j = i + 1; j < l->n && !t->move; j++) {
            Hop *cur = l->v[j];
            /* a where-loop's R written back to R: updated in place too */
            if (cur->kind == H_WHERE && cur->in[0] == t && where_moves(d, cur, t)) t->move = true;
            if (cur->kind != H_LIX || cur->in[0] != t) continue;
            for (;;) {
                /* the target must not also feed the source or index inputs */
                bool other = false;
                for (int k = 1; k < cur->nin; k++) if (cur->in[k] == cur->in[0]) other = true;
                if (other) { cur = NULL; break; }
                if (is_write(d, cur)) break;
                Hop *nx = only[cur->id];
                if (uses[cur->id] != 1 || !nx || nx->kind != H_LIX || nx->in[0] != cur) {
                    cur = NULL;
                    break;
                }
                cur = nx;
            }
            if (cur && is_write_of(d, cur, t->name)) t->move = true;
        }
    }
    free(uses);
    free(only);
    return 0;
}

/* Name of an instruction in -stats (SystemDS's opcodes where it has
 * them; -explain runtime prints hop_opname). */
static const char *instr_name(const Hop *h)
{
    switch (h->kind) {
    case H_AGG:
        if (h->dir == DIR_ROW) return h->op == OP_SUM ? "uark+" : h->op == OP_MEAN ? "uarmean" : "uar";
        if (h->dir == DIR_COL) return h->op == OP_SUM ? "uack+" : h->op == OP_MEAN ? "uacmean" : "uac";
        return h->op == OP_SUM ? "uak+" : op_info[h->op].name;
    case H_MATMUL: return h->op == OP_TSMM || h->op == OP_TSMMA ? "tsmm" : h->op == OP_MMCHAIN ? "mmchain" : "ba+*";
    case H_TREAD: return "tread";
    case H_LIT: return "literal";
    case H_RIX: return "rightIndex";
    case H_LIX: return "leftIndex";
    case H_OUT: return "fcall-out";
    default: return hop_opname(h);
    }
}

/* The instruction of one HOP (seed 002's LOP): its kind, operator,
 * physical variant, execution type and operand details. */
static void lower(const Hop *h, Instr *in)
{
    static const InstrKind kinds[] = {
        [H_LIT] = I_LIT, [H_TREAD] = I_READ, [H_UNARY] = I_UNARY, [H_BINARY] = I_BINARY,
        [H_TERNARY] = I_TERNARY, [H_AGG] = I_AGG, [H_MATMUL] = I_MATMUL, [H_REORG] = I_REORG,
        [H_RIX] = I_RIX, [H_LIX] = I_LIX, [H_BUILTIN] = I_BUILTIN, [H_FCALL] = I_CALL,
        [H_OUT] = I_OUT, [H_SPOOF] = I_FUSED, [H_WHERE] = I_WHERE, [H_STITCH] = I_STITCH,
    };
    in->kind = kinds[h->kind];
    in->op = h->op;
    in->dir = h->dir;
    in->bi = h->bi;
    in->exec = h->exec;
    in->left = h->kind == H_MATMUL && h->flag != 0;
    in->move = h->move;
    in->optional = h->kind == H_TREAD && h->flag != 0;
    in->ix = h->ix;
    in->lit = h->lit;
    in->name = h->name;
    in->func = h->func;
    in->out_index = h->out_index;
    in->nvar = h->nvar;
    in->anames = h->anames;
    in->fused = h->spoof;
    in->plan_place = h->plan_place;
    in->plan_price[0] = h->plan_price[0], in->plan_price[1] = h->plan_price[1];
    in->spec = h->spec;
    in->where = h->where;
    in->opmem = h->opmem;
    in->opname = hop_opname(h);
    in->statname = instr_name(h);
    in->span = h->span;
    if (h->kind == H_SPOOF && h->nin > 0 && (in->est = malloc((size_t)h->nin * 3 * sizeof(int64_t))))
        for (int k = 0; k < h->nin; k++) {
            const Hop *x = h->in[k];
            in->est[3 * k] = x ? x->rows : -1;
            in->est[3 * k + 1] = x ? x->cols : -1;
            in->est[3 * k + 2] = x ? x->nnz : -1;
        }
    /* a product's size as compiled: auto prices products by the width of
     * their other side (runtime/cla_rt.c) */
    if (h->kind == H_MATMUL && h->dt == DT_MATRIX && (in->est = malloc(2 * sizeof(int64_t)))) {
        in->est[0] = h->rows;
        in->est[1] = h->cols;
    }
    /* a read sized at compile time (from its .mtd) checks what it reads */
    if (h->kind == H_BUILTIN && h->bi == BI_READ && h->dt == DT_MATRIX && h->rows >= 0 && h->cols >= 0 &&
        (in->est = malloc(2 * sizeof(int64_t)))) {
        in->est[0] = h->rows;
        in->est[1] = h->cols;
    }
}

/* ifelse(c, A, B) with a scalar c evaluates only the branch c picks (its
 * draws, prints and calls happen only then): every instruction that only
 * branch B needs (all its consumers are such instructions, B's only
 * consumer is the ifelse, nothing written, kept or a root) is guarded by
 * the ifelse's index, so the interpreter skips it unless the condition
 * picks B; the same for A. Inner ifelses come first in the post-order,
 * so an instruction keeps the innermost guard and the ifelse itself the
 * enclosing one. -1 when out of memory. */
static int mark_lazy(const HopDag *d, const Lin *l, Code *c, const int *last, int keep)
{
    int n = l->n;
    bool any = false;
    for (int i = 0; i < n && !any; i++) {
        const Hop *t = l->v[i];
        any = hop_lazy_ifelse(t);
    }
    if (!any) return 0;
    int *uses = calloc((size_t)n, sizeof(int)), *inset = calloc((size_t)n, sizeof(int));
    char *pinned = calloc((size_t)n, 1);
    if (!uses || !inset || !pinned) {
        free(uses);
        free(inset);
        free(pinned);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        const Hop *h = l->v[i];
        for (int k = 0; k < h->nin; k++) if (h->in[k]) uses[h->in[k]->reg]++;
        if (last[i] == keep) pinned[i] = 1;
    }
    for (int i = 0; i < d->nroots; i++) if (d->roots[i]) pinned[d->roots[i]->reg] = 1;
    for (int i = 0; i < d->nw; i++) if (d->whops[i]) pinned[d->whops[i]->reg] = 1;
    for (int ti = 0; ti < n; ti++) {
        const Hop *t = l->v[ti];
        if (!hop_lazy_ifelse(t)) continue;
        for (int k = 1; k <= 2; k++) {
            const Hop *o = t->in[3 - k];   /* skipped when the condition picks k */
            if (!hop_ifelse_alone(t, k) || o == t->in[k] || o == t->in[0]) continue;
            memset(inset, 0, (size_t)n * sizeof(int));
            inset[o->reg]++;
            bool marked = false;
            for (int i = ti - 1; i >= 0; i--) {
                if (pinned[i] || uses[i] == 0 || inset[i] != uses[i]) continue;
                const Hop *x = l->v[i];
                for (int j = 0; j < x->nin; j++) if (x->in[j]) inset[x->in[j]->reg]++;
                if (!c->ins[i].guard) {
                    c->ins[i].guard = ti + 1;
                    c->ins[i].guard_then = 3 - k == 1;
                }
                marked = true;
            }
            if (marked) c->ins[ti].lazy = true;
        }
        /* two matrix branches not known to differ in shape: a run-time
         * shape difference picks the taken branch (lazy_ifelse) */
        if (t->in[1]->dt == DT_MATRIX && t->in[2]->dt == DT_MATRIX && hop_ifelse_alone(t, 1))
            c->ins[ti].lazy = true;
    }
    free(uses);
    free(inset);
    free(pinned);
    return 0;
}

Code *plan_codegen_dag(HopDag *d, int mode)
{
    if (d->oom) return NULL;
    Code *c = br_calloc(1, sizeof *c);
    Lin l = {0};
    l.v = c ? hop_walk(d, &l.n, NULL) : NULL;
    int *last = l.v ? malloc(((size_t)l.n + 1) * sizeof(int)) : NULL;
    int *nf = l.v ? calloc((size_t)l.n + 1, sizeof(int)) : NULL;
    if (c) {
        c->ins = br_calloc((size_t)l.n + 1, sizeof(Instr));
        c->wnames = malloc(((size_t)d->nw + 1) * sizeof(char *));
        c->wregs = malloc(((size_t)d->nw + 1) * sizeof(int));
    }
    if (!c || !l.v || !last || !nf || !c->ins || !c->wnames || !c->wregs || mark_moves(d, &l)) {
        d->oom = true;
        plan_code_free(c);
        free(l.v);
        free(last);
        free(nf);
        return NULL;
    }
    c->n = l.n;
    c->nregs = l.n;
    for (int i = 0; i < l.n; i++) l.v[i]->reg = i;
    /* last use of every register; kept registers never freed early */
    for (int i = 0; i < l.n; i++) last[i] = i;
    for (int i = 0; i < l.n; i++) {
        Hop *h = l.v[i];
        for (int k = 0; k < h->nin; k++) {
            if (!h->in[k]) continue;
            assert(h->in[k]->reg >= 0 && h->in[k]->reg < i);
            if (last[h->in[k]->reg] < i) last[h->in[k]->reg] = i;
        }
    }
    const int KEEP = 1 << 30;
    for (int i = 0; i < d->nw; i++) last[d->whops[i]->reg] = KEEP;
    c->pred_reg = -1;
    c->seen_cells = -1;
    c->recompile = d->recompile;
    c->cla_maybe = d->cla_maybe;
    c->for_regs[0] = c->for_regs[1] = c->for_regs[2] = -1;
    if (mode == CG_PRED && d->nroots > 0) { c->pred_reg = d->roots[0]->reg; last[c->pred_reg] = KEEP; }
    if (mode == CG_FORHDR)
        for (int k = 0; k < d->nroots && k < 3; k++) {
            c->for_regs[k] = d->roots[k]->reg;
            last[c->for_regs[k]] = KEEP;
        }
    /* count frees per instruction */
    for (int r = 0; r < l.n; r++) if (last[r] != KEEP) nf[last[r]]++;
    bool ok = true;
    for (int i = 0; i < l.n; i++) {
        Instr *in = &c->ins[i];
        Hop *h = l.v[i];
        lower(h, in);
        in->out = i;
        in->nin = h->nin;
        in->in = h->nin > 0 ? malloc((size_t)h->nin * sizeof(int)) : NULL;
        in->frees = nf[i] ? malloc((size_t)nf[i] * sizeof(int)) : NULL;
        if ((h->nin > 0 && !in->in) || (nf[i] && !in->frees)) { ok = false; continue; }
        for (int k = 0; k < h->nin; k++) in->in[k] = h->in[k] ? h->in[k]->reg : -1;
    }
    /* the interpreter trusts these: every register it reads, writes or
     * frees is one of the code's */
    for (int r = 0; r < l.n; r++) assert(last[r] == KEEP || (last[r] >= r && last[r] < l.n));
    if (ok)
        for (int r = 0; r < l.n; r++)
            if (last[r] != KEEP) {
                Instr *in = &c->ins[last[r]];
                in->frees[in->nfree++] = r;
            }
    if (ok && mark_lazy(d, &l, c, last, KEEP)) ok = false;
    c->nw = d->nw;
    for (int i = 0; i < d->nw; i++) { c->wnames[i] = d->wnames[i]; c->wregs[i] = d->whops[i]->reg; }
    free(nf);
    free(last);
    free(l.v);
    if (!ok) {
        d->oom = true;
        plan_code_free(c);
        return NULL;
    }
    return c;
}
