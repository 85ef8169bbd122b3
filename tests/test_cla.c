/* test_cla.c: compressed blocks (matrix/cmb.h, kernels/cla.h): every
 * compressed operation against the ordinary kernels over generated data
 * with controlled cardinality, runs, co-correlated columns, sparsity and
 * NaN, for each encoding (forced) and the size-chosen mix, with 1 and 2
 * threads. */
#ifdef _OPENMP
#include <omp.h>
#endif
#include "t.h"
#include "t_dml.h"
#include "io/io.h"
#include "kernels/agg.h"
#include "kernels/cla.h"
#include "kernels/ew.h"
#include "kernels/mm.h"
#include "kernels/reorg.h"
#include "kernels/spoof.h"
#include "hops/hop.h"
#include "lang/load.h"
#include "plan/build.h"
#include "plan/program.h"
#include "plan/recompile.h"
#include "codegen/cgrun.h"
#include "runtime/cla_rt.h"

#include <math.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct Spec {
    const char *name;
    int64_t n, m;
    int card;          /* distinct non-zero values per column */
    double zero;       /* fraction of zero cells */
    int64_t run;       /* rows per run of equal values (1: none) */
    bool corr;         /* odd columns a function of the column before */
    double nan;        /* fraction of NaN cells */
    bool noise;        /* random doubles (incompressible) */
} Spec;

static uint64_t rng = 88172645463325252ULL;
static double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

/* BRAID_TEST_TIMES=1: each part's CPU seconds (this process) and wall
 * seconds on stderr, to find where the program's time goes. */
#define TIMED_AS(name, call) do { \
    double c0_ = t_cpu_s(RUSAGE_SELF), w0_ = t_wall_s(); \
    call; \
    if (getenv("BRAID_TEST_TIMES")) \
        fprintf(stderr, "time %-24s cpu %7.2f s wall %7.2f s\n", name, t_cpu_s(RUSAGE_SELF) - c0_, t_wall_s() - w0_); \
} while (0)
#define TIMED(call) TIMED_AS(#call, call)

static MB *gen(const Spec *s)
{
    BrErr e = {0};
    MB *x = mb_dense(s->n, s->m, &e);
    for (int64_t j = 0; j < s->m; j++) {
        double v = 0;
        for (int64_t i = 0; i < s->n; i++) {
            if (i % s->run == 0) {
                if (s->noise) v = urand() * 100 - 50;
                else if (urand() < s->zero) v = 0;
                else v = 1 + (double)(int)(urand() * s->card) * 0.5 - (double)(j % 3);
                if (s->nan > 0 && urand() < s->nan) v = NAN;
            }
            double c = v;
            if (s->corr && j % 2 == 1) {
                double p = x->d[i * s->m + j - 1];
                c = p == 0 ? 0 : p * 3 + 1;   /* a function of the column before */
            }
            x->d[i * s->m + j] = c;
        }
    }
    mb_recount_nnz(x);
    mb_examine(x, &e);
    return x;
}

static MB *rnd(int64_t r, int64_t c)
{
    BrErr e = {0};
    MB *x = mb_dense(r, c, &e);
    for (int64_t i = 0; i < r * c; i++) x->d[i] = urand() * 2 - 1;
    mb_recount_nnz(x);
    return x;
}

/* b0 (r x c0, released) widened to c columns: column j is column j % c0
 * scaled by 1 + (j / c0) / 4 (the same draws of the generator whatever c,
 * so the data of later checks do not move) */
static MB *widen(MB *b0, int64_t c)
{
    if (b0->cols == c) return b0;
    BrErr e = {0};
    MB *x = mb_dense(b0->rows, c, &e);
    for (int64_t i = 0; i < b0->rows; i++)
        for (int64_t j = 0; j < c; j++)
            x->d[i * c + j] = b0->d[i * b0->cols + j % b0->cols] * (1 + 0.25 * (double)(j / b0->cols));
    mb_recount_nnz(x);
    mb_release(b0);
    return x;
}

static const double RT = 1e-9;

/* A row range of at least CLA_BLK rows stays compressed (groups re-encoded
 * for the rows): values, operations over it, a binary round trip. */
static void check_row_slice(const char *what, const MB *x, const MB *cx)
{
    BrErr e = {0};
    int64_t n = x->rows, m = x->cols, rl = 7, ru = n - 3;
    MB *s = cla_slice(cx, rl, ru, 0, m, &e), *p = k_slice(x, rl, ru, 0, m, &e);
    T_CHECK(s && mb_is_cmb(s), "%s: row range stays compressed", what);
    T_MB_EQ(s, p, 0, "%s: X[rows, ]", what);
    if (s && mb_is_cmb(s)) {
        T_CHECK(s->nnz == p->nnz, "%s: row range nnz", what);
        MB *v = rnd(m, 1), *a1 = cla_matmul_right(s, v, &e), *b1 = k_matmul(p, v, &e);
        MB *a2 = cla_agg(OP_SUM, DIR_COL, s, &e), *b2 = k_agg(OP_SUM, DIR_COL, p, &e);
        MB *a3 = cla_tsmm(s, &e), *b3 = k_tsmm(p, true, &e);
        T_MB_EQ(a1, b1, RT, "%s: X[rows, ] %%*%% v", what);
        T_MB_EQ(a2, b2, RT, "%s: colSums(X[rows, ])", what);
        T_MB_EQ(a3, b3, RT, "%s: tsmm(X[rows, ])", what);
        MB *ms[] = {v, a1, b1, a2, b2, a3, b3};
        for (size_t k = 0; k < sizeof ms / sizeof *ms; k++) mb_release(ms[k]);
        /* the binary reader validates every part of the structure */
        char path[256];
        snprintf(path, sizeof path, "/tmp/braid_test_cla_rows_%d.bin", (int)getpid());
        IoWriteOpts wo;
        io_write_opts_init(&wo);
        wo.format = "braid-binary";
        IoReadOpts ro;
        io_read_opts_init(&ro);
        MB *r = io_write_matrix(path, s, &wo, &e) == 0 ? io_read_matrix(path, &ro, &e) : NULL;
        T_CHECK(r && mb_is_cmb(r), "%s: row range read back compressed (%s)", what, e.msg);
        T_MB_EQ(r, p, 0, "%s: row range binary round trip", what);
        mb_release(r);
        unlink(path);
        char mtd[300];
        snprintf(mtd, sizeof mtd, "%s.mtd", path);
        unlink(mtd);
    }
    mb_release(s);
    mb_release(p);
}

/* Operations of the named kind that the bound statistics counted. */
static int64_t op_count(const ClaStats *st, const char *name)
{
    for (int i = 0; i < 32 && st->opname[i]; i++)
        if (!strcmp(st->opname[i], name)) return st->opcount[i];
    return 0;
}

/* The fused mmchain (one pass over the groups per row block, bundles of
 * DDC groups through joint codes) against the dense chain: one and three
 * columns of v, no weights, a weight per row and per cell; it runs
 * exactly where x has no NaN or Inf (then the two products mark 0 * Inf).
 * A q that overflows to Inf falls back to the two products (the zeros of
 * x meet it). */
static void check_chain(const char *what, const MB *x, const MB *cx)
{
    BrErr e = {0};
    int64_t n = x->rows, m = x->cols;
    MB *v = rnd(m, 1), *B = rnd(m, 3), *w = rnd(n, 1), *W = rnd(n, 3);
    ClaStats st;
    cla_stats_init(&st);
    ClaStats *prev = cla_stats_bind(&st);
    struct { const MB *v, *w; const char *op; } c[] = {
        {v, NULL, "X v"}, {v, w, "X v w"}, {B, NULL, "X B"}, {B, w, "X B w"}, {B, W, "X B W"}};
    for (size_t k = 0; k < sizeof c / sizeof *c; k++) {
        MB *r = cla_mmchain(cx, c[k].v, c[k].w, &e), *q = k_mmchain(x, c[k].v, c[k].w, &e);
        T_MB_EQ(r, q, RT, "%s: mmchain %s", what, c[k].op);
        mb_release(r);
        mb_release(q);
    }
    int64_t want = cmb_has_nonfinite(cx) ? 0 : (int64_t)(sizeof c / sizeof *c);
    T_CHECK(op_count(&st, "mmchain") == want, "%s: fused chains %lld want %lld", what,
            (long long)op_count(&st, "mmchain"), (long long)want);
    /* overflow: q = x %*% v finite, w * q Inf somewhere */
    for (int64_t j = 0; j < m; j++) v->d[j] = 1e300;
    for (int64_t i = 0; i < n; i++) w->d[i] = 1e300;
    mb_recount_nnz(v);
    mb_recount_nnz(w);
    MB *r = cla_mmchain(cx, v, w, &e), *q = cla_matmul_right(cx, v, &e), *qw = k_binary(OP_MULT, w, q, &e);
    MB *ref = cla_matmul_tl(cx, qw, &e);
    T_MB_EQ(r, ref, RT, "%s: mmchain, w * q overflows", what);
    cla_stats_bind(prev);
    cla_stats_destroy(&st);
    MB *rs[] = {v, B, w, W, r, q, qw, ref};
    for (size_t k = 0; k < sizeof rs / sizeof *rs; k++) mb_release(rs[k]);
}

static void check_ops(const char *what, const MB *x, const MB *cx)
{
    BrErr e = {0};
    MB *d = cmb_decompress(cx, &e);
    T_MB_EQ(d, x, 0, "%s: decompress", what);
    T_CHECK(d && mb_valid(d, true), "%s: decompressed block valid", what);
    mb_release(d);
    int64_t n = x->rows, m = x->cols;
    if (n > 9) {
        MB *a = cmb_decompress_rows(cx, 3, 9, &e), *b = k_slice(x, 3, 9, 0, m, &e);
        T_MB_EQ(a, b, 0, "%s: decompress rows 3..9", what);
        mb_release(a);
        mb_release(b);
    }
    /* products */
    MB *v = rnd(m, 1), *B = rnd(m, 3), *y = rnd(n, 1), *Y = rnd(n, 2), *L = rnd(2, n), *w = rnd(n, 1);
    MB *r1 = cla_matmul_right(cx, v, &e), *q1 = k_matmul(x, v, &e);
    T_MB_EQ(r1, q1, RT, "%s: X %%*%% v", what);
    MB *r2 = cla_matmul_right(cx, B, &e), *q2 = k_matmul(x, B, &e);
    T_MB_EQ(r2, q2, RT, "%s: X %%*%% B", what);
    MB *r3 = cla_matmul_tl(cx, y, &e), *q3 = k_matmul_tl(x, y, &e);
    T_MB_EQ(r3, q3, RT, "%s: t(X) %%*%% y", what);
    MB *r4 = cla_matmul_tl(cx, Y, &e), *q4 = k_matmul_tl(x, Y, &e);
    T_MB_EQ(r4, q4, RT, "%s: t(X) %%*%% Y", what);
    MB *r5 = cla_matmul_left(L, cx, &e), *q5 = k_matmul(L, x, &e);
    T_MB_EQ(r5, q5, RT, "%s: L %%*%% X", what);
    MB *r6 = cla_tsmm(cx, &e), *q6 = k_tsmm(x, true, &e);
    T_MB_EQ(r6, q6, RT, "%s: t(X) %%*%% X", what);
    MB *r7 = cla_mmchain(cx, v, w, &e), *q7 = k_mmchain(x, v, w, &e);
    T_MB_EQ(r7, q7, RT, "%s: mmchain", what);
    MB *r8 = cla_mmchain(cx, v, NULL, &e), *q8 = k_mmchain(x, v, NULL, &e);
    T_MB_EQ(r8, q8, RT, "%s: mmchain without w", what);
    /* a sparse selection of rows (kmeans++'s table(seq, idx) %*% X): rows
     * in any order, repeated, weighted */
    MB *Sel = mb_sp_new(300, n, 400, &e);
    for (int64_t i = 0; i < 300; i++) {
        int64_t r = (int64_t)(urand() * (double)n);
        mb_sp_append(Sel, i, r, i % 7 == 0 ? -2.5 : 1, &e);
        if (i % 5 == 0 && r < n - 1) mb_sp_append(Sel, i, n - 1, 1, &e);
    }
    mb_sp_finish(Sel);
    MB *r9 = cla_matmul_left(Sel, cx, &e), *q9 = k_matmul(Sel, x, &e);
    T_MB_EQ(r9, q9, RT, "%s: selection %%*%% X", what);
    /* t(P) %*% X: P one-hot (sparse; kmeans' cluster sums) and dense */
    MB *P = mb_sp_new(n, 6, n, &e);
    for (int64_t i = 0; i < n; i++)
        if (i % 3) mb_sp_append(P, i, (int64_t)(urand() * 6), 1 + (double)(i % 2), &e);
    mb_sp_finish(P);
    MB *r10 = cla_matmul_tl_left(P, cx, &e), *q10 = k_matmul_tl(P, x, &e);
    T_MB_EQ(r10, q10, RT, "%s: t(P) %%*%% X, P sparse", what);
    MB *r11 = cla_matmul_tl_left(Y, cx, &e), *q11 = k_matmul_tl(Y, x, &e);
    T_MB_EQ(r11, q11, RT, "%s: t(Y) %%*%% X", what);
    MB *rs[] = {v, B, y, Y, L, w, r1, q1, r2, q2, r3, q3, r4, q4, r5, q5, r6, q6, r7, q7, r8, q8, Sel, r9, q9,
                P, r10, q10, r11, q11};
    for (size_t k = 0; k < sizeof rs / sizeof *rs; k++) mb_release(rs[k]);
    check_chain(what, x, cx);
    /* aggregates */
    OpCode aggs[] = {OP_SUM, OP_SUMSQ, OP_MEAN, OP_AMIN, OP_AMAX};
    for (int a = 0; a < 5; a++)
        for (int dir = DIR_FULL; dir <= DIR_COL; dir++) {
            MB *r = cla_agg(aggs[a], (AggDir)dir, cx, &e), *q = k_agg(aggs[a], (AggDir)dir, x, &e);
            T_MB_EQ(r, q, RT, "%s: %s dir %d", what, op_info[aggs[a]].name, dir);
            mb_release(r);
            mb_release(q);
        }
    /* cellwise: stays compressed, shares the row structures */
    struct { OpCode op; bool un, left; double s; } cw[] = {
        {OP_MULT, false, false, 2.5}, {OP_PLUS, false, false, 1}, {OP_MINUS, false, true, 1},
        {OP_GT, false, false, 0.7}, {OP_POW, false, false, 2}, {OP_ABS, true, false, 0},
        {OP_EXP, true, false, 0}, {OP_ROUND, true, false, 0}};
    MB *sx = cla_self(OP_MULT, cx, &e), *qx = k_binary(OP_MULT, x, x, &e);
    T_CHECK(sx && mb_is_cmb(sx), "%s: X * X stays compressed", what);
    T_MB_EQ(sx, qx, RT, "%s: X * X", what);
    mb_release(sx);
    mb_release(qx);
    for (size_t k = 0; k < sizeof cw / sizeof *cw; k++) {
        MB *r = cw[k].un ? cla_unary(cw[k].op, cx, &e) : cla_scalar(cw[k].op, cx, cw[k].s, cw[k].left, &e);
        MB *q = cw[k].un ? k_unary(cw[k].op, x, &e)
                : cw[k].left ? k_binary_sm(cw[k].op, cw[k].s, x, &e) : k_binary_ms(cw[k].op, x, cw[k].s, &e);
        T_CHECK(r && mb_is_cmb(r), "%s: cellwise %s stays compressed", what, op_info[cw[k].op].name);
        T_MB_EQ(r, q, RT, "%s: cellwise %s", what, op_info[cw[k].op].name);
        if (r && mb_is_cmb(r)) {
            T_CHECK(r->nnz == q->nnz, "%s: cellwise %s nnz %lld want %lld", what, op_info[cw[k].op].name,
                    (long long)r->nnz, (long long)q->nnz);
            /* an operation over the result: row sums */
            MB *rr = cla_agg(OP_SUM, DIR_ROW, r, &e), *qq = k_agg(OP_SUM, DIR_ROW, q, &e);
            T_MB_EQ(rr, qq, RT, "%s: rowSums after %s", what, op_info[cw[k].op].name);
            mb_release(rr);
            mb_release(qq);
        }
        mb_release(r);
        mb_release(q);
    }
    /* indexing */
    int64_t cl = m > 2 ? 1 : 0, cu = m > 3 ? m - 1 : m;
    MB *s1 = cla_slice(cx, 0, n, cl, cu, &e), *p1 = k_slice(x, 0, n, cl, cu, &e);
    T_CHECK(s1 && mb_is_cmb(s1), "%s: column slice stays compressed", what);
    T_MB_EQ(s1, p1, 0, "%s: X[, cols]", what);
    if (s1 && mb_is_cmb(s1)) {
        MB *a = cla_matmul_tl(s1, Y = rnd(n, 2), &e), *b = k_matmul_tl(p1, Y, &e);
        T_MB_EQ(a, b, RT, "%s: t(X[, cols]) %%*%% Y", what);
        mb_release(a);
        mb_release(b);
        mb_release(Y);
    }
    MB *s2 = cla_slice(cx, n / 3, n / 2 + 1, cl, cu, &e), *p2 = k_slice(x, n / 3, n / 2 + 1, cl, cu, &e);
    T_MB_EQ(s2, p2, 0, "%s: X[rows, cols]", what);
    mb_release(s1);
    mb_release(p1);
    mb_release(s2);
    mb_release(p2);
    if (n >= CLA_BLK + 10) check_row_slice(what, x, cx);
}

/* ---- fused Cell/MAgg skeletons over compressed inputs ----
 * Bodies with the generated code's ABI (SpCellDenseFn, codegen/cgen_c.c),
 * run by the compressed skeleton (kernels/spoof_cla.c: once per distinct
 * tuple) and by the ordinary one over the decompressed block. */
/* not sparse-safe: f(0) = 2 */
static void b_exp(const double *const *P, const int64_t *S, const double *sc, int64_t r0, int64_t r1, int64_t j0,
                  int64_t j1, double *const *out, int64_t ldo)
{
    for (int64_t i = r0; i < r1; i++)
        for (int64_t j = j0; j < j1; j++) out[0][(i - r0) * ldo + j - j0] = exp(P[0][i * S[0] + j] / 10) + 1;
}

/* a row vector (input 1) and a scalar (input 2): (x - r[j]) * s */
static void b_row(const double *const *P, const int64_t *S, const double *sc, int64_t r0, int64_t r1, int64_t j0,
                  int64_t j1, double *const *out, int64_t ldo)
{
    for (int64_t i = r0; i < r1; i++)
        for (int64_t j = j0; j < j1; j++)
            out[0][(i - r0) * ldo + j - j0] = (P[0][i * S[0] + j] - P[1][i * S[1] + j]) * sc[2];
}

/* x / s: with s = 0, Inf, -Inf and NaN (0 / 0 at the zeros) */
static void b_div(const double *const *P, const int64_t *S, const double *sc, int64_t r0, int64_t r1, int64_t j0,
                  int64_t j1, double *const *out, int64_t ldo)
{
    const double s = sc[1];
    for (int64_t i = r0; i < r1; i++) {
        const double *x = P[0] + i * S[0];
        double *o = out[0] + (i - r0) * ldo;
        for (int64_t j = j0; j < j1; j++) o[j - j0] = x[j] / s;
    }
}

/* x^2 (sparse-safe), and with sc[1] = 1 a second output 3x - 1 (MAgg) */
static void b_sq(const double *const *P, const int64_t *S, const double *sc, int64_t r0, int64_t r1, int64_t j0,
                 int64_t j1, double *const *out, int64_t ldo)
{
    for (int64_t i = r0; i < r1; i++)
        for (int64_t j = j0; j < j1; j++) {
            double v = P[0][i * S[0] + j];
            out[0][(i - r0) * ldo + j - j0] = v * v;
            if (sc[1] == 1) out[1][(i - r0) * ldo + j - j0] = 3 * v - 1;
        }
}

/* Row bodies (SpRowDenseFn): the main row a times the column vector c
 * (input 1) plus the row vector r (input 2): the row (NO_AGG) or its sum
 * (ROW_AGG, L[0] cells). */
static void r_body(const double *const *P, const int64_t *S, const int64_t *L, const double *sc, int64_t r0,
                   int64_t r1, double *out, int64_t ldo, double *tmp)
{
    for (int64_t i = r0; i < r1; i++) {
        const double *a = P[0] + i * S[0], c = P[1][i];
        double *o = out + (i - r0) * ldo, s = 0;
        for (int64_t j = 0; j < L[0]; j++) {
            double v = a[j] * c + P[2][j];
            if (sc[3] == 0) o[j] = v;
            else s += v;
        }
        if (sc[3] != 0) o[0] = s;
    }
}

/* A Row body over the main row's products with B (input 1, m x K) and
 * v (input 2, m x 1), as the generated code reads them: from P[4] when
 * the skeleton gives them (spoof.h, SpoofRow.nprod), else from the main
 * row (the sides arrive transposed). Output row: a %*% B + r (input 3),
 * then a %*% v. */
static void rp_body(const double *const *P, const int64_t *S, const int64_t *L, const double *sc, int64_t r0,
                    int64_t r1, double *out, int64_t ldo, double *tmp)
{
    const double *pq = P[4];
    int64_t m = L[0], K = L[1], W = L[1] + L[2];
    for (int64_t i = r0; i < r1; i++) {
        const double *a = P[0] + i * S[0];
        double *o = out + (i - r0) * ldo;
        for (int64_t c = 0; c <= K; c++) {
            double q = 0;
            if (pq) q = pq[(i - r0) * W + c];
            else for (int64_t j = 0; j < m; j++) q += a[j] * (c < K ? P[1][c * m + j] : P[2][j]);
            o[c] = c < K ? q + P[3][c] : q;
        }
    }
}

/* The main row's products looked up per group (cla_rowmm_*) against the
 * compressed product, over ranges of rows read in uneven blocks (3, 5
 * and 9 columns in turn: rows padded to 4, 8 and 16, cla_ops.c pad_k);
 * and a
 * Row operator taking them (with and without decompressed rows: the
 * body reads only the products), with a finite side and with an Inf in
 * it (products not looked up), against the ordinary skeleton over the
 * decompressed block. */
static void check_row_prod(const char *what, const MB *x, const MB *cx)
{
    BrErr e = {0};
    static int turn;
    const int64_t K = (int64_t[]){3, 5, 9}[turn++ % 3], m = x->cols, n = x->rows;
    MB *d = cmb_decompress(cx, &e), *B = widen(rnd(m, 3), K), *v = rnd(m, 1), *r = widen(rnd(1, 3), K);
    MB *q0 = cla_matmul_right(cx, B, &e), *q = q0 && q0->sparse ? mb_to_dense(q0, &e) : q0;
    if (q != q0) mb_release(q0);
    ClaRowMM *mm = cla_rowmm_new(cx, B, &e);
    T_CHECK(q && mm, "%s: rowmm built (%s)", what, e.msg);
    int64_t starts[] = {0, n / 3, n - 1 > 0 ? n - 1 : 0};
    for (size_t s = 0; mm && q && s < sizeof starts / sizeof *starts; s++) {
        ClaRowMMCur *c = cla_rowmm_open(mm, starts[s]);
        double *o = malloc((size_t)(CLA_BLK * K) * sizeof(double));
        int bad = 0;
        for (int64_t lo = starts[s], len = 7; c && lo < n; lo += len, len = len * 3 % CLA_BLK + 1) {
            if (len > n - lo) len = n - lo;
            cla_rowmm_read(c, len, o);
            for (int64_t i = 0; i < len * K; i++) {
                double a = o[i], b = q->d[lo * K + i];
                bad += !(a == b || (isnan(a) && isnan(b)) || fabs(a - b) <= RT * fmax(1, fabs(b)));
            }
        }
        T_CHECK(c && bad == 0, "%s: rowmm from row %lld: %d cells differ", what, (long long)starts[s], bad);
        cla_rowmm_close(c);
        free(o);
    }
    cla_rowmm_free(mm);
    for (int inf = 0; inf < 2; inf++)
        for (int only = 0; only < 2; only++) {
            /* (the last row's second cell: B has a single row when X has one column) */
            if (inf) { B->d[(m - 1) * K + 1] = INFINITY; mb_fin_set(B, true); }
            const MB *ms[4] = {cx, B, v, r}, *md[4] = {d, B, v, r};
            int mode[4] = {SPM_FULL, SPM_MAT, SPM_MAT, SPM_ROW};
            double sc[4] = {0};
            int64_t L[4] = {m, K, 1, K};
            SpoofRow op = {.in = {4, ms, mode, sc}, .L = L, .rows = n, .main = 0, .var = SPR_NO_AGG,
                           .orows = n, .ocols = K + 1, .fd = rp_body, .nprod = 2, .prod_in = {1, 2},
                           .prod_only = only};
            SpoofRow ref = op;
            ref.in.m = md;
            MB *o1 = NULL, *o2 = NULL;
            double v1 = 0, v2 = 0;
            int rc1 = k_spoof_row(&op, &o1, &v1, &e), rc2 = k_spoof_row(&ref, &o2, &v2, &e);
            T_CHECK(rc1 == 0 && rc2 == 0, "%s: Row with products ran (%s)", what, e.msg);
            T_MB_EQ(o1, o2, RT, "%s: Row with looked-up products (side %s, rows %s)", what, inf ? "with Inf" : "finite",
                    only ? "not decompressed" : "decompressed");
            mb_release(o1);
            mb_release(o2);
        }
    mb_release(q);
    mb_release(d);
    mb_release(B);
    mb_release(v);
    mb_release(r);
}

