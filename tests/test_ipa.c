/* test_ipa.c: sizes known at compile time (seed 002, section 3.1).
 * - read() takes rows, cols and non-zeros from the file's .mtd; nrow,
 *   ncol and length of known sizes fold into literals, and branches on
 *   them are removed (the blocks around merge);
 * - a read whose file changed after compilation is an error, and a file
 *   the script itself writes is never sized from its (stale) .mtd;
 * - inter-procedural analysis: calls with known argument sizes or literal
 *   scalars run a specialization of the callee compiled for them, whose
 *   output sizes flow back to the caller; nothing is recompiled then.
 * Every script gives the results of optimization level 0 (no rewrites,
 * no IPA) with codegen off and on. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/io.h"
#include "plan/program.h"
#include "tests/t.h"
#include "tests/t_dml.h"

static char dir[256];

/* Relative difference of two values (matrices: largest over cells). */
static double rel(const Value *a, const Value *b)
{
    if (a->kind == V_MATRIX && b->kind == V_MATRIX) {
        if (a->m->rows != b->m->rows || a->m->cols != b->m->cols) return INFINITY;
        double worst = 0;
        for (int64_t i = 0; i < a->m->rows; i++)
            for (int64_t j = 0; j < a->m->cols; j++) {
                double x = mb_get(a->m, i, j), y = mb_get(b->m, i, j);
                double d = fabs(x - y) / fmax(1, fmax(fabs(x), fabs(y)));
                if (d > worst || d != d) worst = d != d ? INFINITY : d;
            }
        return worst;
    }
    if (val_is_numeric(a) && val_is_numeric(b)) {
        double x = val_as_double(a), y = val_as_double(b);
        return x == y ? 0 : fabs(x - y) / fmax(1, fmax(fabs(x), fabs(y)));
    }
    return a->kind == b->kind ? 0 : INFINITY;
}

typedef struct Case {
    const char *name;
    const char *src;
    const char *outs[3];
    int nout;
    bool no_recompile;   /* X is made in the script (its size known at
                            compile time, unlike the bound X's), and at
                            level 2 nothing is recompiled */
} Case;

