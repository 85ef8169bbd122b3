/* exec.c: running a fused operator. Binds the argument values to the
 * CPlan's inputs, checks their shapes against the access modes the code
 * was generated for, evaluates the run-time conditions of sparse safety
 * (scalars are arguments, so op(0, s) == 0 is decided per call) and calls
 * the template's skeleton with the compiled functions. Whatever the
 * generated code cannot take (an operator that failed to compile, shapes
 * that differ from the plan's, a scalar that breaks sparse safety of an
 * Outer plan, the interpret option) runs through cg_interpret: the CPlan
 * evaluated node by node with the unfused kernels, i.e. exactly the
 * unfused plan, including its errors. Whether fusion pays off at the
 * given sizes is the cost model's decision (cost.c, mpskip.c); under the
 * cost-based policy the size checks left here are safety nets for inputs
 * whose number of non-zeros is far from the estimate the plan was chosen
 * with (the heuristic policies, which cost nothing, keep the size rules). */
#include "cgint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/spoof.h"
#include "../kernels/apply.h"
#include "../kernels/cla.h"
#include "../gpu/gpu.h"
#include "cgregion.h"

/* The skeletons' aggregation code (kernels/spoof.h) of an aggregate's
 * streaming form (ops.def's acc column). */
static int agg_code(OpCode op)
{
    int acc = op_info[op].acc;
    if (acc & AC_IDX) return SPA_NONE;
    switch (acc & AC_COMB) {
    case AC_MIN: return SPA_MIN;
    case AC_MAX: return SPA_MAX;
    case AC_SUM: return (acc & AC_SQ) ? SPA_SUMSQ : (acc & AC_MEAN) ? SPA_MEAN : SPA_SUM;
    default: return SPA_NONE;
    }
}

static bool conds_hold(const CPlan *p, const Value *args)
{
    for (int i = 0; i < p->ncond; i++) {
        const SafeCond *c = &p->cond[i];
        double s = val_as_double(&args[c->in]);
        double v = c->left ? ops_binary(c->op, s, 0) : ops_binary(c->op, 0, s);
        if (v != 0) return false;
    }
    if (p->zero_eval) {   /* every output 0 where the main input is (cplan.c zero_eval_main) */
        double sc[64], z[256];
        if (p->nin > 64 || p->nn > 256) return false;
        for (int k = 0; k < p->nin; k++) sc[k] = p->in[k].scalar ? val_as_double(&args[k]) : 0;
        if (!cplan_zero_values(p, sc, z)) return false;
        for (int r = 0; r < p->nout; r++) {
            int n = p->out[r];
            if (p->n[n].kind == CN_AGG) n = p->n[n].a[0];
            if (z[n] != 0) return false;
        }
    }
    return true;
}

/* Bound inputs of one call. */
typedef struct Bind {
    const MB **m;
    int *mode;
    double *sc;
    int64_t *L;
    int64_t *coff, *width;   /* Cell slices (cell_slice_offsets): one block */
    SpPre *pre;              /* each input's stitched expression (n 0: none) */
    MB *pv[CG_MAXPRE];       /* stitched vectors over a compressed matrix */
} Bind;

static void bind_free(Bind *b)
{
    free(b->m); free(b->mode); free(b->sc); free(b->L); free(b->coff); free(b->pre);
    for (int k = 0; k < CG_MAXPRE; k++) mb_release(b->pv[k]);
}

static int interp_agg(void *arg, int op, Value *out, BrErr *e);

/* A stitched input bound to a compressed matrix (args[k]): its vector
 * computed here, the column aggregates by the unfused kernels over the
 * compressed block (from its dictionaries, as the unstitched plan's
 * aggregate instructions compute them: the same values to the bit) and
 * the expression by the unfused kernels, and bound as an ordinary row
 * vector, so the skeletons run over the compressed block (Row: by
 * blocks of rows; Cell: over the dictionaries) instead of the whole
 * operator falling back to the unfused plan. False when it fails (then
 * the unfused plan runs and reports it). */
static bool bind_cmb_pre(const CPlan *p, Value *args, int k, Bind *b)
{
    int np = 0;
    while (np < CG_MAXPRE && b->pv[np]) np++;
    BrErr e = {0};
    Value v;
    if (np == CG_MAXPRE || k_pre_apply(&p->in[k].pre, interp_agg, &args[k], &v, &e)) return false;
    bool ok = v.kind == V_MATRIX && v.m->rows == 1 && v.m->cols == args[k].m->cols && !v.m->cmb && !v.m->dev;
    if (ok) {
        b->pv[np] = mb_retain(v.m);
        b->m[k] = v.m;
        b->pre[k] = (SpPre){0};
    }
    val_release(&v);
    return ok;
}

/* Fills b from args; false if an argument's kind differs from the plan. */
static bool bind(const CPlan *p, Value *args, int nargs, Bind *b)
{
    int n = p->nin;
    b->m = br_calloc((size_t)n + 1, sizeof *b->m);
    b->mode = br_calloc((size_t)n + 1, sizeof *b->mode);
    b->sc = br_calloc((size_t)n + 1, sizeof *b->sc);
    int nslice = 0;
    for (int i = 0; i < p->nn; i++) nslice += p->n[i].kind == CN_SLICE;
    b->L = br_calloc((size_t)(n + 2 * nslice) + 1, sizeof *b->L);
    b->coff = br_calloc(2 * ((size_t)n + 1), sizeof *b->coff);
    b->pre = br_calloc((size_t)n + 1, sizeof *b->pre);
    if (!b->m || !b->mode || !b->sc || !b->L || !b->coff || !b->pre || nargs != n) return false;
    b->width = b->coff + n + 1;
    for (int k = 0; k < n; k++) {
        b->mode[k] = p->in[k].mode;
        if (p->in[k].scalar) {
            if (!val_is_numeric(&args[k])) return false;
            b->sc[k] = val_as_double(&args[k]);
        } else {
            if (args[k].kind != V_MATRIX) return false;
            b->m[k] = args[k].m;
            b->L[k] = args[k].m->cols;
            b->pre[k] = p->in[k].pre;
            if (b->pre[k].n && args[k].m->cmb && !bind_cmb_pre(p, args, k, b)) return false;
        }
    }
    return true;
}

/* Is an input compressed? The Row skeleton reads a compressed main input
 * only (k_spoof_row_cla_ok): otherwise the operator runs its unfused
 * plan. (The Cell and Outer skeletons take compressed inputs.) */
static bool any_cmb(const CPlan *p, const Bind *b)
{
    for (int k = 0; k < p->nin; k++)
        if (b->m[k] && b->m[k]->cmb) return true;
    return false;
}

/* Does a matrix input other than the main one hold NaN or Inf? Then
 * skipping the main input's zeros would drop 0 * NaN = NaN (the unfused
 * kernels evaluate those cells, kernels/ew.c), so the operator runs over
 * every cell (Cell, MAgg) or falls back to the unfused plan (Row, Outer
 * driven by a sparse main input). */
static bool side_nonfinite(const CPlan *p, const Bind *b)
{
    for (int k = 0; k < p->nin; k++)
        if (k != p->main && b->m[k] && mb_has_nonfinite(b->m[k])) return true;
    return false;
}

/* ---- Cell / MAgg ---- */

/* May Cell/MAgg operator sp run over its main input's non-zeros only? */
static bool cell_sparse_safe(const CPlan *p, const SpoofCell *sp, const Bind *b, Value *args, bool gpu)
{
    return p->sparse_safe && (gpu || sp->fs) && conds_hold(p, args) &&
           !(p->main >= 0 && b->m[p->main]->sparse && side_nonfinite(p, b));
}

/* Size checks by policy: none (CgOptions.keep_fused: tests run the
 * generated code on every shape), the size rules below (the heuristic
 * policies fuse_all and fuse_no_redundancy, which cost nothing), or only
 * the safety nets for non-zeros far from the plan's estimates (the
 * cost-based policy, which decided on those sizes at plan time). */
typedef enum { SZ_KEEP, SZ_RULES, SZ_SURPRISE } SizeChecks;

