/* test_jitdetach.c: a kernel compile still running when braid exits
 * (asynchronous mode, codegen/jit.c; docs/codegen.md step 5) finishes
 * detached and publishes its kernel, so the next run of a short script
 * loads it instead of starting cold again; and a detached compile is still
 * bounded by BRAID_CC_TIMEOUT.
 *
 * The compiler is a wrapper (BRAID_CC) that waits for a file the test
 * creates only after the first run has exited, then runs the real one: the
 * compile is in flight at exit whatever the load, and the first run must
 * exit without waiting for it. The test then waits (up to 120 s, no timing
 * claim) for the published object and the wrapper's end; a second run,
 * whose wrapper refuses to compile, must find the kernel in the disk cache,
 * verified by the checksum the shell that finished the compile recorded.
 * braid starts the compiler itself (no shell: it leads its own session),
 * and so the precompiled prelude's: the wrapper holds that build too and
 * then writes a stand-in .gch (no real compile), which must be published
 * by rename with no temporaries left. Nothing on braid's side waits by
 * polling with `sleep` (a `sleep` first on PATH logs each call): a
 * detached compile is published when its last process ends. Needs $BRAID
 * (run_all.sh). */
#include "t.h"
#include "base/base.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char dir[64];

static const char *script =
    "X = rand(rows=200, cols=10, seed=1)\n"
    "s = sum(exp(X) * tanh(X) + abs(X * 2))\n"
    "print(s)\n";

static void nap(void)
{
    struct timespec ts = {0, 50000000};   /* 50 ms */
    nanosleep(&ts, NULL);
}

/* Runs braid on s.dml with the wrapper as compiler, an asynchronous compile
 * and the cache folder <dir>/<cache>; returns its output (caller frees),
 * NULL when it failed. */
static char *run(const char *braid, const char *cache, const char *env)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && PATH='%s/bin':\"$PATH\" BRAID_CODEGEN_ASYNC=1 BRAID_KERNELS=none BRAID_CC='%s/cc' "
             "XDG_CACHE_HOME='%s/%s' %s timeout -s KILL 120 '%s' -config "
             "'%s/tests/dml/configs/codegen_fuse_all.xml' -stats -f s.dml >out 2>&1",
             dir, dir, dir, dir, cache, env, braid, BRAID_SOURCE_DIR);
    int st = system(cmd);
    char p[128];
    snprintf(p, sizeof p, "%s/out", dir);
    char *out = t_slurp(p, NULL);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "braid (%s %s) failed: %s\n", cache, env, out ? out : "");
        free(out);
        return NULL;
    }
    return out;
}

/* The pid the wrapper of tag recorded, waiting up to 120 s for it; 0 if
 * none. */
static pid_t wrapper_pid(const char *tag)
{
    char p[128];
    snprintf(p, sizeof p, "%s/pid.%s", dir, tag);
    for (int i = 0; i < 2400; i++, nap()) {
        char *s = t_slurp(p, NULL);
        long v = s && strchr(s, '\n') ? atol(s) : 0;
        free(s);
        if (v > 0) return (pid_t)v;
    }
    return 0;
}

/* Did the wrapper of tag run as the child of a `timeout` that leads its
 * session (sid.<tag>: session, parent, pid, the parent's name)? why:
 * what it recorded. */
static bool under_watchdog(const char *tag, char why[200])
{
    char p[128], name[64] = "";
    snprintf(p, sizeof p, "%s/sid.%s", dir, tag);
    char *s = t_slurp(p, NULL);
    long sv = 0, par = -1, me = -1;
    bool ok = s && sscanf(s, "%ld %ld %ld %63s", &sv, &par, &me, name) == 4 && sv == par && sv != me &&
              !strcmp(name, "timeout");
    snprintf(why, 200, "session, parent, pid, parent's name: %.120s", s ? s : "?");
    free(s);
    return ok;
}

/* A /proc file to its end (stat tells no size there); caller frees. */
static char *proc_read(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t len = 0, cap = 4096;
    char *s = malloc(cap + 1);
    size_t k;
    while (s && (k = fread(s + len, 1, cap - len, f)) > 0) {
        len += k;
        if (len == cap) {
            char *t = realloc(s, 2 * cap + 1);
            if (!t) { free(s); s = NULL; break; }
            s = t;
            cap *= 2;
        }
    }
    fclose(f);
    if (s) s[len] = 0;
    if (n) *n = len;
    return s;
}

