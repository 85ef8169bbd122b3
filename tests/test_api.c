/* test_api.c: the embedding API (include/braid.h): prepare once, bind,
 * execute many times, read outputs; errors as strings, never crashes. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "include/braid.h"
#include "api/script.h"
#include "t.h"

static int released;
static void count_release(void *ctx) { released += ctx == &released; }
static void no_release(void *ctx) { (void)ctx; }

/* A dense view is read in place, shared by outputs that alias it, never
 * written, and released once the binding and those outputs are gone. */
static void test_dense_view(void)
{
    const char *in[] = {"X"}, *out[] = {"Y", "Z", "W", "s"};
    char *err = NULL;
    BraidScript *sc = braid_prepare("Y = X * 2\nZ = X\nW = X\nW[1,1] = 100\ns = sum(X)\n", in, 1, out, 4, &err);
    T_CHECK(sc != NULL, "prepare: %s", err ? err : "");
    double X[6] = {1, 0, 3, 0, 5, 6};
    released = 0;
    T_CHECK(braid_bind_matrix_view(sc, "X", X, 2, 3, count_release, &released) == 0, "bind view");
    T_CHECK(braid_execute(sc) == 0, "execute: %s", braid_error(sc));
    BraidMatrix y, z, w;
    double s;
    T_CHECK(braid_get_double(sc, "s", &s) == 0 && s == 15, "sum of the view %g", s);
    T_CHECK(braid_get_matrix_view(sc, "Y", true, &y) == 0 && !y.sparse && y.rows == 2 && y.cols == 3 &&
            y.data[5] == 12 && y.writable, "Y view");
    T_CHECK(braid_get_matrix_view(sc, "Z", false, &z) == 0 && z.data == X && !z.writable,
            "Z = X returns the caller's buffer, read-only");
    T_CHECK(braid_get_matrix_view(sc, "W", true, &w) == 0 && w.data != X && w.data[0] == 100 && X[0] == 1,
            "assigning into X copies (X[0] = %g)", X[0]);
    braid_script_free(sc);
    T_CHECK(released == 0, "not released while the Z view holds it");
    braid_matrix_free(&z);
    T_CHECK(released == 1, "released once (%d)", released);
    T_CHECK(y.data[0] == 2, "a view outlives its script");
    braid_matrix_free(&y);
    braid_matrix_free(&w);
}

/* A compressed output (compress(X)) comes back decompressed, dense or
 * as the decompressed block's own form. */
static void test_compressed_view(void)
{
    const char *in[] = {"X"}, *out[] = {"C"};
    char *err = NULL;
    BraidScript *sc = braid_prepare("C = compress(X)\n", in, 1, out, 1, &err);
    T_CHECK(sc != NULL, "compressed: prepare: %s", err ? err : "");
    enum { R = 2000, K = 4 };
    static double X[R * K];
    for (int i = 0; i < R * K; i++) X[i] = (double)((i / K) % 3) + (i % K);
    T_CHECK(braid_bind_matrix(sc, "X", X, R, K) == 0 && braid_execute(sc) == 0, "compressed: %s", braid_error(sc));
    for (int dense = 0; dense < 2; dense++) {
        BraidMatrix c;
        T_CHECK(braid_get_matrix_view(sc, "C", dense, &c) == 0 && c.rows == R && c.cols == K,
                "compressed view: %s", braid_error(sc));
        bool same = true;
        for (int i = 0; i < R && c.handle && !c.sparse; i++)
            for (int j = 0; j < K; j++) same &= c.data[i * K + j] == X[i * K + j];
        T_CHECK(same && (c.sparse || c.data), "compressed view (dense=%d): cells differ", dense);
        braid_matrix_free(&c);
    }
    braid_script_free(sc);
}

/* The read of X in the first loop body of s's program: marked compressed
 * at run time (cbytes < 0) by the planner? */
static int loop_read_marked(const BraidScript *s)
{
    const PBlock *body = NULL;
    for (int b = 0; s->prog && b < s->prog->main.n && !body; b++)
        if (s->prog->main.v[b]->body.n) body = s->prog->main.v[b]->body.v[0];
    const HopDag *d = body ? body->dag : NULL;
    for (int i = 0; d && i < d->n; i++)
        if (d->hops[i]->kind == H_TREAD && d->hops[i]->name && !strcmp(d->hops[i]->name, "X"))
            return d->hops[i]->cbytes < 0;
    return -1;
}

/* braid_set_compressed_linalg reaches the planner (the loop's read of X
 * marked compressed at run time) and the run time (X compressed at the
 * loop's entry: the outputs Z and X, one block, come back as separate
 * decompressed copies); bad modes are errors and keep the program. */
