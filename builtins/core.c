/* builtins.c: the builtin functions of DML (ops.def BUILTIN entries) that
 * do not map to a dedicated HOP: construction, casts, metadata, I/O,
 * printing, reorganizations with parameters, linear algebra, eval. The
 * arguments arrive bound in parameter order (V_NONE where absent), then
 * the variadic ones. */
#include "builtins.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../io/io.h"
#include "../kernels/einsum.h"
#include "../kernels/agg.h"
#include "../kernels/cla.h"
#include "../kernels/ew.h"
#include "../kernels/gen.h"
#include "../runtime/bound.h"
#include "../kernels/la.h"
#include "../kernels/mm.h"
#include "../kernels/reorg.h"
#include "../lang/load.h"
#include "../matrix/format.h"
#include "frame.h"

bool bi_given(const Value *v) { return v->kind != V_NONE; }

int bi_num(const Value *v, const char *what, double *out, BrErr *e)
{
    if (val_is_numeric(v)) { *out = val_as_double(v); return 0; }
    if (v->kind == V_MATRIX && v->m->rows == 1 && v->m->cols == 1) { *out = mb_get(v->m, 0, 0); return 0; }
    if (v->kind == V_STRING) {
        char *end;
        double d = strtod(v->s->s, &end);
        if (end != v->s->s && !*end) { *out = d; return 0; }
    }
    return br_err(e, BR_EARG, "argument '%s' must be a number, not a %s", what, val_kind_name(v->kind));
}

int bi_bool(const Value *v, const char *what, bool *out, BrErr *e)
{
    if (v->kind == V_STRING) {
        if (!strcasecmp(v->s->s, "true")) { *out = true; return 0; }
        if (!strcasecmp(v->s->s, "false")) { *out = false; return 0; }
    }
    double d;
    if (bi_num(v, what, &d, e)) return e->code;
    *out = d != 0;
    return 0;
}

const char *bi_str(const Value *v, const char *what, BrErr *e)
{
    if (v->kind == V_STRING) return v->s->s;
    br_err(e, BR_EARG, "argument '%s' must be a string, not a %s", what, val_kind_name(v->kind));
    return NULL;
}

/* A matrix argument (borrowed), or a 1x1 block made from a number (*tmp). */
static const MB *mat(const Value *v, const char *what, MB **tmp, BrErr *e)
{
    *tmp = NULL;
    if (v->kind == V_MATRIX) return v->m;
    if (val_is_numeric(v)) { *tmp = mb_scalar(val_as_double(v), e); return *tmp; }
    br_err(e, BR_EARG, "argument '%s' must be a matrix, not a %s", what, val_kind_name(v->kind));
    return NULL;
}

int bi_split(const Value *v, const char *what, const char **items, int max, char **buf, BrErr *e)
{
    if (v->kind == V_LIST) {   /* ["a", "b"]: the items, one buffer holding them all */
        size_t len = 1;
        for (int i = 0; i < v->l->n; i++) {
            if (v->l->items[i].kind != V_STRING)
                return br_err(e, BR_EARG, "argument '%s': list items must be strings", what), -1;
            len += v->l->items[i].s->len + 1;
        }
        char *b = *buf = br_malloc(len);
        if (!b) return br_err(e, BR_ENOMEM, "out of memory"), -1;
        int k = 0;
        for (int i = 0; i < v->l->n && k < max; i++) {
            memcpy(b, v->l->items[i].s->s, v->l->items[i].s->len + 1);
            items[k++] = b;
            b += v->l->items[i].s->len + 1;
        }
        return k;
    }
    const char *s = bi_str(v, what, e);
    if (!s) return -1;
    *buf = br_strdup(s);
    int k = 0;
    char *save = NULL;
    for (char *tok = strtok_r(*buf, ",", &save); tok && k < max; tok = strtok_r(NULL, ",", &save)) items[k++] = tok;
    return k;
}

int bi_ret_mb(MB *m, Value *out, BrErr *e)
{
    if (!m) return e->code ? e->code : br_err(e, BR_EFAIL, "operation failed");
    *out = val_matrix(m);
    return 0;
}

/* ---- construction ---- */

static int parse_values(const char *s, double **vals, int64_t *n, BrErr *e)
{
    int64_t cap = 16, k = 0;
    double *v = malloc((size_t)cap * sizeof(double));
    if (!v) return br_err(e, BR_ENOMEM, "out of memory");
    const char *p = s;
    while (*p) {
        while (*p == ' ' || *p == ',' || *p == '\t' || *p == '\n' || *p == '\r') p++;
        if (!*p) break;
        char *end;
        double d = strtod(p, &end);
        if (end == p) {
            free(v);
            return br_err(e, BR_EARG, "matrix(): cannot parse a number in \"%.40s\"", p);
        }
        if (k == cap) {
            double *nv = realloc(v, (size_t)(cap *= 2) * sizeof(double));
            if (!nv) {
                free(v);
                return br_err(e, BR_ENOMEM, "out of memory");
            }
            v = nv;
        }
        v[k++] = d;
        p = end;
    }
    *vals = v;
    *n = k;
    return 0;
}

static int b_matrix(Value *a, Value *out, BrErr *e)
{
    double r = -1, c = -1;
    if (bi_given(&a[1]) && bi_num(&a[1], "rows", &r, e)) return e->code;
    if (bi_given(&a[2]) && bi_num(&a[2], "cols", &c, e)) return e->code;
    bool byrow = true;
    if (bi_given(&a[3]) && bi_bool(&a[3], "byrow", &byrow, e)) return e->code;
    int64_t rows = (int64_t)r, cols = (int64_t)c;
    if (a[0].kind == V_STRING) {
        double *vals = NULL;
        int64_t n = 0;
        if (parse_values(a[0].s->s, &vals, &n, e)) return e->code;
        if (rows < 0 && cols > 0) rows = n / cols;
        if (cols < 0 && rows > 0) cols = n / rows;
        if (rows < 0 && cols < 0) { rows = n; cols = 1; }
        MB *m = k_matrix_from_values(vals, n, rows, cols, byrow, e);
        free(vals);
        return bi_ret_mb(m, out, e);
    }
    if (a[0].kind == V_MATRIX) {
        const MB *x = a[0].m;
        int64_t cells = x->rows * x->cols;
        if (rows < 0 && cols > 0) rows = cells / cols;
        if (cols < 0 && rows > 0) cols = cells / rows;
        if (rows < 0 && cols < 0) { rows = x->rows; cols = x->cols; }
        if (x->rows == 1 && x->cols == 1 && rows * cols != 1)
            return bi_ret_mb(mb_fill(rows, cols, mb_get(x, 0, 0), e), out, e);
        return bi_ret_mb(k_reshape(x, rows, cols, byrow, e), out, e);
    }
    double v;
    if (bi_num(&a[0], "data", &v, e)) return e->code;
    if (rows < 0 || cols < 0)
        return br_err(e, BR_EARG, "matrix(): rows and cols are required for a scalar value");
    return bi_ret_mb(mb_fill(rows, cols, v, e), out, e);
}

static int seed_arg(const Value *v, int64_t *out, BrErr *e);

static int b_rand(Rt *rt, Value *a, Value *out, BrErr *e)
{
    double r, c, mn = 0, mx = 1, sp = 1, lambda = 1;
    int64_t seed = -1;
    if (bi_num(&a[0], "rows", &r, e) || bi_num(&a[1], "cols", &c, e)) return e->code;
    if (bi_given(&a[2]) && bi_num(&a[2], "min", &mn, e)) return e->code;
    if (bi_given(&a[3]) && bi_num(&a[3], "max", &mx, e)) return e->code;
    if (bi_given(&a[4]) && bi_num(&a[4], "sparsity", &sp, e)) return e->code;
    const char *pdf = bi_given(&a[5]) ? bi_str(&a[5], "pdf", e) : "uniform";
    if (!pdf) return e->code;
    if (bi_given(&a[6]) && bi_num(&a[6], "lambda", &lambda, e)) return e->code;
    /* an integer seed exactly (a lineage trace's 63-bit seeds) */
    if (bi_given(&a[7]) && seed_arg(&a[7], &seed, e)) return e->code;
    if (r < 0 || c < 0) return br_err(e, BR_EDIM, "rand(): invalid dimensions %gx%g", r, c);
    int64_t s = seed;
    if (s == -1) s = rt_next_seed(rt);   /* -seed N: runtime/seeds.c */
    return bi_ret_mb(k_rand((int64_t)r, (int64_t)c, mn, mx, sp, pdf, lambda, s, e), out, e);
}