/* A Row body of the logistic gradient's shape over the main row a
 * (input 0), B (input 1, m x K, its products with a from P[3] when the
 * skeleton gives them) and y (input 2, a column vector): per row
 * q = 1 / (1 + exp(-(a %*% B))) - y (K values) and s = sum(q). Outputs:
 * t(X) %*% Q (COL_T_AGG, the partial transposed: K x m), with `multi`
 * also sum(Q) (FULL_AGG) and t(s) %*% X (COL_T_AGG with the main row on
 * the right: m x 1). Where the skeleton takes the q rows (P[4], spoof.h
 * SpoofRow.tq_out) they go there (Q's K values, then s) instead of into
 * the partials, as the generated code does. */
static void tq_rows(const double *const *P, const int64_t *S, const int64_t *L, int64_t r0, int64_t r1, double *out,
                    bool multi)
{
    const double *pq = P[3];
    double *tq = (double *)P[4];
    int64_t m = L[0], K = L[1], tw = multi ? K + 1 : K;
    double *o0 = out, *o1 = out + K * m, *o2 = o1 + 2;
    for (int64_t i = r0; i < r1; i++) {
        const double *a = P[0] + i * S[0];
        double q[8], s = 0;
        for (int64_t c = 0; c < K; c++) {
            double p = 0;
            if (pq) p = pq[(i - r0) * K + c];
            else for (int64_t j = 0; j < m; j++) p += a[j] * P[1][c * m + j];
            q[c] = 1 / (1 + exp(-p)) - P[2][i];
            s += q[c];
        }
        if (multi) o1[0] += s;
        if (tq) {
            for (int64_t c = 0; c < K; c++) tq[(i - r0) * tw + c] = q[c];
            if (multi) tq[(i - r0) * tw + K] = s;
            continue;
        }
        for (int64_t c = 0; c < K; c++)
            for (int64_t j = 0; j < m; j++) o0[c * m + j] += a[j] * q[c];
        for (int64_t j = 0; multi && j < m; j++) o2[j] += s * a[j];
    }
}

static void tq_single(const double *const *P, const int64_t *S, const int64_t *L, const double *sc, int64_t r0,
                      int64_t r1, double *out, int64_t ldo, double *tmp)
{
    tq_rows(P, S, L, r0, r1, out, false);
}

static void tq_multi(const double *const *P, const int64_t *S, const int64_t *L, const double *sc, int64_t r0,
                     int64_t r1, double *out, int64_t ldo, double *tmp)
{
    tq_rows(P, S, L, r0, r1, out, true);
}

/* t(X) %*% q roots over a compressed X (SpoofRow.tq_out, cla_rowtl_*):
 * the q rows accumulated per tuple, X's rows not read (prod_only) or
 * read, the per-tuple path forced and by its rule, a single output and
 * three outputs (with the main row on either side of t(.) %*% (.) and a
 * full aggregate between), against the ordinary skeleton over the
 * decompressed block (2 and 5 columns of B in turn: q rows of 2, 3,
 * 5 and 6 values, padded to 2, 4 and 8); y with an Inf (q not finite: the range runs again
 * over decompressed rows, where X's zeros meet it; overflowing sums:
 * check_row_tq_overflow). It must have taken the q rows (spoofRowCLAtl)
 * exactly where forced over a finite X. */
static bool same_val(double a, double b);
static void check_row_tq(const char *what, const MB *x, const MB *cx)
{
    BrErr e = {0};
    static int turn;
    const int64_t K = turn++ % 2 ? 5 : 2, m = x->cols, n = x->rows;
    MB *d = cmb_decompress(cx, &e), *B = widen(rnd(m, 2), K), *y = rnd(n, 1);
    bool fin = !mb_has_nonfinite(cx);
    struct { int multi, look, only, ybad; } cases[] = {
        {1, 1, 1, 0}, {1, 1, 0, 0}, {0, 1, 1, 0}, {1, 0, 1, 0}, {1, 1, 1, 1},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        MB *yy = mb_copy(y, &e);
        if (cases[k].ybad == 1) { yy->d[n / 2] = INFINITY; mb_fin_set(yy, true); }
        const MB *ms[3] = {cx, B, yy}, *md[3] = {d, B, yy};
        int mode[3] = {SPM_FULL, SPM_MAT, SPM_COL};
        double sc[3] = {0};
        int64_t L[3] = {m, K, 1};
        bool multi = cases[k].multi;
        SpoofRow op = {.in = {3, ms, mode, sc}, .L = L, .rows = n, .main = 0, .fd = multi ? tq_multi : tq_single,
                       .nprod = 1, .prod_in = {1}, .prod_only = cases[k].only, .ntq = multi ? 2 : 1,
                       .tq_out = {0, 2}, .tq_left = {true, false}, .cla_look = cases[k].look};
        if (multi) {
            op.var = SPR_MULTI;
            op.nout = 3;
            op.mo[0] = (SpRowOut){SPR_COL_T_AGG, SPA_NONE, m, K};
            op.mo[1] = (SpRowOut){SPR_FULL_AGG, SPA_SUM, 1, K};
            op.mo[2] = (SpRowOut){SPR_COL_T_AGG, SPA_NONE, 1, m};
        } else {
            op.var = SPR_COL_T_AGG;
            op.orows = m;
            op.ocols = K;
        }
        SpoofRow ref = op;
        ref.in.m = md;
        MB *o1[3] = {NULL}, *o2[3] = {NULL};
        double v1[3] = {0}, v2[3] = {0};
        ClaStats st;
        cla_stats_init(&st);
        ClaStats *prev = cla_stats_bind(&st);
        int rc1 = k_spoof_row(&op, o1, v1, &e);
        cla_stats_bind(prev);
        int rc2 = k_spoof_row(&ref, o2, v2, &e);
        T_CHECK(rc1 == 0 && rc2 == 0, "%s: Row with q rows (case %zu) ran (%s)", what, k, e.msg);
        if (cases[k].look == 1)
            T_CHECK(op_count(&st, "spoofRowCLAtl") == (fin ? 1 : 0), "%s: q rows taken per tuple (case %zu): %lld",
                    what, k, (long long)op_count(&st, "spoofRowCLAtl"));
        cla_stats_destroy(&st);
        for (int t = 0; t < (multi ? 3 : 1); t++) {
            if (multi && t == 1) {
                T_CHECK(same_val(v1[1], v2[1]), "%s: sum(q) (case %zu): %.17g want %.17g", what, k, v1[1], v2[1]);
                continue;
            }
            T_MB_EQ(o1[t], o2[t], RT, "%s: t(X) %%*%% q output %d (case %zu)", what, t, k);
            mb_release(o1[t]);
            mb_release(o2[t]);
        }
        mb_release(yy);
    }
    mb_release(d);
    mb_release(B);
    mb_release(y);
}

/* t(X) %*% q roots whose tuple sums overflow (q about 1e306 on 3000
 * rows): a tuple holding a zero would give 0 * Inf = NaN where the
 * ordinary skeleton adds zeros, so the range runs again over
 * decompressed rows (DDC groups keep the zero tuple; OLE/RLE skip it). */
static void check_row_tq_overflow(void)
{
    BrErr e = {0};
    const int64_t n = 3000, K = 2;
    MB *x = mb_dense(n, 2, &e), *B = rnd(2, K), *y = mb_dense(n, 1, &e);
    for (int64_t i = 0; i < n; i++) {
        x->d[2 * i] = 1;
        x->d[2 * i + 1] = i == 7 ? 0.5 : 0;
        y->d[i] = -1e306;
    }
    mb_recount_nnz(x);
    mb_recount_nnz(y);
    int encs[] = {CLA_DDC1, CLA_OLE, -1};
    for (size_t k = 0; k < sizeof encs / sizeof *encs; k++) {
        ClaPlanOpts o = cla_plan_defaults();
        o.force = true;
        o.enc = encs[k];
        MB *cx = cla_compress(x, &o, &e);
        T_CHECK(cx && mb_is_cmb(cx), "tq overflow: compressed (%s)", e.msg);
        if (!cx || !mb_is_cmb(cx)) { mb_release(cx); continue; }
        const MB *ms[3] = {cx, B, y}, *md[3] = {x, B, y};
        int mode[3] = {SPM_FULL, SPM_MAT, SPM_COL};
        double sc[3] = {0};
        int64_t L[3] = {2, K, 1};
        SpoofRow op = {.in = {3, ms, mode, sc}, .L = L, .rows = n, .main = 0, .fd = tq_single, .nprod = 1,
                       .prod_in = {1}, .prod_only = true, .ntq = 1, .tq_out = {0}, .tq_left = {true}, .cla_look = 1,
                       .var = SPR_COL_T_AGG, .orows = 2, .ocols = K};
        SpoofRow ref = op;
        ref.in.m = md;
        MB *o1 = NULL, *o2 = NULL;
        double v = 0;
        int rc1 = k_spoof_row(&op, &o1, &v, &e), rc2 = k_spoof_row(&ref, &o2, &v, &e);
        T_CHECK(rc1 == 0 && rc2 == 0, "tq overflow enc %d: ran (%s)", encs[k], e.msg);
        T_MB_EQ(o1, o2, RT, "tq overflow enc %d: t(X) %%*%% q", encs[k]);
        T_CHECK(o1 && isinf(mb_get(o1, 0, 0)) && isfinite(mb_get(o1, 1, 0)), "tq overflow enc %d: Inf and finite",
                encs[k]);
        mb_release(o1);
        mb_release(o2);
        mb_release(cx);
    }
    mb_release(x);
    mb_release(B);
    mb_release(y);
}

static void check_row(const char *what, const MB *x, const MB *cx)
{
    BrErr e = {0};
    MB *d = cmb_decompress(cx, &e), *c = rnd(x->rows, 1), *r = rnd(1, x->cols);
    for (int agg = 0; agg < 2; agg++) {
        const MB *ms[4] = {cx, c, r, NULL}, *md[4] = {d, c, r, NULL};
        int mode[4] = {SPM_FULL, SPM_COL, SPM_ROW, SPM_SCALAR};
        double sc[4] = {0, 0, 0, agg};
        int64_t L[4] = {x->cols, 1, x->cols, 0};
        SpoofRow op = {.in = {4, ms, mode, sc}, .L = L, .rows = x->rows, .main = 0,
                       .var = agg ? SPR_ROW_AGG : SPR_NO_AGG, .orows = x->rows, .ocols = agg ? 1 : x->cols,
                       .fd = r_body};
        SpoofRow ref = op;
        ref.in.m = md;
        T_CHECK(k_spoof_row_cla_ok(&op), "%s: Row over a compressed main", what);
        MB *o1 = NULL, *o2 = NULL;
        double v1 = 0, v2 = 0;
        int rc1 = k_spoof_row(&op, &o1, &v1, &e), rc2 = k_spoof_row(&ref, &o2, &v2, &e);
        T_CHECK(rc1 == 0 && rc2 == 0, "%s: Row %s ran (%s)", what, agg ? "row_agg" : "no_agg", e.msg);
        T_MB_EQ(o1, o2, 0, "%s: Row %s over compressed rows", what, agg ? "row_agg" : "no_agg");
        mb_release(o1);
        mb_release(o2);
    }
    mb_release(d);
    mb_release(c);
    mb_release(r);
}

static bool same_val(double a, double b)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    if (isinf(a) || isinf(b)) return a == b;
    return fabs(a - b) <= RT * fmax(1, fmax(fabs(a), fabs(b)));
}

/* The ordinary skeleton's results over one matrix, kept across the
 * encodings and thread counts that run_mat checks it with: the checks
 * of a matrix run the same operators over the same inputs (drawn once
 * per matrix; later draws still advance the generator, so the data of
 * later checks do not move) in the same order for every compressed
 * form, and the reference reads the ordinary block, whose bits do not
 * depend on the form (check_ops: decompression is exact). Computing
 * them once took half of the sweep's time at 140000 rows. */
#define MEMO_MAX 192
typedef struct RefMemo {
    const MB *x;                 /* the matrix the results are of (NULL: none) */
    int next, n;                 /* the next call's index, results kept */
    MB *o[MEMO_MAX];
    double v[MEMO_MAX][SPOOF_MAXOUT];
    int rc[MEMO_MAX];
    MB *in[3];                   /* the inputs drawn for x */
} RefMemo;
static RefMemo memo_fused, memo_cells;

static void memo_drop(RefMemo *m)
{
    for (int k = 0; k < m->n; k++) mb_release(m->o[k]);
    for (int k = 0; k < 3; k++) mb_release(m->in[k]);
    memset(m, 0, sizeof *m);
}

/* before a matrix's blocks are released (its address may come back) */
static void memo_drop_all(void)
{
    memo_drop(&memo_fused);
    memo_drop(&memo_cells);
}

/* starts a check of x */
static void memo_enter(RefMemo *m, const MB *x)
{
    if (m->x != x) {
        memo_drop(m);
        m->x = x;
    }
    m->next = 0;
}

/* the check's input k: drawn (fresh, released here) the first time for
 * x, the first draw after */
static const MB *memo_input(RefMemo *m, int k, MB *drawn)
{
    if (!m->in[k]) m->in[k] = drawn;
    else mb_release(drawn);
    return m->in[k];
}

/* k_spoof_cell(ref) as the next call of the check over x: computed the
 * first time, kept after; *o is the caller's to release */
static int memo_cell(RefMemo *m, const SpoofCell *ref, MB **o, double *v, BrErr *e)
{
    int k = m->next++;
    if (k < m->n) {
        *o = m->o[k] ? mb_retain(m->o[k]) : NULL;
        memcpy(v, m->v[k], sizeof m->v[k]);
        return m->rc[k];
    }
    int rc = k_spoof_cell(ref, o, v, e);
    if (k < MEMO_MAX && k == m->n) {
        m->o[k] = *o ? mb_retain(*o) : NULL;
        memcpy(m->v[k], v, sizeof m->v[k]);
        m->rc[k] = rc;
        m->n++;
    }
    return rc;
}

static void check_fused(const char *what, const MB *x, const MB *cx)
{
    BrErr e = {0};
    RefMemo *mm = &memo_fused;
    memo_enter(mm, x);
    const MB *rv = memo_input(mm, 0, rnd(1, x->cols));
    struct { const char *name; SpCellDenseFn f; int nout; double s; } bodies[] = {
        {"x^2", b_sq, 1, 0}, {"exp(x/10)+1", b_exp, 1, 0}, {"(x-r)*s", b_row, 1, -1.5},
        {"x/0", b_div, 1, 0}, {"x/-2", b_div, 1, -2}, {"x^2, 3x-1", b_sq, 2, 1}};
    int aggs[] = {SPA_SUM, SPA_SUMSQ, SPA_MIN, SPA_MAX, SPA_MEAN};
    for (size_t b = 0; b < sizeof bodies / sizeof *bodies; b++) {
        const MB *ms[3] = {cx, bodies[b].f == b_row ? rv : NULL, NULL}, *md[3] = {x, ms[1], NULL};
        int mode[3] = {SPM_FULL, bodies[b].f == b_row ? SPM_ROW : SPM_SCALAR, SPM_SCALAR};
        double sc[3] = {0, bodies[b].s, bodies[b].s};
        for (int dir = SPD_NONE; dir <= SPD_FULL; dir++)
            for (int a = 0; a < 5; a++) {
                if ((dir == SPD_NONE && a > 0) || (bodies[b].nout > 1 && dir != SPD_FULL)) continue;
                SpoofCell op = {.in = {3, ms, mode, sc}, .rows = x->rows, .cols = x->cols, .main = 0,
                                .dir = dir, .nout = bodies[b].nout, .fd = bodies[b].f};
                for (int r = 0; r < op.nout; r++) op.agg[r] = dir == SPD_NONE ? SPA_NONE : aggs[(a + r) % 5];
                SpoofCell ref = op;
                ref.in.m = md;
                MB *o1 = NULL, *o2 = NULL;
                double v1[SPOOF_MAXOUT] = {0}, v2[SPOOF_MAXOUT] = {0};
                bool declined = true;
                int rc1 = k_spoof_cell_cla(&op, &o1, v1, &declined, &e);
                int rc2 = memo_cell(mm, &ref, &o2, v2, &e);
                T_CHECK(rc1 == 0 && rc2 == 0 && !declined, "%s: fused %s dir %d: ran (%s)", what, bodies[b].name,
                        dir, e.msg);
                if (dir == SPD_FULL) {
                    for (int r = 0; r < op.nout; r++)
                        T_CHECK(same_val(v1[r], v2[r]), "%s: fused %s agg %d out %d: %.17g want %.17g", what,
                                bodies[b].name, op.agg[r], r, v1[r], v2[r]);
                } else {
                    T_MB_EQ(o1, o2, RT, "%s: fused %s dir %d agg %d", what, bodies[b].name, dir, op.agg[0]);
                    if (dir == SPD_NONE) {
                        T_CHECK(o1 && mb_is_cmb(o1), "%s: fused %s no_agg stays compressed", what, bodies[b].name);
                        T_CHECK(o1 && o2 && o1->nnz == o2->nnz, "%s: fused %s no_agg nnz", what, bodies[b].name);
                    }
                }
                mb_release(o1);
                mb_release(o2);
            }
    }
    /* declined: a column vector differs per row */
    MB *cv = rnd(x->rows, 1);
    const MB *ms[2] = {cx, cv};
    int mode[2] = {SPM_FULL, SPM_COL};
    double sc[2] = {0, 0};
    SpoofCell op = {.in = {2, ms, mode, sc}, .rows = x->rows, .cols = x->cols, .main = 0, .dir = SPD_FULL,
                    .nout = 1, .agg = {SPA_SUM}, .fd = b_sq};
    T_CHECK(!k_spoof_cell_cla_ok(&op), "%s: a column-vector input is not per distinct value", what);
    mb_release(cv);
}

/* ---- Cell/MAgg per cell over compressed rows (kernels/spoof_cell.c) ----
 * Plans whose other inputs differ per row (column vectors, full matrices)
 * read the compressed inputs through windows of decompressed rows. */
/* x * c[i] + y (input 1 a column vector, input 2 a full matrix) */
static void b_colfull(const double *const *P, const int64_t *S, const double *sc, int64_t r0, int64_t r1,
                      int64_t j0, int64_t j1, double *const *out, int64_t ldo)
{
    for (int64_t i = r0; i < r1; i++)
        for (int64_t j = j0; j < j1; j++) {
            double v = P[0][i * S[0] + j] * P[1][i] + P[2][i * S[2] + j];
            out[0][(i - r0) * ldo + j - j0] = v;
            if (sc[3] == 1) out[1][(i - r0) * ldo + j - j0] = v * v;
        }
}

/* In-loop full aggregates with the generated code's ABI (SpCellAggFn):
 * the q-th cell of a row (b_colfull_fa) or of the call (b_flat_fa) into
 * lane q % SPOOF_AL of each output; the aggregates are the op's, set in
 * fa_agg before the call (the bodies only read them). */
static int fa_agg[SPOOF_MAXOUT];

static void fa_lane(double *acc, int t, int64_t q, double v)
{
    double *s = acc + 2 * SPOOF_AL * t, *c = s + SPOOF_AL;
    int l = (int)(q % SPOOF_AL);
    if (fa_agg[t] == SPA_MIN) s[l] = (v < s[l] || v != v) ? v : s[l];
    else if (fa_agg[t] == SPA_MAX) s[l] = (v > s[l] || v != v) ? v : s[l];
    else {
        double y = (fa_agg[t] == SPA_SUMSQ ? v * v : v) + c[l], u = s[l] + y;
        c[l] = y - (u - s[l]);
        s[l] = u;
    }
}

static void b_colfull_fa(const double *const *P, const int64_t *S, const double *sc, int64_t r0, int64_t r1,
                         int64_t n, double *acc)
{
    for (int64_t i = r0; i < r1; i++)
        for (int64_t j = 0; j < n; j++) {
            double v = P[0][i * S[0] + j] * P[1][i] + P[2][i * S[2] + j];
            fa_lane(acc, 0, j, v);
            if (sc[3] == 1) fa_lane(acc, 1, j, v * v);
        }
}

/* x * s + y over full inputs only (flat cells): inputs x, y, s, and a
 * scalar flag for the second output (its square) */
static void b_flat(const double *const *P, const int64_t *S, const double *sc, int64_t r0, int64_t r1,
                   int64_t j0, int64_t j1, double *const *out, int64_t ldo)
{
    for (int64_t i = r0; i < r1; i++)
        for (int64_t j = j0; j < j1; j++) {
            double v = P[0][i * S[0] + j] * sc[2] + P[1][i * S[1] + j];
            out[0][(i - r0) * ldo + j - j0] = v;
            if (sc[3] == 1) out[1][(i - r0) * ldo + j - j0] = v * v;
        }
}

static void b_flat_ff(const double *const *P, const double *sc, int64_t c0, int64_t c1, double *const *out)
{
    for (int64_t c = c0; c < c1; c++) {
        double v = P[0][c] * sc[2] + P[1][c];
        out[0][c - c0] = v;
        if (sc[3] == 1) out[1][c - c0] = v * v;
    }
}

static void b_flat_fa(const double *const *P, const int64_t *S, const double *sc, int64_t r0, int64_t r1, int64_t n,
                      double *acc)
{
    for (int64_t c = r0; c < r1; c++) {
        double v = P[0][c] * sc[2] + P[1][c];
        fa_lane(acc, 0, c - r0, v);
        if (sc[3] == 1) fa_lane(acc, 1, c - r0, v * v);
    }
}

/* sparse-safe x * y over the non-zeros of a sparse main x (input 0) */
static void s_mul(const double *const *P, const int64_t *S, const double *sc, int64_t i, const int32_t *ci,
                  const double *av, int64_t nz, double *const *out)
{
    for (int64_t k = 0; k < nz; k++) out[0][k] = av[k] * P[2][i * S[2] + ci[k]];
}

static void d_mul(const double *const *P, const int64_t *S, const double *sc, int64_t r0, int64_t r1, int64_t j0,
                  int64_t j1, double *const *out, int64_t ldo)
{
    for (int64_t i = r0; i < r1; i++)
        for (int64_t j = j0; j < j1; j++) out[0][(i - r0) * ldo + j - j0] = P[0][i * S[0] + j] * P[2][i * S[2] + j];
}

/* Runs op (compressed inputs ms) and the same over md (ordinary) with
 * k_spoof_cell; no_agg and row-wise results are computed cell by cell in
 * the same order (exact); column and full aggregates of the ordinary
 * path may group the cells differently (Kahan sums: the two differ by a
 * few ulps of the result, far below RT). */
