/* lintrace.c: the lineage items of the interpreter's instructions, named
 * as SystemDS's instructions trace themselves (runtime/lineage.h). */
#include "lintrace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "../io/io.h"
#include "../kernels/gen.h"
#include "../matrix/format.h"

const char LIN_FCALL[] = "\x01" "fcall";

/* SystemDS's opcode of an aggregate (AggregateUnary's "uak+", "uarmax",
 * ...): prefix by direction, then the operator's suffix. */
static const char *agg_opcode(OpCode op, AggDir dir, char *buf, size_t n)
{
    const char *d = dir == DIR_ROW ? "r" : dir == DIR_COL ? "c" : "";
    switch (op) {
    case OP_SUM: snprintf(buf, n, "ua%sk+", d); break;
    case OP_SUMSQ: snprintf(buf, n, "ua%ssqk+", d); break;
    case OP_MEAN: snprintf(buf, n, "ua%smean", d); break;
    case OP_VAR: snprintf(buf, n, "ua%svar", d); break;
    case OP_AMIN: snprintf(buf, n, "ua%smin", d); break;
    case OP_AMAX: snprintf(buf, n, "ua%smax", d); break;
    case OP_PROD: snprintf(buf, n, "ua%s*", d); break;
    case OP_IDXMAX: snprintf(buf, n, "uarimax"); break;
    case OP_IDXMIN: snprintf(buf, n, "uarimin"); break;
    case OP_TRACE: snprintf(buf, n, "uaktrace"); break;
    case OP_CUMSUM: snprintf(buf, n, "ucumk+"); break;
    case OP_CUMPROD: snprintf(buf, n, "ucum*"); break;
    case OP_CUMMIN: snprintf(buf, n, "ucummin"); break;
    case OP_CUMMAX: snprintf(buf, n, "ucummax"); break;
    default: snprintf(buf, n, "%s", op_info[op].name); break;
    }
    return buf;
}

/* SystemDS's opcode of an elementwise, reorg or product instruction. */
static const char *op_opcode(const Instr *in, char *buf, size_t n)
{
    switch (in->op) {
    case OP_AND: return "&&";
    case OP_OR: return "||";
    case OP_ISNA: return "isna";
    case OP_ISNAN: return "isnan";
    case OP_ISINF: return "isinf";
    case OP_TRANS: return "r'";
    case OP_DIAG: return "rdiag";
    case OP_RESHAPE: return "rshape";
    case OP_ORDER: return "rsort";
    case OP_RMEMPTY: return "rmempty";
    case OP_REPLACE: return "replace";
    case OP_TABLE: return "ctable";
    case OP_GROUPAGG: return "groupedagg";
    case OP_LOWERTRI: return "lowertri";
    case OP_UPPERTRI: return "uppertri";
    case OP_MATMUL: return "ba+*";
    case OP_TSMM: return "tsmm";
    case OP_TSMMA: return "tsmma";
    case OP_MMCHAIN: return "mmchain";
    case OP_MATMULTL: return "ba+*";
    case OP_MEDIAN: return "median";
    case OP_QUANTILE: return "qpick";
    case OP_MOMENT: return "cm";
    case OP_COV: return "cov";
    case OP_CUMSUM: case OP_CUMPROD: case OP_CUMMIN: case OP_CUMMAX: return agg_opcode(in->op, in->dir, buf, n);
    default: return op_info[in->op].name;
    }
}

/* SystemDS's opcode of a builtin where its name differs from braid's. */
static const char *bi_opcode(BuiltinId bi)
{
    switch (bi) {
    case BI_ASSCALAR: return "castdts";
    case BI_ASMATRIX: return "castsdm";
    case BI_ASDOUBLE: return "castvtd";
    case BI_ASINTEGER: return "castvti";
    case BI_ASLOGICAL: case BI_ASBOOLEAN: return "castvtb";
    case BI_ASFRAME: return "castsdf";
    case BI_CBIND: return "cbind";
    case BI_RBIND: return "rbind";
    default: return builtin_info[bi].name;
    }
}

/* An operand as SystemDS's instruction strings write it:
 * "value·SCALAR·INT64·true" (prepScalarInputOperand of a literal). */
static void operand(const Value *v, char *buf, size_t n)
{
    char num[FMT_NUM_MAX];
    const char *text = num;
    if (v->kind == V_DOUBLE) fmt_double(v->d, num, sizeof num);
    else if (v->kind == V_INT) fmt_int(v->i, num, sizeof num);
    else if (v->kind == V_BOOL) text = fmt_bool_file(v->b);
    else if (v->kind == V_STRING) text = v->s->s;
    else text = "_";
    snprintf(buf, n, "%s\xc2\xb7%s\xc2\xb7%s\xc2\xb7true", text, lin_dtype(v), lin_vtype(v));
}