/* Does a Cell/MAgg operator that is not sparse-safe lose to its unfused
 * plan (cg_interpret) over these inputs? It visits every cell (and a
 * no_agg output is written dense), while each unfused operator runs a
 * sparse kernel when it maps zeros to zero: so where every node of the
 * plan is 0 with its full inputs 0 (the run's scalars in place), only
 * full-size inputs and scalars are read, none compressed, and the full
 * inputs are sparse blocks whose non-zeros times the operations are at
 * most an eighth of the cells. `Z * 0.5 + X` over two sparse 250,000 x
 * 1000 blocks at 1%: 2.4 s fused against 50 ms unfused (the planner
 * declines it where it knows the non-zeros: cost.c open_op; this is
 * for non-zeros it did not know, as in a loop). */
static bool cell_sparse_loses(const CPlan *p, const Bind *b, int64_t M, int64_t N)
{
    double nnz = 0, z[256];
    if (p->nn > 256 || cplan_stitched(p)) return false;
    for (int k = 0; k < p->nin; k++) {
        if (p->in[k].scalar) continue;
        const MB *m = b->m[k];
        if (p->in[k].mode != IM_FULL || p->in[k].slice >= 0 || !m || !m->sparse || m->cmb) return false;
        nnz += (double)m->nnz;
    }
    if (!cplan_zero_values(p, b->sc, z)) return false;
    for (int n = 0; n < p->nn; n++) {
        const CNode *x = &p->n[n];
        if (x->kind != CN_IN && x->kind != CN_AGG && !x->scalar && z[n] != 0) return false;
    }
    return nnz * BR_MAX(cplan_nops(p), 1) * 8 <= (double)M * (double)N;
}

/* The column offset and width of each input a Cell plan reads in place
 * as X[, lo:hi] (cplan.c cell_slices), from the bounds floored as ap_rix
 * floors them; -1 for other inputs. False when a range is empty or not
 * inside X: the unfused plan then runs and reports it. */
static bool cell_slice_offsets(const CPlan *p, const Bind *b)
{
    int64_t *coff = b->coff, *width = b->width;
    for (int k = 0; k < p->nin; k++) {
        coff[k] = width[k] = -1;
        if (p->in[k].slice < 0) continue;
        const CNode *x = &p->n[p->in[k].slice];
        const CNode *lo = &p->n[x->a[1]], *hi = &p->n[x->a[2]];
        if (lo->kind != CN_IN || hi->kind != CN_IN || !p->in[lo->in].scalar || !p->in[hi->in].scalar) return false;
        double fl = floor(b->sc[lo->in]), fh = floor(b->sc[hi->in]);
        if (!(fl >= 1) || !(fh <= (double)b->m[k]->cols) || fl > fh) return false;
        coff[k] = (int64_t)fl - 1;
        width[k] = (int64_t)fh - (int64_t)fl + 1;
    }
    return true;
}

/* A Cell/MAgg plan's elementwise work per cell: ops.def's cost column
 * over its operations (the skeleton's threads and task sizes). */
static double cell_work(const CPlan *p)
{
    double w = 0;
    for (int k = 0; k < p->nn; k++) {
        const CNode *n = &p->n[k];
        if (n->kind == CN_UN || n->kind == CN_BIN || n->kind == CN_TER) w += op_info[n->op].cost;
        else if (n->kind == CN_AGG) w += 1;
    }
    return w;
}

/* Binds a Cell/MAgg call (b, which the caller frees) and describes it
 * for the skeleton in *spp; *fb when the generated code cannot take it.
 * Sparse safety is decided per call (scalars, non-finite side inputs);
 * on the CPU it also needs the compiled sparse function, on the device
 * (gpu) the generated kernel has its sparse path. */
static void cell_prepare(CgOp *op, Value *args, int nargs, Bind *bp, SpoofCell *spp, bool *fb, bool gpu)
{
    const CPlan *p = op->plan;
    Bind b = {0};
    SpoofCell sp = {0};
    if (!bind(p, args, nargs, &b) || !cell_slice_offsets(p, &b)) { *fb = true; goto done; }
    const int64_t *coff = b.coff, *width = b.width;
    int64_t M = -1, N = -1;
    for (int k = 0; k < p->nin && M < 0; k++)
        if (p->in[k].mode == IM_FULL) { M = b.m[k]->rows; N = coff[k] >= 0 ? width[k] : b.m[k]->cols; }
    if (M < 0) {
        for (int k = 0; k < p->nin; k++) {
            if (p->in[k].mode == IM_COL) M = b.m[k]->rows;
            if (p->in[k].mode == IM_ROW) N = b.m[k]->cols;
        }
    }
    for (int k = 0; k < p->nin && !*fb; k++) {
        const MB *m = b.m[k];
        switch (p->in[k].mode) {
        case IM_FULL: *fb = m->rows != M || (coff[k] >= 0 ? width[k] : m->cols) != N; break;
        /* a stitched input: the column aggregates of a plain matrix of
         * the iteration's shape */
        case IM_ROW: *fb = b.pre[k].n ? m->rows != M || m->cols != N || m->cmb : m->rows != 1 || m->cols != N; break;
        case IM_COL: *fb = m->rows != M || m->cols != 1; break;
        default: break;
        }
    }
    if (*fb || M < 0 || N < 0) { *fb = true; goto done; }
    sp = (SpoofCell){.in = {p->nin, b.m, b.mode, b.sc, coff}, .rows = M, .cols = N, .main = p->main,
                     .nout = p->nout, .fd = (SpCellDenseFn)op->fn[0], .fs = (SpCellSparseFn)op->fn[1],
                     .ff = (SpCellFlatFn)op->fn[2], .fa = (SpCellAggFn)op->fn[3],
                     .fsa = (SpCellSparseAggFn)op->fn[4], .ffn = (SpCellFlatNzFn)op->fn[5],
                     .fdn = (SpCellDenseNzFn)op->fn[6]};
    sp.sparse_safe = cell_sparse_safe(p, &sp, &b, args, gpu);
    sp.work = cell_work(p);
    switch (p->var) {
    case V_NO_AGG: sp.dir = SPD_NONE; break;
    case V_ROW_AGG: sp.dir = SPD_ROW; break;
    case V_COL_AGG: sp.dir = SPD_COL; break;
    default: sp.dir = SPD_FULL; break;
    }
    for (int r = 0; r < p->nout; r++) {
        const CNode *x = &p->n[p->out[r]];
        sp.agg[r] = x->kind == CN_AGG ? agg_code(x->op) : SPA_NONE;
    }
done:
    *bp = b;
    *spp = sp;
}

/* A Cell/MAgg operator's results (res, or vals for full aggregates) as
 * its value: a block, a list of the MAgg's values, a 1 x 1 block or a
 * scalar. 0, or an error code with e set. */
static int cell_value(const CPlan *p, const SpoofCell *sp, MB *res, const double *vals, Value *out, BrErr *e)
{
    if (sp->dir != SPD_FULL) *out = val_matrix(res);
    else if (p->tpl == T_MAGG) {
        Value l = val_list_new(p->nout);
        for (int r = 0; r < p->nout; r++) list_append(l.l, val_double(vals[r]), NULL, e);
        *out = l;
    } else if (p->out_matrix) {
        MB *s = mb_scalar(vals[0], e);
        if (!s) return e->code;
        *out = val_matrix(s);
    } else {
        *out = val_double(vals[0]);
    }
    return 0;
}

/* CPU stitching of a Cell/MAgg operator: each stitched input's vector
 * from the matrix bound to it (those over the same matrix share their
 * aggregates: spoof_pre.c), bound in its place (own[], released by the
 * caller). The aggregates run first, in parallel regions of their own
 * (docs/codegen.md, "CPU stitching"). */
static int cell_pre(const CPlan *p, Bind *b, MB **own, BrErr *e)
{
    int n = p->nin, rc = 0, np = 0;
    SpPre *one = br_calloc((size_t)n + 1, sizeof *one);
    double **vec = br_calloc((size_t)n + 1, sizeof *vec);
    if (!one || !vec) { free(one); free(vec); return br_err(e, BR_ENOMEM, "out of memory"); }
    for (int k = 0; k < n && !rc; k++) {
        if (!b->pre[k].n || vec[k]) continue;
        const MB *x = b->m[k];
        for (int j = 0; j < n; j++) one[j] = b->m[j] == x ? b->pre[j] : (SpPre){0};
        rc = k_pre_run(one, n, x, vec, e);
    }
    for (int k = 0; k < n && !rc; k++) {
        if (!vec[k]) continue;
        if (np == CG_MAXPRE) { rc = br_err(e, BR_EFAIL, "fused operator: too many stitched inputs"); break; }
        MB *m = mb_dense(1, b->m[k]->cols, e);
        if (!m) { rc = e->code; break; }
        memcpy(m->d, vec[k], (size_t)m->cols * sizeof(double));
        mb_recount_nnz(m);
        own[np++] = m;
        b->m[k] = m;
    }
    for (int k = 0; k < n; k++) free(vec[k]);
    free(vec);
    free(one);
    return rc;
}

