/* framemap.c: map(X, "lambda"[, margin]) over frames (see framemap.h).
 * The lambda is parsed once (jlambda.c); cells, rows, columns or pairs are
 * evaluated in parallel, each thread with its own scratch; results are
 * collected per cell and typed per output column at the end. */
#include "framemap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../matrix/format.h"
#include "jlambda.h"
#include "jlutil.h"

/* One result cell. */
enum { O_NULL, O_STR, O_INT, O_DBL, O_BOOL, O_ZERO };  /* O_ZERO: (x, y) cells not computed */
typedef struct OCell {
    int k;
    union { char *s; int64_t i; double d; bool b; };  /* s: malloc'd */
} OCell;

/* Cell (i, j) of f as a String value: numbers as Java prints them (text in
 * buf, FMT_NUM_MAX bytes), missing values null. */
static JVal cell_in(const FB *f, int64_t i, int64_t j, char *buf)
{
    const FbCol *c = f->c[j];
    JVal v = {.k = JV_STR};
    const char *t = buf;
    switch (c->type) {
    case FB_STRING:
        if (!c->s[i]) { v.k = JV_NULL; return v; }
        t = c->s[i];
        break;
    case FB_FP64:
        if (isnan(c->d[i])) { v.k = JV_NULL; return v; }
        fmt_double(c->d[i], buf, FMT_NUM_MAX);
        break;
    case FB_INT64: fmt_int(c->i[i], buf, FMT_NUM_MAX); break;
    default: t = c->b[i] ? "true" : "false"; break;
    }
    v.s = t;
    v.n = (int64_t)strlen(t);
    return v;
}

/* Stores a result value into *o (strings copied; chars become strings,
 * their text made in scratch s). */
static int to_ocell(JlScratch *s, const JVal *v, OCell *o, BrErr *e)
{
    switch (v->k) {
    case JV_NULL: o->k = O_NULL; return 0;
    case JV_INT: o->k = O_INT; o->i = v->i; return 0;
    case JV_DBL: o->k = O_DBL; o->d = v->d; return 0;
    case JV_BOOL: o->k = O_BOOL; o->b = v->b; return 0;
    case JV_ARR:
        return br_err(e, BR_EARG, "map: the lambda returned a String[] where a single value is expected "
                      "(arrays are results of margin=1 or margin=2 only)");
    default: {
        size_t n = (size_t)v->n;
        const char *t = v->k == JV_STR ? v->s : jl_text(s, v, &n);
        char *d = t ? malloc(n + 1) : NULL;
        if (!d) return br_err(e, BR_ENOMEM, "map: out of memory");
        memcpy(d, t, n);
        d[n] = 0;
        o->k = O_STR;
        o->s = d;
        return 0;
    }
    }
}

/* Per-thread state of the evaluation. */
typedef struct Work {
    const FB *f;
    const JLambda *l;
    int64_t margin, orows;
    int np;
    OCell *out;
    JlScratch *s;
    JVal *arr;          /* a row or column as String[] */
    char *bufs;         /* FMT_NUM_MAX bytes per element of arr (and two more) */
} Work;

/* Task t: a cell, a row, a column or a pair; results into w->out. */
static int task(Work *w, int64_t t, BrErr *e)
{
    const FB *f = w->f;
    int64_t R = f->rows, C = f->cols;
    JVal args[2], r;
    if (w->np == 2) {
        int64_t i = t % R, j = t / R;
        /* SystemDS's FrameBlock.mapDist fills only the upper triangle
         * (row < column) of pairs without a missing cell; the rest stays 0 */
        if (i >= j) { w->out[t].k = O_ZERO; return 0; }
        args[0] = cell_in(f, i, 0, w->bufs);
        args[1] = cell_in(f, j, 0, w->bufs + FMT_NUM_MAX);
        if (args[0].k == JV_NULL || args[1].k == JV_NULL) { w->out[t].k = O_ZERO; return 0; }
        if (jl_eval(w->l, w->s, args, &r, e)) return e->code;
        return to_ocell(w->s, &r, &w->out[t], e);
    }
    if (w->margin == 0) {
        int64_t i = t % R, j = t / R;
        args[0] = cell_in(f, i, j, w->bufs);
        if (args[0].k == JV_NULL) { w->out[t].k = O_NULL; return 0; }
        if (jl_eval(w->l, w->s, args, &r, e)) return e->code;
        return to_ocell(w->s, &r, &w->out[t], e);
    }
    bool rows = w->margin == 1;
    int64_t len = rows ? C : R;
    for (int64_t k = 0; k < len; k++)
        w->arr[k] = rows ? cell_in(f, t, k, w->bufs + k * FMT_NUM_MAX) : cell_in(f, k, t, w->bufs + k * FMT_NUM_MAX);
    args[0].k = JV_ARR;
    args[0].n = len;
    args[0].a = w->arr;
    if (jl_eval(w->l, w->s, args, &r, e)) return e->code;
    if (r.k != JV_ARR)
        return br_err(e, BR_EARG, "map: with margin=%d the lambda must return a String[] (new String[]{...}), not a "
                      "single value", (int)w->margin);
    if (r.n != len)
        return br_err(e, BR_EDIM, "map: dimension mismatch: with margin=%d the lambda returned %lld values for a %s "
                      "of %lld", (int)w->margin, (long long)r.n, rows ? "row" : "column", (long long)len);
    for (int64_t k = 0; k < len; k++) {
        OCell *o = rows ? &w->out[k * w->orows + t] : &w->out[t * w->orows + k];
        if (to_ocell(w->s, &r.a[k], o, e)) return e->code;
    }
    return 0;
}

