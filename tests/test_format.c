/* test_format.c: printing of values (runtime/format.c). Expected strings
 * come from Java (Double.toString, String.format, DecimalFormat as
 * SystemDS's toString sets it up) and from the conformance cases
 * scalar_print_double, scalar_printf and scalar_tostring. */
#include "t.h"
#include "matrix/format.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void check_double(double x, const char *want)
{
    char buf[FMT_NUM_MAX];
    int n = fmt_double(x, buf, sizeof buf);
    T_CHECK(strcmp(buf, want) == 0 && n == (int)strlen(want),
            "fmt_double(%.17g) = '%s', want '%s'", x, buf, want);
}

static FmtArg D(double d) { FmtArg a = { .kind = FA_DOUBLE, .d = d }; return a; }
static FmtArg I(int64_t i) { FmtArg a = { .kind = FA_INT, .i = i }; return a; }
static FmtArg B(bool b) { FmtArg a = { .kind = FA_BOOL, .b = b }; return a; }
static FmtArg S(const char *s) { FmtArg a = { .kind = FA_STRING, .s = s }; return a; }

/* fmt_printf(fmt, args) must give want. */
static void check_pf(const char *fmt, const FmtArg *args, int n, const char *want)
{
    BrErr e = {0};
    char *s = fmt_printf(fmt, args, n, &e);
    T_CHECK(s && strcmp(s, want) == 0, "printf('%s') = '%s', want '%s' (%s)", fmt,
            s ? s : "NULL", want, e.msg);
    free(s);
}
#define PF(fmt, want, ...) do { FmtArg a_[] = { __VA_ARGS__ }; \
    check_pf(fmt, a_, (int)(sizeof a_ / sizeof *a_), want); } while (0)

/* fmt_printf(fmt, args) must fail with a message containing all of words. */
static void check_pf_err(const char *fmt, const FmtArg *args, int n, const char *word)
{
    BrErr e = {0};
    char *s = fmt_printf(fmt, args, n, &e);
    T_CHECK(!s && e.code != 0 && strstr(e.msg, word),
            "printf('%s') should fail with '%s', got '%s' / '%s'", fmt, word,
            s ? s : "NULL", e.msg);
    free(s);
}

/* One cell as toString(x, decimal=dec) prints it. */
static void check_cell(double x, int dec, const char *want)
{
    BrErr e = {0};
    MB *m = mb_scalar(x, &e);
    char *s = fmt_matrix(m, 100, 100, dec, false, " ", "", &e);
    T_CHECK(s && strcmp(s, want) == 0, "toString(%.17g, decimal=%d) = '%s', want '%s'",
            x, dec, s ? s : "NULL", want);
    free(s);
    mb_release(m);
}

static MB *from_rows(int64_t r, int64_t c, const double *v)
{
    BrErr e = {0};
    MB *m = mb_dense(r, c, &e);
    if (r * c > 0) memcpy(m->d, v, sizeof(double) * (size_t)(r * c));
    mb_recount_nnz(m);
    return m;
}

static void check_mat(const MB *m, int64_t rows, int64_t cols, int dec, bool sp,
                      const char *sep, const char *ls, const char *want)
{
    BrErr e = {0};
    char *s = fmt_matrix(m, rows, cols, dec, sp, sep, ls, &e);
    T_CHECK(s && strcmp(s, want) == 0, "toString = '%s', want '%s'", s ? s : "NULL", want);
    free(s);
}

/* Reference toString: naive loops over mb_get, each cell formatted alone. */
static char *ref_tostring(const MB *m, int64_t rows, int64_t cols, int dec, bool sp,
                          const char *sep, const char *ls)
{
    BrErr e = {0};
    int64_t R = rows < 0 || rows > m->rows ? m->rows : rows;
    int64_t C = cols < 0 || cols > m->cols ? m->cols : cols;
    size_t cap = 64, n = 0;
    char *out = malloc(cap);
    out[0] = 0;
#define APPEND(str) do { const char *s_ = (str); size_t k_ = strlen(s_); \
        while (n + k_ + 1 > cap) { cap *= 2; out = realloc(out, cap); } \
        memcpy(out + n, s_, k_ + 1); n += k_; } while (0)
    for (int64_t i = 0; i < R; i++) {
        for (int64_t j = 0; j < C; j++) {
            double v = mb_get(m, i, j);
            if (sp && v == 0) continue;
            MB *one = mb_scalar(v == 0 ? 0.0 : v, &e);
            char *cell = fmt_matrix(one, -1, -1, dec, false, "", "", &e);
            char ij[64];
            if (sp) {
                snprintf(ij, sizeof ij, "%lld", (long long)(i + 1)); APPEND(ij); APPEND(sep);
                snprintf(ij, sizeof ij, "%lld", (long long)(j + 1)); APPEND(ij); APPEND(sep);
                APPEND(cell); APPEND(ls);
            } else {
                APPEND(cell);
                if (j < C - 1) APPEND(sep);
            }
            free(cell);
            mb_release(one);
        }
        if (!sp) APPEND(ls);
    }
