/* test_mpskip.c: the optimality oracle of the cost-based fusion planner
 * (seed 000, section 4.4). On random DAGs (elementwise chains, row and
 * column aggregates, broadcasts, transposes, matrix-vector products,
 * intermediates with several consumers, live-out values), every plan
 * partition with up to 14 interesting points is solved by MPSkipEnum
 * (with its cost-based and structural pruning) and by exhaustive
 * enumeration of all 2^n assignments under the same cost model: the plan
 * MPSkipEnum chooses must cost exactly the minimum. Products of
 * elementwise operands carry AMULET entries, so their points (fuse an
 * operand into the loop or materialize it) are among those weighed.
 * BRAID_TEST_LONG=1 runs ten times as many DAGs, the sanitizer build a
 * quarter. Also the size decisions
 * of Row operators over wide dense rows (wide_rows, wide_unknown_nnz). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen/codegen.h"
#include "plan/build.h"
#include "plan/program.h"
#include "tests/t.h"
#include "tests/t_dml.h"

typedef struct Tally {
    int64_t parts, worse;
    int64_t by_pts[15];
    double worst;      /* largest relative excess over the minimum */
    int64_t amulet;    /* partitions compared with AMULET entries */
    const char *src;
} Tally;

static void compare(void *arg, int npts, double mine, double least, bool amulet)
{
    Tally *t = arg;
    t->parts++;
    t->amulet += amulet;
    if (npts < 15) t->by_pts[npts]++;
    double excess = (mine - least) / fmax(least, 1e-300);
    if (excess > 1e-12) {
        if (!t->worse) fprintf(stderr, "mpskip: %d points, chose %.17g, minimum %.17g, in:\n%s\n", npts, mine, least,
                               t->src);
        t->worse++;
        if (excess > t->worst) t->worst = excess;
    }
}

/* A random block: matrices of one shape (and its transposed and vector
 * shapes), built from the inputs by random operators, some values used
 * several times, some written out. */
static void random_script(char *buf, size_t cap)
{
    static const char *un[] = {"exp(%s)", "abs(%s)", "(%s ^ 2)", "sqrt(abs(%s))", "(1 / (1 + exp(-%s)))"};
    static const char *bin[] = {"+", "-", "*", "/", "max", "min"};
    int r = 50 + (int)(t_urand() * 400), c = 5 + (int)(t_urand() * 60);
    size_t n = 0;
    n += (size_t)snprintf(buf + n, cap - n,
                          "X = rand(rows=%d, cols=%d, seed=1)\nY = rand(rows=%d, cols=%d, seed=2)\n"
                          "v = rand(rows=%d, cols=1, seed=3)\nw = rand(rows=%d, cols=1, seed=4)\n",
                          r, c, r, c, c, r);
    char vars[24][8] = {"X", "Y"};
    int nv = 2, nstmt = 6 + (int)(t_urand() * 10);
    for (int s = 0; s < nstmt && nv < 24; s++) {
        const char *a = vars[(int)(t_urand() * nv)], *b = vars[(int)(t_urand() * nv)];
        char e[160];
        double k = t_urand();
        if (k < 0.3) snprintf(e, sizeof e, un[(int)(t_urand() * 5)], a);
        else if (k < 0.6) {
            const char *op = bin[(int)(t_urand() * 6)];
            if (op[0] == 'm') snprintf(e, sizeof e, "%s(%s, %s)", op, a, b);
            else snprintf(e, sizeof e, "(%s %s %s)", a, op, b);
        } else if (k < 0.7) snprintf(e, sizeof e, "(%s * rowSums(%s))", a, b);
        else if (k < 0.8) snprintf(e, sizeof e, "(%s - colMeans(%s))", a, b);
        else if (k < 0.88) snprintf(e, sizeof e, "(%s * (%s %%*%% v))", a, b);
        else if (k < 0.94) snprintf(e, sizeof e, "(%s + t(t(%s) * %0.3f))", a, b, 1 + k);
        else snprintf(e, sizeof e, "(%s * w)", a);
        snprintf(vars[nv], sizeof vars[nv], "T%d", nv);
        n += (size_t)snprintf(buf + n, cap - n, "%s = %s\n", vars[nv], e);
        nv++;
    }
    /* outputs: full aggregates of a few values, a row aggregate, a
     * matrix-vector product over the last, and the last value itself */
    n += (size_t)snprintf(buf + n, cap - n, "s = sum(%s) + sum(%s ^ 2)\nq = rowSums(%s)\np = t(%s) %%*%% w\nZ = %s\n",
                          vars[nv - 1], vars[(int)(t_urand() * nv)], vars[(int)(t_urand() * nv)],
                          vars[(int)(t_urand() * nv)], vars[nv - 1]);
    /* a product of elementwise operands (r x r over c): AMULET entries
     * (docs/amulet.md) where it has 64^3 iterations */
    n += (size_t)snprintf(buf + n, cap - n, "G = (%s * 2) %%*%% t(%s)\n", vars[(int)(t_urand() * nv)],
                          vars[(int)(t_urand() * nv)]);
}

