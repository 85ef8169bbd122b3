/* sysbin.c: SystemDS's binary-block matrix files (format "binary"), read
 * and written; layout from SystemDS's Java (MatrixBlock.write /
 * readFields, MatrixIndexes.write) and Hadoop's SequenceFile:
 *
 *   header  "SEQ", version byte 6; key and value class names as Hadoop
 *           Text (vint length, UTF-8): ...matrix.data.MatrixIndexes and
 *           ...matrix.data.MatrixBlock (org.apache.sysds or the older
 *           org.apache.sysml); byte compressed, byte blockCompressed (both
 *           must be 0: SystemDS writes uncompressed records); int32 count
 *           of metadata pairs, each two Texts; 16 sync bytes
 *   record  int32 record length (key + value), int32 key length (16), key,
 *           value; a record length of -1 is a sync mark: the 16 sync bytes
 *           follow (Hadoop writes one between records every few KB)
 *   key     int64 row-block index, int64 column-block index (from 1)
 *   value   int32 rlen, int32 clen, byte type, then by type:
 *           0 empty:        nothing
 *           1 ultra-sparse: nnz (int32), then nnz (int32 r, int32 c, double)
 *                           triples (clen 1: (int32 r, double) pairs)
 *           2 sparse:       nnz (int64 when rlen*clen > INT32_MAX, else
 *                           int32), then per row int32 n and n (int32 c,
 *                           double) pairs
 *           3 dense:        rlen*clen doubles, row-major
 *           4 dedup:        not read (SystemDS's embedding blocks)
 *   All numbers big-endian (Java DataOutput). A path that is a folder is
 *   read as its part files (every file whose name does not start with "."
 *   or "_"), in name order, as SystemDS's parallel writer leaves them.
 *
 * Block (i, j) holds rows (i-1)*blen+1 .. and columns (j-1)*blen+1 ..; the
 * block size blen is the largest block side seen (every block but the
 * last of a row or column is full, so this is blen whenever the matrix has
 * more than one block in a dimension, and irrelevant otherwise). The
 * matrix is the union of the blocks; its size is the .mtd's (rows, cols)
 * when given, else the extent of the blocks. Every malformed input (a
 * truncated record, a wrong class, a compressed file, a block outside the
 * matrix or not on the block grid, a cell outside its block, a block given
 * twice, a sparse count that disagrees with its rows) is an error naming
 * the file and the byte offset. */
#include "ioint.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

typedef struct SbBlock {
    int64_t rb, cb;        /* block indexes, from 1 */
    int32_t rlen, clen;
    int type;
    int64_t nnz;
    const uint8_t *body;   /* after the type byte */
    size_t len;            /* bytes of body */
    int file;              /* which buffer */
    size_t off;            /* the record's offset in its file, for errors */
} SbBlock;

typedef struct SbRead {
    const char *path;      /* the file being parsed, for errors */
    const uint8_t *p;
    size_t n, pos;
    BrErr *e;
} SbRead;

static double bedbl(const uint8_t *p)
{
    uint64_t u = io_be64(p);
    double d;
    memcpy(&d, &u, 8);
    return d;
}

static int sb_fail(SbRead *r, const char *what)
{
    return br_err(r->e, BR_EIO, "%s: not a valid SystemDS binary-block file: %s at byte %zu", r->path,
                  what, r->pos);
}

static int sb_need(SbRead *r, size_t k, const char *what)
{
    if (r->n - r->pos < k) return sb_fail(r, what);
    return 0;
}

int io_hadoop_vlong(const uint8_t *p, size_t n, size_t *pos, int64_t *out)
{
    if (*pos >= n) return -1;
    int8_t first = (int8_t)p[(*pos)++];
    if (first >= -112) {
        *out = first;
        return 0;
    }
    bool neg = first < -120;
    int len = neg ? -119 - first : -111 - first;
    if (n - *pos < (size_t)len - 1) return -1;
    uint64_t v = 0;
    for (int i = 0; i < len - 1; i++) v = v << 8 | p[(*pos)++];
    *out = neg ? (int64_t)~v : (int64_t)v;
    return 0;
}

static int sb_vint(SbRead *r, int64_t *out)
{
    return io_hadoop_vlong(r->p, r->n, &r->pos, out) ? sb_fail(r, "truncated header") : 0;
}

/* a Text; returns its start and length in *s, *len */
static int sb_text(SbRead *r, const uint8_t **s, int64_t *len)
{
    if (sb_vint(r, len)) return -1;
    if (*len < 0 || sb_need(r, (size_t)*len, "truncated header")) return *len < 0 ? sb_fail(r, "bad string length") : -1;
    *s = r->p + r->pos;
    r->pos += (size_t)*len;
    return 0;
}

static bool class_is(const uint8_t *s, int64_t len, const char *cls)
{
    static const char *pkgs[] = {"org.apache.sysds.runtime.matrix.data.", "org.apache.sysml.runtime.matrix.data."};
    for (int i = 0; i < 2; i++) {
        size_t pl = strlen(pkgs[i]), cl = strlen(cls);
        if ((size_t)len == pl + cl && !memcmp(s, pkgs[i], pl) && !memcmp(s + pl, cls, cl)) return true;
    }
    return false;
}

