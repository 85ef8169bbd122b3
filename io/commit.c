/* commit.c: what makes write() safe and durable (docs/durability.md):
 * which targets may be replaced, fsync of files and folders, the commit
 * of a data file and its .mtd as one unit, and the recovery that finishes
 * or undoes a commit a killed process left half done.
 *
 * Names next to a target P (PID: the writing process, X: a unique tag):
 *   P.tmp.PID.X, P.mtd.tmp.PID.X   temporaries being written
 *   P.next.PID.X                   complete new data, not yet committed
 *   P.mtd.next.PID.X               complete new .mtd: the commit point
 *   P.old.PID.X                    a replaced folder of part files
 * A pair commits by renaming the data temporary to P.next, then the .mtd
 * temporary to P.mtd.next (the commit point: from here on the new pair
 * wins), then P.next over P and P.mtd.next over P.mtd. Recovery (before a
 * read or write of P) looks at leftovers of dead processes only: a
 * P.mtd.next rolls forward, a P.next without one rolls back, temporaries
 * and old folders are removed. */
#include "ioint.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---------- which targets may be replaced ---------- */

/* Names of part files as braid and SystemDS (Hadoop) write them: part-*,
 * 0-m-00000, 0-r-00000, 0, _SUCCESS and Hadoop's .name.crc checksums. */
static bool part_name(const char *n)
{
    size_t l = strlen(n);
    if (!strncmp(n, "part-", 5) || !strcmp(n, "_SUCCESS")) return true;
    if (n[0] == '.' && l > 5 && !strcmp(n + l - 4, ".crc")) return true;
    const char *p = n;
    while (*p >= '0' && *p <= '9') p++;
    if (p == n) return false;
    if (!*p) return true;
    if ((p[0] != '-') || (p[1] != 'm' && p[1] != 'r') || p[2] != '-') return false;
    p += 3;
    if (!*p) return false;
    while (*p >= '0' && *p <= '9') p++;
    return !*p;
}

/* Is path a folder of part files with a .mtd next to it (a matrix or
 * frame braid or SystemDS wrote), the only kind of folder write()
 * replaces? Reports why not. */
static int part_dir_check(const char *path, BrErr *e)
{
    size_t pl = strlen(path);
    char *buf = br_malloc(pl + 300);
    if (!buf) return br_err(e, BR_ENOMEM, "out of memory");
    struct stat st;
    snprintf(buf, pl + 300, "%s.mtd", path);
    if (lstat(buf, &st) != 0 || !S_ISREG(st.st_mode)) {
        free(buf);
        return br_err(e, BR_EIO, "cannot write %s: it is a folder without %s.mtd (only a folder of part files "
                      "that braid or SystemDS wrote is replaced)", path, path);
    }
    DIR *d = opendir(path);
    if (!d) {
        free(buf);
        return br_err(e, BR_EIO, "cannot replace folder %s: %s", path, strerror(errno));
    }
    struct dirent *de;
    int rc = 0;
    while (!rc && (de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        snprintf(buf, pl + 300, "%s/%s", path, de->d_name);
        if (strlen(de->d_name) > 250 || !part_name(de->d_name) || lstat(buf, &st) != 0 || !S_ISREG(st.st_mode))
            rc = br_err(e, BR_EIO, "cannot write %s: the folder holds %s, which is not a part file (only a folder "
                        "of part files that braid or SystemDS wrote is replaced)", path, de->d_name);
    }
    closedir(d);
    free(buf);
    return rc;
}

int io_check_target(const char *path, BrErr *e)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    if (!*b || !strcmp(b, ".") || !strcmp(b, ".."))
        return br_err(e, BR_EIO, "cannot write %s: not a file name (a folder such as . or / is never replaced)",
                      path);
    struct stat st;
    if (lstat(path, &st) != 0 || S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) return 0;
    if (S_ISDIR(st.st_mode)) return part_dir_check(path, e);
    return br_err(e, BR_EIO, "cannot write %s: not a regular file (a device, pipe or socket is never replaced)",
                  path);
}

