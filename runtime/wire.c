/* wire.c: values and names as bytes (wire.h). */
#include "wire.h"

#include <stdlib.h>
#include <string.h>

#include "../dist/dist.h"

#define NULL_NAME 0xffffffffu

void w_put(StrBuf *b, const void *p, size_t n) { sb_put(b, p, n); }

void w_put_i32(StrBuf *b, int32_t x) { w_put(b, &x, sizeof x); }

void w_put_name(StrBuf *b, const char *s)
{
    uint32_t n = s ? (uint32_t)strlen(s) : NULL_NAME;
    w_put(b, &n, sizeof n);
    if (s) w_put(b, s, (size_t)n + 1);
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
    default: r->bad = true; return val_none();
    }
}
