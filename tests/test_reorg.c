/* test_reorg.c: reorganization, indexing and grouping kernels (reorg.h)
 * against naive reference loops over mb_get, sweeping shapes, sparsity,
 * input formats and thread counts 1 and 2; plus the small examples of the
 * conformance cases (reorg_*, build_*, idx_*). */
#include "kernels/jhashset.h"
#include "t.h"
#include "kernels/reorg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng;

static double urand(void)
{
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (double)(rng >> 11) * (1.0 / 9007199254740992.0);
}

/* m x n, each cell non-zero with probability sp, values small integers
 * in [-6, 6] \ {0} (so ties and repeated values are common); the format
 * is forced to sparse or dense regardless of the format rule. */
static MB *gen(int64_t m, int64_t n, double sp, bool sparse, uint64_t seed)
{
    BrErr e = {0};
    MB *d = mb_dense(m, n, &e);
    rng = seed * 0x9E3779B97F4A7C15ull + 12345;
    for (int64_t i = 0; i < m * n; i++)
        if (urand() < sp) {
            double v = floor(urand() * 12) - 6;
            d->d[i] = v >= 0 ? v + 1 : v;
        }
    mb_recount_nnz(d);
    if (sparse) mb_make_sparse(d, &e);
    return d;
}

/* Copy of m in the given format (no format rule). */
static MB *as_fmt(const MB *m, bool sparse)
{
    BrErr e = {0};
    return sparse ? mb_to_sparse(m, &e) : mb_to_dense(m, &e);
}

static MB *from(const double *v, int64_t m, int64_t n)
{
    BrErr e = {0};
    MB *r = mb_dense(m, n, &e);
    if (m > 0 && n > 0) memcpy(r->d, v, (size_t)(m * n) * sizeof(double));
    mb_recount_nnz(r);
    return r;
}

/* Structural invariants of a kernel result; with rule, also the format
 * rule of mb_examine. */
static bool valid_fmt(const MB *r, bool rule)
{
    if (!r || r->refs != 1) return false;
    if (r->sparse) {
        if (r->rp[0] != 0 || r->rp[r->rows] != r->nnz) return false;
        for (int64_t i = 0; i < r->rows; i++) {
            if (r->rp[i + 1] < r->rp[i]) return false;
            for (int64_t k = r->rp[i]; k < r->rp[i + 1]; k++) {
                if (r->ci[k] < 0 || r->ci[k] >= r->cols || r->v[k] == 0) return false;
                if (k > r->rp[i] && r->ci[k] <= r->ci[k - 1]) return false;
            }
        }
    } else {
        int64_t c = 0;
        for (int64_t i = 0; i < r->rows * r->cols; i++) c += r->d[i] != 0;
        if (c != r->nnz) return false;
    }
    if (rule && r->rows * r->cols > 0) {
        bool want = mb_should_be_sparse(r->rows, r->cols, r->nnz) || (r->nnz == 0 && r->rows + 1 < r->rows * r->cols);
        if (want != r->sparse) return false;
    }
    return true;
}
static bool valid(const MB *r) { return valid_fmt(r, true); }

/* ------------------------------------------------------------ references */

static MB *ref_transpose(const MB *a)
{
    BrErr e = {0};
    MB *r = mb_dense(a->cols, a->rows, &e);
    for (int64_t i = 0; i < a->rows; i++)
        for (int64_t j = 0; j < a->cols; j++) mb_dset(r, j, i, mb_get(a, i, j));
    mb_recount_nnz(r);
    return r;
}

static MB *ref_rev(const MB *a)
{
    BrErr e = {0};
    MB *r = mb_dense(a->rows, a->cols, &e);
    for (int64_t i = 0; i < a->rows; i++)
        for (int64_t j = 0; j < a->cols; j++) mb_dset(r, a->rows - 1 - i, j, mb_get(a, i, j));
    mb_recount_nnz(r);
    return r;
}

static MB *ref_reshape(const MB *a, int64_t R, int64_t C, bool byrow)
{
    BrErr e = {0};
    MB *r = mb_dense(R, C, &e);
    int64_t n = R * C;
    for (int64_t k = 0; k < n; k++) {
        double v = byrow ? mb_get(a, k / a->cols, k % a->cols)
                         : mb_get(a, k % a->rows, k / a->rows);
        if (byrow) mb_dset(r, k / C, k % C, v);
        else mb_dset(r, k % R, k / R, v);
    }
    mb_recount_nnz(r);
    return r;
}

static MB *ref_tri(const MB *a, bool lower, bool diag, bool values)
{
    BrErr e = {0};
    MB *r = mb_dense(a->rows, a->cols, &e);
    for (int64_t i = 0; i < a->rows; i++)
        for (int64_t j = 0; j < a->cols; j++) {
            bool in = lower ? (j < i || (diag && j == i)) : (j > i || (diag && j == i));
            if (in) mb_dset(r, i, j, values ? mb_get(a, i, j) : 1);
        }
    mb_recount_nnz(r);
    return r;
}

static bool before(double x, double y, bool desc)
{
    if (isnan(x)) return false;
    if (isnan(y)) return true;
    return desc ? x > y : x < y;
}

static MB *ref_order(const MB *a, int64_t by, bool desc, bool idx)
{
    BrErr e = {0};
    int64_t m = a->rows;
    int64_t *p = malloc((size_t)(m + 1) * sizeof(int64_t));
    for (int64_t i = 0; i < m; i++) {
        int64_t j = i;
        while (j > 0 && before(mb_get(a, i, by), mb_get(a, p[j - 1], by), desc)) {
            p[j] = p[j - 1]; j--;
        }
        p[j] = i;
    }
    MB *r = mb_dense(m, idx ? 1 : a->cols, &e);
    for (int64_t i = 0; i < m; i++) {
        if (idx) mb_dset(r, i, 0, (double)(p[i] + 1));
        else for (int64_t j = 0; j < a->cols; j++) mb_dset(r, i, j, mb_get(a, p[i], j));
    }
    free(p);
    mb_recount_nnz(r);
    return r;
}

static MB *ref_rmempty(const MB *a, bool rows, const MB *sel, bool er)
{
    BrErr e = {0};
    int64_t len = rows ? a->rows : a->cols, kept = 0;
    int64_t *idx = malloc((size_t)(len + 1) * sizeof(int64_t));
    for (int64_t i = 0; i < len; i++) {
        bool k = false;
        if (sel) k = mb_get(sel, sel->cols == 1 ? i : 0, sel->cols == 1 ? 0 : i) != 0;
        else
            for (int64_t j = 0; j < (rows ? a->cols : a->rows); j++)
                if ((rows ? mb_get(a, i, j) : mb_get(a, j, i)) != 0) k = true;
        if (k) idx[kept++] = i;
    }
    MB *r;
    if (kept == 0) r = rows ? mb_dense(er ? 1 : 0, a->cols, &e) : mb_dense(a->rows, er ? 1 : 0, &e);
    else if (rows) {
        r = mb_dense(kept, a->cols, &e);
        for (int64_t i = 0; i < kept; i++)
            for (int64_t j = 0; j < a->cols; j++) mb_dset(r, i, j, mb_get(a, idx[i], j));
    } else {
        r = mb_dense(a->rows, kept, &e);
        for (int64_t i = 0; i < a->rows; i++)
            for (int64_t j = 0; j < kept; j++) mb_dset(r, i, j, mb_get(a, i, idx[j]));
    }
    free(idx);
    mb_recount_nnz(r);
    return r;
}

static MB *ref_replace(const MB *a, double pat, double rep)
{
    BrErr e = {0};
    MB *r = mb_dense(a->rows, a->cols, &e);
    for (int64_t i = 0; i < a->rows; i++)
        for (int64_t j = 0; j < a->cols; j++) {
            double x = mb_get(a, i, j);
            bool hit = isnan(pat) ? isnan(x) : x == pat;
            mb_dset(r, i, j, hit ? rep : x);
        }
    mb_recount_nnz(r);
    return r;
}

static MB *ref_unique(const MB *a)
{
    BrErr e = {0};
    double *v = malloc((size_t)(a->rows * a->cols + 1) * sizeof(double));
    int64_t n = 0;
    for (int64_t i = 0; i < a->rows; i++)
        for (int64_t j = 0; j < a->cols; j++) {
            double x = mb_get(a, i, j);
            bool seen = false;
            for (int64_t k = 0; k < n && !seen; k++)
                seen = v[k] == x || (isnan(v[k]) && isnan(x));
            if (!seen) v[n++] = x;
        }
    MB *r = from(v, n, 1);
    free(v);
    (void)e;
    return r;
}

/* Do column vectors r and w hold the same values (NaN equal to NaN),
 * in any order? */
static bool same_set(const MB *r, const MB *w)
{
    if (!r || !w || r->rows != w->rows || r->cols != 1 || w->cols != 1) return false;
    for (int64_t i = 0; i < r->rows; i++) {
        double x = mb_get(r, i, 0);
        bool hit = false;
        for (int64_t k = 0; k < w->rows && !hit; k++) {
            double y = mb_get(w, k, 0);
            hit = x == y || (isnan(x) && isnan(y));
        }
        if (!hit) return false;
    }
    return true;
}

/* FNV-1a 64 of the cells' bits, row-major (tests/data/HashSetRef.java). */
static uint64_t fnv_bits(const MB *m)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (int64_t i = 0; i < m->rows; i++)
        for (int64_t j = 0; j < m->cols; j++) {
            double x = mb_get(m, i, j);
            uint64_t b;
            memcpy(&b, &x, sizeof b);
            if (x != x) b = 0x7ff8000000000000ULL;
            h = (h ^ b) * 0x100000001b3ULL;
        }
    return h;
}

/* unique() in the order SystemDS returns it, Java's HashSet<Double>
 * iteration order: the expected orders were printed by
 * tests/data/HashSetRef.java on the JDK (1..1000 puts 8 and more keys in
 * a bucket, so tree buckets and their root-first order are exercised) */