static void test_compressed_linalg(void)
{
    const char *out[] = {"s", "Z", "X"};
    char *err = NULL;
    BraidScript *sc = braid_prepare("X = floor(rand(rows=5000, cols=4, min=0, max=4.99, seed=3))\n"
                                    "s = 0\nfor (i in 1:5) {\n  s = s + sum(X^2)\n}\nZ = X\n",
                                    NULL, 0, out, 3, &err);
    T_CHECK(sc != NULL, "cla: prepare: %s", err ? err : "");
    const char *modes[] = {"false", "TRUE", "false", "auto", "true"};
    const bool marked[] = {false, true, false, true, true};   /* auto: compressed only if it pays */
    double want = -1;
    for (int m = 0; m < 5; m++) {
        T_CHECK(braid_set_compressed_linalg(sc, modes[m]) == 0, "cla %s: %s", modes[m], braid_error(sc));
        T_CHECK(loop_read_marked(sc) == marked[m], "cla %s: the planner marks the loop's read: %d", modes[m],
                loop_read_marked(sc));
        T_CHECK(braid_execute(sc) == 0, "cla %s: execute: %s", modes[m], braid_error(sc));
        double s = 0;
        BraidMatrix z, x;
        T_CHECK(braid_get_double(sc, "s", &s) == 0 && (want < 0 || s == want), "cla %s: s %g, want %g", modes[m],
                s, want);
        if (want < 0) want = s;
        T_CHECK(braid_get_matrix_view(sc, "Z", true, &z) == 0 && braid_get_matrix_view(sc, "X", true, &x) == 0 &&
                    z.rows == 5000 && !memcmp(z.data, x.data, sizeof(double) * 5000 * 4),
                "cla %s: views", modes[m]);
        T_CHECK(m == 3 || (z.data != x.data) == marked[m], "cla %s: Z and X %s", modes[m],
                marked[m] ? "compressed, decompressed apart" : "one block");
        braid_matrix_free(&z);
        braid_matrix_free(&x);
    }
    T_CHECK(braid_set_compressed_linalg(sc, "maybe") != 0 && strstr(braid_error(sc), "'maybe'") &&
                braid_set_compressed_linalg(sc, NULL) != 0,
            "cla: bad modes are errors: %s", braid_error(sc));
    T_CHECK(loop_read_marked(sc) == 1, "cla: a bad mode keeps the program");
    braid_script_free(sc);
}

/* Column-major input copied by its strides, and strided rows. */
static void test_strided(void)
{
    const char *in[] = {"X"}, *out[] = {"r"};
    BraidScript *sc = braid_prepare("r = rowSums(X * t(seq(1, ncol(X))))\n", in, 1, out, 1, NULL);
    double F[6] = {1, 4, 2, 5, 3, 6};   /* [[1,2,3],[4,5,6]] in column-major order */
    T_CHECK(braid_bind_matrix_strided(sc, "X", F, 2, 3, 1, 2) == 0, "bind column-major");
    T_CHECK(braid_execute(sc) == 0, "execute: %s", braid_error(sc));
    BraidMatrix r;
    T_CHECK(braid_get_matrix_view(sc, "r", true, &r) == 0 && r.rows == 2 && r.data[0] == 14 && r.data[1] == 32,
            "column-major cells %g %g", r.data[0], r.data[1]);
    braid_matrix_free(&r);
    double B[8] = {1, 2, 3, -1, 4, 5, 6, -1};   /* 2x3 rows padded to 4 */
    T_CHECK(braid_bind_matrix_strided(sc, "X", B, 2, 3, 4, 1) == 0 && braid_execute(sc) == 0, "padded rows");
    T_CHECK(braid_get_matrix_view(sc, "r", true, &r) == 0 && r.data[0] == 14 && r.data[1] == 32, "padded cells");
    braid_matrix_free(&r);
    braid_script_free(sc);
}

/* The recompiled plan of sc's last run (braid_trace_recompile on):
 * does it transpose anything but a vector? */
static bool transposes_matrix(BraidScript *sc)
{
    char *t = NULL;
    if (braid_explain(sc, "recompile_hops", &t)) return true;
    bool found = false;
    for (const char *l = t; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        long long r, c;
        const char *op = strstr(l, ") t  (");
        const char *dims = op ? strchr(op, '[') : NULL;
        if (dims && sscanf(dims, "[%lld,%lld", &r, &c) == 2 && r > 1 && c > 1) found = true;
    }
    braid_free(t);
    return found;
}

/* A column-major buffer is bound as the row-major view of its transpose
 * and read as t(view): each script gives the row-major binding's result
 * (integer cells: exact), and the scripts whose rewrites remove the
 * transpose run without materializing one. */
