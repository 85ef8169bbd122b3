/* spoof_cell.c: the skeleton of Cell and MAgg fused operators (seed 000,
 * Table 1): binds cells of the main input, side inputs (full matrices,
 * row and column vectors) and scalars; the generated code computes the
 * values of a block of cells, the skeleton stores or aggregates them
 * (no_agg, row_agg, col_agg, full_agg; MAgg: several full aggregates).
 *
 * Paths: sparse-safe plans over a sparse main input visit only its
 * non-zeros (implicit zeros still count for min, max and mean:
 * pseudo-sparse-safe aggregation); otherwise the dense path runs over all
 * cells, flat over contiguous cells when every matrix input is full and
 * dense, else by blocks of rows (sparse side inputs expanded per row).
 * Aggregations run over fixed super-blocks of rows or cells with Kahan
 * lanes merged in order, so results do not depend on the thread count.
 *
 * Compressed full inputs (seed 000 section 5.2: "per cell otherwise",
 * docs/cla.md) are read like expanded sparse inputs, one row per call of
 * the generated code, from a window of decompressed rows (ClaWin,
 * matrix/cmb.h) that each task moves down its rows: the whole block is
 * never decompressed. Plans that can run once per distinct value take
 * kernels/spoof_cla.c instead. */
#include "spoof.h"
#include "leaf.h"
#include "cla.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CH 2048            /* cells per call of generated code */
#define SB_MAX 64          /* super-blocks of an aggregation */
#define SB_CELLS 32768     /* cells per super-block, at least */
#define TASK_CELLS 32768   /* cells per task of row-parallel loops */
#define KL SPOOF_KL

static inline void kadd(double *s, double *c, double x)
{
    double y = x + *c, t = *s + y;
    *c = fabs(t) <= DBL_MAX ? y - (t - *s) : 0;
    *s = t;
}

static inline double min_step(double s, double v) { return (v < s || v != v) ? v : s; }
static inline double max_step(double s, double v) { return (v > s || v != v) ? v : s; }

/* ---- Kahan-lane accumulators ---- */

void spacc_init(SpAcc *a, int agg)
{
    double v = agg == SPA_MIN ? INFINITY : agg == SPA_MAX ? -INFINITY : 0;
    for (int l = 0; l < KL; l++) { a->s[l] = v; a->c[l] = 0; }
}

/* The lanes' loops are the leaf kernel of spoof_leaf.c. */
void spacc_add(SpAcc *a, int agg, const double *v, int64_t n)
{
    k_leaves(k_isa())->spoof->acc_add(a->s, a->c, agg, v, n);
}

void spacc_merge(SpAcc *a, const SpAcc *b, int agg)
{
    if (agg == SPA_MIN) { a->s[0] = min_step(a->s[0], b->s[0]); return; }
    if (agg == SPA_MAX) { a->s[0] = max_step(a->s[0], b->s[0]); return; }
    for (int l = 0; l < KL; l++) { kadd(&a->s[l], &a->c[l], b->s[l]); kadd(&a->s[l], &a->c[l], b->c[l]); }
}

static inline bool pos_zero(double x) { return x == 0 && !signbit(x); }

/* The lanes' sum: Kahan over s[0], c[0], s[1], ... . Rows narrower than
 * KL (Cell row aggregates over k-means' k columns) leave the last lanes
 * at (+0, +0), and 2 KL additions per row were most of such an
 * operator's time: the untouched lanes are added as zeros only until
 * adding one more changes nothing (the bits are those of the full loop:
 * each step is the same function of (s, c), so a fixed point stays). */
double spacc_value(const SpAcc *a, int agg, double count)
{
    if (agg == SPA_MIN || agg == SPA_MAX) return a->s[0];
    int used = KL;
    while (used > 0 && pos_zero(a->s[used - 1]) && pos_zero(a->c[used - 1])) used--;
    double s = 0, c = 0;
    for (int l = 0; l < used; l++) { kadd(&s, &c, a->s[l]); kadd(&s, &c, a->c[l]); }
    for (int z = 2 * (KL - used); z > 0; z--) {
        double s0 = s, c0 = c;
        kadd(&s, &c, 0.0);
        if (!memcmp(&s, &s0, sizeof s) && !memcmp(&c, &c0, sizeof c)) break;
    }
    double v = s + c;
    return agg == SPA_MEAN ? v / count : v;
}

/* ---- input binding ---- */

typedef struct Ctx {
    const SpoofCell *op;
    const double **P;      /* shared base pointers */
    int64_t *S;
    bool *exp;             /* full sparse inputs expanded per row */
    bool *cz;              /* of those, compressed inputs read by windows */
    int nexp;
    double **own;          /* densified vectors */
    int64_t rows, cols;
    bool sparse;           /* sparse path */
    bool anycz;            /* some input compressed (read by windows) */
    bool flat;             /* flat dense path */
    bool blk;              /* every expanded input compressed: blocks of
                              window rows per call (bind_block) */
} Ctx;

/* Per-task scratch. */
typedef struct Work {
    const double **P;
    int64_t *S;
    double *buf[SPOOF_MAXOUT];
    double *row;           /* nexp expanded rows of cols values (or
                              blocks of CH: expand_block) */
    ClaWin *win;           /* per compressed input (Ctx.cz) */
    double *zrow;          /* a zero row, read when a window failed */
    int64_t lim;           /* the task's last row + 1 (window blocks) */
    int n;                 /* inputs */
    bool ok;
} Work;

/* A dense copy of a sparse or compressed vector (from the bound pool:
 * an operator in a loop takes the last iteration's copy back instead of
 * faulting in fresh pages; freed by ctx_free). */
static double *vec_dense(const MB *m, BrErr *e)
{
    int64_t n = m->rows * m->cols;
    double *v = br_alloc_aligned((size_t)BR_MAX(n, 1) * sizeof(double));
    if (!v) { br_err(e, BR_ENOMEM, "out of memory in fused operator"); return NULL; }
    MB *d = m->cmb ? cmb_decompress(m, e) : NULL;
    if (m->cmb && !d) { br_free_aligned(v); return NULL; }
    const MB *s = d ? d : m;
    if (s->sparse || n == 0) memset(v, 0, (size_t)BR_MAX(n, 1) * sizeof(double)); /* not where copied over */
    if (!s->sparse) memcpy(v, s->d, (size_t)n * sizeof(double));
    else
        for (int64_t i = 0; i < s->rows; i++)
            for (int64_t k = s->rp[i]; k < s->rp[i + 1]; k++) v[i * s->cols + s->ci[k]] = s->v[k];
    mb_release(d);
    return v;
}

