/* braid.h: the embedding API of braid, a declarative machine-learning
 * system that runs DML scripts.
 *
 * Prepare a script once, bind in-memory matrices and scalars as its
 * inputs, execute it many times, and read its outputs:
 *
 *   BraidScript *s = braid_prepare(
 *       "y = X %*% w", (const char *[]){"X", "w"}, 2, (const char *[]){"y"}, 1, &err);
 *   braid_bind_matrix(s, "X", data, rows, cols);
 *   braid_bind_matrix(s, "w", wdata, cols, 1);
 *   braid_execute(s);
 *   braid_get_matrix(s, "y", &out, &r, &c);   // free out with braid_free
 *
 * All functions returning int return 0 on success and -1 on failure; the
 * message is then braid_error(s). Matrices cross the API as dense row-major
 * arrays of doubles, which are copied. A script is not thread-safe: use one
 * BraidScript per thread (several may share nothing but the process). */
#ifndef BRAID_H
#define BRAID_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct BraidScript BraidScript;

/* Compiles script (DML text). inputs: names of variables the caller binds
 * before each execution; outputs: variables read after it. On a compile
 * error returns NULL and sets *err to a malloc'd message (caller frees with
 * braid_free) when err is not NULL. */
BraidScript *braid_prepare(const char *script, const char *const *inputs, int ninputs,
                           const char *const *outputs, int noutputs, char **err);
/* As braid_prepare, from a file; the script's own $-arguments may be given
 * as name/value pairs (nargs of them). */
BraidScript *braid_prepare_file(const char *path, const char *const *arg_names,
                                const char *const *arg_values, int nargs,
                                const char *const *inputs, int ninputs,
                                const char *const *outputs, int noutputs, char **err);
void braid_script_free(BraidScript *s);

/* Inputs (copied). Binding a name that is not a declared input fails. */
int braid_bind_matrix(BraidScript *s, const char *name, const double *data,
                      int64_t rows, int64_t cols);
int braid_bind_double(BraidScript *s, const char *name, double v);
int braid_bind_int(BraidScript *s, const char *name, int64_t v);
int braid_bind_bool(BraidScript *s, const char *name, bool v);
int braid_bind_string(BraidScript *s, const char *name, const char *v);

/* Runs the script with the current bindings. Outputs of the previous run
 * are replaced. print() output goes to stdout. */
int braid_execute(BraidScript *s);

/* Outputs of the last execution. braid_get_matrix copies into a new array
 * (*data, free with braid_free); a scalar output read as a matrix is 1x1. */
int braid_get_matrix(BraidScript *s, const char *name, double **data,
                     int64_t *rows, int64_t *cols);
int braid_get_double(BraidScript *s, const char *name, double *v);
/* A string output, malloc'd (free with braid_free). */
int braid_get_string(BraidScript *s, const char *name, char **v);

/* Running a script the way the braid command does (the CLI is a client of
 * this header): compile, explain, run, report errors and statistics.
 * print() output goes to stdout; errors, warnings and statistics to
 * stderr. */
typedef struct BraidRunOptions {
    const char *file;                 /* the script file, or */
    const char *text;                 /* the script's text (-s) */
    const char *const *arg_names;     /* $-arguments: names ("1", "2", ... */
    const char *const *arg_values;    /*   for -args) and values */
    int nargs;
    const char *config;               /* SystemDS XML configuration; NULL */
    const char *explain;              /* NULL, "hops", "runtime", "dot",
                                         "codegen", "recompile_hops",
                                         "recompile_runtime" */
    bool stats;                       /* -stats */
    int stats_top;                    /* heavy hitters shown (0: 10) */
    int64_t seed;                     /* -seed; -1: none */
    int threads;                      /* 0: the configuration's (all cores) */
    const char *builtin_dir;          /* the DML builtin library; NULL:
                                         scripts/builtin */
    const char *exec;                 /* -exec: "singlenode", "hybrid"
                                         (NULL: the default), "distributed"
                                         or "spark" (= distributed) */
} BraidRunOptions;
/* Returns the exit status: 0 on success, 1 on any error. */
int braid_run(const BraidRunOptions *o);

/* The last error message of s ("" if none); valid until the next call. */
const char *braid_error(const BraidScript *s);
/* Threads used by braid's kernels (0: all cores). Process-wide. */
void braid_set_threads(int n);
void braid_free(void *p);

#ifdef __cplusplus
}
#endif

#endif
