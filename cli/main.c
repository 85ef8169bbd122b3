/* main.c: the braid command, SystemDS-compatible:
 *   braid [-f] script.dml [-args a b ...] [-nvargs k=v ...] [-stats [N]]
 *         [-explain [hops|runtime|recompile_hops|dot|dot_all|recompile_dot]] [-config file]
 *         [-seed N] [-threads N]
 *   braid -s "script text" ...
 *   braid RUN-OPTIONS -then RUN-OPTIONS ...   (runs in order, one process)
 *   braid -help
 * Exit status 0 on success, 1 on any error in the script or its input. */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

#include "../include/braid.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: braid [-f] script.dml [options]\n"
        "       braid -s \"script text\" [options]\n"
        "options:\n"
        "  -args a b ...        positional script arguments ($1, $2, ...)\n"
        "  -nvargs k=v ...      named script arguments ($k)\n"
        "  -stats [N]           print timing and the N heaviest instructions (default 10)\n"
        "  -explain [hops|runtime|recompile_hops|dot|dot_all|codegen]\n"
        "                       print the plan (default: runtime); dot writes one Graphviz\n"
        "                       graph per statement block of the script and its functions\n"
        "                       to braid_plan/ (SVG too when Graphviz is installed);\n"
        "                       dot_all adds the builtin library's functions;\n"
        "                       recompile_dot writes the DAGs recompiled during the run\n"
        "                       (sizes known, fused operators in place) there instead\n"
        "  -config file.xml     SystemDS-style configuration (<root><sysds.key>v</sysds.key></root>)\n"
        "  -seed N              seed for rand()/sample() calls without a seed\n"
        "  -threads N           number of threads (default: all cores)\n"
        "  -exec MODE           singlenode, hybrid (default) or distributed (spark): under\n"
        "                       mpirun, operations over the memory budget run on all ranks\n"
        "  -np N                run on N MPI ranks: starts mpirun (BRAID_MPIRUN_OPTS: its\n"
        "                       options); a rank that dies is an error naming it\n"
        "  -gpu [force]         run operators on the OpenCL device where it pays (force:\n"
        "                       every operator the GPU backend has; docs/gpu.md)\n"
        "  -bindcheck           calls of DML functions print which value each parameter\n"
        "                       received (\"bind NAME FILE|p=VALUE|...|->|outputs\") and\n"
        "                       return empty outputs without running the body\n"
        "  -lineage [MODE...]   accepted as SystemDS's (dedup, reuse_full, reuse_partial,\n"
        "                       reuse_multilevel, reuse_hybrid, none, policy_*...): braid\n"
        "                       traces lineage for every script that calls lineage(), and\n"
        "                       reuses no results (the modes change no number)\n"
        "  -out FILE            this run's output (stdout and stderr; rank 0's) to FILE\n"
        "  -then OPTIONS...     then another run in the same process (under mpirun: the\n"
        "                       ranks stay up, their state and statistics reset between\n"
        "                       runs); the exit status is 1 when any run failed\n"
        "  -help                this text\n");
}

/* Folder of the builtin DML library: $BRAID_HOME/scripts/builtin, next to
 * the executable (../scripts/builtin), or the source tree's. */
static char *builtin_dir(const char *argv0)
{
    const char *home = getenv("BRAID_HOME");
    char buf[8192];
    if (home) {
        snprintf(buf, sizeof buf, "%s/scripts/builtin", home);
        return strdup(buf);
    }
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            snprintf(buf, sizeof buf, "%s/../scripts/builtin", exe);
            if (access(buf, R_OK) == 0) return strdup(buf);
        }
    }
#ifdef BRAID_SOURCE_DIR
    snprintf(buf, sizeof buf, "%s/scripts/builtin", BRAID_SOURCE_DIR);
    return strdup(buf);
#else
    (void)argv0;
    return strdup("scripts/builtin");
#endif
}

static bool is_opt(const char *s) { return s[0] == '-' && s[1] && s[1] != '-' && !(s[1] >= '0' && s[1] <= '9'); }

/* Allocation-failure injection of plain allocations (docs/DESIGN.md,
 * "Allocation failures"): the binary is linked with --wrap for malloc,
 * calloc and realloc, so braid's own calls of them come here; the
 * injection counter is base/base.c's (not part of the public API). */
