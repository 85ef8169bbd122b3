/* binary.c: braid's own binary matrix format, written and read with large
 * sequential I/O straight from/into the block's arrays.
 *
 * Layout (host byte order, little-endian on every supported machine):
 *   0  char[8]  magic "BRAIDMB1"
 *   8  uint32   byte-order mark 0x01020304 (a swapped machine sees 0x04030201)
 *  12  uint32   flags: bit 0 set = sparse (CSR)
 *  16  int64    rows, cols, nnz
 *  40  dense:   rows*cols doubles, row-major
 *      sparse:  rp[rows+1] int64, ci[nnz] int32, 4 zero bytes when nnz is
 *               odd, v[nnz] doubles
 * The file size must match the header exactly: a truncated file (or one
 * with trailing bytes) is an error, never a partial matrix. */
#include "ioint.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define BIN_MAGIC "BRAIDMB1"
#define BIN_BOM 0x01020304u
#define BIN_HEAD 40

typedef struct BinHead {
    char magic[8];
    uint32_t bom, flags;
    int64_t rows, cols, nnz;
} BinHead;

_Static_assert(sizeof(BinHead) == BIN_HEAD, "binary header layout");

/* Expected file size for the header; false on overflow. */
static bool bin_size(const BinHead *h, uint64_t *out)
{
    uint64_t r = (uint64_t)h->rows, c = (uint64_t)h->cols, z = (uint64_t)h->nnz, s, t;
    if (!(h->flags & 1)) {
        if (__builtin_mul_overflow(r, c, &s) || __builtin_mul_overflow(s, 8, &s) ||
            __builtin_add_overflow(s, BIN_HEAD, out))
            return false;
        return true;
    }
    if (__builtin_mul_overflow(r + 1, 8, &s) || __builtin_mul_overflow(z, 12, &t) ||
        __builtin_add_overflow(s, t, &s) || __builtin_add_overflow(s, (z & 1) * 4 + BIN_HEAD, out))
        return false;
    return true;
}

