/* io.c: read() and write() of matrices: merge the script's arguments with
 * the .mtd sidecar, pick the format, dispatch to the format's reader or
 * writer, and commit data file and .mtd together. */
#include "ioint.h"
#include "../matrix/cmb.h"

#include <math.h>
#include <stdlib.h>
#include <strings.h>

void io_read_opts_init(IoReadOpts *o)
{
    memset(o, 0, sizeof *o);
    o->rows = o->cols = -1;
    o->header = -1;
    o->fill = -1;
}

void io_write_opts_init(IoWriteOpts *o) { memset(o, 0, sizeof *o); }

bool io_fmt_sysbin(const char *f) { return f && (!strcmp(f, "binary") || !strcmp(f, "sysds-binary")); }
bool io_fmt_anybin(const char *f) { return io_fmt_sysbin(f) || (f && !strcmp(f, "braid-binary")); }

static bool known_format(const char *f)
{
    return !strcmp(f, "text") || !strcmp(f, "mm") || !strcmp(f, "csv") || !strcmp(f, "libsvm") || io_fmt_anybin(f) ||
           !strcmp(f, "hdf5");
}

/* SystemDS's MetaDataAll.checkHasHDF5Format: a name ending in ".h5". */
static bool named_h5(const char *path)
{
    size_t n = strlen(path);
    return n > 3 && !strcasecmp(path + n - 3, ".h5");
}

/* true when the file starts with the Matrix Market banner. */
static bool looks_mm(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    char head[15] = {0};
    size_t n = fread(head, 1, 14, f);
    fclose(f);
    return n == 14 && !strncasecmp(head, "%%MatrixMarket", 14);
}

/* Checks that a given read() argument agrees with the .mtd. */
static int disagree_i(const char *path, const char *what, int64_t given, int64_t mtd, BrErr *e)
{
    if (given < 0 || mtd < 0 || given == mtd) return 0;
    bool dim = strcmp(what, "header") != 0;
    return br_err(e, dim ? BR_EDIM : BR_EARG, "read %s: %s=%lld disagrees with %s.mtd, which "
                  "says %s %lld%s", path, what, (long long)given, path, what, (long long)mtd,
                  dim ? " (dimension mismatch)" : "");
}

static int disagree_s(const char *path, const char *what, const char *given, const char *mtd,
                      BrErr *e)
{
    bool is_fmt = !strcmp(what, "format");
    if (!given || !mtd || !mtd[0] || !(is_fmt ? strcasecmp : strcmp)(given, mtd)) return 0;
    if (is_fmt && io_fmt_anybin(given) && io_fmt_anybin(mtd)) return 0;   /* either binary layout */
    return br_err(e, BR_EARG, "read %s: %s=\"%s\" disagrees with %s.mtd, which says %s \"%s\"",
                  path, what, given, path, what, mtd);
}

static void csv_opts(const IoReadOpts *o, const IoMeta *m, IoCsvOpts *c)
{
    *c = (IoCsvOpts){
        .header = o->header >= 0 ? o->header != 0 : m->header > 0,
        .sep = o->sep ? o->sep : m->has_sep ? m->sep : ",",
        .fill = o->fill != 0,
        .fill_value = o->has_fill_value ? o->fill_value : 0,
        .na = o->na_strings,
        .n_na = o->n_na,
        .chunk_bytes = o->chunk_bytes,
    };
}

int io_read_plan(const char *path, const IoReadOpts *o, IoReadPlan *p, BrErr *e)
{
    IoReadOpts none;
    if (!o) { io_read_opts_init(&none); o = &none; }
    io_recover(path);   /* a write a killed process left half done */
    if (!io_exists(path)) return br_err(e, BR_EIO, "cannot read %s: file not found", path);
    IoMeta *m = &p->meta;
    bool found;
    if (io_read_mtd(path, m, &found, e)) return e->code;
    if (m->data_type[0] && strcmp(m->data_type, "matrix"))
        return br_err(e, BR_EARG, "read %s: %s.mtd says data_type \"%s\", not a matrix", path, path, m->data_type);
    if (o->format && strlen(o->format) >= sizeof p->format)
        return br_err(e, BR_EARG, "read %s: unsupported format \"%s\" (text, mm, csv, binary, libsvm, hdf5)", path,
                      o->format);
    if (disagree_s(path, "format", o->format, m->format, e) ||
        disagree_i(path, "rows", o->rows, m->rows, e) ||
        disagree_i(path, "cols", o->cols, m->cols, e) ||
        disagree_i(path, "header", o->header, m->header, e) ||
        disagree_s(path, "sep", o->sep, m->has_sep ? m->sep : NULL, e) ||
        disagree_s(path, "indSep", o->ind_sep, m->has_ind_sep ? m->ind_sep : NULL, e))
        return e->code;
    char *fmt = p->format;
    if (o->format) {
        snprintf(fmt, sizeof p->format, "%s", o->format);
        for (char *c = fmt; *c; c++) if (*c >= 'A' && *c <= 'Z') *c = (char)(*c - 'A' + 'a');
    } else if (m->format[0]) snprintf(fmt, sizeof p->format, "%s", m->format);
    else snprintf(fmt, sizeof p->format, "%s", named_h5(path) ? "hdf5" : looks_mm(path) ? "mm" : "text");
    if (!known_format(fmt))
        return br_err(e, BR_EARG, "read %s: unsupported format \"%s\" (text, mm, csv, binary, libsvm, hdf5)", path,
                      fmt);
    if (o->dataset && strcmp(fmt, "hdf5"))
        return br_err(e, BR_EARG, "read %s: dataset= is for format \"hdf5\", the file's is \"%s\"", path, fmt);
    p->rows = o->rows >= 0 ? o->rows : m->rows;
    p->cols = o->cols >= 0 ? o->cols : m->cols;
    p->nnz = m->nnz;
    csv_opts(o, m, &p->csv);
    p->lsep = o->sep ? o->sep : m->has_sep ? m->sep : NULL;
    p->lind = o->ind_sep ? o->ind_sep : m->has_ind_sep ? m->ind_sep : NULL;
    return 0;
}

