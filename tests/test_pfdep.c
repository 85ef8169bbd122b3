/* test_pfdep: parfor dependency analysis of result variables (plan/pfdep.c).
 * Each case is a parfor loop with the mode the analysis must choose
 * (parallel when it proves the iterations independent, serial when they
 * are not or it cannot tell), and the loop's results, run in parallel
 * where chosen, must equal those of the same loop as a plain for. The
 * first cases are the patterns of SystemDS's parfor dependency tests that
 * SystemDS proves independent. */
#include "t.h"
#include "t_dml.h"
#include "lang/load.h"
#include "plan/build.h"
#include "plan/program.h"

typedef struct Case {
    const char *name;
    const char *pre;      /* before the loop: defines A, B, C (20 x 20 or larger) */
    const char *head;     /* "(i in 1:10)" */
    const char *body;
    bool parallel;
} Case;

#define MATS "A = matrix(seq(1, 400), rows=20, cols=20); B = matrix(seq(401, 800), rows=20, cols=20);\n"
#define BIG "A = matrix(0, rows=20000, cols=3); B = matrix(seq(1, 60000), rows=20000, cols=3);\n"

static const Case cases[] = {
    /* proved independent */
    {"disjoint halves", MATS, "(i in 1:10)", "A[i,1] = B[i,1]\nA[i+10,1] = B[i+10,1]", true},
    {"different strides", MATS, "(i in 1:2)", "A[2*i+10,1] = B[i,1]\nA[5*i,1] = B[i,1]", true},
    {"strides 7 and 13", "A = matrix(0, rows=60, cols=2); B = matrix(seq(1, 120), rows=60, cols=2);\n", "(i in 1:4)", "A[7*i+1,1] = B[i,1]\nA[13*i+1,1] = B[i,1]", true},
    {"read below write", MATS, "(i in 11:15)", "B[i,1] = A[i-10,1]\nA[i,1] = B[i,1]", true},
    {"rows 1 and 2", MATS, "(i in 1:20)", "A[1,i] = i\nA[2,i] = i * 2", true},
    {"two columns", MATS, "(i in 1:20)", "A[i,1] = i\nA[i,2] = i * 2", true},
    {"even write odd read", MATS, "(i in 1:4)", "x = A[2*i+1,1]\nA[2*i,1] = x * i", true},
    {"column halves", MATS, "(i in 1:20)", "A[1:10,i] = matrix(i, 10, 1)\nA[11:nrow(A),i] = matrix(i, 10, 1)",
     true},
    {"shifted copy", MATS, "(i in 1:10)", "A[1,i+10] = A[1,i]", true},
    {"double index", MATS, "(i in 1:9)", "A[i*2.0,1] = i\nA[1,i*2.0] = i^2", true},
    {"inner loop on a row", MATS, "(i in 1:5)", "for (j in 2:10) {\n A[i,j] = A[i,j-1] + A[i,j]\n}", true},
    {"scalar before use", MATS, "(i in 1:19)", "k = i + 1\nA[k,1] = i", true},
    {"row blocks, long loop", BIG, "(i in 1:6000)", "A[(i-1)*3+1:i*3,] = matrix(i, 3, 3)", true},
    {"even write odd read, long loop", BIG, "(i in 1:9000)", "A[2*i,1] = A[2*i+1,2] + i", true},
    {"unknown count", MATS "n = as.integer(sum(A) > 0) * 20\n", "(i in 1:n)", "A[i,] = A[i,] * 2", true},
    {"step 2", MATS, "(i in seq(1, 19, 2))", "A[i,1] = i\nA[i+1,1] = -i", true},
    /* where-loops: each result written over its loop's ranges */
    {"where-loop row blocks", MATS, "(p in 1:4)",
     "where (i in (p-1)*5+1:p*5, j in 1:20, k in 1:20) { A[i,j] += B[i,k] * B[k,j] }", true},
    {"where-loop column blocks, min=", MATS, "(p in 1:5)",
     "where (i in 1:20, j in p*4:p*4-3, k in 1:20) { A[i,j] min= B[i,k] - B[k,j] }", true},
    {"where-loop rows, two results", MATS "C = matrix(0, rows=20, cols=20);\n", "(p in 1:20)",
     "where (i in p:p, j in 1:20, k in 1:20) { A[i,j] += B[i,k] * B[k,j]; C[i,j] max= B[k,j] }", true},
    /* dependent, or not provable */
    {"where-loop reading a result", MATS "C = matrix(0, rows=20, cols=20);\n", "(p in 1:4)",
     "A[p,1] = p\nwhere (i in p:p, j in 1:20, k in 1:20) { C[i,j] += A[k,j] }", false},
    {"where-loop overlapping blocks", MATS, "(p in 1:3)",
     "where (i in (p-1)*5+1:p*5+1, j in 1:20, k in 1:20) { A[i,j] += B[i,k] * B[k,j] }", false},
    {"where-loop then a read", MATS, "(p in 1:4)",
     "where (i in (p-1)*5+1:p*5, j in 1:20, k in 1:20) { A[i,j] += B[i,k] }\nA[p,1] = sum(A[p+1,])", false},
    {"previous row", MATS, "(i in 2:10)", "A[i,1] = A[i-1,1] + 1", false},
    {"non-affine index", MATS, "(i in 1:20)", "j = i %% 3 + 1\nA[j,1] = i", false},
    {"same cell", MATS, "(i in 1:20)", "A[1,1] = i", false},
    {"overlapping blocks", BIG, "(i in 1:6000)", "A[(i-1)*3+1:i*3+1,] = matrix(i, 4, 3)", false},
    {"next row read, long loop", BIG, "(i in 1:9000)", "A[i,1] = A[i+1,1] + i", false},
    {"whole read", MATS, "(i in 1:20)", "s = sum(A)\nA[i,1] = s", false},
    {"index set in a branch", MATS, "(i in 1:19)", "k = i\nif (i > 5) { k = 1 }\nA[k,1] = i", false},
    {"index from a cell", MATS, "(i in 1:5)", "k = as.scalar(B[i,1]) %% 5 + 1\nA[k,1] = i", false},
    {"accumulating into cells", MATS, "(i in 1:20)", "A[i %% 2 + 1, 1] += i", false},
};

