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
 * message is then braid_error(s); errors in the script carry its position
 * ("file:line:col: error: ..."). braid_bind_matrix and braid_get_matrix
 * copy; the view functions below bind and return matrices without copies.
 *
 * Threads: a BraidScript is not thread-safe; use one per thread. Separate
 * scripts may be prepared, bound and executed concurrently from different
 * threads (tests/test_api.c runs two at once). */
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

/* ---- Zero-copy inputs ----
 * A view binding borrows the caller's arrays instead of copying them.
 * Lifetime: release(ctx) is called exactly once, when braid no longer
 * references any of the arrays: after the binding is replaced or the
 * script freed, and after every output that shares the input (a script
 * such as "Y = X" returns the input itself) is gone from the results and
 * from the BraidMatrix views taken of it. It may be called before the bind
 * function returns (when braid copied instead, or on an error), and from
 * whichever thread drops the last reference. Until then the caller must
 * keep the arrays alive and must not write them: braid counts the
 * non-zeros when binding and never writes into a borrowed array (a script
 * that assigns into X works on a copy). To change the data, rebind.
 * release may be NULL, which makes the bind functions copy. */
typedef void (*BraidRelease)(void *ctx);

/* Dense row-major rows x cols doubles, borrowed (any 8-byte alignment).
 * Kept dense even when mostly zero (a sparse form would be a copy). */
int braid_bind_matrix_view(BraidScript *s, const char *name, const double *data,
                           int64_t rows, int64_t cols, BraidRelease release, void *ctx);
/* Dense column-major (Fortran order) rows x cols doubles, borrowed, with
 * braid_bind_matrix_view's lifetime rules. braid's blocks are row-major:
 * the buffer is bound as the row-major cols x rows block V, and the
 * script reads the input as t(V). Executing with such a binding runs a
 * variant of the prepared program whose first statements are X = t(X)
 * for each such input X, compiled on the first execution (or
 * braid_explain) with this set of transposed inputs and kept until the
 * set changes (rebinding X row-major runs the prepared program again).
 * The rewrites then remove the transpose where the script's first
 * statement block allows: t(X) %*% X, X %*% t(X), X %*% v, t(X) %*% y,
 * sum(X), colSums/rowSums(X), elementwise X + t(Y), ... read V itself.
 * Where a consumer needs X itself (a later block, a loop, an output
 * X), braid computes t(V) once per execution into its own block; the
 * caller's buffer is never written. A vector (rows or cols 1) is the
 * same buffer in both orders and bound as braid_bind_matrix_view. With
 * release NULL the buffer is copied (braid_bind_matrix_strided). */
int braid_bind_matrix_view_colmajor(BraidScript *s, const char *name, const double *data,
                                    int64_t rows, int64_t cols, BraidRelease release, void *ctx);
/* Dense with strides in elements, copied: cell (i, j) is
 * data[i*row_stride + j*col_stride] (column-major without a copy:
 * braid_bind_matrix_view_colmajor). */
int braid_bind_matrix_strided(BraidScript *s, const char *name, const double *data,
                              int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride);
/* CSR: row i's entries are indices[k], values[k] for k in
 * [indptr[i], indptr[i+1]). index_bits / indptr_bits: 32 or 64 (the
 * integer width of indices / indptr). Borrowed where the arrays already
 * are braid's form (64-bit indptr, 32-bit indices, columns ascending in
 * each row without duplicates or stored zeros); otherwise copied into
 * that form (duplicates summed, zeros dropped). Malformed structure
 * (indptr not starting at 0 or decreasing, a column out of range) fails. */
int braid_bind_csr(BraidScript *s, const char *name, int64_t rows, int64_t cols,
                   const void *indptr, int indptr_bits, const void *indices, int index_bits,
                   const double *values, BraidRelease release, void *ctx);
/* CSC of a rows x cols matrix: column j's entries are indices[k] (rows),
 * values[k] for k in [indptr[j], indptr[j+1]) (cols+1 indptr entries).
 * These are the CSR arrays of its cols x rows transpose, bound by
 * braid_bind_csr's rules (borrowed when canonical) and read by the
 * script as t(block), as braid_bind_matrix_view_colmajor. */
int braid_bind_csc(BraidScript *s, const char *name, int64_t rows, int64_t cols,
                   const void *indptr, int indptr_bits, const void *indices, int index_bits,
                   const double *values, BraidRelease release, void *ctx);

