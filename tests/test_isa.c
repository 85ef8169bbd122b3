/* test_isa.c: the SIMD levels of the leaf kernels (kernels/leaf.h) and
 * their choice at run time:
 *  - BRAID_ISA caps the level k_isa() picks, k_isa_set caps it at run
 *    time (never above what the CPU runs);
 *  - every entry of every leaf table at each SIMD level the CPU runs
 *    against the generic copy (the portable fallback), over swept lengths,
 *    offsets, special values (signed zeros, NaN, infinities, subnormals,
 *    overflow) and modes: the same bits, except mmchain's dot products
 *    and the probe loops (reductions in vector lanes: within rounding);
 *    the compressed products' gathers and scatters also against their
 *    plain loops;
 *    AVX-512's low-rank product against fma in order (the same bits);
 *  - the kernels behind the tables (k_unary, k_binary, k_ifelse, k_agg,
 *    k_cum, t(), %*%, mmchain) with the level forced to generic and to the
 *    CPU's: the same results over swept shapes (0 rows, 1x1, vectors,
 *    tall, wide), sparsity, formats and 1 and 2 threads.
 * On a CPU (or target) with no SIMD level the comparisons are generic
 * against itself. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/agg.h"
#include "kernels/ew.h"
#include "kernels/leaf.h"
#include "kernels/mm.h"
#include "kernels/reorg.h"
#include "kernels/spoof.h"
#include "tests/t.h"
#include "tests/t_dml.h"

/* ---- helpers ---- */

/* The same bits, or both NaN (a NaN's payload is not semantics). */
static bool same(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b));
}

/* Index of the first difference of a and b (bits, NaN alike; rtol > 0:
 * relative to max(|a|, |b|, 1)), or -1. */
static int64_t first_diff(const double *a, const double *b, int64_t n, double rtol)
{
    for (int64_t k = 0; k < n; k++) {
        if (same(a[k], b[k])) continue;
        if (rtol > 0 && !isnan(a[k]) && !isnan(b[k]) &&
            fabs(a[k] - b[k]) <= rtol * fmax(fmax(fabs(a[k]), fabs(b[k])), 1.0))
            continue;
        return k;
    }
    return -1;
}

static const double special[] = {0.0, -0.0, 1, -1, 0.5, -2.5, 3, 7, 20, -20, 0.7, 1e-8, 709.5, 710, -745.2,
                                 -746, 1e-310, -1e-310, 5e-324, 1e-300, 1e300, -1e300, DBL_MAX, -DBL_MAX,
                                 INFINITY, -INFINITY, NAN};
#define NSPECIAL ((int)(sizeof special / sizeof *special))

/* n values: specials at every third cell, the others random with
 * magnitudes from 1e-3 to 1e3 and both signs (zeros among them). */
static void values(double *x, int64_t n)
{
    for (int64_t k = 0; k < n; k++) {
        if (k % 3 == 0) { x[k] = special[(k / 3 + t_rng % 7) % NSPECIAL]; continue; }
        double u = t_urand();
        x[k] = u < 0.1 ? 0 : (t_urand() < 0.5 ? -1 : 1) * pow(10, 6 * t_urand() - 3);
    }
}

/* Random values in [lo, hi). */
static void uniform(double *x, int64_t n, double lo, double hi)
{
    for (int64_t k = 0; k < n; k++) x[k] = lo + (hi - lo) * t_urand();
}

static const int64_t lens[] = {0, 1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 100, 127, 128, 129, 257, 1000};
#define NLENS ((int)(sizeof lens / sizeof *lens))
#define MAXLEN 1024

/* spacc_value adds the lanes left at (+0, +0) only until the sum stops
 * changing: the bits must be those of adding every lane in order. Rows
 * of 0..KL values (specials among them: -0, infinities, NaN, huge and
 * tiny magnitudes) accumulated like a Cell row aggregate, some twice,
 * and arbitrary lane states. */
static void test_spacc_value(void)
{
    static double v[2 * SPOOF_KL];
    for (int rep = 0; rep < 400; rep++)
        for (int n = 0; n <= SPOOF_KL; n++) {
            int agg = rep % 3 == 0 ? SPA_MEAN : SPA_SUM;
            values(v, 2 * n);
            SpAcc a;
            spacc_init(&a, agg);
            if (rep % 4 == 3) {   /* any lane state, e.g. corrections above half an ulp of the sum */
                for (int l = 0; l < n; l++) { a.s[l] = v[l]; a.c[l] = v[n + l]; }
                if (n >= 2) { a.s[0] = 1.0; a.s[1] = 9007199254740994.0; a.c[0] = a.c[1] = 0; }
            } else {
                spacc_add(&a, agg, v, n);
                if (rep % 2) spacc_add(&a, agg, v + n, n);
            }
            double s = 0, c = 0;
            for (int l = 0; l < SPOOF_KL; l++)
                for (int h = 0; h < 2; h++) {
                    double x = h ? a.c[l] : a.s[l], y = x + c, t = s + y;
                    c = fabs(t) <= DBL_MAX ? y - (t - s) : 0;
                    s = t;
                }
            double want = agg == SPA_MEAN ? (s + c) / 3.0 : s + c, got = spacc_value(&a, agg, 3.0);
            T_CHECK(same(want, got), "spacc_value n=%d rep %d: %.17g, full loop %.17g", n, rep, got, want);
        }
}

/* ---- the level itself ---- */

static void test_level(bool env_generic)
{
    T_CHECK(!env_generic || k_isa() == K_ISA_GENERIC, "BRAID_ISA=generic: level %s", k_isa_name(k_isa()));
    KIsa cpu = k_isa_cpu();
    T_CHECK(k_isa_set(K_ISA_GENERIC) == K_ISA_GENERIC && k_isa() == K_ISA_GENERIC, "k_isa_set(generic)");
    T_CHECK(k_isa_set(K_ISA_AVX512) == cpu && k_isa() == cpu, "k_isa_set caps at the CPU's level %s",
            k_isa_name(cpu));
    T_CHECK(!strcmp(k_isa_name(K_ISA_GENERIC), "generic") && !strcmp(k_isa_name(K_ISA_AVX2), "avx2") &&
            !strcmp(k_isa_name(K_ISA_AVX512), "avx512"), "k_isa_name");
#if !defined(__x86_64__)
    T_CHECK(cpu == K_ISA_GENERIC && k_leaves(K_ISA_AVX512) == k_leaves(K_ISA_GENERIC),
            "no SIMD level off x86-64");
#endif
    for (int l = 0; l < K_ISA__COUNT; l++) {
        const KLeaves *t = k_leaves((KIsa)l);
        T_CHECK(t->ew && t->agg && t->mm && t->mmchain && t->reorg && t->spoof && t->probe,
                "tables of level %s", k_isa_name((KIsa)l));
    }
    T_CHECK(k_leaves(K_ISA_GENERIC)->mm->lowk_rows == NULL, "generic copy without AVX-512 entries");
}

/* ---- ew_leaf ---- */

