/* test_recompile.c: reuse of dynamically recompiled code
 * (runtime/recompile.c). Loops whose blocks are recompiled every
 * iteration (mini-batches selected by scalar bounds, windows of changing
 * size, sizes from scalars, parfor, type changes of scalars, errors in a
 * later iteration) give exactly the results of recompiling every
 * execution with all scalars as literals, with codegen on and off, dense
 * and sparse inputs, 1 and 2 threads; the mini-batch loop reuses its code
 * (also when only the seeds of rand and sample change) and a block whose
 * sizes depend on a scalar through a builtin does not.
 * The small-block rule: a block recompiled on a few cells at a time is
 * compiled unfused after two such versions and fused again once its data
 * grow, with the results of codegen off. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan/recompile.h"
#include "tests/t.h"
#include "tests/t_dml.h"

typedef struct Res {
    TRun r;
    int64_t nrecompile, nhits;
} Res;

/* t_run_dml with X bound, keeping the recompilation counters. */
static int run(const char *src, const CgOptions *cg, MB *X, int nout, const char *const *onames, Res *res)
{
    const char *names[] = {"X"};
    MB *ins[] = {X};
    memset(res, 0, sizeof *res);
    t_run_dml(src, cg, 1, names, ins, nout, (const char **)onames, &res->r);
    res->nrecompile = res->r.nrecompile;
    res->nhits = res->r.nrc_hits;
    return res->r.rc;
}

/* Bit-identical values (NaN equal to NaN). */
static bool same(const Value *a, const Value *b)
{
    if (a->kind == V_MATRIX && b->kind == V_MATRIX) return mb_equal(a->m, b->m, 0);
    if (a->kind != b->kind && !(val_is_numeric(a) && val_is_numeric(b))) return false;
    if (val_is_numeric(a)) {
        double x = val_as_double(a), y = val_as_double(b);
        return x == y || (x != x && y != y);
    }
    return a->kind == b->kind;
}

typedef struct Case {
    const char *name;
    const char *src;
    const char *outs[3];
    int nout;
    int min_hits;      /* reused recompilations at least (cache on) */
    int max_hits;      /* and at most (-1: no bound) */
    bool error;        /* fails with a message containing "index" */
    bool prints;       /* prints: the text compared with the cache on and off */
} Case;