static void run_one(const char *src, Tally *t)
{
    Diag *d = diag_new();
    LangOptions lo = {0};
    Program *ast = lang_load_string(src, "<mpskip>", &lo, d);
    const char *outs[] = {"s", "q", "p", "Z", "G"};
    RtProgram *p = ast && !diag_nerrors(d) ? plan_build_program_outputs(ast, d, 2, NULL, outs, 5) : NULL;
    T_CHECK(p != NULL, "mpskip: compile: %s\n%s", diag_nerrors(d) ? diag_first_message(d) : "?", src);
    t->src = src;
    for (int i = 0; p && i < p->main.n; i++) {
        HopDag *dag = plan_dag(p->main.v[i]);
        if (dag && cg_enum_oracle(dag, 14, compare, t) < 0) T_CHECK(false, "mpskip: out of memory");
    }
    plan_program_free(p);
    lang_program_free(ast);
    diag_free(d);
}

/* The Row operators of a DAG compiled by the cost-based planner,
 * counted in its explain text. */
static int row_ops(const char *src, const char *tag)
{
    char *text = NULL;
    size_t len = 0;
    FILE *ex = open_memstream(&text, &len);
    CgOptions cg = {.enabled = true, .policy = CG_COST_BASED, .explain = ex};
    Diag *d = diag_new();
    LangOptions lo = {0};
    Program *ast = lang_load_string(src, "<wide>", &lo, d);
    RtProgram *p = ast && !diag_nerrors(d) ? plan_build_program(ast, d, 2, &cg) : NULL;
    T_CHECK(p != NULL, "%s: compile: %s", tag, diag_nerrors(d) ? diag_first_message(d) : "?");
    if (ex) fclose(ex);
    int n = 0;
    for (const char *q = text; q && (q = strstr(q, "CPlan ROW")); q++) n++;
    if (getenv("T_EXPLAIN") && text) fputs(text, stderr);
    free(text);
    plan_program_free(p);
    lang_program_free(ast);
    diag_free(d);
    return n;
}

/* Size decisions over wide dense rows (cost.c row_wide): a Row
 * operator's per-row loop with a rank-1 update t(X) %*% q (alone, or an
 * mmchain's with its dot product) over rows of X whose vectors pass 8 KB
 * loses to the unfused plan (dgemv, the mmchain kernel) and is not
 * chosen; narrower rows, and the dot products of X %*% v alone at any
 * width, stay fused. Under several machines' constants (the choice is
 * the loop's products after the read, not a ratio of rates). Plans only:
 * nothing runs; X is read through a metadata file, so its non-zeros are
 * known (an X of unknown non-zeros: wide_unknown_nnz). */
