/* framestr.c: native frame/string builtins of SystemDS that DML scripts
 * cannot express well: getColNames, setColNames, dropInvalidType,
 * dropInvalidLength, valueSwap, tokenize and freplicate. Semantics where SystemDS's
 * documentation is silent are listed in docs/DESIGN.md ("Frame and string
 * builtins"). Every builtin returns a new frame; inputs are never changed. */
#include "framestr.h"
#include "transform.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <regex.h>

/* From builtins/jleval.c (jlint.h clashes with ops.h): a Java regex
 * compiled as a POSIX ERE; its first member is the regex_t. */
typedef struct JRe JRe;
JRe *jl_re_compile(const char *java, bool full, BrErr *e);
void jl_re_free(JRe *r);

static size_t u8_seq(unsigned char c) { return c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4; }

/* Code point at s (n bytes left) and its byte length *len (a truncated or
 * invalid sequence reads as its first byte). */
static uint32_t u8_get(const char *s, int64_t n, int64_t *len)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t k = u8_seq(u[0]);
    if ((int64_t)k > n || k == 1) { *len = 1; return u[0]; }
    uint32_t c = u[0] & (0xFF >> (k + 1));
    for (size_t i = 1; i < k; i++) c = (c << 6) | (u[i] & 0x3F);
    *len = (int64_t)k;
    return c;
}

static int64_t u8_len(const char *s, int64_t n)
{
    int64_t c = 0;
    for (int64_t i = 0; i < n; c++) { int64_t l; u8_get(s + i, n - i, &l); i += l; }
    return c;
}

/* Byte offset of code point k of s (n bytes). */
static int64_t u8_at(const char *s, int64_t n, int64_t k)
{
    int64_t i = 0;
    for (; i < n && k > 0; k--) { int64_t l; u8_get(s + i, n - i, &l); i += l; }
    return i;
}

static bool is_space(uint32_t c) { return c == ' ' || (c >= 9 && c <= 13) || (c >= 0x1C && c <= 0x1F); }

static int ret_fb(FB *f, Value *out, BrErr *e)
{
    if (!f) return e->code ? e->code : br_err(e, BR_EFAIL, "frame operation failed");
    *out = val_frame(f);
    return 0;
}

static const FB *fr_arg(const Value *v, const char *fn, const char *what, BrErr *e)
{
    if (v->kind == V_FRAME) return v->f;
    br_err(e, BR_EARG, "%s: %s must be a frame, not a %s", fn, what, val_kind_name(v->kind));
    return NULL;
}

/* A copy of f whose columns are private (refs 1), ready for writes. */
static FB *fb_copy(const FB *f, BrErr *e)
{
    FB *r = fb_slice(f, 0, f->rows, 0, f->cols, e);
    if (!r) return NULL;
    r->named = f->named;
    for (int64_t j = 0; j < r->cols; j++)
        if (!fb_col_mut(r, j, e)) { fb_release(r); return NULL; }
    return r;
}

/* The per-column value types of a schema frame (one row of type names, one
 * per column of f), into types[f->cols] (caller frees). */
static int schema_types(const FB *s, const FB *f, const char *fn, FbType **types, BrErr *e)
{
    if (s->rows != 1 || s->cols != f->cols)
        return br_err(e, BR_EDIM, "%s: dimension mismatch: the schema must be a 1x%lld frame of type names, got %lldx%lld",
                      fn, (long long)f->cols, (long long)s->rows, (long long)s->cols);
    FbType *t = br_malloc(sizeof *t * (size_t)(f->cols ? f->cols : 1));
    if (!t) return br_err(e, BR_ENOMEM, "%s: out of memory", fn);
    for (int64_t j = 0; j < f->cols; j++) {
        char buf[32];
        const char *n = fb_cell_text(s, 0, j, buf);
        if (!n || !fb_type_parse(n, strlen(n), &t[j])) {
            free(t);
            return br_err(e, BR_EARG, "%s: unknown value type '%s' in the schema (column %lld)", fn, n ? n : "null",
                          (long long)j + 1);
        }
    }
    *types = t;
    return 0;
}

/* Whether text s fits value type t: any text is a STRING, FP64 takes any
 * number, INT64 an optionally signed run of digits, BOOLEAN true/false
 * (any case) or 0/1. */
static bool fits(const char *s, FbType t)
{
    size_t n = strlen(s);
    switch (t) {
    case FB_STRING: return true;
    case FB_FP64: { double d; return fb_parse_num(s, n, &d); }
    case FB_INT64: {
        size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
        if (i == n) return false;
        for (; i < n; i++)
            if (!isdigit((unsigned char)s[i])) return false;
        return true;
    }
    case FB_BOOL:
        return !strcasecmp(s, "true") || !strcasecmp(s, "false") || !strcmp(s, "0") || !strcmp(s, "1");
    }
    return false;
}

