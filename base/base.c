/* base.c: errors, allocation, growable arrays, threads, clock. */
#include "base.h"
#include "perturb.h"
#include "vec.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <signal.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
/* The sanitizer build's default options (ASAN_OPTIONS, parsed after them,
 * still wins), for every program linked with libbraid that gcc built with
 * ASan (make SAN=1: the tests and braid).
 *
 * intercept_tls_get_addr=0: up to GCC 13 and LLVM 16 (Debian 12 has GCC
 * 12) the run time's __tls_get_addr interceptor takes a dynamic TLS block
 * (PoCL's LLVM, a generated kernel's shared object) that happens to start
 * 16 bytes into a page for one of glibc 2.19's, reads the two words before
 * it as the block's start and size, and records garbage; LeakSanitizer's
 * tracer then faults scanning that range at exit ("Tracer caught signal
 * 11", "LeakSanitizer has encountered a fatal error": test_cgstitch in the
 * CI of session 67's submission, after every check had passed). Without
 * the interceptor the blocks are still scanned: they are heap blocks
 * reachable from the thread's vector of them (google/sanitizers#1322). */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "intercept_tls_get_addr=0"; }
#endif

int br_err(BrErr *e, int code, const char *fmt, ...)
{
    if (!e || e->code) return code;
    e->code = code ? code : BR_EFAIL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return e->code;
}

/* Allocation-failure injection (tests/test_allocfail.c, SQLite-style):
 * with BRAID_FAIL_ALLOC=N the Nth allocation through the br_* wrappers
 * fails (once), and a line on stderr says so; every failure must become a
 * clean "out of memory" error. */
static long g_fail_at = -1, g_alloc_count;
static bool g_fail_quiet;   /* armed in-process (br_alloc_fail_arm) */

static void print_alloc_count(void)
{
    fprintf(stderr, "braid: allocations counted %ld\n", __atomic_load_n(&g_alloc_count, __ATOMIC_RELAXED));
}

/* The allocation that fails (0: none), BRAID_FAIL_ALLOC's at the first.
 * BRAID_FAIL_ALLOC=count: none fails, and the count of allocations is
 * printed at exit ("braid: allocations counted N"), so that the test
 * knows how many there are from one run. */