#undef APPEND
    return out;
}

static void test_doubles(void)
{
    check_double(1.0, "1.0");
    check_double(0.1, "0.1");
    check_double(1.0 / 3, "0.3333333333333333");
    check_double(2.0 / 3, "0.6666666666666666");
    check_double(100.0, "100.0");
    check_double(1e7, "1.0E7");
    check_double(9999999.0, "9999999.0");
    check_double(0.001, "0.001");
    check_double(0.00099, "9.9E-4");
    check_double(123456789.0, "1.23456789E8");
    check_double(1e21, "1.0E21");
    check_double(1e-300, "1.0E-300");
    check_double(5e-324, "4.9E-324");
    check_double(1.7976931348623157e308, "1.7976931348623157E308");
    check_double(2.2250738585072014e-308, "2.2250738585072014E-308");
    check_double(-0.0, "-0.0");
    check_double(0.0, "0.0");
    check_double(NAN, "NaN");
    check_double(INFINITY, "Infinity");
    check_double(-INFINITY, "-Infinity");
    check_double(0.1 + 0.2, "0.30000000000000004");
    check_double(100.5, "100.5");
    check_double(3.14159, "3.14159");
    check_double(1e23, "1.0E23");
    check_double(1152921504606846976.0, "1.152921504606847E18");
    check_double(1e-5, "1.0E-5");
    check_double(0.0001, "1.0E-4");
    check_double(1234567.0, "1234567.0");
    check_double(12345678.0, "1.2345678E7");
    check_double(-2.5, "-2.5");
    check_double(123.456, "123.456");
    check_double(1024.0, "1024.0");
    check_double(M_PI, "3.141592653589793");
    check_double(123456789012.0, "1.23456789012E11");
    check_double(-0.00025, "-2.5E-4");
    check_double(-3e10, "-3.0E10");
    check_double(1e16, "1.0E16");
    check_double(9007199254740993.0, "9.007199254740992E15");
    /* truncation keeps the snprintf contract */
    char small[4];
    int n = fmt_double(0.30000000000000004, small, sizeof small);
    T_CHECK(n == 19 && strcmp(small, "0.3") == 0, "fmt_double truncation");

    /* every finite double reads back from its string */
    srand(5);
    int bad = 0;
    for (int k = 0; k < 20000; k++) {
        uint64_t bits = ((uint64_t)rand() << 42) ^ ((uint64_t)rand() << 21) ^ (uint64_t)rand();
        double x;
        memcpy(&x, &bits, sizeof x);
        if (!isfinite(x)) continue;
        char buf[FMT_NUM_MAX];
        fmt_double(x, buf, sizeof buf);
        if (strtod(buf, NULL) != x || !strchr(buf, '.')) bad++;
    }
    T_CHECK(bad == 0, "round trip of random doubles: %d bad", bad);
}

static void test_scalars(void)
{
    char buf[FMT_NUM_MAX];
    fmt_int(-7, buf, sizeof buf);
    T_CHECK(strcmp(buf, "-7") == 0, "fmt_int -7");
    fmt_int(INT64_MIN, buf, sizeof buf);
    T_CHECK(strcmp(buf, "-9223372036854775808") == 0, "fmt_int min");
    fmt_int(10000000000LL, buf, sizeof buf);
    T_CHECK(strcmp(buf, "10000000000") == 0, "fmt_int 1e10");
    T_CHECK(strcmp(fmt_bool(true), "TRUE") == 0 && strcmp(fmt_bool(false), "FALSE") == 0,
            "fmt_bool");
    T_CHECK(strcmp(fmt_bool_file(true), "true") == 0 &&
            strcmp(fmt_bool_file(false), "false") == 0, "fmt_bool_file");
    BrErr e = {0};
    FmtArg as[] = { D(2.0), I(3), B(true), S("abc"), S(NULL), D(1e-5) };
    const char *want[] = { "2.0", "3", "TRUE", "abc", "null", "1.0E-5" };
    for (int k = 0; k < 6; k++) {
        char *s = fmt_scalar(&as[k], &e);
        T_CHECK(s && strcmp(s, want[k]) == 0, "fmt_scalar %d: '%s'", k, s ? s : "NULL");
        free(s);
    }
}