static void test_ew_leaf(const KEwLeaf *G, const KEwLeaf *L, const char *lv)
{
    static double x[MAXLEN + 1], y[MAXLEN + 1], og[MAXLEN + 1], ol[MAXLEN + 1];
    static int32_t ci[MAXLEN];
    for (int li = 0; li < NLENS; li++)
        for (int off = 0; off < 2; off++) {
            int64_t n = lens[li];
            double *xo = x + off, *yo = y + off;
            values(xo, n);
            values(yo, n);
            for (int op = 0; op < OP__COUNT; op++) {
                if (op_info[op].kind == OK_UNARY) {
                    G->unary((OpCode)op, xo, og, n);
                    L->unary((OpCode)op, xo, ol, n);
                    int64_t d = first_diff(og, ol, n, 0);
                    T_CHECK(d < 0, "%s unary %s n=%lld: cell %lld: %.17g vs %.17g (x %.17g)", lv, op_info[op].name,
                            (long long)n, (long long)d, og[d], ol[d], xo[d]);
                }
                if (op_info[op].kind != OK_BINARY) continue;
                double s = special[(li + op) % NSPECIAL];
                G->bin_vv((OpCode)op, xo, yo, og, n);
                L->bin_vv((OpCode)op, xo, yo, ol, n);
                int64_t d = first_diff(og, ol, n, 0);
                T_CHECK(d < 0, "%s %s vv n=%lld: cell %lld", lv, op_info[op].name, (long long)n, (long long)d);
                G->bin_vs((OpCode)op, xo, s, og, n);
                L->bin_vs((OpCode)op, xo, s, ol, n);
                d = first_diff(og, ol, n, 0);
                T_CHECK(d < 0, "%s %s vs (s %g) n=%lld: cell %lld", lv, op_info[op].name, s, (long long)n,
                        (long long)d);
                G->bin_sv((OpCode)op, s, yo, og, n);
                L->bin_sv((OpCode)op, s, yo, ol, n);
                d = first_diff(og, ol, n, 0);
                T_CHECK(d < 0, "%s %s sv (s %g) n=%lld: cell %lld", lv, op_info[op].name, s, (long long)n,
                        (long long)d);
                /* a column vector over rows of nc cells: the level's
                 * block leaves against the generic copy's row-by-row
                 * scalar loops */
                for (int64_t nc = 1; nc <= 7 && nc <= n; nc += 2) {
                    int64_t rows = n / nc;
                    for (int64_t i = 0; i < rows; i++) G->bin_vs((OpCode)op, xo + i * nc, yo[i], og + i * nc, nc);
                    L->bin_vc((OpCode)op, xo, yo, ol, rows, nc);
                    d = first_diff(og, ol, rows * nc, 0);
                    T_CHECK(d < 0, "%s %s vc n=%lld x %lld: cell %lld", lv, op_info[op].name, (long long)rows,
                            (long long)nc, (long long)d);
                    for (int64_t i = 0; i < rows; i++) G->bin_sv((OpCode)op, yo[i], xo + i * nc, og + i * nc, nc);
                    L->bin_cv((OpCode)op, yo, xo, ol, rows, nc);
                    d = first_diff(og, ol, rows * nc, 0);
                    T_CHECK(d < 0, "%s %s cv n=%lld x %lld: cell %lld", lv, op_info[op].name, (long long)rows,
                            (long long)nc, (long long)d);
                }
            }
            G->select(xo, yo, x, og, n);
            L->select(xo, yo, x, ol, n);
            T_CHECK(first_diff(og, ol, n, 0) < 0, "%s select n=%lld", lv, (long long)n);
            G->fill(og, -0.0, n);
            L->fill(ol, -0.0, n);
            T_CHECK(first_diff(og, ol, n, 0) < 0 && G->nz_count(xo, n) == L->nz_count(xo, n),
                    "%s fill, nz_count n=%lld", lv, (long long)n);
            /* nz_count_fin: the count and whether a value is NaN or
             * infinite, the values as made, or one in the last cell */
            for (int put = 0; put < 3; put++) {
                memcpy(og, xo, (size_t)n * sizeof(double));
                if (n && put) og[n - 1] = put == 1 ? NAN : -INFINITY;
                int64_t nz = 0;
                int want = 0, bg = 0, bl = 0;
                for (int64_t k = 0; k < n; k++) { nz += og[k] != 0; want |= !isfinite(og[k]); }
                T_CHECK(G->nz_count_fin(og, n, &bg) == nz && L->nz_count_fin(og, n, &bl) == nz && bg == want &&
                        bl == want, "%s nz_count_fin n=%lld put %d", lv, (long long)n, put);
            }
            /* in place, and scattered */
            memcpy(og, xo, (size_t)n * sizeof(double));
            memcpy(ol, xo, (size_t)n * sizeof(double));
            G->unary(OP_SIGMOID, og, og, n);
            L->unary(OP_SIGMOID, ol, ol, n);
            for (int64_t k = 0; k < n; k++) ci[k] = (int32_t)((k * 7) % (n + 1));
            G->unary_scatter(OP_EXP, yo, ci, og, n);
            L->unary_scatter(OP_EXP, yo, ci, ol, n);
            T_CHECK(first_diff(og, ol, n, 0) < 0, "%s unary in place, scatter n=%lld", lv, (long long)n);
        }
}

/* ---- agg_leaf ---- */

/* x[0..n) of one of four kinds: random, with an infinity, with NaN, huge
 * (the unchecked Kahan steps overflow and are redone). */
static void agg_values(double *x, int64_t n, int kind)
{
    uniform(x, n, -100, 100);
    if (n == 0) return;
    if (kind == 1) x[n / 2] = INFINITY;
    if (kind == 2) x[n - 1] = NAN;
    if (kind == 3)
        for (int64_t k = 0; k < n; k += 3) x[k] = 1e308;
}

static void test_agg_arrays(const KAggLeaf *G, const KAggLeaf *L, const char *lv)
{
    static double x[MAXLEN];
    static const OpCode mm[] = {OP_AMIN, OP_AMAX, OP_PROD};
    for (int li = 0; li < NLENS; li++)
        for (int kind = 0; kind < 4; kind++) {
            int64_t n = lens[li];
            agg_values(x, n, kind);
            for (int mode = KM_X; mode <= KM_DEV2; mode++) {
                KKahan a = G->ksum(x, n, mode, 1.5), b = L->ksum(x, n, mode, 1.5);
                T_CHECK(same(a.s, b.s) && same(a.c, b.c), "%s ksum mode %d kind %d n=%lld: %.17g+%.17g vs %.17g+%.17g",
                        lv, mode, kind, (long long)n, a.s, a.c, b.s, b.c);
            }
            for (int o = 0; o < 3; o++)
                T_CHECK(same(G->minmaxprod(mm[o], x, n), L->minmaxprod(mm[o], x, n)), "%s %s kind %d n=%lld", lv,
                        op_info[mm[o]].name, kind, (long long)n);
        }
}

/* Column tasks, narrow rows and cumulative rows of an M x N block. */
/* sp_rows_sum against ksum row by row (the same bits): rows of 0 to 40
 * values (16 the most it takes), groups and a tail, ranges ending at
 * the last stored value, special values (a row whose unchecked sum is
 * not finite is redone with the checked chain), both modes. */
