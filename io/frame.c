/* frame.c: frames in files (csv and text) with their .mtd sidecar.
 *
 * csv: one record per line, fields split by the separator; a field that
 * starts with '"' is quoted (RFC 4180: "" inside stands for one quote, the
 * separator and line breaks may occur inside). An empty unquoted field, or
 * one equal to a naString, is a missing value; a quoted empty field ("")
 * is the empty string. With header=TRUE the first record names the
 * columns. Blank lines are skipped, except in a one-column frame, where
 * every line is a record (a blank one holds a missing value).
 * Writing quotes strings that contain the separator, a quote, a line
 * break, or are empty; missing values are empty fields.
 * text: lines "i j value" (1-based; the value is the rest of the line);
 * missing cells are not written.
 * binary (and "sysds-binary"): SystemDS's layout, a Hadoop sequence file
 * of FrameBlock records (sysframe.c); the .mtd says "binary" and the
 * block size. braid-binary: braid's own layout, read under any of the
 * three names (SystemDS's starts with "SEQ"; a folder is SystemDS's part
 * files): (host byte order): "BRAIDFB1", uint32 byte
 * order mark, uint32 0, int64 rows, cols; per column a type byte (FbType)
 * and its name (int64 length, bytes); then the columns: FP64 and INT64 as
 * rows 8-byte values, BOOL as rows bytes, STRING as an int64 length per
 * cell (-1: missing) followed by its bytes. Names survive a round trip.
 * The .mtd of a frame says data_type "frame" and adds "schema", the value
 * types joined by commas ("STRING,FP64,INT64,BOOLEAN").
 * Parsing is sequential (frames hold strings; the matrix readers are the
 * fast path).
 */
#include "ioint.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <strings.h>
#include <unistd.h>

void io_frame_read_opts_init(IoFrameReadOpts *o)
{
    memset(o, 0, sizeof *o);
    o->rows = o->cols = -1;
    o->header = -1;
}

/* ---- the frame parts of the .mtd ---- */

/* Reads "schema" (a string, or an array of strings) and "na.strings" /
 * "naStrings" of path.mtd. *schema: malloc'd comma-joined text or NULL;
 * *na: malloc'd array of malloc'd strings (*nna entries). */
static int mtd_extras(const char *path, char **schema, char ***na, int *nna, BrErr *e)
{
    *schema = NULL;
    *na = NULL;
    *nna = 0;
    size_t n = strlen(path);
    char *mp = br_malloc(n + 6);   /* the .mtd's name, then the .dict's */
    if (!mp) return br_err(e, BR_ENOMEM, "out of memory");
    memcpy(mp, path, n);
    memcpy(mp + n, ".mtd", 5);
    if (!io_exists(mp)) { free(mp); return 0; }
    IoBuf b;
    if (io_load(mp, &b, e)) { free(mp); return e->code; }
    cJSON *root = cJSON_ParseWithLength(b.p, b.n);
    io_buf_free(&b);
    if (!root) { free(mp); return 0; } /* io_read_mtd reports malformed JSON */
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "schema");
    IoStr t = {0};
    if (cJSON_IsString(s)) {
        io_str_printf(&t, "%s", s->valuestring);
    } else if (cJSON_IsArray(s)) {
        const cJSON *it;
        cJSON_ArrayForEach(it, s) {
            if (!cJSON_IsString(it)) { br_err(e, BR_EIO, "%s: \"schema\" must hold strings", mp); break; }
            io_str_printf(&t, "%s%s", t.n ? "," : "", it->valuestring);
        }
    } else if (s && !cJSON_IsNull(s)) {
        br_err(e, BR_EIO, "%s: field \"schema\" must be a string", mp);
    }
    if (!e->code && t.p) *schema = br_strdup(t.p);
    io_str_free(&t);
    const cJSON *ns = cJSON_GetObjectItemCaseSensitive(root, "na.strings");
    if (!ns) ns = cJSON_GetObjectItemCaseSensitive(root, "naStrings");
    if (!e->code && ns) {
        int k = cJSON_IsArray(ns) ? cJSON_GetArraySize(ns) : 1;
        *na = br_calloc((size_t)k + 1, sizeof(char *));
        if (cJSON_IsArray(ns)) {
            const cJSON *it;
            cJSON_ArrayForEach(it, ns)
                if (cJSON_IsString(it) && *na) (*na)[(*nna)++] = br_strdup(it->valuestring);
        } else if (cJSON_IsString(ns) && *na) {
            (*na)[(*nna)++] = br_strdup(ns->valuestring);
        }
    }
    cJSON_Delete(root);
    free(mp);
    return e->code;
}

/* Parses a schema text "T1,T2,..." into cols types (one entry applies to
 * every column; "" or NULL means all strings). Empty entries at the end
 * are dropped, as SystemDS's split of the text drops them ("STRING," is
 * one STRING: its sherlock label encoding's .mtd). *types is malloc'd. */
