/* test_amulet.c: where-loops (AMULET, docs/amulet.md). Every query of the
 * seed (Q1-Q3 with thres a constant, thres[i], thres[j], thres[i,j]; A and
 * B as they are or transposed; square and non-square sizes that are not
 * multiples of the kernel) and min=/max= accumulation, through the
 * generated kernel (each SIMD level this CPU has, 1 and 2 threads), the
 * vectorized evaluator and the scalar reference path, against a scalar
 * loop written here; and compile errors with their positions. */
#include "t.h"
#include "t_dml.h"
#include "base/strbuf.h"
#include "kernels/ew.h"
#include "kernels/leaf.h"
#include "kernels/reorg.h"
#include "codegen/amulet.h"
#include "codegen/cgrun.h"
#include "bench/amulet_trace.h"

#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum { Q1, Q2, Q3, QMM, QMIN, QMAX };

/* The scalar loop of query q at (i, j), th the threshold there. */
static double ref_cell(int q, const MB *A, const MB *B, const double *th, int64_t i, int64_t j, double dis)
{
    int64_t K = A->cols;
    double r = q == QMIN ? 1e300 : q == QMAX ? -1e300 : 0;
    for (int64_t k = 0; k < K; k++) {
        double a = A->d[i * K + k], b = B->d[k * B->cols + j], p = a * b;
        switch (q) {
        case Q1: r += p - (p > *th) * p * dis; break;
        case Q2: r += p + (p > *th) * (p - *th); break;
        case Q3: r += p > *th; break;
        case QMM: r += p; break;
        case QMIN: r = fmin(r, a + b); break;
        default: r = fmax(r, a - b); break;
        }
    }
    return r;
}

static const char *th_src[4] = {"0.3", "thi[i]", "thj[j]", "thij[i,j]"};

static void body(char *buf, size_t cap, int q, int tf, bool ta, bool tb)
{
    char a[16], b[16], p[40], th[16];
    snprintf(a, sizeof a, "%s", ta ? "At[k,i]" : "A[i,k]");
    snprintf(b, sizeof b, "%s", tb ? "Bt[j,k]" : "B[k,j]");
    snprintf(p, sizeof p, "%s*%s", a, b);
    snprintf(th, sizeof th, "%s", th_src[tf]);
    switch (q) {
    case Q1: snprintf(buf, cap, "R[i,j] += %s - (%s > %s) * %s*dis[j]", p, p, th, p); break;
    case Q2: snprintf(buf, cap, "R[i,j] += %s + (%s > %s) * (%s - %s)", p, p, th, p, th); break;
    case Q3: snprintf(buf, cap, "R[i,j] += (%s > %s)", p, th); break;
    case QMM: snprintf(buf, cap, "R[i,j] += %s", p); break;
    case QMIN: snprintf(buf, cap, "R[i,j] min= %s + %s", a, b); break;
    default: snprintf(buf, cap, "R[i,j] max= %s - %s", a, b); break;
    }
}

/* One query through the current BRAID_AMULET mode against ref_cell. */
/* check, R handed to the caller in *keep (dense) when keep is not NULL
 * (NULL on failure). */
/* check_keep: the scalar reference skipped (a caller that compares the
 * result bit for bit with one checked against it). */
static bool check_no_ref;

/* The scalar reference of query q over inputs seeded by their shape
 * (check_keep's), kept per (q, tf, M, N, K): the sweeps check the same
 * query and shape under several thread counts, SIMD levels and operand
 * layouts (At, Bt are copies of A, B): the search's 421 x 805 x 611
 * and 419 x 803 x 533 references were computed at each of 3 thread
 * counts, the SIMD levels' at each level and thread count. */
typedef struct RefMemo { int q, tf; int64_t M, N, K; double *r; } RefMemo;
static RefMemo ref_memo[64];
static int ref_memo_n;

static const double *ref_result(int q, int tf, const MB *A, const MB *B, const MB *thi, const MB *thj, const MB *thij)
{
    int64_t M = A->rows, N = B->cols, K = A->cols;
    for (int e = 0; e < ref_memo_n; e++)
        if (ref_memo[e].q == q && ref_memo[e].tf == tf && ref_memo[e].M == M && ref_memo[e].N == N && ref_memo[e].K == K)
            return ref_memo[e].r;
    double *r = malloc(sizeof *r * (size_t)(M * N));
    if (!r) return NULL;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double th = tf == 0 ? 0.3 : tf == 1 ? thi->d[i] : tf == 2 ? thj->d[j] : thij->d[i * N + j];
            r[i * N + j] = ref_cell(q, A, B, &th, i, j, 0.5);
        }
    if (ref_memo_n == (int)(sizeof ref_memo / sizeof *ref_memo)) free(ref_memo[--ref_memo_n].r);
    ref_memo[ref_memo_n++] = (RefMemo){q, tf, M, N, K, r};
    return r;
}

static void ref_memo_free(void)
{
    for (int e = 0; e < ref_memo_n; e++) free(ref_memo[e].r);
    ref_memo_n = 0;
}

static void check_keep(int q, int tf, bool ta, bool tb, int64_t M, int64_t N, int64_t K, const char *what, MB **keep)
{
    if (keep) *keep = NULL;
    t_seed((uint64_t)(M * 131 + N * 7 + K));
    MB *A = t_gen(M, K, 1, -1, 1, false), *B = t_gen(K, N, 1, -1, 1, false);
    MB *thi = t_gen(M, 1, 1, -0.5, 0.5, false), *thj = t_gen(1, N, 1, -0.5, 0.5, false);
    MB *thij = t_gen(M, N, 1, -0.5, 0.5, false);
    char w[300], src[1000];
    body(w, sizeof w, q, tf, ta, tb);
    double init = q == QMIN ? 1e300 : q == QMAX ? -1e300 : 0;
    snprintf(src, sizeof src,
             "At = t(A); Bt = t(B); dis = matrix(0.5, rows=ncol(B), cols=1)\n"
             "R = matrix(%.17g, rows=nrow(A), cols=ncol(B))\n"
             "where (i in 1:nrow(A), j in 1:ncol(B), k in 1:ncol(A)) { %s }\n", init, w);
    const char *names[] = {"A", "B", "thi", "thj", "thij"}, *onames[] = {"R"};
    MB *ins[] = {A, B, thi, thj, thij};
    TRun r;
    t_run_dml(src, &t_pols[2].o, 5, names, ins, 1, onames, &r);
    T_CHECK(r.rc == 0, "%s: %s: %s", what, w, r.err);
    if (r.rc == 0 && r.out[0].kind == V_MATRIX) {
        MB *R = mb_to_dense(r.out[0].m, &(BrErr){0});
        const double *ref = check_no_ref ? NULL : ref_result(q, tf, A, B, thi, thj, thij);
        double worst = check_no_ref || ref ? 0 : INFINITY;
        for (int64_t i = 0; i < M && ref; i++)
            for (int64_t j = 0; j < N; j++) {
                double x = ref[i * N + j], y = R->d[i * N + j];
                double d = fabs(x - y) / (1 + fabs(x));
                if (d > worst) worst = d;
            }
        T_CHECK(worst < 1e-9, "%s: %s (%lldx%lldx%lld): error %g", what, w, (long long)M, (long long)N, (long long)K,
                worst);
        if (keep) *keep = R;
        else mb_release(R);
    }
    t_run_free(&r);
    mb_release(A); mb_release(B); mb_release(thi); mb_release(thj); mb_release(thij);
}

static void check(int q, int tf, bool ta, bool tb, int64_t M, int64_t N, int64_t K, const char *what)
{
    check_keep(q, tf, ta, tb, M, N, K, what, NULL);
}

/* A script that must not compile, and the error message it must give. */
typedef struct ErrCase { const char *src, *msg; int line, col; } ErrCase;

static void check_errors(const ErrCase *cases, size_t n, const char *what)
{
    for (size_t c = 0; c < n; c++) {
        Diag *d = diag_new();
        LangOptions lo = {0};
        Program *p = lang_load_string(cases[c].src, "<t>", &lo, d);
        const char *m = diag_nerrors(d) ? diag_first_message(d) : "";
        T_CHECK(!p && strstr(m, cases[c].msg), "%s %zu: got '%s'", what, c, m);
        lang_program_free(p);
        diag_free(d);
    }
}

static void errors(void)
{
    static const ErrCase cases[] = {
        {"R = matrix(0, 3, 3)\nwhere (i in 1:3, j in 1:3, k in 1:3) { R[i,j] += R[i,k] }", "reads its result", 2, 50},
        {"R = matrix(0, 3, 3)\nA = R\nwhere (i in 1:3, j in 1:3, k in 1:3) { R[i,j] = A[i,k] }", "depend on the iteration order", 3, 40},
        {"R = matrix(0, 3, 3)\nwhere (i in 1:3, j in 1:3) { R[i,j] += Z[i,j] }", "undefined variable 'Z'", 2, 39},
        {"R = matrix(0, 3, 3)\nA = R\nwhere (i in 1:3, j in 1:3) { R[i,j] += A[i+1,j] }", "must be one of its loop variables", 3, 42},
        {"R = matrix(0, 3, 3)\nA = R\nwhere (i in 1:3, j in 1:3) { R[i,j] += sum(A[i,j]) }", "cannot be used in a where-loop", 3, 39},
        {"R = matrix(0, 3, 3)\nwhere (i in 1:3, j in 1:3) { R[i,j] += i }", "only as an index", 2, 39},
    };
    check_errors(cases, sizeof cases / sizeof *cases, "error case");
    /* a shape mismatch is a run-time error naming the variable */
    TRun r;
    MB *A = t_gen(4, 5, 1, 0, 1, false);
    const char *names[] = {"A"}, *on[] = {"R"};
    t_run_dml("R = matrix(0, 4, 4)\nwhere (i in 1:4, j in 1:4, k in 1:5) { R[i,j] += A[i,k] * A[k,j] }", &t_pols[2].o, 1,
              names, &A, 1, on, &r);
    T_CHECK(r.rc != 0 && strstr(r.err, "'A' has 4 rows"), "shape error: %s", r.err);
    t_run_free(&r);
    mb_release(A);
}

/* Loops that are not matrix-multiplication-like: the evaluator. */
static void general(void)
{
    MB *A = t_gen(9, 7, 1, -1, 1, false), *v = t_gen(7, 1, 1, -1, 1, false);
    const char *names[] = {"A", "v"}, *on[] = {"R", "S"};
    MB *ins[] = {A, v};
    TRun r;
    t_run_dml("R = matrix(0, 9, 7); S = matrix(0, 9, 1)\n"
              "where (i in 1:9, j in 1:7) { R[i,j] = ifelse(A[i,j] > 0, A[i,j] * v[j], -1) }\n"
              "where (i in 1:9, j in 1:7) { S[i] += abs(A[i,j]) }\n",
              &t_pols[2].o, 2, names, ins, 2, on, &r);
    T_CHECK(r.rc == 0, "general: %s", r.err);
    if (r.rc == 0) {
        double worst = 0;
        for (int i = 0; i < 9; i++) {
            double s = 0;
            for (int j = 0; j < 7; j++) {
                double a = A->d[i * 7 + j], x = a > 0 ? a * v->d[j] : -1;
                worst = fmax(worst, fabs(x - mb_get(r.out[0].m, i, j)));
                s += fabs(a);
            }
            worst = fmax(worst, fabs(s - mb_get(r.out[1].m, i, 0)));
        }
        T_CHECK(worst < 1e-12, "general: error %g", worst);
    }
    t_run_free(&r);
    mb_release(A); mb_release(v);
}

/* The value of environment variable name, strdup'ed (NULL: unset),
 * for env_restore. */
static char *env_keep(const char *name)
{
    const char *old = getenv(name);
    return old ? strdup(old) : NULL;
}

/* Sets variable name back to keep (a strdup'ed value, freed here), or
 * unsets it when keep is NULL. */
static void env_restore(const char *name, char *keep)
{
    if (keep) setenv(name, keep, 1);
    else unsetenv(name);
    free(keep);
}

/* Runs src twice, with environment variable env set to v0 and then to v1
 * (NULL: unset), into r0 and r1; both must succeed. */
static bool run_two(const char *src, const char *env, const char *v0, const char *v1, int nin, const char **names,
                    MB **ins, int nout, const char **on, TRun *r0, TRun *r1)
{
    setenv(env, v0, 1);
    t_run_dml(src, &t_pols[2].o, nin, names, ins, nout, on, r0);
    if (v1) setenv(env, v1, 1);
    else unsetenv(env);
    t_run_dml(src, &t_pols[2].o, nin, names, ins, nout, on, r1);
    T_CHECK(r0->rc == 0 && r1->rc == 0, "%s=%s / %s: %s %s", env, v0, v1 ? v1 : "unset", r0->err, r1->err);
    return r0->rc == 0 && r1->rc == 0;
}

/* Is statement s a where-loop, and how many results does it compute? */
static int where_results(const Stmt *s)
{
    if (s->kind == ST_ASSIGN && s->assign.value->kind == EX_WHERE) return 1;
    if (s->kind == ST_MASSIGN && s->massign.call->kind == EX_WHERE) return s->massign.n;
    return 0;
}

/* Nested for loops that compute a where-loop (seed 4.1) run as one:
 * same result as the loops kept (BRAID_AMULET_LIFT=0), and the loop
 * variables keep their final values. */
static void lifted(void)
{
    MB *A = t_gen(23, 19, 1, -1, 1, false), *B = t_gen(19, 17, 1, -1, 1, false);
    const char *names[] = {"A", "B"}, *on[] = {"R", "S", "T", "x"};
    MB *ins[] = {A, B};
    const char *src =
        "R = matrix(0, 23, 17); S = matrix(1e9, 23, 17); T = matrix(0, 23, 19)\n"
        "for (i in 1:nrow(A)) { for (j in 1:ncol(B)) { for (k in 1:ncol(A)) {\n"
        "  R[i,j] = R[i,j] + (A[i,k] * B[k,j] > 0.1) * A[i,k] } } }\n"
        "for (i in 1:23) for (j in 1:17) for (k in 1:19) S[i,j] = min(S[i,j], A[i,k] - B[k,j])\n"
        "for (i in 23:1) { for (k in 1:19) { T[i,k] = abs(A[i,k]) } }\n"
        "x = i + j * 100 + k * 10000\n";
    TRun r0, r1;
    if (run_two(src, "BRAID_AMULET_LIFT", "0", NULL, 2, names, ins, 4, on, &r0, &r1)) {
        for (int k = 0; k < 3; k++) T_MB_EQ(r0.out[k].m, r1.out[k].m, 1e-12, "lifted output %d", k);
        T_CHECK(val_as_double(&r0.out[3]) == val_as_double(&r1.out[3]), "loop variables after the loop: %g %g",
                val_as_double(&r0.out[3]), val_as_double(&r1.out[3]));
    }
    t_run_free(&r0);
    t_run_free(&r1);
    /* several updates in the innermost loop: one where-loop with several
     * results; a statement reading another's result keeps the loops */
    static const struct { const char *body; int res; } multi[] = {
        {"R[i,j] = R[i,j] + A[i,k] * B[k,j]\n S[i,j] = min(S[i,j], A[i,k] - B[k,j])\n"
         " T[i,j] = max(T[i,j], (A[i,k] * B[k,j] > 0.1) * A[i,k])", 3},
        {"R[i,j] += A[i,k] * B[k,j]\n S[i,j] = S[i,j] + abs(A[i,k])", 2},
        {"R[i,j] += A[i,k] * B[k,j]\n S[i,j] = S[i,j] + R[i,j]", 0},
        {"R[i,j] += A[i,k] * B[k,j]\n R[i,j] = R[i,j] + 1", 0},
    };
    const char *on3[] = {"R", "S", "T", "x"};
    for (size_t c = 0; c < sizeof multi / sizeof *multi; c++) {
        char src3[700];
        snprintf(src3, sizeof src3,
                 "R = matrix(0, 23, 17); S = matrix(1e9, 23, 17); T = matrix(-1e9, 23, 17)\n"
                 "for (i in 1:23) { for (j in 1:17) { for (k in 1:19) {\n %s\n} } }\nx = i + j * 100 + k * 10000\n",
                 multi[c].body);
        Diag *d = diag_new();
        LangOptions lo = {.predefined = names, .npredefined = 2};
        Program *p = lang_load_string(src3, "<t>", &lo, d);
        const Block *b = p ? lang_main(p) : NULL;
        int res = 0;
        for (int i = 0; b && i < b->n; i++) res += where_results(b->stmts[i]);
        T_CHECK(res == multi[c].res, "nested loops with several updates %zu: %d results lifted", c, res);
        lang_program_free(p);
        diag_free(d);
        if (run_two(src3, "BRAID_AMULET_LIFT", "0", NULL, 2, names, ins, 4, on3, &r0, &r1)) {
            for (int k = 0; k < 3; k++) T_MB_EQ(r0.out[k].m, r1.out[k].m, 1e-12, "several updates %zu: %s", c, on3[k]);
            T_CHECK(val_as_double(&r0.out[3]) == val_as_double(&r1.out[3]), "several updates %zu: loop variables", c);
        }
        t_run_free(&r0);
        t_run_free(&r1);
    }
    /* X[i] of a matrix is a row in a for loop: such loops stay loops */
    const char *on2[] = {"R"};
    t_run_dml("R = matrix(0, 23, 19)\nfor (i in 1:23) { R[i] = A[i] * 2 }\n", &t_pols[2].o, 2, names, ins, 1, on2,
              &r0);
    T_CHECK(r0.rc == 0, "row loop: %s", r0.err);
    if (r0.rc == 0) {
        BrErr e = {0};
        MB *a2 = k_binary_ms(OP_MULT, A, 2, &e);
        T_MB_EQ(r0.out[0].m, a2, 0, "row loop result");
        mb_release(a2);
    }
    t_run_free(&r0);
    mb_release(A); mb_release(B);
}

/* How many results where-loops lifted from loops of outer products
 * compute in the main script of src (inputs names[0..n) predefined);
 * *loops: in how many where-loops (NULL: not asked). */
static int rank1_lifted_n(const char *src, const char **names, int n, int *loops)
{
    Diag *d = diag_new();
    LangOptions lo = {.predefined = names, .npredefined = n};
    Program *p = lang_load_string(src, "<t>", &lo, d);
    int c = 0, nl = 0;
    const Block *b = p ? lang_main(p) : NULL;
    for (int i = 0; b && i < b->n; i++) {
        const Stmt *s = b->stmts[i];
        /* a stepped loop's statements are inside if (<the loop runs>) */
        const Block *in = s->kind == ST_IF ? &s->if_.then_b : NULL;
        for (int j = 0; in && j < in->n; j++) {
            c += where_results(in->stmts[j]);
            nl += where_results(in->stmts[j]) > 0;
        }
        const Expr *w = s->kind == ST_ASSIGN ? s->assign.value : s->kind == ST_MASSIGN ? s->massign.call : NULL;
        if (w && w->kind == EX_WHERE && w->where->bcast) {
            c += where_results(s);
            nl++;
        }
    }
    lang_program_free(p);
    diag_free(d);
    if (loops) *loops = nl;
    return c;
}

static int rank1_lifted(const char *src, const char **names, int n) { return rank1_lifted_n(src, names, n, NULL); }

/* Loops over k of rank-one outer products with elementwise operators
 * (temporaries, transposed slices, broadcast thresholds and results,
 * min/max) lift to where-loops: the same R, loop variable and
 * temporaries as the loops kept (BRAID_AMULET_LIFT=0), over sizes that
 * take the evaluator and the kernel; loops outside the shape stay loops
 * (same results); a shape mismatch is still an error. */
static void rank1(void)
{
    static const struct { const char *init, *body; int lifts; } cases[] = {
        {"matrix(0, M, N)", "P = A[,k] %*% B[k,]\n R = R + P - (P > thr) * P * dis", 1},
        {"matrix(0, M, N)", "P = t(At[k,]) %*% t(Bt[,k])\n R = R + P + (P > thc) * (P - thc)", 1},
        {"0", "R = R + (A[,k] %*% B[k,] > thf)", 1},
        {"matrix(1, 1, N)", "R += ifelse(A[,k] %*% B[k,] > 0.2, A[,k] %*% B[k,], -1)", 1},
        {"matrix(1e9, M, N)", "R = min(R, A[,k] + B[k,])", 1},
        {"matrix(-1e9, M, 1)", "R = max(t(At[k,]) - t(Bt[,k]), R)", 1},
        {"thf", "u = A[,k] * 2\n v = abs(B[k,])\n R = R - u %*% v * thr", 1},
        {"matrix(0, M, N)", "P = A[,k] %*% B[k,]\n R = R + P - (P > t(thrt)) * P * t(thft)", 1},
        {"matrix(-1e9, M, N)", "R = max(R, outer(A[,k], t(Bt[,k]), \"+\") * outer(A[,k], B[k,], op=\">\"))", 1},
        {"matrix(0, M, N)", "R = thf + R + sqrt(abs(A[,k] %*% B[k,]))", 0},
        {"matrix(0, M, N)", "R = R + A[,k] %*% B[k,] * s\n s = s * 0.5", 0},
        {"matrix(0, M, N)", "R = R + A[,k] %*% B[k,] * k", 0},
        {"matrix(0, M, N)", "R = R + A[,k] %*% B[k,] * sum(A[,k])", 0},
    };
    static const int64_t sizes[][3] = {{37, 29, 41}, {13, 50, 7}, {70, 66, 80}, {1, 17, 5}};
    const char *names[] = {"A", "B", "At", "Bt", "thr", "thc", "thf", "thrt", "thft"}, *on[] = {"R", "x", "P", "u"};
    char src[900];
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        int64_t M = sizes[si][0], N = sizes[si][1], K = sizes[si][2];
        t_seed((uint64_t)(M * 17 + N));
        MB *A = t_gen(M, K, 1, -1, 1, false), *B = t_gen(K, N, 1, -1, 1, false);
        BrErr e = {0};
        MB *At = k_transpose(A, &e), *Bt = k_transpose(B, &e);
        MB *ins[] = {A, B, At, Bt, t_gen(1, N, 1, -0.3, 0.3, false), t_gen(M, 1, 1, -0.3, 0.3, false),
                     t_gen(M, N, 1, -0.3, 0.3, false), NULL, NULL};
        ins[7] = k_transpose(ins[4], &e);
        ins[8] = k_transpose(ins[6], &e);
        for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
            snprintf(src, sizeof src,
                     "M = nrow(A); N = ncol(B); dis = 0.5; s = 1; P = 0; u = 0\nR = %s\n"
                     "for (k in 1:ncol(A)) {\n %s\n}\nx = k\n", cases[c].init, cases[c].body);
            T_CHECK(rank1_lifted(src, names, 9) == cases[c].lifts, "rank-one case %zu lifted", c);
            TRun r0, r1;
            if (run_two(src, "BRAID_AMULET_LIFT", "0", NULL, 9, names, ins, 4, on, &r0, &r1)) {
                T_MB_EQ(r1.out[0].kind == V_MATRIX ? r1.out[0].m : NULL, r0.out[0].m, 1e-9,
                        "rank-one case %zu, %lldx%lldx%lld", c, (long long)M, (long long)N, (long long)K);
                for (int o = 1; o < 4; o++)
                    T_CHECK(r0.out[o].kind == r1.out[o].kind &&
                            (r0.out[o].kind != V_MATRIX ? val_as_double(&r0.out[o]) == val_as_double(&r1.out[o])
                                                        : mb_equal(r0.out[o].m, r1.out[o].m, 0)),
                            "rank-one case %zu: variable %s after the loop", c, on[o]);
            }
            t_run_free(&r0);
            t_run_free(&r1);
        }
        /* a threshold of the wrong shape: an error either way */
        MB *bad = t_gen(1, N + 1, 1, 0, 1, false);
        MB *ins2[] = {A, B, bad};
        const char *n2[] = {"A", "B", "thr"}, *on2[] = {"R"};
        const char *src2 = "R = matrix(0, nrow(A), ncol(B))\nfor (k in 1:ncol(A)) R = R + (A[,k] %*% B[k,] > thr)\n";
        TRun r;
        t_run_dml(src2, &t_pols[2].o, 3, n2, ins2, 1, on2, &r);
        T_CHECK(r.rc != 0 && strstr(r.err, "dimension mismatch"), "rank-one shape error: %s", r.err);
        t_run_free(&r);
        setenv("BRAID_AMULET_LIFT", "0", 1);
        t_run_dml(src2, &t_pols[2].o, 3, n2, ins2, 1, on2, &r);
        unsetenv("BRAID_AMULET_LIFT");
        T_CHECK(r.rc != 0, "rank-one shape error, loop kept");
        t_run_free(&r);
        mb_release(bad);
        for (int i = 0; i < 9; i++) mb_release(ins[i]);
    }
}