static int exec_cell(CgOp *op, Value *args, int nargs, Value *out, BrErr *e, bool *fb, SizeChecks sz)
{
    const CPlan *p = op->plan;
    Bind b = {0};
    SpoofCell sp = {0};
    int rc = 0;
    MB *own[CG_MAXPRE] = {0};   /* the stitched vectors (released at done) */
    cell_prepare(op, args, nargs, &b, &sp, fb, false);
    if (*fb) goto done;
    if (!sp.sparse_safe && sz != SZ_KEEP && cell_sparse_loses(p, &b, sp.rows, sp.cols)) {
        *fb = true;
        goto done;
    }
    const int64_t *coff = b.coff;
    MB *res = NULL;
    if (cplan_stitched(p)) {
        /* the vectors in place of the matrix: the sparse-safe test again */
        if ((rc = cell_pre(p, &b, own, e))) goto done;
        sp.sparse_safe = cell_sparse_safe(p, &sp, &b, args, false);
    }
    double vals[SPOOF_MAXOUT];
    /* a compressed input: the skeleton over the dictionaries where the
     * plan allows it, else per cell over windows of decompressed rows
     * (kernels/spoof_cell.c) */
    bool cmb = false, declined = true, sliced_cmb = false;
    for (int k = 0; k < p->nin; k++) {
        cmb |= b.m[k] && b.m[k]->cmb;
        sliced_cmb |= b.m[k] && b.m[k]->cmb && coff[k] >= 0;   /* windows of its rows only */
    }
    if (cmb && !sliced_cmb && (rc = k_spoof_cell_cla(&sp, &res, vals, &declined, e))) goto done;
    if (cmb && declined) cla_stats_op("spoofCellCLArows");
    if (declined && (rc = k_spoof_cell(&sp, &res, vals, e))) goto done;
    rc = cell_value(p, &sp, res, vals, out, e);
done:
    for (int k = 0; k < CG_MAXPRE; k++) mb_release(own[k]);
    bind_free(&b);
    return rc;
}

/* ---- Row ---- */

static int64_t row_len(const CPlan *p, const int64_t *L, int n)
{
    const CNode *x = &p->n[n];
    return x->vc == VC_VEC ? L[x->vlen] : 1;
}

/* The length and offset of each slice (L[vlen], L[vlen + 1]) from its
 * bounds, as ap_rix reads them (floored); false when they are not a
 * non-empty range inside the child row, or a one-column slice is not one
 * column: then the unfused kernels run and report what is wrong. */
static bool slice_bounds(const CPlan *p, const Bind *b)
{
    for (int i = 0; i < p->nn; i++) {
        const CNode *x = &p->n[i];
        if (x->kind != CN_SLICE) continue;
        const CNode *lo = &p->n[x->a[1]], *hi = &p->n[x->a[2]];
        if (lo->kind != CN_IN || hi->kind != CN_IN || !p->in[lo->in].scalar || !p->in[hi->in].scalar) return false;
        double fl = floor(b->sc[lo->in]), fh = floor(b->sc[hi->in]);
        int64_t n = row_len(p, b->L, x->a[0]);
        if (p->n[x->a[0]].vc != VC_VEC || !(fl >= 1) || !(fh <= (double)n) || fl > fh) return false;
        b->L[x->vlen] = (int64_t)fh - (int64_t)fl + 1;
        b->L[x->vlen + 1] = (int64_t)fl - 1;
        if (x->vc == VC_CELL && b->L[x->vlen] != 1) return false;
    }
    return true;
}


/* The Row skeleton expands a sparse side input (full mode, not the main
 * input) to a dense row per row, and the generated code then runs dense
 * vector primitives over it. The cost model prices that expansion (t(P)
 * %*% H with a permutation matrix P, autoencoder_2layer, is left unfused
 * at plan time). An expansion wider than the plan's own work by
 * ROW_EXPAND_WASTE runs the unfused kernels, which exploit the sparsity,
 * instead: under the heuristic policies always, under the cost-based one
 * when the plan's estimates did not show it (non-zeros unknown at plan
 * time, or a side input denser there). */
#define ROW_EXPAND_WASTE 4.0

/* Expansion waste of Row plan p over inputs of the given shapes and
 * non-zeros (nnz < 0: unknown, taken as dense). */
static bool expansion_waste(const CPlan *p, const int64_t *rows, const int64_t *cols, const int64_t *nnz)
{
    int k0 = p->main;
    double mc = (double)rows[k0] * (double)cols[k0];
    double mnz = nnz[k0] < 0 ? mc : (double)nnz[k0];
    double work = mnz < MB_SPARSITY_TURN_POINT * mc ? mnz + (double)rows[k0] : mc;
    double dense = 0;
    for (int k = 0; k < p->nin; k++) {
        double c = (double)rows[k] * (double)cols[k];
        if (k == k0 || p->in[k].mode != IM_FULL || nnz[k] < 0 || (double)nnz[k] >= MB_SPARSITY_TURN_POINT * c)
            continue;
        dense += c;
        work += (double)nnz[k];
    }
    return dense > ROW_EXPAND_WASTE * work;
}

static bool wasteful_expansion(const CPlan *p, const Bind *b, const int64_t *est, SizeChecks sz)
{
    int n = p->nin;
    int64_t *v = br_malloc((size_t)(6 * n + 6) * sizeof(int64_t));
    if (!v) return false;
    int64_t *r = v, *c = v + n + 1, *z = v + 2 * n + 2, *er = v + 3 * n + 3, *ec = v + 4 * n + 4, *ez = v + 5 * n + 5;
    bool use = sz == SZ_SURPRISE && est;
    for (int k = 0; k < n; k++) {
        const MB *m = b->m[k];
        r[k] = m ? m->rows : 1;
        c[k] = m ? m->cols : 1;
        z[k] = m ? (m->sparse ? m->nnz : -1) : -1;
        er[k] = use ? est[3 * k] : r[k];
        ec[k] = use ? est[3 * k + 1] : c[k];
        ez[k] = use ? est[3 * k + 2] : -1;
    }
    /* the cost model saw the waste and fused anyway: keep its decision */
    bool w = expansion_waste(p, r, c, z) && !(use && expansion_waste(p, er, ec, ez));
    free(v);
    return w;
}

/* Heuristic policies only: small dense Row plans with a vector-matrix
 * product against a wide side matrix (more than ROW_MM_NARROW columns,
 * at least ROW_MM_BLAS cells) on inputs of at most ROW_SMALL cells run
 * unfused (one dgemm; for autoencoder_2layer's (256 x 100) %*% (100 x
 * 100) about three times faster). The cost model prices this at plan
 * time (the product at the measured row-wise rate vs dgemm's). */
#define ROW_SMALL ((double)(1 << 20))
#define ROW_MM_BLAS 2048.0
#define ROW_MM_NARROW 16

static bool blas_is_better(const CPlan *p, const Bind *b)
{
    const MB *mm = b->m[p->main];
    if (mm->sparse || (double)mm->rows * (double)mm->cols > ROW_SMALL) return false;
    for (int i = 0; i < p->nn; i++) {
        const CNode *x = &p->n[i];
        if (x->kind != CN_MM) continue;
        const MB *s = b->m[p->n[x->a[1]].in];
        if (s->cols > ROW_MM_NARROW && (double)s->rows * (double)s->cols >= ROW_MM_BLAS) return true;
    }
    return false;
}

/* Output t of a multi-output Row plan: its variant (cplan_row_ovar),
 * aggregate and shape over the bound lengths. */
