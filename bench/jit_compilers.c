/* jit_compilers.c: compile latency and code speed of the run-time
 * compilers braid could use for generated operators (docs/codegen.md,
 * section 5): the system compiler as a process producing a shared object
 * (what codegen/jit.c does), libtcc in process, and libgccjit in process.
 *
 * 1. Latency on real operators: every generated operator source given on
 *    the command line (e.g. the <key>.c files of a plan cache directory)
 *    compiled by `cc -O3 ... -shared` (one process each, and all of them as
 *    one bundle the way jit.c does) and by libtcc into memory.
 * 2. Latency and speed on two kernels written the same way for all three:
 *    Cell  out[i] = a[i] * b[i] * c[i] + 1 over 4096 cells
 *    Row   per row of X (64 x 100): d = X_i . v; out += (w_i d) X_i
 *    (in-cache sizes, repeated, single thread: the speed of the code, not
 *    of memory). libgccjit has no C front end, so its kernels are built
 *    through its API; cc and tcc compile the equivalent C.
 *
 * Not part of the build (it links libtcc and libgccjit, which braid does
 * not need):
 *   apt-get install tcc libtcc-dev libgccjit-12-dev
 *   cc -O2 -o /tmp/jit_compilers bench/jit_compilers.c -ltcc -ldl -lm \
 *      -I/usr/lib/gcc/x86_64-linux-gnu/12/include \
 *      -L/usr/lib/gcc/x86_64-linux-gnu/12 -lgccjit
 *   /tmp/jit_compilers ~/.cache/braid/[0-9a-f]*.c
 * Best of several repetitions; ratios against cc measured in the same run. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <libgccjit.h>
#include <libtcc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *CC_FLAGS = "-march=native -fPIC -shared -std=c11 -ffp-contract=off -fno-math-errno "
                              "-fopenmp-simd -w";

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) { free(s); s = NULL; }
    if (s) s[n] = 0;
    fclose(f);
    return s;
}

static void spit(const char *path, const char *s)
{
    FILE *f = fopen(path, "wb");
    if (!f) { perror(path); exit(2); }
    fputs(s, f);
    fclose(f);
}

/* cc as a process: source file -> shared object; returns seconds (or -1). */
static double cc_compile(const char *opt, const char *src, const char *so)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cc %s %s -o %s %s", opt, CC_FLAGS, so, src);
    double t = now();
    int rc = system(cmd);
    t = now() - t;
    return rc == 0 ? t : -1;
}

/* libtcc into memory; *out keeps the state (caller deletes) when not NULL. */
static double tcc_compile(const char *src, TCCState **out)
{
    double t = now();
    TCCState *s = tcc_new();
    tcc_set_output_type(s, TCC_OUTPUT_MEMORY);
    tcc_set_error_func(s, NULL, NULL);
    int ok = tcc_compile_string(s, src) == 0 && tcc_relocate(s, TCC_RELOCATE_AUTO) >= 0;
    t = now() - t;
    if (!ok) { tcc_delete(s); return -1; }
    if (out) *out = s;
    else tcc_delete(s);
    return t;
}

/* ---- the two kernels in C (cc and tcc) ---- */

static const char *KERNELS_C =
    "#include <stdint.h>\n"
    "void cell(const double *restrict a, const double *restrict b, const double *restrict c,\n"
    "          double *restrict out, int64_t n)\n"
    "{ for (int64_t i = 0; i < n; i++) out[i] = a[i] * b[i] * c[i] + 1.0; }\n"
    "void row(const double *restrict X, const double *restrict v, const double *restrict w,\n"
    "         double *restrict out, int64_t m, int64_t n)\n"
    "{\n"
    "    for (int64_t i = 0; i < m; i++) {\n"
    "        const double *x = X + i * n;\n"
    "        double d = 0;\n"
    "        for (int64_t j = 0; j < n; j++) d += x[j] * v[j];\n"
    "        double s = w[i] * d;\n"
    "        for (int64_t j = 0; j < n; j++) out[j] += s * x[j];\n"
    "    }\n"
    "}\n";

