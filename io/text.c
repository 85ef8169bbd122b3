/* text.c: the cell formats: text ("i j v" lines, 1-based, any order, the
 * last of duplicate cells wins) and Matrix Market (coordinate and array).
 * Reading parses line ranges in parallel into per-range triples, then
 * assembles a dense block or a CSR block (counting sort by row, then a
 * stable sort by column within unsorted rows). */
#include "ioint.h"

#include <errno.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* Triples of one range, in file order, plus its first error. */
typedef struct TRange {
    IoRangeErr err;
    int64_t *r;        /* 0-based rows */
    int32_t *c;        /* 0-based columns */
    double *v;
    int64_t n, cap;
    int64_t maxr, maxc; /* 1-based maxima seen (0: none) */
} TRange;

/* What the range parser needs to know. */
typedef struct TParse {
    int64_t rows, cols;   /* bounds, -1 unknown */
    bool pattern;         /* mm pattern: "i j", value 1 */
    const char *dimsrc;   /* where the bounds came from, for messages */
} TParse;

static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

static const char *skip_ws(const char *p, const char *nl)
{
    while (p < nl && is_ws(*p)) p++;
    return p;
}

static const char *tok_end(const char *p, const char *nl)
{
    while (p < nl && !is_ws(*p)) p++;
    return p;
}

static bool tr_push(TRange *t, int64_t r, int64_t c, double v)
{
    if (t->n == t->cap) {
        int64_t nc = t->cap ? 2 * t->cap : 1024;
        int64_t *nr = br_realloc(t->r, (size_t)nc * sizeof *nr);
        if (nr) t->r = nr;
        int32_t *ncc = br_realloc(t->c, (size_t)nc * sizeof *ncc);
        if (ncc) t->c = ncc;
        double *nv = br_realloc(t->v, (size_t)nc * sizeof *nv);
        if (nv) t->v = nv;
        if (!nr || !ncc || !nv) return false;
        t->cap = nc;
    }
    t->r[t->n] = r;
    t->c[t->n] = (int32_t)c;
    t->v[t->n] = v;
    t->n++;
    return true;
}

static void tr_free(TRange *t, int k)
{
    for (int i = 0; i < k; i++) { free(t[i].r); free(t[i].c); free(t[i].v); }
    free(t);
}

/* Parses the "i j v" (or "i j") lines of [p, end) into t. Blank lines and
 * lines starting with '%' are skipped. */
static void parse_triples(const char *p, const char *end, const TParse *tp, TRange *t)
{
    int want = tp->pattern ? 2 : 3;
    char show[48];
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) nl = end;
        t->err.lines++;
        const char *q = skip_ws(p, nl);
        p = nl + 1;
        if (q == nl || *q == '%') continue;
        const char *ts[3], *te[3];
        int nt = 0;
        while (q < nl) {
            const char *s = q;
            q = tok_end(q, nl);
            if (nt < 3) { ts[nt] = s; te[nt] = q; }
            nt++;
            q = skip_ws(q, nl);
        }
        if (nt != want) {
            io_range_fail(&t->err, BR_EIO, "expected %d values (%s), found %d", want,
                          tp->pattern ? "i j" : "i j v", nt);
            return;
        }
        int64_t ij[2];
        for (int k = 0; k < 2; k++)
            if (!io_parse_index(ts[k], te[k], &ij[k]) || ij[k] < 1) {
                io_tok_show(ts[k], te[k], show, sizeof show);
                io_range_fail(&t->err, BR_EIO, "bad %s index \"%s\" (1-based integer expected)",
                              k ? "column" : "row", show);
                return;
            }
        double v = 1;
        if (!tp->pattern && !io_parse_double(ts[2], te[2], &v)) {
            io_tok_show(ts[2], te[2], show, sizeof show);
            io_range_fail(&t->err, BR_EIO, "bad number \"%s\" in column 3", show);
            return;
        }
        if ((tp->rows >= 0 && ij[0] > tp->rows) || (tp->cols >= 0 && ij[1] > tp->cols)) {
            io_range_fail(&t->err, BR_EINDEX, "index (%lld, %lld) out of bounds for "
                          "dimensions %lldx%lld (from %s)", (long long)ij[0], (long long)ij[1],
                          (long long)tp->rows, (long long)tp->cols, tp->dimsrc);
            return;
        }
        if (ij[1] > INT32_MAX) {
            io_range_fail(&t->err, BR_EINDEX, "column index %lld too large", (long long)ij[1]);
            return;
        }
        if (!tr_push(t, ij[0] - 1, ij[1] - 1, v)) {
            io_range_fail(&t->err, BR_ENOMEM, "out of memory");
            return;
        }
        if (ij[0] > t->maxr) t->maxr = ij[0];
        if (ij[1] > t->maxc) t->maxc = ij[1];
    }
}

