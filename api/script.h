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
    SymTab results;      /* outputs of the last run */
    char err[2048];
    char *bdir;
    bool trace;          /* record the DAGs recompiled by the next runs */
    char *recompiled;    /*   and the last run's (braid_explain) */
    bool capture;        /* collect print() output of the next runs */
    char *printed;       /*   the last run's (braid_output) */
};

/* The builtin library's folder (BRAID_HOME or the source tree's
 * scripts/builtin), malloc'd. */
char *api_builtin_dir(void);
/* Records msg as s's error; returns -1. */
int api_fail(BraidScript *s, const char *msg);
/* Binds v (ownership taken, released on failure) to the declared input
 * name. */
int api_bind(BraidScript *s, const char *name, Value v);

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
/* The API's kind of a value (NULL: BRAID_NONE). */
BraidKind api_kind(const Value *v);

#endif