static SpRowOut row_out(const CPlan *p, const int64_t *L, int t)
{
    const CNode *r = &p->n[p->out[t]];
    switch (cplan_row_ovar(p, t)) {
    case V_COL_AGG: return (SpRowOut){SPR_COL_AGG, agg_code(r->op), 1, row_len(p, L, r->a[0])};
    case V_FULL_AGG: return (SpRowOut){SPR_FULL_AGG, agg_code(r->op), 1, row_len(p, L, r->a[0])};
    default: return (SpRowOut){SPR_COL_T_AGG, SPA_NONE, row_len(p, L, r->a[0]), row_len(p, L, r->a[1])};
    }
}

/* Binds a Row call (b, which the caller frees) and describes it for the
 * skeleton in *sp; *fb when the generated code cannot take it (the
 * unfused plan runs). */
static void row_prepare(CgOp *op, const int64_t *est, Value *args, int nargs, Bind *bp, SpoofRow *spp, bool *fb,
                        SizeChecks sz, bool gpu)
{
    const CPlan *p = op->plan;
    Bind b = {0};
    SpoofRow sp = {0};
    if (!bind(p, args, nargs, &b) || p->main < 0 || !slice_bounds(p, &b)) { *fb = true; goto done; }
    /* non-finite side inputs: a multi-output plan runs through the
     * reference kernels (whose products skip the zeros of their left
     * operand, 0 * Inf, where the generated row products do not: the
     * merge must not change what each output would be unmerged or
     * unfused) */
    /* a sparse main input's own NaN/Inf: the row values derived from
     * them meet the main input's skipped zeros in t(X) %*% (.) (the
     * device expands sparse rows, so it takes no such input either) */
    bool msp = b.m[p->main]->sparse;
    if ((p->var == V_MULTI || (msp && (gpu || op->fn[1]))) &&
        (side_nonfinite(p, &b) || (msp && mb_has_nonfinite(b.m[p->main])))) { *fb = true; goto done; }
    int64_t M = b.m[p->main]->rows;
    /* stitched inputs: column aggregates of the main matrix, which the
     * skeleton reads whole (over a compressed one, bind computed them) */
    bool pre = false;
    for (int k = 0; k < p->nin; k++) pre |= b.pre[k].n > 0;
    if (pre && b.m[p->main]->cmb) *fb = true;
    for (int k = 0; k < p->nin && !*fb; k++) {
        const MB *m = b.m[k];
        switch (p->in[k].mode) {
        case IM_FULL: *fb = m->rows != M; break;
        case IM_ROW: *fb = b.pre[k].n ? m != b.m[p->main] : m->rows != 1; break;
        case IM_COL: *fb = m->rows != M || m->cols != 1; break;
        default: break;
        }
    }
    /* vector lengths must agree where the plan combines vectors */
    for (int i = 0; i < p->nn && !*fb; i++) {
        const CNode *x = &p->n[i];
        if ((x->kind == CN_UN || x->kind == CN_BIN || x->kind == CN_TER) && x->vc == VC_VEC)
            for (int k = 0; k < x->na; k++) {
                const CNode *c = &p->n[x->a[k]];
                if (c->vc == VC_VEC && b.L[c->vlen] != b.L[x->vlen]) *fb = true;
            }
        if (x->kind == CN_MM) {
            const MB *bm = b.m[p->n[x->a[1]].in];
            if (bm->rows != row_len(p, b.L, x->a[0])) *fb = true;
        }
    }
    if (!*fb && sz != SZ_KEEP)
        *fb = wasteful_expansion(p, &b, est, sz) || (sz == SZ_RULES && blas_is_better(p, &b));
    if (*fb) goto done;
    sp = (SpoofRow){.in = {p->nin, b.m, b.mode, b.sc}, .L = b.L, .rows = M, .main = p->main,
                    .fd = (SpRowDenseFn)op->fn[0], .fs = (SpRowSparseFn)op->fn[1], .ft = (SpRowTmpFn)op->fn[3],
                    .pre = pre ? b.pre : NULL};
    /* the main row's products the generated code takes from the
     * skeleton (a compressed main input looks them up per group) */
    int pn[SPOOF_MAXPROD];
    sp.nprod = cplan_row_main_prods(p, pn, &sp.prod_only);
    for (int j = 0; j < sp.nprod; j++) sp.prod_in[j] = p->n[p->n[pn[j]].a[1]].in;
    /* and the outputs t(main) %*% q whose q it may take (per tuple) */
    sp.ntq = cplan_row_main_taggs(p, sp.tq_out, sp.tq_left);
    /* the dense function's loop without the main row (cgen_c.c gen_row:
     * not beside blocked products) */
    sp.fd_cq = sp.prod_only && sp.nprod + sp.ntq > 0 && !cplan_row_blocked(p);
    const CNode *r = &p->n[p->out[0]];
    switch (p->var) {
    case V_NO_AGG: sp.var = SPR_NO_AGG; sp.orows = M; sp.ocols = row_len(p, b.L, p->out[0]); break;
    case V_ROW_AGG: sp.var = SPR_ROW_AGG; sp.orows = M; sp.ocols = 1; break;
    case V_COL_AGG: sp.var = SPR_COL_AGG; sp.orows = 1; sp.ocols = row_len(p, b.L, r->a[0]); sp.agg = agg_code(r->op); break;
    case V_FULL_AGG: sp.var = SPR_FULL_AGG; sp.orows = 1; sp.ocols = row_len(p, b.L, r->a[0]); sp.agg = agg_code(r->op); break;
    case V_COL_T_AGG:
        sp.var = SPR_COL_T_AGG;
        sp.orows = row_len(p, b.L, r->a[0]);
        sp.ocols = row_len(p, b.L, r->a[1]);
        break;
    case V_MULTI:
        sp.var = SPR_MULTI;
        sp.nout = p->nout;
        for (int t = 0; t < p->nout; t++) sp.mo[t] = row_out(p, b.L, t);
        break;
    default: *fb = true; goto done;
    }
    /* a compressed main input is read by blocks of rows; other compressed
     * inputs are not taken */
    if (any_cmb(p, &b) && !k_spoof_row_cla_ok(&sp)) *fb = true;
done:
    *bp = b;
    *spp = sp;
}

/* A Row operator's results (res[t] or, for full aggregates, v[t]) as its
 * value: one output, or a list of them (multi-output plans). */
static void row_value(const CPlan *p, const SpoofRow *sp, MB **res, const double *v, Value *out, BrErr *e)
{
    if (p->var == V_MULTI) {
        /* a list of the outputs, as MAgg operators return theirs */
        Value l = val_list_new(p->nout);
        for (int t = 0; t < p->nout; t++) {
            Value x = sp->mo[t].var == SPR_FULL_AGG ? val_double(v[t]) : val_matrix(res[t]);
            list_append(l.l, x, NULL, e);
        }
        *out = l;
    }
    else if (p->var == V_FULL_AGG) *out = val_double(v[0]);
    else *out = val_matrix(res[0]);
}

static int exec_row(CgOp *op, const int64_t *est, Value *args, int nargs, Value *out, BrErr *e, bool *fb, SizeChecks sz)
{
    Bind b = {0};
    SpoofRow sp = {0};
    int rc = 0;
    row_prepare(op, est, args, nargs, &b, &sp, fb, sz, false);
    MB *res[CG_MAXOUT] = {NULL};
    double v[CG_MAXOUT] = {0};
    if (!*fb && !(rc = k_spoof_row(&sp, res, v, e))) row_value(op->plan, &sp, res, v, out, e);
    bind_free(&b);
    return rc;
}

/* ---- Outer ---- */

/* The Outer skeleton pays off through the sparsity of its driver W: it
 * computes U %*% t(V) only at W's non-zeros. A dense W is converted to
 * CSR, every cell becomes a short dot product and a no_agg output is
 * converted back. The cost model prices that (a dense driver costs full
 * cells and the conversions, so dense drivers are left unfused at plan
 * time). Up to OUTER_DENSE_MAX cells a dense W runs the unfused kernels
 * instead (for 256 x 100 blocks about five times faster): under the
 * heuristic policies always, under the cost-based one when the plan
 * expected at most a quarter of W's non-zeros (or did not know them).
 * Larger drivers stay fused, as the unfused plan would materialize
 * another m x n matrix. */
#define OUTER_DENSE_MAX ((int64_t)1 << 22)

static bool outer_dense_small(const MB *W, const int64_t *west, SizeChecks sz)
{
    if (sz == SZ_KEEP || W->sparse || W->cmb || W->rows * W->cols > OUTER_DENSE_MAX) return false;
    if (sz == SZ_RULES || !west || west[2] < 0) return true;
    return (double)W->nnz > 4.0 * (double)west[2];
}

