/* test_mb.c: matrix block construction, conversion and format choice. */
#include "t.h"
#include "kernels/mm.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static MB *rnd(int64_t r, int64_t c, double sp, unsigned seed)
{
    BrErr e = {0};
    MB *m = mb_dense(r, c, &e);
    srand(seed);
    for (int64_t i = 0; i < r * c; i++)
        if ((double)rand() / RAND_MAX < sp) m->d[i] = (double)(rand() % 100) - 50.5;
    mb_recount_nnz(m);
    return m;
}

/* An all-zero column vector is dense: as CSR its row pointers take as
 * many bytes as the dense array, came from fresh calloc'd pages each time
 * (first-touch zeroing) and every fused operator reading it made a dense
 * copy. mb_empty, mb_fill(0), mb_examine and an empty product give the
 * dense form, whose block comes from the bound pool: a freed one is
 * reused (counted) and handed out zeroed. Wider empty matrices stay
 * sparse. */
static void test_empty_vector(void)
{
    BrErr e = {0};
    BrPool *p = br_pool_new((size_t)64 << 20);
    BrPool *prev = br_pool_bind(p);
    BrPoolStats st;
    const int64_t n = 100000;
    MB *z = mb_empty(n, 1, &e);
    T_CHECK(z && !z->sparse && z->nnz == 0 && mb_valid(z, true), "empty column vector dense");
    double *old = z && !z->sparse ? z->d : NULL;
    for (int64_t i = 0; old && i < n; i++) old[i] = 3.0;   /* dirty the block */
    mb_release(z);
    MB *f = mb_fill(n, 1, 0.0, &e);
    br_pool_stats(p, &st);
    int bad = 0;
    for (int64_t i = 0; f && !f->sparse && i < n; i++) bad += f->d[i] != 0;
    T_CHECK(f && !f->sparse && old && f->d == old && st.hits == 1, "matrix(0) column reuses the freed block (hits %lld)",
            (long long)st.hits);
    T_CHECK(bad == 0, "the reused block is zero (%d non-zeros)", bad);
    mb_release(f);
    /* mb_examine keeps an empty dense column dense, makes a wider one sparse */
    MB *c = mb_dense(n, 1, &e), *w = mb_dense(n, 4, &e);
    T_CHECK(mb_examine(c, &e) == 0 && !c->sparse, "examine: empty column stays dense");
    T_CHECK(mb_examine(w, &e) == 0 && w->sparse && mb_bytes(w) < (size_t)n * 4 * 8 / 3, "examine: empty n x 4 sparse");
    mb_release(c);
    mb_release(w);
    MB *zw = mb_empty(1000, 1000, &e), *zr = mb_empty(1, n, &e);
    T_CHECK(zw && zw->sparse && zr && zr->sparse, "wide and row-vector empties stay sparse");
    mb_release(zw);
    mb_release(zr);
    /* X %*% 0: the empty product's result, dense and zero */
    MB *X = rnd(n, 3, 1.0, 11), *b = mb_dense(3, 1, &e);
    MB *y = k_matmul(X, b, &e);
    bad = 0;
    for (int64_t i = 0; y && !y->sparse && i < n; i++) bad += y->d[i] != 0;
    T_CHECK(y && !y->sparse && y->rows == n && y->nnz == 0 && bad == 0, "X %%*%% 0 is a dense zero column");
    mb_release(y);
    mb_release(b);
    mb_release(X);
    br_pool_bind(prev);
    br_pool_free(p);
}

/* Buffer pools (base.h, docs/DESIGN.md "Buffer pools"): reuse within a
 * size class, zeroed blocks handed out zeroed, the byte cap, the classes
 * used longest ago given back first, unbound threads untouched, and
 * workers sharing one pool. */