/* A scalar label (prepScalarLabel of a literal: the value alone). */
static void label(const Value *v, const char *dflt, char *buf, size_t n)
{
    if (v->kind == V_DOUBLE) fmt_double(v->d, buf, n);
    else if (v->kind == V_INT) fmt_int(v->i, buf, n);
    else if (v->kind == V_BOOL) snprintf(buf, n, "%s", fmt_bool_file(v->b));
    else if (v->kind == V_STRING) snprintf(buf, n, "%s", v->s->s);
    else snprintf(buf, n, "%s", dflt);
}

#define SEP "\xc2\xb0"   /* U+00B0, SystemDS's Lop.OPERAND_DELIMITOR */
#define OUTOP "xxx\xc2\xb7MATRIX\xc2\xb7" "FP64"

/* The creation items of rand, seq and read: the instruction string as
 * SystemDS's DataGen / createvar writes it, output renamed "xxx" and
 * variables replaced by their values (DataGenCPInstruction.getLineageItem). */
static LinItem *creation(LinTrace *t, const Instr *in, const Value *a, const Value *out)
{
    char buf[4096], p[8][256];
    Value none = val_none();
#define A(k) ((k) < in->nin && (k) < 16 ? &a[k] : &none)
    switch (in->bi) {
    case BI_RAND: {
        /* CP°rand°rows°cols°blen°min°max°sparsity°seed°pdf°lambda°k°out */
        Value r = out->kind == V_MATRIX && out->m ? val_int(out->m->rows) : *A(0);
        Value c = out->kind == V_MATRIX && out->m ? val_int(out->m->cols) : *A(1);
        operand(&r, p[0], sizeof p[0]);
        operand(&c, p[1], sizeof p[1]);
        label(A(2), "0.0", p[2], sizeof p[2]);
        label(A(3), "1.0", p[3], sizeof p[3]);
        label(A(4), "1.0", p[4], sizeof p[4]);
        /* the seed the draw used: an unseeded one's fresh seed, as
           SystemDS's DataGenCPInstruction.getLineageItem writes its
           runtime seed (k_rand on this thread just drew it) */
        Value sd = val_int(k_rand_seed_used());
        label(&sd, "-1", p[5], sizeof p[5]);
        label(A(5), "uniform", p[6], sizeof p[6]);
        label(A(6), "1.0", p[7], sizeof p[7]);
        snprintf(buf, sizeof buf, "CP" SEP "rand" SEP "%s" SEP "%s" SEP "%d" SEP "%s" SEP "%s" SEP "%s" SEP "%s" SEP
                 "%s" SEP "%s" SEP "%d" SEP OUTOP, p[0], p[1], (int)br_blocksize(), p[2], p[3], p[4], p[5], p[6],
                 p[7], br_threads());
        return lin_item(t, "rand", buf, NULL, 0);
    }
    case BI_MATRIX: {
        /* matrix(v, rows, cols) of a scalar v is SystemDS's rand with
         * min = max = v, whose seed stays unspecified (-1) */
        if (A(0)->kind == V_MATRIX || A(0)->kind == V_NONE || out->kind != V_MATRIX || !out->m) return NULL;
        Value r = val_int(out->m->rows), c = val_int(out->m->cols);
        operand(&r, p[0], sizeof p[0]);
        operand(&c, p[1], sizeof p[1]);
        label(A(0), "0", p[2], sizeof p[2]);
        snprintf(buf, sizeof buf, "CP" SEP "rand" SEP "%s" SEP "%s" SEP "%d" SEP "%s" SEP "%s" SEP "1.0" SEP "-1" SEP
                 "uniform" SEP "1.0" SEP "%d" SEP OUTOP, p[0], p[1], (int)br_blocksize(), p[2], p[2], br_threads());
        return lin_item(t, "rand", buf, NULL, 0);
    }
    case BI_SEQ: {
        /* CP°seq°rows°cols°blen°from°to°incr°out */
        operand(A(0), p[0], sizeof p[0]);
        operand(A(1), p[1], sizeof p[1]);
        Value inc = A(2)->kind != V_NONE ? *A(2)
                  : val_int(val_as_double(A(0)) <= val_as_double(A(1)) ? 1 : -1);
        operand(&inc, p[2], sizeof p[2]);
        snprintf(buf, sizeof buf, "CP" SEP "seq" SEP "%lld" SEP "1" SEP "%d" SEP "%s" SEP "%s" SEP "%s" SEP OUTOP,
                 (long long)(out->kind == V_MATRIX && out->m ? out->m->rows : -1), (int)br_blocksize(), p[0], p[1],
                 p[2]);
        return lin_item(t, "seq", buf, NULL, 0);
    }
    case BI_READ: {
        /* CP°createvar°pREADxxx°file°false°DT°format°rows°cols°-1°-1°copy,
         * then rblk for text formats */
        char fmt[64];
        label(A(1), "text", fmt, sizeof fmt);
        label(A(0), "", p[0], sizeof p[0]);
        if (A(1)->kind == V_NONE) {
            /* the format the read took: the .mtd's (as SystemDS's
               createvar carries it) */
            IoMeta m;
            bool found = false;
            BrErr me = {0};
            if (!io_read_mtd(p[0], &m, &found, &me) && found && m.format[0]) snprintf(fmt, sizeof fmt, "%s", m.format);
        }
        bool known = out->kind == V_MATRIX && out->m;
        long long rows = known ? out->m->rows : -1, cols = known ? out->m->cols : -1;
        snprintf(buf, sizeof buf, "CP" SEP "createvar" SEP "pREADxxx" SEP "%s" SEP "false" SEP "%s" SEP "%s" SEP
                 "%lld" SEP "%lld" SEP "-1" SEP "-1" SEP "copy", p[0], lin_dtype(out), fmt, rows, cols);
        LinItem *cv = lin_item(t, "createvar", buf, NULL, 0);
        if (!cv || strstr(fmt, "binary")) return cv;
        return lin_item(t, "rblk", "", &cv, 1);
    }
    default: return NULL;
    }
#undef A
}

