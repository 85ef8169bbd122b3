/* format.c: values as DML prints them (see format.h).
 *
 * Everything is built on one digit engine: shortest() gives the shortest
 * decimal digits that read back as the same double (what Java's
 * Double.toString prints since JDK 19). Java's String.format rounds those
 * digits half-up (%f %e %g: String.format("%.2f", 1.005) is "1.01"), and
 * java.text.DecimalFormat (SystemDS's toString) rounds them half-even,
 * deciding exact ties by the binary value. Both are reproduced here on the
 * digit strings; C's printf is used only to find digits and for the exact
 * tie case of DecimalFormat. Assumes the "C" numeric locale. */
#include "format.h"
#include "../base/strbuf.h"

#include <ctype.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Growable string helpers (base/strbuf.h)                              */

static void sb_rep(StrBuf *b, char c, size_t k)
{
    char blk[64];
    memset(blk, c, sizeof blk);
    while (k > 0) {
        size_t t = k < sizeof blk ? k : sizeof blk;
        sb_put(b, blk, t);
        k -= t;
    }
}

/* Hands over the built string (caller frees) or NULL with e set. */
static char *sb_finish(StrBuf *b, BrErr *e)
{
    if (!b->oom && !b->s) sb_put(b, "", 0);
    if (b->oom) {
        free(b->s);
        br_err(e, BR_ENOMEM, "out of memory while formatting");
        return NULL;
    }
    return b->s;
}

/* ------------------------------------------------------------------ */
/* Shortest round-trip digits                                          */

/* A positive decimal d[0].d[1]...d[n-1] x 10^e (digits as characters, no
 * trailing zeros unless the value is 0, which is "0" with e = 0). */
typedef struct Dec {
    char d[24];
    int n, e;
} Dec;

/* Reads the digits and exponent of printf's "%.*e" output. */
static void parse_e(const char *s, Dec *D)
{
    D->n = 0;
    const char *p = s;
    for (; *p && *p != 'e' && *p != 'E'; p++)
        if (isdigit((unsigned char)*p) && D->n < (int)sizeof D->d) D->d[D->n++] = *p;
    D->e = *p ? atoi(p + 1) : 0;
    while (D->n > 1 && D->d[D->n - 1] == '0') D->n--;
}

/* Formats ax with p digits after the point in scientific form; true when it
 * reads back as ax. */
static bool try_prec(double ax, int p, Dec *D)
{
    /* literal formats: glibc's printf takes a slow path for "%.*e" */
    static const char *const fmt[] = {"%.0e", "%.1e", "%.2e", "%.3e", "%.4e", "%.5e", "%.6e", "%.7e", "%.8e",
                                      "%.9e", "%.10e", "%.11e", "%.12e", "%.13e", "%.14e", "%.15e"};
    char buf[48];
    snprintf(buf, sizeof buf, fmt[p], ax);
    if (strtod(buf, NULL) != ax) return false;
    parse_e(buf, D);
    return true;
}

/* The 17-digit form of ax, which always reads back (the fallback; also
 * keeps D defined should strtod disagree, e.g. under another locale). */
static void full_prec(double ax, Dec *D)
{
    char buf[48];
    snprintf(buf, sizeof buf, "%.16e", ax);
    parse_e(buf, D);
}

/* Does the decimal d[0].d[1]..d[prec-1] x 10^ex read back as ax? Exact
 * in double arithmetic when the digits fit 53 bits and the power of ten is
 * exact (Clinger's fast path), else by strtod. */
static bool reads_back(double ax, const char *d, int prec, int ex)
{
    static const double p10[23] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                   1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    uint64_t mant = 0;
    for (int i = 0; i < prec; i++) mant = mant * 10 + (uint64_t)(d[i] - '0');
    int e10 = ex - (prec - 1);
    if (mant <= ((uint64_t)1 << 53) && e10 >= -22 && e10 <= 22)
        return (e10 >= 0 ? (double)mant * p10[e10] : (double)mant / p10[-e10]) == ax;
    char buf[48];
    int n = 0;
    buf[n++] = d[0];
    buf[n++] = '.';
    memcpy(buf + n, d + 1, (size_t)prec - 1);
    n += prec - 1;
    snprintf(buf + n, sizeof buf - (size_t)n, "e%d", ex);
    return strtod(buf, NULL) == ax;
}

