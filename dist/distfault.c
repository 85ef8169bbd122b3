/* distfault.c: what a run says when a rank dies (docs/dist.md, "Faults").
 *
 * When a rank dies or is killed, mpirun ends the others with SIGTERM and
 * exits with the dead rank's status (137 for SIGKILL): the ranks cannot
 * change that, and rank 0's own last words may be lost while mpirun
 * tears the job down. braid's launcher (`braid -np N ...`, api/launch.c)
 * therefore runs mpirun itself and reports the fault from marks the
 * ranks leave in its folder (BRAID_LAUNCH_DIR), which survive any death:
 *   up.R   made when rank R starts, removed when it exits or is ended by
 *          mpirun's SIGTERM: one left after the run names a rank that
 *          died (killed, crashed);
 *   ctx    rank 0's instruction now running, a shared mapping of the
 *          file that rank 0 updates in place (no write per instruction),
 *          so the launcher reads it even after a SIGKILL.
 * Under a plain mpirun rank 0's SIGTERM handler prints the instruction. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

/* Plain mpirun: rank 0 says what it was running, then exits 1 (write()
 * only: a signal handler). */
static void on_term(int sig)
{
    (void)sig;
    char msg[400];
    int n = snprintf(msg, sizeof msg,
                     "braid: error: the distributed run was ended by mpirun during %s: a rank died or was "
                     "killed (mpirun names it)\n",
                     g_ctx);
    if (n > 0) (void)!write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
    _exit(1);
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

void fault_init(void)
{
    const char *dir = getenv("BRAID_LAUNCH_DIR");
    if (!dir || !*dir) {
        if (g_rank == 0) signal(SIGTERM, on_term);
        return;
    }
    snprintf(g_up, sizeof g_up, "%s/up.%d", dir, g_rank);
    int fd = open(g_up, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) { g_up[0] = 0; return; }
    close(fd);
    atexit(unmark);
    signal(SIGTERM, on_term_marked);
    if (g_rank == 0) map_ctx(dir);
}