static void cell_pair(const char *what, const char *name, SpoofCell op, const MB **md, RefMemo *mm)
{
    BrErr e = {0};
    SpoofCell ref = op;
    ref.in.m = md;
    MB *o1 = NULL, *o2 = NULL;
    double v1[SPOOF_MAXOUT] = {0}, v2[SPOOF_MAXOUT] = {0};
    int rc1 = k_spoof_cell(&op, &o1, v1, &e), rc2 = mm ? memo_cell(mm, &ref, &o2, v2, &e) : k_spoof_cell(&ref, &o2, v2, &e);
    T_CHECK(rc1 == 0 && rc2 == 0, "%s: %s dir %d ran (%s)", what, name, op.dir, e.msg);
    if (op.dir == SPD_FULL) {
        for (int r = 0; r < op.nout; r++)
            T_CHECK(same_val(v1[r], v2[r]), "%s: %s agg %d out %d: %.17g want %.17g", what, name, op.agg[r], r,
                    v1[r], v2[r]);
    } else {
        T_MB_EQ(o1, o2, op.dir == SPD_COL ? RT : 0, "%s: %s dir %d agg %d", what, name, op.dir, op.agg[0]);
    }
    mb_release(o1);
    mb_release(o2);
}

static void check_cell_rows(const char *what, const MB *x, const MB *cx)
{
    BrErr e = {0};
    RefMemo *mm = &memo_cells;
    memo_enter(mm, x);
    const MB *d = x, *cv = memo_input(mm, 0, rnd(x->rows, 1)), *y = memo_input(mm, 1, rnd(x->rows, x->cols));
    int aggs[] = {SPA_SUM, SPA_SUMSQ, SPA_MIN, SPA_MAX, SPA_MEAN};
    /* the full side input: ordinary, or compressed (cx itself) */
    for (int side = 0; side < 2; side++) {
        const MB *ms[4] = {cx, cv, side ? cx : y, NULL}, *md[4] = {d, cv, side ? d : y, NULL};
        int mode[4] = {SPM_FULL, SPM_COL, SPM_FULL, SPM_SCALAR};
        for (int nout = 1; nout <= 2; nout++) {
            double sc[4] = {0, 0, 0, nout == 2};
            for (int dir = SPD_NONE; dir <= SPD_FULL; dir++)
                for (int a = 0; a < 5; a++) {
                    if ((dir == SPD_NONE && a > 0) || (nout > 1 && dir != SPD_FULL)) continue;
                    SpoofCell op = {.in = {4, ms, mode, sc}, .rows = x->rows, .cols = x->cols, .main = 0,
                                    .dir = dir, .nout = nout, .fd = b_colfull};
                    for (int r = 0; r < nout; r++) op.agg[r] = dir == SPD_NONE ? SPA_NONE : aggs[(a + r) % 5];
                    T_CHECK(!k_spoof_cell_cla_ok(&op), "%s: column vector: not per distinct value", what);
                    cell_pair(what, side ? "x*c+x" : "x*c+y", op, md, mm);
                    if (dir != SPD_FULL) continue;
                    memcpy(fa_agg, op.agg, sizeof fa_agg);
                    op.fa = b_colfull_fa;   /* in the loop (rows of at least SPOOF_AL columns) */
                    cell_pair(what, side ? "x*c+x in-loop" : "x*c+y in-loop", op, md, mm);
                }
        }
    }
    /* a plan without vectors (flat cells over window blocks), with and
     * without in-loop aggregates; the side input ordinary or compressed */
    for (int side = 0; side < 2; side++) {
        const MB *ms[4] = {cx, side ? cx : y, NULL, NULL}, *md[4] = {d, side ? d : y, NULL, NULL};
        int mode[4] = {SPM_FULL, SPM_FULL, SPM_SCALAR, SPM_SCALAR};
        for (int nout = 1; nout <= 2; nout++) {
            double sc[4] = {0, 0, 1.5, nout == 2};
            for (int dir = SPD_NONE; dir <= SPD_FULL; dir++)
                for (int a = 0; a < 5; a++) {
                    if ((dir == SPD_NONE && a > 0) || (nout > 1 && dir != SPD_FULL)) continue;
                    SpoofCell op = {.in = {4, ms, mode, sc}, .rows = x->rows, .cols = x->cols, .main = 0,
                                    .dir = dir, .nout = nout, .fd = b_flat, .ff = b_flat_ff};
                    for (int r = 0; r < nout; r++) op.agg[r] = dir == SPD_NONE ? SPA_NONE : aggs[(a + r) % 5];
                    cell_pair(what, side ? "x*s+x flat" : "x*s+y flat", op, md, mm);
                    if (dir != SPD_FULL) continue;
                    memcpy(fa_agg, op.agg, sizeof fa_agg);
                    op.fa = b_flat_fa;
                    cell_pair(what, side ? "x*s+x flat in-loop" : "x*s+y flat in-loop", op, md, mm);
                }
        }
    }
    /* a sparse main input with a compressed full side input (sparse-safe) */
    MB *dz = mb_dense(x->rows, x->cols, &e);
    for (int64_t i = 0; dz && i < x->rows * x->cols; i++) dz->d[i] = i % 4 ? 0 : y->d[i];   /* 1 in 4 kept */
    if (dz) mb_recount_nnz(dz);
    MB *thin = dz ? mb_to_sparse(dz, &e) : NULL;
    T_CHECK(thin && thin->sparse, "%s: sparse main input", what);
    if (thin && thin->sparse) {
        const MB *ms[3] = {thin, NULL, cx}, *md[3] = {thin, NULL, d};
        int mode[3] = {SPM_FULL, SPM_SCALAR, SPM_FULL};
        double sc[3] = {0};
        for (int dir = SPD_NONE; dir <= SPD_FULL; dir++)
            for (int a = 0; a < 5; a++) {
                if (dir == SPD_NONE && a > 0) continue;
                SpoofCell op = {.in = {3, ms, mode, sc}, .rows = x->rows, .cols = x->cols, .main = 0, .dir = dir,
                                .nout = 1, .agg = {dir == SPD_NONE ? SPA_NONE : aggs[a]}, .fd = d_mul,
                                .fs = s_mul, .sparse_safe = true};
                cell_pair(what, "sparse*cx", op, md, mm);
            }
    }
    mb_release(thin);
    mb_release(dz);
}

/* ---- Outer over compressed rows (kernels/spoof_outer.c) ----
 * A body with the generated code's ABI (SpOuterFn): at each non-zero
 * w of W (input 0), v = w * (U_i . V_j + X_ij) with X (input 3) a full
 * side input; no_agg: v; full_agg: the Kahan pair of v^2; left: v * Z_j
 * added to the row (Z input 4, by rows of W); right: v * Z_i added to
 * row j (by columns of W). */
static void okadd(double *s, double *c, double x)
{
    double y = x + *c, t = *s + y;
    *c = y - (t - *s);
    *s = t;
}

static double ov(const double *const *P, const int64_t *S, const int64_t *L, int64_t i, int64_t j, double w)
{
    int64_t r = L[1];
    double uv = 0;
    for (int64_t q = 0; q < r; q++) uv += P[1][i * r + q] * P[2][j * r + q];
    return w * (uv + P[3][i * S[3] + j]);
}

static void o_row(const double *const *P, const int64_t *S, const int64_t *L, const double *sc, int64_t i,
                  const int32_t *ix, const double *wv, int64_t nz, double *out)
{
    for (int64_t k = 0; k < nz; k++) {
        double v = ov(P, S, L, i, ix[k], wv[k]);
        if (sc[5] == SPO_NO_AGG) out[k] = v;
        else if (sc[5] == SPO_FULL_AGG) okadd(&out[0], &out[1], v * v);
        else for (int64_t c = 0; c < L[4]; c++) out[c] += v * P[4][ix[k] * L[4] + c];
    }
}

/* by columns: j is the column of W, ix its rows; X read at (ix[k], j) */
static void o_col(const double *const *P, const int64_t *S, const int64_t *L, const double *sc, int64_t j,
                  const int32_t *ix, const double *wv, int64_t nz, double *out)
{
    for (int64_t k = 0; k < nz; k++) {
        double v = ov(P, S, L, ix[k], j, wv[k]);
        for (int64_t c = 0; c < L[4]; c++) out[c] += v * P[4][ix[k] * L[4] + c];
    }
}

static void check_outer(const char *what, const MB *x, const MB *cx)
{
    BrErr e = {0};
    int64_t n = x->rows, m = x->cols, r = 3, k = 2;
    MB *d = cmb_decompress(cx, &e), *U = rnd(n, r), *V = rnd(m, r), *X = rnd(n, m);
    MB *Zl = rnd(m, k), *Zr = rnd(n, k);
    int vars[] = {SPO_NO_AGG, SPO_FULL_AGG, SPO_LEFT, SPO_RIGHT, SPO_RIGHT_T};
    for (size_t q = 0; q < sizeof vars / sizeof *vars; q++)
        for (int side = 0; side < 2; side++) {
            int var = vars[q];
            const MB *Z = var == SPO_RIGHT || var == SPO_RIGHT_T ? Zr : Zl;
            /* the side input X: ordinary, or compressed (W itself) */
            const MB *ms[6] = {cx, U, V, side ? cx : X, Z, NULL}, *md[6] = {d, U, V, side ? d : X, Z, NULL};
            int mode[6] = {SPM_FULL, SPM_MAT, SPM_MAT, SPM_FULL, SPM_MAT, SPM_SCALAR};
            double sc[6] = {0, 0, 0, 0, 0, var};
            int64_t L[6] = {m, r, r, m, k, 0};
            SpoofOuter op = {.in = {6, ms, mode, sc}, .L = L, .main = 0, .v = 2, .m = n, .n = m, .var = var,
                             .agg = SPA_SUM, .ocols = var == SPO_NO_AGG || var == SPO_FULL_AGG ? 0 : k,
                             .frow = o_row, .fcol = o_col};
            SpoofOuter ref = op;
            ref.in.m = md;
            MB *o1 = NULL, *o2 = NULL;
            double v1 = 0, v2 = 0;
            /* W and a compressed side input are read by windows in every
             * variant: nothing is decompressed whole */
            ClaStats st;
            cla_stats_init(&st);
            ClaStats *prev = cla_stats_bind(&st);
            int rc1 = k_spoof_outer(&op, &o1, &v1, &e);
            cla_stats_bind(prev);
            T_CHECK(st.dec_n == 0, "%s: outer var %d side %d decompressed %lld inputs", what, var, side,
                    (long long)st.dec_n);
            cla_stats_destroy(&st);
            int rc2 = k_spoof_outer(&ref, &o2, &v2, &e);
            T_CHECK(rc1 == 0 && rc2 == 0, "%s: outer var %d side %d ran (%s)", what, var, side, e.msg);
            /* W's non-zeros are visited in the same order by both */
            if (var == SPO_FULL_AGG) T_CHECK(same_val(v1, v2), "%s: outer full_agg: %.17g want %.17g", what, v1, v2);
            else T_MB_EQ(o1, o2, 0, "%s: outer var %d side %d", what, var, side);
            if (var == SPO_NO_AGG) T_CHECK(o1 && o2 && o1->nnz == o2->nnz, "%s: outer no_agg nnz", what);
            mb_release(o1);
            mb_release(o2);
        }
    mb_release(Zr);
    mb_release(Zl);
    mb_release(X);
    mb_release(V);
    mb_release(U);
    mb_release(d);
}

/* braid's binary format holds compressed blocks as they are: written,
 * read back compressed and equal; every truncation and a sweep of
 * corrupted bytes are errors or (bytes of values) readable blocks, never a
 * crash (test_cla runs under ASan in `make san`). */
static void check_binary(const char *what, const MB *x, const MB *cx)
{
    char path[256], mtd[300];
    snprintf(path, sizeof path, "/tmp/braid_test_cla_%d.bin", (int)getpid());
    snprintf(mtd, sizeof mtd, "%s.mtd", path);
    BrErr e = {0};
    IoWriteOpts wo;
    io_write_opts_init(&wo);
    wo.format = "braid-binary";
    T_CHECK(io_write_matrix(path, cx, &wo, &e) == 0, "%s: write binary: %s", what, e.msg);
    IoReadOpts ro;
    io_read_opts_init(&ro);
    MB *r = io_read_matrix(path, &ro, &e);
    T_CHECK(r && mb_is_cmb(r), "%s: read back compressed (%s)", what, e.msg);
    T_MB_EQ(r, x, 0, "%s: binary round trip", what);
    mb_release(r);
    size_t n = 0;
    char *bytes = t_slurp(path, &n);
    unlink(mtd);   /* read the raw file without its metadata */
    ro.format = "binary";
    for (size_t cut = 0; bytes && cut < n; cut += 1 + cut / 3) {
        FILE *f = fopen(path, "wb");
        fwrite(bytes, 1, cut, f);
        fclose(f);
        BrErr e2 = {0};
        MB *t = io_read_matrix(path, &ro, &e2);
        T_CHECK(!t && e2.code, "%s: truncated at %zu of %zu: error", what, cut, n);
        mb_release(t);
    }
    for (size_t at = 40; bytes && at < n; at += 1 + at / 5) {
        char *c = malloc(n);
        memcpy(c, bytes, n);
        c[at] ^= 0x5a;
        FILE *f = fopen(path, "wb");
        fwrite(c, 1, n, f);
        fclose(f);
        BrErr e2 = {0};
        MB *t = io_read_matrix(path, &ro, &e2);
        T_CHECK(t || e2.code, "%s: byte %zu corrupted: a block or an error", what, at);
        if (t) {
            MB *d = cmb_decompress(t, &e2);   /* a readable block decompresses */
            T_CHECK(d && mb_valid(d, true), "%s: byte %zu corrupted: valid block", what, at);
            mb_release(d);
        }
        mb_release(t);
        free(c);
    }
    free(bytes);
    unlink(path);
}

/* Spec si under every forced encoding (and the automatic plan with 1 and
 * 2 threads: 7 points). Under the sanitizers (t_keep) the per-cell
 * windows (check_cell_rows, half of this test's time) and the Row checks
 * of the looked-up products and q per tuple (check_row_prod,
 * check_row_tq) run on every third point of the sweep over specs and
 * points, which rotates through the points (7 and 3 are coprime), so
 * every encoding and thread count meets them on several specs, the tall
 * ones (windows across blocks) included; the automatic plan with one
 * thread and the one-row spec (edges) always run them. The plain pass
 * runs every point. */
/* Every check over x (released) as described by s (its name and sizes). */
static void run_mat(const Spec *s, MB *x, int si)
{
    int encs[] = {-1, CLA_DDC1, CLA_DDC2, CLA_OLE, CLA_RLE, CLA_UNC};
    for (size_t k = 0; k < sizeof encs / sizeof *encs; k++) {
        for (int th = 1; th <= 2; th++) {
            if (th == 2 && k != 0) continue;
            long pt = si * 7L + (th == 2 ? 6 : (long)k);
            bool sweep = (k == 0 && th == 1) || s->n == 1 || t_keep(pt, 3);
            br_set_threads(th);
            BrErr e = {0};
            ClaPlanOpts o = cla_plan_defaults();
            o.force = true;
            o.enc = encs[k];
            if (k == 2) o.cocode = false;
            MB *cx = cla_compress(x, &o, &e);
            T_CHECK(cx && mb_is_cmb(cx), "%s enc %d: compressed (%s)", s->name, encs[k], e.msg);
            if (!cx || !mb_is_cmb(cx)) { mb_release(cx); continue; }
            T_CHECK(cx->nnz == x->nnz, "%s enc %d: nnz %lld want %lld", s->name, encs[k], (long long)cx->nnz,
                    (long long)x->nnz);
            /* every column in exactly one group */
            int *seen = calloc((size_t)s->m, sizeof(int));
            for (int g = 0; g < cx->cmb->ngroups; g++)
                for (int j = 0; j < cx->cmb->groups[g]->ncols; j++) seen[cx->cmb->groups[g]->cols[j]]++;
            int bad = 0;
            for (int64_t j = 0; j < s->m; j++) bad += seen[j] != 1;
            free(seen);
            T_CHECK(bad == 0, "%s enc %d: groups partition the columns", s->name, encs[k]);
            /* a forced encoding is used (DDC1 may need DDC2) */
            bool used = encs[k] < 0 || s->n == 1;
            for (int g = 0; g < cx->cmb->ngroups; g++) {
                ClaEnc ge = cx->cmb->groups[g]->enc;
                used |= (int)ge == encs[k] || (encs[k] == CLA_DDC1 && ge == CLA_DDC2);
            }
            T_CHECK(used, "%s: forced encoding %s used", s->name, encs[k] < 0 ? "" : cla_enc_name(encs[k]));
            char what[128];
            snprintf(what, sizeof what, "%s enc %s th %d", s->name, encs[k] < 0 ? "auto" : cla_enc_name(encs[k]), th);
            TIMED_AS("  check_ops", check_ops(what, x, cx));
            TIMED_AS("  check_fused", check_fused(what, x, cx));
            if (sweep) TIMED_AS("  check_cell_rows", check_cell_rows(what, x, cx));
            TIMED_AS("  check_outer", check_outer(what, x, cx));
            TIMED_AS("  check_row", check_row(what, x, cx));
            if (sweep) TIMED_AS("  check_row_prod", check_row_prod(what, x, cx));
            if (sweep) TIMED_AS("  check_row_tq", check_row_tq(what, x, cx));
            if (s->n <= 5000 && th == 1) TIMED_AS("  check_binary", check_binary(what, x, cx));
            mb_release(cx);
        }
    }
    memo_drop_all();
    mb_release(x);
    br_set_threads(0);
}

static void run_spec(const Spec *s, int si) { run_mat(s, gen(s), si); }

/* Per-cell Cell/MAgg over window blocks of wider matrices: rows of at
 * least SPOOF_AL columns (in-loop aggregates by rows) and rows wider
 * than a call's chunk of cells (column chunks of one row), with 1 and 2
 * threads; Outer over them (windows of a few rows, columns of W in
 * parallel). */
static void check_cell_wide(void)
{
    Spec wide[] = {
        {"wide40", 700, 40, 5, 0.3, 1, true, 0.01, false},
        {"wide2100", 12, 2100, 3, 0.5, 1, false, 0, false},
    };
    for (size_t k = 0; k < sizeof wide / sizeof *wide; k++) {
        MB *x = gen(&wide[k]);
        for (int th = 1; th <= 2; th++) {
            br_set_threads(th);
            BrErr e = {0};
            ClaPlanOpts o = cla_plan_defaults();
            o.force = true;
            MB *cx = cla_compress(x, &o, &e);
            T_CHECK(cx && mb_is_cmb(cx), "%s: compressed (%s)", wide[k].name, e.msg);
            char what[64];
            snprintf(what, sizeof what, "%s th %d", wide[k].name, th);
            if (cx && mb_is_cmb(cx)) check_cell_rows(what, x, cx);
            if (cx && mb_is_cmb(cx)) check_outer(what, x, cx);
            mb_release(cx);
        }
        memo_drop_all();
        mb_release(x);
    }
    br_set_threads(0);
}

/* Extraction through the direct code tables (ClaPlanOpts.lut) gives the
 * same compressed block as hashing every row: integer categorical
 * columns (single and co-coded), with values the sample cannot have
 * seen (one row each: outside the sampled range, a fraction, NaN, -0),
 * a column of non-integers (no table), dense and sparse blocks, 1 and 2
 * threads, sizes chosen and forced. */
static void same_blocks(const char *what, const MB *a, const MB *b)
{
    bool same = a && b && mb_is_cmb(a) && mb_is_cmb(b) && a->cmb->ngroups == b->cmb->ngroups;
    for (int g = 0; same && g < a->cmb->ngroups; g++) {
        const ClaGroup *p = a->cmb->groups[g], *q = b->cmb->groups[g];
        same = p->enc == q->enc && p->ncols == q->ncols && p->ndict == q->ndict &&
               !memcmp(p->cols, q->cols, (size_t)p->ncols * sizeof(int32_t));
        if (same && p->enc != CLA_UNC)
            same = !memcmp(p->dict, q->dict, (size_t)p->ndict * (size_t)p->ncols * sizeof(double)) &&
                   !memcmp(p->counts, q->counts, (size_t)p->ndict * sizeof(int64_t));
    }
    T_CHECK(same, "%s: table and hash give the same groups", what);
    BrErr e = {0};
    MB *da = same ? cmb_decompress(a, &e) : NULL, *db = same ? cmb_decompress(b, &e) : NULL;
    if (same) T_MB_EQ(da, db, 0, "%s: table and hash give the same values", what);
    mb_release(da);
    mb_release(db);
}

static void check_lut(void)
{
    BrErr e = {0};
    int64_t n = 30000, m = 6;
    MB *x = mb_dense(n, m, &e);
    for (int64_t i = 0; i < n; i++) {
        x->d[i * m + 0] = (double)(int)(urand() * 7);          /* 0..6 */
        x->d[i * m + 1] = urand() < 0.8 ? 0 : 3 + (double)(int)(urand() * 40);
        x->d[i * m + 2] = 2 * x->d[i * m + 0] - 5;                  /* correlated with column 0 */
        x->d[i * m + 3] = 1000 + (double)(int)(urand() * 300);
        x->d[i * m + 4] = 0.25 * (double)(int)(urand() * 5);       /* not integers: no table */
        x->d[i * m + 5] = (double)(i / 500);                        /* runs */
    }
    /* single rows the sample cannot vouch for */
    x->d[17 * m + 0] = 100;
    x->d[4242 * m + 0] = 2.5;
    x->d[777 * m + 3] = NAN;
    x->d[9999 * m + 1] = -0.0;
    x->d[12345 * m + 3] = -7;
    mb_recount_nnz(x);
    MB *sx = mb_to_sparse(x, &e);
    const MB *src[2] = {x, sx};
    for (int sp = 0; sp < 2; sp++)
        for (int th = 1; th <= 2; th++)
            for (int force = 0; force < 2; force++) {
                br_set_threads(th);
                ClaPlanOpts o = cla_plan_defaults();
                o.force = force;
                MB *a = cla_compress(src[sp], &o, &e);
                o.lut = false;
                MB *b = cla_compress(src[sp], &o, &e);
                char what[64];
                snprintf(what, sizeof what, "lut %s th %d force %d", sp ? "sparse" : "dense", th, force);
                same_blocks(what, a, b);
                mb_release(a);
                mb_release(b);
            }
    br_set_threads(0);
    mb_release(sx);
    mb_release(x);
}

/* Grids beyond small integers: decimals (0.05 steps), a wide range of
 * multiples (1000 k + 3 over 300000), quarter steps with runs and
 * standardized categories ((k - 4.3) / 1.7) take direct tables, with planted rows the tables cannot vouch for (a value
 * off the grid that rounds to a grid point, a grid point outside the
 * sampled range, NaN, a tiny value). The blocks equal those of hashing
 * every row; and a row is hashed only when its tuple first meets its
 * table cell or misses the table: at most the dictionary sizes plus two
 * per planted row (itself, and the grid value whose cell it took). */
