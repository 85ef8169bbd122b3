/* test_io.c: file formats: round trips through every format over shapes,
 * sparsity, block formats, thread counts and range sizes; number parsing
 * and formatting; the conformance data files; every kind of bad file;
 * atomic writes; scalars; .mtd sidecars. Files go to a fresh mkdtemp dir. */
#include "t.h"
#include "io/io.h"

#include <dirent.h>
#include <hdf5.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static const char *P(const char *name)
{
    static char buf[8][512];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}



/* Number of leftover temporary files in d. */
static int tmp_files(const char *d)
{
    DIR *dd = opendir(d);
    int n = 0;
    struct dirent *de;
    while (dd && (de = readdir(dd)))
        if (strstr(de->d_name, ".tmp.")) n++;
    if (dd) closedir(dd);
    return n;
}

static void rm_rf(const char *path)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", path);
}

static uint64_t rng = 88172645463325252ULL;
static uint64_t next_u(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }
static double unif(void) { return (double)(next_u() >> 11) / 9007199254740992.0; }

/* A random value with full precision, sometimes special. */
static double rval(void)
{
    uint64_t k = next_u() % 100;
    if (k == 0) return NAN;
    if (k == 1) return INFINITY;
    if (k == 2) return -INFINITY;
    if (k < 10) return (double)((int64_t)(next_u() % 2001) - 1000);
    if (k < 15) return (unif() - 0.5) * 1e-7;
    if (k < 20) return (unif() - 0.5) * 1e300;
    if (k < 25) return (double)(next_u() % 1000) / 8.0;
    return (unif() - 0.5) * 2000;
}

static MB *rnd(int64_t r, int64_t c, double sp, bool sparse)
{
    BrErr e = {0};
    MB *m = mb_dense(r, c, &e);
    for (int64_t i = 0; i < r * c; i++)
        if (unif() < sp) {
            double v = rval();
            m->d[i] = v == 0 ? 1 : v;
        }
    mb_recount_nnz(m);
    if (sparse) mb_make_sparse(m, &e);
    return m;
}

static bool fmt_ok(const MB *m)
{
    bool want = mb_should_be_sparse(m->rows, m->cols, m->nnz) ||
                (m->nnz == 0 && m->rows * m->cols > 0 && m->rows + 1 < m->rows * m->cols);
    if (m->rows * m->cols == 0) return true;
    return m->sparse == want;
}

/* ---------- numbers ---------- */

static void test_numbers(void)
{
    char buf[64];
    /* format then parse gives the same bits */
    int bad = 0;
    for (int i = 0; i < 20000; i++) {
        double x;
        if (i < 10000) {
            uint64_t u = next_u();
            memcpy(&x, &u, 8);
        } else {
            x = rval();
        }
        int n = io_fmt_double(x, buf);
        double y = -1;
        bool ok = io_parse_double(buf, buf + n, &y);
        if (!ok || (isnan(x) ? !isnan(y) : memcmp(&x, &y, 8) != 0)) {
            if (bad++ < 5) fprintf(stderr, "round trip of %.17g via \"%s\" gave %.17g\n", x, buf, y);
        }
    }
    T_CHECK(bad == 0, "format/parse round trip: %d bad", bad);
    /* parse agrees with strtod on many decimal forms */
    bad = 0;
    const char *fmts[] = {"%.17g", "%.3f", "%.1e", "%.15g", "%g", "%.20f"};
    for (int i = 0; i < 6000; i++) {
        double x = rval() * (i % 3 ? 1 : 1e-5);
        if (!isfinite(x)) continue;
        snprintf(buf, sizeof buf, fmts[i % 6], x);
        double a, b = strtod(buf, NULL);
        if (!io_parse_double(buf, buf + strlen(buf), &a) || memcmp(&a, &b, 8)) {
            if (bad++ < 5) fprintf(stderr, "parse \"%s\": %.17g vs strtod %.17g\n", buf, a, b);
        }
    }
    T_CHECK(bad == 0, "parse agrees with strtod: %d bad", bad);
    struct { const char *s; double v; } good[] = {
        {"0", 0}, {"-0", -0.0}, {"1", 1}, {"+2.5", 2.5}, {".5", 0.5}, {"5.", 5}, {"1e3", 1000},
        {"1E-3", 0.001}, {"-1.5e+2", -150}, {"0.1", 0.1}, {"123456789.125", 123456789.125},
        {"1.0000000000000001e-05", 1.0000000000000001e-05}, {"00012", 12},
        {"0.30000000000000004", 0.30000000000000004}, {"9007199254740993", 9007199254740993.0},
        {"1e-320", 1e-320}, {"1e308", 1e308}};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        double v = 7;
        bool ok = io_parse_double(good[i].s, good[i].s + strlen(good[i].s), &v);
        T_CHECK(ok && v == good[i].v && signbit(v) == signbit(good[i].v), "parse %s", good[i].s);
    }
    const char *specials[] = {"NaN", "Inf", "-Inf", "Infinity", "-Infinity", "inf", "nan"};
    for (int i = 0; i < 7; i++) {
        double v = 0;
        bool ok = io_parse_double(specials[i], specials[i] + strlen(specials[i]), &v);
        T_CHECK(ok && (isnan(v) || isinf(v)), "parse %s", specials[i]);
        if (i == 2 || i == 4) T_CHECK(v < 0, "negative %s", specials[i]);
    }
    const char *bads[] = {"", "abc", "1.2.3", "1e", "--1", " 1", "1 ", "e5", ".", "-", "1x",
                          "0x", "1,5", "+-1", "1e+"};
    for (size_t i = 0; i < sizeof bads / sizeof *bads; i++) {
        double v;
        T_CHECK(!io_parse_double(bads[i], bads[i] + strlen(bads[i]), &v), "reject \"%s\"", bads[i]);
    }
    struct { double v; const char *s; } outs[] = {
        {3, "3.0"}, {0.1, "0.1"}, {1e-5, "1.0E-5"}, {-2.5, "-2.5"}, {0, "0"}, {1.0 / 3, "0.333333333333333"},
        {NAN, "NaN"}, {INFINITY, "Infinity"}, {-INFINITY, "-Infinity"}, {1e15, "1.0E15"},
        {123456789.125, "1.23456789125E8"}, {-7, "-7.0"}, {0.001, "0.001"}, {9.99e-4, "9.99E-4"},
        {1e7, "1.0E7"}, {9999999, "9999999.0"}, {-12345678.5, "-1.23456785E7"}, {5.72e-7, "5.72E-7"},
        {100.25, "100.25"}, {-0.0, "-0"}, {1.7976931348623157e308, "1.7976931348623157E308"}};
    for (size_t i = 0; i < sizeof outs / sizeof *outs; i++) {
        int n = io_fmt_double(outs[i].v, buf);
        if (i == 5) T_CHECK(n == 18 && !strcmp(buf, "0.3333333333333333"), "fmt 1/3: %s", buf);
        else T_CHECK(!strcmp(buf, outs[i].s) && n == (int)strlen(buf), "fmt %s: got %s", outs[i].s, buf);
    }
}

/* ---------- round trips ---------- */

typedef struct Fmt {
    const char *name, *format, *sep;
    bool header;
    int64_t bs;   /* binary: SystemDS's block size (0: 1000) */
    int parts;    /* binary: part files at most */
} Fmt;

static const Fmt fmts[] = {
    {"text", "text", NULL, false, 0, 0}, {"mm", "mm", NULL, false, 0, 0}, {"csv", "csv", NULL, false, 0, 0},
    {"csvh", "csv", NULL, true, 0, 0}, {"csvsemi", "csv", ";", true, 0, 0}, {"csvtab", "csv", "\t", false, 0, 0},
    {"csvmulti", "csv", "::", false, 0, 0}, {"binary", "binary", NULL, false, 0, 0}, {"braidbin", "braid-binary", NULL, false, 0, 0},
    /* SystemDS's blocks not dividing the shapes, and part files */
    {"binbs7", "binary", NULL, false, 7, 3}, {"binbs2", "sysds-binary", NULL, false, 2, 1},
    {"libsvm", "libsvm", NULL, false, 0, 0}};
#define NFMT (int)(sizeof fmts / sizeof *fmts)

/* Row ranges of a binary file through one io_binary_rows_open (SystemDS's
 * layout parsed once): each equal to the same rows of m and to
 * io_read_binary_rows' range; ranges clipped to the matrix (empty, past
 * the end, the whole) */