static void ctx_free(Ctx *x)
{
    if (x->own) for (int k = 0; k < x->op->in.n; k++) br_free_aligned(x->own[k]);
    free(x->own); free(x->P); free(x->S); free(x->exp); free(x->cz);
}

/* The column offset input k is read at (a fused X[, lo:hi]), -1. */
static int64_t in_off(const SpoofCell *op, int k) { return op->in.coff ? op->in.coff[k] : -1; }

static int ctx_init(Ctx *x, const SpoofCell *op, BrErr *e)
{
    memset(x, 0, sizeof *x);
    x->op = op;
    x->rows = op->rows;
    x->cols = op->cols;
    int n = op->in.n;
    x->P = br_calloc((size_t)n + 1, sizeof *x->P);
    x->S = br_calloc((size_t)n + 1, sizeof *x->S);
    x->exp = br_calloc((size_t)n + 1, sizeof *x->exp);
    x->own = br_calloc((size_t)n + 1, sizeof *x->own);
    x->cz = br_calloc((size_t)n + 1, sizeof *x->cz);
    if (!x->P || !x->S || !x->exp || !x->own || !x->cz) { ctx_free(x); return br_err(e, BR_ENOMEM, "out of memory"); }
    const MB *mm = op->main >= 0 ? op->in.m[op->main] : NULL;
    x->sparse = op->sparse_safe && op->fs && mm && mm->sparse;
    bool allfull = op->ff != NULL;
    for (int k = 0; k < n; k++) {
        const MB *m = op->in.m[k];
        switch (op->in.mode[k]) {
        case SPM_FULL:
            /* a slice read in place is not one flat array */
            if (in_off(op, k) >= 0) allfull = false;
            if (m->cmb) { x->exp[k] = x->cz[k] = true; x->nexp++; allfull = false; }
            else if (!m->sparse) { x->P[k] = m->d + (in_off(op, k) > 0 ? in_off(op, k) : 0); x->S[k] = m->cols; }
            else if (!(x->sparse && k == op->main)) { x->exp[k] = true; x->nexp++; allfull = false; }
            break;
        case SPM_ROW: case SPM_COL:
            allfull = false;
            if (!m->sparse && !m->cmb) x->P[k] = m->d;
            else if (!(x->P[k] = x->own[k] = vec_dense(m, e))) { ctx_free(x); return e->code; }
            x->S[k] = op->in.mode[k] == SPM_COL ? 1 : 0;
            break;
        default: break;
        }
    }
    x->flat = !x->sparse && allfull && (op->dir == SPD_NONE || op->dir == SPD_FULL);
    int ncz = 0;
    bool slices = false;   /* (a window row of a sliced X is X's width) */
    for (int k = 0; k < n; k++) { ncz += x->cz[k]; slices |= in_off(op, k) >= 0; }
    x->anycz = ncz > 0;
    x->blk = !x->sparse && x->nexp > 0 && ncz == x->nexp && !slices;
    return 0;
}

/* Rows per window block of a compressed input: about TASK_CELLS cells. */
static int64_t win_rows(const Ctx *x) { return BR_MAX(1, BR_MIN(CLA_BLK, TASK_CELLS / BR_MAX(x->cols, 1))); }

/* Scratch of a task over rows up to lim. */
static bool work_init(const Ctx *x, Work *w, int64_t lim)
{
    memset(w, 0, sizeof *w);
    w->lim = lim;
    int n = w->n = x->op->in.n;
    w->P = malloc(((size_t)n + 1) * sizeof *w->P);
    w->S = malloc(((size_t)n + 1) * sizeof *w->S);
    if (!w->P || !w->S) return false;
    memcpy(w->P, x->P, (size_t)n * sizeof *w->P);
    memcpy(w->S, x->S, (size_t)n * sizeof *w->S);
    for (int t = 0; t < x->op->nout; t++)
        if (!(w->buf[t] = br_malloc(CH * sizeof(double)))) return false;
    if (x->nexp) {
        w->row = br_calloc((size_t)x->nexp * (size_t)BR_MAX(x->cols, CH), sizeof(double));
        if (!w->row) return false;
        w->win = br_calloc((size_t)n + 1, sizeof *w->win);
        w->zrow = br_calloc((size_t)BR_MAX(x->cols, 1), sizeof(double));
        if (!w->win || !w->zrow) return false;
        int q = 0;
        for (int k = 0; k < n; k++) {
            if (x->cz[k] && !cla_win_init(&w->win[k], x->op->in.m[k], win_rows(x))) return false;
            if (x->exp[k]) { w->P[k] = w->row + (size_t)q * (size_t)x->cols; w->S[k] = 0; q++; }
        }
    }
    w->ok = true;
    return true;
}

/* Frees a task's scratch; false when a window failed (out of memory)
 * while the task ran. */
static bool work_free(Work *w)
{
    bool ok = w->ok;
    if (w->win)
        for (int k = 0; k < w->n; k++) cla_win_free(&w->win[k]);
    free(w->win); free(w->zrow);
    free(w->P); free(w->S); free(w->row);
    for (int t = 0; t < SPOOF_MAXOUT; t++) free(w->buf[t]);
    return ok;
}

/* Row i of CSR m into r (zeros not written): all of it (off < 0) or
 * its columns off..off + n (a slice read in place). */
static void scatter_cells(const MB *m, int64_t i, int64_t off, int64_t n, double *r)
{
    if (off < 0)
        for (int64_t p = m->rp[i]; p < m->rp[i + 1]; p++) r[m->ci[p]] = m->v[p];
    else
        for (int64_t p = m->rp[i]; p < m->rp[i + 1]; p++)
            if ((uint64_t)(m->ci[p] - off) < (uint64_t)n) r[m->ci[p] - off] = m->v[p];
}

/* Expands row i of the sparse full inputs into the task's scratch
 * (clear: zero exactly the positions written before, or the whole row);
 * compressed inputs point at row i of their window. */
