/* plandot.c: -explain dot / dot_all of the braid command: one Graphviz
 * file per statement block's DAG (plan_each_dag, hop_dag_dot) in a
 * folder, and an SVG of each when Graphviz's dot is on PATH. A program's
 * DAGs drawn as one graph made pictures no one could read (a 9-line
 * script with its library functions: 32767 x 1037 pixels). */
#include <dirent.h>
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "../plan/program.h"
#include "script.h"

extern char **environ;

typedef struct DotFiles {
    const char *dir;
    int n;            /* graphs written */
    int svg;          /* 1: draw with Graphviz, 0: not found, -1: a drawing failed */
    bool failed;      /* a file could not be written */
} DotFiles;

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

int api_write_plan_dots(const RtProgram *p, const char *dir, bool library)
{
    if (mkdir(dir, 0777) && errno != EEXIST) {
        fprintf(stderr, "braid: cannot make the folder %s: %s\n", dir, strerror(errno));
        return -1;
    }
    remove_old(dir);
    DotFiles df = {.dir = dir, .svg = 1};
    plan_each_dag(p, library, write_one, &df);
    if (df.failed) {
        fprintf(stderr, "braid: cannot write the graphs into %s/\n", dir);
        return -1;
    }
    fprintf(stderr, "braid: wrote %d graph%s (one per statement block%s) to %s/: .dot files%s\n", df.n,
            df.n == 1 ? "" : "s", library ? ", library functions included" : "", dir,
            df.svg == 1 ? " and .svg drawn by Graphviz" : df.svg == 0 ? " (no .svg: Graphviz's dot is not on PATH)"
                                                      : " (Graphviz failed to draw one; .svg files stop there)");
    return 0;
}