/* Parses every whitespace-separated number of [p, end) into t->v
 * (Matrix Market array entries). */
static void parse_values(const char *p, const char *end, TRange *t)
{
    char show[48];
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) nl = end;
        t->err.lines++;
        const char *q = skip_ws(p, nl);
        p = nl + 1;
        if (q < nl && *q == '%') continue;
        for (int col = 1; q < nl; col++) {
            const char *s = q;
            q = tok_end(q, nl);
            double v;
            if (!io_parse_double(s, q, &v)) {
                io_tok_show(s, q, show, sizeof show);
                io_range_fail(&t->err, BR_EIO, "bad number \"%s\" in column %d", show, col);
                return;
            }
            if (!tr_push(t, 0, 0, v)) { io_range_fail(&t->err, BR_ENOMEM, "out of memory"); return; }
            q = skip_ws(q, nl);
        }
    }
}

/* A column and value; the order of equal columns is file order. */
typedef struct CV {
    int32_t c;
    double v;
} CV;

/* Stable merge sort of a[0..n) by column, using tmp[0..n). */
static void sort_cv(CV *a, CV *tmp, int64_t n)
{
    if (n <= 24) {
        for (int64_t i = 1; i < n; i++) {
            CV x = a[i];
            int64_t j = i;
            while (j > 0 && a[j - 1].c > x.c) { a[j] = a[j - 1]; j--; }
            a[j] = x;
        }
        return;
    }
    int64_t h = n / 2;
    sort_cv(a, tmp, h);
    sort_cv(a + h, tmp, n - h);
    int64_t i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = a[j].c < a[i].c ? a[j++] : a[i++];
    while (i < h) tmp[k++] = a[i++];
    while (j < n) tmp[k++] = a[j++];
    memcpy(a, tmp, (size_t)n * sizeof *a);
}

/* Puts row segment tc/tv[0..n) in column order, keeps the last of
 * duplicate columns, drops zeros; returns the count kept (-1: no memory). */
static int64_t settle_row(int32_t *tc, double *tv, int64_t n)
{
    bool clean = true;
    for (int64_t k = 0; k < n && clean; k++)
        clean = tv[k] != 0 && (k == 0 || tc[k] > tc[k - 1]);
    if (clean) return n;
    CV *a = br_malloc(2 * (size_t)n * sizeof *a);
    if (!a) return -1;
    for (int64_t k = 0; k < n; k++) { a[k].c = tc[k]; a[k].v = tv[k]; }
    sort_cv(a, a + n, n);
    int64_t out = 0;
    for (int64_t k = 0; k < n; k++) {
        if (k + 1 < n && a[k + 1].c == a[k].c) continue; /* a later one wins */
        if (a[k].v == 0) continue;
        tc[out] = a[k].c;
        tv[out] = a[k].v;
        out++;
    }
    free(a);
    return out;
}

/* Builds the block from the ranges' triples (in order; later ones
 * overwrite earlier ones). sym: 0 general, 1 symmetric, 2 skew-symmetric
 * (each off-diagonal entry also lands mirrored). Caller owns the result. */
