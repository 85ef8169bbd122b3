/* transform.c: transformencode / transformapply / transformdecode over
 * frames (see transform.h for the specification and metadata formats).
 * Every public function parses the JSON spec into one plan entry per
 * input column, builds or loads the per-column state (recode maps, bin
 * boundaries, imputation values), then produces its output row by row. */
#include "transform.h"
#include "framestr.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../base/junicode.h"
#include "../kernels/jhashset.h"
#include "../matrix/format.h"

#define TF_SEP "\xc2\xb7" /* U+00B7, SystemDS's Lop.DATATYPE_PREFIX */

/* ---- token maps: token -> code, open addressing ---- */

typedef struct SMap {
    char **tok;        /* entry k: token (owned) */
    int64_t *code;     /* entry k: its code */
    int64_t n, cap;
    int64_t *slot;     /* entry index per slot, -1 free; scap a power of 2 */
    int64_t scap;
} SMap;

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static int64_t smap_find(const SMap *m, const char *s)
{
    if (!m->scap) return -1;
    for (uint64_t k = hash_str(s) & (uint64_t)(m->scap - 1);; k = (k + 1) & (uint64_t)(m->scap - 1)) {
        int64_t x = m->slot[k];
        if (x < 0) return -1;
        if (strcmp(m->tok[x], s) == 0) return x;
    }
}

/* Code of token s, or -1. */
static int64_t smap_get(const SMap *m, const char *s)
{
    int64_t x = smap_find(m, s);
    return x < 0 ? -1 : m->code[x];
}

static int smap_rehash(SMap *m, int64_t scap, BrErr *e)
{
    int64_t *sl = br_malloc((size_t)scap * sizeof(int64_t));
    if (!sl) return br_err(e, BR_ENOMEM, "out of memory");
    for (int64_t k = 0; k < scap; k++) sl[k] = -1;
    for (int64_t x = 0; x < m->n; x++) {
        uint64_t k = hash_str(m->tok[x]) & (uint64_t)(scap - 1);
        while (sl[k] >= 0) k = (k + 1) & (uint64_t)(scap - 1);
        sl[k] = x;
    }
    free(m->slot);
    m->slot = sl;
    m->scap = scap;
    return 0;
}

/* Adds token s with the given code (s not yet present). Returns its entry
 * index, or -1 with e set. */
static int64_t smap_add(SMap *m, const char *s, int64_t code, BrErr *e)
{
    if ((m->n + 1) * 2 > m->scap && smap_rehash(m, m->scap ? 2 * m->scap : 64, e)) return -1;
    if (m->n == m->cap) {
        int64_t nc = m->cap ? 2 * m->cap : 16;
        char **t = br_realloc(m->tok, (size_t)nc * sizeof(char *));
        if (t) m->tok = t;
        int64_t *c = t ? br_realloc(m->code, (size_t)nc * sizeof(int64_t)) : NULL;
        if (!c) { br_err(e, BR_ENOMEM, "out of memory"); return -1; }
        m->code = c;
        m->cap = nc;
    }
    char *d = br_strdup(s);
    if (!d) { br_err(e, BR_ENOMEM, "out of memory"); return -1; }
    int64_t x = m->n++;
    m->tok[x] = d;
    m->code[x] = code;
    uint64_t k = hash_str(s) & (uint64_t)(m->scap - 1);
    while (m->slot[k] >= 0) k = (k + 1) & (uint64_t)(m->scap - 1);
    m->slot[k] = x;
    return x;
}

static void smap_free(SMap *m)
{
    for (int64_t x = 0; x < m->n; x++) free(m->tok[x]);
    free(m->tok);
    free(m->code);
    free(m->slot);
    memset(m, 0, sizeof *m);
}

/* ---- the plan ---- */

enum { IM_NONE, IM_MEAN, IM_MODE, IM_CONST };

typedef struct TfCol {
    bool recode, dummy, bin, omit;
    bool wemb;             /* word_embedding: the recoded code's row of the
                              embedding matrix (transformapply) */
    bool udf;              /* "udf": the spec's DML function over the
                              column's encoded columns (TfUdf) */
    bool hash;             /* feature hashing: |Java hash| % K + 1 */
    bool bow;              /* bag_of_words: one column per token of the
                              dictionary (map), the token's count in the
                              cell's text */
    bool eqh;              /* equi-height bins (else equi-width) */
    int impute;            /* IM_* */
    char *ivalue;          /* imputation value (spec constant or built) */
    int64_t nbins;         /* bins asked for (spec) */
    SMap map;              /* recode map */
    char **bytok;          /* decode: code-1 -> token (borrowed from map) */
    int64_t maxcode;
    double *bmin, *bmax;   /* bin boundaries, nb of them */
    int64_t nb;
    int64_t dwidth;        /* dummycode domain from the metadata's distinct
                              count (transformdecode, transformcolmap) or as
                              transformapply resets it, 0: none */
    int64_t out0, width;   /* output columns of the encoded matrix */
} TfCol;

typedef struct Tf {
    int64_t n;             /* input columns */
    int64_t K;             /* buckets of hashed columns (spec "K") */
    bool ids;              /* columns named by 1-based ids (spec "ids") */
    TfCol *c;
    const MB *emb;         /* transformapply's embedding matrix, or NULL */
    char *udf_name;        /* the "udf" function's name, or NULL */
    const char *what;      /* builtin name for messages */
} Tf;

static void tf_free(Tf *t)
{
    free(t->udf_name);
    for (int64_t j = 0; t->c && j < t->n; j++) {
        smap_free(&t->c[j].map);
        free(t->c[j].ivalue);
        free(t->c[j].bytok);
        free(t->c[j].bmin);
        free(t->c[j].bmax);
    }
    free(t->c);
}

/* The spec as SystemDS's JSON parser (wink's json4j) reads it, in strict
 * JSON: bare words are quoted ({ids: true, recode: [a]}), and a comma
 * just before the closing ] or } is dropped ({recode: [1,2,]}, which
 * SystemDS's imputeFD test builds in a loop). Caller frees. */
char *tf_lenient_json(const char *s)
{
    size_t n = strlen(s);
    char *o = br_malloc(3 * n + 1), *q = o;
    if (!o) return NULL;
    bool str = false;
    char quote = 0;
    for (size_t i = 0; i < n;) {
        char c = s[i];
        if (str) {
            *q++ = c;
            if (c == '\\' && i + 1 < n) *q++ = s[++i];
            else if (c == quote) str = false;
            i++;
            continue;
        }
        if (c == '"' || c == '\'') {
            str = true;
            quote = c;
            *q++ = '"';
            i++;
            /* single-quoted strings become double-quoted */
            if (c == '\'') {
                while (i < n && s[i] != '\'') {
                    if (s[i] == '"') *q++ = '\\';
                    *q++ = s[i++];
                }
                *q++ = '"';
                i++;
                str = false;
            }
            continue;
        }
        if (isalpha((unsigned char)c) || c == '_') {
            size_t k = i;
            while (k < n && (isalnum((unsigned char)s[k]) || s[k] == '_' || s[k] == '-' || s[k] == '.')) k++;
            size_t w = k - i;
            bool lit = (w == 4 && !strncmp(s + i, "true", 4)) || (w == 5 && !strncmp(s + i, "false", 5)) ||
                       (w == 4 && !strncmp(s + i, "null", 4));
            if (!lit) *q++ = '"';
            memcpy(q, s + i, w);
            q += w;
            if (!lit) *q++ = '"';
            i = k;
            continue;
        }
        if (c == ',') {
            size_t k = i + 1;
            while (k < n && isspace((unsigned char)s[k])) k++;
            const char *b = q;
            while (b > o && isspace((unsigned char)b[-1])) b--;
            /* "[1,]" and "{a: 1,}" (a value before the comma; "[,]" stays
             * the error it is in json4j) */
            if (k < n && (s[k] == ']' || s[k] == '}') && b > o && b[-1] != '[' && b[-1] != '{' && b[-1] != ',') {
                i++;
                continue;
            }
        }
        *q++ = c;
        i++;
    }
    *q = 0;
    return o;
}

