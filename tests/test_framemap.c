/* test_framemap: map(X, "lambda"[, margin]) (builtins/framemap.c) and its
 * lambda language (builtins/jlambda.c, builtins/jleval.c): many lambdas on
 * single values, typed results, missing cells, UTF-8 pass-through, bad
 * lambdas and run-time errors, and frames of every shape with mixed column
 * types under 1 and 2 threads against a naive reference. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../matrix/format.h"
#include "../builtins/framemap.h"
#include "../builtins/jlambda.h"
#include "t.h"

/* A 1x1 string frame holding s (NULL: missing). */
static FB *one_frame(const char *s)
{
    BrErr e = {0};
    FB *f = fb_new(1, 1, NULL, &e);
    if (f && s) fb_set_text(f, 0, 0, s, strlen(s), &e);
    return f;
}

/* map of one value; *text receives the result cell's text ("<null>" for
 * missing), *type its column type. Returns the error message or NULL. */
static const char *map1(const char *lambda, const char *in, char *text, size_t n, FbType *type)
{
    static BrErr e;
    br_err_clear(&e);
    FB *f = one_frame(in);
    FB *r = fm_map(f, lambda, 0, &e);
    fb_release(f);
    if (!r) return e.msg;
    char buf[64];
    const char *t = fb_is_missing(r, 0, 0) ? "<null>" : fb_cell_text(r, 0, 0, buf);
    snprintf(text, n, "%s", t ? t : "<null>");
    *type = r->c[0]->type;
    fb_release(r);
    return NULL;
}

static void ok(const char *lambda, const char *in, const char *want, FbType wt)
{
    char got[512];
    FbType t = FB_STRING;
    const char *err = map1(lambda, in, got, sizeof got, &t);
    T_CHECK(!err, "%s on \"%s\": error %s", lambda, in ? in : "(null)", err ? err : "");
    if (err) return;
    T_CHECK(!strcmp(got, want), "%s on \"%s\": got \"%s\", want \"%s\"", lambda, in ? in : "(null)", got, want);
    /* wt is the Java type of the lambda's value; the column is STRING
     * whatever it is, as SystemDS's FrameBlock.map writes
     * String.valueOf of every result (docs/parity.md) */
    (void)wt;
    T_CHECK(t == FB_STRING, "%s on \"%s\": type %s, want STRING", lambda, in ? in : "(null)", fb_type_name(t));
}

static void bad(const char *lambda, const char *in, const char *part)
{
    char got[512];
    FbType t;
    const char *err = map1(lambda, in, got, sizeof got, &t);
    T_CHECK(err && strstr(err, part), "%s: want an error containing \"%s\", got %s", lambda, part, err ? err : got);
    T_CHECK(!err || !strncmp(err, "map", 3), "%s: error does not name map: %s", lambda, err ? err : "");
}

/* map(col, lambda, margin=2) of a one-column frame of vals (NULL:
 * missing) against want, its cells joined by '|' ("<null>" missing), or
 * an error containing want when want starts with "!". */
static void col_ok(const char *lambda, const char *const *vals, int n, const char *want)
{
    BrErr e = {0};
    FB *f = fb_new(n, 1, NULL, &e);
    for (int i = 0; f && i < n; i++)
        if (vals[i]) fb_set_text(f, i, 0, vals[i], strlen(vals[i]), &e);
    FB *r = f ? fm_map(f, lambda, 2, &e) : NULL;
    char got[1024] = "", buf[64];
    size_t o = 0;
    for (int i = 0; r && i < n; i++) {
        const char *t = fb_is_missing(r, i, 0) ? "<null>" : fb_cell_text(r, i, 0, buf);
        o += (size_t)snprintf(got + o, sizeof got - o, "%s%s", i ? "|" : "", t ? t : "<null>");
    }
    if (want[0] == '!')
        T_CHECK(!r && strstr(e.msg, want + 1), "%s: want an error with \"%s\", got %s", lambda, want + 1,
                r ? got : e.msg);
    else
        T_CHECK(r && !strcmp(got, want), "%s on %s...: got \"%s\", want \"%s\"", lambda, vals[0] ? vals[0] : "null",
                r ? got : e.msg, want);
    fb_release(r);
    fb_release(f);
}

/* SystemDS's UtilFunctions date helpers (builtins/jldate.c). The expected
 * values are what the JDK computes (SimpleDateFormat lenient, Locale.US,
 * UTC; Calendar.add; the dominant format as Stream.max over a HashMap of
 * the counts): tests/data/DateRef.java. */
