/* apply.c: the semantics of the operators over run-time values (see
 * apply.h): scalar arithmetic (int64 vs double vs boolean vs string, as
 * SystemDS), matrix kernels for matrix operands, aggregates, indexing of
 * matrices, frames and lists, comparisons of frames. */
#include "apply.h"
#include "cla.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../matrix/fb.h"
#include "agg.h"
#include "ew.h"
#include "mm.h"
#include "reorg.h"

/* ---- frames ---- */

/* A value as a frame: frames are borrowed; matrices and scalars convert
 * into *tmp (caller releases). */
const FB *ap_as_frame(const Value *v, const char *what, FB **tmp, BrErr *e)
{
    *tmp = NULL;
    if (v->kind == V_FRAME) return v->f;
    if (v->kind == V_MATRIX) return *tmp = fb_from_mb(v->m, e);
    if (val_is_scalar(v)) {
        FbType t = v->kind == V_STRING ? FB_STRING : v->kind == V_INT ? FB_INT64 : v->kind == V_BOOL ? FB_BOOL : FB_FP64;
        if (!(*tmp = fb_new(1, 1, &t, e))) return NULL;
        if (t == FB_STRING) fb_set_text(*tmp, 0, 0, v->s->s, v->s->len, e);
        else if (t == FB_INT64) (*tmp)->c[0]->i[0] = v->i;
        else fb_set_num(*tmp, 0, 0, val_as_double(v), e);
        if (e->code) { fb_release(*tmp); *tmp = NULL; }
        return *tmp;
    }
    br_err(e, BR_EARG, "%s: expected a frame, not a %s", what, val_kind_name(v->kind));
    return NULL;
}

/* The outcome of comparison op for c = sign of (x - y). */
static bool cmp_holds(OpCode op, int c)
{
    switch (op) {
    case OP_LT: return c < 0;
    case OP_LE: return c <= 0;
    case OP_GT: return c > 0;
    case OP_GE: return c >= 0;
    case OP_EQ: return c == 0;
    default:    return c != 0;   /* OP_NE */
    }
}

static int frame_compare(OpCode op, const FB *a, const FB *b, Value *out, BrErr *e)
{
    if (a->rows != b->rows || a->cols != b->cols)
        return br_err(e, BR_EDIM, "frame comparison '%s': dimension mismatch: %lldx%lld and %lldx%lld",
                      op_info[op].name, (long long)a->rows, (long long)a->cols, (long long)b->rows,
                      (long long)b->cols);
    FbType *types = br_malloc((size_t)(a->cols ? a->cols : 1) * sizeof(FbType));
    if (!types) return br_err(e, BR_ENOMEM, "out of memory");
    for (int64_t j = 0; j < a->cols; j++) types[j] = FB_BOOL;
    FB *r = fb_new(a->rows, a->cols, types, e);
    free(types);
    if (!r) return e->code;
    char ba[40], bb[40];
    for (int64_t j = 0; j < a->cols; j++) {
        FbType ta = a->c[j]->type, tb = b->c[j]->type;
        FbCol *rc = fb_col_mut(r, j, e);
        if (!rc) { fb_release(r); return e->code; }
        for (int64_t i = 0; i < a->rows; i++) {
            int c;
            if (ta == FB_STRING || tb == FB_STRING) {
                const char *x = fb_cell_text(a, i, j, ba), *y = fb_cell_text(b, i, j, bb);
                if (!x || !y) { rc->b[i] = !x && !y; continue; }
                c = strcmp(x, y);
            } else if (ta == FB_FP64 || tb == FB_FP64 || ta == FB_INT64 || tb == FB_INT64) {
                bool ok;
                double x = fb_get_num(a, i, j, &ok), y = fb_get_num(b, i, j, &ok);
                if (isnan(x) || isnan(y)) { rc->b[i] = op == OP_NE; continue; }
                c = (x > y) - (x < y);
            } else {
                c = (int)a->c[j]->b[i] - (int)b->c[j]->b[i];
            }
            rc->b[i] = cmp_holds(op, c);
        }
    }
    *out = val_frame(r);
    return 0;
}

