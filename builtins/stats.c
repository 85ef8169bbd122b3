/* builtins_stats.c: tier-2 statistical builtins of DML: the distribution
 * functions cdf, icdf and their shorthands (pnorm qnorm pt qt pf qf pchisq
 * qchisq pexp qexp), interQuartileMean, interQuantile, roll and
 * countDistinct. The numerics are in kernels/dist.c and kernels/stat2.c.
 *
 * SystemDS semantics kept here: targets of the distribution functions are
 * scalars; degrees of freedom are integers (SystemDS parses them with
 * parseToInt: a fractional df is truncated, values beyond 2^31-1
 * saturate); sd, rate and df must be positive; icdf probabilities must be
 * in [0, 1]. Upper tails (lower.tail=FALSE) are computed directly rather
 * than as 1 - cdf, so they keep their precision far out. */
#include "builtins.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/dist.h"
#include "../kernels/stat2.h"

/* A matrix argument (borrowed); scalars are rejected as SystemDS does. */
static const MB *mat(const Value *v, const char *fn, const char *what, BrErr *e)
{
    if (v->kind == V_MATRIX) return v->m;
    br_err(e, BR_EARG, "%s: argument '%s' must be a matrix, not a %s", fn, what, val_kind_name(v->kind));
    return NULL;
}

/* Degrees of freedom as SystemDS reads them: floor(df + 2^-53), saturated
 * to the int range. */
static int dof(const Value *v, const char *fn, const char *what, double *out, BrErr *e)
{
    double d;
    if (bi_num(v, what, &d, e)) return e->code;
    if (isnan(d)) return br_err(e, BR_EARG, "%s: %s must be a number, got NaN", fn, what);
    d = floor(d + 0x1p-53);
    *out = d > 2147483647.0 ? 2147483647.0 : d < -2147483648.0 ? -2147483648.0 : d;
    return 0;
}

/* Distribution and parameters from the bound arguments (in the order of
 * the BUILTIN rows of ops.def). */
static int dist_args(const Instr *h, Value *a, const char *fn, Dist *d, BrErr *e)
{
    const char *dn;
    switch (h->bi) {
    case BI_CDF: case BI_ICDF: {
        if (a[1].kind != V_STRING)
            return br_err(e, BR_EARG, "%s: dist must be a string (\"normal\", \"t\", \"f\", \"chisq\" or \"exp\")", fn);
        dn = a[1].s->s;
        int k = dist_kind(dn);
        if (k < 0)
            return br_err(e, BR_EARG, "%s: unknown distribution \"%s\" (valid: normal, t, f, chisq, exp)", fn, dn);
        d->kind = (DistKind)k;
        /* target, dist, mean, sd, df, df1, df2, rate [, lower.tail] */
        switch (d->kind) {
        case DIST_NORMAL:
            if (bi_num(&a[2], "mean", &d->p1, e) || bi_num(&a[3], "sd", &d->p2, e)) return e->code;
            return 0;
        case DIST_T: case DIST_CHISQ:
            if (!bi_given(&a[4]))
                return br_err(e, BR_EARG, "%s: degrees of freedom df must be given for dist=\"%s\"", fn, dn);
            return dof(&a[4], fn, "df", &d->p1, e);
        case DIST_F:
            if (!bi_given(&a[5]) || !bi_given(&a[6]))
                return br_err(e, BR_EARG, "%s: degrees of freedom df1 and df2 must be given for dist=\"f\"", fn);
            if (dof(&a[5], fn, "df1", &d->p1, e) || dof(&a[6], fn, "df2", &d->p2, e)) return e->code;
            return 0;
        case DIST_EXP:
            return bi_num(&a[7], "rate", &d->p1, e);
        }
        return 0;
    }
    case BI_PNORM: case BI_QNORM:
        d->kind = DIST_NORMAL;
        if (bi_num(&a[1], "mean", &d->p1, e) || bi_num(&a[2], "sd", &d->p2, e)) return e->code;
        return 0;
    case BI_PT: case BI_QT:
        d->kind = DIST_T;
        return dof(&a[1], fn, "df", &d->p1, e);
    case BI_PCHISQ: case BI_QCHISQ:
        d->kind = DIST_CHISQ;
        return dof(&a[1], fn, "df", &d->p1, e);
    case BI_PF: case BI_QF:
        d->kind = DIST_F;
        if (dof(&a[1], fn, "df1", &d->p1, e) || dof(&a[2], fn, "df2", &d->p2, e)) return e->code;
        return 0;
    case BI_PEXP: case BI_QEXP:
        d->kind = DIST_EXP;
        return bi_num(&a[1], "rate", &d->p1, e);
    default:
        return br_err(e, BR_EFAIL, "%s: not a distribution function", fn);
    }
}

/* cdf/icdf and the shorthands: a scalar in *out. */
static int b_dist(const Instr *h, Value *a, Value *out, BrErr *e)
{
    const char *fn = builtin_info[h->bi].name;
    bool inverse = h->bi == BI_ICDF || h->bi == BI_QNORM || h->bi == BI_QT || h->bi == BI_QF ||
                   h->bi == BI_QCHISQ || h->bi == BI_QEXP;
    if (!bi_given(&a[0]) || !val_is_scalar(&a[0]))
        return br_err(e, BR_EARG, "%s: target must be a scalar value, not a %s", fn,
                      val_kind_name(a[0].kind));
    double x;
    if (bi_num(&a[0], "target", &x, e)) return e->code;
    Dist d = {DIST_NORMAL, 0, 1};
    if (dist_args(h, a, fn, &d, e)) return e->code;
    bool lower = true;
    if (!inverse) {
        /* lower.tail is the last parameter of every cdf form */
        int il = h->bi == BI_CDF ? 8 : h->bi == BI_PNORM ? 3 : h->bi == BI_PF ? 3 : 2;
        if (bi_given(&a[il]) && bi_bool(&a[il], "lower.tail", &lower, e)) return e->code;
    }
    double r;
    int rc = inverse ? dist_icdf(&d, x, lower, &r, e) : dist_cdf(&d, x, lower, &r, e);
    if (rc) {   /* prefix the builtin's name */
        size_t len = strlen(fn) + 2, ml = strlen(e->msg);
        if (len + ml < sizeof e->msg) {
            memmove(e->msg + len, e->msg, ml + 1);
            memcpy(e->msg, fn, len - 2);
            memcpy(e->msg + len - 2, ": ", 2);
        }
        return rc;
    }
    *out = val_double(r);
    return 0;
}