/* Loops of outer products that update several results (one where-loop
 * computing them all, temporaries between them) and loops over seq(a, b, step) (positive,
 * negative, one value, none, fractional bounds): the same results, loop
 * variable and temporaries as the loops kept; loops outside the shape
 * (a result updated twice, read by another statement, a step that is not
 * an integer literal) stay loops. */
static void rank1_more(void)
{
    static const struct { const char *range, *body; int lifts; } cases[] = {
        {"1:ncol(A)", "P = A[,k] %*% B[k,]\n R = R + P\n Q = abs(P)\n S = min(S, Q - 1)\n T = T + (P > 0)", 3},
        {"seq(2, ncol(A), 3)", "P = A[,k] %*% B[k,]\n R = R + P - (P > thr) * P * 0.5", 1},
        {"seq(ncol(A), 1, -4)", "P = A[,k] %*% B[k,]\n R = R + P\n S = max(S, P)", 2},
        {"seq(3, 3, 7)", "R = R + A[,k] %*% B[k,]", 1},
        {"seq(5, 2, 1)", "R = R + A[,k] %*% B[k,]\n T = T + A[,k] %*% B[k,]", 2},   /* runs no iteration */
        {"seq(2.7, 20.2, 5)", "R = R + A[,k] %*% B[k,]\n Q = A[,k] %*% B[k,] * 2\n T = T + Q", 2},
        {"seq(1, ncol(A), 2)", "R = R + A[,k] %*% B[k,]\n R = R + 1", 0},
        {"1:ncol(A)", "R = R + A[,k] %*% B[k,]\n S = S + R", 0},
        {"seq(1, ncol(A), 1.5)", "R = R + A[,k] %*% B[k,]", 0},
    };
    static const int64_t sizes[][3] = {{37, 29, 41}, {70, 66, 80}};
    const char *names[] = {"A", "B", "thr"}, *on[] = {"R", "S", "T", "k", "P", "Q"};
    char src[700];
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        int64_t M = sizes[si][0], N = sizes[si][1], K = sizes[si][2];
        t_seed((uint64_t)(M * 5 + K));
        MB *ins[] = {t_gen(M, K, 1, -1, 1, false), t_gen(K, N, 1, -1, 1, false), t_gen(1, N, 1, -0.3, 0.3, false)};
        double tol = 2 * (double)K * (double)K * 2.3e-16;
        for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
            snprintf(src, sizeof src,
                     "R = matrix(0, nrow(A), ncol(B)); S = matrix(-1e9, nrow(A), ncol(B)); T = 0; k = -1; P = 0; "
                     "Q = 0\nfor (k in %s) {\n %s\n}\n", cases[c].range, cases[c].body);
            /* the results, in one where-loop (their extents are the same) */
            int loops = 0, res = rank1_lifted_n(src, names, 3, &loops);
            T_CHECK(res == cases[c].lifts && loops == (res > 0), "rank-one loop %zu: %d results in %d where-loops",
                    c, res, loops);
            TRun r0, r1;
            if (run_two(src, "BRAID_AMULET_LIFT", "0", NULL, 3, names, ins, 6, on, &r0, &r1))
                for (int o = 0; o < 6; o++) {
                    bool m = r0.out[o].kind == V_MATRIX;
                    T_CHECK(r0.out[o].kind == r1.out[o].kind &&
                                (m ? mb_equal(r0.out[o].m, r1.out[o].m, tol)
                                   : val_as_double(&r0.out[o]) == val_as_double(&r1.out[o])),
                            "rank-one loop %zu, %lldx%lldx%lld: %s after the loop", c, (long long)M, (long long)N,
                            (long long)K, on[o]);
                }
            t_run_free(&r0);
            t_run_free(&r1);
        }
        for (int i = 0; i < 3; i++) mb_release(ins[i]);
    }
}

/* A stepped k over a sparse A reads its non-zeros on the step, never
 * densifying it: A is 10^5 x 10^5 (80 GB dense) with 10^4 non-zeros,
 * against the product with B's rows off the step zeroed, by the sparse
 * kernel and by the evaluator, with a positive and a negative step. */
static void rank1_sparse_step(void)
{
    static const char *modes[] = {"kernel", "eval"};
    static const char *ranges[] = {"seq(3, ncol(A), 7)", "seq(ncol(A) - 1, 2, -5)"};
    const char *on[] = {"D", "k"};
    for (int m = 0; m < 2; m++)
        for (int g = 0; g < 2; g++) {
            char src[700];
            snprintf(src, sizeof src,
                     "A = rand(rows=100000, cols=100000, sparsity=1e-6, seed=11)\n"
                     "B = rand(rows=100000, cols=6, min=-1, max=1, seed=12)\n"
                     "R = matrix(0, nrow(A), ncol(B))\n"
                     "for (k in %s) {\n R = R + A[,k] %%*%% B[k,]\n}\n"
                     "s = %s\nidx = seq(1, nrow(B))\n"
                     "on = (idx >= min(s[1,1], s[nrow(s),1])) * (idx <= max(s[1,1], s[nrow(s),1])) * "
                     "((idx - s[1,1]) %%%% %d == 0)\n"
                     "D = max(abs(R - A %%*%% (B * on)))\n",
                     ranges[g], ranges[g], g ? 5 : 7);
            setenv("BRAID_AMULET", modes[m], 1);
            TRun r;
            t_run_dml(src, &t_pols[2].o, 0, NULL, NULL, 2, on, &r);
            /* a row of R sums at most a few products of magnitude <= 1 */
            T_CHECK(r.rc == 0 && val_as_double(&r.out[0]) <= 1e-12, "stepped k over a sparse A (%s, %s): %s, %g",
                    modes[m], ranges[g], r.err, r.rc ? -1 : val_as_double(&r.out[0]));
            t_run_free(&r);
        }
    unsetenv("BRAID_AMULET");
}

/* R updated in place at its last use: a copy that shares R's block
 * keeps its value; repeated updates in a loop accumulate. */
static void inplace(void)
{
    MB *A = t_gen(30, 20, 1, -1, 1, false), *B = t_gen(20, 25, 1, -1, 1, false);
    const char *names[] = {"A", "B"}, *on[] = {"S", "D"};
    MB *ins[] = {A, B};
    const char *src =
        "R = matrix(1, rows=30, cols=25)\nS = R\n"
        "where (i in 1:30, j in 1:25, k in 1:20) { R[i,j] += A[i,k] * B[k,j] }\n"
        "T = matrix(0, rows=30, cols=25)\n"
        "for (t in 1:3) { where (i in 1:30, j in 1:25, k in 1:20) { T[i,j] += A[i,k] * B[k,j] } }\n"
        "D = T - 3 * (R - 1)\n";
    TRun r;
    t_run_dml(src, &t_pols[2].o, 2, names, ins, 2, on, &r);
    T_CHECK(r.rc == 0, "in place: %s", r.err);
    if (r.rc == 0) {
        BrErr e = {0};
        MB *one = mb_fill(30, 25, 1, &e), *zero = mb_dense(30, 25, &e);
        T_MB_EQ(r.out[0].m, one, 0, "in place: the copy keeps its value");
        T_CHECK(mb_equal(r.out[1].m, zero, 1e-12), "in place: repeated updates");
        mb_release(one); mb_release(zero);
    }
    t_run_free(&r);
    mb_release(A); mb_release(B);
}

/* NaN and infinities in the operands: the masked forms (0 * x), min=,
 * max= and binary min/max give DML's values on every path (the kernel
 * leaves such loops to the evaluator), against the scalar reference. */
static void nonfinite(void)
{
    t_seed(5);
    MB *A = t_gen(70, 80, 1, -1, 1, false), *B = t_gen(80, 66, 1, -1, 1, false);
    A->d[3 * 80 + 7] = NAN;
    A->d[10 * 80 + 2] = INFINITY;
    B->d[5 * 66 + 9] = -INFINITY;
    MB *th = t_gen(1, 66, 1, -0.5, 0.5, false);
    th->d[4] = NAN;
    const char *names[] = {"A", "B", "thj"}, *on[] = {"R", "S", "T", "U"};
    MB *ins[] = {A, B, th};
    const char *src =
        "R = matrix(0, 70, 66); S = matrix(1e9, 70, 66); T = matrix(-1e9, 70, 66); U = R\n"
        "where (i in 1:70, j in 1:66, k in 1:80) { R[i,j] += A[i,k]*B[k,j] - (A[i,k]*B[k,j] > thj[j]) * A[i,k]*B[k,j] }\n"
        "where (i in 1:70, j in 1:66, k in 1:80) { S[i,j] min= A[i,k] + B[k,j] }\n"
        "where (i in 1:70, j in 1:66, k in 1:80) { T[i,j] max= A[i,k] - B[k,j] }\n"
        "where (i in 1:70, j in 1:66, k in 1:80) { U[i,j] += min(A[i,k], B[k,j]) * (B[k,j] > 0) }\n";
    static const char *modes[] = {"kernel", "auto", "eval"};
    for (int m = 0; m < 3; m++) {
        TRun r0, r1;
        if (run_two(src, "BRAID_AMULET", "ref", modes[m], 3, names, ins, 4, on, &r0, &r1))
            for (int k = 0; k < 4; k++) T_MB_EQ(r1.out[k].m, r0.out[k].m, 1e-9, "non-finite %s output %d", modes[m], k);
        t_run_free(&r0);
        t_run_free(&r1);
    }
    unsetenv("BRAID_AMULET");
    mb_release(A); mb_release(B); mb_release(th);
}

/* A sparse A whose zeros make the body zero (matmul, Q1) skips them; Q2
 * (not zero where A is) must not: both against the reference path. */
static void sparse_a(void)
{
    t_seed(99);
    MB *A = t_gen(70, 80, 0.02, -1, 1, true), *B = t_gen(80, 66, 1, -1, 1, false);
    MB *th = t_gen(1, 66, 1, -0.5, 0.5, false);
    const char *names[] = {"A", "B", "thj"}, *on[] = {"R", "S", "T"};
    MB *ins[] = {A, B, th};
    const char *src =
        "R = matrix(0, 70, 66); S = R; T = R; dis = matrix(0.5, 66, 1)\n"
        "where (i in 1:70, j in 1:66, k in 1:80) { R[i,j] += A[i,k] * B[k,j] }\n"
        "where (i in 1:70, j in 1:66, k in 1:80) { S[i,j] += A[i,k]*B[k,j] - (A[i,k]*B[k,j] > thj[j]) * A[i,k]*B[k,j]*dis[j] }\n"
        "where (i in 1:70, j in 1:66, k in 1:80) { T[i,j] += A[i,k]*B[k,j] + (A[i,k]*B[k,j] > thj[j]) * (A[i,k]*B[k,j] - thj[j]) }\n";
    TRun r0, r1;
    if (run_two(src, "BRAID_AMULET", "ref", "auto", 3, names, ins, 3, on, &r0, &r1))
        for (int k = 0; k < 3; k++) T_MB_EQ(r0.out[k].m, r1.out[k].m, 1e-9, "sparse A output %d", k);
    t_run_free(&r0);
    t_run_free(&r1);
    /* sub-ranges of the sparse operand, and a NaN in B (no skipping) */
    const char *src2 =
        "R = matrix(0, 70, 66)\n"
        "where (i in 2:69, j in 1:66, k in 3:80) { R[i,j] += A[i,k] * B[k,j] }\n";
    const char *on2[] = {"R"};
    for (int nan = 0; nan < 2; nan++) {
        if (nan) {
            B->d[7 * 66 + 5] = NAN;
            mb_values_changed(B);   /* a product may have scanned it */
        }
        if (run_two(src2, "BRAID_AMULET", "ref", "auto", 3, names, ins, 1, on2, &r0, &r1))
            T_MB_EQ(r1.out[0].m, r0.out[0].m, 1e-9, "sparse A sub-range, NaN %d", nan);
        t_run_free(&r0);
        t_run_free(&r1);
    }
    unsetenv("BRAID_AMULET");
    mb_release(A); mb_release(B); mb_release(th);
    /* a sparse A whose dense form would not fit in memory (100000^2):
     * read by its rows, never densified; against braid's matmul */
    BrErr e = {0};
    MB *H = mb_sp_new(100000, 100000, 256, &e), *C = t_gen(100000, 3, 1, -1, 1, false);
    for (int q = 0; q < 200; q++) mb_sp_append(H, q * 499, (q * 7919) % 100000, 0.5 + q, &e);
    mb_sp_finish(H);
    const char *n3[] = {"H", "C"}, *on3[] = {"R", "S"};
    MB *in3[] = {H, C};
    TRun r;
    t_run_dml("R = matrix(0, nrow(H), ncol(C))\n"
              "where (i in 1:nrow(H), j in 1:ncol(C), k in 1:ncol(H)) { R[i,j] += H[i,k] * C[k,j] }\nS = H %*% C\n",
              &t_pols[2].o, 2, n3, in3, 2, on3, &r);
    T_CHECK(r.rc == 0, "huge sparse A: %s", r.err);
    if (r.rc == 0) T_MB_EQ(r.out[0].m, r.out[1].m, 1e-12, "huge sparse A");
    t_run_free(&r);
    mb_release(H); mb_release(C);
}

/* ins[0..4): A (M x K, density da), B (K x N, density db), t(A), t(B);
 * stored sparse below density 0.4. */
static void gen_ab(int64_t M, int64_t N, int64_t K, double da, double db, MB **ins)
{
    BrErr e = {0};
    ins[0] = t_gen(M, K, da, -1, 1, da < 0.4);
    ins[1] = t_gen(K, N, db, -1, 1, db < 0.4);
    ins[2] = k_transpose(ins[0], &e);
    ins[3] = k_transpose(ins[1], &e);
}

/* The where-loop R[i,j] += body over ins (names below; A sparse) with
 * BRAID_AMULET=ref and =kernel (the sparse kernel): equal results. sub:
 * rows 2..M-1 and k in 3..K-2 (a row's non-zeros cut at both ends). */
static const char *sp_names[] = {"A", "B", "At", "Bt", "thi", "thj", "thk", "C"};
/* Reference results of sparse_check_mode's scripts over the current
 * inputs, kept while sp_ref_on (sparse_kernel checks each script over
 * the same inputs at 1 and 2 threads and again searched or pinned: the
 * reference path's scalar loop ran 3 times for each); sp_ref_clear
 * drops them when the inputs change. */
typedef struct SpRef { char *src; MB *r; } SpRef;
static SpRef sp_refs[64];
static int sp_nrefs;
static bool sp_ref_on;

static const MB *sp_ref_get(const char *src)
{
    for (int e = 0; sp_ref_on && e < sp_nrefs; e++)
        if (!strcmp(sp_refs[e].src, src)) return sp_refs[e].r;
    return NULL;
}
static void sp_ref_put(const char *src, MB *r)
{
    if (!sp_ref_on || sp_nrefs == (int)(sizeof sp_refs / sizeof *sp_refs)) return;
    char *c = strdup(src);
    if (!c) return;
    sp_refs[sp_nrefs++] = (SpRef){c, mb_retain(r)};
}
static void sp_ref_clear(void)
{
    for (int e = 0; e < sp_nrefs; e++) {
        free(sp_refs[e].src);
        mb_release(sp_refs[e].r);
    }
    sp_nrefs = 0;
}

static void sparse_check_mode(MB **ins, int64_t M, int64_t N, int64_t K, const char *body, int sub, const char *mode,
                              const char *what)
{
    char src[600];
    int64_t i0 = sub ? 2 : 1, i1 = sub ? M - 1 : M, k0 = sub ? 3 : 1, k1 = sub ? K - 2 : K;
    snprintf(src, sizeof src, "R = matrix(0, %lld, %lld)\nwhere (i in %lld:%lld, j in 1:%lld, k in %lld:%lld) "
             "{ R[i,j] += %s }\n", (long long)M, (long long)N, (long long)i0, (long long)i1, (long long)N,
             (long long)k0, (long long)k1, body);
    /* two summation orders of K terms of magnitude <= 16 */
    double tol = 2 * (double)K * (double)K * 16 * 2.3e-16;
    const char *on[] = {"R"};
    TRun r0, r1;
    const MB *ref = sp_ref_get(src);
    if (ref) {
        setenv("BRAID_AMULET", mode, 1);
        t_run_dml(src, &t_pols[2].o, 8, sp_names, ins, 1, on, &r1);
        T_CHECK(r1.rc == 0, "BRAID_AMULET=%s: %s", mode, r1.err);
        if (r1.rc == 0)
            T_MB_EQ(r1.out[0].m, ref, tol, "sparse kernel (%s) %s, %lldx%lldx%lld, sub-range %d, %s", mode, body,
                    (long long)M, (long long)N, (long long)K, sub, what);
        t_run_free(&r1);
        return;
    }
    if (run_two(src, "BRAID_AMULET", "ref", mode, 8, sp_names, ins, 1, on, &r0, &r1)) {
        T_MB_EQ(r1.out[0].m, r0.out[0].m, tol, "sparse kernel (%s) %s, %lldx%lldx%lld, sub-range %d, %s", mode, body,
                (long long)M, (long long)N, (long long)K, sub, what);
        sp_ref_put(src, r0.out[0].m);
    }
    t_run_free(&r0);
    t_run_free(&r1);
}

static void sparse_check(MB **ins, int64_t M, int64_t N, int64_t K, const char *body, int sub, const char *what)
{
    sparse_check_mode(ins, M, N, K, body, sub, "kernel", what);
}

/* The inputs of sparse_check: A sparse of density d, B, t(A), t(B), the
 * vectors thi, thj, thk, and C (M x N). */
static void sparse_inputs(int64_t M, int64_t N, int64_t K, double d, MB **ins)
{
    gen_ab(M, N, K, d, 1, ins);
    ins[4] = t_gen(M, 1, 1, -1, 1, false);
    ins[5] = t_gen(1, N, 1, -0.3, 0.3, false);
    ins[6] = t_gen(K, 1, 1, -1, 1, false);
    ins[7] = t_gen(M, N, 1, -1, 1, false);
}

static const char *sp_bodies[] = {
    "A[i,k] * B[k,j]",
    "A[i,k]*B[k,j] - (A[i,k]*B[k,j] > thj[j]) * A[i,k]*B[k,j]*0.5",
    "abs(A[i,k]) * B[k,j] * thj[j] + A[i,k] * thk[k] * C[i,j]",
    "At[k,i] * Bt[j,k] * thi[i]",
    "ifelse(At[k,i] > 0, At[k,i], 2 * At[k,i]) * (B[k,j] - thj[j])",
};

/* The sparse kernel (a sparse (i,k) operand whose zeros make the body
 * zero, read by its CSR rows; A[k,i] through the CSR of t(A)): every
 * operand class (scalars, i-, j-, k-vectors, (i,j) matrices, B row-major
 * and transposed), full and sub-ranges, swept shapes and densities, 1
 * and 2 threads, against the scalar reference; with a NaN in B the
 * zeros are not skipped (dense kernel) and the results still agree. */
static void sparse_kernel(void)
{
    static const int64_t sizes[][3] = {{70, 66, 80}, {131, 37, 200}, {50, 129, 90}};
    static const double dens[] = {0.01, 0.04};
    char what[40];
    /* every (shape, density) pair */
    for (size_t c = 0; c < 6; c++) {
        size_t si = c / 2, di = c % 2;
        int64_t M = sizes[si][0], N = sizes[si][1], K = sizes[si][2];
        t_seed((uint64_t)(M * 7 + K + 3 * di));
        MB *ins[8];
        sparse_inputs(M, N, K, dens[di], ins);
        T_CHECK(ins[2] && ins[2]->sparse, "t(A) of a sparse A is sparse");
        sp_ref_on = true;
        /* (under the sanitizers every third point: each (body, sub-range,
         * threads) still on two of the six pairs, t_keep) */
        size_t nb = sizeof sp_bodies / sizeof *sp_bodies;
        for (size_t f = 0; f < nb; f++)
            for (int sub = 0; sub < 2; sub++)
                for (int nt = 1; nt <= 2; nt++) {
                    if (!t_keep((long)((c * nb + f) * 4 + (size_t)sub * 2 + (size_t)nt - 1), 3)) continue;
                    br_set_threads(nt);
                    snprintf(what, sizeof what, "density %g, %d threads", dens[di], nt);
                    sparse_check(ins, M, N, K, sp_bodies[f], sub, what);
                }
        /* the column block: searched (sub-tasks of rows, blocks of 2, 4,
         * ... panels), and pinned to one panel (each body on two pairs
         * under the sanitizers) */
        for (size_t f = 0; f < nb; f++) {
            if (!t_keep((long)(c * nb + f), 3)) continue;
            br_set_threads(2);
            sparse_check_mode(ins, M, N, K, sp_bodies[f], 1, "search", "column block searched");
            br_set_threads(1);
            setenv("BRAID_AMULET_PARAMS", "32 1 1", 1);
            sparse_check(ins, M, N, K, sp_bodies[f], 0, "one panel per column block");
            unsetenv("BRAID_AMULET_PARAMS");
        }
        sp_ref_clear();
        sp_ref_on = false;
        /* a NaN in B: zeros of A not skipped (0 * NaN is NaN) */
        ins[1]->d[5 * N + 3] = NAN;
        ins[3]->d[3 * K + 5] = NAN;
        mb_values_changed(ins[1]);   /* the runs above knew them finite */
        mb_values_changed(ins[3]);
        sparse_check(ins, M, N, K, sp_bodies[3], 0, "NaN in B");
        for (int i = 0; i < 8; i++) mb_release(ins[i]);
    }
    br_set_threads(0);
    unsetenv("BRAID_AMULET");
}

/* The where-loop's per-call buffers come from the context's buffer pool
 * (br_alloc_scratch): a script's loop of small where-loops takes them
 * back from it instead of allocating per call. The body has a padded
 * (j) vector (thj[j]), a transposed B (the sparse kernel's copy, the
 * dense kernel's packed panels) and the threads' tiles (the sparse
 * kernel's, run_block's apk): 3 takes a call. With a pool of our own,
 * 2 and 9 calls of the sparse and the dense kernel, 1 and 2 threads:
 * the calls after the first allocate nothing (the misses do not grow)
 * and take their 3 buffers back from the pool (the hits grow by 3 a
 * call); the 9 calls' results match the scalar reference. Under the
 * sanitizers 2 threads only (the team's slices of one block). */
static void pool_buffers(void)
{
    const char *on[] = {"R"};
    char src[600], what[80];
    for (int dense = 0; dense < 2; dense++) {
        int64_t M = dense ? 20 : 45, N = 30, K = dense ? 40 : 60;
        t_seed((uint64_t)(17 + dense));
        MB *ins[8];
        sparse_inputs(M, N, K, dense ? 1 : 0.03, ins);
        for (int nt = 1; nt <= 2; nt++) {
            if (!t_keep(nt, 2)) continue;
            br_set_threads(nt);
            BrPoolStats st[2];
            for (int x = 0; x < 2; x++) {
                int calls = x ? 9 : 2;
                snprintf(src, sizeof src,
                         "R = matrix(0, %lld, %lld)\n"
                         "for (it in 1:%d) {\n"
                         "  Q = matrix(0, %lld, %lld)\n"
                         "  where (i in 1:%lld, j in 1:%lld, k in 1:%lld) { Q[i,j] += A[i,k] * Bt[j,k] * thj[j] }\n"
                         "  R = R + Q * it\n"
                         "}\n",
                         (long long)M, (long long)N, calls, (long long)M, (long long)N, (long long)M, (long long)N,
                         (long long)K);
                snprintf(what, sizeof what, "pooled buffers, %s kernel, %d threads, %d calls", dense ? "dense" : "sparse",
                         nt, calls);
                TRun r0 = {0}, r1;
                setenv("BRAID_AMULET", "ref", 1);
                if (x) t_run_dml(src, &t_pols[2].o, 8, sp_names, ins, 1, on, &r0);
                setenv("BRAID_AMULET", "kernel", 1);
                BrPool *pool = br_pool_new(BR_POOL_CAP);
                t_dml_pool = pool;
                t_run_dml(src, &t_pols[2].o, 8, sp_names, ins, 1, on, &r1);
                t_dml_pool = NULL;
                br_pool_stats(pool, &st[x]);
                br_pool_free(pool);
                T_CHECK(r0.rc == 0 && r1.rc == 0, "%s: %s %s", what, r0.err, r1.err);
                if (x && r0.rc == 0 && r1.rc == 0)
                    T_MB_EQ(r1.out[0].m, r0.out[0].m, 2 * 45 * (double)K * (double)K * 2.3e-16, "%s", what);
                t_run_free(&r0);
                t_run_free(&r1);
            }
            T_CHECK(st[1].misses == st[0].misses && st[1].hits - st[0].hits == 7 * 3,
                    "pooled buffers, %s kernel, %d threads: 2 calls %lld misses %lld hits, 9 calls %lld misses %lld "
                    "hits (want the same misses, 21 more hits)",
                    dense ? "dense" : "sparse", nt, (long long)st[0].misses, (long long)st[0].hits,
                    (long long)st[1].misses, (long long)st[1].hits);
        }
        for (int i = 0; i < 8; i++) mb_release(ins[i]);
    }
    br_set_threads(0);
    unsetenv("BRAID_AMULET");
}