static int frame_lix(const FB *t, int64_t rl, int64_t ru, int64_t cl, int64_t cu, const Value *src, Value *out,
                     BrErr *e)
{
    if (val_is_scalar(src) && (ru - rl != 1 || cu - cl != 1))
        return br_err(e, BR_EDIM, "left indexing: dimension mismatch: a scalar can only be assigned to a single cell, not a %lldx%lld block",
                      (long long)(ru - rl), (long long)(cu - cl));
    FB *tmp;
    const FB *s = ap_as_frame(src, "left indexing", &tmp, e);
    if (!s) return e->code;
    FB *r = fb_lix(t, rl, ru, cl, cu, s, e);
    fb_release(tmp);
    if (!r) return e->code;
    *out = val_frame(r);
    return 0;
}

/* ---- scalars ---- */

static bool intlike(const Value *v) { return v->kind == V_INT || v->kind == V_BOOL; }
static int64_t ival(const Value *v) { return v->kind == V_INT ? v->i : (int64_t)v->b; }

static bool is_1x1(const Value *v) { return v->kind == V_MATRIX && v->m->rows == 1 && v->m->cols == 1; }

static int scalar_binary(OpCode op, const Value *a, const Value *b, Value *out, BrErr *e)
{
    if (a->kind == V_STRING || b->kind == V_STRING) {
        if (op == OP_PLUS) {
            char *x = val_text(a, false), *y = val_text(b, false);
            size_t lx = x ? strlen(x) : 0, ly = y ? strlen(y) : 0;
            char *s = x && y ? br_malloc(lx + ly + 1) : NULL;
            if (s) {
                memcpy(s, x, lx);
                memcpy(s + lx, y, ly + 1);
                *out = val_string(s);
            }
            free(s); free(x); free(y);
            return s && out->kind == V_STRING ? 0 : br_err(e, BR_ENOMEM, "out of memory");
        }
        if (op_info[op].flags & OF_CMP) {
            /* a string against a number compares as strings, the number in
             * its printed form (SystemDS does so; its als.dml relies on
             * `reg != "L2"` being true for every number) */
            char *x = val_text(a, false), *y = val_text(b, false);
            int c = strcmp(x, y);
            free(x); free(y);
            bool r = op == OP_EQ ? c == 0 : op == OP_NE ? c != 0 : op == OP_LT ? c < 0
                   : op == OP_LE ? c <= 0 : op == OP_GT ? c > 0 : c >= 0;
            *out = val_bool(r);
            return 0;
        }
        return br_err(e, BR_EARG, "operator '%s' is not defined for strings", op_info[op].name);
    }
    if (op_info[op].type == TY_BOOL) {   /* comparisons, &, |, xor */
        *out = val_bool(ops_binary(op, val_as_double(a), val_as_double(b)) != 0);
        return 0;
    }
    if (intlike(a) && intlike(b)) {
        int64_t x = ival(a), y = ival(b);
        switch (op) {
        case OP_PLUS: *out = val_int((int64_t)((uint64_t)x + (uint64_t)y)); return 0;
        case OP_MINUS: *out = val_int((int64_t)((uint64_t)x - (uint64_t)y)); return 0;
        case OP_MULT: *out = val_int((int64_t)((uint64_t)x * (uint64_t)y)); return 0;
        case OP_MIN: *out = val_int(x < y ? x : y); return 0;
        case OP_MAX: *out = val_int(x > y ? x : y); return 0;
        case OP_INTDIV:
            if (y == 0 || (x == INT64_MIN && y == -1)) break;
            *out = val_int(x / y);
            return 0;
        case OP_MOD:
            if (y == 0 || (x == INT64_MIN && y == -1)) break;
            *out = val_int(x % y);
            return 0;
        case OP_BITAND: case OP_BITOR: case OP_BITXOR: case OP_SHIFTL: case OP_SHIFTR:
            *out = val_int((int64_t)ops_binary(op, (double)x, (double)y));
            return 0;
        default: break;
        }
    }
    *out = val_double(ops_binary(op, val_as_double(a), val_as_double(b)));
    return 0;
}

static int wrap(MB *m, Value *out, BrErr *e)
{
    if (!m) return e->code ? e->code : br_err(e, BR_EFAIL, "operation failed");
    *out = val_matrix(m);
    return 0;
}

static int need_numeric(const Value *v, const char *what, BrErr *e)
{
    if (v->kind == V_MATRIX || val_is_numeric(v)) return 0;
    return br_err(e, BR_EARG, "%s: expected a matrix or a number, got a %s", what, val_kind_name(v->kind));
}