static void test_dates(void)
{
    static const char *D = "x -> UtilFunctions.getDominantDateFormat(x)", *TS = "x -> UtilFunctions.getTimestamp(x)";
    const char *a[] = {"03-06-2003", "04-07-2003", "05-08-2004", "06-06-2006 06:16", NULL, " ", "null", "0"};
    col_ok(D, a, 8, "03-06-2003|04-07-2003|05-08-2004|06-06-2006|<null>|<null>|<null>|<null>");
    /* ties: the last of the counting map's iteration order */
    const char *t1[] = {"2003-06-03", "03/06/2003"}, *t2[] = {"03/06/2003", "2003-06-03"};
    col_ok(D, t1, 2, "2003-06-03|2003-03-06");
    col_ok(D, t2, 2, "2003-03-06|2003-06-03");
    const char *t4[] = {"20030603", "3 Jun 2003", "2003/06/03 10:11", "03-06-2003 10:11:12"};
    col_ok(D, t4, 4, "03 Jun 2003|03 Jun 2003|03 Jun 2003|03 Jun 2003");
    /* lenient fields, month names, abutting digits, before 1970 */
    const char *ts[] = {"31-02-2003", "2003-13-45 25:61:61", "7 September 2003 4:05", "2000/1/2",
                        "1969-12-31 23:59:59", "04-07-2004 04:04:04", "20040805121518"};
    col_ok(TS, ts, 7, "1046649600000|1076810521000|1062907500000|946771200000|-1000|1088913844000|1091708118000");
    const char *u[] = {"2003-06-03", "June 3rd"}, *sept[] = {"7 sept 2003"};
    col_ok(TS, u, 2, "!Unknown date format");
    col_ok(TS, sept, 1, "!Unparseable date");
    bad("x -> UtilFunctions.getTimestamp(x)", "2003-06-03", "String[]");
    /* addTimeToDate: each unit; months and years keep the day or take the month's last */
    static const char *AD[][3] = {
        {"31-01-2004", "1, \"M\"", "29-02-2004"}, {"29 Feb 2004", "1, \"y\"", "28 Feb 2005"},
        {"2003-12-31 23:59:59", "1, \"s\"", "2004-01-01 00:00:00"},
        {"2003-12-31 23:59:59", "1500, \"ms\"", "2004-01-01 00:00:00"}, {"20031231", "-2, \"w\"", "20031217"},
        {"12/31/2003 10:00", "-59, \"m\"", "12/31/2003 09:01"}, {"31 Mar 2003", "-13, \"M\"", "28 Feb 2002"},
        {"31 march 2003", "1, \"d\"", "01 April 2003"}, {"200312312359", "1, \"m\"", "200401010000"},
        {"03-06-2003 23:04:04", "3, \"H\"", "04-06-2003 02:04:04"}};
    for (size_t k = 0; k < sizeof AD / sizeof AD[0]; k++) {
        char l[160];
        snprintf(l, sizeof l, "x -> UtilFunctions.addTimeToDate(x, %s)", AD[k][1]);
        ok(l, AD[k][0], AD[k][2], FB_STRING);
    }
    bad("x -> UtilFunctions.addTimeToDate(x, 1, \"d\")", "yesterday", "Unknown date format");
    /* toMillis, dateFormat (SimpleDateFormat patterns, quotes), isDateColumn */
    ok("x -> UtilFunctions.toMillis(x)", "0/0/2000", "943920000000", FB_INT64);
    ok("x -> UtilFunctions.dateFormat(x, \"yyyy-MM-dd'T'HH:mm:ss.SSS 'x''y'\")", "0/0/2000",
       "1999-11-30T00:00:00.000 x'y", FB_STRING);
    ok("x -> UtilFunctions.dateFormat(x, \"MM/dd/yyyy\", \"dd MMMM yy\")", "9/9/2009", "09 September 09", FB_STRING);
    ok("x -> UtilFunctions.toMillis(x, \"yyyy-mm-dd\")", "2009-3-3", "1230940980000", FB_INT64);
    ok("x -> UtilFunctions.dateFormat(Long.parseLong(x), \"yyyy/MM/dd HH:mm:ss.SSS\")", "1046649600123",
       "2003/03/03 00:00:00.123", FB_STRING);
    ok("x -> UtilFunctions.isDateColumn(x)", "9/9/2009", "1", FB_STRING);
    ok("x -> UtilFunctions.isDateColumn(x)", "9/9/20090", "0", FB_STRING);
    bad("x -> UtilFunctions.toMillis(x, \"EEE yyyy\")", "Mon 2003", "letters");
    bad("x -> UtilFunctions.toMillis(x, 1, 2)", "2003", "wrong number of arguments");
    /* columnStringToCSVString: printed lists' items (checked against
     * SystemDS's method on the JDK) */
    static const char *CS[][2] = {
        {"'Global', 'United States', 'Australia'", "Global;United States;Australia"},
        {"\"['a' ,  'b', None, 'c']\"", "a;b;None;c"}, {"1,2,,3,,", "1;2;;3"}, {"\"[1.5, 2]\"", "1.5; 2"},
        {"'x'", "x"}, {"abc", "abc"}, {"'a', None, None, 'b'", "a;None', None, 'b"}, {"[\"['q','r']\"]", "[q;r'"}};
    for (size_t k = 0; k < sizeof CS / sizeof CS[0]; k++)
        ok("x -> UtilFunctions.columnStringToCSVString(x, \";\")", CS[k][0], CS[k][1], FB_STRING);
}

