/* test_cmpsplit.c: one computation per compared value (codegen/select.c
 * cg_split_compare, docs/codegen.md "One computation of a compared
 * value"), without mpirun. Two computations of one order-dependent value
 * (a product, a row sum: another summation order) may differ in the last
 * bit, and a comparison over them is then a wrong 0/1, not a rounding
 * error. Checked against the local plan with codegen off:
 * - k-means' step `D <= rowMins(D)` (and the same test written with !,
 *   ifelse and sign) compiled as under mpirun with a forced budget (its
 *   operators placed on the ranks and fused for them) and run with those
 *   instructions computed locally, as the ranks compute them: the
 *   distributed product beside a Row operator's own dot products;
 * - `rs == max(rs)` over a row sum that fuse_all computes in a Cell
 *   operator while a Row operator recomputes it for the maximum: no row
 *   equalled the maximum. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/t.h"
#include "tests/t_dml.h"

static bool same_value(const Value *a, const Value *b, double tol)
{
    if (a->kind == V_MATRIX && b->kind == V_MATRIX) return mb_equal(a->m, b->m, tol);
    if (!val_is_numeric(a) || !val_is_numeric(b)) return false;
    double x = val_as_double(a), y = val_as_double(b);
    return fabs(x - y) <= tol * fmax(1, fabs(y));
}

static double total(const Value *v)
{
    if (val_is_numeric(v)) return val_as_double(v);
    double n = 0;
    for (int64_t r = 0; v->kind == V_MATRIX && r < v->m->rows; r++)
        for (int64_t c = 0; c < v->m->cols; c++) n += mb_get(v->m, r, c);
    return n;
}

/* src under the fused policies (budget > 0: compiled as under mpirun
 * with that budget, its distributed instructions run locally; 0: a
 * local plan): the outputs onames equal the local plan's with codegen
 * off (tol), and the first output sums to exactly want (each row's
 * comparison matched what it must). */
static void check_case(const char *what, const char *src, double budget, int nin, const char **names, MB **ins,
                       int nout, const char **onames, double want, double tol)
{
    CgOptions off = {.enabled = false};
    TRun ref, got;
    t_run_dml(src, &off, nin, names, ins, nout, onames, &ref);
    T_CHECK(ref.rc == 0 && total(&ref.out[0]) == want, "%s: the local run (%s) sums to %g", what, ref.err,
            ref.rc ? 0 : total(&ref.out[0]));
    for (int p = 0; p < T_NPOL; p++) {
        if (t_pols[p].o.interpret || t_pols[p].o.async) continue;
        br_set_dist_available(budget > 0);
        br_set_mem_budget(budget);
        t_run_dml_nd(src, &t_pols[p].o, 2, budget > 0, nin, names, ins, nout, onames, &got);
        br_set_mem_budget(0);
        br_set_dist_available(false);
        T_CHECK(got.rc == 0, "%s [%s]: %s", what, t_pols[p].name, got.err);
        if (got.rc || ref.rc) continue;
        T_CHECK(total(&got.out[0]) == want, "%s [%s]: %s sums to %.17g, not %g", what, t_pols[p].name, onames[0],
                total(&got.out[0]), want);
        for (int i = 0; i < nout; i++)
            T_CHECK(same_value(&got.out[i], &ref.out[i], tol), "%s [%s]: %s differs from the local plan's", what,
                    t_pols[p].name, onames[i]);
        t_run_free(&got);
    }
    t_run_free(&ref);
}

/* the k-means step with its assignment P written as cmp */
static void kmeans(const char *cmp)
{
    static const int shp[][3] = {{2000, 20, 8}, {1500, 5, 3}};
    for (int k = 0; k < 2; k++) {
        t_seed(7 + (uint64_t)k);
        MB *X = t_gen(shp[k][0], shp[k][1], 1, 0, 1, false), *C = t_gen(shp[k][2], shp[k][1], 1, 0, 1, false);
        const char *nm[] = {"X", "C"}, *on[] = {"n", "S", "w"};
        MB *in[] = {X, C};
        char what[160], src[600];
        snprintf(what, sizeof what, "k-means step (P = %s) %dx%d, k %d", cmp, shp[k][0], shp[k][1], shp[k][2]);
        snprintf(src, sizeof src,
                 "D = -2 * (X %%*%% t(C)) + t(rowSums(C ^ 2))\ndmin = rowMins(D)\nw = sum(dmin)\nP = %s\n"
                 "n = sum(rowSums(P) > 0)\nP = P / rowSums(P)\nS = t(P) %%*%% X\n",
                 cmp);
        check_case(what, src, 32768, 2, nm, in, 3, on, shp[k][0], 1e-10);
        mb_release(X);
        mb_release(C);
    }
}

int main(void)
{
    t_pin_machine();
    kmeans("D <= dmin");
    kmeans("!(D - dmin)");
    kmeans("ifelse(D - dmin, 0, 1)");
    kmeans("1 - sign(D - dmin)");
    /* a row sum's maximum: one row equals it (over seeds: the maximum's
     * row must be one whose two sums differ) */
    for (int k = 1; k <= 8; k++) {
        t_seed((uint64_t)k);
        MB *X = t_gen(500, 37, 1, -1, 1, false), *Y = t_gen(500, 37, 1, -1, 1, false);
        const char *nm[] = {"X", "Y"}, *on[] = {"p", "q"};
        MB *in[] = {X, Y};
        char what[64];
        /* locally, and as under mpirun (the row sums distributed) */
        for (int b = 0; b < 2; b++) {
            snprintf(what, sizeof what, "rs == max(rs), seed %d%s", k, b ? ", distributed" : "");
            check_case(what, "rs = rowSums(X * Y)\np = sum(rs == max(rs))\nq = sum(rs > mean(rs))\n", b ? 32768 : 0, 2,
                       nm, in, 2, on, 1, 0);
        }
        mb_release(X);
        mb_release(Y);
    }
    return t_done("test_cmpsplit");
}
