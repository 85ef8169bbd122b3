/* frame.c: frames (tier 2) in the runtime: construction (as.frame,
 * frame), casts (as.matrix, as.scalar, applySchema), detectSchema,
 * colnames, the transformations, and the generic builtins (nrow, ncol,
 * length, typeof, cbind, rbind, print, toString, write, read) when a
 * frame is involved.
 * rt_builtin calls bi_frame first; it claims its own builtins and
 * generic ones with a frame argument, and returns BI_NOT_MINE otherwise. */
#include "frame.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../base/strbuf.h"
#include "../kernels/reorg.h"
#include "../lang/load.h"
#include "../io/io.h"
#include "../matrix/format.h"
#include "framemap.h"
#include "framestr.h"
#include "transform.h"

static int ret_fb(FB *f, Value *out, BrErr *e)
{
    if (!f) return e->code ? e->code : br_err(e, BR_EFAIL, "frame operation failed");
    *out = val_frame(f);
    return 0;
}

/* ---- printing ---- */


char *bi_frame_text(const FB *f, int64_t rows, int64_t cols, int decimal, const char *sep, const char *linesep,
                    BrErr *e)
{
    int64_t nr = rows < 0 || rows > f->rows ? f->rows : rows;
    int64_t nc = cols < 0 || cols > f->cols ? f->cols : cols;
    StrBuf t = {0};
    char buf[64];
    snprintf(buf, sizeof buf, "# FRAME: nrow = %lld, ncol = %lld", (long long)f->rows, (long long)f->cols);
    sb_puts(&t, buf);
    sb_puts(&t, linesep);
    for (int pass = 0; pass < 2; pass++) {
        sb_puts(&t, "#");
        sb_puts(&t, sep);
        for (int64_t j = 0; j < nc; j++) {
            if (j) sb_puts(&t, sep);
            sb_puts(&t, pass == 0 ? f->names[j] : fb_type_name(f->c[j]->type));
        }
        sb_puts(&t, linesep);
    }
    /* FP64 columns: every cell as toString prints matrices, one line each */
    char **dtext = calloc((size_t)(nc > 0 ? nc : 1), sizeof(char *));
    char ***dline = calloc((size_t)(nc > 0 ? nc : 1), sizeof(char **));
    if (!dtext || !dline) t.oom = true;
    for (int64_t j = 0; j < nc && !t.oom && !e->code; j++) {
        if (f->c[j]->type != FB_FP64 || nr == 0) continue;
        MB *m = mb_dense(nr, 1, e);
        if (!m) break;
        memcpy(m->d, f->c[j]->d, (size_t)nr * sizeof(double));
        mb_recount_nnz(m);
        dtext[j] = fmt_matrix(m, -1, -1, decimal, false, "", "\n", e);
        mb_release(m);
        dline[j] = malloc((size_t)nr * sizeof(char *));
        if (!dtext[j] || !dline[j]) { t.oom = !e->code; break; }
        char *p = dtext[j];
        for (int64_t i = 0; i < nr; i++) {
            dline[j][i] = p;
            p = strchr(p, '\n');
            if (p) *p++ = 0;
            else p = dline[j][i] + strlen(dline[j][i]);
        }
    }
    for (int64_t i = 0; i < nr && !t.oom && !e->code; i++) {
        for (int64_t j = 0; j < nc; j++) {
            if (j) sb_puts(&t, sep);
            const FbCol *c = f->c[j];
            switch (c->type) {
            case FB_STRING: sb_puts(&t, c->s[i] ? c->s[i] : "null"); break;
            case FB_FP64: sb_puts(&t, dline[j][i]); break;
            case FB_INT64: fmt_int(c->i[i], buf, sizeof buf); sb_puts(&t, buf); break;
            default: sb_puts(&t, fmt_bool(c->b[i])); break;
            }
        }
        sb_puts(&t, linesep);
    }
    for (int64_t j = 0; dtext && j < nc; j++) { free(dtext[j]); if (dline) free(dline[j]); }
    free(dtext);
    free(dline);
    if (t.oom || e->code) {
        free(t.s);
        if (!e->code) br_err(e, BR_ENOMEM, "out of memory formatting a frame");
        return NULL;
    }
    return t.s ? t.s : br_strdup("");
}

static int b_print(Rt *rt, const Value *v, BrErr *e)
{
    char *s = bi_frame_text(v->f, 100, 100, 3, " ", "\n", e);
    if (!s) return e->code;
    rt_print_line(rt, s);
    free(s);
    return 0;
}

static int b_tostring(Value *a, Value *out, BrErr *e)
{
    double d;
    int64_t rows = 100, cols = 100;
    int decimal = 3;
    const char *sep = " ", *ls = "\n";
    if (bi_given(&a[1])) { if (bi_num(&a[1], "rows", &d, e)) return e->code; rows = ops_dml_long(d); }
    if (bi_given(&a[2])) { if (bi_num(&a[2], "cols", &d, e)) return e->code; cols = ops_dml_long(d); }
    if (bi_given(&a[3])) { if (bi_num(&a[3], "decimal", &d, e)) return e->code; decimal = (int)d; }
    if (bi_given(&a[5]) && !(sep = bi_str(&a[5], "sep", e))) return e->code;
    if (bi_given(&a[6]) && !(ls = bi_str(&a[6], "linesep", e))) return e->code;
    char *s = bi_frame_text(a[0].f, rows, cols, decimal, sep, ls, e);
    if (!s) return e->code;
    *out = val_string(s);
    free(s);
    return 0;
}

