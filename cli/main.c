/* main.c: the braid command, SystemDS-compatible:
 *   braid [-f] script.dml [-args a b ...] [-nvargs k=v ...] [-stats [N]]
 *         [-explain [hops|runtime|recompile_hops|dot]] [-config file]
 *         [-seed N] [-threads N]
 *   braid -s "script text" ...
 *   braid -help
 * Exit status 0 on success, 1 on any error in the script or its input. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/diag.h"
#include "../lang/load.h"
#include "../runtime/config.h"
#include "../plan/build.h"
#include "../runtime/interp.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: braid [-f] script.dml [options]\n"
        "       braid -s \"script text\" [options]\n"
        "options:\n"
        "  -args a b ...        positional script arguments ($1, $2, ...)\n"
        "  -nvargs k=v ...      named script arguments ($k)\n"
        "  -stats [N]           print timing and the N heaviest instructions (default 10)\n"
        "  -explain [hops|runtime|recompile_hops|dot|codegen]\n"
        "                       print the plan (default: runtime); dot writes braid_plan.dot\n"
        "  -config file.xml     SystemDS-style configuration (<root><sysds.key>v</sysds.key></root>)\n"
        "  -seed N              seed for rand()/sample() calls without a seed\n"
        "  -threads N           number of threads (default: all cores)\n"
        "  -exec MODE           accepted for SystemDS compatibility (braid runs locally)\n"
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

/* The command line. names/vals: the script arguments ($1.. and $k);
 * owned: the names main allocated (freed by opts_free). */
typedef struct Opts {
    const char *file, *text, *config, *explain;
    bool stats;
    int stats_n;
    int64_t seed;
    int threads;
    const char **names, **vals;
    char **owned;
    int nargs, nowned;
} Opts;

static void opts_free(Opts *o)
{
    for (int i = 0; i < o->nowned; i++) free(o->owned[i]);
    free(o->owned);
    free(o->names);
    free(o->vals);
}

/* Adds script argument nm (owned, NULL: out of memory) = val. */
static int add_arg(Opts *o, char *nm, const char *val)
{
    if (!nm) { fprintf(stderr, "braid: out of memory\n"); return 1; }
    o->owned[o->nowned++] = nm;
    o->names[o->nargs] = nm;
    o->vals[o->nargs++] = val;
    return 0;
}

/* Reads the command line into o; returns -1 to go on, else the exit
 * status (after -help or an error, printed). */
static int parse_args(int argc, char **argv, Opts *o)
{
    *o = (Opts){.stats_n = 10, .seed = -1};
    o->names = calloc((size_t)argc + 1, sizeof(char *));
    o->vals = calloc((size_t)argc + 1, sizeof(char *));
    o->owned = calloc((size_t)argc + 1, sizeof(char *));
    if (!o->names || !o->vals || !o->owned) { fprintf(stderr, "braid: out of memory\n"); return 1; }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-help") || !strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); return 0; }
        else if (!strcmp(a, "-f")) {
            if (i + 1 >= argc) { fprintf(stderr, "braid: -f needs a file\n"); return 1; }
            o->file = argv[++i];
        } else if (!strcmp(a, "-s")) {
            if (i + 1 >= argc) { fprintf(stderr, "braid: -s needs a script\n"); return 1; }
            o->text = argv[++i];
        } else if (!strcmp(a, "-stats")) {
            o->stats = true;
            if (i + 1 < argc && argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9') o->stats_n = atoi(argv[++i]);
        } else if (!strcmp(a, "-explain")) {
            o->explain = "runtime";
            if (i + 1 < argc && !is_opt(argv[i + 1]) &&
                (!strcmp(argv[i + 1], "hops") || !strcmp(argv[i + 1], "runtime") ||
                 !strcmp(argv[i + 1], "recompile_hops") || !strcmp(argv[i + 1], "recompile_runtime") ||
                 !strcmp(argv[i + 1], "dot") || !strcmp(argv[i + 1], "codegen")))
                o->explain = argv[++i];
        } else if (!strcmp(a, "-config")) {
            if (i + 1 >= argc) { fprintf(stderr, "braid: -config needs a file\n"); return 1; }
            o->config = argv[++i];
        } else if (!strcmp(a, "-seed")) {
            if (i + 1 >= argc) { fprintf(stderr, "braid: -seed needs a number\n"); return 1; }
            o->seed = atoll(argv[++i]);
        } else if (!strcmp(a, "-threads")) {
            if (i + 1 >= argc) { fprintf(stderr, "braid: -threads needs a number\n"); return 1; }
            o->threads = atoi(argv[++i]);
        } else if (!strcmp(a, "-exec")) {
            /* SystemDS's execution mode (singlenode, hybrid, spark): braid
             * always runs locally */
            if (i + 1 >= argc) { fprintf(stderr, "braid: -exec needs a mode\n"); return 1; }
            i++;
        } else if (!strcmp(a, "-args")) {
            int k = 1;
            while (i + 1 < argc && !is_opt(argv[i + 1])) {
                char *nm = malloc(16);
                if (nm) snprintf(nm, 16, "%d", k++);
                if (add_arg(o, nm, argv[++i])) return 1;
            }
        } else if (!strcmp(a, "-nvargs")) {
            while (i + 1 < argc && !is_opt(argv[i + 1])) {
                const char *kv = argv[++i];
                const char *eq = strchr(kv, '=');
                if (!eq || eq == kv) {
                    fprintf(stderr, "braid: -nvargs expects name=value, got '%s'\n", kv);
                    return 1;
                }
                if (add_arg(o, strndup(kv, (size_t)(eq - kv)), eq + 1)) return 1;
            }
        } else if (a[0] != '-' && !o->file && !o->text) {
            o->file = a;
        } else {
            fprintf(stderr, "braid: unknown option '%s' (see braid -help)\n", a);
            return 1;
        }
    }
    if (!o->file && !o->text) { usage(stderr); return 1; }
    return -1;
}

