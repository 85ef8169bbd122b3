/* gen.c: data generation: seq(), rand(), sample(). rand and sample draw
 * SystemDS's numbers for a seed (LibMatrixDatagen's algorithm step for
 * step, over the generators of base/jrng.h): a rand matrix is cut into
 * blocks of sysds.defaultblocksize (1000) squared, a WELL1024a stream
 * seeded from java.util.Random(seed) gives each block its seed in
 * row-major block order, and each block draws its cells in row-major
 * order from its own generators. Blocks are independent, so row blocks
 * run in parallel and results never depend on the thread count. */
#include "gen.h"

#include "../base/jrng.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

/* ---------------------------------------------------------------- seq */

MB *k_seq(double from, double to, double incr, BrErr *e)
{
    if (!isfinite(from) || !isfinite(to) || !isfinite(incr)) {
        br_err(e, BR_EARG, "seq: invalid arguments (%g, %g, %g)", from, to, incr);
        return NULL;
    }
    if (incr == 0) {
        br_err(e, BR_EARG, "seq: wrong sequence increment: from=%g, to=%g, incr=0", from, to);
        return NULL;
    }
    if ((to > from && incr < 0) || (to < from && incr > 0)) {
        br_err(e, BR_EARG, "seq: wrong sign for increment %g (from %g to %g)",
               incr, from, to);
        return NULL;
    }
    double nd = floor((to - from) / incr + 1e-10) + 1;
    if (!(nd >= 1) || nd > 1e12) {
        br_err(e, BR_EARG, "seq: sequence from %g to %g by %g is too long",
               from, to, incr);
        return NULL;
    }
    int64_t n = (int64_t)nd, nnz = 0;
    MB *c = mb_dense_uninit(n, 1, e);
    if (!c) return NULL;
    #pragma omp parallel for schedule(static) reduction(+:nnz) \
        num_threads(br_threads()) if (br_par((double)n))
    for (int64_t i = 0; i < n; i++) {
        double x = from + (double)i * incr;
        x = incr > 0 ? fmin(x, to) : fmax(x, to);
        c->d[i] = x;
        nnz += x != 0;
    }
    c->nnz = nnz;
    mb_fin_set(c, false);   /* from, to and incr are finite */
    return mb_finish(c, e);
}

/* ------------------------------------------------------------- seeds */

static inline uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

int64_t k_fresh_seed(void)
{
    uint64_t s = 0;
    if (getrandom(&s, sizeof s, 0) != (ssize_t)sizeof s) {
        static uint64_t calls;   /* only perturbs the clock fallback */
        s = mix64((uint64_t)br_now_ns() ^
                  __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED) * 0x9e3779b97f4a7c15ULL);
    }
    return (int64_t)(s & (uint64_t)INT64_MAX);   /* never -1 */
}

/* ------------------------------------------------ value generators */

typedef enum { PDF_UNIFORM, PDF_NORMAL, PDF_POISSON, PDF_CB_UNIFORM, PDF_CB_NORMAL } Pdf;

/* The generator of one block's cell values: SystemDS's
 * UniformPRNGenerator (java.util.Random), NormalPRNGenerator (Box-Muller
 * pairs over java.util.Random, the pair drawn at seeding) or
 * PoissonPRNGenerator (Commons Math's PoissonDistribution over WELL1024a). */
typedef struct {
    Pdf pdf;
    double lambda;
    JRand jr;
    Well w;
    double n1, n2;
    bool second;
} ValGen;

static void normal_pair(ValGen *g)
{
    double u1 = jr_double(&g->jr), u2 = jr_double(&g->jr);
    double v1 = sqrt(-2 * log(u1)), v2 = 2 * M_PI * u2;
    g->n1 = v1 * cos(v2);
    g->n2 = v1 * sin(v2);
}