/* Rounds the 17 digits of d17 (exponent ex) to prec digits into D (as
 * parse_e leaves it); true when that decimal reads back as ax. */
static bool try_round(double ax, const char *d17, int ex, int prec, Dec *D)
{
    char d[24];
    memcpy(d, d17, (size_t)prec);
    if (d17[prec] >= '5') {    /* round up, carrying */
        int i = prec - 1;
        while (i >= 0 && d[i] == '9') d[i--] = '0';
        if (i >= 0) d[i]++;
        else { memmove(d + 1, d, (size_t)prec - 1); d[0] = '1'; ex++; }
    }
    if (!reads_back(ax, d, prec, ex)) return false;
    memcpy(D->d, d, (size_t)prec);
    D->n = prec;
    D->e = ex;
    while (D->n > 1 && D->d[D->n - 1] == '0') D->n--;
    return true;
}

/* Shortest digits of ax (finite, > 0) that read back as ax; of several
 * such decimals the closest. As Java, a one-digit result is replaced by the
 * closest two-digit decimal when that also reads back (4.9E-324). */
static void shortest(double ax, Dec *D)
{
    if (ax >= DBL_MIN) {
        /* For normal doubles half an ulp is below half a unit in the 15th
         * digit, so every decimal of <= 15 digits that reads back equals
         * the 15-digit rounding: if that reads back, stripping its zeros
         * gives the shortest; otherwise 16 or 17 digits are needed. The
         * roundings come from the correctly rounded 17 digits, which gives
         * the correct rounding to 15 digits whenever that one can read
         * back, and to 16 digits unless the 17th digit is a 5 (it may come
         * from rounding up a 4: then printf rounds the exact value). */
        char t[48], d17[18];
        snprintf(t, sizeof t, "%.16e", ax);   /* d.dddddddddddddddde[+-]xx */
        d17[0] = t[0];
        memcpy(d17 + 1, t + 2, 16);
        d17[17] = 0;
        int ex = atoi(t + 19);
        if (try_round(ax, d17, ex, 15, D)) goto done;
        if (d17[16] != '5' ? try_round(ax, d17, ex, 16, D) : try_prec(ax, 15, D)) goto done;
        parse_e(t, D);
    } else {
        int p = 0;
        while (p < 16 && !try_prec(ax, p, D)) p++;
        if (p == 16) full_prec(ax, D);
    }
done:
    if (D->n == 1) {
        Dec two;
        if (try_prec(ax, 1, &two)) *D = two;
    }
}

/* ------------------------------------------------------------------ */
/* Double.toString and the other scalars                               */

/* Java's Double.toString into a StrBuf. */
static void put_jdouble(StrBuf *b, double x)
{
    if (isnan(x)) { sb_puts(b, "NaN"); return; }
    if (isinf(x)) { sb_puts(b, x > 0 ? "Infinity" : "-Infinity"); return; }
    if (signbit(x)) sb_putc(b, '-');
    double ax = fabs(x);
    if (ax == 0) { sb_puts(b, "0.0"); return; }
    Dec D;
    shortest(ax, &D);
    if (ax >= 1e-3 && ax < 1e7) {
        if (D.e >= 0) {
            for (int k = 0; k <= D.e; k++) sb_putc(b, k < D.n ? D.d[k] : '0');
            sb_putc(b, '.');
            if (D.n > D.e + 1) sb_put(b, D.d + D.e + 1, (size_t)(D.n - D.e - 1));
            else sb_putc(b, '0');
        } else {
            sb_puts(b, "0.");
            sb_rep(b, '0', (size_t)(-D.e - 1));
            sb_put(b, D.d, (size_t)D.n);
        }
    } else {
        char ex[16];
        sb_putc(b, D.d[0]);
        sb_putc(b, '.');
        if (D.n > 1) sb_put(b, D.d + 1, (size_t)(D.n - 1));
        else sb_putc(b, '0');
        snprintf(ex, sizeof ex, "E%d", D.e);
        sb_puts(b, ex);
    }
}