static MB *assemble(const char *t_path, const TRange *t, int k, int64_t rows, int64_t cols, int sym, bool check,
                    BrErr *e)
{
    int64_t total = 0;
    for (int i = 0; i < k; i++) total += t[i].n * (sym ? 2 : 1);
    if (check && io_check_mem(t_path, rows, cols, total, e)) return NULL;
    if (!mb_should_be_sparse(rows, cols, total) && rows * cols > 0) {
        MB *m = mb_dense(rows, cols, e);
        if (!m) return NULL;
        for (int i = 0; i < k; i++)
            for (int64_t x = 0; x < t[i].n; x++) {
                int64_t r = t[i].r[x], c = t[i].c[x];
                m->d[r * cols + c] = t[i].v[x];
                if (sym && r != c) m->d[c * cols + r] = sym == 2 ? -t[i].v[x] : t[i].v[x];
            }
        mb_recount_nnz(m);
        if (mb_examine(m, e)) { mb_release(m); return NULL; }
        return m;
    }
    int64_t *start = br_calloc((size_t)rows + 1, sizeof *start);
    int64_t *fill = br_malloc(((size_t)rows + 1) * sizeof *fill);
    int32_t *tc = br_malloc((size_t)(total ? total : 1) * sizeof *tc);
    double *tv = br_malloc((size_t)(total ? total : 1) * sizeof *tv);
    MB *m = NULL;
    if (!start || !fill || !tc || !tv) { br_err(e, BR_ENOMEM, "out of memory assembling a %lldx%lld matrix", (long long)rows, (long long)cols); goto out; }
    for (int i = 0; i < k; i++)
        for (int64_t x = 0; x < t[i].n; x++) {
            start[t[i].r[x] + 1]++;
            if (sym && t[i].r[x] != t[i].c[x]) start[t[i].c[x] + 1]++;
        }
    for (int64_t r = 0; r < rows; r++) start[r + 1] += start[r];
    memcpy(fill, start, ((size_t)rows + 1) * sizeof *fill);
    for (int i = 0; i < k; i++)
        for (int64_t x = 0; x < t[i].n; x++) {
            int64_t r = t[i].r[x], c = t[i].c[x], p = fill[r]++;
            tc[p] = (int32_t)c;
            tv[p] = t[i].v[x];
            if (sym && r != c) {
                p = fill[c]++;
                tc[p] = (int32_t)r;
                tv[p] = sym == 2 ? -t[i].v[x] : t[i].v[x];
            }
        }
    /* fill[r] becomes the kept count of row r */
    int oom = 0;
    const bool par = br_par((double)total);
    #pragma omp parallel for schedule(dynamic, 256) num_threads(br_threads()) if (par) reduction(|:oom)
    for (int64_t r = 0; r < rows; r++) {
        int64_t kept = settle_row(tc + start[r], tv + start[r], start[r + 1] - start[r]);
        if (kept < 0) { oom = 1; kept = 0; }
        fill[r] = kept;
    }
    if (oom) { br_err(e, BR_ENOMEM, "out of memory sorting matrix rows"); goto out; }
    int64_t nnz = 0;
    for (int64_t r = 0; r < rows; r++) nnz += fill[r];
    m = mb_sp_alloc(rows, cols, nnz, e);
    if (!m) goto out;
    for (int64_t r = 0; r < rows; r++) m->rp[r + 1] = m->rp[r] + fill[r];
    const bool par2 = br_par((double)nnz);
    #pragma omp parallel for schedule(dynamic, 256) num_threads(br_threads()) if (par2)
    for (int64_t r = 0; r < rows; r++) {
        memcpy(m->ci + m->rp[r], tc + start[r], (size_t)fill[r] * sizeof *tc);
        memcpy(m->v + m->rp[r], tv + start[r], (size_t)fill[r] * sizeof *tv);
    }
    m->nnz = nnz;
    m->build_row = rows;
    if (mb_examine(m, e)) { mb_release(m); m = NULL; }
out:
    free(start); free(fill); free(tc); free(tv);
    return m;
}

/* Parses lines [off, b->n) of b in parallel ranges with tp (values_only:
 * array entries). Returns the ranges (caller frees with tr_free) and their
 * count in *k, or NULL with e set (line numbers start after base_line). */
static TRange *parse_ranges(const IoBuf *b, size_t off, int64_t base_line, const TParse *tp,
                            bool values_only, int64_t chunk_bytes, const char *path,
                            int *k, BrErr *e)
{
    size_t *st = NULL;
    int nk = io_split(b->p + off, b->n - off, chunk_bytes, &st);
    TRange *t = nk > 0 ? br_calloc((size_t)nk, sizeof *t) : NULL;
    if (!t) {
        free(st);
        br_err(e, BR_ENOMEM, "out of memory reading %s", path);
        return NULL;
    }
    const char *base = b->p + off;
    #pragma omp parallel for schedule(dynamic, 1) num_threads(br_threads()) if (nk > 1)
    for (int i = 0; i < nk; i++) {
        if (values_only) parse_values(base + st[i], base + st[i + 1], &t[i]);
        else parse_triples(base + st[i], base + st[i + 1], tp, &t[i]);
    }
    free(st);
    IoRangeErr *errs = br_malloc((size_t)nk * sizeof *errs);
    if (!errs) { tr_free(t, nk); br_err(e, BR_ENOMEM, "out of memory"); return NULL; }
    for (int i = 0; i < nk; i++) errs[i] = t[i].err;
    int rc = io_range_report(errs, nk, path, base_line, e);
    free(errs);
    if (rc) { tr_free(t, nk); return NULL; }
    *k = nk;
    return t;
}

MB *io_read_text(const char *path, int64_t rows, int64_t cols, int64_t chunk_bytes, BrErr *e)
{
    IoBuf b;
    if (io_load(path, &b, e)) return NULL;
    TParse tp = {rows, cols, false, "the .mtd or read() arguments"};
    int k = 0;
    TRange *t = parse_ranges(&b, 0, 0, &tp, false, chunk_bytes, path, &k, e);
    io_buf_free(&b);
    if (!t) return NULL;
    int64_t mr = 0, mc = 0;
    for (int i = 0; i < k; i++) { mr = BR_MAX(mr, t[i].maxr); mc = BR_MAX(mc, t[i].maxc); }
    MB *m = assemble(path, t, k, rows >= 0 ? rows : mr, cols >= 0 ? cols : mc, 0, true, e);
    tr_free(t, k);
    return m;
}

