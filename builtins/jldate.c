/* jldate.c: the date helpers of map() lambdas as SystemDS's UtilFunctions
 * computes them (read from its Java source): getDominantDateFormat(col),
 * getTimestamp(col) and addTimeToDate(s, amount, unit).
 *   - A date string's format is the one of SystemDS's 23 formats whose
 *     Java regex matches the lower-cased string (they exclude each other);
 *     none is an error ("Unknown date format.").
 *   - Parsing and formatting follow java.text.SimpleDateFormat for these
 *     patterns: lenient (a day 32 runs into the next month), Locale.US
 *     month names (MMM and MMMM both parse a short or long name, any
 *     case), numeric fields that abut (yyyyMMdd) take the pattern's width,
 *     other numeric fields all their digits; fields the pattern lacks are
 *     1970-01-01 00:00:00. Time is UTC and the calendar proleptic
 *     Gregorian (Java's switches to the Julian calendar before 1582, and
 *     parses in the JVM's zone except in getTimestamp).
 *   - The dominant format of a column is the format most of its values
 *     have; among formats with as many, the last in the iteration order
 *     of the Java HashMap SystemDS counts them in (Stream.max with a
 *     comparator that never answers 0), computed here from String.hashCode
 *     as Java's HashMap orders its keys.
 *   - addTimeToDate adds as Apache Commons' DateUtils (Calendar.add): a
 *     month or year added keeps the day when the month has it, else the
 *     month's last day. */
#include "jlint.h"

#include <pthread.h>
#include <stdio.h>
#include <strings.h>
#include <time.h>

/* SystemDS's formats in its source's order: the regex (Java syntax, the
 * HashMap's key) and the SimpleDateFormat pattern (its value). */
static const struct { const char *re, *fmt; } FMTS[JL_NDATEFMT] = {
    {"^\\d{4}-\\d{1,2}-\\d{1,2}\\s\\d{1,2}:\\d{2}:\\d{2}$", "yyyy-MM-dd HH:mm:ss"},
    {"^\\d{1,2}-\\d{1,2}-\\d{4}\\s\\d{1,2}:\\d{2}:\\d{2}$", "dd-MM-yyyy HH:mm:ss"},
    {"^\\d{1,2}/\\d{1,2}/\\d{4}\\s\\d{1,2}:\\d{2}:\\d{2}$", "MM/dd/yyyy HH:mm:ss"},
    {"^\\d{4}/\\d{1,2}/\\d{1,2}\\s\\d{1,2}:\\d{2}:\\d{2}$", "yyyy/MM/dd HH:mm:ss"},
    {"^\\d{1,2}\\s[a-z]{3}\\s\\d{4}\\s\\d{1,2}:\\d{2}:\\d{2}$", "dd MMM yyyy HH:mm:ss"},
    {"^\\d{1,2}\\s[a-z]{4,}\\s\\d{4}\\s\\d{1,2}:\\d{2}:\\d{2}$", "dd MMMM yyyy HH:mm:ss"},
    {"^\\d{8}$", "yyyyMMdd"},
    {"^\\d{1,2}-\\d{1,2}-\\d{4}$", "dd-MM-yyyy"},
    {"^\\d{4}-\\d{1,2}-\\d{1,2}$", "yyyy-MM-dd"},
    {"^\\d{1,2}/\\d{1,2}/\\d{4}$", "MM/dd/yyyy"},
    {"^\\d{4}/\\d{1,2}/\\d{1,2}$", "yyyy/MM/dd"},
    {"^\\d{1,2}\\s[a-z]{3}\\s\\d{4}$", "dd MMM yyyy"},
    {"^\\d{1,2}\\s[a-z]{4,}\\s\\d{4}$", "dd MMMM yyyy"},
    {"^\\d{12}$", "yyyyMMddHHmm"},
    {"^\\d{8}\\s\\d{4}$", "yyyyMMdd HHmm"},
    {"^\\d{1,2}-\\d{1,2}-\\d{4}\\s\\d{1,2}:\\d{2}$", "dd-MM-yyyy HH:mm"},
    {"^\\d{4}-\\d{1,2}-\\d{1,2}\\s\\d{1,2}:\\d{2}$", "yyyy-MM-dd HH:mm"},
    {"^\\d{1,2}/\\d{1,2}/\\d{4}\\s\\d{1,2}:\\d{2}$", "MM/dd/yyyy HH:mm"},
    {"^\\d{4}/\\d{1,2}/\\d{1,2}\\s\\d{1,2}:\\d{2}$", "yyyy/MM/dd HH:mm"},
    {"^\\d{1,2}\\s[a-z]{3}\\s\\d{4}\\s\\d{1,2}:\\d{2}$", "dd MMM yyyy HH:mm"},
    {"^\\d{1,2}\\s[a-z]{4,}\\s\\d{4}\\s\\d{1,2}:\\d{2}$", "dd MMMM yyyy HH:mm"},
    {"^\\d{14}$", "yyyyMMddHHmmss"},
    {"^\\d{8}\\s\\d{6}$", "yyyyMMdd HHmmss"},
};

