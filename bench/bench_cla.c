/* bench_cla.c: compressed linear algebra benchmark (`make bench-cla`; not
 * a test). On generated data sets (an Airline-like table of categorical
 * and low-cardinality numeric columns, one-hot encoded categoricals, an
 * MNIST-like image set, random dense data) it reports the compression
 * time, the compressed size against the ordinary block's size, the chosen
 * encodings, and per operation the time over the compressed block against
 * the ordinary kernel over the uncompressed block in the same run (the
 * two sides alternate; best of BENCH_REPS, default 5), as a ratio.
 * BENCH_QUICK=1: 8x fewer rows. Results also go to
 * bench/results/cla-<date>.txt. */
#include "../base/base.h"
#include "../io/io.h"
#include "../kernels/agg.h"
#include "../kernels/cla.h"
#include "../kernels/ew.h"
#include "../kernels/mm.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t rs = 0x2545F4914F6CDD1DULL;
static double ur(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (double)(rs >> 11) / 9007199254740992.0;
}
static int ui(int k) { return (int)(ur() * k); }

static FILE *res;
static void out(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    if (res) {
        va_start(ap, fmt);
        vfprintf(res, fmt, ap);
        va_end(ap);
    }
    fflush(stdout);
}

static MB *finish(MB *x)
{
    BrErr e = {0};
    mb_recount_nnz(x);
    mb_examine(x, &e);
    return x;
}

/* Flights: year, month, day, weekday, carrier, origin, destination,
 * scheduled hours, distance (by route), delays (mostly 0, in minutes),
 * cancelled/diverted flags; 16 columns. */
static MB *airline(int64_t n)
{
    BrErr e = {0};
    int m = 16;
    MB *x = mb_dense(n, m, &e);
    for (int64_t i = 0; i < n; i++) {
        double *r = x->d + i * m;
        int o = ui(300), d = ui(300);
        r[0] = 1987 + (double)(i * 22 / n);     /* sorted by year */
        r[1] = 1 + ui(12);
        r[2] = 1 + ui(31);
        r[3] = 1 + ui(7);
        r[4] = ui(20);
        r[5] = o;
        r[6] = d;
        r[7] = ui(24);
        r[8] = (r[7] + 1 + ui(5));
        r[9] = 100 + (o * 7 + d * 13) % 900;    /* a function of the route */
        r[10] = ur() < 0.6 ? 0 : 5 * ui(30);
        r[11] = ur() < 0.6 ? 0 : 5 * ui(30);
        r[12] = ur() < 0.02;
        r[13] = ur() < 0.005;
        r[14] = r[10] > 60 ? 5 * ui(10) : 0;
        r[15] = ui(4);
    }
    return finish(x);
}

/* 10 categorical features of 50 categories each, one-hot: 500 columns,
 * 2% non-zero. */
static MB *onehot(int64_t n)
{
    BrErr e = {0};
    int f = 10, k = 50;
    MB *x = mb_sp_alloc(n, f * k, n * f, &e);
    int64_t q = 0;
    for (int64_t i = 0; i < n; i++) {
        for (int j = 0; j < f; j++) {
            int c = (int)(pow(ur(), 2.0) * k);  /* skewed frequencies */
            x->ci[q] = j * k + c;
            x->v[q++] = 1;
        }
        x->rp[i + 1] = q;
    }
    mb_sp_done(x, q);
    return finish(x);
}

/* 28x28 images: a blob of ink around a random centre, values quantized to
 * multiples of 16 (low-precision pixels), borders empty. */
static MB *mnist(int64_t n)
{
    BrErr e = {0};
    MB *x = mb_dense(n, 784, &e);
    for (int64_t i = 0; i < n; i++) {
        double cx = 10 + ur() * 8, cy = 10 + ur() * 8, rad = 4 + ur() * 4;
        for (int a = 0; a < 28; a++)
            for (int b = 0; b < 28; b++) {
                double dd = sqrt((a - cy) * (a - cy) + (b - cx) * (b - cx));
                double v = dd < rad ? 255 * (1 - dd / rad) + ur() * 40 : 0;
                if (v > 255) v = 255;
                x->d[i * 784 + a * 28 + b] = 16 * floor(v / 16);
            }
    }
    return finish(x);
}