static const Case cases[] = {
    /* an update in place fills its target: the iterations' keys differ in
     * the target's non-zeros only, so the code is reused, except between
     * the empty first iteration (where R[i - 1, ] is rewritten as empty)
     * and the rest */
    {"filling an update-in-place target",
     "R = matrix(0, rows=24, cols=3)\n"
     "for (i in 1:24) {\n"
     "  s = sum(R[max(1, i - 1), ])\n"
     "  k = as.scalar(X[min(i, nrow(X)), 1])\n"
     "  R[i, 1] = s\n"
     "  R[i, 2:3] = matrix(k, 1, 2)\n"
     "}\n"
     "t = sum(R)\n",
     {"R", "t"}, 2, 20, -1, false, false},
    {"minibatch",
     "n = nrow(X)\n"
     "W = matrix(0.01, rows=ncol(X), cols=3)\n"
     "bs = 8\n"
     "beg = 1\n"
     "it = 0\n"
     "s = 0\n"
     "step = 0.5\n"
     "while (it < 14) {\n"
     "  end = min(beg + bs - 1, n)\n"
     "  Xb = X[beg:end, ]\n"
     "  H = tanh(Xb %*% W + it / 10)\n"
     "  G = t(Xb) %*% (H * (1 - H ^ 2))\n"
     "  W = W - step / nrow(Xb) * G\n"
     "  s = s + sum(H) + end + sum(Xb != 0)\n"
     "  it = it + 1\n"
     "  if (end == n) { beg = 1 } else { beg = end + 1 }\n"
     "  step = step * 0.9\n"
     "}\n",
     {"W", "s"}, 2, 5, -1, false, false},
    /* the bounds printed per batch (the autoencoder's progress line),
     * also through string concatenation (print("Iter " + i)), and
     * asserted, are values, not plan inputs: the code is reused as
     * without the print, and the lines are those of recompiling every
     * iteration */
    {"minibatch printing its bounds",
     "n = nrow(X)\n"
     "W = matrix(0.01, rows=ncol(X), cols=3)\n"
     "bs = 8\n"
     "beg = 1\n"
     "it = 0\n"
     "while (it < 14) {\n"
     "  end = min(beg + bs - 1, n)\n"
     "  Xb = X[beg:end, ]\n"
     "  H = tanh(Xb %*% W + it / 10)\n"
     "  W = W - 0.1 * t(Xb) %*% H\n"
     "  print(\"it=%5.4f beg=%d end=%d obj=%f\", it / 3, beg, end, sum(H ^ 2))\n"
     "  print(\"Iter \" + it + \": beg=\" + beg + \" end=\" + end + \" of \" + n + \", obj \" + sum(H ^ 2))\n"
     "  assert(end <= n)\n"
     "  it = it + 1\n"
     "  if (end == n) { beg = 1 } else { beg = end + 1 }\n"
     "}\n",
     {"W"}, 1, 5, -1, false, true},
    {"windows",
     "s = 0\n"
     "for (i in 1:9) {\n"
     "  k = 1 + i %% 3\n"
     "  Y = X[1:(k * 5), ] * i\n"
     "  Z = X[i:(i + 4), 2:3]\n"
     "  s = s + sum(Y) + sum(Z * Z) + nrow(Y)\n"
     "}\n",
     {"s"}, 1, 3, -1, false, false},
    {"builtin sizes",
     "s = 0\n"
     "for (i in 1:5) {\n"
     "  M = matrix(i, rows=i, cols=2)\n"
     "  s = s + sum(M %*% t(M)) + sum(X[1:i, ] * i)\n"
     "}\n",
     {"s"}, 1, 0, 0, false, false},
    {"parfor",
     "R = matrix(0, rows=6, cols=1)\n"
     "parfor (i in 1:6) {\n"
     "  b = (i - 1) * 4 + 1\n"
     "  Xb = X[b:(b + 3), ]\n"
     "  R[i, 1] = sum(exp(Xb * 0.1) * i) + sum(Xb %*% t(Xb))\n"
     "}\n",
     {"R"}, 1, 0, -1, false, false},
    {"scalar types",
     "a = 1\n"
     "f = TRUE\n"
     "s = 0\n"
     "for (i in 1:6) {\n"
     "  Xb = X[i:(i + 2), ]\n"
     "  Y = Xb * a + a - f\n"
     "  s = s + sum(Y) + sum(Xb * f)\n"
     "  a = a / 2\n"
     "  f = !f\n"
     "}\n",
     {"s"}, 1, 1, -1, false, false},
    {"rand seeds",
     "s = 0\n"
     "for (i in 1:8) {\n"
     "  d = i * 3 + 1\n"
     "  M = rand(rows=nrow(X), cols=2, seed=d) + X[, 1:2]\n"
     "  s = s + sum(M * M) + as.scalar(sample(100, 1, FALSE, d))\n"
     "}\n",
     {"s"}, 1, 6, -1, false, false},
    {"bounds error",
     "s = 0\n"
     "for (i in 1:20) {\n"
     "  Xb = X[(i * 5):(i * 5 + 4), ]\n"
     "  s = s + sum(Xb)\n"
     "}\n",
     {"s"}, 1, 0, -1, true, false},
};
#define NCASES ((int)(sizeof cases / sizeof *cases))

/* run() of case c; a case that prints has its standard output taken
 * into *text (malloc'd; NULL if it could not be read). */
