/* cla.c: compression of matrix blocks (docs/cla.md).
 *
 * Planning (cla_plan) works on a sample of rows: per column the sampled
 * values' codes, distinct count and non-zero fraction; the number of
 * distinct values of the whole column is estimated from the sample
 * (Haas-Stokes' Duj1: d / (1 - (1 - q) f1 / s), f1 the values seen once,
 * q the sampling fraction; cla_est.c has the hybrid estimator used). With
 * each sampled row the row before it is read, which gives the run starts
 * and so the runs (cla_est_runs). The estimated size of a group is the
 * smallest of its DDC, OLE and RLE sizes. Columns whose estimate is
 * not below their uncompressed size stay uncompressed. The others are
 * co-coded greedily (Elgohary et al. section 3.3): in order of increasing
 * cardinality, a group absorbs, one at a time, the candidate of the next
 * CO_WINDOW that saves the most estimated bytes, while one saves any.
 *
 * Encoding (cla_compress) extracts each planned group exactly, in
 * parallel: a hash of its row tuples gives the dictionary, the code of
 * every row and exact counts, runs and segments; the encoding is the
 * smallest of EMPTY/CONST/DDC1/DDC2/OLE/RLE, or uncompressed when that is
 * smaller. All uncompressed columns form one UNC group.
 */
#include "cla.h"
#include "reorg.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#define CO_WINDOW 8        /* candidates a group considers per step */
#define CO_MAXCOLS 64      /* columns per co-coded group */
#define MAX_DICT 65536     /* tuples per group (DDC2 codes) */

ClaPlanOpts cla_plan_defaults(void)
{
    return (ClaPlanOpts){.force = false, .min_ratio = 1.1, .sample = 0, .cocode = true, .enc = -1, .lut = true};
}

/* ---- column access ---- */

/* The transpose of a sparse x as CSR (its rows are x's columns):
 * k_transpose may give a dense block when x is dense enough. */
static MB *sparse_t(const MB *x, BrErr *e)
{
    MB *t = k_transpose(x, e);
    if (!t || t->sparse) return t;
    MB *s = mb_to_sparse(t, e);   /* always CSR */
    mb_release(t);
    return s;
}

/* A value's bits for hashing and equality: -0 as 0, one NaN. */
static inline uint64_t vbits(double v)
{
    if (v == 0) v = 0;
    if (v != v) v = NAN;
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

static inline uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

/* ---- a hash set of tuples (codes of rows by their values) ---- */

typedef struct TupleSet {
    int nc;            /* values per tuple */
    int32_t *slot;     /* -1 or tuple id */
    int64_t mask;
    double *tup;       /* n * nc */
    int32_t n, cap;
} TupleSet;

static bool ts_init(TupleSet *t, int nc, int64_t expect)
{
    int64_t sz = 64;
    while (sz < 2 * expect && sz < 4 * (int64_t)MAX_DICT) sz *= 2;
    t->nc = nc;
    t->mask = sz - 1;
    t->n = 0;
    t->cap = 64;
    t->slot = br_malloc((size_t)sz * sizeof(int32_t));
    t->tup = br_malloc((size_t)t->cap * (size_t)nc * sizeof(double));
    if (!t->slot || !t->tup) return false;
    memset(t->slot, 0xff, (size_t)sz * sizeof(int32_t));
    return true;
}

static void ts_free(TupleSet *t)
{
    free(t->slot);
    free(t->tup);
}

static bool ts_grow(TupleSet *t)
{
    int64_t sz = (t->mask + 1) * 2;
    int32_t *ns = br_malloc((size_t)sz * sizeof(int32_t));
    if (!ns) return false;
    memset(ns, 0xff, (size_t)sz * sizeof(int32_t));
    for (int32_t id = 0; id < t->n; id++) {
        uint64_t h = 0;
        for (int j = 0; j < t->nc; j++) h = mix(h ^ vbits(t->tup[(int64_t)id * t->nc + j]));
        int64_t k = (int64_t)(h & (uint64_t)(sz - 1));
        while (ns[k] >= 0) k = (k + 1) & (sz - 1);
        ns[k] = id;
    }
    free(t->slot);
    t->slot = ns;
    t->mask = sz - 1;
    return true;
}

/* The id of tuple v[0..nc), or -1 when the set does not hold it. */
static int32_t ts_find(const TupleSet *t, const double *v)
{
    uint64_t h = 0;
    for (int j = 0; j < t->nc; j++) h = mix(h ^ vbits(v[j]));
    for (int64_t k = (int64_t)(h & (uint64_t)t->mask);; k = (k + 1) & t->mask) {
        int32_t id = t->slot[k];
        if (id < 0) return -1;
        const double *u = t->tup + (int64_t)id * t->nc;
        int j = 0;
        while (j < t->nc && vbits(u[j]) == vbits(v[j])) j++;
        if (j == t->nc) return id;
    }
}

/* The id of tuple v[0..nc) (added when new); -1 when the set is full
 * (MAX_DICT) or out of memory. */
static int32_t ts_id(TupleSet *t, const double *v)
{
    uint64_t h = 0;
    for (int j = 0; j < t->nc; j++) h = mix(h ^ vbits(v[j]));
    int64_t k = (int64_t)(h & (uint64_t)t->mask);
    for (;; k = (k + 1) & t->mask) {
        int32_t id = t->slot[k];
        if (id < 0) break;
        const double *u = t->tup + (int64_t)id * t->nc;
        int j = 0;
        while (j < t->nc && vbits(u[j]) == vbits(v[j])) j++;
        if (j == t->nc) return id;
    }
    if (t->n >= MAX_DICT) return -1;
    if (t->n == t->cap) {
        double *nt = realloc(t->tup, (size_t)t->cap * 2 * (size_t)t->nc * sizeof(double));
        if (!nt) return -1;
        t->tup = nt;
        t->cap *= 2;
    }
    int32_t id = t->n++;
    for (int j = 0; j < t->nc; j++) t->tup[(int64_t)id * t->nc + j] = v[j] == 0 ? 0 : v[j];
    t->slot[k] = id;
    if (2 * (int64_t)t->n > t->mask && !ts_grow(t)) return -1;
    return id;
}

/* ---- planning ---- */

/* Sample statistics of a column or a planned group. */
typedef struct Stat {
    int32_t *code;     /* 2 ns: per sample row the tuple's id, then per
                          sample row the id of the row before it (-1: row
                          0, or a tuple no sample row holds) */
    int32_t nd;        /* distinct tuples in the sample */
    int32_t f1;        /* tuples seen once */
    int32_t nzrows;    /* sample rows whose tuple is not all zero */
    int32_t zero_id;   /* id of the all-zero tuple or -1 */
    int ncols;
    double dest;       /* estimated distinct tuples of all rows */
    double runs;       /* estimated runs of non-zero tuples of all rows */
    double est;        /* estimated compressed size */
} Stat;

typedef struct PCtx {
    int64_t n, ns;     /* rows, sample rows */
    int64_t nnz_cells; /* (estimated) non-zero cells of x per column: avg */
    double sparsity;
    /* follows[i]: sample row i is the row after sample row i - 1, so the
     * code of its row before is row i - 1's (a full sample: every row;
     * no hash lookup then) */
    const bool *follows;
} PCtx;

/* Estimated uncompressed size of a group of nc columns with the sample's
 * non-zero cell fraction. */
static double unc_size(const PCtx *c, int nc, double nzfrac)
{
    int64_t nnz = (int64_t)(nzfrac * (double)c->n * nc);
    return mb_est_size(c->n, nc, nnz);
}

/* Estimated compressed size of a group from its sample statistics. */
/* A list encoding (OLE, RLE) is chosen over a dense dictionary coding
 * (DDC1/2) only where it is smaller and its row index is at most
 * LIST_GAIN of the DDC's codes, a hybrid of size and time (as SystemDS's
 * cost models weigh the operations): over a row-wise pass a listed row
 * cost about ten times a coded one (the Airline-like table's co-coded
 * delay columns, 64% of the rows listed: OLE 1.3 MB against DDC2's 2 MB,
 * and X %*% v ran at 0.62 of the dense kernel with the OLE group, 0.83
 * with DDC2; mnist-like pixels 0.51 -> 1.08), so a list that saves less
 * than half the index costs time. The dictionaries are left out of the
 * comparison (they cost per tuple either way: columns of 200 distinct
 * values at 5% non-zeros stay OLE). The groups' estimates (group_est,
 * chosen) and the choice (choose) use the same rule; co-coding compares
 * the smallest encodings (group_est, not chosen: under the rule two
 * sparse binary columns listed apart (OLE, 0.4 n bytes each) looked
 * cheaper than together (DDC1, n), and 10 such columns stayed 10 OLE
 * groups where 2 co-coded DDC1 groups hold them in 2 n). */
#define LIST_GAIN 0.5

static double group_est(const PCtx *c, const Stat *s, bool chosen)
{
    double d = s->dest;
    double dict = 8.0 * s->ncols * d + 8.0 * d;
    double n = (double)c->n;
    double best = INFINITY, ix = INFINITY;   /* ix: the DDC's row index */
    if (d <= 256) best = (ix = n) + dict;
    else if (d <= MAX_DICT) best = (ix = 2 * n) + dict;
    double z = (double)s->nzrows / (double)c->ns * n;
    double nseg = ceil(n / CLA_SEG);
    double ole = 2.0 * z + 2.0 * d * nseg;
    /* RLE: a (gap, length) pair per run, plus the splits of gaps and
     * runs past 16 bits (at most one per tuple and CLA_U16 rows) */
    double dnz = d - (s->zero_id >= 0);
    double rle = 4.0 * (s->runs + dnz * floor(n / CLA_U16));
    double lg = chosen ? LIST_GAIN : INFINITY;   /* (as choose() picks) */
    if (ole + dict < best && ole < lg * ix) best = ole + dict;
    if (rle + 8.0 * d + dict < best && rle < lg * ix) best = rle + 8.0 * d + dict;
    return best;
}

/* Stat of a group from codes (already computed) and the tuples' zero flags. */
static bool stat_from_codes(const PCtx *c, Stat *s, const bool *zero, int32_t nd)
{
    int32_t *cnt = br_calloc((size_t)nd + 1, sizeof(int32_t));
    if (!cnt) return false;
    s->nzrows = 0;
    for (int64_t i = 0; i < c->ns; i++) {
        cnt[s->code[i]]++;
        if (!zero[s->code[i]]) s->nzrows++;
    }
    s->nd = nd;
    s->f1 = 0;
    s->zero_id = -1;
    int32_t fmax = 0;
    for (int32_t k = 0; k < nd; k++) {
        if (cnt[k] == 1) s->f1++;
        if (zero[k]) s->zero_id = k;
        if (cnt[k] > fmax) fmax = cnt[k];
    }
    /* the frequencies of frequencies for the distinct estimate */
    int64_t *f = br_calloc((size_t)fmax + 2, sizeof(int64_t));
    if (!f) { free(cnt); return false; }
    for (int32_t k = 0; k < nd; k++) f[cnt[k]]++;
    s->dest = cla_est_distinct(c->n, c->ns, nd, f, fmax);
    free(f);
    free(cnt);
    /* run starts: sample rows of a non-zero tuple whose row before holds
     * another tuple */
    int64_t starts = 0;
    const int32_t *prev = s->code + c->ns;
    for (int64_t i = 0; i < c->ns; i++) starts += !zero[s->code[i]] && prev[i] != s->code[i];
    s->runs = cla_est_runs(c->n, c->ns, starts, s->dest - (s->zero_id >= 0), s->nzrows);
    s->est = group_est(c, s, false);
    return true;
}

/* Codes of the sampled values v[0..ns) of one column, and of the values
 * of the rows before them, v[ns..2 ns) (has[i]: sample row i has a row
 * before it). */
static bool sample_codes(const PCtx *c, const double *v, const bool *has, Stat *s, double **dv)
{
    TupleSet t;
    memset(&t, 0, sizeof t);
    s->ncols = 1;
    s->code = br_malloc(2 * (size_t)c->ns * sizeof(int32_t) + 1);
    if (!s->code || !ts_init(&t, 1, c->ns)) { ts_free(&t); return false; }
    for (int64_t i = 0; i < c->ns; i++) {
        int32_t id = ts_id(&t, &v[i]);
        if (id < 0) { ts_free(&t); return false; }   /* ns <= MAX_DICT: only on oom */
        s->code[i] = id;
    }
    for (int64_t i = 0; i < c->ns; i++)
        s->code[c->ns + i] = !has[i] ? -1 : c->follows[i] ? s->code[i - 1] : ts_find(&t, &v[c->ns + i]);
    bool *zero = br_malloc((size_t)t.n + 1);
    bool ok = zero != NULL;
    if (ok) {
        for (int32_t k = 0; k < t.n; k++) zero[k] = t.tup[k] == 0;
        ok = stat_from_codes(c, s, zero, t.n);
    }
    free(zero);
    *dv = t.tup;   /* the distinct values, s->nd of them */
    t.tup = NULL;
    ts_free(&t);
    return ok;
}

/* Direct code tables (the extraction's shortcut past the hash): a
 * column whose finite sampled values all lie on a grid lo + k * step, k
 * an integer in [0, span) with span at most LUT_COL, gets the grid: the
 * step is the greatest common divisor of the values' distances from the
 * smallest, in units of 10^-p for the smallest p <= LUT_DEC that makes
 * them all integers. So counts, categories and pixels (step 1), wide
 * ranges of multiples (prices in cents times 100, years times 1000) and
 * decimals of few digits (sensor readings, 0.25 steps) take tables, and
 * so do columns of few distinct values whose smallest gap divides the
 * others (standardized categories: no decimal step); a
 * group of such columns whose spans multiply to at most LUT_MAX cells (1
 * MB of codes; and at most twice the rows, so small blocks do not clear
 * large tables) codes its rows by table. The table only caches the
 * hash's codes and a hit is checked against the tuple, so values off the
 * grid or outside it, and rounding in the key, never give a wrong code. */
#define LUT_COL 4096
#define LUT_MAX (1 << 18)
#define LUT_DEC 6

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) { int64_t t = a % b; a = b; b = t; }
    return a;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Are the finite values v[0..ns) within rounding of the grid a + k * step,
 * k an integer? */