static void check_grid(void)
{
    BrErr e = {0};
    int64_t n = 40000, m = 4, planted = 4;
    MB *x = mb_dense(n, m, &e);
    for (int64_t i = 0; i < n; i++) {
        x->d[i * m + 0] = 12.35 + 0.05 * (double)(int)(urand() * 200);
        x->d[i * m + 1] = 1000 * (double)(int)(urand() * 300) + 3;
        x->d[i * m + 2] = -2.5 + 0.25 * (double)((i / 37) % 16);
        x->d[i * m + 3] = ((double)(int)(urand() * 10) - 4.3) / 1.7;   /* standardized categories */
    }
    x->d[100 * m + 0] = x->d[101 * m + 0] + 1e-9;
    x->d[200 * m + 1] = 1e6 + 3;
    x->d[300 * m + 2] = NAN;
    x->d[400 * m + 0] = 1e-300;
    mb_recount_nnz(x);
    for (int th = 1; th <= 2; th++) {
        br_set_threads(th);
        ClaPlanOpts o = cla_plan_defaults();
        o.force = true;
        ClaStats st[2];
        MB *c[2];
        for (int k = 0; k < 2; k++) {
            o.lut = k == 0;
            cla_stats_init(&st[k]);
            ClaStats *prev = cla_stats_bind(&st[k]);
            c[k] = cla_compress(x, &o, &e);
            cla_stats_bind(prev);
        }
        char what[64];
        snprintf(what, sizeof what, "grid th %d", th);
        same_blocks(what, c[0], c[1]);
        int64_t dict = 0;
        for (int g = 0; c[0] && mb_is_cmb(c[0]) && g < c[0]->cmb->ngroups; g++)
            if (c[0]->cmb->groups[g]->enc != CLA_UNC) dict += c[0]->cmb->groups[g]->ndict;
        printf("  %s: rows hashed %lld of %lld with tables, %lld without (tuples %lld)\n", what,
               (long long)st[0].hashed, (long long)st[0].coded, (long long)st[1].hashed, (long long)dict);
        T_CHECK(st[0].coded == st[1].coded && st[0].coded >= n, "%s: columns coded", what);
        T_CHECK(st[0].hashed <= dict + 2 * planted, "%s: rows hashed %lld <= tuples %lld + 2 x %lld planted", what,
                (long long)st[0].hashed, (long long)dict, (long long)planted);
        for (int k = 0; k < 2; k++) { mb_release(c[k]); cla_stats_destroy(&st[k]); }
    }
    br_set_threads(0);
    mb_release(x);
}

/* The row-wise coder of sparse blocks (extract_sparse): one-hot columns
 * of four categorical variables (10, 10, 6 and 4 categories; the last
 * two with values 2 and 3, so co-coded groups hold tuples of 1..3
 * non-zeros), a dense-ish column of many categories, and rows with every
 * column of a variable set (more non-zeros than the sparse table keys);
 * planted: explicit 0 and -0 entries in the CSR rows, NaN, a value off
 * the grid that rounds to a grid point, one outside it. The blocks equal
 * those of hashing every row and of the dense block; decompressed they
 * are x; rows hashed are at most the tuples plus two per planted row. */
static void check_sparse_rows(void)
{
    BrErr e = {0};
    int64_t n = 30000, m = 31;
    int64_t planted = 6;
    MB *x = mb_sp_alloc(n, m, n * m, &e);
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        int a = (int)(urand() * 10), b = (int)(urand() * 10), c = (int)(urand() * 6), d = (int)(urand() * 4);
        bool all = i % 997 == 5;   /* every column of the first variable */
        double row[31] = {0};
        for (int j = 0; j < 10; j++) row[j] = all || j == a ? 1 : 0;
        row[10 + b] = 1;
        row[20 + c] = urand() < 0.5 ? 2 : 3;
        if (urand() < 0.7) row[26 + d] = 1;
        row[30] = urand() < 0.9 ? 0 : (double)(int)(urand() * 50);
        if (i == 101) row[3] = NAN;
        if (i == 202) row[12] = 1 + 1e-12;   /* rounds to the grid point 1 */
        if (i == 303) row[21] = 7;            /* beyond the grid */
        for (int j = 0; j < m; j++) {
            bool zero_entry = (i == 404 && j == 7) || (i == 505 && j == 8) || (i == 606 && j == 25);
            if (row[j] == 0 && !zero_entry) continue;
            x->ci[k] = j;
            x->v[k++] = zero_entry ? (j == 8 ? -0.0 : 0.0) : row[j];
        }
        x->rp[i + 1] = k;
    }
    mb_sp_done(x, k);
    MB *dx = mb_to_dense(x, &e);
    for (int th = 1; th <= 2; th++) {
        br_set_threads(th);
        ClaPlanOpts o = cla_plan_defaults();
        o.force = true;
        ClaStats st[2];
        MB *c[3];
        for (int q = 0; q < 2; q++) {
            o.lut = q == 0;
            cla_stats_init(&st[q]);
            ClaStats *prev = cla_stats_bind(&st[q]);
            c[q] = cla_compress(x, &o, &e);
            cla_stats_bind(prev);
        }
        o.lut = true;
        c[2] = cla_compress(dx, &o, &e);
        char what[64];
        snprintf(what, sizeof what, "sparse rows th %d", th);
        same_blocks(what, c[0], c[1]);
        snprintf(what, sizeof what, "sparse rows th %d (dense x)", th);
        same_blocks(what, c[0], c[2]);
        MB *d = c[0] && mb_is_cmb(c[0]) ? cmb_decompress(c[0], &e) : NULL;
        T_MB_EQ(d, x, 0, "sparse rows th %d: decompress", th);
        mb_release(d);
        int64_t dict = 0;
        int cocoded = 0;
        for (int g = 0; c[0] && mb_is_cmb(c[0]) && g < c[0]->cmb->ngroups; g++) {
            const ClaGroup *gr = c[0]->cmb->groups[g];
            if (gr->enc != CLA_UNC) dict += gr->ndict;
            cocoded += gr->enc != CLA_UNC && gr->ncols > 1;
        }
        int64_t many = (n + 991) / 997;   /* rows past the table's non-zeros */
        printf("  sparse rows th %d: rows hashed %lld of %lld with tables, %lld without"
               " (tuples %lld, %d co-coded groups)\n", th, (long long)st[0].hashed, (long long)st[0].coded,
               (long long)st[1].hashed, (long long)dict, cocoded);
        T_CHECK(cocoded > 0, "sparse rows th %d: columns co-coded", th);
        T_CHECK(st[0].hashed <= dict + 2 * planted + many,
                "sparse rows th %d: rows hashed %lld <= tuples %lld + planted", th, (long long)st[0].hashed,
                (long long)dict);
        for (int q = 0; q < 3; q++) mb_release(c[q]);
        for (int q = 0; q < 2; q++) cla_stats_destroy(&st[q]);
    }
    br_set_threads(0);
    mb_release(dx);
    mb_release(x);
}

/* RLE sizes from the sample: a column of geometric runs (mean 100 rows)
 * over 3000 values (and zero runs) is planned at about its RLE size, not
 * its DDC2 size (2 bytes a row), which the plan took before. The run
 * estimate's 5-sigma error with the default sample (10000 of 200000
 * rows, p = 0.01: 100 starts expected) is 50%, the dictionary's
 * (distinct estimate) under 2x (test_cla_est), so the plan's estimate
 * must be within 2x of the exact compressed size. */
static void check_rle_est(void)
{
    BrErr e = {0};
    int64_t n = 200000;
    MB *x = mb_dense(n, 1, &e);
    for (int64_t i = 0; i < n;) {
        int64_t len = 1 + (int64_t)(log(1 - urand()) / log(1 - 0.01));
        double v = urand() < 0.2 ? 0 : 0.5 * (1 + (int)(urand() * 3000));
        for (int64_t k = 0; k < len && i < n; k++) x->d[i++] = v;
    }
    mb_recount_nnz(x);
    ClaPlanOpts o = cla_plan_defaults();
    ClaPlan p;
    T_CHECK(cla_plan(x, &o, &p, &e) == 0, "rle est: planned");
    MB *c = cla_compress(x, &o, &e);
    T_CHECK(c && mb_is_cmb(c) && c->cmb->ngroups == 1 && c->cmb->groups[0]->enc == CLA_RLE, "rle est: RLE chosen");
    double exact = c && mb_is_cmb(c) ? (double)cmb_bytes(c) : 1;
    printf("  rle est: planned %.0f bytes, exact %.0f (DDC2 codes alone %lld)\n", p.est_bytes, exact,
           (long long)(2 * n));
    T_CHECK(p.est_bytes <= 2 * exact && p.est_bytes >= exact / 2, "rle est: planned %.0f within 2x of %.0f",
            p.est_bytes, exact);
    cla_plan_free(&p);
    mb_release(c);
    mb_release(x);
}

/* -stats counters per run: two threads, each with its own ClaStats bound
 * (as two runs in one process), compress and operate concurrently; each
 * counts only its own work, and an unbound thread counts into neither. */
typedef struct StatJob { ClaStats st; const MB *x; int reps; } StatJob;

static void *stat_job(void *arg)
{
    StatJob *j = arg;
    ClaStats *prev = cla_stats_bind(&j->st);
    ClaPlanOpts o = cla_plan_defaults();
    o.force = true;
    for (int r = 0; r < j->reps; r++) {
        BrErr e = {0};
        MB *c = cla_compress(j->x, &o, &e);
        MB *a = c ? cla_agg(OP_SUM, DIR_FULL, c, &e) : NULL;
        mb_release(a);
        mb_release(c);
    }
    cla_stats_bind(prev);
    return NULL;
}

static void check_stats_bind(void)
{
    Spec sp = {"stats", 2000, 3, 4, 0.2, 1, false, 0, false};
    MB *x = gen(&sp);
    StatJob j[2] = {{.x = x, .reps = 1}, {.x = x, .reps = 3}};
    pthread_t t[2];
    for (int k = 0; k < 2; k++) {
        cla_stats_init(&j[k].st);
        pthread_create(&t[k], NULL, stat_job, &j[k]);
    }
    for (int k = 0; k < 2; k++) pthread_join(t[k], NULL);
    StatJob unbound = {.x = x, .reps = 2};
    ClaStats *prev = cla_stats_bind(NULL);
    for (int r = 0; r < unbound.reps; r++) {
        BrErr e = {0};
        ClaPlanOpts o = cla_plan_defaults();
        o.force = true;
        mb_release(cla_compress(x, &o, &e));
    }
    cla_stats_bind(prev);
    for (int k = 0; k < 2; k++) {
        T_CHECK(j[k].st.n == j[k].reps, "stats run %d: %lld compressions, want %d", k, (long long)j[k].st.n,
                j[k].reps);
        T_CHECK(j[k].st.opname[0] && !strcmp(j[k].st.opname[0], "uagg") && j[k].st.opcount[0] == j[k].reps,
                "stats run %d: its aggregates counted", k);
        cla_stats_destroy(&j[k].st);
    }
    mb_release(x);
}

/* Compile-time compressed sizes: a compressed block written in the
 * binary format records its bytes in the .mtd (compressed_bytes); a
 * script that reads it compiles with those bytes on the read and on the
 * variable's reads in later blocks (codegen's costs, codegen/cost.c),
 * before any recompilation. An ordinary block records none. */
static int cbytes_hops(const PBList *l, double want)
{
    int found = 0;
    for (int b = 0; b < l->n; b++) {
        const PBlock *pb = l->v[b];
        const HopDag *d = pb->dag;
        for (int i = 0; d && i < d->n; i++) {
            const Hop *h = d->hops[i];
            bool rd = (h->kind == H_BUILTIN && h->bi == BI_READ) || (h->kind == H_TREAD && !strcmp(h->name, "X"));
            if (rd && h->dt == DT_MATRIX) found += h->cbytes == want ? 1 : -1000;
        }
        found += cbytes_hops(&pb->body, want) + cbytes_hops(&pb->els, want);
    }
    return found;
}

static void check_compile_cbytes(void)
{
    Spec sp = {"cbytes", 3000, 5, 4, 0.2, 1, false, 0, false};
    MB *x = gen(&sp);
    BrErr e = {0};
    ClaPlanOpts o = cla_plan_defaults();
    MB *cx = cla_compress(x, &o, &e);
    T_CHECK(cx && mb_is_cmb(cx), "cbytes: compressed");
    char path[256], src[1024];
    snprintf(path, sizeof path, "/tmp/braid_test_cla_cb_%d.bin", (int)getpid());
    IoWriteOpts wo;
    io_write_opts_init(&wo);
    wo.format = "braid-binary";
    for (int comp = 1; comp >= 0 && cx; comp--) {
        T_CHECK(io_write_matrix(path, comp ? cx : x, &wo, &e) == 0, "cbytes: written (%s)", e.msg);
        IoMeta m;
        bool found = false;
        io_read_mtd(path, &m, &found, &e);
        double want = comp ? (double)mb_bytes(cx) : 0;
        T_CHECK(found && (comp ? m.cbytes == (int64_t)want : m.cbytes < 0), "cbytes: .mtd compressed_bytes %lld",
                (long long)m.cbytes);
        snprintf(src, sizeof src, "X = read(\"%s\")\nfor (i in 1:2) {\n  s = sum(X^2)\n  print(s)\n}\n", path);
        Diag *d = diag_new();
        LangOptions lo = {0};
        Program *ast = lang_load_string(src, "<test>", &lo, d);
        RtProgram *p = ast && !diag_nerrors(d) ? plan_build_program(ast, d, 2, NULL) : NULL;
        T_CHECK(p != NULL, "cbytes: compiled");
        /* the read and the loop's read of X (at least 2), each with the bytes */
        if (p) T_CHECK(cbytes_hops(&p->main, want) >= 2, "cbytes %s: reads see %.0f bytes", comp ? "on" : "off", want);
        if (p) plan_program_free(p);
        lang_program_free(ast);
        diag_free(d);
    }
    unlink(path);
    char mtd[300];
    snprintf(mtd, sizeof mtd, "%s.mtd", path);
    unlink(mtd);
    mb_release(cx);
    mb_release(x);
}

/* Plans after a run-time compress(): the blocks that read its result are
 * marked for recompilation (the variable carries cbytes -1: compressed,
 * bytes unknown), and recompiled with the compressed value at hand their
 * reads carry its bytes: memory estimates and codegen's costs are the
 * compressed ones. With a local budget between the compressed and the
 * uncompressed size (set, not calibrated), the operator over X is local
 * (in memory, over the compressed block) after compress() and
 * distributed over the same data uncompressed. */
static const Hop *tread_x(const HopDag *d)
{
    for (int i = 0; d && i < d->n; i++)
        if (d->hops[i]->kind == H_TREAD && d->hops[i]->name && !strcmp(d->hops[i]->name, "X")) return d->hops[i];
    return NULL;
}

/* The aggregate (or fused operator) under h, reachable from a write. */
static const Hop *agg_under(const Hop *h, int depth)
{
    if (!h || depth > 8) return NULL;
    if (h->kind == H_AGG || h->kind == H_SPOOF) return h;
    for (int i = 0; i < h->nin; i++) {
        const Hop *a = agg_under(h->in[i], depth + 1);
        if (a) return a;
    }
    return NULL;
}

static const Hop *agg_hop(const HopDag *d)
{
    for (int i = 0; d && i < d->nw; i++) {
        const Hop *a = agg_under(d->whops[i], 0);
        if (a) return a;
    }
    return NULL;
}

/* One plan (src, compiled under sysds.compressed.linalg = cla): the body
 * of its first loop or branch reads X marked compressed at run time and
 * is recompiled; recompiled with X compressed and uncompressed, the read
 * carries the compressed bytes and the aggregate runs locally over the
 * compressed block but is planned distributed over the same data
 * uncompressed. marked false: no mark is expected (cla off). */
static void compile_compress_case(const char *tag, const char *src, int cla, bool marked)
{
    Diag *d = diag_new();
    LangOptions lo = {0};
    CgOptions cg = {.enabled = false, .cla = cla};
    Program *ast = lang_load_string(src, "<test>", &lo, d);
    RtProgram *p = ast && !diag_nerrors(d) ? plan_build_program(ast, d, 2, &cg) : NULL;
    T_CHECK(p != NULL, "%s: compiled", tag);
    PBlock *body = NULL;
    for (int b = 0; p && b < p->main.n && !body; b++)
        if (p->main.v[b]->body.n) body = p->main.v[b]->body.v[0];
    T_CHECK(body && body->dag, "%s: the loop body", tag);
    const Hop *h = body && body->dag ? tread_x(body->dag) : NULL;
    T_CHECK(h && (h->cbytes < 0) == marked, "%s: X read %s (cbytes %g)", tag,
            marked ? "as compressed at run time" : "uncompressed", h ? h->cbytes : 0);
    if (marked && h) {
        const HopDag *bd = body->dag;
        if (cla == RT_CLA_AUTO)   /* only when auto compresses (the value read is compressed) */
            T_CHECK(h->cbytes == -2 && !bd->recompile && bd->cla_maybe && body->code && body->code->cla_maybe &&
                        !body->code->recompile,
                    "%s: the loop body is recompiled only over a compressed value", tag);
        else
            T_CHECK(h->cbytes == -1 && bd->recompile && body->code && body->code->recompile,
                    "%s: the loop body is recompiled", tag);
        Spec sp = {"cc", 20000, 10, 5, 0.1, 1, false, 0, false};
        MB *x = gen(&sp);
        BrErr e = {0};
        ClaPlanOpts o = cla_plan_defaults();
        MB *cx = cla_compress(x, &o, &e);
        T_CHECK(cx && mb_is_cmb(cx) && mb_bytes(cx) * 4 < mb_bytes(x), "%s: compressed 4x", tag);
        double saved = br_mem_budget();
        br_set_mem_budget((double)(mb_bytes(cx) + mb_bytes(x)) / 2);
        for (int comp = 0; comp < 2 && cx; comp++) {
            SymTab vars;
            st_init(&vars);
            st_put(&vars, "X", val_matrix(mb_retain(comp ? cx : x)));
            st_put(&vars, "s", val_double(0));
            HopDag *copy = NULL;
            RwStats st = {0};
            Code *code = rc_recompile(p, body->dag, &vars, CG_BLOCK, &copy, &st);
            const Hop *r = tread_x(copy), *a = agg_hop(copy);
            double want = comp ? (double)mb_bytes(cx) : 0;
            T_CHECK(code && r && r->cbytes == want && r->mem == (double)mb_bytes(comp ? cx : x),
                    "%s %d: recompiled read sees %g bytes (cbytes %g)", tag, comp, want, r ? r->cbytes : -9);
            T_CHECK(a && a->exec == (comp ? EX_CP : EX_DIST), "%s %d: %s operator", tag, comp,
                    comp ? "local compressed" : "distributed");
            if (code) plan_code_free(code);
            hop_dag_free(copy);
            st_free(&vars);
        }
        br_set_mem_budget(saved);
        mb_release(cx);
        mb_release(x);
    }
    if (p) plan_program_free(p);
    lang_program_free(ast);
    diag_free(d);
}

/* Plans after compression at run time: compress() in the script; the
 * sysds.compressed.linalg setting's own compressions (true: reads, and
 * matrices a loop reads at its entry; auto: at loop entry, when it pays,
 * so marked maybe compressed); none when off. Machine constants pinned. */
static void check_compile_compress(void)
{
    t_pin_machine();
    const char *gen_x = "X = round(rand(rows=20000, cols=10, min=0, max=5, seed=3))\n";
    const char *loop = "s = 0\nfor (i in 1:2) {\n  s = s + sum(X^2)\n}\nprint(s)\n";
    char src[512];
    snprintf(src, sizeof src, "%sX = compress(X)\n%s", gen_x, loop);
    compile_compress_case("compress plan", src, RT_CLA_OFF, true);
    snprintf(src, sizeof src, "%s%s", gen_x, loop);
    compile_compress_case("linalg=true loop plan", src, RT_CLA_ON, true);
    compile_compress_case("linalg=auto loop plan", src, RT_CLA_AUTO, true);
    compile_compress_case("linalg=false loop plan", src, RT_CLA_OFF, false);
    /* a read under true (its size from the .mtd), read in a branch */
    char path[256];
    snprintf(path, sizeof path, "/tmp/braid_test_cla_read_%d.csv", (int)getpid());
    BrErr e = {0};
    MB *x = rnd(20000, 10);
    IoWriteOpts wo;
    io_write_opts_init(&wo);
    wo.format = "csv";
    T_CHECK(io_write_matrix(path, x, &wo, &e) == 0, "read plan: written (%s)", e.msg);
    const char *branch = "s = 0\nif (as.scalar(rand(rows=1, cols=1, seed=1)) < 2) {\n  s = s + sum(X^2)\n}\nprint(s)\n";
    snprintf(src, sizeof src, "X = read(\"%s\")\n%s", path, branch);
    compile_compress_case("linalg=true read plan", src, RT_CLA_ON, true);
    compile_compress_case("linalg=auto read plan", src, RT_CLA_AUTO, false);   /* auto: loops only */
    mb_release(x);
    unlink(path);
    char mtd[300];
    snprintf(mtd, sizeof mtd, "%s.mtd", path);
    unlink(mtd);
}

/* The compressed size estimated at compile time from a sample of the
 * file (runtime/cla_rt.c cla_rt_est_file, docs/cla.md "Estimated at
 * compile time") against the compressed size of the matrix read whole,
 * over generated data of controlled cardinality, sparsity, runs and
 * correlation, in every format it samples: within HOP_CEST_FACTOR, and
 * from a part of the file where the file is larger than the sample.
 * Forced (true) and by size (auto). Fallbacks: no sizes, cells not in
 * row order, mm symmetric. */
static MB *dense_of(MB *x);
static const char *const est_fmts[] = {"csv", "braid-binary", "binary", "text", "mm", "libsvm"};

static void check_est_file(void)
{
    char path[96];
    snprintf(path, sizeof path, "/tmp/braid_claest_%ld", (long)getpid());
    Spec specs[] = {
        {"lowcard", 16000, 6, 4, 0.2, 1, false, 0, false},
        {"sparse", 20000, 8, 3, 0.95, 1, false, 0, false},
        {"highcard", 16000, 4, 3000, 0.0, 1, false, 0, false},
        {"corr-runs", 16000, 6, 8, 0.3, 97, true, 0, false},
        {"noise", 12000, 3, 0, 0, 1, false, 0, true},
    };
    BrErr e = {0};
    double worst = 1;
    cla_rt_test_est_div(16);   /* about 1/16 of the default sample: a part of these files */
    for (size_t k = 0; k < sizeof specs / sizeof *specs; k++) {
        MB *x = dense_of(gen(&specs[k]));
        for (int force = 0; force < 2; force++) {
            ClaPlanOpts o = cla_plan_defaults();
            o.force = force;
            if (force) o.min_ratio = 1.5;
            MB *cx = cla_compress(x, &o, &e);
            double got = cx ? (double)mb_bytes(cx) : 0;
            mb_release(cx);
            for (size_t f = 0; f < sizeof est_fmts / sizeof *est_fmts; f++) {
                if (force == 0 && f % 2 == 1) continue;   /* by size: half the formats */
                IoWriteOpts wo;
                io_write_opts_init(&wo);
                wo.format = est_fmts[f];
                if (io_write_matrix(path, x, &wo, &e)) { T_CHECK(false, "est: written (%s)", e.msg); continue; }
                IoReadOpts ro;
                io_read_opts_init(&ro);
                ClaFileEst est;
                bool ok = cla_rt_est_file(path, &ro, force, &est);
                double r = ok && got > 0 ? est.bytes / got : 0;
                /* a matrix by size: the uncompressed block where it does not pay */
                T_CHECK(ok && r >= 1 / HOP_CEST_FACTOR && r <= HOP_CEST_FACTOR,
                        "est %s %s %s: %.0f bytes estimated, %.0f compressed (%.2fx)", specs[k].name, est_fmts[f],
                        force ? "forced" : "by size", est.bytes, got, r);
                if (ok && r > 0) worst = fmax(worst, fmax(r, 1 / r));
                T_CHECK(ok && est.rows >= 2 && est.groups >= 1 && est.raw > 0, "est %s %s: %lld rows, %d groups",
                        specs[k].name, est_fmts[f], (long long)est.rows, est.groups);
                T_CHECK(ok && est.read < est.total, "est %s %s: %lld of %lld bytes read", specs[k].name,
                        est_fmts[f], (long long)est.read, (long long)est.total);
            }
        }
        mb_release(x);
    }
    cla_rt_test_est_div(1);
    printf("  est: worst factor %.2f\n", worst);
    /* fallbacks: no sizes (the .mtd gone), cells not in row order, mm
     * symmetric; each says so (no estimate) */
    Spec sp = {"fb", 3000, 4, 4, 0.2, 1, false, 0, false};
    MB *x = dense_of(gen(&sp));
    IoWriteOpts wo;
    io_write_opts_init(&wo);
    wo.format = "csv";
    IoReadOpts ro;
    io_read_opts_init(&ro);
    ClaFileEst est;
    char mtd[128];
    snprintf(mtd, sizeof mtd, "%s.mtd", path);
    T_CHECK(!io_write_matrix(path, x, &wo, &e) && cla_rt_est_file(path, &ro, true, &est), "est fallback: csv (%s)",
            e.msg);
    unlink(mtd);
    ro.format = "csv";
    T_CHECK(!cla_rt_est_file(path, &ro, true, &est), "est fallback: csv without sizes");
    ro.rows = x->rows;
    ro.cols = x->cols;
    T_CHECK(cla_rt_est_file(path, &ro, true, &est), "est: csv with the sizes as arguments");
    /* text with its rows descending: not in row order */
    FILE *o = fopen(path, "w");
    for (int64_t i = x->rows - 1; o && i >= 0; i--)
        for (int64_t j = 0; j < x->cols; j++)
            if (x->d[i * x->cols + j] != 0) fprintf(o, "%lld %lld %.17g\n", (long long)i + 1, (long long)j + 1, x->d[i * x->cols + j]);
    if (o) fclose(o);
    ro.format = "text";
    T_CHECK(!cla_rt_est_file(path, &ro, true, &est), "est fallback: text cells not in row order");
    o = fopen(path, "w");
    if (o) {
        fprintf(o, "%%%%MatrixMarket matrix coordinate real symmetric\n4 4 2\n1 1 2\n3 2 1\n");
        fclose(o);
    }
    io_read_opts_init(&ro);
    ro.format = "mm";
    T_CHECK(!cla_rt_est_file(path, &ro, true, &est), "est fallback: mm symmetric");
    mb_release(x);
    unlink(path);
    unlink(mtd);
}