static void vg_seed(ValGen *g, int64_t seed)
{
    if (g->pdf == PDF_POISSON) { well_seed_long(&g->w, seed); return; }
    jr_seed(&g->jr, seed);
    if (g->pdf == PDF_NORMAL) { normal_pair(g); g->second = false; }
}

/* Commons Math's ExponentialDistribution(1).sample(): Ahrens and
 * Dieter's algorithm SA with the table q_i = sum_{k<=i} ln2^k / k!. */
static double exp_sa_q[32];
static int exp_sa_n;
static pthread_once_t exp_sa_once = PTHREAD_ONCE_INIT;

static void exp_sa_init(void)
{
    double qi = 0, fact = 1;
    for (int i = 1; qi < 1 && exp_sa_n < 32; i++) {
        fact *= i;
        qi += pow(M_LN2, i) / fact;
        exp_sa_q[exp_sa_n++] = qi;
    }
}

static double exp_sample(Well *w)
{
    double a = 0, u = well_double(w);
    while (u < 0.5) { a += exp_sa_q[0]; u *= 2; }
    u += u - 1;
    if (u <= exp_sa_q[0]) return a + u;
    int i = 0;
    double umin = well_double(w);
    do {
        i++;
        double u2 = well_double(w);
        if (u2 < umin) umin = u2;
    } while (i < exp_sa_n - 1 && u > exp_sa_q[i]);
    return a + umin * exp_sa_q[0];
}

/* CombinatoricsUtils.factorialLog: log of the exact factorial below 21,
 * a sum of logs above. */
static double factorial_log(int64_t n)
{
    if (n < 21) {
        double f = 1;
        for (int64_t i = 2; i <= n; i++) f *= (double)i;
        return log(f);
    }
    double s = 0;
    for (int64_t i = 2; i <= n; i++) s += log((double)i);
    return s;
}

/* PoissonDistribution.nextPoisson: products of uniforms below a mean of
 * 40; above, the rejection method of Devroye's book (chapter X.3) with the
 * integer and fractional parts of the mean drawn apart. */
static int64_t next_poisson(Well *w, double mean)
{
    if (mean < 40) {
        double p = exp(-mean), r = 1;
        int64_t n = 0;
        while (n < 1000 * mean) {
            r *= well_double(w);
            if (r >= p) n++;
            else return n;
        }
        return n;
    }
    double lambda = floor(mean), frac = mean - lambda;
    double loglam = log(lambda), loglamfact = factorial_log((int64_t)lambda);
    int64_t y2 = frac < 4.9e-324 ? 0 : next_poisson(w, frac);
    double delta = sqrt(lambda * log(32 * lambda / M_PI + 1)), hd = delta / 2;
    double twolpd = 2 * lambda + delta;
    double a1 = sqrt(M_PI * twolpd) * exp(1 / (8 * lambda));
    double a2 = (twolpd / delta) * exp(-delta * (1 + delta) / twolpd);
    double asum = a1 + a2 + 1, p1 = a1 / asum, p2 = a2 / asum, c1 = 1 / (8 * lambda);
    double x, y, v;
    for (;;) {
        double u = well_double(w);
        if (u <= p1) {
            double n = well_gaussian(w);
            x = n * sqrt(lambda + hd) - 0.5;
            if (x > delta || x < -lambda) continue;
            y = x < 0 ? floor(x) : ceil(x);
            v = -exp_sample(w) - n * n / 2 + c1;
        } else if (u > p1 + p2) {
            y = lambda;
            break;
        } else {
            x = delta + (twolpd / delta) * exp_sample(w);
            y = ceil(x);
            v = -exp_sample(w) - delta * (x + 1) / twolpd;
        }
        int a = x < 0;
        double t = y * (y + 1) / (2 * lambda);
        if (v < -t && a == 0) { y = lambda + y; break; }
        double qr = t * ((2 * y + 1) / (6 * lambda) - 1);
        double qa = qr - t * t / (3 * (lambda + a * (y + 1)));
        if (v < qa) { y = lambda + y; break; }
        if (v > qr) continue;
        if (v < y * loglam - factorial_log((int64_t)(y + lambda)) + loglamfact) {
            y = lambda + y;
            break;
        }
    }
    return y2 + (int64_t)y;
}

