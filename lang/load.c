/* load.c: loading a DML program: the main script, the files it source()s
 * (each loaded once, keyed by canonical path) and the builtin script
 * library (loaded on demand when an unknown function is called), then
 * call resolution and validation (validate.c). */
#include "langint.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- files ---- */

/* Reads a whole regular file into a malloc'ed NUL-terminated buffer;
 * NULL (errno set) on failure. */
static char *read_file(const char *path, size_t *len)
{
    struct stat st;
    if (stat(path, &st) != 0) return NULL;
    if (!S_ISREG(st.st_mode)) {
        errno = EISDIR;
        return NULL;
    }
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap);
    int why = buf ? 0 : ENOMEM;
    while (buf) {
        if (n + 1 >= cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                why = ENOMEM;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        if (n > ((size_t)256 << 20)) {  /* no script is that large */
            free(buf);
            buf = NULL;
            why = EFBIG;
            break;
        }
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0) break;
    }
    if (buf && ferror(f)) {
        free(buf);
        buf = NULL;
        why = EIO;
    }
    fclose(f);
    /* (the reason survives fclose, which may set errno) */
    if (!buf) { errno = why; return NULL; }
    buf[n] = 0;
    *len = n;
    return buf;
}

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The folder part of a path ("" when there is none), in the arena. */
static const char *dir_of(Arena *a, const char *path)
{
    const char *sl = strrchr(path, '/');
    if (!sl) return "";
    if (sl == path) return "/";
    return arena_strndup(a, path, (size_t)(sl - path));
}

/* dir + "/" + name (+ ext), malloc'ed. */
static char *join(const char *dir, const char *name, const char *ext)
{
    size_t n = strlen(dir) + strlen(name) + strlen(ext) + 2;
    char *s = malloc(n);
    if (!s) return NULL;
    if (!*dir) snprintf(s, n, "%s%s", name, ext);
    else if (dir[strlen(dir) - 1] == '/') snprintf(s, n, "%s%s%s", dir, name, ext);
    else snprintf(s, n, "%s/%s%s", dir, name, ext);
    return s;
}

/* The canonical path of an existing file, in the arena (NULL if none). */
static const char *canonical(Arena *a, const char *path)
{
    char *r = realpath(path, NULL);
    if (!r) return NULL;
    const char *c = arena_strdup(a, r);
    free(r);
    return c;
}

/* The shipped source()d file (LangOptions.sources) opened by path, if any. */
static const LangSource *shipped(const Program *p, const char *path)
{
    for (int i = 0; path && i < p->opts.nsources; i++)
        if (p->opts.sources[i].path && !strcmp(p->opts.sources[i].path, path)) return &p->opts.sources[i];
    return NULL;
}

/* The canonical path of the file path opens: a shipped file's as rank 0
 * found it, else the file system's (in the arena; NULL if none). */
static const char *canon_of(Program *p, const char *path)
{
    const LangSource *s = shipped(p, path);
    if (s) return s->canon ? arena_strdup(p->arena, s->canon) : NULL;
    return canonical(p->arena, path);
}

static LFile *find_file_canon(Program *p, const char *canon)
{
    for (int i = 0; i < p->nfiles; i++)
        if (p->files[i]->canon && strcmp(p->files[i]->canon, canon) == 0) return p->files[i];
    return NULL;
}

static LFile *find_file_key(const Program *p, const char *key)
{
    for (int i = 0; i < p->nfiles; i++)
        if (strcmp(p->files[i]->key, key) == 0) return p->files[i];
    return NULL;
}

Func *load_file_func(const LFile *f, const char *name)
{
    for (int i = 0; i < f->pf.nfuncs; i++)
        if (strcmp(f->pf.funcs[i]->name, name) == 0) return f->pf.funcs[i];
    return NULL;
}

static bool push_file(Program *p, LFile *f)
{
    if (p->nfiles == p->capfiles) {
        int nc = p->capfiles ? 2 * p->capfiles : 8;
        LFile **nv = realloc(p->files, (size_t)nc * sizeof(LFile *));
        if (!nv) return false;
        p->files = nv;
        p->capfiles = nc;
    }
    p->files[p->nfiles++] = f;
    return true;
}

static bool push_func(Program *p, Func *f)
{
    if (p->nfuncs == p->capfuncs) {
        int nc = p->capfuncs ? 2 * p->capfuncs : 32;
        Func **nv = realloc(p->funcs, (size_t)nc * sizeof(Func *));
        if (!nv) return false;
        p->funcs = nv;
        p->capfuncs = nc;
    }
    p->funcs[p->nfuncs++] = f;
    return true;
}