static const char *MONTHS[12] = {"January", "February", "March", "April", "May", "June", "July",
                                 "August", "September", "October", "November", "December"};

/* ---- the formats' regexes and the counting map's order, made once ---- */

static pthread_once_t once = PTHREAD_ONCE_INIT;
static JRe *res[JL_NDATEFMT];
static int count_order[JL_NDATEFMT];   /* format indices in the counting map's iteration order */

/* Java's String.hashCode of an ASCII string. */
static int32_t java_hash(const char *s)
{
    uint32_t h = 0;
    for (; *s; s++) h = 31 * h + (unsigned char)*s;
    return (int32_t)h;
}

/* Java's HashMap bucket of a key among 32 (23 entries: the table grew
 * from 16 to 32 and stays below its threshold of 24). */
static int bucket(const char *key)
{
    uint32_t h = (uint32_t)java_hash(key);
    return (int)((h ^ (h >> 16)) & 31);
}

/* order[] (a permutation of in[]) by bucket of key(i), equal buckets in
 * the order of in[] (a HashMap keeps a bucket's keys in insertion order,
 * through resizes too). */
static void hash_order(const int *in, int *order, bool by_fmt)
{
    int n = 0;
    for (int b = 0; b < 32; b++)
        for (int k = 0; k < JL_NDATEFMT; k++)
            if (bucket(by_fmt ? FMTS[in[k]].fmt : FMTS[in[k]].re) == b) order[n++] = in[k];
}

static void init(void)
{
    BrErr e = {0};
    for (int k = 0; k < JL_NDATEFMT; k++) res[k] = jl_re_compile(FMTS[k].re, true, &e);
    /* DATE_FORMATS iterates its regex keys in hash order; the counting
     * map gets its format keys in that order and iterates them in theirs */
    int src[JL_NDATEFMT], by_re[JL_NDATEFMT];
    for (int k = 0; k < JL_NDATEFMT; k++) src[k] = k;
    hash_order(src, by_re, false);
    hash_order(by_re, count_order, true);
}

int jl_date_kind(const char *s, int64_t n)
{
    pthread_once(&once, init);
    char buf[128];
    if (n >= (int64_t)sizeof buf) return -1;   /* longer than any of the formats */
    for (int64_t i = 0; i < n; i++) buf[i] = (char)tolower((unsigned char)s[i]);
    buf[n] = 0;
    for (int k = 0; k < JL_NDATEFMT; k++)
        if (res[k] && regexec(&res[k]->re, buf, 0, NULL, 0) == 0) return k;
    return -1;
}