static int b_seq(Value *a, Value *out, BrErr *e)
{
    double f, t, inc;
    if (bi_num(&a[0], "from", &f, e) || bi_num(&a[1], "to", &t, e)) return e->code;
    inc = f <= t ? 1 : -1;   /* SystemDS's default; an explicit 0 is an error */
    if (bi_given(&a[2]) && bi_num(&a[2], "incr", &inc, e)) return e->code;
    return bi_ret_mb(k_seq(f, t, inc, e), out, e);
}

/* A seed argument: an integer exactly (63-bit seeds), else a number. */
static int seed_arg(const Value *v, int64_t *out, BrErr *e)
{
    if (v->kind == V_INT) { *out = v->i; return 0; }
    double d;
    if (bi_num(v, "seed", &d, e)) return e->code;
    if (!(d >= -9.2e18 && d <= 9.2e18)) return br_err(e, BR_EARG, "seed %g is not a 64-bit integer", d);
    *out = (int64_t)d;
    return 0;
}

static int b_sample(Rt *rt, Value *a, Value *out, BrErr *e)
{
    double range, size;
    int64_t seed = -1;
    bool repl = false;
    if (bi_num(&a[0], "range", &range, e) || bi_num(&a[1], "size", &size, e)) return e->code;
    if (bi_given(&a[2])) {
        /* sample(range, size, seed) with a number in third place */
        if (a[2].kind == V_BOOL) repl = a[2].b;
        else if (seed_arg(&a[2], &seed, e)) return e->code;
    }
    /* a fourth argument is the seed; its default (-1, which the call
     * carries when not written) keeps a seed given in third place */
    int64_t seed4 = -1;
    if (bi_given(&a[3]) && seed_arg(&a[3], &seed4, e)) return e->code;
    if (seed4 != -1 || a[2].kind == V_BOOL) seed = seed4;
    int64_t s = seed;
    if (s == -1) s = rt_next_seed(rt);   /* -seed N: runtime/seeds.c */
    return bi_ret_mb(k_sample((int64_t)range, (int64_t)size, repl, s, e), out, e);
}

/* ---- casts and metadata ---- */

/* compress(X): X marked for compression (Value.cla_lazy); the run time
 * compresses it at the first loop whose uses repay it (docs/cla.md "When
 * braid compresses"); decompress(X): the ordinary block. Other values
 * pass through. */
static int b_compress(bool compress, Value *a, Value *out, BrErr *e)
{
    if (a[0].kind != V_MATRIX || (!compress && !a[0].m->cmb)) {
        *out = val_retain(a[0]);
        return 0;
    }
    if (compress) {   /* deferred: runtime/cla_rt.c decides at a loop */
        *out = val_retain(a[0]);
        out->cla_lazy = !a[0].m->cmb;
        return 0;
    }
    MB *r = cmb_decompress(a[0].m, e);
    if (!r) return e->code;
    *out = val_matrix(r);
    return 0;
}

/* quantize_compress(X, S): SystemDS's fused floor(X * S) then compress.
 * Row r is scaled by S when S is a scalar, else by S's r-th value in
 * row-major order (CompressedMatrixBlockFactory indexes the dense values
 * by row: a column vector gives one factor per row; a full matrix, which
 * its validation also admits, gives its first values, reproduced). */
static int b_quantize_compress(Value *a, Value *out, BrErr *e)
{
    if (a[0].kind != V_MATRIX)
        return br_err(e, BR_EARG, "quantize_compress: X must be a matrix, not a %s", val_kind_name(a[0].kind));
    const MB *x = a[0].m;
    const MB *s = a[1].kind == V_MATRIX ? a[1].m : NULL;
    if (!s && !val_is_numeric(&a[1]))
        return br_err(e, BR_EARG, "quantize_compress: the scale must be a number or a matrix, not a %s",
                      val_kind_name(a[1].kind));
    bool vec = s && (s->rows == 1 || s->cols == 1);
    if (s && (vec ? s->rows != x->rows : s->rows != x->rows || s->cols != x->cols))
        return br_err(e, BR_EDIM,
                      "quantize_compress: the scale vector needs one factor per row of X (%lld), got %lldx%lld",
                      (long long)x->rows, (long long)s->rows, (long long)s->cols);
    double k = s ? 0 : val_as_double(&a[1]);
    MB *dx = x->cmb ? cmb_decompress(x, e) : NULL;   /* read a compressed X once */
    if (x->cmb && !dx) return e->code;
    if (dx) x = dx;
    MB *y = mb_dense(x->rows, x->cols, e);
    if (!y) { mb_release(dx); return e->code; }
    for (int64_t r = 0; r < x->rows; r++) {
        double f = s ? mb_get(s, (r / s->cols), r % s->cols) : k;
        for (int64_t c = 0; c < x->cols; c++) y->d[r * x->cols + c] = floor(mb_get(x, r, c) * f);
    }
    mb_release(dx);
    mb_recount_nnz(y);
    Value t = val_matrix(y);
    int rc = b_compress(true, &t, out, e);
    val_release(&t);
    return rc;
}

static int b_as_scalar(Value *a, Value *out, BrErr *e)
{
    Value *v = &a[0];
    if (v->kind == V_LIST) {
        if (v->l->n != 1) return br_err(e, BR_EARG, "as.scalar: a list of %d elements is not a scalar", v->l->n);
        v = &v->l->items[0];
    }
    if (val_is_scalar(v)) { *out = val_retain(*v); return 0; }
    if (v->kind == V_MATRIX) {
        if (v->m->rows != 1 || v->m->cols != 1)
            return br_err(e, BR_EDIM, "as.scalar: dimension mismatch: expected a 1x1 matrix, got %lldx%lld",
                          (long long)v->m->rows, (long long)v->m->cols);
        *out = val_double(mb_get(v->m, 0, 0));
        return 0;
    }
    return br_err(e, BR_EARG, "as.scalar: cannot convert a %s", val_kind_name(v->kind));
}

static int b_as_matrix(Value *a, Value *out, BrErr *e)
{
    Value *v = &a[0];
    if (v->kind == V_MATRIX) { *out = val_retain(*v); return 0; }
    if (val_is_numeric(v)) return bi_ret_mb(mb_scalar(val_as_double(v), e), out, e);
    if (v->kind == V_LIST) {
        List *l = v->l;
        if (l->n == 1 && l->items[0].kind == V_MATRIX) { *out = val_retain(l->items[0]); return 0; }
        MB *m = mb_dense(l->n, 1, e);
        if (!m) return e->code;
        for (int i = 0; i < l->n; i++) {
            if (!val_is_numeric(&l->items[i])) {
                mb_release(m);
                return br_err(e, BR_EARG, "as.matrix: list element %d is a %s, not a number", i + 1,
                              val_kind_name(l->items[i].kind));
            }
            m->d[i] = val_as_double(&l->items[i]);
        }
        mb_recount_nnz(m);
        return bi_ret_mb(m, out, e);
    }
    return br_err(e, BR_EARG, "as.matrix: cannot convert a %s", val_kind_name(v->kind));
}

static int b_cast(BuiltinId id, Value *a, Value *out, BrErr *e)
{
    Value *v = &a[0];
    if (v->kind == V_LIST && v->l->n == 1) v = &v->l->items[0];
    double d;
    if (v->kind == V_STRING && (id == BI_ASLOGICAL || id == BI_ASBOOLEAN)) {
        bool b;
        if (bi_bool(v, "target", &b, e)) return e->code;
        *out = val_bool(b);
        return 0;
    }
    if (bi_num(v, "target", &d, e)) return e->code;
    if (id == BI_ASDOUBLE) *out = val_double(d);
    else if (id == BI_ASINTEGER) {
        if (v->kind == V_INT) *out = *v;
        else *out = val_int(ops_dml_long(d));
    } else *out = val_bool(d != 0);
    return 0;
}

