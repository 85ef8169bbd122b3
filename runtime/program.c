/* program.c: the runtime program's data: name sets, block lists, freeing
 * blocks and their code. */
#include "program.h"
#include "../base/vec.h"

#include <stdlib.h>
#include <string.h>

bool ns_has(const NameSet *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->v[i], name) == 0) return true;
    return false;
}

bool ns_add(NameSet *s, const char *name)
{
    if (ns_has(s, name)) return false;
    if (!br_grow((void **)&s->v, &s->cap, s->n + 1, sizeof(char *))) {
        s->oom = true;
        return false;
    }
    s->v[s->n++] = name;
    return true;
}

void ns_free(NameSet *s) { free(s->v); s->v = NULL; s->n = s->cap = 0; s->oom = false; }

bool pbl_add(PBList *l, PBlock *b)
{
    if (!br_grow((void **)&l->v, &l->cap, l->n + 1, sizeof(PBlock *))) return false;
    l->v[l->n++] = b;
    return true;
}

void pblock_free(const RtProgram *p, PBlock *b)
{
    if (!b) return;
    if (b->rc_free) b->rc_free(b->rc_cache);
    plan_code_free(b->code);
    if (b->dag && p && p->hooks) p->hooks->free_dag(b->dag);
    for (int i = 0; i < b->body.n; i++) pblock_free(p, b->body.v[i]);
    for (int i = 0; i < b->els.n; i++) pblock_free(p, b->els.v[i]);
    free(b->body.v);
    free(b->els.v);
    ns_free(&b->live_out);
    ns_free(&b->results);
    ns_free(&b->accums);
    free(b);
}

static bool same_scalar(const Value *a, const Value *b)
{
    if (a->kind != b->kind) return false;
    switch (a->kind) {
    case V_INT: return a->i == b->i;
    case V_BOOL: return a->b == b->b;
    case V_DOUBLE: return memcmp(&a->d, &b->d, sizeof a->d) == 0;
    case V_STRING: return strcmp(a->s->s, b->s->s) == 0;
    default: return false;
    }
}

bool fprog_accepts(const FProg *fp, const Value *args)
{
    if (!fp->compiled || !fp->sig) return false;
    for (int i = 0; i < fp->func->nin; i++) {
        const FSig *g = &fp->sig[i];
        const Value *a = &args[i];
        if (g->rows >= 0 && (a->kind != V_MATRIX || a->m->rows != g->rows || a->m->cols != g->cols)) return false;
        if (g->v.kind != V_NONE && !same_scalar(a, &g->v)) return false;
    }
    return true;
}

void fprog_free(const RtProgram *p, FProg *fp)
{
    if (!fp) return;
    for (int k = 0; k < fp->body.n; k++) pblock_free(p, fp->body.v[k]);
    free(fp->body.v);
    for (int i = 0; fp->sig && i < fp->func->nin; i++) val_release(&fp->sig[i].v);
    free(fp->sig);
    free(fp->out_dims);
    free(fp);
}

void plan_code_free(Code *c)
{
    if (!c) return;
    for (int i = 0; i < c->n; i++) { free(c->ins[i].in); free(c->ins[i].frees); free(c->ins[i].est); }
    free(c->ins);
    free(c->wnames);
    free(c->wregs);
    free(c);
}