static void test_pool(void)
{
    BrErr e = {0};
    BrPool *p = br_pool_new((size_t)8 << 20);
    BrPoolStats st;
    T_CHECK(p && br_pool_current() == NULL, "pool made, none bound");
    /* unbound: a large block is neither taken from nor kept by a pool */
    MB *a = mb_dense_uninit(80000, 1, &e);
    mb_release(a);
    br_pool_stats(p, &st);
    T_CHECK(st.hits + st.misses + st.kept == 0 && st.bytes == 0, "unbound thread: pool untouched");
    T_CHECK(br_pool_bind(p) == NULL && br_pool_current() == p, "bound");
    /* a freed 640 KB vector serves the next request of its class, zeroed
     * where zeros are asked for */
    a = mb_dense_uninit(80000, 1, &e);
    for (int64_t i = 0; i < 80000; i++) a->d[i] = 7.0 + (double)i;
    double *old = a->d;
    mb_release(a);
    br_pool_stats(p, &st);
    T_CHECK(st.kept == 1 && st.bytes >= 80000 * 8 && st.bytes <= 80000 * 8 * 5 / 4 + 128, "freed block kept (%zu B)",
            st.bytes);
    MB *z = mb_dense(81000, 1, &e);   /* same class: 648000 B */
    int bad = 0;
    for (int64_t i = 0; i < 81000; i++) bad += z->d[i] != 0;
    br_pool_stats(p, &st);
    T_CHECK(z->d == old && st.hits == 1 && st.bytes == 0, "same class reused (hits %lld)", (long long)st.hits);
    T_CHECK(bad == 0, "a reused block handed out as zeroed is zero (%d non-zeros)", bad);
    for (int64_t i = 0; i < 81000; i++) z->d[i] = -1;
    mb_release(z);
    MB *f = mb_fill(80000, 1, 0.5, &e);   /* every cell written */
    bad = 0;
    for (int64_t i = 0; i < 80000; i++) bad += f->d[i] != 0.5;
    T_CHECK(f->d == old && bad == 0, "reused for a fill, every cell the fill's (%d)", bad);
    MB *big = mb_dense(100000, 1, &e);   /* 800000 B: the next class */
    br_pool_stats(p, &st);
    T_CHECK(big->d != old && st.misses >= 1, "another class not served from this one");
    mb_release(f);
    mb_release(big);
    /* the cap: 8 MB; blocks above half of it are never kept, and the
     * bytes kept never pass it */
    MB *huge = mb_dense_uninit(600000, 1, &e);   /* 4.8 MB */
    br_pool_stats(p, &st);
    int64_t kept0 = st.kept;
    mb_release(huge);
    br_pool_stats(p, &st);
    T_CHECK(st.kept == kept0 && st.bytes <= st.cap, "a block above half the cap is freed, not kept");
    MB *blk[24];
    for (int k = 0; k < 24; k++) blk[k] = mb_dense_uninit(20000 + 9000 * k, 1, &e);   /* 160 KB .. 1.8 MB */
    for (int k = 0; k < 24; k++) {
        mb_release(blk[k]);
        br_pool_stats(p, &st);
        T_CHECK(st.bytes <= st.cap && st.peak <= st.cap, "cap holds after free %d (%zu of %zu)", k, st.bytes, st.cap);
    }
    T_CHECK(st.dropped > 0 && st.bytes > st.cap / 2, "over the cap, older classes dropped (%lld), pool still full",
            (long long)st.dropped);
    /* the class used last survives: the last block freed is served again */
    double *last = NULL;
    MB *l = mb_dense_uninit(20000 + 9000 * 23, 1, &e);
    last = l->d;
    mb_release(l);
    l = mb_dense_uninit(20000 + 9000 * 23, 1, &e);
    T_CHECK(l->d == last, "the last class kept");
    mb_release(l);
    /* workers sharing one pool (parfor): each fills its blocks, checks
     * them and frees them; no block is handed to two at once */
    int wbad = 0;
#pragma omp parallel num_threads(4) reduction(+ : wbad)
    {
        BrPool *prev = br_pool_bind(p);
        int id = 0;
#ifdef _OPENMP
        id = omp_get_thread_num();
#endif
        for (int r = 0; r < 40; r++) {
            BrErr we = {0};
            MB *m = mb_dense_uninit(30000 + 10000 * (r % 4), 1, &we);
            if (!m) { wbad++; continue; }
            for (int64_t i = 0; i < m->rows; i++) m->d[i] = id * 1000 + r;
            for (int64_t i = 0; i < m->rows; i++) wbad += m->d[i] != id * 1000 + r;
            mb_release(m);
        }
        br_pool_bind(prev);
    }
    br_pool_stats(p, &st);
    T_CHECK(wbad == 0 && st.bytes <= st.cap, "workers: no block shared (%d)", wbad);
    T_CHECK(br_pool_bind(NULL) == p, "unbound");
    br_pool_free(p);
    /* a block from a pool freed after its pool: a plain free */
    p = br_pool_new((size_t)8 << 20);
    br_pool_bind(p);
    a = mb_dense_uninit(80000, 1, &e);
    br_pool_bind(NULL);
    br_pool_free(p);
    mb_release(a);
    /* the default cap: BRAID_POOL_MB, 0 turns pooling off */
    setenv("BRAID_POOL_MB", "0", 1);
    T_CHECK(br_pool_default_cap() == 0, "BRAID_POOL_MB=0");
    setenv("BRAID_POOL_MB", "3", 1);
    T_CHECK(br_pool_default_cap() == (size_t)3 << 20, "BRAID_POOL_MB=3");
    unsetenv("BRAID_POOL_MB");
    T_CHECK(br_pool_default_cap() == BR_POOL_CAP, "default cap");
}

