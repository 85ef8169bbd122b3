/* test_cla_auto.c: the run time's decisions about compressed matrices
 * (runtime/cla_rt.c, docs/cla.md), read back from -stats:
 * - when sysds.compressed.linalg=auto compresses a loop's read-only
 *   matrix ("CLA compressions: N"): from the compiled loop (which uses
 *   take the matrix compressed, which gain over the dictionaries,
 *   functions the loop calls), the iteration count and the memory budget
 *   (set in the configuration, so the decisions do not depend on the
 *   machine);
 * - which way a fused Row operator over a compressed input runs
 *   ("spoofRowCLA": its generated code over decompressed rows; else its
 *   unfused plan), from the costs of both (cg_cla_row_unfused).
 * The data are seeded. Runs build/braid (or $BRAID). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t.h"
#include "t_dml.h"

static const char *braid_bin(void)
{
    const char *b = getenv("BRAID");
    return b ? b : "build/braid";
}

static bool write_file(char *path, const char *text)
{
    int fd = mkstemp(path);
    if (fd < 0) return false;
    size_t n = strlen(text);
    bool ok = write(fd, text, n) == (ssize_t)n;
    close(fd);
    return ok;
}

static bool g_rowcla;   /* the last run ran a Row operator over decompressed rows */
static bool g_rowprod;  /* ... whose products of the main row were looked up per group */
static bool g_rowtl;    /* ... whose t(X) %*% q root took q's rows per tuple */
static bool g_tmm;      /* the last run ran t(X) %*% v as a compressed product (unfused) */
static bool g_unf;      /* the last run ran a fused operator's unfused plan (cg_cla_row_unfused) */
static bool g_mmc;      /* the last run ran X %*% B over a compressed X (ba+*) */
static long g_lazy[3];  /* the last run's deferred compress(): compressed, declined, shared */
static long g_dec;      /* the last run's decompressions */
static long g_frow;     /* the last run's fused Row operators (codegen's count) */
static double g_res[8]; /* the last run's first eight printed RESULTs */
static bool g_over;     /* the last run failed: a read's compressed matrix exceeds the budget */
static bool g_placed;   /* the last run failed: a read placed over the budget at compile time */
static long g_rd[3];    /* the last run's reads past the budget: all, compressed as read, row blocks */
static double g_held;   /* ... the most MB they held at once */

/* Compressions the script made under mode (auto, false) with the given
 * budget (bytes), -1 when it did not run; *printed gets the value it
 * printed. */
static long run_mode(const char *script, const char *mode, double budget, double *printed)
{
    char sp[] = "/tmp/braid_clauto_XXXXXX", cp[] = "/tmp/braid_clauto_XXXXXX", cfg[256], cwd[512] = "";
    snprintf(cfg, sizeof cfg,
             "<root><sysds.compressed.linalg>%s</sysds.compressed.linalg>"
             "<sysds.local.memory.budget>%.0f</sysds.local.memory.budget></root>\n", mode, budget);
    if (!write_file(sp, script) || !write_file(cp, cfg)) return -1;
    if (braid_bin()[0] != '/' && !getcwd(cwd, sizeof cwd)) return -1;
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cd /tmp && BRAID_CODEGEN_ASYNC=0 timeout -s KILL 120 %s%s%s -f %s -config %s -stats 2>&1", cwd,
             cwd[0] ? "/" : "", braid_bin(), sp, cp);
    FILE *f = popen(cmd, "r");
    char line[1024];
    long n = 0;   /* -stats prints no CLA lines without compressions */
    *printed = NAN;
    g_rowcla = g_rowprod = g_rowtl = g_tmm = g_unf = g_mmc = false;
    g_lazy[0] = g_lazy[1] = g_lazy[2] = 0;
    g_dec = g_frow = 0;
    for (int k = 0; k < 8; k++) g_res[k] = NAN;
    g_over = g_placed = false;
    g_rd[0] = g_rd[1] = g_rd[2] = 0;
    g_held = 0;
    int nres = 0;
    while (f && fgets(line, sizeof line, f)) {
        sscanf(line, "CLA deferred compress(): %ld compressed, %ld declined, %ld shared", &g_lazy[0], &g_lazy[1],
               &g_lazy[2]);
        sscanf(line, "CLA reads past the budget: %ld (%ld compressed as read, %ld row blocks; %lf MB", &g_rd[0],
               &g_rd[1], &g_rd[2], &g_held);
        long k;
        double v;
        if (sscanf(line, "CLA compressions: %ld", &k) == 1) n = k;
        else if (sscanf(line, "CLA decompressions: %ld", &k) == 1) g_dec = k;
        else if (sscanf(line, "RESULT %lf", &v) == 1) {
            *printed = v;
            if (nres < 8) g_res[nres++] = v;
        }
        else if (sscanf(line, "Codegen fused ops (C, R, MA, OP): %ld/%ld", &k, &g_frow) == 2) continue;
        if (strstr(line, "compresses to") && strstr(line, "still more than the local memory budget")) g_over = true;
        if (strstr(line, "operation 'read' needs") && strstr(line, "more than the local memory budget")) g_placed = true;
        if (!strncmp(line, "CLA compressed operations:", 26) && strstr(line, "spoofRowCLA")) g_rowcla = true;
        if (!strncmp(line, "CLA compressed operations:", 26) && strstr(line, "spoofRowCLAprod")) g_rowprod = true;
        if (!strncmp(line, "CLA compressed operations:", 26) && strstr(line, "spoofRowCLAtl")) g_rowtl = true;
        if (!strncmp(line, "CLA compressed operations:", 26) && strstr(line, "tmm=")) g_tmm = true;
        if (!strncmp(line, "CLA compressed operations:", 26) && strstr(line, "spoof=")) g_unf = true;
        if (!strncmp(line, "CLA compressed operations:", 26) && strstr(line, "ba+*=")) g_mmc = true;
    }
    if (f && pclose(f) != 0) n = -1;
    unlink(sp);
    unlink(cp);
    return n;
}

/* BRAID_TEST_TIMES=1: each run's wall and CPU seconds (the braid
 * processes it started) and the line that asked for it, on stderr. */
static long run_mode_timed(int line, const char *script, const char *mode, double budget, double *printed)
{
    double c0 = t_cpu_s(RUSAGE_CHILDREN), w0 = t_wall_s();
    long n = run_mode(script, mode, budget, printed);
    if (getenv("BRAID_TEST_TIMES"))
        fprintf(stderr, "time line %d %s cpu %.2f s wall %.2f s\n", line, mode, t_cpu_s(RUSAGE_CHILDREN) - c0,
                t_wall_s() - w0);
    return n;
}
#define run_mode(...) run_mode_timed(__LINE__, __VA_ARGS__)

