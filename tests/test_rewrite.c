/* test_rewrite.c: every rewrite of the optimizer is checked twice: the
 * rewritten plan (the -explain hops text of the compiled program must
 * contain / must not contain given operators) and the result (the script
 * run with rewrites on equals the run with rewrites off). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "lang/load.h"
#include "plan/build.h"
#include "runtime/interp.h"
#include "t.h"

static VKind out_kind;   /* the kind of `out` the last run() left */

/* Compiles script at optlevel, runs it, returns the value of `out` (a
 * scalar or the sum of a matrix) and the explain text (caller frees). */
static double run(const char *script, int optlevel, char **explain)
{
    Diag *d = diag_new();
    const char *outs[] = {"out"};
    LangOptions lo = {.builtin_dir = BRAID_SOURCE_DIR "/scripts/builtin"};
    Program *ast = lang_load_string(script, "<test>", &lo, d);
    RtProgram *p = ast && !diag_nerrors(d) ? plan_build_program_outputs(ast, d, optlevel, NULL, outs, 1) : NULL;
    if (!p) {
        diag_print(d, stderr);
        diag_free(d);
        lang_program_free(ast);
        return NAN;
    }
    NameSet live = {0}, in = {0};
    ns_add(&live, outs[0]);
    plan_liveness(&p->main, &live, &in);
    ns_free(&live);
    ns_free(&in);
    if (explain) {
        size_t n;
        FILE *f = open_memstream(explain, &n);
        plan_print_hops(p, f);
        fclose(f);
    }
    FILE *devnull = fopen("/dev/null", "w");
    RtOptions ro = {.out = devnull, .seed = -1};
    Rt rt;
    rt_init(&rt, p, d, &ro);
    Frame f;
    st_init(&f.vars);
    f.depth = 0;
    double r = NAN;
    if (rt_run_main(&rt, &f) == 0) {
        Value *v = st_get(&f.vars, "out");
        out_kind = v ? v->kind : V_NONE;
        if (v && v->kind == V_MATRIX) {
            double s = 0;
            for (int64_t i = 0; i < v->m->rows; i++)
                for (int64_t j = 0; j < v->m->cols; j++) s += mb_get(v->m, i, j) * (1 + 0.001 * (double)(i + 2 * j));
            r = s;
        } else if (v) r = val_as_double(v);
    } else {
        rt_print_error(&rt, stderr);
    }
    fclose(devnull);
    st_free(&f.vars);
    rt_destroy(&rt);
    plan_program_free(p);
    lang_program_free(ast);
    diag_free(d);
    return r;
}

typedef struct Case {
    const char *name;
    const char *script;
    const char *must;      /* '|'-separated substrings the plan must contain */
    const char *mustnot;   /* '|'-separated substrings it must not contain */
} Case;

#define DATA "X = rand(rows=50, cols=7, seed=1) - 0.5\nY = rand(rows=50, cols=7, seed=2)\n" \
             "y = rand(rows=50, cols=1, seed=3)\nw = rand(rows=50, cols=1, seed=4)\n" \
             "v = rand(rows=7, cols=1, seed=5)\nS = rand(rows=7, cols=7, seed=6)\n"

/* nonnegative data: no subtraction in the plan but the negations tested */
#define NDATA "A = rand(rows=50, cols=7, seed=1)\ny = rand(rows=50, cols=1, seed=3)\n" \
              "u = rand(rows=50, cols=1, seed=4)\nv = rand(rows=7, cols=1, seed=5)\nS = rand(rows=7, cols=7, seed=6)\n"

