/* libsvm.c: the LIBSVM text format, one matrix row per line:
 *
 *     <label> <index>:<value> <index>:<value> ...
 *
 * with 1-based feature indexes. As in SystemDS, the matrix has the label
 * in its LAST column: a row of a matrix with n columns holds the features
 * in columns 1..n-1 and the label in column n. Reading is two parallel
 * passes over line ranges (count rows, entries and the largest index;
 * then parse every range straight into its rows of the CSR result).
 * Blank lines and '#' comments (to the end of the line) are skipped;
 * indexes within a line may come in any order but not twice. Without a
 * column count (.mtd or read() argument) the matrix has (largest index + 1)
 * columns. Writing prints the label, then the non-zero features in
 * ascending index order. As SystemDS's read/write options, sep separates a
 * line's entries (default " "; blanks always separate too) and indSep an
 * entry's index from its value (default ":"). */
#include "ioint.h"

#include <math.h>
#include <stdlib.h>

/* The separators of a file: between entries (besides blanks) and between
 * an entry's index and value. */
typedef struct Seps {
    char sep, ind;
} Seps;

/* Seps from the options (NULL: " " and ":"); single distinct characters
 * other than a line break, '#' or a digit. */
static int get_seps(const char *sep, const char *ind, Seps *s, const char *path, BrErr *e)
{
    s->sep = sep ? sep[0] : ' ';
    s->ind = ind ? ind[0] : ':';
    bool ok = (!sep || strlen(sep) == 1) && (!ind || strlen(ind) == 1) && s->sep != s->ind;
    for (int k = 0; k < 2 && ok; k++) {
        char c = k ? s->ind : s->sep;
        ok = c != '\n' && c != '#' && !(c >= '0' && c <= '9') && c != '.' && c != '-' && c != '+';
    }
    if (!ok)
        return br_err(e, BR_EARG, "libsvm %s: sep \"%s\" and indSep \"%s\" must be two different single "
                      "characters, not a digit, sign, '.', '#' or line break", path, sep ? sep : " ",
                      ind ? ind : ":");
    return 0;
}

static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

/* Skips blanks and entry separators. */
static const char *skip_sep(const char *p, const char *e, const Seps *s)
{
    while (p < e && (is_ws(*p) || *p == s->sep)) p++;
    return p;
}

static const char *skip_ws(const char *p, const char *e)
{
    while (p < e && is_ws(*p)) p++;
    return p;
}

/* Takes the next line of [*p, end) (counted in err->lines): its content
 * without leading blanks and a '#' comment in [*q, *ce), and moves *p to
 * the line after. False at the end. */
static bool next_line(const char **p, const char *end, const char **q, const char **ce,
                      IoRangeErr *err)
{
    if (*p >= end) return false;
    const char *nl = memchr(*p, '\n', (size_t)(end - *p));
    if (!nl) nl = end;
    err->lines++;
    const char *h = memchr(*p, '#', (size_t)(nl - *p));
    *ce = h ? h : nl;
    *q = skip_ws(*p, *ce);
    *p = nl + 1;
    return true;
}

static const char *tok_end(const char *p, const char *e, const Seps *s)
{
    while (p < e && !is_ws(*p) && *p != s->sep) p++;
    return p;
}

/* What pass one finds in a range. */
typedef struct Count {
    int64_t rows, ents, maxidx;
} Count;

/* Pass one over [p, end): data lines, tokens after the label (an upper
 * bound of the features) and the largest index seen (0 if none parse). */
static void count_range(const char *p, const char *end, const Seps *s, Count *c, IoRangeErr *err)
{
    const char *q, *ce;
    while (next_line(&p, end, &q, &ce, err)) {
        if (q == ce) continue;
        c->rows++;
        q = skip_sep(tok_end(q, ce, s), ce, s);
        while (q < ce) {
            const char *te = tok_end(q, ce, s), *colon = memchr(q, s->ind, (size_t)(te - q));
            int64_t idx;
            if (colon && io_parse_index(q, colon, &idx) && idx > c->maxidx) c->maxidx = idx;
            c->ents++;
            q = skip_sep(te, ce, s);
        }
    }
}