static void test_strings(void)
{
    ok("x -> x.toUpperCase()", "west", "WEST", FB_STRING);
    ok("x -> x.toLowerCase()", "MiXeD 1", "mixed 1", FB_STRING);
    ok("x -> x.trim()", "  a b \t", "a b", FB_STRING);
    ok("x -> x.strip()", " z ", "z", FB_STRING);
    ok("x -> x.length()", "hello", "5", FB_INT64);
    ok("x -> x.length()", "", "0", FB_INT64);
    ok("x -> x.substring(1)", "hello", "ello", FB_STRING);
    ok("x -> x.substring(0, 3)", "hello", "hel", FB_STRING);
    ok("x -> x.substring(2, 2)", "hello", "", FB_STRING);
    ok("x -> x.charAt(1)", "hello", "e", FB_STRING);
    ok("x -> x.charAt(0) + \"\"", "hello", "h", FB_STRING);
    ok("x -> x.charAt(0) + 1", "a", "98", FB_INT64);
    ok("x -> x.charAt(0) == 'h'", "hello", "true", FB_BOOL);
    ok("x -> x.indexOf(\"l\")", "hello", "2", FB_INT64);
    ok("x -> x.indexOf('l', 3)", "hello", "3", FB_INT64);
    ok("x -> x.indexOf(\"z\")", "hello", "-1", FB_INT64);
    ok("x -> x.lastIndexOf(\"l\")", "hello", "3", FB_INT64);
    ok("x -> x.contains(\"ell\")", "hello", "true", FB_BOOL);
    ok("x -> x.startsWith(\"he\")", "hello", "true", FB_BOOL);
    ok("x -> x.startsWith(\"l\", 2)", "hello", "true", FB_BOOL);
    ok("x -> x.endsWith(\"lo\")", "hello", "true", FB_BOOL);
    ok("x -> x.endsWith(\"x\")", "hello", "false", FB_BOOL);
    ok("x -> x.replace(\"l\", \"L\")", "hello", "heLLo", FB_STRING);
    ok("x -> x.replace('l', 'L')", "hello", "heLLo", FB_STRING);
    ok("x -> x.replace(\"\", \"-\")", "ab", "-a-b-", FB_STRING);
    ok("x -> x.replaceAll(\"[aeiou]\", \"\")", "education", "dctn", FB_STRING);
    ok("x -> x.replaceAll(\"\\\\s+\", \" \")", "a  b \t c", "a b c", FB_STRING);
    ok("x -> x.replaceAll(\"[^a-zA-Z\\\\s]\", \" \")", "it's 3.5 ok", "it s     ok", FB_STRING);
    ok("x -> x.replaceAll(\"[.]\", \"\")", "a.b.c", "abc", FB_STRING);
    ok("x -> x.replaceAll(\"(\\\\w+)@(\\\\w+)\", \"$2 at $1\")", "me@home", "home at me", FB_STRING);
    ok("x -> x.replaceAll(\"b*\", \"-\")", "abc", "-a--c-", FB_STRING);
    ok("x -> x.replaceAll(\"\\\\d\", \"#\")", "a1b22", "a#b##", FB_STRING);
    ok("x -> x.replaceFirst(\"o\", \"0\")", "foo", "f0o", FB_STRING);
    ok("x -> x.split(\" \")[0]", "hello big world", "hello", FB_STRING);
    ok("x -> x.split(\" \")[2]", "hello big world", "world", FB_STRING);
    ok("x -> x.split(\",\").length", "a,b,,c,,", "4", FB_INT64);
    ok("x -> x.split(\",\", -1).length", "a,b,,c,,", "6", FB_INT64);
    ok("x -> x.split(\",\", 2)[1]", "a,b,c", "b,c", FB_STRING);
    ok("x -> x.split(\"\").length", "abc", "3", FB_INT64);
    ok("x -> x.split(\"\\\\s+\")[1]", "one   two", "two", FB_STRING);
    ok("x -> x.split(\"x\").length", "", "1", FB_INT64);
    ok("x -> x.split(\" \").length", " ", "0", FB_INT64);
    ok("x -> x.split(\"\\\\.\")[1]", "a.b", "b", FB_STRING);
    ok("x -> x.split(\"|\")[0]", "ab", "a", FB_STRING);
    ok("x -> x.concat(\"!\")", "hi", "hi!", FB_STRING);
    ok("x -> x.equals(\"hi\")", "hi", "true", FB_BOOL);
    ok("x -> \"HI\".equalsIgnoreCase(x)", "hi", "true", FB_BOOL);
    ok("x -> x.compareTo(\"b\")", "a", "-1", FB_INT64);
    ok("x -> x.isEmpty()", "", "true", FB_BOOL);
    ok("x -> x.isEmpty() ? \"empty\" : x", "", "empty", FB_STRING);
    ok("x -> x.isBlank()", " \t", "true", FB_BOOL);
    ok("x -> x.matches(\"[0-9]+\")", "123", "true", FB_BOOL);
    ok("x -> x.matches(\"[0-9]+\")", "12a", "false", FB_BOOL);
    ok("x -> x.matches(\"a|ab\")", "ab", "true", FB_BOOL);
    ok("x -> x.repeat(3)", "ab", "ababab", FB_STRING);
    ok("x -> x.toString()", "ab", "ab", FB_STRING);
    ok("x -> \"<\" + x + \">\"", "a", "<a>", FB_STRING);
    ok("x -> x + 1 + 2", "a", "a12", FB_STRING);
    ok("x -> 1 + 2 + x", "a", "3a", FB_STRING);
    ok("x -> x + 1.5", "a", "a1.5", FB_STRING);
    ok("x -> x + true + null", "a", "atruenull", FB_STRING);
    ok("x -> \"tab\\there\\\"q\\\" \\u00e9\"", "a", "tab\there\"q\" \xc3\xa9", FB_STRING);
    ok("(String x) -> { return x.trim(); }", " a ", "a", FB_STRING);
    ok("(x) -> x", "same", "same", FB_STRING);
}

