/* plandot.c: -explain dot / dot_all of the braid command: one Graphviz
 * file per statement block's DAG (plan_each_dag, hop_dag_dot) in a
 * folder, and an SVG of each when Graphviz's dot is on PATH. A program's
 * DAGs drawn as one graph made pictures no one could read (a 9-line
 * script with its library functions: 32767 x 1037 pixels). -explain
 * recompile_dot writes the DAGs as dynamic recompilation rebuilt them
 * during the run instead (the inputs' sizes known, fused operators in
 * place), one file per recompiled DAG in the order the run made them
 * (a block recompiled again for other sizes gets another file; one
 * answered by the block's cache of recompilations, none). */
#include <dirent.h>
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "../plan/program.h"
#include "../plan/recompile.h"
#include "script.h"

extern char **environ;

struct DotFiles {
    char *dir;
    int n;            /* graphs written */
    int svg;          /* 1: draw with Graphviz, 0: not found, -1: a drawing failed */
    bool failed;      /* a file could not be written */
};

/* Our file names: three digits, '_', ..., ".dot" or ".svg". */
static bool ours(const char *name)
{
    size_t n = strlen(name);
    return n > 8 && name[0] >= '0' && name[0] <= '9' && name[1] >= '0' && name[1] <= '9' && name[2] >= '0' &&
           name[2] <= '9' && name[3] == '_' && (!strcmp(name + n - 4, ".dot") || !strcmp(name + n - 4, ".svg"));
}

/* Removes the graphs an earlier run left in dir (only files named as
 * this writes them), so the folder shows this program's blocks only. */
static void remove_old(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char path[4096];
    while ((e = readdir(d)))
        if (ours(e->d_name) && snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path) unlink(path);
    closedir(d);
}

/* Runs "dot -Tsvg -o svg file"; 1 drawn, 0 Graphviz not installed, -1
 * it failed. */
static int draw(const char *file, const char *svg)
{
    char *argv[] = {"dot", "-Tsvg", "-o", (char *)svg, (char *)file, NULL};
    pid_t pid;
    int st;
    if (posix_spawnp(&pid, "dot", NULL, NULL, argv, environ)) return 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return -1;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 127) return 0;   /* a shell's "not found" */
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 1 : -1;
}

/* The title as a file name's part: letters and digits, '_' between. */
static void file_part(char *dst, size_t n, const char *title)
{
    size_t k = 0;
    for (const char *s = title; *s && k + 1 < n; s++) {
        bool keep = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9');
        if (keep) dst[k++] = *s >= 'A' && *s <= 'Z' ? (char)(*s - 'A' + 'a') : *s;
        else if (k && dst[k - 1] != '_') dst[k++] = '_';
    }
    while (k && dst[k - 1] == '_') k--;
    dst[k] = 0;
}

static void write_one(void *ctx, const char *title, const HopDag *d)
{
    DotFiles *df = ctx;
    char part[200], path[4096], svg[4096];
    file_part(part, sizeof part, title);
    snprintf(path, sizeof path, "%s/%03d_%s.dot", df->dir, ++df->n, part);
    FILE *f = fopen(path, "w");
    if (!f) { df->failed = true; return; }
    hop_dag_dot(d, f, title);
    if (fclose(f)) { df->failed = true; return; }
    if (df->svg != 1) return;
    snprintf(svg, sizeof svg, "%s/%03d_%s.svg", df->dir, df->n, part);
    df->svg = draw(path, svg);
}

DotFiles *api_dots_open(const char *dir)
{
    if (mkdir(dir, 0777) && errno != EEXIST) {
        fprintf(stderr, "braid: cannot make the folder %s: %s\n", dir, strerror(errno));
        return NULL;
    }
    DotFiles *df = calloc(1, sizeof *df);
    if (!df || !(df->dir = strdup(dir))) {
        free(df);
        fprintf(stderr, "braid: out of memory\n");
        return NULL;
    }
    remove_old(dir);
    df->svg = 1;
    return df;
}

int api_dots_close(DotFiles *df, const char *what)
{
    int rc = 0;
    if (df->failed) {
        fprintf(stderr, "braid: cannot write the graphs into %s/\n", df->dir);
        rc = -1;
    } else {
        fprintf(stderr, "braid: wrote %d graph%s (%s) to %s/: .dot files%s\n", df->n, df->n == 1 ? "" : "s", what,
                df->dir, !df->n ? "" : df->svg == 1 ? " and .svg drawn by Graphviz"
                         : df->svg == 0 ? " (no .svg: Graphviz's dot is not on PATH)"
                                        : " (Graphviz failed to draw one; .svg files stop there)");
    }
    free(df->dir);
    free(df);
    return rc;
}

int api_write_plan_dots(const RtProgram *p, const char *dir, bool library)
{
    DotFiles *df = api_dots_open(dir);
    if (!df) return -1;
    plan_each_dag(p, library, write_one, df);
    return api_dots_close(df, library ? "one per statement block, library functions included"
                                      : "one per statement block");
}

/* ---- the DAGs recompiled at run time ---- */

void api_recompiled_title(char *buf, size_t n, const PBlock *b)
{
    static const char *kind[] = {[PB_GENERIC] = "block", [PB_IF] = "if predicate", [PB_WHILE] = "while predicate",
                                 [PB_FOR] = "for header"};
    const char *file = b->span.file ? strrchr(b->span.file, '/') : NULL;
    snprintf(buf, n, "%s:%d %s (recompiled)", file ? file + 1 : b->span.file ? b->span.file : "<script>",
             b->span.line, kind[b->kind]);
}

void api_dots_recompiled(void *ctx, const PBlock *b, void *ref)
{
    char title[300];
    api_recompiled_title(title, sizeof title, b);
    write_one(ctx, title, rc_dag(ref));
}

void api_dot_to_stream(void *ctx, const PBlock *b, void *ref)
{
    char title[300];
    api_recompiled_title(title, sizeof title, b);
    hop_dag_dot(rc_dag(ref), ctx, title);
}
