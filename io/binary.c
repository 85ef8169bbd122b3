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
 *      compressed (flags bit 1, docs/cla.md): int64 ngroups, then per
 *               group int32 enc, ncols, ndict, 4 zero bytes; cols[ncols]
 *               int32; dict[ndict*ncols] doubles; counts[ndict] int64;
 *               DDC1/DDC2: rows codes of 1/2 bytes; OLE/RLE: ptr[ndict+1]
 *               int64 and ptr[ndict] uint16 values; UNC: a nested block
 *               (int64 flags and nnz, then the dense or sparse body);
 *               every part padded with zeros to 8 bytes
 * The file size must match the header exactly: a truncated file (or one
 * with trailing bytes) is an error, never a partial matrix. Compressed
 * files are checked part by part (sizes against the bytes left, codes,
 * offsets and runs in range, every row of a group held by at most one
 * tuple, the counts, the non-zeros) before the block is built. */
#include "ioint.h"
#include "../matrix/cmb.h"

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
    const bool par = br_par((double)m->nnz);
    #pragma omp parallel for schedule(static) num_threads(br_threads()) if (par) reduction(|:bad)
    for (int64_t r = 0; r < m->rows; r++) {
        int64_t a = m->rp[r], b = m->rp[r + 1];
        if (a < 0 || b < a || b > m->nnz) { bad = 1; continue; }   /* rows are checked independently */
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
    const bool par = br_par((double)n);
    #pragma omp parallel for schedule(static) num_threads(br_threads()) if (par) reduction(+:c)
    for (int64_t i = 0; i < n; i++) c += d[i] != 0;
    return c;
}

/* ---- compressed blocks ---- */

/* Sequential reading of a compressed body: what is left of the file
 * bounds every allocation (a corrupt size never allocates much). */
typedef struct CRd {
    int fd;
    const char *path;
    uint64_t left;
    BrErr *e;
} CRd;

static void *crd_take(CRd *r, uint64_t n, uint64_t elem)
{
    uint64_t b, pb;
    if (__builtin_mul_overflow(n, elem, &b) || (pb = (b + 7) & ~7ull) > r->left) {
        br_err(r->e, BR_EIO, "%s: corrupt compressed binary file (a part runs past the end)", r->path);
        return NULL;
    }
    void *p = br_malloc(pb + 8);
    if (!p) { br_err(r->e, BR_ENOMEM, "out of memory reading %s", r->path); return NULL; }
    if (pb && read_all(r->fd, p, pb, r->path, r->e)) { free(p); return NULL; }
    r->left -= pb;
    return p;
}

static int corrupt(CRd *r, const char *why)
{
    return br_err(r->e, BR_EIO, "%s: corrupt compressed binary file (%s)", r->path, why);
}

/* Marks rows [a, b) of a group as held; false when one already is. */
static bool hold(uint8_t *held, int64_t a, int64_t b)
{
    for (int64_t i = a; i < b; i++) {
        if (held[i]) return false;
        held[i] = 1;
    }
    return true;
}

/* Checks a group's row structure against rows and its counts. */
static int check_rows(CRd *r, const ClaGroup *g, int64_t rows, uint8_t *held)
{
    const ClaIndex *x = g->ix;
    int64_t *cnt = br_calloc((size_t)g->ndict + 1, sizeof(int64_t));
    if (!cnt) return br_err(r->e, BR_ENOMEM, "out of memory");
    const char *bad = NULL;
    if (g->enc == CLA_DDC1 || g->enc == CLA_DDC2) {
        for (int64_t i = 0; i < rows && !bad; i++) {
            int64_t c = g->enc == CLA_DDC1 ? x->c1[i] : x->c2[i];
            if (c >= g->ndict) bad = "a code past the dictionary";
            else cnt[c]++;
        }
    } else if (g->enc == CLA_OLE || g->enc == CLA_RLE) {
        int64_t nseg = (rows + CLA_SEG - 1) / CLA_SEG;
        memset(held, 0, (size_t)rows + 1);
        for (int32_t t = 0; t < g->ndict && !bad; t++) {
            int64_t p = x->ptr[t], end = x->ptr[t + 1];
            if (g->enc == CLA_OLE) {
                int64_t s = 0;
                for (; s < nseg && p < end && !bad; s++) {
                    int64_t k = x->data[p++], prev = -1;
                    if (k > end - p) { bad = "an offset list runs past its end"; break; }
                    for (int64_t q = 0; q < k; q++, p++) {
                        int64_t row = s * CLA_SEG + x->data[p];
                        if (x->data[p] <= prev || row >= rows || !hold(held, row, row + 1)) { bad = "bad offsets"; break; }
                        prev = x->data[p];
                        cnt[t]++;
                    }
                }
                if (!bad && (s != nseg || p != end)) bad = "bad segment count";
            } else {
                int64_t re = 0;
                if ((end - p) % 2) bad = "an odd run list";
                for (; p + 1 < end && !bad; p += 2) {
                    int64_t rs = re + x->data[p];
                    re = rs + x->data[p + 1];
                    if (re > rows || !hold(held, rs, re)) bad = "bad runs";
                    cnt[t] += re - rs;
                }
            }
        }
    }
    for (int32_t t = 0; t < g->ndict && !bad && g->enc != CLA_UNC && g->enc != CLA_CONST; t++)
        if (cnt[t] != g->counts[t]) bad = "counts do not match the rows";
    if (!bad && g->enc == CLA_CONST && g->counts[0] != rows) bad = "counts do not match the rows";
    free(cnt);
    return bad ? corrupt(r, bad) : 0;
}