/* One where-loop `R[i,j] += body` over ins (sp_names), M x N x K, called
 * as its instruction calls it (cg_where_exec: bind, the kernel and its
 * buffers, the result; R not taken), with a codegen context of its own
 * (wcall_open; false when the source has no where-loop). */
typedef struct WCall {
    Diag *dg;
    Program *pg;
    const WhereLoop *w;
    Value args[7 + WHERE_MAXLEAVES];
    int nargs;
    MB *r0;
    CgContext *c;
} WCall;

static bool wcall_open(WCall *x, const char *body, MB **ins, int64_t M, int64_t N, int64_t K)
{
    char src[400];
    snprintf(src, sizeof src, "R = matrix(0, %lld, %lld)\nwhere (i in 1:%lld, j in 1:%lld, k in 1:%lld) { R[i,j] += %s }\n",
             (long long)M, (long long)N, (long long)M, (long long)N, (long long)K, body);
    memset(x, 0, sizeof *x);
    x->dg = diag_new();
    LangOptions lo = {.predefined = sp_names, .npredefined = 8};
    x->pg = lang_load_string(src, "<t>", &lo, x->dg);
    const Block *bl = x->pg ? lang_main(x->pg) : NULL;
    const Stmt *st = bl && bl->n > 1 ? bl->stmts[1] : NULL;
    x->w = st && st->kind == ST_ASSIGN && st->assign.value->kind == EX_WHERE ? st->assign.value->where : NULL;
    if (!x->w) return false;
    /* its inputs: R, from and to of i, j, k, the variables it reads */
    const char *lv[WHERE_MAXLEAVES];
    int nl = where_leaves(x->w, lv, WHERE_MAXLEAVES);
    BrErr e = {0};
    x->r0 = mb_dense(M, N, &e);
    x->args[0] = val_matrix(x->r0);
    for (int v = 0; v < 3; v++) {
        x->args[1 + 2 * v] = val_int(1);
        x->args[2 + 2 * v] = val_int(v == 0 ? M : v == 1 ? N : K);
    }
    for (int l = 0; l < nl; l++) {
        int q = 0;
        while (q < 7 && strcmp(sp_names[q], lv[l])) q++;
        x->args[7 + l] = val_matrix(ins[q]);
    }
    x->nargs = 7 + nl;
    x->c = cg_context_new(&t_pols[2].o);
    return x->c != NULL;
}

static int wcall_run(WCall *x, Value *out, BrErr *e)
{
    *out = val_none();
    return cg_where_exec(x->c, x->w, x->args, x->nargs, false, out, e);
}

static void wcall_close(WCall *x)
{
    cg_context_free(x->c);
    mb_release(x->r0);
    lang_program_free(x->pg);
    diag_free(x->dg);
}

/* The loop of wcall_open on nt threads with allocation failures injected
 * inside its call (br_alloc_fail_arm, base/base.h): a warm-up call compiles the kernel
 * and gives the result the other calls must match (rtol: other
 * parameters of a search round differently), a counting call the number
 * of allocations, then the nth fails, for every n. Each call must end
 * with the result or with an "out of memory" error and no result;
 * nothing may leak (the sanitizer pass). pool: the calls bound to a
 * buffer pool kept across them (after the first call its takes are
 * hits). Returns the points injected. */
static long oom_case(const char *body, MB **ins, int64_t M, int64_t N, int64_t K, int nt, bool pool, double rtol,
                     const char *what, const char *must)
{
    bool seen = must == NULL;
    WCall x;
    bool open = wcall_open(&x, body, ins, M, N, K);
    T_CHECK(open, "%s: no where-loop or context", what);
    BrPool *bp = pool ? br_pool_new(BR_POOL_CAP) : NULL, *prev = br_pool_bind(bp);
    br_set_threads(nt);
    BrErr e = {0};
    Value ref = val_none();
    T_CHECK(open && wcall_run(&x, &ref, &e) == 0 && ref.kind == V_MATRIX, "%s: warm-up: %s", what, e.msg);
    br_err_clear(&e);
    long total = 0, points = 0, bad = 0;
    if (ref.kind == V_MATRIX) {
        Value out;
        br_alloc_fail_arm(0);
        int rc = wcall_run(&x, &out, &e);
        total = br_alloc_fail_arm(-1);
        T_CHECK(rc == 0, "%s: counting call: %s", what, e.msg);
        val_release(&out);
        br_err_clear(&e);
        for (long n = 1; n <= total && bad < 5; n++) {
            br_alloc_fail_arm(n);
            rc = wcall_run(&x, &out, &e);
            bool hit = br_alloc_fail_arm(-1) >= n;
            bool ok = rc == 0 ? out.kind == V_MATRIX && mb_equal(out.m, ref.m, rtol)
                              : out.kind == V_NONE && strstr(e.msg, "out of memory") != NULL;
            T_CHECK(ok, "%s: allocation %ld of %ld failed: rc %d, %s", what, n, total, rc, rc ? e.msg : "other values");
            bad += !ok;
            seen = seen || (rc != 0 && strstr(e.msg, must) != NULL);
            points += hit;
            val_release(&out);
            br_err_clear(&e);
        }
    }
    T_CHECK(seen, "%s: no injected failure ended with \"%s\" (%ld allocations counted)", what, must ? must : "",
            total);
    val_release(&ref);
    br_pool_bind(prev);
    br_pool_free(bp);
    br_set_threads(0);
    wcall_close(&x);
    return points;
}

/* One call of x (wcall_run) under bound pool bp: its allocations outside
 * the pool (br_alloc_fail_arm's count of every allocation less the
 * pool's takes), *miss the pool's misses, *res its result (caller
 * releases; NULL on error). */
static long call_outside(WCall *x, BrPool *bp, int64_t *miss, MB **res)
{
    BrPoolStats a, b;
    br_pool_stats(bp, &a);
    BrErr e = {0};
    Value out;
    br_alloc_fail_arm(0);
    int rc = wcall_run(x, &out, &e);
    long n = br_alloc_fail_arm(-1);
    br_pool_stats(bp, &b);
    T_CHECK(rc == 0 && out.kind == V_MATRIX, "pooled kernel paths: %s", e.msg);
    *res = rc == 0 && out.kind == V_MATRIX ? mb_retain(out.m) : NULL;
    val_release(&out);
    *miss = b.misses - a.misses;
    return n - (long)(b.hits - a.hits) - (long)(b.misses - a.misses);
}

/* The search's and the large-block paths' buffers come from the pool
 * (pack_full's packed panels, alloc_ablk's (i,k) tiles, run_split's
 * chunk panels: br_alloc_scratch). A call's allocations outside the pool
 * (R's copy, its result's header, ...) are the same on every path of
 * the dense kernel, counted against a path of the same loop that has
 * none of those buffers: a pinned block with A read in place (256 x N)
 * against the same block over L2 with the team's shared (i,k) tiles on
 * 2 threads (alloc_ablk; 53 rows: 120 KB, under the pool's smallest
 * class, so allocated per call until 2026-12-02) and against the search
 * run each call (BRAID_AMULET=search: each kc candidate's panels packed
 * ahead, pack_full, and the strips' tiles, search_ablk); one thread
 * against the tile-major split of a small result on 2 (its chunks'
 * panels, 98 KB). The pinned calls after the first miss nothing; every result matches the scalar reference (under the
 * sanitizers, the kernel's with its defaults). */
static void pool_kernel_paths(void)
{
    static const struct {
        int64_t M, N, K;
        int npath;
        const char *mode[3], *pin[3], *name[3];
        int threads[3];
    } cases[] = {
        {53, 805, 260, 3, {"kernel", "kernel", "search"}, {"256 805 0", "256 805 1", NULL},
         {"pinned, A in place", "pinned, A packed by the team", "search"}, {1, 2, 1}},
        {20, 30, 4000, 2, {"kernel", "kernel"}, {NULL, NULL}, {"one block", "tile-major split"}, {1, 2}},
    };
    const char *body = "A[i,k] * B[k,j] * thj[j]";
    char what[120];
    br_par_pin(0);   /* the 2-thread teams even on a crowded machine */
    for (size_t cs = 0; cs < sizeof cases / sizeof *cases; cs++) {
        int64_t M = cases[cs].M, N = cases[cs].N, K = cases[cs].K;
        MB *ins[8];
        t_seed(31 + cs);
        sparse_inputs(M, N, K, 1, ins);
        WCall x;
        bool open = wcall_open(&x, body, ins, M, N, K);
        T_CHECK(open, "pooled kernel paths: no where-loop or context");
        /* (under the sanitizers against the kernel's defaults: the plain
         * pass checks the numbers) */
        setenv("BRAID_AMULET", T_SAN ? "kernel" : "ref", 1);
        BrErr e = {0};
        Value ref = val_none();
        if (open) wcall_run(&x, &ref, &e);
        BrPool *bp = br_pool_new(BR_POOL_CAP), *prev = br_pool_bind(bp);
        long out0 = -1;
        for (int pth = 0; pth < cases[cs].npath && open; pth++) {
            setenv("BRAID_AMULET", cases[cs].mode[pth], 1);
            if (cases[cs].pin[pth]) setenv("BRAID_AMULET_PARAMS", cases[cs].pin[pth], 1);
            else unsetenv("BRAID_AMULET_PARAMS");
            br_set_threads(cases[cs].threads[pth]);
            snprintf(what, sizeof what, "pooled kernel paths, %lldx%lldx%lld, %s", (long long)M, (long long)N,
                     (long long)K, cases[cs].name[pth]);
            for (int call = 0; call < 3; call++) {
                int64_t miss;
                MB *r = NULL;
                long out = call_outside(&x, bp, &miss, &r);
                if (ref.kind == V_MATRIX && r)
                    T_MB_EQ(r, ref.m, 2 * (double)K * (double)K * 2.3e-16, "%s, call %d", what, call);
                mb_release(r);
                if (call == 0) continue;   /* the first takes what the pool lacks */
                if (pth == 0 && call == 1) out0 = out;
                T_CHECK(out == out0, "%s, call %d: %ld allocations outside the pool, want %ld", what, call, out, out0);
                /* (the split's chunks take theirs concurrently or one
                 * after the other: the blocks the pool needs vary) */
                if (cases[cs].pin[pth]) T_CHECK(miss == 0, "%s, call %d: %lld misses", what, call, (long long)miss);
            }
        }
        br_set_threads(0);
        unsetenv("BRAID_AMULET_PARAMS");
        unsetenv("BRAID_AMULET");
        br_pool_bind(prev);
        br_pool_free(bp);
        val_release(&ref);
        if (open) wcall_close(&x);
        for (int i = 0; i < 8; i++) mb_release(ins[i]);
    }
    br_par_pin(-1);
}

/* Allocation failures inside the where-loop kernel paths (test_allocfail
 * runs scripts with codegen off, so it never reaches them): every
 * allocation of a call, one at a time, fails, on the sparse kernel (its
 * search: the threads' tiles, B's transposed copy, the (j) vector), the
 * dense kernel with a pool (its takes: the packed panels, run_block's
 * buffers), the tile-major split of a small result (the chunks' partial
 * results and panels), the run-time search (kc's race with each
 * candidate's panels packed ahead, pack_full; the strips' packed (i,k)
 * tiles, alloc_ablk) and a pinned block over L2 on 2 threads (the team's
 * shared (i,k) tiles, alloc_ablk). */
static void alloc_failures(void)
{
    MB *ins[8];
    long pts = 0;
    br_par_pin(0);   /* the 2-thread teams (run_block's shared tiles) even on a crowded machine */
    t_seed(23);
    sparse_inputs(45, 70, 60, 0.03, ins);
    setenv("BRAID_AMULET", "search", 1);
    pts += oom_case("A[i,k] * Bt[j,k] * thj[j]", ins, 45, 70, 60, 2, false, 1e-12, "sparse kernel, search", NULL);
    for (int i = 0; i < 8; i++) mb_release(ins[i]);
    setenv("BRAID_AMULET", "kernel", 1);
    sparse_inputs(20, 30, 40, 1, ins);
    pts += oom_case("A[i,k] * Bt[j,k] * thj[j]", ins, 20, 30, 40, 2, true, 0, "dense kernel, pool", NULL);
    for (int i = 0; i < 8; i++) mb_release(ins[i]);
    sparse_inputs(20, 30, 4000, 1, ins);
    pts += oom_case("A[i,k] * B[k,j] - (A[i,k] * B[k,j] > thj[j]) * 0.5", ins, 20, 30, 4000, 2, false, 0,
                    "tile-major split", NULL);
    for (int i = 0; i < 8; i++) mb_release(ins[i]);
    setenv("BRAID_AMULET", "search", 1);
    sparse_inputs(4 * 12 * 2 + 5, 32 * 24 + 37, 131, 1, ins);
    pts += oom_case("A[i,k] * B[k,j] * thj[j]", ins, 4 * 12 * 2 + 5, 32 * 24 + 37, 131, 2, false, 1e-12, "search",
                    NULL);
    for (int i = 0; i < 8; i++) mb_release(ins[i]);
    setenv("BRAID_AMULET", "kernel", 1);
    setenv("BRAID_AMULET_PARAMS", "256 805 1", 1);
    sparse_inputs(4 * 12 + 5, 805, 300, 1, ins);
    pts += oom_case("A[i,k] * B[k,j] * thj[j]", ins, 4 * 12 + 5, 805, 300, 2, false, 0, "pinned block over L2", NULL);
    for (int i = 0; i < 8; i++) mb_release(ins[i]);
    unsetenv("BRAID_AMULET_PARAMS");
    /* the vectorized evaluator (am_evaluate: each thread's chunk
     * buffers, on the checked allocator since 2026-12-02, before which
     * the injection did not reach them), over a dense A on 2 threads and
     * over a sparse A's non-zeros: some failure must end in its error */
    setenv("BRAID_AMULET", "eval", 1);
    sparse_inputs(20, 30, 40, 1, ins);
    pts += oom_case("A[i,k] * B[k,j] - (A[i,k] * B[k,j] > thj[j]) * 0.5", ins, 20, 30, 40, 2, false, 0,
                    "evaluator, 2 threads", "out of memory in a where-loop");
    for (int i = 0; i < 8; i++) mb_release(ins[i]);
    sparse_inputs(20, 30, 40, 0.1, ins);
    pts += oom_case("A[i,k] * Bt[j,k] * thj[j]", ins, 20, 30, 40, 1, false, 0, "evaluator, sparse A",
                    "out of memory in a where-loop");
    for (int i = 0; i < 8; i++) mb_release(ins[i]);
    unsetenv("BRAID_AMULET");
    br_par_pin(-1);
    printf("test_amulet: %ld allocation failures injected in where-loops\n", pts);
}

/* A narrow result over a sparse A: the sparse kernel's one-row tile as
 * wide as R's columns fill (1 to 4 vectors: N = 4 ran a 32-wide tile and
 * copied B 32 wide per call), at each SIMD level of the CPU; then, at
 * the run-time level, widths 1, 3, one vector, one vector + 1 and three
 * vectors - 1 (each its own kernel) over both B layouts (row-major: the
 * last partial panel copied; B[j,k]: all of it), full and sub-ranges, 1
 * and 2 threads, against the scalar reference. */
static double loop_vops_of(const char *src, const double *ports, bool sparse, int64_t ncols, int tile[2]);
/* An AMULET loop inside a parfor worker: OpenMP runs the loop's nested
 * region with one thread, not the nt its team was planned for. The
 * packing split the panels over nt and the one thread packed only its
 * share (the rest of the panel buffer was whatever memory held: wrong
 * sums, NaN). The template's loop (forced) for each worker's product,
 * in a parfor against the same in a for loop (no nested region), on 2
 * threads; a dense 64-cube block is one part, the larger one two. */
static void in_parfor(void)
{
    const char *src = "R = matrix(0, rows=4, cols=1)\n"
                      "parfor (p in 1:4) {\n"
                      "  R[p, 1] = sum((A * p) %*% (B + p))\n"
                      "}\n"
                      "Q = matrix(0, rows=4, cols=1)\n"
                      "for (p in 1:4) {\n"
                      "  Q[p, 1] = sum((A * p) %*% (B + p))\n"
                      "}\n";
    static const int64_t sizes[][3] = {{64, 64, 64}, {96, 300, 700}};
    br_set_threads(2);
    setenv("BRAID_AMULET_FUSE", "force", 1);
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
        int64_t M = sizes[z][0], N = sizes[z][1], K = sizes[z][2];
        t_seed((uint64_t)(M + N + K));
        MB *A = t_gen(M, K, 1, 0, 1, false), *B = t_gen(K, N, 1, 0, 1, false);
        const char *names[] = {"A", "B"}, *onames[] = {"R", "Q"};
        MB *ins[] = {A, B};
        TRun r;
        t_run_dml(src, &t_pols[2].o, 2, names, ins, 2, onames, &r);
        T_CHECK(r.rc == 0, "AMULET loop in parfor (%lldx%lldx%lld): %s", (long long)M, (long long)N, (long long)K, r.err);
        if (r.rc == 0 && r.out[0].kind == V_MATRIX && r.out[1].kind == V_MATRIX) {
            MB *R = mb_to_dense(r.out[0].m, &(BrErr){0}), *Q = mb_to_dense(r.out[1].m, &(BrErr){0});
            for (int p = 0; p < 4; p++)
                T_CHECK(fabs(R->d[p] - Q->d[p]) <= 1e-12 * fabs(Q->d[p]),
                        "AMULET loop in parfor worker %d (%lldx%lldx%lld): %.17g, in a for loop %.17g", p + 1,
                        (long long)M, (long long)N, (long long)K, R->d[p], Q->d[p]);
            mb_release(R);
            mb_release(Q);
        }
        t_run_free(&r);
        mb_release(A);
        mb_release(B);
    }
    unsetenv("BRAID_AMULET_FUSE");
    br_set_threads(0);
}

static void sparse_narrow(void)
{
    const char *mm = "R = matrix(0, rows=nrow(A), cols=ncol(B))\n"
                     "where (i in 1:nrow(A), j in 1:ncol(B), k in 1:ncol(A)) { R[i,j] += A[i,k] * B[k,j] }\n";
    KIsa isa0 = k_isa();
    for (int isa = K_ISA_GENERIC; isa <= (int)k_isa_cpu(); isa++) {
        k_isa_set((KIsa)isa);
        int w = isa == K_ISA_AVX512 ? 8 : isa == K_ISA_AVX2 ? 4 : 1, tile[2] = {0, 0};
        static const int64_t cols[] = {1, 3, 8, 9, 23, 100, 0};
        for (size_t c = 0; c < sizeof cols / sizeof *cols; c++) {
            int64_t n = cols[c], want = n > 0 && n < 4 * w ? (n + w - 1) / w * w : 4 * w;
            double v = loop_vops_of(mm, NULL, true, n, tile);
            T_CHECK(v > 0 && tile[0] == 1 && tile[1] == want, "sparse tile (%s) for %lld columns: %d x %d, want 1 x %lld",
                    k_isa_name((KIsa)isa), (long long)n, tile[0], tile[1], (long long)want);
        }
    }
    k_isa_set(isa0);
    int w = isa0 == K_ISA_AVX512 ? 8 : isa0 == K_ISA_AVX2 ? 4 : 1;
    /* (4 w + 1: a last panel of one column, whose other vectors load
     * nothing; under the sanitizers every third point, each width on
     * two or three) */
    int64_t widths[] = {1, 3, w, w + 1, 3 * w - 1, 4 * w + 1};
    char what[60];
    for (size_t c = 0; c < sizeof widths / sizeof *widths; c++) {
        int64_t M = 41, N = widths[c], K = 57;
        t_seed((uint64_t)(N * 13 + 5));
        MB *ins[8];
        sparse_inputs(M, N, K, 0.05, ins);
        for (int f = 1; f <= 3; f += 2)   /* thj[j] and B row-major; Bt[j,k] */
            for (int sub = 0; sub < 2; sub++)
                for (int nt = 1; nt <= 2; nt++) {
                    if (!t_keep((long)(c * 8 + (size_t)(f / 2) * 4 + (size_t)sub * 2 + (size_t)nt - 1), 3)) continue;
                    br_set_threads(nt);
                    snprintf(what, sizeof what, "narrow, %d threads", nt);
                    sparse_check(ins, M, N, K, sp_bodies[f], sub, what);
                }
        for (int i = 0; i < 8; i++) mb_release(ins[i]);
    }
    /* the partial panel's masked loads at the other SIMD levels: 5
     * columns are 2 vectors of 4 (AVX2; the second loads one lane) and
     * panels of 4 and 1 columns (scalar) */
    for (int isa = K_ISA_GENERIC; isa < (int)isa0; isa++) {
        k_isa_set((KIsa)isa);
        int64_t M = 41, N = 5, K = 57;
        t_seed((uint64_t)(isa * 7 + 3));
        MB *ins[8];
        sparse_inputs(M, N, K, 0.05, ins);
        for (int f = 1; f <= 3; f += 2)
            for (int sub = 0; sub < 2; sub++) {
                if (!t_keep((long)((f / 2) * 2 + sub), 2)) continue;
                br_set_threads(sub + 1);
                snprintf(what, sizeof what, "narrow, %s, %d threads", k_isa_name((KIsa)isa), sub + 1);
                sparse_check(ins, M, N, K, sp_bodies[f], sub, what);
            }
        for (int i = 0; i < 8; i++) mb_release(ins[i]);
    }
    k_isa_set(isa0);
    br_set_threads(0);
    unsetenv("BRAID_AMULET");
}

/* The sparse operand kept across calls (amulet.c sp_kept): a script's
 * loop of where-loops over the same sparse operand (At read At[k,i]: the
 * CSR of t(At); A read A[i,k]) takes it, and the scan of its values,
 * from the call before; changed in the loop (a new block, At = At * 2;
 * a cell set, At[2,3] = 0.7, which copies the block the loop keeps), it
 * is made again. Widths 1, 3 and one vector + 1 (kernels sparse_narrow
 * compiled), densities 0.01 and 0.04, 1 and 2 threads, against the
 * scalar reference; the trace counts the calls that found it kept (2 of
 * 5: the iterations after each change make it again). */
