/* load.h: the front end's entry points. Loading a script lexes and parses
 * it, substitutes $-arguments and ifdef(), loads source()d files and the
 * builtin script library on demand, resolves every call and validates the
 * program (lang/validate.c). Errors and warnings go to the Diag. */
#ifndef BRAID_LOAD_H
#define BRAID_LOAD_H

#include "ast.h"
#include "../base/arena.h"

/* A source()d file as one process loaded it: the path it was opened by
 * (relative paths as the loader formed them), its canonical path and its
 * text. */
typedef struct LangSource {
    const char *path, *canon, *text;
    size_t len;
} LangSource;

typedef struct LangOptions {
    const char *builtin_dir;          /* folder of the DML builtin library
                                         (scripts/builtin); NULL: none */
    const char *const *arg_names;     /* $-arguments: names ("out", "1", ...) */
    const char *const *arg_values;    /*   and their raw text values */
    int nargs;
    const char *const *predefined;    /* variables bound before the script
                                         runs (embedding API inputs) */
    int npredefined;
    const LangSource *sources;        /* source()d files as rank 0 read
                                         them (lang_source): a source() or
                                         eval("path::f") path that names
                                         one of these (by its path) loads
                                         that text, not the file system's;
                                         must outlive the program */
    int nsources;
    /* Library files not among sources (a remote worker's eval of a
     * library function rank 0 had not loaded when it shipped its files):
     * when set, the loader reads no library file from disk but asks
     * lib_fetch for the file of function name: 1 with *s set (every
     * string malloc'd, the loader frees them), 0 when there is none (the
     * program remembers it and asks no more for that name until
     * lang_library_forget), -1 when it could not ask (asked again on the
     * next lookup). */
    int (*lib_fetch)(void *lib_arg, const char *name, LangSource *s);
    void *lib_arg;
} LangOptions;

/* Loads the script in file `path` / in `text` (named `name` in messages,
 * NULL: "<string>"). o may be NULL (no arguments, no library). Returns the
 * program (free with lang_program_free), or NULL when there were errors
 * (then diag_nerrors(d) > 0). Warnings do not fail the load. */
Program *lang_load_file(const char *path, const LangOptions *o, Diag *d);
Program *lang_load_string(const char *text, const char *name,
                          const LangOptions *o, Diag *d);
/* The script file at path as lang_load_file reads it (malloc'd,
 * NUL-terminated, *len bytes; NULL with errno set when unreadable), and
 * the script of such text loaded as the file path of canonical path
 * canon (NULL: unknown) would be: remote workers load the text rank 0
 * read, with the same names, without reading the file. */
char *lang_read_script(const char *path, size_t *len);
Program *lang_load_text(const char *text, size_t len, const char *path, const char *canon,
                        const LangOptions *o, Diag *d);
void lang_program_free(Program *p);
/* The files the program loaded besides the main script (source()d files
 * and builtin library files), in load order, with the texts parsed:
 * remote workers load them as LangOptions.sources instead of reading
 * files they may not have, or that differ from rank 0's. Valid while the
 * program is. */
int lang_nsources(const Program *p);
LangSource lang_source(const Program *p, int i);
/* The builtin library file of function name (builtin_dir/name.dml) as
 * the program loaded it, loading it now if it had not (lang_find_func);
 * false when there is none. *s is valid while the program is. Rank 0's
 * answer to lib_fetch. Thread-safe against lang_find_func. */
bool lang_library_source(const Program *p, const char *name, LangSource *s);
/* Forgets the names lib_fetch answered 0 for: the next lookup of one
 * asks again (a remote worker at each task: rank 0 finds library files
 * on its disk at each lookup, so one made in its library folder between
 * two tasks is found in the second). Thread-safe against
 * lang_find_func. */
void lang_library_forget(Program *p);
/* The namespace key of the loaded file named file (a span's file), ""
 * when none is (the main script). Thread-safe against lang_find_func. */
const char *lang_ns_of_file(const Program *p, const char *file);
/* The program's own copy of the name of the loaded file named file (as
 * its spans name it), NULL when it loaded none of that name: for a
 * position another process reported. Valid while the program is. */
const char *lang_file_name(const Program *p, const char *file);

/* Does a loaded file call lineage()? (Then the runtime traces lineage:
 * runtime/lineage.h.) Library scripts loaded later, on demand, count
 * from then on. */
bool lang_uses_lineage(const Program *p);

/* The top-level statements of the main script. */
const Block *lang_main(const Program *p);
/* The main statements after one `X = t(X)` per name: the embedding
 * API's transposed views, whose bound value is the transpose of what the
 * script reads (api/views.c). One allocation (free it with free(), after
 * the program built from it); names must outlive it; NULL when out of
 * memory. */
Block *lang_main_transposed(const Program *p, const char *const *names, int n);
/* All functions of all loaded files (main script, sourced files, library
 * scripts), in load order. lang_find_func may append more. */
int lang_nfuncs(const Program *p);
Func *lang_func(const Program *p, int i);
/* For eval("name", ...): the function `name` (or "ns::name") as seen from
 * the file with namespace key ns_key ("" = main script; NULL = main), else
 * the builtin library (scripts/builtin/name.dml loaded on demand, function
 * m_name or name). NULL if there is none (builtin operators are not
 * functions). Thread-safe against itself. */
Func *lang_find_func(const Program *p, const char *ns_key, const char *name);
/* A function computing the default of parameter j of f (an expression,
 * not a literal) from f's parameters 0..j-1, for calls that bind
 * arguments at run time (eval): inputs f->in[0..j), one output. Built once
 * in the program's arena; NULL if parameter j has no default. */
Func *lang_default_func(const Program *p, Func *f, int j);
/* The program's arena, for later passes that add nodes. */
Arena *lang_arena(Program *p);

/* The value of a command-line argument as a literal expression (TRUE/FALSE
 * -> bool, then int64, then double, else string), allocated in a. */
Expr *lang_arg_literal(Arena *a, const char *value, Span at);

#endif