static void unique_java_order(void)
{
    BrErr e = {0};
    MB *a = mb_dense(1000, 1, &e), *b = mb_dense(2000, 1, &e), *d = mb_dense(30, 40, &e);
    for (int i = 0; i < 1000; i++) a->d[i] = i + 1;
    for (int i = 0; i < 2000; i++) b->d[i] = (double)(i * 37 % 501);
    for (int i = 0; i < 30; i++)
        for (int j = 0; j < 40; j++) d->d[i * 40 + j] = (double)((i * 7 + j * 13 + i * j) % (10 + 3 * i));
    mb_recount_nnz(a); mb_recount_nnz(b); mb_recount_nnz(d);
    static const struct { int in, dir; uint64_t fnv; int64_t rows, cols; } want[] = {
        {0, 0, 0x284ecb178b17a745ULL, 1000, 1}, {1, 0, 0x4817b01c802e958fULL, 501, 1},
        {2, 1, 0xcbcf429a2fdd70e5ULL, 30, -1}, {2, 2, 0x44a4c29a2fdd70e5ULL, -1, 40}};
    const MB *ins[] = {a, b, d};
    for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
        MB *u = k_unique(ins[want[k].in], want[k].dir, &e);
        T_CHECK(u && (want[k].rows < 0 || u->rows == want[k].rows) && (want[k].cols < 0 || u->cols == want[k].cols) &&
                fnv_bits(u) == want[k].fnv, "unique case %zu: not Java's HashSet order (%llx)", k,
                u ? (unsigned long long)fnv_bits(u) : 0ULL);
        mb_release(u);
    }
    /* -0 and 0 are two values, NaNs one: 0, -0, 1, -1, NaN in Java's order */
    double c[] = {0.0, -0.0, NAN, 1.0, NAN, -1.0, 0.0};
    MB *cm = from(c, 7, 1);
    MB *u = k_unique(cm, 0, &e);
    const uint64_t cw[] = {0, 0x8000000000000000ULL, 4607182418800017408ULL, 0xbff0000000000000ULL,
                           0x7ff8000000000000ULL};
    bool ok = u && u->rows == 5;
    for (int i = 0; ok && i < 5; i++) {
        double x = mb_get(u, i, 0);
        uint64_t bb;
        memcpy(&bb, &x, sizeof bb);
        if (x != x) bb = 0x7ff8000000000000ULL;
        ok = bb == cw[i];
    }
    T_CHECK(ok, "unique of 0, -0, NaN, 1, -1: not Java's order");
    mb_release(u);
    /* SystemDS's UniqueRow test input: one row, 6 distinct values */
    double sk[] = {1, 1, 6, 9, 4, 2, 0, 9, 0, 0, 4, 4}, skw[] = {1, 4, 2, 0, 9, 6};
    MB *skm = from(sk, 1, 12);
    u = k_unique(skm, 1, &e);
    ok = u && u->rows == 1 && u->cols == 6;
    for (int i = 0; ok && i < 6; i++) ok = mb_get(u, 0, i) == skw[i];
    T_CHECK(ok, "unique(dir=\"r\") of SystemDS's skinny row");
    mb_release(u);
    mb_release(skm); mb_release(cm); mb_release(a); mb_release(b); mb_release(d);
}

/* Java's HashMap<String, Integer> iteration order (SystemDS's recode
 * metadata rows): 80 tokens, 16 of them with one String.hashCode (the
 * "Aa"/"BB" blocks: a tree bucket) and non-ASCII ones (UTF-16 code units,
 * a surrogate pair); expected ranks printed by tests/data/HashSetRef.java
 * str on the JDK */
static void unique_java_strings(void)
{
    static const int want[80] = {76, 63, 65, 64, 13, 68, 67, 15, 70, 14, 69, 18, 73, 17, 72, 20, 19, 74, 23, 22, 24, 27, 25, 0, 29, 2, 28, 3, 32, 4, 30, 5, 34, 7, 33, 8, 37, 9, 35, 10, 79, 12, 16, 1, 6, 11, 21, 26, 31, 36, 41, 46, 51, 56, 61, 66, 71, 75, 38, 40, 39, 43, 42, 45, 44, 48, 47, 49, 77, 52, 50, 54, 53, 57, 78, 55, 59, 58, 62, 60};
    char toks[80][16], coll[16][9];
    for (int c = 0; c < 16; c++) {
        coll[c][0] = 0;
        for (int b = 3; b >= 0; b--) strcat(coll[c], (c >> b) & 1 ? "BB" : "Aa");
    }
    int n = 0, left = 16;
    for (int i = 0; i < 60; i++) {
        snprintf(toks[n++], sizeof toks[0], "x%d", i);
        if (i % 4 == 0 && left > 0) strcpy(toks[n++], coll[--left]);
    }
    for (int c = 0; c < left; c++) strcpy(toks[n++], coll[c]);
    strcpy(toks[n++], "caf\xc3\xa9");
    strcpy(toks[n++], "\xe4\xb8\xad\xe6\x96\x87");
    strcpy(toks[n++], "\xf0\x9f\x98\x80");
    strcpy(toks[n++], "zz");
    JHashSet h;
    jhs_init(&h);
    for (int i = 0; i < n; i++) jhs_add_str(&h, toks[i]);
    int64_t ord[80];
    bool ok = n == 80 && jhs_size(&h) == 80;
    if (ok) jhs_order(&h, ord);
    for (int i = 0; ok && i < 80; i++) ok = ord[i] == want[i];
    T_CHECK(ok, "HashMap<String> order differs from Java's");
    jhs_free(&h);
}

static MB *ref_slice(const MB *a, int64_t rl, int64_t ru, int64_t cl, int64_t cu)
{
    BrErr e = {0};
    MB *r = mb_dense(ru - rl, cu - cl, &e);
    for (int64_t i = rl; i < ru; i++)
        for (int64_t j = cl; j < cu; j++) mb_dset(r, i - rl, j - cl, mb_get(a, i, j));
    mb_recount_nnz(r);
    return r;
}

static MB *ref_lix(const MB *t, int64_t rl, int64_t cl, const MB *s)
{
    BrErr e = {0};
    MB *r = mb_to_dense(t, &e);
    for (int64_t i = 0; i < s->rows; i++)
        for (int64_t j = 0; j < s->cols; j++) mb_dset(r, rl + i, cl + j, mb_get(s, i, j));
    mb_recount_nnz(r);
    return r;
}

static MB *ref_bind(int n, MB **ms, bool cb)
{
    BrErr e = {0};
    int64_t R = cb ? ms[0]->rows : 0, C = cb ? 0 : ms[0]->cols;
    for (int q = 0; q < n; q++) { if (cb) C += ms[q]->cols; else R += ms[q]->rows; }
    MB *r = mb_dense(R, C, &e);
    int64_t off = 0;
    for (int q = 0; q < n; q++) {
        for (int64_t i = 0; i < ms[q]->rows; i++)
            for (int64_t j = 0; j < ms[q]->cols; j++)
                mb_dset(r, cb ? i : off + i, cb ? off + j : j, mb_get(ms[q], i, j));
        off += cb ? ms[q]->cols : ms[q]->rows;
    }
    mb_recount_nnz(r);
    return r;
}

/* --------------------------------------------------------------- sweeps */

static const int64_t shapes[][2] = {{0, 5}, {5, 0}, {1, 1}, {7, 1}, {1, 9},
                                    {50, 3}, {3, 70}, {40, 40}, {300, 250}};
#define NSHAPES ((int)(sizeof shapes / sizeof *shapes))
static const double sps[] = {0, 0.001, 0.1, 1};

/* t, rev, diag, reshape, tri, replace, unique on one input. */
static void sweep_unary(const MB *a, const char *tag)
{
    BrErr e = {0};
    MB *r, *w;

    r = k_transpose(a, &e); w = ref_transpose(a);
    T_CHECK(valid(r), "%s transpose valid", tag);
    T_MB_EQ(r, w, 0, "%s transpose", tag);
    mb_release(r); mb_release(w);

    r = k_rev(a, &e); w = ref_rev(a);
    T_CHECK(valid(r), "%s rev valid", tag);
    T_MB_EQ(r, w, 0, "%s rev", tag);
    mb_release(r); mb_release(w);

    /* diag */
    br_err_clear(&e);
    r = k_diag(a, &e);
    if (a->cols == 1 || a->rows == a->cols) {
        T_CHECK(r && valid(r), "%s diag valid", tag);
        if (r && a->rows == 1 && a->cols == 1) T_MB_EQ(r, a, 0, "%s diag 1x1", tag);
        else if (r && a->cols == 1) {
            bool ok = r->rows == a->rows && r->cols == a->rows;
            for (int64_t i = 0; ok && i < a->rows; i++)
                for (int64_t j = 0; ok && j < a->rows; j++)
                    ok = mb_get(r, i, j) == (i == j ? mb_get(a, i, 0) : 0);
            T_CHECK(ok, "%s diag of a vector", tag);
        } else if (r) {
            bool ok = r->rows == a->rows && r->cols == 1;
            for (int64_t i = 0; ok && i < a->rows; i++) ok = mb_get(r, i, 0) == mb_get(a, i, i);
            T_CHECK(ok, "%s diag of a square", tag);
        }
    } else {
        T_CHECK(!r && e.code == BR_EDIM && strstr(e.msg, "dimension"), "%s diag error", tag);
    }
    mb_release(r);

    /* reshape to a few shapes with the same number of cells */
    int64_t cells = a->rows * a->cols;
    int64_t tgt[][2] = {{a->cols, a->rows}, {1, cells}, {cells, 1},
                        {cells % 2 == 0 ? 2 : 1, cells % 2 == 0 ? cells / 2 : cells}};
    for (int t = 0; t < 4; t++)
        for (int by = 0; by < 2; by++) {
            br_err_clear(&e);
            r = k_reshape(a, tgt[t][0], tgt[t][1], by, &e);
            w = ref_reshape(a, tgt[t][0], tgt[t][1], by);
            T_CHECK(valid(r), "%s reshape valid %d %d", tag, t, by);
            T_MB_EQ(r, w, 0, "%s reshape %d byrow=%d", tag, t, by);
            mb_release(r); mb_release(w);
        }
    br_err_clear(&e);
    r = k_reshape(a, cells + 1, 1, true, &e);
    T_CHECK(!r && strstr(e.msg, "dimension"), "%s reshape count mismatch", tag);

    for (int m = 0; m < 8; m++) {
        bool lower = m & 1, dg = m & 2, val = m & 4;
        br_err_clear(&e);
        r = k_tri(a, lower, dg, val, &e); w = ref_tri(a, lower, dg, val);
        T_CHECK(valid(r), "%s tri valid %d", tag, m);
        T_MB_EQ(r, w, 0, "%s tri %d", tag, m);
        mb_release(r); mb_release(w);
    }

    double pats[][2] = {{0, -1}, {0, 0}, {3, 0}, {3, 9}, {-2, 0.5}, {NAN, 1}, {7, 1}};
    for (int p = 0; p < 7; p++) {
        br_err_clear(&e);
        r = k_replace(a, pats[p][0], pats[p][1], &e);
        w = ref_replace(a, pats[p][0], pats[p][1]);
        T_CHECK(valid(r), "%s replace valid %d", tag, p);
        T_MB_EQ(r, w, 0, "%s replace %d", tag, p);
        mb_release(r); mb_release(w);
    }

    r = k_unique(a, 0, &e); w = ref_unique(a);
    T_CHECK(valid(r), "%s unique valid", tag);
    T_CHECK(same_set(r, w), "%s unique: not the distinct values", tag);
    mb_release(r); mb_release(w);
}