static void test_numbers(void)
{
    ok("x -> Integer.parseInt(x) * 2", "21", "42", FB_INT64);
    ok("x -> Integer.parseInt(x) / 2", "7", "3", FB_INT64);
    ok("x -> Integer.parseInt(x) % 3", "-7", "-1", FB_INT64);
    ok("x -> Integer.valueOf(x) + 1", "+4", "5", FB_INT64);
    ok("x -> Long.parseLong(x) - 1", "10000000000", "9999999999", FB_INT64);
    ok("x -> Double.parseDouble(x) / 4", "1", "0.25", FB_FP64);
    ok("x -> Double.parseDouble(x)", " 2.5e1 ", "25.0", FB_FP64);
    ok("x -> Double.parseDouble(x) * 2", "NaN", "NaN", FB_FP64);
    ok("x -> String.valueOf(Double.parseDouble(x))", "3", "3.0", FB_STRING);
    ok("x -> String.valueOf(Double.parseDouble(x))", "0.00001", "1.0E-5", FB_STRING);
    ok("x -> String.valueOf(x.length() > 2)", "abc", "true", FB_STRING);
    ok("x -> Boolean.parseBoolean(x)", "TRUE", "true", FB_BOOL);
    ok("x -> Boolean.parseBoolean(x)", "yes", "false", FB_BOOL);
    ok("x -> Math.abs(Integer.parseInt(x))", "-3", "3", FB_INT64);
    ok("x -> Math.max(x.length(), 4)", "ab", "4", FB_INT64);
    ok("x -> Math.min(1.5, x.length())", "ab", "1.5", FB_FP64);
    ok("x -> Math.pow(2, x.length())", "abc", "8.0", FB_FP64);
    ok("x -> Math.sqrt(Double.parseDouble(x))", "16", "4.0", FB_FP64);
    ok("x -> Math.round(Double.parseDouble(x))", "2.5", "3", FB_INT64);
    ok("x -> Math.round(Double.parseDouble(x))", "-2.5", "-2", FB_INT64);
    ok("x -> Math.floor(-1.5) + Math.ceil(1.2)", "", "0.0", FB_FP64);
    ok("x -> (int) Double.parseDouble(x)", "-3.9", "-3", FB_INT64);
    ok("x -> (double) x.length() / 4", "ab", "0.5", FB_FP64);
    ok("x -> x.length() / 4", "ab", "0", FB_INT64);
    ok("x -> -x.length() + 1", "abc", "-2", FB_INT64);
    ok("x -> 1.0 / 0", "", "Infinity", FB_FP64);
    ok("x -> 10 - 2 * 3 + 8 / 4 % 3", "", "6", FB_INT64);
    ok("x -> (10 - 2) * 3", "", "24", FB_INT64);
    ok("x -> 2L + 0.5f", "", "2.5", FB_FP64);
    ok("x -> x.length() >= 3 && x.startsWith(\"a\") || x.equals(\"z\")", "abc", "true", FB_BOOL);
    ok("x -> !(x.length() < 3)", "abc", "true", FB_BOOL);
    ok("x -> x.length() != 3", "abc", "false", FB_BOOL);
    ok("x -> x.length() > 3 ? \"long\" : x.length() > 1 ? \"mid\" : \"short\"", "ab", "mid", FB_STRING);
    ok("x -> x.isEmpty() ? null : x", "", "<null>", FB_STRING);
    ok("x -> x == null", "a", "false", FB_BOOL);
    ok("x -> x == \"a\"", "a", "true", FB_BOOL);
    ok("x -> Character.isDigit(x.charAt(0))", "7a", "true", FB_BOOL);
    ok("x -> Character.toUpperCase(x.charAt(0)) + x.substring(1)", "word", "Word", FB_STRING);
    ok("x -> UtilFunctions.jaccardSim(x, \"east\")", "west", "0.6", FB_FP64);
    ok("x -> UtilFunctions.getWordErrorRate(x, \"the cat sat\")", "the cat sat down", "0.25", FB_FP64);
    ok("x -> UtilFunctions.getWordErrorRate(x, \"a b\")", "a b", "0.0", FB_FP64);
    /* SystemDS's: over the longer sentence's words, split(" ") words */
    ok("x -> UtilFunctions.getWordErrorRate(x, \"a b c d\")", "a b", "0.5", FB_FP64);
    ok("x -> UtilFunctions.getWordErrorRate(x, \"a b\")", "a  b", "0.3333333333333333", FB_FP64);
    ok("x -> UtilFunctions.getWordErrorRate(x, \"a b\")", "a b ", "0.0", FB_FP64);
    ok("x -> UtilFunctions.getWordErrorRate(x, \"a b\")", " ", "2.0", FB_FP64);
    ok("s -> UtilFunctions.getAsciiAtIdx(s, 2)", "abc", "98", FB_INT64);
    ok("s -> UtilFunctions.getAsciiAtIdx(s, 2)", "z\xc3\xa9", "233", FB_INT64);
    ok("s -> UtilFunctions.getAsciiAtIdx(s, 4)", "abc", "0", FB_INT64);
    ok("s -> UtilFunctions.getAsciiAtIdx(s, 0)", "abc", "0", FB_INT64);
    ok("x -> UtilFunctions.splitRecodeEntry(x)[1]", "abc\xc2\xb7" "3", "3", FB_STRING);
    ok("x -> Integer.parseInt(UtilFunctions.splitRecodeEntry(x)[1])", "a\xc2\xb7" "b\xc2\xb7" "12", "12", FB_INT64);
}

