/* jit.c: compiling generated C at run time with the system C compiler
 * into shared objects loaded with dlopen.
 *
 * One compiler process per batch (the operators of one DAG, or of one
 * dynamic recompilation, that are not in any cache): the operators'
 * sources become one translation unit (the shared prelude once, then each
 * operator's functions with their names suffixed by the operator's cache
 * key), compiled into one shared object. A batch of more than BUNDLE_MIN
 * operators is split into up to br_threads() such bundles compiled in
 * parallel. Batches of different DAGs (asynchronous mode) also compile in
 * parallel, at most br_threads() (at least 2) compiler processes at a time
 * in the whole process. A bundle that fails to compile is retried one
 * operator per process, so one bad operator leaves only itself unfused.
 *
 * The disk cache (cache.c) stays per operator: each compiled operator is
 * published as <key>.c (its own source, verifies later loads) and <key>.so,
 * a hard link to its bundle's object; key = hash of the operator's source,
 * the compiler's identity and flags. While braid waits for a compile, the
 * compiler is the only program started besides its watchdog (a `timeout`
 * leading the compile's own process session, spawn_compile, which bounds
 * it even if braid is killed), and braid does the file work when it ends
 * (finish, publish): the links are published by rename (concurrent processes never
 * see partial files), after each operator's <key>.so.sum, braid's hash of
 * the object, written once. braid stops a compile after BRAID_CC_TIMEOUT.
 * A compile into the persistent disk cache that is still running when its
 * context ends is left to finish detached (at most 2 max(2, br_threads())
 * per process; the others are killed with their compiler, as are compiles
 * into a private temporary folder): a shell of its own (detach,
 * finisher) waits for it, without polling (end of file on a pipe that
 * every process of the compile holds), stops it after BRAID_CC_TIMEOUT
 * even when braid is gone, and publishes the object with its POSIX cksum
 * as the sum; so a short run on a loaded machine still warms the cache
 * for the next. Each published object's sum is checked before a later
 * dlopen. A failed compile leaves the operator unusable and the caller
 * keeps the unfused plan. The prelude is precompiled once per cache
 * directory (pch_get), by a compile started and finished the same way.
 *
 * Measurements (gcc 12, 2 cores; docs/codegen.md section 5): a process
 * costs ~10 ms to start, ~8 ms to link and, for the prelude's headers,
 * ~110 ms (immintrin.h) or ~10 ms with the precompiled prelude; an
 * operator adds 20-50 ms of -O3 code generation. (Stop 54: the prelude
 * no longer includes immintrin.h, and 12 cached bundles compiled with the
 * .gch took 2.83 s of CPU against 2.74 s with the prelude as text: the
 * precompiled prelude no longer pays; -O2 took 2.3 s, its kernels' speed
 * not yet measured.) libtcc compiles an
 * operator in ~3 ms but its code is 5-13x slower (slower than the unfused
 * plan); libgccjit is no faster to compile than cc. */
#include "cgint.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static const char *CFLAGS_JIT[] = {"-O3", "-march=native", "-fPIC", "-shared", "-std=c11", "-ffp-contract=off",
                                   "-fno-math-errno", "-fopenmp-simd", "-w"};
#define NFLAGS ((int)(sizeof CFLAGS_JIT / sizeof *CFLAGS_JIT))
/* Part of every cache key: how operators are wrapped into bundles and
 * their symbols named (changing it invalidates old cache entries). */
#define BUNDLE_ABI "bundle-1 suffix=_<key>"
/* A batch is split into several compiler processes only beyond this many
 * operators per process (a process costs ~25 ms, an operator 20-50 ms). */
#define BUNDLE_MIN 4

/* Compiler processes running in this process (all contexts). */
static pthread_mutex_t slot_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t slot_cv = PTHREAD_COND_INITIALIZER;
static int slots_busy;
static unsigned seq_ctr;   /* temporary file names (atomic) */

/* found: name itself when it holds a '/', else the first executable
 * <dir>/name of $PATH; "" if none. */
static void path_find(const char *name, char found[1024])
{
    found[0] = 0;
    if (strchr(name, '/')) { snprintf(found, 1024, "%s", name); return; }
    const char *path = getenv("PATH");
    if (!path) path = "/usr/bin:/bin";
    const char *p = path;
    while (*p && !found[0]) {
        const char *q = strchr(p, ':');
        size_t n = q ? (size_t)(q - p) : strlen(p);
        char cand[1024];
        snprintf(cand, sizeof cand, "%.*s/%s", (int)n, p, name);
        if (access(cand, X_OK) == 0) snprintf(found, 1024, "%s", cand);
        p = q ? q + 1 : p + n;
    }
}

/* Finds the compiler ($BRAID_CC or cc on PATH) and its identity (real
 * path, size, mtime, and the CPU model, since -march=native code is
 * machine specific). Returns 0 when a compiler is available. */
int jit_prepare(CgContext *c)
{
    if (c->cc_ok) return 0;
    if (c->cc[0]) return -1;      /* looked before, none found */
    const char *name = getenv("BRAID_CC");
    if (!name || !*name) name = "cc";
    char found[1024];
    path_find(name, found);
    /* the watchdog every compile runs under (spawn_compile) */
    path_find("timeout", c->wd);
    snprintf(c->cc, sizeof c->cc, "%s", found[0] ? found : "-");
    if (!found[0]) {
        /* fusion off without a word would look like a slow braid */
        static int warned;
        if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
            fprintf(stderr, "braid: warning: no C compiler ('%s' not found%s; set BRAID_CC): operator fusion is "
                    "off, every operator runs unfused\n", name, strchr(name, '/') ? "" : " on PATH");
        return -1;
    }
    char real[1024];
    struct stat st;
    if (!realpath(found, real) || stat(real, &st)) return -1;
    /* -march=native: the CPU's model and its feature flags (a virtual
     * machine may show a model without all its instructions), so a cache
     * folder shared by machines never hands one another's kernels */
    char cpu[128] = "";
    uint64_t h = 7;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[4096];
        bool model = false, flags = false;
        while ((!model || !flags) && fgets(line, sizeof line, f)) {
            char *v = strchr(line, ':');
            if (!v) continue;
            if (!model && !strncmp(line, "model name", 10)) {
                snprintf(cpu, sizeof cpu, "%s", v + 1);
                model = true;
            } else if (!flags && !strncmp(line, "flags", 5)) {
                h = cg_hash_bytes(v + 1, strlen(v + 1), h);
                flags = true;
            }
        }
        fclose(f);
    }
    h = cg_hash_bytes(cpu, strlen(cpu), h);
    snprintf(c->ccid, sizeof c->ccid, "%s:%lld:%lld:%016llx", real, (long long)st.st_size,
             (long long)st.st_mtime, (unsigned long long)h);
    c->cc_ok = true;
    return 0;
}

/* Cache key of an operator's source: 128 bits over source, compiler
 * identity, flags and the bundle ABI. */
static void cache_key(const CgContext *c, const char *src, char key[33])
{
    StrBuf b = {0};
    sb_puts(&b, c->ccid);
    for (int i = 0; i < NFLAGS; i++) { sb_puts(&b, " "); sb_puts(&b, CFLAGS_JIT[i]); }
    sb_puts(&b, " " BUNDLE_ABI "\n");
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

/* Publishes path by rename from the temporary tmp (a name of the cache
 * folder): tmp gets data[0..n) or, when from is set, becomes a hard link
 * of from. tmp is in the signal cleanup's table (base.h br_sig_path_add)
 * from before it exists until it is renamed or removed, so a SIGTERM
 * between the two steps leaves no tmp.* behind. False (tmp removed)
 * when a step failed. */
static bool publish_file(const char *tmp, const char *path, const char *data, size_t n, const char *from)
{
    int sig = br_sig_path_add(tmp, false);
    br_sig_hold();
    bool ok = (from ? link(from, tmp) : write_file(tmp, data, n)) == 0;
    br_sig_release();
    ok = ok && rename(tmp, path) == 0;
    if (!ok) unlink(tmp);
    br_sig_path_del(sig);
    return ok;
}

/* The CRC tables of POSIX cksum (polynomial 0x04C11DB7, most significant
 * bit first): crc_tab[0] the byte-at-a-time table, crc_tab[k][b] the CRC
 * of byte b followed by k zero bytes (slicing by 8). */
static uint32_t crc_tab[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i << 24;
        for (int k = 0; k < 8; k++) c = c & 0x80000000u ? (c << 1) ^ 0x04C11DB7u : c << 1;
        crc_tab[0][i] = c;
    }
    for (int k = 1; k < 8; k++)
        for (int i = 0; i < 256; i++)
            crc_tab[k][i] = (crc_tab[k - 1][i] << 8) ^ crc_tab[0][crc_tab[k - 1][i] >> 24];
}

