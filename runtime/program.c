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

void plan_code_free(Code *c)
{
    if (!c) return;
    for (int i = 0; i < c->n; i++) { free(c->ins[i].in); free(c->ins[i].frees); free(c->ins[i].est); }
    free(c->ins);
    free(c->wnames);
    free(c->wregs);
    free(c);
}
