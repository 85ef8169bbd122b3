/* io.h: braid's file formats. The only io header other modules include.
 *
 * Every data file F has a JSON sidecar F.mtd describing it (data and value
 * type, dimensions, nnz, format, and for csv the header flag and separator).
 * Matrix formats:
 *   text    lines "i j v", 1-based, zeros omitted, any order (last wins)
 *   mm      Matrix Market: coordinate (real/integer/pattern; general,
 *           symmetric, skew-symmetric) and array (general, symmetric)
 *   csv     dense rows; header line, separator, fill of empty fields,
 *           naStrings read as NaN
 *   binary  SystemDS's binary-block layout (Hadoop sequence files of
 *           MatrixIndexes / MatrixBlock; sysbin.c), a file or a folder
 *           of part files
 *   braid-binary  braid's own: a small header, then raw dense row-major
 *           doubles or the CSR arrays, or a compressed block
 *   hdf5    HDF5 files (the HDF5 library; hdf5.c): one numeric dataset
 *           named by dataset= ("systemdsh5" by default), d0 x d1 x ...
 *           read as d0 rows and d1 d2 ... columns; a file name ending in
 *           ".h5" reads as hdf5 without a format or .mtd
 * Reads of text, mm and csv parse byte ranges of the file in parallel.
 * Writes are atomic: a temporary file next to the target, renamed over it;
 * the .mtd is written the same way right after the data.
 * Every failure is a BrErr whose message names the file, and for bad
 * content the line and the reason. Nothing here keeps global state.
 */
#ifndef BRAID_IO_H
#define BRAID_IO_H

#include "../base/base.h"
#include "../matrix/fb.h"
#include "../matrix/mb.h"

/* Metadata of a data file (the .mtd sidecar). Strings are "" when unknown,
 * numbers -1 when unknown. */
typedef struct IoMeta {
    char data_type[16];   /* "matrix", "scalar", "frame" */
    char value_type[16];  /* "double", "int", "boolean", "string" */
    int64_t rows, cols, nnz;
    char format[16];      /* "text", "mm", "csv", "binary", "libsvm",
                             "braid-binary", "hdf5" */
    int header;           /* csv: -1 unset, 0 or 1 */
    char sep[8];          /* csv / libsvm separator, valid when has_sep */
    bool has_sep;
    char ind_sep[8];      /* libsvm index:value separator ("indSep") */
    bool has_ind_sep;
    int64_t cbytes;       /* braid-binary: a compressed block's bytes in
                             memory ("compressed_bytes"; braid's), -1 unknown */
    int64_t blocksize;    /* binary (SystemDS's): rows and columns of its
                             blocks ("blocksize"), -1 unknown */
} IoMeta;

/* Sets every field of m to "unknown". */
void io_meta_init(IoMeta *m);

/* Reads "<path>.mtd" for the data file path. A missing .mtd is not an
 * error: *found becomes false and m stays "unknown". Malformed JSON or
 * fields of the wrong type are errors naming the .mtd file and the reason.
 * Returns 0 or an error code. */
int io_read_mtd(const char *path, IoMeta *m, bool *found, BrErr *e);

/* Writes "<path>.mtd" atomically: data_type, value_type, rows, cols, nnz
 * (those known), format, header and sep (csv), sep and indSep (libsvm
 * with other than the default separators), author and creation time. */
int io_write_mtd(const char *path, const IoMeta *m, BrErr *e);

/* Lists on disk, in SystemDS's layout (ListWriter / ListReader):
 * write(L, "p") writes "p.mtd" = {"data_type": "list", "value_type":
 * "unknown", "rows": n, "cols": 1, "format": fmt, ...} and makes folder p
 * with item i (from 0) as "p/<i>_<name>" ("null" for an unnamed item),
 * each with its own .mtd (lists nest).
 * - io_write_list_mtd writes p.mtd, creates p and removes the .mtd files
 *   an earlier write left in p (the reader counts them).
 * - io_list_item_path returns the malloc'd "p/<i>_<name|null>", or NULL
 *   with an error for a name that cannot be a file name ('/', NUL).
 * - io_list_items reads the folder for the n items meta->rows announces:
 *   paths[i] and names[i] (malloc'd; names[i] NULL for "null"). It also
 *   reads braid's earlier layout (items "p/1" .. "p/n", the names in
 *   p.mtd's "names" array). A folder that does not match (an item .mtd
 *   not named <index>_<name>, an index out of range or repeated, a missing
 *   item) is an error naming the file and the reason.
 * All return 0 or an error code; io_list_items_free frees the arrays. */