/* dropInvalidType(F, schema): cells of string columns whose text does not
 * fit the schema's type become missing. */
static int b_drop_invalid_type(Value *a, Value *out, BrErr *e)
{
    const char *fn = "dropInvalidType";
    const FB *f = fr_arg(&a[0], fn, "target", e);
    const FB *s = f ? fr_arg(&a[1], fn, "schema", e) : NULL;
    FbType *t;
    if (!s || schema_types(s, f, fn, &t, e)) return e->code;
    FB *r = fb_copy(f, e);
    for (int64_t j = 0; r && j < r->cols; j++) {
        if (r->c[j]->type != FB_STRING) continue;
        for (int64_t i = 0; i < r->rows; i++) {
            char *v = r->c[j]->s[i];
            if (v && !fits(v, t[j])) { free(v); r->c[j]->s[i] = NULL; }
        }
    }
    free(t);
    return ret_fb(r, out, e);
}

static int64_t cp_len(const char *s) { return u8_len(s, (int64_t)strlen(s)); }

/* dropInvalidLength(F, mask): with mask a 1 x ncol matrix of maximum
 * lengths (characters), longer cells become missing; columns whose entry
 * is 0 or negative are not checked. */
static int b_drop_invalid_length(Value *a, Value *out, BrErr *e)
{
    const char *fn = "dropInvalidLength";
    const FB *f = fr_arg(&a[0], fn, "target", e);
    if (!f) return e->code;
    if (a[1].kind != V_MATRIX) return br_err(e, BR_EARG, "%s: mask must be a matrix, not a %s", fn, val_kind_name(a[1].kind));
    const MB *m = a[1].m;
    if (m->rows != 1 || m->cols != f->cols)
        return br_err(e, BR_EDIM, "%s: dimension mismatch: mask must be 1x%lld, got %lldx%lld", fn, (long long)f->cols,
                      (long long)m->rows, (long long)m->cols);
    FB *r = fb_copy(f, e);
    for (int64_t j = 0; r && j < r->cols; j++) {
        double lim = mb_get(m, 0, j);
        if (!(lim > 0)) continue;
        for (int64_t i = 0; i < r->rows; i++) {
            char buf[32];
            const char *v = fb_cell_text(r, i, j, buf);
            if (!v || fb_is_missing(r, i, j) || (double)cp_len(v) <= lim) continue;
            if (fb_set_text(r, i, j, NULL, 0, e)) { fb_release(r); r = NULL; break; }
        }
    }
    return ret_fb(r, out, e);
}

/* fits() for valueSwap: a number does not belong into a STRING column. */
static bool fits_swap(const char *s, FbType t)
{
    double d;
    return t == FB_STRING ? !fb_parse_num(s, strlen(s), &d) : fits(s, t);
}

/* valueSwap(X, schema): in each row, two cells that each do not fit their
 * own column's schema type but fit each other's are exchanged (the first
 * such partner to the right, left to right). For this, numbers do not fit
 * STRING columns. */
static int b_value_swap(Value *a, Value *out, BrErr *e)
{
    const char *fn = "valueSwap";
    const FB *f = fr_arg(&a[0], fn, "target", e);
    const FB *s = f ? fr_arg(&a[1], fn, "schema", e) : NULL;
    FbType *t;
    if (!s || schema_types(s, f, fn, &t, e)) return e->code;
    FB *r = fb_copy(f, e);
    for (int64_t i = 0; r && i < r->rows; i++) {
        for (int64_t j = 0; j < r->cols; j++) {
            if (r->c[j]->type != FB_STRING || !r->c[j]->s[i] || fits_swap(r->c[j]->s[i], t[j])) continue;
            for (int64_t k = j + 1; k < r->cols; k++) {
                if (r->c[k]->type != FB_STRING || !r->c[k]->s[i]) continue;
                char *x = r->c[j]->s[i], *y = r->c[k]->s[i];
                if (!fits_swap(y, t[k]) && fits_swap(x, t[k]) && fits_swap(y, t[j])) {
                    r->c[j]->s[i] = y;
                    r->c[k]->s[i] = x;
                    break;
                }
            }
        }
    }
    free(t);
    return ret_fb(r, out, e);
}

/* setColNames(F, names): names a frame (or a string for a one-column
 * frame) of exactly ncol cells. */