/* A part file's temporary, "<part>.tmp.<pid>.<tag>": what a rank writing
 * its part of a distributed write leaves in the write's temporary folder
 * when it dies (io_parts_begin; each part goes through its own
 * temporary). */
static bool part_tmp_name(const char *n)
{
    const char *t = strstr(n, ".tmp.");
    if (!t || t == n || (size_t)(t - n) > 250) return false;
    char part[256];
    memcpy(part, n, (size_t)(t - n));
    part[t - n] = 0;
    const char *q = t + 5;
    if (*q < '0' || *q > '9') return false;
    while (*q >= '0' && *q <= '9') q++;
    return *q == '.' && part_name(part);
}

/* Removes a folder of part files (own: braid's temporary folder of a
 * write, which may also hold the temporaries of parts being written):
 * every entry is checked before the first is removed, so a refused folder
 * is left whole. */
static int remove_part_dir_k(const char *dir, const char *shown, bool own, BrErr *e)
{
    DIR *d = opendir(dir);
    if (!d) return br_err(e, BR_EIO, "cannot replace folder %s: %s", shown, strerror(errno));
    size_t pl = strlen(dir);
    char *buf = br_malloc(pl + 300);
    int rc = 0;
    if (!buf) { closedir(d); return br_err(e, BR_ENOMEM, "out of memory"); }
    struct dirent *de;
    while (!rc && (de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        snprintf(buf, pl + 300, "%s/%s", dir, de->d_name);
        struct stat st;
        if (strlen(de->d_name) > 250 || !(part_name(de->d_name) || (own && part_tmp_name(de->d_name))) ||
            lstat(buf, &st) != 0 || !S_ISREG(st.st_mode))
            rc = br_err(e, BR_EIO, "cannot replace folder %s: it holds %s, which is not a part file", shown,
                        de->d_name);
    }
    rewinddir(d);
    while (!rc && (de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        snprintf(buf, pl + 300, "%s/%s", dir, de->d_name);
        if (unlink(buf) != 0) rc = br_err(e, BR_EIO, "cannot replace folder %s: %s", shown, strerror(errno));
    }
    closedir(d);
    free(buf);
    if (!rc && rmdir(dir) != 0) rc = br_err(e, BR_EIO, "cannot replace folder %s: %s", shown, strerror(errno));
    return rc;
}

static int remove_part_dir(const char *dir, const char *shown, BrErr *e)
{
    return remove_part_dir_k(dir, shown, false, e);
}

void io_remove_tmp(const char *path)
{
    struct stat st;
    BrErr e = {0};
    if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) remove_part_dir_k(path, path, true, &e);
    else unlink(path);
}

/* ---------- durability ---------- */

/* The crash test's hook (io.h): the process dies at commit step k. */
static int crash_at;
void io_test_crash_at(int step) { crash_at = step; }
static void crash_point(int step)
{
    if (crash_at == step) _exit(77);
}

/* Makes the renames in path's folder durable (a rename is an update of
 * the folder, which fsync of the file does not cover). */
void io_sync_dir(const char *path)
{
    char *d = io_dir_of(path);
    int fd = d ? open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(d);
}

/* path + suffix, a new string. */
static char *cat(const char *path, const char *suffix)
{
    size_t a = strlen(path), b = strlen(suffix);
    char *s = br_malloc(a + b + 1);
    if (s) { memcpy(s, path, a); memcpy(s + a, suffix, b + 1); }
    return s;
}

/* The PID.X tail of a temporary's name ("P.tmp.PID.X" -> "PID.X"). */
static const char *tmp_tag(const IoOut *o)
{
    const char *t = o->tmp + strlen(o->path);
    return !strncmp(t, ".tmp.", 5) ? t + 5 : t;
}

/* Puts a committed pair in place: the new data over path (a replaced
 * folder moved aside first and removed last), then the .mtd. */
static int finish_pair(const char *path, const char *next, const char *mnext, const char *old, BrErr *e)
{
    char *mp = cat(path, ".mtd");
    if (!mp) return br_err(e, BR_ENOMEM, "out of memory");
    struct stat st;
    bool dir = lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
    int rc = 0;
    if (dir && rename(path, old) != 0) rc = br_err(e, BR_EIO, "cannot replace folder %s: %s", path, strerror(errno));
    /* a folder of part files replacing a file: rename cannot put a folder
     * over a file, and the commit point has passed, so the file goes */
    struct stat ns;
    if (!rc && !dir && next && lstat(next, &ns) == 0 && S_ISDIR(ns.st_mode) && lstat(path, &st) == 0)
        unlink(path);
    crash_point(3);
    if (!rc && next && rename(next, path) != 0) rc = br_err(e, BR_EIO, "cannot write %s: %s", path, strerror(errno));
    crash_point(4);
    if (!rc && rename(mnext, mp) != 0) rc = br_err(e, BR_EIO, "cannot write %s: %s", mp, strerror(errno));
    io_sync_dir(path);
    crash_point(5);
    if (!rc && dir) rc = remove_part_dir(old, path, e);
    free(mp);
    return rc;
}

int io_commit_pair(IoOut *d, IoOut *md, BrErr *e)
{
    if (io_out_close(d, e) || io_out_close(md, e) || io_check_target(d->path, e)) {
        io_out_abort(md);
        io_out_abort(d);
        return e->code;
    }
    const char *tag = tmp_tag(d);
    size_t n = strlen(d->path) + strlen(tag) + 16;
    char *next = br_malloc(n), *mnext = br_malloc(n), *old = br_malloc(n);
    int rc = 0;
    if (!next || !mnext || !old) rc = br_err(e, BR_ENOMEM, "out of memory writing %s", d->path);
    else {
        snprintf(next, n, "%s.next.%s", d->path, tag);
        snprintf(mnext, n, "%s.mtd.next.%s", d->path, tag);
        snprintf(old, n, "%s.old.%s", d->path, tag);
        if (rename(d->tmp, next) != 0) rc = br_err(e, BR_EIO, "cannot write %s: %s", d->path, strerror(errno));
        else {
            d->tmp[0] = 0;   /* moved: abort must not remove it */
            io_sync_dir(d->path);
            crash_point(1);
            if (rename(md->tmp, mnext) != 0) {
                rc = br_err(e, BR_EIO, "cannot write %s: %s", md->path, strerror(errno));
                unlink(next);
            } else {
                md->tmp[0] = 0;
                io_sync_dir(d->path);   /* the commit point is durable */
                crash_point(2);
                rc = finish_pair(d->path, next, mnext, old, e);
            }
        }
    }
    free(next);
    free(mnext);
    free(old);
    io_out_abort(md);
    io_out_abort(d);
    return rc;
}

/* rename as a hold (base.h br_sig_hold): a part file renamed into its
 * folder while a signal's cleanup removes the folder's files would keep
 * the folder */
static int commit_rename(const char *from, const char *to)
{
    br_sig_hold();
    int r = rename(from, to);
    br_sig_release();
    return r;
}

int io_out_commit(IoOut *o, BrErr *e)
{
    if (io_out_close(o, e) || io_check_target(o->path, e)) { io_out_abort(o); return e->code; }
    struct stat st;
    int rc = 0;
    if (lstat(o->path, &st) == 0 && S_ISDIR(st.st_mode)) {
        char *old = cat(o->tmp, ".old");
        if (!old) rc = br_err(e, BR_ENOMEM, "out of memory");
        else if (rename(o->path, old) != 0)
            rc = br_err(e, BR_EIO, "cannot replace folder %s: %s", o->path, strerror(errno));
        else if (rename(o->tmp, o->path) != 0) {
            rc = br_err(e, BR_EIO, "cannot write %s: %s", o->path, strerror(errno));
            rename(old, o->path);
        } else {
            o->tmp[0] = 0;
            io_sync_dir(o->path);
            rc = remove_part_dir(old, o->path, e);
        }
        free(old);
    } else if (commit_rename(o->tmp, o->path) != 0) {
        rc = br_err(e, BR_EIO, "cannot write %s: %s", o->path, strerror(errno));
    } else {
        o->tmp[0] = 0;
        io_sync_dir(o->path);
    }
    io_out_abort(o);
    return rc;
}

/* ---------- recovery ---------- */

/* Gone, or a zombie: a process that ended and was not reaped yet (an
 * MPI rank whose mpirun ended first waits for init to reap it, so a
 * read right after a killed distributed run found its writer "alive"
 * and left the write's temporaries). */
static bool pid_dead(long pid)
{
    if (pid <= 0 || pid == (long)getpid()) return false;
    if (kill((pid_t)pid, 0) != 0) return errno == ESRCH;
    char f[64], buf[512];
    snprintf(f, sizeof f, "/proc/%ld/stat", pid);
    FILE *fp = fopen(f, "r");
    if (!fp) return false;
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[n] = 0;
    const char *r = strrchr(buf, ')');   /* the name may hold spaces and ')' */
    return r && r[1] == ' ' && (r[2] == 'Z' || r[2] == 'X');
}

/* A leftover next to path: its kind and the PID.X tag. */
typedef enum { L_NONE, L_TMP, L_NEXT, L_MNEXT, L_OLD } LeftKind;

static LeftKind leftover(const char *rest, const char **tag)
{
    static const struct { const char *pre; LeftKind k; } kinds[] = {
        {"tmp.", L_TMP}, {"mtd.tmp.", L_TMP}, {"next.", L_NEXT}, {"mtd.next.", L_MNEXT}, {"old.", L_OLD}};
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        size_t l = strlen(kinds[i].pre);
        if (strncmp(rest, kinds[i].pre, l)) continue;
        char *end;
        long pid = strtol(rest + l, &end, 10);
        if (end == rest + l || *end != '.' || !pid_dead(pid)) return L_NONE;
        *tag = rest + l;
        return kinds[i].k;
    }
    return L_NONE;
}