/* X: 20000 x 10 with 6 distinct values per column (1.6 MB, compresses
 * about 8x); the loops read it ITERS times. */
#define DATA "X = round(rand(rows=20000, cols=10, min=0, max=5, seed=1))\nv = rand(rows=10, cols=1, seed=2)\n" \
             "B = rand(rows=10, cols=8, seed=5)\nY = rand(rows=20000, cols=8, seed=6)\n"

int main(void)
{
    t_pin_machine();   /* the CLA constants too (codegen/cla_machine.c) */
    unsetenv("BRAID_CLA_MACHINE");
    double big = 64e9, small = 4e6, r1 = 0, r2 = 0;
    struct { const char *what, *loop; double budget; long want; } cases[] = {
        /* products gain nothing over the dictionaries: data that fit stay
         * uncompressed; pressing on the budget (1.6 MB of 4 MB), compressed */
        {"products, fits", "s = 0\nfor (i in 1:30) { s = s + sum(X %*% v) }\n", big, 0},
        {"products, presses on memory", "s = 0\nfor (i in 1:30) { s = s + sum(X %*% v) }\n", small, 1},
        /* aggregates and cellwise operators gain per read: 60 reads pay */
        {"aggregates, fits", "s = 0\nfor (i in 1:30) { s = s + sum(X^2) + max(X * i) }\n", big, 1},
        /* products priced by the other side's width (the product's
         * compiled size): beside 60 aggregate reads a product with a
         * vector costs nothing, one with 8 columns loses about 3 passes
         * an iteration (X %*% B), 2 (t(X) %*% Y): not compressed */
        {"aggregates and a vector product, fits",
         "s = 0\nfor (i in 1:30) { P = X %*% v\ns = s + sum(X^2) + max(X * i) + as.scalar(P[7, 1]) }\n", big, 1},
        {"aggregates and an 8-column product, fits",
         "s = 0\nfor (i in 1:30) { P = X %*% B\ns = s + sum(X^2) + max(X * i) + as.scalar(P[7, 3]) }\n", big, 0},
        {"aggregates and an 8-column t(X) %*% Y, fits",
         "s = 0\nfor (i in 1:30) { P = t(X) %*% Y\ns = s + sum(X^2) + max(X * i) + as.scalar(P[7, 3]) }\n", big, 0},
        {"an 8-column product, presses on memory",
         "s = 0\nfor (i in 1:30) { P = X %*% B\ns = s + sum(X^2) + max(X * i) + as.scalar(P[7, 3]) }\n", small, 1},
        /* too few reads to pay for compressing */
        {"aggregates, 6 reads", "s = 0\nfor (i in 1:6) { s = s + sum(X^2) }\n", big, 0},
        /* an operator that decompresses every iteration: never (a
         * transpose the rewrites keep: sum(t(X) * i) is sum(X * i)) */
        {"transpose", "s = 0\nfor (i in 1:30) { T = t(X)\ns = s + sum(T[1:5, ] * i) }\n", small, 0},
        /* uses inside a called function count */
        {"function with aggregates",
         "f = function(Matrix[Double] A, Double i) return (Double s) { s = sum(A^2) + max(A * i) }\n"
         "s = 0\nfor (i in 1:30) { s = s + f(X, i) }\n", big, 1},
        /* fused Row operators whose main row only looked-up products and
         * t(X) %*% q roots read, 8 columns wide (no rows decompressed: per
         * group and tuple), gain like the dictionary-wise reads: kmeans'
         * distances and a multinomial gradient compress (with vectors,
         * as sum(X %*% v) above, they do not) */
        {"kmeans distances (rows not decompressed)",
         "s = 0\nfor (i in 1:30) { D = -2 * (X %*% B) + i\ns = s + sum(rowIndexMin(D)) }\n", big, 1},
        {"multinomial gradient (rows not decompressed)",
         "s = 0\nfor (i in 1:30) { E = exp(X %*% B / 10)\nG = t(X) %*% (E / rowSums(E) - i / 60)\ns = s + sum(G) }\n",
         big, 1},
        {"function with a transpose",
         "f = function(Matrix[Double] A, Double i) return (Double s) { T = t(A)\ns = sum(T[1:5, ] * i) }\n"
         "s = 0\nfor (i in 1:30) { s = s + f(X, i) }\n", small, 0},
    };
    double cref[sizeof cases / sizeof *cases];   /* their references (lz reuses two) */
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char src[2048];
        cref[k] = NAN;
        snprintf(src, sizeof src, "%s%sprint(\"RESULT \" + s)\n", DATA, cases[k].loop);
        long n = run_mode(src, "auto", cases[k].budget, &r1);
        T_CHECK(n == cases[k].want, "%s: %ld compressions, want %ld", cases[k].what, n, cases[k].want);
        /* the same result as without compression, up to the summation
         * order of the products (2e5 terms of at most 5: relative error
         * below 2e5 * 2^-53 ~ 2e-11); where auto declined, the run was
         * the uncompressed one (a result printed) */
        if (!cases[k].want) {
            T_CHECK(r1 == r1, "%s: no result", cases[k].what);
            continue;
        }
        long n0 = run_mode(src, "false", cases[k].budget, &r2);
        cref[k] = r2;
        T_CHECK(n0 == 0 && fabs(r1 - r2) <= 1e-9 * fabs(r2), "%s: result %.17g, want %.17g", cases[k].what, r1, r2);
    }
    /* compress(X) in the script (sysds.compressed.linalg=false) is
     * deferred to the first loop whose uses repay it, priced as auto
     * prices a loop (at compress()'s own least ratio): a function
     * compiled on its first call counts from the loop in its body. The
     * result as without compress(X): the same bits where it declines */
