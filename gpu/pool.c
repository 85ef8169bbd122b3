/* pool.c: the device buffer pool. An entry is the device copy of a host
 * block; it holds a reference to the block, so the block's address cannot
 * be reused by another block while the entry lives (the key stays valid)
 * and the block is never updated in place meanwhile (a block with more
 * than one reference is immutable: mb.h). Inputs are uploaded on first
 * use (lazy); results are registered with their host block and stay for
 * the next operator, device-only (mb.h: no host copy until the host
 * reads the block, which lands it here). The pool keeps its bytes under
 * the budget by evicting the least recently used unpinned entries:
 * eviction lands a device-only block that someone still holds, then
 * frees the device buffers and drops the reference. Entries whose block only the pool still holds are dead and
 * freed at the next operator (gpu_pool_trim). */
#include <stdlib.h>
#include <string.h>

#include "gpu_int.h"
#include "../base/vec.h"

typedef struct Entry {
    MB *m;
    GpuBuf b;
    double bytes;
    uint64_t tick;
    bool pinned;
    bool transient;   /* a caller's borrowed memory (MB_EXT_*): it may
                         change between runs, so never kept past one op */
} Entry;

static Entry *ents;
static int nents, cents;
static double used;
static uint64_t clock_tick;

/* The allocator's cache: read-write buffers released by their last
 * holder are kept, and gpu_alloc hands one out again for a request it
 * holds with at most a quarter to spare, instead of a new
 * clCreateBuffer and a clReleaseMemObject per result. Both cost far more than a launch:
 * bench/clprobe measures them (on PoCL 37-450 us for 8 KB-32 MiB
 * against 1.5-7 us a launch with a reused buffer). The cached bytes
 * count against the pool's budget, and are freed first (oldest first)
 * when room is needed or an allocation fails. At most CACHE_MAX
 * buffers; BRAID_GPU_BUFCACHE=0 turns the cache off (comparisons).
 * Every buffer the backend frees (gpu_free) is one of gpu_alloc's
 * (read-write, no host pointer), so any cached one serves any request.
 * A buffer is cached when its last holder frees it: a buffer held twice (a CSR result shares its input's row pointers and
 * columns) is retained by gpu_share, which counts the extra holders,
 * and each gpu_free but the last only drops a reference. (The
 * driver's reference count cannot tell: PoCL holds one for a kernel's
 * last arguments.) The queue is in order, so a kernel still running on
 * a cached buffer is done before the next user's. */
#define CACHE_MAX 64
typedef struct Cached { cl_mem m; size_t bytes; uint64_t tick; } Cached;
static Cached cache[CACHE_MAX];
static int ncache;
static double cached;
static int cache_on = -1;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
/* buffers with holders beyond the first (gpu_share), and how many */
typedef struct Shared { cl_mem m; int extra; } Shared;
static Shared *shared;
static int nshared, cshared;

static bool cache_enabled(void)
{
    if (cache_on < 0) {
        const char *v = getenv("BRAID_GPU_BUFCACHE");
        cache_on = !(v && !strcmp(v, "0"));
    }
    return cache_on;
}

/* Takes entry v out of the cache (NULL: v < 0); under cache_lock. */
static cl_mem cache_remove(int v)
{
    if (v < 0) return NULL;
    cl_mem m = cache[v].m;
    cached -= (double)cache[v].bytes;
    cache[v] = cache[--ncache];
    return m;
}

/* Takes the oldest cached buffer out of the cache (NULL: none); under
 * cache_lock. */
static cl_mem pop_oldest(void)
{
    int v = -1;
    for (int i = 0; i < ncache; i++) if (v < 0 || cache[i].tick < cache[v].tick) v = i;
    return cache_remove(v);
}

/* Frees the oldest cached buffer; false when none is cached. */
static bool cache_drop_oldest(void)
{
    pthread_mutex_lock(&cache_lock);
    cl_mem m = pop_oldest();
    pthread_mutex_unlock(&cache_lock);
    if (m) clReleaseMemObject(m);
    return m != NULL;
}

