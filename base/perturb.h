/* perturb.h: deterministic schedule perturbation, a test tool (off by
 * default; docs/DESIGN.md "Schedule perturbation").
 *
 * BRAID_PERTURB=<seed> makes the places where results could depend on
 * timing take seeded choices instead: whether a fused operator's kernel is
 * ready at a call (always, never, or from the Nth call of a thread on),
 * the kernel threads, the parfor degree and the order in which parfor
 * workers take their iterations (with seeded yields and sleeps between
 * them), and forced misses of the kernel disk cache, the plan-selection
 * cache and the recompilation cache. Each choice is a hash of the seed, a
 * site and a key that does not depend on the schedule (an operator's plan
 * hash, a parfor worker index, a per-thread and per-site call count), so
 * a run with the same seed takes the same choices again (in parfor workers,
 * up to the recompilation cache they share). The seed is printed to stderr
 * at the start of a run ("braid: perturbation seed N"). */
#ifndef BRAID_PERTURB_H
#define BRAID_PERTURB_H

#include <stdbool.h>
#include <stdint.h>

/* The perturbation sites: each draws from its own stream. */
typedef enum {
    PT_CG_READY,      /* a fused operator's kernel ready from call N */
    PT_THREADS,       /* kernel threads */
    PT_PARFOR_DEGREE, /* parfor workers */
    PT_PARFOR_ORDER,  /* parfor iteration order */
    PT_PARFOR_YIELD,  /* pauses between parfor iterations */
    PT_DISK_MISS,     /* kernel disk cache misses */
    PT_SEL_MISS,      /* plan-selection cache misses */
    PT_RC_MISS,       /* recompilation cache misses */
    PT_PLAN_MISS,     /* in-memory plan cache (operator) misses */
    PT_NSITES
} PtSite;

/* Is the mode on (BRAID_PERTURB set, read once)? */
bool br_perturb_on(void);
/* The seed of this run (0 when off). */
uint64_t br_perturb_seed(void);
/* Prints the seed to stderr once per process (no-op when off). */
void br_perturb_announce(void);
/* A draw in [0, n) for site and keys a, b (n > 0; 0 when off). */
uint64_t br_perturb_draw(PtSite site, uint64_t a, uint64_t b, uint64_t n);
/* A forced cache miss at site for key (false when off): one in four. */
bool br_perturb_miss(PtSite site, uint64_t key);
/* A forced miss of one of the calling thread's first 64 lookups at site
 * (one in four of them): bounded, so that a loop of 20000 iterations
 * does not recompile thousands of times. */
bool br_perturb_miss_early(PtSite site, uint64_t key);

/* The calling thread's perturbation streams: parfor worker w (-1: the
 * main thread), each site's call count from 0 (a worker's start). */
typedef struct { int worker; uint64_t calls[PT_NSITES]; } PtThread;
PtThread br_perturb_thread_save(void);
void br_perturb_thread_restore(const PtThread *s);
void br_perturb_thread_start(int worker);
int br_perturb_worker(void);
/* The calling thread's next call number at site (per thread and site,
 * so that one site's calls do not shift another's draws). */
uint64_t br_perturb_next_call(PtSite site);
/* Seeded pause: nothing, sched_yield, or a sleep of up to 2 ms. */
void br_perturb_pause(uint64_t a, uint64_t b);

#endif
