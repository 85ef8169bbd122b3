/* spoof_pre.c: the stitched inputs of a fused operator (CPU stitching,
 * docs/codegen.md): vector expressions (spoof.h SpPre) over the column
 * aggregates of the operator's main matrix X, computed in phases so that
 * a skeleton runs them in its own parallel region, before its rows.
 *
 * The distinct aggregates of all stitched inputs are computed once:
 * phase 1 runs the column sums (shared by colSums, colMeans, and the
 * means of colVars and colSds), minima and maxima; phase 2, only when a
 * variance or standard deviation is asked, the squared deviations from
 * phase 1's means (shared by both). Each is k_agg's DIR_COL computation
 * in phases (agg.h k_colagg_*), so the vectors are k_agg's to the bit;
 * the expressions then run through the unfused kernels (apply.h) on
 * 1 x n vectors, as the unfused plan runs them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agg.h"
#include "apply.h"
#include "spoof.h"

/* Aggregates by slot. */
enum { PS_SUM, PS_MIN, PS_MAX, PS_DEV2, PS_N };

struct SpPreRun {
    const SpPre *pre;
    int n;
    const MB *x;
    int64_t N;
    bool want[PS_N];
    KColAgg *g[PS_N];      /* the current phase's aggregates */
    double *v[PS_N];       /* merged: sums, minima, maxima, variances */
    double *mean;          /* sums / rows (phase 2's means) */
    int phase;             /* 1, 2; 3 done */
    BrErr e;
};

static int slot(int op)
{
    switch (op) {
    case OP_SUM: case OP_MEAN: return PS_SUM;
    case OP_AMIN: return PS_MIN;
    case OP_AMAX: return PS_MAX;
    case OP_VAR: case OP_SD: return PS_DEV2;
    default: return -1;
    }
}

bool k_pre_agg_ok(int op) { return slot(op) >= 0; }

void k_pre_free(SpPreRun *r)
{
    if (!r) return;
    for (int s = 0; s < PS_N; s++) { k_colagg_free(r->g[s]); free(r->v[s]); }
    free(r->mean);
    free(r);
}

/* Starts the aggregates of phase ph that are wanted. */
static bool phase_begin(SpPreRun *r, int ph)
{
    static const OpCode op[PS_N] = {OP_SUM, OP_AMIN, OP_AMAX, OP_VAR};
    r->phase = ph;
    for (int s = 0; s < PS_N; s++) {
        if (!r->want[s] || (s == PS_DEV2) != (ph == 2)) continue;
        if (!(r->g[s] = k_colagg_begin(op[s], r->x, r->mean, &r->e))) return false;
    }
    return true;
}

SpPreRun *k_pre_begin(const SpPre *pre, int n, const MB *x, BrErr *e)
{
    SpPreRun *r = br_calloc(1, sizeof *r);
    if (!r) { br_err(e, BR_ENOMEM, "out of memory in fused operator"); return NULL; }
    *r = (SpPreRun){.pre = pre, .n = n, .x = x, .N = x->cols};
    for (int k = 0; k < n; k++)
        for (int i = 0; i < pre[k].n; i++) {
            if (pre[k].x[i].kind != SPP_AGG) continue;
            int s = slot(pre[k].x[i].op);
            if (s < 0) { br_err(e, BR_EARG, "stitched aggregate %s: not supported", op_info[pre[k].x[i].op].name); k_pre_free(r); return NULL; }
            r->want[s] = true;
            if (s == PS_DEV2) r->want[PS_SUM] = true;
        }
    size_t nb = (size_t)BR_MAX(r->N, 1) * sizeof(double);
    for (int s = 0; s < PS_N; s++)
        if (r->want[s] && !(r->v[s] = br_malloc(nb))) goto oom;
    if (r->want[PS_DEV2] && !(r->mean = br_malloc(nb))) goto oom;
    if (!phase_begin(r, 1)) { *e = r->e; k_pre_free(r); return NULL; }
    return r;
oom:
    k_pre_free(r);
    br_err(e, BR_ENOMEM, "out of memory in fused operator");
    return NULL;
}

int64_t k_pre_ntasks(const SpPreRun *r)
{
    int64_t t = 0;
    for (int s = 0; s < PS_N; s++) if (r->g[s]) t += k_colagg_ntasks(r->g[s]);
    return t;
}

bool k_pre_task(SpPreRun *r, int64_t t)
{
    for (int s = 0; s < PS_N; s++) {
        if (!r->g[s]) continue;
        int64_t nt = k_colagg_ntasks(r->g[s]);
        if (t < nt) return k_colagg_task(r->g[s], t);
        t -= nt;
    }
    return true;
}