/* The read hop of the main program's DAGs. */
static const Hop *main_read(const RtProgram *p)
{
    for (int b = 0; p && b < p->main.n; b++) {
        const HopDag *d = p->main.v[b]->dag;
        for (int i = 0; d && i < d->n; i++)
            if (d->hops[i]->kind == H_BUILTIN && d->hops[i]->bi == BI_READ) return d->hops[i];
    }
    return NULL;
}

/* Plans that change with the compile-time estimate (docs/cla.md
 * "Estimated at compile time"): under a budget of a quarter of the
 * uncompressed size, a csv read of low cardinality (about 10x) stays
 * local under true and auto, its estimate recorded; random data (no
 * compression) is over the budget under true (before: local, at the
 * lower bound of a byte a row, then failing after the whole read) and
 * not marked compressed under auto (before: marked). */
static void check_compile_est(void)
{
    t_pin_machine();
    char path[96], src[256];
    snprintf(path, sizeof path, "/tmp/braid_claest_plan_%ld.csv", (long)getpid());
    Spec specs[2] = {{"lowcard", 20000, 10, 5, 0.1, 1, false, 0, false}, {"noise", 20000, 10, 0, 0, 1, false, 0, true}};
    double saved = br_mem_budget();
    br_set_mem_budget(8.0 * 20000 * 10 / 4);
    for (int k = 0; k < 2; k++) {
        BrErr e = {0};
        MB *x = dense_of(gen(&specs[k]));
        IoWriteOpts wo;
        io_write_opts_init(&wo);
        wo.format = "csv";
        T_CHECK(!io_write_matrix(path, x, &wo, &e), "compile est: written (%s)", e.msg);
        ClaPlanOpts o = cla_plan_defaults();
        o.force = true;
        MB *cx = cla_compress(x, &o, &e);
        double got = cx ? (double)mb_bytes(cx) : 0;
        snprintf(src, sizeof src, "X = read(\"%s\")\nprint(sum(X))\n", path);
        for (int mode = 0; mode < 2; mode++) {
            int cla = mode ? RT_CLA_AUTO : RT_CLA_ON;
            Diag *d = diag_new();
            LangOptions lo = {0};
            CgOptions cg = {.enabled = false, .cla = cla};
            Program *ast = lang_load_string(src, "<test>", &lo, d);
            RtProgram *p = ast && !diag_nerrors(d) ? plan_build_program(ast, d, 2, &cg) : NULL;
            const Hop *h = main_read(p);
            const char *tag = mode ? "auto" : "true";
            if (k == 0) {
                T_CHECK(h && h->cbytes == -1 && h->cest >= got / HOP_CEST_FACTOR && h->cest <= got * HOP_CEST_FACTOR &&
                            h->cgroups >= 1 && h->exec == EX_CP,
                        "compile est %s %s: marked, %.0f bytes estimated (%.0f compressed), local", specs[k].name, tag,
                        h ? h->cest : -1, got);
            } else if (mode == 0) {
                T_CHECK(h && h->cbytes == -1 && h->cest > 0 && h->exec == EX_DIST,
                        "compile est %s %s: %.0f bytes estimated, over the budget (exec %d)", specs[k].name, tag,
                        h ? h->cest : -1, h ? h->exec : -1);
            } else {
                T_CHECK(h && h->cbytes == 0 && h->cest == 0 && h->exec == EX_DIST,
                        "compile est %s %s: not compressed (cbytes %g), over the budget", specs[k].name, tag,
                        h ? h->cbytes : -9);
            }
            if (p) plan_program_free(p);
            lang_program_free(ast);
            diag_free(d);
        }
        mb_release(cx);
        mb_release(x);
    }
    br_set_mem_budget(saved);
    unlink(path);
    char mtd[128];
    snprintf(mtd, sizeof mtd, "%s.mtd", path);
    unlink(mtd);
}

/* The size-chosen encodings: low cardinality -> DDC, sparse -> OLE, long
 * runs -> RLE, noise -> uncompressed (and not compressed unless forced). */
static void check_choice(void)
{
    BrErr e = {0};
    ClaPlanOpts o = cla_plan_defaults();
    struct { Spec s; ClaEnc want; } cases[] = {
        {{"ddc", 5000, 4, 20, 0.0, 1, false, 0, false}, CLA_DDC1},
        {{"ole", 5000, 4, 5, 0.97, 1, false, 0, false}, CLA_OLE},
        {{"rle", 5000, 4, 5, 0.0, 500, false, 0, false}, CLA_RLE},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        MB *x = gen(&cases[k].s), *cx = cla_compress(x, &o, &e);
        bool all = cx && mb_is_cmb(cx);
        for (int g = 0; all && g < cx->cmb->ngroups; g++) all = cx->cmb->groups[g]->enc == cases[k].want;
        T_CHECK(all, "%s: every group %s", cases[k].s.name, cla_enc_name(cases[k].want));
        T_CHECK(cx && mb_bytes(cx) * 2 < mb_bytes(x), "%s: ratio over 2", cases[k].s.name);
        mb_release(x);
        mb_release(cx);
    }
    Spec noise = {"noise", 3000, 5, 0, 0, 1, false, 0, true};
    MB *x = gen(&noise), *cx = cla_compress(x, &o, &e);
    T_CHECK(cx == x, "noise: not compressed unless forced");
    mb_release(cx);
    o.force = true;
    cx = cla_compress(x, &o, &e);
    T_CHECK(cx && mb_is_cmb(cx) && cx->cmb->ngroups == 1 && cx->cmb->groups[0]->enc == CLA_UNC,
            "noise forced: one UNC group");
    mb_release(cx);
    mb_release(x);
    /* one-hot columns (mutually exclusive) form one DDC group: pairs of
     * them would not save bytes, the whole set does; with a second
     * one-hot block beside it (categories 6-9), every column is in a
     * DDC1 group, at most two */
    for (int blocks = 1; blocks <= 2; blocks++) {
        BrErr e2 = {0};
        int64_t m = blocks == 1 ? 6 : 10;
        MB *oh = mb_dense(6000, m, &e2);
        for (int64_t i = 0; i < 6000; i++) {
            oh->d[i * m + (int64_t)(urand() * 6)] = 1;
            if (blocks == 2) oh->d[i * m + 6 + (int64_t)(urand() * 4)] = 2.5;
        }
        mb_recount_nnz(oh);
        cx = cla_compress(oh, &o, &e);
        int ng = cx && mb_is_cmb(cx) ? cx->cmb->ngroups : -1;
        T_CHECK(blocks == 1 ? ng == 1 : ng >= 1 && ng <= 2, "one-hot %d: %d groups", blocks, ng);
        for (int g = 0; g < ng; g++)
            T_CHECK(cx->cmb->groups[g]->enc == CLA_DDC1, "one-hot %d: group %d %s", blocks, g,
                    cla_enc_name(cx->cmb->groups[g]->enc));
        if (ng > 0) check_ops("one-hot", oh, cx);
        T_MB_EQ(cx, oh, 0, "one-hot %d: values", blocks);
        mb_release(cx);
        mb_release(oh);
    }
    /* a column with more distinct values than a dictionary holds (65536)
     * stays uncompressed even when DDC2 is forced (the blocked extraction
     * gives the group up part way) */
    Spec many = {"many", 70000, 2, 0, 0, 1, false, 0, true};
    x = gen(&many);
    o.enc = CLA_DDC2;
    cx = cla_compress(x, &o, &e);
    T_CHECK(cx && mb_is_cmb(cx) && cx->cmb->ngroups == 1 && cx->cmb->groups[0]->enc == CLA_UNC,
            "many distinct values: one UNC group");
    T_MB_EQ(cx, x, 0, "many distinct values: values");
    mb_release(cx);
    mb_release(x);
    o.enc = -1;
    /* co-coding: correlated column pairs share groups */
    Spec cs = {"corr", 4000, 6, 6, 0.1, 1, true, 0, false};
    x = gen(&cs);
    o.force = false;
    cx = cla_compress(x, &o, &e);
    T_CHECK(cx && mb_is_cmb(cx) && cx->cmb->ngroups < 6, "corr: co-coded (%d groups)", cx && cx->cmb ? cx->cmb->ngroups : -1);
    mb_release(cx);
    mb_release(x);
}

/* Sparse decompression appends each group's non-zeros to the rows: a
 * sparse block of two DDC1 groups whose columns interleave ({0, 3, 5} and
 * {1, 2, 6}) and an UNC group ({4}, sparse, with a stored zero), so rows
 * must be sorted after appending; 5000 rows (blocks of CLA_BLK rows), 1
 * and 2 threads, whole and a row range, against the dense decompression
 * converted. */
static ClaGroup *ddc1_group(int64_t n, const int32_t *cols, int nc, const double *dict, int nd)
{
    ClaGroup *g = cla_group_new(CLA_DDC1, nc, nd);
    memcpy(g->cols, cols, (size_t)nc * sizeof *cols);
    memcpy(g->dict, dict, (size_t)(nc * nd) * sizeof *dict);
    g->ix = cla_index_new();
    g->ix->c1 = malloc((size_t)n);
    for (int64_t i = 0; i < n; i++) {
        /* tuple 0 (all zero) mostly */
        uint8_t c = urand() < 0.85 ? 0 : (uint8_t)(1 + (int)(urand() * (nd - 1)));
        g->ix->c1[i] = c;
        g->counts[c]++;
    }
    return g;
}

/* t(X) %*% X of one-hot data (features of 10 categories co-coded into
 * groups of many columns): the pairs of groups through their tuples'
 * co-occurrence counts (cla_ops.c tsmm_counts: DDC1 codes read in
 * place, OLE/RLE codes by their iterators) against the dense kernel over
 * the decompressed block, with a category's value Inf or NaN in one row
 * (0 * Inf meets the other groups' zeros), and decompression itself. */
static void check_tsmm_counts(void)
{
    BrErr e = {0};
    static const int encs[] = {-1, CLA_DDC1, CLA_OLE, CLA_RLE};
    for (size_t k = 0; k < sizeof encs / sizeof *encs; k++)
        for (int bad = 0; bad < 3; bad++) {
            int64_t n = 6000, f = 6, cat = 10;
            MB *x = mb_dense(n, f * cat, &e);
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < f; j++) {
                    int64_t c = (int64_t)(urand() * urand() * (double)cat);   /* skewed */
                    x->d[i * f * cat + j * cat + c] = 1 + (double)(j % 2);
                }
            if (bad) x->d[777 * f * cat + 2 * cat + 3] = bad == 1 ? INFINITY : NAN;
            mb_recount_nnz(x);
            ClaPlanOpts o = cla_plan_defaults();
            o.force = true;
            o.enc = encs[k];
            MB *cx = cla_compress(x, &o, &e);
            int wide = 0;
            for (int q = 0; cx && mb_is_cmb(cx) && q < cx->cmb->ngroups; q++) wide += cx->cmb->groups[q]->ncols >= 3;
            T_CHECK(cx && mb_is_cmb(cx) && wide >= 2, "tsmm counts enc %d bad %d: compressed, %d groups of 3+ columns (%s)",
                    encs[k], bad, wide, e.msg);
            MB *d = cx ? cmb_decompress(cx, &e) : NULL;
            T_MB_EQ(d, x, 0, "tsmm counts enc %d bad %d: decompress", encs[k], bad);
            MB *r = cx ? cla_tsmm(cx, &e) : NULL, *q = k_tsmm(x, true, &e);
            T_MB_EQ(r, q, RT, "tsmm counts enc %d bad %d: t(X) %%*%% X", encs[k], bad);
            mb_release(r), mb_release(q), mb_release(d), mb_release(cx), mb_release(x);
        }
}

/* Row readers over thin list groups (cmb.c cursor_windows: OLE/RLE
 * tuples listing few rows a read, decoded a window at a time): rows read
 * in pieces of varying length from several starts, the reads' bound
 * (cla_rows_bound) exact, short of the read (reads past it stay
 * correct), unknown, or cut short and then extended (a window filled up
 * to an old bound must not serve the rows past it), against the
 * uncompressed rows; each encoding forced, n across an OLE segment. */
static void check_rows_bound(void)
{
    BrErr e = {0};
    Spec sp = {"thin", 70000, 3, 300, 0.5, 1, false, 0, false};
    MB *x = dense_of(gen(&sp));
    static const int encs[] = {CLA_OLE, CLA_RLE, -1};
    for (size_t k = 0; k < sizeof encs / sizeof *encs; k++) {
        ClaPlanOpts o = cla_plan_defaults();
        o.force = true;
        o.enc = encs[k];
        MB *cx = cla_compress(x, &o, &e);
        T_CHECK(cx && mb_is_cmb(cx), "rows bound enc %d: compressed (%s)", encs[k], e.msg);
        int64_t n = x->rows, m = x->cols, starts[] = {0, 3, 65530};
        double *buf = malloc((size_t)(5000 * m) * sizeof(double));
        for (int si = 0; cx && mb_is_cmb(cx) && buf && si < 3; si++) {
            ClaRows *rd = cla_rows_open(cx, starts[si]);
            int bad = 0, step = 0;
            for (int64_t lo = starts[si]; rd && lo < n; step++) {
                int64_t len = BR_MIN(n - lo, 1 + (step * 977) % 4999);
                int mode = step % 4;
                cla_rows_bound(rd, mode == 0 ? lo + len : mode == 1 ? lo + 1 : mode == 2 ? 0 : lo + len / 2 + 1);
                cla_rows_read(rd, len, buf);
                bad += memcmp(buf, x->d + lo * m, (size_t)(len * m) * sizeof(double)) != 0;
                lo += len;
            }
            T_CHECK(rd && bad == 0, "rows bound enc %d from %lld: %d pieces differ", encs[k], (long long)starts[si], bad);
            cla_rows_close(rd);
        }
        free(buf);
        mb_release(cx);
    }
    mb_release(x);
}

/* The finiteness flag of a decompressed block (cmb.c dec_fin): the
 * dictionaries decide. Each encoding forced, values finite, with a NaN
 * or an -Inf in one cell (row 1234): all rows flagged by the answer,
 * rows that miss the cell unknown when a dictionary holds it (a range
 * need not hold the tuple), finite when none does; the flag always
 * agrees with the values. */
static void check_dec_fin(void)
{
    BrErr e = {0};
    static const int encs[] = {CLA_DDC1, CLA_OLE, CLA_RLE, CLA_UNC, -1};
    for (size_t k = 0; k < sizeof encs / sizeof *encs; k++)
        for (int bad = 0; bad < 3; bad++) {
            MB *x = mb_dense(4000, 5, &e);
            for (int64_t i = 0; i < 4000 * 5; i++) x->d[i] = (double)((i * 7 / 5) % 4);
            if (bad) x->d[1234 * 5 + 2] = bad == 1 ? NAN : -INFINITY;
            mb_recount_nnz(x);
            ClaPlanOpts o = cla_plan_defaults();
            o.force = true;
            o.enc = encs[k];
            MB *cx = cla_compress(x, &o, &e);
            T_CHECK(cx && mb_is_cmb(cx), "dec fin enc %d bad %d: compressed (%s)", encs[k], bad, e.msg);
            for (int q = 0; q < 2 && cx && mb_is_cmb(cx); q++) {
                int64_t rl = 0, ru = q ? 1000 : 4000;
                MB *d = cmb_decompress_rows(cx, rl, ru, &e);
                bool nf = false;
                for (int64_t i = 0; d && i < (d->sparse ? d->nnz : d->rows * d->cols); i++)
                    nf |= !isfinite(d->sparse ? d->v[i] : d->d[i]);
                int want = !bad ? MB_FIN_FINITE : q == 0 ? MB_FIN_NONFINITE : MB_FIN_UNKNOWN;
                T_CHECK(d && d->fin == want && nf == (bad && q == 0),
                        "dec fin enc %d bad %d rows %lld-%lld: flag %d, want %d; non-finite %d", encs[k], bad,
                        (long long)rl, (long long)ru, d ? d->fin : -1, want, nf);
                mb_release(d);
            }
            mb_release(cx);
            mb_release(x);
        }
}

static void check_dec_sparse(void)
{
    BrErr e = {0};
    int64_t n = 5000;
    int32_t ca[] = {0, 3, 5}, cb[] = {1, 2, 6}, cu[] = {4};
    double da[] = {0, 0, 0, 1.5, 0, -2, 0, NAN, 3, 4, 5, 6};
    double db[] = {0, 0, 0, 0, 7, 0, -1, -1, -1};
    ClaGroup **gs = calloc(3, sizeof *gs);
    gs[0] = ddc1_group(n, ca, 3, da, 4);
    gs[1] = ddc1_group(n, cb, 3, db, 3);
    gs[2] = cla_group_new(CLA_UNC, 1, 0);
    gs[2]->cols[0] = cu[0];
    MB *u = mb_sp_alloc(n, 1, n, &e);
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        u->rp[i] = k;
        if (i % 7 == 0) { u->ci[k] = 0; u->v[k++] = i % 14 == 0 ? 0 : (double)i; }   /* a stored zero */
    }
    u->rp[n] = k;
    u->nnz = k;
    gs[2]->unc = u;
    MB *cx = cmb_new(n, 7, gs, 3, &e);
    T_CHECK(cx != NULL, "dec_sparse: block built");
    int64_t ranges[][2] = {{0, n}, {1999, 4321}};
    for (int th = 1; th <= 2; th++)
        for (int q = 0; q < 2; q++) {
            br_set_threads(th);
            int64_t rl = ranges[q][0], ru = ranges[q][1];
            MB *s = cmb_decompress_rows(cx, rl, ru, &e);
            T_CHECK(s && s->sparse && mb_valid(s, true), "dec_sparse th %d rows %lld: sparse, valid (sorted rows)", th,
                    (long long)rl);
            /* the reference: every cell read through the groups one by one */
            MB *ref = mb_dense(ru - rl, 7, &e);
            for (int64_t i = rl; i < ru; i++) {
                for (int g = 0; g < 2; g++) {
                    const ClaGroup *p = gs[g];
                    for (int j = 0; j < 3; j++) ref->d[(i - rl) * 7 + p->cols[j]] = p->dict[p->ix->c1[i] * 3 + j];
                }
                for (int64_t t = u->rp[i]; t < u->rp[i + 1]; t++) ref->d[(i - rl) * 7 + 4] = u->v[t];
            }
            mb_recount_nnz(ref);
            T_MB_EQ(s, ref, 0, "dec_sparse th %d rows %lld..%lld", th, (long long)rl, (long long)ru);
            T_CHECK(s && s->nnz == ref->nnz, "dec_sparse: nnz %lld want %lld", s ? (long long)s->nnz : -1LL,
                    (long long)ref->nnz);
            mb_release(ref);
            mb_release(s);
        }
    br_set_threads(0);
    mb_release(cx);
}

/* t(X) %*% Y through joint codes of DDC groups (kernels/cla_ops.c,
 * tl_bundles), and rows decoded by runs of one-column DDC1 groups
 * (matrix/cmb.c, ddc1_run_rows): one group per column with swept cardinalities (bundles of
 * 2-4 groups, joint tables from 4 to 4096 tuples, DDC1 and DDC2 members,
 * OLE/RLE groups between them), Y of 1 to 5 columns, row
 * counts across the fixed row ranges, 1 and 2 threads. */
static void check_tl_joint(void)
{
    int cards[][6] = {{2, 3, 2, 5, 2, 2}, {7, 9, 11, 3, 40, 2}, {300, 2, 5, 13, 2, 70}, {60, 60, 3, 2, 2, 500}};
    int64_t ns[] = {700, 2 * CLA_BLK + 37, 9 * CLA_BLK + 5};
    for (size_t ci = 0; ci < sizeof cards / sizeof *cards; ci++)
        for (size_t ni = 0; ni < sizeof ns / sizeof *ns; ni++) {
            int64_t n = ns[ni], m = 8;
            BrErr e = {0};
            MB *x = mb_dense(n, m, &e);
            for (int64_t i = 0; i < n; i++) {
                double *r = x->d + i * m;
                for (int j = 0; j < 6; j++) r[j] = (double)(int)(urand() * cards[ci][j]) - 1;
                r[6] = urand() < 0.9 ? 0 : 2;                 /* sparse: OLE between the DDC groups */
                r[7] = (double)((i / 300) % 4);               /* runs: RLE */
            }
            mb_recount_nnz(x);
            for (int th = 1; th <= 2; th++) {
                br_set_threads(th);
                ClaPlanOpts o = cla_plan_defaults();
                o.force = true;
                o.cocode = false;
                MB *cx = cla_compress(x, &o, &e);
                T_CHECK(cx && mb_is_cmb(cx), "tl joint: compressed (%s)", e.msg);
                /* two DDC groups in a row (others between) whose tables
                 * multiply to at most 4096: a bundle forms */
                int64_t prev = 0, pair = 0;
                for (int g = 0; cx && mb_is_cmb(cx) && g < cx->cmb->ngroups; g++) {
                    const ClaGroup *cg = cx->cmb->groups[g];
                    if (cg->enc != CLA_DDC1 && cg->enc != CLA_DDC2) continue;
                    pair += prev && prev * cg->ndict <= 4096;
                    prev = cg->ndict;
                }
                T_CHECK(pair > 0, "tl joint: cards %zu n %lld: bundles of DDC groups", ci, (long long)n);
                /* runs of one-column DDC1 groups decoded together: the
                 * decompression and rows read in blocks from row 5 on */
                MB *dx = cx ? cmb_decompress(cx, &e) : NULL;
                T_MB_EQ(dx, x, 0, "tl joint: cards %zu n %lld th %d: decompress", ci, (long long)n, th);
                mb_release(dx);
                ClaRows *rd = cx ? cla_rows_open(cx, 5) : NULL;
                double *buf = malloc(700 * 8 * sizeof(double));
                int bad = 0;
                for (int64_t lo = 5; rd && buf && lo < n; lo += 700) {
                    int64_t len = n - lo < 700 ? n - lo : 700;
                    cla_rows_read(rd, len, buf);
                    bad += memcmp(buf, x->d + lo * m, (size_t)(len * m) * sizeof(double)) != 0;
                }
                T_CHECK(rd && buf && bad == 0, "tl joint: cards %zu n %lld th %d: rows read", ci, (long long)n, th);
                cla_rows_close(rd);
                free(buf);
                for (int64_t k = 1; cx && k <= 5; k += 2) {
                    MB *y = rnd(n, k);
                    MB *r = cla_matmul_tl(cx, y, &e), *q = k_matmul_tl(x, y, &e);
                    T_MB_EQ(r, q, RT, "tl joint: cards %zu n %lld k %lld th %d", ci, (long long)n, (long long)k, th);
                    mb_release(r);
                    mb_release(q);
                    mb_release(y);
                }
                mb_release(cx);
            }
            mb_release(x);
        }
    br_set_threads(0);
}