int io_write_list_mtd(const char *path, int64_t n, const char *format, BrErr *e);
char *io_list_item_path(const char *path, int64_t i, const char *name, BrErr *e);
int io_list_items(const char *path, const IoMeta *meta, int64_t *n, char ***paths, char ***names,
                  BrErr *e);
void io_list_items_free(int64_t n, char **paths, char **names);

/* The arguments a script gave to read(). Initialise with io_read_opts_init;
 * fields left at their initial value count as "not given". */
typedef struct IoReadOpts {
    const char *format;       /* NULL: from the .mtd, else guessed */
    int64_t rows, cols;       /* -1: not given */
    int header;               /* -1: not given (csv default FALSE) */
    const char *sep;          /* NULL: not given (csv default ",", libsvm " ") */
    const char *ind_sep;      /* libsvm index:value separator, NULL: ":" */
    int fill;                 /* -1: not given (csv default TRUE) */
    double fill_value;        /* used when has_fill_value (default 0) */
    bool has_fill_value;
    const char *const *na_strings; /* csv fields read as NaN */
    int n_na;
    int64_t chunk_bytes;      /* parallel parse range size; 0: default */
    const char *dataset;      /* hdf5: the dataset, NULL: "systemdsh5" */
} IoReadOpts;

void io_read_opts_init(IoReadOpts *o);

/* Reads a matrix file. The .mtd (if present) supplies what o does not give;
 * given arguments that disagree with the .mtd are an error naming both.
 * Without a format from either, the file is read as text, or as mm when it
 * starts with "%%MatrixMarket". A directory is read as the concatenation of
 * its part files (names not starting with '.' or '_', in name order).
 * Returns a new block (caller releases; format chosen by mb_examine), or
 * NULL with e set. */
MB *io_read_matrix(const char *path, const IoReadOpts *o, BrErr *e);

/* Lets this thread's reads (on) hold a matrix larger than the local
 * memory budget, up to the machine's memory, or not (off, the default):
 * the caller compresses what it reads and checks the compressed block
 * against the budget (runtime/cla_rt.c, docs/cla.md "Larger than the
 * budget"). Returns the previous setting. */
bool io_read_past_budget(bool on);

/* Rows [r0, r1) (clipped to the matrix) of a binary matrix file (a
 * distributed read: each rank its rows); *rows, *cols receive the whole
 * matrix's size. braid's own layout: positioned reads of just the rows'
 * bytes; SystemDS's (a file or folder starting "SEQ"): every record's
 * header is checked, only the blocks holding the rows are decoded. The
 * header is checked as by io_read_matrix. NULL with e set on an error. */
MB *io_read_binary_rows(const char *path, int64_t r0, int64_t r1, int64_t *rows, int64_t *cols, BrErr *e);
/* The same for several row ranges of one file (a read by blocks, the
 * compile-time estimate's samples): SystemDS's layout is parsed once at
 * open, not once per range; braid's reads just the rows' bytes each
 * time. open: *rows, *cols the matrix's size; NULL with e set. */
typedef struct IoBinRows IoBinRows;
IoBinRows *io_binary_rows_open(const char *path, int64_t *rows, int64_t *cols, BrErr *e);
MB *io_binary_rows_read(IoBinRows *h, int64_t r0, int64_t r1, BrErr *e);
/* whether the file holds a compressed block (braid's layout; its ranges
 * are decompressed from the whole block) */
bool io_binary_rows_cmb(const IoBinRows *h);
void io_binary_rows_close(IoBinRows *h);

/* Format names: "binary" and "sysds-binary" are SystemDS's binary-block
 * layout, "braid-binary" braid's own; a read of any of the three takes
 * either layout (SystemDS's starts with "SEQ"). */
bool io_fmt_sysbin(const char *fmt);
bool io_fmt_anybin(const char *fmt);

/* The arguments a script gave to write(). */
typedef struct IoWriteOpts {
    const char *format;       /* NULL: "text" */
    bool header;              /* csv: write "C1,C2,..." first */
    const char *sep;          /* csv: NULL means ","; libsvm: NULL means " " */
    const char *ind_sep;      /* libsvm index:value separator, NULL: ":" */
    int64_t chunk_bytes;      /* parallel format piece size; 0: default */
    int64_t blocksize;        /* binary: SystemDS's block side
                                 (sysds.defaultblocksize); 0: 1000 */
    int parts;                /* binary: at most this many part files (the
                                 writer's threads, as SystemDS's parallel
                                 writer); 0 or 1: one file */
    const char *dataset;      /* hdf5: the dataset, NULL: "systemdsh5" */
} IoWriteOpts;

void io_write_opts_init(IoWriteOpts *o);

