/* jlutil.c: map()'s non-lambda Java calls (see jlutil.h), read from
 * SystemDS's FrameBlock.map, DMVUtils and EMAUtils and computed the same
 * way step for step.
 *
 * Pattern discovery (dmv):
 *   - a cell is its text ("NULL" when missing); level 1 encodes each
 *     character (UTF-16 unit) by class d(igit) l(ower) u(pper) s(pace
 *     separator) t ('.') '-' or y (other) and run-length codes the runs
 *     ("Ab1" -> "u1l1d1"); level 2 turns every count digit into '+';
 *     level 3 merges u/l runs into 'a'; level 4 drops '.' and '+' inside
 *     digit runs; level 5 drops spaces inside letter runs; level 6 reads
 *     '-' before a digit as part of it;
 *   - each level maps the previous level's histogram; the first level
 *     with a pattern whose count / rows exceeds threshold (the first such
 *     pattern in Java HashMap iteration order: String.hashCode buckets,
 *     insertion order within a bucket) decides, and every cell of the
 *     column with another pattern at that level becomes `replace`.
 *   Classes follow Java's Character methods for ASCII and Latin-1; other
 *   characters count as 'y'. SystemDS needs string columns (it casts);
 *   braid reads other columns by their text. SystemDS updates the input
 *   frame in place; braid returns a new frame.
 *
 * Exponential smoothing (ema): per column, the predictions of single,
 * double or triple (additive, period freq) smoothing, observed values
 * or not; a NaN cell is replaced by the previous prediction inside the
 * recurrence. Quirks kept: a NaN alpha/beta/gamma is drawn once
 * (unseeded, uniform [0, 1)) and then kept for every iteration and
 * column, so the search iterations all compute the same fit and the
 * output is that fit; the triple start (moving-average trend over the
 * first 2 freq values, seasonal means, a regression of the trend) fails
 * in SystemDS for odd freq (an index past its trend), here an error. */
#include "jlutil.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/gen.h"
#include "../matrix/format.h"
#include "framestr.h"

/* ------------------------------------------------------------ arguments */

bool jlu_is_call(const char *expr)
{
    if (strstr(expr, "->")) return false;
    const char *o = strchr(expr, '('), *c = strchr(expr, ')');
    if (!o || !c || c < o) return false;
    for (const char *p = o + 1; p < c; p++)
        if (*p == ',' || *p == ';') return true;
    return false;
}

/* Java's String.split(sep) of [s, end): the pieces (malloc'd copies in
 * *out, freed by free_args), trailing empty pieces removed. */
static int split_args(const char *s, const char *end, char sep, char ***out, int *n, BrErr *e)
{
    int cap = 1;
    for (const char *p = s; p < end; p++) cap += *p == sep;
    char **a = calloc((size_t)cap, sizeof *a);
    if (!a) return br_err(e, BR_ENOMEM, "map: out of memory");
    int k = 0;
    for (const char *p = s;; ) {
        const char *q = p;
        while (q < end && *q != sep) q++;
        a[k] = strndup(p, (size_t)(q - p));
        if (!a[k]) { for (int i = 0; i < k; i++) free(a[i]); free(a); return br_err(e, BR_ENOMEM, "map: out of memory"); }
        k++;
        if (q >= end) break;
        p = q + 1;
    }
    while (k > 0 && !a[k - 1][0]) free(a[--k]);
    *out = a;
    *n = k;
    return 0;
}

static void free_args(char **a, int n)
{
    for (int i = 0; i < n; i++) free(a[i]);
    free(a);
}

/* Java's Double.parseDouble: surrounding whitespace, a d/f suffix, NaN,
 * Infinity. false if s is no number. */
static bool java_double(const char *s, double *d)
{
    size_t b = 0, n = strlen(s);
    while (b < n && (unsigned char)s[b] <= ' ') b++;
    while (n > b && (unsigned char)s[n - 1] <= ' ') n--;
    if (n > b + 1 && strchr("dDfF", s[n - 1])) n--;
    char buf[128];
    if (n <= b || n - b >= sizeof buf) return false;
    memcpy(buf, s + b, n - b);
    buf[n - b] = 0;
    const char *t = buf + (buf[0] == '+' || buf[0] == '-');
    if (!strcmp(t, "NaN")) { *d = NAN; return true; }
    if (!strcmp(t, "Infinity")) { *d = buf[0] == '-' ? -INFINITY : INFINITY; return true; }
    for (const char *q = t; *q; q++)
        if (!strchr("0123456789.eE+-", *q)) return false;
    char *end;
    *d = strtod(buf, &end);
    return !*end;
}