static double vg_next(ValGen *g)
{
    switch (g->pdf) {
    case PDF_UNIFORM:
        return jr_double(&g->jr);
    case PDF_NORMAL:
        if (!g->second) { g->second = true; return g->n1; }
        double d = g->n2;
        normal_pair(g);
        g->second = false;
        return d;
    case PDF_POISSON: {
        int64_t k = next_poisson(&g->w, g->lambda);
        return (double)(k < INT32_MAX ? k : INT32_MAX);   /* sample()'s int */
    }
    case PDF_CB_UNIFORM:
    case PDF_CB_NORMAL:
        break;   /* drawn by rand_cb, not cell by cell */
    }
    return 0;
}

/* -------------------------------------------- counter-based (Philox) */

/* SystemDS's PhiloxUniformCBPRNGenerator: Philox4x64 with 10 rounds, the
 * 128-bit key (seed, seed), a 256-bit counter. A call drawing n values
 * from counter c gives value t the word t % 4 of the block at counter
 * c + t / 4, then leaves the counter at c + n / 4 (rounded down: a final
 * partial block's counter is used again by the next call, with the next
 * block's key). Each word w becomes (double) w * 2^-64 + 0.5 (signed, so
 * [0, 1)). */
typedef struct { uint64_t w[4]; } Ctr256;

void k_philox4x64(const uint64_t key[2], const uint64_t ctr[4], uint64_t out[4])
{
    const uint64_t m0 = 0xD2E7470EE14C6C93ULL, m1 = 0xCA5A826395121157ULL;
    uint64_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    uint64_t k0 = key[0], k1 = key[1];
    for (int r = 0; r < 10; r++) {
        unsigned __int128 p0 = (unsigned __int128)m0 * c0, p1 = (unsigned __int128)m1 * c2;
        uint64_t hi0 = (uint64_t)(p0 >> 64), lo0 = (uint64_t)p0;
        uint64_t hi1 = (uint64_t)(p1 >> 64), lo1 = (uint64_t)p1;
        c0 = hi1 ^ c1 ^ k0;
        c2 = hi0 ^ c3 ^ k1;
        c1 = lo1;
        c3 = lo0;
        k0 += 0x9E3779B97F4A7C15ULL;
        k1 += 0xBB67AE8584CAA73BULL;
    }
    out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}

static void ctr_add(Ctr256 *c, uint64_t n)
{
    uint64_t old = c->w[0];
    c->w[0] += n;
    if (c->w[0] >= old) return;   /* no carry */
    for (int i = 1; i < 4 && ++c->w[i] == 0; i++) {}
}

static inline double philox_u01(uint64_t w)
{
    return (double)(int64_t)w * 0x1p-64 + 0.5;
}

/* The n values of a CB_UNIFORM (or, from 2 * ceil(n / 2) uniforms, of a
 * CB_NORMAL: PhiloxNormalCBPRNGenerator's Box-Muller pairs) call from
 * counter c into out. */
static void philox_values(Pdf pdf, uint64_t seed, Ctr256 c, int64_t n, double *out)
{
    int64_t nu = pdf == PDF_CB_NORMAL ? n + n % 2 : n;
    uint64_t w[4];
    double u[4];
    for (int64_t t = 0; t < nu; t += 4) {
        k_philox4x64((const uint64_t[2]){seed, seed}, c.w, w);
        ctr_add(&c, 1);
        for (int q = 0; q < 4; q++) u[q] = philox_u01(w[q]);
        for (int q = 0; q < 4 && t + q < nu; q += pdf == PDF_CB_NORMAL ? 2 : 1) {
            if (pdf == PDF_CB_UNIFORM) { out[t + q] = u[q]; continue; }
            double v1 = sqrt(-2 * log(u[q])), v2 = 2 * M_PI * u[q + 1];
            out[t + q] = v1 * cos(v2);
            if (t + q + 1 < n) out[t + q + 1] = v1 * sin(v2);
        }
    }
}