/* ---- printing ---- */

static FmtArg fmt_arg(const Value *v)
{
    FmtArg f = {0};
    switch (v->kind) {
    case V_DOUBLE: f.kind = FA_DOUBLE; f.d = v->d; break;
    case V_INT: f.kind = FA_INT; f.i = v->i; break;
    case V_BOOL: f.kind = FA_BOOL; f.b = v->b; break;
    case V_STRING: f.kind = FA_STRING; f.s = v->s->s; break;
    default: f.kind = FA_STRING; f.s = val_kind_name(v->kind); break;
    }
    return f;
}

/* append(s1, s2, ...) / cbind of scalars (old SystemML report building):
 * the scalars as print shows them, joined by newlines. */
static int str_append(const Value *va, int nv, Value *out, BrErr *e)
{
    char *r = NULL;
    size_t n = 0;
    for (int i = 0; i < nv; i++) {
        FmtArg fa = fmt_arg(&va[i]);
        char *t = fmt_scalar(&fa, e);
        if (!t) { free(r); return e->code; }
        size_t k = strlen(t);
        char *nr = realloc(r, n + k + 2);
        if (!nr) { free(t); free(r); return br_err(e, BR_ENOMEM, "append: out of memory"); }
        r = nr;
        if (i > 0) r[n++] = '\n';
        memcpy(r + n, t, k + 1);
        n += k;
        free(t);
    }
    *out = val_string_n(r, n);
    free(r);
    if (out->kind != V_STRING) return br_err(e, BR_ENOMEM, "out of memory");
    return 0;
}

typedef struct TsOpts { int64_t rows, cols; int decimal; bool sparse; const char *sep, *linesep; } TsOpts;

static char *to_text(const Value *v, const TsOpts *o, BrErr *e)
{
    if (v->kind == V_MATRIX) return fmt_matrix(v->m, o->rows, o->cols, o->decimal, o->sparse, o->sep, o->linesep, e);
    if (v->kind == V_LIST) {
        List *l = v->l;
        FmtItem *it = calloc((size_t)l->n + 1, sizeof *it);
        char **nested = calloc((size_t)l->n + 1, sizeof(char *));
        for (int i = 0; i < l->n; i++) {
            Value *x = &l->items[i];
            if (x->kind == V_MATRIX) it[i].m = x->m;
            else if (x->kind == V_LIST) { nested[i] = to_text(x, o, e); it[i].text = nested[i] ? nested[i] : ""; }
            else it[i].a = fmt_arg(x);
        }
        char *s = fmt_list(it, l->n, o->rows, o->cols, o->decimal, o->sparse, o->sep, o->linesep, e);
        for (int i = 0; i < l->n; i++) free(nested[i]);
        free(nested);
        free(it);
        return s;
    }
    return val_text(v, false);
}

static int b_print(Rt *rt, const Instr *h, Value *a, BrErr *e)
{
    int n = h->nvar;
    char *s = NULL;
    if (n == 0) s = br_strdup("");
    else if (n == 1) {
        TsOpts o = {100, 100, 3, false, " ", "\n"};
        s = to_text(&a[0], &o, e);
    } else {
        if (a[0].kind != V_STRING) return br_err(e, BR_EARG, "print: the format must be a string");
        FmtArg *fa = calloc((size_t)n, sizeof *fa);
        if (!fa) return br_err(e, BR_ENOMEM, "out of memory");
        for (int i = 1; i < n; i++) fa[i - 1] = fmt_arg(&a[i]);
        s = fmt_printf(a[0].s->s, fa, n - 1, e);
        free(fa);
    }
    /* a failed allocation deep in the formatting may not have said so:
     * print never drops its output silently */
    if (!s) return e->code ? e->code : br_err(e, BR_ENOMEM, "out of memory");
    rt_print_line(rt, s);
    free(s);
    return 0;
}

/* einsum(equation, A, B, ...) (kernels/einsum.h): a matrix, or a double
 * when the equation has no output letters. */
static int b_einsum(Value *va, int nv, Value *out, BrErr *e)
{
    if (nv < 2) return br_err(e, BR_EARG, "einsum: expects an equation and at least one matrix");
    const char *eq = bi_str(&va[0], "equation", e);
    if (!eq) return e->code;
    const MB **ops = br_malloc((size_t)(nv - 1) * sizeof *ops);
    if (!ops) return br_err(e, BR_ENOMEM, "out of memory");
    for (int k = 1; k < nv; k++) {
        if (va[k].kind != V_MATRIX) {
            free(ops);
            return br_err(e, BR_EARG, "einsum: operand %d must be a matrix, not a %s", k, val_kind_name(va[k].kind));
        }
        ops[k - 1] = va[k].m;
    }
    bool scalar;
    MB *r = k_einsum(eq, ops, nv - 1, &scalar, e);
    free(ops);
    if (!r) return e->code;
    if (!scalar) return bi_ret_mb(r, out, e);
    *out = val_double(mb_get(r, 0, 0));
    mb_release(r);
    return 0;
}

static int b_tostring(Value *a, Value *out, BrErr *e)
{
    TsOpts o = {100, 100, 3, false, " ", "\n"};
    double d;
    if (bi_given(&a[1])) { if (bi_num(&a[1], "rows", &d, e)) return e->code; o.rows = ops_dml_long(d); }
    if (bi_given(&a[2])) { if (bi_num(&a[2], "cols", &d, e)) return e->code; o.cols = ops_dml_long(d); }
    if (bi_given(&a[3])) { if (bi_num(&a[3], "decimal", &d, e)) return e->code; o.decimal = (int)d; }
    if (bi_given(&a[4]) && bi_bool(&a[4], "sparse", &o.sparse, e)) return e->code;
    if (bi_given(&a[5]) && !(o.sep = bi_str(&a[5], "sep", e))) return e->code;
    if (bi_given(&a[6]) && !(o.linesep = bi_str(&a[6], "linesep", e))) return e->code;
    char *s = to_text(&a[0], &o, e);
    if (!s) return e->code ? e->code : br_err(e, BR_ENOMEM, "out of memory");
    *out = val_string(s);
    free(s);
    return out->kind == V_STRING ? 0 : br_err(e, BR_ENOMEM, "out of memory");
}

/* ---- files ---- */

/* A scalar data file as a value of value type vt ("double" if empty). */
static int read_scalar_value(const char *file, IoMeta *meta, const char *vt, Value *out, BrErr *e)
{
    char *buf = io_read_scalar_dup(file, meta, vt, e);
    if (!buf) return e->code;
    char *end;
    if (!strcmp(vt, "string")) *out = val_string(buf);
    else if (!strcmp(vt, "boolean")) *out = val_bool(!strcasecmp(buf, "true"));
    else if (!strcmp(vt, "int") || !strcmp(vt, "integer")) *out = val_int(strtoll(buf, &end, 10));
    else *out = val_double(strtod(buf, &end));
    free(buf);
    return 0;
}

/* A list written by write(L, file) (io.h's layout: SystemDS's, or braid's
 * earlier one): each item read by its own .mtd (lists nest). */
