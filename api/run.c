/* run.c: braid_run, a script run the way the braid command does it (the
 * CLI is a client of include/braid.h): configuration, loading, compiling,
 * explain output, execution, error reporting and -stats. */
#include "../include/braid.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../base/diag.h"
#include "../base/perturb.h"
#include "../kernels/cla.h"
#include "../gpu/gpu.h"
#include "../gpu/stitch.h"
#include "../dist/dist.h"
#include "../lang/load.h"
#include "../plan/build.h"
#include "../runtime/config.h"
#include "../runtime/distexec.h"
#include "../runtime/interp.h"
#include "script.h"

static int serve_worker(const BraidRunOptions *o, const BraidConfig *cfg);

/* Fusion options of a configuration. */
static CgOptions cg_options(const BraidConfig *cfg, const char *explain)
{
    CgOptions cg = {.enabled = cfg->codegen, .plancache = cfg->plancache, .async = cfg->cg_async,
                    .policy = !strcmp(cfg->codegen_optimizer, "fuse_all") ? CG_FUSE_ALL
                            : !strcmp(cfg->codegen_optimizer, "fuse_no_redundancy") ? CG_FUSE_NO_REDUNDANCY
                            : !strcmp(cfg->codegen_optimizer, "fusion_stitching") ? CG_STITCH_EXPLORER
                            : CG_COST_BASED,
                    .cla = cfg->cla,
                    .explain = explain && !strcmp(explain, "codegen") ? stdout : NULL};
    return cg;
}

/* -explain hops / runtime / dot, before the run. */
static void explain_program(const RtProgram *prog, const char *explain)
{
    if (!explain) return;
    if (!strcmp(explain, "runtime") || !strcmp(explain, "recompile_runtime")) {
        plan_print(prog, stdout);
    } else if (!strcmp(explain, "hops") || !strcmp(explain, "recompile_hops")) {
        plan_print_hops(prog, stdout);
    } else if (!strcmp(explain, "dot") || !strcmp(explain, "dot_all")) {
        api_write_plan_dots(prog, "braid_plan", !strcmp(explain, "dot_all"));
    }
}

/* -stats: SystemDS's summary, the interpreter's and codegen's lines, on
 * stdout after the script's output, as SystemDS prints them. */
static void print_stats(Rt *rt, const BraidRunOptions *o, int64_t t_start, int64_t t_compiled, int64_t t_end)
{
    fprintf(stdout, "SystemDS Statistics:\n");
    fprintf(stdout, "Total elapsed time:\t\t%.3f sec.\n", (double)(t_end - t_start) / 1e9);
    fprintf(stdout, "Total compilation time:\t\t%.3f sec.\n", (double)(t_compiled - t_start) / 1e9);
    fprintf(stdout, "Total execution time:\t\t%.3f sec.\n", (double)(t_end - t_compiled) / 1e9);
    fprintf(stdout, "Number of threads:\t\t%d\n", br_threads());
    int64_t teams, kept;
    br_par_counts(&teams, &kept);
    fprintf(stdout, "Kernel thread teams:\t\t%lld forked, %lld kept on one thread (machine crowded)\n",
            (long long)teams, (long long)kept);
    int64_t fb, fbytes;
    br_fresh_counts(&fb, &fbytes);
    fprintf(stdout, "Blocks no pool served:\t\t%lld (%.1f MB)\n", (long long)fb,
            (double)fbytes / 1048576.0);
    br_gathered_counts(&fb, &fbytes);
    fprintf(stdout, "Blocks pools gathered:\t\t%lld (%.1f MB)\n", (long long)fb,
            (double)fbytes / 1048576.0);
    /* the process's page faults (a page touched for the first time; on
     * the benchmark VM ~10 us a 4 KB page, docs/perf.md "Fresh memory") */
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        fprintf(stdout, "Page faults (process):\t\t%ld minor, %ld major\n", ru.ru_minflt, ru.ru_majflt);
    rt_print_stats(rt, stdout, o->stats_top > 0 ? o->stats_top : 10);
    cg_print_stats(rt->prog->cg, stdout);
    cla_print_stats(&rt->cla, stdout);
    dist_print_stats(stdout);
    gpu_print_stats(stdout);
}

