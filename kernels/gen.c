/* gen.c: data generation: seq(), rand(), sample(). rand and sample draw
 * from a counter-based generator (SplitMix64's finalizer applied to
 * (key, position, stream)), so results depend on the seed only, never on
 * the thread count or on how rows are split among threads. */
#include "gen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
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

/* ------------------------------------------------- counter-based RNG */

static inline uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Random word number s at position pos of the stream keyed by key. */
static inline uint64_t rnd64(uint64_t key, uint64_t pos, uint64_t s)
{
    return mix64(mix64(key + pos * 0x9e3779b97f4a7c15ULL) +
                 (s + 1) * 0xd1b54a32d192ed03ULL);
}

/* Uniform in [0, 1) and in (0, 1]. */
static inline double u01(uint64_t x) { return (double)(x >> 11) * 0x1.0p-53; }
static inline double u01_open(uint64_t x) { return (double)((x >> 11) + 1) * 0x1.0p-53; }

/* Uniform integer in [0, m). */
static inline uint64_t below(uint64_t x, uint64_t m)
{
    return (uint64_t)(((unsigned __int128)x * m) >> 64);
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

static uint64_t seed_key(int64_t seed)
{
    if (seed == -1) seed = k_fresh_seed();
    return mix64((uint64_t)seed ^ 0x5851f42d4c957f2dULL);
}

/* --------------------------------------------------------------- rand */

typedef enum { PDF_UNIFORM, PDF_NORMAL, PDF_POISSON } Pdf;

typedef struct {
    Pdf pdf;
    double min, range, lambda;
    uint64_t vkey;      /* key of the value streams (one per cell) */
    uint64_t skey;      /* key of the selection streams */
    double p, logq;     /* sparsity and log(1 - p) */
    int64_t cols;
} RandSpec;

/* Poisson(lam) count from the streams at pos: multiplication of uniforms
 * for small lam, Hormann's transformed rejection with squeeze (PTRS)
 * otherwise. */
static double poisson(uint64_t key, uint64_t pos, double lam)
{
    uint64_t s = 0;
    if (lam <= 0) return 0;
    if (lam < 30) {
        double lim = exp(-lam), prod = u01(rnd64(key, pos, s++));
        int64_t k = 0;
        while (prod > lim) { k++; prod *= u01(rnd64(key, pos, s++)); }
        return (double)k;
    }
    double slam = sqrt(lam), loglam = log(lam);
    double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
    double invalpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
    for (;;) {
        double U = u01(rnd64(key, pos, s++)) - 0.5;
        double V = u01_open(rnd64(key, pos, s++));
        double us = 0.5 - fabs(U);
        double k = floor((2 * a / us + b) * U + lam + 0.43);
        if (us >= 0.07 && V <= vr) return k;
        if (k < 0 || (us < 0.013 && V > us)) continue;
        if (log(V) + log(invalpha) - log(a / (us * us) + b) <=
            -lam + k * loglam - lgamma(k + 1))
            return k;
    }
}

/* Value of the selected cell at linear position pos. */
static inline double cell_value(const RandSpec *r, uint64_t pos)
{
    switch (r->pdf) {
    case PDF_UNIFORM:
        return r->range == 0 ? r->min : r->min + r->range * u01(rnd64(r->vkey, pos, 0));
    case PDF_NORMAL: {
        double u1 = u01_open(rnd64(r->vkey, pos, 0)), u2 = u01(rnd64(r->vkey, pos, 1));
        return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
    }
    case PDF_POISSON:
        return poisson(r->vkey, pos, r->lambda);
    }
    return 0;
}

/* Next selected column >= j of row i in a sparse draw: geometric gaps from
 * the row's selection stream (draw number *t). Returns >= cols at the end. */
static inline int64_t next_sel(const RandSpec *r, int64_t i, uint64_t *t, int64_t j)
{
    double gap = floor(log(u01_open(rnd64(r->skey, (uint64_t)i, (*t)++))) / r->logq);
    if (!(gap < (double)r->cols)) return r->cols;
    return j + (int64_t)gap;
}

/* Non-zeros of row i of a sparse draw; with ci/v, also writes them. */
static int64_t sparse_row(const RandSpec *r, int64_t i, int32_t *ci, double *v)
{
    uint64_t t = 0;
    int64_t n = 0;
    for (int64_t j = next_sel(r, i, &t, 0); j < r->cols; j = next_sel(r, i, &t, j + 1)) {
        double x = cell_value(r, (uint64_t)(i * r->cols + j));
        if (x == 0) continue;
        if (ci) { ci[n] = (int32_t)j; v[n] = x; }
        n++;
    }
    return n;
}

MB *k_rand(int64_t rows, int64_t cols, double min, double max,
           double sparsity, const char *pdf, double lambda, int64_t seed,
           BrErr *e)
{
    RandSpec r = {0};
    if (!pdf || !strcmp(pdf, "uniform")) r.pdf = PDF_UNIFORM;
    else if (!strcmp(pdf, "normal")) r.pdf = PDF_NORMAL;
    else if (!strcmp(pdf, "poisson")) r.pdf = PDF_POISSON;
    else {
        br_err(e, BR_EARG, "rand: unknown pdf '%s' (use uniform, normal or "
               "poisson)", pdf);
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
    if (r.pdf == PDF_UNIFORM && !(min <= max)) {
        br_err(e, BR_EARG, "rand: invalid range: min %g > max %g", min, max);
        return NULL;
    }
    if (r.pdf == PDF_POISSON && !(lambda >= 0 && isfinite(lambda))) {
        br_err(e, BR_EARG, "rand: invalid poisson mean lambda %g", lambda);
        return NULL;
    }
    uint64_t key = seed_key(seed);
    r.min = min; r.range = max - min; r.lambda = lambda; r.cols = cols;
    /* finite values, known without a scan (mb.h, the finiteness flag):
     * normal and Poisson draws always, uniform ones when min + range * u
     * cannot round past the largest double */
    bool finite = r.pdf != PDF_UNIFORM || (fabs(min) <= 1e300 && fabs(max) <= 1e300);
    r.vkey = key;
    r.skey = mix64(key ^ 0x2545f4914f6cdd1dULL);
    r.p = sparsity;
    r.logq = log1p(-sparsity);
    bool constzero = (r.pdf == PDF_UNIFORM && min == 0 && max == 0) ||
                     (r.pdf == PDF_POISSON && lambda == 0);
    if (sparsity == 0 || constzero || rows * (double)cols == 0) {
        MB *c = mb_empty(rows, cols, e);
        mb_fin_set(c, false);
        return c;
    }
    if (sparsity < MB_SPARSITY_TURN_POINT) {
        /* sparse: count per row, then fill; rows in parallel */
        MB *c = mb_sp_alloc(rows, cols, 1, e);
        if (!c) return NULL;
        #pragma omp parallel for schedule(dynamic, 64) num_threads(br_threads()) \
            if (br_par(4 * rows * sparsity * (double)cols))
        for (int64_t i = 0; i < rows; i++) c->rp[i + 1] = sparse_row(&r, i, NULL, NULL);
        for (int64_t i = 0; i < rows; i++) c->rp[i + 1] += c->rp[i];
        int64_t nnz = c->rp[rows];
        if (mb_sp_reserve(c, nnz, e)) { mb_release(c); return NULL; }
        #pragma omp parallel for schedule(dynamic, 64) num_threads(br_threads()) \
            if (br_par(4 * (double)nnz))
        for (int64_t i = 0; i < rows; i++)
            sparse_row(&r, i, c->ci + c->rp[i], c->v + c->rp[i]);
        c->nnz = nnz;
        c->build_row = rows;
        if (finite) mb_fin_set(c, false);
        return mb_finish(c, e);
    }
    MB *c = mb_dense_uninit(rows, cols, e);
    if (!c) return NULL;
    int64_t nnz = 0;
    bool all = sparsity >= 1;
    #pragma omp parallel for schedule(static) reduction(+:nnz) \
        num_threads(br_threads()) if (br_par((double)rows * (double)cols))
    for (int64_t i = 0; i < rows; i++) {
        double *cr = c->d + i * cols;
        for (int64_t j = 0; j < cols; j++) {
            uint64_t pos = (uint64_t)(i * cols + j);
            double x = 0;
            if (all || u01(rnd64(r.skey, pos, 0)) < sparsity) x = cell_value(&r, pos);
            cr[j] = x;
            nnz += x != 0;
        }
    }
    c->nnz = nnz;
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
    uint64_t key = seed_key(seed);
    MB *c = mb_dense_uninit(size, 1, e);
    if (!c) return NULL;
    double *d = c->d;
    if (replace) {
        #pragma omp parallel for schedule(static) num_threads(br_threads()) \
            if (br_par((double)size))
        for (int64_t i = 0; i < size; i++)
            d[i] = (double)(1 + below(rnd64(key, (uint64_t)i, 0), (uint64_t)range));
    } else if (range <= 4 * size + (INT64_C(1) << 16)) {
        /* partial Fisher-Yates over 1..range */
        int64_t *perm = br_malloc((size_t)range * sizeof(int64_t));
        if (!perm) return mb_oom(c, e);
        for (int64_t i = 0; i < range; i++) perm[i] = i + 1;
        for (int64_t i = 0; i < size; i++) {
            int64_t j = i + (int64_t)below(rnd64(key, (uint64_t)i, 0), (uint64_t)(range - i));
            int64_t t = perm[i]; perm[i] = perm[j]; perm[j] = t;
            d[i] = (double)perm[i];
        }
        free(perm);
    } else {
        /* Floyd's subset sampling, then a Fisher-Yates shuffle of it */
        ISet s = {0};
        s.cap = 16;
        while (s.cap < 2 * size) s.cap *= 2;
        s.slot = br_calloc((size_t)s.cap, sizeof(int64_t));
        if (!s.slot) return mb_oom(c, e);
        int64_t n = 0;
        for (int64_t j = range - size + 1; j <= range; j++, n++) {
            int64_t t = 1 + (int64_t)below(rnd64(key, (uint64_t)n, 0), (uint64_t)j);
            if (!iset_add(&s, t)) { iset_add(&s, j); t = j; }
            d[n] = (double)t;
        }
        free(s.slot);
        for (int64_t i = size - 1; i > 0; i--) {
            int64_t j = (int64_t)below(rnd64(key, (uint64_t)i, 1), (uint64_t)(i + 1));
            double t = d[i]; d[i] = d[j]; d[j] = t;
        }
    }
    c->nnz = size;
    mb_fin_set(c, false);   /* integers 1..range */
    return c;
}