static void test_unicode_null(void)
{
    /* UTF-8 bytes pass through; indexes count code points */
    ok("x -> x", "gr\xc3\xbc\xc3\x9f \xe6\x97\xa5\xe6\x9c\xac", "gr\xc3\xbc\xc3\x9f \xe6\x97\xa5\xe6\x9c\xac", FB_STRING);
    ok("x -> x.length()", "gr\xc3\xbc\xc3\x9f", "4", FB_INT64);
    ok("x -> x.substring(1, 3)", "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", "\xe6\x9c\xac\xe8\xaa\x9e", FB_STRING);
    ok("x -> x.charAt(2)", "a\xc3\xa9\xe6\x97\xa5", "\xe6\x97\xa5", FB_STRING);
    ok("x -> x.indexOf(\"\xe6\x97\xa5\")", "a\xc3\xa9\xe6\x97\xa5", "2", FB_INT64);
    ok("x -> x.toUpperCase()", "\xc3\xa9t\xc3\xa9 \xe6\x97\xa5", "\xc3\x89T\xc3\x89 \xe6\x97\xa5", FB_STRING);
    ok("x -> x.replaceAll(\"\xc3\xa9\", \"e\")", "\xc3\xa9t\xc3\xa9", "ete", FB_STRING);
    ok("x -> x.split(\"\xc3\x9f\")[1]", "a\xc3\x9f" "b", "b", FB_STRING);
    ok("x -> x.replace(\"\", \"|\")", "\xc3\xa9" "a", "|\xc3\xa9|a|", FB_STRING);
    /* regexes match whole UTF-8 characters; groups keep Java's numbers */
    ok("x -> x.replaceAll(\"[^a-zA-Z]\", \"_\")", "Z\xc3\xbcrich", "Z_rich", FB_STRING);
    ok("x -> x.replaceAll(\".\", \"*\")", "a\xc3\xa9\xe6\x97\xa5", "***", FB_STRING);
    ok("x -> x.matches(\"a.b\")", "a\xc3\xa9" "b", "true", FB_BOOL);
    ok("x -> x.replaceAll(\"\xc3\xbc+\", \"u\")", "\xc3\xbc\xc3\xbcx", "ux", FB_STRING);
    ok("x -> x.replaceAll(\"[\xc3\xbc\xc3\xa9]\", \"-\")", "\xc3\xbc" "a\xc3\xa9", "-a-", FB_STRING);
    ok("x -> x.replaceAll(\"[a-c\xc3\xa9]+\", \"-\")", "ab\xc3\xa9zc", "-z-", FB_STRING);
    ok("x -> x.replaceAll(\"(a)(.)(c)\", \"$3$2$1\")", "xa\xc3\xa9" "c", "xc\xc3\xa9" "a", FB_STRING);
    ok("x -> x.split(\"\\\\W+\")[1]", "a\xe2\x80\x94" "b", "b", FB_STRING);
    ok("x -> x.replaceAll(\"\\\\S\", \"x\")", "\xc3\xa9 \xc3\xa9", "x x", FB_STRING);
    ok("x -> x.replaceAll(\"\\\\D\", \"\")", "1\xc3\xa9" "2", "12", FB_STRING);
    /* missing cells stay missing: the lambda does not run on them */
    ok("x -> x.length()", NULL, "<null>", FB_STRING);
    ok("x -> Integer.parseInt(x)", NULL, "<null>", FB_STRING);
    ok("x -> \"\"", "a", "", FB_STRING);
}