static int parse_schema(const char *s, int64_t cols, FbType **types, const char *path, BrErr *e)
{
    *types = br_calloc((size_t)(cols > 0 ? cols : 1), sizeof(FbType));
    if (!*types) return br_err(e, BR_ENOMEM, "out of memory");
    if (!s || !*s) return 0;
    size_t len = strlen(s);
    while (len > 0 && s[len - 1] == ',') len--;
    if (!len) return 0;
    int64_t k = 0;
    const char *p = s, *end = s + len;
    for (;;) {
        const char *q = memchr(p, ',', (size_t)(end - p));
        size_t n = q ? (size_t)(q - p) : (size_t)(end - p);
        FbType t;
        if (!fb_type_parse(p, n, &t))
            return br_err(e, BR_EARG, "read %s: unknown value type \"%.*s\" in the schema", path, (int)BR_MIN(n, 40), p);
        if (k < cols) (*types)[k] = t;
        k++;
        if (!q) break;
        p = q + 1;
    }
    if (k == 1) {
        for (int64_t j = 1; j < cols; j++) (*types)[j] = (*types)[0];
        return 0;
    }
    if (k != cols)
        return br_err(e, BR_EDIM, "read %s: dimension mismatch: the schema has %lld types for %lld columns",
                      path, (long long)k, (long long)cols);
    return 0;
}

/* ---- csv records ---- */

typedef struct CsvIn {
    const char *p, *end;     /* the buffer */
    const char *sep;
    size_t sl;
} CsvIn;

/* The end of the record starting at p (the '\n' that ends it, outside
 * quotes). */
static const char *record_end(const CsvIn *in, const char *p)
{
    bool field_start = true, quoted = false;
    while (p < in->end) {
        char c = *p;
        if (quoted) {
            if (c == '"') {
                if (p + 1 < in->end && p[1] == '"') p++;
                else quoted = false;
            }
            p++;
            continue;
        }
        if (c == '\n') return p;
        if (field_start && c == '"') { quoted = true; field_start = false; p++; continue; }
        if ((size_t)(in->end - p) >= in->sl && !memcmp(p, in->sep, in->sl)) {
            field_start = true;
            p += in->sl;
            continue;
        }
        field_start = false;
        p++;
    }
    return in->end;
}

/* One field of a record: its text unquoted into buf (IoStr), whether it
 * was quoted. Returns the position after the field's separator, or the
 * record end (*last set); NULL when buf cannot hold the rest of the
 * record (out of memory). buf has room for a terminating 0 after it. */
static const char *next_field(const CsvIn *in, const char *p, const char *rend, IoStr *buf, bool *quoted,
                              bool *last)
{
    buf->n = 0;
    *quoted = false;
    if (!io_str_reserve(buf, (size_t)(rend > p ? rend - p : 0) + 1)) return NULL;
    if (p < rend && *p == '"') {
        *quoted = true;
        p++;
        while (p < rend) {
            if (*p == '"') {
                if (p + 1 < rend && p[1] == '"') { io_str_putc(buf, '"'); p += 2; continue; }
                p++;
                break;
            }
            io_str_putc(buf, *p++);
        }
    }
    while (p < rend) {
        if ((size_t)(rend - p) >= in->sl && !memcmp(p, in->sep, in->sl)) {
            *last = false;
            return p + in->sl;
        }
        io_str_putc(buf, *p++);
    }
    /* a '\r' of a CRLF line end is not part of the last field */
    if (rend > in->p && rend[-1] == '\r' && buf->n && buf->p[buf->n - 1] == '\r') buf->n--;
    *last = true;
    return rend;
}

/* The error of an allocation that failed while reading path. */
static int no_room(const char *path, BrErr *e) { return br_err(e, BR_ENOMEM, "out of memory reading %s", path); }

/* Number of fields of the record [p, rend); -1: out of memory. */
static int64_t record_fields(const CsvIn *in, const char *p, const char *rend, IoStr *buf)
{
    int64_t n = 0;
    bool q, last = false;
    while (!last) {
        if (!(p = next_field(in, p, rend, buf, &q, &last))) return -1;
        n++;
    }
    return n;
}

static bool is_blank(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\r')) p++;
    return p == e;
}

static bool is_na(const IoFrameReadOpts *o, char *const *na2, int nna2, const char *s, size_t n)
{
    for (int k = 0; k < o->n_na; k++)
        if (strlen(o->na_strings[k]) == n && !memcmp(o->na_strings[k], s, n)) return true;
    for (int k = 0; k < nna2; k++)
        if (strlen(na2[k]) == n && !memcmp(na2[k], s, n)) return true;
    return false;
}

/* Reads the csv frame in b. cols0 / rows0: known sizes or -1. */
/* A "#Meta·MV" (nd false) or "#Meta·ND" line: its prefix, then one field
 * per column. As SystemDS's parseMeta, a line with another number of
 * fields is ignored; "null" (what FrameWriterTextCSV writes for no
 * replacement) and "" are no replacement; a distinct count must be an
 * integer. */