/* Sorts the entries ci/v[0..n) by column (insertion sort: rows arrive
 * sorted in well-formed files) and reports a repeated index. */
static bool sort_row(int32_t *ci, double *v, int64_t n, IoRangeErr *err)
{
    for (int64_t i = 1; i < n; i++) {
        int32_t c = ci[i];
        double x = v[i];
        int64_t j = i;
        while (j > 0 && ci[j - 1] > c) { ci[j] = ci[j - 1]; v[j] = v[j - 1]; j--; }
        ci[j] = c;
        v[j] = x;
    }
    for (int64_t i = 1; i < n; i++)
        if (ci[i] == ci[i - 1]) {
            io_range_fail(err, BR_EIO, "index %lld appears twice", (long long)ci[i] + 1);
            return false;
        }
    return true;
}

/* Pass two: parses the data lines of [p, end) into rows row0.. of m,
 * whose entries start at m->rp[row0] = k0. Sets m->rp of those rows
 * (relative to k0 the caller adds). Returns the entries written. */
static int64_t parse_range(const char *p, const char *end, const Seps *s, MB *m, int64_t row0,
                           int64_t k0, IoRangeErr *err)
{
    int64_t r = row0, k = k0, cols = m->cols;
    const char *q, *ce;
    while (next_line(&p, end, &q, &ce, err)) {
        if (q == ce) continue;
        const char *te = tok_end(q, ce, s);
        double label;
        char show[48];
        if (!io_parse_double(q, te, &label)) {
            io_tok_show(q, te, show, sizeof show);
            io_range_fail(err, BR_EIO, "bad label \"%s\"", show);
            return k - k0;
        }
        int64_t rk = k;
        bool sorted = true;
        for (q = skip_sep(te, ce, s); q < ce; q = skip_sep(te, ce, s)) {
            te = tok_end(q, ce, s);
            const char *colon = memchr(q, s->ind, (size_t)(te - q));
            int64_t idx;
            double v;
            io_tok_show(q, te, show, sizeof show);
            if (!colon) {
                io_range_fail(err, BR_EIO, "expected index%cvalue, found \"%s\"", s->ind, show);
                return k - k0;
            }
            if (!io_parse_index(q, colon, &idx) || idx < 1) {
                io_range_fail(err, BR_EIO, "bad index in \"%s\" (indexes start at 1)", show);
                return k - k0;
            }
            if (idx >= cols) {
                io_range_fail(err, BR_EIO, "index %lld out of bounds: %lld columns hold %lld "
                              "features and the label", (long long)idx, (long long)cols,
                              (long long)cols - 1);
                return k - k0;
            }
            if (!io_parse_double(colon + 1, te, &v)) {
                io_range_fail(err, BR_EIO, "bad value in \"%s\"", show);
                return k - k0;
            }
            if (v == 0) continue;
            if (k > rk && m->ci[k - 1] >= idx - 1) sorted = false;
            m->ci[k] = (int32_t)(idx - 1);
            m->v[k++] = v;
        }
        if (!sorted && !sort_row(m->ci + rk, m->v + rk, k - rk, err)) return k - k0;
        if (label != 0) {
            m->ci[k] = (int32_t)(cols - 1);
            m->v[k++] = label;
        }
        m->rp[++r] = k;
    }
    return k - k0;
}

/* A libsvm matrix has 1 to 2^31 columns (the features and the label):
 * else the error in e, non-zero. */
static int bad_cols(const char *path, int64_t cols, BrErr *e)
{
    if (cols >= 1 && cols - 1 <= INT32_MAX) return 0;
    return br_err(e, BR_EDIM, "%s: a libsvm matrix needs 1 to 2^31 columns (features and the label), not %lld "
                  "(dimension mismatch)", path, (long long)cols);
}

