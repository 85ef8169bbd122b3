/* builtins_dnn.c: DML's deep-learning builtins (conv2d,
 * conv2d_backward_filter, conv2d_backward_data, max_pool, avg_pool and
 * their backward functions, bias_add, bias_multiply) with SystemDS's
 * argument names: shapes are lists `input_shape=[N,C,H,W]`,
 * `filter_shape=[K,C,R,S]`, `pool_size=[R,S]`, `stride=[sh,sw]`,
 * `padding=[ph,pw]` (stride and padding default to [1,1] and [0,0]; a
 * single number stands for both). The kernels are in kernels/dnn.c.
 * batch_norm2d, batch_norm2d_backward, lstm and lstm_backward return
 * lists of outputs (multi-assignment) from kernels/dnn2.c. */
#include "builtins.h"

#include <math.h>
#include <string.h>

#include "../kernels/dnn.h"
#include "../kernels/dnn2.h"

/* A matrix argument (borrowed). */
static const MB *mat(const Value *v, const char *fn, const char *what, BrErr *e)
{
    if (v->kind == V_MATRIX) return v->m;
    br_err(e, BR_EARG, "%s: argument '%s' must be a matrix, not a %s", fn, what, val_kind_name(v->kind));
    return NULL;
}

/* The n integers of shape argument v into out; an absent optional
 * argument gives dflt (for n == 2). */
static int shape(const Value *v, const char *fn, const char *what, int n, int64_t dflt, int64_t *out, BrErr *e)
{
    if (!bi_given(v)) {
        if (dflt < 0) return br_err(e, BR_EARG, "%s: missing argument '%s'", fn, what);
        for (int i = 0; i < n; i++) out[i] = dflt;
        return 0;
    }
    if (v->kind != V_LIST && n != 2)
        return br_err(e, BR_EARG, "%s: %s must be a list of %d integers, like [a, b, ...]", fn, what, n);
    if (v->kind == V_LIST && v->l->n != n)
        return br_err(e, BR_EDIM, "%s: dimension mismatch: %s needs %d values, got %d", fn, what, n, v->l->n);
    for (int i = 0; i < n; i++) {
        const Value *it = v->kind == V_LIST ? &v->l->items[i] : v;
        double d;
        if (bi_num(it, what, &d, e)) return e->code;
        if (!isfinite(d) || d != floor(d) || fabs(d) > 9e15)
            return br_err(e, BR_EARG, "%s: %s values must be integers, got %g", fn, what, d);
        out[i] = (int64_t)d;
    }
    return 0;
}

/* Shapes of the convolution builtins: a[k] input_shape, a[k+1]
 * filter_shape / pool_size, a[k+2] stride, a[k+3] padding. */
static int shapes(Value *a, int k, bool conv, const char *fn, DnnShape *s, BrErr *e)
{
    int64_t is[4], fs[4], st[2], pd[2];
    memset(s, 0, sizeof *s);
    if (shape(&a[k], fn, "input_shape", 4, -1, is, e) ||
        shape(&a[k + 1], fn, conv ? "filter_shape" : "pool_size", conv ? 4 : 2, -1, fs, e) ||
        shape(&a[k + 2], fn, "stride", 2, 1, st, e) || shape(&a[k + 3], fn, "padding", 2, 0, pd, e))
        return e->code;
    s->N = is[0]; s->C = is[1]; s->H = is[2]; s->W = is[3];
    if (conv) {
        if (fs[1] != is[1])
            return br_err(e, BR_EDIM, "%s: dimension mismatch: filter_shape has %lld channels, input_shape %lld", fn,
                          (long long)fs[1], (long long)is[1]);
        s->K = fs[0]; s->R = fs[2]; s->S = fs[3];
    } else {
        s->R = fs[0]; s->S = fs[1];
    }
    s->sh = st[0]; s->sw = st[1]; s->ph = pd[0]; s->pw = pd[1];
    return dnn_shape_check(s, conv, fn, e);
}

/* The n blocks of ms as a list value in *out (takes the references). */
static int outputs(MB **ms, int n, Value *out, BrErr *e)
{
    Value l = val_list_new(n);
    for (int i = 0; i < n; i++) list_append(l.l, val_matrix(ms[i]), NULL, e);
    *out = l;
    return 0;
}

/* A scalar argument of fn: a number (booleans count as 0/1) or, for
 * flags, a boolean. */
static int scalar_arg(const Value *v, const char *fn, const char *what, bool flag, double *out, BrErr *e)
{
    if (v->kind == V_BOOL) { *out = v->b; return 0; }
    if (v->kind == V_INT) { *out = (double)v->i; return 0; }
    if (v->kind == V_DOUBLE) { *out = v->d; return 0; }
    return br_err(e, BR_EARG, "%s: %s must be a %s, not a %s", fn, what, flag ? "boolean" : "number",
                  val_kind_name(v->kind));
}

