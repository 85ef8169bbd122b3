/* mtd.c: the JSON metadata sidecar "<file>.mtd" (reading with cJSON,
 * writing by hand so the field order is stable). */
#include "ioint.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

void io_meta_init(IoMeta *m)
{
    memset(m, 0, sizeof *m);
    m->rows = m->cols = m->nnz = m->cbytes = m->blocksize = -1;
    m->header = -1;
}

static char *mtd_path(const char *path)
{
    size_t n = strlen(path);
    char *p = br_malloc(n + 5);
    if (p) { memcpy(p, path, n); memcpy(p + n, ".mtd", 5); }
    return p;
}

/* Copies string field key of obj into dst (lower-cased when asked).
 * Returns 0, -1 when absent, or an error code. */
static int get_str(const cJSON *obj, const char *key, char *dst, size_t n,
                   bool lower, const char *mp, BrErr *e)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!it || cJSON_IsNull(it)) return -1;
    if (!cJSON_IsString(it))
        return br_err(e, BR_EIO, "%s: field \"%s\" must be a string", mp, key);
    size_t l = strlen(it->valuestring);
    if (l >= n)
        return br_err(e, BR_EIO, "%s: field \"%s\" is too long (\"%.40s\")", mp, key,
                      it->valuestring);
    for (size_t i = 0; i <= l; i++)
        dst[i] = lower ? (char)tolower((unsigned char)it->valuestring[i]) : it->valuestring[i];
    return 0;
}

/* Reads an integer field (a JSON number, or a string holding one). */
static int get_int(const cJSON *obj, const char *key, int64_t *dst,
                   const char *mp, BrErr *e)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!it || cJSON_IsNull(it)) return 0;
    double v;
    if (cJSON_IsNumber(it)) v = it->valuedouble;
    else if (cJSON_IsString(it) &&
             io_parse_double(it->valuestring, it->valuestring + strlen(it->valuestring), &v)) {
    } else {
        return br_err(e, BR_EIO, "%s: field \"%s\" must be a number", mp, key);
    }
    if (!(v >= -1 && v < 9.0e18) || v != (double)(int64_t)v)
        return br_err(e, BR_EIO, "%s: field \"%s\" must be a non-negative integer, "
                      "not %g", mp, key, v);
    *dst = (int64_t)v;
    return 0;
}