MB *io_read_matrix(const char *path, const IoReadOpts *o, BrErr *e)
{
    IoReadPlan p;
    if (io_read_plan(path, o, &p, e)) return NULL;
    int64_t chunk = o ? o->chunk_bytes : 0;
    const char *fmt = p.format;
    MB *r;
    if (!strcmp(fmt, "text")) r = io_read_text(path, p.rows, p.cols, chunk, e);
    else if (!strcmp(fmt, "mm")) r = io_read_mm(path, p.rows, p.cols, chunk, e);
    else if (io_fmt_anybin(fmt))   /* SystemDS's sequence files or braid's own layout */
        r = io_sysbin_detect(path) ? io_read_sysbin(path, p.rows, p.cols, e) : io_read_binary(path, p.rows, p.cols, e);
    else if (!strcmp(fmt, "libsvm"))
        r = io_read_libsvm(path, p.rows, p.cols, p.lsep, p.lind, chunk, e);
    else if (!strcmp(fmt, "hdf5")) r = io_read_hdf5(path, o ? o->dataset : NULL, p.rows, p.cols, e);
    else r = io_read_csv(path, p.rows, p.cols, &p.csv, e);
    /* a .mtd nnz that disagrees with the data means the pair does not
     * belong together (or one was edited): an error, not a silent pick */
    if (r && p.nnz >= 0 && r->nnz != p.nnz) {
        br_err(e, BR_EIO, "read %s: %s.mtd says nnz %lld, the data holds %lld non-zeros", path, path,
               (long long)p.nnz, (long long)r->nnz);
        mb_release(r);
        return NULL;
    }
    /* text formats: the parse cost every value far more than this pass,
     * which saves the answer in the block's finiteness flag (mb.h) for
     * the products that need it; binary data is scanned when first asked */
    if (r && !io_fmt_anybin(fmt)) (void)mb_has_nonfinite(r);
    return r;
}

void io_matrix_meta(IoMeta *m, const char *fmt, int64_t rows, int64_t cols, int64_t nnz, const IoWriteOpts *o)
{
    io_meta_init(m);
    snprintf(m->data_type, sizeof m->data_type, "matrix");
    snprintf(m->value_type, sizeof m->value_type, "double");
    snprintf(m->format, sizeof m->format, "%s", fmt);
    m->rows = rows;
    m->cols = cols;
    m->nnz = nnz;
    if (io_fmt_sysbin(fmt)) {
        snprintf(m->format, sizeof m->format, "binary");
        m->blocksize = o->blocksize > 0 ? o->blocksize : 1000;
    }
    if (!strcmp(fmt, "csv")) {
        m->header = o->header;
        snprintf(m->sep, sizeof m->sep, "%s", o->sep ? o->sep : ",");
        m->has_sep = true;
    }
    /* SystemDS's .mtd of a libsvm file has no separators (HDFSTool writes
     * them for csv only) but its read takes "sep"/"indSep" from a .mtd:
     * braid writes both when either is not the default, so the file reads
     * back in both systems, and nothing otherwise (SystemDS's layout) */
    bool lsep = o->sep && strcmp(o->sep, " "), lind = o->ind_sep && strcmp(o->ind_sep, ":");
    if (!strcmp(fmt, "libsvm") && (lsep || lind)) {
        snprintf(m->sep, sizeof m->sep, "%s", o->sep ? o->sep : " ");
        snprintf(m->ind_sep, sizeof m->ind_sep, "%s", o->ind_sep ? o->ind_sep : ":");
        m->has_sep = m->has_ind_sep = true;
    }
}

/* SystemDS's parallel binary writer (WriterBinaryBlockParallel): part
 * files = the partitioned size / the local file system's block size (16
 * KiB), at least 1, at most the number of blocks; threads = min(its
 * parallelism, part files); one file when that is 1. braid sizes the
 * blocks as written (8 bytes a dense cell; 12 a sparse non-zero and 4 a
 * row of each column block below sparsity 0.4) where SystemDS uses its
 * in-memory estimate, and takes maxparts (the writer's threads) as the
 * parallelism. */