static const Case cases[] = {
    {"branch on a scalar parameter, in a loop",
     "f = function(Matrix[Double] A, Integer k) return (Matrix[Double] B) {\n"
     "  if (k > 2) { B = A * 2 } else { B = A + 1 }\n"
     "  B = B %*% t(A)\n"
     "}\n"
     "s = 0\n"
     "for (i in 1:50) { B = f(X, 3); s = s + sum(B) }\n"
     "C = f(X, 1)\n"
     "r = nrow(B) + ncol(C)\n",
     {"s", "C", "r"}, 3, true},
    {"more signatures than specializations",
     "f = function(Matrix[Double] A) return (Matrix[Double] B, Double n) {\n"
     "  B = t(A) %*% A\n"
     "  n = ncol(B)\n"
     "}\n"
     "s = 0\n"
     "for (i in 1:12) {\n"
     "  [B, n] = f(matrix(1, rows=i, cols=i))\n"
     "  s = s + sum(B) + n\n"
     "}\n"
     "[B1, n1] = f(X[1:3,]); [B2, n2] = f(X[1:4,]); [B3, n3] = f(X[1:5,]); [B4, n4] = f(X[1:6,])\n"
     "[B5, n5] = f(X[1:7,]); [B6, n6] = f(X[1:8,]); [B7, n7] = f(X[1:9,]); [B8, n8] = f(X[1:10,])\n"
     "[B9, n9] = f(X[1:11,]); [B0, n0] = f(X[1:12,])\n"
     "t = sum(B1) + sum(B9) + sum(B0) + n1 + n9 + n0\n",
     {"s", "t"}, 2, false},
    {"recursion",
     "f = function(Matrix[Double] A, Integer n) return (Matrix[Double] B) {\n"
     "  if (n <= 0) { B = A } else { B = f(A * 0.5, n - 1) + A }\n"
     "}\n"
     "R = f(X, 4)\n"
     "S = f(X[1:3, 1:2], 2)\n",
     {"R", "S"}, 2, false},
    {"output size from a branch on a parameter",
     "f = function(Matrix[Double] A, Boolean wide) return (Matrix[Double] B) {\n"
     "  if (wide) { B = cbind(A, A) } else { B = rbind(A, A) }\n"
     "}\n"
     "P = f(X, TRUE)\n"
     "Q = f(X, FALSE)\n"
     "r = ncol(P) * 100 + nrow(Q)\n",
     {"P", "Q", "r"}, 3, true},
    {"data-dependent output size",
     "f = function(Matrix[Double] A) return (Matrix[Double] B) {\n"
     "  B = removeEmpty(target=A * (A > 0.5), margin=\"rows\")\n"
     "}\n"
     "B = f(X)\n"
     "n = nrow(B)\n"
     "s = sum(B %*% matrix(1, ncol(B), 1))\n",
     {"B", "n", "s"}, 3, false},
    {"scalar conversion to the parameter's type",
     "f = function(Matrix[Double] A, Integer k, Double w) return (Matrix[Double] B) {\n"
     "  B = A[1:k, ] * w\n"
     "  if (k == 2) { B = B + 100 }\n"
     "}\n"
     "B = f(X, 2.0, 3)\n"
     "C = f(X, 3, 0.5)\n",
     {"B", "C"}, 2, true},
    {"nested calls",
     "g = function(Matrix[Double] A) return (Matrix[Double] G) { G = t(A) %*% A }\n"
     "f = function(Matrix[Double] A, Double lambda) return (Matrix[Double] B) {\n"
     "  G = g(A)\n"
     "  B = G + diag(matrix(lambda, ncol(A), 1))\n"
     "}\n"
     "s = 0\n"
     "for (i in 1:20) { B = f(X, 0.1); s = s + sum(B) }\n",
     {"s", "B"}, 2, true},
    {"size expressions and branch removal",
     "v = matrix(0, ncol(X), 1)\n"
     "if (ncol(X) > 3) { v = v + 1 } else { v = v - 1 }\n"
     "y = X %*% v\n"
     "n = length(X) + nrow(y)\n",
     {"y", "n"}, 2, true},
    {"calls from a parfor body",
     "f = function(Matrix[Double] A, Integer j) return (Double s) { s = sum(A[, j] * j) }\n"
     "R = matrix(0, 1, ncol(X))\n"
     "parfor (j in 1:ncol(X)) { R[1, j] = f(X, j) }\n",
     {"R"}, 1, false},
};

static void test_cases(void)
{
    t_seed(7);
    MB *X = t_gen(40, 6, 1, -1, 1, false);
    const char *names[] = {"X"};
    MB *ins[] = {X};
    const CgOptions opts[] = {{.enabled = false}, {.enabled = true, .plancache = true, .policy = CG_COST_BASED}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const Case *k = &cases[c];
        char src[4096];
        snprintf(src, sizeof src, "%s%s", k->no_recompile ? "X = rand(rows=40, cols=6, min=-1, max=1, seed=7)\n" : "",
                 k->src);
        for (int o = 0; o < 2; o++) {
            TRun r0, r2;
            t_run_dml_opt(src, &opts[o], 0, 1, names, ins, k->nout, (const char **)k->outs, &r0);
            t_run_dml_opt(src, &opts[o], 2, 1, names, ins, k->nout, (const char **)k->outs, &r2);
            T_CHECK(!r0.rc && !r2.rc, "%s: %s / %s", k->name, r0.err, r2.err);
            for (int i = 0; i < k->nout && !r0.rc && !r2.rc; i++)
                T_CHECK(rel(&r0.out[i], &r2.out[i]) < 1e-12, "%s (codegen %s): %s differs", k->name,
                        o ? "on" : "off", k->outs[i]);
            if (k->no_recompile)
                T_CHECK(r2.nrecompile == 0, "%s: %lld recompilations", k->name, (long long)r2.nrecompile);
            t_run_free(&r0);
            t_run_free(&r2);
        }
    }
    mb_release(X);
}

/* A program compiled from src at level 2 (NULL and a message on errors). */
static RtProgram *compile(const char *src, Diag *d, Program **ast)
{
    LangOptions lo = {0};
    *ast = lang_load_string(src, "<test>", &lo, d);
    RtProgram *p = *ast && !diag_nerrors(d) ? plan_build_program(*ast, d, 2, NULL) : NULL;
    if (!p) fprintf(stderr, "compile: %s\n", diag_nerrors(d) ? diag_first_message(d) : "?");
    return p;
}

