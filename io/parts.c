/* parts.c: the io side of distributed reads and writes (io.h): shares of
 * a text file for the ranks that parse it together, folders of binary
 * part files, and writes of one part file per rank committed with one
 * .mtd.
 *
 * A share is defined so that the ranks need not talk to find line
 * boundaries: the data (a file, or a folder's part files concatenated,
 * each ending in a newline as io_load reads them) is cut into n equal
 * byte ranges, and share k holds the lines that BEGIN in range k. Its
 * rank reads from the first line start at or after the range start to
 * the end of the line that crosses the range end (Hadoop's split rule). */
#include "ioint.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------- the data as one byte sequence ---------- */

/* The files of path and their sizes; each part that lacks a final
 * newline counts one more byte (a virtual '\n'), as io_load adds it. */
typedef struct Seq {
    char **names;
    int n;
    bool dir;
    int64_t *size, *virt;   /* bytes on disk, bytes in the sequence */
    int64_t total;
    char *one[1];           /* names of a single file */
} Seq;

static void seq_free(Seq *q)
{
    for (int i = 0; i < q->n; i++)
        if (q->dir) free(q->names[i]);
    if (q->dir) free(q->names);
    free(q->size);
    free(q->virt);
}

static int pread_full(int fd, char *dst, size_t n, int64_t off, const char *path, BrErr *e)
{
    while (n) {
        ssize_t r = pread(fd, dst, n, (off_t)off);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return br_err(e, BR_EIO, "cannot read %s: %s", path, r ? strerror(errno) : "file shrank");
        dst += r;
        n -= (size_t)r;
        off += r;
    }
    return 0;
}

/* Does file name end in '\n' (or is it empty)? */
static int ends_nl(const char *name, int64_t size, bool *yes, BrErr *e)
{
    *yes = true;
    if (!size) return 0;
    int fd = open(name, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return br_err(e, BR_EIO, "cannot open %s: %s", name, strerror(errno));
    char c = 0;
    int rc = pread_full(fd, &c, 1, size - 1, name, e);
    close(fd);
    *yes = c == '\n';
    return rc;
}

static int seq_open(const char *path, Seq *q, BrErr *e)
{
    *q = (Seq){0};
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT) return br_err(e, BR_EIO, "cannot read %s: file not found", path);
        return br_err(e, BR_EIO, "cannot open %s: %s", path, strerror(errno));
    }
    if (S_ISDIR(st.st_mode)) {
        q->dir = true;
        q->n = io_list_parts(path, &q->names, e);
        if (q->n < 0) { q->n = 0; return e->code; }
    } else {
        q->one[0] = (char *)path;   /* not freed: q->dir is false */
        q->names = q->one;
        q->n = 1;
    }
    q->size = br_calloc((size_t)q->n + 1, sizeof *q->size);
    q->virt = br_calloc((size_t)q->n + 1, sizeof *q->virt);
    if (!q->size || !q->virt) return br_err(e, BR_ENOMEM, "out of memory reading %s", path);
    for (int i = 0; i < q->n; i++) {
        struct stat ps;
        if (stat(q->names[i], &ps) != 0) return br_err(e, BR_EIO, "cannot open %s: %s", q->names[i], strerror(errno));
        if (!S_ISREG(ps.st_mode)) continue;
        bool nl;
        q->size[i] = (int64_t)ps.st_size;
        if (ends_nl(q->names[i], q->size[i], &nl, e)) return e->code;
        q->virt[i] = q->size[i] + (nl ? 0 : 1);
        q->total += q->virt[i];
    }
    return 0;
}

