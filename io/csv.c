/* csv.c: delimited text, one matrix row per line. Reading is two parallel
 * passes over line ranges: count the data lines of each range (so each
 * range knows its first row), then parse every range straight into the
 * dense result. Blank lines are skipped; the header line (when asked) is
 * skipped too. Empty fields take the fill value, naStrings read as NaN. */
#include "ioint.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

static bool blank(const char *p, const char *nl)
{
    while (p < nl && is_ws(*p)) p++;
    return p == nl;
}

/* What every range needs to parse its lines. */
typedef struct CsvCtx {
    const IoCsvOpts *o;
    size_t sl;          /* separator length */
    int64_t cols;
    bool trim;          /* trim blanks around fields (separator is not blank) */
} CsvCtx;

/* The end of the field starting at p: the next separator or nl. */
static const char *field_end(const char *p, const char *nl, const char *sep, size_t sl)
{
    if (sl == 1) {
        char c = sep[0];
        while (p < nl && *p != c) p++;
        return p;
    }
    for (; p + sl <= nl; p++)
        if (*p == sep[0] && !memcmp(p, sep, sl)) return p;
    return nl;
}

/* Number of fields of the line [p, nl). */
static int64_t count_fields(const char *p, const char *nl, const char *sep, size_t sl)
{
    int64_t n = 1;
    for (;;) {
        const char *fe = field_end(p, nl, sep, sl);
        if (fe >= nl) return n;
        n++;
        p = fe + sl;
    }
}

/* Parses one field [s, e) into *out; false after recording an error. */
static bool parse_field(const CsvCtx *cx, const char *s, const char *e, int64_t col,
                        double *out, IoRangeErr *err)
{
    if (cx->trim) {
        while (s < e && is_ws(*s)) s++;
        while (e > s && is_ws(e[-1])) e--;
    } else if (e > s && e[-1] == '\r') {
        e--;
    }
    if (e - s >= 2 && *s == '"' && e[-1] == '"') { s++; e--; }
    for (int i = 0; i < cx->o->n_na; i++) {
        const char *na = cx->o->na[i];
        size_t l = strlen(na);
        if (l == (size_t)(e - s) && !memcmp(s, na, l)) { *out = (double)NAN; return true; }
    }
    if (s == e) {
        if (cx->o->fill) { *out = cx->o->fill_value; return true; }
        io_range_fail(err, BR_EIO, "empty field in column %lld (fill=FALSE)", (long long)col);
        return false;
    }
    if (io_parse_double(s, e, out)) return true;
    char show[48];
    io_tok_show(s, e, show, sizeof show);
    io_range_fail(err, BR_EIO, "bad number \"%s\" in column %lld", show, (long long)col);
    return false;
}

/* Counts the data (non-blank) lines of [p, end) into *rows and all lines
 * into err->lines. */
static void count_rows(const char *p, const char *end, int64_t *rows, IoRangeErr *err)
{
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) nl = end;
        err->lines++;
        if (!blank(p, nl)) (*rows)++;
        p = nl + 1;
    }
}

/* Parses the data lines of [p, end) into consecutive rows at dst; counts
 * non-zeros into *nnz. */
static void parse_rows(const char *p, const char *end, const CsvCtx *cx, double *dst,
                       int64_t *nnz, IoRangeErr *err)
{
    const char *sep = cx->o->sep;
    int64_t cols = cx->cols, nz = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) nl = end;
        err->lines++;
        const char *q = p;
        p = nl + 1;
        if (blank(q, nl)) continue;
        int64_t col = 0;
        for (;;) {
            const char *fe = field_end(q, nl, sep, cx->sl);
            if (col < cols) {
                if (!parse_field(cx, q, fe, col + 1, &dst[col], err)) return;
                nz += dst[col] != 0;
            }
            col++;
            if (fe >= nl) break;
            q = fe + cx->sl;
        }
        if (col != cols) {
            io_range_fail(err, BR_EIO, "expected %lld columns, found %lld", (long long)cols,
                          (long long)col);
            return;
        }
        if (cols) dst += cols;
    }
    *nnz = nz;
}

/* Skips a UTF-8 BOM and, when asked, the header line at the start of
 * [p, p+n); the offset of the first data line. */
static size_t skip_head(const char *p, size_t n, bool header, const char **head, const char **head_nl)
{
    size_t pos = n >= 3 && !memcmp(p, "\xEF\xBB\xBF", 3) ? 3 : 0;
    *head = *head_nl = NULL;
    if (header && n > pos) {
        *head = p + pos;
        *head_nl = memchr(*head, '\n', n - pos);
        pos = (size_t)(*head_nl - p) + 1;
    }
    return pos;
}