static void test_agg_sp_rows(const KAggLeaf *G, const KAggLeaf *L, const char *lv)
{
    const int64_t m = 203;
    int64_t *rp = malloc((size_t)(m + 1) * sizeof *rp), *longs = malloc((size_t)m * sizeof *longs);
    rp[0] = 0;
    for (int64_t i = 0; i < m; i++) rp[i + 1] = rp[i] + (i % 11 == 4 ? 0 : (int64_t)(t_urand() * 41));
    int64_t nz = rp[m];
    double *v = malloc((size_t)BR_MAX(nz, 1) * sizeof *v), *res = malloc((size_t)m * sizeof *res);
    for (int sp = 0; sp < 2; sp++) {
        if (sp) values(v, nz); else uniform(v, nz, -1e3, 1e3);
        for (int mode = KM_X; mode <= KM_SQ; mode++)
            for (int lvl = 0; lvl < 2; lvl++) {
                const KAggLeaf *A = lvl ? L : G;
                static const int64_t cuts[][2] = {{0, 203}, {5, 37}, {170, 203}, {0, 0}};
                for (int c = 0; c < 4; c++) {
                    int64_t r0 = cuts[c][0], r1 = cuts[c][1];
                    for (int64_t i = 0; i < m; i++) res[i] = -7;
                    int64_t nl = A->sp_rows_sum(rp, v, nz, r0, r1, mode, res, longs), seen = 0;
                    for (int64_t i = r0; i < r1; i++) {
                        int64_t n = rp[i + 1] - rp[i];
                        if (n > 16) {
                            bool listed = false;
                            for (int64_t q = 0; q < nl; q++) listed |= longs[q] == i;
                            T_CHECK(listed && res[i] == -7, "%s sp_rows_sum: row %lld of %lld values listed", lv,
                                    (long long)i, (long long)n);
                            seen++;
                            continue;
                        }
                        KKahan kk = G->ksum(v + rp[i], n, mode, 0);
                        double d = kk.s + kk.c;
                        T_CHECK(same(res[i], d), "%s sp_rows_sum %s mode %d row %lld (%lld values): %.17g vs %.17g",
                                lv, sp ? "specials" : "uniform", mode, (long long)i, (long long)n, res[i], d);
                    }
                    T_CHECK(nl == seen, "%s sp_rows_sum: %lld long rows, %lld listed", lv, (long long)seen, (long long)nl);
                    T_CHECK((r0 == 0 || res[r0 - 1] == -7) && (r1 == m || res[r1] == -7), "%s sp_rows_sum: rows outside",
                            lv);
                }
            }
    }
    free(rp); free(longs); free(v); free(res);
}

static void test_agg_blocks(const KAggLeaf *G, const KAggLeaf *L, const char *lv)
{
    static const int64_t ns[] = {1, 2, 3, 4, 5, 8, 13, 31, 64, 100, 127};
    static const OpCode rops[] = {OP_AMIN, OP_AMAX, OP_IDXMIN, OP_IDXMAX};
    static const OpCode cops[] = {OP_CUMSUM, OP_CUMPROD, OP_CUMMIN, OP_CUMMAX};
    const int64_t M = 75;
    for (int ni = 0; ni < (int)(sizeof ns / sizeof *ns); ni++)
        for (int kind = 0; kind < 4; kind++) {
            int64_t N = ns[ni];
            double *x = malloc((size_t)(M * N) * sizeof(double)), *m = malloc((size_t)N * sizeof(double));
            double *buf = malloc((size_t)(12 * M * N + 8 * M) * sizeof(double));
            double *pg = buf, *cg = pg + M * N, *pl = cg + M * N, *cl = pl + M * N, *scr = cl + M * N;
            agg_values(x, M * N, kind);
            if (kind == 0) x[(M / 2) * N] = x[(M / 2) * N + N - 1];   /* a tie */
            uniform(m, N, -1, 1);
            for (int cm = CM_SUM; cm <= CM_PROD; cm++)
                for (int64_t Lr = 1; Lr <= 3; Lr += 2) {
                    int64_t w = Lr > 1 ? N : BR_MAX(1, N - 1), j0 = N - w;
                    G->col_task(x, N, 1, M, j0, w, Lr, cm, m, pg, cg, scr, scr + Lr * w, scr + 2 * Lr * w);
                    L->col_task(x, N, 1, M, j0, w, Lr, cm, m, pl, cl, scr, scr + Lr * w, scr + 2 * Lr * w);
                    T_CHECK(first_diff(pg, pl, w, 0) < 0 && first_diff(cg, cl, w, 0) < 0,
                            "%s col_task cm %d L %lld kind %d N=%lld", lv, cm, (long long)Lr, kind, (long long)N);
                }
            for (int mode = KM_X; mode <= KM_SQ && N < 4 * K_AGG_LANES; mode++) {
                G->rows_sum(x, N, 2, M, mode, pg);
                L->rows_sum(x, N, 2, M, mode, pl);
                T_CHECK(first_diff(pg + 2, pl + 2, M - 2, 0) < 0, "%s rows_sum mode %d kind %d N=%lld", lv, mode,
                        kind, (long long)N);
            }
            for (int o = 0; o < 4; o++) {
                G->rows_minmax(rops[o], x, N, 0, M, pg);
                L->rows_minmax(rops[o], x, N, 0, M, pl);
                T_CHECK(first_diff(pg, pl, M, 0) < 0, "%s %s rows kind %d N=%lld", lv, op_info[rops[o]].name, kind,
                        (long long)N);
            }
            for (int o = 0; o < 4; o++) {
                double *sg = scr, *sl = scr + N, *kg = scr + 2 * N, *kl = scr + 3 * N;
                for (int64_t j = 0; j < N; j++) { sg[j] = sl[j] = o == 1 ? 1 : 0; kg[j] = kl[j] = 0; }
                for (int64_t i = 0; i < M; i++) {
                    G->cum_row(cops[o], x + i * N, pg + i * N, sg, kg, N);
                    L->cum_row(cops[o], x + i * N, pl + i * N, sl, kl, N);
                }
                T_CHECK(first_diff(pg, pl, M * N, 0) < 0, "%s %s kind %d N=%lld", lv, op_info[cops[o]].name, kind,
                        (long long)N);
            }
            free(x); free(m); free(buf);
        }
}

/* ---- mm_leaf, mmchain_leaf ---- */