static int run_captured(const Case *c, const CgOptions *cg, MB *X, Res *res, char **text)
{
    *text = NULL;
    if (!c->prints) return run(c->src, cg, X, c->nout, c->outs, res);
    fflush(stdout);
    FILE *tmp = tmpfile();
    int saved = tmp ? dup(STDOUT_FILENO) : -1;
    if (saved >= 0) dup2(fileno(tmp), STDOUT_FILENO);
    int rc = run(c->src, cg, X, c->nout, c->outs, res);
    fflush(stdout);
    if (saved >= 0) {
        dup2(saved, STDOUT_FILENO);
        close(saved);
        long n = fseek(tmp, 0, SEEK_END) == 0 ? ftell(tmp) : -1;
        if (n >= 0 && fseek(tmp, 0, SEEK_SET) == 0 && (*text = malloc((size_t)n + 1))) {
            size_t got = fread(*text, 1, (size_t)n, tmp);
            (*text)[got] = 0;
        }
    }
    if (tmp) fclose(tmp);
    return rc;
}

/* Relative difference of two numeric values. */
static double rel(const Value *a, const Value *b)
{
    double x = val_as_double(a), y = val_as_double(b);
    return fabs(x - y) / fmax(1, fabs(y));
}

/* The loop body is recompiled every iteration (k in matrix()); its data
 * have 4 rows while k <= small_iters, then 400 (8000 cells, over the
 * rule's 4096). A block that reads a large matrix is never small, so the
 * data are generated in the loop. */
static void test_small_rule(void)
{
    MB *X = t_gen(400, 20, 1, -1, 1, false);
    CgOptions cg = {.enabled = true, .plancache = true, .policy = CG_COST_BASED};
    CgOptions off = {.enabled = false};
    for (int small_iters = 6; small_iters <= 12; small_iters += 6) {
        char src[512];
        snprintf(src, sizeof src,
                 "s = 0\n"
                 "for (k in 1:12) {\n"
                 "  n = ifelse(k <= %d, 4, 400)\n"
                 "  Xb = rand(rows=n, cols=20, min=-1, max=1, seed=k)\n"
                 "  A = Xb * k + 1\n"
                 "  s = s + sum(exp(A / 10) * Xb) + sum(A / (Xb + 3)) + sum(matrix(k, rows=2, cols=1))\n"
                 "}\n", small_iters);
        const char *on[] = {"s"};
        Res r0, r1, r2;
        rc_set_small_cells(0);
        run(src, &cg, X, 1, on, &r0);
        rc_set_small_cells(4096);
        run(src, &cg, X, 1, on, &r1);
        run(src, &off, X, 1, on, &r2);
        T_CHECK(!r0.r.rc && !r1.r.rc && !r2.r.rc, "small rule: %s / %s / %s", r0.r.err, r1.r.err, r2.r.err);
        if (!r0.r.rc && !r1.r.rc && !r2.r.rc) {
            /* fused: the first two small versions, and the large ones
             * from the second on (the first large one had unknown sizes
             * at compile time, n being computed in the block, and runs
             * unfused: the rule learns of the growth from its run) */
            int expect = small_iters < 12 ? small_iters - 1 : 10;
            int64_t skipped = r0.r.st.dags - r1.r.st.dags;
            T_CHECK(skipped == expect, "small rule (%d small iterations): %lld DAGs not fused, expected %d",
                    small_iters, (long long)skipped, expect);
            T_CHECK(rel(&r1.r.out[0], &r2.r.out[0]) < 1e-10 && rel(&r0.r.out[0], &r2.r.out[0]) < 1e-10,
                    "small rule (%d small iterations): results differ", small_iters);
        }
        t_run_free(&r0.r);
        t_run_free(&r1.r);
        t_run_free(&r2.r);
    }
    rc_set_small_cells(4096);
    mb_release(X);
}

/* In a parfor body the workers share the block, so which compiled
 * version ran before which depends on the schedule: the rule there reads
 * no history and compiles a copy unfused exactly when every matrix in it
 * has a known size within the limit. Fused and unfused operators agree
 * only to the last bits, so with the history (before) the results
 * changed from run to run; now each run equals codegen off bit for bit
 * (every body copy here is known small), and a body over a matrix of
 * unknown size stays fused. */
