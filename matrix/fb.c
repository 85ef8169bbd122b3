/* fb.c: frame blocks (see fb.h). */
#include "fb.h"
#include "format.h"
#include "../base/jrng.h"

#include <assert.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *fb_type_name(FbType t)
{
    switch (t) {
    case FB_FP64: return "FP64";
    case FB_INT64: return "INT64";
    case FB_BOOL: return "BOOLEAN";
    default: return "STRING";
    }
}

bool fb_type_parse(const char *s, size_t n, FbType *t)
{
    while (n && isspace((unsigned char)*s)) { s++; n--; }
    while (n && isspace((unsigned char)s[n - 1])) n--;
    static const struct { const char *name; FbType t; } tab[] = {
        {"string", FB_STRING}, {"str", FB_STRING}, {"fp64", FB_FP64}, {"fp32", FB_FP64},
        {"double", FB_FP64}, {"int64", FB_INT64}, {"int32", FB_INT64}, {"int", FB_INT64},
        {"integer", FB_INT64}, {"boolean", FB_BOOL}, {"bool", FB_BOOL},
    };
    for (size_t k = 0; k < sizeof tab / sizeof *tab; k++)
        if (strlen(tab[k].name) == n && strncasecmp(tab[k].name, s, n) == 0) { *t = tab[k].t; return true; }
    return false;
}

/* ---- columns ---- */

static size_t cell_size(FbType t)
{
    switch (t) {
    case FB_STRING: return sizeof(char *);
    case FB_FP64: return sizeof(double);
    case FB_INT64: return sizeof(int64_t);
    default: return 1;
    }
}

/* A new column of n zeroed cells (strings NULL). Caller owns it. */
static FbCol *col_new(FbType t, int64_t n, BrErr *e)
{
    FbCol *c = br_calloc(1, sizeof *c);
    void *p = br_calloc((size_t)(n > 0 ? n : 1), cell_size(t));
    if (!c || !p) {
        free(c);
        free(p);
        br_err(e, BR_ENOMEM, "out of memory allocating a frame column of %lld rows", (long long)n);
        return NULL;
    }
    c->refs = 1;
    c->type = t;
    c->n = n;
    c->s = p;
    return c;
}

static void col_release(FbCol *c)
{
    if (!c || __atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) > 0) return;
    if (c->type == FB_STRING)
        for (int64_t i = 0; i < c->n; i++) free(c->s[i]);
    free(c->s);
    free(c);
}

/* Copy of rows [r0, r1) of c. Caller owns it. */
static FbCol *col_slice(const FbCol *c, int64_t r0, int64_t r1, BrErr *e)
{
    FbCol *r = col_new(c->type, r1 - r0, e);
    if (!r) return NULL;
    if (c->type != FB_STRING) {
        if (r1 > r0) memcpy(r->s, (const char *)c->s + (size_t)r0 * cell_size(c->type),
                            (size_t)(r1 - r0) * cell_size(c->type));
        return r;
    }
    for (int64_t i = r0; i < r1; i++)
        if (c->s[i] && !(r->s[i - r0] = br_strdup(c->s[i]))) {
            col_release(r);
            br_err(e, BR_ENOMEM, "out of memory copying a frame column");
            return NULL;
        }
    return r;
}

/* ---- frames ---- */

/* A frame shell with names "C1".."Cn" and no columns yet. */
static FB *shell(int64_t rows, int64_t cols, BrErr *e)
{
    if (rows < 0 || cols < 0) {
        br_err(e, BR_EDIM, "invalid frame dimensions %lldx%lld", (long long)rows, (long long)cols);
        return NULL;
    }
    FB *f = br_calloc(1, sizeof *f);
    if (f) {
        f->refs = 1;
        f->rows = rows;
        f->cols = cols;
        f->c = br_calloc((size_t)(cols > 0 ? cols : 1), sizeof(FbCol *));
        f->names = br_calloc((size_t)(cols > 0 ? cols : 1), sizeof(char *));
    }
    if (!f || !f->c || !f->names) goto oom;
    for (int64_t j = 0; j < cols; j++) {
        char nm[32];
        snprintf(nm, sizeof nm, "C%lld", (long long)j + 1);
        if (!(f->names[j] = br_strdup(nm))) goto oom;
    }
    return f;
oom:
    fb_release(f);
    br_err(e, BR_ENOMEM, "out of memory allocating a frame");
    return NULL;
}

FB *fb_new(int64_t rows, int64_t cols, const FbType *types, BrErr *e)
{
    FB *f = shell(rows, cols, e);
    if (!f) return NULL;
    for (int64_t j = 0; j < cols; j++)
        if (!(f->c[j] = col_new(types ? types[j] : FB_STRING, rows, e))) {
            fb_release(f);
            return NULL;
        }
    return f;
}

