/* distfault.c: what a run says when a rank dies (docs/dist.md, "Faults").
 *
 * When a rank dies or is killed, mpirun ends the others with SIGTERM and
 * exits with the dead rank's status (137 for SIGKILL): the ranks cannot
 * change that, and rank 0's own last words may be lost while mpirun
 * tears the job down. braid's launcher (`braid -np N ...`, api/launch.c)
 * therefore runs mpirun itself and reports the fault from marks the
 * ranks leave in its folder (BRAID_LAUNCH_DIR), which survive any death:
 *   up.R   made when rank R starts (holding its process id), removed
 *          when it exits or is ended by mpirun's SIGTERM: a rank that
 *          ends with its mark still there died (killed, crashed); the
 *          launcher watches the ranks' ends and names the first such;
 *   ctx    rank 0's instruction now running, a shared mapping of the
 *          file that rank 0 updates in place (no write per instruction),
 *          so the launcher reads it even after a SIGKILL.
 * Under a plain mpirun (no launcher), rank 0 watches the ranks on its
 * machine itself: a thread polls a pidfd of each (exchanged at startup);
 * a worker ended by mpirun's SIGTERM first sets its flag in a mapping the
 * ranks on the machine share, so a worker that ends without its flag
 * before rank 0 stops the workers died by itself, and rank 0 (its watch
 * thread, or its own SIGTERM handler if that comes first) prints
 *   braid: error: rank R died (signal S: name) during instruction ...
 * and exits 1 at once. The signal comes from the dead rank's wait status
 * in /proc (its exit_code field), readable while the rank is a zombie,
 * that is until mpirun reaps it; when mpirun was first, the line says
 * the status was not seen. mpirun's own status (the dead rank's, 137 for
 * SIGKILL) and its message are OpenMPI's. Ranks on other machines are
 * not watched: rank 0's SIGTERM handler prints the instruction when
 * mpirun ends the job. */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "distint.h"

#define CTX_LEN 160
static char g_ctx_buf[CTX_LEN] = "no instruction";
static char *g_ctx = g_ctx_buf;
static char g_up[4096]; /* this rank's up mark ("" without the launcher) */

void dist_set_context(const char *what, int line)
{
    snprintf(g_ctx, CTX_LEN, "instruction '%s' (line %d)", what ? what : "?", line);
}

/* Under the launcher: this rank did not die, mpirun ended it. */
static void on_term_marked(int sig)
{
    (void)sig;
    unlink(g_up);
    _exit(1);
}

static void unmark(void)
{
    if (g_up[0]) unlink(g_up);
}

/* rank 0's context lives in DIR/ctx (a shared mapping); on failure it
 * stays in the private buffer (the launcher then names no instruction) */
static void map_ctx(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/ctx", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return;
    if (ftruncate(fd, CTX_LEN) == 0) {
        void *p = mmap(NULL, CTX_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p != MAP_FAILED) {
            g_ctx = p;
            memcpy(g_ctx, g_ctx_buf, CTX_LEN);
        }
    }
    close(fd);
}

/* ---- rank 0's watch over the ranks on its machine ---- */

/* A rank as the others see it: its process id, boot-relative start time
 * (/proc stat field 22: tells a reused id apart) and machine. */
typedef struct Peer {
    int32_t pid;
    uint64_t start;
    char host[64];
} Peer;

static Peer *g_peers;          /* rank 0: every rank's */
static volatile int g_stopping; /* rank 0 stops the workers: exits are expected */

/* Field k (1-based, k >= 3) of /proc/pid/stat as text, after the command
 * name (which may hold spaces); false when the process is gone. */
static bool stat_field(int32_t pid, int k, char *out, size_t n, char *state)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY);
    if (fd < 0) return false;
    ssize_t len = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (len <= 0) return false;
    buf[len] = 0;
    char *p = strrchr(buf, ')');
    if (!p) return false;
    p += 2;   /* field 3: the state */
    if (state) *state = *p;
    for (int f = 3; f < k && p; f++) {
        p = strchr(p, ' ');
        if (p) p++;
    }
    if (!p) return false;
    size_t m = strcspn(p, " \n");
    if (m >= n) m = n - 1;
    memcpy(out, p, m);
    out[m] = 0;
    return true;
}

