/* bound.c: the physical-bound meter (bound.h, docs/perf.md). */
#include "bound.h"
#include "../codegen/cgrun.h"
#include "../matrix/mb.h"

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

void rt_bound_instr(const Instr *in, const Value *regs)
{
    if (in->kind == I_LIT || in->kind == I_READ || in->kind == I_OUT || in->kind == I_CALL) return;
    double rd = 0, wr = vbytes(&regs[in->out]), fl = 0;
    for (int k = 0; k < in->nin; k++) if (in->in[k] >= 0) rd += vbytes(&regs[in->in[k]]);
    if (rd == 0 && wr == 0) return;   /* scalars */
    if (in->kind == I_MATMUL) fl = mm_flops(in, regs);
    else if (in->kind == I_BUILTIN) fl = la_flops(in, regs);
    else if (in->kind == I_FUSED && in->fused) {
        Value local[16];
        if (in->nin <= 16) {
            for (int k = 0; k < in->nin; k++) local[k] = in->in[k] >= 0 ? regs[in->in[k]] : val_none();
            fl = cg_flops(in->fused, in->nin, local);
        }
    }
    double t = (rd + wr) / read_bps, tf = fl / gemm_fps;
    pthread_mutex_lock(&mu);
    acc[0] += t > tf ? t : tf;
    acc[1] += rd;
    acc[2] += wr;
    acc[3] += fl;
    pthread_mutex_unlock(&mu);
}

void rt_bound_mark(void)
{
    if (!rt_bound_enabled()) return;
    pthread_mutex_lock(&mu);
    for (int k = 0; k < 4; k++) { mark[0][k] = mark[1][k]; mark[1][k] = acc[k]; }
    nmark++;
    pthread_mutex_unlock(&mu);
}