FB *fb_retain(FB *f)
{
    if (f) __atomic_add_fetch(&f->refs, 1, __ATOMIC_RELAXED);
    return f;
}

void fb_release(FB *f)
{
    if (!f || __atomic_sub_fetch(&f->refs, 1, __ATOMIC_ACQ_REL) > 0) return;
    for (int64_t j = 0; j < f->cols; j++) {
        if (f->c) col_release(f->c[j]);
        if (f->names) free(f->names[j]);
        if (f->mv) free(f->mv[j]);
    }
    free(f->c);
    free(f->names);
    free(f->mv);
    free(f->nd);
    free(f);
}

FbCol *fb_col_mut(FB *f, int64_t j, BrErr *e)
{
    assert(f->refs == 1);
    FbCol *c = f->c[j];
    if (__atomic_load_n(&c->refs, __ATOMIC_ACQUIRE) == 1) return c;
    FbCol *r = col_slice(c, 0, c->n, e);
    if (!r) return NULL;
    col_release(c);
    f->c[j] = r;
    return r;
}

int fb_set_name(FB *f, int64_t j, const char *name, BrErr *e)
{
    char *s = br_strdup(name ? name : "");
    if (!s) return br_err(e, BR_ENOMEM, "out of memory");
    free(f->names[j]);
    f->names[j] = s;
    f->named = true;
    return 0;
}

int fb_set_mv(FB *f, int64_t j, const char *mv, BrErr *e)
{
    if (!f->mv) {
        if (!mv) return 0;
        if (!(f->mv = br_calloc((size_t)(f->cols > 0 ? f->cols : 1), sizeof(char *))))
            return br_err(e, BR_ENOMEM, "out of memory");
    }
    char *s = NULL;
    if (mv && !(s = br_strdup(mv))) return br_err(e, BR_ENOMEM, "out of memory");
    free(f->mv[j]);
    f->mv[j] = s;
    return 0;
}

int fb_set_nd(FB *f, int64_t j, int64_t nd, BrErr *e)
{
    if (nd <= 0) nd = -1;
    if (!f->nd) {
        if (nd < 0) return 0;
        if (!(f->nd = br_malloc((size_t)(f->cols > 0 ? f->cols : 1) * sizeof(int64_t))))
            return br_err(e, BR_ENOMEM, "out of memory");
        for (int64_t k = 0; k < f->cols; k++) f->nd[k] = -1;
    }
    f->nd[j] = nd;
    return 0;
}

int64_t fb_nd(const FB *f, int64_t j)
{
    return f->nd ? f->nd[j] : -1;
}

bool fb_meta_default(const FB *f)
{
    for (int64_t j = 0; j < f->cols; j++)
        if ((f->mv && f->mv[j]) || fb_nd(f, j) > 0) return false;
    return true;
}

int64_t fb_find(const FB *f, const char *name)
{
    for (int64_t j = 0; j < f->cols; j++)
        if (strcmp(f->names[j], name) == 0) return j;
    return -1;
}

/* Copies names (those given, or all when `all`), mv and nd of columns
 * [cl, cu) of src to columns from dst0 of dst. */
static int copy_meta(FB *dst, int64_t dst0, const FB *src, int64_t cl, int64_t cu, bool all, BrErr *e)
{
    for (int64_t j = cl; j < cu; j++) {
        if ((src->named || all) && fb_set_name(dst, dst0 + j - cl, src->names[j], e)) return e->code;
        if (src->mv && src->mv[j] && fb_set_mv(dst, dst0 + j - cl, src->mv[j], e)) return e->code;
        if (fb_nd(src, j) > 0 && fb_set_nd(dst, dst0 + j - cl, src->nd[j], e)) return e->code;
    }
    return 0;
}

/* ---- cells ---- */

bool fb_parse_num(const char *s, size_t n, double *out)
{
    while (n && isspace((unsigned char)*s)) { s++; n--; }
    while (n && isspace((unsigned char)s[n - 1])) n--;
    if (n == 0 || n > 400) return false;
    char buf[408];
    memcpy(buf, s, n);
    buf[n] = 0;
    const char *p = buf + (buf[0] == '+' || buf[0] == '-');
    /* only decimal numbers and the Java/R spellings of the specials */
    if (isalpha((unsigned char)*p)) {
        if (strcasecmp(p, "nan") && strcasecmp(p, "inf") && strcasecmp(p, "infinity")) return false;
    } else {
        for (const char *q = p; *q; q++)
            if (*q == 'x' || *q == 'X' || *q == 'p' || *q == 'P') return false;
    }
    char *end;
    double v = strtod(buf, &end);
    if (end == buf || *end) return false;
    *out = v;
    return true;
}

