/* cost.c: the analytical cost model of fusion plans (seed 000, sections
 * 4.2-4.3): plan partitions (connected components of fusion references)
 * with their roots, inputs and materialization points, the interesting
 * points (materialization-point consumers, template switches), and
 * getPlanCost: the cost of a partition under a plan assignment, computed
 * top-down from its roots with a cost vector per fused operator (output
 * size, distinct inputs, compute), T = max(read, compute) + write per
 * operator, memoized so shared reads and CSEs count once and redundant
 * compute counts again. Bandwidths and the FLOP rates (a scalar
 * multiply-add chain for elementwise work, dgemm for unfused dense
 * products and the narrow blocked Row kernels, a row-wise vector-matrix
 * loop like the generated code's for Row products against wide side
 * matrices and Outer dot products) are measured once on the machine and
 * cached in the cache directory. Size decisions that exec.c used to take
 * at run time are costs here: a Row plan's wide products at the row-wise
 * rate vs one dgemm, a sparse side input of a Row plan expanded to dense
 * rows, an Outer plan over a dense driver as full cells plus the CSR
 * conversions (see cg_plan_cost's callers in mpskip.c). */
#include "cgint.h"

#include <unistd.h>

#include <float.h>
#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../dist/dist.h"
#include "../gpu/gpu.h"
#include "../kernels/cla.h"
#include "../kernels/leaf.h"
#include "../kernels/mm.h"

/* ---- machine constants ---- */

static double now_s(void) { return (double)br_now_ns() / 1e9; }

/* dgemm's rate through the product kernel (OpenBLAS, br_threads()
 * threads): best of 11 products of 384 x 384 blocks (a few ms: a slow
 * phase of the machine should not set the rate alone). */
static double measure_gemm(void)
{
    BrErr e = {0};
    const int64_t n = 384;
    MB *a = mb_dense_uninit(n, n, &e), *b = mb_dense_uninit(n, n, &e);
    double best = 1e30;
    if (a && b) {
        for (int64_t i = 0; i < n * n; i++) { a->d[i] = (double)(i % 7) * 0.25; b->d[i] = (double)(i % 5) * 0.5; }
        a->nnz = b->nnz = n * n;
        for (int rep = 0; rep < 12; rep++) {
            double t0 = now_s();
            MB *c = k_matmul(a, b, &e);
            double t1 = now_s();
            if (!c) break;
            mb_release(c);
            if (rep) best = fmin(best, t1 - t0);   /* the first warms up */
        }
    }
    mb_release(a);
    mb_release(b);
    return best < 1e30 && best > 0 ? 2.0 * (double)n * (double)n * (double)n / best : 0;
}

/* The rate of the generated code's row-wise vector-matrix product
 * against a side matrix given transposed (cg_vecmat_t's loop: four dot
 * products per pass over the row; kernels/probe_leaf.c, at the SIMD
 * level the generated code gets), rows split over br_threads()
 * threads: 512 rows of 128 against 128 columns, best of 11 (the first
 * passes run at a fraction of the rate: page faults, thread start). */
static double measure_vecmat(void)
{
    const int64_t m = 512, n = 128, c = 128;
    double *x = br_alloc_aligned((size_t)(m * n + c * n + m * c) * sizeof(double));
    if (!x) return 0;
    double *bt = x + m * n, *o = bt + c * n;
    for (int64_t i = 0; i < m * n + c * n; i++) x[i] = (double)(i % 11) * 0.125;
    int nt = br_threads();
    const KProbeLeaf *leaf = k_leaves(k_isa())->probe;
    double best = 1e30;
    for (int rep = 0; rep < 12; rep++) {
        double t0 = now_s();
#pragma omp parallel for num_threads(nt) schedule(static)
        for (int t = 0; t < nt; t++) leaf->vecmat_t(x, bt, o, n, c, t * m / nt, (t + 1) * m / nt);
        double t1 = now_s();
        if (rep) best = fmin(best, t1 - t0);
    }
    double sink = o[0] + o[m * c - 1];
    br_free_aligned(x);
    if (sink == 42.4242) best *= 1.0000001;   /* keep the loop */
    return best < 1e30 && best > 0 ? 2.0 * (double)m * (double)n * (double)c / best : 0;
}

/* One streaming read (vectorized, as the generated loops are:
 * kernels/probe_leaf.c) and one
 * streaming fill of a[0..n) with nt threads: the best times so far are
 * lowered; returns the sum read (kept, so the loop is not removed). */
static double stream_pass(double *a, size_t n, int nt, double fill, double *best_r, double *best_w)
{
    const KProbeLeaf *leaf = k_leaves(k_isa())->probe;
    double t0 = now_s(), s = 0;
#pragma omp parallel for num_threads(nt) schedule(static) reduction(+:s)
    for (int t = 0; t < nt; t++) s += leaf->sum(a + n * t / nt, (int64_t)(n * (t + 1) / nt - n * t / nt));
    double t1 = now_s();
#pragma omp parallel for num_threads(nt) schedule(static)
    for (size_t i = 0; i < n; i++) a[i] = fill;
    *best_r = fmin(*best_r, t1 - t0);
    *best_w = fmin(*best_w, now_s() - t1);
    return s;
}

/* The process's CPU seconds (all its threads). */
static double cpu_s(void)
{
    struct timespec c;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c);
    return (double)c.tv_sec + 1e-9 * (double)c.tv_nsec;
}

/* Is the run queue too full for nt threads of ours (br_queue_crowded)?
 * CgProbe.crowded's form. */
static bool queue_crowded(void *arg, int nt)
{
    (void)arg;
    return br_queue_crowded(nt);
}

/* Measures read/write bandwidth and FLOP rates with br_threads() threads:
 * streaming passes (stream_pass), a register-bound multiply-add loop, the row-wise vector-matrix
 * loop and dgemm. About 0.1 s. Returns whether the machine was busy:
 * the run queue held more tasks than the cores left for our threads
 * (queue_crowded, before and after), or the process got less than 85% of
 * its threads' time in the streaming, multiply-add or vector-matrix
 * loops (which keep all nt threads running: a smaller share of the
 * cores means another task took some, and the constants read low). */
static bool measure(void *arg, CgMachine *mc)
{
    (void)arg;
    int nt = br_threads();
    bool busy = queue_crowded(NULL, nt);
    mc->vecmat = 4e9 * (double)br_threads();
    mc->gemm = 8e9 * (double)br_threads();
    size_t n = (size_t)1 << 23;   /* 64 MB per array */
    double *a = br_alloc_aligned(n * sizeof(double));
    mc->read_bw = 8e9;
    mc->write_bw = 4e9;
    mc->flops = 2e9 * (double)br_threads();
    if (!a) return true;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (size_t i = 0; i < n; i++) a[i] = (double)(i & 7);
    double best_r = 1e30, best_w = 1e30, best_f = 1e30, sink = 0;
    double c0 = cpu_s(), w0 = now_s();
    for (int rep = 0; rep < 3; rep++) {
        double s = stream_pass(a, n, nt, (double)rep, &best_r, &best_w);
        double t2 = now_s();
        double f = 0;
#pragma omp parallel num_threads(nt) reduction(+:f)
        {
            double x0 = 1.0, x1 = 1.1, x2 = 1.2, x3 = 1.3, y = 0.999999;
            for (int k = 0; k < (1 << 22); k++) {
                x0 = x0 * y + 1e-9; x1 = x1 * y + 1e-9; x2 = x2 * y + 1e-9; x3 = x3 * y + 1e-9;
            }
            f = x0 + x1 + x2 + x3;
        }
        double t3 = now_s();
        sink += s + f;
        best_f = fmin(best_f, t3 - t2);
    }
    /* the product loops after the streaming ones (the threads are warm
     * then), dgemm last: OpenBLAS's threads spin for a while after a
     * product and would slow what is measured after it */
    double v = measure_vecmat();
    double w1 = now_s(), c1 = cpu_s();
    busy = busy || c1 - c0 < 0.85 * (double)nt * (w1 - w0);
    /* two more streaming passes later on: a slow phase of the memory
     * system (seen on VMs: half the bandwidth for tens of ms, with the
     * cores idle) should not set the constant alone */
    for (int rep = 0; rep < 2; rep++) sink += stream_pass(a, n, nt, (double)rep, &best_r, &best_w);
    br_free_aligned(a);
    double g = measure_gemm();
    busy = busy || queue_crowded(NULL, nt);
    if (v > 0) mc->vecmat = v;
    if (g > 0) mc->gemm = g;
    if (best_r > 0) mc->read_bw = (double)(n * sizeof(double)) / best_r;
    if (best_w > 0) mc->write_bw = (double)(n * sizeof(double)) / best_w;
    if (best_f > 0) mc->flops = 8.0 * (double)(1 << 22) * nt / best_f;
    if (sink == 42.4242) mc->flops += 1;   /* keep the loops */
    return busy;
}

/* Sanitizer builds run the measuring loops several times slower: their
 * constants go to a file of their own. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MACHINE_FILE "machine-%d-san.txt"
#define MACHINE_SAN 1
#else
#define MACHINE_FILE "machine-%d.txt"
#define MACHINE_SAN 0
#endif

/* Machine constants: BRAID_CG_MACHINE="read write flops gemm vecmat"
 * (bytes/s and flop/s; tests pin their plans with it; used as given),
 * else <cachedir>/machine-<threads>.txt, measured and written there on
 * first use; when that file does not exist yet, the prebuilt set's
 * (cache.c) if it is complete. A measurement taken while the machine was
 * busy (see measure), or whose constants break the ratios any machine
 * has (cg_machine_plausible: the streaming read of a machine whose
 * memory other tasks saturate reads low with the cores to itself), reads
 * low, up to 50-fold: the file then counts its measurements (a sixth
 * value), and the next processes measure again and keep each constant's
 * maximum (rates measured on a loaded machine are low, never high),
 * until one measurement was quiet or MEASURE_ROUNDS were merged. The
 * file then ends in "MEASURE_ROUNDS q": q = 1, a quiet measurement is in
 * it (final); q <= 0, every one was busy: a later process that finds the
 * run queue quiet (queue_crowded, a cheap check) measures once more and
 * merges, -q such measurements so far, at most MEASURE_ROUNDS (a machine
 * whose quiet measurements read busy, say with steal time, stops
 * measuring then). A file of 5 values (written before the seventh value existed)
 * is trusted if it is plausible, also against the prebuilt set's
 * constants (measured on this machine when braid was built: a constant
 * below half of the set's is suspect), and otherwise treated as busy.
 * Whatever is used is bounded by cg_machine_bound. */
#define MEASURE_ROUNDS 4

static bool mc_valid(const CgMachine *mc)
{
    return mc->read_bw > 0 && mc->write_bw > 0 && mc->flops > 0 && mc->gemm > 0 && mc->vecmat > 0;
}

/* The plausible ratios of the constants: each is at least fac times
 * another (low: rates of a busy machine read low, never high). Wide
 * enough for every machine braid runs on: dgemm is never slower than
 * the scalar multiply-add chain (1 flop a cycle a thread) and at most
 * 48 times faster (AVX-512, two FMA ports); a DRAM stream reads at least
 * 1/4 byte per scalar flop (a 128-core server reads ~1 byte a flop) and
 * at most 64 (one core of a laptop with wide memory); writes at least
 * 1/8 of reads; the row-wise product loop (SIMD) at least 1/4 of the
 * scalar chain and, outside sanitizer builds (which instrument it but
 * not OpenBLAS), 1/16 of dgemm. */
typedef struct McRatio {
    size_t lo, by;   /* offsetof the bounded constant, of the other */
    double fac;
} McRatio;

static const McRatio mc_ratios[] = {
    {offsetof(CgMachine, gemm), offsetof(CgMachine, flops), 1.0},
    {offsetof(CgMachine, flops), offsetof(CgMachine, gemm), 1.0 / 48},
    {offsetof(CgMachine, read_bw), offsetof(CgMachine, flops), 0.25},
    {offsetof(CgMachine, flops), offsetof(CgMachine, read_bw), 1.0 / 64},
    {offsetof(CgMachine, write_bw), offsetof(CgMachine, read_bw), 0.125},
    {offsetof(CgMachine, vecmat), offsetof(CgMachine, flops), 0.25},
#if !MACHINE_SAN
    {offsetof(CgMachine, vecmat), offsetof(CgMachine, gemm), 1.0 / 16},
#endif
};

static double *mc_at(CgMachine *mc, size_t off) { return (double *)((char *)mc + off); }

/* Do mc's constants keep the plausible ratios, and (prebuilt not NULL)
 * is none below half of prebuilt's? */
bool cg_machine_plausible(const CgMachine *mc, const CgMachine *prebuilt)
{
    CgMachine m = *mc;
    for (size_t i = 0; i < sizeof mc_ratios / sizeof mc_ratios[0]; i++)
        if (*mc_at(&m, mc_ratios[i].lo) < mc_ratios[i].fac * *mc_at(&m, mc_ratios[i].by)) return false;
    if (prebuilt)
        for (size_t off = offsetof(CgMachine, read_bw); off <= offsetof(CgMachine, vecmat); off += sizeof(double))
            if (*mc_at(&m, off) < 0.5 * *mc_at((CgMachine *)prebuilt, off)) return false;
    return true;
}