static long fail_at(void)
{
    long at = __atomic_load_n(&g_fail_at, __ATOMIC_RELAXED);
    if (at < 0) {
        const char *v = getenv("BRAID_FAIL_ALLOC");
        long n = v ? atol(v) : 0;
        bool count = v && !strcmp(v, "count");
        at = count ? LONG_MAX : n > 0 ? n : 0;
        /* the first caller decides (and registers the handler) */
        long unset = -1;
        if (!__atomic_compare_exchange_n(&g_fail_at, &unset, at, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            at = unset;
        else if (count)
            atexit(print_alloc_count);
    }
    return at;
}

static bool fail_injected(void)
{
    long at = fail_at();
    if (at == 0) return false;
    if (__atomic_add_fetch(&g_alloc_count, 1, __ATOMIC_RELAXED) != at) return false;
    if (!__atomic_load_n(&g_fail_quiet, __ATOMIC_RELAXED))
        fprintf(stderr, "braid: injected allocation failure %ld\n", at);
    return true;
}

long br_alloc_fail_arm(long n)
{
    fail_at();   /* BRAID_FAIL_ALLOC read first: arming overrides it */
    long counted = __atomic_exchange_n(&g_alloc_count, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g_fail_quiet, true, __ATOMIC_RELAXED);
    /* counting only: a count never reached */
    __atomic_store_n(&g_fail_at, n > 0 ? n : n == 0 ? LONG_MAX : 0, __ATOMIC_RELAXED);
    return counted;
}

/* The raw mode (BRAID_FAIL_ALLOC_RAW=1): the braid binary's plain
 * malloc/calloc/realloc calls count too (cli/main.c wraps them at link
 * time); not yet clean, so not in CI (docs/DESIGN.md). */
bool br_alloc_fail_raw(void)
{
    static int raw = -1;
    int r = __atomic_load_n(&raw, __ATOMIC_RELAXED);
    if (r < 0) {
        const char *v = getenv("BRAID_FAIL_ALLOC_RAW");
        r = v && *v && strcmp(v, "0") != 0;
        __atomic_store_n(&raw, r, __ATOMIC_RELAXED);
    }
    return r && fail_injected();
}

void *br_malloc(size_t n) { return fail_injected() ? (errno = ENOMEM, NULL) : malloc(n ? n : 1); }
void *br_calloc(size_t n, size_t size)
{
    return fail_injected() ? (errno = ENOMEM, NULL) : calloc(n ? n : 1, size ? size : 1);
}
void *br_realloc(void *p, size_t n) { return fail_injected() ? (errno = ENOMEM, NULL) : realloc(p, n ? n : 1); }

/* Aligned blocks carry their capacity in a 64-byte header (the rest of
 * the header links a block kept in a pool). Blocks of at least HUGE_MIN
 * bytes are mapped at a 2 MB boundary, in whole 2 MB pages, and advised
 * to use transparent huge pages (the kernel's default mode is "madvise")
 * before anything touches them. On a virtual machine a TLB miss walks two
 * page tables, and streaming kernels over 4 KB pages lost 10-30% of their
 * time to it (bench_codegen, docs/DESIGN.md); and a first touch costs a
 * fault per page: on the benchmark VM about 10 us per 4 KB page (2.5 ms
 * per MB) against about 0.05-1.7 ms per MB in 2 MB pages (docs/perf.md
 * "Fresh memory"). A block of 1 to 2 MB takes a whole 2 MB page. NumPy
 * advises its large arrays the same way. */
#define ALIGN_HDR 64
#define HUGE_MIN ((size_t)1 << 20)
#define HUGE_PAGE ((size_t)2 << 20)

/* Buffer pools (base.h, docs/DESIGN.md "Buffer pools"). A block of at
 * least POOL_MIN bytes (glibc's default mmap threshold: larger blocks
 * come from fresh zero pages, one fault per 4 KB) gets the capacity of
 * its size class: four classes per power of two, (4+s) * 2^(k-2), so any
 * kept block of a class serves any request of it and wastes at most a
 * quarter. Each class keeps a LIFO list of freed blocks. */
#define POOL_MIN ((size_t)128 << 10)
#define POOL_CLASSES (4 * 64)

struct BrPool {
    pthread_mutex_t lock;
    size_t cap, bytes;
    void *head[POOL_CLASSES];       /* kept blocks (their headers) */
    uint64_t used[POOL_CLASSES];    /* tick of the class's last take/put */
    uint64_t tick;
    BrPoolStats st;
};

static __thread BrPool *t_pool;

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
/* a kept block's data is poisoned: a use after its release is reported
 * as in free()d memory, never served by the pool's reuse */
#define POOL_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define POOL_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POOL_POISON(p, n) ((void)(p), (void)(n))
#define POOL_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/* The class of a block of sz bytes (header included), and its capacity. */
static int pool_class(size_t sz, size_t *cap)
{
    int k = 63 - __builtin_clzll((unsigned long long)sz);   /* 2^k <= sz */
    size_t q = (size_t)1 << (k - 2);
    size_t s = (sz - ((size_t)1 << k) + q - 1) / q;         /* 0..4 */
    if (s == 4) { k++; s = 0; q <<= 1; }
    *cap = (4 + s) * q;
    return 4 * k + (int)s;
}

BrPool *br_pool_new(size_t cap)
{
    BrPool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    pthread_mutex_init(&p->lock, NULL);
    p->cap = cap;
    return p;
}

/* Megabytes from environment variable name (a whole number >= 0), else
 * def bytes. */
static size_t env_mb(const char *name, size_t def)
{
    const char *v = getenv(name);
    if (v && *v) {
        char *end;
        long long mb = strtoll(v, &end, 10);
        if (end != v && !*end && mb >= 0) return (size_t)mb << 20;
    }
    return def;
}

size_t br_pool_default_cap(void) { return env_mb("BRAID_POOL_MB", BR_POOL_CAP); }

/* The length mapped for a block of capacity cap: whole 2 MB pages. */
static size_t huge_len(size_t cap) { return (cap + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1); }

/* Blocks that alloc_aligned mapped itself carry BLK_MAPPED in their
 * header's third word (the second links a kept block). */
#define BLK_MAPPED ((size_t)0x6d6d6170)
static size_t *blk_flag(char *b) { return (size_t *)(b + 2 * sizeof(size_t)); }

/* Gives block b (header address) back to the system. */
static void blk_release(char *b)
{
    if (*blk_flag(b) == BLK_MAPPED) (void)munmap(b, huge_len(*(size_t *)b));
    else free(b);
}

static void pool_drop(BrPool *p, int c)
{
    char *b = p->head[c];
    size_t cap = *(size_t *)b;
    POOL_UNPOISON(b + ALIGN_HDR, cap - ALIGN_HDR);
    p->head[c] = *(void **)(b + sizeof(size_t));
    p->bytes -= cap;
    p->st.dropped++;
    blk_release(b);
}

static bool pool_put(BrPool *p, char *b, size_t cap, int c);
static BrPool *reserve(void);

void br_pool_free(BrPool *p)
{
    if (!p) return;
    BrPool *r = reserve();
    for (int c = 0; c < POOL_CLASSES; c++)
        while (p->head[c]) {
            /* the reserve keeps what it can take (the pool is no one
             * else's now: its lock is not needed) */
            char *b = p->head[c];
            size_t cap = *(size_t *)b;
            if (!r || cap > r->cap / 2) {
                pool_drop(p, c);
                continue;
            }
            POOL_UNPOISON(b + ALIGN_HDR, cap - ALIGN_HDR);
            p->head[c] = *(void **)(b + sizeof(size_t));
            p->bytes -= cap;
            if (!pool_put(r, b, cap, c)) blk_release(b);
        }
    pthread_mutex_destroy(&p->lock);
    free(p);
}

BrPool *br_pool_bind(BrPool *p)
{
    BrPool *prev = t_pool;
    t_pool = p;
    return prev;
}

BrPool *br_pool_current(void) { return t_pool; }

void br_pool_stats(BrPool *p, BrPoolStats *s)
{
    pthread_mutex_lock(&p->lock);
    *s = p->st;
    s->bytes = p->bytes;
    s->cap = p->cap;
    pthread_mutex_unlock(&p->lock);
}

/* A kept block of class c (header address), or NULL. */
static char *pool_take(BrPool *p, int c)
{
    pthread_mutex_lock(&p->lock);
    char *b = p->head[c];
    if (b) {
        size_t cap = *(size_t *)b;
        p->head[c] = *(void **)(b + sizeof(size_t));
        p->bytes -= cap;
        p->st.hits++;
        POOL_UNPOISON(b + ALIGN_HDR, cap - ALIGN_HDR);
    } else {
        p->st.misses++;
    }
    p->used[c] = ++p->tick;
    pthread_mutex_unlock(&p->lock);
    return b;
}

/* Keeps block b (header address, capacity cap, class c); false: the
 * caller frees it. Over the cap, the classes used longest ago give
 * their blocks back first; a block above half the cap is never kept. */
static bool pool_put(BrPool *p, char *b, size_t cap, int c)
{
    if (cap > p->cap / 2) return false;
    pthread_mutex_lock(&p->lock);
    while (p->bytes + cap > p->cap) {
        int old = -1;
        for (int i = 0; i < POOL_CLASSES; i++)
            if (p->head[i] && i != c && (old < 0 || p->used[i] < p->used[old])) old = i;
        if (old < 0) old = c;   /* only this class holds blocks */
        pool_drop(p, old);
    }
    *(void **)(b + sizeof(size_t)) = p->head[c];
    p->head[c] = b;
    p->bytes += cap;
    p->used[c] = ++p->tick;
    p->st.kept++;
    if (p->bytes > p->st.peak) p->st.peak = p->bytes;
    POOL_POISON(b + ALIGN_HDR, cap - ALIGN_HDR);
    pthread_mutex_unlock(&p->lock);
    return true;
}

/* The process's reserve (base.h, docs/DESIGN.md "Buffer pools"): a pool
 * no thread binds, made at its first use; NULL when its cap is 0 or
 * without memory. */
static BrPool *g_reserve;
static pthread_once_t g_reserve_once = PTHREAD_ONCE_INIT;

size_t br_reserve_default_cap(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), ps = sysconf(_SC_PAGE_SIZE);
    size_t cap = BR_RESERVE_CAP;
    if (pages > 0 && ps > 0) {
        size_t m = (size_t)pages * (size_t)ps / 16;
        cap = m < BR_RESERVE_MIN ? BR_RESERVE_MIN : m < BR_RESERVE_CAP ? m : BR_RESERVE_CAP;
    }
    return env_mb("BRAID_RESERVE_MB", cap);
}

static void reserve_init(void)
{
    size_t cap = br_reserve_default_cap();
    g_reserve = cap ? br_pool_new(cap) : NULL;
}

static BrPool *reserve(void)
{
    pthread_once(&g_reserve_once, reserve_init);
    return g_reserve;
}

bool br_reserve_stats(BrPoolStats *s)
{
    BrPool *r = reserve();
    if (r) br_pool_stats(r, s);
    else memset(s, 0, sizeof *s);
    return r != NULL;
}

#if !defined(__SANITIZE_ADDRESS__)
/* A fresh block of sz bytes (a class capacity of at least HUGE_MIN: a
 * multiple of 256 KB, so whole pages) at a 2 MB boundary, mapped here in
 * whole 2 MB pages (huge_len): its pages are the kernel's zero pages
 * until touched, so br_calloc_aligned need not clear it (and does not
 * fault every page in on its one thread). NULL on failure. */
static char *map_huge(size_t sz)
{
    size_t hl = huge_len(sz), len = hl + HUGE_PAGE;
    if (hl < sz || len < hl) return NULL;
    char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return NULL;
    char *b = (char *)(((uintptr_t)m + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
    if (b > m) (void)munmap(m, (size_t)(b - m));
    if (b + hl < m + len) (void)munmap(b + hl, (size_t)(m + len - (b + hl)));
#ifdef MADV_HUGEPAGE
    /* before anything touches the block: a page faulted in first (the
     * header) would give its 2 MB range 4 KB pages for good */
    (void)madvise(b, hl, MADV_HUGEPAGE);
#endif
    return b;
}
#endif

/* Blocks of a pool's classes that no pool served (br_fresh_counts), and
 * blocks a pool served from other classes' pages (pool_gather). */
static int64_t g_fresh_blocks, g_fresh_bytes, g_gathered_blocks, g_gathered_bytes;

void br_fresh_counts(int64_t *blocks, int64_t *bytes)
{
    *blocks = __atomic_load_n(&g_fresh_blocks, __ATOMIC_RELAXED);
    *bytes = __atomic_load_n(&g_fresh_bytes, __ATOMIC_RELAXED);
}

void br_gathered_counts(int64_t *blocks, int64_t *bytes)
{
    *blocks = __atomic_load_n(&g_gathered_blocks, __ATOMIC_RELAXED);
    *bytes = __atomic_load_n(&g_gathered_bytes, __ATOMIC_RELAXED);
}

#if !defined(__SANITIZE_ADDRESS__)
/* Keeps the rest of a gathered block, len bytes of whole 2 MB pages at
 * b, in pool p as a block of the largest class that fits (its pages past
 * that class go back to the system). */
static void pool_keep_rest(BrPool *p, char *b, size_t len)
{
    size_t cap;
    int c = pool_class(len, &cap);
    if (cap > len) {   /* the class below: (4+s) * 2^(k-2) */
        c--;
        cap = (size_t)(4 + c % 4) << (c / 4 - 2);
    }
    if (huge_len(cap) < len) (void)munmap(b + huge_len(cap), len - huge_len(cap));
    *(size_t *)b = cap;
    *blk_flag(b) = BLK_MAPPED;
    if (!pool_put(p, b, cap, c)) blk_release(b);
}

/* A block of capacity sz made of the pages of blocks that pool p keeps
 * in other classes, or NULL when p keeps fewer mapped bytes than the
 * block needs. A fresh page costs a fault and a clear: on the benchmark
 * VM about 2.6 ms per MB while the host backs it again, 0.06 ms per MB
 * when the guest reuses its pages (docs/perf.md "Fresh memory"). Moving
 * a kept block's page tables to a new address (mremap) costs neither:
 * 0.1-0.3 ms a block, most of it the other threads' TLB flush. So a
 * pool whose blocks are of the wrong sizes (GLM's n x 1 vectors while
 * it asks for an n x 2 one) serves the request instead of growing the
 * process by it. Takes the blocks of the classes used longest ago first
 * (as pool_put drops them); the last block's pages beyond the need stay
 * kept as a block of their own (pool_keep_rest). Not zeroed.
 *
 * Taking a class's blocks can make it miss later in turn, so a loop
 * that never missed may now move pages each iteration. alloc_block
 * gathers from GATHER_MIN bytes, where such a move costs at most a few
 * percent of writing the block once (0.1 ms per MB at 10 GB/s); below
 * it a fresh block costs about as much as the move (MLogreg's 2-10 MB
 * blocks moved 12 times a run, for 4 MB fewer fresh pages). */
#define GATHER_MIN ((size_t)16 << 20)
static char *pool_gather(BrPool *p, size_t sz)
{
    size_t hl = huge_len(sz), have = 0;
    char *take[64];
    int nt = 0;
    pthread_mutex_lock(&p->lock);
    if (p->bytes >= hl) {
        bool done[POOL_CLASSES] = {false};
        while (have < hl && nt < 64) {
            int c = -1;
            for (int i = 0; i < POOL_CLASSES; i++)
                if (p->head[i] && !done[i] && (c < 0 || p->used[i] < p->used[c])) c = i;
            if (c < 0) break;
            done[c] = true;
            /* the mapped blocks of class c (a block malloc'd when its
             * mapping failed stays) */
            for (void **link = &p->head[c]; *link && have < hl && nt < 64;) {
                char *b = *link;
                void **next = (void **)(b + sizeof(size_t));
                if (*blk_flag(b) != BLK_MAPPED) {
                    link = next;
                    continue;
                }
                *link = *next;
                size_t cap = *(size_t *)b;
                p->bytes -= cap;
                have += huge_len(cap);
                take[nt++] = b;
            }
        }
        if (have < hl) {   /* not enough: the blocks stay kept */
            for (int i = 0; i < nt; i++) {
                char *b = take[i];
                size_t cap = *(size_t *)b;
                int c = pool_class(cap, &cap);
                *(void **)(b + sizeof(size_t)) = p->head[c];
                p->head[c] = b;
                p->bytes += cap;
            }
            nt = 0;
        } else {
            p->st.gathered++;
        }
    }
    pthread_mutex_unlock(&p->lock);
    if (!nt) return NULL;
    /* the new block's address range, at a 2 MB boundary; each kept
     * block's pages move over it in turn */
    char *dst = map_huge(sz);
    size_t at = 0;
    int i = 0;
    for (; dst && i < nt; i++) {
        char *b = take[i];
        size_t len = huge_len(*(size_t *)b), part = len < hl - at ? len : hl - at;
        if (mremap(b, part, part, MREMAP_MAYMOVE | MREMAP_FIXED, dst + at) == MAP_FAILED) break;
        if (part < len) pool_keep_rest(p, b + part, len - part);
        at += part;
    }
    if (!dst || i < nt) {   /* (the system's limit on mappings): fresh pages */
        for (; i < nt; i++) blk_release(take[i]);
        if (dst) (void)munmap(dst, hl);
        return NULL;
    }
    *(size_t *)dst = sz;
    *blk_flag(dst) = BLK_MAPPED;
    __atomic_fetch_add(&g_gathered_blocks, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&g_gathered_bytes, (int64_t)sz, __ATOMIC_RELAXED);
    return dst;
}
#endif

/* An aligned block of n bytes; scratch: below the pool's smallest class,
 * rounded up to it while a pool that keeps blocks is bound. *fresh (when
 * not NULL): whether the block is all zeros (freshly mapped). */
static void *alloc_block(size_t n, bool scratch, bool *fresh)
{
    if (fresh) *fresh = false;
    if (fail_injected()) return NULL;
    size_t sz = ((n + 63) & ~(size_t)63) + ALIGN_HDR;
    if (sz < n) return NULL;
    if (scratch && sz < POOL_MIN && t_pool && t_pool->cap / 2 >= POOL_MIN) sz = POOL_MIN;
    int c = -1;
    if (sz >= POOL_MIN && sz <= (size_t)1 << 62) c = pool_class(sz, &sz);
    char *p = c >= 0 && t_pool ? pool_take(t_pool, c) : NULL;
    if (!p && c >= 0 && reserve()) p = pool_take(g_reserve, c);
#if !defined(__SANITIZE_ADDRESS__)
    if (!p && c >= 0 && sz >= GATHER_MIN && t_pool) p = pool_gather(t_pool, sz);
    if (!p && c >= 0 && sz >= GATHER_MIN && g_reserve) p = pool_gather(g_reserve, sz);
#endif
    if (!p) {
        bool huge = sz >= HUGE_MIN;
        if (c >= 0) {
            __atomic_fetch_add(&g_fresh_blocks, 1, __ATOMIC_RELAXED);
            __atomic_fetch_add(&g_fresh_bytes, (int64_t)sz, __ATOMIC_RELAXED);
        }
#if !defined(__SANITIZE_ADDRESS__)
        /* (under AddressSanitizer large blocks stay malloc'd, so that its
         * leak check sees them) */
        if (huge && (p = map_huge(sz))) {
            *(size_t *)p = sz;
            *blk_flag(p) = BLK_MAPPED;
            if (fresh) *fresh = true;
        }
#endif
        if (!p) {
            void *q = NULL;
            if (posix_memalign(&q, huge ? HUGE_PAGE : 64, sz)) return NULL;
            p = q;
#ifdef MADV_HUGEPAGE
            if (huge) (void)madvise(p, sz / HUGE_PAGE * HUGE_PAGE, MADV_HUGEPAGE);
#endif
            *(size_t *)p = sz;
            *blk_flag(p) = 0;
        }
    }
    return p + ALIGN_HDR;
}

void *br_alloc_aligned(size_t n) { return alloc_block(n, false, NULL); }
void *br_alloc_scratch(size_t n) { return alloc_block(n, true, NULL); }

/* A block kept before is cleared by the threads of a team from HUGE_MIN
 * bytes (on a VM whose host takes idle pages back, a page the pool kept
 * may fault again; a team spreads that too). */
void *br_calloc_aligned(size_t n)
{
    bool fresh;
    char *p = alloc_block(n, false, &fresh);
    if (!p || fresh) return p;
    if (n < HUGE_MIN || !br_par((double)n / 8)) {
        memset(p, 0, n);
        return p;
    }
    size_t chunk = HUGE_PAGE, nc = (n + chunk - 1) / chunk;
#pragma omp parallel for num_threads(br_threads()) schedule(static)
    for (size_t c = 0; c < nc; c++) memset(p + c * chunk, 0, c + 1 < nc ? chunk : n - c * chunk);
    return p;
}

void br_free_aligned(void *q)
{
    if (!q) return;
    char *p = (char *)q - ALIGN_HDR;
    size_t cap = *(size_t *)p;
    if (cap >= POOL_MIN) {
        size_t cc;
        int c = pool_class(cap, &cc);
        BrPool *to = t_pool ? t_pool : reserve();
        if (to && cc == cap && pool_put(to, p, cap, c)) return;
    }
    blk_release(p);
}

void *br_realloc_aligned(void *p, size_t keep, size_t n)
{
    if (p && n <= *(size_t *)((char *)p - ALIGN_HDR) - ALIGN_HDR) return p;
    void *q = br_alloc_aligned(n);
    if (!q) return NULL;
    if (p && keep) memcpy(q, p, keep);
    br_free_aligned(p);
    return q;
}

char *br_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = br_malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static int g_threads = 0; /* process-wide setting; 0 = not yet decided */

int br_threads(void)
{
    if (g_threads <= 0) br_set_threads(0);
    return g_threads;
}

void br_set_threads(int n)
{
    if (n <= 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        n = c > 0 ? (int)c : 1;
    }
    /* schedule perturbation (perturb.h): 1 to 8 threads, whatever the
     * machine (a seed's choices must not depend on its core count) */
    if (br_perturb_on()) n = 1 + (int)br_perturb_draw(PT_THREADS, 0, 0, 8);
    g_threads = n < BR_MAX_THREADS ? n : BR_MAX_THREADS;
}

/* br_par's view of the machine: crowded or not, looked at again after
 * g_crowd_next; g_crowd_pin: BRAID_CROWDED (-1: measured). */
static _Atomic int64_t g_crowd_next;
static _Atomic int g_crowded;
static _Atomic int g_crowd_pin = -2;
static _Atomic int64_t g_par_teams, g_par_kept;

bool br_queue_crowded(int nt)
{
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return false;
    char line[256];
    long running = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "procs_running %ld", &running) == 1) break;
    fclose(f);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    return running > 0 && ncpu > 0 && running - 1 > ncpu - nt;
}

/* Runnable tasks of the whole machine (the 4th field of /proc/loadavg,
 * "running/total"); -1 when unknown. */
static long runnable_tasks(void)
{
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f) return -1;
    double l1, l5, l15;
    long run = -1, total;
    if (fscanf(f, "%lf %lf %lf %ld/%ld", &l1, &l5, &l15, &run, &total) != 5) run = -1;
    fclose(f);
    return run;
}