MB *io_read_libsvm(const char *path, int64_t rows, int64_t cols, const char *sep,
                   const char *ind_sep, int64_t chunk_bytes, BrErr *e)
{
    Seps sp;
    if (get_seps(sep, ind_sep, &sp, path, e)) return NULL;
    IoBuf b;
    if (io_load(path, &b, e)) return NULL;
    MB *m = NULL;
    size_t *st = NULL;
    IoRangeErr *errs = NULL;
    Count *cnt = NULL;
    int64_t *got = NULL;
    int k = io_split(b.p, b.n, chunk_bytes, &st);
    if (k > 0) {
        errs = br_calloc((size_t)k, sizeof *errs);
        cnt = br_calloc((size_t)k + 1, sizeof *cnt);
        got = br_calloc((size_t)k, sizeof *got);
    }
    if (k <= 0 || !errs || !cnt || !got) {
        br_err(e, BR_ENOMEM, "out of memory reading %s", path);
        goto out;
    }
    #pragma omp parallel for schedule(dynamic, 1) num_threads(br_threads()) if (k > 1)
    for (int i = 0; i < k; i++) count_range(b.p + st[i], b.p + st[i + 1], &sp, &cnt[i + 1], &errs[i]);
    int64_t maxidx = 0;
    for (int i = 0; i < k; i++) {
        if (cnt[i + 1].maxidx > maxidx) maxidx = cnt[i + 1].maxidx;
        cnt[i + 1].rows += cnt[i].rows;
        cnt[i + 1].ents += cnt[i].ents + cnt[i + 1].rows - cnt[i].rows;   /* + labels */
        errs[i].lines = 0;
    }
    int64_t nrows = cnt[k].rows;
    if (rows >= 0 && rows != nrows) {
        br_err(e, BR_EDIM, "%s: expected %lld rows (from the .mtd or read() arguments), "
               "found %lld (dimension mismatch)", path, (long long)rows, (long long)nrows);
        goto out;
    }
    if (cols < 0) cols = maxidx + 1;
    if (bad_cols(path, cols, e)) goto out;
    if (io_check_mem(path, nrows, cols, cnt[k].ents, e)) goto out;
    m = mb_sp_alloc(nrows, cols, cnt[k].ents, e);
    if (!m) goto out;
    #pragma omp parallel for schedule(dynamic, 1) num_threads(br_threads()) if (k > 1)
    for (int i = 0; i < k; i++)
        got[i] = parse_range(b.p + st[i], b.p + st[i + 1], &sp, m, cnt[i].rows, cnt[i].ents, &errs[i]);
    if (io_range_report(errs, k, path, 0, e)) { mb_release(m); m = NULL; goto out; }
    /* close the gaps that dropped zeros left between the ranges */
    int64_t w = 0;
    for (int i = 0; i < k; i++) {
        int64_t from = cnt[i].ents, n = got[i], shift = from - w;
        if (shift) {
            memmove(m->ci + w, m->ci + from, (size_t)n * sizeof *m->ci);
            memmove(m->v + w, m->v + from, (size_t)n * sizeof *m->v);
            for (int64_t r = cnt[i].rows + 1; r <= cnt[i + 1].rows; r++) m->rp[r] -= shift;
        }
        w += n;
    }
    m->nnz = w;
    if (mb_examine(m, e)) { mb_release(m); m = NULL; }
out:
    free(st); free(errs); free(cnt); free(got);
    io_buf_free(&b);
    return m;
}

/* ---------- shares (parallel reads, dist/distio.c) ---------- */

/* (shares use the default separators: dist_read reads a file with other
 * separators locally) */
static const Seps share_seps = {' ', ':'};

int64_t io_libsvm_share_maxidx(const IoShare *s)
{
    Count c = {0};
    IoRangeErr err = {0};
    count_range(s->p, s->p + s->n, &share_seps, &c, &err);
    return c.maxidx;
}