extern _Bool br_alloc_fail_raw(void);
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t s);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t s);
void *__wrap_realloc(void *p, size_t n);
/* (a failure sets errno as the C library's does) */
static _Bool raw_fail(void)
{
    if (!br_alloc_fail_raw()) return 0;
    errno = ENOMEM;
    return 1;
}
void *__wrap_malloc(size_t n) { return raw_fail() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t s) { return raw_fail() ? NULL : __real_calloc(n, s); }
void *__wrap_realloc(void *p, size_t n) { return raw_fail() ? NULL : __real_realloc(p, n); }

/* OpenBLAS's pthread workers spin (sched_yield) after each threaded call
 * for 2^OPENBLAS_THREAD_TIMEOUT cycles before they sleep: 2^28 by
 * default, about 0.1 s, during which they share the cores with the
 * OpenMP team of braid's next operators. After the threaded products of
 * a data generation, the 256-row mini-batch loop of autoencoder_2layer
 * took 0.088-0.176 s, one and the same binary (docs/perf.md). 2^20
 * cycles (a few hundred microseconds) keeps them awake between
 * back-to-back BLAS calls (LAPACK's blocked steps); a sleeping worker
 * costs a wake-up, which only calls of 2^23 or more multiply-adds pay
 * (kernels/mm.c, BLAS_PAR_MIN). A value the user set is kept. */
#define OPENBLAS_TIMEOUT "20"

/* OpenBLAS reads its environment when it loads, before main(), and a
 * worker takes the timeout when it starts: read it again and restart the
 * workers (about 0.1 ms). The three are OpenBLAS's exported internals,
 * weak: with a BLAS that lacks them nothing happens. */
extern void openblas_read_env(void) __attribute__((weak));
extern int blas_thread_shutdown_(void) __attribute__((weak));
extern int blas_thread_init(void) __attribute__((weak));
static void openblas_timeout(void)
{
    if (!openblas_read_env || !blas_thread_shutdown_ || !blas_thread_init) return;
    openblas_read_env();
    blas_thread_shutdown_();
    blas_thread_init();
}

/* A word SystemDS's -lineage takes after it (DMLOptions: dedup, the
 * reuse kinds, none, estimate, the cache policies) */
static bool lineage_mode(const char *w)
{
    static const char *const modes[] = {"dedup", "reuse_full", "reuse_partial", "reuse_multilevel",
                                        "reuse_hybrid", "none", "estimate"};
    for (size_t k = 0; k < sizeof modes / sizeof *modes; k++)
        if (!strcmp(w, modes[k])) return true;
    return !strncmp(w, "policy_", 7);
}

/* One run's options from argv[*pi] up to "-then" or the end (*pi is
 * left there); names and vals: room for the run's arguments, owned (and
 * *nowned) the names allocated. 0, -1 (error printed), 2 (-help). */