/* The checksum `cksum < file` prints for the n bytes at p: the CRC over
 * the bytes and then the length's bytes (least significant first, as
 * many as it has), inverted. What the compile's shell records for an
 * object it publishes. Eight bytes a step (a byte a step, each waiting
 * on the table load of the one before, took ~2 ns a byte: 4.5 ms of a
 * MLogreg process's 10 ms of operator loads). */
uint32_t cg_posix_cksum(const unsigned char *p, size_t n)
{
    pthread_once(&crc_once, crc_init);
    uint32_t crc = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint32_t a = crc ^ ((uint32_t)p[i] << 24 | (uint32_t)p[i + 1] << 16 | (uint32_t)p[i + 2] << 8 | p[i + 3]);
        crc = crc_tab[7][a >> 24] ^ crc_tab[6][(a >> 16) & 0xff] ^ crc_tab[5][(a >> 8) & 0xff] ^ crc_tab[4][a & 0xff] ^
              crc_tab[3][p[i + 4]] ^ crc_tab[2][p[i + 5]] ^ crc_tab[1][p[i + 6]] ^ crc_tab[0][p[i + 7]];
    }
    for (; i < n; i++) crc = (crc << 8) ^ crc_tab[0][(crc >> 24) ^ p[i]];
    for (size_t len = n; len; len >>= 8) crc = (crc << 8) ^ crc_tab[0][(crc >> 24) ^ (len & 0xff)];
    return ~crc;
}

/* An object file's contents and braid's own 64-bit hash of them. */
typedef struct ObjSum {
    uint64_t h;
    char *buf;
    size_t size;
} ObjSum;

/* Reads the regular file open at fd (owned by the user, not writable by
 * others) into h (its buf freed by the caller); false when it is not
 * such a file. */
static bool hash_fd(int fd, ObjSum *h)
{
    struct stat st;
    h->buf = NULL;
    if (fstat(fd, &st) || !cache_file_ok(&st) || st.st_size <= 0 || st.st_size > ((off_t)1 << 30))
        return false;
    char *buf = malloc((size_t)st.st_size);
    if (!buf) return false;
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t k = pread(fd, buf + got, (size_t)st.st_size - got, (off_t)got);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        got += (size_t)k;
    }
    if (got != (size_t)st.st_size) { free(buf); return false; }
    h->h = cg_hash_bytes(buf, got, 0x243f6a8885a308d3ULL);
    h->buf = buf;
    h->size = got;
    return true;
}

/* <so>.sum: the hash of the object as its compile produced it, which
 * must match h: braid's own hash (publish), or the cksum line the shell
 * that finished a detached compile wrote (detach). */
static bool so_sum(const char *so, const ObjSum *h)
{
    char path[1300], text[32];
    snprintf(path, sizeof path, "%s.sum", so);
    snprintf(text, sizeof text, "%016llx\n", (unsigned long long)h->h);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return false;
    char got[48] = "";
    struct stat st;
    ssize_t n = !fstat(fd, &st) && cache_file_ok(&st) ? read(fd, got, sizeof got - 1) : -1;
    close(fd);
    if (n == 17 && !memcmp(got, text, 17)) return true;
    if (n <= 0) return false;
    char cks[48];
    snprintf(cks, sizeof cks, "%lu %zu\n", (unsigned long)cg_posix_cksum((const unsigned char *)h->buf, h->size),
             h->size);
    return (size_t)n == strlen(cks) && !memcmp(got, cks, (size_t)n);
}

/* Does the n bytes at p hold a whole ELF object of this machine's class:
 * its header, program and section header tables and loaded segments
 * inside the file? (A linker killed mid-write leaves a shorter or holed
 * file; GNU ld writes the ELF header last. A detached compile's object is
 * published without its compiler's status, detach.) */
static bool elf_whole(const unsigned char *p, size_t n)
{
    typedef ElfW(Ehdr) Eh;
    typedef ElfW(Phdr) Ph;
    Eh eh;
    if (n < sizeof eh) return false;
    memcpy(&eh, p, sizeof eh);
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32))
        return false;
    if (eh.e_phentsize != sizeof(Ph) || eh.e_phoff > n || (n - eh.e_phoff) / sizeof(Ph) < eh.e_phnum) return false;
    if (eh.e_shoff > n || (eh.e_shentsize && (n - eh.e_shoff) / eh.e_shentsize < eh.e_shnum)) return false;
    for (int i = 0; i < eh.e_phnum; i++) {
        Ph ph;
        memcpy(&ph, p + eh.e_phoff + (size_t)i * sizeof ph, sizeof ph);
        if (ph.p_type == PT_LOAD && (ph.p_offset > n || n - ph.p_offset < ph.p_filesz)) return false;
    }
    return true;
}

/* Loads the object at path and binds the functions of op (cache key
 * key: the suffix of its symbols). A library's constructors run at
 * dlopen, before any check of ours could: so the object is opened (no
 * symbolic link), hashed and checked to be a whole ELF object first, and
 * a cached object (sum == 0) loads only if the hash matches the one its
 * compile recorded; sum == 1 (a fresh compile braid published) only if it
 * is want, sum == 2 (braid's own compile, not published) without either.
 * dlopen takes the path (glibc matches loaded objects by name, so a
 * /proc/self/fd name would alias), checked to be the hashed file still. */
static bool load(CgOp *op, const char *key, const char *path, int sum, uint64_t want)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return false;
    ObjSum hv;
    struct stat a, b;
    bool ok = hash_fd(fd, &hv) && elf_whole((const unsigned char *)hv.buf, hv.size) &&
              (sum == 2 || (sum == 1 ? hv.h == want : so_sum(path, &hv))) && !fstat(fd, &a) && !lstat(path, &b) &&
              a.st_dev == b.st_dev && a.st_ino == b.st_ino;
    free(hv.buf);
    void *dl = ok ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
    close(fd);
    if (!dl) return false;
    char sym[96];
    snprintf(sym, sizeof sym, "cg_hash_%s", key);
    const unsigned long long *h = dlsym(dl, sym);
    if (!h || *h != (unsigned long long)op->plan->hash) { dlclose(dl); return false; }
    static const char *names[T__N][CG_NFN] = {
        [T_CELL] = {"cg_dense", "cg_sparse", "cg_flat", "cg_fullagg", "cg_sparseagg", "cg_flatnz", "cg_densenz"},
        [T_MAGG] = {"cg_dense", "cg_sparse", "cg_flat", "cg_fullagg", "cg_sparseagg", NULL, NULL},
        [T_ROW] = {"cg_dense", "cg_sparse", NULL, "cg_tmp", NULL, NULL, NULL},
        [T_OUTER] = {"cg_row", "cg_col", NULL, NULL, NULL, NULL, NULL},
    };
    if (op->amulet) {
        snprintf(sym, sizeof sym, "cg_amulet_%s", key);
        op->fn[0] = dlsym(dl, sym);
        if (!op->fn[0]) { dlclose(dl); return false; }
        snprintf(sym, sizeof sym, "cg_amulet_pk_%s", key);   /* the pack function, if any */
        op->fn[2] = dlsym(dl, sym);
        op->dl = dl;
        __atomic_store_n(&op->ready, 1, __ATOMIC_RELEASE);
        return true;
    }
    for (int i = 0; i < CG_NFN; i++) {
        const char *nm = names[op->plan->tpl][i];
        op->fn[i] = NULL;
        if (!nm) continue;
        snprintf(sym, sizeof sym, "%s_%s", nm, key);
        op->fn[i] = dlsym(dl, sym);
    }
    ok = op->plan->tpl == T_OUTER ? (op->fn[0] || op->fn[1]) : op->fn[0] != NULL;
    if (op->plan->tpl == T_ROW && !op->fn[3]) ok = false;
    if (!ok) { dlclose(dl); return false; }
    op->dl = dl;
    __atomic_store_n(&op->ready, 1, __ATOMIC_RELEASE);
    return true;
}

static bool ident_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
}

/* Does identifier id (length n) occur as a whole token in text? */
static bool has_token(const char *text, const char *id, size_t n)
{
    for (const char *p = strstr(text, "cg_"); p; p = strstr(p + 1, "cg_")) {
        if (p > text && ident_char(p[-1])) continue;
        if (!strncmp(p, id, n) && !ident_char(p[n])) return true;
    }
    return false;
}

/* Appends op's functions to bundle b: every cg_ identifier of its body
 * that the prelude does not define (and always the exported entry
 * points) is renamed to <name>_<key> by macros around the body. The body
 * is the source after the shared prelude, or the whole source when
 * shared is false. */