/* Is pid running (neither gone nor a zombie nobody reaped)? */
static bool alive(pid_t pid)
{
    if (kill(pid, 0) != 0) return errno != ESRCH;
    char p[64], *s;
    snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
    s = proc_read(p, NULL);
    const char *e = s ? strrchr(s, ')') : NULL;
    bool z = e && (e[2] == 'Z' || e[2] == 'X');
    free(s);
    return !z;
}

/* Waits up to 120 s for pid to end. */
static bool ends(pid_t pid)
{
    for (int i = 0; i < 2400; i++, nap())
        if (!alive(pid)) return true;
    return false;
}

/* Processes (not zombies) whose command line names the text of what:
 * the compile's shell, its watchdog and the wrapper name the cache
 * folder or the wrapper, both in this test's own folder. */
static int procs_naming(const char *what)
{
    int n = 0;
    DIR *dp = opendir("/proc");
    struct dirent *de;
    while (dp && (de = readdir(dp))) {
        if (de->d_name[0] < '1' || de->d_name[0] > '9') continue;
        char p[300];
        size_t len = 0;
        snprintf(p, sizeof p, "/proc/%s/cmdline", de->d_name);
        char *s = proc_read(p, &len);
        if (!s) continue;
        for (size_t i = 0; i < len; i++) if (!s[i]) s[i] = ' ';
        if (len && memmem(s, len, what, strlen(what)) && alive((pid_t)atol(de->d_name))) n++;
        free(s);
    }
    if (dp) closedir(dp);
    return n;
}

/* Counts the entries of folder d: published objects, their sums,
 * temporaries (tmp.*) and precompiled preludes (.gch). */
/* The processes of the test's compiles left after waiting up to 120 s
 * for them to end. */
static int procs_left(void)
{
    int left = 0;
    for (int i = 0; i < 2400 && (left = procs_naming(dir)) > 0; i++) nap();
    return left;
}

static char tmp_name[256];   /* the first temporary entries saw (for a failure's message) */

static void entries(const char *d, int *so, int *sum, int *tmp, int *gch)
{
    *so = *sum = *tmp = *gch = 0;
    tmp_name[0] = 0;
    DIR *dp = opendir(d);
    struct dirent *de;
    while (dp && (de = readdir(dp))) {
        size_t l = strlen(de->d_name);
        if (!strncmp(de->d_name, "tmp.", 4)) {
            if (!(*tmp)++) snprintf(tmp_name, sizeof tmp_name, "%s", de->d_name);
        }
        else if (l > 3 && !strcmp(de->d_name + l - 3, ".so")) (*so)++;
        else if (l > 7 && !strcmp(de->d_name + l - 7, ".so.sum")) (*sum)++;
        else if (l > 4 && !strcmp(de->d_name + l - 4, ".gch")) (*gch)++;
    }
    if (dp) closedir(dp);
}

/* Starts sh -c text (which execs braid); its pid. */
static pid_t start(const char *text)
{
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", text, (char *)NULL);
        _exit(127);
    }
    return pid;
}