static void oom(Diag *d, const char *file)
{
    Span s = { file, 0, 0 };
    diag_error(d, s, "out of memory while loading");
}

/* Parses text as file lf and registers its functions. Returns false only
 * when out of memory (syntax errors mark lf->parse_failed). */
static bool parse_into(Program *p, LFile *lf, const char *text, size_t len, Diag *d)
{
    diag_add_source(d, lf->path, text);
    int nerr = parse_file(p->arena, d, lf->path, text, len, &p->opts, &lf->pf);
    if (nerr) lf->parse_failed = true;
    for (int i = 0; i < lf->pf.nfuncs; i++) {
        Func *f = lf->pf.funcs[i];
        f->ns = lf->key;
        f->builtin_lib = lf->builtin_lib;
        if (!push_func(p, f)) return false;
    }
    return true;
}

/* Loads the existing file at path (canonical canon) as a new LFile: the
 * text given, else the shipped text of that path if there is one, else
 * the file's. The file keeps its text (lang_source). */
static LFile *load_new(Program *p, const char *path, const char *canon, bool lib,
                       const LangSource *given, Diag *d, Span at)
{
    const LangSource *sh = given ? given : shipped(p, path);
    LFile *lf = arena_alloc(p->arena, sizeof(LFile));
    if (!lf) {
        oom(d, path);
        return NULL;
    }
    lf->canon = canon;
    lf->key = canon;
    lf->path = arena_strdup(p->arena, path);
    lf->dir = lf->path ? dir_of(p->arena, lf->path) : NULL;
    lf->builtin_lib = lib;
    if (!lf->path || !lf->dir || !push_file(p, lf)) {
        oom(d, path);
        return NULL;
    }
    size_t len = sh ? sh->len : 0;
    char *text = sh ? NULL : read_file(path, &len);
    if (!sh && !text) {
        diag_error(d, at, "cannot read '%s': %s", path, errno == ENOMEM ? "out of memory" : strerror(errno));
        lf->parse_failed = true;
        lf->imports_done = true;
        return lf;
    }
    const char *src = sh ? sh->text : text;
    char *keep = arena_alloc(p->arena, len + 1);
    if (keep) {
        memcpy(keep, src, len);
        keep[len] = 0;
        lf->text = keep;
        lf->len = len;
    }
    bool ok = keep != NULL && parse_into(p, lf, src, len, d);
    free(text);
    if (!ok) {
        oom(d, path);
        return NULL;
    }
    return lf;
}

/* Is f a file of the installation's scripts folder (the builtin
 * library's parent)? */
static bool in_installation(Program *p, const LFile *f)
{
    if (f->builtin_lib) return true;
    if (!f->canon) return false;
    char *dir = join(p->opts.builtin_dir, "..", "");
    const char *root = dir ? canonical(p->arena, dir) : NULL;
    free(dir);
    size_t n = root ? strlen(root) : 0;
    return n > 0 && !strncmp(f->canon, root, n) && f->canon[n] == '/';
}

/* source("path") as alias in file f: path relative to f's folder, then
 * to the working directory; after setwd("dir"), relative to dir (itself
 * relative to f's folder, then to the working directory). A relative path
 * found nowhere is then looked for as SystemDS does: in scripts/ under the
 * working directory, then in the installation's scripts folder (the
 * parent of the builtin library, where SystemDS's jar resources are), then
 * in the installation itself (the jar's root: SystemDS's own scripts say
 * source("scripts/nn/examples/sherlockNet.dml")). */