/* Column type of the results out[0..n) for a typed result. */
static FbType col_type(const OCell *o, int64_t n)
{
    bool s = false, i = false, d = false, b = false;
    for (int64_t k = 0; k < n; k++) {
        s |= o[k].k == O_STR;
        i |= o[k].k == O_INT;
        d |= o[k].k == O_DBL || o[k].k == O_ZERO;
        b |= o[k].k == O_BOOL;
    }
    if (s || (b && (i || d)) || !(i || d || b)) return FB_STRING;
    return d ? FB_FP64 : i ? FB_INT64 : FB_BOOL;
}

/* Moves the results into a new frame (strings are handed over; out is
 * left empty). A frame's map has STRING columns, as SystemDS's
 * FrameBlock.map and mapDist return whatever the lambda gives (Java's
 * String.valueOf: 5, 2.5, 1.0E-4, true; null stays missing; O_ZERO cells,
 * the pairs mapDist does not compute, are "0.0"). typed (a scalar's map,
 * braid's extension): each column typed by its values, O_ZERO 0. */
static FB *build(OCell *out, int64_t R, int64_t C, bool typed, BrErr *e)
{
    FbType *types = malloc((size_t)(C > 0 ? C : 1) * sizeof *types);
    if (!types) { br_err(e, BR_ENOMEM, "map: out of memory"); return NULL; }
    for (int64_t j = 0; j < C; j++) types[j] = typed ? col_type(out + j * R, R) : FB_STRING;
    FB *r = fb_new(R, C, types, e);
    free(types);
    if (!r) return NULL;
    for (int64_t j = 0; j < C; j++) {
        FbCol *c = r->c[j];
        for (int64_t i = 0; i < R; i++) {
            OCell *o = &out[j * R + i];
            switch (c->type) {
            case FB_STRING: {
                char buf[FMT_NUM_MAX];
                const char *t = NULL;
                if (o->k == O_STR) { c->s[i] = o->s; o->k = O_NULL; break; }
                if (o->k == O_INT) { fmt_int(o->i, buf, sizeof buf); t = buf; }
                else if (o->k == O_DBL) { fmt_double(o->d, buf, sizeof buf); t = buf; }
                else if (o->k == O_BOOL) t = o->b ? "true" : "false";
                else if (o->k == O_ZERO) t = "0.0";
                if (t && !(c->s[i] = strdup(t))) { fb_release(r); br_err(e, BR_ENOMEM, "map: out of memory"); return NULL; }
                break;
            }
            case FB_FP64:
                c->d[i] = o->k == O_DBL ? o->d : o->k == O_INT ? (double)o->i : o->k == O_ZERO ? 0.0 : NAN;
                break;
            case FB_INT64: c->i[i] = o->k == O_INT ? o->i : 0; break;
            default: c->b[i] = o->k == O_BOOL && o->b; break;
            }
        }
    }
    return r;
}