static bool machine_crowded(void)
{
    int pin = atomic_load_explicit(&g_crowd_pin, memory_order_relaxed);
    if (pin == -2) {
        const char *e = getenv("BRAID_CROWDED");
        pin = e && (*e == '0' || *e == '1') ? *e - '0' : -1;
        atomic_store_explicit(&g_crowd_pin, pin, memory_order_relaxed);
    }
    if (pin >= 0) return pin;
    int64_t now = br_now_ns();
    if (now >= atomic_load_explicit(&g_crowd_next, memory_order_relaxed)) {
        atomic_store_explicit(&g_crowd_next, now + 20000000, memory_order_relaxed);
        long run = runnable_tasks(), cpus = sysconf(_SC_NPROCESSORS_ONLN);
        /* braid's own runnable threads: its team and a BLAS team spinning
         * after a call, 2 per thread at most */
        atomic_store_explicit(&g_crowded, run > 0 && cpus > 0 && run > cpus + 2L * br_threads(),
                              memory_order_relaxed);
    }
    return atomic_load_explicit(&g_crowded, memory_order_relaxed);
}

bool br_par(double work)
{
    if (work < BR_PAR_MIN || br_threads() < 2) return false;
    if (work < BR_PAR_CROWDED_MIN && machine_crowded()) {
        atomic_fetch_add_explicit(&g_par_kept, 1, memory_order_relaxed);
        return false;
    }
    atomic_fetch_add_explicit(&g_par_teams, 1, memory_order_relaxed);
    return true;
}