int jl_date_dominant(const int64_t *counts)
{
    pthread_once(&once, init);
    int best = count_order[0];
    for (int i = 1; i < JL_NDATEFMT; i++)
        if (!(counts[best] > counts[count_order[i]])) best = count_order[i];
    return best;
}

const char *jl_date_pattern(int kind) { return FMTS[kind].fmt; }

/* ---- calendar arithmetic (days since 1970-01-01, proleptic Gregorian) ---- */

static int64_t fdiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = fdiv(y, 400), yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int64_t *m, int64_t *d)
{
    z += 719468;
    int64_t era = fdiv(z, 146097), doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = yoe + era * 400 + (*m <= 2);
}

static int64_t month_days(int64_t y, int64_t m)
{
    return days_from_civil(y + (m == 12), m == 12 ? 1 : m + 1, 1) - days_from_civil(y, m, 1);
}

/* Lenient fields (month 1-based, any range) to milliseconds. */
static int64_t to_ms(int64_t y, int64_t mo, int64_t d, int64_t h, int64_t mi, int64_t s)
{
    y += fdiv(mo - 1, 12);
    mo = mo - 1 - fdiv(mo - 1, 12) * 12 + 1;
    int64_t days = days_from_civil(y, mo, 1) + d - 1;
    return ((days * 24 + h) * 60 + mi) * 60000 + s * 1000;
}

typedef struct Fields { int64_t y, mo, d, h, mi, s, ms; } Fields;

static Fields from_ms(int64_t t)
{
    Fields f;
    int64_t days = fdiv(t, 86400000), rest = t - days * 86400000;
    civil_from_days(days, &f.y, &f.mo, &f.d);
    f.h = rest / 3600000;
    f.mi = rest / 60000 % 60;
    f.s = rest / 1000 % 60;
    f.ms = rest % 1000;
    return f;
}

static int64_t from_ms_year(int64_t t) { return from_ms(t).y; }

/* ---- SimpleDateFormat for the letters y M d H m s S ---- */

/* Pattern token at p: a letter run (*c the letter, *w its count), or
 * literal text (*c 0): one character, or a quoted run where '' is a
 * quote, into lit (*ln bytes, at most 63). Returns the pattern after it. */
static const char *token(const char *p, char *c, int *w, char lit[64], int *ln)
{
    *ln = 0;
    if (isalpha((unsigned char)*p)) {
        *c = *p;
        *w = 1;
        while (p[*w] == *p) (*w)++;
        return p + *w;
    }
    *c = 0;
    if (*p != '\'') { lit[(*ln)++] = *p; return p + 1; }
    if (p[1] == '\'') { lit[(*ln)++] = '\''; return p + 2; }
    for (p++; *p; p++) {
        if (*p == '\'' && p[1] != '\'') return p + 1;
        if (*p == '\'') p++;
        if (*ln < 63) lit[(*ln)++] = *p;
    }
    return p;
}

static bool known_letter(char c) { return strchr("yMdHmsS", c) != NULL; }

/* A month name (long or short, any case) at s: the longest that matches. */
static int month_name(const char *s, int64_t n, int64_t *used)
{
    int best = -1;
    int64_t blen = 0;
    for (int m = 0; m < 12; m++) {
        int64_t L = (int64_t)strlen(MONTHS[m]);
        if (L <= n && L > blen && !strncasecmp(s, MONTHS[m], (size_t)L)) { best = m; blen = L; }
        if (3 <= n && 3 > blen && !strncasecmp(s, MONTHS[m], 3)) { best = m; blen = 3; }
    }
    *used = blen;
    return best;
}

/* A two-digit year as SimpleDateFormat reads "yy": the year within 80
 * years before and 20 after now. */
static int64_t two_digit_year(int64_t yy)
{
    int64_t now = from_ms_year((int64_t)time(NULL) * 1000);
    int64_t start = now - 80, y = start - start % 100 + yy;
    return y < start ? y + 100 : y;
}

