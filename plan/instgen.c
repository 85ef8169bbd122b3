/* instgen.c: instructions from a HOP DAG. HOPs are linearized in
 * statement order (depth-first from each statement's root, so side effects
 * keep their order), each gets a register, and every register is released
 * right after its last use. Reads of a variable that is only updated by
 * left indexing and written back are marked `move`, so the update can run
 * in place (seed 002's update-in-place for loops over X[i,] = ...). */
#include "program.h"

#include <stdlib.h>
#include <string.h>

typedef struct Lin { Hop **v; int n, cap; } Lin;

static void visit(Hop *h, Lin *l, char *seen)
{
    if (!h || seen[h->id]) return;
    seen[h->id] = 1;
    for (int i = 0; i < h->nin; i++) visit(h->in[i], l, seen);
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 32;
        l->v = realloc(l->v, (size_t)l->cap * sizeof(Hop *));
        if (!l->v) abort();
    }
    l->v[l->n++] = h;
}

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

/* Marks TREADs (moves) that feed a chain of left indexing written back to
 * the same variable. Other consumers may read the variable too (as in
 * v[i,1] = v[i-1,1] * a): the runtime updates in place only at the
 * register's last use and when nothing else holds the matrix. */
static void mark_moves(HopDag *d, const Lin *l)
{
    int n = d->n + 1;
    int *uses = calloc((size_t)n, sizeof(int));
    Hop **only = calloc((size_t)n, sizeof(Hop *));
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
}

Code *plan_codegen_dag(HopDag *d, int mode)
{
    Code *c = br_calloc(1, sizeof *c);
    if (!c) abort();
    char *seen = calloc((size_t)d->n + 2, 1);
    Lin l = {0};
    for (int i = 0; i < d->nroots; i++) visit(d->roots[i], &l, seen);
    for (int i = 0; i < d->nw; i++) visit(d->whops[i], &l, seen);
    free(seen);
    mark_moves(d, &l);
    c->n = l.n;
    c->nregs = l.n;
    c->ins = br_calloc((size_t)l.n + 1, sizeof(Instr));
    for (int i = 0; i < l.n; i++) l.v[i]->reg = i;
    /* last use of every register; kept registers never freed early */
    int *last = malloc(((size_t)l.n + 1) * sizeof(int));
    for (int i = 0; i < l.n; i++) last[i] = i;
    for (int i = 0; i < l.n; i++) {
        Hop *h = l.v[i];
        for (int k = 0; k < h->nin; k++)
            if (h->in[k] && last[h->in[k]->reg] < i) last[h->in[k]->reg] = i;
    }
    const int KEEP = 1 << 30;
    for (int i = 0; i < d->nw; i++) last[d->whops[i]->reg] = KEEP;
    c->pred_reg = -1;
    c->seen_cells = -1;
    c->for_regs[0] = c->for_regs[1] = c->for_regs[2] = -1;
    if (mode == CG_PRED && d->nroots > 0) { c->pred_reg = d->roots[0]->reg; last[c->pred_reg] = KEEP; }
    if (mode == CG_FORHDR)
        for (int k = 0; k < d->nroots && k < 3; k++) {
            c->for_regs[k] = d->roots[k]->reg;
            last[c->for_regs[k]] = KEEP;
        }
    /* count frees per instruction */
    int *nf = calloc((size_t)l.n + 1, sizeof(int));
    for (int r = 0; r < l.n; r++) if (last[r] != KEEP) nf[last[r]]++;
    for (int i = 0; i < l.n; i++) {
        Instr *in = &c->ins[i];
        Hop *h = l.v[i];
        in->hop = h;
        in->out = i;
        in->in = h->nin ? malloc((size_t)h->nin * sizeof(int)) : NULL;
        for (int k = 0; k < h->nin; k++) in->in[k] = h->in[k] ? h->in[k]->reg : -1;
        in->frees = nf[i] ? malloc((size_t)nf[i] * sizeof(int)) : NULL;
    }
    for (int r = 0; r < l.n; r++)
        if (last[r] != KEEP) {
            Instr *in = &c->ins[last[r]];
            in->frees[in->nfree++] = r;
        }
    c->nw = d->nw;
    c->wnames = malloc(((size_t)d->nw + 1) * sizeof(char *));
    c->wregs = malloc(((size_t)d->nw + 1) * sizeof(int));
    for (int i = 0; i < d->nw; i++) { c->wnames[i] = d->wnames[i]; c->wregs[i] = d->whops[i]->reg; }
    free(nf);
    free(last);
    free(l.v);
    return c;
}

void plan_code_free(Code *c)
{
    if (!c) return;
    for (int i = 0; i < c->n; i++) { free(c->ins[i].in); free(c->ins[i].frees); }
    free(c->ins);
    free(c->wnames);
    free(c->wregs);
    free(c);
}