/* Copies s into buf like snprintf would; returns strlen(s). */
static int copy_out(const char *s, size_t len, char *buf, size_t n)
{
    if (n > 0) {
        size_t k = len < n - 1 ? len : n - 1;
        memcpy(buf, s, k);
        buf[k] = 0;
    }
    return (int)len;
}

int fmt_double(double x, char *buf, size_t n)
{
    char tmp[FMT_NUM_MAX];
    StrBuf b = { tmp, 0, sizeof tmp, false };   /* never grows: max 24 chars */
    put_jdouble(&b, x);
    return copy_out(tmp, b.n, buf, n);
}

int fmt_int(int64_t v, char *buf, size_t n)
{
    return snprintf(buf, n, "%" PRId64, v);
}

const char *fmt_bool(bool b) { return b ? "TRUE" : "FALSE"; }
const char *fmt_bool_file(bool b) { return b ? "true" : "false"; }

/* A scalar the way print shows it. */
static void put_scalar(StrBuf *b, const FmtArg *a)
{
    char tmp[FMT_NUM_MAX];
    switch (a->kind) {
    case FA_DOUBLE: put_jdouble(b, a->d); break;
    case FA_INT: fmt_int(a->i, tmp, sizeof tmp); sb_puts(b, tmp); break;
    case FA_BOOL: sb_puts(b, fmt_bool(a->b)); break;
    default: sb_puts(b, a->s ? a->s : "null"); break;
    }
}

char *fmt_scalar(const FmtArg *a, BrErr *e)
{
    StrBuf b = {0};
    put_scalar(&b, a);
    return sb_finish(&b, e);
}

/* ------------------------------------------------------------------ */
/* Fixed and scientific rendering of digit strings                     */

/* Writes D rounded to prec fraction digits: the integer digits (at least
 * one; with ',' every three when grp), then '.' and the fraction when
 * prec > 0. `up` says whether the dropped part rounds the last kept digit
 * up (decided by the caller's rounding rule). */
static void put_fixed(StrBuf *b, const Dec *D, int prec, bool up, bool grp)
{
    int hi = (D->e > 0 ? D->e : 0) + 1;          /* one slot for a carry */
    size_t L = (size_t)hi + (size_t)prec + 1;    /* positions hi .. -prec */
    char small[128];
    char *a = L <= sizeof small ? small : br_malloc(L);
    if (!a) { b->oom = true; return; }
    for (size_t k = 0; k < L; k++) {
        int idx = D->e - (hi - (int)k);
        a[k] = idx >= 0 && idx < D->n ? D->d[idx] : '0';
    }
    if (up) {
        size_t k = L;
        while (k-- > 0) {
            if (a[k] == '9') { a[k] = '0'; continue; }
            a[k]++;
            break;
        }
    }
    size_t first = 0, ilen = (size_t)hi + 1;     /* integer part a[0..hi] */
    while (first + 1 < ilen && a[first] == '0') first++;
    for (size_t k = first; k < ilen; k++) {
        sb_putc(b, a[k]);
        size_t left = ilen - 1 - k;
        if (grp && left > 0 && left % 3 == 0) sb_putc(b, ',');
    }
    if (prec > 0) {
        sb_putc(b, '.');
        sb_put(b, a + ilen, (size_t)prec);
    }
    if (a != small) free(a);
}

/* Java Formatter's rule: round half-up on the shortest digits, i.e. up
 * when the first dropped digit (index idx of D) is 5 or more. */
static bool half_up(const Dec *D, int idx)
{
    return idx >= 0 && idx < D->n && D->d[idx] >= '5';
}

/* Rounds D to p+1 significant digits (half-up) into a (p+1 chars) and
 * returns the exponent of the result. */
static int round_sig(const Dec *D, int p, char *a)
{
    for (int k = 0; k <= p; k++) a[k] = k < D->n ? D->d[k] : '0';
    int e = D->e;
    if (half_up(D, p + 1)) {
        int k = p;
        for (; k >= 0 && a[k] == '9'; k--) a[k] = '0';
        if (k >= 0) a[k]++;
        else { a[0] = '1'; e++; }      /* 9.99 -> 10.0: rest already '0' */
    }
    return e;
}