static void sparse_kept(void)
{
    int w = k_isa() == K_ISA_AVX512 ? 8 : k_isa() == K_ISA_AVX2 ? 4 : 1;
    int64_t widths[] = {1, 3, w + 1};
    static const double dens[] = {0.01, 0.04};
    const char *on[] = {"R"};
    char src[900], what[80];
    for (int bi = 0; bi < 2; bi++)
        for (size_t c = 0; c < sizeof widths / sizeof *widths; c++)
            for (int di = 0; di < 2; di++) {
                /* under the sanitizers half: each width still with both
                 * operands and both densities */
                if (!t_keep((long)((size_t)bi + c + (size_t)di), 2)) continue;
                int64_t M = 41, N = widths[c], K = 57;
                t_seed((uint64_t)(N * 13 + 5 + di));
                MB *ins[8];
                sparse_inputs(M, N, K, dens[di], ins);
                snprintf(src, sizeof src,
                         "R = matrix(0, %lld, %lld)\n"
                         "for (it in 1:5) {\n"
                         "  Q = matrix(0, %lld, %lld)\n"
                         "  where (i in 1:%lld, j in 1:%lld, k in 1:%lld) { Q[i,j] += %s }\n"
                         "  R = R + Q * it\n"
                         "  if (it == 2) { At = At * 2; A = A * 2 }\n"
                         "  if (it == 3) { At[2,3] = 0.7; A[3,2] = 0.7 }\n"
                         "}\n",
                         (long long)M, (long long)N, (long long)M, (long long)N, (long long)M, (long long)N,
                         (long long)K, sp_bodies[bi ? 3 : 1]);
                double tol = 2 * 15 * (double)K * (double)K * 64 * 2.3e-16;
                for (int nt = 1; nt <= 2; nt++) {
                    br_set_threads(nt);
                    snprintf(what, sizeof what, "kept operand, %s, N %lld, density %g, %d threads",
                             bi ? "At[k,i]" : "A[i,k]", (long long)N, dens[di], nt);
                    TRun r0, r1, r2;
                    if (run_two(src, "BRAID_AMULET", "ref", "kernel", 8, sp_names, ins, 1, on, &r0, &r1))
                        T_MB_EQ(r1.out[0].m, r0.out[0].m, tol, "%s", what);
                    FILE *f = amulet_traced(src, (CgOptions *)&t_pols[2].o, sp_names, ins, 8, &r2);
                    unsetenv("BRAID_AMULET");
                    int kept = 0;
                    char line[400];
                    while (f && fgets(line, sizeof line, f)) kept += strstr(line, "sparse operand kept") != NULL;
                    if (f) fclose(f);
                    T_CHECK(r2.rc == 0 && kept == 2, "%s: %d calls found the operand kept, want 2 (%s)", what, kept,
                            r2.err);
                    t_run_free(&r0);
                    t_run_free(&r1);
                    t_run_free(&r2);
                }
                for (int i = 0; i < 8; i++) mb_release(ins[i]);
            }
    br_set_threads(0);
    unsetenv("BRAID_AMULET");
}

static int trace_count(const char *src, CgOptions *cg, const char **names, MB **ins, int nin, const char *what,
                       TRun *r);
/* The zeros of a sparse A skipped by the finiteness flags of the other
 * factors (amulet.c zeros_skippable): in `A[i,k] * B[k,j] * s` the
 * body is 0 where A is whenever B and s are finite, whatever their
 * size. B near 1e151 and s = 1e151 bound the products at 1e302, past
 * the 1e300 where the node bounds (body_finite) give up: before, A was densified and the
 * dense kernel ran; now the sparse kernel runs (the trace), B is scanned
 * once for three calls (its flag answers the other two), and the sums
 * equal the reference's. With a NaN in B (a new block) the zeros are not
 * skipped and the NaN columns agree too. Then a new B per call (`Bf = B
 * * it`, as a script that changes its factor): the elementwise kernel
 * that makes Bf sets its flag in the pass that counts its non-zeros
 * (kernels/ew.c ew_finish), so no call scans it (before: one scan per
 * call), finite or with the NaN. */
static void sparse_finite_flag(void)
{
    int64_t M = 41, N = 11, K = 57;
    const char *on[] = {"R"};
    char src[700];
    for (int fresh = 0; fresh < 2; fresh++)
        for (int nan = 0; nan < 2; nan++) {
            snprintf(src, sizeof src,
                     "R = matrix(0, %lld, %lld)\n"
                     "for (it in 1:3) {\n"
                     "  Q = matrix(0, %lld, %lld)\n"
                     "  Bf = B * it\n"
                     "  where (i in 1:%lld, j in 1:%lld, k in 1:%lld) { Q[i,j] += A[i,k] * %s[k,j] * 1e151 }\n"
                     "  R = R + Q / 1e302\n"
                     "}\n",
                     (long long)M, (long long)N, (long long)M, (long long)N, (long long)M, (long long)N,
                     (long long)K, fresh ? "Bf" : "B");
            t_seed(61);
            MB *ins[8];
            sparse_inputs(M, N, K, 0.05, ins);
            mb_release(ins[1]);
            ins[1] = t_gen(K, N, 1, -1e151, 1e151, false);
            if (nan) ins[1]->d[4 * N + 2] = NAN;
            setenv("BRAID_AMULET", "kernel", 1);
            TRun r0, r1, r2;
            int64_t sc0 = mb_fin_scans();
            int ran = trace_count(src, (CgOptions *)&t_pols[2].o, sp_names, ins, 8, "amulet: sparse 1 x", &r2);
            int64_t scans = mb_fin_scans() - sc0;
            T_CHECK(r2.rc == 0 && ran == (nan ? 0 : 3),
                    "finite B of 1e151 (NaN %d, new B %d): %d of 3 calls ran the sparse kernel (%s)", nan, fresh, ran,
                    r2.err);
            T_CHECK(scans == !fresh, "finite B of 1e151 (NaN %d, new B %d): %lld scans of its values for 3 calls, "
                    "want %d", nan, fresh, (long long)scans, !fresh);
            if (run_two(src, "BRAID_AMULET", "ref", "kernel", 8, sp_names, ins, 1, on, &r0, &r1))
                T_MB_EQ(r1.out[0].m, r0.out[0].m, 1e-12, "finite B of 1e151 (NaN %d, new B %d): against the reference",
                        nan, fresh);
            t_run_free(&r0);
            t_run_free(&r1);
            t_run_free(&r2);
            for (int i = 0; i < 8; i++) mb_release(ins[i]);
        }
    unsetenv("BRAID_AMULET");
}

/* Frees runs r[0..n) and releases inputs ins[0..nin). */
static void free_runs(TRun **r, int n, MB **ins, int nin)
{
    for (int q = 0; q < n; q++) t_run_free(r[q]);
    for (int i = 0; i < nin; i++) mb_release(ins[i]);
}

/* The zero skip checked after the loop (amulet.c defer_setup): A at
 * 4.5% and K well over 2 M, so that the rows of B no non-zero of A
 * reads (6%) plus R's cells cost less than a scan of B. For factors read by k (B, B * 0.5 +
 * thj, Bt - thk), by i (thi, C) and by neither (thj), with R starting
 * at 0.25: all finite, the call skips and checks after (trace); a NaN
 * in a factor at a k (or i) no non-zero reads, the check before the
 * loop refuses the skip; an Inf at one that a non-zero reads, the
 * result is non-finite and the call runs again over every cell from R's
 * saved values; all finite over sub-ranges of i and k. Each against the
 * scalar reference, 1 and 2 threads.
 * Then three calls over one B (At[k,i]: which k are read comes off
 * At's row pointers, no pass over its cells): the first checks after and
 * vouches for B's finiteness flag, so the next two ask it and nothing is
 * scanned (before: one scan of B). */
static void sparse_deferred(void)
{
    int64_t M = 60, N = 13, K = 401;
    static const char *bodies[] = {
        "A[i,k] * B[k,j]",
        "A[i,k] * (B[k,j] * 0.5 + thj[j])",
        "At[k,i] * (Bt[j,k] - thk[k]) * thi[i]",
        "A[i,k] * B[k,j] + A[i,k] * C[i,j] * thj[j]",
    };
    const char *on[] = {"R"};
    double tol = 2 * (double)K * (double)K * 16 * 2.3e-16;
    char src[600], what[120];
    for (size_t f = 0; f < sizeof bodies / sizeof *bodies; f++)
        for (int c = 0; c < 4; c++)
            for (int nt = 1; nt <= 2; nt++) {
                if (!t_keep((long)(f * 8 + (size_t)c * 2 + (size_t)nt - 1), 3)) continue;
                br_set_threads(nt);
                t_seed(211 + f);
                MB *ins[8];
                sparse_inputs(M, N, K, 0.045, ins);
                /* a k (and an i) that no non-zero of A reads, and one that
                 * one reads */
                uint8_t *used = calloc((size_t)K, 1), *rused = calloc((size_t)M, 1);
                for (int64_t i = 0; i < M; i++)
                    for (int64_t q = ins[0]->rp[i]; q < ins[0]->rp[i + 1]; q++)
                        if (ins[0]->v[q] != 0) used[ins[0]->ci[q]] = rused[i] = 1;
                int64_t kun = -1, krd = -1;
                for (int64_t k = 0; k < K; k++) {
                    if (!used[k] && kun < 0) kun = k;
                    if (used[k] && krd < 0) krd = k;
                }
                T_CHECK(kun >= 0 && krd >= 0 && rused[3], "a k unread (%lld) and one read (%lld)", (long long)kun,
                        (long long)krd);
                free(used);
                free(rused);
                if (kun < 0 || krd < 0) { for (int i = 0; i < 8; i++) mb_release(ins[i]); continue; }
                if (c == 1 || c == 2) {
                    int64_t k = c == 1 ? kun : krd;
                    double v = c == 1 ? NAN : INFINITY;
                    if (f == 3 && c == 2) ins[7]->d[3 * N + 4] = v;   /* C[4,5]: row 4 of A is read */
                    else if (f == 3) ins[1]->d[k * N + 4] = v;
                    else if (f == 2) ins[3]->d[4 * K + k] = v;
                    else ins[1]->d[k * N + 4] = v;
                    mb_values_changed(ins[1]);
                    mb_values_changed(ins[3]);
                    mb_values_changed(ins[7]);
                }
                /* (c 3: rows 2..M-1 and k in 3..K-2) */
                int sub = c == 3;
                snprintf(src, sizeof src, "R = matrix(0.25, %lld, %lld)\nwhere (i in %d:%lld, j in 1:%lld, k in %d:%lld) "
                         "{ R[i,j] += %s }\n", (long long)M, (long long)N, 1 + sub, (long long)(M - sub), (long long)N,
                         1 + 2 * sub, (long long)(K - 2 * sub), bodies[f]);
                snprintf(what, sizeof what, "checked after: %s, %s, %d threads", bodies[f],
                         c == 0 ? "finite" : c == 1 ? "NaN at an unread k" : c == 2 ? "Inf read by a non-zero"
                                                                                 : "finite, sub-ranges", nt);
                setenv("BRAID_AMULET", "kernel", 1);
                TRun r0, r1, r2;
                FILE *tf = amulet_traced(src, (CgOptions *)&t_pols[2].o, sp_names, ins, 8, &r2);
                int after = 0, again = 0;
                char line[400];
                while (tf && fgets(line, sizeof line, tf)) {
                    after += strstr(line, "amulet: zero skip checked after the loop") != NULL;
                    again += strstr(line, "amulet: non-finite result after the zero skip") != NULL;
                }
                if (tf) fclose(tf);
                T_CHECK(r2.rc == 0 && after == (c == 1 ? 0 : 1) && again == (c == 2),
                        "%s: %d calls checked after the loop, %d ran again (%s)", what, after, again, r2.err);
                if (run_two(src, "BRAID_AMULET", "ref", "kernel", 8, sp_names, ins, 1, on, &r0, &r1)) {
                    T_MB_EQ(r1.out[0].m, r0.out[0].m, tol, "%s: against the reference", what);
                    T_MB_EQ(r2.out[0].m, r0.out[0].m, tol, "%s (traced): against the reference", what);
                }
                TRun *runs[] = {&r0, &r1, &r2};
                free_runs(runs, 3, ins, 8);
            }
    /* B loop-invariant: its flag set by the first call's check */
    br_set_threads(1);
    t_seed(223);
    MB *ins[8];
    sparse_inputs(M, N, K, 0.045, ins);
    snprintf(src, sizeof src, "R = matrix(0, %lld, %lld)\nfor (it in 1:3) {\n  Q = matrix(0, %lld, %lld)\n"
             "  where (i in 1:%lld, j in 1:%lld, k in 1:%lld) { Q[i,j] += At[k,i] * B[k,j] }\n  R = R + Q * it\n}\n",
             (long long)M, (long long)N, (long long)M, (long long)N, (long long)M, (long long)N, (long long)K);
    setenv("BRAID_AMULET", "kernel", 1);
    TRun r0, r1, r2;
    int64_t sc0 = mb_fin_scans();
    int after = trace_count(src, (CgOptions *)&t_pols[2].o, sp_names, ins, 8, "zero skip checked after", &r2);
    int64_t scans = mb_fin_scans() - sc0;
    T_CHECK(r2.rc == 0 && after == 1 && scans == 0,
            "loop-invariant B: %d of 3 calls checked after the loop (want 1), %lld scans of B (want 0) (%s)", after,
            (long long)scans, r2.err);
    if (run_two(src, "BRAID_AMULET", "ref", "kernel", 8, sp_names, ins, 1, on, &r0, &r1))
        T_MB_EQ(r1.out[0].m, r0.out[0].m, tol, "loop-invariant B: against the reference");
    TRun *runs[] = {&r0, &r1, &r2};
    free_runs(runs, 3, ins, 8);
    br_set_threads(0);
    unsetenv("BRAID_AMULET");
}

/* The kernel's parameters remembered on disk are read once per kernel
 * (and thread count), not per call (amulet_gen.c params_probe): a run
 * searches and saves them in a fresh cache directory (search mode: the
 * dense kernel's and the sparse kernel's), then a script calling the
 * same loop three times in a new context finds them on disk once and
 * in the kernel twice (before, each call opened the file: 3 of 3 "on
 * disk"); the results equal the reference's. */
static int trace_count(const char *src, CgOptions *cg, const char **names, MB **ins, int nin, const char *what,
                       TRun *r)
{
    FILE *f = amulet_traced(src, cg, names, ins, nin, r);
    int n = 0;
    char line[400];
    while (f && fgets(line, sizeof line, f)) n += strstr(line, what) != NULL;
    if (f) fclose(f);
    return n;
}
static void params_once(void)
{
    char dir[] = "/tmp/braid-test-amulet-XXXXXX";
    if (!mkdtemp(dir)) { T_CHECK(false, "mkdtemp"); return; }
    CgOptions cg = t_pols[2].o;
    cg.cachedir = dir;
    br_set_threads(1);
    const char *on[] = {"R"};
    for (int sp = 0; sp < 2; sp++) {
        /* dense: wide enough to search (N >= 32 nr, K >= 96); sparse:
         * A at 3% (the sparse kernel), searched in search mode */
        int64_t M = sp ? 200 : 120, N = sp ? 200 : 1100, K = sp ? 300 : 100;
        t_seed(131 + (uint64_t)sp);
        MB *ins[8];
        sparse_inputs(M, N, K, sp ? 0.03 : 1, ins);
        char one[400], three[500];
        snprintf(one, sizeof one, "R = matrix(0, %lld, %lld)\nwhere (i in 1:%lld, j in 1:%lld, k in 1:%lld) { R[i,j] += %s }\n",
                 (long long)M, (long long)N, (long long)M, (long long)N, (long long)K, sp_bodies[1]);
        snprintf(three, sizeof three,
                 "R = matrix(0, %lld, %lld)\nfor (it in 1:3) {\n  Q = matrix(0, %lld, %lld)\n"
                 "  where (i in 1:%lld, j in 1:%lld, k in 1:%lld) { Q[i,j] += %s }\n  R = R + Q * it\n}\n",
                 (long long)M, (long long)N, (long long)M, (long long)N, (long long)M, (long long)N, (long long)K,
                 sp_bodies[1]);
        const char *kind = sp ? "sparse kernel" : "dense kernel";
        TRun r0, r1;
        setenv("BRAID_AMULET", "search", 1);
        int searched = trace_count(one, &cg, sp_names, ins, 8, "(searched)", &r0);
        unsetenv("BRAID_AMULET");
        T_CHECK(r0.rc == 0 && searched == 1, "params once, %s: %d searches, want 1 (%s)", kind, searched, r0.err);
        int disk = trace_count(three, &cg, sp_names, ins, 8, "remembered on disk", &r1);
        T_CHECK(r1.rc == 0 && disk == 1, "params once, %s: %d of 3 calls read the parameters from disk, want 1 (%s)",
                kind, disk, r1.err);
        /* the values against the scalar reference (plain build only: its
         * scalar iterations were most of this test's time under the
         * sanitizers, and the reference path runs in the sweeps there):
         * the three calls add 1 + 2 + 3 times the one loop's result, so
         * the reference runs the one loop (13 million iterations, not 40) */
        if (r1.rc == 0 && !T_SAN) {
            TRun rr;
            setenv("BRAID_AMULET", "ref", 1);
            t_run_dml(one, &cg, 8, sp_names, ins, 1, on, &rr);
            unsetenv("BRAID_AMULET");
            double tol = 6 * 2 * (double)K * (double)K * 16 * 2.3e-16;
            MB *want = rr.rc == 0 ? mb_dense_uninit(M, N, &(BrErr){0}) : NULL;
            for (int64_t i = 0; want && i < M; i++)
                for (int64_t j = 0; j < N; j++) want->d[i * N + j] = 6 * mb_get(rr.out[0].m, i, j);
            if (want) mb_recount_nnz(want);
            if (want) T_MB_EQ(r1.out[0].m, want, tol, "params once, %s: the result", kind);
            else T_CHECK(false, "params once, %s: reference: %s", kind, rr.err);
            mb_release(want);
            t_run_free(&rr);
        }
        t_run_free(&r0);
        t_run_free(&r1);
        for (int i = 0; i < 8; i++) mb_release(ins[i]);
    }
    br_set_threads(0);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    T_CHECK(system(cmd) == 0, "rm %s", dir);
}

/* The dense kernel's parameters of each call of src, from its trace:
 * kc, nc, pack and where they came from ("searched", "defaults",
 * "remembered", "remembered on disk"); the calls' count. */
static int traced_params(const char *src, CgOptions *cg, long long kc[4], long long nc[4], char from[4][24])
{
    TRun r;
    FILE *f = amulet_traced(src, cg, NULL, NULL, 0, &r);
    T_CHECK(r.rc == 0, "traced params: %s", r.err);
    t_run_free(&r);
    int n = 0, pk;
    char line[400];
    while (f && fgets(line, sizeof line, f)) {
        char *q = strstr(line, "kernel, kc ");
        if (q && n < 4 && sscanf(q, "kernel, kc %lld nc %lld pack %d (%23[^)])", &kc[n], &nc[n], &pk, from[n]) == 4) n++;
    }
    if (f) fclose(f);
    return n;
}

/* Remembered parameters kept per shape class (amulet_gen.c shape_class):
 * a kernel searched at 120 x 1100 x 100 (1 thread) is not run with that
 * choice by a 30 x 25 x 20 call of the same body (its defaults: before
 * 2026-12-02 the big call's "remembered on disk" kc and nc), while a
 * call of the same class (127 x 1200 x 110) and the same shape again
 * start from the remembered best, in a new run (on disk) and in the
 * same run after the small call (in memory). */
static void params_by_shape(void)
{
    static const int64_t sh[][3] = {{120, 1100, 100}, {30, 25, 20}, {127, 1200, 110}, {120, 1100, 100}};
    CgOptions cg = t_pols[2].o;
    br_set_threads(1);
    setenv("BRAID_AMULET", "kernel", 1);   /* the small call too (else the evaluator) */
    for (int mem = 0; mem < 2; mem++) {
        char dir[] = "/tmp/braid-test-amulet-XXXXXX";
        if (!mkdtemp(dir)) { T_CHECK(false, "mkdtemp"); return; }
        cg.cachedir = dir;
        long long kc[4][4], nc[4][4];
        char from[4][4][24];
        int got[4] = {0};
        StrBuf all = {0};
        for (int c = 0; c < 4; c++) {
            char src[600];
            snprintf(src, sizeof src,
                     "A = rand(rows=%lld, cols=%lld, min=-1, max=1, seed=%d)\n"
                     "B = rand(rows=%lld, cols=%lld, min=-1, max=1, seed=%d)\n"
                     "R = matrix(0, rows=nrow(A), cols=ncol(B))\n"
                     "where (i in 1:nrow(A), j in 1:ncol(B), k in 1:ncol(A)) { R[i,j] += (A[i,k]*B[k,j] > 0.25) }\n"
                     "s%d = sum(R)\nif (s%d < 0) stop(\"negative count\")\n",
                     (long long)sh[c][0], (long long)sh[c][2], 5 + c, (long long)sh[c][2], (long long)sh[c][1], 9 + c, c, c);
            if (mem) sb_puts(&all, src);
            else got[c] = traced_params(src, &cg, kc[c], nc[c], from[c]);
        }
        if (mem) {   /* the four calls in one run */
            long long k4[4], n4[4];
            char f4[4][24];
            int n = traced_params(all.s, &cg, k4, n4, f4);
            for (int c = 0; c < 4; c++) {
                got[c] = c < n;
                kc[c][0] = k4[c], nc[c][0] = n4[c];
                memcpy(from[c][0], f4[c], sizeof f4[c]);
            }
            free(all.s);
        }
        const char *want[] = {"searched", "defaults", mem ? "remembered" : "remembered on disk",
                              mem ? "remembered" : "remembered on disk"};
        for (int c = 0; c < 4; c++) {
            T_CHECK(got[c] == 1, "params by shape %d, call %d: %d traced calls", mem, c, got[c]);
            if (got[c] != 1) continue;
            T_CHECK(!strcmp(from[c][0], want[c]), "params by shape %d, %lldx%lldx%lld: kc %lld nc %lld (%s), want %s", mem,
                    (long long)sh[c][0], (long long)sh[c][1], (long long)sh[c][2], kc[c][0], nc[c][0], from[c][0],
                    want[c]);
            if (c >= 2 && got[0] == 1)
                T_CHECK(kc[c][0] == kc[0][0] && nc[c][0] == nc[0][0], "params by shape %d, call %d: kc %lld nc %lld, "
                        "searched kc %lld nc %lld", mem, c, kc[c][0], nc[c][0], kc[0][0], nc[0][0]);
        }
        char cmd[200];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        T_CHECK(system(cmd) == 0, "rm %s", dir);
    }
    unsetenv("BRAID_AMULET");
    br_set_threads(0);
}

/* The template's price of a sparse X read transposed (t(X) %*% G: the
 * loop makes the CSR of t(X), amulet.c sp_kept) is the price of the
 * same product over an X of t(X)'s shape read in place plus the
 * transpose as cost.c prices one (X's non-zeros at the elementwise
 * rate); densities 0.001-0.04, widths 1-23, under pinned constants, with
 * memory for free: the per-call finiteness checks, which differ for the
 * two reads (coverage of an untransposed X takes a pass over its
 * cells), are priced by the memory rate (check_price). */
static bool tpl_fused(const void *arg, const Hop *h, bool root, int i)
{
    return h->in[i] && h->in[i]->kind == H_BINARY;
}
static Hop *tpl_read(HopDag *d, const char *name, int64_t rows, int64_t cols, int64_t nnz)
{
    Hop *h = hop_new(d, H_TREAD, (Span){0}, 0);
    if (!h) return NULL;
    h->name = name;
    h->dt = DT_MATRIX;
    h->vt = VT_DOUBLE;
    h->rows = rows;
    h->cols = cols;
    h->nnz = nnz;
    return h;
}
static void sparse_tr_price(void)
{
    CgMachine mc = {.read_bw = 1e30, .write_bw = 1e30, .flops = 2e9, .gemm = 5e10, .vecmat = 1e10, .am_share = 0.8};
    static const double dens[] = {0.001, 0.01, 0.04};
    static const int64_t widths[] = {1, 4, 23};
    for (size_t di = 0; di < sizeof dens / sizeof *dens; di++)
        for (size_t wi = 0; wi < sizeof widths / sizeof *widths; wi++) {
            int64_t K = 20000, M = 400, N = widths[wi], nnz = (int64_t)(dens[di] * (double)(K * M));
            HopDag *d = hop_dag_new();
            Hop *x = tpl_read(d, "X", K, M, nnz), *xt = tpl_read(d, "Xt", M, K, nnz), *g = tpl_read(d, "G", K, N, -1);
            Hop *s = g ? hop_binary(d, OP_MULT, g, hop_lit(d, val_double(0.5), (Span){0}), (Span){0}) : NULL;
            Hop *t = x ? hop_reorg(d, OP_TRANS, x, (Span){0}) : NULL;
            Hop *a = t && s ? hop_matmul(d, OP_MATMUL, t, s, (Span){0}) : NULL;
            Hop *b = xt && s ? hop_matmul(d, OP_MATMUL, xt, s, (Span){0}) : NULL;
            if (t) t->nnz = nnz;
            double pa = a ? am_tpl_compute(a, tpl_fused, NULL, &mc) : -1;
            double pb = b ? am_tpl_compute(b, tpl_fused, NULL, &mc) : -1;
            double want = (double)nnz / mc.flops;
            T_CHECK(pa > 0 && pb > 0 && isfinite(pa) && fabs(pa - pb - want) <= 1e-9 * pa,
                    "price of t(X) %%*%% G, density %g, %lld columns: %g s, X read in place %g s, want %g s more",
                    dens[di], (long long)N, pa, pb, want);
            hop_dag_free(d);
        }
}

