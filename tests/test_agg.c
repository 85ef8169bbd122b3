/* test_agg.c: aggregate kernels (kernels/agg.h) against naive references
 * over mb_get (long double accumulation), sweeping shapes, sparsity,
 * formats and thread counts; SystemDS semantics from the conformance
 * cases (ties of rowIndexMax, n-1 variances, implicit zeros, empty
 * matrices, quantile positions). */
#include "t.h"
#include "kernels/agg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static unsigned t_seed = 7;
static double urand(void)
{
    t_seed = t_seed * 1103515245u + 12345u;
    return (double)((t_seed >> 8) & 0xFFFFFF) / (double)0x1000000;
}

/* Random r x c block with about sp non-zeros; values spread over
 * [-50, 50] plus an offset (large offsets test the variance). */
static MB *rnd(int64_t r, int64_t c, double sp, bool sparse, double off)
{
    BrErr e = {0};
    MB *m = mb_dense(r, c, &e);
    for (int64_t i = 0; i < r * c; i++)
        if (urand() < sp) {
            double v = (urand() - 0.5) * 100 + off;
            m->d[i] = v == 0 ? 1 : v;
        }
    mb_recount_nnz(m);
    if (sparse) mb_make_sparse(m, &e);
    return m;
}

static MB *mat(int64_t r, int64_t c, const double *v)
{
    BrErr e = {0};
    MB *m = mb_dense(r, c, &e);
    if (r * c > 0) memcpy(m->d, v, (size_t)(r * c) * sizeof(double));
    mb_recount_nnz(m);
    return m;
}

static bool close_to(double got, double want, double rtol)
{
    if (isnan(got) || isnan(want)) return isnan(got) && isnan(want);
    if (isinf(got) || isinf(want)) return got == want;
    return fabs(got - want) <= rtol * fmax(fmax(fabs(got), fabs(want)), 1.0);
}

/* ---- reference aggregates over a list of cells ---- */

static double ref_seg(OpCode op, const double *x, int64_t n)
{
    long double s = 0, q = 0, d = 0;
    double mn = INFINITY, mx = -INFINITY, p = 1;
    bool nan = false, zero = false, nonfin = false;
    switch (op) {
    case OP_SUM:
    case OP_MEAN:
        for (int64_t k = 0; k < n; k++) s += x[k];
        return op == OP_SUM ? (double)s : n ? (double)(s / n) : NAN;
    case OP_SUMSQ:
        for (int64_t k = 0; k < n; k++) q += (long double)x[k] * x[k];
        return (double)q;
    case OP_VAR:
    case OP_SD: {
        if (n == 0) return NAN;
        if (n == 1) return 0;
        for (int64_t k = 0; k < n; k++) s += x[k];
        long double mean = s / n;
        for (int64_t k = 0; k < n; k++) d += ((long double)x[k] - mean) * ((long double)x[k] - mean);
        double var = (double)(d / (n - 1));
        return op == OP_VAR ? var : sqrt(var);
    }
    case OP_AMIN:
    case OP_AMAX:
        for (int64_t k = 0; k < n; k++) {
            nan |= isnan(x[k]);
            if (x[k] < mn) mn = x[k];
            if (x[k] > mx) mx = x[k];
        }
        return nan ? NAN : op == OP_AMIN ? mn : mx;
    case OP_PROD: /* exact: a zero wins unless an infinite or NaN value is present */
        for (int64_t k = 0; k < n; k++) {
            zero |= x[k] == 0; nonfin |= !isfinite(x[k]);
            if (p != 0 || !isfinite(x[k])) p *= x[k];
        }
        return zero && !nonfin ? 0 : p;
    case OP_IDXMAX:
    case OP_IDXMIN: {
        if (n == 0) return 0;
        double best = op == OP_IDXMAX ? -INFINITY : INFINITY;
        int64_t idx = 0;
        for (int64_t k = 0; k < n; k++)
            if (op == OP_IDXMAX ? x[k] >= best : x[k] <= best) { best = x[k]; idx = k; }
        return (double)(idx + 1);
    }
    default: return NAN;
    }
}

/* Reference k_agg by collecting cells through mb_get. */
static MB *ref_agg(OpCode op, AggDir dir, const MB *a)
{
    BrErr e = {0};
    int64_t M = a->rows, N = a->cols;
    double *buf = malloc((size_t)BR_MAX(M * N, 1) * sizeof(double));
    MB *r;
    if (dir == DIR_FULL) {
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) buf[i * N + j] = mb_get(a, i, j);
        r = mb_scalar(ref_seg(op, buf, M * N), &e);
    } else if (dir == DIR_ROW) {
        r = mb_dense(M, 1, &e);
        for (int64_t i = 0; i < M; i++) {
            for (int64_t j = 0; j < N; j++) buf[j] = mb_get(a, i, j);
            r->d[i] = ref_seg(op, buf, N);
        }
    } else {
        r = mb_dense(1, N, &e);
        for (int64_t j = 0; j < N; j++) {
            for (int64_t i = 0; i < M; i++) buf[i] = mb_get(a, i, j);
            r->d[j] = ref_seg(op, buf, M);
        }
    }
    free(buf);
    mb_recount_nnz(r);
    return r;
}