static const Case cases[] = {
    {"cse", DATA "out = sum(X * Y) + sum(X * Y)\n", NULL, NULL},
    {"constant folding", DATA "a = 2 * 3 + 1\nout = sum(X) * a\n", "LIT 7", NULL},
    {"branch removal", DATA "k = 1\nif (k == 1) { Z = X * 2 } else { Z = X * 3 }\nout = Z\n", NULL, "IF ("},
    {"t(t(X))", DATA "out = t(t(X)) + 1\n", NULL, ") t "},
    {"X*1", DATA "out = X * 1 + Y\n", NULL, ") *  ("},
    {"X+0", DATA "out = (X + 0) * Y\n", NULL, ") +  ("},
    {"X+X", DATA "out = X + X\n", "LIT 2", NULL},
    {"X*X", DATA "out = X * X\n", "^", NULL},
    {"X-X*Y", DATA "out = X - X * Y\n", "LIT 1", NULL},
    {"sum(t(X))", DATA "out = sum(t(X))\n", NULL, ") t "},
    {"sum(X+Y)", DATA "out = sum(X + Y)\n", NULL, ") + (1"},
    {"rowSums(t(X))", DATA "out = rowSums(t(X))\n", "uac(sum)", NULL},
    {"colSums(t(X))", DATA "out = colSums(t(X))\n", "uar(sum)", NULL},
    {"sum(X^2)", DATA "out = sum(X ^ 2)\n", "sumsq", NULL},
    {"trace(X%*%Y)", DATA "out = trace(S %*% t(S))\n", NULL, "trace"},
    {"sum(diag(X))", DATA "out = sum(diag(S))\n", "trace", NULL},
    {"(-t(X))%*%y", DATA "out = (-t(X)) %*% y\n", NULL, NULL},
    {"diag(v)%*%y", DATA "out = diag(y) %*% w\n", NULL, "diag"},
    {"identity rix", DATA "out = X[1:nrow(X), ] * 2\n", NULL, "rix"},
    {"tsmm left", DATA "out = t(X) %*% X\n", "tsmm", "%*%"},
    {"tsmm right", DATA "out = X %*% t(X)\n", "tsmm", "%*%"},
    {"mmchain w", DATA "out = t(X) %*% (w * (X %*% v))\n", "mmchain", NULL},
    {"mmchain", DATA "out = t(X) %*% (X %*% v)\n", "mmchain", NULL},
    /* sizes known only at run time: tmm at compile time, mmchain when the
     * block is recompiled (rw_physical_rule on tmm) */
    {"mmchain at recompile", DATA "n = as.integer(sum(y > -1))\nZ = rand(rows=n, cols=7, seed=9)\n"
                                  "u = rand(rows=n, cols=1, seed=10)\n"
                                  "if (n > 0) { out = t(Z) %*% (u * (Z %*% v)) } else { out = v }\n",
     "tmm", NULL},
    {"transpose-free", DATA "out = t(X) %*% y\n", "tmm", ") t "},
    /* lmDS's normal equations: t(X) %*% X and t(X) %*% y in one pass
     * (rw_tsmm_cbind), the two blocks of tsmma(X, y); also with two
     * columns of y and both products used twice */
    {"tsmm and tmm in one pass", DATA "A = t(X) %*% X\nb = t(X) %*% y\nout = A %*% v + sum(b)\n", "tsmma|rix",
     "tmm|tsmm "},
    {"tsmm and tmm, v of 2 columns", DATA "V = cbind(y, w)\nout = sum(t(X) %*% X) + sum((t(X) %*% V) ^ 2)\n",
     "tsmma", "tmm"},
    {"lmDS", DATA "out = lmDS(X=X, y=y, icpt=0, reg=1e-7, verbose=FALSE)\n", "tsmma", "tmm"},
    /* a script that calls lineage(): no pair (its trace names SystemDS's
     * operators, tsmm and ba+*) */
    {"tsmm and tmm under lineage()", DATA "A = t(X) %*% X\nb = t(X) %*% y\nout = A %*% v + sum(b)\n"
                                     "s = lineage(b)\n", "tsmm", "tsmma"},
    /* v computed from t(X) %*% X: no pair (a cycle) */
    {"tsmm and a tmm of it", DATA "A = t(X) %*% X\nu = X %*% rowSums(A)\nout = t(X) %*% u\n", "tsmm", "tsmma"},
    /* a known sparse X: the sparse kernels, no pair */
    {"tsmm and tmm, sparse X", "X = rand(rows=50, cols=7, sparsity=0.1, seed=1)\ny = rand(rows=50, cols=1, seed=3)\n"
                               "out = sum(t(X) %*% X) + sum(t(X) %*% y)\n", "tmm", "tsmma"},
    /* cellwise operators pull a lone transpose up to where it goes */
    {"t(X)*t(Y)", DATA "out = sum(t(X) * t(Y))\n", NULL, ") t "},
    {"f(t(X))", DATA "out = sum(abs(t(X)) * 2)\n", NULL, ") t "},
    {"t(X)+s", DATA "out = (t(X) + 1) %*% y\n", "tmm", ") t "},
    {"t(X) used twice", DATA "T = t(X)\nout = (T + 1) %*% y + T %*% w\n", NULL, NULL},
    {"mm chain order", DATA "A = rand(rows=100, cols=5, seed=7)\nB = rand(rows=5, cols=80, seed=8)\n"
                            "C = rand(rows=80, cols=90, seed=9)\nz = rand(rows=90, cols=1, seed=10)\n"
                            "out = A %*% B %*% C %*% z\n", "[80,1,|[5,1,", "[100,80,|[100,90,"},
    {"rowSums of a column", DATA "out = rowSums(y) + 1\n", NULL, "uar("},
    {"empty operand", DATA "Z = matrix(0, rows=50, cols=7)\nout = sum(Z * X) + sum(X)\n", NULL, "* ("},
    /* Z is empty and known so in later blocks (the loop ends the block) */
    {"X+empty", DATA "Z = matrix(0, rows=50, cols=7)\nfor (i in 1:2) { Y = Y * 1.5 }\nout = (X + Z) * Y\n",
     NULL, ") +  ("},
    {"empty-X", DATA "Z = matrix(0, rows=50, cols=7)\nfor (i in 1:2) { Y = Y * 1.5 }\nout = (Z - X) * Y\n",
     NULL, NULL},
    {"t(empty)", DATA "Z = matrix(0, rows=50, cols=7)\nfor (i in 1:2) { Y = Y * 1.5 }\nout = t(Z) + t(Y)\n",
     NULL, NULL},
    {"round(empty)", DATA "Z = matrix(0, rows=50, cols=7)\nfor (i in 1:2) { Y = Y * 1.5 }\nout = round(Z) + Y\n",
     NULL, "round"},
    {"rix of empty", DATA "Z = matrix(0, rows=50, cols=7)\nfor (i in 1:2) { Y = Y * 1.5 }\n"
                          "out = Z[3:12, 2:4] + Y[1:10, 1:3]\n", NULL, "rix  (1"},
    {"diag(X%*%Y)", DATA "out = diag(X %*% t(Y)) + y\n", "uar(sum)", "diag"},
    {"full lix", DATA "W = X\nW[1:nrow(W), ] = Y\nout = W * 2\n", NULL, "lix"},
    {"matrix(1)/X", DATA "out = matrix(1, rows=nrow(Y), cols=ncol(Y)) / Y\n", NULL, "matrix"},
    {"rand*c", DATA "R = rand(rows=50, cols=7, min=1, max=2, seed=3) * 3\nout = R + X\n", "LIT 6", NULL},
    {"inlining", DATA "f = function(Matrix[Double] A) return (Matrix[Double] B) { B = t(A) %*% A }\n"
                      "out = f(X)\n", "tsmm", NULL},
    {"loop sizes", DATA "Z = X\nfor (i in 1:3) { Z = Z * 0.5 + Y }\nout = Z\n", NULL, NULL},
    /* broadcasts written as outer products with ones: the vector is
     * broadcast, no product (y is 50 x 1, X 50 x 7) */
    {"X*(y%*%ones)", DATA "out = X * (y %*% matrix(1, rows=1, cols=7))\n", NULL, "%*%|matrix"},
    {"(y%*%ones)-X", DATA "out = (y %*% matrix(1, rows=1, cols=ncol(X))) - X\n", NULL, "%*%|matrix"},
    {"X/(rowSums%*%ones)", DATA "out = X / (rowSums(X) %*% matrix(1, rows=1, cols=7))\n", "uar(sum)", "%*%|matrix"},
    {"X*(y%*%twos) stays", DATA "out = X * (y %*% matrix(2, rows=1, cols=7))\n", "%*%", NULL},
    {"y*(y%*%ones) stays", DATA "out = y[1:50, 1] + (y %*% matrix(1, rows=1, cols=7))\n", "%*%", NULL},
    /* a 1x1 operand: the scalar product (SystemDS's
     * simplifyScalarMatrixMult), with matching inner sizes and, in a
     * branch, with inner sizes that differ */
    {"1x1 %*%", DATA "s = matrix(3, rows=1, cols=1) + sum(v)\nout = X * (s %*% t(v)) + (y %*% s)\n",
     "as.scalar", "%*%"},
    {"1x1 %*% in a branch", DATA "s = matrix(3, rows=1, cols=1)\n"
                                 "if (sum(X) > -1000) { out = X %*% s + s %*% Y } else { out = X }\n",
     "as.scalar", "%*%"},
    {"in place with reads", "v = matrix(1, rows=30, cols=1)\n"
                            "for (i in 2:30) { v[i, 1] = as.scalar(v[i - 1, 1]) * 0.5 + sum(v[1:i, ]) }\n"
                            "out = v\n", "v [move]", NULL},
};