/* Java's %e body: d.ddd (p digits) then e+XX (at least two digits). */
static void put_sci(StrBuf *b, const Dec *D, int p, bool alt)
{
    char small[64];
    char *a = (size_t)p + 1 <= sizeof small ? small : br_malloc((size_t)p + 1);
    if (!a) { b->oom = true; return; }
    int e = D->d[0] == '0' ? 0 : round_sig(D, p, a);
    if (D->d[0] == '0') memset(a, '0', (size_t)p + 1);
    sb_putc(b, a[0]);
    if (p > 0 || alt) sb_putc(b, '.');
    sb_put(b, a + 1, (size_t)p);
    char ex[16];
    snprintf(ex, sizeof ex, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
    sb_puts(b, ex);
    if (a != small) free(a);
}

/* ------------------------------------------------------------------ */
/* printf (Java's String.format)                                       */

typedef struct Spec {
    bool left, alt, plus, space, zero, group, paren;
    int width, prec;        /* -1: not given */
    char conv;              /* lower-case conversion letter */
    bool upper;             /* %S %B %X %E %G %C */
} Spec;

/* Writes prefix, zero padding (when sp->zero), body and suffix, justified
 * to sp->width with spaces. Widths count characters (UTF-8 code points). */
static void put_padded(StrBuf *out, const Spec *sp, bool zero, const char *prefix,
                       const char *body, size_t blen, const char *suffix)
{
    size_t len = strlen(prefix) + strlen(suffix);
    for (size_t k = 0; k < blen; k++)
        if (((unsigned char)body[k] & 0xC0) != 0x80) len++;
    size_t w = sp->width > 0 ? (size_t)sp->width : 0;
    size_t zeros = zero && w > len ? w - len : 0;
    size_t spaces = w > len + zeros ? w - len - zeros : 0;
    if (!sp->left) sb_rep(out, ' ', spaces);
    sb_puts(out, prefix);
    sb_rep(out, '0', zeros);
    sb_put(out, body, blen);
    sb_puts(out, suffix);
    if (sp->left) sb_rep(out, ' ', spaces);
}

static void upcase(char *s, size_t n)
{
    for (size_t k = 0; k < n; k++) s[k] = (char)toupper((unsigned char)s[k]);
}

/* A signed number: Java's leading sign ('+', ' ', '-' or '(') and trailing
 * ')' around the magnitude body; zero padding only for finite numbers. */
static void put_number(StrBuf *out, const Spec *sp, bool neg, bool finite, StrBuf *body)
{
    const char *pre = neg ? (sp->paren ? "(" : "-")
                          : sp->plus ? "+" : sp->space ? " " : "";
    const char *suf = neg && sp->paren ? ")" : "";
    if (body->oom) { out->oom = true; return; }
    if (sp->upper && body->s) upcase(body->s, body->n);
    put_padded(out, sp, sp->zero && finite, pre, body->s ? body->s : "", body->n, suf);
}

/* Floating conversions %e %f %g of x. */
static void conv_float(StrBuf *out, const Spec *sp, double x)
{
    StrBuf body = {0};
    if (isnan(x)) {
        sb_puts(&body, "NaN");
        Spec s2 = *sp;
        s2.plus = s2.space = s2.paren = false;
        put_number(out, &s2, false, false, &body);
        free(body.s);
        return;
    }
    bool neg = signbit(x);
    double ax = fabs(x);
    if (isinf(ax)) {
        sb_puts(&body, "Infinity");
        put_number(out, sp, neg, false, &body);
        free(body.s);
        return;
    }
    Dec D = { "0", 1, 0 };
    if (ax > 0) shortest(ax, &D);
    int prec = sp->prec < 0 ? 6 : sp->prec;
    if (sp->conv == 'f') {
        put_fixed(&body, &D, prec, ax > 0 && half_up(&D, D.e + prec + 1), sp->group);
        if (prec == 0 && sp->alt) sb_putc(&body, '.');
    } else if (sp->conv == 'e') {
        put_sci(&body, &D, prec, sp->alt);
    } else {                                       /* 'g' */
        int p = prec == 0 ? 1 : prec;
        int e = 0;
        if (ax > 0) {
            char small[64];
            char *a = (size_t)p <= sizeof small ? small : br_malloc((size_t)p);
            if (!a) { out->oom = true; return; }
            e = round_sig(&D, p - 1, a);
            if (a != small) free(a);
        }
        if (e >= -4 && e < p) {
            int fp = p - 1 - e;
            put_fixed(&body, &D, fp, ax > 0 && half_up(&D, D.e + fp + 1), sp->group);
        } else {
            put_sci(&body, &D, p - 1, sp->alt);
        }
    }
    put_number(out, sp, neg, true, &body);
    free(body.s);
}

/* Integer conversion %d with Java's flags. */
static void conv_int(StrBuf *out, const Spec *sp, int64_t v)
{
    char tmp[FMT_NUM_MAX];
    bool neg = v < 0;
    uint64_t mag = neg ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    snprintf(tmp, sizeof tmp, "%" PRIu64, mag);
    StrBuf body = {0};
    size_t len = strlen(tmp);
    for (size_t k = 0; k < len; k++) {
        sb_putc(&body, tmp[k]);
        size_t left = len - 1 - k;
        if (sp->group && left > 0 && left % 3 == 0) sb_putc(&body, ',');
    }
    put_number(out, sp, neg, true, &body);
    free(body.s);
}

/* %x / %o: two's complement digits of v as Java's Long.toHexString. */
static void conv_radix(StrBuf *out, const Spec *sp, int64_t v)
{
    char tmp[32];
    bool hex = sp->conv == 'x';
    snprintf(tmp, sizeof tmp, hex ? "%" PRIx64 : "%" PRIo64, (uint64_t)v);
    if (sp->upper) upcase(tmp, strlen(tmp));
    const char *pre = !sp->alt ? "" : hex ? (sp->upper ? "0X" : "0x") : "0";
    put_padded(out, sp, sp->zero, pre, tmp, strlen(tmp), "");
}

/* A string conversion (%s %b %c %%): precision truncates (code points),
 * then upper-casing and justification. */
static void conv_str(StrBuf *out, const Spec *sp, const char *s)
{
    size_t n = strlen(s);
    if (sp->prec >= 0) {
        size_t cps = 0, k = 0;
        for (; k < n; k++) {
            if (((unsigned char)s[k] & 0xC0) != 0x80) {
                if (cps == (size_t)sp->prec) break;
                cps++;
            }
        }
        n = k;
    }
    StrBuf body = {0};
    sb_put(&body, s, n);
    if (body.oom) { free(body.s); out->oom = true; return; }
    if (sp->upper && body.s) upcase(body.s, body.n);
    put_padded(out, sp, false, "", body.s ? body.s : "", body.n, "");
    free(body.s);
}

static const char *kind_name(int kind)
{
    switch (kind) {
    case FA_DOUBLE: return "a double";
    case FA_INT: return "an integer";
    case FA_BOOL: return "a boolean";
    default: return "a string";
    }
}

/* The argument as an integer for %d %x %o %c; a double must be integral. */
static int arg_int(const FmtArg *a, const char *spec, int64_t *out, BrErr *e)
{
    if (a->kind == FA_INT) { *out = a->i; return 0; }
    if (a->kind == FA_DOUBLE && isfinite(a->d) && a->d == floor(a->d) &&
        fabs(a->d) < 9.2e18) {
        *out = (int64_t)a->d;
        return 0;
    }
    if (a->kind == FA_DOUBLE) {
        char num[FMT_NUM_MAX];
        fmt_double(a->d, num, sizeof num);
        return br_err(e, BR_EARG, "print: format specifier '%s' needs an integer, "
                      "got the double %s", spec, num);
    }
    return br_err(e, BR_EARG, "print: format specifier '%s' needs an integer, got %s",
                  spec, kind_name(a->kind));
}

/* The argument as a double for %e %f %g (integers convert). */
static int arg_double(const FmtArg *a, const char *spec, double *out, BrErr *e)
{
    if (a->kind == FA_DOUBLE) { *out = a->d; return 0; }
    if (a->kind == FA_INT) { *out = (double)a->i; return 0; }
    return br_err(e, BR_EARG, "print: format specifier '%s' needs a number, got %s",
                  spec, kind_name(a->kind));
}

/* Appends code point cp as UTF-8; false if it is not a valid code point. */
static bool put_utf8(StrBuf *b, int64_t cp)
{
    char u[4];
    if (cp < 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    if (cp < 0x80) { u[0] = (char)cp; sb_put(b, u, 1); }
    else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6)); u[1] = (char)(0x80 | (cp & 0x3F));
        sb_put(b, u, 2);
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12)); u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        sb_put(b, u, 3);
    } else {
        u[0] = (char)(0xF0 | (cp >> 18)); u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); u[3] = (char)(0x80 | (cp & 0x3F));
        sb_put(b, u, 4);
    }
    return true;
}

