/* ew.c: elementwise kernels (unary, binary with broadcasting, matrix-scalar,
 * ifelse).
 *
 * Layers, bottom up:
 *  - flat kernels over contiguous arrays (ew_leaf.c, one copy per SIMD
 *    level, see leaf.h): one `omp simd` loop per UNARY / BINARY row of
 *    ops.def over the row's reference expression (generated), exactly
 *    the semantics of ops_unary / ops_binary;
 *  - the dense driver: tasks over (row, column chunk), each operand viewed as
 *    a pointer to the chunk's values (dense rows, broadcast row vectors,
 *    sparse rows expanded into a stack buffer) or as a scalar (column
 *    vectors, scalars); nnz counted per chunk while it is in cache;
 *  - the sparse driver: row chunks build CSR output into private buffers
 *    (intersection of non-zeros for OF_MULT, union for OF_SAFE), then one
 *    copy into the result;
 *  - the structure-preserving map for sparse inputs of operators with
 *    f(0)=0 (unary, matrix-scalar): the flat kernel runs over the value
 *    array, then zeros are dropped.
 */
#include "ew.h"
#include "leaf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CW 2048          /* cells of one (row, column chunk) dense task */
#define FLAT_CHUNK 8192  /* cells of one task in flat dense loops */

/* The flat kernels of the SIMD level in use (ew_leaf.c). */
static const KEwLeaf *leaf(void) { return k_leaves(k_isa())->ew; }

/* One flat kernel with its parameters (used by the structure map). */
typedef enum { FF_UN, FF_VS, FF_SV } FlatKind;
typedef struct FlatFn { FlatKind kind; OpCode op; double s; } FlatFn;

static void flat_apply(const KEwLeaf *L, const FlatFn *f, const double *x, double *o, int64_t n)
{
    switch (f->kind) {
    case FF_UN: L->unary(f->op, x, o, n); break;
    case FF_VS: L->bin_vs(f->op, x, f->s, o, n); break;
    case FF_SV: L->bin_sv(f->op, f->s, x, o, n); break;
    }
}

/* ------------------------------------------------------------------ */
/* sparse helpers                                                      */
/* ------------------------------------------------------------------ */

/* Removes stored zeros of a sparse block the caller owns (in place). */
static void sp_drop_zeros(MB *m)
{
    int64_t w = 0, r = 0;
    for (int64_t i = 0; i < m->rows; i++) {
        int64_t end = m->rp[i + 1];
        for (; r < end; r++)
            if (m->v[r] != 0) { m->ci[w] = m->ci[r]; m->v[w] = m->v[r]; w++; }
        m->rp[i + 1] = w;
    }
    m->nnz = w;
}

/* Examines a new block out (mb_examine) whose every stored value the
 * kernel's counting pass saw (nz_count_fin), and records what that pass
 * found in its finiteness flag, so that a later product or where-loop
 * over it (mb_has_nonfinite) does not scan it again. Returns out, or
 * NULL (out released) with e set. */
static MB *ew_finish(MB *out, int nonfinite, BrErr *e)
{
    if (mb_examine(out, e)) { mb_release(out); return NULL; }
    mb_fin_set(out, nonfinite != 0);
    return out;
}

/* Sparse a mapped by f (f(0) == 0) keeping a's structure: new block the
 * caller owns, stored zeros dropped, format examined. */
static MB *sp_map(const MB *a, const FlatFn *f, BrErr *e)
{
    MB *out = mb_sp_alloc(a->rows, a->cols, a->nnz, e);
    if (!out) return NULL;
    int64_t nnz = a->nnz;
    memcpy(out->rp, a->rp, (size_t)(a->rows + 1) * sizeof(int64_t));
    if (nnz) memcpy(out->ci, a->ci, (size_t)nnz * sizeof(int32_t));
    int64_t nch = (nnz + FLAT_CHUNK - 1) / FLAT_CHUNK, kept = 0;
    int bad = 0;
    const KEwLeaf *L = leaf();
#pragma omp parallel for num_threads(br_threads()) if (br_par(nnz)) \
    reduction(+:kept) reduction(|:bad) schedule(static)
    for (int64_t t = 0; t < nch; t++) {
        int64_t k0 = t * FLAT_CHUNK, w = BR_MIN(FLAT_CHUNK, nnz - k0);
        flat_apply(L, f, a->v + k0, out->v + k0, w);
        kept += L->nz_count_fin(out->v + k0, w, &bad);
    }
    out->nnz = nnz;
    out->build_row = out->rows;
    if (kept != nnz) sp_drop_zeros(out);
    return ew_finish(out, bad, e);
}

/* Private CSR output of one row chunk of the sparse driver. */
typedef struct SpBuf { int32_t *ci; double *v; int64_t n, cap; } SpBuf;