static void bundle_add(StrBuf *b, const CgOp *op, const char *key, bool shared)
{
    static const char *entry[] = {"cg_hash", "cg_dense", "cg_sparse", "cg_flat", "cg_flatnz", "cg_densenz", "cg_fullagg", "cg_sparseagg",
                                 "cg_tmp", "cg_row", "cg_col", "cg_amulet"};
    const char *body = op->src + (shared ? strlen(cg_prelude) : 0);
    StrBuf undef = {0};
    int ne = (int)(sizeof entry / sizeof *entry);
    for (int i = 0; i < ne; i++) {
        sb_printf(b, "#define %s %s_%s\n", entry[i], entry[i], key);
        sb_printf(&undef, "#undef %s\n", entry[i]);
    }
    for (const char *p = strstr(body, "cg_"); p; p = strstr(p + 1, "cg_")) {
        if (p > body && ident_char(p[-1])) continue;
        size_t n = 3;
        while (ident_char(p[n])) n++;
        if (n > 64) continue;
        char id[72];
        snprintf(id, sizeof id, "%.*s", (int)n, p);
        bool known = false;
        for (int i = 0; i < ne && !known; i++) known = !strcmp(id, entry[i]);
        if (known || has_token(cg_prelude, id, n) || (undef.s && has_token(undef.s, id, n))) continue;
        sb_printf(b, "#define %s %s_%s\n", id, id, key);
        sb_printf(&undef, "#undef %s\n", id);
    }
    sb_puts(b, body);
    sb_puts(b, "\n");
    if (undef.s) sb_puts(b, undef.s);
    free(undef.s);
}

/* A compiler process: one bundle of operators. */
typedef struct Job {
    int *idx;              /* operators (indices into the batch's list) */
    int n;
    pid_t pid;             /* the compiler, leader of its own process session */
    int pfd;               /* a pidfd of it (wait_any), -1 if none */
    int efd;               /* read end of its end pipe (spawn_session; the finisher's input), -1 if none */
    bool running, timed_out;
    int64_t t0;            /* start (br_now_ns) */
    char src[1200], tmpobj[1200];
    char tmpd[1200];       /* the compiler's TMPDIR (its .s/.o/.res temporaries) */
    int sig[3];            /* src, tmpobj, tmpd in the signal cleanup (sig_add) */
} Job;

/* The operators of one batch that need compiling. */
typedef struct Batch {
    CgContext *c;
    CgOp **op;
    char (*key)[33];
    int n;
    bool disk;             /* publish into the disk cache */
    Job *jobs;
    int nj, capj;
} Batch;

static bool add_job(Batch *bt, const int *idx, int n)
{
    if (bt->nj == bt->capj) {
        int nc = bt->capj ? bt->capj * 2 : 8;
        Job *nj = br_realloc(bt->jobs, (size_t)nc * sizeof *nj);
        if (!nj) return false;
        bt->jobs = nj;
        bt->capj = nc;
    }
    Job *j = &bt->jobs[bt->nj];
    memset(j, 0, sizeof *j);
    j->pfd = j->efd = -1;
    j->idx = br_malloc((size_t)BR_MAX(n, 1) * sizeof *j->idx);
    if (!j->idx) return false;
    memcpy(j->idx, idx, (size_t)n * sizeof *idx);
    j->n = n;
    bt->nj++;
    return true;
}

/* Appends str to b in single quotes for /bin/sh. */
static void sq(StrBuf *b, const char *str)
{
    sb_puts(b, " '");
    for (const char *p = str; *p; p++) {
        if (*p == '\'') sb_puts(b, "'\\''");
        else { char ch[2] = {*p, 0}; sb_puts(b, ch); }
    }
    sb_puts(b, "'");
}

static int64_t cc_timeout_ns(void);

/* A compile's temporaries (its files src and obj, src may be NULL, and
 * its TMPDIR folder tmpd) into the paths a SIGTERM/SIGINT removes
 * (base.h br_sig_path_add) while they are braid's or its finishing
 * shell's: a fatal signal kills the compile and its shell, so no one
 * else would remove them (the hourly collector did). sig[3] gets the
 * slots (0: not registered, the table full); sig_del drops them once the
 * files are gone or published. */
static void sig_add(int sig[3], const char *src, const char *obj, const char *tmpd)
{
    sig[0] = src ? br_sig_path_add(src, false) : 0;
    sig[1] = br_sig_path_add(obj, false);
    sig[2] = br_sig_path_add(tmpd, true);
}

static void sig_del(int sig[3])
{
    for (int i = 0; i < 3; i++) br_sig_path_del(sig[i]);
    sig[0] = sig[1] = sig[2] = 0;
}

/* Starts the program at path (argv, environment envp) with output to
 * /dev/null, input from fd in (-1: /dev/null) and no descriptor of
 * braid's beyond those and, if end is not NULL, the write end of a fresh
 * pipe as its descriptor 3 (its read end, close-on-exec, to *end; -1 if
 * none could be made): every process of the compile inherits it, so the
 * pipe reads end of file at once when the last of them has ended, which
 * a finishing shell waits for (finisher). It is the leader of its own
 * process session: a timeout or the end of braid's context ends it and
 * its children together (kill_group), and a compile left to finish after
 * braid has exited (detach) belongs to no terminal or job of braid's
 * caller. */
/* waitpid for a session spawn_session started: once it has ended, it
 * leaves the groups a fatal signal kills (base.h) before it is reaped, so
 * that id is never another process's. */
static pid_t reap_cpu(pid_t pid, int *status, int flags, int64_t *cpu_ns)
{
    siginfo_t si;
    si.si_pid = 0;
    if (pid > 0 && waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT | (flags & WNOHANG)) == 0 && si.si_pid == pid)
        br_sig_group_del(pid);
    struct rusage ru;
    pid_t r = wait4(pid, status, flags, &ru);
    /* the compiler's CPU time with its own children's (cc1, as, ld) */
    if (r == pid && pid > 0 && cpu_ns)
        __atomic_add_fetch(cpu_ns,
                           (int64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
                               (int64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000,
                           __ATOMIC_RELAXED);
    return r;
}

static pid_t reap(pid_t pid, int *status, int flags)
{
    return reap_cpu(pid, status, flags, NULL);
}

static int spawn_session(const char *path, char **argv, char **envp, int in, int *end, pid_t *pid)
{
    int pp[2] = {-1, -1};
    if (end) {
        *end = -1;
        if (pipe2(pp, O_CLOEXEC) == 0) {
            /* above 3, so that no action below clobbers them */
            for (int k = 0; k < 2; k++) {
                int hi = pp[k] > 3 ? pp[k] : fcntl(pp[k], F_DUPFD_CLOEXEC, 4);
                if (hi != pp[k]) close(pp[k]);
                pp[k] = hi;
            }
            if (pp[0] < 0 || pp[1] < 0) {
                for (int k = 0; k < 2; k++) if (pp[k] >= 0) close(pp[k]);
                pp[0] = pp[1] = -1;
            }
        }
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (in >= 0) posix_spawn_file_actions_adddup2(&fa, in, 0);
    else posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    if (pp[1] >= 0) posix_spawn_file_actions_adddup2(&fa, pp[1], 3);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    posix_spawn_file_actions_addclosefrom_np(&fa, pp[1] >= 0 ? 4 : 3);
#endif
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
#ifdef POSIX_SPAWN_SETSID
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSID);
#else
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&at, 0);
#endif
    br_sig_hold();   /* a handler never misses the session (base.h) */
    int rc = posix_spawn(pid, path, &fa, &at, argv, envp);
    if (!rc) br_sig_group_add(*pid);   /* SIGTERM/SIGINT kills the session (base.h) */
    br_sig_release();
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    if (pp[1] >= 0) close(pp[1]);
    if (end && !rc) *end = pp[0];
    else if (pp[0] >= 0) close(pp[0]);
    return rc;
}

/* braid's environment with TMPDIR=tmpd (buf holds that entry); NULL when
 * out of memory. The caller frees the array. */
static char **env_tmpdir(const char *tmpd, char buf[1300])
{
    int ne = 0;
    while (environ[ne]) ne++;
    char **env = br_malloc((size_t)(ne + 2) * sizeof *env);
    if (!env) return NULL;
    snprintf(buf, 1300, "TMPDIR=%s", tmpd);
    int e = 0;
    for (int i = 0; i < ne; i++)
        if (strncmp(environ[i], "TMPDIR=", 7)) env[e++] = environ[i];
    env[e++] = buf;
    env[e] = NULL;
    return env;
}

/* Seconds past BRAID_CC_TIMEOUT at which a compile's own watchdog
 * (spawn_compile) kills it: after braid's own stop (wait_any, pch_poll)
 * and after a finishing shell's (finisher: the timeout and a second from
 * the start, rounded up), so that a compile that shell sees end was not
 * cut short by the watchdog and is whole. */
#define WD_MARGIN_S 5

/* Starts a compile: the compiler c->cc (argv[0]) with argv, environment
 * env, in its own session (spawn_session; end: its end pipe, NULL none)
 * under `timeout -s KILL S` (c->wd) as that session's leader, *pid,
 * with S = BRAID_CC_TIMEOUT + WD_MARGIN_S rounded up: a watchdog of its
 * own, so a compile outliving braid (killed, SIGKILL or SIGTERM, with no
 * context end: no finishing shell) is killed with its whole process
 * group at S, leaving only its tmp.* files (the collector's). timeout
 * exits with the compiler's status; its group is the compile's, which
 * kill_group and the finishing shell end as before. Without `timeout` on
 * PATH the compiler is the leader itself, bounded only by braid. */
