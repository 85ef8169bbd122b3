/* launch.c: `braid -np N ...`, the launcher that runs mpirun and turns a
 * rank's death into a clear error (docs/dist.md, "Faults").
 *
 * mpirun exits with a dead rank's own status (137 for SIGKILL) and may
 * drop rank 0's last message while it ends the job. The launcher makes
 * a folder for the ranks' marks (dist/distfault.c: up.R while rank R
 * lives, ctx with rank 0's instruction), runs mpirun with its standard
 * error through a pipe (forwarded as it comes, and read for mpirun's
 * "process rank R ... exited on signal S" line), and after the run names
 * the dead rank, its signal and rank 0's instruction, exiting 1. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* mpirun's line about a rank that died (OpenMPI: "... process rank 2
 * with PID 123 on node h exited on signal 9 (Killed)."). */
static void scan_line(const char *line, int *rank, int *sig)
{
    const char *p = strstr(line, "process rank ");
    const char *q = strstr(line, "exited on signal ");
    if (!p || !q || *rank >= 0) return;
    *rank = atoi(p + strlen("process rank "));
    *sig = atoi(q + strlen("exited on signal "));
}

/* Forwards mpirun's standard error, scanning its lines. */
static void forward(int fd, int *rank, int *sig)
{
    char line[1024];
    size_t len = 0;
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) != 0) {
        if (n < 0) {
            if (errno == EINTR) continue;
            break;
        }
        (void)!write(2, buf, (size_t)n);
        for (ssize_t i = 0; i < n; i++) {
            if (buf[i] == '\n' || len == sizeof line - 1) {
                line[len] = 0;
                scan_line(line, rank, sig);
                len = 0;
            } else {
                line[len++] = buf[i];
            }
        }
    }
    line[len] = 0;
    scan_line(line, rank, sig);
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
    int pfd[2];
    if (!v || pipe(pfd)) { fprintf(stderr, "braid: -np: out of memory or pipes\n"); rmdir(dir); return 1; }
    setenv("BRAID_LAUNCH_DIR", dir, 1);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pfd[1], 2);
        close(pfd[0]);
        close(pfd[1]);
        execvp(v[0], v);
        fprintf(stderr, "braid: -np: cannot run %s: %s\n", v[0], strerror(errno));
        _exit(127);
    }
    close(pfd[1]);
    int rank = -1, sig = 0, st = 0;
    if (pid > 0) {
        /* the terminal's ^C reaches mpirun too, which ends the job: the
         * launcher waits for it; a SIGTERM to the launcher goes on to it */
        g_child = pid;
        signal(SIGINT, SIG_IGN);
        signal(SIGTERM, pass_term);
        forward(pfd[0], &rank, &sig);
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    } else {
        fprintf(stderr, "braid: -np: cannot start mpirun: %s\n", strerror(errno));
        st = 1 << 8;
    }
    close(pfd[0]);
    char ctx[200];
    read_ctx(dir, ctx, sizeof ctx);
    int left = left_marks(dir);
    rmdir(dir);
    free(v);
    for (int i = 0; i < 3; i++) free(own[i]);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
    if (rank < 0) rank = left;
    if (rank < 0) return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
    char how[64] = "";
    if (sig > 0) snprintf(how, sizeof how, " (signal %d: %s)", sig, strsignal(sig));
    fprintf(stderr, "braid: error: rank %d died%s during %s\n", rank, how, ctx[0] ? ctx : "the run");
    return 1;
}
