/* sysframe.c: SystemDS's binary-block frame files (format "binary"), read
 * and written; layout from SystemDS's Java (FrameBlock.write / readFields,
 * ColumnMetadata, the column Array classes, FrameWriterBinaryBlock /
 * FrameReaderBinaryBlock) and Hadoop's SequenceFile (sysbin.c has the
 * matrix files and the sequence-file frame):
 *
 *   header  "SEQ", version 6, key class org.apache.hadoop.io.LongWritable,
 *           value class ...frame.data.FrameBlock (org.apache.sysds, or the
 *           older ...matrix.data. / org.apache.sysml packages), two zero
 *           compression bytes, int32 metadata pairs (each two Texts), 16
 *           sync bytes; records int32 length, int32 key length (8), key,
 *           value; a length of -1 is a sync mark
 *   key     int64: the block's first row, from 1
 *   value   int32 rows, int32 cols, boolean default-meta; per column a
 *           byte type (ValueType ordinal + 1: 1 UINT4, 2 UINT8, 3 FP32,
 *           4 FP64, 5 INT32, 6 INT64, 7 BOOLEAN, 8 STRING, 9 UNKNOWN, 10
 *           HASH64, 11 HASH32, 12 CHARACTER; negative: the column holds no
 *           data); without default meta the column's name (writeUTF) and
 *           metadata (int64 distinct count, writeUTF missing-value
 *           replacement, "" for none); then, for a positive type and rows
 *           > 0, the column: a byte array kind and its data:
 *             0 STRING   int64 size estimate, rows writeUTF ("" is null)
 *             1 BOOLEAN  rows bytes       2 BITSET  int32 size, int32 n,
 *             3 INT32    rows int32                 n int64 words (bit i
 *             4 INT64    rows int64                 in word i>>6, bit i&63)
 *             5 FP32     rows float       6 FP64    rows double
 *             7 CHARACTER rows uint16 (UTF-16)
 *             9 OPTIONAL an array, then a BOOLEAN/BITSET array (TRUE:
 *                        present; absent cells are missing)
 *             8 RAGGED   int32 size (the rows), int32 n, an array of n
 *                        cells; the cells after them are missing
 *            10 DDC      a mapping of the rows to dictionary entries
 *                        (rd_ddc), a boolean, the dictionary array when
 *                        true, else it is in the .dict file beside
 *            11 HASH64   rows int64   12 HASH32  rows int32 (the cells:
 *                        their unsigned hex, Long/Integer.toHexString)
 *   All numbers big-endian (Java DataOutput); writeUTF is a uint16 byte
 *   count and Java's modified UTF-8 (NUL as C0 80, a character above
 *   U+FFFF as two 3-byte surrogates).
 *
 * .dict (FrameWriterBinaryBlock puts the dictionaries of DDC columns
 * there when the frame has at least sysds.defaultblocksize rows): a
 * sequence file of LongWritable keys (the column, from 0) and ArrayWrapper
 * values (int32 size, an array).
 *
 * Writing (as FrameWriterBinaryBlock's single file): a frame of at most
 * blen rows is one record with key 1, a longer one a record per blen rows
 * (keys 1, blen+1, ...); meta is default when every name is "Cj" and no
 * column has a missing-value replacement or distinct count, else each
 * record names the columns and carries their ColumnMetadata (distinct
 * count, replacement: FrameBlock.slice shares it with every block); FP64 columns as
 * FP64, INT64 as INT64, BOOLEAN as BOOLEAN up to 64 rows and BITSET above
 * (SystemDS's switch point), STRING as STRING with SystemDS's size
 * estimate (32 + 8 + per cell 24 for null, else 60 + 2 per UTF-16 unit).
 * Empty strings are written as SystemDS writes null and "" alike (its
 * StringArray writes writeUTF(""), reads "" as null, and cannot hold a
 * string array in an OPTIONAL), so "" reads back missing, as in
 * SystemDS. The sync bytes are a hash of the size (readers only compare
 * them with the header's). rl, ru: a part file's rows (io/frame.c writes
 * SystemDS's parallel writer's folder).
 *
 * Reading: value types map to braid's (UINT4/UINT8/INT32/INT64 -> INT64,
 * FP32/FP64 -> FP64, BOOLEAN, STRING/CHARACTER/UNKNOWN -> STRING); the
 * names and replacements come from the block of row 1; blocks without
 * rows or columns are skipped (SystemDS); the frame has the .mtd's rows
 * when given, else the blocks' extent. A folder is read as its part files
 * (SystemDS's parallel writer); path.dict, when there, gives the
 * dictionaries of DDC columns that do not hold their own. Every malformed input is an error naming
 * the file and the record's byte offset. */
#include "ioint.h"
#include "../base/jrng.h"

#include <math.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

enum { VT_UINT4 = 1, VT_UINT8, VT_FP32, VT_FP64, VT_INT32, VT_INT64, VT_BOOLEAN, VT_STRING, VT_UNKNOWN,
       VT_HASH64, VT_HASH32, VT_CHARACTER };
enum { AT_STRING, AT_BOOLEAN, AT_BITSET, AT_INT32, AT_INT64, AT_FP32, AT_FP64, AT_CHARACTER, AT_RAGGED,
       AT_OPTIONAL, AT_DDC, AT_HASH64, AT_HASH32 };

#define KEY_CLASS "org.apache.hadoop.io.LongWritable"
#define VALUE_CLASS "org.apache.sysds.runtime.frame.data.FrameBlock"

/* ---- reading ---- */

typedef struct Rd {
    const char *path;
    const uint8_t *p;
    size_t n, pos;
    size_t rec;            /* offset of the record being read, for errors */
    BrErr *e;
    const struct FrDicts *dicts;   /* the .dict file's dictionaries (NULL: none) */
} Rd;

/* One dictionary of a .dict file: column col's Array of size cells at
 * p[0..n) (its kind byte first), from file path at record offset off. */