/* Reads a run of decimal digits (capped to stay in int range). */
static int read_num(const char **pp)
{
    long v = 0;
    const char *p = *pp;
    while (isdigit((unsigned char)*p)) {
        if (v < 100000000) v = v * 10 + (*p - '0');
        p++;
    }
    *pp = p;
    return (int)v;
}

/* Formats one conversion whose argument is a; spec is its text for
 * messages. Returns 0 or an error code. */
static int convert(StrBuf *out, const Spec *sp, const FmtArg *a, const char *spec, BrErr *e)
{
    int64_t iv = 0;
    double dv = 0;
    switch (sp->conv) {
    case 's': {
        StrBuf s = {0};
        if (a->kind == FA_BOOL) sb_puts(&s, fmt_bool_file(a->b));
        else put_scalar(&s, a);
        if (s.oom) { free(s.s); out->oom = true; return 0; }
        conv_str(out, sp, s.s ? s.s : "");
        free(s.s);
        return 0;
    }
    case 'b':
        conv_str(out, sp, a->kind != FA_BOOL || a->b ? "true" : "false");
        return 0;
    case 'c': {
        if (arg_int(a, spec, &iv, e)) return e->code;
        StrBuf s = {0};
        if (!put_utf8(&s, iv)) {
            free(s.s);
            return br_err(e, BR_EARG, "print: format specifier '%s': %" PRId64
                          " is not a character code point", spec, iv);
        }
        conv_str(out, sp, s.s ? s.s : "");
        free(s.s);
        return 0;
    }
    case 'd':
        if (arg_int(a, spec, &iv, e)) return e->code;
        conv_int(out, sp, iv);
        return 0;
    case 'x':
    case 'o':
        if (arg_int(a, spec, &iv, e)) return e->code;
        conv_radix(out, sp, iv);
        return 0;
    default:                                   /* e f g */
        if (arg_double(a, spec, &dv, e)) return e->code;
        conv_float(out, sp, dv);
        return 0;
    }
}