static MB *dense(int64_t n)
{
    BrErr e = {0};
    MB *x = mb_dense(n, 50, &e);
    for (int64_t i = 0; i < n * 50; i++) x->d[i] = ur();
    return finish(x);
}

static MB *vec(int64_t r, int64_t c)
{
    BrErr e = {0};
    MB *x = mb_dense(r, c, &e);
    for (int64_t i = 0; i < r * c; i++) x->d[i] = ur() - 0.5;
    return finish(x);
}

typedef MB *(*OpFn)(const MB *x, const MB *v, BrErr *e);

static MB *op_mv(const MB *x, const MB *v, BrErr *e) { return x->cmb ? cla_matmul_right(x, v, e) : k_matmul(x, v, e); }
static MB *op_tmv(const MB *x, const MB *v, BrErr *e) { return x->cmb ? cla_matmul_tl(x, v, e) : k_matmul_tl(x, v, e); }
static MB *op_tsmm(const MB *x, const MB *v, BrErr *e) { return x->cmb ? cla_tsmm(x, e) : k_tsmm(x, true, e); }
static MB *op_sumsq(const MB *x, const MB *v, BrErr *e)
{
    return x->cmb ? cla_agg(OP_SUMSQ, DIR_FULL, x, e) : k_agg(OP_SUMSQ, DIR_FULL, x, e);
}
static MB *op_colsums(const MB *x, const MB *v, BrErr *e)
{
    return x->cmb ? cla_agg(OP_SUM, DIR_COL, x, e) : k_agg(OP_SUM, DIR_COL, x, e);
}
static MB *op_rowsums(const MB *x, const MB *v, BrErr *e)
{
    return x->cmb ? cla_agg(OP_SUM, DIR_ROW, x, e) : k_agg(OP_SUM, DIR_ROW, x, e);
}
static MB *op_scale(const MB *x, const MB *v, BrErr *e)
{
    return x->cmb ? cla_scalar(OP_MULT, x, 2.5, false, e) : k_binary_ms(OP_MULT, x, 2.5, e);
}
static MB *op_dec(const MB *x, const MB *v, BrErr *e) { return x->cmb ? cmb_decompress(x, e) : mb_copy(x, e); }

static double now(void) { return (double)br_now_ns() / 1e9; }

/* Bytes of tool's output (gzip -6, zstd -3) over x's binary file; 0 when
 * the tool is missing. */
static double packed(const MB *x, const char *tool)
{
    char path[128], cmd[512];
    snprintf(path, sizeof path, "/tmp/bench_cla_%d.bin", (int)getpid());
    BrErr e = {0};
    IoWriteOpts wo;
    io_write_opts_init(&wo);
    wo.format = "braid-binary";
    if (io_write_matrix(path, x, &wo, &e)) return 0;
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null && %s -c %s | wc -c", tool, tool, path);
    FILE *p = popen(cmd, "r");
    double b = 0;
    if (p && fscanf(p, "%lf", &b) != 1) b = 0;
    if (p) pclose(p);
    unlink(path);
    snprintf(cmd, sizeof cmd, "%s.mtd", path);
    unlink(cmd);
    return b;
}