/* -explain hops of a program. */
static char *explain(const RtProgram *p)
{
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    plan_print_hops(p, f);
    fclose(f);
    return text;
}

static int run(RtProgram *p, Diag *d, char *err, size_t cap)
{
    RtOptions ro = {.out = stdout, .seed = -1};
    Rt rt;
    rt_init(&rt, p, d, &ro);
    Frame f;
    st_init(&f.vars);
    f.depth = 0;
    int rc = rt_run_main(&rt, &f);
    snprintf(err, cap, "%s", rc ? rt.err.msg : "");
    st_free(&f.vars);
    rt_destroy(&rt);
    return rc;
}

/* -explain hops of script src (caller frees; "(no text)" when it does
 * not compile), which then runs (exec) and must succeed. */
static char *explained(const char *src, const char *what, bool exec)
{
    Diag *d = diag_new();
    Program *ast;
    RtProgram *p = compile(src, d, &ast);
    T_CHECK(p != NULL, "%s: compiles", what);
    char *text = p ? explain(p) : NULL;
    if (p && exec) {
        char err[1200];
        T_CHECK(run(p, d, err, sizeof err) == 0, "%s: runs: %s", what, err);
    }
    plan_program_free(p);
    lang_program_free(ast);
    diag_free(d);
    return text ? text : strdup("(no text)");
}

static void write_matrix(const char *path, int64_t rows, int64_t cols)
{
    BrErr e = {0};
    MB *m = t_gen(rows, cols, 0.5, 1, 2, false);
    IoWriteOpts o;
    io_write_opts_init(&o);
    o.format = "csv";
    T_CHECK(io_write_matrix(path, m, &o, &e) == 0, "write %s: %s", path, e.msg);
    mb_release(m);
}

/* read() of a file with a .mtd: sizes at compile time, branch removed,
 * the function specialized, no recompilation; then the file changes
 * before the run: an error naming it, not a wrong result. */
static void test_read_sizes(void)
{
    char path[300], src[1200], err[1200];
    snprintf(path, sizeof path, "%s/X.csv", dir);
    write_matrix(path, 30, 4);
    snprintf(src, sizeof src,
             "f = function(Matrix[Double] A) return (Matrix[Double] B) { B = t(A) %%*%% A }\n"
             "X = read(\"%s\")\n"
             "v = matrix(1, ncol(X), 1)\n"
             "if (ncol(X) == 4) { v = v * 2 }\n"
             "B = f(X)\n"
             "print(sum(B %%*%% v))\n", path);
    Diag *d = diag_new();
    Program *ast;
    RtProgram *p = compile(src, d, &ast);
    T_CHECK(p != NULL, "read sizes: compiles");
    if (p) {
        char *text = explain(p);
        if (!text) text = strdup("(no text)");
        T_CHECK(strstr(text, "read") && strstr(text, "[30,4,"), "read sizes: read not sized:\n%s", text);
        T_CHECK(!strstr(text, "IF (line"), "read sizes: branch not removed:\n%s", text);
        T_CHECK(strstr(text, "--FUNCTION f [A: 30 x 4]") && strstr(text, "[4,4,"),
                "read sizes: f not specialized:\n%s", text);
        free(text);
        T_CHECK(run(p, d, err, sizeof err) == 0, "read sizes: runs: %s", err);
        write_matrix(path, 31, 4);   /* changed after compilation */
        T_CHECK(run(p, d, err, sizeof err) != 0 && strstr(err, "X.csv") && strstr(err, "31 x 4") &&
                    strstr(err, "30 x 4"),
                "read sizes: a changed file is an error: '%s'", err);
        plan_program_free(p);
    }
    lang_program_free(ast);
    diag_free(d);
}

/* A script that writes a file and reads it back never trusts the .mtd
 * found at compile time (a previous run's). */