/* Writes m to path in the given format, then path.mtd, both atomically.
 * "binary" (and its alias "sysds-binary") is SystemDS's binary-block
 * layout with o->blocksize blocks and the block size in the .mtd; a
 * matrix of several block rows whose blocks exceed 16 KiB per part is
 * written as a folder of at most o->parts part files ("0-m-00000", ...),
 * split by block rows as SystemDS's parallel writer splits them.
 * "braid-binary" is braid's own layout (the only one that keeps a
 * compressed block compressed). Both read back with format "binary". 
 * The parent directory must exist. A directory at path (SystemDS's part
 * files) is replaced if it holds only files. Returns 0 or an error code. */
int io_write_matrix(const char *path, const MB *m, const IoWriteOpts *o,
                    BrErr *e);

/* Scalars: the data file holds just the value text (no newline); the .mtd
 * says data_type "scalar" and the value type. */
int io_write_scalar_str(const char *path, const char *text,
                        const char *value_type, BrErr *e);
/* Reads a scalar file into buf (NUL-terminated; an error if it does not
 * fit). meta (may be NULL) receives the .mtd, if any. Trailing whitespace
 * is dropped unless the .mtd says value_type "string"; a string is its
 * lines joined by \n without the last line end, as SystemDS reads it. */
int io_read_scalar(const char *path, char *buf, size_t n, IoMeta *meta,
                   BrErr *e);
/* Like io_read_scalar but returns a malloc'd string the caller frees; vt
 * (NULL: the .mtd's) is the value type the text is read as. */
char *io_read_scalar_dup(const char *path, IoMeta *meta, const char *vt, BrErr *e);

/* Number text helpers shared with the rest of braid.
 * io_parse_double parses [s, end) fully (decimal, exponent, NaN, Inf,
 * Infinity, with sign), independent of the locale; false if it is not a
 * number. io_fmt_double writes the shortest text that reads back to the
 * same double, laid out as Java's Double.toString ("3.0", "0.1",
 * "1.0E-5", "NaN", "Infinity", "-Infinity"; zero as "0"), into buf (at
 * least 32 bytes) and returns its length. */
bool io_parse_double(const char *s, const char *end, double *out);
int io_fmt_double(double x, char *buf);

/* Frames (io/frame.c): csv (header, separator, quoted strings, naStrings
 * read as missing values) and text ("i j value" lines); the .mtd adds
 * "schema" (value types joined by commas). Arguments of read() for a
 * frame; initialise with io_frame_read_opts_init (unset: -1 / NULL). */
typedef struct IoFrameReadOpts {
    const char *format;       /* NULL: from the .mtd, else "csv" */
    int64_t rows, cols;       /* -1: not given */
    int header;               /* -1: not given (.mtd, else FALSE) */
    const char *sep;          /* NULL: .mtd, else "," */
    const char *schema;       /* NULL: .mtd, else all strings */
    const char *const *na_strings; /* csv fields read as missing values */
    int n_na;
} IoFrameReadOpts;

void io_frame_read_opts_init(IoFrameReadOpts *o);
/* Reads a frame file (a directory of part files is concatenated). Returns
 * a new frame (caller releases) or NULL with e set; messages name the file
 * and, for bad content, the line. */
FB *io_read_frame(const char *path, const IoFrameReadOpts *o, BrErr *e);
/* Writes f as o->format ("csv", "text", "binary"/"sysds-binary": SystemDS's
 * FrameBlock sequence file with o->blocksize-row records, "braid-binary":
 * braid's own; NULL: "text") and path.mtd, both atomically. Returns 0 or
 * an error code. */
int io_write_frame(const char *path, const FB *f, const IoWriteOpts *o, BrErr *e);

/* ---- distributed reads and writes (dist/: every rank its share) ---- */

/* What read() of path means after merging the .mtd with the script's
 * arguments, checked as io_read_matrix checks them: the format, the
 * sizes (-1 unknown), the .mtd's nnz (-1) and, for csv, the options. */