/* Applies one leftover (see the file comment). */
static void recover_one(const char *path, const char *dir, const char *name, LeftKind k, const char *tag)
{
    size_t n = strlen(path) + strlen(dir) + strlen(name) + strlen(tag) + 32;
    char *full = br_malloc(n), *next = br_malloc(n), *old = br_malloc(n);
    BrErr e = {0};
    if (full && next && old) {
        snprintf(full, n, "%s/%s", dir, name);
        snprintf(next, n, "%s.next.%s", path, tag);
        snprintf(old, n, "%s.old.%s", path, tag);
        struct stat st;
        if (k == L_MNEXT) finish_pair(path, lstat(next, &st) == 0 ? next : NULL, full, old, &e);
        else if (k == L_OLD && lstat(full, &st) == 0 && S_ISDIR(st.st_mode)) remove_part_dir(full, full, &e);
        else if (k != L_OLD || lstat(full, &st) == 0) io_remove_tmp(full);
    }
    free(full);
    free(next);
    free(old);
}

/* ---------- folders known to hold no leftovers ----------
 * Recovery reads the whole folder before each read or write, which in a
 * folder of many files (thousands of inputs, a busy /tmp) made every
 * read cost a scan. A folder whose scan found no name of any leftover
 * kind (of any target, of live processes too) is remembered with its
 * modification time: while that stays the same no leftover can have
 * appeared, so the next recovery there skips the scan. Only a scan that
 * began clearly after the folder's last change is remembered (a change in
 * the same clock tick could keep the time). */