/* Parses one sequence file's records into *blocks (grown as needed). */
static int sb_parse(SbRead *r, int file, SbBlock **blocks, size_t *nb, size_t *cap)
{
    if (sb_need(r, 4, "truncated header") ) return -1;
    if (memcmp(r->p, "SEQ", 3)) return sb_fail(r, "no SEQ magic");
    if (r->p[3] != 6) return sb_fail(r, "sequence file version other than 6");
    r->pos = 4;
    const uint8_t *s;
    int64_t len;
    if (sb_text(r, &s, &len)) return -1;
    if (!class_is(s, len, "MatrixIndexes")) return sb_fail(r, "the key class is not MatrixIndexes");
    if (sb_text(r, &s, &len)) return -1;
    if (!class_is(s, len, "MatrixBlock")) return sb_fail(r, "the value class is not MatrixBlock");
    if (sb_need(r, 2, "truncated header")) return -1;
    if (r->p[r->pos] || r->p[r->pos + 1]) return sb_fail(r, "compressed sequence file (SystemDS writes none)");
    r->pos += 2;
    if (sb_need(r, 4, "truncated header")) return -1;
    int32_t meta = (int32_t)io_be32(r->p + r->pos);
    r->pos += 4;
    if (meta < 0) return sb_fail(r, "negative metadata count");
    for (int64_t i = 0; i < 2 * (int64_t)meta; i++)
        if (sb_text(r, &s, &len)) return -1;
    if (sb_need(r, 16, "truncated header")) return -1;
    const uint8_t *sync = r->p + r->pos;
    r->pos += 16;
    while (r->pos < r->n) {
        size_t rec = r->pos;
        if (sb_need(r, 4, "truncated record")) return -1;
        int32_t rl = (int32_t)io_be32(r->p + r->pos);
        r->pos += 4;
        if (rl == -1) {   /* sync mark */
            if (sb_need(r, 16, "truncated sync mark")) return -1;
            if (memcmp(r->p + r->pos, sync, 16)) return sb_fail(r, "sync mark differs from the header's");
            r->pos += 16;
            continue;
        }
        if (sb_need(r, 4, "truncated record")) return -1;
        int32_t kl = (int32_t)io_be32(r->p + r->pos);
        r->pos += 4;
        if (kl != 16) return sb_fail(r, "key length other than 16 (MatrixIndexes)");
        if (rl < kl + 9) return sb_fail(r, "record too short for a MatrixBlock");
        if (sb_need(r, (size_t)rl, "truncated record")) return -1;
        SbBlock b;
        b.rb = (int64_t)io_be64(r->p + r->pos);
        b.cb = (int64_t)io_be64(r->p + r->pos + 8);
        b.rlen = (int32_t)io_be32(r->p + r->pos + 16);
        b.clen = (int32_t)io_be32(r->p + r->pos + 20);
        b.type = r->p[r->pos + 24];
        b.body = r->p + r->pos + 25;
        b.len = (size_t)rl - 25;
        b.file = file;
        b.off = rec;
        b.nnz = 0;
        r->pos += (size_t)rl;
        size_t save = r->pos;
        r->pos = rec;
        if (b.rb < 1 || b.cb < 1) return sb_fail(r, "block index below 1");
        if (b.rlen < 0 || b.clen < 0) return sb_fail(r, "negative block size");
        if (b.type > 3) return sb_fail(r, b.type == 4 ? "deduplicated dense block (not supported)" : "unknown block type");
        uint64_t cells = (uint64_t)b.rlen * (uint64_t)b.clen;
        if (b.type == 3 && (b.len % 8 || b.len / 8 != cells)) return sb_fail(r, "dense block of the wrong length");
        if (b.type == 0 && b.len) return sb_fail(r, "empty block with data");
        if (b.type == 1 || b.type == 2) {
            bool wide = b.type == 2 && cells > INT32_MAX;
            if (b.len < (wide ? 8u : 4u)) return sb_fail(r, "truncated block");
            b.nnz = wide ? (int64_t)io_be64(b.body) : (int32_t)io_be32(b.body);
            if (b.nnz < 0 || (uint64_t)b.nnz > cells || (uint64_t)b.nnz > b.len / 12)
                return sb_fail(r, "bad non-zero count");
            b.body += wide ? 8 : 4;
            b.len -= wide ? 8 : 4;
            if (b.type == 1 && b.len != (uint64_t)b.nnz * (b.clen > 1 ? 16 : 12))
                return sb_fail(r, "ultra-sparse block of the wrong length");
        }
        r->pos = save;
        if (*nb == *cap) {
            size_t nc = *cap ? *cap * 2 : 16;
            SbBlock *g = realloc(*blocks, nc * sizeof *g);
            if (!g) return br_err(r->e, BR_ENOMEM, "%s: out of memory", r->path);
            *blocks = g;
            *cap = nc;
        }
        (*blocks)[(*nb)++] = b;
    }
    return 0;
}

