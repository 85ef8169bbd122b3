/* util.c: what the io/ formats share: loading files, splitting them into
 * line ranges for parallel parsing, range errors, number parsing and
 * formatting, growable buffers, atomic output files, the parallel writer. */
#include "ioint.h"

#include "../matrix/format.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------- loading ---------- */

bool io_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static int open_err(const char *path, int err, BrErr *e)
{
    if (err == ENOENT)
        return br_err(e, BR_EIO, "cannot read %s: file not found", path);
    return br_err(e, BR_EIO, "cannot open %s: %s", path, strerror(err));
}

/* Reads the whole regular file path into dst (exactly size bytes). */
static int read_exact(const char *path, char *dst, size_t size, BrErr *e)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return open_err(path, errno, e);
    size_t got = 0;
    while (got < size) {
        ssize_t r = read(fd, dst + got, size - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            int err = r < 0 ? errno : 0;
            close(fd);
            if (err) return br_err(e, BR_EIO, "cannot read %s: %s", path, strerror(err));
            return br_err(e, BR_EIO, "cannot read %s: file shrank while reading", path);
        }
        got += (size_t)r;
    }
    close(fd);
    return 0;
}

/* Reads a file whose size stat does not tell (size 0) until its end into
 * b (room for a final newline and NUL left). */
static int read_stream(const char *path, IoBuf *b, BrErr *e)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return open_err(path, errno, e);
    size_t cap = 4096;
    b->p = br_malloc(cap);
    b->n = 0;
    while (b->p) {
        if (b->n + 2 >= cap) {
            char *np = br_realloc(b->p, cap * 2);
            if (!np) break;
            b->p = np;
            cap *= 2;
        }
        ssize_t r = read(fd, b->p + b->n, cap - 2 - b->n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int err = errno;
            close(fd);
            io_buf_free(b);
            return br_err(e, BR_EIO, "cannot read %s: %s", path, strerror(err));
        }
        if (r == 0) { close(fd); b->raw = b->n; return 0; }
        b->n += (size_t)r;
    }
    close(fd);
    io_buf_free(b);
    return br_err(e, BR_ENOMEM, "out of memory reading %s", path);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* io_list_parts: see ioint.h. */
int io_list_parts(const char *path, char ***out, BrErr *e)
{
    DIR *d = opendir(path);
    if (!d) { open_err(path, errno, e); return -1; }
    char **names = NULL;
    int n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.' || de->d_name[0] == '_') continue;
        size_t l = strlen(de->d_name);
        if (l > 4 && !strcmp(de->d_name + l - 4, ".crc")) continue;
        if (l > 4 && !strcmp(de->d_name + l - 4, ".mtd")) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            char **nn = br_realloc(names, (size_t)cap * sizeof *nn);
            if (!nn) goto oom;
            names = nn;
        }
        size_t pl = strlen(path);
        names[n] = br_malloc(pl + l + 2);
        if (!names[n]) goto oom;
        memcpy(names[n], path, pl);
        names[n][pl] = '/';
        memcpy(names[n] + pl + 1, de->d_name, l + 1);
        n++;
    }
    closedir(d);
    if (n) qsort(names, (size_t)n, sizeof *names, cmp_str);
    *out = names;
    return n;
oom:
    closedir(d);
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
    br_err(e, BR_ENOMEM, "out of memory listing %s", path);
    return -1;
}

/* Loads path (a file, or a directory of part files concatenated in name
 * order) into b; see ioint.h. */
