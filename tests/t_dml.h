/* t_dml.h: test helpers shared by the programs that run DML source
 * against bound matrices (test_codegen, test_smallpath): a seeded
 * xorshift generator, random blocks, and t_run_dml, which compiles src
 * with given codegen options, binds the inputs, runs it and collects the
 * named outputs. Include after tests/t.h. */
#ifndef BRAID_T_DML_H
#define BRAID_T_DML_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "codegen/codegen.h"
#include "lang/load.h"
#include "plan/build.h"
#include "runtime/interp.h"

#define T_MAXOUT 64

/* One Lloyd iteration of k-means (scripts/builtin/kmeans.dml) over X
 * and centroids C, outputs w (the distances' sum), cnt and S: the DAG
 * of the multi-output Row operator (test_codegen, test_amulet). */
#define T_KMEANS_STEP                                                                                         \
    "D = -2 * (X %*% t(C)) + t(rowSums(C ^ 2))\n"                                                            \
    "dmin = rowMins(D)\n"                                                                                    \
    "w = sum(dmin)\n"                                                                                        \
    "P = D <= dmin\n"                                                                                        \
    "P = P / rowSums(P)\n"                                                                                   \
    "cnt = colSums(P)\n"                                                                                     \
    "S = t(P) %*% X\n"

static uint64_t t_rng = 88172645463325252ULL;

static inline void t_seed(uint64_t s) { t_rng = s ? s : 1; }

/* Uniform in [0, 1). */
static inline double t_urand(void)
{
    t_rng ^= t_rng << 13;
    t_rng ^= t_rng >> 7;
    t_rng ^= t_rng << 17;
    return (double)(t_rng >> 11) / 9007199254740992.0;
}

/* rows x cols with values in [lo, hi) (never 0), a fraction sp of cells
 * non-zero; sparse format when asked, dense otherwise. Caller releases. */
static inline MB *t_gen(int64_t rows, int64_t cols, double sp, double lo, double hi, bool sparse)
{
    BrErr e = {0};
    MB *m = mb_sp_new(rows, cols, 16, &e);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            if (t_urand() < sp) {
                double v = lo + (hi - lo) * t_urand();
                mb_sp_append(m, i, j, v == 0 ? 0.5 : v, &e);
            }
    mb_sp_finish(m);
    if (!sparse) mb_make_dense(m, &e);
    else if (m->rows * m->cols > 0 && !m->sparse) mb_make_sparse(m, &e);
    return m;
}

/* Every fused codegen policy the tests run (index 0 fuse_all, 2
 * cost_based, 3 interpreted (may fail to compile by design), 5 keeps
 * fused code on every shape). */
typedef struct TPol { const char *name; CgOptions o; } TPol;
static const TPol t_pols[] = {
    {"fuse_all", {.enabled = true, .plancache = true, .policy = CG_FUSE_ALL}},
    {"fuse_no_redundancy", {.enabled = true, .plancache = true, .policy = CG_FUSE_NO_REDUNDANCY}},
    {"cost_based", {.enabled = true, .plancache = true, .policy = CG_COST_BASED}},
    {"interpreted", {.enabled = true, .plancache = true, .policy = CG_FUSE_ALL, .interpret = true}},
    {"async", {.enabled = true, .plancache = true, .policy = CG_COST_BASED, .async = true}},
    {"fuse_all_kept", {.enabled = true, .plancache = true, .policy = CG_FUSE_ALL, .keep_fused = true}},
};
#define T_NPOL ((int)(sizeof t_pols / sizeof *t_pols))

typedef struct TRun {
    Value out[T_MAXOUT];   /* the outputs named by onames (V_NONE if unset) */
    int nout;
    CgStats st;            /* codegen counters of the run */
    int64_t nrecompile;    /* dynamic recompilations of the run */
    int64_t nrc_hits;      /* of those, reused code (runtime/recompile.c) */
    int rc;                /* 0, or -1 with err set */
    char err[1200];
} TRun;

static inline void t_run_free(TRun *r)
{
    for (int i = 0; i < r->nout; i++) val_release(&r->out[i]);
    r->nout = 0;
}

