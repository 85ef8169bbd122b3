/* pool.c: the device buffer pool. An entry is the device copy of a host
 * block; it holds a reference to the block, so the block's address cannot
 * be reused by another block while the entry lives (the key stays valid)
 * and the block is never updated in place meanwhile (a block with more
 * than one reference is immutable: mb.h). Inputs are uploaded on first
 * use (lazy); results are registered with their host block and stay for
 * the next operator. The pool keeps its bytes under the budget by
 * evicting the least recently used unpinned entries; the host copy is
 * always current, so eviction frees the device buffers and drops the
 * reference. Entries whose block only the pool still holds are dead and
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

void gpubuf_release(GpuBuf *b)
{
    if (b->d) clReleaseMemObject(b->d);
    if (b->rp) clReleaseMemObject(b->rp);
    if (b->ci) clReleaseMemObject(b->ci);
    if (b->v) clReleaseMemObject(b->v);
    memset(b, 0, sizeof *b);
}

static void drop(int i)
{
    gpubuf_release(&ents[i].b);
    used -= ents[i].bytes;
    mb_release(ents[i].m);
    ents[i] = ents[--nents];
}

/* Evicts least recently used unpinned entries until bytes more fit. */
static void make_room(double bytes)
{
    while (used + bytes > gpu_ctx.budget) {
        int v = -1;
        for (int i = 0; i < nents; i++)
            if (!ents[i].pinned && (v < 0 || ents[i].tick < ents[v].tick)) v = i;
        if (v < 0) return;   /* everything pinned: let the driver try */
        drop(v);
        gpu_st.evictions++;
    }
}

cl_mem gpu_alloc(size_t bytes, BrErr *e)
{
    if (bytes == 0) bytes = 8;
    /* larger than one buffer may be: not an error, the operator falls
     * back to the CPU (NULL with e clear) */
    if (bytes > gpu_ctx.info.max_alloc) return NULL;
    make_room((double)bytes);
    cl_int rc;
    cl_mem m = clCreateBuffer(gpu_ctx.ctx, CL_MEM_READ_WRITE, bytes, NULL, &rc);
    if (rc == CL_MEM_OBJECT_ALLOCATION_FAILURE || rc == CL_OUT_OF_RESOURCES) {
        /* the device is fuller than the budget thought: free everything
         * unpinned and try once more */
        make_room(1e300);
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

double gpu_upload_bytes(const MB *m)
{
    pthread_mutex_lock(&gpu_lock);
    double b = find(m) >= 0 ? 0 : buf_bytes(m, m->sparse);
    pthread_mutex_unlock(&gpu_lock);
    return b;
}

static cl_mem upload(const void *p, size_t bytes, BrErr *e)
{
    cl_mem m = gpu_alloc(bytes, e);
    if (!m || bytes == 0) return m;
    cl_int rc = clEnqueueWriteBuffer(gpu_ctx.q, m, CL_TRUE, 0, bytes, p, 0, NULL, NULL);
    if (rc != CL_SUCCESS) { clReleaseMemObject(m); gpu_clerr(e, rc, "clEnqueueWriteBuffer"); return NULL; }
    gpu_st.h2d_bytes += (int64_t)bytes;
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
    if (m->sparse) {
        if (!(b.rp = upload(m->rp, (size_t)(m->rows + 1) * sizeof(int64_t), e))) goto fail;
        if (!(b.ci = upload(m->ci, (size_t)m->nnz * sizeof(int32_t), e))) goto fail;
        if (!(b.v = upload(m->v, (size_t)m->nnz * sizeof(double), e))) goto fail;
    } else if (!(b.d = upload(m->d, (size_t)(m->rows * m->cols) * sizeof(double), e))) {
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

void gpu_put(MB *r, const GpuBuf *b)
{
    GpuBuf c = *b;
    if (!add(r, &c)) gpubuf_release(&c);   /* no room to remember: just free */
}

void gpu_unpin_all(void)
{
    for (int i = nents - 1; i >= 0; i--) {
        ents[i].pinned = false;
        if (ents[i].transient) drop(i);
    }
}

void gpu_pool_trim(void)
{
    for (int i = nents - 1; i >= 0; i--)
        if (!ents[i].pinned && __atomic_load_n(&ents[i].m->refs, __ATOMIC_ACQUIRE) == 1) drop(i);
}

bool gpu_pool_forget(const MB *m)
{
    pthread_mutex_lock(&gpu_lock);
    int i = find(m);
    bool done = i >= 0 && !ents[i].pinned;
    if (done) {
        drop(i);
        gpu_st.forgotten++;
    }
    pthread_mutex_unlock(&gpu_lock);
    return done;
}

void gpu_pool_clear(void)
{
    pthread_mutex_lock(&gpu_lock);
    while (nents > 0) drop(nents - 1);
    pthread_mutex_unlock(&gpu_lock);
}
