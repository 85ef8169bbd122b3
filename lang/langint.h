/* langint.h: the loader's internal structures, shared by load.c and
 * validate.c only (everything else uses load.h). */
#ifndef BRAID_LANGINT_H
#define BRAID_LANGINT_H

#include <pthread.h>

#include "load.h"
#include "parse.h"

typedef struct LFile LFile;

/* source("...") as alias, seen from one file */
typedef struct Alias {
    const char *alias;
    LFile *file;
} Alias;

/* One loaded file (main script, sourced file or library script). */
struct LFile {
    const char *key;        /* namespace key: "" for the main script, else
                               the canonical path */
    const char *canon;      /* canonical path (NULL for a string script) */
    const char *path;       /* path as opened (used in spans) */
    const char *dir;        /* folder for relative source() paths ("" = cwd) */
    bool builtin_lib;       /* from the builtin script library */
    bool parse_failed;      /* had syntax errors: not validated */
    bool imports_done;
    bool validated;
    const char *text;       /* a source()d file's text (arena; NULL for
                               the main script and library files), for
                               lang_source */
    size_t len;
    ParsedFile pf;
    Alias *aliases;
    int naliases;
};

struct Program {
    Arena *arena;
    LangOptions opts;       /* arena copies */
    LFile **files;          /* malloc'ed; files[0] is the main script */
    int nfiles, capfiles;
    Func **funcs;           /* malloc'ed; all functions in load order */
    int nfuncs, capfuncs;
    pthread_mutex_t lock;   /* lang_find_func */
    bool uses_lineage;      /* some loaded file calls lineage() */
    char **lib_missed;      /* malloc'ed: names lib_fetch said have no
                               library file (lang_library_forget) */
    int nlib_missed, caplib_missed;
};

/* Resolves the call e (EX_CALL) written in file f: sets e->call.func
 * (user or library function, loading library scripts on demand) or
 * e->call.builtin. Unknown functions are errors in d; returns false then. */
bool load_resolve_call(Program *p, LFile *f, Expr *e, Diag *d);

/* Checks file f (its main block if it is the main script, and its
 * functions), resolving every call with resolve (the loader's
 * load_resolve_call, passed in so that validation does not call back into
 * the loader that calls it). Errors and warnings go to d. */
typedef bool (*LangResolve)(Program *p, LFile *f, Expr *e, Diag *d);
void validate_file(Program *p, LFile *f, Diag *d, LangResolve resolve);

/* The function called name defined in file f, or NULL. */
Func *load_file_func(const LFile *f, const char *name);

#define MAX_SPEC 32

/* A builtin's params spec from ops.def, split: names (NUL-terminated
 * copies in buf), whether each has a default, and a trailing "...". */
typedef struct Spec {
    int n;
    const char *name[MAX_SPEC];
    bool has_default[MAX_SPEC];
    bool variadic;
    char buf[512];
} Spec;

/* Splits params into sp (validate.c). */
void spec_parse(const char *params, Spec *sp);

#endif