static void term_compile(const char *braid)
{
    char text[8192], p[256];
    snprintf(text, sizeof text,
             "cd '%s' && PATH='%s/bin':\"$PATH\" BRAID_CODEGEN_ASYNC=0 BRAID_KERNELS=none BRAID_CC='%s/cc' "
             "XDG_CACHE_HOME='%s/c3' TAG=term BRAID_CC_TIMEOUT=200 exec '%s' -config "
             "'%s/tests/dml/configs/codegen_fuse_all.xml' -f s.dml >out.term 2>&1",
             dir, dir, dir, dir, braid, BRAID_SOURCE_DIR);
    pid_t bpid = start(text);
    pid_t kc = wrapper_pid("term"), kp = wrapper_pid("pch.term");
    T_CHECK(kc > 0 && kp > 0 && alive(kc) && alive(kp), "term: the compile and the prelude's build run (%d %d)",
            (int)kc, (int)kp);
    T_CHECK(bpid > 0 && kill(bpid, SIGTERM) == 0, "term: SIGTERM sent");
    int bst = 0;
    T_CHECK(bpid > 0 && waitpid(bpid, &bst, 0) == bpid && WIFEXITED(bst) && WEXITSTATUS(bst) == 128 + SIGTERM,
            "term: braid exits with 143 (status %#x)", bst);
    T_CHECK(kc > 0 && ends(kc) && kp > 0 && ends(kp), "term: the compile and the prelude's build are stopped");
    int left = procs_left();
    T_CHECK(left == 0, "term: no process of the compiles is left (%d)", left);
    int so, sum, tmp, gch;
    snprintf(p, sizeof p, "%s/c3/braid", dir);
    entries(p, &so, &sum, &tmp, &gch);
    T_CHECK(so == 0 && sum == 0 && gch == 0, "term: nothing published (%d objects, %d sums, %d preludes)", so, sum,
            gch);
    /* the compiles' own tmp.PID.* (the bundle's source, the partial
     * objects the wrapper wrote, the TMPDIR folders): removed by the
     * signal cleanup (jit.c sig_add), not left for the collector */
    T_CHECK(tmp == 0, "term: no temporary of the compiles left (%d: %s)", tmp, tmp_name);
}

static void term_write(const char *braid)
{
    char text[8192], p[256];
    snprintf(p, sizeof p, "%s/w.dml", dir);
    t_put(p, "X = rand(rows=100000, cols=10, seed=3)\n"
             "for (i in 1:20) write(X, \"wout/o\" + i, format=\"csv\")\n");
    snprintf(p, sizeof p, "%s/wout", dir);
    mkdir(p, 0700);
    snprintf(text, sizeof text, "cd '%s' && exec '%s' -f w.dml >out.w 2>&1", dir, braid);
    pid_t bpid = start(text);
    bool seen = false;
    for (int i = 0; i < 2400 && !seen; i++, nap()) {
        DIR *d = opendir(p);
        struct dirent *de;
        while (d && (de = readdir(d)))
            if (strstr(de->d_name, ".tmp.")) seen = true;
        if (d) closedir(d);
    }
    T_CHECK(seen, "term write: a write's temporary seen");
    T_CHECK(bpid > 0 && kill(bpid, seen ? SIGTERM : SIGKILL) == 0, "term write: SIGTERM sent");
    int bst = 0;
    T_CHECK(bpid > 0 && waitpid(bpid, &bst, 0) == bpid && WIFEXITED(bst) && WEXITSTATUS(bst) == 128 + SIGTERM,
            "term write: exit status 143 (status %#x)", bst);
    int tmps = 0, files = 0, bad = 0;
    off_t size = -1;
    DIR *d = opendir(p);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        const char *n = de->d_name;
        if (n[0] == '.') continue;
        if (strstr(n, ".tmp.") || strstr(n, ".next.")) { tmps++; continue; }
        if (strstr(n, ".mtd")) continue;
        char f[600];
        struct stat st;
        snprintf(f, sizeof f, "%s/%s.mtd", p, n);
        bool mtd = stat(f, &st) == 0;
        snprintf(f, sizeof f, "%s/%s", p, n);
        if (stat(f, &st) != 0 || !mtd) { bad++; continue; }
        if (size < 0) size = st.st_size;
        bad += st.st_size != size;
        files++;
    }
    if (d) closedir(d);
    T_CHECK(tmps == 0, "term write: no temporary left (%d)", tmps);
    T_CHECK(bad == 0 && files < 20, "term write: %d files written, all complete with their .mtd (%d not)", files,
            bad);
}

/* Waits up to 120 s for pid to exit (then kills it); its status, -1 if
 * it could not be reaped. */
static int wait_exit(pid_t pid)
{
    int st = 0;
    for (int i = 0; i < 2400; i++, nap()) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) return st;
        if (r < 0) return -1;
    }
    kill(pid, SIGKILL);
    return waitpid(pid, &st, 0) == pid ? st : -1;
}

/* The signal cleanup's tables grow (base.c; 128 paths and 256 process
 * groups were the fixed limits before): 400 files and 264 process groups
 * registered at once; a child that runs the cleanup removes every file
 * still registered, none unregistered, and kills every group. */