/* Calls put(ctx, row, col, value) for every stored cell of b (row, col
 * within the block, from 0); checks the cells against the block. */
typedef int (*SbPut)(void *ctx, int64_t r, int64_t c, double v);

static int sb_cells(SbRead *r, const SbBlock *b, SbPut put, void *ctx)
{
    const uint8_t *p = b->body;
    if (b->type == 3) {
        for (int64_t i = 0; i < b->rlen; i++)
            for (int64_t j = 0; j < b->clen; j++, p += 8) {
                double v = bedbl(p);
                if (v != 0 && put(ctx, i, j, v)) return -1;
            }
        return 0;
    }
    if (b->type == 1) {
        for (int64_t k = 0; k < b->nnz; k++) {
            int32_t i = (int32_t)io_be32(p), j = 0;
            p += 4;
            if (b->clen > 1) {
                j = (int32_t)io_be32(p);
                p += 4;
            }
            if (i < 0 || i >= b->rlen || j < 0 || j >= b->clen) return sb_fail(r, "ultra-sparse cell outside its block");
            if (put(ctx, i, j, bedbl(p))) return -1;
            p += 8;
        }
        return 0;
    }
    if (b->type == 2) {
        const uint8_t *end = b->body + b->len;
        int64_t seen = 0;
        for (int64_t i = 0; i < b->rlen; i++) {
            if (end - p < 4) return sb_fail(r, "truncated sparse block");
            int32_t n = (int32_t)io_be32(p);
            p += 4;
            if (n < 0 || n > b->clen || (end - p) / 12 < n) return sb_fail(r, "bad sparse row length");
            for (int32_t k = 0; k < n; k++, p += 12) {
                int32_t j = (int32_t)io_be32(p);
                if (j < 0 || j >= b->clen) return sb_fail(r, "sparse cell outside its block");
                if (put(ctx, i, j, bedbl(p + 4))) return -1;
            }
            seen += n;
        }
        if (p != end) return sb_fail(r, "sparse block with trailing bytes");
        if (seen != b->nnz) return sb_fail(r, "sparse block whose rows disagree with its non-zero count");
    }
    return 0;
}

typedef struct SbFill {
    MB *m;
    int64_t r0, c0;  /* the block's first cell in m (r0 below 0 or rows
                        past m's end: rows outside a row-range read) */
    int64_t *fill;   /* sparse: next free slot per row */
} SbFill;

static bool outside(const SbFill *f, int64_t r) { return f->r0 + r < 0 || f->r0 + r >= f->m->rows; }

/* A dense block (type 3, its length checked by sb_parse) into a dense m:
 * each of its rows inside m decoded in one loop, every value as stored
 * (a -0 stays -0, as SystemDS's dense read keeps it; sb_cells with
 * put_dense stored only the values != 0, so it read -0 as +0). A call
 * per cell was about 7 ns, a third of a whole read of a dense file. */
static void sb_dense_rows(const SbBlock *b, const SbFill *f)
{
    const int64_t lo = BR_MAX(0, -f->r0), hi = BR_MIN((int64_t)b->rlen, f->m->rows - f->r0);
    for (int64_t i = lo; i < hi; i++) {
        const uint8_t *p = b->body + (size_t)(i * b->clen) * 8;
        double *d = f->m->d + (f->r0 + i) * f->m->cols + f->c0;
        for (int64_t j = 0; j < b->clen; j++) d[j] = bedbl(p + 8 * j);
    }
}

static int put_dense(void *ctx, int64_t r, int64_t c, double v)
{
    SbFill *f = ctx;
    if (outside(f, r)) return 0;
    f->m->d[(f->r0 + r) * f->m->cols + f->c0 + c] = v;
    return 0;
}

static int put_count(void *ctx, int64_t r, int64_t c, double v)
{
    SbFill *f = ctx;
    (void)c;
    if (v != 0 && !outside(f, r)) f->m->rp[f->r0 + r + 1]++;
    return 0;
}

static int put_sparse(void *ctx, int64_t r, int64_t c, double v)
{
    SbFill *f = ctx;
    if (v == 0 || outside(f, r)) return 0;
    int64_t k = f->fill[f->r0 + r]++;
    f->m->ci[k] = (int32_t)(f->c0 + c);
    f->m->v[k] = v;
    return 0;
}

static int cmp_block(const void *a, const void *b)
{
    const SbBlock *x = a, *y = b;
    if (x->rb != y->rb) return x->rb < y->rb ? -1 : 1;
    if (x->cb != y->cb) return x->cb < y->cb ? -1 : 1;
    return 0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A file's bytes, mapped read-only (a read of a row range touches only
 * the record headers and its blocks' pages, so a read by blocks of rows,
 * docs/cla.md "Compressed as it is read", does not hold the file; the
 * kernel drops the pages at unmap), or read into memory where it cannot
 * be mapped (*mapped false; free with unslurp). */
