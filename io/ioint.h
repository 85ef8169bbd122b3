/* ioint.h: internals shared by the io/ files only (not included elsewhere):
 * whole-file loading, splitting at line boundaries for parallel parsing,
 * per-range error records, growable text buffers, atomic output files and
 * the parallel row writer. */
#ifndef BRAID_IOINT_H
#define BRAID_IOINT_H

#include "io.h"

#include <stdio.h>
#include <string.h>

/* A whole file in memory: p[0..n) then a NUL; when n > 0 the last byte is
 * '\n' (one is appended if the file lacks it), so every line ends in '\n'. */
typedef struct IoBuf {
    char *p;
    size_t n;
    size_t raw;    /* bytes as read, before an appended final '\n' */
} IoBuf;

/* Loads a file, or the concatenation of a directory's part files, into b.
 * Errors name the file ("not found", "cannot open", "cannot read").
 * Free with io_buf_free. */
int io_load(const char *path, IoBuf *b, BrErr *e);
void io_buf_free(IoBuf *b);
/* The part files of folder path in name order (names not starting with
 * '.' or '_', no .crc or .mtd); caller frees each and the array. Returns
 * the count or -1 with e set. */
int io_list_parts(const char *path, char ***out, BrErr *e);
/* Rows [r0, r1) of a folder of binary part files (each a complete
 * binary matrix file of consecutive rows, as a distributed write makes
 * them); *rows, *cols the whole matrix's size (parts.c). */
MB *io_binary_parts_rows(const char *dir, int64_t r0, int64_t r1, int64_t *rows, int64_t *cols, BrErr *e);
/* Removes a temporary of commit.c: a file, or a folder of part files. */
void io_remove_tmp(const char *path);
/* true when path exists (file or directory). */
bool io_exists(const char *path);

/* Readers by ranges of rows (rows.c; csv.c, text.c, libsvm.c): the data
 * of a file, or of a folder's part files in name order, as one byte string
 * read by positioned reads (as io_load: a part that does not end in '\n'
 * is followed by one; a part of no bytes holds nothing). Errors name the
 * file. */
typedef struct IoSrcPart IoSrcPart;
typedef struct IoSrc {
    char *path;
    IoSrcPart *parts;
    int np;
    int64_t total;      /* bytes of the concatenation */
} IoSrc;
int io_src_open(IoSrc *s, const char *path, BrErr *e);   /* io_src_close even on an error */
int io_src_pread(const IoSrc *s, int64_t a, int64_t n, char *dst, BrErr *e);
void io_src_close(IoSrc *s);
/* The offsets where rows begin: entry k holds row k*g's offset and the
 * lines before it; g starts at 64 and doubles (every other entry kept)
 * when the index passes IO_IDX_MAX entries (io_test_csv_index: fewer).
 * io_idx_upto(x, row, off, line): rows up to row not indexed yet begin
 * at off, after line lines (rows come in increasing order; rows without
 * data begin where the next row with data does). io_idx_range: the bytes
 * [*a, *b) holding rows [r0, r1) (from row *row on the grid, after *line
 * lines; an empty range past the last entry). */
#define IO_IDX_MAX 65536
typedef struct IoRowIdx {
    int64_t g, nidx, cap;
    int64_t *off, *line;
} IoRowIdx;
int io_idx_init(IoRowIdx *x, const char *path, BrErr *e);
void io_idx_upto(IoRowIdx *x, int64_t row, int64_t off, int64_t line);
void io_idx_range(const IoRowIdx *x, int64_t total, int64_t r0, int64_t r1, int64_t *a, int64_t *b, int64_t *row,
                  int64_t *line);
void io_idx_free(IoRowIdx *x);

/* Calls fn over the bytes [from, total) of s in pieces of whole lines
 * (about 1 MB; a longer line whole), at: a piece's offset. fn returns
 * non-zero to stop (its value is returned). */
int io_src_lines(const IoSrc *s, int64_t from, int (*fn)(void *arg, const char *p, int64_t n, int64_t at, BrErr *e),
                 void *arg, BrErr *e);

/* The cell formats read by ranges of rows (io.h io_cell_rows_open):
 * what rows.c opens, text.c (text, mm) and libsvm.c scan and parse. */