/* Reads the next line of b from *pos: [*s, *nl); false at the end. */
static bool next_line(const IoBuf *b, size_t *pos, const char **s, const char **nl)
{
    if (*pos >= b->n) return false;
    *s = b->p + *pos;
    const char *q = memchr(*s, '\n', b->n - *pos);
    *nl = q ? q : b->p + b->n;
    *pos = (size_t)(*nl - b->p) + 1;
    return true;
}

/* The Matrix Market header of b (the banner and the size line after
 * comments) into h; *pos and *line are where the entries begin. */
static int mm_header(const IoBuf *b, const char *path, int64_t rows, int64_t cols, IoMmHead *h, size_t *pos,
                     int64_t *line, BrErr *e)
{
    *h = (IoMmHead){0};
    *pos = 0;
    *line = 0;
    const char *s, *nl;
    char tok[5][32];
    int nt = 0;
    if (next_line(b, pos, &s, &nl)) {
        ++*line;
        const char *q = skip_ws(s, nl);
        while (q < nl && nt < 5) {
            const char *x = tok_end(q, nl);
            io_tok_show(q, x, tok[nt], sizeof tok[nt]);
            nt++;
            q = skip_ws(x, nl);
        }
    }
    if (nt < 5 || strcasecmp(tok[0], "%%MatrixMarket") || strcasecmp(tok[1], "matrix"))
        return br_err(e, BR_EIO, "%s: line 1: not a Matrix Market file (expected "
                      "\"%%%%MatrixMarket matrix <format> <field> <symmetry>\")", path);
    h->coord = !strcasecmp(tok[2], "coordinate");
    if (!h->coord && strcasecmp(tok[2], "array"))
        return br_err(e, BR_EIO, "%s: line 1: unknown Matrix Market format \"%s\"", path, tok[2]);
    h->pattern = !strcasecmp(tok[3], "pattern");
    if (!h->pattern && strcasecmp(tok[3], "real") && strcasecmp(tok[3], "double") && strcasecmp(tok[3], "integer"))
        return br_err(e, BR_EIO, "%s: line 1: unsupported Matrix Market field \"%s\" (real, "
                      "integer or pattern)", path, tok[3]);
    int sym = !strcasecmp(tok[4], "general") ? 0
            : (!strcasecmp(tok[4], "symmetric") || !strcasecmp(tok[4], "hermitian")) ? 1
            : !strcasecmp(tok[4], "skew-symmetric") ? 2 : -1;
    if (sym < 0 || (h->pattern && !h->coord))
        return br_err(e, BR_EIO, "%s: line 1: unsupported Matrix Market kind \"%s %s %s\"", path, tok[2], tok[3],
                      tok[4]);
    h->sym = sym;
    /* size line after comments */
    int64_t sz[3] = {0, 0, 0};
    int nsz = 0;
    for (;;) {
        if (!next_line(b, pos, &s, &nl)) return br_err(e, BR_EIO, "%s: missing the Matrix Market size line", path);
        ++*line;
        const char *q = skip_ws(s, nl);
        if (q == nl || *q == '%') continue;
        while (q < nl) {
            const char *x = tok_end(q, nl);
            if (nsz >= 3 || !io_parse_index(q, x, &sz[nsz])) { nsz = -1; break; }
            nsz++;
            q = skip_ws(x, nl);
        }
        break;
    }
    if (nsz != (h->coord ? 3 : 2))
        return br_err(e, BR_EIO, "%s: line %lld: bad Matrix Market size line (expected \"%s\")", path,
                      (long long)*line, h->coord ? "rows cols nnz" : "rows cols");
    if ((rows >= 0 && rows != sz[0]) || (cols >= 0 && cols != sz[1]))
        return br_err(e, BR_EDIM, "%s: line %lld: dimension mismatch: the file says %lldx%lld, the "
                      ".mtd or read() arguments say %lldx%lld", path, (long long)*line, (long long)sz[0],
                      (long long)sz[1], (long long)(rows >= 0 ? rows : sz[0]), (long long)(cols >= 0 ? cols : sz[1]));
    if (sym && sz[0] != sz[1])
        return br_err(e, BR_EDIM, "%s: line %lld: a symmetric matrix must be square (dimensions "
                      "%lldx%lld)", path, (long long)*line, (long long)sz[0], (long long)sz[1]);
    h->rows = sz[0];
    h->cols = sz[1];
    h->entries = h->coord ? sz[2] : sym == 0 ? sz[0] * sz[1] : sym == 1 ? sz[0] * (sz[0] + 1) / 2
                                                                       : sz[0] * (sz[0] - 1) / 2;
    return 0;
}

int io_mm_count_check(const char *path, int64_t want, int64_t found, BrErr *e)
{
    if (found == want) return 0;
    return br_err(e, BR_EIO, "%s: expected %lld entries (from the size line), found %lld%s", path, (long long)want,
                  (long long)found, found < want ? " (truncated file?)" : "");
}

/* A folder of part files: its header is in the first part (as a
 * distributed write puts it). */