int io_load(const char *path, IoBuf *b, BrErr *e)
{
    b->p = NULL;
    b->n = b->raw = 0;
    struct stat st;
    if (stat(path, &st) != 0) return open_err(path, errno, e);
    char **names = NULL;
    int np = 0;
    size_t *sizes = NULL, total = 0;
    if (S_ISDIR(st.st_mode)) {
        np = io_list_parts(path, &names, e);
        if (np < 0) return e->code;
        sizes = br_calloc((size_t)np + 1, sizeof *sizes);
        if (!sizes) { br_err(e, BR_ENOMEM, "out of memory reading %s", path); goto done; }
        for (int i = 0; i < np; i++) {
            struct stat ps;
            if (stat(names[i], &ps) != 0) { open_err(names[i], errno, e); goto done; }
            if (!S_ISREG(ps.st_mode)) continue;
            /* each part ends with a newline: room for one more byte */
            sizes[i] = (size_t)ps.st_size;
            total += sizes[i] + 1;
        }
    } else if (!S_ISREG(st.st_mode)) {
        return br_err(e, BR_EIO, "cannot read %s: not a regular file or directory", path);
    } else if (st.st_size == 0) {
        /* /proc and /sys files report size 0 but have content */
        if (read_stream(path, b, e)) return e->code;
        if (b->n > 0 && b->p[b->n - 1] != '\n') b->p[b->n++] = '\n';
        b->p[b->n] = 0;
        return 0;
    } else {
        total = (size_t)st.st_size;
    }
    b->p = br_malloc(total + 2);
    if (!b->p) { br_err(e, BR_ENOMEM, "out of memory reading %s (%zu bytes)", path, total); goto done; }
    if (!names) {
        if (read_exact(path, b->p, total, e)) goto done;
        b->n = total;
    } else {
        for (int i = 0; i < np; i++) {
            if (!sizes[i]) continue;
            if (read_exact(names[i], b->p + b->n, sizes[i], e)) goto done;
            b->n += sizes[i];
            if (b->p[b->n - 1] != '\n') b->p[b->n++] = '\n';
        }
    }
    b->raw = b->n;
    if (b->n > 0 && b->p[b->n - 1] != '\n') b->p[b->n++] = '\n';
    b->p[b->n] = 0;
done:
    for (int i = 0; i < np; i++) free(names[i]);
    free(names);
    free(sizes);
    if (e->code) io_buf_free(b);
    return e->code;
}

void io_buf_free(IoBuf *b)
{
    free(b->p);
    b->p = NULL;
    b->n = b->raw = 0;
}

/* ---------- splitting and range errors ---------- */

int io_split(const char *p, size_t n, int64_t chunk_bytes, size_t **starts)
{
    size_t want = chunk_bytes > 0 ? (size_t)chunk_bytes : 0;
    if (!want) {
        size_t per = n / ((size_t)br_threads() * 8 + 1);
        want = per > ((size_t)1 << 20) ? per : ((size_t)1 << 20);
    }
    size_t k = n / want + 1;
    if (k > 65536) k = 65536;
    size_t *s = br_malloc((k + 1) * sizeof *s);
    if (!s) return -1;
    s[0] = 0;
    for (size_t i = 1; i < k; i++) {
        size_t t = (size_t)((double)i / (double)k * (double)n);
        if (t < s[i - 1]) t = s[i - 1];
        if (t > 0 && t < n && p[t - 1] != '\n') {
            const char *q = memchr(p + t, '\n', n - t);
            t = q ? (size_t)(q - p) + 1 : n;
        }
        s[i] = t;
    }
    s[k] = n;
    *starts = s;
    return (int)k;
}

void io_range_fail(IoRangeErr *r, int code, const char *fmt, ...)
{
    if (r->err_line) return;
    r->err_line = r->lines > 0 ? r->lines : 1;
    r->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->msg, sizeof r->msg, fmt, ap);
    va_end(ap);
}

int io_range_report(const IoRangeErr *r, int k, const char *path,
                    int64_t base_line, BrErr *e)
{
    int64_t line = base_line;
    for (int i = 0; i < k; i++) {
        if (r[i].err_line)
            return br_err(e, r[i].code, "%s: line %lld: %s", path,
                          (long long)(line + r[i].err_line), r[i].msg);
        line += r[i].lines;
    }
    return 0;
}

void io_tok_show(const char *s, const char *e, char *out, size_t n)
{
    size_t k = 0;
    for (; s < e && k + 4 < n; s++)
        out[k++] = (*s >= 32 && *s < 127) ? *s : '?';
    if (s < e && k + 4 <= n) { out[k++] = '.'; out[k++] = '.'; out[k++] = '.'; }
    out[k] = 0;
}

bool io_parse_index(const char *s, const char *e, int64_t *out)
{
    if (s >= e) return false;
    int64_t v = 0;
    const char *p = s;
    while (p < e && (unsigned)(*p - '0') < 10 && v < ((int64_t)1 << 58))
        v = v * 10 + (*p++ - '0');
    if (p == e) { *out = v; return true; }
    double d;
    if (!io_parse_double(s, e, &d) || !(d >= 0 && d < 9e15) || d != floor(d))
        return false;
    *out = (int64_t)d;
    return true;
}

/* ---------- numbers ---------- */

static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static locale_t c_locale;

static void make_c_locale(void) { c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0); }

