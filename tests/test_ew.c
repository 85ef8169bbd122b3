/* test_ew.c: elementwise kernels (kernels/ew.h) against naive references
 * over mb_get, sweeping shapes, sparsity, input formats, broadcasting and
 * thread counts; plus SystemDS's scalar semantics and NaN/Inf handling. */
#include "t.h"
#include "kernels/agg.h"
#include "kernels/ew.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static unsigned t_seed = 1;
static double urand(void)
{
    t_seed = t_seed * 1103515245u + 12345u;
    return (double)((t_seed >> 8) & 0xFFFFFF) / (double)0x1000000;
}

/* Random r x c block: about sp non-zeros, values in multiples of 1/8 in
 * [-12, 12] (some integers, no zeros among the chosen cells). */
static MB *rnd(int64_t r, int64_t c, double sp, bool sparse)
{
    BrErr e = {0};
    MB *m = mb_dense(r, c, &e);
    for (int64_t i = 0; i < r * c; i++)
        if (urand() < sp) {
            double v = floor(urand() * 192) / 8.0 - 12.0;
            m->d[i] = v == 0 ? 0.5 : v;
        }
    mb_recount_nnz(m);
    if (sparse) mb_make_sparse(m, &e);
    return m;
}

/* Structural validity: exact nnz, sorted columns, no stored zeros, and the
 * format chosen by mb_examine's rule. */
static bool valid(const MB *m)
{
    if (!m) return false;
    int64_t nz = 0;
    for (int64_t i = 0; i < m->rows; i++)
        for (int64_t j = 0; j < m->cols; j++) nz += mb_get(m, i, j) != 0;
    if (nz != m->nnz) return false;
    if (m->sparse) {
        if (m->rp[0] != 0 || m->rp[m->rows] != m->nnz) return false;
        for (int64_t i = 0; i < m->rows; i++)
            for (int64_t k = m->rp[i]; k < m->rp[i + 1]; k++) {
                if (m->v[k] == 0) return false;
                if (k > m->rp[i] && m->ci[k] <= m->ci[k - 1]) return false;
                if (m->ci[k] < 0 || m->ci[k] >= m->cols) return false;
            }
    }
    int64_t cells = m->rows * m->cols;
    /* an empty one is sparse where its row pointers are smaller than its cells */
    bool want = mb_should_be_sparse(m->rows, m->cols, m->nnz) || (m->nnz == 0 && cells > 0 && m->rows + 1 < cells);
    return cells == 0 || want == m->sparse;
}

/* Is the finiteness flag of a kernel's result set and true (matrix/mb.h:
 * the pass that counts the non-zeros sets it; a wrong "finite" would
 * make a later product skip zeros against an Inf, a silent wrong
 * number)? */
static bool fin_right(const MB *m)
{
    if (!m) return false;
    const double *x = m->sparse ? m->v : m->d;
    int64_t n = m->sparse ? m->nnz : m->rows * m->cols;
    bool bad = false;
    for (int64_t k = 0; k < n; k++) bad |= !isfinite(x[k]);
    return m->fin == (bad ? MB_FIN_NONFINITE : MB_FIN_FINITE);
}

/* valid, and the finiteness flag set right. */
static bool valid_fin(const MB *m) { return valid(m) && fin_right(m); }

/* Value of operand m (r x c) at output cell (i, j) under broadcasting. */
static double bget(const MB *m, int64_t i, int64_t j)
{
    return mb_get(m, m->rows == 1 ? 0 : i, m->cols == 1 ? 0 : j);
}

/* Reference a op b with the broadcast rules (shapes assumed valid). */
static MB *ref_binary(OpCode op, const MB *a, const MB *b, int64_t M, int64_t N)
{
    BrErr e = {0};
    MB *r = mb_dense(M, N, &e);
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++)
            r->d[i * N + j] = ops_binary(op, bget(a, i, j), bget(b, i, j));
    mb_recount_nnz(r);
    return r;
}

/* Every elementwise operator of ops.def, by kind (filled by op_lists). */
static OpCode BIN_OPS[OP__COUNT], UN_OPS[OP__COUNT];
static int NBIN, NUN;

static void op_lists(void)
{
    for (int i = 0; i < OP__COUNT; i++) {
        if (op_info[i].kind == OK_BINARY) BIN_OPS[NBIN++] = (OpCode)i;
        if (op_info[i].kind == OK_UNARY) UN_OPS[NUN++] = (OpCode)i;
    }
}

static const int64_t SHAPES[][2] = {
    {0, 5}, {5, 0}, {1, 1}, {7, 1}, {1, 9}, {40, 3}, {3, 70}, {30, 40} };
#define NSHAPES (int)(sizeof SHAPES / sizeof *SHAPES)
static const double SPS[] = {0, 0.001, 0.1, 1};