static int parse_run(int argc, char **argv, int *pi, BraidRunOptions *o, const char **names, const char **vals,
                     char **owned, int *nowned)
{
    o->seed = -1, o->stats_top = 10, o->arg_names = names, o->arg_values = vals;
    int i = *pi;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-then")) break;
        else if (!strcmp(a, "-help") || !strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); return 2; }
        else if (!strcmp(a, "-f")) {
            if (i + 1 >= argc) { fprintf(stderr, "braid: -f needs a file\n"); return -1; }
            o->file = argv[++i];
        } else if (!strcmp(a, "-s")) {
            if (i + 1 >= argc) { fprintf(stderr, "braid: -s needs a script\n"); return -1; }
            o->text = argv[++i];
        } else if (!strcmp(a, "-stats")) {
            o->stats = true;
            if (i + 1 < argc && argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9') o->stats_top = atoi(argv[++i]);
        } else if (!strcmp(a, "-explain")) {
            o->explain = "runtime";
            if (i + 1 < argc && !is_opt(argv[i + 1]) &&
                (!strcmp(argv[i + 1], "hops") || !strcmp(argv[i + 1], "runtime") ||
                 !strcmp(argv[i + 1], "recompile_hops") || !strcmp(argv[i + 1], "recompile_runtime") ||
                 !strcmp(argv[i + 1], "dot") || !strcmp(argv[i + 1], "dot_all") || !strcmp(argv[i + 1], "codegen") ||
                 !strcmp(argv[i + 1], "recompile_dot")))
                o->explain = argv[++i];
        } else if (!strcmp(a, "-config")) {
            if (i + 1 >= argc) { fprintf(stderr, "braid: -config needs a file\n"); return -1; }
            o->config = argv[++i];
        } else if (!strcmp(a, "-seed")) {
            if (i + 1 >= argc) { fprintf(stderr, "braid: -seed needs a number\n"); return -1; }
            o->seed = atoll(argv[++i]);
        } else if (!strcmp(a, "-threads")) {
            if (i + 1 >= argc) { fprintf(stderr, "braid: -threads needs a number\n"); return -1; }
            char *end;
            long t = strtol(argv[++i], &end, 10);
            /* the upper bound (BR_MAX_THREADS) is checked by braid_run */
            if (end == argv[i] || *end || t < 1 || t > 1 << 30) {
                fprintf(stderr, "braid: -threads needs a positive number, not '%s'\n", argv[i]);
                return -1;
            }
            o->threads = (int)t;
        } else if (!strcmp(a, "-gpu")) {
            /* SystemDS's -gpu [force] */
            o->gpu = "on";
            if (i + 1 < argc && !strcmp(argv[i + 1], "force")) o->gpu = argv[++i];
        } else if (!strcmp(a, "-exec")) {
            /* SystemDS's execution mode: singlenode, hybrid, spark (here:
             * distributed over MPI ranks) */
            if (i + 1 >= argc) { fprintf(stderr, "braid: -exec needs a mode\n"); return -1; }
            o->exec = argv[++i];
        } else if (!strcmp(a, "-lineage")) {
            /* SystemDS's -lineage and its modes (no effect on results) */
            while (i + 1 < argc && lineage_mode(argv[i + 1])) i++;
        } else if (!strcmp(a, "-bindcheck")) {
            o->bindcheck = true;
        } else if (!strcmp(a, "-out")) {
            if (i + 1 >= argc) { fprintf(stderr, "braid: -out needs a file\n"); return -1; }
            o->out = argv[++i];
        } else if (!strcmp(a, "-args")) {
            int k = 1;
            while (i + 1 < argc && !is_opt(argv[i + 1])) {
                char *nm = malloc(16);
                snprintf(nm, 16, "%d", k++);
                owned[(*nowned)++] = nm;
                names[o->nargs] = nm;
                vals[o->nargs++] = argv[++i];
            }
        } else if (!strcmp(a, "-nvargs")) {
            while (i + 1 < argc && !is_opt(argv[i + 1])) {
                const char *kv = argv[++i];
                const char *eq = strchr(kv, '=');
                if (!eq || eq == kv) {
                    fprintf(stderr, "braid: -nvargs expects name=value, got '%s'\n", kv);
                    return -1;
                }
                char *nm = strndup(kv, (size_t)(eq - kv));
                owned[(*nowned)++] = nm;
                names[o->nargs] = nm;
                vals[o->nargs++] = eq + 1;
            }
        } else if (a[0] != '-' && !o->file && !o->text) {
            o->file = a;
        } else {
            fprintf(stderr, "braid: unknown option '%s' (see braid -help)\n", a);
            return -1;
        }
    }
    *pi = i;
    if (!o->file && !o->text) { usage(stderr); return -1; }
    return 0;
}

/* The CLI owns its process, so it, not the library, handles these: the
 * registered compile sessions and temporaries go (braid_signal_cleanup:
 * async-signal-safe), then braid exits as a shell reports a death by the
 * signal. Writes publish by rename, so no partial output is left. */
static void on_fatal_signal(int sig)
{
    braid_signal_cleanup();
    _exit(128 + sig);
}