/* order, removeEmpty, slices, left indexing, binds on one input. */
static void sweep_struct(const MB *a, bool sparse, const char *tag)
{
    BrErr e = {0};
    MB *r, *w;
    int64_t m = a->rows, n = a->cols;

    for (int64_t by = 0; by < n; by += (n > 2 ? n - 1 : 1))
        for (int f = 0; f < 4; f++) {
            bool desc = f & 1, idx = f & 2;
            r = k_order(a, by, desc, idx, &e); w = ref_order(a, by, desc, idx);
            T_CHECK(valid(r), "%s order valid", tag);
            T_MB_EQ(r, w, 0, "%s order by=%lld desc=%d idx=%d", tag, (long long)by, desc, idx);
            mb_release(r); mb_release(w);
        }
    br_err_clear(&e);
    r = k_order(a, n, false, false, &e);
    T_CHECK(!r && strstr(e.msg, "index"), "%s order by out of range", tag);

    for (int f = 0; f < 8; f++) {
        bool rows = f & 1, er = f & 2, usesel = f & 4;
        int64_t len = rows ? m : n;
        MB *sel = NULL;
        if (usesel) {
            MB *s0 = gen(rows ? len : 1, rows ? 1 : len, 0.5, false, 77 + f);
            sel = as_fmt(s0, sparse);
            mb_release(s0);
        }
        br_err_clear(&e);
        r = k_rmempty(a, rows, sel, er, &e); w = ref_rmempty(a, rows, sel, er);
        T_CHECK(valid(r), "%s rmempty valid %d", tag, f);
        T_MB_EQ(r, w, 0, "%s rmempty rows=%d er=%d sel=%d", tag, rows, er, usesel);
        mb_release(r); mb_release(w); mb_release(sel);
    }

    /* slices: all, first row, last col, inner block, empty range */
    int64_t rg[][4] = {{0, m, 0, n}, {0, m > 0, 0, n}, {0, m, n > 0 ? n - 1 : 0, n},
                       {m / 3, m - m / 4, n / 4, n - n / 3}, {m / 2, m / 2, 0, n},
                       {m > 1 ? 1 : 0, m, 0, n}};
    for (int s = 0; s < 6; s++) {
        br_err_clear(&e);
        r = k_slice(a, rg[s][0], rg[s][1], rg[s][2], rg[s][3], &e);
        w = ref_slice(a, rg[s][0], rg[s][1], rg[s][2], rg[s][3]);
        T_CHECK(valid(r), "%s slice valid %d", tag, s);
        T_MB_EQ(r, w, 0, "%s slice %d", tag, s);

        /* left indexing round trip: write a new block there, slice it back */
        MB *src0 = gen(w->rows, w->cols, 0.5, false, 991 + s);
        for (int sf = 0; sf < 2; sf++) {
            MB *src = as_fmt(src0, sf);
            br_err_clear(&e);
            MB *l = k_lix(a, rg[s][0], rg[s][1], rg[s][2], rg[s][3], src, &e);
            MB *lw = ref_lix(a, rg[s][0], rg[s][2], src);
            T_CHECK(valid(l), "%s lix valid %d", tag, s);
            T_MB_EQ(l, lw, 0, "%s lix %d src sparse=%d", tag, s, sf);
            MB *back = l ? k_slice(l, rg[s][0], rg[s][1], rg[s][2], rg[s][3], &e) : NULL;
            T_MB_EQ(back, src, 0, "%s lix then slice %d", tag, s);
            mb_release(back);
            /* in place on a private copy */
            MB *t = mb_copy(a, &e);
            T_CHECK(k_lix_inplace(t, rg[s][0], rg[s][1], rg[s][2], rg[s][3], src, &e) == 0,
                    "%s lix_inplace ok", tag);
            T_CHECK(valid_fmt(t, false), "%s lix_inplace valid %d", tag, s);
            T_MB_EQ(t, lw, 0, "%s lix_inplace %d src sparse=%d", tag, s, sf);
            mb_release(t); mb_release(l); mb_release(lw); mb_release(src);
        }
        mb_release(src0);
        mb_release(r); mb_release(w);
    }
    /* out of bounds and shape errors */
    br_err_clear(&e);
    r = k_slice(a, 0, m + 1, 0, n, &e);
    T_CHECK(!r && e.code == BR_EINDEX && strstr(e.msg, "index"), "%s slice oob", tag);
    br_err_clear(&e);
    r = k_slice(a, 0, m, -1, n, &e);
    T_CHECK(!r && strstr(e.msg, "index"), "%s slice oob cols", tag);
    MB *one = mb_scalar(1, &e);
    br_err_clear(&e);
    r = k_lix(a, 0, m, 0, n, one, &e);
    T_CHECK(m * n == 1 ? r != NULL : (!r && strstr(e.msg, "dimension")), "%s lix shape", tag);
    mb_release(r);
    br_err_clear(&e);
    r = k_lix(a, 0, m + 1, 0, n, one, &e);
    T_CHECK(!r && strstr(e.msg, "index"), "%s lix oob", tag);
    mb_release(one);

    /* cell writes (copy and in place), including zeros */
    if (m * n > 0) {
        int64_t cells[][2] = {{0, 0}, {m - 1, n - 1}, {m / 2, n / 3}};
        double vals[] = {5, 0, -2.5};
        MB *t = mb_copy(a, &e), *tw = mb_to_dense(a, &e);
        for (int c = 0; c < 3; c++)
            for (int v = 0; v < 3; v++) {
                MB *l = k_lix_scalar(t, cells[c][0], cells[c][1], vals[v], &e);
                MB *lw = mb_copy(tw, &e);
                mb_dset(lw, cells[c][0], cells[c][1], vals[v]);
                mb_recount_nnz(lw);
                T_CHECK(valid(l), "%s lix_scalar valid", tag);
                T_MB_EQ(l, lw, 0, "%s lix_scalar", tag);
                T_CHECK(k_lix_scalar_inplace(t, cells[c][0], cells[c][1], vals[v], &e) == 0,
                        "%s lix_scalar_inplace ok", tag);
                T_CHECK(valid_fmt(t, false), "%s lix_scalar_inplace valid", tag);
                T_MB_EQ(t, lw, 0, "%s lix_scalar_inplace", tag);
                mb_release(l); mb_release(tw);
                tw = lw;
            }
        br_err_clear(&e);
        T_CHECK(k_lix_scalar_inplace(t, m, 0, 1, &e) != 0 && strstr(e.msg, "index"),
                "%s lix_scalar oob", tag);
        mb_release(t); mb_release(tw);
    }

    /* cbind / rbind with operands of both formats */
    MB *b0 = gen(m, 3, 0.3, false, 5), *c0 = gen(2, n, 0.3, false, 6);
    for (int f = 0; f < 2; f++) {
        MB *b = as_fmt(b0, f), *c = as_fmt(c0, !f);
        MB *ops[3] = {(MB *)a, b, (MB *)a};
        r = k_cbind(3, (const MB *const *)ops, &e); w = ref_bind(3, ops, true);
        T_CHECK(valid(r), "%s cbind valid", tag);
        T_MB_EQ(r, w, 0, "%s cbind", tag);
        mb_release(r); mb_release(w);
        MB *ops2[3] = {c, (MB *)a, c};
        r = k_rbind(3, (const MB *const *)ops2, &e); w = ref_bind(3, ops2, false);
        T_CHECK(valid(r), "%s rbind valid", tag);
        T_MB_EQ(r, w, 0, "%s rbind", tag);
        mb_release(r); mb_release(w);
        MB *bad = gen(m + 1, 2, 0.5, f, 8);
        MB *ops3[2] = {(MB *)a, bad};
        br_err_clear(&e);
        r = k_cbind(2, (const MB *const *)ops3, &e);
        T_CHECK(!r && strstr(e.msg, "dimension"), "%s cbind mismatch", tag);
        mb_release(bad);
        mb_release(b); mb_release(c);
    }
    mb_release(b0); mb_release(c0);
}

static void sweeps(void)
{
    char tag[96];
    for (int th = 1; th <= 2; th++) {
        br_set_threads(th);
        for (int s = 0; s < NSHAPES; s++)
            for (int k = 0; k < 4; k++)
                for (int f = 0; f < 2; f++) {
                    MB *a = gen(shapes[s][0], shapes[s][1], sps[k], f, (uint64_t)(s * 31 + k * 7 + f));
                    snprintf(tag, sizeof tag, "[%lldx%lld sp=%g %s t=%d]",
                             (long long)shapes[s][0], (long long)shapes[s][1], sps[k],
                             f ? "sparse" : "dense", th);
                    sweep_unary(a, tag);
                    sweep_struct(a, f, tag);
                    mb_release(a);
                }
    }
    br_set_threads(0);
}

/* ----------------------------------------------- NaN handling of order */

static void order_nan(void)
{
    BrErr e = {0};
    double v[] = {3, NAN, 1, 3, NAN, -1};
    MB *a = from(v, 6, 1);
    for (int d = 0; d < 2; d++) {
        MB *r = k_order(a, 0, d, true, &e), *w = ref_order(a, 0, d, true);
        T_MB_EQ(r, w, 0, "order with NaN desc=%d", d);
        mb_release(r); mb_release(w);
    }
    MB *u = k_unique(a, 0, &e);
    T_CHECK(u && u->rows == 4, "unique folds NaNs");
    mb_release(u);
    mb_release(a);
}