static int spawn_compile(const CgContext *c, char **argv, char **env, int *end, pid_t *pid)
{
    if (!c->wd[0]) return spawn_session(c->cc, argv, env, -1, end, pid);
    int n = 0;
    while (argv[n]) n++;
    char **wa = br_malloc((size_t)(n + 5) * sizeof *wa);
    if (!wa) return ENOMEM;
    char secs[32];
    snprintf(secs, sizeof secs, "%lld", (long long)((cc_timeout_ns() + 999999999) / 1000000000 + WD_MARGIN_S));
    wa[0] = (char *)c->wd;
    wa[1] = "-s";
    wa[2] = "KILL";
    wa[3] = secs;
    memcpy(wa + 4, argv, (size_t)(n + 1) * sizeof *wa);
    int rc = spawn_session(c->wd, wa, env, -1, end, pid);
    free(wa);
    return rc;
}

/* Starts the shell that finishes a compile left running past its context
 * (compiler pid g, leader of its session, started at t0; its TMPDIR tmpd,
 * its source src (NULL: none to remove) and output obj), in a session of
 * its own, reading end, the compile's end pipe (spawn_session): it waits
 * for end of file there, the end of the compile's last process (no
 * polling: it publishes at once), within BRAID_CC_TIMEOUT and a second of
 * t0 (`timeout`); past that, a compile whose processes still run is
 * killed with its files. When the compile has ended, if obj is there
 * (the compiler removes its output when a step fails: gcc's %W{o*}) and
 * the shell condition cond holds, it runs pub (commands that publish
 * "$O"), then removes tmpd, src and obj. *fin: the shell. */
static bool finisher(pid_t g, int64_t t0, const char *tmpd, const char *src, const char *obj, int end,
                     const char *cond, const char *pub, pid_t *fin)
{
    if (end < 0) return false;
    int64_t left = cc_timeout_ns() - (br_now_ns() - t0);
    long long secs = left > 0 ? (left + 999999999) / 1000000000 + 1 : 1;
    StrBuf cmd = {0};
    sb_printf(&cmd,
              "G=$1 D=$2 C=$3 O=$4; if timeout %lld cat >/dev/null || ! kill -0 -$G; then "
              "if [ -s \"$O\" ]%s; then :%s; fi; else kill -9 -$G; fi; rm -rf \"$D\"; "
              "if [ -n \"$C\" ] || [ -e \"$O\" ]; then rm -f ${C:+\"$C\"} \"$O\"; fi",
              secs, cond, pub);
    if (!cmd.s) return false;
    char gs[24];
    snprintf(gs, sizeof gs, "%d", (int)g);
    char *argv[] = {"/bin/sh", "-c", cmd.s, "sh", gs, (char *)tmpd, (char *)(src ? src : ""), (char *)obj, NULL};
    int rc = spawn_session("/bin/sh", argv, environ, end, NULL, fin);
    free(cmd.s);
    return rc == 0;
}

/* Compiles left to finish after their context ended: the compiler and
 * the shell that finishes its job (detach) are braid's children still,
 * reaped here, so none stays a zombie in a process that runs on (an
 * embedding one). */
typedef struct DetEnt { pid_t cc, fin; int sig[3]; } DetEnt;   /* 0: reaped; the job's sig_add slots */
static pthread_mutex_t det_mu = PTHREAD_MUTEX_INITIALIZER;
static DetEnt det_ent[64];
static int det_n;

/* Reaps what of the detached compiles has ended; returns how many
 * compiles still run. */
static int det_reap(void)
{
    pthread_mutex_lock(&det_mu);
    int k = 0;
    for (int i = 0; i < det_n; i++) {
        DetEnt e = det_ent[i];
        pid_t *pp[2] = {&e.cc, &e.fin};
        for (int q = 0; q < 2; q++) {
            int status;
            pid_t r = *pp[q] ? reap(*pp[q], &status, WNOHANG) : 0;
            if (r == *pp[q] || (r < 0 && errno != EINTR)) *pp[q] = 0;
        }
        if (e.cc || e.fin) det_ent[k++] = e;
        else sig_del(e.sig);   /* the shell removed or published them */
    }
    det_n = k;
    pthread_mutex_unlock(&det_mu);
    return k;
}

/* How many compiles of this process may run on after their contexts
 * ended: twice as many as run at once while braid waits, 2 max(2,
 * br_threads()) (AutoEncoder's cold run at 2 threads leaves 3 batches
 * unfinished: with room for 2, a third of its kernels waited for the
 * second run). */
static int det_max(void)
{
    int par = br_threads() > 2 ? br_threads() : 2;
    return BR_MIN(2 * par, (int)(sizeof det_ent / sizeof *det_ent));
}

/* Records a detached compile (compiler cc, finishing shell fin, its
 * temporaries' signal slots sig, moved to the entry) for reaping; false
 * when there is no room (the caller kills both). */
static bool det_add(pid_t cc, pid_t fin, int sig[3])
{
    pthread_mutex_lock(&det_mu);
    bool ok = det_n < det_max();
    if (ok) {
        det_ent[det_n++] = (DetEnt){cc, fin, {sig[0], sig[1], sig[2]}};
        sig[0] = sig[1] = sig[2] = 0;
    }
    pthread_mutex_unlock(&det_mu);
    return ok;
}

/* Kills the process group of pid and reaps pid. */
static void kill_group(pid_t pid)
{
    kill(-pid, SIGKILL);
    int status;
    while (reap(pid, &status, 0) < 0 && errno == EINTR) {}
}

/* The precompiled prelude (process-wide state): the prelude's headers
 * cost a compiler process ~25 ms, a PCH of them ~10 ms. <cachedir>/
 * prelude-<hash>.h (the prelude's text) and its .gch, hash over compiler
 * identity, flags and text, are built once per cache directory in the
 * background, started with the first bundle; bundles include it when it
 * is ready, with the prelude inline before (gcc falls back to the text
 * itself if it cannot use the .gch, so the generated code is the same
 * either way). The build is a compile like a bundle's (pch_start): the
 * compiler alone, in its own session, its temporaries in a folder of the
 * build; braid does the file work when it ends (pch_poll: from pch_get,
 * from wait_any, which also sleeps on its pidfd, and at the context's
 * end) and stops it after BRAID_CC_TIMEOUT. Still running when its
 * context ends, it is handed to a finishing shell (pch_detach, finisher)
 * that publishes the .gch, or killed when the folder is the context's
 * private temporary one. (AMULET kernels need no intrinsics header:
 * cg_prelude_vec, prims.c.) */
typedef struct Pch {
    const char *text;      /* the header's text (NULL: not made yet) */
    char dir[1024], name[64];
    /* 0 not tried, 1 building (braid reaps it), 2 ready, 3 building
     * detached (its finishing shell publishes), -1 unusable */
    int state;
    pid_t pid;             /* the compiler (states 1, 3; 0 once reaped) */
    pid_t fin;             /* its finishing shell (state 3) */
    int pfd, efd;          /* its pidfd (wait_any) and end pipe (finisher); -1 if none */
    int64_t t0;
    char tmp[1200], gch[1200];
    char tmpd[1200];       /* the compiler's TMPDIR (as a job's, start) */
    int sig[3];            /* tmp and tmpd in the signal cleanup (sig_add) */
} Pch;
static pthread_mutex_t pch_mu = PTHREAD_MUTEX_INITIALIZER;
static Pch pch = {.pfd = -1, .efd = -1};

static void pch_fds_close(Pch *p)
{
    if (p->pfd >= 0) close(p->pfd);
    if (p->efd >= 0) close(p->efd);
    p->pfd = p->efd = -1;
}

/* Ends a running prelude build (its context ends, or it ran over the
 * timeout); the next context builds it again. pch_mu held. */
static void pch_kill(Pch *p, int state)
{
    if (p->state != 1) return;
    pch_fds_close(p);
    kill_group(p->pid);
    unlink(p->tmp);
    cg_rmdir_flat(p->tmpd);
    sig_del(p->sig);
    p->state = state;
}

/* Reaps the prelude build if it has ended: braid's own (state 1) is
 * published by rename when its compiler succeeded (else its files go),
 * or stopped once past BRAID_CC_TIMEOUT; a detached one (state 3), once
 * its finishing shell has ended, is looked for again (state 0). pch_mu
 * held. */