static void test_written_file(void)
{
    char path[300], src[1200], err[1200];
    snprintf(path, sizeof path, "%s/Y.csv", dir);
    write_matrix(path, 50, 7);   /* stale */
    snprintf(src, sizeof src,
             "Z = matrix(3, rows=5, cols=2)\n"
             "write(Z, \"%s\", format=\"csv\")\n"
             "Y = read(\"%s\")\n"
             "if (nrow(Y) != 5 | ncol(Y) != 2) { stop(\"wrong size\") }\n"
             "print(sum(Y))\n", path, path);
    Diag *d = diag_new();
    Program *ast;
    RtProgram *p = compile(src, d, &ast);
    if (p) {
        char *text = explain(p);
        if (!text) text = strdup("(no text)");
        T_CHECK(!strstr(text, "[50,7,"), "written file: stale .mtd used:\n%s", text);
        free(text);
        T_CHECK(run(p, d, err, sizeof err) == 0, "written file: %s", err);
        plan_program_free(p);
    }
    T_CHECK(p != NULL, "written file: compiles");
    lang_program_free(ast);
    diag_free(d);
}

/* A transient read of a rows x cols matrix with nnz non-zeros. */
static Hop *tread(HopDag *d, int64_t rows, int64_t cols, int64_t nnz)
{
    Hop *h = hop_new(d, H_TREAD, (Span){0}, 0);
    h->name = "M";
    h->dt = DT_MATRIX;
    h->vt = VT_DOUBLE;
    h->rows = rows;
    h->cols = cols;
    h->nnz = nnz;
    hop_infer(h);
    return h;
}

/* Sparsity propagation: products by the average-case estimator (exact
 * for empty operands), diag(v) as sparse as v, X * Y at most as dense as
 * either (the outer-product pattern W * (U %*% t(V)) inherits nnz(W)). */
static void test_sparsity(void)
{
    HopDag *d = hop_dag_new();
    Span sp = {0};
    Hop *A = tread(d, 1000, 200, 2000), *B = tread(d, 200, 300, 600);
    Hop *AB = hop_matmul(d, OP_MATMUL, A, B, sp);
    double sa = 2000.0 / (1000 * 200), sb = 600.0 / (200 * 300);
    double want = 1000.0 * 300 * (1 - pow(1 - sa * sb, 200));
    T_CHECK(AB->nnz >= (int64_t)floor(want) && AB->nnz <= (int64_t)ceil(want) + 1,
            "sparsity: product nnz %lld, want %.1f", (long long)AB->nnz, want);
    Hop *E = tread(d, 200, 300, 0);
    T_CHECK(hop_matmul(d, OP_MATMUL, A, E, sp)->nnz == 0, "sparsity: product with an empty operand");
    Hop *dense = hop_matmul(d, OP_MATMUL, tread(d, 10, 10, 100), tread(d, 10, 10, 100), sp);
    T_CHECK(dense->nnz == 100, "sparsity: dense product nnz %lld", (long long)dense->nnz);
    T_CHECK(hop_matmul(d, OP_MATMUL, A, tread(d, 200, 300, -1), sp)->nnz < 0, "sparsity: unknown operand");
    Hop *v = tread(d, 5000, 1, 70);
    Hop *D = hop_reorg(d, OP_DIAG, v, sp);
    T_CHECK(D->rows == 5000 && D->cols == 5000 && D->nnz == 70, "sparsity: diag(v) nnz %lld", (long long)D->nnz);
    T_CHECK(hop_reorg(d, OP_DIAG, tread(d, 5000, 1, -1), sp)->nnz == 5000, "sparsity: diag(v), v unknown nnz");
    Hop *W = tread(d, 2000, 2000, 4000), *U = tread(d, 2000, 10, -1), *V = tread(d, 2000, 10, -1);
    Hop *UV = hop_matmul(d, OP_MATMUL, U, hop_reorg(d, OP_TRANS, V, sp), sp);
    Hop *WUV = hop_binary(d, OP_MULT, W, UV, sp);
    T_CHECK(WUV->nnz == 4000, "sparsity: W * (U %%*%% t(V)) nnz %lld", (long long)WUV->nnz);
    T_CHECK(hop_binary(d, OP_MULT, UV, W, sp)->nnz == 4000, "sparsity: (U %%*%% t(V)) * W");
    hop_dag_free(d);
}

/* table() with literal output dimensions is sized at compile time, with
 * at most one non-zero per input cell; without them it stays unknown. */