/* ------------------------------------- larger order (parallel merges) */

static void order_large(void)
{
    BrErr e = {0};
    MB *a = gen(40000, 2, 1, false, 4242);
    MB *r1, *r2;
    br_set_threads(1);
    r1 = k_order(a, 1, true, true, &e);
    br_set_threads(2);
    r2 = k_order(a, 1, true, true, &e);
    T_MB_EQ(r1, r2, 0, "order threads");
    bool ok = r1 && r1->rows == 40000;
    for (int64_t i = 1; ok && i < 40000; i++) {
        int64_t p = (int64_t)r1->d[i - 1] - 1, q = (int64_t)r1->d[i] - 1;
        double x = mb_get(a, p, 1), y = mb_get(a, q, 1);
        ok = x > y || (x == y && p < q);
    }
    T_CHECK(ok, "order large stable decreasing");
    mb_release(r1); mb_release(r2); mb_release(a);
    br_set_threads(0);
}

/* ------------------------------------------- table / aggregate / outer */

static MB *ref_table(const double *a, const double *b, const double *w, int64_t n,
                     int64_t R, int64_t C)
{
    BrErr e = {0};
    MB *r = mb_dense(R, C, &e);
    for (int64_t i = 0; i < n; i++) {
        int64_t x = (int64_t)a[i] - 1, y = (int64_t)b[i] - 1;
        if (x < R && y < C) r->d[x * C + y] += w ? w[i] : 1;
    }
    mb_recount_nnz(r);
    return r;
}

static void table_tests(void)
{
    BrErr e = {0};
    /* conformance case reorg_table */
    double A[] = {1, 2, 2, 3, 1, 3, 3}, B[] = {1, 1, 2, 2, 1, 3, 3};
    double W[] = {0.5, 1, 2, 1, 1.5, 1, 3};
    MB *a = from(A, 7, 1), *b = from(B, 7, 1), *w = from(W, 7, 1);
    double t1[] = {2, 0, 0, 1, 1, 0, 0, 1, 2}, t2[] = {2, 0, 0, 1, 2, 0, 0, 1, 4};
    double t3[] = {2, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0};
    double t4[] = {2, 0, 1, 1}, t5[] = {2, 2, 3}, t6[] = {4, 0, 0, 2, 2, 0, 0, 2, 4};
    struct { MB *r; double *want; int64_t R, C; const char *name; } cs[6];
    cs[0].r = k_table(a, 0, b, 0, NULL, 1, -1, -1, &e); cs[0].want = t1; cs[0].R = 3; cs[0].C = 3; cs[0].name = "T1";
    cs[1].r = k_table(a, 0, b, 0, w, 0, -1, -1, &e); cs[1].want = t2; cs[1].R = 3; cs[1].C = 3; cs[1].name = "T2";
    cs[2].r = k_table(a, 0, b, 0, NULL, 1, 4, 5, &e); cs[2].want = t3; cs[2].R = 4; cs[2].C = 5; cs[2].name = "T3";
    cs[3].r = k_table(a, 0, b, 0, NULL, 1, 2, 2, &e); cs[3].want = t4; cs[3].R = 2; cs[3].C = 2; cs[3].name = "T4";
    cs[4].r = k_table(a, 0, NULL, 1, NULL, 1, -1, -1, &e); cs[4].want = t5; cs[4].R = 3; cs[4].C = 1; cs[4].name = "T5";
    cs[5].r = k_table(a, 0, b, 0, NULL, 2, -1, -1, &e); cs[5].want = t6; cs[5].R = 3; cs[5].C = 3; cs[5].name = "T6";
    for (int i = 0; i < 6; i++) {
        MB *want = from(cs[i].want, cs[i].R, cs[i].C);
        T_CHECK(valid(cs[i].r), "table %s valid", cs[i].name);
        T_MB_EQ(cs[i].r, want, 0, "table %s", cs[i].name);
        mb_release(want); mb_release(cs[i].r);
    }
    /* errors */
    double bad[] = {1, 0, 2};
    MB *bm = from(bad, 3, 1);
    br_err_clear(&e);
    MB *r = k_table(bm, 0, NULL, 1, NULL, 1, -1, -1, &e);
    T_CHECK(!r && e.code, "table non-positive id is an error");
    br_err_clear(&e);
    r = k_table(a, 0, bm, 0, NULL, 1, -1, -1, &e);
    T_CHECK(!r && strstr(e.msg, "dimension"), "table shape mismatch");
    /* a row vector pairs with a column vector of the same length in order
     * (SystemDS's KM.dml): (1,3) (2,1) (2,3); a 2x2 block does not pair
     * with a 1x4 vector */
    double rv[] = {1, 2, 2}, cv[] = {3, 1, 3}, tw[] = {0, 0, 1, 1, 0, 1};
    MB *rm = from(rv, 1, 3), *cm = from(cv, 3, 1), *tv = from(tw, 2, 3);
    br_err_clear(&e);
    r = k_table(rm, 0, cm, 0, NULL, 1, -1, -1, &e);
    T_CHECK(r != NULL, "table row vector x column vector");
    if (r) T_MB_EQ(r, tv, 0, "table row vector x column vector");
    mb_release(r);
    double q4[] = {1, 2, 1, 2};
    MB *sq = from(q4, 2, 2), *r4 = from(q4, 1, 4);
    br_err_clear(&e);
    r = k_table(sq, 0, r4, 0, NULL, 1, -1, -1, &e);
    T_CHECK(!r && strstr(e.msg, "dimension"), "table 2x2 vs 1x4 is a shape mismatch");
    /* a wider second operand contributes its leading columns (SystemDS's
     * decision-tree.dml: table(ids, order(cbind(ids, impurity), by=2))) */
    double ids[] = {1, 2, 3}, srt[] = {2, 0.1, 3, 0.3, 1, 0.5}, pw[] = {0, 1, 0, 0, 0, 1, 1, 0, 0};
    MB *im = from(ids, 3, 1), *sm = from(srt, 3, 2), *pm = from(pw, 3, 3);
    br_err_clear(&e);
    r = k_table(im, 0, sm, 0, NULL, 1, -1, -1, &e);
    T_CHECK(r != NULL, "table column vector x wider matrix");
    if (r) T_MB_EQ(r, pm, 0, "table column vector x wider matrix");
    mb_release(r);
    /* a longer second operand and weight contribute their leading rows
     * (SystemDS's entity-resolution preprocessing: table(ids, tokens, w)
     * with one token row more); a shorter one stays an error */
    double lt[] = {2, 3, 1, 9}, lw[] = {0.5, 2, 4, 7}, lwant[] = {0, 0.5, 0, 0, 0, 2, 4, 0, 0};
    MB *lm = from(lt, 4, 1), *lwm = from(lw, 4, 1), *lwn = from(lwant, 3, 3);
    br_err_clear(&e);
    r = k_table(im, 0, lm, 0, lwm, 0, -1, -1, &e);
    T_CHECK(r != NULL, "table column vector x longer vector and weight");
    if (r) T_MB_EQ(r, lwn, 0, "table column vector x longer vector and weight");
    mb_release(r);
    br_err_clear(&e);
    r = k_table(lm, 0, im, 0, NULL, 1, -1, -1, &e);
    T_CHECK(!r && strstr(e.msg, "dimension"), "table: a shorter second operand is a shape mismatch");
    mb_release(lm); mb_release(lwm); mb_release(lwn);
    mb_release(im); mb_release(sm); mb_release(pm);
    mb_release(rm); mb_release(cm); mb_release(tv); mb_release(sq); mb_release(r4);
    mb_release(bm); mb_release(a); mb_release(b); mb_release(w);

    /* random: dense path and sparse path (large id ranges), both formats */
    for (int th = 1; th <= 2; th++) {
        br_set_threads(th);
        for (int k = 0; k < 4; k++) {
            int64_t n = 500, maxa = k < 2 ? 10 : 1000, maxb = k < 2 ? 7 : 900;
            double *va = malloc(n * sizeof(double)), *vb = malloc(n * sizeof(double));
            double *vw = malloc(n * sizeof(double));
            rng = 99 + k;
            for (int64_t i = 0; i < n; i++) {
                va[i] = 1 + floor(urand() * maxa);
                vb[i] = 1 + floor(urand() * maxb);
                vw[i] = floor(urand() * 5) - 2;
            }
            MB *ma0 = from(va, n, 1), *ma = as_fmt(ma0, k & 1);
            MB *mbb = from(vb, n, 1), *mw = from(vw, n, 1);
            mb_release(ma0);
            MB *mas = mb_to_sparse(mbb, &e);
            int64_t R = 0, C = 0;
            for (int64_t i = 0; i < n; i++) { R = BR_MAX(R, (int64_t)va[i]); C = BR_MAX(C, (int64_t)vb[i]); }
            MB *t = k_table(ma, 0, mas, 0, mw, 0, -1, -1, &e), *want = ref_table(va, vb, vw, n, R, C);
            T_CHECK(valid(t), "table random valid %d", k);
            T_MB_EQ(t, want, 0, "table random %d", k);
            mb_release(t); mb_release(want);
            t = k_table(ma, 0, mbb, 0, NULL, 1, R / 2, C / 3, &e);
            want = ref_table(va, vb, NULL, n, R / 2, C / 3);
            T_MB_EQ(t, want, 0, "table random odims %d", k);
            mb_release(t); mb_release(want);
            mb_release(ma); mb_release(mbb); mb_release(mw); mb_release(mas);
            free(va); free(vb); free(vw);
        }
    }
    br_set_threads(0);
}

/* table() over more tuples than one chunk of its parallel first pass:
 * rows sorted (table(seq(1, n), labels)) or not, rows of more than 32
 * entries (the merge sort), NaN tuples, weights that cancel, odims. */
