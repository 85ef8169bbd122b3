/* tfmeta.c: transformmeta(spec, transformPath, sep): reads transform
 * metadata that an earlier file-based transform left in a directory and
 * builds the metadata frame transformapply/transformdecode take
 * (transform.h describes that frame). SystemDS's layout of the directory:
 *
 *   column.names           the column names joined by sep (default ",")
 *   Recode/<name>.map      one line per token: "token",code[,count]
 *   Recode/<name>.ndistinct  the number of tokens
 *   Bin/<name>.bin         id,min,max,binwidth,nbins
 *   Impute/<name>.impute   id,value
 *
 * As SystemDS: the frame has one STRING column per name and as many rows
 * as the largest ndistinct / nbins over all columns with such files; only
 * the spec's recoded/dummycoded columns get their map ("token·code" per
 * line, in file order) and only its binned columns their bins
 * ("lo·hi" with lo = min + i binwidth, hi = min + (i+1) binwidth, printed
 * as Java's Double.toString); every impute file sets the column's missing
 * value metadata to its second field. A file's text is its lines joined
 * by "\n" (the last line break dropped), as HDFSTool reads it. */
#include "transform.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../matrix/format.h"

#define TF_SEP "\xc2\xb7" /* U+00B7, SystemDS's Lop.DATATYPE_PREFIX */

/* A file's text with CR LF as LF and the final line break dropped; NULL
 * with *exists false when there is no such file. */
static char *read_text(const char *path, bool *exists, BrErr *e)
{
    *exists = false;
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        if (errno != ENOENT) br_err(e, BR_EIO, "transformmeta: cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    *exists = true;
    size_t cap = 256, n = 0;
    char *s = br_malloc(cap);
    int c;
    while (s && (c = fgetc(fp)) != EOF) {
        if (n + 2 > cap) {
            char *t = br_realloc(s, cap *= 2);
            if (!t) { free(s); s = NULL; break; }
            s = t;
        }
        s[n++] = (char)c;
    }
    fclose(fp);
    if (!s) { br_err(e, BR_ENOMEM, "out of memory"); return NULL; }
    s[n] = 0;
    size_t w = 0;   /* CR LF -> LF, as BufferedReader.readLine splits */
    for (size_t i = 0; i < n; i++)
        if (!(s[i] == '\r' && s[i + 1] == '\n')) s[w++] = s[i];
    if (w > 0 && (s[w - 1] == '\n' || s[w - 1] == '\r')) w--;
    s[w] = 0;
    return s;
}

/* Java's String.trim: drops chars <= ' ' at both ends (in place). */
static char *jtrim(char *s)
{
    while (*s && (unsigned char)*s <= ' ') s++;
    size_t n = strlen(s);
    while (n > 0 && (unsigned char)s[n - 1] <= ' ') s[--n] = 0;
    return s;
}

/* The i-th field of s split at sep (whole separator, all tokens kept),
 * copied into buf; false when s has fewer fields. */
static bool field(const char *s, const char *sep, int i, char *buf, size_t cap)
{
    size_t k = strlen(sep);
    for (; i > 0; i--) {
        const char *p = strstr(s, sep);
        if (!p) return false;
        s = p + k;
    }
    const char *p = strstr(s, sep);
    size_t n = p ? (size_t)(p - s) : strlen(s);
    if (n >= cap) n = cap - 1;
    memcpy(buf, s, n);
    buf[n] = 0;
    return true;
}

typedef struct {
    char *path;            /* the metadata directory */
    int64_t n;             /* columns */
    char **names;          /* column names (pointers into namebuf) */
    char *namebuf;
    char **map;            /* per column: recode map or bin text (owned) */
    bool *isbin;           /* map[j] came from Bin/ (it replaces a Recode/ one) */
    char **mv;             /* per column: impute file text (owned) */
    bool *rc, *bin;        /* the spec's recoded / binned columns */
    int64_t rows;
} Meta;

static void meta_free(Meta *m)
{
    for (int64_t j = 0; j < m->n; j++) {
        if (m->map) free(m->map[j]);
        if (m->mv) free(m->mv[j]);
    }
    free(m->map); free(m->mv); free(m->isbin); free(m->rc); free(m->bin);
    free(m->names); free(m->namebuf); free(m->path);
}

/* The text of <path>/<dir>/<name><suffix>, NULL when absent. */
static char *col_file(const Meta *m, const char *dir, const char *name, const char *suffix, bool *exists,
                      char *fn, size_t fncap, BrErr *e)
{
    snprintf(fn, fncap, "%s/%s/%s%s", m->path, dir, name, suffix);
    return read_text(fn, exists, e);
}

/* A non-negative integer count from file fn's text (Integer.parseInt). */
static int parse_count(const char *s, const char *fn, int64_t *out, BrErr *e)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || errno || v < 0 || v > INT32_MAX)
        return br_err(e, BR_EARG, "transformmeta: %s: \"%.40s\" is not a count", fn, s);
    *out = v;
    return 0;
}