/* ---- compressed inputs (docs/cla.md) ----
 * The interpreter hands a compressed block only to the operations that
 * cla_handles() names; these route them to kernels/cla_ops.c. Other
 * callers' compressed blocks are decompressed (plain). */

/* m, or m decompressed into *tmp (caller releases). */
static const MB *plain(const MB *m, MB **tmp, BrErr *e)
{
    *tmp = NULL;
    return m->cmb ? (*tmp = cmb_decompress(m, e)) : m;
}

/* A cellwise f(x) (kind 1) / x op x (kind 2) / x op s / s op x (kind 0)
 * over the dictionaries of compressed x; when the result cannot stay compressed (cla_scalar's NULL without
 * error), over the decompressed block. */
static int cell_cla(OpCode op, int kind, const MB *x, double s, bool left, Value *out, BrErr *e)
{
    MB *r = kind == 1 ? cla_unary(op, x, e) : kind == 2 ? cla_self(op, x, e) : cla_scalar(op, x, s, left, e);
    if (r || e->code) return wrap(r, out, e);
    MB *d = cmb_decompress(x, e);
    if (!d) return e->code;
    r = kind == 1 ? k_unary(op, d, e) : kind == 2 ? k_binary(op, d, d, e)
      : left ? k_binary_sm(op, s, d, e) : k_binary_ms(op, d, s, e);
    mb_release(d);
    return wrap(r, out, e);
}

/* The matrix product physical operators over a compressed operand. */
static MB *matmul_cla(OpCode op, int left, const MB *x, const MB *y, const MB *w, BrErr *e)
{
    if (op == OP_TSMM && left && x->cmb) return cla_tsmm(x, e);
    if (op == OP_MMCHAIN && x->cmb && !y->cmb && !(w && w->cmb)) return cla_mmchain(x, y, w, e);
    if (op == OP_MATMULTL && x->cmb && !y->cmb) return cla_matmul_tl(x, y, e);
    if (op == OP_MATMULTL && y->cmb && !x->cmb) return cla_matmul_tl_left(x, y, e);
    if (op == OP_MATMUL && x->cmb && !y->cmb) return cla_matmul_right(x, y, e);
    if (op == OP_MATMUL && y->cmb && !x->cmb) return cla_matmul_left(x, y, e);
    MB *tx, *ty = NULL, *tw = NULL, *r = NULL;
    const MB *px = plain(x, &tx, e), *py = px && y ? plain(y, &ty, e) : NULL, *pw = w ? plain(w, &tw, e) : NULL;
    if (px && (op == OP_TSMM || py) && (!w || pw))
        r = op == OP_TSMM ? k_tsmm(px, left != 0, e) : op == OP_MMCHAIN ? k_mmchain(px, py, pw, e)
          : op == OP_MATMULTL ? k_matmul_tl(px, py, e) : k_matmul(px, py, e);
    mb_release(tx);
    mb_release(ty);
    mb_release(tw);
    return r;
}

/* t([x y]) %*% [x y] with a compressed operand: its three parts as the
 * separate operators compute them (the compressed products where they
 * exist). */
static MB *tsmm_cbind_cla(const MB *x, const MB *y, BrErr *e)
{
    if (x->rows != y->rows) {
        br_err(e, BR_EDIM, "tsmm of [x v]: x has %lld rows, v %lld", (long long)x->rows, (long long)y->rows);
        return NULL;
    }
    MB *a = matmul_cla(OP_TSMM, 1, x, NULL, NULL, e);
    MB *b = a ? matmul_cla(OP_MATMULTL, 0, x, y, NULL, e) : NULL;
    MB *c = b ? matmul_cla(OP_TSMM, 1, y, NULL, NULL, e) : NULL;
    MB *r = c ? k_tsmm_cbind_of(a, b, c, e) : NULL;
    mb_release(a);
    mb_release(b);
    mb_release(c);
    return r;
}