static int mm_head_dir(const char *path, int64_t rows, int64_t cols, IoMmHead *h, BrErr *e)
{
    char **names = NULL;
    int np = io_list_parts(path, &names, e);
    if (np < 0) return e->code;
    int rc = np > 0 ? io_mm_head(names[0], rows, cols, h, e)
                    : br_err(e, BR_EIO, "%s: missing the Matrix Market size line", path);
    for (int i = 0; i < np; i++) free(names[i]);
    free(names);
    return rc;
}

int io_mm_head(const char *path, int64_t rows, int64_t cols, IoMmHead *h, BrErr *e)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return mm_head_dir(path, rows, cols, h, e);
    /* a prefix of the file, doubled until it holds the size line */
    FILE *f = fopen(path, "rb");
    if (!f) return br_err(e, BR_EIO, "cannot open %s: %s", path, strerror(errno));
    IoBuf b = {0};
    size_t cap = 0;
    int rc = 0;
    for (size_t want = 65536;; want *= 2) {
        char *p = realloc(b.p, want + 1);
        if (!p) { rc = br_err(e, BR_ENOMEM, "out of memory reading %s", path); break; }
        b.p = p;
        b.n += fread(b.p + b.n, 1, want - b.n, f);
        cap = want;
        bool all = b.n < cap;
        /* only whole lines: up to the last newline, unless at the end */
        size_t n = b.n;
        while (!all && n > 0 && b.p[n - 1] != '\n') n--;
        IoBuf whole = {b.p, n, n};
        size_t pos;
        int64_t line;
        BrErr e2 = {0};
        rc = mm_header(&whole, path, rows, cols, h, &pos, &line, &e2);
        if (!rc || all || strstr(e2.msg, "missing the Matrix Market size line") == NULL) {
            if (rc) *e = e2;
            h->off = (int64_t)pos;
            h->lines = line;
            break;
        }
    }
    free(b.p);
    fclose(f);
    return rc;
}

MB *io_read_mm(const char *path, int64_t rows, int64_t cols, int64_t chunk_bytes, BrErr *e)
{
    IoBuf b;
    if (io_load(path, &b, e)) return NULL;
    MB *m = NULL;
    TRange *t = NULL;
    int k = 0;
    size_t pos = 0;
    int64_t line = 0;
    IoMmHead h;
    if (mm_header(&b, path, rows, cols, &h, &pos, &line, e)) goto out;
    bool coord = h.coord;
    int sym = h.sym;
    int64_t sz[2] = {h.rows, h.cols};
    TParse tp = {sz[0], sz[1], h.pattern, "the Matrix Market size line"};
    t = parse_ranges(&b, pos < b.n ? pos : b.n, line, &tp, !coord, chunk_bytes, path, &k, e);
    if (!t) goto out;
    int64_t found = 0;
    for (int i = 0; i < k; i++) found += t[i].n;
    if (io_mm_count_check(path, h.entries, found, e)) goto out;
    if (coord) {
        m = assemble(path, t, k, sz[0], sz[1], sym, true, e);
        goto out;
    }
    /* array: column-major values (lower triangle when symmetric) */
    if (io_check_mem(path, sz[0], sz[1], -1, e)) goto out;
    m = mb_dense(sz[0], sz[1], e);
    if (!m) goto out;
    int64_t i = sym == 2 ? 1 : 0, j = 0, n = sz[0];
    for (int r = 0; r < k; r++)
        for (int64_t x = 0; x < t[r].n; x++) {
            double v = t[r].v[x];
            m->d[i * sz[1] + j] = v;
            if (sym) m->d[j * sz[1] + i] = sym == 2 ? -v : v;
            if (++i == n) { j++; i = sym == 0 ? 0 : sym == 1 ? j : j + 1; }
        }
    mb_recount_nnz(m);
    if (mb_examine(m, e)) { mb_release(m); m = NULL; }
out:
    if (t) tr_free(t, k);
    io_buf_free(&b);
    return m;
}

/* ---------- writing ---------- */

/* Formats the non-zeros of rows [r0, r1) as "i j v" lines. */
static bool fmt_ijv(const MB *m, int64_t r0, int64_t r1, IoStr *out, const void *ctx)
{
    int64_t row0 = ctx ? *(const int64_t *)ctx : 0;   /* a part file's first row */
    for (int64_t r = r0; r < r1; r++) {
        int64_t n = m->sparse ? m->rp[r + 1] - m->rp[r] : m->cols;
        for (int64_t x = 0; x < n; x++) {
            int64_t c = m->sparse ? m->ci[m->rp[r] + x] : x;
            double v = m->sparse ? m->v[m->rp[r] + x] : m->d[r * m->cols + x];
            if (v == 0) continue;
            if (!io_str_reserve(out, 80)) return false;
            io_str_put_int(out, row0 + r + 1);
            io_str_putc(out, ' ');
            io_str_put_int(out, c + 1);
            io_str_putc(out, ' ');
            io_str_put_double(out, v);
            io_str_putc(out, '\n');
        }
    }
    return true;
}