int jl_date_parse(const char *s, int64_t n, const char *pat, int64_t *ms)
{
    int64_t v[128] = {0};   /* by letter */
    v['y'] = 1970; v['M'] = 1; v['d'] = 1;
    int64_t i = 0;
    const char *p = pat;
    while (*p) {
        char c, nc, lit[64], nlit[64];
        int w, ln, nw, nln;
        p = token(p, &c, &w, lit, &ln);
        if (!c) {
            if (i + ln > n || memcmp(s + i, lit, (size_t)ln)) return -1;
            i += ln;
            continue;
        }
        if (!known_letter(c)) return -2;
        if (c == 'M' && w >= 3) {
            int64_t used;
            int m = month_name(s + i, n - i, &used);
            if (m < 0) return -1;
            v['M'] = m + 1;
            i += used;
            continue;
        }
        /* a numeric field followed by another takes its width */
        bool abut = *p && (token(p, &nc, &nw, nlit, &nln), nc) && !(nc == 'M' && nw >= 3);
        int64_t j = i, x = 0;
        while (j < n && isdigit((unsigned char)s[j]) && (!abut || j - i < w) && j - i < 18) x = x * 10 + (s[j++] - '0');
        if (j == i) return -1;
        if (c == 'y' && w <= 2 && j - i == 2) x = two_digit_year(x);
        v[(unsigned char)c] = x;
        i = j;
    }
    *ms = to_ms(v['y'], v['M'], v['d'], v['H'], v['m'], v['s']) + v['S'];
    return 0;
}

int64_t jl_date_format(int64_t ms, const char *pat, char *out, size_t cap)
{
    Fields f = from_ms(ms);
    const char *p = pat;
    size_t o = 0;
    while (*p && o + 24 < cap) {
        char c, lit[64];
        int w, ln;
        p = token(p, &c, &w, lit, &ln);
        if (!c || !known_letter(c)) {
            if (c) return -1;
            if (o + (size_t)ln + 24 >= cap) break;
            memcpy(out + o, lit, (size_t)ln);
            o += (size_t)ln;
            continue;
        }
        if (c == 'M' && w >= 3) {
            const char *name = MONTHS[f.mo - 1];
            size_t L = w == 3 ? 3 : strlen(name);
            memcpy(out + o, name, L);
            o += L;
            continue;
        }
        int64_t x = c == 'y' ? f.y : c == 'M' ? f.mo : c == 'd' ? f.d : c == 'H' ? f.h : c == 'm' ? f.mi
                  : c == 's' ? f.s : f.ms;
        if (c == 'y' && w == 2) x %= 100;
        o += (size_t)snprintf(out + o, cap - o, "%0*lld", w > 18 ? 18 : w, (long long)x);
    }
    out[o] = 0;
    return (int64_t)o;
}

int jl_date_add(int64_t ms, int64_t amount, const char *unit, int64_t *res_ms)
{
    static const struct { const char *u; int64_t ms; } FIXED[] = {
        {"ms", 1}, {"m", 60000}, {"H", 3600000}, {"d", 86400000}, {"w", 7 * 86400000LL},
    };
    for (size_t k = 0; k < sizeof FIXED / sizeof FIXED[0]; k++)
        if (!strcmp(unit, FIXED[k].u)) { *res_ms = ms + amount * FIXED[k].ms; return 0; }
    if (strcmp(unit, "M") && strcmp(unit, "y")) { *res_ms = ms + amount * 1000; return 0; }   /* seconds */
    Fields f = from_ms(ms);
    int64_t mo = f.mo - 1 + (unit[0] == 'M' ? amount : 12 * amount);
    int64_t y = f.y + fdiv(mo, 12);
    mo = mo - fdiv(mo, 12) * 12 + 1;
    int64_t d = f.d < month_days(y, mo) ? f.d : month_days(y, mo);
    *res_ms = to_ms(y, mo, d, f.h, f.mi, f.s) + f.ms;
    return 0;
}