static int64_t sysbin_parts(const MB *mb, int64_t blen, int maxparts)
{
    if (maxparts <= 1 || mb->rows <= blen) return 1;
    double cells = (double)mb->rows * (double)mb->cols, nnz = (double)mb->nnz;
    int64_t nbr = (mb->rows + blen - 1) / blen, nbc = BR_MAX(1, (mb->cols + blen - 1) / blen);
    double size = cells > 0 && nnz / cells < 0.4 ? nnz * 12 + (double)mb->rows * 4 * (double)nbc : cells * 8;
    int64_t n = io_seq_parts(size, maxparts);
    return (double)nbr * (double)nbc < (double)n ? nbr * nbc : n;
}

int64_t io_seq_parts(double bytes, int maxparts)
{
    return (int64_t)BR_MIN(BR_MAX(1, floor(bytes / 16384)), (double)BR_MAX(maxparts, 1));
}

/* A folder of n part files, each the block rows [i*len, (i+1)*len) with
 * len = ceil(rows / blen / n) * blen, as SystemDS's parallel writer
 * splits them (fewer files when the last would be empty). */
static int write_sysbin_parts(const char *path, const MB *mb, int64_t blen, int64_t n, const IoWriteOpts *o, BrErr *e)
{
    char *dir = io_parts_begin(path, e);
    if (!dir) return e->code;
    int64_t len = (int64_t)ceil((double)mb->rows / (double)blen / (double)n) * blen;
    int rc = 0;
    for (int64_t i = 0; i < n && i * len < mb->rows && !rc; i++)
        rc = io_parts_write_rows(dir, (int)i, mb, i * len, BR_MIN(mb->rows, (i + 1) * len), o, e);
    if (!rc) rc = io_parts_commit(dir, path, mb->rows, mb->cols, mb->nnz, o, e);
    else io_parts_abort(dir);
    free(dir);
    return rc;
}

int io_write_matrix(const char *path, const MB *mb, const IoWriteOpts *o, BrErr *e)
{
    IoWriteOpts none;
    if (!o) { io_write_opts_init(&none); o = &none; }
    const char *fmt = o->format ? o->format : "text";
    if (!known_format(fmt))
        return br_err(e, BR_EARG, "write %s: unsupported format \"%s\" (text, mm, csv, binary, libsvm, "
                      "sysds-binary, hdf5)", path, fmt);
    if (o->dataset && strcmp(fmt, "hdf5"))
        return br_err(e, BR_EARG, "write %s: dataset= is for format \"hdf5\", not \"%s\"", path, fmt);
    if (mb->cmb && strcmp(fmt, "braid-binary")) {
        /* compressed blocks are written compressed only in braid's binary format */
        MB *d = cmb_decompress(mb, e);
        if (!d) return e->code;
        int rc = io_write_matrix(path, d, o, e);
        mb_release(d);
        return rc;
    }
    const char *sep = o->sep ? o->sep : ",";
    bool csv = !strcmp(fmt, "csv");
    if (csv && (!sep[0] || strlen(sep) >= sizeof ((IoMeta *)0)->sep))
        return br_err(e, BR_EARG, "write %s: bad csv separator \"%s\"", path, sep);
    IoMeta m;
    bool sysbin = io_fmt_sysbin(fmt);   /* SystemDS's layout; its .mtd says "binary" */
    int64_t blen = o->blocksize > 0 ? o->blocksize : 1000;
    if (sysbin) {
        int64_t n = sysbin_parts(mb, blen, o->parts);
        if (n > 1) return write_sysbin_parts(path, mb, blen, n, o, e);
    }
    io_matrix_meta(&m, sysbin ? "binary" : fmt, mb->rows, mb->cols, mb->nnz, o);
    if (mb->cmb) m.cbytes = (int64_t)mb_bytes(mb);   /* compile-time costs of a later read */
    IoOut d;
    int rc = io_out_open(&d, path, e);
    if (rc) return rc;
    if (!strcmp(fmt, "text")) rc = io_write_text(&d, mb, false, o->chunk_bytes, e);
    else if (!strcmp(fmt, "mm")) rc = io_write_text(&d, mb, true, o->chunk_bytes, e);
    else if (csv) rc = io_write_csv(&d, mb, o->header, sep, o->chunk_bytes, e);
    else if (!strcmp(fmt, "libsvm")) rc = io_write_libsvm(&d, mb, o->sep, o->ind_sep, o->chunk_bytes, e);
    else if (sysbin) rc = io_write_sysbin(&d, mb, 0, mb->rows, 0, blen, true, e);
    else if (!strcmp(fmt, "hdf5")) rc = io_write_hdf5(&d, mb, o->dataset, e);
    else rc = io_write_binary(&d, mb, e);
    if (rc) { io_out_abort(&d); return rc; }
    return io_commit_with_mtd(&d, &m, e);
}