#define FN(body) "f = function(Matrix[Double] A, Matrix[Double] B) return (Double s) {\ns = 0\nfor (i in 1:30) {\n" \
                 body "}\n}\ns = f(X, B)\n"
    /* ref: the case above whose reference run is this one's (the same
     * script without compress(X), mode and budget), or -1 */
    struct { const char *what, *loop; double budget; long want; int ref; } lz[] = {
        {"compress(X), aggregates", cases[2].loop, big, 1, 2},
        {"compress(X), aggregates and an 8-column product", cases[4].loop, big, 0, -1},
        {"compress(X), products pressing on memory", cases[1].loop, small, 1, 1},
        {"compress(X), a function's loop of aggregates", FN("s = s + sum(A^2) + max(A * i)\n"), big, 1, -1},
        {"compress(X), a function's loop of 8-column products",
         FN("P = A %*% B\ns = s + sum(A^2) + max(A * i) + as.scalar(P[7, 3])\n"), big, 0, -1},
    };
    for (size_t k = 0; k < sizeof lz / sizeof *lz; k++) {
        char src[2048], ref[2048];
        snprintf(src, sizeof src, "%sX = compress(X)\n%sprint(\"RESULT \" + s)\n", DATA, lz[k].loop);
        snprintf(ref, sizeof ref, "%s%sprint(\"RESULT \" + s)\n", DATA, lz[k].loop);
        long n = run_mode(src, "false", lz[k].budget, &r1);
        T_CHECK(n == lz[k].want, "%s: %ld compressions, want %ld", lz[k].what, n, lz[k].want);
        if (lz[k].ref >= 0 && cref[lz[k].ref] == cref[lz[k].ref]) r2 = cref[lz[k].ref];
        else run_mode(ref, "false", lz[k].budget, &r2);
        T_CHECK(lz[k].want ? fabs(r1 - r2) <= 1e-9 * fabs(r2) : r1 == r2, "%s: result %.17g, want %.17g", lz[k].what,
                r1, r2);
    }
    /* what the frame runs after the deciding point counts too: at
     * compress() itself, straight-line reads (20 blocks of two
     * dictionary-wise reads repay it, 4 do not); at a loop's entry the
     * reads after the loop (6 iterations alone do not repay it, with 6
     * blocks after it they do). A function whose loop compresses its
     * copy of X leaves the compressed copy on X's block: later calls
     * take it ("shared"), parfor workers too (their compressions and
     * takings: one per iteration; a copy that lost the race is dropped) */
    {
#define SL "if (s > -1) { s = s + sum(X^2) + max(X * 3) }\n"
#define SL4 SL SL SL SL
#define LP6 "for (i in 1:6) { s = s + sum(X^2) + max(X * i) }\n"
#define FN1 "f = function(Matrix[Double] A) return (Double s) {\ns = 0\nfor (i in 1:30) {\n" \
            "s = s + sum(A^2) + max(A * i)\n}\n}\n"
#define FN6 "f = function(Matrix[Double] A) return (Double s) {\ns = 0\n" \
            "for (i in 1:6) { s = s + sum(A^2) + max(A * i) }\n}\n"
        struct { const char *what, *pre, *body; long want, shared; } st[] = {
            {"compress(X), 40 straight-line reads", "", "s = 0\n" SL4 SL4 SL4 SL4 SL4, 1, 0},
            {"compress(X), 8 straight-line reads", "", "s = 0\n" SL4, 0, 0},
            {"compress(X), a loop of 6 and 12 reads after it", "", "s = 0\n" LP6 SL4 SL SL, 1, 0},
            {"compress(X), a function called 3 times", FN1,
             "s = f(X)\nif (s > 0) { s = s + f(X) }\nif (s > 0) { s = s + f(X) }\n", 1, 2},
            {"compress(X), a function in parfor", FN1,
             "R = matrix(0, rows=8, cols=1)\nparfor (j in 1:8) {\nT = t(X)\nR[j, 1] = f(X) + sum(T[1:5, ] * j)\n}\n"
             "s = sum(R)\n", -1, 8},
        };
        for (size_t k = 0; k < sizeof st / sizeof *st; k++) {
            char src[4096], ref[4096];
            snprintf(src, sizeof src, "%s%sX = compress(X)\n%sprint(\"RESULT \" + s)\n", DATA, st[k].pre, st[k].body);
            snprintf(ref, sizeof ref, "%s%s%sprint(\"RESULT \" + s)\n", DATA, st[k].pre, st[k].body);
            long n = run_mode(src, "false", big, &r1);
            long got[3] = {g_lazy[0], g_lazy[1], g_lazy[2]};
            if (st[k].want >= 0) {
                T_CHECK(n == st[k].want && got[2] == st[k].shared, "%s: %ld compressions, %ld shared, want %ld, %ld",
                        st[k].what, n, got[2], st[k].want, st[k].shared);
            } else {   /* parfor: every iteration's call compresses or takes the copy */
                T_CHECK(n >= 1 && n == got[0] && got[0] + got[2] == st[k].shared,
                        "%s: %ld compressions, %ld compressed + %ld shared, want %ld in all", st[k].what, n, got[0],
                        got[2], st[k].shared);
            }
            if (!n) {   /* declined: the same bits as without compress(X), checked by lz's */
                T_CHECK(r1 == r1, "%s: no result", st[k].what);
                continue;
            }
            run_mode(ref, "false", big, &r2);
            T_CHECK(fabs(r1 - r2) <= 1e-9 * fabs(r2), "%s: result %.17g, want %.17g", st[k].what, r1, r2);
        }
        /* the caller's uses after a call count toward the callee's
         * decision (cla_rt_call_after), through a function g calling f,
         * under auto: f's loop of 6 alone declines (as a loop of 6
         * does); with the caller's loop of 6 after the call (counted
         * with its iterations) it compresses, and the caller's loop
         * takes the copy; the argument read in the call's block from a
         * variable (the call in an if) or written to one by it (the
         * compress() in the call's block). The first two print the same
         * result (one reference run) */
#define G "g = function(Matrix[Double] A) return (Double s) {\ns = f(A)\nif (s > 0) { s = s + 1 }\n}\n"
        struct { const char *what, *body; long want, shared; } ca[] = {
            {"compress(X), a function's loop of 6 and the caller's loop of 6 after the call",
             "s = g(X)\n" LP6, 1, 1},
            {"compress(X), a function's loop of 6 called in an if, the caller's loop of 6 after it",
             "s = 0\nif (s > -1) { s = g(X) }\n" LP6, 1, 1},
            {"compress(X), a function's loop of 6 and nothing after the call", "s = g(X)\n", 0, 0},
        };
        for (size_t k = 0; k < sizeof ca / sizeof *ca; k++) {
            char src[4096], ref[4096];
            snprintf(src, sizeof src, "%s" FN6 G "X = compress(X)\n%sprint(\"RESULT \" + s)\n", DATA, ca[k].body);
            snprintf(ref, sizeof ref, "%s" FN6 G "%sprint(\"RESULT \" + s)\n", DATA, ca[k].body);
            long n = run_mode(src, "auto", big, &r1);
            T_CHECK(n == ca[k].want && g_lazy[2] == ca[k].shared, "%s: %ld compressions, %ld shared, want %ld, %ld",
                    ca[k].what, n, g_lazy[2], ca[k].want, ca[k].shared);
            if (!n) {   /* declined (lz's check the same bits) */
                T_CHECK(r1 == r1, "%s: no result", ca[k].what);
                continue;
            }
            if (k != 1) run_mode(ref, "false", big, &r2);
            T_CHECK(fabs(r1 - r2) <= 1e-9 * fabs(r2), "%s: result %.17g, want %.17g", ca[k].what, r1, r2);
        }
        /* a call in a loop: its later runs pass the same block (the
         * argument a variable the loop does not assign), repeat the
         * callee's uses and take its compressed copy (ClaAfter.again):
         * f's compress(A) and loop of 6 decline alone (as above), called
         * in a for loop of 4 or a while loop (unknown: 8 runs) they
         * compress in the first call, the 3 later calls take the copy;
         * called with X[, 1:9] (a new block each run, none shared) they
         * decline. Without ClaAfter.again every call declines */
#define FC6 "f = function(Matrix[Double] A) return (Double s) {\nAc = compress(A)\ns = 0\n" \
            "for (i in 1:6) { s = s + sum(Ac^2) + max(Ac * i) }\n}\n"
        struct { const char *what, *body; long want, shared; } lp[] = {
            {"compress(A) in a function called in a for loop of 4", "for (j in 1:4) { s = s + f(X) }\n", 1, 3},
            {"compress(A) in a function called in a while loop", "j = 0\nwhile (j < 4) { j = j + 1\ns = s + f(X) }\n", 1,
             3},
            {"compress(A) in a function called with X[, 1:9] in a for loop of 4",
             "for (j in 1:4) { s = s + f(X[, 1:9]) }\n", 0, 0},
        };
        for (size_t k = 0; k < sizeof lp / sizeof *lp; k++) {
            char src[4096], ref[4096];
            snprintf(src, sizeof src, "%s" FC6 "s = 0\n%sprint(\"RESULT \" + s)\n", DATA, lp[k].body);
            snprintf(ref, sizeof ref, "%s", src);
            char *at = strstr(ref, "Ac = compress(A)");
            if (at) memcpy(at, "Ac = A          ", 16);
            long n = run_mode(src, "auto", big, &r1);
            T_CHECK(n == lp[k].want && g_lazy[2] == lp[k].shared, "%s: %ld compressions, %ld shared, want %ld, %ld",
                    lp[k].what, n, g_lazy[2], lp[k].want, lp[k].shared);
            if (!n) {   /* declined (lz's check the same bits) */
                T_CHECK(r1 == r1, "%s: no result", lp[k].what);
                continue;
            }
            if (k != 1) run_mode(ref, "false", big, &r2);   /* the while loop computes the for loop's s */
            T_CHECK(fabs(r1 - r2) <= 1e-9 * fabs(r2), "%s: result %.17g, want %.17g", lp[k].what, r1, r2);
        }
#undef FC6
#undef G
#undef SL
#undef SL4
#undef LP6
#undef FN1
#undef FN6
    }
    /* a deferred compress(X) written in braid's binary format is
     * compressed for the file (read back equal); where a function's loop
     * already compressed its copy of X (MB.cla_copy), the file takes
     * that copy: not compressed again */
    for (int k = 0; k < 2; k++) {
        char src[2048];
        snprintf(src, sizeof src,
                 "%sf = function(Matrix[Double] A) return (Double s) {\ns = 0\nfor (i in 1:30) { s = s + sum(A^2) + max(A * i) }\n}\n"
                 "Xc = compress(X)\n%s"
                 "write(Xc, \"/tmp/braid_clauto_w%d.bin\", format=\"braid-binary\")\n"
                 "Y = read(\"/tmp/braid_clauto_w%d.bin\")\nprint(\"RESULT \" + sum(abs(Y - X)))\n",
                 DATA, k ? "s = f(Xc)\n" : "", (int)getpid(), (int)getpid());
        long n = run_mode(src, "false", big, &r1);
        T_CHECK(n == 1 && r1 == 0, "compress(X) written%s: %ld compressions (want 1), difference %g",
                k ? " after a function's loop compressed it" : "", n, r1);
        char f[64];
        snprintf(f, sizeof f, "/tmp/braid_clauto_w%d.bin", (int)getpid());
        unlink(f);
        strcat(f, ".mtd");
        unlink(f);
    }
    /* the Row choice (synchronous code generation: a plan whose kernel is
     * not compiled yet would run unfused): t(X) %*% (X %*% v - y) (narrow
     * products) and the logistic gradient over co-coded groups run the
     * generated code with X %*% v looked up and the q rows of the
     * t(X) %*% q root added per tuple (the rows never decompressed); with
     * one group per column, or with a NaN in X (q's rows not taken per
     * tuple: X's zeros would skip 0 * NaN, so the rows would be
     * decompressed), their unfused plan over the compressed products;
     * the multinomial gradient (3 columns) the generated code over
     * decompressed rows: its lookups (a pass of 4 padded values per row
     * and group, twice) cost more than decompressing the 10 cells and
     * multiplying (kernels/spoof_row.c look_choose; at 1M rows 0.89 s
     * against 0.94 s of CPU with the lookups forced);
     * kmeans' distances (a product with k = 5 columns feeding several
     * steps) the generated code: co-coded, its product looked up per row
     * and group (as the unfused plan would) and the rows never
     * decompressed, so nothing is materialized either; with one group
     * per column (lookups would cost more than the multiply-adds) over
     * decompressed rows.
     * A NaN in X: looked up too (the dictionary holds it); an Inf in C:
     * not looked up (0 * Inf at the zeros of X), the rows decompressed.
     * Results as over X within 1e-10 relative. */
