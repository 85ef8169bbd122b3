/* test_plandot.c: `braid -explain dot` / `dot_all` (api/plandot.c): one
 * Graphviz graph per statement block's DAG in braid_plan/, the script's
 * own blocks first, its functions next, the builtin library's only with
 * dot_all; operators with sizes, sparsity, memory and execution type, fused
 * ones filled; SVGs drawn by Graphviz's `dot` when it is on PATH (here a
 * stand-in script, so the test needs no Graphviz and sees exactly how it
 * is called), and graphs of an earlier run replaced; recompile_dot: the
 * DAGs recompiled at run time, with sizes known only then. Runs build/braid (or
 * $BRAID) in a temporary folder. */
#include <dirent.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t.h"

static char dir[] = "/tmp/braid_plandot_XXXXXX";

/* Blocks: main's line 2 (generic), the if's predicate and branches, the
 * for's range and body, line 7; the user's f; l2svm from the library. */
static const char *script =
    "f = function(Matrix[Double] A) return (Matrix[Double] B) { B = A %*% t(A) + 1 }\n"
    "X = rand(rows=100, cols=10, seed=1)\n"
    "y = (rowSums(X) > 5) * 2 - 1\n"
    "w = l2svm(X=X, Y=y)\n"
    "if (sum(w) > 0) { print(\"pos \" + sum(f(X))) } else { print(\"neg\") }\n"
    "for (i in 1:3) { X = X * 2 }\n"
    "print(sum(exp(X * 2 + 1)))\n";

/* A row count known only at run time (n from the data), then a loop
 * whose body codegen fuses once Z's size is known. */
static const char *script2 =
    "X = rand(rows=50, cols=5, seed=1)\n"
    "n = as.integer(min(40, sum(X > 0.5)))\n"
    "Z = X[1:n,]\n"
    "y = rowSums(Z)\n"
    "for (i in 1:3) {\n"
    "  y = exp(Z %*% (t(Z) %*% y) * 0.001) + 1\n"
    "}\n"
    "print(sum(y))\n";

static const char *script_file = "s.dml";

/* Runs braid -f script_file -explain kind in dir with path_dir (NULL:
 * none) put first on PATH; returns the exit status; stderr into dir/err. */