static int b_set_colnames(Value *a, Value *out, BrErr *e)
{
    const char *fn = "setColNames";
    const FB *f = fr_arg(&a[0], fn, "target", e);
    if (!f) return e->code;
    if (a[1].kind == V_STRING) {
        if (f->cols != 1)
            return br_err(e, BR_EDIM, "%s: dimension mismatch: one name given for %lld columns", fn, (long long)f->cols);
        FB *r = fb_slice(f, 0, f->rows, 0, f->cols, e);
        if (r && fb_set_name(r, 0, a[1].s->s, e)) { fb_release(r); r = NULL; }
        return ret_fb(r, out, e);
    }
    const FB *n = fr_arg(&a[1], fn, "names", e);
    if (!n) return e->code;
    if (n->rows * n->cols != f->cols || (n->rows != 1 && n->cols != 1))
        return br_err(e, BR_EDIM, "%s: dimension mismatch: names must be a 1x%lld frame, got %lldx%lld", fn,
                      (long long)f->cols, (long long)n->rows, (long long)n->cols);
    FB *r = fb_slice(f, 0, f->rows, 0, f->cols, e);
    for (int64_t j = 0; r && j < f->cols; j++) {
        char buf[32];
        const char *s = n->rows == 1 ? fb_cell_text(n, 0, j, buf) : fb_cell_text(n, j, 0, buf);
        if (!s) { fb_release(r); return br_err(e, BR_EARG, "%s: the name of column %lld is missing", fn, (long long)j + 1); }
        if (fb_set_name(r, j, s, e)) { fb_release(r); r = NULL; }
    }
    return ret_fb(r, out, e);
}

/* ---- tokenize ---- */

typedef struct { char **t; int64_t n, cap; } Toks;

static int tok_push(Toks *k, const char *s, size_t n, BrErr *e)
{
    if (k->n == k->cap) {
        int64_t c = k->cap ? 2 * k->cap : 16;
        char **p = realloc(k->t, sizeof *p * (size_t)c);
        if (!p) return br_err(e, BR_ENOMEM, "tokenize: out of memory");
        k->t = p;
        k->cap = c;
    }
    char *c = br_malloc(n + 1);
    if (!c) return br_err(e, BR_ENOMEM, "tokenize: out of memory");
    memcpy(c, s, n);
    c[n] = 0;
    k->t[k->n++] = c;
    return 0;
}

static void toks_free(Toks *k)
{
    for (int64_t i = 0; i < k->n; i++) free(k->t[i]);
    free(k->t);
    k->t = NULL;
    k->n = k->cap = 0;
}

typedef struct {
    int64_t tcol;            /* 0-based text column */
    int64_t *ids; int nids;  /* 0-based id columns */
    bool ngram, ngram_token; /* algo ngram; ngram_type "token" */
    int64_t gmin, gmax;
    JRe *re;                 /* algo_params.regex (NULL: whitespace runs) */
    int out;                 /* 0 count, 1 position, 2 hash */
    bool sort_alpha, wide;
    int64_t nfeat;
    int64_t maxtok;          /* < 0: no limit */
} Tk;

/* The words of text s: runs of whitespace (or matches of the regex)
 * separate them; empty words are dropped. */
static int split_words(const Tk *tk, const char *s, Toks *w, BrErr *e)
{
    size_t n = strlen(s);
    if (!tk->re) {
        size_t i = 0;
        while (i < n) {
            int64_t l;
            while (i < n && is_space(u8_get(s + i, (int64_t)(n - i), &l))) i += (size_t)l;
            size_t st = i;
            while (i < n && !is_space(u8_get(s + i, (int64_t)(n - i), &l))) i += (size_t)l;
            if (i > st && tok_push(w, s + st, i - st, e)) return e->code;
        }
        return 0;
    }
    size_t i = 0;
    while (i <= n) {
        regmatch_t m;
        int rc = regexec((regex_t *)tk->re, s + i, 1, &m, i ? REG_NOTBOL : 0);
        if (rc || m.rm_eo == 0) {   /* no separator left (or an empty match): the rest is one word */
            if (n > i && tok_push(w, s + i, n - i, e)) return e->code;
            break;
        }
        if (m.rm_so > 0 && tok_push(w, s + i, (size_t)m.rm_so, e)) return e->code;
        i += (size_t)m.rm_eo;
    }
    return 0;
}