/* strtod in the C locale over [s, e); the whole range must be consumed. */
static bool slow_parse(const char *s, const char *e, double *out)
{
    size_t n = (size_t)(e - s);
    if (n == 0 || *s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' ||
        *s == '\f' || *s == '\v')
        return false;
    char small[128], *buf = small;
    if (n >= sizeof small) {
        buf = br_malloc(n + 1);
        if (!buf) return false;
    }
    memcpy(buf, s, n);
    buf[n] = 0;
    /* strtod also takes C's hexadecimal (0x10) and nan(chars) forms, which
     * no data format of SystemDS means as numbers: a cell 0x10 is an
     * error, not 16 */
    if (memchr(buf, 0, n) || strpbrk(buf, "xX(")) { if (buf != small) free(buf); return false; }
    pthread_once(&c_locale_once, make_c_locale);
    char *end;
    double v = c_locale ? strtod_l(buf, &end, c_locale) : strtod(buf, &end);
    bool ok = end == buf + n;
    if (buf != small) free(buf);
    if (ok) *out = v;
    return ok;
}

static const double pow10_exact[23] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12,
    1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Fast path for plain decimals: up to 19 significant digits collected into
 * an integer; when it is below 2^53 and the power of ten is exact (|e| <=
 * 22), one IEEE multiply or divide rounds correctly (Clinger). Everything
 * else goes to strtod in the C locale. */
bool io_parse_double(const char *s, const char *end, double *out)
{
    const char *p = s;
    bool neg = false;
    if (p < end && (*p == '+' || *p == '-')) { neg = *p == '-'; p++; }
    uint64_t mant = 0;
    int nd = 0;
    int64_t exp10 = 0;
    bool digits = false, inexact = false;
    while (p < end && (unsigned)(*p - '0') < 10) {
        int d = *p++ - '0';
        digits = true;
        if (nd < 19) {
            if (mant || d) { mant = mant * 10 + (uint64_t)d; nd++; }
        } else {
            exp10++;
            if (d) inexact = true;
        }
    }
    if (p < end && *p == '.') {
        p++;
        while (p < end && (unsigned)(*p - '0') < 10) {
            int d = *p++ - '0';
            digits = true;
            if (nd < 19) {
                if (mant || d) { mant = mant * 10 + (uint64_t)d; nd++; }
                exp10--;
            } else if (d) {
                inexact = true;
            }
        }
    }
    if (!digits) return slow_parse(s, end, out);
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        bool eneg = false;
        if (p < end && (*p == '+' || *p == '-')) { eneg = *p == '-'; p++; }
        if (p >= end || (unsigned)(*p - '0') >= 10) return false;
        int64_t ev = 0;
        while (p < end && (unsigned)(*p - '0') < 10) {
            if (ev < 100000) ev = ev * 10 + (*p - '0');
            p++;
        }
        exp10 += eneg ? -ev : ev;
    }
    if (p != end) return slow_parse(s, end, out);
    if (mant == 0) { *out = neg ? -0.0 : 0.0; return true; }
    if (inexact || mant > ((uint64_t)1 << 53) || exp10 > 22 || exp10 < -22)
        return slow_parse(s, end, out);
    double v = (double)mant;
    if (exp10 > 0) v *= pow10_exact[exp10];
    else if (exp10 < 0) v /= pow10_exact[-exp10];
    *out = neg ? -v : v;
    return true;
}

/* Writes v in decimal into buf; returns the length. */
static int put_int(int64_t v, char *buf)
{
    char tmp[24];
    int k = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do { tmp[k++] = (char)('0' + u % 10); u /= 10; } while (u);
    int n = 0;
    if (v < 0) buf[n++] = '-';
    while (k) buf[n++] = tmp[--k];
    buf[n] = 0;
    return n;
}

/* Java's Double.toString (matrix/format.c, the one implementation), as
 * SystemDS writes numbers into text and csv files: zero is "0" ("-0"),
 * integers below 1e7 take a short path with the same text. */
int io_fmt_double(double x, char *buf)
{
    if (x == 0) {
        if (signbit(x)) { memcpy(buf, "-0", 3); return 2; }
        memcpy(buf, "0", 2);
        return 1;
    }
    if (fabs(x) < 1e7 && x == (double)(int64_t)x) {
        int n = put_int((int64_t)x, buf);
        memcpy(buf + n, ".0", 3);
        return n + 2;
    }
    return fmt_double(x, buf, FMT_NUM_MAX);
}

/* ---------- growable buffers ---------- */