void br_par_pin(int crowded)
{
    atomic_store_explicit(&g_crowd_pin, crowded < 0 ? -1 : crowded > 0, memory_order_relaxed);
    atomic_store_explicit(&g_crowd_next, 0, memory_order_relaxed);
}

void br_par_counts(int64_t *teams, int64_t *crowded)
{
    *teams = atomic_load_explicit(&g_par_teams, memory_order_relaxed);
    *crowded = atomic_load_explicit(&g_par_kept, memory_order_relaxed);
}

int64_t br_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

double br_mem_physical(void)
{
    static double budget; /* a constant of the machine, computed once */
    if (budget == 0) {
        long pages = sysconf(_SC_PHYS_PAGES), ps = sysconf(_SC_PAGE_SIZE);
        double b = pages > 0 && ps > 0 ? 0.7 * (double)pages * (double)ps : 1e10;
        /* BRAID_MEM_BUDGET (bytes) lowers it: fuzzers, small machines */
        const char *v = getenv("BRAID_MEM_BUDGET");
        double lim = v ? atof(v) : 0;
        budget = lim > 0 && lim < b ? lim : b;
    }
    return budget;
}

/* set once from the configuration before compiling; read by compile
 * threads afterwards */
static double g_budget;
static BrExecMode g_exec = BR_EXEC_HYBRID;