int ap_unary(OpCode op, const Value *a, Value *out, BrErr *e)
{
    if (a->kind == V_MATRIX && a->m->cmb) return cell_cla(op, 1, a->m, 0, false, out, e);
    if (a->kind == V_MATRIX) return wrap(k_unary(op, a->m, e), out, e);
    if (op == OP_NOT) {
        if (a->kind == V_STRING) return br_err(e, BR_EARG, "'!' is not defined for strings");
        *out = val_bool(val_as_double(a) == 0);
        return 0;
    }
    if (need_numeric(a, op_info[op].name, e)) return e->code;
    if (intlike(a) && (op == OP_NEG || op == OP_ABS)) {
        int64_t x = ival(a);
        *out = val_int(op == OP_NEG ? -x : (x < 0 ? -x : x));
        return 0;
    }
    double r = ops_unary(op, val_as_double(a));
    if (op_info[op].type == TY_BOOL) { *out = val_bool(r != 0); return 0; }   /* is.na, ... */
    *out = val_double(r);
    return 0;
}

int ap_binary(OpCode op, const Value *a, const Value *b, Value *out, BrErr *e)
{
    bool am = a->kind == V_MATRIX, bm = b->kind == V_MATRIX;
    if (a->kind == V_FRAME && b->kind == V_FRAME && (op_info[op].flags & OF_CMP))
        return frame_compare(op, a->f, b->f, out, e);
    if (!am && !bm) {
        if (!val_is_scalar(a) || !val_is_scalar(b))
            return br_err(e, BR_EARG, "operator '%s' is not defined for %s and %s", op_info[op].name,
                          val_kind_name(a->kind), val_kind_name(b->kind));
        return scalar_binary(op, a, b, out, e);
    }
    Value num;   /* a string scalar against a matrix: its number (SystemDS's
                    StringObject.getDoubleValue; bandit multiplies by a
                    parameter-table cell) */
    if ((am && b->kind == V_STRING) || (bm && a->kind == V_STRING)) {
        const Value *sv = am ? b : a;
        char *end = NULL;
        double d = strtod(sv->s->s, &end);
        if (end == sv->s->s || *end)
            return br_err(e, BR_EARG, "%s: the string '%s' is not a number", op_info[op].name, sv->s->s);
        num = val_double(d);
        if (am) b = &num; else a = &num;
    }
    if (need_numeric(a, op_info[op].name, e) || need_numeric(b, op_info[op].name, e)) return e->code;
    if (am && !bm && a->m->cmb) return cell_cla(op, 0, a->m, val_as_double(b), false, out, e);
    if (bm && !am && b->m->cmb) return cell_cla(op, 0, b->m, val_as_double(a), true, out, e);
    if (am && bm && a->m == b->m && a->m->cmb) return cell_cla(op, 2, a->m, 0, false, out, e);
    if (am && bm && (a->m->cmb || b->m->cmb)) {
        MB *ta, *tb = NULL, *r = NULL;
        const MB *pa = plain(a->m, &ta, e), *pb = pa ? plain(b->m, &tb, e) : NULL;
        if (pb) r = k_binary(op, pa, pb, e);
        mb_release(ta);
        mb_release(tb);
        return wrap(r, out, e);
    }
    if (am && bm) return wrap(k_binary(op, a->m, b->m, e), out, e);
    if (am) return wrap(k_binary_ms(op, a->m, val_as_double(b), e), out, e);
    return wrap(k_binary_sm(op, val_as_double(a), b->m, e), out, e);
}

int ap_ternary(const Value *c, const Value *a, const Value *b, Value *out, BrErr *e)
{
    if (c->kind != V_MATRIX && a->kind != V_MATRIX && b->kind != V_MATRIX) {
        bool t;
        if (!val_truth(c, &t, e)) return e->code;
        *out = val_retain(t ? *a : *b);
        return 0;
    }
    if (need_numeric(c, "ifelse", e) || need_numeric(a, "ifelse", e) || need_numeric(b, "ifelse", e))
        return e->code;
    const Value *v[3] = {c, a, b};
    const MB *m[3] = {NULL, NULL, NULL};
    MB *t[3] = {NULL, NULL, NULL}, *r = NULL;
    bool ok = true;
    for (int k = 0; k < 3; k++)
        if (v[k]->kind == V_MATRIX && !(m[k] = plain(v[k]->m, &t[k], e))) ok = false;
    if (ok) r = k_ifelse(m[0], val_as_double(c), m[1], val_as_double(a), m[2], val_as_double(b), e);
    for (int k = 0; k < 3; k++) mb_release(t[k]);
    return wrap(r, out, e);
}