int io_write_text(IoOut *o, const MB *m, bool mm, int64_t chunk_bytes, BrErr *e)
{
    if (mm && io_write_mm_head(o, m->rows, m->cols, m->nnz, e)) return e->code;
    double per_row = m->rows ? 30.0 * (double)m->nnz / (double)m->rows + 1 : 1;
    return io_write_rows(o, m, per_row, chunk_bytes, fmt_ijv, NULL, e);
}

int io_write_mm_head(IoOut *o, int64_t rows, int64_t cols, int64_t nnz, BrErr *e)
{
    char head[160];
    int n = snprintf(head, sizeof head, "%%%%MatrixMarket matrix coordinate real general\n%lld %lld %lld\n",
                     (long long)rows, (long long)cols, (long long)nnz);
    return io_out_write(o, head, (size_t)n, e) ? e->code : 0;
}

int io_write_text_at(IoOut *o, const MB *m, int64_t row0, BrErr *e)
{
    double per_row = m->rows ? 30.0 * (double)m->nnz / (double)m->rows + 1 : 1;
    return io_write_rows(o, m, per_row, 0, fmt_ijv, &row0, e);
}

/* ---------- shares of a distributed read (io.h) ---------- */

static int share_parse(const char *path, const IoShare *s, const TParse tp, bool values_only, int64_t base_line,
                       IoTriples *out, BrErr *e)
{
    *out = (IoTriples){0};
    IoBuf b = {s->p, s->n, s->n};
    int k = 0;
    TRange *t = s->n ? parse_ranges(&b, 0, base_line, &tp, values_only, 0, path, &k, e) : NULL;
    if (s->n && !t) return e->code;
    int64_t n = 0;
    for (int i = 0; i < k; i++) n += t[i].n;
    out->r = br_malloc((size_t)(n ? n : 1) * sizeof *out->r);
    out->c = br_malloc((size_t)(n ? n : 1) * sizeof *out->c);
    out->v = br_malloc((size_t)(n ? n : 1) * sizeof *out->v);
    if (!out->r || !out->c || !out->v) {
        tr_free(t, k);
        io_triples_free(out);
        return br_err(e, BR_ENOMEM, "out of memory reading %s", path);
    }
    for (int i = 0; i < k; i++) {
        if (!t[i].n) continue;
        memcpy(out->r + out->n, t[i].r, (size_t)t[i].n * sizeof *out->r);
        memcpy(out->c + out->n, t[i].c, (size_t)t[i].n * sizeof *out->c);
        memcpy(out->v + out->n, t[i].v, (size_t)t[i].n * sizeof *out->v);
        out->n += t[i].n;
        out->maxr = BR_MAX(out->maxr, t[i].maxr);
        out->maxc = BR_MAX(out->maxc, t[i].maxc);
    }
    tr_free(t, k);
    return 0;
}

int io_text_share_parse(const char *path, const IoShare *s, int64_t rows, int64_t cols, int64_t base_line,
                        IoTriples *out, BrErr *e)
{
    return share_parse(path, s, (TParse){rows, cols, false, "the .mtd or read() arguments"}, false, base_line, out, e);
}

int io_mm_share_parse(const char *path, const IoShare *s, const IoMmHead *h, int64_t base_line, IoTriples *out,
                      BrErr *e)
{
    return share_parse(path, s, (TParse){h->rows, h->cols, h->pattern, "the Matrix Market size line"}, !h->coord,
                       base_line, out, e);
}

void io_mm_array_cells(const IoMmHead *h, int64_t first, IoTriples *t)
{
    int64_t n = h->rows, i = 0, j = 0, k = first;
    /* the column and row of entry first: columns of n (general), n - j
     * (symmetric: rows j..n-1) or n - 1 - j (skew: rows j+1..n-1) entries */
    if (t->n > 0 && h->sym == 0) j = k / n, i = k % n;
    else if (t->n > 0) {
        for (int64_t len; j < n && k >= (len = h->sym == 1 ? n - j : n - 1 - j); j++) k -= len;
        i = (h->sym == 1 ? j : j + 1) + k;
    }
    int64_t m = 0;
    for (int64_t x = 0; x < t->n; x++) {
        if (t->v[x] != 0) t->r[m] = i, t->c[m] = (int32_t)j, t->v[m] = t->v[x], m++;
        if (++i == n) { j++; i = h->sym == 0 ? 0 : h->sym == 1 ? j : j + 1; }
    }
    t->n = m;
    t->maxr = h->rows;
    t->maxc = h->cols;
}

void io_triples_free(IoTriples *t)
{
    free(t->r);
    free(t->c);
    free(t->v);
    *t = (IoTriples){0};
}