/* Binds an Outer call (b, which the caller frees) and describes it in
 * *spp; *fb when the generated code cannot take it. */
static void outer_prepare(CgOp *op, const int64_t *est, Value *args, int nargs, Bind *bp, SpoofOuter *spp, bool *fb,
                          SizeChecks sz)
{
    const CPlan *p = op->plan;
    Bind b = {0};
    SpoofOuter sp = {0};
    if (!bind(p, args, nargs, &b) || p->main < 0 || !conds_hold(p, args) ||
        side_nonfinite(p, &b)) {
        *fb = true;
        goto done;
    }
    int u, v, side;
    cg_outer_inputs(p, &u, &v, &side);
    if (u < 0 || v < 0) { *fb = true; goto done; }
    const MB *W = b.m[p->main], *U = b.m[u], *V = b.m[v];
    int64_t M = W->rows, N = W->cols, R = U->cols;
    if (outer_dense_small(W, est ? est + 3 * p->main : NULL, sz)) { *fb = true; goto done; }
    bool bt = p->in[v].mode == IM_BT;
    *fb = U->rows != M || (bt ? (V->rows != R || V->cols != N) : (V->rows != N || V->cols != R));
    for (int k = 0; k < p->nin && !*fb; k++) {
        const MB *m = b.m[k];
        switch (p->in[k].mode) {
        case IM_FULL: *fb = m->rows != M || m->cols != N; break;
        case IM_ROW: *fb = m->rows != 1 || m->cols != N; break;
        case IM_COL: *fb = m->rows != M || m->cols != 1; break;
        default: break;
        }
    }
    if (!*fb && side >= 0) {
        const MB *s = b.m[side];
        *fb = p->var == V_LEFT_MM ? s->rows != N : s->rows != M;
    }
    if (*fb) goto done;
    if (bt) b.L[v] = R;
    sp = (SpoofOuter){.in = {p->nin, b.m, b.mode, b.sc}, .L = b.L, .main = p->main, .v = v, .m = M, .n = N,
                      .frow = (SpOuterFn)op->fn[0], .fcol = (SpOuterFn)op->fn[1],
                      .ocols = side >= 0 ? b.m[side]->cols : 0};
    switch (p->var) {
    case V_NO_AGG: sp.var = SPO_NO_AGG; break;
    case V_FULL_AGG: sp.var = SPO_FULL_AGG; sp.agg = agg_code(p->n[p->out[0]].op); break;
    case V_LEFT_MM: sp.var = SPO_LEFT; break;
    case V_RIGHT_MM: sp.var = SPO_RIGHT; break;
    case V_RIGHT_T_MM: sp.var = SPO_RIGHT_T; break;
    default: *fb = true; goto done;
    }
done:
    *bp = b;
    *spp = sp;
}

static int exec_outer(CgOp *op, const int64_t *est, Value *args, int nargs, Value *out, BrErr *e, bool *fb, SizeChecks sz)
{
    const CPlan *p = op->plan;
    Bind b = {0};
    SpoofOuter sp = {0};
    int rc = 0;
    outer_prepare(op, est, args, nargs, &b, &sp, fb, sz);
    if (!*fb && ((sp.var == SPO_RIGHT || sp.var == SPO_RIGHT_T) ? !sp.fcol : !sp.frow)) *fb = true;
    if (*fb) goto done;
    MB *res = NULL;
    double val = 0;
    if (any_cmb(p, &b)) cla_stats_op("spoofOuterCLA");
    if ((rc = k_spoof_outer(&sp, &res, &val, e))) goto done;
    if (p->var == V_FULL_AGG) *out = val_double(val);
    else *out = val_matrix(res);
done:
    bind_free(&b);
    return rc;
}

/* Schedule perturbation (perturb.h): is op's kernel taken as not yet
 * compiled at this call? Per operator and thread a draw says: ready from
 * the start, never, or from the thread's Nth fused call on, as when an
 * asynchronous compile lands at some point of the run. */
static bool perturbed_pending(const CgOp *op)
{
    uint64_t call = br_perturb_next_call(PT_CG_READY), w = (uint64_t)(int64_t)br_perturb_worker();
    uint64_t mode = br_perturb_draw(PT_CG_READY, op->plan->hash, w, 4);
    if (mode == 0) return false;
    if (mode == 1) return true;
    return call < br_perturb_draw(PT_CG_READY, op->plan->hash, w ^ 0x5bd1e995, 24);
}

bool cg_op_ready(CgContext *c, CgOp *op)
{
    int r = __atomic_load_n(&op->ready, __ATOMIC_ACQUIRE);
    return (r == 1 || (r == 0 && __atomic_load_n(&op->lazy, __ATOMIC_ACQUIRE))) && !c->opt.interpret &&
           !(br_perturb_on() && perturbed_pending(op));
}

int cg_op_exec(CgContext *c, CgOp *op, const int64_t *est, Value *args, int nargs, Value *out, BrErr *e)
{
    return cg_op_exec_as(c, op, est, args, nargs, out, e, cg_op_ready(c, op));
}

int cg_op_exec_as(CgContext *c, CgOp *op, const int64_t *est, Value *args, int nargs, Value *out, BrErr *e,
                  bool ready)
{
    /* an operator compiled lazily (codegen.c compile_lazily): now, on
     * its first CPU call (a failed compile runs it unfused, as a failed
     * compile at planning time does) */
    if (ready && !c->opt.interpret && __atomic_load_n(&op->ready, __ATOMIC_ACQUIRE) == 0 &&
        __atomic_load_n(&op->lazy, __ATOMIC_ACQUIRE))
        cg_op_compiled(c, op);
    bool fb = !ready || __atomic_load_n(&op->ready, __ATOMIC_ACQUIRE) != 1 || c->opt.interpret;
    int rc = 0;
    SizeChecks sz = c->opt.keep_fused ? SZ_KEEP : c->opt.policy == CG_COST_BASED ? SZ_SURPRISE : SZ_RULES;
    if (!fb) {
        switch (op->plan->tpl) {
        case T_CELL: case T_MAGG: rc = exec_cell(op, args, nargs, out, e, &fb, sz); break;
        case T_ROW: rc = exec_row(op, est, args, nargs, out, e, &fb, sz); break;
        case T_OUTER: rc = exec_outer(op, est, args, nargs, out, e, &fb, sz); break;
        default: fb = true; break;
        }
    }
    if (fb) {
        __atomic_add_fetch(&c->st.fallback, 1, __ATOMIC_RELAXED);
        return cg_interpret(op->plan, args, nargs, out, e);
    }
    return rc;
}

/* ---- on the device (docs/gpu.md: codegen's Row, Outer, Cell and MAgg operators in OpenCL) ---- */

/* Does the CPU's generated operator give p's results to the bit of its
 * device kernel? Only elementwise plans (Cell and Row NO_AGG) without
 * sums (aggregates, products: the device adds in another order) and
 * without stitched inputs (their vectors come from the device's
 * aggregates there), whose operations are all correctly rounded or
 * exact in both C and OpenCL C (not exp, log, pow, the trigonometric
 * functions: libm's and the OpenCL driver's differ in the last bits).
 * FP_CONTRACT is off on both sides. */
static bool cl_exact(const CPlan *p)
{
    if ((p->tpl != T_CELL && p->tpl != T_ROW) || p->var != V_NO_AGG || cplan_stitched(p)) return false;
    for (int i = 0; i < p->nn; i++) {
        const CNode *x = &p->n[i];
        switch (x->kind) {
        case CN_IN: case CN_SLICE: case CN_TRANS: break;
        case CN_UN:
            switch (x->op) {
            case OP_NEG: case OP_NOT: case OP_ABS: case OP_SQRT: case OP_FLOOR: case OP_CEIL: case OP_SIGN:
            case OP_ISNA: case OP_ISNAN: case OP_ISINF: break;
            default: return false;
            }
            break;
        case CN_BIN:
            switch (x->op) {
            case OP_PLUS: case OP_MINUS: case OP_MULT: case OP_DIV: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
            case OP_EQ: case OP_NE: case OP_AND: case OP_OR: case OP_XOR: case OP_MIN: case OP_MAX: break;
            default: return false;
            }
            break;
        case CN_TER:
            if (x->op != OP_IFELSE) return false;
            break;
        default: return false;   /* CN_AGG, CN_MM, CN_MMTL: sums */
        }
    }
    return true;
}

