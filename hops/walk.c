/* walk.c: the DAG walker. One iterative depth-first traversal (no
 * recursion, so a long chain of operators cannot overflow the stack)
 * that gives the HOPs in the order a recursive post-order visit from
 * each root and then each write would: instruction generation, the
 * rewrite passes, the memo table of fusion and -explain all use it. */
#include "hop.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

typedef struct Frame { Hop *h; int next; } Frame;   /* next: input to visit */

/* Visits h and everything below it that is not yet seen, appending to
 * out in post-order; stack has room for d->n frames. */
static void visit(const HopDag *d, Hop *h, char *seen, Frame *stack, Hop **out, int *n)
{
    if (!h || seen[h->id]) return;
    int top = 0;
    seen[h->id] = 1;
    stack[0] = (Frame){h, 0};
    while (top >= 0) {
        Frame *f = &stack[top];
        if (f->next < f->h->nin) {
            Hop *x = f->h->in[f->next++];
            if (!x) continue;
            assert(x->id >= 1 && x->id <= d->n && d->hops[x->id - 1] == x);
            if (seen[x->id]) continue;
            seen[x->id] = 1;
            assert(top + 1 < d->n);
            stack[++top] = (Frame){x, 0};
        } else {
            assert(*n < d->n);
            out[(*n)++] = f->h;
            top--;
        }
    }
}

Hop **hop_walk(const HopDag *d, int *n, char **seen)
{
    *n = 0;
    if (seen) *seen = NULL;
    /* one block: the result, then the stack and (unless the caller keeps
     * it) the seen set, which die with the result's free */
    size_t nh = (size_t)d->n + 1;
    size_t bytes = nh * sizeof(Hop *) + nh * sizeof(Frame) + (seen ? 0 : nh + 1);
    Hop **out = malloc(bytes);
    char *set = seen ? calloc(nh + 1, 1) : NULL;
    if (!out || (seen && !set)) {
        free(out);
        free(set);
        return NULL;
    }
    Frame *stack = (Frame *)(out + nh);
    if (!seen) {
        set = (char *)(stack + nh);
        memset(set, 0, nh + 1);
    }
    for (int i = 0; i < d->nroots; i++) {
        assert(!d->roots[i] || (d->roots[i]->id >= 1 && d->roots[i]->id <= d->n));
        visit(d, d->roots[i], set, stack, out, n);
    }
    for (int i = 0; i < d->nw; i++) {
        assert(!d->whops[i] || (d->whops[i]->id >= 1 && d->whops[i]->id <= d->n));
        visit(d, d->whops[i], set, stack, out, n);
    }
    if (seen) *seen = set;
    return out;
}

bool hop_walk_below(const HopDag *d, Hop *h, char *seen, Hop **out, int *n)
{
    if (!h || seen[h->id]) return true;
    Frame *stack = malloc(((size_t)d->n + 1) * sizeof(Frame));
    if (!stack) return false;
    visit(d, h, seen, stack, out, n);
    free(stack);
    return true;
}