/* Raises each constant of mc that is below a plausible ratio to another
 * to that bound (the low one is the suspect: load only lowers rates);
 * the bounds form no cycle above 1, so a few passes settle them. */
void cg_machine_bound(CgMachine *mc)
{
    for (int pass = 0; pass < 4; pass++)
        for (size_t i = 0; i < sizeof mc_ratios / sizeof mc_ratios[0]; i++) {
            double *lo = mc_at(mc, mc_ratios[i].lo), b = mc_ratios[i].fac * *mc_at(mc, mc_ratios[i].by);
            if (*lo < b) *lo = b;
        }
}

/* Is a machine file's state (k values read, its rounds and quiet
 * fields; see cg_machine_with) final: a quiet measurement is in it, or
 * MEASURE_ROUNDS busy ones on a quiet run queue after it had settled? */
static bool machine_final(int k, int rounds, int quiet)
{
    return k >= 7 && rounds >= MEASURE_ROUNDS && (quiet == 1 || quiet <= -MEASURE_ROUNDS);
}

/* The complete constants of the prebuilt set's folder (measured when it
 * was built, on this machine: its cache keys name the CPU), if any: a
 * final file, or one of 5 values (older builds), bounded. A file that is
 * still settling, or settled busy ("4 0": every measurement of the
 * build's runs was busy, flops 6.6x below the quiet ones in one set made
 * at load 20), is not complete: a cold cache measures for itself. */
static bool prebuilt_machine(const char *prebuilt, CgMachine *mc)
{
    if (!prebuilt) return false;
    char path[1200];
    snprintf(path, sizeof path, "%s/" MACHINE_FILE, prebuilt, br_threads());
    FILE *f = fopen(path, "r");
    if (!f) return false;
    CgMachine m = {0};
    int rounds = 0, quiet = 0;
    int k = fscanf(f, "%lf %lf %lf %lf %lf %d %d", &m.read_bw, &m.write_bw, &m.flops, &m.gemm, &m.vecmat, &rounds,
                   &quiet);
    fclose(f);
    if (k < 5 || !mc_valid(&m) || (k > 5 && !machine_final(k, rounds, quiet))) return false;
    cg_machine_bound(&m);
    *mc = m;
    return true;
}

/* Writes the constants with their state (see cg_machine) through a
 * temporary file, so readers see the old file or the new one. */
static void machine_write(const char *path, const CgMachine *mc, int rounds, int q)
{
    char tmp[1300];
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) return;
    fprintf(f, "%.6g %.6g %.6g %.6g %.6g", mc->read_bw, mc->write_bw, mc->flops, mc->gemm, mc->vecmat);
    if (rounds < MEASURE_ROUNDS) fprintf(f, " %d", rounds);
    else fprintf(f, " %d %d", MEASURE_ROUNDS, q);
    fprintf(f, "\n");
    fclose(f);
    chmod(tmp, 0600);
    if (rename(tmp, path)) remove(tmp);
}

void cg_machine_with(const char *cachedir, const char *prebuilt, const CgProbe *probe, CgMachine *mc)
{
    const char *pin = getenv("BRAID_CG_MACHINE");
    if (pin && sscanf(pin, "%lf %lf %lf %lf %lf", &mc->read_bw, &mc->write_bw, &mc->flops, &mc->gemm,
                      &mc->vecmat) == 5 && mc_valid(mc))
        return;
    char path[1200] = "";
    CgMachine old = {0}, pre;
    bool have_pre = prebuilt_machine(prebuilt, &pre);
    int rounds = 0, quiet = 0, k = 0;
    if (cachedir) {
        snprintf(path, sizeof path, "%s/" MACHINE_FILE, cachedir, br_threads());
        FILE *f = fopen(path, "r");
        if (f) {
            /* (files of 3 values, without the product rates, are
             * measured again and rewritten) */
            k = fscanf(f, "%lf %lf %lf %lf %lf %d %d", &old.read_bw, &old.write_bw, &old.flops, &old.gemm,
                       &old.vecmat, &rounds, &quiet);
            fclose(f);
            if (k < 5 || !mc_valid(&old)) k = rounds = 0;
        }
    }
    if (k == 5) {
        /* a file of 5 values: trusted if plausible, else settled busy */
        if (cg_machine_plausible(&old, have_pre ? &pre : NULL)) { *mc = old; return; }
        rounds = MEASURE_ROUNDS;
    }
    bool settled = k == 5 || (k >= 6 && rounds >= MEASURE_ROUNDS);
    if (k < 7) quiet = 0;
    if (settled) {
        /* final if a quiet measurement is in it or MEASURE_ROUNDS busy
         * ones on a quiet queue were; else measured again only on a
         * quiet run queue */
        *mc = old;
        cg_machine_bound(mc);
        if (machine_final(k, rounds, quiet) || probe->crowded(probe->arg, br_threads())) return;
    }
    /* a cold cache measures nothing on the critical path */
    if (!k && !(path[0] && access(path, F_OK) == 0) && have_pre) { *mc = pre; return; }
    bool busy = probe->measure(probe->arg, mc);
    /* a quiet measurement with implausible ratios is busy all the same:
     * the cores were ours, the memory system (say) was not */
    busy = busy || !cg_machine_plausible(mc, NULL);
    if (k >= 5) {
        mc->read_bw = fmax(mc->read_bw, old.read_bw);
        mc->write_bw = fmax(mc->write_bw, old.write_bw);
        mc->flops = fmax(mc->flops, old.flops);
        mc->gemm = fmax(mc->gemm, old.gemm);
        mc->vecmat = fmax(mc->vecmat, old.vecmat);
    }
    rounds = busy ? (rounds < MEASURE_ROUNDS ? rounds + 1 : MEASURE_ROUNDS) : MEASURE_ROUNDS;
    if (path[0]) machine_write(path, mc, rounds, !busy ? 1 : settled ? quiet - 1 : 0);
    cg_machine_bound(mc);
}

CgProbe cg_machine_probe(void)
{
    return (CgProbe){measure, queue_crowded, NULL};
}

void cg_machine(const char *cachedir, const char *prebuilt, CgMachine *mc)
{
    const CgProbe probe = cg_machine_probe();
    cg_machine_with(cachedir, prebuilt, &probe, mc);
}

/* ---- partitions ---- */

static int uf_find(int *p, int x)
{
    while (p[x] != x) { p[x] = p[p[x]]; x = p[x]; }
    return x;
}

static void add_int(int **v, int *n, int x)
{
    int *nv = br_realloc(*v, (size_t)(*n + 1) * sizeof(int));
    if (!nv) return;
    *v = nv;
    (*v)[(*n)++] = x;
}

static bool has_int(const int *v, int n, int x)
{
    for (int i = 0; i < n; i++) if (v[i] == x) return true;
    return false;
}

/* Templates of the entries at hop id; with valid_only, those that could
 * end (be a root) there: an Outer entry invalid at a consumer (an
 * operation that maps zeros of the driver to non-zeros, W * (U %*% t(V))
 * - X) does not continue the input's valid Outer plan there, so the input
 * is a template switch (an interesting point) all the same. */
static uint32_t type_mask(const Memo *m, int id, bool valid_only)
{
    MGroup *g = m->g[id];
    uint32_t t = 0;
    for (int i = 0; g && i < g->n; i++)
        if (!valid_only || g->e[i].closed != CS_OPEN_INVALID) t |= 1u << g->e[i].type;
    return t;
}

/* Adds the interesting point (consumer cid, input hid) to p once. */
static void add_point(Part *p, int cid, int hid, bool stitch)
{
    for (int t = 0; t < p->npts; t++)
        if (p->pts[t].c == cid && p->pts[t].h == hid) return;
    Point *np2 = br_realloc(p->pts, (size_t)(p->npts + 1) * sizeof *np2);
    if (!np2) return;
    p->pts = np2;
    p->pts[p->npts++] = (Point){cid, hid, stitch};
}

/* Stitch points of p (Point; docs/codegen.md, "CPU stitching"): a
 * member c whose group holds Row, Cell or MAgg entries reads, unfused,
 * a row vector h outside the partition that is a stitchable expression
 * of column aggregates (select.c cg_pre_build) of a partition input X.
 * Whether the operator covering c computes h inside (stitching, with
 * redundancy where h has other consumers) or reads it materialized is
 * then a choice MPSkipEnum enumerates and getPlanCost prices. */
static void add_stitch_points(const Memo *m, Part *p)
{
    if (!cg_stitch_allowed(NULL)) return;
    unsigned tpl = (1u << T_ROW) | (1u << T_CELL) | (1u << T_MAGG);
    for (int k = 0; k < p->nh; k++) {
        int cid = p->hops[k];
        const Hop *c = m->hop[cid];
        if (!(type_mask(m, cid, false) & tpl) || !cg_stitch_allowed(c)) continue;
        for (int i = 0; i < c->nin; i++) {
            Hop *h = c->in[i], *X = NULL, *hs[SPOOF_PREMAX];
            SpPre e = {0};
            int nh = 0;
            if (!h || p->in[h->id] || h->dt != DT_MATRIX || h->rows != 1) continue;
            if (cg_pre_build(h, &X, &e, hs, &nh) < 0 || !X || !has_int(p->inputs, p->ninputs, X->id)) continue;
            add_point(p, cid, h->id, true);
        }
    }
}

/* Plan partitions of m: connected components of fusion references, with
 * roots, inputs, materialization points and interesting points (caller
 * frees with parts_free). */
Part *cg_partitions(const Memo *m, int *nparts)
{
    int n = m->nid;
    int *uf = br_malloc((size_t)n * sizeof(int));
    int *pid = br_malloc((size_t)n * sizeof(int));
    *nparts = 0;
    if (!uf || !pid) { free(uf); free(pid); return NULL; }
    for (int i = 0; i < n; i++) { uf[i] = i; pid[i] = -1; }
    for (int k = 0; k < m->norder; k++) {
        const Hop *h = m->order[k];
        MGroup *g = m->g[h->id];
        for (int e = 0; g && e < g->n; e++)
            for (int i = 0; i < g->e[e].nin; i++)
                if (g->e[e].ref[i] >= 0) uf[uf_find(uf, h->id)] = uf_find(uf, g->e[e].ref[i]);
    }
    int np = 0;
    for (int k = 0; k < m->norder; k++) {
        const Hop *h = m->order[k];
        MGroup *g = m->g[h->id];
        if (!g || !g->n) continue;
        int r = uf_find(uf, h->id);
        if (pid[r] < 0) pid[r] = np++;
    }
    Part *ps = br_calloc((size_t)BR_MAX(np, 1), sizeof *ps);
    if (!ps) { free(uf); free(pid); return NULL; }
    for (int k = 0; k < m->norder; k++) {
        const Hop *h = m->order[k];
        MGroup *g = m->g[h->id];
        if (!g || !g->n) continue;
        Part *p = &ps[pid[uf_find(uf, h->id)]];
        add_int(&p->hops, &p->nh, h->id);
    }
    for (int q = 0; q < np; q++) {
        Part *p = &ps[q];
        p->in = br_calloc((size_t)n, 1);
        if (!p->in) continue;
        for (int k = 0; k < p->nh; k++) p->in[p->hops[k]] = 1;
        /* referenced hops, roots, inputs */
        char *refd = br_calloc((size_t)n, 1);
        for (int k = 0; k < p->nh && refd; k++) {
            MGroup *g = m->g[p->hops[k]];
            for (int e = 0; e < g->n; e++)
                for (int i = 0; i < g->e[e].nin; i++)
                    if (g->e[e].ref[i] >= 0) refd[g->e[e].ref[i]] = 1;
        }
        for (int k = 0; k < p->nh; k++) {
            int id = p->hops[k];
            const Hop *h = m->hop[id];
            /* roots: never referenced, or needed outside the partition */
            bool outside = m->out[id];
            for (int u = 0; u < m->npar[id] && !outside; u++) outside = !p->in[m->par[id][u]->id];
            if ((refd && !refd[id]) || outside) add_int(&p->roots, &p->nroots, id);
            for (int i = 0; i < h->nin; i++) {
                const Hop *in = h->in[i];
                if (in && !p->in[in->id] && !has_int(p->inputs, p->ninputs, in->id))
                    add_int(&p->inputs, &p->ninputs, in->id);
            }
        }
        /* interesting points: consumers of materialization points and
         * template switches, over fusion references */
        for (int k = 0; k < p->nh; k++) {
            int cid = p->hops[k];
            const Hop *c = m->hop[cid];
            MGroup *g = m->g[cid];
            for (int i = 0; i < c->nin; i++) {
                const Hop *h = c->in[i];
                if (!h || !p->in[h->id]) continue;
                bool refs = false;
                for (int e = 0; e < g->n && !refs; e++) refs = i < g->e[e].nin && g->e[e].ref[i] == h->id;
                if (!refs) continue;
                bool mp = m->nuse[h->id] > 1;
                bool sw = (type_mask(m, h->id, false) & ~type_mask(m, cid, true)) != 0;
                if (!mp && !sw) continue;
                add_point(p, cid, h->id, false);
            }
        }
        add_stitch_points(m, p);
        free(refd);
    }
    free(uf);
    free(pid);
    *nparts = np;
    return ps;
}