static void test_mm_leaf(const KMmLeaf *G, const KMmLeaf *L, const char *lv)
{
    static const int64_t ks[] = {1, 5, 32, 128, 1001};
    const int64_t m = 13;
    for (int ki = 0; ki < 5; ki++)
        for (int64_t n = 1; n <= 16; n++) {
            int64_t k = ks[ki], w = (n + 3) / 4 * 4, nzg, nzl;
            double *A = malloc((size_t)(m * k) * sizeof(double)), *cg = malloc((size_t)(m * n) * sizeof(double));
            double *cl = malloc((size_t)(m * n) * sizeof(double));
            double *bp = br_alloc_aligned((size_t)(k * w + 4) * sizeof(double));
            values(A, m * k);
            memset(bp, 0, (size_t)(k * w + 4) * sizeof(double));
            for (int64_t l = 0; l < k; l++) uniform(bp + l * w, n, -2, 2);
            int badg = 0, badl = 0;
            nzg = G->skinny_rows(A, bp, cg, k, n, n, 1, m, &badg);
            nzl = L->skinny_rows(A, bp, cl, k, n, n, 1, m, &badl);
            T_CHECK(nzg == nzl && first_diff(cg + n, cl + n, (m - 1) * n, 0) < 0, "%s skinny k=%lld n=%lld", lv,
                    (long long)k, (long long)n);
            /* the finiteness flag: as the values written (A holds the
             * special values: some rows are NaN or infinite); then NaN
             * and an infinity in the last row's last l, after finite
             * values everywhere */
            int want = 0;
            for (int64_t x = n; x < m * n; x++) want |= !isfinite(cg[x]);
            T_CHECK(badg == want && badl == want, "%s skinny flag %d %d, want %d k=%lld n=%lld", lv, badg, badl, want,
                    (long long)k, (long long)n);
            uniform(A, m * k, -1, 1);
            badg = badl = 0;
            G->skinny_rows(A, bp, cg, k, n, n, 1, m, &badg);
            L->skinny_rows(A, bp, cl, k, n, n, 1, m, &badl);
            T_CHECK(!badg && !badl, "%s skinny finite flagged k=%lld n=%lld", lv, (long long)k, (long long)n);
            for (int nf = 0; nf < 2; nf++) {
                A[m * k - 1] = nf ? INFINITY : NAN;
                badg = badl = 0;
                G->skinny_rows(A, bp, cg, k, n, n, 1, m, &badg);
                L->skinny_rows(A, bp, cl, k, n, n, 1, m, &badl);
                T_CHECK(badg && badl, "%s skinny %s not flagged k=%lld n=%lld", lv, nf ? "Inf" : "NaN", (long long)k,
                        (long long)n);
            }
            free(A); free(cg); free(cl); br_free_aligned(bp);
        }
    if (!L->lowk_rows) return;
    /* low-rank: each cell is fma(a_il, b_lj, .) over l in order */
    static const int64_t ns[] = {1, 7, 8, 31, 32, 33, 70};
    for (int ki = 0; ki < 3; ki++)
        for (int ni = 0; ni < 7; ni++) {
            int64_t k = ks[ki], n = ns[ni], mr = 11;
            double *A = malloc((size_t)(mr * k) * sizeof(double)), *B = malloc((size_t)(k * n) * sizeof(double));
            double *c = malloc((size_t)(mr * n) * sizeof(double)), *r = malloc((size_t)(mr * n) * sizeof(double));
            uniform(A, mr * k, -1, 1);
            uniform(B, k * n, -1, 1);
            int bad = 0;
            int64_t nz = L->lowk_rows(A, B, c, k, n, 0, mr, &bad), want = 0;
            for (int64_t i = 0; i < mr; i++)
                for (int64_t j = 0; j < n; j++) {
                    double s = 0;
                    for (int64_t l = 0; l < k; l++) s = fma(A[i * k + l], B[l * n + j], s);
                    r[i * n + j] = s;
                    want += s != 0;
                }
            T_CHECK(nz == want && first_diff(c, r, mr * n, 0) < 0 && !bad, "%s lowk k=%lld n=%lld (flag %d)", lv,
                    (long long)k, (long long)n, bad);
            /* NaN, then an infinity in the last row's last l (the last
             * tile's masked lanes) */
            for (int nf = 0; nf < 2; nf++) {
                A[mr * k - 1] = nf ? INFINITY : NAN;
                bad = 0;
                L->lowk_rows(A, B, c, k, n, 0, mr, &bad);
                T_CHECK(bad, "%s lowk %s not flagged k=%lld n=%lld", lv, nf ? "Inf" : "NaN", (long long)k, (long long)n);
            }
            free(A); free(B); free(c); free(r);
        }
}

static void test_mmchain_leaf(const KMmchainLeaf *G, const KMmchainLeaf *L, const char *lv)
{
    static const int64_t ns[] = {1, 5, 8, 9, 17, 100};
    const int64_t m = 45;
    for (int ni = 0; ni < 6; ni++)
        for (int64_t c = 1; c <= 3; c += 2)
            for (int wk = 0; wk < 3; wk++)
                for (int sp = 0; sp < 2; sp++) {
                    int64_t n = ns[ni];
                    MB *x = t_gen(m, n, sp ? 0.3 : 1, -1, 1, sp);
                    double *v = malloc((size_t)(n * c) * sizeof(double)), *w = malloc((size_t)(m * c) * sizeof(double));
                    double *ag = calloc((size_t)(n * c), sizeof(double)), *al = calloc((size_t)(n * c), sizeof(double));
                    double q[3];
                    uniform(v, n * c, -1, 1);
                    uniform(w, m * c, 0, 2);
                    KChain ch = {x, v, wk ? w : NULL, c, wk == 2 ? c : 1, 1, m};
                    if (sp) { G->sparse(&ch, 1, m, ag, q); L->sparse(&ch, 1, m, al, q); }
                    else { G->dense(&ch, 1, m, ag); L->dense(&ch, 1, m, al); }
                    int64_t d = first_diff(ag, al, n * c, 1e-12);
                    T_CHECK(d < 0, "%s mmchain %s n=%lld c=%lld w%d: %.17g vs %.17g", lv, sp ? "sparse" : "dense",
                            (long long)n, (long long)c, wk, ag[d], al[d]);
                    mb_release(x); free(v); free(w); free(ag); free(al);
                }
}

/* ---- sp_leaf.c: CSR row loops ---- */

/* Both entries against their definitions (leaf.h) and the generic copy:
 * the same bits, over rows of 0 to 40 values around a mean of 2, 10 or
 * 30 (one chunk, several, empty rows), rows longer than the scratch,
 * ranges that end at the last row (the reads past a row's end stop at
 * the stored values) and special values in X and the vectors. */