int main(int argc, char **argv)
{
    /* OpenMP threads spin after each parallel region (libgomp's default:
     * long); on 2 loaded cores that took the time slices other threads
     * needed and slowed iterative algorithms 2-4x, while no spinning at
     * all (PASSIVE) costs ~15% on a quiet machine. A short spin keeps most
     * of both. libgomp reads it when it loads: set it and start again
     * (with OpenBLAS's timeout, which the new process then reads when it
     * loads; without the restart, openblas_timeout() applies it). */
    bool blas_timeout = !getenv("OPENBLAS_THREAD_TIMEOUT");
    if (blas_timeout) setenv("OPENBLAS_THREAD_TIMEOUT", OPENBLAS_TIMEOUT, 1);
    bool restart = false;
    if (!getenv("OMP_WAIT_POLICY") && !getenv("GOMP_SPINCOUNT")) {
        setenv("GOMP_SPINCOUNT", "20000", 1);
        restart = true;
    }
    /* glibc's malloc advises its heaps and mapped chunks to use
     * transparent huge pages (glibc.malloc.hugetlb=1, read at start):
     * braid's sparse arrays and mid-sized blocks come from malloc, and a
     * first touch costs a fault per page, about 10 us per 4 KB page on the
     * benchmark VM against 0.1-3 ms per 2 MB page (docs/perf.md "Fresh
     * memory"). A setting the user made stays. */
    const char *tun = getenv("GLIBC_TUNABLES");
    if (!tun || !strstr(tun, "glibc.malloc.hugetlb")) {
        char buf[4096];
        int n = snprintf(buf, sizeof buf, "%s%sglibc.malloc.hugetlb=1", tun ? tun : "",
                         tun && *tun ? ":" : "");
        if (n > 0 && (size_t)n < sizeof buf) {
            setenv("GLIBC_TUNABLES", buf, 1);
            restart = true;
        }
    }
    if (restart) execv("/proc/self/exe", argv);
    if (blas_timeout) openblas_timeout();
    /* glibc's malloc serves blocks above its mmap threshold (dynamic,
     * from 128 KB) by mmap and gives the heap top back above twice that,
     * so a loop over mid-sized blocks (the 256 x 100 mini-batches of
     * autoencoder_2layer, 200 KB each) paid fresh zero pages on nearly
     * every block: 3.5x the page faults and a quarter of the run time.
     * Fixed thresholds keep freed blocks up to 32 MB for reuse. */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
    /* SIGTERM/SIGINT: running compiles killed, temporaries removed, exit
     * status 128 + the signal (docs/DESIGN.md "Signals"); a signal the
     * parent ignores stays ignored */
    struct sigaction sa = {.sa_handler = on_fatal_signal};
    sigfillset(&sa.sa_mask);
    int fatal[] = {SIGTERM, SIGINT};
    for (int i = 0; i < 2; i++) {
        struct sigaction old_sa;
        if (sigaction(fatal[i], NULL, &old_sa) == 0 && old_sa.sa_handler != SIG_IGN) sigaction(fatal[i], &sa, NULL);
    }
    /* -np N: braid launches mpirun itself (docs/dist.md, "Faults") */
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "-np")) continue;
        char *end;
        long np = strtol(argv[i + 1], &end, 10);
        if (end == argv[i + 1] || *end || np < 1 || np > 1 << 20) {
            fprintf(stderr, "braid: -np needs a positive number of ranks, not '%s'\n", argv[i + 1]);
            return 1;
        }
        if (getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK")) {
            fprintf(stderr, "braid: -np under mpirun: give the ranks to mpirun or to braid, not both\n");
            return 1;
        }
        memmove(argv + i, argv + i + 2, sizeof(char *) * (size_t)(argc - i - 1));
        return braid_launch((int)np, argc - 2, argv);
    }
    /* runs separated by -then: one process (under mpirun: MPI up once)
     * runs them in order (braid_run_all) */
    int nruns = 1;
    for (int i = 1; i < argc; i++) nruns += !strcmp(argv[i], "-then");
    BraidRunOptions *runs = calloc((size_t)nruns, sizeof *runs);
    const char **names = calloc((size_t)argc + 1, sizeof(char *));
    const char **vals = calloc((size_t)argc + 1, sizeof(char *));
    char **owned = calloc((size_t)argc + 1, sizeof(char *));
    int nowned = 0, used = 0, rc = 0;
    char *bdir = NULL;
    if (!runs || !names || !vals || !owned) {
        fprintf(stderr, "braid: out of memory\n");
        rc = 1;   /* nothing runs; the tables go below */
    } else
        bdir = builtin_dir(argv[0]);
    for (int k = 0, i = 1; k < nruns && !rc; k++, i++) {
        /* a run's arguments follow the last run's in names and vals */
        rc = parse_run(argc, argv, &i, &runs[k], names + used, vals + used, owned, &nowned);
        used += runs[k].nargs;
        runs[k].builtin_dir = bdir;
    }
    if (!rc) rc = braid_run_all(runs, nruns);
    else rc = rc == 2 ? 0 : 1;
    free(bdir);
    for (int i = 0; i < nowned; i++) free(owned[i]);
    free(owned);
    free(names);
    free(vals);
    free(runs);
    return rc;
}