/* ---- Frames ----
 * A frame (DML's table type) crosses the API as columns, each with a name
 * and one type. Column data: BRAID_COL_DOUBLE double[rows] (NaN:
 * missing), BRAID_COL_INT int64_t[rows], BRAID_COL_BOOL uint8_t[rows]
 * (0/1), BRAID_COL_STRING const char *[rows] (NULL: missing). */
typedef enum { BRAID_COL_STRING, BRAID_COL_DOUBLE, BRAID_COL_INT, BRAID_COL_BOOL } BraidColType;
typedef struct BraidColumn {
    const char *name;              /* NULL: the default name C<j+1> */
    BraidColType type;
    const void *data;
} BraidColumn;
/* Binds a frame of rows x ncols, copied (frames are column objects of
 * braid's own; strings are copied). */
int braid_bind_frame(BraidScript *s, const char *name, int64_t rows, const BraidColumn *cols, int ncols);

/* ---- Lists ----
 * DML lists (of matrices, frames, scalars, strings and lists, each item
 * optionally named) cross the API as BraidList handles: build one and bind
 * it, or read one from an output. A handle holds a reference to braid's
 * list (free with braid_list_free); lists are immutable once bound or
 * returned. Item functions return -1 for a wrong index or kind. */
typedef struct BraidList BraidList;
BraidList *braid_list_new(void);
void braid_list_free(BraidList *l);
/* Appending (name NULL: unnamed). Matrices are copied; an appended list is
 * shared (item keeps its own handle). */
int braid_list_append_matrix(BraidList *l, const char *name, const double *data, int64_t rows, int64_t cols);
int braid_list_append_double(BraidList *l, const char *name, double v);
int braid_list_append_int(BraidList *l, const char *name, int64_t v);
int braid_list_append_string(BraidList *l, const char *name, const char *v);
int braid_list_append_list(BraidList *l, const char *name, const BraidList *item);
/* A frame item, copied as braid_bind_frame copies (columns below). */
int braid_list_append_frame(BraidList *l, const char *name, int64_t rows, const BraidColumn *cols, int ncols);
/* Binds l (l stays the caller's to free; the binding shares the list). */
int braid_bind_list(BraidScript *s, const char *name, const BraidList *l);

/* sysds.compressed.linalg for s's executions: "false" (the default),
 * "true" or "auto" (docs/cla.md, "When braid compresses"). The planner
 * knows what the run time will compress, so a change recompiles the
 * script; -1 with braid_error(s) for another mode. */
int braid_set_compressed_linalg(BraidScript *s, const char *mode);

/* Runs the script with the current bindings. Outputs of the previous run
 * are replaced. print() output goes to stdout. */
int braid_execute(BraidScript *s);

/* Outputs of the last execution. braid_get_matrix copies into a new array
 * (*data, free with braid_free); a scalar output read as a matrix is 1x1. */
int braid_get_matrix(BraidScript *s, const char *name, double **data,
                     int64_t *rows, int64_t *cols);
int braid_get_double(BraidScript *s, const char *name, double *v);
int braid_get_int(BraidScript *s, const char *name, int64_t *v);

/* The kind of an output of the last execution (BRAID_NONE: not assigned
 * or no such output). */
typedef enum { BRAID_NONE, BRAID_MATRIX, BRAID_DOUBLE, BRAID_INT, BRAID_BOOL,
               BRAID_STRING, BRAID_FRAME, BRAID_LIST, BRAID_OTHER } BraidKind;
BraidKind braid_output_kind(BraidScript *s, const char *name);

/* ---- Zero-copy outputs ----
 * A view of a matrix output: braid's own storage, dense row-major (data)
 * or CSR (indptr, indices, values; nnz entries). It stays valid until
 * braid_matrix_free, whatever happens to the script (later executions,
 * braid_script_free). writable: nothing else in braid shares the storage
 * (not another output, an input, or a constant of the program), so the
 * caller may write it; otherwise it must only be read. A scalar output
 * is returned as a 1x1 dense matrix. */
