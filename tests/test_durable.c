/* test_durable.c: write() never damages or loses a file (issue 23,
 * docs/durability.md). A child process writes matrices over one target
 * and dies, either at each step of the commit of data and .mtd or by
 * SIGKILL at a random moment; the next read must find the previous matrix
 * or the complete new one (data and .mtd together), never a mix, and no
 * leftover files once recovery ran. Also: targets write() refuses
 * (".", "/", devices, folders that are not part files with a .mtd) are
 * left untouched. Files go to a fresh mkdtemp folder. */
#include "t.h"
#include "io/io.h"

#include <dirent.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char dir[64];

static const char *P(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

/* Version v of the target: v rows by 3 columns, every cell v (a mix of
 * two versions has rows != cell value, or fails the .mtd checks). */
static int write_version(const char *path, int v, const char *fmt)
{
    BrErr e = {0};
    MB *m = mb_dense(v, 3, &e);
    if (!m) return -1;
    for (int64_t i = 0; i < (int64_t)v * 3; i++) m->d[i] = v;
    mb_recount_nnz(m);
    IoWriteOpts o;
    io_write_opts_init(&o);
    o.format = fmt;
    int rc = io_write_matrix(path, m, &o, &e);
    mb_release(m);
    return rc;
}

/* The version now at path (0: none), -1 when what is there is a mix or
 * unreadable. */
static int read_version(const char *path, char *msg, size_t n)
{
    BrErr e = {0};
    IoReadOpts o;
    io_read_opts_init(&o);
    MB *m = io_read_matrix(path, &o, &e);
    if (!m) {
        snprintf(msg, n, "%s", e.msg);
        return strstr(e.msg, "not found") ? 0 : -1;
    }
    int v = (int)m->rows;
    bool ok = m->cols == 3;
    for (int64_t i = 0; i < m->rows * 3 && ok; i++) ok = mb_get(m, i / 3, i % 3) == v;
    snprintf(msg, n, "%lldx%lld matrix, cells %g", (long long)m->rows, (long long)m->cols, mb_get(m, 0, 0));
    mb_release(m);
    return ok ? v : -1;
}

/* Files in dir other than the target and its .mtd (leftovers). */
static int leftovers_q(const char *target, bool quiet)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *de;
    char mtd[300];
    snprintf(mtd, sizeof mtd, "%s.mtd", target);
    while (d && (de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && strcmp(de->d_name, target) &&
            strcmp(de->d_name, mtd)) {
            if (!quiet) fprintf(stderr, "leftover: %s\n", de->d_name);
            n++;
        }
    if (d) closedir(d);
    return n;
}

static int leftovers(const char *target) { return leftovers_q(target, false); }

/* A folder of part files as SystemDS writes one, with its .mtd. */
static void make_part_folder(const char *name)
{
    mkdir(P(name), 0777);
    char f[600];
    snprintf(f, sizeof f, "%s/0-m-00000", P(name));
    t_put(f, "1 1 7\n1 2 7\n1 3 7\n");
    snprintf(f, sizeof f, "%s/0-m-00001", P(name));
    t_put(f, "2 1 7\n2 2 7\n2 3 7\n3 1 7\n3 2 7\n3 3 7\n4 1 7\n4 2 7\n4 3 7\n5 1 7\n5 2 7\n5 3 7\n"
             "6 1 7\n6 2 7\n6 3 7\n7 1 7\n7 2 7\n7 3 7\n");
    snprintf(f, sizeof f, "%s/_SUCCESS", P(name));
    t_put(f, "");
    snprintf(f, sizeof f, "%s.mtd", P(name));
    t_put(f, "{\"data_type\": \"matrix\", \"rows\": 7, \"cols\": 3, \"nnz\": 21, \"format\": \"text\"}");
}

/* The child dies at commit step `step` writing version 9 over what is
 * there (a file of version 5 or a part folder of version 7). */
static void crash_points(const char *fmt, bool folder)
{
    for (int step = 1; step <= 5; step++) {
        const char *name = folder ? "pf" : "x";
        if (folder) make_part_folder(name);
        else T_CHECK(write_version(P(name), 5, fmt) == 0, "write version 5");
        int before = folder ? 7 : 5;
        pid_t pid = fork();
        if (pid == 0) {
            io_test_crash_at(step);
            write_version(P(name), 9, fmt);
            _exit(0);
        }
        int st;
        waitpid(pid, &st, 0);
        bool died = WIFEXITED(st) && WEXITSTATUS(st) == 77;
        T_CHECK(died, "%s step %d: the child died at the step (status %d)", fmt, step, st);
        char msg[1100];
        int v = read_version(P(name), msg, sizeof msg);
        /* steps 1: nothing committed yet; 2..5: committed */
        int want = step == 1 ? before : 9;
        T_CHECK(v == want, "%s%s crash at step %d: version %d (want %d): %s", fmt, folder ? " folder" : "", step, v,
                want, msg);
        T_CHECK(leftovers(name) == 0, "%s crash at step %d: recovery left no files", fmt, step);
        /* the next write over the recovered target works */
        T_CHECK(write_version(P(name), 4, fmt) == 0 && read_version(P(name), msg, sizeof msg) == 4,
                "write after recovery");
        char m2[600];
        snprintf(m2, sizeof m2, "rm -rf '%s' '%s.mtd'", P(name), P(name));
        T_CHECK(system(m2) == 0, "clean");
    }
}

/* SIGKILL at random moments of a child rewriting the target in a loop
 * (versions 1..40 in turn): every read afterwards finds one whole
 * version. Returns the number of kills. */
static int settled;   /* kills that left files for recovery */

static int random_kills(const char *fmt, int rounds)
{
    unsigned seed = 12345;
    int kills = 0;
    for (int r = 0; r < rounds; r++) {
        pid_t pid = fork();
        if (pid == 0) {
            for (int v = 1;; v = v % 40 + 1) write_version(P("k"), v, fmt);
        }
        seed = seed * 1103515245u + 12345u;
        struct timespec ts = {0, (long)((seed >> 8) % 3000) * 1000L};
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        kills++;
        settled += leftovers_q("k", true) > 0;
        char msg[1100];
        int v = read_version(P("k"), msg, sizeof msg);
        T_CHECK(v >= 0, "%s kill %d: a whole version or none, got: %s", fmt, r, msg);
        T_CHECK(leftovers("k") == 0, "%s kill %d: recovery left no files", fmt, r);
    }
    return kills;
}

/* Targets write() refuses are left exactly as they were. */
static void refused_targets(void)
{
    t_put(P("keep1"), "a");
    t_put(P("keep2"), "b");
    char cwd[512];
    T_CHECK(getcwd(cwd, sizeof cwd) != NULL, "getcwd");
    T_CHECK(chdir(dir) == 0, "chdir");
    const char *bad[] = {".", "./", "..", "/", "/dev/null", "/dev/full", "sub", "mixed"};
    mkdir("sub", 0777);
    t_put("sub/keep3", "c");
    mkdir("mixed", 0777);
    t_put("mixed.mtd", "{\"data_type\": \"matrix\", \"rows\": 1, \"cols\": 3, \"format\": \"text\"}");
    t_put("mixed/part-00000", "1 1 1\n");
    t_put("mixed/notes.txt", "mine");
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = write_version(bad[i], 2, "text");
        T_CHECK(rc != 0, "write to %s is refused", bad[i]);
    }
    struct stat st;
    T_CHECK(stat("keep1", &st) == 0 && stat("keep2", &st) == 0 && stat("sub/keep3", &st) == 0 &&
            stat("mixed/notes.txt", &st) == 0 && stat("mixed/part-00000", &st) == 0, "nothing was removed");
    T_CHECK(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode), "/dev/null is still a device");
    T_CHECK(chdir(cwd) == 0, "chdir back");
    char cmd[600];
    snprintf(cmd, sizeof cmd, "cd '%s' && rm -rf sub mixed mixed.mtd keep1 keep2", dir);
    T_CHECK(system(cmd) == 0, "clean");
}