/* The AMULET template of the cost-based fusion planner (amulet_tpl.c):
 * products of elementwise operands (masks, vectors, scalars, ifelse,
 * min/max, transposed reads, t(.) %*% .) forced into where-loops give
 * the plan without them (BLAS and Cell/Row operators) over swept shapes
 * and densities; products the template must leave alone (an operator
 * the kernel lacks, a shared operand, too little work, a sparse
 * operand) are left alone; and the cost decision follows the machine
 * constants (pinned: a slow memory makes materializing the operands
 * dear, a fast one makes recomputing them per tile dear). */
static void planner(void)
{
    static const struct { const char *expr; bool cand; } forms[] = {
        {"((A > 0.5) * A * u) %*% B", true},
        {"(A * c + s) %*% abs(B - v)", true},
        {"ifelse(A > 0, A, 0.1 * A) %*% (B * w)", true},
        {"t(At * 2) %*% B", true},
        {"(min(A, 0.3) - max(u, 0.1)) %*% t(Bt)", true},
        {"sqrt(abs(A)) %*% (B > 0)", true},
        {"(-A) %*% (!(B > 0.2))", true},
        {"(A ^ 2) %*% (B / 3)", true},
        {"t(At) %*% (B * (B > 0))", true},
        {"exp(A) %*% B", false},
        /* A * 2 shared: MPSkipEnum weighs fusing it redundantly (free
         * when forced) against materializing it */
        {"(A * 2) %*% B + sum(A * 2)", true},
    };
    static const int64_t sizes[][3] = {{70, 66, 80}, {131, 37, 65}, {64, 64, 64}, {200, 17, 90}, {20, 20, 20}};
    static const double dens[] = {1, 0.5, 0.2};   /* 0.2: sparse, not kept sparse by a loop */
    const char *names[] = {"A", "B", "At", "Bt", "u", "c", "v", "w"}, *on[] = {"R"};
    char src[400];
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
        for (size_t di = 0; di < sizeof dens / sizeof *dens; di++) {
            int64_t M = sizes[si][0], N = sizes[si][1], K = sizes[si][2];
            t_seed((uint64_t)(M * 31 + N + 7 * di));
            bool sp = dens[di] < 0.4;
            MB *ins[8];
            gen_ab(M, N, K, dens[di], dens[di], ins);
            ins[4] = t_gen(1, K, 1, -1, 1, false);
            ins[5] = t_gen(M, 1, 1, -1, 1, false);
            ins[6] = t_gen(1, N, 1, -1, 1, false);
            ins[7] = t_gen(K, 1, 1, -1, 1, false);
            /* two summation orders of K terms of magnitude <= 16 */
            double tol = 2 * (double)K * (double)K * 16 * 2.3e-16;
            for (size_t f = 0; f < sizeof forms / sizeof *forms; f++) {
                snprintf(src, sizeof src, "s = 0.25\nR = %s\n", forms[f].expr);
                TRun r0, r1;
                if (run_two(src, "BRAID_AMULET_FUSE", "force", "0", 8, names, ins, 1, on, &r0, &r1)) {
                    T_MB_EQ(r0.out[0].m, r1.out[0].m, tol, "planner form %zu, %lldx%lldx%lld, density %g", f,
                            (long long)M, (long long)N, (long long)K, dens[di]);
                    bool want = forms[f].cand && !sp && M * N * K >= 64 * 64 * 64;
                    T_CHECK((r0.st.amulet > 0) == want && r1.st.amulet == 0,
                            "planner form %zu, %lldx%lldx%lld, density %g: %lld AMULET loops, want %d", f,
                            (long long)M, (long long)N, (long long)K, dens[di], (long long)r0.st.amulet, want);
                }
                t_run_free(&r0);
                t_run_free(&r1);
            }
            for (int i = 0; i < 8; i++) mb_release(ins[i]);
        }
    unsetenv("BRAID_AMULET_FUSE");
    /* the cost decision under pinned machine constants */
    t_seed(5);
    MB *A = t_gen(70, 80, 1, -1, 1, false), *B = t_gen(80, 66, 1, -1, 1, false), *u = t_gen(1, 80, 1, -1, 1, false);
    MB *ins[] = {A, B, u};
    const char *n2[] = {"A", "B", "u"};
    /* 1: the product alone; 2: its left operand also read by another
     * operator (fused into both, or materialized: MPSkipEnum's choice) */
    const char *src2 = "R = ((A > 0.5) * A * u) %*% (B * (B > 0))\n";
    const char *src3 = "P = (A > 0.5) * A * u\nR = P %*% (B * (B > 0)) + sum(P * 3)\n";
    static const struct { const char *mc; int want; } mcs[] = {
        {"1e8 1e8 1e10 1.15e11 4.6e10", 1},        /* memory 1000x slower than dgemm */
        {"1e13 1e13 1e13 1.15e11 4.6e10", 0},      /* memory for free */
        {"1e8 1e8 1e10 1.15e11 4.6e10 1", 1},      /* the kernel at dgemm's rate */
        {"1e8 1e8 1e10 1.15e11 4.6e10 1e-4", 0},   /* the kernel 10^4 times slower */
    };
    char *keep = env_keep("BRAID_CG_MACHINE");
    for (int s = 0; s < 2; s++)
        for (int m = 0; m < 4; m++) {
            setenv("BRAID_CG_MACHINE", mcs[m].mc, 1);
            TRun r;
            CgOptions o = t_pols[2].o; o.explain = getenv("T_EXPLAIN") ? stderr : NULL;
            t_run_dml(s ? src3 : src2, &o, 3, n2, ins, 1, on, &r);
            T_CHECK(r.rc == 0 && (r.st.amulet > 0) == mcs[m].want && r.st.evaluated > 0,
                    "planner cost decision %d/%d: %s, %lld AMULET loops, %lld plans costed", s, m, r.err,
                    (long long)r.st.amulet, (long long)r.st.evaluated);
            t_run_free(&r);
        }
    env_restore("BRAID_CG_MACHINE", keep);
    mb_release(A); mb_release(B); mb_release(u);
}

/* loop_vops_of: fail am_kernel_vops' nth allocation (> 0; none: 0). */
static long vops_fail;

/* am_kernel_vops out of memory (its working plan through br_calloc):
 * AM_VOPS_OOM when its first or second allocation fails, not -1 ("no
 * kernel"; before 2026-12-02 its plain calloc was out of the
 * injection's reach and the price came back as if nothing failed), the
 * price itself once nothing fails. */
static void vops_oom(void)
{
    const char *src = "R = matrix(0, rows=nrow(A), cols=ncol(B))\n"
                      "where (i in 1:nrow(A), j in 1:ncol(B), k in 1:ncol(A)) { R[i,j] += (A[i,k]*B[k,j] > 0.25) }\n";
    double ok = loop_vops_of(src, NULL, false, 0, NULL);
    T_CHECK(ok > 0, "vops oom: the price %g", ok);
    for (vops_fail = 1; vops_fail <= 2; vops_fail++) {
        double v = loop_vops_of(src, NULL, false, 0, NULL);
        T_CHECK(v == AM_VOPS_OOM, "vops oom: allocation %ld failed, price %g, want AM_VOPS_OOM", vops_fail, v);
    }
    vops_fail = 0;
    T_CHECK(loop_vops_of(src, NULL, false, 0, NULL) == ok, "vops oom: the price after the failures");
}

/* am_kernel_vops of the where-loop in the main script of src (inputs
 * A, B, thj, dis predefined) at the current SIMD level, priced by ports
 * (NULL: the operation count); -2 when src has no where-loop. */
static double loop_vops(const char *src, const double *ports)
{
    return loop_vops_of(src, ports, false, 0, NULL);
}

/* The same, of the sparse kernel when `sparse`, its tile for R's ncols
 * columns in tile (may be NULL). */
static double loop_vops_of(const char *src, const double *ports, bool sparse, int64_t ncols, int tile[2])
{
    const char *names[] = {"A", "B", "thj", "dis"};
    Diag *d = diag_new();
    LangOptions lo = {.predefined = names, .npredefined = 4};
    Program *p = lang_load_string(src, "<t>", &lo, d);
    const Block *b = p ? lang_main(p) : NULL;
    double v = -2;
    for (int i = 0; b && i < b->n && v == -2; i++) {
        const Stmt *s = b->stmts[i];
        const Expr *w = s->kind == ST_ASSIGN ? s->assign.value : s->kind == ST_MASSIGN ? s->massign.call : NULL;
        if (!w || w->kind != EX_WHERE) continue;
        AmPlan *pl = malloc(sizeof *pl);
        int lanes = 0, pack = 0;
        if (pl) {
            am_plan(w->where, AM_ALL, pl);
            if (vops_fail > 0) br_alloc_fail_arm(vops_fail);
            v = am_kernel_vops(pl, sparse, ncols, ports, &lanes, &pack, tile);
            if (vops_fail > 0) br_alloc_fail_arm(-1);
        }
        free(pl);
    }
    lang_program_free(p);
    diag_free(d);
    return v;
}

/* The kernel's price (am_kernel_vops): the operations gen_fn emits per
 * iteration, a fused += of a product another node reads counted with
 * both its product and its fmadd (three results: mul, fmadd, compare,
 * masked add on AVX-512, 4 per vector; the count said 3), and the port
 * model (ports {adds, mixed}): {1, 1} is the count, Q1's inner mix 2/1/2
 * on separate pipes ({1, 2}) costs max(2, 3, 5 / 2) = 3 slots per vector
 * against 5. Then the planner's choice follows the price: under pinned
 * machine constants that fuse both operands into the loop (5
 * operators), adds priced 10^5 times slower than multiplies
 * (BRAID_AMULET_PORTS) leave B * (B > 0.1), which the kernel computes per
 * (k, j) vector, to a Cell operator (3 operators fused), with the same
 * result. */
static void kernel_price(void)
{
    const char *three = "R = matrix(0, rows=nrow(A), cols=ncol(B)); C = R\n"
                        "where (i in 1:nrow(A), j in 1:ncol(B), k in 1:ncol(A)) {\n"
                        "  R[i,j] += A[i,k]*B[k,j]; C[i,j] += (A[i,k]*B[k,j] > 0.25) }\n";
    const char *q1 = "R = matrix(0, rows=nrow(A), cols=ncol(B))\n"
                     "where (i in 1:nrow(A), j in 1:ncol(B), k in 1:ncol(A)) {\n"
                     "  R[i,j] += A[i,k]*B[k,j] - (A[i,k]*B[k,j] > thj[j]) * A[i,k]*B[k,j]*dis[j] }\n";
    const double one[2] = {1, 1}, sep[2] = {1, 2}, slow[2] = {0.5, 1};
    KIsa isa0 = k_isa();
    for (int isa = K_ISA_GENERIC; isa <= (int)k_isa_cpu(); isa++) {
        k_isa_set((KIsa)isa);
        const char *in = k_isa_name((KIsa)isa);
        double w = isa == K_ISA_AVX512 ? 8 : isa == K_ISA_AVX2 ? 4 : 1;
        double t0 = loop_vops(three, NULL), t1 = loop_vops(three, one), q0 = loop_vops(q1, NULL);
        double qs = loop_vops(q1, sep), qw = loop_vops(q1, slow);
        /* AVX-512: mul, fmadd, cmp, masked add; AVX2: mul, fmadd, cmp,
         * and (mask to number), add; generic: mul, cmp, mask to number,
         * add, add (no fused accumulation) */
        double want3 = isa == K_ISA_AVX512 ? 4 / w : 5 / w;
        T_CHECK(fabs(t0 - want3) < 1e-12, "kernel price (%s): three results %.4f ops per iteration, want %.4f", in,
                t0, want3);
        T_CHECK(t1 == t0 && loop_vops(q1, one) == q0, "kernel price (%s): ports {1, 1} %.4f %.4f, the count %.4f %.4f",
                in, t1, loop_vops(q1, one), t0, q0);
        T_CHECK(qs < q0 && qw > q0, "kernel price (%s): Q1 %.4f slots on separate pipes, %.4f with slow adds, count %.4f",
                in, qs, qw, q0);
        if (isa == K_ISA_AVX512)
            T_CHECK(fabs(q0 - 5 / w) < 1e-12 && fabs(qs - 3 / w) < 1e-12,
                    "kernel price (avx512): Q1 %.4f (want 5/8), %.4f on separate pipes (want 3/8)", q0, qs);
    }
    k_isa_set(isa0);
    /* the planner's choice */
    t_seed(5);
    MB *A = t_gen(70, 80, 1, -1, 1, false), *B = t_gen(80, 66, 1, -1, 1, false), *u = t_gen(1, 80, 1, -1, 1, false);
    MB *ins[] = {A, B, u};
    const char *n2[] = {"A", "B", "u"}, *on[] = {"R"};
    char *keep = env_keep("BRAID_CG_MACHINE");
    setenv("BRAID_CG_MACHINE", "1e8 1e8 1e10 1.15e11 4.6e10 1", 1);
    static const struct { const char *ports; int want; } pc[] = {{"1 1", 5}, {"1 2", 5}, {"1e-5 1", 3}};
    MB *first = NULL;
    for (size_t i = 0; i < sizeof pc / sizeof *pc; i++) {
        setenv("BRAID_AMULET_PORTS", pc[i].ports, 1);
        TRun r;
        CgOptions o = t_pols[2].o;
        o.explain = tmpfile();
        t_run_dml("R = ((A > 0.5) * A * u) %*% (B * (B > 0.1))\n", &o, 3, n2, ins, 1, on, &r);
        /* the operators the chosen loop covers (the explain line) */
        int nops = -1;
        char line[600];
        if (o.explain) rewind(o.explain);
        while (o.explain && fgets(line, sizeof line, o.explain)) {
            const char *q = strstr(line, "AMULET where-loop at hop");
            if (q && sscanf(q, "AMULET where-loop at hop %*d (%*d x %*d x %*d, %d operators", &nops) != 1) nops = -1;
        }
        if (o.explain) fclose(o.explain);
        T_CHECK(r.rc == 0 && r.st.amulet == 1 && nops == pc[i].want,
                "kernel price: ports %s: %s, %lld AMULET loops of %d operators, want one of %d", pc[i].ports, r.err,
                (long long)r.st.amulet, nops, pc[i].want);
        if (r.rc == 0 && !first) first = mb_retain(r.out[0].m);
        else if (r.rc == 0) T_MB_EQ(r.out[0].m, first, 1e-12, "kernel price: ports %s, the result", pc[i].ports);
        t_run_free(&r);
    }
    mb_release(first);
    unsetenv("BRAID_AMULET_PORTS");
    env_restore("BRAID_CG_MACHINE", keep);
    mb_release(A); mb_release(B); mb_release(u);
}

/* k-means' iteration (scripts/builtin/kmeans.dml) under the cost-based
 * planner: t(P) %*% X has an AMULET candidate, ranked first, and with it
 * in place the cheapest assignment materializes D and P (two NO_AGG Row
 * operators and four basic ones), which holds no AMULET loop for the
 * greedy pass to ban. The enumeration with AMULET banned (mpskip.c
 * without_amulet) finds the one-pass multi-output Row operator, cheaper
 * under every machine's constants here: one Row operator, no AMULET
 * loop, the results of the unfused plan. Over X of 10, 100 and 300
 * columns: the merged operator's t(P) %*% X is a blocked rank update
 * (cg_bouter) priced at dgemm's rate whatever X's width (cost.c
 * row_products); priced as the row-wise loop beyond 16 columns, the
 * split plan won under machines whose dgemm rate is well above the
 * row-wise one (the last two here: e2e KMeans dense 2.7x slower). */
static void kmeans_plan(void)
{
    const char *src = T_KMEANS_STEP;
    static const char *mcs[] = {
        "2.76e10 1.91e10 2.67e9 8.07e10 5.29e10",   /* 2-core AVX-512 VM, quiet */
        "2.3e10 1.25e10 1.0e10 1.15e11 4.6e10",     /* t_pin_machine's */
        "5.85e10 4.45e10 1.16e10 1.24e11 6.57e10",  /* a workstation */
        "4.07684e10 3.07256e10 5.60535e9 6.16694e10 3.40088e10",   /* the helpers' pinned set */
        "6.14429e10 5.19068e10 8.61712e9 8.23838e10 5.34061e10",   /* 2-core VM's prebuilt set, quiet */
    };
    static const int64_t widths[] = {10, 100, 300};
    const char *names[] = {"X", "C"}, *on[] = {"w", "cnt", "S"};
    char *keep = env_keep("BRAID_CG_MACHINE");
    for (size_t q = 0; q < sizeof widths / sizeof *widths; q++) {
        int64_t nc = widths[q];
        t_seed(11);
        MB *X = t_gen(6000, nc, 1, -1, 1, false), *C = t_gen(5, nc, 1, -1, 1, false);
        MB *ins[] = {X, C};
        CgOptions off = {.enabled = false};
        TRun r0;
        t_run_dml(src, &off, 2, names, ins, 3, on, &r0);
        for (size_t m = 0; m < sizeof mcs / sizeof *mcs; m++) {
            setenv("BRAID_CG_MACHINE", mcs[m], 1);
            TRun r;
            CgOptions o = t_pols[2].o;
            o.explain = getenv("T_EXPLAIN") ? stderr : NULL;
            t_run_dml(src, &o, 2, names, ins, 3, on, &r);
            T_CHECK(r.rc == 0 && r0.rc == 0 && r.st.fused[1] == 1 && r.st.amulet == 0,
                    "kmeans plan, %lld columns, machine %zu: %s %s, %lld Row operators, %lld AMULET loops (want one "
                    "multi-output Row)", (long long)nc, m, r.err, r0.err, (long long)r.st.fused[1],
                    (long long)r.st.amulet);
            if (r.rc == 0 && r0.rc == 0) {
                double w = val_as_double(&r.out[0]), w0 = val_as_double(&r0.out[0]);
                T_CHECK(fabs(w - w0) <= 1e-9 * fabs(w0), "kmeans plan, %lld columns, machine %zu: wcss %.17g vs %.17g",
                        (long long)nc, m, w, w0);
                for (int k = 1; k < 3; k++)
                    T_MB_EQ(r.out[k].m, r0.out[k].m, 1e-10, "kmeans plan, %lld columns, machine %zu, output %d",
                            (long long)nc, m, k);
            }
            t_run_free(&r);
        }
        t_run_free(&r0);
        mb_release(X); mb_release(C);
    }
    env_restore("BRAID_CG_MACHINE", keep);
}

/* Products with a sparse left operand (seed 4.2's sparse A): the
 * template's loop steps over the non-zeros of the sparse leaf when its
 * zeros make the body zero, weighed against Cell + the sparse product.
 * Forced (every candidate free): a loop exactly for the forms and
 * densities it can keep sparse (below AM_SPARSE), the same results as
 * the unfused plan and as the loop's scalar reference, over a sparsity
 * sweep; under pinned machine constants the cost decides (slow memory:
 * the loop, which writes no operand; free memory: Cell + sparse product,
 * which repeats no operand work per column panel); a 10^5 x 10^5 operand
 * with 10^4 non-zeros (80 GB dense) runs as the loop without densifying. */
static void sparse_planner(void)
{
    static const struct { const char *expr; bool cand; } forms[] = {
        {"((S > 0.2) * S * u) %*% B", true},
        {"(S * c) %*% (B * w)", true},
        {"abs(S) %*% B", true},
        {"S %*% (B * (B > 0))", true},
        {"t(St * 2) %*% B", true},
        {"(S + 1) %*% B", false},
        {"(S > -0.5) %*% B", false},
    };
    static const double dens[] = {0.001, 0.01, 0.04, 0.2};
    static const int64_t sizes[][3] = {{300, 40, 250}, {129, 70, 301}};
    const char *names[] = {"S", "B", "St", "u", "c", "w"}, *on[] = {"R"};
    char src[300];
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
        for (size_t di = 0; di < sizeof dens / sizeof *dens; di++) {
            int64_t M = sizes[si][0], N = sizes[si][1], K = sizes[si][2];
            t_seed((uint64_t)(M + 13 * di));
            BrErr e = {0};
            MB *ins[6] = {t_gen(M, K, dens[di], -1, 1, true), t_gen(K, N, 1, -1, 1, false), NULL,
                          t_gen(1, K, 1, -1, 1, false), t_gen(M, 1, 1, -1, 1, false), t_gen(1, N, 1, -1, 1, false)};
            ins[2] = k_transpose(ins[0], &e);
            /* two summation orders of K terms of magnitude <= 2 */
            double tol = 2 * (double)K * (double)K * 2 * 2.3e-16;
            bool kept = (double)ins[0]->nnz < AM_SPARSE * (double)(M * K);
            size_t nf = sizeof forms / sizeof *forms;
            for (size_t f = 0; f < nf; f++) {
                /* under the sanitizers every third (size, density, form):
                 * each form at 2-3 of the 8 pairs, kept and not */
                if (!t_keep((long)((si * (sizeof dens / sizeof *dens) + di) * nf + f), 3)) continue;
                snprintf(src, sizeof src, "R = %s\n", forms[f].expr);
                TRun r0, r1, r2;
                if (run_two(src, "BRAID_AMULET_FUSE", "force", "0", 6, names, ins, 1, on, &r0, &r1)) {
                    T_MB_EQ(r0.out[0].m, r1.out[0].m, tol, "sparse planner form %zu, %lldx%lldx%lld, density %g", f,
                            (long long)M, (long long)N, (long long)K, dens[di]);
                    bool want = forms[f].cand && kept;
                    T_CHECK((r0.st.amulet > 0) == want, "sparse planner form %zu, density %g: %lld loops, want %d",
                            f, dens[di], (long long)r0.st.amulet, want);
                }
                /* the placed loop through the scalar reference */
                setenv("BRAID_AMULET_FUSE", "force", 1);
                setenv("BRAID_AMULET", "ref", 1);
                t_run_dml(src, &t_pols[2].o, 6, names, ins, 1, on, &r2);
                unsetenv("BRAID_AMULET");
                unsetenv("BRAID_AMULET_FUSE");
                T_CHECK(r2.rc == 0 && r1.rc == 0, "sparse planner form %zu (reference): %s", f, r2.err);
                if (r2.rc == 0 && r1.rc == 0)
                    T_MB_EQ(r2.out[0].m, r1.out[0].m, tol, "sparse planner form %zu against the reference, density %g",
                            f, dens[di]);
                t_run_free(&r0);
                t_run_free(&r1);
                t_run_free(&r2);
            }
            for (int i = 0; i < 6; i++) mb_release(ins[i]);
        }
    /* the cost decision under pinned machine constants */
    static const struct { const char *mc; int want; } mcs[] = {
        {"1e8 1e8 1e10 1.15e11 4.6e10", 1},        /* memory 100x slower than the elementwise rate */
        {"1e13 1e13 1e10 1.15e11 4.6e10", 0},      /* memory for free */
    };
    char *keep = env_keep("BRAID_CG_MACHINE");
    t_seed(9);
    MB *ins[] = {t_gen(2000, 1500, 0.01, -1, 1, true), t_gen(1500, 24, 1, -1, 1, false), NULL,
                 t_gen(1, 1500, 1, -1, 1, false)};
    for (int m = 0; m < 2; m++) {
        setenv("BRAID_CG_MACHINE", mcs[m].mc, 1);
        TRun r;
        t_run_dml("R = ((S > 0.2) * S * u) %*% B\n", &t_pols[2].o, 4, names, ins, 1, on, &r);
        T_CHECK(r.rc == 0 && (r.st.amulet > 0) == mcs[m].want, "sparse planner cost decision %d: %s, %lld loops", m,
                r.err, (long long)r.st.amulet);
        t_run_free(&r);
    }
    env_restore("BRAID_CG_MACHINE", keep);
    for (int i = 0; i < 4; i++) mb_release(ins[i]);
    /* never densified: 10^5 x 10^5 with 10^4 non-zeros */
    setenv("BRAID_AMULET_FUSE", "force", 1);
    const char *on2[] = {"D", "n"};
    TRun r;
    t_run_dml("S = rand(rows=100000, cols=100000, sparsity=1e-6, seed=21)\n"
              "B = rand(rows=100000, cols=6, min=-1, max=1, seed=22)\n"
              "D = max(abs((S * 3) %*% B - 3 * (S %*% B)))\nn = sum(S != 0)\n",
              &t_pols[2].o, 0, NULL, NULL, 2, on2, &r);
    unsetenv("BRAID_AMULET_FUSE");
    T_CHECK(r.rc == 0 && r.st.amulet > 0 && val_as_double(&r.out[0]) <= 1e-12, "a 10^5 x 10^5 sparse operand: %s",
            r.err);
    t_run_free(&r);
}

