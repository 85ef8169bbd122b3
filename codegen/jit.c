/* jit.c: compiling generated C at run time with the system C compiler
 * (cc -O3 -march=native -fPIC -shared) into a shared object, loaded with
 * dlopen. Operators of one DAG compile in parallel (one compiler process
 * each, as many at a time as threads). Objects go to the on-disk cache
 * (cache.c) under a key hashing source, compiler and flags, written
 * atomically (temporary file + rename), so later runs load them without
 * compiling. A failed compile leaves the operator unusable and the caller
 * keeps the unfused plan.
 *
 * Measured on this machine (gcc 12, the operators of tests/test_codegen):
 * about 40-70 ms per operator, dominated by process start and parsing of
 * the headers; libtcc would compile faster but without vectorization, and
 * neither it nor libgccjit is needed when the disk cache is warm. */
#include "cgint.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static const char *CFLAGS_JIT[] = {"-O3", "-march=native", "-fPIC", "-shared", "-std=c11", "-ffp-contract=off",
                                   "-fno-math-errno", "-fopenmp-simd", "-w"};
#define NFLAGS ((int)(sizeof CFLAGS_JIT / sizeof *CFLAGS_JIT))

/* Finds the compiler ($BRAID_CC or cc on PATH) and its identity (real
 * path, size, mtime, and the CPU model, since -march=native code is
 * machine specific). Returns 0 when a compiler is available. */
int jit_prepare(CgContext *c)
{
    if (c->cc_ok) return 0;
    if (c->cc[0]) return -1;      /* looked before, none found */
    const char *name = getenv("BRAID_CC");
    if (!name || !*name) name = "cc";
    char found[1024] = "";
    if (strchr(name, '/')) snprintf(found, sizeof found, "%s", name);
    else {
        const char *path = getenv("PATH");
        if (!path) path = "/usr/bin:/bin";
        const char *p = path;
        while (*p && !found[0]) {
            const char *q = strchr(p, ':');
            size_t n = q ? (size_t)(q - p) : strlen(p);
            char cand[1024];
            snprintf(cand, sizeof cand, "%.*s/%s", (int)n, p, name);
            if (access(cand, X_OK) == 0) snprintf(found, sizeof found, "%s", cand);
            p = q ? q + 1 : p + n;
        }
    }
    snprintf(c->cc, sizeof c->cc, "%s", found[0] ? found : "-");
    if (!found[0]) return -1;
    char real[1024];
    struct stat st;
    if (!realpath(found, real) || stat(real, &st)) return -1;
    char cpu[128] = "";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "model name", 10)) {
                char *v = strchr(line, ':');
                if (v) snprintf(cpu, sizeof cpu, "%s", v + 1);
                break;
            }
        fclose(f);
    }
    uint64_t h = cg_hash_bytes(cpu, strlen(cpu), 7);
    snprintf(c->ccid, sizeof c->ccid, "%s:%lld:%lld:%016llx", real, (long long)st.st_size,
             (long long)st.st_mtime, (unsigned long long)h);
    c->cc_ok = true;
    return 0;
}

/* Cache key of a source: 128 bits over source, compiler identity, flags. */
static void cache_key(const CgContext *c, const char *src, char key[33])
{
    SBuf b = {0};
    sb_puts(&b, c->ccid);
    for (int i = 0; i < NFLAGS; i++) { sb_puts(&b, " "); sb_puts(&b, CFLAGS_JIT[i]); }
    sb_puts(&b, "\n");
    sb_puts(&b, src);
    uint64_t h1 = cg_hash_bytes(b.s, b.n, 0x5bd1e995), h2 = cg_hash_bytes(b.s, b.n, 0x9e3779b97f4a7c15ULL);
    free(b.s);
    snprintf(key, 33, "%016llx%016llx", (unsigned long long)h1, (unsigned long long)h2);
}

static int write_file(const char *path, const char *data, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return -1;
    size_t off = 0;
    while (off < n) {
        ssize_t k = write(fd, data + off, n - off);
        if (k < 0) { if (errno == EINTR) continue; close(fd); return -1; }
        off += (size_t)k;
    }
    return close(fd);
}

