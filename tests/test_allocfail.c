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
/* Environment and configuration of the script under test (run): codegen
 * off, or the where-loop script's (check_where). */
static const char *g_env = "", *g_config = "off.xml";
/* Points of the last check_points whose error is at line 8, 10 or 12. */
static int g_in_where;

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

/* Runs braid on script with BRAID_FAIL_ALLOC=fail (a number, 0: none;
 * or "count"). */
static Run run_as(const char *braid, const char *script, const char *fail)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && %s BRAID_FAIL_ALLOC=%s BRAID_FAIL_ALLOC_RAW=%d timeout -s KILL 60 '%s' -config '%s/%s' "
             "-f '%s' >'%s/out' 2>'%s/err'",
             dir, g_env, fail, raw_mode(), braid, dir, g_config, script, dir, dir);
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

/* Runs braid on script with BRAID_FAIL_ALLOC=n (0: none). */
static Run run(const char *braid, const char *script, long n)
{
    char fail[24];
    snprintf(fail, sizeof fail, "%ld", n);
    return run_as(braid, script, fail);
}

/* The number of allocations of a run: one run with BRAID_FAIL_ALLOC=count
 * (base/base.c prints the count at exit); -1 when it printed none. */
static long count_allocs(const char *braid, const char *script)
{
    static const char tag[] = "braid: allocations counted ";
    Run r = run_as(braid, script, "count");
    const char *at = strstr(r.err, tag);
    long n = at && r.status == 0 ? atol(at + strlen(tag)) : -1;
    run_free(&r);
    return n;
}

static int points;   /* injected allocation points tried */

/* Runs script `text` with the nth allocation failing for n = 1 up to
 * `first`, then at `spread` points evenly over the rest. */
static void check_points(const char *braid, const char *name, const char *text, long first_max, long spread_n)
{
    char script[300];
    snprintf(script, sizeof script, "%s/%s.dml", dir, name);
    t_put(script, text);
    Run ref = run(braid, script, 0);
    T_CHECK(ref.status == 0, "%s: reference run (status %d): %s", name, ref.status, ref.err);
    long total = count_allocs(braid, script);
    T_CHECK(total > 0, "%s: the counting run printed no count of allocations", name);
    bool all = getenv("BRAID_ALLOCFAIL_ALL") != NULL;
    long first = all ? total : BR_MIN(total, first_max), spread = all ? 0 : spread_n;
    int bad = 0;
    g_in_where = 0;
    for (long k = 0, n = 1; n <= total && bad < 5; k++) {
        Run r = run(braid, script, n);
        points++;
        bool sane = !strstr(r.err, "Sanitizer") && !strstr(r.err, "runtime error");
        bool ok = r.status == 0 ? sane && !strcmp(r.out, ref.out)
                : r.status == 1 && sane && strstr(r.err, "out of memory") != NULL;
        if (!ok) bad++;
        /* an error at a where-loop's statement (check_where's lines) */
        char at[64];
        for (int ln = 8; ln <= 12; ln += 2) {
            snprintf(at, sizeof at, "%s.dml:%d:", name, ln);
            g_in_where += r.status == 1 && strstr(r.err, at) != NULL;
        }
        T_CHECK(ok, "%s: allocation %ld of %ld failed: status %d, stderr:\n%.1500s", name, n, total, r.status, r.err);
        run_free(&r);
        n = n < first ? n + 1 : n + BR_MAX(1, (total - first) / BR_MAX(spread, 1));
    }
    printf("test_allocfail: %s: %ld allocations\n", name, total);
    run_free(&ref);
}

static void check_script(const char *braid, const char *name, const char *text)
{
    check_points(braid, name, text, 100, 40);
}

/* Where-loops (AMULET) in a DML loop of 10 iterations, codegen on and
 * BRAID_AMULET=kernel, the kernels cached in the test's directory
 * (compiled by the reference run): a dense and a sparse operand's
 * kernel (am_kernel_run, plan_key) and a loop that is not
 * matrix-multiplication-like (the vectorized evaluator, am_evaluate).
 * The iterations repeat the same allocations, so 24 points evenly over
 * the run (one in 40 of some 980; 12 under the sanitizers, whose runs
 * cost 10x) fall at different places of the where-loops' calls: the
 * raw-mode sweep of 2026-12-01 (588 points by hand) at about 37 runs. */
static void check_where(const char *braid)
{
    char env[200], p[300];
    snprintf(env, sizeof env, "BRAID_AMULET=kernel XDG_CACHE_HOME='%s/cache'", dir);
    snprintf(p, sizeof p, "%s/on.xml", dir);
    t_put(p, "<root><sysds.codegen.enabled>true</sysds.codegen.enabled></root>\n");
    g_env = env;
    g_config = "on.xml";
    check_points(braid, "where",
                 "A = rand(rows=30, cols=20, seed=3)\n"
                 "B = rand(rows=20, cols=25, seed=4)\n"
                 "t = rand(rows=25, cols=1, seed=5)\n"
                 "S = rand(rows=30, cols=20, sparsity=0.1, seed=6)\n"
                 "s = 0\n"
                 "for (it in 1:10) {\n"
                 "  R = matrix(0, rows=30, cols=25)\n"
                 "  where (i in 1:30, j in 1:25, k in 1:20) { R[i,j] += A[i,k]*B[k,j] - (A[i,k]*B[k,j] > t[j])*0.5 }\n"
                 "  Q = matrix(0, rows=30, cols=25)\n"
                 "  where (i in 1:30, j in 1:25, k in 1:20) { Q[i,j] += S[i,k] * B[k,j] * it }\n"
                 "  E = matrix(0, rows=30, cols=25)\n"
                 "  where (i in 1:30, j in 1:25) { E[i,j] += R[i,j] * t[j] - Q[i,j] }\n"
                 "  s = s + sum(E)\n"
                 "}\n"
                 "print(s)\n",
                 0, T_SAN ? 12 : 24);
    printf("test_allocfail: where: %d points ended with the error at a where-loop\n", g_in_where);
    T_CHECK(g_in_where > 0, "where: no injected failure inside a where-loop's statement");
    g_env = "";
    g_config = "off.xml";
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
    check_where(braid);
    printf("test_allocfail: %d allocation points injected\n", points);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    T_CHECK(system(cmd) == 0, "clean");
    return t_done("test_allocfail");
}