/* Resolves a column reference (1-based id or name) to an index. Returns
 * 0 (*j set), 1 for an id past the last column (ignored, as SystemDS), or
 * an error code. */
static int col_ref(const Tf *t, const cJSON *it, bool ids, const FB *names, int64_t *j, BrErr *e)
{
    if (ids) {
        if (!cJSON_IsNumber(it) || it->valuedouble < 1 || it->valuedouble != floor(it->valuedouble))
            return br_err(e, BR_EARG, "%s: with \"ids\": true, columns are 1-based numbers", t->what);
        *j = (int64_t)it->valuedouble - 1;
        return *j >= t->n ? 1 : 0;
    }
    if (cJSON_IsNumber(it))
        return br_err(e, BR_EARG, "%s: column %g given by number; set \"ids\": true in the spec", t->what,
                      it->valuedouble);
    if (!cJSON_IsString(it)) return br_err(e, BR_EARG, "%s: a column must be a name or an id", t->what);
    *j = fb_find(names, it->valuestring);
    if (*j < 0) return br_err(e, BR_EARG, "%s: column '%s' is not in the frame", t->what, it->valuestring);
    return 0;
}

/* The column of an object entry ({"id": ..} or {"name": ..}). */
static int obj_ref(const Tf *t, const cJSON *o, const FB *names, int64_t *j, BrErr *e)
{
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(o, "name");
    if (id) return col_ref(t, id, true, names, j, e);
    if (nm) return col_ref(t, nm, false, names, j, e);
    return br_err(e, BR_EARG, "%s: a bin or impute entry needs \"id\" or \"name\"", t->what);
}

/* Text of a JSON scalar for an imputation constant (numbers as Java would
 * print the JSON value: integers plainly). Caller frees. */
static char *json_text(const cJSON *v)
{
    char buf[64];
    if (cJSON_IsString(v)) return br_strdup(v->valuestring);
    if (cJSON_IsBool(v)) return br_strdup(cJSON_IsTrue(v) ? "true" : "false");
    if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        if (d == floor(d) && fabs(d) < 9e15) snprintf(buf, sizeof buf, "%lld", (long long)d);
        else fmt_double(d, buf, sizeof buf);
        return br_strdup(buf);
    }
    return NULL;
}

/* Parses spec against the column names of `names` (ncols columns). */
static int tf_parse(Tf *t, const char *spec, const FB *names, const char *what, BrErr *e)
{
    memset(t, 0, sizeof *t);
    t->what = what;
    t->n = names->cols;
    t->c = br_calloc((size_t)(t->n > 0 ? t->n : 1), sizeof(TfCol));
    char *js = tf_lenient_json(spec);
    if (!t->c || !js) { free(js); return br_err(e, BR_ENOMEM, "out of memory"); }
    cJSON *root = cJSON_Parse(js);
    free(js);
    if (!root || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return br_err(e, BR_EARG, "%s: the spec is not a JSON object: \"%.60s\"", what, spec);
    }
    const cJSON *ids_it = cJSON_GetObjectItemCaseSensitive(root, "ids");
    bool ids = cJSON_IsTrue(ids_it);
    t->ids = ids;
    const cJSON *k_it = cJSON_GetObjectItemCaseSensitive(root, "K");
    t->K = cJSON_IsNumber(k_it) ? (int64_t)k_it->valuedouble : 0;
    const cJSON *it;
    int rc = 0;
    cJSON_ArrayForEach(it, root) {
        const char *k = it->string;
        if (!strcmp(k, "ids") || !strcmp(k, "K")) continue;
        if (!strcmp(k, "udf")) {
            /* {name: f, ids: [...]}: f over each listed column's encoded
               columns, after the other encoders (SystemDS's ColumnEncoderUDF,
               one per column) */
            const cJSON *nm = cJSON_GetObjectItemCaseSensitive(it, "name");
            const cJSON *cols = cJSON_GetObjectItemCaseSensitive(it, "ids");
            if (!cJSON_IsObject(it) || !cJSON_IsString(nm) || !cJSON_IsArray(cols)) {
                rc = br_err(e, BR_EARG, "%s: \"udf\" must be {name: function, ids: [columns]}", what);
                break;
            }
            free(t->udf_name);
            if (!(t->udf_name = br_strdup(nm->valuestring))) { rc = br_err(e, BR_ENOMEM, "out of memory"); break; }
            const cJSON *x;
            cJSON_ArrayForEach(x, cols) {
                int64_t j;
                int r = col_ref(t, x, ids, names, &j, e);
                if (r == 1) continue;
                if (r) { rc = r; break; }
                t->c[j].udf = true;
            }
            if (rc) break;
            continue;
        }
        bool list = !strcmp(k, "recode") || !strcmp(k, "dummycode") || !strcmp(k, "omit") || !strcmp(k, "hash") ||
                    !strcmp(k, "word_embedding") || !strcmp(k, "bag_of_words");
        bool objs = !strcmp(k, "bin") || !strcmp(k, "impute");
        if (!list && !objs) {
            rc = br_err(e, BR_EARG,
                        "%s: the transformation \"%s\" is not supported (recode, dummycode, hash, bin, impute, omit, "
                        "word_embedding, bag_of_words, udf)", what, k);
            break;
        }
        if (!cJSON_IsArray(it)) { rc = br_err(e, BR_EARG, "%s: \"%s\" must be a list", what, k); break; }
        const cJSON *x;
        cJSON_ArrayForEach(x, it) {
            int64_t j;
            int r = objs ? obj_ref(t, x, names, &j, e) : col_ref(t, x, ids, names, &j, e);
            if (r == 1) continue;
            if (r) { rc = r; break; }
            TfCol *c = &t->c[j];
            if (!strcmp(k, "recode")) c->recode = true;
            else if (!strcmp(k, "dummycode")) c->dummy = true;
            else if (!strcmp(k, "omit")) c->omit = true;
            else if (!strcmp(k, "hash")) c->hash = true;
            else if (!strcmp(k, "word_embedding")) c->wemb = c->recode = true;
            else if (!strcmp(k, "bag_of_words")) c->bow = true;
            else if (!strcmp(k, "bin")) {
                const cJSON *m = cJSON_GetObjectItemCaseSensitive(x, "method");
                const cJSON *nb = cJSON_GetObjectItemCaseSensitive(x, "numbins");
                if (m && (!cJSON_IsString(m) || (strcasecmp(m->valuestring, "equi-width")
                                                   && strcasecmp(m->valuestring, "equi-height")))) {
                    rc = br_err(e, BR_EARG, "%s: binning method \"%s\" is not supported (equi-width, equi-height)", what,
                                cJSON_IsString(m) ? m->valuestring : "?");
                    break;
                }
                c->bin = true;
                c->eqh = m && !strcasecmp(m->valuestring, "equi-height");
                c->nbins = cJSON_IsNumber(nb) ? (int64_t)nb->valuedouble : 1;
                if (c->nbins < 1) { rc = br_err(e, BR_EARG, "%s: numbins must be at least 1", what); break; }
            } else {
                const cJSON *m = cJSON_GetObjectItemCaseSensitive(x, "method");
                const char *ms = cJSON_IsString(m) ? m->valuestring : "";
                if (!strcmp(ms, "global_mean")) c->impute = IM_MEAN;
                else if (!strcmp(ms, "global_mode")) c->impute = IM_MODE;
                else if (!strcmp(ms, "constant")) {
                    c->impute = IM_CONST;
                    free(c->ivalue);
                    c->ivalue = json_text(cJSON_GetObjectItemCaseSensitive(x, "value"));
                    if (!c->ivalue) { rc = br_err(e, BR_EARG, "%s: impute \"constant\" needs a \"value\"", what); break; }
                } else {
                    rc = br_err(e, BR_EARG, "%s: impute method \"%s\" is not supported (global_mean, global_mode, constant)",
                                what, ms);
                    break;
                }
            }
        }
        if (rc) break;
    }
    cJSON_Delete(root);
    if (rc) return rc;
    for (int64_t j = 0; j < t->n; j++) {
        TfCol *c = &t->c[j];
        if (c->dummy && !c->bin && !c->hash) c->recode = true; /* dummycoding needs codes */
        if ((c->recode && c->bin) || (c->hash && (c->recode || c->bin)))
            return br_err(e, BR_EARG, "%s: column '%s' has more than one of recode, hash and bin", what,
                          names->names[j]);
        if (c->hash && t->K < 1)
            return br_err(e, BR_EARG, "%s: hashing column '%s' needs a positive \"K\" in the spec", what,
                          names->names[j]);
        /* as SystemDS's EncoderFactory: one first-level encoder per
           column (a dummycoded column is recoded unless binned or hashed) */
        if (c->bow && (c->recode || c->bin || c->hash))
            return br_err(e, BR_EARG, "%s: column '%s' has bag_of_words and one of recode, dummycode, hash, bin "
                          "and word_embedding (one of them per column)", what, names->names[j]);
        if (c->hash) c->maxcode = t->K;
        if (c->wemb && (c->dummy || c->bin || c->hash))
            return br_err(e, BR_EARG, "%s: word_embedding column '%s' is also dummycoded, binned or hashed", what,
                          names->names[j]);
        if (c->wemb && strcmp(what, "transformapply"))
            return br_err(e, BR_EARG, "%s: word_embedding (column '%s') is applied by transformapply with "
                          "embedding=, as in SystemDS", what, names->names[j]);
    }
    return 0;
}