static void pch_poll(Pch *p, CgContext *c)
{
    int status = 0;
    if (p->state == 1) {
        pid_t r = reap_cpu(p->pid, &status, WNOHANG, c ? &c->st.cc_pch_cpu_ns : NULL);
        if (r == p->pid || (r < 0 && errno != EINTR)) {
            pch_fds_close(p);
            cg_rmdir_flat(p->tmpd);
            struct stat st;
            bool ok = r == p->pid && WIFEXITED(status) && WEXITSTATUS(status) == 0 && !lstat(p->tmp, &st) &&
                      S_ISREG(st.st_mode) && st.st_size > 0 && !rename(p->tmp, p->gch);
            if (!ok) unlink(p->tmp);
            sig_del(p->sig);
            p->state = ok ? 2 : -1;
        } else if (br_now_ns() - p->t0 > cc_timeout_ns()) {
            pch_kill(p, -1);
        }
    } else if (p->state == 3) {
        pid_t r = p->pid ? reap(p->pid, &status, WNOHANG) : 0;
        if (r == p->pid || (r < 0 && errno == ECHILD)) p->pid = 0;
        r = reap(p->fin, &status, WNOHANG);
        if (r == p->fin || (r < 0 && errno != EINTR)) {
            /* the compile ended or was stopped first (a compiler still
             * there: its shell was killed from outside) */
            if (p->pid) kill_group(p->pid);
            sig_del(p->sig);   /* the shell removed or published them */
            p->pid = 0;
            p->state = 0;
        }
    }
}

/* Hands the running prelude build (state 1) to a finishing shell that
 * publishes its .gch by rename (finisher); kills it if none starts.
 * pch_mu held. */
static void pch_detach(Pch *p)
{
    StrBuf pub = {0};
    sb_puts(&pub, "; mv -f \"$O\"");
    sq(&pub, p->gch);
    bool ok = pub.s && finisher(p->pid, p->t0, p->tmpd, NULL, p->tmp, p->efd, "", pub.s, &p->fin);
    free(pub.s);
    if (!ok) { pch_kill(p, 0); return; }
    pch_fds_close(p);
    p->state = 3;
}

/* Starts building the precompiled prelude header hdr into the .gch
 * p->gch (state 1 if started), as start does a bundle's compile. pch_mu
 * held. */
static void pch_start(CgContext *c, Pch *p, const char *hdr)
{
    char *argv[NFLAGS + 6];
    int a = 0;
    argv[a++] = c->cc;
    for (int i = 0; i < NFLAGS; i++)
        if (strcmp(CFLAGS_JIT[i], "-shared")) argv[a++] = (char *)CFLAGS_JIT[i];
    argv[a++] = "-x";
    argv[a++] = "c-header";
    argv[a++] = (char *)hdr;
    argv[a++] = "-o";
    argv[a++] = p->tmp;
    argv[a] = NULL;
    char tmpdir[1300];
    sig_add(p->sig, NULL, p->tmp, p->tmpd);
    br_sig_hold();
    int md = mkdir(p->tmpd, 0700);
    br_sig_release();
    char **env = md ? NULL : env_tmpdir(p->tmpd, tmpdir);
    int rc = env ? spawn_compile(c, argv, env, &p->efd, &p->pid) : -1;
    free(env);
    if (rc) { cg_rmdir_flat(p->tmpd); sig_del(p->sig); return; }
#ifdef SYS_pidfd_open
    p->pfd = (int)syscall(SYS_pidfd_open, p->pid, 0);   /* close-on-exec */
#else
    p->pfd = -1;
#endif
    p->state = 1;
    p->t0 = br_now_ns();
}

static bool same_text(const char *path, const char *text)
{
    struct stat st;
    if (stat(path, &st) || !S_ISREG(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 022)) return false;
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    size_t n = strlen(text);
    char *buf = malloc(n + 2);
    bool ok = buf && fread(buf, 1, n + 1, f) == n && memcmp(buf, text, n) == 0;
    free(buf);
    fclose(f);
    return ok;
}

/* Copies the name of the usable precompiled prelude of c's cache
 * directory to name and returns true; false when there is none yet
 * (starts building it then, unless c is ending). */
static bool pch_get(CgContext *c, char name[64])
{
    bool res = false;
    Pch *p = &pch;
    pthread_mutex_lock(&pch_mu);
    if (!p->text) {
        StrBuf t = {0};
        sb_puts(&t, cg_prelude);
        p->text = t.s;
        if (!p->text) { pthread_mutex_unlock(&pch_mu); return false; }
    }
    pch_poll(p, c);
    if (strcmp(p->dir, c->cachedir)) {
        /* another directory's build running */
        if (p->state == 1 || p->state == 3) { pthread_mutex_unlock(&pch_mu); return false; }
        snprintf(p->dir, sizeof p->dir, "%s", c->cachedir);
        p->state = 0;
    }
    if (p->state == 2) {
        /* ready once, maybe in an earlier context (a build left running
         * at its end): still there? (the folder may have been emptied) */
        struct stat st;
        char f[1200];
        snprintf(f, sizeof f, "%s/%.63s", c->cachedir, p->name);
        bool ok = stat(f, &st) == 0 && S_ISREG(st.st_mode);
        snprintf(f, sizeof f, "%s/%.63s.gch", c->cachedir, p->name);
        if (!ok || stat(f, &st) != 0 || !S_ISREG(st.st_mode)) p->state = 0;
    }
    if (p->state == 0) {
        StrBuf b = {0};
        sb_puts(&b, c->ccid);
        for (int i = 0; i < NFLAGS; i++) { sb_puts(&b, " "); sb_puts(&b, CFLAGS_JIT[i]); }
        sb_puts(&b, "\n");
        sb_puts(&b, p->text);
        uint64_t h = b.s ? cg_hash_bytes(b.s, b.n, 0x243f6a8885a308d3ULL) : 0;
        free(b.s);
        snprintf(p->name, sizeof p->name, "prelude-%016llx.h", (unsigned long long)h);
    }
    char hdr[1200];
    snprintf(hdr, sizeof hdr, "%s/%.63s", c->cachedir, p->name);
    snprintf(p->gch, sizeof p->gch, "%s/%.63s.gch", c->cachedir, p->name);
    if (p->state == 0) {
        struct stat st;
        p->state = -1;
        if (!c->disk_ok) {
            /* a private temporary directory: not worth it */
        } else if (same_text(hdr, p->text) && stat(p->gch, &st) == 0 && S_ISREG(st.st_mode) &&
                   st.st_uid == getuid() && !(st.st_mode & 022)) {
            utimes(p->gch, NULL);   /* in use: kept by the collector */
            p->state = 2;
        } else {
            /* the header first (deterministic text), then the .gch; the
             * compiler's temporaries go to a folder of the build, as a
             * job's */
            unsigned seq = __atomic_fetch_add(&seq_ctr, 1, __ATOMIC_RELAXED);
            char tmp[1200];
            snprintf(tmp, sizeof tmp, "%s/tmp.%d.%u.prelude.h", c->cachedir, (int)getpid(), seq);
            snprintf(p->tmp, sizeof p->tmp, "%s/tmp.%d.%u.prelude.gch", c->cachedir, (int)getpid(), seq);
            snprintf(p->tmpd, sizeof p->tmpd, "%s/tmp.%d.%u.prelude.d", c->cachedir, (int)getpid(), seq);
            if (publish_file(tmp, hdr, p->text, strlen(p->text), NULL)) pch_start(c, p, hdr);
            /* started by a context that is ending (its bundles start
             * detached): detached at once, as jit_stop does (which sets
             * stopping before it takes pch_mu, so one of the two does) */
            if (p->state == 1 && __atomic_load_n(&c->stopping, __ATOMIC_ACQUIRE)) pch_detach(p);
        }
    }
    if (p->state == 2) {
        snprintf(name, 64, "%.63s", p->name);
        res = true;
    }
    pthread_mutex_unlock(&pch_mu);
    return res;
}

/* For a thread that waits for compiles (wait_any): reaps the prelude
 * build if it has ended (pch_poll) and returns a descriptor of its
 * pidfd while braid still waits for it (the caller closes it), else -1. */
static int pch_watch(CgContext *c)
{
    pthread_mutex_lock(&pch_mu);
    pch_poll(&pch, c);
    int fd = pch.state == 1 && pch.pfd >= 0 ? fcntl(pch.pfd, F_DUPFD_CLOEXEC, 0) : -1;
    pthread_mutex_unlock(&pch_mu);
    return fd;
}

/* Writes the bundle source of job j and starts the compiler on it: one
 * process, the compiler itself, in its own session (spawn_session), its
 * temporaries in a folder of the job (TMPDIR), so a compiler killed
 * (timeout, end of braid) never leaves them in /tmp. The operators'
 * <key>.c are published before (disk batches); their objects when the
 * compile has ended: by braid (finish) or, for a compile left running
 * past its context, by the shell that finishes it (detach). */