bool io_str_grow(IoStr *s, size_t extra)
{
    size_t need = s->n + extra;
    if (need <= s->cap) return true;
    size_t nc = s->cap ? s->cap * 2 : 4096;
    while (nc < need) nc *= 2;
    char *p = br_realloc(s->p, nc);
    if (!p) return false;
    s->p = p;
    s->cap = nc;
    return true;
}

void io_str_put_int(IoStr *s, int64_t v) { s->n += (size_t)put_int(v, s->p + s->n); }

bool io_str_printf(IoStr *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !io_str_reserve(s, (size_t)n + 1)) return false;
    va_start(ap, fmt);
    vsnprintf(s->p + s->n, (size_t)n + 1, fmt, ap);
    va_end(ap);
    s->n += (size_t)n;
    return true;
}

void io_str_free(IoStr *s)
{
    free(s->p);
    s->p = NULL;
    s->n = s->cap = 0;
}

/* this thread's reads may pass the budget (io_read_past_budget) */
static _Thread_local bool past_budget;

bool io_read_past_budget(bool on)
{
    bool was = past_budget;
    past_budget = on;
    return was;
}

double io_read_need(int64_t rows, int64_t cols, int64_t nnz)
{
    double dense = (double)rows * (double)cols * 8;
    /* CSR plus the reader's two row-count arrays of the same length */
    double sparse = nnz < 0 ? dense : 24 * ((double)rows + 1) + 12 * (double)nnz;
    return BR_MIN(dense, sparse);
}

/* io_check_mem against the machine's memory (past) or the budget */
static int check_mem(const char *path, int64_t rows, int64_t cols, int64_t nnz, bool past, BrErr *e)
{
    double need = io_read_need(rows, cols, nnz), budget = past ? br_mem_physical() : br_mem_budget();
    if (need <= budget) return 0;
    return br_err(e, BR_ENOMEM, "read %s: a %lldx%lld matrix needs %.*f GB, more than the %s of %.*f GB", path,
                  (long long)rows, (long long)cols, br_gb_digits(need / 1e9), need / 1e9,
                  past ? "machine's memory" : "local memory budget", br_gb_digits(budget / 1e9), budget / 1e9);
}

int io_check_mem(const char *path, int64_t rows, int64_t cols, int64_t nnz, BrErr *e)
{
    return check_mem(path, rows, cols, nnz, past_budget, e);
}

int io_check_frame_mem(const char *path, int64_t rows, int64_t cols, BrErr *e)
{
    return check_mem(path, rows, cols, -1, false, e);
}

/* ---------- atomic output ---------- */

static unsigned tmp_counter;

char *io_dir_of(const char *path)
{
    const char *sl = strrchr(path, '/');
    if (!sl) return br_strdup(".");
    if (sl == path) return br_strdup("/");
    char *d = br_malloc((size_t)(sl - path) + 1);
    if (d) { memcpy(d, path, (size_t)(sl - path)); d[sl - path] = 0; }
    return d;
}

/* Creates directory d and its missing parents (mkdir -p); 0 on success. */
static int make_dirs(const char *d)
{
    char *p = br_strdup(d);
    if (!p) return -1;
    int rc = 0;
    for (char *s = p + 1; ; s++) {
        if (*s != '/' && *s) continue;
        char c = *s;
        *s = 0;
        if (mkdir(p, 0777) != 0 && errno != EEXIST) { rc = -1; break; }
        *s = c;
        if (!c) break;
    }
    free(p);
    return rc;
}

int io_out_open(IoOut *o, const char *path, BrErr *e)
{
    o->fd = -1;
    o->tmp = NULL;
    o->sig = 0;
    o->path = br_strdup(path);
    size_t n = strlen(path) + 64;
    o->tmp = br_malloc(n);
    if (!o->path || !o->tmp) {
        io_out_abort(o);
        return br_err(e, BR_ENOMEM, "out of memory writing %s", path);
    }
    /* before anything is created: leftovers of a killed writer settled,
     * a target write() must not replace refused */
    io_recover(path);
    if (io_check_target(path, e)) {
        io_out_abort(o);
        return e->code;
    }
    bool made = false;
    for (int tries = 0; tries < 32; tries++) {
        unsigned c = __atomic_fetch_add(&tmp_counter, 1, __ATOMIC_RELAXED);
        unsigned long long r = (unsigned long long)br_now_ns() ^ ((unsigned long long)c << 40);
        snprintf(o->tmp, n, "%s.tmp.%d.%llx", path, (int)getpid(), r & 0xffffffffffffULL);
        /* registered before it exists: SIGTERM/SIGINT removes it (base.h) */
        o->sig = br_sig_path_add(o->tmp, false);
        br_sig_hold();
        o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        br_sig_release();
        if (o->fd >= 0) return 0;
        br_sig_path_del(o->sig);
        o->sig = 0;
        if (errno == ENOENT && !made) {
            /* as SystemDS (Hadoop's FileSystem.create): missing parent
             * directories are created */
            char *d = io_dir_of(path);
            made = true;
            if (d && make_dirs(d) == 0) { free(d); continue; }
            free(d);
            errno = ENOENT;
        }
        if (errno != EEXIST) break;
    }
    int err = errno;
    io_out_abort(o);
    if (err == ENOENT) {
        char *d = io_dir_of(path);
        br_err(e, BR_EIO, "cannot write %s: directory %s does not exist", path, d ? d : "?");
        free(d);
        return e->code;
    }
    return br_err(e, BR_EIO, "cannot write %s: %s", path, strerror(err));
}