/* A matrix view of a numeric value: the matrix itself (borrowed) or a new
 * 1x1 block (*tmp set, caller releases). */
static const MB *as_mb(const Value *v, MB **tmp, BrErr *e)
{
    *tmp = NULL;
    if (v->kind == V_MATRIX) return v->m;
    if (!val_is_numeric(v)) { br_err(e, BR_EARG, "expected a matrix, got a %s", val_kind_name(v->kind)); return NULL; }
    *tmp = mb_scalar(val_as_double(v), e);
    return *tmp;
}

int ap_agg(OpCode op, AggDir dir, const Value *a, Value *out, BrErr *e)
{
    MB *tmp;
    const MB *m = as_mb(a, &tmp, e);
    if (!m) return e->code;
    int rc = 0;
    if (m->cmb && cla_handles(CLA_F_AGG, op, dir, 0, 0, 1, &m)) {
        MB *r = cla_agg(op, dir, m, e);
        if (r && dir == DIR_FULL) {
            *out = val_double(mb_get(r, 0, 0));
            mb_release(r);
            return 0;
        }
        return wrap(r, out, e);
    }
    MB *dec = NULL;
    if (m->cmb && !(m = plain(m, &dec, e))) return e->code;
    if (op == OP_TRACE) {
        double t = k_trace(m, e);
        if (e->code) rc = e->code;
        else *out = val_double(t);
    } else if (dir == DIR_FULL) {
        double r;
        rc = k_agg_full(op, m, &r, e);
        if (!rc) *out = val_double(r);
    } else {
        rc = wrap(k_agg(op, dir, m, e), out, e);
    }
    mb_release(dec);
    mb_release(tmp);
    return rc;
}

int ap_reorg(OpCode op, const Value *a, Value *out, BrErr *e)
{
    MB *tmp, *dec = NULL;
    const MB *m = as_mb(a, &tmp, e);
    if (m && m->cmb) m = plain(m, &dec, e);
    if (!m) { mb_release(tmp); return e->code; }
    MB *r = op == OP_TRANS ? k_transpose(m, e) : op == OP_REV ? k_rev(m, e) : k_diag(m, e);
    mb_release(dec);
    mb_release(tmp);
    return wrap(r, out, e);
}

int ap_matmul(OpCode op, int left, const Value *a, const Value *b, const Value *c, Value *out, BrErr *e)
{
    MB *ta = NULL, *tb = NULL, *tc = NULL;
    const MB *x = as_mb(a, &ta, e), *y = NULL, *w = NULL;
    MB *r = NULL;
    if (!x) return e->code;
    if (op == OP_TSMM) {
        r = x->cmb ? matmul_cla(op, left, x, NULL, NULL, e) : k_tsmm(x, left != 0, e);
    } else if (op == OP_TSMMA && (y = as_mb(b, &tb, e))) {
        r = x->cmb || y->cmb ? tsmm_cbind_cla(x, y, e) : k_tsmm_cbind(x, y, e);
    } else if ((y = as_mb(b, &tb, e))) {
        if (op == OP_MMCHAIN && c->kind != V_NONE) w = as_mb(c, &tc, e);
        if (op == OP_MMCHAIN && c->kind != V_NONE && !w) {
            /* error set */
        } else if (x->cmb || y->cmb || (w && w->cmb)) {
            r = matmul_cla(op, left, x, y, w, e);
        } else if (op == OP_MMCHAIN) {
            r = k_mmchain(x, y, w, e);
        } else if (op == OP_MATMULTL) {
            r = k_matmul_tl(x, y, e);
        } else {
            r = k_matmul(x, y, e);
        }
    }
    mb_release(ta);
    mb_release(tb);
    mb_release(tc);
    return wrap(r, out, e);
}

/* ---- indexing ---- */

/* Numeric index value (1-based) of an index operand. */
static int ix_num(const Value *v, double *out, BrErr *e)
{
    if (val_is_numeric(v) || is_1x1(v)) { *out = val_as_double(v); return 0; }
    return br_err(e, BR_EINDEX, "an index must be a number, not a %s", val_kind_name(v->kind));
}

/* An index value as an error message shows it (NaN, 1e+20, 7). */
static const char *ix_str(double v, char buf[32])
{
    if (isnan(v)) return "NaN";
    snprintf(buf, 32, "%.17g", v);
    return buf;
}

