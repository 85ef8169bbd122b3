/* bound.c: the physical-bound meter (bound.h, docs/perf.md). */
#include "bound.h"
#include "../codegen/cgrun.h"
#include "../kernels/dnn.h"
#include "../matrix/mb.h"

#include <math.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

int rt_bound_on = -1;
static double read_bps, gemm_fps;
/* running sums (instructions of parfor workers add concurrently) */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static double acc[4];              /* seconds, read bytes, write bytes, flops */
static double mark[2][4];          /* the last two marks */
static int nmark;

static void report(void)
{
    const double *a = nmark >= 2 ? mark[0] : (double[4]){0}, *b = nmark >= 1 ? mark[1] : acc;
    fprintf(stderr, "BOUND seconds=%.6f read_bytes=%.0f write_bytes=%.0f flops=%.0f marks=%d\n", b[0] - a[0],
            b[1] - a[1], b[2] - a[2], b[3] - a[3], nmark);
}

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init(void)
{
    const char *s = getenv("BRAID_BOUND");
    double r = 0, g = 0;
    bool on = s && sscanf(s, "%lf %lf", &r, &g) == 2 && r > 0 && g > 0;
    if (on) {
        read_bps = r * 1e9;
        gemm_fps = g * 1e9;
        atexit(report);
    }
    __atomic_store_n(&rt_bound_on, on ? 1 : 0, __ATOMIC_RELEASE);
}

bool rt_bound_enabled(void)
{
    pthread_once(&once, init);   /* parfor workers may ask first */
    return __atomic_load_n(&rt_bound_on, __ATOMIC_ACQUIRE) == 1;
}

/* bytes of a value as stored (0 unless a matrix) */
static double vbytes(const Value *v)
{
    return v->kind == V_MATRIX && v->m ? (double)mb_bytes(v->m) : 0;
}

/* multiply-adds over A's stored cells (non-zeros when sparse) */
static double cells(const MB *m)
{
    return m->sparse ? (double)m->nnz : (double)m->rows * (double)m->cols;
}

/* FLOPs of a basic matrix product instruction */
static double mm_flops(const Instr *in, const Value *regs)
{
    const Value *a = in->nin > 0 && in->in[0] >= 0 ? &regs[in->in[0]] : NULL;
    const Value *b = in->nin > 1 && in->in[1] >= 0 ? &regs[in->in[1]] : NULL;
    if (!a || a->kind != V_MATRIX || !a->m) return 0;
    if (in->op == OP_TSMM) return cells(a->m) * (double)(in->left ? a->m->cols : a->m->rows);
    if (!b || b->kind != V_MATRIX || !b->m) return 0;
    if (in->op == OP_TSMMA)   /* t(x) %*% x, t(x) %*% v, t(v) %*% v */
        return cells(a->m) * (double)(a->m->cols + 2 * b->m->cols) + cells(b->m) * (double)b->m->cols;
    if (in->op == OP_MMCHAIN) return 4 * cells(a->m) * (double)b->m->cols;
    /* x %*% y (t(x) %*% y for matmultl): over the sparser operand */
    double fa = 2 * cells(a->m) * (double)b->m->cols;
    double fb = 2 * cells(b->m) * (double)(in->op == OP_MATMULTL ? a->m->cols : a->m->rows);
    return a->m->sparse || !b->m->sparse ? fa : fb;
}

/* FLOPs of the dense linear-algebra builtins (LAPACK), the textbook
 * counts (Golub & Van Loan): for an m x n operand (m >= n where it
 * matters), LU 2/3 n^3, Cholesky 1/3 n^3, inverse 2 n^3 (LU, then the
 * inverse from it), Householder QR 2 m n^2 - 2/3 n^3, symmetric eigen
 * with vectors 9 n^3, thin SVD with vectors (R-SVD) 6 m n^2 + 20 n^3;
 * solve(A, B) with B of k columns: an LU of a square A and 2 n^2 k for
 * the triangular solves, a QR of a tall A (least squares) and 4 m n k. */
static double la_flops(const Instr *in, const Value *regs)
{
    const Value *a = in->nin > 0 && in->in[0] >= 0 ? &regs[in->in[0]] : NULL;
    if (!a || a->kind != V_MATRIX || !a->m) return 0;
    double m = (double)a->m->rows, n = (double)a->m->cols;
    if (m < n) { double t = m; m = n; n = t; }
    double n3 = n * n * n;
    switch (in->bi) {
    case BI_SOLVE: {
        const Value *b = in->nin > 1 && in->in[1] >= 0 ? &regs[in->in[1]] : NULL;
        double k = b && b->kind == V_MATRIX && b->m ? (double)b->m->cols : 1;
        return m == n ? 2.0 / 3.0 * n3 + 2 * n * n * k : 2 * m * n * n - 2.0 / 3.0 * n3 + 4 * m * n * k;
    }
    case BI_LU: case BI_DET: return 2.0 / 3.0 * n3;
    case BI_CHOLESKY: return n3 / 3.0;
    case BI_INV: return 2 * n3;
    case BI_QR: return 2 * m * n * n - 2.0 / 3.0 * n3;
    case BI_EIGEN: return 9 * n3;
    case BI_SVD: return 6 * m * n * n + 20 * n3;
    default: return 0;
    }
}

/* Argument k of instruction in (NULL when absent). */
static const Value *arg(const Instr *in, const Value *regs, int k)
{
    return k < in->nin && in->in[k] >= 0 ? &regs[in->in[k]] : NULL;
}