static void test_errors(void)
{
    /* lambdas outside the subset: the construct is named */
    bad("x -> x.foo()", "a", "method foo()");
    bad("x -> x.length() & 1", "a", "'&'");
    bad("x -> x.length() << 1", "a", "'<<'");
    bad("x -> y.trim()", "a", "'y'");
    bad("x -> System.exit(0)", "a", "'System'");
    bad("x -> Math.hypot(1, 2)", "a", "Math.hypot");
    bad("x -> new StringBuilder(x)", "a", "'new'");
    bad("x -> x = \"a\"", "a", "'='");
    bad("x -> x++", "a", "'++'");
    bad("x -> x instanceof String", "a", "instanceof");
    bad("x -> { int n = 1; return x; }", "a", "statement");
    bad("x -> x.replaceAll(\"(?i)a\", \"b\")", "a", "(?");
    bad("x -> x.replaceAll(\"a*?\", \"b\")", "a", "*?");
    bad("x -> x.replaceAll(\"\\\\bword\\\\b\", \"b\")", "a", "\\b");
    bad("x -> x.split(\"(a)\\\\1\")", "a", "\\1");
    bad("x -> x.split(\"[a-z&&[^b]]\")", "a", "character class");
    bad("x -> x.replaceAll(\"[a\", \"b\")", "a", "unclosed");
    bad("x -> x.replaceAll(\"[^\xc3\xa9]\", \"b\")", "a", "negated class");
    bad("x -> x.trim(", "a", "ended");
    bad("x -> \"abc", "a", "unterminated");
    bad("x -> x.trim() x", "a", "'x'");
    bad("x x.trim()", "a", "'->'");
    bad("", "a", "parameter");
    bad("(x, y, z) -> x", "a", "one or two");
    bad("x -> x.substring()", "a", "number of arguments");
    bad("x -> 0x1F", "a", "'0x'");
    {
        char deep[1200], chain[9000];
        int o = snprintf(deep, sizeof deep, "x -> ");
        for (int i = 0; i < 500; i++) deep[o++] = '(';
        snprintf(deep + o, sizeof deep - (size_t)o, "x");
        bad(deep, "a", "nests too deeply");
        o = snprintf(deep, sizeof deep, "x -> ");
        for (int i = 0; i < 500; i++) { deep[o++] = '+'; deep[o++] = ' '; }
        snprintf(deep + o, sizeof deep - (size_t)o, "1");
        bad(deep, "a", "nests too deeply");
        o = snprintf(chain, sizeof chain, "x -> x");
        for (int i = 0; i < 2500; i++) o += snprintf(chain + o, sizeof chain - (size_t)o, "+x");
        bad(chain, "a", "too long");
    }
    /* run-time errors name the cell */
    bad("x -> x.substring(5)", "abc", "index out of range");
    bad("x -> x.substring(5)", "abc", "row 1, column 1");
    bad("x -> x.charAt(3)", "abc", "charAt(3)");
    bad("x -> x.split(\" \")[1]", "abc", "index 1 out of bounds");
    bad("x -> Integer.parseInt(x)", "1.5", "NumberFormatException");
    bad("x -> Integer.parseInt(x)", "", "not an integer");
    bad("x -> Double.parseDouble(x)", "abc", "not a number");
    bad("x -> x.length() / 0", "abc", "division by zero");
    bad("x -> x.length() ? 1 : 2", "abc", "boolean");
    bad("x -> x - 1", "abc", "operator '-'");
    bad("x -> null.trim()", "abc", "on null");
    bad("x -> x.split(\" \")", "a b", "String[]");
    bad("x -> x.length", "a", "array");
}

/* ---- frames: shapes, types, threads ---- */

/* A rows x cols frame with column types cycling STRING, FP64, INT64,
 * BOOLEAN, STRING and a few missing values. */
static FB *mixed(int64_t rows, int64_t cols)
{
    BrErr e = {0};
    FbType *types = calloc((size_t)(cols > 0 ? cols : 1), sizeof *types);
    static const FbType cyc[5] = {FB_STRING, FB_FP64, FB_INT64, FB_BOOL, FB_STRING};
    for (int64_t j = 0; j < cols; j++) types[j] = cyc[j % 5];
    FB *f = fb_new(rows, cols, types, &e);
    free(types);
    for (int64_t j = 0; j < cols; j++)
        for (int64_t i = 0; i < rows; i++) {
            uint64_t h = (uint64_t)(i * 7919 + j * 104729 + 13) * 2654435761u;
            FbCol *c = f->c[j];
            switch (c->type) {
            case FB_STRING: {
                if (h % 11 == 0) break;   /* missing */
                char buf[32];
                int n = snprintf(buf, sizeof buf, "%s%llu", (h % 3) ? "w\xc3\xa9" : "Ab ", (unsigned long long)(h % 1000));
                fb_set_text(f, i, j, buf, (size_t)n, &e);
                break;
            }
            case FB_FP64: c->d[i] = h % 13 == 0 ? NAN : (double)(h % 1000) / 8.0 - 40; break;
            case FB_INT64: c->i[i] = (int64_t)(h % 2001) - 1000; break;
            default: c->b[i] = (h >> 5) & 1; break;
            }
        }
    return f;
}