/* Fields of the first data line of [p, p+n), -1 without one. */
static int64_t first_cols(const char *p, size_t n, const IoCsvOpts *o, size_t sl)
{
    for (size_t q = 0; q < n;) {
        const char *nl = memchr(p + q, '\n', n - q);
        if (!blank(p + q, nl)) return count_fields(p + q, nl, o->sep, sl);
        q = (size_t)(nl - p) + 1;
    }
    return -1;
}

/* The data lines of [base, base+n) (every line ends in '\n') as a dense
 * block of cols columns: counted, then parsed, by ranges in parallel.
 * rows >= 0 must match; errors count base_line lines before. */
static MB *parse_lines(const char *path, const char *base, size_t n, int64_t rows, int64_t cols,
                       const IoCsvOpts *o, int64_t base_line, bool check, BrErr *e)
{
    CsvCtx cx = {o, strlen(o->sep), cols, true};
    for (size_t i = 0; i < cx.sl; i++) if (is_ws(o->sep[i])) cx.trim = false;
    MB *m = NULL;
    size_t *st = NULL;
    IoRangeErr *errs = NULL;
    int64_t *cnt = NULL, *nnz = NULL;
    int k = io_split(base, n, o->chunk_bytes, &st);
    if (k > 0) {
        errs = br_calloc((size_t)k, sizeof *errs);
        cnt = br_calloc((size_t)k + 1, sizeof *cnt);
        nnz = br_calloc((size_t)k, sizeof *nnz);
    }
    if (k <= 0 || !errs || !cnt || !nnz) {
        br_err(e, BR_ENOMEM, "out of memory reading %s", path);
        goto out;
    }
    #pragma omp parallel for schedule(dynamic, 1) num_threads(br_threads()) if (k > 1)
    for (int i = 0; i < k; i++) count_rows(base + st[i], base + st[i + 1], &cnt[i + 1], &errs[i]);
    for (int i = 0; i < k; i++) { cnt[i + 1] += cnt[i]; errs[i].lines = 0; }
    int64_t nrows = cnt[k];
    if (cx.cols == 0 && nrows == 0 && rows > 0) nrows = rows; /* an n x 0 matrix */
    if (rows >= 0 && rows != nrows) {
        br_err(e, BR_EDIM, "%s: expected %lld rows (from the .mtd or read() arguments), "
               "found %lld (dimension mismatch)", path, (long long)rows, (long long)nrows);
        goto out;
    }
    if (check && io_check_mem(path, nrows, cx.cols, -1, e)) goto out;
    m = mb_dense_uninit(nrows, cx.cols, e);
    if (!m) goto out;
    #pragma omp parallel for schedule(dynamic, 1) num_threads(br_threads()) if (k > 1)
    for (int i = 0; i < k; i++)
        parse_rows(base + st[i], base + st[i + 1], &cx, m->d ? m->d + cnt[i] * cx.cols : NULL,
                   &nnz[i], &errs[i]);
    if (io_range_report(errs, k, path, base_line, e)) { mb_release(m); m = NULL; goto out; }
    m->nnz = 0;
    for (int i = 0; i < k; i++) m->nnz += nnz[i];
out:
    free(st); free(errs); free(cnt); free(nnz);
    return m;
}

MB *io_read_csv(const char *path, int64_t rows, int64_t cols, const IoCsvOpts *o, BrErr *e)
{
    if (!o->sep || !o->sep[0]) {
        br_err(e, BR_EARG, "read %s: the csv separator must not be empty", path);
        return NULL;
    }
    IoBuf b;
    if (io_load(path, &b, e)) return NULL;
    const char *head, *head_nl;
    size_t pos = skip_head(b.p, b.n, o->header, &head, &head_nl);
    if (cols < 0) {
        /* columns from the first data line, else from the header */
        cols = first_cols(b.p + pos, b.n - pos, o, strlen(o->sep));
        if (cols < 0) cols = head ? count_fields(head, head_nl, o->sep, strlen(o->sep)) : 0;
    }
    MB *m = parse_lines(path, b.p + pos, b.n - pos, rows, cols, o, head ? 1 : 0, true, e);
    io_buf_free(&b);
    if (m && mb_examine(m, e)) { mb_release(m); m = NULL; }
    return m;
}

void io_csv_share_cols(const IoShare *s, const IoCsvOpts *o, int64_t *data, int64_t *header)
{
    const char *head = NULL, *head_nl = NULL;
    size_t pos = s->first ? skip_head(s->p, s->n, o->header, &head, &head_nl) : 0;
    *data = first_cols(s->p + pos, s->n - pos, o, strlen(o->sep));
    *header = head ? count_fields(head, head_nl, o->sep, strlen(o->sep)) : -1;
}