/* Resolves one index dimension to a 0-based half-open range. */
static int ix_range(int mode, const Value *lo, const Value *hi, int64_t n, const char *what,
                    int64_t *a, int64_t *b, BrErr *e)
{
    if (mode == IX_ALL) { *a = 0; *b = n; return 0; }
    double l, h;
    if (ix_num(lo, &l, e)) return e->code;
    h = l;
    if (mode == IX_RANGE && ix_num(hi, &h, e)) return e->code;
    /* compared as doubles: an index of 1e20 or NaN has no int64 value */
    double fl = floor(l), fh = floor(h);
    if (!(fl >= 1) || !(fh <= (double)n) || fl > fh + (mode == IX_RANGE ? 1 : 0) || (mode == IX_SINGLE && fl > n)) {
        char bl[32], bh[32];
        if (mode != IX_RANGE)
            return br_err(e, BR_EINDEX, "index out of bounds: %s %s of a dimension of size %lld", what,
                          ix_str(fl, bl), (long long)n);
        return br_err(e, BR_EINDEX, "index out of bounds: %s %s:%s of a dimension of size %lld", what,
                      ix_str(fl, bl), ix_str(fh, bh), (long long)n);
    }
    *a = (int64_t)fl - 1;
    *b = (int64_t)fh;
    return 0;
}

static int list_index(const IxSpec *ix, Value *args, Value *out, BrErr *e)
{
    List *l = args[0].l;
    Value *lo = &args[1];
    if (ix->rmode == IX_SINGLE && lo->kind == V_STRING) {
        int k = list_find(l, lo->s->s);
        if (k < 0) return br_err(e, BR_EINDEX, "list has no element named '%s' (index)", lo->s->s);
        Value r = val_list_new(1);
        if (list_append(r.kind == V_LIST ? r.l : NULL, val_retain(l->items[k]), lo->s->s, e)) {
            val_release(&r);
            return e->code;
        }
        *out = r;
        return 0;
    }
    int64_t a, b;
    if (ix_range(ix->rmode, lo, &args[2], l->n, "list element", &a, &b, e)) return e->code;
    Value r = val_list_new((int)(b - a));
    for (int64_t k = a; k < b; k++)
        if (list_append(r.kind == V_LIST ? r.l : NULL, val_retain(l->items[k]), l->names ? l->names[k] : NULL, e)) {
            val_release(&r);
            return e->code;
        }
    *out = r;
    return 0;
}

/* F[rows, cols] of a frame: the slice keeps names and value types. */
static int frame_index(const IxSpec *ix, Value *args, Value *out, BrErr *e)
{
    const FB *f = args[0].f;
    int64_t rl, ru, cl = 0, cu = f->cols;
    if (ix_range(ix->rmode, &args[1], &args[2], f->rows, "row", &rl, &ru, e)) return e->code;
    if (ix->has_col && ix_range(ix->cmode, &args[3], &args[4], f->cols, "column", &cl, &cu, e)) return e->code;
    FB *r = fb_slice(f, rl, ru, cl, cu, e);
    if (!r) return e->code;
    *out = val_frame(r);
    return 0;
}

/* m[rl:ru, cl:cu]: compressed blocks keep their column groups. */
static MB *slice(const MB *m, int64_t rl, int64_t ru, int64_t cl, int64_t cu, BrErr *e)
{
    return m->cmb ? cla_slice(m, rl, ru, cl, cu, e) : k_slice(m, rl, ru, cl, cu, e);
}

int ap_rix(const IxSpec *ix, Value *args, Value *out, BrErr *e)
{
    Value *t = &args[0];
    if (t->kind == V_LIST) return list_index(ix, args, out, e);
    if (t->kind == V_FRAME) return frame_index(ix, args, out, e);
    if (t->kind != V_MATRIX) {
        if (val_is_numeric(t) && ix->has_col) { /* scalar[1,1] */
            MB *tmp = mb_scalar(val_as_double(t), e);
            Value v = val_matrix(tmp);
            Value a2[5] = {v, args[1], args[2], args[3], args[4]};
            int rc = ap_rix(ix, a2, out, e);
            val_release(&v);
            return rc;
        }
        return br_err(e, BR_EINDEX, "cannot index a %s", val_kind_name(t->kind));
    }
    const MB *m = t->m;
    int64_t r[4];
    if (ap_rix_range(ix, args, m->rows, m->cols, r, e)) return e->code;
    return wrap(slice(m, r[0], r[1], r[2], r[3], e), out, e);
}