static void table_large_tests(void)
{
    BrErr e = {0};
    int64_t n = 150001;
    double *va = malloc(n * sizeof(double)), *vb = malloc(n * sizeof(double));
    double *vw = malloc(n * sizeof(double));
    for (int k = 0; k < 5; k++) {
        rng = 501 + k;
        for (int64_t i = 0; i < n; i++) {
            va[i] = k == 0 ? (double)(i + 1) : k == 1 ? 1 + floor(urand() * 40)
                  : k == 4 ? (double)(3 * i + 3) : 1 + floor(urand() * 3000);
            vb[i] = 1 + floor(urand() * (k == 1 ? 100000 : k == 2 ? 400 : 5));
            vw[i] = k >= 2 ? floor(urand() * 3) - 1 : 1 + floor(urand() * 3);
        }
        if (k >= 2) { va[7] = NAN; vb[70000] = NAN; }
        if (k == 4) vw[n - 1] = 0;   /* rows with one entry, gaps, a zero weight */
        MB *ma = from(va, n, 1), *mbb = from(vb, n, 1), *mw = from(vw, n, 1);
        for (int lim = 0; lim < 2; lim++) {
            int64_t R = 0, C = 0;
            for (int64_t i = 0; i < n; i++)
                if (!isnan(va[i]) && !isnan(vb[i])) {
                    R = BR_MAX(R, (int64_t)va[i]);
                    C = BR_MAX(C, (int64_t)vb[i]);
                }
            if (lim) { R = R * 2 / 3; C = BR_MAX(1, C - 1); }
            MB *want = mb_dense(R, C, &e);
            for (int64_t i = 0; i < n; i++) {
                if (isnan(va[i]) || isnan(vb[i])) continue;
                int64_t x = (int64_t)va[i] - 1, y = (int64_t)vb[i] - 1;
                if (x < R && y < C) want->d[x * C + y] += vw[i];
            }
            mb_recount_nnz(want);
            MB *r1 = NULL;
            for (int th = 1; th <= 2; th++) {
                br_set_threads(th);
                MB *t = k_table(ma, 0, mbb, 0, mw, 0, lim ? R : -1, lim ? C : -1, &e);
                T_CHECK(valid(t), "table large %d lim %d valid: %s", k, lim, e.msg);
                T_MB_EQ(t, want, 0, "table large %d lim %d th %d", k, lim, th);
                if (th == 1) r1 = t;
                else { T_MB_EQ(t, r1, 0, "table large %d thread-independent", k); mb_release(t); }
            }
            mb_release(r1); mb_release(want);
        }
        mb_release(ma); mb_release(mbb); mb_release(mw);
    }
    /* an invalid id far into the input is reported */
    va[0] = 1; vb[0] = 1;
    for (int64_t i = 1; i < n; i++) { va[i] = (double)(i + 1); vb[i] = 1; }
    va[140000] = 0;
    MB *ma = from(va, n, 1), *mbb = from(vb, n, 1);
    br_err_clear(&e);
    MB *t = k_table(ma, 0, mbb, 0, NULL, 1, -1, -1, &e);
    T_CHECK(!t && e.code && strstr(e.msg, "<= 0"), "table large invalid id: %s", e.msg);
    mb_release(ma); mb_release(mbb);
    free(va); free(vb); free(vw);
    br_set_threads(0);
}

/* aggregate(fn="centralmoment", order=2..4) against a two-pass reference
 * per group over mb_get: unweighted and row-weighted, shapes (0 rows, a
 * single row, tall, several columns), sparsity, formats, thread counts,
 * a group without rows and an invalid order. */
static void groupagg_cm_tests(void)
{
    const int64_t shapes[][2] = {{0, 1}, {1, 1}, {9, 1}, {300, 3}, {5000, 2}};
    const double sps[] = {0, 0.1, 1};
    for (int th = 1; th <= 2; th++) {
        br_set_threads(th);
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
            for (size_t q = 0; q < 3; q++)
                for (int sp = 0; sp < 2; sp++)
                    for (int weighted = 0; weighted < 2; weighted++) {
                        int64_t n = shapes[s][0], m = shapes[s][1], k = 6;   /* group 6 stays empty */
                        MB *x = gen(n, m, sps[q], sp, 7 + s);
                        MB *g = gen(n, 1, 1, false, 11 + s), *w = weighted ? gen(n, 1, 1, false, 13 + s) : NULL;
                        for (int64_t i = 0; i < n; i++) {
                            g->d[i] = (double)(1 + (int64_t)fabs(g->d[i]) % 5);
                            if (w) w->d[i] = fabs(w->d[i]) * 0.5;
                        }
                        for (int order = 2; order <= 4; order++) {
                            BrErr e = {0};
                            MB *r = k_groupagg_cm(x, g, w, order, k, &e);
                            bool ok = r && r->rows == k && r->cols == m;
                            for (int64_t c = 0; ok && c < m; c++)
                                for (int64_t grp = 1; grp <= k && ok; grp++) {
                                    double sw = 0, sx = 0, cm = 0;
                                    for (int64_t i = 0; i < n; i++)
                                        if (g->d[i] == grp) {
                                            double wi = w ? w->d[i] : 1;
                                            sw += wi;
                                            sx += wi * mb_get(x, i, c);
                                        }
                                    double mean = sw > 0 ? sx / sw : 0;
                                    for (int64_t i = 0; i < n; i++)
                                        if (g->d[i] == grp)
                                            cm += (w ? w->d[i] : 1) * pow(mb_get(x, i, c) - mean, order);
                                    double want = sw > 0 ? cm / sw : 0, got = mb_get(r, grp - 1, c);
                                    ok = fabs(got - want) <= 1e-9 * fmax(1, fabs(want));
                                }
                            T_CHECK(ok, "centralmoment order %d %lldx%lld sp=%g sparse=%d weighted=%d threads=%d: %s",
                                    order, (long long)n, (long long)m, sps[q], sp, weighted, th, e.msg);
                            mb_release(r);
                        }
                        mb_release(x);
                        mb_release(g);
                        mb_release(w);
                    }
    }
    br_set_threads(0);
    BrErr e = {0};
    MB *x = gen(5, 1, 1, false, 3), *g = gen(5, 1, 1, false, 4);
    for (int i = 0; i < 5; i++) g->d[i] = 1;
    T_CHECK(!k_groupagg_cm(x, g, NULL, 5, -1, &e) && strstr(e.msg, "order"), "centralmoment order 5: %s", e.msg);
    mb_release(x);
    mb_release(g);
}

static void groupagg_tests(void)
{
    BrErr e = {0};
    /* conformance case reorg_aggregate */
    double X[] = {1, 4, 2, 8, 3, 5, 7, 6}, G[] = {1, 2, 1, 2, 3, 3, 1, 2};
    MB *x = from(X, 8, 1), *g = from(G, 8, 1);
    double sum[] = {10, 18, 8}, cnt[] = {3, 3, 2}, mean[] = {10.0 / 3, 6, 4};
    double var[] = {10.333333333333334, 4, 2}, s5[] = {10, 18, 8, 0, 0};
    double mn[] = {1, 4, 3}, mx[] = {7, 8, 5};
    const char *fns[] = {"sum", "count", "mean", "variance", "min", "max"};
    double *want[] = {sum, cnt, mean, var, mn, mx};
    for (int f = 0; f < 6; f++) {
        MB *r = k_groupagg(x, g, NULL, fns[f], -1, &e), *w = from(want[f], 3, 1);
        T_CHECK(valid(r), "aggregate %s valid", fns[f]);
        T_MB_EQ(r, w, 1e-15, "aggregate %s", fns[f]);
        mb_release(r); mb_release(w);
    }
    MB *r = k_groupagg(x, g, NULL, "sum", 5, &e), *w = from(s5, 5, 1);
    T_MB_EQ(r, w, 0, "aggregate sum ngroups=5");
    mb_release(r); mb_release(w);
    double X2[16], S2[] = {10, 100, 18, 180, 8, 80};
    for (int i = 0; i < 8; i++) { X2[2 * i] = X[i]; X2[2 * i + 1] = X[i] * 10; }
    MB *x2 = from(X2, 8, 2);
    MB *x2s = mb_to_sparse(x2, &e);
    r = k_groupagg(x2s, g, NULL, "sum", 3, &e); w = from(S2, 3, 2);
    T_MB_EQ(r, w, 0, "aggregate two columns");
    mb_release(r); mb_release(w);
    br_err_clear(&e);
    r = k_groupagg(x, g, NULL, "median", -1, &e);
    T_CHECK(!r && e.code, "aggregate unknown fn");
    br_err_clear(&e);
    r = k_groupagg(x2, x, NULL, "sum", -1, &e);
    T_CHECK(r != NULL, "aggregate groups from values");
    mb_release(r);
    MB *g7 = from(G, 7, 1);
    br_err_clear(&e);
    r = k_groupagg(x, g7, NULL, "sum", -1, &e);
    T_CHECK(!r && strstr(e.msg, "dimension"), "aggregate groups mismatch");
    mb_release(g7); mb_release(x2); mb_release(x2s);

    /* weights: weighted sum/count/mean/variance against a direct formula */
    double Wt[] = {1, 2, 1, 0.5, 3, 1, 2, 1};
    MB *wt = from(Wt, 8, 1);
    double ws[3] = {0}, wc[3] = {0}, wm[3], wv[3] = {0};
    for (int i = 0; i < 8; i++) { int k = (int)G[i] - 1; ws[k] += Wt[i] * X[i]; wc[k] += Wt[i]; }
    for (int k = 0; k < 3; k++) wm[k] = ws[k] / wc[k];
    for (int i = 0; i < 8; i++) { int k = (int)G[i] - 1; wv[k] += Wt[i] * (X[i] - wm[k]) * (X[i] - wm[k]); }
    for (int k = 0; k < 3; k++) wv[k] /= wc[k] - 1;
    double *wwant[] = {ws, wc, wm, wv};
    for (int f = 0; f < 4; f++) {
        r = k_groupagg(x, g, wt, fns[f], -1, &e); w = from(wwant[f], 3, 1);
        T_MB_EQ(r, w, 1e-13, "aggregate weighted %s", fns[f]);
        mb_release(r); mb_release(w);
    }
    mb_release(wt); mb_release(x); mb_release(g);

    /* random multi-column, sparse/dense, threads: naive per-group formulas */
    for (int th = 1; th <= 2; th++) {
        br_set_threads(th);
        for (int k = 0; k < 4; k++) {
            int64_t n = k < 2 ? 200 : 3000, m = k < 2 ? 3 : 40, ng = 7;
            MB *t = gen(n, m, k & 1 ? 0.1 : 1, k & 1, 500 + k);
            double *gv = malloc(n * sizeof(double));
            rng = 7 + k;
            for (int64_t i = 0; i < n; i++) gv[i] = 1 + floor(urand() * ng);
            MB *gm = from(gv, n, 1);
            for (int f = 0; f < 6; f++) {
                MB *res = k_groupagg(t, gm, NULL, fns[f], -1, &e);
                MB *ref = mb_dense(ng, m, &e);
                for (int64_t q = 0; q < ng; q++)
                    for (int64_t j = 0; j < m; j++) {
                        double s = 0, c = 0, lo = INFINITY, hi = -INFINITY;
                        for (int64_t i = 0; i < n; i++)
                            if (gv[i] == q + 1) {
                                double v = mb_get(t, i, j);
                                s += v; c++; lo = fmin(lo, v); hi = fmax(hi, v);
                            }
                        double mu = s / c, ss = 0;
                        for (int64_t i = 0; i < n; i++)
                            if (gv[i] == q + 1) ss += (mb_get(t, i, j) - mu) * (mb_get(t, i, j) - mu);
                        double vals[] = {s, c, mu, c > 1 ? ss / (c - 1) : 0, lo, hi};
                        mb_dset(ref, q, j, vals[f]);
                    }
                mb_recount_nnz(ref);
                T_CHECK(valid(res), "aggregate random valid");
                T_MB_EQ(res, ref, 1e-12, "aggregate random %s k=%d t=%d", fns[f], k, th);
                mb_release(res); mb_release(ref);
            }
            free(gv); mb_release(gm); mb_release(t);
        }
    }
    br_set_threads(0);
}