/* Java's Integer.parseInt: an optional sign and decimal digits only. */
static bool java_int(const char *s, int64_t *v)
{
    const char *p = s + (*s == '-' || *s == '+');
    if (!*p) return false;
    int64_t r = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9') return false;
        r = r * 10 + (*p - '0');
        if (r > (int64_t)INT32_MAX + 1) return false;
    }
    r = *s == '-' ? -r : r;
    if (r > INT32_MAX) return false;
    *v = r;
    return true;
}

/* ------------------------------------------------- histograms (HashMap) */

/* A Java HashMap<String, Integer> as its entries in insertion order. */
typedef struct Hist {
    char **key;
    int64_t *cnt;
    int64_t n, cap;
} Hist;

static void hist_free(Hist *h)
{
    for (int64_t i = 0; i < h->n; i++) free(h->key[i]);
    free(h->key);
    free(h->cnt);
    memset(h, 0, sizeof *h);
}

/* Adds cnt to key's count (a new entry at the end); takes key. */
static int hist_add(Hist *h, char *key, int64_t cnt, BrErr *e)
{
    for (int64_t i = 0; i < h->n; i++)
        if (!strcmp(h->key[i], key)) { h->cnt[i] += cnt; free(key); return 0; }
    if (h->n == h->cap) {
        int64_t c = h->cap ? 2 * h->cap : 16;
        char **k = realloc(h->key, (size_t)c * sizeof *k);
        if (k) h->key = k;
        int64_t *n = k ? realloc(h->cnt, (size_t)c * sizeof *n) : NULL;
        if (!n) { free(key); return br_err(e, BR_ENOMEM, "map: out of memory"); }
        h->cnt = n;
        h->cap = c;
    }
    h->key[h->n] = key;
    h->cnt[h->n++] = cnt;
    return 0;
}

/* The entries' order when Java iterates the HashMap: its table doubles
 * from 16 while size > 0.75 capacity; entries go by bucket (String.hashCode
 * spread as h ^ (h >>> 16)), insertion order within a bucket (resizes keep
 * it). (Buckets turned into trees, 8+ colliding keys, are not modelled.)
 * A malloc'd permutation, NULL when out of memory. */
static int64_t *hist_order(const Hist *h)
{
    int64_t cap = 16;
    while ((double)h->n > 0.75 * (double)cap) cap *= 2;
    int64_t *ord = malloc((size_t)(h->n + 1) * sizeof *ord);
    uint32_t *bk = malloc((size_t)(h->n + 1) * sizeof *bk);
    if (!ord || !bk) { free(ord); free(bk); return NULL; }
    for (int64_t i = 0; i < h->n; i++) {
        uint32_t x = (uint32_t)fs_java_hash(h->key[i]);
        bk[i] = (x ^ (x >> 16)) & (uint32_t)(cap - 1);
        ord[i] = i;
    }
    for (int64_t i = 1; i < h->n; i++) {          /* stable insertion sort */
        int64_t t = ord[i], j = i;
        while (j > 0 && bk[ord[j - 1]] > bk[t]) { ord[j] = ord[j - 1]; j--; }
        ord[j] = t;
    }
    free(bk);
    return ord;
}

/* ------------------------------------------------------------- patterns */

enum { DIGIT = 'd', LOWER = 'l', UPPER = 'u', ALPHA = 'a', SPACE = 's', DOT = 't',
       OTHER = 'y', ANYLEN = '+', MINUS = '-' };

/* Java's class of a UTF-16 unit (code point c below 0x10000). */
static char char_class(uint32_t c)
{
    if (c >= '0' && c <= '9') return DIGIT;
    if ((c >= 'a' && c <= 'z') || c == 0xAA || c == 0xB5 || c == 0xBA ||
        (c >= 0xDF && c <= 0xFF && c != 0xF7)) return LOWER;
    if ((c >= 'A' && c <= 'Z') || (c >= 0xC0 && c <= 0xDE && c != 0xD7)) return UPPER;
    if (c == ' ' || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
        c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000) return SPACE;
    if (c == '.') return DOT;
    if (c == '-') return MINUS;
    return OTHER;
}

