/* dagship.c: a block's HOP DAG as bytes and back, for the remote parfor
 * plans of runtime/planship.c (which sees no HOP: it calls these through
 * RtHooks.dag_check / dag_put / dag_get). Blocks that rank 0 recompiles
 * before each execution ship their DAG so that a worker recompiles them
 * with its iterations' sizes as rank 0 does. Every hop travels with its
 * fields and its inputs by id (hop i has id i + 1); functions,
 * specializations and where-loops go through the plan's references
 * (PsRefs): by name, by index into the plan's functions, by place in
 * the script. */
#include "dagship.h"

#include "../hops/hop.h"

/* Why DAG d cannot be shipped (NULL: it can); the specializations its
 * calls chose join the plan's functions. A DAG to recompile is neither
 * fused nor stitched (codegen and cg_stitch_dag leave a DAG marked for
 * recompilation alone and run on each recompiled copy, on every rank),
 * so it holds no operator handles and no stitched regions: a block whose
 * recompilation stitches regions under -gpu ships (tests/mpi/run.sh, the
 * -gpu case's second loop). The H_SPOOF and H_STITCH cases guard that. */
static const char *dag_check(const void *dag, const PsRefs *r)
{
    const HopDag *d = dag;
    if (d->oom) return "a DAG that ran out of memory";
    for (int i = 0; i < d->n; i++) {
        const Hop *h = d->hops[i];
        if (h->id != i + 1) return "a DAG out of order";
        switch (h->kind) {
        case H_WHERE:
            if (r->where_index(r->ctx, h->where) < 0) return "an AMULET where-loop outside the script's functions";
            break;
        case H_SPOOF: case H_STITCH: return "a fused operator in a DAG to recompile";
        case H_FCALL:
            if (!r->by_name(r->ctx, h->func)) return "a call of a function not found by its name";
            r->spec_index(r->ctx, h->spec);
            break;
        default: break;
        }
    }
    return NULL;
}

/* A hop's fields; its inputs follow in put_dag (by id: hop i has id
 * i + 1, checked by check_dag). */
static void put_hop(const PsRefs *r, StrBuf *o, const Hop *h)
{
    w_put_span(o, h->span);
    int32_t f[16] = {h->kind, h->op, h->dir, h->bi, h->out_index, h->nouts, h->nin, h->nvar,
                     h->flag, h->exec, h->ix.rmode, h->ix.cmode, h->dt, h->vt, h->nuse, h->reg};
    w_put(o, f, sizeof f);
    uint8_t flags[5] = {h->move, h->known, h->sidefx, h->ix.has_col, h->anames != NULL};
    w_put(o, flags, sizeof flags);
    int64_t z[5] = {h->rows, h->cols, h->nnz, h->wrows, h->wcols};
    w_put(o, z, sizeof z);
    double m[6] = {h->opmem, h->memlb, h->mem, h->cbytes, h->cgroups, h->cest};
    w_put(o, m, sizeof m);
    Value none = val_none();
    w_put_value(o, h->kind == H_LIT ? &h->lit : &none);
    w_put_name(o, h->name);
    w_put_name(o, h->func ? h->func->ns : NULL);
    w_put_name(o, h->func ? h->func->name : NULL);
    w_put_i32(o, h->spec ? r->spec_index(r->ctx, h->spec) : -1);
    w_put_i32(o, h->kind == H_WHERE ? r->where_index(r->ctx, h->where) : -1);
    for (int i = 0; h->anames && i < h->nvar; i++) w_put_name(o, h->anames[i]);
}

static void put_ids(StrBuf *o, Hop *const *v, int n)
{
    w_put_i32(o, n);
    for (int i = 0; i < n; i++) w_put_i32(o, v[i] ? v[i]->id : 0);
}

static void dag_put(const void *dag, StrBuf *o, const PsRefs *r)
{
    const HopDag *d = dag;
    w_put_i32(o, d->n);
    for (int i = 0; i < d->n; i++) put_hop(r, o, d->hops[i]);
    for (int i = 0; i < d->n; i++) put_ids(o, d->hops[i]->in, d->hops[i]->nin);
    put_ids(o, d->roots, d->nroots);
    w_put_i32(o, d->nw);
    for (int i = 0; i < d->nw; i++) {
        w_put_name(o, d->wnames[i]);
        w_put_i32(o, d->whops[i]->id);
    }
    w_put_i32(o, d->nr);
    for (int i = 0; i < d->nr; i++) w_put_name(o, d->rnames[i]);
    uint8_t rc = d->recompile;
    w_put(o, &rc, 1);
}