/* Loads the object at path and binds the operator's functions. */
static bool load(CgOp *op, const char *path)
{
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) return false;
    const unsigned long long *h = dlsym(dl, "cg_hash");
    if (!h || *h != (unsigned long long)op->plan->hash) { dlclose(dl); return false; }
    static const char *names[T__N][4] = {
        [T_CELL] = {"cg_dense", "cg_sparse", "cg_flat", NULL},
        [T_MAGG] = {"cg_dense", "cg_sparse", "cg_flat", NULL},
        [T_ROW] = {"cg_dense", "cg_sparse", NULL, "cg_tmp"},
        [T_OUTER] = {"cg_row", "cg_col", NULL, NULL},
    };
    for (int i = 0; i < 4; i++) {
        const char *nm = names[op->plan->tpl][i];
        op->fn[i] = nm ? dlsym(dl, nm) : NULL;
    }
    bool ok = op->plan->tpl == T_OUTER ? (op->fn[0] || op->fn[1]) : op->fn[0] != NULL;
    if (op->plan->tpl == T_ROW && !op->fn[3]) ok = false;
    if (!ok) { dlclose(dl); return false; }
    op->dl = dl;
    __atomic_store_n(&op->ready, 1, __ATOMIC_RELEASE);
    return true;
}

/* A compile job in flight. */
typedef struct Job {
    CgOp *op;
    pid_t pid;
    char src[1200], obj[1200], tmpobj[1200], key[33];
    bool disk;             /* publish into the disk cache */
} Job;

static bool start(CgContext *c, Job *j, int seq)
{
    const char *dir = c->cachedir;
    snprintf(j->src, sizeof j->src, "%s/tmp.%d.%d.%s.c", dir, (int)getpid(), seq, j->key);
    snprintf(j->tmpobj, sizeof j->tmpobj, "%s/tmp.%d.%d.%s.so", dir, (int)getpid(), seq, j->key);
    snprintf(j->obj, sizeof j->obj, "%s/%s.so", dir, j->key);
    if (write_file(j->src, j->op->src, strlen(j->op->src))) return false;
    char *argv[NFLAGS + 6];
    int a = 0;
    argv[a++] = c->cc;
    for (int i = 0; i < NFLAGS; i++) argv[a++] = (char *)CFLAGS_JIT[i];
    argv[a++] = "-o";
    argv[a++] = j->tmpobj;
    argv[a++] = j->src;
    argv[a] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    int rc = posix_spawn(&j->pid, c->cc, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc) { unlink(j->src); return false; }
    return true;
}

/* Waits for a job; publishes and loads its object. */
static void finish(CgContext *c, Job *j)
{
    int status = 0;
    while (waitpid(j->pid, &status, 0) < 0 && errno == EINTR) {}
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (ok && j->disk) {
        /* the source next to the object verifies a later load */
        char csrc[1200];
        snprintf(csrc, sizeof csrc, "%s/%s.c", c->cachedir, j->key);
        if (rename(j->src, csrc) == 0 && rename(j->tmpobj, j->obj) == 0) ok = load(j->op, j->obj);
        else ok = load(j->op, j->tmpobj);
    } else if (ok) {
        ok = load(j->op, j->tmpobj);
    }
    unlink(j->src);
    unlink(j->tmpobj);
    if (!ok) __atomic_store_n(&j->op->ready, -1, __ATOMIC_RELEASE);
}

/* Compiles the operators of ops[] that are not ready (disk cache first),
 * several at a time. The caller holds c->jitlock (one batch at a time);
 * c->lock guards the cache directory and compiler lookup. */