static bool start(Batch *bt, Job *j)
{
    CgContext *c = bt->c;
    unsigned seq = __atomic_fetch_add(&seq_ctr, 1, __ATOMIC_RELAXED);
    const char *k0 = bt->key[j->idx[0]];
    snprintf(j->src, sizeof j->src, "%s/tmp.%d.%u.%s.c", c->cachedir, (int)getpid(), seq, k0);
    snprintf(j->tmpobj, sizeof j->tmpobj, "%s/tmp.%d.%u.%s.so", c->cachedir, (int)getpid(), seq, k0);
    snprintf(j->tmpd, sizeof j->tmpd, "%s/tmp.%d.%u.d", c->cachedir, (int)getpid(), seq);
    /* the prelude once when every operator starts with it */
    size_t pl = strlen(cg_prelude);
    bool shared = true, am = true;   /* (am: below) */
    for (int i = 0; i < j->n; i++) {
        const CgOp *op = bt->op[j->idx[i]];
        shared = shared && !strncmp(op->src, cg_prelude, pl);
        am = am && op->amulet;
    }
    if (!shared && j->n > 1) return false;
    sig_add(j->sig, j->src, j->tmpobj, j->tmpd);
    /* a bundle of AMULET kernels only (arithmetic on doubles, no library
     * calls, no constructors) links without the start files and default
     * libraries: about 12% of a kernel's compiler CPU time (a reference
     * to libc the compiler might emit, memset say, binds to the process's
     * libc at dlopen); and it parses the prelude's text rather than load
     * the precompiled prelude, nor starts that build: the compiler took
     * more CPU time to load the 5 MB image than to parse the 15 KB text
     * (Q1's kernel by hand, 7 rounds alternated: 0.19-0.22 s against
     * 0.16-0.18), and in a fresh cache directory the build (~0.2 s of
     * CPU) doubled a lone kernel's cold cost (docs/amulet.md, Compile
     * time) */
    StrBuf b = {0};
    char pchn[64];
    if (shared && !am && pch_get(c, pchn)) sb_printf(&b, "#include \"%s\"\n", pchn);
    else if (shared) sb_puts(&b, cg_prelude);
    for (int i = 0; i < j->n; i++) bundle_add(&b, bt->op[j->idx[i]], bt->key[j->idx[i]], shared);
    br_sig_hold();
    int wr = b.s ? write_file(j->src, b.s, b.n) : -1;
    wr = wr || mkdir(j->tmpd, 0700);
    br_sig_release();
    free(b.s);
    if (wr) { unlink(j->src); sig_del(j->sig); return false; }
    char *argv[NFLAGS + 6];
    int a = 0;
    argv[a++] = c->cc;
    for (int i = 0; i < NFLAGS; i++) argv[a++] = (char *)CFLAGS_JIT[i];
    if (am) argv[a++] = "-nostdlib";
    argv[a++] = "-o";
    argv[a++] = j->tmpobj;
    argv[a++] = j->src;
    argv[a] = NULL;
    /* braid's environment with TMPDIR the job's folder */
    char tmpdir[1300];
    char **env = env_tmpdir(j->tmpd, tmpdir);
    /* <key>.c first (the source that verifies later loads) */
    for (int i = 0; env && bt->disk && i < j->n; i++) {
        const CgOp *op = bt->op[j->idx[i]];
        const char *key = bt->key[j->idx[i]];
        char tmp[1200], path[1200];
        snprintf(tmp, sizeof tmp, "%s/tmp.%d.%u.%d.%s.c", c->cachedir, (int)getpid(), seq, i, key);
        snprintf(path, sizeof path, "%s/%s.c", c->cachedir, key);
        publish_file(tmp, path, op->src, strlen(op->src), NULL);
    }
    /* an end pipe for a compile that may be left to finish (detach) */
    int rc = env ? spawn_compile(c, argv, env, bt->disk && c->disk_ok ? &j->efd : NULL, &j->pid) : ENOMEM;
    free(env);
    if (rc) { unlink(j->src); cg_rmdir_flat(j->tmpd); sig_del(j->sig); return false; }
#ifdef SYS_pidfd_open
    j->pfd = (int)syscall(SYS_pidfd_open, j->pid, 0);   /* close-on-exec */
#else
    j->pfd = -1;
#endif
    j->running = true;
    j->timed_out = false;
    j->t0 = br_now_ns();
    __atomic_add_fetch(&c->st.cc_runs, 1, __ATOMIC_RELAXED);
    return true;
}

/* Publishes the fresh object obj (braid's hash h) as key's <key>.so of
 * c's cache folder: its sum <key>.so.sum first, then the object, a hard
 * link, each by rename (concurrent processes never see partial files). */
static bool publish(const CgContext *c, const char *key, const char *obj, uint64_t h)
{
    char tmp[1200], path[1200], text[32];
    unsigned seq = __atomic_fetch_add(&seq_ctr, 1, __ATOMIC_RELAXED);
    snprintf(text, sizeof text, "%016llx\n", (unsigned long long)h);
    snprintf(tmp, sizeof tmp, "%s/tmp.%d.%u.%s.sum", c->cachedir, (int)getpid(), seq, key);
    snprintf(path, sizeof path, "%s/%s.so.sum", c->cachedir, key);
    if (!publish_file(tmp, path, text, 17, NULL)) return false;
    snprintf(tmp, sizeof tmp, "%s/tmp.%d.%u.%s.so", c->cachedir, (int)getpid(), seq, key);
    snprintf(path, sizeof path, "%s/%s.so", c->cachedir, key);
    return publish_file(tmp, path, NULL, 0, obj);
}

/* Leaves the running compile of job j (disk batch) to finish after its
 * context, to a shell in its own session (finisher) that waits for the
 * compile's end (the compiler is braid's child, so the shell cannot
 * learn its status) and stops it with its temporaries once
 * BRAID_CC_TIMEOUT and a second have passed since its start. A compile
 * that ended left an object only if it succeeded; the shell then records
 * its POSIX cksum line as each operator's <key>.so.sum (so_sum accepts
 * it) and publishes the links as finish does, and removes the job's
 * files. False (nothing started) when this process already leaves
 * det_max() compiles running. */
static bool detach(Batch *bt, Job *j)
{
    CgContext *c = bt->c;
    if (!bt->disk || !c->disk_ok || j->efd < 0 || det_reap() >= det_max()) return false;
    StrBuf pub = {0};
    for (int i = 0; i < j->n; i++) {
        const char *key = bt->key[j->idx[i]];
        char tmp[1300], path[1200];   /* tmp: in j->tmpd (1200) */
        /* the shell's temporaries in the job's folder, which the signal
         * cleanup removes with its files (sig_add) and the shell after */
        snprintf(tmp, sizeof tmp, "%s/%d.%s.sum", j->tmpd, i, key);
        snprintf(path, sizeof path, "%s/%s.so.sum", c->cachedir, key);
        sb_puts(&pub, "; printf '%s\\n' \"$S\" >");
        sq(&pub, tmp);
        sb_puts(&pub, " && mv -f");
        sq(&pub, tmp);
        sq(&pub, path);
        snprintf(tmp, sizeof tmp, "%s/%d.%s.so", j->tmpd, i, key);
        snprintf(path, sizeof path, "%s/%s.so", c->cachedir, key);
        sb_puts(&pub, "; ln -f \"$O\"");
        sq(&pub, tmp);
        sb_puts(&pub, " && mv -f");
        sq(&pub, tmp);
        sq(&pub, path);
    }
    pid_t fin;
    bool ok = pub.s && finisher(j->pid, j->t0, j->tmpd, j->src, j->tmpobj, j->efd, " && S=$(cksum <\"$O\")", pub.s,
                                &fin);
    free(pub.s);
    if (!ok) return false;
    if (!det_add(j->pid, fin, j->sig)) { kill_group(fin); return false; }
    return true;
}

static void slot_release(void)
{
    pthread_mutex_lock(&slot_mu);
    slots_busy--;
    pthread_cond_broadcast(&slot_cv);
    pthread_mutex_unlock(&slot_mu);
}

/* Closes job j's pidfd (wait_any) and end pipe (detach), if it has them. */
static void pfd_close(Job *j)
{
    if (j->pfd >= 0) close(j->pfd);
    if (j->efd >= 0) close(j->efd);
    j->pfd = j->efd = -1;
}

/* Ends job j's compiler (its process group), reaps it and removes the
 * job's files. */
static void kill_job(Job *j)
{
    pfd_close(j);
    kill_group(j->pid);
    unlink(j->src);
    unlink(j->tmpobj);
    cg_rmdir_flat(j->tmpd);
    sig_del(j->sig);
}

/* Leaves job jk when its context ends (asynchronous mode): a compile
 * into the persistent disk cache runs on detached (detach), publishes
 * its operators for later runs and removes its own files; any other is
 * killed. Its operators stay unusable in this context. */
static void abandon(Batch *bt, int jk)
{
    Job *j = &bt->jobs[jk];
    j->running = false;
    if (!detach(bt, j)) kill_job(j);
    pfd_close(j);   /* detached: braid waits on it no more */
    slot_release();
    for (int i = 0; i < j->n; i++) __atomic_store_n(&bt->op[j->idx[i]]->ready, -1, __ATOMIC_RELEASE);
}