static int read_meta_line(const CsvIn *in, const char *q, FB *f, bool nd, const char *path, int64_t line,
                          IoStr *buf, BrErr *e)
{
    const char *re = record_end(in, q);
    int64_t nf = record_fields(in, q, re, buf);
    if (nf < 0) return no_room(path, e);
    if (nf != f->cols + 1) return 0;
    bool quoted, last = false;
    if (!(q = next_field(in, q, re, buf, &quoted, &last))) return no_room(path, e);
    for (int64_t j = 0; j < f->cols && !last; j++) {
        q = next_field(in, q, re, buf, &quoted, &last);
        if (!q) return no_room(path, e);
        buf->p[buf->n] = 0;
        if (nd) {
            char *end;
            errno = 0;
            long long v = strtoll(buf->p, &end, 10);
            if (buf->n == 0 || *end || errno)
                return br_err(e, BR_EIO, "read %s: line %lld: distinct count \"%.40s\" of column %lld is not an "
                              "integer", path, (long long)line, buf->p, (long long)j + 1);
            if (fb_set_nd(f, j, v, e)) return e->code;
        } else if (buf->n && strcmp(buf->p, "null") && fb_set_mv(f, j, buf->p, e)) {
            return e->code;
        }
    }
    return 0;
}

static FB *read_csv(const char *path, const IoBuf *b, const IoFrameReadOpts *o, bool header, const char *sep,
                    int64_t rows0, int64_t cols0, const char *schema, char *const *na2, int nna2, BrErr *e)
{
    CsvIn in = {b->p, b->p + b->n, sep, strlen(sep)};
    if (in.sl == 0) { br_err(e, BR_EARG, "read %s: empty separator", path); return NULL; }
    IoStr buf = {0};
    FB *f = NULL;
    FbType *types = NULL;
    const char **starts = NULL;
    int64_t nrec = 0, cap = 0, cols = cols0, line = 1;
    const char *p = in.p, *hdr = NULL, *hdr_end = NULL;
    /* the header record */
    if (header && p < in.end) {
        hdr = p;
        hdr_end = record_end(&in, p);
        for (const char *q = p; q < hdr_end; q++) line += *q == '\n';
        p = hdr_end < in.end ? hdr_end + 1 : in.end;
        line++;
        int64_t hc = record_fields(&in, hdr, hdr_end, &buf);
        if (hc < 0) { no_room(path, e); goto fail; }
        if (cols >= 0 && hc != cols) {
            br_err(e, BR_EDIM, "read %s: dimension mismatch: the header has %lld columns, expected %lld",
                   path, (long long)hc, (long long)cols);
            goto fail;
        }
        cols = hc;
    }
    /* the record starts; "#Meta" records are SystemDS's ColumnMetadata
       lines (FrameWriterTextCSV), kept apart */
    int64_t first_line = line;
    const char *meta_mv = NULL, *meta_nd = NULL;
    int64_t meta_nd_line = 0;
    for (const char *q = p; q < in.end;) {
        const char *re = record_end(&in, q);
        if (re - q >= 5 && !memcmp(q, "#Meta", 5)) {
            size_t pl = strlen(FB_META_MV);
            if (re - q >= (ptrdiff_t)pl && !memcmp(q, FB_META_MV, pl)) meta_mv = q;
            if (re - q >= (ptrdiff_t)pl && !memcmp(q, FB_META_ND, pl)) {
                meta_nd = q;
                meta_nd_line = first_line;
                for (const char *x = p; x < q; x++) meta_nd_line += *x == '\n';
            }
            q = re < in.end ? re + 1 : in.end;
            continue;
        }
        bool blank = is_blank(q, re);
        if (cols < 0 && !blank && (cols = record_fields(&in, q, re, &buf)) < 0) {
            no_room(path, e);
            goto fail;
        }
        if (!blank || cols == 1) {
            if (nrec == cap) {
                cap = cap ? 2 * cap : 1024;
                const char **ns = br_realloc(starts, (size_t)cap * sizeof(char *));
                if (!ns) { no_room(path, e); goto fail; }
                starts = ns;
            }
            starts[nrec++] = q;
        }
        q = re < in.end ? re + 1 : in.end;
    }
    if (cols < 0) cols = 0;
    if (rows0 >= 0 && nrec > rows0 && cols == 1) nrec = rows0; /* trailing blank lines */
    if (rows0 >= 0 && nrec != rows0) {
        br_err(e, BR_EDIM, "read %s: dimension mismatch: %lld rows found, the metadata says %lld",
               path, (long long)nrec, (long long)rows0);
        goto fail;
    }
    if (parse_schema(schema, cols, &types, path, e)) goto fail;
    if (!(f = fb_new(nrec, cols, types, e))) goto fail;
    if (hdr) {
        const char *q = hdr;
        bool quoted, last = false;
        for (int64_t j = 0; j < cols && !last; j++) {
            if (!(q = next_field(&in, q, hdr_end, &buf, &quoted, &last))) {
                no_room(path, e);
                goto fail;
            }
            buf.p[buf.n] = 0;
            if (fb_set_name(f, j, buf.p, e)) goto fail;
        }
    }
    if ((meta_mv && read_meta_line(&in, meta_mv, f, false, path, 0, &buf, e)) ||
        (meta_nd && read_meta_line(&in, meta_nd, f, true, path, meta_nd_line, &buf, e)))
        goto fail;
    line = first_line;
    const char *lp = p;
    for (int64_t i = 0; i < nrec; i++) {
        for (; lp < starts[i]; lp++) line += *lp == '\n';
        const char *re = record_end(&in, starts[i]);
        const char *q = starts[i];
        bool quoted, last = false;
        int64_t j = 0;
        while (!last) {
            if (!(q = next_field(&in, q, re, &buf, &quoted, &last))) {
                no_room(path, e);
                goto fail;
            }
            if (j >= cols) {
                br_err(e, BR_EDIM, "read %s: line %lld: dimension mismatch: more than %lld fields",
                       path, (long long)line, (long long)cols);
                goto fail;
            }
            bool missing = !quoted && (buf.n == 0 || is_na(o, na2, nna2, buf.p, buf.n));
            if (!missing || f->c[j]->type != FB_STRING) { /* string cells start missing */
                BrErr ce = {0};
                if (fb_set_text(f, i, j, missing ? NULL : (buf.p ? buf.p : ""), missing ? 0 : buf.n, &ce)) {
                    br_err(e, ce.code, "read %s: line %lld: %s", path, (long long)line, ce.msg);
                    goto fail;
                }
            }
            j++;
        }
    }
    free(types);
    free(starts);
    io_str_free(&buf);
    return f;
fail:
    fb_release(f);
    free(types);
    free(starts);
    io_str_free(&buf);
    return NULL;
}