/* The tokens of one document: its words, or their n-grams. */
static int doc_tokens(const Tk *tk, const char *s, Toks *out, BrErr *e)
{
    Toks w = {0};
    if (split_words(tk, s, &w, e)) { toks_free(&w); return e->code; }
    if (!tk->ngram) { *out = w; return 0; }
    int rc = 0;
    if (!tk->ngram_token) {
        for (int64_t g = tk->gmin; g <= tk->gmax && !rc; g++)
            for (int64_t p = 0; p + g <= w.n && !rc; p++) {
                size_t len = 0;
                for (int64_t q = p; q < p + g; q++) len += strlen(w.t[q]) + 1;
                char *b = br_malloc(len);
                if (!b) { rc = br_err(e, BR_ENOMEM, "tokenize: out of memory"); break; }
                size_t o = 0;
                for (int64_t q = p; q < p + g; q++) {
                    if (q > p) b[o++] = ' ';
                    size_t l = strlen(w.t[q]);
                    memcpy(b + o, w.t[q], l);
                    o += l;
                }
                rc = tok_push(out, b, o, e);
                free(b);
            }
    } else {
        for (int64_t q = 0; q < w.n && !rc; q++) {
            const char *t = w.t[q];
            int64_t bl = (int64_t)strlen(t), cl = u8_len(t, bl);
            for (int64_t g = tk->gmin; g <= tk->gmax && !rc; g++)
                for (int64_t p = 0; p + g <= cl && !rc; p++) {
                    int64_t o0 = u8_at(t, bl, p), o1 = u8_at(t, bl, p + g);
                    rc = tok_push(out, t + o0, (size_t)(o1 - o0), e);
                }
        }
    }
    toks_free(&w);
    return rc;
}

int32_t fs_java_hash(const char *s)
{
    uint32_t h = 0;
    int64_t n = (int64_t)strlen(s), i = 0;
    while (i < n) {
        int64_t l;
        uint32_t c = u8_get(s + i, n - i, &l);
        i += l > 0 ? l : 1;
        if (c >= 0x10000) {
            c -= 0x10000;
            h = 31 * h + (0xD800 + (c >> 10));
            h = 31 * h + (0xDC00 + (c & 0x3FF));
        } else {
            h = 31 * h + c;
        }
    }
    return (int32_t)h;
}

static int json_int(const cJSON *o, const char *key, int64_t def, int64_t *v, BrErr *e)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!it) { *v = def; return 0; }
    if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble))
        return br_err(e, BR_EARG, "tokenize: spec field '%s' must be an integer", key);
    *v = (int64_t)it->valuedouble;
    return 0;
}

static int json_bool(const cJSON *o, const char *key, bool *v, BrErr *e)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!it) return 0;
    if (!cJSON_IsBool(it)) return br_err(e, BR_EARG, "tokenize: spec field '%s' must be true or false", key);
    *v = cJSON_IsTrue(it);
    return 0;
}

static const char *json_str(const cJSON *o, const char *key, bool need, BrErr *e)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!it) {
        if (need) br_err(e, BR_EARG, "tokenize: spec misses the field '%s'", key);
        return NULL;
    }
    if (!cJSON_IsString(it)) { br_err(e, BR_EARG, "tokenize: spec field '%s' must be a string", key); return NULL; }
    return it->valuestring;
}