static void do_import(Program *p, LFile *f, const SourceImport *si, Diag *d)
{
    char *cand[5] = { NULL, NULL, NULL, NULL, NULL };
    int nc = 0;
    if (si->path[0] == '/') {
        cand[nc++] = join("", si->path, "");
    } else if (si->wd) {
        char *wp = join(si->wd, si->path, "");
        if (wp && wp[0] != '/' && f->dir && f->dir[0]) cand[nc++] = join(f->dir, wp, "");
        cand[nc++] = wp;
    } else {
        if (f->dir && f->dir[0]) cand[nc++] = join(f->dir, si->path, "");
        cand[nc++] = join("", si->path, "");
    }
    int nplain = nc;
    if (si->path[0] != '/') {
        cand[nc++] = join("scripts/", si->path, "");
        if (p->opts.builtin_dir) cand[nc++] = join(p->opts.builtin_dir, "../", si->path);
        if (p->opts.builtin_dir) cand[nc++] = join(p->opts.builtin_dir, "../../", si->path);
        /* a file of the installation's scripts folder (the builtin library
         * and what it sources: source("scripts/builtin/executePipeline.dml"))
         * reads the installation's files before the working directory's,
         * so that run from a SystemDS checkout it does not take SystemDS's
         * script of that name (which lacks braid's helper functions) */
        if (p->opts.builtin_dir && !si->wd && in_installation(p, f)) {
            char *a = cand[nc - 1], *b = cand[nc - 2];
            for (int i = nc - 1; i >= 3; i--) cand[i] = cand[i - 2];
            cand[1] = a;
            cand[2] = b;
        }
    }
    /* the file rank 0 found, when its files were shipped: the first
     * candidate shipped is the first that existed there */
    const char *found = NULL;
    for (int i = 0; !found && i < nc; i++)
        if (shipped(p, cand[i])) found = cand[i];
    for (int i = 0; !found && i < nc; i++)
        if (cand[i] && is_file(cand[i])) found = cand[i];
    if (!found) {
        if (nplain == 2 && cand[0])
            diag_error(d, si->span, "cannot find source file '%s' (looked for '%s' and '%s')",
                       si->path, cand[0], cand[1]);
        else
            diag_error(d, si->span, "cannot find source file '%s'", si->path);
    } else {
        const char *canon = canon_of(p, found);
        LFile *t = canon ? find_file_canon(p, canon) : NULL;
        if (!t && canon) t = load_new(p, found, canon, false, NULL, d, si->span);
        if (t) {
            for (int i = 0; i < f->naliases; i++) {
                if (strcmp(f->aliases[i].alias, si->alias) == 0 && f->aliases[i].file != t) {
                    diag_error(d, si->span, "namespace '%s' is already bound to '%s'",
                               si->alias, f->aliases[i].file->path);
                    t = NULL;
                    break;
                }
            }
        }
        if (t) {
            Alias *na = arena_alloc(p->arena, (size_t)(f->naliases + 1) * sizeof(Alias));
            if (!na) {
                oom(d, f->path);
            } else {
                if (f->naliases) memcpy(na, f->aliases, (size_t)f->naliases * sizeof(Alias));
                na[f->naliases].alias = si->alias;
                na[f->naliases].file = t;
                f->aliases = na;
                f->naliases++;
            }
        }
    }
    for (int i = 0; i < 5; i++) free(cand[i]);
}

/* Processes the source() imports of every file not yet done (files loaded
 * on the way are appended and processed in turn). */
static void load_imports(Program *p, Diag *d)
{
    for (int i = 0; i < p->nfiles; i++) {
        LFile *f = p->files[i];
        if (f->imports_done) continue;
        f->imports_done = true;
        for (int j = 0; j < f->pf.nimports; j++) do_import(p, f, &f->pf.imports[j], d);
    }
}

/* Remembers that lib_fetch found no library file for name (out of
 * memory: not remembered, it is asked again). */
static void remember_miss(Program *p, const char *name)
{
    if (p->nlib_missed == p->caplib_missed) {
        int cap = p->caplib_missed ? 2 * p->caplib_missed : 8;
        char **v = realloc(p->lib_missed, (size_t)cap * sizeof *v);
        if (!v) return;
        p->lib_missed = v, p->caplib_missed = cap;
    }
    if ((p->lib_missed[p->nlib_missed] = strdup(name))) p->nlib_missed++;
}

void lang_library_forget(Program *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->lock);
    for (int i = 0; i < p->nlib_missed; i++) free(p->lib_missed[i]);
    p->nlib_missed = 0;
    pthread_mutex_unlock(&p->lock);
}

/* The library script for function name (builtin_dir/name.dml), loaded on
 * first use; NULL if there is none, or (*failed set, the error reported)
 * when memory ran out finding it. */
static LFile *load_library(Program *p, const char *name, Diag *d, Span at, bool *failed)
{
    if (!p->opts.builtin_dir || !name[0]) return NULL;
    char *path = join(p->opts.builtin_dir, name, ".dml");
    if (!path) {
        diag_error(d, at, "out of memory while loading '%s'", name);
        *failed = true;
        return NULL;
    }
    LFile *lf = NULL;
    const LangSource *sh = shipped(p, path);
    LangSource got = {0};
    bool fetch = !sh && p->opts.lib_fetch;   /* a worker: rank 0's file, whatever this machine holds */
    for (int i = 1; fetch && i < p->nfiles; i++)
        if (p->files[i]->builtin_lib && !strcmp(p->files[i]->path, path)) {
            lf = p->files[i];   /* asked before */
            fetch = false;
        }
    for (int i = 0; fetch && i < p->nlib_missed; i++)
        if (!strcmp(p->lib_missed[i], name)) fetch = false;   /* rank 0 has none (lang_library_forget) */
    if (fetch) {
        int got_rc = p->opts.lib_fetch(p->opts.lib_arg, name, &got);
        if (got_rc == 0) remember_miss(p, name);
        if (got_rc > 0 && got.canon && got.text) {
            lf = find_file_canon(p, got.canon);
            const char *canon = lf ? NULL : arena_strdup(p->arena, got.canon);
            if (!lf && !canon) {
                diag_error(d, at, "out of memory while loading '%s'", path);
                *failed = true;
            }
            if (canon && (lf = load_new(p, path, canon, true, &got, d, at))) load_imports(p, d);
        }
        free((char *)got.path);
        free((char *)got.canon);
        free((char *)got.text);
    } else if (sh || (!p->opts.lib_fetch && is_file(path))) {
        /* a shipped text, or this machine's library (never a worker's) */
        const char *canon = canon_of(p, path);
        if (!canon && errno == ENOMEM) {
            diag_error(d, at, "out of memory while loading '%s'", path);
            *failed = true;
        }
        if (canon) {
            lf = find_file_canon(p, canon);
            if (!lf) {
                lf = load_new(p, path, canon, true, NULL, d, at);
                if (lf) load_imports(p, d);
            }
        }
    }
    free(path);
    return lf;
}

