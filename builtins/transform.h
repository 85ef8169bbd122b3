/* transform.h: SystemDS's frame transformations (transformencode,
 * transformapply, transformdecode) driven by a JSON specification:
 *
 *   {"ids": false,                        column names (true: 1-based ids)
 *    "recode": ["a", "b"],                 token -> code 1..k
 *    "dummycode": ["b"],                   one-hot over the codes (implies
 *                                          recode unless the column is binned)
 *    "hash": ["h"], "K": 10,                feature hashing into K buckets
 *    "bin": [{"name": "c", "method": "equi-width" | "equi-height",
 *             "numbins": 3}],
 *    "impute": [{"name": "d", "method": "global_mean" | "global_mode" |
 *                "constant", "value": ...}],
 *    "omit": ["e"],                        drop rows with missing values
 *    "bag_of_words": ["t"]}                one column per token of t's
 *                                          dictionary: the token's count
 *
 * bag_of_words (SystemDS's ColumnEncoderBagOfWords): a cell's tokens are
 * its maximal runs of letters (Java's Character.isLetter over UTF-16
 * units, base/junicode.h), lower-cased; the dictionary codes them 1..n in
 * order of first appearance; tokens the dictionary lacks (transformapply)
 * are left out. One first-level encoder per column: bag_of_words cannot
 * be combined with recode, dummycode, hash or bin on its column, and is
 * not decoded. The encoded matrix is built sparse with such a column.
 *
 * Other columns pass through as numbers. Missing values are NULL or empty
 * strings and NaN. Recode codes follow the order of first appearance (as
 * SystemDS without SORT_RECODE_MAP); tokens of numeric columns are their
 * Java texts ("1.0", "true"). Unknown tokens at apply time give NaN (a row
 * of zeros when dummycoded). Equi-width binning (SystemDS): bin
 * ceil((x - min) / (max - min) n) clamped to 1..n (values outside
 * [min, max] go to the outer bins; 1 when max = min). Equi-height: over
 * the sorted values v_1..v_N bin i ends at v_pos for pos = N i / n when
 * integer, else at v_(floor(pos)+1), the last at v_N; a value goes to the
 * first bin whose end is >= it (the last above all). Feature hashing
 * (SystemDS): code = |h| % K + 1 with h Java's hashCode of the cell's
 * value type (String.hashCode of the text, Double/Long.hashCode, 1/0 for
 * booleans), NaN for a missing string; dummycoded into K columns; the
 * metadata holds K in row 1 of the column.
 *
 * The metadata frame M has one STRING column per input column (same
 * names): a recoded (or bag_of_words) column holds "token·code" per
 * token, in the iteration order of the Java HashMap SystemDS keeps them in
 * (kernels/jhashset.h: a new HashMap<>() for recode, new HashMap<>(0) for
 * bag_of_words), a binned one "binMin·binMax" per bin; '·' is U+00B7 (SystemDS's
 * Lop.DATATYPE_PREFIX). Imputation values live in M's column metadata
 * (FB.mv), as SystemDS keeps them. M has as many rows as its longest
 * column.
 *
 * Decoding maps codes back to tokens (recode, dummycode: the column with
 * the largest value of a group; none non-zero: missing), binned codes to
 * the bin centre, pass-through columns to FP64; recoded columns come back
 * as STRING.
 */
#ifndef BRAID_TRANSFORM_H
#define BRAID_TRANSFORM_H

#include "../matrix/fb.h"
#include "../matrix/mb.h"

/* A spec's "udf": {name: f, ids: [...]}: the DML function f applied to
 * each listed column's encoded columns (start, width: 0-based output
 * columns, n of them), as SystemDS's ColumnEncoderUDF does after the
 * other encoders. The caller (builtins/frame.c, which can call DML
 * functions) applies it; tf_udf_free releases it. */
typedef struct TfUdf {
    char *name;            /* NULL: no udf */
    int64_t n;
    int64_t *start, *width;
} TfUdf;
void tf_udf_free(TfUdf *u);

/* transformencode(target=F, spec): builds the metadata and encodes F.
 * On success *X (matrix) and *M (metadata frame) are new references the
 * caller releases, and *udf (may be NULL) the spec's udf. Spec and data
 * errors return non-zero with e set. */
int tf_encode(const FB *f, const char *spec, MB **x, FB **m, TfUdf *udf, BrErr *e);
/* transformapply(target=F, spec, meta=M, embedding=E): encodes F with
 * existing metadata. A "word_embedding" column becomes ncol(E) columns,
 * the row of E at the token's code in M (zeros for a token M lacks; E may
 * be NULL without such columns). Returns a new matrix (caller releases)
 * or NULL with e set. */
MB *tf_apply(const FB *f, const char *spec, const FB *m, const MB *emb, TfUdf *udf, BrErr *e);
/* transformdecode(target=X, spec, meta=M): a new frame (caller releases)
 * with M's columns, or NULL with e set. Without dummy coding, X may have
 * more columns than M describes: its leading ones are decoded (SystemDS). */
FB *tf_decode(const MB *x, const char *spec, const FB *m, BrErr *e);
/* transformcolmap(target=M, spec): per input column one row [column,
 * first output column, last output column] (1-based). New matrix or NULL. */
MB *tf_colmap(const FB *m, const char *spec, BrErr *e);
/* getCategoricalMask(target=M, spec): SystemDS's 1 x (encoded columns)
 * mask, 1 for the output columns of recoded, hashed or dummycoded input
 * columns. A dummycoded column spans K when hashed, else its distinct
 * count as SystemDS's CategoricalMask takes it: a first metadata cell
 * "¿N", else M's distinct count (transformencode's, a .mtd's or "#Meta"
 * line's), 0 columns without one. Needs "ids": true; bin,
 * word_embedding, bag_of_words and udf are rejected, as in SystemDS. New
 * matrix or NULL with e set. */
MB *tf_catmask(const FB *m, const char *spec, BrErr *e);
/* transformmeta(spec, transformPath, sep): the metadata frame of a
 * file-based transform's metadata directory (builtins/tfmeta.c describes
 * the layout). New frame or NULL with e set (a missing or bad file named). */
FB *tf_meta(const char *spec, const char *path, const char *sep, BrErr *e);
/* spec with bare words quoted, as SystemDS's lenient JSON parser accepts
 * it ({ids: true, recode: [a]}). Caller frees; NULL when out of memory. */
char *tf_lenient_json(const char *spec);

#endif