/* a negated operand of a product moves to the product where that is no
 * larger: every negation in the plan has the dims neg (NULL: results only) */
typedef struct NegCase {
    const char *name, *script, *neg;
} NegCase;

static const NegCase neg_cases[] = {
    {"-t(A)%*%y", NDATA "out = -t(A) %*% y\n", "[7,1,"},
    {"(-A)%*%v", NDATA "out = (-A) %*% v\n", "[50,1,"},
    {"t(A)%*%(-y)", NDATA "out = t(A) %*% (-y) + 1\n", "[7,1,"},
    {"A%*%(-S) stays", NDATA "out = A %*% (-S)\n", "[7,7,"},
    {"(-u)%*%t(v) stays", NDATA "out = (-u) %*% t(v)\n", "[50,1,"},
    {"-A used twice stays", NDATA "N = -A\nout = N %*% v + sum(N)\n", "[50,7,"},
    /* sizes known only when the block is recompiled (then a tmm) */
    {"-t(Z)%*%g at recompile", NDATA "n = as.integer(sum(y > -1))\nZ = rand(rows=n, cols=7, seed=9)\n"
                                     "g = rand(rows=n, cols=1, seed=10)\n"
                                     "if (n > 0) { out = -t(Z) %*% g } else { out = v }\n", NULL},
};