/* The item of register r (a literal of its value when it has none). */
static LinItem *reg_item(LinTrace *t, const Value *regs, LinItem *const *lr, int r)
{
    return lr[r] ? lr[r] : lin_literal(t, &regs[r], NULL);
}

/* One dimension's bounds of an indexing as SystemDS's instruction has
 * them, lower and upper always: all rows 1 and n, one index twice. */
static bool ix_bounds(LinTrace *t, int mode, int rl, int ru, int64_t n, const Value *regs, LinItem *const *lr,
                      LinItem **out)
{
    if (mode == IX_ALL || rl < 0) {
        Value one = val_int(1), nv = val_int(n);
        out[0] = lin_literal(t, &one, NULL);
        out[1] = lin_literal(t, &nv, NULL);
    } else {
        out[0] = reg_item(t, regs, lr, rl);
        out[1] = mode == IX_SINGLE || ru < 0 ? out[0] : reg_item(t, regs, lr, ru);
    }
    return out[0] && out[1];
}

/* rightIndex (X) (rl) (ru) (cl) (cu) and leftIndex (X) (V) (rl) (ru) (cl)
 * (cu) of a matrix (IndexingCPInstruction); NULL: not a matrix. */
static LinItem *indexing(LinTrace *t, const Instr *in, const Value *regs, LinItem *const *lr)
{
    bool lix = in->kind == I_LIX;
    int b = lix ? 2 : 1;
    const Value *x = in->in[0] >= 0 && regs[in->in[0]].kind == V_MATRIX ? &regs[in->in[0]]
                   : lix && regs[in->out].kind == V_MATRIX ? &regs[in->out] : NULL;
    if (!x || !x->m || in->nin < b + 4 || in->in[0] < 0 || (lix && in->in[1] < 0)) return NULL;
    LinItem *ins[6];
    int n = 0;
    ins[n++] = lr[in->in[0]] ? lr[in->in[0]] : lin_literal(t, x, NULL);
    if (lix) ins[n++] = reg_item(t, regs, lr, in->in[1]);
    if (!ins[0] || !ins[n - 1]) return NULL;
    if (!ix_bounds(t, in->ix.rmode, in->in[b], in->in[b + 1], x->m->rows, regs, lr, &ins[n])) return NULL;
    if (!ix_bounds(t, in->ix.has_col ? in->ix.cmode : IX_ALL, in->ix.has_col ? in->in[b + 2] : -1,
                   in->in[b + 3], x->m->cols, regs, lr, &ins[n + 2]))
        return NULL;
    return lin_item(t, lix ? "leftIndex" : "rightIndex", "", ins, n + 4);
}

/* SystemDS's opcodes "^2" and "*2": a matrix-scalar X ^ 2 or X * 2 with
 * the literal 2 on the right (BinaryOp's POW2 / MULT2 lops), also where
 * its static rewrite (simplifyBinaryToUnaryOperation) made X * X into
 * X ^ 2 and X + X into X * 2 with a new literal 2, which then replaces
 * the second input in ins. NULL: the general opcode. */
