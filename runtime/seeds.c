/* seeds.c: the seeds of rand()/sample() calls without a seed under
 * -seed N. Outside parfor they are N, N+1, ... in call order (the main
 * thread's order is the program's). A parfor iteration draws from its own
 * stream, keyed by a base the loop takes from its caller's stream and the
 * iteration's index: which worker runs an iteration, how many workers
 * there are and when they run does not change a seed (a shared counter
 * did: the workers took its values in the order they reached it). */
#include "interp.h"

typedef struct { bool on; uint64_t base, iter, count; } Stream;

static __thread Stream tl;

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

int64_t rt_next_seed(Rt *rt)
{
    if (rt->opt.seed < 0) return -1;
    if (!tl.on) return rt->opt.seed + __atomic_fetch_add(&rt->seed_counter, 1, __ATOMIC_RELAXED);
    uint64_t s = mix(mix(tl.base ^ mix(tl.iter)) + tl.count++);
    return (int64_t)(s & (uint64_t)INT64_MAX);   /* never -1 (unseeded) */
}

uint64_t rt_seed_loop_base(Rt *rt)
{
    return rt->opt.seed < 0 ? 0 : (uint64_t)rt_next_seed(rt);
}

void rt_seed_iter(Rt *rt, uint64_t base, int64_t iter)
{
    if (rt->opt.seed < 0) return;
    tl.on = true;
    tl.base = base;
    tl.iter = (uint64_t)iter;
    tl.count = 0;
}

RtSeedState rt_seed_save(void) { return (RtSeedState){tl.on, tl.base, tl.iter, tl.count}; }

void rt_seed_restore(RtSeedState s) { tl = (Stream){s.on, s.base, s.iter, s.count}; }