/* Decodes one UTF-8 character of s (a bad byte reads as itself). */
static uint32_t u8_next(const unsigned char **s)
{
    const unsigned char *p = *s;
    uint32_t c = *p++;
    int more = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
    uint32_t r = more ? c & (0x3Fu >> more) : c;
    for (int i = 0; i < more; i++) {
        if ((*p & 0xC0) != 0x80) { *s = *s + 1; return c; }
        r = (r << 6) | (*p++ & 0x3F);
    }
    *s = p;
    return r;
}

/* Level 1: class of every UTF-16 unit, run-length coded ("u1l2d1"). */
static char *encode_raw(const char *v)
{
    size_t n = strlen(v);
    char *cls = malloc(2 * n + 1), *out = malloc(24 * n + 1);
    if (!cls || !out) { free(cls); free(out); return NULL; }
    size_t k = 0, o = 0;
    for (const unsigned char *p = (const unsigned char *)v; *p; ) {
        uint32_t c = u8_next(&p);
        if (c >= 0x10000) { cls[k++] = OTHER; cls[k++] = OTHER; }  /* two surrogates */
        else cls[k++] = char_class(c);
    }
    for (size_t i = 0; i < k; i++) {
        size_t cnt = 1;
        while (i + 1 < k && cls[i] == cls[i + 1]) { i++; cnt++; }
        o += (size_t)sprintf(out + o, "%c%zu", cls[i], cnt);
    }
    out[o] = 0;
    free(cls);
    return out;
}

/* Level 2: every digit becomes '+'. */
static char *remove_numbers(const char *p)
{
    char *r = strdup(p);
    if (r)
        for (char *q = r; *q; q++)
            if (*q >= '0' && *q <= '9') *q = ANYLEN;
    return r;
}

/* Level 3: runs of u/l become one 'a'; repeated '+' collapse. */
static char *remove_case(const char *p)
{
    char *r = malloc(strlen(p) + 1);
    if (!r) return NULL;
    size_t o = 0;
    bool alpha = false;
    for (const char *q = p; *q; q++) {
        if (*q == UPPER || *q == LOWER) {
            if (!alpha) { alpha = true; r[o++] = ALPHA; }
        } else if (*q == ANYLEN) {
            if (o > 0 && r[o - 1] != ANYLEN) r[o++] = *q;   /* Java: charAt(-1) cannot happen */
        } else {
            r[o++] = *q;
            alpha = false;
        }
    }
    r[o] = 0;
    return r;
}

/* Levels 4 and 5: inner characters (and '+') inside a run of outer
 * classes vanish (DMVUtils.removeInnerCharacterInPattern). */
static char *remove_inner(const char *p, char outer, char inner)
{
    char *r = malloc(strlen(p) + 1);
    if (!r) return NULL;
    size_t o = 0;
    bool in = false;
    for (const char *q = p; *q; q++) {
        char ch = *q;
        if (ch == outer && !in) { in = true; r[o++] = ch; }
        else if (in && (ch == outer || ch == inner)) continue;
        else if (ch != inner && ch != ANYLEN) { in = false; r[o++] = ch; }
        else if (o > 0 && r[o - 1] != ANYLEN) r[o++] = ch;
    }
    r[o] = 0;
    return r;
}

/* Level 6: a '-' right before a digit class is dropped. */
static char *accept_negative(const char *p)
{
    char *r = malloc(2 * strlen(p) + 1);
    if (!r) return NULL;
    size_t o = 0;
    bool minus = false;
    for (const char *q = p; *q; q++) {
        char ch = *q;
        if (ch == MINUS && !minus) minus = true;
        else if (ch == DIGIT && minus) { r[o++] = ch; minus = false; }
        else if (minus) { r[o++] = MINUS; r[o++] = ch; minus = false; }
        else r[o++] = ch;
    }
    r[o] = 0;   /* a trailing '-' is dropped, as in SystemDS */
    return r;
}

/* The pattern of level lv (1..6) given the pattern of level lv - 1
 * (level 1: the raw value). malloc'd, NULL when out of memory. */
static char *level_step(const char *p, int lv)
{
    switch (lv) {
    case 1: return encode_raw(p);
    case 2: return remove_numbers(p);
    case 3: return remove_case(p);
    case 4: return remove_inner(p, DIGIT, DOT);
    case 5: return remove_inner(p, ALPHA, SPACE);
    default: return accept_negative(p);
    }
}

/* The pattern of value v at level lv (all steps 1..lv). */
static char *pattern_at(const char *v, int lv)
{
    char *p = strdup(v);
    for (int l = 1; l <= lv && p; l++) {
        char *q = level_step(p, l);
        free(p);
        p = q;
    }
    return p;
}