int ap_rix_range(const IxSpec *ix, const Value *args, int64_t rows, int64_t cols, int64_t r[4], BrErr *e)
{
    if (ix_range(ix->rmode, &args[1], &args[2], rows, "row", &r[0], &r[1], e)) return e->code;
    /* X[i] on a matrix: rows of a column vector */
    if (!ix->has_col) { r[2] = 0; r[3] = cols; return 0; }
    if (ix_range(ix->cmode, &args[3], &args[4], cols, "column", &r[2], &r[3], e)) return e->code;
    return 0;
}

/* The 0-based position of list index v (a 1-based number or a name) in
 * l: -1 (no error) for a name l lacks or the number length + 1, which
 * append; an error for any other position. */
static int list_pos(const List *l, const Value *v, int64_t *k, BrErr *e)
{
    if (v->kind == V_STRING) {
        *k = list_find(l, v->s->s);
        return 0;
    }
    double d;
    if (ix_num(v, &d, e)) return e->code;
    if (d == (double)l->n + 1) { *k = -1; return 0; }
    if (!(d >= 1 && d <= (double)l->n))   /* no int64 cast of 1e20 or NaN */
        return br_err(e, BR_EINDEX, "list index %g out of bounds (length %d)", d, l->n);
    *k = (int64_t)d - 1;
    return 0;
}

/* L[i] = v, L["name"] = v, L[i:j] = list(...) as SystemDS's list left
 * indexing: a list on the right replaces the range item by item (its
 * length must be the range's), taking its names where both lists are
 * named (all of them, where the range is the whole list); any other value
 * replaces the item at the range's start (SystemDS reads only that). An
 * index one past the end, or a name the list lacks, appends (braid's). */
static int list_lix(const IxSpec *ix, Value *args, bool can_steal, Value *out, BrErr *e)
{
    if (ix->rmode != IX_SINGLE && ix->rmode != IX_RANGE)
        return br_err(e, BR_EINDEX, "list left indexing needs an index or a range");
    Value lv;
    if (can_steal && args[0].l->refs == 1) { lv = args[0]; args[0] = val_none(); }
    else lv = val_list_copy(args[0].l, e);
    if (lv.kind == V_NONE) return e->code;
    List *l = lv.l;
    const Value *src = &args[1];
    const Value *lo = &args[2], *hi = ix->rmode == IX_RANGE ? &args[3] : &args[2];
    int64_t a, b;
    if (list_pos(l, lo, &a, e) || list_pos(l, hi, &b, e)) goto fail;
    if (a < 0 && (src->kind != V_LIST || ix->rmode == IX_SINGLE)) {
        /* append: the value, or a one-item list's item */
        const Value *v = src->kind == V_LIST && src->l->n == 1 ? &src->l->items[0] : src;
        if (src->kind == V_LIST && src->l->n != 1) {
            br_err(e, BR_EDIM, "list left indexing: size mismatch: length(lhs)=%d, range=[%d:%d], length(rhs)=%d",
                   l->n, l->n + 1, l->n + 1, src->l->n);
            goto fail;
        }
        const char *nm = lo->kind == V_STRING ? lo->s->s
                       : src->kind == V_LIST && src->l->names ? src->l->names[0] : NULL;
        if (list_append(l, val_retain(*v), nm, e)) goto fail;
        *out = lv;
        return 0;
    }
    if (a < 0 || b < 0) {
        br_err(e, BR_EINDEX, "list left indexing: no item named '%s'",
               (a < 0 ? lo : hi)->kind == V_STRING ? (a < 0 ? lo : hi)->s->s : "?");
        goto fail;
    }
    if (src->kind != V_LIST) {
        Value old = l->items[a];
        l->items[a] = val_retain(*src);
        val_release(&old);
        *out = lv;
        return 0;
    }
    const List *r = src->l;
    int64_t range = b - a + 1;
    if (range != r->n || range > l->n) {
        br_err(e, BR_EDIM, "list left indexing: size mismatch: length(lhs)=%d, range=[%lld:%lld], length(rhs)=%d",
               l->n, (long long)a + 1, (long long)b + 1, r->n);
        goto fail;
    }
    bool all = range == l->n;
    if ((all || l->names) && r->names && !l->names) {
        l->names = br_calloc((size_t)(l->cap > 0 ? l->cap : 1), sizeof(char *));
        if (!l->names) { br_err(e, BR_ENOMEM, "out of memory"); goto fail; }
    }
    for (int64_t i = 0; i < range; i++) {
        Value old = l->items[a + i];
        l->items[a + i] = val_retain(r->items[i]);
        val_release(&old);
        if (l->names && r->names) {
            char *nm = r->names[i] ? br_strdup(r->names[i]) : NULL;
            if (r->names[i] && !nm) { br_err(e, BR_ENOMEM, "out of memory"); goto fail; }
            free(l->names[a + i]);
            l->names[a + i] = nm;
        }
    }
    *out = lv;
    return 0;
fail:
    val_release(&lv);
    return e->code;
}