/* A cached buffer of bytes to bytes * 5/4 (the smallest), or NULL. */
static cl_mem cache_take(size_t bytes)
{
    if (!cache_enabled()) return NULL;
    pthread_mutex_lock(&cache_lock);
    int v = -1;
    for (int i = 0; i < ncache; i++)
        if (cache[i].bytes >= bytes && cache[i].bytes - bytes <= bytes / 4 && (v < 0 || cache[i].bytes < cache[v].bytes))
            v = i;
    cl_mem m = cache_remove(v);
    pthread_mutex_unlock(&cache_lock);
    return m;
}

bool gpu_share(cl_mem m)
{
    pthread_mutex_lock(&cache_lock);
    int i = 0;
    while (i < nshared && shared[i].m != m) i++;
    bool ok = i < nshared || br_grow((void **)&shared, &cshared, nshared + 1, sizeof *shared);
    if (ok && i == nshared) shared[nshared++] = (Shared){m, 0};
    if (ok) shared[i].extra++;
    pthread_mutex_unlock(&cache_lock);
    if (ok) clRetainMemObject(m);
    return ok;
}

void gpu_free(cl_mem m)
{
    if (!m) return;
    pthread_mutex_lock(&cache_lock);
    bool other = false;   /* another holder keeps it */
    for (int i = 0; i < nshared && !other; i++)
        if (shared[i].m == m) {
            other = true;
            if (--shared[i].extra == 0) shared[i] = shared[--nshared];
        }
    pthread_mutex_unlock(&cache_lock);
    size_t bytes = 0;
    if (other || !cache_enabled() || clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof bytes, &bytes, NULL) != CL_SUCCESS ||
        (double)bytes > gpu_ctx.budget / 4) {
        clReleaseMemObject(m);
        return;
    }
    static uint64_t tick;
    pthread_mutex_lock(&cache_lock);
    cl_mem old = ncache == CACHE_MAX ? pop_oldest() : NULL;   /* full: the oldest makes room */
    cache[ncache++] = (Cached){m, bytes, ++tick};
    cached += (double)bytes;
    pthread_mutex_unlock(&cache_lock);
    if (old) clReleaseMemObject(old);
}

void gpu_cache_clear(void)
{
    while (cache_drop_oldest()) {}
}

void gpubuf_release(GpuBuf *b)
{
    gpu_free(b->d);
    gpu_free(b->rp);
    gpu_free(b->ci);
    gpu_free(b->v);
    memset(b, 0, sizeof *b);
}

static int read_buf(cl_mem d, void *host, size_t bytes, BrErr *e)
{
    if (bytes == 0) return 0;
    cl_int rc = clEnqueueReadBuffer(gpu_ctx.q, d, CL_TRUE, 0, bytes, host, 0, NULL, NULL);
    if (rc != CL_SUCCESS) return gpu_clerr(e, rc, "clEnqueueReadBuffer");
    gpu_st.d2h_bytes += (int64_t)bytes;
    return 0;
}

/* A CSR device copy as a host block: its row pointers, columns and
 * values read back, the explicit zeros dropped (a device result has its
 * input's structure). */
static MB *land_csr(const MB *m, const GpuBuf *b, BrErr *e)
{
    MB *t = mb_sp_alloc(m->rows, m->cols, b->nnz, e);
    int64_t *rp = t ? malloc((size_t)(m->rows + 1) * sizeof *rp) : NULL;
    if (t && !rp) br_err(e, BR_ENOMEM, "out of memory");
    if (!rp || read_buf(b->rp, rp, (size_t)(m->rows + 1) * sizeof *rp, e) ||
        read_buf(b->ci, t->ci, (size_t)b->nnz * sizeof(int32_t), e) ||
        read_buf(b->v, t->v, (size_t)b->nnz * sizeof(double), e)) {
        free(rp);
        mb_release(t);
        return NULL;
    }
    int64_t k = 0;
    t->rp[0] = 0;
    for (int64_t i = 0; i < m->rows; i++) {
        for (int64_t p = rp[i]; p < rp[i + 1]; p++)
            if (t->v[p] != 0) t->ci[k] = t->ci[p], t->v[k++] = t->v[p];
        t->rp[i + 1] = k;
    }
    free(rp);
    mb_sp_done(t, k);
    return t;
}