typedef void (*CellFn)(const double *, const double *, const double *, double *, int64_t);
typedef void (*RowFn)(const double *, const double *, const double *, double *, int64_t, int64_t);

/* ---- the same kernels through libgccjit's API ---- */

typedef struct Jit {
    gcc_jit_context *c;
    gcc_jit_type *d, *i64, *pd, *pcd, *v;
} Jit;

static gcc_jit_rvalue *at(Jit *j, gcc_jit_rvalue *p, gcc_jit_rvalue *i)
{
    return gcc_jit_lvalue_as_rvalue(gcc_jit_context_new_array_access(j->c, NULL, p, i));
}

static gcc_jit_rvalue *mul(Jit *j, gcc_jit_type *t, gcc_jit_rvalue *a, gcc_jit_rvalue *b)
{
    return gcc_jit_context_new_binary_op(j->c, NULL, GCC_JIT_BINARY_OP_MULT, t, a, b);
}

/* for (i = 0; i < n; i++) { body } between blocks from and returns the
 * block after the loop; *body receives the loop's body block. */
static gcc_jit_block *loop(Jit *j, gcc_jit_function *f, gcc_jit_block *from, gcc_jit_lvalue *i,
                           gcc_jit_rvalue *n, gcc_jit_block **body, gcc_jit_block **latch)
{
    gcc_jit_block *cond = gcc_jit_function_new_block(f, NULL), *b = gcc_jit_function_new_block(f, NULL),
                  *after = gcc_jit_function_new_block(f, NULL);
    gcc_jit_block_add_assignment(from, NULL, i, gcc_jit_context_zero(j->c, j->i64));
    gcc_jit_block_end_with_jump(from, NULL, cond);
    gcc_jit_block_end_with_conditional(
        cond, NULL,
        gcc_jit_context_new_comparison(j->c, NULL, GCC_JIT_COMPARISON_LT, gcc_jit_lvalue_as_rvalue(i), n), b, after);
    *body = b;
    *latch = cond;
    return after;
}

static void loop_end(Jit *j, gcc_jit_block *body, gcc_jit_lvalue *i, gcc_jit_block *cond)
{
    gcc_jit_block_add_assignment_op(body, NULL, i, GCC_JIT_BINARY_OP_PLUS, gcc_jit_context_one(j->c, j->i64));
    gcc_jit_block_end_with_jump(body, NULL, cond);
}

/* -march=<cpu> of this machine: libgccjit has no driver to resolve
 * -march=native, so ask cc once. */
static char march[96] = "-march=x86-64";

static void find_march(void)
{
    FILE *p = popen("cc -march=native -Q --help=target 2>/dev/null", "r");
    if (!p) return;
    char line[512], cpu[64];
    while (fgets(line, sizeof line, p))
        if (sscanf(line, " -march= %63s", cpu) == 1) snprintf(march, sizeof march, "-march=%s", cpu);
    pclose(p);
}