/* Parses an integer (or an integral number) fully. */
static bool parse_int(const char *s, size_t n, int64_t *out)
{
    double d;
    while (n && isspace((unsigned char)*s)) { s++; n--; }
    while (n && isspace((unsigned char)s[n - 1])) n--;
    if (n == 0 || n > 64) return false;
    char buf[72];
    memcpy(buf, s, n);
    buf[n] = 0;
    char *end;
    long long v = strtoll(buf, &end, 10);
    if (end != buf && !*end) { *out = v; return true; }
    if (!fb_parse_num(s, n, &d) || d != floor(d) || !(fabs(d) < 9.3e18)) return false;
    *out = (int64_t)d;
    return true;
}

static bool parse_bool(const char *s, size_t n, uint8_t *out)
{
    while (n && isspace((unsigned char)*s)) { s++; n--; }
    while (n && isspace((unsigned char)s[n - 1])) n--;
    if ((n == 4 && !strncasecmp(s, "true", 4)) || (n == 1 && (*s == 't' || *s == 'T' || *s == '1'))) { *out = 1; return true; }
    if ((n == 5 && !strncasecmp(s, "false", 5)) || (n == 1 && (*s == 'f' || *s == 'F' || *s == '0'))) { *out = 0; return true; }
    double d;
    if (fb_parse_num(s, n, &d) && (d == 0 || d == 1)) { *out = d != 0; return true; }
    return false;
}

bool fb_is_missing(const FB *f, int64_t i, int64_t j)
{
    const FbCol *c = f->c[j];
    return (c->type == FB_STRING && !c->s[i]) || (c->type == FB_FP64 && isnan(c->d[i]));
}

double fb_get_num(const FB *f, int64_t i, int64_t j, bool *ok)
{
    const FbCol *c = f->c[j];
    *ok = true;
    switch (c->type) {
    case FB_FP64: return c->d[i];
    case FB_INT64: return (double)c->i[i];
    case FB_BOOL: return c->b[i] ? 1.0 : 0.0;
    default: break;
    }
    if (!c->s[i]) return NAN;
    double d;
    if (fb_parse_num(c->s[i], strlen(c->s[i]), &d)) return d;
    uint8_t b;
    if (parse_bool(c->s[i], strlen(c->s[i]), &b)) return b;
    *ok = false;
    return NAN;
}

const char *fb_cell_text(const FB *f, int64_t i, int64_t j, char *buf)
{
    const FbCol *c = f->c[j];
    switch (c->type) {
    case FB_STRING: return c->s[i];
    /* a double as text is Java's Double.toString (80.0, 1.0E-7), as
     * SystemDS turns a Double cell into a String */
    case FB_FP64: fmt_double(c->d[i], buf, FMT_NUM_MAX); return buf;
    case FB_INT64: snprintf(buf, 32, "%lld", (long long)c->i[i]); return buf;
    default: return c->b[i] ? "true" : "false";
    }
}

int fb_set_text(FB *f, int64_t i, int64_t j, const char *s, size_t n, BrErr *e)
{
    FbCol *c = fb_col_mut(f, j, e);
    if (!c) return e->code;
    bool ok = true;
    switch (c->type) {
    case FB_STRING: {
        char *t = NULL;
        if (s) {
            if (!(t = br_malloc(n + 1))) return br_err(e, BR_ENOMEM, "out of memory");
            memcpy(t, s, n);
            t[n] = 0;
        }
        free(c->s[i]);
        c->s[i] = t;
        return 0;
    }
    case FB_FP64:
        if (!s || n == 0) c->d[i] = NAN;
        else ok = fb_parse_num(s, n, &c->d[i]);
        break;
    case FB_INT64:
        if (!s || n == 0) c->i[i] = 0;
        else ok = parse_int(s, n, &c->i[i]);
        break;
    default:
        if (!s || n == 0) c->b[i] = 0;
        else ok = parse_bool(s, n, &c->b[i]);
        break;
    }
    if (!ok)
        return br_err(e, BR_EARG, "cannot parse \"%.*s\" as %s (frame column %lld, '%s', row %lld)",
                      (int)BR_MIN(n, 60), s, fb_type_name(c->type), (long long)j + 1, f->names[j],
                      (long long)i + 1);
    return 0;
}