/* Room for `extra` more entries; false when out of memory. */
static bool spbuf_reserve(SpBuf *b, int64_t extra)
{
    if (b->n + extra <= b->cap) return true;
    int64_t nc = BR_MAX(b->cap * 2, b->n + extra);
    nc = BR_MAX(nc, 64);
    int32_t *ci = br_realloc_aligned(b->ci, (size_t)b->n * sizeof(int32_t), (size_t)nc * sizeof(int32_t));
    if (!ci) return false;
    b->ci = ci;
    double *v = br_realloc_aligned(b->v, (size_t)b->n * sizeof(double), (size_t)nc * sizeof(double));
    if (!v) return false;
    b->v = v;
    b->cap = nc;
    return true;
}

/* Rows per chunk of the sparse drivers (results never depend on it). */
static int64_t sp_chunk_rows(int64_t rows)
{
    int64_t rc = rows / (8 * (int64_t)br_threads());
    return BR_MAX(rc, 16);
}

/* Finishes a sparse driver: out->rp[i+1] holds row counts, bufs[ch] the
 * entries of rows [ch*rc, ...), nonfinite whether one is NaN or
 * infinite. Builds the CSR arrays, frees bufs, examines the format and
 * sets the finiteness flag. Returns out, or NULL (out released) with e
 * set. */
static MB *sp_finish(MB *out, SpBuf *bufs, int64_t nch, int64_t rc, bool fail,
                     int nonfinite, BrErr *e)
{
    if (!fail) {
        for (int64_t i = 0; i < out->rows; i++) out->rp[i + 1] += out->rp[i];
        int64_t nnz = out->rp[out->rows];
        if (mb_sp_reserve(out, nnz, e)) fail = true;
        else {
#pragma omp parallel for num_threads(br_threads()) if (br_par(nnz)) \
    schedule(static)
            for (int64_t ch = 0; ch < nch; ch++) {
                int64_t off = out->rp[ch * rc];
                if (bufs[ch].n) {
                    memcpy(out->ci + off, bufs[ch].ci, (size_t)bufs[ch].n * sizeof(int32_t));
                    memcpy(out->v + off, bufs[ch].v, (size_t)bufs[ch].n * sizeof(double));
                }
            }
            out->nnz = nnz;
            out->build_row = out->rows;
        }
    }
    for (int64_t ch = 0; ch < nch; ch++) { br_free_aligned(bufs[ch].ci); br_free_aligned(bufs[ch].v); }
    free(bufs);
    if (fail) {
        br_err(e, BR_ENOMEM, "out of memory in elementwise operation");
        mb_release(out);
        return NULL;
    }
    return ew_finish(out, nonfinite, e);
}

/* ------------------------------------------------------------------ */
/* operands                                                            */
/* ------------------------------------------------------------------ */

typedef enum { MD_FULL, MD_ROW, MD_COL, MD_SCAL } Mode;

/* One operand of an elementwise operation over an M x N output. */
typedef struct Opnd {
    Mode mode;
    const MB *m;       /* MD_FULL: the matrix (any format) */
    double s;          /* MD_SCAL: the value */
    const double *vec; /* MD_ROW / MD_COL: the vector's values, dense */
    double *vec_own;   /* vec when allocated here */
    const int32_t *vci;/* MD_ROW: columns of the vector's non-zeros */
    const double *vv;  /* MD_ROW: their values */
    int64_t vnnz;
    int32_t *vci_own;
    double *vv_own;
} Opnd;

static void opnd_free(Opnd *o)
{
    free(o->vec_own); free(o->vci_own); free(o->vv_own);
}

/* Prepares the vector data of a MD_ROW / MD_COL operand (o->m set): the
 * dense values, and for row vectors the list of non-zeros. */
static int opnd_vec(Opnd *o, BrErr *e)
{
    const MB *m = o->m;
    int64_t len = m->rows * m->cols;
    if (!m->sparse) o->vec = m->d;
    else {
        o->vec_own = br_calloc((size_t)len, sizeof(double));
        if (!o->vec_own) return br_err(e, BR_ENOMEM, "out of memory");
        for (int64_t i = 0; i < m->rows; i++)
            for (int64_t k = m->rp[i]; k < m->rp[i + 1]; k++)
                o->vec_own[i * m->cols + m->ci[k]] = m->v[k];
        o->vec = o->vec_own;
    }
    if (o->mode != MD_ROW) return 0;
    if (m->sparse) { o->vci = m->ci; o->vv = m->v; o->vnnz = m->nnz; return 0; }
    o->vci_own = br_malloc((size_t)BR_MAX(m->nnz, 1) * sizeof(int32_t));
    o->vv_own = br_malloc((size_t)BR_MAX(m->nnz, 1) * sizeof(double));
    if (!o->vci_own || !o->vv_own) return br_err(e, BR_ENOMEM, "out of memory");
    int64_t n = 0;
    for (int64_t j = 0; j < len; j++)
        if (o->vec[j] != 0) { o->vci_own[n] = (int32_t)j; o->vv_own[n++] = o->vec[j]; }
    o->vci = o->vci_own; o->vv = o->vv_own; o->vnnz = n;
    return 0;
}

