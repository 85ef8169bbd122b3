/* cla_rt.c: compressed blocks in the interpreter (runtime/cla_rt.h,
 * docs/cla.md). */
#include "cla_rt.h"
#include "../kernels/cla.h"
#include "../dist/dist.h"
#include "distexec.h"
#include "../kernels/reorg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const MB *mat(const Value *v) { return v->kind == V_MATRIX ? v->m : NULL; }
static bool is_cmb(const Value *v) { return v->kind == V_MATRIX && mb_is_cmb(v->m); }

bool cla_rt_has_input(const Instr *in, const Value *regs)
{
    for (int k = 0; k < in->nin; k++)
        if (in->in[k] >= 0 && is_cmb(&regs[in->in[k]])) return true;
    return false;
}

/* Builtins that take a compressed block as it is: they read only its
 * shape, pass it on, or (compress) are about compression. */
static bool builtin_keeps(BuiltinId bi)
{
    switch (bi) {
    case BI_COMPRESS: case BI_DECOMPRESS: case BI_NROW: case BI_NCOL: case BI_LENGTH:
    case BI_EXISTS: case BI_TYPEOF: case BI_WRITE:   /* io writes binary compressed */
        return true;
    default:
        return false;
    }
}

/* Can fused operator in run over its compressed inputs: those of regs
 * (r < 0), or only the one in register r (auto's static check when regs
 * is NULL)? */
static bool fused_ok(const Instr *in, const Value *regs, int r)
{
    bool local[16] = {false}, *cin = in->nin <= 16 ? local : malloc((size_t)in->nin * sizeof(bool));
    if (!cin || !in->fused) { if (cin != local) free(cin); return false; }
    for (int j = 0; j < in->nin; j++)
        cin[j] = in->in[j] >= 0 && (r < 0 ? is_cmb(&regs[in->in[j]]) : in->in[j] == r);
    /* auto's static check (regs NULL) leaves out plans over blocks of
     * decompressed rows: they decompress (by blocks) every time they run */
    bool ok = (cg_cla_gen(in->fused, cin) && (regs || !cg_cla_rows(in->fused, cin))) || cg_cla_ok(in->fused, cin);
    if (cin != local) free(cin);
    return ok;
}

/* Does in's operator take its input k compressed? */
static bool accepts(const Instr *in, int k, const Value *regs)
{
    const MB *ins[2] = {NULL, NULL};
    for (int j = 0; j < in->nin && j < 2; j++)
        if (in->in[j] >= 0) ins[j] = mat(&regs[in->in[j]]);
    switch (in->kind) {
    case I_UNARY: return cla_handles(CLA_F_UNARY, in->op, in->dir, in->left, k, in->nin, ins);
    case I_BINARY: return cla_handles(CLA_F_BINARY, in->op, in->dir, in->left, k, in->nin, ins);
    case I_AGG: return cla_handles(CLA_F_AGG, in->op, in->dir, in->left, k, in->nin, ins);
    case I_MATMUL:
        /* of two compressed operands one stays compressed, the larger
         * of those the product takes so (the left one of equals), and
         * the other is decompressed (X %*% B under `true`, B a loop's
         * read-only side matrix compressed at the loop's entry, B * i
         * compressed too: X was decompressed for every product) */
        if (!cla_handles(CLA_F_MATMUL, in->op, in->dir, in->left, k, in->nin, ins)) return false;
        if (in->nin > 1 && (k == 0 || k == 1) && ins[1 - k] && ins[1 - k]->cmb && in->in[0] != in->in[1] &&
            cla_handles(CLA_F_MATMUL, in->op, in->dir, in->left, 1 - k, in->nin, ins)) {
            double mine = (double)ins[k]->rows * (double)ins[k]->cols;
            double other = (double)ins[1 - k]->rows * (double)ins[1 - k]->cols;
            return mine > other || (mine == other && k == 0);
        }
        return true;
    case I_RIX: return cla_handles(CLA_F_RIX, in->op, in->dir, in->left, k, in->nin, ins);
    case I_CALL: case I_OUT: return true;   /* functions get the compressed value */
    case I_BUILTIN: return builtin_keeps(in->bi);
    case I_FUSED:
        /* a Row plan's main input is taken compressed with its other
         * compressed inputs decompressed (side vectors and matrices: a
         * loop's labels under `true`), where the plan takes it then */
        return fused_ok(in, regs, -1) ||
               (in->fused && k == cg_cla_row_main(in->fused) && fused_ok(in, regs, in->in[k]));
    default: return false;
    }
}

/* A fused operator over compressed inputs (seed 000 section 5.2): Cell
 * and MAgg plans with one compressed full input run their generated code
 * once per distinct tuple (cg_exec, kernels/spoof_cla.c), with column
 * vectors or other full matrices beside it per cell over windows of
 * decompressed rows (kernels/spoof_cell.c); Outer plans by rows of W over
 * such windows (kernels/spoof_outer.c); Row plans of
 * matrix-vector products run their unfused plan when every step of it
 * runs compressed, other Row plans their generated code over blocks of
 * decompressed rows of the compressed main input (kernels/spoof_row.c);
 * other accepted plans run their unfused plan, whose steps run over the
 * dictionaries. */
static int run_fused(Rt *rt, const Instr *in, Value *regs, BrErr *e)
{
    Value none = val_none(), local[8];
    bool cl[8];
    Value *args = in->nin <= 8 ? local : malloc((size_t)in->nin * sizeof(Value));
    bool *cin = in->nin <= 8 ? cl : malloc((size_t)in->nin * sizeof(bool));
    int rc = 0;
    if (!args || !cin) rc = br_err(e, BR_ENOMEM, "out of memory");
    for (int k = 0; k < in->nin && !rc; k++) {
        args[k] = in->in[k] >= 0 ? regs[in->in[k]] : none;
        cin[k] = is_cmb(&args[k]);
    }
    if (!rc && !rt->prog->cg) rc = br_err(e, BR_EFAIL, "fused operator '%s' is not available", in->opname);
    /* Row plans whose steps all run compressed: the unfused plan
     * (compressed products, gathers per distinct value) or the generated
     * code over blocks of decompressed rows, whichever is estimated
     * cheaper (cg_cla_row_unfused: narrow products over few groups keep
     * the compressed products; wide ones feeding several steps, such as
     * kmeans' X %*% t(C), read decompressed rows and materialize nothing) */
    bool gen = !rc && cg_cla_gen(in->fused, cin);
    if (gen && cg_cla_ok(in->fused, cin)) {
        ClaMachine mw;
        cg_cla_machine_ctx(rt->prog->cg, &mw);
        if (cg_cla_row_unfused(in->fused, args, in->nin, &mw)) gen = false;
    }
    if (!rc && gen) {
        rc = cg_exec(rt->prog->cg, in->fused, NULL, in->nin, args, &regs[in->out], e);
    } else if (!rc) {
        cla_stats_op("spoof");
        rc = cg_exec_unfused(rt->prog->cg, in->fused, in->nin, args, &regs[in->out], e);
    }
    if (args != local) free(args);
    if (cin != cl) free(cin);
    return rc;
}

