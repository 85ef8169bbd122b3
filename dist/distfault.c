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
 * Under a plain mpirun (no launcher), every machine's lowest rank (its
 * leader) traces the other ranks of its machine (ptrace), so it sees a
 * rank's end with its signal before mpirun's daemon can collect it; a
 * rank ended by mpirun's SIGTERM first sets its flag in a mapping the
 * ranks of its machine share, so a rank that ends without its flag died
 * by itself. Rank 0 then prints
 *   braid: error: rank R died (signal S: name) during instruction ...
 * and exits 1; other machines' leaders send the death to rank 0 over a
 * TCP line first (kept alive by TCP keep-alive probes: the heartbeat),
 * whose end without notice is the leader's own death. Where tracing is
 * not allowed, a pidfd tells the end and the status is read from the
 * dead rank's zombie in /proc while mpirun has not collected it
 * (docs/dist.md, "Faults").
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
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

/* ---- the watch over the ranks (plain mpirun) ---- */

/* A rank as the others see it: its process id, boot-relative start time
 * (/proc stat field 22: tells a reused id apart) and machine (its host
 * name, or BRAID_HOST_ID where a test places ranks on simulated hosts). */
typedef struct Peer {
    int32_t pid;
    uint64_t start;
    char host[64];
} Peer;

static Peer *g_peers;          /* every rank's */
static int g_leader;           /* the lowest rank on this rank's machine */
static volatile int g_stopping; /* the run is ending: exits are expected */
static volatile uint8_t *g_ended; /* per rank of this machine: ended by mpirun */
static int g_up_sock = -1;     /* a machine's leader (not rank 0's): its line to rank 0 */
static int *g_socks, *g_sock_rank, g_nsock; /* rank 0: the other machines' leaders */
static volatile uint8_t *g_sock_term; /* rank 0: that leader was ended by mpirun */
static int g_reported;         /* rank 0: a death was reported (once) */
static int *g_pidfd;           /* rank 0: pidfds of the ranks it could not trace (-1) */
static int g_ntraced, g_nuntraced; /* rank 0: its machine's ranks traced, watched by pidfd */
static sem_t g_armed;          /* a watch thread has attached (or found it cannot) */
static bool g_no_trace;        /* BRAID_NO_PTRACE=1 (tests): watch by pidfd as
                                  where tracing is not allowed */

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

/* How a rank ended: sig > 0 a signal, else code >= 0 an exit status,
 * else why its status is not known (HOW_*). */
enum { HOW_RACED = -1, HOW_REMOTE = -2, HOW_HUNG = -3, HOW_FROZEN = -4 };

/* The other machines' leaders send a heartbeat note every HB_EVERY_MS;
 * rank 0 takes HB_SILENCE_S seconds without a note from a line as a
 * frozen machine (its leader stopped, SIGSTOP or a hung kernel, while
 * the kernel may still answer TCP keep-alive probes). The silence is
 * ten beats: a loaded machine delays a sleeping thread by far less. */
#define HB_EVERY_MS 1000
#define HB_SILENCE_S 10

static void how_text(int sig, int code, char *how, size_t n)
{
    if (sig > 0) snprintf(how, n, " (signal %d: %s)", sig, sig < 65 ? g_signame[sig] : "?");
    else if (code >= 0) snprintf(how, n, " (exit status %d)", code);
    else if (code == HOW_REMOTE) snprintf(how, n, " (on another machine, with the rank that watched it)");
    else if (code == HOW_HUNG) snprintf(how, n, " (its machine stopped answering)");
    else if (code == HOW_FROZEN)
        snprintf(how, n, " (no heartbeat from its machine for %d s: frozen, stopped or cut off)", HB_SILENCE_S);
    else snprintf(how, n, " (mpirun collected its status first, as braid may not trace its ranks here: "
                          "mpirun names the signal)");
}

/* A rank's end from its zombie's wait status (exit_code, field 52) while
 * its parent has not reaped it yet: for a rank braid could not trace. */