/* ---- cells ---- */

/* Is cell (i, j) missing (NULL, empty string, NaN)? */
static bool missing(const FB *f, int64_t i, int64_t j)
{
    const FbCol *c = f->c[j];
    return fb_is_missing(f, i, j) || (c->type == FB_STRING && !c->s[i][0]);
}

/* Token text of cell (i, j) after imputation, or NULL if missing. Numbers
 * as Java prints them. buf: at least 32 bytes. */
static const char *token(const FB *f, const TfCol *tc, int64_t i, int64_t j, char *buf)
{
    if (missing(f, i, j)) return tc->ivalue && tc->impute ? tc->ivalue : NULL;
    const FbCol *c = f->c[j];
    switch (c->type) {
    case FB_STRING: return c->s[i];
    case FB_FP64: fmt_double(c->d[i], buf, 32); return buf;
    case FB_INT64: fmt_int(c->i[i], buf, 32); return buf;
    default: return c->b[i] ? "true" : "false";
    }
}

/* Numeric value of cell (i, j) after imputation (NaN if missing). */
static int number(const Tf *t, const FB *f, const TfCol *tc, int64_t i, int64_t j, double *out, BrErr *e)
{
    const char *s = NULL;
    if (missing(f, i, j)) {
        if (!(tc->impute && tc->ivalue)) { *out = NAN; return 0; }
        s = tc->ivalue;
    } else if (f->c[j]->type != FB_STRING) {
        bool ok;
        *out = fb_get_num(f, i, j, &ok);
        return 0;
    } else {
        s = f->c[j]->s[i];
    }
    if (fb_parse_num(s, strlen(s), out)) return 0;
    if (!strcasecmp(s, "true") || !strcasecmp(s, "false")) { *out = !strcasecmp(s, "true"); return 0; }
    return br_err(e, BR_EARG, "%s: value \"%.60s\" of column '%s' (row %lld) is not a number; recode it",
                  t->what, s, f->names[j], (long long)i + 1);
}

/* Rows that survive "omit": keep[i]; returns how many. */
static int64_t kept_rows(const Tf *t, const FB *f, bool *keep)
{
    int64_t n = 0;
    for (int64_t i = 0; i < f->rows; i++) {
        keep[i] = true;
        for (int64_t j = 0; j < t->n && keep[i]; j++)
            if (t->c[j].omit && missing(f, i, j)) keep[i] = false;
        n += keep[i];
    }
    return n;
}