/* The function a library file defines for a builtin name: as SystemDS's
 * loader does, m_name (matrix builtins), s_name (scalar/list builtins),
 * f_name (frame builtins) or the bare name. */
static Func *library_func(const LFile *lf, const char *name)
{
    static const char *const prefixes[] = {"m_", "s_", "f_"};
    size_t n = strlen(name) + 3;
    char *m = malloc(n);
    if (!m) return NULL;   /* (the caller reports it) */
    Func *f = NULL;
    for (size_t i = 0; m && !f && i < sizeof prefixes / sizeof *prefixes; i++) {
        snprintf(m, n, "%s%s", prefixes[i], name);
        f = load_file_func(lf, m);
    }
    free(m);
    return f ? f : load_file_func(lf, name);
}

static LFile *alias_file(const LFile *f, const char *alias)
{
    for (int i = 0; i < f->naliases; i++)
        if (strcmp(f->aliases[i].alias, alias) == 0) return f->aliases[i].file;
    return NULL;
}

/* SystemDS's builtins whose calls it parses positionally (its
 * BuiltinFunctionExpression: not parameterized, not read/rand-like):
 * when a call has an unnamed argument, the names of the others are
 * dropped, so ifelse(c, a, n = b) passes b third (its builtin scripts
 * rely on that). braid keeps names that match a parameter; a call with a
 * name that matches none is read positionally, as SystemDS reads it. */
static const char *const POSITIONAL[] = {
    "abs", "acos", "as.double", "as.integer", "as.logical", "as.matrix", "as.scalar", "asin", "atan",
    "ceil", "ceiling", "colMaxs", "colMeans", "colMins", "colProds", "colSds", "colSums", "colVars",
    "cos", "cosh", "cummax", "cummin", "cumprod", "cumsum", "exp", "floor", "ifelse", "is.na", "is.nan",
    "is.infinite", "length", "log", "max", "mean", "median", "min", "ncol", "nrow", "pmax", "pmin", "prod",
    "rev", "round", "rowMaxs", "rowMeans", "rowMins", "rowProds", "rowSds", "rowSums", "rowVars", "sd",
    "sign", "sin", "sinh", "sqrt", "sum", "t", "tan", "tanh", "trace", "var", "xor",
};

static void positional_args(const Expr *e, Diag *d)
{
    bool unnamed = false, unknown = false, listed = false;
    for (size_t i = 0; i < sizeof POSITIONAL / sizeof POSITIONAL[0]; i++)
        if (strcmp(POSITIONAL[i], e->call.name) == 0) listed = true;
    if (!listed) return;
    Spec sp;
    spec_parse(e->call.builtin->params, &sp);
    for (int i = 0; i < e->call.nargs; i++) {
        bool known = false;
        for (int j = 0; j < sp.n && e->call.args[i].name; j++) known |= strcmp(sp.name[j], e->call.args[i].name) == 0;
        if (!e->call.args[i].name) unnamed = true;
        else if (!known) unknown = true;
    }
    if (!listed || !unnamed || !unknown) return;
    for (int i = 0; i < e->call.nargs; i++)
        if (e->call.args[i].name) {
            diag_warning(d, e->call.args[i].span, "argument name '%s' ignored: '%s' takes its arguments by position",
                         e->call.args[i].name, e->call.name);
            e->call.args[i].name = NULL;
        }
}

/* readMM(file, ...) and read.csv(file, ...): SystemDS's read() with the
 * format set (a format= argument of its own is an error there too). */