#define CLEAN_DIRS 16
static struct { dev_t dev; ino_t ino; struct timespec mtime; bool used; } clean_dirs[CLEAN_DIRS];
static int clean_next;
static long recover_scans;
static pthread_mutex_t clean_mu = PTHREAD_MUTEX_INITIALIZER;

static bool dir_known_clean(const struct stat *st)
{
    bool hit = false;
    pthread_mutex_lock(&clean_mu);
    for (int i = 0; i < CLEAN_DIRS && !hit; i++)
        hit = clean_dirs[i].used && clean_dirs[i].dev == st->st_dev && clean_dirs[i].ino == st->st_ino &&
              clean_dirs[i].mtime.tv_sec == st->st_mtim.tv_sec && clean_dirs[i].mtime.tv_nsec == st->st_mtim.tv_nsec;
    pthread_mutex_unlock(&clean_mu);
    return hit;
}

static void dir_remember_clean(const struct stat *st, const struct timespec *scan_start)
{
    double age = (double)(scan_start->tv_sec - st->st_mtim.tv_sec) + 1e-9 * (double)(scan_start->tv_nsec - st->st_mtim.tv_nsec);
    if (age < 0.05) return;
    pthread_mutex_lock(&clean_mu);
    int k = -1;
    for (int i = 0; i < CLEAN_DIRS && k < 0; i++)
        if (clean_dirs[i].used && clean_dirs[i].dev == st->st_dev && clean_dirs[i].ino == st->st_ino) k = i;
    if (k < 0) k = clean_next++ % CLEAN_DIRS;
    clean_dirs[k].dev = st->st_dev;
    clean_dirs[k].ino = st->st_ino;
    clean_dirs[k].mtime = st->st_mtim;
    clean_dirs[k].used = true;
    pthread_mutex_unlock(&clean_mu);
}