char *fmt_printf(const char *fmt, const FmtArg *args, int nargs, BrErr *e)
{
    StrBuf out = {0};
    int ordinary = 0, last = -1;
    const char *p = fmt;
    while (*p) {
        const char *pct = strchr(p, '%');
        if (!pct) { sb_puts(&out, p); break; }
        sb_put(&out, p, (size_t)(pct - p));
        const char *q = pct + 1;
        Spec sp = { .width = -1, .prec = -1 };
        int index = 0;               /* 0: ordinary, >0: explicit n$, -1: '<' */
        /* explicit argument index "n$" */
        const char *r = q;
        if (isdigit((unsigned char)*r)) {
            int v = read_num(&r);
            if (*r == '$') { index = v; q = r + 1; }
        }
        for (;; q++) {
            switch (*q) {
            case '-': sp.left = true; continue;
            case '#': sp.alt = true; continue;
            case '+': sp.plus = true; continue;
            case ' ': sp.space = true; continue;
            case '0': sp.zero = true; continue;
            case ',': sp.group = true; continue;
            case '(': sp.paren = true; continue;
            case '<': index = -1; continue;
            default: break;
            }
            break;
        }
        if (isdigit((unsigned char)*q)) sp.width = read_num(&q);
        if (*q == '.') {
            q++;
            if (!isdigit((unsigned char)*q)) {
                free(out.s);
                br_err(e, BR_EARG, "print: bad format specifier '%.*s' (precision "
                       "without digits)", (int)(q - pct + (*q != 0)), pct);
                return NULL;
            }
            sp.prec = read_num(&q);
        }
        char c = *q;
        char spec[64];
        int slen = (int)(q - pct) + (c ? 1 : 0);
        snprintf(spec, sizeof spec, "%.*s", slen < 60 ? slen : 60, pct);
        if (!c || !strchr("sSbBcCdxXoeEfgG%n", c)) {
            free(out.s);
            if (!c) br_err(e, BR_EARG, "print: format string ends in an incomplete "
                           "format specifier '%s'", spec);
            else br_err(e, BR_EARG, "print: unknown format conversion '%s'", spec);
            return NULL;
        }
        p = q + 1;
        if (sp.left && sp.zero) sp.zero = false;
        if (sp.plus) sp.space = false;
        if (c == 'n') { sb_putc(&out, '\n'); continue; }
        if (c == '%') { conv_str(&out, &sp, "%"); continue; }
        sp.upper = isupper((unsigned char)c);
        sp.conv = (char)tolower((unsigned char)c);
        if (sp.prec >= 0 && strchr("cdxo", sp.conv)) {
            free(out.s);
            br_err(e, BR_EARG, "print: format specifier '%s' does not take a precision",
                   spec);
            return NULL;
        }
        int ai = index > 0 ? index - 1 : index < 0 ? last : ordinary++;
        if (ai < 0 || ai >= nargs) {
            free(out.s);
            br_err(e, BR_EARG, "print: format specifier '%s' has no argument "
                   "(%d given)", spec, nargs);
            return NULL;
        }
        last = ai;
        if (convert(&out, &sp, &args[ai], spec, e)) {
            free(out.s);
            return NULL;
        }
    }
    return sb_finish(&out, e);
}