/* The lines [p, p + n) as a cols-column CSR block; errors name path
 * and the line, counting base_line lines before p. */
static MB *parse_block(const char *path, const char *p, int64_t n, const Seps *sp, int64_t cols, int64_t base_line,
                       BrErr *e)
{
    if (bad_cols(path, cols, e)) return NULL;
    Count c = {0};
    IoRangeErr err = {0};
    count_range(p, p + n, sp, &c, &err);
    /* a share is held by a rank, a block by the compression of a read
     * past the budget: not checked against the local budget */
    MB *m = mb_sp_alloc(c.rows, cols, c.ents + c.rows > 0 ? c.ents + c.rows : 1, e);
    if (!m) return NULL;
    err = (IoRangeErr){0};
    m->rp[0] = 0;
    int64_t k = parse_range(p, p + n, sp, m, 0, 0, &err);
    if (io_range_report(&err, 1, path, base_line, e)) { mb_release(m); return NULL; }
    mb_sp_done(m, k);
    if (mb_examine(m, e)) { mb_release(m); return NULL; }
    return m;
}

MB *io_libsvm_share_parse(const char *path, const IoShare *s, int64_t cols, int64_t base_line, BrErr *e)
{
    return parse_block(path, s->p, (int64_t)s->n, &share_seps, cols, base_line, e);
}

/* ---------- reading by ranges of rows (io.h io_cell_rows_open) ---------- */

typedef struct LScan {
    IoCellRows *c;
    Seps sp;
    int64_t lines, maxidx, cols;   /* cols: the bound lines are checked with */
    BrErr first;                   /* the first bad line's error */
} LScan;

/* The data lines of [p, p + n) indexed, counted and checked as the
 * whole read's second pass checks them. */
static int lscan_piece(void *arg, const char *p, int64_t n, int64_t at, BrErr *e)
{
    LScan *s = arg;
    IoCellRows *c = s->c;
    Count cnt = {0};
    IoRangeErr err = {0};
    count_range(p, p + n, &s->sp, &cnt, &err);
    s->maxidx = BR_MAX(s->maxidx, cnt.maxidx);
    if (!s->first.code) {
        MB *m = mb_sp_alloc(cnt.rows, s->cols, cnt.ents + cnt.rows > 0 ? cnt.ents + cnt.rows : 1, e);
        if (!m) return e->code;
        err = (IoRangeErr){0};
        parse_range(p, p + n, &s->sp, m, 0, 0, &err);
        io_range_report(&err, 1, c->src.path, s->lines, &s->first);
        mb_release(m);
    }
    const char *q = p, *end = p + n, *b, *ce;
    err = (IoRangeErr){0};
    for (const char *ls = q; next_line(&q, end, &b, &ce, &err); ls = q) {
        if (b < ce) io_idx_upto(&c->x, c->rows++, at + (ls - p), s->lines);
        s->lines++;
    }
    c->cells += cnt.ents + cnt.rows;
    return 0;
}

int io_libsvm_rows_scan(IoCellRows *c, const IoReadPlan *p, BrErr *e)
{
    /* without a column count the whole read's bound (the largest index
     * + 1) cannot fail; the largest a block can have checks nothing */
    LScan s = {.c = c, .lines = c->base, .cols = p->cols >= 0 ? p->cols : INT32_MAX};
    if (get_seps(p->lsep, p->lind, &s.sp, c->src.path, e)) return e->code;
    c->sep = s.sp.sep;
    c->ind = s.sp.ind;
    if (s.cols < 1 || s.cols - 1 > INT32_MAX) s.cols = 1;   /* reported below */
    if (io_src_lines(&c->src, c->from, lscan_piece, &s, e)) return e->code ? e->code : br_err(e, BR_EIO, "cannot read %s", c->src.path);
    const char *path = c->src.path;
    /* in the whole read's order: the sizes, then the first bad line */
    if (p->rows >= 0 && p->rows != c->rows)
        return br_err(e, BR_EDIM, "%s: expected %lld rows (from the .mtd or read() arguments), found %lld (dimension "
                      "mismatch)", path, (long long)p->rows, (long long)c->rows);
    c->cols = p->cols >= 0 ? p->cols : s.maxidx + 1;
    if (bad_cols(path, c->cols, e)) return e->code;
    if (s.first.code) {
        *e = s.first;
        return e->code;
    }
    return 0;
}

