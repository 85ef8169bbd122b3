/* cmb.h: compressed matrix blocks (compressed linear algebra, after
 * Elgohary et al., PVLDB 9(12) 2016; docs/cla.md).
 *
 * A compressed block is an MB whose `cmb` field is set: rows, cols and nnz
 * are exact, d/rp/ci/v are NULL and sparse is false. Its columns are
 * partitioned into column groups; each group stores a dictionary of the
 * distinct value tuples of its columns (ndict tuples of ncols values,
 * tuple-major) and, per encoding, which rows hold which tuple:
 *
 *   CLA_EMPTY  every cell zero (no dictionary)
 *   CLA_CONST  every row holds tuple 0
 *   CLA_DDC1/2 dense dictionary coding: one 1- or 2-byte code per row
 *              (the all-zero tuple, when it occurs, is a dictionary entry)
 *   CLA_OLE    offset lists: per tuple, its rows as 16-bit offsets in
 *              segments of CLA_SEG rows: for each segment a count, then the
 *              offsets (every tuple has every segment's count)
 *   CLA_RLE    run lengths: per tuple, (gap, length) pairs of 16-bit
 *              numbers; a run starts gap rows after the previous run's end
 *              (the first after row 0); longer gaps/runs are split
 *   CLA_UNC    an ordinary rows x ncols block of the group's columns
 *
 * OLE and RLE store only the non-zero tuples: rows in no list are zero.
 * counts[t] is the number of rows holding tuple t (all encodings but UNC).
 * The row structures (codes, lists) live in a reference counted ClaIndex
 * so that groups made from a group by an operation over its dictionary
 * (X * 2, X[, 3:4]) share them; groups themselves are reference counted so
 * that blocks share unchanged groups. A compressed block is immutable.
 *
 * Operators that do not know compressed blocks never see one: the
 * interpreter decompresses their inputs (runtime/interp.c, docs/cla.md).
 * Row access for operators goes through ClaIter: the tuple index of each
 * row of a row range, group by group.
 */
#ifndef BRAID_CMB_H
#define BRAID_CMB_H

#include "mb.h"

typedef enum { CLA_EMPTY, CLA_CONST, CLA_DDC1, CLA_DDC2, CLA_OLE, CLA_RLE, CLA_UNC } ClaEnc;

#define CLA_SEG 65535   /* rows per OLE segment (a count fits 16 bits) */
#define CLA_U16 65535   /* the largest RLE gap or run length */

typedef struct ClaIndex {
    int refs;
    uint8_t *c1;        /* DDC1 codes (rows) */
    uint16_t *c2;       /* DDC2 codes (rows) */
    int64_t *ptr;       /* OLE/RLE: ndict+1 starts into data */
    uint16_t *data;     /* OLE segments / RLE pairs */
} ClaIndex;

typedef struct ClaGroup {
    int refs;
    ClaEnc enc;
    int ncols;
    int32_t *cols;      /* the block's columns, ascending */
    int32_t ndict;
    double *dict;       /* ndict * ncols, tuple-major */
    int64_t *counts;    /* ndict: rows holding each tuple */
    ClaIndex *ix;       /* DDC/OLE/RLE */
    MB *unc;            /* CLA_UNC: rows x ncols */
} ClaGroup;

struct CMB {
    int ngroups;
    ClaGroup **groups;  /* owned references */
    /* the decompressed values kept for operators that read them again
     * (runtime/cla_rt.c cla_rt_decompressed): owned, set once
     * (atomically); ndec counts the decompressions before it */
    struct MB *dec;
    int ndec;
};

static inline bool mb_is_cmb(const MB *m) { return m && m->cmb; }
static inline const char *cla_enc_name(ClaEnc k)
{
    static const char *n[] = {"EMPTY", "CONST", "DDC1", "DDC2", "OLE", "RLE", "UNC"};
    return n[k];
}

/* Groups and indexes. cla_group_new: a zeroed group with room for ncols
 * columns and ndict tuples (dict and counts allocated, zeroed; ix NULL). */
ClaGroup *cla_group_new(ClaEnc enc, int ncols, int32_t ndict);
ClaGroup *cla_group_retain(ClaGroup *g);
void cla_group_release(ClaGroup *g);
ClaIndex *cla_index_new(void);
ClaIndex *cla_index_retain(ClaIndex *x);
void cla_index_release(ClaIndex *x);
/* Bytes of a group (dictionary, counts, columns, its index, the UNC block). */
size_t cla_group_bytes(const ClaGroup *g, int64_t rows);
/* Non-zero cells of a group over rows rows. */
int64_t cla_group_nnz(const ClaGroup *g, int64_t rows);

/* A compressed block of rows x cols over groups[0..n) (takes the
 * references; the groups must partition the columns). NULL with e set. */