static void test_table(void)
{
    const char *src = "v = round(rand(rows=1000, cols=1, min=1, max=7, seed=1))\n"
                      "T = table(seq(1, 1000), v, 1000, 7)\n"
                      "W = table(v, 2, 3, 2000, 9)\n"
                      "U = table(v, 1)\n"
                      "print(sum(T) + sum(W) + sum(U))\n";
    char *text = explained(src, "table sizes", true);
    T_CHECK(strstr(text, "table  (") && strstr(text, "[1000,7,1000]"), "table: T not sized:\n%s", text);
    T_CHECK(strstr(text, "[2000,9,1000]"), "table: weighted W not sized:\n%s", text);
    T_CHECK(strstr(text, "[-1,-1,-1]"), "table: U sized without dimensions:\n%s", text);
    free(text);
}

/* Operation memory counts a kernel's own buffers: solve's dense working
 * copies of both sides come on top of inputs and output. */
static void test_opmem(void)
{
    const char *src = "A = rand(rows=300, cols=300, seed=1)\n"
                      "b = rand(rows=300, cols=1, seed=2)\n"
                      "x = solve(A, b)\n"
                      "print(sum(x))\n";
    char *text = explained(src, "opmem", false);
    /* output 2.4KB; inputs 720KB + 2.4KB, copies 720KB + 2.4KB: 1.4MB */
    T_CHECK(strstr(text, "solve") && strstr(text, "2.4KB/1.4MB"), "opmem: solve:\n%s", text);
    free(text);
}

/* Worst-case estimates (seed 002, section 3.2): where a size is unknown
 * the memory estimate takes the operator's largest output (a slice of X
 * has at most X's rows), products are sized by worst-case sparsity, the
 * source of a left indexing is bounded by the range, and a matrix of
 * unknown origin stays unbounded. */
static void test_worstcase_hops(void)
{
    HopDag *d = hop_dag_new();
    Span sp = {0};
    Hop *X = tread(d, 1000, 10, -1);
    Hop *n = hop_new(d, H_TREAD, sp, 0);
    n->name = "n"; n->dt = DT_SCALAR; n->vt = VT_INT;
    hop_infer(n);
    Hop *one = hop_lit(d, val_int(1), sp);
    Hop *S = hop_new(d, H_RIX, sp, 5);   /* X[1:n, ] */
    S->in[0] = X; S->in[1] = one; S->in[2] = n;
    S->ix.has_col = true; S->ix.rmode = IX_RANGE; S->ix.cmode = IX_ALL;
    hop_infer(S);
    T_CHECK(S->rows < 0 && S->cols == 10 && S->wrows == 1000 && S->wcols == 10, "worst case: X[1:n,] %lldx%lld <= %lldx%lld",
            (long long)S->rows, (long long)S->cols, (long long)S->wrows, (long long)S->wcols);
    T_CHECK(S->mem == mb_est_dense(1000, 10), "worst case: X[1:n,] memory %.0f", S->mem);
    Hop *T = hop_reorg(d, OP_TRANS, S, sp);
    T_CHECK(T->wrows == 10 && T->wcols == 1000, "worst case: t(X[1:n,]) %lldx%lld", (long long)T->wrows, (long long)T->wcols);
    Hop *G = hop_matmul(d, OP_MATMUL, T, S, sp);
    T_CHECK(G->wrows == 10 && G->wcols == 10 && G->mem == mb_est_dense(10, 10), "worst case: gram %lldx%lld",
            (long long)G->wrows, (long long)G->wcols);
    Hop *R = hop_agg(d, OP_PLUS, DIR_ROW, S, sp);
    T_CHECK(R->wrows == 1000 && R->wcols == 1, "worst case: rowSums");
    /* the operation memory of the slice: X and the largest slice */
    T_CHECK(S->opmem == S->mem + X->mem + 16, "worst case: slice operation memory %.0f", S->opmem);   /* + 1, n */
    /* unbounded: a matrix variable of unknown size, and what it feeds */
    Hop *U = tread(d, -1, -1, -1);
    T_CHECK(U->mem < 0 && U->wrows < 0, "worst case: unknown variable is unbounded");
    Hop *UR = hop_agg(d, OP_PLUS, DIR_ROW, U, sp);
    T_CHECK(UR->mem < 0 && UR->opmem < 0, "worst case: rowSums of unbounded");
    /* products: worst-case sparsity min(1, sa k) * min(1, sb k) for the
     * memory, the average case for the non-zeros */
    Hop *A = tread(d, 1000, 200, 250), *B = tread(d, 200, 300, 150);
    Hop *AB = hop_matmul(d, OP_MATMUL, A, B, sp);
    int64_t wnnz = 1000 * 300 / 8;   /* sa k = 1/4, sb k = 1/2 */
    T_CHECK(AB->mem == mb_est_size(1000, 300, wnnz) && AB->nnz < wnnz,
            "worst case: product memory %.0f (want %.0f), nnz %lld", AB->mem, mb_est_size(1000, 300, wnnz), (long long)AB->nnz);
    /* cbind adds the bounds of the columns */
    Hop *C = hop_new(d, H_BUILTIN, sp, 2);
    C->bi = BI_CBIND; C->nvar = 2; C->in[0] = S; C->in[1] = X;
    C->dt = DT_MATRIX; C->vt = VT_DOUBLE;   /* (the builder's, from ops.def) */
    hop_infer(C);
    T_CHECK(C->wrows == 1000 && C->wcols == 20, "worst case: cbind %lldx%lld", (long long)C->wrows, (long long)C->wcols);
    /* backtracked: R[1, ] = V bounds V by the range */
    Hop *R1 = tread(d, 1, 10, -1), *V = tread(d, -1, -1, -1);
    Hop *L = hop_new(d, H_LIX, sp, 6);
    L->in[0] = R1; L->in[1] = V; L->in[2] = one;
    L->ix.has_col = true; L->ix.rmode = IX_SINGLE; L->ix.cmode = IX_ALL;
    hop_infer(L);
    T_CHECK(V->wrows == 1 && V->wcols == 10 && V->mem == mb_est_dense(1, 10), "worst case: lix source %lldx%lld",
            (long long)V->wrows, (long long)V->wcols);
    hop_dag_free(d);
}