static void test_colmajor(void)
{
    enum { M = 7, N = 5 };
    static const struct { const char *text; bool copy_free; } scripts[] = {
        {"R = t(X) %*% X", true},   {"R = X %*% t(X)", true},  {"R = as.matrix(sum(X))", true},
        {"R = X %*% v", true},      {"R = t(X) %*% w", true},  {"R = colSums(X)", true},
        {"R = rowSums(X * 2)", true}, {"R = t(X)", true},      {"R = sum(abs(X - 1)) + X[2:3, 4]", false},
        {"R = X + t(Y)", false},    {"R = X", false},
        {"R = X\nfor (i in 1:2) R = R + X", false},
    };
    double C[M * N], F[M * N], Y[N * M], v[N], w[M];
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) C[i * N + j] = F[j * M + i] = (double)((i * 3 + j * 5) % 7) - 3;
    for (int k = 0; k < M * N; k++) Y[k] = k % 4;
    for (int j = 0; j < N; j++) v[j] = j - 2;
    for (int i = 0; i < M; i++) w[i] = i % 3;
    for (size_t k = 0; k < sizeof scripts / sizeof *scripts; k++) {
        const char *in[] = {"X", "v", "w", "Y"}, *out[] = {"R"};
        BraidScript *sc = braid_prepare(scripts[k].text, in, 4, out, 1, NULL);
        T_CHECK(sc != NULL, "colmajor: prepare %s", scripts[k].text);
        if (!sc) continue;
        braid_bind_matrix(sc, "v", v, N, 1);
        braid_bind_matrix(sc, "w", w, M, 1);
        braid_bind_matrix(sc, "Y", Y, N, M);
        braid_trace_recompile(sc, true);
        BraidMatrix want = {0}, got = {0};
        /* row-major, column-major, row-major again: the prepared program
         * and its transposed variant in turn */
        for (int pass = 0; pass < 3; pass++) {
            released = 0;
            int rc = pass == 1 ? braid_bind_matrix_view_colmajor(sc, "X", F, M, N, count_release, &released)
                               : braid_bind_matrix_view(sc, "X", C, M, N, no_release, NULL);
            T_CHECK(rc == 0 && braid_execute(sc) == 0, "colmajor %s (pass %d): %s", scripts[k].text, pass,
                    braid_error(sc));
            BraidMatrix *r = pass == 0 ? &want : &got;
            if (pass == 2) braid_matrix_free(&got);
            T_CHECK(braid_get_matrix_view(sc, "R", true, r) == 0, "colmajor %s: output", scripts[k].text);
            if (pass == 1 && scripts[k].copy_free)
                T_CHECK(!transposes_matrix(sc), "colmajor %s: a transpose was materialized", scripts[k].text);
            if (pass == 0 || !want.data || !got.data) continue;
            bool same = got.rows == want.rows && got.cols == want.cols &&
                        !memcmp(got.data, want.data, (size_t)(want.rows * want.cols) * sizeof(double));
            T_CHECK(same, "colmajor %s (pass %d): differs from row-major", scripts[k].text, pass);
        }
        if (!strcmp(scripts[k].text, "R = t(X)")) {
            released = 0;
            braid_bind_matrix_view_colmajor(sc, "X", F, M, N, count_release, &released);
            braid_execute(sc);
            BraidMatrix t;
            T_CHECK(braid_get_matrix_view(sc, "R", false, &t) == 0 && t.data == F && !t.writable,
                    "t(X) of a column-major X is the caller's buffer");
            braid_matrix_free(&t);
        }
        braid_matrix_free(&want);
        braid_matrix_free(&got);
        braid_script_free(sc);
        T_CHECK(released == 1, "colmajor %s: released once (%d)", scripts[k].text, released);
    }
}

/* CSC arrays are the CSR arrays of the transpose: bound as such and read
 * as t(.), with CSC's words in errors. */
static void test_csc(void)
{
    const char *in[] = {"X"}, *out[] = {"D", "G", "c"};
    BraidScript *sc = braid_prepare("D = X + 0\nG = t(X) %*% X\nc = colSums(X)\n", in, 1, out, 3, NULL);
    /* [[0, 2, 0, 1], [0, 0, 0, 0], [3, 0, 0, 4]] by columns */
    int64_t cp[5] = {0, 1, 2, 2, 4};
    int32_t ri[4] = {2, 0, 0, 2};
    double v[4] = {3, 2, 1, 4};
    double want[12] = {0, 2, 0, 1, 0, 0, 0, 0, 3, 0, 0, 4};
    released = 0;
    T_CHECK(braid_bind_csc(sc, "X", 3, 4, cp, 64, ri, 32, v, count_release, &released) == 0, "bind CSC");
    T_CHECK(released == 0 && braid_execute(sc) == 0, "CSC execute: %s", braid_error(sc));
    BraidMatrix D, G, c;
    T_CHECK(braid_get_matrix_view(sc, "D", true, &D) == 0 && D.rows == 3 && !memcmp(D.data, want, sizeof want),
            "CSC cells");
    T_CHECK(braid_get_matrix_view(sc, "G", true, &G) == 0 && G.rows == 4 && G.data[0] == 9 && G.data[3] == 12 &&
            G.data[15] == 17 && G.data[5] == 4, "CSC t(X) %%*%% X");
    T_CHECK(braid_get_matrix_view(sc, "c", true, &c) == 0 && c.cols == 4 && c.data[0] == 3 && c.data[3] == 5,
            "CSC colSums");
    braid_matrix_free(&D);
    braid_matrix_free(&G);
    braid_matrix_free(&c);
    int32_t bad[4] = {0, 7, 0, 2};
    T_CHECK(braid_bind_csc(sc, "X", 3, 4, cp, 64, bad, 32, v, NULL, NULL) != 0 &&
            strstr(braid_error(sc), "CSC row index 7 out of range [0, 3) in column 1"), "CSC error: %s",
            braid_error(sc));
    braid_script_free(sc);
    T_CHECK(released == 1, "CSC released once (%d)", released);
}

/* CSR in braid's form is borrowed; other forms are copied into it; bad
 * structure is an error. */