/* Compiles the loaded script; NULL after printing the errors. */
static RtProgram *compile(Program *ast, Diag *d, const BraidConfig *cfg, const char *explain)
{
    RtProgram *prog = NULL;
    if (ast && diag_nerrors(d) == 0) {
        CgOptions cg = cg_options(cfg, explain);
        prog = plan_build_program(ast, d, cfg->optlevel, &cg);
    }
    if (!prog || diag_nerrors(d) > 0) {
        diag_print(d, stderr);
        /* no error reported: a failed allocation in the planner */
        if (!diag_nerrors(d)) fprintf(stderr, "braid: compilation failed: out of memory\n");
        plan_program_free(prog);
        return NULL;
    }
    if (diag_nwarnings(d)) diag_print(d, stderr);
    return prog;
}

/* -exec's mode; false for an unknown one. */
static bool exec_mode(const char *s, BrExecMode *m)
{
    if (!s || !strcmp(s, "hybrid")) *m = BR_EXEC_HYBRID;
    else if (!strcmp(s, "singlenode")) *m = BR_EXEC_SINGLENODE;
    else if (!strcmp(s, "distributed") || !strcmp(s, "spark")) *m = BR_EXEC_DIST;
    else return false;
    return true;
}

static int run_control(const BraidRunOptions *o, const BraidConfig *cfgp, int64_t t_start);

/* The front end's options of a run. */
static LangOptions lang_options(const BraidRunOptions *o)
{
    LangOptions lo = {.builtin_dir = o->builtin_dir ? o->builtin_dir : "scripts/builtin",
                      .arg_names = o->arg_names, .arg_values = o->arg_values, .nargs = o->nargs};
    return lo;
}

/* Under mpirun, rank 0 reads the script file and the files it source()s
 * once, and every rank gets their texts (dist_share), so that workers
 * load the very program rank 0 compiled (shipped plans name its
 * statements by position) and need no access to the files: they may
 * live on rank 0's machine only, or be gone or changed by the time a
 * worker loads them. Rank 0 loads the program here (ast and d, which
 * run_control takes) and sends the main text, its canonical path, and
 * the source()d files (lang_source) packed as path, canonical path and
 * text each, every string an 8-byte length (-1: none) and its bytes. */
static struct {
    bool shared;
    char *text, *canon, *pack, *bdir;   /* bdir: rank 0's builtin library folder */
    int64_t len;
    LangSource *src;   /* workers: the source()d files received */
    int nsrc;
    Program *ast;      /* rank 0: the program loaded, for run_control */
    Diag *d;
} g_script;

static char *pack_str(char *w, const char *p, int64_t n)
{
    memcpy(w, &n, sizeof n);
    w += sizeof n;
    if (n > 0) memcpy(w, p, (size_t)n);
    return n > 0 ? w + n : w;
}

/* The source()d files of rank 0's program, packed (malloc'd, *n bytes;
 * NULL when out of memory). */
static char *pack_sources(const Program *ast, int64_t *n)
{
    int k = ast ? lang_nsources(ast) : 0;
    *n = 0;
    for (int i = 0; i < k; i++) {
        LangSource s = lang_source(ast, i);
        *n += 3 * (int64_t)sizeof(int64_t) + (int64_t)strlen(s.path) + (s.canon ? (int64_t)strlen(s.canon) : 0)
            + (int64_t)s.len;
    }
    char *buf = malloc((size_t)*n + 1), *w = buf;
    for (int i = 0; w && i < k; i++) {
        LangSource s = lang_source(ast, i);
        w = pack_str(w, s.path, (int64_t)strlen(s.path));
        w = pack_str(w, s.canon, s.canon ? (int64_t)strlen(s.canon) : -1);
        w = pack_str(w, s.text, (int64_t)s.len);
    }
    return buf;
}

/* g_script.src from the pack received (NUL-terminated copies). False
 * when it is malformed or memory ran out. */
static bool unpack_sources(const char *b, int64_t n)
{
    int cap = 0;
    for (int64_t at = 0; at < n;) {
        char *f[3] = {NULL, NULL, NULL};
        int64_t l[3] = {0, 0, 0};
        bool ok = true;
        for (int j = 0; ok && j < 3; j++) {
            ok = n - at >= (int64_t)sizeof l[j];
            if (ok) memcpy(&l[j], b + at, sizeof l[j]);
            at += (int64_t)sizeof l[j];
            ok = ok && l[j] <= n - at && (l[j] >= 0 || j == 1);
            if (ok && l[j] >= 0 && (ok = (f[j] = malloc((size_t)l[j] + 1)) != NULL)) {
                memcpy(f[j], b + at, (size_t)l[j]);
                f[j][l[j]] = 0;
                at += l[j];
            }
        }
        if (ok && g_script.nsrc == cap) {
            LangSource *nv = realloc(g_script.src, (size_t)(cap ? 2 * cap : 8) * sizeof *nv);
            if ((ok = nv != NULL)) {
                g_script.src = nv;
                cap = cap ? 2 * cap : 8;
            }
        }
        if (!ok) {
            for (int j = 0; j < 3; j++) free(f[j]);
            return false;
        }
        g_script.src[g_script.nsrc++] = (LangSource){f[0], f[1], f[2], (size_t)l[2]};
    }
    return true;
}

