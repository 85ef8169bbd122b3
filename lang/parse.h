/* parse.h: the DML parser (hand-written recursive descent, precedence
 * climbing for expressions with the table of DML.md). $-arguments and
 * ifdef() are substituted while parsing. Calls are left unresolved (the
 * loader resolves them). */
#ifndef BRAID_PARSE_H
#define BRAID_PARSE_H

#include "ast.h"
#include "load.h"
#include "../base/arena.h"

/* source("path") as alias */
typedef struct SourceImport {
    const char *path;
    const char *alias;
    const char *wd;       /* folder of the last setwd("...") before it, or NULL */
    Span span;            /* of the source keyword */
} SourceImport;

/* One parsed file; all arrays live in the arena. Func.ns and
 * Func.builtin_lib are left for the loader to set. */
typedef struct ParsedFile {
    Block main;                       /* statements outside functions */
    Func **funcs; int nfuncs;         /* function definitions, in order */
    SourceImport *imports; int nimports;
} ParsedFile;

/* Maximum nesting of expressions and statements (deeper input is an error,
 * so no later recursive pass can overflow the stack). */
#define PARSE_MAX_DEPTH 1000

/* Parses len bytes of text (the file named file; file must outlive the
 * AST). o supplies $-argument values (may be NULL). Syntax errors go to d;
 * so do errors about unset $-arguments, which are not counted in the
 * result. Returns the number of syntax errors; out is filled as far as
 * parsing got. */
int parse_file(Arena *a, Diag *d, const char *file, const char *text,
               size_t len, const LangOptions *o, ParsedFile *out);

/* Parses a single expression (for tests and tools); NULL on errors. */
Expr *parse_expression(Arena *a, Diag *d, const char *text,
                       const LangOptions *o);

#endif