static void test_printf(void)
{
    /* scalar_printf.dml */
    PF("%d items", "3 items", I(3));
    PF("%.2f", "3.14", D(3.14159));
    PF("%s and %s", "salt and pepper", S("salt"), S("pepper"));
    PF("%5d|", "   42|", I(42));
    PF("%-6s|", "ab    |", S("ab"));
    PF("%08.3f", "-003.142", D(-3.14159));
    PF("%s = %f", "x = 4.500000", S("x"), D(4.5));
    PF("%d/%d = %.3f", "1/8 = 0.125", I(1), I(8), D(1.0 / 8));
    PF("%d%%", "50%", I(50));
    PF("%b %b", "true false", B(true), B(false));
    /* Java String.format, checked against JDK 25 */
    PF("%.2f|%.1f|%.1f", "1.01|0.2|0.3", D(1.005), D(0.15), D(0.25));
    PF("%g|%g|%g", "3.00000|0.000100000|1.23457e+08", D(3.0), D(0.0001), D(123456789.0));
    PF("%e|%.0e", "1.000000e+01|2e+01", D(10.0), D(15.0));
    PF("%x|%X|%#x|%o", "ffffffffffffffff|FF|0xff|10", I(-1), I(255), I(255), I(8));
    PF("%,d|%(d|%+08d|% d", "1,234,567|(42)|+0000042| 42", I(1234567), I(-42), I(42), I(42));
    PF("%s|%s|%b|%b|%b", "4.5|true|false|true|true", D(4.5), B(true), B(false), I(0), S("x"));
    PF("%S|%10.3s|%-5b|%c", "ABC|       abc|true |A", S("abc"), S("abcdef"), B(true), I(65));
    PF("%2$s %1$s %<s|%s", "b a a|a", S("a"), S("b"));
    PF("%5%|%-5%|%n|", "    %|%    |\n|");
    PF("%.3g|%.3g|%,.2f|%(,.2f", "0.000123|1.00e+05|1,234,567.89|(1,234,567.89)",
       D(0.00012345), D(99950.0), D(1234567.891), D(-1234567.891));
    PF("%010.2e|%+.1e|%G|%E", "-01.23e+04|+0.0e+00|NAN|-INFINITY",
       D(-12345.678), D(0.0), D(NAN), D(-INFINITY));
    PF("[%8.2f][%-8.1f][%08.1f][%+f][%(f][% f][%e]",
       "[Infinity][NaN     ][-Infinity][+Infinity][(Infinity)][NaN][-0.000000e+00]",
       D(INFINITY), D(NAN), D(-INFINITY), D(INFINITY), D(-INFINITY), D(NAN), D(-0.0));
    PF("[%g][%.0g][%g][%g][%.1f][%.3f][%s][%s][%s]",
       "[0.00000][6][1.00000e-05][100000][0.1][-0.000][1.0E7][0.001][9.9E-4]",
       D(0.0), D(5.5), D(1e-5), D(99999.95), D(0.05), D(-0.0004), D(1e7), D(1e-3), D(0.00099));
    PF("%.20f", "0.10000000000000000000", D(0.1));
    PF("%.2f", "100000000000000000000000.00", D(1e23));
    PF("%s", "2.0", D(2.0));
    PF("%d %s", "-9223372036854775808 -9223372036854775808", I(INT64_MIN), I(INT64_MIN));
    PF("no conversions", "no conversions", I(1));
    PF("", "");
    /* braid's leniency: integral doubles for %d, integers for %f */
    PF("%d|%5.1f|%x", "12|  3.0|10", D(12.0), I(3), D(16.0));
    PF("%c%c", "\xc3\xa9\xe2\x82\xac", I(0xE9), I(0x20AC));
    PF("%-4s|%4s|%.1s", "\xc3\xa9   |   \xc3\xa9|\xc3\xa9", S("\xc3\xa9"), S("\xc3\xa9"), S("\xc3\xa9x"));

    /* errors */
    FmtArg none[1] = { I(0) };
    check_pf_err("%d and %d", none, 1, "argument");
    check_pf_err("%s", none, 0, "argument");
    check_pf_err("%q", none, 1, "format");
    check_pf_err("50%", none, 1, "format");
    check_pf_err("%<s", none, 1, "argument");
    check_pf_err("%3$s", none, 1, "argument");
    check_pf_err("%.f", none, 1, "format");
    FmtArg bad[] = { D(2.5), S("x"), B(true), D(NAN) };
    check_pf_err("%d", &bad[0], 1, "integer");
    check_pf_err("%d", &bad[1], 1, "integer");
    check_pf_err("%x", &bad[2], 1, "integer");
    check_pf_err("%d", &bad[3], 1, "integer");
    check_pf_err("%f", &bad[1], 1, "number");
    check_pf_err("%e", &bad[2], 1, "number");
    check_pf_err("%.2d", none, 1, "precision");
    FmtArg cp = I(-5);
    check_pf_err("%c", &cp, 1, "format");
}