static bool read_alias(Program *p, Expr *e, Diag *d)
{
    const char *fmt = !strcmp(e->call.name, "readMM") ? "mm" : !strcmp(e->call.name, "read.csv") ? "csv" : NULL;
    if (!fmt) return true;
    for (int i = 0; i < e->call.nargs; i++)
        if (e->call.args[i].name && !strcmp(e->call.args[i].name, "format")) {
            diag_error(d, e->call.args[i].span, "%s() sets the format itself; use read() to give format=",
                       e->call.name);
            return false;
        }
    Arg *args = arena_alloc(p->arena, (size_t)(e->call.nargs + 1) * sizeof(Arg));
    Expr *v = arena_alloc(p->arena, sizeof(Expr));
    if (!args || !v) {
        diag_error(d, e->span, "out of memory");
        return false;
    }
    memcpy(args, e->call.args, (size_t)e->call.nargs * sizeof(Arg));
    memset(v, 0, sizeof *v);
    v->kind = EX_STRING;
    v->span = e->span;
    v->sval = fmt;
    args[e->call.nargs] = (Arg){.name = "format", .value = v, .span = e->span};
    e->call.args = args;
    e->call.nargs++;
    e->call.name = "read";
    return true;
}

/* SystemDS builtins for systems braid does not run: the reason, or NULL. */
static const char *unsupported_feature(const char *name)
{
    static const char *const why[][2] = {
        {"federated", "it needs SystemDS's federated workers (read the data locally, or run under mpirun)"},
        {"sql", "it reads from a database over JDBC (export the table to CSV and read() it)"},
        {"tensor", "braid has no tensor blocks (use matrices)"},
    };
    for (size_t i = 0; i < sizeof why / sizeof why[0]; i++)
        if (strcmp(why[i][0], name) == 0) return why[i][1];
    return NULL;
}

/* Whether call e names a parameter its native builtin lacks. */
static bool names_unknown_param(const Expr *e)
{
    Spec sp;
    spec_parse(e->call.builtin->params, &sp);
    if (sp.variadic) return false;
    for (int i = 0; i < e->call.nargs; i++) {
        bool known = !e->call.args[i].name;
        for (int j = 0; j < sp.n && !known; j++) known = strcmp(sp.name[j], e->call.args[i].name) == 0;
        if (!known) return true;
    }
    return false;
}

bool load_resolve_call(Program *p, LFile *f, Expr *e, Diag *d)
{
    const char *name = e->call.name;
    e->call.func = NULL;
    e->call.builtin = NULL;
    if (e->call.ns) {
        LFile *t = alias_file(f, e->call.ns);
        if (!t) {
            diag_error(d, e->span, "unknown namespace '%s' in call to '%s::%s' "
                       "(no source(...) as %s)", e->call.ns, e->call.ns, name, e->call.ns);
            return false;
        }
        e->call.func = load_file_func(t, name);
        if (!e->call.func) {
            diag_error(d, e->span, "unknown function '%s::%s' ('%s' defines no function '%s')",
                       e->call.ns, name, t->path, name);
            return false;
        }
        return true;
    }
    if ((e->call.func = load_file_func(f, name))) return true;
    if (!read_alias(p, e, d)) return false;
    name = e->call.name;
    bool failed = false;
    LFile *lib = NULL;
    /* compress(X, d): SystemDS's binned compression, two outputs */
    if (!strcmp(name, "compress") && e->call.nargs == 2) name = "compress#bins";
    if ((e->call.builtin = ops_builtin(name))) {
        if (e->call.builtin->id == BI_LINEAGE) p->uses_lineage = true;
        /* a builtin SystemDS runs as a script that braid has natively
         * (sigmoid: m_sigmoid(X), s_sigmoid(x)): a call naming a
         * parameter the native one lacks binds to the library script */
        if (names_unknown_param(e) && (lib = load_library(p, name, d, e->span, &failed)) &&
            (e->call.func = library_func(lib, name))) {
            e->call.builtin = NULL;
            return true;
        }
        if (failed) return false;
        positional_args(e, d);
        return true;
    }
    lib = load_library(p, name, d, e->span, &failed);
    if (failed) return false;
    errno = 0;
    if (lib && (e->call.func = library_func(lib, name))) return true;
    if (lib && lib->parse_failed) return false;  /* its errors are reported */
    if (lib && errno == ENOMEM)
        diag_error(d, e->span, "out of memory while loading '%s'", lib->path);
    else if (lib)
        diag_error(d, e->span, "unknown function '%s' ('%s' defines none of 'm_%s', 's_%s', 'f_%s', '%s')",
                   name, lib->path, name, name, name, name);
    else if (unsupported_feature(name))
        diag_error(d, e->span, "'%s' is not supported by braid: %s", name, unsupported_feature(name));
    else
        diag_error(d, e->span, "unknown function '%s'", name);
    return false;
}

