/* gpuexec.c: per instruction, GPU or CPU (docs/gpu.md). The choice is
 * made at run time with the actual operands: the bytes that would have to
 * be uploaded (operands not resident in the device pool), the bytes the
 * CPU would first have to download (device-only operands), the result's
 * bytes and the floating-point work (cells times the operator table's
 * cost, 2mnk for products) go into gpu_worth's cost rule; under
 * sysds.gpu=force every operator the backend has runs on the device. The
 * operators the backend lacks, and operands it does not take (compressed
 * blocks, empty matrices, shapes the CPU kernel rejects), run on the CPU
 * as before, which also reports the errors. */
#include "gpuexec.h"

#include <stdlib.h>

#include "../gpu/gpu.h"
#include "../gpu/stitch.h"
#include "../kernels/apply.h"
#include "../matrix/cmb.h"
#include "../codegen/cgrun.h"

static const MB *plain_mb(const Value *v)
{
    return v->kind == V_MATRIX && v->m && !v->m->cmb ? v->m : NULL;
}

static double cells(const MB *m) { return (double)m->rows * (double)m->cols; }

/* gpu_worth of work x (its flops and result bytes; gpu_price_* for the
 * operators whose kernels read CSR) over the operands a, b (may be
 * NULL): each adds its upload (no device copy) or its download
 * (device-only: the CPU would land it first) to the transfers */
static bool worth_priced(GpuXfer x, const MB *a, const MB *b)
{
    if (a) gpu_xfer_add(&x, a);
    if (b) gpu_xfer_add(&x, b);
    return gpu_worth(&x);
}

/* worth_priced of out_bytes and flops */
static bool worth(const MB *a, const MB *b, double out_bytes, double flops)
{
    return worth_priced((GpuXfer){.out = out_bytes, .flops = flops}, a, b);
}

/* Runs op on the device when worth it: NULL with e clear otherwise. The
 * work is the kernel's that runs (gpu_price_*: a CSR operand's entries
 * where the operator keeps or skips its zeros). */
static MB *elementwise(const Instr *in, const Value *x, const Value *y, BrErr *e)
{
    const MB *a = plain_mb(x), *b = y ? plain_mb(y) : NULL;
    GpuXfer p = {0};
    if (in->kind == I_UNARY) {
        if (!a) return NULL;
        gpu_price_unary(in->op, a, &p);
        return worth_priced(p, a, NULL) ? gpu_unary(in->op, a, e) : NULL;
    }
    if (a && b) {
        gpu_price_binary(in->op, a, b, &p);
        return worth_priced(p, a, b) ? gpu_binary(in->op, a, b, e) : NULL;
    }
    /* matrix and numeric scalar (strings go to the CPU, which rejects them) */
    const MB *m = a ? a : plain_mb(y);
    const Value *s = a ? y : x;
    if (!m || !val_is_numeric(s)) return NULL;
    gpu_price_ms(in->op, m, val_as_double(s), a == NULL, &p);
    return worth_priced(p, m, NULL) ? gpu_binary_ms(in->op, m, val_as_double(s), a == NULL, e) : NULL;
}

/* ifelse with at least one plain matrix operand, the others numbers */
static MB *ternary(const Value *c, const Value *a, const Value *b, BrErr *e)
{
    const Value *v[3] = {c, a, b};
    const MB *m[3] = {NULL, NULL, NULL};
    GpuXfer x = {0};
    double n = 0;
    for (int k = 0; k < 3; k++) {
        if (v[k]->kind == V_MATRIX) {
            if (!(m[k] = plain_mb(v[k]))) return NULL;
            gpu_xfer_add(&x, m[k]);
            n = BR_MAX(n, cells(m[k]));
        } else if (!val_is_numeric(v[k])) {
            return NULL;
        }
    }
    if (!m[0] && !m[1] && !m[2]) return NULL;
    x.out = n * 8, x.flops = n;
    if (!gpu_worth(&x)) return NULL;
    return gpu_ifelse(m[0], m[0] ? 0 : val_as_double(c), m[1], m[1] ? 0 : val_as_double(a), m[2],
                      m[2] ? 0 : val_as_double(b), e);
}