static void sig_tables(void)
{
    enum { NF = 400, NG = 264 };
    static int slot[NF];
    char d[128], f[200];
    snprintf(d, sizeof d, "%s/sigt", dir);
    mkdir(d, 0700);
    int zero = 0, dup = 0;
    static unsigned char seen[NF + 1];
    for (int i = 0; i < NF; i++) {
        snprintf(f, sizeof f, "%s/f%d", d, i);
        t_put(f, "x");
        slot[i] = br_sig_path_add(f, false);
        if (slot[i] <= 0 || slot[i] > NF) zero++;
        else dup += seen[slot[i]]++ > 0;
    }
    T_CHECK(zero == 0 && dup == 0, "signal table: 400 paths registered (%d not, %d slots twice)", zero, dup);
    for (int i = 1; i < NF; i += 2) br_sig_path_del(slot[i]);
    pid_t g[NG];
    int made = 0;
    for (int i = 0; i < NG; i++) {
        g[i] = fork();
        if (g[i] == 0) {
            setpgid(0, 0);
            for (;;) pause();
        }
        if (g[i] > 0) {
            setpgid(g[i], g[i]);   /* either side first: the group exists before it is registered */
            br_sig_group_add(g[i]);
            made++;
        }
    }
    pid_t cl = fork();
    if (cl == 0) {
        br_sig_cleanup();
        _exit(0);
    }
    int cst = cl > 0 ? wait_exit(cl) : -1;
    /* the groups' ends, up to 30 s; then the survivors are killed here */
    int killed = 0, left = made;
    for (int r = 0; r < 600 && left > 0; r++, nap())
        for (int i = 0; i < NG; i++) {
            int st;
            if (g[i] <= 0 || waitpid(g[i], &st, WNOHANG) != g[i]) continue;
            killed += WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
            br_sig_group_del(g[i]);
            g[i] = 0;
            left--;
        }
    for (int i = 0; i < NG; i++)
        if (g[i] > 0) {
            kill(g[i], SIGKILL);
            waitpid(g[i], NULL, 0);
            br_sig_group_del(g[i]);
        }
    int gone = 0, kept = 0;
    for (int i = 0; i < NF; i++) {
        snprintf(f, sizeof f, "%s/f%d", d, i);
        bool there = access(f, F_OK) == 0;
        if (i % 2 == 0) gone += !there;
        else kept += there;
        if (i % 2 == 0) br_sig_path_del(slot[i]);
        unlink(f);
    }
    rmdir(d);
    T_CHECK(cst == 0 && made == NG && killed == NG, "signal table: the cleanup killed %d of %d process groups", killed,
            NG);
    T_CHECK(gone == NF / 2 && kept == NF / 2,
            "signal table: the cleanup removed %d of the %d registered files and kept %d of the %d unregistered",
            gone, NF / 2, kept, NF / 2);
}

/* braid stopped by SIGTERM in the middle of a rename publish of the
 * cache folder (jit.c publish_file): a preloaded rename() (shim.so)
 * sends the signal when braid (its pid, TERM_PID) renames a tmp.* name
 * ending in at, and waits for it. The temporary is in the signal
 * cleanup's table, so no tmp.* is left. at: ".h" the prelude's header,
 * ".c" an operator's <key>.c, ".sum" and ".so" the two steps of a
 * compiled object's publish (the wrapper "compiles" at once: TAG=pub). */