typedef struct BraidMatrix {
    int64_t rows, cols, nnz;
    bool sparse;
    bool writable;
    double *data;                  /* dense: rows*cols cells */
    int64_t *indptr;               /* CSR: rows+1 entries */
    int32_t *indices;              /* CSR: nnz column indexes */
    double *values;                /* CSR: nnz values */
    void *handle;                  /* braid's reference */
} BraidMatrix;
/* dense: return a dense view (a sparse block is densified into new,
 * writable storage); otherwise the block as braid holds it (dense or
 * CSR, by braid's format rule). */
int braid_get_matrix_view(BraidScript *s, const char *name, bool dense, BraidMatrix *out);
void braid_matrix_free(BraidMatrix *m);

/* A list output as a new handle (free with braid_list_free). */
int braid_get_list(BraidScript *s, const char *name, BraidList **out);
int64_t braid_list_length(const BraidList *l);
/* Name of item i (0-based), or NULL when unnamed or out of range. */
const char *braid_list_name(const BraidList *l, int64_t i);
BraidKind braid_list_kind(const BraidList *l, int64_t i);  /* BRAID_NONE: out of range */
int braid_list_get_double(const BraidList *l, int64_t i, double *v);
int braid_list_get_int(const BraidList *l, int64_t i, int64_t *v);
int braid_list_get_string(const BraidList *l, int64_t i, char **v);   /* free with braid_free */
int braid_list_get_matrix_view(const BraidList *l, int64_t i, bool dense, BraidMatrix *out);
int braid_list_get_list(const BraidList *l, int64_t i, BraidList **out);

/* A frame output's columns, viewing braid's storage (read-only) until
 * braid_frame_free, like BraidMatrix; columns[j].data as for
 * braid_bind_frame. */
typedef struct BraidFrame {
    int64_t rows, cols;
    BraidColumn *columns;          /* cols entries */
    void *handle;                  /* braid's reference */
} BraidFrame;
int braid_get_frame_view(BraidScript *s, const char *name, BraidFrame *out);
void braid_frame_free(BraidFrame *f);
/* A frame item as a view (braid_get_frame_view; free with braid_frame_free). */
int braid_list_get_frame_view(const BraidList *l, int64_t i, BraidFrame *out);
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
    const char *explain;              /* NULL, "hops", "runtime", "dot"
                                         (one Graphviz file per block's
                                         DAG in braid_plan/, with SVG
                                         when Graphviz is installed),
                                         "dot_all" (library functions
                                         too), "codegen", "recompile_hops",
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
    const char *gpu;                  /* -gpu: NULL (the configuration's
                                         sysds.gpu), "on" (per operator by
                                         cost) or "force" (docs/gpu.md) */
    const char *out;                  /* -out: NULL, or a file that takes
                                         this run's stdout and stderr (rank
                                         0's under mpirun) */
    bool bindcheck;                   /* -bindcheck: calls of DML functions
                                         print how their arguments bound
                                         (one "bind ..." line each) and
                                         return empty outputs without
                                         running the body; compiled at
                                         sysds.optlevel 0 (no inlining) */
} BraidRunOptions;
/* Returns the exit status: 0 on success, 1 on any error. */
int braid_run(const BraidRunOptions *o);
/* For a host's SIGTERM/SIGINT handler (the library installs none; the
 * CLI's calls it, then exits with 128 + the signal): kills the process
 * groups of running compiles and removes the temporaries of writes and
 * compiles in progress. Async-signal-safe. Outputs are published by
 * rename, so none is left partial. */
void braid_signal_cleanup(void);
/* n runs in order in this process (`braid ... -then ...`): under mpirun
 * every rank runs them all, MPI initialized once; between two runs the
 * distributed state and statistics are reset (dist_reset), so each run
 * starts as in a new process. Every run runs, also after one failed; 1
 * when any failed. */
int braid_run_all(const BraidRunOptions *runs, int n);
/* `braid -np N args...`: runs `mpirun -np N braid args...` (BRAID_MPIRUN:
 * the command, default mpirun; BRAID_MPIRUN_OPTS: more options, split at
 * blanks) and returns its status, except that a rank that died makes it
 * 1 with "braid: error: rank R died (signal S) during instruction ..."
 * (docs/dist.md, "Faults"). args: the command line without -np N. */
int braid_launch(int np, int argc, char **argv);