static bool on_grid(const double *v, int64_t ns, double a, double step)
{
    for (int64_t i = 0; i < ns; i++) {
        if (!isfinite(v[i])) continue;
        double w = (v[i] - a) / step, k = nearbyint(w);
        if (!(fabs(w - k) <= 1e-9 * (k > 1 ? k : 1))) return false;
    }
    return true;
}

/* The grid of the finite values among the nd distinct values v[0..nd)
 * of a sample of ns rows: *span = 0 when there is none that small.
 * Decimals first (exact steps from the gcd); else, for few distinct
 * values, the smallest gap between them as the step (values scaled or shifted by a constant, such as
 * standardized categories, lie on such a grid up to rounding). */
static void grid_of(const double *v, int32_t nd, int64_t ns, double *lo, double *inv, int32_t *span)
{
    int64_t nv = nd;
    double a = INFINITY, b = -INFINITY;
    *span = 0;
    for (int64_t i = 0; i < nv; i++) {
        if (!isfinite(v[i])) continue;
        a = v[i] < a ? v[i] : a;
        b = v[i] > b ? v[i] : b;
    }
    if (!(a <= b)) return;
    double sc = 1;
    for (int p = 0; p <= LUT_DEC; p++, sc *= 10) {
        if ((b - a) * sc > 1e15) break;   /* beyond exact integers */
        int64_t g = 0;
        bool on = true;
        for (int64_t i = 0; i < nv && on; i++) {
            if (!isfinite(v[i])) continue;
            double w = (v[i] - a) * sc, k = nearbyint(w);
            on = fabs(w - k) <= 1e-9 * (k > 1 ? k : 1);   /* the subtraction's rounding */
            g = gcd64(g, (int64_t)k);
        }
        if (!on) continue;
        if (g == 0) g = 1;
        double s = nearbyint((b - a) * sc) / (double)g + 1;
        if (s > LUT_COL) return;   /* finer scales only scale the span up */
        *lo = a;
        *inv = sc / (double)g;
        *span = (int32_t)s;
        return;
    }
    /* (only where the sample repeats its values: a table pays there, and
     * continuous columns skip the sort) */
    if (nd > LUT_COL || 4 * (int64_t)nd > ns || a == b) return;
    double *u = br_malloc((size_t)nv * sizeof(double) + 8);
    if (!u) return;
    int64_t k = 0;
    for (int64_t i = 0; i < nv; i++)
        if (isfinite(v[i])) u[k++] = v[i];
    qsort(u, (size_t)k, sizeof *u, cmp_dbl);
    double step = INFINITY;
    for (int64_t i = 1; i < k; i++)
        if (u[i] > u[i - 1] && u[i] - u[i - 1] < step) step = u[i] - u[i - 1];
    free(u);
    double s = nearbyint((b - a) / step) + 1;
    if (s > LUT_COL || !on_grid(v, nv, a, step)) return;
    *lo = a;
    *inv = 1 / step;
    *span = (int32_t)s;
}

/* The stat of groups a and b merged (codes paired). */
static bool merge_stat(const PCtx *c, const Stat *a, const Stat *b, Stat *m, int32_t *map, int64_t mapsz)
{
    m->ncols = a->ncols + b->ncols;
    m->code = br_malloc(2 * (size_t)c->ns * sizeof(int32_t) + 1);
    bool *zero = br_malloc((size_t)c->ns + 1);
    /* pairs of few codes index map directly (no hash, no keys) */
    int64_t pairs = (int64_t)a->nd * (b->nd + 1);
    bool direct = pairs <= mapsz;
    int64_t *keys = direct ? NULL : br_malloc((size_t)mapsz * sizeof(int64_t));
    if (!m->code || !zero || (!direct && !keys)) {
        free(m->code);
        m->code = NULL;
        free(zero);
        free(keys);
        return false;
    }
    memset(map, 0xff, (size_t)(direct ? pairs : mapsz) * sizeof(int32_t));
    int32_t nd = 0;
    for (int64_t i = 0; i < c->ns; i++) {
        int64_t key = (int64_t)a->code[i] * (b->nd + 1) + b->code[i];
        int64_t k = direct ? key : (int64_t)(mix((uint64_t)key) & (uint64_t)(mapsz - 1));
        while (!direct && map[k] >= 0 && keys[k] != key) k = (k + 1) & (mapsz - 1);
        if (map[k] < 0) {
            map[k] = nd;
            if (!direct) keys[k] = key;
            zero[nd] = a->code[i] == a->zero_id && b->code[i] == b->zero_id;
            nd++;
        }
        m->code[i] = map[k];
    }
    /* the rows before: pairs the sample rows hold (else -1) */
    for (int64_t i = c->ns; i < 2 * c->ns; i++) {
        m->code[i] = -1;
        if (c->follows[i - c->ns]) { m->code[i] = m->code[i - c->ns - 1]; continue; }
        if (a->code[i] < 0 || b->code[i] < 0) continue;
        int64_t key = (int64_t)a->code[i] * (b->nd + 1) + b->code[i];
        int64_t k = direct ? key : (int64_t)(mix((uint64_t)key) & (uint64_t)(mapsz - 1));
        while (!direct && map[k] >= 0 && keys[k] != key) k = (k + 1) & (mapsz - 1);
        m->code[i] = map[k];
    }
    bool ok = stat_from_codes(c, m, zero, nd);
    free(zero);
    free(keys);
    return ok;
}

void cla_plan_free(ClaPlan *p)
{
    free(p->start);
    free(p->cols);
    free(p->glo);
    free(p->ginv);
    free(p->gspan);
    memset(p, 0, sizeof *p);
}

/* Sampled rows: every row, or a sorted uniform sample (fixed seed: the
 * same block always gets the same plan). */
static int64_t *sample_rows(int64_t n, int64_t ns)
{
    int64_t *r = br_malloc((size_t)ns * sizeof(int64_t) + 8);
    if (!r) return NULL;
    if (ns == n) {
        for (int64_t i = 0; i < n; i++) r[i] = i;
        return r;
    }
    /* selection sampling (Knuth's algorithm S): sorted by construction */
    uint64_t st = 0x9e3779b97f4a7c15ULL;
    int64_t got = 0;
    for (int64_t i = 0; i < n && got < ns; i++) {
        st = st * 6364136223846793005ULL + 1442695040888963407ULL;
        double u = (double)(st >> 11) / 9007199254740992.0;
        if ((double)(n - i) * u < (double)(ns - got)) r[got++] = i;
    }
    return r;
}

typedef struct ColOrder { int32_t col; double d; } ColOrder;

static int cmp_order(const void *a, const void *b)
{
    const ColOrder *x = a, *y = b;
    return x->d < y->d ? -1 : x->d > y->d ? 1 : (x->col > y->col) - (x->col < y->col);
}

/* Exclusive co-coding (one-hot and other mutually exclusive columns):
 * pairs of such columns never save bytes (OLE stores the same offsets,
 * DDC a code per row for few non-zeros), so the greedy pairs below miss
 * them, while the whole set as one DDC group (a code per row: which
 * column holds the row's value) does save, and one group instead of many
 * makes row-wise operations faster. From column ord[a], the unused
 * columns whose sampled non-zero rows are disjoint from the set's join it
 * in order; the set is kept (its merged stat in *g, members marked used
 * and appended to p) when it has at least EX_MIN columns and its
 * estimate is at most EX_SLACK times the members' sum. At most EX_WINDOW
 * candidates are examined. nzl[b]: the sampled non-zero rows of column
 * ord[b] (sparse columns only, else NULL); taken: ns flags, all false on
 * entry and on return. */
#define EX_MIN 3
#define EX_SLACK 1.05
#define EX_SPARSE 0.5      /* columns at most this non-zero in the sample */
#define EX_WINDOW 256

static bool sparse_col(const PCtx *c, const Stat *s) { return s->nzrows <= EX_SPARSE * (double)c->ns; }

static bool exclusive(const PCtx *c, ColOrder *ord, int nord, int a, Stat *st, int32_t **nzl, bool *used,
                      bool *taken, int32_t *map, int64_t mapsz, ClaPlan *p, int *nc, Stat *g, int *gcols)
{
    const Stat *sa = &st[ord[a].col];
    if (!nzl[a]) return true;
    int mem[CO_MAXCOLS];
    int nm = 0;
    int64_t nz = 0;
    for (int b = a, seen = 0; b < nord && nm < CO_MAXCOLS && seen < EX_WINDOW; b++) {
        const Stat *sb = &st[ord[b].col];
        if ((b > a && used[b]) || !nzl[b] || nz + sb->nzrows > c->ns) continue;
        seen++;
        bool disjoint = true;
        for (int32_t q = 0; q < sb->nzrows && disjoint; q++) disjoint = !taken[nzl[b][q]];
        if (!disjoint) continue;
        for (int32_t q = 0; q < sb->nzrows; q++) taken[nzl[b][q]] = true;
        nz += sb->nzrows;
        mem[nm++] = b;
    }
    for (int k = 0; k < nm; k++)
        for (int32_t q = 0; q < st[ord[mem[k]].col].nzrows; q++) taken[nzl[mem[k]][q]] = false;
    bool ok = true;
    if (nm >= EX_MIN) {
        /* the members merged, against their separate estimates */
        Stat m = st[ord[a].col], t = {0};
        m.code = NULL;
        double sum = sa->est;
        int32_t *codes = br_malloc(2 * (size_t)c->ns * sizeof(int32_t) + 1);
        if (!(ok = codes != NULL)) return false;
        memcpy(codes, sa->code, 2 * (size_t)c->ns * sizeof(int32_t));
        m.code = codes;
        for (int q = 1; q < nm && ok; q++) {
            const Stat *sb = &st[ord[mem[q]].col];
            sum += sb->est;
            ok = merge_stat(c, &m, sb, &t, map, mapsz);
            free(m.code);
            m = t;
            t.code = NULL;
        }
        if (ok && m.nd <= MAX_DICT / 4 && m.est <= EX_SLACK * sum) {
            for (int q = 1; q < nm; q++) {
                used[mem[q]] = true;
                p->cols[(*nc)++] = ord[mem[q]].col;
            }
            *gcols = nm;
            free(g->code);
            *g = m;
        } else free(m.code);
    }
    return ok;
}

/* The sampled non-zero rows of the sparse columns of ord (exclusive). */
static int32_t **nz_lists(const PCtx *c, const ColOrder *ord, int nord, const Stat *st)
{
    int32_t **l = br_calloc((size_t)nord + 1, sizeof *l);
    for (int b = 0; l && b < nord; b++) {
        const Stat *s = &st[ord[b].col];
        if (!sparse_col(c, s)) continue;
        if (!(l[b] = br_malloc(((size_t)s->nzrows + 1) * sizeof(int32_t)))) {
            for (int q = 0; q < b; q++) free(l[q]);
            free(l);
            return NULL;
        }
        int32_t k = 0;
        for (int64_t i = 0; i < c->ns; i++)
            if (s->code[i] != s->zero_id) l[b][k++] = (int32_t)i;
    }
    return l;
}

/* Per planned group: a candidate of csr_pick (one column, not constant
 * or empty), its estimated size and non-zero cells. */
typedef struct CsrEst {
    bool *one;
    double *est, *nnz;
} CsrEst;

/* Greedy co-coding of the compressible columns (ord, by cardinality) into
 * groups appended to p (ce: their sizes). st: per column stat (consumed). */