void parts_free(Part *ps, int n)
{
    for (int i = 0; ps && i < n; i++) {
        free(ps[i].hops); free(ps[i].in); free(ps[i].roots); free(ps[i].inputs); free(ps[i].pts);
    }
    free(ps);
}

/* ---- entries valid under an assignment ---- */

/* Is the point c -> h materialized? Visits only the points of consumer c
 * (an index built by cost_init), so it is O(inputs of c). */
static bool point_cut(const CostCtx *x, int c, int h)
{
    for (int t = x->pt_first[c]; t >= 0; t = x->pt_next[t])
        if (x->cut[t] && x->p->pts[t].h == h) return true;
    return false;
}

static bool entry_ok(const CostCtx *x, const Hop *h, const MEntry *e)
{
    for (int i = 0; i < e->nin; i++)
        if (e->ref[i] >= 0 && point_cut(x, h->id, e->ref[i])) return false;
    return true;
}

static bool entry_ok_cb(const void *x, const Hop *h, const MEntry *e) { return entry_ok(x, h, e); }

/* Is template t banned at h (the greedy pass of mpskip.c)? */
static bool banned(const CostCtx *x, const Hop *h, TplType t)
{
    return x->ban && t < T__N && (x->ban[h->id] >> t) & 1;
}

/* Does e reference an input whose entries usable by e's template are all
 * banned (so e cannot fuse it)? Such entries are dropped like entries
 * across a materialized point: the alternatives without that reference
 * (a Cell plan over the unfused product) compete instead. */
bool cg_dead_ref(const Memo *m, const uint8_t *ban, const MEntry *e)
{
    for (int i = 0; ban && i < e->nin; i++) {
        int r = e->ref[i];
        if (r < 0 || !ban[r]) continue;
        if ((ban[r] >> e->type) & 1) return true;   /* its own template cannot continue there */
        const MGroup *g = m->g[r];
        bool live = false;
        for (int k = 0; g && k < g->n && !live; k++) {
            const MEntry *ie = &g->e[k];
            if (ie->closed == CS_CLOSED_VALID || ie->closed == CS_CLOSED_INVALID) continue;
            live = memo_compatible(e->type, ie->type) && !((ban[r] >> ie->type) & 1);
        }
        if (!live) return true;
    }
    return false;
}

static MEntry *best_ok(const CostCtx *x, const Hop *h, int consumer);

/* Does the Outer entry e at h still reach an outer product under the
 * current cut and bans (h is one, or a fused input has a usable Outer
 * entry)? An Outer operator cut off from its outer product has no valid
 * CPlan, so such an entry is not a candidate: when the greedy pass bans
 * Row at `d %*% W`, the Cell entry over the unfused product competes
 * instead of an Outer entry of `d %*% W * (1 - A^2)` whose outer product
 * lies behind a materialized A. */
static bool outer_live(const CostCtx *x, const Hop *h, const MEntry *e)
{
    if (tpl_outer_mm(h)) return true;
    for (int i = 0; i < e->nin && i < h->nin; i++)
        if (e->ref[i] >= 0 && h->in[i] && best_ok(x, h->in[i], T_OUTER)) return true;
    return false;
}

/* sel_best restricted to entries not cut by the assignment (the same
 * ranking, so the final selection after pruning agrees with the costs). */
static MEntry *best_ok(const CostCtx *x, const Hop *h, int consumer)
{
    MGroup *g = x->m->g[h->id];
    if (!g) return NULL;
    size_t slot = (size_t)h->id * (T__N + 1) + (size_t)consumer;
    if (x->bmark[slot] == x->bstamp) return x->bval[slot];
    /* temporarily hide cut entries by ranking among the others */
    MEntry *best = NULL;
    for (int i = 0; i < g->n; i++) {
        MEntry *e = &g->e[i];
        if (!entry_ok(x, h, e) || banned(x, h, e->type) || cg_dead_ref(x->m, x->ban, e)) continue;
        if (e->type == T_OUTER && !outer_live(x, h, e)) continue;
        if (consumer == T__N) { if (!sel_root_valid(e)) continue; }
        else {
            if (e->closed == CS_CLOSED_VALID || e->closed == CS_CLOSED_INVALID) continue;
            if (!memo_compatible((TplType)consumer, e->type)) continue;
        }
        if (!best || sel_better_at(x->m, h, e, best, consumer, entry_ok_cb, x)) best = e;
    }
    x->bmark[slot] = x->bstamp;
    x->bval[slot] = best;
    return best;
}

/* ---- sizes and work of hops ---- */

static double cells(const Hop *h)
{
    if (!h || h->dt != DT_MATRIX || h->rows < 0 || h->cols < 0) return 1;
    return (double)h->rows * (double)h->cols;
}

/* The compressed bytes of h: known (a value at recompilation, a
 * braid-binary .mtd), or a read() the run time compresses estimated
 * from a sample of its file (Hop.cest, docs/cla.md "Estimated at
 * compile time"); 0: not compressed, or not known. */
static double cbytes(const Hop *h)
{
    return h->cbytes > 0 ? h->cbytes : h->cbytes == -1 && h->cest > 0 ? h->cest : 0;
}

static double bytes(const Hop *h)
{
    if (!h) return 0;
    if (h->dt != DT_MATRIX) return 8;
    if (cbytes(h) > 0) return cbytes(h);   /* a compressed value is read compressed */
    /* the expected size: a variable's real bytes at recompilation, else
     * the sizes' estimate (h->mem is the worst case, for memory) */
    if (h->rows < 0 || h->cols < 0) return 8 * cells(h);
    if (h->kind == H_TREAD && h->mem > 0) return h->mem;
    return h->nnz >= 0 ? mb_est_size(h->rows, h->cols, h->nnz) : mb_est_dense(h->rows, h->cols);
}

static double sparsity(const Hop *h)
{
    if (!h || h->dt != DT_MATRIX || h->nnz < 0) return 1;
    double c = cells(h);
    return c > 0 ? (double)h->nnz / c : 1;
}

/* ---- compressed inputs (docs/cla.md, "Cost model") ---- */

static bool cmp_hop(const Hop *h) { return h && h->dt == DT_MATRIX && cbytes(h) > 0; }

/* The column groups of the compressed h, whose entries a row crosses: a
 * product over the groups or a tuple sum does a lookup per row and group
 * (kernels/cla_ops.c). Known at dynamic recompilation (Hop.cgroups);
 * otherwise (a size from a braid-binary .mtd) estimated from its bytes
 * per row, at least 1 and at most its columns: a DDC group codes a row
 * in one or two bytes, an OLE/RLE group holds about two bytes per offset
 * or run, the dictionaries are small beside them. */
static double cla_lookups(const Hop *h)
{
    if (h->cgroups > 0) return h->cgroups;
    if (h->rows <= 0 || h->cols <= 0) return 1;
    return fmin(fmax(cbytes(h) / (double)h->rows, 1), (double)h->cols);
}

/* Does the Row skeleton look up the compressed main input X's products
 * per group entry (a row crosses at most half the columns' groups), or
 * decompress its rows? */
static bool row_looks_up(const Hop *X) { return 2 * cla_lookups(X) <= (double)X->cols; }

/* Seconds of decompressing cells of a compressed block: dec_w cell
 * operations each (codegen/cla_machine.c; 2 when not known). */
static double dec_time(const CgMachine *mc, double cells)
{
    return cells * (mc->cla_dec > 0 ? mc->cla_dec : 2) / mc->flops;
}

/* Seconds of decompressing the compressed h for an operator that reads
 * it dense: none where the run time keeps its decompressed copy
 * (runtime/cla_rt.c decompressed: dense bytes at most 1/16 of the
 * budget; from its second read on, as in a loop: l2svm's labels beside
 * its Row plan), else a decompression per run. */
static double dec_side(const CgMachine *mc, const Hop *h)
{
    return 8 * cells(h) <= br_mem_budget() / 16 ? 0 : dec_time(mc, cells(h));
}

/* Floating-point operations of h as a basic operation. */
static double hop_flops(const Hop *h)
{
    const Hop *a = h->nin > 0 ? h->in[0] : NULL, *b = h->nin > 1 ? h->in[1] : NULL;
    switch (h->kind) {
    case H_UNARY: case H_BINARY: case H_TERNARY:
        /* X ^ 2 is X * X in every kernel (kernels/ew_leaf.c, cplan.c,
         * the AMULET kernel's lowering): priced as pow (20), the unfused
         * and Cell plans of `(1 - A ^ 2)` looked 20x their cost beside a
         * where-loop priced with the multiply, and the autoencoder's
         * small products became slower loops */
        if (h->kind == H_BINARY && h->op == OP_POW && b && b->kind == H_LIT && val_is_numeric(&b->lit) &&
            val_as_double(&b->lit) == 2)
            return op_info[OP_MULT].cost * cells(h);
        return op_info[h->op].cost * cells(h);   /* ops.def's cost column */
    case H_AGG: return cells(a);
    case H_MATMUL:
        if (h->op == OP_MMCHAIN) return 4 * cells(a) * sparsity(a) * (b ? (double)BR_MAX(b->cols, 1) : 1);
        if (h->op == OP_TSMM) return cells(a) * sparsity(a) * (double)BR_MAX(a ? a->cols : 1, 1);
        if (h->op == OP_TSMMA && a && b) return cells(a) * sparsity(a) * (double)(a->cols + 2 * b->cols);
        if (a && b) return 2 * cells(a) * sparsity(a) * (double)BR_MAX(b->cols, 1);
        return cells(h);
    default:
        return cells(h);
    }
}

/* ---- getPlanCost ---- */

#define MAXMM 16

#define CV_SHARE 32

typedef struct CVec {
    TplType type;
    int stamp;
    double flops;          /* elementwise work (mc->flops) */
    double gflops;         /* dense products at dgemm's rate */
    double vflops;         /* products at the row-wise rate (Outer: scaled) */
    double sflops;         /* Row: per-row vector products over a wide
                              dense main (row_wide), at dgemm's rate but
                              after the read of the main, not beside it */
    double xtime;          /* seconds of format conversions */
    int in[64];
    int nin;
    double scale;          /* sparsity of an Outer driver */
    int64_t orows, ocols;  /* Outer: shape of the outer product */
    const Hop *omm;        /* Outer: the outer product */
    const Hop *root;
    const Hop *mm[MAXMM];  /* Row: products, costed once main is known */
    int nmm;
    int nops;              /* operations fused (the plan's size) */
    uint64_t rkey;         /* on the ranks: the region's key (cg_region_key;
                              a Row group's: its roots' summed) */
    double rprice;         /*   its plan's price (cg_dist_root_price) */
    bool rpriced;          /*   rprice set (else: rkey's whole plan) */
    const Hop *pre[CG_MAXPRE];   /* Row/Cell/MAgg: vector inputs the
                              operator may stitch (stitch_cost) */
    int npre;
    int share_stamp[CV_SHARE];   /* hops this operator computes that an */
    double share_flops[CV_SHARE];/*   earlier operator of the plan computed
                              too: that operator's stamp, the hop's work
                              (agg_group counts it once in a MAgg) */
    int nshare;
} CVec;

static bool dense_est(const Hop *h) { return sparsity(h) >= MB_SPARSITY_TURN_POINT; }

static bool is_num_lit(const Hop *h) { return h && h->kind == H_LIT && val_is_numeric(&h->lit); }

/* Sparsity of an Outer driver: its estimate, or 1 where the estimate is
 * unknown but the producer maps zeros to non-zeros (1 - X, exp(X), X + 2:
 * dense in the worst case, as SystemDS's estimates have it), or -1 when
 * nothing is known (a driver of unknown non-zeros). */
static double driver_sparsity(const Hop *h)
{
    if (h->dt == DT_MATRIX && h->nnz >= 0) return sparsity(h);
    double z = NAN;
    if (h->kind == H_UNARY && h->nin == 1) z = ops_unary(h->op, 0);
    else if (h->kind == H_BINARY && h->nin == 2 && is_num_lit(h->in[0]) && h->in[1]->dt == DT_MATRIX)
        z = ops_binary(h->op, val_as_double(&h->in[0]->lit), 0);
    else if (h->kind == H_BINARY && h->nin == 2 && is_num_lit(h->in[1]) && h->in[0]->dt == DT_MATRIX)
        z = ops_binary(h->op, 0, val_as_double(&h->in[1]->lit));
    return !isnan(z) && z != 0 ? 1 : -1;
}

static bool is_trans(const Hop *h)
{
    return h && h->kind == H_REORG && h->op == OP_TRANS && h->nin == 1 && h->in[0];
}