typedef struct FrDict {
    int64_t col;
    int32_t size;
    const uint8_t *p;
    size_t n, off;
} FrDict;

typedef struct FrDicts {
    const char *path;
    FrDict *d;
    size_t n, cap;
} FrDicts;

static int rd_fail(Rd *r, const char *what)
{
    return br_err(r->e, BR_EIO, "%s: not a SystemDS binary frame file: %s at byte %zu", r->path, what, r->rec);
}

static bool rd_has(const Rd *r, size_t k) { return r->n - r->pos >= k; }

static int rd_u8(Rd *r, uint8_t *v)
{
    if (!rd_has(r, 1)) return rd_fail(r, "truncated");
    *v = r->p[r->pos++];
    return 0;
}

static int rd_u32(Rd *r, uint32_t *v)
{
    if (!rd_has(r, 4)) return rd_fail(r, "truncated");
    *v = io_be32(r->p + r->pos);
    r->pos += 4;
    return 0;
}

static int rd_u64(Rd *r, uint64_t *v)
{
    uint32_t hi, lo;
    if (rd_u32(r, &hi) || rd_u32(r, &lo)) return -1;
    *v = (uint64_t)hi << 32 | lo;
    return 0;
}

/* Hadoop's vint (the header's Text lengths) */
static int rd_vint(Rd *r, int64_t *out)
{
    return io_hadoop_vlong(r->p, r->n, &r->pos, out) ? rd_fail(r, "truncated") : 0;
}

static int rd_text_is(Rd *r, const char *const *accept, const char *what)
{
    int64_t len;
    if (rd_vint(r, &len)) return -1;
    if (len < 0 || !rd_has(r, (size_t)len)) return rd_fail(r, "truncated header");
    const uint8_t *s = r->p + r->pos;
    r->pos += (size_t)len;
    for (; accept && *accept; accept++)
        if (strlen(*accept) == (size_t)len && !memcmp(s, *accept, (size_t)len)) return 0;
    return accept ? rd_fail(r, what) : 0;
}

/* Appends code point c as UTF-8 to d (room for 4 bytes). */
static size_t utf8_put(uint8_t *d, uint32_t c)
{
    if (c < 0x80) { d[0] = (uint8_t)c; return 1; }
    if (c < 0x800) { d[0] = (uint8_t)(0xc0 | c >> 6); d[1] = (uint8_t)(0x80 | (c & 0x3f)); return 2; }
    if (c < 0x10000) {
        d[0] = (uint8_t)(0xe0 | c >> 12);
        d[1] = (uint8_t)(0x80 | (c >> 6 & 0x3f));
        d[2] = (uint8_t)(0x80 | (c & 0x3f));
        return 3;
    }
    d[0] = (uint8_t)(0xf0 | c >> 18);
    d[1] = (uint8_t)(0x80 | (c >> 12 & 0x3f));
    d[2] = (uint8_t)(0x80 | (c >> 6 & 0x3f));
    d[3] = (uint8_t)(0x80 | (c & 0x3f));
    return 4;
}

/* UTF-16 units u[0..n) as malloc'd UTF-8 (surrogate pairs joined; a lone
 * surrogate kept as its 3-byte form); NULL when out of memory. */
static char *utf16_to_utf8(const uint16_t *u, size_t n)
{
    uint8_t *d = malloc(4 * n + 1), *q = d;
    if (!d) return NULL;
    for (size_t i = 0; i < n; i++) {
        uint32_t c = u[i];
        if (c >= 0xd800 && c < 0xdc00 && i + 1 < n && u[i + 1] >= 0xdc00 && u[i + 1] < 0xe000)
            c = 0x10000 + ((c - 0xd800) << 10) + (u[++i] - 0xdc00);
        q += utf8_put(q, c);
    }
    *q = 0;
    return (char *)d;
}

/* readUTF: *s malloc'd UTF-8, NULL for "" (SystemDS's null) */
static int rd_utf(Rd *r, char **s)
{
    *s = NULL;
    if (!rd_has(r, 2)) return rd_fail(r, "truncated string");
    size_t len = (size_t)r->p[r->pos] << 8 | r->p[r->pos + 1];
    r->pos += 2;
    if (!rd_has(r, len)) return rd_fail(r, "truncated string");
    const uint8_t *b = r->p + r->pos;
    r->pos += len;
    if (!len) return 0;
    uint16_t *u = malloc(len * sizeof *u);
    if (!u) return br_err(r->e, BR_ENOMEM, "%s: out of memory", r->path);
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        uint8_t c = b[i];
        if (c < 0x80) { u[n++] = c; i++; }
        else if ((c & 0xe0) == 0xc0 && i + 1 < len && (b[i + 1] & 0xc0) == 0x80) {
            u[n++] = (uint16_t)((c & 0x1f) << 6 | (b[i + 1] & 0x3f));
            i += 2;
        } else if ((c & 0xf0) == 0xe0 && i + 2 < len && (b[i + 1] & 0xc0) == 0x80 && (b[i + 2] & 0xc0) == 0x80) {
            u[n++] = (uint16_t)((c & 0x0f) << 12 | (b[i + 1] & 0x3f) << 6 | (b[i + 2] & 0x3f));
            i += 3;
        } else {
            free(u);
            return rd_fail(r, "malformed modified UTF-8 string");
        }
    }
    for (size_t i = 0; i < n; i++)
        if (!u[i]) {   /* braid's strings end at NUL */
            free(u);
            return rd_fail(r, "string holding a NUL character");
        }
    *s = utf16_to_utf8(u, n);
    free(u);
    return *s ? 0 : br_err(r->e, BR_ENOMEM, "%s: out of memory", r->path);
}

static FbType braid_type(int vt)
{
    switch (vt) {
    case VT_FP32: case VT_FP64: return FB_FP64;
    case VT_UINT4: case VT_UINT8: case VT_INT32: case VT_INT64: return FB_INT64;
    case VT_BOOLEAN: return FB_BOOL;
    default: return FB_STRING;
    }
}