static const OpCode AGG_OPS[] = { OP_SUM, OP_SUMSQ, OP_MEAN, OP_VAR, OP_SD,
                                  OP_AMIN, OP_AMAX, OP_PROD, OP_IDXMAX, OP_IDXMIN };
#define NAGG (int)(sizeof AGG_OPS / sizeof *AGG_OPS)

static void sweep_agg(void)
{
    BrErr e = {0};
    const int64_t shapes[][2] = { {0, 5}, {5, 0}, {0, 0}, {1, 1}, {7, 1}, {1, 9},
                                  {40, 3}, {3, 70}, {33, 45}, {300, 250}, {1, 70000},
                                  {70000, 1}, {3000, 7}, {2, 40000}, {3, 70000} };
    const double sps[] = {0, 0.001, 0.1, 1};
    const double offs[] = {0, 1e6};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (int sp = 0; sp < 4; sp++)
            for (int f = 0; f < 2; f++)
                for (int o = 0; o < 2; o++) {
                    int64_t M = shapes[s][0], N = shapes[s][1];
                    bool big = M * N > 5000;
                    if (big && !((sp == 2 && f == 1 && o == 0) || (sp == 3 && f == 0))) continue;
                    MB *a = rnd(M, N, sps[sp], f, offs[o]);
                    for (int k = 0; k < NAGG; k++)
                        for (int d = 0; d < 3; d++) {
                            OpCode op = AGG_OPS[k];
                            AggDir dir = (AggDir)d;
                            if ((op == OP_IDXMAX || op == OP_IDXMIN) && dir != DIR_ROW) continue;
                            /* products of many values over/underflow: small cases only */
                            if (op == OP_PROD && M * N > 5000 && sp >= 2) continue;
                            MB *ref = ref_agg(op, dir, a);
                            MB *r1 = NULL;
                            for (int th = 1; th <= 2; th++) {
                                br_set_threads(th);
                                MB *r = k_agg(op, dir, a, &e);
                                T_CHECK(r && r->rows == ref->rows && r->cols == ref->cols,
                                        "agg shape %s dir %d", op_info[op].name, d);
                                double tol = (op == OP_VAR || op == OP_SD) ? 1e-10 : 1e-12;
                                T_MB_EQ(r, ref, tol, "agg %s dir %d %lldx%lld sp %g fmt %d off %g th %d",
                                        op_info[op].name, d, (long long)M, (long long)N,
                                        sps[sp], f, offs[o], th);
                                if (r && r->rows * r->cols > 0)
                                    T_CHECK(r->nnz == ref->nnz || tol > 0, "agg nnz");
                                if (th == 1) r1 = r;
                                else {
                                    T_MB_EQ(r, r1, 0, "agg thread invariance %s dir %d %lldx%lld",
                                            op_info[op].name, d, (long long)M, (long long)N);
                                    mb_release(r);
                                }
                            }
                            if (dir == DIR_FULL) {
                                double v;
                                T_CHECK(k_agg_full(op, a, &v, &e) == 0 &&
                                        close_to(v, mb_get(ref, 0, 0), 1e-10), "agg_full %s", op_info[op].name);
                            }
                            mb_release(r1);
                            mb_release(ref);
                        }
                    mb_release(a);
                }
    BrErr e2 = {0};
    MB *a = rnd(3, 3, 1, false, 0);
    T_CHECK(!k_agg(OP_IDXMAX, DIR_COL, a, &e2) && e2.code, "colIndexMax rejected");
    br_err_clear(&e2);
    T_CHECK(!k_agg(OP_PLUS, DIR_FULL, a, &e2) && e2.code, "non-aggregate rejected");
    mb_release(a);
}