/* Multi-column products over many one-column groups (more than a chunk
 * of DDC_FUSE = 16 DDC1 groups summed per output row in registers, the
 * constant-width gathers and scatters, past 8 columns chunks of 8 and a
 * tail; the steps of rows by width): widths 2 to 9, 16 and 17, each group
 * forced DDC1, DDC2, OLE and RLE, 1 and 2 threads; with them X %*% v,
 * t(X) %*% y (runs of DDC2 groups) and t(X) %*% X over many groups
 * (decompressed by blocks in fixed row ranges, the last one partial). */
static void check_wide_products(void)
{
    int64_t n = 2 * CLA_BLK + 77, m = 21;
    BrErr e = {0};
    MB *x = mb_dense(n, m, &e);
    for (int64_t i = 0; i < n * m; i++) x->d[i] = (double)(int)(urand() * (3 + i % m)) - 1;
    mb_recount_nnz(x);
    const ClaEnc encs[] = {CLA_DDC1, CLA_DDC2, CLA_OLE, CLA_RLE};
    const int64_t ks[] = {1, 2, 3, 4, 5, 8, 9, 16, 17};
    for (size_t ei = 0; ei < sizeof encs / sizeof *encs; ei++) {
        ClaPlanOpts o = cla_plan_defaults();
        o.force = true;
        o.cocode = false;
        o.enc = (int)encs[ei];
        MB *cx = cla_compress(x, &o, &e);
        const char *en = cla_enc_name(encs[ei]);
        bool all = cx && mb_is_cmb(cx) && cx->cmb->ngroups == m;
        for (int q = 0; all && q < m; q++) all = cx->cmb->groups[q]->enc == encs[ei];
        T_CHECK(all, "wide products: one %s group per column", en);
        for (int th = 1; cx && th <= 2; th++) {
            br_set_threads(th);
            for (size_t ki = 0; ki < sizeof ks / sizeof *ks; ki++) {
                int64_t k = ks[ki];
                if (encs[ei] != CLA_DDC1 && k > 2 && k != 9 && k != 16 && k != 17) continue;
                MB *B = rnd(m, k), *Y = rnd(n, k);
                MB *r1 = cla_matmul_right(cx, B, &e), *q1 = k_matmul(x, B, &e);
                MB *r2 = cla_matmul_tl(cx, Y, &e), *q2 = k_matmul_tl(x, Y, &e);
                T_MB_EQ(r1, q1, RT, "wide products: %s X %%*%% B, k %lld th %d", en, (long long)k, th);
                T_MB_EQ(r2, q2, RT, "wide products: %s t(X) %%*%% Y, k %lld th %d", en, (long long)k, th);
                MB *ms[] = {B, Y, r1, q1, r2, q2};
                for (size_t j = 0; j < sizeof ms / sizeof *ms; j++) mb_release(ms[j]);
            }
            MB *r3 = cla_tsmm(cx, &e), *q3 = k_tsmm(x, true, &e);
            T_MB_EQ(r3, q3, RT, "wide products: %s t(X) %%*%% X th %d", en, th);
            mb_release(r3), mb_release(q3);
        }
        br_set_threads(0);
        mb_release(cx);
    }
    mb_release(x);
    /* DDC2 groups too large to bundle, in runs of 4, 3, 2 and 1 (10, 7,
     * 6 and 5 of them beside a DDC1 column): t(X) %*% y's one-pass scatter
     * over each run (ddc2_scatter_run) */
    const int64_t ms[] = {11, 8, 7, 6};
    for (size_t mi = 0; mi < sizeof ms / sizeof *ms; mi++) {
        int64_t m2 = ms[mi];
        MB *x2 = mb_dense(n, m2, &e);
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < m2; j++)
                x2->d[i * m2 + j] = j == 4 ? (int)(urand() * 5) : (double)(int)(urand() * (300 + 97 * j)) - 7;
        mb_recount_nnz(x2);
        ClaPlanOpts o = cla_plan_defaults();
        o.force = true;
        o.cocode = false;
        MB *cx = cla_compress(x2, &o, &e);
        int nd2 = 0;
        for (int q = 0; cx && mb_is_cmb(cx) && q < cx->cmb->ngroups; q++) nd2 += cx->cmb->groups[q]->enc == CLA_DDC2;
        T_CHECK(nd2 == m2 - 1, "wide products: %lld DDC2 groups of %lld columns", (long long)nd2, (long long)m2);
        for (int th = 1; cx && th <= 2; th++) {
            br_set_threads(th);
            MB *Y = rnd(n, 1), *r2 = cla_matmul_tl(cx, Y, &e), *q2 = k_matmul_tl(x2, Y, &e);
            T_MB_EQ(r2, q2, RT, "wide products: DDC2 runs t(X) %%*%% y, %lld columns th %d", (long long)m2, th);
            mb_release(Y), mb_release(r2), mb_release(q2);
        }
        br_set_threads(0);
        mb_release(cx);
        mb_release(x2);
    }
}

/* The machine's CLA constants (codegen/cla_machine.c): measured once
 * into the cache folder (in their clamped ranges) and read back from it;
 * a file's values are taken; BRAID_CLA_MACHINE pins them and
 * BRAID_CG_MACHINE pins the defaults. No check depends on the values
 * measured. */
static void check_cla_machine(void)
{
    char *cg = getenv("BRAID_CG_MACHINE") ? strdup(getenv("BRAID_CG_MACHINE")) : NULL;
    unsetenv("BRAID_CG_MACHINE");
    unsetenv("BRAID_CLA_MACHINE");
    char dir[] = "/tmp/braid_test_clam_XXXXXX";
    T_CHECK(mkdtemp(dir) != NULL, "cla machine: a cache folder");
    ClaMachine a, b, d = cg_cla_machine_defaults();
    cg_cla_machine(dir, &a);
    T_CHECK(a.dec_w >= 0.25 && a.dec_w <= 16 && a.mat_w >= 0.25 && a.mat_w <= 16 && a.passes >= 2 && a.passes <= 400,
            "cla machine: measured %g %g %g", a.dec_w, a.mat_w, a.passes);
    printf("  cla machine: decompressed cell %.3g, materialized cell %.3g cell operations; compression %.3g passes\n",
           a.dec_w, a.mat_w, a.passes);
    char path[300];
    snprintf(path, sizeof path, "%s/cla-machine2.txt", dir);
    cg_cla_machine(dir, &b);
    T_CHECK(fabs(b.dec_w - a.dec_w) <= 1e-5 * a.dec_w && fabs(b.mat_w - a.mat_w) <= 1e-5 * a.mat_w &&
                fabs(b.passes - a.passes) <= 1e-5 * a.passes,
            "cla machine: cached");
    FILE *f = fopen(path, "w");
    if (f) { fprintf(f, "3 5 40\n"); fclose(f); }
    cg_cla_machine(dir, &b);
    T_CHECK(b.dec_w == 3 && b.mat_w == 5 && b.passes == 40, "cla machine: read from the cache");
    setenv("BRAID_CLA_MACHINE", "1.5 2.5 30", 1);
    cg_cla_machine(dir, &b);
    T_CHECK(b.dec_w == 1.5 && b.mat_w == 2.5 && b.passes == 30, "cla machine: BRAID_CLA_MACHINE");
    unsetenv("BRAID_CLA_MACHINE");
    setenv("BRAID_CG_MACHINE", "4e9 3e9 5e9 6e10 3e10", 1);
    cg_cla_machine(dir, &b);
    T_CHECK(b.dec_w == d.dec_w && b.mat_w == d.mat_w && b.passes == d.passes, "cla machine: pinned defaults");
    unlink(path);
    rmdir(dir);
    if (cg) setenv("BRAID_CG_MACHINE", cg, 1);
    else unsetenv("BRAID_CG_MACHINE");
    free(cg);
}

/* NaN, +Inf and -Inf on the other side of compressed products (and in X
 * meeting zeros of the other side) give exactly the ordinary kernels'
 * NaN/Inf cells (kernels/cla_ieee.c): every group format (forced DDC1,
 * DDC2, OLE, RLE, UNC, the size-chosen mix, with an EMPTY and a CONST
 * column), each value alone at a row where the column is zero and where
 * it is not, and +Inf and -Inf in rows of one tuple (NaN from the sum). */
typedef struct IeeeIn { MB *y, *Y, *v, *B, *L; } IeeeIn;

static IeeeIn ieee_in(int64_t n, int64_t m)
{
    BrErr e = {0};
    IeeeIn in = {rnd(n, 1), rnd(n, 3), rnd(m, 1), rnd(m, 3), mb_dense(2, n, &e)};
    for (int64_t i = 0; i < n; i++) in.L->d[i] = in.y->d[i], in.L->d[n + i] = in.Y->d[i * 3];
    return in;
}

/* Every product over the inputs (non-zeros recounted) against the
 * ordinary kernels; the reference t(X) %*% y returned (caller releases). */
static MB *ieee_products(const char *what, const char *tag, const MB *x, const MB *cx, IeeeIn in)
{
    BrErr e = {0};
    MB *ms[] = {in.y, in.Y, in.v, in.B, in.L};
    for (size_t k = 0; k < sizeof ms / sizeof *ms; k++) mb_recount_nnz(ms[k]);
    struct { const char *op; MB *r, *q; } c[] = {
        {"t(X) %*% y", cla_matmul_tl(cx, in.y, &e), k_matmul_tl(x, in.y, &e)},
        {"X %*% v", cla_matmul_right(cx, in.v, &e), k_matmul(x, in.v, &e)},
        {"X %*% B", cla_matmul_right(cx, in.B, &e), k_matmul(x, in.B, &e)},
        {"t(X) %*% Y", cla_matmul_tl(cx, in.Y, &e), k_matmul_tl(x, in.Y, &e)},
        {"L %*% X", cla_matmul_left(in.L, cx, &e), k_matmul(in.L, x, &e)},
        {"t(Y) %*% X", cla_matmul_tl_left(in.Y, cx, &e), k_matmul_tl(in.Y, x, &e)},
        {"mmchain(X, v, y)", cla_mmchain(cx, in.v, in.y, &e), k_mmchain(x, in.v, in.y, &e)},
        {"t(X) %*% X", cla_tsmm(cx, &e), k_tsmm(x, true, &e)},
    };
    for (size_t k = 0; k < sizeof c / sizeof *c; k++) {
        T_MB_EQ(c[k].r, c[k].q, RT, "%s: %s: %s", what, tag, c[k].op);
        mb_release(c[k].r);
        if (k) mb_release(c[k].q);
    }
    for (size_t k = 0; k < sizeof ms / sizeof *ms; k++) mb_release(ms[k]);
    return c[0].q;
}

static void ieee_case(const char *what, const MB *x, const MB *cx, double val, int64_t at, int64_t at2)
{
    int64_t n = x->rows, m = x->cols;
    IeeeIn in = ieee_in(n, m);
    in.y->d[at] = val;
    in.Y->d[at * 3 + 1] = val;
    in.L->d[n + at] = val;
    int64_t u = at % m, u2 = at2 % m;
    in.v->d[u] = val;
    in.B->d[u * 3 + 2] = val;
    if (at2 >= 0) {   /* the opposite infinity in a second row */
        in.y->d[at2] = -val, in.Y->d[at2 * 3 + 1] = -val, in.L->d[n + at2] = -val;
        in.v->d[u2] = -val, in.B->d[u2 * 3 + 2] = -val;
    }
    char tag[96];
    snprintf(tag, sizeof tag, "%g at row %lld (%lld)", val, (long long)at, (long long)at2);
    mb_release(ieee_products(what, tag, x, cx, in));
}

/* X itself with a non-finite value meeting zeros of the other side and
 * of its own rows (tsmm). */
static void ieee_x(const char *what, const MB *x, const MB *cx)
{
    int64_t n = x->rows, m = x->cols;
    IeeeIn in = ieee_in(n, m);
    MB *ms[] = {in.y, in.Y, in.v, in.B, in.L};
    for (size_t k = 0; k < sizeof ms / sizeof *ms; k++)   /* positive: one sign of Inf per column */
        for (int64_t i = 0; i < ms[k]->rows * ms[k]->cols; i++) ms[k]->d[i] = 0.5 + fabs(ms[k]->d[i]);
    for (int64_t i = 0; i < n; i += 5) in.y->d[i] = 0, in.Y->d[i * 3 + 1] = 0, in.L->d[i] = 0;
    in.v->d[1] = 0;
    in.B->d[3 + 2] = 0;
    MB *q = ieee_products(what, "non-finite X", x, cx, in);
    /* not vacuous: an Inf cell and a NaN cell */
    T_CHECK(q && !q->sparse && isinf(q->d[0]) && isnan(q->d[1]), "%s: non-finite X: Inf and NaN in t(X) %%*%% y", what);
    mb_release(q);
}

static void check_ieee(void)
{
    Spec s = {"ieee", 3000, 5, 3, 0.6, 9, false, 0, false};
    MB *x0 = gen(&s);
    BrErr e = {0};
    int64_t n = x0->rows, m = s.m + 2;
    MB *x = mb_dense(n, m, &e), *xi = mb_dense(n, m, &e);
    for (int64_t i = 0; i < n; i++) {
        for (int64_t j = 0; j < s.m; j++) x->d[i * m + j] = mb_get(x0, i, j);
        x->d[i * m + s.m + 1] = 2;   /* column s.m: EMPTY; s.m + 1: CONST */
    }
    memcpy(xi->d, x->d, (size_t)(n * m) * sizeof(double));
    /* Inf in X: column 0 only where the other side is not zero (Inf
     * results), column 1 also where it is (NaN, though the sum of the
     * other side over the Inf tuple's rows is not zero), -Inf in column 2 */
    for (int64_t i = 0; i < n; i++) {
        if (i % 37 == 3) xi->d[i * m + 1] = INFINITY;
        if (i % 37 == 3 && i % 5 != 0) xi->d[i * m] = INFINITY;
        if (i % 37 == 5 && i % 5 != 0) xi->d[i * m + 2] = -INFINITY;
    }
    mb_recount_nnz(x);
    mb_recount_nnz(xi);
    mb_release(x0);
    /* a row where column at % m is zero and one where it is not, per column */
    int64_t zr[8], nzr[8];
    for (int64_t j = 0; j < m; j++) {
        zr[j] = nzr[j] = -1;
        for (int64_t i = j; i < n; i += m) {
            if (x->d[i * m + j] == 0 && zr[j] < 0) zr[j] = i;
            if (x->d[i * m + j] != 0 && nzr[j] < 0) nzr[j] = i;
        }
    }
    int encs[] = {-1, CLA_DDC1, CLA_DDC2, CLA_OLE, CLA_RLE, CLA_UNC};
    double vals[] = {NAN, INFINITY, -INFINITY};
    for (size_t k = 0; k < sizeof encs / sizeof *encs; k++) {
        ClaPlanOpts o = cla_plan_defaults();
        o.force = true;
        o.enc = encs[k];
        o.cocode = k != 2;
        MB *cx = cla_compress(x, &o, &e), *cxi = cla_compress(xi, &o, &e);
        char what[64];
        snprintf(what, sizeof what, "ieee enc %s", encs[k] < 0 ? "auto" : cla_enc_name(encs[k]));
        T_CHECK(cx && mb_is_cmb(cx) && cxi && mb_is_cmb(cxi), "%s: compressed", what);
        if (!cx || !mb_is_cmb(cx) || !cxi || !mb_is_cmb(cxi)) { mb_release(cx); mb_release(cxi); continue; }
        for (int64_t j = 0; j < m; j++)
            for (size_t a = 0; a < 3; a++) {
                if (zr[j] >= 0) ieee_case(what, x, cx, vals[a], zr[j], -1);
                if (nzr[j] >= 0) ieee_case(what, x, cx, vals[a], nzr[j], -1);
            }
        /* +Inf and -Inf in two rows of one tuple (first column's value) */
        for (int64_t i = 1; i < n; i++)
            if (x->d[i * m] == x->d[0] && (i - 0) % m == 0) { ieee_case(what, x, cx, INFINITY, 0, i); break; }
        ieee_x(what, xi, cxi);
        for (int th = 2; th <= 2; th++) {   /* the threaded paths */
            br_set_threads(th);
            ieee_case(what, x, cx, NAN, zr[0] >= 0 ? zr[0] : 0, -1);
            ieee_x(what, xi, cxi);
            br_set_threads(0);
        }
        mb_release(cx);
        mb_release(cxi);
    }
    mb_release(x);
    mb_release(xi);
}

/* The compression passes and the compressed products ask br_par:
 * teams when the machine is not crowded, one thread when it is, the same
 * bits (t_crowded). A dense and a sparse X, each compressed in the run. */
typedef struct CrowdCla { MB *x[2], *b, *y, *v, *w; } CrowdCla;

static void crowded_cla_run(void *arg, MB **r)
{
    const CrowdCla *c = arg;
    for (int q = 0; q < 2; q++) {
        BrErr e = {0};
        ClaPlanOpts o = cla_plan_defaults();
        o.force = true;
        MB *cx = cla_compress(c->x[q], &o, &e);
        if (!cx || !mb_is_cmb(cx)) { mb_release(cx); continue; }
        r[4 * q] = cla_matmul_right(cx, c->b, &e);
        r[4 * q + 1] = cla_matmul_tl(cx, c->y, &e);
        r[4 * q + 2] = cla_tsmm(cx, &e);
        r[4 * q + 3] = cla_mmchain(cx, c->v, c->w, &e);
        mb_release(cx);
    }
}

static void crowded_cla(void)
{
    Spec s = {"crowded", 20000, 8, 6, 0.3, 1, false, 0, false};
    CrowdCla c = {{gen(&s), NULL}, rnd(8, 4), rnd(20000, 3), rnd(8, 1), rnd(20000, 1)};
    s.zero = 0.9;
    BrErr e = {0};
    MB *d = gen(&s);
    c.x[1] = mb_to_sparse(d, &e);
    mb_release(d);
    t_crowded("cla", 8, 8, crowded_cla_run, &c);
    mb_release(c.x[0]); mb_release(c.x[1]); mb_release(c.b); mb_release(c.y); mb_release(c.v); mb_release(c.w);
}


/* Compression of a matrix read by blocks of rows (cla_compress_rows,
 * docs/cla.md "Compressed as it is read") against the matrix itself:
 * the rows served from x by blocks, even blocks as CSR and odd ones
 * dense (both paths of the chunk buffer), over the specs' cardinalities,
 * zeros, runs, co-correlation and NaN, block sizes under and over the
 * chunk, 1 and 2 threads, chosen and forced encodings: every cell equal
 * to x's to the bit, nnz exact, no block over the asked rows, the most
 * bytes held under half of x where it compresses, the size within 2x of
 * cla_compress(x)'s; a group whose dictionary overflows mid-way (planned
 * from first rows of 3 values, 70000 distinct later) keeps its values in
 * the UNC group; auto declines random data. */
typedef struct RowSrc {
    const MB *x;
    int64_t calls, most;
} RowSrc;

static MB *src_rows(void *arg, int64_t r0, int64_t r1, BrErr *e)
{
    RowSrc *s = arg;
    const MB *x = s->x;
    int64_t n = r1 - r0, m = x->cols;
    s->most = BR_MAX(s->most, n);
    bool sp = (s->calls++ & 1) == 0;
    MB *b = sp ? mb_sp_new(n, m, 16, e) : mb_dense(n, m, e);
    for (int64_t i = 0; b && i < n; i++)
        for (int64_t j = 0; j < m; j++) {
            double v = x->d[(r0 + i) * m + j];
            if (!sp) b->d[i * m + j] = v;
            else if (v != 0 && mb_sp_append(b, i, j, v, e)) { mb_release(b); return NULL; }
        }
    if (b && sp) mb_sp_finish(b);
    else if (b) mb_recount_nnz(b);
    return b;
}

static bool same_bits(const MB *x, const MB *d)
{
    for (int64_t i = 0; i < x->rows; i++)
        for (int64_t j = 0; j < x->cols; j++) {
            double a = x->d[i * x->cols + j], b = mb_get(d, i, j);
            if (!(isnan(a) ? isnan(b) : a == b && signbit(a) == signbit(b))) return false;
        }
    return true;
}

static void stream_case(const char *what, const MB *x, ClaPlanOpts o, ClaStreamOpts so, bool small)
{
    BrErr e = {0};
    RowSrc src = {.x = x};
    ClaStreamInfo info;
    MB *cx = cla_compress_rows(src_rows, &src, x->rows, x->cols, &o, &so, &info, &e);
    T_CHECK(cx && mb_is_cmb(cx) && !info.declined, "%s: compressed as read (%s)", what, e.msg);
    if (!cx || !mb_is_cmb(cx)) { mb_release(cx); return; }
    MB *d = cmb_decompress(cx, &e);
    T_CHECK(d && same_bits(x, d), "%s: every cell x's", what);
    T_CHECK(cx->nnz == x->nnz, "%s: nnz %lld want %lld", what, (long long)cx->nnz, (long long)x->nnz);
    T_CHECK(src.most <= so.blk_rows, "%s: a block of %lld rows, asked %lld", what, (long long)src.most,
            (long long)so.blk_rows);
    T_CHECK(info.blocks == (x->rows + so.blk_rows - 1) / so.blk_rows, "%s: %lld blocks", what, (long long)info.blocks);
    if (small)
        T_CHECK((double)info.peak < 0.5 * (double)mb_bytes(x), "%s: %lld bytes held at most, x %zu", what,
                (long long)info.peak, mb_bytes(x));
    MB *mx = small ? cla_compress(x, &o, &e) : NULL;
    if (mx && mb_is_cmb(mx))
        T_CHECK(cmb_bytes(cx) <= 2 * cmb_bytes(mx) + 4096, "%s: %zu bytes, in memory %zu", what, cmb_bytes(cx),
                cmb_bytes(mx));
    mb_release(mx);
    mb_release(d);
    mb_release(cx);
}

/* The overflow case: column 0 of 3 values in the first 20000 of n rows,
 * then distinct; column 1 of 5 values; column 2 (when m is 3) of 4. */
static MB *overflow_x(int64_t n, int64_t m)
{
    BrErr e = {0};
    MB *x = mb_dense(n, m, &e);
    for (int64_t i = 0; i < n; i++) {
        x->d[i * m] = i < 20000 ? (double)(i % 3) : (double)i + 0.5;
        x->d[i * m + 1] = (double)(i % 5);
        if (m > 2) x->d[i * m + 2] = (double)((i / 7) % 4);
    }
    mb_recount_nnz(x);
    return x;
}

/* x compressed from rd, planned from its first 2000 rows: every cell
 * x's, column 0 kept as values, the others coded. */
static void overflow_check(const char *what, ClaRowsFn rd, void *arg, const MB *x)
{
    BrErr e = {0};
    ClaPlanOpts o = cla_plan_defaults();
    o.force = true;
    o.cocode = false;
    ClaStreamOpts so = cla_stream_defaults();
    so.blk_rows = 7000;
    so.sample_parts = 0;
    so.sample_rows = 2000;
    ClaStreamInfo info;
    MB *cx = cla_compress_rows(rd, arg, x->rows, x->cols, &o, &so, &info, &e);
    MB *d = cx && mb_is_cmb(cx) ? cmb_decompress(cx, &e) : NULL;
    bool unc0 = false, coded = false;
    for (int g = 0; d && g < cx->cmb->ngroups; g++) {
        const ClaGroup *q = cx->cmb->groups[g];
        for (int j = 0; j < q->ncols; j++) {
            if (q->cols[j] == 0) unc0 = q->enc == CLA_UNC;
            if (q->cols[j] != 0 && q->enc != CLA_UNC) coded = true;
        }
    }
    T_CHECK(d && same_bits(x, d) && unc0 && coded, "%s: column 0 kept as values, the others coded (%s)", what, e.msg);
    mb_release(d);
    mb_release(cx);
}

