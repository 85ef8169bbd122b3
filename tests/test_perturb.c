/* test_perturb.c: schedule perturbation (base/perturb.h, issue 23) and
 * the seed streams of parfor iterations (runtime/seeds.c).
 *
 * A parfor- and codegen-heavy script (the kmeans builtin, a parfor whose
 * body is fused, unseeded rand/sample inside a parfor under -seed) runs
 * unperturbed and under a few BRAID_PERTURB seeds: kernels ready at
 * different calls or never, 1 to 8 threads, 1 to 8 parfor workers taking
 * the iterations in shuffled orders with pauses, forced cache misses. Each
 * run must print what the unperturbed run prints; the same seed must
 * print it again (replay). The script prints values rounded to 1e-6 of
 * quantities of size 1 to 1000: a fused kernel and the reference path
 * may differ in the last bits of a sum (other summation order), some 1e-13
 * relative, far from a rounding step. Under -seed, the unseeded rand and
 * sample calls of the parfor body must give the same values whatever the
 * number of threads (they did not: the workers took a shared counter's
 * values in the order they reached it).
 *
 * A seeded kmeans must give the same bits whatever the schedule (issue
 * 23: one run of kmeans failed once and never again): its centroids and
 * assignments, written as CSV (shortest round-trip digits, so every bit),
 * must be byte-identical on 1, 2 and 3 threads, with synchronous and with
 * asynchronous compilation, the latter from an empty kernel cache without
 * the prebuilt set, so that early calls run the unfused fallback while
 * the kernels compile. Needs $BRAID (run_all.sh). */
#include "t.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64];

static const char *script =
    "X = rand(rows=300, cols=4, seed=3)\n"
    "[C, Y] = kmeans(X=X, k=3, runs=4, max_iter=30, seed=11)\n"
    "print(toString(round(C * 1e6)))\n"
    "print(sum(Y * seq(1, nrow(Y))))\n"
    "R = matrix(0, 8, 3)\n"
    "parfor (i in 1:8) {\n"
    "  Z = X[(i * 30 - 29):(i * 30), ]\n"
    "  R[i, 1] = sum(Z ^ 2 + 2 * Z)\n"
    "  R[i, 2] = max(rowSums(Z * i))\n"
    "  R[i, 3] = sum(exp(Z) / (1 + Z))\n"
    "}\n"
    "print(toString(round(R * 1e6)))\n"
    "S = matrix(0, 8, 2)\n"
    "parfor (i in 1:8) {\n"
    "  S[i, 1] = sum(rand(rows=2, cols=2))\n"
    "  S[i, 2] = sum(sample(50, 3))\n"
    "}\n"
    "print(toString(S))\n";

/* Runs braid -seed 5 on the script with the given environment prefix and
 * options; returns stdout (caller frees), NULL when braid failed. */
static char *run(const char *braid, const char *env, const char *opts, char **err)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cd '%s' && %s timeout -s KILL 300 '%s' -seed 5 %s -f s.dml >out 2>err", dir, env,
             braid, opts);
    int st = system(cmd);
    char p[128];
    snprintf(p, sizeof p, "%s/err", dir);
    *err = t_slurp(p, NULL);
    snprintf(p, sizeof p, "%s/out", dir);
    char *out = t_slurp(p, NULL);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "braid (%s %s) failed: %s\n", env, opts, *err ? *err : "");
        free(out);
        return NULL;
    }
    return out;
}

/* kmeans over 12000 x 6 (above BR_PAR_MIN cells: the threaded paths run),
 * four separated clusters so every run converges */
static const char *km_script =
    "X = rand(rows=12000, cols=6, min=-1, max=1, seed=3) + ((seq(1, 12000) %% 4) * 2.5)\n"
    "[C, Y] = kmeans(X=X, k=4, runs=3, max_iter=40, seed=11)\n"
    "write(C, $o + \"C\", format=\"csv\")\n"
    "write(Y, $o + \"Y\", format=\"csv\")\n";

/* Runs km.dml with env and options into dir/tag/; returns C's and Y's
 * files concatenated, a NUL byte between them (caller frees; the Y part
 * starts after the first NUL), NULL when braid failed. */