/* ---- files ---- */

int bi_frame_read(Value *a, Value *out, BrErr *e)
{
    const char *file = bi_str(&a[0], "file", e);
    if (!file) return e->code;
    IoFrameReadOpts o;
    io_frame_read_opts_init(&o);
    double d;
    bool b;
    if (bi_given(&a[1]) && !(o.format = bi_str(&a[1], "format", e))) return e->code;
    if (bi_given(&a[2])) { if (bi_num(&a[2], "rows", &d, e)) return e->code; o.rows = ops_dml_long(d); }
    if (bi_given(&a[3])) { if (bi_num(&a[3], "cols", &d, e)) return e->code; o.cols = ops_dml_long(d); }
    if (bi_given(&a[4])) { if (bi_bool(&a[4], "header", &b, e)) return e->code; o.header = b; }
    if (bi_given(&a[5]) && !(o.sep = bi_str(&a[5], "sep", e))) return e->code;
    if (bi_given(&a[11]) && !(o.schema = bi_str(&a[11], "schema", e))) return e->code;
    const char *na[64];
    char *nabuf = NULL;
    if (bi_given(&a[8])) {
        if ((o.n_na = bi_split(&a[8], "naStrings", na, 64, &nabuf, e)) < 0) return e->code;
        o.na_strings = na;
    }
    FB *f = io_read_frame(file, &o, e);
    free(nabuf);
    return ret_fb(f, out, e);
}

static int b_write(Value *a, BrErr *e)
{
    const char *file = bi_str(&a[1], "file", e);
    if (!file) return e->code;
    IoWriteOpts o;
    io_write_opts_init(&o);
    if (bi_given(&a[2]) && !(o.format = bi_str(&a[2], "format", e))) return e->code;
    if (bi_given(&a[3]) && bi_bool(&a[3], "header", &o.header, e)) return e->code;
    if (bi_given(&a[4]) && !(o.sep = bi_str(&a[4], "sep", e))) return e->code;
    o.blocksize = br_blocksize();   /* binary: SystemDS's FrameBlock records of this many rows */
    o.parts = br_threads();         /* its parallel writer's part files */
    return io_write_frame(file, a[0].f, &o, e);
}

/* ---- construction and casts ---- */

/* Text of a scalar for a frame cell (NULL: not a scalar). Caller frees. */
static char *cell_text(const Value *v)
{
    if (!val_is_scalar(v)) return NULL;
    return val_text(v, true);
}

/* Value types from a schema argument: "T1,T2" (one type: every column),
 * a list of type names, or a frame whose first row holds them (what
 * detectSchema returns). *n receives the count; *types is malloc'd. */
static int schema_types(const Value *s, FbType **types, int64_t *n, BrErr *e)
{
    *types = NULL;
    *n = 0;
    int64_t k = 0, cap = 0;
    const char *text = NULL;
    char *own = NULL;
    int64_t items = s->kind == V_LIST ? s->l->n : s->kind == V_FRAME ? s->f->cols : 1;
    for (int64_t it = 0; it < items; it++) {
        free(own);
        own = NULL;
        if (s->kind == V_STRING) text = s->s->s;
        else if (s->kind == V_LIST) {
            if (s->l->items[it].kind != V_STRING) { free(*types); return br_err(e, BR_EARG, "schema: list items must be type names"); }
            text = s->l->items[it].s->s;
        } else if (s->kind == V_FRAME) {
            if (s->f->rows < 1) { free(*types); return br_err(e, BR_EARG, "schema: the schema frame has no rows"); }
            char buf[40];
            const char *t = fb_cell_text(s->f, 0, it, buf);
            own = br_strdup(t ? t : "");
            text = own;
        } else {
            return br_err(e, BR_EARG, "schema must be a string, a list or a frame, not a %s", val_kind_name(s->kind));
        }
        for (const char *p = text;;) {
            const char *q = strchr(p, ',');
            size_t len = q ? (size_t)(q - p) : strlen(p);
            if (k == cap) {
                cap = cap ? 2 * cap : 16;
                FbType *nt = br_realloc(*types, (size_t)cap * sizeof(FbType));
                if (!nt) { free(own); free(*types); return br_err(e, BR_ENOMEM, "out of memory"); }
                *types = nt;
            }
            if (!fb_type_parse(p, len, &(*types)[k])) {
                int rc = br_err(e, BR_EARG, "schema: unknown value type \"%.*s\" (STRING, FP64, INT64, BOOLEAN)",
                                (int)BR_MIN(len, 40), p);
                free(own);
                free(*types);
                *types = NULL;
                return rc;
            }
            k++;
            if (!q) break;
            p = q + 1;
        }
    }
    free(own);
    *n = k;
    return 0;
}

/* Types for cols columns from a schema argument (absent: all strings). */
static int resolve_schema(const Value *s, int64_t cols, FbType **types, BrErr *e)
{
    int64_t n = 0;
    *types = NULL;
    if (bi_given(s) && schema_types(s, types, &n, e)) return e->code;
    FbType *t = br_calloc((size_t)(cols > 0 ? cols : 1), sizeof(FbType));
    if (!t) { free(*types); return br_err(e, BR_ENOMEM, "out of memory"); }
    if (n == 1) for (int64_t j = 0; j < cols; j++) t[j] = (*types)[0];
    else if (n == cols) for (int64_t j = 0; j < cols; j++) t[j] = (*types)[j];
    else if (n != 0) {
        free(*types);
        free(t);
        *types = NULL;
        return br_err(e, BR_EDIM, "schema: dimension mismatch: %lld value types for %lld columns", (long long)n,
                      (long long)cols);
    }
    free(*types);
    *types = t;
    return 0;
}