static Opnd opnd_mat(const MB *m, Mode mode)
{
    Opnd o = {0};
    o.mode = mode; o.m = m;
    return o;
}

static Opnd opnd_scal(double s)
{
    Opnd o = {0};
    o.mode = MD_SCAL; o.s = s;
    return o;
}

/* Operand contiguous over the whole output (flat loops apply). */
static bool opnd_flat(const Opnd *o)
{
    return o->mode == MD_SCAL || (o->mode == MD_FULL && !o->m->sparse);
}

/* Non-zero cells the operand covers in an M x N output (an estimate for
 * vectors: their non-zeros times the broadcast length). */
static int64_t opnd_nnz(const Opnd *o, int64_t M, int64_t N)
{
    switch (o->mode) {
    case MD_FULL: return o->m->nnz;
    case MD_ROW: return o->m->nnz * M;
    case MD_COL: return o->m->nnz * N;
    default: return o->s != 0 ? M * N : 0;
    }
}

/* Dense view of operand o over row i, columns [j0, j0+w): returns a pointer
 * to w values (into the matrix, the vector, or buf after expanding a sparse
 * row), or NULL with the value in *s when it is constant over the chunk. */
static const double *dview(const Opnd *o, int64_t i, int64_t j0, int64_t w,
                           double *buf, double *s)
{
    switch (o->mode) {
    case MD_SCAL: *s = o->s; return NULL;
    case MD_COL: *s = o->vec[i]; return NULL;
    case MD_ROW: return o->vec + j0;
    case MD_FULL: break;
    }
    const MB *m = o->m;
    if (!m->sparse) return m->d + i * m->cols + j0;
    memset(buf, 0, (size_t)w * sizeof(double));
    int64_t lo = m->rp[i], hi = m->rp[i + 1];
    if (j0 > 0) { /* first entry with column >= j0 */
        int64_t a = lo, b = hi;
        while (a < b) {
            int64_t mid = a + (b - a) / 2;
            if (m->ci[mid] < j0) a = mid + 1; else b = mid;
        }
        lo = a;
    }
    for (int64_t k = lo; k < hi && m->ci[k] < j0 + w; k++) buf[m->ci[k] - j0] = m->v[k];
    return buf;
}

/* Rows of at most NARROW cells go to tasks of several whole rows, run
 * row by row inside the task, a column vector against a dense matrix in
 * one leaf call for all of them (a task per row made a 2e6 x 5 division
 * by a column vector 6x slower than a flat loop over the same cells: per
 * row two views, a leaf call and a count). */
#define NARROW (CW / 4)

/* The cells of task t of an M x N output: whole rows [t * rb, ...) when
 * rb > 0 (rows of at most NARROW cells), else row t / nck, columns from
 * (t % nck) * cw; *i0 and *j0 its first cell, *r its rows, *w its cells
 * (rb > 0: r * N, the rows' cells together). */
static void task_cells(int64_t t, int64_t M, int64_t C, int64_t rb, int64_t nck, int64_t cw, int64_t *i0,
                       int64_t *j0, int64_t *r, int64_t *w)
{
    if (rb > 0) {
        *i0 = t * rb, *j0 = 0, *r = BR_MIN(rb, M - *i0), *w = *r * C;
        return;
    }
    *i0 = t / nck, *j0 = (t % nck) * cw, *r = 1, *w = BR_MIN(cw, C - *j0);
}

/* Like dview, but constants are written into cbuf so a pointer is always
 * returned (ifelse). */
static const double *dview_ptr(const Opnd *o, int64_t i, int64_t j0, int64_t w,
                               double *buf, double *cbuf)
{
    double s;
    const double *p = dview(o, i, j0, w, buf, &s);
    if (p) return p;
    leaf()->fill(cbuf, s, w);
    return cbuf;
}

/* ------------------------------------------------------------------ */
/* dense driver                                                        */
/* ------------------------------------------------------------------ */

/* a op b into a new dense M x N block (examined). Tasks cover one row and
 * up to CW columns, or FLAT_CHUNK cells when both operands are flat. */