/* ---- Introspection (used by the Python package's lazy API) ----
 * The plan of a prepared script as text: kind "hops" (-explain hops),
 * "runtime" (-explain runtime), "dot" (Graphviz: one digraph per statement
 * block's DAG, the script's own and its functions'), "dot_all" (the
 * builtin library's functions too) or "recompile_hops" / "recompile_dot"
 * (below). Inputs not bound at prepare time have unknown sizes in it;
 * with column-major or CSC inputs bound, the plan is their variant's.
 * *text is malloc'd (braid_free). */
int braid_explain(BraidScript *s, const char *kind, char **text);
/* Record the DAGs recompiled with the bound inputs' sizes (where fused
 * operators show) by the following executions: braid_explain(s,
 * "recompile_hops") then gives the last execution's as text,
 * braid_explain(s, "recompile_dot") as Graphviz graphs (one digraph per
 * recompiled DAG, in the order the run recompiled them, titled with the
 * block's script position). */
void braid_trace_recompile(BraidScript *s, bool on);
/* Loop statistics: with braid_count_loops(s, true) the following
 * executions count, per loop statement (while, for, parfor) of the script
 * and of the functions it calls (the builtin library's included), how
 * often it ran and its iterations; braid_loops(s, &loops) gives the last
 * execution's (the number of loops, first entered first; *loops valid
 * until the next braid_execute or braid_script_free of s). A count does
 * not depend on what the script prints: clients read a builtin's
 * iteration count here (the Python estimators' n_iter_: the first loop
 * of the builtin's file). */
typedef struct BraidLoop {
    const char *file;         /* the script's path ("<script>" for text) */
    int line, col;            /* of the loop statement */
    int64_t entries;          /* times the loop statement ran */
    int64_t iterations;       /* runs of its body, all entries together */
    int64_t max_iterations;   /* the most of one entry */
} BraidLoop;
void braid_count_loops(BraidScript *s, bool on);
int braid_loops(const BraidScript *s, const BraidLoop **loops);
/* Collect what the following executions of s print (print(), warnings
 * of the builtins) in memory instead of writing it to stdout (on), or
 * write to stdout again (off). braid_output(s) is the last execution's
 * text, also when it failed ("" when it did not collect); valid until the next
 * braid_execute or braid_script_free of s. Per script: threads running
 * separate scripts each collect their own. */
void braid_capture_output(BraidScript *s, bool on);
const char *braid_output(const BraidScript *s);

/* One parameter or output of a builtin's signature. */
typedef struct BraidParam {
    const char *name;         /* "" for a native builtin's unnamed outputs */
    const char *type;         /* "matrix", "frame", "list", "scalar", "any" */
    const char *value_type;   /* "double", "int", "boolean", "string", "" */
    const char *deflt;        /* the default (as braid prints expressions);
                                 NULL: required */
} BraidParam;

/* A builtin function's signature: a native builtin of braid's operator
 * table (base/ops.def) or a DML function of the builtin library
 * (scripts/builtin/NAME.dml, as DML calls resolve it). */
typedef struct BraidSignature {
    const char *name;
    bool library;             /* a DML function of the library */
    bool varargs;             /* further positional arguments accepted */
    bool sidefx;              /* has a side effect (print, write, ...) */
    int nin, nout;            /* native: nout 1, or n for [a, b] = f() */
    BraidParam *in, *out;
    const char *file;         /* library: the file defining it */
} BraidSignature;

/* The names DML resolves as builtins: the native table's and the
 * library's (one per .dml file of scripts/builtin), sorted, without duplicates.
 * *names is a malloc'd array of n malloc'd strings (free each and the
 * array with braid_free). */
int braid_builtin_names(char ***names, int *n);
/* The signature of builtin name; NULL (with *err set, malloc'd) when
 * there is no such builtin or its library file does not load. */
BraidSignature *braid_builtin_signature(const char *name, char **err);
void braid_signature_free(BraidSignature *sig);

/* The last error message of s ("" if none); valid until the next call. */
const char *braid_error(const BraidScript *s);
/* The folder holding the builtin library (DIR/scripts/builtin) when the
 * environment sets no BRAID_HOME (default: the source tree braid was
 * built in). Process-wide; call it before preparing scripts, not while
 * another thread prepares one (an installed Python package points it at
 * its own copy of the library). NULL: the default again. */
void braid_set_home(const char *dir);
/* Threads used by braid's kernels (0: all cores). Process-wide. */
void braid_set_threads(int n);
void braid_free(void *p);

#ifdef __cplusplus
}
#endif

#endif