static bool has_input(const CVec *v, int id)
{
    for (int i = 0; i < v->nin; i++) if (v->in[i] == id) return true;
    return false;
}

/* The left operand A of a product A %*% B or t(A) %*% B (a transpose
 * hop or OP_MATMULTL). */
static const Hop *mm_left(const Hop *h)
{
    if (h->op == OP_MATMULTL) return h->in[0];
    return is_trans(h->in[0]) ? h->in[0]->in[0] : h->in[0];
}

/* Is h a product t(A) %*% B (a transpose hop or OP_MATMULTL)? */
static bool mm_transposed(const Hop *h)
{
    return h->op == OP_MATMULTL || is_trans(h->in[0]);
}

/* The main input of Row operator v as cplan.c has it: the left operand
 * of a product that is an input (the deepest such product), else -1. */
static int row_mm_main(const CVec *v)
{
    int main_id = -1;
    for (int k = 0; k < v->nmm; k++) {
        const Hop *a = mm_left(v->mm[k]);
        if (a && a->dt == DT_MATRIX && a->cols > 1 && has_input(v, a->id)) main_id = a->id;
    }
    return main_id;
}

/* Is product h of Row operator v one the skeleton takes per group entry
 * over the compressed main input X (kernels/spoof_row.c,
 * cplan_row_main_prods, cplan_row_main_taggs): X %*% B with B a side
 * matrix (an input, or the transpose of one: kmeans' X %*% t(C)), or
 * t(X) %*% q or t(q) %*% X (in a Row operator an aggregate over the
 * rows, so one of its outputs)? */
static bool row_looked(const CVec *v, const Hop *h, const Hop *X)
{
    const Hop *a = mm_left(h), *b = h->in[1];
    if (!mm_transposed(h))
        return a == X && b && b->dt == DT_MATRIX && (has_input(v, b->id) || (is_trans(b) && has_input(v, b->in[0]->id)));
    return a == X || b == X;
}

/* The groups of compressed X as the lookups see them (kernels/cla.h):
 * recorded at dynamic recompilation (Hop.clook), else cla_lookups DDC
 * groups of small tables (*tmp: their array, to free). False without
 * memory. */
static bool hop_look(const Hop *X, ClaLook *l, ClaLookGroup **tmp)
{
    *tmp = NULL;
    if (X->clook) {
        *l = *X->clook;
        return true;
    }
    int ng = (int)fmax(round(cla_lookups(X)), 1);
    ClaLookGroup *g = *tmp = malloc((size_t)ng * sizeof *g);
    if (!g) return false;
    for (int q = 0; q < ng; q++) g[q] = (ClaLookGroup){CLA_DDC1, 255, (int32_t)BR_MAX(X->cols / ng, 1), 1};
    *l = (ClaLook){X->rows, X->cols, ng, g};
    return true;
}

/* Seconds of a product over compressed X with k columns on the other
 * side (kernels/cla_ops.c: X %*% B gathers, t(X) %*% B and t(A) %*% X
 * scatter per row and group, as the Row skeleton's lookups): its lookups
 * per row, in decompressed cells (cla_look_cells), at dec_time. */
static double look_time(const CgMachine *mc, const Hop *X, int64_t k)
{
    ClaLookGroup *tmp;
    ClaLook l;
    double c = hop_look(X, &l, &tmp) ? cla_look_cells(&l, BR_MAX(k, 1)) : (double)X->cols;
    free(tmp);
    return dec_time(mc, (double)X->rows * c);
}

/* The Row skeleton's time per row over v's compressed main input X, in
 * decompressed cells (kernels/spoof_row.c prod_init, tq_init,
 * look_choose). Where co-coding leaves at most half as many groups as
 * columns (*ruled: row_looks_up), by the skeleton's own rule
 * (kernels/cla.h cla_row_cells): the lookups of the products with side
 * matrices (wp values a row) and of the q rows of the t(X) %*% q roots
 * (wt), plus the row where something else in v reads it, against the
 * decompressed row and those products' multiply-adds, over X's groups
 * (Hop.clook, from dynamic recompilation; else cla_lookups DDC groups of
 * small tables): the cheaper, which covers those products. Otherwise the
 * row decompressed (m cells), its products priced by row_products. */
static double row_look(const CostCtx *x, const CVec *v, const Hop *X, bool *ruled)
{
    bool read = false;
    for (int q = 0; q < x->m->npar[X->id] && !read; q++) {
        const Hop *c = x->m->par[X->id][q];
        if (x->cover[c->id] != v->stamp) continue;
        bool ok = c->kind == H_MATMUL && row_looked(v, c, X);
        if (!ok && is_trans(c)) {   /* t(X) %*% q through a transpose hop */
            ok = true;
            for (int u = 0; u < x->m->npar[c->id] && ok; u++) {
                const Hop *d = x->m->par[c->id][u];
                ok = x->cover[d->id] != v->stamp || (d->kind == H_MATMUL && d->in[0] == c && row_looked(v, d, X));
            }
        }
        read = !ok;
    }
    double m = (double)X->cols;
    if (!(*ruled = row_looks_up(X))) return m;
    int64_t wp = 0, wt = 0;
    for (int k = 0; k < v->nmm; k++) {
        const Hop *h = v->mm[k];
        if (h->op == OP_MMCHAIN || !row_looked(v, h, X)) continue;
        int64_t w = BR_MAX(mm_left(h) == X ? h->cols : h->rows, 1);
        if (mm_transposed(h)) wt += w;
        else wp += w;
    }
    bool look;
    ClaLookGroup *tmp;
    ClaLook l;
    if (!hop_look(X, &l, &tmp)) return m + m * (double)(wp + wt) / 12;   /* as decompressed rows */
    double c = cla_row_cells(&l, wp, wt, read, &look);
    free(tmp);
    return c;
}

/* Row operator v over a compressed main input X, as the skeleton runs it
 * (docs/cla.md "Fused operators", Row): X's rows and the products the
 * skeleton may look up (row_look: the skeleton's rule, its time per row
 * in decompressed cells, dec_time each). Compressed side inputs are
 * decompressed whole (the interpreter: runtime/cla_rt.c). Adds both to
 * v->xtime. */
static void row_cla(const CostCtx *x, CVec *v)
{
    int main_id = row_mm_main(v);
    const Hop *X = main_id >= 0 ? x->m->hop[main_id] : NULL;
    /* BRAID_CG_CLA_ROW=0: no Row operator over a compressed main input
     * (the A/B of bench/cla_row_cpu.sh: the plan the planner would take
     * without it, in the same binary); a finite price, as a plan of
     * infinite cost falls back to fusing all */
    const char *ab = getenv("BRAID_CG_CLA_ROW");
    if (cmp_hop(X) && ab && !strcmp(ab, "0")) {
        v->xtime = 1e6;
        return;
    }
    for (int i = 0; i < v->nin; i++) {
        const Hop *in = x->m->hop[v->in[i]];
        if (in != X && cmp_hop(in)) v->xtime += dec_side(x->mc, in);
    }
    if (!cmp_hop(X)) return;
    bool ruled;
    v->xtime += dec_time(x->mc, (double)X->rows * row_look(x, v, X, &ruled));
}

/* Row operator v over the dense main X: does its per-row loop stream
 * rows too wide to overlap its vector products with the read? A product
 * of X's row with one column (X %*% v: cg_dot; t(X) %*% q: the rank-1
 * update into an accumulator of X's width, 4 rows a pass,
 * cg_outer_add_rows; mmchain: both) runs per row over that row, its side
 * vector or accumulator, 8 bytes a column each, beside the rows
 * prefetched ahead (about 8 KB, cgen_c.c emit_row_prefetch). With a
 * rank-1 update among them and more than ROW_WIDE_BYTES of these vectors
 * its products are priced after the read rather than beside it, and the
 * unfused plan (dgemv, the mmchain kernel: they block rows) wins.
 * Fitted by bench/wide_rows.sh (bench/results/wide-rows-2026-12-01.txt:
 * fused against unfused process CPU, 250..32000 columns, 1 and 2
 * threads, load 25-29; docs/codegen.md "Wide dense rows"): up to 8000
 * columns (125 KB for the update, 187.5 KB for the mmchain) the fused
 * loop lost nowhere beyond noise (update 0.74-1.005x, mmchain 0.74-1.15x,
 * 1.15x one cell); beyond, the update lost at 12000 columns and more
 * (1.10-1.52x) and the mmchain on one thread (1.08-1.33x). 8 KB before
 * the 4-row update kernel. A loop of dot products alone (X %*% v) cost
 * what dgemv does at 500-2000 columns, and products of 2..16 columns run
 * the blocked kernels: neither counts here. */
#define ROW_WIDE_BYTES (192.0 * 1024)

/* The row-wide vectors of products mm[0..n) over X's rows (the row,
 * plus a side vector or accumulator per one-column product, two for an
 * mmchain's), in bytes, when one of them is a rank-1 update; else 0. */
static double row_wide_bytes(const Hop *X, const Hop *const *mm, int n)
{
    double vecs = 1;   /* the row */
    bool update = false;
    for (int k = 0; k < n; k++) {
        const Hop *h = mm[k], *a = mm_left(h);
        if (a != X) continue;
        bool chain = h->op == OP_MMCHAIN && h->in[1]->cols == 1;
        if (chain) vecs += 2;
        else vecs += h->cols == 1;
        update |= chain || (mm_transposed(h) && h->cols == 1);
    }
    return update ? 8.0 * (double)X->cols * vecs : 0;
}

/* An X of unknown non-zeros is taken as dense (the worst case: a sparse
 * row touches only its non-zeros' entries of the vectors), and one whose
 * non-zeros are only an upper bound (hop.h nnz_ub: A * (B > t) has at
 * most A's) as the bound says. Where X is a variable, the DAG is
 * recompiled before it runs with X's real non-zeros (cg_wide_nnz_unknown),
 * so a sparse X keeps its Row operator (L2SVM's gradient over a sparse X:
 * the fused loop ran in about half the unfused plan's time); what stays
 * unknown then is computed in the DAG (elementwise results), dense as a
 * rule. rand's non-zeros are known (the sparsity times the cells). */
static bool row_wide(const CostCtx *x, const CVec *v, const Hop *X)
{
    (void)x;
    if (!X || X->dt != DT_MATRIX || (X->nnz >= 0 && !dense_est(X)) || X->cols <= 0) return false;
    return row_wide_bytes(X, v->mm, v->nmm) > ROW_WIDE_BYTES;
}

bool cg_wide_nnz_unknown(const CgContext *c, const HopDag *d)
{
    if (!c || !c->opt.enabled || c->opt.policy != CG_COST_BASED || !d) return false;
    int n;
    Hop **order = hop_walk(d, &n, NULL);
    if (!order) return false;   /* out of memory: the compile-time plan */
    const Hop **mm = malloc(sizeof *mm * (size_t)(n + 1));
    int nmm = 0;
    for (int i = 0; mm && i < n; i++)
        if (order[i]->kind == H_MATMUL && order[i]->nin >= 2 && order[i]->in[0] && order[i]->in[1])
            mm[nmm++] = order[i];
    bool r = false;
    for (int k = 0; mm && k < nmm && !r; k++) {
        const Hop *X = mm_left(mm[k]);
        r = X && X->kind == H_TREAD && X->dt == DT_MATRIX && (X->nnz < 0 || X->nnz_ub) && X->rows >= 0 && X->cols > 0 &&
            row_wide_bytes(X, mm, nmm) > ROW_WIDE_BYTES;
    }
    free(mm);
    free(order);
    return r;
}

/* Row operator: the work of its products. The main input is, as in
 * cplan.c, the left operand of a product when that is an input (the
 * deepest such product), else none matters. Products of rows computed in
 * the operator or of a dense main run the blocked kernels (up to 16
 * columns: dgemm's rate) or the row-wise loop (wider side matrices);
 * products of a sparse main exploit its sparsity; a sparse input that is
 * not the main is expanded to a dense row per row (seed 000's Row
 * template reads side inputs densely), then multiplied densely. In a
 * multi-output operator (multi: a Row group's merged operator) a product
 * t(P) %*% X of a row vector P computed in the operator, at most 16
 * wide, and the dense main X is a blocked rank update per block of rows
 * (cg_bouter, cplan.c cplan_row_kwidth: k-means' centroid sums), at
 * dgemm's rate whatever X's width; alone it is the row-wise loop. */