static double gccjit_compile(int opt, gcc_jit_result **res)
{
    double t = now();
    Jit j;
    j.c = gcc_jit_context_acquire();
    gcc_jit_context_set_int_option(j.c, GCC_JIT_INT_OPTION_OPTIMIZATION_LEVEL, opt);
    gcc_jit_context_add_command_line_option(j.c, march);
    gcc_jit_context_add_command_line_option(j.c, "-ffp-contract=off");
    j.d = gcc_jit_context_get_type(j.c, GCC_JIT_TYPE_DOUBLE);
    j.i64 = gcc_jit_context_get_type(j.c, GCC_JIT_TYPE_LONG_LONG);
    j.pd = gcc_jit_type_get_pointer(j.d);
    j.pcd = gcc_jit_type_get_pointer(gcc_jit_type_get_const(j.d));
    j.v = gcc_jit_context_get_type(j.c, GCC_JIT_TYPE_VOID);
    /* libgccjit 12 has no restrict qualifier (gcc 14 adds one) */
    gcc_jit_type *rcd = j.pcd, *rd = j.pd;
    /* cell */
    gcc_jit_param *p[6] = {
        gcc_jit_context_new_param(j.c, NULL, rcd, "a"), gcc_jit_context_new_param(j.c, NULL, rcd, "b"),
        gcc_jit_context_new_param(j.c, NULL, rcd, "c"), gcc_jit_context_new_param(j.c, NULL, rd, "out"),
        gcc_jit_context_new_param(j.c, NULL, j.i64, "n")};
    gcc_jit_function *f = gcc_jit_context_new_function(j.c, NULL, GCC_JIT_FUNCTION_EXPORTED, j.v, "cell", 5, p, 0);
    gcc_jit_lvalue *i = gcc_jit_function_new_local(f, NULL, j.i64, "i");
    gcc_jit_block *entry = gcc_jit_function_new_block(f, NULL), *body, *cond;
    gcc_jit_block *after = loop(&j, f, entry, i, gcc_jit_param_as_rvalue(p[4]), &body, &cond);
    gcc_jit_rvalue *iv = gcc_jit_lvalue_as_rvalue(i);
    gcc_jit_rvalue *e = mul(&j, j.d, mul(&j, j.d, at(&j, gcc_jit_param_as_rvalue(p[0]), iv),
                                         at(&j, gcc_jit_param_as_rvalue(p[1]), iv)),
                            at(&j, gcc_jit_param_as_rvalue(p[2]), iv));
    e = gcc_jit_context_new_binary_op(j.c, NULL, GCC_JIT_BINARY_OP_PLUS, j.d, e, gcc_jit_context_one(j.c, j.d));
    gcc_jit_block_add_assignment(body, NULL, gcc_jit_context_new_array_access(j.c, NULL, gcc_jit_param_as_rvalue(p[3]), iv),
                                 e);
    loop_end(&j, body, i, cond);
    gcc_jit_block_end_with_void_return(after, NULL);
    /* row */
    gcc_jit_param *q[6] = {
        gcc_jit_context_new_param(j.c, NULL, rcd, "X"), gcc_jit_context_new_param(j.c, NULL, rcd, "v"),
        gcc_jit_context_new_param(j.c, NULL, rcd, "w"), gcc_jit_context_new_param(j.c, NULL, rd, "out"),
        gcc_jit_context_new_param(j.c, NULL, j.i64, "m"), gcc_jit_context_new_param(j.c, NULL, j.i64, "n")};
    f = gcc_jit_context_new_function(j.c, NULL, GCC_JIT_FUNCTION_EXPORTED, j.v, "row", 6, q, 0);
    gcc_jit_lvalue *ri = gcc_jit_function_new_local(f, NULL, j.i64, "i"),
                   *rj = gcc_jit_function_new_local(f, NULL, j.i64, "j"),
                   *x = gcc_jit_function_new_local(f, NULL, j.pcd, "x"),
                   *d = gcc_jit_function_new_local(f, NULL, j.d, "d"),
                   *s = gcc_jit_function_new_local(f, NULL, j.d, "s");
    gcc_jit_rvalue *nv = gcc_jit_param_as_rvalue(q[5]);
    entry = gcc_jit_function_new_block(f, NULL);
    gcc_jit_block *ob, *oc;
    gcc_jit_block *oafter = loop(&j, f, entry, ri, gcc_jit_param_as_rvalue(q[4]), &ob, &oc);
    gcc_jit_rvalue *riv = gcc_jit_lvalue_as_rvalue(ri), *rjv = gcc_jit_lvalue_as_rvalue(rj);
    gcc_jit_block_add_assignment(
        ob, NULL, x,
        gcc_jit_lvalue_get_address(
            gcc_jit_context_new_array_access(j.c, NULL, gcc_jit_param_as_rvalue(q[0]), mul(&j, j.i64, riv, nv)), NULL));
    gcc_jit_block_add_assignment(ob, NULL, d, gcc_jit_context_zero(j.c, j.d));
    gcc_jit_block *b1, *c1;
    gcc_jit_block *a1 = loop(&j, f, ob, rj, nv, &b1, &c1);
    gcc_jit_block_add_assignment_op(b1, NULL, d, GCC_JIT_BINARY_OP_PLUS,
                                    mul(&j, j.d, at(&j, gcc_jit_lvalue_as_rvalue(x), rjv),
                                        at(&j, gcc_jit_param_as_rvalue(q[1]), rjv)));
    loop_end(&j, b1, rj, c1);
    gcc_jit_block_add_assignment(a1, NULL, s,
                                 mul(&j, j.d, at(&j, gcc_jit_param_as_rvalue(q[2]), riv), gcc_jit_lvalue_as_rvalue(d)));
    gcc_jit_block *b2, *c2;
    gcc_jit_block *a2 = loop(&j, f, a1, rj, nv, &b2, &c2);
    gcc_jit_block_add_assignment_op(b2, NULL,
                                    gcc_jit_context_new_array_access(j.c, NULL, gcc_jit_param_as_rvalue(q[3]), rjv),
                                    GCC_JIT_BINARY_OP_PLUS,
                                    mul(&j, j.d, gcc_jit_lvalue_as_rvalue(s), at(&j, gcc_jit_lvalue_as_rvalue(x), rjv)));
    loop_end(&j, b2, rj, c2);
    loop_end(&j, a2, ri, oc);
    gcc_jit_block_end_with_void_return(oafter, NULL);
    gcc_jit_result *r = gcc_jit_context_compile(j.c);
    t = now() - t;
    gcc_jit_context_release(j.c);
    *res = r;
    return r ? t : -1;
}