/* Parses the tokenize spec against frame f into *tk. */
static int parse_spec(const char *spec, const FB *f, Tk *tk, BrErr *e)
{
    char *js = tf_lenient_json(spec);   /* read as SystemDS's parser reads it */
    if (!js) return br_err(e, BR_ENOMEM, "out of memory");
    cJSON *j = cJSON_Parse(js);
    free(js);
    if (!j || !cJSON_IsObject(j)) {
        cJSON_Delete(j);
        return br_err(e, BR_EARG, "tokenize: spec is not a JSON object: %.60s", spec);
    }
    int rc = 0;
    const char *algo = json_str(j, "algo", true, e), *o = algo ? json_str(j, "out", true, e) : NULL;
    if (!o) { rc = e->code; goto done; }
    if (!strcmp(algo, "ngram")) tk->ngram = true;
    /* "split" is SystemDS's name (TokenizerFactory); "whitespace" braid's
     * earlier one, kept */
    else if (strcmp(algo, "split") && strcmp(algo, "whitespace")) {
        rc = br_err(e, BR_EARG, "tokenize: unknown algo '%s' (valid: split (alias whitespace), ngram)", algo);
        goto done;
    }
    if (!strcmp(o, "count")) tk->out = 0;
    else if (!strcmp(o, "position")) tk->out = 1;
    else if (!strcmp(o, "hash")) tk->out = 2;
    else { rc = br_err(e, BR_EARG, "tokenize: unknown out '%s' (valid: count, position, hash)", o); goto done; }
    int64_t tc;
    if ((rc = json_int(j, "tokenize_col", 0, &tc, e))) goto done;
    if (!cJSON_GetObjectItemCaseSensitive(j, "tokenize_col")) { rc = br_err(e, BR_EARG, "tokenize: spec misses the field 'tokenize_col'"); goto done; }
    if (tc < 1 || tc > f->cols) { rc = br_err(e, BR_EINDEX, "tokenize: tokenize_col %lld is out of bounds: index must be in 1..%lld", (long long)tc, (long long)f->cols); goto done; }
    tk->tcol = tc - 1;
    const cJSON *ids = cJSON_GetObjectItemCaseSensitive(j, "id_cols");
    if (ids && !cJSON_IsArray(ids)) { rc = br_err(e, BR_EARG, "tokenize: spec field 'id_cols' must be an array of column ids"); goto done; }
    int ni = ids ? cJSON_GetArraySize(ids) : 0;
    tk->ids = br_malloc(sizeof(int64_t) * (size_t)(ni + 1));
    if (!tk->ids) { rc = br_err(e, BR_ENOMEM, "tokenize: out of memory"); goto done; }
    for (int k = 0; k < ni; k++) {
        const cJSON *it = cJSON_GetArrayItem(ids, k);
        if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble)) { rc = br_err(e, BR_EARG, "tokenize: id_cols must hold integer column ids"); goto done; }
        if (it->valuedouble < 1 || it->valuedouble > (double)f->cols) { rc = br_err(e, BR_EINDEX, "tokenize: id column %g is out of bounds: index must be in 1..%lld", it->valuedouble, (long long)f->cols); goto done; }
        tk->ids[tk->nids++] = (int64_t)it->valuedouble - 1;
    }
    if ((rc = json_bool(j, "format_wide", &tk->wide, e))) goto done;
    const cJSON *ap = cJSON_GetObjectItemCaseSensitive(j, "algo_params");
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(j, "out_params");
    if ((ap && !cJSON_IsObject(ap)) || (op && !cJSON_IsObject(op))) { rc = br_err(e, BR_EARG, "tokenize: algo_params and out_params must be JSON objects"); goto done; }
    if (ap) {
        const char *re = json_str(ap, "regex", false, e);
        if (e->code) { rc = e->code; goto done; }
        if (re && strcmp(re, "\\s+") && !(tk->re = jl_re_compile(re, false, e))) { rc = e->code; goto done; }
        if (tk->ngram) {
            if ((rc = json_int(ap, "min_gram", 1, &tk->gmin, e)) || (rc = json_int(ap, "max_gram", 2, &tk->gmax, e))) goto done;
            const char *nt = json_str(ap, "ngram_type", false, e);
            if (e->code) { rc = e->code; goto done; }
            if (nt && !strcasecmp(nt, "token")) tk->ngram_token = true;
            else if (nt && strcasecmp(nt, "document")) { rc = br_err(e, BR_EARG, "tokenize: invalid ngram_type '%s' (valid: document, token)", nt); goto done; }
        }
    } else if (tk->ngram) {
        tk->gmin = 1;
        tk->gmax = 2;
    }
    if (tk->ngram && (tk->gmin < 1 || tk->gmax < tk->gmin)) { rc = br_err(e, BR_EARG, "tokenize: need 1 <= min_gram <= max_gram, got %lld and %lld", (long long)tk->gmin, (long long)tk->gmax); goto done; }
    if (op) {
        if ((rc = json_bool(op, "sort_alpha", &tk->sort_alpha, e))) goto done;
        if ((rc = json_int(op, "num_features", 0, &tk->nfeat, e))) goto done;
    }
    if (tk->out == 2 && tk->nfeat < 1) { rc = br_err(e, BR_EARG, "tokenize: out=hash needs out_params.num_features >= 1"); goto done; }
    if (tk->out == 0 && tk->wide) { rc = br_err(e, BR_EARG, "tokenize: format_wide is not supported with out=count (use position or hash)"); goto done; }
done:
    cJSON_Delete(j);
    return rc;
}

/* Output column types: the id columns' own types, then those of out. */
static FB *new_out(const FB *f, const Tk *tk, int64_t rows, int64_t extra, const FbType *xt, BrErr *e)
{
    int64_t nc = tk->nids + extra;
    FbType *t = br_malloc(sizeof *t * (size_t)(nc ? nc : 1));
    if (!t) { br_err(e, BR_ENOMEM, "tokenize: out of memory"); return NULL; }
    for (int k = 0; k < tk->nids; k++) t[k] = f->c[tk->ids[k]]->type;
    for (int64_t k = 0; k < extra; k++) t[tk->nids + k] = xt[k < 2 ? k : 1];
    FB *r = fb_new(rows, nc, t, e);
    free(t);
    return r;
}