/* A text frame's ColumnMetadata cell of column j: "-1 j nd" (the distinct
 * count) or "-2 j mv" (the replacement: its first token, SystemDS's
 * "·‡·" standing for a space; "null" is none). */
static int text_meta_cell(FB *f, int64_t i, int64_t j, const char *q, const char *le, const char *path,
                          int64_t line, BrErr *e)
{
    const char *te = q;
    while (te < le && *te != ' ') te++;
    size_t n = (size_t)(te - q);
    char *t = br_malloc(n + 1);
    if (!t) return no_room(path, e);
    memcpy(t, q, n);
    t[n] = 0;
    int rc = 0;
    if (i == -1) {
        char *end;
        errno = 0;
        long long v = strtoll(t, &end, 10);
        if (n == 0 || *end || errno)
            rc = br_err(e, BR_EIO, "read %s: line %lld: distinct count \"%.40s\" of column %lld is not an integer",
                        path, (long long)line, t, (long long)j + 1);
        else rc = fb_set_nd(f, j, v, e);
    } else if (n && strcmp(t, "null")) {
        static const char ext[] = "\xc2\xb7\xe2\x80\xa1\xc2\xb7";   /* TfUtils.EXT_SPACE */
        char *w = t;
        for (const char *r = t; *r;) {
            if (!strncmp(r, ext, sizeof ext - 1)) { *w++ = ' '; r += sizeof ext - 1; }
            else *w++ = *r++;
        }
        *w = 0;
        rc = fb_set_mv(f, j, t, e);
    }
    free(t);
    return rc;
}

/* Reads the text (i j value) frame in b; rows and cols must be known. */
static FB *read_text(const char *path, const IoBuf *b, int64_t rows, int64_t cols, const char *schema, BrErr *e)
{
    if (rows < 0 || cols < 0) {
        br_err(e, BR_EARG, "read %s: a text frame needs rows and cols (arguments or .mtd)", path);
        return NULL;
    }
    FbType *types = NULL;
    if (parse_schema(schema, cols, &types, path, e)) return NULL;
    FB *f = fb_new(rows, cols, types, e);
    free(types);
    if (!f) return NULL;
    const char *p = b->p, *end = b->p + b->n;
    int64_t line = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) nl = end;
        line++;
        const char *le = nl > p && nl[-1] == '\r' ? nl - 1 : nl;
        if (!is_blank(p, le)) {
            char *q;
            long long i = strtoll(p, &q, 10), j = strtoll(q, &q, 10);
            if (q < le && *q == ' ') q++;
            if ((i == -1 || i == -2) && j >= 1 && j <= cols) {   /* ColumnMetadata (FrameWriterTextCell) */
                if (text_meta_cell(f, (int64_t)i, (int64_t)j - 1, q, le, path, line, e)) {
                    fb_release(f);
                    return NULL;
                }
                p = nl + 1;
                continue;
            }
            if (i < 1 || i > rows || j < 1 || j > cols) {
                br_err(e, BR_EINDEX, "read %s: line %lld: cell index (%lld, %lld) out of bounds of %lldx%lld",
                       path, (long long)line, i, j, (long long)rows, (long long)cols);
                fb_release(f);
                return NULL;
            }
            BrErr ce = {0};
            if (fb_set_text(f, i - 1, j - 1, q, (size_t)(le - q), &ce)) {
                br_err(e, ce.code, "read %s: line %lld: %s", path, (long long)line, ce.msg);
                fb_release(f);
                return NULL;
            }
        }
        p = nl + 1;
    }
    return f;
}