double br_mem_budget(void) { return g_budget > 0 ? g_budget : br_mem_physical(); }
void br_set_mem_budget(double bytes) { g_budget = bytes > 0 ? bytes : 0; }
static int64_t g_blocksize = 1000;
int64_t br_blocksize(void) { return g_blocksize; }
void br_set_blocksize(int64_t rows) { g_blocksize = rows > 0 ? rows : 1000; }
static bool g_dist;
bool br_dist_available(void) { return g_dist; }
void br_set_dist_available(bool on) { g_dist = on; }
BrExecMode br_exec_mode(void) { return g_exec; }
void br_set_exec_mode(BrExecMode m) { g_exec = m; }

bool br_grow(void **p, int *cap, int need, size_t elem)
{
    if (need < 0) return false;
    if (need <= *cap) return true;
    int nc = *cap > 0 ? *cap : 8;
    while (nc < need) {
        if (nc > INT_MAX / 2) { nc = need; break; }
        nc *= 2;
    }
    size_t bytes;
    if (!br_mul_ok((size_t)nc, elem, &bytes)) return false;
    void *q = realloc(*p, bytes ? bytes : 1);
    if (!q) return false;
    *p = q;
    *cap = nc;
    return true;
}

/* ---- the per-user cache folder ---- */

/* mkdir -p with mode 0700 for the directories it creates. */
static int mkdirs(const char *path)
{
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(tmp, 0700) && errno != EEXIST) return -1;
        *p = '/';
    }
    if (mkdir(tmp, 0700) && errno != EEXIST) return -1;
    return 0;
}