/* Reads column.names and each column's Recode/Bin/Impute files. */
static int load_dir(Meta *m, const char *sep, BrErr *e)
{
    char fn[4096];
    bool ex;
    snprintf(fn, sizeof fn, "%s/column.names", m->path);
    m->namebuf = read_text(fn, &ex, e);
    if (!m->namebuf) return e->code ? e->code : br_err(e, BR_EIO, "transformmeta: %s does not exist", fn);
    if (!*sep) return br_err(e, BR_EARG, "transformmeta: sep must not be empty");
    char *s = jtrim(m->namebuf);
    m->n = 1;
    for (const char *p = strstr(s, sep); p; p = strstr(p + strlen(sep), sep)) m->n++;
    size_t n = (size_t)m->n;
    m->names = br_calloc(n, sizeof(char *));
    m->map = br_calloc(n, sizeof(char *));
    m->mv = br_calloc(n, sizeof(char *));
    m->isbin = br_calloc(n, sizeof(bool));
    m->rc = br_calloc(n, sizeof(bool));
    m->bin = br_calloc(n, sizeof(bool));
    if (!m->names || !m->map || !m->mv || !m->isbin || !m->rc || !m->bin) return br_err(e, BR_ENOMEM, "out of memory");
    for (int64_t j = 0; j < m->n; j++) {
        m->names[j] = s;
        char *p = strstr(s, sep);
        if (p) { *p = 0; s = p + strlen(sep); }
    }
    for (int64_t j = 0; j < m->n; j++) {
        const char *nm = m->names[j];
        int64_t k;
        char *t = col_file(m, "Recode", nm, ".map", &ex, fn, sizeof fn, e);
        if (e->code) return e->code;
        if (ex) {
            m->map[j] = t;
            char *nd = col_file(m, "Recode", nm, ".ndistinct", &ex, fn, sizeof fn, e);
            if (!nd) return e->code ? e->code : br_err(e, BR_EIO, "transformmeta: %s does not exist", fn);
            int rc = parse_count(nd, fn, &k, e);
            free(nd);
            if (rc) return rc;
            if (k > m->rows) m->rows = k;
        }
        t = col_file(m, "Bin", nm, ".bin", &ex, fn, sizeof fn, e);
        if (e->code) return e->code;
        if (ex) {
            free(m->map[j]);
            m->map[j] = t;
            m->isbin[j] = true;
            char f4[64];
            if (!field(t, ",", 4, f4, sizeof f4))
                return br_err(e, BR_EARG, "transformmeta: %s: expected id,min,max,binwidth,nbins", fn);
            if (parse_count(f4, fn, &k, e)) return e->code;
            if (k > m->rows) m->rows = k;
        }
        m->mv[j] = col_file(m, "Impute", nm, ".impute", &ex, fn, sizeof fn, e);
        if (e->code) return e->code;
    }
    return 0;
}

/* Marks the columns one spec entry names: an object {"attributes": [..]}
 * holds 1-based ids (file-based transforms write them so); a plain list
 * holds ids when "ids" is true, else names; "bin" as a list holds
 * objects with "id" or "name". */