static void share_script(const BraidRunOptions *o)
{
    if (!dist_active() || (!o->text && !o->file)) return;
    char *text = NULL, *canon = NULL, *pack = NULL;
    size_t len = 0;
    int64_t pn = -1, n, cn, bn;
    LangOptions lo = lang_options(o);
    /* -s text: every rank has the script; the files it loads travel */
    if (dist_rank() == 0 && (o->text || (text = lang_read_script(o->file, &len)))) {
        canon = o->text ? NULL : realpath(o->file, NULL);
        if ((g_script.d = diag_new()))
            g_script.ast = o->text ? lang_load_string(o->text, "<script>", &lo, g_script.d)
                                   : lang_load_text(text, len, o->file, canon, &lo, g_script.d);
        if ((pack = pack_sources(g_script.ast, &pn)) == NULL) pn = -1;
    }
    g_script.text = dist_share(text, text ? (int64_t)len : -1, &n);
    g_script.canon = dist_share(canon, canon ? (int64_t)strlen(canon) : -1, &cn);
    g_script.bdir = dist_share(dist_rank() == 0 ? lo.builtin_dir : NULL,
                               dist_rank() == 0 ? (int64_t)strlen(lo.builtin_dir) : -1, &bn);
    g_script.len = n;
    g_script.pack = dist_share(pack, pn, &pn);
    if (dist_rank() > 0 && g_script.pack && !unpack_sources(g_script.pack, pn)) {
        fprintf(stderr, "braid: rank %d: out of memory or malformed: the source()d files from rank 0\n", dist_rank());
        g_script.nsrc = 0;
    }
    g_script.shared = true;
    free(text);
    free(canon);
    free(pack);
}

static void unshare_script(void)
{
    for (int i = 0; i < g_script.nsrc; i++) {
        free((char *)g_script.src[i].path);
        free((char *)g_script.src[i].canon);
        free((char *)g_script.src[i].text);
    }
    free(g_script.src);
    free(g_script.text);
    free(g_script.canon);
    free(g_script.bdir);
    free(g_script.pack);
    lang_program_free(g_script.ast);
    diag_free(g_script.d);
    memset(&g_script, 0, sizeof g_script);
}

/* The script: -s text; or the program rank 0 loaded when it shared the
 * script (*d becomes the Diag of that load); or the texts of the script
 * and its source()d files rank 0 sent; or (rank 0 could not read the
 * script) the file, whose error rank 0 reports. */
static Program *load_script(const BraidRunOptions *o, const LangOptions *lo, Diag **d)
{
    if (g_script.shared && g_script.d) {
        Program *p = g_script.ast;
        diag_free(*d);
        *d = g_script.d;
        g_script.ast = NULL;
        g_script.d = NULL;
        return p;
    }
    if (g_script.shared && dist_rank() > 0 && (o->text || g_script.text)) {
        /* a worker: rank 0's files under rank 0's names; a library file
         * rank 0 had not loaded comes from rank 0 too, never from this
         * machine's library folder (docs/dist.md) */
        LangOptions so = *lo;
        so.sources = g_script.src;
        so.nsources = g_script.nsrc;
        if (g_script.bdir) so.builtin_dir = g_script.bdir;
        so.lib_fetch = rt_dist_lib_fetch;
        if (o->text) return lang_load_string(o->text, "<script>", &so, *d);
        return lang_load_text(g_script.text, (size_t)g_script.len, o->file, g_script.canon, &so, *d);
    }
    if (o->text) return lang_load_string(o->text, "<script>", lo, *d);
    if (g_script.shared && dist_rank() > 0) return NULL;
    return lang_load_file(o->file, lo, *d);
}

/* Every rank reads the configuration; under mpirun rank 0 runs the
 * script and the others serve its distributed jobs (dist/dist.h). last:
 * no run follows in this process (else the ranks stay up for it). */