/* The bounds travel with variables to later blocks, and a variable that
 * grows in a loop loses its bound. */
static void test_worstcase_script(void)
{
    const char *src = "X = rand(rows=1000, cols=10, seed=1)\n"
                      "n = as.integer(sum(X > 0.99))\n"
                      "if (n > 3) { print(\"n\") }\n"
                      "Y = X[1:n, ]\n"
                      "Z = removeEmpty(target=X * (X > 0.9), margin=\"rows\")\n"
                      "while (FALSE) {}\n"
                      "print(sum(t(Y) %*% Y) + sum(Z))\n"
                      "G = Y\n"
                      "while (nrow(G) < 100) { G = rbind(G, G) }\n"
                      "print(sum(G))\n";
    char *text = explained(src, "worst case script", true);
    T_CHECK(strstr(text, "TRead  Y () [-1,10,-1] <=[1000,10] 78.2KB"), "worst case: Y in a later block:\n%s", text);
    T_CHECK(strstr(text, "TRead  Z () [-1,-1,-1] <=[1000,10]"), "worst case: Z in a later block:\n%s", text);
    const char *after = strstr(text, "GENERIC (line 10)");
    T_CHECK(after && strstr(after, "TRead  G () [-1,-1,-1] -/-"), "worst case: G grown in a loop keeps a bound:\n%s", text);
    free(text);
}

/* Seed 002, Example 2: the chain is ordered before diag(v) %*% y is
 * rewritten, so the 1e5 x 1e5 diagonal is never formed. */
static void test_example2(void)
{
    const char *src =
        "X = rand(rows=100000, cols=50, seed=1)\n"
        "v = rand(rows=100000, cols=1, seed=2)\n"
        "d = rand(rows=50, cols=1, seed=3)\n"
        "r = t(X) %*% diag(v) %*% X %*% d\n"
        "h = t(X) %*% (v * (X %*% d))\n"
        "e = max(abs(r - h)) / max(abs(h))\n";
    const char *outs[] = {"e"};
    CgOptions off = {.enabled = false};
    TRun r;
    t_run_dml(src, &off, 0, NULL, NULL, 1, outs, &r);
    T_CHECK(!r.rc, "example 2: %s", r.err);
    if (!r.rc) T_CHECK(val_as_double(&r.out[0]) < 1e-12, "example 2: differs by %g", val_as_double(&r.out[0]));
    t_run_free(&r);
}