static void test_small_rule_parfor(void)
{
    MB *X = t_gen(400, 20, 1, -1, 1, false);
    CgOptions cg = {.enabled = true, .plancache = true, .policy = CG_COST_BASED};
    CgOptions off = {.enabled = false};
    const char *src =
        "R = matrix(0, rows=12, cols=1)\n"
        "parfor (k in 1:12) {\n"
        "  Xb = rand(rows=4, cols=20, min=-1, max=1, seed=k)\n"
        "  A = Xb * k + 1\n"
        "  R[k, 1] = sum(exp(A / 10) * Xb) + sum(A / (Xb + 3))\n"
        "}\n"
        "s = sum(R)\n";
    const char *on[] = {"s"};
    rc_set_small_cells(4096);
    Res ref;
    run(src, &off, X, 1, on, &ref);
    T_CHECK(!ref.r.rc, "small rule in parfor: %s", ref.r.err);
    for (int rep = 0; rep < 4 && !ref.r.rc; rep++) {
        Res r;
        run(src, &cg, X, 1, on, &r);
        T_CHECK(!r.r.rc && val_as_double(&r.r.out[0]) == val_as_double(&ref.r.out[0]),
                "small rule in parfor (run %d): %.17g, codegen off %.17g", rep,
                r.r.rc ? NAN : val_as_double(&r.r.out[0]), val_as_double(&ref.r.out[0]));
        t_run_free(&r.r);
    }
    t_run_free(&ref.r);
    /* sizes computed in the body: unknown at compile time, fused */
    const char *src2 =
        "R = matrix(0, rows=12, cols=1)\n"
        "parfor (k in 1:12) {\n"
        "  n = ifelse(k <= 6, 4, 400)\n"
        "  Xb = rand(rows=n, cols=20, min=-1, max=1, seed=k)\n"
        "  A = Xb * k + 1\n"
        "  R[k, 1] = sum(exp(A / 10) * Xb) + sum(A / (Xb + 3))\n"
        "}\n"
        "s = sum(R)\n";
    Res a, b;
    rc_set_small_cells(0);
    run(src2, &cg, X, 1, on, &a);
    rc_set_small_cells(4096);
    run(src2, &cg, X, 1, on, &b);
    T_CHECK(!a.r.rc && !b.r.rc && a.r.st.dags == b.r.st.dags && a.r.st.dags > 0,
            "small rule in parfor, unknown sizes: %lld DAGs fused with the rule, %lld without",
            (long long)b.r.st.dags, (long long)a.r.st.dags);
    t_run_free(&a.r);
    t_run_free(&b.r);
    mb_release(X);
}

/* A sparse matrix made in an earlier block (rand) drives an outer-product-like product in a loop:
 * the block is compiled with the value's non-zeros (known at compile time
 * from rand's sparsity, else by recompilation), so the product is
 * computed at the non-zeros only (a fused Outer operator, not a 300 x 300
 * dense product), once (the loop reuses the code), equal to codegen off. */