MB *io_triples_block(const char *path, const IoTriples *t, int64_t rows, int64_t cols, BrErr *e)
{
    TRange one = {.r = t->r, .c = t->c, .v = t->v, .n = t->n};
    return assemble(path, &one, 1, rows, cols, 0, false, e);
}

/* ---------- reading by ranges of rows (io.h io_cell_rows_open) ---------- */

typedef struct TScan {
    IoCellRows *c;
    TParse tp;
    TRange t;            /* one line's cell */
    int64_t lines;       /* lines before the current one */
    int64_t prev;        /* the largest row of the cells before (-1: none) */
    int64_t maxr, maxc;
    bool sorted;
} TScan;

/* Each line of [p, p + n) (at offset at) parsed and checked as the whole
 * read does; while the cells come in row order, where rows begin is
 * indexed. */
static int scan_piece(void *arg, const char *p, int64_t n, int64_t at, BrErr *e)
{
    TScan *s = arg;
    const char *end = p + n;
    for (const char *q = p; q < end;) {
        const char *nl = memchr(q, '\n', (size_t)(end - q));
        s->t.n = 0;
        s->t.err = (IoRangeErr){0};
        parse_triples(q, nl + 1, &s->tp, &s->t);
        if (s->t.err.err_line) return io_range_report(&s->t.err, 1, s->c->src.path, s->lines, e);
        if (s->t.n) {
            int64_t r = s->t.r[0];
            if (r < s->prev) s->sorted = false;
            if (s->sorted) io_idx_upto(&s->c->x, r, at + (q - p), s->lines);
            s->prev = BR_MAX(s->prev, r);
            s->c->cells++;
        }
        s->lines++;
        q = nl + 1;
    }
    s->maxr = BR_MAX(s->maxr, s->t.maxr);
    s->maxc = BR_MAX(s->maxc, s->t.maxc);
    return 0;
}

/* A cell of a bucket file. */
typedef struct BCell {
    int64_t r, c;
    double v;
} BCell;

/* The second pass over cells not in row order: each piece's cells
 * (mirrored too when symmetric) appended to their buckets' files, in
 * file order. */
static int bucket_piece(void *arg, const char *p, int64_t n, int64_t at, BrErr *e)
{
    IoCellRows *c = arg;
    TParse tp = {c->brows, c->bcols, c->pattern, c->dimsrc};
    TRange t = {0};
    parse_triples(p, p + n, &tp, &t);
    int64_t k = t.n * (c->sym ? 2 : 1);
    int *cnt = br_calloc((size_t)c->nb + 1, sizeof *cnt);
    BCell *out = br_malloc((size_t)(k ? k : 1) * sizeof *out);
    int64_t *pos = br_malloc(((size_t)c->nb + 1) * sizeof *pos);
    int rc = 0;
    if (!cnt || !out || !pos || t.err.err_line) {
        rc = br_err(e, t.err.err_line ? BR_EIO : BR_ENOMEM, "%s: %s", c->src.path,
                    t.err.err_line ? "the file changed while it was read" : "out of memory");
        goto out;
    }
    for (int pass = 0; pass < 2; pass++) {
        if (pass) {
            pos[0] = 0;
            for (int b = 0; b < c->nb; b++) pos[b + 1] = pos[b] + cnt[b];
        }
        for (int64_t x = 0; x < t.n; x++)
            for (int mir = 0; mir < 1 + (c->sym && t.r[x] != t.c[x]); mir++) {
                int64_t r = mir ? t.c[x] : t.r[x], col = mir ? t.r[x] : t.c[x];
                double v = mir && c->sym == 2 ? -t.v[x] : t.v[x];
                int b = (int)(r / c->brow);
                if (!pass) cnt[b]++;
                else out[pos[b]++] = (BCell){r, col, v};
            }
    }
    int64_t from = 0;
    for (int b = 0; b < c->nb && !rc; b++) {
        size_t len = (size_t)cnt[b] * sizeof *out;
        const char *w = (const char *)(out + from);
        for (size_t done = 0; done < len;) {
            ssize_t got = pwrite(c->bfd[b], w + done, len - done, (off_t)c->bsize[b]);
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) {
                rc = br_err(e, BR_EIO, "%s: cannot write a temporary file (cells not in row order): %s",
                            c->src.path, got < 0 ? strerror(errno) : "disk full");
                break;
            }
            done += (size_t)got;
            c->bsize[b] += got;
        }
        from += cnt[b];
    }
out:
    free(cnt);
    free(out);
    free(pos);
    free(t.r);
    free(t.c);
    free(t.v);
    return rc;
}

