/* diag.c: the diagnostics context. */
#include "diag.h"
#include "base.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct Msg {
    bool error;
    BrErr e;             /* e.at.file points to file */
    char *file;          /* own copy; NULL: none */
} Msg;

typedef struct Source {
    char *file, *text;   /* own copies */
} Source;

struct Diag {
    Msg *msgs;
    int nmsgs, cap;
    int nerrors, nwarnings;
    int kept_errors, kept_warnings;
    Source *srcs;
    int nsrcs, srccap;
    char *first;         /* "file:line:col: message" of the first error */
};

Diag *diag_new(void)
{
    return calloc(1, sizeof(Diag));
}

void diag_free(Diag *d)
{
    if (!d) return;
    for (int i = 0; i < d->nmsgs; i++) free(d->msgs[i].file);
    for (int i = 0; i < d->nsrcs; i++) {
        free(d->srcs[i].file);
        free(d->srcs[i].text);
    }
    free(d->msgs);
    free(d->srcs);
    free(d->first);
    free(d);
}

/* "file:line:col: " (or shorter when parts are unknown) into buf. */
static void format_pos(char *buf, size_t cap, Span at)
{
    buf[0] = 0;
    if (at.file && at.line > 0 && at.col > 0) snprintf(buf, cap, "%s:%d:%d: ", at.file, at.line, at.col);
    else if (at.file && at.line > 0) snprintf(buf, cap, "%s:%d: ", at.file, at.line);
    else if (at.file) snprintf(buf, cap, "%s: ", at.file);
}

/* Keeps a copy of e as an error or a warning. */
static void add(Diag *d, bool error, const BrErr *e)
{
    if (!d) return;
    if (error) d->nerrors++;
    else d->nwarnings++;
    int *kept = error ? &d->kept_errors : &d->kept_warnings;
    if (*kept >= DIAG_MAX_SHOWN) return;
    if (d->nmsgs == d->cap) {
        int nc = d->cap ? 2 * d->cap : 16;
        Msg *m = realloc(d->msgs, (size_t)nc * sizeof(Msg));
        if (!m) return;
        d->msgs = m;
        d->cap = nc;
    }
    Msg *m = &d->msgs[d->nmsgs];
    m->error = error;
    m->e = *e;
    m->file = e->at.file ? br_strdup(e->at.file) : NULL;
    if (e->at.file && !m->file) return;
    m->e.at.file = m->file;
    d->nmsgs++;
    (*kept)++;
    if (error && !d->first) {
        char pos[1200];
        format_pos(pos, sizeof pos, m->e.at);
        size_t n = strlen(pos) + strlen(m->e.msg) + 1;
        d->first = malloc(n);
        if (d->first) snprintf(d->first, n, "%s%s", pos, m->e.msg);
    }
}

static void vadd(Diag *d, bool error, Span at, const char *fmt, va_list ap)
{
    BrErr e = {.code = BR_EFAIL, .at = at};
    vsnprintf(e.msg, sizeof e.msg, fmt, ap);
    add(d, error, &e);
}

void diag_add(Diag *d, const BrErr *e) { if (e && e->code) add(d, true, e); }

void diag_add_warnings(Diag *d, const Diag *from)
{
    for (int i = 0; d && from && i < from->nmsgs; i++)
        if (!from->msgs[i].error) add(d, false, &from->msgs[i].e);
}

void diag_error(Diag *d, Span at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vadd(d, true, at, fmt, ap);
    va_end(ap);
}

void diag_warning(Diag *d, Span at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vadd(d, false, at, fmt, ap);
    va_end(ap);
}

int diag_nerrors(const Diag *d) { return d ? d->nerrors : 0; }
int diag_nwarnings(const Diag *d) { return d ? d->nwarnings : 0; }

void diag_add_source(Diag *d, const char *file, const char *text)
{
    if (!d || !file || !text) return;
    for (int i = 0; i < d->nsrcs; i++) {
        if (strcmp(d->srcs[i].file, file) == 0) {
            char *t = br_strdup(text);
            if (!t) return;
            free(d->srcs[i].text);
            d->srcs[i].text = t;
            return;
        }
    }
    if (d->nsrcs == d->srccap) {
        int nc = d->srccap ? 2 * d->srccap : 8;
        Source *s = realloc(d->srcs, (size_t)nc * sizeof(Source));
        if (!s) return;
        d->srcs = s;
        d->srccap = nc;
    }
    char *f = br_strdup(file), *t = br_strdup(text);
    if (!f || !t) {
        free(f);
        free(t);
        return;
    }
    d->srcs[d->nsrcs].file = f;
    d->srcs[d->nsrcs].text = t;
    d->nsrcs++;
}

static const char *find_source(const Diag *d, const char *file)
{
    if (!file) return NULL;
    for (int i = 0; i < d->nsrcs; i++)
        if (strcmp(d->srcs[i].file, file) == 0) return d->srcs[i].text;
    return NULL;
}

/* Prints line `line` of text and a caret under column col (tabs in the
 * line are kept in the caret line so the caret lines up). */
static void print_excerpt(FILE *f, const char *text, int line, int col)
{
    const char *s = text;
    for (int l = 1; l < line && s; l++) {
        s = strchr(s, '\n');
        if (s) s++;
    }
    if (!s) return;
    const char *e = strchr(s, '\n');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    if (len && s[len - 1] == '\r') len--;
    if (len > 400) len = 400;  /* keep very long lines readable */
    fprintf(f, "    %.*s\n    ", (int)len, s);
    for (int c = 1; c < col && (size_t)(c - 1) < len; c++)
        fputc(s[c - 1] == '\t' ? '\t' : ' ', f);
    fputs("^\n", f);
}

void diag_print(const Diag *d, FILE *f)
{
    if (!d) return;
    for (int i = 0; i < d->nmsgs; i++) {
        const Msg *m = &d->msgs[i];
        char pos[1200];
        format_pos(pos, sizeof pos, m->e.at);
        fprintf(f, "%s%s: %s\n", pos, m->error ? "error" : "warning", m->e.msg);
        const char *src = find_source(d, m->file);
        if (src && m->e.at.line > 0) print_excerpt(f, src, m->e.at.line, m->e.at.col);
    }
    int dropped = d->nerrors - d->kept_errors;
    if (dropped > 0)
        fprintf(f, "%d more error%s not shown\n", dropped, dropped == 1 ? "" : "s");
}

const char *diag_first_message(const Diag *d)
{
    return d ? d->first : NULL;
}
