/* perturb.c: seeded choices for the schedule-perturbation test mode
 * (perturb.h). Every draw is a pure function of (seed, site, keys), so
 * it does not depend on which thread asks first. */
#include "perturb.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool on;
static uint64_t seed;
static int announced;

static void read_env(void)
{
    const char *v = getenv("BRAID_PERTURB");
    if (!v || !*v) return;
    char *end;
    unsigned long long s = strtoull(v, &end, 10);
    if (*end) {
        fprintf(stderr, "braid: BRAID_PERTURB must be a seed (a decimal number), not '%s': ignored\n", v);
        return;
    }
    on = true;
    seed = s;
}

bool br_perturb_on(void)
{
    pthread_once(&once, read_env);
    return on;
}

uint64_t br_perturb_seed(void) { return br_perturb_on() ? seed : 0; }

void br_perturb_announce(void)
{
    if (br_perturb_on() && !__atomic_exchange_n(&announced, 1, __ATOMIC_RELAXED))
        fprintf(stderr, "braid: perturbation seed %llu\n", (unsigned long long)seed);
}

/* splitmix64's finalizer: a good 64-bit mix */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t br_perturb_draw(PtSite site, uint64_t a, uint64_t b, uint64_t n)
{
    if (!br_perturb_on() || n == 0) return 0;
    uint64_t h = mix(seed ^ mix((uint64_t)site + 0x51ed270b27a3c1d5ULL));
    h = mix(h ^ a);
    h = mix(h ^ (b * 0xd6e8feb86659fd93ULL));
    return h % n;
}

bool br_perturb_miss(PtSite site, uint64_t key)
{
    return br_perturb_on() && br_perturb_draw(site, key, 0, 4) == 0;
}

static __thread PtThread tl = {.worker = -1};

bool br_perturb_miss_early(PtSite site, uint64_t key)
{
    if (!br_perturb_on()) return false;
    uint64_t call = tl.calls[site]++;
    return call < 64 && br_perturb_draw(site, key, call, 4) == 0;
}

PtThread br_perturb_thread_save(void) { return tl; }

void br_perturb_thread_restore(const PtThread *s) { tl = *s; }

void br_perturb_thread_start(int worker) { tl = (PtThread){.worker = worker}; }

int br_perturb_worker(void) { return tl.worker; }

uint64_t br_perturb_next_call(PtSite site) { return tl.calls[site]++; }

void br_perturb_pause(uint64_t a, uint64_t b)
{
    uint64_t d = br_perturb_draw(PT_PARFOR_YIELD, a, b, 8);
    if (d == 0 || d == 1) return;
    if (d < 5) { sched_yield(); return; }
    struct timespec ts = {0, (long)br_perturb_draw(PT_PARFOR_YIELD, b, a, 2000000)};
    nanosleep(&ts, NULL);
}
