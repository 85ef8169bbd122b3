/* cache.c: the plan cache (seed 000, section 5.3). In memory, per
 * context: operators keyed by the hash of their CPlan (and compared by the
 * full canonical signature), so equivalent CPlans of other DAGs and of
 * every dynamic recompilation reuse the compiled operator. On disk, shared
 * by processes: a per-user directory ($XDG_CACHE_HOME/braid, else
 * ~/.cache/braid; mode 0700, owned by the user, reached through folders
 * only root or the user control, no symbolic link at the end) holding
 * <key>.so, the <key>.c it was compiled from and <key>.so.sum, the
 * object's hash at compile time; a load is trusted only if the files are
 * owned by the user, not writable by others, not symbolic links, the
 * stored source equals the generated source and the object's hash
 * matches. Files are published by rename, so concurrent
 * processes never see partial files. Without a usable cache directory a
 * private temporary directory holds the objects.
 *
 * The prebuilt set (docs/perf.md): a second, read-only directory of the
 * same layout, filled at build time (`make kernels`) by running the
 * common algorithms; an operator missing from the user's cache is loaded
 * from there under the same checks (files owned by the user or root), so
 * a cold cache runs what a warm one runs, with no compile on the
 * critical path. */
#include "cgint.h"
#include "../base/vec.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CACHE_MAX_OPS 4096      /* objects kept; the oldest half goes beyond */
#define CACHE_GC_PERIOD 3600    /* seconds between collections */

typedef struct Ent { char name[80]; time_t mtime; } Ent;

static int ent_cmp(const void *a, const void *b)
{
    const Ent *x = a, *y = b;
    return x->mtime < y->mtime ? -1 : x->mtime > y->mtime;
}

/* Removes dir and the files in it (a compile job's temporary folder;
 * nothing nested). */
void cg_rmdir_flat(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *de;
    char path[1400];
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

/* Bounds the disk cache: at most once per CACHE_GC_PERIOD (a stamp file),
 * removes leftovers of crashed compiles and, beyond CACHE_MAX_OPS objects,
 * the least recently used half (loads refresh an object's mtime). */
static void cache_gc(const char *dir)
{
    char stamp[1200];
    snprintf(stamp, sizeof stamp, "%s/gc.stamp", dir);
    struct stat st;
    time_t now = time(NULL);
    if (stat(stamp, &st) == 0 && now - st.st_mtime < CACHE_GC_PERIOD) return;
    int fd = open(stamp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) close(fd);
    DIR *d = opendir(dir);
    if (!d) return;
    Ent *v = NULL;
    int n = 0, cap = 0;
    struct dirent *de;
    char path[1200];
    while ((de = readdir(d))) {
        const char *nm = de->d_name;
        size_t l = strlen(nm);
        if (snprintf(path, sizeof path, "%s/%s", dir, nm) >= (int)sizeof path) continue;   /* never a cut path */
        if (!strncmp(nm, "tmp.", 4)) {
            if (lstat(path, &st) == 0 && now - st.st_mtime > CACHE_GC_PERIOD) {
                if (S_ISDIR(st.st_mode)) cg_rmdir_flat(path);   /* a compile job's TMPDIR */
                else unlink(path);
            }
            continue;
        }
        /* precompiled preludes (jit.c) of other versions: unused a week */
        if (!strncmp(nm, "prelude-", 8)) {
            if (stat(path, &st) == 0 && now - st.st_mtime > 7 * 24 * 3600) unlink(path);
            continue;
        }
        if (l < 4 || l >= sizeof v->name || strcmp(nm + l - 3, ".so") || stat(path, &st)) continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            Ent *nv = realloc(v, (size_t)cap * sizeof *nv);
            if (!nv) break;
            v = nv;
        }
        memcpy(v[n].name, nm, l + 1);   /* l < sizeof name (above) */
        v[n].mtime = st.st_mtime;
        n++;
    }
    closedir(d);
    if (n > CACHE_MAX_OPS) {
        qsort(v, (size_t)n, sizeof *v, ent_cmp);
        for (int i = 0; i < n - CACHE_MAX_OPS / 2; i++) {
            snprintf(path, sizeof path, "%s/%s", dir, v[i].name);
            unlink(path);
            size_t l = strlen(path);
            char sum[1300];
            snprintf(sum, sizeof sum, "%s.sum", path);
            unlink(sum);
            path[l - 2] = 'c';
            path[l - 1] = 0;
            unlink(path);
        }
    }
    free(v);
}