/* The counter-based pdfs: LibMatrixDatagen.genRandomNumbers on one
 * thread, which fills each (dense, sparsity 1) block from its seed's
 * generator, the counter starting at 0 and carried from block to block in
 * row-major block order (each block advances it by its number of draws /
 * 4, rounded down). SystemDS's multi-threaded rand restarts the counter in
 * each task, so its numbers for a matrix of several blocks depend on its
 * thread count; braid's are those of one thread. The blocks' start
 * counters are known up front, so row blocks run in parallel here. */
static MB *rand_cb(Pdf pdf, int64_t rows, int64_t cols, int64_t blen, const int64_t *seeds,
                   BrErr *e)
{
    int64_t nrb = (rows + blen - 1) / blen, ncb = (cols + blen - 1) / blen;
    MB *c = mb_dense_uninit(rows, cols, e);
    Ctr256 *start = br_malloc((size_t)(nrb * ncb) * sizeof *start);
    if (!c || !start) {
        free(start);
        if (!c) return NULL;
        br_err(e, BR_ENOMEM, "rand: out of memory");
        mb_release(c);
        return NULL;
    }
    Ctr256 ctr = {{0, 0, 0, 0}};
    for (int64_t l = 0; l < nrb * ncb; l++) {
        int64_t rb = l / ncb, cb = l % ncb;
        int64_t n = (rows - rb * blen < blen ? rows - rb * blen : blen) *
                    (cols - cb * blen < blen ? cols - cb * blen : blen);
        start[l] = ctr;
        ctr_add(&ctr, (uint64_t)((pdf == PDF_CB_NORMAL ? n + n % 2 : n) / 4));
    }
    bool oom = false;
    #pragma omp parallel for schedule(dynamic, 1) num_threads(br_threads()) \
        if (br_par((double)rows * (double)cols))
    for (int64_t rb = 0; rb < nrb; rb++) {
        int64_t r0 = rb * blen, br = rows - r0 < blen ? rows - r0 : blen;
        double *buf = br_malloc((size_t)(br * blen) * sizeof *buf);
        if (!buf) { oom = true; continue; }
        for (int64_t cb = 0; cb < ncb; cb++) {
            int64_t c0 = cb * blen, bc = cols - c0 < blen ? cols - c0 : blen;
            philox_values(pdf, (uint64_t)seeds[rb * ncb + cb], start[rb * ncb + cb], br * bc, buf);
            for (int64_t i = 0; i < br; i++)
                memcpy(c->d + (r0 + i) * cols + c0, buf + i * bc, (size_t)bc * sizeof *buf);
        }
        free(buf);
    }
    free(start);
    if (oom) {
        br_err(e, BR_ENOMEM, "rand: out of memory");
        mb_release(c);
        return NULL;
    }
    int64_t nnz = 0, n = rows * cols;
    bool finite = true;
    #pragma omp parallel for reduction(+:nnz) reduction(&&:finite) num_threads(br_threads()) \
        if (br_par((double)n))
    for (int64_t k = 0; k < n; k++) {
        nnz += c->d[k] != 0;
        finite = finite && isfinite(c->d[k]);
    }
    c->nnz = nnz;
    if (finite) mb_fin_set(c, false);
    return mb_finish(c, e);
}

/* ---------------------------------------------------------------- rand */

typedef struct {
    Pdf pdf;
    double min, range, lambda, sparsity;
    int64_t rows, cols, blen, ncb;
    const int64_t *seeds;     /* per block, row-major */
} RandSpec;

/* Where a row block's cells go: the dense output, or (sparse output) the
 * strip's non-zeros as (row, column, value) in draw order. */