/* frame(data, rows, cols, schema): data is one value for every cell, a
 * list with one value per column (repeated in every row) or rows*cols
 * values (row-major). */
static int b_frame(Value *a, Value *out, BrErr *e)
{
    double r = -1, c = -1;
    if (bi_given(&a[1]) && bi_num(&a[1], "rows", &r, e)) return e->code;
    if (bi_given(&a[2]) && bi_num(&a[2], "cols", &c, e)) return e->code;
    const Value *data = &a[0];
    if (data->kind == V_FRAME || data->kind == V_MATRIX) {
        /* a frame or matrix data argument: as.frame, then the schema */
        FB *tmp;
        const FB *src = ap_as_frame(data, "frame", &tmp, e);
        if (!src) return e->code;
        FbType *types = NULL;
        FB *res = NULL;
        if (!resolve_schema(&a[3], src->cols, &types, e))
            res = bi_given(&a[3]) ? fb_cast(src, types, e) : fb_slice(src, 0, src->rows, 0, src->cols, e);
        free(types);
        fb_release(tmp);
        return ret_fb(res, out, e);
    }
    int64_t nitems = data->kind == V_LIST ? data->l->n : 1;
    if (c < 0) {
        int64_t ns = 0;
        FbType *st = NULL;
        if (bi_given(&a[3]) && schema_types(&a[3], &st, &ns, e)) return e->code;
        free(st);
        c = ns > 0 ? (double)ns : data->kind == V_LIST ? (double)nitems : 1;
    }
    if (r < 0) return br_err(e, BR_EARG, "frame: the number of rows is required");
    int64_t rows = (int64_t)r, cols = (int64_t)c;
    if (data->kind == V_LIST && nitems != 1 && nitems != cols && nitems != rows * cols)
        return br_err(e, BR_EDIM, "frame: dimension mismatch: %lld values for %lldx%lld (give one, one per column, or all)",
                      (long long)nitems, (long long)rows, (long long)cols);
    FbType *types;
    if (resolve_schema(&a[3], cols, &types, e)) return e->code;
    FB *f = fb_new(rows, cols, types, e);
    free(types);
    if (!f) return e->code;
    char **texts = calloc((size_t)nitems, sizeof(char *));
    int rc = texts ? 0 : br_err(e, BR_ENOMEM, "out of memory");
    for (int64_t k = 0; k < nitems && !rc; k++) {
        const Value *v = data->kind == V_LIST ? &data->l->items[k] : data;
        if (!(texts[k] = cell_text(v)))
            rc = br_err(e, BR_EARG, "frame: data must be scalars, not a %s", val_kind_name(v->kind));
    }
    /* "" fills nothing: the cells stay missing (SystemDS makes random data) */
    for (int64_t i = 0; i < rows && !rc; i++)
        for (int64_t j = 0; j < cols && !rc; j++) {
            int64_t k = nitems == 1 ? 0 : nitems == cols ? j : i * cols + j;
            if (!texts[k][0]) continue;
            rc = fb_set_text(f, i, j, texts[k], strlen(texts[k]), e);
        }
    for (int64_t k = 0; texts && k < nitems; k++) free(texts[k]);
    free(texts);
    if (rc) { fb_release(f); return rc; }
    *out = val_frame(f);
    return 0;
}

/* Is cell (i, j) empty for removeEmpty: missing, 0 or FALSE (NaN is not
 * empty, as in matrices). A string is empty when missing or "0" and only
 * then, as SystemDS's StringArray.isNotEmpty says: bandit's frame(0, ...)
 * tables rely on "0", and a present "" is a value. */
static bool cell_empty(const FB *f, int64_t i, int64_t j)
{
    const FbCol *c = f->c[j];
    switch (c->type) {
    case FB_STRING: return !c->s[i] || !strcmp(c->s[i], "0");
    case FB_FP64: return c->d[i] == 0;
    case FB_INT64: return c->i[i] == 0;
    case FB_BOOL: return !c->b[i];
    }
    return true;
}

/* replace(target=F, pattern=, replacement=) over a frame, as SystemDS's
 * FrameBlock.replaceOperations. Both values become text as SystemDS
 * passes them (integers in decimal, doubles as Java's Double.toString,
 * booleans "true"/"false") and get a kind from that text: BOOLEAN for
 * true/false in any case, a number (Java's NumberUtils.isCreatable, or
 * NaN) is INT when it is digits only ("-1" is a double) and DOUBLE
 * otherwise, else STRING; the two kinds must be the same. The value then
 * replaces the pattern in the string columns (cells whose text equals
 * the pattern's) and in the columns of its kind (INT64 for INT, FP64 for
 * DOUBLE, BOOLEAN): a cell equal to the pattern parsed as the column's
 * type, as Java's toString of both compares them (NaN matches NaN; -0.0
 * is not 0.0). Other columns are kept; so are names and metadata. */
typedef enum { RK_BOOL, RK_INT, RK_DOUBLE, RK_STRING } RepKind;