/* ------------------------------------------------------------------ */
/* toString of matrices (java.text.DecimalFormat as SystemDS sets it)   */

/* The digits java.text.DecimalFormat starts from for av in [2^53, 2^63)
 * (all integers): Java's FloatingDecimal, which DecimalFormat still uses,
 * takes the exact integer and rounds away floor((b - 54) * log10(2))
 * trailing digits half-up, b the binary exponent (2^60 prints as
 * 1152921504606846980). Elsewhere its digits agree with shortest(). */
static void df_long_digits(double av, Dec *D)
{
    int b;
    frexp(av, &b);
    b -= 1;                                   /* av in [2^b, 2^(b+1)) */
    uint64_t v = (uint64_t)av;
    int ins = b > 54 ? (int)floor((b - 54) * 0.30102999566398120) : 0;
    if (ins > 0) {
        uint64_t pow = 1;
        for (int k = 0; k < ins; k++) pow *= 10;
        uint64_t res = v % pow;
        v /= pow;
        if (res >= pow / 2) v++;
    }
    char tmp[FMT_NUM_MAX];
    int n = snprintf(tmp, sizeof tmp, "%" PRIu64, v);
    memcpy(D->d, tmp, (size_t)n);
    D->n = n;
    D->e = n - 1 + ins;
    while (D->n > 1 && D->d[D->n - 1] == '0') D->n--;
}

/* One cell as DecimalFormat with minf..maxf fraction digits, half-even
 * rounding and no grouping; NaN and infinities as Double.toString. */