#define FB_MAGIC "BRAIDFB1"
#define FB_BOM 0x01020304u

/* Takes n bytes at *p of the buffer ending at end; false when truncated. */
static bool take(const char **p, const char *end, void *dst, size_t n)
{
    if ((size_t)(end - *p) < n) return false;
    memcpy(dst, *p, n);
    *p += n;
    return true;
}

/* Reads the binary frame in b (layout above); rows/cols, when known (>= 0),
 * must match the file's. */
static FB *read_binary(const char *path, const IoBuf *b, int64_t rows, int64_t cols, BrErr *e)
{
    const char *p = b->p, *end = b->p + b->raw;   /* without io_load's final '\n' */
    char magic[8];
    uint32_t bom, zero;
    int64_t r, c;
    if (!take(&p, end, magic, 8) || memcmp(magic, FB_MAGIC, 8)) {
        br_err(e, BR_EIO, "%s: not a braid binary frame file (bad magic)", path);
        return NULL;
    }
    if (!take(&p, end, &bom, 4) || !take(&p, end, &zero, 4) || !take(&p, end, &r, 8) ||
        !take(&p, end, &c, 8) || bom != FB_BOM || r < 0 || c < 0) {
        br_err(e, BR_EIO, "%s: corrupt binary frame header", path);
        return NULL;
    }
    if ((rows >= 0 && rows != r) || (cols >= 0 && cols != c)) {
        br_err(e, BR_EDIM, "read %s: dimension mismatch: expected %lldx%lld, the file holds %lldx%lld", path,
               (long long)rows, (long long)cols, (long long)r, (long long)c);
        return NULL;
    }
    if ((uint64_t)c > (uint64_t)(end - p)) goto corrupt;   /* a type byte per column at least */
    FbType *types = br_malloc((size_t)(c ? c : 1) * sizeof(FbType));
    if (!types) { no_room(path, e); return NULL; }
    const char *names = p;
    for (int64_t j = 0; j < c; j++) {
        uint8_t t;
        int64_t len;
        if (!take(&p, end, &t, 1) || t > FB_BOOL || !take(&p, end, &len, 8) || len < 0 || len > end - p) {
            free(types);
            goto corrupt;
        }
        types[j] = (FbType)t;
        p += len;
    }
    /* every column holds a byte a row at least (a length, a number, a
     * boolean), and the frame must fit the budget: a mutated row count
     * is refused before anything that size is allocated */
    if (c > 0 && (uint64_t)r > (uint64_t)(end - p)) {
        free(types);
        goto corrupt;
    }
    if (io_check_frame_mem(path, r, BR_MAX(c, 1), e)) {
        free(types);
        return NULL;
    }
    FB *f = fb_new(r, c, types, e);
    free(types);
    if (!f) return NULL;
    p = names;
    for (int64_t j = 0; j < c && !e->code; j++) {
        int64_t len = 0;
        p += 1;
        take(&p, end, &len, 8);   /* checked by the first pass */
        char *nm = br_malloc((size_t)len + 1);
        if (!nm) { no_room(path, e); break; }
        memcpy(nm, p, (size_t)len);
        nm[len] = 0;
        p += len;
        char dflt[32];
        snprintf(dflt, sizeof dflt, "C%lld", (long long)j + 1);
        if (strcmp(nm, dflt)) fb_set_name(f, j, nm, e);
        free(nm);
    }
    for (int64_t j = 0; j < c && !e->code; j++) {
        FbCol *col = fb_col_mut(f, j, e);
        if (!col) break;
        size_t w = col->type == FB_BOOL ? 1 : 8;
        if (col->type != FB_STRING) {
            if ((uint64_t)r > (uint64_t)(end - p) / w) { fb_release(f); goto corrupt; }
            memcpy(col->type == FB_FP64 ? (void *)col->d : col->type == FB_INT64 ? (void *)col->i : (void *)col->b,
                   p, (size_t)r * w);
            p += (size_t)r * w;
            continue;
        }
        for (int64_t i = 0; i < r; i++) {
            int64_t len;
            if (!take(&p, end, &len, 8) || len < -1 || len > end - p) { fb_release(f); goto corrupt; }
            if (len >= 0 && fb_set_text(f, i, j, p, (size_t)len, e)) break;
            if (len > 0) p += len;
        }
    }
    if (e->code) { fb_release(f); return NULL; }
    if (p != end) { fb_release(f); goto corrupt; }
    return f;
corrupt:
    br_err(e, BR_EIO, "%s: truncated or corrupt binary frame file", path);
    return NULL;
}