static void zombie_status(const Peer *p, int *sig, int *code)
{
    char v[32], st = 0, t[32];
    *sig = 0, *code = HOW_RACED;
    if (stat_field(p->pid, 22, t, sizeof t, NULL) && strtoull(t, NULL, 10) == p->start &&
        stat_field(p->pid, 52, v, sizeof v, &st) && st == 'Z') {
        int c = atoi(v);
        *sig = c & 0x7f;
        if (!*sig) *code = (c >> 8) & 0xff;
    }
}

/* Rank 0: says that rank died and how, and exits 1 (once, whichever
 * thread or handler knows first; async-signal-safe but for snprintf of
 * numbers). */
static void report_death(int rank, int sig, int code)
{
    if (__atomic_exchange_n(&g_reported, 1, __ATOMIC_SEQ_CST))
        for (;;) pause();
    char how[200], msg[600];
    how_text(sig, code, how, sizeof how);
    char ctx[CTX_LEN];
    memcpy(ctx, g_ctx, CTX_LEN);
    ctx[CTX_LEN - 1] = 0;
    int n = snprintf(msg, sizeof msg, "braid: error: rank %d %s%s during %s\n", rank,
                     code == HOW_FROZEN ? "stopped answering" : "died", how, ctx);
    if (n > 0) (void)!write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
    _exit(1);
}

/* A message from a machine's leader to rank 0: 'D' rank, signal, code
 * (a death it saw), 'T' (mpirun is ending it) or 'H' (a heartbeat). */
typedef struct Note { char kind; int32_t rank, sig, code; } Note;

static void send_note(const Note *m)
{
    if (g_up_sock >= 0) (void)!write(g_up_sock, m, sizeof *m);
}

/* A rank on this machine ended (sig/code as how_text): an unexpected end
 * goes to rank 0 (reported here on rank 0's machine, sent by the
 * machine's leader elsewhere). */
static void rank_ended(int r, int sig, int code)
{
    bool expected = g_stopping || (g_ended && g_ended[r]) || (sig == 0 && code == 0);
    if (expected) return;
    if (g_rank == 0) report_death(r, sig, code);
    Note m = {'D', r, sig, code};
    send_note(&m);
}

/* Watches rank r of this machine: traced (PTRACE_SEIZE), its end is seen
 * before its parent (mpirun's daemon) can reap it, so its signal is
 * always known, and reported before mpirun learns of it; where tracing
 * is not allowed, a pidfd says when it ended and the status is read from
 * its zombie if mpirun has not reaped it yet. */
static void *trace_rank(void *arg)
{
    int r = (int)(intptr_t)arg;
    pid_t pid = g_peers[r].pid;
    if (g_no_trace || ptrace(PTRACE_SEIZE, pid, NULL, NULL) != 0) {
        int fd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (g_pidfd) g_pidfd[r] = fd;
        __atomic_add_fetch(&g_nuntraced, 1, __ATOMIC_RELAXED);
        sem_post(&g_armed);
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        while (fd >= 0 && poll(&pf, 1, -1) < 0) {}
        int sig, code;
        zombie_status(&g_peers[r], &sig, &code);
        if (fd >= 0) rank_ended(r, sig, code);
        return NULL;
    }
    __atomic_add_fetch(&g_ntraced, 1, __ATOMIC_RELAXED);
    sem_post(&g_armed);
    for (;;) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WSTOPPED | __WALL | WNOWAIT) != 0) {
            if (errno == EINTR) continue;
            return NULL;
        }
        int st = 0;
        if (si.si_code == CLD_TRAPPED || si.si_code == CLD_STOPPED) {
            /* a signal on its way to the rank: let it through */
            if (waitpid(pid, &st, __WALL) < 0) return NULL;
            int sig = WIFSTOPPED(st) && (st >> 16) == 0 ? WSTOPSIG(st) : 0;
            ptrace(PTRACE_CONT, pid, NULL, (void *)(intptr_t)sig);
            continue;
        }
        bool killed = si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED;
        rank_ended(r, killed ? si.si_status : 0, killed ? -1 : si.si_status);
        /* reaped now: its parent learns of the end after the report */
        waitpid(pid, &st, __WALL);
        return NULL;
    }
}