static void expand_row(const Ctx *x, Work *w, int64_t i, bool scatter_only)
{
    int q = 0;
    for (int k = 0; k < x->op->in.n; k++) {
        if (!x->exp[k]) continue;
        if (x->cz[k]) {
            const double *r = cla_win_row(&w->win[k], i, w->lim);
            if (!r) { w->ok = false; r = w->zrow; }   /* the task then fails */
            else if (in_off(x->op, k) > 0) r += in_off(x->op, k);
            w->P[k] = r;
            q++;
            continue;
        }
        const MB *m = x->op->in.m[k];
        double *r = w->row + (size_t)q * (size_t)x->cols;
        if (!scatter_only) memset(r, 0, (size_t)x->cols * sizeof(double));
        scatter_cells(m, i, in_off(x->op, k), x->cols, r);
        q++;
    }
}

/* Rows r0..r1 ((r1 - r0) cols cells, at most CH) of the sparse full
 * inputs, none compressed, into the task's scratch (CH cells per input),
 * their pointers placed so that the generated code's P[k] + i * S[k]
 * with S[k] = cols lands in the block for i in r0..r1 (integer
 * arithmetic: the pointer itself points before the buffer). One call of
 * the generated code per block instead of one per row: a narrow sparse
 * input (an n x 1 vector of zeros) paid a call per cell. */
static void expand_block(const Ctx *x, Work *w, int64_t r0, int64_t r1)
{
    int64_t N = x->cols;
    int q = 0;
    for (int k = 0; k < x->op->in.n; k++) {
        if (!x->exp[k]) continue;
        assert(!x->cz[k]);
        const MB *m = x->op->in.m[k];
        double *b = w->row + (size_t)q++ * CH;
        memset(b, 0, (size_t)((r1 - r0) * N) * sizeof(double));
        for (int64_t i = r0; i < r1; i++) scatter_cells(m, i, in_off(x->op, k), N, b + (i - r0) * N);
        w->P[k] = (const double *)((uintptr_t)b - (uintptr_t)(r0 * N) * sizeof(double));
        w->S[k] = N;
    }
}

/* Blocked reads of compressed inputs (Ctx.blk): binds the rows from i
 * on (at most to rb) that every compressed input's window holds, and
 * returns how many. The pointers are moved to row i, so the generated
 * code runs over rows 0..n of the block: full inputs at P + i S (a
 * window's rows are contiguous, stride cols), column vectors at P + i,
 * row vectors unmoved (S = 0); the generated code indexes inputs only
 * through P[k] + i * S[k] and P[k][i] (codegen/cgen_c.c), and plans
 * without vectors (ff) read the block as flat cells 0..n * cols. One call
 * per block of rows instead of one per row: narrow matrices paid a call
 * (and a window lookup) per row. */
static int64_t bind_block(const Ctx *x, Work *w, int64_t i, int64_t rb)
{
    int64_t n = rb - i;
    for (int k = 0; k < x->op->in.n; k++) {
        if (x->cz[k]) {
            const double *r = cla_win_row(&w->win[k], i, w->lim);
            if (!r) { w->ok = false; r = w->zrow; n = 1; w->S[k] = 0; }   /* the task then fails */
            else { n = BR_MIN(n, w->win[k].hi - i); w->S[k] = x->cols; }
            w->P[k] = r;
        } else if (x->P[k]) {
            w->P[k] = x->P[k] + i * x->S[k];
        }
    }
    return BR_MAX(n, 1);
}

/* Values of rows r0..r1 of a bound block (bind_block; (r1 - r0) cols
 * cells at most CH) into o, row-major. */
static void block_vals(const Ctx *x, const Work *w, int64_t r0, int64_t r1, double *const *o)
{
    const SpoofCell *op = x->op;
    if (op->ff) op->ff(w->P, op->in.sc, r0 * x->cols, r1 * x->cols, o);
    else op->fd(w->P, w->S, op->in.sc, r0, r1, 0, x->cols, o, x->cols);
}

/* Rows per call of block_vals: CH cells (0: rows wider than CH, which
 * go by column chunks of one row). */
static int64_t block_rc(const Ctx *x) { return x->cols > CH ? 0 : BR_MAX(1, CH / BR_MAX(x->cols, 1)); }

/* The values of rows ra..rb of a Ctx.blk plan, chunk by chunk into the
 * task's buffers: f(arg, i, nr, j0, j1, w->buf) gets rows i..i+nr at
 * columns j0..j1 (nr rows of all columns, or one row of a column chunk
 * when rows are wider than CH), in row order. */
typedef void (*ChunkFn)(void *arg, int64_t i, int64_t nr, int64_t j0, int64_t j1, double *const *v);

static void block_rows(const Ctx *x, Work *w, int64_t ra, int64_t rb, ChunkFn f, void *arg)
{
    int64_t RC = block_rc(x), N = x->cols;
    for (int64_t i = ra; i < rb;) {
        int64_t n = bind_block(x, w, i, rb);
        for (int64_t r0 = 0; RC && r0 < n; r0 += RC) {
            int64_t r1 = BR_MIN(n, r0 + RC);
            block_vals(x, w, r0, r1, w->buf);
            f(arg, i + r0, r1 - r0, 0, N, w->buf);
        }
        for (int64_t r = 0; !RC && r < n; r++)
            for (int64_t j0 = 0; j0 < N; j0 += CH) {
                int64_t j1 = BR_MIN(N, j0 + CH);
                x->op->fd(w->P, w->S, x->op->in.sc, r, r + 1, j0, j1, w->buf, j1 - j0);
                f(arg, i + r, 1, j0, j1, w->buf);
            }
        i += n;
    }
}

/* The values of the dense rows ra..rb of a plan whose rows are at most
 * CH / 2 wide (no compressed input; sparse side inputs expanded by
 * blocks), CH / cols rows per call of the generated code into the
 * task's buffer, f as block_rows calls it (every column of nr rows):
 * a call per row cost more than the row's arithmetic (rowSums of a
 * fused n x 2 expression, 11 ns a row). */
static bool by_dense_rows(const Ctx *x) { return !x->sparse && !x->anycz && x->cols <= CH / 2; }