static const char *rep_text(const Value *v, const char *what, char *buf, BrErr *e)
{
    switch (v->kind) {
    case V_STRING: return v->s->s;
    case V_INT: fmt_int(v->i, buf, FMT_NUM_MAX); return buf;
    case V_DOUBLE: fmt_double(v->d, buf, FMT_NUM_MAX); return buf;
    case V_BOOL: return fmt_bool_file(v->b);
    default:
        br_err(e, BR_EARG, "replace: %s must be a scalar, not a %s", what, val_kind_name(v->kind));
        return NULL;
    }
}

/* Java's NumberUtils.isCreatable, for decimal text: an optional sign, then
 * digits with an optional fraction and exponent, or hexadecimal 0x...;
 * a trailing type letter (f, d; l after an integer) is allowed. */
static bool rep_creatable(const char *s)
{
    const char *p = s + (*s == '-' || *s == '+');
    if (!*p) return false;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        if (!p[2]) return false;
        for (p += 2; *p; p++)
            if (!strchr("0123456789abcdefABCDEF", *p)) return false;
        return true;
    }
    if (!((*p >= '0' && *p <= '9') || *p == '.')) return false;
    char *end;
    (void)strtod(p, &end);
    if (end == p) return false;
    if (!*end) return true;
    if (end[1]) return false;
    if (strchr("fFdD", *end)) return true;
    return (*end == 'l' || *end == 'L') && !strpbrk(p, ".eE");
}

static RepKind rep_kind(const char *s)
{
    if (!strcasecmp(s, "true") || !strcasecmp(s, "false")) return RK_BOOL;
    if (rep_creatable(s) || !strcmp(s, "NaN")) {
        for (const char *p = s; *p; p++)
            if (*p < '0' || *p > '9') return RK_DOUBLE;
        return RK_INT;
    }
    return RK_STRING;
}

static const char *rep_kind_name(RepKind k)
{
    return k == RK_BOOL ? "BOOLEAN" : k == RK_INT ? "INT64" : k == RK_DOUBLE ? "FP64" : "STRING";
}

/* text as a cell of an INT64, FP64 or BOOLEAN column (Java's parse; a
 * double may end in Java's type letter f or d) */
static int rep_parse(const char *s, FbType t, Value *v, BrErr *e)
{
    if (t == FB_BOOL) {
        *v = val_bool(!strcasecmp(s, "true"));
        return 0;
    }
    if (t == FB_INT64) {
        char *end;
        errno = 0;
        long long x = strtoll(s, &end, 10);
        if (errno || end == s || *end)
            return br_err(e, BR_EARG, "replace: '%s' is not a 64-bit integer", s);
        *v = val_int(x);
        return 0;
    }
    size_t n = strlen(s);
    if (n > 1 && strchr("fFdD", s[n - 1])) n--;
    double d;
    if (!fb_parse_num(s, n, &d)) return br_err(e, BR_EARG, "replace: '%s' is not a number", s);
    *v = val_double(d);
    return 0;
}

static int b_replace(const Value *a, Value *out, BrErr *e)
{
    const FB *f = a[0].f;
    char pb[FMT_NUM_MAX], rb[FMT_NUM_MAX];
    const char *pat = rep_text(&a[1], "pattern", pb, e);
    const char *rep = pat ? rep_text(&a[2], "replacement", rb, e) : NULL;
    if (!rep) return e->code;
    RepKind pk = rep_kind(pat), rk = rep_kind(rep);
    if (pk != rk)
        return br_err(e, BR_EARG, "replace: pattern and replacement types should be the same: %s %s",
                      rep_kind_name(pk), rep_kind_name(rk));
    FbType kt = pk == RK_BOOL ? FB_BOOL : pk == RK_INT ? FB_INT64 : FB_FP64;
    FB *r = fb_slice(f, 0, f->rows, 0, f->cols, e);
    if (!r) return e->code;
    for (int64_t j = 0; j < f->cols; j++) {
        FbType t = f->c[j]->type;
        if (t != FB_STRING && (pk == RK_STRING || t != kt)) continue;
        const FbCol *c = f->c[j];
        Value pv, rv;
        if (t != FB_STRING && (rep_parse(pat, t, &pv, e) || rep_parse(rep, t, &rv, e))) break;
        FbCol *w = NULL;
        for (int64_t i = 0; i < f->rows; i++) {
            bool hit;
            switch (t) {
            case FB_STRING: hit = c->s[i] && !strcmp(c->s[i], pat); break;
            case FB_INT64: hit = c->i[i] == pv.i; break;
            case FB_BOOL: hit = (c->b[i] != 0) == pv.b; break;
            default:
                hit = isnan(pv.d) ? isnan(c->d[i])
                                  : c->d[i] == pv.d && signbit(c->d[i]) == signbit(pv.d);
                break;
            }
            if (!hit) continue;
            if (!w && !(w = fb_col_mut(r, j, e))) break;
            switch (t) {
            case FB_STRING: {
                char *copy = br_strdup(rep);
                if (!copy) { br_err(e, BR_ENOMEM, "out of memory"); break; }
                free(w->s[i]);
                w->s[i] = copy;
                break;
            }
            case FB_INT64: w->i[i] = rv.i; break;
            case FB_BOOL: w->b[i] = rv.b; break;
            default: w->d[i] = rv.d; break;
            }
            if (e->code) break;
        }
        if (e->code) break;
    }
    if (e->code) { fb_release(r); return e->code; }
    return ret_fb(r, out, e);
}

