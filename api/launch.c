/* launch.c: `braid -np N ...`, the launcher that runs mpirun and turns a
 * rank's death into a clear error (docs/dist.md, "Faults").
 *
 * mpirun exits with a dead rank's own status (137 for SIGKILL) and may
 * drop rank 0's last message while it ends the job. The launcher makes
 * a folder for the ranks' marks (dist/distfault.c: up.R while rank R
 * lives, holding its process id; ctx with rank 0's instruction), runs
 * mpirun while watching the ranks' ends (pidfds), and after the run names
 * the dead rank (the first to end with its mark left; else the lowest
 * mark left), its signal (from mpirun's status, 128 + S: not from
 * mpirun's message text) and rank 0's instruction, exiting 1. */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../include/braid.h"

/* mpirun's argument vector (malloc'd; its strings are borrowed except
 * the ones in own[]). */
static char **mpirun_argv(int np, int argc, char **argv, char *own[3])
{
    const char *cmd = getenv("BRAID_MPIRUN");
    const char *opts = getenv("BRAID_MPIRUN_OPTS");
    own[0] = strdup(opts ? opts : "");
    own[1] = malloc(24);
    own[2] = malloc(4096);
    char **v = calloc((size_t)argc + strlen(own[0] ? own[0] : "") + 8, sizeof(char *));
    if (!own[0] || !own[1] || !own[2] || !v) { free(v); return NULL; }
    int n = 0;
    v[n++] = (char *)(cmd && *cmd ? cmd : "mpirun");
    for (char *save, *t = strtok_r(own[0], " \t", &save); t; t = strtok_r(NULL, " \t", &save)) v[n++] = t;
    snprintf(own[1], 24, "%d", np);
    v[n++] = "-np";
    v[n++] = own[1];
    ssize_t k = readlink("/proc/self/exe", own[2], 4095);
    own[2][k > 0 ? k : 0] = 0;
    v[n++] = k > 0 ? own[2] : argv[0];
    for (int i = 1; i < argc; i++) v[n++] = argv[i];
    v[n] = NULL;
    return v;
}

/* The lowest rank whose up mark is left (-1: none); removes the marks. */
static int left_marks(const char *dir)
{
    int low = -1;
    DIR *d = opendir(dir);
    if (!d) return -1;
    struct dirent *ent;
    char path[4400];
    while ((ent = readdir(d))) {
        if (ent->d_name[0] == '.') continue;
        int r;
        if (sscanf(ent->d_name, "up.%d", &r) == 1 && (low < 0 || r < low)) low = r;
        snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
        unlink(path);
    }
    closedir(d);
    return low;
}

static void read_ctx(const char *dir, char *ctx, size_t n)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/ctx", dir);
    ctx[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f) return;
    size_t k = fread(ctx, 1, n - 1, f);
    ctx[k] = 0;
    ctx[strnlen(ctx, n - 1)] = 0;
    fclose(f);
}

/* The launcher's watch over the ranks on its machine: a pidfd for each
 * up mark that appears (the rank's process id is in it). The first rank
 * that ends while its mark is still there died: mpirun ends the others
 * only after it (SIGTERM, then SIGKILL a second later), so the order
 * names the dead rank even when mpirun's SIGKILL leaves more marks. */
#define MAXW 1024
typedef struct Watch { int fd[MAXW], rank[MAXW], n; bool seen[MAXW]; int first; } Watch;

static bool mark_left(const char *dir, int r)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/up.%d", dir, r);
    return access(path, F_OK) == 0;
}

/* Opens a pidfd for every new mark of dir. */
static void watch_new(Watch *w, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *ent;
    while ((ent = readdir(d))) {
        int r;
        if (sscanf(ent->d_name, "up.%d", &r) != 1 || r < 0 || r >= MAXW || w->seen[r] || w->n >= MAXW) continue;
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
        FILE *f = fopen(path, "r");
        int pid = 0;
        if (!f) continue;
        bool got = fscanf(f, "%d", &pid) == 1 && pid > 0;
        fclose(f);
        if (!got) continue;   /* written in a moment */
        w->seen[r] = true;
        int fd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
        if (fd < 0) continue;   /* gone already (or no pidfds): the marks decide */
        w->fd[w->n] = fd, w->rank[w->n] = r, w->n++;
    }
    closedir(d);
}

/* Waits for mpirun (pid) while watching the ranks; its status in *st. */
static void watch_run(pid_t pid, const char *dir, Watch *w, int *st)
{
    struct pollfd pf[MAXW];
    w->first = -1;
    for (;;) {
        pid_t r = waitpid(pid, st, WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR)) break;
        watch_new(w, dir);
        for (int i = 0; i < w->n; i++) pf[i] = (struct pollfd){.fd = w->fd[i], .events = w->fd[i] >= 0 ? POLLIN : 0};
        if (poll(pf, (nfds_t)w->n, 20) <= 0) {
            if (w->n == 0) usleep(20000);
            continue;
        }
        for (int i = 0; i < w->n; i++) {
            if (!pf[i].revents || w->fd[i] < 0) continue;
            if (w->first < 0 && mark_left(dir, w->rank[i])) w->first = w->rank[i];
            close(w->fd[i]);
            w->fd[i] = -1;
        }
    }
    for (int i = 0; i < w->n; i++) if (w->fd[i] >= 0) close(w->fd[i]);
}

static pid_t g_child;
static void pass_term(int sig) { if (g_child > 0) kill(g_child, sig); }

int braid_launch(int np, int argc, char **argv)
{
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/braid-launch.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) { fprintf(stderr, "braid: -np: cannot make a folder in %s: %s\n", tmp ? tmp : "/tmp", strerror(errno)); return 1; }
    char *own[3] = {0};
    char **v = mpirun_argv(np, argc, argv, own);
    if (!v) { fprintf(stderr, "braid: -np: out of memory\n"); rmdir(dir); return 1; }
    setenv("BRAID_LAUNCH_DIR", dir, 1);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        execvp(v[0], v);
        fprintf(stderr, "braid: -np: cannot run %s: %s\n", v[0], strerror(errno));
        _exit(127);
    }
    int st = 0;
    static Watch w;
    w.first = -1;
    if (pid > 0) {
        /* the terminal's ^C reaches mpirun too, which ends the job: the
         * launcher waits for it; a SIGTERM to the launcher goes on to it */
        g_child = pid;
        signal(SIGINT, SIG_IGN);
        signal(SIGTERM, pass_term);
        watch_run(pid, dir, &w, &st);
    } else {
        fprintf(stderr, "braid: -np: cannot start mpirun: %s\n", strerror(errno));
        st = 1 << 8;
    }
    char ctx[200];
    read_ctx(dir, ctx, sizeof ctx);
    int left = left_marks(dir);
    rmdir(dir);
    free(v);
    for (int i = 0; i < 3; i++) free(own[i]);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
    int rank = w.first >= 0 ? w.first : left;
    if (rank < 0) return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
    /* mpirun exits with the dead rank's status, 128 + S for a signal S
     * (what a shell reports), the only signal it reports besides its
     * message text */
    int sig = WIFEXITED(st) && WEXITSTATUS(st) > 128 && WEXITSTATUS(st) < 128 + NSIG ? WEXITSTATUS(st) - 128 : 0;
    char how[64] = "";
    if (sig > 0) snprintf(how, sizeof how, " (signal %d: %s)", sig, strsignal(sig));
    fprintf(stderr, "braid: error: rank %d died%s during %s\n", rank, how, ctx[0] ? ctx : "the run");
    return 1;
}