static int put_ids(FB *r, int64_t ro, const FB *f, const Tk *tk, int64_t i, BrErr *e)
{
    for (int k = 0; k < tk->nids; k++) {
        char buf[32];
        const char *s = fb_cell_text(f, i, tk->ids[k], buf);
        if (fb_is_missing(f, i, tk->ids[k])) s = NULL;
        if (fb_set_text(r, ro, k, s, s ? strlen(s) : 0, e)) return e->code;
    }
    return 0;
}

static uint64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;   /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

typedef struct { char *t; int64_t c; } TokCount;

static int cmp_tc(const void *a, const void *b)
{
    return strcmp(((const TokCount *)a)->t, ((const TokCount *)b)->t);
}

/* Replaces the tokens of k by its distinct tokens in order of first
 * appearance (or code-unit order with alpha) and sets *cnt (malloc'd,
 * caller frees) to their counts. A hash table keeps it linear. */
static int distinct_counts(Toks *k, int64_t **cnt, bool alpha, BrErr *e)
{
    int64_t n = k->n, cap = 16;
    while (cap < 2 * n) cap *= 2;
    int64_t *slot = malloc(sizeof *slot * (size_t)cap);
    TokCount *u = br_malloc(sizeof *u * (size_t)(n ? n : 1));
    if (!slot || !u) { free(slot); free(u); return br_err(e, BR_ENOMEM, "tokenize: out of memory"); }
    for (int64_t i = 0; i < cap; i++) slot[i] = -1;
    int64_t m = 0;
    for (int64_t q = 0; q < n; q++) {
        uint64_t h = str_hash(k->t[q]) & (uint64_t)(cap - 1);
        while (slot[h] >= 0 && strcmp(u[slot[h]].t, k->t[q])) h = (h + 1) & (uint64_t)(cap - 1);
        if (slot[h] < 0) {
            slot[h] = m;
            u[m].t = k->t[q];
            u[m++].c = 1;
        } else {
            u[slot[h]].c++;
            free(k->t[q]);
        }
        k->t[q] = NULL;
    }
    free(slot);
    if (alpha && m > 1) qsort(u, (size_t)m, sizeof *u, cmp_tc);
    int64_t *c = br_malloc(sizeof *c * (size_t)(m ? m : 1));
    if (!c) {
        for (int64_t p = 0; p < m; p++) free(u[p].t);
        free(u);
        k->n = 0;
        return br_err(e, BR_ENOMEM, "tokenize: out of memory");
    }
    for (int64_t p = 0; p < m; p++) { k->t[p] = u[p].t; c[p] = u[p].c; }
    k->n = m;
    free(u);
    *cnt = c;
    return 0;
}