MB *io_csv_share_parse(const char *path, const IoShare *s, int64_t cols, const IoCsvOpts *o, int64_t base_line,
                       BrErr *e)
{
    if (!o->sep || !o->sep[0]) {
        br_err(e, BR_EARG, "read %s: the csv separator must not be empty", path);
        return NULL;
    }
    const char *head = NULL, *head_nl = NULL;
    size_t pos = s->first ? skip_head(s->p, s->n, o->header, &head, &head_nl) : 0;
    /* a share is held by a rank: its rows are not checked against the
     * local budget, which decides what rank 0 runs locally */
    return parse_lines(path, s->p + pos, s->n - pos, -1, cols, o, base_line + (head ? 1 : 0), false, e);
}

/* ---------- reading by ranges of rows ---------- */

struct IoCsvRows {
    IoSrc src;
    IoCsvOpts o;
    int64_t rows, cols;
    IoRowIdx x;         /* data lines (the header and blank lines skipped) */
    int64_t ok_to;      /* rows [0, ok_to) parsed without an error */
};

/* The scan: data lines counted, every g-th's offset kept, the first
 * data line's and the header's extent noted. */
typedef struct CsvScan {
    int64_t lines, data;          /* lines seen (all), data lines */
    int64_t first0, first1;       /* the first data line [first0, first1), -1 none */
    int64_t head0, head1;         /* the header line, -1 none */
} CsvScan;

#define CSV_SCAN_BUF (1 << 20)

static int csv_scan(IoCsvRows *c, CsvScan *s, BrErr *e)
{
    *s = (CsvScan){0, 0, -1, -1, -1, -1};
    char *buf = br_malloc(CSV_SCAN_BUF);
    if (!buf) return br_err(e, BR_ENOMEM, "out of memory reading %s", c->src.path);
    int64_t start = 0;          /* the current line's offset */
    bool nonblank = false, head = c->o.header;
    for (int64_t at = 0; at < c->src.total && !e->code;) {
        int64_t n = BR_MIN(CSV_SCAN_BUF, c->src.total - at);
        if (io_src_pread(&c->src, at, n, buf, e)) break;
        int64_t q = 0;
        if (at == 0 && n >= 3 && !memcmp(buf, "\xEF\xBB\xBF", 3)) q = start = 3;
        while (q < n) {
            const char *nl = memchr(buf + q, '\n', (size_t)(n - q));
            int64_t end = nl ? nl - buf : n;
            if (!nonblank) nonblank = !blank(buf + q, buf + end);
            q = end + 1;
            if (!nl) break;
            /* the line [start, at + end) is complete */
            if (head) {
                s->head0 = start;
                s->head1 = at + end;
                head = false;
            } else if (nonblank) {
                if (s->first0 < 0) { s->first0 = start; s->first1 = at + end; }
                io_idx_upto(&c->x, s->data, start, s->lines);
                s->data++;
            }
            s->lines++;
            nonblank = false;
            start = at + end + 1;
        }
        at += n;
    }
    free(buf);
    return e->code;
}

/* The fields of the line [a, b) of the data. */
static int64_t csv_line_fields(const IoCsvRows *c, int64_t a, int64_t b, BrErr *e)
{
    char *l = br_malloc((size_t)(b - a) + 1);
    if (!l) { br_err(e, BR_ENOMEM, "out of memory reading %s", c->src.path); return -1; }
    int64_t f = io_src_pread(&c->src, a, b - a, l, e) ? -1 : count_fields(l, l + (b - a), c->o.sep, strlen(c->o.sep));
    free(l);
    return f;
}

IoCsvRows *io_csv_rows_open(const char *path, const IoReadPlan *p, int64_t *rows, int64_t *cols, BrErr *e)
{
    if (!p->csv.sep || !p->csv.sep[0]) {
        br_err(e, BR_EARG, "read %s: the csv separator must not be empty", path);
        return NULL;
    }
    IoCsvRows *c = br_calloc(1, sizeof *c);
    if (!c) {
        br_err(e, BR_ENOMEM, "out of memory reading %s", path);
        return NULL;
    }
    c->o = p->csv;
    CsvScan s;
    if (!io_idx_init(&c->x, path, e) && !io_src_open(&c->src, path, e) && !csv_scan(c, &s, e)) {
        c->rows = s.data;
        c->cols = p->cols;
        /* columns as the whole read counts them: the first data line's,
         * else the header's */
        if (c->cols < 0)
            c->cols = s.first0 >= 0 ? csv_line_fields(c, s.first0, s.first1, e)
                    : s.head0 >= 0  ? csv_line_fields(c, s.head0, s.head1, e) : 0;
        if (!e->code && p->rows >= 0 && p->rows != c->rows)
            br_err(e, BR_EDIM, "%s: expected %lld rows (from the .mtd or read() arguments), found %lld (dimension "
                   "mismatch)", path, (long long)p->rows, (long long)c->rows);
    }
    if (e->code) {
        io_csv_rows_close(c);
        return NULL;
    }
    *rows = c->rows;
    *cols = c->cols;
    return c;
}