static void outer_tests(void)
{
    BrErr e = {0};
    double cv[] = {1, 2, 3}, rv[] = {1, -1, 2, 0.5};
    MB *x = from(cv, 3, 1), *y = from(rv, 1, 4);
    double mul[] = {1, -1, 2, 0.5, 2, -2, 4, 1, 3, -3, 6, 1.5};
    double lt[] = {0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    MB *r = k_outer(x, y, OP_MULT, &e), *w = from(mul, 3, 4);
    T_MB_EQ(r, w, 0, "outer *");
    mb_release(r); mb_release(w);
    r = k_outer(x, y, OP_LT, &e); w = from(lt, 3, 4);
    T_MB_EQ(r, w, 0, "outer <");
    mb_release(r); mb_release(w);
    br_err_clear(&e);
    r = k_outer(y, x, OP_PLUS, &e);
    T_CHECK(!r && strstr(e.msg, "dimension"), "outer shapes");
    mb_release(x); mb_release(y);
    OpCode ops[] = {OP_MULT, OP_PLUS, OP_EQ, OP_AND, OP_MIN, OP_POW};
    for (int th = 1; th <= 2; th++) {
        br_set_threads(th);
        for (int k = 0; k < 4; k++)
            for (int o = 0; o < 6; o++) {
                int64_t n = k < 2 ? 30 : 400, m = k < 2 ? 20 : 300;
                MB *a = gen(n, 1, sps[k], k & 1, 3 + k), *b = gen(1, m, sps[(k + 1) % 4], !(k & 1), 4 + k);
                r = k_outer(a, b, ops[o], &e);
                w = mb_dense(n, m, &e);
                for (int64_t i = 0; i < n; i++)
                    for (int64_t j = 0; j < m; j++)
                        mb_dset(w, i, j, ops_binary(ops[o], mb_get(a, i, 0), mb_get(b, 0, j)));
                mb_recount_nnz(w);
                T_CHECK(valid(r), "outer valid");
                T_MB_EQ(r, w, 0, "outer random k=%d op=%d", k, o);
                mb_release(r); mb_release(w); mb_release(a); mb_release(b);
            }
    }
    br_set_threads(0);
}

/* ------------------------------------------ conformance-case examples */

static void conformance_examples(void)
{
    BrErr e = {0};
    /* reorg_removeempty */
    double X[] = {0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 0, 4, 0, 0, 5, 0};
    MB *x = from(X, 5, 4);
    double R1[] = {1, 0, 2, 0, 3, 0, 0, 4, 0, 0, 5, 0};
    double C1[] = {0, 0, 0, 1, 2, 0, 0, 0, 0, 3, 0, 4, 0, 5, 0};
    double R2[] = {0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 4};
    double C2[] = {0, 0, 0, 2, 0, 0, 0, 0, 0, 5};
    double sr[] = {1, 0, 1, 1, 0}, sc[] = {0, 1, 1, 0};
    MB *msr = from(sr, 5, 1), *msc = from(sc, 1, 4);
    MB *r = k_rmempty(x, true, NULL, true, &e), *w = from(R1, 3, 4);
    T_MB_EQ(r, w, 0, "removeEmpty R1"); mb_release(r); mb_release(w);
    r = k_rmempty(x, false, NULL, true, &e); w = from(C1, 5, 3);
    T_MB_EQ(r, w, 0, "removeEmpty C1"); mb_release(r); mb_release(w);
    r = k_rmempty(x, true, msr, true, &e); w = from(R2, 3, 4);
    T_MB_EQ(r, w, 0, "removeEmpty R2"); mb_release(r); mb_release(w);
    r = k_rmempty(x, false, msc, true, &e); w = from(C2, 5, 2);
    T_MB_EQ(r, w, 0, "removeEmpty C2"); mb_release(r); mb_release(w);
    MB *z = mb_empty(3, 2, &e);
    r = k_rmempty(z, true, NULL, true, &e);
    T_CHECK(r && r->rows == 1 && r->cols == 2 && r->nnz == 0, "removeEmpty RZ");
    mb_release(r);
    r = k_rmempty(z, true, NULL, false, &e);
    T_CHECK(r && r->rows == 0 && r->cols == 2, "removeEmpty empty.return=FALSE");
    mb_release(r);
    br_err_clear(&e);
    r = k_rmempty(x, true, msc, true, &e);
    T_CHECK(!r && strstr(e.msg, "dimension"), "removeEmpty select mismatch");
    mb_release(z); mb_release(msr); mb_release(msc);

    /* reorg_order_ties */
    double v[] = {2, 1, 2, 3, 1, 2}, ia[] = {2, 5, 1, 3, 6, 4}, id[] = {4, 1, 3, 6, 2, 5};
    MB *mv = from(v, 6, 1);
    r = k_order(mv, 0, false, true, &e); w = from(ia, 6, 1);
    T_MB_EQ(r, w, 0, "order ties asc"); mb_release(r); mb_release(w);
    r = k_order(mv, 0, true, true, &e); w = from(id, 6, 1);
    T_MB_EQ(r, w, 0, "order ties desc"); mb_release(r); mb_release(w);
    mb_release(mv);

    /* reorg_replace */
    double Y[] = {1, NAN, -INFINITY, 2, 0, INFINITY};
    MB *my = from(Y, 2, 3);
    double R3[] = {1, 0, -INFINITY, 2, 0, INFINITY}, R4[] = {1, NAN, -INFINITY, 2, 0, 99};
    r = k_replace(my, NAN, 0, &e); w = from(R3, 2, 3);
    T_MB_EQ(r, w, 0, "replace NaN"); mb_release(r); mb_release(w);
    r = k_replace(my, INFINITY, 99, &e); w = from(R4, 2, 3);
    T_MB_EQ(r, w, 0, "replace Inf"); mb_release(r); mb_release(w);
    mb_release(my);

    /* build_matrix_byrow_reshape R4 and build_diag */
    double s6[] = {1, 2, 3, 4, 5, 6}, r4[] = {1, 5, 4, 3, 2, 6}, b[] = {1, 3, 5, 2, 4, 6};
    MB *x6 = from(s6, 2, 3);
    r = k_reshape(x6, 3, 2, false, &e); w = from(r4, 3, 2);
    T_MB_EQ(r, w, 0, "reshape byrow=FALSE"); mb_release(r); mb_release(w);
    mb_release(x6);
    r = k_matrix_from_values(s6, 6, 2, 3, false, &e); w = from(b, 2, 3);
    T_MB_EQ(r, w, 0, "matrix byrow=FALSE"); mb_release(r); mb_release(w);
    r = k_matrix_from_values(s6, 6, 3, 2, true, &e); w = from(s6, 3, 2);
    T_MB_EQ(r, w, 0, "matrix byrow"); mb_release(r); mb_release(w);
    double seven = 7;
    r = k_matrix_from_values(&seven, 1, 2, 3, true, &e);
    T_CHECK(r && r->rows == 2 && r->cols == 3 && r->nnz == 6 && mb_get(r, 1, 2) == 7, "matrix fill");
    mb_release(r);
    double zero = 0;
    r = k_matrix_from_values(&zero, 1, 4, 4, true, &e);
    T_CHECK(r && r->nnz == 0 && r->sparse, "matrix fill zero is empty");
    mb_release(r);
    br_err_clear(&e);
    r = k_matrix_from_values(s6, 5, 2, 3, true, &e);
    T_CHECK(!r && strstr(e.msg, "dimension"), "matrix values mismatch");

    /* idx_left: X[2:3, 2:3] = X[1:2, 1:2] * 5 style writes */
    MB *t = mb_empty(4, 5, &e);
    T_CHECK(k_lix_scalar_inplace(t, 1, 2, 7, &e) == 0, "cell write");
    T_CHECK(k_lix_scalar_inplace(t, 0, 0, -1.5, &e) == 0, "cell write");
    double blk[] = {1, 2, 3, 4};
    MB *mblk = from(blk, 2, 2);
    T_CHECK(k_lix_inplace(t, 0, 2, 3, 5, mblk, &e) == 0, "block write");
    double row4[] = {9, 8, 7, 6, 5}, col1[] = {10, 20, 30, 40}, part[] = {-1, -2, -3};
    MB *mr = from(row4, 1, 5), *mc = from(col1, 4, 1), *mp = from(part, 1, 3);
    k_lix_inplace(t, 3, 4, 0, 5, mr, &e);
    k_lix_inplace(t, 0, 4, 0, 1, mc, &e);
    k_lix_inplace(t, 2, 3, 1, 4, mp, &e);
    double want[] = {10, 0, 0, 1, 2, 20, 0, 7, 3, 4, 30, -1, -2, -3, 0, 40, 8, 7, 6, 5};
    w = from(want, 4, 5);
    T_MB_EQ(t, w, 0, "idx_left X");
    T_CHECK(valid_fmt(t, false), "idx_left valid");
    mb_release(w); mb_release(t); mb_release(mblk); mb_release(mr); mb_release(mc); mb_release(mp);

    /* slice message quotes 1-based ranges */
    MB *q = mb_dense(4, 2, &e);
    br_err_clear(&e);
    r = k_slice(q, 2, 5, 0, 2, &e);
    T_CHECK(!r && strstr(e.msg, "index out of bounds: rows 3:5 of a 4x2 matrix"),
            "slice message: %s", e.msg);
    mb_release(q);
    mb_release(x);
}

/* ------------------------------------ in-place left indexing in loops */

/* Random sequences of in-place writes (blocks of either format, cells,
 * zeros) on targets of both formats, mirrored on a dense reference. */
static void lix_sequences(void)
{
    BrErr e = {0};
    int64_t dims[][2] = {{30, 20}, {300, 250}, {1, 40}, {40, 1}};
    for (int d = 0; d < 4; d++)
        for (int f = 0; f < 2; f++)
            for (int sp = 0; sp < 2; sp++) {
                int64_t m = dims[d][0], n = dims[d][1];
                MB *t = gen(m, n, sp ? 0.02 : 0, f, 11 + d), *ref = mb_to_dense(t, &e);
                rng = 1234 + d * 10 + f;
                bool ok = true;
                for (int step = 0; step < 60 && ok; step++) {
                    int kind = (int)(urand() * 4);
                    if (kind == 0) {
                        int64_t r = (int64_t)(urand() * m), c = (int64_t)(urand() * n);
                        double v = urand() < 0.3 ? 0 : floor(urand() * 9) + 1;
                        ok = k_lix_scalar_inplace(t, r, c, v, &e) == 0;
                        mb_dset(ref, r, c, v);
                    } else {
                        int64_t rl = (int64_t)(urand() * m), ru = rl + 1 + (int64_t)(urand() * (m - rl));
                        int64_t cl = (int64_t)(urand() * n), cu = cl + 1 + (int64_t)(urand() * (n - cl));
                        if (kind == 1) { rl = (int64_t)(urand() * m); ru = rl + 1; cl = 0; cu = n; }
                        MB *s = gen(ru - rl, cu - cl, kind == 3 ? 0.05 : 0.7, kind == 3, step * 7 + 1);
                        ok = k_lix_inplace(t, rl, ru, cl, cu, s, &e) == 0;
                        for (int64_t i = rl; i < ru; i++)
                            for (int64_t j = cl; j < cu; j++) mb_dset(ref, i, j, mb_get(s, i - rl, j - cl));
                        mb_release(s);
                    }
                    mb_recount_nnz(ref);
                    ok = ok && valid_fmt(t, false) && t->nnz == ref->nnz && mb_equal(t, ref, 0);
                }
                T_CHECK(ok, "lix sequence %lldx%lld fmt=%d sp=%d: %s", (long long)m, (long long)n,
                        f, sp, e.msg);
                mb_release(t); mb_release(ref);
            }

    /* a big sparse target stays sparse under row writes of dense rows */
    int64_t m = 3000, n = 1500;
    MB *t = mb_empty(m, n, &e);
    MB *row = gen(1, n, 1, false, 3);
    for (int64_t i = 0; i < 20; i++)
        T_CHECK(k_lix_inplace(t, i * 7, i * 7 + 1, 0, n, row, &e) == 0, "big row write");
    T_CHECK(t->sparse && t->nnz == 20 * row->nnz && valid_fmt(t, false), "big target stays sparse");
    MB *back = k_slice(t, 7, 8, 0, n, &e);
    T_MB_EQ(back, row, 0, "big target row back");
    mb_release(back);
    /* ... and a small one goes dense at once, then costs O(row) per write */
    MB *s = mb_empty(200, n, &e);
    T_CHECK(k_lix_inplace(s, 5, 6, 0, n, row, &e) == 0 && !s->sparse && s->nnz == row->nnz,
            "small sparse target densified");
    mb_release(s); mb_release(t); mb_release(row);
}

/* Reorganizations ask br_par (base.h) whether to fork: on a crowded
 * machine (pinned) regions under BR_PAR_CROWDED_MIN cells stay on one
 * thread, uncrowded they fork; the same bits either way. Transpose,
 * rev, reshape by columns, order (its sorted runs, merges and gather),
 * replace and lower.tri over about 10^5 cells, dense and sparse, with 2
 * threads. */
static void crowded_reorg(void)
{
    BrErr e = {0};
    br_set_threads(2);
    for (int sp = 0; sp < 2; sp++) {
        MB *a = gen(400, 300, sp ? 0.6 : 1.0, sp == 1, 77 + sp);
        MB *col = gen(150000, 1, 1.0, false, 91);
        MB *r[2][6];
        for (int pin = 0; pin < 2; pin++) {
            br_par_pin(pin);
            int64_t t0, k0, t1, k1;
            br_par_counts(&t0, &k0);
            r[pin][0] = k_transpose(a, &e);
            r[pin][1] = k_rev(a, &e);
            r[pin][2] = k_reshape(a, 300, 400, false, &e);
            r[pin][3] = k_order(col, 0, false, true, &e);
            r[pin][4] = k_replace(a, 3, -9, &e);
            r[pin][5] = k_tri(a, true, true, true, &e);
            br_par_counts(&t1, &k1);
            T_CHECK(pin == 0 ? t1 > t0 && k1 == k0 : t1 == t0 && k1 > k0,
                    "crowded reorg pin %d sp %d: teams %lld -> %lld, kept %lld -> %lld", pin, sp, (long long)t0,
                    (long long)t1, (long long)k0, (long long)k1);
        }
        for (int q = 0; q < 6; q++) {
            T_MB_EQ(r[1][q], r[0][q], 0, "crowded reorg sp %d: operation %d differs", sp, q);
            mb_release(r[0][q]);
            mb_release(r[1][q]);
        }
        mb_release(a);
        mb_release(col);
    }
    br_par_pin(-1);
    br_set_threads(0);
}

/* The parallel regions of index.c ask br_par: slices (whole rows, a
 * column range, dense and sparse), left indexing into a dense target and
 * cbind (dense and sparse results), kept on one thread when crowded,
 * with the same bits (they copy and count). */
typedef struct CrowdIx { MB *a, *s, *w, *v; BrErr e; } CrowdIx;

static void crowded_index_run(void *arg, MB **r)
{
    CrowdIx *c = arg;
    const MB *ws[] = {c->w, c->w}, *as[] = {c->a, c->a};
    r[0] = k_slice(c->a, 10, 990, 0, 300, &c->e);
    r[1] = k_slice(c->a, 0, 1000, 20, 280, &c->e);
    r[2] = k_slice(c->s, 0, 5000, 10, 90, &c->e);
    r[3] = k_lix(c->a, 100, 400, 30, 280, c->v, &c->e);
    r[4] = k_cbind(2, ws, &c->e);
    r[5] = k_cbind(2, as, &c->e);
}

static void crowded_index(void)
{
    CrowdIx c = {gen(1000, 300, 1.0, false, 41), gen(5000, 100, 0.3, true, 43), gen(70000, 10, 0.1, true, 45),
                 gen(300, 250, 1.0, false, 47), {0}};
    t_crowded("index", 6, 7, crowded_index_run, &c);
    mb_release(c.a); mb_release(c.s); mb_release(c.w); mb_release(c.v);
}

#define TIMED(f) do { int64_t t0_ = br_now_ns(); f(); \
    if (getenv("T_TIME")) fprintf(stderr, "%s: %.3f s\n", #f, (br_now_ns() - t0_) * 1e-9); } while (0)

/* The finiteness flag of slices (index.c slice_fin): a dense slice that
 * counted its non-zeros (rows of a block, a column range) checked every
 * value it copied and is flagged exactly, NaN or infinity inside or
 * not; one that did not (the whole block, sparse slices) tells only
 * what the source's flag does: finite of a finite source, the source's
 * answer for the whole block, nothing of a part of a non-finite one.
 * Every flag set is checked against the values. */
static bool fin_scan(const MB *m)
{
    const double *x = m->sparse ? m->v : m->d;
    int64_t n = m->sparse ? m->nnz : m->rows * m->cols;
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return true;
    return false;
}

static void slice_fin_flags(void)
{
    BrErr e = {0};
    /* rows, then a column range; the last two miss the bad cell (150, 50) */
    static const int64_t rg[4][4] = {{10, 200, 0, 250}, {0, 300, 3, 100}, {0, 100, 0, 250}, {0, 300, 60, 250}};
    for (int sparse = 0; sparse < 2; sparse++)
        for (int bad = 0; bad < 3; bad++)   /* finite, NaN, -Inf */
            for (int known = 0; known < 2; known++) {
                MB *a = gen(300, 250, sparse ? 0.05 : 0.9, false, 91);
                if (bad) a->d[150 * 250 + 50] = bad == 1 ? NAN : -INFINITY;
                mb_recount_nnz(a);
                if (sparse) mb_make_sparse(a, &e);
                if (known) mb_fin_set(a, bad != 0);
                for (int s = 0; s < 5; s++) {
                    MB *r = s < 4 ? k_slice(a, rg[s][0], rg[s][1], rg[s][2], rg[s][3], &e) : k_slice(a, 0, 300, 0, 250, &e);
                    bool inside = s < 2 || s == 4, nf = bad && inside;
                    /* the flag each case must carry: a part of a dense
                     * block and any sparse slice (its copied values read
                     * unless the source is known finite) the exact
                     * answer; a whole dense block the source's flag */
                    int want = sparse || s < 4 ? (nf ? MB_FIN_NONFINITE : MB_FIN_FINITE)
                             : !known ? MB_FIN_UNKNOWN
                             : bad ? MB_FIN_NONFINITE : MB_FIN_FINITE;
                    T_CHECK(r && r->fin == want && (r->fin == MB_FIN_UNKNOWN || (r->fin == MB_FIN_NONFINITE) == fin_scan(r)),
                            "slice flag: %s, bad %d, source flag %s, slice %d: flag %d, want %d", sparse ? "sparse" : "dense",
                            bad, known ? "known" : "unknown", s, r ? r->fin : -1, want);
                    mb_release(r);
                }
                mb_release(a);
            }
}

/* matrix(v, ...) (mb_fill) flags v's answer; results equal to their
 * operand (mb_copy: reshape to the same shape, replace of 0 by 0,
 * diag of a 1x1) keep the operand's flag, known or not. */
static void copy_fin_flags(void)
{
    BrErr e = {0};
    static const double vals[3] = {2.5, NAN, -INFINITY};
    for (int v = 0; v < 3; v++) {
        MB *f = mb_fill(3, 4, vals[v], &e);
        T_CHECK(f && f->fin == (v ? MB_FIN_NONFINITE : MB_FIN_FINITE), "fill %g: flag %d", vals[v], f ? f->fin : -1);
        mb_release(f);
    }
    for (int sparse = 0; sparse < 2; sparse++)
        for (int bad = 0; bad < 2; bad++)
            for (int known = 0; known < 2; known++) {
                MB *a = gen(30, 20, 0.1, false, 95), *one = gen(1, 1, 1, false, 96);
                if (bad) a->d[7 * 20 + 3] = one->d[0] = NAN;
                mb_recount_nnz(a);
                mb_recount_nnz(one);
                if (sparse) mb_make_sparse(a, &e);
                if (known) mb_fin_set(a, bad), mb_fin_set(one, bad);
                int want = known ? (bad ? MB_FIN_NONFINITE : MB_FIN_FINITE) : MB_FIN_UNKNOWN;
                MB *r[3] = {k_reshape(a, 30, 20, true, &e), k_replace(a, 0, 0, &e), k_diag(one, &e)};
                for (int q = 0; q < 3; q++) {
                    T_CHECK(r[q] && r[q]->fin == want, "kept copy %d (%s, bad %d, known %d): flag %d, want %d", q,
                            sparse ? "sparse" : "dense", bad, known, r[q] ? r[q]->fin : -1, want);
                    mb_release(r[q]);
                }
                mb_release(a);
                mb_release(one);
            }
}

/* Copies and conversions keep their source's finiteness flag (mb_copy,
 * mb_to_dense, mb_to_sparse), and the left indexing that writes into a
 * copy sets it from what it wrote (k_lix both paths, k_lix_scalar):
 * non-finite when the written values are, finite when the target and
 * the values were known finite, else unknown. A target known finite
 * that receives a NaN or an Inf is never left "finite"; every flag set
 * is checked against the values. matrix(0, ...) (mb_fill, an empty
 * block) is finite. */
static void lix_fin_flags(void)
{
    BrErr e = {0};
    MB *z = mb_fill(4, 5, 0, &e);
    T_CHECK(z && z->fin == MB_FIN_FINITE, "fill 0: flag %d", z ? z->fin : -1);
    mb_release(z);
    for (int sparse = 0; sparse < 2; sparse++)
        for (int bad = 0; bad < 2; bad++)
            for (int known = 0; known < 2; known++) {
                MB *a = gen(30, 20, 0.1, false, 97);
                if (bad) a->d[7 * 20 + 3] = NAN;
                mb_recount_nnz(a);
                if (sparse) mb_make_sparse(a, &e);
                if (known) mb_fin_set(a, bad);
                int want = known ? (bad ? MB_FIN_NONFINITE : MB_FIN_FINITE) : MB_FIN_UNKNOWN;
                MB *r[3] = {mb_copy(a, &e), mb_to_dense(a, &e), mb_to_sparse(a, &e)};
                for (int q = 0; q < 3; q++) {
                    T_CHECK(r[q] && r[q]->fin == want, "copy %d (%s, bad %d, known %d): flag %d, want %d", q,
                            sparse ? "sparse" : "dense", bad, known, r[q] ? r[q]->fin : -1, want);
                    mb_release(r[q]);
                }
                mb_release(a);
            }
    /* left indexing into a copy (ip 0) and in place (ip 1): target
     * (finite known, finite unknown, NaN known) x written values (finite
     * known, finite unknown, NaN known, Inf scalar), sparse targets on
     * both of k_lix's paths (a sparse result: a sparse 1 x 2 source; a
     * dense one: a dense 30 x 20 source over all of it) */
    static const double sv[4] = {3, 3, NAN, INFINITY};
    for (int ip = 0; ip < 2; ip++)
    for (int sparse = 0; sparse < 2; sparse++)
        for (int t = 0; t < 3; t++)
            for (int s = 0; s < 4; s++)
                for (int shape = 0; shape < 3; shape++) {
                    MB *a = gen(30, 20, sparse ? 0.05 : 0.5, false, 98);
                    if (t == 2) a->d[0] = NAN;
                    mb_recount_nnz(a);
                    if (sparse) mb_make_sparse(a, &e);
                    if (t != 1) mb_fin_set(a, t == 2);
                    MB *o = NULL;
                    if (shape == 0 && ip) o = k_lix_scalar_inplace(a, 4, 5, sv[s], &e) ? NULL : mb_retain(a);
                    else if (shape == 0) o = k_lix_scalar(a, 4, 5, sv[s], &e);
                    else if (s < 3) {
                        MB *src = shape == 1 ? gen(1, 2, 1, true, 99) : gen(30, 20, 1, false, 99);
                        if (s == 2) {
                            if (src->sparse) src->v[0] = NAN;
                            else src->d[0] = NAN;
                        }
                        if (s != 1) mb_fin_set(src, s == 2);
                        if (ip)
                            o = (shape == 1 ? k_lix_inplace(a, 4, 5, 5, 7, src, &e)
                                            : k_lix_inplace(a, 0, 30, 0, 20, src, &e)) ? NULL : mb_retain(a);
                        else o = shape == 1 ? k_lix(a, 4, 5, 5, 7, src, &e) : k_lix(a, 0, 30, 0, 20, src, &e);
                        mb_release(src);
                    }
                    if (shape && s == 3) { mb_release(a); continue; }
                    /* the written values non-finite (s 2, 3), else finite
                     * when both were known finite (a scalar always is
                     * known); a NaN target cell
                     * overwritten by the whole-block write (shape 2) */
                    bool nf = s >= 2 || (t == 2 && shape != 2);
                    int want = s >= 2                          ? MB_FIN_NONFINITE
                               : t == 0 && (s == 0 || shape == 0) ? MB_FIN_FINITE
                                                                  : MB_FIN_UNKNOWN;
                    bool vals = false;
                    for (int64_t i = 0; o && i < (o->sparse ? o->nnz : o->rows * o->cols); i++)
                        vals |= !isfinite(o->sparse ? o->v[i] : o->d[i]);
                    T_CHECK(o && o->fin == want && vals == nf,
                            "lix %s (%s target %d, values %d, shape %d): flag %d, want %d; non-finite %d, want %d",
                            ip ? "in place" : "copy", sparse ? "sparse" : "dense", t, s, shape, o ? o->fin : -1, want,
                            vals, nf);
                    mb_release(o);
                    mb_release(a);
                }
}

/* cbind of narrow operands (widths 1 to 4 copied cell by cell, wider
 * ones by rows; a sparse and an empty one among them) over row counts
 * around its 1024-row tasks, 1 and 2 threads: exactly the reference. */
static void cbind_narrow(void)
{
    static const int64_t rows[] = {1, 1023, 1024, 1025, 5000};
    static const int64_t widths[] = {1, 2, 3, 4, 5, 7, 1, 0};
    enum { NOPS = sizeof widths / sizeof *widths };
    for (size_t q = 0; q < sizeof rows / sizeof *rows; q++)
        for (int th = 1; th <= 2; th++) {
            br_set_threads(th);
            int64_t m = rows[q];
            MB *ops[NOPS];
            for (int k = 0; k < NOPS; k++)
                ops[k] = k == 6 ? gen(m, widths[k], 0.3, true, 70 + (uint64_t)k)
                                : gen(m, widths[k], 0.9, false, 70 + (uint64_t)k);
            for (int n = 1; n <= NOPS; n++) {
                BrErr e = {0};
                MB *r = k_cbind(n, (const MB *const *)ops, &e), *w = ref_bind(n, ops, true);
                T_CHECK(r && valid(r), "cbind narrow %lld rows, %d operands: %s", (long long)m, n, e.msg);
                if (r) T_MB_EQ(r, w, 0, "cbind narrow %lld rows, %d operands, %d threads", (long long)m, n, th);
                mb_release(r); mb_release(w);
            }
            /* two dense columns (interleaved in one loop), NaN and -0 */
            MB *two[2] = {ops[0], gen(m, 1, 0.9, false, 79)};
            two[1]->d[m / 2] = NAN;
            two[0]->d[m - 1] = -0.0;
            mb_recount_nnz(two[0]);
            mb_recount_nnz(two[1]);
            BrErr e2 = {0};
            MB *r2 = k_cbind(2, (const MB *const *)two, &e2), *w2 = ref_bind(2, two, true);
            T_CHECK(r2 && valid(r2), "cbind of two columns, %lld rows: %s", (long long)m, e2.msg);
            if (r2) {
                T_MB_EQ(r2, w2, 0, "cbind of two columns, %lld rows, %d threads", (long long)m, th);
                T_CHECK(signbit(mb_get(r2, m - 1, 0)), "cbind of two columns: -0 kept");
            }
            mb_release(r2); mb_release(w2); mb_release(two[1]);
            for (int k = 0; k < NOPS; k++) mb_release(ops[k]);
        }
    br_set_threads(2);
}

int main(void)
{
    TIMED(sweeps);
    TIMED(cbind_narrow);
    TIMED(order_nan);
    TIMED(unique_java_order);
    TIMED(unique_java_strings);
    TIMED(order_large);
    TIMED(table_tests);
    TIMED(table_large_tests);
    TIMED(groupagg_tests);
    TIMED(groupagg_cm_tests);
    TIMED(outer_tests);
    TIMED(conformance_examples);
    TIMED(lix_sequences);
    TIMED(crowded_reorg);
    TIMED(crowded_index);
    TIMED(slice_fin_flags);
    TIMED(copy_fin_flags);
    TIMED(lix_fin_flags);
    return t_done("test_reorg");
}