static void wide_rows(void)
{
    static const char *mcs[] = {
        "2.3e10 1.25e10 1.0e10 1.15e11 4.6e10",                    /* t_pin_machine's */
        "4.07684e10 3.07256e10 5.60535e9 6.16694e10 3.40088e10",   /* the helpers' pinned set */
        "2.76e10 1.91e10 2.67e9 8.07e10 5.29e10",                  /* 2-core AVX-512 VM, quiet */
        "5.85e10 4.45e10 1.16e10 1.24e11 6.57e10",                 /* a workstation */
    };
    static const struct { const char *name, *expr; int vecs; bool update; } pats[] = {
        {"t(X) %*% q", "g = t(X) %*% (((1 - y * z) > 0) * (1 - y * z) * y)", 2, true},
        {"mmchain", "g = t(X) %*% ((y + 2) * (X %*% v))", 3, true},
        {"X %*% v", "g = X %*% v + 3 * y", 2, false},
    };
    /* around cost.c's ROW_WIDE_BYTES (192 KB): the update beyond 12288
     * columns, the mmchain beyond 8192 */
    static const int64_t widths[] = {250, 2000, 8000, 12000, 16000};
    const char *old = getenv("BRAID_CG_MACHINE");
    char *keep = old ? strdup(old) : NULL;
    setenv("BRAID_CC", "/nonexistent/cc", 1);   /* the plans only: no compiler runs */
    char dir[] = "/tmp/braid-wide-XXXXXX", data[64];
    T_CHECK(mkdtemp(dir) != NULL, "wide rows: mkdtemp");
    snprintf(data, sizeof data, "%s/X.csv", dir);
    FILE *e = fopen(data, "w");   /* X's data: never read */
    if (e) fclose(e);
    for (size_t m = 0; m < sizeof mcs / sizeof *mcs; m++) {
        setenv("BRAID_CG_MACHINE", mcs[m], 1);
        for (size_t k = 0; k < sizeof pats / sizeof *pats; k++)
            for (size_t w = 0; w < sizeof widths / sizeof *widths; w++) {
                int64_t c = widths[w], r = 20000000 / c;
                /* X read with its metadata: known dense (the rule needs
                 * its non-zeros; rand's are not known when compiling) */
                char mtd[600], src[1024], tag[96];
                snprintf(mtd, sizeof mtd, "%s/X.csv.mtd", dir);
                FILE *f = fopen(mtd, "w");
                T_CHECK(f != NULL, "wide rows: %s", mtd);
                if (!f) continue;
                fprintf(f, "{\"data_type\": \"matrix\", \"value_type\": \"double\", \"rows\": %lld, \"cols\": %lld, "
                           "\"nnz\": %lld, \"format\": \"csv\", \"header\": false, \"sep\": \",\"}\n",
                        (long long)r, (long long)c, (long long)(r * c));
                fclose(f);
                snprintf(src, sizeof src,
                         "X = read(\"%s/X.csv\")\ny = rand(rows=%lld, cols=1, seed=2)\n"
                         "z = rand(rows=%lld, cols=1, seed=3)\nv = rand(rows=%lld, cols=1, seed=4)\n%s\n"
                         "write(g, \"g\")\n",
                         dir, (long long)r, (long long)r, (long long)c, pats[k].expr);
                snprintf(tag, sizeof tag, "wide rows, %s, %lld columns, machine %zu", pats[k].name, (long long)c, m);
                bool wide = pats[k].update && 8.0 * (double)c * pats[k].vecs > 192 * 1024;
                int n = row_ops(src, tag);
                T_CHECK(n == (wide ? 0 : 1), "%s: %d Row operators, want %d", tag, n, wide ? 0 : 1);
            }
    }
    unsetenv("BRAID_CC");
    char mtd[96];
    snprintf(mtd, sizeof mtd, "%s/X.csv.mtd", dir);
    remove(mtd);
    remove(data);
    rmdir(dir);
    if (keep) setenv("BRAID_CG_MACHINE", keep, 1);
    else unsetenv("BRAID_CG_MACHINE");
    free(keep);
}

/* The CPlan ROW lines and the value of g of one run of src under the
 * cost-based planner (codegen on) or with codegen off (*g: NaN unless
 * set); *nrc gets the run's recompilations. */
static int run_rows(const char *src, bool cg_on, double *g, int64_t *nrc, const char *tag)
{
    char *text = NULL;
    size_t len = 0;
    FILE *ex = open_memstream(&text, &len);
    CgOptions cg = {.enabled = cg_on, .policy = CG_COST_BASED, .explain = cg_on ? ex : NULL};
    const char *on[] = {"s"};
    TRun r;
    t_run_dml(src, &cg, 0, NULL, NULL, 1, on, &r);
    T_CHECK(r.rc == 0, "%s: %s", tag, r.err);
    *g = r.rc == 0 && r.nout == 1 && r.out[0].kind == V_DOUBLE ? r.out[0].d : NAN;
    *nrc = r.nrecompile;
    t_run_free(&r);
    if (ex) fclose(ex);
    int n = 0;
    for (const char *q = text; q && (q = strstr(q, "CPlan ROW")); q++) n++;
    if (getenv("T_EXPLAIN") && text) fputs(text, stderr);
    free(text);
    return n;
}

/* The wide-row rule over an X of unknown non-zeros (cost.c row_wide,
 * cg_wide_nnz_unknown), 16000 columns: X made by rand (its non-zeros
 * known when compiling: the cells) or as a product of rand with a
 * comparison (only bounded: hop.h nnz_ub). In a loop body X is a
 * variable of known size: where its non-zeros are only bounded the body
 * is recompiled before it runs, with X's real non-zeros, and loses its
 * Row operator when X is dense but keeps it when X is sparse (0.1%); a
 * rand X is known dense without recompiling. In X's own block (rand in
 * the same DAG) X is dense. Narrower rows (8000 columns: the update's
 * 125 KB) keep the Row operator either way. The result equals codegen
 * off. */