/* Column j of f, patterns discovered and other cells replaced, into
 * column j of string frame r. */
static int dmv_column(const FB *f, int64_t j, double thr, const char *repl, FB *r, BrErr *e)
{
    int64_t n = f->rows;
    char buf[FMT_NUM_MAX + 32];
    Hist prev = {0};
    int rc = 0;
    for (int64_t i = 0; i < n && !rc; i++) {
        const char *t = fb_is_missing(f, i, j) ? NULL : fb_cell_text(f, i, j, buf);
        if (t && fb_set_text(r, i, j, t, strlen(t), e)) return e->code;
        char *k = strdup(t ? t : "NULL");
        rc = k ? hist_add(&prev, k, 1, e) : br_err(e, BR_ENOMEM, "map: out of memory");
    }
    char *dom = NULL;
    int lv = 1;
    for (; lv <= 6 && !rc && !dom; lv++) {
        Hist cur = {0};
        int64_t *ord = hist_order(&prev);
        if (!ord) rc = br_err(e, BR_ENOMEM, "map: out of memory");
        for (int64_t q = 0; q < prev.n && !rc; q++) {
            char *k = level_step(prev.key[ord[q]], lv);
            rc = k ? hist_add(&cur, k, prev.cnt[ord[q]], e) : br_err(e, BR_ENOMEM, "map: out of memory");
        }
        free(ord);
        ord = rc ? NULL : hist_order(&cur);
        if (!rc && !ord) rc = br_err(e, BR_ENOMEM, "map: out of memory");
        for (int64_t q = 0; q < cur.n && !rc && !dom; q++)
            if ((double)cur.cnt[ord[q]] / (double)n > thr) dom = strdup(cur.key[ord[q]]);
        free(ord);
        hist_free(&prev);
        prev = cur;
    }
    hist_free(&prev);
    lv--;
    for (int64_t i = 0; i < n && !rc && dom; i++) {
        const char *t = fb_is_missing(f, i, j) ? "NULL" : fb_cell_text(f, i, j, buf);
        char *p = pattern_at(t, lv);
        if (!p) rc = br_err(e, BR_ENOMEM, "map: out of memory");
        else if (strcmp(p, dom)) rc = fb_set_text(r, i, j, repl, strlen(repl), e);
        free(p);
    }
    free(dom);
    return rc;
}

static FB *dmv(const FB *f, char **arg, int na, BrErr *e)
{
    double thr;
    if (na < 2) {
        br_err(e, BR_EARG, "map: syntacticalPatternDiscovery needs two arguments (threshold,replace)");
        return NULL;
    }
    if (!java_double(arg[0], &thr)) {
        br_err(e, BR_EARG, "map: syntacticalPatternDiscovery: threshold \"%.60s\" is no number", arg[0]);
        return NULL;
    }
    FB *r = fb_new(f->rows, f->cols, NULL, e);
    for (int64_t j = 0; r && j < f->cols; j++)
        if (dmv_column(f, j, thr, arg[1], r, e)) { fb_release(r); return NULL; }
    for (int64_t j = 0; r && f->named && j < f->cols; j++)
        if (fb_set_name(r, j, f->names[j], e)) { fb_release(r); return NULL; }
    return r;
}

/* ---------------------------------------------------------------- ema */

/* Single smoothing: p[0] = x[0], p[i] = a v + (1 - a) p[i-1] with v the
 * value or, when NaN, p[i-1]. */
static void ema_single(const double *x, int64_t n, double a, double *p)
{
    p[0] = x[0];
    for (int64_t i = 1; i < n; i++) {
        double v = isnan(x[i]) ? p[i - 1] : x[i];
        p[i] = a * v + (1 - a) * p[i - 1];
    }
}

/* Double (Holt) smoothing from level x[1] and trend x[1] - x[0]; p[0] =
 * x[0], p[i] the level plus trend after step i - 1. s, b: n scratch. */
static void ema_double(const double *x, int64_t n, double a, double b_, double *p, double *s, double *b)
{
    s[0] = x[1];
    b[0] = x[1] - x[0];
    p[1] = s[0] + b[0];
    for (int64_t i = 1; i < n - 1; i++) {
        double v = isnan(x[i + 1]) ? p[i] : x[i + 1];
        s[i] = a * v + (1 - a) * (s[i - 1] + b[i - 1]);
        b[i] = b_ * (s[i] - s[i - 1]) + (1 - b_) * b[i - 1];
        p[i + 1] = s[i] + b[i];
    }
    p[0] = x[0];
}