static MB *dense_drive(OpCode op, const Opnd *a, const Opnd *b, int64_t M,
                       int64_t N, BrErr *e)
{
    MB *out = mb_dense_uninit(M, N, e);
    if (!out) return NULL;
    bool flat = opnd_flat(a) && opnd_flat(b);
    int64_t R = flat ? 1 : M, C = flat ? M * N : N;
    int64_t cw = flat ? FLAT_CHUNK : CW, rb = !flat && N > 0 && N <= NARROW ? CW / N : 0;
    int64_t nck = (C + cw - 1) / cw, ntask = rb ? (M + rb - 1) / rb : R * nck, nnz = 0;
    int bad = 0;
    double *od = out->d;
    const KEwLeaf *L = leaf();
#pragma omp parallel for num_threads(br_threads()) if (br_par(M * N)) \
    reduction(+:nnz) reduction(|:bad) schedule(static)
    for (int64_t t = 0; t < ntask; t++) {
        double bufa[CW], bufb[CW];
        int64_t i, j0, r, w;
        task_cells(t, M, C, rb, nck, cw, &i, &j0, &r, &w);
        double *o = od + i * C + j0;
        if (rb && a->mode == MD_FULL && !a->m->sparse && b->mode == MD_COL)
            L->bin_vc(op, a->m->d + i * N, b->vec + i, o, r, N);
        else if (rb && b->mode == MD_FULL && !b->m->sparse && a->mode == MD_COL)
            L->bin_cv(op, a->vec + i, b->m->d + i * N, o, r, N);
        else
            for (int64_t k = 0, rw = w / r; k < r; k++) {   /* a row, or a part of one (rb == 0) */
                double sa = 0, sb = 0, *ok = o + k * N;
                const double *pa = dview(a, i + k, j0, rw, bufa, &sa);
                const double *pb = dview(b, i + k, j0, rw, bufb, &sb);
                if (pa && pb) L->bin_vv(op, pa, pb, ok, rw);
                else if (pa) L->bin_vs(op, pa, sb, ok, rw);
                else if (pb) L->bin_sv(op, sa, pb, ok, rw);
                else L->fill(ok, ops_binary(op, sa, sb), rw);
            }
        nnz += L->nz_count_fin(o, w, &bad);
    }
    out->nnz = nnz;
    return ew_finish(out, bad, e);
}

/* ------------------------------------------------------------------ */
/* sparse driver                                                       */
/* ------------------------------------------------------------------ */

enum { CL_DENSE, CL_SAFE, CL_MULT };   /* f(0,0)!=0; f(0,0)=0; f(x,0)=f(0,y)=0 */
enum { RV_SP, RV_DN, RV_SC };

/* One operand's row for the sparse driver: a list of non-zeros, a dense
 * row, or a non-zero constant (a zero constant is an empty list). */
typedef struct RowV {
    int kind;
    const int32_t *ci;
    const double *v;
    int64_t len;
    const double *d;
    double s;
} RowV;

static RowV row_view(const Opnd *o, int64_t i)
{
    RowV r = {0};
    r.kind = RV_SP;
    switch (o->mode) {
    case MD_SCAL:
    case MD_COL: {
        double s = o->mode == MD_SCAL ? o->s : o->vec[i];
        if (s != 0) { r.kind = RV_SC; r.s = s; }
        break;
    }
    case MD_ROW:
        r.ci = o->vci; r.v = o->vv; r.len = o->vnnz;
        break;
    case MD_FULL:
        if (o->m->sparse) {
            int64_t k = o->m->rp[i];
            r.ci = o->m->ci + k; r.v = o->m->v + k; r.len = o->m->rp[i + 1] - k;
        } else {
            r.kind = RV_DN; r.d = o->m->d + i * o->m->cols;
        }
        break;
    }
    return r;
}

/* Most entries sp_row can produce for these rows. */
static int64_t sp_row_ub(int cls, const RowV *a, const RowV *b, int64_t N)
{
    if (a->kind == RV_SP && b->kind == RV_SP)
        return cls == CL_MULT ? BR_MIN(a->len, b->len) : BR_MIN(a->len + b->len, N);
    if (cls == CL_MULT && a->kind == RV_SP) return a->len;
    if (cls == CL_MULT && b->kind == RV_SP) return b->len;
    return N;
}

/* Value of row r at column j while walking columns in order (*p: position
 * in a list). */
static inline double walk_cell(const RowV *r, int64_t j, int64_t *p)
{
    if (r->kind == RV_DN) return r->d[j];
    if (r->kind == RV_SC) return r->s;
    if (*p < r->len && r->ci[*p] == j) return r->v[(*p)++];
    return 0;
}

/* Computes one output row (non-zeros only) into ci/v (room for
 * sp_row_ub entries); returns the count. */
/* Two sparse rows: their intersection (mult) or union merged, f(x, y)
 * per column; op a literal at the common operators' call sites, so that
 * ops_binary folds to its expression (a call per entry took a third of
 * X + Y over two sparse blocks) */
