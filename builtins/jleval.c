/* jleval.c: the interpreter of the lambda language of map() (see
 * jlambda.h): per-thread scratch memory and the evaluation of the tree
 * built by jlambda.c, with Java's semantics for strings, numbers and
 * regexes (POSIX regex.h underneath). */
#include "jlint.h"

#include <math.h>
#include <stdio.h>
#include <strings.h>

#include "../matrix/format.h"

/* ---- scratch memory ---- */

typedef struct Chunk { struct Chunk *next; size_t cap, used; char d[]; } Chunk;
struct JlScratch { Chunk *first, *cur; };

#define CHUNK_MIN 65536

JlScratch *jl_scratch_new(void)
{
    JlScratch *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->first = s->cur = malloc(sizeof(Chunk) + CHUNK_MIN);
    if (!s->first) { free(s); return NULL; }
    s->first->next = NULL;
    s->first->cap = CHUNK_MIN;
    s->first->used = 0;
    return s;
}

void jl_scratch_reset(JlScratch *s)
{
    Chunk *c = s->first->next;
    while (c) { Chunk *n = c->next; free(c); c = n; }
    s->first->next = NULL;
    s->first->used = 0;
    s->cur = s->first;
}

void jl_scratch_free(JlScratch *s)
{
    if (!s) return;
    jl_scratch_reset(s);
    free(s->first);
    free(s);
}

static void *salloc(JlScratch *s, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (s->cur->used + n > s->cur->cap) {
        size_t cap = n > CHUNK_MIN ? n : CHUNK_MIN;
        Chunk *c = malloc(sizeof(Chunk) + cap);
        if (!c) return NULL;
        c->next = NULL;
        c->cap = cap;
        c->used = 0;
        s->cur->next = c;
        s->cur = c;
    }
    void *p = s->cur->d + s->cur->used;
    s->cur->used += n;
    return p;
}

/* ---- evaluation ---- */

typedef struct Ev { JlScratch *s; const JVal *args; BrErr *e; } Ev;

static int oom(Ev *v) { return br_err(v->e, BR_ENOMEM, "map: out of memory"); }

static int rterr(Ev *v, const char *fmt, const char *a)
{
    char m[200];
    snprintf(m, sizeof m, fmt, a);
    return br_err(v->e, BR_EFAIL, "map: %s", m);
}

static const char *kind_name(JvKind k)
{
    static const char *const n[] = {"null", "String", "int", "double", "boolean", "char", "String[]"};
    return n[k];
}

static JVal mkstr(const char *s, int64_t n) { JVal r = {.k = JV_STR, .n = n}; r.s = s; return r; }

/* A string value holding a copy of [s, s+n) (plus a NUL) in the scratch. */
static int newstr(Ev *v, const char *s, int64_t n, JVal *out)
{
    char *d = salloc(v->s, (size_t)n + 1);
    if (!d) return oom(v);
    if (n) memcpy(d, s, (size_t)n);
    d[n] = 0;
    *out = mkstr(d, n);
    return 0;
}

const char *jl_text(JlScratch *s, const JVal *v, size_t *n)
{
    char buf[FMT_NUM_MAX + 8] = {0};
    const char *t = buf;
    switch (v->k) {
    case JV_STR: *n = (size_t)v->n; return v->s;
    case JV_NULL: t = "null"; break;
    case JV_INT: fmt_int(v->i, buf, sizeof buf); break;
    case JV_DBL: fmt_double(v->d, buf, sizeof buf); break;
    case JV_BOOL: t = v->b ? "true" : "false"; break;
    case JV_CHAR: buf[u8_encode(v->c, buf)] = 0; break;
    case JV_ARR: t = "[Ljava.lang.String;"; break;
    }
    size_t l = strlen(t);
    char *d = salloc(s, l + 1);
    if (!d) return NULL;
    memcpy(d, t, l + 1);
    *n = l;
    return d;
}

static int want_str(Ev *v, const JVal *x, const char *what)
{
    if (x->k == JV_STR) return 0;
    if (x->k == JV_NULL) return rterr(v, "null value: %s on null (NullPointerException)", what);
    char m[120];
    snprintf(m, sizeof m, "%s needs a String, not a %s", what, kind_name(x->k));
    return rterr(v, "%s", m);
}

static bool numeric(const JVal *x) { return x->k == JV_INT || x->k == JV_DBL || x->k == JV_CHAR; }
static double num(const JVal *x) { return x->k == JV_DBL ? x->d : x->k == JV_CHAR ? (double)x->c : (double)x->i; }
static int64_t inum(const JVal *x) { return x->k == JV_CHAR ? (int64_t)x->c : x->i; }

static int want_num(Ev *v, const JVal *x, const char *what)
{
    if (numeric(x)) return 0;
    char m[120];
    snprintf(m, sizeof m, "%s needs a number, not a %s", what, kind_name(x->k));
    return rterr(v, "%s", m);
}

static int want_int(Ev *v, const JVal *x, const char *what)
{
    if (x->k == JV_INT || x->k == JV_CHAR) return 0;
    char m[120];
    snprintf(m, sizeof m, "%s needs an int, not a %s", what, kind_name(x->k));
    return rterr(v, "%s", m);
}

static int ev(Ev *v, const Node *x, JVal *out);