/* The seasonal and trend start of triple smoothing (period m, even):
 * moving averages over the first 2m values, seasonal means centred, a
 * least-squares line of the trend. 0; -1 where SystemDS fails (odd m),
 * -2 out of memory. */
static int ema_start(const double *x, int64_t m, double *season, double *l0, double *b0)
{
    int64_t l = 2 * m, nf = m % 2 == 0 ? m + 1 : m;
    int64_t nt = nf - 1;                 /* SystemDS's trend: l - (l - nf + 1) values */
    int64_t cut = (l - nt) / 2, ntmp = l - 2 * cut;
    if (nt < 1 || ntmp > nt || m > ntmp) return -1;
    double *filt = malloc((size_t)(nf + 2 * nt) * sizeof *filt);
    if (!filt) return -2;
    double *trend = filt + nf, *tmp = trend + nt;
    for (int64_t i = 0; i < nf; i++) filt[i] = 1. / (double)m;
    if (m % 2 == 0) filt[0] = filt[nf - 1] = 0.5 / (double)m;
    for (int64_t i = 0; i < nt; i++) {
        double sum = 0;
        for (int64_t j = i; j < i + nf; j++) sum += x[j] * filt[j - i];
        trend[i] = sum;
    }
    for (int64_t i = cut; i < l - cut; i++) tmp[i - cut] = x[i] - trend[i - cut];
    for (int64_t i = 0; i < m; i++) {
        double c = i + m < nt ? (tmp[i] + tmp[i + m]) / 2 : tmp[i];
        season[(i + m / 2) % m] = c;
    }
    double sum = 0;
    for (int64_t i = 0; i < m; i++) sum += season[i];
    double mean = sum / (double)m;
    for (int64_t i = 0; i < m; i++) season[i] = season[i] - mean;
    double sx = 0, sy = 0, xx = 0, xy = 0;
    for (int64_t i = 0; i < nt; i++) { sx += (double)(i + 1); sy += trend[i]; }
    double mx = sx / (double)nt, my = sy / (double)nt;
    for (int64_t i = 0; i < nt; i++) {
        xx += ((double)(i + 1) - mx) * ((double)(i + 1) - mx);
        xy += ((double)(i + 1) - mx) * (trend[i] - my);
    }
    *b0 = xy / xx;
    *l0 = my - *b0 * mx;
    free(filt);
    return 0;
}

/* Triple (additive Holt-Winters) smoothing; p[0..m) = x[0..m). s, b, c:
 * n scratch each. Non-zero with e set when the start fails. */
static int ema_triple(const double *x, int64_t n, double a, double bb, double g, int64_t m,
                      double *p, double *s, double *b, double *c, BrErr *e)
{
    memset(c, 0, (size_t)n * sizeof *c);
    int rc = ema_start(x, m, c, &s[0], &b[0]);
    if (rc) return rc == -2 ? br_err(e, BR_ENOMEM, "map: out of memory")
                            : br_err(e, BR_EARG, "map: exponentialMovingAverageImputation: freq %lld has no seasonal start", (long long)m);
    double *q = p + m;                   /* SystemDS's pred before the x[0..m) prefix */
    q[0] = s[0] + b[0] + c[0];
    for (int64_t i = 1; i < n - m; i++) {
        double v = isnan(x[i + m - 1]) ? q[i - 1] : x[i + m - 1];
        s[i] = a * (v - c[i - 1]) + (1 - a) * (s[i - 1] + b[i - 1]);
        b[i] = bb * (s[i] - s[i - 1]) + (1 - bb) * b[i - 1];
        c[i + m - 1] = g * (v - s[i]) + (1 - g) * c[i - 1];
        q[i] = s[i] + b[i] + c[i];
    }
    for (int64_t i = 0; i < m; i++) p[i] = x[i];
    return 0;
}

/* Column j of f as Double.valueOf of its cells. */
static int ema_values(const FB *f, int64_t j, double *x, BrErr *e)
{
    char buf[FMT_NUM_MAX + 32];
    for (int64_t i = 0; i < f->rows; i++) {
        const FbCol *c = f->c[j];
        if (c->type == FB_FP64) { x[i] = c->d[i]; continue; }
        const char *t = fb_is_missing(f, i, j) ? NULL : fb_cell_text(f, i, j, buf);
        if (!t || c->type == FB_BOOL || !java_double(t, &x[i]))
            return br_err(e, BR_EARG, "map: exponentialMovingAverageImputation: cell (%lld, %lld) is %s%.60s%s, not a number",
                          (long long)i + 1, (long long)j + 1, t ? "\"" : "", t ? t : "missing", t ? "\"" : "");
    }
    return 0;
}