int rt_gpu_step(const Instr *in, Value *regs, BrErr *e)
{
    Value none = val_none();
#define ARG(k) (k < in->nin && in->in[k] >= 0 ? &regs[in->in[k]] : &none)
    MB *r = NULL;
    const MB *a = plain_mb(ARG(0)), *b;
    switch (in->kind) {
    case I_UNARY: r = elementwise(in, ARG(0), NULL, e); break;
    case I_BINARY:
        if (ARG(0)->kind == V_MATRIX || ARG(1)->kind == V_MATRIX) r = elementwise(in, ARG(0), ARG(1), e);
        break;
    case I_AGG: {
        GpuXfer p = {0};
        if (a) gpu_price_agg(in->op, in->dir, a, &p);
        if (a && worth_priced(p, a, NULL)) r = gpu_agg(in->op, in->dir, a, e);
        if (r && in->dir == DIR_FULL) {
            /* a scalar: the one value the host needs now */
            if (mb_host(r, e)) { mb_release(r); return -1; }
            regs[in->out] = val_double(mb_get(r, 0, 0));
            mb_release(r);
            return 1;
        }
        break;
    }
    case I_MATMUL: {
        if (!a) break;
        GpuXfer p = {0};
        if (in->op == OP_TSMM) {
            gpu_price_mm(OP_TSMM, in->left, a, NULL, &p);
            if (worth_priced(p, a, NULL)) r = gpu_tsmm(a, in->left, e);
        } else if (in->op == OP_MATMUL && in->nin == 2 && (b = plain_mb(ARG(1)))) {
            gpu_price_mm(OP_MATMUL, false, a, b, &p);
            if (worth_priced(p, a, b)) r = gpu_matmul(a, b, e);
        } else if (in->op == OP_MATMULTL && in->nin == 2 && (b = plain_mb(ARG(1)))) {
            gpu_price_mm(OP_MATMULTL, false, a, b, &p);
            if (worth_priced(p, a, b)) r = gpu_matmul_tl(a, b, e);
        }
        break;
    }
    case I_TERNARY: r = ternary(ARG(0), ARG(1), ARG(2), e); break;
    case I_BUILTIN: {
        OpCode op = in->bi == BI_CUMSUM ? OP_CUMSUM : in->bi == BI_CUMPROD ? OP_CUMPROD
                  : in->bi == BI_CUMMIN ? OP_CUMMIN : in->bi == BI_CUMMAX ? OP_CUMMAX : OP__COUNT;
        if (op != OP__COUNT && a && worth(a, NULL, cells(a) * 8, cells(a))) r = gpu_cum(op, a, e);
        break;
    }
    case I_RIX: {
        int64_t q[4];
        BrErr ie = {0};
        Value args[5];
        for (int k = 0; k < 5; k++) args[k] = *ARG(k);
        /* bounds errors are the CPU's to report */
        if (a && !ap_rix_range(&in->ix, args, a->rows, a->cols, q, &ie) &&
            worth(a, NULL, (double)(q[1] - q[0]) * (double)(q[3] - q[2]) * 8, 0))
            r = gpu_slice(a, q[0], q[1], q[2], q[3], e);
        break;
    }
    case I_LIX: {
        /* a device-only target: its cells are on the device alone, so the
         * update runs there (a copy of the target on the device); a host
         * target stays with the CPU, which updates it in place at its last
         * use */
        int64_t q[4];
        BrErr ie = {0};
        Value args[6];
        for (int k = 0; k < 6; k++) args[k] = *ARG(k);
        const MB *y = plain_mb(&args[1]);
        bool scalar = args[1].kind != V_MATRIX && val_is_numeric(&args[1]);
        if (a && a->dev && (y || scalar) && !ap_rix_range(&in->ix, args + 1, a->rows, a->cols, q, &ie) &&
            worth(a, y, cells(a) * 8, 0))
            r = gpu_lix(a, q[0], q[1], q[2], q[3], y, scalar ? val_as_double(&args[1]) : 0, e);
        break;
    }
    case I_REORG:
        if (a && in->op == OP_TRANS && worth(a, NULL, cells(a) * 8, cells(a))) r = gpu_transpose(a, e);
        break;
    default: break;
    }
#undef ARG
    if (!r) return e->code ? -1 : 0;
    regs[in->out] = val_matrix(r);
    return 1;
}