/* Equal-shape binary sweep. */
static void sweep_binary(void)
{
    BrErr e = {0};
    for (int s = 0; s < NSHAPES; s++)
        for (int sa = 0; sa < 4; sa++)
            for (int sb = 0; sb < 4; sb += (sb == 0 ? 2 : 1))
                for (int f = 0; f < 4; f++) {
                    int64_t M = SHAPES[s][0], N = SHAPES[s][1];
                    MB *a = rnd(M, N, SPS[sa], f & 1), *b = rnd(M, N, SPS[sb], f & 2);
                    for (int o = 0; o < NBIN; o++) {
                        MB *ref = ref_binary(BIN_OPS[o], a, b, M, N);
                        for (int th = 1; th <= 2; th++) {
                            br_set_threads(th);
                            MB *r = k_binary(BIN_OPS[o], a, b, &e);
                            T_CHECK(valid_fin(r), "binary valid %s %lldx%lld", op_info[BIN_OPS[o]].name,
                                    (long long)M, (long long)N);
                            T_MB_EQ(r, ref, 0, "binary %s %lldx%lld sp %g/%g fmt %d th %d",
                                    op_info[BIN_OPS[o]].name, (long long)M, (long long)N,
                                    SPS[sa], SPS[sb], f, th);
                            mb_release(r);
                        }
                        mb_release(ref);
                    }
                    mb_release(a); mb_release(b);
                }
}

/* Broadcasting: vectors on either side, outer, 1x1 cases, errors. */
static void sweep_broadcast(void)
{
    BrErr e = {0};
    const int64_t M = 23, N = 17;
    /* (a shape, b shape) pairs, output shape */
    const int64_t cases[][6] = {
        {M, N, 1, N, M, N}, {M, N, M, 1, M, N}, {1, N, M, N, M, N},
        {M, 1, M, N, M, N}, {M, 1, 1, N, M, N}, {1, 1, 1, N, 1, N},
        {1, N, 1, 1, 1, N}, {M, 1, 1, 1, M, 1}, {1, 1, M, 1, M, 1},
        {0, N, 1, N, 0, N}, {M, 0, M, 1, M, 0}, {0, 1, 1, N, 0, N},
        {300, 250, 1, 250, 300, 250}, {300, 1, 1, 250, 300, 250},
        /* narrow rows: tasks of several whole rows (ew.c NARROW), many
         * tasks, the last one short, both threads */
        {20001, 5, 20001, 1, 20001, 5}, {20001, 5, 1, 5, 20001, 5}, {20001, 1, 20001, 5, 20001, 5},
        {20001, 1, 1, 5, 20001, 5}, {1000, 512, 1000, 1, 1000, 512}, {700, 513, 1, 513, 700, 513} };
    const OpCode ops[] = { OP_PLUS, OP_MINUS, OP_MULT, OP_DIV, OP_GT, OP_MIN,
                           OP_POW, OP_AND, OP_OR, OP_EQ };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        for (int sa = 0; sa < 4; sa++)
            for (int sb = 0; sb < 4; sb++)
                for (int f = 0; f < 4; f++) {
                    bool big = cases[c][4] * cases[c][5] > 10000;
                    if (big && (sa < 2 || sb < 2 || f == 1 || f == 2)) continue;
                    MB *a = rnd(cases[c][0], cases[c][1], SPS[sa], f & 1);
                    MB *b = rnd(cases[c][2], cases[c][3], SPS[sb], f & 2);
                    for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) {
                        MB *ref = ref_binary(ops[o], a, b, cases[c][4], cases[c][5]);
                        for (int th = 1; th <= 2; th++) {
                            br_set_threads(th);
                            MB *r = k_binary(ops[o], a, b, &e);
                            T_CHECK(valid_fin(r), "bcast valid case %zu", c);
                            T_MB_EQ(r, ref, 0, "bcast %s case %zu sp %g/%g fmt %d th %d",
                                    op_info[ops[o]].name, c, SPS[sa], SPS[sb], f, th);
                            mb_release(r);
                        }
                        mb_release(ref);
                    }
                    mb_release(a); mb_release(b);
                }
    /* shape errors */
    const int64_t bad[][4] = { {3, 4, 4, 3}, {1, 1, 3, 4}, {2, 3, 1, 2},
                               {2, 3, 3, 1}, {1, 3, 2, 1} };
    /* a right operand of 1 x 1 is a scalar (SystemDS's
     * simplifyScalarMVBinaryOperation); a left one is not (above) */
    for (int sp = 0; sp < 2; sp++) {
        const OpCode sops[] = {OP_PLUS, OP_MINUS, OP_MULT, OP_DIV, OP_LT, OP_POW};
        MB *a = rnd(3, 4, sp ? 0.3 : 1, sp), *b = rnd(1, 1, 1, true);
        for (size_t o = 0; o < sizeof sops / sizeof *sops; o++) {
            BrErr e2 = {0};
            MB *r = k_binary(sops[o], a, b, &e2), *want = k_binary_ms(sops[o], a, mb_get(b, 0, 0), &e2);
            T_CHECK(r && want, "matrix op 1x1 as scalar: %s", e2.msg);
            if (r && want) T_MB_EQ(r, want, 0, "matrix %s 1x1 sparse %d", op_info[sops[o]].name, sp);
            mb_release(r); mb_release(want);
        }
        mb_release(a); mb_release(b);
    }
    for (size_t c = 0; c < sizeof bad / sizeof *bad; c++) {
        MB *a = rnd(bad[c][0], bad[c][1], 1, false), *b = rnd(bad[c][2], bad[c][3], 1, true);
        BrErr e2 = {0};
        MB *r = k_binary(OP_PLUS, a, b, &e2);
        T_CHECK(!r && e2.code == BR_EDIM && strstr(e2.msg, "dimension"),
                "dimension error case %zu: %s", c, e2.msg);
        char want[64];
        snprintf(want, sizeof want, "%lldx%lld", (long long)bad[c][0], (long long)bad[c][1]);
        T_CHECK(strstr(e2.msg, want) != NULL, "error names shapes: %s", e2.msg);
        mb_release(r); mb_release(a); mb_release(b);
    }
    BrErr e3 = {0};
    MB *a = rnd(2, 2, 1, false);
    T_CHECK(!k_binary(OP_SUM, a, a, &e3) && e3.code, "non-binary op rejected");
    mb_release(a);
}