static int read_list(const char *file, const IoMeta *meta, Value *out, BrErr *e)
{
    int64_t n;
    char **paths, **names;
    if (io_list_items(file, meta, &n, &paths, &names, e)) return e->code;
    if (n > INT32_MAX) {
        io_list_items_free(n, paths, names);
        return br_err(e, BR_EIO, "read %s: a list of %lld items is too long", file, (long long)n);
    }
    Value l = val_list_new((int)n);
    int rc = 0;
    for (int64_t i = 0; i < n && !rc; i++) {
        const char *sub = paths[i];
        IoMeta m;
        bool found = false;
        Value v = val_none();
        if ((rc = io_read_mtd(sub, &m, &found, e))) break;
        if (!found) { rc = br_err(e, BR_EIO, "read: list item %s has no .mtd", sub); break; }
        if (!strcmp(m.data_type, "scalar")) rc = read_scalar_value(sub, &m, m.value_type[0] ? m.value_type : "double", &v, e);
        else if (!strcmp(m.data_type, "list")) rc = read_list(sub, &m, &v, e);
        else if (!strcmp(m.data_type, "frame")) {
            IoFrameReadOpts fo;
            io_frame_read_opts_init(&fo);
            FB *f = io_read_frame(sub, &fo, e);
            if (f) v = val_frame(f);
            else rc = e->code;
        } else if (!strcmp(m.data_type, "matrix") || !m.data_type[0]) {
            IoReadOpts o;
            io_read_opts_init(&o);
            MB *mb = io_read_matrix(sub, &o, e);
            if (mb) v = val_matrix(mb);
            else rc = e->code;
        } else {
            rc = br_err(e, BR_EIO, "read: list item %s.mtd: data type \"%s\" is not supported", sub,
                        m.data_type);
        }
        if (!rc) rc = list_append(l.l, v, names[i], e);
    }
    io_list_items_free(n, paths, names);
    if (rc) { val_release(&l); return rc; }
    *out = l;
    return 0;
}

/* Writes value x to file; a list becomes a directory of items (io.h). */
static int write_value(const char *file, const Value *x, const IoWriteOpts *o, BrErr *e)
{
    if (val_is_scalar(x)) {
        char *t = val_text(x, true);
        const char *vt = x->kind == V_DOUBLE ? "double" : x->kind == V_INT ? "int"
                       : x->kind == V_BOOL ? "boolean" : "string";
        int rc = io_write_scalar_str(file, t, vt, e);
        free(t);
        return rc;
    }
    if (x->kind == V_MATRIX) return io_write_matrix(file, x->m, o, e);
    /* a frame item in the list's format, binary too, as SystemDS's
     * ListWriter exports it */
    if (x->kind == V_FRAME) return io_write_frame(file, x->f, o, e);
    if (x->kind != V_LIST) return br_err(e, BR_EARG, "write: cannot write a %s to %s", val_kind_name(x->kind), file);
    const List *L = x->l;
    if (io_write_list_mtd(file, L->n, o->format, e)) return e->code;
    int rc = 0;
    for (int i = 0; i < L->n && !rc; i++) {   /* file/<i>_<name|null>, from 0 */
        char *sub = io_list_item_path(file, i, L->names ? L->names[i] : NULL, e);
        rc = sub ? write_value(sub, &L->items[i], o, e) : e->code;
        free(sub);
    }
    return rc;
}

static int b_read(Value *a, Value *out, BrErr *e)
{
    const char *file = bi_str(&a[0], "file", e);
    if (!file) return e->code;
    IoMeta meta;
    io_meta_init(&meta);
    bool found = false;
    if (io_read_mtd(file, &meta, &found, e)) return e->code;
    const char *dt = bi_given(&a[9]) ? bi_str(&a[9], "data_type", e) : (found ? meta.data_type : "matrix");
    if (!dt) return e->code;
    if (strcmp(dt, "scalar") == 0) {
        const char *vt = bi_given(&a[10]) ? bi_str(&a[10], "value_type", e) : meta.value_type;
        if (!vt) return e->code;
        return read_scalar_value(file, &meta, vt, out, e);
    }
    if (strcmp(dt, "list") == 0) return read_list(file, &meta, out, e);
    if (strcmp(dt, "frame") == 0) return bi_frame_read(a, out, e);
    if (strcmp(dt, "matrix") != 0)
        return br_err(e, BR_EARG, "read: data type '%s' is not supported (file %s)", dt, file);
    IoReadOpts o;
    io_read_opts_init(&o);
    double d;
    bool b;
    if (bi_given(&a[1]) && !(o.format = bi_str(&a[1], "format", e))) return e->code;
    if (bi_given(&a[2])) { if (bi_num(&a[2], "rows", &d, e)) return e->code; o.rows = ops_dml_long(d); }
    if (bi_given(&a[3])) { if (bi_num(&a[3], "cols", &d, e)) return e->code; o.cols = ops_dml_long(d); }
    if (bi_given(&a[4])) { if (bi_bool(&a[4], "header", &b, e)) return e->code; o.header = b; }
    if (bi_given(&a[5]) && !(o.sep = bi_str(&a[5], "sep", e))) return e->code;
    if (bi_given(&a[15]) && !(o.ind_sep = bi_str(&a[15], "indSep", e))) return e->code;
    if (bi_given(&a[16]) && !(o.dataset = bi_str(&a[16], "dataset", e))) return e->code;
    if (bi_given(&a[6])) { if (bi_bool(&a[6], "fill", &b, e)) return e->code; o.fill = b; }
    if (bi_given(&a[7])) { if (bi_num(&a[7], "default", &d, e)) return e->code; o.fill_value = d; o.has_fill_value = true; }
    const char *na[64];
    char *nabuf = NULL;
    if (bi_given(&a[8])) {
        if ((o.n_na = bi_split(&a[8], "naStrings", na, 64, &nabuf, e)) < 0) return e->code;
        o.na_strings = na;
    }
    MB *m = io_read_matrix(file, &o, e);
    free(nabuf);
    return bi_ret_mb(m, out, e);
}

static int b_write(Value *a, BrErr *e)
{
    const char *file = bi_str(&a[1], "file", e);
    if (!file) return e->code;
    Value *x = &a[0];
    IoWriteOpts o;
    io_write_opts_init(&o);
    if (bi_given(&a[2]) && !(o.format = bi_str(&a[2], "format", e))) return e->code;
    if (bi_given(&a[3]) && bi_bool(&a[3], "header", &o.header, e)) return e->code;
    if (bi_given(&a[4]) && !(o.sep = bi_str(&a[4], "sep", e))) return e->code;
    if (bi_given(&a[10]) && !(o.ind_sep = bi_str(&a[10], "indSep", e))) return e->code;
    if (bi_given(&a[11]) && !(o.dataset = bi_str(&a[11], "dataset", e))) return e->code;
    /* SystemDS's binary blocks: rows_in_block= (a[7]) as SystemDS's
     * write takes it, else sysds.defaultblocksize */
    o.blocksize = br_blocksize();
    if (bi_given(&a[7])) {
        double d;
        if (bi_num(&a[7], "rows_in_block", &d, e)) return e->code;
        if (!(d >= 1 && d <= INT32_MAX)) return br_err(e, BR_EARG, "write: rows_in_block=%g is not a block size", d);
        o.blocksize = (int64_t)d;
    }
    o.parts = br_threads();   /* its parallel writer's part files */
    /* data_type= (a[9]), as SystemDS accepts it: the value's own type
     * is written; a different one is an error rather than ignored */
    if (bi_given(&a[9])) {
        const char *dt = bi_str(&a[9], "data_type", e);
        if (!dt) return e->code;
        const char *is = x->kind == V_MATRIX ? "matrix" : x->kind == V_FRAME ? "frame"
                       : x->kind == V_LIST ? "list" : "scalar";
        if (strcasecmp(dt, is) != 0)
            return br_err(e, BR_EARG, "write: data_type=\"%s\" but the value is a %s", dt, is);
    }
    if (x->kind == V_MATRIX && x->cla_lazy && o.format && !strcmp(o.format, "braid-binary")) {
        /* compress(X) written: in compressed form, the block's compressed
         * copy where a loop made one (MB.cla_copy: a function's loop over
         * its copy of X), else compressed now */
        MB *cp = __atomic_load_n(&x->m->cla_copy, __ATOMIC_ACQUIRE), *c;
        if (cp && cp != x->m && cp->cmb) c = mb_retain(cp);
        else {
            ClaPlanOpts co = cla_plan_defaults();
            c = cla_compress(x->m, &co, e);
        }
        if (!c) return e->code;
        Value cv = val_matrix(c);
        int rc = write_value(file, &cv, &o, e);
        val_release(&cv);
        return rc;
    }
    return write_value(file, x, &o, e);
}