/* am_check_cells of the plan of `R[i,j] += body` over i in 1:M, j in
 * 1:N, k in 1:K (leaves X, G, Q, W predefined), its leaf kept sparse with
 * nnz non-zeros (< 0: none); *zleaf the plan's (i,k) leaf; NAN without
 * a plan. */
static double loop_check_cells(const char *body, int64_t M, int64_t N, int64_t K, double nnz, int *zleaf)
{
    char loop[400];
    snprintf(loop, sizeof loop, "R = matrix(0, %lld, %lld)\nwhere (i in 1:%lld, j in 1:%lld, k in 1:%lld) { R[i,j] += %s }\n",
             (long long)M, (long long)N, (long long)M, (long long)N, (long long)K, body);
    const char *pre[] = {"X", "G", "Q", "W"};
    Diag *dg = diag_new();
    LangOptions lo = {.predefined = pre, .npredefined = 4};
    Program *pg = lang_load_string(loop, "<t>", &lo, dg);
    const Block *bl = pg ? lang_main(pg) : NULL;
    const Stmt *st = bl && bl->n > 1 ? bl->stmts[1] : NULL;
    AmPlan *p = st && st->kind == ST_ASSIGN && st->assign.value->kind == EX_WHERE ? malloc(sizeof *p) : NULL;
    double got = NAN;
    if (p) {
        am_plan(st->assign.value->where, AM_ALL, p);
        int64_t ext[WHERE_MAXVARS] = {0};
        ext[p->tr] = M;
        ext[p->tc] = N;
        ext[p->kvar] = K;
        got = am_check_cells(p, ext, nnz);
        *zleaf = p->zleaf;
    }
    free(p);
    lang_program_free(pg);
    diag_free(dg);
    return got;
}

/* The price of the sparse loop's per-call finiteness checks
 * (amulet.c am_check_cells, amulet_tpl.c am_tpl_compute): X 20000 x 400
 * at density 0.001, read t(X), G 20000 x 20, under memory at 1e10 B/s.
 * `t(X) %*% (G * 0.5)` becomes X[k,i] * (G[k,j] * 0.5), whose computed
 * factor the call bounds over all of G (67% of its rows unread, so the
 * check after the loop reads more), and the mask form bounds every leaf:
 * both stay unfused (a loop without the checks' price). `t(X * 0.5) %*%
 * G` asks G's finiteness flag only: the loop. Each against the unfused
 * plan's values. Then the cells themselves: the flags 0, the bounds
 * every leaf's cells (X's non-zeros), and at density 0.04 the check
 * after the loop (R's cells twice, G's rows unread at 8 a cell). */

static void check_price(void)
{
    static const struct { const char *expr; int want; } forms[] = {
        {"t(X) %*% (G * 0.5)", 0}, {"t((X > 0.2) * X) %*% G", 0}, {"t(X * 0.5) %*% G", 1}};
    const char *names[] = {"X", "G"}, *on[] = {"R"};
    char *keep = env_keep("BRAID_CG_MACHINE");
    t_seed(17);
    MB *ins[] = {t_gen(20000, 400, 0.001, -1, 1, true), t_gen(20000, 20, 1, -1, 1, false)};
    char src[200];
    for (size_t f = 0; f < sizeof forms / sizeof *forms; f++) {
        /* under the sanitizers the first form only (the same plans) */
        if (!t_keep((long)f, 3)) continue;
        snprintf(src, sizeof src, "R = %s\n", forms[f].expr);
        setenv("BRAID_CG_MACHINE", "1e10 1e10 5.6e9 6.17e10 3.4e10", 1);
        unsetenv("BRAID_AMULET_FUSE");
        TRun r0, r1, r2;
        t_run_dml(src, &t_pols[2].o, 2, names, ins, 1, on, &r0);
        T_CHECK(r0.rc == 0 && (r0.st.amulet > 0) == forms[f].want, "check price: %s: %lld loops, want %d (%s)",
                forms[f].expr, (long long)r0.st.amulet, forms[f].want, r0.err);
        t_run_free(&r0);
        if (run_two(src, "BRAID_AMULET_FUSE", "force", "0", 2, names, ins, 1, on, &r1, &r2))
            T_MB_EQ(r1.out[0].m, r2.out[0].m, 1e-12, "check price: %s, the loop against the unfused plan",
                    forms[f].expr);
        t_run_free(&r1);
        t_run_free(&r2);
    }
    unsetenv("BRAID_AMULET_FUSE");
    env_restore("BRAID_CG_MACHINE", keep);
    for (int i = 0; i < 2; i++) mb_release(ins[i]);
    /* the cells of one call's checks, from the plans of the loops */
    static const struct { const char *body; int kind; } bodies[] = {
        {"X[k,i] * G[k,j] * 0.5", 0}, {"(X[k,i] > 0.2) * X[k,i] * G[k,j]", 1}, {"X[k,i] * (G[k,j] * 0.5)", 2}};
    for (size_t q = 0; q < sizeof bodies / sizeof *bodies; q++)
        for (int dd = 0; dd < 2; dd++) {
            double dens = dd ? 0.04 : 0.001, nnz = dens * 20000 * 400;
            int zleaf = -1;
            double got = loop_check_cells(bodies[q].body, 400, 20, 20000, nnz, &zleaf), bounds = nnz + 20000.0 * 20;
            double after = 2.0 * 400 * 20 + 8.0 * 20000 * 20 * pow(1 - dens, 400);
            double want = bodies[q].kind == 0 ? 0 : bodies[q].kind == 1 ? bounds : fmin(bounds, after);
            T_CHECK(zleaf >= 0 && fabs(got - want) <= 1e-9 * (want + 1), "check cells of %s at density %g: %g, want %g",
                    bodies[q].body, dens, got, want);
            if (bodies[q].kind == 2)
                T_CHECK(dd ? after < bounds : after > bounds, "check cells: %s at %g takes the %s", bodies[q].body, dens,
                        dd ? "check after the loop" : "bounds");
        }
}

/* The dense loop's per-call finiteness checks (amulet.c am_check_cells,
 * amulet_tpl.c am_tpl_compute). A masked body whose masks read a
 * computed value, `(Q * W > 0.25) * Q` in t(P) %*% X, bounds every leaf
 * before every call (Q, W and X read again): under pinned constants
 * with the loop at 4x dgemm's rate, 1 thread, Q and W 4000 x 100, X
 * 4000 x 100, the loop wins with memory at 1e10 B/s and loses at 1e9
 * (unpriced, it won at both). `(Q > 0.5) * Q` reads only leaves under
 * its masks: their finiteness flags make the masked forms exact
 * (flags_suffice), priced free: the loop at 1e9 too. Then the cells
 * themselves, and the calls: the flags' body runs the kernel without the
 * bounds (trace), a NaN in Q or an Inf in X (flags non-finite) takes the
 * bounds, which fail (the evaluator), `(Q > 0.5) * Q * Q * X` at 1e200
 * (products overflowing behind a mask) keeps the flags; each against
 * the scalar reference. */
static void dense_check_price(void)
{
    int nt0 = br_threads();
    br_set_threads(1);
    char *keep = env_keep("BRAID_CG_MACHINE");
    t_seed(23);
    MB *ins[] = {t_gen(4000, 100, 1, -1, 1, false), t_gen(4000, 100, 1, -1, 1, false),
                 t_gen(4000, 100, 1, -1, 1, false)};
    const char *names[] = {"Q", "W", "X"}, *on[] = {"S"};
    static const struct { const char *p; const char *bw; int want; } cs[] = {
        {"(Q * W > 0.25) * Q", "1e10", 1}, {"(Q * W > 0.25) * Q", "1e9", 0}, {"(Q > 0.5) * Q", "1e9", 1}};
    for (size_t c = 0; c < sizeof cs / sizeof *cs; c++) {
        char src[200], mc[200];
        snprintf(src, sizeof src, "P = %s\nS = t(P) %%*%% X\n", cs[c].p);
        snprintf(mc, sizeof mc, "%s 4.45e10 1.16e10 1.24e11 6.57e10 4", cs[c].bw);
        setenv("BRAID_CG_MACHINE", mc, 1);
        TRun r;
        t_run_dml(src, &t_pols[2].o, 3, names, ins, 1, on, &r);
        T_CHECK(r.rc == 0 && (r.st.amulet > 0) == cs[c].want,
                "dense check price: P = %s, memory at %s B/s: %lld loops, want %d (%s)", cs[c].p, cs[c].bw,
                (long long)r.st.amulet, cs[c].want, r.err);
        t_run_free(&r);
    }
    env_restore("BRAID_CG_MACHINE", keep);
    for (int i = 0; i < 3; i++) mb_release(ins[i]);
    /* the cells: Q, W (M x K) and X (K x N) for the bounds, none for the
     * flags */
    static const struct { const char *body; double want; } bodies[] = {
        {"(Q[k,i] * W[k,i] > 0.25) * Q[k,i] * X[k,j]", 2 * 100 * 4000 + 4000 * 30},
        {"(Q[k,i] > 0.5) * Q[k,i] * X[k,j]", 0},
        {"ifelse(Q[k,i] > 0.5, Q[k,i], -Q[k,i]) * (X[k,j] > 0) * X[k,j]", 0},
        {"min(Q[k,i], X[k,j])", 0},
        {"min(Q[k,i] * X[k,j], 1)", 100 * 4000 + 4000 * 30}};
    for (size_t q = 0; q < sizeof bodies / sizeof *bodies; q++) {
        int zleaf;
        double got = loop_check_cells(bodies[q].body, 100, 30, 4000, -1, &zleaf);
        T_CHECK(got == bodies[q].want, "dense check cells of %s: %g, want %g", bodies[q].body, got, bodies[q].want);
    }
    /* the calls */
    static const struct { const char *body; int bad; bool flags; } calls[] = {
        {"(Q[k,i] > 0.5) * Q[k,i] * X[k,j]", 0, true},  {"(Q[k,i] > 0.5) * Q[k,i] * X[k,j]", 1, false},
        {"(Q[k,i] > 0.5) * Q[k,i] * X[k,j]", 2, false}, {"(Q[k,i] * W[k,i] > 0.25) * Q[k,i] * X[k,j]", 0, false},
        {"(Q[k,i] > 0.5) * Q[k,i] * Q[k,i] * X[k,j]", 3, true}};
    setenv("BRAID_AMULET", "kernel", 1);
    for (size_t q = 0; q < sizeof calls / sizeof *calls; q++) {
        t_seed(29 + q);
        MB *in2[] = {t_gen(80, 70, 1, -1, 1, false), t_gen(80, 70, 1, -1, 1, false), t_gen(80, 66, 1, -1, 1, false)};
        if (calls[q].bad == 1) in2[0]->d[7 * 70 + 3] = NAN;
        if (calls[q].bad == 2) in2[2]->d[9 * 66 + 5] = INFINITY;
        if (calls[q].bad == 3) in2[0]->d[4 * 70 + 6] = 1e200, in2[0]->d[5 * 70 + 6] = -1e200;
        char src[300];
        snprintf(src, sizeof src, "R = matrix(0, 70, 66)\nwhere (i in 1:70, j in 1:66, k in 1:80) { R[i,j] += %s }\n",
                 calls[q].body);
        TRun r0, r1;
        int fl = trace_count(src, (CgOptions *)&t_pols[2].o, names, in2, 3, "finiteness by the leaves' flags", &r1);
        setenv("BRAID_AMULET", "ref", 1);
        t_run_dml(src, &t_pols[2].o, 3, names, in2, 1, (const char *[]){"R"}, &r0);
        setenv("BRAID_AMULET", "kernel", 1);
        T_CHECK(r0.rc == 0 && r1.rc == 0 && fl == calls[q].flags, "dense check: %s, bad %d: %s %s, %d calls by the flags",
                calls[q].body, calls[q].bad, r0.err, r1.err, fl);
        if (r0.rc == 0 && r1.rc == 0)
            T_MB_EQ(r1.out[0].m, r0.out[0].m, 1e-9, "dense check: %s, bad %d, against the reference", calls[q].body,
                    calls[q].bad);
        t_run_free(&r0);
        t_run_free(&r1);
        for (int i = 0; i < 3; i++) mb_release(in2[i]);
    }
    unsetenv("BRAID_AMULET");
    br_set_threads(nt0);
}

/* ---- several results in one loop nest ---- */

/* The results a multi-result where-loop may compute, each with its
 * accumulation and a scalar contribution of (a = A[i,k], b = B[k,j]). */
enum { MR_MM, MR_MIN, MR_CNT, MR_MAX, MR_IK, MR_SHARE, MR_N };
static const char *const mr_src[MR_N] = {
    "R0[i,j] += %A * %B",
    "R1[i,j] min= %A + %B",
    "R2[i,j] += (%A * %B > thj[j])",
    "R3[i,j] max= ifelse(%A * %B > thi[i], %A * %B, -abs(%A))",
    "R4[i,j] += %A * 2 * u[k]",
    "R5[i,j] += (%A * %B) * 3 - (%A * %B > 0.25) * %A * %B",
};
static double mr_init(int r) { return r == MR_MIN ? 1e300 : r == MR_MAX ? -1e300 : 0.5; }
static double mr_step(int r, double acc, double a, double b, double ti, double tj, double u)
{
    double p = a * b;
    switch (r) {
    case MR_MM: return acc + p;
    case MR_MIN: return fmin(acc, a + b);
    case MR_CNT: return acc + (p > tj);
    case MR_MAX: return fmax(acc, p > ti ? p : -fabs(a));
    case MR_IK: return acc + a * 2 * u;
    default: return acc + p * 3 - (p > 0.25) * p;
    }
}

/* The results of mask sel (bits of MR_*) in one where-loop through the
 * current BRAID_AMULET mode against a scalar loop written here; ta / tb:
 * A / B read transposed (At[k,i], Bt[j,k]). */
static void multi_check_d(unsigned sel, bool ta, bool tb, int64_t M, int64_t N, int64_t K, double da,
                          const char *what)
{
    t_seed((uint64_t)(M * 31 + N * 3 + K + sel));
    MB *A = t_gen(M, K, da, -1, 1, false), *B = t_gen(K, N, 1, -1, 1, false);
    /* below 1, A goes in as a sparse block (the sparse kernel and the
     * evaluator over its non-zeros where every body is zero with it) */
    MB *Ain = da < 1 ? mb_to_sparse(A, &(BrErr){0}) : mb_retain(A);
    MB *thi = t_gen(M, 1, 1, -0.5, 0.5, false), *thj = t_gen(1, N, 1, -0.5, 0.5, false);
    MB *u = t_gen(K, 1, 1, -1, 1, false);
    char body[1200] = "", src[1800];
    const char *onames[MR_N];
    int no = 0, idx[MR_N];
    for (int r = 0; r < MR_N; r++) {
        if (!(sel >> r & 1)) continue;
        /* the statement with %A / %B replaced by the operand reads */
        char st[300];
        size_t n = 0;
        for (const char *c = mr_src[r]; *c && n + 10 < sizeof st; c++) {
            if (c[0] == '%' && (c[1] == 'A' || c[1] == 'B')) {
                n += (size_t)snprintf(st + n, sizeof st - n, "%s",
                                      c[1] == 'A' ? (ta ? "At[k,i]" : "A[i,k]") : (tb ? "Bt[j,k]" : "B[k,j]"));
                c++;
            } else st[n++] = *c;
        }
        st[n] = 0;
        strcat(body, st);
        strcat(body, "\n  ");
        static const char *const nm[MR_N] = {"R0", "R1", "R2", "R3", "R4", "R5"};
        idx[no] = r;
        onames[no++] = nm[r];
    }
    snprintf(src, sizeof src,
             "At = t(A); Bt = t(B)\n"
             "R0 = matrix(0.5, nrow(A), ncol(B)); R1 = matrix(1e300, nrow(A), ncol(B)); R2 = R0; "
             "R3 = matrix(-1e300, nrow(A), ncol(B)); R4 = R0; R5 = R0\n"
             "where (i in 1:nrow(A), j in 1:ncol(B), k in 1:ncol(A)) {\n  %s}\n", body);
    const char *names[] = {"A", "B", "thi", "thj", "u"};
    MB *ins[] = {Ain, B, thi, thj, u};
    TRun r;
    t_run_dml(src, &t_pols[2].o, 5, names, ins, no, onames, &r);
    T_CHECK(r.rc == 0, "%s: several results %#x: %s", what, sel, r.err);
    for (int o = 0; o < no && r.rc == 0; o++) {
        T_CHECK(r.out[o].kind == V_MATRIX, "%s: result %s", what, onames[o]);
        if (r.out[o].kind != V_MATRIX) continue;
        MB *R = mb_to_dense(r.out[o].m, &(BrErr){0});
        /* sums of K terms of magnitude <= 4 in another order: within
         * 2 K^2 * 4 ulps, far below 1e-9 relative for K < 100 */
        double worst = 0;
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double x = mr_init(idx[o]);
                for (int64_t k = 0; k < K; k++)
                    x = mr_step(idx[o], x, A->d[i * K + k], B->d[k * N + j], thi->d[i], thj->d[j], u->d[k]);
                worst = fmax(worst, fabs(x - R->d[i * N + j]) / (1 + fabs(x)));
            }
        T_CHECK(worst < 1e-9, "%s: result %s of %#x (%lldx%lldx%lld, ta %d tb %d): error %g", what, onames[o], sel,
                (long long)M, (long long)N, (long long)K, ta, tb, worst);
        mb_release(R);
    }
    t_run_free(&r);
    mb_release(A); mb_release(Ain); mb_release(B); mb_release(thi); mb_release(thj); mb_release(u);
}

static void multi_check(unsigned sel, bool ta, bool tb, int64_t M, int64_t N, int64_t K, const char *what)
{
    multi_check_d(sel, ta, tb, M, N, K, 1, what);
}

/* Results indexed differently (R[i,j], V[i], T[j,i]): a loop nest each,
 * the same values as separate loops; and the errors of several results
 * (one target twice, a body reading another result). */
static void multi_other(void)
{
    MB *A = t_gen(23, 31, 1, -1, 1, false), *B = t_gen(31, 17, 1, -1, 1, false);
    const char *names[] = {"A", "B"}, *on[] = {"R", "V", "T", "D"};
    MB *ins[] = {A, B};
    TRun r;
    t_run_dml("R = matrix(0, 23, 17); V = matrix(0, 23, 1); T = matrix(0, 17, 23)\n"
              "where (i in 1:23, j in 1:17, k in 1:31) { R[i,j] += A[i,k] * B[k,j]; V[i] max= A[i,k] - B[k,j]\n"
              "  T[j,i] += abs(A[i,k] * B[k,j]) }\n"
              "D = max(abs(R - A %*% B)) + max(abs(V - rowMaxs(outer(A[,1], B[1,], \"-\")) * 0 - V)) + "
              "max(abs(T - t(abs(A) %*% abs(B))))\n",
              &t_pols[2].o, 2, names, ins, 4, on, &r);
    T_CHECK(r.rc == 0 && val_as_double(&r.out[3]) < 1e-12, "results indexed differently: %s %g", r.err,
            r.rc ? -1 : val_as_double(&r.out[3]));
    if (r.rc == 0) {
        double worst = 0;
        for (int i = 0; i < 23; i++) {
            double v = -INFINITY;
            for (int j = 0; j < 17; j++)
                for (int k = 0; k < 31; k++) v = fmax(v, A->d[i * 31 + k] - B->d[k * 17 + j]);
            worst = fmax(worst, fabs(v - mb_get(r.out[1].m, i, 0)));
        }
        T_CHECK(worst == 0, "V[i] max= over j and k: error %g", worst);
    }
    t_run_free(&r);
    mb_release(A); mb_release(B);
    /* results of different sizes (their own strides), the loop over a
     * corner of the larger one, through every path */
    static const char *modes[] = {"kernel", "eval", "ref"};
    const char *on2[] = {"D"};
    for (int m = 0; m < 3; m++) {
        setenv("BRAID_AMULET", modes[m], 1);
        t_run_dml("A = rand(rows=80, cols=70, seed=1, min=-1, max=1); B = rand(rows=70, cols=90, seed=2, min=-1, max=1)\n"
                  "R = matrix(0, 80, 90); S = matrix(0, 100, 120)\n"
                  "where (i in 1:80, j in 1:90, k in 1:70) { R[i,j] += A[i,k] * B[k,j]; S[i,j] += abs(A[i,k] * B[k,j]) }\n"
                  "D = max(abs(R - A %*% B)) + max(abs(S[1:80,1:90] - abs(A) %*% abs(B))) + sum(abs(S[81:100,])) + "
                  "sum(abs(S[,91:120]))\n",
                  &t_pols[2].o, 0, NULL, NULL, 1, on2, &r);
        /* sums of 70 products of magnitude <= 1 in two orders */
        T_CHECK(r.rc == 0 && val_as_double(&r.out[0]) < 1e-11, "results of different sizes (%s): %s %g", modes[m],
                r.err, r.rc ? -1 : val_as_double(&r.out[0]));
        t_run_free(&r);
    }
    unsetenv("BRAID_AMULET");
    static const ErrCase cases[] = {
        {"R = matrix(0, 3, 3); A = R\nwhere (i in 1:3, j in 1:3, k in 1:3) { R[i,j] += A[i,k]; R[i,j] min= A[k,j] }",
         "target of two statements", 2, 58},
        {"R = matrix(0, 3, 3); S = R; A = R\nwhere (i in 1:3, j in 1:3, k in 1:3) { R[i,j] += A[i,k]\n S[i,j] += R[i,k] }",
         "reads its result 'R'", 3, 12},
        {"R = matrix(0, 3, 3); S = R; A = R\nwhere (i in 1:3, j in 1:3, k in 1:3) { R[i,j] += A[i,k]; S[i,j] = A[i,k] }",
         "depend on the iteration order", 2, 58},
    };
    check_errors(cases, sizeof cases / sizeof *cases, "several results, error case");
}

/* Several results in one loop nest: subsets of MR_* (accumulation kinds
 * +=, min=, max=; masks, ifelse, an (i,k) result, a product shared by two
 * results and used inside a third), layouts, shapes (the kernel: one
 * nest with a tile per result), each path. */
static void multi(void)
{
    static const unsigned sels[] = {0x3f, 0x03, 0x0c, 0x31, 0x16, 0x29};
    static const int64_t sizes[][3] = {{37, 29, 41}, {13, 50, 7}, {70, 66, 80}};
    static const char *modes[] = {"kernel", "eval", "ref"};
    char what[80];
    for (int m = 0; m < 3; m++) {
        setenv("BRAID_AMULET", modes[m], 1);
        for (size_t s = 0; s < sizeof sels / sizeof *sels; s++)
            for (int lay = 0; lay < 4; lay++) {
                const int64_t *z = sizes[(s + (size_t)lay) % 3];
                snprintf(what, sizeof what, "%s", modes[m]);
                multi_check(sels[s], lay & 1, lay >> 1, z[0], z[1], z[2], what);
            }
    }
    /* a sparse A under results whose bodies are all zero with it (+=
     * only): its non-zeros, by the sparse kernel and the evaluator; with
     * a min= result among them, densified */
    static const double dens[] = {0.002, 0.03, 0.2};
    for (int m = 0; m < 2; m++) {
        setenv("BRAID_AMULET", modes[m], 1);
        for (int d = 0; d < 3; d++)
            for (int lay = 0; lay < 2; lay++) {
                snprintf(what, sizeof what, "%s, sparse A %g", modes[m], dens[d]);
                multi_check_d(0x31, lay, false, 70, 66, 80, dens[d], what);
                multi_check_d(0x33, lay, true, 37, 29, 41, dens[d], what);
            }
    }
    unsetenv("BRAID_AMULET");
    multi_check(0x3f, false, false, 70, 66, 80, "auto");
    multi_other();
}