/* The process's reserve (base.h): a pool's blocks outlive its end there
 * and serve the next pool's misses; an unbound thread's frees go there
 * and its allocations take from there; BRAID_RESERVE_MB sets the cap.
 * Fails with BRAID_RESERVE_MB=0 (no reserve: every check below). */
static void test_reserve(void)
{
    BrErr e = {0};
    BrPoolStats r0, r1, st;
    T_CHECK(br_reserve_stats(&r0) && r0.cap == br_reserve_default_cap() && r0.cap > 0, "the reserve exists (cap %zu)",
            r0.cap);
    /* a context's pool ends: its kept block moves to the reserve */
    BrPool *p = br_pool_new((size_t)8 << 20);
    BrPool *prev = br_pool_bind(p);
    MB *a = mb_dense_uninit(90000, 1, &e);   /* 720 KB */
    for (int64_t i = 0; i < 90000; i++) a->d[i] = 3.0 + (double)i;
    double *old = a->d;
    mb_release(a);
    br_pool_bind(prev);
    br_pool_free(p);
    br_reserve_stats(&r1);
    T_CHECK(r1.kept == r0.kept + 1 && r1.bytes >= r0.bytes + 90000 * 8, "a freed pool's block kept by the reserve "
            "(kept %lld, %zu B)", (long long)(r1.kept - r0.kept), r1.bytes - r0.bytes);
    /* the next context's pool misses; the reserve serves it, zeroed
     * where zeros are asked for */
    p = br_pool_new((size_t)8 << 20);
    prev = br_pool_bind(p);
    MB *z = mb_dense(89000, 1, &e);   /* the same class */
    int bad = 0;
    for (int64_t i = 0; z && i < 89000; i++) bad += z->d[i] != 0;
    br_pool_stats(p, &st);
    br_reserve_stats(&r0);
    T_CHECK(z && z->d == old && st.misses == 1 && st.hits == 0 && r0.hits == r1.hits + 1,
            "a new pool's miss served by the reserve (pool misses %lld, reserve hits %lld)", (long long)st.misses,
            (long long)(r0.hits - r1.hits));
    T_CHECK(bad == 0, "a reserve block handed out as zeroed is zero (%d non-zeros)", bad);
    mb_release(z);   /* kept by the bound pool, not the reserve */
    br_reserve_stats(&r1);
    br_pool_stats(p, &st);
    T_CHECK(r1.kept == r0.kept && st.kept == 1, "a bound thread frees into its pool");
    br_pool_bind(prev);
    br_pool_free(p);
    /* an unbound thread: frees into the reserve, takes from it */
    MB *u = mb_dense_uninit(150000, 1, &e);   /* 1.2 MB */
    double *uold = u->d;
    br_reserve_stats(&r0);
    mb_release(u);
    br_reserve_stats(&r1);
    T_CHECK(r1.kept == r0.kept + 1, "an unbound free kept by the reserve");
    MB *f = mb_fill(150000, 1, 0.25, &e);
    bad = 0;
    for (int64_t i = 0; f && i < 150000; i++) bad += f->d[i] != 0.25;
    br_reserve_stats(&r0);
    T_CHECK(f && f->d == uold && r0.hits == r1.hits + 1 && bad == 0, "an unbound allocation served by the reserve");
    mb_release(f);
    /* bounded: a block above half the cap is freed, and the bytes kept
     * never pass the cap */
    br_reserve_stats(&r0);
    T_CHECK(r0.bytes <= r0.cap && r0.peak <= r0.cap, "the reserve within its cap (%zu of %zu)", r0.bytes, r0.cap);
    /* the cap: BRAID_RESERVE_MB (read at the first use), 0: none */
    setenv("BRAID_RESERVE_MB", "0", 1);
    T_CHECK(br_reserve_default_cap() == 0, "BRAID_RESERVE_MB=0");
    setenv("BRAID_RESERVE_MB", "5", 1);
    T_CHECK(br_reserve_default_cap() == (size_t)5 << 20, "BRAID_RESERVE_MB=5");
    unsetenv("BRAID_RESERVE_MB");
    size_t m16 = (size_t)sysconf(_SC_PHYS_PAGES) * (size_t)sysconf(_SC_PAGE_SIZE) / 16,
           want = m16 < BR_RESERVE_MIN ? BR_RESERVE_MIN : m16 < BR_RESERVE_CAP ? m16 : BR_RESERVE_CAP;
    T_CHECK(br_reserve_default_cap() == want, "default reserve cap %zu (a sixteenth of the memory within [%zu, %zu]: "
            "%zu)", br_reserve_default_cap(), BR_RESERVE_MIN, BR_RESERVE_CAP, want);
}