static void binary_ranges(const char *path, const MB *m, const char *what, const char *fname)
{
    BrErr e = {0};
    int64_t rows = -1, cols = -1;
    IoBinRows *h = io_binary_rows_open(path, &rows, &cols, &e);
    T_CHECK(h && rows == m->rows && cols == m->cols, "%s %s: ranges open %lldx%lld: %s", what, fname,
            (long long)rows, (long long)cols, e.msg);
    if (!h) return;
    const int64_t n = m->rows;
    const int64_t rg[][2] = {{0, 0}, {0, 1}, {n / 3, n / 3 + 5}, {n / 2, n}, {n - 1, n + 7}, {n + 3, n + 9},
                             {0, INT64_MAX}, {1, n - 1}};
    for (size_t k = 0; k < sizeof rg / sizeof *rg; k++) {
        int64_t r0 = BR_MAX(0, BR_MIN(rg[k][0], n)), r1 = BR_MAX(r0, BR_MIN(rg[k][1], n));
        MB *a = io_binary_rows_read(h, rg[k][0], rg[k][1], &e);
        int64_t rr, cc;
        BrErr e2 = {0};
        MB *b = io_read_binary_rows(path, rg[k][0], rg[k][1], &rr, &cc, &e2);
        T_CHECK(a && b && a->rows == r1 - r0 && a->cols == m->cols && mb_equal(a, b, 0) && a->nnz == b->nnz,
                "%s %s: range [%lld, %lld): %s %s", what, fname, (long long)rg[k][0], (long long)rg[k][1], e.msg,
                e2.msg);
        bool same = a != NULL;
        for (int64_t i = 0; same && i < a->rows; i++)
            for (int64_t j = 0; same && j < a->cols; j++) {
                double x = mb_get(a, i, j), y = mb_get(m, r0 + i, j);
                same = x == y || (isnan(x) && isnan(y));
            }
        T_CHECK(same, "%s %s: range [%lld, %lld) values", what, fname, (long long)rg[k][0], (long long)rg[k][1]);
        mb_release(a);
        mb_release(b);
        br_err_clear(&e);
    }
    io_binary_rows_close(h);
    /* a SystemDS file cut short (a folder: its first part file; the
     * caller writes the file again before each use): open fails with the
     * whole read's error */
    if (strcmp(fname, "binary") || m->rows < 100) return;
    char part[600];
    struct stat st;
    snprintf(part, sizeof part, "%s/0-m-00000", path);
    const char *victim = stat(part, &st) == 0 ? part : path;
    T_CHECK(stat(victim, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 9 && truncate(victim, st.st_size - 9) == 0,
            "%s %s: cut %s", what, fname, victim);
    BrErr ec = {0}, ew = {0};
    h = io_binary_rows_open(path, &rows, &cols, &ec);
    MB *w = io_read_binary_rows(path, 0, 1, &rows, &cols, &ew);
    T_CHECK(!h && !w && ec.code && !strcmp(ec.msg, ew.msg) && strstr(ec.msg, "truncated"),
            "%s %s: truncated file: open '%s', read '%s'", what, fname, ec.msg, ew.msg);
    io_binary_rows_close(h);
    mb_release(w);
}

/* Writes m in format f, reads it back (with .mtd only, and for some also
 * with matching arguments), checks exact values, format rule, no temps. */
static void round_trip(const MB *m, const Fmt *f, int64_t chunk, const char *what)
{
    BrErr e = {0};
    char name[64];
    snprintf(name, sizeof name, "rt_%s", f->name);
    const char *path = P(name);
    IoWriteOpts wo;
    io_write_opts_init(&wo);
    wo.format = f->format;
    wo.sep = f->sep;
    wo.header = f->header;
    wo.chunk_bytes = chunk;
    wo.blocksize = f->bs;
    wo.parts = f->parts;
    int rc = io_write_matrix(path, m, &wo, &e);
    if (!strcmp(f->format, "libsvm") && m->cols == 0) {
        /* no column for the label */
        T_CHECK(rc != 0 && strstr(e.msg, "label"), "%s %s: no label column: %s", what, f->name, e.msg);
        return;
    }
    T_CHECK(rc == 0, "%s %s: write: %s", what, f->name, e.msg);
    if (rc) return;
    IoReadOpts ro;
    io_read_opts_init(&ro);
    ro.chunk_bytes = chunk;
    MB *r = io_read_matrix(path, &ro, &e);
    T_CHECK(r != NULL, "%s %s: read: %s", what, f->name, e.msg);
    if (r) {
        T_MB_EQ(r, m, 0, "%s %s: values", what, f->name);
        T_CHECK(r->nnz == m->nnz, "%s %s: nnz %lld vs %lld", what, f->name, (long long)r->nnz,
                (long long)m->nnz);
        T_CHECK(fmt_ok(r), "%s %s: block format", what, f->name);
        mb_release(r);
    }
    /* explicit arguments agreeing with the .mtd */
    ro.format = f->format;
    ro.rows = m->rows;
    ro.cols = m->cols;
    if (f->sep) ro.sep = f->sep;
    if (!strcmp(f->format, "csv")) ro.header = f->header;
    br_err_clear(&e);
    r = io_read_matrix(path, &ro, &e);
    T_CHECK(r && mb_equal(r, m, 0), "%s %s: read with args: %s", what, f->name, e.msg);
    mb_release(r);
    IoMeta meta;
    bool found;
    T_CHECK(io_read_mtd(path, &meta, &found, &e) == 0 && found && meta.rows == m->rows &&
            meta.cols == m->cols && meta.nnz == m->nnz &&
            !strcmp(meta.format, io_fmt_sysbin(f->format) ? "binary" : f->format) &&
            meta.blocksize == (io_fmt_sysbin(f->format) ? (f->bs ? f->bs : 1000) : -1) &&
            !strcmp(meta.data_type, "matrix"), "%s %s: mtd", what, f->name);
    if (io_fmt_anybin(f->format)) binary_ranges(path, m, what, f->name);
}

/* -0 in a dense block of SystemDS's layout (and braid's) reads back as
 * -0, as SystemDS's dense read keeps it; in a sparse result it is a zero
 * like any other */
static void test_signed_zero(void)
{
    static const char *fs[] = {"binary", "braid-binary"};
    for (int k = 0; k < 2; k++) {
        BrErr e = {0};
        MB *m = mb_dense(40, 3, &e);
        for (int64_t i = 0; i < 120; i++) m->d[i] = (double)(i + 1);
        m->d[4] = -0.0;
        m->d[117] = -0.0;
        mb_recount_nnz(m);
        IoWriteOpts wo;
        io_write_opts_init(&wo);
        wo.format = fs[k];
        wo.blocksize = 7;
        const char *path = P("negzero");
        T_CHECK(io_write_matrix(path, m, &wo, &e) == 0, "%s -0: write: %s", fs[k], e.msg);
        IoReadOpts ro;
        io_read_opts_init(&ro);
        MB *r = io_read_matrix(path, &ro, &e);
        T_CHECK(r && !r->sparse && signbit(mb_get(r, 1, 1)) && signbit(mb_get(r, 39, 0)) &&
                r->nnz == 118 && mb_equal(r, m, 0), "%s -0: read back %s", fs[k], e.msg);
        mb_release(r);
        mb_release(m);
    }
}

static void test_round_trips(void)
{
    int64_t shapes[][2] = {{0, 5}, {5, 0}, {0, 0}, {1, 1}, {7, 1}, {1, 9}, {120, 4}, {4, 90}};
    double sps[] = {0, 0.001, 0.1, 1};
    char what[96];
    for (int th = 1; th <= 2; th++) {
        br_set_threads(th);
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
            for (int k = 0; k < 4; k++)
                for (int sp = 0; sp < 2; sp++) {
                    MB *m = rnd(shapes[s][0], shapes[s][1], sps[k], sp);
                    for (int f = 0; f < NFMT; f++) {
                        snprintf(what, sizeof what, "t%d %lldx%lld sp%g %s", th,
                                 (long long)m->rows, (long long)m->cols, sps[k],
                                 sp ? "sparse" : "dense");
                        round_trip(m, &fmts[f], (s + k) % 2 ? 97 : 0, what);
                    }
                    mb_release(m);
                }
        /* larger blocks over many small ranges */
        MB *big[] = {rnd(1000, 40, 1, false), rnd(2000, 200, 0.01, true), rnd(20, 2000, 0.3, false)};
        for (int b = 0; b < 3; b++) {
            for (int f = 0; f < NFMT; f++) {
                snprintf(what, sizeof what, "t%d big%d", th, b);
                round_trip(big[b], &fmts[f], 1000, what);
                if (fmts[f].parts > 1) {   /* over 16 KiB a part: SystemDS's folder of part files */
                    struct stat st;
                    char name[64];
                    snprintf(name, sizeof name, "rt_%s/0-m-00002", fmts[f].name);
                    T_CHECK(stat(P(name), &st) == 0 && S_ISREG(st.st_mode), "%s %s: three part files", what,
                            fmts[f].name);
                }
            }
            mb_release(big[b]);
        }
    }
    br_set_threads(0);
    T_CHECK(tmp_files(dir) == 0, "no temporary files left behind");
}

/* ---------- conformance data ---------- */

static void read_vs_expected(const char *data, const char *expected, const IoReadOpts *o)
{
    BrErr e = {0};
    char a[512], b[512];
    snprintf(a, sizeof a, "/work/shared/conformance/data/%s", data);
    snprintf(b, sizeof b, "/work/shared/conformance/expected/%s", expected);
    IoReadOpts csv;
    io_read_opts_init(&csv);
    csv.format = "csv";
    MB *x = io_read_matrix(a, o, &e);
    T_CHECK(x != NULL, "read %s: %s", data, e.msg);
    br_err_clear(&e);
    MB *y = io_read_matrix(b, &csv, &e);
    T_CHECK(y != NULL, "read %s: %s", expected, e.msg);
    if (x && y) T_MB_EQ(x, y, 1e-15, "%s vs %s", data, expected);
    mb_release(x);
    mb_release(y);
}

static void test_conformance_data(void)
{
    if (access("/work/shared/conformance/data/points.csv", R_OK) != 0) return;
    read_vs_expected("points.csv", "io_read_csv/X.csv", NULL);
    IoReadOpts o;
    io_read_opts_init(&o);
    o.format = "csv";
    o.header = 0;
    o.sep = ";";
    read_vs_expected("semi.csv", "io_read_csv/Y.csv", &o);
    read_vs_expected("sparse.ijv", "io_read_ijv/A.csv", NULL);
    read_vs_expected("sparse.mtx", "io_read_mm/M.csv", NULL);
    BrErr e = {0};
    MB *m = io_read_matrix("/work/shared/conformance/data/sparse.ijv", NULL, &e);
    T_CHECK(m && m->rows == 6 && m->cols == 5 && m->nnz == 7, "ijv dims from mtd");
    mb_release(m);
    /* arguments disagreeing with the .mtd */
    o.sep = ",";
    m = io_read_matrix("/work/shared/conformance/data/semi.csv", &o, &e);
    T_CHECK(!m && strstr(e.msg, "semi.csv") && strstr(e.msg, "sep") && strstr(e.msg, "\";\""),
            "sep disagreement: %s", e.msg);
    br_err_clear(&e);
    io_read_opts_init(&o);
    o.rows = 4;
    m = io_read_matrix("/work/shared/conformance/data/sparse.mtx", &o, &e);
    T_CHECK(m && m->rows == 4 && m->cols == 6, "agreeing rows: %s", e.msg);
    mb_release(m);
    br_err_clear(&e);
    o.rows = 5;
    m = io_read_matrix("/work/shared/conformance/data/sparse.mtx", &o, &e);
    T_CHECK(!m && strstr(e.msg, "rows=5") && strstr(e.msg, "sparse.mtx.mtd") &&
            strstr(e.msg, "dimension"), "rows disagreement: %s", e.msg);
    mb_release(m);
    br_err_clear(&e);
    io_read_opts_init(&o);
    o.format = "text";
    m = io_read_matrix("/work/shared/conformance/data/sparse.mtx", &o, &e);
    T_CHECK(!m && strstr(e.msg, "format") && strstr(e.msg, "\"mm\""), "format disagreement: %s",
            e.msg);
    mb_release(m);
}

/* ---------- bad files ---------- */

/* Reads path expecting an error containing every given substring. */
static void expect_err(const char *path, const IoReadOpts *o, const char *what, const char *s1,
                       const char *s2, const char *s3)
{
    BrErr e = {0};
    MB *m = io_read_matrix(path, o, &e);
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    bool ok = !m && e.code && strstr(e.msg, base) && (!s1 || strstr(e.msg, s1)) &&
              (!s2 || strstr(e.msg, s2)) && (!s3 || strstr(e.msg, s3));
    T_CHECK(ok, "%s: message \"%s\"", what, e.msg);
    mb_release(m);
}

static void test_bad_files(void)
{
    IoReadOpts o;
    io_read_opts_init(&o);
    char big[8192];
    /* bad number on line 17, column 2: found by every range split */
    big[0] = 0;
    for (int i = 1; i <= 40; i++)
        strcat(big, i == 17 ? "1,abc,3\n" : "1.5,2,3\n");
    t_put(P("bad.csv"), big);
    o.format = "csv";
    for (int th = 1; th <= 2; th++) {
        br_set_threads(th);
        for (int64_t ch = 0; ch < 80; ch += 9) {
            o.chunk_bytes = ch;
            expect_err(P("bad.csv"), &o, "bad number", "line 17", "column 2", "\"abc\"");
        }
    }
    br_set_threads(0);
    o.chunk_bytes = 0;
    /* with a header, lines count from the header */
    t_put(P("badh.csv"), "a,b\n1,2\n\n3,x\n");
    o.header = 1;
    expect_err(P("badh.csv"), &o, "bad number after header", "line 4", "column 2", "\"x\"");
    o.header = -1;
    t_put(P("few.csv"), "1,2,3\n4,5,6\n7,8,9\n1,2,3\n4,5\n");
    expect_err(P("few.csv"), &o, "too few columns", "line 5", "expected 3 columns, found 2", NULL);
    t_put(P("many.csv"), "1,2,3\n4,5,6,7\n");
    expect_err(P("many.csv"), &o, "too many columns", "line 2", "expected 3 columns, found 4", NULL);
    t_put(P("rows.csv"), "1,2\n3,4\n");
    t_put(P("rows.csv.mtd"), "{\"data_type\": \"matrix\", \"rows\": 3, \"cols\": 2, \"format\": \"csv\"}");
    expect_err(P("rows.csv"), &o, "rows vs mtd", "expected 3 rows", "found 2", "dimension");
    t_put(P("cols.csv.mtd"), "{\"data_type\": \"matrix\", \"rows\": 2, \"cols\": 3, \"format\": \"csv\"}");
    t_put(P("cols.csv"), "1,2\n3,4\n");
    expect_err(P("cols.csv"), &o, "cols vs mtd", "line 1", "expected 3 columns, found 2", NULL);
    o.cols = 2;
    expect_err(P("cols.csv"), &o, "cols arg vs mtd", "cols=2", "cols.csv.mtd", "cols 3");
    o.cols = -1;
    t_put(P("empty.csv"), "1,,3\n");
    o.fill = 0;
    expect_err(P("empty.csv"), &o, "empty field without fill", "line 1", "empty field", "column 2");
    o.fill = -1;
    o.format = NULL;
    /* text */
    t_put(P("idx.ijv"), "1 1 1\n% comment\n\n6 5 2\n7 2 3\n");
    t_put(P("idx.ijv.mtd"), "{\"data_type\": \"matrix\", \"value_type\": \"double\", \"rows\": 6, "
        "\"cols\": 5, \"format\": \"text\"}");
    expect_err(P("idx.ijv"), &o, "index beyond dims", "line 5", "index (7, 2)", "6x5");
    t_put(P("num.ijv"), "1 1 1\n2 2 x1\n");
    expect_err(P("num.ijv"), &o, "text bad number", "line 2", "\"x1\"", NULL);
    t_put(P("tok.ijv"), "1 1 1\n2 2\n");
    expect_err(P("tok.ijv"), &o, "text too few values", "line 2", "found 2", NULL);
    t_put(P("zero.ijv"), "0 1 1\n");
    expect_err(P("zero.ijv"), &o, "text zero index", "line 1", "row index", NULL);
    /* mm */
    t_put(P("trunc.mtx"), "%%MatrixMarket matrix coordinate real general\n% c\n3 3 3\n1 1 1\n2 2 2\n");
    expect_err(P("trunc.mtx"), &o, "mm truncated", "expected 3 entries", "found 2", NULL);
    t_put(P("hdr.mtx"), "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n");
    expect_err(P("hdr.mtx"), &o, "mm complex", "line 1", "complex", NULL);
    t_put(P("dim.mtx"), "%%MatrixMarket matrix coordinate real general\n3 3 1\n4 1 1\n");
    expect_err(P("dim.mtx"), &o, "mm index", "line 3", "index (4, 1)", NULL);
    t_put(P("dim2.mtx"), "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1\n");
    t_put(P("dim2.mtx.mtd"), "{\"rows\": 4, \"cols\": 3, \"format\": \"mm\"}");
    expect_err(P("dim2.mtx"), &o, "mm dims vs mtd", "line 2", "dimension", "4x3");
    t_put(P("nomm.mtx"), "1 1 1\n");
    o.format = "mm";
    expect_err(P("nomm.mtx"), &o, "mm without banner", "line 1", "Matrix Market", NULL);
    o.format = NULL;
    /* braid's own binary layout */
    BrErr e = {0};
    MB *m = rnd(10, 10, 1, false);
    IoWriteOpts wo;
    io_write_opts_init(&wo);
    wo.format = "braid-binary";
    T_CHECK(io_write_matrix(P("t.bin"), m, &wo, &e) == 0, "write binary");
    T_CHECK(truncate(P("t.bin"), 40 + 8 * 99) == 0, "truncate");
    expect_err(P("t.bin"), &o, "truncated binary", "truncated", NULL, NULL);
    T_CHECK(truncate(P("t.bin"), 20) == 0, "truncate");
    expect_err(P("t.bin"), &o, "truncated binary header", "truncated", NULL, NULL);
    t_put(P("t.bin"), "this is not a binary matrix file at all, honestly");
    expect_err(P("t.bin"), &o, "bad magic", "magic", NULL, NULL);
    mb_release(m);
    m = rnd(30, 30, 0.05, true);
    T_CHECK(io_write_matrix(P("s.bin"), m, &wo, &e) == 0, "write sparse binary");
    T_CHECK(truncate(P("s.bin"), 100) == 0, "truncate");
    expect_err(P("s.bin"), &o, "truncated sparse binary", "truncated", NULL, NULL);
    T_CHECK(io_write_matrix(P("s.bin"), m, &wo, &e) == 0, "write sparse binary");
    o.rows = 31;
    expect_err(P("s.bin"), &o, "binary rows vs mtd", "rows=31", "s.bin.mtd", NULL);
    o.rows = -1;
    remove(P("s.bin.mtd"));
    o.rows = 31;
    o.format = "binary";
    expect_err(P("s.bin"), &o, "binary rows vs file", "dimension", "30x30", NULL);
    o.rows = -1;
    o.format = NULL;
    mb_release(m);
    /* missing file, malformed .mtd */
    expect_err(P("does_not_exist.csv"), &o, "missing", "not found", NULL, NULL);
    t_put(P("j.csv"), "1,2\n");
    t_put(P("j.csv.mtd"), "{\"data_type\": \"matrix\",\n \"rows\": 3,\n \"cols\": }");
    expect_err(P("j.csv"), &o, "malformed mtd", "j.csv.mtd", "malformed", "line 3");
    t_put(P("j.csv.mtd"), "{\"rows\": \"abc\"}");
    expect_err(P("j.csv"), &o, "mtd field type", "j.csv.mtd", "\"rows\"", "number");
    t_put(P("j.csv.mtd"), "[1, 2]");
    expect_err(P("j.csv"), &o, "mtd not an object", "j.csv.mtd", "object", NULL);
    t_put(P("j.csv.mtd"), "{\"data_type\": \"scalar\", \"value_type\": \"double\"}");
    expect_err(P("j.csv"), &o, "scalar read as matrix", "scalar", NULL, NULL);
    t_put(P("j.csv.mtd"), "{\"format\": \"parquet\"}");
    expect_err(P("j.csv"), &o, "unknown format", "parquet", "unsupported", NULL);
}

/* ---------- reliability (issue 23): no silent wrong value, no crash ---------- */

/* Overwrites 8 bytes of a file at off with v. */
static void patch_i64(const char *path, long off, int64_t v)
{
    FILE *f = fopen(path, "r+b");
    T_CHECK(f && fseek(f, off, SEEK_SET) == 0 && fwrite(&v, 8, 1, f) == 1, "patch %s", path);
    if (f) fclose(f);
}

static void put_bytes(const char *path, const unsigned char *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    T_CHECK(f && fwrite(b, 1, n, f) == n, "write %s", path);
    if (f) fclose(f);
}

static void test_reliability(void)
{
    IoReadOpts o;
    io_read_opts_init(&o);
    /* C's hexadecimal numbers are no numbers of any data format */
    t_put(P("hex.csv"), "1,2\n0x10,3\n");
    o.format = "csv";
    expect_err(P("hex.csv"), &o, "hex cell", "line 2", "\"0x10\"", NULL);
    t_put(P("hexf.csv"), "1,0x1p4\n");
    expect_err(P("hexf.csv"), &o, "hex float cell", "line 1", "\"0x1p4\"", NULL);
    t_put(P("nanc.csv"), "nan(123),1\n");
    expect_err(P("nanc.csv"), &o, "nan(chars) cell", "line 1", NULL, NULL);
    /* a /proc file has size 0 but content: read, not a 0x0 matrix */
    expect_err("/proc/self/status", &o, "/proc file", "line 1", "bad number", NULL);
    expect_err("/dev/null", &o, "device", "not a regular file", NULL, NULL);
    o.format = NULL;
    /* a wrong .mtd nnz is an error */
    t_put(P("nnz.ijv"), "1 1 5\n2 2 3\n");
    t_put(P("nnz.ijv.mtd"), "{\"data_type\": \"matrix\", \"rows\": 2, \"cols\": 2, \"nnz\": 7, \"format\": \"text\"}");
    expect_err(P("nnz.ijv"), &o, "mtd nnz", "nnz 7", "holds 2", NULL);
    t_put(P("nnz.ijv.mtd"), "{\"data_type\": \"matrix\", \"rows\": 2, \"cols\": 2, \"nnz\": 2, \"format\": \"text\"}");
    BrErr e = {0};
    MB *m = io_read_matrix(P("nnz.ijv"), &o, &e);
    T_CHECK(m && m->nnz == 2, "right mtd nnz reads (%s)", e.msg);
    mb_release(m);
    /* declared sizes beyond the memory budget fail before allocating */
    t_put(P("huge.mtx"), "%%MatrixMarket matrix coordinate real general\n3000000000 1 1\n1 1 1\n");
    expect_err(P("huge.mtx"), &o, "huge mm header", "memory budget", NULL, NULL);
    t_put(P("hugea.mtx"), "%%MatrixMarket matrix array real general\n3000000000 100\n1\n");
    expect_err(P("hugea.mtx"), &o, "huge mm array header", "expected 300000000000 entries", NULL, NULL);
    t_put(P("huge.ijv"), "1 1 1\n");
    t_put(P("huge.ijv.mtd"), "{\"data_type\": \"matrix\", \"rows\": 3000000000, \"cols\": 3, \"format\": \"text\"}");
    expect_err(P("huge.ijv"), &o, "huge mtd rows", "memory budget", NULL, NULL);
    /* corrupt sparse binary: a negative row start must not be followed */
    IoWriteOpts wo;
    io_write_opts_init(&wo);
    wo.format = "braid-binary";
    m = rnd(30, 30, 0.05, true);
    for (int r = 1; r <= 3; r++) {
        T_CHECK(io_write_matrix(P("c.bin"), m, &wo, &e) == 0, "write sparse binary");
        patch_i64(P("c.bin"), 40 + 8 * r, r == 3 ? INT64_MIN : -5);
        expect_err(P("c.bin"), &o, "negative row start", "invalid sparse structure", NULL, NULL);
    }
    /* the same file read by row ranges (io_read_binary_rows): row
     * pointers far apart (their difference overflows, a fuzzer's find)
     * and one inside the range out of it are errors, not arithmetic on
     * them */
    static const int64_t wild[][3] = {{8, -6870804181507112960LL, 9151313760249964309LL},
                                      {6, 0, INT64_MIN}, {5, 0, INT64_MAX}};
    for (int w = 0; w < 3; w++) {
        T_CHECK(io_write_matrix(P("c.bin"), m, &wo, &e) == 0, "write sparse binary");
        int64_t rows = 0, cols = 0;
        patch_i64(P("c.bin"), 40 + 8 * wild[w][0], wild[w][2]);
        if (w == 0) patch_i64(P("c.bin"), 40 + 8 * 2, wild[w][1]);
        BrErr we = {0};
        MB *rr = io_read_binary_rows(P("c.bin"), 2, 8, &rows, &cols, &we);
        T_CHECK(!rr && strstr(we.msg, "invalid sparse structure"), "wild row pointers %d: %s", w, we.msg);
        mb_release(rr);
    }
    mb_release(m);
    /* fuzzers' finds in compressed files whose header sizes the file does
     * not hold: 3.6e10 rows in 51 bytes (the reader's per-row marks), a
     * group of 2.6e6 columns and 4096 dictionary entries in 89 bytes (the
     * group's dictionary); neither may be allocated */
    static const unsigned char rows_big[51] = {
        'B', 'R', 'A', 'I', 'D', 'M', 'B', '1', 4, 3, 2, 1, 2, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0,
        3,   0,   0,   0,   0,   0,   0,   0,   0, 0, 0, 0, 0, 0, 6, 0, 2, 0, 0, 0, 0, 0, 0, 0, 'B'};
    static const unsigned char dict_big[89] = {
        0x42, 0x52, 0x41, 0x49, 0x44, 0x4d, 0x42, 0x31, 0x04, 0x03, 0x02, 0x01, 0x02, 0x00, 0x00, 0x00, 0x06, 0x00,
        0x24, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x3f, 0xf7, 0xff,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0d, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x03, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xb8, 0x00, 0x00,
        0x00, 0x00, 0x20, 0x00, 0x01, 0x49, 0x44, 0x4d, 0x42, 0x31, 0x01, 0x02, 0x42, 0x52, 0x41, 0x49, 0x44};
    o.format = "binary";
    put_bytes(P("h.bin"), rows_big, sizeof rows_big);
    expect_err(P("h.bin"), &o, "huge compressed header", "memory budget", "h.bin", NULL);
    put_bytes(P("h.bin"), dict_big, sizeof dict_big);
    expect_err(P("h.bin"), &o, "huge compressed dictionary", "corrupt compressed binary file", "h.bin", NULL);
    o.format = NULL;
}

/* ---------- csv and text details ---------- */

static void test_details(void)
{
    BrErr e = {0};
    IoReadOpts o;
    io_read_opts_init(&o);
    o.format = "csv";
#define io_read_matrix(p, o, e) (br_err_clear(e), io_read_matrix(p, o, e))
    t_put(P("d1.csv"), "1, 2 ,\"3\"\r\n\r\nNaN,Inf,-Inf\r\n-Infinity,Infinity,1e-3\r\n");
    MB *m = io_read_matrix(P("d1.csv"), &o, &e);
    T_CHECK(m && m->rows == 3 && m->cols == 3 && mb_get(m, 0, 2) == 3 && isnan(mb_get(m, 1, 0)) &&
            mb_get(m, 1, 2) == -INFINITY && mb_get(m, 2, 0) == -INFINITY &&
            mb_get(m, 2, 1) == INFINITY && mb_get(m, 2, 2) == 1e-3, "csv details: %s", e.msg);
    mb_release(m);
    t_put(P("bom.csv"), "\xEF\xBB\xBFx,y\n1,2\n");
    o.header = 1;
    m = io_read_matrix(P("bom.csv"), &o, &e);
    T_CHECK(m && m->rows == 1 && m->cols == 2 && mb_get(m, 0, 1) == 2, "csv with BOM: %s", e.msg);
    mb_release(m);
    o.header = -1;
    t_put(P("d2.csv"), "1,,3\nNA,5,\n");
    m = io_read_matrix(P("d2.csv"), &o, &e);
    T_CHECK(!m && strstr(e.msg, "line 2") && strstr(e.msg, "\"NA\""), "NA without naStrings: %s", e.msg);
    br_err_clear(&e);
    const char *na[] = {"NA", "?"};
    o.na_strings = na;
    o.n_na = 2;
    m = io_read_matrix(P("d2.csv"), &o, &e);
    T_CHECK(m && mb_get(m, 0, 1) == 0 && isnan(mb_get(m, 1, 0)) && mb_get(m, 1, 2) == 0,
            "fill 0 and naStrings: %s", e.msg);
    mb_release(m);
    o.has_fill_value = true;
    o.fill_value = 7.5;
    m = io_read_matrix(P("d2.csv"), &o, &e);
    T_CHECK(m && mb_get(m, 0, 1) == 7.5 && mb_get(m, 1, 2) == 7.5, "fill value: %s", e.msg);
    mb_release(m);
    io_read_opts_init(&o);
    /* header only: 0 rows, columns from the header */
    t_put(P("d3.csv"), "a,b,c\n");
    o.header = 1;
    o.format = "csv";
    m = io_read_matrix(P("d3.csv"), &o, &e);
    T_CHECK(m && m->rows == 0 && m->cols == 3, "header only: %s", e.msg);
    mb_release(m);
    o.header = -1;
    o.format = NULL;
    /* text: duplicates (last wins, also a zero), dims inferred */
    t_put(P("d4.ijv"), "2 3 1.5\n1 1 4\n2 3 2.5\n1 1 0\n3 1 -1\n");
    m = io_read_matrix(P("d4.ijv"), &o, &e);
    T_CHECK(m && m->rows == 3 && m->cols == 3 && m->nnz == 2 && mb_get(m, 1, 2) == 2.5 &&
            mb_get(m, 0, 0) == 0 && mb_get(m, 2, 0) == -1, "text duplicates: %s", e.msg);
    mb_release(m);
    /* a large unsorted text file with duplicates, sparse and dense results */
    for (int dense = 0; dense < 2; dense++) {
        int64_t R = 300, C = dense ? 20 : 400;
        MB *ref = mb_dense(R, C, &e);
        FILE *f = fopen(P("d5.ijv"), "w");
        for (int i = 0; i < 6000; i++) {
            int64_t r = (int64_t)(next_u() % (uint64_t)R), c = (int64_t)(next_u() % (uint64_t)C);
            double v = next_u() % 5 ? (double)(next_u() % 100) / 4 : 0;
            fprintf(f, "%lld %lld %.17g\n", (long long)r + 1, (long long)c + 1, v);
            ref->d[r * C + c] = v;
        }
        fclose(f);
        mb_recount_nnz(ref);
        for (int th = 1; th <= 2; th++) {
            br_set_threads(th);
            o.rows = R;
            o.cols = C;
            o.chunk_bytes = 700;
            m = io_read_matrix(P("d5.ijv"), &o, &e);
            T_CHECK(m && mb_equal(m, ref, 0) && m->nnz == ref->nnz && fmt_ok(m),
                    "unsorted text dense=%d t%d: %s", dense, th, e.msg);
            mb_release(m);
        }
        mb_release(ref);
    }
    br_set_threads(0);
    io_read_opts_init(&o);
    /* Matrix Market variants */
    t_put(P("sym.mtx"), "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 2\n3 1 -1\n"
        "2 2 5\n");
    m = io_read_matrix(P("sym.mtx"), &o, &e);
    T_CHECK(m && mb_get(m, 2, 0) == -1 && mb_get(m, 0, 2) == -1 && mb_get(m, 1, 1) == 5 &&
            m->nnz == 4, "mm symmetric: %s", e.msg);
    mb_release(m);
    t_put(P("skew.mtx"), "%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 1\n3 1 4\n");
    m = io_read_matrix(P("skew.mtx"), &o, &e);
    T_CHECK(m && mb_get(m, 2, 0) == 4 && mb_get(m, 0, 2) == -4 && m->nnz == 2, "mm skew: %s", e.msg);
    mb_release(m);
    t_put(P("pat.mtx"), "%%MatrixMarket matrix coordinate pattern general\n2 4 2\n1 4\n2 1\n");
    m = io_read_matrix(P("pat.mtx"), &o, &e);
    T_CHECK(m && m->rows == 2 && m->cols == 4 && mb_get(m, 0, 3) == 1 && mb_get(m, 1, 0) == 1 &&
            m->nnz == 2, "mm pattern: %s", e.msg);
    mb_release(m);
    t_put(P("arr.mtx"), "%%MatrixMarket matrix array real general\n% c\n2 3\n1\n2\n3\n4\n5\n0\n");
    m = io_read_matrix(P("arr.mtx"), &o, &e);
    T_CHECK(m && mb_get(m, 0, 0) == 1 && mb_get(m, 1, 0) == 2 && mb_get(m, 0, 1) == 3 &&
            mb_get(m, 1, 2) == 0 && mb_get(m, 0, 2) == 5 && m->nnz == 5, "mm array: %s", e.msg);
    mb_release(m);
    t_put(P("arrs.mtx"), "%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n");
    m = io_read_matrix(P("arrs.mtx"), &o, &e);
    T_CHECK(m && mb_get(m, 0, 0) == 1 && mb_get(m, 1, 0) == 2 && mb_get(m, 0, 1) == 2 &&
            mb_get(m, 1, 1) == 3, "mm array symmetric: %s", e.msg);
    mb_release(m);
    /* no .mtd and no format: the banner picks mm */
    t_put(P("guess"), "%%MatrixMarket matrix coordinate real general\n2 2 1\n2 2 9\n");
    m = io_read_matrix(P("guess"), &o, &e);
    T_CHECK(m && m->rows == 2 && mb_get(m, 1, 1) == 9, "guess mm: %s", e.msg);
    mb_release(m);
    /* a directory of part files */
    mkdir(P("parts.csv"), 0777);
    t_put(P("parts.csv/part-00001"), "3,4\n");
    t_put(P("parts.csv/part-00000"), "1,2");
    t_put(P("parts.csv/_SUCCESS"), "");
    t_put(P("parts.csv/.part-00000.crc"), "xx");
    o.format = "csv";
    m = io_read_matrix(P("parts.csv"), &o, &e);
    T_CHECK(m && m->rows == 2 && mb_get(m, 0, 1) == 2 && mb_get(m, 1, 0) == 3, "part files: %s",
            e.msg);
    mb_release(m);
    /* writing over the part-file directory replaces it */
    MB *x = rnd(3, 3, 1, false);
    IoWriteOpts wo;
    io_write_opts_init(&wo);
    wo.format = "csv";
    struct stat st;
    /* only with the .mtd that says braid or SystemDS wrote it */
    T_CHECK(io_write_matrix(P("parts.csv"), x, &wo, &e) != 0 && strstr(e.msg, "without") &&
            stat(P("parts.csv/part-00001"), &st) == 0, "part dir without .mtd kept: %s", e.msg);
    br_err_clear(&e);
    t_put(P("parts.csv.mtd"), "{\"data_type\": \"matrix\", \"rows\": 2, \"cols\": 2, \"format\": \"csv\"}");
    T_CHECK(io_write_matrix(P("parts.csv"), x, &wo, &e) == 0, "replace part dir: %s", e.msg);
    T_CHECK(stat(P("parts.csv"), &st) == 0 && S_ISREG(st.st_mode), "now a file");
    /* but a directory with subdirectories is left alone */
    mkdir(P("deep"), 0777);
    mkdir(P("deep/sub"), 0777);
    br_err_clear(&e);
    T_CHECK(io_write_matrix(P("deep"), x, &wo, &e) != 0 && strstr(e.msg, "deep") &&
            stat(P("deep/sub"), &st) == 0, "deep dir kept: %s", e.msg);
    br_err_clear(&e);
    /* missing parent directories are created (as SystemDS on a local
     * file system); a parent that is a file is a clean failure */
    T_CHECK(io_write_matrix(P("nodir/sub/x.csv"), x, &wo, &e) == 0, "missing parents: %s", e.msg);
    T_CHECK(stat(P("nodir/sub/x.csv"), &st) == 0 && S_ISREG(st.st_mode), "written below new dirs");
    br_err_clear(&e);
    T_CHECK(io_write_matrix(P("keep0.csv"), x, &wo, &e) == 0, "write keep0");
    T_CHECK(io_write_matrix(P("keep0.csv/x.csv"), x, &wo, &e) != 0 && strstr(e.msg, "keep0.csv"),
            "parent is a file: %s", e.msg);
    br_err_clear(&e);
    /* a failing write keeps the previous file intact */
    T_CHECK(io_write_matrix(P("keep.csv"), x, &wo, &e) == 0, "write keep");
    char *before = t_slurp(P("keep.csv"), NULL);
    wo.sep = "";
    T_CHECK(io_write_matrix(P("keep.csv"), x, &wo, &e) != 0, "bad sep fails");
    char *after = t_slurp(P("keep.csv"), NULL);
    T_CHECK(before && after && !strcmp(before, after), "target untouched");
    free(before);
    free(after);
    br_err_clear(&e);
    wo.sep = NULL;
    wo.format = "parquet";
    T_CHECK(io_write_matrix(P("keep.csv"), x, &wo, &e) != 0 && strstr(e.msg, "parquet"), "bad format");
    br_err_clear(&e);
    mb_release(x);
    /* written text shapes */
    MB *s = mb_dense(2, 3, &e);
    s->d[1] = 0.1;
    s->d[5] = -3;
    mb_recount_nnz(s);
    io_write_opts_init(&wo);
    wo.format = "mm";
    io_write_matrix(P("w.mtx"), s, &wo, &e);
    char *t = t_slurp(P("w.mtx"), NULL);
    T_CHECK(t && !strcmp(t, "%%MatrixMarket matrix coordinate real general\n2 3 2\n1 2 0.1\n2 3 -3.0\n"),
            "mm text: %s", t);
    free(t);
    wo.format = "csv";
    wo.header = true;
    wo.sep = ";";
    io_write_matrix(P("w.csv"), s, &wo, &e);
    t = t_slurp(P("w.csv"), NULL);
    T_CHECK(t && !strcmp(t, "C1;C2;C3\n0;0.1;0\n0;0;-3.0\n"), "csv text: %s", t);
    free(t);
    t = t_slurp(P("w.csv.mtd"), NULL);
    T_CHECK(t && strstr(t, "\"data_type\": \"matrix\", \"value_type\": \"double\", \"rows\": 2, "
                        "\"cols\": 3, \"nnz\": 2, \"format\": \"csv\", \"header\": true, \"sep\": \";\""),
            "csv mtd: %s", t);
    free(t);
    mb_release(s);
    T_CHECK(tmp_files(dir) == 0, "no temporary files left behind");
#undef io_read_matrix
}

/* ---------- scalars and .mtd ---------- */

static void test_scalars(void)
{
    BrErr e = {0};
    char buf[64];
    IoMeta m;
    /* value, type, what is read back: a string as SystemDS reads it, its
     * lines joined by \n without the last line end */
    const char *vals[][3] = {{"0.3333333333333333", "double", "0.3333333333333333"}, {"42", "int", "42"},
                             {"true", "boolean", "true"}, {"hello world", "string", "hello world"},
                             {"line\n", "string", "line"}, {"", "string", ""}, {" \n", "string", " "},
                             {"a\r\nb\rc\n\n", "string", "a\nb\nc\n"}, {" 7 \n", "double", " 7"}};
    for (int i = 0; i < 9; i++) {
        T_CHECK(io_write_scalar_str(P("s.scalar"), vals[i][0], vals[i][1], &e) == 0, "write scalar");
        T_CHECK(io_read_scalar(P("s.scalar"), buf, sizeof buf, &m, &e) == 0 &&
                !strcmp(buf, vals[i][2]) && !strcmp(m.value_type, vals[i][1]) &&
                !strcmp(m.data_type, "scalar"), "scalar %d: \"%s\" %s", i, buf, e.msg);
    }
    /* the type the caller reads as decides, not only the .mtd's (a spec
     * file without one, read with value_type="string") */
    t_put(P("spec.json"), " \n");
    char *sp = io_read_scalar_dup(P("spec.json"), NULL, "string", &e);
    T_CHECK(sp && !strcmp(sp, " "), "string without .mtd: \"%s\"", sp ? sp : "(null)");
    free(sp);
    char *raw = t_slurp(P("s.scalar"), NULL);
    T_CHECK(raw && !strcmp(raw, vals[8][0]), "scalar file holds just the value");
    free(raw);
    t_put(P("n.scalar"), "17\n");
    T_CHECK(io_read_scalar(P("n.scalar"), buf, sizeof buf, &m, &e) == 0 && !strcmp(buf, "17") &&
            m.value_type[0] == 0, "scalar without mtd: %s", buf);
    T_CHECK(io_read_scalar(P("n.scalar"), buf, 2, NULL, &e) != 0 && strstr(e.msg, "too long"),
            "small buffer");
    br_err_clear(&e);
    T_CHECK(io_read_scalar(P("none.scalar"), buf, sizeof buf, NULL, &e) != 0 &&
            strstr(e.msg, "none.scalar") && strstr(e.msg, "not found"), "missing scalar: %s", e.msg);
    br_err_clear(&e);
    char *d = io_read_scalar_dup(P("n.scalar"), NULL, NULL, &e);
    T_CHECK(d && !strcmp(d, "17"), "dup");
    free(d);
    /* .mtd round trip with an odd separator */
    IoMeta a, b;
    io_meta_init(&a);
    strcpy(a.data_type, "matrix");
    strcpy(a.value_type, "double");
    strcpy(a.format, "csv");
    a.rows = 3;
    a.cols = 4;
    a.header = 0;
    strcpy(a.sep, "\"\t\\");
    a.has_sep = true;
    bool found;
    T_CHECK(io_write_mtd(P("m.csv"), &a, &e) == 0 && io_read_mtd(P("m.csv"), &b, &found, &e) == 0 &&
            found && b.rows == 3 && b.cols == 4 && b.nnz == -1 && b.header == 0 && b.has_sep &&
            !strcmp(b.sep, a.sep) && !strcmp(b.format, "csv"), "mtd round trip: %s", e.msg);
    T_CHECK(io_read_mtd(P("nothing"), &b, &found, &e) == 0 && !found && b.rows == -1, "no mtd");
}

/* ---------- speed (printed, not asserted) ---------- */

static void speed(void)
{
    BrErr e = {0};
    MB *m = rnd(2000, 250, 1, false);
    IoWriteOpts wo;
    io_write_opts_init(&wo);
    const char *f[] = {"csv", "text", "binary"};
    for (int i = 0; i < 3; i++) {
        wo.format = f[i];
        int64_t t0 = br_now_ns();
        io_write_matrix(P("speed"), m, &wo, &e);
        int64_t t1 = br_now_ns();
        MB *r = io_read_matrix(P("speed"), NULL, &e);
        int64_t t2 = br_now_ns();
        struct stat st;
        stat(P("speed"), &st);
        double mb = (double)st.st_size / 1e6;
        printf("io %-6s %6.1f MB: write %7.1f MB/s, read %7.1f MB/s\n", f[i], mb,
               mb / ((double)(t1 - t0) / 1e9), mb / ((double)(t2 - t1) / 1e9));
        T_CHECK(r && mb_equal(r, m, 0), "speed %s round trip", f[i]);
        mb_release(r);
    }
    mb_release(m);
}

/* ---------- libsvm ---------- */

/* libsvm separators and the .mtd: the default ones leave the .mtd as
 * SystemDS writes it (no "sep"); others are stored as "sep"/"indSep", and
 * a read without options takes them from there (SystemDS merges a .mtd's
 * keys into the read); a read whose options disagree with them fails. */
static void test_libsvm_mtd_seps(const MB *m)
{
    BrErr e = {0};
    IoWriteOpts wo;
    io_write_opts_init(&wo);
    wo.format = "libsvm";
    T_CHECK(m && io_write_matrix(P("d.svm"), m, &wo, &e) == 0, "libsvm default write: %s", e.msg);
    char *t = t_slurp(P("d.svm.mtd"), NULL);
    T_CHECK(t && !strstr(t, "\"sep\"") && !strstr(t, "indSep"), "default seps stay out of the .mtd: %s", t);
    free(t);
    wo.sep = ",";
    wo.ind_sep = "=";
    T_CHECK(m && io_write_matrix(P("s.svm"), m, &wo, &e) == 0, "libsvm sep write: %s", e.msg);
    t = t_slurp(P("s.svm.mtd"), NULL);
    T_CHECK(t && strstr(t, "\"sep\": \",\"") && strstr(t, "\"indSep\": \"=\""), "seps in the .mtd: %s", t);
    free(t);
    t = t_slurp(P("s.svm"), NULL);
    T_CHECK(t && !strcmp(t, "1.0,1=0.5,3=-2.0\n-1.0,2=1.5,4=7.0\n0,5=3.0\n1.0\n"), "libsvm sep text: %s", t);
    free(t);
    MB *r = io_read_matrix(P("s.svm"), NULL, &e);
    T_CHECK(r && mb_equal(r, m, 0), "libsvm read with the .mtd's seps: %s", e.msg);
    mb_release(r);
    br_err_clear(&e);
    IoReadOpts ro;
    io_read_opts_init(&ro);
    ro.ind_sep = ":";
    r = io_read_matrix(P("s.svm"), &ro, &e);
    T_CHECK(!r && strstr(e.msg, "indSep"), "indSep disagreeing with the .mtd: %s", e.msg);
    mb_release(r);
    br_err_clear(&e);
    wo.sep = " ";   /* only indSep differs: both are stored */
    T_CHECK(m && io_write_matrix(P("i.svm"), m, &wo, &e) == 0, "libsvm indSep write: %s", e.msg);
    t = t_slurp(P("i.svm.mtd"), NULL);
    T_CHECK(t && strstr(t, "\"sep\": \" \"") && strstr(t, "\"indSep\": \"=\""), "indSep in the .mtd: %s", t);
    free(t);
}

/* Hand-written libsvm files: the label in the last column, comments,
 * blank lines, unsorted indexes, explicit zeros, inferred columns, the
 * written text, and every kind of bad line (found under every split). */
static void test_libsvm(void)
{
    BrErr e = {0};
    IoReadOpts o;
    io_read_opts_init(&o);
    o.format = "libsvm";
    t_put(P("a.svm"), "# a comment line\n1 1:0.5 3:-2\n\n-1 4:7 2:1.5  # unsorted\n0 2:0 5:3\n+1\n");
    for (int th = 1; th <= 2; th++)
        for (int64_t ch = 0; ch < 40; ch += 7) {
            br_set_threads(th);
            o.chunk_bytes = ch;
            MB *m = io_read_matrix(P("a.svm"), &o, &e);
            T_CHECK(m && m->rows == 4 && m->cols == 6 && m->nnz == 8, "libsvm inferred shape: %s", e.msg);
            double want[4][6] = {{0.5, 0, -2, 0, 0, 1}, {0, 1.5, 0, 7, 0, -1}, {0, 0, 0, 0, 3, 0}, {0, 0, 0, 0, 0, 1}};
            bool same = m != NULL;
            for (int i = 0; same && i < 4; i++)
                for (int j = 0; j < 6; j++) same = same && mb_get(m, i, j) == want[i][j];
            T_CHECK(same, "libsvm values t%d chunk %lld", th, (long long)ch);
            mb_release(m);
            br_err_clear(&e);
        }
    br_set_threads(0);
    o.chunk_bytes = 0;
    o.cols = 9;
    MB *m = io_read_matrix(P("a.svm"), &o, &e);
    T_CHECK(m && m->cols == 9 && mb_get(m, 1, 8) == -1 && mb_get(m, 1, 3) == 7, "libsvm cols=9: %s", e.msg);
    br_err_clear(&e);
    IoWriteOpts wo;
    io_write_opts_init(&wo);
    wo.format = "libsvm";
    T_CHECK(m && io_write_matrix(P("w.svm"), m, &wo, &e) == 0, "libsvm write: %s", e.msg);
    char *t = t_slurp(P("w.svm"), NULL);
    T_CHECK(t && !strcmp(t, "1.0 1:0.5 3:-2.0\n-1.0 2:1.5 4:7.0\n0 5:3.0\n1.0\n"), "libsvm text: %s", t);
    free(t);
    MB *d = m ? mb_copy(m, &e) : NULL;
    if (d && d->sparse) mb_make_dense(d, &e);
    T_CHECK(d && !d->sparse && io_write_matrix(P("w2.svm"), d, &wo, &e) == 0, "libsvm dense write");
    t = t_slurp(P("w2.svm"), NULL);
    T_CHECK(t && !strcmp(t, "1.0 1:0.5 3:-2.0\n-1.0 2:1.5 4:7.0\n0 5:3.0\n1.0\n"), "libsvm dense text: %s", t);
    free(t);
    mb_release(d);
    test_libsvm_mtd_seps(m);
    mb_release(m);
    o.cols = -1;
    struct { const char *text, *what, *s1; } bad[] = {
        {"x 1:2", "bad label", "\"x\""},
        {"1 1:2 0:3", "bad index", "start at 1"},
        {"1 2:1 2:5", "twice", "index 2"},
        {"1 3", "expected index:value", "\"3\""},
        {"1 3:abc", "bad value", "3:abc"},
        {"1 a:1", "bad index", "a:1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char file[8192] = "";
        for (int l = 1; l <= 30; l++) {
            strcat(file, l == 23 ? bad[i].text : "1 1:1 2:2");
            strcat(file, "\n");
        }
        t_put(P("bad.svm"), file);
        for (int th = 1; th <= 2; th++) {
            br_set_threads(th);
            for (int64_t ch = 0; ch < 60; ch += 11) {
                o.chunk_bytes = ch;
                expect_err(P("bad.svm"), &o, bad[i].what, "line 23", bad[i].what, bad[i].s1);
            }
        }
    }
    br_set_threads(0);
    o.chunk_bytes = 0;
    o.cols = 3;
    t_put(P("oob.svm"), "1 1:1\n1 3:1\n");
    expect_err(P("oob.svm"), &o, "libsvm index out of bounds", "line 2", "index 3 out of bounds", NULL);
    o.cols = -1;
    o.rows = 5;
    expect_err(P("oob.svm"), &o, "libsvm rows", "expected 5 rows", "dimension", NULL);
}

/* Reading binary (dense and sparse) and text (ijv) matrices asks br_par
 * (the non-zero count, the CSR check, the rows' sort and copy): teams
 * when the machine is not crowded, one thread when it is, the same bits
 * (t_crowded). */
static void crowded_io_run(void *arg, MB **r)
{
    MB *const *m = arg;
    static const char *fmts[] = {"braid-binary", "braid-binary", "text"};
    for (int q = 0; q < 3; q++) {
        BrErr e = {0};
        char name[64];
        snprintf(name, sizeof name, "crowded_%d", q);
        const char *path = P(name);
        IoWriteOpts wo;
        io_write_opts_init(&wo);
        wo.format = fmts[q];
        if (io_write_matrix(path, m[q], &wo, &e)) continue;
        IoReadOpts ro;
        io_read_opts_init(&ro);
        r[q] = io_read_matrix(path, &ro, &e);
    }
}

static void crowded_io(void)
{
    BrErr e = {0};
    MB *m[3] = {mb_dense(1000, 100, &e), NULL, NULL};
    MB *s = mb_dense(2000, 400, &e);
    for (int64_t i = 0; i < 1000 * 100; i++) m[0]->d[i] = (double)(i % 97) * 0.25 - 3;
    for (int64_t i = 0; i < 2000 * 400; i++) s->d[i] = i % 10 == 3 ? (double)(i % 89) + 0.5 : 0;
    mb_recount_nnz(m[0]);
    mb_recount_nnz(s);
    m[1] = mb_to_sparse(s, &e);
    m[2] = m[1];
    t_crowded("io", 3, 3, crowded_io_run, m);
    mb_release(m[0]);
    mb_release(m[1]);
    mb_release(s);
}

/* ---------- HDF5 ---------- */

/* A dataset made by the HDF5 library directly: type ftype in the file,
 * values v (doubles converted by the library), dims, optionally chunked
 * and deflated. */
static void h5_make(const char *path, const char *name, hid_t ftype, int rank, const hsize_t *dims,
                    const double *v, bool chunk, bool append)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t f = append ? H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT) : H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t sp = H5Screate_simple(rank, dims, NULL), dc = H5Pcreate(H5P_DATASET_CREATE), lc = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lc, 1);
    if (chunk) {
        hsize_t cd[8];
        for (int k = 0; k < rank; k++) cd[k] = dims[k] > 3 ? (dims[k] + 2) / 3 : dims[k];
        H5Pset_chunk(dc, rank, cd);
        H5Pset_deflate(dc, 6);
    }
    hid_t d = H5Dcreate2(f, name, ftype, sp, lc, dc, H5P_DEFAULT);
    T_CHECK(d >= 0 && H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0, "h5 fixture %s", name);
    H5Dclose(d); H5Pclose(dc); H5Pclose(lc); H5Sclose(sp); H5Fclose(f);
}