static void test_csr(void)
{
    const char *in[] = {"X"}, *out[] = {"S", "D", "c"};
    BraidScript *sc = braid_prepare("S = X\nD = X + 0\nc = colSums(X)\n", in, 1, out, 3, NULL);
    /* [[0, 2, 0, 1], [0, 0, 0, 0], [3, 0, 0, 4]] */
    int64_t rp[4] = {0, 2, 2, 4};
    int32_t ci[4] = {1, 3, 0, 3};
    double v[4] = {2, 1, 3, 4};
    double want[12] = {0, 2, 0, 1, 0, 0, 0, 0, 3, 0, 0, 4};
    released = 0;
    T_CHECK(braid_bind_csr(sc, "X", 3, 4, rp, 64, ci, 32, v, count_release, &released) == 0, "bind CSR");
    T_CHECK(released == 0 && braid_execute(sc) == 0, "execute: %s", braid_error(sc));
    BraidMatrix S, D, c;
    T_CHECK(braid_get_matrix_view(sc, "S", false, &S) == 0 && S.sparse && S.indices == ci && S.values == v &&
            S.indptr == rp && S.nnz == 4, "S = X returns the caller's CSR arrays");
    T_CHECK(braid_get_matrix_view(sc, "D", true, &D) == 0 && !memcmp(D.data, want, sizeof want), "densified");
    T_CHECK(braid_get_matrix_view(sc, "c", true, &c) == 0 && c.cols == 4 && c.data[3] == 5, "colSums");
    braid_matrix_free(&D);
    braid_matrix_free(&c);
    /* unsorted, a duplicate, a stored zero, 32-bit indptr, 64-bit indices */
    int32_t rp32[4] = {0, 4, 4, 6};
    int64_t ci64[6] = {3, 1, 2, 3, 3, 0};
    double v2[6] = {0.5, 2, 0, 0.5, 4, 3};
    T_CHECK(braid_bind_csr(sc, "X", 3, 4, rp32, 32, ci64, 64, v2, count_release, &released) == 0 && released == 1,
            "non-canonical CSR copied, released at once (%d)", released);
    T_CHECK(braid_execute(sc) == 0 && braid_get_matrix_view(sc, "D", true, &D) == 0 &&
            !memcmp(D.data, want, sizeof want), "non-canonical CSR normalized");
    braid_matrix_free(&D);
    int32_t bad[4] = {0, 2, 1, 4};
    T_CHECK(braid_bind_csr(sc, "X", 3, 4, bad, 32, ci, 32, v, NULL, NULL) != 0 && strstr(braid_error(sc), "indptr"),
            "decreasing indptr: %s", braid_error(sc));
    int32_t oob[4] = {1, 7, 0, 3};
    T_CHECK(braid_bind_csr(sc, "X", 3, 4, rp, 64, oob, 32, v, NULL, NULL) != 0 && strstr(braid_error(sc), "range"),
            "column out of range: %s", braid_error(sc));
    braid_script_free(sc);
    T_CHECK(released == 1, "the S view still holds the CSR arrays");
    braid_matrix_free(&S);
    T_CHECK(released == 2, "released after the last view");
}

/* Frames: columns of four types in, a frame and its numbers out. */
static void test_frames(void)
{
    const char *in[] = {"F"}, *out[] = {"G", "s", "T"};
    BraidScript *sc = braid_prepare("G = F\ns = sum(as.matrix(F[, 2:4]))\nT = F[2:3, 1]\n", in, 1, out, 3, NULL);
    const char *names[3] = {"a", NULL, "c"};
    double d[3] = {0.5, 1.5, 2.5};
    int64_t i[3] = {10, 20, 30};
    uint8_t b[3] = {1, 0, 1};
    BraidColumn cols[4] = {{"name", BRAID_COL_STRING, names}, {"x", BRAID_COL_DOUBLE, d},
                           {NULL, BRAID_COL_INT, i}, {"flag", BRAID_COL_BOOL, b}};
    T_CHECK(braid_bind_frame(sc, "F", 3, cols, 4) == 0, "bind frame: %s", braid_error(sc));
    names[0] = "changed";   /* copied at binding */
    T_CHECK(braid_execute(sc) == 0, "execute: %s", braid_error(sc));
    double sum;
    T_CHECK(braid_get_double(sc, "s", &sum) == 0 && sum == 4.5 + 60 + 2, "frame numbers %g", sum);
    BraidFrame g, t;
    T_CHECK(braid_output_kind(sc, "G") == BRAID_FRAME && braid_get_frame_view(sc, "G", &g) == 0 && g.rows == 3 &&
            g.cols == 4, "frame output");
    T_CHECK(g.cols == 4 && !strcmp(g.columns[0].name, "name") && !strcmp(g.columns[2].name, "C3") &&
            g.columns[0].type == BRAID_COL_STRING && g.columns[3].type == BRAID_COL_BOOL,
            "names and types");
    const char *const *gs = g.columns[0].data;
    T_CHECK(!strcmp(gs[0], "a") && gs[1] == NULL && ((const int64_t *)g.columns[2].data)[2] == 30 &&
            ((const double *)g.columns[1].data)[1] == 1.5, "cells");
    T_CHECK(braid_get_frame_view(sc, "T", &t) == 0 && t.rows == 2 && t.cols == 1 &&
            !strcmp(((const char *const *)t.columns[0].data)[1], "c"), "a frame slice");
    braid_frame_free(&t);
    T_CHECK(braid_get_frame_view(sc, "s", &t) != 0 && !t.handle, "a scalar is no frame");
    braid_script_free(sc);
    T_CHECK(((const double *)g.columns[1].data)[2] == 2.5, "a frame view outlives its script");
    braid_frame_free(&g);
    BraidColumn bad = {"x", (BraidColType)9, d};
    sc = braid_prepare("n = nrow(F)\n", in, 1, out, 0, NULL);
    T_CHECK(braid_bind_frame(sc, "F", 3, &bad, 1) != 0, "unknown column type");
    braid_script_free(sc);
}