static void test_tostring(void)
{
    /* scalar_tostring.dml */
    double x[] = { 1, 2, 3, 4 };
    double y[] = { -1.5, 0.3, 1, 2, 10, 0 };
    double z[] = { 1. / 7, 2. / 7, 3. / 7, 4. / 7, 5. / 7, 6. / 7 };
    MB *X = from_rows(2, 2, x), *Y = from_rows(2, 3, y), *Z = from_rows(2, 3, z);
    check_mat(X, 100, 100, 3, false, " ", "\n", "1.000 2.000\n3.000 4.000\n");
    check_mat(Y, 100, 100, 3, false, " ", "\n", "-1.500 0.300 1.000\n2.000 10.000 0.000\n");
    check_mat(Y, 100, 100, 1, false, " ", "\n", "-1.5 0.3 1.0\n2.0 10.0 0.0\n");
    check_mat(X, 100, 100, 3, false, ",", ";", "1.000,2.000;3.000,4.000;");
    check_mat(X, 100, 100, 0, false, " ", "\n", "1 2\n3 4\n");
    check_mat(Z, 1, 2, 3, false, " ", "\n", "0.143 0.286\n");
    /* DecimalFormat: exactly decimal digits (SystemDS pins the minimum and
     * the maximum since b20b5b9), half-even on the binary value */
    check_mat(Z, 1, 1, 1, false, " ", "\n", "0.1\n");
    check_mat(Y, -1, -1, 3, true, " ", "\n",
              "1 1 -1.500\n1 2 0.300\n1 3 1.000\n2 1 2.000\n2 2 10.000\n");
    check_mat(Y, 1, 2, 2, true, ",", ";", "1,1,-1.50;1,2,0.30;");
    mb_release(X);
    mb_release(Y);
    mb_release(Z);

    /* cells, checked against java.text.DecimalFormat (JDK 25); decimal >= 0
     * sets both the minimum and maximum fraction digits */
    struct { double v; const char *d3, *d1, *d0, *dm1, *d2, *d6; } cells[] = {
        { 1. / 7, "0.143", "0.1", "0", "0.143", "0.14", "0.142857" },
        { 0.0005, "0.001", "0.0", "0", "0.001", "0.00", "0.000500" },
        { 0.0625, "0.062", "0.1", "0", "0.062", "0.06", "0.062500" },
        { 0.125, "0.125", "0.1", "0", "0.125", "0.12", "0.125000" },
        { 1.0005, "1.000", "1.0", "1", "1", "1.00", "1.000500" },
        { 2.675, "2.675", "2.7", "3", "2.675", "2.67", "2.675000" },
        { -0.0001, "-0.000", "-0.0", "-0", "-0", "-0.00", "-0.000100" },
        { 1152921504606846976.0, "1152921504606846980.000", "1152921504606846980.0",
          "1152921504606846980", "1152921504606846980", "1152921504606846980.00",
          "1152921504606846980.000000" },
        { 1e20, "100000000000000000000.000", "100000000000000000000.0",
          "100000000000000000000", "100000000000000000000", "100000000000000000000.00",
          "100000000000000000000.000000" },
        { 1234567.891, "1234567.891", "1234567.9", "1234568", "1234567.891",
          "1234567.89", "1234567.891000" },
        { 2.5, "2.500", "2.5", "2", "2.5", "2.50", "2.500000" },
        { 0.0015, "0.002", "0.0", "0", "0.002", "0.00", "0.001500" },
        { 1e-10, "0.000", "0.0", "0", "0", "0.00", "0.000000" },
        { 123.0, "123.000", "123.0", "123", "123", "123.00", "123.000000" },
        { -0.0, "0.000", "0.0", "0", "0", "0.00", "0.000000" },
        { NAN, "NaN", "NaN", "NaN", "NaN", "NaN", "NaN" },
        { -INFINITY, "-Infinity", "-Infinity", "-Infinity", "-Infinity", "-Infinity",
          "-Infinity" },
    };
    for (size_t k = 0; k < sizeof cells / sizeof *cells; k++) {
        check_cell(cells[k].v, 3, cells[k].d3);
        check_cell(cells[k].v, 1, cells[k].d1);
        check_cell(cells[k].v, 0, cells[k].d0);
        check_cell(cells[k].v, -1, cells[k].dm1);
        check_cell(cells[k].v, 2, cells[k].d2);
        check_cell(cells[k].v, 6, cells[k].d6);
    }

    /* shapes x sparsity x format x options against the naive reference */
    BrErr e = {0};
    int64_t shapes[][2] = { {0, 5}, {5, 0}, {1, 1}, {7, 1}, {1, 9}, {40, 3}, {3, 60} };
    double sps[] = { 0, 0.001, 0.1, 1 };
    int64_t lims[][2] = { {-1, -1}, {100, 100}, {2, 2}, {0, 3}, {5, 1} };
    srand(9);
    int bad = 0, runs = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (size_t q = 0; q < 4; q++) {
            int64_t r = shapes[s][0], c = shapes[s][1];
            MB *d = mb_dense(r, c, &e);
            for (int64_t i = 0; i < r * c; i++)
                if ((double)rand() / RAND_MAX < sps[q])
                    d->d[i] = ((double)rand() / RAND_MAX - 0.5) * pow(10, rand() % 8 - 3);
            if (r * c > 2 && sps[q] > 0.5) { d->d[0] = NAN; d->d[1] = -0.0; }
            mb_recount_nnz(d);
            MB *sp = mb_to_sparse(d, &e);
            for (size_t l = 0; l < sizeof lims / sizeof *lims; l++)
                for (int opt = 0; opt < 4; opt++) {
                    bool sparse = opt & 1;
                    int dec = opt & 2 ? 1 : 3;
                    const char *sep = opt & 2 ? "," : " ", *ls = opt & 2 ? ";" : "\n";
                    char *want = ref_tostring(d, lims[l][0], lims[l][1], dec, sparse, sep, ls);
                    char *a = fmt_matrix(d, lims[l][0], lims[l][1], dec, sparse, sep, ls, &e);
                    char *b = fmt_matrix(sp, lims[l][0], lims[l][1], dec, sparse, sep, ls, &e);
                    runs++;
                    if (!a || !b || strcmp(a, want) || strcmp(b, want)) {
                        if (bad++ < 3)
                            fprintf(stderr, "shape %lldx%lld sp %g lim %zu opt %d:\n"
                                    "want '%s'\ndense '%s'\nsparse '%s'\n", (long long)r,
                                    (long long)c, sps[q], l, opt, want, a, b);
                    }
                    free(want);
                    free(a);
                    free(b);
                }
            mb_release(d);
            mb_release(sp);
        }
    T_CHECK(bad == 0, "toString sweep: %d of %d differ", bad, runs);
}

static void test_list(void)
{
    BrErr e = {0};
    double x[] = { 1, 2, 3, 4 };
    MB *X = from_rows(2, 2, x);
    FmtItem items[] = {
        { .a = D(1.5) }, { .m = X }, { .a = B(true) }, { .a = S("s") }, { .a = I(7) },
        { .text = "List containing:\n[1.0]" },
    };
    char *s = fmt_list(items, 6, 100, 100, 3, false, " ", "\n", &e);
    const char *want = "List containing:\n[1.5, \nMatrix:\n1.000 2.000\n3.000 4.000\n, "
                       "TRUE, s, 7, List containing:\n[1.0]]";
    T_CHECK(s && strcmp(s, want) == 0, "fmt_list = '%s'", s ? s : "NULL");
    free(s);
    s = fmt_list(NULL, 0, 100, 100, 3, false, " ", "\n", &e);
    T_CHECK(s && strcmp(s, "List containing:\n[]") == 0, "empty list '%s'", s ? s : "NULL");
    free(s);
    mb_release(X);
}

int main(void)
{
    test_doubles();
    test_scalars();
    test_printf();
    test_tostring();
    test_list();
    return t_done("test_format");
}