static bool cocode(const PCtx *c, const ClaPlanOpts *o, ColOrder *ord, int nord, Stat *st, ClaPlan *p,
                   int *ng, int *nc, CsrEst *ce)
{
    int64_t mapsz = 64;
    while (mapsz < 2 * c->ns) mapsz *= 2;
    int32_t *map = br_malloc((size_t)mapsz * sizeof(int32_t));
    bool *used = br_calloc((size_t)nord + 1, sizeof(bool));
    bool *taken = br_calloc((size_t)c->ns + 1, sizeof(bool));
    int32_t **nzl = o->cocode ? nz_lists(c, ord, nord, st) : NULL;
    if (!map || !used || !taken || (o->cocode && !nzl)) {
        free(map); free(used); free(taken); free(nzl);
        return false;
    }
    bool ok = true;
    for (int a = 0; a < nord && ok; a++) {
        if (used[a]) continue;
        used[a] = true;
        p->start[*ng] = *nc;
        p->cols[(*nc)++] = ord[a].col;
        int gcols = 1;
        Stat g = {0};
        if (o->cocode && !exclusive(c, ord, nord, a, st, nzl, used, taken, map, mapsz, p, nc, &g, &gcols)) {
            ok = false;
            break;
        }
        if (gcols == 1) {
            g = st[ord[a].col];
            st[ord[a].col].code = NULL;
        }
        while (o->cocode && gcols < CO_MAXCOLS) {
            int best = -1;
            double gain = 0;
            Stat bs = {0};
            int seen = 0;
            for (int b = a + 1; b < nord && seen < CO_WINDOW; b++) {
                if (used[b]) continue;
                seen++;
                Stat m = {0};
                const Stat *sb = &st[ord[b].col];
                if (!merge_stat(c, &g, sb, &m, map, mapsz)) { ok = false; break; }
                double gn = g.est + sb->est - m.est;
                if (m.nd <= MAX_DICT / 4 && gn > gain) {
                    free(bs.code);
                    bs = m;
                    gain = gn;
                    best = b;
                } else free(m.code);
            }
            if (best < 0 || !ok) { free(bs.code); break; }
            used[best] = true;
            p->cols[(*nc)++] = ord[best].col;
            gcols++;
            free(g.code);
            g = bs;
        }
        free(g.code);
        double fe = group_est(c, &g, true);
        p->est_bytes += fe;
        ce->one[*ng] = gcols == 1 && g.nd >= 2;   /* (not constant or empty) */
        ce->est[*ng] = fe;
        ce->nnz[*ng] = (double)g.nzrows / (double)c->ns * (double)c->n;
        (*ng)++;
    }
    for (int b = 0; nzl && b < nord; b++) free(nzl[b]);
    free(nzl);
    free(map);
    free(used);
    free(taken);
    return ok;
}

/* Rows rows[0..ns) of a sparse x, then the row before each (an empty
 * row before row 0), as one 2 ns x cols CSR block, transposed. */