static inline __attribute__((always_inline)) int64_t sp_merge(OpCode op, bool mult, const RowV *a, const RowV *b,
                                                             int32_t *restrict ci, double *restrict v)
{
    int64_t n = 0, p = 0, q = 0, la = a->len, lb = b->len;
    if (mult) {
        while (p < la && q < lb) {
            if (a->ci[p] < b->ci[q]) p++;
            else if (a->ci[p] > b->ci[q]) q++;
            else {
                double r = ops_binary(op, a->v[p], b->v[q]);
                if (r != 0) { ci[n] = a->ci[p]; v[n++] = r; }
                p++; q++;
            }
        }
        return n;
    }
    while (p < la && q < lb) {
        int32_t ja = a->ci[p], jb = b->ci[q], j = ja < jb ? ja : jb;
        double x = ja <= jb ? a->v[p] : 0, y = jb <= ja ? b->v[q] : 0;
        p += ja <= jb;
        q += jb <= ja;
        double r = ops_binary(op, x, y);
        if (r != 0) { ci[n] = j; v[n++] = r; }
    }
    for (; p < la; p++) {
        double r = ops_binary(op, a->v[p], 0);
        if (r != 0) { ci[n] = a->ci[p]; v[n++] = r; }
    }
    for (; q < lb; q++) {
        double r = ops_binary(op, 0, b->v[q]);
        if (r != 0) { ci[n] = b->ci[q]; v[n++] = r; }
    }
    return n;
}

static int64_t sp_row(OpCode op, int cls, const RowV *a, const RowV *b,
                      int64_t N, int32_t *restrict ci, double *restrict v)
{
    int64_t n = 0, p = 0, q = 0;
    if (a->kind == RV_SP && b->kind == RV_SP) {
        bool mult = cls == CL_MULT;
        switch (op) {
        case OP_PLUS: return sp_merge(OP_PLUS, mult, a, b, ci, v);
        case OP_MINUS: return sp_merge(OP_MINUS, mult, a, b, ci, v);
        case OP_MULT: return sp_merge(OP_MULT, mult, a, b, ci, v);
        default: return sp_merge(op, mult, a, b, ci, v);
        }
    }
    if (cls == CL_MULT && a->kind == RV_SP) {
        for (; p < a->len; p++) {
            int32_t j = a->ci[p];
            double r = ops_binary(op, a->v[p], b->kind == RV_DN ? b->d[j] : b->s);
            if (r != 0) { ci[n] = j; v[n++] = r; }
        }
        return n;
    }
    if (cls == CL_MULT && b->kind == RV_SP) {
        for (; q < b->len; q++) {
            int32_t j = b->ci[q];
            double r = ops_binary(op, a->kind == RV_DN ? a->d[j] : a->s, b->v[q]);
            if (r != 0) { ci[n] = j; v[n++] = r; }
        }
        return n;
    }
    for (int64_t j = 0; j < N; j++) {
        double x = walk_cell(a, j, &p), y = walk_cell(b, j, &q);
        double r = ops_binary(op, x, y);
        if (r != 0) { ci[n] = (int32_t)j; v[n++] = r; }
    }
    return n;
}

/* a op b into a new sparse M x N block (examined) for a sparse-safe class:
 * CL_MULT intersects the operands' non-zeros, CL_SAFE takes their union. */
static MB *sparse_drive(OpCode op, int cls, const Opnd *a, const Opnd *b,
                        int64_t M, int64_t N, BrErr *e)
{
    MB *out = mb_sp_alloc(M, N, 1, e);
    if (!out) return NULL;
    int64_t rc = sp_chunk_rows(M), nch = (M + rc - 1) / rc;
    SpBuf *bufs = br_calloc((size_t)BR_MAX(nch, 1), sizeof(SpBuf));
    if (!bufs) { mb_release(out); br_err(e, BR_ENOMEM, "out of memory"); return NULL; }
    int64_t work = opnd_nnz(a, M, N) + opnd_nnz(b, M, N) + M;
    bool fail = false;
    int bad = 0;
    const KEwLeaf *L = leaf();
#pragma omp parallel for num_threads(br_threads()) if (br_par(work)) \
    reduction(|:bad) schedule(dynamic)
    for (int64_t ch = 0; ch < nch; ch++) {
        SpBuf *sb = &bufs[ch];
        int64_t end = BR_MIN(M, (ch + 1) * rc);
        for (int64_t i = ch * rc; i < end; i++) {
            RowV ra = row_view(a, i), rb = row_view(b, i);
            if (!spbuf_reserve(sb, sp_row_ub(cls, &ra, &rb, N))) {
#pragma omp atomic write
                fail = true;
                break;
            }
            int64_t c = sp_row(op, cls, &ra, &rb, N, sb->ci + sb->n, sb->v + sb->n);
            L->nz_count_fin(sb->v + sb->n, c, &bad);
            sb->n += c;
            out->rp[i + 1] = c;
        }
    }
    return sp_finish(out, bufs, nch, rc, fail, bad, e);
}

/* ------------------------------------------------------------------ */
/* public entry points                                                 */
/* ------------------------------------------------------------------ */