FB *io_read_frame(const char *path, const IoFrameReadOpts *o, BrErr *e)
{
    IoFrameReadOpts none;
    if (!o) { io_frame_read_opts_init(&none); o = &none; }
    io_recover(path);   /* a write a killed process left half done */
    if (!io_exists(path)) {
        br_err(e, BR_EIO, "cannot read %s: file not found", path);
        return NULL;
    }
    IoMeta m;
    bool found;
    if (io_read_mtd(path, &m, &found, e)) return NULL;
    if (m.data_type[0] && strcmp(m.data_type, "frame")) {
        br_err(e, BR_EARG, "read %s: %s.mtd says data_type \"%s\", not a frame", path, path, m.data_type);
        return NULL;
    }
    char *mschema, **na2;
    int nna2;
    if (mtd_extras(path, &mschema, &na2, &nna2, e)) return NULL;
    const char *fmt = o->format ? o->format : m.format[0] ? m.format : "csv";
    FB *f = NULL;
    if (o->format && m.format[0] && strcmp(o->format, m.format)) {
        br_err(e, BR_EARG, "read %s: format \"%s\" disagrees with the .mtd's \"%s\"", path, o->format, m.format);
        goto out;
    }
    int64_t rows = o->rows >= 0 ? o->rows : m.rows, cols = o->cols >= 0 ? o->cols : m.cols;
    if ((o->rows >= 0 && m.rows >= 0 && o->rows != m.rows) || (o->cols >= 0 && m.cols >= 0 && o->cols != m.cols)) {
        br_err(e, BR_EDIM, "read %s: dimension mismatch: arguments %lldx%lld, .mtd %lldx%lld", path,
               (long long)o->rows, (long long)o->cols, (long long)m.rows, (long long)m.cols);
        goto out;
    }
    const char *schema = o->schema ? o->schema : mschema;
    IoBuf b;
    if (strcmp(fmt, "csv") && strcmp(fmt, "text") && !io_fmt_anybin(fmt)) {
        br_err(e, BR_EARG, "read %s: frames are read from csv, text or binary, not \"%s\"", path, fmt);
        goto out;
    }
    if (io_fmt_anybin(fmt) && io_sysbin_detect(path)) {   /* SystemDS's layout (a file or a folder) */
        f = io_read_sysframe(path, rows, cols, e);
        goto out;
    }
    if (io_load(path, &b, e)) goto out;
    if (io_fmt_anybin(fmt)) {
        f = read_binary(path, &b, rows, cols, e);
    } else if (!strcmp(fmt, "csv")) {
        bool header = o->header >= 0 ? o->header : m.header > 0;
        const char *sep = o->sep ? o->sep : m.has_sep ? m.sep : ",";
        f = read_csv(path, &b, o, header, sep, rows, cols, schema, na2, nna2, e);
    } else {
        f = read_text(path, &b, rows, cols, schema, e);
    }
    io_buf_free(&b);
out:
    free(mschema);
    for (int k = 0; k < nna2; k++) free(na2[k]);
    free(na2);
    return f;
}

/* ---- writing ---- */

static bool needs_quotes(const char *s, const char *sep)
{
    return !*s || strstr(s, sep) || strpbrk(s, "\"\n\r");
}

static bool put_csv_str(IoStr *o, const char *s, const char *sep)
{
    size_t n = strlen(s);
    if (!io_str_reserve(o, 2 * n + 3)) return false;
    if (!needs_quotes(s, sep)) { io_str_putn(o, s, n); return true; }
    io_str_putc(o, '"');
    for (; *s; s++) {
        if (*s == '"') io_str_putc(o, '"');
        io_str_putc(o, *s);
    }
    io_str_putc(o, '"');
    return true;
}

/* Text of a non-missing cell for files (numbers shortest round trip). */
static const char *cell_file_text(const FB *f, int64_t i, int64_t j, char *buf)
{
    const FbCol *c = f->c[j];
    if (c->type == FB_FP64) { io_fmt_double(c->d[i], buf); return buf; }
    return fb_cell_text(f, i, j, buf);
}