/* br_calloc_aligned's large blocks (base.c): a freshly mapped one is
 * handed out without clearing (zero pages) and a kept one of the same
 * class is cleared by a team; both read as zeros, also after the block
 * held other values, at sizes around the team's 2 MB chunks. Fails if
 * the fresh path skipped clearing a reused block (the reserve's). */
static void test_calloc_large(void)
{
    size_t sizes[] = {((size_t)1 << 20) - 64, ((size_t)3 << 19) + 8, ((size_t)4 << 20) - 64, (size_t)5 << 20,
                      ((size_t)6 << 20) + 8, (size_t)9 << 20};
    for (int t = 1; t <= 2; t++) {
        br_set_threads(t);
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
            size_t n = sizes[k];
            for (int round = 0; round < 3; round++) {
                double *d = br_calloc_aligned(n);
                size_t bad = 0;
                for (size_t i = 0; d && i < n / 8; i++) bad += d[i] != 0;
                T_CHECK(d && bad == 0, "calloc of %zu bytes, %d threads, round %d: zeros (%zu non-zeros)", n, t, round,
                        bad);
                if (!d) continue;
                for (size_t i = 0; i < n / 8; i++) d[i] = 1.5 + (double)i;   /* dirty it for the next round */
                br_free_aligned(d);
            }
        }
    }
    br_set_threads(0);
}

#if !defined(__SANITIZE_ADDRESS__)
/* (under AddressSanitizer large blocks are malloc'd: no huge-page check) */

/* A counter of /proc/vmstat (-1: none). */
static long vmstat(const char *name)
{
    FILE *f = fopen("/proc/vmstat", "r");
    char key[128];
    long v, r = -1;
    while (f && fscanf(f, "%127s %ld", key, &v) == 2)
        if (!strcmp(key, name)) r = v;
    if (f) fclose(f);
    return r;
}

/* A fresh block of 1 MB or more is advised for huge pages before its
 * first byte is touched (a 4 KB fault first would keep its first 2 MB
 * on 4 KB pages for good; base.c alloc_block, docs/perf.md "Fresh
 * memory"): its first write faults in a 2 MB page, unless the kernel
 * has transparent huge pages off or no huge page to give (its fallback
 * counter says so). */