void jit_compile_all(CgContext *c, CgOp **ops, int n)
{
    int todo = 0;
    for (int i = 0; i < n; i++) if (ops[i] && ops[i]->ready == 0) todo++;
    if (!todo) return;
    int64_t t0 = br_now_ns();
    pthread_mutex_lock(&c->lock);
    cache_dir_init(c);
    int prep = jit_prepare(c);
    pthread_mutex_unlock(&c->lock);
    if (prep || !c->have_dir) {
        for (int i = 0; i < n; i++)
            if (ops[i] && ops[i]->ready == 0) __atomic_store_n(&ops[i]->ready, -1, __ATOMIC_RELEASE);
        return;
    }
    int par = br_threads() > 2 ? br_threads() : 2;
    Job *jobs = br_calloc((size_t)todo, sizeof *jobs);
    if (!jobs) return;
    int nj = 0, running = 0, next = 0, seq = 0;
    for (int i = 0; i < n; i++) {
        CgOp *op = ops[i];
        if (!op || op->ready != 0) continue;
        /* two entries of ops[] may be the same operator */
        bool dup = false;
        for (int k = 0; k < nj; k++) if (jobs[k].op == op) dup = true;
        if (dup) continue;
        Job *j = &jobs[nj];
        j->op = op;
        cache_key(c, op->src, j->key);
        j->disk = c->opt.plancache;
        char path[1200], cpath[1200];
        snprintf(path, sizeof path, "%s/%s.so", c->cachedir, j->key);
        snprintf(cpath, sizeof cpath, "%s/%s.c", c->cachedir, j->key);
        if (j->disk && cache_verify(c, path, cpath, op->src) && load(op, path)) {
            utimes(path, NULL);   /* recently used: kept by the collector */
            __atomic_add_fetch(&c->st.disk_hits, 1, __ATOMIC_RELAXED);
            continue;
        }
        nj++;
    }
    /* run up to par compilers at once */
    Job **active = br_calloc((size_t)BR_MAX(nj, 1), sizeof *active);
    while (next < nj || running > 0) {
        /* a context being freed starts no more compiles */
        if (__atomic_load_n(&c->stopping, __ATOMIC_ACQUIRE)) next = nj;
        while (next < nj && running < par) {
            Job *j = &jobs[next++];
            if (start(c, j, seq++)) active[running++] = j;
            else __atomic_store_n(&j->op->ready, -1, __ATOMIC_RELEASE);
        }
        if (!running) break;
        /* wait for the oldest */
        Job *j = active[0];
        finish(c, j);
        __atomic_add_fetch(&c->st.compiled, 1, __ATOMIC_RELAXED);
        memmove(active, active + 1, (size_t)(running - 1) * sizeof *active);
        running--;
    }
    free(active);
    free(jobs);
    __atomic_add_fetch(&c->st.compile_ns, br_now_ns() - t0, __ATOMIC_RELAXED);
}

/* A batch compiled in the background (asynchronous mode). */
typedef struct AJob { CgContext *c; CgOp **ops; int n; } AJob;

static void *async_main(void *arg)
{
    AJob *j = arg;
    pthread_mutex_lock(&j->c->jitlock);
    jit_compile_all(j->c, j->ops, j->n);
    pthread_mutex_unlock(&j->c->jitlock);
    pthread_mutex_lock(&j->c->lock);
    j->c->nasync--;
    pthread_cond_broadcast(&j->c->async_done);
    pthread_mutex_unlock(&j->c->lock);
    free(j->ops);
    free(j);
    return NULL;
}

/* Compiles ops (already queued by the caller) on a background thread;
 * they run through the reference kernels until ready (seed 001's
 * asynchronous mode). Returns false if no thread could be started. */
bool jit_compile_async(CgContext *c, CgOp **ops, int n)
{
    AJob *j = br_malloc(sizeof *j);
    CgOp **copy = br_malloc((size_t)BR_MAX(n, 1) * sizeof *copy);
    if (!j || !copy) { free(j); free(copy); return false; }
    memcpy(copy, ops, (size_t)n * sizeof *copy);
    *j = (AJob){c, copy, n};
    pthread_mutex_lock(&c->lock);
    c->nasync++;
    pthread_mutex_unlock(&c->lock);
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &at, async_main, j);
    pthread_attr_destroy(&at);
    if (rc) {
        pthread_mutex_lock(&c->lock);
        c->nasync--;
        pthread_mutex_unlock(&c->lock);
        free(copy);
        free(j);
        return false;
    }
    return true;
}