/* Recovery skips reading a folder it found free of leftovers while the
 * folder stays unchanged, and reads it again (and recovers) once a
 * crashed writer changed it. */
static void clean_folders(void)
{
    char msg[1100];
    T_CHECK(write_version(P("c"), 3, "csv") == 0, "clean folder: write");
    struct timespec ts = {0, 120 * 1000 * 1000};
    nanosleep(&ts, NULL);   /* the scans begin clearly after the last change */
    T_CHECK(read_version(P("c"), msg, sizeof msg) == 3, "clean folder: read: %s", msg);
    long s0 = io_recover_scans();
    T_CHECK(read_version(P("c"), msg, sizeof msg) == 3 && io_recover_scans() == s0,
            "clean folder: a second read does not read the folder again (%ld scans)", io_recover_scans() - s0);
    pid_t pid = fork();
    if (pid == 0) {
        io_test_crash_at(3);   /* after the commit point */
        write_version(P("c"), 9, "csv");
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    T_CHECK(read_version(P("c"), msg, sizeof msg) == 9 && io_recover_scans() > s0 && leftovers("c") == 0,
            "clean folder: a crashed writer's commit is rolled forward (%s)", msg);
    char m2[600];
    snprintf(m2, sizeof m2, "rm -rf '%s' '%s.mtd'", P("c"), P("c"));
    T_CHECK(system(m2) == 0, "clean");
}

/* A distributed write whose rank 0 died leaves its temporary folder
 * P.tmp.PID.X with the parts written and the temporary of a part a
 * worker was writing ("0-m-00002.tmp.PID.X"); recovery removes it all
 * (it once refused the folder for that name, which stayed for good). */
static pid_t dead_pid(void)
{
    pid_t pid = fork();
    if (pid == 0) _exit(0);
    int st;
    waitpid(pid, &st, 0);
    return pid;
}

/* A child that ended and is not reaped yet (a zombie): its pid. Waits
 * for its end without reaping it (WNOWAIT), however long a loaded
 * machine takes to run it (a wait of at most 2 s polling /proc could
 * return a child still running). */
static pid_t zombie_pid(void)
{
    pid_t pid = fork();
    if (pid == 0) _exit(0);
    siginfo_t si;
    T_CHECK(pid > 0 && waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) == 0, "zombie: the child ended");
    return pid;
}