int io_text_rows_scan(IoCellRows *c, bool *sorted, BrErr *e)
{
    TScan s = {.c = c, .tp = {c->brows, c->bcols, c->pattern, c->dimsrc}, .lines = c->base, .prev = -1,
               .sorted = !c->sym};
    int rc = io_src_lines(&c->src, c->from, scan_piece, &s, e);
    free(s.t.r);
    free(s.t.c);
    free(s.t.v);
    *sorted = s.sorted;
    if (e->code) return e->code;
    if (rc) return br_err(e, BR_EIO, "cannot read %s", c->src.path);
    if (c->entries >= 0 && io_mm_count_check(c->src.path, c->entries, c->cells, e)) return e->code;
    c->rows = c->brows >= 0 ? c->brows : s.maxr;
    c->cols = c->bcols >= 0 ? c->bcols : s.maxc;
    if (s.sorted || c->rows == 0) return 0;
    /* not in row order: buckets of rows in temporary files */
    if (io_cell_buckets(c, (c->sym ? 2 : 1) * c->cells * (int64_t)sizeof(BCell), e)) return e->code;
    if (c->nb == 0) return 0;   /* no room: read whole */
    return io_src_lines(&c->src, c->from, bucket_piece, c, e);
}

/* Rows [r0, r1) of the cells t (in file order; from row 0); the others
 * dropped. */
static void keep_rows(TRange *t, int k, int64_t r0, int64_t r1)
{
    for (int i = 0; i < k; i++) {
        int64_t w = 0;
        for (int64_t x = 0; x < t[i].n; x++)
            if (t[i].r[x] >= r0 && t[i].r[x] < r1) {
                t[i].r[w] = t[i].r[x] - r0;
                t[i].c[w] = t[i].c[x];
                t[i].v[w++] = t[i].v[x];
            }
        t[i].n = w;
    }
}

/* Rows [r0, r1) from the buckets that hold them. */
static MB *bucket_rows(IoCellRows *c, int64_t r0, int64_t r1, BrErr *e)
{
    int b0 = (int)(r0 / c->brow), b1 = (int)((r1 - 1) / c->brow);
    int k = b1 - b0 + 1;
    TRange *t = br_calloc((size_t)k, sizeof *t);
    MB *m = NULL;
    if (!t) { br_err(e, BR_ENOMEM, "out of memory reading %s", c->src.path); return NULL; }
    for (int b = b0; b <= b1 && !e->code; b++) {
        TRange *q = &t[b - b0];
        int64_t n = c->bsize[b] / (int64_t)sizeof(BCell);
        BCell *cl = br_malloc((size_t)(n ? n : 1) * sizeof *cl);
        q->r = br_malloc((size_t)(n ? n : 1) * sizeof *q->r);
        q->c = br_malloc((size_t)(n ? n : 1) * sizeof *q->c);
        q->v = br_malloc((size_t)(n ? n : 1) * sizeof *q->v);
        if (!cl || !q->r || !q->c || !q->v) br_err(e, BR_ENOMEM, "out of memory reading %s", c->src.path);
        for (int64_t done = 0, len = c->bsize[b]; !e->code && done < len;) {
            ssize_t got = pread(c->bfd[b], (char *)cl + done, (size_t)(len - done), (off_t)done);
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) br_err(e, BR_EIO, "%s: cannot read a temporary file (cells not in row order)", c->src.path);
            else done += got;
        }
        for (int64_t x = 0; !e->code && x < n; x++) {
            q->r[x] = cl[x].r;
            q->c[x] = (int32_t)cl[x].c;
            q->v[x] = cl[x].v;
        }
        if (!e->code) q->n = n;
        free(cl);
    }
    if (!e->code) {
        keep_rows(t, k, r0, r1);
        m = assemble(c->src.path, t, k, r1 - r0, c->cols, 0, false, e);
    }
    tr_free(t, k);
    return m;
}

MB *io_text_rows_block(IoCellRows *c, int64_t r0, int64_t r1, BrErr *e)
{
    if (c->nb) return bucket_rows(c, r0, r1, e);
    int64_t a, b, row, line;
    io_idx_range(&c->x, c->src.total, r0, r1, &a, &b, &row, &line);
    IoBuf buf = {br_malloc((size_t)(b - a) + 1), (size_t)(b - a), (size_t)(b - a)};
    if (!buf.p) {
        br_err(e, BR_ENOMEM, "out of memory reading %s", c->src.path);
        return NULL;
    }
    MB *m = NULL;
    int k = 0;
    TParse tp = {c->brows, c->bcols, c->pattern, c->dimsrc};
    TRange *t = NULL;
    if (b == a) k = 0;
    else if (io_src_pread(&c->src, a, b - a, buf.p, e) ||
             !(t = parse_ranges(&buf, 0, line, &tp, false, 0, c->src.path, &k, e)))
        goto out;
    /* the grid's range holds rows [row, ...): keep r0..r1, from row 0 */
    keep_rows(t, k, r0, r1);
    m = assemble(c->src.path, t, k, r1 - r0, c->cols, 0, false, e);
out:
    if (t) tr_free(t, k);
    free(buf.p);
    return m;
}