/* ---- eval ---- */

static bool lit_of(const Expr *x, Value *v)
{
    if (!x) return false;
    switch (x->kind) {
    case EX_INT: *v = val_int(x->ival); return true;
    case EX_DOUBLE: *v = val_double(x->dval); return true;
    case EX_BOOL: *v = val_bool(x->bval); return true;
    case EX_STRING: *v = val_string(x->sval); return true;
    case EX_UNARY:
        if (x->unary.op == OP_NEG && lit_of(x->unary.a, v)) {
            if (v->kind == V_INT) v->i = -v->i;
            else if (v->kind == V_DOUBLE) v->d = -v->d;
            return true;
        }
        return false;
    default: return false;
    }
}

int bi_call_defaults(Rt *rt, Frame *f, Func *fn, Value *bound, const char *who, const char *what, Value *res,
                     BrErr *e)
{
    for (int j = 0; j < fn->nin; j++) {
        if (bound[j].kind != V_NONE || lit_of(fn->in[j].deflt, &bound[j])) continue;
        /* a default expression (matrix(0, rows=1, cols=1), ncol(X), ...):
         * computed by a function of the parameters before it */
        Func *df = lang_default_func(rt->prog->ast, fn, j);
        if (!df) return br_err(e, BR_EARG, "%s: missing argument '%s' of %s'%s'", who, fn->in[j].name, what, fn->name);
        Value dv = val_none();
        int rc = rt_call(rt, f, df, bound, &dv) ? -1 : 0;
        if (!rc) bound[j] = val_retain(dv.l->items[0]);
        val_release(&dv);
        if (rc) return rc;
    }
    return rt_call(rt, f, fn, bound, res) ? -1 : 0;
}

const char *bi_ns_of(const Rt *rt, Span sp)
{
    /* under the program's lock: another thread may load a library file */
    return lang_ns_of_file(rt->prog->ast, sp.file);
}

/* evalList's result: all outputs of fn as a list named by fn's output
 * names, as SystemDS's evalList returns them (executePipeline removes the
 * first and binds the rest by name to the apply function) */
static int named_outputs(const Func *fn, Value res, Value *out, BrErr *e)
{
    Value l = val_list_new(res.l->n);
    int rc = l.kind == V_LIST ? 0 : br_err(e, BR_ENOMEM, "out of memory");
    for (int i = 0; i < res.l->n && !rc; i++)
        rc = list_append(l.l, val_retain(res.l->items[i]), i < fn->nout ? fn->out[i].name : NULL, e);
    val_release(&res);
    if (rc) { val_release(&l); return rc; }
    *out = l;
    return 0;
}

static int b_eval(Rt *rt, Frame *f, const Instr *h, Value *a, Value *out, BrErr *e)
{
    const char *bn = builtin_info[h->bi].name;   /* eval or evalList */
    const char *name = bi_str(&a[0], "fname", e);
    if (!name) return e->code;
    /* the calling file's functions first (SystemDS: arima's eval of its
     * own solver functions), then the main script's and the library */
    Func *fn = lang_find_func(rt->prog->ast, bi_ns_of(rt, h->span), name);
    if (!fn) fn = lang_find_func(rt->prog->ast, "", name);
    if (!fn) return br_err(e, BR_EARG, "%s: unknown function '%s'", bn, name);
    Value *bound = calloc((size_t)fn->nin + 1, sizeof(Value));
    int rc = 0;
    /* arguments: one list (names bind by name) or positional values */
    Value *items = &a[1];
    int n = h->nvar;
    char **names = NULL;
    if (n == 1 && a[1].kind == V_LIST) { items = a[1].l->items; names = a[1].l->names; n = a[1].l->n; }
    int pos = 0;
    for (int i = 0; i < n && !rc; i++) {
        int k = -1;
        if (names && names[i]) {
            for (int j = 0; j < fn->nin; j++)
                if (!strcmp(fn->in[j].name, names[i])) k = j;
            if (k < 0) rc = br_err(e, BR_EARG, "%s: function '%s' has no parameter '%s'", bn, name, names[i]);
        } else {
            while (pos < fn->nin && bound[pos].kind != V_NONE) pos++;
            if (pos >= fn->nin) rc = br_err(e, BR_EARG, "%s: too many arguments for '%s'", bn, name);
            k = pos++;
        }
        if (!rc) bound[k] = val_retain(items[i]);
    }
    Value res = val_none();
    if (!rc) rc = bi_call_defaults(rt, f, fn, bound, bn, "", &res, e);
    for (int j = 0; j < fn->nin; j++) val_release(&bound[j]);
    free(bound);
    if (rc) return rc;
    if (h->bi == BI_EVALLIST) return named_outputs(fn, res, out, e);
    if (res.l->n == 0) { val_release(&res); return br_err(e, BR_EARG, "%s: '%s' returns nothing", bn, name); }
    Value first = res.l->items[0];
    if (first.kind == V_MATRIX) *out = val_retain(first);
    else if (val_is_numeric(&first)) {
        MB *m = mb_scalar(val_as_double(&first), e);
        *out = val_matrix(m);
    } else *out = val_retain(first);
    val_release(&res);
    return 0;
}

/* ---- tuples (multi-output builtins) ---- */

static int tuple(Value *out, MB **ms, int n, BrErr *e)
{
    Value l = val_list_new(n);
    int rc = 0;
    for (int i = 0; i < n; i++) {
        if (!rc) rc = list_append(l.kind == V_LIST ? l.l : NULL, val_matrix(ms[i]), NULL, e);
        else mb_release(ms[i]);
    }
    if (rc) { val_release(&l); return rc; }
    *out = l;
    return 0;
}

static OpCode binop_by_name(const char *s)
{
    for (int i = 0; i < OP__COUNT; i++)
        if (op_info[i].kind == OK_BINARY && strcmp(op_info[i].name, s) == 0) return (OpCode)i;
    return OP__COUNT;
}

/* ---- dispatch ---- */

/* [L2, x] = remove(L, pos): L without item pos, and the item. */
static int b_remove(Value *a, Value *out, BrErr *e)
{
    double d;
    int rc = 0;   
    if (a[0].kind != V_LIST) return br_err(e, BR_EARG, "remove: target must be a list, not a %s",
                                           val_kind_name(a[0].kind));
    if ((rc = bi_num(&a[1], "pos", &d, e))) return rc;
    const List *L = a[0].l;
    if (d != floor(d) || d < 1 || d > L->n)
        return br_err(e, BR_EINDEX, "remove: index %g out of bounds for a list of length %d", d, L->n);
    int pos = (int)d - 1;
    Value rest = val_list_new(L->n);
    for (int i = 0; i < L->n && !rc; i++)
        if (i != pos) rc = list_append(rest.l, val_retain(L->items[i]), L->names ? L->names[i] : NULL, e);
    Value res = val_list_new(2);
    if (!rc) rc = list_append(res.l, rest, NULL, e);
    else val_release(&rest);
    if (!rc) rc = list_append(res.l, val_retain(L->items[pos]), NULL, e);
    if (rc) val_release(&res);
    else *out = res;
    return rc;
}

/* cbind/rbind of matrices (or of a list's items), string concatenation of
 * scalars, append(L, x) of a list. */