static void put_dfcell(StrBuf *b, double v, int minf, int maxf)
{
    if (!isfinite(v)) { put_jdouble(b, v); return; }
    if (signbit(v)) sb_putc(b, '-');      /* also when it rounds to 0: "-0" */
    double av = fabs(v);
    size_t start = b->n;
    Dec D = { "0", 1, 0 };
    if (av >= 9007199254740992.0 && av < 9223372036854775808.0) df_long_digits(av, &D);
    else if (av > 0) shortest(av, &D);
    int idx = D.e + maxf + 1;             /* first dropped digit of D */
    bool tie = false, up = false;
    if (av > 0 && idx >= 0 && idx < D.n) {
        if (D.d[idx] > '5') up = true;
        else if (D.d[idx] == '5') {
            if (idx < D.n - 1) up = true;  /* no trailing zeros in D */
            else tie = true;
        }
    }
    if (tie) {
        /* The digits end in a 5 exactly at the rounding position: which
         * way depends on the binary value (Java's DigitList checks whether
         * the shortest digits were rounded); C's printf rounds the exact
         * value, ties to even, which is the same rule. */
        char small[400];
        int k = snprintf(small, sizeof small, "%.*f", maxf, av);
        if (k >= 0 && (size_t)k < sizeof small) sb_put(b, small, (size_t)k);
        else {
            char *big = br_malloc((size_t)k + 1);
            if (!big) { b->oom = true; return; }
            snprintf(big, (size_t)k + 1, "%.*f", maxf, av);
            sb_put(b, big, (size_t)k);
            free(big);
        }
    } else {
        put_fixed(b, &D, maxf, up, false);
    }
    if (b->oom) return;
    /* drop trailing fraction zeros down to minf digits */
    char *s = b->s + start;
    char *dot = strchr(s, '.');
    if (dot) {
        size_t frac = b->n - (size_t)(dot + 1 - b->s);
        while (frac > (size_t)minf && b->s[b->n - 1] == '0') { b->n--; frac--; }
        if (frac == 0) b->n--;            /* the '.' itself */
        b->s[b->n] = 0;
    }
}

char *fmt_matrix(const MB *m, int64_t rows, int64_t cols, int decimal,
                 bool sparse, const char *sep, const char *linesep, BrErr *e)
{
    int64_t R = rows < 0 || rows > m->rows ? m->rows : rows;
    int64_t C = cols < 0 || cols > m->cols ? m->cols : cols;
    /* DecimalFormat's defaults (0..3 fraction digits), or exactly
     * `decimal` digits (SystemDS pins both since its commit b20b5b9) */
    int minf = decimal < 0 ? 0 : decimal > 340 ? 340 : decimal;
    int maxf = decimal < 0 ? 3 : minf;
    if (!sep) sep = " ";
    if (!linesep) linesep = "\n";
    StrBuf b = {0};
    char num[FMT_NUM_MAX];
    for (int64_t i = 0; i < R && !b.oom; i++) {
        int64_t k = 0, kend = 0;
        if (m->sparse) { k = m->rp[i]; kend = m->rp[i + 1]; }
        for (int64_t j = 0; j < C; j++) {
            double v;
            if (m->sparse) {
                while (k < kend && m->ci[k] < j) k++;
                v = k < kend && m->ci[k] == j ? m->v[k] : 0.0;
                if (sparse && k >= kend) break;      /* rest of row is zero */
            } else {
                v = m->d[i * m->cols + j];
            }
            if (sparse) {
                if (v == 0) continue;                /* NaN is printed */
                fmt_int(i + 1, num, sizeof num);
                sb_puts(&b, num);
                sb_puts(&b, sep);
                fmt_int(j + 1, num, sizeof num);
                sb_puts(&b, num);
                sb_puts(&b, sep);
                put_dfcell(&b, v, minf, maxf);
                sb_puts(&b, linesep);
            } else {
                if (v == 0) v = 0.0;                 /* -0.0 prints as 0 */
                put_dfcell(&b, v, minf, maxf);
                if (j < C - 1) sb_puts(&b, sep);
            }
        }
        if (!sparse) sb_puts(&b, linesep);
    }
    return sb_finish(&b, e);
}

char *fmt_list(const FmtItem *items, int n, int64_t rows, int64_t cols,
               int decimal, bool sparse, const char *sep,
               const char *linesep, BrErr *e)
{
    StrBuf b = {0};
    sb_puts(&b, "List containing:\n[");
    for (int k = 0; k < n; k++) {
        if (k > 0) sb_puts(&b, ", ");
        if (items[k].m) {
            char *s = fmt_matrix(items[k].m, rows, cols, decimal, sparse, sep, linesep, e);
            if (!s) { free(b.s); return NULL; }
            sb_puts(&b, "\nMatrix:\n");
            sb_puts(&b, s);
            free(s);
        } else if (items[k].text) {
            sb_puts(&b, items[k].text);
        } else {
            put_scalar(&b, &items[k].a);
        }
    }
    sb_putc(&b, ']');
    return sb_finish(&b, e);
}