/* Loop bodies are built speculatively with the sizes on entry (kept when
 * the body keeps them): the warnings of a kept build are the loop's.
 * They were dropped, so x = f() of a function without outputs warned
 * only outside loops. */
static void test_loop_warnings(void)
{
    const char *src = "f = function(Double a) { print(a) }\n"
                      "s = 0\n"
                      "for (i in 1:2) {\n"
                      "  x = f(i)\n"
                      "  s = s + i\n"
                      "}\n"
                      "while (s < 10) {\n"
                      "  for (j in 1:2) { y = f(j) }\n"
                      "  s = s + 5\n"
                      "}\n"
                      "z = f(s)\n";
    Diag *d = diag_new();
    Program *ast = NULL;
    RtProgram *p = compile(src, d, &ast);
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    if (f) { diag_print(d, f); fclose(f); }
    T_CHECK(p && text && strstr(text, "<test>:4:3: warning: function 'f' does not return a value but is assigned to 'x'") &&
                strstr(text, "<test>:8:20: warning: function 'f' does not return a value but is assigned to 'y'") &&
                strstr(text, "<test>:11:1: warning: function 'f' does not return a value but is assigned to 'z'"),
            "loop warnings:\n%s", text ? text : "");
    /* each once */
    int cnt = 0;
    for (const char *q = text ? strstr(text, "does not return") : NULL; q; q = strstr(q + 1, "does not return")) cnt++;
    T_CHECK(cnt == 3, "loop warnings: %d, expected 3:\n%s", cnt, text ? text : "");
    free(text);
    if (p) plan_program_free(p);
    lang_program_free(ast);
    diag_free(d);
}

/* rand's non-zeros in the hops (as SystemDS's DataGenOp): the sparsity
 * times the cells, the default sparsity 1 included (unknown before),
 * none for a uniform draw with min = max = 0; propagated through t()
 * and a product. The empty Z's product then folds to 0 (rewrite/
 * dynamic.c), and the script runs. */
/* Non-zeros that unary maps and the products tsmm and tmm propagate:
 * a sparse-safe map keeps X's count, exact where no non-zero can map to
 * 0 (-, abs, sqrt, sign, sin), only an upper bound (hop.h nnz_ub) for
 * round, floor, ceil and is.nan (0.3 rounds to 0); a bound stays a bound
 * through an exact map. tsmm left (t(X) %*% X), right (X %*% t(X)) and
 * tmm (t(A) %*% B) get the average-case estimate of the plain product of
 * the same operands, their memory its worst case. */