/* Rows [r0, r1) parsed, without io_csv_rows's search for an earlier
 * error. */
static MB *csv_rows(IoCsvRows *c, int64_t r0, int64_t r1, BrErr *e)
{
    int64_t a, b, d0, line;
    io_idx_range(&c->x, c->src.total, r0, r1, &a, &b, &d0, &line);
    char *buf = br_malloc((size_t)(b - a) + 1);
    if (!buf) { br_err(e, BR_ENOMEM, "out of memory reading %s", c->src.path); return NULL; }
    MB *m = NULL;
    if (!io_src_pread(&c->src, a, b - a, buf, e)) {
        /* skip the data lines before r0, and end after r1 - r0 more */
        const char *p = buf, *end = buf + (b - a), *from = NULL;
        int64_t lines0 = 0;
        for (int64_t d = d0; p < end && d < r1;) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            if (d == r0 && !from) { from = p; lines0 = line; }
            if (!blank(p, nl)) d++;
            line++;
            p = nl + 1;
        }
        if (!from) from = p;
        m = parse_lines(c->src.path, from, (size_t)(p - from), r1 - r0, c->cols, &c->o, lines0, false, e);
    }
    free(buf);
    return m;
}

MB *io_csv_rows(IoCsvRows *c, int64_t r0, int64_t r1, BrErr *e)
{
    r0 = BR_MAX(0, BR_MIN(r0, c->rows));
    r1 = BR_MAX(r0, BR_MIN(r1, c->rows));
    if (r0 == r1) return mb_dense_uninit(0, c->cols, e);
    MB *m = csv_rows(c, r0, r1, e);
    if (m && r0 <= c->ok_to) c->ok_to = BR_MAX(c->ok_to, r1);
    if (m || r0 <= c->ok_to) return m;
    /* the whole read names the file's first bad line: look before r0 */
    int64_t len = r1 - r0;
    for (int64_t a = c->ok_to; a < r0; a += len) {
        BrErr e2 = {0};
        MB *t = csv_rows(c, a, BR_MIN(r0, a + len), &e2);
        if (!t) {
            *e = e2;
            return NULL;
        }
        mb_release(t);
    }
    c->ok_to = r0;
    return NULL;
}

void io_csv_rows_close(IoCsvRows *c)
{
    if (!c) return;
    io_src_close(&c->src);
    io_idx_free(&c->x);
    free(c);
}

/* ---------- writing ---------- */

/* Formats rows [r0, r1) as separated values. */
static bool fmt_csv(const MB *m, int64_t r0, int64_t r1, IoStr *out, const void *ctx)
{
    const char *sep = ctx;
    size_t sl = strlen(sep);
    for (int64_t r = r0; r < r1; r++) {
        if (!io_str_reserve(out, (size_t)m->cols * (32 + sl) + 2)) return false;
        int64_t k = m->sparse ? m->rp[r] : 0, kend = m->sparse ? m->rp[r + 1] : 0;
        for (int64_t c = 0; c < m->cols; c++) {
            if (c) io_str_putn(out, sep, sl);
            double v;
            if (!m->sparse) v = m->d[r * m->cols + c];
            else if (k < kend && m->ci[k] == c) v = m->v[k++];
            else v = 0;
            if (v == 0 && !signbit(v)) io_str_putc(out, '0');
            else io_str_put_double(out, v);
        }
        io_str_putc(out, '\n');
    }
    return true;
}

int io_write_csv(IoOut *o, const MB *m, bool header, const char *sep, int64_t chunk_bytes,
                 BrErr *e)
{
    if (m->cols == 0) return 0;
    if (header) {
        IoStr h = {0};
        bool ok = true;
        for (int64_t c = 0; c < m->cols && ok; c++)
            ok = io_str_printf(&h, "%sC%lld", c ? sep : "", (long long)c + 1);
        ok = ok && io_str_printf(&h, "\n");
        if (!ok) { io_str_free(&h); return br_err(e, BR_ENOMEM, "out of memory writing %s", o->path); }
        int rc = io_out_write(o, h.p, h.n, e);
        io_str_free(&h);
        if (rc) return rc;
    }
    double sp = m->rows > 0 && m->cols > 0 ? (double)m->nnz / ((double)m->rows * (double)m->cols) : 0;
    double per_row = (double)m->cols * (1.0 + (double)strlen(sep) + 18.0 * sp) + 1;
    return io_write_rows(o, m, per_row, chunk_bytes, fmt_csv, sep, e);
}