/* tokenize(target, spec, max_tokens): one document per row of target. */
static int b_tokenize(Value *a, Value *out, BrErr *e)
{
    const FB *f = fr_arg(&a[0], "tokenize", "target", e);
    if (!f) return e->code;
    if (a[1].kind != V_STRING) return br_err(e, BR_EARG, "tokenize: spec must be a JSON string, not a %s", val_kind_name(a[1].kind));
    Tk tk = {.maxtok = -1};
    if (bi_given(&a[2])) {
        double m;
        if (!val_is_numeric(&a[2])) return br_err(e, BR_EARG, "tokenize: max_tokens must be a number");
        if (bi_num(&a[2], "max_tokens", &m, e)) return e->code;
        if (!(m >= 0) || m != floor(m)) return br_err(e, BR_EARG, "tokenize: max_tokens must be a non-negative integer, got %g", m);
        tk.maxtok = (int64_t)m;
    }
    int rc = parse_spec(a[1].s->s, f, &tk, e);
    int64_t n = f->rows;
    Toks *d = rc ? NULL : calloc((size_t)(n ? n : 1), sizeof *d);
    int64_t **cnt = rc ? NULL : calloc((size_t)(n ? n : 1), sizeof *cnt);
    if (!rc && (!d || !cnt)) rc = br_err(e, BR_ENOMEM, "tokenize: out of memory");
    /* the documents are independent: tokenize them in parallel (the first
     * error, out of memory or a regex failure, wins) */
    int fail = 0;
    BrErr e1 = {0};
    int64_t work = 0;
    for (int64_t i = 0; !rc && i < n && work < BR_PAR_MIN; i++) {
        char buf[32];
        const char *s = fb_cell_text(f, i, tk.tcol, buf);
        work += s ? (int64_t)strlen(s) : 0;
    }
    #pragma omp parallel for schedule(dynamic, 64) num_threads(br_threads()) if (!rc && work >= BR_PAR_MIN)
    for (int64_t i = 0; i < n; i++) {
        if (rc || __atomic_load_n(&fail, __ATOMIC_RELAXED)) continue;
        char buf[32];
        const char *s = fb_cell_text(f, i, tk.tcol, buf);
        if (!s || fb_is_missing(f, i, tk.tcol)) continue;
        BrErr el = {0};
        int r1 = doc_tokens(&tk, s, &d[i], &el);
        if (!r1 && tk.maxtok >= 0 && d[i].n > tk.maxtok) {
            for (int64_t q = tk.maxtok; q < d[i].n; q++) free(d[i].t[q]);
            d[i].n = tk.maxtok;
        }
        if (!r1 && tk.out == 0) r1 = distinct_counts(&d[i], &cnt[i], tk.sort_alpha, &el);
        if (r1) {
            #pragma omp critical(framestr_err)
            {
                if (!fail) { fail = 1; e1 = el; }
            }
        }
    }
    if (!rc && fail) { *e = e1; rc = e->code ? e->code : BR_EFAIL; }
    int64_t total = 0, widest = 0;
    for (int64_t i = 0; !rc && i < n; i++) {
        total += d[i].n;
        if (d[i].n > widest) widest = d[i].n;
    }
    FB *r = NULL;
    if (!rc && tk.out == 0) {
        const FbType xt[2] = {FB_STRING, FB_INT64};
        r = new_out(f, &tk, total, 2, xt, e);
        int64_t ro = 0;
        for (int64_t i = 0; r && i < n && !rc; i++)
            for (int64_t p = 0; p < d[i].n && !rc; p++, ro++)
                if (put_ids(r, ro, f, &tk, i, e) || fb_set_text(r, ro, tk.nids, d[i].t[p], strlen(d[i].t[p]), e) ||
                    fb_set_num(r, ro, tk.nids + 1, (double)cnt[i][p], e))
                    rc = e->code;
    } else if (!rc && tk.out == 1 && !tk.wide) {
        const FbType xt[2] = {FB_INT64, FB_STRING};
        r = new_out(f, &tk, total, 2, xt, e);
        int64_t ro = 0;
        for (int64_t i = 0; r && i < n && !rc; i++)
            for (int64_t q = 0; q < d[i].n && !rc; q++, ro++)
                if (put_ids(r, ro, f, &tk, i, e) || fb_set_num(r, ro, tk.nids, (double)(q + 1), e) ||
                    fb_set_text(r, ro, tk.nids + 1, d[i].t[q], strlen(d[i].t[q]), e))
                    rc = e->code;
    } else if (!rc && tk.out == 1) {
        int64_t w = tk.maxtok >= 0 ? tk.maxtok : widest;
        const FbType xt[2] = {FB_STRING, FB_STRING};
        r = new_out(f, &tk, n, w, xt, e);
        for (int64_t i = 0; r && i < n && !rc; i++) {
            if (put_ids(r, i, f, &tk, i, e)) { rc = e->code; break; }
            for (int64_t q = 0; q < d[i].n && !rc; q++)
                if (fb_set_text(r, i, tk.nids + q, d[i].t[q], strlen(d[i].t[q]), e)) rc = e->code;
        }
    } else if (!rc) {   /* hash */
        int64_t nf = tk.nfeat;
        int64_t *cnt = calloc((size_t)nf, sizeof *cnt);
        if (!cnt) rc = br_err(e, BR_ENOMEM, "tokenize: out of memory");
        int64_t rows = tk.wide ? n : 0;
        if (!rc && !tk.wide) {   /* count the non-empty buckets first */
            for (int64_t i = 0; i < n; i++) {
                memset(cnt, 0, sizeof *cnt * (size_t)nf);
                for (int64_t q = 0; q < d[i].n; q++) {
                    int64_t h = fs_java_hash(d[i].t[q]) % nf;
                    cnt[h < 0 ? h + nf : h]++;
                }
                for (int64_t b = 0; b < nf; b++) rows += cnt[b] > 0;
            }
        }
        const FbType xt[2] = {FB_INT64, FB_INT64};
        if (!rc) r = new_out(f, &tk, rows, tk.wide ? nf : 2, xt, e);
        int64_t ro = 0;
        for (int64_t i = 0; r && !rc && i < n; i++) {
            memset(cnt, 0, sizeof *cnt * (size_t)nf);
            for (int64_t q = 0; q < d[i].n; q++) {
                int64_t h = fs_java_hash(d[i].t[q]) % nf;
                cnt[h < 0 ? h + nf : h]++;
            }
            if (tk.wide) {
                if (put_ids(r, i, f, &tk, i, e)) { rc = e->code; break; }
                for (int64_t b = 0; b < nf && !rc; b++)
                    if (fb_set_num(r, i, tk.nids + b, (double)cnt[b], e)) rc = e->code;
            } else {
                for (int64_t b = 0; b < nf && !rc; b++) {
                    if (!cnt[b]) continue;
                    if (put_ids(r, ro, f, &tk, i, e) || fb_set_num(r, ro, tk.nids, (double)(b + 1), e) ||
                        fb_set_num(r, ro, tk.nids + 1, (double)cnt[b], e))
                        rc = e->code;
                    ro++;
                }
            }
        }
        free(cnt);
    }
    if (rc) { fb_release(r); r = NULL; }
    for (int64_t i = 0; d && i < n; i++) toks_free(&d[i]);
    for (int64_t i = 0; cnt && i < n; i++) free(cnt[i]);
    free(d);
    free(cnt);
    free(tk.ids);
    if (tk.re) jl_re_free(tk.re);
    if (rc) return rc;
    return ret_fb(r, out, e);
}