static void dense_rows(const Ctx *x, Work *w, int64_t ra, int64_t rb, ChunkFn f, void *arg)
{
    const int64_t N = x->cols, RC = BR_MAX(1, CH / BR_MAX(N, 1));
    for (int64_t r0 = ra; r0 < rb; r0 += RC) {
        const int64_t r1 = BR_MIN(rb, r0 + RC);
        if (x->nexp) expand_block(x, w, r0, r1);
        x->op->fd(w->P, w->S, x->op->in.sc, r0, r1, 0, N, w->buf, N);
        f(arg, r0, r1 - r0, 0, N, w->buf);
    }
}

static void unscatter_row(const Ctx *x, Work *w, int64_t i)
{
    int q = 0;
    for (int k = 0; k < x->op->in.n; k++) {
        if (!x->exp[k]) continue;
        if (x->cz[k]) { q++; continue; }
        const MB *m = x->op->in.m[k];
        double *r = w->row + (size_t)q * (size_t)x->cols;
        int64_t off = in_off(x->op, k);
        for (int64_t p = m->rp[i]; p < m->rp[i + 1]; p++)
            if (off < 0) r[m->ci[p]] = 0;
            else if ((uint64_t)(m->ci[p] - off) < (uint64_t)x->cols) r[m->ci[p] - off] = 0;
        q++;
    }
}

/* The weight of the plan's cells (br_cell_weight of its work): threads
 * and task sizes follow it. The partitions of aggregates (nsuper) do
 * not: their sums' order stays a function of the shape. */
static double cell_wt(const SpoofCell *op) { return br_cell_weight(op->work); }

/* TASK_CELLS weighted (row-parallel no_agg and row aggregates). */
static int64_t task_cells(const SpoofCell *op) { return BR_MAX(1024, (int64_t)(TASK_CELLS / cell_wt(op))); }

static int threads_for(double work, int64_t tasks)
{
    if (tasks < 2 || !br_par(work)) return 1;
    int t = br_threads();
    return t > tasks ? (int)tasks : t;
}

/* ---- no_agg ---- */

/* The non-zeros of v[0..n), and *bad set when one is NaN or infinite
 * (the output's finiteness flag, mb.h: the same pass). */
static int64_t count_nz(const double *v, int64_t n, int *bad) { return k_leaves(k_isa())->ew->nz_count_fin(v, n, bad); }

/* A dense vector output's non-zeros recounted, its format picked and
 * its finiteness flag set from the same pass; NULL (out released) on
 * failure. */
void k_spoof_count_fin(MB *m)
{
    int bad = 0;
    m->nnz = count_nz(m->d, m->rows * m->cols, &bad);
    mb_fin_set(m, bad != 0);
}

static MB *finish_counted(MB *out, BrErr *e)
{
    k_spoof_count_fin(out);   /* (mb_examine's conversion keeps the flag) */
    if (mb_examine(out, e)) { mb_release(out); return NULL; }
    return out;
}

/* no_agg rows ra..rb of a Ctx.blk plan straight into the output d. */
static void none_block(const Ctx *x, Work *w, int64_t ra, int64_t rb, double *d)
{
    int64_t RC = block_rc(x), N = x->cols;
    for (int64_t i = ra; i < rb;) {
        int64_t n = bind_block(x, w, i, rb);
        for (int64_t r0 = 0; RC && r0 < n; r0 += RC) {
            double *o[1] = {d + (i + r0) * N};
            block_vals(x, w, r0, BR_MIN(n, r0 + RC), o);
        }
        for (int64_t r = 0; !RC && r < n; r++)
            for (int64_t j0 = 0; j0 < N; j0 += CH) {
                double *o[1] = {d + (i + r) * N + j0};
                x->op->fd(w->P, w->S, x->op->in.sc, r, r + 1, j0, BR_MIN(N, j0 + CH), o, N);
            }
        i += n;
    }
}

static MB *run_none_dense(const Ctx *x, BrErr *e)
{
    const SpoofCell *op = x->op;
    int64_t M = x->rows, N = x->cols;
    MB *out = mb_dense_uninit(M, N, e);
    if (!out || M * N == 0) return out;
    int64_t nnz = 0;
    int bad = 0;
    bool fail = false;
    if (x->flat) {
        int64_t cells = M * N, nch = (cells + CH - 1) / CH, per = BR_MAX(1, (int64_t)(8 / cell_wt(op)));
        int64_t ntask = (nch + per - 1) / per;
#pragma omp parallel for schedule(static) num_threads(threads_for((double)cells * cell_wt(op), ntask)) \
    reduction(+:nnz) \
    reduction(|:bad)
        for (int64_t t = 0; t < ntask; t++) {
            for (int64_t c = t * per; c < BR_MIN(nch, (t + 1) * per); c++) {
                int64_t c0 = c * CH, c1 = BR_MIN(cells, c0 + CH);
                double *o[1] = {out->d + c0};
                if (op->ffn) {
                    nnz += op->ffn(x->P, op->in.sc, c0, c1, o, &bad);
                } else {
                    op->ff(x->P, op->in.sc, c0, c1, o);
                    nnz += count_nz(out->d + c0, c1 - c0, &bad);
                }
            }
        }
    } else {
        int64_t R = N > CH ? 1 : BR_MAX(1, task_cells(op) / BR_MAX(N, 1));
        int64_t ntask = (M + R - 1) / R;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads_for((double)M * N * cell_wt(op), ntask)) \
    reduction(+:nnz) \
    reduction(|:bad)
        for (int64_t t = 0; t < ntask; t++) {
            Work w;
            int64_t ra = t * R, rb = BR_MIN(M, ra + R);
            if (!work_init(x, &w, rb)) { fail = true; work_free(&w); continue; }
            /* the counting loops (fdn) where the rows are written
             * straight into the output; else a pass over them after */
            bool cnt = op->fdn && !x->blk;
#define CELL_ROWS(r0, r1, j0, j1, o)                                                          \
    do {                                                                                       \
        if (cnt) nnz += op->fdn(w.P, w.S, op->in.sc, r0, r1, j0, j1, o, N, &bad);              \
        else op->fd(w.P, w.S, op->in.sc, r0, r1, j0, j1, o, N);                                \
    } while (0)
            if (x->blk) {
                none_block(x, &w, ra, rb, out->d);
            } else if (x->nexp && N <= CH && !x->anycz) {
                int64_t RC = BR_MAX(1, CH / BR_MAX(N, 1));
                for (int64_t r0 = ra; r0 < rb; r0 += RC) {
                    int64_t r1 = BR_MIN(rb, r0 + RC);
                    expand_block(x, &w, r0, r1);
                    double *o[1] = {out->d + r0 * N};
                    CELL_ROWS(r0, r1, 0, N, o);
                }
            } else if (x->nexp || N > CH) {
                for (int64_t i = ra; i < rb; i++) {
                    if (x->nexp) expand_row(x, &w, i, false);
                    for (int64_t j0 = 0; j0 < N; j0 += CH) {
                        int64_t j1 = BR_MIN(N, j0 + CH);
                        double *o[1] = {out->d + i * N + j0};
                        CELL_ROWS(i, i + 1, j0, j1, o);
                    }
                }
            } else {
                int64_t RC = BR_MAX(1, CH / N);
                for (int64_t r0 = ra; r0 < rb; r0 += RC) {
                    double *o[1] = {out->d + r0 * N};
                    CELL_ROWS(r0, BR_MIN(rb, r0 + RC), 0, N, o);
                }
            }
#undef CELL_ROWS
            if (!cnt) nnz += count_nz(out->d + ra * N, (rb - ra) * N, &bad);
            if (!work_free(&w)) fail = true;
        }
    }
    if (fail) { mb_release(out); br_err(e, BR_ENOMEM, "out of memory in fused operator"); return NULL; }
    out->nnz = nnz;
    if (mb_examine(out, e)) { mb_release(out); return NULL; }
    mb_fin_set(out, bad != 0);   /* every cell checked in its count */
    return out;
}