/* The nested block of a UNC group (rows x ncols). */
static MB *read_unc(CRd *r, int64_t rows, int ncols)
{
    int64_t *hd = crd_take(r, 2, 8);
    if (!hd) return NULL;
    int64_t flags = hd[0], nnz = hd[1];
    free(hd);
    if ((flags != 0 && flags != 1) || nnz < 0 || (double)nnz > (double)rows * ncols) {
        corrupt(r, "bad uncompressed group header");
        return NULL;
    }
    /* the body is taken from the file (crd_take: no more than it holds)
     * before a block of its size is allocated */
    if (!flags) {
        double *d = crd_take(r, (uint64_t)rows * (uint64_t)ncols, 8);
        MB *m = d ? mb_dense_uninit(rows, ncols, r->e) : NULL;
        if (m) memcpy(m->d, d, (size_t)(rows * ncols) * sizeof(double));
        free(d);
        if (!m) return NULL;
        if ((m->nnz = count_nnz(m->d, rows * ncols)) != nnz) { corrupt(r, "uncompressed group nnz"); mb_release(m); return NULL; }
        return m;
    }
    int64_t *rp = crd_take(r, (uint64_t)rows + 1, 8);
    int32_t *ci = rp ? crd_take(r, (uint64_t)nnz, 4) : NULL;
    double *v = ci ? crd_take(r, (uint64_t)nnz, 8) : NULL;
    MB *m = v ? mb_sp_alloc(rows, ncols, nnz, r->e) : NULL;
    if (m) {
        memcpy(m->rp, rp, ((size_t)rows + 1) * sizeof(int64_t));
        memcpy(m->ci, ci, (size_t)nnz * sizeof(int32_t));
        memcpy(m->v, v, (size_t)nnz * sizeof(double));
        m->nnz = nnz;
        m->build_row = rows;
    }
    free(rp);
    free(ci);
    free(v);
    if (!m || !csr_ok(m)) {
        if (!r->e->code) corrupt(r, "invalid sparse structure in an uncompressed group");
        mb_release(m);
        return NULL;
    }
    return m;
}

