/* wire.c: values and names as bytes (wire.h). */
#include "wire.h"

#include <stdlib.h>
#include <string.h>

#include "../dist/dist.h"
#include "../matrix/fb.h"

#define NULL_NAME 0xffffffffu

void w_put(StrBuf *b, const void *p, size_t n) { sb_put(b, p, n); }

void w_put_i32(StrBuf *b, int32_t x) { w_put(b, &x, sizeof x); }

void w_put_span(StrBuf *b, Span s)
{
    w_put_name(b, s.file);
    w_put_i32(b, s.line);
    w_put_i32(b, s.col);
}

void w_put_name(StrBuf *b, const char *s)
{
    uint32_t n = s ? (uint32_t)strlen(s) : NULL_NAME;
    w_put(b, &n, sizeof n);
    if (s) w_put(b, s, (size_t)n + 1);
}

/* A frame: its shape, then per column its type, name and metadata
 * (replacement, distinct count) and
 * its cells (numbers as stored, strings as names: NULL is missing). */
static void put_frame(StrBuf *b, const FB *f)
{
    int64_t sh[2] = {f->rows, f->cols};
    w_put(b, sh, sizeof sh);
    uint8_t named = f->named;
    w_put(b, &named, 1);
    for (int64_t j = 0; j < f->cols; j++) {
        const FbCol *c = f->c[j];
        w_put_i32(b, c->type);
        w_put_name(b, f->names[j]);
        w_put_name(b, f->mv ? f->mv[j] : NULL);
        int64_t nd = fb_nd(f, j);
        w_put(b, &nd, sizeof nd);
        switch (c->type) {
        case FB_FP64: w_put(b, c->d, (size_t)f->rows * sizeof *c->d); break;
        case FB_INT64: w_put(b, c->i, (size_t)f->rows * sizeof *c->i); break;
        case FB_BOOL: w_put(b, c->b, (size_t)f->rows); break;
        case FB_STRING: for (int64_t i = 0; i < f->rows; i++) w_put_name(b, c->s[i]); break;
        }
    }
}

bool w_put_value(StrBuf *b, const Value *v)
{
    int32_t k = v->kind;
    switch (v->kind) {
    case V_NONE: w_put(b, &k, sizeof k); return true;
    case V_DOUBLE: w_put(b, &k, sizeof k); w_put(b, &v->d, sizeof v->d); return true;
    case V_INT: w_put(b, &k, sizeof k); w_put(b, &v->i, sizeof v->i); return true;
    case V_BOOL: { uint8_t x = v->b; w_put(b, &k, sizeof k); w_put(b, &x, 1); return true; }
    case V_STRING: {
        uint64_t n = v->s->len;
        w_put(b, &k, sizeof k), w_put(b, &n, sizeof n), w_put(b, v->s->s, n);
        return true;
    }
    case V_MATRIX: {
        size_t n;
        char *m = dist_pack_mb(v->m, &n);
        if (!m) { b->oom = true; return true; }
        uint64_t len = n;
        w_put(b, &k, sizeof k), w_put(b, &len, sizeof len), w_put(b, m, n);
        free(m);
        return true;
    }
    case V_LIST: {
        /* items in order with their names (NULL: unnamed) */
        w_put(b, &k, sizeof k);
        w_put_i32(b, v->l->n);
        for (int i = 0; i < v->l->n; i++) {
            w_put_name(b, v->l->names ? v->l->names[i] : NULL);
            if (!w_put_value(b, &v->l->items[i])) return false;
        }
        return true;
    }
    case V_FRAME: w_put(b, &k, sizeof k); put_frame(b, v->f); return true;
    default: return false;
    }
}

const void *w_take(WRd *r, size_t n)
{
    if (r->bad || (size_t)(r->end - r->p) < n) { r->bad = true; return NULL; }
    const void *q = r->p;
    r->p += n;
    return q;
}

void w_get(WRd *r, void *out, size_t n)
{
    const void *q = w_take(r, n);
    if (q) memcpy(out, q, n);
    else memset(out, 0, n);
}

int32_t w_get_i32(WRd *r) { int32_t x; w_get(r, &x, sizeof x); return x; }
uint64_t w_get_u64(WRd *r) { uint64_t x; w_get(r, &x, sizeof x); return x; }
uint8_t w_get_u8(WRd *r) { uint8_t x; w_get(r, &x, 1); return x; }