static void bench_set(const char *name, MB *x, int reps)
{
    BrErr e = {0};
    ClaPlanOpts o = cla_plan_defaults();
    double t0 = now();
    MB *c = cla_compress(x, &o, &e);
    double tc = now() - t0;
    size_t ub = mb_bytes(x), cb = mb_bytes(c);
    out("\n== %s: %lldx%lld, nnz %lld, %s, %.1f MB\n", name, (long long)x->rows, (long long)x->cols,
        (long long)x->nnz, x->sparse ? "sparse" : "dense", ub / 1e6);
    if (!c->cmb) {
        out("   not compressed (estimated ratio below %.2f); compression planning %.3f s\n", o.min_ratio, tc);
        mb_release(c);
        return;
    }
    int cnt[7] = {0};
    for (int g = 0; g < c->cmb->ngroups; g++) cnt[c->cmb->groups[g]->enc]++;
    out("   compressed %.2f MB, ratio %.2f, %.3f s (%.2f s/GB); %d groups:", cb / 1e6, (double)ub / (double)cb, tc,
        tc / (ub / 1e9), c->cmb->ngroups);
    for (int k = 0; k < 7; k++)
        if (cnt[k]) out(" %s %d", cla_enc_name((ClaEnc)k), cnt[k]);
    out("\n");
    /* the direct code tables against hashing every row, alternated */
    double tl = INFINITY, th = INFINITY;
    for (int r = 0; r < 3; r++)
        for (int lut = 1; lut >= 0; lut--) {
            ClaPlanOpts q = o;
            q.lut = lut;
            double t1 = now();
            MB *k = cla_compress(x, &q, &e);
            t1 = now() - t1;
            mb_release(k);
            if (lut) tl = t1 < tl ? t1 : tl;
            else th = t1 < th ? t1 : th;
        }
    out("   compression with direct code tables %.3f s, hashing every row %.3f s (best of 3): %.2fx\n", tl, th, th / tl);
    double gz = packed(x, "gzip"), zs = packed(x, "zstd");
    out("   general-purpose compressors of the binary file: gzip %.2f MB (ratio %.2f)", gz / 1e6, gz ? ub / gz : 0);
    if (zs) out(", zstd %.2f MB (ratio %.2f)", zs / 1e6, ub / zs);
    else out(", zstd not installed");
    out("\n");
    struct { const char *n; OpFn f; int vr; } ops[] = {
        {"X %*% v", op_mv, 0}, {"t(X) %*% y", op_tmv, 1}, {"t(X) %*% X", op_tsmm, 2}, {"sum(X^2)", op_sumsq, 2},
        {"colSums(X)", op_colsums, 2}, {"rowSums(X)", op_rowsums, 2}, {"X * 2.5", op_scale, 2},
        {"decompress", op_dec, 2}};
    MB *v = vec(x->cols, 1), *y = vec(x->rows, 1);
    out("   %-12s %12s %12s %8s\n", "operation", "ULA s", "CLA s", "ULA/CLA");
    for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
        if (ops[k].f == op_tsmm && x->cols > 600 && x->rows > 20000) {
            out("   %-12s (skipped: %lld columns)\n", ops[k].n, (long long)x->cols);
            continue;
        }
        double bu = INFINITY, bc = INFINITY;
        const MB *arg = ops[k].vr == 0 ? v : y;
        for (int r = 0; r < reps; r++) {
            for (int side = 0; side < 2; side++) {
                const MB *in = (side + r) % 2 ? c : x;
                double t = now();
                MB *o2 = ops[k].f(in, arg, &e);
                t = now() - t;
                mb_release(o2);
                if (in == c) bc = t < bc ? t : bc;
                else bu = t < bu ? t : bu;
            }
        }
        out("   %-12s %12.5f %12.5f %8.2f\n", ops[k].n, bu, bc, bu / bc);
    }
    mb_release(v);
    mb_release(y);
    mb_release(c);
}

int main(void)
{
    const char *q = getenv("BENCH_QUICK"), *rp = getenv("BENCH_REPS"), *only = getenv("BENCH_SETS");
    int64_t div = q && *q == '1' ? 8 : 1;
    int reps = rp ? atoi(rp) : 5;
    char path[256];
    time_t tt = time(NULL);
    strftime(path, sizeof path, "bench/results/cla-%Y%m%d-%H%M.txt", gmtime(&tt));
    res = fopen(path, "w");
    out("bench_cla: %d threads, best of %d, compressed (CLA) vs uncompressed (ULA) kernels in one run\n",
        br_threads(), reps);
    struct { const char *n; MB *(*g)(int64_t); int64_t rows; } sets[] = {
        {"airline-like", airline, 1000000}, {"one-hot", onehot, 400000}, {"mnist-like", mnist, 60000},
        {"random dense", dense, 400000}};
    for (size_t k = 0; k < sizeof sets / sizeof *sets; k++) {
        if (only && !strstr(only, sets[k].n)) continue;   /* BENCH_SETS: names to run */
        MB *x = sets[k].g(sets[k].rows / div);
        bench_set(sets[k].n, x, reps);
        mb_release(x);
    }
    if (res) {
        fclose(res);
        printf("\nsaved %s\n", path);
    }
    return 0;
}