/* Seconds a compile may take ($BRAID_CC_TIMEOUT, default 300): a
 * compiler that never exits must not hang a synchronous run. */
static int64_t cc_timeout_ns(void)
{
    const char *v = getenv("BRAID_CC_TIMEOUT");
    double s = v && *v ? atof(v) : 300;
    return (int64_t)((s > 0 && s < 1e6 ? s : 300) * 1e9);
}

/* Job jk has ended with status: braid does its file work (the compiler's
 * TMPDIR removed; a disk batch's object hashed once and published for
 * each operator, publish) and loads its operators (from the published
 * <key>.so, else the job's object). A failed bundle of several operators
 * is queued again one operator per job. */
static void finish(Batch *bt, int jk, int status)
{
    CgContext *c = bt->c;
    pfd_close(&bt->jobs[jk]);
    Job j = bt->jobs[jk];   /* a copy: add_job may move the jobs */
    bt->jobs[jk].running = false;
    memset(bt->jobs[jk].sig, 0, sizeof j.sig);   /* the copy's (sig_del below) */
    slot_release();
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    /* killed from outside: not retried one by one either */
    if (WIFSIGNALED(status)) j.timed_out = true;
    cg_rmdir_flat(j.tmpd);
    if (!ok && j.n > 1 && !j.timed_out) {
        for (int i = 0; i < j.n; i++)
            if (!add_job(bt, &j.idx[i], 1)) __atomic_store_n(&bt->op[j.idx[i]]->ready, -1, __ATOMIC_RELEASE);
    } else {
        ObjSum hv = {0};
        bool hashed = false;
        if (ok && bt->disk) {
            int fd = open(j.tmpobj, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
            hashed = fd >= 0 && hash_fd(fd, &hv);
            free(hv.buf);
            if (fd >= 0) close(fd);
        }
        for (int i = 0; i < j.n; i++) {
            CgOp *op = bt->op[j.idx[i]];
            const char *key = bt->key[j.idx[i]];
            bool done = false;
            if (ok) {
                char path[1200];
                snprintf(path, sizeof path, "%s/%s.so", c->cachedir, key);
                done = hashed && publish(c, key, j.tmpobj, hv.h) && load(op, key, path, 1, hv.h);
                /* not published (a full disk, say): this run's own object */
                if (!done) done = load(op, key, j.tmpobj, 2, 0);
                __atomic_add_fetch(&c->st.compiled, 1, __ATOMIC_RELAXED);
            }
            if (!done) __atomic_store_n(&op->ready, -1, __ATOMIC_RELEASE);
        }
    }
    unlink(j.src);
    unlink(j.tmpobj);
    sig_del(j.sig);
}

/* c's wake-up for waiters (wait_any): an eventfd jit_stop signals, made
 * on first use (c->lock); -1 if none could be made. */
static int stop_fd(CgContext *c)
{
    pthread_mutex_lock(&c->lock);
    if (c->stopfd < 0) c->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    int fd = c->stopfd;
    pthread_mutex_unlock(&c->lock);
    return fd;
}

/* Waits until one of the running jobs ends and finishes it; abandons all
 * of them instead when the context is being freed. Sleeps in poll on the
 * jobs' pidfds and c's stop_fd until one ends, the nearest
 * BRAID_CC_TIMEOUT or jit_stop (no wake-ups in between: a 2 ms polling
 * loop cost the fallback path's process a wake-up per 2 ms of every
 * compile); without pidfds (an older kernel) it polls each 2 ms. */
static void wait_any(Batch *bt)
{
    int sfd = stop_fd(bt->c);
    struct pollfd *pf = br_malloc(((size_t)bt->nj + 2) * sizeof *pf);
    for (bool done = false; !done;) {
        bool stop = __atomic_load_n(&bt->c->stopping, __ATOMIC_ACQUIRE);
        int np = 0;
        bool fds = pf && sfd >= 0;
        int64_t next = INT64_MAX;   /* ns to the nearest timeout */
        for (int k = 0; k < bt->nj && !done; k++) {
            if (!bt->jobs[k].running) continue;
            int status = 0;
            pid_t r = reap_cpu(bt->jobs[k].pid, &status, WNOHANG, &bt->c->st.cc_cpu_ns);
            int64_t left = cc_timeout_ns() - (br_now_ns() - bt->jobs[k].t0);
            if (r == bt->jobs[k].pid || (r < 0 && errno != EINTR)) {
                finish(bt, k, r == bt->jobs[k].pid ? status : 1 << 8);
                done = true;
            } else if (left < 0) {
                fprintf(stderr, "braid: warning: the C compiler ran over %.0f s and was stopped; its operators "
                        "run unfused (BRAID_CC_TIMEOUT)\n", cc_timeout_ns() / 1e9);
                bt->jobs[k].timed_out = true;
                kill_job(&bt->jobs[k]);
                finish(bt, k, 1 << 8);
                done = true;
            }
            next = BR_MIN(next, left);
            if (bt->jobs[k].pfd < 0) fds = false;
            else if (pf) pf[np++] = (struct pollfd){.fd = bt->jobs[k].pfd, .events = POLLIN};
        }
        /* the prelude build, reaped here too: published as soon as it
         * ends (pch_watch) */
        int pchfd = pch_watch(bt->c);
        if (done) {
        } else if (stop) {
            for (int k = 0; k < bt->nj; k++) if (bt->jobs[k].running) abandon(bt, k);
            done = true;
        } else if (fds) {
            if (pchfd >= 0) pf[np++] = (struct pollfd){.fd = pchfd, .events = POLLIN};
            pf[np++] = (struct pollfd){.fd = sfd, .events = POLLIN};
            int ms = (int)BR_MIN(next / 1000000 + 1, 1000);
            poll(pf, (nfds_t)np, ms);
        } else {
            struct timespec ts = {0, 2000000};   /* 2 ms */
            nanosleep(&ts, NULL);
        }
        if (pchfd >= 0) close(pchfd);
    }
    free(pf);
}

/* Takes a compiler slot; blocks only if wait is set, and not once c is
 * being freed (jit_stop wakes the waiters). */
static bool slot_take(CgContext *c, int par, bool wait)
{
    pthread_mutex_lock(&slot_mu);
    while (wait && slots_busy >= par && !__atomic_load_n(&c->stopping, __ATOMIC_ACQUIRE))
        pthread_cond_wait(&slot_cv, &slot_mu);
    bool ok = slots_busy < par;
    if (ok) slots_busy++;
    pthread_mutex_unlock(&slot_mu);
    return ok;
}

/* Prepares the cache directory and compiler, then loads the operators of
 * ops[] that are not ready from the disk cache; the others go to bt (NULL:
 * lookups only). Returns -1 (and marks the pending operators failed when
 * bt is given) if nothing can be compiled. */
static int lookup(CgContext *c, CgOp **ops, int n, Batch *bt)
{
    pthread_mutex_lock(&c->lock);
    cache_dir_init(c);
    int prep = jit_prepare(c);
    pthread_mutex_unlock(&c->lock);
    if (bt) {
        bt->op = br_calloc((size_t)BR_MAX(n, 1), sizeof *bt->op);
        bt->key = br_calloc((size_t)BR_MAX(n, 1), sizeof *bt->key);
    }
    if (prep || !c->have_dir || (bt && (!bt->op || !bt->key))) {
        for (int i = 0; bt && i < n; i++)
            if (ops[i] && ops[i]->ready == 0) __atomic_store_n(&ops[i]->ready, -1, __ATOMIC_RELEASE);
        return -1;
    }
    bool disk = c->opt.plancache;
    for (int i = 0; i < n; i++) {
        CgOp *op = ops[i];
        if (!op || __atomic_load_n(&op->ready, __ATOMIC_ACQUIRE) != 0) continue;
        /* two entries of ops[] may be the same operator */
        bool dup = false;
        for (int k = 0; bt && k < bt->n; k++) if (bt->op[k] == op) dup = true;
        if (dup) continue;
        char key[33], path[1200], cpath[1200];
        cache_key(c, op->src, key);
        snprintf(path, sizeof path, "%s/%s.so", c->cachedir, key);
        snprintf(cpath, sizeof cpath, "%s/%s.c", c->cachedir, key);
        /* schedule perturbation: some disk-cache entries are missed */
        bool miss = br_perturb_miss(PT_DISK_MISS, op->plan->hash);
        if (disk && !miss && cache_verify(c, path, cpath, op->src, false) && load(op, key, path, 0, 0)) {
            utimes(path, NULL);   /* recently used: kept by the collector */
            __atomic_add_fetch(&c->st.disk_hits, 1, __ATOMIC_RELAXED);
            continue;
        }
        /* the prebuilt set (cache.c): same key, same checks, read only */
        snprintf(path, sizeof path, "%s/%s.so", c->prebuilt, key);
        snprintf(cpath, sizeof cpath, "%s/%s.c", c->prebuilt, key);
        if (disk && !miss && cache_verify(c, path, cpath, op->src, true) && load(op, key, path, 0, 0)) {
            __atomic_add_fetch(&c->st.disk_hits, 1, __ATOMIC_RELAXED);
            __atomic_add_fetch(&c->st.prebuilt_hits, 1, __ATOMIC_RELAXED);
            continue;
        }
        if (!bt) continue;
        memcpy(bt->key[bt->n], key, sizeof key);
        bt->op[bt->n++] = op;
    }
    return 0;
}

/* Loads the operators of ops[] that the disk cache holds (no compiling). */
void jit_load_cached(CgContext *c, CgOp **ops, int n)
{
    int64_t t0 = br_now_ns();
    lookup(c, ops, n, NULL);
    __atomic_add_fetch(&c->st.compile_ns, br_now_ns() - t0, __ATOMIC_RELAXED);
}

/* Compiles the operators of ops[] that are not ready (disk cache first)
 * in bundles, several compiler processes at a time. c->lock guards the
 * cache directory and compiler lookup. */
void jit_compile_all(CgContext *c, CgOp **ops, int n)
{
    int todo = 0;
    for (int i = 0; i < n; i++) if (ops[i] && __atomic_load_n(&ops[i]->ready, __ATOMIC_ACQUIRE) == 0) todo++;
    if (!todo) return;
    int64_t t0 = br_now_ns();
    Batch bt = {.c = c, .disk = c->opt.plancache};
    if (lookup(c, ops, n, &bt)) {
        free(bt.op);
        free(bt.key);
        __atomic_add_fetch(&c->st.compile_ns, br_now_ns() - t0, __ATOMIC_RELAXED);
        return;
    }
    /* bundles: one per BUNDLE_MIN operators, at most par, round robin */
    int par = br_threads() > 2 ? br_threads() : 2;
    int nb = BR_MIN(par, (bt.n + BUNDLE_MIN - 1) / BUNDLE_MIN);
    int *idx = br_malloc((size_t)BR_MAX(bt.n, 1) * sizeof *idx);
    for (int b = 0; idx && b < nb; b++) {
        int m = 0;
        for (int i = b; i < bt.n; i += nb) idx[m++] = i;
        if (!add_job(&bt, idx, m))
            for (int i = 0; i < m; i++) __atomic_store_n(&bt.op[idx[i]]->ready, -1, __ATOMIC_RELEASE);
    }
    if (!idx) for (int i = 0; i < bt.n; i++) __atomic_store_n(&bt.op[i]->ready, -1, __ATOMIC_RELEASE);
    free(idx);
    /* run the jobs (failed bundles append single-operator jobs) */
    int next = 0;
    for (;;) {
        /* a context being freed (asynchronous mode): what is left starts
         * detached, for later runs, while there is room (abandon), else
         * not at all */
        if (__atomic_load_n(&c->stopping, __ATOMIC_ACQUIRE))
            for (; next < bt.nj; next++) {
                Job *j = &bt.jobs[next];
                if (bt.disk && c->disk_ok && det_reap() < det_max() && start(&bt, j)) {
                    j->running = false;   /* no slot: not braid's to wait for */
                    if (!detach(&bt, j)) kill_job(j);
                    pfd_close(j);
                }
                for (int i = 0; i < j->n; i++) __atomic_store_n(&bt.op[j->idx[i]]->ready, -1, __ATOMIC_RELEASE);
            }
        bool running = false;
        for (int k = 0; k < next && !running; k++) running = bt.jobs[k].running;
        if (next < bt.nj && slot_take(c, par, !running)) {
            Job *j = &bt.jobs[next++];
            if (!start(&bt, j)) {
                slot_release();
                if (j->n > 1) {
                    int m = j->n, *one = j->idx;
                    j->n = 0;
                    j->idx = NULL;
                    for (int i = 0; i < m; i++)
                        if (!add_job(&bt, &one[i], 1)) __atomic_store_n(&bt.op[one[i]]->ready, -1, __ATOMIC_RELEASE);
                    free(one);
                } else {
                    for (int i = 0; i < j->n; i++) __atomic_store_n(&bt.op[j->idx[i]]->ready, -1, __ATOMIC_RELEASE);
                }
            }
            continue;
        }
        /* woken by jit_stop: the top of the loop starts the rest */
        if (!running && next < bt.nj && __atomic_load_n(&c->stopping, __ATOMIC_ACQUIRE)) continue;
        if (!running) break;
        wait_any(&bt);
    }
    for (int k = 0; k < bt.nj; k++) free(bt.jobs[k].idx);
    free(bt.jobs);
    free(bt.op);
    free(bt.key);
    __atomic_add_fetch(&c->st.compile_ns, br_now_ns() - t0, __ATOMIC_RELAXED);
}

void jit_stop(CgContext *c)
{
    pthread_mutex_lock(&slot_mu);
    __atomic_store_n(&c->stopping, true, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&slot_cv);
    pthread_mutex_unlock(&slot_mu);
    /* wakes the waiters in wait_any (made under c->lock: one made after
     * this sees stopping) */
    pthread_mutex_lock(&c->lock);
    if (c->stopfd >= 0 && eventfd_write(c->stopfd, 1)) {}
    pthread_mutex_unlock(&c->lock);
    /* the prelude build of this context's folder: published if it has
     * ended, else left to a finishing shell, which publishes it later
     * (pch_detach), but killed when the folder is a private temporary
     * one, which goes away with the context */
    pthread_mutex_lock(&pch_mu);
    if (!strcmp(pch.dir, c->cachedir)) {
        pch_poll(&pch, c);
        if (pch.state == 1 && c->disk_ok) pch_detach(&pch);
        else pch_kill(&pch, 0);
    }
    pthread_mutex_unlock(&pch_mu);
    det_reap();
}

/* Asynchronous mode (seed 001): operators waiting for a background
 * compile, of every context, in one queue. Up to br_threads() (at least
 * 2) worker threads each take all queued operators of one context and
 * compile them as one batch, so the one-operator batches of many small
 * DAGs (dynamic recompilation) share compiler processes. c->nasync counts
 * a context's operators queued or compiling. */
typedef struct QEnt { CgContext *c; CgOp *op; } QEnt;
static pthread_mutex_t q_mu = PTHREAD_MUTEX_INITIALIZER;
static QEnt *q;
static int qn, qcap, q_workers;

static void async_done(CgContext *c, int m)
{
    pthread_mutex_lock(&c->lock);
    c->nasync -= m;
    pthread_cond_broadcast(&c->async_done);
    pthread_mutex_unlock(&c->lock);
}

static void *async_main(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&q_mu);
        if (qn == 0) {
            q_workers--;
            pthread_mutex_unlock(&q_mu);
            return NULL;
        }
        CgContext *c = q[0].c;
        CgOp **ops = malloc((size_t)qn * sizeof *ops);
        int m = 0, k = 0;
        for (int i = 0; i < qn; i++) {
            if (q[i].c == c && ops) ops[m++] = q[i].op;
            else q[k++] = q[i];
        }
        if (!ops) { m = 1; k = qn - 1; memmove(q, q + 1, (size_t)k * sizeof *q); }
        qn = k;
        pthread_mutex_unlock(&q_mu);
        if (ops) {
            /* no c->jitlock: batches compile at the same time, bounded
             * by the compiler slots */
            jit_compile_all(c, ops, m);   /* a freed context: see there */
            free(ops);
        }
        async_done(c, m);
    }
}