/* Lists in (nested, named) and out. */
static void test_lists(void)
{
    const char *in[] = {"L"}, *out[] = {"R", "s"};
    BraidScript *sc = braid_prepare("s = sum(as.matrix(L[1])) + as.scalar(L[\"k\"]) + length(L)\n"
                                    "R = list(a = as.matrix(L[1]) * 2, b = \"x\", c = 3, d = L)\n",
                                    in, 1, out, 2, NULL);
    T_CHECK(sc != NULL, "prepare");
    if (!sc) return;
    BraidList *l = braid_list_new(), *inner = braid_list_new();
    double m[4] = {1, 2, 3, 4};
    T_CHECK(braid_list_append_matrix(l, NULL, m, 2, 2) == 0 && braid_list_append_double(l, "k", 0.5) == 0 &&
            braid_list_append_string(inner, "t", "deep") == 0 && braid_list_append_list(l, "in", inner) == 0 &&
            braid_list_append_list(l, "self", l) != 0, "build a list");
    T_CHECK(braid_bind_list(sc, "L", l) == 0 && braid_execute(sc) == 0, "execute: %s", braid_error(sc));
    double s;
    T_CHECK(braid_get_double(sc, "s", &s) == 0 && s == 10 + 0.5 + 3, "list items in the script %g", s);
    BraidList *r, *d, *dd;
    T_CHECK(braid_output_kind(sc, "R") == BRAID_LIST && braid_get_list(sc, "R", &r) == 0 &&
            braid_list_length(r) == 4 && !strcmp(braid_list_name(r, 1), "b"), "a list output");
    BraidMatrix a;
    char *b;
    int64_t c;
    T_CHECK(braid_list_get_matrix_view(r, 0, true, &a) == 0 && a.rows == 2 && a.data[3] == 8, "matrix item");
    T_CHECK(braid_list_get_string(r, 1, &b) == 0 && !strcmp(b, "x"), "string item");
    T_CHECK(braid_list_kind(r, 2) == BRAID_DOUBLE || (braid_list_get_int(r, 2, &c) == 0 && c == 3), "number item");
    T_CHECK(braid_list_get_list(r, 3, &d) == 0 && braid_list_length(d) == 3 && braid_list_get_list(d, 2, &dd) == 0 &&
            braid_list_kind(dd, 0) == BRAID_STRING, "nested lists");
    T_CHECK(braid_list_kind(r, 9) == BRAID_NONE && braid_list_get_double(r, 1, &s) != 0 && !braid_list_name(r, -1),
            "bad index or kind");
    braid_free(b);
    braid_matrix_free(&a);
    braid_list_free(dd);
    braid_list_free(d);
    braid_list_free(r);
    braid_list_free(inner);
    braid_list_free(l);
    braid_script_free(sc);
}

/* A frame inside a list, in (copied) and out (a view of braid's columns). */
static void test_list_frames(void)
{
    const char *in[] = {"L"}, *out[] = {"R", "s"};
    BraidScript *sc = braid_prepare("G = as.frame(L[\"f\"])\ns = as.scalar(G[2, 2]) + nrow(G)\n"
                                    "R = list(g = G, k = L[\"k\"])\n", in, 1, out, 2, NULL);
    T_CHECK(sc != NULL, "prepare");
    if (!sc) return;
    const char *names[] = {"a", NULL, "c"};
    double x[] = {0.5, 1.5, 2.5};
    BraidColumn cols[] = {{"name", BRAID_COL_STRING, names}, {"x", BRAID_COL_DOUBLE, x}};
    BraidList *l = braid_list_new();
    T_CHECK(braid_list_append_frame(l, "f", 3, cols, 2) == 0 && braid_list_append_int(l, "k", 7) == 0,
            "append a frame");
    BraidColumn bad[] = {{"x", BRAID_COL_DOUBLE, NULL}};
    T_CHECK(braid_list_append_frame(l, "bad", 3, bad, 1) != 0 && braid_list_length(l) == 2,
            "a column without data is refused");
    x[1] = 99;   /* copied when appended */
    double s = 0;
    T_CHECK(braid_bind_list(sc, "L", l) == 0 && braid_execute(sc) == 0 && braid_get_double(sc, "s", &s) == 0 &&
            s == 1.5 + 3, "a frame item in the script: %g %s", s, braid_error(sc));
    BraidList *r = NULL;
    BraidFrame f;
    T_CHECK(braid_get_list(sc, "R", &r) == 0 && braid_list_kind(r, 0) == BRAID_FRAME, "a frame item out");
    T_CHECK(r && braid_list_get_frame_view(r, 1, &f) != 0, "a scalar item is no frame");
    if (r && braid_list_get_frame_view(r, 0, &f) == 0) {
        const char *const *nm = f.columns[0].data;
        const double *xv = f.columns[1].data;
        T_CHECK(f.rows == 3 && f.cols == 2 && !strcmp(f.columns[1].name, "x") && !strcmp(nm[0], "a") && !nm[1] &&
                xv[1] == 1.5 && xv[2] == 2.5, "the frame item's columns");
        braid_list_free(r);
        braid_script_free(sc);   /* the view outlives the list and the script */
        sc = NULL;
        T_CHECK(!strcmp(nm[2], "c") && xv[0] == 0.5, "the view after the script is freed");
        braid_frame_free(&f);
    } else {
        T_CHECK(false, "list frame view");
        braid_list_free(r);
    }
    braid_list_free(l);
    braid_script_free(sc);
}

/* Separate scripts run concurrently from separate threads. */
typedef struct Job { int id; int ok; } Job;