/* interQuartileMean(X[, W]) and interQuantile(X[, W], p): with three
 * positional arguments the second is the weight vector (as quantile). */
static int b_order_stat(const Instr *h, Value *a, Value *out, BrErr *e)
{
    const char *fn = builtin_info[h->bi].name;
    const MB *x = mat(&a[0], fn, "target", e);
    if (!x) return e->code;
    if (h->bi == BI_IQM) {
        const MB *w = NULL;
        if (bi_given(&a[1]) && !(w = mat(&a[1], fn, "weights", e))) return e->code;
        double r;
        if (k_iqm(x, w, &r, e)) return e->code;
        *out = val_double(r);
        return 0;
    }
    Value *pv = &a[1], *wv = &a[2];
    if (bi_given(&a[2]) && a[1].kind == V_MATRIX && a[2].kind != V_MATRIX) { pv = &a[2]; wv = &a[1]; }
    double p;
    if (!val_is_scalar(pv))
        return br_err(e, BR_EARG, "%s: p must be a scalar, not a %s", fn, val_kind_name(pv->kind));
    if (bi_num(pv, "p", &p, e)) return e->code;
    const MB *w = NULL;
    if (bi_given(wv) && !(w = mat(wv, fn, "weights", e))) return e->code;
    MB *r = k_interquantile(x, w, p, e);
    if (!r) return e->code;
    *out = val_matrix(r);
    return 0;
}

static int b_roll(Value *a, Value *out, BrErr *e)
{
    const MB *x = mat(&a[0], "roll", "target", e);
    if (!x) return e->code;
    double s;
    if (!val_is_scalar(&a[1]))
        return br_err(e, BR_EARG, "roll: shift must be a scalar, not a %s", val_kind_name(a[1].kind));
    if (bi_num(&a[1], "shift", &s, e)) return e->code;
    if (!isfinite(s)) return br_err(e, BR_EARG, "roll: shift must be finite, got %g", s);
    MB *r = k_roll(x, (int64_t)s, e);
    if (!r) return e->code;
    *out = val_matrix(r);
    return 0;
}

/* countDistinct(data, dir="rc") and the exact counts behind
 * countDistinctApprox: errors name fn. */
int bi_count_distinct(const Value *a, const char *fn, Value *out, BrErr *e)
{
    const MB *x = mat(&a[0], fn, "data", e);
    if (!x) return e->code;
    const char *dir = "rc";
    if (bi_given(&a[1])) {
        if (a[1].kind != V_STRING)
            return br_err(e, BR_EARG, "%s: dir must be a string (\"rc\", \"r\" or \"c\")", fn);
        dir = a[1].s->s;
    }
    if (!strcasecmp(dir, "rc")) {
        int64_t n;
        if (k_count_distinct(x, &n, e)) return e->code;
        *out = val_int(n);
        return 0;
    }
    if (strcasecmp(dir, "r") && strcasecmp(dir, "c"))
        return br_err(e, BR_EARG, "%s: invalid dir \"%s\" (valid: \"rc\", \"r\", \"c\")", fn, dir);
    return bi_ret_mb(k_count_distinct_dir(x, !strcasecmp(dir, "r"), e), out, e);
}

int bi_stats(Rt *rt, Frame *f, const Instr *h, Value *args, Value *out, BrErr *e)
{
    (void)rt; (void)f;
    switch (h->bi) {
    case BI_CDF: case BI_ICDF: case BI_PNORM: case BI_QNORM: case BI_PT: case BI_QT:
    case BI_PF: case BI_QF: case BI_PCHISQ: case BI_QCHISQ: case BI_PEXP: case BI_QEXP:
        return b_dist(h, args, out, e);
    case BI_IQM: case BI_INTERQUANTILE:
        return b_order_stat(h, args, out, e);
    case BI_ROLL:
        return b_roll(args, out, e);
    case BI_COUNTDISTINCT:
        return bi_count_distinct(args, "countDistinct", out, e);
    case BI_CONTAINS: {
        const MB *x = mat(&args[0], "contains", "target", e);
        if (!x) return e->code;
        bool found = false;
        double v = 0;
        if (args[1].kind == V_MATRIX) {
            if (k_contains(x, args[1].m, 0, &found, e)) return e->code;
        } else {
            if (bi_num(&args[1], "pattern", &v, e) || k_contains(x, NULL, v, &found, e)) return e->code;
        }
        *out = val_bool(found);
        return 0;
    }
    case BI_CUMSUMPROD: {
        const MB *x = mat(&args[0], "cumsumprod", "target", e);
        MB *r = x ? k_cumsumprod(x, e) : NULL;
        if (!r) return e->code;
        *out = val_matrix(r);
        return 0;
    }
    default:
        return BI_NOT_MINE;
    }
}