/* Puts number v (or a missing cell) into cell i of column c. */
static void put_num(FbCol *c, int64_t i, double v, int64_t iv, bool isint)
{
    switch (c->type) {
    case FB_FP64: c->d[i] = isint ? (double)iv : v; break;
    case FB_INT64: c->i[i] = isint ? iv : java_d2l(v); break;   /* Java's (long) */
    case FB_BOOL: c->b[i] = isint ? iv != 0 : v != 0; break;
    case FB_STRING: break;   /* set by the caller as text */
    }
}

/* Makes cell i of column c missing (SystemDS's null). */
static void set_missing(FbCol *c, int64_t i)
{
    if (c->type == FB_STRING) { free(c->s[i]); c->s[i] = NULL; }
    else if (c->type == FB_FP64) c->d[i] = NAN;
    else put_num(c, i, 0, 0, true);
}

enum { IN_OPTIONAL = 1, IN_RAGGED = 2, IN_DDC = 4 };   /* rd_array's depth: the arrays around it */

static int rd_ddc(Rd *r, FB *f, int64_t j, int64_t r0, int32_t rows, int depth);

/* Reads one column array of rows cells into column j of f at row r0 (f
 * NULL: only checks and skips it). present: when not NULL, receives the
 * cells' presence (an OPTIONAL's flags). depth: IN_* of the arrays that
 * hold this one (each kind nests at most once). */
static int rd_array(Rd *r, FB *f, int64_t j, int64_t r0, int32_t rows, uint8_t *present, int depth)
{
    uint8_t at = 0xff;
    if (rd_u8(r, &at)) return -1;
    FbCol *col = f ? f->c[j] : NULL;
    char buf[48];
    switch (at) {
    case AT_STRING: {
        uint64_t size;
        if (rd_u64(r, &size)) return -1;
        for (int32_t i = 0; i < rows; i++) {
            char *s;
            if (rd_utf(r, &s)) return -1;
            if (f && s && fb_set_text(f, r0 + i, j, s, strlen(s), r->e)) { free(s); return -1; }
            free(s);
        }
        return 0;
    }
    case AT_BOOLEAN: case AT_INT32: case AT_INT64: case AT_FP32: case AT_FP64: case AT_CHARACTER: case AT_HASH64:
    case AT_HASH32: {
        size_t w = at == AT_BOOLEAN ? 1 : at == AT_CHARACTER ? 2 : at == AT_INT64 || at == AT_FP64 || at == AT_HASH64 ? 8 : 4;
        if (!rd_has(r, (size_t)rows * w)) return rd_fail(r, "truncated column");
        for (int32_t i = 0; i < rows; i++) {
            uint32_t u32 = 0;
            uint64_t u64 = 0;
            uint8_t u8 = 0;
            if (w == 1) rd_u8(r, &u8);
            else if (w == 8) rd_u64(r, &u64);
            else if (w == 4) rd_u32(r, &u32);
            else {
                u32 = (uint32_t)r->p[r->pos] << 8 | r->p[r->pos + 1];
                r->pos += 2;
            }
            if (!f) continue;
            if (present) { present[i] = u8 != 0; continue; }
            double d = 0;
            int64_t iv = 0;
            bool isint = true;
            if (at == AT_BOOLEAN) iv = u8 != 0;
            else if (at == AT_INT32) iv = (int32_t)u32;
            else if (at == AT_INT64 || at == AT_HASH64) iv = (int64_t)u64;
            else if (at == AT_HASH32) iv = u32;   /* unsigned: Integer.toHexString */
            else if (at == AT_FP32) { float x; memcpy(&x, &u32, 4); d = x; isint = false; }
            else if (at == AT_FP64) { memcpy(&d, &u64, 8); isint = false; }
            if (col->type != FB_STRING) { put_num(col, r0 + i, d, iv, isint); continue; }
            if (at == AT_CHARACTER) {
                uint16_t ch = (uint16_t)u32;
                char *s = utf16_to_utf8(&ch, 1);
                int rc = s ? fb_set_text(f, r0 + i, j, s, strlen(s), r->e) : br_err(r->e, BR_ENOMEM, "out of memory");
                free(s);
                if (rc) return -1;
                continue;
            }
            if (at == AT_HASH64 || at == AT_HASH32) snprintf(buf, sizeof buf, "%llx", (unsigned long long)iv);
            else if (at == AT_BOOLEAN) snprintf(buf, sizeof buf, "%s", iv ? "true" : "false");
            else if (isint) snprintf(buf, sizeof buf, "%lld", (long long)iv);
            else io_fmt_double(d, buf);
            if (fb_set_text(f, r0 + i, j, buf, strlen(buf), r->e)) return -1;
        }
        return 0;
    }
    case AT_BITSET: {
        uint32_t size, nw;
        if (rd_u32(r, &size) || rd_u32(r, &nw)) return -1;
        if ((int32_t)size < rows || (uint64_t)nw * 64 < (uint64_t)rows) return rd_fail(r, "bit set shorter than the block");
        if (!rd_has(r, (size_t)nw * 8)) return rd_fail(r, "truncated column");
        const uint8_t *words = r->p + r->pos;
        r->pos += (size_t)nw * 8;
        if (!f) return 0;
        for (int32_t i = 0; i < rows; i++) {
            const uint8_t *q = words + (size_t)(i >> 6) * 8;
            bool bit = q[7 - (i & 63) / 8] >> (i & 7) & 1;
            if (present) present[i] = bit;
            else if (col->type != FB_STRING) put_num(col, r0 + i, 0, bit, true);
            else if (fb_set_text(f, r0 + i, j, bit ? "true" : "false", bit ? 4 : 5, r->e)) return -1;
        }
        return 0;
    }
    case AT_OPTIONAL: {
        if (depth & IN_OPTIONAL || present) return rd_fail(r, "nested optional column");
        depth |= IN_OPTIONAL;
        size_t start = r->pos;
        if (rd_array(r, NULL, j, r0, rows, NULL, depth)) return -1;   /* skip the values to reach the flags */
        uint8_t *flags = f ? malloc((size_t)rows + 1) : NULL;
        if (f && !flags) return br_err(r->e, BR_ENOMEM, "%s: out of memory", r->path);
        uint8_t kind = r->pos < r->n ? r->p[r->pos] : 0xff;
        int rc = kind == AT_BOOLEAN || kind == AT_BITSET ? rd_array(r, f, j, r0, rows, flags, depth)
                                                         : rd_fail(r, "optional column without boolean flags");
        size_t end = r->pos;
        if (!rc && f) {
            r->pos = start;
            rc = rd_array(r, f, j, r0, rows, NULL, depth);
            r->pos = end;
            for (int32_t i = 0; !rc && i < rows; i++)
                if (!flags[i]) set_missing(col, r0 + i);
        }
        free(flags);
        return rc;
    }
    case AT_RAGGED: {
        /* RaggedArray: int32 size (the block's rows), int32 n, an array
         * of n cells; the cells from n on are null */
        uint32_t m, n;
        if (depth & IN_RAGGED || present) return rd_fail(r, "nested ragged column");
        if (rd_u32(r, &m) || rd_u32(r, &n)) return -1;
        if ((int32_t)m != rows) return rd_fail(r, "ragged column of another size than its block");
        if ((int32_t)n < 0 || (int32_t)n > rows) return rd_fail(r, "ragged column longer than its block");
        if (rd_array(r, f, j, r0, (int32_t)n, NULL, depth | IN_RAGGED)) return -1;
        for (int32_t i = (int32_t)n; f && i < rows; i++) set_missing(col, r0 + i);
        return 0;
    }
    case AT_DDC:
        if (depth & IN_DDC || present) return rd_fail(r, "nested dictionary column");
        return rd_ddc(r, f, j, r0, rows, depth | IN_DDC);
    default:
        return rd_fail(r, "unknown column kind");
    }
}