typedef struct IoCsvOpts {
    bool header;
    const char *sep;
    bool fill;
    double fill_value;
    const char *const *na;
    int n_na;
    int64_t chunk_bytes;
} IoCsvOpts;
typedef struct IoReadPlan {
    char format[16];
    int64_t rows, cols, nnz;
    IoMeta meta;          /* the .mtd (its sep backs csv.sep) */
    IoCsvOpts csv;
    /* libsvm separators: the read's options, else the .mtd's "sep" and
     * "indSep" (SystemDS merges a .mtd's keys into the read), else NULL
     * (the defaults " " and ":"); point into the options or meta */
    const char *lsep, *lind;
} IoReadPlan;
int io_read_plan(const char *path, const IoReadOpts *o, IoReadPlan *p, BrErr *e);
/* A csv file (or folder of part files) read by ranges of rows (a read
 * larger than the budget compressed as it is read, docs/cla.md):
 * io_csv_rows_open scans the data once (its data lines counted, the
 * offset of every g-th kept, g doubled past 65536 entries) and checks
 * what the whole read checks first (rows against p->rows; columns from
 * p->cols, else the first data line's, else the header's); *rows, *cols
 * receive the size. io_csv_rows parses rows [r0, r1) (clipped) as a
 * dense block (caller releases); every line it reads is checked as by
 * the whole read, and an error names the file and the line; when rows
 * before r0 were not read yet, the first bad line before it is named
 * instead (the whole read names the file's first). NULL with e set on
 * an error. */
typedef struct IoCsvRows IoCsvRows;
IoCsvRows *io_csv_rows_open(const char *path, const IoReadPlan *p, int64_t *rows, int64_t *cols, BrErr *e);
MB *io_csv_rows(IoCsvRows *c, int64_t r0, int64_t r1, BrErr *e);
void io_csv_rows_close(IoCsvRows *c);
/* Tests only: the index of later io_csv_rows_open's holds at most max
 * entries (2 to 65536; out of range: the default, 65536). */
void io_test_csv_index(int64_t max);

/* A text, mm or libsvm file (or folder of part files) read by ranges of
 * rows, as IoCsvRows (docs/cla.md "Compressed as it is read").
 * io_cell_rows_open scans the data once, parsing and checking every line
 * as the whole read does (so its errors are the whole read's: the file's
 * first bad line, then the sizes), and indexes where rows begin. A libsvm
 * row is a line. Cells of text and mm come in any order: while they come
 * in row order (*sorted) the index gives a range's bytes; after the first
 * cell of an earlier row than one before (and always for mm's symmetric
 * and skew-symmetric files, whose mirrored cells land in other rows), a
 * second pass writes the cells (24 bytes each) into buckets of rows,
 * temporary files in $TMPDIR (else /tmp; unlinked at once), and a range
 * reads its buckets. NULL with e->code 0 when the temporary folder lacks
 * the room, and for mm's array layout: the caller reads those whole.
 * *rows, *cols receive the size and *cells the cells (text, mm; twice
 * for symmetric) or entries and labels (libsvm) the file holds.
 * io_cell_rows parses rows [r0, r1) (clipped) into a block (caller
 * releases). io_test_cell_buckets: tests only, bytes a bucket holds
 * (0: the default, 4 MB; at most 256 buckets). */
typedef struct IoCellRows IoCellRows;
IoCellRows *io_cell_rows_open(const char *path, const IoReadPlan *p, int64_t *rows, int64_t *cols, int64_t *cells,
                              bool *sorted, BrErr *e);
MB *io_cell_rows(IoCellRows *c, int64_t r0, int64_t r1, BrErr *e);
void io_cell_rows_close(IoCellRows *c);
void io_test_cell_buckets(int64_t bytes);

/* Bytes of the data (a file, or the sum of a folder's part files). */
int64_t io_data_bytes(const char *path);
/* Bytes a read of a rows x cols matrix with nnz non-zeros (-1:
 * unknown) needs, the reader's work arrays included: what a read checks
 * against the local memory budget. */
double io_read_need(int64_t rows, int64_t cols, int64_t nnz);

/* Share k of n of a csv or text file (or a folder of part files read as
 * their concatenation): the lines that begin in bytes [k*T/n,
 * (k+1)*T/n) of its T bytes, so the shares hold every line exactly once
 * whatever the line lengths. Every line ends in '\n'. */
typedef struct IoShare {
    char *p;
    size_t n;
    int64_t lines;   /* lines in the share */
    bool first;      /* it begins at the start of the data */
} IoShare;
int io_share_load(const char *path, int k, int n, IoShare *s, BrErr *e);
/* The same over the bytes from byte from on (an mm file's entries). */
int io_share_load_from(const char *path, int64_t from, int k, int n, IoShare *s, BrErr *e);
/* The same, only the lines that begin in the share's first cap bytes
 * (cap < 0: all): a sample of the file at share k (runtime/cla_rt.c's
 * compile-time estimate of a read's compressed size). */
int io_share_load_cap(const char *path, int64_t from, int k, int n, int64_t cap, IoShare *s, BrErr *e);
void io_share_free(IoShare *s);
/* csv: the fields of the share's first data line (-1: none) and, for
 * the first share with a header, of the header (-1 otherwise). */