static MB *sample_t(const MB *x, const int64_t *rows, int64_t ns, BrErr *e)
{
    int64_t nnz = 0;
    for (int64_t s = 0; s < ns; s++) {
        int64_t i = rows[s];
        nnz += x->rp[i + 1] - x->rp[i] + (i > 0 ? x->rp[i] - x->rp[i - 1] : 0);
    }
    MB *sm = mb_sp_alloc(2 * ns, x->cols, nnz, e);
    if (!sm) return NULL;
    int64_t k = 0;
    for (int64_t r = 0; r < 2 * ns; r++) {
        int64_t i = r < ns ? rows[r] : rows[r - ns] - 1;
        for (int64_t q = i >= 0 ? x->rp[i] : 0; i >= 0 && q < x->rp[i + 1]; q++) {
            sm->ci[k] = x->ci[q];
            sm->v[k++] = x->v[q];
        }
        sm->rp[r + 1] = k;
    }
    mb_sp_done(sm, k);
    MB *t = sparse_t(sm, e);
    mb_release(sm);
    return t;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* A compressed group of one column, so a candidate of csr_pick. */
static bool csr_one(const ClaGroup *g)
{
    return g && g->ncols == 1 && g->enc != CLA_EMPTY && g->enc != CLA_CONST && g->enc != CLA_UNC;
}

/* The choice of csr_share over G groups of n rows: group k (one[k]: a
 * compressed group of one column) of bytes[k] and nnz[k] non-zero cells
 * is a candidate below the sparsity turn point and above 12 bytes a
 * non-zero; the candidates by saving (bytes less 12 a non-zero, most
 * first, ties in group order) into cand; returns the length of the prefix
 * (two or more, sparse by the block rule) that saves the most against
 * mb_est_sparse, *save that saving (0 and 0: none). Exact sizes at
 * compression (cla_compress, cla_compress_rows), estimated ones in the
 * plan (cla_plan's est_bytes). */
static int csr_pick(int64_t n, int G, const bool *one, const double *bytes, const double *nnz, int *cand,
                    double *save)
{
    int nc = 0, best_n = 0;
    for (int k = 0; k < G; k++)
        if (one[k] && nnz[k] < MB_SPARSITY_TURN_POINT * (double)n && bytes[k] > 12.0 * nnz[k]) cand[nc++] = k;
    for (int i = 1; i < nc; i++) {   /* insertion sort: ties keep group order */
        int k = cand[i], j = i;
        double gk = bytes[k] - 12.0 * nnz[k];
        while (j > 0 && bytes[cand[j - 1]] - 12.0 * nnz[cand[j - 1]] < gk) { cand[j] = cand[j - 1]; j--; }
        cand[j] = k;
    }
    double sb = 0, best = 0, z = 0;
    for (int i = 0; i < nc; i++) {
        sb += bytes[cand[i]];
        z += nnz[cand[i]];
        if (i == 0 || !mb_should_be_sparse(n, i + 1, (int64_t)z)) continue;
        double sv = sb - mb_est_sparse(n, i + 1, (int64_t)z);
        if (sv > best) { best = sv; best_n = i + 1; }
    }
    *save = best;
    return best_n;
}

int cla_plan(const MB *x, const ClaPlanOpts *o, ClaPlan *p, BrErr *e)
{
    memset(p, 0, sizeof *p);
    p->unc_group = -1;
    int64_t n = x->rows, m = x->cols;
    /* a sample of a larger matrix (pop_rows): every row of x is sampled
     * and the estimates are of pop_rows rows */
    PCtx c = {.n = o->pop_rows > n ? o->pop_rows : n};
    int64_t want = o->pop_rows > n ? n : o->sample > 0 ? o->sample : (n / 20 > 2000 ? n / 20 : 2000);
    if (want > 50000) want = 50000;
    c.ns = want < n ? want : n;
    int64_t *rows = sample_rows(n, c.ns);
    Stat *st = br_calloc((size_t)m + 1, sizeof(Stat));
    ColOrder *ord = br_malloc(((size_t)m + 1) * sizeof(ColOrder));
    p->start = br_malloc(((size_t)m + 2) * sizeof(int));
    p->cols = br_malloc(((size_t)m + 1) * sizeof(int32_t));
    p->glo = br_calloc((size_t)m + 1, sizeof(double));
    p->ginv = br_calloc((size_t)m + 1, sizeof(double));
    p->gspan = br_calloc((size_t)m + 1, sizeof(int32_t));
    /* sparse x: the sampled rows (sample row s) and the rows before them
     * (ns + s) as a small CSR block, transposed (its rows: x's columns
     * over the sample), so neither x nor its transpose is read whole */
    MB *xt = x->sparse && rows ? sample_t(x, rows, c.ns, e) : NULL;
    bool *has = br_malloc((size_t)c.ns + 1);
    bool ok = rows && st && ord && has && p->start && p->cols && p->glo && p->ginv && p->gspan &&
              (!x->sparse || xt);
    bool *follows = br_malloc((size_t)c.ns + 1);
    ok = ok && follows;
    for (int64_t s = 0; ok && s < c.ns; s++) {
        has[s] = rows[s] > 0;
        follows[s] = s > 0 && rows[s] - 1 == rows[s - 1];
    }
    c.follows = follows;
    /* per-column sample statistics, in parallel over columns */
    const bool par = ok && br_par((double)(c.ns * m));
#pragma omp parallel num_threads(br_threads()) if (par)
    {
        /* the sampled values, then the values of the rows before them */
        double *v = br_malloc(2 * (size_t)c.ns * sizeof(double) + 8);
#pragma omp for schedule(dynamic, 4)
        for (int64_t j = 0; j < m; j++) {
            if (!ok || !v) { ok = false; continue; }
            if (x->sparse) {
                memset(v, 0, 2 * (size_t)c.ns * sizeof(double));
                for (int64_t k = xt->rp[j]; k < xt->rp[j + 1]; k++) v[xt->ci[k]] = xt->v[k];
            } else {
                for (int64_t s = 0; s < c.ns; s++) {
                    v[s] = x->d[rows[s] * m + j];
                    v[c.ns + s] = !has[s] ? 0 : follows[s] ? v[s - 1] : x->d[(rows[s] - 1) * m + j];
                }
            }
            double *dv = NULL;
            if (!sample_codes(&c, v, has, &st[j], &dv)) ok = false;
            else if (o->lut) grid_of(dv, st[j].nd, c.ns, &p->glo[j], &p->ginv[j], &p->gspan[j]);
            free(dv);
        }
        free(v);
    }
    int ng = 0, nc = 0, nord = 0;
    double unc_cols = 0, unc_nz = 0;
    CsrEst ce = {br_calloc((size_t)m + 1, sizeof(bool)), br_calloc((size_t)m + 1, sizeof(double)),
                 br_calloc((size_t)m + 1, sizeof(double))};
    ok = ok && ce.one && ce.est && ce.nnz;
    if (ok) {
        /* compressible columns by estimated cardinality; the rest UNC */
        for (int64_t j = 0; j < m; j++) {
            double nzf = (double)st[j].nzrows / (double)c.ns;
            bool forced = o->enc >= 0 && o->enc != CLA_UNC;   /* tests: every column tries it */
            if (forced || st[j].est < unc_size(&c, 1, nzf)) ord[nord++] = (ColOrder){(int32_t)j, st[j].dest};
            else { unc_cols++; unc_nz += nzf; }
        }
        qsort(ord, (size_t)nord, sizeof *ord, cmp_order);
        ok = cocode(&c, o, ord, nord, st, p, &ng, &nc, &ce);
    }
    if (ok && o->enc < 0) {
        /* the columns cla_compress will move to a shared CSR group
         * (csr_share), priced by the estimates */
        int *cand = br_malloc(((size_t)ng + 1) * sizeof(int));
        double save = 0;
        if (cand) csr_pick(c.n, ng, ce.one, ce.est, ce.nnz, cand, &save);
        p->est_bytes -= save;
        free(cand);
    }
    free(ce.one);
    free(ce.est);
    free(ce.nnz);
    if (ok && nc < m) {
        /* one group of the remaining (uncompressed) columns */
        bool *in = br_calloc((size_t)m + 1, sizeof(bool));
        if (!in) ok = false;
        else {
            for (int k = 0; k < nc; k++) in[p->cols[k]] = true;
            p->start[ng] = nc;
            for (int64_t j = 0; j < m; j++)
                if (!in[j]) p->cols[nc++] = (int32_t)j;
            p->est_bytes += unc_size(&c, (int)unc_cols, unc_cols > 0 ? unc_nz / unc_cols : 0);
            p->unc_group = ng;
            ng++;
            free(in);
        }
    }
    if (ok) {
        p->start[ng] = nc;
        p->ngroups = ng;
        for (int k = 0; k < ng; k++)
            qsort(p->cols + p->start[k], (size_t)(p->start[k + 1] - p->start[k]), sizeof(int32_t), cmp_i32);
    }
    for (int64_t j = 0; st && j < m; j++) free(st[j].code);
    free(st);
    free(ord);
    free(rows);
    free(has);
    free(follows);
    mb_release(xt);
    if (!ok) {
        cla_plan_free(p);
        if (!e->code) br_err(e, BR_ENOMEM, "out of memory in compression planning");
        return e->code;
    }
    return 0;
}

/* ---- encoding ---- */

#define SK_MAXNZ 4         /* non-zeros of a row of a group the sparse table keys */

/* A planned group extracted exactly: the code of every row and the
 * dictionary (a TupleSet), the exact sizes of each encoding. */
typedef struct Ext {
    int nc;
    const int32_t *cols;
    int32_t *code;     /* rows */
    void *code_blk;    /* code's own block (br_free_aligned), or NULL:
                          code lies in the compression's shared block */
    TupleSet ts;
    int64_t *cnt;      /* rows per tuple */
    int32_t zero_id;   /* the all-zero tuple or -1 */
    int64_t zrows;     /* rows of non-zero tuples */
    int64_t pairs;     /* RLE (gap, length) pairs */
    int64_t nnz_cells;
    int32_t *lut;      /* direct table of integer tuples -> code (-1:
                          not yet seen), or NULL */
    double lo[CO_MAXCOLS], inv[CO_MAXCOLS];   /* the columns' grids */
    int32_t span[CO_MAXCOLS];
    int64_t hashed;    /* rows coded by the hash (not runs, not table) */
    /* a sparse x: a table of the tuples with 1..skc non-zeros (one-hot
     * columns and their co-coded pairs): column j's grid point u is the
     * digit skb[j] + u (skb[j] < 0: j has no grid) of skS; a tuple of c
     * non-zeros takes sk[skoff[c] + its digits in base skS], or NULL */
    int32_t *sk;
    int64_t skb[CO_MAXCOLS];
    int64_t skS, skoff[SK_MAXNZ + 2];
    int skc;
    int32_t zid;       /* the all-zero tuple's code once a row held it, or -1 */
} Ext;

/* RLE pairs of a run of len rows gap rows after the previous run's end. */
static int64_t rle_pairs(int64_t gap, int64_t len)
{
    return (gap > CLA_U16 ? (gap - 1) / CLA_U16 : 0) + (len + CLA_U16 - 1) / CLA_U16;
}

/* Rows [i, j) of equal code from i. */
static int64_t run_end(const int32_t *code, int64_t i, int64_t n)
{
    int64_t j = i + 1;
    while (j < n && code[j] == code[i]) j++;
    return j;
}

/* Counts, the zero tuple, non-zero rows, RLE pairs and non-zero cells of
 * x from its codes and tuples (n rows). */
static bool ext_stats(Ext *x, int64_t n)
{
    int nc = x->nc;
    int32_t nd = x->ts.n;
    x->cnt = br_calloc((size_t)nd + 1, sizeof(int64_t));
    int64_t *end = br_calloc((size_t)nd + 1, sizeof(int64_t));
    if (!x->cnt || !end) { free(end); return false; }
    for (int32_t k = 0; k < nd; k++) {
        int nz = 0;
        for (int j = 0; j < nc; j++) nz += x->ts.tup[(int64_t)k * nc + j] != 0;
        if (nz == 0) x->zero_id = k;
    }
    for (int64_t i = 0; i < n;) {
        int64_t j = run_end(x->code, i, n);
        int32_t k = x->code[i];
        x->cnt[k] += j - i;
        if (k != x->zero_id) {
            x->pairs += rle_pairs(i - end[k], j - i);
            end[k] = j;
        }
        i = j;
    }
    free(end);
    for (int32_t k = 0; k < nd; k++) {
        if (k == x->zero_id) continue;
        x->zrows += x->cnt[k];
        for (int j = 0; j < nc; j++) x->nnz_cells += (x->ts.tup[(int64_t)k * nc + j] != 0) * x->cnt[k];
    }
    return true;
}

/* Starts the extraction of group cols (n rows) of plan p into code (n
 * rows, the compression's shared block); false without memory. A group
 * whose columns all have sampled integer ranges whose product is small
 * enough (LUT_MAX) gets a direct table. */
static bool ext_begin(Ext *x, const ClaPlan *p, const int32_t *cols, int nc, int64_t n, int32_t *code)
{
    memset(x, 0, sizeof *x);
    x->nc = nc;
    x->cols = cols;
    x->zero_id = -1;
    x->zid = -1;
    x->code = code;
    int64_t cells = 1;
    for (int j = 0; j < nc && j < CO_MAXCOLS && cells <= LUT_MAX; j++) {
        x->lo[j] = p->glo[cols[j]];
        x->inv[j] = p->ginv[cols[j]];
        x->span[j] = p->gspan[cols[j]];
        cells *= x->span[j];
    }
    if (cells > 0 && cells <= LUT_MAX && cells <= BR_MAX(2 * n, 4096) && nc <= CO_MAXCOLS) {
        x->lut = br_malloc((size_t)cells * sizeof(int32_t));
        if (x->lut) memset(x->lut, 0xff, (size_t)cells * sizeof(int32_t));
    }
    return x->code && ts_init(&x->ts, nc, 1024);
}

/* The table cell of tuple t (the grid points' offsets, each column's
 * value rounded to its nearest grid point), or -1 (outside the grids or
 * not a number: hashed). */
static int64_t lut_key(const Ext *x, const double *t)
{
    int64_t key = 0;
    for (int j = 0; j < x->nc; j++) {
        double u = nearbyint((t[j] - x->lo[j]) * x->inv[j]);
        if (!(u >= 0 && u < x->span[j])) return -1;
        key = key * x->span[j] + (int64_t)u;
    }
    return key;
}

/* Does tuple id of x hold the values t (as the hash compares them)? */
static bool same_tuple(const Ext *x, int32_t id, const double *t)
{
    const double *u = x->ts.tup + (int64_t)id * x->nc;
    for (int j = 0; j < x->nc; j++)
        if (vbits(u[j]) != vbits(t[j])) return false;
    return true;
}

/* The code of tuple t of a row whose row before has code last (-1:
 * none): last's when the tuples are equal (runs), else the table's
 * (checked) or the hash's; -1 past MAX_DICT tuples or without memory. */
static int32_t code_tuple(Ext *x, const double *t, int32_t last)
{
    if (last >= 0 && same_tuple(x, last, t)) return last;
    /* the table caches the hash's ids, so the codes are the hash's: a
     * cell holds the last tuple hashed at it (a stray value off the grid
     * rounding to a grid point costs its own hash and one more of the
     * point's) */
    int64_t key = x->lut ? lut_key(x, t) : -1;
    int32_t id = key >= 0 ? x->lut[key] : -1;
    if (id >= 0 && !same_tuple(x, id, t)) id = -1;
    if (id < 0) {
        id = ts_id(&x->ts, t);
        x->hashed++;
        if (id >= 0 && key >= 0) x->lut[key] = id;
    }
    return id;
}

/* Codes of rows lo..lo+len of the group from cb, where the value of row
 * lo + r in column c is cb[c * ldc + r] (c: the column's position in the
 * group). false when the group has more than MAX_DICT tuples or without
 * memory. */
#define ROW_CHUNK 1024     /* rows ext_rows keys at a time */

static bool ext_rows(Ext *x, const double *cb, int64_t ldc, int64_t lo, int64_t len)
{
    int nc = x->nc;
    double t[CO_MAXCOLS];   /* nc <= CO_MAXCOLS: planned groups */
    int64_t key[ROW_CHUNK];
    int32_t *code = x->code + lo;
    for (int64_t r0 = 0; r0 < len; r0 += ROW_CHUNK) {
        int64_t cl = len - r0 < ROW_CHUNK ? len - r0 : ROW_CHUNK;
        const double *cc = cb + r0;
        if (x->lut) {
            /* the table's cells column by column (lut_key's, vectorized;
             * -1 outside the grids or not a number), the cells' codes,
             * then each code checked against the row's values column by
             * column (a cell's tuple is finite: == is the hash's
             * equality there); -1 where the table cannot vouch */
            for (int j = 0; j < nc; j++) {
                const double *v = cc + j * ldc;
                double a = x->lo[j], inv = x->inv[j], sp = x->span[j];
                int64_t m = x->span[j];
                for (int64_t r = 0; r < cl; r++) {
                    /* rounded half up, not as lut_key: a different cell
                     * only fails the check below */
                    double u = (v[r] - a) * inv + 0.5;
                    bool in = u >= 0 && u < sp;
                    int64_t k = (int64_t)(in ? u : 0), p = j ? key[r] : 0;
                    key[r] = p < 0 || !in ? -1 : p * m + k;
                }
            }
            /* the cells' codes, checked against the first column at once */
            const double *t0 = x->ts.tup, *v0 = cc;
            for (int64_t r = 0; r < cl; r++) {
                int32_t id = key[r] >= 0 ? x->lut[key[r]] : -1;
                code[r0 + r] = id >= 0 && t0[(int64_t)id * nc] == v0[r] ? id : -1;
            }
            for (int j = 1; j < nc; j++) {
                const double *v = cc + j * ldc;
                for (int64_t r = 0; r < cl; r++) {
                    int32_t id = code[r0 + r];
                    if (id >= 0 && !(x->ts.tup[(int64_t)id * nc + j] == v[r])) code[r0 + r] = -1;
                }
            }
        } else {
            for (int64_t r = 0; r < cl; r++) code[r0 + r] = -1;
        }
        /* the rest: runs, then the table (a first visit of its cell) or the hash */
        for (int64_t r = 0; r < cl; r++) {
            if (code[r0 + r] >= 0) continue;
            for (int j = 0; j < nc; j++) t[j] = cc[j * ldc + r];
            int32_t id = code_tuple(x, t, lo + r0 + r > 0 ? code[r0 + r - 1] : -1);
            if (id < 0) return false;
            code[r0 + r] = id;
        }
    }
    return true;
}

/* Group k's codes in the compression's shared block of codes (one block
 * for all groups, not one per group: a fresh block costs a page fault per
 * 4 KB, on a virtual machine 16 us, 50x a read of the page; one large
 * block takes huge pages and is reused by the next compression,
 * br_alloc_aligned): its offset, rows rounded up to 64 bytes. */
static int64_t code_stride(int64_t n) { return (n + 16) & ~(int64_t)15; }

/* Groups k (but the UNC one) to threads, balanced by columns: owner[k]
 * (-1: the UNC group), load[t] the columns of thread t; each group's
 * extraction started into codes (ok[k]; false: without memory). */
static bool assign_groups(const ClaPlan *p, int64_t n, int nt, int *owner, int64_t *load, Ext *ex, bool *ok,
                          int32_t *codes)
{
    bool mem = true;
    for (int k = 0; k < p->ngroups && mem; k++) {
        ok[k] = false;
        owner[k] = -1;
        if (k == p->unc_group) continue;
        int nc = p->start[k + 1] - p->start[k], t = 0;
        for (int u = 1; u < nt; u++)
            if (load[u] < load[t]) t = u;
        owner[k] = t;
        load[t] += nc;
        mem = ok[k] = ext_begin(&ex[k], p, p->cols + p->start[k], nc, n, codes + (int64_t)k * code_stride(n));
    }
    return mem;
}

/* The table of tuples of few non-zeros of group x (see Ext.sk): tuples
 * of 1..skc non-zeros, skc the most (at most SK_MAXNZ) whose cells add
 * up to at most LUT_MAX (and twice the rows). */
static void sk_begin(Ext *x, const ClaPlan *p, int64_t n)
{
    int64_t S = 0;
    for (int j = 0; j < x->nc; j++) {
        /* every column's grid (ext_begin stops at the product table's
         * limit, which does not bind this table) */
        x->lo[j] = p->glo[x->cols[j]];
        x->inv[j] = p->ginv[x->cols[j]];
        x->span[j] = p->gspan[x->cols[j]];
        int32_t sp = p->gspan[x->cols[j]];
        x->skb[j] = sp > 0 ? S : -1;
        S += sp;
    }
    int64_t cells = 0, pw = 1, cap = BR_MIN(LUT_MAX, BR_MAX(2 * n, 4096));
    x->skS = S;
    x->skc = 0;
    for (int c = 1; S > 0 && c <= SK_MAXNZ && c <= x->nc && cells + pw * S <= cap; c++) {
        x->skoff[c] = cells;
        pw *= S;
        cells += pw;
        x->skc = c;
    }
    if (x->skc > 0 && (x->sk = br_malloc((size_t)cells * sizeof(int32_t))))
        memset(x->sk, 0xff, (size_t)cells * sizeof(int32_t));
}

/* The sparse table's cell of a row's c non-zeros (positions jp, values
 * jv, positions ascending), or -1. */
static int64_t sk_key(const Ext *x, int c, const int32_t *jp, const double *jv)
{
    if (!x->sk || c < 1 || c > x->skc) return -1;
    int64_t key = 0;
    for (int z = 0; z < c; z++) {
        int j = jp[z];
        double u = nearbyint((jv[z] - x->lo[j]) * x->inv[j]);
        if (x->skb[j] < 0 || !(u >= 0 && u < x->span[j])) return -1;
        key = key * x->skS + x->skb[j] + (int64_t)u;
    }
    return x->skoff[c] + key;
}

/* The planned groups (but the UNC one) of a sparse x extracted row-wise
 * from its CSR rows, never expanding a column: each thread owns a fixed
 * set of groups (balanced by columns) and reads every row's non-zeros,
 * keeping those of its groups (per group, their positions and values).
 * A group without non-zeros in a row takes the zero tuple's code; one
 * non-zero, the table of one-non-zero tuples (sk_begin, checked against
 * the tuple: the cell's tuple has its one non-zero in the same column,
 * so comparing that value suffices); more, the row's tuple is built and
 * coded as a dense row's (code_tuple). ok[k] as extract_dense's. false
 * without memory. */
static bool extract_sparse(const MB *x, const ClaPlan *p, Ext *ex, bool *ok, int32_t *codes)
{
    int64_t n = x->rows, m = x->cols;
    int ng = p->ngroups;
    int nt = ng > 1 && br_par((double)(x->nnz + n)) ? br_threads() : 1;
    if (nt > ng) nt = ng > 0 ? ng : 1;
    int *owner = br_malloc(((size_t)ng + 1) * sizeof(int));
    int64_t *load = br_calloc((size_t)nt + 1, sizeof(int64_t));
    bool mem = owner && load && assign_groups(p, n, nt, owner, load, ex, ok, codes);
    for (int k = 0; k < ng && mem; k++)
        if (ok[k]) sk_begin(&ex[k], p, n);
#pragma omp parallel num_threads(nt) if (mem && nt > 1)
    {
        int t0 = 0, nth = 1;
#ifdef _OPENMP
        t0 = omp_get_thread_num();
        nth = omp_get_num_threads();
#endif
        /* the nt parts planned over the team OpenMP gives: one thread
         * inside a parfor worker (compress(X) in a function it calls) */
        for (int tid = t0; tid < nt; tid += nth) {
            int64_t nc = mem ? load[tid] : 0;
            int32_t *gof = br_malloc(((size_t)m + 1) * sizeof(int32_t));   /* x's column -> owned group, -1 */
            int32_t *gpos = br_malloc(((size_t)m + 1) * sizeof(int32_t));  /* its position in the group */
            int32_t *own = br_malloc(((size_t)ng + 1) * sizeof(int32_t));
            int64_t *off = br_malloc(((size_t)ng + 1) * sizeof(int64_t));  /* scratch offset per owned group */
            int32_t *cnt = br_calloc((size_t)ng + 1, sizeof(int32_t));
            int32_t *sp = br_malloc(((size_t)nc + 1) * sizeof(int32_t));
            double *sv = br_malloc(((size_t)nc + 1) * sizeof(double));
            bool have = gof && gpos && own && off && cnt && sp && sv;
            if (!have) {
#pragma omp atomic write
                mem = false;
            }
            int no = 0;
            if (have) {
                memset(gof, 0xff, ((size_t)m + 1) * sizeof(int32_t));
                int64_t at = 0;
                for (int k = 0; k < ng; k++) {
                    if (owner[k] != tid) continue;
                    for (int c = p->start[k]; c < p->start[k + 1]; c++) {
                        gof[p->cols[c]] = no;
                        gpos[p->cols[c]] = c - p->start[k];
                    }
                    off[no] = at;
                    at += p->start[k + 1] - p->start[k];
                    own[no++] = k;
                }
            }
            double t[CO_MAXCOLS];
            for (int64_t i = 0; have && nc > 0 && i < n; i++) {
                for (int64_t q = x->rp[i]; q < x->rp[i + 1]; q++) {
                    int32_t l = gof[x->ci[q]];
                    double v = x->v[q];
                    if (l < 0 || v == 0) continue;
                    sp[off[l] + cnt[l]] = gpos[x->ci[q]];
                    sv[off[l] + cnt[l]++] = v;
                }
                for (int l = 0; l < no; l++) {
                    Ext *e = &ex[own[l]];
                    int c = cnt[l];
                    cnt[l] = 0;
                    if (!ok[own[l]]) continue;
                    int32_t last = i > 0 ? e->code[i - 1] : -1, id;
                    const int32_t *jp = sp + off[l];
                    const double *jv = sv + off[l];
                    if (c == 0 && e->zid >= 0) id = e->zid;
                    else {
                        int64_t key = sk_key(e, c, jp, jv);
                        id = key >= 0 ? e->sk[key] : -1;
                        /* the cell's tuple has its non-zeros exactly at jp */
                        for (int z = 0; id >= 0 && z < c; z++)
                            if (vbits(e->ts.tup[(int64_t)id * e->nc + jp[z]]) != vbits(jv[z])) id = -1;
                        if (id < 0) {
                            memset(t, 0, (size_t)e->nc * sizeof(double));
                            for (int z = 0; z < c; z++) t[jp[z]] = jv[z];
                            id = code_tuple(e, t, last);
                            if (id >= 0 && key >= 0) e->sk[key] = id;
                            if (id >= 0 && c == 0) e->zid = id;
                        }
                    }
                    if (id < 0) ok[own[l]] = false;
                    else e->code[i] = id;
                }
            }
            free(gof);
            free(gpos);
            free(own);
            free(off);
            free(cnt);
            free(sp);
            free(sv);
        }
    }
    free(owner);
    free(load);
    return mem;
}

/* Rows per block of the blocked extraction of a dense block. */
#define EXT_BLK 4096
/* The buffer's column stride: EXT_BLK doubles (32 KB) and a cache line,
 * so that a row's values, stored one per column, fall in different sets
 * of the L1 cache (at a stride of 32 KB they all fell in one: the copy
 * was a quarter of a compression's time) */
#define EXT_LD (EXT_BLK + 8)

/* The planned groups (but the UNC one) of a dense x extracted in one pass
 * over x per thread (a column-wise read of a row-major block would stream
 * all of it once per group): each thread owns a fixed set of groups
 * (balanced by columns), copies their columns of each block of EXT_BLK
 * rows into a column-major buffer and codes the block's rows group by
 * group; no thread waits for another. ok[k]: group k extracted (false:
 * more than MAX_DICT tuples, it stays uncompressed). false without
 * memory. */
static bool extract_dense(const MB *x, const ClaPlan *p, Ext *ex, bool *ok, int32_t *codes)
{
    int64_t n = x->rows, m = x->cols;
    int ng = p->ngroups;
    int nt = ng > 1 && br_par((double)(n * m)) ? br_threads() : 1;
    if (nt > ng) nt = ng > 0 ? ng : 1;
    int *owner = br_malloc(((size_t)ng + 1) * sizeof(int));
    int64_t *load = br_calloc((size_t)nt + 1, sizeof(int64_t));
    bool mem = owner && load && assign_groups(p, n, nt, owner, load, ex, ok, codes);
#pragma omp parallel num_threads(nt) if (mem && nt > 1)
    {
        int t0 = 0, nth = 1;
#ifdef _OPENMP
        t0 = omp_get_thread_num();
        nth = omp_get_num_threads();
#endif
        /* the nt parts planned over the team OpenMP gives: one thread
         * inside a parfor worker (compress(X) in a function it calls) */
        for (int tid = t0; tid < nt; tid += nth) {
            int64_t nc = mem ? load[tid] : 0;
            /* (reused across compressions where 1 MB or more: br_alloc_aligned) */
            double *cb = br_alloc_aligned((size_t)(EXT_LD * (nc > 0 ? nc : 1)) * sizeof(double));
            int32_t *src = br_malloc(((size_t)nc + 1) * sizeof(int32_t));   /* buffer column -> x's */
            if (!cb || !src) {
#pragma omp atomic write
                mem = false;
            }
            int64_t q = 0;
            for (int k = 0; cb && src && k < ng; k++)
                for (int c = p->start[k]; owner[k] == tid && c < p->start[k + 1]; c++) src[q++] = p->cols[c];
            for (int64_t lo = 0; cb && src && nc > 0 && lo < n; lo += EXT_BLK) {
                int64_t len = n - lo < EXT_BLK ? n - lo : EXT_BLK;
                for (int64_t r = 0; r < len; r++) {
                    const double *row = x->d + (lo + r) * m;
                    for (int64_t c = 0; c < nc; c++) cb[c * EXT_LD + r] = row[src[c]];
                }
                int64_t at = 0;
                for (int k = 0; k < ng; k++) {
                    if (owner[k] != tid) continue;
                    if (ok[k] && !ext_rows(&ex[k], cb + at * EXT_LD, EXT_LD, lo, len)) ok[k] = false;
                    at += p->start[k + 1] - p->start[k];
                }
            }
            br_free_aligned(cb);
            free(src);
        }
    }
    free(owner);
    free(load);
    return mem;
}

static void ext_free(Ext *x)
{
    br_free_aligned(x->code_blk);
    x->code_blk = NULL;
    ts_free(&x->ts);
    free(x->cnt);
    free(x->lut);
    free(x->sk);
    x->lut = NULL;
    x->sk = NULL;
    x->code = NULL;   /* a second free is harmless */
    x->ts.slot = NULL;
    x->ts.tup = NULL;
    x->cnt = NULL;
}

/* The smallest encoding of x and its size in bytes. */
static ClaEnc choose(const Ext *x, int64_t n, double *bytes)
{
    int32_t nd = x->ts.n, nnzd = nd - (x->zero_id >= 0);
    double per = 8.0 * x->nc + 8.0;             /* a tuple and its count */
    double nseg = (double)((n + CLA_SEG - 1) / CLA_SEG);
    if (nnzd == 0) { *bytes = 0; return CLA_EMPTY; }
    if (nd == 1) { *bytes = per; return CLA_CONST; }
    ClaEnc best = CLA_UNC;
    double b = mb_est_size(n, x->nc, x->nnz_cells), ix = INFINITY;   /* ix: a DDC's row index */
    double c;
    if (nd <= 256 && (c = (double)n + per * nd) < b) { b = c; best = CLA_DDC1; ix = (double)n; }
    if (nd <= MAX_DICT && (c = 2.0 * (double)n + per * nd) < b) { b = c; best = CLA_DDC2; ix = 2.0 * (double)n; }
    double ole = 2.0 * ((double)x->zrows + nseg * nnzd), rle = 4.0 * (double)x->pairs;   /* their indexes */
    if ((c = ole + (per + 8) * nnzd) < b && ole < LIST_GAIN * ix) { b = c; best = CLA_OLE; }
    if ((c = rle + (per + 8) * nnzd) < b && rle < LIST_GAIN * ix) { b = c; best = CLA_RLE; }
    *bytes = b;
    return best;
}

/* The encoding the options ask for, where it can hold x. */
static ClaEnc forced(const Ext *x, int want)
{
    if (want == CLA_DDC1 && x->ts.n > 256) return CLA_DDC2;
    if (want == CLA_EMPTY || want == CLA_CONST) return CLA_DDC2;
    return (ClaEnc)want;
}

/* OLE lists of tuples remapped by map[] (old id -> new, -1: zero). */
static bool build_ole(const Ext *x, int64_t n, const int32_t *map, ClaGroup *g)
{
    int32_t nd = g->ndict;
    int64_t nseg = (n + CLA_SEG - 1) / CLA_SEG;
    ClaIndex *ix = g->ix;
    int64_t *pos = br_malloc(((size_t)nd + 1) * sizeof(int64_t));
    int64_t *hdr = br_malloc(((size_t)nd + 1) * sizeof(int64_t));
    int64_t *seg = br_malloc(((size_t)nd + 1) * sizeof(int64_t));
    ix->ptr = br_malloc(((size_t)nd + 1) * sizeof(int64_t));
    bool ok = pos && hdr && seg && ix->ptr;
    if (ok) {
        ix->ptr[0] = 0;
        for (int32_t t = 0; t < nd; t++) ix->ptr[t + 1] = ix->ptr[t] + nseg + g->counts[t];
        ix->data = br_malloc((size_t)ix->ptr[nd] * sizeof(uint16_t) + 2);
        ok = ix->data != NULL;
    }
    if (ok) {
        for (int32_t t = 0; t < nd; t++) {
            hdr[t] = ix->ptr[t];
            ix->data[hdr[t]] = 0;
            pos[t] = hdr[t] + 1;
            seg[t] = 0;
        }
        for (int64_t i = 0; i < n; i++) {
            int32_t t = map[x->code[i]];
            if (t < 0) continue;
            int64_t s = i / CLA_SEG;
            while (seg[t] < s) { seg[t]++; hdr[t] = pos[t]; ix->data[pos[t]++] = 0; }
            ix->data[pos[t]++] = (uint16_t)(i - s * CLA_SEG);
            ix->data[hdr[t]]++;
        }
        for (int32_t t = 0; t < nd; t++)
            while (seg[t] < nseg - 1) { seg[t]++; ix->data[pos[t]++] = 0; }
    }
    free(pos);
    free(hdr);
    free(seg);
    return ok;
}

static bool build_rle(const Ext *x, int64_t n, const int32_t *map, ClaGroup *g)
{
    int32_t nd = g->ndict;
    ClaIndex *ix = g->ix;
    int64_t *np = br_calloc((size_t)nd + 1, sizeof(int64_t));
    int64_t *end = br_calloc((size_t)nd + 1, sizeof(int64_t));
    ix->ptr = br_malloc(((size_t)nd + 1) * sizeof(int64_t));
    bool ok = np && end && ix->ptr;
    /* pass 1: pairs per tuple; pass 2: the pairs */
    for (int pass = 0; pass < 2 && ok; pass++) {
        if (pass == 1) {
            ix->ptr[0] = 0;
            for (int32_t t = 0; t < nd; t++) ix->ptr[t + 1] = ix->ptr[t] + 2 * np[t];
            ix->data = br_malloc((size_t)ix->ptr[nd] * sizeof(uint16_t) + 2);
            if (!(ok = ix->data != NULL)) break;
            for (int32_t t = 0; t < nd; t++) { np[t] = ix->ptr[t]; end[t] = 0; }
        }
        for (int64_t i = 0; i < n;) {
            int64_t j = run_end(x->code, i, n);
            int32_t t = map[x->code[i]];
            if (t >= 0 && pass == 0) {
                np[t] += rle_pairs(i - end[t], j - i);
            } else if (t >= 0) {
                int64_t gap = i - end[t], len = j - i;
                uint16_t *d = ix->data;
                while (gap > CLA_U16) { d[np[t]++] = CLA_U16; d[np[t]++] = 0; gap -= CLA_U16; }
                int64_t l = len < CLA_U16 ? len : CLA_U16;
                d[np[t]++] = (uint16_t)gap;
                d[np[t]++] = (uint16_t)l;
                for (len -= l; len > 0; len -= l) {
                    l = len < CLA_U16 ? len : CLA_U16;
                    d[np[t]++] = 0;
                    d[np[t]++] = (uint16_t)l;
                }
            }
            if (t >= 0) end[t] = j;
            i = j;
        }
    }
    free(np);
    free(end);
    return ok;
}

/* The group of enc from x (NULL without memory). */
static ClaGroup *build_group(const Ext *x, int64_t n, ClaEnc enc)
{
    int32_t nd = x->ts.n;
    bool sparse_safe = enc == CLA_OLE || enc == CLA_RLE;
    int32_t gnd = enc == CLA_EMPTY ? 0 : sparse_safe ? nd - (x->zero_id >= 0) : nd;
    ClaGroup *g = cla_group_new(enc, x->nc, gnd);
    int32_t *map = br_malloc(((size_t)nd + 1) * sizeof(int32_t));
    if (!g || !map) { free(map); cla_group_release(g); return NULL; }
    memcpy(g->cols, x->cols, (size_t)x->nc * sizeof(int32_t));
    int32_t k = 0;
    for (int32_t t = 0; t < nd; t++) {
        if (enc == CLA_EMPTY || (sparse_safe && t == x->zero_id)) { map[t] = -1; continue; }
        memcpy(g->dict + (int64_t)k * x->nc, x->ts.tup + (int64_t)t * x->nc, (size_t)x->nc * sizeof(double));
        g->counts[k] = x->cnt[t];
        map[t] = k++;
    }
    bool ok = true;
    if (enc == CLA_DDC1 || enc == CLA_DDC2 || sparse_safe) {
        ok = (g->ix = cla_index_new()) != NULL;
        if (ok && enc == CLA_DDC1) {
            ok = (g->ix->c1 = br_malloc((size_t)n + 1)) != NULL;
            for (int64_t i = 0; ok && i < n; i++) g->ix->c1[i] = (uint8_t)map[x->code[i]];
        } else if (ok && enc == CLA_DDC2) {
            ok = (g->ix->c2 = br_malloc((size_t)n * 2 + 2)) != NULL;
            for (int64_t i = 0; ok && i < n; i++) g->ix->c2[i] = (uint16_t)map[x->code[i]];
        } else if (ok && enc == CLA_OLE) ok = build_ole(x, n, map, g);
        else if (ok) ok = build_rle(x, n, map, g);
    }
    free(map);
    if (!ok) { cla_group_release(g); return NULL; }
    return g;
}

ClaGroup *cla_group_rows(const ClaGroup *g, int64_t rl, int64_t ru, BrErr *e)
{
    int64_t n = ru - rl;
    Ext x;
    memset(&x, 0, sizeof x);
    x.nc = g->ncols;
    x.cols = g->cols;
    x.zero_id = -1;
    ClaIter it;
    bool it_ok = false;
    int32_t *map = br_malloc(((size_t)g->ndict + 1) * sizeof(int32_t));   /* old tuple (ndict: zero) -> new */
    double *zero = br_calloc((size_t)g->ncols + 1, sizeof(double));
    x.code = x.code_blk = br_alloc_aligned((size_t)n * sizeof(int32_t) + 4);
    bool ok = map && zero && x.code && ts_init(&x.ts, g->ncols, 64) && (it_ok = cla_iter_init(&it, g, rl));
    if (ok) {
        for (int32_t t = 0; t <= g->ndict; t++) map[t] = -1;
        /* codes of the range; tuples numbered as they first occur, so
         * tuples absent from the range leave the dictionary */
        for (int64_t lo = 0; lo < n && ok; lo += CLA_BLK) {
            int64_t len = n - lo < CLA_BLK ? n - lo : CLA_BLK;
            cla_iter_next(&it, len, x.code + lo);
            for (int64_t i = lo; i < lo + len && ok; i++) {
                int32_t t = x.code[i] < 0 ? g->ndict : x.code[i];
                if (map[t] < 0) map[t] = ts_id(&x.ts, t == g->ndict ? zero : g->dict + (int64_t)t * g->ncols);
                ok = map[t] >= 0;   /* -1: more than MAX_DICT tuples with the zero one */
                x.code[i] = map[t];
            }
        }
    }
    ClaGroup *r = NULL;
    if (ok && ext_stats(&x, n)) {
        double bytes;
        ClaEnc enc = choose(&x, n, &bytes);
        if (enc == CLA_UNC)   /* a slice of a compressed group stays compressed */
            enc = x.ts.n <= 256 ? CLA_DDC1 : CLA_DDC2;
        r = build_group(&x, n, enc);
    }
    if (it_ok) cla_iter_free(&it);
    ext_free(&x);
    free(map);
    free(zero);
    if (!r && !(x.ts.n >= MAX_DICT)) br_err(e, BR_ENOMEM, "out of memory");
    return r;
}

/* Which uncompressed columns (unc[j], nz[j] non-zeros of n rows) form
 * a sparse UNC group apart (sp[j]): those under the sparsity turn point,
 * when as one group they are sparse by the block rule and there are
 * other columns (else none: one group, as before). Returns their count. */
static int unc_sparse_cols(int64_t n, int64_t m, const bool *unc, const int64_t *nz, bool *sp)
{
    int nsp = 0, nu = 0;
    int64_t z = 0;
    for (int64_t j = 0; j < m; j++) {
        sp[j] = unc[j] && (double)nz[j] < MB_SPARSITY_TURN_POINT * (double)n;
        nu += unc[j];
        nsp += sp[j];
        z += sp[j] ? nz[j] : 0;
    }
    if (nsp == 0 || nsp == nu || !mb_should_be_sparse(n, nsp, z)) {
        memset(sp, 0, (size_t)m * sizeof(bool));
        nsp = 0;
    }
    return nsp;
}

/* The uncompressed columns of x (unc[j]) into cols: those of the sparse
 * group (unc_sparse_cols) first, then the others, each ascending;
 * returns the sparse group's count, *nu all. Kept apart, sparse columns
 * beside dense ones are stored sparse (docs/cla.md "Uncompressed
 * columns"); before, one UNC group held them all, dense when the dense
 * columns made it so. */
static int unc_split(const MB *x, const bool *unc, int32_t *cols, int *nu)
{
    int64_t m = x->cols, n = x->rows;
    int64_t *nz = br_calloc((size_t)m + 1, sizeof(int64_t));
    bool *sp = br_calloc((size_t)m + 1, sizeof(bool));
    int nsp = 0, q = 0;
    *nu = 0;
    for (int64_t j = 0; j < m; j++) *nu += unc[j];
    if (!nz || !sp) {   /* no memory for the counts: one group, as before */
        for (int64_t j = 0; j < m; j++)
            if (unc[j]) cols[q++] = (int32_t)j;
        free(nz);
        free(sp);
        return 0;
    }
    if (x->sparse)
        for (int64_t k = 0; k < x->rp[n]; k++) nz[x->ci[k]]++;
    else
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < m; j++) nz[j] += unc[j] && x->d[i * m + j] != 0;
    nsp = unc_sparse_cols(n, m, unc, nz, sp);
    for (int pass = 0; pass < 2; pass++)
        for (int64_t j = 0; j < m; j++)
            if (unc[j] && sp[j] == (pass == 0)) cols[q++] = (int32_t)j;
    free(nz);
    free(sp);
    return nsp;
}