static void wide_unknown_nnz(void)
{
    static const struct { const char *name, *x; int64_t c; bool loop, dense, bound; } cases[] = {
        {"dense, loop", "rand(rows=64, cols=%lld, seed=1)", 16000, true, true, false},
        {"dense, loop, bounded", "(rand(rows=64, cols=%lld, seed=7) > -1) * rand(rows=64, cols=%lld, seed=1)", 16000,
         true, true, true},
        {"sparse, loop", "(rand(rows=64, cols=%lld, seed=7) > 0.999) * rand(rows=64, cols=%lld, seed=1)", 16000,
         true, false, true},
        {"dense, one block", "rand(rows=64, cols=%lld, seed=1)", 16000, false, true, false},
        {"dense, loop, 8000 columns", "rand(rows=64, cols=%lld, seed=1)", 8000, true, true, false},
    };
    setenv("BRAID_CC", "/nonexistent/cc", 1);   /* no compiler runs: the interpreted fallback */
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char x[256], src[1024];
        snprintf(x, sizeof x, cases[k].x, (long long)cases[k].c, (long long)cases[k].c);
        const char *g = "g = t(X) %*% (((1 - y * z) > 0) * (1 - y * z) * y)\ns = s + sum(g * g)\n";
        snprintf(src, sizeof src,
                 "X = %s\ny = rand(rows=64, cols=1, seed=2)\nz = rand(rows=64, cols=1, seed=3)\ns = 0\n%s%s%s",
                 x, cases[k].loop ? "for (i in 1:2) {\n" : "", g, cases[k].loop ? "}\n" : "");
        bool wide = cases[k].dense && cases[k].c > 12288;
        double on = NAN, off = NAN;
        int64_t nrc = 0, nrc_off = 0;
        int n = run_rows(src, true, &on, &nrc, cases[k].name);
        run_rows(src, false, &off, &nrc_off, cases[k].name);
        T_CHECK(wide ? n == 0 : n > 0, "wide rows, unknown non-zeros, %s: %d Row plans, want %s", cases[k].name, n,
                wide ? "none" : "some");
        /* recompiled for the rule only where the rows could be too wide */
        T_CHECK((nrc > 0) == (cases[k].loop && cases[k].bound && cases[k].c > 12288),
                "wide rows, unknown non-zeros, %s: %lld recompilations", cases[k].name, (long long)nrc);
        T_CHECK(fabs(on - off) <= 1e-9 * fabs(off) && off > 0, "wide rows, unknown non-zeros, %s: %.17g, off %.17g",
                cases[k].name, on, off);
    }
    unsetenv("BRAID_CC");
}

int main(void)
{
    t_pin_machine();
    t_seed(4242);
    /* under the sanitizers the first 500 of the plain pass's DAGs (the
     * same seed): the exhaustive oracle is most of the time, and the
     * plain pass compares all 2000; BRAID_MPSKIP_DAGS=N by hand */
    const char *lng = getenv("BRAID_TEST_LONG"), *nd = getenv("BRAID_MPSKIP_DAGS");
    int ndags = nd && atoi(nd) > 0 ? atoi(nd) : lng && *lng == '1' ? 20000 : T_SAN ? 500 : 2000;
    static char src[8192];
    Tally t = {0};
    const char *one = getenv("BRAID_MPSKIP_SRC");   /* debugging: one script */
    if (one) {
        char *text = t_slurp(one, NULL);
        if (text) run_one(text, &t);
        free(text);
        return t_done("test_mpskip");
    }
    wide_rows();
    wide_unknown_nnz();
    for (int i = 0; i < ndags; i++) {
        random_script(src, sizeof src);
        run_one(src, &t);
    }
    T_CHECK(t.worse == 0, "mpskip: %lld of %lld partitions chose a plan above the minimum (worst +%.3g)",
            (long long)t.worse, (long long)t.parts, t.worst);
    int64_t big = 0;
    for (int k = 8; k < 15; k++) big += t.by_pts[k];
    T_CHECK(t.parts >= ndags / 2 && big > 0, "mpskip: only %lld partitions (%lld with 8+ points) compared",
            (long long)t.parts, (long long)big);
    T_CHECK(t.amulet > 0, "mpskip: no partition with AMULET entries compared");
    fprintf(stderr, "mpskip: %lld partitions compared over %d DAGs; by points:", (long long)t.parts, ndags);
    for (int k = 1; k < 15; k++) fprintf(stderr, " %d:%lld", k, (long long)t.by_pts[k]);
    fprintf(stderr, "; %lld with AMULET entries\n", (long long)t.amulet);
    return t_done("test_mpskip");
}