/* Kahan accuracy, infinities, NaN, empty matrices. */
static void special_values(void)
{
    BrErr e = {0};
    double v;
    /* 1e16 + many ones: a plain sum loses them all */
    MB *k = mb_fill(1, 20001, 1, &e);
    k->d[0] = 1e16;
    T_CHECK(k_agg_full(OP_SUM, k, &v, &e) == 0 && v == 1e16 + 20000, "Kahan sum %.17g", v);
    MB *kc = mb_fill(20001, 1, 1, &e);
    kc->d[0] = 1e16;
    MB *cs = k_agg(OP_SUM, DIR_COL, kc, &e);
    T_CHECK(cs && mb_get(cs, 0, 0) == 1e16 + 20000, "Kahan colSums");
    MB *rs = k_agg(OP_SUM, DIR_ROW, k, &e);
    T_CHECK(rs && mb_get(rs, 0, 0) == 1e16 + 20000, "Kahan rowSums");
    mb_release(k); mb_release(kc); mb_release(cs); mb_release(rs);
    double inf1[] = {INFINITY, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17,
                     18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34,
                     35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51,
                     52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68};
    MB *I = mat(1, 69, inf1);
    T_CHECK(k_agg_full(OP_SUM, I, &v, &e) == 0 && v == INFINITY, "sum with Inf = Inf");
    T_CHECK(k_agg_full(OP_MEAN, I, &v, &e) == 0 && v == INFINITY, "mean with Inf");
    I->d[5] = -INFINITY;
    T_CHECK(k_agg_full(OP_SUM, I, &v, &e) == 0 && isnan(v), "Inf - Inf = NaN");
    I->d[5] = NAN; I->d[0] = 1;
    T_CHECK(k_agg_full(OP_SUM, I, &v, &e) == 0 && isnan(v), "sum NaN");
    T_CHECK(k_agg_full(OP_AMIN, I, &v, &e) == 0 && isnan(v), "min NaN");
    T_CHECK(k_agg_full(OP_AMAX, I, &v, &e) == 0 && isnan(v), "max NaN");
    MB *cm = k_agg(OP_AMAX, DIR_COL, I, &e);
    T_CHECK(cm && isnan(mb_get(cm, 0, 5)) && mb_get(cm, 0, 6) == 6, "colMaxs NaN");
    MB *ri = k_agg(OP_IDXMAX, DIR_ROW, I, &e);
    T_CHECK(ri && mb_get(ri, 0, 0) == 69, "rowIndexMax ignores NaN");
    mb_release(I); mb_release(cm); mb_release(ri);
    double nan2[] = {NAN, NAN};
    MB *NN = mat(1, 2, nan2);
    ri = k_agg(OP_IDXMIN, DIR_ROW, NN, &e);
    T_CHECK(ri && mb_get(ri, 0, 0) == 1, "rowIndexMin all NaN gives 1");
    mb_release(NN); mb_release(ri);
    /* rows of more than 64 columns (agg_leaf.c row_idx_wide: the extreme,
     * then its last cell): ties, NaN, -0 beside +0, -Inf and +Inf, a row
     * of NaN, the extreme in the tail past the lanes, against the
     * sequential steps (ref_seg), 1 and 2 threads */
    for (int64_t N = 65; N <= 301; N += 59) {
        const int64_t M = 12;
        MB *W = mb_dense(M, N, &e);
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) W->d[i * N + j] = (double)((i * 7 + j * 13) % 17) - 8;
        for (int64_t j = 0; j < N; j++) W->d[1 * N + j] = (j % 3) ? 0.0 : -0.0;     /* zeros of both signs */
        for (int64_t j = 0; j < N; j++) W->d[2 * N + j] = NAN;                       /* all NaN */
        for (int64_t j = 0; j < N; j++) W->d[3 * N + j] = j % 2 ? NAN : -INFINITY;   /* -Inf and NaN */
        W->d[4 * N + N - 1] = 100;                                                   /* max in the tail */
        W->d[5 * N + 0] = 100;                                                       /* max first */
        W->d[6 * N + 3] = INFINITY; W->d[6 * N + N - 2] = INFINITY;                  /* two +Inf */
        W->d[7 * N + 40] = -100; W->d[7 * N + 41] = NAN;                             /* min beside NaN */
        for (int64_t j = 0; j < N; j++) W->d[8 * N + j] = (double)(j % 5);           /* many ties */
        W->d[9 * N + N / 2] = NAN;
        mb_recount_nnz(W);
        for (int th = 1; th <= 2; th++) {
            br_set_threads(th);
            for (int o = 0; o < 2; o++) {
                OpCode op = o ? OP_IDXMIN : OP_IDXMAX;
                MB *r = k_agg(op, DIR_ROW, W, &e);
                bool ok = r != NULL;
                for (int64_t i = 0; ok && i < M; i++) ok = mb_get(r, i, 0) == ref_seg(op, W->d + i * N, N);
                T_CHECK(ok, "%s over %lld columns (th %d): the sequential steps' index", op_info[op].name,
                        (long long)N, th);
                mb_release(r);
            }
        }
        br_set_threads(2);
        mb_release(W);
    }
    /* Inf/NaN cells in long and short rows and columns: the unchecked
     * fast loops must fall back to the checked Kahan steps */
    const int64_t sh[][2] = { {40, 300}, {300, 10}, {100, 100}, {2, 70000} };
    for (int s = 0; s < 4; s++)
        for (int f = 0; f < 2; f++) {
            int64_t M = sh[s][0], N = sh[s][1];
            MB *X = rnd(M, N, 1, false, 0);
            X->d[1 * N + 5] = INFINITY;
            X->d[0 * N + 1] = -INFINITY; X->d[0 * N + N - 1] = INFINITY;
            if (M > 2) X->d[2 * N + 2] = NAN;
            X->d[(M - 1) * N + N / 2] = -INFINITY;
            if (f) mb_make_sparse(X, &e);
            const OpCode ops[] = { OP_SUM, OP_SUMSQ, OP_MEAN, OP_VAR, OP_AMIN, OP_AMAX };
            for (int o = 0; o < 6; o++)
                for (int d = 0; d < 3; d++) {
                    MB *ref = ref_agg(ops[o], (AggDir)d, X);
                    for (int th = 1; th <= 2; th++) {
                        br_set_threads(th);
                        MB *r = k_agg(ops[o], (AggDir)d, X, &e);
                        T_MB_EQ(r, ref, 1e-10, "non-finite %s dir %d %lldx%lld fmt %d th %d",
                                op_info[ops[o]].name, d, (long long)M, (long long)N, f, th);
                        mb_release(r);
                    }
                    mb_release(ref);
                }
            mb_release(X);
        }
    /* empty matrices */
    int64_t es[][2] = { {0, 0}, {0, 4}, {3, 0} };
    for (int s = 0; s < 3; s++) {
        MB *z = mb_dense(es[s][0], es[s][1], &e);
        T_CHECK(k_agg_full(OP_SUM, z, &v, &e) == 0 && v == 0, "empty sum");
        T_CHECK(k_agg_full(OP_AMIN, z, &v, &e) == 0 && v == INFINITY, "empty min");
        T_CHECK(k_agg_full(OP_AMAX, z, &v, &e) == 0 && v == -INFINITY, "empty max");
        T_CHECK(k_agg_full(OP_MEAN, z, &v, &e) == 0 && isnan(v), "empty mean");
        T_CHECK(k_agg_full(OP_PROD, z, &v, &e) == 0 && v == 1, "empty prod");
        MB *r = k_agg(OP_AMAX, DIR_ROW, z, &e);
        T_CHECK(r && r->rows == es[s][0] && r->cols == 1 &&
                (es[s][0] == 0 || mb_get(r, 0, 0) == -INFINITY), "rowMaxs of empty rows");
        mb_release(r);
        r = k_agg(OP_SUM, DIR_COL, z, &e);
        T_CHECK(r && r->rows == 1 && r->cols == es[s][1] && r->nnz == 0, "colSums of empty");
        mb_release(r);
        mb_release(z);
    }
    /* trace */
    double tv[] = {2, 1, 0, 3, 5, 1, 4, -2, 6};
    MB *T = mat(3, 3, tv), *Ts = mb_to_sparse(T, &e);
    T_CHECK(k_trace(T, &e) == 13 && k_trace(Ts, &e) == 13 && !e.code, "trace");
    MB *R = mat(1, 3, tv);
    BrErr e2 = {0};
    T_CHECK(isnan(k_trace(R, &e2)) && strstr(e2.msg, "dimension"), "trace non-square");
    mb_release(T); mb_release(Ts); mb_release(R);
}