/* Matrix-scalar and scalar-matrix. */
static void sweep_scalar(void)
{
    BrErr e = {0};
    const double scal[] = { 0, 2, -1.5, 0.5, 3, NAN, INFINITY };
    for (int s = 0; s < NSHAPES; s++)
        for (int sa = 0; sa < 4; sa++)
            for (int f = 0; f < 2; f++) {
                int64_t M = SHAPES[s][0], N = SHAPES[s][1];
                MB *a = rnd(M, N, SPS[sa], f);
                for (int o = 0; o < NBIN; o++)
                    for (size_t k = 0; k < sizeof scal / sizeof *scal; k++) {
                        OpCode op = BIN_OPS[o];
                        MB *s1 = mb_scalar(scal[k], &e);
                        MB *ref1 = ref_binary(op, a, s1, M, N);
                        MB *ref2 = ref_binary(op, s1, a, M, N);
                        for (int th = 1; th <= 2; th++) {
                            br_set_threads(th);
                            MB *r1 = k_binary_ms(op, a, scal[k], &e);
                            MB *r2 = k_binary_sm(op, scal[k], a, &e);
                            T_CHECK(valid_fin(r1) && valid_fin(r2), "scalar valid");
                            T_MB_EQ(r1, ref1, 1e-15, "ms %s s=%g %lldx%lld sp %g fmt %d", op_info[op].name,
                                    scal[k], (long long)M, (long long)N, SPS[sa], f);
                            T_MB_EQ(r2, ref2, 1e-15, "sm %s s=%g %lldx%lld sp %g fmt %d", op_info[op].name,
                                    scal[k], (long long)M, (long long)N, SPS[sa], f);
                            if (a->sparse && r1 && ops_binary(op, 0, scal[k]) == 0 &&
                                r1->rows * r1->cols > 0)
                                T_CHECK(r1->sparse || !mb_should_be_sparse(M, N, r1->nnz),
                                        "sparse-safe ms keeps sparse");
                            mb_release(r1); mb_release(r2);
                        }
                        mb_release(s1); mb_release(ref1); mb_release(ref2);
                    }
                mb_release(a);
            }
    /* large inputs: parallel flat loops (75000 cells, past br_par's
     * 65536) */
    MB *big = rnd(300, 250, 1, false), *bigs = rnd(300, 250, 0.05, true);
    const OpCode fast[] = { OP_PLUS, OP_MULT, OP_DIV, OP_POW, OP_LT, OP_MAX };
    for (size_t o = 0; o < sizeof fast / sizeof *fast; o++)
        for (int th = 1; th <= 2; th++) {
            br_set_threads(th);
            MB *in[2] = { big, bigs };
            for (int k = 0; k < 2; k++) {
                MB *s1 = mb_scalar(2, &e);
                MB *ref = ref_binary(fast[o], in[k], s1, 300, 250);
                MB *r = k_binary_ms(fast[o], in[k], 2, &e);
                T_CHECK(valid_fin(r), "big ms valid");
                T_MB_EQ(r, ref, 1e-15, "big ms %s th %d", op_info[fast[o]].name, th);
                mb_release(r); mb_release(ref); mb_release(s1);
            }
        }
    mb_release(big); mb_release(bigs);
}