static void test_outer_nnz(void)
{
    const char *src =
        "W = rand(rows=300, cols=300, sparsity=0.01, min=1, max=2, seed=3)\n"
        "U = rand(rows=300, cols=40, seed=1)\n"
        "V = rand(rows=300, cols=40, seed=2)\n"
        "s = 0\n"
        "for (i in 1:5) {\n"
        "  s = s + sum(W * log(U %*% t(V) + 1e-15))\n"
        "  U = U * 0.9\n"
        "}\n";
    MB *X = t_gen(2, 2, 1, -1, 1, false);
    CgOptions cg = {.enabled = true, .plancache = true, .policy = CG_COST_BASED};
    CgOptions off = {.enabled = false};
    const char *on[] = {"s"};
    Res r1, r2;
    run(src, &cg, X, 1, on, &r1);
    run(src, &off, X, 1, on, &r2);
    T_CHECK(!r1.r.rc && !r2.r.rc, "outer nnz: %s / %s", r1.r.err, r2.r.err);
    if (!r1.r.rc && !r2.r.rc) {
        T_CHECK(r1.r.st.fused[3] >= 1, "outer nnz: no Outer operator (%lld; fused[3] counts Outer)", (long long)r1.r.st.fused[3]);
        /* W's non-zeros are known at compile time since size propagation
         * carries them into the loop: no recompilation at all */
        T_CHECK(r1.nrecompile == 0 || r1.nhits >= 3, "outer nnz: %lld of %lld recompilations reused",
                (long long)r1.nhits, (long long)r1.nrecompile);
        T_CHECK(rel(&r1.r.out[0], &r2.r.out[0]) < 1e-8, "outer nnz: results differ");
    }
    t_run_free(&r1.r);
    t_run_free(&r2.r);
    mb_release(X);
}

/* The specializations of function "g" a run compiled: their count and
 * the rows of each one's first parameter, in the program's order. */
static int g_nspec;
static int64_t g_spec_rows[16];

static void count_specs(const RtProgram *p)
{
    g_nspec = 0;
    for (int i = 0; i < p->nfuncs; i++) {
        const FProg *fp = p->funcs[i];
        if (!fp->sig || !fp->compiled || strcmp(fp->func->name, "g")) continue;
        if (g_nspec < 16) g_spec_rows[g_nspec] = fp->sig[0].rows;
        g_nspec++;
    }
}

/* A call in a recompiled block whose arguments now have known sizes runs
 * the callee's specialization for them (plan/recompile.c
 * specialize_calls), with the reuse cache on (rc_get, the default) as
 * without it (rc_recompile): the same specializations (one per size of
 * the argument, not per value of k), the same results. X's size is
 * known only at run time and Y's rows change with i; g has control flow
 * (not inlined). Before, only the cache-off path specialized (cache on:
 * no specialization). */
static void test_call_spec(void)
{
    const char *src =
        "s = 0\n"
        "for (i in 1:3) {\n"
        "  for (k in 1:2) {\n"
        "    Y = X[1:(10 * i), ]\n"
        "    Z = g(Y * k, k)\n"
        "    s = s + sum(Z) + nrow(Z) * 1000\n"
        "  }\n"
        "}\n"
        "g = function(Matrix[Double] A, Double s) return (Matrix[Double] B) {\n"
        "  B = t(A) %*% A\n"
        "  if (s > 1) {\n"
        "    B = B + s\n"
        "  }\n"
        "  for (j in 1:2) {\n"
        "    B = B * 0.5\n"
        "  }\n"
        "}\n";
    MB *X = t_gen(40, 6, 1, -1, 1, false);
    CgOptions cgs[] = {{.enabled = false}, {.enabled = true, .plancache = true, .policy = CG_COST_BASED}};
    const char *on[] = {"s"};
    for (int g = 0; g < 2; g++) {
        int n[2];
        int64_t rows[2][16];
        Res r[2];
        t_dml_inspect = count_specs;
        for (int c = 0; c < 2; c++) {
            rc_set_cache(c == 1);
            run(src, &cgs[g], X, 1, on, &r[c]);
            n[c] = g_nspec;
            memcpy(rows[c], g_spec_rows, sizeof rows[c]);
        }
        t_dml_inspect = NULL;
        rc_set_cache(true);
        T_CHECK(!r[0].r.rc && !r[1].r.rc, "call spec (codegen %d): %s / %s", g, r[0].r.err, r[1].r.err);
        if (!r[0].r.rc && !r[1].r.rc)
            T_CHECK(same(&r[0].r.out[0], &r[1].r.out[0]), "call spec (codegen %d): cache on %.17g, off %.17g", g,
                    val_as_double(&r[1].r.out[0]), val_as_double(&r[0].r.out[0]));
        /* Y's rows 10, 20, 30: three specializations either way */
        for (int c = 0; c < 2; c++) {
            bool want = n[c] == 3;
            for (int k = 0; k < 3 && want; k++) want = rows[c][k] == 10 * (k + 1);
            T_CHECK(want, "call spec (codegen %d, cache %s): %d specializations of g (want 3: rows 10, 20, 30)%s",
                    g, c ? "on" : "off", n[c], n[c] > 0 ? "" : "; the recompiled call ran the generic g");
        }
        T_CHECK(r[1].nhits > 0, "call spec (codegen %d): no reuse with the cache on (%lld recompiled)", g,
                (long long)r[1].nrecompile);
        t_run_free(&r[0].r);
        t_run_free(&r[1].r);
    }
    mb_release(X);
}