/* Copies a device-only block's cells to the host: exact nnz and the
 * format rule on a new block, whose arrays then become the block's. The
 * device copy stays (a CSR one with its explicit zeros: the ops use the
 * copy's own entry count). Under gpu_lock. */
static int land(const Entry *en, BrErr *e)
{
    MB *m = en->m, *t;
    if (!m->dev) return 0;
    if (en->b.sparse) {
        if (!(t = land_csr(m, &en->b, e))) return -1;
    } else {
        if (!en->b.d) return br_err(e, BR_EFAIL, "GPU: a device-only block without a copy");
        if (!(t = mb_dense_uninit(m->rows, m->cols, e))) return -1;
        if (read_buf(en->b.d, t->d, (size_t)(m->rows * m->cols) * sizeof(double), e)) { mb_release(t); return -1; }
        mb_recount_nnz(t);
    }
    gpu_st.landed++;
    if (mb_examine(t, e)) { mb_release(t); return -1; }
    mb_dev_fill(m, t);
    return 0;
}

/* mb_dev_land's hook (mb_host) */
static int land_hook(MB *m, BrErr *e)
{
    pthread_mutex_lock(&gpu_lock);
    int rc = 0;
    if (m->dev) {
        int i = -1;
        for (int k = 0; k < nents && i < 0; k++) if (ents[k].m == m) i = k;
        rc = i < 0 ? br_err(e, BR_EFAIL, "GPU: a device-only block is not in the pool") : land(&ents[i], e);
    }
    pthread_mutex_unlock(&gpu_lock);
    return rc;
}

void gpu_pool_hook(void) { mb_dev_land = land_hook; }

/* Frees entry i; a device-only block still held elsewhere lands first
 * (eviction to the host). */
static int drop(int i, BrErr *e)
{
    int rc = 0;
    if (ents[i].m->dev && __atomic_load_n(&ents[i].m->refs, __ATOMIC_ACQUIRE) > 1 && (rc = land(&ents[i], e)))
        return rc;
    gpubuf_release(&ents[i].b);
    used -= ents[i].bytes;
    mb_release(ents[i].m);
    ents[i] = ents[--nents];
    return 0;
}

/* Frees cached buffers, then evicts least recently used unpinned
 * entries, until bytes more fit. */
static int make_room(double bytes, BrErr *e)
{
    while (used + cached + bytes > gpu_ctx.budget && cache_drop_oldest()) {}
    while (used + bytes > gpu_ctx.budget) {
        int v = -1;
        for (int i = 0; i < nents; i++)
            if (!ents[i].pinned && (v < 0 || ents[i].tick < ents[v].tick)) v = i;
        if (v < 0) return 0;   /* everything pinned: let the driver try */
        if (drop(v, e)) return -1;
        gpu_st.evictions++;
    }
    return 0;
}

cl_mem gpu_alloc(size_t bytes, BrErr *e)
{
    if (bytes == 0) bytes = 8;
    /* larger than one buffer may be: not an error, the operator falls
     * back to the CPU (NULL with e clear) */
    if (bytes > gpu_ctx.info.max_alloc) return NULL;
    cl_mem m = cache_take(bytes);
    if (m) { gpu_st.buf_reused++; return m; }
    if (make_room((double)bytes, e)) return NULL;
    cl_int rc;
    m = clCreateBuffer(gpu_ctx.ctx, CL_MEM_READ_WRITE, bytes, NULL, &rc);
    if (rc == CL_MEM_OBJECT_ALLOCATION_FAILURE || rc == CL_OUT_OF_RESOURCES) {
        /* the device is fuller than the budget thought: free everything
         * cached and unpinned and try once more */
        gpu_cache_clear();
        if (make_room(1e300, e)) return NULL;
        m = clCreateBuffer(gpu_ctx.ctx, CL_MEM_READ_WRITE, bytes, NULL, &rc);
    }
    if (rc != CL_SUCCESS) { gpu_clerr(e, rc, "clCreateBuffer"); return NULL; }
    return m;
}