static bool format_csv(const FB *f, bool header, const char *sep, IoStr *o)
{
    size_t sl = strlen(sep);
    if (header) {
        for (int64_t j = 0; j < f->cols; j++) {
            if (j) {
                if (!io_str_reserve(o, sl)) return false;
                io_str_putn(o, sep, sl);
            }
            if (!put_csv_str(o, f->names[j], sep)) return false;
        }
        if (!io_str_reserve(o, 1)) return false;
        io_str_putc(o, '\n');
    }
    if (!fb_meta_default(f)) {   /* FrameWriterTextCSV's ColumnMetadata lines */
        bool ok = io_str_printf(o, "%s", FB_META_MV);
        for (int64_t j = 0; ok && j < f->cols; j++)
            ok = io_str_printf(o, "%s%s", sep, f->mv && f->mv[j] ? f->mv[j] : "null");
        ok = ok && io_str_printf(o, "\n%s", FB_META_ND);
        for (int64_t j = 0; ok && j < f->cols; j++) ok = io_str_printf(o, "%s%lld", sep, (long long)fb_nd(f, j));
        if (!ok || !io_str_printf(o, "\n")) return false;
    }
    char buf[40];
    for (int64_t i = 0; i < f->rows; i++) {
        for (int64_t j = 0; j < f->cols; j++) {
            if (!io_str_reserve(o, sl + 40)) return false;
            if (j) io_str_putn(o, sep, sl);
            const FbCol *c = f->c[j];
            if (c->type == FB_STRING) {
                if (c->s[i] && !put_csv_str(o, c->s[i], sep)) return false;
            } else {
                const char *t = cell_file_text(f, i, j, buf);
                io_str_putn(o, t, strlen(t));
            }
        }
        if (!io_str_reserve(o, 1)) return false;
        io_str_putc(o, '\n');
    }
    return true;
}

static bool format_text(const FB *f, IoStr *o)
{
    char buf[40];
    for (int64_t j = 0; j < f->cols; j++)   /* FrameWriterTextCell's ColumnMetadata cells */
        if (fb_nd(f, j) > 0 || (f->mv && f->mv[j]))
            if (!io_str_printf(o, "-1 %lld %lld\n-2 %lld %s\n", (long long)j + 1, (long long)fb_nd(f, j),
                               (long long)j + 1, f->mv && f->mv[j] ? f->mv[j] : "null"))
                return false;
    for (int64_t i = 0; i < f->rows; i++)
        for (int64_t j = 0; j < f->cols; j++) {
            if (f->c[j]->type == FB_STRING && !f->c[j]->s[i]) continue;
            const char *t = cell_file_text(f, i, j, buf);
            if (strpbrk(t, "\n\r")) return false;
            if (!io_str_printf(o, "%lld %lld %s\n", (long long)i + 1, (long long)j + 1, t)) return false;
        }
    return true;
}

/* Appends n raw bytes; false when out of memory. */
static bool put_raw(IoStr *o, const void *p, size_t n)
{
    if (!io_str_reserve(o, n)) return false;
    io_str_putn(o, (const char *)p, n);
    return true;
}

/* The binary layout described at the top of this file. */
static bool format_binary(const FB *f, IoStr *o)
{
    uint32_t bom = FB_BOM, zero = 0;
    bool ok = put_raw(o, FB_MAGIC, 8) && put_raw(o, &bom, 4) && put_raw(o, &zero, 4) &&
              put_raw(o, &f->rows, 8) && put_raw(o, &f->cols, 8);
    for (int64_t j = 0; ok && j < f->cols; j++) {
        uint8_t t = (uint8_t)f->c[j]->type;
        int64_t len = (int64_t)strlen(f->names[j]);
        ok = put_raw(o, &t, 1) && put_raw(o, &len, 8) && put_raw(o, f->names[j], (size_t)len);
    }
    for (int64_t j = 0; ok && j < f->cols; j++) {
        const FbCol *c = f->c[j];
        size_t n = (size_t)f->rows;
        if (c->type == FB_FP64) ok = put_raw(o, c->d, n * 8);
        else if (c->type == FB_INT64) ok = put_raw(o, c->i, n * 8);
        else if (c->type == FB_BOOL) ok = put_raw(o, c->b, n);
        else
            for (int64_t i = 0; ok && i < f->rows; i++) {
                int64_t len = c->s[i] ? (int64_t)strlen(c->s[i]) : -1;
                ok = put_raw(o, &len, 8) && (len <= 0 || put_raw(o, c->s[i], (size_t)len));
            }
    }
    return ok;
}

/* SystemDS's parallel frame writer (FrameWriterBinaryBlockParallel):
 * np part files, each the rows [i*len, (i+1)*len) with len = ceil(rows /
 * blen / np) * blen, as many as hold rows; each is written as the
 * single-file writer writes those rows. Returns the temporary folder
 * (malloc'd) or NULL. */
static char *write_sysframe_parts(const char *path, const FB *f, int64_t blen, int64_t np, BrErr *e)
{
    char *dir = io_parts_begin(path, e);
    if (!dir) return NULL;
    int64_t len = (int64_t)ceil((double)f->rows / (double)blen / (double)np) * blen;
    int rc = 0;
    for (int64_t i = 0; i < np && i * len < f->rows && !rc; i++) {
        IoStr data = {0};
        IoOut d;
        rc = io_format_sysframe(f, blen, i * len, BR_MIN(f->rows, (i + 1) * len), &data, path, e);
        if (!rc && !(rc = io_parts_open(&d, dir, (int)i, e))) {
            if ((rc = io_out_write(&d, data.p, data.n, e))) io_out_abort(&d);
            else rc = io_out_commit(&d, e);
        }
        io_str_free(&data);
    }
    if (rc) {
        io_parts_abort(dir);
        free(dir);
        return NULL;
    }
    return dir;
}