/* One UNC group of the columns cols[0..nc) of x. */
static ClaGroup *unc_group(const MB *x, const int32_t *cols, int nc, BrErr *e)
{
    ClaGroup *g = cla_group_new(CLA_UNC, nc, 0);
    int32_t *pos = br_malloc(((size_t)x->cols + 1) * sizeof(int32_t));
    if (!g || !pos) goto oom;
    memcpy(g->cols, cols, (size_t)nc * sizeof(int32_t));
    memset(pos, 0xff, ((size_t)x->cols + 1) * sizeof(int32_t));
    for (int j = 0; j < nc; j++) pos[cols[j]] = j;
    int64_t n = x->rows;
    MB *u;
    if (!x->sparse) {
        u = mb_dense_uninit(n, nc, e);
        if (!u) goto fail;
        for (int64_t i = 0; i < n; i++)
            for (int j = 0; j < nc; j++) u->d[i * nc + j] = x->d[i * x->cols + cols[j]];
        mb_recount_nnz(u);
    } else {
        /* room for the group's non-zeros only (x's all made a CSR group
         * of some of its columns as large as x: mb_bytes counts room) */
        int64_t gnz = 0;
        for (int64_t q = 0; q < x->rp[n]; q++) gnz += pos[x->ci[q]] >= 0;
        u = mb_sp_alloc(n, nc, gnz, e);
        if (!u) goto fail;
        int64_t k = 0;
        for (int64_t i = 0; i < n; i++) {
            for (int64_t q = x->rp[i]; q < x->rp[i + 1]; q++)
                if (pos[x->ci[q]] >= 0) { u->ci[k] = pos[x->ci[q]]; u->v[k] = x->v[q]; k++; }
            u->rp[i + 1] = k;
        }
        mb_sp_done(u, k);
    }
    free(pos);
    if (!(g->unc = mb_finish(u, e))) { cla_group_release(g); return NULL; }
    return g;
oom:
    br_err(e, BR_ENOMEM, "out of memory");
fail:
    free(pos);
    cla_group_release(g);
    return NULL;
}