typedef struct {
    double *d;
    int32_t *ri, *ci;
    double *v;
    int64_t n, cap;
    bool oom;
} Sink;

static void sink_put(Sink *s, const RandSpec *r, int64_t i, int64_t j, double x)
{
    if (s->d) { s->d[i * r->cols + j] = x; return; }
    if (x == 0 || s->oom) return;
    if (s->n == s->cap) {
        int64_t cap = s->cap ? 2 * s->cap : 1024;
        int32_t *ri = realloc(s->ri, (size_t)cap * sizeof *ri);
        if (ri) s->ri = ri;
        int32_t *ci = realloc(s->ci, (size_t)cap * sizeof *ci);
        if (ci) s->ci = ci;
        double *v = realloc(s->v, (size_t)cap * sizeof *v);
        if (v) s->v = v;
        if (!ri || !ci || !v) { s->oom = true; return; }
        s->cap = cap;
    }
    s->ri[s->n] = (int32_t)(i % r->blen);
    s->ci[s->n] = (int32_t)j;
    s->v[s->n++] = x;
}

/* MatrixBlock.evalSparseFormatInMemory for a block: sparsity under 0.4,
 * more than one column, and SystemDS's estimate of the sparse (MCSR) size
 * under the dense one. It decides how the block draws its cells. */
static bool sds_sparse_block(int64_t rows, int64_t cols, int64_t nnz)
{
    double sp = (double)nnz / (double)rows / (double)cols;
    if (!(sp < MB_SPARSITY_TURN_POINT) || cols <= 1) return false;
    double dense = 96 + 8.0 * (double)rows * (double)cols;
    if (sp == 0) return 0 < dense;
    double n = ceil(sp * (double)rows * (double)cols), rlen = fmin((double)rows, n);
    double cnnz = fmax(4, n / rlen);
    double sparse = 48 + 8.0 * (double)rows + rlen * (88 + 12 * fmax(1, cnnz));
    return floor(sparse) < floor(dense);
}

/* One block (rbi, cbj): LibMatrixDatagen.genRandomNumbers's body. */
static void rand_block(const RandSpec *r, ValGen *g, int64_t rbi, int64_t cbj, Sink *s)
{
    int64_t r0 = rbi * r->blen, c0 = cbj * r->blen;
    int64_t br = r->rows - r0 < r->blen ? r->rows - r0 : r->blen;
    int64_t bc = r->cols - c0 < r->blen ? r->cols - c0 : r->blen;
    vg_seed(g, r->seeds[rbi * r->ncb + cbj]);
    /* the cell selection draws from its own stream, seeded by the value
     * stream's first draw */
    JRand sel;
    jr_seed(&sel, java_d2l(vg_next(g) * (double)INT64_MAX));
    double p = r->sparsity;
    if (p < 1 && sds_sparse_block(br, bc, (int64_t)(p * (double)br * (double)bc))) {
        /* geometric skips over the block's cells in row-major order */
        double log1mp = log(1 - p);
        int64_t idx = 0, n = br * bc;
        while (idx < n) {
            double skip = ceil(log(jr_double(&sel)) / log1mp);
            if (!(skip <= (double)n)) break;
            idx += (int64_t)skip;
            if (idx > n) break;
            int64_t i = (idx - 1) / bc, j = (idx - 1) % bc;
            sink_put(s, r, r0 + i, c0 + j, r->min + r->range * vg_next(g));
        }
        return;
    }
    for (int64_t i = 0; i < br; i++)
        for (int64_t j = 0; j < bc; j++)
            if (p >= 1 || jr_double(&sel) <= p)
                sink_put(s, r, r0 + i, c0 + j, r->min + r->range * vg_next(g));
}