/* Sparse-safe no_agg over a sparse main input: the output has main's
 * structure (zeros dropped). */
static MB *run_none_sparse(const Ctx *x, BrErr *e)
{
    const SpoofCell *op = x->op;
    const MB *mm = op->in.m[op->main];
    int64_t M = x->rows;
    MB *out = mb_sp_alloc(M, x->cols, BR_MAX(mm->nnz, 1), e);
    if (!out) return NULL;
    memcpy(out->rp, mm->rp, (size_t)(M + 1) * sizeof(int64_t));
    if (mm->nnz) memcpy(out->ci, mm->ci, (size_t)mm->nnz * sizeof(int32_t));
    int64_t R = BR_MAX(1, task_cells(op) / BR_MAX(1, mm->nnz / BR_MAX(M, 1)));
    int64_t ntask = (M + R - 1) / R;
    bool fail = false;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads_for((double)mm->nnz * cell_wt(op), ntask))
    for (int64_t t = 0; t < ntask; t++) {
        Work w;
        if (!work_init(x, &w, BR_MIN(M, (t + 1) * R))) { fail = true; work_free(&w); continue; }
        for (int64_t i = t * R; i < BR_MIN(M, (t + 1) * R); i++) {
            int64_t lo = mm->rp[i], hi = mm->rp[i + 1];
            if (lo == hi) continue;
            if (x->nexp) expand_row(x, &w, i, true);
            for (int64_t k0 = lo; k0 < hi; k0 += CH) {
                int64_t cnt = BR_MIN(CH, hi - k0);
                double *o[1] = {out->v + k0};
                op->fs(w.P, w.S, op->in.sc, i, mm->ci + k0, mm->v + k0, cnt, o);
            }
            if (x->nexp) unscatter_row(x, &w, i);
        }
        if (!work_free(&w)) fail = true;
    }
    if (fail) { mb_release(out); br_err(e, BR_ENOMEM, "out of memory in fused operator"); return NULL; }
    /* drop zeros; the values kept checked on the way (the finiteness
     * flag: NaN and infinities are kept, as non-zeros) */
    int64_t wpos = 0, r = 0;
    int bad = 0;
    for (int64_t i = 0; i < M; i++) {
        int64_t end = out->rp[i + 1];
        for (; r < end; r++)
            if (out->v[r] != 0) {
                bad |= !(fabs(out->v[r]) <= DBL_MAX);
                out->ci[wpos] = out->ci[r];
                out->v[wpos] = out->v[r];
                wpos++;
            }
        out->rp[i + 1] = wpos;
    }
    out->nnz = wpos;
    out->build_row = M;
    if (mb_examine(out, e)) { mb_release(out); return NULL; }
    mb_fin_set(out, bad != 0);
    return out;
}

/* ---- row_agg ---- */

/* row_agg over chunks of block_rows: a row's accumulator starts at its
 * first column and is stored at its last (chunks come in row order). */
typedef struct RowAggArg { SpAcc a; int agg; int64_t n; double *out; } RowAggArg;

static void row_chunk(void *arg, int64_t i, int64_t nr, int64_t j0, int64_t j1, double *const *v)
{
    RowAggArg *r = arg;
    if (j0 == 0 && j1 == r->n && r->n <= KL) {
        /* rows of at most KL values: k_agg's row loops over nr rows at a
         * time (one Kahan chain per row in column order, min/max steps):
         * the unfused rowSums', rowMins' ... numbers; the lanes of
         * spacc_add cost more than such a row */
        const KAggLeaf *L = k_leaves(k_isa())->agg;
        if (r->agg == SPA_MIN || r->agg == SPA_MAX) {
            L->rows_minmax(r->agg == SPA_MIN ? OP_AMIN : OP_AMAX, v[0], r->n, 0, nr, r->out + i);
            return;
        }
        L->rows_sum(v[0], r->n, 0, nr, r->agg == SPA_SUMSQ ? KM_SQ : KM_X, r->out + i);
        if (r->agg == SPA_MEAN)
            for (int64_t q = 0; q < nr; q++) r->out[i + q] /= (double)r->n;
        return;
    }
    for (int64_t q = 0; q < nr; q++) {
        if (j0 == 0) spacc_init(&r->a, r->agg);
        spacc_add(&r->a, r->agg, v[0] + q * (j1 - j0), j1 - j0);
        if (j1 == r->n) r->out[i + q] = spacc_value(&r->a, r->agg, (double)r->n);
    }
}