static void test_sp_leaf(const KSpLeaf *G, const KSpLeaf *L, const char *lv)
{
    static const int means[] = {2, 10, 30};
    for (int mi = 0; mi < 3; mi++)
        for (int wide = 0; wide < 2; wide++) {
            const int64_t m = 300, n = wide ? 6000 : 50;
            int64_t *rp = malloc((size_t)(m + 1) * sizeof *rp);
            rp[0] = 0;
            for (int64_t i = 0; i < m; i++) {
                int64_t len = (int64_t)(t_urand() * 2 * means[mi]);
                if (wide && i == 7) len = K_SP_SCRATCH + 100;   /* longer than tmv_rows' scratch */
                if (i % 17 == 3) len = 0;
                rp[i + 1] = rp[i] + BR_MIN(len, n);
            }
            int64_t nz = rp[m];
            int32_t *ci = malloc((size_t)BR_MAX(nz, 1) * sizeof *ci);
            double *v = malloc((size_t)BR_MAX(nz, 1) * sizeof *v), *x = malloc((size_t)n * sizeof *x);
            double *q = malloc((size_t)m * sizeof *q);
            for (int64_t i = 0; i < m; i++) {
                int64_t len = rp[i + 1] - rp[i], c = 0;
                for (int64_t k = 0; k < len; k++) {   /* ascending columns */
                    c += 1 + (int64_t)(t_urand() * (double)((n - c) / (len - k + 1) - 1 > 0 ? (n - c) / (len - k + 1) - 1 : 0));
                    ci[rp[i] + k] = (int32_t)BR_MIN(c - 1, n - 1 - (len - 1 - k));
                    c = ci[rp[i] + k] + 1;
                }
            }
            values(v, nz);
            if (mi == 1) values(x, n); else uniform(x, n, -1, 1);
            if (mi == 2) values(q, m); else uniform(q, m, -2, 2);
            double *yg = malloc((size_t)m * sizeof *yg), *yl = malloc((size_t)m * sizeof *yl);
            double *ag = calloc((size_t)n, sizeof *ag), *al = calloc((size_t)n, sizeof *al), *ad = calloc((size_t)n, sizeof *ad);
            static const int64_t cuts[][2] = {{0, 300}, {0, 1}, {5, 9}, {299, 300}, {250, 300}, {3, 3}};
            for (int c = 0; c < 6; c++) {
                int64_t r0 = cuts[c][0], r1 = cuts[c][1];
                G->mv_rows(rp, ci, v, nz, x, r0, r1, yg);
                L->mv_rows(rp, ci, v, nz, x, r0, r1, yl);
                for (int64_t i = r0; i < r1; i++) {
                    double s[4] = {0, 0, 0, 0};
                    for (int64_t k = 0; k < rp[i + 1] - rp[i]; k++) s[k & 3] += v[rp[i] + k] * x[ci[rp[i] + k]];
                    double d = (s[0] + s[1]) + (s[2] + s[3]);
                    T_CHECK(same(yg[i - r0], d) && same(yl[i - r0], d), "%s sp mv_rows mean %d n %lld row %lld: %.17g %.17g vs %.17g",
                            lv, means[mi], (long long)n, (long long)i, yg[i - r0], yl[i - r0], d);
                }
                memset(ag, 0, (size_t)n * sizeof *ag); memset(al, 0, (size_t)n * sizeof *al); memset(ad, 0, (size_t)n * sizeof *ad);
                G->tmv_rows(rp, ci, v, q + r0, r0, r1, ag);
                L->tmv_rows(rp, ci, v, q + r0, r0, r1, al);
                for (int64_t i = r0; i < r1; i++)
                    for (int64_t p = rp[i]; p < rp[i + 1]; p++) ad[ci[p]] += v[p] * q[i];
                int64_t dg = first_diff(ag, ad, n, 0), dl = first_diff(al, ad, n, 0);
                T_CHECK(dg < 0 && dl < 0, "%s sp tmv_rows mean %d n %lld rows %lld..%lld: column %lld", lv, means[mi],
                        (long long)n, (long long)r0, (long long)r1, (long long)(dg >= 0 ? dg : dl));
                /* tsd_rows: B of 1 to 13 columns (special values), output
                 * rows all, inner and last ones */
                if (wide) continue;
                static const int64_t ws[] = {1, 2, 3, 4, 5, 7, 8, 13};
                static const int64_t outs[][2] = {{0, 50}, {5, 20}, {47, 50}, {20, 20}, {0, 20}, {0, 1}};
                for (int wi = 0; wi < 8; wi++)
                    for (int oi = 0; oi < 6; oi++) {
                        const int64_t w = ws[wi], i0 = outs[oi][0], i1 = outs[oi][1], cells = (i1 - i0) * w;
                        double *b = malloc((size_t)(m * w) * sizeof *b);
                        double *og = calloc((size_t)BR_MAX(cells, 1), sizeof *og), *ol = calloc((size_t)BR_MAX(cells, 1), sizeof *ol);
                        double *od = calloc((size_t)BR_MAX(cells, 1), sizeof *od);
                        if (mi == 2) values(b, m * w); else uniform(b, m * w, -2, 2);
                        G->tsd_rows(rp, ci, v, b, w, r0, r1, i0, i1, og);
                        L->tsd_rows(rp, ci, v, b, w, r0, r1, i0, i1, ol);
                        for (int64_t i = r0; i < r1; i++)
                            for (int64_t p = rp[i]; p < rp[i + 1]; p++)
                                if (ci[p] >= i0 && ci[p] < i1)
                                    for (int64_t j = 0; j < w; j++) od[(ci[p] - i0) * w + j] += v[p] * b[i * w + j];
                        int64_t eg = first_diff(og, od, cells, 0), el = first_diff(ol, od, cells, 0);
                        T_CHECK(eg < 0 && el < 0, "%s sp tsd_rows mean %d w %lld rows %lld..%lld out %lld..%lld: cell %lld",
                                lv, means[mi], (long long)w, (long long)r0, (long long)r1, (long long)i0, (long long)i1,
                                (long long)(eg >= 0 ? eg : el));
                        free(b); free(og); free(ol); free(od);
                    }
                /* sd_rows: B of 2 to K_SP_NARROW columns, every cell of
                 * the range's rows written (the buffer starts as NaN) */
                for (int64_t w = 2; w <= K_SP_NARROW; w++) {
                    const int64_t cells = BR_MAX((r1 - r0) * w, 1);
                    double *b = malloc((size_t)(n * w) * sizeof *b);
                    double *og = malloc((size_t)cells * sizeof *og), *ol = malloc((size_t)cells * sizeof *ol);
                    double *od = calloc((size_t)cells, sizeof *od);
                    if (mi == 2) values(b, n * w); else uniform(b, n * w, -2, 2);
                    for (int64_t c2 = 0; c2 < cells; c2++) og[c2] = ol[c2] = NAN;
                    G->sd_rows(rp, ci, v, b, w, r0, r1, og);
                    L->sd_rows(rp, ci, v, b, w, r0, r1, ol);
                    for (int64_t i = r0; i < r1; i++)
                        for (int64_t j = 0; j < w; j++) {
                            double t = 0;
                            for (int64_t p = rp[i]; p < rp[i + 1]; p++) t += v[p] * b[ci[p] * w + j];
                            od[(i - r0) * w + j] = t;
                        }
                    int64_t eg = first_diff(og, od, (r1 - r0) * w, 0), el = first_diff(ol, od, (r1 - r0) * w, 0);
                    T_CHECK(eg < 0 && el < 0, "%s sp sd_rows mean %d w %lld rows %lld..%lld: cell %lld", lv, means[mi],
                            (long long)w, (long long)r0, (long long)r1, (long long)(eg >= 0 ? eg : el));
                    free(b); free(og); free(ol); free(od);
                }
                /* sd_row: B of 1 to 45 columns (every tile), each row of
                 * the range into a zero row and into one of ones */
                for (int64_t w = 1; w <= 45; w += (w < 18 ? 1 : 9)) {
                    double *b = malloc((size_t)(n * w) * sizeof *b);
                    double *og = malloc((size_t)w * sizeof *og), *ol = malloc((size_t)w * sizeof *ol);
                    double *od = malloc((size_t)w * sizeof *od);
                    if (mi == 2) values(b, n * w); else uniform(b, n * w, -2, 2);
                    for (int64_t i = r0; i < r1; i++)
                        for (int one = 0; one < 2; one++) {
                            for (int64_t j = 0; j < w; j++) og[j] = ol[j] = od[j] = one;
                            const int64_t p0 = rp[i], len = rp[i + 1] - p0;
                            G->sd_row(ci + p0, v + p0, len, b, w, og);
                            L->sd_row(ci + p0, v + p0, len, b, w, ol);
                            for (int64_t j = 0; j < w; j++) {
                                double t = 0;
                                for (int64_t p = p0; p < p0 + len; p++) t += v[p] * b[ci[p] * w + j];
                                od[j] += t;
                            }
                            int64_t eg = first_diff(og, od, w, 0), el = first_diff(ol, od, w, 0);
                            T_CHECK(eg < 0 && el < 0, "%s sp sd_row mean %d w %lld row %lld into %d: column %lld", lv,
                                    means[mi], (long long)w, (long long)i, one, (long long)(eg >= 0 ? eg : el));
                        }
                    free(b); free(og); free(ol); free(od);
                }
            }
            free(rp); free(ci); free(v); free(x); free(q); free(yg); free(yl); free(ag); free(al); free(ad);
        }
}