static void row_products(const CostCtx *x, const CVec *v, bool multi, double *flops, double *gflops,
                         double *vflops, double *sflops)
{
    int main_id = row_mm_main(v);
    /* a compressed main input (row_cla): its products looked up per
     * group entry, or its rows decompressed into dense ones */
    const Hop *cm = main_id >= 0 && cmp_hop(x->m->hop[main_id]) ? x->m->hop[main_id] : NULL;
    bool ruled = false;   /* the looked-up kind of products priced by row_cla */
    if (cm) row_look(x, v, cm, &ruled);
    bool wide = main_id >= 0 && !cm && row_wide(x, v, x->m->hop[main_id]);
    for (int k = 0; k < v->nmm; k++) {
        const Hop *h = v->mm[k], *a = mm_left(h), *b = h->in[1];
        double kc = (double)BR_MAX(h->cols, 1), c = cells(a);
        bool input = a && has_input(v, a->id);
        if (h->op == OP_MMCHAIN) {
            /* t(X) %*% (w * (X %*% v)): a dot product and a rank-1 update
             * per row of X (cplan.c), as two products */
            kc = (double)BR_MAX(b->cols, 1);
            if (cm || !input || a->id != main_id || !dense_est(a)) *flops += hop_flops(h);
            else if (wide && kc == 1) *sflops += 4 * c;
            else *gflops += 4 * c * kc;
            continue;
        }
        if (wide && input && a->id == main_id && dense_est(a) && kc == 1) {
            *sflops += 2 * c;   /* a dot product or rank-1 update per row */
            continue;
        }
        if (ruled && row_looked(v, h, cm)) continue;
        if (input && a->id == main_id && !cm && !dense_est(a)) {
            *flops += 2 * c * sparsity(a) * kc;
            continue;
        }
        if (input && a->id != main_id && !dense_est(a)) *flops += c;   /* expansion */
        bool rank = multi && !input && mm_transposed(h) && b && b->id == main_id && (cm || dense_est(b)) &&
                    h->rows >= 2 && h->rows <= 16;
        if (rank || (h->cols <= 16 && (!input || a->id == main_id))) *gflops += 2 * c * kc;
        else *vflops += 2 * c * kc;
    }
}

/* Distributed operators (docs/dist.md, seed 000 section 5.5): an
 * operator whose root runs distributed under MPI works on N ranks' rows
 * at once: the inputs with the most rows are partitioned (1/N of their
 * bytes per rank), the others broadcast to every rank ((N-1) copies over
 * the network), and a result with fewer rows (an aggregate, t(X) %*% Y)
 * is reduced from N partials, at the network's rate (dist_net_rate:
 * measured at startup, or sysds.dist.netrate). */

typedef struct DistCost { double net, bcast; } DistCost;

/* Is h's value a distributed matrix at run time, as far as the compile
 * knows: a variable that holds one at dynamic recompilation, or the
 * output of a distributed elementwise operator (it keeps its operands'
 * rows on the ranks)? */
static bool dist_value(const Hop *h)
{
    if (!h || h->dt != DT_MATRIX) return false;
    if (h->kind == H_TREAD) return h->distval;
    return h->exec == EX_DIST && (h->kind == H_UNARY || h->kind == H_BINARY || h->kind == H_TERNARY);
}

/* Does operator v rooted at h run on the ranks: placed there (EX_DIST),
 * or placed locally over an operand distributed at run time (the runtime
 * runs it on the ranks rather than collect the operand,
 * runtime/distexec.c reads_dist)? */
static bool on_ranks(const CostCtx *x, const CVec *v, const Hop *h)
{
    if (!h || !br_dist_available() || dist_size() < 2) return false;
    if (h->exec == EX_DIST) return true;
    for (int i = 0; i < v->nin; i++)
        if (dist_value(x->m->hop[v->in[i]])) return true;
    return false;
}

/* The bytes of v's plan a job sends while the workers do not hold it:
 * its root's price (open_op), or a merged Row group's whole plan. */
static double plan_price(const CVec *v, int nin)
{
    return v->rpriced ? v->rprice : cg_dist_plan_price(v->rkey, v->nops, nin);
}

/* The network seconds and broadcast bytes of a distributed operator with
 * inputs v and output h (out bytes); false when it runs locally. */
static bool dist_cost(const CostCtx *x, const CVec *v, const Hop *h, double out, DistCost *dc)
{
    if (!h || h->exec != EX_DIST || !br_dist_available() || dist_size() < 2) return false;
    int64_t rows = h->rows;
    for (int i = 0; i < v->nin; i++) {
        const Hop *in = x->m->hop[v->in[i]];
        if (in && in->dt == DT_MATRIX && in->rows > rows) rows = in->rows;
    }
    /* broadcast operands: matrices (their bytes and a header) and scalars
     * (a header; a fused operator's literals are in its plan) */
    bool fused = v->type != T__N;
    double bcast = 0;
    int nval = 0, nin = 0;
    for (int i = 0; i < v->nin; i++) {
        const Hop *in = x->m->hop[v->in[i]];
        if (!in || (fused && in->kind == H_LIT)) continue;
        nin++;
        if (in->dt == DT_MATRIX && (in->rows != rows || rows <= 1))
            bcast += in->rows >= 0 && in->cols >= 0 ? dist_wire_bytes(in->rows, in->cols, in->nnz) : bytes(in), nval++;
        else if (in->dt != DT_MATRIX) nval++;
    }
    /* the job's control messages: its header, the values' headers and a
     * fused operator's header, operand descriptors and plan (none when the
     * workers hold the plan of this region's operator: the first job of a
     * plan sends it, later ones, also after a recompilation, find it) */
    double ctrl = dist_ctrl_bytes(1, nval, fused, fused ? nin : 0, fused ? plan_price(v, nin) : 0);
    /* a reduced result's partials are its cells as doubles */
    bool reduce = h->rows != rows || rows <= 1;
    double part = h->dt == DT_MATRIX && h->rows >= 0 && h->cols >= 0 ? 8 * cells(h) : out;
    dc->net = dist_volume(ctrl, bcast, reduce ? part : 0) / dist_net_rate();
    dc->bcast = bcast;
    return true;
}

/* Cell and MAgg operators over compressed inputs (docs/cla.md, "Fused
 * operators"): with one compressed input and every other one a scalar or
 * a row vector the body runs once per distinct value, its elementwise
 * work scaled by the compression ratio (the dictionaries are at most the
 * compressed bytes); otherwise per cell over windows of decompressed
 * rows (kernels/spoof_cell.c): all the work, and every compressed
 * input's cells decompressed (*dec, seconds). */
static void cell_cla(const CostCtx *x, const CVec *v, double *cscale, double *dec)
{
    int nc = 0;
    bool other = false;
    double r = 1;
    for (int i = 0; i < v->nin; i++) {
        const Hop *h = x->m->hop[v->in[i]];
        if (!h || h->dt != DT_MATRIX) continue;
        if (cmp_hop(h)) {
            nc++;
            r = fmin(r, cbytes(h) / (8 * cells(h)));
            *dec += dec_time(x->mc, cells(h));
        } else if (h->rows != 1) other = true;
    }
    if (nc == 1 && !other) { *cscale = r; *dec = 0; }
}

static double op_time(const CostCtx *x, const CVec *v, double out, const Hop *root)
{
    double rd = 0;
    for (int i = 0; i < v->nin; i++) rd += bytes(x->m->hop[v->in[i]]);
    const CgMachine *mc = x->mc;
    /* Cell and MAgg operators over a compressed input run their body once
     * per distinct value (docs/cla.md): their elementwise work shrinks
     * with the compression ratio (the dictionaries are at most the
     * compressed bytes) */
    double cscale = 1, dec = 0;
    if (v->type == T_CELL || v->type == T_MAGG) cell_cla(x, v, &cscale, &dec);
    double comp = v->flops * cscale * v->scale / mc->flops + dec + v->gflops / (mc->gemm > 0 ? mc->gemm : mc->flops) +
                  v->vflops * v->scale / (mc->vecmat > 0 ? mc->vecmat : mc->flops) + v->xtime;
    DistCost dc;
    if (dist_cost(x, v, root, out, &dc)) {
        /* the ranks share the work; broadcasts and reductions cross the
         * network; every rank holds the broadcast inputs whole (the
         * partitioned ones are what the budget sent to the ranks) */
        double n = dist_size();
        if (dc.bcast > br_mem_budget()) return INFINITY;
        return fmax(rd / n / mc->read_bw, comp / n) + v->sflops / n / (mc->gemm > 0 ? mc->gemm : mc->flops) +
               out / n / mc->write_bw + dc.net;
    }
    double gemm = mc->gemm > 0 ? mc->gemm : mc->flops;
    double t = fmax(rd / mc->read_bw, comp) + v->sflops / gemm + out / mc->write_bw;
    /* placed locally over operands distributed at run time (on_ranks):
     * the runtime runs it on the ranks, and its job sends the plan the
     * workers do not hold (-stats prices it at that job); the rest of
     * its costs stay the local ones, as the placement has it */
    if (v->type != T__N && v->rkey) {
        int nin = 0;
        for (int i = 0; i < v->nin; i++) nin += x->m->hop[v->in[i]] && x->m->hop[v->in[i]]->kind != H_LIT;
        t += plan_price(v, nin) / dist_net_rate();
    }
    /* constraint: inputs and output of one operator within the budget */
    if (rd + out > br_mem_budget()) return INFINITY;
    return t;
}

static double rcost(CostCtx *x, const Hop *h, CVec *v);
static double basic_density(const Hop *h);
static double cell_sparsity(CostCtx *x, CVec *v, const Hop *root);
static bool cell_sparse_in(const CostCtx *x, const CVec *v);
static void row_side_sparse(const CostCtx *x, CVec *v);

/* Records the product h inside a fused operator of template t as a
 * candidate of the greedy pass (mpskip.c unfuse). */
static void add_cand(CostCtx *x, const Hop *h, TplType t)
{
    if (!x->cand || x->ncand >= x->m->nid) return;
    int c = h->id * T__N + (int)t;
    for (int i = 0; i < x->ncand; i++) if (x->cand[i] == c) return;
    x->cand[x->ncand++] = c;
}

/* Multi-output Row operators (select.c cg_merge_rows): Row operators
 * aggregating over the rows of the same main input that do not depend on
 * each other run as one operator. The plan's first such operator opens a
 * group; each later member costs what it adds to the group's merged
 * operator: the union of inputs (the main read once) and of products,
 * the larger elementwise work (their bodies mostly share it: a lower
 * bound of the union), the outputs' sum. Members read the same inputs,
 * as cg_merge_rows requires. */
#define RG_MAX 8

static void add_input(CVec *v, int id);

typedef struct RowGroup {
    int main;              /* hop id of the main input */
    CVec v;                /* merged operator (products not yet costed) */
    double out, t;         /* its output bytes and time */
    const Hop *roots[CG_MAXOUT];
    int nroots;
} RowGroup;

static bool row_agg_hop(const Hop *h)
{
    if (h->kind == H_AGG) return h->dir == DIR_COL || h->dir == DIR_FULL;
    return h->kind == H_MATMUL && h->op == OP_MATMULTL;
}

/* The main input of a Row operator: the matrix input of most cells. */
static int row_main(const CostCtx *x, const CVec *v)
{
    int best = -1;
    double bc = -1;
    for (int i = 0; i < v->nin; i++) {
        const Hop *in = x->m->hop[v->in[i]];
        if (in && in->dt == DT_MATRIX && cells(in) > bc) { bc = cells(in); best = in->id; }
    }
    return best;
}

static bool hop_reaches(const Hop *from, const Hop *to, int *mark, int stamp)
{
    if (from == to) return true;
    if (mark[from->id] == stamp) return false;
    mark[from->id] = stamp;
    for (int i = 0; i < from->nin; i++)
        if (from->in[i] && hop_reaches(from->in[i], to, mark, stamp)) return true;
    return false;
}

static bool group_independent(CostCtx *x, const RowGroup *g, const Hop *h)
{
    for (int k = 0; k < g->nroots; k++) {
        if (hop_reaches(h, g->roots[k], x->rmark, ++x->rstamp)) return false;
        if (hop_reaches(g->roots[k], h, x->rmark, ++x->rstamp)) return false;
    }
    return true;
}

/* Do a and b read the same inputs (cg_merge_rows merges only such)? */
static bool same_vec_inputs(const CVec *a, const CVec *b)
{
    if (a->nin != b->nin) return false;
    for (int i = 0; i < b->nin; i++) if (!has_input(a, b->in[i])) return false;
    return true;
}

/* Time of Row operator v rooted at h (t alone): what it adds to its
 * group. */
static double row_group(CostCtx *x, const CVec *v, double ew, double out, const Hop *h, double t)
{
    RowGroup *gs = x->rgroups;
    if (!gs || !row_agg_hop(h)) return t;
    int main = row_main(x, v);
    if (main < 0) return t;
    for (int i = 0; i < x->nrgroups; i++) {
        RowGroup *g = &gs[i];
        if (g->main != main || g->nroots >= CG_MAXOUT || !same_vec_inputs(&g->v, v) || !group_independent(x, g, h))
            continue;
        CVec m = g->v;
        m.rkey += v->rkey;   /* the merged operator's (cg_dist_note_plan) */
        m.rpriced = false;
        for (int k = 0; k < v->nin; k++) add_input(&m, v->in[k]);
        for (int k = 0; k < v->nmm && m.nmm < MAXMM; k++) {
            bool dup = false;
            for (int q = 0; q < m.nmm; q++) dup |= m.mm[q] == v->mm[k];
            if (!dup) m.mm[m.nmm++] = v->mm[k];
        }
        m.flops = fmax(m.flops, ew);
        m.xtime = fmax(m.xtime, v->xtime);
        g->v = m;
        row_products(x, &m, true, &m.flops, &m.gflops, &m.vflops, &m.sflops);
        double tm = op_time(x, &m, g->out + out, h);
        double add = fmax(0, tm - g->t);
        g->out += out;
        g->t = tm;
        g->roots[g->nroots++] = h;
        return add;
    }
    if (x->nrgroups < RG_MAX) {
        RowGroup *g = &gs[x->nrgroups++];
        g->main = main;
        g->v = *v;
        g->v.flops = ew;
        g->v.gflops = g->v.vflops = g->v.sflops = 0;
        g->out = out;
        g->t = t;
        g->roots[0] = h;
        g->nroots = 1;
    }
    return t;
}