/* removeEmpty(target=F, margin=, select=, empty.return=) of a frame: the
 * rows (columns) with a non-empty cell, or those select marks non-zero,
 * in order; nothing kept gives one row (column) of missing values with
 * empty.return=TRUE (as matrices give zeros), else none. */
static int b_rmempty(const Value *a, Value *out, BrErr *e)
{
    const FB *f = a[0].f;
    const char *margin = bi_str(&a[1], "margin", e);
    if (!margin) return e->code;
    bool rows = !strcmp(margin, "rows");
    if (!rows && strcmp(margin, "cols"))
        return br_err(e, BR_EARG, "removeEmpty: margin must be \"rows\" or \"cols\", not \"%s\"", margin);
    bool eret = true;
    if (bi_given(&a[3]) && bi_bool(&a[3], "empty.return", &eret, e)) return e->code;
    int64_t n = rows ? f->rows : f->cols;
    const MB *sel = NULL;
    if (bi_given(&a[2])) {
        if (a[2].kind != V_MATRIX) return br_err(e, BR_EARG, "removeEmpty: select must be a matrix");
        sel = a[2].m;
        if (sel->rows * sel->cols != n || (sel->rows != 1 && sel->cols != 1))
            return br_err(e, BR_EDIM, "removeEmpty: dimension mismatch: select is %lldx%lld for %lld %s",
                          (long long)sel->rows, (long long)sel->cols, (long long)n, margin);
    }
    bool *keep = br_calloc((size_t)(n > 0 ? n : 1), sizeof(bool));
    if (!keep) return br_err(e, BR_ENOMEM, "out of memory");
    int64_t nk = 0, nruns = 0;
    for (int64_t k = 0; k < n; k++) {
        if (sel) keep[k] = mb_get(sel, sel->cols == 1 ? k : 0, sel->cols == 1 ? 0 : k) != 0;
        else
            for (int64_t o = 0; o < (rows ? f->cols : f->rows) && !keep[k]; o++)
                keep[k] = rows ? !cell_empty(f, k, o) : !cell_empty(f, o, k);
        nk += keep[k];
        nruns += keep[k] && (k == 0 || !keep[k - 1]);
    }
    FB *res = NULL;
    if (nk == n) res = fb_retain((FB *)f);
    else if (nk == 0) {
        int64_t m = eret ? 1 : 0;
        if (rows) res = fb_slice(f, 0, 0, 0, f->cols, e);
        else res = fb_slice(f, 0, f->rows, 0, 0, e);
        if (res && m) {
            FbType *t = br_calloc((size_t)(f->cols > 0 ? f->cols : 1), sizeof(FbType));
            for (int64_t j = 0; t && j < f->cols; j++) t[j] = f->c[j]->type;
            fb_release(res);
            res = t ? (rows ? fb_new(1, f->cols, t, e) : fb_new(f->rows, 1, NULL, e)) : NULL;
            if (!t) br_err(e, BR_ENOMEM, "out of memory");
            free(t);
        }
    } else {
        const FB **parts = br_calloc((size_t)nruns, sizeof(FB *));
        int np = 0;
        for (int64_t k = 0; parts && k < n; k++) {
            if (!keep[k]) continue;
            int64_t s0 = k;
            while (k + 1 < n && keep[k + 1]) k++;
            parts[np] = rows ? fb_slice(f, s0, k + 1, 0, f->cols, e) : fb_slice(f, 0, f->rows, s0, k + 1, e);
            if (!parts[np]) break;
            np++;
        }
        if (!parts) br_err(e, BR_ENOMEM, "out of memory");
        else if (np == nruns) res = np == 1 ? (FB *)parts[0] : rows ? fb_rbind(np, parts, e) : fb_cbind(np, parts, e);
        for (int k = 0; parts && k < np; k++)
            if (!(np == 1 && res == parts[k])) fb_release((FB *)parts[k]);
        free(parts);
    }
    free(keep);
    return ret_fb(res, out, e);
}

static int b_as_scalar(const FB *f, Value *out, BrErr *e)
{
    if (f->rows != 1 || f->cols != 1)
        return br_err(e, BR_EDIM, "as.scalar: dimension mismatch: expected a 1x1 frame, got %lldx%lld",
                      (long long)f->rows, (long long)f->cols);
    const FbCol *c = f->c[0];
    switch (c->type) {
    case FB_FP64: *out = val_double(c->d[0]); break;
    case FB_INT64: *out = val_int(c->i[0]); break;
    case FB_BOOL: *out = val_bool(c->b[0]); break;
    default: *out = val_string(c->s[0] ? c->s[0] : "null"); break;
    }
    return 0;
}

/* Classes of a cell's text for detectSchema. */
enum { K_BOOL = 1, K_INT = 2, K_NUM = 4 };

/* [-+]?digits, optionally followed by '.' and zeros ("11.000"). */
static bool int_text(const char *s, size_t n, bool sign_ok)
{
    size_t i = 0;
    if (sign_ok && i < n && (s[i] == '+' || s[i] == '-')) i++;
    size_t d = i;
    while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    if (i == d) return false;
    if (i < n && s[i] == '.') {
        size_t z = ++i;
        while (i < n && s[i] == '0') i++;
        if (i == z) return false;
    }
    return i == n;
}