struct IoCellRows {
    IoSrc src;
    bool lines;             /* libsvm: a row a line; else cells "i j v" */
    int64_t from, base;     /* where the data begin: byte, lines before */
    int64_t rows, cols, cells;
    IoRowIdx x;
    int64_t brows, bcols;   /* text, mm: the bounds (-1 unknown) ... */
    bool pattern;           /* ... mm pattern ... */
    const char *dimsrc;     /* ... and where the bounds come from */
    int64_t entries;        /* mm: the size line's count (-1: text) */
    char sep, ind;          /* libsvm separators */
    int sym;                /* mm: 1 symmetric, 2 skew-symmetric */
    int nb;                 /* cells not in row order: nb buckets of brow
                               rows, each a temporary file (open, already
                               unlinked) of bsize bytes; 0: in row order */
    int64_t brow;
    int *bfd;
    int64_t *bsize;
};
/* Makes c's buckets for the cells of bytes bytes (rows.c): c->nb stays
 * 0 when the temporary folder ($TMPDIR, else /tmp) lacks the room. */
int io_cell_buckets(IoCellRows *c, int64_t bytes, BrErr *e);
int io_text_rows_scan(IoCellRows *c, bool *sorted, BrErr *e);
MB *io_text_rows_block(IoCellRows *c, int64_t r0, int64_t r1, BrErr *e);
int io_libsvm_rows_scan(IoCellRows *c, const IoReadPlan *p, BrErr *e);
MB *io_libsvm_rows_block(IoCellRows *c, int64_t r0, int64_t r1, BrErr *e);

/* Splits p[0..n) into ranges that begin at line starts: (*starts)[0..k]
 * with (*starts)[0] = 0 and (*starts)[k] = n. chunk_bytes <= 0 picks the
 * default (about 1 MB or more per range, several per thread). Caller frees
 * *starts. Returns k (>= 1) or -1 when out of memory. */
int io_split(const char *p, size_t n, int64_t chunk_bytes, size_t **starts);

/* The first error of one parsed range, with the line number inside it. */
typedef struct IoRangeErr {
    int64_t lines;     /* lines the range consumed (complete when no error) */
    int64_t err_line;  /* 1-based line within the range; 0: no error */
    int code;
    char msg[256];
} IoRangeErr;