const char *w_get_name(WRd *r)
{
    uint32_t n;
    w_get(r, &n, sizeof n);
    if (n == NULL_NAME || r->bad) return NULL;
    const char *s = w_take(r, (size_t)n + 1);
    return s && s[n] == 0 ? s : (r->bad = true, NULL);
}

static Value get_frame(WRd *r, BrErr *e)
{
    int64_t sh[2];
    w_get(r, sh, sizeof sh);
    bool named = w_get_u8(r) != 0;
    if (r->bad || sh[0] < 0 || sh[1] < 0 || sh[1] > (int64_t)1 << 24) { r->bad = true; return val_none(); }
    FB *f = fb_new(sh[0], sh[1], NULL, e);
    if (!f) { r->bad = true; return val_none(); }
    for (int64_t j = 0; j < sh[1] && !r->bad; j++) {
        FbType t = (FbType)w_get_i32(r);
        const char *name = w_get_name(r), *mv = w_get_name(r);
        int64_t nd;
        w_get(r, &nd, sizeof nd);
        if (r->bad || (unsigned)t > FB_BOOL) { r->bad = true; break; }
        FbType ts[1] = {t};
        FB *one = fb_new(sh[0], 1, ts, e);   /* a column of that type */
        FbCol *c = one ? one->c[0] : NULL;
        if (!c || fb_set_name(f, j, name, e) || fb_set_mv(f, j, mv, e) || fb_set_nd(f, j, nd, e)) {
            fb_release(one);
            r->bad = true;
            break;
        }
        switch (t) {
        case FB_FP64: w_get(r, c->d, (size_t)sh[0] * sizeof *c->d); break;
        case FB_INT64: w_get(r, c->i, (size_t)sh[0] * sizeof *c->i); break;
        case FB_BOOL: w_get(r, c->b, (size_t)sh[0]); break;
        case FB_STRING:
            for (int64_t i = 0; i < sh[0] && !r->bad; i++) {
                const char *x = w_get_name(r);
                if (x && !(c->s[i] = strdup(x))) r->bad = true;
            }
            break;
        }
        /* the frame takes the column (one gives up its reference) */
        FbCol *old = f->c[j];
        f->c[j] = c;
        one->c[0] = old;
        fb_release(one);
    }
    if (r->bad) { fb_release(f); return val_none(); }
    f->named = named;   /* (fb_set_name marks every frame named) */
    return val_frame(f);
}

Value w_get_value(WRd *r, BrErr *e)
{
    int32_t k = w_get_i32(r);
    switch (k) {
    case V_NONE: return val_none();
    case V_DOUBLE: { double d; w_get(r, &d, sizeof d); return val_double(d); }
    case V_INT: { int64_t i; w_get(r, &i, sizeof i); return val_int(i); }
    case V_BOOL: return val_bool(w_get_u8(r) != 0);
    case V_STRING: {
        uint64_t n = w_get_u64(r);
        const char *s = w_take(r, n);
        return s ? val_string_n(s, n) : val_none();
    }
    case V_MATRIX: {
        uint64_t n = w_get_u64(r);
        const char *s = w_take(r, n);
        MB *m = s ? dist_unpack_mb(s, n, e) : NULL;
        return m ? val_matrix(m) : val_none();
    }
    case V_LIST: {
        int32_t n = w_get_i32(r);
        Value l = n >= 0 && !r->bad ? val_list_new(n) : val_none();
        if (l.kind != V_LIST) { r->bad = true; return val_none(); }
        for (int32_t i = 0; i < n && !r->bad; i++) {
            const char *name = w_get_name(r);
            Value x = w_get_value(r, e);
            if (r->bad) { val_release(&x); break; }
            if (list_append(l.l, x, name, e)) r->bad = true;
        }
        if (r->bad) { val_release(&l); return val_none(); }
        return l;
    }
    case V_FRAME: return get_frame(r, e);
    default: r->bad = true; return val_none();
    }
}

Span w_get_span(WRd *r)
{
    Span s;
    s.file = w_get_name(r);
    s.line = w_get_i32(r);
    s.col = w_get_i32(r);
    return s;
}