/* Cell full aggregates that select.c's form_magg merges into one MAgg
 * operator (equal iteration shape, a shared matrix input, no dependency
 * between them). As for Row groups, the plan's first such operator opens
 * a group and each later member costs what it adds to the merged
 * operator: the union of inputs (each read once), its elementwise work
 * without the hops a member of the group computes too (the MAgg body
 * computes them once), the outputs' sum. Before, each aggregate was
 * priced alone: l2svm's line search, two sums over `out = 1 - Y * (Xw +
 * s * Xd)`, counted out's work and reads twice, and the plan that wrote
 * out to memory first looked cheaper than the one MAgg pass. */
typedef struct AggGroup {
    int64_t rows, cols;    /* the aggregates' iteration shape */
    CVec v;                /* merged operator */
    double out, t;         /* its output bytes and time */
    const Hop *roots[CG_MAXOUT];
    int stamps[CG_MAXOUT]; /* the members' CVec stamps */
    int nroots;
} AggGroup;

static bool shares_matrix_input(const CostCtx *x, const CVec *a, const CVec *b)
{
    for (int i = 0; i < b->nin; i++) {
        const Hop *in = x->m->hop[b->in[i]];
        if (in && in->dt == DT_MATRIX && has_input(a, b->in[i])) return true;
    }
    return false;
}

static double agg_group(CostCtx *x, const CVec *v, double out, const Hop *h, double t)
{
    AggGroup *gs = x->agroups;
    if (!gs || h->kind != H_AGG || h->dir != DIR_FULL || h->nin < 1 || !h->in[0]) return t;
    const Hop *a = h->in[0];
    for (int i = 0; i < x->nagroups; i++) {
        AggGroup *g = &gs[i];
        if (g->rows != a->rows || g->cols != a->cols || g->nroots >= CG_MAXOUT || !shares_matrix_input(x, &g->v, v))
            continue;
        bool indep = true;
        for (int k = 0; k < g->nroots && indep; k++)
            indep = !hop_reaches(h, g->roots[k], x->rmark, ++x->rstamp) &&
                    !hop_reaches(g->roots[k], h, x->rmark, ++x->rstamp);
        if (!indep) continue;
        CVec m = g->v;
        for (int k = 0; k < v->nin; k++) add_input(&m, v->in[k]);
        double shared = 0;
        for (int k = 0; k < v->nshare; k++)
            for (int q = 0; q < g->nroots; q++)
                if (v->share_stamp[k] == g->stamps[q]) { shared += v->share_flops[k]; break; }
        m.flops += fmax(0, v->flops - shared);
        m.gflops += v->gflops;
        m.vflops += v->vflops;
        m.xtime += v->xtime;
        m.rkey += v->rkey;
        m.rpriced = false;
        double tm = op_time(x, &m, g->out + out, h);
        double add = fmax(0, tm - g->t);
        g->v = m;
        g->out += out;
        g->t = tm;
        g->stamps[g->nroots] = v->stamp;
        g->roots[g->nroots++] = h;
        return add;
    }
    if (x->nagroups < RG_MAX) {
        AggGroup *g = &gs[x->nagroups++];
        g->rows = a->rows;
        g->cols = a->cols;
        g->v = *v;
        g->out = out;
        g->t = t;
        g->roots[0] = h;
        g->stamps[0] = v->stamp;
        g->nroots = 1;
    }
    return t;
}

/* The region of the operator of template t being costed, as best_ok and
 * rcost walk it: the root's entry, then the entries it references (an
 * AMULET product's Cell entries). */
typedef struct CostRegion { const CostCtx *x; TplType t; } CostRegion;

static bool cost_fused(const void *arg, const Hop *h, bool root, int i)
{
    const CostRegion *a = arg;
    MEntry *e = best_ok(a->x, h, root ? T__N : (int)a->t);
    return e && i < e->nin && e->ref[i] >= 0 && h->in[i] && best_ok(a->x, h->in[i], e->type);
}

/* The cost model's entries under the current cut (cg_dist_root_price
 * walks a candidate's regions and forms its MAgg operators by them). */
static MEntry *cost_best(const void *arg, const Hop *h, int consumer) { return best_ok(arg, h, consumer); }

/* Cost of computing h materialized (a fused operator or basic op rooted
 * at h). */
static double open_op(CostCtx *x, const Hop *h);

/* The last-level cache's bytes (sysconf; 4 MiB when not known). */
static double llc_bytes(void)
{
    static double b;
    if (b == 0) {
        long c = sysconf(_SC_LEVEL3_CACHE_SIZE);
        if (c <= 0) c = sysconf(_SC_LEVEL2_CACHE_SIZE);
        b = c > 0 ? (double)c : 4.0 * 1024 * 1024;
    }
    return b;
}

/* The passes over X of a stitchable expression's aggregates hs[0..nh)
 * (one, two with a variance: kernels/spoof_pre.c's phases). */
int cg_pre_passes(Hop *const *hs, int nh)
{
    for (int t = 0; t < nh; t++)
        if (hs[t]->kind == H_AGG && (hs[t]->op == OP_VAR || hs[t]->op == OP_SD)) return 2;
    return 1;
}

/* The stitch point of consumer c reading h (-1: none). */
static int stitch_point(const CostCtx *x, int c, int h)
{
    for (int t = x->pt_first[c]; t >= 0; t = x->pt_next[t])
        if (x->p->pts[t].stitch && x->p->pts[t].h == h) return t;
    return -1;
}

/* The device's seconds for one pass of a stitched launch over X
 * (docs/gpu.md, "A CSR X in the stitched launch"): a dense X is read
 * once; a CSR X is read in place, each cell (i, j) by a binary search
 * of column j among row i's sorted columns (csr_at): about
 * log2(1 + k) + 1 probes of a 4-byte column index per cell, k the row's
 * expected non-zeros, besides X's own bytes. */
static double dev_pass_time(const Hop *X, double bw)
{
    if (dense_est(X)) return bytes(X) / bw;
    double k = X->rows > 0 ? sparsity(X) * (double)X->cols : 0;
    return (cells(X) * 4 * (log2(1 + k) + 1) + bytes(X)) / bw;
}

/* Is hop h zero where its inputs' zero-ness is za (and zb for a binary
 * op): a sparse-safe unary map of a zero input, a product with one zero
 * factor, a sparse-safe op of two zeros, an op with a literal that maps
 * 0 to 0 (zero_over's and zero_over_reg's rule). */
static bool zero_rule(const Hop *h, bool za, bool zb)
{
    int fl = op_info[h->op].flags;
    if (h->kind == H_UNARY && h->nin == 1) return (fl & OF_SAFE) && za;
    if (h->kind != H_BINARY || h->nin != 2) return false;
    if (fl & OF_MULT) return za || zb;
    if ((fl & OF_SAFE) && za && zb) return true;
    if (za && is_num_lit(h->in[1])) return ops_binary(h->op, 0, val_as_double(&h->in[1]->lit)) == 0;
    if (zb && is_num_lit(h->in[0])) return ops_binary(h->op, val_as_double(&h->in[0]->lit), 0) == 0;
    return false;
}

static bool zero_over(CostCtx *x, const CVec *v, const Hop *h, int d);

/* Is the expression under h, a hop of the fused region whose entry at h
 * is e (its inputs fused where e refers to them, under the current
 * cut), zero wherever input d is zero? zero_over's rule for a region
 * costed apart from the operator at hand (a MAgg partner's). */
static bool zero_over_reg(CostCtx *x, const Hop *h, const MEntry *e, int d, int depth)
{
    if (h->id == d) return true;
    if (!e || depth > 64 || h->nin < 1 || h->nin > 2) return false;
    bool z[2] = {false, false};
    for (int i = 0; i < h->nin; i++) {
        const Hop *in = h->in[i];
        const MEntry *ei = in && i < e->nin && e->ref[i] >= 0 ? best_ok(x, in, e->type) : NULL;
        z[i] = in && (ei ? zero_over_reg(x, in, ei, d, depth + 1) : in->id == d);
    }
    return zero_rule(h, z[0], z[1]);
}

/* Is every other root of the MAgg operator that select.c forms with
 * v's full aggregate (cg_magg_partners; none: true) zero wherever input
 * d is? choose_main takes a driver every root is zero over. */
static bool partners_zero_over(CostCtx *x, const CVec *v, int d)
{
    const Hop *root = v->root, *roots[CG_MAXOUT];
    if (!root || root->kind != H_AGG || root->dir != DIR_FULL) return true;
    int nr = cg_magg_partners(x->m, cost_best, x, root, roots, CG_MAXOUT);
    for (int r = 0; r < nr; r++) {
        const Hop *h = roots[r];
        if (h == root) continue;
        const MEntry *e = best_ok(x, h, T__N), *ec;
        const Hop *cell = h->nin > 0 ? h->in[0] : NULL;
        if (!e || !cell) return false;
        ec = e->nin > 0 && e->ref[0] >= 0 ? best_ok(x, cell, e->type) : NULL;
        if (!(ec ? zero_over_reg(x, cell, ec, d, 0) : cell->id == d)) return false;
    }
    return true;
}

/* The bytes operator v's launch adds by reading the CSR X as a side
 * input (its main input another matrix of X's shape; 0 when X is dense
 * or the main input). The main input: Row's, the input of most cells,
 * first among equals (row_main); Cell/MAgg's, cplan.c choose_main's
 * driver, the sparsest input of the cell expression's shape over whose
 * zeros the expression under v's root is zero (zero_over), and those of
 * the MAgg operator's other roots where v's full aggregate joins one
 * (partners_zero_over), else the first such input (v's inputs in the
 * order rcost met them, for the plan's). The operator's kernel (codegen/cgen_cl.c csr_side_in) then
 * either expands each of X's rows into its scratch (Row; Cell/MAgg off
 * the sparse path: X's dense bytes written, 8 per cell) or, on the
 * sparse path (a CSR main input the expression is zero over), reads the
 * cells it visits by a cursor along X's rows (X's entries read once, no
 * scratch: bytes(X)), in its own launch either way. */
static double csr_side_bytes(CostCtx *x, const CVec *v, const Hop *X)
{
    if (dense_est(X)) return 0;
    if (v->type == T_ROW) return row_main(x, v) != X->id ? 8 * cells(X) : 0;
    const Hop *root = v->root, *cell = root && root->kind == H_AGG && root->nin > 0 ? root->in[0] : root;
    if (!cell) return 0;
    int main = -1, first = -1;
    double best = 2;
    for (int i = 0; i < v->nin; i++) {
        const Hop *in = x->m->hop[v->in[i]];
        if (!in || in->dt != DT_MATRIX || in->rows != cell->rows || in->cols != cell->cols) continue;
        if (first < 0) first = in->id;
        if (sparsity(in) >= best) continue;
        x->zstamp++;
        if (zero_over(x, v, cell, in->id) && partners_zero_over(x, v, in->id)) main = in->id, best = sparsity(in);
    }
    /* the sparse path: a sparse-safe driver held as CSR */
    bool path = main >= 0 && best < MB_SPARSITY_TURN_POINT;
    if (main < 0) main = first;
    if (main < 0 || main == X->id) return 0;
    return path ? bytes(X) : 8 * cells(X);
}

/* The device side of a stitched vector under -gpu (docs/codegen.md,
 * "CPU stitching", "On the device"), priced by the device profile
 * (gpu_profile: launch seconds, device and transfer bandwidth), as
 * exec.c runs it: the vector of hs[0..nh) (aggregates of X and their
 * expression) computed stitched into operator v of x (v NULL: by its
 * own operators). Stitched, the vectors are computed in the operator's
 * own launch (cell_region_gpu for a Cell plan over a dense X: the
 * vectors stay per column, only its passes over X; else the in-launch
 * region, pre_in_launch: its passes over X, dense or CSR (dev_pass_time),
 * and each vector written and read once): no launch of their own, no
 * transfer; a CSR X read as a side input adds its rows' expansion in
 * the operator's launch, or on a sparse main path its cursor's reads
 * (csr_side_bytes; no launch). By their own operators (and under dev_pre,
 * which this does not price: stitched inputs over two matrices or a
 * slice, an operator without OpenCL text) each aggregate and expression
 * operator is a launch of its own, X is read per pass and each vector
 * is written and read. Negative when the device is off (no device
 * side). */