/* One group; its columns are marked in seen (each exactly once). */
static ClaGroup *read_group(CRd *r, const BinHead *h, uint8_t *seen, uint8_t *held)
{
    int32_t *gh = crd_take(r, 4, 4);
    if (!gh) return NULL;
    int32_t enc = gh[0], nc = gh[1], nd = gh[2];
    free(gh);
    int64_t rows = h->rows;
    bool encok = enc >= CLA_EMPTY && enc <= CLA_UNC && nc >= 1 && nc <= h->cols && nd >= 0 && nd <= 65536 &&
                 !(enc == CLA_EMPTY && nd) && !(enc == CLA_CONST && nd != 1) && !(enc == CLA_DDC1 && nd > 256) &&
                 !(enc == CLA_UNC && nd);
    if (!encok) { corrupt(r, "bad group header"); return NULL; }
    /* the columns, dictionary and counts are taken from the file (no more
     * than it holds) before the group's arrays of their sizes exist */
    int32_t *cols = crd_take(r, (uint64_t)nc, 4);
    double *dict = cols ? crd_take(r, (uint64_t)nd * (uint64_t)nc, 8) : NULL;
    int64_t *counts = dict ? crd_take(r, (uint64_t)nd, 8) : NULL;
    ClaGroup *g = counts ? cla_group_new((ClaEnc)enc, nc, nd) : NULL;
    bool ok = g != NULL;
    if (counts && !g) br_err(r->e, BR_ENOMEM, "out of memory");
    for (int j = 0; ok && j < nc; j++) {
        if (cols[j] < 0 || cols[j] >= h->cols || seen[cols[j]] || (j && cols[j] <= cols[j - 1])) {
            corrupt(r, "bad group columns");
            ok = false;
        } else seen[cols[j]] = 1;
    }
    for (int32_t t = 0; ok && t < nd; t++)
        if (counts[t] < 0 || counts[t] > rows) { corrupt(r, "bad counts"); ok = false; }
    if (ok) {
        memcpy(g->cols, cols, (size_t)nc * sizeof(int32_t));
        memcpy(g->dict, dict, (size_t)nd * (size_t)nc * sizeof(double));
        memcpy(g->counts, counts, (size_t)nd * sizeof(int64_t));
    }
    free(cols);
    free(dict);
    free(counts);
    if (ok && enc == CLA_UNC) ok = (g->unc = read_unc(r, rows, nc)) != NULL;
    if (ok && enc >= CLA_DDC1 && enc <= CLA_RLE) {
        ok = (g->ix = cla_index_new()) != NULL;
        if (ok && enc == CLA_DDC1) ok = (g->ix->c1 = crd_take(r, (uint64_t)rows, 1)) != NULL;
        if (ok && enc == CLA_DDC2) ok = (g->ix->c2 = crd_take(r, (uint64_t)rows, 2)) != NULL;
        if (ok && (enc == CLA_OLE || enc == CLA_RLE)) {
            ok = (g->ix->ptr = crd_take(r, (uint64_t)nd + 1, 8)) != NULL;
            bool mono = ok && g->ix->ptr[0] == 0;
            for (int32_t t = 0; mono && t < nd; t++) mono = g->ix->ptr[t + 1] >= g->ix->ptr[t];
            if (ok && !mono) { corrupt(r, "bad list pointers"); ok = false; }
            if (ok) ok = (g->ix->data = crd_take(r, (uint64_t)g->ix->ptr[nd], 2)) != NULL;
        }
        if (!g->ix && !r->e->code) br_err(r->e, BR_ENOMEM, "out of memory");
    }
    if (ok && check_rows(r, g, rows, held)) ok = false;
    if (!ok) { cla_group_release(g); return NULL; }
    return g;
}

static MB *read_cmb(int fd, const char *path, const BinHead *h, uint64_t left, BrErr *e)
{
    CRd r = {fd, path, left, e};
    int64_t *ng = crd_take(&r, 1, 8);
    if (!ng) return NULL;
    int64_t n = *ng;
    free(ng);
    if (n < 0 || n > h->cols) { corrupt(&r, "bad group count"); return NULL; }
    /* the rows are not bounded by the file (one run covers many): the
     * reader's per-row and per-column marks must fit the memory budget
     * before they are allocated */
    double marks = (double)h->rows + (double)h->cols + 2, budget = br_mem_budget();
    if (marks > budget) {
        br_err(e, BR_ENOMEM, "read %s: a compressed %lldx%lld matrix needs %.1f GB to check, more than the "
               "local memory budget of %.1f GB", path, (long long)h->rows, (long long)h->cols, marks / 1e9,
               budget / 1e9);
        return NULL;
    }
    /* every column is in one group's column list (4 bytes each) */
    if ((uint64_t)h->cols * 4 > r.left) { corrupt(&r, "more columns than the groups can list"); return NULL; }
    ClaGroup **gs = br_calloc((size_t)n + 1, sizeof *gs);
    uint8_t *seen = br_calloc((size_t)h->cols + 1, 1), *held = br_malloc((size_t)h->rows + 1);
    bool ok = gs && seen && held;
    if (!ok) br_err(e, BR_ENOMEM, "out of memory reading %s", path);
    int k = 0;
    for (; ok && k < n; k++) ok = (gs[k] = read_group(&r, h, seen, held)) != NULL;
    for (int64_t j = 0; ok && j < h->cols; j++)
        if (!seen[j]) { corrupt(&r, "a column in no group"); ok = false; }
    if (ok && r.left) { br_err(e, BR_EIO, "%s: oversized compressed binary file", path); ok = false; }
    free(seen);
    free(held);
    MB *m = NULL;
    if (ok) {
        m = cmb_new(h->rows, h->cols, gs, (int)n, e);
        gs = NULL;
        if (m && m->nnz != h->nnz) {
            br_err(e, BR_EIO, "%s: corrupt binary file (header nnz %lld, data has %lld)", path, (long long)h->nnz,
                   (long long)m->nnz);
            mb_release(m);
            m = NULL;
        }
    }
    if (gs) {
        for (int q = 0; q < k; q++) cla_group_release(gs[q]);
        free(gs);
    }
    return m;
}