/* Expected values from the conformance cases (agg_*). */
static void conformance(void)
{
    BrErr e = {0};
    double xv[] = {2, -1, 4, 0.5, 3, 7, -2, 1, 5, 1.5, 2, -3};
    MB *X = mat(3, 4, xv);
    for (int f = 0; f < 2; f++) {
        MB *A = f ? mb_to_sparse(X, &e) : mb_copy(X, &e);
        double v;
        k_agg_full(OP_SUM, A, &v, &e); T_CHECK(v == 20, "agg_full sum");
        k_agg_full(OP_MEAN, A, &v, &e); T_CHECK(close_to(v, 1.6666666666666667, 1e-15), "mean");
        k_agg_full(OP_VAR, A, &v, &e); T_CHECK(close_to(v, 8.2878787878787872, 1e-14), "var");
        k_agg_full(OP_SD, A, &v, &e); T_CHECK(close_to(v, 2.8788676224999974, 1e-14), "sd");
        k_agg_full(OP_PROD, A, &v, &e); T_CHECK(v == -7560, "prod");
        MB *RV = k_agg(OP_VAR, DIR_ROW, A, &e), *CV = k_agg(OP_VAR, DIR_COL, A, &e);
        T_CHECK(RV && close_to(mb_get(RV, 2, 0), 10.895833333333334, 1e-14), "rowVars");
        T_CHECK(CV && close_to(mb_get(CV, 0, 1), 16.75, 1e-14), "colVars");
        MB *CP = k_agg(OP_PROD, DIR_COL, A, &e);
        T_CHECK(CP && mb_get(CP, 0, 1) == -10.5, "colProds");
        mb_release(RV); mb_release(CV); mb_release(CP); mb_release(A);
    }
    mb_release(X);
    /* agg_vars_sds: zero row/column, and + 1e6 */
    double vv[] = {2, -1, 0, 4, 0.5, 0, 0, 0, 0, 0, 3, 7, 0, -2, 1, -1.5, 2, 0, 6, -3};
    MB *V = mat(4, 5, vv);
    MB *Vs = mb_to_sparse(V, &e);
    MB *B = mb_copy(V, &e);
    for (int k = 0; k < 20; k++) B->d[k] += 1e6;
    const double bcv[] = {4.0625, 12.666666666666666, 0, 13.333333333333334, 3.2291666666666665};
    const double brv[] = {3.7999999999999998, 0, 11.699999999999999, 12.199999999999999};
    MB *in[3] = { V, Vs, B };
    for (int k = 0; k < 3; k++) {
        MB *CV = k_agg(OP_VAR, DIR_COL, in[k], &e), *RV = k_agg(OP_VAR, DIR_ROW, in[k], &e);
        for (int j = 0; j < 5; j++)
            T_CHECK(CV && close_to(mb_get(CV, 0, j), bcv[j], 1e-9), "colVars %d %d: %.17g", k, j,
                    mb_get(CV, 0, j));
        for (int i = 0; i < 4; i++)
            T_CHECK(RV && close_to(mb_get(RV, i, 0), brv[i], 1e-9), "rowVars %d %d: %.17g", k, i,
                    mb_get(RV, i, 0));
        MB *RP = k_agg(OP_PROD, DIR_ROW, in[k], &e);
        T_CHECK(k == 2 || (RP && mb_get(RP, 1, 0) == 0 && RP->nnz == 0), "rowProds zero");
        mb_release(CV); mb_release(RV); mb_release(RP);
    }
    mb_release(V); mb_release(Vs); mb_release(B);
    /* agg_rowindex, agg_rowindex_ties */
    double rx[] = {3, 9, 1, 4, -5, -2, -8, -1, 7, 7.5, 0, 2, -1, -3, -7, -2, -1, 0, -2, -4};
    double tx[] = {5, 1, 5, 2, 0, 0, 0, 0, -1, -1, -3, -3, 2, 7, 7, 1};
    const double imx[] = {2, 4, 2, 1, 2}, imn[] = {3, 3, 3, 3, 4};
    const double tmx[] = {3, 4, 2, 3}, tmn[] = {2, 4, 4, 4};
    MB *RX = mat(5, 4, rx), *TX = mat(4, 4, tx);
    for (int f = 0; f < 2; f++) {
        MB *a = f ? mb_to_sparse(RX, &e) : mb_copy(RX, &e);
        MB *b = f ? mb_to_sparse(TX, &e) : mb_copy(TX, &e);
        MB *r1 = k_agg(OP_IDXMAX, DIR_ROW, a, &e), *r2 = k_agg(OP_IDXMIN, DIR_ROW, a, &e);
        MB *r3 = k_agg(OP_IDXMAX, DIR_ROW, b, &e), *r4 = k_agg(OP_IDXMIN, DIR_ROW, b, &e);
        for (int i = 0; i < 5; i++)
            T_CHECK(mb_get(r1, i, 0) == imx[i] && mb_get(r2, i, 0) == imn[i], "rowIndex %d fmt %d", i, f);
        for (int i = 0; i < 4; i++)
            T_CHECK(mb_get(r3, i, 0) == tmx[i] && mb_get(r4, i, 0) == tmn[i], "rowIndex ties %d fmt %d", i, f);
        mb_release(a); mb_release(b); mb_release(r1); mb_release(r2); mb_release(r3); mb_release(r4);
    }
    mb_release(RX); mb_release(TX);
    /* sparse rows: implicit zeros for rowIndexMax / rowMins */
    double sx[] = {0, -1, 0, -3,  0, 0, 0, 0,  2, 0, 0, 0,  -1, -2, -3, -4,  0, 5, 0, 5};
    MB *S = mat(5, 4, sx), *Ss = mb_to_sparse(S, &e);
    const double smx[] = {3, 4, 1, 1, 4}, smn[] = {4, 4, 4, 4, 3};
    MB *r1 = k_agg(OP_IDXMAX, DIR_ROW, Ss, &e), *r2 = k_agg(OP_IDXMIN, DIR_ROW, Ss, &e);
    for (int i = 0; i < 5; i++)
        T_CHECK(mb_get(r1, i, 0) == smx[i] && mb_get(r2, i, 0) == smn[i], "sparse rowIndex %d: %g %g",
                i, mb_get(r1, i, 0), mb_get(r2, i, 0));
    MB *rm = k_agg(OP_AMIN, DIR_ROW, Ss, &e);
    T_CHECK(rm && mb_get(rm, 0, 0) == -3 && mb_get(rm, 2, 0) == 0, "sparse rowMins");
    mb_release(S); mb_release(Ss); mb_release(r1); mb_release(r2); mb_release(rm);
}