static double dev_vec_time(CostCtx *x, const CVec *v, Hop *const *hs, int nh, const Hop *X)
{
    if (gpu_mode() == GPU_OFF) return -1;
    GpuProfile g = gpu_profile();
    double vec = 0;
    for (int t = 0; t < nh; t++) vec += bytes(hs[t]);
    int passes = cg_pre_passes(hs, nh);
    if (!v) return nh * g.launch_s + passes * bytes(X) / g.bw + 2 * vec / g.bw;
    double t = passes * dev_pass_time(X, g.bw);
    if (v->type == T_CELL && dense_est(X)) return t;
    t += 2 * vec / g.bw;
    t += csr_side_bytes(x, v, X) / g.bw;
    return t;
}

/* The host's time t or the device's d (negative: none), as the run
 * chooses: the device under force, the cheaper one otherwise. */
static double host_or_dev(double t, double d)
{
    if (d < 0) return t;
    return gpu_mode() == GPU_FORCE ? d : fmin(t, d);
}

/* The vector `in` of a stitch point computed by its own operators (its
 * aggregates each read X, from memory when X is larger than half the
 * last-level cache, as stitched; each vector is written and read),
 * once per plan. */
static double alone_cost(CostCtx *x, const Hop *in)
{
    if (x->mat[in->id]) return 0;
    x->mat[in->id] = 1;
    Hop *X = NULL, *hs[SPOOF_PREMAX];
    SpPre e = {0};
    int nh = 0;
    if (cg_pre_build((Hop *)in, &X, &e, hs, &nh) < 0 || !X) return 0;
    const CgMachine *mc = x->mc;
    double fl = 0, vec = 0, rd = 0;
    bool big = bytes(X) > llc_bytes() / 2;
    for (int t = 0; t < nh; t++) {
        fl += hop_flops(hs[t]);
        vec += bytes(hs[t]);
        if (hs[t]->kind == H_AGG && big) rd += cg_pre_passes(&hs[t], 1) * bytes(X);
    }
    double t = fmax(rd / mc->read_bw, fl / mc->flops) + vec / mc->write_bw + vec / mc->read_bw;
    t = host_or_dev(t, dev_vec_time(x, NULL, hs, nh, X));
    x->spent += t;
    return t;
}

/* Is the vector `in` of a stitch point (or a hop of its expression
 * hs[0..nh)) read by anything but the consumers of its stitch points
 * and the expression, or a DAG output? Then its own operators run
 * whatever the stitch points choose. */
static bool needed_elsewhere(const CostCtx *x, const Hop *in, Hop *const *hs, int nh)
{
    for (int t = 0; t < nh; t++) {
        const Hop *h = hs[t];
        if (x->m->out[h->id]) return true;
        for (int q = 0; q < x->m->npar[h->id]; q++) {
            const Hop *c = x->m->par[h->id][q];
            bool ok = h == in ? stitch_point(x, c->id, in->id) >= 0 : false;
            for (int u = 0; u < nh && !ok; u++) ok = hs[u] == c;
            if (!ok) return true;
        }
    }
    return false;
}

/* CPU stitching (docs/codegen.md, "CPU stitching") in getPlanCost: the
 * vector input `in` of operator v, an expression of column aggregates
 * of a matrix X that v reads (select.c cg_pre_build). Through a stitch
 * point left unmaterialized (point): computed inside v, redundantly
 * for each operator that stitches it (its own operators run as well
 * when it is needed elsewhere): its passes over X (one, two with a
 * variance) read X again from memory only when X is larger than half
 * the last-level cache, plus the expression's work; its vectors stay in
 * cache. A partition member (no point; the structural rule of
 * select.c): when every hop of it is read only by v or by the
 * expression and is no DAG output, as above plus one write and read of
 * each of its vectors; otherwise `in` is its own operator. */
static double stitch_cost(CostCtx *x, const CVec *v, const Hop *in)
{
    bool point = !x->p->in[in->id];
    if (!point && x->mat[in->id]) return 0;
    Hop *X = NULL, *hs[SPOOF_PREMAX];
    SpPre e = {0};
    int nh = 0;
    bool ok = cg_pre_build((Hop *)in, &X, &e, hs, &nh) >= 0 && X && has_input(v, X->id);
    if (point && !ok) return alone_cost(x, in);
    for (int t = 0; t < nh && ok && !point; t++) {
        const Hop *h = hs[t];
        ok = !x->m->out[h->id] && x->p->in[h->id] && !x->mat[h->id];
        for (int q = 0; q < x->m->npar[h->id] && ok; q++) {
            const Hop *c = x->m->par[h->id][q];
            bool inside = x->cover[c->id] == v->stamp;
            for (int u = 0; u < nh && !inside; u++) inside = hs[u] == c;
            ok = inside;
        }
    }
    if (!ok) return open_op(x, in);
    const CgMachine *mc = x->mc;
    double fl = 0, vec = 0;
    for (int t = 0; t < nh; t++) {
        const Hop *h = hs[t];
        if (!point) x->mat[h->id] = 1;
        fl += hop_flops(h);
        vec += bytes(h);
    }
    double rd = bytes(X) <= llc_bytes() / 2 ? 0 : cg_pre_passes(hs, nh) * bytes(X);
    double t = fmax(rd / mc->read_bw, fl / mc->flops) + (point ? 0 : vec / mc->write_bw + vec / mc->read_bw);
    t = host_or_dev(t, dev_vec_time(x, v, hs, nh, X));
    x->spent += t;
    if (point && needed_elsewhere(x, in, hs, nh)) t += alone_cost(x, in);
    return t;
}

static double open_op(CostCtx *x, const Hop *h)
{
    if (x->mat[h->id]) return 0;
    x->mat[h->id] = 1;
    CVec v = {.stamp = ++x->stamp, .scale = 1, .root = h};
    MEntry *e = best_ok(x, h, T__N);
    /* an entry without fused inputs runs as a basic operator (select.c) */
    v.type = e && memo_nrefs(e) > 0 ? e->type : T__N;
    double sub = rcost(x, h, &v);
    /* on the ranks (placed there, or locally over operands distributed
     * at run time), a job sends the plan the workers do not hold yet
     * (dist_cost): its region's key finds it */
    if (v.type != T__N && on_ranks(x, &v, h)) {
        int nin = 0;
        for (int i = 0; i < v.nin; i++) nin += x->m->hop[v.in[i]] && x->m->hop[v.in[i]]->kind != H_LIT;
        v.rprice = cg_dist_root_price(x->m, cost_best, x, h, v.nops, nin, &v.rkey);
        v.rpriced = true;
    }
    for (int i = 0; i < v.npre && sub < INFINITY; i++) sub += stitch_cost(x, &v, v.pre[i]);
    if (v.type == T_OUTER) {
        /* sparsity exploitation: driven by the sparsest full input; a
         * dense driver is converted to CSR (12 bytes per cell written and
         * read), and so is a no_agg output back */
        double s = 1;
        const Hop *drv = NULL;
        for (int i = 0; i < v.nin; i++) {
            const Hop *in = x->m->hop[v.in[i]];
            if (in && v.orows > 0 && in->rows == v.orows && in->cols == v.ocols &&
                (!drv || sparsity(in) < s)) {
                s = fmin(s, sparsity(in));
                drv = in;
            }
        }
        v.scale = s;
        /* a driver of unknown non-zeros stays an Outer plan, as before
         * (exec.c's safety net catches a dense one) */
        double ds = drv ? driver_sparsity(drv) : -1;
        if (ds >= 0 && v.omm) add_cand(x, v.omm, T_OUTER);
        if (ds >= MB_SPARSITY_TURN_POINT) {
            double conv = 12 * cells(drv) * s * (1 / x->mc->write_bw + 1 / x->mc->read_bw);
            bool noagg = h->rows == drv->rows && h->cols == drv->cols;
            v.xtime += noagg ? 2 * conv : conv;
        }
    }
    double ew = v.flops;    /* elementwise work, before the products */
    if (v.type == T_ROW) {
        row_side_sparse(x, &v);
        row_cla(x, &v);
        row_products(x, &v, false, &v.flops, &v.gflops, &v.vflops, &v.sflops);
    }
    if (v.type == T_AMULET) {
        /* the loop nest computes the operands' work per (i,k) tile: its
         * compute replaces the elementwise work rcost summed */
        add_cand(x, h, T_AMULET);
        v.flops = v.gflops = v.vflops = v.sflops = 0;
        v.xtime = am_tpl_compute(h, cost_fused, &(CostRegion){x, T_AMULET}, x->mc);
        if (v.xtime == INFINITY) return INFINITY;
    }
    /* constraint: an Outer operator cut off from its outer product has no
     * valid CPlan (cplan.c would leave the whole region unfused) */
    if (v.type == T_OUTER && v.orows <= 0) return INFINITY;
    /* a Row operator writes its matrix output dense (spoof_row.c), then
     * converts a sparse one */
    double out = v.type == T_CELL ? cell_sparsity(x, &v, h)
               : v.type == T_ROW && h->dt == DT_MATRIX ? fmax(bytes(h), 8 * cells(h)) : bytes(h);
    /* a Cell operator that visits every cell of a sparse input (zero
     * nowhere it is: Z * 0.5 + X over two sparse matrices, 250,000 x
     * 1000 at 1%: 2.4 s against 65 ms as two basic operators) is a
     * candidate of the greedy pass (mpskip.c unfuse), which weighs the
     * basic operators' sparse kernels against it */
    if (v.type == T_CELL && v.scale >= 1 && cell_sparse_in(x, &v)) add_cand(x, h, T_CELL);
    double t = op_time(x, &v, out, h);
    if (v.type == T_ROW) t = row_group(x, &v, ew, out, h, t);
    else if (v.type == T_CELL) t = agg_group(x, &v, out, h, t);
    x->spent += t;
    return sub + t;
}

static void add_input(CVec *v, int id)
{
    for (int i = 0; i < v->nin; i++) if (v->in[i] == id) return;
    if (v->nin < 64) v->in[v->nin++] = id;
}

/* Work of h in cost vector v: products by template (unfused dense
 * products at dgemm's rate, Outer products as dot products per cell,
 * Row products deferred to row_products), the rest by hop_flops. */
static void add_work(CostCtx *x, const Hop *h, CVec *v, bool fused_op)
{
    const Hop *a = h->nin > 0 ? h->in[0] : NULL, *b = h->nin > 1 ? h->in[1] : NULL;
    bool mm = h->kind == H_MATMUL && (h->op == OP_MATMUL || h->op == OP_MATMULTL) && a && b;
    /* an mmchain t(X) %*% (w * (X %*% v)) in a Row operator is two of
     * its products (row_products), and a product the greedy pass may
     * take out of it (the mmchain kernel over X) */
    bool chain = h->kind == H_MATMUL && h->op == OP_MMCHAIN && a && b;
    if ((mm || chain) && fused_op && v->type == T_ROW) add_cand(x, h, v->type);
    if ((mm || chain) && v->type == T_ROW && v->nmm < MAXMM) { v->mm[v->nmm++] = h; return; }
    /* the mmchain kernel over a known dense X: one pass over blocks of
     * rows (kernels/mmchain.c), as a dense product */
    if (chain && v->type == T__N && a->nnz >= 0 && dense_est(a) && !cmp_hop(a)) {
        v->gflops += hop_flops(h);
        return;
    }
    if (mm && v->type == T_AMULET) return;   /* open_op: am_tpl_compute */
    if (mm && v->type == T_OUTER && tpl_outer_mm(h)) {
        if (fused_op) v->omm = h;
        v->vflops += 2 * cells(h) * (double)BR_MAX(a->cols, 1);
        return;
    }
    /* over a compressed operand X (X %*% B, t(X) %*% B; t(A) %*% X of a
     * few rows of output, kmeans' t(P) %*% X; a transpose hop of X is an
     * operator of its own, which decompresses): a lookup per row of X,
     * group entry and column of the other side (kernels/cla_ops.c), as
     * the Row skeleton's looked-up products and tuple sums (row_products) */
    if (mm && v->type == T__N && !is_trans(a) && cmp_hop(a) && !cmp_hop(b)) {
        v->xtime += look_time(x->mc, a, h->cols);
        return;
    }
    if (mm && v->type == T__N && cmp_hop(b) && !cmp_hop(mm_left(h)) && mm_transposed(h) && h->rows <= 256) {
        v->xtime += look_time(x->mc, b, h->rows);
        return;
    }
    if (mm && v->type == T__N && dense_est(mm_left(h)) && dense_est(b)) {
        v->gflops += hop_flops(h);
        return;
    }
    /* a basic elementwise operator over a compressed operand and another
     * matrix decompresses it (kernels/cla_ops.c cla_handles: the block
     * with scalars or with itself only) */
    if (v->type == T__N && (h->kind == H_BINARY || h->kind == H_TERNARY) && h->dt == DT_MATRIX) {
        int nm = 0;
        for (int i = 0; i < h->nin; i++) nm += h->in[i] && h->in[i]->dt == DT_MATRIX && (i == 0 || h->in[i] != a);
        for (int i = 0; i < h->nin && nm > 1; i++)
            if (cmp_hop(h->in[i]) && (i == 0 || h->in[i] != a)) v->xtime += dec_side(x->mc, h->in[i]);
    }
    if (h->kind == H_REORG && h->op == OP_TRANS && a) { v->flops += cells(a) * sparsity(a); return; }
    v->flops += v->type == T__N ? hop_flops(h) * basic_density(h) : hop_flops(h);
}