/* batch_norm2d, batch_norm2d_backward, lstm, lstm_backward. */
static int stateful(const Instr *h, Value *a, Value *out, BrErr *e)
{
    const char *fn = builtin_info[h->bi].name;
    MB *r[5];
    const MB *m[7];
    double eps, mu;
    bool seq;
    switch (h->bi) {
    case BI_BATCHNORM: {
        static const char *nm[] = {"input", "scale", "shift", "ema_mean", "ema_var"};
        for (int i = 0; i < 5; i++)
            if (!(m[i] = mat(&a[i], fn, nm[i], e))) return e->code;
        if (a[5].kind != V_STRING)
            return br_err(e, BR_EARG, "%s: mode must be a string, not a %s", fn, val_kind_name(a[5].kind));
        const char *mode = a[5].s->s;
        if (scalar_arg(&a[6], fn, "epsilon", false, &eps, e) || scalar_arg(&a[7], fn, "momentum", false, &mu, e))
            return e->code;
        bool train = !strcasecmp(mode, "train");
        if (!train && strcasecmp(mode, "test"))
            return br_err(e, BR_EARG, "%s: mode must be \"train\" or \"test\", got \"%s\"", fn, mode);
        if (k_batch_norm2d(m[0], m[1], m[2], m[3], m[4], train, eps, mu, r, e)) return e->code;
        return outputs(r, 5, out, e);
    }
    case BI_BATCHNORM_BW: {
        if (!(m[0] = mat(&a[0], fn, "input", e)) || !(m[1] = mat(&a[1], fn, "dout", e)) ||
            !(m[2] = mat(&a[2], fn, "scale", e)) || scalar_arg(&a[3], fn, "epsilon", false, &eps, e) ||
            !(m[3] = mat(&a[4], fn, "cache_mean", e)) || !(m[4] = mat(&a[5], fn, "cache_inv_var", e)))
            return e->code;
        if (k_batch_norm2d_bwd(m[0], m[1], m[2], eps, m[3], m[4], r, e)) return e->code;
        return outputs(r, 3, out, e);
    }
    case BI_LSTM: case BI_LSTM_BW: {
        static const char *nm[] = {"X", "W", "bias", "out0", "c0", "", "dout", "dc"};
        bool bwd = h->bi == BI_LSTM_BW;
        for (int i = 0; i < (bwd ? 8 : 5); i++)
            if (i != 5 && !(m[i < 5 ? i : i - 1] = mat(&a[i], fn, nm[i], e))) return e->code;
        double sq;
        if (scalar_arg(&a[5], fn, "return_sequences", true, &sq, e)) return e->code;
        seq = sq != 0;
        if (bwd ? k_lstm_bwd(m[0], m[1], m[2], m[3], m[4], seq, m[5], m[6], r, e)
                : k_lstm(m[0], m[1], m[2], m[3], m[4], seq, r, e))
            return e->code;
        return outputs(r, 5, out, e);
    }
    default:
        return BI_NOT_MINE;
    }
}

int bi_dnn(Rt *rt, Frame *f, const Instr *h, Value *a, Value *out, BrErr *e)
{
    (void)rt; (void)f;
    const char *fn = builtin_info[h->bi].name;
    DnnShape s;
    const MB *x, *y;
    switch (h->bi) {
    case BI_CONV2D: case BI_CONV2D_BWF: case BI_CONV2D_BWD: {
        bool bwd = h->bi == BI_CONV2D_BWD;
        if (!(x = mat(&a[0], fn, bwd ? "filter" : "input", e)) ||
            !(y = mat(&a[1], fn, h->bi == BI_CONV2D ? "filter" : "dout", e)) || shapes(a, 2, true, fn, &s, e))
            return e->code;
        if (h->bi == BI_CONV2D) return bi_ret_mb(k_conv2d(x, y, &s, e), out, e);
        if (h->bi == BI_CONV2D_BWF) return bi_ret_mb(k_conv2d_bwd_filter(x, y, &s, e), out, e);
        return bi_ret_mb(k_conv2d_bwd_data(x, y, &s, e), out, e);
    }
    case BI_MAXPOOL: case BI_AVGPOOL:
        if (!(x = mat(&a[0], fn, "input", e)) || shapes(a, 1, false, fn, &s, e)) return e->code;
        return bi_ret_mb(k_pool(x, &s, h->bi == BI_AVGPOOL, e), out, e);
    case BI_MAXPOOL_BW: case BI_AVGPOOL_BW:
        if (!(x = mat(&a[0], fn, "input", e)) || !(y = mat(&a[1], fn, "dout", e)) || shapes(a, 2, false, fn, &s, e))
            return e->code;
        return bi_ret_mb(k_pool_bwd(x, y, &s, h->bi == BI_AVGPOOL_BW, e), out, e);
    case BI_BIAS_ADD: case BI_BIAS_MULT:
        if (!(x = mat(&a[0], fn, "input", e)) || !(y = mat(&a[1], fn, "bias", e))) return e->code;
        return bi_ret_mb(h->bi == BI_BIAS_ADD ? k_bias_add(x, y, e) : k_bias_mult(x, y, e), out, e);
    default:
        return stateful(h, a, out, e);
    }
}