static int text_kinds(const char *s)
{
    size_t n = strlen(s);
    while (n && (*s == ' ' || *s == '"')) { s++; n--; }
    while (n && (s[n - 1] == ' ' || s[n - 1] == '"')) n--;
    int k = 0;
    double d;
    if (fb_parse_num(s, n, &d)) {
        k |= K_NUM;
        if (int_text(s, n, true)) k |= K_INT;
        if ((s[0] == '0' || s[0] == '1') && int_text(s, n, false) && (n == 1 || s[1] == '.')) k |= K_BOOL;
    }
    if ((n == 4 && !strncasecmp(s, "true", 4)) || (n == 5 && !strncasecmp(s, "false", 5)) ||
        (n == 1 && strchr("tTfF", *s)))
        k |= K_BOOL;
    return k;
}

/* Kinds of a number (as SystemDS's isType(double)). */
static int num_kinds(double v)
{
    if (v == 0 || v == 1) return K_BOOL | K_INT | K_NUM;
    if (v == floor(v) && fabs(v) < 9.2e18) return K_INT | K_NUM;
    return K_NUM;
}

static int b_detect_schema(const FB *f, Value *out, BrErr *e)
{
    FB *r = fb_new(1, f->cols, NULL, e);
    if (!r) return e->code;
    for (int64_t j = 0; j < f->cols; j++) {
        const FbCol *c = f->c[j];
        int all = K_BOOL | K_INT | K_NUM;
        bool any = false;
        for (int64_t i = 0; i < f->rows; i++) {
            int k;
            if (c->type == FB_STRING) {
                if (!c->s[i] || !c->s[i][0]) continue;
                k = text_kinds(c->s[i]);
            } else if (c->type == FB_FP64) {
                if (isnan(c->d[i])) continue;
                k = num_kinds(c->d[i]);
            } else if (c->type == FB_INT64) {
                k = num_kinds((double)c->i[i]);
            } else {
                k = K_BOOL;
            }
            any = true;
            all &= k;
        }
        const char *t = !any ? fb_type_name(c->type == FB_STRING ? FB_STRING : c->type)
                      : (all & K_BOOL) ? "BOOLEAN" : (all & K_INT) ? "INT64" : (all & K_NUM) ? "FP64" : "STRING";
        if (fb_set_text(r, 0, j, t, strlen(t), e) || (f->named && fb_set_name(r, j, f->names[j], e))) {
            fb_release(r);
            return e->code;
        }
    }
    *out = val_frame(r);
    return 0;
}

static int b_bind(const Instr *h, Value *va, int nv, Value *out, BrErr *e)
{
    const FB **fs = calloc((size_t)nv + 1, sizeof(FB *));
    FB **tmp = calloc((size_t)nv + 1, sizeof(FB *));
    int rc = fs && tmp ? 0 : br_err(e, BR_ENOMEM, "out of memory");
    for (int i = 0; i < nv && !rc; i++)
        if (!(fs[i] = ap_as_frame(&va[i], h->bi == BI_CBIND ? "cbind" : "rbind", &tmp[i], e))) rc = e->code;
    if (!rc) rc = ret_fb(h->bi == BI_CBIND ? fb_cbind(nv, fs, e) : fb_rbind(nv, fs, e), out, e);
    for (int i = 0; tmp && i < nv; i++) fb_release(tmp[i]);
    free(fs);
    free(tmp);
    return rc;
}

/* The spec argument: a string (SystemDS also reads it from a file first). */
static const char *spec_arg(const Value *v, BrErr *e)
{
    if (v->kind == V_STRING) return v->s->s;
    br_err(e, BR_EARG, "spec must be a JSON string, not a %s", val_kind_name(v->kind));
    return NULL;
}

static const FB *frame_arg(const Value *v, const char *what, BrErr *e)
{
    if (v->kind == V_FRAME) return v->f;
    br_err(e, BR_EARG, "%s must be a frame, not a %s", what, val_kind_name(v->kind));
    return NULL;
}

/* [X2, meta] = compress(X, d): SystemDS's binned compression
 * (CLALibBinCompress): transformencode of X with d[i] equi-width bins for
 * column i (d's cells in row-major order; columns past d's cells are
 * passed through, cells past X's columns ignored), the binned matrix
 * compressed as compress(X) does (a matrix X; a frame's result is left
 * as it is, as in SystemDS) and the bins' metadata frame. */