static void *run_job(void *arg)
{
    Job *j = arg;
    const char *in[] = {"X"}, *out[] = {"g"};
    BraidScript *sc = braid_prepare("G = t(X) %*% X\ng = sum(G) + trace(G)\n", in, 1, out, 1, NULL);
    double X[200];
    for (int i = 0; i < 200; i++) X[i] = (i % 7) + j->id;
    double want = 0;   /* sum(t(X) %*% X) = sum_i rowsum_i^2; its trace = sum(X^2) */
    for (int i = 0; i < 50; i++) {
        double rs = 0;
        for (int c = 0; c < 4; c++) { rs += X[i * 4 + c]; want += X[i * 4 + c] * X[i * 4 + c]; }
        want += rs * rs;
    }
    for (int k = 0; sc && k < 30; k++) {
        double g;
        if (braid_bind_matrix_view(sc, "X", X, 50, 4, no_release, NULL) || braid_execute(sc) ||
            braid_get_double(sc, "g", &g) || g != want)
            break;
        j->ok++;
    }
    braid_script_free(sc);
    return NULL;
}

static void test_threads(void)
{
    pthread_t t[2];
    Job j[2] = {{1, 0}, {2, 0}};
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, run_job, &j[i]);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    T_CHECK(j[0].ok == 30 && j[1].ok == 30, "concurrent scripts: %d, %d runs right", j[0].ok, j[1].ok);
}

/* Introspection: the builtin names and signatures clients generate
 * wrappers from, and the plan as text (static, and recompiled with the
 * bound sizes, where fused operators show). */
static void test_introspection(void)
{
    char **names;
    int n;
    T_CHECK(braid_builtin_names(&names, &n) == 0 && n > 100, "builtin names: %d", n);
    int lib = 0, native = 0, sorted = 1;
    for (int i = 0; i < n; i++) {
        lib += !strcmp(names[i], "l2svm");
        native += !strcmp(names[i], "colSums");
        if (i > 0 && strcmp(names[i - 1], names[i]) >= 0) sorted = 0;
    }
    T_CHECK(lib == 1 && native == 1 && sorted, "names: the library and the native table, sorted, once each");
    for (int i = 0; i < n; i++) braid_free(names[i]);
    braid_free(names);
    char *err = NULL;
    BraidSignature *s = braid_builtin_signature("kmeans", &err);
    T_CHECK(s && s->library && s->nin > 2 && !strcmp(s->in[0].name, "X") && !strcmp(s->in[0].type, "matrix") &&
            !s->in[0].deflt && !strcmp(s->in[1].name, "k") && s->in[1].deflt && s->nout == 2 &&
            !strcmp(s->out[0].name, "C"), "kmeans' signature");
    braid_signature_free(s);
    s = braid_builtin_signature("rand", &err);
    T_CHECK(s && !s->library && !s->sidefx && s->nout == 1 && !strcmp(s->out[0].type, "matrix") &&
            !strcmp(s->in[0].name, "rows") && !strcmp(s->in[0].deflt, "1"), "rand's signature");
    braid_signature_free(s);
    s = braid_builtin_signature("sum", &err);
    T_CHECK(s && !strcmp(s->out[0].type, "scalar"), "sum of all cells is a scalar");
    braid_signature_free(s);
    s = braid_builtin_signature("cbind", &err);
    T_CHECK(s && s->varargs && s->nin == 0, "cbind takes varargs");
    braid_signature_free(s);
    s = braid_builtin_signature("print", &err);
    T_CHECK(s && s->sidefx, "print has a side effect");
    braid_signature_free(s);
    T_CHECK(!braid_builtin_signature("no_such_fn", &err) && err && strstr(err, "no_such_fn"), "unknown: %s", err);
    braid_free(err);

    const char *in[] = {"X"}, *out[] = {"s"};
    BraidScript *sc = braid_prepare("s = sum(exp(X * 2) + 1)", in, 1, out, 1, &err);
    char *text = NULL;
    T_CHECK(sc && braid_explain(sc, "hops", &text) == 0 && strstr(text, "TRead") && strstr(text, "ua(sum)"),
            "explain hops: %s", text ? text : braid_error(sc));
    braid_free(text);
    T_CHECK(braid_explain(sc, "nonsense", &text) != 0 && strstr(braid_error(sc), "kind"), "a bad explain kind");
    double X[200 * 10];
    for (int i = 0; i < 2000; i++) X[i] = i % 7;
    braid_trace_recompile(sc, true);
    T_CHECK(braid_bind_matrix(sc, "X", X, 200, 10) == 0 && braid_execute(sc) == 0, "run: %s", braid_error(sc));
    T_CHECK(braid_explain(sc, "recompile_hops", &text) == 0 && strstr(text, "[200,10,") && strstr(text, "spoof"),
            "recompiled with sizes, fused: %s", text);
    braid_free(text);
    T_CHECK(braid_explain(sc, "recompile_dot", &text) == 0 && !strncmp(text, "digraph \"<script>:1 block (recompiled)", 38) &&
                strstr(text, "[200 x 10]") && strstr(text, "spoof"),
            "recompiled as Graphviz: %s", text);
    braid_free(text);
    braid_script_free(sc);

    /* loop statistics: off by default, per run when on */
    const char *lin[] = {"n"}, *lout[] = {"i"};
    sc = braid_prepare("i = 0\nwhile (i < n) {\n  for (j in 1:2) { i = i + 0.5 }\n}", lin, 1, lout, 1, &err);
    const BraidLoop *loops;
    T_CHECK(sc && braid_bind_int(sc, "n", 3) == 0 && braid_execute(sc) == 0 && braid_loops(sc, &loops) == 0,
            "no loop statistics unless asked");
    braid_count_loops(sc, true);
    T_CHECK(braid_bind_int(sc, "n", 4) == 0 && braid_execute(sc) == 0 && braid_loops(sc, &loops) == 2, "two loops");
    T_CHECK(loops[0].line == 3 && loops[0].entries == 4 && loops[0].iterations == 8 && loops[0].max_iterations == 2 &&
                !strcmp(loops[0].file, "<script>"),
            "the for: left first, 4 entries of 2 (%d: %lld %lld)", loops[0].line, (long long)loops[0].entries,
            (long long)loops[0].iterations);
    T_CHECK(loops[1].line == 2 && loops[1].col == 1 && loops[1].entries == 1 && loops[1].iterations == 4,
            "the while: 4 iterations at 2:1 (%d:%d %lld)", loops[1].line, loops[1].col, (long long)loops[1].iterations);
    T_CHECK(braid_bind_int(sc, "n", 1) == 0 && braid_execute(sc) == 0 && braid_loops(sc, &loops) == 2 &&
                loops[1].iterations == 1, "the last run's counts only");
    braid_script_free(sc);
}