/* Reference text of cell (i, j) as the lambda sees it. */
static const char *ref_in(const FB *f, int64_t i, int64_t j, char *buf)
{
    const FbCol *c = f->c[j];
    switch (c->type) {
    case FB_STRING: return c->s[i];
    case FB_FP64: if (isnan(c->d[i])) return NULL; fmt_double(c->d[i], buf, FMT_NUM_MAX); return buf;
    case FB_INT64: fmt_int(c->i[i], buf, FMT_NUM_MAX); return buf;
    default: return c->b[i] ? "true" : "false";
    }
}

/* Naive reference of "x -> x.toUpperCase() + \"|\" + x.length()" (ASCII
 * upper-casing plus the Latin-1 e-acute, code point count). */
static char *ref_cell(const char *s)
{
    size_t n = strlen(s), cp = 0;
    char *r = malloc(n + 32), *o = r;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c & 0xC0) != 0x80) cp++;
        if (c == 0xC3 && i + 1 < n && (unsigned char)s[i + 1] == 0xA9) { *o++ = (char)0xC3; *o++ = (char)0x89; i++; continue; }
        *o++ = (char)(c >= 'a' && c <= 'z' ? c - 32 : c);
    }
    sprintf(o, "|%zu", cp);
    return r;
}

static void test_frames(void)
{
    static const int64_t shapes[][2] = {{0, 0}, {0, 3}, {3, 0}, {1, 1}, {5, 1}, {1, 6}, {300, 7}, {7, 300}, {2000, 5}};
    for (int th = 1; th <= 2; th++) {
        br_set_threads(th);
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            int64_t R = shapes[s][0], C = shapes[s][1];
            FB *f = mixed(R, C);
            BrErr e = {0};
            /* cells */
            FB *r = fm_map(f, "x -> x.toUpperCase() + \"|\" + x.length()", 0, &e);
            T_CHECK(r && r->rows == R && r->cols == C, "cells %lldx%lld threads %d: %s", (long long)R, (long long)C, th, e.msg);
            int bad = 0;
            for (int64_t j = 0; r && j < C; j++) {
                T_CHECK(r->c[j]->type == FB_STRING, "cells: column type");
                for (int64_t i = 0; i < R; i++) {
                    char buf[FMT_NUM_MAX];
                    const char *in = ref_in(f, i, j, buf);
                    const char *got = r->c[j]->s[i];
                    if (!in) { bad += got != NULL; continue; }
                    char *want = ref_cell(in);
                    bad += !got || strcmp(got, want);
                    free(want);
                }
            }
            T_CHECK(bad == 0, "cells %lldx%lld threads %d: %d wrong", (long long)R, (long long)C, th, bad);
            fb_release(r);
            /* lengths: STRING cells holding the decimal length (SystemDS's
             * String.valueOf of the int); missing cells stay missing */
            br_err_clear(&e);
            r = fm_map(f, "x -> x.length()", 0, &e);
            bad = 0;
            for (int64_t j = 0; r && j < C; j++) {
                bool anymiss = false, all = true;
                for (int64_t i = 0; i < R; i++) {
                    char buf[FMT_NUM_MAX];
                    anymiss |= !ref_in(f, i, j, buf);
                }
                for (int64_t i = 0; i < R; i++) all &= !ref_in(f, i, j, (char[FMT_NUM_MAX]){0});
                bad += r->c[j]->type != FB_STRING;
                (void)anymiss;
                (void)all;
                for (int64_t i = 0; i < R && r->c[j]->type == FB_STRING; i++) {
                    char buf[FMT_NUM_MAX], lb[32];
                    const char *in = ref_in(f, i, j, buf);
                    if (!in) continue;
                    int64_t len = 0;
                    for (const char *q = in; *q; q++) len += ((unsigned char)*q & 0xC0) != 0x80;
                    snprintf(lb, sizeof lb, "%lld", (long long)len);
                    const char *got = r->c[j]->s[i];
                    bad += !got || strcmp(got, lb);
                }
            }
            T_CHECK(r && bad == 0, "lengths %lldx%lld threads %d: %d wrong %s", (long long)R, (long long)C, th, bad, e.msg);
            fb_release(r);
            /* rows: reverse each row */
            br_err_clear(&e);
            char lam[256];
            if (C > 0 && C <= 7) {
                int o = snprintf(lam, sizeof lam, "x -> new String[]{");
                for (int64_t k = C - 1; k >= 0; k--) o += snprintf(lam + o, sizeof lam - (size_t)o, "x[%lld]%s", (long long)k, k ? ", " : "");
                snprintf(lam + o, sizeof lam - (size_t)o, "}");
                r = fm_map(f, lam, 1, &e);
                bad = 0;
                for (int64_t j = 0; r && j < C; j++)
                    for (int64_t i = 0; i < R; i++) {
                        char buf[FMT_NUM_MAX];
                        const char *in = ref_in(f, i, C - 1 - j, buf);
                        const char *got = r->c[j]->type == FB_STRING ? r->c[j]->s[i] : "?";
                        bad += in ? (!got || strcmp(in, got)) : got != NULL;
                    }
                T_CHECK(r && bad == 0, "rows %lldx%lld threads %d: %d wrong %s", (long long)R, (long long)C, th, bad, e.msg);
                fb_release(r);
            }
            /* columns: first cell of the column everywhere */
            br_err_clear(&e);
            if (R > 0 && R <= 5) {
                int o = snprintf(lam, sizeof lam, "x -> new String[]{");
                for (int64_t k = 0; k < R; k++) o += snprintf(lam + o, sizeof lam - (size_t)o, "x[0]%s", k < R - 1 ? ", " : "");
                snprintf(lam + o, sizeof lam - (size_t)o, "}");
                r = fm_map(f, lam, 2, &e);
                bad = 0;
                for (int64_t j = 0; r && j < C; j++)
                    for (int64_t i = 0; i < R; i++) {
                        char buf[FMT_NUM_MAX];
                        const char *in = ref_in(f, 0, j, buf);
                        const char *got = r->c[j]->s[i];
                        bad += in ? (!got || strcmp(in, got)) : got != NULL;
                    }
                T_CHECK(r && bad == 0, "columns %lldx%lld threads %d: %d wrong %s", (long long)R, (long long)C, th, bad, e.msg);
                fb_release(r);
            }
            fb_release(f);
        }
        /* pairwise jaccard against a direct computation */
        FB *f = mixed(40, 1);
        BrErr e = {0};
        FB *r = fm_map(f, "(x, y) -> UtilFunctions.jaccardSim(x, y)", 0, &e);
        T_CHECK(r && r->rows == 40 && r->cols == 40, "pairwise: %s", e.msg);
        int bad = 0;
        for (int64_t i = 0; r && i < 40; i++)
            for (int64_t j = 0; j < 40; j++) {
                const char *a = f->c[0]->s[i], *b = f->c[0]->s[j];
                double want = 0;   /* SystemDS's mapDist: upper triangle, 0 elsewhere */
                if (i < j && a && b) {
                    int inter = 0, na = 0, nb = 0;
                    for (int c = 0; c < 256; c++) {
                        bool ia = false, ib = false;
                        for (const char *q = a; *q; q++) ia |= (unsigned char)*q == c;
                        for (const char *q = b; *q; q++) ib |= (unsigned char)*q == c;
                        /* the e-acute's two bytes count as one character */
                        if (c == 0xA9) { ia = ib = false; }
                        na += ia; nb += ib; inter += ia && ib;
                    }
                    want = (double)inter / (na + nb - inter);
                }
                /* STRING cells: SystemDS's String.valueOf of each double */
                const char *gs = r->c[j]->type == FB_STRING ? r->c[j]->s[i] : NULL;
                double got = gs ? strtod(gs, NULL) : -1;
                bad += isnan(want) ? !isnan(got) : fabs(got - want) > 1e-12;
            }
        T_CHECK(bad == 0, "pairwise threads %d: %d wrong", th, bad);
        fb_release(r);
        fb_release(f);
    }
    br_set_threads(0);
}