/* op's OpenCL source, generated once (NULL: the generator does not take
 * the plan); GPU_CG_EXACT first when cl_exact. */
static const char *cl_source(CgContext *c, CgOp *op)
{
    pthread_mutex_lock(&c->lock);
    if (!op->clstate) {
        char *src = op->amulet || !op->plan ? NULL
                  : op->plan->tpl == T_ROW ? cgen_cl_row(op->plan)
                  : op->plan->tpl == T_OUTER ? cgen_cl_outer(op->plan)
                  : cgen_cl_cell(op->plan);
        if (src && cl_exact(op->plan)) {
            size_t n = strlen(GPU_CG_EXACT), m = strlen(src);
            char *x = malloc(n + m + 1);
            if (x) memcpy(x, GPU_CG_EXACT, n), memcpy(x + n, src, m + 1);
            free(src);
            src = x;
        }
        op->clsrc = src;
        op->clstate = op->clsrc ? 1 : -1;
    }
    pthread_mutex_unlock(&c->lock);
    return op->clsrc;
}

/* The transfers of a call's matrix inputs (gpu_worth). */
static GpuXfer xfer_of(const CPlan *p, const Bind *b)
{
    GpuXfer x = {0};
    for (int k = 0; k < p->nin; k++) if (b->m[k]) gpu_xfer_add(&x, b->m[k]);
    return x;
}

/* The share of a kernel build this device call bears (gpu.h: GpuXfer's
 * build): none once op's program is built; otherwise the mean build time
 * over the calls of op so far, so that an operator called often enough
 * pays for its build and one called once stays on the host. */
static double build_share(CgOp *op, const char *src)
{
    int64_t n = __atomic_add_fetch(&op->gpu_calls, 1, __ATOMIC_RELAXED);
    return gpu_spoof_built(src) ? 0 : gpu_build_seconds() / (double)n;
}

/* ---- stitched plans on the device (docs/codegen.md, "CPU stitching") ----
 * A stitched input's vector is computed by the device's column
 * aggregates (gpu_agg over the bound matrix, already in the pool for the
 * operator itself: what the unstitched plan's aggregate instructions run
 * under -gpu) and bound as an ordinary row vector, so the generated
 * device kernel runs as for the unstitched plan (its source is the
 * same). An aggregate shared by several stitched inputs of one call is
 * computed once. A vector stays on the device unless the host needs it:
 * an expression over it (the unfused kernels, on the 1 x n vector) or a
 * check of its values (land). */
#define DEV_AGGS 8
typedef struct DevAgg {
    const Value *x;          /* the matrix bound to the stitched input */
    bool land;               /* land every aggregate on the host */
    int n;
    int op[DEV_AGGS];
    Value v[DEV_AGGS];
} DevAgg;

static int dev_agg(void *arg, int op, Value *out, BrErr *e)
{
    DevAgg *d = arg;
    for (int i = 0; i < d->n; i++)
        if (d->op[i] == op && d->v[i].m->rows == 1 && d->v[i].m->cols == d->x->m->cols) {
            *out = val_retain(d->v[i]);
            return 0;
        }
    MB *r = gpu_agg((OpCode)op, DIR_COL, d->x->m, e);
    if (!r && e->code) return e->code;
    if (!r) return interp_agg((void *)d->x, op, out, e);
    if (d->land && mb_host(r, e)) { mb_release(r); return e->code; }
    *out = val_matrix(r);
    if (d->n < DEV_AGGS) d->op[d->n] = op, d->v[d->n++] = val_retain(*out);
    return 0;
}

/* Binds each stitched input of b (a call prepared with its matrix bound
 * there) to its vector, computed on the device (land: every vector on
 * the host). 0, or the error. */
static int dev_pre(const CPlan *p, Bind *b, Value *args, bool land, BrErr *e)
{
    int rc = 0, np = 0;
    DevAgg d[CG_MAXPRE];
    int nd = 0;
    for (int k = 0; k < p->nin && !rc; k++) {
        if (!b->pre[k].n) continue;
        while (np < CG_MAXPRE && b->pv[np]) np++;
        if (np == CG_MAXPRE) { rc = br_err(e, BR_EFAIL, "fused operator: too many stitched inputs"); break; }
        DevAgg *da = NULL;
        for (int i = 0; i < nd && !da; i++) if (d[i].x->m == args[k].m) da = &d[i];
        if (!da && nd < CG_MAXPRE) da = &d[nd++], *da = (DevAgg){.x = &args[k]};
        if (!da) { rc = br_err(e, BR_EFAIL, "fused operator: too many stitched inputs"); break; }
        da->land = land || b->pre[k].n > 1;
        Value v;
        if ((rc = k_pre_apply(&b->pre[k], dev_agg, da, &v, e))) break;
        if (v.kind != V_MATRIX || v.m->rows != 1 || v.m->cols != args[k].m->cols) {
            val_release(&v);
            rc = br_err(e, BR_EFAIL, "fused operator: a stitched vector of the wrong shape");
            break;
        }
        b->pv[np] = mb_retain(v.m);
        b->m[k] = v.m;
        b->pre[k] = (SpPre){0};
        val_release(&v);
    }
    for (int i = 0; i < nd; i++)
        for (int j = 0; j < d[i].n; j++) val_release(&d[i].v[j]);
    return rc;
}

/* Passes over the bound matrices that a call's stitched vectors take on
 * the device: one per distinct aggregate (gpu_agg runs each alone), two
 * for a variance or standard deviation; 0 for an unstitched call. */
static int dev_pre_passes(const CPlan *p, const Bind *b)
{
    int n = 0, seen[DEV_AGGS], ns = 0;
    for (int k = 0; k < p->nin; k++)
        for (int i = 0; i < b->pre[k].n; i++) {
            const SpPreNode *x = &b->pre[k].x[i];
            bool dup = x->kind != SPP_AGG;
            for (int j = 0; j < ns && !dup; j++) dup = seen[j] == x->op;
            if (dup) continue;
            if (ns < DEV_AGGS) seen[ns++] = x->op;
            n += x->op == OP_VAR || x->op == OP_SD ? 2 : 1;
        }
    return n;
}

/* Is the device worth it for this call (transfers of the matrix inputs
 * against the work: the products' flops and the plan's operations per
 * main cell, and the build's share)? */
static bool gpu_row_worth(CgOp *op, const char *src, const Bind *b, const SpoofRow *sp, Value *args)
{
    const CPlan *p = op->plan;
    GpuXfer x = xfer_of(p, b);
    x.build = build_share(op, src);
    const MB *mm = b->m[p->main];
    double cells = (double)mm->rows * (double)mm->cols;
    x.flops = cg_flops(op, p->nin, args) + cells * (cplan_nops(p) + dev_pre_passes(p, b));
    x.out = (sp->var == SPR_NO_AGG || sp->var == SPR_ROW_AGG) ? (double)sp->orows * (double)sp->ocols * 8 : 8;
    return gpu_worth(&x);
}

/* Outer on the device: bound and checked as on the CPU, worth it by its
 * transfers against 2 r flops per non-zero of W (decided: the cost rule
 * has already chosen the device, for compressed inputs). */
static int outer_gpu(CgContext *c, CgOp *op, const char *src, const int64_t *est, int nin, Value *args, Value *out,
                     BrErr *e, bool decided)
{
    SizeChecks sz = c->opt.keep_fused ? SZ_KEEP : c->opt.policy == CG_COST_BASED ? SZ_SURPRISE : SZ_RULES;
    Bind b = {0};
    SpoofOuter sp = {0};
    bool fb = false;
    outer_prepare(op, est, args, nin, &b, &sp, &fb, sz);
    int rc = 0;
    if (fb || any_cmb(op->plan, &b)) {
        gpu_count_fused_cpu();
    } else {
        GpuXfer x = xfer_of(op->plan, &b);
        const MB *w = b.m[op->plan->main];
        double nz = w->sparse ? (double)w->nnz : (double)w->rows * (double)w->cols;
        x.flops = nz * (2.0 * (double)b.L[sp.v] + cplan_nops(op->plan));
        x.out = sp.var == SPO_NO_AGG ? nz * 8 : 8;
        MB *res[1] = {NULL};
        double v = 0;
        if ((decided || (x.build = build_share(op, src), gpu_worth(&x))) && (rc = gpu_spoof_outer(src, &sp, op->plan->nin, res, &v, e)) == 1)
            *out = sp.var == SPO_FULL_AGG ? val_double(v) : val_matrix(res[0]);
    }
    bind_free(&b);
    return rc;
}