static void term_publish(const char *braid, const char *at)
{
    char text[8192], p[256];
    snprintf(text, sizeof text,
             "cd '%s' && PATH='%s/bin':\"$PATH\" BRAID_CODEGEN_ASYNC=0 BRAID_KERNELS=none BRAID_CC='%s/cc' "
             "XDG_CACHE_HOME='%s/cp%s' TAG=pub TERM_AT='%s' TERM_PID=$$ GOMP_SPINCOUNT=20000 "
             "ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0\" LD_PRELOAD='%s/shim.so' "
             "exec '%s' -config '%s/tests/dml/configs/codegen_fuse_all.xml' -f s.dml >out.pub 2>&1",
             dir, dir, dir, dir, at, at, dir, braid, BRAID_SOURCE_DIR);
    int st = wait_exit(start(text));
    T_CHECK(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 128 + SIGTERM,
            "term publish %s: braid stopped by SIGTERM mid-publish (status %#x)", at, st);
    int so, sum, tmp, gch;
    snprintf(p, sizeof p, "%s/cp%s/braid", dir, at);
    entries(p, &so, &sum, &tmp, &gch);
    T_CHECK(tmp == 0, "term publish %s: no temporary left (%d: %s)", at, tmp, tmp_name);
    if (!strcmp(at, ".so"))
        T_CHECK(sum >= 1 && so == 0, "term publish .so: stopped between the sum and the object (%d sums, %d objects)",
                sum, so);
    int left = procs_left();
    T_CHECK(left == 0, "term publish %s: no process of the compiles is left (%d)", at, left);
}