/* Sparsity of h as the kernels see it: 1 for blocks in dense format
 * (a dense block is iterated over all cells, zeros or not). */
static double fmt_sparsity(const Hop *h) { return dense_est(h) ? 1 : sparsity(h); }

/* The share of cells a basic elementwise operator visits: sparse-safe
 * kernels iterate the non-zeros of a sparse operand (X * Y over the
 * sparser one, abs(X) over X's, X + Y over both), the others all cells. */
static double basic_density(const Hop *h)
{
    if ((h->kind != H_UNARY && h->kind != H_BINARY) || h->dt != DT_MATRIX) return 1;
    int fl = op_info[h->op].flags;
    const Hop *a = h->in[0], *b = h->nin > 1 ? h->in[1] : NULL;
    bool ma = a && a->dt == DT_MATRIX, mb = b && b->dt == DT_MATRIX;
    double sa = ma ? fmt_sparsity(a) : 1, sb = mb ? fmt_sparsity(b) : 1;
    if (h->kind == H_UNARY) return (fl & OF_SAFE) ? sa : 1;
    if (fl & OF_MULT) return fmin(ma ? sa : 1, mb ? sb : 1);
    if ((fl & OF_SAFE) && ma && mb) return fmin(1, sa + sb);
    double z = NAN;
    if (ma && is_num_lit(b)) z = ops_binary(h->op, 0, val_as_double(&b->lit));
    if (mb && is_num_lit(a)) z = ops_binary(h->op, val_as_double(&a->lit), 0);
    return z == 0 ? (ma ? sa : sb) : 1;
}

/* Is h (inside the fused operator of v) zero wherever input d is zero?
 * The region's other inputs are unknown values. Answers are memoized per
 * driver (x->zstamp), so shared subexpressions are visited once. */
static bool zero_over(CostCtx *x, const CVec *v, const Hop *h, int d)
{
    if (h->id == d) return true;
    if (x->cover[h->id] != v->stamp) return false;
    if (x->zmark[h->id] == x->zstamp) return x->zval[h->id];
    bool r = false;
    if (h->kind == H_UNARY && h->nin == 1) r = zero_rule(h, zero_over(x, v, h->in[0], d), false);
    else if (h->kind == H_BINARY && h->nin == 2)
        r = zero_rule(h, zero_over(x, v, h->in[0], d), zero_over(x, v, h->in[1], d));
    x->zmark[h->id] = x->zstamp;
    x->zval[h->id] = r;
    return r;
}

/* Cell operator: driven by the sparsest full-size input over whose zeros
 * it is zero (cplan.c's choose_main), its compute scales with that
 * input's non-zeros; otherwise it visits every cell and a no_agg output
 * is written dense, whatever the estimate of the root says. Returns the
 * bytes it writes. */
static double cell_sparsity(CostCtx *x, CVec *v, const Hop *root)
{
    const Hop *cell = root->kind == H_AGG && root->nin > 0 ? root->in[0] : root;
    double best = 2;
    for (int i = 0; i < v->nin; i++) {
        const Hop *in = x->m->hop[v->in[i]];
        if (!in || in->dt != DT_MATRIX || in->rows != cell->rows || in->cols != cell->cols) continue;
        if (fmt_sparsity(in) >= best) continue;
        x->zstamp++;
        if (zero_over(x, v, cell, in->id)) best = fmt_sparsity(in);
    }
    if (best <= 1) {
        v->scale = best;
        return bytes(root);
    }
    return cell == root && root->dt == DT_MATRIX ? 8 * cells(root) : bytes(root);
}

/* Does the operator of v read a sparse matrix input (by its estimate)? */
static bool cell_sparse_in(const CostCtx *x, const CVec *v)
{
    for (int i = 0; i < v->nin; i++) {
        const Hop *in = x->m->hop[v->in[i]];
        if (in && in->dt == DT_MATRIX && in->nnz >= 0 && !dense_est(in)) return true;
    }
    return false;
}

/* A Row operator reads its side inputs densely (seed 000's Row
 * template): a sparse side input of the main input's rows is expanded
 * to a dense copy before the rows run (exec.c; `t(X - Y) %*%
 * rowSums(X)` over sparse 200,000 x 1000 blocks at 1%: X expanded to
 * 1.6 GB, 300 ms against 30-77 ms unfused). Its dense copy is written
 * and read (products of such an input already count their expansion's
 * cells: row_products). */
static void row_side_sparse(const CostCtx *x, CVec *v)
{
    int main_id = row_mm_main(v);
    if (main_id < 0) return;
    const Hop *mh = x->m->hop[main_id];
    for (int i = 0; i < v->nin; i++) {
        const Hop *in = x->m->hop[v->in[i]];
        if (!in || in->id == main_id || in->dt != DT_MATRIX || in->rows != mh->rows || in->cols <= 1 ||
            in->nnz < 0 || dense_est(in) || cmp_hop(in))
            continue;
        v->xtime += 8 * cells(in) * (1 / x->mc->write_bw + 1 / x->mc->read_bw);
    }
}

/* Adds h to the fused operator of cost vector v (following fusion
 * references); returns the costs of materialized inputs computed
 * separately. */
static double rcost(CostCtx *x, const Hop *h, CVec *v)
{
    if (x->cover[h->id] == v->stamp) return 0;
    const int prev = x->cover[h->id];
    x->cover[h->id] = v->stamp;
    if (prev > x->plan_stamp && v->nshare < CV_SHARE) {
        v->share_stamp[v->nshare] = prev;
        v->share_flops[v->nshare++] = hop_flops(h);
    }
    v->nops++;
    MEntry *e = v->type == T__N ? NULL : (h == v->root ? best_ok(x, h, T__N) : best_ok(x, h, v->type));
    if (v->type == T_OUTER && tpl_outer_mm(h)) { v->orows = h->rows; v->ocols = h->cols; }
    add_work(x, h, v, e != NULL);
    double sub = 0;
    for (int i = 0; i < h->nin && sub < INFINITY; i++) {
        const Hop *in = h->in[i];
        if (!in) continue;
        bool fused = e && i < e->nin && e->ref[i] >= 0 && best_ok(x, in, e->type);
        if (fused) { sub += rcost(x, in, v); continue; }
        if (v->type == T_OUTER && in->kind == H_REORG && in->op == OP_TRANS && h->kind == H_MATMUL && i == 1) {
            add_input(v, in->in[0]->id);
            continue;
        }
        add_input(v, in->id);
        /* a row vector the operator may take in by stitching: priced once
         * its inputs are known (open_op, stitch_cost); through a stitch
         * point, only where the assignment leaves it unmaterialized */
        bool stitchable = v->type == T_ROW || v->type == T_CELL || v->type == T_MAGG;
        int sp = x->p->in[in->id] ? -1 : stitch_point(x, h->id, in->id);
        if (sp >= 0 && (x->cut[sp] || !stitchable || v->npre == CG_MAXPRE)) {
            sub += alone_cost(x, in);
            continue;
        }
        if ((sp >= 0 || x->p->in[in->id]) && stitchable && in->dt == DT_MATRIX && in->rows == 1 &&
            v->npre < CG_MAXPRE) {
            bool dup = false;   /* read twice in the operator: stitched once */
            for (int q = 0; q < v->npre; q++) dup |= v->pre[q] == in;
            if (!dup) v->pre[v->npre++] = in;
            continue;
        }
        if (x->p->in[in->id]) sub += open_op(x, in);
        /* partial costing stops between any two operators once the plan
         * costs the bound (seed 000 section 4.4) */
        if (x->spent >= x->bound) return INFINITY;
    }
    return sub;
}

/* getPlanCost: cost of partition p under assignment cut (stops early,
 * returning INFINITY, once the cost exceeds bound). */
double cg_plan_cost(CostCtx *x, const bool *cut, double bound)
{
    x->cut = cut;
    x->ncand = 0;
    x->bstamp++;
    memset(x->mat, 0, (size_t)x->m->nid);
    x->es->evaluated++;
    x->spent = 0;
    x->bound = bound;
    x->nrgroups = 0;
    x->nagroups = 0;
    x->plan_stamp = x->stamp;
    double c = 0;
    for (int r = 0; r < x->p->nroots; r++) {
        c += open_op(x, x->m->hop[x->p->roots[r]]);
        if (c >= bound) return INFINITY;
    }
    return c;
}

/* Lower bound of every plan with at least the points of cut materialized:
 * reading the partition inputs, writing its roots, and one write and one
 * read of every materialized intermediate (seed 4.4, cost-based pruning). */
/* The fewest bytes any operator producing h writes (open_op: its memory
 * estimate, or a Cell operator's 8 bytes a cell, without the block's
 * overhead), so that lower bounds stay below every plan's cost. */
static double least_write(const Hop *h)
{
    double b = bytes(h);
    return h && h->dt == DT_MATRIX ? fmin(b, 8 * cells(h)) : b;
}

double cg_lower_bound(const CostCtx *x, const bool *cut)
{
    double b = x->static_cost;
    for (int t = 0; t < x->p->npts; t++) {
        if (!cut[t]) continue;
        int h = x->p->pts[t].h;
        bool seen = false;
        for (int u = 0; u < t; u++) seen |= cut[u] && x->p->pts[u].h == h;
        if (seen) continue;
        const Hop *hh = x->m->hop[h];
        /* a partition root's write is in the static cost already: only
         * the read by its consumers is added (counting the write twice
         * would prune the plan that materializes a live-out A = X + Y
         * under R = A * Z, which is the cheapest) */
        bool root = false;
        for (int r = 0; r < x->p->nroots && !root; r++) root = x->p->roots[r] == h;
        b += bytes(hh) / x->mc->read_bw + (root ? 0 : least_write(hh) / x->mc->write_bw);
    }
    return b;
}

int cost_init(CostCtx *x, const Memo *m, const CgMachine *mc, const Part *p, EnumStats *es)
{
    memset(x, 0, sizeof *x);
    x->m = m;
    x->mc = mc;
    x->p = p;
    x->es = es;
    x->mat = br_calloc((size_t)m->nid, 1);
    x->cover = br_calloc((size_t)m->nid, sizeof(int));
    x->pt_first = br_malloc((size_t)m->nid * sizeof(int));
    x->pt_next = br_malloc((size_t)BR_MAX(p->npts, 1) * sizeof(int));
    x->cand = br_malloc((size_t)m->nid * sizeof(int));
    x->zmark = br_calloc((size_t)m->nid, sizeof(int));
    x->zval = br_malloc((size_t)m->nid);
    x->bmark = br_calloc((size_t)m->nid * (T__N + 1), sizeof(int));
    x->bval = br_malloc((size_t)m->nid * (T__N + 1) * sizeof(MEntry *));
    x->bstamp = 1;    /* bmark's zeros match no costing */
    x->rgroups = br_calloc(RG_MAX, sizeof(RowGroup));
    x->agroups = br_calloc(RG_MAX, sizeof(AggGroup));
    x->rmark = br_calloc((size_t)m->nid, sizeof(int));
    if (!x->rgroups || !x->agroups || !x->rmark) { cost_free(x); return -1; }
    if (!x->mat || !x->cover || !x->pt_first || !x->pt_next || !x->cand || !x->zmark || !x->zval || !x->bmark ||
        !x->bval) {
        cost_free(x);
        return -1;
    }
    for (int i = 0; i < m->nid; i++) x->pt_first[i] = -1;
    for (int t = p->npts - 1; t >= 0; t--) {
        x->pt_next[t] = x->pt_first[p->pts[t].c];
        x->pt_first[p->pts[t].c] = t;
    }
    double s = 0;
    for (int i = 0; i < p->ninputs; i++) s += bytes(m->hop[p->inputs[i]]) / mc->read_bw;
    for (int i = 0; i < p->nroots; i++) s += least_write(m->hop[p->roots[i]]) / mc->write_bw;
    x->static_cost = s;
    return 0;
}

void cost_free(CostCtx *x)
{
    free(x->mat);
    free(x->cover);
    free(x->pt_first);
    free(x->pt_next);
    free(x->cand);
    free(x->zmark);
    free(x->zval);
    free(x->bmark);
    free(x->bval);
    free(x->rgroups);
    free(x->agroups);
    free(x->rmark);
    x->rgroups = NULL;
    x->agroups = NULL;
    x->rmark = NULL;
    x->bmark = NULL;
    x->bval = NULL;
    x->zmark = NULL;
    x->zval = NULL;
    x->mat = NULL;
    x->cover = NULL;
    x->pt_first = x->pt_next = NULL;
    x->cand = NULL;
}
