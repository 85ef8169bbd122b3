/* recompile.c: dynamic recompilation (seed 002, section 4). A DAG whose
 * sizes were unknown at compile time is recompiled right before each
 * execution: a deep copy of the DAG gets the live variables' real sizes
 * (and the values of scalar variables as literals), then static and
 * dynamic rewrites, memory estimates, operator selection and instruction
 * generation run on the copy. The original DAG stays for later runs. */
#include "recompile.h"

#include <stdlib.h>
#include <string.h>

/* Deep copy of the hops of src reachable from its roots and writes. */
static HopDag *dag_copy(const HopDag *src)
{
    HopDag *d = hop_dag_new();
    Hop **map = calloc((size_t)src->n + 2, sizeof(Hop *));
    for (int i = 0; i < src->n; i++) {
        const Hop *s = src->hops[i];
        Hop *h = hop_new(d, s->kind, s->span, s->nin);
        Hop **in = h->in;
        int id = h->id;
        *h = *s;
        h->in = in;
        h->id = id;
        if (s->kind == H_LIT) h->lit = val_retain(s->lit);
        map[s->id] = h;
    }
    for (int i = 0; i < src->n; i++) {
        const Hop *s = src->hops[i];
        Hop *h = map[s->id];
        for (int k = 0; k < s->nin; k++) h->in[k] = s->in[k] ? map[s->in[k]->id] : NULL;
    }
    for (int i = 0; i < src->nroots; i++) hop_add_root(d, map[src->roots[i]->id]);
    for (int i = 0; i < src->nw; i++) hop_set_write(d, src->wnames[i], map[src->whops[i]->id]);
    d->rnames = malloc(((size_t)src->nr + 1) * sizeof(char *));
    if (src->nr) memcpy(d->rnames, src->rnames, (size_t)src->nr * sizeof(char *));
    d->nr = src->nr;
    free(map);
    return d;
}

/* Statistics of the live variables into the copy's transient reads. */
static void update_stats(HopDag *d, SymTab *vars)
{
    for (int i = 0; i < d->n; i++) {
        Hop *h = d->hops[i];
        if (h->kind != H_TREAD) continue;
        Value *v = st_get(vars, h->name);
        if (!v) continue;
        if (v->kind == V_MATRIX) {
            h->dt = DT_MATRIX;
            h->vt = VT_DOUBLE;
            h->rows = v->m->rows;
            h->cols = v->m->cols;
            h->nnz = v->m->nnz;
            h->mem = (double)mb_bytes(v->m);
        } else if (!h->move && (v->kind == V_INT || v->kind == V_DOUBLE || v->kind == V_BOOL)) {
            /* literal replacement of scalar variables */
            h->kind = H_LIT;
            h->lit = *v;
            h->name = NULL;
            hop_infer(h);
        } else if (v->kind == V_LIST) {
            h->dt = DT_LIST;
        } else if (v->kind == V_STRING) {
            h->dt = DT_SCALAR;
            h->vt = VT_STRING;
        }
    }
}

Code *rc_recompile(RtProgram *p, HopDag *src, SymTab *vars, int mode, HopDag **copy, RwStats *st)
{
    HopDag *d = dag_copy(src);
    update_stats(d, vars);
    rw_propagate_sizes(d);
    if (p->optlevel > 0) {
        rw_static(d, st);
        rw_dynamic(d, st);
    }
    if (p->cg) cg_optimize_dag(p->cg, d);
    *copy = d;
    return plan_codegen_dag(d, mode);
}