static uint64_t start_time(int32_t pid)
{
    char v[32];
    return stat_field(pid, 22, v, sizeof v, NULL) ? strtoull(v, NULL, 10) : 0;
}

/* Signal names, filled before any handler can run (strsignal is not
 * async-signal-safe). */
static char g_signame[65][40];

/* How peer p ended, from its zombie's wait status (exit_code, field 52)
 * while mpirun has not reaped it yet: " (signal S: name)" or " (exit
 * status N)", else a note that its status was not seen. Async-signal-
 * safe but for snprintf of numbers. */
static void death_how(const Peer *p, char *how, size_t n)
{
    char v[32], st = 0, t[32];
    if (stat_field(p->pid, 22, t, sizeof t, NULL) && strtoull(t, NULL, 10) == p->start &&
        stat_field(p->pid, 52, v, sizeof v, &st) && st == 'Z') {
        int code = atoi(v), sig = code & 0x7f;
        if (sig) snprintf(how, n, " (signal %d: %s)", sig, sig < 65 ? g_signame[sig] : "?");
        else snprintf(how, n, " (exit status %d)", (code >> 8) & 0xff);
        return;
    }
    snprintf(how, n, " (mpirun collected its status first: it names the signal)");
}

static void report_death(int rank, const Peer *p)
{
    char how[96], msg[400];
    death_how(p, how, sizeof how);
    char ctx[CTX_LEN];
    memcpy(ctx, g_ctx, CTX_LEN);
    ctx[CTX_LEN - 1] = 0;
    int n = snprintf(msg, sizeof msg, "braid: error: rank %d died%s during %s\n", rank, how, ctx);
    if (n > 0) (void)!write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
    _exit(1);
}

/* Rank 0's watch: pidfds of the workers on its machine (g_fd_rank[i] is
 * fd i's rank), and one flag per rank in a mapping the ranks on its
 * machine share, which a worker sets when mpirun's SIGTERM ends it. A
 * rank that ended without its flag died by itself (killed, crashed):
 * mpirun ends the others only after it, so flags, not timing, tell the
 * dead rank from the ranks mpirun ended because of it. */
static int g_nfd;
static int *g_fds, *g_fd_rank;
static struct pollfd *g_pf;
static volatile uint8_t *g_ended;

static void on_term_worker(int sig)
{
    if (g_ended) g_ended[g_rank] = 1;
    signal(sig, SIG_DFL);
    raise(sig);
}

/* The fd index of the lowest rank that ended by itself, -1 if none yet
 * (async-signal-safe: rank 0's SIGTERM handler asks too). */
static int dead_fd(void)
{
    if (!g_pf) return -1;
    for (int i = 0; i < g_nfd; i++) g_pf[i] = (struct pollfd){.fd = g_fds[i], .events = POLLIN};
    if (poll(g_pf, (nfds_t)g_nfd, 0) <= 0) return -1;
    for (int i = 0; i < g_nfd; i++)
        if (g_pf[i].revents && !(g_ended && g_ended[g_fd_rank[i]])) return i;
    return -1;
}

static void *watch(void *arg)
{
    (void)arg;
    struct pollfd *pf = calloc((size_t)g_nfd, sizeof *pf);
    if (!pf) return NULL;
    for (int i = 0; i < g_nfd; i++) pf[i] = (struct pollfd){.fd = g_fds[i], .events = POLLIN};
    for (;;) {
        if (poll(pf, (nfds_t)g_nfd, -1) < 0) continue;
        if (g_stopping) break;
        int d = dead_fd();
        if (d >= 0 && !g_stopping) report_death(g_fd_rank[d], &g_peers[g_fd_rank[d]]);
        /* ended by mpirun: rank 0's SIGTERM comes next */
        for (int i = 0; i < g_nfd; i++) if (pf[i].revents) pf[i].events = 0;
    }
    free(pf);
    return NULL;
}

/* The flags' mapping: rank 0 makes the file and broadcasts its name
 * (empty: no watch), the ranks that see it map it, rank 0 removes the
 * name once all have (collective). */