MB *cmb_new(int64_t rows, int64_t cols, ClaGroup **groups, int n, BrErr *e);
void cmb_free(struct CMB *c);
size_t cmb_bytes(const MB *m);

/* The ordinary block of a compressed block (dense or sparse by the rule),
 * decompressed in parallel over row ranges. Rows [rl, ru) only: _rows. */
MB *cmb_decompress(const MB *m, BrErr *e);
MB *cmb_decompress_rows(const MB *m, int64_t rl, int64_t ru, BrErr *e);

/* Row iteration over one group: codes[i - rl] = tuple of row i, or -1 for
 * a zero row (OLE/RLE/EMPTY), for consecutive row ranges from a start.
 * UNC groups have no codes (use g->unc). */
typedef struct ClaIter {
    const ClaGroup *g;
    int64_t row;        /* next row to produce */
    int64_t *pos;       /* per tuple: next index into data */
    int64_t *aux;       /* OLE: rows left in the current segment;
                           RLE: end of the current run */
    int64_t *cur;       /* OLE: current segment; RLE: start of the run */
} ClaIter;

/* Starts at row rl; false when out of memory. */
bool cla_iter_init(ClaIter *it, const ClaGroup *g, int64_t rl);
/* Codes of the next n rows. */
void cla_iter_next(ClaIter *it, int64_t n, int32_t *codes);
/* OLE/RLE: the rows of tuple t among the next n as
 * offsets from it->row into rows[], their number returned; call it for
 * every tuple, then cla_iter_skip(it, n). O(rows of t), not O(n). */
int64_t cla_iter_rows(ClaIter *it, int32_t t, int64_t n, int32_t *rows);
/* OLE, the rows of tuple t among the next n used in place (as
 * cla_iter_rows, without the row list): the sum of v[offset] over them
 * (four partial sums by list position), and o[offset] += x. */
double cla_iter_sum1(ClaIter *it, int32_t t, int64_t n, const double *v);
void cla_iter_add1(ClaIter *it, int32_t t, int64_t n, double x, double *o);
/* RLE: the next run of tuple t among the next n rows as offsets [*a, *b)
 * from it->row, false when none is left there (a whole run, not its rows:
 * a sorted column's runs cover every row). */
bool cla_iter_run(ClaIter *it, int32_t t, int64_t n, int64_t *a, int64_t *b);
static inline void cla_iter_skip(ClaIter *it, int64_t n) { it->row += n; }
void cla_iter_free(ClaIter *it);

/* Sequential reading of consecutive rows as dense row-major values from
 * row rl on (the Row skeleton over a compressed main input): each read
 * fills n x cols values of out (zeros included) and moves on. Open gives
 * NULL when out of memory. One reader per thread. */
typedef struct ClaRows ClaRows;
ClaRows *cla_rows_open(const MB *m, int64_t rl);
void cla_rows_read(ClaRows *r, int64_t n, double *out);
/* The reads of r end at or before row ru (until the next call): a hint
 * that keeps the windows of thin list groups (cmb.c cursor_windows) from
 * decoding rows past it; reads past it stay correct. */
void cla_rows_bound(ClaRows *r, int64_t ru);
void cla_rows_close(ClaRows *r);

/* A window of decompressed rows over a compressed block, for skeletons
 * that read rows one at a time in increasing order (fused Cell and Outer
 * operators over compressed inputs): cla_win_row gives row i's dense
 * values (cols of them, valid until the next call), decompressing the
 * next block of rows [i, min(i + cap, lim)) when i is outside the block
 * held (a jump forward or back reopens the reader). One window per
 * thread; init gives false when out of memory (win then needs no free). */
typedef struct ClaWin {
    const MB *m;
    ClaRows *rd;
    double *buf;
    int64_t cap;        /* rows per block */
    int64_t lo, hi;     /* rows held */
} ClaWin;
bool cla_win_init(ClaWin *w, const MB *m, int64_t cap);
const double *cla_win_row(ClaWin *w, int64_t i, int64_t lim);
void cla_win_free(ClaWin *w);
/* Does a compressed block hold NaN or Inf (dictionaries, UNC groups)? */
bool cmb_has_nonfinite(const MB *m);

/* switch (k) over the widths 2 to 8, each a copy of the loop macro M
 * with a constant bound (M(2) ... M(8); other k: M(k)), so that the
 * compiler unrolls and vectorizes the per-row loops of small widths. */
#define CLA_WIDTHS(k, M)                                                       \
    switch (k) {                                                               \
    case 2: M(2) break;                                                        \
    case 3: M(3) break;                                                        \
    case 4: M(4) break;                                                        \
    case 5: M(5) break;                                                        \
    case 6: M(6) break;                                                        \
    case 7: M(7) break;                                                        \
    case 8: M(8) break;                                                        \
    default: M(k) break;                                                       \
    }

/* Rows per block of row-wise compressed operations (codes fit in L1). */
#define CLA_BLK 2048

#endif