/* DDCArray's mapping kinds (MapToFactory.MAP_TYPE) */
enum { MAP_ZERO, MAP_BIT, MAP_UBYTE, MAP_BYTE, MAP_CHAR, MAP_CHAR_BYTE, MAP_INT };

/* Cell i's dictionary index in mapping m of kind k and len cells. */
static int64_t map_index(int k, const uint8_t *m, int32_t len, int32_t i)
{
    switch (k) {
    case MAP_ZERO: return 0;
    case MAP_BIT: return (int64_t)(io_be64(m + (size_t)(i >> 6) * 8) >> (i & 63) & 1);
    case MAP_UBYTE: return (int8_t)m[i];
    case MAP_BYTE: return m[i];
    case MAP_CHAR: return (int64_t)m[2 * (size_t)i] << 8 | m[2 * (size_t)i + 1];
    case MAP_CHAR_BYTE:
        return ((int64_t)m[2 * (size_t)i] << 8 | m[2 * (size_t)i + 1]) + (int64_t)(int8_t)m[2 * (size_t)len + i] * 65536;
    default: return (int32_t)io_be32(m + 4 * (size_t)i);
    }
}

/* A DDCArray: the mapping (a kind byte; ZERO: int32 size; BIT: int32
 * size, int32 n, n int64 words, bit i&63 of word i>>6; UBYTE (signed),
 * BYTE, CHAR (uint16), CHAR_BYTE (uint16 + byte << 16, the bytes after
 * all the chars), INT: int32 unique, int32 size, the cells), a boolean,
 * and when it is true the dictionary: an array of unique cells (ZERO
 * has 1, BIT 2). When false the dictionary is the .dict file's for
 * column j (SystemDS's writer moves them there). Each cell is its
 * dictionary entry. */
static int rd_ddc(Rd *r, FB *f, int64_t j, int64_t r0, int32_t rows, int depth)
{
    uint8_t kind = 0, has = 0;
    uint32_t unique = 1, len = 0, nw = 0;
    if (rd_u8(r, &kind)) return -1;
    if (kind > MAP_INT) return rd_fail(r, "unknown dictionary mapping kind");
    if (kind == MAP_ZERO) {
        if (rd_u32(r, &len)) return -1;
    } else if (kind == MAP_BIT) {
        if (rd_u32(r, &len) || rd_u32(r, &nw)) return -1;
        unique = 2;
    } else if (rd_u32(r, &unique) || rd_u32(r, &len)) {
        return -1;
    }
    if ((int32_t)len != rows) return rd_fail(r, "dictionary mapping of another size than its block");
    if (kind == MAP_BIT && (uint64_t)nw * 64 < len) return rd_fail(r, "bit mapping shorter than its size");
    size_t bytes = kind == MAP_BIT ? (size_t)nw * 8 : kind == MAP_ZERO ? 0
                 : (size_t)len * (kind == MAP_CHAR ? 2 : kind == MAP_CHAR_BYTE ? 3 : kind == MAP_INT ? 4 : 1);
    if (!rd_has(r, bytes)) return rd_fail(r, "truncated dictionary mapping");
    const uint8_t *m = r->p + r->pos;
    r->pos += bytes;
    if (rd_u8(r, &has)) return -1;
    Rd dr = {0}, *d = r;
    int32_t dsize = (int32_t)unique;
    if (!has) {   /* the .dict file's, the last one for column j */
        const FrDict *x = NULL;
        for (size_t k = r->dicts ? r->dicts->n : 0; k-- > 0 && !x;)
            if (r->dicts->d[k].col == j) x = &r->dicts->d[k];
        if (!x) return rd_fail(r, "dictionary column without its dictionary (no entry in the .dict file)");
        dr = (Rd){r->dicts->path, x->p, x->n, 0, x->off, r->e, NULL};
        d = &dr;
        dsize = x->size;
    } else if (dsize < 0) {
        return rd_fail(r, "negative dictionary size");
    }
    for (int32_t i = 0; i < rows; i++) {
        int64_t k = map_index(kind, m, rows, i);
        if (k < 0 || k >= dsize) return rd_fail(r, "dictionary index outside its dictionary");
    }
    if (!f) return has ? rd_array(d, NULL, 0, 0, dsize, NULL, depth) : 0;   /* a .dict entry is checked on loading */
    FbCol *col = f->c[j];
    FbType t = col->type;
    if (io_check_frame_mem(d->path, dsize, 1, r->e)) return -1;
    FB *dict = fb_new(dsize, 1, &t, r->e);
    if (!dict || !fb_col_mut(dict, 0, r->e) || rd_array(d, dict, 0, 0, dsize, NULL, depth)) {
        fb_release(dict);
        return -1;
    }
    const FbCol *dc = dict->c[0];
    int rc = 0;
    for (int32_t i = 0; !rc && i < rows; i++) {
        int64_t k = map_index(kind, m, rows, i), c = r0 + i;
        switch (t) {
        case FB_STRING:
            if (dc->s[k]) rc = fb_set_text(f, c, j, dc->s[k], strlen(dc->s[k]), r->e);
            else set_missing(col, c);
            break;
        case FB_FP64: col->d[c] = dc->d[k]; break;
        case FB_INT64: col->i[c] = dc->i[k]; break;
        case FB_BOOL: col->b[c] = dc->b[k]; break;
        }
    }
    fb_release(dict);
    return rc ? -1 : 0;
}