static void test_frame_errors(void)
{
    BrErr e = {0};
    FB *f = mixed(6, 3);
    T_CHECK(!fm_map(f, "x -> x", 3, &e) && strstr(e.msg, "margin"), "margin 3: %s", e.msg);
    br_err_clear(&e);
    T_CHECK(!fm_map(f, "x -> x[0]", 1, &e) && strstr(e.msg, "String[]"), "row lambda returning a value: %s", e.msg);
    br_err_clear(&e);
    T_CHECK(!fm_map(f, "x -> new String[]{x[0]}", 1, &e) && strstr(e.msg, "dimension"), "short row: %s", e.msg);
    br_err_clear(&e);
    T_CHECK(!fm_map(f, "(x, y) -> x + y", 0, &e) && strstr(e.msg, "dimension"), "pairwise on 3 columns: %s", e.msg);
    br_err_clear(&e);
    T_CHECK(!fm_map(f, "(x, y) -> x", 1, &e) && strstr(e.msg, "margin"), "pairwise with margin: %s", e.msg);
    br_err_clear(&e);
    /* the first failing cell in column-major order is reported, whatever the threads */
    FB *g = mixed(3000, 2);
    for (int th = 1; th <= 2; th++) {
        br_set_threads(th);
        br_err_clear(&e);
        T_CHECK(!fm_map(g, "x -> Integer.parseInt(x)", 0, &e) && strstr(e.msg, "row 1, column 1"), "first error threads %d: %s", th, e.msg);
    }
    br_set_threads(0);
    fb_release(g);
    /* typed outputs keep names */
    fb_set_name(f, 0, "name", &e);
    br_err_clear(&e);
    FB *r = fm_map(f, "x -> x.length() > 3", 0, &e);
    T_CHECK(r && !strcmp(r->names[0], "name") && r->c[1]->type == FB_STRING && r->c[1]->s[0] &&
            (!strcmp(r->c[1]->s[0], "true") || !strcmp(r->c[1]->s[0], "false")),
            "names and boolean values as STRING: %s", e.msg);
    fb_release(r);
    fb_release(f);
}

int main(void)
{
    test_strings();
    test_dates();
    test_numbers();
    test_unicode_null();
    test_errors();
    test_frames();
    test_frame_errors();
    return t_done("test_framemap");
}