#define WIDE "X = round(rand(rows=20000, cols=10, min=0, max=49, seed=1))\nv = rand(rows=10, cols=1, seed=2)\n"
#define KM "D = -2 * (Xc %*% t(C)) + t(rowSums(C^2))\ns = sum(rowIndexMin(D) * (rowMins(D) + 1))\n"
#define KMN "D = -2 * (Xc %*% t(C)) + t(rowSums(C^2))\n" \
            "s = sum(replace(target=rowIndexMin(D) * (rowMins(D) + 1), pattern=0/0, replacement=3))\n"
#define LG "G = t(Xc) %*% (1 / (1 + exp(-(Xc %*% v))) - y)\n"
    struct { const char *what, *data, *expr; bool rows, prod, tl; } rc[] = {
        {"narrow products", DATA, "G = t(Xc) %*% (Xc %*% v - y)\ns = sum(G)\n", true, true, true},
        {"narrow products, one group per column", WIDE, "G = t(Xc) %*% (Xc %*% v - y)\ns = sum(G)\n", false, false,
         false},
        {"logistic gradient", DATA, LG "s = sum(G * seq(1, 10))\n", true, true, true},
        {"multinomial gradient (3 columns: the blocked loop)", DATA "B = rand(rows=10, cols=3, seed=7) * 0.1\nY = Y[, 1:3]\n",
         "E = exp(Xc %*% B)\nG = t(Xc) %*% (E / rowSums(E) - Y)\ns = sum(G * seq(1, 10))\n", true, false, false},
        {"kmeans step with t(P) %*% X (multi-output)", DATA,
         "D = -2 * (Xc %*% t(C)) + t(rowSums(C^2))\nP = (D <= rowMins(D))\nP = P / rowSums(P)\n"
         "C2 = (t(P) %*% Xc) / t(colSums(P) + 1)\ns = sum(C2 %*% seq(1, 10))\n", true, true, true},
        {"logistic gradient, a NaN in X", DATA "X[7, 3] = 0/0\n", LG "s = sum(replace(target=G, pattern=0/0, replacement=3))\n",
         false, false, false},
        {"kmeans distances, co-coded", DATA, KM, true, true, false},
        {"kmeans distances, one group per column", WIDE, KM, true, false, false},
        {"kmeans distances, a NaN in X", DATA "X[7, 3] = 0/0\nX[19, 1] = 0/0\n", KMN, true, true, false},
        {"kmeans distances, an Inf in C", DATA, "C[2, 3] = 1/0\n" KMN, true, false, false},
    };