/* freplicate(F, R): F's shape, schema and names with every row set to the
 * single row of R, its cells converted to F's column types (SystemDS's
 * frameRowReplication). */
static int b_freplicate(Value *a, Value *out, BrErr *e)
{
    const FB *f = fr_arg(&a[0], "freplicate", "target", e);
    const FB *r = f ? fr_arg(&a[1], "freplicate", "row", e) : NULL;
    if (!r) return e->code;
    if (r->cols != f->cols)
        return br_err(e, BR_EARG, "freplicate: mismatch number of columns: the frame has %lld, the row %lld",
                      (long long)f->cols, (long long)r->cols);
    if (r->rows != 1)
        return br_err(e, BR_EARG, "freplicate: the row to replicate must be a frame of one row, got %lld rows",
                      (long long)r->rows);
    if (f->rows == 0) {
        *out = val_frame(fb_retain((FB *)f));
        return 0;
    }
    if (f->rows > INT_MAX)
        return br_err(e, BR_EARG, "freplicate: %lld rows are too many", (long long)f->rows);
    const FB **parts = br_malloc((size_t)f->rows * sizeof *parts);
    FbType *types = br_malloc((size_t)(f->cols > 0 ? f->cols : 1) * sizeof *types);
    if (!parts || !types) {
        free(parts);
        free(types);
        return br_err(e, BR_ENOMEM, "out of memory");
    }
    for (int64_t i = 0; i < f->rows; i++) parts[i] = r;
    for (int64_t j = 0; j < f->cols; j++) types[j] = f->c[j]->type;
    FB *rep = fb_rbind((int)f->rows, parts, e);
    FB *res = rep ? fb_cast(rep, types, e) : NULL;
    fb_release(rep);
    free(parts);
    free(types);
    for (int64_t j = 0; res && f->named && j < f->cols; j++)
        if (fb_set_name(res, j, f->names[j], e)) { fb_release(res); res = NULL; }
    return ret_fb(res, out, e);
}

int bi_frame_str(const Instr *h, Value *a, Value *out, BrErr *e)
{
    switch (h->bi) {
    case BI_GETCOLNAMES: {
        const FB *f = fr_arg(&a[0], "getColNames", "target", e);
        FB *r = f ? fb_new(1, f->cols, NULL, e) : NULL;
        for (int64_t j = 0; r && j < f->cols; j++)
            if (fb_set_text(r, 0, j, f->names[j], strlen(f->names[j]), e)) { fb_release(r); r = NULL; }
        return ret_fb(r, out, e);
    }
    case BI_SETCOLNAMES: return b_set_colnames(a, out, e);
    case BI_DROPINVALIDTYPE: return b_drop_invalid_type(a, out, e);
    case BI_DROPINVALIDLENGTH: return b_drop_invalid_length(a, out, e);
    case BI_VALUESWAP: return b_value_swap(a, out, e);
    case BI_TOKENIZE: return b_tokenize(a, out, e);
    case BI_FREPLICATE: return b_freplicate(a, out, e);
    default: return BI_NOT_MINE;
    }
}