/* ---- statistics ---- */

static ClaStats stats_default = {.lock = PTHREAD_MUTEX_INITIALIZER};
static _Thread_local ClaStats *stats_bound;

void cla_stats_init(ClaStats *s)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->lock, NULL);
}

void cla_stats_destroy(ClaStats *s) { pthread_mutex_destroy(&s->lock); }

ClaStats *cla_stats_bind(ClaStats *s)
{
    ClaStats *prev = stats_bound;
    stats_bound = s;
    return prev;
}

static ClaStats *cur(void) { return stats_bound ? stats_bound : &stats_default; }

void cla_stats_op(const char *name)
{
    ClaStats *s = cur();
    pthread_mutex_lock(&s->lock);
    int i = 0;
    while (i < 32 && s->opname[i] && strcmp(s->opname[i], name)) i++;
    if (i < 32) {
        s->opname[i] = name;
        s->opcount[i]++;
    }
    pthread_mutex_unlock(&s->lock);
}

void cla_stats_decompress(int64_t ns)
{
    ClaStats *s = cur();
    pthread_mutex_lock(&s->lock);
    s->dec_n++;
    s->dec_ns += ns;
    pthread_mutex_unlock(&s->lock);
}

void cla_stats_lazy(ClaLazy what)
{
    ClaStats *s = cur();
    pthread_mutex_lock(&s->lock);
    s->lazy[what]++;
    pthread_mutex_unlock(&s->lock);
}

void cla_stats_read(int64_t blocks, int64_t held)
{
    ClaStats *s = cur();
    pthread_mutex_lock(&s->lock);
    s->rd_n++;
    s->rd_stream += blocks > 0;
    s->rd_blocks += blocks;
    if (blocks > 0 && held > s->rd_held) s->rd_held = held;
    pthread_mutex_unlock(&s->lock);
}

static void stats_compress(int64_t ns, size_t in, size_t out, int64_t coded, int64_t hashed)
{
    ClaStats *s = cur();
    pthread_mutex_lock(&s->lock);
    s->n++;
    s->coded += coded;
    s->hashed += hashed;
    s->ns += ns;
    s->in_bytes += (int64_t)in;
    s->out_bytes += (int64_t)out;
    pthread_mutex_unlock(&s->lock);
}

void cla_print_stats(ClaStats *s, FILE *f)
{
    pthread_mutex_lock(&s->lock);
    if (s->n) {
        fprintf(f, "CLA compressions:\t\t%lld (%.3f sec, %.1f MB -> %.1f MB, ratio %.2f).\n", (long long)s->n,
                (double)s->ns / 1e9, (double)s->in_bytes / 1e6, (double)s->out_bytes / 1e6,
                s->out_bytes ? (double)s->in_bytes / (double)s->out_bytes : 0.0);
        fprintf(f, "CLA group rows coded:\t\t%lld (%lld hashed).\n", (long long)s->coded, (long long)s->hashed);
        fprintf(f, "CLA decompressions:\t\t%lld (%.3f sec).\n", (long long)s->dec_n, (double)s->dec_ns / 1e9);
        fprintf(f, "CLA compressed operations:\t");
        for (int i = 0; i < 32 && s->opname[i]; i++)
            fprintf(f, "%s%s=%lld", i ? ", " : "", s->opname[i], (long long)s->opcount[i]);
        fprintf(f, "\n");
    }
    if (s->rd_n)
        fprintf(f, "CLA reads past the budget:\t%lld (%lld compressed as read, %lld row blocks; %.3f MB held at "
                "most).\n", (long long)s->rd_n, (long long)s->rd_stream, (long long)s->rd_blocks,
                (double)s->rd_held / 1e6);
    if (s->lazy[0] || s->lazy[1] || s->lazy[2])
        fprintf(f, "CLA deferred compress():\t%lld compressed, %lld declined, %lld shared.\n",
                (long long)s->lazy[CLA_LAZY_COMPRESSED], (long long)s->lazy[CLA_LAZY_DECLINED],
                (long long)s->lazy[CLA_LAZY_SHARED]);
    pthread_mutex_unlock(&s->lock);
}

/* ---- compression ---- */

/* Sparse columns priced beside one shared CSR group: choose() prices a
 * column's uncompressed form alone (dense, or CSR with row pointers of
 * its own), so a sparse column of many distinct values took DDC2 or RLE
 * where several of them in one CSR group (one set of row pointers, 12
 * bytes a non-zero) are smaller: 4 random columns of 20% non-zeros,
 * 300,000 rows, DDC2 about 6.2 MB against about 5.3 MB. The candidates:
 * compressed groups of one column under the sparsity turn point (the
 * columns unc_split keeps apart), by their saving a non-zero (exact size
 * less 12 bytes a non-zero, most first); the prefix of two or more that
 * is sparse by the block rule and saves the most against the estimated
 * CSR size (its row pointers counted once, even where sparse columns
 * left uncompressed already pay them) leaves compression (unc[] set, its
 * groups released). bytes[k], nnz[k]: group k's exact size and non-zero
 * cells. Returns the columns moved. */
