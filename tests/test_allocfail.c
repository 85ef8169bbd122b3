/* test_allocfail.c: allocation-failure injection (issue 23, SQLite's
 * method). braid runs representative scripts with BRAID_FAIL_ALLOC=N
 * (base/base.c: the Nth allocation through br_malloc/br_calloc/
 * br_realloc/br_alloc_aligned, or in the raw mode, the default, through
 * the binary's plain malloc/calloc/realloc, fails) for N = 1, 2, ... up to the first
 * few hundred and then spread over every allocation the script makes:
 * (linear algebra and I/O, control flow and parfor, builtins, frames
 * and every reader and writer format) each run must end with the
 * script's own output (a failure some path
 * absorbs) or exit status 1 with an "out of memory" error; never a
 * signal, a sanitizer report (the SAN build also checks leaks) or a
 * different output. BRAID_ALLOCFAIL_ALL=1 tries every N. Needs $BRAID
 * (run_all.sh sets it). */
#include "t.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64];

typedef struct Run {
    int status;        /* exit status, or 128 + signal */
    bool injected;     /* the injection fired */
    char *out, *err;
} Run;

static void run_free(Run *r)
{
    free(r->out);
    free(r->err);
}

/* The raw mode (docs/DESIGN.md): plain allocations fail too, unless
 * BRAID_ALLOCFAIL_RAW=0. */
static int raw_mode(void)
{
    const char *v = getenv("BRAID_ALLOCFAIL_RAW");
    return !(v && !strcmp(v, "0"));
}

/* Runs braid on script with BRAID_FAIL_ALLOC=n (0: none). */
static Run run(const char *braid, const char *script, long n)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && BRAID_FAIL_ALLOC=%ld BRAID_FAIL_ALLOC_RAW=%d timeout -s KILL 60 '%s' -config '%s/off.xml' -f '%s' "
             ">'%s/out' 2>'%s/err'",
             dir, n, raw_mode(), braid, dir, script, dir, dir);
    int st = system(cmd);
    Run r = {0};
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    char p[300];
    snprintf(p, sizeof p, "%s/out", dir);
    r.out = t_slurp(p, NULL);
    snprintf(p, sizeof p, "%s/err", dir);
    r.err = t_slurp(p, NULL);
    if (!r.out) r.out = strdup("");
    if (!r.err) r.err = strdup("");
    r.injected = strstr(r.err, "injected allocation failure") != NULL;
    return r;
}

/* The number of allocations of a run: the smallest n that is not reached. */
static long count_allocs(const char *braid, const char *script)
{
    long lo = 1, hi = 1;
    for (;;) {
        Run r = run(braid, script, hi);
        bool inj = r.injected;
        run_free(&r);
        if (!inj) break;
        lo = hi;
        hi *= 2;
        if (hi > (1L << 26)) return hi;
    }
    while (hi - lo > 1) {
        long mid = lo + (hi - lo) / 2;
        Run r = run(braid, script, mid);
        if (r.injected) lo = mid;
        else hi = mid;
        run_free(&r);
    }
    return lo;
}

static int points;   /* injected allocation points tried */

static void check_script(const char *braid, const char *name, const char *text)
{
    char script[300];
    snprintf(script, sizeof script, "%s/%s.dml", dir, name);
    t_put(script, text);
    Run ref = run(braid, script, 0);
    T_CHECK(ref.status == 0, "%s: reference run (status %d): %s", name, ref.status, ref.err);
    long total = count_allocs(braid, script);
    bool all = getenv("BRAID_ALLOCFAIL_ALL") != NULL;
    long first = all ? total : BR_MIN(total, 100), spread = all ? 0 : 40;
    int bad = 0;
    for (long k = 0, n = 1; n <= total && bad < 5; k++) {
        Run r = run(braid, script, n);
        points++;
        bool sane = !strstr(r.err, "Sanitizer") && !strstr(r.err, "runtime error");
        bool ok = r.status == 0 ? sane && !strcmp(r.out, ref.out)
                : r.status == 1 && sane && strstr(r.err, "out of memory") != NULL;
        if (!ok) bad++;
        T_CHECK(ok, "%s: allocation %ld of %ld failed: status %d, stderr:\n%.1500s", name, n, total, r.status, r.err);
        run_free(&r);
        n = n < first ? n + 1 : n + BR_MAX(1, (total - first) / BR_MAX(spread, 1));
    }
    printf("test_allocfail: %s: %ld allocations\n", name, total);
    run_free(&ref);
}