/* -explain before the run: the program, its HOPs or a dot file. */
static void explain_plan(const RtProgram *prog, const char *explain)
{
    if (explain && (!strcmp(explain, "runtime") || !strcmp(explain, "recompile_runtime")))
        plan_print(prog, stdout);
    else if (explain && (!strcmp(explain, "hops") || !strcmp(explain, "recompile_hops")))
        plan_print_hops(prog, stdout);
    else if (explain && !strcmp(explain, "dot")) {
        FILE *f = fopen("braid_plan.dot", "w");
        if (f) { plan_print_dot(prog, f); fclose(f); fprintf(stderr, "braid: wrote braid_plan.dot\n"); }
    }
}

int main(int argc, char **argv)
{
    /* OpenMP threads spin after each parallel region (libgomp's default:
     * long); on 2 loaded cores that took the time slices other threads
     * needed and slowed iterative algorithms 2-4x, while no spinning at
     * all (PASSIVE) costs ~15% on a quiet machine. A short spin keeps most
     * of both. libgomp reads it when it loads: set it and start again. */
    if (!getenv("OMP_WAIT_POLICY") && !getenv("GOMP_SPINCOUNT")) {
        setenv("GOMP_SPINCOUNT", "20000", 1);
        execv("/proc/self/exe", argv);
    }
    /* glibc's malloc serves blocks above its mmap threshold (dynamic,
     * from 128 KB) by mmap and gives the heap top back above twice that,
     * so a loop over mid-sized blocks (the 256 x 100 mini-batches of
     * autoencoder_2layer, 200 KB each) paid fresh zero pages on nearly
     * every block: 3.5x the page faults and a quarter of the run time.
     * Fixed thresholds keep freed blocks up to 32 MB for reuse. */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
    Opts o;
    int status = parse_args(argc, argv, &o);
    if (status >= 0) { opts_free(&o); return status; }
    const char *explain = o.explain;
    bool stats = o.stats;
    int64_t t_start = br_now_ns();

    BraidConfig cfg;
    config_defaults(&cfg);
    if (o.config) {
        BrErr e = {0};
        if (config_read(o.config, &cfg, &e)) { fprintf(stderr, "braid: %s\n", e.msg); opts_free(&o); return 1; }
    }
    if (o.threads > 0) cfg.threads = o.threads;
    br_set_threads(cfg.threads);

    char *bdir = builtin_dir(argv[0]);
    LangOptions lo = {.builtin_dir = bdir, .arg_names = o.names, .arg_values = o.vals, .nargs = o.nargs};
    Diag *d = diag_new();
    Program *ast = o.text ? lang_load_string(o.text, "<script>", &lo, d) : lang_load_file(o.file, &lo, d);
    RtProgram *prog = NULL;
    if (ast && diag_nerrors(d) == 0) {
        CgOptions cg = {.enabled = cfg.codegen, .plancache = cfg.plancache, .async = cfg.cg_async,
                        .policy = !strcmp(cfg.codegen_optimizer, "fuse_all") ? CG_FUSE_ALL
                                : !strcmp(cfg.codegen_optimizer, "fuse_no_redundancy") ? CG_FUSE_NO_REDUNDANCY
                                : CG_COST_BASED,
                        .explain = explain && !strcmp(explain, "codegen") ? stdout : NULL};
        prog = plan_build_program(ast, d, cfg.optlevel, &cg);
    }
    if (!prog || diag_nerrors(d) > 0) {
        diag_print(d, stderr);
        if (!diag_nerrors(d)) fprintf(stderr, "braid: compilation failed\n");
        plan_program_free(prog);
        lang_program_free(ast);
        diag_free(d);
        free(bdir);
        opts_free(&o);
        return 1;
    }
    if (diag_nwarnings(d)) diag_print(d, stderr);
    int64_t t_compiled = br_now_ns();
    explain_plan(prog, explain);

    RtOptions ro = {.out = stdout, .stats = stats, .seed = o.seed,
                    .explain_recompile = explain && !strcmp(explain, "recompile_hops")};
    Rt rt;
    rt_init(&rt, prog, d, &ro);
    Frame f;
    st_init(&f.vars);
    f.depth = 0;
    int rc = rt_run_main(&rt, &f);
    fflush(stdout);
    if (rc) {
        if (diag_nerrors(d)) diag_print(d, stderr);
        rt_print_error(&rt, stderr);
    }
    int64_t t_end = br_now_ns();
    if (stats) {
        fprintf(stderr, "SystemDS Statistics:\n");
        fprintf(stderr, "Total elapsed time:\t\t%.3f sec.\n", (double)(t_end - t_start) / 1e9);
        fprintf(stderr, "Total compilation time:\t\t%.3f sec.\n", (double)(t_compiled - t_start) / 1e9);
        fprintf(stderr, "Total execution time:\t\t%.3f sec.\n", (double)(t_end - t_compiled) / 1e9);
        fprintf(stderr, "Number of threads:\t\t%d\n", br_threads());
        rt_print_stats(&rt, stderr, o.stats_n);
        cg_print_stats(prog->cg, stderr);
    }
    st_free(&f.vars);
    rt_destroy(&rt);
    plan_program_free(prog);
    lang_program_free(ast);
    diag_free(d);
    free(bdir);
    opts_free(&o);
    return rc ? 1 : 0;
}