/* The block seeds: setupSeedsForRand and generateSeedsForCP. */
static int64_t *block_seeds(int64_t seed, int64_t nblocks)
{
    JRand jr;
    jr_seed(&jr, seed);
    int32_t init[32];
    for (int i = 0; i < 32; i++) init[i] = jr_int(&jr);
    Well w;
    well_seed_ints(&w, init, 32);
    int64_t *s = br_malloc((size_t)(nblocks ? nblocks : 1) * sizeof *s);
    if (!s) return NULL;
    for (int64_t l = 0; l < nblocks; l++) s[l] = well_long(&w);
    return s;
}

/* Non-zeros of the row blocks' sinks into c's CSR arrays, rows in order
 * (a stable counting sort of each strip by row keeps the draw order, which
 * is column order within a row). */
static int strips_to_csr(MB *c, Sink *st, int64_t nrb, int64_t blen, BrErr *e)
{
    int64_t nnz = 0;
    for (int64_t b = 0; b < nrb; b++) {
        if (st[b].oom) { br_err(e, BR_ENOMEM, "rand: out of memory"); return e->code; }
        nnz += st[b].n;
        for (int64_t k = 0; k < st[b].n; k++) c->rp[b * blen + st[b].ri[k] + 1]++;
    }
    for (int64_t i = 0; i < c->rows; i++) c->rp[i + 1] += c->rp[i];
    if (mb_sp_reserve(c, nnz, e)) return e->code;
    int64_t *at = br_malloc((size_t)(c->rows ? c->rows : 1) * sizeof *at);
    if (!at) { br_err(e, BR_ENOMEM, "rand: out of memory"); return e->code; }
    memcpy(at, c->rp, (size_t)c->rows * sizeof *at);
    for (int64_t b = 0; b < nrb; b++)
        for (int64_t k = 0; k < st[b].n; k++) {
            int64_t q = at[b * blen + st[b].ri[k]]++;
            c->ci[q] = st[b].ci[k];
            c->v[q] = st[b].v[k];
        }
    free(at);
    c->nnz = nnz;
    c->build_row = c->rows;
    return 0;
}

static __thread int64_t tl_rand_seed = -1;

int64_t k_rand_seed_used(void) { return tl_rand_seed; }