/* X ^ 2 is priced as the multiply every kernel computes (cost.c
 * hop_flops): the autoencoder's weight gradient t((d2 %*% W2) * (1 - A1 ^
 * 2)) %*% Xb (256 x 100 operands) got a where-loop, its lowering pricing
 * A1 ^ 2 as one multiply while the plans without it paid pow's 20 flops a
 * cell for the same term; the loop ran slower than Cell + dgemm (2.2x
 * codegen off end to end on the quiet machine). Under every machine's
 * constants, with the kernel at the clamp of its share (1.0) and with slow
 * memory (where the loop may win), the plan of A1 ^ 2 is the plan of
 * A1 * A1, and neither places a loop on the measured machines (both
 * failed without the change). Those machines are AVX-512 ones: at
 * another SIMD level the kernel's tiles differ (AVX2's 7 x 4 pads less of
 * the 100 x 100 result than 11 x 16), so only the equality holds there. */
static void pow2_price(void)
{
    static const struct { const char *mc; int loops; } mcs[] = {
        {"2.76e10 1.91e10 2.67e9 8.07e10 5.29e10 1.0", 0},   /* 2-core AVX-512 VM, quiet */
        {"5.85e10 4.45e10 1.16e10 1.24e11 6.57e10 1.0", 0},  /* a workstation */
        {"1e8 1e8 1e10 1.15e11 4.6e10 1.0", -1},             /* slow memory: either */
    };
    static const char *srcs[] = {
        "d1 = (d2 %*% W2) * (1 - A1 ^ 2)\nG = t(d1) %*% Xb\n",
        "d1 = (d2 %*% W2) * (1 - A1 * A1)\nG = t(d1) %*% Xb\n",
    };
    const char *names[] = {"d2", "W2", "A1", "Xb"}, *on[] = {"G"};
    t_seed(17);
    MB *ins[] = {t_gen(256, 10, 1, -1, 1, false), t_gen(10, 100, 1, -1, 1, false), t_gen(256, 100, 1, -1, 1, false),
                 t_gen(256, 100, 1, -1, 1, false)};
    char *keep = env_keep("BRAID_CG_MACHINE");
    CgOptions off = {.enabled = false};
    TRun r0;
    t_run_dml(srcs[0], &off, 4, names, ins, 1, on, &r0);
    for (size_t m = 0; m < sizeof mcs / sizeof *mcs; m++) {
        setenv("BRAID_CG_MACHINE", mcs[m].mc, 1);
        TRun r[2];
        for (int f = 0; f < 2; f++) {
            CgOptions o = t_pols[2].o;
            o.explain = getenv("T_EXPLAIN") ? stderr : NULL;
            t_run_dml(srcs[f], &o, 4, names, ins, 1, on, &r[f]);
        }
        T_CHECK(r0.rc == 0 && r[0].rc == 0 && r[1].rc == 0 && r[0].st.amulet == r[1].st.amulet &&
                    r[0].st.fused[0] == r[1].st.fused[0] && r[0].st.fused[1] == r[1].st.fused[1] &&
                    (mcs[m].loops < 0 || k_isa() != K_ISA_AVX512 || r[0].st.amulet == mcs[m].loops),
                "pow2 price, machine %zu: %s %s; A1 ^ 2: %lld AMULET loops, %lld Cell, %lld Row; A1 * A1: %lld, "
                "%lld, %lld", m, r[0].err, r[1].err, (long long)r[0].st.amulet, (long long)r[0].st.fused[0],
                (long long)r[0].st.fused[1], (long long)r[1].st.amulet, (long long)r[1].st.fused[0],
                (long long)r[1].st.fused[1]);
        for (int f = 0; f < 2; f++) {
            if (r[f].rc == 0 && r0.rc == 0) T_MB_EQ(r[f].out[0].m, r0.out[0].m, 1e-9, "pow2 price, machine %zu, %d", m, f);
            t_run_free(&r[f]);
        }
    }
    t_run_free(&r0);
    env_restore("BRAID_CG_MACHINE", keep);
    for (int i = 0; i < 4; i++) mb_release(ins[i]);
}

/* A sparse where-loop is priced at the elementwise rate, without the
 * ports' weighing (amulet_tpl.c am_tpl_compute). Weighed by this
 * machine's ports (1 2), MLogreg's gradient t(X) %*% (P[, 1:K] -
 * Y[, 1:K]) over a 1% sparse X became a where-loop 6x slower than the
 * unfused plan (the e2e row: 3.3 s of 4.5 in the loop). Under the
 * measured constants of this machine and ports 1 2 the planner must keep
 * the unfused product; the result is checked against codegen off. */
static void sparse_ports_price(void)
{
    const char *src = "X = rand(rows=20000, cols=200, sparsity=0.01, seed=1)\n"
                      "P = rand(rows=20000, cols=5, seed=2)\n"
                      "Y = table(seq(1, 20000), round(rand(rows=20000, cols=1, min=1, max=5, seed=3)), 20000, 5)\n"
                      "K = 4\n"
                      "while (FALSE) {}\n"
                      "G = t(X) %*% (P[, 1:K] - Y[, 1:K])\n";
    const char *on[] = {"G"};
    int nt0 = br_threads();
    br_set_threads(2);
    char *keep = env_keep("BRAID_CG_MACHINE");
    CgOptions off = {.enabled = false};
    TRun r0, r;
    t_run_dml(src, &off, 0, NULL, NULL, 1, on, &r0);
    setenv("BRAID_CG_MACHINE", "2.76154e10 1.91302e10 2.67417e9 8.07393e10 5.29367e10 0.8", 1);
    setenv("BRAID_AMULET_PORTS", "1 2", 1);
    CgOptions o = t_pols[2].o;
    o.explain = getenv("T_EXPLAIN") ? stderr : NULL;
    t_run_dml(src, &o, 0, NULL, NULL, 1, on, &r);
    T_CHECK(r0.rc == 0 && r.rc == 0 && r.st.amulet == 0, "sparse ports price: %s; %lld AMULET loops", r.err,
            (long long)r.st.amulet);
    if (r0.rc == 0 && r.rc == 0) T_MB_EQ(r.out[0].m, r0.out[0].m, 1e-9, "sparse ports price: result");
    t_run_free(&r);
    t_run_free(&r0);
    unsetenv("BRAID_AMULET_PORTS");
    env_restore("BRAID_CG_MACHINE", keep);
    br_set_threads(nt0);
}

/* The end of narrow_result and split_price: BRAID_CG_MACHINE back to
 * keep (the caller's copy, freed; NULL: unset), the two inputs released,
 * nt0 threads. */
static void narrow_done(char *keep, MB **ins, int nt0)
{
    env_restore("BRAID_CG_MACHINE", keep);
    mb_release(ins[0]);
    mb_release(ins[1]);
    br_set_threads(nt0);
}

/* A narrow result over a long K (k-means' Lloyd step, S = t(P) %*% X
 * with P n x 5 and X n x 10): the kernel's 12 x 16 register tile is one
 * tile, padded and on one thread, so the planner must price the loop by
 * that (amulet_tpl.c dense_compute). Under the machine constants this
 * machine measured under load (the loop's share of dgemm clamped at
 * 1.5), unpadded pricing chose the loop over the multi-output Row
 * operator (which reads X once and materializes nothing) and ran 7x
 * slower; the Row operator must win, with 2 threads pinned (the price
 * depends on the thread count) at the scalar and AVX-512 levels. Forced, the loop (one tile: run_block
 * without a team) computes what the Row operator computes. */
static void narrow_result(void)
{
    int nt0 = br_threads();
    br_set_threads(2);
    t_seed(31);
    const int64_t n = 60000;
    MB *ins[] = {t_gen(n, 10, 1, -1, 1, false), t_gen(5, 10, 1, -1, 1, false)};
    const char *names[] = {"X", "C"}, *on[] = {"S", "cnt", "w"};
    const char *src = "D = -2 * (X %*% t(C)) + t(rowSums(C ^ 2))\ndmin = rowMins(D)\nP = D <= dmin\n"
                      "P = P / rowSums(P)\ncnt = colSums(P)\nS = t(P) %*% X\nw = sum(dmin)\n";
    char *keep = env_keep("BRAID_CG_MACHINE");
    /* the share at its clamp (AM_SHARE_MAX, 1.0: measured higher under
     * load, it is read as 1.0); at 1.5, the value this test was written
     * for, AVX2's loop, split over K on the 2 threads (am_split, priced
     * since: split_price), is priced below the Row operator */
    setenv("BRAID_CG_MACHINE", "5.85e10 4.45e10 1.16e10 1.24e11 6.57e10 1.0", 1);
    TRun r0, r1;
    /* the price depends on the kernel's tile, so on the SIMD level: every
     * level of this CPU (AVX-512's 12 x 16 is one tile; AVX2's split the
     * 10 columns in two, too little work per tile for a team: am_team) */
    KIsa isa0 = k_isa();
    for (int isa = K_ISA_GENERIC; isa <= (int)k_isa_cpu(); isa++) {
        k_isa_set((KIsa)isa);
        t_run_dml(src, &t_pols[2].o, 2, names, ins, 3, on, &r0);
        T_CHECK(r0.rc == 0 && r0.st.amulet == 0, "narrow result (%s): %s, %lld AMULET loops, want the Row operator",
                k_isa_name((KIsa)isa), r0.err, (long long)r0.st.amulet);
        t_run_free(&r0);
    }
    k_isa_set(isa0);
    t_run_dml(src, &t_pols[2].o, 2, names, ins, 3, on, &r0);
    setenv("BRAID_AMULET_FUSE", "force", 1);
    t_run_dml(src, &t_pols[2].o, 2, names, ins, 3, on, &r1);
    unsetenv("BRAID_AMULET_FUSE");
    T_CHECK(r1.rc == 0 && r1.st.amulet > 0, "narrow result forced: %s, %lld AMULET loops", r1.err,
            (long long)r1.st.amulet);
    /* two summation orders of n terms of magnitude <= 1: 2 n^2 eps */
    if (r0.rc == 0 && r1.rc == 0)
        T_MB_EQ(r0.out[0].m, r1.out[0].m, 2 * (double)n * (double)n * 2.3e-16, "narrow result: the loop against the Row operator");
    t_run_free(&r0);
    t_run_free(&r1);
    narrow_done(keep, ins, nt0);
}

/* Runs a narrow result over a long K (S = t(P) %*% X, P = f(Q) n x 5,
 * X n x 10: a Row operator over X's rows or the loop) under pinned
 * machine constants with the loop's share of dgemm `share`; whether the
 * planner placed an AMULET loop (-1 on error). (Not k-means' step: there
 * the one-pass multi-output Row operator costs less than any plan with
 * the loop, which must materialize the distances: mpskip.c
 * without_amulet.) */
static int narrow_choice(MB **ins, double share)
{
    const char *names[] = {"X", "Q"}, *on[] = {"S"};
    const char *src = "P = (Q > 0.5) * Q\nS = t(P) %*% X\n";
    char mc[200];
    snprintf(mc, sizeof mc, "5.85e10 4.45e10 1.16e10 1.24e11 6.57e10 %.6g", share);
    setenv("BRAID_CG_MACHINE", mc, 1);
    TRun r;
    t_run_dml(src, &t_pols[2].o, 2, names, ins, 1, on, &r);
    int v = r.rc ? -1 : r.st.amulet > 0;
    t_run_free(&r);
    return v;
}

/* The planner prices the tile-major schedule (amulet_tpl.c
 * dense_compute: am_split's chunks of K on every thread) and its choice
 * follows that price. Under pinned constants (the same rates for any
 * thread count) the narrow result's loop (5 x 10 over 60000 rows) costs
 * the same on 2 threads as on 1 (2 chunks at one thread's rate each,
 * plus the partials' passes); priced as its tiles' team (one busy
 * thread) it cost twice as much on 2. So the share of dgemm
 * (BRAID_CG_MACHINE's sixth value) at which the planner switches from the
 * Row operator to the loop is found on 1 thread by bisection, and on 2
 * threads a share 1.4x that must place the loop (unpriced it needed
 * about 2x) and 0.7x must not. At every SIMD level of this CPU. */
static void split_price(void)
{
    int nt0 = br_threads();
    char *keep = env_keep("BRAID_CG_MACHINE");
    t_seed(31);
    const int64_t n = 60000;
    MB *ins[] = {t_gen(n, 10, 1, -1, 1, false), t_gen(n, 5, 1, -1, 1, false)};
    KIsa isa0 = k_isa();
    for (int isa = K_ISA_GENERIC; isa <= (int)k_isa_cpu(); isa++) {
        k_isa_set((KIsa)isa);
        const char *in = k_isa_name((KIsa)isa);
        br_set_threads(1);
        double lo = 0.01, hi = 1000;
        int clo = narrow_choice(ins, lo), chi = narrow_choice(ins, hi);
        T_CHECK(clo == 0 && chi == 1, "split price (%s): the Row operator at share %g (%d), the loop at %g (%d)", in,
                lo, clo, hi, chi);
        if (clo != 0 || chi != 1) continue;
        while (hi / lo > 1.05) {
            double mid = sqrt(lo * hi);
            int c = narrow_choice(ins, mid);
            if (c < 0) break;
            *(c ? &hi : &lo) = mid;
        }
        br_set_threads(2);
        int up = narrow_choice(ins, 1.4 * hi), down = narrow_choice(ins, 0.7 * lo);
        T_CHECK(up == 1, "split price (%s): 2 threads at 1.4x the 1-thread switch share %g: want the loop, got %d", in,
                hi, up);
        T_CHECK(down == 0, "split price (%s): 2 threads at 0.7x the 1-thread switch share %g: want the Row operator, "
                "got %d", in, lo, down);
    }
    k_isa_set(isa0);
    narrow_done(keep, ins, nt0);
}

/* The tile-major schedule of small results with K long (am_split: K in
 * chunks over the threads, partials merged in chunk order): each query
 * against the scalar loop, the same run twice bit for bit, and the
 * chunk count the trace reports is am_split's for the kernel's tile (at
 * least two chunks for 5 x 10 with two threads or more), at every SIMD
 * level and 1-3 threads. */
static void tile_major(void)
{
    static const int64_t shapes[][3] = {{5, 10, 6000}, {13, 17, 3001}, {3, 40, 2049}};
    static const int qs[][2] = {{Q1, 2}, {QMM, 0}, {QMIN, 0}, {Q3, 1}};
    KIsa isa0 = k_isa();
    int nt0 = br_threads();
    setenv("BRAID_AMULET", "kernel", 1);
    for (int isa = K_ISA_GENERIC; isa <= (int)k_isa_cpu(); isa++)
        for (int nt = 1; nt <= 3; nt++) {
            k_isa_set((KIsa)isa);
            br_set_threads(nt);
            for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++)
                for (size_t qi = 0; qi < sizeof qs / sizeof *qs; qi++) {
                    /* under the sanitizers every third point: each (shape,
                     * query) on three (level, threads) pairs, every level
                     * and every thread count among them */
                    if (!t_keep((long)(isa + nt - 1 + (int)(si * 4 + qi)), 3)) continue;
                    int64_t M = shapes[si][0], N = shapes[si][1], K = shapes[si][2];
                    int q = qs[qi][0];
                    char what[96], w[300], src[1000];
                    snprintf(what, sizeof what, "tile-major %s, %d threads", k_isa_name((KIsa)isa), nt);
                    check(q, qs[qi][1], false, false, M, N, K, what);
                    t_seed(3);
                    MB *A = t_gen(M, K, 1, -1, 1, false), *B = t_gen(K, N, 1, -1, 1, false);
                    MB *thi = t_gen(M, 1, 1, -0.5, 0.5, false), *thj = t_gen(1, N, 1, -0.5, 0.5, false);
                    const char *names[] = {"A", "B", "thi", "thj"};
                    MB *ins[] = {A, B, thi, thj};
                    body(w, sizeof w, q, qs[qi][1], false, false);
                    snprintf(src, sizeof src,
                             "dis = matrix(0.5, rows=ncol(B), cols=1)\nR = matrix(%d, rows=nrow(A), cols=ncol(B))\n"
                             "where (i in 1:nrow(A), j in 1:ncol(B), k in 1:ncol(A)) { %s }\n", q == QMIN ? 1000 : 0, w);
                    TRun r[2];
                    int mr = 0, nr = 0, chunks = 0;
                    for (int rep = 0; rep < 2; rep++) {
                        CgOptions cg = t_pols[2].o;
                        FILE *f = amulet_traced(src, &cg, names, ins, 4, &r[rep]);
                        char line[400];
                        while (f && fgets(line, sizeof line, f)) {
                            char *c = strstr(line, "K in ");
                            if (sscanf(line, "amulet: %d x %d kernel, kc", &mr, &nr) == 2 && c) chunks = atoi(c + 5);
                        }
                        if (f) fclose(f);
                    }
                    T_CHECK(r[0].rc == 0 && r[1].rc == 0, "%s: %s: %s", what, w, r[0].err);
                    if (r[0].rc == 0 && r[1].rc == 0) {
                        MB *x = mb_to_dense(r[0].out[0].m, &(BrErr){0}), *y = mb_to_dense(r[1].out[0].m, &(BrErr){0});
                        T_CHECK(x && y && !memcmp(x->d, y->d, (size_t)(M * N) * sizeof(double)),
                                "%s: %s (%lldx%lldx%lld): two runs differ", what, w, (long long)M, (long long)N,
                                (long long)K);
                        mb_release(x);
                        mb_release(y);
                        int64_t tiles = mr && nr ? (M + mr - 1) / mr * ((N + nr - 1) / nr) : 0;
                        int want = tiles ? am_split(tiles, K, mr, nr, nt) : -1;
                        T_CHECK(chunks == want && (si || nt == 1 || chunks >= 2),
                                "%s: %s (%lldx%lldx%lld): K in %d chunks, want %d", what, w, (long long)M,
                                (long long)N, (long long)K, chunks, want);
                    }
                    t_run_free(&r[0]);
                    t_run_free(&r[1]);
                    for (int i = 0; i < 4; i++) mb_release(ins[i]);
                }
        }
    k_isa_set(isa0);
    br_set_threads(nt0);
}

/* The number of kernel sources (*.c) in dir holding both strings a and
 * b (fixed strings), or -1. */
static int dir_sources(const char *dir, const char *a, const char *b)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "grep -lF '%s' %s/*.c 2>/dev/null | xargs -r grep -lF '%s' | wc -l", a, dir, b);
    FILE *f = popen(cmd, "r");
    int n = -1;
    if (f && fscanf(f, "%d", &n) != 1) n = -1;
    if (f) pclose(f);
    return n;
}

/* A kernel compiles without the intrinsics header at every SIMD level
 * (codegen/prims.c cg_prelude_vec): in a fresh cache directory, after
 * kernels of Q1 and min-plus (compares, masked forms, FMA, min), no
 * precompiled prelude is there (the kernels once waited for a 25 MB one
 * with immintrin.h per directory; later they started the build of the
 * small one), and the results match the reference.
 * And a run compiles only the variant it runs (dense or sparse). */
static void no_intrinsics_header(void)
{
    char dir[] = "/tmp/braid-test-amulet-XXXXXX";
    if (!mkdtemp(dir)) { T_CHECK(false, "mkdtemp"); return; }
    CgOptions cg = t_pols[2].o;
    cg.cachedir = dir;
    setenv("BRAID_AMULET", "kernel", 1);
    for (int isa = K_ISA_AVX2; isa <= (int)k_isa_cpu(); isa++) {
        k_isa_set((KIsa)isa);
        t_seed(91 + isa);
        MB *A = t_gen(64, 70, 1, -1, 1, false), *B = t_gen(70, 80, 1, -1, 1, false);
        MB *thj = t_gen(1, 80, 1, -0.5, 0.5, false);
        const char *names[] = {"A", "B", "thj"}, *on[] = {"R", "S"};
        MB *ins[] = {A, B, thj};
        TRun r;
        t_run_dml("R = matrix(0, rows=64, cols=80); S = matrix(1e300, rows=64, cols=80)\n"
                  "where (i in 1:64, j in 1:80, k in 1:70) { R[i,j] += A[i,k]*B[k,j] - (A[i,k]*B[k,j] > thj[j]) * A[i,k]*B[k,j]*0.5 }\n"
                  "where (i in 1:64, j in 1:80, k in 1:70) { S[i,j] min= A[i,k] + B[k,j] }\n",
                  &cg, 3, names, ins, 2, on, &r);
        T_CHECK(r.rc == 0, "%s: %s", k_isa_name((KIsa)isa), r.err);
        T_CHECK(r.st.cc_runs >= 2, "%s: %lld compiler runs", k_isa_name((KIsa)isa), (long long)r.st.cc_runs);
        /* the compilers' CPU time is counted (-stats), and no prelude
         * build's: kernels start none */
        T_CHECK(r.st.cc_cpu_ns > 0 && r.st.cc_pch_cpu_ns == 0, "%s: compiler CPU %lld ns, prelude's %lld ns",
                k_isa_name((KIsa)isa), (long long)r.st.cc_cpu_ns, (long long)r.st.cc_pch_cpu_ns);
        if (r.rc == 0) {
            MB *R = mb_to_dense(r.out[0].m, &(BrErr){0}), *S = mb_to_dense(r.out[1].m, &(BrErr){0});
            double worst = 0;
            for (int64_t i = 0; i < 64; i++)
                for (int64_t j = 0; j < 80; j++) {
                    double x = 0, y = 1e300;
                    for (int64_t k = 0; k < 70; k++) {
                        double a = A->d[i * 70 + k], b = B->d[k * 80 + j], p = a * b;
                        x += p - (p > thj->d[j]) * p * 0.5;
                        y = fmin(y, a + b);
                    }
                    worst = fmax(worst, fabs(x - R->d[i * 80 + j]) / (1 + fabs(x)));
                    worst = fmax(worst, fabs(y - S->d[i * 80 + j]) / (1 + fabs(y)));
                }
            T_CHECK(worst < 1e-9, "%s: error %g", k_isa_name((KIsa)isa), worst);
            mb_release(R);
            mb_release(S);
        }
        t_run_free(&r);
        mb_release(A);
        mb_release(B);
        mb_release(thj);
    }
    k_isa_set(k_isa_cpu());
    /* each run compiles only the variant it runs: the dense runs above
     * no sparse kernel (a loop over its non-zeros, kx[q]); a sparse A
     * (Q1's body is zero where A is) only the sparse kernel */
    int n = dir_sources(dir, "AMULET kernel", "kx[q]");
    T_CHECK(n == 0, "%d dense kernel sources with a sparse kernel in %s", n, dir);
    t_seed(97);
    MB *ins[8];
    sparse_inputs(45, 70, 60, 0.03, ins);
    {
        char src[300];
        snprintf(src, sizeof src, "R = matrix(0, 45, 70)\nwhere (i in 1:45, j in 1:70, k in 1:60) { R[i,j] += %s }\n",
                 sp_bodies[1]);
        const char *on[] = {"R"};
        TRun r0, r1;
        t_run_dml(src, &cg, 8, sp_names, ins, 1, on, &r1);
        setenv("BRAID_AMULET", "ref", 1);
        t_run_dml(src, &cg, 8, sp_names, ins, 1, on, &r0);
        setenv("BRAID_AMULET", "kernel", 1);
        T_CHECK(r0.rc == 0 && r1.rc == 0, "variant sources: %s %s", r0.err, r1.err);
        if (r0.rc == 0 && r1.rc == 0) T_MB_EQ(r1.out[0].m, r0.out[0].m, 2 * 60.0 * 60 * 16 * 2.3e-16, "variant sources: sparse A");
        t_run_free(&r0);
        t_run_free(&r1);
    }
    for (int i = 0; i < 8; i++) mb_release(ins[i]);
    n = dir_sources(dir, "AMULET sparse kernel", "kx[q]");
    T_CHECK(n == 1, "%d sparse kernel sources in %s", n, dir);
    n = dir_sources(dir, "AMULET sparse kernel", "cg_amulet_pk");
    T_CHECK(n == 0, "%d sparse kernel sources with the dense pack function in %s", n, dir);
    unsetenv("BRAID_AMULET");
    /* nor the precompiled prelude at all (jit.c start): a kernel parses
     * the prelude's text in less CPU time than the compiler takes to load
     * the image, and its build doubled a lone kernel's cold cost; the
     * header is written before that build starts */
    char cmd[200];
    snprintf(cmd, sizeof cmd, "ls %s/prelude-* 2>/dev/null | wc -l", dir);
    FILE *f = popen(cmd, "r");
    n = -1;
    if (f && fscanf(f, "%d", &n) != 1) n = -1;
    if (f) pclose(f);
    T_CHECK(n == 0, "%d precompiled prelude files in %s", n, dir);
    /* the kernels link without the start files (jit.c: -nostdlib for a
     * bundle of AMULET kernels): no shared object of a kernel source
     * names crtbegin's __cxa_finalize */
    int nk = 0, ncrt = 0;
    char line[300];
    snprintf(cmd, sizeof cmd,
             "for c in %s/*.c; do grep -qF 'AMULET' \"$c\" && echo k $(grep -c __cxa_finalize \"${c%%.c}.so\"); done", dir);
    f = popen(cmd, "r");
    while (f && fgets(line, sizeof line, f)) {
        nk++;
        ncrt += atoi(line + 2) > 0;
    }
    if (f) pclose(f);
    T_CHECK(nk >= 3 && ncrt == 0, "%d of %d kernel objects with the start files in %s", ncrt, nk, dir);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    T_CHECK(system(cmd) == 0, "rm %s", dir);
}