static char *run_km(const char *braid, const char *env, const char *opts, const char *tag)
{
    char cmd[2048], p[192];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && mkdir -p %s %s.cache && env %s timeout -s KILL 300 '%s' %s -f km.dml -nvargs o=%s/ "
             ">%s.out 2>&1",
             dir, tag, tag, env, braid, opts, tag, tag);
    int st = system(cmd);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        snprintf(p, sizeof p, "%s/%s.out", dir, tag);
        char *o = t_slurp(p, NULL);
        fprintf(stderr, "kmeans (%s %s) failed: %s\n", env, opts, o ? o : "");
        free(o);
        return NULL;
    }
    snprintf(p, sizeof p, "%s/%s/C", dir, tag);
    char *c = t_slurp(p, NULL);
    snprintf(p, sizeof p, "%s/%s/Y", dir, tag);
    char *y = t_slurp(p, NULL);
    char *all = c && y ? malloc(strlen(c) + strlen(y) + 2) : NULL;
    if (all) {
        strcpy(all, c);
        strcpy(all + strlen(c) + 1, y);
    }
    free(c);
    free(y);
    return all;
}

/* C's numbers in a and b (CSV text) equal within rtol of their size
 * (absolutely below 1), and the same count of them. */
static bool csv_near(const char *a, const char *b, double rtol)
{
    for (;;) {
        while (*a == ',' || *a == '\n') a++;
        while (*b == ',' || *b == '\n') b++;
        if (!*a || !*b) return !*a && !*b;
        char *ea, *eb;
        double x = strtod(a, &ea), y = strtod(b, &eb);
        if (ea == a || eb == b) return false;
        double m = fabs(x) > 1 ? fabs(x) : 1;
        if (!(fabs(x - y) <= rtol * m)) return false;
        a = ea;
        b = eb;
    }
}

/* Synchronous runs must give the same bytes on any thread count. A cold
 * asynchronous run starts on the unfused operators and changes to the
 * fused ones when they are compiled (one readiness per DAG: never a mix
 * within one execution); the default plan's one-pass operator sums
 * t(P) %*% X and colSums(P) row by row where the unfused ones sum
 * otherwise, so its centroids may differ in the last bits (README:
 * a cold run may differ in the last digits), its assignments Y not. */
static void test_kmeans_bits(const char *braid)
{
    char p[128];
    snprintf(p, sizeof p, "%s/km.dml", dir);
    t_put(p, km_script);
    char *ref = run_km(braid, "BRAID_CODEGEN_ASYNC=0", "-threads 1", "k0");
    T_CHECK(ref && strchr(ref, ','), "kmeans reference run");
    for (int t = 1; ref && t <= 3; t++)
        for (int async = 0; async < 2; async++) {
            if (t == 1 && !async) continue;
            char env[512], opts[32], tag[16];
            snprintf(tag, sizeof tag, "k%d%d", t, async);
            /* async: an empty cache folder of its own, no prebuilt kernels */
            if (async)
                snprintf(env, sizeof env, "BRAID_CODEGEN_ASYNC=1 BRAID_KERNELS=none XDG_CACHE_HOME=%s/%s.cache", dir,
                         tag);
            else
                snprintf(env, sizeof env, "BRAID_CODEGEN_ASYNC=0");
            snprintf(opts, sizeof opts, "-threads %d", t);
            char *out = run_km(braid, env, opts, tag);
            const char *ry = ref + strlen(ref) + 1, *oy = out ? out + strlen(out) + 1 : NULL;
            if (!async)
                T_CHECK(out && !strcmp(out, ref) && !strcmp(oy, ry),
                        "kmeans bits with -threads %d, synchronous compilation differ from one thread's", t);
            else
                T_CHECK(out && csv_near(out, ref, 1e-12) && !strcmp(oy, ry),
                        "kmeans with -threads %d, asynchronous cold compilation: assignments differ or centroids beyond "
                        "1e-12 from one thread's synchronous run", t);
            free(out);
        }
    free(ref);
}

/* One readiness per DAG execution (cgrun.h cg_ready_all): the shape of
 * SystemDS's kmeans loop with its verbose branch (the branch ends the
 * block after minD, so P = D <= minD reads both as variables). Under
 * fuse_all one operator computes D and another recomputes D for
 * rowMins(D); with per-operator readiness (an asynchronous compile
 * landing between them, or perturbation seeds 1-5 here) one ran the
 * generated code and the other the reference kernels, whose products
 * round differently: rows of D without a value <= minD, NaN centroids,
 * and in SystemDS's kmeans "index out of bounds: row 7:9 of a dimension
 * of size 6" (issue 23). Every row must have its nearest centroid under
 * every seed. */
static const char *shared_script =
    "X = rand(rows=40, cols=4, seed=4)\n"
    "C = X[1:3, ] + 0.01\n"
    "nohit = 0\n"
    "for (it in 1:30) {\n"
    "  D = -2 * (X %*% t(C)) + t(rowSums(C ^ 2))\n"
    "  minD = rowMins(D)\n"
    "  wcss = sum(X ^ 2) + sum(minD)\n"
    "  if (sum(X) < 0) print(\"wcss \" + wcss)\n"
    "  P = D <= minD\n"
    "  nohit = nohit + sum(rowSums(P) == 0)\n"
    "  P = P / rowSums(P)\n"
    "  C = (t(P) %*% X) / t(colSums(P))\n"
    "}\n"
    "print(\"wcss \" + round(wcss * 1e6))\n"
    "print(\"rows without a nearest centroid: \" + nohit)\n";