int rt_gpu_fused(void *cg, const Instr *in, Value *regs, BrErr *e)
{
    if (!cg || !in->fused) return 0;
    Value local[8], none = val_none();
    Value *args = in->nin <= 8 ? local : malloc((size_t)in->nin * sizeof(Value));
    if (!args) return br_err(e, BR_ENOMEM, "out of memory");
    for (int k = 0; k < in->nin; k++) args[k] = in->in[k] >= 0 ? regs[in->in[k]] : none;
    Value out = val_none();
    int rc = cg_exec_gpu(cg, in->fused, in->est, in->nin, args, &out, e);
    if (args != local) free(args);
    if (rc == 1) regs[in->out] = out;
    return rc;
}

int rt_stitch_exec(const Instr *in, Value *args, Value *out, BrErr *e)
{
    const StitchRegion *r = in->fused;
    int nm = r->nin > 0 ? r->nin : 1;
    if (in->nin != nm + r->nsc) return br_err(e, BR_EFAIL, "stitched region: %d arguments for %d inputs", in->nin, nm + r->nsc);
    const MB *m[ST_MAX_IN] = {0};
    MB *plain[ST_MAX_IN] = {0};
    double sc[ST_MAX_SC] = {0};
    int rc = 0;
    for (int k = 0; k < nm && !rc; k++) {
        if (args[k].kind != V_MATRIX || !args[k].m)
            rc = br_err(e, BR_EARG, "stitched region: input %d is not a matrix", k);
        else if (args[k].m->cmb && !(m[k] = plain[k] = cmb_decompress(args[k].m, e)))
            rc = -1;
        else if (!m[k])
            m[k] = args[k].m;
    }
    for (int k = 0; k < r->nsc && !rc; k++) {
        if (!val_is_numeric(&args[nm + k])) rc = br_err(e, BR_EARG, "stitched region: scalar %d is not a number", k);
        else sc[k] = val_as_double(&args[nm + k]);
    }
    MB *res[ST_MAX_OUT] = {0};
    int nout = st_nout(r);
    if (!rc) {
        /* sizes other than compiled (a size surprise): the operators one by
         * one, with the CPU kernels' broadcasting and errors */
        double cells = (double)m[0]->rows * (double)m[0]->cols;
        GpuXfer x = {.out = cells * 8 * nout, .flops = cells * r->n};
        bool sparse = false;
        for (int k = 0; k < nm; k++) gpu_xfer_add(&x, m[k]), sparse |= m[k]->sparse;
        /* sparse inputs: the CPU kernels keep them sparse (the kernel
         * would expand them and write a dense result) */
        StitchSched s = stitch_unfused_order(r, m[0]->rows, m[0]->cols);
        if (!sparse && stitch_shapes_ok(r, m) && (x.build = stitch_build_share(r), gpu_worth(&x)))
            rc = stitch_exec_all(r, m, sc, &s, res, e);
        for (int k = 0; k < nm && !rc && !res[0]; k++) rc = mb_host(m[k], e);
        if (!rc && !res[0]) rc = stitch_reference_all(r, m, sc, res, e);
    }
    for (int k = 0; k < nm; k++) mb_release(plain[k]);
    if (rc) return -1;
    if (nout == 1) { *out = val_matrix(res[0]); return 0; }
    /* a multi-output region: a list, read by the H_OUT hops' I_OUTs */
    Value l = val_list_new(nout);
    for (int k = 0; k < nout; k++)
        if (!rc && list_append(l.kind == V_LIST ? l.l : NULL, val_matrix(res[k]), NULL, e)) rc = -1;
        else if (rc) mb_release(res[k]);
    if (rc) val_release(&l);
    else *out = l;
    return rc;
}

int rt_gpu_host_inputs(const Instr *in, const Value *regs, BrErr *e)
{
    /* moves of values (reads, literals, call outputs, calls: the callee's
     * instructions land what they read) and stitched regions (they
     * decide themselves) need no host cells */
    if (in->kind == I_LIT || in->kind == I_READ || in->kind == I_OUT || in->kind == I_CALL || in->kind == I_STITCH)
        return 0;
    for (int k = 0; k < in->nin; k++)
        if (in->in[k] >= 0 && val_host(&regs[in->in[k]], e)) return -1;
    return 0;
}

void rt_gpu_before_update(const Value *v)
{
    if (v->kind == V_MATRIX && v->m && __atomic_load_n(&v->m->refs, __ATOMIC_ACQUIRE) == 2) gpu_pool_forget(v->m);
}