/* Runs the kernels: seconds for 2000 calls each (best of 15). */
#define CELL_N 4096
#define ROW_M 64
#define ROW_N 100
static void speed(CellFn cell, RowFn row, double *tc, double *tr, double *chk)
{
    static double a[CELL_N], b[CELL_N], c[CELL_N], o[CELL_N], X[ROW_M * ROW_N], v[ROW_N], w[ROW_M], out[ROW_N];
    for (int i = 0; i < CELL_N; i++) { a[i] = i * 1e-3; b[i] = 1 + i % 7; c[i] = 0.5 + i % 3; }
    for (int i = 0; i < ROW_M * ROW_N; i++) X[i] = (i % 11) * 0.1;
    for (int i = 0; i < ROW_N; i++) v[i] = 1.0 / (i + 1);
    for (int i = 0; i < ROW_M; i++) w[i] = i % 5;
    *tc = *tr = 1e9;
    for (int r = 0; r < 15; r++) {
        double t = now();
        for (int k = 0; k < 2000; k++) cell(a, b, c, o, CELL_N);
        t = now() - t;
        if (t < *tc) *tc = t;
        memset(out, 0, sizeof out);
        t = now();
        for (int k = 0; k < 2000; k++) row(X, v, w, out, ROW_M, ROW_N);
        t = now() - t;
        if (t < *tr) *tr = t;
    }
    *chk = o[CELL_N - 1] + out[ROW_N - 1];
}