static int run_one(const BraidRunOptions *o, bool last)
{
    int64_t t_start = br_now_ns();
    BraidConfig cfg;
    config_defaults(&cfg);
    if (o->config) {
        BrErr e = {0};
        if (config_read(o->config, &cfg, &e)) { fprintf(stderr, "braid: %s\n", e.msg); return 1; }
    }
    if (o->threads > BR_MAX_THREADS) {
        fprintf(stderr, "braid: -threads %d: at most %d threads\n", o->threads, BR_MAX_THREADS);
        return 1;
    }
    BrExecMode mode;
    if (!exec_mode(o->exec, &mode)) {
        fprintf(stderr, "braid: -exec expects singlenode, hybrid, distributed or spark, not '%s'\n", o->exec);
        return 1;
    }
    BrErr e = {0};
    dist_set_net_rate(cfg.net_rate);
    if (dist_init(&e)) { fprintf(stderr, "braid: %s\n", e.msg); return 1; }
    br_set_exec_mode(mode);
    br_set_dist_available(dist_active());
    br_set_mem_budget(cfg.mem_budget);
    dist_set_blocksize(cfg.blocksize);
    br_set_blocksize(cfg.blocksize);
    dist_set_piggyback(cfg.piggyback);
    cg_set_amulet_mode(cfg.amulet_fuse);   /* per run: a -then batch may differ */
    if (o->threads > 0) cfg.threads = o->threads;
    /* ranks on one machine share its cores */
    if (cfg.threads == 0 && dist_active() && dist_local_size() > 1) {
        int t = br_threads() / dist_local_size();
        cfg.threads = t > 0 ? t : 1;
    }
    br_perturb_announce();
    br_set_threads(cfg.threads);
    /* -gpu overrides sysds.gpu; asking for the GPU without a device is an
     * error here, before anything runs (docs/gpu.md) */
    if (o->gpu) cfg.gpu = !strcmp(o->gpu, "force") ? GPU_FORCE : GPU_ON;
    gpu_configure((GpuMode)cfg.gpu, cfg.gpu_device, cfg.gpu_budget);
    GpuProfile prof;
    gpu_configure_profile(cfg.gpu_profile[0] && gpu_profile_parse(cfg.gpu_profile, &prof) ? &prof : NULL);
    gpu_stats_reset();   /* each run of a -then batch counts its own (-stats) */
    gpu_set_stitch(!cfg.gpu_nostitch);
    stitch_set_async(cfg.gpu_async);
    if (cfg.gpu != GPU_OFF && gpu_init(&e)) { fprintf(stderr, "braid: %s\n", e.msg); return 1; }
    share_script(o);
    int rc = dist_active() && dist_rank() > 0 ? serve_worker(o, &cfg) : run_control(o, &cfg, t_start);
    if (last) {
        if (!dist_active() || dist_rank() == 0) dist_finish();
    } else if (dist_active()) {
        /* the workers' serve loop ends; every rank resets (collective) */
        dist_end_run();
        rt_dist_reset();
    }
    unshare_script();
    return rc;
}

/* -out FILE: rank 0's (a plain run's) stdout and stderr to FILE for one
 * run; *saved the streams to restore (-1: none). */
static int out_open(const char *path, int saved[2])
{
    saved[0] = saved[1] = -1;
    if (!path || dist_launched_rank() > 0) return 0;
    fflush(stdout);
    fflush(stderr);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        fprintf(stderr, "braid: -out %s: %s\n", path, strerror(errno));
        return -1;
    }
    saved[0] = dup(1), saved[1] = dup(2);
    dup2(fd, 1);
    dup2(fd, 2);
    close(fd);
    return 0;
}

static void out_close(int saved[2])
{
    fflush(stdout);
    fflush(stderr);
    for (int i = 0; i < 2; i++)
        if (saved[i] >= 0) {
            dup2(saved[i], i + 1);
            close(saved[i]);
        }
}

int braid_run_all(const BraidRunOptions *runs, int n)
{
    int rc = 0;
    for (int i = 0; i < n; i++) {
        int saved[2];
        if (out_open(runs[i].out, saved)) {
            /* every rank runs every run (the ranks take part in its jobs):
             * the output goes where it would have gone */
            saved[0] = saved[1] = -1;
            rc = 1;
        }
        if (run_one(&runs[i], i == n - 1)) rc = 1;
        out_close(saved);
    }
    return rc;
}

int braid_run(const BraidRunOptions *o) { return braid_run_all(o, 1); }

/* A worker's script and configuration, for the programs of its remote
 * parfor tasks (parsed once). */
typedef struct WorkerSrc { const BraidRunOptions *o; const BraidConfig *cfg; Program *ast; Diag *d; } WorkerSrc;