/* Runs src with the matrices ins bound to names under codegen options cg
 * and collects the variables onames into r (t_run_free releases them).
 * Returns r->rc. */
static inline int t_run_dml_opt(const char *src, const CgOptions *cg, int optlevel, int nin, const char **names,
                                MB **ins, int nout, const char **onames, TRun *r);

static inline int t_run_dml(const char *src, const CgOptions *cg, int nin, const char **names, MB **ins,
                            int nout, const char **onames, TRun *r)
{
    return t_run_dml_opt(src, cg, 2, nin, names, ins, nout, onames, r);
}

/* The -seed of t_run_dml's runs (-1: none; test_seeds sets it). */
static int64_t t_dml_seed = -1;

/* The buffer pool of t_run_dml's runs (NULL: each run makes its own;
 * test_amulet reads the pool's counters). */
static BrPool *t_dml_pool;

/* Called (when set) with each run's program after it ran, before it is
 * freed (test_recompile reads the specializations it compiled). */
static void (*t_dml_inspect)(const RtProgram *p);

/* t_run_dml_opt whose distributed instructions (EX_DIST, placed when
 * br_dist_available() is set at compile time) run locally when no_dist:
 * a distributed plan's operators, computed as its ranks would compute
 * them, without mpirun (Rt.no_dist). */
static inline int t_run_dml_nd(const char *src, const CgOptions *cg, int optlevel, bool no_dist, int nin,
                               const char **names, MB **ins, int nout, const char **onames, TRun *r);

/* t_run_dml at optimization level optlevel (0: no rewrites, no
 * inter-procedural analysis). */
static inline int t_run_dml_opt(const char *src, const CgOptions *cg, int optlevel, int nin, const char **names,
                                MB **ins, int nout, const char **onames, TRun *r)
{
    return t_run_dml_nd(src, cg, optlevel, false, nin, names, ins, nout, onames, r);
}

static inline int t_run_dml_nd(const char *src, const CgOptions *cg, int optlevel, bool no_dist, int nin,
                               const char **names, MB **ins, int nout, const char **onames, TRun *r)
{
    memset(r, 0, sizeof *r);
    Diag *d = diag_new();
    /* (the builtin library: tests may call its functions, as scripts do) */
    LangOptions lo = {.builtin_dir = BRAID_SOURCE_DIR "/scripts/builtin", .predefined = names, .npredefined = nin};
    Program *ast = lang_load_string(src, "<test>", &lo, d);
    RtProgram *p = ast && !diag_nerrors(d) ? plan_build_program_outputs(ast, d, optlevel, cg, onames, nout) : NULL;
    if (!p) {
        snprintf(r->err, sizeof r->err, "compile: %s", diag_nerrors(d) ? diag_first_message(d) : "?");
        lang_program_free(ast);
        diag_free(d);
        return r->rc = -1;
    }
    NameSet outs = {0}, live = {0};
    for (int i = 0; i < nout; i++) ns_add(&outs, onames[i]);
    plan_liveness(&p->main, &outs, &live);
    ns_free(&outs);
    ns_free(&live);
    RtOptions ro = {.out = stdout, .seed = t_dml_seed, .pool = t_dml_pool};
    Rt rt;
    rt_init(&rt, p, d, &ro);
    rt.no_dist = no_dist;
    Frame f;
    st_init(&f.vars);
    f.depth = 0;
    for (int i = 0; i < nin; i++) st_put(&f.vars, names[i], val_matrix(mb_retain(ins[i])));
    r->rc = rt_run_main(&rt, &f);
    if (r->rc) snprintf(r->err, sizeof r->err, "run: %s", rt.err.msg);
    else
        for (int i = 0; i < nout && i < T_MAXOUT; i++) {
            Value *v = st_get(&f.vars, onames[i]);
            r->out[r->nout++] = v ? val_retain(*v) : val_none();
        }
    if (p->cg) r->st = *cg_stats(p->cg);
    if (t_dml_inspect) t_dml_inspect(p);
    r->nrecompile = rt.nrecompile;
    r->nrc_hits = rt.nrc_hits;
    st_free(&f.vars);
    rt_destroy(&rt);
    plan_program_free(p);
    lang_program_free(ast);
    diag_free(d);
    return r->rc;
}

#endif