static int b_bind(const Instr *h, Value *va, int nv, Value *out, BrErr *e)
{
    int rc = 0;
    if (nv == 1 && va[0].kind == V_LIST) {   /* cbind(L), rbind(L): of the list's items */
        if (va[0].l->n == 0) return br_err(e, BR_EARG, "%s of an empty list", builtin_info[h->bi].name);
        nv = va[0].l->n;
        va = va[0].l->items;
    }
    bool scalars = h->bi == BI_CBIND && nv >= 2;
    for (int i = 0; i < nv && scalars; i++) scalars = val_is_scalar(&va[i]);
    if (scalars) return str_append(va, nv, out, e);
    if (h->bi == BI_CBIND && nv == 2 && va[0].kind == V_LIST) {
        /* append(L, x): a copy of list L with x added (unnamed). As in
           SystemDS, a list x of one element adds that element, under its
           name when L is a named list (executePipeline appends
           list(X=...) to a fit function's named states this way) */
        Value l = val_list_copy(va[0].l, e);
        if (l.kind == V_NONE) return e->code;
        Value x = va[1];
        const char *nm = NULL;
        if (x.kind == V_LIST && x.l->n == 1) {
            nm = l.l->names && x.l->names ? x.l->names[0] : NULL;
            x = x.l->items[0];
        }
        if (list_append(l.l, val_retain(x), nm, e)) { val_release(&l); return e->code; }
        *out = l;
        return 0;
    }
    const MB **ms = calloc((size_t)nv + 1, sizeof(MB *));
    MB **tmp = calloc((size_t)nv + 1, sizeof(MB *));
    for (int i = 0; i < nv && !rc; i++)
        if (!(ms[i] = mat(&va[i], h->bi == BI_CBIND ? "cbind" : "rbind", &tmp[i], e))) rc = e->code;
    if (!rc)
        rc = bi_ret_mb(h->bi == BI_CBIND ? k_cbind(nv, ms, e) : k_rbind(nv, ms, e), out, e);
    for (int i = 0; i < nv; i++) mb_release(tmp[i]);
    free(ms);
    free(tmp);
    return rc;
}

/* Cumulative aggregates and order statistics (median, quantile, moment,
 * cov). BI_NOT_MINE for other builtins. */
static int b_order_stats(const Instr *h, Value *a, Value *va, int nv, Value *out, BrErr *e)
{
    MB *t[3] = {NULL, NULL, NULL};
    const MB *m0 = NULL, *m1 = NULL, *m2 = NULL;
    double d, d2;
    int rc = 0;
    switch (h->bi) {
    case BI_CUMSUM: case BI_CUMPROD: case BI_CUMMIN: case BI_CUMMAX: {
        OpCode op = h->bi == BI_CUMSUM ? OP_CUMSUM : h->bi == BI_CUMPROD ? OP_CUMPROD
                  : h->bi == BI_CUMMIN ? OP_CUMMIN : OP_CUMMAX;
        if (!(m0 = mat(&a[0], "target", &t[0], e))) return e->code;
        rc = bi_ret_mb(k_cum(op, m0, e), out, e);
        break;
    }
    case BI_MEDIAN: case BI_QUANTILE: {
        Value *w = h->bi == BI_MEDIAN ? &a[1] : &a[2];
        Value *p = &a[1];
        if (h->bi == BI_QUANTILE && bi_given(&a[2])) { w = &a[1]; p = &a[2]; }
        if (!(m0 = mat(&a[0], "target", &t[0], e))) return e->code;
        if (bi_given(w) && !(m1 = mat(w, "weights", &t[1], e))) { rc = e->code; break; }
        if (!bi_given(w)) m1 = NULL;
        if (h->bi == BI_MEDIAN) {
            rc = m1 ? k_median_w(m0, m1, &d, e) : k_median(m0, &d, e);
            if (!rc) *out = val_double(d);
        } else if (p->kind == V_MATRIX) {
            rc = bi_ret_mb(m1 ? k_quantile_w(m0, m1, p->m, e) : k_quantile(m0, p->m, e), out, e);
        } else {
            if ((rc = bi_num(p, "p", &d2, e))) break;
            if (m1) {
                MB *pm = mb_scalar(d2, e);
                MB *r = k_quantile_w(m0, m1, pm, e);
                mb_release(pm);
                if (!r) { rc = e->code; break; }
                *out = val_double(mb_get(r, 0, 0));
                mb_release(r);
            } else {
                rc = k_quantile1(m0, d2, &d, e);
                if (!rc) *out = val_double(d);
            }
        }
        break;
    }
    case BI_MOMENT: {
        Value *ord = &a[1], *w = &a[2];
        if (bi_given(&a[2]) && a[1].kind == V_MATRIX) { ord = &a[2]; w = &a[1]; }
        if (!(m0 = mat(&a[0], "target", &t[0], e))) return e->code;
        if ((rc = bi_num(ord, "order", &d2, e))) break;
        m1 = NULL;
        if (bi_given(w) && !(m1 = mat(w, "weights", &t[1], e))) { rc = e->code; break; }
        rc = k_moment(m0, (int)d2, m1, &d, e);
        if (!rc) *out = val_double(d);
        break;
    }
    case BI_COV:
        if (!(m0 = mat(&a[0], "x", &t[0], e)) || !(m1 = mat(&a[1], "y", &t[1], e))) { rc = e->code; break; }
        m2 = NULL;
        if (bi_given(&a[2]) && !(m2 = mat(&a[2], "weights", &t[2], e))) { rc = e->code; break; }
        rc = k_cov(m0, m1, m2, &d, e);
        if (!rc) *out = val_double(d);
        break;
    default: return BI_NOT_MINE;
    }
    for (int i = 0; i < 3; i++) mb_release(t[i]);
    return rc;
}

/* Builtins over matrix arguments: outer, reorganizations, tables,
 * grouped aggregates, linear algebra. BI_NOT_MINE for other builtins. */