static void test_unary_tsmm_nnz(void)
{
    HopDag *d = hop_dag_new();
    Span sp = {0};
    Hop *X = tread(d, 1000, 50, 2000);
    static const OpCode exact[] = {OP_NEG, OP_ABS, OP_SQRT, OP_SIGN, OP_SIN};
    static const OpCode bound[] = {OP_ROUND, OP_FLOOR, OP_CEIL, OP_ISNAN};
    for (size_t i = 0; i < sizeof exact / sizeof *exact; i++) {
        Hop *u = hop_unary(d, exact[i], X, sp);
        T_CHECK(u->nnz == 2000 && !u->nnz_ub, "unary %s: nnz %lld%s, want 2000 exact", op_info[exact[i]].name,
                (long long)u->nnz, u->nnz_ub ? " (bound)" : "");
    }
    for (size_t i = 0; i < sizeof bound / sizeof *bound; i++) {
        Hop *u = hop_unary(d, bound[i], X, sp);
        T_CHECK(u->nnz == 2000 && u->nnz_ub, "unary %s: nnz %lld%s, want 2000 as a bound", op_info[bound[i]].name,
                (long long)u->nnz, u->nnz_ub ? " (bound)" : " (exact)");
        Hop *v = hop_unary(d, OP_ABS, u, sp);
        T_CHECK(v->nnz == 2000 && v->nnz_ub, "abs(%s(X)): the bound kept", op_info[bound[i]].name);
    }
    /* t(X) %*% X: 50 x 50 from k = 1000 at sparsity 0.04 on each side */
    Hop *L = hop_new(d, H_MATMUL, sp, 1);
    L->op = OP_TSMM; L->flag = 1; L->in[0] = X;
    hop_infer(L);
    Hop *XT = hop_reorg(d, OP_TRANS, X, sp), *P = hop_matmul(d, OP_MATMUL, XT, X, sp);
    T_CHECK(L->rows == 50 && L->cols == 50 && L->nnz > 0 && L->nnz == P->nnz && L->mem == P->mem,
            "tsmm left: nnz %lld mem %.0f, the product's %lld %.0f", (long long)L->nnz, L->mem, (long long)P->nnz, P->mem);
    /* X %*% t(X): 1000 x 1000 from k = 50, mostly empty */
    Hop *R = hop_new(d, H_MATMUL, sp, 1);
    R->op = OP_TSMM; R->flag = 0; R->in[0] = X;
    hop_infer(R);
    Hop *Q = hop_matmul(d, OP_MATMUL, X, XT, sp);
    T_CHECK(R->rows == 1000 && R->nnz > 0 && R->nnz < 1000 * 1000 / 2 && R->nnz == Q->nnz && R->mem == Q->mem,
            "tsmm right: nnz %lld mem %.0f, the product's %lld %.0f", (long long)R->nnz, R->mem, (long long)Q->nnz, Q->mem);
    /* tmm(A, B) = t(A) %*% B */
    Hop *B = tread(d, 1000, 3, 3000);
    Hop *TM = hop_matmul(d, OP_MATMULTL, X, B, sp);
    Hop *TP = hop_matmul(d, OP_MATMUL, XT, B, sp);
    T_CHECK(TM->rows == 50 && TM->cols == 3 && TM->nnz > 0 && TM->nnz == TP->nnz, "tmm: nnz %lld, the product's %lld",
            (long long)TM->nnz, (long long)TP->nnz);
    /* an empty X: every product empty */
    Hop *E = tread(d, 1000, 50, 0);
    Hop *LE = hop_new(d, H_MATMUL, sp, 1);
    LE->op = OP_TSMM; LE->flag = 1; LE->in[0] = E;
    hop_infer(LE);
    T_CHECK(LE->nnz == 0, "tsmm of an empty X: nnz %lld", (long long)LE->nnz);
    hop_dag_free(d);
}

static void test_rand_nnz(void)
{
    char *text = explained("X = rand(rows=40, cols=25, seed=1)\n"
                           "Y = rand(rows=41, cols=25, min=-1, max=1, sparsity=1.0, seed=2)\n"
                           "N = rand(rows=42, cols=25, pdf=\"normal\", seed=3)\n"
                           "Z = rand(rows=43, cols=25, min=0, max=0)\n"
                           "S = rand(rows=44, cols=25, sparsity=0.2, seed=4)\n"
                           "print(sum(X %*% t(N)) + sum(Y) + sum(S) + sum(Z %*% t(Z)))\n",
                           "rand nnz", true);
    T_CHECK(strstr(text, "[40,25,1000]") && strstr(text, "[41,25,1025]") && strstr(text, "[42,25,1050]") &&
                strstr(text, "[44,25,220]"),
            "rand nnz: sparsity times the cells:\n%s", text);
    T_CHECK(strstr(text, "t  (") && strstr(text, "[25,42,1050]") && strstr(text, "[40,42,1680]"),
            "rand nnz: propagated through t() and the product:\n%s", text);
    T_CHECK(!strstr(text, "[43,25,") && !strstr(text, "[43,43,"), "rand nnz: the empty Z's product folded:\n%s", text);
    free(text);
}

int main(void)
{
    t_pin_machine();   /* the same plans whatever the load (docs/testing.md) */
    snprintf(dir, sizeof dir, "/tmp/braid-test-ipa-XXXXXX");
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 2; }
    test_cases();
    test_sparsity();
    test_example2();
    test_table();
    test_opmem();
    test_worstcase_hops();
    test_worstcase_script();
    test_read_sizes();
    test_written_file();
    test_loop_warnings();
    test_rand_nnz();
    test_unary_tsmm_nnz();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return t_done("test_ipa");
}
