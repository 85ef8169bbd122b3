/* inline.c: inlining of small single-block functions into the calling
 * DAG (seed 002, section 3.2 IPA), so the callee's operators join the
 * caller's DAG: sizes propagate through them, rewrites and fusion see
 * across the call, and the call overhead disappears. */
#include "build.h"

#include <stdlib.h>
#include <string.h>

#define INLINE_MAX_HOPS 64

/* The callee's DAG if f can be inlined: one generic block, small, free of
 * side effects and of reads other than its parameters. */
static HopDag *inlinable(const FProg *fp, char **reach)
{
    if (!fp || fp->body.n != 1 || fp->body.v[0]->kind != PB_GENERIC) return NULL;
    HopDag *cd = fp->body.v[0]->dag;
    if (!cd) return NULL;
    const Func *f = fp->func;
    for (int k = 0; k < f->nout; k++) {
        bool w = false;
        for (int i = 0; i < cd->nw; i++) if (!strcmp(cd->wnames[i], f->out[k].name)) w = true;
        if (!w) return NULL;
    }
    char *seen;
    int n;
    Hop **order = hop_walk(cd, &n, &seen);
    if (!order) return NULL;     /* out of memory: no inlining */
    free(order);
    bool ok = n <= INLINE_MAX_HOPS;
    for (int i = 0; i < cd->n && ok; i++) {
        const Hop *h = cd->hops[i];
        if (!seen[h->id]) continue;
        if (h->sidefx || h->kind == H_FCALL || h->kind == H_SPOOF) ok = false;
        if (h->kind == H_BUILTIN && (op_info[OP_RAND].flags & OF_NONDET) &&
            (h->bi == BI_RAND || h->bi == BI_SAMPLE || h->bi == BI_TIME || h->bi == BI_READ)) ok = false;
        if (h->kind == H_TREAD) {
            bool param = false;
            for (int k = 0; k < f->nin; k++) if (!strcmp(f->in[k].name, h->name)) param = true;
            if (!param) ok = false;
        }
    }
    if (!ok) { free(seen); return NULL; }
    *reach = seen;
    return cd;
}

static Hop *copy_into(HopDag *d, Hop *s, Hop **map, const Hop *call, const Func *f)
{
    if (!s) return NULL;
    if (map[s->id]) return map[s->id];
    if (s->kind == H_TREAD) {
        for (int k = 0; k < f->nin; k++)
            if (!strcmp(f->in[k].name, s->name)) return map[s->id] = call->in[k];
        return NULL;
    }
    Hop *h = hop_new(d, s->kind, s->span, s->nin);
    Hop **in = h->in;
    int id = h->id;
    *h = *s;
    h->in = in;
    h->id = id;
    h->reg = -1;
    if (s->kind == H_LIT) h->lit = val_retain(s->lit);
    if (s->anames) {
        h->anames = arena_alloc(d->arena, (size_t)s->nvar * sizeof(char *));
        memcpy(h->anames, s->anames, (size_t)s->nvar * sizeof(char *));
    }
    for (int k = 0; k < s->nin; k++) h->in[k] = copy_into(d, s->in[k], map, call, f);
    map[s->id] = h;
    return h;
}

static void redirect(HopDag *d, Hop *from, Hop *to)
{
    for (int i = 0; i < d->n; i++)
        for (int k = 0; k < d->hops[i]->nin; k++)
            if (d->hops[i]->in[k] == from) d->hops[i]->in[k] = to;
    for (int i = 0; i < d->nroots; i++) if (d->roots[i] == from) d->roots[i] = to;
    for (int i = 0; i < d->nw; i++) if (d->whops[i] == from) d->whops[i] = to;
}

int plan_inline_calls(RtProgram *p, HopDag *d, Diag *diag)
{
    int inlined = 0;
    int n0 = d->n;
    for (int i = 0; i < n0; i++) {
        Hop *call = d->hops[i];
        if (call->kind != H_FCALL) continue;
        bool args_ok = true;
        for (int k = 0; k < call->nin; k++) if (!call->in[k]) args_ok = false;
        if (!args_ok) continue;
        /* the specialization for this call's sizes when there is one
         * (its branches on constants may be gone, leaving one block) */
        FProg *fp = call->spec ? call->spec : plan_function(p, call->func, diag);
        char *reach = NULL;
        HopDag *cd = inlinable(fp, &reach);
        if (!cd) continue;
        const Func *f = call->func;
        Hop **map = calloc((size_t)cd->n + 2, sizeof(Hop *));
        Hop **outs = calloc((size_t)f->nout + 1, sizeof(Hop *));
        if (!map || !outs) {
            free(map);
            free(outs);
            free(reach);
            d->oom = true;   /* (plan_compile reports it) */
            return inlined;
        }
        for (int k = 0; k < f->nout; k++)
            for (int w = 0; w < cd->nw; w++)
                if (!strcmp(cd->wnames[w], f->out[k].name)) outs[k] = copy_into(d, cd->whops[w], map, call, f);
        /* consumers of the call's outputs now read the inlined hops */
        for (int j = 0; j < d->n; j++) {
            Hop *o = d->hops[j];
            if (o->kind == H_OUT && o->in[0] == call && o->out_index < f->nout) redirect(d, o, outs[o->out_index]);
        }
        /* the call itself no longer runs */
        int r = 0;
        for (int j = 0; j < d->nroots; j++) if (d->roots[j] != call) d->roots[r++] = d->roots[j];
        d->nroots = r;
        for (int k = 0; k < f->nout; k++) if (outs[k]) hop_add_root(d, outs[k]);
        free(map);
        free(outs);
        free(reach);
        inlined++;
    }
    return inlined;
}