typedef struct FrRec {
    int64_t row;           /* first row, from 1 */
    int32_t rows, cols;
    bool dflt;
    const uint8_t *p;      /* the value: after the default-meta byte */
    size_t n;
    int file;
    size_t off;
} FrRec;

/* One value's columns: checks it (f NULL) or reads it into f (types
 * checked against f's; names and replacements when names is true). */
static int rd_value(Rd *r, const FrRec *b, FB *f, bool names, int8_t *types)
{
    for (int32_t j = 0; j < b->cols; j++) {
        uint8_t t = 0;
        if (rd_u8(r, &t)) return -1;
        int8_t ty = (int8_t)t;
        int vt = ty < 0 ? -ty : ty;
        if (vt < VT_UINT4 || vt > VT_CHARACTER) return rd_fail(r, "unknown value type");
        if (types) {
            if (types[j] && braid_type(types[j]) != braid_type(vt)) return rd_fail(r, "blocks disagree on a column's type");
            types[j] = (int8_t)vt;
        }
        if (!b->dflt) {
            char *nm, *mv;
            uint64_t distinct;
            if (rd_utf(r, &nm)) return -1;
            if (rd_u64(r, &distinct) || rd_utf(r, &mv)) { free(nm); return -1; }
            int rc = 0;
            if (f && names) {
                char dflt[32];
                snprintf(dflt, sizeof dflt, "C%lld", (long long)j + 1);
                if (nm && strcmp(nm, dflt)) rc = fb_set_name(f, j, nm, r->e);
                if (!rc && mv) rc = fb_set_mv(f, j, mv, r->e);
                if (!rc && (int64_t)distinct > 0) rc = fb_set_nd(f, j, (int64_t)distinct, r->e);
            }
            free(nm);
            free(mv);
            if (rc) return -1;
        }
        if (ty > 0 && b->rows > 0 && rd_array(r, f, j, b->row - 1, b->rows, NULL, 0)) return -1;
    }
    if (r->pos != r->n) return rd_fail(r, "record longer than its frame block");
    return 0;
}

/* A sequence file's header, its value class one of values; *sync: its
 * sync bytes. */
static int rd_header(Rd *r, const char *const *values, const char *what, const uint8_t **sync)
{
    static const char *const keys[] = {KEY_CLASS, NULL};
    r->rec = 0;
    if (!rd_has(r, 4) || memcmp(r->p, "SEQ", 3)) return rd_fail(r, "no SEQ magic");
    if (r->p[3] != 6) return rd_fail(r, "sequence file version other than 6");
    r->pos = 4;
    if (rd_text_is(r, keys, "the key class is not LongWritable") || rd_text_is(r, values, what)) return -1;
    if (!rd_has(r, 2)) return rd_fail(r, "truncated header");
    if (r->p[r->pos] || r->p[r->pos + 1]) return rd_fail(r, "compressed sequence file (SystemDS writes none)");
    r->pos += 2;
    uint32_t meta;
    if (rd_u32(r, &meta)) return -1;
    if ((int32_t)meta < 0) return rd_fail(r, "negative metadata count");
    for (int64_t i = 0; i < 2 * (int64_t)meta; i++)
        if (rd_text_is(r, NULL, NULL)) return -1;
    if (!rd_has(r, 16)) return rd_fail(r, "truncated header");
    *sync = r->p + r->pos;
    r->pos += 16;
    return 0;
}

/* The next record (sync marks skipped): *key read, r->pos at the value
 * and *end after it (at least minval bytes); *end 0 at the file's end. */
static int rd_next(Rd *r, const uint8_t *sync, size_t minval, uint64_t *key, size_t *end)
{
    while (r->pos < r->n) {
        r->rec = r->pos;
        uint32_t rl, kl;
        if (rd_u32(r, &rl)) return -1;
        if ((int32_t)rl == -1) {
            if (!rd_has(r, 16) || memcmp(r->p + r->pos, sync, 16)) return rd_fail(r, "bad sync mark");
            r->pos += 16;
            continue;
        }
        if (rd_u32(r, &kl)) return -1;
        if (kl != 8) return rd_fail(r, "key length other than 8 (LongWritable)");
        if ((int32_t)rl < (int32_t)(8 + minval) || !rd_has(r, rl)) return rd_fail(r, "truncated record");
        *end = r->pos + rl;
        rd_u64(r, key);
        return 0;
    }
    *end = 0;
    return 0;
}