/* The dense values of the compressed block m for an operator that does
 * not take it compressed: decompressed, and from the second time kept on
 * the block (CMB.dec, shared and freed with it) where its dense bytes
 * are at most 1/16 of the memory budget: a loop's side input read
 * densely every iteration (l2svm's labels under `true`, beside the Row
 * plan over the compressed X: 20 decompressions of 1M rows, each a fresh
 * 8 MB block) is decompressed twice, then read (docs/cla.md). */
static MB *decompressed(const MB *m, BrErr *e)
{
    struct CMB *c = m->cmb;
    MB *k = __atomic_load_n(&c->dec, __ATOMIC_ACQUIRE);
    if (k) return mb_retain(k);
    int64_t t0 = br_now_ns();
    MB *d = cmb_decompress(m, e);
    if (!d) return NULL;
    cla_stats_decompress(br_now_ns() - t0);
    if (__atomic_add_fetch(&c->ndec, 1, __ATOMIC_RELAXED) >= 2 && (double)mb_bytes(d) <= br_mem_budget() / 16) {
        MB *none = NULL;
        mb_retain(d);
        if (!__atomic_compare_exchange_n(&c->dec, &none, d, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) mb_release(d);
    }
    return d;
}

int cla_rt_exec(Rt *rt, Frame *f, const Instr *in, Value *regs, int nregs, ClaRunFn run, BrErr *e)
{
    Value *sh = malloc(((size_t)nregs + 1) * sizeof(Value));
    int *subst = malloc(((size_t)in->nin + 1) * sizeof(int));
    MB **tmp = malloc(((size_t)in->nin + 1) * sizeof(MB *));
    if (!sh || !subst || !tmp) {
        free(sh);
        free(subst);
        free(tmp);
        return br_err(e, BR_ENOMEM, "out of memory");
    }
    memcpy(sh, regs, (size_t)nregs * sizeof(Value));
    int ns = 0, rc = 0;
    for (int k = 0; k < in->nin && !rc; k++) {
        int r = in->in[k];
        if (r < 0 || !is_cmb(&sh[r]) || accepts(in, k, regs)) continue;
        MB *d = decompressed(sh[r].m, e);
        if (!d) { rc = e->code; break; }
        sh[r] = val_matrix(d);
        subst[ns] = r;
        tmp[ns++] = d;
    }
    bool kept = false;   /* a compressed input stays compressed */
    for (int k = 0; k < in->nin; k++) kept |= in->in[k] >= 0 && is_cmb(&sh[in->in[k]]);
    if (!rc) {
        rc = in->kind == I_FUSED && kept ? run_fused(rt, in, sh, e) : run(rt, f, in, sh, e);
        /* what run did to the registers: the output, and an input that
         * an in-place update stole (left indexing sets it to none) */
        for (int k = 0; k < in->nin; k++) {
            int r = in->in[k];
            bool sub = false;
            for (int q = 0; q < ns; q++) sub |= subst[q] == r;
            if (r >= 0 && !sub) regs[r] = sh[r];
        }
        regs[in->out] = sh[in->out];
    }
    for (int q = 0; q < ns; q++) {
        int r = subst[q];
        /* stolen by an in-place update (left indexing): the result owns it */
        if (!rc && r != in->out && sh[r].kind == V_NONE) continue;
        mb_release(tmp[q]);
    }
    free(sh);
    free(subst);
    free(tmp);
    return rc;
}

/* The plan options of the mode: true forces compression (every column
 * group, incompressible ones uncompressed), auto needs a ratio of 1.5. */
static ClaPlanOpts mode_opts(int mode)
{
    ClaPlanOpts o = cla_plan_defaults();
    o.force = mode == RT_CLA_ON;
    o.min_ratio = 1.5;
    return o;
}

static int lazy_now(Rt *rt, Frame *f, const Code *c, int k, Value *out, BrErr *e);

bool cla_rt_read_past(const Rt *rt, const Instr *in)
{
    return in->kind == I_BUILTIN && in->bi == BI_READ && (rt->opt.cla == RT_CLA_ON || rt->opt.cla == RT_CLA_AUTO);
}

/* The error of a read whose compressed block (got bytes; raw
 * uncompressed) still exceeds the budget. */
static int over_budget(const Instr *in, const Value *regs, const MB *cm, double raw, double got, BrErr *e)
{
    double budget = br_mem_budget();
    const Value *f = in->nin > 0 && in->in[0] >= 0 ? &regs[in->in[0]] : NULL;
    return br_err(e, BR_ENOMEM,
                  "read %s: a %lldx%lld matrix of %.*f GB compresses to %.*f GB, still more than the local memory "
                  "budget of %.*f GB, and distributed execution is not available (run under mpirun)",
                  f && f->kind == V_STRING ? f->s->s : "(matrix)", (long long)cm->rows, (long long)cm->cols,
                  br_gb_digits(raw / 1e9), raw / 1e9, br_gb_digits(got / 1e9), got / 1e9,
                  br_gb_digits(budget / 1e9), budget / 1e9);
}

/* A read() past the local budget (cla_rt_read_past) read whole:
 * compressed (true: forced, as every read; auto: at compress()'s ratio,
 * 1.1), and the compressed block must fit the budget, else a clear
 * error. */
static int read_past(Rt *rt, const Instr *in, Value *regs, Value *out, BrErr *e)
{
    double raw = (double)mb_bytes(out->m);
    ClaPlanOpts o = rt->opt.cla == RT_CLA_ON ? mode_opts(RT_CLA_ON) : cla_plan_defaults();
    MB *cm = cla_compress(out->m, &o, e);
    if (!cm) return e->code;
    mb_release(out->m);
    out->m = cm;
    out->cla_lazy = false;
    double got = (double)mb_bytes(cm);
    cla_stats_read(0, 0);
    return got <= br_mem_budget() ? 0 : over_budget(in, regs, cm, raw, got, e);
}

static MB *bin_rows(void *arg, int64_t r0, int64_t r1, BrErr *e)
{
    return io_binary_rows_read((IoBinRows *)arg, r0, r1, e);
}

static MB *csv_rows(void *arg, int64_t r0, int64_t r1, BrErr *e) { return io_csv_rows((IoCsvRows *)arg, r0, r1, e); }
static MB *cell_rows(void *arg, int64_t r0, int64_t r1, BrErr *e) { return io_cell_rows((IoCellRows *)arg, r0, r1, e); }

/* The n x m matrix of read's file (p: its plan) compressed by blocks of rows from rd (docs/cla.md
 * "Compressed as it is read") into read's output. 1 done, 0 declined
 * (auto: the plan does not pay), -1 error in e. */
static int read_blocks(Rt *rt, const Instr *in, Value *regs, const IoReadPlan *p, ClaRowsFn rd, void *arg, int64_t n,
                       int64_t m, BrErr *e)
{
    double budget = br_mem_budget();
    /* blocks of about an eighth of the budget (64 KB to 8 MB), whole
     * blocks of SystemDS's layout where they are small enough */
    ClaStreamOpts so = cla_stream_defaults();
    double want = BR_MAX(64e3, BR_MIN(8e6, budget / 8));
    so.blk_rows = BR_MAX(1, (int64_t)(want / (8.0 * (double)m)));
    int64_t bs = rd == bin_rows ? p->meta.blocksize : 0;
    if (bs > 0 && so.blk_rows > bs / 2 && (double)bs * (double)m * 8 <= budget / 4)
        so.blk_rows = (so.blk_rows + bs - 1) / bs * bs;
    so.sample_rows = BR_MIN(so.sample_rows, so.blk_rows);
    ClaPlanOpts o = rt->opt.cla == RT_CLA_ON ? mode_opts(RT_CLA_ON) : cla_plan_defaults();
    so.max_bytes = budget;   /* the result could not fit: stop early */
    ClaStreamInfo info;
    MB *cm = cla_compress_rows(rd, arg, n, m, &o, &so, &info, e);
    const char *path = regs[in->in[0]].s->s;
    if (info.over) {
        cla_stats_read(info.blocks, info.peak);
        double raw = mb_est_size(n, m, n * m);
        br_err(e, BR_ENOMEM,
               "read %s: a %lldx%lld matrix of up to %.*f GB compresses to more than %.*f GB (its "
               "uncompressed columns, after %lld rows), still more than the local memory budget of %.*f GB, "
               "and distributed execution is not available (run under mpirun)",
               path, (long long)n, (long long)m, br_gb_digits(raw / 1e9), raw / 1e9,
               br_gb_digits(budget / 1e9), budget / 1e9, (long long)info.rows, br_gb_digits(budget / 1e9),
               budget / 1e9);
        return -1;
    }
    if (!cm) return e->code ? -1 : 0;
    cla_stats_read(info.blocks, info.peak);
    if (p->nnz >= 0 && cm->nnz != p->nnz) {   /* as io_read_matrix */
        br_err(e, BR_EIO, "read %s: %s.mtd says nnz %lld, the data holds %lld non-zeros", path, path,
               (long long)p->nnz, (long long)cm->nnz);
        mb_release(cm);
        return -1;
    }
    Value *out = &regs[in->out];
    *out = val_matrix(cm);
    double got = (double)mb_bytes(cm);
    if (got <= budget) return 1;
    over_budget(in, regs, cm, (double)mb_est_size(n, m, cm->nnz), got, e);
    return -1;
}

/* A braid-binary or SystemDS binary file (not already compressed) read
 * with no csv or libsvm options. */
static int read_bin(Rt *rt, const Instr *in, Value *regs, const IoReadPlan *p, const IoReadOpts *ro, BrErr *e)
{
    if (ro->header >= 0 || ro->sep || ro->fill >= 0 || ro->has_fill_value || ro->n_na || ro->ind_sep ||
        p->meta.cbytes > 0)
        return 0;   /* the whole read checks them */
    const char *path = regs[in->in[0]].s->s;
    int64_t n, m;
    BrErr pe = {0};
    IoBinRows *h = io_binary_rows_open(path, &n, &m, &pe);
    if (!h) return 0;   /* the whole read reports it */
    double raw = mb_est_size(n, m, p->nnz >= 0 ? p->nnz : n * m);
    int rc = 0;
    if (!io_binary_rows_cmb(h) && (p->rows < 0 || p->rows == n) && (p->cols < 0 || p->cols == m) && n >= 2 &&
        m >= 1 && raw > br_mem_budget())
        rc = read_blocks(rt, in, regs, p, bin_rows, h, n, m, e);
    io_binary_rows_close(h);
    return rc;
}

/* A csv file (or folder of parts), read as a dense block: by blocks of
 * rows when rows x cols doubles pass the budget. Without both sizes in
 * the .mtd or arguments, a file of b bytes holds at most b cells, so
 * only one whose 8 b bytes pass the budget is scanned to count them. */
static int read_csv(Rt *rt, const Instr *in, Value *regs, const IoReadPlan *p, BrErr *e)
{
    const char *path = regs[in->in[0]].s->s;
    double budget = br_mem_budget();
    bool known = p->rows >= 0 && p->cols >= 0;
    int64_t b = known ? 0 : io_data_bytes(path);
    if (known ? mb_est_size(p->rows, p->cols, p->rows * p->cols) <= budget : mb_est_size(b, 1, b) <= budget)
        return 0;
    int64_t n, m;
    IoCsvRows *c = io_csv_rows_open(path, p, &n, &m, e);
    if (!c) return -1;
    double raw = mb_est_size(n, m, n * m);
    int rc = n < 2 || m < 1 || raw <= budget ? 0 : read_blocks(rt, in, regs, p, csv_rows, c, n, m, e);
    io_csv_rows_close(c);
    return rc;
}

/* A text, mm or libsvm file (or folder of parts): by blocks of rows when
 * its block (sparse or dense, as the whole read would make it) passes the
 * budget. A line of b bytes holds at most one cell, so without the sizes
 * the scan runs only when a block of b rows and columns with b / 4 cells
 * could pass the budget. Cells of text and mm files not in row order
 * (and mm's symmetric layouts) come from io_cell_rows' temporary row
 * buckets; mm's array layout, or too little room for the buckets, is
 * read whole (io_cell_rows_open declines). */
static int read_cells(Rt *rt, const Instr *in, Value *regs, const IoReadPlan *p, BrErr *e)
{
    const char *path = regs[in->in[0]].s->s;
    double budget = br_mem_budget();
    int64_t b = io_data_bytes(path);
    int64_t r = p->rows >= 0 ? p->rows : b, c = p->cols >= 0 ? p->cols : b;
    double cap = (double)r * (double)c;
    if (mb_est_size(r, c, (int64_t)BR_MIN(cap, (double)(b / 4))) <= budget) return 0;
    int64_t n, m, cells;
    bool sorted;
    IoCellRows *cr = io_cell_rows_open(path, p, &n, &m, &cells, &sorted, e);
    if (!cr) return sorted ? -1 : 0;
    double raw = mb_est_size(n, m, (int64_t)BR_MIN((double)n * (double)m, (double)cells));
    int rc = n < 2 || m < 1 || raw <= budget ? 0 : read_blocks(rt, in, regs, p, cell_rows, cr, n, m, e);
    io_cell_rows_close(cr);
    return rc;
}

int cla_rt_read_stream(Rt *rt, const Instr *in, Value *regs, BrErr *e)
{
    if (!cla_rt_read_past(rt, in) || dist_active() || in->nin < 1 || in->in[0] < 0 ||
        regs[in->in[0]].kind != V_STRING)
        return 0;
    IoReadOpts ro;
    IoReadPlan p;
    const char *na[RT_MAX_NA];
    char *nabuf = NULL;
    BrErr pe = {0};
    int rc = 0;
    if (rt_read_opts(in, regs, &ro, na, &nabuf) && !io_read_plan(regs[in->in[0]].s->s, &ro, &p, &pe) &&
        !(p.meta.data_type[0] && strcmp(p.meta.data_type, "matrix"))) {
        if (io_fmt_anybin(p.format)) rc = read_bin(rt, in, regs, &p, &ro, e);
        else if (!strcmp(p.format, "csv")) rc = read_csv(rt, in, regs, &p, e);
        else if (!strcmp(p.format, "text") || !strcmp(p.format, "mm") || !strcmp(p.format, "libsvm"))
            rc = read_cells(rt, in, regs, &p, e);
    }
    free(nabuf);
    return rc;
}

/* ---- the compressed size estimated at compile time ---- */

/* Rows sampled per piece, and the bytes of a text piece: about 256 rows
 * of cols values (12 bytes each), 64 KB to 512 KB. */
#define EST_PART_ROWS 256
static int est_div = 1;   /* tests: the sample divided by this */

void cla_rt_test_est_div(int div) { est_div = div >= 1 ? div : 1; }

/* The cells of t strictly between its first and last row (whole rows
 * when the cells come in row order; the piece may cut the first and the
 * last), rows renumbered from 0 into *rows; false when not in row
 * order. */
static bool est_inner_rows(IoTriples *t, bool whole, int64_t *rows)
{
    *rows = 0;
    if (t->n == 0) return true;
    for (int64_t k = 1; k < t->n; k++)
        if (t->r[k] < t->r[k - 1]) return false;
    int64_t lo = whole ? t->r[0] : t->r[0] + 1, hi = whole ? t->r[t->n - 1] + 1 : t->r[t->n - 1];
    int64_t q = 0;
    for (int64_t k = 0; k < t->n; k++)
        if (t->r[k] >= lo && t->r[k] < hi) {
            t->r[q] = t->r[k] - lo;
            t->c[q] = t->c[k];
            t->v[q++] = t->v[k];
        }
    t->n = q;
    *rows = hi > lo ? hi - lo : 0;
    return true;
}

/* Piece k of parts of a text file (whole: the file in one piece) as a
 * block of whole rows (NULL: none; *bad: it cannot be sampled). */
static MB *est_text_piece(const char *path, const IoReadPlan *p, const IoMmHead *mh, int k, int parts, int64_t cap,
                          int64_t *read, bool *bad)
{
    BrErr e = {0};
    IoShare s;
    int64_t from = mh ? mh->off : 0;
    if (io_share_load_cap(path, from, k, parts, cap, &s, &e)) { *bad = true; return NULL; }
    *read += (int64_t)s.n;
    MB *b = NULL;
    const char *f = p->format;
    if (!strcmp(f, "csv")) b = io_csv_share_parse(path, &s, p->cols, &p->csv, 0, &e);
    else if (!strcmp(f, "libsvm")) b = io_libsvm_share_parse(path, &s, p->cols, 0, &e);
    else {
        IoTriples t = {0};
        int rc = mh ? io_mm_share_parse(path, &s, mh, 0, &t, &e) : io_text_share_parse(path, &s, p->rows, p->cols, 0, &t, &e);
        int64_t rows = 0;
        if (!rc && est_inner_rows(&t, parts == 1, &rows)) {
            if (rows > 0) b = io_triples_block(path, &t, rows, p->cols, &e);
        } else *bad = true;
        io_triples_free(&t);
    }
    if (e.code) *bad = true;
    io_share_free(&s);
    return b;
}

bool cla_rt_est_file(const char *path, const IoReadOpts *ro, bool force, ClaFileEst *est)
{
    memset(est, 0, sizeof *est);
    IoReadPlan p;
    BrErr e = {0};
    if (io_read_plan(path, ro, &p, &e) || (p.meta.data_type[0] && strcmp(p.meta.data_type, "matrix")) ||
        p.rows < 2 || p.cols < 1 || p.cols > INT32_MAX || p.meta.cbytes > 0)
        return false;
    const char *f = p.format;
    bool bin = io_fmt_anybin(f), csv = !strcmp(f, "csv"), svm = !strcmp(f, "libsvm"), mm = !strcmp(f, "mm");
    if (!bin && !csv && !svm && !mm && strcmp(f, "text")) return false;
    if (svm && (p.lsep || p.lind)) return false;   /* the pieces are parsed with the default separators */
    if (bin && (ro->header >= 0 || ro->sep || ro->fill >= 0 || ro->has_fill_value || ro->n_na || ro->ind_sep))
        return false;   /* the whole read reports them */
    int64_t n = p.rows, m = p.cols;
    est->total = io_data_bytes(path);
    if (est->total < 0) return false;
    MB *piece[CLA_EST_PARTS];
    int np = 0;
    bool bad = false;
    if (bin) {
        /* ranges of rows spread over the matrix, as the read by blocks samples */
        /* 4 MB of dense rows: 256 to 16 x 1024 rows */
        int64_t want = (int64_t)BR_MIN(16384.0, BR_MAX(256.0, 4e6 / (8.0 * (double)m))) / est_div;
        want = BR_MIN(n, BR_MAX(want, 32));
        int parts = (int)BR_MIN((int64_t)CLA_EST_PARTS, want);
        int64_t rr, cc;
        IoBinRows *h = io_binary_rows_open(path, &rr, &cc, &e);   /* SystemDS's layout parsed once */
        bad = !h || cc != m || rr != n;
        for (int k = 0; k < parts && !bad; k++) {
            int64_t len = want / parts + (k < want % parts), r0 = parts == 1 ? 0 : (n - len) * k / (parts - 1);
            MB *b = io_binary_rows_read(h, r0, r0 + len, &e);
            if (!b || b->cmb) { bad = true; mb_release(b); break; }
            piece[np++] = b;
        }
        io_binary_rows_close(h);
    } else {
        IoMmHead mh;
        if (mm && (io_mm_head(path, n, m, &mh, &e) || !mh.coord || mh.sym != 0)) return false;
        int64_t cap = (int64_t)BR_MIN(512e3, BR_MAX(64e3, (double)EST_PART_ROWS * (double)m * 12)) / est_div;
        int64_t body = est->total - (mm ? mh.off : 0);
        int parts = body <= cap * CLA_EST_PARTS ? 1 : CLA_EST_PARTS;
        for (int k = 0; k < parts && !bad; k++) {
            MB *b = est_text_piece(path, &p, mm ? &mh : NULL, k, parts, parts == 1 ? -1 : cap, &est->read, &bad);
            if (b && (b->cols != m || b->cmb)) bad = true;
            if (b && b->rows > 0) piece[np++] = b;
            else mb_release(b);
        }
    }
    MB *smp = NULL;
    if (!bad && np > 0) smp = k_rbind(np, (const MB *const *)piece, &e);
    for (int k = 0; k < np; k++) mb_release(piece[k]);
    if (!smp || smp->rows < 2 || smp->rows > n) { mb_release(smp); return false; }
    /* a binary file: the sampled rows' share of it (braid's layout reads
     * those rows' bytes; SystemDS's also every record's header) */
    if (bin) est->read = (int64_t)((double)est->total * (double)smp->rows / (double)n);
    ClaPlanOpts o = force ? mode_opts(RT_CLA_ON) : cla_plan_defaults();
    o.pop_rows = n;
    ClaPlan pl;
    bool ok = !cla_plan(smp, &o, &pl, &e);
    if (ok) {
        est->bytes = pl.est_bytes;
        est->groups = pl.ngroups;
        est->rows = smp->rows;
        double nz = p.nnz >= 0 ? (double)p.nnz
                               : (double)smp->nnz / (double)smp->rows * (double)n;
        est->raw = mb_est_size(n, m, (int64_t)BR_MIN(nz, (double)n * (double)m));
        cla_plan_free(&pl);
    }
    mb_release(smp);
    return ok;
}

int cla_rt_after(Rt *rt, Frame *f, const Code *c, int k, Value *regs, BrErr *e)
{
    const Instr *in = &c->ins[k];
    Value *out = &regs[in->out];
    if (in->kind != I_BUILTIN || out->kind != V_MATRIX || out->m->cmb) return 0;
    if (cla_rt_read_past(rt, in) && (double)mb_bytes(out->m) > br_mem_budget() && !dist_active())
        return read_past(rt, in, regs, out, e);
    bool lazy = out->cla_lazy && (in->bi == BI_COMPRESS || in->bi == BI_QCOMPRESS);
    /* false, auto: a deferred compress(X) compresses here when what the
     * frame runs after it repays it (lazy_now) */
    if (rt->opt.cla != RT_CLA_ON) return lazy ? lazy_now(rt, f, c, k, out, e) : 0;
    /* the testing mode: compress() compresses at once (as before it was
     * deferred), so every operation meets its compressed result */
    bool eager = lazy;
    if (!eager && (in->bi != BI_READ || out->m->rows < 2)) return 0;
    ClaPlanOpts o = eager ? cla_plan_defaults() : mode_opts(RT_CLA_ON);
    out->cla_lazy = false;
    MB *cm = cla_compress(out->m, &o, e);
    if (!cm) return e->code;
    mb_release(out->m);
    out->m = cm;
    return 0;
}

/* ---- loop-invariant matrices ---- */

static void code_names(const Code *c, NameSet *rd, NameSet *wr)
{
    if (!c) return;
    for (int i = 0; i < c->n; i++)
        if (c->ins[i].kind == I_READ) ns_add(rd, c->ins[i].name);
    for (int i = 0; i < c->nw; i++) ns_add(wr, c->wnames[i]);
}

static void list_names(const PBList *l, NameSet *rd, NameSet *wr);

static void block_names(const PBlock *b, NameSet *rd, NameSet *wr)
{
    code_names(b->code, rd, wr);
    if (b->kind == PB_FOR && b->var) ns_add(wr, b->var);
    list_names(&b->body, rd, wr);
    list_names(&b->els, rd, wr);
}

static void list_names(const PBList *l, NameSet *rd, NameSet *wr)
{
    for (int i = 0; i < l->n; i++) block_names(l->v[i], rd, wr);
}

/* auto's static view of how a loop uses a candidate matrix (from the
 * compiled instructions alone): ok when every instruction that reads it
 * takes it compressed (no decompression per iteration), and gain, the
 * reads per iteration that run over the dictionaries (aggregates,
 * cellwise operators, fused operators once per distinct value) and so
 * save about (1 - 1/ratio) of a pass over the matrix each; products
 * with a vector run about as fast compressed as not (docs/cla.md,
 * measured), so they gain nothing; products with k >= 2 columns on the
 * other side lose (loss, in passes). Uses in nested loops and called
 * functions count too. */
typedef struct Uses {
    bool ok;
    double gain;
    double loss;
    /* the loop's scalar variables (its own loop variable; scalars at
     * entry that the loop does not assign): a binary operator's operand
     * read from one is a scalar (a block recompiled at run time, e.g.
     * one reading a variable the planner marked compressed, has its
     * unfused code here: X * i, where codegen would fuse it) */
    const char *ivar;
    const Frame *f;
    const NameSet *wr;
    /* what runs after the deciding point (rest_uses): a use that does not
     * take the value compressed costs a decompression (soft) instead of
     * ruling compression out, and a read gains at most gcap times (a
     * later loop prices its own iterations at its entry) */
    bool soft;
    double gcap;
} Uses;

/* A decompression, in passes over the matrix (docs/cla.md: decompression
 * runs at about 0.45 of a copy, a copy about a pass's reads and writes). */
#define AUTO_DECOMPRESS_LOSS 2.0

/* A use of weight w that does not take the value compressed. */
static void not_compressed(Uses *u, double w)
{
    if (u->soft) u->loss += w * AUTO_DECOMPRESS_LOSS;
    else u->ok = false;
}

/* A use of weight w that runs over the dictionaries. */
static void gains(Uses *u, double w) { u->gain += w < u->gcap ? w : u->gcap; }

/* Does I_READ in read a variable that is a scalar throughout the loop
 * (only for the loop's own code, depth 0)? */
static bool scalar_var(const Instr *in, int depth, const Uses *u)
{
    if (in->kind != I_READ || depth > 0 || !in->name) return false;
    if (u->ivar && !strcmp(in->name, u->ivar)) return true;
    if (!u->f || !u->wr || ns_has(u->wr, in->name)) return false;
    Value *v = st_get((SymTab *)&u->f->vars, in->name);
    return v && (v->kind == V_DOUBLE || v->kind == V_INT || v->kind == V_BOOL);
}

/* Loop iterations assumed where the count is unknown (while loops,
 * nested loops), and the depth of function calls followed. */
#define AUTO_ITERS_UNKNOWN 8
#define AUTO_CALL_DEPTH 4

static void list_uses(const PBList *l, const char *name, double w, int depth, Uses *u);

/* What a product with k >= 2 columns on the other side costs more
 * compressed than uncompressed, in passes over the matrix (a pass: an
 * uncompressed X %*% v) per column, from bench/bench_cla_cpu.c at k = 8
 * (bench/results/cla-cpu-20261129-2.txt, one thread: X %*% v 0.0058 s;
 * X %*% B 0.0125 s uncompressed, 0.0300 compressed; t(X) %*% Y 0.0153
 * and 0.0275): X %*% B (pre[code] rows gathered per group) 0.38,
 * t(X) %*% B and A %*% X, t(A) %*% X (per-code sums of B's rows) 0.27. */
#define AUTO_MM_LOSS_RIGHT 0.38
#define AUTO_MM_LOSS_LEFT 0.27

/* The extra passes of product in (its operand j the candidate) over the
 * compressed matrix: the other side's width from the product's compiled
 * size (an unknown width counts as a vector, as before). */
static double product_loss(const Instr *in, int j)
{
    if (in->op != OP_MATMUL && in->op != OP_MATMULTL) return 0;   /* tsmm, mmchain (vectors) */
    if (!in->est) return 0;
    int64_t k = j == 0 ? in->est[1] : in->est[0];
    if (k < 2) return 0;
    return (double)k * (in->op == OP_MATMUL && j == 0 ? AUTO_MM_LOSS_RIGHT : AUTO_MM_LOSS_LEFT);
}

/* A called function's uses of the parameter that register r is passed
 * as: from the specialization the call runs (a generic function is
 * compiled on its first call, so its body is unknown: not ok). */
static void call_uses(const Instr *in, int r, double w, int depth, Uses *u)
{
    if (!in->spec || !in->spec->compiled || !in->func || depth >= AUTO_CALL_DEPTH) { not_compressed(u, w); return; }
    for (int j = 0; j < in->nin && u->ok; j++) {
        if (in->in[j] != r) continue;
        if (j >= in->func->nin) { not_compressed(u, w); return; }
        list_uses(&in->spec->body, in->func->in[j].name, w, depth + 1, u);
    }
}

/* Instruction k of c, reading the candidate in register r (a binary
 * operator's other operand must be a literal, a full aggregate or the
 * candidate). */
static void instr_uses(const Code *c, int k, int r, double w, int depth, Uses *u)
{
    const Instr *in = &c->ins[k];
    switch (in->kind) {
    case I_AGG:
        if (!cla_handles(CLA_F_AGG, in->op, in->dir, 0, 0, 1, NULL)) not_compressed(u, w);
        else gains(u, w);
        return;
    case I_UNARY: gains(u, w); return;
    case I_RIX: return;
    case I_CALL: call_uses(in, r, w, depth, u); return;
    case I_MATMUL:
        if (in->op == OP_TSMM && !in->left) not_compressed(u, w);
        for (int j = 0; j < in->nin && j < 2; j++)
            if (in->in[j] == r) u->loss += w * product_loss(in, j);
        return;
    case I_FUSED: {
        bool cin[16] = {false};
        for (int j = 0; j < in->nin && j < 16; j++) cin[j] = in->in[j] == r;
        if (!fused_ok(in, NULL, r)) not_compressed(u, w);
        else if (in->nin <= 16 && cg_cla_gen(in->fused, cin) && !cg_cla_rows(in->fused, cin)) gains(u, w);
        return;
    }
    case I_BUILTIN: if (!builtin_keeps(in->bi)) not_compressed(u, w); return;
    case I_BINARY:
        for (int j = 0; j < in->nin; j++) {
            int o = in->in[j];
            if (o == r || o < 0) continue;
            bool scalar = false;
            for (int q = 0; q < k; q++)
                if (c->ins[q].out == o)   /* the last writer of o before k */
                    scalar = c->ins[q].kind == I_LIT || (c->ins[q].kind == I_AGG && c->ins[q].dir == DIR_FULL) ||
                             scalar_var(&c->ins[q], depth, u);
            if (!scalar) { not_compressed(u, w); return; }
        }
        gains(u, w);
        return;
    default: not_compressed(u, w); return;
    }
}

/* The uses of register r by c's instructions after k. */
static void reg_uses(const Code *c, int k, int r, double w, int depth, Uses *u)
{
    for (int q = k + 1; q < c->n && u->ok; q++) {
        const Instr *in = &c->ins[q];
        bool reads = false;
        for (int j = 0; j < in->nin; j++) reads |= in->in[j] == r;
        if (reads) instr_uses(c, q, r, w, depth, u);
        if (in->out == r) break;   /* the register is reused */
    }
}

static void code_uses(const Code *c, const char *name, double w, int depth, Uses *u)
{
    if (!c) return;
    for (int k = 0; k < c->n && u->ok; k++)
        if (c->ins[k].kind == I_READ && !strcmp(c->ins[k].name, name)) reg_uses(c, k, c->ins[k].out, w, depth, u);
}

static void block_uses(const PBlock *b, const char *name, double w, int depth, Uses *u)
{
    bool loop = b->kind == PB_FOR || b->kind == PB_WHILE;
    code_uses(b->code, name, w, depth, u);
    /* a later for loop's variable is a scalar in its body (rest_uses) */
    const char *ivar = u->ivar;
    if (u->soft && b->kind == PB_FOR && b->var) u->ivar = b->var;
    list_uses(&b->body, name, loop ? w * AUTO_ITERS_UNKNOWN : w, depth, u);
    u->ivar = ivar;
    list_uses(&b->els, name, w, depth, u);
}

static void list_uses(const PBList *l, const char *name, double w, int depth, Uses *u)
{
    for (int i = 0; i < l->n && u->ok; i++) block_uses(l->v[i], name, w, depth, u);
}

/* auto (docs/cla.md): a loop-invariant matrix of a loop of n iterations
 * (n < 0: unknown) is compressed when every use takes it compressed and
 * - it presses on memory (at least 1/AUTO_PRESSURE of the budget): the
 *   compressed copy lets it (and the loop's intermediates) stay in
 *   memory; a ratio of 1.5 is enough; or
 * - it fits, and compression pays in time: it costs about `passes`
 *   passes over the matrix (this machine's, measured once and cached:
 *   codegen/cla_machine.c; 16 when pinned) plus the passes its
 *   multi-column products lose (loss x iterations), the
 *   loop saves (1 - 1/ratio) of a pass per dictionary-wise read, so the
 *   ratio must reach 1 / (1 - (passes + loss) / reads), reads = gain x
 *   iterations.
 * The loop's own block (b: the loop; its body runs n times). */
#define AUTO_MIN_ITERS 4
#define AUTO_PRESSURE 4
#define AUTO_MIN_RATIO 1.5

/* The ratio auto asks of matrix v for loop b, or 0: do not compress;
 * floor: the least ratio asked (AUTO_MIN_RATIO; compress()'s own for a
 * deferred compress(X), which the user asked for). */
static double price(const Uses *u, const MB *v, double passes, double floor)
{
    if (!u->ok) return 0;
    if ((double)mb_bytes(v) * AUTO_PRESSURE >= br_mem_budget()) return floor;
    double reads = u->gain, cost = passes + u->loss;
    if (reads <= cost) return 0;
    double r = 1.0 / (1.0 - cost / reads);
    return r > floor ? r : floor;
}

/* Loop b's uses of name (into u). */
static void loop_uses(const PBlock *b, const Frame *f, const NameSet *wr, const char *name, int64_t n, Uses *u)
{
    *u = (Uses){true, 0, 0, b->kind == PB_FOR ? b->var : NULL, f, wr, false, HUGE_VAL};
    double iters = n >= 0 ? (double)n : AUTO_ITERS_UNKNOWN;
    code_uses(b->code, name, iters, 0, u);   /* the header, once per iteration */
    list_uses(&b->body, name, iters, 0, u);
}

static double auto_ratio(const PBlock *b, const Frame *f, const NameSet *wr, const char *name, const MB *v,
                         int64_t n, double passes, double floor)
{
    Uses u;
    loop_uses(b, f, wr, name, n, &u);
    return price(&u, v, passes, floor);
}

/* The uses of variable name in what frame f runs after its current block
 * (c: this thread's block lists, rt_cont), up to the first block that
 * assigns name, added to u softly (Uses.soft): straight-line uses once;
 * reads in later loops gain at most cap times (1 for the frame's own
 * decisions: such a loop prices its own iterations at its entry; no cap
 * for a caller's uses after a call, cla_rt_call_after), their
 * decompressions count AUTO_ITERS_UNKNOWN times. */
static void rest_uses(const RtCont *c, const Frame *f, const char *name, Uses *u, double cap)
{
    NameSet rd = {0}, wr = {0};
    const RtCont *end = c;   /* where the rest stops: the block assigning name */
    int endi = -1;
    for (const RtCont *p = c; p && p->f == f && endi < 0; p = p->up)
        for (int i = p->i + 1; i < p->l->n && endi < 0; i++) {
            block_names(p->l->v[i], &rd, &wr);
            if (ns_has(&wr, name)) end = p, endi = i;
        }
    const char *ivar = u->ivar;
    const NameSet *owr = u->wr;
    bool soft = u->soft;
    double gcap = u->gcap;
    u->ivar = NULL, u->f = f, u->wr = &wr, u->soft = true, u->gcap = cap;
    for (const RtCont *p = c; p && p->f == f && u->ok; p = p->up)
        for (int i = p->i + 1; i < p->l->n && u->ok; i++) {
            if (p == end && i == endi) goto done;
            block_uses(p->l->v[i], name, 1, 0, u);
        }
done:
    u->ivar = ivar, u->wr = owr, u->soft = soft, u->gcap = gcap;
    ns_free(&rd);
    ns_free(&wr);
}

/* The uses of block m after the calls that lead to frame f, in their
 * callers (cla_rt_call_after), added to u, after u's own (the frame's
 * from the deciding point on) times the runs of those calls (this one and
 * the later ones: ClaAfter.again, at every level). */
static void after_uses(const Frame *f, const MB *m, Uses *u)
{
    double runs = 1;
    for (const ClaAfter *a = f->cla_after; a; a = a->next)
        if (a->m == m) runs *= 1 + a->again;
    u->gain *= runs, u->loss *= runs;
    for (const ClaAfter *a = f->cla_after; a; a = a->next)
        if (a->m == m) u->gain += a->gain, u->loss += a->loss;
}

/* The runs after this one of a call in frame f (c: this thread's block
 * lists, rt_cont) whose argument is variable name's value, in the loops
 * of f around it (RtCont.left; AUTO_ITERS_UNKNOWN iterations where
 * unknown), up to the first loop that assigns name (from there on each
 * run passes a new block); 0 for an argument computed in the call's
 * block (name NULL: X[, 1:5], X + 0, a new block each run). */
static double call_again(const RtCont *c, const Frame *f, const char *name)
{
    double runs = 1;
    for (const RtCont *p = c; name && p && p->f == f && p->up && p->up->f == f; p = p->up) {
        if (p->left == 0) continue;
        NameSet rd = {0}, wr = {0};
        block_names(p->up->l->v[p->up->i], &rd, &wr);   /* the loop whose body p->l is */
        bool assigns = ns_has(&wr, name);
        ns_free(&rd);
        ns_free(&wr);
        if (assigns) break;
        runs *= 1 + (p->left < 0 ? AUTO_ITERS_UNKNOWN - 1 : p->left);
    }
    return runs - 1;
}

/* The variable instruction k of c reads register r from (NULL: r is
 * computed, or c assigns the variable anew). */
static const char *reg_var(const Code *c, int k, int r)
{
    for (int q = k - 1; q >= 0; q--)
        if (c->ins[q].out == r) {
            const char *name = c->ins[q].kind == I_READ && !c->ins[q].move ? c->ins[q].name : NULL;
            for (int w = 0; name && w < c->nw; w++)
                if (!strcmp(c->wnames[w], name)) name = NULL;
            return name;
        }
    return NULL;
}

const ClaAfter *cla_rt_call_after(const Frame *f, const Code *c, int k, const Value *regs, ClaAfter *a)
{
    const Instr *in = &c->ins[k];
    const ClaAfter *head = f->cla_after;
    int n = 0;
    bool loop = false;   /* the call in a loop of f that runs again */
    for (const RtCont *p = rt_cont(); p && p->f == f && !loop; p = p->up) loop = p->left != 0;
    for (int j = 0; j < in->nin; j++) {
        int r = in->in[j];
        if (r < 0 || regs[r].kind != V_MATRIX || regs[r].m->cmb || (!regs[r].cla_lazy && !loop)) continue;
        bool seen = false;
        for (int q = 0; q < n; q++) seen |= a[q].m == regs[r].m;
        if (seen) continue;   /* f(X, X): the caller's uses once */
        const char *name = reg_var(c, k, r);
        double again = loop ? call_again(rt_cont(), f, name) : 0;
        if (!regs[r].cla_lazy) {
            if (again > 0) a[n++] = (ClaAfter){regs[r].m, 0, 0, again, NULL};
            continue;
        }
        /* the rest of c reading the register, and the rest of the frame
         * reading the variable the register was read from or is written to */
        NameSet none = {0};
        Uses u = {true, 0, 0, NULL, f, &none, true, HUGE_VAL};
        reg_uses(c, k, r, 1, 0, &u);
        if (name) rest_uses(rt_cont(), f, name, &u, HUGE_VAL);
        for (int q = 0; q < c->nw; q++)
            if (c->wregs[q] == r) rest_uses(rt_cont(), f, c->wnames[q], &u, HUGE_VAL);
        a[n] = (ClaAfter){regs[r].m, u.gain, u.loss, again, NULL};
        n++;
    }
    for (int q = n - 1; q >= 0; q--) {
        a[q].next = head;
        head = &a[q];
    }
    return head;
}

/* Compresses matrix variable v under o in place (a kept block, when
 * compression does not pay, leaves it as it is). A deferred compress(X)
 * leaves its compressed copy (or, kept, the block itself) on the
 * uncompressed block (MB.cla_copy) for the block's other holders: the
 * caller's variable after a callee's loop compressed the callee's copy,
 * other parfor workers. The first holder's copy wins; the others take it. */
static int compress_var(Rt *rt, Span sp, Value *v, const ClaPlanOpts *o)
{
    BrErr e = {0};
    MB *c = cla_compress(v->m, o, &e);
    if (!c) return rt_fail(rt, sp, e.code, "%s", e.msg);
    if (v->cla_lazy) {
        v->cla_lazy = false;
        MB *was = NULL, *put = c == v->m ? c : mb_retain(c);
        if (!__atomic_compare_exchange_n(&v->m->cla_copy, &was, put, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            if (put != v->m) mb_release(put);
            mb_release(c);
            c = mb_retain(was);
        }
    }
    if (c == v->m) { mb_release(c); return 0; }
    mb_release(v->m);   /* the variable's reference; others keep theirs */
    v->m = c;
    return 0;
}

/* Prices deferred compress(X) v against uses u (which end with what the
 * frame runs after the deciding point: rest_uses): compressed at the
 * ratio the uses need (auto's price), else left as it is (marked: a later
 * loop may repay it). A compressed copy that another holder of the block
 * made (MB.cla_copy) costs no passes: v takes it when its ratio is
 * enough; a block found not to compress is decided. */
static int lazy_decide(Rt *rt, Span sp, Value *v, Uses *u, double passes)
{
    MB *cp = __atomic_load_n(&v->m->cla_copy, __ATOMIC_ACQUIRE);
    if (cp == v->m) {
        v->cla_lazy = false;
        return 0;
    }
    ClaPlanOpts o = cla_plan_defaults();
    o.min_ratio = price(u, v->m, cp ? 0 : passes, o.min_ratio);
    if (!o.min_ratio || (cp && (double)mb_bytes(v->m) < o.min_ratio * (double)mb_bytes(cp))) {
        cla_stats_lazy(CLA_LAZY_DECLINED);
        return 0;
    }
    if (cp) {
        cla_stats_lazy(CLA_LAZY_SHARED);
        mb_retain(cp);
        mb_release(v->m);
        v->m = cp;
        v->cla_lazy = false;
        return 0;
    }
    cla_stats_lazy(CLA_LAZY_COMPRESSED);
    return compress_var(rt, sp, v, &o);
}

/* A deferred compress(X) held by variable v that loop b reads and never
 * assigns: priced from the loop's uses and what the frame runs after the
 * loop. */
static int lazy_entry(Rt *rt, Frame *f, const PBlock *b, const NameSet *wr, const char *name, Value *v, int64_t n,
                      double passes)
{
    Uses u;
    loop_uses(b, f, wr, name, n, &u);
    rest_uses(rt_cont(), f, name, &u, 1);
    after_uses(f, v->m, &u);
    return lazy_decide(rt, b->span, v, &u, passes);
}

/* compress(X) (instruction k of c, its result in out), under false and
 * auto: compressed at once when what the frame runs after it repays it
 * (the rest of c reading the register, the rest of the frame reading the
 * variables c writes it to: rest_uses); else left marked for the loops. */
static int lazy_now(Rt *rt, Frame *f, const Code *c, int k, Value *out, BrErr *e)
{
    (void)e;
    NameSet none = {0};
    Uses u = {true, 0, 0, NULL, f, &none, true, 1};
    int r = c->ins[k].out;
    reg_uses(c, k, r, 1, 0, &u);
    for (int j = 0; j < c->nw && u.ok; j++)
        if (c->wregs[j] == r) rest_uses(rt_cont(), f, c->wnames[j], &u, 1);
    after_uses(f, out->m, &u);
    ClaMachine cm = cg_cla_machine_defaults();
    cg_cla_machine_ctx(rt->prog->cg, &cm);
    return lazy_decide(rt, c->ins[k].span, out, &u, cm.passes);
}

/* Does a variable of f hold a deferred compress(X)? (Loop entries that
 * compress nothing else look at the loop's names only then: most frames
 * have none.) */
static bool has_lazy(const Frame *f)
{
    for (int i = st_next(&f->vars, 0); i >= 0; i = st_next(&f->vars, i + 1))
        if (f->vars.vals[i].kind == V_MATRIX && f->vars.vals[i].cla_lazy) return true;
    return false;
}

int cla_rt_loop_entry(Rt *rt, Frame *f, const PBlock *b, int64_t n)
{
    int mode = rt->opt.cla;
    bool loops = mode == RT_CLA_ON || (mode == RT_CLA_AUTO && (n < 0 || n >= AUTO_MIN_ITERS));
    if (!loops && !has_lazy(f)) return 0;
    NameSet rd = {0}, wr = {0};
    block_names(b, &rd, &wr);
    ClaMachine cm = cg_cla_machine_defaults();
    /* (auto's prices and a deferred compress(X)'s: off comes here only
     * for the latter) */
    if (mode != RT_CLA_ON) cg_cla_machine_ctx(rt->prog->cg, &cm);
    int rc = 0;
    for (int i = 0; i < rd.n && !rc; i++) {
        if (ns_has(&wr, rd.v[i])) continue;
        Value *v = st_get(&f->vars, rd.v[i]);
        if (!v || v->kind != V_MATRIX || v->m->cmb) continue;
        if (v->cla_lazy) {
            rc = lazy_entry(rt, f, b, &wr, rd.v[i], v, n, cm.passes);
            continue;
        }
        if (!loops || v->m->rows < 2) continue;
        ClaPlanOpts o = mode_opts(mode);
        if (mode == RT_CLA_AUTO &&
            !(o.min_ratio = auto_ratio(b, f, &wr, rd.v[i], v->m, n, cm.passes, AUTO_MIN_RATIO)))
            continue;
        rc = compress_var(rt, b->span, v, &o);
    }
    ns_free(&rd);
    ns_free(&wr);
    return rc;
}