int main(int argc, char **argv)
{
    char dir[] = "/tmp/jitcmpXXXXXX";
    if (!mkdtemp(dir)) return 2;
    char src[256], so[256];
    /* 1. real operators */
    if (argc > 1) {
        double tcc_sum = 0, cc_sum = 0, cc2_sum = 0;
        int n = 0;
        size_t cap = 1 << 20;
        char *bundle = malloc(cap);
        bundle[0] = 0;
        for (int i = 1; i < argc; i++) {
            char *s = slurp(argv[i]);
            if (!s) continue;
            double bt = 1e9, bc = 1e9, bc2 = 1e9;
            for (int r = 0; r < 3; r++) {
                double t = tcc_compile(s, NULL);
                if (t >= 0 && t < bt) bt = t;
                snprintf(src, sizeof src, "%s/op.c", dir);
                snprintf(so, sizeof so, "%s/op.so", dir);
                spit(src, s);
                t = cc_compile("-O3", src, so);
                if (t >= 0 && t < bc) bc = t;
                t = cc_compile("-O2", src, so);
                if (t >= 0 && t < bc2) bc2 = t;
            }
            if (bt < 1e9 && bc < 1e9) { tcc_sum += bt; cc_sum += bc; cc2_sum += bc2; n++; }
            else fprintf(stderr, "%s: tcc %s, cc %s\n", argv[i], bt < 1e9 ? "ok" : "failed", bc < 1e9 ? "ok" : "failed");
            free(s);
        }
        printf("real operators: %d; per operator: cc -O3 %.1f ms, cc -O2 %.1f ms, libtcc %.2f ms "
               "(cc/tcc %.0fx)\n",
               n, 1e3 * cc_sum / n, 1e3 * cc2_sum / n, 1e3 * tcc_sum / n, cc_sum / tcc_sum);
        free(bundle);
    }
    /* 2. the kernels */
    find_march();
    snprintf(src, sizeof src, "%s/k.c", dir);
    spit(src, KERNELS_C);
    printf("%-22s %10s %10s %10s\n", "kernels (Cell, Row)", "compile", "cell", "row");
    double ref_c = 0, ref_r = 0, ref_t = 0;
    const char *opts[] = {"-O3", "-O2", "-O1"};
    for (int o = 0; o < 3; o++) {
        double best = 1e9, tc, tr, chk;
        snprintf(so, sizeof so, "%s/k%d.so", dir, o);
        for (int r = 0; r < 5; r++) {
            double t = cc_compile(opts[o], src, so);
            if (t >= 0 && t < best) best = t;
        }
        void *dl = dlopen(so, RTLD_NOW | RTLD_LOCAL);
        if (!dl) { fprintf(stderr, "dlopen %s\n", dlerror()); return 2; }
        speed((CellFn)dlsym(dl, "cell"), (RowFn)dlsym(dl, "row"), &tc, &tr, &chk);
        if (o == 0) { ref_c = tc; ref_r = tr; ref_t = best; }
        printf("cc %-19s %7.1f ms %7.2fx %7.2fx  (time / cc -O3; check %.6g)\n", opts[o], 1e3 * best, tc / ref_c,
               tr / ref_r, chk);
    }
    {
        double best = 1e9, tc, tr, chk;
        TCCState *keep = NULL;
        for (int r = 0; r < 5; r++) {
            TCCState *s = NULL;
            double t = tcc_compile(KERNELS_C, &s);
            if (t >= 0 && t < best) best = t;
            if (keep) tcc_delete(keep);
            keep = s;
        }
        if (!keep) { fprintf(stderr, "tcc failed\n"); return 2; }
        speed((CellFn)tcc_get_symbol(keep, "cell"), (RowFn)tcc_get_symbol(keep, "row"), &tc, &tr, &chk);
        printf("libtcc %-15s %7.2f ms %7.2fx %7.2fx  (compile %.0fx faster than cc -O3; check %.6g)\n", "", 1e3 * best,
               tc / ref_c, tr / ref_r, ref_t / best, chk);
        tcc_delete(keep);
    }
    for (int o = 3; o >= 2; o--) {
        double best = 1e9, tc, tr, chk;
        gcc_jit_result *keep = NULL;
        for (int r = 0; r < 5; r++) {
            gcc_jit_result *res = NULL;
            double t = gccjit_compile(o, &res);
            if (t >= 0 && t < best) best = t;
            if (keep) gcc_jit_result_release(keep);
            keep = res;
        }
        if (!keep) { fprintf(stderr, "libgccjit failed\n"); return 2; }
        speed((CellFn)gcc_jit_result_get_code(keep, "cell"), (RowFn)gcc_jit_result_get_code(keep, "row"), &tc, &tr,
              &chk);
        printf("libgccjit -O%d %9s %7.1f ms %7.2fx %7.2fx  (check %.6g)\n", o, "", 1e3 * best, tc / ref_c, tr / ref_r,
               chk);
        gcc_jit_result_release(keep);
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) return 1;
    return 0;
}