/* Queues ops (marked queued by the caller) for a background compile; they
 * run through the reference kernels until ready. Returns false (nothing
 * queued) if no worker thread could be started. */
bool jit_compile_async(CgContext *c, CgOp **ops, int n)
{
    if (n <= 0) return true;
    pthread_mutex_lock(&q_mu);
    if (qn + n > qcap) {
        int nc = BR_MAX(qcap * 2, qn + n + 16);
        QEnt *nq = realloc(q, (size_t)nc * sizeof *nq);
        if (!nq) { pthread_mutex_unlock(&q_mu); return false; }
        q = nq;
        qcap = nc;
    }
    pthread_mutex_lock(&c->lock);
    c->nasync += n;
    pthread_mutex_unlock(&c->lock);
    for (int i = 0; i < n; i++) q[qn++] = (QEnt){c, ops[i]};
    int par = br_threads() > 2 ? br_threads() : 2;
    bool ok = true;
    if (q_workers < par) {
        pthread_t t;
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &at, async_main, NULL) == 0) q_workers++;
        else if (q_workers == 0) ok = false;   /* nobody would take them */
        pthread_attr_destroy(&at);
    }
    if (!ok) {
        /* take them back: the caller compiles synchronously */
        int k = 0;
        for (int i = 0; i < qn; i++) {
            bool mine = false;
            for (int j = 0; j < n && !mine; j++) mine = q[i].c == c && q[i].op == ops[j];
            if (!mine) q[k++] = q[i];
        }
        qn = k;
    }
    pthread_mutex_unlock(&q_mu);
    if (!ok) async_done(c, n);
    return ok;
}