static void check_stream(void)
{
    Spec specs[] = {
        {"s-lowcard", 40000, 8, 4, 0.2, 1, false, 0, false},
        {"s-corr", 9000, 6, 8, 0.3, 1, true, 0, false},
        {"s-sparse", 12000, 9, 3, 0.95, 1, false, 0, false},
        {"s-runs", 15000, 5, 6, 0.3, 97, false, 0, false},
        {"s-nan", 7000, 4, 5, 0.2, 1, false, 0.05, false},
        {"s-mixed", 9000, 5, 300, 0.5, 3, true, 0, false},
        {"s-noise", 5000, 4, 0, 0, 1, false, 0, true},
    };
    for (size_t k = 0; k < sizeof specs / sizeof *specs; k++) {
        MB *x = gen(&specs[k]);
        if (x->sparse) {   /* the source reads x's dense cells */
            BrErr e = {0};
            MB *dx = mb_to_dense(x, &e);
            mb_release(x);
            x = dx;
        }
        for (int v = 0; v < (specs[k].noise ? 1 : 3); v++) {
            br_set_threads(v == 2 ? 2 : 1);
            ClaPlanOpts o = cla_plan_defaults();
            o.force = true;
            if (v == 1) o.enc = CLA_OLE;
            ClaStreamOpts so = cla_stream_defaults();
            so.blk_rows = v == 0 ? 997 : v == 1 ? x->rows / 3 + 1 : 5000;
            so.sample_rows = BR_MIN(so.sample_rows, so.blk_rows);
            char what[96];
            snprintf(what, sizeof what, "stream %s blk %lld%s th %d", specs[k].name, (long long)so.blk_rows,
                     v == 1 ? " OLE" : "", v == 2 ? 2 : 1);
            stream_case(what, x, o, so, k == 0 && v != 1);
        }
        br_set_threads(0);
        if (specs[k].noise) {
            /* true with a limit of half of x: the value columns
             * pass it early, the read stops there, held under twice it */
            BrErr e = {0};
            RowSrc src = {.x = x};
            ClaStreamInfo info;
            ClaPlanOpts o = cla_plan_defaults();
            o.force = true;
            ClaStreamOpts so = cla_stream_defaults();
            so.blk_rows = 250;
            so.sample_rows = 250;
            so.max_bytes = (double)mb_bytes(x) / 2;
            MB *cx = cla_compress_rows(src_rows, &src, x->rows, x->cols, &o, &so, &info, &e);
            T_CHECK(!cx && !e.code && info.over && info.rows > 0 && info.rows < x->rows / 2 &&
                        (double)info.peak < 2 * so.max_bytes,
                    "stream noise over the limit: stopped after %lld of %lld rows, %lld bytes held, limit %.0f (%s)",
                    (long long)info.rows, (long long)x->rows, (long long)info.peak, so.max_bytes, e.msg);
            mb_release(cx);
        }
        if (specs[k].noise) {   /* auto: the plan says it does not pay */
            BrErr e = {0};
            RowSrc src = {.x = x};
            ClaStreamInfo info;
            ClaPlanOpts o = cla_plan_defaults();
            ClaStreamOpts so = cla_stream_defaults();
            so.blk_rows = 1000;
            MB *cx = cla_compress_rows(src_rows, &src, x->rows, x->cols, &o, &so, &info, &e);
            T_CHECK(!cx && !e.code && info.declined && info.blocks == 0, "stream noise, auto: declined");
            mb_release(cx);
        }
        mb_release(x);
    }
    /* the overflow: planned from the first 2000 rows */
    MB *x = overflow_x(90000, 3);
    RowSrc src = {.x = x};
    overflow_check("stream overflow", src_rows, &src, x);
    mb_release(x);
}

/* csv read by ranges of rows (io_csv_rows) and compressed as it is read
 * against the whole read (io_read_matrix) compressed after it: the data
 * written as text with the read's options (header, separator, naStrings,
 * empty fields filled, a byte-order mark, blank lines, no final newline,
 * a folder of part files), every cell equal to the bit; ranges at and
 * off the index grid, a halved index; the overflow fallback; auto's
 * decline; bad data named by file and line as the whole read names it
 * (the first bad line, also when the sample met a later one first). */
typedef struct CsvCase {
    const char *name;
    Spec spec;
    bool header, bom, blank, fill, parts;
    const char *sep, *na;   /* na: written for NaN, read as naStrings */
} CsvCase;

static void csv_put(FILE *f, double v, const CsvCase *c, int64_t i, int64_t j)
{
    if (isnan(v)) fputs(c->na ? c->na : "NaN", f);
    else if (v == 0 && c->fill && (i + j) % 3 == 0) {}   /* an empty field: the fill value */
    else fprintf(f, "%.17g", v);
}

/* x as csv text at path (a folder of 3 part files when c->parts);
 * bad >= 0: that row's second field written as "1x2". */
static void csv_text(const char *path, const MB *x, const CsvCase *c, int64_t bad, int64_t bad2)
{
    char cmd[300], fn[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s %s.mtd", path, path);
    T_CHECK(system(cmd) == 0, "csv %s: old files removed", c->name);
    if (c->parts) mkdir(path, 0755);
    int64_t n = x->rows, m = x->cols, b1 = c->parts ? n / 3 : n, b2 = c->parts ? 2 * n / 3 : n;
    FILE *f = NULL;
    for (int64_t i = 0; i < n; i++) {
        if (i == 0 || i == b1 || i == b2) {
            if (f) fclose(f);
            if (c->parts) snprintf(fn, sizeof fn, "%s/part-%05d", path, i == 0 ? 0 : i == b1 ? 1 : 2);
            else snprintf(fn, sizeof fn, "%s", path);
            if (!(f = fopen(fn, "w"))) return;
            if (i == 0 && c->bom) fputs("\xEF\xBB\xBF", f);
            for (int64_t j = 0; i == 0 && c->header && j < m; j++)
                fprintf(f, "%sC%lld%s", j ? c->sep : "", (long long)j + 1, j + 1 == m ? "\n" : "");
        }
        if (c->blank && i % 37 == 5) fputs(i % 2 ? "\n" : "  \t\n", f);
        for (int64_t j = 0; j < m; j++) {
            if (j) fputs(c->sep, f);
            if ((i == bad || i == bad2) && j == 1) fputs("1x2", f);
            else csv_put(f, x->d[i * m + j], c, i, j);
        }
        /* no newline after a part's last row */
        if (i + 1 != n && i + 1 != b1 && i + 1 != b2) fputc('\n', f);
    }
    if (f) fclose(f);
}

static void csv_opts_of(const CsvCase *c, IoReadOpts *ro, const char **na)
{
    io_read_opts_init(ro);
    ro->format = "csv";
    ro->header = c->header;
    ro->sep = c->sep;
    if (c->na) {
        na[0] = c->na;
        ro->na_strings = na;
        ro->n_na = 1;
    }
}

static MB *csv_src(void *arg, int64_t r0, int64_t r1, BrErr *e) { return io_csv_rows((IoCsvRows *)arg, r0, r1, e); }

/* compressed after the whole read (forced; v 1: DDC1 only): after[v]
 * says whether it decompresses to the bits of dense */
static void compressed_after(const MB *ref, const MB *dense, bool after[2])
{
    BrErr e = {0};
    for (int v = 0; v < 2; v++) {
        ClaPlanOpts o = cla_plan_defaults();
        o.force = true;
        if (v) o.enc = CLA_DDC1;
        MB *ax = cla_compress(ref, &o, &e);
        MB *ad = ax && mb_is_cmb(ax) ? cmb_decompress(ax, &e) : NULL;
        after[v] = ad && same_bits(dense, ad);
        mb_release(ad);
        mb_release(ax);
    }
}

/* compressed as read by blocks of rows from rd/arg (two block sizes,
 * with compressed_after's options) equals compressed after the read */
static void check_as_read(ClaRowsFn rd, void *arg, int64_t n, int64_t m, const MB *dense, int64_t nnz,
                          const bool after[2], const char *what, int ix)
{
    BrErr e = {0};
    for (int v = 0; v < 2; v++) {
        ClaPlanOpts o = cla_plan_defaults();
        o.force = true;
        if (v) o.enc = CLA_DDC1;
        ClaStreamOpts so = cla_stream_defaults();
        so.blk_rows = v ? 1001 : 250;
        so.sample_rows = BR_MIN(so.sample_rows, so.blk_rows);
        ClaStreamInfo info;
        MB *cx = cla_compress_rows(rd, arg, n, m, &o, &so, &info, &e);
        MB *d = cx && mb_is_cmb(cx) ? cmb_decompress(cx, &e) : NULL;
        T_CHECK(d && same_bits(dense, d) && cx->nnz == nnz && after[v],
                "%s index %d blk %lld: compressed as read equals compressed after the read (%s)", what, ix,
                (long long)so.blk_rows, e.msg);
        mb_release(d);
        mb_release(cx);
    }
}

static MB *dense_of(MB *x)
{
    if (!x || !x->sparse) return x;
    BrErr e = {0};
    MB *d = mb_to_dense(x, &e);
    mb_release(x);
    return d;
}

static void csv_case(const CsvCase *c, const char *path)
{
    BrErr e = {0};
    MB *x = dense_of(gen(&c->spec));
    csv_text(path, x, c, -1, -1);
    IoReadOpts ro;
    const char *na[1];
    csv_opts_of(c, &ro, na);
    MB *ref = dense_of(io_read_matrix(path, &ro, &e));
    T_CHECK(ref && same_bits(x, ref), "csv %s: the whole read gives the data written (%s)", c->name, e.msg);
    if (!ref) { mb_release(x); return; }
    IoReadPlan p;
    T_CHECK(!io_read_plan(path, &ro, &p, &e), "csv %s: plan", c->name);
    /* compressed after the whole read, with the options below */
    bool after[2];
    compressed_after(ref, ref, after);
    for (int ix = 0; ix < 2; ix++) {
        io_test_csv_index(ix ? 6 : 0);   /* 6: halved 3 times or more */
        int64_t n = -1, m = -1;
        IoCsvRows *cr = io_csv_rows_open(path, &p, &n, &m, &e);
        T_CHECK(cr && n == x->rows && m == x->cols, "csv %s: %lldx%lld rows scanned (%s)", c->name, (long long)n,
                (long long)m, e.msg);
        if (!cr) break;
        /* ranges: on the grid, off it, one row, the end */
        int64_t rr[][2] = {{0, 64}, {1, 2}, {63, 130}, {n - 5, n}, {n / 3, n / 3 + 777}, {0, n}, {n - 1, n + 9}};
        for (size_t q = 0; q < sizeof rr / sizeof *rr; q++) {
            int64_t r0 = rr[q][0], r1 = BR_MIN(rr[q][1], n);
            MB *b = io_csv_rows(cr, r0, rr[q][1], &e);
            bool ok = b && b->rows == r1 - r0 && b->cols == m;
            int64_t nz = 0;
            for (int64_t i = 0; ok && i < r1 - r0; i++)
                for (int64_t j = 0; j < m; j++) {
                    double a = ref->d[(r0 + i) * m + j], v = b->d[i * m + j];
                    ok = ok && (isnan(a) ? isnan(v) : a == v && signbit(a) == signbit(v));
                    nz += v != 0;
                }
            T_CHECK(ok && b->nnz == nz, "csv %s index %d: rows [%lld, %lld) as the whole read's (%s)", c->name, ix,
                    (long long)r0, (long long)r1, e.msg);
            mb_release(b);
        }
        char what[160];
        snprintf(what, sizeof what, "csv %s", c->name);
        check_as_read(csv_src, cr, n, m, ref, ref->nnz, after, what, ix);
        io_csv_rows_close(cr);
    }
    io_test_csv_index(0);
    mb_release(ref);
    mb_release(x);
}

/* The message of a failed read: whole (io_read_matrix) or by ranges. */
static void csv_err(const char *path, const CsvCase *c, int64_t rows, bool ranges, char *msg, size_t len)
{
    BrErr e = {0};
    IoReadOpts ro;
    const char *na[1];
    csv_opts_of(c, &ro, na);
    ro.rows = rows;
    snprintf(msg, len, "(no error)");
    if (!ranges) {
        MB *r = io_read_matrix(path, &ro, &e);
        mb_release(r);
    } else {
        IoReadPlan p;
        int64_t n, m;
        IoCsvRows *cr = io_read_plan(path, &ro, &p, &e) ? NULL : io_csv_rows_open(path, &p, &n, &m, &e);
        if (cr) {
            ClaPlanOpts o = cla_plan_defaults();
            o.force = true;
            ClaStreamOpts so = cla_stream_defaults();
            so.blk_rows = 1000;
            so.sample_rows = 1000;
            ClaStreamInfo info;
            MB *cx = cla_compress_rows(csv_src, cr, n, m, &o, &so, &info, &e);
            mb_release(cx);
            io_csv_rows_close(cr);
        }
    }
    if (e.code) snprintf(msg, len, "%s", e.msg);
}

static void check_stream_csv(void)
{
    char path[96];
    snprintf(path, sizeof path, "/tmp/braid_clacsv_%ld", (long)getpid());
    CsvCase cases[] = {
        {"lowcard", {"c-lowcard", 3000, 6, 4, 0.2, 1, false, 0, false}, false, false, false, false, false, ",", NULL},
        {"header-sep", {"c-corr", 2500, 5, 8, 0.3, 1, true, 0, false}, true, true, true, false, false, ";", NULL},
        {"sparse-fill", {"c-sparse", 4000, 7, 3, 0.95, 1, false, 0, false}, false, false, true, true, false, "|",
         NULL},
        {"nan-na", {"c-nan", 2000, 4, 5, 0.2, 1, false, 0.05, false}, true, false, false, false, false, ",", "NA"},
        {"runs-parts", {"c-runs", 3000, 5, 6, 0.3, 97, false, 0, false}, true, true, true, true, true, "::", "?"},
        {"noise", {"c-noise", 1500, 3, 0, 0, 1, false, 0, true}, false, false, false, false, false, " ", NULL},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) csv_case(&cases[k], path);
    /* the overflow: planned from the first 2000 rows, where column 0 has
     * 3 values, distinct after row 20000 */
    {
        BrErr e = {0};
        int64_t n = 90000;
        MB *x = overflow_x(n, 2);
        CsvCase c = {"overflow", {0}, false, false, false, false, false, ",", NULL};
        csv_text(path, x, &c, -1, -1);
        IoReadOpts ro;
        const char *na[1];
        csv_opts_of(&c, &ro, na);
        IoReadPlan p;
        int64_t rn, rm;
        IoCsvRows *cr = io_read_plan(path, &ro, &p, &e) ? NULL : io_csv_rows_open(path, &p, &rn, &rm, &e);
        T_CHECK(cr && rn == n && rm == 2, "csv overflow: opened (%s)", e.msg);
        if (cr) overflow_check("csv overflow", csv_src, cr, x);
        /* auto: random data decline */
        if (cr) {
            MB *r = mb_dense(6000, 2, &e);
            for (int64_t i = 0; r && i < r->rows * 2; i++) r->d[i] = urand();
            mb_recount_nnz(r);
            c.name = "noise-auto";
            csv_text(path, r, &c, -1, -1);
            io_csv_rows_close(cr);
            cr = io_csv_rows_open(path, &p, &rn, &rm, &e);
            ClaPlanOpts oa = cla_plan_defaults();
            ClaStreamOpts so = cla_stream_defaults();
            so.blk_rows = 5000;
            ClaStreamInfo info;
            MB *cx = cr ? cla_compress_rows(csv_src, cr, rn, rm, &oa, &so, &info, &e) : NULL;
            T_CHECK(cr && !cx && !e.code && info.declined && info.blocks == 0, "csv noise, auto: declined (%s)", e.msg);
            mb_release(cx);
            mb_release(r);
        }
        io_csv_rows_close(cr);
        mb_release(x);
    }
    /* bad data: the message of the whole read, with file and line (the
     * first bad line: row 100, not row 4620, which the sample reads
     * first); a row count that disagrees; a short line */
    {
        CsvCase c = {"bad", {"c-bad", 5000, 4, 4, 0.2, 1, false, 0, false}, true, false, true, false, false, ",", NULL};
        MB *x = dense_of(gen(&c.spec));
        char w[1024], r[1024];
        int64_t bads[][2] = {{100, 4620}, {4620, -1}, {4999, -1}};
        for (int k = 0; k < 3; k++) {
            csv_text(path, x, &c, bads[k][0], bads[k][1]);
            csv_err(path, &c, -1, false, w, sizeof w);
            csv_err(path, &c, -1, true, r, sizeof r);
            T_CHECK(strstr(w, path) && strstr(w, ": line ") && !strcmp(w, r),
                    "csv bad number at row %lld: by ranges \"%s\", whole \"%s\"", (long long)bads[k][0], r, w);
        }
        csv_text(path, x, &c, -1, -1);
        csv_err(path, &c, 4999, false, w, sizeof w);
        csv_err(path, &c, 4999, true, r, sizeof r);
        T_CHECK(strstr(w, "expected 4999 rows") && !strcmp(w, r), "csv rows: by ranges \"%s\", whole \"%s\"", r, w);
        FILE *f = fopen(path, "w");   /* a first row of 4 fields, one of 3 at row 2600 */
        for (int64_t i = 0; f && i < 3000; i++) fprintf(f, "%s%lld,2,3%s\n", i ? "" : "C1,C2,C3,C4\n", (long long)i,
                                                         i == 2600 ? "" : ",4");
        if (f) fclose(f);
        csv_err(path, &c, -1, false, w, sizeof w);
        csv_err(path, &c, -1, true, r, sizeof r);
        T_CHECK(strstr(w, "columns") && !strcmp(w, r), "csv columns: by ranges \"%s\", whole \"%s\"", r, w);
        mb_release(x);
    }
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf %s", path);
    T_CHECK(system(cmd) == 0, "csv files removed");
}

/* ---- text, mm and libsvm compressed as read (io_cell_rows_open) ---- */

enum { CF_TEXT, CF_MM, CF_SVM };
static const char *const cf_name[] = {"text", "mm", "libsvm"};

/* x as a cell file of format f. order: 0 rows ascending, cells of a row
 * in reverse column order; 1 rows descending (unsorted); 2 one cell of
 * the last row first (unsorted). Every 7th row's first cell is written
 * twice, the wrong value first (text, mm: the last wins); comments and
 * blank lines between rows; bad: the row whose line (a first cell's) holds
 * a bad number (-1 none). A folder of 3 part files when parts. Returns
 * the cells written. */
static int64_t cell_file(const char *path, const MB *x, int f, int order, int64_t bad, bool parts)
{
    char part[160];
    for (int k = 0; k < 3; k++) {   /* the last file or folder (no shell: forks are slow under load) */
        snprintf(part, sizeof part, "%s/part-%d", path, k);
        unlink(part);
    }
    if (unlink(path) != 0) rmdir(path);
    int64_t n = x->rows, m = x->cols, cells = 0;
    FILE *o = NULL;
    int np = 0;
    if (!parts) o = fopen(path, "w");
    else if (mkdir(path, 0755) == 0) {
        snprintf(part, sizeof part, "%s/part-%d", path, np++);
        o = fopen(part, "w");
    }
    if (!o) return -1;
    if (f == CF_MM) {
        int64_t nz = 0;
        for (int64_t i = 0; i < n * m; i++) nz += x->d[i] != 0;
        for (int64_t i = 0; i < n; i += 7)
            for (int64_t j = 0; j < m; j++)
                if (x->d[i * m + j] != 0) { nz++; break; }
        fprintf(o, "%%%%MatrixMarket matrix coordinate real general\n%% a comment\n%lld %lld %lld\n", (long long)n,
                (long long)m, (long long)nz);
    }
    int64_t last = n - 1;   /* the last row with a cell */
    for (bool any = false; last > 0 && !any; last -= !any)
        for (int64_t j = 0; j < m; j++) any = any || x->d[last * m + j] != 0;
    if (order == 2 && f != CF_SVM)
        for (int64_t j = m - 1; j >= 0; j--)
            if (x->d[last * m + j] != 0) {
                fprintf(o, "%lld %lld %.17g\n", (long long)last + 1, (long long)j + 1, x->d[last * m + j]);
                cells++;
                break;
            }
    bool skipped = order != 2;
    for (int64_t k = 0; k < n; k++) {
        int64_t i = order == 1 ? n - 1 - k : k;
        if (parts && np < 3 && k == np * n / 3) {
            fclose(o);
            snprintf(part, sizeof part, "%s/part-%d", path, np++);
            if (!(o = fopen(part, "w"))) return -1;
        }
        if (k % 50 == 3) fputs(f == CF_SVM ? "# a comment\n\n" : "% a comment\n\n", o);
        const double *r = x->d + i * m;
        if (f == CF_SVM) {
            if (i == bad) fputs("1.5x", o);
            else fprintf(o, "%.17g", r[m - 1]);
            cells++;
            for (int64_t j = 0; j < m - 1; j++)
                if (r[j] != 0) fprintf(o, " %lld:%.17g", (long long)j + 1, r[j]), cells++;
            fputs(i % 11 == 5 ? " # trailing\n" : "\n", o);
            continue;
        }
        bool first = true;
        for (int64_t j = m - 1; j >= 0; j--) {
            if (r[j] == 0) continue;
            if (order == 2 && !skipped && i == last) { skipped = true; continue; }
            if (first && i % 7 == 0) fprintf(o, "%lld %lld 12345\n", (long long)i + 1, (long long)j + 1);
            if (first && i == bad) fprintf(o, "%lld %lld 1..5\n", (long long)i + 1, (long long)j + 1);
            else fprintf(o, "%lld %lld %.17g\n", (long long)i + 1, (long long)j + 1, r[j]);
            first = false;
            cells++;
        }
    }
    fclose(o);
    return cells;
}

static MB *cell_src(void *arg, int64_t r0, int64_t r1, BrErr *e) { return io_cell_rows((IoCellRows *)arg, r0, r1, e); }

static bool same_cells(const MB *a, int64_t a0, const MB *b, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < a->cols; j++) {
            double x = mb_get(a, a0 + i, j), y = mb_get(b, i, j);
            if (!(isnan(x) ? isnan(y) : x == y && signbit(x) == signbit(y))) return false;
        }
    return true;
}

/* The message of a failed read of a cell file: whole or compressed by
 * ranges of rows. */
static void cell_err(const char *path, const IoReadOpts *ro, bool ranges, char *msg, size_t len)
{
    BrErr e = {0};
    snprintf(msg, len, "(no error)");
    if (!ranges) mb_release(io_read_matrix(path, ro, &e));
    else {
        IoReadPlan p;
        int64_t n, m, cells;
        bool sorted;
        IoCellRows *cr = io_read_plan(path, ro, &p, &e) ? NULL : io_cell_rows_open(path, &p, &n, &m, &cells, &sorted, &e);
        if (cr) {
            ClaPlanOpts o = cla_plan_defaults();
            o.force = true;
            ClaStreamOpts so = cla_stream_defaults();
            so.blk_rows = so.sample_rows = 500;
            ClaStreamInfo info;
            mb_release(cla_compress_rows(cell_src, cr, n, m, &o, &so, &info, &e));
            io_cell_rows_close(cr);
        }
    }
    if (e.code) snprintf(msg, len, "%s", e.msg);
}