static const char *pow2_mult2(LinTrace *t, const Instr *in, const Value *regs, LinItem *const *lr, LinItem **ins)
{
    if (in->kind != I_BINARY || in->nin != 2 || (in->op != OP_POW && in->op != OP_MULT && in->op != OP_PLUS))
        return NULL;
    int a = in->in[0], b = in->in[1];
    if (a < 0 || b < 0 || regs[in->out].kind != V_MATRIX || regs[a].kind != V_MATRIX) return NULL;
    if (in->op != OP_PLUS && !lr[b] && val_is_scalar(&regs[b]) && val_as_double(&regs[b]) == 2)
        return in->op == OP_POW ? "^2" : "*2";   /* a literal: it has no item of its own */
    if (in->op != OP_POW && regs[b].kind == V_MATRIX && (a == b || (lr[a] && lr[a] == lr[b]))) {
        Value two = val_int(2);
        LinItem *l = lin_literal(t, &two, NULL);
        if (!l) return NULL;
        ins[1] = l;
        return in->op == OP_MULT ? "^2" : "*2";
    }
    return NULL;
}

LinItem *lin_after(LinTrace *t, const Instr *in, const Value *regs, LinItem *const *lr)
{
    if (in->kind == I_LIT) return NULL;   /* made where consumed, as SystemDS's getOrCreate */
    if (in->kind == I_BUILTIN &&
        (in->bi == BI_RAND || in->bi == BI_SEQ || in->bi == BI_READ || in->bi == BI_MATRIX)) {
        Value av[16];
        for (int k = 0; k < in->nin && k < 16; k++) av[k] = in->in[k] >= 0 ? regs[in->in[k]] : val_none();
        LinItem *c = creation(t, in, av, &regs[in->out]);   /* operands inside its data */
        if (c) return c;
    }
    if ((in->kind == I_RIX || in->kind == I_LIX)) {
        LinItem *r = indexing(t, in, regs, lr);
        if (r) return r;
    }
    LinItem *local[8], **ins = in->nin + 1 <= 8 ? local : malloc((size_t)(in->nin + 1) * sizeof *ins);
    if (!ins) return NULL;
    int n = 0;
    for (int k = 0; k < in->nin; k++) {
        int r = in->in[k];
        if (r < 0) continue;
        LinItem *x = lr[r] ? lr[r] : lin_literal(t, &regs[r], NULL);
        if (x) ins[n++] = x;
    }
    char buf[32];
    const char *opc = NULL;
    LinItem *res = NULL;
    switch (in->kind) {
    case I_UNARY:
        if (in->op == OP_NEG && n == 1) {
            /* SystemDS parses -x as x * -1, and its static rewrite
             * (removeUnnecessaryBinaryOperation) makes X * -1 of a
             * matrix 0 - X */
            bool mat = regs[in->out].kind == V_MATRIX;
            Value c = val_int(mat ? 0 : -1);
            LinItem *l = lin_literal(t, &c, NULL);
            if (l && mat) { ins[1] = ins[0]; ins[0] = l; n = 2; }
            else if (l) ins[n++] = l;
            opc = mat ? "-" : "*";
        } else opc = op_opcode(in, buf, sizeof buf);
        break;
    case I_AGG: opc = agg_opcode(in->op, in->dir, buf, sizeof buf); break;
    case I_TERNARY:
        if (in->lazy && n < 3 && n > 0) res = ins[n - 1];   /* the taken branch alone */
        else opc = "ifelse";
        break;
    case I_RIX: opc = "rightIndex"; break;
    case I_LIX: opc = "leftIndex"; break;
    case I_BUILTIN: {
        if (in->name && !strcmp(in->name, INSTR_PARAM_CAST) && n == 1) {   /* a call's parameter */
            res = ins[0];
            break;
        }
        opc = in->bi == BI_MATRIX ? "rshape" : bi_opcode(in->bi);
        break;
    }
    case I_FUSED: case I_STITCH: case I_WHERE: opc = in->statname ? in->statname : "spoof"; break;
    default:
        opc = n == 2 ? pow2_mult2(t, in, regs, lr, ins) : NULL;
        if (!opc) opc = op_opcode(in, buf, sizeof buf);
        break;
    }
    if (!res && opc) res = n ? lin_item(t, opc, "", ins, n) : lin_item(t, opc, opc, NULL, 0);
    if (ins != local) free(ins);
    return res;
}

int lin_builtin(LinTrace *t, const Instr *in, LinItem *const *lr, Value *out, BrErr *e)
{
    LinItem *li = in->nin > 0 && in->in[0] >= 0 ? lr[in->in[0]] : NULL;
    if (!li) return br_err(e, BR_EFAIL, "lineage: lineage trace for the argument unavailable"), -1;
    char *s = lin_explain(t, li);
    if (!s) return br_err(e, BR_ENOMEM, "out of memory"), -1;
    *out = val_string(s);
    free(s);
    if (out->kind == V_NONE) return br_err(e, BR_ENOMEM, "out of memory"), -1;
    return 1;
}