/* Bytes [off, off+n) of the sequence into dst. */
static int seq_read(const Seq *q, int64_t off, char *dst, int64_t n, BrErr *e)
{
    int64_t base = 0;
    for (int i = 0; i < q->n && n > 0; base += q->virt[i], i++) {
        if (off >= base + q->virt[i]) continue;
        int64_t a = off - base, take = BR_MIN(n, q->virt[i] - a);
        int64_t real = BR_MAX(0, BR_MIN(take, q->size[i] - a));
        if (real > 0) {
            int fd = open(q->names[i], O_RDONLY | O_CLOEXEC);
            if (fd < 0) return br_err(e, BR_EIO, "cannot open %s: %s", q->names[i], strerror(errno));
            int rc = pread_full(fd, dst, (size_t)real, a, q->names[i], e);
            close(fd);
            if (rc) return rc;
        }
        if (take > real) dst[real] = '\n';   /* the virtual newline */
        dst += take;
        off += take;
        n -= take;
    }
    return 0;
}

/* The position after the first '\n' at or after from (total: none). */
static int seq_after_nl(const Seq *q, int64_t from, int64_t *pos, BrErr *e)
{
    char buf[65536];
    while (from < q->total) {
        int64_t n = BR_MIN((int64_t)sizeof buf, q->total - from);
        if (seq_read(q, from, buf, n, e)) return e->code;
        const char *nl = memchr(buf, '\n', (size_t)n);
        if (nl) { *pos = from + (nl - buf) + 1; return 0; }
        from += n;
    }
    *pos = q->total;
    return 0;
}

int64_t io_data_bytes(const char *path)
{
    Seq q;
    BrErr e = {0};
    int64_t n = seq_open(path, &q, &e) ? -1 : q.total;
    seq_free(&q);
    return n;
}

int io_share_load(const char *path, int k, int n, IoShare *s, BrErr *e)
{
    return io_share_load_from(path, 0, k, n, s, e);
}

int io_share_load_from(const char *path, int64_t from, int k, int n, IoShare *s, BrErr *e)
{
    return io_share_load_cap(path, from, k, n, -1, s, e);
}

int io_share_load_cap(const char *path, int64_t from, int k, int n, int64_t cap, IoShare *s, BrErr *e)
{
    *s = (IoShare){0};
    Seq q;
    if (seq_open(path, &q, e)) { seq_free(&q); return e->code; }
    from = BR_MIN(BR_MAX(from, 0), q.total);
    int64_t span = q.total - from;
    int64_t lo = from + (int64_t)((double)span * k / n), hi = from + (int64_t)((double)span * (k + 1) / n);
    if (k == n - 1) hi = q.total;
    if (cap >= 0 && hi - lo > cap) hi = lo + cap;   /* a sample: the lines starting in its first cap bytes */
    /* lines starting in [lo, hi): from the first line start >= lo to the
     * first line start >= hi */
    int64_t a = from, b = q.total;
    int rc = lo > from ? seq_after_nl(&q, lo - 1, &a, e) : 0;
    if (!rc && hi < q.total) rc = seq_after_nl(&q, hi - 1, &b, e);
    if (!rc && b > a) {
        s->p = br_malloc((size_t)(b - a) + 1);
        if (!s->p) rc = br_err(e, BR_ENOMEM, "out of memory reading %s (%lld bytes)", path, (long long)(b - a));
        else rc = seq_read(&q, a, s->p, b - a, e);
    }
    seq_free(&q);
    if (rc) { io_share_free(s); return rc; }
    s->n = b > a ? (size_t)(b - a) : 0;
    if (s->p) s->p[s->n] = 0;
    for (size_t i = 0; i < s->n; i++) s->lines += s->p[i] == '\n';
    s->first = a == from;
    return 0;
}

void io_share_free(IoShare *s)
{
    free(s->p);
    *s = (IoShare){0};
}

/* ---------- folders of binary part files ---------- */