/* Validates every loaded file not yet validated (library files loaded
 * during validation are appended and validated in turn). */
static void validate_all(Program *p, Diag *d)
{
    for (int i = 0; i < p->nfiles; i++) {
        LFile *f = p->files[i];
        if (f->validated || f->parse_failed) continue;
        f->validated = true;
        validate_file(p, f, d, load_resolve_call);
    }
}

/* ---- programs ---- */

static Program *program_new(const LangOptions *o)
{
    Program *p = calloc(1, sizeof(Program));
    if (!p) return NULL;
    p->arena = arena_new();
    if (!p->arena) {
        free(p);
        return NULL;
    }
    pthread_mutex_init(&p->lock, NULL);
    if (o) {
        if (o->builtin_dir) p->opts.builtin_dir = arena_strdup(p->arena, o->builtin_dir);
        int n = o->nargs > 0 ? o->nargs : 0;
        const char **nm = arena_alloc(p->arena, (size_t)n * sizeof(char *));
        const char **vl = arena_alloc(p->arena, (size_t)n * sizeof(char *));
        if (!nm || !vl || (o->builtin_dir && !p->opts.builtin_dir)) {
            lang_program_free(p);
            return NULL;
        }
        for (int i = 0; i < n; i++) {
            nm[i] = o->arg_names && o->arg_names[i] ? arena_strdup(p->arena, o->arg_names[i]) : "";
            vl[i] = o->arg_values && o->arg_values[i] ? arena_strdup(p->arena, o->arg_values[i]) : "";
        }
        p->opts.arg_names = nm;
        p->opts.arg_values = vl;
        p->opts.nargs = n;
        int np = o->npredefined > 0 && o->predefined ? o->npredefined : 0;
        const char **pd = arena_alloc(p->arena, (size_t)np * sizeof(char *));
        if (!pd) {
            lang_program_free(p);
            return NULL;
        }
        for (int i = 0; i < np; i++)
            pd[i] = o->predefined[i] ? arena_strdup(p->arena, o->predefined[i]) : "";
        p->opts.predefined = pd;
        p->opts.npredefined = np;
        p->opts.sources = o->nsources > 0 ? o->sources : NULL;
        p->opts.nsources = o->nsources > 0 && o->sources ? o->nsources : 0;
        p->opts.lib_fetch = o->lib_fetch;
        p->opts.lib_arg = o->lib_arg;
    }
    return p;
}

void lang_program_free(Program *p)
{
    if (!p) return;
    lang_library_forget(p);
    free(p->lib_missed);
    pthread_mutex_destroy(&p->lock);
    arena_free(p->arena);
    free(p->files);
    free(p->funcs);
    free(p);
}

/* Loads the main script from text; path is its name in messages, canon
 * its canonical path (NULL for a string). */
static Program *load_main(const char *text, size_t len, const char *path, const char *canon,
                          const LangOptions *o, Diag *d)
{
    int before = diag_nerrors(d);
    Program *p = program_new(o);
    if (!p) {
        oom(d, path);
        return NULL;
    }
    LFile *lf = arena_alloc(p->arena, sizeof(LFile));
    if (!lf || !push_file(p, lf)) {
        oom(d, path);
        lang_program_free(p);
        return NULL;
    }
    lf->key = "";
    lf->path = arena_strdup(p->arena, path);
    lf->canon = canon ? arena_strdup(p->arena, canon) : NULL;
    lf->dir = lf->path ? dir_of(p->arena, lf->path) : NULL;
    if (!lf->path || !lf->dir || !parse_into(p, lf, text, len, d)) {
        oom(d, path);
        lang_program_free(p);
        return NULL;
    }
    load_imports(p, d);
    bool parse_failed = false;
    for (int i = 0; i < p->nfiles; i++) parse_failed |= p->files[i]->parse_failed;
    if (!parse_failed) validate_all(p, d);
    if (diag_nerrors(d) > before) {
        lang_program_free(p);
        return NULL;
    }
    return p;
}

char *lang_read_script(const char *path, size_t *len) { return read_file(path, len); }

Program *lang_load_text(const char *text, size_t len, const char *path, const char *canon,
                        const LangOptions *o, Diag *d)
{
    return load_main(text, len, path, canon, o, d);
}

Program *lang_load_file(const char *path, const LangOptions *o, Diag *d)
{
    size_t len;
    char *text = read_file(path, &len);
    if (!text) {
        Span s = { path, 0, 0 };
        if (errno == ENOMEM) diag_error(d, s, "cannot read script: out of memory");
        else diag_error(d, s, "cannot read script: %s", strerror(errno));
        return NULL;
    }
    char *canon = realpath(path, NULL);
    Program *p = load_main(text, len, path, canon, o, d);
    free(canon);
    free(text);
    return p;
}

