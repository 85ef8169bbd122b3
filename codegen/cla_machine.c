/* cla_machine.c: this machine's constants of compressed linear algebra
 * (docs/cla.md), measured once and cached as the other machine constants
 * are (cost.c): the Row-plan weights of cg_cla_row_unfused (a
 * decompressed cell and a materialized cell, in cell operations) and the
 * cost of compression in passes over the matrix (runtime/cla_rt.c,
 * auto). Ratios of times of one thread, so the thread count and the
 * clock cancel. */
#include "cgint.h"
#include "../kernels/cla.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The defaults, which pinned runs use (tests: BRAID_CG_MACHINE) */
#define CLA_DEC_W_DEFAULT 2.0
#define CLA_MAT_W_DEFAULT 2.0
#define CLA_PASSES_DEFAULT 16.0
/* "2": compression became several-fold cheaper (row-wise sparse coder,
 * keyed dense blocks), so the passes cached before are remeasured */
#define CLA_MACHINE_FILE "cla-machine2.txt"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);   /* the thread's time: robust to load */
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

ClaMachine cg_cla_machine_defaults(void)
{
    return (ClaMachine){CLA_DEC_W_DEFAULT, CLA_MAT_W_DEFAULT, CLA_PASSES_DEFAULT};
}

/* Airline-like data (categorical columns of 2-30 values, runs, a sparse
 * flag): what auto and the Row plans meet. Seeded. */
static MB *sample_block(int64_t n, int64_t m, BrErr *e)
{
    MB *x = mb_dense(n, m, e);
    if (!x) return NULL;
    uint64_t s = 88172645463325252ULL;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < m; j++) {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            int card = 2 + (int)(j * 4 % 29);
            double v = j == m - 1 ? (double)((i / 500) % 7) : j == m - 2 ? (s % 10 == 0) : (double)(s % (uint64_t)card);
            x->d[i * m + j] = v;
        }
    mb_recount_nnz(x);
    return x;
}

/* Best of 3 of each: a cell operation (a dot of every row with a
 * vector), a decompressed cell (rows read in blocks), a materialized cell
 * (written, read back), a pass (a sum over the dense block) and a
 * compression. False when something could not be had. */
static bool measure(ClaMachine *cm)
{
    enum { N = 65536, M = 8, B = 2048 };
    BrErr e = {0};
    MB *x = sample_block(N, M, &e), *cx = NULL;
    double *buf = br_malloc((size_t)B * M * sizeof(double)), *tmp = br_malloc((size_t)N * sizeof(double));
    double cell = INFINITY, dec = INFINITY, mat = INFINITY, pass = INFINITY, comp = INFINITY;
    volatile double sink = 0;
    bool ok = x && buf && tmp;
    ClaPlanOpts o = cla_plan_defaults();
    o.force = true;
    for (int r = 0; ok && r < 3; r++) {
        double t = now(), s = 0;
        for (int64_t i = 0; i < N; i++) {
            double d = 0;
            for (int j = 0; j < M; j++) d += x->d[i * M + j] * (double)(j + 1);
            tmp[i] = d;
        }
        cell = fmin(cell, now() - t);
        t = now();
        for (int64_t i = 0; i < N * M; i++) s += x->d[i];
        pass = fmin(pass, now() - t);
        t = now();
        for (int64_t i = 0; i < N; i++) tmp[i] = x->d[i * M] + 1;
        for (int64_t i = 0; i < N; i++) s += tmp[i];
        mat = fmin(mat, (now() - t) * M);   /* per cell: N cells written and read */
        mb_release(cx);
        t = now();
        cx = cla_compress(x, &o, &e);
        comp = fmin(comp, now() - t);
        if (!(ok = cx && mb_is_cmb(cx))) break;
        ClaRows *rd = cla_rows_open(cx, 0);
        if (!(ok = rd != NULL)) break;
        t = now();
        for (int64_t lo = 0; lo < N; lo += B) cla_rows_read(rd, B, buf);
        dec = fmin(dec, now() - t);
        cla_rows_close(rd);
        sink += s + buf[0] + tmp[0];
    }
    (void)sink;
    mb_release(cx);
    mb_release(x);
    free(buf);
    free(tmp);
    br_err_clear(&e);
    if (!ok || !(cell > 0) || !(pass > 0)) return false;
    /* clamped: a measurement disturbed beyond these says nothing */
    cm->dec_w = fmin(fmax(dec / cell, 0.25), 16);
    cm->mat_w = fmin(fmax(mat / cell, 0.25), 16);
    cm->passes = fmin(fmax(comp / pass, 2), 400);
    return true;
}

void cg_cla_machine(const char *cachedir, ClaMachine *cm)
{
    *cm = cg_cla_machine_defaults();
    ClaMachine v;
    const char *pin = getenv("BRAID_CLA_MACHINE");   /* "dec_w mat_w passes" */
    if (pin && sscanf(pin, "%lf %lf %lf", &v.dec_w, &v.mat_w, &v.passes) == 3 && v.dec_w > 0 && v.mat_w > 0 &&
        v.passes > 0) {
        *cm = v;
        return;
    }
    if (getenv("BRAID_CG_MACHINE")) return;   /* pinned plans: the defaults */
    char path[1200] = "";
    if (cachedir) {
        snprintf(path, sizeof path, "%s/" CLA_MACHINE_FILE, cachedir);
        FILE *f = fopen(path, "r");
        if (f) {
            int k = fscanf(f, "%lf %lf %lf", &v.dec_w, &v.mat_w, &v.passes);
            fclose(f);
            if (k == 3 && v.dec_w > 0 && v.mat_w > 0 && v.passes > 0) {
                *cm = v;
                return;
            }
        }
    }
    if (!measure(&v)) return;
    *cm = v;
    if (!path[0]) return;
    char tmp[1300];
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) return;
    fprintf(f, "%.6g %.6g %.6g\n", v.dec_w, v.mat_w, v.passes);
    fclose(f);
    chmod(tmp, 0600);
    if (rename(tmp, path)) remove(tmp);
}

void cg_cla_machine_ctx(CgContext *c, ClaMachine *cm)
{
    if (!c) {
        *cm = cg_cla_machine_defaults();
        return;
    }
    pthread_mutex_lock(&c->lock);
    if (!c->have_cla) {
        cache_dir_init(c);
        cg_cla_machine(c->disk_ok ? c->cachedir : NULL, &c->cla);
        c->have_cla = true;
    }
    *cm = c->cla;
    pthread_mutex_unlock(&c->lock);
}