/* f(a) cellwise; see ew.h. Caller owns the result. */
MB *k_unary(OpCode op, const MB *a, BrErr *e)
{
    if ((unsigned)op >= OP__COUNT || op_info[op].kind != OK_UNARY) {
        br_err(e, BR_EARG, "k_unary: not a unary elementwise operator");
        return NULL;
    }
    int64_t M = a->rows, N = a->cols;
    const KEwLeaf *L = leaf();
    if (!a->sparse) {
        MB *out = mb_dense_uninit(M, N, e);
        if (!out) return NULL;
        /* compute-heavy functions (tanh, exp) weigh their cells
         * (br_cell_weight): fewer cells take both threads */
        const double wt = br_cell_weight(op_info[op].cost);
        int64_t n = M * N, nnz = 0, ch = BR_MAX(1, (int64_t)(FLAT_CHUNK / wt)), nch = (n + ch - 1) / ch;
        int bad = 0;
#pragma omp parallel for num_threads(br_threads()) if (br_par((double)n * wt)) \
    reduction(+:nnz) reduction(|:bad) schedule(static)
        for (int64_t t = 0; t < nch; t++) {
            int64_t k0 = t * ch, w = BR_MIN(ch, n - k0);
            L->unary(op, a->d + k0, out->d + k0, w);
            nnz += L->nz_count_fin(out->d + k0, w, &bad);
        }
        out->nnz = nnz;
        return ew_finish(out, bad, e);
    }
    if (op_info[op].flags & OF_SAFE) {
        FlatFn f = { FF_UN, op, 0 };
        return sp_map(a, &f, e);
    }
    /* sparse input, f(0) != 0: dense output of f(0) with f(v) scattered */
    MB *out = mb_dense_uninit(M, N, e);
    if (!out) return NULL;
    double f0 = ops_unary(op, 0);
    int64_t nnz = 0;
    int bad = 0;
#pragma omp parallel for num_threads(br_threads()) if (br_par(M * N)) \
    reduction(+:nnz) reduction(|:bad) schedule(static)
    for (int64_t i = 0; i < M; i++) {
        double *o = out->d + i * N;
        int64_t k = a->rp[i];
        L->fill(o, f0, N);
        L->unary_scatter(op, a->v + k, a->ci + k, o, a->rp[i + 1] - k);
        nnz += L->nz_count_fin(o, N, &bad);
    }
    out->nnz = nnz;
    return ew_finish(out, bad, e);
}

static bool check_binary(OpCode op, BrErr *e)
{
    if ((unsigned)op < OP__COUNT && op_info[op].kind == OK_BINARY) return true;
    br_err(e, BR_EARG, "not a binary elementwise operator");
    return false;
}

/* Modes of a and b and the output shape under the broadcast rules of
 * k_binary; returns 0 or a "dimension mismatch" error. */
static int resolve_shapes(const MB *a, const MB *b, Mode *ma, Mode *mb,
                          int64_t *M, int64_t *N, BrErr *e)
{
    int64_t ar = a->rows, ac = a->cols, br = b->rows, bc = b->cols;
    *ma = MD_FULL; *mb = MD_FULL; *M = ar; *N = ac;
    if (ar == br && ac == bc) return 0;
    if (br == 1 && bc == ac) { *mb = MD_ROW; return 0; }
    if (bc == 1 && br == ar) { *mb = MD_COL; return 0; }
    *M = br; *N = bc;
    if (ar == 1 && ac == bc) { *ma = MD_ROW; return 0; }
    if (ac == 1 && ar == br) { *ma = MD_COL; return 0; }
    if (ac == 1 && br == 1) { *ma = MD_COL; *mb = MD_ROW; *M = ar; *N = bc; return 0; }
    return br_err(e, BR_EDIM,
                  "dimension mismatch in elementwise operation: %lldx%lld and %lldx%lld",
                  (long long)ar, (long long)ac, (long long)br, (long long)bc);
}

/* Runs a op b over prepared operands, choosing the sparse driver when the
 * operator is sparse-safe and the estimated output is sparse. */
static MB *binary_run(OpCode op, int cls, Opnd *a, Opnd *b, int64_t M,
                      int64_t N, BrErr *e)
{
    MB *out = NULL;
    if ((a->mode == MD_ROW || a->mode == MD_COL) && opnd_vec(a, e)) goto done;
    if ((b->mode == MD_ROW || b->mode == MD_COL) && opnd_vec(b, e)) goto done;
    /* multiplicative operators on a sparse-format operand always take the
     * sparse driver, so the implicit zeros give 0 whatever the density */
    bool sparse = cls == CL_MULT && ((a->m && a->m->sparse) || (b->m && b->m->sparse));
    if (!sparse && cls != CL_DENSE && M * N > 0) {
        int64_t na = opnd_nnz(a, M, N), nb = opnd_nnz(b, M, N);
        int64_t est = cls == CL_MULT ? BR_MIN(na, nb) : BR_MIN(M * N, na + nb);
        sparse = mb_should_be_sparse(M, N, est) || est == 0;
    }
    out = sparse ? sparse_drive(op, cls, a, b, M, N, e)
                 : dense_drive(op, a, b, M, N, e);
done:
    opnd_free(a);
    opnd_free(b);
    return out;
}

