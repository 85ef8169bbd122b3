/* rows.c: what the readers by ranges of rows share (ioint.h): the data
 * as one byte string over a file or a folder's part files (IoSrc), and
 * the index of the offsets where rows begin (IoRowIdx). csv.c, text.c
 * and libsvm.c read a matrix larger than the budget block of rows by
 * block of rows with them (docs/cla.md "Compressed as it is read"). */
#include "ioint.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

struct IoSrcPart {
    int fd;
    int64_t size;   /* bytes of the file */
    int64_t at;     /* where it begins in the concatenation */
    bool nl;        /* a '\n' follows it (it does not end in one) */
};

int io_src_pread(const IoSrc *c, int64_t a, int64_t n, char *dst, BrErr *e)
{
    for (int i = 0; i < c->np && n > 0; i++) {
        const IoSrcPart *p = &c->parts[i];
        int64_t len = p->size + p->nl;
        if (a >= p->at + len) continue;
        int64_t in = a - p->at, take = BR_MIN(n, len - in);
        int64_t from_file = BR_MIN(take, p->size - in);
        int64_t got = 0;
        while (got < from_file) {
            ssize_t r = pread(p->fd, dst + got, (size_t)(from_file - got), (off_t)(in + got));
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) return br_err(e, BR_EIO, "cannot read %s: %s", c->path, r < 0 ? strerror(errno) : "file shrank");
            got += r;
        }
        if (take > from_file) dst[from_file] = '\n';
        dst += take;
        a += take;
        n -= take;
    }
    return n > 0 ? br_err(e, BR_EIO, "cannot read %s: file shrank", c->path) : 0;
}

int io_src_open(IoSrc *c, const char *path, BrErr *e)
{
    *c = (IoSrc){0};
    if (!(c->path = strdup(path))) return br_err(e, BR_ENOMEM, "out of memory reading %s", path);
    struct stat st;
    if (stat(c->path, &st) != 0) return br_err(e, BR_EIO, "cannot read %s: file not found", c->path);
    char **names = NULL;
    int np = 1;
    if (S_ISDIR(st.st_mode) && (np = io_list_parts(c->path, &names, e)) < 0) return e->code;
    if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
        return br_err(e, BR_EIO, "cannot read %s: not a regular file or directory", c->path);
    c->parts = br_calloc((size_t)np + 1, sizeof *c->parts);
    if (!c->parts) br_err(e, BR_ENOMEM, "out of memory reading %s", c->path);
    for (int i = 0; i < np && !e->code; i++) {
        const char *f = names ? names[i] : c->path;
        struct stat ps;
        if (stat(f, &ps) != 0 || !S_ISREG(ps.st_mode) || ps.st_size == 0) {
            if (!names) br_err(e, BR_EIO, "cannot read %s: not a regular file with a size", f);
            continue;   /* as io_load: a part that is not a file holds nothing */
        }
        IoSrcPart *p = &c->parts[c->np];
        if ((p->fd = open(f, O_RDONLY | O_CLOEXEC)) < 0) {
            br_err(e, BR_EIO, "cannot open %s: %s", f, strerror(errno));
            break;
        }
        char last;
        p->size = (int64_t)ps.st_size;
        p->at = c->total;
        c->np++;
        if (pread(p->fd, &last, 1, (off_t)(p->size - 1)) != 1) {
            br_err(e, BR_EIO, "cannot read %s", f);
            break;
        }
        p->nl = last != '\n';
        c->total += p->size + p->nl;
    }
    for (int i = 0; names && i < np; i++) free(names[i]);
    free(names);
    return e->code;
}

void io_src_close(IoSrc *c)
{
    for (int i = 0; c->parts && i < c->np; i++) close(c->parts[i].fd);
    free(c->parts);
    free(c->path);
    *c = (IoSrc){0};
}

static int64_t idx_max = IO_IDX_MAX;

void io_test_csv_index(int64_t max) { idx_max = max >= 2 && max <= IO_IDX_MAX ? max : IO_IDX_MAX; }

int io_idx_init(IoRowIdx *x, const char *path, BrErr *e)
{
    *x = (IoRowIdx){.g = 64, .cap = idx_max};
    x->off = br_malloc((size_t)x->cap * sizeof(int64_t));
    x->line = br_malloc((size_t)x->cap * sizeof(int64_t));
    return x->off && x->line ? 0 : br_err(e, BR_ENOMEM, "out of memory reading %s", path);
}

void io_idx_upto(IoRowIdx *x, int64_t row, int64_t off, int64_t line)
{
    while (x->nidx * x->g <= row) {
        if (x->nidx == x->cap) {
            for (int64_t k = 0; 2 * k < x->nidx; k++) {
                x->off[k] = x->off[2 * k];
                x->line[k] = x->line[2 * k];
            }
            x->nidx = (x->nidx + 1) / 2;
            x->g *= 2;
            continue;
        }
        x->off[x->nidx] = off;
        x->line[x->nidx++] = line;
    }
}

void io_idx_range(const IoRowIdx *x, int64_t total, int64_t r0, int64_t r1, int64_t *a, int64_t *b, int64_t *row,
                  int64_t *line)
{
    int64_t k0 = BR_MIN(r0 / x->g, x->nidx), k1 = (r1 + x->g - 1) / x->g;
    *a = k0 < x->nidx ? x->off[k0] : total;
    *b = k1 < x->nidx ? x->off[k1] : total;
    *row = k0 * x->g;
    *line = k0 < x->nidx ? x->line[k0] : -1;
}