static FB *ema(const FB *f, char **arg, int na, BrErr *e)
{
    int64_t iters, freq;
    double par[3];
    if (na < 6 || !java_int(arg[0], &iters) || !java_int(arg[2], &freq) ||
        !java_double(arg[3], &par[0]) || !java_double(arg[4], &par[1]) || !java_double(arg[5], &par[2])) {
        br_err(e, BR_EARG, "map: exponentialMovingAverageImputation needs (search_iterations;mode;freq;alpha;beta;gamma) "
               "with integers and numbers where SystemDS parses them");
        return NULL;
    }
    const char *mode = arg[1];
    int md = !strcmp(mode, "single") ? 1 : !strcmp(mode, "double") ? 2 : !strcmp(mode, "triple") ? 3 : 0;
    int64_t n = f->rows;
    if (f->cols > 0 && (iters < 1 || !md)) {
        br_err(e, BR_EARG, iters < 1 ? "map: exponentialMovingAverageImputation: search_iterations must be at least 1 (SystemDS fails)"
                                     : "map: exponentialMovingAverageImputation: mode must be \"single\", \"double\" or \"triple\", not \"%.40s\"", mode);
        return NULL;
    }
    int64_t need = md == 1 ? 1 : md == 2 ? 2 : 2 * freq;
    if (f->cols > 0 && md == 3 && (freq < 2 || freq % 2)) {
        br_err(e, BR_EARG, "map: exponentialMovingAverageImputation: triple smoothing needs an even freq >= 2 "
               "(SystemDS indexes past its trend otherwise), got %lld", (long long)freq);
        return NULL;
    }
    if (f->cols > 0 && n < need) {
        br_err(e, BR_EARG, "map: exponentialMovingAverageImputation: %s smoothing needs at least %lld rows, got %lld",
               mode, (long long)need, (long long)n);
        return NULL;
    }
    /* SystemDS draws a NaN parameter once, on the first iteration of the
     * first column, and keeps it */
    if (f->cols > 0 && (isnan(par[0]) || isnan(par[1]) || isnan(par[2]))) {
        uint64_t z = (uint64_t)k_fresh_seed();
        for (int k = 0; k < 3; k++) {
            z += 0x9e3779b97f4a7c15ULL;
            uint64_t y = z;
            y = (y ^ (y >> 30)) * 0xbf58476d1ce4e5b9ULL;
            y = (y ^ (y >> 27)) * 0x94d049bb133111ebULL;
            y ^= y >> 31;
            if (isnan(par[k])) par[k] = (double)(y >> 11) * 0x1.0p-53;
        }
    }
    FbType *ty = malloc((size_t)(f->cols + 1) * sizeof *ty);
    double *w = malloc((size_t)(5 * n + 1) * sizeof *w);
    FB *r = ty && w ? NULL : (br_err(e, BR_ENOMEM, "map: out of memory"), NULL);
    if (ty && w) {
        for (int64_t j = 0; j < f->cols; j++) ty[j] = FB_FP64;
        r = fb_new(n, f->cols, ty, e);
    }
    for (int64_t j = 0; r && j < f->cols; j++) {
        double *x = w, *s = w + n, *b = w + 2 * n, *c = w + 3 * n;
        FbCol *oc = fb_col_mut(r, j, e);
        int rc = !oc || ema_values(f, j, x, e) || fb_set_name(r, j, "FP64", e);
        if (!rc && md == 1) ema_single(x, n, par[0], oc->d);
        if (!rc && md == 2) ema_double(x, n, par[0], par[1], oc->d, s, b);
        if (!rc && md == 3) rc = ema_triple(x, n, par[0], par[1], par[2], freq, oc->d, s, b, c, e);
        if (rc) { fb_release(r); r = NULL; }
    }
    free(ty);
    free(w);
    return r;
}

FB *jlu_map(const FB *f, const char *expr, BrErr *e)
{
    const char *o = strchr(expr, '('), *c = strchr(expr, ')');
    bool comma = memchr(o + 1, ',', (size_t)(c - o - 1)) != NULL;
    char **arg = NULL;
    int na = 0;
    if (split_args(o + 1, c, comma ? ',' : ';', &arg, &na, e)) return NULL;
    FB *r = comma ? dmv(f, arg, na, e) : ema(f, arg, na, e);
    free_args(arg, na);
    return r;
}