int io_write_frame(const char *path, const FB *f, const IoWriteOpts *o, BrErr *e)
{
    IoWriteOpts none;
    if (!o) { io_write_opts_init(&none); o = &none; }
    const char *fmt = o->format ? o->format : "text";
    const char *sep = o->sep ? o->sep : ",";
    if (strcmp(fmt, "csv") && strcmp(fmt, "text") && !io_fmt_anybin(fmt))
        return br_err(e, BR_EARG, "write %s: frames are written as csv, text or binary, not \"%s\"", path, fmt);
    if (!*sep) return br_err(e, BR_EARG, "write %s: empty separator", path);
    IoStr data = {0}, js = {0};
    char *dir = NULL;   /* SystemDS's parallel writer's folder */
    if (io_fmt_sysbin(fmt)) {
        int64_t blen = o->blocksize > 0 ? o->blocksize : 1000;
        int64_t np = io_seq_parts((double)f->rows * (double)f->cols * 8, o->parts);
        if (np > 1 ? !(dir = write_sysframe_parts(path, f, blen, np, e))
                   : io_format_sysframe(f, blen, 0, f->rows, &data, path, e) != 0) {
            io_str_free(&data);
            return e->code;
        }
        fmt = "binary";
    }
    bool ok = !strcmp(fmt, "csv") ? format_csv(f, o->header, sep, &data)
              : !strcmp(fmt, "binary") ? true
              : !strcmp(fmt, "braid-binary") ? format_binary(f, &data) : format_text(f, &data);
    if (!ok) {
        io_str_free(&data);
        if (!strcmp(fmt, "text"))
            return br_err(e, BR_EARG, "write %s: a value contains a line break; write the frame as csv", path);
        return br_err(e, BR_ENOMEM, "out of memory writing %s", path);
    }
    /* the .mtd: the common fields, then the schema */
    IoMeta m;
    io_meta_init(&m);
    strcpy(m.data_type, "frame");
    strcpy(m.value_type, "string");
    m.rows = f->rows;
    m.cols = f->cols;
    snprintf(m.format, sizeof m.format, "%s", fmt);
    if (!strcmp(fmt, "binary")) m.blocksize = o->blocksize > 0 ? o->blocksize : 1000;
    if (!strcmp(fmt, "csv")) {
        m.header = o->header;
        snprintf(m.sep, sizeof m.sep, "%s", sep);
        m.has_sep = true;
    }
    ok = io_mtd_text(&m, &js);
    if (ok && js.n >= 2 && js.p[js.n - 2] == '}') {
        js.n -= 2;
        ok = io_str_printf(&js, ", \"schema\": \"");
        for (int64_t j = 0; ok && j < f->cols; j++)
            ok = io_str_printf(&js, "%s%s", j ? "," : "", fb_type_name(f->c[j]->type));
        ok = ok && io_str_printf(&js, "\"}\n");
    }
    if (!ok) {
        io_str_free(&data);
        io_str_free(&js);
        if (dir) io_parts_abort(dir);
        free(dir);
        return br_err(e, BR_ENOMEM, "out of memory writing %s", path);
    }
    /* data and .mtd each to a temporary, then both renamed into place */
    size_t n = strlen(path);
    char *mp = br_malloc(n + 6);   /* the .mtd's name, then the .dict's */
    IoOut d, md;
    if (!mp) br_err(e, BR_ENOMEM, "out of memory");
    else {
        memcpy(mp, path, n);
        memcpy(mp + n, ".mtd", 5);
    }
    if (dir) {   /* the folder of parts in place of the file */
        d = (IoOut){.fd = -1, .tmp = dir, .path = br_strdup(path)};
        io_out_adopt_sig(&d);
        dir = NULL;
        if (e->code || !d.path) {
            if (!e->code) br_err(e, BR_ENOMEM, "out of memory");
            io_out_abort(&d);
        } else if (io_out_open(&md, mp, e)) io_out_abort(&d);
        else if (io_out_write(&md, js.p, js.n, e)) { io_out_abort(&md); io_out_abort(&d); }
        else io_commit_pair(&d, &md, e);
    } else if (!e->code && !io_out_open(&d, path, e)) {
        if (io_out_write(&d, data.p, data.n, e)) io_out_abort(&d);
        else if (io_out_open(&md, mp, e)) io_out_abort(&d);
        else if (io_out_write(&md, js.p, js.n, e)) { io_out_abort(&md); io_out_abort(&d); }
        else io_commit_pair(&d, &md, e);
    }
    /* as SystemDS's binary writer, a former frame's dictionaries go */
    if (!e->code && !strcmp(fmt, "binary") && mp) {
        memcpy(mp + n, ".dict", 6);
        if (unlink(mp) != 0 && errno != ENOENT) br_err(e, BR_EIO, "cannot remove %s: %s", mp, strerror(errno));
    }
    free(mp);
    io_str_free(&data);
    io_str_free(&js);
    return e->code;
}