void io_idx_free(IoRowIdx *x)
{
    free(x->off);
    free(x->line);
    *x = (IoRowIdx){0};
}

#define SRC_PIECE (1 << 20)

int io_src_lines(const IoSrc *s, int64_t from, int (*fn)(void *arg, const char *p, int64_t n, int64_t at, BrErr *e),
                 void *arg, BrErr *e)
{
    int64_t cap = SRC_PIECE;
    char *buf = br_malloc((size_t)cap);
    if (!buf) return br_err(e, BR_ENOMEM, "out of memory reading %s", s->path);
    int rc = 0;
    for (int64_t at = from; at < s->total && !rc;) {
        int64_t n = BR_MIN(cap, s->total - at);
        if ((rc = io_src_pread(s, at, n, buf, e))) break;
        const char *nl = memrchr(buf, '\n', (size_t)n);
        if (!nl) {   /* a line longer than the buffer (the data end in '\n') */
            char *b2 = br_realloc(buf, (size_t)cap * 2);
            if (!b2) { rc = br_err(e, BR_ENOMEM, "out of memory reading %s", s->path); break; }
            buf = b2;
            cap *= 2;
            continue;
        }
        n = nl - buf + 1;
        rc = fn(arg, buf, n, at, e);
        at += n;
    }
    free(buf);
    return rc;
}

IoCellRows *io_cell_rows_open(const char *path, const IoReadPlan *p, int64_t *rows, int64_t *cols, int64_t *cells,
                              bool *sorted, BrErr *e)
{
    *sorted = true;
    IoCellRows *c = br_calloc(1, sizeof *c);
    if (!c) {
        br_err(e, BR_ENOMEM, "out of memory reading %s", path);
        return NULL;
    }
    c->lines = !strcmp(p->format, "libsvm");
    c->brows = p->rows;
    c->bcols = p->cols;
    c->entries = -1;
    c->dimsrc = "the .mtd or read() arguments";
    if (!strcmp(p->format, "mm")) {
        IoMmHead h;
        if (io_mm_head(path, p->rows, p->cols, &h, e)) goto fail;
        if (!h.coord) {   /* the array layout: column-major values */
            *sorted = false;
            goto fail;
        }
        c->sym = h.sym;
        c->from = h.off;
        c->base = h.lines;
        c->brows = h.rows;
        c->bcols = h.cols;
        c->pattern = h.pattern;
        c->entries = h.entries;
        c->dimsrc = "the Matrix Market size line";
    }
    if (io_idx_init(&c->x, path, e) || io_src_open(&c->src, path, e)) goto fail;
    if (c->lines ? io_libsvm_rows_scan(c, p, e) : io_text_rows_scan(c, sorted, e)) goto fail;
    if (!*sorted && !c->nb && c->rows > 0) goto fail;   /* no room for buckets */
    *rows = c->rows;
    *cols = c->cols;
    *cells = c->cells * (c->sym ? 2 : 1);
    return c;
fail:
    io_cell_rows_close(c);
    return NULL;
}

MB *io_cell_rows(IoCellRows *c, int64_t r0, int64_t r1, BrErr *e)
{
    r0 = BR_MAX(0, BR_MIN(r0, c->rows));
    r1 = BR_MAX(r0, BR_MIN(r1, c->rows));
    if (r0 == r1) return mb_sp_alloc(0, c->cols, 1, e);
    return c->lines ? io_libsvm_rows_block(c, r0, r1, e) : io_text_rows_block(c, r0, r1, e);
}

#define BUCKET_BYTES (4 << 20)
#define BUCKETS_MAX 256
static int64_t bucket_bytes = BUCKET_BYTES;

void io_test_cell_buckets(int64_t bytes) { bucket_bytes = bytes > 0 ? bytes : BUCKET_BYTES; }

int io_cell_buckets(IoCellRows *c, int64_t bytes, BrErr *e)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !dir[0]) dir = "/tmp";
    struct statvfs fs;
    if (statvfs(dir, &fs) != 0 || (double)fs.f_bavail * (double)fs.f_frsize < 1.25 * (double)bytes + 64e6) return 0;
    int64_t nb = BR_MAX(1, BR_MIN(BUCKETS_MAX, (bytes + bucket_bytes - 1) / bucket_bytes));
    c->brow = (c->rows + nb - 1) / nb;
    nb = (c->rows + c->brow - 1) / c->brow;
    c->bfd = br_malloc((size_t)nb * sizeof *c->bfd);
    c->bsize = br_calloc((size_t)nb, sizeof *c->bsize);
    if (!c->bfd || !c->bsize) return br_err(e, BR_ENOMEM, "out of memory reading %s", c->src.path);
    char name[4096];
    for (c->nb = 0; c->nb < nb; c->nb++) {
        snprintf(name, sizeof name, "%s/braid_cells_XXXXXX", dir);
        int fd = mkostemp(name, O_CLOEXEC);
        if (fd < 0) return br_err(e, BR_EIO, "%s: cannot make a temporary file in %s (cells not in row order): %s",
                                  c->src.path, dir, strerror(errno));
        unlink(name);
        c->bfd[c->nb] = fd;
    }
    return 0;
}

void io_cell_rows_close(IoCellRows *c)
{
    if (!c) return;
    for (int b = 0; b < c->nb; b++) close(c->bfd[b]);
    free(c->bfd);
    free(c->bsize);
    io_src_close(&c->src);
    io_idx_free(&c->x);
    free(c);
}