/* Collected print() output, per run and also of a failed run; the
 * library folder set by braid_set_home. */
static void test_output_and_home(void)
{
    char *err = NULL;
    const char *out[] = {"x"};
    BraidScript *sc = braid_prepare("print(\"a\")\nx = 2\nprint(\"b \" + x)\nif (x > 1) { print(\"c\") }\n",
                                    NULL, 0, out, 1, &err);
    T_CHECK(sc != NULL, "prepare: %s", err ? err : "");
    if (!sc) return;
    T_CHECK(!strcmp(braid_output(sc), ""), "no output before a run");
    braid_capture_output(sc, true);
    T_CHECK(braid_execute(sc) == 0 && !strcmp(braid_output(sc), "a\nb 2\nc\n"), "collected: '%s'", braid_output(sc));
    T_CHECK(braid_execute(sc) == 0 && !strcmp(braid_output(sc), "a\nb 2\nc\n"), "each run its own: '%s'",
            braid_output(sc));
    braid_script_free(sc);
    sc = braid_prepare("print(\"before\")\nstop(\"boom\")\nx = 1\n", NULL, 0, out, 1, &err);
    T_CHECK(sc != NULL, "prepare: %s", err ? err : "");
    if (!sc) return;
    braid_capture_output(sc, true);
    T_CHECK(braid_execute(sc) != 0 && strstr(braid_error(sc), "boom") && !strcmp(braid_output(sc), "before\n"),
            "a failed run's output: '%s' (%s)", braid_output(sc), braid_error(sc));
    braid_script_free(sc);

    /* a library of one function in a temporary folder */
    char dir[] = "/tmp/braid-home-XXXXXX", path[256];
    T_CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(path, sizeof path, "%s/scripts", dir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/scripts/builtin", dir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/scripts/builtin/zzhome.dml", dir);
    FILE *f = fopen(path, "w");
    T_CHECK(f != NULL, "write %s", path);
    if (!f) return;
    fputs("m_zzhome = function(Double x) return (Double y) { y = 21 * x }\n", f);
    fclose(f);
    const char *saved = getenv("BRAID_HOME");
    char *home = saved ? strdup(saved) : NULL;
    unsetenv("BRAID_HOME");
    braid_set_home(dir);
    const char *ys[] = {"y"};
    sc = braid_prepare("y = zzhome(x=2)\n", NULL, 0, ys, 1, &err);
    double y = 0;
    T_CHECK(sc && braid_execute(sc) == 0 && braid_get_double(sc, "y", &y) == 0 && y == 42,
            "a function of braid_set_home's library: %s", sc ? braid_error(sc) : err);
    braid_script_free(sc);
    braid_set_home(NULL);
    free(err);
    err = NULL;
    sc = braid_prepare("y = zzhome(x=2)\n", NULL, 0, ys, 1, &err);
    T_CHECK(!sc && err && strstr(err, "zzhome"), "the default library again: %s", err ? err : "(prepared)");
    braid_script_free(sc);
    free(err);
    if (home) setenv("BRAID_HOME", home, 1);
    free(home);
    unlink(path);
    snprintf(path, sizeof path, "%s/scripts/builtin", dir);
    rmdir(path);
    snprintf(path, sizeof path, "%s/scripts", dir);
    rmdir(path);
    rmdir(dir);
}

/* A script's runs share its buffer pool (docs/DESIGN.md "Buffer pools"):
 * each run's large blocks come from the last run's, and the results stay
 * the reference's, zeros included (a sparse-by-dense product accumulates
 * into a block handed out zeroed; the results of run k-1 were left in the
 * blocks it reuses). */