static void test_shared_subexpr(const char *braid)
{
    char p[128];
    snprintf(p, sizeof p, "%s/shared.dml", dir);
    t_put(p, shared_script);
    snprintf(p, sizeof p, "%s/fa.xml", dir);
    t_put(p, "<root><sysds.codegen.optimizer>fuse_all</sysds.codegen.optimizer></root>\n");
    char *ref = NULL;
    for (int seed = 0; seed <= 6; seed++) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd,
                 "cd '%s' && BRAID_CODEGEN_ASYNC=0 %s%d timeout -s KILL 300 '%s' -config fa.xml -f shared.dml "
                 ">sout 2>serr",
                 dir, seed ? "BRAID_PERTURB=" : "BRAID_X=", seed, braid);
        int st = system(cmd);
        snprintf(p, sizeof p, "%s/sout", dir);
        char *out = t_slurp(p, NULL);
        T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0 && out &&
                    strstr(out, "rows without a nearest centroid: 0.0\n"),
                "shared subexpression, perturbation seed %d: %s", seed, out ? out : "(no output)");
        if (seed == 0) ref = out;
        else {
            T_CHECK(out && ref && !strcmp(out, ref), "seed %d: %s differs from the unperturbed %s", seed,
                    out ? out : "", ref ? ref : "");
            free(out);
        }
    }
    free(ref);
}

int main(void)
{
    const char *braid = getenv("BRAID");
    if (!braid) { fprintf(stderr, "test_perturb: BRAID not set\n"); return 2; }
    /* every run the same machine constants: runs whose bits are compared
     * must not pick plans from constants another run measured under load */
    t_pin_machine();
    snprintf(dir, sizeof dir, "/tmp/braid_perturb_XXXXXX");
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 2; }
    char p[128];
    snprintf(p, sizeof p, "%s/s.dml", dir);
    t_put(p, script);

    char *err = NULL;
    char *ref = run(braid, "", "", &err);
    free(err);
    T_CHECK(ref && strstr(ref, "\n"), "unperturbed run");
    /* the parfor seed streams: the same values on 1, 2 and 3 threads */
    for (int t = 1; ref && t <= 3; t++) {
        char opts[32];
        snprintf(opts, sizeof opts, "-threads %d", t);
        char *out = run(braid, "", opts, &err);
        T_CHECK(out && !strcmp(out, ref), "-threads %d differs from the default:\n%s\nwant:\n%s", t,
                out ? out : "", ref);
        free(out);
        free(err);
    }
    /* perturbed runs, and one replayed */
    static const int seeds[] = {1, 2, 3, 4, 3};
    for (int i = 0; ref && i < (int)(sizeof seeds / sizeof *seeds); i++) {
        char env[64], want[64];
        snprintf(env, sizeof env, "BRAID_PERTURB=%d", seeds[i]);
        snprintf(want, sizeof want, "braid: perturbation seed %d\n", seeds[i]);
        char *out = run(braid, env, "", &err);
        T_CHECK(err && strstr(err, want), "%s: the seed is announced", env);
        T_CHECK(out && !strcmp(out, ref), "%s differs from the unperturbed run:\n%s\nwant:\n%s", env,
                out ? out : "", ref);
        free(out);
        free(err);
    }
    /* a malformed seed is ignored with a warning, never taken as 0 */
    char *out = run(braid, "BRAID_PERTURB=x1", "", &err);
    T_CHECK(out && ref && !strcmp(out, ref) && err && strstr(err, "BRAID_PERTURB must be a seed") &&
                !strstr(err, "perturbation seed"),
            "BRAID_PERTURB=x1: warning, unperturbed");
    free(out);
    free(err);
    free(ref);
    test_shared_subexpr(braid);
    test_kmeans_bits(braid);
    /* (the asynchronous runs' compiles may still be finishing into
     * their cache folders, detached: a file made while rm reads a folder
     * makes it fail: tried again) */
    char cmd[256];
    snprintf(cmd, sizeof cmd, "for i in 1 2 3 4 5 6 7 8 9 10; do rm -rf '%s' 2>/dev/null && exit 0; sleep 1; done; "
             "exit 1", dir);
    T_CHECK(system(cmd) == 0, "clean");
    return t_done("test_perturb");
}
