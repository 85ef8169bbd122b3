/* run.c: braid_run, a script run the way the braid command does it (the
 * CLI is a client of include/braid.h): configuration, loading, compiling,
 * explain output, execution, error reporting and -stats. */
#include "../include/braid.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Under mpirun, rank 0 reads the script file once and every rank gets
 * its text (dist_share), so that workers load the very script rank 0
 * compiled (shipped plans name its statements by position) and need no
 * access to the file: it may live on rank 0's machine only, or be gone
 * or changed by the time a worker loads it. */
static struct { bool shared; char *text; int64_t len; char *canon; } g_script;

static void share_script(const BraidRunOptions *o)
{
    if (!dist_active() || o->text || !o->file) return;
    char *text = NULL, *canon = NULL;
    size_t len = 0;
    if (dist_rank() == 0 && (text = lang_read_script(o->file, &len))) canon = realpath(o->file, NULL);
    int64_t n, cn;
    g_script.text = dist_share(text, text ? (int64_t)len : -1, &n);
    g_script.canon = dist_share(canon, canon ? (int64_t)strlen(canon) : -1, &cn);
    g_script.len = n;
    g_script.shared = true;
    free(text);
    free(canon);
}

/* The script: -s text, or the file's text as rank 0 read it, or (rank 0
 * could not read it) the file, whose error rank 0 reports. */
static Program *load_script(const BraidRunOptions *o, const LangOptions *lo, Diag *d)
{
    if (o->text) return lang_load_string(o->text, "<script>", lo, d);
    if (g_script.shared && g_script.text)
        return lang_load_text(g_script.text, (size_t)g_script.len, o->file, g_script.canon, lo, d);
    if (g_script.shared && dist_rank() > 0) return NULL;
    return lang_load_file(o->file, lo, d);
}

/* Every rank reads the configuration; under mpirun rank 0 runs the
 * script and the others serve its distributed jobs (dist/dist.h). */
int braid_run(const BraidRunOptions *o)
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
    dist_set_piggyback(cfg.piggyback);
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
    gpu_set_stitch(!cfg.gpu_nostitch);
    stitch_set_async(cfg.gpu_async);
    if (cfg.gpu != GPU_OFF && gpu_init(&e)) { fprintf(stderr, "braid: %s\n", e.msg); return 1; }
    share_script(o);
    int rc = dist_active() && dist_rank() > 0 ? serve_worker(o, &cfg) : run_control(o, &cfg, t_start);
    if (!dist_active() || dist_rank() == 0) dist_finish();
    free(g_script.text);
    free(g_script.canon);
    g_script.text = g_script.canon = NULL;
    return rc;
}

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
        LangOptions lo = {.builtin_dir = o->builtin_dir ? o->builtin_dir : "scripts/builtin",
                          .arg_names = o->arg_names, .arg_values = o->arg_values, .nargs = o->nargs};
        w->ast = load_script(o, &lo, w->d);
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

    LangOptions lo = {.builtin_dir = o->builtin_dir ? o->builtin_dir : "scripts/builtin",
                      .arg_names = o->arg_names, .arg_values = o->arg_values, .nargs = o->nargs};
    Diag *d = diag_new();
    if (!d) { fprintf(stderr, "braid: out of memory\n"); return 1; }
    Program *ast = load_script(o, &lo, d);
    RtProgram *prog = compile(ast, d, &cfg, o->explain);
    if (!prog) {
        lang_program_free(ast);
        diag_free(d);
        return 1;
    }
    int64_t t_compiled = br_now_ns();
    explain_program(prog, o->explain);

    RtOptions ro = {.out = stdout, .stats = o->stats, .seed = o->seed, .cla = cfg.cla,
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
    Frame f;
    st_init(&f.vars);
    f.depth = 0;
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