/* A stitched Cell plan as one launch (cgregion.c; docs/gpu.md,
 * "Stitched codegen plans in one launch"): the column aggregates, their
 * expressions and the cell body (or its column aggregate) in one
 * DIR_COL region under the unfused order (a column by one lane, as
 * gpu_agg's column kernels: the stitched vectors are the unstitched
 * device plan's to the bit). 1 when it ran (*out set), 0 when the plan
 * or call does not fit or the backend declines the operands (the
 * caller runs the plan's own path), -1 with e set. */
static int cell_region_gpu(const CPlan *p, const Bind *b, Value *out, BrErr *e)
{
    CgRegion g;
    if (!cg_cell_region(p, &(CgRegionCall){b->m, b->sc, b->pre}, &g)) return 0;
    StitchSched s = stitch_unfused_order(&g.r, g.in[0]->rows, g.in[0]->cols);
    MB *res[ST_MAX_OUT] = {NULL};
    if (stitch_exec_all(&g.r, g.in, g.sc, &s, res, e)) return -1;
    if (!res[0]) return 0;
    for (int k = 1; k < st_nout(&g.r); k++) mb_release(res[k]);
    *out = val_matrix(res[0]);
    gpu_count_fused_region();
    return 1;
}

/* The stitched vectors of a call computed inside the operator's own
 * launch (cgregion.c cg_pre_region; gpu/spoof_cl.c stitched_source):
 * true with *st set (over g and slot) when the call fits, else the
 * caller binds the vectors first (dev_pre). */
static bool pre_in_launch(const CPlan *p, const Bind *b, CgRegion *g, int *slot, GpuStitchIn *st)
{
    if (!cg_pre_region(p, &(CgRegionCall){b->m, b->sc, b->pre}, g, slot)) return false;
    *st = (GpuStitchIn){&g->r, g->in[0], g->sc, slot, false};
    return true;
}

/* Cell and MAgg on the device: bound and checked as on the CPU, worth it
 * by their transfers against the plan's operations per cell visited. */
static int cell_gpu(CgOp *op, const char *src, int nin, Value *args, Value *out, BrErr *e, bool decided)
{
    Bind b = {0};
    SpoofCell sp = {0};
    bool fb = false;
    cell_prepare(op, args, nin, &b, &sp, &fb, true);
    int rc = 0;
    if (fb || any_cmb(op->plan, &b)) {
        gpu_count_fused_cpu();
    } else {
        GpuXfer x = xfer_of(op->plan, &b);
        const MB *mm = op->plan->main >= 0 ? b.m[op->plan->main] : NULL;
        double cells = (double)sp.rows * (double)sp.cols;
        double visited = sp.sparse_safe && mm && mm->sparse ? (double)mm->nnz : cells;
        x.flops = visited * BR_MAX(cplan_nops(op->plan), 1) + cells * dev_pre_passes(op->plan, &b);
        x.out = sp.dir == SPD_NONE ? visited * 8 : sp.dir == SPD_ROW ? (double)sp.rows * 8
              : sp.dir == SPD_COL ? (double)sp.cols * 8 : 8;
        MB *res[1] = {NULL};
        double v[SPOOF_MAXOUT] = {0};
        bool run = decided || (x.build = build_share(op, src), gpu_worth(&x));
        /* a stitched plan that fits one region: one launch */
        if (run && cplan_stitched(op->plan) && (rc = cell_region_gpu(op->plan, &b, out, e))) run = false;
        /* else the vectors in the operator's launch (every matrix
         * dense: the sparse-safe test has no use), or the stitched
         * inputs' vectors (on the host, for the sparse-safe test) in
         * place of the matrix */
        CgRegion g;
        int slot[64];
        GpuStitchIn st, *stp = NULL;
        if (run && cplan_stitched(op->plan) && pre_in_launch(op->plan, &b, &g, slot, &st)) {
            stp = &st;
            sp.sparse_safe = false;
        } else if (run && cplan_stitched(op->plan)) {
            if ((rc = dev_pre(op->plan, &b, args, true, e))) run = false, rc = -1;
            else sp.sparse_safe = cell_sparse_safe(op->plan, &sp, &b, args, true);
        }
        if (run && (rc = gpu_spoof_cell(src, &sp, stp, res, v, e)) == 1 && cell_value(op->plan, &sp, res[0], v, out, e))
            rc = -1;
    }
    bind_free(&b);
    return rc;
}

/* A Row, Cell or MAgg operator over compressed inputs (docs/gpu.md,
 * "Compressed inputs"): is the device worth decompressing them and
 * running there? An input whose groups the device kernel takes
 * (gpu_cla_ok) uploads its compressed bytes and is decompressed on the
 * device (its scatter is not priced: one write per cell there); another
 * one is
 * decompressed on the host, whose dense bytes the device side uploads
 * and, for Cell/MAgg, first pays the decompression for (the host runs
 * those over the dictionaries: its flops scale with the compressed over
 * the dense bytes, as cost.c's cscale); the host Row skeleton
 * decompresses blocks of rows itself, so both sides pay that. */
static bool cmb_gpu_worth(CgOp *op, const char *src, const Value *args, int nin)
{
    const CPlan *p = op->plan;
    GpuXfer x = {0};
    double cells = 0, dense = 0, hdense = 0, comp = 0;
    for (int k = 0; k < nin; k++) {
        if (args[k].kind != V_MATRIX) continue;
        const MB *m = args[k].m;
        if (!m->cmb) { gpu_xfer_add(&x, m); continue; }
        double b = 8.0 * (double)m->rows * (double)m->cols;
        bool dev = gpu_cla_ok(m);
        x.up += dev ? (double)cmb_bytes(m) : b;
        dense += b;
        hdense += dev ? 0 : b;
        comp += (double)cmb_bytes(m);
        cells = fmax(cells, (double)m->rows * (double)m->cols);
    }
    /* Row and Outer: the host skeletons decompress blocks of rows
     * themselves, and pay the products' flops as the device does */
    bool row = p->tpl == T_ROW || p->tpl == T_OUTER;
    x.flops = cells * BR_MAX(cplan_nops(p), 1) + (row ? cg_flops(op, nin, args) : 0);
    x.pre = row ? 0 : hdense / 10e9;
    x.hscale = row || dense <= 0 ? 1 : fmin(1, comp / dense);
    x.out = cells * 8;
    x.build = build_share(op, src);
    return gpu_worth(&x);
}

/* args with every compressed matrix decompressed (new values; NULL with
 * e set): on the device where its groups allow (gpu_cla_decompress, a
 * device-only block), else on the host. */
static Value *cmb_plain_args(const Value *args, int nin, BrErr *e)
{
    Value *d = br_calloc((size_t)nin + 1, sizeof *d);
    if (!d) { br_err(e, BR_ENOMEM, "out of memory"); return NULL; }
    for (int k = 0; k < nin; k++) {
        if (args[k].kind != V_MATRIX || !args[k].m->cmb) { d[k] = val_retain(args[k]); continue; }
        BrErr ge = {0};
        MB *m = gpu_cla_decompress(args[k].m, &ge);
        if (!m) m = cmb_decompress(args[k].m, e);
        if (!m) {
            for (int j = 0; j < k; j++) val_release(&d[j]);
            free(d);
            return NULL;
        }
        d[k] = val_matrix(m);
    }
    return d;
}

static int exec_gpu(CgContext *c, CgOp *op, const char *src, const int64_t *est, int nin, Value *args, Value *out,
                    BrErr *e, bool decided);