static int slurp(const char *path, uint8_t **buf, size_t *n, bool *mapped, BrErr *e)
{
    *mapped = false;
    FILE *f = fopen(path, "rb");
    if (!f) return br_err(e, BR_EIO, "cannot read %s: %s", path, errno == ENOENT ? "file not found" : strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
        fclose(f);
        return br_err(e, BR_EIO, "cannot read %s: not a regular file", path);
    }
    *n = (size_t)st.st_size;
    if (*n) {
        void *p = mmap(NULL, *n, PROT_READ, MAP_PRIVATE, fileno(f), 0);
        if (p != MAP_FAILED) {
            fclose(f);
            *buf = p;
            *mapped = true;
            return 0;
        }
    }
    *buf = malloc(*n ? *n : 1);
    if (!*buf) {
        fclose(f);
        return br_err(e, BR_ENOMEM, "%s: out of memory (%zu bytes)", path, *n);
    }
    size_t got = fread(*buf, 1, *n, f);
    fclose(f);
    if (got != *n) {
        free(*buf);
        *buf = NULL;
        return br_err(e, BR_EIO, "%s: read error", path);
    }
    return 0;
}

static void unslurp(uint8_t *buf, size_t n, bool mapped)
{
    if (mapped) munmap(buf, n);
    else free(buf);
}

/* The part files of a folder, sorted; NULL-terminated, caller frees. */
static char **part_files(const char *dir, BrErr *e)
{
    DIR *d = opendir(dir);
    if (!d) {
        br_err(e, BR_EIO, "cannot read %s: %s", dir, strerror(errno));
        return NULL;
    }
    size_t n = 0, cap = 8;
    char **v = malloc(cap * sizeof *v);
    struct dirent *de;
    while (v && (de = readdir(d))) {
        if (de->d_name[0] == '.' || de->d_name[0] == '_') continue;
        if (n + 2 > cap) {
            char **g = realloc(v, (cap *= 2) * sizeof *v);
            if (!g) break;
            v = g;
        }
        size_t l = strlen(dir) + strlen(de->d_name) + 2;
        if (!(v[n] = malloc(l))) break;
        snprintf(v[n++], l, "%s/%s", dir, de->d_name);
    }
    closedir(d);
    if (!v) {
        br_err(e, BR_ENOMEM, "%s: out of memory", dir);
        return NULL;
    }
    v[n] = NULL;
    qsort(v, n, sizeof *v, cmp_name);
    return v;
}

static bool is_folder(const char *path)
{
    struct stat st;
    return !stat(path, &st) && S_ISDIR(st.st_mode);
}

char **io_sysbin_files(const char *path, BrErr *e)
{
    if (is_folder(path)) return part_files(path, e);
    char **v = calloc(2, sizeof *v);
    if (v && !(v[0] = strdup(path))) {
        free(v);
        v = NULL;
    }
    if (!v) br_err(e, BR_ENOMEM, "%s: out of memory", path);
    return v;
}

bool io_sysbin_detect(const char *path)
{
    char first[4096];
    const char *f = path;
    if (is_folder(path)) {
        BrErr e = {0};
        char **parts = part_files(path, &e);
        if (!parts) return false;
        bool any = parts[0] != NULL;
        if (any) snprintf(first, sizeof first, "%s", parts[0]);
        for (char **p = parts; *p; p++) free(*p);
        free(parts);
        if (!any) return false;
        f = first;
    }
    FILE *fp = fopen(f, "rb");
    if (!fp) return false;
    char m[3];
    bool yes = fread(m, 1, 3, fp) == 3 && !memcmp(m, "SEQ", 3);
    fclose(fp);
    return yes;
}

/* An opened file or folder: every record's header parsed and checked
 * once (the files stay mapped), so that several row ranges (the
 * compile-time estimate's samples, a read by blocks) decode only their
 * blocks; each read of the whole file walked every record again, one
 * page fault per block on this project's virtual machine. */
struct IoSysbin {
    char **files;   /* a folder's part files, or NULL */
    char *single[2];
    char **list;
    size_t nf;
    uint8_t **bufs;
    size_t *lens;
    bool *maps;
    SbBlock *blocks;
    size_t nb;
    int64_t rows, cols, blen;
    char *path;
};

void io_sysbin_close(IoSysbin *h)
{
    if (!h) return;
    free(h->blocks);
    if (h->bufs)
        for (size_t i = 0; i < h->nf; i++) unslurp(h->bufs[i], h->lens[i], h->maps[i]);
    free(h->bufs);
    free(h->lens);
    free(h->maps);
    if (h->files) {
        for (char **p = h->files; *p; p++) free(*p);
        free(h->files);
    }
    free(h->path);
    free(h);
}