bool br_safe_folder(const struct stat *st)
{
    if (!S_ISDIR(st->st_mode) || (st->st_uid != 0 && st->st_uid != getuid())) return false;
    return !(st->st_mode & 022) || (st->st_mode & S_ISVTX);
}

/* A directory we own that nobody else can write, reached through folders
 * nobody else controls. The last component is checked with lstat and
 * opened with O_NOFOLLOW (a symbolic link planted at the cache path must
 * not make braid write into, chmod or clean up its target); the mode is
 * fixed through that descriptor. */
static bool private_dir(const char *path)
{
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", path);
    struct stat st;
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        bool ok = stat(tmp, &st) == 0 && br_safe_folder(&st);
        *p = '/';
        if (!ok) return false;
    }
    if (lstat(path, &st) || !S_ISDIR(st.st_mode) || st.st_uid != getuid()) return false;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat fs;
    bool ok = fstat(fd, &fs) == 0 && fs.st_dev == st.st_dev && fs.st_ino == st.st_ino && fs.st_uid == getuid() &&
              (!(fs.st_mode & 077) || fchmod(fd, 0700) == 0);
    close(fd);
    return ok;
}

bool br_cache_dir(const char *want, char *dir, size_t n)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    dir[0] = 0;
    if (want && want[0]) snprintf(dir, n, "%s", want);
    else if (xdg && xdg[0] == '/') snprintf(dir, n, "%s/braid", xdg);
    else if (home && home[0] == '/') snprintf(dir, n, "%s/.cache/braid", home);
    return dir[0] && mkdirs(dir) == 0 && private_dir(dir) && access(dir, W_OK) == 0;
}