static int csr_share(int64_t n, const ClaPlan *p, ClaGroup **gs, const double *bytes, const int64_t *nnz, bool *unc)
{
    int G = p->ngroups;
    int *cand = br_malloc(((size_t)G + 1) * sizeof(int));
    bool *one = br_calloc((size_t)G + 1, sizeof(bool));
    double *z = br_malloc(((size_t)G + 1) * sizeof(double));
    int best_n = 0;
    if (cand && one && z) {   /* (else the layout as chosen: only smaller otherwise) */
        for (int k = 0; k < G; k++) {
            one[k] = csr_one(gs[k]);
            z[k] = (double)nnz[k];
        }
        double save;
        best_n = csr_pick(n, G, one, bytes, z, cand, &save);
    }
    for (int i = 0; i < best_n; i++) {
        int k = cand[i];
        unc[gs[k]->cols[0]] = true;
        cla_group_release(gs[k]);
        gs[k] = NULL;
    }
    free(cand);
    free(one);
    free(z);
    return best_n;
}

MB *cla_compress(const MB *x, const ClaPlanOpts *o, BrErr *e)
{
    if (x->cmb || x->rows == 0 || x->cols == 0) return mb_retain((MB *)x);
    /* a device-only block (a GPU result a loop reads) lands first: the
     * planner samples its host cells */
    if (mb_host(x, e)) return NULL;
    int64_t t0 = br_now_ns();
    ClaPlan p;
    if (cla_plan(x, o, &p, e)) return NULL;
    size_t in_bytes = mb_bytes(x);
    if (!o->force && p.est_bytes * o->min_ratio > (double)in_bytes) {
        cla_plan_free(&p);
        return mb_retain((MB *)x);
    }
    int64_t n = x->rows;
    ClaGroup **gs = br_calloc((size_t)p.ngroups + 2, sizeof *gs);
    bool *unc = br_calloc((size_t)x->cols + 1, sizeof(bool));
    bool ok = gs && unc;
    if (ok && p.unc_group >= 0)
        for (int q = p.start[p.unc_group]; q < p.start[p.unc_group + 1]; q++) unc[p.cols[q]] = true;
    /* every group's codes in one pass over x per thread: a dense x by
     * blocks of rows, a sparse x by its rows' non-zeros */
    Ext *ex = br_calloc((size_t)p.ngroups + 1, sizeof(Ext));
    bool *exok = br_calloc((size_t)p.ngroups + 1, sizeof(bool));
    double *gbytes = br_calloc((size_t)p.ngroups + 1, sizeof(double));   /* exact sizes (csr_share) */
    int64_t *gnnz = br_calloc((size_t)p.ngroups + 1, sizeof(int64_t));
    int64_t coded = 0, hashed = 0;   /* group rows coded, and those hashed */
    int32_t *codes = br_alloc_aligned((size_t)p.ngroups * (size_t)code_stride(n) * sizeof(int32_t));
    ok = ok && ex && exok && gbytes && gnnz && codes &&
         (x->sparse ? extract_sparse(x, &p, ex, exok, codes) : extract_dense(x, &p, ex, exok, codes));
    const bool par = ok && br_par((double)(n * x->cols));
#pragma omp parallel num_threads(br_threads()) if (par)
    {
#pragma omp for schedule(dynamic, 1)
        for (int k = 0; k < p.ngroups; k++) {
            if (k == p.unc_group || !ok) continue;
            const int32_t *cols = p.cols + p.start[k];
            int nc = p.start[k + 1] - p.start[k];
            double bytes;
            if (exok[k] && ext_stats(&ex[k], n)) {
                ClaEnc enc = choose(&ex[k], n, &bytes);
                if (o->enc >= 0 && enc != CLA_EMPTY && enc != CLA_CONST) enc = forced(&ex[k], o->enc);
                if (enc != CLA_UNC && !(gs[k] = build_group(&ex[k], n, enc))) ok = false;
                gbytes[k] = bytes;
                gnnz[k] = ex[k].nnz_cells;
            }
            int64_t h = ex[k].hashed;
#pragma omp atomic
            hashed += h;
#pragma omp atomic
            coded += n;
            ext_free(&ex[k]);
            if (!gs[k] && ok)
                for (int j = 0; j < nc; j++) unc[cols[j]] = true;
        }
    }
    for (int k = 0; ex && k < p.ngroups; k++) ext_free(&ex[k]);   /* those not reached */
    br_free_aligned(codes);
    free(ex);
    free(exok);
    if (ok && o->enc < 0) csr_share(n, &p, gs, gbytes, gnnz, unc);
    free(gbytes);
    free(gnnz);
    int ng = 0;
    MB *r = NULL;
    if (ok) {
        for (int k = 0; k < p.ngroups; k++)
            if (gs[k]) gs[ng++] = gs[k];
        for (int k = ng; k < p.ngroups + 2; k++) gs[k] = NULL;   /* moved: released once on an error */
        /* the plan's columns are no longer needed: the uncompressed ones,
         * sparse columns apart from dense ones where there are both */
        int nu = 0, nsp = unc_split(x, unc, p.cols, &nu);
        if (nsp > 0 && nsp < nu) {
            if (!(gs[ng++] = unc_group(x, p.cols, nsp, e))) ok = false;
            else if (!(gs[ng++] = unc_group(x, p.cols + nsp, nu - nsp, e))) ok = false;
        } else if (nu && !(gs[ng++] = unc_group(x, p.cols, nu, e))) ok = false;
    }
    if (ok) {
        r = cmb_new(x->rows, x->cols, gs, ng, e);
        gs = NULL;
    }
    if (gs)
        for (int k = 0; k < p.ngroups + 2; k++) cla_group_release(gs[k]);
    free(gs);
    free(unc);
    cla_plan_free(&p);
    if (!r) {
        if (!e->code) br_err(e, BR_ENOMEM, "out of memory in compression");
        return NULL;
    }
    size_t out_bytes = cmb_bytes(r);
    if (!o->force && (double)out_bytes * o->min_ratio > (double)in_bytes) {
        mb_release(r);
        return mb_retain((MB *)x);
    }
    stats_compress(br_now_ns() - t0, in_bytes, out_bytes, coded, hashed);
    return r;
}

/* ---- compression of a matrix read by blocks of rows ---- */

/* A group's codes kept across blocks: one byte a row while the group has
 * at most 256 tuples, two past that (MAX_DICT fits); dead: the group
 * overflowed or chose UNC, its columns kept as values (ucol). */
typedef struct SGroup {
    uint8_t *c1;
    uint16_t *c2;
    int32_t *tmp;      /* a chunk's codes (ext_rows) */
    bool dead, over;
} SGroup;

typedef struct Stream {
    ClaRowsFn rd;
    void *arg;
    int64_t n, m, ch;  /* rows, columns, rows of a chunk (cb's stride) */
    ClaPlan p;
    Ext *ex;
    SGroup *sg;
    double **ucol;     /* per column of x: its values when UNC (ucap rows), else NULL */
    int64_t ucap;      /* rows the value columns have room for (grown as rows come) */
    int64_t vnnz;      /* non-zeros written into the value columns */
    int32_t *qpos;     /* column of x -> its position in the plan's order */
    double *cb;        /* a chunk, column-major in the plan's order */
} Stream;

/* Bytes the stream keeps: codes, tuples, values, the chunk. */
static int64_t stream_bytes(const Stream *s)
{
    int64_t b = s->m * s->ch * 8;
    for (int k = 0; k < s->p.ngroups; k++) {
        const SGroup *g = &s->sg[k];
        b += (g->c1 ? s->n : 0) + (g->c2 ? 2 * s->n : 0) + (g->tmp ? s->ch * 4 : 0);
        b += (int64_t)s->ex[k].ts.cap * (s->ex[k].nc * 8 + 8);
    }
    for (int64_t j = 0; j < s->m; j++) b += s->ucol[j] ? s->ucap * 8 : 0;
    return b;
}

/* A lower bound of the bytes of the UNC group the value columns make:
 * their block with the non-zeros seen so far (mb_est_size grows with
 * them), without its header. */
static double stream_values(const Stream *s)
{
    int64_t nu = 0;
    for (int64_t j = 0; j < s->m; j++) nu += s->ucol[j] != NULL;
    return nu ? mb_est_size(s->n, nu, s->vnnz) - 64 : 0;
}

/* Room for rows [0, rows) in every value column (grown by half at
 * least, to at most n rows). */
static bool stream_grow(Stream *s, int64_t rows)
{
    if (rows <= s->ucap) return true;
    int64_t cap = BR_MIN(s->n, BR_MAX(rows, s->ucap + s->ucap / 2));
    for (int64_t j = 0; j < s->m; j++) {
        if (!s->ucol[j]) continue;
        double *v = br_realloc(s->ucol[j], (size_t)cap * sizeof(double) + 8);
        if (!v) return false;
        s->ucol[j] = v;
    }
    s->ucap = cap;
    return true;
}

/* The sample the plan is made from: parts row ranges spread evenly over
 * the matrix, rows in all (parts 0: the first rows). */
static MB *stream_sample(Stream *s, int parts, int64_t rows, int64_t *held, BrErr *e)
{
    int64_t n = s->n, m = s->m;
    if (rows > n) rows = n;
    if (parts < 1) parts = 1;
    if (parts > rows) parts = (int)rows;
    MB *smp = mb_sp_new(rows, m, rows * BR_MIN(m, 64), e);
    int64_t at = 0;
    for (int i = 0; smp && i < parts; i++) {
        int64_t len = rows / parts + (i < rows % parts);
        int64_t r0 = parts == 1 ? 0 : (n - len) * i / (parts - 1);
        MB *b = s->rd(s->arg, r0, r0 + len, e);
        if (!b) { mb_release(smp); return NULL; }
        if (mb_bytes(b) + mb_bytes(smp) > (size_t)*held) *held = (int64_t)(mb_bytes(b) + mb_bytes(smp));
        for (int64_t r = 0; r < len && !e->code; r++)
            if (b->sparse) {
                for (int64_t q = b->rp[r]; q < b->rp[r + 1] && !e->code; q++)
                    mb_sp_append(smp, at + r, b->ci[q], b->v[q], e);
            } else {
                for (int64_t j = 0; j < m && !e->code; j++)
                    if (b->d[r * m + j] != 0) mb_sp_append(smp, at + r, j, b->d[r * m + j], e);
            }
        mb_release(b);
        at += len;
        if (e->code) { mb_release(smp); return NULL; }
    }
    if (!smp) return NULL;
    mb_sp_finish(smp);
    return mb_finish(smp, e);
}

/* The values of group k's column j (position in the group) for rows
 * [0, rows) from its codes, into a new UNC column. */
static bool stream_unc(Stream *s, int k, int64_t rows)
{
    const Ext *x = &s->ex[k];
    const SGroup *g = &s->sg[k];
    for (int j = 0; j < x->nc; j++) {
        int32_t c = x->cols[j];
        double *v = s->ucol[c] = br_malloc((size_t)s->ucap * sizeof(double) + 8);
        if (!v) return false;
        for (int64_t i = 0; i < rows; i++) {
            int32_t t = g->c2 ? g->c2[i] : g->c1[i];
            v[i] = x->ts.tup[(int64_t)t * x->nc + j];
            s->vnnz += v[i] != 0;
        }
    }
    return true;
}

static void sgroup_free(Stream *s, int k)
{
    SGroup *g = &s->sg[k];
    free(g->c1);
    free(g->c2);
    free(g->tmp);
    g->c1 = NULL;
    g->c2 = NULL;
    g->tmp = NULL;
    ext_free(&s->ex[k]);
}

/* Codes of the chunk's rows [base, base + len) for group k, kept narrow
 * (widened when the group passes 256 tuples); false: overflow or no
 * memory (the group becomes UNC). */
static bool stream_code(Stream *s, int k, int64_t base, int64_t len)
{
    Ext *x = &s->ex[k];
    SGroup *g = &s->sg[k];
    x->code = g->tmp;
    if (!ext_rows(x, s->cb + (int64_t)s->p.start[k] * s->ch, s->ch, 0, len)) return false;
    if (!g->c2 && x->ts.n > 256) {
        if (!(g->c2 = br_malloc((size_t)s->n * 2 + 2))) return false;
        for (int64_t i = 0; i < base; i++) g->c2[i] = g->c1[i];
        free(g->c1);
        g->c1 = NULL;
    }
    if (g->c2)
        for (int64_t i = 0; i < len; i++) g->c2[base + i] = (uint16_t)g->tmp[i];
    else
        for (int64_t i = 0; i < len; i++) g->c1[base + i] = (uint8_t)g->tmp[i];
    return true;
}