/* A directory of prebuilt kernels braid may trust: every folder on the
 * way one only root or the user controls, the last one too. */
static bool trusted_dir(const char *path)
{
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", path);
    struct stat st;
    for (char *p = tmp + 1;; p++) {
        if (*p && *p != '/') continue;
        char ch = *p;
        *p = 0;
        bool ok = stat(tmp, &st) == 0 && br_safe_folder(&st) && (ch || !(st.st_mode & 022));
        *p = ch;
        if (!ok) return false;
        if (!ch) return true;
    }
}

/* dir + "/kernels" when it is a trusted folder (dir: the folder of a file). */
static bool prebuilt_next_to(const char *file, char *out, size_t n)
{
    char real[PATH_MAX];
    if (!file || !file[0] || !realpath(file, real)) return false;
    char *slash = strrchr(real, '/');
    if (!slash) return false;
    *slash = 0;
    if (strlen(real) + sizeof "/kernels" > n) return false;
    memcpy(out, real, strlen(real));
    memcpy(out + strlen(real), "/kernels", sizeof "/kernels");
    return trusted_dir(out);
}

/* The prebuilt set: $BRAID_KERNELS ("none" or empty: no prebuilt set),
 * else a folder "kernels" next to the program (build/braid ->
 * build/kernels, where `make kernels` puts it), else next to the object
 * braid's code was loaded from (the Python module's library). */
static void prebuilt_init(CgContext *c)
{
    const char *env = getenv("BRAID_KERNELS");
    char *out = c->prebuilt;
    size_t n = sizeof c->prebuilt;
    if (env) {
        if (!env[0] || !strcmp(env, "none")) return;
        snprintf(out, n, "%s", env);
        c->have_prebuilt = trusted_dir(out);
        return;
    }
    Dl_info info;
    c->have_prebuilt = prebuilt_next_to("/proc/self/exe", out, n) ||
                       (dladdr((void *)prebuilt_init, &info) && prebuilt_next_to(info.dli_fname, out, n));
}

/* Chooses the cache directory (and finds the prebuilt set) once per
 * context. */
void cache_dir_init(CgContext *c)
{
    if (!c->prebuilt_done) {
        c->prebuilt_done = true;
        prebuilt_init(c);
    }
    if (c->have_dir || c->dir_failed) return;
    char dir[1024] = "";
    if (br_cache_dir(c->opt.cachedir, dir, sizeof dir)) {
        snprintf(c->cachedir, sizeof c->cachedir, "%s", dir);
        c->have_dir = true;
        c->disk_ok = true;
        cache_gc(dir);
        return;
    }
    /* no persistent cache: a private temporary directory */
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/braid-cg-XXXXXX", t && t[0] ? t : "/tmp");
    if (mkdtemp(dir)) {
        snprintf(c->cachedir, sizeof c->cachedir, "%s", dir);
        c->have_dir = true;
        c->tmpdir = true;
    } else {
        c->dir_failed = true;
    }
}

/* Removes the private temporary directory, if one was made, with the
 * objects, sources and precompiled prelude in it (no /tmp/braid-cg-*
 * left behind). Its compiles have ended (jit.c kills them). */