static void cells_case(const char *path, const Spec *sp, int f, bool parts, int64_t extra, int order)
{
    BrErr e = {0};
    MB *x = dense_of(gen(sp));
    int64_t cells = cell_file(path, x, f, order, -1, parts);
    IoReadOpts ro;
    io_read_opts_init(&ro);
    ro.format = cf_name[f];
    if (f != CF_MM) ro.rows = x->rows + extra;   /* with rows after the last cell */
    MB *ref = io_read_matrix(path, &ro, &e);
    char what[160];
    snprintf(what, sizeof what, "cells %s %s%s%s order %d", cf_name[f], sp->name, parts ? " parts" : "",
             extra ? " extra" : "", order);
    T_CHECK(ref && ref->rows == x->rows + extra && same_cells(x, 0, ref, x->rows), "%s: the whole read (%s)", what,
            e.msg);
    IoReadPlan p;
    if (!ref || io_read_plan(path, &ro, &p, &e)) { mb_release(ref); mb_release(x); return; }
    MB *rd = dense_of(mb_copy(ref, &e));
    bool after[2];
    compressed_after(ref, rd, after);
    for (int ix = 0; ix < 2; ix++) {
        io_test_csv_index(ix ? 6 : 0);
        int64_t n = -1, m = -1, got = -1;
        bool sorted = false;
        IoCellRows *cr = io_cell_rows_open(path, &p, &n, &m, &got, &sorted, &e);
        T_CHECK(cr && sorted == (order == 0) && n == ref->rows && m == ref->cols && got >= cells, "%s: %lldx%lld, %lld cells (%s)",
                what, (long long)n, (long long)m, (long long)got, e.msg);
        if (!cr) break;
        int64_t rr[][2] = {{0, 64}, {1, 2}, {63, 130}, {n - 5, n}, {n / 3, n / 3 + 777}, {0, n}, {n - 1, n + 9}};
        for (size_t q = 0; q < sizeof rr / sizeof *rr; q++) {
            int64_t r0 = rr[q][0], r1 = BR_MIN(rr[q][1], n);
            MB *b = io_cell_rows(cr, r0, rr[q][1], &e);
            T_CHECK(b && b->rows == r1 - r0 && b->cols == m && same_cells(ref, r0, b, r1 - r0),
                    "%s index %d: rows [%lld, %lld) as the whole read's (%s)", what, ix, (long long)r0, (long long)r1,
                    e.msg);
            mb_release(b);
        }
        check_as_read(cell_src, cr, n, m, rd, ref->nnz, after, what, ix);
        io_cell_rows_close(cr);
    }
    io_test_csv_index(0);
    mb_release(rd);
    mb_release(ref);
    mb_release(x);
}

static void check_stream_cells(void)
{
    char path[96];
    snprintf(path, sizeof path, "/tmp/braid_clacell_%ld", (long)getpid());
    Spec specs[] = {
        {"lowcard", 1500, 6, 4, 0.2, 1, false, 0, false},
        {"sparse", 2000, 9, 3, 0.95, 1, false, 0, false},
        {"corr-runs", 1300, 5, 8, 0.3, 97, true, 0, false},
        {"nan", 1000, 4, 5, 0.2, 1, false, 0.05, false},
        {"noise", 800, 3, 0, 0, 1, false, 0, true},
    };
    for (int f = 0; f < 3; f++)
        for (size_t k = 0; k < sizeof specs / sizeof *specs; k++)
            cells_case(path, &specs[k], f, f == (int)k % 3, f == CF_TEXT && k == 1 ? 37 : 0, 0);
    BrErr e = {0};
    MB *x = dense_of(gen(&specs[0]));
    IoReadOpts ro;
    io_read_opts_init(&ro);
    /* cells not in row order (rows descending; the last row's first
     * cell first), by buckets of rows: with buckets of 3 rows (many
     * buckets) and of the default size */
    for (int f = 0; f < 2; f++)
        for (int order = 1; order <= 2; order++) {
            io_test_cell_buckets(f ? 0 : 3 * (int64_t)sizeof(double) * 3);
            cells_case(path, &specs[order == 1 ? 0 : 2], f, false, 0, order);
            cells_case(path, &specs[1], f, f == 0, 0, order);
        }
    io_test_cell_buckets(0);
    /* mm symmetric and skew-symmetric: mirrored cells land in their rows'
     * buckets; the array layout is not read by ranges */
    for (int k = 0; k < 3; k++) {
        FILE *o = fopen(path, "w");
        int64_t n = 900;
        if (o) {
            fprintf(o, "%%%%MatrixMarket matrix %s real %s\n%lld %lld", k == 2 ? "array" : "coordinate",
                    k == 1 ? "skew-symmetric" : "symmetric", (long long)n, (long long)n);
            if (k < 2) fprintf(o, " %lld", (long long)(n - 1 + (k == 0)));
            fputc('\n', o);
            if (k == 2)
                for (int64_t i = 0; i < n * (n + 1) / 2; i++) fprintf(o, "%d\n", (int)(i % 5));
            else
                for (int64_t i = 0; i < n - 1 + (k == 0); i++)
                    fprintf(o, "%lld %lld %d\n", (long long)(k == 0 ? i + 1 : i + 2), (long long)(i % 7 + 1),
                            (int)(i % 3) + 1);
            fclose(o);
        }
        ro.format = "mm";
        MB *ref = io_read_matrix(path, &ro, &e);
        IoReadPlan p;
        int64_t n2 = 0, m2 = 0, cells = 0;
        bool sorted = true;
        IoCellRows *cr = !ref || io_read_plan(path, &ro, &p, &e) ? NULL
                       : io_cell_rows_open(path, &p, &n2, &m2, &cells, &sorted, &e);
        if (k == 2) T_CHECK(ref && !cr && !sorted && !e.code, "cells mm array: not read by ranges (%s)", e.msg);
        else {
            MB *b = cr ? io_cell_rows(cr, 0, n, &e) : NULL;
            MB *b2 = cr ? io_cell_rows(cr, 5, 400, &e) : NULL;
            T_CHECK(b && b2 && !sorted && n2 == n && m2 == n && same_cells(ref, 0, b, n) && same_cells(ref, 5, b2, 395),
                    "cells mm %s: mirrored by buckets as the whole read (%s)", k ? "skew" : "symmetric", e.msg);
            mb_release(b);
            mb_release(b2);
        }
        io_cell_rows_close(cr);
        mb_release(ref);
    }
    /* bad data: the whole read's message, with file and line (the first
     * bad line, before and after the sampled ranges, on the last row) */
    char w[1024], r[1024];
    int64_t bads[] = {100, x->rows * 2 / 3, x->rows - 1};
    for (int f = 0; f < 3; f++)
        for (int k = 0; k < 3; k++) {
            cell_file(path, x, f, 0, bads[k], false);
            ro.format = cf_name[f];
            cell_err(path, &ro, false, w, sizeof w);
            cell_err(path, &ro, true, r, sizeof r);
            T_CHECK(strstr(w, path) && strstr(w, ": line ") && !strcmp(w, r),
                    "cells %s bad at row %lld: by ranges \"%s\", whole \"%s\"", cf_name[f], (long long)bads[k], r, w);
        }
    /* sizes: rows that disagree (libsvm), a cell out of the bounds given
     * (text), an entry count that disagrees (mm) */
    for (int f = 0; f < 3; f++) {
        cell_file(path, x, f, 0, -1, false);
        ro.format = cf_name[f];
        ro.rows = f == CF_MM ? -1 : x->rows - 1;
        ro.cols = f == CF_TEXT ? x->cols - 1 : -1;
        if (f == CF_MM) {
            FILE *o = fopen(path, "a");
            if (o) { fprintf(o, "%lld 1 7\n", (long long)x->rows); fclose(o); }
        }
        cell_err(path, &ro, false, w, sizeof w);
        cell_err(path, &ro, true, r, sizeof r);
        T_CHECK(strstr(w, path) && !strcmp(w, r), "cells %s sizes: by ranges \"%s\", whole \"%s\"", cf_name[f], r, w);
        ro.rows = ro.cols = -1;
    }
    mb_release(x);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf %s", path);
    T_CHECK(system(cmd) == 0, "cell files removed");
}

/* Compression inside a parallel region (a parfor worker calling a
 * function whose loop compresses its copy of X): nested regions run with
 * one thread, so the groups the coder planned for a second thread must
 * be coded by the first (before: left uncoded, garbage codes). */
static void check_nested(void)
{
    Spec sd = {"nested", 20000, 8, 6, 0.3, 1, false, 0, false};
    BrErr e = {0};
    MB *x[2] = {gen(&sd), NULL};
    sd.zero = 0.9;
    MB *d = gen(&sd);
    x[1] = mb_to_sparse(d, &e);
    mb_release(d);
    br_set_threads(2);
    br_par_pin(0);
    int bad[2][2] = {{0, 0}, {0, 0}};
#ifdef _OPENMP
    omp_set_max_active_levels(1);
#endif
#pragma omp parallel num_threads(2)
    {
        int t = 0;
#ifdef _OPENMP
        t = omp_get_thread_num() & 1;
#endif
        for (int q = 0; q < 2; q++) {
            BrErr te = {0};
            ClaPlanOpts o = cla_plan_defaults();
            o.force = true;
            MB *cx = cla_compress(x[q], &o, &te);
            MB *dx = cx && mb_is_cmb(cx) ? cmb_decompress(cx, &te) : NULL;
            if (!dx) bad[t][q] = -1;
            for (int64_t i = 0; dx && i < x[q]->rows; i++)
                for (int64_t j = 0; j < x[q]->cols; j++) bad[t][q] += !same_val(mb_get(dx, i, j), mb_get(x[q], i, j));
            mb_release(dx);
            mb_release(cx);
        }
    }
    for (int t = 0; t < 2; t++)
        for (int q = 0; q < 2; q++)
            T_CHECK(bad[t][q] == 0, "compression in a parallel region (thread %d, %s): %d cells differ", t,
                    q ? "sparse" : "dense", bad[t][q]);
    br_par_pin(-1);
    br_set_threads(0);
    mb_release(x[0]);
    mb_release(x[1]);
}

/* Uncompressed columns of different sparsity (docs/cla.md "Uncompressed
 * columns"): random dense columns beside random columns with 60%, 90%
 * and 99% zeros, compressed forced into UNC groups (as columns of more
 * than 65536 values stay; small random sparse columns alone take OLE):
 * the sparse columns form a UNC group of their own, stored sparse (at
 * 60% zeros, not sparse by the block rule, one dense group as before);
 * its bytes against one dense group of them all; the same by blocks of
 * rows; every compressed operation over the mix of groups the planner
 * chooses and over each forced encoding against the uncompressed
 * reference (run_mat, where split). The generator's state is restored after, so
 * later checks keep their data. */
static void check_unc_split(void)
{
    uint64_t saved = rng;
    Spec specs[] = {
        {"unc-mixed60", 1200, 6, 0, 0, 1, false, 0, true},
        {"unc-mixed90", 1500, 6, 0, 0, 1, false, 0, true},
        {"unc-mixed99", 1800, 5, 0, 0, 1, false, 0, true},
    };
    const double zeros[] = {0.6, 0.9, 0.99};
    for (size_t k = 0; k < sizeof specs / sizeof *specs; k++) {
        /* random columns; the odd ones with zeros[k] of their cells zero */
        MB *x = dense_of(gen(&specs[k]));
        for (int64_t i = 0; i < x->rows; i++)
            for (int64_t j = 1; j < x->cols; j += 2)
                if (urand() < zeros[k]) x->d[i * x->cols + j] = 0;
        mb_recount_nnz(x);
        BrErr e = {0};
        ClaPlanOpts o = cla_plan_defaults();
        o.force = true;
        o.enc = CLA_UNC;   /* random sparse columns alone take OLE; a column with more than 65536 values stays UNC */
        MB *cx = cla_compress(x, &o, &e);
        int nunc = 0, nsp = 0;
        bool odd = true;
        for (int g = 0; cx && mb_is_cmb(cx) && g < cx->cmb->ngroups; g++) {
            const ClaGroup *gr = cx->cmb->groups[g];
            if (gr->enc != CLA_UNC) continue;
            nunc++;
            if (!gr->unc->sparse) continue;
            nsp++;
            for (int j = 0; j < gr->ncols; j++) odd &= gr->cols[j] % 2 == 1;
        }
        bool split = k > 0;
        T_CHECK(cx && nunc == (split ? 2 : 1) && nsp == (split ? 1 : 0) && odd,
                "%s: %d UNC groups, %d sparse (the odd columns)", specs[k].name, nunc, nsp);
        double one = (double)mb_est_size(x->rows, x->cols, x->nnz), got = cx ? (double)mb_bytes(cx) : 0;
        printf("  %s: UNC bytes %.0f, one group %.0f (%.2fx)\n", specs[k].name, got, one, one / got);
        if (split) T_CHECK(got < one, "%s: split smaller than one group (%.0f < %.0f)", specs[k].name, got, one);
        /* by blocks of rows: the same split */
        ClaStreamOpts so = cla_stream_defaults();
        so.blk_rows = 500;
        ClaStreamInfo info;
        RowSrc src = {.x = x};
        MB *sx = cla_compress_rows(src_rows, &src, x->rows, x->cols, &o, &so, &info, &e);
        int snsp = 0;
        for (int g = 0; sx && mb_is_cmb(sx) && g < sx->cmb->ngroups; g++)
            snsp += sx->cmb->groups[g]->enc == CLA_UNC && sx->cmb->groups[g]->unc->sparse;
        T_CHECK(sx && mb_is_cmb(sx) && snsp == (split ? 1 : 0) && mb_equal(sx, x, 0),
                "%s: by blocks, %d sparse UNC groups, equal cells (%s)", specs[k].name, snsp, e.msg);
        mb_release(sx);
        mb_release(cx);
        if (split) run_mat(&specs[k], x, 40 + (int)k);   /* (60%: one dense group, as every noise spec) */
        else mb_release(x);
    }
    rng = saved;
}

/* Sparse columns of many distinct values priced beside one shared CSR
 * group (kernels/cla.c csr_share): 4 random columns with 20% non-zeros
 * (2000 distinct values each: DDC2 alone) beside 4 columns of 10% ones,
 * x dense and sparse: the random columns leave compression for one UNC
 * group stored CSR, smaller than the columns compressed alone; at 5%
 * non-zeros (OLE alone is smaller than a share of CSR) they stay
 * compressed. Every compressed operation over the result against the
 * uncompressed reference (check_ops). The generator's state is restored
 * after. */
/* The UNC groups of cx: how many, and of the last, CSR or not, whether
 * it holds columns 0-3 exactly, its bytes. */
static int csr_layout(const MB *cx, bool *csr, bool *cols, double *unc_bytes)
{
    int nunc = 0;
    *csr = *cols = false;
    *unc_bytes = 0;
    for (int g = 0; cx && mb_is_cmb(cx) && g < cx->cmb->ngroups; g++) {
        const ClaGroup *gr = cx->cmb->groups[g];
        if (gr->enc != CLA_UNC) continue;
        nunc++;
        *csr = gr->unc->sparse;
        *cols = gr->ncols == 4;
        for (int j = 0; j < gr->ncols; j++) *cols &= gr->cols[j] == j;
        *unc_bytes = (double)mb_bytes(gr->unc);
    }
    return nunc;
}

/* The planner's estimate (cla_plan est_bytes; the compile-time estimate
 * uses it) prices the shared CSR group as compression makes it: nr
 * random columns at share f of non-zeros beside 2 flags, estimated as
 * the flags' estimate plus the CSR size of the random columns (within
 * 3%) where compression makes that group, and as before (the flags'
 * estimate plus the columns') where it does not. */
static void csr_estimate(int nr, double f, bool shared)
{
    int64_t n = 4000, m = nr + 2;
    BrErr e = {0};
    MB *x = mb_dense(n, m, &e);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < m; j++) x->d[i * m + j] = j < nr ? (urand() < f ? 1 + urand() * 1000 : 0) : urand() < 0.1;
    mb_recount_nnz(x);
    ClaPlanOpts o = cla_plan_defaults();
    o.force = true;
    MB *cx = cla_compress(x, &o, &e), *flags = k_slice(x, 0, n, nr, m, &e), *rnd = k_slice(x, 0, n, 0, nr, &e);
    int nunc = 0;
    for (int g = 0; cx && mb_is_cmb(cx) && g < cx->cmb->ngroups; g++) nunc += cx->cmb->groups[g]->enc == CLA_UNC;
    T_CHECK(cx && nunc == shared, "csr estimate %d x %g: %d UNC groups", nr, f, nunc);
    ClaPlan pl, pf, pr;
    int st = !flags || !rnd ? 0 : cla_plan(x, &o, &pl, &e) ? 0 : cla_plan(flags, &o, &pf, &e) ? 1
           : cla_plan(rnd, &o, &pr, &e) ? 2 : 3;
    T_CHECK(st == 3, "csr estimate %d x %g: planned (%s)", nr, f, e.msg);
    if (st == 3) {
        double want = pf.est_bytes + (shared ? mb_est_sparse(n, nr, rnd->nnz) : pr.est_bytes);
        T_CHECK(fabs(pl.est_bytes - want) <= 0.03 * want, "csr estimate %d x %g: estimated %.0f bytes, want %.0f",
                nr, f, pl.est_bytes, want);
    }
    if (st > 0) cla_plan_free(&pl);
    if (st > 1) cla_plan_free(&pf);
    if (st > 2) cla_plan_free(&pr);
    mb_release(cx), mb_release(flags), mb_release(rnd), mb_release(x);
}

/* Sparse columns priced beside one shared CSR group (csr_share): 4
 * random columns at 20% non-zeros beside 4 flags become one CSR group,
 * smaller than each compressed alone; at 5% they stay compressed; the
 * same layout when compressed as read (cla_compress_rows, from x's rows
 * by blocks); the planner's estimate (cla_plan est_bytes, which the
 * compile-time estimate uses) within 8% of the size made (it priced
 * the columns compressed: 14-19% over at 20%); every operator against
 * the reference over both. */
static void check_csr_share(void)
{
    uint64_t saved = rng;
    const double nzs[] = {0.2, 0.05};
    for (int si = 0; si < 2; si++)
        for (int sp = 0; sp < 2; sp++) {
            int64_t n = 10000, m = 8;
            BrErr e = {0};
            MB *xd = mb_dense(n, m, &e), *x = xd;
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < m; j++)
                    xd->d[i * m + j] = j < 4 ? (urand() < nzs[si] ? 1 + urand() * 1000 : 0) : urand() < 0.1;
            mb_recount_nnz(xd);
            if (sp) x = mb_to_sparse(xd, &e);
            char what[64];
            snprintf(what, sizeof what, "csr share %g%% %s", nzs[si] * 100, sp ? "sparse" : "dense");
            ClaPlanOpts o = cla_plan_defaults();
            o.force = true;
            MB *cx = cla_compress(x, &o, &e);
            RowSrc src = {.x = xd};
            ClaStreamInfo info;
            ClaStreamOpts so = cla_stream_defaults();
            so.blk_rows = 3000;
            MB *sx = cla_compress_rows(src_rows, &src, n, m, &o, &so, &info, &e);
            for (int w = 0; w < 2; w++) {
                const MB *c = w ? sx : cx;
                char wh[96];
                snprintf(wh, sizeof wh, "%s%s", what, w ? " as read" : "");
                bool csr, cols;
                double unc_bytes;
                int nunc = csr_layout(c, &csr, &cols, &unc_bytes);
                if (si == 0) {
                    double alone = 0;
                    for (int64_t j = 0; j < 4 && !w; j++) {
                        MB *c1 = k_slice(x, 0, n, j, j + 1, &e), *k1 = c1 ? cla_compress(c1, &o, &e) : NULL;
                        alone += k1 ? (double)mb_bytes(k1) : 0;
                        mb_release(c1), mb_release(k1);
                    }
                    T_CHECK(c && nunc == 1 && csr && cols, "%s: the 4 random columns one CSR group (%d UNC groups)", wh,
                            nunc);
                    T_CHECK(w || (nunc == 1 && unc_bytes < alone), "%s: CSR group %.0f bytes < compressed alone %.0f",
                            wh, unc_bytes, alone);
                } else {
                    T_CHECK(c && mb_is_cmb(c) && nunc == 0, "%s: the columns stay compressed (%d UNC groups)", wh, nunc);
                }
                if (c && mb_is_cmb(c)) check_ops(wh, x, c);
            }
            mb_release(cx);
            mb_release(sx);
            if (x != xd) mb_release(x);
            mb_release(xd);
        }
    csr_estimate(24, 0.3, true);
    csr_estimate(8, 0.05, false);
    rng = saved;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "crowded")) {
        TIMED(crowded_cla());
        return t_done("test_cla");
    }
    if (argc > 1 && !strcmp(argv[1], "stream")) {   /* compression as read alone */
        TIMED(check_stream());
        TIMED(check_stream_csv());
        TIMED(check_stream_cells());
        return t_done("test_cla");
    }
    if (argc > 1 && !strcmp(argv[1], "unc")) {   /* uncompressed columns of different sparsity alone */
        TIMED(check_unc_split());
        TIMED(check_csr_share());
        return t_done("test_cla");
    }
    if (argc > 1 && !strcmp(argv[1], "est")) {   /* the compile-time estimate alone */
        TIMED(check_est_file());
        TIMED(check_compile_est());
        return t_done("test_cla");
    }
    if (argc > 1 && !strcmp(argv[1], "wide")) {   /* multi-column products and tsmm by blocks alone */
        TIMED(check_wide_products());
        return t_done("test_cla");
    }
    if (argc > 1 && !strcmp(argv[1], "sparse-rows")) {   /* the row-wise sparse coder alone */
        TIMED(check_sparse_rows());
        return t_done("test_cla");
    }
    Spec specs[] = {
        {"lowcard", 3000, 7, 4, 0.2, 1, false, 0, false},
        {"corr", 2500, 6, 8, 0.3, 1, true, 0, false},
        {"sparse", 4000, 9, 3, 0.95, 1, false, 0, false},
        {"runs", 5000, 5, 6, 0.3, 97, false, 0, false},
        {"nan", 2000, 4, 5, 0.2, 1, false, 0.05, false},
        {"noise", 1500, 4, 0, 0, 1, false, 0, true},
        {"mixed", 3000, 5, 300, 0.5, 3, true, 0, false},
        {"tall-runs", 140000, 2, 3, 0.5, 70001, false, 0, false},
        {"tall-sparse", 140000, 3, 2, 0.999, 1, false, 0, false},
        {"onecol", 1, 1, 2, 0.0, 1, false, 0, false},
        /* OLE/RLE tuples listing few rows each: products and row sums by
         * windows of many blocks (cla_ops.c list_windows), windows across
         * OLE segments */
        {"tall-lists", 70000, 3, 400, 0.4, 2, false, 0, false},
        /* DDC1 groups of about 100 tuples: too many to bundle, few enough
         * for partial tables (one-column t(X) %*% y: ddc1_scatter_all) */
        {"card100", 6000, 4, 100, 0.1, 1, false, 0, false},
    };
    const char *only = argc > 2 && !strcmp(argv[1], "spec") ? argv[2] : NULL;   /* one spec alone */
    for (size_t k = 0; k < sizeof specs / sizeof *specs; k++)
        if (!only || !strcmp(only, specs[k].name)) TIMED_AS(specs[k].name, run_spec(&specs[k], (int)k));
    if (only) return t_done("test_cla");
    TIMED(check_unc_split());
    TIMED(check_csr_share());
    TIMED(check_cell_wide());
    TIMED(check_tl_joint());
    TIMED(check_row_tq_overflow());
    TIMED(check_ieee());
    TIMED(check_wide_products());
    TIMED(check_dec_sparse());
    TIMED(check_dec_fin());
    TIMED(check_tsmm_counts());
    TIMED(check_rows_bound());
    TIMED(check_lut());
    TIMED(check_grid());
    TIMED(check_sparse_rows());
    TIMED(check_rle_est());
    TIMED(check_stats_bind());
    TIMED(check_compile_cbytes());
    TIMED(check_compile_compress());
    TIMED(check_est_file());
    TIMED(check_compile_est());
    TIMED(check_cla_machine());
    TIMED(check_choice());
    TIMED(check_nested());
    TIMED(check_stream());
    TIMED(check_stream_csv());
    TIMED(check_stream_cells());
    TIMED(crowded_cla());
    return t_done("test_cla");
}