static bool has(const char *text, const char *list)
{
    char buf[256];
    const char *p = list;
    while (*p) {
        const char *e = strchr(p, '|');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        memcpy(buf, p, n);
        buf[n] = 0;
        if (!strstr(text, buf)) return false;
        p += n + (e ? 1 : 0);
    }
    return true;
}

static bool hasany(const char *text, const char *list)
{
    char buf[256];
    const char *p = list;
    while (*p) {
        const char *e = strchr(p, '|');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        memcpy(buf, p, n);
        buf[n] = 0;
        if (strstr(text, buf)) return true;
        p += n + (e ? 1 : 0);
    }
    return false;
}

/* Does every negation (a "-" of one input) in the plan have the dims? */
static bool negations_are(const char *text, const char *dims)
{
    int n = 0;
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        char line[512];
        if (len >= sizeof line) continue;
        memcpy(line, l, len);
        line[len] = 0;
        const char *m = strstr(line, ") -  (");
        const char *comma = m ? strchr(m + 6, ',') : NULL, *close = m ? strchr(m + 6, ')') : NULL;
        if (!close || (comma && comma < close)) continue;   /* not a minus, or a binary one */
        if (!strstr(line, dims)) return false;
        n++;
    }
    return n > 0;
}

/* How many lines of text contain s? */
static int lines_with(const char *text, const char *s)
{
    int n = 0;
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        const char *e = strchr(l, '\n'), *m = strstr(l, s);
        n += m && (!e || m < e);
    }
    return n;
}

/* as.scalar(X op Y) -> as.scalar(X) op as.scalar(Y) (SystemDS's
 * simplifyBinaryMatrixScalarOperation): no 1x1 matrix but the two inputs
 * is built, and a comparison's result is a boolean as in SystemDS, where
 * the plan without rewrites gives the 1x1 matrix's double */
static void as_scalar_of_binary(void)
{
    const char *xy = "X = rand(rows=1, cols=1, seed=1)\nY = rand(rows=1, cols=1, seed=2)\n";
    char script[512], *ex = NULL;
    snprintf(script, sizeof script,
             "%sout = as.scalar(X * 2) + as.scalar(3 - Y) + as.scalar(min(X, Y)) + as.scalar(X / Y) +"
             " as.scalar(X ^ Y) + as.scalar(log(X, 2)) + as.scalar(X %%/%% 0.1) + as.scalar(X %%%% 0.1)\n",
             xy);
    double on = run(script, 2, &ex), off = run(script, 0, NULL);
    T_CHECK(!isnan(on) && on == off, "as.scalar(X op Y): rewrites on %.17g vs off %.17g", on, off);
    T_CHECK(ex && lines_with(ex, "[1,1,") == 2, "as.scalar(X op Y): a 1x1 matrix besides X and Y:\n%s", ex ? ex : "");
    free(ex);
    const char *cmp[] = {"<", "<=", ">", ">=", "==", "!="};
    for (size_t i = 0; i < sizeof cmp / sizeof *cmp; i++) {
        snprintf(script, sizeof script, "%sout = as.scalar(X %s Y)\n", xy, cmp[i]);
        on = run(script, 2, NULL);
        T_CHECK(out_kind == V_BOOL, "as.scalar(X %s Y) is not a boolean with rewrites on", cmp[i]);
        off = run(script, 0, NULL);
        T_CHECK(out_kind == V_DOUBLE && on == off, "as.scalar(X %s Y) without rewrites: %g vs %g", cmp[i], off, on);
    }
    /* & and | stay matrix operators: SystemDS's scalar & of two doubles is
     * the double its 1x1 matrix holds */
    run("X = rand(rows=1, cols=1, seed=1)\nout = as.scalar(X & X)\n", 2, NULL);
    T_CHECK(out_kind == V_DOUBLE, "as.scalar(X & X) is not a double");
}