static int read_all(int fd, void *dst, size_t n, const char *path, BrErr *e)
{
    char *p = dst;
    while (n) {
        ssize_t r = read(fd, p, n > ((size_t)1 << 30) ? ((size_t)1 << 30) : n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return br_err(e, BR_EIO, "cannot read %s: %s", path, strerror(errno));
        if (r == 0) return br_err(e, BR_EIO, "%s: truncated binary file", path);
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

/* Checks a CSR block read from a file: row pointers monotone, columns in
 * range and ascending, no stored zeros. */
static bool csr_ok(const MB *m)
{
    if (m->rp[0] != 0 || m->rp[m->rows] != m->nnz) return false;
    int bad = 0;
    #pragma omp parallel for schedule(static) num_threads(br_threads()) if (m->nnz >= BR_PAR_MIN) reduction(|:bad)
    for (int64_t r = 0; r < m->rows; r++) {
        int64_t a = m->rp[r], b = m->rp[r + 1];
        if (b < a || b > m->nnz) { bad = 1; continue; }
        for (int64_t k = a; k < b; k++)
            if (m->ci[k] < 0 || m->ci[k] >= m->cols || (k > a && m->ci[k] <= m->ci[k - 1]) ||
                m->v[k] == 0)
                bad = 1;
    }
    return !bad;
}

static int64_t count_nnz(const double *d, int64_t n)
{
    int64_t c = 0;
    #pragma omp parallel for schedule(static) num_threads(br_threads()) if (n >= BR_PAR_MIN) reduction(+:c)
    for (int64_t i = 0; i < n; i++) c += d[i] != 0;
    return c;
}

/* Opens a binary matrix file and checks its header against the file's
 * size and the expected rows/cols (-1: any); the fd, or -1 with e set. */
static int bin_open(const char *path, int64_t rows, int64_t cols, BinHead *hp, BrErr *e)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) br_err(e, BR_EIO, "cannot read %s: file not found", path);
        else br_err(e, BR_EIO, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    BinHead h;
    uint64_t want;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        br_err(e, BR_EIO, "cannot read %s: not a regular file", path);
        goto fail;
    }
    if ((uint64_t)st.st_size < BIN_HEAD) {
        br_err(e, BR_EIO, "%s: truncated binary file (%lld bytes, header needs %d)", path,
               (long long)st.st_size, BIN_HEAD);
        goto fail;
    }
    if (read_all(fd, &h, sizeof h, path, e)) goto fail;
    if (memcmp(h.magic, BIN_MAGIC, 8)) {
        br_err(e, BR_EIO, "%s: not a braid binary matrix file (bad magic)", path);
        goto fail;
    }
    if (h.bom != BIN_BOM) {
        br_err(e, BR_EIO, "%s: binary file of another byte order or version", path);
        goto fail;
    }
    if (h.rows < 0 || h.cols < 0 || h.cols > INT32_MAX || h.nnz < 0 || (h.flags & ~1u) ||
        (double)h.nnz > (double)h.rows * (double)h.cols || !bin_size(&h, &want)) {
        br_err(e, BR_EIO, "%s: corrupt binary header", path);
        goto fail;
    }
    if ((uint64_t)st.st_size != want) {
        br_err(e, BR_EIO, "%s: %s binary file (%lld bytes, the header says %llu)", path,
               (uint64_t)st.st_size < want ? "truncated" : "oversized",
               (long long)st.st_size, (unsigned long long)want);
        goto fail;
    }
    if ((rows >= 0 && rows != h.rows) || (cols >= 0 && cols != h.cols)) {
        br_err(e, BR_EDIM, "%s: dimension mismatch: the file holds %lldx%lld, the .mtd or "
               "read() arguments say %lldx%lld", path, (long long)h.rows, (long long)h.cols,
               (long long)(rows >= 0 ? rows : h.rows), (long long)(cols >= 0 ? cols : h.cols));
        goto fail;
    }
    *hp = h;
    return fd;
fail:
    close(fd);
    return -1;
}

/* n bytes at offset off of fd into dst. */
static int pread_all(int fd, void *dst, size_t n, uint64_t off, const char *path, BrErr *e)
{
    char *p = dst;
    while (n) {
        ssize_t r = pread(fd, p, n > ((size_t)1 << 30) ? ((size_t)1 << 30) : n, (off_t)off);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return br_err(e, BR_EIO, "cannot read %s: %s", path, strerror(errno));
        if (r == 0) return br_err(e, BR_EIO, "%s: truncated binary file", path);
        p += r;
        off += (uint64_t)r;
        n -= (size_t)r;
    }
    return 0;
}

/* The end of a read: fd closed, a sparse block's structure checked, the
 * format chosen. On !ok (or a check failing) m is released: NULL. */
static MB *bin_done(MB *m, bool ok, int fd, const char *path, BrErr *e)
{
    close(fd);
    if (ok && m && m->sparse && !csr_ok(m)) {
        br_err(e, BR_EIO, "%s: corrupt binary file (invalid sparse structure)", path);
        ok = false;
    }
    if (ok && m && mb_examine(m, e)) ok = false;
    if (!ok) {
        mb_release(m);
        return NULL;
    }
    return m;
}

/* Rows [r0, r0 + n) of a sparse file into a new CSR block (the row
 * pointers rebased to 0); NULL with e set. */
static MB *bin_sparse_rows(int fd, const BinHead *h, int64_t r0, int64_t n, const char *path, BrErr *e)
{
    int64_t ptr[2];
    if (pread_all(fd, &ptr[0], 8, BIN_HEAD + (uint64_t)r0 * 8, path, e) ||
        pread_all(fd, &ptr[1], 8, BIN_HEAD + (uint64_t)(r0 + n) * 8, path, e))
        return NULL;
    int64_t z = ptr[1] - ptr[0];
    if (ptr[0] < 0 || z < 0 || ptr[1] > h->nnz) {
        br_err(e, BR_EIO, "%s: corrupt binary file (invalid sparse structure)", path);
        return NULL;
    }
    MB *m = mb_sp_alloc(n, h->cols, z > 0 ? z : 1, e);
    if (!m) return NULL;
    uint64_t ci0 = BIN_HEAD + (uint64_t)(h->rows + 1) * 8;
    uint64_t v0 = ci0 + (uint64_t)h->nnz * 4 + (uint64_t)(h->nnz & 1) * 4;
    if (pread_all(fd, m->rp, (size_t)(n + 1) * 8, BIN_HEAD + (uint64_t)r0 * 8, path, e) ||
        (z && pread_all(fd, m->ci, (size_t)z * 4, ci0 + (uint64_t)ptr[0] * 4, path, e)) ||
        (z && pread_all(fd, m->v, (size_t)z * 8, v0 + (uint64_t)ptr[0] * 8, path, e))) {
        mb_release(m);
        return NULL;
    }
    for (int64_t r = 0; r <= n; r++) m->rp[r] -= ptr[0];
    m->nnz = z;
    m->build_row = n;
    return m;
}

MB *io_read_binary_rows(const char *path, int64_t r0, int64_t r1, int64_t *rows, int64_t *cols, BrErr *e)
{
    BinHead h;
    int fd = bin_open(path, -1, -1, &h, e);
    if (fd < 0) return NULL;
    *rows = h.rows;
    *cols = h.cols;
    r0 = BR_MAX(0, BR_MIN(r0, h.rows));
    r1 = BR_MAX(r0, BR_MIN(r1, h.rows));
    int64_t n = r1 - r0;
    if (h.flags & 1) {
        MB *m = bin_sparse_rows(fd, &h, r0, n, path, e);
        return bin_done(m, m != NULL, fd, path, e);
    }
    MB *m = mb_dense_uninit(n, h.cols, e);
    size_t bytes = (size_t)(n * h.cols) * sizeof(double);
    bool ok = m && (!bytes || !pread_all(fd, m->d, bytes, BIN_HEAD + (uint64_t)(r0 * h.cols) * 8, path, e));
    if (ok) m->nnz = count_nnz(m->d, n * h.cols);
    return bin_done(m, ok, fd, path, e);
}

MB *io_read_binary(const char *path, int64_t rows, int64_t cols, BrErr *e)
{
    BinHead h;
    int fd = bin_open(path, rows, cols, &h, e);
    if (fd < 0) return NULL;
    MB *m = NULL;
    bool ok;
    if (!(h.flags & 1)) {
        m = mb_dense_uninit(h.rows, h.cols, e);
        int64_t n = h.rows * h.cols;
        ok = m && (!n || !read_all(fd, m->d, (size_t)n * sizeof(double), path, e));
        if (ok && (m->nnz = count_nnz(m->d, n)) != h.nnz) {
            br_err(e, BR_EIO, "%s: corrupt binary file (header nnz %lld, data has %lld)", path,
                   (long long)h.nnz, (long long)m->nnz);
            ok = false;
        }
    } else {
        m = mb_sp_alloc(h.rows, h.cols, h.nnz, e);
        uint32_t pad;
        ok = m && !read_all(fd, m->rp, ((size_t)h.rows + 1) * sizeof(int64_t), path, e) &&
             !(h.nnz && read_all(fd, m->ci, (size_t)h.nnz * sizeof(int32_t), path, e)) &&
             !((h.nnz & 1) && read_all(fd, &pad, 4, path, e)) &&
             !(h.nnz && read_all(fd, m->v, (size_t)h.nnz * sizeof(double), path, e));
        if (ok) {
            m->nnz = h.nnz;
            m->build_row = h.rows;
        }
    }
    return bin_done(m, ok, fd, path, e);
}

int io_write_binary(IoOut *o, const MB *m, BrErr *e)
{
    BinHead h;
    memcpy(h.magic, BIN_MAGIC, 8);
    h.bom = BIN_BOM;
    h.flags = m->sparse ? 1 : 0;
    h.rows = m->rows;
    h.cols = m->cols;
    h.nnz = m->nnz;
    if (io_out_write(o, &h, sizeof h, e)) return e->code;
    if (!m->sparse) {
        size_t n = (size_t)(m->rows * m->cols);
        return n ? io_out_write(o, m->d, n * sizeof(double), e) : 0;
    }
    uint32_t pad = 0;
    size_t z = (size_t)m->nnz;
    if (io_out_write(o, m->rp, ((size_t)m->rows + 1) * sizeof(int64_t), e) ||
        (z && io_out_write(o, m->ci, z * sizeof(int32_t), e)) ||
        ((z & 1) && io_out_write(o, &pad, 4, e)) ||
        (z && io_out_write(o, m->v, z * sizeof(double), e)))
        return e->code;
    return 0;
}