int cg_exec_gpu(CgContext *c, void *handle, const int64_t *est, int nin, Value *args, Value *out, BrErr *e)
{
    CgOp *op = handle;
    if (!c || !op || op->amulet || !op->plan || c->opt.interpret || nin != op->plan->nin) return 0;
    /* stitched plans: their vectors in the operator's own launch, or by
     * the device's aggregates before the plan's kernel (dev_pre) */
    const char *src = cl_source(c, op);
    if (!src) { gpu_count_fused_cpu(); return 0; }
    bool cmb = false;
    for (int k = 0; k < nin; k++) cmb |= args[k].kind == V_MATRIX && args[k].m->cmb;
    if (!cmb) return exec_gpu(c, op, src, est, nin, args, out, e, false);
    /* compressed inputs: decompressed for the device when the cost rule
     * says so */
    if (!cmb_gpu_worth(op, src, args, nin)) { gpu_count_fused_cpu(); return 0; }
    BrErr de = {0};
    Value *plain = cmb_plain_args(args, nin, &de);
    if (!plain) { gpu_count_fused_cpu(); return 0; }
    int rc = exec_gpu(c, op, src, est, nin, plain, out, e, true);
    for (int k = 0; k < nin; k++) val_release(&plain[k]);
    free(plain);
    return rc;
}

/* cg_exec_gpu over args (decided: the cost rule has already chosen the
 * device). */
static int exec_gpu(CgContext *c, CgOp *op, const char *src, const int64_t *est, int nin, Value *args, Value *out,
                    BrErr *e, bool decided)
{
    if (op->plan->tpl == T_OUTER || op->plan->tpl == T_CELL || op->plan->tpl == T_MAGG) {
        int orc = op->plan->tpl == T_OUTER ? outer_gpu(c, op, src, est, nin, args, out, e, decided)
                                           : cell_gpu(op, src, nin, args, out, e, decided);
        if (orc == 1) __atomic_add_fetch(&op->uses, 1, __ATOMIC_RELAXED);
        return orc;
    }
    SizeChecks sz = c->opt.keep_fused ? SZ_KEEP : c->opt.policy == CG_COST_BASED ? SZ_SURPRISE : SZ_RULES;
    Bind b = {0};
    SpoofRow sp = {0};
    bool fb = false;
    row_prepare(op, est, args, nin, &b, &sp, &fb, sz, true);
    int rc = 0;
    if (fb || any_cmb(op->plan, &b)) {
        gpu_count_fused_cpu();
    } else if (decided || gpu_row_worth(op, src, &b, &sp, args)) {
        /* stitched inputs: their vectors computed in the operator's
         * launch (X dense or CSR), or bound first (sp.in.m is b.m); one
         * with NaN/Inf where row_prepare sends the call to the CPU (its
         * rule for side inputs): a multi-output plan's, and a CSR X's,
         * whose vectors are then checked on the host, or in the launch,
         * which then declines the call (rc 0, the CPU) */
        bool multi = op->plan->var == V_MULTI, check = multi || b.m[op->plan->main]->sparse;
        CgRegion g;
        int slot[64];
        GpuStitchIn st, *stp = NULL;
        if (sp.pre && pre_in_launch(op->plan, &b, &g, slot, &st)) {
            stp = &st;
            st.nfchk = check;
            check = false;
        } else if (sp.pre && dev_pre(op->plan, &b, args, check, e)) {
            bind_free(&b);
            return -1;
        }
        if (sp.pre && check && side_nonfinite(op->plan, &b)) {
            gpu_count_fused_cpu();
            bind_free(&b);
            return 0;
        }
        sp.pre = NULL;
        int nslice = 0;
        for (int i = 0; i < op->plan->nn; i++) nslice += op->plan->n[i].kind == CN_SLICE;
        MB *res[CG_MAXOUT] = {NULL};
        double v[CG_MAXOUT] = {0};
        rc = gpu_spoof_row(src, &sp, op->plan->nin + 2 * nslice, cgen_cl_row_tmp(op->plan, b.L), stp, res, v, e);
        if (rc == 1) {
            __atomic_add_fetch(&op->uses, 1, __ATOMIC_RELAXED);
            row_value(op->plan, &sp, res, v, out, e);
        }
    }
    bind_free(&b);
    return rc;
}

/* ---- the reference path ---- */

/* A stitched input's aggregate op of matrix *arg, unfused. */
static int interp_agg(void *arg, int op, Value *out, BrErr *e) { return ap_agg((OpCode)op, DIR_COL, arg, out, e); }

/* Node i's children (CN_TER and CN_SLICE read a[0..2] whatever na says). */
static int interp_nkids(const CNode *x) { return x->kind == CN_TER || x->kind == CN_SLICE ? 3 : x->na; }

/* Evaluates p over args with the unfused kernels (kernels/apply.c). Each
 * intermediate is released at its last use, as the unfused plan's
 * instructions release theirs: the allocator hands its memory to the next
 * one, where keeping all of them to the end cost fresh pages each call
 * (1.8x the unfused plan's CPU, most of it page faults and malloc, on a
 * 256 x 100 elementwise chain). */
int cg_interpret(const CPlan *p, Value *args, int nargs, Value *out, BrErr *e)
{
    if (nargs != p->nin) return br_err(e, BR_EFAIL, "fused operator: %d arguments for %d inputs", nargs, p->nin);
    Value *v = br_calloc((size_t)p->nn + 1, sizeof(Value));
    int *last = br_malloc(((size_t)p->nn + 1) * sizeof *last);
    if (!v || !last) {
        free(v);
        free(last);
        return br_err(e, BR_ENOMEM, "out of memory");
    }
    /* last[c]: the last node reading c; outputs are kept (nn) */
    for (int i = 0; i < p->nn; i++) last[i] = -1;
    for (int i = 0; i < p->nn; i++)
        for (int k = 0; k < interp_nkids(&p->n[i]); k++)
            if (p->n[i].a[k] >= 0 && p->n[i].a[k] < i) last[p->n[i].a[k]] = i;
    for (int r = 0; r < p->nout; r++) last[p->out[r]] = p->nn;
    Value none = val_none();
    int rc = 0;
    for (int i = 0; i < p->nn && !rc; i++) {
        const CNode *x = &p->n[i];
        Value *a = x->na > 0 ? &v[x->a[0]] : &none, *b = x->na > 1 ? &v[x->a[1]] : &none;
        switch (x->kind) {
        case CN_IN:
            /* a stitched input: the column aggregate of the bound matrix */
            if (p->in[x->in].pre.n) rc = k_pre_apply(&p->in[x->in].pre, interp_agg, &args[x->in], &v[i], e);
            else v[i] = val_retain(args[x->in]);
            break;
        case CN_UN: rc = ap_unary(x->op, a, &v[i], e); break;
        case CN_BIN: rc = ap_binary(x->op, a, b, &v[i], e); break;
        case CN_TER: rc = ap_ternary(a, b, &v[x->a[2]], &v[i], e); break;
        case CN_AGG: rc = ap_agg(x->op, x->dir, a, &v[i], e); break;
        case CN_TRANS: rc = ap_reorg(OP_TRANS, a, &v[i], e); break;
        case CN_SLICE: {
            IxSpec ix = {.rmode = IX_ALL, .cmode = IX_RANGE, .has_col = true};
            Value ia[5] = {*a, none, none, v[x->a[1]], v[x->a[2]]};
            rc = ap_rix(&ix, ia, &v[i], e);
            break;
        }
        case CN_MM: case CN_MMTL:
            rc = ap_matmul(x->kind == CN_MM ? OP_MATMUL : OP_MATMULTL, 0, a, b, &none, &v[i], e);
            break;
        }
        if (rc && !e->code) br_err(e, BR_EFAIL, "fused operator failed");
        for (int k = 0; !rc && k < interp_nkids(x); k++) {
            int c = x->a[k];
            if (c >= 0 && c < i && last[c] == i) {
                val_release(&v[c]);
                v[c] = none;
            }
        }
    }
    if (!rc) {
        if (p->nout > 1) {    /* MAgg, multi-output Row */
            Value l = val_list_new(p->nout);
            for (int r = 0; r < p->nout; r++) list_append(l.l, val_retain(v[p->out[r]]), NULL, e);
            *out = l;
        } else if (p->out_matrix && v[p->out[0]].kind != V_MATRIX) {
            MB *s = mb_scalar(val_as_double(&v[p->out[0]]), e);
            if (!s) rc = e->code;
            else *out = val_matrix(s);
        } else {
            *out = val_retain(v[p->out[0]]);
        }
    }
    for (int i = 0; i < p->nn; i++) val_release(&v[i]);
    free(v);
    free(last);
    return rc;
}