/* Builds the imputation value of column j from the kept rows of f. */
static int build_impute(Tf *t, const FB *f, int64_t j, const bool *keep, BrErr *e)
{
    TfCol *c = &t->c[j];
    if (c->impute == IM_MEAN) {
        double sum = 0, comp = 0;
        int64_t cnt = 0;
        for (int64_t i = 0; i < f->rows; i++) {
            if (!keep[i] || missing(f, i, j)) continue;
            double v;
            TfCol plain = {0};
            if (number(t, f, &plain, i, j, &v, e)) return e->code;
            double y = v - comp, s = sum + y; /* Kahan */
            comp = (s - sum) - y;
            sum = s;
            cnt++;
        }
        char buf[40];
        fmt_double(cnt ? sum / (double)cnt : NAN, buf, sizeof buf);
        free(c->ivalue);
        c->ivalue = br_strdup(buf);
    } else if (c->impute == IM_MODE) {
        SMap m = {0};
        int64_t *cnt = NULL, ccap = 0, best = -1;
        char buf[40];
        TfCol plain = {0};
        for (int64_t i = 0; i < f->rows; i++) {
            if (!keep[i]) continue;
            const char *s = token(f, &plain, i, j, buf);
            if (!s) continue;
            int64_t x = smap_find(&m, s);
            if (x < 0) {
                if ((x = smap_add(&m, s, m.n + 1, e)) < 0) { smap_free(&m); free(cnt); return e->code; }
                if (x >= ccap) {
                    ccap = ccap ? 2 * ccap : 64;
                    int64_t *nc = br_realloc(cnt, (size_t)ccap * sizeof(int64_t));
                    if (!nc) { smap_free(&m); free(cnt); return br_err(e, BR_ENOMEM, "out of memory"); }
                    cnt = nc;
                }
                cnt[x] = 0;
            }
            cnt[x]++;
            if (best < 0 || cnt[x] > cnt[best] || (cnt[x] == cnt[best] && x < best)) best = x;
        }
        free(c->ivalue);
        c->ivalue = best >= 0 ? br_strdup(m.tok[best]) : NULL;
        smap_free(&m);
        free(cnt);
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* SystemDS's equi-height bins of column j: over the sorted non-missing
 * values v_1..v_n, bin i (of nb) ends at v_pos for pos = n i / nb when
 * that is an integer, else at v_(floor(pos)+1); the last bin ends at v_n,
 * the first starts at v_1 and every other starts where the previous
 * ends. (SystemDS sorts missing values in as NaN, which Java sorts last;
 * braid leaves them out.) */
static int equi_height_bins(Tf *t, const FB *f, int64_t j, const bool *keep, BrErr *e)
{
    TfCol *c = &t->c[j];
    double *v = br_malloc((size_t)(f->rows > 0 ? f->rows : 1) * sizeof(double));
    if (!v) return br_err(e, BR_ENOMEM, "out of memory");
    int64_t n = 0;
    for (int64_t i = 0; i < f->rows; i++) {
        if (!keep[i]) continue;
        double x;
        if (number(t, f, c, i, j, &x, e)) { free(v); return e->code; }
        if (!isnan(x)) v[n++] = x;
    }
    if (n == 0) { free(v); return br_err(e, BR_EARG, "%s: column '%s' has no values to bin", t->what, f->names[j]); }
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    for (int64_t k = 0; k < c->nb; k++) {
        double pos = (double)n * ((double)k + 1.0) / (double)c->nb;
        int64_t at = pos == floor(pos) ? (int64_t)pos - 1 : (int64_t)floor(pos);
        c->bmax[k] = v[at < n ? at : n - 1];
    }
    c->bmax[c->nb - 1] = v[n - 1];
    c->bmin[0] = v[0];
    for (int64_t k = 1; k < c->nb; k++) c->bmin[k] = c->bmax[k - 1];
    free(v);
    return 0;
}

/* SystemDS's feature-hash code of cell (i, j): |hash| % K + 1 with Java's
 * hash of the column's value type (String.hashCode, Double.hashCode,
 * Long.hashCode, 1/0 for booleans); NaN for a missing string. */
static double hash_code(const Tf *t, const FB *f, int64_t i, int64_t j)
{
    const FbCol *c = f->c[j];
    double h;
    if (c->type == FB_STRING) {
        if (!c->s[i]) return NAN;
        h = (double)fs_java_hash(c->s[i]);
    } else if (c->type == FB_FP64) {
        double d = c->d[i];
        uint64_t bits;
        if (isnan(d)) bits = 0x7ff8000000000000ULL; /* Java's canonical NaN */
        else memcpy(&bits, &d, sizeof bits);
        h = (double)(int32_t)(uint32_t)(bits ^ (bits >> 32));
    } else if (c->type == FB_INT64) {
        uint64_t u = (uint64_t)c->i[i];
        h = (double)(int32_t)(uint32_t)(u ^ (u >> 32));
    } else {
        h = c->b[i] ? 1.0 : 0.0;
    }
    return fmod(fabs(h), (double)t->K) + 1.0;
}

/* ---- bag of words ---- */

/* SystemDS's ColumnEncoderBagOfWords.tokenize: the letters of s (Java's
 * Character.isLetter over UTF-16 units; a code point past the BMP is two
 * units, neither a letter), lower-cased (Character.toLowerCase), every
 * other unit a separator. Writes the tokens, the maximal runs of letters,
 * NUL-terminated one after the other into buf (at least 2 strlen(s) + 2
 * bytes: lower-casing grows a letter by at most one byte) and returns
 * their number. */
static int64_t bow_tokens(const char *s, char *buf)
{
    int64_t n = 0;
    int64_t len = (int64_t)strlen(s);
    size_t o = 0;
    bool in = false;
    for (int64_t i = 0, l; i < len; i += l) {
        uint32_t c = u8_decode(s + i, len - i, &l);
        if (ju_is_letter(c)) {
            o += (size_t)u8_encode(ju_to_lower(c), buf + o);
            in = true;
        } else if (in) {
            buf[o++] = 0;
            n++;
            in = false;
        }
    }
    if (in) { buf[o++] = 0; n++; }
    return n;
}

/* The dictionary of bag_of_words column j: its tokens over the kept
 * rows, coded 1..n in order of first appearance (SystemDS's build on one
 * thread). */
static int build_bow(Tf *t, const FB *f, int64_t j, const bool *keep, BrErr *e)
{
    TfCol *c = &t->c[j];
    char nb[40];
    char *buf = NULL;
    size_t cap = 0;
    for (int64_t i = 0; i < f->rows; i++) {
        const char *s = keep[i] ? token(f, c, i, j, nb) : NULL;
        if (!s) continue;
        size_t need = 2 * strlen(s) + 2;
        if (need > cap) {
            char *nbuf = br_realloc(buf, need);
            if (!nbuf) { free(buf); return br_err(e, BR_ENOMEM, "out of memory"); }
            buf = nbuf;
            cap = need;
        }
        const char *w = buf;
        for (int64_t k = bow_tokens(s, buf); k > 0; k--, w += strlen(w) + 1)
            if (smap_find(&c->map, w) < 0 && smap_add(&c->map, w, c->map.n + 1, e) < 0) {
                free(buf);
                return e->code;
            }
    }
    free(buf);
    c->maxcode = c->map.n;
    return 0;
}

/* Builds recode map and bins of column j from the kept rows of f. */
static int build_col(Tf *t, const FB *f, int64_t j, const bool *keep, BrErr *e)
{
    TfCol *c = &t->c[j];
    char buf[40];
    if (c->bow) return build_bow(t, f, j, keep, e);
    if (c->recode) {
        for (int64_t i = 0; i < f->rows; i++) {
            if (!keep[i]) continue;
            const char *s = token(f, c, i, j, buf);
            if (!s || !*s || smap_find(&c->map, s) >= 0) continue;
            if (smap_add(&c->map, s, c->map.n + 1, e) < 0) return e->code;
        }
        c->maxcode = c->map.n;
    }
    if (c->bin) {
        double mn = INFINITY, mx = -INFINITY;
        for (int64_t i = 0; i < f->rows; i++) {
            if (!keep[i]) continue;
            double v;
            if (number(t, f, c, i, j, &v, e)) return e->code;
            if (isnan(v)) continue;
            if (v < mn) mn = v;
            if (v > mx) mx = v;
        }
        c->nb = c->nbins;
        c->bmin = br_malloc((size_t)c->nb * sizeof(double));
        c->bmax = br_malloc((size_t)c->nb * sizeof(double));
        if (!c->bmin || !c->bmax) return br_err(e, BR_ENOMEM, "out of memory");
        if (c->eqh) return equi_height_bins(t, f, j, keep, e);
        for (int64_t k = 0; k < c->nb; k++) {
            c->bmin[k] = mn + (double)k * (mx - mn) / (double)c->nb;
            c->bmax[k] = mn + (double)(k + 1) * (mx - mn) / (double)c->nb;
        }
    }
    return 0;
}

/* Splits a metadata entry "a·b" at the last '·'. */
static bool split_entry(const char *s, char **a, const char **b)
{
    const char *p = NULL;
    for (const char *q = strstr(s, TF_SEP); q; q = strstr(q + 1, TF_SEP)) p = q;
    if (!p) return false;
    *a = br_malloc((size_t)(p - s) + 1);
    if (!*a) return false;
    memcpy(*a, s, (size_t)(p - s));
    (*a)[p - s] = 0;
    *b = p + strlen(TF_SEP);
    return true;
}

/* Loads recode map / bins / imputation value of column j from M. */
static int load_col(Tf *t, const FB *m, int64_t j, BrErr *e)
{
    TfCol *c = &t->c[j];
    if (m->mv && m->mv[j] && c->impute) {
        free(c->ivalue);
        c->ivalue = br_strdup(m->mv[j]);
    }
    if (!c->recode && !c->bin && !c->bow) return 0;
    const FbCol *mc = m->c[j];
    if (mc->type != FB_STRING)
        return br_err(e, BR_EARG, "%s: metadata column '%s' must hold strings", t->what, m->names[j]);
    for (int64_t r = 0; r < m->rows; r++) {
        const char *s = mc->s[r];
        if (!s) continue;
        char *a;
        const char *b;
        if (!split_entry(s, &a, &b))
            return br_err(e, BR_EARG, "%s: metadata entry \"%.60s\" of column '%s' is not \"value" TF_SEP "code\"",
                          t->what, s, m->names[j]);
        int rc = 0;
        if (c->recode || c->bow) {
            double code;
            if (!fb_parse_num(b, strlen(b), &code) || code < 1 || code != floor(code))
                rc = br_err(e, BR_EARG, "%s: bad code in metadata entry \"%.60s\"", t->what, s);
            else if (smap_find(&c->map, a) < 0 && smap_add(&c->map, a, (int64_t)code, e) < 0)
                rc = e->code;
            else if ((int64_t)code > c->maxcode)
                c->maxcode = (int64_t)code;
        } else {
            double lo, hi;
            if (!fb_parse_num(a, strlen(a), &lo) || !fb_parse_num(b, strlen(b), &hi)) {
                rc = br_err(e, BR_EARG, "%s: bad bin boundaries in metadata entry \"%.60s\"", t->what, s);
            } else {
                double *x = br_realloc(c->bmin, (size_t)(c->nb + 1) * sizeof(double));
                if (x) c->bmin = x;
                double *y = x ? br_realloc(c->bmax, (size_t)(c->nb + 1) * sizeof(double)) : NULL;
                if (!y) rc = br_err(e, BR_ENOMEM, "out of memory");
                else {
                    c->bmax = y;
                    c->bmin[c->nb] = lo;
                    c->bmax[c->nb++] = hi;
                }
            }
        }
        free(a);
        if (rc) return rc;
    }
    return 0;
}

/* SystemDS's transformdecode and transformcolmap take a dummycoded
 * column's domain from the metadata frame's distinct count (hashed
 * columns: K), not from its recode map or bins (DecoderDummycode and
 * MultiColumnEncoder.getColMapping): a metadata frame whose rows were
 * sliced keeps the count of the whole map. An unknown count (-1) falls
 * back to the map or bins; SystemDS would give the column 0 (decode) or -1
 * (colmap) columns and shift the columns after it. */
static void meta_domain(TfCol *c, const FB *m, int64_t j)
{
    int64_t nd = fb_nd(m, j);
    if (c->dummy && !c->hash && nd > 0) c->dwidth = nd;
}

/* Output columns per input column; returns the total. */
static int64_t layout(Tf *t)
{
    int64_t at = 0;
    for (int64_t j = 0; j < t->n; j++) {
        TfCol *c = &t->c[j];
        c->out0 = at;
        c->width = c->wemb ? (t->emb ? t->emb->cols : 0) : c->bow ? c->map.n
                 : !c->dummy ? 1 : c->dwidth > 0 ? c->dwidth : c->bin ? c->nb : c->maxcode;
        at += c->width;
    }
    return at;
}

/* SystemDS's equi-width bin of v: ceil((v - min) / (max - min) nb)
 * clamped to 1..nb (values outside [min, max] go to the outer bins); 1
 * when max = min. */
static double equi_width_code(const TfCol *c, double v)
{
    /* the spec's numbins, over the range of the bins at hand (as
       ColumnEncoderBin.getEqWidthUnsafe: _numBin is the spec's also when
       transformapply loads another number of bins from the metadata) */
    double mn = c->bmin[0], mx = c->bmax[c->nb - 1], nbs = (double)(c->nbins > 0 ? c->nbins : c->nb);
    if (mx == mn) return 1;
    double k = ceil((v - mn) / (mx - mn) * nbs);
    return k > nbs ? nbs : k < 1 ? 1 : k;
}

/* SystemDS's equi-height bin of v: the first bin whose max is >= v, the
 * last bin above all of them. (SystemDS binary-searches beyond 10 bins,
 * which can pick another of several equal maxima.) */
static double equi_height_code(const TfCol *c, double v)
{
    int64_t lo = 0, hi = c->nb - 1;
    while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        if (c->bmax[mid] >= v) hi = mid;
        else lo = mid + 1;
    }
    return (double)(lo + 1);
}

/* Code (1-based, NaN if none) of cell (i, j) for recoded / binned
 * columns, else its number. */
static int code_of(const Tf *t, const FB *f, const TfCol *c, int64_t i, int64_t j, double *out, BrErr *e)
{
    char buf[40];
    if (c->recode) {
        const char *s = token(f, c, i, j, buf);
        int64_t k = s && *s ? smap_get(&c->map, s) : -1;
        *out = k < 0 ? NAN : (double)k;
        return 0;
    }
    if (c->hash) { *out = hash_code(t, f, i, j); return 0; }
    double v;
    if (number(t, f, c, i, j, &v, e)) return e->code;
    if (!c->bin) { *out = v; return 0; }
    if (c->nb == 0) { *out = 1; return 0; }
    if (isnan(v)) { *out = NAN; return 0; }
    *out = c->eqh ? equi_height_code(c, v) : equi_width_code(c, v);
    return 0;
}

/* A row of the encoded matrix being written: its dense cells d, and,
 * when the matrix is built sparse, the columns made non-zero (t, nt of
 * them, cap allocated; possibly repeated). */
typedef struct {
    double *d;
    int64_t *t, nt, cap;
    bool track;
    bool oom;
} Row;

static void put(Row *w, int64_t k, double v)
{
    if (w->track && v != 0 && w->d[k] == 0) {
        if (w->nt == w->cap) {
            int64_t cap = w->cap ? 2 * w->cap : 64;
            int64_t *nt = br_realloc(w->t, (size_t)cap * sizeof *nt);
            if (!nt) { w->oom = true; return; }
            w->t = nt;
            w->cap = cap;
        }
        w->t[w->nt++] = k;
    }
    w->d[k] = v;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Encodes the kept rows of f into a new matrix. Columns are written in
 * order, each dummycoded code as SystemDS's ColumnEncoderDummycode writes
 * it: the group's first column 0 (unless the code is 1), then a 1 at
 * first + code - 1, also past the group (transformapply with a code the
 * metadata's map gives beyond its line count: into the next columns,
 * which their own encoders may overwrite); past the matrix an error (an
 * index error in SystemDS). A bag_of_words column counts its cell's
 * tokens into the columns of their codes (tokens the dictionary lacks
 * are left out). With a bag_of_words column the matrix is built sparse,
 * row by row, its format then chosen by the usual rule. */
static MB *encode_rows(Tf *t, const FB *f, const bool *keep, int64_t nkeep, BrErr *e)
{
    int64_t ncol = layout(t);
    bool sparse = false;
    for (int64_t j = 0; j < t->n; j++) sparse = sparse || t->c[j].bow;
    MB *x = sparse ? mb_sp_new(nkeep, ncol, 0, e) : mb_dense(nkeep, ncol, e);
    if (!x) return NULL;
    Row w = {.track = sparse};
    char *tok = NULL;
    size_t tcap = 0;
    if (sparse && !(w.d = br_calloc((size_t)(ncol > 0 ? ncol : 1), sizeof(double)))) goto oom;
    int64_t r = 0;
    for (int64_t i = 0; i < f->rows; i++) {
        if (!keep[i]) continue;
        if (!sparse) w.d = x->d + r * ncol;
        for (int64_t j = 0; j < t->n; j++) {
            TfCol *c = &t->c[j];
            double v = NAN;
            if (c->bow) {
                char nb[40];
                const char *s = token(f, c, i, j, nb);
                if (!s) continue;
                size_t need = 2 * strlen(s) + 2;
                if (need > tcap) {
                    char *b = br_realloc(tok, need);
                    if (!b) goto oom;
                    tok = b;
                    tcap = need;
                }
                const char *q = tok;
                for (int64_t k = bow_tokens(s, tok); k > 0; k--, q += strlen(q) + 1) {
                    int64_t code = smap_get(&c->map, q);
                    if (code < 1) continue;
                    int64_t at = c->out0 + code - 1;
                    if (at >= ncol) {
                        br_err(e, BR_EARG, "%s: code %lld of token \"%.40s\" (column %lld) lies past the %lld "
                               "encoded columns (the metadata's dictionary has fewer lines than codes)",
                               t->what, (long long)code, q, (long long)(j + 1), (long long)ncol);
                        goto fail;
                    }
                    put(&w, at, w.d[at] + 1);
                }
                continue;
            }
            if (code_of(t, f, c, i, j, &v, e)) goto fail;
            if (c->wemb) {
                /* the code's row of the embedding matrix (SystemDS's
                   ColumnEncoderWordEmbedding; a token without a code, or
                   missing, leaves its columns 0) */
                if (isnan(v)) continue;
                if (v > (double)t->emb->rows) {
                    br_err(e, BR_EARG, "%s: code %lld of column %lld has no row in the %lld-row embedding matrix",
                           t->what, (long long)v, (long long)(j + 1), (long long)t->emb->rows);
                    goto fail;
                }
                for (int64_t k = 0; k < c->width; k++) put(&w, c->out0 + k, mb_get(t->emb, (int64_t)v - 1, k));
            } else if (!c->dummy) put(&w, c->out0, v);
            else if (isnan(v) || v < 1) put(&w, c->out0, 0);
            else {
                int64_t at = c->out0 + (int64_t)v - 1;
                if (at >= ncol) {
                    br_err(e, BR_EARG, "%s: code %lld of column %lld lies past the %lld encoded columns "
                           "(its dummycoded group has %lld: the metadata's map has fewer lines than codes)",
                           t->what, (long long)v, (long long)(j + 1), (long long)ncol, (long long)c->width);
                    goto fail;
                }
                if (at != c->out0) put(&w, c->out0, 0);
                put(&w, at, 1);
            }
        }
        if (w.oom) goto oom;
        if (sparse) {
            /* the row's non-zeros in column order, its cells reset */
            qsort(w.t, (size_t)w.nt, sizeof *w.t, cmp_i64);
            for (int64_t k = 0; k < w.nt; k++) {
                int64_t col = w.t[k];
                if ((k > 0 && col == w.t[k - 1]) || w.d[col] == 0) continue;
                if (mb_sp_append(x, r, col, w.d[col], e)) goto fail;
            }
            for (int64_t k = 0; k < w.nt; k++) w.d[w.t[k]] = 0;
            w.nt = 0;
        }
        r++;
    }
    if (sparse) {
        free(w.d);
        free(w.t);
        mb_sp_finish(x);
    } else {
        mb_recount_nnz(x);
    }
    free(tok);
    if (mb_examine(x, e)) { mb_release(x); return NULL; }
    return x;
oom:
    br_err(e, BR_ENOMEM, "out of memory");
fail:
    if (sparse) { free(w.d); free(w.t); }
    free(tok);
    mb_release(x);
    return NULL;
}

/* ---- public ---- */

/* The metadata row of each recode map (or bag_of_words dictionary)
 * entry: Java's HashMap<String, Integer> iteration order of the tokens put
 * in code order (SystemDS's ColumnEncoderRecode/BagOfWords.getMetaData
 * write their maps so). Caller frees. */
static int64_t *recode_rows(const SMap *m, bool bow, BrErr *e)
{
    int64_t *byc = br_malloc((size_t)m->n * sizeof(int64_t)), *ord = br_malloc((size_t)m->n * sizeof(int64_t));
    int64_t *row = br_malloc((size_t)m->n * sizeof(int64_t));
    JHashSet h;
    /* a recode map is a new HashMap<>(), a bag_of_words dictionary a new
       HashMap<>(estimated distinct count), 0 unless SystemDS's
       partitioned multi-threaded build estimated it from a sample */
    if (bow) jhs_init_cap(&h, 0);
    else jhs_init(&h);
    bool ok = byc && ord && row;
    /* entries by code (encoding assigns the codes 1..n, each once) */
    for (int64_t x = 0; ok && x < m->n; x++) byc[m->code[x] - 1] = x;
    for (int64_t k = 0; ok && k < m->n; k++) ok = jhs_add_str(&h, m->tok[byc[k]]) >= 0;
    if (ok) {
        jhs_order(&h, ord);   /* insertion ranks = codes - 1 */
        for (int64_t r = 0; r < m->n; r++) row[byc[ord[r]]] = r;
    }
    jhs_free(&h);
    free(byc);
    free(ord);
    if (!ok) {
        free(row);
        br_err(e, BR_ENOMEM, "out of memory");
        return NULL;
    }
    return row;
}

/* The spec's "udf" and its columns' output ranges (after layout). */
static int take_udf(const Tf *t, TfUdf *u, BrErr *e)
{
    if (!u) return 0;
    memset(u, 0, sizeof *u);
    if (!t->udf_name) return 0;
    u->start = br_calloc((size_t)(t->n > 0 ? t->n : 1), sizeof(int64_t));
    u->width = br_calloc((size_t)(t->n > 0 ? t->n : 1), sizeof(int64_t));
    u->name = br_strdup(t->udf_name);
    if (!u->start || !u->width || !u->name) { tf_udf_free(u); return br_err(e, BR_ENOMEM, "out of memory"); }
    for (int64_t j = 0; j < t->n; j++)
        if (t->c[j].udf) {
            u->start[u->n] = t->c[j].out0;
            u->width[u->n++] = t->c[j].width;
        }
    return 0;
}

void tf_udf_free(TfUdf *u)
{
    if (!u) return;
    free(u->name);
    free(u->start);
    free(u->width);
    memset(u, 0, sizeof *u);
}

int tf_encode(const FB *f, const char *spec, MB **xo, FB **mo, TfUdf *udf, BrErr *e)
{
    if (udf) memset(udf, 0, sizeof *udf);
    Tf t;
    *xo = NULL;
    *mo = NULL;
    bool *keep = br_calloc((size_t)(f->rows > 0 ? f->rows : 1), 1);
    if (!keep) return br_err(e, BR_ENOMEM, "out of memory");
    FB *m = NULL;
    MB *x = NULL;
    if (tf_parse(&t, spec, f, "transformencode", e)) goto out;
    int64_t nkeep = kept_rows(&t, f, keep);
    int64_t mrows = 0;
    for (int64_t j = 0; j < t.n; j++) {
        if (build_impute(&t, f, j, keep, e) || build_col(&t, f, j, keep, e)) goto out;
        int64_t k = t.c[j].recode || t.c[j].bow ? t.c[j].map.n : t.c[j].bin ? t.c[j].nb : t.c[j].hash ? 1 : 0;
        if (k > mrows) mrows = k;
    }
    if (!(x = encode_rows(&t, f, keep, nkeep, e)) || take_udf(&t, udf, e)) goto out;
    /* the metadata frame */
    if (!(m = fb_new(mrows, f->cols, NULL, e))) goto out;
    for (int64_t j = 0; j < t.n; j++) {
        TfCol *c = &t.c[j];
        if (f->named && fb_set_name(m, j, f->names[j], e)) goto out;
        if (c->impute && c->ivalue && fb_set_mv(m, j, c->ivalue, e)) goto out;
        /* ColumnMetadata's distinct count, as SystemDS's encoders set it:
           recode its number of distinct values, bin its number of bins */
        if (fb_set_nd(m, j, c->recode ? c->map.n : c->bin ? c->nb : -1, e)) goto out;
        char buf[96], a[40], b[40];
        /* the rows in the order SystemDS's getMetaData writes them, its
           HashMap<String, Integer>'s iteration order (keys put in code
           order), not by code; a bag_of_words dictionary alike */
        bool dict = c->recode || c->bow;
        int64_t *row = NULL;
        if (dict && c->map.n > 0 && !(row = recode_rows(&c->map, c->bow, e))) goto out;
        for (int64_t k = 0; dict && k < c->map.n; k++) {
            char code[32];
            fmt_int(c->map.code[k], code, sizeof code);
            size_t lt = strlen(c->map.tok[k]), ls = strlen(TF_SEP), lc = strlen(code);
            char *s = br_malloc(lt + ls + lc + 1);
            if (!s) { free(row); br_err(e, BR_ENOMEM, "out of memory"); goto out; }
            memcpy(s, c->map.tok[k], lt);
            memcpy(s + lt, TF_SEP, ls);
            memcpy(s + lt + ls, code, lc + 1);
            int rc = fb_set_text(m, row[k], j, s, strlen(s), e);
            free(s);
            if (rc) { free(row); goto out; }
        }
        free(row);
        if (c->hash) {
            fmt_int(t.K, buf, sizeof buf);   /* SystemDS keeps K in row 1 */
            if (fb_set_text(m, 0, j, buf, strlen(buf), e)) goto out;
        }
        for (int64_t k = 0; c->bin && k < c->nb; k++) {
            fmt_double(c->bmin[k], a, sizeof a);
            fmt_double(c->bmax[k], b, sizeof b);
            snprintf(buf, sizeof buf, "%s" TF_SEP "%s", a, b);
            if (fb_set_text(m, k, j, buf, strlen(buf), e)) goto out;
        }
    }
    *xo = x;
    *mo = m;
    x = NULL;
    m = NULL;
out:
    mb_release(x);
    fb_release(m);
    tf_free(&t);
    free(keep);
    if (e->code) tf_udf_free(udf);
    return e->code;
}

/* Checks that meta M fits a frame with `cols` columns. */
static int check_meta(const char *what, const FB *m, int64_t cols, BrErr *e)
{
    if (m->cols != cols)
        return br_err(e, BR_EDIM, "%s: dimension mismatch: the metadata frame has %lld columns, the data %lld", what,
                      (long long)m->cols, (long long)cols);
    return 0;
}

MB *tf_apply(const FB *f, const char *spec, const FB *m, const MB *emb, TfUdf *udf, BrErr *e)
{
    if (udf) memset(udf, 0, sizeof *udf);
    Tf t;
    MB *x = NULL;
    bool *keep = br_calloc((size_t)(f->rows > 0 ? f->rows : 1), 1);
    if (!keep) { br_err(e, BR_ENOMEM, "out of memory"); return NULL; }
    if (check_meta("transformapply", m, f->cols, e)) { free(keep); return NULL; }
    if (tf_parse(&t, spec, f, "transformapply", e)) goto out;
    t.emb = emb;
    int64_t nkeep = kept_rows(&t, f, keep);
    for (int64_t j = 0; j < t.n; j++) {
        if (t.c[j].wemb && !emb) {
            br_err(e, BR_EARG, "transformapply: word_embedding (column '%s') needs embedding=, the embedding matrix",
                   f->names[j]);
            goto out;
        }
        TfCol *c = &t.c[j];
        if (load_col(&t, m, j, e)) goto out;
        /* an imputation value missing from M is built from this data */
        if (c->impute && c->impute != IM_CONST && !(m->mv && m->mv[j]) && build_impute(&t, f, j, keep, e)) goto out;
        /* SystemDS's MultiColumnEncoder.apply resets every dummycoded
           domain (updateAllDCEncoders): the recode map's number of lines
           (at least 1), the spec's numbins, or K */
        if (c->dummy && !c->hash) c->dwidth = c->recode ? (c->map.n > 0 ? c->map.n : 1) : c->nbins;
    }
    x = encode_rows(&t, f, keep, nkeep, e);
    if (x && take_udf(&t, udf, e)) { mb_release(x); x = NULL; }
out:
    tf_free(&t);
    free(keep);
    return x;
}

FB *tf_decode(const MB *x, const char *spec, const FB *m, BrErr *e)
{
    Tf t;
    FB *f = NULL;
    FbType *types = NULL;
    if (tf_parse(&t, spec, m, "transformdecode", e)) goto out;
    for (int64_t j = 0; j < t.n; j++) {
        if (t.c[j].bow) {
            /* SystemDS's DecoderFactory has no bag_of_words decoder */
            br_err(e, BR_EARG, "transformdecode: bag_of_words (column '%s') cannot be decoded", m->names[j]);
            goto out;
        }
        if (load_col(&t, m, j, e)) goto out;
        meta_domain(&t.c[j], m, j);
    }
    int64_t ncol = layout(&t);
    bool dummy = false;
    for (int64_t j = 0; j < t.n; j++) dummy = dummy || t.c[j].dummy;
    /* without dummy coding, SystemDS's DecoderFactory decodes the first
       min(ncol(meta), ncol(x)) columns: a matrix with more columns than the
       metadata decodes its leading ones (entity-clustering.dml decodes
       cbind(row, col, value) with the metadata of two columns) */
    if (ncol != x->cols && (dummy || x->cols < ncol)) {
        br_err(e, BR_EDIM, "transformdecode: dimension mismatch: the matrix has %lld columns, the spec and metadata give %lld",
               (long long)x->cols, (long long)ncol);
        goto out;
    }
    types = br_calloc((size_t)(t.n > 0 ? t.n : 1), sizeof(FbType));
    if (!types) { br_err(e, BR_ENOMEM, "out of memory"); goto out; }
    for (int64_t j = 0; j < t.n; j++) {
        TfCol *c = &t.c[j];
        types[j] = c->recode ? FB_STRING : FB_FP64;
        if (c->recode) {
            c->bytok = br_calloc((size_t)(c->maxcode > 0 ? c->maxcode : 1), sizeof(char *));
            if (!c->bytok) { br_err(e, BR_ENOMEM, "out of memory"); goto out; }
            for (int64_t k = 0; k < c->map.n; k++) c->bytok[c->map.code[k] - 1] = c->map.tok[k];
        }
    }
    if (!(f = fb_new(x->rows, t.n, types, e))) goto out;
    for (int64_t j = 0; j < t.n; j++)
        if (m->named && fb_set_name(f, j, m->names[j], e)) goto out;
    for (int64_t i = 0; i < x->rows; i++) {
        for (int64_t j = 0; j < t.n; j++) {
            TfCol *c = &t.c[j];
            double v;
            if (c->dummy) { /* the group's first non-zero column, as SystemDS's DecoderDummycode */
                int64_t best = -1;
                for (int64_t k = 0; k < c->width && best < 0; k++)
                    if (mb_get(x, i, c->out0 + k) != 0) best = k;
                v = best < 0 ? NAN : (double)(best + 1);
            } else {
                v = mb_get(x, i, c->out0);
            }
            if (c->recode) {
                int64_t k = isnan(v) ? -1 : (int64_t)llround(v);
                const char *s = k >= 1 && k <= c->maxcode ? c->bytok[k - 1] : NULL;
                if (s && fb_set_text(f, i, j, s, strlen(s), e)) goto out;
            } else if (c->bin && !isnan(v)) {
                int64_t k = (int64_t)llround(v);
                if (k < 1 || k > c->nb) v = NAN;
                else {
                    double lo = c->bmin[k - 1], hi = c->bmax[k - 1];
                    v = lo + (hi - lo) / 2 + (v - (double)k) * (hi - lo);
                }
                f->c[j]->d[i] = v;
            } else {
                f->c[j]->d[i] = v;
            }
        }
    }
    free(types);
    tf_free(&t);
    return f;
out:
    fb_release(f);
    free(types);
    tf_free(&t);
    return NULL;
}

/* The output columns of dummycoded column j in SystemDS's
 * CategoricalMask.distinctCount: K when hashed, else a first cell
 * "¿N" (N), else the metadata's distinct count, 0 when it has none. */
static int64_t mask_width(const Tf *t, const FB *m, int64_t j)
{
    if (t->c[j].hash) return t->K;
    const char *v = m->rows > 0 && m->c[j]->type == FB_STRING ? m->c[j]->s[0] : NULL;
    if (v && !strncmp(v, "\xc2\xbf", 2) && v[2]) {
        double d;
        return fb_parse_num(v + 2, strlen(v + 2), &d) && d >= 0 ? (int64_t)d : 0;
    }
    int64_t nd = fb_nd(m, j);
    return nd > 0 ? nd : 0;
}

MB *tf_catmask(const FB *m, const char *spec, BrErr *e)
{
    Tf t;
    MB *x = NULL;
    if (tf_parse(&t, spec, m, "getCategoricalMask", e)) goto out;
    if (!t.ids) {
        br_err(e, BR_EARG, "getCategoricalMask: only specs with \"ids\": true are supported (as in SystemDS)");
        goto out;
    }
    /* SystemDS's UNSUPPORTED_MASK_METHODS */
    const char *bad = t.udf_name ? "udf" : NULL;
    for (int64_t j = 0; j < t.n && !bad; j++)
        bad = t.c[j].bin ? "bin" : t.c[j].wemb ? "word_embedding" : t.c[j].bow ? "bag_of_words" : NULL;
    if (bad) {
        br_err(e, BR_EARG, "getCategoricalMask: unsupported transform method '%s' (as in SystemDS)", bad);
        goto out;
    }
    int64_t total = 0;
    for (int64_t j = 0; j < t.n; j++) total += t.c[j].dummy ? mask_width(&t, m, j) : 1;
    if (!(x = mb_dense(1, total, e))) goto out;
    int64_t o = 0;
    for (int64_t j = 0; j < t.n; j++) {
        const TfCol *c = &t.c[j];
        int64_t w = c->dummy ? mask_width(&t, m, j) : 1;
        double v = c->recode || c->hash || c->dummy;
        for (int64_t k = 0; k < w; k++) x->d[o++] = v;
    }
    mb_recount_nnz(x);
out:
    tf_free(&t);
    return x;
}

MB *tf_colmap(const FB *m, const char *spec, BrErr *e)
{
    Tf t;
    MB *x = NULL;
    if (tf_parse(&t, spec, m, "transformcolmap", e)) goto out;
    for (int64_t j = 0; j < t.n; j++) {
        if (load_col(&t, m, j, e)) goto out;
        meta_domain(&t.c[j], m, j);
    }
    layout(&t);
    if (!(x = mb_dense(t.n, 3, e))) goto out;
    for (int64_t j = 0; j < t.n; j++) {
        x->d[3 * j] = (double)(j + 1);
        x->d[3 * j + 1] = (double)(t.c[j].out0 + 1);
        x->d[3 * j + 2] = (double)(t.c[j].out0 + t.c[j].width);
    }
    mb_recount_nnz(x);
out:
    tf_free(&t);
    return x;
}