int main(void)
{
    const char *braid = getenv("BRAID");
    if (!braid) braid = "build/braid";
    /* each run must print the reference run's output: the same plans,
     * whatever a run measuring the machine under load would pick */
    t_pin_machine();
    char abs[1024];
    if (braid[0] != '/' && getcwd(abs, sizeof abs)) {
        size_t l = strlen(abs);
        snprintf(abs + l, sizeof abs - l, "/%s", braid);
        braid = abs;
    }
    snprintf(dir, sizeof dir, "/tmp/braid_allocfail_XXXXXX");
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 2; }
    char p[300];
    snprintf(p, sizeof p, "%s/off.xml", dir);
    t_put(p, "<root><sysds.codegen.enabled>false</sysds.codegen.enabled></root>\n");
    check_script(braid, "linalg",
                 "X = rand(rows=30, cols=20, seed=1)\n"
                 "Y = t(X) %*% X + diag(matrix(1, 20, 1))\n"
                 "s = sum(Y * 2) + sum(solve(Y, matrix(1, 20, 1)))\n"
                 "write(Y, \"y.csv\", format=\"csv\")\n"
                 "Z = read(\"y.csv\")\n"
                 "print(s + sum(Z))\n");
    check_script(braid, "control",
                 "f = function(matrix[double] A, double k) return (matrix[double] B) {\n"
                 "  B = A * k\n"
                 "  for (i in 1:3) { if (i %% 2 == 0) { B = B + 1 } else { B = B - 0.5 } }\n"
                 "}\n"
                 "S = rand(rows=40, cols=10, sparsity=0.2, seed=5)\n"
                 "R = matrix(0, 4, 1)\n"
                 "parfor (j in 1:4) { R[j, 1] = sum(f(S, j)) }\n"
                 "l = list(a=R, b=\"x\")\n"
                 "cs = colSums(S)\n"
                 "print(toString(R) + \" \" + as.scalar(l[\"b\"]) + \" \" + as.scalar(cs[1, 1]))\n");
    check_script(braid, "builtin",
                 "X = rand(rows=40, cols=3, seed=7)\n"
                 "y = X %*% matrix(\"1 2 3\", rows=3, cols=1)\n"
                 "B = lm(X=X, y=y, verbose=FALSE)\n"
                 "F = as.frame(round(B * 100))\n"
                 "print(toString(F))\n");
    /* frames and the readers' and writers' own allocations */
    check_script(braid, "frames_io",
                 "F = as.frame(matrix(\"1 2 3 4 5 6\", rows=3, cols=2))\n"
                 "write(F, \"f.csv\", format=\"csv\")\n"
                 "G = read(\"f.csv\", data_type=\"frame\", format=\"csv\")\n"
                 "[X, M] = transformencode(target=G, spec=\"{ids: true, recode: [1]}\")\n"
                 "write(X, \"x.mtx\", format=\"mm\")\n"
                 "Y = read(\"x.mtx\", format=\"mm\")\n"
                 "write(Y, \"y.bin\", format=\"binary\")\n"
                 "Z = read(\"y.bin\")\n"
                 "write(Z, \"z.svm\", format=\"libsvm\")\n"
                 "W = read(\"z.svm\", format=\"libsvm\")\n"
                 "print(toString(G) + \" \" + sum(Z) + \" \" + sum(W) + \" \" + nrow(M))\n");
    printf("test_allocfail: %d allocation points injected\n", points);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    T_CHECK(system(cmd) == 0, "clean");
    return t_done("test_allocfail");
}