static int run(const char *kind, const char *path_dir)
{
    char cmd[8192], cwd[1024] = "";
    const char *b = getenv("BRAID") ? getenv("BRAID") : "build/braid";
    const char *path = getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin";
    if (b[0] != '/' && !getcwd(cwd, sizeof cwd)) return -1;
    snprintf(cmd, sizeof cmd, "cd %s && PATH='%s%s%s' timeout -s KILL 60 %s%s%s -f %s -explain %s >/dev/null 2>err",
             dir, path_dir ? path_dir : "", path_dir ? ":" : "", path, cwd, cwd[0] ? "/" : "", b, script_file, kind);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* The sorted file names of braid_plan/ ending in ext. */
static glob_t files(const char *ext)
{
    char pat[256];
    glob_t g = {0};
    snprintf(pat, sizeof pat, "%s/braid_plan/*%s", dir, ext);
    glob(pat, 0, NULL, &g);
    return g;
}

static const char *base(const char *path) { return strrchr(path, '/') + 1; }

static bool any_named(const glob_t *g, const char *part)
{
    for (size_t i = 0; i < g->gl_pathc; i++)
        if (strstr(base(g->gl_pathv[i]), part)) return true;
    return false;
}

static char *err_text(void)
{
    char p[256];
    snprintf(p, sizeof p, "%s/err", dir);
    char *s = t_slurp(p, NULL);
    return s ? s : calloc(1, 1);
}

/* Is Graphviz's dot on PATH? */
static bool graphviz_installed(void)
{
    const char *path = getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin";
    char cand[2048];
    for (const char *p = path; *p;) {
        const char *q = strchr(p, ':');
        int n = q ? (int)(q - p) : (int)strlen(p);
        snprintf(cand, sizeof cand, "%.*s/dot", n, p);
        if (access(cand, X_OK) == 0) return true;
        p += n + (q != NULL);
    }
    return false;
}

/* A stand-in Graphviz: dir/sub/dot running body; its folder into bin. */
static void stand_in(char *bin, size_t n, const char *sub, const char *body)
{
    char p[400];
    snprintf(bin, n, "%s/%s", dir, sub);
    mkdir(bin, 0700);
    snprintf(p, sizeof p, "%s/dot", bin);
    t_put(p, body);
    chmod(p, 0700);
}

/* dot without Graphviz: the user's blocks and functions, one graph each.
 * Where Graphviz is installed, a stand-in dot answers as a missing
 * command does (exit 127); else spawning dot really fails. */
static void user_graphs(void)
{
    char nobin[300], p[400];
    stand_in(nobin, sizeof nobin, "nobin", "#!/bin/sh\nexit 127\n");
    /* an earlier run's graph goes, a file of the user's stays */
    snprintf(p, sizeof p, "%s/braid_plan", dir);
    mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/braid_plan/999_old_graph.dot", dir);
    t_put(p, "digraph old {}\n");
    snprintf(p, sizeof p, "%s/braid_plan/notes.txt", dir);
    t_put(p, "mine\n");
    T_CHECK(run("dot", graphviz_installed() ? nobin : NULL) == 0, "braid -explain dot ran");
    glob_t g = files(".dot");
    T_CHECK(g.gl_pathc == 8, "8 graphs (7 blocks of main, 1 of f): %zu", g.gl_pathc);
    T_CHECK(g.gl_pathc && !strcmp(base(g.gl_pathv[0]), "001_main_generic_line_2.dot"), "main's first block first: %s",
            g.gl_pathc ? base(g.gl_pathv[0]) : "-");
    T_CHECK(any_named(&g, "_main_if_line_5_predicate.dot") && any_named(&g, "_main_for_line_6_range.dot") &&
                any_named(&g, "_f_generic_line_1.dot"), "predicate, range and the user's function");
    T_CHECK(!any_named(&g, "l2svm") && !any_named(&g, "999_old"), "no library function, no old graph");
    T_CHECK(access(p, F_OK) == 0, "a file not named as braid's graphs is kept");
    bool fused = false, sized = false, all_one = true;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        char *s = t_slurp(g.gl_pathv[i], NULL);
        all_one &= s && !strncmp(s, "digraph \"", 9) && strstr(s, "rankdir=TB") && strchr(s, '}') == strrchr(s, '}');
        fused |= s && strstr(s, "spoof") && strstr(s, "fillcolor=\"#f5b041\"");
        sized |= s && strstr(s, "[100 x 10]") && strstr(s, "KB CP");
        free(s);
    }
    T_CHECK(all_one, "each file one top-to-bottom digraph");
    T_CHECK(fused, "a fused operator, filled");
    T_CHECK(sized, "sizes, memory estimate and execution type in the labels");
    char *e = err_text();
    T_CHECK(strstr(e, "wrote 8 graphs") && strstr(e, "no .svg"), "the report: %s", e);
    free(e);
    globfree(&g);
    g = files(".svg");
    T_CHECK(g.gl_pathc == 0, "no SVG without Graphviz");
    globfree(&g);
}

/* dot_all with a stand-in Graphviz: the library's functions after the
 * user's, and each graph drawn as `dot -Tsvg -o out.svg in.dot`. */
static void library_and_svg(void)
{
    char bin[300];
    stand_in(bin, sizeof bin, "bin",
             "#!/bin/sh\n[ \"$1 $2\" = \"-Tsvg -o\" ] || exit 3\nprintf '<svg>%s</svg>\\n' \"$4\" > \"$3\"\n");
    T_CHECK(run("dot_all", bin) == 0, "braid -explain dot_all ran");
    glob_t g = files(".dot"), s = files(".svg");
    T_CHECK(g.gl_pathc > 8 && any_named(&g, "_m_l2svm_while_line_"), "the library's functions too: %zu", g.gl_pathc);
    size_t f_at = 0, lib_at = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        if (!f_at && strstr(base(g.gl_pathv[i]), "_f_")) f_at = i + 1;
        if (!lib_at && strstr(base(g.gl_pathv[i]), "_m_l2svm_")) lib_at = i + 1;
    }
    T_CHECK(f_at && lib_at && f_at < lib_at, "the user's function before the library's (%zu, %zu)", f_at, lib_at);
    T_CHECK(s.gl_pathc == g.gl_pathc, "one SVG per graph: %zu of %zu", s.gl_pathc, g.gl_pathc);
    bool drawn = s.gl_pathc > 0;
    for (size_t i = 0; i < s.gl_pathc && i < g.gl_pathc; i++) {
        char *t = t_slurp(s.gl_pathv[i], NULL);
        drawn &= t && strstr(t, base(g.gl_pathv[i])) != NULL;   /* drawn from its own .dot */
        free(t);
    }
    T_CHECK(drawn, "each SVG drawn from its graph");
    char *e = err_text();
    T_CHECK(strstr(e, "library functions included") && strstr(e, ".svg drawn by Graphviz"), "the report: %s", e);
    free(e);
    globfree(&g);
    globfree(&s);
    /* a Graphviz that fails: reported, the graphs all written */
    stand_in(bin, sizeof bin, "bin", "#!/bin/sh\nexit 1\n");
    T_CHECK(run("dot", bin) == 0, "braid ran with a failing dot");
    g = files(".dot");
    e = err_text();
    T_CHECK(g.gl_pathc == 8 && strstr(e, "Graphviz failed"), "a failing dot reported: %s", e);
    free(e);
    globfree(&g);
}