/* (A < B) == 0 -> A >= B and the others of SystemDS's
 * simplifyBinaryComparisonChain, !(A > B) -> A <= B of its
 * simplifyNotOverComparisons: without NaN the same values and one
 * comparison in the plan; a NaN cell gives SystemDS's 0 (X >= 1) where
 * the plan without rewrites gives 1 */
static void comparison_chains(void)
{
    static const struct { const char *expr, *must, *mustnot; } cc[] = {
        {"(X < 0.5) == 0", ">=", "==|<"},  {"(X <= 0.5) == 0", ">", "==|<="}, {"(X > 0.5) == 0", "<=", "=="},
        {"(X >= 0.5) == 0", "<", "==|>="}, {"(X == 0.5) == 0", "!=", "=="},  {"(X != 0.5) == 0", "==", "!="},
        {"(X < 0.5) == 1", "<", "=="},     {"(X < 0.5) != 0", "<", "!="},    {"!(X > 0.5)", "<=", "!|>"},
        {"!(X < 0.5)", ">=", "!|<"},       {"!(X == 0.5)", "!=", "!|=="}};
    char script[256], *ex = NULL;
    for (size_t i = 0; i < sizeof cc / sizeof *cc; i++) {
        snprintf(script, sizeof script, "X = rand(rows=20, cols=3, seed=4)\nout = %s\n", cc[i].expr);
        double on = run(script, 2, &ex), off = run(script, 0, NULL);
        T_CHECK(!isnan(on) && on == off, "%s: rewrites on %.17g vs off %.17g", cc[i].expr, on, off);
        /* the plan's operator lines: "(id) op  (" */
        char m[32], n[32];
        snprintf(m, sizeof m, ") %s  (", cc[i].must);
        T_CHECK(ex && strstr(ex, m), "%s: plan lacks %s:\n%s", cc[i].expr, cc[i].must, ex ? ex : "");
        const char *p = cc[i].mustnot;
        while (ex && *p) {
            const char *e = strchr(p, '|');
            size_t k = e ? (size_t)(e - p) : strlen(p);
            snprintf(n, sizeof n, ") %.*s  (", (int)k, p);
            T_CHECK(!strstr(ex, n), "%s: plan has %s:\n%s", cc[i].expr, n, ex);
            p += k + (e ? 1 : 0);
        }
        free(ex);
        ex = NULL;
    }
    const char *nan = "X = matrix(\"NaN 2 0\", rows=3, cols=1)\n";
    snprintf(script, sizeof script, "%sout = sum((X < 1) == 0) * 10 + sum(!(X > 1))\n", nan);
    double on = run(script, 2, NULL), off = run(script, 0, NULL);
    T_CHECK(on == 11 && off == 22, "NaN under the comparison chains: %g with rewrites (11), %g without (22)", on, off);
}

/* (X != 0) * log(X) -> ifelse(X != 0, log(X), 0) (SystemDS's log_nz
 * fusions): without zeros the same values; at a zero 0 where the plain
 * product is NaN */
/* A fusion rewrite of form over data: the same value with rewrites on
 * and off, and a plan holding must but not mustnot. */
static void fused_same(const char *form, const char *data, const char *must, const char *mustnot)
{
    char script[256], *ex = NULL;
    snprintf(script, sizeof script, "%sout = %s\n", data, form);
    double on = run(script, 2, &ex), off = run(script, 0, NULL);
    T_CHECK(!isnan(on) && on == off, "%s: rewrites on %.17g vs off %.17g", form, on, off);
    T_CHECK(ex && strstr(ex, must) && !strstr(ex, mustnot), "%s: not fused:\n%s", form, ex ? ex : "");
    free(ex);
}