/* Parses one sequence file's records into *recs (grown as needed). */
static int rd_file(Rd *r, int file, FrRec **recs, size_t *nr, size_t *cap)
{
    static const char *const values[] = {VALUE_CLASS, "org.apache.sysds.runtime.matrix.data.FrameBlock",
                                         "org.apache.sysml.runtime.matrix.data.FrameBlock", NULL};
    const uint8_t *sync;
    if (rd_header(r, values, "the value class is not FrameBlock", &sync)) return -1;
    uint64_t key;
    size_t end;
    int rc;
    while (!(rc = rd_next(r, sync, 9, &key, &end)) && end) {
        uint32_t rows = 0, cols = 0;
        uint8_t dflt = 0;
        rd_u32(r, &rows);
        rd_u32(r, &cols);
        rd_u8(r, &dflt);
        if ((int64_t)key < 1 || key > (uint64_t)INT32_MAX + 1) return rd_fail(r, "block row out of range");
        if ((int32_t)rows < 0 || (int32_t)cols < 0) return rd_fail(r, "negative block size");
        if (*nr == *cap) {
            size_t nc = *cap ? *cap * 2 : 8;
            FrRec *g = realloc(*recs, nc * sizeof *g);
            if (!g) return br_err(r->e, BR_ENOMEM, "%s: out of memory", r->path);
            *recs = g;
            *cap = nc;
        }
        FrRec b = {(int64_t)key, (int32_t)rows, (int32_t)cols, dflt != 0, r->p + r->pos, end - r->pos, file, r->rec};
        Rd v = {r->path, b.p, b.n, 0, b.off, r->e, r->dicts};
        if (rd_value(&v, &b, NULL, false, NULL)) return -1;   /* the whole record checked */
        (*recs)[(*nr)++] = b;
        r->pos = end;
    }
    return rc ? -1 : 0;
}

/* The .dict file SystemDS writes next to a frame with dictionary (DDC)
 * columns (FrameWriterBinaryBlock): a sequence file of LongWritable keys
 * (the column, from 0) and ArrayWrapper values (int32 size, an array of
 * that many cells); each entry checked and kept in *ds. */
static int rd_dicts(Rd *r, FrDicts *ds)
{
    static const char *const values[] = {"org.apache.sysds.runtime.frame.data.columns.ArrayWrapper", NULL};
    const uint8_t *sync;
    if (rd_header(r, values, "the value class is not ArrayWrapper", &sync)) return -1;
    uint64_t key;
    size_t end;
    int rc;
    while (!(rc = rd_next(r, sync, 5, &key, &end)) && end) {
        uint32_t size;
        rd_u32(r, &size);
        if (key > INT32_MAX) return rd_fail(r, "dictionary of a column out of range");
        if ((int32_t)size < 0) return rd_fail(r, "negative dictionary size");
        Rd v = {r->path, r->p + r->pos, end - r->pos, 0, r->rec, r->e, NULL};
        if (rd_array(&v, NULL, 0, 0, (int32_t)size, NULL, IN_DDC)) return -1;
        if (v.pos != v.n) return rd_fail(r, "record longer than its dictionary");
        if (ds->n == ds->cap) {
            size_t nc = ds->cap ? ds->cap * 2 : 4;
            FrDict *g = realloc(ds->d, nc * sizeof *g);
            if (!g) return br_err(r->e, BR_ENOMEM, "%s: out of memory", r->path);
            ds->d = g;
            ds->cap = nc;
        }
        ds->d[ds->n++] = (FrDict){(int64_t)key, (int32_t)size, v.p, v.n, r->rec};
        r->pos = end;
    }
    return rc ? -1 : 0;
}

FB *io_read_sysframe(const char *path, int64_t rows, int64_t cols, BrErr *e)
{
    char **files = io_sysbin_files(path, e);
    if (!files) return NULL;
    size_t nf = 0;
    while (files[nf]) nf++;
    IoBuf *bufs = calloc(nf ? nf : 1, sizeof *bufs);
    FrRec *recs = NULL;
    size_t nr = 0, cap = 0, loaded = 0;
    int8_t *types = NULL;
    FB *f = NULL;
    IoBuf dbuf = {0};
    FrDicts ds = {0}, *dp = NULL;
    size_t plen = strlen(path);
    char *dpath = malloc(plen + 6);
    if (!bufs || !dpath) { br_err(e, BR_ENOMEM, "%s: out of memory", path); goto out; }
    memcpy(dpath, path, plen);
    memcpy(dpath + plen, ".dict", 6);
    struct stat st;
    if (stat(dpath, &st) == 0 && S_ISREG(st.st_mode)) {   /* dictionaries of DDC columns */
        if (io_load(dpath, &dbuf, e)) goto out;
        Rd r = {dpath, (const uint8_t *)dbuf.p, dbuf.raw, 0, 0, e, NULL};
        if (rd_dicts(&r, &ds)) goto out;
        ds.path = dpath;
        dp = &ds;
    }
    for (; loaded < nf; loaded++) {
        if (io_load(files[loaded], &bufs[loaded], e)) goto out;
        Rd r = {files[loaded], (const uint8_t *)bufs[loaded].p, bufs[loaded].raw, 0, 0, e, dp};
        if (rd_file(&r, (int)loaded, &recs, &nr, &cap)) goto out;
    }
    /* the shape: columns of the blocks that have any, rows of the .mtd or
     * the blocks' extent */
    int64_t nc = -1, extent = 0;
    for (size_t k = 0; k < nr; k++) {
        if (!recs[k].cols) continue;
        if (nc >= 0 && recs[k].cols != nc) {
            br_err(e, BR_EIO, "%s: not a SystemDS binary frame file: blocks of %lld and %d columns", files[recs[k].file],
                   (long long)nc, recs[k].cols);
            goto out;
        }
        nc = recs[k].cols;
        if (recs[k].rows) extent = BR_MAX(extent, recs[k].row - 1 + recs[k].rows);
    }
    if (nc < 0) nc = cols >= 0 ? cols : 0;
    int64_t nrow = rows >= 0 ? rows : extent;
    if ((cols >= 0 && nc != cols) || extent > nrow) {
        br_err(e, BR_EDIM, "read %s: dimension mismatch: expected %lldx%lld, the blocks hold %lldx%lld", path,
               (long long)nrow, (long long)(cols >= 0 ? cols : nc), (long long)extent, (long long)nc);
        goto out;
    }
    /* a frame larger than the memory budget (a .mtd's or a block's rows)
     * is refused before anything is allocated, as the matrix readers do */
    if (io_check_frame_mem(path, nrow, BR_MAX(nc, 1), e)) goto out;
    types = calloc((size_t)nc + 1, 1);
    FbType *ft = calloc((size_t)nc + 1, sizeof *ft);
    if (!types || !ft) { free(ft); br_err(e, BR_ENOMEM, "%s: out of memory", path); goto out; }
    for (size_t k = 0; k < nr; k++) {
        if (!recs[k].cols) continue;
        Rd v = {files[recs[k].file], recs[k].p, recs[k].n, 0, recs[k].off, e, dp};
        if (rd_value(&v, &recs[k], NULL, false, types)) { free(ft); goto out; }
    }
    for (int64_t j = 0; j < nc; j++) ft[j] = braid_type(types[j] ? types[j] : VT_STRING);
    f = fb_new(nrow, nc, ft, e);
    free(ft);
    if (!f) goto out;
    for (int64_t j = 0; j < nc; j++)
        if (!fb_col_mut(f, j, e)) goto fail;
    for (size_t k = 0; k < nr; k++) {
        if (!recs[k].rows || !recs[k].cols) continue;   /* SystemDS skips empty blocks */
        Rd v = {files[recs[k].file], recs[k].p, recs[k].n, 0, recs[k].off, e, dp};
        if (rd_value(&v, &recs[k], f, recs[k].row == 1, NULL)) goto fail;
    }
    goto out;
fail:
    fb_release(f);
    f = NULL;
out:
    for (size_t k = 0; bufs && k < nf; k++) io_buf_free(&bufs[k]);   /* zeroed: unloaded ones too */
    free(bufs);
    free(recs);
    free(types);
    io_buf_free(&dbuf);
    free(ds.d);
    free(dpath);
    for (char **p = files; *p; p++) free(*p);
    free(files);
    return f;
}