static int b_compress_bins(Value *a, Value *out, BrErr *e)
{
    if (a[0].kind != V_MATRIX && a[0].kind != V_FRAME)
        return br_err(e, BR_EARG, "compress: X must be a matrix or a frame, not a %s", val_kind_name(a[0].kind));
    if (a[1].kind != V_MATRIX)
        return br_err(e, BR_EARG, "compress: the bins d must be a matrix, not a %s", val_kind_name(a[1].kind));
    const MB *d = a[1].m;
    int64_t nd = d->rows * d->cols;
    size_t cap = 32 + (size_t)nd * 64;
    char *spec = br_malloc(cap);
    if (!spec) return br_err(e, BR_ENOMEM, "out of memory");
    size_t at = (size_t)snprintf(spec, cap, "{\"ids\": true, \"bin\": [");
    for (int64_t k = 0; k < nd; k++) {
        double v = mb_get(d, k / d->cols, k % d->cols);
        if (!(v >= 1 && v <= 1e9)) {
            free(spec);
            return br_err(e, BR_EARG, "compress: the number of bins of column %lld must be at least 1, got %g",
                          (long long)k + 1, v);
        }
        at += (size_t)snprintf(spec + at, cap - at, "%s{\"id\": %lld, \"method\": \"equi-width\", \"numbins\": %lld}",
                               k ? ", " : "", (long long)k + 1, (long long)v);
    }
    snprintf(spec + at, cap - at, "]}");
    FB *conv = a[0].kind == V_MATRIX ? fb_from_mb(a[0].m, e) : NULL;
    const FB *f = a[0].kind == V_MATRIX ? conv : a[0].f;
    MB *x = NULL;
    FB *m = NULL;
    int rc = f ? tf_encode(f, spec, &x, &m, NULL, e) : e->code;
    free(spec);
    fb_release(conv);
    if (rc) return rc;
    Value xv = val_matrix(x);
    xv.cla_lazy = a[0].kind == V_MATRIX;   /* compressed at a loop that repays it (runtime/cla_rt.c) */
    Value l = val_list_new(2);
    if (l.kind != V_LIST || list_append(l.l, xv, NULL, e) || list_append(l.l, val_frame(m), NULL, e)) {
        val_release(&l);
        return e->code ? e->code : br_err(e, BR_ENOMEM, "out of memory");
    }
    *out = l;
    return 0;
}

/* A transform spec's udf: each listed column's encoded columns of *x
 * replaced by the DML function's first output over them (eval's binding:
 * the columns as its first argument), as SystemDS's ColumnEncoderUDF.
 * Releases u. */
static int apply_udf(Rt *rt, Frame *fr, const Instr *h, const char *who, TfUdf *u, MB **x, BrErr *e)
{
    int rc = 0;
    Func *fn = NULL;
    if (u->name) {
        fn = lang_find_func(rt->prog->ast, bi_ns_of(rt, h->span), u->name);
        if (!fn) fn = lang_find_func(rt->prog->ast, "", u->name);
        if (!fn) rc = br_err(e, BR_EARG, "%s: udf: unknown function '%s'", who, u->name);
        else if (fn->nin < 1 || fn->nout < 1)
            rc = br_err(e, BR_EARG, "%s: udf: function '%s' must take and return a matrix", who, u->name);
    }
    for (int64_t k = 0; k < u->n && !rc; k++) {
        int64_t c0 = u->start[k], c1 = c0 + u->width[k];
        MB *col = k_slice(*x, 0, (*x)->rows, c0, c1, e);
        if (!col) { rc = e->code; break; }
        Value *bound = calloc((size_t)fn->nin + 1, sizeof(Value));
        if (!bound) { mb_release(col); rc = br_err(e, BR_ENOMEM, "out of memory"); break; }
        bound[0] = val_matrix(col);
        Value res = val_none();
        rc = bi_call_defaults(rt, fr, fn, bound, who, "udf ", &res, e);
        for (int j = 0; j < fn->nin; j++) val_release(&bound[j]);
        free(bound);
        if (rc) break;
        const Value *r0 = res.l->n > 0 ? &res.l->items[0] : NULL;
        if (!r0 || r0->kind != V_MATRIX || r0->m->rows != (*x)->rows || r0->m->cols != c1 - c0) {
            rc = br_err(e, BR_EDIM, "%s: udf: '%s' must return a %lldx%lld matrix for column %lld", who, u->name,
                        (long long)(*x)->rows, (long long)(c1 - c0), (long long)c0 + 1);
        } else {
            MB *y = k_lix(*x, 0, (*x)->rows, c0, c1, r0->m, e);
            if (!y) rc = e->code;
            else { mb_release(*x); *x = y; }
        }
        val_release(&res);
    }
    tf_udf_free(u);
    return rc;
}

static int b_transform(Rt *rt, Frame *fr, const Instr *h, Value *a, Value *out, BrErr *e)
{
    const char *spec = spec_arg(&a[1], e);
    if (!spec) return e->code;
    switch (h->bi) {
    case BI_TFENCODE: {
        const FB *f = frame_arg(&a[0], "transformencode: target", e);
        MB *x;
        FB *m;
        TfUdf u;
        if (!f || tf_encode(f, spec, &x, &m, &u, e)) return e->code;
        if (apply_udf(rt, fr, h, "transformencode", &u, &x, e)) {
            mb_release(x);
            fb_release(m);
            return e->code;
        }
        Value l = val_list_new(2);
        list_append(l.l, val_matrix(x), NULL, e);
        list_append(l.l, val_frame(m), NULL, e);
        *out = l;
        return 0;
    }
    case BI_TFAPPLY: {
        const FB *f = frame_arg(&a[0], "transformapply: target", e);
        const FB *m = f ? frame_arg(&a[2], "transformapply: meta", e) : NULL;
        if (!m) return e->code;
        if (a[3].kind != V_NONE && a[3].kind != V_MATRIX)
            return br_err(e, BR_EARG, "transformapply: embedding must be a matrix, not a %s", val_kind_name(a[3].kind));
        TfUdf u;
        MB *x = tf_apply(f, spec, m, a[3].kind == V_MATRIX ? a[3].m : NULL, &u, e);
        if (x && apply_udf(rt, fr, h, "transformapply", &u, &x, e)) { mb_release(x); x = NULL; }
        return bi_ret_mb(x, out, e);
    }
    case BI_TFDECODE: {
        const FB *m = frame_arg(&a[2], "transformdecode: meta", e);
        if (!m) return e->code;
        if (a[0].kind != V_MATRIX)
            return br_err(e, BR_EARG, "transformdecode: target must be a matrix, not a %s", val_kind_name(a[0].kind));
        return ret_fb(tf_decode(a[0].m, spec, m, e), out, e);
    }
    case BI_GETCATMASK: {
        const FB *m = frame_arg(&a[0], "getCategoricalMask: target", e);
        if (!m) return e->code;
        return bi_ret_mb(tf_catmask(m, spec, e), out, e);
    }
    default: {
        const FB *m = frame_arg(&a[0], "transformcolmap: target", e);
        if (!m) return e->code;
        return bi_ret_mb(tf_colmap(m, spec, e), out, e);
    }
    }
}