/* Rank 0: what the other machines' leaders say. EOF without 'T' before
 * the end: the leader itself died (or its machine stopped answering:
 * TCP keep-alive probes, the heartbeat, found no one). */
static bool read_note(int i)
{
    Note m;
    ssize_t n = read(g_socks[i], &m, sizeof m);
    if (n == (ssize_t)sizeof m && m.kind == 'T') { g_sock_term[i] = 1; return true; }
    if (n == (ssize_t)sizeof m && m.kind == 'D' && m.rank > 0 && m.rank < g_size) report_death(m.rank, m.sig, m.code);
    if (n > 0) return true;
    if (g_stopping || g_sock_term[i]) return false;
    report_death(g_sock_rank[i], 0, n < 0 && errno == ETIMEDOUT ? HOW_HUNG : HOW_REMOTE);
    return false;
}

static void *watch_remote(void *arg)
{
    (void)arg;
    struct pollfd *pf = calloc((size_t)g_nsock, sizeof *pf);
    int64_t *heard = calloc((size_t)g_nsock, sizeof *heard);
    if (!pf || !heard) { free(pf), free(heard); return NULL; }
    for (int i = 0; i < g_nsock; i++) {
        pf[i] = (struct pollfd){.fd = g_socks[i], .events = POLLIN};
        heard[i] = br_now_ns();
    }
    for (;;) {
        if (poll(pf, (nfds_t)g_nsock, HB_EVERY_MS) < 0) continue;
        int64_t now = br_now_ns();
        for (int i = 0; i < g_nsock; i++) {
            if (pf[i].fd < 0) continue;
            if (pf[i].revents) {
                heard[i] = now;
                if (!read_note(i)) pf[i].fd = -1;
            } else if (now - heard[i] > (int64_t)HB_SILENCE_S * 1000000000 && !g_stopping && !g_sock_term[i]) {
                report_death(g_sock_rank[i], 0, HOW_FROZEN);
            }
        }
    }
    return NULL;
}