/* Stacks blocks by rows (dense when all are dense, else CSR). */
static MB *stack(MB **b, int n, int64_t cols, BrErr *e)
{
    int64_t rows = 0, nnz = 0;
    bool dense = true;
    for (int i = 0; i < n; i++) { rows += b[i]->rows; nnz += b[i]->nnz; dense &= !b[i]->sparse; }
    if (dense) {
        MB *m = mb_dense_uninit(rows, cols, e);
        int64_t at = 0;
        for (int i = 0; m && i < n; i++) {
            if (b[i]->rows * cols > 0) memcpy(m->d + at, b[i]->d, (size_t)(b[i]->rows * cols) * sizeof(double));
            at += b[i]->rows * cols;
        }
        if (m) m->nnz = nnz;
        return m;
    }
    MB *m = mb_sp_new(rows, cols, nnz, e);
    int64_t r0 = 0;
    for (int i = 0; m && i < n; r0 += b[i]->rows, i++)
        for (int64_t r = 0; r < b[i]->rows; r++)
            for (int64_t c = 0; c < cols; c++) {
                double v = mb_get(b[i], r, c);
                if (v != 0 && mb_sp_append(m, r0 + r, c, v, e)) { mb_release(m); return NULL; }
            }
    if (m) mb_sp_finish(m);
    return m;
}

MB *io_binary_parts_rows(const char *dir, int64_t r0, int64_t r1, int64_t *rows, int64_t *cols, BrErr *e)
{
    char **names = NULL;
    int n = io_list_parts(dir, &names, e);
    if (n < 0) return NULL;
    MB **got = br_calloc((size_t)n + 1, sizeof *got);
    int64_t *pr = br_calloc((size_t)n + 1, sizeof *pr);
    int ng = 0;
    MB *m = NULL;
    *rows = 0;
    *cols = -1;
    if (!got || !pr) { br_err(e, BR_ENOMEM, "out of memory reading %s", dir); goto out; }
    for (int i = 0; i < n; i++) {   /* the parts' sizes from their headers */
        int64_t c;
        MB *h = io_read_binary_rows(names[i], 0, 0, &pr[i], &c, e);
        if (!h) goto out;
        mb_release(h);
        if (*cols >= 0 && c != *cols) {
            br_err(e, BR_EIO, "%s: part %s has %lld columns, the parts before it %lld", dir, names[i], (long long)c,
                   (long long)*cols);
            goto out;
        }
        *cols = c;
        *rows += pr[i];
    }
    if (*cols < 0) *cols = 0;
    int64_t at = 0;
    for (int i = 0; i < n; at += pr[i], i++) {
        int64_t a = BR_MAX(r0, at), b = BR_MIN(r1, at + pr[i]), pr2, pc;
        if (a >= b) continue;
        if (!(got[ng] = io_read_binary_rows(names[i], a - at, b - at, &pr2, &pc, e))) goto out;
        ng++;
    }
    m = stack(got, ng, *cols, e);
out:
    for (int i = 0; i < ng; i++) mb_release(got[i]);
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
    free(got);
    free(pr);
    return m;
}

/* ---------- part-file writes ---------- */

bool io_parts_format(const char *fmt)
{
    return fmt && (!strcmp(fmt, "csv") || !strcmp(fmt, "text") || io_fmt_anybin(fmt) || !strcmp(fmt, "mm") ||
                   !strcmp(fmt, "libsvm"));
}

char *io_parts_begin(const char *path, BrErr *e)
{
    /* io_out_open settles leftovers and refuses bad targets; its
     * temporary file's name, made a folder, is the temporary folder (the
     * name recovery knows: P.tmp.PID.X) */
    IoOut o;
    if (io_out_open(&o, path, e)) return NULL;
    char *dir = br_strdup(o.tmp);
    close(o.fd);
    o.fd = -1;
    /* registered (as a folder: SIGTERM/SIGINT removes it, base.h) before
     * it is made, the making a hold */
    int sig = dir ? br_sig_path_add(dir, true) : 0;
    br_sig_hold();
    bool ok = dir && unlink(o.tmp) == 0 && mkdir(dir, 0777) == 0;
    br_sig_release();
    if (!ok) {
        br_err(e, BR_EIO, "cannot write %s: %s", path, dir ? strerror(errno) : "out of memory");
        br_sig_path_del(sig);
        free(dir);
        dir = NULL;
    }
    o.tmp[0] = 0;   /* the folder now has its name: not removed here */
    io_out_abort(&o);
    return dir;
}