long io_recover_scans(void) { return __atomic_load_n(&recover_scans, __ATOMIC_RELAXED); }

/* Could name be a leftover of some target (".tmp.", ".next." or ".old."
 * and a process id), whoever wrote it? */
static bool leftover_like(const char *name)
{
    static const char *kinds[] = {".tmp.", ".next.", ".old."};
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
        for (const char *p = strstr(name, kinds[i]); p; p = strstr(p + 1, kinds[i])) {
            const char *q = p + strlen(kinds[i]);
            if (*q < '0' || *q > '9') continue;
            while (*q >= '0' && *q <= '9') q++;
            if (*q == '.') return true;
        }
    return false;
}

void io_recover(const char *path)
{
    char *dir = io_dir_of(path);
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t bl = strlen(b);
    struct stat dst;
    struct timespec scan_start;
    bool known = dir && bl && stat(dir, &dst) == 0;
    if (known && dir_known_clean(&dst)) { free(dir); return; }
    clock_gettime(CLOCK_REALTIME, &scan_start);
    DIR *d = dir && bl ? opendir(dir) : NULL;
    if (d) __atomic_add_fetch(&recover_scans, 1, __ATOMIC_RELAXED);
    if (!d) { free(dir); return; }
    /* names first, then actions (the folder changes under them) */
    char **names = NULL;
    int n = 0, cap = 0;
    bool clean = true;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (clean && leftover_like(de->d_name)) clean = false;
        if (strncmp(de->d_name, b, bl) || de->d_name[bl] != '.') continue;
        const char *tag;
        if (leftover(de->d_name + bl + 1, &tag) == L_NONE) continue;
        if (n == cap) {
            char **nn = br_realloc(names, (size_t)(cap = cap ? 2 * cap : 8) * sizeof *nn);
            if (!nn) { clean = false; break; }
            names = nn;
        }
        if (!(names[n] = br_strdup(de->d_name))) { clean = false; break; }
        n++;
    }
    closedir(d);
    if (clean && known) dir_remember_clean(&dst, &scan_start);
    /* roll forward committed pairs before removing orphans */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++) {
            const char *tag;
            LeftKind k = leftover(names[i] + bl + 1, &tag);
            if ((k == L_MNEXT) == (pass == 0)) recover_one(path, dir, names[i], k, tag);
        }
    if (n) io_sync_dir(path);
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
    free(dir);
}