/* Cumulative aggregates. */
static MB *ref_cum(OpCode op, const MB *a)
{
    BrErr e = {0};
    MB *r = mb_dense(a->rows, a->cols, &e);
    for (int64_t j = 0; j < a->cols; j++) {
        long double s = op == OP_CUMPROD ? 1 : 0;
        double m = op == OP_CUMMIN ? INFINITY : -INFINITY;
        for (int64_t i = 0; i < a->rows; i++) {
            double x = mb_get(a, i, j), o;
            if (op == OP_CUMSUM) o = (double)(s += x);
            else if (op == OP_CUMPROD) o = (double)(s *= x);
            else if (op == OP_CUMMIN) o = m = ops_binary(OP_MIN, m, x);
            else o = m = ops_binary(OP_MAX, m, x);
            r->d[i * a->cols + j] = o;
        }
    }
    mb_recount_nnz(r);
    return r;
}

static void sweep_cum(void)
{
    BrErr e = {0};
    const int64_t shapes[][2] = { {0, 5}, {5, 0}, {1, 1}, {7, 1}, {1, 9}, {40, 3},
                                  {3, 700}, {300, 250}, {20000, 4} };
    const OpCode ops[] = { OP_CUMSUM, OP_CUMPROD, OP_CUMMIN, OP_CUMMAX };
    const double sps[] = {0, 0.001, 0.1, 1};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (int sp = 0; sp < 4; sp++)
            for (int f = 0; f < 2; f++) {
                int64_t M = shapes[s][0], N = shapes[s][1];
                if (M * N > 5000 && sp == 1) continue;
                MB *a = rnd(M, N, sps[sp], f, 0);
                if (M > 50) { /* keep products finite: values near 1 */
                    MB *t = mb_to_dense(a, &e);
                    for (int64_t k = 0; k < M * N; k++) if (t->d[k]) t->d[k] = 1 + t->d[k] / 5000;
                    mb_recount_nnz(t);
                    if (f) mb_make_sparse(t, &e);
                    mb_release(a);
                    a = t;
                }
                for (int o = 0; o < 4; o++) {
                    MB *ref = ref_cum(ops[o], a);
                    for (int th = 1; th <= 2; th++) {
                        br_set_threads(th);
                        MB *r = k_cum(ops[o], a, &e);
                        T_MB_EQ(r, ref, 1e-12, "cum %s %lldx%lld sp %g fmt %d th %d",
                                op_info[ops[o]].name, (long long)M, (long long)N, sps[sp], f, th);
                        T_CHECK(r && r->nnz == ref->nnz, "cum nnz");
                        mb_release(r);
                    }
                    mb_release(ref);
                }
                mb_release(a);
            }
    /* agg_cum */
    double xv[] = {3, -1, 2, 1, 4, -2, 0.5, 2, 5, -2, 3, 1};
    double csv[] = {3, -1, 2, 4, 3, 0, 4.5, 5, 5, 2.5, 8, 6};
    double cpv[] = {3, -1, 2, 3, -4, -4, 1.5, -8, -20, -3, -24, -20};
    MB *X = mat(4, 3, xv), *CS = mat(4, 3, csv), *CP = mat(4, 3, cpv);
    MB *r1 = k_cum(OP_CUMSUM, X, &e), *r2 = k_cum(OP_CUMPROD, X, &e);
    T_MB_EQ(r1, CS, 0, "agg_cum cumsum");
    T_MB_EQ(r2, CP, 0, "agg_cum cumprod");
    mb_release(X); mb_release(CS); mb_release(CP); mb_release(r1); mb_release(r2);
    BrErr e2 = {0};
    T_CHECK(!k_cum(OP_SUM, r1 = mb_empty(2, 2, &e), &e2) && e2.code, "k_cum rejects non-cum ops");
    mb_release(r1);
}