/* a op b cellwise with broadcasting; see ew.h. Caller owns the result. */
MB *k_binary(OpCode op, const MB *a, const MB *b, BrErr *e)
{
    if (!check_binary(op, e)) return NULL;
    Mode ma, mb;
    int64_t M, N;
    /* a right operand of 1 x 1 that fits no other rule is a scalar:
       SystemDS's simplifyScalarMVBinaryOperation (X * y -> X *
       as.scalar(y)) applies wherever y's 1 x 1 size is known, as for
       dout[n, k] in its nn library's max_pool2d backward */
    if (b->rows == 1 && b->cols == 1 && !(a->rows == 1 || a->cols == 1))
        return k_binary_ms(op, a, mb_get(b, 0, 0), e);
    if (resolve_shapes(a, b, &ma, &mb, &M, &N, e)) return NULL;
    int fl = op_info[op].flags;
    int cls = (fl & OF_MULT) ? CL_MULT : (fl & OF_SAFE) ? CL_SAFE : CL_DENSE;
    /* IEEE in every plan: the zeros of one operand annihilate the other
     * only where it is finite (0 * NaN = NaN), so with a NaN or Inf
     * present the union of non-zeros is evaluated instead */
    if (cls == CL_MULT && (mb_has_nonfinite(a) || mb_has_nonfinite(b))) cls = CL_SAFE;
    Opnd oa = opnd_mat(a, ma), ob = opnd_mat(b, mb);
    return binary_run(op, cls, &oa, &ob, M, N, e);
}

/* a op s (left) or s op a (!left). */
static MB *binary_scalar(OpCode op, const MB *a, double s, bool left, BrErr *e)
{
    if (!check_binary(op, e)) return NULL;
    double f0 = left ? ops_binary(op, 0, s) : ops_binary(op, s, 0);
    if (a->sparse && f0 == 0) {
        FlatFn f = { left ? FF_VS : FF_SV, op, s };
        return sp_map(a, &f, e);
    }
    Opnd oa = opnd_mat(a, MD_FULL), os = opnd_scal(s);
    return left ? binary_run(op, CL_DENSE, &oa, &os, a->rows, a->cols, e)
                : binary_run(op, CL_DENSE, &os, &oa, a->rows, a->cols, e);
}

MB *k_binary_ms(OpCode op, const MB *a, double s, BrErr *e)
{
    return binary_scalar(op, a, s, true, e);
}

MB *k_binary_sm(OpCode op, double s, const MB *a, BrErr *e)
{
    return binary_scalar(op, a, s, false, e);
}

/* ------------------------------------------------------------------ */
/* ifelse                                                              */
/* ------------------------------------------------------------------ */

/* ifelse for a sparse condition c and a zero "no" branch: output entries
 * are a subset of c's; a is any operand. New block, caller owns. */
static MB *ifelse_sparse(const MB *c, const Opnd *a, BrErr *e)
{
    MB *out = mb_sp_alloc(c->rows, c->cols, c->nnz, e);
    if (!out) return NULL;
    memcpy(out->rp, c->rp, (size_t)(c->rows + 1) * sizeof(int64_t));
    if (c->nnz) memcpy(out->ci, c->ci, (size_t)c->nnz * sizeof(int32_t));
    bool drop = false;
    int bad = 0;
#pragma omp parallel for num_threads(br_threads()) if (br_par(c->nnz)) \
    schedule(static) reduction(||:drop) reduction(|:bad)
    for (int64_t i = 0; i < c->rows; i++) {
        RowV ra = row_view(a, i);
        int64_t p = 0;
        for (int64_t k = c->rp[i]; k < c->rp[i + 1]; k++) {
            int32_t j = c->ci[k];
            double x;
            if (ra.kind == RV_DN) x = ra.d[j];
            else if (ra.kind == RV_SC) x = ra.s;
            else {
                while (p < ra.len && ra.ci[p] < j) p++;
                x = (p < ra.len && ra.ci[p] == j) ? ra.v[p] : 0;
            }
            out->v[k] = x;
            if (x == 0) drop = true;
            bad |= !isfinite(x);
        }
    }
    out->nnz = c->nnz;
    out->build_row = out->rows;
    if (drop) sp_drop_zeros(out);
    return ew_finish(out, bad, e);
}