/* Does any file of g hold both parts? */
static bool any_holds(const glob_t *g, const char *a, const char *b)
{
    bool found = false;
    for (size_t i = 0; i < g->gl_pathc && !found; i++) {
        char *t = t_slurp(g->gl_pathv[i], NULL);
        found = t && strstr(t, a) && strstr(t, b);
        free(t);
    }
    return found;
}

/* recompile_dot: the DAGs as dynamic recompilation made them during the
 * run, one file each, where Z's 40 rows (known only once n is) and the
 * fused loop body show; the compile-time graphs (dot) lack that size. */
static void recompiled_graphs(void)
{
    char bin[300];
    stand_in(bin, sizeof bin, "bin",
             "#!/bin/sh\n[ \"$1 $2\" = \"-Tsvg -o\" ] || exit 3\nprintf '<svg>%s</svg>\\n' \"$4\" > \"$3\"\n");
    script_file = "s2.dml";
    T_CHECK(run("dot", bin) == 0, "braid -explain dot ran (s2)");
    glob_t g = files(".dot");
    T_CHECK(g.gl_pathc > 0 && !any_holds(&g, "[40 x 5]", "TRead"), "compile time: Z's size unknown (%zu graphs)",
            g.gl_pathc);
    globfree(&g);
    T_CHECK(run("recompile_dot", bin) == 0, "braid -explain recompile_dot ran");
    g = files(".dot");
    glob_t s = files(".svg");
    bool named = g.gl_pathc > 0;
    for (size_t i = 0; i < g.gl_pathc; i++) named &= strstr(base(g.gl_pathv[i]), "_s2_dml_") &&
                                                      strstr(base(g.gl_pathv[i]), "_recompiled.dot");
    T_CHECK(named, "recompiled graphs only, named by file, line and kind (%zu)", g.gl_pathc);
    T_CHECK(any_holds(&g, "[40 x 5]", "label=\"s2.dml:6 block (recompiled)\""),
            "the loop body with Z's run-time size, titled by its position");
    T_CHECK(any_holds(&g, "spoof", "fillcolor=\"#f5b041\"") && any_holds(&g, "[40 x 5]", "spoof"),
            "the fused operator of the recompiled body, filled");
    T_CHECK(s.gl_pathc == g.gl_pathc, "one SVG per recompiled graph: %zu of %zu", s.gl_pathc, g.gl_pathc);
    char *e = err_text();
    T_CHECK(strstr(e, "recompiled at run time") && strstr(e, ".svg drawn by Graphviz"), "the report: %s", e);
    free(e);
    globfree(&g);
    globfree(&s);
    script_file = "s.dml";
}

int main(void)
{
    /* the fused operators the graphs must show are the cost model's
     * choice: pinned constants, not ones measured under load */
    t_pin_machine();
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 2; }
    char p[300];
    snprintf(p, sizeof p, "%s/s.dml", dir);
    t_put(p, script);
    snprintf(p, sizeof p, "%s/s2.dml", dir);
    t_put(p, script2);
    user_graphs();
    library_and_svg();
    recompiled_graphs();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "test_plandot: could not remove %s\n", dir);
    return t_done("test_plandot");
}