static FB *map_frame(const FB *f, const char *src, int64_t margin, bool typed, BrErr *e)
{
    if (margin < 0 || margin > 2) {
        br_err(e, BR_EARG, "map: margin must be 0 (cells), 1 (rows) or 2 (columns), not %lld", (long long)margin);
        return NULL;
    }
    if (jlu_is_call(src)) return jlu_map(f, src, e);   /* SystemDS's dmv/ema calls */
    JLambda *l = jl_parse(src, e);
    if (!l) return NULL;
    int np = jl_nparams(l);
    int64_t R = f->rows, C = f->cols, orows = R, ocols = C;
    if (np == 2) {
        if (margin != 0) {
            jl_free(l);
            br_err(e, BR_EARG, "map: a two-parameter lambda (x, y) -> ... compares rows pairwise and takes no margin");
            return NULL;
        }
        if (C != 1) {
            jl_free(l);
            br_err(e, BR_EDIM, "map: dimension mismatch: a two-parameter lambda needs a single-column frame, not %lldx%lld",
                   (long long)R, (long long)C);
            return NULL;
        }
        ocols = R;
    }
    int64_t ntask = np == 2 ? R * R : margin == 0 ? R * C : margin == 1 ? R : C;
    int64_t len = margin == 1 ? C : margin == 2 ? R : 0;
    OCell *out = calloc((size_t)(orows * ocols > 0 ? orows * ocols : 1), sizeof *out);
    if (!out) { jl_free(l); br_err(e, BR_ENOMEM, "map: out of memory"); return NULL; }
    int64_t errt = INT64_MAX;
    int64_t work = ntask * (len > 0 ? len : 1) * 16;
    #pragma omp parallel num_threads(br_threads()) if (work >= BR_PAR_MIN)
    {
        BrErr le = {0};
        Work w = {.f = f, .l = l, .margin = margin, .orows = orows, .np = np, .out = out};
        w.s = jl_scratch_new();
        w.arr = malloc((size_t)(len + 1) * sizeof(JVal));
        w.bufs = malloc((size_t)(len + 2) * FMT_NUM_MAX);
        bool failed = false;
        int64_t mine = INT64_MAX;
        if (!w.s || !w.arr || !w.bufs) { br_err(&le, BR_ENOMEM, "map: out of memory"); failed = true; mine = -1; }
        #pragma omp for schedule(static)
        for (int64_t t = 0; t < ntask; t++) {
            if (failed) continue;
            jl_scratch_reset(w.s);
            if (task(&w, t, &le)) { failed = true; mine = t; }
        }
        if (failed) {
            #pragma omp critical(framemap_err)
            if (mine < errt) {
                errt = mine;
                if (mine < 0 || le.code == BR_ENOMEM) br_err_clear(e), br_err(e, le.code, "%s", le.msg);
                else {
                    int64_t i, j;
                    if (np == 2) { i = mine % R; j = mine / R; }
                    else if (margin == 0) { i = mine % R; j = mine / R; }
                    else if (margin == 1) { i = mine; j = -1; }
                    else { i = -1; j = mine; }
                    br_err_clear(e);
                    if (j < 0) br_err(e, le.code, "%s (row %lld)", le.msg, (long long)i + 1);
                    else if (i < 0) br_err(e, le.code, "%s (column %lld)", le.msg, (long long)j + 1);
                    else if (np == 2) br_err(e, le.code, "%s (rows %lld and %lld)", le.msg, (long long)i + 1, (long long)j + 1);
                    else br_err(e, le.code, "%s (row %lld, column %lld)", le.msg, (long long)i + 1, (long long)j + 1);
                }
            }
        }
        jl_scratch_free(w.s);
        free(w.arr);
        free(w.bufs);
    }
    jl_free(l);
    FB *r = errt == INT64_MAX ? build(out, orows, ocols, typed, e) : NULL;
    for (int64_t k = 0; k < orows * ocols; k++)
        if (out[k].k == O_STR) free(out[k].s);
    free(out);
    if (r && np != 2 && f->named)
        for (int64_t j = 0; j < C; j++)
            if (fb_set_name(r, j, f->names[j], e)) { fb_release(r); return NULL; }
    return r;
}

FB *fm_map(const FB *f, const char *src, int64_t margin, BrErr *e) { return map_frame(f, src, margin, false, e); }

int bi_frame_map(const Value *a, Value *out, BrErr *e)
{
    if (a[1].kind != V_STRING)
        return br_err(e, BR_EARG, "map: the lambda must be a string such as \"x -> x.trim()\", not a %s",
                      val_kind_name(a[1].kind));
    int64_t margin = 0;
    if (a[2].kind != V_NONE) {
        if (!val_is_numeric(&a[2])) return br_err(e, BR_EARG, "map: margin must be a number, not a %s", val_kind_name(a[2].kind));
        double m = val_as_double(&a[2]);
        if (m != floor(m)) return br_err(e, BR_EARG, "map: margin must be 0 (cells), 1 (rows) or 2 (columns), not %g", m);
        margin = (int64_t)m;
    }
    if (a[0].kind == V_FRAME) {
        FB *r = fm_map(a[0].f, a[1].s->s, margin, e);
        if (!r) return e->code ? e->code : br_err(e, BR_EFAIL, "map failed");
        *out = val_frame(r);
        return 0;
    }
    if (!val_is_scalar(&a[0]))
        return br_err(e, BR_EARG, "map: target must be a frame or a string, not a %s", val_kind_name(a[0].kind));
    /* a scalar: its text as a 1x1 string frame, the result back as a scalar */
    FB *t = fb_new(1, 1, NULL, e);
    if (!t) return e->code;
    char buf[FMT_NUM_MAX];
    const char *s = buf;
    switch (a[0].kind) {
    case V_STRING: s = a[0].s->s; break;
    case V_INT: fmt_int(a[0].i, buf, sizeof buf); break;
    case V_BOOL: s = a[0].b ? "true" : "false"; break;
    default: fmt_double(a[0].d, buf, sizeof buf); break;
    }
    if (fb_set_text(t, 0, 0, s, strlen(s), e)) { fb_release(t); return e->code; }
    FB *r = map_frame(t, a[1].s->s, margin, true, e);
    fb_release(t);
    if (!r) return e->code ? e->code : br_err(e, BR_EFAIL, "map failed");
    const FbCol *c = r->c[0];
    switch (c->type) {
    case FB_STRING: *out = c->s[0] ? val_string(c->s[0]) : val_string("null"); break;
    case FB_FP64: *out = val_double(c->d[0]); break;
    case FB_INT64: *out = val_int(c->i[0]); break;
    default: *out = val_bool(c->b[0]); break;
    }
    fb_release(r);
    return 0;
}