/* A where-loop's blocks on a crowded machine (br_par pinned): 64 x 64 x
 * 64 makes blocks whose team am_team sizes at 2 threads, under a
 * millisecond each; crowded they run on one thread, uncrowded they fork
 * (the counts -stats prints), with the same bits. */
static void crowded_blocks(void)
{
    int nt0 = br_threads();
    setenv("BRAID_AMULET", "kernel", 1);
    br_set_threads(2);
    for (int q = Q1; q <= Q3; q++) {
        t_seed(7);
        MB *A = t_gen(64, 64, 1, -1, 1, false), *B = t_gen(64, 64, 1, -1, 1, false);
        MB *thi = t_gen(64, 1, 1, -0.5, 0.5, false), *thj = t_gen(1, 64, 1, -0.5, 0.5, false);
        const char *names[] = {"A", "B", "thi", "thj"}, *onames[] = {"R"};
        MB *ins[] = {A, B, thi, thj};
        char w[300], src[1000];
        body(w, sizeof w, q, 1, false, false);
        snprintf(src, sizeof src,
                 "dis = matrix(0.5, rows=ncol(B), cols=1)\nR = matrix(0, rows=nrow(A), cols=ncol(B))\n"
                 "where (i in 1:nrow(A), j in 1:ncol(B), k in 1:ncol(A)) { %s }\n", w);
        TRun r[2];
        int64_t teams[2], kept[2];
        for (int pin = 0; pin < 2; pin++) {
            int64_t t0, k0;
            br_par_pin(pin);
            br_par_counts(&t0, &k0);
            t_run_dml(src, &t_pols[2].o, 4, names, ins, 1, onames, &r[pin]);
            br_par_counts(&teams[pin], &kept[pin]);
            teams[pin] -= t0;
            kept[pin] -= k0;
        }
        br_par_pin(-1);
        T_CHECK(r[0].rc == 0 && r[1].rc == 0, "crowded where-loop %s: %s", w, r[0].err);
        T_CHECK(teams[0] > 0 && kept[0] == 0 && kept[1] > 0 && teams[1] < teams[0],
                "crowded where-loop %s: teams %lld / %lld, kept %lld / %lld", w, (long long)teams[0],
                (long long)teams[1], (long long)kept[0], (long long)kept[1]);
        if (r[0].rc == 0 && r[1].rc == 0) {
            MB *x = mb_to_dense(r[0].out[0].m, &(BrErr){0}), *y = mb_to_dense(r[1].out[0].m, &(BrErr){0});
            T_CHECK(x && y && !memcmp(x->d, y->d, 64 * 64 * sizeof(double)), "crowded where-loop %s: bits differ", w);
            mb_release(x);
            mb_release(y);
        }
        t_run_free(&r[0]);
        t_run_free(&r[1]);
        for (int i = 0; i < 4; i++) mb_release(ins[i]);
    }
    br_set_threads(nt0);
}

/* One parallel region per where-loop call (amulet_gen.c run_block,
 * team_blocks): parameters pinned to blocks over k and the columns, some
 * too small for a team (a last k block 3 deep, a last column block of
 * one panel: thread 0 runs them inside the region, between team
 * blocks), one over L2 (the team's column parts and shared (i,k) tiles),
 * A packed and read in place, on 1-3 threads (br_par pinned uncrowded:
 * the teams whatever the load). A call on 2-3 threads opens exactly one
 * region (before 2026-12-02 every team block forked its own: 2 to 12 here),
 * on 1 thread none; the result within 1e-9 of the scalar loop (check)
 * and bit for bit the 1-thread result (each (tile, panel) is computed
 * whole by one thread in k order). */
static void one_region(void)
{
    static const struct {
        const char *params;
        int q, tf;
        bool ta, tb;
        int64_t M, N, K;
    } cs[] = {
        {"64 128 1", Q1, 2, false, false, 53, 389, 259},
        {"64 128 0", Q2, 1, true, false, 53, 389, 259},
        {"32 64 1", Q3, 3, false, true, 77, 133, 200},
        {"256 805 1", QMM, 0, false, false, 53, 805, 300},
        {"64 96 1", QMIN, 0, true, true, 37, 200, 131},
    };
    int nt0 = br_threads();
    char what[160];
    setenv("BRAID_AMULET", "kernel", 1);
    br_par_pin(0);
    for (size_t c = 0; c < sizeof cs / sizeof *cs; c++) {
        setenv("BRAID_AMULET_PARAMS", cs[c].params, 1);
        MB *one = NULL;
        for (int nt = 1; nt <= 3; nt++) {
            if (nt == 3 && !t_keep((long)c, 2)) continue;   /* 3 threads in every other case under the sanitizers */
            br_set_threads(nt);
            snprintf(what, sizeof what, "one region, pinned %s, %d threads", cs[c].params, nt);
            MB *R = NULL;
            int64_t r0 = am_regions();
            check_keep(cs[c].q, cs[c].tf, cs[c].ta, cs[c].tb, cs[c].M, cs[c].N, cs[c].K, what, &R);
            int64_t regions = am_regions() - r0;
            T_CHECK(regions == (nt > 1), "%s: %lld parallel regions in the call, want %d", what, (long long)regions,
                    nt > 1);
            if (nt == 1) one = R;
            else {
                T_CHECK(R && one && !memcmp(R->d, one->d, (size_t)(cs[c].M * cs[c].N) * sizeof(double)),
                        "%s: bits differ from 1 thread's", what);
                mb_release(R);
            }
        }
        mb_release(one);
    }
    unsetenv("BRAID_AMULET_PARAMS");
    br_par_pin(-1);
    br_set_threads(nt0);
}

/* pack_split's hold (am_pack_hook): thread 0 of a team starts block b's
 * packing only after the team's other threads have ended theirs. */
static _Atomic int64_t hold_ends[64];
static void hold_first(int me, int tn, int64_t b, bool start)
{
    if (b >= 64) return;
    if (me == 0 && start)
        while (atomic_load(&hold_ends[b]) < tn - 1) sched_yield();
    if (me > 0 && !start) atomic_fetch_add(&hold_ends[b], 1);
}

/* The packed panels and tiles of one run of case (q, params, M x N x
 * K) per team thread (pk, tl: up to 3), its result kept in *R. */
static void packed_by(int q, const char *params, int64_t M, int64_t N, int64_t K, const char *what, MB **R,
                      int64_t pk[3], int64_t tl[3])
{
    int64_t p0[3], t0[3];
    setenv("BRAID_AMULET_PARAMS", params, 1);
    am_pack_counts(p0, t0, 3);
    check_keep(q, 1, false, false, M, N, K, what, R);
    am_pack_counts(pk, tl, 3);
    for (int t = 0; t < 3; t++) pk[t] -= p0[t], tl[t] -= t0[t];
}

/* The team's packing split by which thread is free (amulet_gen.c
 * pack_share): with thread 0 held at the start of every team block's
 * packing until the others have ended theirs (a thread slowed there, as
 * by the first touch of a fresh buffer's pages on this project's
 * virtual machine), the others pack every (k,j) panel and shared (i,k)
 * tile and thread 0 none; the same panels as on 1 thread and the same
 * tiles as an unheld run, each packed once; the result within 1e-9 of
 * the scalar loop and bit for bit the 1-thread result. Before
 * 2026-12-02 each thread packed a fixed half: thread 0 packed its half
 * after the hold, and the others waited for it at the barrier. Cases:
 * blocks over L2 (kc 512 x 1100 columns: the column parts and shared
 * tiles, up to a 4 MiB L2) and a last k block that fits (one part), and
 * small blocks (one part each), Q3 and Q1 with A packed; 2 and 3
 * threads (br_par pinned uncrowded: every block here has a team). The
 * scalar reference once per case, on the 1-thread run. */
static void pack_split(void)
{
    static const struct {
        const char *params;
        int q;
        int64_t M, N, K;
    } cs[] = {
        {"512 1100 1", Q3, 60, 1100, 600},
        {"128 256 1", Q1, 96, 500, 300},
    };
    int nt0 = br_threads();
    char what[160];
    setenv("BRAID_AMULET", "kernel", 1);
    br_par_pin(0);
    for (size_t c = 0; c < sizeof cs / sizeof *cs; c++) {
        MB *one = NULL;
        int64_t pk1[3], tl1[3];
        br_set_threads(1);
        snprintf(what, sizeof what, "pack split, pinned %s, 1 thread", cs[c].params);
        packed_by(cs[c].q, cs[c].params, cs[c].M, cs[c].N, cs[c].K, what, &one, pk1, tl1);
        T_CHECK(pk1[0] > 0 && tl1[0] == 0, "%s: %lld panels, %lld shared tiles", what, (long long)pk1[0],
                (long long)tl1[0]);
        for (int nt = 2; nt <= 3; nt++) {
            if (nt == 3 && !t_keep((long)c, 2)) continue;   /* 3 threads in every other case under the sanitizers */
            br_set_threads(nt);
            int64_t pk[2][3], tl[2][3], sp[2] = {0, 0}, st[2] = {0, 0};
            for (int held = 0; held < 2; held++) {
                snprintf(what, sizeof what, "pack split, pinned %s, %d threads%s", cs[c].params, nt,
                         held ? ", thread 0 held" : "");
                for (int b = 0; b < 64; b++) atomic_store(&hold_ends[b], 0);
                am_pack_hook(held ? hold_first : NULL);
                MB *R = NULL;
                check_no_ref = true;   /* the 1-thread result was checked against it */
                packed_by(cs[c].q, cs[c].params, cs[c].M, cs[c].N, cs[c].K, what, &R, pk[held], tl[held]);
                check_no_ref = false;
                am_pack_hook(NULL);
                T_CHECK(R && one && !memcmp(R->d, one->d, (size_t)(cs[c].M * cs[c].N) * sizeof(double)),
                        "%s: bits differ from 1 thread's", what);
                mb_release(R);
                for (int t = 0; t < nt; t++) sp[held] += pk[held][t], st[held] += tl[held][t];
                T_CHECK(sp[held] == pk1[0], "%s: %lld panels packed, %lld on 1 thread", what, (long long)sp[held],
                        (long long)pk1[0]);
            }
            snprintf(what, sizeof what, "pack split, pinned %s, %d threads", cs[c].params, nt);
            T_CHECK(pk[1][0] == 0 && tl[1][0] == 0, "%s: held thread 0 packed %lld panels, %lld tiles (of %lld, %lld)",
                    what, (long long)pk[1][0], (long long)tl[1][0], (long long)sp[1], (long long)st[1]);
            T_CHECK(st[1] == st[0] && (c > 0 || st[0] > 0), "%s: %lld shared tiles held, %lld not", what,
                    (long long)st[1], (long long)st[0]);
        }
        mb_release(one);
    }
    unsetenv("BRAID_AMULET_PARAMS");
    br_par_pin(-1);
    br_set_threads(nt0);
}

/* Seed 4.6's search for nc (amulet_gen.c strips), read from its trace:
 * after kc's race on the top half, the sub-tasks are column strips of
 * the bottom half's full height (rows from the top half's end, a
 * multiple of mr, to M), side by side from column 0, of widths 8 nr,
 * 16 nr, ... doubling, each strip's k range in two halves (at a
 * multiple of kc, or K / 2 when K < 2 kc), one packed and one read in
 * place, packed first in even strips; the doubling stops at the first
 * strip scored more than 2% above the best before it, else where the
 * next width no longer fits N; the pick is the widest strip within 2%
 * of the best score, with its better half's packing (in place within
 * 2%): all recomputed here from the scores the trace prints. Q1 with A
 * as it is and transposed, 1 and 2 threads (the results: `check` on the
 * search above). Before seed 4.6's strips, nc raced on bands of rows
 * over all columns (no strip in the trace). */
static void search_strips(void)
{
    int64_t M = 100, N = 805, K = 131;
    setenv("BRAID_AMULET", "search", 1);
    for (int x = 0; x < 4; x++) {
        int nt = 1 + x / 2;
        bool ta = x % 2;
        br_set_threads(nt);
        t_seed(73 + x);
        MB *A = t_gen(M, K, 1, -1, 1, false), *B = t_gen(K, N, 1, -1, 1, false);
        char w[300], src[800];
        body(w, sizeof w, Q1, 2, ta, false);
        snprintf(src, sizeof src,
                 "At = t(A); dis = matrix(0.5, rows=ncol(B), cols=1); thj = matrix(0.1, rows=1, cols=ncol(B))\n"
                 "R = matrix(0, rows=nrow(A), cols=ncol(B))\n"
                 "where (i in 1:nrow(A), j in 1:ncol(B), k in 1:ncol(A)) { %s }\n", w);
        const char *names[] = {"A", "B"};
        MB *ins[] = {A, B};
        TRun r;
        CgOptions cg = t_pols[2].o;
        FILE *f = amulet_traced(src, &cg, names, ins, 2, &r);
        T_CHECK(r.rc == 0 && f, "strips %d: %s", x, r.err);
        int mr = 0, nr = 0, pk = -1, n = 0;
        long long kc = 0, nc = 0;
        long long st[64][8];   /* rows, columns, k ranges, kc, nc, pack */
        double sc[64];
        char line[500];
        while (f && fgets(line, sizeof line, f)) {
            long long v[9];
            int p;
            double s;
            if (sscanf(line, "amulet: %d x %d kernel, kc %lld nc %lld pack %d (searched)", &mr, &nr, &kc, &nc, &pk) == 5)
                continue;
            if (sscanf(line, "amulet: sub-task rows %lld-%lld columns %lld-%lld k %lld-%lld, kc %lld nc %lld pack %d: %lg",
                       &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &p, &s) == 10 &&
                v[3] - v[2] < N && n < 64) {
                for (int c = 0; c < 8; c++) st[n][c] = v[c];
                st[n][7] = p;
                st[n][6] = v[6] * 1000000 + v[7];
                sc[n++] = s;
            }
        }
        if (f) fclose(f);
        T_CHECK(mr > 0 && pk >= 0 && n >= 2 && n % 2 == 0, "strips %d: kernel %d x %d, pick pack %d, %d strip halves", x,
                mr, nr, pk, n);
        if (mr <= 0 || nr <= 0) {   /* checked above: no kernel line to read */
            t_run_free(&r);
            mb_release(A);
            mb_release(B);
            continue;
        }
        int64_t mh = (M / 2 + mr - 1) / mr * mr, kh = K >= 2 * kc ? K / (2 * kc) * kc : K / 2, j0 = 0, w0 = 8 * nr;
        double low = INFINITY, ssc[32];
        int ns = n / 2, bad = 0, stop = -1;
        for (int s = 0; s < ns && mr > 0; s++) {
            long long *a = st[2 * s], *b = st[2 * s + 1];
            int64_t wd = w0 << s;
            bool shape = a[0] == mh && a[1] == M && b[0] == mh && b[1] == M && a[2] == j0 && a[3] == j0 + wd &&
                         b[2] == j0 && b[3] == j0 + wd && a[4] == 0 && a[5] == kh && b[4] == kh && b[5] == K &&
                         a[6] == kc * 1000000 + wd && b[6] == a[6] && a[7] == (s % 2 == 0) && b[7] == !a[7];
            if (!shape) {
                bad++;
                fprintf(stderr, "strip %d: rows %lld-%lld columns %lld-%lld k %lld-%lld / %lld-%lld pack %lld %lld; "
                        "want rows %lld-%lld columns %lld-%lld k 0-%lld-%lld\n", s, a[0], a[1], a[2], a[3], a[4], a[5],
                        b[4], b[5], a[7], b[7], (long long)mh, (long long)M, (long long)j0, (long long)(j0 + wd),
                        (long long)kh, (long long)K);
            }
            ssc[s] = fmin(sc[2 * s], sc[2 * s + 1]);
            if (s > 0 && ssc[s] > low * 1.02 && stop < 0) stop = s;
            low = fmin(low, ssc[s]);
            j0 += wd;
        }
        T_CHECK(bad == 0, "strips %d: %d strips not as seed 4.6's", x, bad);
        /* stopped at the first worse strip, or where the next did not fit */
        T_CHECK(stop >= 0 ? stop == ns - 1 : j0 + (w0 << ns) > N, "strips %d: %d strips, the first worse %d, "
                "%lld columns used", x, ns, stop, (long long)j0);
        int win = 0;
        for (int s = 1; s < ns; s++)
            if (ssc[s] < ssc[win]) win = s;
        for (int s = ns - 1; s > win; s--)
            if (ssc[s] <= ssc[win] * 1.02) { win = s; break; }
        double sp = sc[2 * win + (win % 2 != 0)], si = sc[2 * win + (win % 2 == 0)];   /* packed, in place */
        T_CHECK(ns > 0 && nc == (w0 << win) && pk == !(si <= sp * 1.02), "strips %d: picked nc %lld pack %d, want nc "
                "%lld pack %d", x, nc, pk, (long long)(w0 << win), !(si <= sp * 1.02));
        t_run_free(&r);
        mb_release(A);
        mb_release(B);
    }
    br_set_threads(0);
    unsetenv("BRAID_AMULET");
}


int main(void)
{
    static const int64_t sizes[][3] = {{37, 29, 41}, {13, 50, 7}, {64, 64, 64}};
    static const char *modes[] = {"kernel", "eval", "ref"};
    char what[80];
    t_pin_machine();
    errors();
    general();
    lifted();
    rank1();
    rank1_more();
    rank1_sparse_step();
    inplace();
    nonfinite();
    sparse_a();
    sparse_kernel();
    sparse_narrow();
    sparse_kept();
    pool_buffers();
    alloc_failures();
    pool_kernel_paths();
    sparse_finite_flag();
    sparse_deferred();
    sparse_tr_price();
    params_once();
    params_by_shape();
    vops_oom();
    in_parfor();
    planner();
    kernel_price();
    kmeans_plan();
    pow2_price();
    sparse_ports_price();
    sparse_planner();
    check_price();
    dense_check_price();
    multi();
    narrow_result();
    split_price();
    tile_major();
    no_intrinsics_header();
    crowded_blocks();
    one_region();
    pack_split();
    search_strips();
    if (getenv("BRAID_TEST_ONLY") && *getenv("BRAID_TEST_ONLY")) return t_done("test_amulet");
    for (int m = 0; m < 3; m++) {
        setenv("BRAID_AMULET", modes[m], 1);
        for (int q = Q1; q <= QMAX; q++)
            for (int tf = 0; tf < (q <= Q3 ? 4 : 1); tf++)
                for (int lay = 0; lay < 4; lay++) {
                    const int64_t *s = sizes[(q + tf + lay) % 3];
                    snprintf(what, sizeof what, "%s", modes[m]);
                    check(q, tf, lay & 1, lay >> 1, s[0], s[1], s[2], what);
                }
    }
    /* the kernel at every SIMD level of this CPU, 1-3 threads (3: some
     * blocks have fewer column panels than threads, am_parts) */
    setenv("BRAID_AMULET", "kernel", 1);
    for (int isa = K_ISA_GENERIC; isa <= (int)k_isa_cpu(); isa++)
        for (int nt = 1; nt <= 3; nt++) {
            if (!t_keep(nt - 1, 2)) continue;   /* 1 and 3 threads under the sanitizers */
            k_isa_set((KIsa)isa);
            br_set_threads(nt);
            snprintf(what, sizeof what, "kernel %s, %d threads", k_isa_name((KIsa)isa), nt);
            check(Q1, 2, false, true, 61, 45, 70, what);
            check(Q2, 1, true, false, 40, 67, 33, what);
            check(Q3, 3, true, true, 25, 31, 90, what);
            check(QMIN, 0, false, false, 30, 30, 30, what);
            multi_check(0x3f, true, false, 45, 70, 60, what);
            /* the sparse kernel at this level, and the same bodies over a
             * dense A: the dense kernel with (i,k) values computed by the
             * pack function (abs(A[i,k]), A[i,k] * thk[k], ifelse(...)) */
            for (int dense = 0; dense < 2; dense++) {
                t_seed(41);
                MB *ins[8];
                sparse_inputs(45, 70, 60, dense ? 1 : 0.03, ins);
                for (size_t f = 0; f < sizeof sp_bodies / sizeof *sp_bodies; f++)
                    sparse_check(ins, 45, 70, 60, sp_bodies[f], 1, what);
                for (int i = 0; i < 8; i++) mb_release(ins[i]);
            }
            setenv("BRAID_AMULET", "kernel", 1);
        }
    /* the search itself (sub-tasks over k-slices and column panels with
     * every operand class, then the rest), 1-3 threads (its blocks of
     * kc 512 x nc 805 overflow L2: the teams' column parts, am_parts,
     * 3 threads: parts of unequal width) */
    setenv("BRAID_AMULET", "search", 1);
    k_isa_set(k_isa_cpu());
    /* (under the sanitizers every third of the 12 checks: each of the
     * four on one thread count, each thread count at least once) */
    for (int nt = 1; nt <= 3; nt++) {
        br_set_threads(nt);
        snprintf(what, sizeof what, "search, %d threads", nt);
        int x = (nt - 1) * 4;
        if (t_keep(x, 3)) check(Q1, 2, false, false, 4 * 12 * nt + 5, 32 * 24 + 37, 131, what);
        if (t_keep(x + 1, 3)) check(Q2, 3, true, true, 4 * 12 * nt + 5, 32 * 24 + 37, 131, what);
        /* rows for kc's race in two rounds: kc 32..512 over k in
         * [0, 512) (each candidate's panels packed ahead), and the rest
         * of k; then seed 4.6's column strips of the bottom half (8 nr,
         * 16 nr, ..., each k half packed and in place: search_strips)
         * and the columns they leave */
        if (t_keep(x + 2, 3)) check(Q1, 2, false, true, 421, 805, 611, what);
        if (t_keep(x + 3, 3)) check(QMIN, 0, true, false, 419, 803, 533, what);
    }
    /* pinned to a block over L2 with packed (i,k) operands: on 2-3
     * threads its column parts, each (i,k) tile packed once by the team
     * (run_block's ablk), read by every part; an edge tile of 5 rows,
     * A read in place and transposed */
    setenv("BRAID_AMULET", "kernel", 1);
    setenv("BRAID_AMULET_PARAMS", "256 805 1", 1);
    for (int nt = 1; nt <= 3; nt++) {
        if (!t_keep(nt - 1, 2)) continue;   /* 1 and 3 threads under the sanitizers */
        br_set_threads(nt);
        snprintf(what, sizeof what, "pinned 256 805 packed, %d threads", nt);
        check(Q1, 2, false, false, 4 * 12 + 5, 805, 300, what);
        check(QMM, 0, true, false, 4 * 12 + 5, 805, 300, what);
    }
    unsetenv("BRAID_AMULET_PARAMS");
    br_set_threads(0);
    ref_memo_free();
    return t_done("test_amulet");
}