static void test_huge_advice(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char mode[128] = "";
    if (f) {
        if (!fgets(mode, sizeof mode, f)) mode[0] = 0;
        fclose(f);
    }
    if (!mode[0] || strstr(mode, "[never]")) return;
    /* sizes of classes nothing else here allocates: fresh blocks */
    size_t sizes[] = {((size_t)11 << 18) + 100, ((size_t)13 << 18) + 100, ((size_t)23 << 18) + 100};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        long fb0 = vmstat("thp_fault_fallback") + vmstat("thp_fault_fallback_charge");
        double *d = br_alloc_aligned(sizes[k]);
        T_CHECK(d != NULL, "block of %zu bytes", sizes[k]);
        if (!d) continue;
        d[0] = 1;
        long huge = -1;
        bool advised = false;
        bool found = t_smaps_of(d, &huge, &advised);
        long fb1 = vmstat("thp_fault_fallback") + vmstat("thp_fault_fallback_charge");
        if (!found) {   /* no /proc/self/smaps to read */
            br_free_aligned(d);
            continue;
        }
        T_CHECK(advised, "block of %zu bytes: its mapping advised for huge pages", sizes[k]);
        T_CHECK(huge >= 2048 || fb1 > fb0,
                "block of %zu bytes: its first write faulted in a huge page (%ld kB huge, fallbacks %ld -> %ld)",
                sizes[k], huge, fb0, fb1);
        br_free_aligned(d);
    }
}

/* A pool's miss of 16 MB or more is served from the pages of blocks it
 * keeps in other size classes (base.c pool_gather: moved, not copied,
 * no fresh page): two kept blocks make a larger one, a kept larger block
 * gives a smaller one and its rest stays kept. Fails if such a miss
 * mapped fresh pages, handed out a block sharing pages with one still
 * kept, lost the rest, or returned a calloc'd block that is not zero. */
static void test_pool_gather(void)
{
    BrErr e = {0};
    BrPool *p = br_pool_new((size_t)64 << 20);
    BrPool *prev = br_pool_bind(p);
    BrPoolStats st;
    int64_t fb0, fby0, gb0, gby0, fb1, fby1, gb1, gby1;
    /* two 10 MB vectors, freed: kept in their class */
    MB *a = mb_dense_uninit(1300000, 1, &e), *b = mb_dense_uninit(1300000, 1, &e);
    T_CHECK(a && b, "two 10 MB blocks");
    if (!a || !b) return;
    for (int64_t i = 0; i < 1300000; i++) a->d[i] = b->d[i] = 2.0;
    mb_release(a);
    mb_release(b);
    br_pool_stats(p, &st);
    size_t kept = st.bytes;
    /* a 20 MB block (another class): made of their pages */
    br_fresh_counts(&fb0, &fby0);
    br_gathered_counts(&gb0, &gby0);
    MB *c = mb_dense(2600000, 1, &e);
    br_fresh_counts(&fb1, &fby1);
    br_gathered_counts(&gb1, &gby1);
    br_pool_stats(p, &st);
    T_CHECK(c && fb1 == fb0 && gb1 == gb0 + 1 && st.gathered == 1 && st.bytes == 0,
            "a 20 MB miss gathered from two kept 10 MB blocks (fresh %lld, gathered %lld, kept %zu of %zu B)",
            (long long)(fb1 - fb0), (long long)(gb1 - gb0), st.bytes, kept);
    int bad = 0;
    for (int64_t i = 0; c && i < 2600000; i++) bad += c->d[i] != 0;
    T_CHECK(bad == 0, "the gathered block handed out as zeroed is zero (%d non-zeros)", bad);
    for (int64_t i = 0; c && i < 2600000; i++) c->d[i] = (double)i;
    bad = 0;
    for (int64_t i = 0; c && i < 2600000; i++) bad += c->d[i] != (double)i;
    T_CHECK(bad == 0, "every cell of the gathered block holds its own value");
    long huge = -1;
    bool advised = false;
    if (c && t_smaps_of(c->d, &huge, &advised)) T_CHECK(advised, "the gathered block still advised for huge pages");
    mb_release(c);
    /* the kept 20 MB block serves a 16 MB miss; its rest (4 MB) stays
     * kept */
    br_pool_stats(p, &st);
    kept = st.bytes;
    MB *d = mb_dense_uninit(2097144, 1, &e);   /* the 16 MB class */
    br_gathered_counts(&gb0, &gby0);
    br_pool_stats(p, &st);
    T_CHECK(d && gb0 == gb1 + 1 && st.bytes > 0 && st.bytes < kept,
            "a 16 MB miss gathered from the kept 20 MB block, the rest kept (%zu of %zu B)", st.bytes, kept);
    for (int64_t i = 0; d && i < 2097144; i++) d->d[i] = -1.0 - (double)i;
    /* the rest is a block of its own: a request of its class takes it
     * whole, and writing it leaves d as it was */
    size_t rest = st.bytes;
    MB *r = mb_dense_uninit((int64_t)(rest - 64) / 8, 1, &e);
    br_pool_stats(p, &st);
    br_fresh_counts(&fb1, &fby1);
    T_CHECK(r && st.bytes == 0 && fb1 == fb0, "the rest (%zu B) served as a block of its class", rest);
    for (int64_t i = 0; r && i < r->rows; i++) r->d[i] = 5.0;
    bad = 0;
    for (int64_t i = 0; d && i < 2097144; i++) bad += d->d[i] != -1.0 - (double)i;
    T_CHECK(bad == 0, "the rest shares no page with the block cut from it (%d cells changed)", bad);
    mb_release(d);
    mb_release(r);
    /* too little kept (20 MB): a fresh block, the kept ones untouched */
    br_pool_stats(p, &st);
    kept = st.bytes;
    BrPoolStats rs0, rs1;
    br_reserve_stats(&rs0);
    MB *big = mb_dense_uninit(3000000, 1, &e);   /* 24 MB */
    br_pool_stats(p, &st);
    br_reserve_stats(&rs1);
    br_fresh_counts(&fb0, &fby0);
    T_CHECK(big && st.bytes == kept && st.gathered == 2 && fb0 + rs1.gathered == fb1 + rs0.gathered + 1,
            "a miss larger than all kept: fresh (or the reserve's), the pool kept (%zu B)", st.bytes);
    mb_release(big);
    br_pool_bind(prev);
    br_pool_free(p);
}
#else
static void test_huge_advice(void) {}
static void test_pool_gather(void) {}
#endif