static int mark(Meta *m, const cJSON *root, const char *key, bool ids, bool *sel, BrErr *e)
{
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!g) return 0;
    bool objs = false;
    if (cJSON_IsObject(g)) {
        g = cJSON_GetObjectItemCaseSensitive(g, "attributes");
        ids = true;
    } else if (!strcmp(key, "bin")) {
        objs = true;
    }
    if (!cJSON_IsArray(g)) return br_err(e, BR_EARG, "transformmeta: spec entry \"%s\" must be a list", key);
    const cJSON *x;
    cJSON_ArrayForEach(x, g) {
        const cJSON *it = x;
        bool byid = ids;
        if (objs) {
            it = cJSON_GetObjectItemCaseSensitive(x, ids ? "id" : "name");
            if (!it) return br_err(e, BR_EARG, "transformmeta: a \"bin\" entry needs \"%s\"", ids ? "id" : "name");
        }
        int64_t j = -1;
        if (byid) {
            if (cJSON_IsNumber(it) && it->valuedouble == floor(it->valuedouble)) j = (int64_t)it->valuedouble - 1;
            if (j < 0 || j >= m->n)
                return br_err(e, BR_EARG, "transformmeta: column id %g of \"%s\" is not among the %lld columns of %s/column.names",
                              cJSON_IsNumber(it) ? it->valuedouble : NAN, key, (long long)m->n, m->path);
        } else {
            for (int64_t k = 0; cJSON_IsString(it) && k < m->n && j < 0; k++)
                if (!strcmp(m->names[k], it->valuestring)) j = k;
            if (j < 0)
                return br_err(e, BR_EARG, "transformmeta: specified column '%s' does not exist",
                              cJSON_IsString(it) ? it->valuestring : "?");
        }
        sel[j] = true;
    }
    return 0;
}

static int parse_spec(Meta *m, const char *spec, BrErr *e)
{
    char *js = tf_lenient_json(spec);
    cJSON *root = js ? cJSON_Parse(js) : NULL;
    free(js);
    if (!root || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return br_err(e, BR_EARG, "transformmeta: the spec is not a JSON object: \"%.60s\"", spec);
    }
    bool ids = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "ids"));
    int rc = mark(m, root, "recode", ids, m->rc, e);
    if (!rc) rc = mark(m, root, "dummycode", ids, m->rc, e);
    if (!rc) rc = mark(m, root, "bin", ids, m->bin, e);
    cJSON_Delete(root);
    return rc;
}

/* Column j's recode map lines "token",code,... as "token·code" cells. */
static int fill_recode(const Meta *m, FB *f, int64_t j, BrErr *e)
{
    if (!m->map[j])
        return br_err(e, BR_EARG, "transformmeta: recode map for column '%s' (id=%lld) not existing in %s/Recode",
                      m->names[j], (long long)j + 1, m->path);
    int64_t r = 0;
    const char *s = m->map[j];
    for (int64_t line = 1; *s || line == 1; line++) {
        const char *nl = strchr(s, '\n');
        size_t len = nl ? (size_t)(nl - s) : strlen(s);
        const char *q = NULL;
        for (size_t i = 0; i < len; i++)
            if (s[i] == '"') q = s + i;
        if (!q || q == s || q + 1 >= s + len || q[1] != ',')
            return br_err(e, BR_EARG, "transformmeta: %s/%s/%s.%s:%lld: expected \"token\",code", m->path,
                          m->isbin[j] ? "Bin" : "Recode", m->names[j], m->isbin[j] ? "bin" : "map", (long long)line);
        const char *tok = s + (*s == '"' ? 1 : 0);   /* UtilFunctions.unquote */
        size_t tlen = (size_t)(q - tok) + (*s == '"' ? 0 : 1);
        const char *id = q + 2, *end = id;
        while (end < s + len && *end != ',') end++;
        if (r >= f->rows)
            return br_err(e, BR_EARG, "transformmeta: %s/Recode/%s.map has more lines than its .ndistinct says",
                          m->path, m->names[j]);
        size_t clen = tlen + strlen(TF_SEP) + (size_t)(end - id);
        char *cell = br_malloc(clen + 1);
        if (!cell) return br_err(e, BR_ENOMEM, "out of memory");
        snprintf(cell, clen + 1, "%.*s" TF_SEP "%.*s", (int)tlen, tok, (int)(end - id), id);
        int rc = fb_set_text(f, r++, j, cell, clen, e);
        free(cell);
        if (rc) return rc;
        if (!nl) break;
        s = nl + 1;
    }
    return fb_set_nd(f, j, r, e);   /* TfMetaUtils: the lines read */
}

