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
 * BRAID_TEST_LONG=1 runs ten times as many DAGs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
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

int main(void)
{
    t_pin_machine();
    t_seed(4242);
    const char *lng = getenv("BRAID_TEST_LONG");
    int ndags = lng && *lng == '1' ? 20000 : 2000;
    static char src[8192];
    Tally t = {0};
    const char *one = getenv("BRAID_MPSKIP_SRC");   /* debugging: one script */
    if (one) {
        char *text = t_slurp(one, NULL);
        if (text) run_one(text, &t);
        free(text);
        return t_done("test_mpskip");
    }
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