#define RC_SETUP "y = rand(rows=20000, cols=1, seed=3)\nC = rand(rows=5, cols=10, seed=4)\n"
#define RC_CASE "if (sum(y) > 0) {\n%s}\nprint(\"RESULT \" + s)\n"
    /* the same values from X itself (products: summation order): one
     * reference run per data, the cases' expressions in turn (in order:
     * the one that changes C comes last among those over DATA) */
    size_t nrc = sizeof rc / sizeof *rc;
    double rref[sizeof rc / sizeof *rc];
    for (size_t k = 0; k < nrc; k++) rref[k] = NAN;
    for (size_t k = 0; k < nrc; k++) {
        if (!isnan(rref[k])) continue;
        char ref[8192];
        int len = snprintf(ref, sizeof ref, "%s" RC_SETUP "Xc = X\n", rc[k].data), nin = 0;
        size_t in[8];
        for (size_t j = k; j < nrc && nin < 8; j++)
            if (!strcmp(rc[j].data, rc[k].data)) {
                len += snprintf(ref + len, sizeof ref - (size_t)len, RC_CASE, rc[j].expr);
                in[nin++] = j;
            }
        run_mode(ref, "true", big, &r2);
        for (int j = 0; j < nin; j++) rref[in[j]] = isnan(g_res[j]) ? INFINITY : g_res[j];
    }
    for (size_t k = 0; k < nrc; k++) {
        char src[2048];
        snprintf(src, sizeof src, "%s" RC_SETUP "Xc = compress(X)\n" RC_CASE, rc[k].data, rc[k].expr);
        long n = run_mode(src, "true", big, &r1);   /* true: compress() at once (no loop repays it) */
        T_CHECK(n == 1, "%s: compressed (%ld)", rc[k].what, n);
        T_CHECK(g_rowcla == rc[k].rows, "%s: %s", rc[k].what,
                rc[k].rows ? "generated code over compressed rows" : "the unfused plan over compressed products");
        T_CHECK(g_rowprod == rc[k].prod, "%s: products %slooked up per group", rc[k].what, rc[k].prod ? "" : "not ");
        T_CHECK(g_rowtl == rc[k].tl, "%s: q rows %sadded per tuple", rc[k].what, rc[k].tl ? "" : "not ");
        r2 = rref[k];
        T_CHECK(fabs(r1 - r2) <= 1e-10 * fmax(1, fabs(r2)), "%s: %.17g, want %.17g", rc[k].what, r1, r2);
    }