static double buf_bytes(const MB *m, bool sparse)
{
    if (sparse) return (double)(m->rows + 1) * 8 + (double)m->nnz * 12;
    return (double)m->rows * (double)m->cols * 8;
}

static int find(const MB *m)
{
    for (int i = 0; i < nents; i++) if (ents[i].m == m) return i;
    return -1;
}

void gpu_xfer_add(GpuXfer *x, const MB *m)
{
    pthread_mutex_lock(&gpu_lock);
    int i = find(m);
    if (i < 0) x->up += buf_bytes(m, m->sparse);
    else if (m->dev) x->down += ents[i].bytes;
    pthread_mutex_unlock(&gpu_lock);
}

cl_mem gpu_upload(const void *p, size_t bytes, BrErr *e)
{
    cl_mem m = gpu_alloc(bytes, e);
    if (!m || bytes == 0) return m;
    cl_int rc = clEnqueueWriteBuffer(gpu_ctx.q, m, CL_TRUE, 0, bytes, p, 0, NULL, NULL);
    if (rc != CL_SUCCESS) { gpu_free(m); gpu_clerr(e, rc, "clEnqueueWriteBuffer"); return NULL; }
    gpu_st.h2d_bytes += (int64_t)bytes;
    return m;
}

/* The host copies of gpu_upload_small's writes still in flight, freed
 * once their write completed (polled at the next call; all at
 * gpu_pool_clear, after the queue finished). */
typedef struct Staged { cl_event ev; void *p; } Staged;
static Staged *staged;
static int nstaged, cstaged;
static pthread_mutex_t stage_lock = PTHREAD_MUTEX_INITIALIZER;

static void reap_staged(bool all)
{
    pthread_mutex_lock(&stage_lock);
    for (int i = nstaged - 1; i >= 0; i--) {
        cl_int st = CL_COMPLETE;
        if (!all && clGetEventInfo(staged[i].ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) != CL_SUCCESS)
            st = CL_QUEUED;
        if (st != CL_COMPLETE && st >= 0) continue;   /* (negative: failed, done too) */
        clReleaseEvent(staged[i].ev);
        free(staged[i].p);
        staged[i] = staged[--nstaged];
    }
    pthread_mutex_unlock(&stage_lock);
}

cl_mem gpu_upload_small(const void *p, size_t bytes, BrErr *e)
{
    reap_staged(false);
    cl_mem m = gpu_alloc(bytes, e);
    if (!m || bytes == 0) return m;
    void *copy = malloc(bytes);
    if (!copy) {
        gpu_free(m);
        return br_err(e, BR_ENOMEM, "out of memory"), NULL;
    }
    memcpy(copy, p, bytes);
    cl_event ev = NULL;
    cl_int rc = clEnqueueWriteBuffer(gpu_ctx.q, m, CL_FALSE, 0, bytes, copy, 0, NULL, &ev);
    if (rc != CL_SUCCESS) {
        free(copy);
        gpu_free(m);
        gpu_clerr(e, rc, "clEnqueueWriteBuffer");
        return NULL;
    }
    pthread_mutex_lock(&stage_lock);
    bool kept = br_grow((void **)&staged, &cstaged, nstaged + 1, sizeof *staged);
    if (kept) staged[nstaged++] = (Staged){ev, copy};
    pthread_mutex_unlock(&stage_lock);
    if (!kept) {   /* no room to keep it: the write waited for instead */
        clWaitForEvents(1, &ev);
        clReleaseEvent(ev);
        free(copy);
    }
    return m;
}