MB *io_libsvm_rows_block(IoCellRows *c, int64_t r0, int64_t r1, BrErr *e)
{
    int64_t a, b, d, line;
    io_idx_range(&c->x, c->src.total, r0, r1, &a, &b, &d, &line);
    char *buf = br_malloc((size_t)(b - a) + 1);
    if (!buf) { br_err(e, BR_ENOMEM, "out of memory reading %s", c->src.path); return NULL; }
    MB *m = NULL;
    Seps sp = {c->sep, c->ind};
    if (!io_src_pread(&c->src, a, b - a, buf, e)) {
        /* skip the data lines before r0, and end after r1 - r0 more */
        const char *p = buf, *end = buf + (b - a), *from = NULL, *q, *ce;
        int64_t lines0 = 0;
        IoRangeErr err = {0};
        for (const char *ls = p; d < r1 && (ls = p, next_line(&p, end, &q, &ce, &err));) {
            if (d == r0 && !from) { from = ls; lines0 = line; }
            if (q < ce) d++;
            line++;
        }
        if (!from) from = p;
        m = parse_block(c->src.path, from, p - from, &sp, c->cols, lines0, e);
    }
    free(buf);
    return m;
}

/* ---------- writing ---------- */

/* Formats rows [r0, r1): the label (last column), then index:value for
 * the non-zero features. */
static bool fmt_libsvm(const MB *m, int64_t r0, int64_t r1, IoStr *out, const void *ctx)
{
    const Seps *s = ctx;
    int64_t lc = m->cols - 1;
    for (int64_t r = r0; r < r1; r++) {
        int64_t n = m->sparse ? m->rp[r + 1] - m->rp[r] : m->cols;
        const int32_t *ci = m->sparse ? m->ci + m->rp[r] : NULL;
        const double *v = m->sparse ? m->v + m->rp[r] : m->d + r * m->cols;
        double label = 0;
        if (m->sparse) { if (n > 0 && ci[n - 1] == lc) label = v[n - 1]; }
        else label = v[lc];
        if (!io_str_reserve(out, 40)) return false;
        if (label == 0 && !signbit(label)) io_str_putc(out, '0');
        else io_str_put_double(out, label);
        for (int64_t x = 0; x < n; x++) {
            int64_t c = ci ? ci[x] : x;
            if (c == lc || v[x] == 0) continue;
            if (!io_str_reserve(out, 60)) return false;
            io_str_putc(out, s->sep);
            io_str_put_int(out, c + 1);
            io_str_putc(out, s->ind);
            io_str_put_double(out, v[x]);
        }
        if (!io_str_reserve(out, 1)) return false;
        io_str_putc(out, '\n');
    }
    return true;
}

int io_write_libsvm(IoOut *o, const MB *m, const char *sep, const char *ind_sep,
                    int64_t chunk_bytes, BrErr *e)
{
    Seps sp;
    if (get_seps(sep, ind_sep, &sp, "write", e)) return e->code;
    if (m->cols < 1)
        return br_err(e, BR_EDIM, "write: a libsvm matrix needs at least one column (the label), "
                      "not %lld x %lld (dimension mismatch)", (long long)m->rows,
                      (long long)m->cols);
    double per_row = m->rows ? 24.0 * (double)m->nnz / (double)m->rows + 24 : 1;
    return io_write_rows(o, m, per_row, chunk_bytes, fmt_libsvm, &sp, e);
}