static void test_pool_runs(void)
{
    enum { N = 40000, M = 30, K = 3 };
    char *err = NULL;
    const char *in[] = {"X", "S", "V", "s"}, *out[] = {"Y", "Z"};
    BraidScript *sc = braid_prepare("Y = X * s + 1\nZ = S %*% V\n", in, 4, out, 2, &err);
    T_CHECK(sc != NULL, "prepare: %s", err ? err : "");
    double *X = malloc(sizeof(double) * N * 2), *S = calloc((size_t)N * M, sizeof(double));
    double *V = malloc(sizeof(double) * M * K), *ref = malloc(sizeof(double) * N * K);
    for (int64_t i = 0; i < N * 2; i++) X[i] = (double)(i % 97) - 48;
    for (int64_t i = 0; i < N; i++)
        if (i % 3 == 0) S[i * M + (i * 7) % M] = 1 + (double)(i % 5);   /* a third of the rows: one non-zero */
    T_CHECK(braid_bind_matrix(sc, "X", X, N, 2) == 0 && braid_bind_matrix(sc, "S", S, N, M) == 0, "bind X, S");
    for (int k = 1; k <= 4; k++) {
        for (int64_t i = 0; i < M * K; i++) V[i] = (double)((i * k) % 11) - 5 + k;
        T_CHECK(braid_bind_matrix(sc, "V", V, M, K) == 0 && braid_bind_double(sc, "s", k) == 0, "bind V, s");
        T_CHECK(braid_execute(sc) == 0, "pooled run %d: %s", k, braid_error(sc));
        double *Y = NULL, *Z = NULL;
        int64_t r, c, r2, c2;
        T_CHECK(braid_get_matrix(sc, "Y", &Y, &r, &c) == 0 && r == N && c == 2, "get Y");
        T_CHECK(braid_get_matrix(sc, "Z", &Z, &r2, &c2) == 0 && r2 == N && c2 == K, "get Z");
        int bad = 0;
        for (int64_t i = 0; Y && i < N * 2; i++) bad += Y[i] != X[i] * k + 1;
        for (int64_t i = 0; i < N; i++)
            for (int j = 0; j < K; j++) {
                double a = 0;
                for (int q = 0; q < M; q++) a += S[i * M + q] * V[q * K + j];
                ref[i * K + j] = a;
            }
        for (int64_t i = 0; Z && i < N * K; i++) bad += Z[i] != ref[i];
        T_CHECK(bad == 0, "pooled run %d: results equal the reference (%d cells differ)", k, bad);
        braid_free(Y);
        braid_free(Z);
    }
    braid_script_free(sc);
    free(X); free(S); free(V); free(ref);
}

int main(void)
{
    test_pool_runs();
    test_output_and_home();
    test_introspection();
    test_dense_view();
    test_compressed_view();
    test_compressed_linalg();
    test_strided();
    test_colmajor();
    test_csc();
    test_csr();
    test_frames();
    test_lists();
    test_list_frames();
    test_threads();
    char *err = NULL;
    const char *in[] = {"X", "s", "name"}, *out[] = {"Y", "total", "msg", "n"};
    BraidScript *sc = braid_prepare("Y = X * s + 1\ntotal = sum(Y)\nmsg = \"hi \" + name\nn = nrow(X)\n",
                                    in, 3, out, 4, &err);
    T_CHECK(sc != NULL, "prepare: %s", err ? err : "");
    double X[6] = {1, 2, 3, 4, 5, 6};
    T_CHECK(braid_bind_matrix(sc, "X", X, 2, 3) == 0, "bind X");
    T_CHECK(braid_bind_string(sc, "name", "braid") == 0, "bind name");
    T_CHECK(braid_bind_double(sc, "nosuch", 1) != 0 && strstr(braid_error(sc), "nosuch"), "undeclared input");
    T_CHECK(braid_execute(sc) != 0 && strstr(braid_error(sc), "'s'"), "unbound input reported: %s", braid_error(sc));
    for (int k = 1; k <= 3; k++) {
        braid_bind_double(sc, "s", k);
        T_CHECK(braid_execute(sc) == 0, "execute %d: %s", k, braid_error(sc));
        double *Y, total, n;
        int64_t r, c;
        T_CHECK(braid_get_matrix(sc, "Y", &Y, &r, &c) == 0 && r == 2 && c == 3, "get Y");
        T_CHECK(Y[5] == 6.0 * k + 1, "Y value %g", Y[5]);
        braid_free(Y);
        T_CHECK(braid_get_double(sc, "total", &total) == 0 && total == 21.0 * k + 6, "total %g", total);
        T_CHECK(braid_get_double(sc, "n", &n) == 0 && n == 2, "n");
        char *msg;
        T_CHECK(braid_get_string(sc, "msg", &msg) == 0 && !strcmp(msg, "hi braid"), "msg");
        braid_free(msg);
    }
    double *none;
    int64_t r, c;
    T_CHECK(braid_get_matrix(sc, "nope", &none, &r, &c) != 0, "missing output");
    braid_script_free(sc);

    /* compile errors come back as strings with a position */
    sc = braid_prepare("x = 1\ny = (x + \n", NULL, 0, NULL, 0, &err);
    T_CHECK(sc == NULL && err && strstr(err, "<script>:3:1:"), "syntax error message: %s",
            err ? err : "");
    braid_free(err);
    err = NULL;
    sc = braid_prepare("y = undefinedThing + 1\n", NULL, 0, NULL, 0, &err);
    T_CHECK(sc == NULL && err && strstr(err, "undefinedThing"), "undefined variable: %s", err ? err : "");
    braid_free(err);

    /* run-time errors */
    const char *in2[] = {"A"}, *out2[] = {"B"};
    sc = braid_prepare("B = A %*% A\n", in2, 1, out2, 1, NULL);
    double A[6] = {1, 2, 3, 4, 5, 6};
    braid_bind_matrix(sc, "A", A, 2, 3);
    T_CHECK(braid_execute(sc) != 0 && strstr(braid_error(sc), "dimension") && strstr(braid_error(sc), "<script>:1:"),
            "dimension error at its position: %s", braid_error(sc));
    braid_bind_matrix(sc, "A", A, 2, 2);
    T_CHECK(braid_execute(sc) == 0, "second run after an error");
    braid_script_free(sc);
    return t_done("test_api");
}