static void map_flags(bool watching)
{
    char path[512] = "";
    int fd = -1;
    if (g_rank == 0 && watching) {
        const char *tmp = getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/braid-ranks.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        fd = mkstemp(path);
        if (fd < 0 || ftruncate(fd, g_size) != 0) path[0] = 0;
    }
    MPI_Bcast(path, (int)sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (path[0] && g_rank != 0) fd = open(path, O_RDWR);
    if (path[0] && fd >= 0) {
        void *p = mmap(NULL, (size_t)g_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p != MAP_FAILED) g_ended = p;
    }
    if (fd >= 0) close(fd);
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == 0 && path[0]) unlink(path);
    if (g_rank != 0 && g_ended) signal(SIGTERM, on_term_worker);
}

/* Every rank's identity to rank 0 (collective); rank 0 then watches the
 * workers on its machine with pidfds (Linux 5.3; without them, nothing
 * is watched and mpirun's SIGTERM is what rank 0 sees). */
static void watch_peers(bool watching)
{
    for (int s = 1; s < 65; s++) snprintf(g_signame[s], sizeof g_signame[s], "%s", strsignal(s));
    Peer me = {.pid = (int32_t)getpid()};
    me.start = start_time(me.pid);
    gethostname(me.host, sizeof me.host - 1);
    g_peers = g_rank == 0 ? calloc((size_t)g_size, sizeof *g_peers) : NULL;
    MPI_Gather(&me, (int)sizeof me, MPI_BYTE, g_peers, (int)sizeof me, MPI_BYTE, 0, MPI_COMM_WORLD);
    map_flags(watching && g_size > 1);
    if (g_rank != 0 || !g_peers || !watching) return;
    g_fds = calloc((size_t)g_size, sizeof *g_fds);
    g_fd_rank = calloc((size_t)g_size, sizeof *g_fd_rank);
    g_pf = calloc((size_t)g_size, sizeof *g_pf);
    if (!g_fds || !g_fd_rank || !g_pf) { free(g_pf); g_pf = NULL; return; }
    for (int r = 1; r < g_size; r++) {
        if (strcmp(g_peers[r].host, me.host)) continue;
        int fd = (int)syscall(SYS_pidfd_open, (pid_t)g_peers[r].pid, 0);
        if (fd < 0) continue;
        g_fds[g_nfd] = fd, g_fd_rank[g_nfd] = r, g_nfd++;
    }
    pthread_t t;
    if (g_nfd > 0 && pthread_create(&t, NULL, watch, NULL) == 0) pthread_detach(t);
}

/* Plain mpirun: rank 0 names the rank that died when its watch knows it
 * (the SIGTERM may come before the watch thread ran), else says what it
 * was running; exits 1 (a signal handler: write() only). */
static void on_term(int sig)
{
    (void)sig;
    int d = dead_fd();
    if (d >= 0) report_death(g_fd_rank[d], &g_peers[g_fd_rank[d]]);
    char msg[400];
    int n = snprintf(msg, sizeof msg,
                     "braid: error: the distributed run was ended by mpirun during %s: a rank died or was "
                     "killed (mpirun names it)\n",
                     g_ctx);
    if (n > 0) (void)!write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
    _exit(1);
}

void fault_stopping(void) { g_stopping = 1; }

void fault_init(void)
{
    const char *dir = getenv("BRAID_LAUNCH_DIR");
    bool launched = dir && *dir;
    watch_peers(!launched);
    if (!launched) {
        if (g_rank == 0) signal(SIGTERM, on_term);
        return;
    }
    snprintf(g_up, sizeof g_up, "%s/up.%d", dir, g_rank);
    int fd = open(g_up, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) { g_up[0] = 0; return; }
    /* the process id, for the launcher's watch (api/launch.c) */
    char pid[24];
    int n = snprintf(pid, sizeof pid, "%d\n", (int)getpid());
    (void)!write(fd, pid, (size_t)n);
    close(fd);
    atexit(unmark);
    signal(SIGTERM, on_term_marked);
    if (g_rank == 0) map_ctx(dir);
}