/* out = form over data with rewrites (*on) and without (*off). */
static void on_off(const char *data, const char *form, double *on, double *off)
{
    char script[256];
    snprintf(script, sizeof script, "%sout = %s\n", data, form);
    *on = run(script, 2, NULL);
    *off = run(script, 0, NULL);
}

static void log_nz_fusion(void)
{
    const char *forms[] = {"(X != 0) * log(X)", "(X != 0) * log(X, 2)"};
    for (int i = 0; i < 2; i++) {
        fused_same(forms[i], "X = rand(rows=20, cols=3, min=1, max=2, seed=4)\n", "ifelse", ") *  (");
        double on, off;
        on_off("X = matrix(\"0 1 2 0 4 8\", rows=2, cols=3)\n", forms[i], &on, &off);
        T_CHECK(!isnan(on) && isnan(off), "%s over zeros: %g with rewrites, %g without (NaN)", forms[i], on, off);
    }
    /* the log on the left is left alone, as in SystemDS */
    double on = run("X = matrix(\"0 1 2 0 4 8\", rows=2, cols=3)\nout = log(X) * (X != 0)\n", 2, NULL);
    T_CHECK(isnan(on), "log(X) * (X != 0) changed: %g", on);
}

/* X * (X > 0) -> max(X, 0) (SystemDS's max0 fusions): the same values
 * but at -Inf, where the product is NaN and the max 0; NaN stays NaN */
static void max0_fusion(void)
{
    const char *forms[] = {"X * (X > 0)", "(X > 0) * X"};
    for (int i = 0; i < 2; i++) {
        fused_same(forms[i], "X = rand(rows=20, cols=3, min=-1, max=1, seed=4)\n", ") max  (", ") >  (");
        double on, off;
        on_off("X = matrix(\"-Inf 1 -2 3\", rows=2, cols=2)\n", forms[i], &on, &off);
        /* max: 0 1 / 0 3, weighted by run(): 1 * 1.002 + 3 * 1.003 */
        T_CHECK(fabs(on - 4.011) < 1e-12 && isnan(off), "%s over -Inf: %g with rewrites (4.011), %g without (NaN)",
                forms[i], on, off);
        on_off("X = matrix(\"NaN 1 -2 3\", rows=2, cols=2)\n", forms[i], &on, &off);
        T_CHECK(isnan(on), "%s over NaN: %g with rewrites (NaN)", forms[i], on);
    }
    /* another comparison or threshold is left alone */
    char *ex = NULL;
    run("X = rand(rows=20, cols=3, min=-1, max=1, seed=4)\nout = X * (X > 0.5)\n", 2, &ex);
    T_CHECK(ex && !strstr(ex, ") max  ("), "X * (X > 0.5) changed:\n%s", ex ? ex : "");
    free(ex);
}

int main(void)
{
    as_scalar_of_binary();
    max0_fusion();
    log_nz_fusion();
    comparison_chains();
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const Case *c = &cases[i];
        char *ex = NULL;
        double on = run(c->script, 2, &ex);
        double off = run(c->script, 0, NULL);
        T_CHECK(!isnan(on) && fabs(on - off) <= 1e-10 * fmax(1, fabs(off)), "%s: rewrites on %.17g vs off %.17g",
                c->name, on, off);
        if (c->must) T_CHECK(ex && has(ex, c->must), "%s: plan lacks %s:\n%s", c->name, c->must, ex ? ex : "");
        if (c->mustnot) T_CHECK(ex && !hasany(ex, c->mustnot), "%s: plan has %s:\n%s", c->name, c->mustnot, ex ? ex : "");
        free(ex);
    }
    for (size_t i = 0; i < sizeof neg_cases / sizeof *neg_cases; i++) {
        const NegCase *c = &neg_cases[i];
        char *ex = NULL;
        double on = run(c->script, 2, &ex);
        double off = run(c->script, 0, NULL);
        /* the rewritten plan may take another product kernel (a tmm where the
         * plan without rewrites transposes and multiplies): sums in another
         * order, equal to the rounding */
        T_CHECK(!isnan(on) && fabs(on - off) <= 1e-12 * fmax(1, fabs(off)), "%s: rewrites on %.17g vs off %.17g",
                c->name, on, off);
        if (c->neg) T_CHECK(ex && negations_are(ex, c->neg), "%s: a negation is not of %s:\n%s", c->name, c->neg,
                            ex ? ex : "");
        free(ex);
    }
    return t_done("test_rewrite");
}