static int put(IoOut *o, const void *p, size_t n, BrErr *e)
{
    static const char zero[8] = {0};
    if (n && io_out_write(o, p, n, e)) return e->code;
    return (n & 7) ? io_out_write(o, zero, 8 - (n & 7), e) : 0;
}

static int write_cmb(IoOut *o, const MB *m, BrErr *e)
{
    const struct CMB *c = m->cmb;
    int64_t ng = c->ngroups;
    if (put(o, &ng, 8, e)) return e->code;
    for (int q = 0; q < c->ngroups; q++) {
        const ClaGroup *g = c->groups[q];
        int32_t gh[4] = {(int32_t)g->enc, g->ncols, g->ndict, 0};
        size_t nd = (size_t)g->ndict, rows = (size_t)m->rows;
        if (put(o, gh, sizeof gh, e) || put(o, g->cols, (size_t)g->ncols * 4, e) ||
            put(o, g->dict, nd * (size_t)g->ncols * 8, e) || put(o, g->counts, nd * 8, e))
            return e->code;
        int rc = 0;
        switch (g->enc) {
        case CLA_DDC1: rc = put(o, g->ix->c1, rows, e); break;
        case CLA_DDC2: rc = put(o, g->ix->c2, rows * 2, e); break;
        case CLA_OLE: case CLA_RLE:
            rc = put(o, g->ix->ptr, (nd + 1) * 8, e) || put(o, g->ix->data, (size_t)g->ix->ptr[nd] * 2, e);
            break;
        case CLA_UNC: {
            const MB *u = g->unc;
            int64_t uh[2] = {u->sparse, u->nnz};
            rc = put(o, uh, sizeof uh, e);
            if (!rc && !u->sparse) rc = put(o, u->d, (size_t)(u->rows * u->cols) * 8, e);
            if (!rc && u->sparse)
                rc = put(o, u->rp, rows * 8 + 8, e) || put(o, u->ci, (size_t)u->nnz * 4, e) ||
                     put(o, u->v, (size_t)u->nnz * 8, e);
            break;
        }
        default: break;
        }
        if (rc) return e->code ? e->code : BR_EIO;
    }
    return 0;
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
    /* flags 2: a compressed block, whose parts are checked as read */
    bool cmp = h.flags == 2;
    if (h.rows < 0 || h.cols < 0 || h.cols > INT32_MAX || h.nnz < 0 || (!cmp && (h.flags & ~1u)) ||
        (double)h.nnz > (double)h.rows * (double)h.cols || (!cmp && !bin_size(&h, &want))) {
        br_err(e, BR_EIO, "%s: corrupt binary header", path);
        goto fail;
    }
    if (!cmp && (uint64_t)st.st_size != want) {
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
    /* (checked before the subtraction: the file's values may be anything) */
    if (ptr[0] < 0 || ptr[1] < ptr[0] || ptr[1] > h->nnz) {
        br_err(e, BR_EIO, "%s: corrupt binary file (invalid sparse structure)", path);
        return NULL;
    }
    int64_t z = ptr[1] - ptr[0];
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
    for (int64_t r = 0; r <= n; r++) {
        if (m->rp[r] < ptr[0] || m->rp[r] > ptr[1]) {
            br_err(e, BR_EIO, "%s: corrupt binary file (invalid sparse structure)", path);
            mb_release(m);
            return NULL;
        }
        m->rp[r] -= ptr[0];
    }
    m->nnz = z;
    m->build_row = n;
    return m;
}

/* A compressed block's body (after the header) from fd; fd is closed. */
static MB *bin_read_cmb(int fd, const BinHead *h, const char *path, BrErr *e)
{
    struct stat st;
    MB *m = fstat(fd, &st) == 0 ? read_cmb(fd, path, h, (uint64_t)st.st_size - BIN_HEAD, e)
                                : (br_err(e, BR_EIO, "cannot read %s: %s", path, strerror(errno)), NULL);
    close(fd);
    return m;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

MB *io_read_binary_rows(const char *path, int64_t r0, int64_t r1, int64_t *rows, int64_t *cols, BrErr *e)
{
    if (io_sysbin_detect(path)) return io_read_sysbin_rows(path, r0, r1, rows, cols, e);
    if (is_dir(path)) return io_binary_parts_rows(path, r0, r1, rows, cols, e);   /* a parallel write's parts */
    BinHead h;
    int fd = bin_open(path, -1, -1, &h, e);
    if (fd < 0) return NULL;
    *rows = h.rows;
    *cols = h.cols;
    r0 = BR_MAX(0, BR_MIN(r0, h.rows));
    r1 = BR_MAX(r0, BR_MIN(r1, h.rows));
    int64_t n = r1 - r0;
    if (h.flags == 2) {   /* compressed: the whole block, then the rows */
        MB *c = bin_read_cmb(fd, &h, path, e);
        MB *m = c ? cmb_decompress_rows(c, r0, r1, e) : NULL;
        mb_release(c);
        return m;
    }
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

struct IoBinRows {
    IoSysbin *sb;   /* SystemDS's layout, or NULL: braid's */
    char *path;
    bool cmb;       /* braid's layout holding a compressed block */
};

IoBinRows *io_binary_rows_open(const char *path, int64_t *rows, int64_t *cols, BrErr *e)
{
    IoBinRows *h = calloc(1, sizeof *h);
    if (!h || !(h->path = strdup(path))) {
        free(h);
        br_err(e, BR_ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    if (io_sysbin_detect(path)) {
        if ((h->sb = io_sysbin_open(path, rows, cols, e))) return h;
    } else {
        MB *none = io_read_binary_rows(path, 0, 0, rows, cols, e);   /* the header */
        if (none) {
            h->cmb = none->cmb != NULL;
            mb_release(none);
            return h;
        }
    }
    io_binary_rows_close(h);
    return NULL;
}

MB *io_binary_rows_read(IoBinRows *h, int64_t r0, int64_t r1, BrErr *e)
{
    if (h->sb) return io_sysbin_rows(h->sb, r0, r1, e);
    int64_t rows, cols;
    return io_read_binary_rows(h->path, r0, r1, &rows, &cols, e);
}

bool io_binary_rows_cmb(const IoBinRows *h) { return h->cmb; }

void io_binary_rows_close(IoBinRows *h)
{
    if (!h) return;
    io_sysbin_close(h->sb);
    free(h->path);
    free(h);
}

MB *io_read_binary(const char *path, int64_t rows, int64_t cols, BrErr *e)
{
    if (is_dir(path)) {
        int64_t r, c;
        MB *m = io_binary_parts_rows(path, 0, INT64_MAX, &r, &c, e);
        if (m && ((rows >= 0 && rows != r) || (cols >= 0 && cols != c))) {
            br_err(e, BR_EDIM, "%s: dimension mismatch: the parts hold %lldx%lld, the .mtd or read() arguments "
                   "say %lldx%lld", path, (long long)r, (long long)c, (long long)(rows >= 0 ? rows : r),
                   (long long)(cols >= 0 ? cols : c));
            mb_release(m);
            return NULL;
        }
        return m && mb_examine(m, e) ? (mb_release(m), NULL) : m;
    }
    BinHead h;
    int fd = bin_open(path, rows, cols, &h, e);
    if (fd < 0) return NULL;
    if (h.flags == 2) return bin_read_cmb(fd, &h, path, e);
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
    h.flags = m->cmb ? 2 : m->sparse ? 1 : 0;
    h.rows = m->rows;
    h.cols = m->cols;
    h.nnz = m->nnz;
    if (io_out_write(o, &h, sizeof h, e)) return e->code;
    if (m->cmb) return write_cmb(o, m, e);
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