/* ---- cla_leaf.c: gathers and scatters by code ---- */

/* Every entry against the plain loop of its definition (leaf.h) and
 * against the generic copy: the same bits, over swept lengths, widths
 * 1-17 (past 8: chunks of 8 and a tail), both code widths, tables of 1
 * to 300 tuples and special values (the adds are one per cell, in row
 * order). */
static void test_cla_leaf(const KClaLeaf *G, const KClaLeaf *L, const char *lv)
{
    enum { NMAX = 257, KMAX = 17, DMAX = 300, MF = 5 };
    static double p[MF][DMAX * KMAX], b[NMAX * KMAX], og[NMAX * KMAX], ol[NMAX * KMAX], ref[NMAX * KMAX];
    static double Ag[DMAX * KMAX], Al[DMAX * KMAX], Ar[DMAX * KMAX];
    static uint8_t c1[MF][NMAX];
    static uint16_t c2[NMAX];
    static const int64_t ns[] = {0, 1, 3, 4, 7, 8, 9, 17, 100, 257};
    static const int64_t nds[] = {1, 7, 256, 300};
    for (int ni = 0; ni < 10; ni++)
        for (int64_t k = 1; k <= KMAX; k++)
            for (int di = 0; di < 4; di++) {
                int64_t n = ns[ni], nd = nds[di], bad = 0;
                int wide = nd > 256;
                for (int r = 0; r < MF; r++) {
                    values(p[r], nd * k);
                    for (int64_t i = 0; i < n; i++) c1[r][i] = (uint8_t)(t_urand() * (double)(nd > 256 ? 256 : nd));
                }
                for (int64_t i = 0; i < n; i++) c2[i] = (uint16_t)(t_urand() * (double)nd);
                const uint8_t *u8 = wide ? NULL : c1[0];
                const uint16_t *u16 = wide ? c2 : NULL;
                /* gather */
                values(og, n * k);
                memcpy(ol, og, (size_t)(n * k) * sizeof(double));
                memcpy(ref, og, (size_t)(n * k) * sizeof(double));
                for (int64_t i = 0; i < n; i++)
                    for (int64_t cc = 0; cc < k; cc++) ref[i * k + cc] += p[0][(wide ? c2[i] : c1[0][i]) * k + cc];
                G->gather(u8, u16, n, p[0], k, og);
                L->gather(u8, u16, n, p[0], k, ol);
                bad += first_diff(ref, og, n * k, 0) >= 0;
                bad += first_diff(og, ol, n * k, 0) >= 0;
                /* scatter */
                values(b, n * k);
                values(Ag, nd * k);
                memcpy(Al, Ag, (size_t)(nd * k) * sizeof(double));
                memcpy(Ar, Ag, (size_t)(nd * k) * sizeof(double));
                for (int64_t i = 0; i < n; i++)
                    for (int64_t cc = 0; cc < k; cc++) Ar[(wide ? c2[i] : c1[0][i]) * k + cc] += b[i * k + cc];
                G->scatter(u8, u16, n, b, k, Ag);
                L->scatter(u8, u16, n, b, k, Al);
                bad += first_diff(Ar, Ag, nd * k, 0) >= 0;
                bad += first_diff(Ag, Al, nd * k, 0) >= 0;
                /* gather_fused, m DDC1 groups (8-bit codes, widths 2 and up) */
                if (!wide && k >= 2) {
                    const uint8_t *cd[MF] = {c1[0], c1[1], c1[2], c1[3], c1[4]};
                    const double *P[MF] = {p[0], p[1], p[2], p[3], p[4]};
                    int m = 1 + (int)(t_urand() * MF);
                    values(og, n * k);
                    memcpy(ol, og, (size_t)(n * k) * sizeof(double));
                    memcpy(ref, og, (size_t)(n * k) * sizeof(double));
                    for (int64_t i = 0; i < n; i++)
                        for (int64_t cc = 0; cc < k; cc++)
                            for (int r = 0; r < m; r++) ref[i * k + cc] += P[r][cd[r][i] * k + cc];
                    G->gather_fused(cd, P, m, n, k, og);
                    L->gather_fused(cd, P, m, n, k, ol);
                    bad += first_diff(ref, og, n * k, 0) >= 0;
                    bad += first_diff(og, ol, n * k, 0) >= 0;
                }
                /* list_sum and list_add over listed rows (in any order, repeats) */
                static int32_t rows[NMAX];
                for (int64_t j = 0; j < n; j++) rows[j] = (int32_t)(t_urand() * (double)n);
                values(og, n * k);
                values(b, k);
                memcpy(ol, og, (size_t)(n * k) * sizeof(double));
                memcpy(ref, og, (size_t)(n * k) * sizeof(double));
                for (int64_t j = 0; j < n; j++)
                    for (int64_t cc = 0; cc < k; cc++) ref[rows[j] * k + cc] += b[cc];
                G->list_add(rows, n, b, k, og);
                L->list_add(rows, n, b, k, ol);
                bad += first_diff(ref, og, n * k, 0) >= 0;
                bad += first_diff(og, ol, n * k, 0) >= 0;
                double sg[KMAX], sl[KMAX], sr[KMAX];
                values(sg, k);
                memcpy(sl, sg, sizeof sg);
                memcpy(sr, sg, sizeof sg);
                for (int64_t j = 0; j < n; j++)
                    for (int64_t cc = 0; cc < k; cc++) sr[cc] += og[rows[j] * k + cc];
                G->list_sum(rows, n, og, k, sg);
                L->list_sum(rows, n, og, k, sl);
                bad += first_diff(sr, sg, k, 0) >= 0;
                bad += first_diff(sg, sl, k, 0) >= 0;
                T_CHECK(bad == 0, "%s cla leaf n=%lld k=%lld nd=%lld: %lld differences", lv, (long long)n,
                        (long long)k, (long long)nd, (long long)bad);
            }
}

/* ---- reorg, spoof and probe leaves ---- */