/* ---------- cleanup on a fatal signal ---------- */

/* Slots read by br_sig_cleanup from a signal handler: a slot's state goes
 * 0 (free) -> 1 (being filled) -> 2 (valid) -> 0; the handler reads only
 * valid ones, with plain syscalls (async-signal-safe). Each table is a
 * list of chunks: the first static, the next ones allocated when every
 * slot before them is taken, linked by compare-and-swap and never freed,
 * so the handler walks whatever links it sees and neither table fills up
 * (compiles run max(2, threads) at once and as many again detached, up
 * to BR_MAX_THREADS, each with 3 paths and a process group; parallel
 * writes and publishes add theirs). A slot's number is its index over
 * the list, plus 1. */
#define SIG_CHUNK 128
#define SIG_PATH_MAX 1200
typedef struct SigGroups {
    _Atomic int g[SIG_CHUNK];                  /* 0: free, else a group id */
    void *_Atomic next;                        /* the next chunk (SigGroups) */
} SigGroups;
typedef struct SigPaths {
    _Atomic int state[SIG_CHUNK];              /* apart from the paths: a scan reads one page */
    bool dir[SIG_CHUNK];
    char path[SIG_CHUNK][SIG_PATH_MAX];
    void *_Atomic next;                        /* the next chunk (SigPaths) */
} SigPaths;
static SigGroups g_sig_group;
static SigPaths g_sig_path;

/* The chunk a table's link next points to, linking a fresh zeroed one
 * of sz bytes when there is none yet; NULL when out of memory. */
static void *sig_next(void *_Atomic *next, size_t sz)
{
    void *nx = atomic_load(next);
    if (nx) return nx;
    void *fresh = calloc(1, sz);
    if (!fresh) return NULL;
    if (atomic_compare_exchange_strong(next, &nx, fresh)) return fresh;
    free(fresh);   /* another thread linked one first: nx */
    return nx;
}

void br_sig_group_add(pid_t g)
{
    for (SigGroups *t = &g_sig_group; t && g > 0; t = sig_next(&t->next, sizeof *t))
        for (int i = 0; i < SIG_CHUNK; i++) {
            int z = 0;
            if (atomic_compare_exchange_strong(&t->g[i], &z, (int)g)) return;
        }
}

void br_sig_group_del(pid_t g)
{
    for (SigGroups *t = &g_sig_group; t && g > 0; t = atomic_load(&t->next))
        for (int i = 0; i < SIG_CHUNK; i++) {
            int v = (int)g;
            if (atomic_compare_exchange_strong(&t->g[i], &v, 0)) return;
        }
}

int br_sig_path_add(const char *path, bool dir)
{
    size_t n = strlen(path);
    if (n >= SIG_PATH_MAX) return 0;
    int base = 0;
    for (SigPaths *t = &g_sig_path; t; t = sig_next(&t->next, sizeof *t), base += SIG_CHUNK)
        for (int i = 0; i < SIG_CHUNK; i++) {
            int z = 0;
            if (!atomic_compare_exchange_strong(&t->state[i], &z, 1)) continue;
            memcpy(t->path[i], path, n + 1);
            t->dir[i] = dir;
            atomic_store(&t->state[i], 2);
            return base + i + 1;
        }
    return 0;
}