static int b_matrix_ops(const Instr *h, Value *a, Value *va, int nv, Value *out, BrErr *e)
{
    MB *t[3] = {NULL, NULL, NULL};
    const MB *m0 = NULL, *m1 = NULL, *m2 = NULL;
    double d, d2;
    bool b, b2;
    int rc = 0;
    switch (h->bi) {
    case BI_OUTER: {
        const char *ops = bi_given(&a[2]) ? bi_str(&a[2], "op", e) : "*";
        if (!ops) return e->code;
        OpCode op = binop_by_name(ops);
        if (op == OP__COUNT) return br_err(e, BR_EARG, "outer: unknown operator \"%s\"", ops);
        if (!(m0 = mat(&a[0], "x", &t[0], e)) || !(m1 = mat(&a[1], "y", &t[1], e))) { rc = e->code; break; }
        /* SystemDS checks outer's vector shapes only when it knows them at
         * compile time; at run time it is a broadcasting binary operation,
         * so equal shapes (mdedup's outer(J, t(J), "+")), a matrix with a
         * row vector, and a column vector with a matrix of as many rows
         * (raJoin's sort-merge outer(outBucket, seqMatrix, "==")) work
         * there (shapes whose result is rows(x) x cols(y)) */
        if ((m0->cols != 1 || m1->rows != 1) &&
            ((m0->rows == m1->rows && m0->cols == m1->cols) || (m1->rows == 1 && m0->cols == m1->cols) ||
             (m0->cols == 1 && m0->rows == m1->rows)))
            rc = bi_ret_mb(k_binary(op, m0, m1, e), out, e);
        else
            rc = bi_ret_mb(k_outer(m0, m1, op, e), out, e);
        break;
    }
    case BI_RMEMPTY: {
        const char *margin = bi_str(&a[1], "margin", e);
        if (!margin) return e->code;
        if (strcmp(margin, "rows") && strcmp(margin, "cols"))
            return br_err(e, BR_EARG, "removeEmpty: margin must be \"rows\" or \"cols\", not \"%s\"", margin);
        b = true;
        if (bi_given(&a[3]) && bi_bool(&a[3], "empty.return", &b, e)) return e->code;
        if (!(m0 = mat(&a[0], "target", &t[0], e))) return e->code;
        m1 = NULL;
        if (bi_given(&a[2]) && !(m1 = mat(&a[2], "select", &t[1], e))) { rc = e->code; break; }
        rc = bi_ret_mb(k_rmempty(m0, margin[0] == 'r', m1, b, e), out, e);
        break;
    }
    case BI_REPLACE:
        if (!(m0 = mat(&a[0], "target", &t[0], e))) return e->code;
        if ((rc = bi_num(&a[1], "pattern", &d, e)) || (rc = bi_num(&a[2], "replacement", &d2, e))) break;
        rc = bi_ret_mb(k_replace(m0, d, d2, e), out, e);
        break;
    case BI_ORDER: {
        if (!(m0 = mat(&a[0], "target", &t[0], e))) return e->code;
        d = 1;
        b = b2 = false;
        /* by= a vector of column indexes orders by several columns */
        const MB *byv = bi_given(&a[1]) && a[1].kind == V_MATRIX &&
                        a[1].m->rows * a[1].m->cols > 1 ? a[1].m : NULL;
        if ((bi_given(&a[1]) && !byv && (rc = bi_num(&a[1], "by", &d, e))) ||
            (bi_given(&a[2]) && (rc = bi_bool(&a[2], "decreasing", &b, e))) ||
            (bi_given(&a[3]) && (rc = bi_bool(&a[3], "index.return", &b2, e)))) break;
        if (byv) {
            if (byv->rows != 1 && byv->cols != 1) {
                rc = br_err(e, BR_EDIM, "order: by= must be a number or a vector, not a %lldx%lld matrix",
                            (long long)byv->rows, (long long)byv->cols);
                break;
            }
            int64_t nby = byv->rows * byv->cols;
            int64_t *cols = br_malloc((size_t)nby * sizeof(int64_t));
            if (!cols) { rc = br_err(e, BR_ENOMEM, "out of memory"); break; }
            for (int64_t k = 0; k < nby && !rc; k++) {
                double v = mb_get(byv, byv->rows == 1 ? 0 : k, byv->rows == 1 ? k : 0);
                if (!(v >= 1 && v <= m0->cols))
                    rc = br_err(e, BR_EINDEX, "order: by=%g is out of the column index range", v);
                cols[k] = (int64_t)v - 1;
            }
            if (!rc) rc = bi_ret_mb(k_order_multi(m0, cols, nby, b, b2, e), out, e);
            free(cols);
            break;
        }
        if (d < 1 || d > m0->cols) { rc = br_err(e, BR_EINDEX, "order: by=%g is out of the column index range", d); break; }
        rc = bi_ret_mb(k_order(m0, (int64_t)d - 1, b, b2, e), out, e);
        break;
    }
    case BI_LOWERTRI: case BI_UPPERTRI:
        if (!(m0 = mat(&a[0], "target", &t[0], e))) return e->code;
        b = b2 = false;
        if ((bi_given(&a[1]) && (rc = bi_bool(&a[1], "diag", &b, e))) ||
            (bi_given(&a[2]) && (rc = bi_bool(&a[2], "values", &b2, e)))) break;
        rc = bi_ret_mb(k_tri(m0, h->bi == BI_LOWERTRI, b, b2, e), out, e);
        break;
    case BI_UNIQUE: {
        /* SystemDS's dir: "rc" (default), "r" or "c", any case */
        if (!(m0 = mat(&a[0], "target", &t[0], e))) return e->code;
        int dir = 0;
        if (bi_given(&a[1])) {
            if (a[1].kind != V_STRING)
                return br_err(e, BR_EARG, "unique: dir must be a string (\"rc\", \"r\" or \"c\")");
            const char *d = a[1].s->s;
            if (!strcasecmp(d, "r")) dir = 1;
            else if (!strcasecmp(d, "c")) dir = 2;
            else if (strcasecmp(d, "rc"))
                return br_err(e, BR_EARG, "unique: dir \"%s\" is not recognized (\"rc\", \"r\" or \"c\")", d);
        }
        rc = bi_ret_mb(k_unique(m0, dir, e), out, e);
        break;
    }
    case BI_TABLE: {
        /* table(A, B, W, odim1, odim2, outputEmptyBlocks): the last
         * one says how SystemDS stores empty blocks; no effect here */
        if (nv == 6) nv = 5;
        if (nv < 2 || nv > 5) return br_err(e, BR_EARG, "table: expects 2 to 6 arguments, got %d", nv);
        Value *A = &va[0], *B = &va[1], *W = NULL, *o1 = NULL, *o2 = NULL;
        if (nv == 3) W = &va[2];
        if (nv == 4) { o1 = &va[2]; o2 = &va[3]; }
        if (nv == 5) { W = &va[2]; o1 = &va[3]; o2 = &va[4]; }
        double od1 = -1, od2 = -1, as = 0, bs = 0, ws = 1;
        if (o1 && ((rc = bi_num(o1, "odim1", &od1, e)) || (rc = bi_num(o2, "odim2", &od2, e)))) break;
        if (A->kind != V_MATRIX && (rc = bi_num(A, "A", &as, e))) break;
        if (B->kind != V_MATRIX && (rc = bi_num(B, "B", &bs, e))) break;
        if (W && W->kind != V_MATRIX && (rc = bi_num(W, "W", &ws, e))) break;
        rc = bi_ret_mb(k_table(A->kind == V_MATRIX ? A->m : NULL, as, B->kind == V_MATRIX ? B->m : NULL, bs,
                            W && W->kind == V_MATRIX ? W->m : NULL, ws, (int64_t)od1, (int64_t)od2, e), out, e);
        break;
    }
    case BI_AGGREGATE: {
        const char *fn = bi_given(&a[2]) ? bi_str(&a[2], "fn", e) : "sum";
        if (!fn) return e->code;
        d = -1;
        if (bi_given(&a[3]) && (rc = bi_num(&a[3], "ngroups", &d, e))) break;
        if (!(m0 = mat(&a[0], "target", &t[0], e)) || !(m1 = mat(&a[1], "groups", &t[1], e))) { rc = e->code; break; }
        m2 = NULL;
        if (bi_given(&a[4]) && !(m2 = mat(&a[4], "weights", &t[2], e))) { rc = e->code; break; }
        if (!strcmp(fn, "centralmoment")) {
            /* order: a number, or a string as SystemDS's scripts pass it */
            double ord = 0;
            if (!bi_given(&a[5])) rc = br_err(e, BR_EARG, "aggregate: centralmoment needs order=");
            else if (a[5].kind == V_STRING) ord = atof(a[5].s->s);
            else rc = bi_num(&a[5], "order", &ord, e);
            if (!rc) rc = bi_ret_mb(k_groupagg_cm(m0, m1, m2, (int)ord, ops_dml_long(d), e), out, e);
        } else {
            rc = bi_ret_mb(k_groupagg(m0, m1, m2, fn, ops_dml_long(d), e), out, e);
        }
        break;
    }
    case BI_SOLVE:
        if (!(m0 = mat(&a[0], "a", &t[0], e)) || !(m1 = mat(&a[1], "b", &t[1], e))) { rc = e->code; break; }
        rc = bi_ret_mb(k_solve(m0, m1, e), out, e);
        break;
    case BI_INV: case BI_CHOLESKY: case BI_DET: case BI_EIGEN: case BI_SVD: case BI_QR: case BI_LU: {
        if (!(m0 = mat(&a[0], "target", &t[0], e))) return e->code;
        MB *r[3] = {0};
        switch (h->bi) {
        case BI_INV: rc = bi_ret_mb(k_inv(m0, e), out, e); break;
        case BI_CHOLESKY: rc = bi_ret_mb(k_cholesky(m0, e), out, e); break;
        case BI_DET: rc = k_det(m0, &d, e); if (!rc) *out = val_double(d); break;
        case BI_EIGEN: rc = k_eigen(m0, &r[0], &r[1], e); if (!rc) tuple(out, r, 2, e); break;
        case BI_SVD: rc = k_svd(m0, &r[0], &r[1], &r[2], e); if (!rc) tuple(out, r, 3, e); break;
        case BI_QR: rc = k_qr(m0, &r[0], &r[1], e); if (!rc) tuple(out, r, 2, e); break;
        case BI_LU: rc = k_lu(m0, &r[0], &r[1], &r[2], e); if (!rc) tuple(out, r, 3, e); break;
        default: break;
        }
        break;
    }
    default: return BI_NOT_MINE;
    }
    for (int i = 0; i < 3; i++) mb_release(t[i]);
    return rc;
}