void io_csv_share_cols(const IoShare *s, const IoCsvOpts *o, int64_t *data, int64_t *header);
/* csv: the share's data lines as a dense cols-column block; errors
 * name path and the line, counting base_line lines before the share. */
MB *io_csv_share_parse(const char *path, const IoShare *s, int64_t cols, const IoCsvOpts *o, int64_t base_line,
                       BrErr *e);
/* libsvm: the largest feature index of the share's lines (0: none), and
 * its lines as a cols-column CSR block (label in the last column); errors
 * name path and the line, counting base_line lines before the share. */
int64_t io_libsvm_share_maxidx(const IoShare *s);
MB *io_libsvm_share_parse(const char *path, const IoShare *s, int64_t cols, int64_t base_line, BrErr *e);
/* text ("i j v"): the share's cells, 0-based, in file order; maxr, maxc
 * the largest 1-based indexes seen. rows/cols (-1: unknown) bound them. */
typedef struct IoTriples {
    int64_t *r;
    int32_t *c;
    double *v;
    int64_t n, maxr, maxc;
} IoTriples;
int io_text_share_parse(const char *path, const IoShare *s, int64_t rows, int64_t cols, int64_t base_line,
                        IoTriples *t, BrErr *e);
void io_triples_free(IoTriples *t);
/* Matrix Market files by shares: io_mm_head reads the header
 * (a prefix of the file; rows/cols, -1 unknown, checked against the size
 * line): the entries begin at byte off after lines lines; entries is
 * the count the size line promises (io_mm_count_check: the local
 * reader's error when the file holds another). io_mm_share_parse: the
 * share's entries as cells (pattern entries 1), not yet mirrored. */
typedef struct IoMmHead {
    bool coord, pattern;
    int sym;                       /* 0 general, 1 symmetric, 2 skew-symmetric */
    int64_t rows, cols, entries;
    int64_t off, lines;
} IoMmHead;
int io_mm_head(const char *path, int64_t rows, int64_t cols, IoMmHead *h, BrErr *e);
int io_mm_share_parse(const char *path, const IoShare *s, const IoMmHead *h, int64_t base_line, IoTriples *out,
                      BrErr *e);
int io_mm_count_check(const char *path, int64_t want, int64_t found, BrErr *e);
/* The array layout by shares: io_mm_share_parse gives the share's values
 * (rows and columns 0); they are the file's entries first, first + 1,
 * ... in column-major order (a symmetric file's lower triangle, a
 * skew-symmetric one's without the diagonal), which this turns into
 * their cells (zeros dropped; a symmetric file's still to be mirrored). */
void io_mm_array_cells(const IoMmHead *h, int64_t first, IoTriples *t);
/* A rows x cols block of cells (later duplicates win). */
MB *io_triples_block(const char *path, const IoTriples *t, int64_t rows, int64_t cols, BrErr *e);

/* Parallel writes as a folder of part files with one .mtd: rank 0 makes
 * a temporary folder next to path (io_parts_begin: its name, malloc'd),
 * every rank writes its rows (the first at row0) as part file idx in it
 * (io_parts_write; csv: the header only when asked, for part 0; mm:
 * the header of the whole matrix, whole[] = rows, cols, non-zeros, in
 * part 0, so the parts read as one file), and
 * rank 0 commits folder and .mtd as one unit over path
 * (io_parts_commit), or removes the folder (io_parts_abort). Formats:
 * csv, text, binary (SystemDS's layout, part files "0-m-NNNNN"), braid-binary, mm,
 * libsvm (io_parts_format). The folder reads back with
 * io_read_matrix. */
bool io_parts_format(const char *fmt);
char *io_parts_begin(const char *path, BrErr *e);
int io_parts_write(const char *dir, int idx, const MB *m, int64_t row0, const int64_t whole[3], const IoWriteOpts *o,
                   BrErr *e);
/* SystemDS's binary-block part file idx ("0-m-%05d") of m's rows [lo, hi)
 * (lo on the o->blocksize grid) */
int io_parts_write_rows(const char *dir, int idx, const MB *m, int64_t lo, int64_t hi, const IoWriteOpts *o, BrErr *e);
int io_parts_commit(const char *dir, const char *path, int64_t rows, int64_t cols, int64_t nnz,
                    const IoWriteOpts *o, BrErr *e);
void io_parts_abort(const char *dir);

/* Tests only: the process exits (status 77) at step 1..5 of the next
 * commit of a data file and its .mtd (docs/durability.md). */
void io_test_crash_at(int step);
/* How many times recovery has read a folder (a folder known to hold no
 * leftovers since its last change is not read again; commit.c). */
long io_recover_scans(void);

#endif