void io_range_fail(IoRangeErr *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Reports the earliest range error as "<path>: line N: <msg>", where N
 * counts base_line lines before the first range. Returns its code or 0. */
int io_range_report(const IoRangeErr *r, int k, const char *path,
                    int64_t base_line, BrErr *e);

/* A token of a line: [s, e). Quotes and surrounding spaces are not
 * stripped here. Writes the token into a short printable form for messages. */
void io_tok_show(const char *s, const char *e, char *out, size_t n);
/* Parses an unsigned 1-based index token: digits, or an integral number. */
bool io_parse_index(const char *s, const char *e, int64_t *out);

/* Checks that a rows x cols matrix with nnz non-zeros (-1: dense) as a
 * file declares it (MatrixMarket size line, .mtd) fits the local memory
 * budget before a reader allocates it, as rand() and the planner do: a
 * 56-byte file must not make read() zero 24 GB. */
int io_check_mem(const char *path, int64_t rows, int64_t cols, int64_t nnz, BrErr *e);
/* The same for a frame of rows x cols cells: always against the budget
 * (only matrices are compressed after a read past it, io_read_past_budget). */
int io_check_frame_mem(const char *path, int64_t rows, int64_t cols, BrErr *e);

/* Growable byte buffer. */
typedef struct IoStr {
    char *p;
    size_t n, cap;
} IoStr;

bool io_str_grow(IoStr *s, size_t extra);
static inline bool io_str_reserve(IoStr *s, size_t extra)
{
    return s->n + extra <= s->cap || io_str_grow(s, extra);
}
/* Appenders assume io_str_reserve() made room (32 bytes per number). */
static inline void io_str_putc(IoStr *s, char c) { s->p[s->n++] = c; }
static inline void io_str_putn(IoStr *s, const char *t, size_t n)
{
    memcpy(s->p + s->n, t, n);
    s->n += n;
}
void io_str_put_int(IoStr *s, int64_t v);
static inline void io_str_put_double(IoStr *s, double v)
{
    s->n += (size_t)io_fmt_double(v, s->p + s->n);
}
bool io_str_printf(IoStr *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void io_str_free(IoStr *s);

/* An output file written atomically: data goes to "<path>.tmp.<pid>.<n>"
 * in the same directory; close fsyncs it; commit renames it over path
 * (replacing a folder of part files there) and fsyncs the folder; abort
 * removes it. Open refuses targets io_check_target refuses. */
typedef struct IoOut {
    int fd;
    char *tmp;         /* temporary name (owned) */
    char *path;        /* final name (owned) */
    int sig;           /* the temporary's br_sig_path_add slot; 0: none */
} IoOut;

int io_out_open(IoOut *o, const char *path, BrErr *e);
int io_out_write(IoOut *o, const void *p, size_t n, BrErr *e);
/* Closes the temporary file (does not rename yet). */
int io_out_close(IoOut *o, BrErr *e);
/* Renames the closed temporary over the target; frees o's names. */
int io_out_commit(IoOut *o, BrErr *e);
/* Removes the temporary (open or closed) and frees o's names. */
void io_out_abort(IoOut *o);
/* o, made around a folder of parts (io_parts_begin's), takes over the
 * folder's registration for SIGTERM/SIGINT (base.h), ended with o. */
void io_out_adopt_sig(IoOut *o);

/* The folder of path (a new string; "." when path has no slash). */
char *io_dir_of(const char *path);
/* Refuses a target write() must not replace (commit.c): ".", "/", a
 * device, pipe or socket, a folder that is not part files with a .mtd. */
int io_check_target(const char *path, BrErr *e);
/* fsync of path's folder (makes renames in it durable). */
void io_sync_dir(const char *path);
/* Commits a data file and its .mtd (both open, complete) as one unit:
 * after a crash, recovery finds the old pair or the new one. Consumes
 * both. */
int io_commit_pair(IoOut *d, IoOut *md, BrErr *e);
/* Finishes or undoes what a killed writer left next to path. */
void io_recover(const char *path);

/* Formats rows [r0, r1) of m into out; false when out of memory. */
typedef bool (*IoRowFmt)(const MB *m, int64_t r0, int64_t r1, IoStr *out,
                         const void *ctx);
/* Writes all rows of m through fmt, formatting pieces of rows in parallel
 * and writing them in order. bytes_per_row estimates the output size. */
int io_write_rows(IoOut *o, const MB *m, double bytes_per_row,
                  int64_t chunk_bytes, IoRowFmt fmt, const void *ctx,
                  BrErr *e);

/* The .mtd of a matrix written as fmt with o's csv options. */
void io_matrix_meta(IoMeta *m, const char *fmt, int64_t rows, int64_t cols, int64_t nnz, const IoWriteOpts *o);
/* The .mtd JSON text for m (shared by io_write_mtd and io_write_matrix). */
bool io_mtd_text(const IoMeta *m, IoStr *out);
/* Finishes an open output d whose data is complete: writes "<path>.mtd"
 * for m to its own temporary, then renames the data and the .mtd into
 * place (both are complete on disk before either rename). On failure both
 * temporaries are removed. Consumes d either way. */
int io_commit_with_mtd(IoOut *d, const IoMeta *m, BrErr *e);

/* HDF5 (hdf5.c): dataset NULL means io_hdf5_default_dataset(); rows and
 * cols (-1: unknown) are checked against the dataset's shape. The write
 * fills o's temporary (io_out_open's) through the HDF5 library. */
MB *io_read_hdf5(const char *path, const char *dataset, int64_t rows, int64_t cols, BrErr *e);
int io_write_hdf5(IoOut *o, const MB *m, const char *dataset, BrErr *e);
const char *io_hdf5_default_dataset(void);

/* Format readers and writers (text.c, csv.c, binary.c, libsvm.c). Dimensions are -1
 * when unknown. */
MB *io_read_text(const char *path, int64_t rows, int64_t cols,
                 int64_t chunk_bytes, BrErr *e);
MB *io_read_mm(const char *path, int64_t rows, int64_t cols,
               int64_t chunk_bytes, BrErr *e);
MB *io_read_csv(const char *path, int64_t rows, int64_t cols,
                const IoCsvOpts *o, BrErr *e);
MB *io_read_binary(const char *path, int64_t rows, int64_t cols, BrErr *e);
/* SystemDS's binary-block files (Hadoop sequence files; sysbin.c): does
 * path (or a folder's first part file) start with "SEQ"? and the reader */
bool io_sysbin_detect(const char *path);
/* Hadoop sequence-file primitives (sysbin.c; sysframe.c reads with them
 * too): big-endian integers at p, and WritableUtils.readVLong at
 * p[*pos..n) (-1 when truncated: *pos is then past the first byte, if
 * there was one) */
static inline uint32_t io_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t io_be64(const uint8_t *p) { return (uint64_t)io_be32(p) << 32 | io_be32(p + 4); }
int io_hadoop_vlong(const uint8_t *p, size_t n, size_t *pos, int64_t *out);
/* the files of such a path: itself, or a folder's part files in name
 * order (names not starting with "." or "_"); NULL-terminated, malloc'd */
char **io_sysbin_files(const char *path, BrErr *e);
/* SystemDS's binary frame files (sysframe.c): the reader (rows/cols from
 * the .mtd, -1 when unknown) and the writer of f's rows [rl, ru) (on
 * the block grid) into o, with blen-row blocks (1000 when < 1) */
FB *io_read_sysframe(const char *path, int64_t rows, int64_t cols, BrErr *e);
int io_format_sysframe(const FB *f, int64_t blen, int64_t rl, int64_t ru, IoStr *o, const char *path, BrErr *e);
/* The part files of SystemDS's parallel binary writers: bytes (their
 * size estimate) / the local file system's block size (16 KiB), at
 * least 1, at most maxparts (the writer's threads). */
int64_t io_seq_parts(double bytes, int maxparts);
/* Opens part file idx ("0-m-00000", ...) of a folder io_parts_begin made. */
int io_parts_open(IoOut *d, const char *dir, int idx, BrErr *e);
MB *io_read_sysbin(const char *path, int64_t rows, int64_t cols, BrErr *e);
/* rows [r0, r1) of such a file or folder (io_read_binary_rows) */
MB *io_read_sysbin_rows(const char *path, int64_t r0, int64_t r1, int64_t *rows, int64_t *cols, BrErr *e);
/* Such a file or folder opened for several row ranges (IoBinRows): its
 * records parsed and checked once, the files kept mapped; *rows, *cols
 * the matrix's size (the .mtd's where there is one) */
typedef struct IoSysbin IoSysbin;
IoSysbin *io_sysbin_open(const char *path, int64_t *rows, int64_t *cols, BrErr *e);
MB *io_sysbin_rows(IoSysbin *h, int64_t r0, int64_t r1, BrErr *e);
void io_sysbin_close(IoSysbin *h);
/* writes m's rows [lo, hi) in SystemDS's layout with blen x blen blocks
 * (1000 when < 1), as rows row0+lo.. of a larger matrix (a part file;
 * row0+lo a multiple of blen); whole: the file is the whole matrix (one
 * without rows is one empty block; a part without rows has no blocks) */
int io_write_sysbin(IoOut *o, const MB *m, int64_t lo, int64_t hi, int64_t row0, int64_t blen, bool whole,
                    BrErr *e);

/* sep: the separator of a line's entries (NULL: " ", blanks always
 * separate too), ind_sep: of an entry's index and value (NULL: ":"), as
 * SystemDS's read/write options sep and indSep; single characters. */
MB *io_read_libsvm(const char *path, int64_t rows, int64_t cols, const char *sep,
                   const char *ind_sep, int64_t chunk_bytes, BrErr *e);

int io_write_text(IoOut *o, const MB *m, bool mm, int64_t chunk_bytes,
                  BrErr *e);
/* text lines of m as rows row0+1.. (a part file of a larger matrix) */
int io_write_text_at(IoOut *o, const MB *m, int64_t row0, BrErr *e);
/* The Matrix Market header of a rows x cols matrix with nnz entries. */
int io_write_mm_head(IoOut *o, int64_t rows, int64_t cols, int64_t nnz, BrErr *e);
int io_write_csv(IoOut *o, const MB *m, bool header, const char *sep,
                 int64_t chunk_bytes, BrErr *e);
int io_write_libsvm(IoOut *o, const MB *m, const char *sep, const char *ind_sep,
                    int64_t chunk_bytes, BrErr *e);
int io_write_binary(IoOut *o, const MB *m, BrErr *e);

#endif