/* The builtins of this file (ops.def's handler bi_core): data generation,
 * I/O, printing, control, lists, casts, and (b_order_stats,
 * b_matrix_ops) builtins over matrices. */
int bi_core(Rt *rt, Frame *f, const Instr *h, Value *a, Value *out, BrErr *e)
{
    bool b;
    int rc = 0;
    int nv = h->nvar;
    Value *va = a + (h->nin - nv);
    switch (h->bi) {
    case BI_MATRIX: return b_matrix(a, out, e);
    case BI_RAND: return b_rand(rt, a, out, e);
    case BI_SEQ: return b_seq(a, out, e);
    case BI_SAMPLE: return b_sample(rt, a, out, e);
    case BI_READ: return b_read(a, out, e);
    case BI_WRITE: return b_write(a, e);
    case BI_PRINT: return b_print(rt, h, va, e);
    case BI_TOSTRING: return b_tostring(a, out, e);
    case BI_EVAL: case BI_EVALLIST: return b_eval(rt, f, h, a, out, e);
    case BI_PARAMSERV: return bi_paramserv(rt, f, h, a, out, e);
    case BI_STOP: {
        char *s = val_text(&a[0], false);
        br_err(e, BR_EFAIL, "%s", s);
        free(s);
        return e->code;
    }
    case BI_ASSERT:
        if (!val_truth(&a[0], &b, e)) return e->code;
        if (!b) return br_err(e, BR_EFAIL, "assertion failed");
        *out = val_bool(true);
        return 0;
    case BI_TIME: rt_bound_mark(); *out = val_int(br_now_ns()); return 0;
    case BI_NROW: case BI_NCOL: case BI_LENGTH:
        if (a[0].kind == V_MATRIX) {
            int64_t v = h->bi == BI_NROW ? a[0].m->rows : h->bi == BI_NCOL ? a[0].m->cols
                      : a[0].m->rows * a[0].m->cols;
            *out = val_int(v);
        } else if (a[0].kind == V_LIST) {
            *out = val_int(h->bi == BI_NCOL ? 1 : a[0].l->n);
        } else *out = val_int(1);
        return 0;
    case BI_EXISTS: *out = val_bool(bi_given(&a[0])); return 0;
    case BI_TYPEOF:
        *out = val_string(a[0].kind == V_MATRIX ? "Matrix" : a[0].kind == V_LIST ? "List" : "Scalar");
        return 0;
    case BI_LINEAGE:   /* reached only untraced (the interpreter answers it while tracing:
                          runtime/lintrace.c), as SystemDS without -lineage fails */
        return br_err(e, BR_EFAIL, "lineage: lineage trace unavailable: tracing is on for scripts "
                      "whose loaded files call lineage() (docs/DESIGN.md, Lineage)");
    case BI_ASSCALAR: return b_as_scalar(a, out, e);
    case BI_COMPRESS: case BI_DECOMPRESS: return b_compress(h->bi == BI_COMPRESS, a, out, e);
    case BI_QCOMPRESS: return b_quantize_compress(a, out, e);
    case BI_LOCAL:   /* braid's values are all local already */
        if (a[0].kind != V_MATRIX)
            return br_err(e, BR_EARG, "local: the argument must be a matrix, not a %s", val_kind_name(a[0].kind));
        *out = val_retain(a[0]);
        return 0;
    case BI_ASMATRIX: return b_as_matrix(a, out, e);
    case BI_ASDOUBLE: case BI_ASINTEGER: case BI_ASLOGICAL: case BI_ASBOOLEAN:
        return b_cast(h->bi, a, out, e);
    case BI_LIST: {
        Value l = val_list_new(nv);
        int rc = 0;
        for (int i = 0; i < nv && !rc; i++)
            rc = list_append(l.kind == V_LIST ? l.l : NULL, val_retain(va[i]), h->anames ? h->anames[i] : NULL, e);
        if (rc) { val_release(&l); return rc; }
        *out = l;
        return 0;
    }
    case BI_REMOVE: return b_remove(a, out, e);
    case BI_CBIND: case BI_RBIND: return b_bind(h, va, nv, out, e);
    case BI_EINSUM: return b_einsum(va, nv, out, e);
    case BI_MIN: case BI_MAX: case BI_PMIN: case BI_PMAX: {
        bool isMin = h->bi == BI_MIN || h->bi == BI_PMIN;
        if (nv == 0) return br_err(e, BR_EARG, "%s needs arguments", builtin_info[h->bi].name);
        if (nv == 1) return ap_agg(isMin ? OP_AMIN : OP_AMAX, DIR_FULL, &va[0], out, e);
        Value acc = val_retain(va[0]);
        for (int i = 1; i < nv && !rc; i++) {
            Value nx;
            rc = ap_binary(isMin ? OP_MIN : OP_MAX, &acc, &va[i], &nx, e);
            val_release(&acc);
            if (!rc) acc = nx;
        }
        if (!rc) *out = acc;
        return rc;
    }
    case BI_LOG:
        if (bi_given(&a[1])) return ap_binary(OP_LOGB, &a[0], &a[1], out, e);
        return ap_unary(OP_LOG, &a[0], out, e);
    case BI_XOR: return ap_binary(OP_XOR, &a[0], &a[1], out, e);
    case BI_BITAND: return ap_binary(OP_BITAND, &a[0], &a[1], out, e);
    case BI_BITOR: return ap_binary(OP_BITOR, &a[0], &a[1], out, e);
    case BI_BITXOR: return ap_binary(OP_BITXOR, &a[0], &a[1], out, e);
    case BI_SHIFTL: return ap_binary(OP_SHIFTL, &a[0], &a[1], out, e);
    case BI_SHIFTR: return ap_binary(OP_SHIFTR, &a[0], &a[1], out, e);
    case BI_IFELSE: return ap_ternary(&a[0], &a[1], &a[2], out, e);
    case BI_PPRED: {
        OpCode cmp = a[2].kind == V_STRING ? ops_cmp_by_name(a[2].s->s) : OP__COUNT;
        if (cmp == OP__COUNT)
            return br_err(e, BR_EARG, "ppred: the comparison must be one of \"> >= < <= == !=\"");
        return ap_binary(cmp, &a[0], &a[1], out, e);
    }
    case BI_IFDEF:
        *out = val_retain(bi_given(&a[0]) ? a[0] : a[1]);
        return 0;
    default: {
        int r = b_order_stats(h, a, va, nv, out, e);
        return r == BI_NOT_MINE ? b_matrix_ops(h, a, va, nv, out, e) : r;
    }
    }
}

int bi_operator(Rt *rt, Frame *f, const Instr *h, Value *a, Value *out, BrErr *e)
{
    const BuiltinInfo *bi = &builtin_info[h->bi];
    if (bi->op == OP__COUNT) return BI_NOT_MINE;
    switch (op_info[bi->op].kind) {
    case OK_UNARY: return ap_unary(bi->op, &a[0], out, e);
    case OK_AGG: return ap_agg(bi->op, bi->dir, &a[0], out, e);
    case OK_REORG: return ap_reorg(bi->op, &a[0], out, e);
    default: return BI_NOT_MINE;
    }
}

/* The library's handler of every builtin, from ops.def's handler column. */
static const BiHandler handlers[BI__COUNT] = {
#define BUILTIN(id, name, lowers, result, handler, params) [BI_##id] = handler,
#include "../base/ops.def"
};

int bi_builtin(Rt *rt, Frame *f, const Instr *h, Value *a, Value *out, BrErr *e)
{
    /* frames first: their own builtins, and generic ones with a frame argument */
    int rc = bi_frame(rt, f, h, a, out, e);
    if (rc != BI_NOT_MINE) return rc;
    assert(h->bi >= 0 && h->bi < BI__COUNT);
    BiHandler run = handlers[h->bi];
    rc = run && run != bi_frame ? run(rt, f, h, a, out, e) : BI_NOT_MINE;
    if (rc != BI_NOT_MINE) return rc;
    return br_err(e, BR_EFAIL, "builtin '%s' is not implemented", builtin_info[h->bi].name);
}