/* ---- dispatch ---- */

int bi_frame(Rt *rt, Frame *fr, const Instr *h, Value *a, Value *out, BrErr *e)
{
    (void)fr;
    int nv = h->nvar;
    Value *va = a + (h->nin - nv);
    switch (h->bi) {
    case BI_ASFRAME: {
        const Value *x = &a[0];
        /* a one-element list (L["name"], L[i]) unwraps, as as.matrix does */
        if (x->kind == V_LIST && x->l->n == 1) x = &x->l->items[0];
        if (x->kind == V_FRAME) { *out = val_retain(*x); return 0; }
        FB *tmp;
        if (!ap_as_frame(x, "as.frame", &tmp, e)) return e->code;
        *out = val_frame(tmp);
        return 0;
    }
    case BI_FRAME: return b_frame(a, out, e);
    case BI_DETECTSCHEMA: {
        const FB *f = frame_arg(&a[0], "detectSchema: target", e);
        return f ? b_detect_schema(f, out, e) : e->code;
    }
    case BI_APPLYSCHEMA: {
        const FB *f = frame_arg(&a[0], "applySchema: target", e);
        FbType *types;
        if (!f || resolve_schema(&a[1], f->cols, &types, e)) return e->code;
        FB *r = fb_cast(f, types, e);
        free(types);
        return ret_fb(r, out, e);
    }
    case BI_COMPRESSBIN: return b_compress_bins(a, out, e);
    case BI_TFENCODE: case BI_TFAPPLY: case BI_TFDECODE: case BI_TFCOLMAP: case BI_GETCATMASK:
        return b_transform(rt, fr, h, a, out, e);
    case BI_TFMETA: {
        if (a[1].kind != V_STRING || a[2].kind != V_STRING)
            return br_err(e, BR_EARG, "transformmeta: transformPath and sep must be strings");
        const char *spec = spec_arg(&a[0], e);
        return spec ? ret_fb(tf_meta(spec, a[1].s->s, a[2].s->s, e), out, e) : e->code;
    }
    case BI_MAP: return bi_frame_map(a, out, e);
    case BI_GETCOLNAMES: case BI_SETCOLNAMES: case BI_DROPINVALIDTYPE: case BI_DROPINVALIDLENGTH:
    case BI_VALUESWAP: case BI_TOKENIZE: case BI_FREPLICATE:
        return bi_frame_str(h, a, out, e);
    case BI_COLNAMES: { /* the names as a one-row frame of strings */
        const FB *f = frame_arg(&a[0], "colnames: target", e);
        FB *r = f ? fb_new(1, f->cols, NULL, e) : NULL;
        for (int64_t j = 0; r && j < f->cols; j++)
            if (fb_set_text(r, 0, j, f->names[j], strlen(f->names[j]), e)) { fb_release(r); r = NULL; }
        return ret_fb(r, out, e);
    }
    default: break;
    }
    /* generic builtins, when an argument is a frame */
    bool any = false;
    for (int k = 0; k < h->nin; k++) any |= a[k].kind == V_FRAME;
    if (!any) return BI_NOT_MINE;
    const FB *f = a[0].kind == V_FRAME ? a[0].f : NULL;
    switch (h->bi) {
    case BI_NROW: case BI_NCOL: case BI_LENGTH:
        if (!f) break;
        *out = val_int(h->bi == BI_NROW ? f->rows : h->bi == BI_NCOL ? f->cols : f->rows * f->cols);
        return 0;
    case BI_TYPEOF:
        if (!f) break;
        *out = val_string("Frame");
        return 0;
    case BI_ASMATRIX: return f ? bi_ret_mb(fb_to_mb(f, e), out, e) : BI_NOT_MINE;
    case BI_ASSCALAR: return f ? b_as_scalar(f, out, e) : BI_NOT_MINE;
    case BI_RMEMPTY: return f ? b_rmempty(a, out, e) : BI_NOT_MINE;
    case BI_REPLACE: return f ? b_replace(a, out, e) : BI_NOT_MINE;
    case BI_CBIND: case BI_RBIND:   /* append(L, frame) is the list's */
        return nv >= 1 && va[0].kind == V_LIST ? BI_NOT_MINE : b_bind(h, va, nv, out, e);
    case BI_PRINT: return nv == 1 ? b_print(rt, &va[0], e) : BI_NOT_MINE;
    case BI_TOSTRING: return f ? b_tostring(a, out, e) : BI_NOT_MINE;
    case BI_WRITE: return f ? b_write(a, e) : BI_NOT_MINE;
    default: break;
    }
    return BI_NOT_MINE;
}