/* ---- writing ---- */

static bool put_u32(IoStr *o, uint32_t v)
{
    char b[4] = {(char)(v >> 24), (char)(v >> 16), (char)(v >> 8), (char)v};
    if (!io_str_reserve(o, 4)) return false;
    io_str_putn(o, b, 4);
    return true;
}

static bool put_u64(IoStr *o, uint64_t v) { return put_u32(o, (uint32_t)(v >> 32)) && put_u32(o, (uint32_t)v); }

static bool put_u8(IoStr *o, uint8_t v)
{
    if (!io_str_reserve(o, 1)) return false;
    io_str_putc(o, (char)v);
    return true;
}

/* Decodes one UTF-8 character of s (an invalid byte as itself, Latin-1);
 * returns its length. */
static size_t utf8_next(const uint8_t *s, uint32_t *c)
{
    uint8_t b = s[0];
    if (b < 0x80) { *c = b; return 1; }
    int n = (b & 0xe0) == 0xc0 ? 2 : (b & 0xf0) == 0xe0 ? 3 : (b & 0xf8) == 0xf0 ? 4 : 0;
    uint32_t v = n == 2 ? b & 0x1fu : n == 3 ? b & 0x0fu : b & 0x07u;
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) { n = 0; break; }
        v = v << 6 | (s[i] & 0x3fu);
    }
    if (!n || v > 0x10ffff) { *c = b; return 1; }
    *c = v;
    return (size_t)n;
}

/* the number of UTF-16 units of s (Java's String.length) */
static int64_t utf16_len(const char *s)
{
    int64_t n = 0;
    for (const uint8_t *p = (const uint8_t *)s; *p;) {
        uint32_t c;
        p += utf8_next(p, &c);
        n += c >= 0x10000 ? 2 : 1;
    }
    return n;
}

/* writeUTF of s (NULL: ""); 1 when its encoding exceeds 65535 bytes */
static int put_utf(IoStr *o, const char *s)
{
    uint8_t tmp[6];
    size_t len = 0, at = o->n;
    if (!put_u8(o, 0) || !put_u8(o, 0)) return -1;
    for (const uint8_t *p = (const uint8_t *)(s ? s : ""); *p;) {
        uint32_t c;
        p += utf8_next(p, &c);
        size_t k;
        if (c >= 0x10000) {   /* two surrogates, each in 3 bytes */
            k = utf8_put(tmp, 0xd800 + ((c - 0x10000) >> 10));
            k += utf8_put(tmp + k, 0xdc00 + ((c - 0x10000) & 0x3ff));
        } else if (c == 0) {
            tmp[0] = 0xc0, tmp[1] = 0x80, k = 2;
        } else {
            k = utf8_put(tmp, c);
        }
        if (!io_str_reserve(o, k)) return -1;
        io_str_putn(o, (const char *)tmp, k);
        len += k;
    }
    if (len > 65535) return 1;
    o->p[at] = (char)(len >> 8);
    o->p[at + 1] = (char)len;
    return 0;
}

static bool default_meta(const FB *f)
{
    char dflt[32];
    for (int64_t j = 0; j < f->cols; j++) {
        snprintf(dflt, sizeof dflt, "C%lld", (long long)j + 1);
        if (strcmp(f->names[j], dflt)) return false;
    }
    return fb_meta_default(f);
}

/* One FrameBlock value of rows [r0, r0+n) of f. Returns 0, -1 (out of memory) or 1 (a string
 * too long for writeUTF; *bad its column). */