#undef RC_SETUP
#undef RC_CASE
    /* Picks by the skeleton's lookup rule (kernels/cla.h cla_row_cells,
     * cla_look_cells: a pass over a table of more than 3 MB costs 3x,
     * bench/bench_cla_look.c), at planning (codegen/cost.c row_look,
     * over the groups recorded at dynamic recompilation: Hop.clook) and
     * at run time (codegen/codegen.c cg_cla_row_unfused: the generated
     * code over decompressed rows or the unfused plan): rowSums(exp(Xc
     * %*% B)) / rowSums(Xc^2) over X = cbind(A, 2 A + 1, 3 A + 2,
     * 4 A + 3) (3 co-coded groups of 4 columns), B 8 columns wide. The
     * row is read by rowSums(Xc^2), so a Row operator of both pays the
     * lookups and the row, or the decompressed row and the multiply-adds
     * (the cheaper); split or unfused, the product runs compressed and
     * rowSums(Xc^2) over the dictionaries.
     * - 20,000 rows, A of 3000 values (tables of 190 KB), the hand-run
     *   machine: split (no Row operator);
     * - the same under t_pin_machine's (materializing looks dear): one
     *   Row operator, which runs its unfused plan (lookups cheap);
     * - 20,000 rows, A of 8000 values (tables of 470 KB), t_pin_machine's:
     *   the unfused plan too (at 256 KB, the step of before, lookups
     *   3x: the generated code, measured 1.13-1.44x slower, docs/cla.md);
     * - 150,000 rows, A of 60,000 values (about 55,000 tuples a group:
     *   tables of 3.4 MB), the hand-run machine: one Row operator over
     *   decompressed rows (lookups 3x: dearer than the row).
     * The old run-time price (n G k lookups at the elementwise rate) and
     * the rule without its step pick the unfused plan at 60,000 values
     * too. Results as over X, within 1e-10 relative. */
    {
        /* 0-3 compressed; 4: one run as over X of the three data sets,
         * printing 0's and 1's result, 2's, 3's */
        const int vals[4] = {3000, 3000, 8000, 60000}, rows[4] = {20000, 20000, 20000, 150000};
        const bool hand[4] = {true, false, false, true};
        double got[4] = {0}, last = 0;
        char *pin = getenv("BRAID_CG_MACHINE") ? strdup(getenv("BRAID_CG_MACHINE")) : NULL;
        char refs[4096] = "";
        for (int k = 0; k < 5; k++) {
            char src[1024];
            int v = k < 4 ? k : 0;
            for (int j = k < 4 ? k : 1; j < (k < 4 ? k + 1 : 4); j++) {
                char one[1024];
                snprintf(one, sizeof one,
                         "A%d = round(rand(rows=%d, cols=3, min=0, max=%d, seed=1))\n"
                         "X%d = cbind(A%d, 2 * A%d + 1, 3 * A%d + 2, 4 * A%d + 3)\nXc%d = %s(X%d)\n"
                         "y%d = rand(rows=%d, cols=1, seed=3)\nB%d = rand(rows=12, cols=8, seed=7) * 0.00001\n"
                         "if (sum(y%d) > 0) {\nE%d = exp(Xc%d %%*%% B%d)\n"
                         "s%d = sum(rowSums(E%d) / rowSums(Xc%d ^ 2))\n}\nprint(\"RESULT \" + s%d)\n",
                         j, rows[j], vals[j] - 1, j, j, j, j, j, j, k < 4 ? "compress" : "", j, j, rows[j], j, j, j, j,
                         j, j, j, j, j);
                if (k < 4) snprintf(src, sizeof src, "%s", one);
                else strncat(refs, one, sizeof refs - strlen(refs) - 1);
            }
            if (hand[v]) setenv("BRAID_CG_MACHINE", "4.07684e+10 3.07256e+10 5.60535e+09 6.16694e+10 3.40088e+10", 1);
            else if (pin) setenv("BRAID_CG_MACHINE", pin, 1);
            long n = run_mode(k < 4 ? src : refs, k < 4 ? "true" : "false", big, k < 4 ? &got[k] : &last);
            if (k == 4) break;
            long want = k == 0 ? 0 : 1;
            T_CHECK(n == 1, "lookup rule, %d rows, A of %d values: %ld compressions", rows[k], vals[k], n);
            T_CHECK(g_frow == want, "lookup rule, %d rows, A of %d values%s: %ld Row operators, want %ld", rows[k],
                    vals[k], hand[k] ? "" : " (t_pin_machine)", g_frow, want);
            if (k == 1 || k == 2)
                T_CHECK(g_unf && !g_rowcla, "lookup rule, A of %d values (t_pin_machine): the unfused plan", vals[k]);
            if (k == 3)
                T_CHECK(g_rowcla && !g_unf, "lookup rule, A of 60000 values: the generated code over decompressed rows");
        }
        for (int k = 0; k < 4; k++) {
            double want = g_res[k < 2 ? 0 : k - 1];
            T_CHECK(fabs(got[k] - want) <= 1e-10 * fabs(want), "lookup rule, run %d: %.17g, want %.17g", k, got[k], want);
        }
        if (pin) setenv("BRAID_CG_MACHINE", pin, 1);
        else unsetenv("BRAID_CG_MACHINE");
        free(pin);
    }
    /* A product of two compressed operands keeps the larger compressed
     * (runtime/cla_rt.c accepts): under `true` B, read-only in the loop,
     * is compressed at its entry and B * i stays compressed, so
     * Xc %*% (B * i) had both operands decompressed, X every step (two
     * decompressions, then the kept copy read densely) while the planner
     * priced a compressed product. Now each step decompresses only
     * B * i (10 x 8): 3 decompressions in 3 steps (5 before), the
     * product counted as run compressed. The hand-run machine (the
     * planner splits; under t_pin_machine's one Row operator, whose
     * unfused plan kept X compressed already). Result as over X. */
    {
        const char *src = "X = round(rand(rows=20000, cols=10, min=0, max=5, seed=1))\n"
                          "B = rand(rows=10, cols=8, seed=5) * 0.01\nXc = compress(X)\ns = 0\n"
                          "for (i in 1:3) {\nE = exp(Xc %*% (B * i))\n"
                          "s = s + sum(rowSums(E) / (1 + rowSums(Xc ^ 2)))\n}\nprint(\"RESULT \" + s)\n";
        char *pin = getenv("BRAID_CG_MACHINE") ? strdup(getenv("BRAID_CG_MACHINE")) : NULL;
        /* the hand-run machine: split (under t_pin_machine's a Row operator) */
        setenv("BRAID_CG_MACHINE", "4.07684e+10 3.07256e+10 5.60535e+09 6.16694e+10 3.40088e+10", 1);
        long n = run_mode(src, "true", big, &r1);
        if (pin) setenv("BRAID_CG_MACHINE", pin, 1);
        else unsetenv("BRAID_CG_MACHINE");
        free(pin);
        T_CHECK(n == 2 && g_mmc && g_dec == 3,
                "compressed X %%*%% compressed B: %ld compressions (want 2), product compressed %d, %ld "
                "decompressions (want 3)", n, (int)g_mmc, g_dec);
        run_mode(src, "false", big, &r2);
        T_CHECK(fabs(r1 - r2) <= 1e-10 * fabs(r2), "compressed X %%*%% compressed B: %.17g, want %.17g", r1, r2);
    }
    /* l2svm over a compressed X (`true`: X and the labels compressed at
     * the loops' entries) compiles its loop as the uncompressed run does,
     * t(X) %*% (slack * Y) as a Row plan over X (codegen/cost.c prices
     * it as the skeleton runs it: q's rows added per tuple, no rows
     * decompressed, the labels decompressed for it), not as a compressed
     * t(X) %*% v plus a Cell operator materializing its vector: dense,
     * sparse and one-hot X. Where each column is a group of its own (a
     * row would cross more than half the columns' groups: the skeleton
     * would decompress the rows) the compressed product stays. The
     * model (10 iterations: converged, so the rounding of the summation
     * orders does not grow through the line searches) equals the
     * uncompressed run's within 1e-10 relative. The labels, which the
     * Row plan reads dense, are decompressed twice, then their copy is
     * kept (runtime/cla_rt.c; one other value is decompressed once: 3 in
     * all, where each of the 10 Row operators decompressed them before). BRAID_CG_CLA_ROW=0
     * (the A/B switch of bench/cla_row_cpu.sh) takes the other plan, the
     * compressed t(X) %*% v, with the same model. */
    {
        struct { const char *what, *x; bool row; } sv[] = {
            {"dense", "X = round(rand(rows=5000, cols=10, min=0, max=5, seed=1))\n", true},
            {"sparse", "X = ceil(rand(rows=5000, cols=10, min=0, max=1, sparsity=0.2, seed=1))\n", true},
            {"one-hot", "X = table(seq(1, 5000), round(rand(rows=5000, cols=1, min=1, max=8, seed=1)))\n", true},
            {"sparse, a group per column", "X = round(rand(rows=5000, cols=10, min=0, max=5, sparsity=0.15, seed=1))\n",
             false},
        };
        for (size_t k = 0; k < sizeof sv / sizeof *sv; k++) {
            char src[2048];
            snprintf(src, sizeof src,
                     "%sY = (rand(rows=5000, cols=1, seed=3) > 0.5) * 2 - 1\n"
                     "w = l2svm(X=X, Y=Y, maxIterations=10, epsilon=0)\nprint(\"RESULT \" + sum(w * seq(1, ncol(X))))\n",
                     sv[k].x);
            long n = run_mode(src, "true", big, &r1);
            T_CHECK(n > 0, "l2svm, %s X: compressed (%ld)", sv[k].what, n);
            T_CHECK(g_rowtl == sv[k].row && g_tmm == !sv[k].row, "l2svm, %s X: %s", sv[k].what,
                    sv[k].row ? "the Row plan with q per tuple, no compressed t(X) %*% v"
                              : "the compressed t(X) %*% v, no Row plan per tuple");
            if (sv[k].row)
                T_CHECK(g_dec <= 3, "l2svm, %s X: the labels decompressed twice, then kept (%ld decompressions)",
                        sv[k].what, g_dec);
            run_mode(src, "false", big, &r2);
            T_CHECK(fabs(r1 - r2) <= 1e-10 * fabs(r2), "l2svm, %s X: %.17g, want %.17g", sv[k].what, r1, r2);
            if (k > 0) continue;
            setenv("BRAID_CG_CLA_ROW", "0", 1);
            double r3 = 0;
            n = run_mode(src, "true", big, &r3);
            unsetenv("BRAID_CG_CLA_ROW");
            T_CHECK(n > 0 && g_tmm && !g_rowtl && !g_rowcla, "l2svm, %s X, BRAID_CG_CLA_ROW=0: the compressed t(X) %%*%% v",
                    sv[k].what);
            T_CHECK(fabs(r3 - r2) <= 1e-10 * fabs(r2), "l2svm, %s X, BRAID_CG_CLA_ROW=0: %.17g, want %.17g", sv[k].what,
                    r3, r2);
        }
        /* kmeans' step in a loop over a compressed Airline-like X keeps
         * its multi-output Row plan (t(P) %*% X in the operator: per tuple
         * or over decompressed rows, as the skeleton's rule picks; with
         * the delay columns DDC-coded, not OLE (cla.c LIST_GAIN), the rows
         * are read decompressed, 0.083 s against 0.147 s per tuple over
         * 300 steps at this size): the basic
         * t(P) %*% X over the compressed X is priced by lookups too, not
         * at dgemm's rate (which made materializing P look cheaper: so
         * on a machine whose memory bandwidth is high against its
         * elementwise rate, pinned here) */
        char *pin = getenv("BRAID_CG_MACHINE") ? strdup(getenv("BRAID_CG_MACHINE")) : NULL;
        setenv("BRAID_CG_MACHINE", "4.07684e+10 3.07256e+10 5.60535e+09 6.16694e+10 3.40088e+10", 1);
        char src[2048];
        snprintf(src, sizeof src,
                 "n = 20000\nX = cbind(floor(rand(rows=n, cols=1, min=1, max=12.99, seed=1)),\n"
                 "  floor(rand(rows=n, cols=1, min=1, max=31.99, seed=2)), floor(rand(rows=n, cols=1, min=1, max=7.99, seed=3)),\n"
                 "  floor(rand(rows=n, cols=1, min=0, max=19.99, seed=4)), floor(rand(rows=n, cols=1, min=0, max=299.99, seed=5)),\n"
                 "  floor(rand(rows=n, cols=1, min=0, max=23.99, seed=6)),\n"
                 "  5 * floor(rand(rows=n, cols=4, min=0, max=5.99, seed=7)) * (rand(rows=n, cols=4, seed=8) > 0.6),\n"
                 "  rand(rows=n, cols=2, seed=9) > 0.95)\nX = X / colMaxs(X)\nC = X[1:5, ] + 0.01\n"
                 "for (i in 1:2) {\nD = -2 * (X %%*%% t(C)) + t(rowSums(C ^ 2))\nP = (D <= rowMins(D))\n"
                 "P = P / rowSums(P)\nC = (t(P) %%*%% X) / t(colSums(P) + 1)\n}\nprint(\"RESULT \" + sum(C))\n");
        long n = run_mode(src, "true", big, &r1);
        T_CHECK(n > 0 && g_rowcla && !g_tmm, "kmeans loop over a compressed X: t(P) %%*%% X in its Row plan");
        run_mode(src, "false", big, &r2);
        T_CHECK(fabs(r1 - r2) <= 1e-10 * fabs(r2), "kmeans loop: %.17g, want %.17g", r1, r2);
        if (pin) setenv("BRAID_CG_MACHINE", pin, 1);
        free(pin);
    }
    /* data larger than the memory budget that fit compressed (docs/cla.md
     * "Larger than the budget"): a 10000 x 40 X of 3 values a column
     * (3.2 MB) read from a file under a budget of a fifth of it, by
     * l2svm and lm: under true (csv) and auto (binary) the read is
     * placed locally and compressed, and the results equal those of the
     * uncompressed run with a large budget (which writes the files);
     * random dense data (which do not compress) read after them fail:
     * their compressed size estimated at compile time from a sample of
     * the file (docs/cla.md "Estimated at compile time") places the read
     * over the budget, so it fails before reading (before the estimate:
     * placed locally, read, then the read's error) */
    {
        char base[64], src[2048];
        snprintf(base, sizeof base, "/tmp/braid_clabig_%ld", (long)getpid());
#define LM "w = l2svm(X=X, Y=y, maxIterations=5, verbose=FALSE)\nb = lm(X=X, y=y, verbose=FALSE)\n" \
           "print(\"RESULT \" + sum(w))\nprint(\"RESULT \" + sum(b))\nprint(\"RESULT \" + sum(abs(w - b)))\n"
        snprintf(src, sizeof src,
                 "X = round(rand(rows=10000, cols=40, min=0, max=1, seed=21) * 2) / 2\ny = (rowSums(X) > 20) * 2 - 1\n"
                 "write(X, \"%s.bin\", format=\"binary\")\n"
                 "write(X, \"%s.csv\", format=\"csv\", header=TRUE, sep=\";\")\n"
                 "write(y, \"%s.y\", format=\"csv\")\n"
                 "write(rand(rows=10000, cols=40, seed=22), \"%s.rnd\", format=\"braid-binary\")\n"
                 "write(X, \"%s.text\", format=\"text\")\nwrite(X, \"%s.mm\", format=\"mm\")\n"
                 "write(X, \"%s.libsvm\", format=\"libsvm\")\n" LM,
                 base, base, base, base, base, base, base);
        double want[3];
        T_CHECK(run_mode(src, "false", big, &r1) == 0 && !isnan(g_res[2]), "larger than the budget: the reference run");
        memcpy(want, g_res, sizeof want);
        for (int k = 0; k < 2; k++) {
            const char *mode = k ? "auto" : "true", *ext = k ? "bin" : "csv";
            snprintf(src, sizeof src,
                     "X = read(\"%s.%s\")\ny = read(\"%s.y\")\n" LM
                     "if (sum(w) != 0) {\nR = read(\"%s.rnd\")\nprint(\"RESULT \" + sum(R))\n}\n",
                     base, ext, base, base);
            long n = run_mode(src, mode, 6.4e5, &r1);
            T_CHECK(n == -1 && g_placed && !g_over,
                    "larger than the budget, %s (%s): random data placed over the budget at compile time", mode, ext);
            /* (docs/cla.md "Compressed as it is read") the X by row
             * blocks (binary, and csv with a header and ";" from its
             * .mtd), the binary one holding under half its 3.2 MB; the
             * random data are not read */
            T_CHECK(g_rd[0] == 1 && g_rd[1] == 1 && g_rd[2] >= 10,
                    "larger than the budget, %s (%s): %ld reads, %ld by %ld row blocks", mode, ext, g_rd[0], g_rd[1],
                    g_rd[2]);
            T_CHECK(g_held > 0 && g_held < 1.6, "larger than the budget, %s (%s): %.3f MB held at most", mode, ext,
                    g_held);
            for (int j = 0; j < 3; j++)
                T_CHECK(fabs(g_res[j] - want[j]) <= 1e-10 * fabs(want[j]),
                        "larger than the budget, %s (%s): result %d %.17g, want %.17g", mode, ext, j, g_res[j], want[j]);
        }
#undef LM
        /* without its .mtd (no sizes at compile time, so no estimate) the
         * random read is placed locally as before, read by blocks under
         * true, and stops with the read's error once its values pass the
         * budget */
        {
            char mtd[96];
            snprintf(mtd, sizeof mtd, "%s.rnd.mtd", base);
            unlink(mtd);
            snprintf(src, sizeof src, "R = read(\"%s.rnd\", format=\"braid-binary\")\nprint(\"RESULT \" + sum(R))\n", base);
            long n = run_mode(src, "true", 6.4e5, &r1);
            T_CHECK(n == -1 && g_over && !g_placed && g_rd[1] == 1 && g_held > 0 && g_held < 1.6,
                    "larger than the budget, true, no sizes: random data fail with the read's error (%.3f MB held)",
                    g_held);
        }
        /* the cell formats (text, mm, libsvm) by row blocks too, under
         * true and auto, holding under half of X; so is the same text
         * file with its lines reversed (cells not in row order: by
         * buckets of rows in temporary files) */
        {
            char cmd[400];
            snprintf(cmd, sizeof cmd, "tac %s.text > %s.rev && cp %s.text.mtd %s.rev.mtd", base, base, base, base);
            T_CHECK(system(cmd) == 0, "larger than the budget: the reversed text file");
            const char *fmt[] = {"text", "mm", "libsvm", "rev"};
            double sums[2] = {0, 0};
            for (int k = 0; k < 4; k++) {
                const char *mode = k == 1 ? "auto" : "true";
                snprintf(src, sizeof src, "X = read(\"%s.%s\")\nprint(\"RESULT \" + sum(X))\n"
                         "print(\"RESULT \" + sum(X^2))\n", base, fmt[k]);
                long n = run_mode(src, mode, 6.4e5, &r1);
                if (k == 0) memcpy(sums, g_res, sizeof sums);
                bool blocks = true;
                T_CHECK(n >= 1 && g_rd[0] == 1 && g_rd[1] == blocks && (!blocks || g_rd[2] >= 10),
                        "larger than the budget, %s (%s): %ld compressions, %ld reads, %ld by %ld row blocks", mode,
                        fmt[k], n, g_rd[0], g_rd[1], g_rd[2]);
                if (blocks)
                    T_CHECK(g_held > 0 && g_held < 1.6, "larger than the budget, %s (%s): %.3f MB held at most", mode,
                            fmt[k], g_held);
                T_CHECK(!isnan(sums[0]) && g_res[0] == sums[0] && g_res[1] == sums[1],
                        "larger than the budget, %s (%s): sums %.17g %.17g, want %.17g %.17g", mode, fmt[k], g_res[0],
                        g_res[1], sums[0], sums[1]);
            }
        }
        const char *ext[] = {"bin", "csv", "y", "rnd", "text", "mm", "libsvm", "rev"};
        for (int k = 0; k < 8; k++) {
            char cmd[300];
            snprintf(cmd, sizeof cmd, "rm -rf %s.%s %s.%s.mtd", base, ext[k], base, ext[k]);
            T_CHECK(system(cmd) == 0, "larger than the budget: %s.%s removed", base, ext[k]);
        }
    }
    /* the machine's constants (codegen/cla_machine.c) decide: compression
     * costing 1000 passes does not pay for 60 aggregate reads, and with
     * decompressed cells nearly free against materialized ones the narrow
     * products run as generated code over decompressed rows */
    setenv("BRAID_CLA_MACHINE", "2 2 1000", 1);
    char src[2048];
    snprintf(src, sizeof src, "%s%sprint(\"RESULT \" + s)\n", DATA, cases[2].loop);
    long n = run_mode(src, "auto", big, &r1);
    T_CHECK(n == 0, "aggregates, compression at 1000 passes: %ld compressions, want 0", n);
    setenv("BRAID_CLA_MACHINE", "0.01 100 16", 1);
    snprintf(src, sizeof src,
             "%sy = rand(rows=20000, cols=1, seed=3)\nXc = compress(X)\nif (sum(X) > 0) {\n%s}\nprint(\"RESULT \" + s)\n",
             DATA, rc[0].expr);
    n = run_mode(src, "true", big, &r1);
    T_CHECK(n == 1 && g_rowcla, "narrow products, decompression nearly free: generated code over decompressed rows");
    unsetenv("BRAID_CLA_MACHINE");
#undef LG
    return t_done("test_cla_auto");
}