/* Opens part file dir/<prefix><idx, 5 digits> for writing. */
static int part_open(IoOut *d, const char *dir, const char *prefix, int idx, BrErr *e)
{
    char name[64];
    snprintf(name, sizeof name, "/%s%05d", prefix, idx);
    size_t n = strlen(dir) + sizeof name;
    char *path = br_malloc(n);
    if (!path) return br_err(e, BR_ENOMEM, "out of memory");
    snprintf(path, n, "%s%s", dir, name);
    int rc = io_out_open(d, path, e);
    free(path);
    return rc;
}

int io_parts_open(IoOut *d, const char *dir, int idx, BrErr *e)
{
    return part_open(d, dir, "0-m-", idx, e);   /* SystemDS's part names */
}

/* SystemDS's binary-block part file idx of folder dir: m's rows [lo, hi)
 * as rows row0+lo.. of the whole matrix */
static int sysbin_part(const char *dir, int idx, const MB *m, int64_t lo, int64_t hi, int64_t row0, int64_t blen,
                       bool whole, BrErr *e)
{
    IoOut d;
    int rc = io_parts_open(&d, dir, idx, e);
    if (rc) return rc;
    rc = io_write_sysbin(&d, m, lo, hi, row0, blen, whole, e);
    if (rc) { io_out_abort(&d); return rc; }
    return io_out_commit(&d, e);
}

int io_parts_write_rows(const char *dir, int idx, const MB *m, int64_t lo, int64_t hi, const IoWriteOpts *o, BrErr *e)
{
    return sysbin_part(dir, idx, m, lo, hi, 0, o->blocksize, false, e);
}

int io_parts_write(const char *dir, int idx, const MB *m, int64_t row0, const int64_t whole[3], const IoWriteOpts *o,
                   BrErr *e)
{
    const char *fmt = o->format ? o->format : "text";
    /* a rank's part: its rows start on the block grid (dist.h); a rank
     * without rows writes no blocks, but part 0 of a matrix without rows
     * holds its one empty block */
    if (io_fmt_sysbin(fmt))
        return sysbin_part(dir, idx, m, 0, m->rows, row0, o->blocksize, idx == 0 && whole[0] == 0, e);
    IoOut d;
    int rc = part_open(&d, dir, "part-", idx, e);
    if (rc) return rc;
    if (!strcmp(fmt, "csv")) rc = io_write_csv(&d, m, o->header && idx == 0, o->sep ? o->sep : ",", 0, e);
    else if (!strcmp(fmt, "text")) rc = io_write_text_at(&d, m, row0, e);
    else if (!strcmp(fmt, "mm")) {
        /* part 0 begins with the whole matrix's header: the parts read
         * as one Matrix Market file */
        rc = idx == 0 ? io_write_mm_head(&d, whole[0], whole[1], whole[2], e) : 0;
        if (!rc) rc = io_write_text_at(&d, m, row0, e);
    } else if (!strcmp(fmt, "libsvm")) rc = io_write_libsvm(&d, m, o->sep, o->ind_sep, 0, e);
    else rc = io_write_binary(&d, m, e);   /* braid-binary */
    if (rc) { io_out_abort(&d); return rc; }
    return io_out_commit(&d, e);
}

int io_parts_commit(const char *dir, const char *path, int64_t rows, int64_t cols, int64_t nnz,
                    const IoWriteOpts *o, BrErr *e)
{
    IoMeta m;
    io_matrix_meta(&m, o->format ? o->format : "text", rows, cols, nnz, o);
    IoOut d = {.fd = -1, .tmp = br_strdup(dir), .path = br_strdup(path)};
    io_out_adopt_sig(&d);
    if (!d.tmp || !d.path) {
        io_out_abort(&d);
        return br_err(e, BR_ENOMEM, "out of memory");
    }
    return io_commit_with_mtd(&d, &m, e);
}

void io_parts_abort(const char *dir)
{
    io_remove_tmp(dir);
    br_sig_path_forget(dir);
}