int main(void)
{
    t_pin_machine();
    test_call_spec();
    test_small_rule();
    test_small_rule_parfor();
    test_outer_nnz();
    /* (the rule compiles some blocks unfused: bit-identical results of
     * the reuse cache on and off need it off) */
    rc_set_small_cells(0);
    CgOptions cgs[] = {
        {.enabled = false},
        {.enabled = true, .plancache = true, .policy = CG_COST_BASED},
        {.enabled = true, .plancache = true, .policy = CG_FUSE_ALL, .keep_fused = true},
    };
    const char *cgname[] = {"codegen off", "cost based", "fuse_all"};
    for (int sp = 0; sp < 2; sp++) {
        t_seed(7 + (uint64_t)sp);
        MB *X = t_gen(50, 7, sp ? 0.1 : 1, -1, 1, sp == 1);
        for (int ci = 0; ci < NCASES; ci++) {
            const Case *c = &cases[ci];
            for (int g = 0; g < 3; g++)
                for (int th = 1; th <= 2; th++) {
                    char what[160];
                    snprintf(what, sizeof what, "%s (%s, %s, %d threads)", c->name, sp ? "sparse" : "dense",
                             cgname[g], th);
                    br_set_threads(th);
                    Res on, off;
                    char *txt_off = NULL, *txt_on = NULL;
                    rc_set_cache(false);
                    int rc_off = run_captured(c, &cgs[g], X, &off, &txt_off);
                    rc_set_cache(true);
                    int rc_on = run_captured(c, &cgs[g], X, &on, &txt_on);
                    if (c->prints) {
                        T_CHECK(txt_on && txt_off && !strcmp(txt_on, txt_off) && strstr(txt_on, "end=50 "),
                                "%s: printed text differs\n%s---\n%s", what, txt_on ? txt_on : "(none)",
                                txt_off ? txt_off : "(none)");
                    }
                    free(txt_on);
                    free(txt_off);
                    T_CHECK(off.nhits == 0, "%s: reuse with the cache off", what);
                    if (c->error) {
                        T_CHECK(rc_on && rc_off, "%s: no error", what);
                        T_CHECK(strstr(on.r.err, "index") && !strcmp(on.r.err, off.r.err),
                                "%s: error '%s', without the cache '%s'", what, on.r.err, off.r.err);
                    } else {
                        T_CHECK(!rc_on && !rc_off, "%s: %s / %s", what, on.r.err, off.r.err);
                        for (int k = 0; !rc_on && !rc_off && k < c->nout; k++)
                            T_CHECK(same(&on.r.out[k], &off.r.out[k]), "%s: output %s differs", what,
                                    c->outs[k]);
                    }
                    if (!c->error || c->min_hits == 0) {
                        T_CHECK(on.nhits >= c->min_hits && (c->max_hits < 0 || on.nhits <= c->max_hits),
                                "%s: %lld reused recompilations (%lld recompiled)", what, (long long)on.nhits,
                                (long long)on.nrecompile);
                    }
                    t_run_free(&on.r);
                    t_run_free(&off.r);
                }
        }
        mb_release(X);
    }
    rc_set_cache(true);
    rc_set_small_cells(4096);
    br_set_threads(0);
    return t_done("test_recompile");
}