static void test_hdf5(void)
{
    BrErr e = {0};
    /* round trips: dense and sparse, vectors, 1 x 1, named datasets */
    int64_t shapes[][2] = {{1, 1}, {1, 17}, {23, 1}, {37, 19}, {300, 41}};
    for (int k = 0; k < 5; k++)
        for (int sp = 0; sp < 2; sp++) {
            MB *m = rnd(shapes[k][0], shapes[k][1], sp ? 0.05 : 0.9, sp);
            IoWriteOpts wo;
            io_write_opts_init(&wo);
            wo.format = "hdf5";
            wo.dataset = k == 3 ? "grp/sub/x" : NULL;
            const char *f = P("rt.h5");
            T_CHECK(io_write_matrix(f, m, &wo, &e) == 0, "hdf5 write %d: %s", k, e.msg);
            IoReadOpts ro;
            io_read_opts_init(&ro);
            ro.dataset = wo.dataset;
            MB *r = io_read_matrix(f, &ro, &e);
            T_CHECK(r && mb_equal(r, m, 0) && r->nnz == m->nnz && fmt_ok(r), "hdf5 round trip %d/%d: %s", k, sp,
                    e.msg);
            mb_release(r);
            /* what is written: one contiguous 2-D dataset of little-endian
               doubles (SystemDS's reader takes just that) */
            hid_t h = H5Fopen(f, H5F_ACC_RDONLY, H5P_DEFAULT);
            hid_t d = H5Dopen2(h, wo.dataset ? wo.dataset : "systemdsh5", H5P_DEFAULT);
            hid_t t = H5Dget_type(d), s = H5Dget_space(d), pl = H5Dget_create_plist(d);
            hsize_t dims[2] = {0, 0};
            T_CHECK(H5Tequal(t, H5T_IEEE_F64LE) > 0 && H5Sget_simple_extent_ndims(s) == 2 &&
                    H5Sget_simple_extent_dims(s, dims, NULL) == 2 && dims[0] == (hsize_t)m->rows &&
                    dims[1] == (hsize_t)m->cols && H5Pget_layout(pl) == H5D_CONTIGUOUS, "hdf5 layout %d", k);
            H5Pclose(pl); H5Sclose(s); H5Tclose(t); H5Dclose(d); H5Fclose(h);
            mb_release(m);
        }
    T_CHECK(tmp_files(dir) == 0, "hdf5: no temporaries left");
    /* files of other writers: element types, ranks, chunked and deflated,
     * read without .mtd (the .h5 name) */
    double v[240];
    for (int i = 0; i < 240; i++) v[i] = (double)((i * 37) % 101) - 50;
    hsize_t d2[2] = {12, 20}, d1[1] = {30}, d3[3] = {4, 5, 6}, d4[4] = {2, 3, 4, 5};
    const char *f = P("other.h5");
    h5_make(f, "f64", H5T_IEEE_F64BE, 2, d2, v, false, false);
    h5_make(f, "f32", H5T_IEEE_F32LE, 2, d2, v, false, true);
    h5_make(f, "i32", H5T_STD_I32LE, 2, d2, v, false, true);
    h5_make(f, "i64", H5T_STD_I64BE, 2, d2, v, false, true);
    h5_make(f, "i8", H5T_STD_I8LE, 2, d2, v, false, true);
    h5_make(f, "vec", H5T_IEEE_F64LE, 1, d1, v, false, true);
    h5_make(f, "cube", H5T_IEEE_F64LE, 3, d3, v, false, true);
    h5_make(f, "t4", H5T_IEEE_F32LE, 4, d4, v, true, true);
    h5_make(f, "deep/er/chunked", H5T_IEEE_F64LE, 2, d2, v, true, true);
    struct { const char *ds; int64_t r, c; } cases[] = {{"f64", 12, 20}, {"f32", 12, 20}, {"i32", 12, 20},
        {"i64", 12, 20}, {"i8", 12, 20}, {"vec", 30, 1}, {"cube", 4, 30}, {"t4", 2, 60}, {"deep/er/chunked", 12, 20}};
    for (int k = 0; k < 9; k++) {
        IoReadOpts ro;
        io_read_opts_init(&ro);
        ro.dataset = cases[k].ds;
        MB *r = io_read_matrix(f, &ro, &e);
        bool ok = r && r->rows == cases[k].r && r->cols == cases[k].c;
        /* C order: cell (i, j) is element i * cols + j */
        for (int64_t i = 0; ok && i < r->rows * r->cols; i++) ok = mb_get(r, i / r->cols, i % r->cols) == v[i];
        T_CHECK(ok, "hdf5 read %s: %s", cases[k].ds, e.msg);
        mb_release(r);
    }
    /* a folder of part files: their rows in name order */
    rm_rf(P("parts.h5"));
    mkdir(P("parts.h5"), 0755);
    hsize_t p1[2] = {3, 20}, p2[2] = {9, 20};
    h5_make(P("parts.h5/0-m-00000"), "systemdsh5", H5T_IEEE_F64LE, 2, p1, v, false, false);
    h5_make(P("parts.h5/0-m-00001"), "systemdsh5", H5T_IEEE_F64LE, 2, p2, v + 60, false, false);
    MB *r = io_read_matrix(P("parts.h5"), NULL, &e);
    bool ok = r && r->rows == 12 && r->cols == 20;
    for (int64_t i = 0; ok && i < 240; i++) ok = mb_get(r, i / 20, i % 20) == v[i];
    T_CHECK(ok, "hdf5 part files: %s", e.msg);
    mb_release(r);
    /* errors: a missing dataset (the message lists what is there),
     * strings, not an HDF5 file, a shape other than the .mtd's */
    IoReadOpts ro;
    io_read_opts_init(&ro);
    ro.dataset = "nope";
    expect_err(f, &ro, "hdf5 missing dataset", "no dataset \"nope\"", "f32, f64", "deep/");
    hid_t h = H5Fopen(f, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t st = H5Tcopy(H5T_C_S1);
    H5Tset_size(st, 4);
    hsize_t ds[1] = {2};
    hid_t sp = H5Screate_simple(1, ds, NULL);
    hid_t d = H5Dcreate2(h, "str", st, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(d, st, H5S_ALL, H5S_ALL, H5P_DEFAULT, "abcdefgh");
    H5Dclose(d); H5Sclose(sp); H5Tclose(st); H5Fclose(h);
    ro.dataset = "str";
    expect_err(f, &ro, "hdf5 strings", "\"str\"", "strings", NULL);
    FILE *fp = fopen(P("bad.h5"), "w");
    fputs("1 1 3.0\n", fp);
    fclose(fp);
    expect_err(P("bad.h5"), NULL, "not hdf5", "not an HDF5 file", NULL, NULL);
    ro.dataset = "f64";
    ro.rows = 11;
    expect_err(f, &ro, "hdf5 shape", "12x20", "dimension mismatch", NULL);
    io_read_opts_init(&ro);
    ro.dataset = "f64";
    ro.format = "csv";
    expect_err(f, &ro, "dataset= for csv", "dataset=", "hdf5", NULL);
    MB *z = mb_dense(0, 3, &e);
    IoWriteOpts wo;
    io_write_opts_init(&wo);
    wo.format = "hdf5";
    T_CHECK(io_write_matrix(P("z.h5"), z, &wo, &e) != 0 && strstr(e.msg, "0x3") && access(P("z.h5"), F_OK) != 0 &&
            tmp_files(dir) == 0, "hdf5 empty write refused: %s", e.msg);
    br_err_clear(&e);
    mb_release(z);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/braid_io_XXXXXX");
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 2; }
    test_numbers();
    crowded_io();
    test_round_trips();
    test_signed_zero();
    test_conformance_data();
    test_bad_files();
    test_reliability();
    test_details();
    test_scalars();
    test_libsvm();
    test_hdf5();
    speed();
    rm_rf(dir);
    return t_done("test_io");
}