/* Column j's bins from "id,min,max,binwidth,nbins". */
static int fill_bins(const Meta *m, FB *f, int64_t j, BrErr *e)
{
    if (!m->map[j] || !m->isbin[j])
        return br_err(e, BR_EARG, "transformmeta: binning map for column '%s' (id=%lld) not existing in %s/Bin",
                      m->names[j], (long long)j + 1, m->path);
    char f1[64], f3[64], f4[64];
    double lo, w, nb;
    if (!field(m->map[j], ",", 1, f1, sizeof f1) || !field(m->map[j], ",", 3, f3, sizeof f3) ||
        !field(m->map[j], ",", 4, f4, sizeof f4) || !fb_parse_num(f1, strlen(f1), &lo) ||
        !fb_parse_num(f3, strlen(f3), &w) || !fb_parse_num(f4, strlen(f4), &nb))
        return br_err(e, BR_EARG, "transformmeta: %s/Bin/%s.bin: expected id,min,max,binwidth,nbins", m->path,
                      m->names[j]);
    if (nb > (double)f->rows)   /* load_dir counted the same field: a guard */
        return br_err(e, BR_EARG, "transformmeta: %s/Bin/%s.bin: %g bins", m->path, m->names[j], nb);
    for (int64_t i = 0; i < (int64_t)nb; i++) {
        char a[64], b[64], cell[160];
        fmt_double(lo + (double)i * w, a, sizeof a);
        fmt_double(lo + (double)(i + 1) * w, b, sizeof b);
        int n = snprintf(cell, sizeof cell, "%s" TF_SEP "%s", a, b);
        if (fb_set_text(f, i, j, cell, (size_t)n, e)) return e->code;
    }
    return fb_set_nd(f, j, (int64_t)nb, e);   /* TfMetaUtils: nbins */
}

static FB *build(const Meta *m, BrErr *e)
{
    FbType *types = br_malloc((size_t)m->n * sizeof(FbType));
    if (!types) { br_err(e, BR_ENOMEM, "out of memory"); return NULL; }
    for (int64_t j = 0; j < m->n; j++) types[j] = FB_STRING;
    FB *f = fb_new(m->rows, m->n, types, e);
    free(types);
    for (int64_t j = 0; f && j < m->n; j++) {
        int rc = fb_set_name(f, j, m->names[j], e);
        if (!rc && m->rc[j]) rc = fill_recode(m, f, j, e);
        if (!rc && m->bin[j]) rc = fill_bins(m, f, j, e);
        if (!rc && m->mv[j]) {
            char v[256];
            if (!field(m->mv[j], ",", 1, v, sizeof v))
                rc = br_err(e, BR_EARG, "transformmeta: %s/Impute/%s.impute: expected id,value", m->path, m->names[j]);
            else
                rc = fb_set_mv(f, j, v, e);
        }
        if (rc) { fb_release(f); f = NULL; }
    }
    return f;
}

FB *tf_meta(const char *spec, const char *path, const char *sep, BrErr *e)
{
    Meta m;
    memset(&m, 0, sizeof m);
    m.path = br_strdup(path);
    FB *f = NULL;
    if (!m.path) br_err(e, BR_ENOMEM, "out of memory");
    else if (!load_dir(&m, sep, e) && !parse_spec(&m, spec, e)) f = build(&m, e);
    meta_free(&m);
    return f;
}