/* ifelse(c, a, b); see ew.h. Caller owns the result. */
MB *k_ifelse(const MB *c, double cs, const MB *a, double as, const MB *b,
             double bs, BrErr *e)
{
    const MB *ms[3] = { c, a, b };
    double ss[3] = { cs, as, bs };
    /* output shape: the first of the operands' shapes (then combinations
     * of one's rows with another's columns) that every matrix operand fits
     * as full, row or column vector */
    int64_t cand[9][2], nc = 0, M = -1, N = -1;
    for (int k = 0; k < 3; k++)
        if (ms[k]) { cand[nc][0] = ms[k]->rows; cand[nc][1] = ms[k]->cols; nc++; }
    if (nc == 0) return mb_scalar(cs != 0 ? as : bs, e);
    for (int k = 0; k < 3; k++)       /* outer-like: rows of one, cols of another */
        for (int l = 0; l < 3; l++)
            if (k != l && ms[k] && ms[l]) {
                cand[nc][0] = ms[k]->rows; cand[nc][1] = ms[l]->cols; nc++;
            }
    Opnd o[3];
    MB *out = NULL;
    for (int t = 0; t < nc && M < 0; t++) {
        int64_t cm = cand[t][0], cn = cand[t][1];
        bool fits = true;
        for (int k = 0; k < 3; k++) {
            if (!ms[k]) { o[k] = opnd_scal(ss[k]); continue; }
            int64_t r = ms[k]->rows, cc = ms[k]->cols;
            Mode md = (r == cm && cc == cn) ? MD_FULL : (r == 1 && cc == cn) ? MD_ROW
                    : (r == cm && cc == 1) ? MD_COL : MD_SCAL;
            if (md == MD_SCAL) fits = false;
            o[k] = opnd_mat(ms[k], md);
        }
        if (fits) { M = cm; N = cn; }
    }
    /* a scalar condition with branches no shape fits: the taken branch,
     * as SystemDS, which replaces such an ifelse by its branch once the
     * condition is known (docs/DESIGN.md, Instructions) */
    if (M < 0 && !c && (cs != 0 ? a : b)) {
        out = mb_copy(cs != 0 ? a : b, e);
        if (out && mb_examine(out, e)) { mb_release(out); out = NULL; }
        return out;
    }
    if (M < 0) {
        br_err(e, BR_EDIM, "dimension mismatch in ifelse: operands %lldx%lld, %lldx%lld, %lldx%lld",
               (long long)(c ? c->rows : 1), (long long)(c ? c->cols : 1),
               (long long)(a ? a->rows : 1), (long long)(a ? a->cols : 1),
               (long long)(b ? b->rows : 1), (long long)(b ? b->cols : 1));
        return NULL;
    }
    /* constant condition: one branch */
    if (!c) {
        const Opnd *ch = cs != 0 ? &o[1] : &o[2];
        if (ch->mode == MD_FULL) {
            out = mb_copy(ch->m, e);
            if (out && mb_examine(out, e)) { mb_release(out); out = NULL; }
            return out;
        }
        if (ch->mode == MD_SCAL) return mb_fill(M, N, ch->s, e);
    }
    for (int k = 0; k < 3; k++)
        if ((o[k].mode == MD_ROW || o[k].mode == MD_COL) && opnd_vec(&o[k], e)) goto done;
    if (o[0].mode == MD_FULL && c->sparse && o[2].mode == MD_SCAL && o[2].s == 0) {
        out = ifelse_sparse(c, &o[1], e);
        goto done;
    }
    out = mb_dense_uninit(M, N, e);
    if (!out) goto done;
    bool flat = opnd_flat(&o[0]) && opnd_flat(&o[1]) && opnd_flat(&o[2]);
    int64_t R = flat ? 1 : M, C = flat ? M * N : N, rb = !flat && N > 0 && N <= NARROW ? CW / N : 0;
    int64_t nck = (C + CW - 1) / CW, ntask = rb ? (M + rb - 1) / rb : R * nck, nnz = 0;
    int bad = 0;
    double *od = out->d;
    const KEwLeaf *L = leaf();
#pragma omp parallel for num_threads(br_threads()) if (br_par(M * N)) \
    reduction(+:nnz) reduction(|:bad) schedule(static)
    for (int64_t t = 0; t < ntask; t++) {
        double buf[3][CW], cbuf[3][CW];
        int64_t i, j0, r, w;
        task_cells(t, M, C, rb, nck, CW, &i, &j0, &r, &w);
        double *po = od + i * C + j0;
        for (int64_t k = 0, rw = w / r; k < r; k++) {   /* a row, or a part of one (rb == 0) */
            const double *pc = dview_ptr(&o[0], i + k, j0, rw, buf[0], cbuf[0]);
            const double *pa = dview_ptr(&o[1], i + k, j0, rw, buf[1], cbuf[1]);
            const double *pb = dview_ptr(&o[2], i + k, j0, rw, buf[2], cbuf[2]);
            L->select(pc, pa, pb, po + k * N, rw);
        }
        nnz += L->nz_count_fin(po, w, &bad);
    }
    out->nnz = nnz;
    out = ew_finish(out, bad, e);
done:
    for (int k = 0; k < 3; k++) opnd_free(&o[k]);
    return out;
}