static void test_small_leaves(KIsa lvl)
{
    const char *lv = k_isa_name(lvl);
    const KReorgLeaf *RG = k_leaves(K_ISA_GENERIC)->reorg, *RL = k_leaves(lvl)->reorg;
    for (int64_t m = 1; m <= 40; m += 13)
        for (int64_t n = 1; n <= 40; n += 9)
            for (int nt = 0; nt < 2; nt++) {
                int64_t mm = nt ? (m + 3) / 4 * 4 : m;   /* non-temporal tiles: m % 4 == 0, aligned */
                double *a = malloc((size_t)(mm * n) * sizeof(double));
                double *cg = br_alloc_aligned((size_t)(mm * n) * sizeof(double));
                double *cl = br_alloc_aligned((size_t)(mm * n) * sizeof(double));
                values(a, mm * n);
                for (int64_t k = 0; k < mm * n; k++) cg[k] = cl[k] = 42;
                int64_t i0 = nt ? 0 : mm / 3, j0 = n / 4;
                RG->transpose_tile(a, cg, mm, n, i0, mm, j0, n, nt);
                RL->transpose_tile(a, cl, mm, n, i0, mm, j0, n, nt);
                T_CHECK(first_diff(cg, cl, mm * n, 0) < 0, "%s transpose tile %lldx%lld nt %d", lv, (long long)mm,
                        (long long)n, nt);
                free(a); br_free_aligned(cg); br_free_aligned(cl);
            }
    const KSpoofLeaf *SG = k_leaves(K_ISA_GENERIC)->spoof, *SL = k_leaves(lvl)->spoof;
    static double v[MAXLEN];
    for (int li = 0; li < NLENS; li++)
        for (int agg = SPA_SUM; agg <= SPA_MEAN; agg++) {
            int64_t n = lens[li];
            double sg[SPOOF_KL], kg[SPOOF_KL], sl[SPOOF_KL], kl[SPOOF_KL];
            agg_values(v, n, li % 4);
            for (int l = 0; l < SPOOF_KL; l++) { sg[l] = sl[l] = agg == SPA_MIN ? INFINITY : 0; kg[l] = kl[l] = 0; }
            SG->acc_add(sg, kg, agg, v, n);
            SL->acc_add(sl, kl, agg, v, n);
            T_CHECK(first_diff(sg, sl, SPOOF_KL, 0) < 0 && first_diff(kg, kl, SPOOF_KL, 0) < 0,
                    "%s spacc_add agg %d n=%lld", lv, agg, (long long)n);
            if (agg == SPA_MIN || agg == SPA_MAX) continue;
            /* the sums against their scalar steps: value k into lane k %
             * KL of its block of KL, the rest into lanes 0.. */
            double rs[SPOOF_KL] = {0}, rc[SPOOF_KL] = {0};
            for (int64_t k = 0; k < n; k++) {
                int l = k < n / SPOOF_KL * SPOOF_KL ? (int)(k % SPOOF_KL) : (int)(k - n / SPOOF_KL * SPOOF_KL);
                double x = agg == SPA_SUMSQ ? v[k] * v[k] : v[k], y = x + rc[l], t = rs[l] + y;
                rc[l] = fabs(t) <= DBL_MAX ? y - (t - rs[l]) : 0;
                rs[l] = t;
            }
            T_CHECK(first_diff(rs, sl, SPOOF_KL, 0) < 0 && first_diff(rc, kl, SPOOF_KL, 0) < 0,
                    "%s spacc_add agg %d n=%lld against the scalar steps", lv, agg, (long long)n);
        }
    /* column accumulators, dense (twice: accumulating) and over column
     * indexes with counts */
    static double cs[2][MAXLEN], cc[2][MAXLEN];
    static int64_t cn[2][MAXLEN];
    static int32_t ci[MAXLEN];
    for (int li = 0; li < NLENS; li++)
        for (int agg = SPA_SUM; agg <= SPA_MEAN; agg++)
            for (int sparse = 0; sparse < 2; sparse++) {
                int64_t n = lens[li];
                agg_values(v, n, li % 4);
                for (int64_t k = 0; k < n; k++) ci[k] = (int32_t)((k * 7) % (n ? n : 1));
                for (int s = 0; s < 2; s++)
                    for (int64_t k = 0; k < n; k++) {
                        cs[s][k] = agg == SPA_MIN ? INFINITY : agg == SPA_MAX ? -INFINITY : 0;
                        cc[s][k] = 0;
                        cn[s][k] = 0;
                    }
                for (int rep = 0; rep < 2; rep++) {
                    SG->col_add(cs[0], cc[0], sparse ? cn[0] : NULL, agg, v, n, sparse ? ci : NULL);
                    SL->col_add(cs[1], cc[1], sparse ? cn[1] : NULL, agg, v, n, sparse ? ci : NULL);
                }
                bool same = first_diff(cs[0], cs[1], n, 0) < 0 && first_diff(cc[0], cc[1], n, 0) < 0;
                for (int64_t k = 0; k < n; k++) same = same && cn[0][k] == cn[1][k];
                T_CHECK(same, "%s col_add agg %d n=%lld sparse %d", lv, agg, (long long)n, sparse);
            }
    const KProbeLeaf *PG = k_leaves(K_ISA_GENERIC)->probe, *PL = k_leaves(lvl)->probe;
    const int64_t m = 9, n = 37, c = 8;
    double x[9 * 37], bt[8 * 37], og[9 * 8], ol[9 * 8];
    uniform(x, m * n, -1, 1);
    uniform(bt, c * n, -1, 1);
    PG->vecmat_t(x, bt, og, n, c, 0, m);
    PL->vecmat_t(x, bt, ol, n, c, 0, m);
    T_CHECK(first_diff(og, ol, m * c, 1e-13) < 0 && fabs(PG->sum(x, m * n) - PL->sum(x, m * n)) < 1e-12,
            "%s probe loops", lv);
}

/* ---- kernels with the level forced ---- */

typedef enum { KE_BITS, KE_ROUND } Cmp;

/* r(level) for the generic level and for lvl: equal bits (KE_BITS,
 * formats and non-zeros too) or values within rounding. */
static void cmp_levels(KIsa lvl, MB *(*run)(const void *arg, BrErr *e), const void *arg, Cmp how,
                       const char *what)
{
    BrErr e = {0};
    k_isa_set(K_ISA_GENERIC);
    MB *g = run(arg, &e);
    k_isa_set(lvl);
    MB *l = run(arg, &e);
    bool ok = g && l && g->rows == l->rows && g->cols == l->cols;
    if (ok && how == KE_BITS) {
        ok = g->sparse == l->sparse && g->nnz == l->nnz;
        for (int64_t i = 0; ok && i < g->rows; i++)
            for (int64_t j = 0; ok && j < g->cols; j++) ok = same(mb_get(g, i, j), mb_get(l, i, j));
    } else if (ok) {
        ok = mb_equal(g, l, 1e-12);
    }
    T_CHECK(ok, "%s: generic and %s differ", what, k_isa_name(lvl));
    mb_release(g);
    mb_release(l);
}

typedef struct KArgs { const MB *a, *b, *c; OpCode op; AggDir dir; } KArgs;

