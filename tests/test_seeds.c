/* test_seeds.c: seeds under -seed N in program order (runtime/seeds.c,
 * DESIGN.md "Seeds under -seed N"). rand and sample without a seed take
 * N, N+1, ... in the order the script writes them, and a parfor (here in
 * a called function) takes one, also when a draw only reaches a variable
 * that a later statement uses: the draw's statement root is dropped
 * (plan/build.c drop_dead), and the walk from the block's calls and
 * writes reached it after a call written below it (keep_draw_order puts
 * it back in its place); so did a call inside such a statement's
 * expression. A draw in the untaken branch of a scalar ifelse still
 * takes no seed. Each script computes `got` from unseeded draws and
 * `want` from the seeds they must have taken (an explicit seed takes none
 * of the stream), at optimization level 0 and at 2 with codegen off and
 * on. */
#include "tests/t.h"
#include "tests/t_dml.h"

/* f holds a parfor: one seed of the stream per call */
#define F "f = function(matrix[double] X) return (matrix[double] Y) {\n" \
          "  Y = X\n  parfor (i in 1:2) { Y[i, 1] = i }\n}\n"
#define R(s) "as.scalar(rand(rows=1, cols=1, seed=" #s "))"

typedef struct Case { const char *name, *src; } Case;

static const Case cases[] = {
    /* the repro of issue 22: left-indexed draws between calls */
    {"draws between calls", F
     "got = matrix(0, rows=3, cols=1)\n"
     "got[1, 1] = as.scalar(rand(rows=1, cols=1))\n"
     "P = f(got)\n"
     "got[2, 1] = as.scalar(rand(rows=1, cols=1))\n"
     "P = f(P)\n"
     "got[3, 1] = as.scalar(rand(rows=1, cols=1)) + 0 * sum(P)\n"
     "want = matrix(0, rows=3, cols=1)\n"
     "want[1, 1] = " R(3) "\nwant[2, 1] = " R(5) "\nwant[3, 1] = " R(7) "\n"},
    /* draws with each other: a later statement reads them in another order */
    {"draws in statement order",
     "a = rand(rows=1, cols=2)\n"
     "b = sample(100, 3)\n"
     "c = rand(rows=2, cols=1, min=-1, max=1)\n"
     "got = cbind(t(c), t(b), a)\n"
     "want = cbind(t(rand(rows=2, cols=1, min=-1, max=1, seed=5)), t(sample(100, 3, 4)), rand(rows=1, cols=2, seed=3))\n"},
    /* a draw in an expression of scalars before a call */
    {"scalar draw before a call", F
     "x = 10 * as.scalar(rand(rows=1, cols=1)) + 1\n"
     "P = f(matrix(0, rows=2, cols=1))\n"
     "y = as.scalar(rand(rows=1, cols=1))\n"
     "got = matrix(0, rows=2, cols=1) + 0 * sum(P)\n"
     "got[1, 1] = y\ngot[2, 1] = x\n"
     "want = matrix(0, rows=2, cols=1)\n"
     "want[1, 1] = " R(5) "\nwant[2, 1] = 10 * " R(3) " + 1\n"},
    /* a call inside an expression takes its seed in its place too */
    {"call in an expression", F
     "a = as.scalar(rand(rows=1, cols=1))\n"
     "x = sum(f(matrix(0, rows=2, cols=1))) + 1\n"
     "b = as.scalar(rand(rows=1, cols=1))\n"
     "got = matrix(0, rows=3, cols=1)\n"
     "got[1, 1] = a\ngot[2, 1] = b\ngot[3, 1] = x\n"
     "want = matrix(0, rows=3, cols=1)\n"
     "want[1, 1] = " R(3) "\nwant[2, 1] = " R(5) "\nwant[3, 1] = 4\n"},
    /* an untaken ifelse branch draws nothing, a taken one in its place */
    {"ifelse branches", F
     "c = " R(1) " > 2\n"
     "u = ifelse(c, as.scalar(rand(rows=1, cols=1)), 0.5)\n"
     "v = ifelse(!c, as.scalar(rand(rows=1, cols=1)), 0.5)\n"
     "P = f(matrix(0, rows=2, cols=1))\n"
     "w = as.scalar(rand(rows=1, cols=1))\n"
     "got = matrix(0, rows=3, cols=1) + 0 * sum(P)\n"
     "got[1, 1] = u\ngot[2, 1] = v\ngot[3, 1] = w\n"
     "want = matrix(0, rows=3, cols=1)\n"
     "want[1, 1] = 0.5\nwant[2, 1] = " R(3) "\nwant[3, 1] = " R(5) "\n"},
};

int main(void)
{
    t_pin_machine();
    t_dml_seed = 3;
    const char *onames[] = {"got", "want"};
    const CgOptions *cgs[] = {NULL, &t_pols[2].o};
    /* O0 (every statement root kept) with codegen off; O2 off and on */
    static const int runs[][2] = {{0, 0}, {2, 0}, {2, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (int k = 0; k < 3; k++) {
            int opt = runs[k][0], g = runs[k][1];
            TRun r;
            int rc = t_run_dml_opt(cases[i].src, cgs[g], opt, 0, NULL, NULL, 2, onames, &r);
            T_CHECK(rc == 0, "%s (O%d, codegen %s): %s", cases[i].name, opt, g ? "on" : "off", r.err);
            if (rc == 0) {
                bool ok = r.out[0].kind == V_MATRIX && r.out[1].kind == V_MATRIX;
                T_CHECK(ok, "%s: outputs are not matrices", cases[i].name);
                if (ok) T_MB_EQ(r.out[0].m, r.out[1].m, 0, "%s (O%d, codegen %s)", cases[i].name, opt, g ? "on" : "off");
            }
            t_run_free(&r);
        }
    return t_done("test_seeds");
}