/* Java's Integer.parseInt / Long.parseLong: optional sign, digits only. */
static int parse_long(Ev *v, const JVal *a, JVal *out)
{
    if (a->k == JV_INT) { *out = *a; return 0; }
    if (want_str(v, a, "Integer.parseInt")) return v->e->code;
    const char *s = a->s;
    int64_t i = 0, n = a->n;
    bool neg = false;
    if (i < n && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    if (i == n) return rterr(v, "Integer.parseInt: not an integer: \"%.60s\" (NumberFormatException)", s);
    uint64_t r = 0;
    for (; i < n; i++) {
        if (!isdigit((unsigned char)s[i]) || r > (UINT64_MAX - 9) / 10)
            return rterr(v, "Integer.parseInt: not an integer: \"%.60s\" (NumberFormatException)", s);
        r = r * 10 + (uint64_t)(s[i] - '0');
    }
    if (r > (uint64_t)INT64_MAX + neg) return rterr(v, "Integer.parseInt: out of range: \"%.60s\"", s);
    out->k = JV_INT;
    out->i = neg ? (int64_t)(0 - r) : (int64_t)r;
    return 0;
}

/* Java's Double.parseDouble: surrounding whitespace allowed, a trailing
 * d/f suffix, NaN and Infinity. */
static int parse_double(Ev *v, const JVal *a, JVal *out)
{
    if (numeric(a)) { out->k = JV_DBL; out->d = num(a); return 0; }
    if (want_str(v, a, "Double.parseDouble")) return v->e->code;
    const char *s = a->s;
    int64_t b = 0, n = a->n;
    while (b < n && (unsigned char)s[b] <= ' ') b++;
    while (n > b && (unsigned char)s[n - 1] <= ' ') n--;
    if (n > b && strchr("dDfF", s[n - 1]) && n - 1 > b && (isdigit((unsigned char)s[n - 2]) || s[n - 2] == '.')) n--;
    char buf[128];
    double d;
    if (n - b <= 0 || n - b >= (int64_t)sizeof buf) goto bad;
    memcpy(buf, s + b, (size_t)(n - b));
    buf[n - b] = 0;
    if (!strcmp(buf, "NaN")) d = NAN;
    else if (!strcmp(buf, "Infinity") || !strcmp(buf, "+Infinity")) d = INFINITY;
    else if (!strcmp(buf, "-Infinity")) d = -INFINITY;
    else {
        char *end;
        for (char *q = buf; *q; q++)
            if (isalpha((unsigned char)*q) && *q != 'e' && *q != 'E') goto bad;
        d = strtod(buf, &end);
        if (*end) goto bad;
    }
    out->k = JV_DBL;
    out->d = d;
    return 0;
bad:
    return rterr(v, "Double.parseDouble: not a number: \"%.60s\" (NumberFormatException)", s);
}

/* Character-set Jaccard similarity of two strings. */
static double jaccard(const JVal *a, const JVal *b)
{
    uint32_t sa[256], sb[256];
    int na = 0, nb = 0;
    const JVal *in[2] = {a, b};
    uint32_t *set[2] = {sa, sb};
    int *cnt[2] = {&na, &nb};
    for (int w = 0; w < 2; w++) {
        for (int64_t i = 0, l; i < in[w]->n; i += l) {
            uint32_t c = u8_decode(in[w]->s + i, in[w]->n - i, &l);
            bool seen = false;
            for (int k = 0; k < *cnt[w] && !seen; k++) seen = set[w][k] == c;
            if (!seen && *cnt[w] < 256) set[w][(*cnt[w])++] = c;
        }
    }
    int inter = 0;
    for (int i = 0; i < na; i++)
        for (int k = 0; k < nb; k++) inter += sa[i] == sb[k];
    return (double)inter / (double)(na + nb - inter);
}

/* Words of s as Java's s.split(" ") (UtilFunctions.getWordErrorRate):
 * split at every single space, trailing empty words dropped; a string
 * without a space is one word, the empty string included. */
static int words(Ev *v, const JVal *s, const char ***w, int64_t **wl, int64_t *nw)
{
    int64_t cap = 1;
    for (int64_t i = 0; i < s->n; i++) cap += s->s[i] == ' ';
    *w = salloc(v->s, (size_t)cap * sizeof(char *));
    *wl = salloc(v->s, (size_t)cap * sizeof(int64_t));
    if (!*w || !*wl) return oom(v);
    *nw = 0;
    if (!memchr(s->s, ' ', (size_t)s->n)) {
        (*w)[0] = s->s;
        (*wl)[0] = s->n;
        *nw = 1;
        return 0;
    }
    for (int64_t i = 0; i <= s->n;) {
        int64_t j = i;
        while (j < s->n && s->s[j] != ' ') j++;
        (*w)[*nw] = s->s + i;
        (*wl)[(*nw)++] = j - i;
        i = j + 1;
    }
    while (*nw > 0 && (*wl)[*nw - 1] == 0) (*nw)--;
    return 0;
}

/* Word error rate as SystemDS's UtilFunctions.getWordErrorRate: the
 * word-level Levenshtein distance over the longer sentence's word count;
 * with a sentence of no words, the other's word count. */
static int wer(Ev *v, const JVal *r, const JVal *h, JVal *out)
{
    const char **rw, **hw;
    int64_t *rl, *hl, nr, nh;
    if (words(v, r, &rw, &rl, &nr) || words(v, h, &hw, &hl, &nh)) return v->e->code;
    out->k = JV_DBL;
    if (nr == 0 || nh == 0) {
        out->d = (double)(nr > nh ? nr : nh);
        return 0;
    }
    int64_t *d = salloc(v->s, (size_t)(nh + 1) * sizeof(int64_t));
    if (!d) return oom(v);
    for (int64_t j = 0; j <= nh; j++) d[j] = j;
    for (int64_t i = 1; i <= nr; i++) {
        int64_t diag = d[0];
        d[0] = i;
        for (int64_t j = 1; j <= nh; j++) {
            int64_t up = d[j];
            bool same = rl[i - 1] == hl[j - 1] && !memcmp(rw[i - 1], hw[j - 1], (size_t)rl[i - 1]);
            int64_t best = diag + !same;
            if (up + 1 < best) best = up + 1;
            if (d[j - 1] + 1 < best) best = d[j - 1] + 1;
            diag = up;
            d[j] = best;
        }
    }
    out->d = (double)d[nh] / (double)(nr > nh ? nr : nh);
    return 0;
}

/* Appends a replacement with $n group references into b. */
static void put_repl(StrBuf *b, const JVal *rep, const char *base, const JRe *r, const regmatch_t *m, size_t nm)
{
    for (int64_t i = 0; i < rep->n; i++) {
        char c = rep->s[i];
        if (c == '\\' && i + 1 < rep->n) { sb_putc(b, rep->s[++i]); continue; }
        if (c == '$' && i + 1 < rep->n && isdigit((unsigned char)rep->s[i + 1])) {
            int j = rep->s[++i] - '0';
            size_t g = j == 0 ? 0 : j <= r->ngroups ? (size_t)r->gmap[j] : nm;
            if (g < nm && m[g].rm_so >= 0) sb_put(b, base + m[g].rm_so, (size_t)(m[g].rm_eo - m[g].rm_so));
            continue;
        }
        sb_putc(b, c);
    }
}

static int regex_of(Ev *v, const Node *x, const JVal *pat, bool full, JRe **r, bool *own)
{
    *own = false;
    if (x->re) { *r = x->re; return 0; }
    if (want_str(v, pat, "regex")) return v->e->code;
    if (!(*r = jl_re_compile(pat->s, full, v->e))) return v->e->code;
    *own = true;
    return 0;
}

static void regex_done(JRe *r, bool own) { if (own) jl_re_free(r); }

static int re_replace(Ev *v, const Node *x, const JVal *s, const JVal *pat, const JVal *rep, bool first, JVal *out)
{
    if (want_str(v, rep, "replacement")) return v->e->code;
    JRe *r;
    bool own;
    if (regex_of(v, x, pat, false, &r, &own)) return v->e->code;
    StrBuf b = {0};
    regmatch_t m[64];
    size_t nm = r->re.re_nsub + 1 < 64 ? r->re.re_nsub + 1 : 64;
    int64_t pos = 0, n = s->n;
    bool done = false;
    while (!done && pos <= n && regexec(&r->re, s->s + pos, nm, m, pos > 0 ? REG_NOTBOL : 0) == 0) {
        int64_t ms = pos + m[0].rm_so, me = pos + m[0].rm_eo;
        sb_put(&b, s->s + pos, (size_t)(ms - pos));
        put_repl(&b, rep, s->s + pos, r, m, nm);
        if (me == ms) {
            if (ms >= n) { pos = n + 1; break; }
            size_t l = u8_seq((unsigned char)s->s[ms]);
            sb_put(&b, s->s + ms, l);
            pos = ms + (int64_t)l;
        } else {
            pos = me;
        }
        done = first;
    }
    if (pos <= n) sb_put(&b, s->s + pos, (size_t)(n - pos));
    regex_done(r, own);
    int rc = b.oom ? oom(v) : newstr(v, b.s ? b.s : "", (int64_t)b.n, out);
    free(b.s);
    return rc;
}

/* Java's String.split(regex[, limit]). */
static int re_split(Ev *v, const Node *x, const JVal *s, const JVal *pat, int64_t limit, JVal *out)
{
    JRe *r;
    bool own;
    if (regex_of(v, x, pat, false, &r, &own)) return v->e->code;
    int64_t n = s->n, cap = 8, np = 0, start = 0, pos = 0;
    JVal *parts = malloc((size_t)cap * sizeof *parts);
    if (!parts) { regex_done(r, own); return oom(v); }
    regmatch_t m[1];
    bool any = false;
    while (pos <= n && (limit <= 0 || np < limit - 1) && regexec(&r->re, s->s + pos, 1, m, pos > 0 ? REG_NOTBOL : 0) == 0) {
        int64_t ms = pos + m[0].rm_so, me = pos + m[0].rm_eo;
        if (me == ms) {
            if (ms >= n) break;
            pos = ms + (int64_t)u8_seq((unsigned char)s->s[ms]);
            if (ms == 0) continue;
        } else {
            pos = me;
        }
        if (np + 2 > cap) {
            JVal *q = realloc(parts, (size_t)(cap *= 2) * sizeof *parts);
            if (!q) { free(parts); regex_done(r, own); return oom(v); }
            parts = q;
        }
        parts[np++] = mkstr(s->s + start, ms - start);
        start = me;
        any = true;
    }
    regex_done(r, own);
    if (!any) {
        parts[0] = *s;
        np = 1;
    } else {
        parts[np++] = mkstr(s->s + start, n - start);
        if (limit == 0) while (np > 0 && parts[np - 1].n == 0) np--;
    }
    JVal *a = salloc(v->s, (size_t)(np ? np : 1) * sizeof *a);
    if (!a) { free(parts); return oom(v); }
    for (int64_t i = 0; i < np; i++)
        if (newstr(v, parts[i].s, parts[i].n, &a[i])) { free(parts); return v->e->code; }
    free(parts);
    out->k = JV_ARR;
    out->n = np;
    out->a = a;
    return 0;
}

static int s_matches(Ev *v, const Node *x, const JVal *s, const JVal *pat, JVal *out)
{
    JRe *r;
    bool own;
    if (regex_of(v, x, pat, true, &r, &own)) return v->e->code;
    out->k = JV_BOOL;
    out->b = regexec(&r->re, s->s, 0, NULL, 0) == 0;
    regex_done(r, own);
    return 0;
}

/* Code-point index of needle in s at or after code point from, or -1. */
static int64_t index_of(const JVal *s, const char *nd, int64_t nn, int64_t from, bool last)
{
    int64_t best = -1;
    if (from < 0) from = 0;
    int64_t b = u8_off(s->s, s->n, from);
    for (int64_t i = b; i + nn <= s->n; i++) {
        if (((unsigned char)s->s[i] & 0xC0) == 0x80) continue;
        if (!memcmp(s->s + i, nd, (size_t)nn)) {
            best = i;
            if (!last) break;
        }
    }
    return best < 0 ? -1 : u8_count(s->s, best);
}

/* First occurrence of [nd, nd+nn) (nn > 0) in [s, s+n), or NULL. */
static const char *find(const char *s, int64_t n, const char *nd, int64_t nn)
{
    for (int64_t i = 0; i + nn <= n; i++)
        if (s[i] == nd[0] && !memcmp(s + i, nd, (size_t)nn)) return s + i;
    return NULL;
}

static int case_map(Ev *v, const JVal *s, bool up, JVal *out)
{
    char *d = salloc(v->s, (size_t)s->n * 2 + 1);
    if (!d) return oom(v);
    int64_t o = 0;
    for (int64_t i = 0, l; i < s->n; i += l) {
        uint32_t c = u8_decode(s->s + i, s->n - i, &l);
        if (c < 0x100) o += u8_encode(up ? cp_upper(c) : cp_lower(c), d + o);
        else { memcpy(d + o, s->s + i, (size_t)l); o += l; }
    }
    d[o] = 0;
    *out = mkstr(d, o);
    return 0;
}

static int str_arg(Ev *v, const JVal *a, const char **s, int64_t *n, char *buf, const char *what)
{
    if (a->k == JV_CHAR) { *n = u8_encode(a->c, buf); buf[*n] = 0; *s = buf; return 0; }
    if (want_str(v, a, what)) return v->e->code;
    *s = a->s;
    *n = a->n;
    return 0;
}

/* r.replace(s1, s2) (literal, every occurrence; an empty s1 inserts s2
 * around every character) into *out. */
static int replace_lit(Ev *v, const JVal *r, const char *s1, int64_t n1, const char *s2, int64_t n2, JVal *out)
{
    StrBuf b = {0};
    if (n1 == 0) {
        sb_put(&b, s2, (size_t)n2);
        for (int64_t i = 0; i < r->n;) {
            size_t l = u8_seq((unsigned char)r->s[i]);
            sb_put(&b, r->s + i, l);
            sb_put(&b, s2, (size_t)n2);
            i += (int64_t)l;
        }
    } else {
        int64_t i = 0;
        for (;;) {
            const char *q = find(r->s + i, r->n - i, s1, n1);
            if (!q) break;
            sb_put(&b, r->s + i, (size_t)(q - (r->s + i)));
            sb_put(&b, s2, (size_t)n2);
            i = (q - r->s) + n1;
        }
        sb_put(&b, r->s + i, (size_t)(r->n - i));
    }
    int rc = b.oom ? oom(v) : newstr(v, b.s ? b.s : "", (int64_t)b.n, out);
    free(b.s);
    return rc;
}

/* r.equals(a) / r.equalsIgnoreCase(a) (a of any kind: false unless a
 * String). */
static bool str_equals(const JVal *r, const JVal *a, bool ignore_case)
{
    if (a->k != JV_STR || a->n != r->n) return false;
    if (!ignore_case) return !memcmp(r->s, a->s, (size_t)r->n);
    bool eq = true;
    for (int64_t i = 0, l1, l2; i < r->n && eq; i += l1) {
        uint32_t c1 = u8_decode(r->s + i, r->n - i, &l1), c2 = u8_decode(a->s + i, a->n - i, &l2);
        eq = l1 == l2 && cp_lower(c1) == cp_lower(c2);
    }
    return eq;
}

/* r.compareTo(a), Java's: the first differing code points' difference,
 * else the difference of the lengths. */
static int64_t str_compare(const JVal *r, const JVal *a)
{
    int64_t i = 0, j = 0, l1, l2;
    while (i < r->n && j < a->n) {
        uint32_t c1 = u8_decode(r->s + i, r->n - i, &l1), c2 = u8_decode(a->s + j, a->n - j, &l2);
        if (c1 != c2) return (int64_t)c1 - (int64_t)c2;
        i += l1;
        j += l2;
    }
    return u8_count(r->s, r->n) - u8_count(a->s, a->n);
}

static int method(Ev *v, const Node *x, JVal *out)
{
    JVal r, a[2] = {{0}};
    if (ev(v, x->kid[0], &r)) return v->e->code;
    for (int k = 1; k < x->n && k <= 2; k++)
        if (ev(v, x->kid[k], &a[k - 1])) return v->e->code;
    const char *mname = jl_methods[x->op].name;
    if (x->op == M_TOSTRING && r.k != JV_NULL && r.k != JV_ARR) {
        size_t n;
        const char *t = jl_text(v->s, &r, &n);
        if (!t) return oom(v);
        *out = mkstr(t, (int64_t)n);
        return 0;
    }
    if (want_str(v, &r, mname)) return v->e->code;
    char b1[8], b2[8];
    const char *s1 = "", *s2 = "";
    int64_t n1 = 0, n2 = 0, len;
    switch ((Method)x->op) {
    case M_TOUPPER: case M_TOLOWER: return case_map(v, &r, x->op == M_TOUPPER, out);
    case M_TRIM: case M_STRIP: {
        int64_t b = 0, e = r.n;
        while (b < e && (unsigned char)r.s[b] <= ' ') b++;
        while (e > b && (unsigned char)r.s[e - 1] <= ' ') e--;
        return newstr(v, r.s + b, e - b, out);
    }
    case M_LENGTH: out->k = JV_INT; out->i = u8_count(r.s, r.n); return 0;
    case M_SUBSTRING: {
        len = u8_count(r.s, r.n);
        if (want_int(v, &a[0], "substring")) return v->e->code;
        int64_t b = inum(&a[0]), e = len;
        if (x->n == 3) { if (want_int(v, &a[1], "substring")) return v->e->code; e = inum(&a[1]); }
        if (b < 0 || e > len || b > e) {
            char m[120];
            snprintf(m, sizeof m, "substring(%lld, %lld): index out of range for a String of length %lld",
                     (long long)b, (long long)e, (long long)len);
            return rterr(v, "%s", m);
        }
        int64_t ob = u8_off(r.s, r.n, b), oe = u8_off(r.s, r.n, e);
        return newstr(v, r.s + ob, oe - ob, out);
    }
    case M_CHARAT: {
        len = u8_count(r.s, r.n);
        if (want_int(v, &a[0], "charAt")) return v->e->code;
        int64_t i = inum(&a[0]), l;
        if (i < 0 || i >= len) {
            char m[100];
            snprintf(m, sizeof m, "charAt(%lld): index out of range for a String of length %lld", (long long)i, (long long)len);
            return rterr(v, "%s", m);
        }
        int64_t o = u8_off(r.s, r.n, i);
        out->k = JV_CHAR;
        out->c = u8_decode(r.s + o, r.n - o, &l);
        return 0;
    }
    case M_INDEXOF: case M_LASTINDEXOF: {
        if (str_arg(v, &a[0], &s1, &n1, b1, mname)) return v->e->code;
        int64_t from = 0;
        if (x->n == 3) { if (want_int(v, &a[1], mname)) return v->e->code; from = inum(&a[1]); }
        out->k = JV_INT;
        out->i = index_of(&r, s1, n1, from, x->op == M_LASTINDEXOF);
        return 0;
    }
    case M_CONTAINS:
        if (str_arg(v, &a[0], &s1, &n1, b1, mname)) return v->e->code;
        out->k = JV_BOOL;
        out->b = index_of(&r, s1, n1, 0, false) >= 0;
        return 0;
    case M_STARTSWITH: {
        if (str_arg(v, &a[0], &s1, &n1, b1, mname)) return v->e->code;
        int64_t off = 0;
        if (x->n == 3) {
            if (want_int(v, &a[1], mname)) return v->e->code;
            int64_t k = inum(&a[1]);
            off = k < 0 || k > u8_count(r.s, r.n) ? -1 : u8_off(r.s, r.n, k);
        }
        out->k = JV_BOOL;
        out->b = off >= 0 && r.n - off >= n1 && !memcmp(r.s + off, s1, (size_t)n1);
        return 0;
    }
    case M_ENDSWITH:
        if (str_arg(v, &a[0], &s1, &n1, b1, mname)) return v->e->code;
        out->k = JV_BOOL;
        out->b = r.n >= n1 && !memcmp(r.s + r.n - n1, s1, (size_t)n1);
        return 0;
    case M_REPLACE: {
        if (str_arg(v, &a[0], &s1, &n1, b1, mname) || str_arg(v, &a[1], &s2, &n2, b2, mname)) return v->e->code;
        return replace_lit(v, &r, s1, n1, s2, n2, out);
    }
    case M_REPLACEALL: case M_REPLACEFIRST:
        return re_replace(v, x, &r, &a[0], &a[1], x->op == M_REPLACEFIRST, out);
    case M_SPLIT: {
        int64_t limit = 0;
        if (x->n == 3) { if (want_int(v, &a[1], "split")) return v->e->code; limit = inum(&a[1]); }
        return re_split(v, x, &r, &a[0], limit, out);
    }
    case M_CONCAT: {
        if (want_str(v, &a[0], "concat")) return v->e->code;
        char *d = salloc(v->s, (size_t)(r.n + a[0].n) + 1);
        if (!d) return oom(v);
        memcpy(d, r.s, (size_t)r.n);
        memcpy(d + r.n, a[0].s, (size_t)a[0].n);
        d[r.n + a[0].n] = 0;
        *out = mkstr(d, r.n + a[0].n);
        return 0;
    }
    case M_EQUALS: case M_EQUALSIC: out->k = JV_BOOL; out->b = str_equals(&r, &a[0], x->op == M_EQUALSIC); return 0;
    case M_COMPARETO:
        if (want_str(v, &a[0], "compareTo")) return v->e->code;
        out->k = JV_INT;
        out->i = str_compare(&r, &a[0]);
        return 0;
    case M_ISEMPTY: out->k = JV_BOOL; out->b = r.n == 0; return 0;
    case M_ISBLANK: {
        out->k = JV_BOOL;
        out->b = true;
        for (int64_t i = 0, l; i < r.n && out->b; i += l) out->b = cp_space(u8_decode(r.s + i, r.n - i, &l));
        return 0;
    }
    case M_MATCHES: return s_matches(v, x, &r, &a[0], out);
    case M_REPEAT: {
        if (want_int(v, &a[0], "repeat")) return v->e->code;
        int64_t k = inum(&a[0]);
        if (k < 0) return rterr(v, "repeat: negative count%s", "");
        if (r.n && k > (INT64_C(1) << 30) / r.n) return rterr(v, "repeat: result too long%s", "");
        char *d = salloc(v->s, (size_t)(r.n * k) + 1);
        if (!d) return oom(v);
        for (int64_t i = 0; i < k; i++) memcpy(d + i * r.n, r.s, (size_t)r.n);
        d[r.n * k] = 0;
        *out = mkstr(d, r.n * k);
        return 0;
    }
    case M_TOSTRING: *out = r; return 0;
    }
    return 0;
}

/* A column value SystemDS's date helpers skip (their output null): null,
 * blank (Java's trim), "NULL" in any case, "0". */
static bool date_skip(const JVal *x)
{
    if (x->k == JV_NULL) return true;
    if (x->k != JV_STR) return false;
    bool blank = true;
    for (int64_t i = 0; i < x->n && blank; i++) blank = (unsigned char)x->s[i] <= ' ';
    return blank || (x->n == 4 && !strncasecmp(x->s, "null", 4)) || (x->n == 1 && x->s[0] == '0');
}

/* The SystemDS date format of string x (jldate.c) into *kind. */
static int date_kind(Ev *v, const JVal *x, const char *nm, int *kind)
{
    if (want_str(v, x, nm)) return v->e->code;
    *kind = jl_date_kind(x->s, x->n);
    if (*kind < 0) return rterr(v, "Unknown date format: \"%.60s\" (NullPointerException)", x->s);
    return 0;
}

/* x parsed with pattern pat (SimpleDateFormat's letters y M d H m s S). */
static int date_parse_pat(Ev *v, const JVal *x, const char *pat, int64_t *ms)
{
    int r = jl_date_parse(x->s, x->n, pat, ms);
    if (r == -2) return rterr(v, "date pattern \"%.60s\": braid reads only the letters y M d H m s S", pat);
    if (r) return rterr(v, "Unparseable date: \"%.60s\" (ParseException)", x->s);
    return 0;
}

static int date_parse(Ev *v, const JVal *x, int kind, int64_t *ms)
{
    return date_parse_pat(v, x, jl_date_pattern(kind), ms);
}

/* ms in pattern pat as a new string. */
static int date_print(Ev *v, int64_t ms, const char *pat, JVal *out)
{
    char buf[256];
    int64_t len = jl_date_format(ms, pat, buf, sizeof buf);
    if (len < 0) return rterr(v, "date pattern \"%.60s\": braid prints only the letters y M d H m s S", pat);
    return newstr(v, buf, len, out);
}

/* toMillis(s[, pattern]) (a long) and dateFormat(s, [in,] out) or
 * dateFormat(millis, out): s's format found by SystemDS's regexes when no
 * pattern is given. */
static int date_misc(Ev *v, Static op, const JVal *a, int na, const char *nm, JVal *out)
{
    int64_t ms;
    int kind;
    if (op == S_DATEFMT && na == 2 && (a[0].k == JV_INT || a[0].k == JV_CHAR)) {
        if (want_str(v, &a[1], nm)) return v->e->code;
        return date_print(v, inum(&a[0]), a[1].s, out);
    }
    for (int k = 0; k < na; k++)
        if (want_str(v, &a[k], nm)) return v->e->code;
    bool given = (op == S_TOMILLIS && na == 2) || (op == S_DATEFMT && na == 3);
    if (!given && date_kind(v, &a[0], nm, &kind)) return v->e->code;
    if (date_parse_pat(v, &a[0], given ? a[1].s : jl_date_pattern(kind), &ms)) return v->e->code;
    if (op == S_TOMILLIS) {
        out->k = JV_INT;
        out->i = ms;
        return 0;
    }
    return date_print(v, ms, a[na - 1].s, out);
}

/* getDominantDateFormat(col) (every date in the column's most frequent
 * format) and getTimestamp(col) (milliseconds since 1970 UTC) of a
 * String[] column (map with margin=2); skipped values stay null. */
static int date_column(Ev *v, const JVal *col, bool dominant, const char *nm, JVal *out)
{
    if (col->k != JV_ARR) {
        char m[120];
        snprintf(m, sizeof m, "%s needs a String[] (a column: map with margin=2), not a %s", nm, kind_name(col->k));
        return rterr(v, "%s", m);
    }
    JVal *o = salloc(v->s, (size_t)(col->n ? col->n : 1) * sizeof *o);
    if (!o) return oom(v);
    int *kinds = salloc(v->s, (size_t)(col->n ? col->n : 1) * sizeof *kinds);   /* each value's format, found once */
    if (!kinds) return oom(v);
    int64_t counts[JL_NDATEFMT] = {0};
    for (int64_t i = 0; i < col->n; i++) {
        o[i] = (JVal){.k = JV_NULL};
        if (date_skip(&col->a[i])) continue;
        if (date_kind(v, &col->a[i], nm, &kinds[i])) return v->e->code;
        counts[kinds[i]]++;
    }
    int dom = dominant ? jl_date_dominant(counts) : -1;
    for (int64_t i = 0; i < col->n; i++) {
        if (date_skip(&col->a[i])) continue;
        int64_t ms;
        char buf[32];
        if (date_parse(v, &col->a[i], kinds[i], &ms)) return v->e->code;
        if (dominant && date_print(v, ms, jl_date_pattern(dom), &o[i])) return v->e->code;
        if (!dominant && newstr(v, buf, snprintf(buf, sizeof buf, "%lld", (long long)ms), &o[i])) return v->e->code;
    }
    out->k = JV_ARR;
    out->n = col->n;
    out->a = o;
    return 0;
}

/* addTimeToDate(s, amount, unit): s with the time added, in its format. */
static int date_add(Ev *v, const JVal *a, const char *nm, JVal *out)
{
    int kind;
    int64_t ms, r;
    if (date_kind(v, &a[0], nm, &kind) || want_int(v, &a[1], nm) || want_str(v, &a[2], nm)) return v->e->code;
    if (jl_date_parse(a[0].s, a[0].n, jl_date_pattern(kind), &ms))
        return rterr(v, "addTimeToDate: \"%.60s\" does not parse: the date must not be null (IllegalArgumentException)",
                     a[0].s);
    jl_date_add(ms, inum(&a[1]), a[2].s, &r);
    return date_print(v, r, jl_date_pattern(kind), out);
}

/* Java's split pieces of t[0..n) at the matches [ms[k], me[k]) (k < nm):
 * trailing empty pieces dropped; no match leaves t whole. Pieces into
 * ps/pl (room for nm + 1); returns their count. */
static int64_t java_pieces(const char *t, int64_t n, const int64_t *ms, const int64_t *me, int64_t nm,
                           const char **ps, int64_t *pl)
{
    int64_t np = 0, at = 0;
    for (int64_t k = 0; k < nm; k++) { ps[np] = t + at; pl[np++] = ms[k] - at; at = me[k]; }
    ps[np] = t + at;
    pl[np++] = n - at;
    if (nm == 0) return 1;
    while (np > 0 && pl[np - 1] == 0) np--;
    return np;
}

/* UtilFunctions.columnStringToCSVString(input, sep) (Sherlock's data
 * preparation): a printed list's items joined by sep. The first "\"["
 * and the last "]\"" are dropped; quoted items (the text has a ') are
 * split at '<spaces>,<spaces>' after ", None," became ", 'None',", the
 * first item losing its first ' and the last its last character; other
 * text is split at commas. */
static int col_csv(Ev *v, const JVal *in, const JVal *sep, const char *nm, JVal *out)
{
    if (want_str(v, in, nm) || want_str(v, sep, nm)) return v->e->code;
    int64_t n = in->n, cap = 2 * n + 16;
    char *t = salloc(v->s, (size_t)cap);
    int64_t *ms = salloc(v->s, (size_t)(n + 2) * sizeof *ms), *me = salloc(v->s, (size_t)(n + 2) * sizeof *me);
    const char **ps = salloc(v->s, (size_t)(n + 3) * sizeof *ps);
    int64_t *pl = salloc(v->s, (size_t)(n + 3) * sizeof *pl);
    if (!t || !ms || !me || !ps || !pl) return oom(v);
    memcpy(t, in->s, (size_t)n);
    t[n] = 0;
    char *q = strstr(t, "\"[");
    if (q) { memmove(q, q + 2, (size_t)(t + n - q - 1)); n -= 2; }
    q = NULL;
    for (char *r = strstr(t, "]\""); r; r = strstr(r + 1, "]\"")) q = r;
    if (q) { memmove(q, q + 2, (size_t)(t + n - q - 1)); n -= 2; }
    int64_t nm2 = 0, np;
    if (memchr(t, '\'', (size_t)n)) {
        char *u = salloc(v->s, (size_t)cap);   /* ", None," -> ", 'None'," left to right */
        if (!u) return oom(v);
        int64_t o = 0;
        for (int64_t i = 0; i < n;) {
            if (i + 7 <= n && !memcmp(t + i, ", None,", 7)) { memcpy(u + o, ", 'None',", 9); o += 9; i += 7; }
            else u[o++] = t[i++];
        }
        t = u;
        n = o;
        for (int64_t i = 0; i < n; i++) {   /* '[ ]*,[ ]*' */
            if (t[i] != '\'') continue;
            int64_t j = i + 1;
            while (j < n && t[j] == ' ') j++;
            if (j >= n || t[j] != ',') continue;
            j++;
            while (j < n && t[j] == ' ') j++;
            if (j >= n || t[j] != '\'') continue;
            ms[nm2] = i;
            me[nm2++] = j + 1;
            i = j;
        }
        np = java_pieces(t, n, ms, me, nm2, ps, pl);
        if (np == 0 || (np == 1 && pl[0] == 0 && nm2 > 0))
            return rterr(v, "%s: no items (ArrayIndexOutOfBoundsException)", nm);
        const char *a = memchr(ps[0], '\'', (size_t)pl[0]);   /* replaceFirst("'", "") */
        if (a) {
            char *c = salloc(v->s, (size_t)pl[0] + 1);
            if (!c) return oom(v);
            int64_t k = a - ps[0];
            memcpy(c, ps[0], (size_t)k);
            memcpy(c + k, a + 1, (size_t)(pl[0] - k - 1));
            ps[0] = c;
            pl[0]--;
        }
        if (pl[np - 1] == 0) return rterr(v, "%s: an empty last item (StringIndexOutOfBoundsException)", nm);
        pl[np - 1]--;
    } else {
        for (int64_t i = 0; i < n; i++)
            if (t[i] == ',') { ms[nm2] = i; me[nm2++] = i + 1; }
        np = java_pieces(t, n, ms, me, nm2, ps, pl);
    }
    if (np == 0) return rterr(v, "%s: no items (StringIndexOutOfBoundsException)", nm);
    int64_t len = (np - 1) * sep->n;
    for (int64_t k = 0; k < np; k++) len += pl[k];
    char *d = salloc(v->s, (size_t)len + 1);
    if (!d) return oom(v);
    int64_t o = 0;
    for (int64_t k = 0; k < np; k++) {
        if (k) { memcpy(d + o, sep->s, (size_t)sep->n); o += sep->n; }
        memcpy(d + o, ps[k], (size_t)pl[k]);
        o += pl[k];
    }
    d[o] = 0;
    *out = mkstr(d, o);
    return 0;
}

static int st_call(Ev *v, const Node *x, JVal *out)
{
    JVal a[3] = {{0}};
    for (int k = 0; k < x->n; k++)
        if (ev(v, x->kid[k], &a[k])) return v->e->code;
    const char *nm = "";
    for (int k = 0; k < jl_nstatics; k++) if ((int)jl_statics[k].id == x->op) { nm = jl_statics[k].name; break; }
    switch ((Static)x->op) {
    case S_PARSEINT: case S_PARSELONG: return parse_long(v, &a[0], out);
    case S_PARSEDOUBLE: return parse_double(v, &a[0], out);
    case S_VALUEOF: {
        if (a[0].k == JV_ARR) return rterr(v, "String.valueOf of an array%s", "");
        size_t n;
        const char *t = jl_text(v->s, &a[0], &n);
        if (!t) return oom(v);
        *out = mkstr(t, (int64_t)n);
        return 0;
    }
    case S_PARSEBOOL:
        out->k = JV_BOOL;
        out->b = a[0].k == JV_BOOL ? a[0].b : a[0].k == JV_STR && a[0].n == 4 && !strncasecmp(a[0].s, "true", 4);
        return 0;
    case S_JACCARD: case S_WER:
        /* a missing cell (braid reads "" in frame(list(...)) as one) is
         * the empty string, one empty word as Java's "".split(" ") */
        for (int k = 0; k < 2 && x->op == S_WER; k++)
            if (a[k].k == JV_NULL) a[k] = mkstr("", 0);
        if (want_str(v, &a[0], nm) || want_str(v, &a[1], nm)) return v->e->code;
        if (x->op == S_WER) return wer(v, &a[0], &a[1], out);
        out->k = JV_DBL;
        out->d = jaccard(&a[0], &a[1]);
        return 0;
    case S_DOMDATE: case S_TIMESTAMP: return date_column(v, &a[0], x->op == S_DOMDATE, nm, out);
    case S_ADDTIME: return date_add(v, a, nm, out);
    case S_COLCSV: return col_csv(v, &a[0], &a[1], nm, out);
    case S_TOMILLIS: case S_DATEFMT: return date_misc(v, (Static)x->op, a, x->n, nm, out);
    case S_ISDATECOL: {
        int kind;
        if (want_str(v, &a[0], nm)) return v->e->code;
        kind = jl_date_kind(a[0].s, a[0].n);
        *out = mkstr(kind >= 0 ? "1" : "0", 1);
        return 0;
    }
    case S_SPLITRECODE: {
        if (want_str(v, &a[0], nm)) return v->e->code;
        const char *p = NULL;
        for (const char *q = strstr(a[0].s, "\xc2\xb7"); q; q = strstr(q + 1, "\xc2\xb7")) p = q;
        JVal *arr = salloc(v->s, 2 * sizeof *arr);
        if (!arr) return oom(v);
        if (!p) { arr[0] = a[0]; out->n = 1; }
        else {
            arr[0] = mkstr(a[0].s, p - a[0].s);
            if (newstr(v, a[0].s, p - a[0].s, &arr[0])) return v->e->code;
            arr[1] = mkstr(p + 2, a[0].n - (p + 2 - a[0].s));
            out->n = 2;
        }
        out->k = JV_ARR;
        out->a = arr;
        return 0;
    }
    case S_ASCIIAT: {   /* the code of character idx (1-based), 0 outside the string */
        if (want_str(v, &a[0], nm) || want_int(v, &a[1], nm)) return v->e->code;
        int64_t i = inum(&a[1]) - 1, l;
        out->k = JV_INT;
        out->i = 0;
        if (i >= 0 && i < u8_count(a[0].s, a[0].n)) {
            int64_t o = u8_off(a[0].s, a[0].n, i);
            out->i = u8_decode(a[0].s + o, a[0].n - o, &l);
        }
        return 0;
    }
    case S_PORTERSTEM: {
        if (want_str(v, &a[0], nm)) return v->e->code;
        char *buf = salloc(v->s, (size_t)a[0].n + 3);
        if (!buf) return oom(v);
        size_t k = jl_porter_stem(a[0].s, (size_t)a[0].n, buf);
        *out = mkstr(buf, (int64_t)k);
        return 0;
    }
    case S_ISDIGIT: case S_ISLETTER: case S_ISLETTERORDIGIT: case S_ISWHITESPACE: case S_ISUPPER: case S_ISLOWER:
    case S_CTOUPPER: case S_CTOLOWER: {
        if (a[0].k != JV_CHAR && a[0].k != JV_INT) return rterr(v, "%s needs a char", nm);
        uint32_t c = (uint32_t)inum(&a[0]);
        bool dg = c >= '0' && c <= '9', al = cp_alpha(c);
        out->k = JV_BOOL;
        switch ((Static)x->op) {
        case S_ISDIGIT: out->b = dg; break;
        case S_ISLETTER: out->b = al; break;
        case S_ISLETTERORDIGIT: out->b = al || dg; break;
        case S_ISWHITESPACE: out->b = cp_space(c); break;
        case S_ISUPPER: out->b = al && cp_lower(c) != c; break;
        case S_ISLOWER: out->b = al && cp_upper(c) != c; break;
        default: out->k = JV_CHAR; out->c = x->op == S_CTOUPPER ? cp_upper(c) : cp_lower(c); break;
        }
        return 0;
    }
    default: break;
    }
    /* Math */
    for (int k = 0; k < x->n; k++)
        if (want_num(v, &a[k], nm)) return v->e->code;
    bool ints = (a[0].k != JV_DBL) && (x->n < 2 || a[1].k != JV_DBL);
    double d0 = num(&a[0]), d1 = x->n > 1 ? num(&a[1]) : 0, r = 0;
    switch ((Static)x->op) {
    case S_ABS:
        if (ints) { out->k = JV_INT; out->i = inum(&a[0]) < 0 ? -inum(&a[0]) : inum(&a[0]); return 0; }
        r = fabs(d0); break;
    case S_MIN: case S_MAX:
        if (ints) {
            int64_t i0 = inum(&a[0]), i1 = inum(&a[1]);
            out->k = JV_INT;
            out->i = (x->op == S_MIN) == (i0 < i1) ? i0 : i1;
            return 0;
        }
        r = isnan(d0) || isnan(d1) ? NAN : x->op == S_MIN ? fmin(d0, d1) : fmax(d0, d1);
        break;
    case S_POW: r = pow(d0, d1); break;
    case S_SQRT: r = sqrt(d0); break;
    case S_FLOOR: r = floor(d0); break;
    case S_CEIL: r = ceil(d0); break;
    case S_ROUND:
        out->k = JV_INT;
        out->i = isnan(d0) ? 0 : (int64_t)floor(d0 + 0.5);
        return 0;
    case S_LOG: r = log(d0); break;
    case S_LOG10: r = log10(d0); break;
    case S_EXP: r = exp(d0); break;
    case S_SIGNUM: r = d0 > 0 ? 1.0 : d0 < 0 ? -1.0 : d0; break;
    case S_SIN: r = sin(d0); break;
    case S_COS: r = cos(d0); break;
    case S_TAN: r = tan(d0); break;
    default: break;
    }
    out->k = JV_DBL;
    out->d = r;
    return 0;
}

/* Java's == on two values (strings compare by content, leniently). */
static bool equal(const JVal *a, const JVal *b)
{
    if (numeric(a) && numeric(b)) return num(a) == num(b);
    if (a->k != b->k) return false;
    switch (a->k) {
    case JV_NULL: return true;
    case JV_BOOL: return a->b == b->b;
    case JV_STR: return a->n == b->n && !memcmp(a->s, b->s, (size_t)a->n);
    case JV_ARR: return a->a == b->a;
    default: return false;
    }
}

static int binary(Ev *v, const Node *x, JVal *out)
{
    JVal a, b;
    if (ev(v, x->kid[0], &a) || ev(v, x->kid[1], &b)) return v->e->code;
    int op = x->op;
    if (op == '+' && (a.k == JV_STR || b.k == JV_STR)) {
        if (a.k == JV_ARR || b.k == JV_ARR) return rterr(v, "'+' on an array%s", "");
        size_t na, nb;
        const char *sa = jl_text(v->s, &a, &na), *sb = jl_text(v->s, &b, &nb);
        char *d = sa && sb ? salloc(v->s, na + nb + 1) : NULL;
        if (!d) return oom(v);
        memcpy(d, sa, na);
        memcpy(d + na, sb, nb);
        d[na + nb] = 0;
        *out = mkstr(d, (int64_t)(na + nb));
        return 0;
    }
    if (op == OP_EQ || op == OP_NE) {
        out->k = JV_BOOL;
        out->b = equal(&a, &b) == (op == OP_EQ);
        return 0;
    }
    if (!numeric(&a) || !numeric(&b)) {
        char m[100];
        const char *on = op == OP_LE ? "<=" : op == OP_GE ? ">=" : (char[]){(char)op, 0};
        snprintf(m, sizeof m, "operator '%s' on %s and %s", on, kind_name(a.k), kind_name(b.k));
        return rterr(v, "%s", m);
    }
    bool ints = a.k != JV_DBL && b.k != JV_DBL;
    double x0 = num(&a), x1 = num(&b);
    if (op == '<' || op == '>' || op == OP_LE || op == OP_GE) {
        out->k = JV_BOOL;
        out->b = op == '<' ? x0 < x1 : op == '>' ? x0 > x1 : op == OP_LE ? x0 <= x1 : x0 >= x1;
        return 0;
    }
    if (ints) {
        int64_t i0 = inum(&a), i1 = inum(&b);
        out->k = JV_INT;
        switch (op) {
        case '+': out->i = (int64_t)((uint64_t)i0 + (uint64_t)i1); break;
        case '-': out->i = (int64_t)((uint64_t)i0 - (uint64_t)i1); break;
        case '*': out->i = (int64_t)((uint64_t)i0 * (uint64_t)i1); break;
        default:
            if (i1 == 0) return rterr(v, "integer division by zero (ArithmeticException)%s", "");
            if (i1 == -1) out->i = op == '/' ? (int64_t)(0 - (uint64_t)i0) : 0;
            else out->i = op == '/' ? i0 / i1 : i0 % i1;
        }
        return 0;
    }
    out->k = JV_DBL;
    out->d = op == '+' ? x0 + x1 : op == '-' ? x0 - x1 : op == '*' ? x0 * x1 : op == '/' ? x0 / x1 : fmod(x0, x1);
    return 0;
}

static int want_bool(Ev *v, const JVal *x, const char *what)
{
    if (x->k == JV_BOOL) return 0;
    char m[100];
    snprintf(m, sizeof m, "%s needs a boolean, not a %s", what, kind_name(x->k));
    return rterr(v, "%s", m);
}

static int ev(Ev *v, const Node *x, JVal *out)
{
    memset(out, 0, sizeof *out);
    switch (x->kind) {
    case N_LIT: *out = x->lit; return 0;
    case N_PARAM: *out = v->args[x->lit.i]; return 0;
    case N_NEG: {
        JVal a;
        if (ev(v, x->kid[0], &a) || want_num(v, &a, "unary '-'")) return v->e->code;
        if (a.k == JV_DBL) { out->k = JV_DBL; out->d = -a.d; }
        else { out->k = JV_INT; out->i = (int64_t)(0 - (uint64_t)inum(&a)); }
        return 0;
    }
    case N_NOT: {
        JVal a;
        if (ev(v, x->kid[0], &a) || want_bool(v, &a, "'!'")) return v->e->code;
        out->k = JV_BOOL;
        out->b = !a.b;
        return 0;
    }
    case N_AND: case N_OR: {
        JVal a;
        bool strict = x->op == 'A' || x->op == 'O';   /* '&', '|': both sides */
        const char *w = x->kind == N_AND ? (strict ? "'&'" : "'&&'") : (strict ? "'|'" : "'||'");
        if (ev(v, x->kid[0], &a) || want_bool(v, &a, w)) return v->e->code;
        if (!strict && a.b == (x->kind == N_OR)) { *out = a; return 0; }
        if (ev(v, x->kid[1], out) || want_bool(v, out, w)) return v->e->code;
        if (strict) out->b = x->kind == N_AND ? (a.b && out->b) : (a.b || out->b);
        return 0;
    }
    case N_COND: {
        JVal c;
        if (ev(v, x->kid[0], &c) || want_bool(v, &c, "'?:'")) return v->e->code;
        return ev(v, x->kid[c.b ? 1 : 2], out);
    }
    case N_BIN: return binary(v, x, out);
    case N_METHOD: return method(v, x, out);
    case N_STATIC: return st_call(v, x, out);
    case N_INDEX: {
        JVal a, i;
        if (ev(v, x->kid[0], &a) || ev(v, x->kid[1], &i)) return v->e->code;
        if (a.k != JV_ARR) return rterr(v, "indexing [] needs an array, not a %s", kind_name(a.k));
        if (want_int(v, &i, "an array index")) return v->e->code;
        int64_t k = inum(&i);
        if (k < 0 || k >= a.n) {
            char m[100];
            snprintf(m, sizeof m, "array index %lld out of bounds for length %lld", (long long)k, (long long)a.n);
            return rterr(v, "%s", m);
        }
        *out = a.a[k];
        return 0;
    }
    case N_ALEN: {
        JVal a;
        if (ev(v, x->kid[0], &a)) return v->e->code;
        if (a.k != JV_ARR) return rterr(v, ".length needs an array, not a %s (use .length() on Strings)", kind_name(a.k));
        out->k = JV_INT;
        out->i = a.n;
        return 0;
    }
    case N_ARRAY: {
        JVal *arr = salloc(v->s, (size_t)(x->n ? x->n : 1) * sizeof *arr);
        if (!arr) return oom(v);
        for (int k = 0; k < x->n; k++) {
            if (ev(v, x->kid[k], &arr[k])) return v->e->code;
            if (arr[k].k != JV_STR && arr[k].k != JV_NULL) return rterr(v, "a String[] element is a %s", kind_name(arr[k].k));
        }
        out->k = JV_ARR;
        out->n = x->n;
        out->a = arr;
        return 0;
    }
    case N_CAST: {
        JVal a;
        if (ev(v, x->kid[0], &a)) return v->e->code;
        if (x->op == C_STRING) {
            if (a.k != JV_STR && a.k != JV_NULL) return rterr(v, "cannot cast a %s to String", kind_name(a.k));
            *out = a;
            return 0;
        }
        if (want_num(v, &a, "a numeric cast")) return v->e->code;
        if (x->op == C_DOUBLE) { out->k = JV_DBL; out->d = num(&a); return 0; }
        out->k = JV_INT;
        if (a.k != JV_DBL) out->i = inum(&a);
        else out->i = isnan(a.d) ? 0 : a.d >= 9.2e18 ? INT64_MAX : a.d <= -9.2e18 ? INT64_MIN : (int64_t)a.d;
        return 0;
    }
    }
    return 0;
}

int jl_eval(const JLambda *l, JlScratch *s, const JVal *args, JVal *out, BrErr *e)
{
    Ev v = {.s = s, .args = args, .e = e};
    return ev(&v, l->body, out);
}