/* rows, cols: the .mtd's sizes (-1: from the blocks) */
static IoSysbin *sb_open(const char *path, int64_t rows, int64_t cols, BrErr *e)
{
    IoSysbin *h = calloc(1, sizeof *h);
    if (!h || !(h->path = strdup(path))) {
        free(h);
        br_err(e, BR_ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    h->single[0] = h->path;
    bool dir = is_folder(path);
    if (dir && !(h->files = part_files(path, e))) goto fail;
    h->list = dir ? h->files : h->single;
    while (h->list[h->nf]) h->nf++;
    size_t nf = h->nf, cap = 0;
    h->bufs = calloc(nf ? nf : 1, sizeof *h->bufs);
    h->lens = calloc(nf ? nf : 1, sizeof *h->lens);
    h->maps = calloc(nf ? nf : 1, sizeof *h->maps);
    SbRead r = {.e = e};
    if (!h->bufs || !h->lens || !h->maps) {
        br_err(e, BR_ENOMEM, "%s: out of memory", path);
        goto fail;
    }
    for (size_t i = 0; i < nf; i++) {
        size_t n = 0;
        if (slurp(h->list[i], &h->bufs[i], &n, &h->maps[i], e)) goto fail;
        h->lens[i] = n;
        r = (SbRead){.path = h->list[i], .p = h->bufs[i], .n = n, .pos = 0, .e = e};
        if (sb_parse(&r, (int)i, &h->blocks, &h->nb, &cap)) goto fail;
    }
    /* the block size, the extent, duplicates */
    SbBlock *blocks = h->blocks;
    size_t nb = h->nb;
    int64_t blen = 1, er = 0, ec = 0;
    for (size_t i = 0; i < nb; i++) blen = BR_MAX(blen, BR_MAX(blocks[i].rlen, blocks[i].clen));
    if (nb) qsort(blocks, nb, sizeof *blocks, cmp_block);   /* none: a 0x0 matrix */
    for (size_t i = 0; i < nb; i++) {
        SbBlock *b = &blocks[i];
        r = (SbRead){.path = h->list[b->file], .pos = b->off, .e = e};
        if (i && !cmp_block(b, b - 1)) {
            sb_fail(&r, "block given twice");
            goto fail;
        }
        if ((b->rb - 1) > (INT64_MAX - blen) / blen || (b->cb - 1) > (INT64_MAX - blen) / blen) {
            sb_fail(&r, "block index out of range");
            goto fail;
        }
        er = BR_MAX(er, (b->rb - 1) * blen + b->rlen);
        ec = BR_MAX(ec, (b->cb - 1) * blen + b->clen);
    }
    if (rows < 0) rows = er;
    if (cols < 0) cols = ec;
    if (er > rows || ec > cols) {
        br_err(e, BR_EDIM, "%s: dimension mismatch: the blocks reach %lldx%lld, the .mtd or read() arguments "
               "say %lldx%lld", path, (long long)er, (long long)ec, (long long)rows, (long long)cols);
        goto fail;
    }
    if (cols > INT32_MAX) {
        br_err(e, BR_EDIM, "%s: %lld columns (at most %d)", path, (long long)cols, INT32_MAX);
        goto fail;
    }
    /* a block not on the grid: smaller than blen though not the last */
    for (size_t i = 0; i < nb; i++) {
        SbBlock *b = &blocks[i];
        int64_t wr = BR_MIN(blen, rows - (b->rb - 1) * blen), wc = BR_MIN(blen, cols - (b->cb - 1) * blen);
        if (b->rlen != wr || b->clen != wc) {
            r = (SbRead){.path = h->list[b->file], .pos = b->off, .e = e};
            sb_fail(&r, "block not on the block grid of the matrix");
            goto fail;
        }
    }
    h->rows = rows;
    h->cols = cols;
    h->blen = blen;
    return h;
fail:
    io_sysbin_close(h);
    return NULL;
}

IoSysbin *io_sysbin_open(const char *path, int64_t *rows, int64_t *cols, BrErr *e)
{
    IoMeta m;
    bool found = false;
    if (io_read_mtd(path, &m, &found, e)) return NULL;
    IoSysbin *h = sb_open(path, found ? m.rows : -1, found ? m.cols : -1, e);
    if (h) {
        *rows = h->rows;
        *cols = h->cols;
    }
    return h;
}

/* The matrix's rows [r0, r1) (clipped): only the blocks that hold rows
 * of the range are decoded. */
MB *io_sysbin_rows(IoSysbin *h, int64_t r0, int64_t r1, BrErr *e)
{
    const char *path = h->path;
    int64_t rows = h->rows, cols = h->cols, blen = h->blen;
    /* the row range: only its blocks are decoded */
    int64_t R0 = BR_MAX(0, BR_MIN(r0, rows)), R1 = BR_MAX(R0, BR_MIN(r1, rows)), nr = R1 - R0;
    size_t keep = 0;
    int64_t nnz = 0;
    SbBlock *blocks = malloc((h->nb ? h->nb : 1) * sizeof *blocks);
    MB *m = NULL;
    int64_t *fill = NULL;
    SbRead r = {.e = e};
    if (!blocks) {
        br_err(e, BR_ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    for (size_t i = 0; i < h->nb; i++) {
        const SbBlock *b = &h->blocks[i];
        int64_t top = (b->rb - 1) * blen;
        if (top >= R1 || top + b->rlen <= R0) continue;
        nnz += b->type == 3 ? (int64_t)b->rlen * b->clen : b->nnz;
        blocks[keep++] = *b;
    }
    size_t nb = keep;
    char **list = h->list;
    /* the extent comes from the blocks' indices and sizes, which a short
     * file can set to anything: the matrix must fit the memory budget
     * before anything of its size is allocated or walked */
    if (r0 > 0 || r1 < INT64_MAX) {
        /* a rank's rows (a distributed read): the partition must fit the
         * machine; the budget decided that the matrix is distributed */
        double need = BR_MIN((double)nr * (double)cols * 8, 24 * ((double)nr + 1) + 12 * (double)nnz);
        if (need > br_mem_physical()) {
            br_err(e, BR_ENOMEM, "read %s: rows %lld to %lld need %.1f GB, more than this machine's %.1f GB", path,
                   (long long)R0 + 1, (long long)R1, need / 1e9, br_mem_physical() / 1e9);
            goto done;
        }
    } else if (io_check_mem(path, nr, cols, nnz, e)) goto done;
    bool sparse = mb_should_be_sparse(nr, cols, nnz);
    if (!sparse) {
        if (!(m = mb_dense(nr, cols, e))) goto done;
        for (size_t i = 0; i < nb; i++) {
            SbFill f = {m, (blocks[i].rb - 1) * blen - R0, (blocks[i].cb - 1) * blen, NULL};
            r = (SbRead){.path = list[blocks[i].file], .pos = blocks[i].off, .e = e};
            if (blocks[i].type == 3) sb_dense_rows(&blocks[i], &f);
            else if (sb_cells(&r, &blocks[i], put_dense, &f)) goto done;
        }
        m->nnz = 0;
        for (int64_t k = 0; k < nr * cols; k++) m->nnz += m->d[k] != 0;
    } else {
        /* count per row, place, then order each row's columns (blocks of
         * one block row arrive in column-block order, so rows are sorted
         * already; the sort is for hand-made files) */
        MB cnt = {.rows = nr, .cols = cols};
        cnt.rp = calloc((size_t)nr + 1, sizeof *cnt.rp);
        if (!cnt.rp) {
            br_err(e, BR_ENOMEM, "%s: out of memory", path);
            goto done;
        }
        for (size_t i = 0; i < nb; i++) {
            SbFill f = {&cnt, (blocks[i].rb - 1) * blen - R0, (blocks[i].cb - 1) * blen, NULL};
            r = (SbRead){.path = list[blocks[i].file], .pos = blocks[i].off, .e = e};
            if (sb_cells(&r, &blocks[i], put_count, &f)) {
                free(cnt.rp);
                goto done;
            }
        }
        for (int64_t i = 0; i < nr; i++) cnt.rp[i + 1] += cnt.rp[i];
        m = mb_sp_alloc(nr, cols, cnt.rp[nr], e);
        fill = malloc(((size_t)nr + 1) * sizeof *fill);
        if (!m || !fill) {
            free(cnt.rp);
            if (m && !fill) br_err(e, BR_ENOMEM, "%s: out of memory", path);
            goto done;
        }
        memcpy(m->rp, cnt.rp, ((size_t)nr + 1) * sizeof *fill);
        memcpy(fill, cnt.rp, ((size_t)nr + 1) * sizeof *fill);
        free(cnt.rp);
        for (size_t i = 0; i < nb; i++) {
            SbFill f = {m, (blocks[i].rb - 1) * blen - R0, (blocks[i].cb - 1) * blen, fill};
            r = (SbRead){.path = list[blocks[i].file], .pos = blocks[i].off, .e = e};
            if (sb_cells(&r, &blocks[i], put_sparse, &f)) goto done;
        }
        m->nnz = m->rp[nr];
        m->build_row = nr;
        int32_t *tc = NULL;
        double *tw = NULL;
        int64_t wmax = 0;
        for (int64_t i = 0; i < nr; i++) wmax = BR_MAX(wmax, m->rp[i + 1] - m->rp[i]);
        if (wmax > 1 && (!(tc = malloc((size_t)wmax * sizeof *tc)) || !(tw = malloc((size_t)wmax * sizeof *tw)))) {
            free(tc);
            br_err(e, BR_ENOMEM, "%s: out of memory", path);
            goto done;
        }
        for (int64_t i = 0; i < nr; i++) {
            int64_t a = m->rp[i], n = m->rp[i + 1] - a;
            if (n > 1) mb_sort_entries(m->ci + a, m->v + a, n, tc, tw);
            for (int64_t k = a + 1; k < a + n; k++)
                if (m->ci[k] == m->ci[k - 1]) {
                    free(tc);
                    free(tw);
                    br_err(e, BR_EIO, "%s: not a valid SystemDS binary-block file: cell (%lld, %d) given twice",
                           path, (long long)(R0 + i) + 1, m->ci[k] + 1);
                    goto done;
                }
        }
        free(tc);
        free(tw);
    }
    free(fill);
    free(blocks);
    return mb_examine(m, e) ? (mb_release(m), NULL) : m;
done:
    mb_release(m);
    free(fill);
    free(blocks);
    return NULL;
}

MB *io_read_sysbin(const char *path, int64_t rows, int64_t cols, BrErr *e)
{
    IoSysbin *h = sb_open(path, rows, cols, e);
    MB *m = h ? io_sysbin_rows(h, 0, INT64_MAX, e) : NULL;
    io_sysbin_close(h);
    return m;
}

MB *io_read_sysbin_rows(const char *path, int64_t r0, int64_t r1, int64_t *rows, int64_t *cols, BrErr *e)
{
    IoSysbin *h = io_sysbin_open(path, rows, cols, e);
    MB *m = h ? io_sysbin_rows(h, r0, r1, e) : NULL;
    io_sysbin_close(h);
    return m;
}

/* ---- writing: SystemDS's layout, one sequence file (a whole matrix or
 * one part file of a folder: io.c, parts.c) ----
 * Blocks of blen x blen (the last of a row or column smaller), row-block
 * major, every block written (empty ones too; a later part without rows
 * holds none), block indexes counted from the part's first row, each encoded as SystemDS's
 * MatrixBlock.write chooses from (rlen, clen, nnz) alone: empty when nnz
 * is 0; else sparse on disk when the sparsity is below 0.4 and the sparse
 * or ultra-sparse size is below the dense size (evalSparseFormatOnDisk),
 * then ultra-sparse when nnz < rlen; dense otherwise. Hadoop's writer puts
 * a sync mark before a record once 100 KiB (Hadoop 3's SYNC_INTERVAL)
 * have passed since the last; the sync bytes here are a hash of the size
 * (Hadoop's are random), which readers only compare with the header's. */

typedef struct SbOut {
    IoOut *o;
    BrErr *e;
    uint8_t buf[1 << 16];
    size_t n;
    uint64_t pos;      /* bytes written so far */
    int rc;
} SbOut;

static void out_bytes(SbOut *w, const void *p, size_t n)
{
    const uint8_t *s = p;
    while (n && !w->rc) {
        size_t k = BR_MIN(n, sizeof w->buf - w->n);
        memcpy(w->buf + w->n, s, k);
        w->n += k;
        s += k;
        n -= k;
        w->pos += k;
        if (w->n == sizeof w->buf) {
            w->rc = io_out_write(w->o, w->buf, w->n, w->e);
            w->n = 0;
        }
    }
}

static void out_u32(SbOut *w, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    out_bytes(w, b, 4);
}

static void out_u64(SbOut *w, uint64_t v)
{
    out_u32(w, (uint32_t)(v >> 32));
    out_u32(w, (uint32_t)v);
}

static void out_dbl(SbOut *w, double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    out_u64(w, u);
}

static void out_text(SbOut *w, const char *s)
{
    uint8_t l = (uint8_t)strlen(s);   /* class names: a one-byte vint */
    out_bytes(w, &l, 1);
    out_bytes(w, s, l);
}

/* the block's cells in rows [r0, r0+rl), columns [c0, c0+cl): calls f
 * for each non-zero in row-major order */
typedef void (*SbEach)(SbOut *w, int64_t i, int64_t j, double v, void *ctx);

static void each_nz(const MB *m, int64_t r0, int64_t rl, int64_t c0, int64_t cl, SbOut *w, SbEach f, void *ctx)
{
    for (int64_t i = 0; i < rl; i++) {
        if (m->sparse) {
            int64_t a = m->rp[r0 + i], b = m->rp[r0 + i + 1];
            for (int64_t k = a; k < b; k++)
                if (m->ci[k] >= c0 && m->ci[k] < c0 + cl && m->v[k] != 0) f(w, i, m->ci[k] - c0, m->v[k], ctx);
        } else {
            const double *row = m->d + (r0 + i) * m->cols + c0;
            for (int64_t j = 0; j < cl; j++)
                if (row[j] != 0) f(w, i, j, row[j], ctx);
        }
    }
}

static void cnt_nz(SbOut *w, int64_t i, int64_t j, double v, void *ctx)
{
    int64_t *c = ctx;
    c[0]++;
    c[1 + i]++;
}

static void put_ijv(SbOut *w, int64_t i, int64_t j, double v, void *ctx)
{
    bool col = *(bool *)ctx;
    out_u32(w, (uint32_t)i);
    if (!col) out_u32(w, (uint32_t)j);
    out_dbl(w, v);
}

static void put_jv(SbOut *w, int64_t i, int64_t j, double v, void *ctx)
{
    out_u32(w, (uint32_t)j);
    out_dbl(w, v);
}

int io_write_sysbin(IoOut *o, const MB *m, int64_t lo, int64_t hi, int64_t row0, int64_t blen, bool whole,
                    BrErr *e)
{
    row0 += lo;
    if (blen < 1) blen = 1000;
    if (blen > INT32_MAX)
        return br_err(e, BR_EARG, "write: block size %lld is too large for SystemDS's binary-block format",
                      (long long)blen);
    if (row0 % blen)
        return br_err(e, BR_EARG, "write: a part of SystemDS's binary-block format starting at row %lld is not on "
                      "the %lld-row block grid", (long long)row0 + 1, (long long)blen);
    if (m->cols > INT32_MAX)
        return br_err(e, BR_EDIM, "write: %lldx%lld is too large for SystemDS's binary-block format",
                      (long long)m->rows, (long long)m->cols);
    int64_t nrows = hi - lo;
    SbOut *w = calloc(1, sizeof *w);
    int64_t *rowc = calloc((size_t)BR_MIN(blen, BR_MAX(nrows, 1)) + 1, sizeof *rowc);
    if (!w || !rowc) {
        free(w);
        free(rowc);
        return br_err(e, BR_ENOMEM, "write: out of memory");
    }
    w->o = o;
    w->e = e;
    uint8_t sync[16];
    uint64_t h = 1469598103934665603ull ^ (uint64_t)(row0 + nrows) * 31 ^ (uint64_t)m->cols * 131 ^ (uint64_t)blen;
    for (int i = 0; i < 16; i++) {
        h = (h ^ (uint64_t)i) * 1099511628211ull;
        sync[i] = (uint8_t)(h >> 29);
    }
    out_bytes(w, "SEQ\6", 4);
    out_text(w, "org.apache.sysds.runtime.matrix.data.MatrixIndexes");
    out_text(w, "org.apache.sysds.runtime.matrix.data.MatrixBlock");
    out_bytes(w, "\0\0", 2);   /* not compressed, not block-compressed */
    out_u32(w, 0);             /* no metadata */
    out_bytes(w, sync, 16);
    uint64_t last_sync = 0;
    /* a part without rows holds no blocks; a whole matrix without rows
     * or columns is one empty block */
    int64_t nbr = !whole && !nrows ? 0 : BR_MAX(1, (nrows + blen - 1) / blen), nbc = BR_MAX(1, (m->cols + blen - 1) / blen);
    for (int64_t bi = 0; bi < nbr && !w->rc; bi++)
        for (int64_t bj = 0; bj < nbc && !w->rc; bj++) {
            int64_t r0 = lo + bi * blen, c0 = bj * blen;
            int64_t rl = BR_MIN(blen, hi - r0), cl = BR_MIN(blen, m->cols - c0);
            memset(rowc, 0, ((size_t)rl + 1) * sizeof *rowc);
            each_nz(m, r0, rl, c0, cl, w, cnt_nz, rowc);
            int64_t nnz = rowc[0];
            double cells = (double)rl * (double)cl;
            bool wide = cells > INT32_MAX;
            double dsize = 9 + cells * 8, ssize = 9 + (wide ? 8 : 4) + (double)rl * 4 + (double)nnz * 12,
                   usize = 9 + 4 + (double)nnz * (cl > 1 ? 16 : 12);
            bool sp = nnz / cells < 0.4 && (ssize < dsize || usize < dsize);
            int type = !nnz ? 0 : sp && nnz < rl ? 1 : sp ? 2 : 3;
            uint64_t vlen = 9 + (type == 1 ? 4 + (uint64_t)nnz * (cl > 1 ? 16 : 12)
                               : type == 2 ? (wide ? 8 : 4) + (uint64_t)rl * 4 + (uint64_t)nnz * 12
                               : type == 3 ? (uint64_t)rl * (uint64_t)cl * 8 : 0);
            if (vlen + 16 > INT32_MAX) {
                w->rc = br_err(e, BR_EDIM, "write: a %lldx%lld block is too large for one record", (long long)rl,
                               (long long)cl);
                break;
            }
            if (w->pos >= last_sync + 100 * 1024) {
                out_u32(w, 0xffffffffu);
                out_bytes(w, sync, 16);
                last_sync = w->pos;
            }
            out_u32(w, (uint32_t)(vlen + 16));
            out_u32(w, 16);
            out_u64(w, (uint64_t)(row0 / blen + bi) + 1);
            out_u64(w, (uint64_t)bj + 1);
            out_u32(w, (uint32_t)rl);
            out_u32(w, (uint32_t)cl);
            uint8_t t = (uint8_t)type;
            out_bytes(w, &t, 1);
            if (type == 1) {
                bool col = cl == 1;
                out_u32(w, (uint32_t)nnz);
                each_nz(m, r0, rl, c0, cl, w, put_ijv, &col);
            } else if (type == 2) {
                if (wide) out_u64(w, (uint64_t)nnz);
                else out_u32(w, (uint32_t)nnz);
                for (int64_t i = 0; i < rl; i++) {
                    out_u32(w, (uint32_t)rowc[1 + i]);
                    each_nz(m, r0 + i, 1, c0, cl, w, put_jv, NULL);
                }
            } else if (type == 3) {
                for (int64_t i = 0; i < rl; i++)
                    for (int64_t j = 0; j < cl; j++) out_dbl(w, mb_get(m, r0 + i, c0 + j));
            }
        }
    if (!w->rc && w->n) w->rc = io_out_write(o, w->buf, w->n, e);
    int rc = w->rc;
    free(w);
    free(rowc);
    return rc;
}