/* Unary operators. */
static void sweep_unary(void)
{
    BrErr e = {0};
    int64_t shapes[NSHAPES + 1][2];
    memcpy(shapes, SHAPES, sizeof SHAPES);
    shapes[NSHAPES][0] = 280; shapes[NSHAPES][1] = 240;   /* 67200 cells: past br_par's 65536 */
    for (int s = 0; s <= NSHAPES; s++)
        for (int sa = 0; sa < 4; sa++)
            for (int f = 0; f < 2; f++) {
                int64_t M = shapes[s][0], N = shapes[s][1];
                if (s == NSHAPES && sa != 2 + f) continue;
                MB *a = rnd(M, N, SPS[sa], f);
                /* scale some values into [-1, 1] for asin/acos */
                MB *a2 = k_binary_ms(OP_DIV, a, 12, &e);
                for (int o = 0; o < NUN; o++) {
                    OpCode op = UN_OPS[o];
                    const MB *in = (op == OP_ASIN || op == OP_ACOS) ? a2 : a;
                    MB *ref = mb_dense(M, N, &e);
                    for (int64_t i = 0; i < M; i++)
                        for (int64_t j = 0; j < N; j++)
                            ref->d[i * N + j] = ops_unary(op, mb_get(in, i, j));
                    mb_recount_nnz(ref);
                    for (int th = 1; th <= 2; th++) {
                        br_set_threads(th);
                        MB *r = k_unary(op, in, &e);
                        T_CHECK(valid_fin(r), "unary valid %s", op_info[op].name);
                        T_MB_EQ(r, ref, 0, "unary %s %lldx%lld sp %g fmt %d th %d", op_info[op].name,
                                (long long)M, (long long)N, SPS[sa], f, th);
                        mb_release(r);
                    }
                    mb_release(ref);
                }
                mb_release(a); mb_release(a2);
            }
    BrErr e2 = {0};
    MB *a = rnd(2, 2, 1, false);
    T_CHECK(!k_unary(OP_PLUS, a, &e2) && e2.code, "non-unary op rejected");
    mb_release(a);
}

/* ifelse with matrix/scalar operands and broadcast vectors. */
static void sweep_ifelse(void)
{
    BrErr e = {0};
    const int64_t shapes[][2] = { {0, 4}, {1, 1}, {9, 1}, {1, 8}, {31, 17}, {280, 240}, {20001, 5} };
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        int64_t M = shapes[s][0], N = shapes[s][1];
        for (int sc = 0; sc < 4; sc++)
            for (int mask = 0; mask < 32; mask++) {
                /* bit0: c matrix, bit1: a matrix, bit2: b matrix, bit3: a as row
                 * vector, bit4: b as column vector; formats from sc */
                if (!(mask & 7)) continue;
                if (M * N > 10000 && (mask % 3)) continue;
                bool cm = mask & 1, am = mask & 2, bm = mask & 4;
                MB *c = cm ? rnd(M, N, SPS[sc], sc & 1) : NULL;
                MB *a = am ? ((mask & 8) ? rnd(1, N, 0.7, sc & 2) : rnd(M, N, 0.5, sc & 2)) : NULL;
                MB *b = bm ? ((mask & 16) ? rnd(M, 1, 0.7, sc & 1) : rnd(M, N, 0.3, !(sc & 1))) : NULL;
                double cs = (mask & 8) ? 0 : 1, as = 2.5, bs = (mask & 16) ? 0 : -1;
                int64_t OM = M, ON = N;
                if (!cm && !(am && !(mask & 8)) && !(bm && !(mask & 16))) {
                    /* output shape from vectors only */
                    OM = (bm) ? M : 1; ON = (am) ? N : 1;
                }
                MB *ref = mb_dense(OM, ON, &e);
                for (int64_t i = 0; i < OM; i++)
                    for (int64_t j = 0; j < ON; j++) {
                        double cv = c ? bget(c, i, j) : cs;
                        ref->d[i * ON + j] = cv != 0 ? (a ? bget(a, i, j) : as) : (b ? bget(b, i, j) : bs);
                    }
                mb_recount_nnz(ref);
                for (int th = 1; th <= 2; th++) {
                    br_set_threads(th);
                    MB *r = k_ifelse(c, cs, a, as, b, bs, &e);
                    /* (a matrix condition: a kernel's pass; a constant one
                     * copies a branch, whose flag starts unknown) */
                    T_CHECK(valid(r) && (!cm || fin_right(r)), "ifelse valid %lldx%lld mask %d sc %d", (long long)M,
                            (long long)N, mask, sc);
                    T_MB_EQ(r, ref, 0, "ifelse %lldx%lld mask %d sc %d th %d", (long long)M,
                            (long long)N, mask, sc, th);
                    mb_release(r);
                }
                mb_release(ref); mb_release(c); mb_release(a); mb_release(b);
            }
    }
    /* the idiom ifelse(X > 0, X, 0) on a sparse X stays sparse */
    MB *x = rnd(200, 100, 0.05, true);
    MB *gt = k_binary_ms(OP_GT, x, 0, &e);
    MB *r = k_ifelse(gt, 0, x, 0, NULL, 0, &e);
    T_CHECK(r && r->sparse && valid_fin(r), "ifelse(X > 0, X, 0) sparse");
    MB *ref = k_binary_ms(OP_MAX, x, 0, &e);
    T_MB_EQ(r, ref, 0, "ifelse(X > 0, X, 0) == max(X, 0)");
    mb_release(x); mb_release(gt); mb_release(r); mb_release(ref);
    /* all scalars, shape error */
    r = k_ifelse(NULL, 0, NULL, 1, NULL, 7, &e);
    T_CHECK(r && r->rows == 1 && r->cols == 1 && mb_get(r, 0, 0) == 7, "scalar ifelse");
    mb_release(r);
    MB *c1 = rnd(3, 4, 1, false), *a1 = rnd(4, 3, 1, false);
    BrErr e2 = {0};
    T_CHECK(!k_ifelse(c1, 0, a1, 0, NULL, 0, &e2) && strstr(e2.msg, "dimension"), "ifelse dims");
    mb_release(c1); mb_release(a1);
}