static bool add(MB *m, const GpuBuf *b)
{
    if (!br_grow((void **)&ents, &cents, nents + 1, sizeof *ents)) return false;
    ents[nents++] = (Entry){mb_retain(m), *b, buf_bytes(m, b->sparse), ++clock_tick, true, m->ext != 0};
    used += buf_bytes(m, b->sparse);
    return true;
}

int gpu_get(const MB *m, GpuBuf *out, BrErr *e)
{
    int i = find(m);
    if (i >= 0) {
        gpu_st.hits++;
        ents[i].tick = ++clock_tick;
        ents[i].pinned = true;
        *out = ents[i].b;
        return 0;
    }
    gpu_st.misses++;
    GpuBuf b = {0};
    b.sparse = m->sparse;
    b.nnz = m->sparse ? m->nnz : 0;
    if (m->sparse) {
        if (!(b.rp = gpu_upload(m->rp, (size_t)(m->rows + 1) * sizeof(int64_t), e))) goto fail;
        if (!(b.ci = gpu_upload(m->ci, (size_t)m->nnz * sizeof(int32_t), e))) goto fail;
        if (!(b.v = gpu_upload(m->v, (size_t)m->nnz * sizeof(double), e))) goto fail;
    } else if (!(b.d = gpu_upload(m->d, (size_t)(m->rows * m->cols) * sizeof(double), e))) {
        goto fail;
    }
    /* the pool's reference: the block is the caller's input and outlives
     * this call; the cast drops const only for the reference count */
    if (!add((MB *)m, &b)) { gpubuf_release(&b); return br_err(e, BR_ENOMEM, "out of memory"); }
    *out = b;
    return 0;
fail:
    gpubuf_release(&b);
    return -1;
}

bool gpu_put(MB *r, const GpuBuf *b)
{
    GpuBuf c = *b;
    if (add(r, &c)) return true;
    gpubuf_release(&c);   /* no room to remember: just free */
    return false;
}

void gpu_unpin_all(void)
{
    BrErr e;
    for (int i = nents - 1; i >= 0; i--) {
        ents[i].pinned = false;
        if (ents[i].transient) drop(i, &e);   /* a caller's memory: never device-only */
    }
}

void gpu_pool_trim(void)
{
    BrErr e;
    /* refs 1: only the pool holds the block, nothing lands */
    for (int i = nents - 1; i >= 0; i--)
        if (!ents[i].pinned && __atomic_load_n(&ents[i].m->refs, __ATOMIC_ACQUIRE) == 1) drop(i, &e);
}

bool gpu_pool_forget(const MB *m)
{
    pthread_mutex_lock(&gpu_lock);
    int i = find(m);
    BrErr e;
    /* the updater read the block first (the interpreter lands the inputs
     * of CPU instructions); a device-only block is kept, never lost */
    bool done = i >= 0 && !ents[i].pinned && !m->dev && !drop(i, &e);
    if (done) gpu_st.forgotten++;
    pthread_mutex_unlock(&gpu_lock);
    return done;
}

double gpu_pool_bytes(void)
{
    pthread_mutex_lock(&gpu_lock);
    double b = used;
    pthread_mutex_unlock(&gpu_lock);
    return b;
}

void gpu_pool_clear(void)
{
    pthread_mutex_lock(&gpu_lock);
    /* device-only blocks still held land first; one that cannot (a
     * device error) keeps its entry, so it is never left without cells */
    for (int i = nents - 1; i >= 0; i--) {
        BrErr e;
        if (drop(i, &e)) fprintf(stderr, "braid: %s\n", e.msg);
    }
    gpu_cache_clear();
    if (gpu_ctx.q) clFinish(gpu_ctx.q);
    reap_staged(true);
    pthread_mutex_unlock(&gpu_lock);
}
