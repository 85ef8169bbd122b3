/* spoof_cla.c: the Cell and MAgg skeletons over a compressed input (seed
 * 000 section 5.2; docs/cla.md). With one compressed full input, every
 * other input a scalar or a row vector, the generated dense body runs
 * once per group over the group's dictionary, read as an ndict x ncols
 * matrix (once per distinct tuple instead of once per cell), and once
 * over the group's zero tuple (the value of its implicit zeros; zero for
 * sparse-safe bodies), the row vectors gathered at the group's columns.
 * Aggregates then come from the counts per tuple (kernels/cla_ops.c); a
 * no_agg result is a compressed block sharing the input's row structures.
 * Column vectors and other full inputs differ per row: such operators
 * are declined and run per cell (the caller decompresses). */
#include "spoof.h"
#include "cla.h"

#include <stdlib.h>
#include <string.h>

/* The binding of one call of the generated body. */
typedef struct CMap {
    const SpoofCell *op;
    int k;                 /* the compressed input */
    const double **P;
    int64_t *S;
    double **rowv;         /* row-vector inputs, dense (owned or borrowed) */
    bool *own;
    double **gath;         /* row vectors at the group's columns */
} CMap;

static void cmap_free(CMap *m, int n)
{
    for (int q = 0; q < n; q++) {
        if (m->own && m->own[q] && m->rowv) free(m->rowv[q]);
        if (m->gath) free(m->gath[q]);
    }
    free(m->P); free(m->S); free(m->rowv); free(m->own); free(m->gath);
}

/* ClaMapFn: the generated body over n tuples of a group. */
static int body(void *arg, const double *vals, int64_t n, int ncols, const int32_t *cols, double *const *out,
                BrErr *e)
{
    CMap *m = arg;
    const SpoofCell *op = m->op;
    (void)e;
    m->P[m->k] = vals;
    m->S[m->k] = ncols;
    for (int q = 0; q < op->in.n; q++) {
        if (op->in.mode[q] != SPM_ROW) continue;
        for (int j = 0; j < ncols; j++) m->gath[q][j] = m->rowv[q][cols[j]];
        m->P[q] = m->gath[q];
        m->S[q] = 0;
    }
    op->fd(m->P, m->S, op->in.sc, 0, n, 0, ncols, (double *const *)out, ncols);
    return 0;
}

bool k_spoof_cell_cla_ok(const SpoofCell *op)
{
    int k = -1;
    if (!op->fd || op->nout < 1 || op->nout > CLA_MAXMAP || op->rows * op->cols == 0) return false;
    if (op->dir != SPD_FULL && op->nout != 1) return false;
    for (int q = 0; q < op->in.n; q++) {
        const MB *m = op->in.m[q];
        switch (op->in.mode[q]) {
        case SPM_SCALAR: break;
        case SPM_FULL:
            if (!mb_is_cmb(m) || k >= 0) return false;
            k = q;
            break;
        case SPM_ROW:
            if (mb_is_cmb(m)) return false;
            break;
        default: return false;   /* column vectors differ per row */
        }
    }
    return k >= 0;
}

static OpCode agg_op(int agg)
{
    switch (agg) {
    case SPA_SUMSQ: return OP_SUMSQ;
    case SPA_MIN: return OP_AMIN;
    case SPA_MAX: return OP_AMAX;
    case SPA_MEAN: return OP_MEAN;
    default: return OP_SUM;
    }
}

static int cmap_init(CMap *m, const SpoofCell *op, BrErr *e)
{
    int n = op->in.n;
    memset(m, 0, sizeof *m);
    m->op = op;
    m->P = br_calloc((size_t)n + 1, sizeof *m->P);
    m->S = br_calloc((size_t)n + 1, sizeof *m->S);
    m->rowv = br_calloc((size_t)n + 1, sizeof *m->rowv);
    m->own = br_calloc((size_t)n + 1, sizeof *m->own);
    m->gath = br_calloc((size_t)n + 1, sizeof *m->gath);
    if (!m->P || !m->S || !m->rowv || !m->own || !m->gath) return br_err(e, BR_ENOMEM, "out of memory");
    for (int q = 0; q < n; q++) {
        const MB *x = op->in.m[q];
        if (op->in.mode[q] == SPM_FULL) m->k = q;
        if (op->in.mode[q] != SPM_ROW) continue;
        if (!(m->gath[q] = br_malloc((size_t)BR_MAX(op->cols, 1) * sizeof(double))))
            return br_err(e, BR_ENOMEM, "out of memory");
        if (!x->sparse) { m->rowv[q] = x->d; continue; }
        m->own[q] = true;
        if (!(m->rowv[q] = br_calloc((size_t)BR_MAX(x->cols, 1), sizeof(double))))
            return br_err(e, BR_ENOMEM, "out of memory");
        for (int64_t p = x->rp[0]; p < x->rp[1]; p++) m->rowv[q][x->ci[p]] = x->v[p];
    }
    return 0;
}

int k_spoof_cell_cla(const SpoofCell *op, MB **out, double *res, bool *declined, BrErr *e)
{
    *declined = false;
    *out = NULL;
    if (!k_spoof_cell_cla_ok(op)) { *declined = true; return 0; }
    CMap m;
    int rc = cmap_init(&m, op, e);
    const MB *x = op->in.m[m.k];
    if (!rc && op->dir == SPD_FULL) {
        OpCode ops[CLA_MAXMAP];
        for (int r = 0; r < op->nout; r++) ops[r] = agg_op(op->agg[r]);
        cla_stats_op("spoofCellCLA");
        rc = cla_map_agg(x, op->nout, body, &m, ops, res, e);
    } else if (!rc) {
        MB *blk[CLA_MAXMAP] = {NULL};
        if (!(rc = cla_map(x, 1, body, &m, blk, e)) && !blk[0]) *declined = true;
        if (!rc && blk[0]) {
            cla_stats_op("spoofCellCLA");
            if (op->dir == SPD_NONE) *out = blk[0];
            else {
                *out = cla_agg(agg_op(op->agg[0]), op->dir == SPD_ROW ? DIR_ROW : DIR_COL, blk[0], e);
                mb_release(blk[0]);
                if (!*out) rc = e->code;
            }
        }
    }
    cmap_free(&m, op->in.n);
    return rc;
}