/* The finiteness flag of each kernel path's result (fin_right), with
 * values that turn non-finite from finite inputs (overflow, exp, log of
 * a negative) at the last stored cell, so that at 2 threads only the
 * last chunk sees it; an Inf in the branch of a sparse ifelse at a cell
 * the condition does not take (the result is finite); then a product
 * over such a result, whose flag decides whether the zeros of the other
 * operand are skipped, against the reference. */
static void fin_flags(void)
{
    BrErr e = {0};
    int seen[2] = {0, 0};
    for (int big = 0; big < 2; big++)
        for (int sp = 0; sp < 2; sp++)
            for (int sign = 0; sign < 2; sign++) {
                /* small on 1 thread; large (75000 cells, past
                 * br_par's 65536) on 2 */
                int th = 1 + big;
                br_set_threads(th);
                int64_t M = big ? 300 : 9, N = big ? 250 : 7;
                MB *a = rnd(M, N, sp ? 0.05 : 1, sp);
                double *last = sp ? &a->v[a->nnz - 1] : &a->d[M * N - 1];
                *last = sign ? -1e200 : 1e200;
                MB *r[9];
                r[0] = k_binary(OP_MULT, a, a, &e);          /* Inf at the last cell */
                r[1] = k_binary_ms(OP_MULT, a, 1e-200, &e);  /* finite */
                r[2] = k_binary_ms(OP_MULT, a, 1e200, &e);   /* +-Inf there */
                r[3] = k_binary(OP_PLUS, a, a, &e);          /* 2e200: finite */
                r[4] = k_unary(OP_EXP, a, &e);               /* Inf for 1e200 (sparse: f(0) = 1) */
                r[5] = k_unary(OP_ABS, a, &e);               /* finite */
                r[6] = k_unary(OP_LOG, a, &e);               /* NaN for negatives */
                MB *c = k_binary_ms(OP_GT, a, 0, &e);
                r[7] = k_ifelse(c, 0, r[2], 0, NULL, 0, &e); /* Inf only where a > 0 */
                r[8] = k_ifelse(c, 0, r[2], 0, NULL, -1, &e);
                for (int k = 0; k < 9; k++) {
                    T_CHECK(fin_right(r[k]), "finiteness flag of result %d (%lldx%lld, sparse %d, sign %d, th %d)",
                            k, (long long)M, (long long)N, sp, sign, th);
                    if (r[k]) seen[r[k]->fin == MB_FIN_NONFINITE]++;
                }
                T_CHECK(r[7] && (r[7]->fin == MB_FIN_NONFINITE) == !sign,
                        "ifelse over a branch with -Inf at a cell not taken is finite (sign %d)", sign);
                /* a product asks the flag of r[2] or r[1]: the zeros of
                 * the sparse operand annihilate only a finite one */
                MB *x = rnd(M, N, 0.02, true);
                for (int k = 1; k <= 2; k++) {
                    MB *p = k_binary(OP_MULT, x, r[k], &e), *ref = ref_binary(OP_MULT, x, r[k], M, N);
                    T_MB_EQ(p, ref, 0, "X * flagged result %d (sign %d, th %d)", k, sign, th);
                    mb_release(p); mb_release(ref);
                }
                mb_release(x); mb_release(c); mb_release(a);
                for (int k = 0; k < 9; k++) mb_release(r[k]);
            }
    T_CHECK(seen[0] > 10 && seen[1] > 10, "both flags set: %d finite, %d non-finite", seen[0], seen[1]);
}

static MB *mat(int64_t r, int64_t c, const double *v)
{
    BrErr e = {0};
    MB *m = mb_dense(r, c, &e);
    memcpy(m->d, v, (size_t)(r * c) * sizeof(double));
    mb_recount_nnz(m);
    return m;
}

