/* test_cla_auto.c: when sysds.compressed.linalg=auto compresses a loop's
 * read-only matrix (runtime/cla_rt.c, docs/cla.md): the decision from the
 * compiled loop (which uses take the matrix compressed, which gain over
 * the dictionaries, functions the loop calls), the iteration count and
 * the memory budget, read back from -stats ("CLA compressions: N"). The
 * memory budget is set in the configuration, so the decisions do not
 * depend on the machine; the data are seeded. Runs build/braid (or
 * $BRAID). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t.h"

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
    snprintf(cmd, sizeof cmd, "cd /tmp && timeout -s KILL 120 %s%s%s -f %s -config %s -stats 2>&1", cwd,
             cwd[0] ? "/" : "", braid_bin(), sp, cp);
    FILE *f = popen(cmd, "r");
    char line[1024];
    long n = 0;   /* -stats prints no CLA lines without compressions */
    *printed = NAN;
    while (f && fgets(line, sizeof line, f)) {
        long k;
        double v;
        if (sscanf(line, "CLA compressions: %ld", &k) == 1) n = k;
        else if (sscanf(line, "RESULT %lf", &v) == 1) *printed = v;
    }
    if (f && pclose(f) != 0) n = -1;
    unlink(sp);
    unlink(cp);
    return n;
}

/* X: 20000 x 10 with 6 distinct values per column (1.6 MB, compresses
 * about 8x); the loops read it ITERS times. */
#define DATA "X = round(rand(rows=20000, cols=10, min=0, max=5, seed=1))\nv = rand(rows=10, cols=1, seed=2)\n"

int main(void)
{
    double big = 64e9, small = 4e6, r1 = 0, r2 = 0;
    struct { const char *what, *loop; double budget; long want; } cases[] = {
        /* products gain nothing over the dictionaries: data that fit stay
         * uncompressed; pressing on the budget (1.6 MB of 4 MB), compressed */
        {"products, fits", "s = 0\nfor (i in 1:30) { s = s + sum(X %*% v) }\n", big, 0},
        {"products, presses on memory", "s = 0\nfor (i in 1:30) { s = s + sum(X %*% v) }\n", small, 1},
        /* aggregates and cellwise operators gain per read: 60 reads pay */
        {"aggregates, fits", "s = 0\nfor (i in 1:30) { s = s + sum(X^2) + max(X * i) }\n", big, 1},
        /* too few reads to pay for compressing */
        {"aggregates, 6 reads", "s = 0\nfor (i in 1:6) { s = s + sum(X^2) }\n", big, 0},
        /* an operator that decompresses every iteration: never */
        {"transpose", "s = 0\nfor (i in 1:30) { s = s + sum(t(X) * i) }\n", small, 0},
        /* uses inside a called function count */
        {"function with aggregates",
         "f = function(Matrix[Double] A, Double i) return (Double s) { s = sum(A^2) + max(A * i) }\n"
         "s = 0\nfor (i in 1:30) { s = s + f(X, i) }\n", big, 1},
        {"function with a transpose",
         "f = function(Matrix[Double] A, Double i) return (Double s) { s = sum(t(A) * i) }\n"
         "s = 0\nfor (i in 1:30) { s = s + f(X, i) }\n", small, 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char src[2048];
        snprintf(src, sizeof src, "%s%sprint(\"RESULT \" + s)\n", DATA, cases[k].loop);
        long n = run_mode(src, "auto", cases[k].budget, &r1);
        T_CHECK(n == cases[k].want, "%s: %ld compressions, want %ld", cases[k].what, n, cases[k].want);
        /* the same result as without compression, up to the summation
         * order of the products (2e5 terms of at most 5: relative error
         * below 2e5 * 2^-53 ~ 2e-11) */
        long n0 = run_mode(src, "false", cases[k].budget, &r2);
        T_CHECK(n0 == 0 && fabs(r1 - r2) <= 1e-9 * fabs(r2), "%s: result %.17g, want %.17g", cases[k].what, r1, r2);
    }
    return t_done("test_cla_auto");
}