MB *k_rand(int64_t rows, int64_t cols, double min, double max,
           double sparsity, const char *pdf, double lambda, int64_t seed,
           BrErr *e)
{
    /* the seed of an unseeded draw, chosen now so that lineage can record
       it (SystemDS's DataGenCPInstruction: a constant matrix keeps -1) */
    if (seed == -1 && !(min == max && sparsity == 1)) seed = k_fresh_seed();
    tl_rand_seed = seed;
    RandSpec r = {0};
    if (!pdf || !strcasecmp(pdf, "uniform")) r.pdf = PDF_UNIFORM;
    else if (!strcasecmp(pdf, "normal")) r.pdf = PDF_NORMAL;
    else if (!strcasecmp(pdf, "poisson")) r.pdf = PDF_POISSON;
    else if (!strcasecmp(pdf, "cb_uniform")) r.pdf = PDF_CB_UNIFORM;
    else if (!strcasecmp(pdf, "cb_normal")) r.pdf = PDF_CB_NORMAL;
    else {
        br_err(e, BR_EARG, "rand: unknown pdf '%s' (use uniform, normal, "
               "poisson, cb_uniform or cb_normal)", pdf);
        return NULL;
    }
    if (rows < 0 || cols < 0) {
        br_err(e, BR_EDIM, "rand: invalid dimensions %lldx%lld",
               (long long)rows, (long long)cols);
        return NULL;
    }
    if (!(sparsity >= 0 && sparsity <= 1)) {
        br_err(e, BR_EARG, "rand: sparsity %g is not in [0, 1]", sparsity);
        return NULL;
    }
    /* uniform with min > max draws from (max, min] by min + (max - min) u,
     * as SystemDS does without a check (its BuiltinHyperbandTest draws
     * from min 1e-10, max 1e-12) */
    if (r.pdf == PDF_POISSON && !(lambda >= 0 && isfinite(lambda))) {
        br_err(e, BR_EARG, "rand: invalid poisson mean lambda %g", lambda);
        return NULL;
    }
    /* SystemDS's counter-based generators fill dense blocks only: for a
       sparsity in (0, 1) its matrix stays all zeros, which braid refuses */
    bool cb = r.pdf == PDF_CB_UNIFORM || r.pdf == PDF_CB_NORMAL;
    if (cb && sparsity > 0 && sparsity < 1) {
        br_err(e, BR_EARG, "rand: pdf '%s' draws dense matrices only (sparsity 1 or 0), "
               "got sparsity %g", pdf, sparsity);
        return NULL;
    }
    /* normal, Poisson and the counter-based draws scale [0, 1) as SystemDS
       does: min and max apply to pdf uniform only */
    if (r.pdf != PDF_UNIFORM) { min = 0; max = 1; }
    r.min = min; r.range = max - min; r.lambda = lambda;
    r.sparsity = sparsity; r.rows = rows; r.cols = cols;
    /* finite values, known without a scan (mb.h, the finiteness flag):
     * normal and Poisson draws always, uniform ones when min + range * u
     * cannot round past the largest double */
    bool finite = r.pdf != PDF_UNIFORM || (fabs(min) <= 1e300 && fabs(max) <= 1e300);
    bool constzero = (r.pdf == PDF_UNIFORM && min == 0 && max == 0) ||
                     (r.pdf == PDF_POISSON && lambda == 0);
    if (sparsity == 0 || constzero || rows * (double)cols == 0) {
        MB *c = mb_empty(rows, cols, e);
        mb_fin_set(c, false);
        return c;
    }
    if (r.pdf == PDF_UNIFORM && sparsity == 1 && min == max)
        return mb_fill(rows, cols, min, e);
    if (seed == -1) seed = k_fresh_seed();
    r.blen = br_blocksize();
    int64_t nrb = (rows + r.blen - 1) / r.blen;
    r.ncb = (cols + r.blen - 1) / r.blen;
    int64_t *seeds = block_seeds(seed, nrb * r.ncb);
    if (!seeds) { br_err(e, BR_ENOMEM, "rand: out of memory"); return NULL; }
    if (cb) {
        MB *c = rand_cb(r.pdf, rows, cols, r.blen, seeds, e);
        free(seeds);
        return c;
    }
    r.seeds = seeds;
    pthread_once(&exp_sa_once, exp_sa_init);
    bool sparse = sparsity < MB_SPARSITY_TURN_POINT;
    MB *c = sparse ? mb_sp_alloc(rows, cols, 1, e) : mb_dense(rows, cols, e);
    Sink *st = sparse ? br_calloc((size_t)nrb, sizeof *st) : NULL;
    if (!c || (sparse && !st)) {
        free(seeds);
        free(st);
        return c ? mb_oom(c, e) : NULL;
    }
    #pragma omp parallel for schedule(dynamic, 1) num_threads(br_threads()) \
        if (br_par((double)rows * (double)cols * (sparse ? sparsity : 1)))
    for (int64_t b = 0; b < nrb; b++) {
        Sink one = {.d = sparse ? NULL : c->d};
        Sink *s = sparse ? &st[b] : &one;
        ValGen g = {.pdf = r.pdf, .lambda = r.lambda};
        for (int64_t cb = 0; cb < r.ncb; cb++) rand_block(&r, &g, b, cb, s);
    }
    free(seeds);
    int rc = 0;
    if (sparse) {
        rc = strips_to_csr(c, st, nrb, r.blen, e);
        for (int64_t b = 0; b < nrb; b++) { free(st[b].ri); free(st[b].ci); free(st[b].v); }
        free(st);
    } else {
        int64_t nnz = 0, n = rows * cols;
        #pragma omp parallel for reduction(+:nnz) num_threads(br_threads()) if (br_par((double)n))
        for (int64_t k = 0; k < n; k++) nnz += c->d[k] != 0;
        c->nnz = nnz;
    }
    if (rc) { mb_release(c); return NULL; }
    if (finite) mb_fin_set(c, false);
    return mb_finish(c, e);
}

