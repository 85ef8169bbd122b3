/* builtins_signal.c: native SystemDS builtins added late: the Fourier
 * transforms fft, ifft, fft_linearized, ifft_linearized and stft (two
 * outputs: real and imaginary parts), rowClassMeet/rcm (two outputs),
 * rowCountDistinct, colCountDistinct, countDistinctApprox and its row and
 * column forms, and as.list. Kernels: kernels/fft.c, kernels/stat2.c.
 *
 * SystemDS semantics kept here: fft and fft_linearized take a real matrix
 * only; ifft, ifft_linearized and stft take a real part and an optional
 * imaginary part; stft is stft(re, windowSize, overlap) or
 * stft(re, im, windowSize, overlap) (positional); braid computes the
 * "approximate" distinct counts exactly (a count within any error bound);
 * as.list(L) unnests a one-element list holding a list and returns any
 * other list unchanged. */
#include "builtins.h"

#include <math.h>
#include <string.h>
#include <strings.h>

#include "../kernels/fft.h"
#include "../kernels/stat2.h"

/* A matrix argument (borrowed); scalars are rejected as SystemDS does. */
static const MB *mat(const Value *v, const char *fn, const char *what, BrErr *e)
{
    if (v->kind == V_MATRIX) return v->m;
    br_err(e, BR_EARG, "%s: argument '%s' must be a matrix, not a %s", fn, what, val_kind_name(v->kind));
    return NULL;
}

/* The two blocks as a list value (takes ownership of both). */
static int pair(MB *a, MB *b, Value *out, BrErr *e)
{
    Value l = val_list_new(2);
    if (list_append(l.l, val_matrix(a), NULL, e) || list_append(l.l, val_matrix(b), NULL, e)) {
        val_release(&l);
        return e->code;
    }
    *out = l;
    return 0;
}

/* An integer argument (windowSize, overlap). */
static int int_arg(const Value *v, const char *fn, const char *what, int64_t *out, BrErr *e)
{
    double d;
    if (!val_is_scalar(v) && v->kind != V_MATRIX)
        return br_err(e, BR_EARG, "%s: %s must be an integer scalar, not a %s", fn, what, val_kind_name(v->kind));
    if (bi_num(v, what, &d, e)) return e->code;
    if (!isfinite(d) || fabs(d) > 9e15) return br_err(e, BR_EARG, "%s: %s must be a finite integer, got %g", fn, what, d);
    *out = (int64_t)d;
    return 0;
}

/* fft family: args (target) or (re, im=NULL). */
static int b_fft(const Instr *h, Value *a, Value *out, BrErr *e)
{
    const char *fn = builtin_info[h->bi].name;
    bool inv = h->bi == BI_IFFT || h->bi == BI_IFFT_LIN;
    bool lin = h->bi == BI_FFT_LIN || h->bi == BI_IFFT_LIN;
    const MB *re = mat(&a[0], fn, inv ? "re" : "target", e), *im = NULL;
    if (!re) return e->code;
    if (inv && bi_given(&a[1]) && !(im = mat(&a[1], fn, "im", e))) return e->code;
    MB *r = NULL, *i = NULL;
    if (k_fft(re, im, inv, lin, &r, &i, e)) return e->code;
    return pair(r, i, out, e);
}

/* stft(re, windowSize, overlap) or stft(re, im, windowSize, overlap):
 * bound to re, im, windowSize, overlap; the three-argument form arrives
 * shifted (windowSize in im, overlap in windowSize). */
static int b_stft(Value *a, Value *out, BrErr *e)
{
    const MB *re = mat(&a[0], "stft", "re", e), *im = NULL;
    if (!re) return e->code;
    const Value *wv = &a[2], *ov = &a[3];
    if (!bi_given(&a[3])) {
        if (!bi_given(&a[1]) || !bi_given(&a[2]))
            return br_err(e, BR_EARG, "stft: expects stft(re, windowSize, overlap) or stft(re, im, windowSize, overlap)");
        wv = &a[1]; ov = &a[2];
    } else if (!bi_given(&a[1]) || !bi_given(&a[2])) {
        return br_err(e, BR_EARG, "stft: missing argument (windowSize and overlap are both needed)");
    } else if (!(im = mat(&a[1], "stft", "im", e))) {
        return e->code;
    }
    int64_t win, ovl;
    if (int_arg(wv, "stft", "windowSize", &win, e) || int_arg(ov, "stft", "overlap", &ovl, e)) return e->code;
    MB *r = NULL, *i = NULL;
    if (k_stft(re, im, win, ovl, &r, &i, e)) return e->code;
    return pair(r, i, out, e);
}

/* The type= of the approximate counts: SystemDS's sketches. */
static int approx_type(const Value *v, const char *fn, BrErr *e)
{
    if (!bi_given(v)) return 0;
    if (v->kind != V_STRING) return br_err(e, BR_EARG, "%s: type must be a string (\"KMV\")", fn);
    if (strcasecmp(v->s->s, "KMV") && strcasecmp(v->s->s, "HLL"))
        return br_err(e, BR_EARG, "%s: unknown type \"%s\" (valid: \"KMV\", \"HLL\")", fn, v->s->s);
    return 0;
}

/* countDistinctApprox(data, dir="rc", type="KMV"). */
static int b_cd_approx(Value *a, Value *out, BrErr *e)
{
    if (approx_type(&a[2], "countDistinctApprox", e)) return e->code;
    return bi_count_distinct(a, "countDistinctApprox", out, e);
}

int bi_signal(Rt *rt, Frame *f, const Instr *h, Value *a, Value *out, BrErr *e)
{
    (void)rt; (void)f;
    const char *fn = builtin_info[h->bi].name;
    switch (h->bi) {
    case BI_FFT: case BI_IFFT: case BI_FFT_LIN: case BI_IFFT_LIN:
        return b_fft(h, a, out, e);
    case BI_STFT:
        return b_stft(a, out, e);
    case BI_RCM: {
        const MB *x = mat(&a[0], fn, "A", e), *y = x ? mat(&a[1], fn, "B", e) : NULL;
        MB *c = NULL, *n = NULL;
        if (!y || k_rcm(x, y, &c, &n, e)) return e->code;
        return pair(c, n, out, e);
    }
    case BI_ROWCOUNTDISTINCT: case BI_COLCOUNTDISTINCT: {
        const MB *x = mat(&a[0], fn, "target", e);
        if (!x) return e->code;
        return bi_ret_mb(k_count_distinct_dir(x, h->bi == BI_ROWCOUNTDISTINCT, e), out, e);
    }
    case BI_CDAPPROX:
        return b_cd_approx(a, out, e);
    case BI_ROWCDAPPROX: case BI_COLCDAPPROX: {
        const MB *x = mat(&a[0], fn, "data", e);
        if (!x || approx_type(&a[1], fn, e)) return e->code;
        return bi_ret_mb(k_count_distinct_dir(x, h->bi == BI_ROWCDAPPROX, e), out, e);
    }
    case BI_ASLIST:
        if (a[0].kind != V_LIST)
            return br_err(e, BR_EARG, "as.list: target must be a list, not a %s", val_kind_name(a[0].kind));
        if (a[0].l->n == 1 && a[0].l->items[0].kind == V_LIST) *out = val_retain(a[0].l->items[0]);
        else *out = val_retain(a[0]);
        return 0;
    default:
        return BI_NOT_MINE;
    }
}