static MB *run_unary(const void *p, BrErr *e) { const KArgs *k = p; return k_unary(k->op, k->a, e); }
static MB *run_binary(const void *p, BrErr *e) { const KArgs *k = p; return k_binary(k->op, k->a, k->b, e); }
static MB *run_bin_ms(const void *p, BrErr *e) { const KArgs *k = p; return k_binary_ms(k->op, k->a, -0.5, e); }
static MB *run_ifelse(const void *p, BrErr *e)
{
    const KArgs *k = p;
    return k_ifelse(k->a, 0, k->b, 0, NULL, 2.5, e);
}
static MB *run_agg(const void *p, BrErr *e) { const KArgs *k = p; return k_agg(k->op, k->dir, k->a, e); }
static MB *run_cum(const void *p, BrErr *e) { const KArgs *k = p; return k_cum(k->op, k->a, e); }
static MB *run_t(const void *p, BrErr *e) { const KArgs *k = p; return k_transpose(k->a, e); }
static MB *run_mm(const void *p, BrErr *e) { const KArgs *k = p; return k_matmul(k->a, k->b, e); }
static MB *run_chain(const void *p, BrErr *e) { const KArgs *k = p; return k_mmchain(k->a, k->b, k->c, e); }

static void test_kernels(KIsa lvl)
{
    static const int64_t shapes[][2] = {{0, 5}, {1, 1}, {1, 37}, {37, 1}, {130, 3}, {3, 130}, {150, 70}};
    static const double sps[] = {0, 0.01, 0.3, 1};
    static const OpCode bops[] = {OP_PLUS, OP_MULT, OP_DIV, OP_MIN, OP_LOGB, OP_POW, OP_NE};
    static const OpCode aops[] = {OP_SUM, OP_SUMSQ, OP_MEAN, OP_VAR, OP_AMIN, OP_AMAX, OP_PROD};
    static const OpCode cops[] = {OP_CUMSUM, OP_CUMPROD, OP_CUMMIN, OP_CUMMAX};
    char what[160];
    for (int th = 1; th <= 2; th++) {
        br_set_threads(th);
        for (int si = 0; si < 7; si++)
            for (int pi = 0; pi < 4; pi++)
                for (int fmt = 0; fmt < 2; fmt++) {
                    int64_t r = shapes[si][0], c = shapes[si][1];
                    MB *a = t_gen(r, c, sps[pi], -3, 3, fmt), *b = t_gen(r, c, 0.5, 0.1, 4, !fmt);
                    MB *rv = t_gen(1, c, 1, -2, 2, false);
                    KArgs k = {a, b, NULL, OP_EXP, DIR_FULL};
                    snprintf(what, sizeof what, "%lldx%lld sp %g %s th %d", (long long)r, (long long)c, sps[pi],
                             fmt ? "sparse" : "dense", th);
                    size_t wl = strlen(what);
                    for (int op = 0; op < OP__COUNT; op++) {
                        if (op_info[op].kind != OK_UNARY) continue;
                        k.op = (OpCode)op;
                        snprintf(what + wl, sizeof what - wl, " %s", op_info[op].name);
                        cmp_levels(lvl, run_unary, &k, KE_BITS, what);
                    }
                    for (int o = 0; o < 7; o++) {
                        k.op = bops[o];
                        k.b = o % 2 ? rv : b;   /* row vectors broadcast */
                        snprintf(what + wl, sizeof what - wl, " %s", op_info[k.op].name);
                        cmp_levels(lvl, run_binary, &k, KE_BITS, what);
                        cmp_levels(lvl, run_bin_ms, &k, KE_BITS, what);
                    }
                    k.b = b;
                    cmp_levels(lvl, run_ifelse, &k, KE_BITS, what);
                    for (int o = 0; o < 7; o++)
                        for (int d = DIR_FULL; d <= DIR_COL; d++) {
                            k.op = aops[o];
                            k.dir = (AggDir)d;
                            snprintf(what + wl, sizeof what - wl, " %s dir %d", op_info[k.op].name, d);
                            cmp_levels(lvl, run_agg, &k, KE_BITS, what);
                        }
                    for (int o = 0; o < 4; o++) {
                        k.op = cops[o];
                        cmp_levels(lvl, run_cum, &k, KE_BITS, what);
                    }
                    cmp_levels(lvl, run_t, &k, KE_BITS, what);
                    mb_release(a); mb_release(b); mb_release(rv);
                }
        /* products: skinny (bits), low-rank (BLAS below AVX-512) and
         * mmchain (vector-width reductions): within rounding */
        static const int64_t mms[][3] = {{1000, 50, 7}, {777, 128, 16}, {300, 20, 250}, {2100, 8, 40}};
        for (int q = 0; q < 4; q++) {
            MB *a = t_gen(mms[q][0], mms[q][1], 1, -1, 1, false), *b = t_gen(mms[q][1], mms[q][2], 1, -1, 1, false);
            KArgs k = {a, b, NULL, OP_EXP, DIR_FULL};
            snprintf(what, sizeof what, "%%*%% %lldx%lldx%lld th %d", (long long)mms[q][0], (long long)mms[q][1],
                     (long long)mms[q][2], th);
            cmp_levels(lvl, run_mm, &k, mms[q][2] <= 16 ? KE_BITS : KE_ROUND, what);
            mb_release(a); mb_release(b);
        }
        for (int sp = 0; sp < 2; sp++) {
            MB *x = t_gen(1003, 37, sp ? 0.1 : 1, -1, 1, sp), *v = t_gen(37, 2, 1, -1, 1, false);
            MB *w = t_gen(1003, 1, 1, 0, 2, false);
            KArgs k = {x, v, w, OP_EXP, DIR_FULL};
            snprintf(what, sizeof what, "mmchain %s th %d", sp ? "sparse" : "dense", th);
            cmp_levels(lvl, run_chain, &k, KE_ROUND, what);
            mb_release(x); mb_release(v); mb_release(w);
        }
    }
    br_set_threads(0);
}

int main(void)
{
    /* BRAID_ISA is read when the level is first needed */
    setenv("BRAID_ISA", "generic", 1);
    test_level(true);
    t_seed(777);
    test_spacc_value();
    KIsa cpu = k_isa_cpu();
    printf("test_isa: CPU level %s\n", k_isa_name(cpu));
    for (int l = K_ISA_GENERIC; l <= (int)cpu; l++) {
        KIsa lvl = (KIsa)l;
        const char *lv = k_isa_name(lvl);
        t_seed(12345 + (uint64_t)l);
        test_ew_leaf(k_leaves(K_ISA_GENERIC)->ew, k_leaves(lvl)->ew, lv);
        test_agg_arrays(k_leaves(K_ISA_GENERIC)->agg, k_leaves(lvl)->agg, lv);
        test_agg_blocks(k_leaves(K_ISA_GENERIC)->agg, k_leaves(lvl)->agg, lv);
        test_agg_sp_rows(k_leaves(K_ISA_GENERIC)->agg, k_leaves(lvl)->agg, lv);
        test_mm_leaf(k_leaves(K_ISA_GENERIC)->mm, k_leaves(lvl)->mm, lv);
        test_mmchain_leaf(k_leaves(K_ISA_GENERIC)->mmchain, k_leaves(lvl)->mmchain, lv);
        test_cla_leaf(k_leaves(K_ISA_GENERIC)->cla, k_leaves(lvl)->cla, lv);
        test_sp_leaf(k_leaves(K_ISA_GENERIC)->sp, k_leaves(lvl)->sp, lv);
        test_small_leaves(lvl);
        if (lvl != K_ISA_GENERIC) test_kernels(lvl);
    }
    k_isa_set(cpu);
    return t_done("test_isa");
}