int io_read_mtd(const char *path, IoMeta *m, bool *found, BrErr *e)
{
    io_meta_init(m);
    *found = false;
    io_recover(path);
    char *mp = mtd_path(path);
    if (!mp) return br_err(e, BR_ENOMEM, "out of memory");
    if (!io_exists(mp)) { free(mp); return 0; }
    IoBuf b;
    if (io_load(mp, &b, e)) { free(mp); return e->code; }
    *found = true;
    /* SystemDS's own .mtd examples carry a trailing comma before '}':
     * accept it (blank it out, outside strings) */
    bool instr = false;
    for (size_t i = 0; i < b.n; i++) {
        char ch = b.p[i];
        if (ch == '"' && (i == 0 || b.p[i - 1] != '\\')) instr = !instr;
        if (instr || ch != ',') continue;
        size_t k = i + 1;
        while (k < b.n && (b.p[k] == ' ' || b.p[k] == '\t' || b.p[k] == '\n' || b.p[k] == '\r')) k++;
        if (k < b.n && (b.p[k] == '}' || b.p[k] == ']')) ((char *)b.p)[i] = ' ';
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(b.p, b.n, &end, 0);
    if (!root) {
        int line = 1;
        if (end && end >= b.p && end <= b.p + b.n)
            for (const char *q = b.p; q < end; q++) line += *q == '\n';
        br_err(e, BR_EIO, "%s: malformed JSON metadata near line %d", mp, line);
        goto out;
    }
    if (!cJSON_IsObject(root)) {
        br_err(e, BR_EIO, "%s: metadata must be a JSON object", mp);
        goto out;
    }
    if (get_str(root, "data_type", m->data_type, sizeof m->data_type, true, mp, e) > 0 ||
        get_str(root, "value_type", m->value_type, sizeof m->value_type, true, mp, e) > 0 ||
        get_str(root, "format", m->format, sizeof m->format, true, mp, e) > 0 ||
        get_int(root, "rows", &m->rows, mp, e) || get_int(root, "cols", &m->cols, mp, e) ||
        get_int(root, "nnz", &m->nnz, mp, e) || get_int(root, "compressed_bytes", &m->cbytes, mp, e) ||
        get_int(root, "blocksize", &m->blocksize, mp, e))
        goto out;
    int r = get_str(root, "sep", m->sep, sizeof m->sep, false, mp, e);
    if (r > 0) goto out;
    m->has_sep = r == 0;
    r = get_str(root, "indSep", m->ind_sep, sizeof m->ind_sep, false, mp, e);
    if (r > 0) goto out;
    m->has_ind_sep = r == 0;
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(root, "header");
    if (h && !cJSON_IsNull(h)) {
        if (cJSON_IsBool(h)) m->header = cJSON_IsTrue(h);
        else if (cJSON_IsString(h) && !strcasecmp(h->valuestring, "true")) m->header = 1;
        else if (cJSON_IsString(h) && !strcasecmp(h->valuestring, "false")) m->header = 0;
        else br_err(e, BR_EIO, "%s: field \"header\" must be true or false", mp);
    }
out:
    cJSON_Delete(root);
    io_buf_free(&b);
    free(mp);
    return e->code;
}

/* Appends s as a JSON string literal. */
static bool put_json_str(IoStr *o, const char *s)
{
    if (!io_str_reserve(o, strlen(s) * 6 + 3)) return false;
    io_str_putc(o, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') { io_str_putc(o, '\\'); io_str_putc(o, (char)c); }
        else if (c == '\n') io_str_putn(o, "\\n", 2);
        else if (c == '\t') io_str_putn(o, "\\t", 2);
        else if (c < 32) { char u[8]; snprintf(u, sizeof u, "\\u%04x", c); io_str_putn(o, u, 6); }
        else io_str_putc(o, (char)c);
    }
    io_str_putc(o, '"');
    return true;
}

bool io_mtd_text(const IoMeta *m, IoStr *o)
{
    bool ok = io_str_printf(o, "{\"data_type\": ");
    ok = ok && put_json_str(o, m->data_type[0] ? m->data_type : "matrix");
    ok = ok && io_str_printf(o, ", \"value_type\": ");
    ok = ok && put_json_str(o, m->value_type[0] ? m->value_type : "double");
    if (m->rows >= 0) ok = ok && io_str_printf(o, ", \"rows\": %lld", (long long)m->rows);
    if (m->cols >= 0) ok = ok && io_str_printf(o, ", \"cols\": %lld", (long long)m->cols);
    if (m->blocksize > 0) ok = ok && io_str_printf(o, ", \"blocksize\": %lld", (long long)m->blocksize);
    if (m->nnz >= 0) ok = ok && io_str_printf(o, ", \"nnz\": %lld", (long long)m->nnz);
    if (m->cbytes > 0) ok = ok && io_str_printf(o, ", \"compressed_bytes\": %lld", (long long)m->cbytes);
    ok = ok && io_str_printf(o, ", \"format\": ");
    ok = ok && put_json_str(o, m->format[0] ? m->format : "text");
    if (m->header >= 0)
        ok = ok && io_str_printf(o, ", \"header\": %s", m->header ? "true" : "false");
    if (m->has_sep) {
        ok = ok && io_str_printf(o, ", \"sep\": ");
        ok = ok && put_json_str(o, m->sep);
    }
    if (m->has_ind_sep) {
        ok = ok && io_str_printf(o, ", \"indSep\": ");
        ok = ok && put_json_str(o, m->ind_sep);
    }
    char when[64] = "";
    time_t t = time(NULL);
    struct tm tm;
    if (gmtime_r(&t, &tm)) strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
    ok = ok && io_str_printf(o, ", \"author\": \"braid\", \"created\": \"%s\"}\n", when);
    return ok;
}

int io_write_mtd(const char *path, const IoMeta *m, BrErr *e)
{
    char *mp = mtd_path(path);
    IoStr s = {0};
    if (!mp || !io_mtd_text(m, &s)) {
        free(mp);
        io_str_free(&s);
        return br_err(e, BR_ENOMEM, "out of memory writing %s.mtd", path);
    }
    IoOut o;
    if (!io_out_open(&o, mp, e)) {
        if (io_out_write(&o, s.p, s.n, e)) io_out_abort(&o);
        else io_out_commit(&o, e);
    }
    free(mp);
    io_str_free(&s);
    return e->code;
}

int io_commit_with_mtd(IoOut *d, const IoMeta *m, BrErr *e)
{
    char *mp = mtd_path(d->path);
    IoStr js = {0};
    if (!mp || !io_mtd_text(m, &js)) {
        br_err(e, BR_ENOMEM, "out of memory writing %s.mtd", d->path);
        goto fail;
    }
    IoOut md;
    if (io_out_open(&md, mp, e)) goto fail;
    if (io_out_write(&md, js.p, js.n, e)) {
        io_out_abort(&md);
        goto fail;
    }
    io_commit_pair(d, &md, e);
    free(mp);
    io_str_free(&js);
    return e->code;
fail:
    io_out_abort(d);
    free(mp);
    io_str_free(&js);
    return e->code;
}

/* Lists (see io.h). */
int io_write_list_mtd(const char *path, int64_t n, const char *format, BrErr *e)
{
    IoMeta m;
    io_meta_init(&m);
    snprintf(m.data_type, sizeof m.data_type, "list");
    snprintf(m.value_type, sizeof m.value_type, "unknown");
    snprintf(m.format, sizeof m.format, "%s", format && format[0] ? format : "text");
    for (char *q = m.format; *q; q++) *q = (char)tolower((unsigned char)*q);
    m.rows = n;
    m.cols = 1;
    if (io_write_mtd(path, &m, e)) return e->code;   /* creates p's missing parents */
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
        return br_err(e, BR_EIO, "cannot create directory %s: %s", path, strerror(errno));
    DIR *d = opendir(path);
    if (!d) return br_err(e, BR_EIO, "cannot open directory %s: %s", path, strerror(errno));
    size_t pl = strlen(path);
    struct dirent *de;
    while (!e->code && (de = readdir(d))) {
        size_t l = strlen(de->d_name);
        if (l <= 4 || strcmp(de->d_name + l - 4, ".mtd") != 0) continue;
        char *f = br_malloc(pl + l + 2);
        if (!f) { br_err(e, BR_ENOMEM, "out of memory"); break; }
        sprintf(f, "%s/%s", path, de->d_name);
        if (unlink(f) != 0 && errno != ENOENT)
            br_err(e, BR_EIO, "cannot remove %s (left by an earlier list): %s", f, strerror(errno));
        free(f);
    }
    closedir(d);
    return e->code;
}

char *io_list_item_path(const char *path, int64_t i, const char *name, BrErr *e)
{
    if (!name) name = "null";
    if (strchr(name, '/')) {
        br_err(e, BR_EARG, "write %s: list item %lld's name \"%s\" cannot be a file name "
               "(items are written as %s/<index>_<name>)", path, (long long)i + 1, name, path);
        return NULL;
    }
    char *p = br_malloc(strlen(path) + strlen(name) + 32);
    if (!p) { br_err(e, BR_ENOMEM, "out of memory"); return NULL; }
    sprintf(p, "%s/%lld_%s", path, (long long)i, name);
    return p;
}

void io_list_items_free(int64_t n, char **paths, char **names)
{
    for (int64_t i = 0; i < n; i++) {
        if (paths) free(paths[i]);
        if (names) free(names[i]);
    }
    free(paths);
    free(names);
}

/* braid's earlier layout: items p/1 .. p/n, names in p.mtd's "names". */
static int list_items_braid(const char *path, const cJSON *arr, int64_t n, char **paths, char **names,
                            const char *mp, BrErr *e)
{
    for (int64_t i = 0; i < n && !e->code; i++) {
        const cJSON *it = cJSON_GetArrayItem(arr, (int)i);
        if (it && !cJSON_IsString(it) && !cJSON_IsNull(it))
            return br_err(e, BR_EIO, "%s: list item name %lld is not a string", mp, (long long)i + 1);
        paths[i] = br_malloc(strlen(path) + 24);
        if (paths[i]) sprintf(paths[i], "%s/%lld", path, (long long)i + 1);
        if (!paths[i] || (it && cJSON_IsString(it) && !(names[i] = br_strdup(it->valuestring))))
            return br_err(e, BR_ENOMEM, "out of memory");
    }
    return e->code;
}

/* SystemDS's layout: one "<index>_<name>.mtd" for each item in folder p. */
static int list_items_sysds(const char *path, int64_t n, char **paths, char **names, BrErr *e)
{
    DIR *d = opendir(path);
    if (!d) return br_err(e, BR_EIO, "read %s: cannot open the list's folder: %s", path, strerror(errno));
    size_t pl = strlen(path);
    int64_t count = 0;
    struct dirent *de;
    while (!e->code && (de = readdir(d))) {
        const char *nm = de->d_name;
        size_t l = strlen(nm);
        if (nm[0] == '.' || l <= 4 || strcmp(nm + l - 4, ".mtd") != 0) continue;
        count++;
        size_t k = 0;
        while (k < l - 4 && isdigit((unsigned char)nm[k])) k++;
        if (k == 0 || k > 18 || nm[k] != '_') {
            br_err(e, BR_EIO, "%s/%s: not a list item's metadata (SystemDS names them "
                   "<index>_<name>.mtd)", path, nm);
            break;
        }
        int64_t idx = strtoll(nm, NULL, 10);
        if (idx >= n) {
            br_err(e, BR_EIO, "%s/%s: item index outside the list's %lld items (%s.mtd)", path, nm,
                   (long long)n, path);
            break;
        }
        if (paths[idx]) {
            br_err(e, BR_EIO, "%s/%s: a second item with index %lld (also %s.mtd)", path, nm,
                   (long long)idx, paths[idx]);
            break;
        }
        const char *nmpart = strchr(nm, '_') + 1;
        size_t nl = (size_t)(nm + l - 4 - nmpart);
        paths[idx] = br_malloc(pl + l + 2);
        if (paths[idx]) sprintf(paths[idx], "%s/%.*s", path, (int)(l - 4), nm);
        bool unnamed = nl == 4 && !memcmp(nmpart, "null", 4);
        if (paths[idx] && !unnamed && (names[idx] = br_malloc(nl + 1))) {
            memcpy(names[idx], nmpart, nl);
            names[idx][nl] = 0;
        }
        if (!paths[idx] || (!unnamed && !names[idx])) br_err(e, BR_ENOMEM, "out of memory");
    }
    closedir(d);
    for (int64_t i = 0; i < n && !e->code; i++)
        if (!paths[i])
            br_err(e, BR_EIO, "read %s: list item %lld of %lld is missing (no %s/%lld_<name>.mtd; "
                   "the folder holds %lld item .mtd files)", path, (long long)i, (long long)n, path,
                   (long long)i, (long long)count);
    return e->code;
}

int io_list_items(const char *path, const IoMeta *meta, int64_t *n, char ***paths, char ***names,
                  BrErr *e)
{
    *n = 0;
    *paths = *names = NULL;
    char *mp = mtd_path(path);
    if (!mp) return br_err(e, BR_ENOMEM, "out of memory");
    IoBuf b = {0};
    cJSON *root = NULL;
    int64_t k = meta->rows;
    if (k < 0) { br_err(e, BR_EIO, "%s: a list's metadata needs \"rows\" (its number of items)", mp); goto out; }
    if (io_load(mp, &b, e)) goto out;
    root = cJSON_ParseWithLength(b.p, b.n);
    if (!root) { br_err(e, BR_EIO, "%s: malformed JSON metadata", mp); goto out; }
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "names");
    if (arr && !cJSON_IsArray(arr)) { br_err(e, BR_EIO, "%s: field \"names\" must be an array", mp); goto out; }
    if (arr && cJSON_GetArraySize(arr) != k) {
        br_err(e, BR_EIO, "%s: %d names for %lld items", mp, cJSON_GetArraySize(arr), (long long)k);
        goto out;
    }
    if (!arr) {   /* no more items than .mtd files in the folder: bounds the allocation */
        DIR *d = opendir(path);
        if (!d) { br_err(e, BR_EIO, "read %s: cannot open the list's folder: %s", path, strerror(errno)); goto out; }
        int64_t c = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
            size_t l = strlen(de->d_name);
            c += de->d_name[0] != '.' && l > 4 && !strcmp(de->d_name + l - 4, ".mtd");
        }
        closedir(d);
        if (c != k) {
            br_err(e, BR_EIO, "read %s: the folder holds %lld item .mtd files, but %s says %lld items",
                   path, (long long)c, mp, (long long)k);
            goto out;
        }
    }
    *paths = br_calloc((size_t)k + 1, sizeof(char *));
    *names = br_calloc((size_t)k + 1, sizeof(char *));
    if (!*paths || !*names) { br_err(e, BR_ENOMEM, "out of memory"); goto out; }
    *n = k;
    if (arr) list_items_braid(path, arr, k, *paths, *names, mp, e);
    else list_items_sysds(path, k, *paths, *names, e);
out:
    if (e->code) { io_list_items_free(*n, *paths, *names); *paths = *names = NULL; *n = 0; }
    cJSON_Delete(root);
    io_buf_free(&b);
    free(mp);
    return e->code;
}
