/* script.h: the embedding API's script handle, shared by api.c (prepare,
 * execute, copying bindings) and views.c (zero-copy bindings and output
 * views). Not part of the public header. */
#ifndef BRAID_API_SCRIPT_H
#define BRAID_API_SCRIPT_H

#include "../include/braid.h"
#include "../base/diag.h"
#include "../lang/load.h"
#include "../plan/build.h"
#include "../runtime/interp.h"

struct BraidScript {
    Program *ast;
    RtProgram *prog;
    Diag *diag;
    char **inputs; int ninputs;
    char **outputs; int noutputs;
    SymTab bound;        /* input bindings (names owned by inputs[]) */
    bool *transposed;    /* per input: bound as a transposed view, the
                            value the transpose of what the script reads */
    RtProgram *tprog;    /* prog's variant reading those inputs as t(value), */
    Block *tmain;        /*   its main statements (lang_main_transposed), */
    bool *tpattern;      /*   built for this pattern of transposed (NULL: none) */
    SymTab results;      /* outputs of the last run */
    char err[2048];
    char *bdir;
    bool trace;          /* record the DAGs recompiled by the next runs */
    char *recompiled;    /*   and the last run's (braid_explain) */
    char *recompiled_dot;/*   the same as Graphviz graphs */
    bool count_loops;    /* loop statistics of the next runs */
    BraidLoop *loops;    /*   the last run's (braid_loops; files malloc'd) */
    int nloops;
    bool capture;        /* collect print() output of the next runs */
    char *printed;       /*   the last run's (braid_output) */
    int cla;             /* sysds.compressed.linalg: RT_CLA_OFF/ON/AUTO, for
                            the planner and the run time */
    BrPool *pool;        /* large freed blocks, kept across this script's
                            runs (base.h); made by the first run */
};

/* The builtin library's folder (BRAID_HOME or the source tree's
 * scripts/builtin), malloc'd. */
char *api_builtin_dir(void);
/* Records msg as s's error; returns -1. */
int api_fail(BraidScript *s, const char *msg);
/* Binds v (ownership taken, released on failure) to the declared input
 * name. */
int api_bind(BraidScript *s, const char *name, Value v);
/* The same for a matrix the script reads as t(v) (a transposed view). */
int api_bind_transposed(BraidScript *s, const char *name, Value v);
/* The program for the current bindings: prog, or its variant with the
 * transposed inputs (built when their pattern changes); NULL with s's
 * error set. */
RtProgram *api_program(BraidScript *s);

/* A new block copying rows x cols row-major cells, in the format braid's
 * rule picks; NULL with e set. */
MB *api_dense_copy(const double *data, int64_t rows, int64_t cols, BrErr *e);
/* A view of value v (a matrix or a numeric scalar) as braid_get_matrix_view
 * makes it; an error code with e set on failure. */
int api_matrix_view(const Value *v, bool dense, BraidMatrix *out, BrErr *e);
/* A new frame block copying the columns (braid_bind_frame's rules); NULL
 * with e set. */
FB *api_frame_copy(int64_t rows, const BraidColumn *cols, int ncols, BrErr *e);
/* A view of frame value v as braid_get_frame_view makes it; an error code
 * with e set (v no frame, no memory). */
int api_frame_view(const Value *v, BraidFrame *out, BrErr *e);
/* -explain dot (library: dot_all): one Graphviz file per block's DAG in
 * dir (made if missing; graphs an earlier run left there removed), drawn
 * as SVG too when Graphviz is on PATH; reports on stderr; -1 when the
 * folder or a file cannot be written. */
int api_write_plan_dots(const RtProgram *p, const char *dir, bool library);
/* -explain recompile_dot: the Graphviz files of the DAGs a run
 * recompiles, one per DAG, into a folder (api_write_plan_dots' names and
 * drawing). api_dots_open makes or empties dir and returns the writer
 * (NULL: reported on stderr); api_dots_recompiled is RtOptions.recompiled
 * for it; api_dots_close reports, frees, and returns -1 when a file could
 * not be written. */
typedef struct DotFiles DotFiles;
DotFiles *api_dots_open(const char *dir);
void api_dots_recompiled(void *ctx, const PBlock *b, void *ref);
int api_dots_close(DotFiles *df, const char *what);
/* A recompiled DAG's title: "<file>:<line> <kind> (recompiled)". */
void api_recompiled_title(char *buf, size_t n, const PBlock *b);
/* RtOptions.recompiled writing each DAG as a digraph to ctx (a FILE). */
void api_dot_to_stream(void *ctx, const PBlock *b, void *ref);
/* braid_loops' table: the run's loop statistics copied into s (the
 * last run's freed first; -1 without memory), and freed. */
int api_keep_loops(BraidScript *s, const Rt *rt);
void api_free_loops(BraidScript *s);
/* The API's kind of a value (NULL: BRAID_NONE). */
BraidKind api_kind(const Value *v);

#endif