int io_out_write(IoOut *o, const void *p, size_t n, BrErr *e)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(o->fd, c, n > ((size_t)1 << 30) ? ((size_t)1 << 30) : n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0)
            return br_err(e, BR_EIO, "cannot write %s: %s", o->path,
                          w < 0 ? strerror(errno) : "write failed");
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

int io_out_close(IoOut *o, BrErr *e)
{
    if (o->fd < 0) return 0;
    /* durable before it is renamed into place (docs/durability.md) */
    int r = fsync(o->fd);
    int err = errno;
    if (close(o->fd) != 0 && r == 0) { r = -1; err = errno; }
    o->fd = -1;
    if (r != 0) return br_err(e, BR_EIO, "cannot write %s: %s", o->path, strerror(err));
    return 0;
}

void io_out_adopt_sig(IoOut *o)
{
    if (!o->tmp) return;
    br_sig_path_forget(o->tmp);
    o->sig = br_sig_path_add(o->tmp, true);
}

void io_out_abort(IoOut *o)
{
    if (o->fd >= 0) close(o->fd);
    o->fd = -1;
    if (o->tmp && o->tmp[0]) io_remove_tmp(o->tmp);   /* a file, or a folder of parts */
    br_sig_path_del(o->sig);
    o->sig = 0;
    free(o->tmp);
    free(o->path);
    o->tmp = o->path = NULL;
}

/* ---------- parallel row writer ---------- */

/* Rows go in pieces of about chunk_bytes of output; a round formats up to
 * 2 pieces per thread in parallel into their own buffers, then writes them
 * in order, so memory stays bounded by the round. */
int io_write_rows(IoOut *o, const MB *m, double bytes_per_row,
                  int64_t chunk_bytes, IoRowFmt fmt, const void *ctx,
                  BrErr *e)
{
    if (m->rows == 0) return 0;
    double cb = chunk_bytes > 0 ? (double)chunk_bytes : 4.0 * (1 << 20);
    if (bytes_per_row < 1) bytes_per_row = 1;
    int64_t piece = (int64_t)(cb / bytes_per_row);
    if (piece < 1) piece = 1;
    int64_t npieces = (m->rows + piece - 1) / piece;
    int nt = br_threads();
    int per_round = npieces > 1 ? 2 * nt : 1;
    IoStr *bufs = br_calloc((size_t)per_round, sizeof *bufs);
    if (!bufs) return br_err(e, BR_ENOMEM, "out of memory writing %s", o->path);
    int rc = 0;
    for (int64_t p0 = 0; p0 < npieces && !rc; p0 += per_round) {
        int np = (int)BR_MIN((int64_t)per_round, npieces - p0);
        int oom = 0;
        #pragma omp parallel for schedule(dynamic, 1) num_threads(nt) if (np > 1) reduction(|:oom)
        for (int i = 0; i < np; i++) {
            int64_t r0 = (p0 + i) * piece, r1 = BR_MIN(r0 + piece, m->rows);
            bufs[i].n = 0;
            if (!fmt(m, r0, r1, &bufs[i], ctx)) oom = 1;
        }
        if (oom) { rc = br_err(e, BR_ENOMEM, "out of memory writing %s", o->path); break; }
        for (int i = 0; i < np && !rc; i++) rc = io_out_write(o, bufs[i].p, bufs[i].n, e);
    }
    for (int i = 0; i < per_round; i++) io_str_free(&bufs[i]);
    free(bufs);
    return rc;
}