/* A machine's leader (not rank 0's): the heartbeat on its line. */
static void *beat(void *arg)
{
    (void)arg;
    Note m = {'H', g_rank, 0, 0};
    for (;;) {
        struct timespec ts = {HB_EVERY_MS / 1000, (HB_EVERY_MS % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        send_note(&m);
    }
    return NULL;
}

static void on_term_worker(int sig)
{
    if (g_ended) g_ended[g_rank] = 1;
    Note m = {'T', g_rank, 0, 0};
    send_note(&m);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void host_of(char *out, size_t n)
{
    const char *sim = getenv("BRAID_HOST_ID");
    memset(out, 0, n);
    if (sim && *sim) snprintf(out, n, "%s", sim);
    else gethostname(out, n - 1);
}

/* The ended flags of the ranks on this machine: its leader makes the
 * file and sends its name over comm (empty: none), the others map it,
 * the leader removes the name once all have (collective over comm). */
static void map_flags(MPI_Comm comm, bool leader)
{
    char path[512] = "";
    int fd = -1;
    if (leader) {
        const char *tmp = getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/braid-ranks.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        fd = mkstemp(path);
        if (fd < 0 || ftruncate(fd, g_size) != 0) path[0] = 0;
    }
    MPI_Bcast(path, (int)sizeof path, MPI_CHAR, 0, comm);
    if (path[0] && !leader) fd = open(path, O_RDWR);
    if (path[0] && fd >= 0) {
        void *p = mmap(NULL, (size_t)g_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p != MAP_FAILED) g_ended = p;
    }
    if (fd >= 0) close(fd);
    MPI_Barrier(comm);
    if (leader && path[0]) unlink(path);
}

/* TCP keep-alive as the other machines' heartbeat: after 5 s of silence
 * a probe every 2 s, 3 unanswered end the connection (ETIMEDOUT). */
static void keepalive(int fd)
{
    int on = 1, idle = 5, intvl = 2, cnt = 3;
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
}

#define MAX_ADDRS 16

/* The other machines' leaders open a TCP line to rank 0 (collective):
 * rank 0 listens and sends its port and IPv4 addresses; each leader
 * connects to the first that answers and sends its rank. */
static void connect_leaders(int nremote)
{
    struct { uint16_t port; int32_t n; uint32_t addr[MAX_ADDRS]; } at = {0};
    int ls = -1;
    if (g_rank == 0 && nremote > 0 && (ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0) {
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
        socklen_t len = sizeof sa;
        if (bind(ls, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(ls, nremote + 4) == 0 &&
            getsockname(ls, (struct sockaddr *)&sa, &len) == 0) {
            at.port = sa.sin_port;
            struct ifaddrs *ifs = NULL;
            if (getifaddrs(&ifs) == 0)
                for (struct ifaddrs *x = ifs; x && at.n < MAX_ADDRS; x = x->ifa_next)
                    if (x->ifa_addr && x->ifa_addr->sa_family == AF_INET)
                        at.addr[at.n++] = ((struct sockaddr_in *)x->ifa_addr)->sin_addr.s_addr;
            freeifaddrs(ifs);
        }
    }
    MPI_Bcast(&at, (int)sizeof at, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (g_rank != 0 && g_leader == g_rank && at.port) {
        for (int i = 0; i < at.n && g_up_sock < 0; i++) {
            int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = at.port, .sin_addr.s_addr = at.addr[i]};
            if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
                int32_t me = g_rank;
                if (write(fd, &me, sizeof me) == (ssize_t)sizeof me) {
                    keepalive(fd);
                    g_up_sock = fd;
                    pthread_t t;
                    if (pthread_create(&t, NULL, beat, NULL) == 0) pthread_detach(t);
                    continue;
                }
            }
            if (fd >= 0) close(fd);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (ls < 0) return;
    /* every leader that reached rank 0 is queued by now */
    fcntl(ls, F_SETFL, O_NONBLOCK);
    g_socks = calloc((size_t)nremote, sizeof *g_socks);
    g_sock_rank = calloc((size_t)nremote, sizeof *g_sock_rank);
    g_sock_term = calloc((size_t)nremote, 1);
    for (int fd; g_socks && g_sock_rank && g_sock_term && g_nsock < nremote &&
                 (fd = accept4(ls, NULL, NULL, SOCK_CLOEXEC)) >= 0;) {
        int32_t r = -1;
        if (read(fd, &r, sizeof r) == (ssize_t)sizeof r && r > 0 && r < g_size) {
            keepalive(fd);
            g_socks[g_nsock] = fd, g_sock_rank[g_nsock] = r, g_nsock++;
        } else {
            close(fd);
        }
    }
    close(ls);
    pthread_t t;
    if (g_nsock > 0 && pthread_create(&t, NULL, watch_remote, NULL) == 0) pthread_detach(t);
}

/* The watch (collective): every rank's identity to all; the ranks of a
 * machine share ended flags and let its leader (its lowest rank) trace
 * them; the leaders of other machines report to rank 0 over TCP. */
static void watch_peers(bool watching)
{
    for (int s = 1; s < 65; s++) snprintf(g_signame[s], sizeof g_signame[s], "%s", strsignal(s));
    const char *nt = getenv("BRAID_NO_PTRACE");
    g_no_trace = nt && !strcmp(nt, "1");
    Peer me = {.pid = (int32_t)getpid()};
    me.start = start_time(me.pid);
    host_of(me.host, sizeof me.host);
    g_peers = calloc((size_t)g_size, sizeof *g_peers);
    Peer *all = g_peers ? g_peers : calloc((size_t)g_size, sizeof *all);
    if (!all) { fprintf(stderr, "braid: out of memory\n"); MPI_Abort(MPI_COMM_WORLD, 1); }
    MPI_Allgather(&me, (int)sizeof me, MPI_BYTE, all, (int)sizeof me, MPI_BYTE, MPI_COMM_WORLD);
    g_peers = all;
    g_leader = g_rank;
    int nremote = 0;
    for (int r = g_size - 1; r >= 0; r--)
        if (!strcmp(all[r].host, me.host)) g_leader = r;
    for (int r = 1; r < g_size; r++) {
        bool first = true;
        for (int q = 0; q < r && first; q++) first = strcmp(all[q].host, all[r].host) != 0;
        nremote += first && strcmp(all[r].host, all[0].host) != 0;
    }
    MPI_Comm host;
    MPI_Comm_split(MPI_COMM_WORLD, g_leader, g_rank, &host);
    map_flags(host, g_leader == g_rank && watching && g_size > 1);
    MPI_Comm_free(&host);
    if (!watching || g_size < 2) return;
    if (g_rank != g_leader) {
        /* where Yama restricts tracing to ancestors, allow the leader */
        prctl(PR_SET_PTRACER, (unsigned long)all[g_leader].pid, 0, 0, 0);
        if (g_ended) signal(SIGTERM, on_term_worker);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    connect_leaders(nremote);
    if (g_rank != 0 && g_rank == g_leader) signal(SIGTERM, on_term_worker);
    if (g_rank != g_leader) return;
    if (g_rank == 0 && (g_pidfd = malloc((size_t)g_size * sizeof *g_pidfd)))
        for (int r = 0; r < g_size; r++) g_pidfd[r] = -1;
    /* the watch is armed before the script runs */
    sem_init(&g_armed, 0, 0);
    int armed = 0;
    for (int r = g_rank + 1; r < g_size; r++) {
        if (strcmp(all[r].host, me.host)) continue;
        pthread_t t;
        if (pthread_create(&t, NULL, trace_rank, (void *)(intptr_t)r) == 0) pthread_detach(t), armed++;
    }
    while (armed > 0)
        if (sem_wait(&g_armed) == 0) armed--;
}

/* Plain mpirun: rank 0 ended by mpirun names the rank that died where
 * its watch knows it (the SIGTERM may come before the watch threads
 * ran: a note from another machine's leader is read here), else says
 * what it was running; exits 1 (a signal handler: write() only). */
static void on_term(int sig)
{
    (void)sig;
    /* a rank rank 0 could not trace ended without its flag: it died */
    for (int r = 1; g_pidfd && r < g_size; r++) {
        struct pollfd pf = {.fd = g_pidfd[r], .events = POLLIN};
        if (pf.fd < 0 || poll(&pf, 1, 0) <= 0 || (g_ended && g_ended[r])) continue;
        int dsig, code;
        zombie_status(&g_peers[r], &dsig, &code);
        report_death(r, dsig, code);
    }
    if (g_nsock > 0) {
        struct pollfd pf[64];
        int n = g_nsock < 64 ? g_nsock : 64;
        for (int i = 0; i < n; i++) pf[i] = (struct pollfd){.fd = g_socks[i], .events = POLLIN};
        /* a leader's note is sent before mpirun can learn of the death */
        if (poll(pf, (nfds_t)n, 0) > 0)
            for (int i = 0; i < n; i++)
                if (pf[i].revents) read_note(i);
    }
    if (__atomic_load_n(&g_reported, __ATOMIC_SEQ_CST)) for (;;) pause();
    char msg[400];
    int n = snprintf(msg, sizeof msg,
                     "braid: error: the distributed run was ended by mpirun during %s: a rank died or was "
                     "killed (mpirun names it)\n",
                     g_ctx);
    if (n > 0) (void)!write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
    _exit(1);
}

void fault_stopping(void) { g_stopping = 1; }

void fault_reset(void) { snprintf(g_ctx, CTX_LEN, "no instruction"); }

void fault_print_stats(FILE *f)
{
    if (!g_pidfd && !g_nsock) return;
    fprintf(f, "  rank watch: %d ranks on this machine traced, %d by pidfd; %d other machines reporting\n",
            __atomic_load_n(&g_ntraced, __ATOMIC_RELAXED), __atomic_load_n(&g_nuntraced, __ATOMIC_RELAXED), g_nsock);
}

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