int lang_nsources(const Program *p)
{
    int n = 0;
    for (int i = 1; i < p->nfiles; i++) n += p->files[i]->text != NULL;
    return n;
}

LangSource lang_source(const Program *p, int i)
{
    LangSource s = {0};
    for (int k = 1; k < p->nfiles; k++) {
        const LFile *f = p->files[k];
        if (f->text && i-- == 0) {
            s = (LangSource){f->path, f->canon, f->text, f->len};
            break;
        }
    }
    return s;
}

bool lang_library_source(const Program *cp, const char *name, LangSource *s)
{
    Program *p = (Program *)cp;
    *s = (LangSource){0};
    if (!name || !name[0] || strstr(name, "::") || !p->opts.builtin_dir) return false;
    char *path = join(p->opts.builtin_dir, name, ".dml");
    if (!path) return false;
    lang_find_func(p, "", name);   /* loads it (and checks it) if it exists */
    pthread_mutex_lock(&p->lock);
    for (int i = 1; i < p->nfiles; i++) {
        const LFile *f = p->files[i];
        if (f->builtin_lib && f->text && f->canon && !strcmp(f->path, path)) {
            *s = (LangSource){f->path, f->canon, f->text, f->len};
            break;
        }
    }
    pthread_mutex_unlock(&p->lock);
    free(path);
    return s->text != NULL;
}

const char *lang_ns_of_file(const Program *cp, const char *file)
{
    Program *p = (Program *)cp;
    const char *ns = "";
    if (!file) return ns;
    pthread_mutex_lock(&p->lock);
    for (int i = 0; i < p->nfuncs; i++) {
        const Func *fn = p->funcs[i];
        if (fn->file && (fn->file == file || !strcmp(fn->file, file))) {
            ns = fn->ns;
            break;
        }
    }
    pthread_mutex_unlock(&p->lock);
    return ns;
}

const char *lang_file_name(const Program *cp, const char *file)
{
    Program *p = (Program *)cp;
    const char *name = NULL;
    pthread_mutex_lock(&p->lock);
    for (int i = 0; file && !name && i < p->nfiles; i++)
        if (p->files[i]->path && !strcmp(p->files[i]->path, file)) name = p->files[i]->path;
    pthread_mutex_unlock(&p->lock);
    return name;
}

Program *lang_load_string(const char *text, const char *name, const LangOptions *o, Diag *d)
{
    if (!text) text = "";
    return load_main(text, strlen(text), name ? name : "<string>", NULL, o, d);
}

bool lang_uses_lineage(const Program *p) { return p && p->uses_lineage; }

const Block *lang_main(const Program *p)
{
    return &p->files[0]->pf.main;
}

/* name = t(name) as one statement's nodes. */
typedef struct TransposeStmt {
    Stmt st;
    Expr call, id;
    Arg arg;
} TransposeStmt;

/* Fills t with name = t(name) at sp, the position of the script's first
 * statement, so that it joins that statement block (docs/python.md). */
static Stmt *transpose_stmt(TransposeStmt *t, const char *name, Span sp)
{
    t->id = (Expr){.kind = EX_IDENT, .span = sp, .ident = name};
    t->arg = (Arg){.value = &t->id, .span = sp};
    t->call = (Expr){.kind = EX_CALL, .span = sp};
    t->call.call.name = "t";
    t->call.call.args = &t->arg;
    t->call.call.nargs = 1;
    t->call.call.builtin = ops_builtin("t");
    t->st = (Stmt){.kind = ST_ASSIGN, .span = sp};
    t->st.assign.target = (LValue){.name = name, .span = sp};
    t->st.assign.value = &t->call;
    return &t->st;
}

Block *lang_main_transposed(const Program *p, const char *const *names, int n)
{
    const Block *m = lang_main(p);
    Span sp = m->n ? m->stmts[0]->span : (Span){0};
    size_t head = sizeof(Block) + (size_t)(n + m->n) * sizeof(Stmt *);
    head = (head + 15) & ~(size_t)15;
    Block *b = calloc(1, head + (size_t)n * sizeof(TransposeStmt));
    if (!b) return NULL;
    Stmt **v = (Stmt **)(b + 1);
    TransposeStmt *t = (TransposeStmt *)((char *)b + head);
    for (int i = 0; i < n; i++) v[i] = transpose_stmt(&t[i], names[i], sp);
    for (int i = 0; i < m->n; i++) v[n + i] = m->stmts[i];
    *b = (Block){.stmts = v, .n = n + m->n};
    return b;
}