/* full: the same program rank 0 compiles (same script, arguments and
 * configuration); else a shell holding the parsed script and nothing
 * compiled, which shipped plans join. Silent: rank 0 reports errors. */
static RtProgram *worker_program(void *arg, bool full, Diag **dp)
{
    WorkerSrc *w = arg;
    const BraidRunOptions *o = w->o;
    if (!w->d && !(w->d = diag_new())) return NULL;
    *dp = w->d;
    if (!w->ast && !diag_nerrors(w->d)) {
        LangOptions lo = lang_options(o);
        w->ast = load_script(o, &lo, &w->d);
        *dp = w->d;
        if (!w->ast && !diag_nerrors(w->d)) return NULL;
    }
    if (!w->ast || diag_nerrors(w->d)) return NULL;
    CgOptions cg = cg_options(w->cfg, NULL);
    Block none = {0};
    RtProgram *prog = full ? plan_build_program(w->ast, w->d, w->cfg->optlevel, &cg)
                           : plan_build_program_main(w->ast, &none, w->d, w->cfg->optlevel, &cg, NULL, 0);
    if (prog && diag_nerrors(w->d)) { plan_program_free(prog); prog = NULL; }
    return prog;
}

/* Ranks > 0: serve jobs (fused operators, remote parfor tasks) until
 * rank 0 stops them. */
static int serve_worker(const BraidRunOptions *o, const BraidConfig *cfg)
{
    CgOptions cg = cg_options(cfg, NULL);
    rt_dist_fused_worker(&cg);
    WorkerSrc src = {o, cfg, NULL, NULL};
    /* -explain recompile_hops: workers print what they recompile too
     * (mpirun --tag-output tells the ranks apart) */
    RtOptions ro = {.out = stdout, .seed = o->seed, .cla = cfg->cla,
                    .explain_recompile = o->explain && !strcmp(o->explain, "recompile_hops")};
    rt_dist_parfor_worker(worker_program, &src, &ro);
    int rc = dist_serve();
    RtProgram *shell, *full;
    rt_dist_parfor_worker_end(&shell, &full);
    plan_program_free(shell);
    plan_program_free(full);
    rt_dist_parfor_worker_release();
    lang_program_free(src.ast);
    diag_free(src.d);
    return rc;
}

/* Rank 0 (or a plain run): compile, explain, execute, report. */
static int run_control(const BraidRunOptions *o, const BraidConfig *cfgp, int64_t t_start)
{
    BraidConfig cfg = *cfgp;
    /* -bindcheck: every call reaches the interpreter (no inlining, no
     * specialized callee compiled for it) */
    if (o->bindcheck) cfg.optlevel = 0;

    LangOptions lo = lang_options(o);
    Diag *d = diag_new();
    if (!d) { fprintf(stderr, "braid: out of memory\n"); return 1; }
    Program *ast = load_script(o, &lo, &d);
    RtProgram *prog = compile(ast, d, &cfg, o->explain);
    if (!prog) {
        lang_program_free(ast);
        diag_free(d);
        return 1;
    }
    int64_t t_compiled = br_now_ns();
    explain_program(prog, o->explain);

    RtOptions ro = {.out = stdout, .stats = o->stats, .seed = o->seed, .cla = cfg.cla, .bindcheck = o->bindcheck,
                    .explain_recompile = o->explain && !strcmp(o->explain, "recompile_hops")};
    DotFiles *dots = NULL;   /* -explain recompile_dot: the recompiled DAGs as files */
    if (o->explain && !strcmp(o->explain, "recompile_dot")) {
        if (!(dots = api_dots_open("braid_plan"))) {
            plan_program_free(prog);
            lang_program_free(ast);
            diag_free(d);
            return 1;
        }
        ro.recompiled = api_dots_recompiled;
        ro.recompiled_ctx = dots;
    }
    Rt rt;
    rt_init(&rt, prog, d, &ro);
    Frame f = {.depth = 0};
    st_init(&f.vars);
    int rc = rt_run_main(&rt, &f);
    fflush(stdout);
    if (rc) {
        if (diag_nerrors(d)) diag_print(d, stderr);
        rt_print_error(&rt, stderr);
    }
    if (o->stats) print_stats(&rt, o, t_start, t_compiled, br_now_ns());
    if (dots && api_dots_close(dots, "one per DAG recompiled at run time") && !rc) rc = -1;
    st_free(&f.vars);
    rt_destroy(&rt);
    plan_program_free(prog);
    lang_program_free(ast);
    diag_free(d);
    return rc ? 1 : 0;
}

void braid_signal_cleanup(void) { br_sig_cleanup(); }