static MB *run_row(const Ctx *x, BrErr *e)
{
    const SpoofCell *op = x->op;
    int agg = op->agg[0];
    int64_t M = x->rows, N = x->cols;
    MB *out = mb_dense_uninit(M, 1, e);
    if (!out) return NULL;
    const MB *mm = x->sparse ? op->in.m[op->main] : NULL;
    int64_t R = BR_MAX(1, task_cells(op) / BR_MAX(N, 1));
    int64_t ntask = M ? (M + R - 1) / R : 0;
    bool fail = false;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads_for((double)M * N * cell_wt(op), ntask))
    for (int64_t t = 0; t < ntask; t++) {
        Work w;
        if (!work_init(x, &w, BR_MIN(M, (t + 1) * R))) { fail = true; work_free(&w); continue; }
        if (x->blk) {
            RowAggArg ra = {.agg = agg, .n = N, .out = out->d};
            block_rows(x, &w, t * R, BR_MIN(M, (t + 1) * R), row_chunk, &ra);
            if (!work_free(&w)) fail = true;
            continue;
        }
        if (by_dense_rows(x)) {
            RowAggArg ra = {.agg = agg, .n = N, .out = out->d};
            dense_rows(x, &w, t * R, BR_MIN(M, (t + 1) * R), row_chunk, &ra);
            if (!work_free(&w)) fail = true;
            continue;
        }
        for (int64_t i = t * R; i < BR_MIN(M, (t + 1) * R); i++) {
            SpAcc a;
            spacc_init(&a, agg);
            if (mm) {
                int64_t lo = mm->rp[i], hi = mm->rp[i + 1];
                if (x->nexp && lo < hi) expand_row(x, &w, i, true);
                for (int64_t k0 = lo; k0 < hi; k0 += CH) {
                    int64_t cnt = BR_MIN(CH, hi - k0);
                    op->fs(w.P, w.S, op->in.sc, i, mm->ci + k0, mm->v + k0, cnt, w.buf);
                    spacc_add(&a, agg, w.buf[0], cnt);
                }
                if (x->nexp && lo < hi) unscatter_row(x, &w, i);
                if (hi - lo < N) { double z = 0; spacc_add(&a, agg, &z, 1); }
            } else {
                if (x->nexp) expand_row(x, &w, i, false);
                for (int64_t j0 = 0; j0 < N; j0 += CH) {
                    int64_t j1 = BR_MIN(N, j0 + CH);
                    op->fd(w.P, w.S, op->in.sc, i, i + 1, j0, j1, w.buf, j1 - j0);
                    spacc_add(&a, agg, w.buf[0], j1 - j0);
                }
            }
            out->d[i] = spacc_value(&a, agg, (double)N);
        }
        if (!work_free(&w)) fail = true;
    }
    if (fail) { mb_release(out); br_err(e, BR_ENOMEM, "out of memory in fused operator"); return NULL; }
    return finish_counted(out, e);
}

/* ---- col_agg and full_agg: super-blocks of rows ---- */

static int64_t nsuper(double cells, int64_t rows, int64_t cap)
{
    int64_t n = (int64_t)ceil(cells / SB_CELLS);
    n = BR_MIN(n, SB_MAX);
    n = BR_MIN(n, cap);
    n = BR_MIN(n, rows);
    return BR_MAX(n, 1);
}

/* Column partials of one super-block: Kahan sums (s, c) or min/max (s),
 * and non-zero counts per column (sparse path). */
typedef struct ColPart { double *s, *c; int64_t *cnt; } ColPart;

/* The column accumulators of p take v[0..n) (at columns ci, or 0..n-1):
 * the spoof leaf's loop of the SIMD level in use. */
static void col_add(ColPart *p, int agg, const double *v, int64_t n, const int32_t *ci)
{
    k_leaves(k_isa())->spoof->col_add(p->s, p->c, ci ? p->cnt : NULL, agg, v, n, ci);
}

/* col_agg over chunks of block_rows: each row's values into the
 * super-block's column partials at its columns. */
typedef struct ColAggArg { ColPart *p; int agg; } ColAggArg;

static void col_chunk(void *arg, int64_t i, int64_t nr, int64_t j0, int64_t j1, double *const *v)
{
    ColAggArg *c = arg;
    ColPart q = {c->p->s + j0, c->p->c + j0, NULL};
    k_leaves(k_isa())->spoof->col_add_rows(q.s, q.c, c->agg, v[0], nr, j1 - j0);
}