/* The n integers of a shape argument (a list, or one number for both of
 * a pair); absent: dflt. false when malformed (the builtin reports it). */
static bool shape_arg(const Value *v, int n, int64_t dflt, int64_t *out)
{
    if (!v || v->kind == V_NONE) {
        for (int i = 0; i < n; i++) out[i] = dflt;
        return dflt >= 0;
    }
    if (v->kind == V_LIST ? v->l->n != n : n != 2) return false;
    for (int i = 0; i < n; i++) {
        const Value *it = v->kind == V_LIST ? &v->l->items[i] : v;
        if (!val_is_numeric(it)) return false;
        double d = val_as_double(it);
        if (!isfinite(d) || d != floor(d) || fabs(d) > 9e15) return false;
        out[i] = (int64_t)d;
    }
    return true;
}

/* The convolution shapes of a DNN builtin whose input_shape is argument
 * k (builtins/dnn.c's argument order); false when malformed. */
static bool dnn_shape(const Instr *in, const Value *regs, int k, bool conv, DnnShape *s)
{
    int64_t is[4], fs[4], st[2], pd[2];
    if (!shape_arg(arg(in, regs, k), 4, -1, is) || !shape_arg(arg(in, regs, k + 1), conv ? 4 : 2, -1, fs) ||
        !shape_arg(arg(in, regs, k + 2), 2, 1, st) || !shape_arg(arg(in, regs, k + 3), 2, 0, pd))
        return false;
    *s = (DnnShape){.N = is[0], .C = is[1], .H = is[2], .W = is[3], .K = conv ? fs[0] : 0,
                    .R = conv ? fs[2] : fs[0], .S = conv ? fs[3] : fs[1], .sh = st[0], .sw = st[1],
                    .ph = pd[0], .pw = pd[1]};
    BrErr e = {0};
    return dnn_shape_check(s, conv, "bound", &e) == 0;
}

/* FLOPs of the DNN builtins: a convolution and each of its two backward
 * functions 2 N K C R S P Q (one multiply-add per filter cell and output
 * cell: the im2col product), pooling and its backward N C P Q R S (one
 * operation per window cell), lstm 2 N T (D + M) 4M (the gates' product
 * of each of T steps, X of N x TD, W of (D + M) x 4M) and its backward
 * twice that (the gradients of W and of the step's input). */
static double dnn_flops(const Instr *in, const Value *regs)
{
    DnnShape s;
    switch (in->bi) {
    case BI_CONV2D: case BI_CONV2D_BWF: case BI_CONV2D_BWD:
        if (!dnn_shape(in, regs, 2, true, &s)) return 0;
        return 2.0 * (double)s.N * (double)s.K * (double)s.C * (double)s.R * (double)s.S * (double)s.P * (double)s.Q;
    case BI_MAXPOOL: case BI_AVGPOOL: case BI_MAXPOOL_BW: case BI_AVGPOOL_BW: {
        int k = in->bi == BI_MAXPOOL || in->bi == BI_AVGPOOL ? 1 : 2;
        if (!dnn_shape(in, regs, k, false, &s)) return 0;
        return (double)s.N * (double)s.C * (double)s.P * (double)s.Q * (double)s.R * (double)s.S;
    }
    case BI_LSTM: case BI_LSTM_BW: {
        const Value *x = arg(in, regs, 0), *w = arg(in, regs, 1);
        if (!x || !w || x->kind != V_MATRIX || w->kind != V_MATRIX || !x->m || !w->m) return 0;
        double M = (double)(w->m->cols / 4), D = (double)w->m->rows - M;
        if (M < 1 || D < 1) return 0;
        double T = floor((double)x->m->cols / D);
        double f = 2 * (double)x->m->rows * T * (D + M) * 4 * M;
        return in->bi == BI_LSTM_BW ? 2 * f : f;
    }
    default: return 0;
    }
}

double rt_bound_instr(const Instr *in, const Value *regs)
{
    if (in->kind == I_LIT || in->kind == I_READ || in->kind == I_OUT || in->kind == I_CALL) return 0;
    double rd = 0, wr = vbytes(&regs[in->out]), fl = 0;
    for (int k = 0; k < in->nin; k++) if (in->in[k] >= 0) rd += vbytes(&regs[in->in[k]]);
    if (rd == 0 && wr == 0) return 0;   /* scalars */
    if (in->kind == I_MATMUL) fl = mm_flops(in, regs);
    else if (in->kind == I_BUILTIN) fl = la_flops(in, regs) + dnn_flops(in, regs);
    else if (in->kind == I_FUSED && in->fused) {
        Value local[16];
        if (in->nin <= 16) {
            for (int k = 0; k < in->nin; k++) local[k] = in->in[k] >= 0 ? regs[in->in[k]] : val_none();
            fl = cg_flops(in->fused, in->nin, local);
        }
    }
    double t = (rd + wr) / read_bps, tf = fl / gemm_fps, b = t > tf ? t : tf;
    pthread_mutex_lock(&mu);
    acc[0] += b;
    acc[1] += rd;
    acc[2] += wr;
    acc[3] += fl;
    pthread_mutex_unlock(&mu);
    return b;
}

void rt_bound_mark(void)
{
    if (!rt_bound_enabled()) return;
    pthread_mutex_lock(&mu);
    for (int k = 0; k < 4; k++) { mark[0][k] = mark[1][k]; mark[1][k] = acc[k]; }
    nmark++;
    pthread_mutex_unlock(&mu);
}