/* Near the limits of 64-bit integers the analysis must not overflow:
 * what overflows proves nothing; even and odd rows stay apart. The mode
 * only (these loops cannot run). */
static const Case mode_only[] = {
    {"huge coefficient", MATS, "(i in 1:2)", "A[4611686018427387904*i,1] = 1\nA[3*i,1] = 2", false},
    {"huge offsets", MATS, "(i in 1:2)", "A[i+9223372036854775000,1] = 1\nA[i-9223372036854775000,1] = 2", false},
    {"huge range", MATS, "(i in -9223372036854775000:9223372036854775000)", "A[2*i,1] = A[2*i+1,1]", true},
};

/* Compiles src and tells whether its first parfor runs in parallel. */
static int parfor_mode(const char *src)
{
    Diag *d = diag_new();
    Program *ast = lang_load_string(src, "<test>", NULL, d);
    RtProgram *p = ast && !diag_nerrors(d) ? plan_build_program(ast, d, 2, NULL) : NULL;
    int mode = -1;
    if (p) {
        char *text = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&text, &n);
        plan_print(p, f);
        fclose(f);
        if (text && strstr(text, "[parallel]")) mode = 1;
        else if (text && strstr(text, "[serial]")) mode = 0;
        free(text);
        plan_program_free(p);
    } else {
        fprintf(stderr, "compile: %s\n", diag_nerrors(d) ? diag_first_message(d) : "?");
    }
    if (ast) lang_program_free(ast);
    diag_free(d);
    return mode;
}

static void mode_case(const Case *c)
{
    char par[4096];
    snprintf(par, sizeof par, "%sparfor %s {\n%s\n}\n", c->pre, c->head, c->body);
    int mode = parfor_mode(par);
    T_CHECK(mode == (c->parallel ? 1 : 0), "%s: mode %d, want %s", c->name, mode, c->parallel ? "parallel" : "serial");
}

static void run_case(const Case *c)
{
    char par[4096], ser[4096];
    snprintf(par, sizeof par, "%sparfor %s {\n%s\n}\n", c->pre, c->head, c->body);
    snprintf(ser, sizeof ser, "%sfor %s {\n%s\n}\n", c->pre, c->head, c->body);
    mode_case(c);
    const char *outs[] = {"A"};
    CgOptions off = {.enabled = false};
    TRun a, b;
    t_run_dml(par, &off, 0, NULL, NULL, 1, outs, &a);
    t_run_dml(ser, &off, 0, NULL, NULL, 1, outs, &b);
    T_CHECK(!a.rc && !b.rc, "%s: runs: %s %s", c->name, a.err, b.err);
    if (!a.rc && !b.rc) {
        const MB *x = a.out[0].m, *y = b.out[0].m;
        bool same = a.out[0].kind == V_MATRIX && b.out[0].kind == V_MATRIX && x->rows == y->rows && x->cols == y->cols;
        for (int64_t i = 0; same && i < x->rows; i++)
            for (int64_t j = 0; same && j < x->cols; j++) same = mb_get(x, i, j) == mb_get(y, i, j);
        T_CHECK(same, "%s: parfor and for results differ", c->name);
    }
    t_run_free(&a);
    t_run_free(&b);
}

int main(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i]);
    for (size_t i = 0; i < sizeof mode_only / sizeof mode_only[0]; i++) mode_case(&mode_only[i]);
    return t_done("test_pfdep");
}