int main(void)
{
    BrErr e = {0};
    int64_t shapes[][2] = {{0, 5}, {5, 0}, {1, 1}, {7, 1}, {1, 9}, {50, 3}, {3, 70}};
    double sps[] = {0, 0.001, 0.1, 1};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (size_t k = 0; k < 4; k++) {
            MB *d = rnd(shapes[s][0], shapes[s][1], sps[k], (unsigned)(s * 7 + k));
            MB *sp = mb_to_sparse(d, &e);
            T_CHECK(sp && sp->sparse && sp->nnz == d->nnz, "to_sparse nnz");
            MB *back = mb_to_dense(sp, &e);
            T_MB_EQ(back, d, 0, "round trip %zu %zu", s, k);
            MB *c = mb_copy(sp, &e);
            T_CHECK(mb_examine(c, &e) == 0, "examine");
            /* empty: sparse where its row pointers are smaller than the cells */
            T_CHECK(c->sparse == (mb_should_be_sparse(c->rows, c->cols, c->nnz) ||
                                  (c->nnz == 0 && c->rows * c->cols > 0 && c->rows + 1 < c->rows * c->cols)),
                    "format rule");
            T_MB_EQ(c, d, 0, "examine keeps values");
            mb_release(d); mb_release(sp); mb_release(back); mb_release(c);
        }
    /* appendable sparse build */
    MB *b = mb_sp_new(4, 4, 0, &e);
    T_CHECK(mb_sp_append(b, 0, 1, 2.0, &e) == 0, "append");
    T_CHECK(mb_sp_append(b, 2, 0, 3.0, &e) == 0, "append");
    T_CHECK(mb_sp_append(b, 2, 3, 0.0, &e) == 0, "append zero dropped");
    T_CHECK(mb_sp_append(b, 3, 3, 4.0, &e) == 0, "append");
    T_CHECK(mb_sp_append(b, 1, 0, 4.0, &e) != 0, "out of order rejected");
    mb_sp_finish(b);
    T_CHECK(b->nnz == 3 && mb_get(b, 2, 0) == 3.0 && mb_get(b, 1, 1) == 0 &&
            b->rp[4] == 3 && b->rp[1] == 1 && b->rp[2] == 1, "built CSR");
    mb_release(b);
    MB *z = mb_empty(1000, 1000, &e);
    T_CHECK(z && z->sparse && mb_bytes(z) < 20000, "empty is cheap");
    mb_release(z);
    test_pool();
    test_reserve();
    test_calloc_large();
    test_huge_advice();
    test_pool_gather();
    test_empty_vector();
    return t_done("test_mb");
}