/* Hop id (1..n of d; 0: none) as a hop of d. */
static Hop *hop_at(const PsRefs *u, HopDag *d, int32_t id, bool none_ok)
{
    if (id == 0 && none_ok) return NULL;
    if (id <= 0 || id > d->n) { u->bad(u->ctx, "a hop id"); return NULL; }
    return d->hops[id - 1];
}

static void get_hop(WRd *r, const PsRefs *u, HopDag *d)
{
    Span sp = w_get_span(r);
    int32_t f[16];
    w_get(r, f, sizeof f);
    if (r->bad || (unsigned)f[0] > H_STITCH || f[0] == H_SPOOF || f[0] == H_STITCH ||
        (unsigned)f[1] >= OP__COUNT || (unsigned)f[3] >= BI__COUNT || f[6] < 0 || f[7] < 0 || f[7] > f[6]) {
        u->bad(u->ctx, "a hop");
        return;
    }
    Hop *h = hop_new(d, (HopKind)f[0], sp, f[6]);
    if (!h || d->oom) { u->bad(u->ctx, "out of memory"); return; }
    h->op = f[1], h->dir = f[2], h->bi = f[3], h->out_index = f[4], h->nouts = f[5], h->nvar = f[7];
    h->flag = f[8], h->exec = f[9], h->ix.rmode = f[10], h->ix.cmode = f[11], h->dt = f[12], h->vt = f[13];
    h->nuse = f[14], h->reg = f[15];
    uint8_t flags[5];
    w_get(r, flags, sizeof flags);
    h->move = flags[0], h->known = flags[1], h->sidefx = flags[2], h->ix.has_col = flags[3];
    int64_t z[5];
    w_get(r, z, sizeof z);
    h->rows = z[0], h->cols = z[1], h->nnz = z[2], h->wrows = z[3], h->wcols = z[4];
    double m[6];
    w_get(r, m, sizeof m);
    h->opmem = m[0], h->memlb = m[1], h->mem = m[2], h->cbytes = m[3], h->cgroups = m[4], h->cest = m[5];
    Value lit = w_get_value(r, u->e);
    if (h->kind == H_LIT) h->lit = lit;   /* owned by the DAG */
    else val_release(&lit);
    h->name = w_get_name(r);
    const char *ns = w_get_name(r), *fname = w_get_name(r);
    h->func = fname ? u->func(u->ctx, ns, fname) : NULL;
    h->spec = u->spec_at(u->ctx, w_get_i32(r));
    int32_t where = w_get_i32(r);
    h->where = h->kind == H_WHERE ? u->where_at(u->ctx, where) : NULL;
    if (flags[4] && h->nvar > 0) {
        h->anames = arena_alloc(d->arena, (size_t)h->nvar * sizeof *h->anames);
        if (!h->anames) { u->bad(u->ctx, "out of memory"); return; }
        for (int i = 0; i < h->nvar; i++) h->anames[i] = w_get_name(r);
    }
}

/* A block's DAG as rank 0 kept it for recompilation (put_dag). */
static void *dag_get(WRd *r, const PsRefs *u)
{
    int32_t n = w_get_i32(r);
    HopDag *d = n >= 0 && !r->bad ? hop_dag_new() : NULL;
    if (!d) { u->bad(u->ctx, "a DAG"); return NULL; }
    for (int i = 0; i < n && !r->bad; i++) get_hop(r, u, d);
    for (int i = 0; i < d->n && !r->bad; i++) {
        Hop *h = d->hops[i];
        if (w_get_i32(r) != h->nin) u->bad(u->ctx, "a hop's inputs");
        for (int k = 0; k < h->nin && !r->bad; k++) h->in[k] = hop_at(u, d, w_get_i32(r), true);
    }
    int32_t nroots = w_get_i32(r);
    for (int i = 0; i < nroots && !r->bad; i++) {
        Hop *h = hop_at(u, d, w_get_i32(r), false);
        if (h) hop_add_root(d, h);
    }
    int32_t nw = w_get_i32(r);
    for (int i = 0; i < nw && !r->bad; i++) {
        const char *name = w_get_name(r);
        Hop *h = hop_at(u, d, w_get_i32(r), false);
        if (!name) u->bad(u->ctx, "a written variable");
        else if (h) hop_set_write(d, name, h);
    }
    int32_t nr = w_get_i32(r);
    for (int i = 0; i < nr && !r->bad; i++) {
        const char *name = w_get_name(r);
        if (name) hop_add_read(d, name);
        else u->bad(u->ctx, "a read variable");
    }
    d->recompile = w_get_u8(r) != 0;
    if (d->oom) u->bad(u->ctx, "out of memory");
    return d;
}

const RtDagShip plan_dagship = {.check = dag_check, .put = dag_put, .get = dag_get};