/* Rows [r0, r0 + b->rows) of block b into the stream, by chunks. */
static bool stream_block(Stream *s, const MB *b, int64_t r0)
{
    int64_t m = s->m, ch = s->ch, len = b->rows;
    int ng = s->p.ngroups;
    for (int64_t c0 = 0; c0 < len; c0 += ch) {
        int64_t cl = BR_MIN(ch, len - c0), base = r0 + c0;
        if (!stream_grow(s, base + cl)) return false;
        if (b->sparse) {
            memset(s->cb, 0, (size_t)(m * ch) * sizeof(double));
            for (int64_t r = 0; r < cl; r++)
                for (int64_t q = b->rp[c0 + r]; q < b->rp[c0 + r + 1]; q++)
                    s->cb[(int64_t)s->qpos[b->ci[q]] * ch + r] = b->v[q];
        } else {
            for (int64_t r = 0; r < cl; r++) {
                const double *row = b->d + (c0 + r) * m;
                for (int64_t q = 0; q < m; q++) s->cb[q * ch + r] = row[s->p.cols[q]];
            }
        }
        bool par = br_par((double)(cl * m)) && ng > 1;
#pragma omp parallel for schedule(dynamic, 1) num_threads(br_threads()) if (par)
        for (int k = 0; k < ng; k++)
            if (k != s->p.unc_group && !s->sg[k].dead && !stream_code(s, k, base, cl)) s->sg[k].over = true;
        for (int k = 0; k < ng; k++) {
            SGroup *g = &s->sg[k];
            if (!g->over) continue;
            g->over = false;
            g->dead = true;
            if (!stream_unc(s, k, base)) return false;
            sgroup_free(s, k);
        }
        for (int64_t q = 0; q < m; q++) {
            double *v = s->ucol[s->p.cols[q]];
            if (!v) continue;
            memcpy(v + base, s->cb + q * ch, (size_t)cl * sizeof(double));
            for (int64_t i = 0; i < cl; i++) s->vnnz += v[base + i] != 0;
        }
    }
    return true;
}

/* The group of group k from its narrow codes (NULL: UNC is smaller,
 * its columns become values; *ok false without memory); its exact size
 * and non-zero cells into *bytes, *nnz (csr_pick). */
static ClaGroup *stream_group(Stream *s, int k, const ClaPlanOpts *o, bool *ok, double *bytes, double *nnz)
{
    Ext *x = &s->ex[k];
    SGroup *g = &s->sg[k];
    int64_t n = s->n;
    int32_t *full = br_malloc((size_t)n * sizeof(int32_t) + 4);
    if (!full) { *ok = false; return NULL; }
    for (int64_t i = 0; i < n; i++) full[i] = g->c2 ? g->c2[i] : g->c1[i];
    x->code = full;
    ClaGroup *r = NULL;
    if (ext_stats(x, n)) {
        ClaEnc enc = choose(x, n, bytes);
        *nnz = (double)x->nnz_cells;
        if (o->enc >= 0 && enc != CLA_EMPTY && enc != CLA_CONST) enc = forced(x, o->enc);
        if (enc != CLA_UNC && !(r = build_group(x, n, enc))) *ok = false;
    } else *ok = false;
    free(full);
    x->code = NULL;
    return r;
}

/* The UNC group of the columns with values (ascending) of the sparse
 * group (unc_sparse_cols) or the others, or NULL with *ok unchanged when
 * there is none: called for both, sparse columns beside dense ones stay
 * sparse (as unc_split). The sparse group is built as CSR from the
 * columns, never dense. */
static ClaGroup *stream_unc_group(Stream *s, bool sparse, bool *ok, BrErr *e)
{
    int nu = 0;
    int64_t nnz = 0, n = s->n;
    bool *in = br_calloc((size_t)s->m + 1, sizeof(bool)), *has = br_calloc((size_t)s->m + 1, sizeof(bool));
    int64_t *nz = br_calloc((size_t)s->m + 1, sizeof(int64_t));
    if (!in || !has || !nz) { free(in); free(has); free(nz); *ok = false; return NULL; }
    for (int64_t j = 0; j < s->m; j++) {
        has[j] = s->ucol[j] != NULL;
        for (int64_t i = 0; has[j] && i < n; i++) nz[j] += s->ucol[j][i] != 0;
    }
    unc_sparse_cols(n, s->m, has, nz, in);
    for (int64_t j = 0; j < s->m; j++) {
        in[j] = has[j] && in[j] == sparse;
        nu += in[j];
        nnz += in[j] ? nz[j] : 0;
    }
    free(has);
    free(nz);
    ClaGroup *g = nu ? cla_group_new(CLA_UNC, nu, 0) : NULL;
    MB *u = !g ? NULL : sparse ? mb_sp_alloc(n, nu, nnz, e) : mb_dense_uninit(n, nu, e);
    if (!u) {
        free(in);
        cla_group_release(g);
        if (nu) *ok = false;
        return NULL;
    }
    int q = 0;
    for (int64_t j = 0; j < s->m; j++)
        if (in[j]) g->cols[q++] = (int32_t)j;
    if (sparse) {
        int64_t k = 0;
        for (int64_t i = 0; i < n; i++) {
            for (int c = 0; c < nu; c++) {
                double v = s->ucol[g->cols[c]][i];
                if (v != 0) { u->ci[k] = c; u->v[k++] = v; }
            }
            u->rp[i + 1] = k;
        }
        mb_sp_done(u, k);
    } else {
        for (int c = 0; c < nu; c++)
            for (int64_t i = 0; i < n; i++) u->d[i * nu + c] = s->ucol[g->cols[c]][i];
        mb_recount_nnz(u);
    }
    for (int c = 0; c < nu; c++) {
        free(s->ucol[g->cols[c]]);
        s->ucol[g->cols[c]] = NULL;
    }
    free(in);
    if (!(g->unc = mb_finish(u, e))) { cla_group_release(g); *ok = false; return NULL; }
    return g;
}

ClaStreamOpts cla_stream_defaults(void)
{
    ClaStreamOpts so = {.blk_rows = 0, .sample_parts = 16, .sample_rows = 16384};
    return so;
}

MB *cla_compress_rows(ClaRowsFn rd, void *arg, int64_t n, int64_t m, const ClaPlanOpts *o, const ClaStreamOpts *so,
                      ClaStreamInfo *info, BrErr *e)
{
    memset(info, 0, sizeof *info);
    if (n <= 0 || m <= 0 || m > INT32_MAX) {
        info->declined = true;
        return NULL;
    }
    int64_t t0 = br_now_ns();
    Stream s = {.rd = rd, .arg = arg, .n = n, .m = m};
    int64_t blk = so->blk_rows > 0 ? so->blk_rows : BR_MAX(1, (8 << 20) / (8 * m));
    int64_t peak = 0;
    MB *smp = stream_sample(&s, so->sample_parts, BR_MAX(1, BR_MIN(so->sample_rows, blk)), &peak, e);
    if (!smp) return NULL;
    if (cla_plan(smp, o, &s.p, e)) { mb_release(smp); return NULL; }
    if (!o->force && s.p.est_bytes * o->min_ratio > (double)mb_bytes(smp)) {
        mb_release(smp);
        cla_plan_free(&s.p);
        info->declined = true;
        info->peak = peak;
        return NULL;
    }
    mb_release(smp);
    int ng = s.p.ngroups;
    s.ch = BR_MAX(16, BR_MIN(BR_MIN(EXT_BLK, blk), (256 << 10) / m));
    s.ucap = BR_MIN(n, blk);
    s.ex = br_calloc((size_t)ng + 1, sizeof(Ext));
    s.sg = br_calloc((size_t)ng + 1, sizeof(SGroup));
    s.ucol = br_calloc((size_t)m + 1, sizeof(double *));
    s.qpos = br_malloc((size_t)m * sizeof(int32_t) + 4);
    s.cb = br_malloc((size_t)(m * s.ch) * sizeof(double));
    bool ok = s.ex && s.sg && s.ucol && s.qpos && s.cb;
    for (int64_t q = 0; ok && q < m; q++) s.qpos[s.p.cols[q]] = (int32_t)q;
    for (int k = 0; ok && k < ng; k++) {
        int nc = s.p.start[k + 1] - s.p.start[k];
        const int32_t *cols = s.p.cols + s.p.start[k];
        if (k == s.p.unc_group) {
            for (int j = 0; ok && j < nc; j++) {
                ok = (s.ucol[cols[j]] = br_malloc((size_t)s.ucap * sizeof(double) + 8)) != NULL;
            }
            continue;
        }
        SGroup *g = &s.sg[k];
        ok = (g->tmp = br_malloc((size_t)s.ch * sizeof(int32_t))) && (g->c1 = br_malloc((size_t)n + 1)) &&
             ext_begin(&s.ex[k], &s.p, cols, nc, n, g->tmp);
    }
    int64_t nnz = 0, coded = 0, hashed = 0;
    for (int64_t r0 = 0; ok && r0 < n; r0 += blk) {
        int64_t r1 = BR_MIN(n, r0 + blk);
        MB *b = rd(arg, r0, r1, e);
        if (!b) { ok = false; break; }
        if (b->rows != r1 - r0 || b->cols != m || b->cmb) {
            br_err(e, BR_EIO, "a block of rows %lld..%lld read as %lldx%lld, not %lldx%lld", (long long)r0,
                   (long long)r1, (long long)b->rows, (long long)b->cols, (long long)(r1 - r0), (long long)m);
            mb_release(b);
            ok = false;
            break;
        }
        nnz += b->nnz;
        info->blocks++;
        ok = stream_block(&s, b, r0);
        peak = BR_MAX(peak, (int64_t)mb_bytes(b) + stream_bytes(&s));
        mb_release(b);
        if (ok && so->max_bytes > 0 && stream_values(&s) > so->max_bytes) {
            info->over = true;
            info->rows = r1;
            ok = false;
        }
    }
    ClaGroup **gs = ok ? br_calloc((size_t)ng + 2, sizeof *gs) : NULL;
    /* per group: exact size, non-zero cells, a csr_pick candidate (its
     * codes kept until the choice) */
    double *gbytes = br_calloc((size_t)ng + 1, sizeof(double)), *gnnz = br_calloc((size_t)ng + 1, sizeof(double));
    bool *one = br_calloc((size_t)ng + 1, sizeof(bool));
    int *cand = br_malloc(((size_t)ng + 1) * sizeof(int));
    ok = ok && gs && gbytes && gnnz && one && cand;
    int64_t built = 0;   /* bytes of the groups made */
    for (int k = 0; ok && k < ng; k++) {
        if (k == s.p.unc_group || s.sg[k].dead) continue;
        hashed += s.ex[k].hashed;
        coded += n;
        gs[k] = stream_group(&s, k, o, &ok, &gbytes[k], &gnnz[k]);
        if (gs[k]) built += (int64_t)cla_group_bytes(gs[k], n);
        peak = BR_MAX(peak, stream_bytes(&s) + 4 * n + built);
        if (ok && !gs[k]) {
            s.sg[k].dead = true;
            ok = stream_grow(&s, n) && stream_unc(&s, k, n);
            if (ok && so->max_bytes > 0 && stream_values(&s) > so->max_bytes) {
                info->over = true;
                info->rows = n;
                ok = false;
            }
        }
        one[k] = o->enc < 0 && csr_one(gs[k]) && gnnz[k] < MB_SPARSITY_TURN_POINT * (double)n;
        if (!one[k]) sgroup_free(&s, k);
    }
    /* sparse columns priced beside one shared CSR group (csr_share): the
     * chosen groups' columns become values, the CSR group's below */
    double save = 0;
    int moved = ok ? csr_pick(n, ng, one, gbytes, gnnz, cand, &save) : 0;
    for (int i = 0; ok && i < moved; i++) {
        int k = cand[i];
        built -= (int64_t)cla_group_bytes(gs[k], n);
        cla_group_release(gs[k]);
        gs[k] = NULL;
        s.sg[k].dead = true;
        ok = stream_grow(&s, n) && stream_unc(&s, k, n);
        peak = BR_MAX(peak, stream_bytes(&s) + built);
        if (ok && so->max_bytes > 0 && stream_values(&s) > so->max_bytes) {
            info->over = true;
            info->rows = n;
            ok = false;
        }
    }
    for (int k = 0; s.sg && k < ng; k++) sgroup_free(&s, k);
    free(gbytes);
    free(gnnz);
    free(one);
    free(cand);
    int nout = 0;
    MB *r = NULL;
    if (ok) {
        for (int k = 0; k < ng; k++)
            if (gs[k]) gs[nout++] = gs[k];
        for (int k = nout; k < ng + 2; k++) gs[k] = NULL;   /* moved: released once on an error */
        int64_t vals = stream_bytes(&s);
        for (int sp = 1; sp >= 0 && ok; sp--) {   /* sparse columns apart from dense ones */
            ClaGroup *u = stream_unc_group(&s, sp, &ok, e);
            if (u) gs[nout++] = u;
            if (u) built += (int64_t)cla_group_bytes(u, n);
            if (u) peak = BR_MAX(peak, built + vals);
        }
    }
    if (ok && (r = cmb_new(n, m, gs, nout, e))) gs = NULL;
    if (gs)
        for (int k = 0; k < ng + 2; k++) cla_group_release(gs[k]);
    free(gs);
    for (int k = 0; s.sg && k < ng; k++) sgroup_free(&s, k);
    for (int64_t j = 0; s.ucol && j < m; j++) free(s.ucol[j]);
    free(s.ex);
    free(s.sg);
    free(s.ucol);
    free(s.qpos);
    free(s.cb);
    cla_plan_free(&s.p);
    info->peak = peak;
    if (!r) {
        if (!e->code && !info->over) br_err(e, BR_ENOMEM, "out of memory in compression");
        return NULL;
    }
    stats_compress(br_now_ns() - t0, (size_t)mb_est_size(n, m, nnz), cmb_bytes(r), coded, hashed);
    return r;
}