void cache_dir_cleanup(CgContext *c)
{
    if (!c->tmpdir) return;
    DIR *d = opendir(c->cachedir);
    struct dirent *de;
    char path[1400];
    while (d && (de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        snprintf(path, sizeof path, "%s/%s", c->cachedir, de->d_name);
        if (unlink(path) != 0 && errno == EISDIR) cg_rmdir_flat(path);
    }
    if (d) closedir(d);
    rmdir(c->cachedir);
}

/* A cache file braid may trust: a regular file owned by the user (or by
 * root: a prebuilt set installed system-wide) that others cannot write. */
bool cache_file_ok(const struct stat *st)
{
    return S_ISREG(st->st_mode) && (st->st_uid == getuid() || st->st_uid == 0) && !(st->st_mode & 022);
}

/* A regular file (no symbolic link) of ours that others cannot write,
 * opened for reading; -1 otherwise. */
static int trusted_open(const char *path)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) || !cache_file_ok(&st))) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* Is the cached object at so (compiled from cpath) usable for src? (The
 * object's own hash is checked when it is loaded, jit.c.) prebuilt: so
 * lies in the prebuilt set rather than the user's cache. */
bool cache_verify(const CgContext *c, const char *so, const char *cpath, const char *src, bool prebuilt)
{
    if (!(prebuilt ? c->have_prebuilt : c->disk_ok)) return false;
    int sfd = trusted_open(so);
    if (sfd < 0) return false;
    close(sfd);
    int fd = trusted_open(cpath);
    FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    if (!f) { if (fd >= 0) close(fd); return false; }
    size_t n = strlen(src);
    char *buf = malloc(n + 2);
    bool ok = false;
    if (buf) {
        size_t k = fread(buf, 1, n + 1, f);
        ok = k == n && memcmp(buf, src, n) == 0;
        free(buf);
    }
    fclose(f);
    return ok;
}

static const char *op_display_name(const CPlan *p)
{
    switch (p->tpl) {
    case T_CELL: return "spoofCell";
    case T_ROW: return "spoofRA";
    case T_MAGG: return "spoofMA";
    case T_OUTER: return "spoofOP";
    default: return "spoof";
    }
}

CgOp *cg_amulet_op(CgContext *c, const char *src, uint64_t hash)
{
    pthread_mutex_lock(&c->lock);
    CgOp *op = NULL;
    for (int i = 0; i < c->nops && !op; i++) {
        CgOp *o = c->ops[i];
        if (o->amulet && o->plan->hash == hash && !strcmp(o->src, src)) op = o;
    }
    if (op) c->st.cache_hits++;
    if (!op && (op = br_calloc(1, sizeof *op))) {
        op->plan = br_calloc(1, sizeof *op->plan);
        op->src = strdup(src);
        op->amulet = true;
        snprintf(op->name, sizeof op->name, "amulet");
        if (op->plan) {
            op->plan->hash = hash;
            op->plan->sig = strdup("amulet");
        }
        if (!op->plan || !op->src || !op->plan->sig || !br_grow((void **)&c->ops, &c->cap, c->nops + 1, sizeof *c->ops)) {
            cplan_free(op->plan);
            free(op->src);
            free(op);
            op = NULL;
        } else {
            c->ops[c->nops++] = op;
        }
    }
    pthread_mutex_unlock(&c->lock);
    /* one compile per kernel: a thread finding it pending (parfor workers
     * running the same loop) waits for the one compiling (jitlock) */
    if (op && __atomic_load_n(&op->ready, __ATOMIC_ACQUIRE) == 0) {
        pthread_mutex_lock(&c->jitlock);
        if (__atomic_load_n(&op->ready, __ATOMIC_ACQUIRE) == 0) jit_compile_all(c, &op, 1);
        pthread_mutex_unlock(&c->jitlock);
    }
    return op;
}

/* The operator of plan p: a cached equivalent one (plan cache hit) or a
 * new one with generated source, to be compiled by jit_compile_all.
 * Takes ownership of p. */
CgOp *cg_op_get(CgContext *c, CPlan *p)
{
    pthread_mutex_lock(&c->lock);
    c->st.cplans++;
    /* schedule perturbation: some plans miss (a second operator) */
    if (c->opt.plancache && !br_perturb_miss_early(PT_PLAN_MISS, p->hash))
        for (int i = 0; i < c->nops; i++) {
            CgOp *o = c->ops[i];
            if (o->plan->hash == p->hash && !strcmp(o->plan->sig, p->sig)) {
                c->st.cache_hits++;
                pthread_mutex_unlock(&c->lock);
                cplan_free(p);
                return o;
            }
        }
    CgOp *op = br_calloc(1, sizeof *op);
    if (op) {
        op->plan = cplan_copy(p);
        op->src = cgen_c(p);
        snprintf(op->name, sizeof op->name, "%s", op_display_name(p));
        if (!op->plan || !op->src) { cplan_free(op->plan); free(op->src); free(op); op = NULL; }
    }
    if (op && !br_grow((void **)&c->ops, &c->cap, c->nops + 1, sizeof *c->ops)) {
        cplan_free(op->plan);
        free(op->src);
        free(op);
        op = NULL;
    }
    if (op) c->ops[c->nops++] = op;
    pthread_mutex_unlock(&c->lock);
    cplan_free(p);
    return op;
}
