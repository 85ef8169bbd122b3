/* agg_int.h: helpers shared by the aggregation kernels (agg.c) and their
 * leaf loops (agg_leaf.c); not part of the kernel API (agg.h). */
#ifndef BRAID_AGG_INT_H
#define BRAID_AGG_INT_H

#include <float.h>
#include <math.h>

#include "leaf.h"

/* Adds x; an infinite or NaN sum resets the correction, so infinities
 * propagate like in a plain sum. */
static inline void kadd(KKahan *k, double x)
{
    double y = x + k->c, t = k->s + y;
    k->c = fabs(t) <= DBL_MAX ? y - (t - k->s) : 0;
    k->s = t;
}

static inline void kmerge(KKahan *k, KKahan o)
{
    kadd(k, o.s);
    kadd(k, o.c);
}

static inline double kval(KKahan k) { return k.s + k.c; }

/* NaN-propagating min/max steps: once s is NaN it stays NaN. */
static inline double min_step(double s, double v) { return (v < s || v != v) ? v : s; }
static inline double max_step(double s, double v) { return (v > s || v != v) ? v : s; }

static inline bool cm_kahan(int cm) { return cm == CM_SUM || cm == CM_SQ || cm == CM_DEV2; }

static inline double cm_init(int cm)
{
    return cm == CM_MIN ? INFINITY : cm == CM_MAX ? -INFINITY : cm == CM_PROD ? 1 : 0;
}

/* Merges partial p (value ps, correction pc) into (r, rc) for mode cm. */
static inline void cm_merge(int cm, double *r, double *rc, double ps, double pc)
{
    if (cm_kahan(cm)) {
        KKahan k = { *r, *rc };
        kadd(&k, ps); kadd(&k, pc);
        *r = k.s; *rc = k.c;
    } else if (cm == CM_MIN) *r = min_step(*r, ps);
    else if (cm == CM_MAX) *r = max_step(*r, ps);
    else *r *= ps;
}

#endif