void br_sig_path_del(int slot)
{
    if (slot <= 0) return;
    SigPaths *t = &g_sig_path;
    for (int k = (slot - 1) / SIG_CHUNK; t && k > 0; k--) t = atomic_load(&t->next);
    if (t) atomic_store(&t->state[(slot - 1) % SIG_CHUNK], 0);
}

void br_sig_path_forget(const char *path)
{
    int base = 0;
    for (SigPaths *t = &g_sig_path; t; t = atomic_load(&t->next), base += SIG_CHUNK)
        for (int i = 0; i < SIG_CHUNK; i++)
            if (atomic_load(&t->state[i]) == 2 && !strcmp(t->path[i], path)) {
                br_sig_path_del(base + i + 1);
                return;
            }
}

/* Holds (br_sig_hold): the steps that make a registered path or group
 * exist (creating a temporary, spawning a compile) run as holds, so a
 * handler running in one thread never cleans up while another thread is
 * in such a step, which would then make its file after the cleanup (or
 * start a compile the handler does not know). g_sig_holds counts the
 * holds of all threads, tl_sig_holds this thread's (a handler that
 * interrupted its own thread's hold does not wait for it: initial-exec,
 * so reading it in a handler allocates nothing); g_sig_dying, set by the
 * cleanup, makes a new hold wait until the cleanup is over (the handler
 * exits, so it waits for good). */
static _Atomic int g_sig_holds, g_sig_dying;
static __thread int tl_sig_holds __attribute__((tls_model("initial-exec")));

static void sig_nap(long ns)
{
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
}

void br_sig_hold(void)
{
    for (;;) {
        atomic_fetch_add(&g_sig_holds, 1);
        tl_sig_holds++;
        if (!atomic_load(&g_sig_dying)) return;
        tl_sig_holds--;
        atomic_fetch_sub(&g_sig_holds, 1);
        while (atomic_load(&g_sig_dying)) sig_nap(1000000);
    }
}

void br_sig_release(void)
{
    tl_sig_holds--;
    atomic_fetch_sub(&g_sig_holds, 1);
}

/* Removes the files of folder path, then the folder (no allocation). */
static void sig_rmdir_flat(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        char buf[4096] __attribute__((aligned(8)));
        long n;
        while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
            for (long off = 0; off < n;) {
                struct { uint64_t ino; int64_t off; unsigned short len; unsigned char type; char name[]; } *d =
                    (void *)(buf + off);
                if (strcmp(d->name, ".") && strcmp(d->name, "..")) unlinkat(fd, d->name, 0);
                off += d->len;
            }
        close(fd);
    }
    rmdir(path);
}

void br_sig_cleanup(void)
{
    /* no hold starts from here on; the ones under way end (holds are
     * single system calls or a spawn: bounded, at most a second) */
    atomic_store(&g_sig_dying, 1);
    for (int i = 0; i < 1000 && atomic_load(&g_sig_holds) > tl_sig_holds; i++) sig_nap(1000000);
    for (SigGroups *t = &g_sig_group; t; t = atomic_load(&t->next))
        for (int i = 0; i < SIG_CHUNK; i++) {
            int g = atomic_load(&t->g[i]);
            if (g > 0) kill(-g, SIGKILL);
        }
    /* A process killed in the middle of a system call finishes it
     * before it dies: a compile opening its output as the signal came
     * made the file after the removal below (test_jitdetach's term
     * publish saw the prelude's tmp.*.gch left, about once in 800 runs
     * on 2 loaded cores). So the removal waits (a second at most) until
     * each group's leader, braid's child, has ended (waitid WNOWAIT:
     * not reaped, another thread's wait is unchanged), and a moment for
     * the rest of its group (its compiler under the watchdog) */
    bool any = false;
    int waited = 0;
    for (SigGroups *t = &g_sig_group; t; t = atomic_load(&t->next))
        for (int i = 0; i < SIG_CHUNK; i++) {
            int g = atomic_load(&t->g[i]);
            if (g <= 0) continue;
            any = true;
            for (;;) {
                siginfo_t si;
                si.si_pid = 0;
                long r = syscall(SYS_waitid, P_PID, (id_t)g, &si, WEXITED | WNOWAIT | WNOHANG, NULL);
                if (r != 0 || si.si_pid == g || waited >= 1000) break;
                sig_nap(1000000);
                waited++;
            }
        }
    if (any) sig_nap(5000000);
    for (SigPaths *t = &g_sig_path; t; t = atomic_load(&t->next))
        for (int i = 0; i < SIG_CHUNK; i++) {
            if (atomic_load(&t->state[i]) != 2) continue;
            if (t->dir[i]) sig_rmdir_flat(t->path[i]);
            else if (unlink(t->path[i]) != 0 && errno == EISDIR) sig_rmdir_flat(t->path[i]);
        }
    atomic_store(&g_sig_dying, 0);   /* a host that goes on (base.h) */
}