static MB *run_col(const Ctx *x, BrErr *e)
{
    const SpoofCell *op = x->op;
    int agg = op->agg[0];
    int64_t M = x->rows, N = x->cols;
    const MB *mm = x->sparse ? op->in.m[op->main] : NULL;
    double cells = mm ? (double)mm->nnz : (double)M * (double)N;
    int64_t nsb = nsuper(cells, M, BR_MAX(1, (int64_t)(4 << 20) / BR_MAX(N, 1)));
    bool mm_cnt = mm && (agg == SPA_MIN || agg == SPA_MAX);
    ColPart *parts = br_calloc((size_t)nsb, sizeof *parts);
    MB *out = mb_dense_uninit(1, N, e);
    bool fail = !parts || !out;
    double init = agg == SPA_MIN ? INFINITY : agg == SPA_MAX ? -INFINITY : 0;
    for (int64_t b = 0; b < nsb && !fail; b++) {
        /* on lines of their own: neighbouring super-blocks run at the
         * same time and update every column each row */
        size_t pb = br_line_pairs((size_t)BR_MAX(N, 1)) * sizeof(double);
        parts[b].s = br_alloc_aligned(pb);
        parts[b].c = br_calloc_aligned(pb);
        if (mm_cnt) parts[b].cnt = br_calloc((size_t)BR_MAX(N, 1), sizeof(int64_t));
        if (!parts[b].s || !parts[b].c || (mm_cnt && !parts[b].cnt)) { fail = true; break; }
        for (int64_t j = 0; j < N; j++) parts[b].s[j] = init;
    }
    if (!fail) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads_for(cells * cell_wt(op), nsb))
        for (int64_t b = 0; b < nsb; b++) {
            Work w;
            int64_t ra = b * M / nsb, rb = (b + 1) * M / nsb;
            if (!work_init(x, &w, rb)) { fail = true; work_free(&w); continue; }
            ColPart *p = &parts[b];
            ColAggArg ca = {p, agg};
            const bool rows = by_dense_rows(x);
            if (x->blk) block_rows(x, &w, ra, rb, col_chunk, &ca);
            if (rows) dense_rows(x, &w, ra, rb, col_chunk, &ca);
            for (int64_t i = ra; i < rb && !x->blk && !rows; i++) {
                if (mm) {
                    int64_t lo = mm->rp[i], hi = mm->rp[i + 1];
                    if (lo == hi) continue;
                    if (x->nexp) expand_row(x, &w, i, true);
                    for (int64_t k0 = lo; k0 < hi; k0 += CH) {
                        int64_t cnt = BR_MIN(CH, hi - k0);
                        op->fs(w.P, w.S, op->in.sc, i, mm->ci + k0, mm->v + k0, cnt, w.buf);
                        col_add(p, agg, w.buf[0], cnt, mm->ci + k0);
                    }
                    if (x->nexp) unscatter_row(x, &w, i);
                } else {
                    if (x->nexp) expand_row(x, &w, i, false);
                    for (int64_t j0 = 0; j0 < N; j0 += CH) {
                        int64_t j1 = BR_MIN(N, j0 + CH);
                        op->fd(w.P, w.S, op->in.sc, i, i + 1, j0, j1, w.buf, j1 - j0);
                        ColPart q = {p->s + j0, p->c + j0, NULL};
                        col_add(&q, agg, w.buf[0], j1 - j0, NULL);
                    }
                }
            }
            if (!work_free(&w)) fail = true;
        }
    }
    if (!fail) {
        for (int64_t j = 0; j < N; j++) {
            double s = init, c = 0;
            int64_t cnt = 0;
            for (int64_t b = 0; b < nsb; b++) {
                if (agg == SPA_MIN) s = min_step(s, parts[b].s[j]);
                else if (agg == SPA_MAX) s = max_step(s, parts[b].s[j]);
                else { kadd(&s, &c, parts[b].s[j]); kadd(&s, &c, parts[b].c[j]); }
                if (mm_cnt) cnt += parts[b].cnt[j];
            }
            if (mm_cnt && cnt < M) s = agg == SPA_MIN ? min_step(s, 0) : max_step(s, 0);
            double v = (agg == SPA_MIN || agg == SPA_MAX) ? s : s + c;
            out->d[j] = agg == SPA_MEAN ? v / (double)M : v;
        }
    }
    for (int64_t b = 0; parts && b < nsb; b++) {
        br_free_aligned(parts[b].s);
        br_free_aligned(parts[b].c);
        free(parts[b].cnt);
    }
    free(parts);
    if (fail) { mb_release(out); br_err(e, BR_ENOMEM, "out of memory in fused operator"); return NULL; }
    return finish_counted(out, e);
}

/* Initial lanes of in-loop aggregates (SpCellAggFn) of nout outputs. */
static void lanes_init(double *la, const int *agg, int nout)
{
    for (int t = 0; t < nout; t++) {
        double v = agg[t] == SPA_MIN ? INFINITY : agg[t] == SPA_MAX ? -INFINITY : 0;
        for (int l = 0; l < SPOOF_AL; l++) {
            la[2 * SPOOF_AL * t + l] = v;
            la[2 * SPOOF_AL * t + SPOOF_AL + l] = 0;
        }
    }
}

/* Folds the SPOOF_AL lanes la (values, then corrections) of an in-loop
 * aggregate (SpCellAggFn) into a, lane by lane in order. */
static void lanes_fold(SpAcc *a, int agg, const double *la)
{
    for (int l = 0; l < SPOOF_AL; l++) {
        if (agg == SPA_MIN) a->s[0] = min_step(a->s[0], la[l]);
        else if (agg == SPA_MAX) a->s[0] = max_step(a->s[0], la[l]);
        else {
            kadd(&a->s[l % KL], &a->c[l % KL], la[l]);
            kadd(&a->s[l % KL], &a->c[l % KL], la[SPOOF_AL + l]);
        }
    }
}

/* Are the Kahan sums (and corrections) of the in-loop lanes la of every
 * sum-type output finite? The generated group loops add without the
 * infinity check (cg_kadd_nc), so a sum that met an infinity or NaN, or
 * overflowed, ends non-finite and the super-block is redone by the buffer
 * path with kadd's semantics (an infinite sum resets the correction). */
static bool lanes_finite(const double *la, const int *agg, int nout)
{
    bool ok = true;
    for (int t = 0; t < nout; t++) {
        if (agg[t] == SPA_MIN || agg[t] == SPA_MAX) continue;
        const double *p = la + 2 * SPOOF_AL * t;
        for (int l = 0; l < 2 * SPOOF_AL; l++) ok &= fabs(p[l]) <= DBL_MAX;
    }
    return ok;
}

/* In-loop full aggregates (SpCellAggFn) of rows ra..rb of a Ctx.blk
 * plan, one call per bound block: flat cells for plans without vectors,
 * else rows of N columns; the lanes la carry over between calls. */
static void full_block_fa(const Ctx *x, Work *w, int64_t ra, int64_t rb, double *la)
{
    const SpoofCell *op = x->op;
    for (int64_t i = ra; i < rb;) {
        int64_t n = bind_block(x, w, i, rb);
        if (op->ff) op->fa(w->P, NULL, op->in.sc, 0, n * x->cols, 0, la);
        else op->fa(w->P, w->S, op->in.sc, 0, n, x->cols, la);
        i += n;
    }
}

/* Full aggregates over chunks of block_rows (the buffer path). */
typedef struct FullAggArg { SpAcc *a; const int *agg; int nout; } FullAggArg;

static void full_chunk(void *arg, int64_t i, int64_t nr, int64_t j0, int64_t j1, double *const *v)
{
    FullAggArg *f = arg;
    for (int t = 0; t < f->nout; t++) spacc_add(&f->a[t], f->agg[t], v[t], nr * (j1 - j0));
}

/* Full aggregates of every output into res (one value each): per fixed
 * super-block of rows or cells, Kahan lanes (with fa, over flat cells or,
 * for plans with vector inputs, dense rows of at least SPOOF_AL columns,
 * and with fsa over sparse rows without expanded inputs: aggregated
 * inside the generated loop, one call per super-block), the super-blocks
 * merged in order. */
