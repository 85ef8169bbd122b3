/* loops.c: loop statistics of a run (RtOptions.loop_stats): per loop of
 * the script or a function, by its script position, how often it was
 * entered and how many iterations its body ran. Clients read them after
 * the run (braid_loops): the Python estimators' n_iter_ is the builtin's
 * main loop's count, read here instead of from the builtin's printed
 * lines. Counted per process: iterations a remote parfor runs on other
 * MPI ranks count there. */
#include <stdlib.h>
#include <string.h>

#include "interp.h"

static bool same_span(Span a, Span b)
{
    return a.line == b.line && a.col == b.col && (a.file == b.file || (a.file && b.file && !strcmp(a.file, b.file)));
}

void rt_loop_done(Rt *rt, const PBlock *b, int64_t n)
{
    pthread_mutex_lock(&rt->lock);   /* parfor workers' loops */
    int i = 0;
    while (i < rt->nloops && !same_span(rt->loops[i].span, b->span)) i++;
    if (i == rt->nloops && rt->nloops == rt->lcap) {
        int cap = rt->lcap ? 2 * rt->lcap : 16;
        RtLoop *v = realloc(rt->loops, (size_t)cap * sizeof *v);
        if (!v) { pthread_mutex_unlock(&rt->lock); return; }
        rt->loops = v;
        rt->lcap = cap;
    }
    if (i == rt->nloops) rt->loops[rt->nloops++] = (RtLoop){.span = b->span};
    RtLoop *l = &rt->loops[i];
    l->entries++;
    l->iterations += n;
    if (n > l->max_iterations) l->max_iterations = n;
    pthread_mutex_unlock(&rt->lock);
}