int fb_set_num(FB *f, int64_t i, int64_t j, double v, BrErr *e)
{
    FbCol *c = fb_col_mut(f, j, e);
    if (!c) return e->code;
    switch (c->type) {
    case FB_FP64: c->d[i] = v; return 0;
    case FB_INT64: c->i[i] = java_d2l(v); return 0;   /* Java's (long): NaN 0, saturated */
    case FB_BOOL: c->b[i] = !isnan(v) && v != 0; return 0;
    default: break;
    }
    if (isnan(v)) return fb_set_text(f, i, j, NULL, 0, e);
    char buf[FMT_NUM_MAX];
    fmt_double(v, buf, sizeof buf);     /* Java's Double.toString, as SystemDS */
    return fb_set_text(f, i, j, buf, strlen(buf), e);
}

/* Copies cell (si, sj) of s into cell (di, dj) of the unshared frame d,
 * converting between types. */
static int copy_cell(FB *d, int64_t di, int64_t dj, const FB *s, int64_t si, int64_t sj, BrErr *e)
{
    const FbCol *sc = s->c[sj];
    FbType dt = d->c[dj]->type;
    if (sc->type == dt && dt != FB_STRING) {
        FbCol *dc = fb_col_mut(d, dj, e);
        if (!dc) return e->code;
        size_t w = cell_size(dt);
        memcpy((char *)dc->s + (size_t)di * w, (const char *)sc->s + (size_t)si * w, w);
        return 0;
    }
    if (sc->type != FB_STRING && dt != FB_STRING) {
        bool ok;
        return fb_set_num(d, di, dj, fb_get_num(s, si, sj, &ok), e);
    }
    char buf[32];
    const char *t = fb_cell_text(s, si, sj, buf);
    if (sc->type == FB_FP64 && isnan(sc->d[si])) t = NULL;
    return fb_set_text(d, di, dj, t, t ? strlen(t) : 0, e);
}

/* ---- reorganizations ---- */

FB *fb_slice(const FB *f, int64_t rl, int64_t ru, int64_t cl, int64_t cu, BrErr *e)
{
    assert(rl >= 0 && rl <= ru && ru <= f->rows && cl >= 0 && cl <= cu && cu <= f->cols);
    FB *r = shell(ru - rl, cu - cl, e);
    if (!r) return NULL;
    bool all_rows = rl == 0 && ru == f->rows;
    for (int64_t j = cl; j < cu; j++) {
        if (all_rows) {
            __atomic_add_fetch(&f->c[j]->refs, 1, __ATOMIC_RELAXED);
            r->c[j - cl] = f->c[j];
        } else if (!(r->c[j - cl] = col_slice(f->c[j], rl, ru, e))) {
            fb_release(r);
            return NULL;
        }
    }
    if (copy_meta(r, 0, f, cl, cu, false, e)) { fb_release(r); return NULL; }
    return r;
}

FB *fb_cbind(int n, const FB *const *fs, BrErr *e)
{
    int64_t rows = n > 0 ? fs[0]->rows : 0, cols = 0;
    for (int k = 0; k < n; k++) {
        if (fs[k]->rows != rows) {
            br_err(e, BR_EDIM, "cbind: dimension mismatch: frames with %lld and %lld rows",
                   (long long)rows, (long long)fs[k]->rows);
            return NULL;
        }
        cols += fs[k]->cols;
    }
    FB *r = shell(rows, cols, e);
    if (!r) return NULL;
    bool named = false;
    for (int k = 0; k < n; k++) named |= fs[k]->named;
    int64_t at = 0;
    for (int k = 0; k < n; k++) {
        for (int64_t j = 0; j < fs[k]->cols; j++) {
            __atomic_add_fetch(&fs[k]->c[j]->refs, 1, __ATOMIC_RELAXED);
            r->c[at + j] = fs[k]->c[j];
        }
        if (copy_meta(r, at, fs[k], 0, fs[k]->cols, named, e)) { fb_release(r); return NULL; }
        at += fs[k]->cols;
    }
    return r;
}

/* The more general of two value types (BOOLEAN < INT64 < FP64 < STRING). */
static FbType wider(FbType a, FbType b)
{
    static const int rank[] = {[FB_BOOL] = 0, [FB_INT64] = 1, [FB_FP64] = 2, [FB_STRING] = 3};
    return rank[a] >= rank[b] ? a : b;
}