int main(void)
{
    const char *bp = getenv("BRAID");
    if (!bp) { fprintf(stderr, "test_jitdetach: BRAID not set\n"); return 2; }
    /* the runs start in the test's folder: a relative path from here */
    char braid[4096];
    if (!realpath(bp, braid)) { fprintf(stderr, "test_jitdetach: BRAID %s: %s\n", bp, strerror(errno)); return 2; }
    snprintf(dir, sizeof dir, "/tmp/braid_jitdetach_XXXXXX");
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 2; }
    char p[256], text[8192];
    snprintf(p, sizeof p, "%s/s.dml", dir);
    t_put(p, script);
    /* the real sleep (the wrapper's own waits are not logged) */
    char slp[1100] = "";
    const char *path = getenv("PATH");
    for (const char *q = path ? path : "/usr/bin:/bin"; *q && !slp[0];) {
        size_t n = strcspn(q, ":");
        snprintf(slp, sizeof slp, "%.*s/sleep", (int)n, q);
        if (access(slp, X_OK)) slp[0] = 0;
        q += n + (q[n] == ':');
    }
    snprintf(p, sizeof p, "%s/bin", dir);
    mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/bin/sleep", dir);
    snprintf(text, sizeof text, "#!/bin/sh\necho \"$*\" >> '%s/sleeps'\nexec '%s' \"$@\"\n", dir,
             slp[0] ? slp : "/bin/sleep");
    t_put(p, text);
    chmod(p, 0755);
    /* the wrapper: records its session and pid in sid.$TAG and its pid
     * in pid.$TAG (pch.$TAG for the prelude's
     * build), refuses while "deny" exists, waits for "release", then
     * runs the real compiler (for the prelude: writes a stand-in) */
    const char *real = getenv("BRAID_CC");
    snprintf(text, sizeof text,
             "#!/bin/sh\n"
             "t=$TAG; case \" $* \" in *\" c-header \"*) t=pch.$TAG;; esac\n"
             "read -r m </proc/$PPID/stat; m=${m#*'('}; m=${m%%%%')'*}\n"
             "sid() { echo \"$4 $2 $$ $m\" > '%s/sid.'\"$t\"; }; read -r l </proc/$$/stat; sid ${l##*') '}\n"
             "o=; p=; for a; do [ \"$p\" = -o ] && o=$a; p=$a; done\n"
             "case $TAG in kill|term) echo partial > \"$o\";; esac\n"
             "echo $$ > '%s/pid.'\"$t\"\n"
             "case $TAG in pub) echo obj > \"$o\"; exit 0;; esac\n"
             "[ -e '%s/deny' ] && exit 1\n"
             "while [ ! -e '%s/release' ]; do '%s' 0.05; done\n"
             "case $t in pch.*) echo gch > \"$o\"; exit 0;; esac\n"
             "exec '%s' \"$@\"\n",
             dir, dir, dir, dir, slp[0] ? slp : "/bin/sleep", real && *real ? real : "cc");
    snprintf(p, sizeof p, "%s/cc", dir);
    t_put(p, text);
    chmod(p, 0755);
    /* the preloaded rename() of term_publish (compiled here: no sanitizer;
     * BRAID_CC or cc, as the wrapper) */
    snprintf(p, sizeof p, "%s/shim.c", dir);
    t_put(p, "#define _GNU_SOURCE\n#include <dlfcn.h>\n#include <signal.h>\n#include <stdlib.h>\n"
             "#include <string.h>\n#include <unistd.h>\n"
             "int rename(const char *a, const char *b)\n{\n"
             "    int (*real)(const char *, const char *) = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "
             "\"rename\");\n"
             "    const char *at = getenv(\"TERM_AT\"), *pid = getenv(\"TERM_PID\"), *n = strrchr(a, '/');\n"
             "    n = n ? n + 1 : a;\n"
             "    size_t ln = strlen(n), la = at ? strlen(at) : 0;\n"
             "    if (at && pid && atol(pid) == (long)getpid() && !strncmp(n, \"tmp.\", 4) && ln > la &&\n"
             "        !strcmp(n + ln - la, at)) {\n"
             "        kill(getpid(), SIGTERM);\n"
             "        for (;;) pause();\n"
             "    }\n"
             "    return real(a, b);\n}\n");
    snprintf(text, sizeof text, "'%s' -shared -fPIC -O1 -o '%s/shim.so' '%s/shim.c' -ldl", real && *real ? real : "cc",
             dir, dir);
    T_CHECK(system(text) == 0, "the rename shim compiles");
    setenv("BRAID_CG_MACHINE", "4.07684e+10 3.07256e+10 5.60535e+09 6.16694e+10 3.40088e+10", 1);
    sig_tables();

    /* a detached compile that never ends is stopped by its watchdog
     * after BRAID_CC_TIMEOUT (1 s here; or by braid, if the run took
     * longer): its shell, watchdog and compiler go, nothing is published */
    char *out = run(braid, "c1", "TAG=hang BRAID_CC_TIMEOUT=1");
    T_CHECK(out && strstr(out, "Codegen"), "timeout: the run");
    free(out);
    int left = procs_left();
    T_CHECK(left == 0, "timeout: a detached compile past BRAID_CC_TIMEOUT is stopped (%d processes left)", left);
    int so, sum, tmp, gch;
    snprintf(p, sizeof p, "%s/c1/braid", dir);
    entries(p, &so, &sum, &tmp, &gch);
    T_CHECK(so == 0 && gch == 0, "timeout: nothing published (%d objects, %d preludes)", so, gch);

    /* braid killed (SIGKILL: no context end, no finishing shell) while
     * it waits for the compile and the prelude's build, both held: each
     * is stopped by its own watchdog (BRAID_CC_TIMEOUT 8 s + 5, checked
     * with 120 s), and the partial outputs they wrote are never
     * published */
    snprintf(text, sizeof text,
             "cd '%s' && PATH='%s/bin':\"$PATH\" BRAID_CODEGEN_ASYNC=0 BRAID_KERNELS=none BRAID_CC='%s/cc' "
             "XDG_CACHE_HOME='%s/c0' TAG=kill BRAID_CC_TIMEOUT=8 exec '%s' -config "
             "'%s/tests/dml/configs/codegen_fuse_all.xml' -f s.dml >out.kill 2>&1",
             dir, dir, dir, dir, braid, BRAID_SOURCE_DIR);
    pid_t bpid = fork();
    if (bpid == 0) {
        execl("/bin/sh", "sh", "-c", text, (char *)NULL);
        _exit(127);
    }
    pid_t kc = wrapper_pid("kill"), kp = wrapper_pid("pch.kill");
    T_CHECK(bpid > 0 && kill(bpid, SIGKILL) == 0, "kill: braid killed");
    int bst = 0;
    T_CHECK(bpid > 0 && waitpid(bpid, &bst, 0) == bpid && WIFSIGNALED(bst) && WTERMSIG(bst) == SIGKILL,
            "kill: braid was still running when killed (status %d)", bst);
    T_CHECK(kc > 0 && kp > 0 && alive(kc) && alive(kp),
            "kill: the compile and the prelude's build (%d %d) outlive braid", (int)kc, (int)kp);
    T_CHECK(kc > 0 && ends(kc) && kp > 0 && ends(kp),
            "kill: the compile and the prelude's build are stopped by their watchdogs");
    left = procs_left();
    T_CHECK(left == 0, "kill: no process of the compiles is left (%d)", left);
    snprintf(p, sizeof p, "%s/c0/braid", dir);
    entries(p, &so, &sum, &tmp, &gch);
    T_CHECK(so == 0 && sum == 0 && gch == 0 && tmp >= 2,
            "kill: the partial outputs stay temporaries, nothing published (%d objects, %d sums, %d preludes, "
            "%d temporaries)", so, sum, gch, tmp);

    /* braid stopped by SIGTERM while it waits for the compile and the
     * prelude's build (their watchdogs at 205 s): its handler kills both
     * at once (checked with 120 s, well before the watchdogs), nothing
     * is published, and braid exits with 128 + 15 */
    term_compile(braid);
    /* SIGTERM while braid writes (20 csv files of 1e6 cells, one after
     * the other): no temporary of a write is left, every file written
     * is complete, exit status 143 */
    term_write(braid);
    /* SIGTERM in the middle of each rename publish of the cache folder */
    term_publish(braid, ".h");
    term_publish(braid, ".c");
    term_publish(braid, ".sum");
    term_publish(braid, ".so");

    /* the first run exits with its compile held; the compile then runs on
     * and publishes */
    char *ref = run(braid, "c2", "TAG=cold");
    T_CHECK(ref && strstr(ref, "Codegen"), "cold run");
    pid_t cold = wrapper_pid("cold");
    T_CHECK(cold > 0 && alive(cold), "the compile in flight at exit still runs after braid has exited");
    /* braid started the compiler under its watchdog, no shell around
     * them (jit.c spawn_compile: `timeout`, the compiler): the wrapper's
     * parent is `timeout`, which leads the session */
    char why[200];
    T_CHECK(under_watchdog("cold", why), "the compiler runs under its own watchdog (%s)", why);
    /* the prelude's build likewise (through a shell before, which led
     * the session) */
    pid_t pch = wrapper_pid("pch.cold");
    T_CHECK(pch > 0 && alive(pch), "the prelude build in flight at exit still runs after braid has exited");
    T_CHECK(under_watchdog("pch.cold", why), "the prelude's compiler runs under its own watchdog (%s)", why);
    snprintf(p, sizeof p, "%s/release", dir);
    t_put(p, "");
    T_CHECK(cold > 0 && ends(cold), "the released compile ends");
    T_CHECK(pch > 0 && ends(pch), "the released prelude build ends");
    snprintf(p, sizeof p, "%s/c2/braid", dir);
    for (int i = 0; i < 2400; i++, nap()) {
        entries(p, &so, &sum, &tmp, &gch);
        if (so >= 1 && sum >= so && tmp == 0 && gch == 1) break;
    }
    T_CHECK(so >= 1 && sum >= so && tmp == 0 && gch == 1,
            "the detached compiles published the kernel with its sum and the prelude, and left no temporaries "
            "(%d objects, %d sums, %d temporaries, %d preludes)", so, sum, tmp, gch);
    int left2 = procs_left();
    snprintf(p, sizeof p, "%s/sleeps", dir);
    char *slept = t_slurp(p, NULL);
    T_CHECK(left2 == 0 && !slept, "the finishing shells waited without polling (sleep calls: %s)",
            slept ? slept : "none");
    free(slept);

    /* the next run loads it (its wrapper would refuse to compile) */
    snprintf(p, sizeof p, "%s/deny", dir);
    t_put(p, "");
    char *warm = run(braid, "c2", "TAG=warm");
    const char *hits = warm ? strstr(warm, "Codegen plan cache (hits, disk):") : NULL;
    const char *slash = hits ? strchr(hits, '/') : NULL;
    T_CHECK(slash && atoi(slash + 1) >= 1 && !strstr(warm, "Codegen compiler runs") &&
                !strstr(warm, "failed compiles"),
            "the second run loads the kernel the first started:\n%s", warm ? warm : "");
    /* the printed sum (the first line) is the same */
    T_CHECK(ref && warm && !strncmp(ref, warm, strcspn(ref, "\n") + 1), "the same result cold and warm");
    free(ref);
    free(warm);

    snprintf(text, sizeof text, "rm -rf '%s'", dir);
    T_CHECK(system(text) == 0, "clean");
    return t_done("test_jitdetach");
}