int lang_nfuncs(const Program *p)
{
    return p->nfuncs;
}

Func *lang_func(const Program *p, int i)
{
    return i >= 0 && i < p->nfuncs ? p->funcs[i] : NULL;
}

Arena *lang_arena(Program *p)
{
    return p->arena;
}

Func *lang_default_func(const Program *cp, Func *f, int j)
{
    Program *p = (Program *)cp;
    if (!f || j < 0 || j >= f->nin || !f->in[j].deflt) return NULL;
    pthread_mutex_lock(&p->lock);
    Func *t = NULL;
    if (!f->dflt_fn) {
        f->dflt_fn = arena_alloc(p->arena, (size_t)f->nin * sizeof(Func *));
        if (f->dflt_fn) memset(f->dflt_fn, 0, (size_t)f->nin * sizeof(Func *));
    }
    if (f->dflt_fn && !(t = f->dflt_fn[j])) {
        /* t = function(<f's parameters before j>) return (<type> default) {
         *   default = <the default expression> } */
        t = arena_alloc(p->arena, sizeof(Func));
        Param *out = arena_alloc(p->arena, sizeof(Param));
        Stmt *st = arena_alloc(p->arena, sizeof(Stmt));
        Stmt **body = arena_alloc(p->arena, sizeof(Stmt *));
        size_t nl = strlen(f->name) + 32;
        char *name = arena_alloc(p->arena, nl);
        if (t && out && st && body && name) {
            memset(t, 0, sizeof *t);
            memset(out, 0, sizeof *out);
            memset(st, 0, sizeof *st);
            snprintf(name, nl, "%s#default%d", f->name, j + 1);
            out->name = "default";
            out->dt = f->in[j].dt;
            out->vt = f->in[j].vt;
            out->span = f->in[j].span;
            st->kind = ST_ASSIGN;
            st->span = f->in[j].span;
            st->assign.target.name = out->name;
            st->assign.target.span = f->in[j].span;
            st->assign.value = f->in[j].deflt;
            body[0] = st;
            t->name = name;
            t->ns = f->ns;
            t->file = f->file;
            t->in = f->in;
            t->nin = j;
            t->out = out;
            t->nout = 1;
            t->body.stmts = body;
            t->body.n = 1;
            t->span = f->in[j].span;
            t->builtin_lib = f->builtin_lib;
            f->dflt_fn[j] = t;
        } else {
            t = NULL;
        }
    }
    pthread_mutex_unlock(&p->lock);
    return t;
}

Func *lang_find_func(const Program *cp, const char *ns_key, const char *name)
{
    Program *p = (Program *)cp;  /* may load library files */
    if (!name) return NULL;
    pthread_mutex_lock(&p->lock);
    Func *f = NULL;
    LFile *from = find_file_key(p, ns_key ? ns_key : "");
    if (!from) from = p->files[0];
    const char *sep = strstr(name, "::");
    if (sep) {
        char *alias = strndup(name, (size_t)(sep - name));
        LFile *t = alias ? alias_file(from, alias) : NULL;
        if (!t && alias) {
            /* eval("path/file.dml::f"): a loaded file named by its path
             * (from the working directory, or the main script's folder) */
            const char *canon = canon_of(p, alias);
            if (!canon && p->files[0]->dir && alias[0] != '/') {
                char *rel = join(p->files[0]->dir, alias, "");
                canon = rel ? canon_of(p, rel) : NULL;
                free(rel);
            }
            t = canon ? find_file_canon(p, canon) : NULL;
        }
        if (t) f = load_file_func(t, sep + 2);
        free(alias);
    } else if (!(f = load_file_func(from, name))) {
        /* the library: load (and check) on demand; on errors roll back */
        int nfiles = p->nfiles, nfuncs = p->nfuncs;
        Diag *d = diag_new();
        Span none = { NULL, 0, 0 };
        bool failed = false;
        LFile *lib = d ? load_library(p, name, d, none, &failed) : NULL;
        if (lib) {
            validate_all(p, d);
            f = library_func(lib, name);
        }
        if (!d || diag_nerrors(d) > 0) {
            f = NULL;
            p->nfiles = nfiles;
            p->nfuncs = nfuncs;
        }
        diag_free(d);
        /* SystemDS's eval also finds the helper functions of library files
         * loaded so far (its builtin namespace): executePipeline's
         * dummycodingApply, called by name from apply_pipeline */
        for (int i = 0; !f && i < p->nfiles; i++)
            if (p->files[i]->builtin_lib) f = load_file_func(p->files[i], name);
    }
    pthread_mutex_unlock(&p->lock);
    return f;
}