static int run_full(const Ctx *x, double *res, BrErr *e)
{
    const SpoofCell *op = x->op;
    int nout = op->nout;
    int64_t M = x->rows, N = x->cols;
    const MB *mm = x->sparse ? op->in.m[op->main] : NULL;
    double cells = mm ? (double)mm->nnz : (double)M * (double)N;
    int64_t nch = 0, nsb;
    if (x->flat) {
        nch = (M * N + CH - 1) / CH;
        nsb = nsuper(cells, BR_MAX(nch, 1), SB_MAX);
    } else {
        nsb = nsuper(cells, BR_MAX(M, 1), SB_MAX);
    }
    SpAcc *acc = br_malloc((size_t)nsb * (size_t)nout * sizeof(SpAcc));
    if (!acc) return br_err(e, BR_ENOMEM, "out of memory in fused operator");
    for (int64_t b = 0; b < nsb; b++)
        for (int t = 0; t < nout; t++) spacc_init(&acc[b * nout + t], op->agg[t]);
    bool fail = false;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads_for(cells * cell_wt(op), nsb))
    for (int64_t b = 0; b < nsb; b++) {
        Work w;
        SpAcc *a = &acc[b * nout];
        int64_t ra = b * M / nsb, rb = (b + 1) * M / nsb;
        if (!work_init(x, &w, rb)) { fail = true; work_free(&w); continue; }
        /* in-loop aggregation, one call per super-block; the buffer path
         * below when it is not available or its sums ended non-finite */
        bool done = false;
        double la[SPOOF_MAXOUT * 2 * SPOOF_AL];
        if (op->fa && (x->flat || (!op->ff && !mm && !x->nexp && N >= SPOOF_AL))) {
            lanes_init(la, op->agg, nout);
            if (x->flat) {
                int64_t c0 = b * nch / nsb * CH, c1 = BR_MIN(M * N, (b + 1) * nch / nsb * CH);
                if (c1 > c0) op->fa(w.P, NULL, op->in.sc, c0, c1, 0, la);
            } else if (rb > ra) {
                op->fa(w.P, w.S, op->in.sc, ra, rb, N, la);
            }
            done = lanes_finite(la, op->agg, nout);
        } else if (x->blk && op->fa && (op->ff || N >= SPOOF_AL)) {
            lanes_init(la, op->agg, nout);
            full_block_fa(x, &w, ra, rb, la);
            done = lanes_finite(la, op->agg, nout);
        } else if (mm && op->fsa && !x->nexp) {
            lanes_init(la, op->agg, nout);
            if (rb > ra) op->fsa(w.P, w.S, op->in.sc, ra, rb, mm->rp, mm->ci, mm->v, la);
            done = lanes_finite(la, op->agg, nout);
        }
        if (done) {
            for (int t = 0; t < nout; t++) lanes_fold(&a[t], op->agg[t], la + 2 * SPOOF_AL * t);
        } else if (x->flat) {
            int64_t c0 = b * nch / nsb, c1 = (b + 1) * nch / nsb;
            for (int64_t c = c0; c < c1; c++) {
                int64_t lo = c * CH, hi = BR_MIN(M * N, lo + CH);
                op->ff(w.P, op->in.sc, lo, hi, w.buf);
                for (int t = 0; t < nout; t++) spacc_add(&a[t], op->agg[t], w.buf[t], hi - lo);
            }
        } else if (x->blk) {
            FullAggArg fa = {a, op->agg, nout};
            block_rows(x, &w, ra, rb, full_chunk, &fa);
        } else if (mm) {
            for (int64_t i = ra; i < rb; i++) {
                int64_t lo = mm->rp[i], hi = mm->rp[i + 1];
                if (lo == hi) continue;
                if (x->nexp) expand_row(x, &w, i, true);
                for (int64_t k0 = lo; k0 < hi; k0 += CH) {
                    int64_t cnt = BR_MIN(CH, hi - k0);
                    op->fs(w.P, w.S, op->in.sc, i, mm->ci + k0, mm->v + k0, cnt, w.buf);
                    for (int t = 0; t < nout; t++) spacc_add(&a[t], op->agg[t], w.buf[t], cnt);
                }
                if (x->nexp) unscatter_row(x, &w, i);
            }
        } else if (x->nexp || N > CH) {
            for (int64_t i = ra; i < rb; i++) {
                if (x->nexp) expand_row(x, &w, i, false);
                for (int64_t j0 = 0; j0 < N; j0 += CH) {
                    int64_t j1 = BR_MIN(N, j0 + CH);
                    op->fd(w.P, w.S, op->in.sc, i, i + 1, j0, j1, w.buf, j1 - j0);
                    for (int t = 0; t < nout; t++) spacc_add(&a[t], op->agg[t], w.buf[t], j1 - j0);
                }
            }
        } else {
            int64_t RC = BR_MAX(1, CH / BR_MAX(N, 1));
            for (int64_t r0 = ra; r0 < rb && N > 0; r0 += RC) {
                int64_t r1 = BR_MIN(rb, r0 + RC);
                op->fd(w.P, w.S, op->in.sc, r0, r1, 0, N, w.buf, N);
                for (int t = 0; t < nout; t++) spacc_add(&a[t], op->agg[t], w.buf[t], (r1 - r0) * N);
            }
        }
        if (!work_free(&w)) fail = true;
    }
    if (!fail) {
        for (int t = 0; t < nout; t++) {
            SpAcc tot;
            spacc_init(&tot, op->agg[t]);
            for (int64_t b = 0; b < nsb; b++) spacc_merge(&tot, &acc[b * nout + t], op->agg[t]);
            if (mm && mm->nnz < M * N) { double z = 0; spacc_add(&tot, op->agg[t], &z, 1); }
            res[t] = spacc_value(&tot, op->agg[t], (double)M * (double)N);
        }
    }
    free(acc);
    if (fail) return br_err(e, BR_ENOMEM, "out of memory in fused operator");
    return 0;
}

/* Runs a Cell/MAgg operator; see spoof.h. */
int k_spoof_cell(const SpoofCell *op, MB **out, double *res, BrErr *e)
{
    Ctx x;
    if (ctx_init(&x, op, e)) return e->code;
    int rc = 0;
    switch (op->dir) {
    case SPD_NONE:
        *out = x.sparse ? run_none_sparse(&x, e) : run_none_dense(&x, e);
        rc = *out ? 0 : e->code;
        break;
    case SPD_ROW:
        *out = run_row(&x, e);
        rc = *out ? 0 : e->code;
        break;
    case SPD_COL:
        *out = run_col(&x, e);
        rc = *out ? 0 : e->code;
        break;
    default:
        rc = run_full(&x, res, e);
        break;
    }
    ctx_free(&x);
    return rc;
}