/* ------------------------------------------------------------- sample */

/* Open-addressing set of positive integers (0 marks a free slot). */
typedef struct { int64_t *slot; int64_t cap; } ISet;

/* Adds x (> 0); returns true if it was new. The caller sizes cap to at
 * least twice the number of insertions. */
static bool iset_add(ISet *s, int64_t x)
{
    uint64_t h = mix64((uint64_t)x) & (uint64_t)(s->cap - 1);
    while (s->slot[h]) {
        if (s->slot[h] == x) return false;
        h = (h + 1) & (uint64_t)(s->cap - 1);
    }
    s->slot[h] = x;
    return true;
}

/* LibMatrixDatagen.nextLong: a uniform long in [0, n) from nextLong()'s
 * low 63 bits, rejecting the top partial range. */
static int64_t jr_long_below(JRand *r, int64_t n)
{
    for (;;) {
        int64_t bits = (int64_t)(((uint64_t)jr_long(r) << 1) >> 1);
        int64_t val = bits % n;
        if ((int64_t)((uint64_t)bits - (uint64_t)val + (uint64_t)(n - 1)) >= 0) return val;
    }
}

MB *k_sample(int64_t range, int64_t size, bool replace, int64_t seed, BrErr *e)
{
    if (range < 1 || size < 0) {
        br_err(e, BR_EARG, "sample: invalid range %lld or size %lld",
               (long long)range, (long long)size);
        return NULL;
    }
    if (!replace && size > range) {
        br_err(e, BR_EARG, "sample: size %lld is larger than range %lld in a "
               "sample without replacement", (long long)size, (long long)range);
        return NULL;
    }
    if (seed == -1) seed = k_fresh_seed();
    MB *c = mb_dense_uninit(size, 1, e);
    if (!c) return NULL;
    double *d = c->d;
    JRand jr;
    jr_seed(&jr, seed);
    if (replace) {
        for (int64_t i = 0; i < size; i++) d[i] = (double)(1 + jr_long_below(&jr, range));
    } else if (range <= INT32_MAX) {
        /* SystemDS's generateSample: reservoir sampling over 1..range,
         * then Knuth's shuffle of the reservoir */
        int32_t n = (int32_t)size;
        for (int32_t i = 0; i < n; i++) d[i] = i + 1;
        for (int64_t i = (int64_t)n + 1; i <= range; i++)
            if (jr_int_below(&jr, (int32_t)i) < n) d[jr_int_below(&jr, n)] = (double)i;
        for (int32_t i = 0; i < n - 1; i++) {
            int32_t j = jr_int_below(&jr, n - i) + i;
            double t = d[i]; d[i] = d[j]; d[j] = t;
        }
    } else {
        /* beyond an int range SystemDS's loop cannot run: Floyd's subset
         * sampling, then a Fisher-Yates shuffle of it, from the same stream */
        ISet s = {0};
        s.cap = 16;
        while (s.cap < 2 * size) s.cap *= 2;
        s.slot = br_calloc((size_t)s.cap, sizeof(int64_t));
        if (!s.slot) return mb_oom(c, e);
        int64_t n = 0;
        for (int64_t j = range - size + 1; j <= range; j++, n++) {
            int64_t t = 1 + jr_long_below(&jr, j);
            if (!iset_add(&s, t)) { iset_add(&s, j); t = j; }
            d[n] = (double)t;
        }
        free(s.slot);
        for (int64_t i = size - 1; i > 0; i--) {
            int64_t j = jr_long_below(&jr, i + 1);
            double t = d[i]; d[i] = d[j]; d[j] = t;
        }
    }
    c->nnz = size;
    mb_fin_set(c, false);   /* integers 1..range */
    return c;
}