FB *fb_rbind(int n, const FB *const *fs, BrErr *e)
{
    if (n == 0) return shell(0, 0, e);
    int64_t cols = fs[0]->cols, rows = 0;
    for (int k = 0; k < n; k++) {
        if (fs[k]->cols != cols) {
            br_err(e, BR_EDIM, "rbind: dimension mismatch: frames with %lld and %lld columns",
                   (long long)cols, (long long)fs[k]->cols);
            return NULL;
        }
        rows += fs[k]->rows;
    }
    FbType *types = br_calloc((size_t)(cols > 0 ? cols : 1), sizeof(FbType));
    if (!types) { br_err(e, BR_ENOMEM, "out of memory"); return NULL; }
    for (int64_t j = 0; j < cols; j++) {
        types[j] = fs[0]->c[j]->type;
        for (int k = 1; k < n; k++) types[j] = wider(types[j], fs[k]->c[j]->type);
    }
    FB *r = fb_new(rows, cols, types, e);
    free(types);
    if (!r || copy_meta(r, 0, fs[0], 0, cols, false, e)) { fb_release(r); return NULL; }
    int64_t at = 0;
    for (int k = 0; k < n; k++) {
        for (int64_t j = 0; j < cols; j++)
            for (int64_t i = 0; i < fs[k]->rows; i++)
                if (copy_cell(r, at + i, j, fs[k], i, j, e)) { fb_release(r); return NULL; }
        at += fs[k]->rows;
    }
    return r;
}

FB *fb_lix(const FB *t, int64_t rl, int64_t ru, int64_t cl, int64_t cu, const FB *src, BrErr *e)
{
    if (src->rows != ru - rl || src->cols != cu - cl) {
        br_err(e, BR_EDIM, "left indexing: dimension mismatch: a %lldx%lld frame into a %lldx%lld block",
               (long long)src->rows, (long long)src->cols, (long long)(ru - rl), (long long)(cu - cl));
        return NULL;
    }
    FB *r = fb_slice(t, 0, t->rows, 0, t->cols, e);
    if (!r) return NULL;
    for (int64_t j = cl; j < cu; j++)
        for (int64_t i = rl; i < ru; i++)
            if (copy_cell(r, i, j, src, i - rl, j - cl, e)) { fb_release(r); return NULL; }
    return r;
}

FB *fb_cast(const FB *f, const FbType *types, BrErr *e)
{
    FB *r = fb_new(f->rows, f->cols, types, e);
    if (!r || copy_meta(r, 0, f, 0, f->cols, false, e)) { fb_release(r); return NULL; }
    for (int64_t j = 0; j < f->cols; j++) {
        if (types[j] == f->c[j]->type) {
            col_release(r->c[j]);
            __atomic_add_fetch(&f->c[j]->refs, 1, __ATOMIC_RELAXED);
            r->c[j] = f->c[j];
            continue;
        }
        for (int64_t i = 0; i < f->rows; i++)
            if (copy_cell(r, i, j, f, i, j, e)) { fb_release(r); return NULL; }
    }
    return r;
}

/* ---- matrices ---- */

FB *fb_from_mb(const MB *m, BrErr *e)
{
    FbType *types = br_calloc((size_t)(m->cols > 0 ? m->cols : 1), sizeof(FbType));
    if (!types) { br_err(e, BR_ENOMEM, "out of memory"); return NULL; }
    for (int64_t j = 0; j < m->cols; j++) types[j] = FB_FP64;
    FB *f = fb_new(m->rows, m->cols, types, e);
    free(types);
    if (!f) return NULL;
    if (m->sparse) {
        for (int64_t i = 0; i < m->rows; i++)
            for (int64_t k = m->rp[i]; k < m->rp[i + 1]; k++) f->c[m->ci[k]]->d[i] = m->v[k];
    } else {
        for (int64_t i = 0; i < m->rows; i++)
            for (int64_t j = 0; j < m->cols; j++) f->c[j]->d[i] = m->d[i * m->cols + j];
    }
    return f;
}

MB *fb_to_mb(const FB *f, BrErr *e)
{
    MB *m = mb_dense(f->rows, f->cols, e);
    if (!m) return NULL;
    for (int64_t j = 0; j < f->cols; j++) {
        const FbCol *c = f->c[j];
        for (int64_t i = 0; i < f->rows; i++) {
            double v;
            bool ok = true;
            if (c->type == FB_STRING && (!c->s[i] || !c->s[i][0])) v = NAN;
            else v = fb_get_num(f, i, j, &ok);
            if (!ok) {
                br_err(e, BR_EARG, "as.matrix: cannot convert \"%.60s\" (frame column %lld, '%s', row %lld) to a number",
                       c->s[i], (long long)j + 1, f->names[j], (long long)i + 1);
                mb_release(m);
                return NULL;
            }
            m->d[i * f->cols + j] = v;
        }
    }
    mb_recount_nnz(m);
    if (mb_examine(m, e)) { mb_release(m); return NULL; }
    return m;
}