/* The writer of a temporary folder ended but is not reaped yet: recovery
 * takes it as dead (a distributed run's rank 0 whose mpirun ended first
 * stays a zombie until init reaps it). */
static void zombie_writer(void)
{
    char msg[1100], f[700], t[600];
    T_CHECK(write_version(P("zw"), 6, "binary") == 0, "zombie writer: write");
    pid_t z = zombie_pid();
    snprintf(t, sizeof t, "%s.tmp.%ld.5e6f", P("zw"), (long)z);
    T_CHECK(mkdir(t, 0777) == 0, "zombie writer: mkdir");
    snprintf(f, sizeof f, "%s/0-m-00000", t);
    t_put(f, "x");
    T_CHECK(read_version(P("zw"), msg, sizeof msg) == 6 && leftovers("zw") == 0,
            "zombie writer: the old version read (%s) and its temporary folder removed", msg);
    int st;
    waitpid(z, &st, 0);
    char m2[2000];
    snprintf(m2, sizeof m2, "rm -rf '%s' '%s.mtd' '%s'", P("zw"), P("zw"), t);
    T_CHECK(system(m2) == 0, "clean");
}

static void dead_parts_tmp(void)
{
    char msg[1100], f[700], t[600];
    T_CHECK(write_version(P("dp"), 4, "binary") == 0, "dead part writer: write");
    long d0 = (long)dead_pid(), d1 = (long)dead_pid();
    snprintf(t, sizeof t, "%s.tmp.%ld.1a2b", P("dp"), d0);
    T_CHECK(mkdir(t, 0777) == 0, "dead part writer: mkdir");
    snprintf(f, sizeof f, "%s/0-m-00000", t);
    t_put(f, "x");
    snprintf(f, sizeof f, "%s/0-m-00001", t);
    t_put(f, "x");
    snprintf(f, sizeof f, "%s/0-m-00002.tmp.%ld.3c4d", t, d1);
    t_put(f, "half a part");
    T_CHECK(read_version(P("dp"), msg, sizeof msg) == 4 && leftovers("dp") == 0,
            "dead part writer: the old version read (%s) and its temporary folder removed", msg);
    char m2[2000];
    snprintf(m2, sizeof m2, "rm -rf '%s' '%s.mtd' '%s'", P("dp"), P("dp"), t);
    T_CHECK(system(m2) == 0, "clean");
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/braid_durable_XXXXXX");
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 2; }
    br_set_threads(1);
    refused_targets();
    clean_folders();
    dead_parts_tmp();
    zombie_writer();
    crash_points("text", false);
    crash_points("csv", false);
    crash_points("binary", false);
    crash_points("text", true);
    int kills = random_kills("csv", 60) + random_kills("binary", 60);
    printf("durability: %d crash points, %d random kills (%d left files that recovery settled)\n", 4 * 5, kills,
           settled);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    T_CHECK(system(cmd) == 0, "clean");
    return t_done("test_durable");
}