int k_pre_next(SpPreRun *r)
{
    for (int s = 0; s < PS_N; s++) {
        if (!r->g[s]) continue;
        int rc = k_colagg_end(r->g[s], r->v[s]);
        r->g[s] = NULL;
        if (rc) { br_err(&r->e, rc, "column aggregate of a stitched input failed"); return -1; }
    }
    if (r->phase == 1 && r->want[PS_DEV2]) {
        /* the means as k_agg's colMeans (and its variance) computes them */
        for (int64_t j = 0; j < r->N; j++) r->mean[j] = r->v[PS_SUM][j] / (double)r->x->rows;
        return phase_begin(r, 2) ? 1 : -1;
    }
    r->phase = 3;
    return 0;
}

const BrErr *k_pre_err(const SpPreRun *r) { return &r->e; }

/* The value of aggregate op as a 1 x N vector. */
static MB *agg_vec(const SpPreRun *r, int op, BrErr *e)
{
    MB *m = mb_dense(1, r->N, e);
    if (!m) return NULL;
    const double *v = r->v[slot(op)];
    for (int64_t j = 0; j < r->N; j++) {
        double y = v[j];
        if (op == OP_MEAN) y /= (double)r->x->rows;
        else if (op == OP_SD) y = sqrt(y);
        m->d[j] = y;
    }
    mb_recount_nnz(m);
    return m;
}

int k_pre_apply(const SpPre *p, KPreAggFn agg, void *arg, Value *out, BrErr *e)
{
    Value v[SPOOF_PREMAX];
    for (int j = 0; j < SPOOF_PREMAX; j++) v[j] = val_none();   /* a failed node sets none */
    int rc = 0, i = 0;
    for (; i < p->n && !rc; i++) {
        const SpPreNode *x = &p->x[i];
        switch (x->kind) {
        case SPP_AGG: rc = agg(arg, x->op, &v[i], e); break;
        case SPP_CONST: v[i] = val_double(x->c); break;
        case SPP_UN: rc = ap_unary((OpCode)x->op, &v[x->a], &v[i], e); break;
        case SPP_BIN: rc = ap_binary((OpCode)x->op, &v[x->a], &v[x->b], &v[i], e); break;
        default: rc = br_err(e, BR_EARG, "stitched input: bad node");
        }
    }
    if (!rc) *out = val_retain(v[p->n - 1]);
    for (int j = 0; j < i; j++) val_release(&v[j]);
    return rc;
}

static int run_agg(void *arg, int op, Value *out, BrErr *e)
{
    MB *m = agg_vec(arg, op, e);
    if (!m) return e->code;
    *out = val_matrix(m);
    return 0;
}

int k_pre_eval(SpPreRun *r, int k, double *out, BrErr *e)
{
    Value o;
    int rc = k_pre_apply(&r->pre[k], run_agg, r, &o, e);
    if (rc) return rc;
    if (o.kind != V_MATRIX || o.m->rows != 1 || o.m->cols != r->N)
        rc = br_err(e, BR_EARG, "stitched input: not a 1 x %lld vector", (long long)r->N);
    else
        for (int64_t j = 0; j < r->N; j++) out[j] = mb_get(o.m, 0, j);
    val_release(&o);
    return rc;
}

int k_pre_run(const SpPre *pre, int n, const MB *x, double **vec, BrErr *e)
{
    SpPreRun *r = k_pre_begin(pre, n, x, e);
    if (!r) return e->code;
    int more = 1;
    bool fail = false;
    while (more == 1 && !fail) {
        int64_t nt = k_pre_ntasks(r);
#pragma omp parallel for schedule(static) num_threads(br_threads()) if (br_par((double)x->rows * (double)x->cols))
        for (int64_t t = 0; t < nt; t++)
            if (!k_pre_task(r, t)) {
#pragma omp atomic write
                fail = true;
            }
        if (!fail) more = k_pre_next(r);
    }
    int rc = 0;
    if (fail) rc = br_err(e, BR_ENOMEM, "out of memory in fused operator");
    else if (more < 0) { *e = r->e; rc = e->code; }
    for (int k = 0; k < n && !rc; k++) {
        if (!pre[k].n) continue;
        if (!(vec[k] = br_malloc((size_t)BR_MAX(x->cols, 1) * sizeof(double)))) rc = br_err(e, BR_ENOMEM, "out of memory");
        else rc = k_pre_eval(r, k, vec[k], e);
    }
    k_pre_free(r);
    return rc;
}
