/* fb.h: frame blocks, braid's in-memory frames (DML's `frame` data type).
 *
 * A frame is a table of rows x cols cells with one value type per column:
 *   FB_STRING  char * per cell, NULL for a missing value
 *   FB_FP64    double (missing: NaN)
 *   FB_INT64   int64_t (missing reads as 0)
 *   FB_BOOL    uint8_t 0/1 (missing reads as FALSE)
 * and a name per column (default "C1", "C2", ...). Columns are stored
 * column-wise in FbCol arrays that are reference counted on their own, so
 * column selections and cbind share them instead of copying; a column with
 * refs > 1 is immutable (fb_col_mut copies it first).
 *
 * Frames are reference counted like matrix blocks (fb_retain/fb_release);
 * a frame with refs > 1 is immutable. Every function returning FB * gives
 * the caller a new reference (refs 1), or NULL with e set.
 *
 * `mv` holds optional per-column metadata of transform outputs: the value
 * that replaces missing values (transformencode's "impute"), as SystemDS
 * keeps it in a frame's column metadata rather than in its cells. `nd`
 * is the other field of SystemDS's ColumnMetadata, the distinct count:
 * transformencode's meta frame sets it (recode: the number of distinct
 * values; bin: the number of bins), binary frames carry it and csv / text
 * frames carry it in their "#Meta·ND" lines / row -1 cells.
 */
#ifndef BRAID_FB_H
#define BRAID_FB_H

#include "../base/base.h"
#include "mb.h"

typedef enum { FB_STRING, FB_FP64, FB_INT64, FB_BOOL } FbType;

typedef struct FbCol {
    int refs;              /* frames sharing this column */
    FbType type;
    int64_t n;             /* number of cells (the frame's rows) */
    union {
        char **s;          /* FB_STRING: malloc'd strings or NULL */
        double *d;         /* FB_FP64 */
        int64_t *i;        /* FB_INT64 */
        uint8_t *b;        /* FB_BOOL */
    };
} FbCol;

typedef struct FB {
    int refs;
    int64_t rows, cols;
    FbCol **c;             /* cols columns (each holds rows cells) */
    char **names;          /* cols names, owned, never NULL */
    bool named;            /* names given (else the defaults "C1".."Cn",
                              which slices and binds renumber, as SystemDS) */
    char **mv;             /* NULL, or cols entries (NULL: none), owned */
    int64_t *nd;           /* NULL, or cols distinct counts (-1: unknown) */
} FB;

/* SystemDS's names of the value types: "STRING", "FP64", "INT64",
 * "BOOLEAN". */
const char *fb_type_name(FbType t);
/* Parses a value type name, case-insensitive: string/str, fp64/fp32/double,
 * int64/int32/int/integer, boolean/bool. false if unknown. */
bool fb_type_parse(const char *s, size_t n, FbType *t);

/* A new frame of rows x cols with types[j] per column (types NULL: all
 * strings); cells are missing / 0 / FALSE, names "C1".."Cn". */
FB *fb_new(int64_t rows, int64_t cols, const FbType *types, BrErr *e);
FB *fb_retain(FB *f);
void fb_release(FB *f);                 /* NULL is fine */
/* Column j ready for writing in place: f must be unshared (refs 1); a
 * shared column is replaced by a private copy. NULL with e set when out of
 * memory. */
FbCol *fb_col_mut(FB *f, int64_t j, BrErr *e);
/* Replaces the name of column j (copied); the frame becomes named. */
int fb_set_name(FB *f, int64_t j, const char *name, BrErr *e);
/* Sets the missing-value replacement of column j (copied; NULL clears). */
int fb_set_mv(FB *f, int64_t j, const char *mv, BrErr *e);
/* Sets the distinct count of column j; nd <= 0 means unknown (-1), as
 * SystemDS's ColumnMetadata.setNumDistinct. fb_nd reads it (-1 unknown).
 * fb_meta_default: no column has a replacement or a distinct count. */
int fb_set_nd(FB *f, int64_t j, int64_t nd, BrErr *e);
/* The prefixes of SystemDS's ColumnMetadata lines in csv frames
 * (TfUtils.TXMTD_MVPREFIX / TXMTD_NDPREFIX: "#Meta", U+00B7, MV / ND). */
#define FB_META_MV "#Meta\xc2\xb7MV"
#define FB_META_ND "#Meta\xc2\xb7ND"
int64_t fb_nd(const FB *f, int64_t j);
bool fb_meta_default(const FB *f);
/* Index of the column named name, or -1. */
int64_t fb_find(const FB *f, const char *name);

/* Cells. fb_is_missing: a NULL string, or NaN in an FP64 column.
 * fb_get_num: the number in cell (i, j) (booleans 0/1, strings parsed,
 * missing strings NaN); *ok false for a string that is not a number. */
bool fb_is_missing(const FB *f, int64_t i, int64_t j);
double fb_get_num(const FB *f, int64_t i, int64_t j, bool *ok);
/* Writes text s[0..n) into cell (i, j) of an unshared frame, parsed by the
 * column's type (s NULL: a missing value). A string that does not parse
 * as the column's type is an error naming the value and the column. */
int fb_set_text(FB *f, int64_t i, int64_t j, const char *s, size_t n, BrErr *e);
/* Writes number v into cell (i, j) of an unshared frame (strings get its
 * shortest round-trip text; NaN into a string column: missing). */
int fb_set_num(FB *f, int64_t i, int64_t j, double v, BrErr *e);
/* Text of a cell into buf (at least 32 bytes) for non-string columns, or
 * the string itself; NULL for a missing string. Numbers use the shortest
 * round-trip text ("3", "0.5"), booleans "true"/"false". */
const char *fb_cell_text(const FB *f, int64_t i, int64_t j, char *buf);
/* Parses [s, s+n) fully as a number (decimal, exponent, NaN, Inf,
 * Infinity, signs); false if it is not one. */
bool fb_parse_num(const char *s, size_t n, double *out);

/* Reorganizations. Ranges are 0-based half-open and must lie inside f;
 * whole-column selections share columns. Default names are renumbered
 * (F[, 2:3] is named C1 C2); given names are kept, and a cbind with any
 * named input keeps every input's names. fb_cbind needs equal row counts
 * and fb_rbind equal column counts (else an error containing "dimension");
 * rbind keeps the first frame's names and gives a column of differing
 * types the most general one (BOOLEAN < INT64 < FP64 < STRING). */
FB *fb_slice(const FB *f, int64_t rl, int64_t ru, int64_t cl, int64_t cu, BrErr *e);
FB *fb_cbind(int n, const FB *const *fs, BrErr *e);
FB *fb_rbind(int n, const FB *const *fs, BrErr *e);
/* A copy of t whose block [rl, ru) x [cl, cu) holds src (same shape, else
 * an error containing "dimension"); values convert to t's column types. */
FB *fb_lix(const FB *t, int64_t rl, int64_t ru, int64_t cl, int64_t cu, const FB *src, BrErr *e);
/* A frame with the same cells converted to types[0..cols). */
FB *fb_cast(const FB *f, const FbType *types, BrErr *e);

/* Matrix conversions: fb_from_mb gives an all-FP64 frame; fb_to_mb parses
 * every cell as a number (a NULL or empty string becomes NaN, as
 * SystemDS's FrameBlock.getDoubleNaN); a string that is not a number is an
 * error naming it. */
FB *fb_from_mb(const MB *m, BrErr *e);
MB *fb_to_mb(const FB *f, BrErr *e);

#endif