int ap_lix(const IxSpec *ix, Value *args, bool can_steal, Value *out, BrErr *e)
{
    Value *t = &args[0];
    if (t->kind == V_LIST) return list_lix(ix, args, can_steal, out, e);
    if (t->kind == V_FRAME) {
        int64_t rl, ru, cl = 0, cu = t->f->cols;
        if (ix_range(ix->rmode, &args[2], &args[3], t->f->rows, "row", &rl, &ru, e)) return e->code;
        if (ix->has_col && ix_range(ix->cmode, &args[4], &args[5], t->f->cols, "column", &cl, &cu, e)) return e->code;
        return frame_lix(t->f, rl, ru, cl, cu, &args[1], out, e);
    }
    if (t->kind != V_MATRIX)
        return br_err(e, BR_EINDEX, "left indexing needs a matrix or list, not a %s", val_kind_name(t->kind));
    MB *m = t->m;
    int64_t rl, ru, cl, cu;
    if (ix_range(ix->rmode, &args[2], &args[3], m->rows, "row", &rl, &ru, e)) return e->code;
    if (ix->has_col) {
        if (ix_range(ix->cmode, &args[4], &args[5], m->cols, "column", &cl, &cu, e)) return e->code;
    } else { cl = 0; cu = m->cols; }
    const Value *src = &args[1];
    bool inplace = can_steal && m->refs == 1;
    if (src->kind != V_MATRIX) {
        /* a string as SystemDS takes it: a literal is parsed as a double
         * (X[i, 1] = 'NaN'), a string variable reads as 1 for "TRUE" /
         * "true"; any other text is an error here, never a silent 0 */
        double v = 0;
        if (src->kind == V_STRING) {
            const char *str = src->s->s;
            if (!strcmp(str, "TRUE") || !strcmp(str, "true")) v = 1;
            else if (!fb_parse_num(str, strlen(str), &v))
                return br_err(e, BR_EARG, "left indexing: cannot assign the string '%s' into a matrix: not a number",
                              str);
        } else if (!val_is_numeric(src)) {
            return br_err(e, BR_EARG, "left indexing: cannot assign a %s into a matrix", val_kind_name(src->kind));
        } else {
            v = val_as_double(src);
        }
        if (ru - rl != 1 || cu - cl != 1)
            return br_err(e, BR_EDIM, "left indexing: dimension mismatch: a scalar can only be assigned to a single cell, not a %lldx%lld block",
                          (long long)(ru - rl), (long long)(cu - cl));
        if (inplace) {
            if (k_lix_scalar_inplace(m, rl, cl, v, e)) return e->code;
            *out = *t;
            *t = val_none();
            return 0;
        }
        return wrap(k_lix_scalar(m, rl, cl, v, e), out, e);
    }
    if (inplace) {
        /* a sparse target filled with dense blocks (X[i,] = row in a loop)
         * ends dense: convert once instead of splicing CSR rows per write */
        if (m->sparse && !src->m->sparse && src->m->nnz > 0 && mb_est_dense(m->rows, m->cols) <= 268435456.0 &&
            mb_make_dense(m, e))
            return e->code;
        if (k_lix_inplace(m, rl, ru, cl, cu, src->m, e)) return e->code;
        *out = *t;
        *t = val_none();
        return 0;
    }
    return wrap(k_lix(m, rl, ru, cl, cu, src->m, e), out, e);
}