/* ---- order statistics and moments ---- */

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    if (isnan(x) || isnan(y)) return isnan(x) - isnan(y);
    return (x > y) - (x < y);
}

static void stats(void)
{
    BrErr e = {0};
    /* agg_median_quantile */
    double xv[] = {7, 1, 9, 3, 5, 2, 8, 6}, yv[] = {4, 10, 1, 7, 3};
    double pv[] = {0.1, 0.25, 0.5, 0.75};
    MB *x = mat(8, 1, xv), *y = mat(5, 1, yv), *P = mat(4, 1, pv);
    double v;
    T_CHECK(k_median(x, &v, &e) == 0 && v == 5.5, "median even");
    T_CHECK(k_median(y, &v, &e) == 0 && v == 4, "median odd");
    T_CHECK(k_quantile1(x, 0.25, &v, &e) == 0 && v == 2, "q25");
    T_CHECK(k_quantile1(x, 0.5, &v, &e) == 0 && v == 5, "q50");
    T_CHECK(k_quantile1(x, 0.9, &v, &e) == 0 && v == 9, "q90");
    T_CHECK(k_quantile1(x, 0.1, &v, &e) == 0 && v == 1, "q10");
    T_CHECK(k_quantile1(x, 0, &v, &e) == 0 && v == 1, "q0");
    T_CHECK(k_quantile1(x, 1, &v, &e) == 0 && v == 9, "q1");
    MB *QP = k_quantile(x, P, &e);
    double qw[] = {1, 2, 5, 7};
    MB *QW = mat(4, 1, qw);
    T_MB_EQ(QP, QW, 0, "quantile vector");
    mb_release(QP); mb_release(QW);
    /* agg_moment_cov */
    double mx[] = {2, 4, 4, 4, 5, 5, 7, 9}, my[] = {1, 3, 2, 5, 4, 6, 8, 7};
    MB *MX = mat(8, 1, mx), *MY = mat(8, 1, my);
    T_CHECK(k_moment(MX, 2, NULL, &v, &e) == 0 && close_to(v, 4, 1e-15), "m2");
    T_CHECK(k_moment(MX, 3, NULL, &v, &e) == 0 && close_to(v, 5.25, 1e-15), "m3");
    T_CHECK(k_moment(MY, 4, NULL, &v, &e) == 0 && close_to(v, 48.5625, 1e-15), "m4");
    T_CHECK(k_cov(MX, MY, NULL, &v, &e) == 0 && close_to(v, 4.4285714285714288, 1e-15), "cov");
    /* errors */
    BrErr e2 = {0};
    MB *row = mat(1, 4, pv);
    T_CHECK(k_median(row, &v, &e2) && strstr(e2.msg, "dimension"), "median shape");
    br_err_clear(&e2);
    T_CHECK(k_cov(MX, y, NULL, &v, &e2) && strstr(e2.msg, "dimension"), "cov shape");
    br_err_clear(&e2);
    T_CHECK(k_moment(MX, 5, NULL, &v, &e2) && e2.code, "moment order");
    br_err_clear(&e2);
    T_CHECK(k_quantile1(x, 1.5, &v, &e2) && e2.code, "quantile p range");
    mb_release(row); mb_release(x); mb_release(y); mb_release(P);
    /* sweeps against sorting (with zeros, sparse, NaN, weights) */
    const int64_t ns[] = {0, 1, 2, 3, 10, 57, 1000};
    const double sps[] = {0, 0.1, 0.6, 1};
    for (size_t s = 0; s < sizeof ns / sizeof *ns; s++)
        for (int sp = 0; sp < 4; sp++)
            for (int f = 0; f < 2; f++) {
                int64_t n = ns[s];
                MB *a = rnd(n, 1, sps[sp], false, 0);
                for (int64_t i = 0; i < n; i++) /* ties */
                    a->d[i] = round(a->d[i] / 4);
                if (n > 5 && sp == 2) a->d[3] = NAN;
                mb_recount_nnz(a);
                if (f) mb_make_sparse(a, &e);
                MB *w = rnd(n, 1, 0.8, f, 0);
                MB *wd = mb_to_dense(w, &e);
                for (int64_t i = 0; i < n; i++) wd->d[i] = wd->d[i] == 0 ? 0 : (double)((int64_t)fabs(wd->d[i]) % 4);
                mb_recount_nnz(wd);
                /* reference: sorted copies, weights expanded */
                double *srt = malloc((size_t)BR_MAX(n, 1) * sizeof(double));
                int64_t W = 0;
                for (int64_t i = 0; i < n; i++) { srt[i] = mb_get(a, i, 0); W += (int64_t)wd->d[i]; }
                double *ex = malloc((size_t)BR_MAX(W, 1) * sizeof(double));
                for (int64_t i = 0, k = 0; i < n; i++)
                    for (int64_t c = 0; c < (int64_t)wd->d[i]; c++) ex[k++] = srt[i];
                qsort(srt, (size_t)n, sizeof(double), cmpd);
                qsort(ex, (size_t)W, sizeof(double), cmpd);
                double med = n == 0 ? NAN : n % 2 ? srt[n / 2] : (srt[n / 2 - 1] + srt[n / 2]) / 2;
                double medw = W == 0 ? NAN : W % 2 ? ex[W / 2] : (ex[W / 2 - 1] + ex[W / 2]) / 2;
                T_CHECK(k_median(a, &v, &e) == 0 && close_to(v, med, 0), "median n=%lld sp %g fmt %d: %g vs %g",
                        (long long)n, sps[sp], f, v, med);
                T_CHECK(k_median_w(a, wd, &v, &e) == 0 && close_to(v, medw, 0),
                        "weighted median n=%lld sp %g fmt %d: %g vs %g", (long long)n, sps[sp], f, v, medw);
                const double ps[] = {0, 0.05, 0.1, 0.25, 1.0 / 3, 0.5, 0.7, 0.9, 0.99, 1};
                MB *PP = mat(10, 1, ps);
                MB *q = k_quantile(a, PP, &e), *qwt = k_quantile_w(a, wd, PP, &e);
                for (int k = 0; k < 10; k++) {
                    int64_t pos = (int64_t)ceil(ps[k] * (double)n), posw = (int64_t)ceil(ps[k] * (double)W);
                    double want = n == 0 ? NAN : srt[BR_MAX(pos, 1) - 1];
                    double wantw = W == 0 ? NAN : ex[BR_MAX(posw, 1) - 1];
                    T_CHECK(k_quantile1(a, ps[k], &v, &e) == 0 && close_to(v, want, 0),
                            "quantile n=%lld p=%g: %g vs %g", (long long)n, ps[k], v, want);
                    T_CHECK(q && close_to(mb_get(q, k, 0), want, 0), "quantile vec n=%lld p=%g", (long long)n, ps[k]);
                    T_CHECK(qwt && close_to(mb_get(qwt, k, 0), wantw, 0), "weighted quantile n=%lld p=%g: %g vs %g",
                            (long long)n, ps[k], mb_get(qwt, k, 0), wantw);
                }
                mb_release(q); mb_release(qwt); mb_release(PP);
                /* moments (no NaN) */
                if (!(n > 5 && sp == 2)) {
                    long double s = 0, sw = 0, swx = 0;
                    for (int64_t i = 0; i < n; i++) {
                        double xi = mb_get(a, i, 0), wi = wd->d[i];
                        s += xi; sw += wi; swx += wi * xi;
                    }
                    long double mean = s / n, meanw = swx / sw;
                    for (int ord = 2; ord <= 4; ord++) {
                        long double m = 0, mw = 0;
                        for (int64_t i = 0; i < n; i++) {
                            long double d = mb_get(a, i, 0) - mean, dw = mb_get(a, i, 0) - meanw;
                            m += powl(d, ord); mw += wd->d[i] * powl(dw, ord);
                        }
                        double want = n ? (double)(m / n) : NAN, wantw = sw ? (double)(mw / sw) : NAN;
                        T_CHECK(k_moment(a, ord, NULL, &v, &e) == 0 && close_to(v, want, 1e-11),
                                "moment %d n=%lld: %g vs %g", ord, (long long)n, v, want);
                        T_CHECK(k_moment(a, ord, wd, &v, &e) == 0 && close_to(v, wantw, 1e-11),
                                "weighted moment %d n=%lld: %g vs %g", ord, (long long)n, v, wantw);
                    }
                    MB *b = rnd(n, 1, 0.7, !f, 3);
                    long double sb = 0, sbw = 0;
                    for (int64_t i = 0; i < n; i++) { sb += mb_get(b, i, 0); sbw += wd->d[i] * mb_get(b, i, 0); }
                    long double mb = sb / n, mbw = sbw / sw, c = 0, cw = 0;
                    for (int64_t i = 0; i < n; i++) {
                        c += (mb_get(a, i, 0) - mean) * (mb_get(b, i, 0) - mb);
                        cw += wd->d[i] * (mb_get(a, i, 0) - meanw) * (mb_get(b, i, 0) - mbw);
                    }
                    double want = n == 0 ? NAN : n == 1 ? 0 : (double)(c / (n - 1));
                    double wantw = sw == 0 ? NAN : sw == 1 ? 0 : (double)(cw / (sw - 1));
                    T_CHECK(k_cov(a, b, NULL, &v, &e) == 0 && close_to(v, want, 1e-11),
                            "cov n=%lld: %g vs %g", (long long)n, v, want);
                    T_CHECK(k_cov(a, b, wd, &v, &e) == 0 && close_to(v, wantw, 1e-11),
                            "weighted cov n=%lld: %g vs %g", (long long)n, v, wantw);
                    mb_release(b);
                }
                free(srt); free(ex);
                mb_release(a); mb_release(w); mb_release(wd);
            }
    mb_release(MX); mb_release(MY);
}