static int put_block(IoStr *o, const FB *f, int64_t r0, int64_t n, bool dflt, int64_t *bad)
{
    static const uint8_t vt[] = {[FB_STRING] = VT_STRING, [FB_FP64] = VT_FP64, [FB_INT64] = VT_INT64,
                                 [FB_BOOL] = VT_BOOLEAN};
    if (!put_u32(o, (uint32_t)n) || !put_u32(o, (uint32_t)f->cols) || !put_u8(o, dflt)) return -1;
    for (int64_t j = 0; j < f->cols; j++) {
        const FbCol *c = f->c[j];
        uint8_t t = vt[c->type];
        if (!put_u8(o, n > 0 ? t : (uint8_t)-(int8_t)t)) return -1;
        if (!dflt) {
            int rc = put_utf(o, f->names[j]);
            /* ColumnMetadata (distinct count, replacement) in every block:
               FrameBlock.slice shares the frame's column metadata */
            if (!rc && !put_u64(o, (uint64_t)fb_nd(f, j))) rc = -1;
            if (!rc) rc = put_utf(o, f->mv ? f->mv[j] : NULL);
            if (rc) { *bad = j; return rc; }
        }
        if (n <= 0) continue;
        bool ok = true;
        if (c->type == FB_FP64) {
            ok = put_u8(o, AT_FP64);
            for (int64_t i = r0; ok && i < r0 + n; i++) {
                uint64_t u;
                memcpy(&u, &c->d[i], 8);
                ok = put_u64(o, u);
            }
        } else if (c->type == FB_INT64) {
            ok = put_u8(o, AT_INT64);
            for (int64_t i = r0; ok && i < r0 + n; i++) ok = put_u64(o, (uint64_t)c->i[i]);
        } else if (c->type == FB_BOOL && n <= 64) {
            ok = put_u8(o, AT_BOOLEAN);
            for (int64_t i = r0; ok && i < r0 + n; i++) ok = put_u8(o, c->b[i] != 0);
        } else if (c->type == FB_BOOL) {
            int64_t nw = (n >> 6) + 1;
            ok = put_u8(o, AT_BITSET) && put_u32(o, (uint32_t)n) && put_u32(o, (uint32_t)nw);
            for (int64_t w = 0; ok && w < nw; w++) {
                uint64_t word = 0;
                for (int64_t i = w * 64; i < BR_MIN(n, w * 64 + 64); i++)
                    if (c->b[r0 + i]) word |= 1ull << (i & 63);
                ok = put_u64(o, word);
            }
        } else {
            int64_t size = 32 + 8;   /* Array's base cost and the cache field */
            for (int64_t i = r0; i < r0 + n; i++)
                size += c->s[i] ? 60 + 2 * utf16_len(c->s[i]) : 24;
            ok = put_u8(o, AT_STRING) && put_u64(o, (uint64_t)size);
            for (int64_t i = r0; ok && i < r0 + n; i++) {
                int rc = put_utf(o, c->s[i]);
                if (rc) { *bad = j; return rc; }
            }
        }
        if (!ok) return -1;
    }
    return 0;
}

int io_format_sysframe(const FB *f, int64_t blen, int64_t rl, int64_t ru, IoStr *o, const char *path, BrErr *e)
{
    if (blen < 1) blen = 1000;
    if (f->rows > INT32_MAX || f->cols > INT32_MAX || blen > INT32_MAX)
        return br_err(e, BR_EDIM, "write %s: %lldx%lld is too large for SystemDS's binary frame format", path,
                      (long long)f->rows, (long long)f->cols);
    uint8_t sync[16];
    uint64_t h = 1469598103934665603ull ^ (uint64_t)f->rows * 31 ^ (uint64_t)f->cols * 131 ^ (uint64_t)blen;
    for (int i = 0; i < 16; i++) {
        h = (h ^ (uint64_t)i) * 1099511628211ull;
        sync[i] = (uint8_t)(h >> 29);
    }
    bool ok = io_str_reserve(o, 4 + 2 + sizeof KEY_CLASS + sizeof VALUE_CLASS + 6 + 16);
    if (ok) {
        io_str_putn(o, "SEQ\6", 4);
        io_str_putc(o, (char)strlen(KEY_CLASS));
        io_str_putn(o, KEY_CLASS, strlen(KEY_CLASS));
        io_str_putc(o, (char)strlen(VALUE_CLASS));
        io_str_putn(o, VALUE_CLASS, strlen(VALUE_CLASS));
        io_str_putn(o, "\0\0\0\0\0\0", 6);   /* not compressed, no metadata */
        io_str_putn(o, (const char *)sync, 16);
    }
    bool dflt = default_meta(f);
    size_t last_sync = o->n;
    int64_t step = f->rows <= blen ? BR_MAX(f->rows, 1) : blen;
    for (int64_t r0 = rl; ok && (r0 < ru || (r0 == 0 && f->rows == 0)); r0 += step) {
        int64_t n = BR_MIN(step, f->rows - r0);
        if (o->n >= last_sync + 100 * 1024) {
            ok = put_u32(o, UINT32_MAX) && io_str_reserve(o, 16);
            if (ok) io_str_putn(o, (const char *)sync, 16);
            last_sync = o->n;
        }
        size_t at = o->n;
        int64_t bad = -1;
        ok = ok && put_u32(o, 0) && put_u32(o, 8) && put_u64(o, (uint64_t)r0 + 1);
        int rc = ok ? put_block(o, f, r0, n, dflt, &bad) : -1;
        if (rc > 0)
            return br_err(e, BR_EARG, "write %s: a name or string of column %lld is longer than SystemDS's "
                          "binary frame format holds (65535 bytes)", path, (long long)bad + 1);
        ok = !rc;
        if (ok && o->n - at - 8 > INT32_MAX)
            return br_err(e, BR_EDIM, "write %s: a %lld-row block is too large for one record", path, (long long)n);
        if (ok) {
            uint32_t len = (uint32_t)(o->n - at - 8);
            char b[4] = {(char)(len >> 24), (char)(len >> 16), (char)(len >> 8), (char)len};
            memcpy(o->p + at, b, 4);
        }
        if (f->rows == 0) break;
    }
    return ok ? 0 : br_err(e, BR_ENOMEM, "out of memory writing %s", path);
}