static bool same(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

/* SystemDS semantics through ops_binary / ops_unary and the kernels. */
static void semantics(void)
{
    BrErr e = {0};
    T_CHECK(ops_binary(OP_INTDIV, -7, 2) == -3, "-7 %%/%% 2");
    T_CHECK(ops_binary(OP_MOD, -7, 2) == -1, "-7 %%%% 2");
    T_CHECK(ops_binary(OP_INTDIV, 7, -2) == -3, "7 %%/%% -2");
    T_CHECK(ops_binary(OP_MOD, 7, -2) == 1, "7 %%%% -2");
    T_CHECK(ops_binary(OP_MOD, -7, -2) == -1, "-7 %%%% -2");
    T_CHECK(ops_binary(OP_MOD, -7.5, 2) == -1.5, "-7.5 %%%% 2");
    T_CHECK(ops_binary(OP_INTDIV, -7.5, 2) == -3, "-7.5 %%/%% 2");
    T_CHECK(isnan(ops_binary(OP_MOD, 5, 0)) && isnan(ops_binary(OP_INTDIV, 5, 0)), "zero divisor NaN");
    T_CHECK(ops_unary(OP_ROUND, 2.5) == 3 && ops_unary(OP_ROUND, -2.5) == -2 &&
            ops_unary(OP_ROUND, -0.5) == 0 && ops_unary(OP_ROUND, 0.5) == 1, "round halves up");
    T_CHECK(isnan(ops_binary(OP_MIN, NAN, 1)) && isnan(ops_binary(OP_MAX, 1, NAN)), "min/max NaN");
    /* scalar_modneg through the matrix kernels */
    double xv[] = {-7, 7, -7, 7}, yv[] = {2, 2, -2, -2};
    MB *X = mat(1, 4, xv), *Y = mat(1, 4, yv);
    MB *Q = k_binary(OP_INTDIV, X, Y, &e), *R = k_binary(OP_MOD, X, Y, &e);
    double qv[] = {-3, 3, 3, -3}, rv[] = {-1, 1, -1, 1};
    MB *Qw = mat(1, 4, qv), *Rw = mat(1, 4, rv);
    T_MB_EQ(Q, Qw, 0, "matrix %%/%%");
    T_MB_EQ(R, Rw, 0, "matrix %%%%");
    mb_release(X); mb_release(Y); mb_release(Q); mb_release(R); mb_release(Qw); mb_release(Rw);
    /* zero divisors in matrices, sparse and dense */
    double zv[] = {0, 3, -4, 0};
    MB *Z = mat(2, 2, zv), *Zs = mb_to_sparse(Z, &e);
    MB *M1 = k_binary_sm(OP_MOD, 5, Zs, &e), *M2 = k_binary_ms(OP_INTDIV, Zs, 0, &e);
    T_CHECK(M1 && isnan(mb_get(M1, 0, 0)) && mb_get(M1, 0, 1) == 2 && mb_get(M1, 1, 0) == 1,
            "5 %%%% Z");
    T_CHECK(M2 && isnan(mb_get(M2, 0, 0)) && isnan(mb_get(M2, 1, 0)), "Z %%/%% 0");
    mb_release(M1); mb_release(M2);
    /* round halves up in a matrix */
    double hv[] = {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5};
    MB *H = mat(1, 6, hv), *HR = k_unary(OP_ROUND, H, &e);
    double hw[] = {-2, -1, 0, 1, 2, 3};
    MB *HW = mat(1, 6, hw);
    T_MB_EQ(HR, HW, 0, "round matrix");
    mb_release(H); mb_release(HR); mb_release(HW);
    /* round and sqrt over long rows (the leaves' vector loops: selects
     * for round, vsqrtpd), cell by cell against the branchy definition
     * (round: Java's Math.round to a long; sqrt: libm's) with edge cells
     * at every position of the vectors */
    {
        static const double edge[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 0.49999999999999994, -0.49999999999999994,
                                      0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 4503599627370495.5, -4503599627370495.5,
                                      1e300, -1e300, 9.3e18, -9.3e18, 9223372036854775807.0, 3.7, -3.7, 1e-310, -4};
        const int ne = (int)(sizeof edge / sizeof *edge);
        const int64_t n = 1003;
        MB *E = mb_dense(1, n, &e);
        for (int64_t k = 0; k < n; k++) E->d[k] = edge[(k * 7) % ne] * (k % 11 == 10 ? 0.75 : 1);
        mb_recount_nnz(E);
        MB *ER = k_unary(OP_ROUND, E, &e), *ES = k_unary(OP_SQRT, E, &e);
        bool okr = ER != NULL, oks = ES != NULL;
        for (int64_t k = 0; k < n && okr && oks; k++) {
            const double x = E->d[k];
            double r = floor(x);
            if (x - r >= 0.5) r += 1;
            if (r != r) r = 0;
            else if (r >= 9223372036854775807.0) r = 9223372036854775807.0;
            else if (r <= -9223372036854775808.0) r = -9223372036854775808.0;
            r += 0.0;
            okr = memcmp(&r, &ER->d[k], sizeof r) == 0;
            const double q = sqrt(x), g = ES->d[k];
            oks = (isnan(q) && isnan(g)) || memcmp(&q, &g, sizeof q) == 0;
            if (!okr || !oks) T_CHECK(0, "cell %lld (%g): round %g want %g, sqrt %g want %g", (long long)k, x, ER->d[k], r, g, q);
        }
        T_CHECK(okr && oks, "round and sqrt over 1003 cells: the branchy definitions' bits");
        mb_release(E); mb_release(ER); mb_release(ES);
    }
    /* ew_nan_inf: X / 0, then + 1, * 0, ==, >, is.nan */
    double xn[] = {1, 0, -1, 2};
    MB *XN = mat(2, 2, xn), *D = k_binary_ms(OP_DIV, XN, 0, &e);
    T_CHECK(D && mb_get(D, 0, 0) == INFINITY && isnan(mb_get(D, 0, 1)) &&
            mb_get(D, 1, 0) == -INFINITY, "X / 0");
    MB *G = k_binary_ms(OP_MULT, D, 0, &e);
    T_CHECK(G && isnan(mb_get(G, 0, 0)) && isnan(mb_get(G, 0, 1)) && isnan(mb_get(G, 1, 1)),
            "Inf * 0 = NaN");
    MB *EQ = k_binary(OP_EQ, D, D, &e);
    T_CHECK(EQ && mb_get(EQ, 0, 1) == 0 && mb_get(EQ, 0, 0) == 1, "NaN == NaN false");
    MB *IN = k_unary(OP_ISNAN, D, &e);
    T_CHECK(IN && IN->nnz == 1 && mb_get(IN, 0, 1) == 1, "is.nan");
    MB *MN = k_binary(OP_MIN, D, XN, &e);
    T_CHECK(MN && isnan(mb_get(MN, 0, 1)) && mb_get(MN, 0, 0) == 1, "min with NaN");
    MB *Ds = mb_to_sparse(D, &e);
    MB *MX = k_binary_ms(OP_MAX, Ds, 0, &e);
    T_CHECK(MX && isnan(mb_get(MX, 0, 1)) && mb_get(MX, 1, 0) == 0 && valid(MX), "max(sparse NaN, 0)");
    /* sparse * dense Inf: IEEE in every format (issue 23): an implicit zero
     * of the sparse side times Inf is NaN, as the dense kernels give */
    MB *Zm = k_binary(OP_MULT, Zs, D, &e);
    MB *Zd = mb_to_dense(Zs, &e), *Zdm = Zd ? k_binary(OP_MULT, Zd, D, &e) : NULL;
    T_CHECK(Zm && Zdm && isnan(mb_get(Zm, 0, 0)) && mb_get(Zm, 1, 0) == -4 * -INFINITY && valid(Zm), "sparse * Inf");
    T_CHECK(Zm && Zdm && mb_equal(Zm, Zdm, 0), "sparse * Inf as dense * Inf");
    mb_release(Zd); mb_release(Zdm);
    mb_release(Zm); mb_release(Ds); mb_release(MX);
    mb_release(XN); mb_release(D); mb_release(G); mb_release(EQ); mb_release(IN); mb_release(MN);
    mb_release(Z); mb_release(Zs);
    /* ew_vector_bcast: X + r, X < cv / 3 */
    double sq[12];
    for (int k = 0; k < 12; k++) sq[k] = k + 1;
    double rvv[] = {1, 2, 4, 8}, cvv[] = {10, 20, 30};
    MB *X3 = mat(3, 4, sq), *r = mat(1, 4, rvv), *cv = mat(3, 1, cvv);
    MB *A = k_binary(OP_PLUS, X3, r, &e);
    double aw[] = {2, 4, 7, 12, 6, 8, 11, 16, 10, 12, 15, 20};
    MB *AW = mat(3, 4, aw);
    T_MB_EQ(A, AW, 0, "X + r");
    MB *c3 = k_binary_ms(OP_DIV, cv, 3, &e), *L = k_binary(OP_LT, X3, c3, &e);
    double lw[] = {1, 1, 1, 0, 1, 1, 0, 0, 1, 0, 0, 0};
    MB *LW = mat(3, 4, lw);
    T_MB_EQ(L, LW, 0, "X < cv/3");
    MB *O = k_binary(OP_MULT, cv, r, &e);
    T_CHECK(O && O->rows == 3 && O->cols == 4 && mb_get(O, 2, 3) == 240, "outer");
    mb_release(X3); mb_release(r); mb_release(cv); mb_release(A); mb_release(AW);
    mb_release(c3); mb_release(L); mb_release(LW); mb_release(O);
    T_CHECK(same(ops_binary(OP_POW, 0, 0), 1), "0^0");
}

/* Dense unary functions weigh their cells by ops.def's cost (k_unary):
 * tanh over 256 x 100 (25,600 cells, an autoencoder batch) forks a team
 * of two, abs over the same cells does not; the values equal one
 * thread's, bit for bit, and ops_unary's. */
static void unary_weight(void)
{
    BrErr e = {0};
    MB *a = rnd(256, 100, 1.0, false);
    static const OpCode ops[] = {OP_TANH, OP_ABS, OP_EXP};
    for (int k = 0; k < 3; k++) {
        MB *r[2];
        int64_t t0, k0, t1, k1;
        br_par_pin(0);
        br_set_threads(1);
        r[0] = k_unary(ops[k], a, &e);
        br_set_threads(2);
        br_par_counts(&t0, &k0);
        r[1] = k_unary(ops[k], a, &e);
        br_par_counts(&t1, &k1);
        T_CHECK(r[0] && r[1], "unary weight %d: %s", k, e.msg);
        T_CHECK(ops[k] == OP_ABS ? t1 == t0 : t1 > t0, "unary weight %s: teams %lld -> %lld", op_info[ops[k]].name,
                (long long)t0, (long long)t1);
        if (r[0] && r[1]) {
            T_MB_EQ(r[1], r[0], 0, "unary weight %s: threads", op_info[ops[k]].name);
            bool same_ref = true;
            for (int64_t c = 0; c < a->rows * a->cols; c++) same_ref &= same(r[1]->d[c], ops_unary(ops[k], a->d[c]));
            T_CHECK(same_ref, "unary weight %s: equals ops_unary", op_info[ops[k]].name);
        }
        mb_release(r[0]); mb_release(r[1]);
    }
    br_par_pin(-1);
    mb_release(a);
}

/* br_par on a crowded machine (pinned): a vector operation or sum over
 * 10^5 cells keeps to one thread; over 2^20 cells and on an uncrowded
 * machine it forks its team; the results do not change (bit for bit),
 * and the counts -stats prints follow. Shapes: a column vector, a row
 * vector, a matrix; dense and with 20% non-zeros. */
static void crowded_teams(void)
{
    BrErr e = {0};
    static const int64_t shapes[][2] = {{100000, 1}, {1, 100000}, {1000, 100}, {1100000, 1}, {1200, 1000}};
    br_set_threads(2);
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (int sp = 0; sp < 2; sp++) {
            int64_t M = shapes[s][0], N = shapes[s][1];
            bool big = M * N >= BR_PAR_CROWDED_MIN;
            MB *a = rnd(M, N, sp ? 0.2 : 1.0, false), *b = rnd(M, N, sp ? 0.2 : 1.0, false);
            MB *r[2];
            double sum[2];
            for (int pin = 0; pin < 2; pin++) {
                br_par_pin(pin);
                int64_t t0, k0, t1, k1;
                br_par_counts(&t0, &k0);
                r[pin] = k_binary(OP_MULT, a, b, &e);
                T_CHECK(r[pin] && k_agg_full(OP_SUM, r[pin], &sum[pin], &e) == 0, "crowded %lldx%lld: %s",
                        (long long)M, (long long)N, e.msg);
                br_par_counts(&t1, &k1);
                /* the sparser inputs may take paths below BR_PAR_MIN */
                bool ok;
                if (pin == 0) ok = k1 == k0 && (sp || t1 > t0);
                else if (!big) ok = t1 == t0 && (sp || k1 > k0);
                else ok = sp || t1 > t0;
                T_CHECK(ok,
                        "crowded=%d %lldx%lld sp %d: teams %lld -> %lld, kept %lld -> %lld", pin, (long long)M,
                        (long long)N, sp, (long long)t0, (long long)t1, (long long)k0, (long long)k1);
            }
            T_MB_EQ(r[1], r[0], 0, "crowded %lldx%lld sp %d: product", (long long)M, (long long)N, sp);
            T_CHECK(memcmp(&sum[0], &sum[1], sizeof(double)) == 0, "crowded %lldx%lld sp %d: sum %.17g vs %.17g",
                    (long long)M, (long long)N, sp, sum[0], sum[1]);
            mb_release(r[0]); mb_release(r[1]); mb_release(a); mb_release(b);
        }
    br_set_threads(1);
    int64_t t0, k0, t1, k1;
    br_par_counts(&t0, &k0);
    MB *a = rnd(100000, 1, 1.0, false), *r = k_binary(OP_PLUS, a, a, &e);
    br_par_counts(&t1, &k1);
    T_CHECK(t1 == t0 && k1 == k0, "one thread: no team counted");
    mb_release(r); mb_release(a);
    br_par_pin(-1);
}

int main(void)
{
    op_lists();
    semantics();
    sweep_binary();
    sweep_broadcast();
    sweep_scalar();
    sweep_unary();
    sweep_ifelse();
    fin_flags();
    crowded_teams();
    unary_weight();
    br_set_threads(0);
    return t_done("test_ew");
}