/* Row min/max and rowIndexMin/Max over narrow dense blocks (the
 * four-rows-at-a-time path): ties, NaN, infinities, ragged row counts. */
static void narrow_rows(void)
{
    static const double vals[] = {-1, 0, 1, 2, NAN, INFINITY, -INFINITY, 0.5};
    static const int64_t Ns[] = {1, 2, 3, 5, 8, 13, 64, 65};
    static const int64_t Ms[] = {1, 3, 4, 5, 9, 70001};
    static const OpCode ops[] = {OP_AMIN, OP_AMAX, OP_IDXMIN, OP_IDXMAX};
    BrErr e = {0};
    for (size_t a = 0; a < sizeof Ns / sizeof *Ns; a++)
        for (size_t b = 0; b < sizeof Ms / sizeof *Ms; b++)
            for (int nanp = 0; nanp < 2; nanp++) {
                int64_t M = Ms[b], N = Ns[a];
                if (M * N > 200000) continue;
                MB *x = mb_dense(M, N, &e);
                for (int64_t i = 0; i < M * N; i++) {
                    int k = (int)(urand() * 8);
                    if (!nanp && k == 4) k = 3;   /* no NaN */
                    x->d[i] = vals[k];
                }
                mb_recount_nnz(x);
                for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) {
                    MB *ref = ref_agg(ops[o], DIR_ROW, x);
                    for (int th = 1; th <= 2; th++) {
                        br_set_threads(th);
                        MB *r = k_agg(ops[o], DIR_ROW, x, &e);
                        T_MB_EQ(r, ref, 0, "narrow rows %s %lldx%lld nan %d th %d",
                                op_info[ops[o]].name, (long long)M, (long long)N, nanp, th);
                        mb_release(r);
                    }
                    mb_release(ref);
                }
                mb_release(x);
            }
    br_set_threads(2);
}

int main(void)
{
    narrow_rows();
    special_values();
    conformance();
    sweep_agg();
    sweep_cum();
    stats();
    br_set_threads(0);
    return t_done("test_agg");
}
