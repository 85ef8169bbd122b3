/* test_frame.c: frames: construction, cells and value types, matrix
 * conversions over shapes and formats, slicing/cbind/rbind/left indexing,
 * csv and text files (quotes, separators, missing values, headers,
 * schemas, bad files), and transformencode/apply/decode/colmap against
 * naive references (recode order, dummy coding, equi-width bins,
 * imputation, omit), with round trips. Files go to a fresh mkdtemp dir. */
#include "t.h"
#include "io/io.h"
#include "matrix/fb.h"
#include "builtins/transform.h"
#include "base/junicode.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
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



static uint64_t rng = 88172645463325252ULL;
static uint64_t rnd(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }
static double unif(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }

/* Is cell (i, j) of a equal to cell (i, j) of b (same types)? */
static bool cell_eq(const FB *a, const FB *b, int64_t i, int64_t j)
{
    const FbCol *x = a->c[j], *y = b->c[j];
    if (x->type != y->type) return false;
    switch (x->type) {
    case FB_STRING: return (!x->s[i] && !y->s[i]) || (x->s[i] && y->s[i] && !strcmp(x->s[i], y->s[i]));
    case FB_FP64: return x->d[i] == y->d[i] || (isnan(x->d[i]) && isnan(y->d[i]));
    case FB_INT64: return x->i[i] == y->i[i];
    default: return x->b[i] == y->b[i];
    }
}

static bool fb_eq(const FB *a, const FB *b, bool names)
{
    if (!a || !b || a->rows != b->rows || a->cols != b->cols) return false;
    for (int64_t j = 0; j < a->cols; j++) {
        if (names && strcmp(a->names[j], b->names[j])) return false;
        for (int64_t i = 0; i < a->rows; i++)
            if (!cell_eq(a, b, i, j)) return false;
    }
    return true;
}

static void set(FB *f, int64_t i, int64_t j, const char *s)
{
    BrErr e = {0};
    fb_set_text(f, i, j, s, s ? strlen(s) : 0, &e);
    if (e.code) { fprintf(stderr, "set: %s\n", e.msg); exit(2); }
}

/* A frame from rows of texts ("" = missing), all strings. */
static FB *str_frame(int64_t rows, int64_t cols, const char *const *cells)
{
    BrErr e = {0};
    FB *f = fb_new(rows, cols, NULL, &e);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) {
            const char *s = cells[i * cols + j];
            set(f, i, j, s && *s ? s : NULL);
        }
    return f;
}

static MB *rand_mb(int64_t r, int64_t c, double sp, bool sparse)
{
    BrErr e = {0};
    MB *m = mb_dense(r, c, &e);
    for (int64_t k = 0; k < r * c; k++) m->d[k] = unif() < sp ? floor(unif() * 2000 - 1000) / 8 : 0;
    mb_recount_nnz(m);
    if (sparse) mb_make_sparse(m, &e);
    return m;
}

/* ---- construction and cells ---- */

static void test_cells(void)
{
    BrErr e = {0};
    FbType t;
    T_CHECK(fb_type_parse("fp64", 4, &t) && t == FB_FP64, "fp64");
    T_CHECK(fb_type_parse(" Double ", 8, &t) && t == FB_FP64, "double");
    T_CHECK(fb_type_parse("INT", 3, &t) && t == FB_INT64, "int");
    T_CHECK(fb_type_parse("Boolean", 7, &t) && t == FB_BOOL, "boolean");
    T_CHECK(fb_type_parse("string", 6, &t) && t == FB_STRING, "string");
    T_CHECK(!fb_type_parse("matrix", 6, &t), "unknown type");
    T_CHECK(!strcmp(fb_type_name(FB_BOOL), "BOOLEAN") && !strcmp(fb_type_name(FB_INT64), "INT64"), "names");

    FbType ty[4] = {FB_STRING, FB_FP64, FB_INT64, FB_BOOL};
    FB *f = fb_new(3, 4, ty, &e);
    T_CHECK(f && f->rows == 3 && f->cols == 4 && !strcmp(f->names[2], "C3"), "fb_new");
    T_CHECK(fb_is_missing(f, 0, 0) && !fb_is_missing(f, 0, 1), "initial cells");
    set(f, 0, 0, "abc");
    set(f, 0, 1, "2.5");
    set(f, 0, 2, "-7");
    set(f, 0, 3, "TRUE");
    set(f, 1, 1, "1e300");
    set(f, 1, 2, "12.0");
    set(f, 1, 3, "0");
    set(f, 2, 1, "-Infinity");
    set(f, 2, 3, "f");
    bool ok;
    T_CHECK(!strcmp(f->c[0]->s[0], "abc"), "string cell");
    T_CHECK(fb_get_num(f, 0, 1, &ok) == 2.5 && ok, "fp64 cell");
    T_CHECK(f->c[2]->i[0] == -7 && f->c[2]->i[1] == 12, "int cells");
    T_CHECK(f->c[3]->b[0] == 1 && f->c[3]->b[1] == 0 && f->c[3]->b[2] == 0, "bool cells");
    T_CHECK(isinf(f->c[1]->d[2]) && f->c[1]->d[2] < 0, "-Infinity");
    fb_get_num(f, 0, 0, &ok);
    T_CHECK(!ok, "string not a number");
    BrErr e2 = {0};
    T_CHECK(fb_set_text(f, 0, 2, "1.5", 3, &e2) && strstr(e2.msg, "INT64") && strstr(e2.msg, "1.5"),
            "bad int: %s", e2.msg);
    br_err_clear(&e2);
    T_CHECK(fb_set_text(f, 0, 1, "0x10", 4, &e2) != 0, "hex is not a number");
    br_err_clear(&e2);
    T_CHECK(fb_set_text(f, 0, 3, "yes", 3, &e2) != 0, "bad boolean");
    char buf[32];
    T_CHECK(!strcmp(fb_cell_text(f, 0, 1, buf), "2.5") && !strcmp(fb_cell_text(f, 1, 2, buf), "12") &&
            !strcmp(fb_cell_text(f, 0, 3, buf), "true"), "cell text");
    T_CHECK(fb_set_num(f, 2, 0, 0.1, &e) == 0 && !strcmp(f->c[0]->s[2], "0.1"), "set_num into string");
    T_CHECK(fb_find(f, "C4") == 3 && fb_find(f, "x") == -1, "find");
    fb_set_name(f, 3, "flag", &e);
    T_CHECK(fb_find(f, "flag") == 3, "rename");
    /* cast: strings to numbers and back */
    FbType to[4] = {FB_STRING, FB_STRING, FB_FP64, FB_INT64};
    FB *g = fb_cast(f, to, &e);
    T_CHECK(g && !strcmp(g->c[1]->s[0], "2.5") && g->c[2]->d[1] == 12 && g->c[3]->i[0] == 1 &&
            !strcmp(g->names[3], "flag"), "cast");
    T_CHECK(g && g->c[0] == f->c[0] && g->c[0]->refs == 2, "cast shares unchanged columns");
    fb_release(g);
    fb_release(f);
    /* empty shapes */
    FB *z = fb_new(0, 3, NULL, &e);
    T_CHECK(z && z->rows == 0 && z->cols == 3, "0x3");
    fb_release(z);
    z = fb_new(4, 0, NULL, &e);
    T_CHECK(z && z->rows == 4 && z->cols == 0, "4x0");
    fb_release(z);
    T_CHECK(!fb_new(-1, 2, NULL, &e) && strstr(e.msg, "dimension"), "negative dims");
}

/* ---- matrices ---- */

static void test_matrix(void)
{
    int64_t shapes[][2] = {{0, 3}, {3, 0}, {1, 1}, {7, 1}, {1, 9}, {40, 5}, {4, 33}};
    double sps[] = {0, 0.1, 1};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (size_t p = 0; p < 3; p++)
            for (int sparse = 0; sparse < 2; sparse++) {
                BrErr e = {0};
                MB *m = rand_mb(shapes[s][0], shapes[s][1], sps[p], sparse);
                FB *f = fb_from_mb(m, &e);
                bool ok = f && f->rows == m->rows && f->cols == m->cols;
                for (int64_t i = 0; ok && i < m->rows; i++)
                    for (int64_t j = 0; ok && j < m->cols; j++)
                        ok = f->c[j]->type == FB_FP64 && f->c[j]->d[i] == mb_get(m, i, j);
                T_CHECK(ok, "from_mb %lldx%lld sp %g sparse %d", (long long)m->rows, (long long)m->cols, sps[p], sparse);
                MB *back = fb_to_mb(f, &e);
                T_MB_EQ(back, m, 0, "to_mb round trip %lldx%lld", (long long)m->rows, (long long)m->cols);
                mb_release(back);
                fb_release(f);
                mb_release(m);
            }
    /* strings, booleans, missing values */
    const char *cells[] = {"1.5", "true", "", "-2", "FALSE", "3e2"};
    FB *f = str_frame(2, 3, cells);
    BrErr e = {0};
    MB *m = fb_to_mb(f, &e);
    /* a missing cell is NaN, as SystemDS's as.matrix (getDoubleNaN) */
    T_CHECK(m && mb_get(m, 0, 0) == 1.5 && mb_get(m, 0, 1) == 1 && isnan(mb_get(m, 0, 2)) && mb_get(m, 1, 0) == -2 &&
            mb_get(m, 1, 1) == 0 && mb_get(m, 1, 2) == 300, "to_mb parses strings, missing -> NaN");
    mb_release(m);
    set(f, 1, 0, "abc");
    T_CHECK(!fb_to_mb(f, &e) && strstr(e.msg, "abc") && strstr(e.msg, "row 2"), "to_mb error: %s", e.msg);
    fb_release(f);
}

/* ---- reorganizations ---- */

static void test_reorg(void)
{
    BrErr e = {0};
    const char *cells[] = {"a", "1", "x", "b", "2", "", "c", "3", "z", "d", "4", "w"};
    FB *f = str_frame(4, 3, cells);
    fb_set_name(f, 1, "num", &e);
    /* every slice against a cell-by-cell reference */
    int bad = 0;
    for (int64_t rl = 0; rl <= 4; rl++)
        for (int64_t ru = rl; ru <= 4; ru++)
            for (int64_t cl = 0; cl <= 3; cl++)
                for (int64_t cu = cl; cu <= 3; cu++) {
                    FB *s = fb_slice(f, rl, ru, cl, cu, &e);
                    if (!s || s->rows != ru - rl || s->cols != cu - cl) { bad++; fb_release(s); continue; }
                    for (int64_t i = 0; i < s->rows; i++)
                        for (int64_t j = 0; j < s->cols; j++) {
                            const char *x = s->c[j]->s[i], *y = f->c[cl + j]->s[rl + i];
                            if ((x == NULL) != (y == NULL) || (x && strcmp(x, y))) bad++;
                        }
                    for (int64_t j = 0; j < s->cols; j++) bad += strcmp(s->names[j], f->names[cl + j]) != 0;
                    fb_release(s);
                }
    T_CHECK(bad == 0, "slices (%d bad)", bad);
    FB *col = fb_slice(f, 0, 4, 1, 2, &e);
    T_CHECK(col->c[0] == f->c[1], "whole-column slice shares the column");
    /* writing into a frame sharing a column copies it */
    set(col, 0, 0, "99");
    T_CHECK(!strcmp(f->c[1]->s[0], "1") && !strcmp(col->c[0]->s[0], "99"), "copy on write");
    /* cbind / rbind */
    const FB *two[2] = {f, col};
    FB *cb = fb_cbind(2, two, &e);
    T_CHECK(cb && cb->cols == 4 && cb->rows == 4 && !strcmp(cb->names[3], "num") && !strcmp(cb->c[3]->s[0], "99"),
            "cbind");
    FB *short_ = fb_slice(f, 0, 2, 0, 3, &e);
    const FB *mis[2] = {f, short_};
    T_CHECK(!fb_cbind(2, mis, &e) && strstr(e.msg, "dimension"), "cbind rows mismatch");
    br_err_clear(&e);
    FB *rb = fb_rbind(2, mis, &e);
    T_CHECK(rb && rb->rows == 6 && rb->cols == 3 && !strcmp(rb->c[0]->s[5], "b") && !rb->c[2]->s[5], "rbind");
    const FB *mis2[2] = {f, col};
    T_CHECK(!fb_rbind(2, mis2, &e) && strstr(e.msg, "dimension"), "rbind cols mismatch");
    br_err_clear(&e);
    /* rbind widens types: INT64 + FP64 -> FP64, BOOL + STRING -> STRING */
    FbType ta[2] = {FB_INT64, FB_BOOL}, tb[2] = {FB_FP64, FB_STRING};
    FB *a = fb_new(1, 2, ta, &e), *b = fb_new(1, 2, tb, &e);
    set(a, 0, 0, "3");
    set(a, 0, 1, "true");
    set(b, 0, 0, "0.5");
    set(b, 0, 1, "x");
    const FB *ab[2] = {a, b};
    FB *w = fb_rbind(2, ab, &e);
    T_CHECK(w && w->c[0]->type == FB_FP64 && w->c[0]->d[0] == 3 && w->c[0]->d[1] == 0.5 &&
            w->c[1]->type == FB_STRING && !strcmp(w->c[1]->s[0], "true") && !strcmp(w->c[1]->s[1], "x"),
            "rbind widens types");
    /* left indexing */
    FB *src = fb_slice(f, 2, 4, 0, 2, &e);
    FB *l = fb_lix(f, 0, 2, 1, 3, src, &e);
    T_CHECK(l && !strcmp(l->c[1]->s[0], "c") && !strcmp(l->c[2]->s[1], "4") && !strcmp(f->c[1]->s[0], "1") &&
            !strcmp(l->c[0]->s[0], "a"), "fb_lix");
    T_CHECK(!fb_lix(f, 0, 1, 0, 2, src, &e) && strstr(e.msg, "dimension"), "fb_lix shape");
    br_err_clear(&e);
    FB *b0 = fb_slice(b, 0, 1, 0, 1, &e);
    FB *l2 = fb_lix(a, 0, 1, 0, 1, b0, &e); /* 0.5 into an INT64 column truncates */
    T_CHECK(l2 && l2->c[0]->i[0] == 0 && a->c[0]->i[0] == 3, "lix converts to the target type");
    fb_release(l2);
    fb_release(b0);
    fb_release(l);
    fb_release(src);
    fb_release(w);
    fb_release(a);
    fb_release(b);
    fb_release(rb);
    fb_release(short_);
    fb_release(cb);
    fb_release(col);
    fb_release(f);
}

/* ---- files ---- */

static FB *mixed_frame(int64_t rows)
{
    BrErr e = {0};
    FbType ty[4] = {FB_STRING, FB_FP64, FB_INT64, FB_BOOL};
    FB *f = fb_new(rows, 4, ty, &e);
    const char *strs[] = {"plain", "with,comma", "with \"quotes\"", "line\nbreak", "", NULL, " spaced ",
                          "semi;colon", "tab\there", "uni\xc2\xb7" "code"};
    for (int64_t i = 0; i < rows; i++) {
        const char *s = strs[rnd() % 10];
        set(f, i, 0, s);
        if (s && !*s) { /* the empty string (not missing) */
            fb_col_mut(f, 0, &e);
            free(f->c[0]->s[i]);
            f->c[0]->s[i] = strdup("");
        }
        f->c[1]->d[i] = rnd() % 7 == 0 ? NAN : (unif() - 0.5) * pow(10, (double)(rnd() % 12) - 4);
        f->c[2]->i[i] = (int64_t)(rnd() % 2000000) - 1000000;
        f->c[3]->b[i] = rnd() % 2;
    }
    fb_set_name(f, 0, "name, with comma", &e);
    fb_set_name(f, 1, "value", &e);
    fb_set_name(f, 2, "count", &e);
    fb_set_name(f, 3, "flag", &e);
    return f;
}

static void test_files(void)
{
    const char *seps[] = {",", ";", "\t", "||"};
    int64_t sizes[] = {0, 1, 2, 17, 300};
    for (size_t s = 0; s < 4; s++)
        for (size_t k = 0; k < 5; k++)
            for (int header = 0; header < 2; header++) {
                BrErr e = {0};
                FB *f = mixed_frame(sizes[k]);
                IoWriteOpts w;
                io_write_opts_init(&w);
                w.format = "csv";
                w.header = header;
                w.sep = seps[s];
                T_CHECK(io_write_frame(P("f.csv"), f, &w, &e) == 0, "write csv: %s", e.msg);
                FB *g = io_read_frame(P("f.csv"), NULL, &e);
                T_CHECK(fb_eq(f, g, header), "csv round trip sep '%s' rows %lld header %d: %s", seps[s],
                        (long long)sizes[k], header, e.msg);
                if (!header && g) T_CHECK(!strcmp(g->names[0], "C1"), "default names");
                fb_release(g);
                /* text format */
                w.format = "text";
                br_err_clear(&e);
                int rc = io_write_frame(P("f.txt"), f, &w, &e);
                bool has_nl = false;
                for (int64_t i = 0; i < f->rows; i++) has_nl |= f->c[0]->s[i] && strchr(f->c[0]->s[i], '\n');
                if (has_nl) T_CHECK(rc != 0 && strstr(e.msg, "line break"), "text refuses line breaks");
                else {
                    g = io_read_frame(P("f.txt"), NULL, &e);
                    /* text drops empty strings to missing only when they are missing: compare */
                    bool eq = g && g->rows == f->rows;
                    for (int64_t i = 0; eq && i < f->rows; i++)
                        for (int64_t j = 1; eq && j < 4; j++) eq = cell_eq(f, g, i, j);
                    T_CHECK(eq, "text round trip rows %lld: %s", (long long)sizes[k], e.msg);
                    fb_release(g);
                }
                fb_release(f);
            }
    BrErr e = {0};
    /* .mtd content */
    FB *f = mixed_frame(3);
    IoWriteOpts w;
    io_write_opts_init(&w);
    w.format = "csv";
    w.header = true;
    io_write_frame(P("m.csv"), f, &w, &e);
    char *mtd = t_slurp(P("m.csv.mtd"), NULL);
    T_CHECK(mtd && strstr(mtd, "\"data_type\": \"frame\"") && strstr(mtd, "\"schema\": \"STRING,FP64,INT64,BOOLEAN\"") &&
            strstr(mtd, "\"header\": true") && strstr(mtd, "\"rows\": 3"), "frame mtd: %s", mtd ? mtd : "(none)");
    free(mtd);
    fb_release(f);
    /* hand-written files: a header with spaces, CRLF, naStrings in the
     * .mtd, quoted separators, missing values, schema from arguments */
    t_put(P("h.csv"), "id, name,score\r\n1,\"Smith, J\",2.5\r\n2,NA,\r\n3,\"\",7\r\n");
    t_put(P("h.csv.mtd"), "{\"data_type\": \"frame\", \"format\": \"csv\", \"header\": true, \"na.strings\": [\"NA\"]}");
    IoFrameReadOpts o;
    io_frame_read_opts_init(&o);
    o.schema = "int,string,double";
    FB *h = io_read_frame(P("h.csv"), &o, &e);
    T_CHECK(h && h->rows == 3 && h->cols == 3 && !strcmp(h->names[1], " name") && h->c[0]->i[2] == 3 &&
            !strcmp(h->c[1]->s[0], "Smith, J") && !h->c[1]->s[1] && !strcmp(h->c[1]->s[2], "") &&
            h->c[2]->d[0] == 2.5 && isnan(h->c[2]->d[1]) && h->c[2]->d[2] == 7, "hand-written csv: %s", e.msg);
    fb_release(h);
    /* schema in the .mtd; one type for all columns */
    t_put(P("s.csv"), "1;2\n3;4\n");
    t_put(P("s.csv.mtd"), "{\"data_type\": \"frame\", \"format\": \"csv\", \"sep\": \";\", \"schema\": \"INT64\"}");
    h = io_read_frame(P("s.csv"), NULL, &e);
    T_CHECK(h && h->c[0]->type == FB_INT64 && h->c[1]->type == FB_INT64 && h->c[1]->i[1] == 4, "mtd schema: %s", e.msg);
    fb_release(h);
    /* empty types at the schema's end are dropped, as SystemDS's split of
     * the text drops them ("STRING," in its sherlock label encoding's
     * .mtd); an empty type between two others is still an error */
    t_put(P("s.csv.mtd"), "{\"data_type\": \"frame\", \"format\": \"csv\", \"sep\": \";\", \"schema\": \"INT64,FP64,,\"}");
    h = io_read_frame(P("s.csv"), NULL, &e);
    T_CHECK(h && h->c[0]->type == FB_INT64 && h->c[1]->type == FB_FP64 && h->c[1]->d[1] == 4, "schema 'a,b,,': %s",
            e.msg);
    fb_release(h);
    t_put(P("s.csv.mtd"), "{\"data_type\": \"frame\", \"format\": \"csv\", \"sep\": \";\", \"schema\": \"INT64,\"}");
    h = io_read_frame(P("s.csv"), NULL, &e);
    T_CHECK(h && h->c[0]->type == FB_INT64 && h->c[1]->type == FB_INT64, "schema 'a,': %s", e.msg);
    fb_release(h);
    t_put(P("s.csv.mtd"), "{\"data_type\": \"frame\", \"format\": \"csv\", \"sep\": \";\", \"schema\": \",FP64\"}");
    h = io_read_frame(P("s.csv"), NULL, &e);
    T_CHECK(!h && strstr(e.msg, "unknown value type"), "schema ',b': %s", e.msg);
    br_err_clear(&e);
    /* a one-column frame keeps blank lines as missing values */
    t_put(P("one.csv"), "a\n\nb\n");
    h = io_read_frame(P("one.csv"), NULL, &e);
    T_CHECK(h && h->rows == 3 && h->cols == 1 && !h->c[0]->s[1] && !strcmp(h->c[0]->s[2], "b"), "one column");
    fb_release(h);
    /* multi-column frames skip blank lines; short rows are filled */
    t_put(P("b.csv"), "a,b\n\nc\n");
    h = io_read_frame(P("b.csv"), NULL, &e);
    T_CHECK(h && h->rows == 2 && h->cols == 2 && !strcmp(h->c[0]->s[1], "c") && !h->c[1]->s[1], "blank lines, fill");
    fb_release(h);
    /* errors */
    t_put(P("bad.csv"), "1,2\n3,x\n");
    io_frame_read_opts_init(&o);
    o.schema = "int,int";
    T_CHECK(!io_read_frame(P("bad.csv"), &o, &e) && strstr(e.msg, "line 2") && strstr(e.msg, "\"x\""),
            "bad value: %s", e.msg);
    br_err_clear(&e);
    t_put(P("wide.csv"), "1,2\n3,4,5\n");
    T_CHECK(!io_read_frame(P("wide.csv"), NULL, &e) && strstr(e.msg, "dimension") && strstr(e.msg, "line 2"),
            "too many fields: %s", e.msg);
    br_err_clear(&e);
    o.schema = "int,int,int";
    T_CHECK(!io_read_frame(P("bad.csv"), &o, &e) && strstr(e.msg, "dimension"), "schema length: %s", e.msg);
    br_err_clear(&e);
    o.schema = "int,matrix";
    T_CHECK(!io_read_frame(P("bad.csv"), &o, &e) && strstr(e.msg, "matrix"), "unknown type: %s", e.msg);
    br_err_clear(&e);
    T_CHECK(!io_read_frame(P("nope.csv"), NULL, &e) && strstr(e.msg, "not found"), "missing file");
    br_err_clear(&e);
    io_frame_read_opts_init(&o);
    o.rows = 5;
    T_CHECK(!io_read_frame(P("bad.csv"), &o, &e) && strstr(e.msg, "dimension"), "rows mismatch: %s", e.msg);
    br_err_clear(&e);
    t_put(P("mat.csv"), "1,2\n");
    t_put(P("mat.csv.mtd"), "{\"data_type\": \"matrix\", \"format\": \"csv\"}");
    T_CHECK(!io_read_frame(P("mat.csv"), NULL, &e) && strstr(e.msg, "not a frame"), "matrix mtd");
    br_err_clear(&e);
    io_write_opts_init(&w);
    w.format = "libsvm";
    FB *x = fb_new(1, 1, NULL, &e);
    T_CHECK(io_write_frame(P("x.bin"), x, &w, &e) && strstr(e.msg, "libsvm"), "unsupported format");
    br_err_clear(&e);
    /* binary: a round trip keeps cells and names; a cut file is an error */
    w.format = "binary";
    T_CHECK(!fb_set_text(x, 0, 0, "hi", 2, &e) && !fb_set_name(x, 0, "nm", &e), "set");
    T_CHECK(!io_write_frame(P("x.bin"), x, &w, &e), "binary write: %s", e.msg);
    FB *y = io_read_frame(P("x.bin"), NULL, &e);
    T_CHECK(y && y->rows == 1 && y->cols == 1 && !strcmp(y->c[0]->s[0], "hi") && !strcmp(y->names[0], "nm"),
            "binary round trip: %s", e.msg);
    fb_release(y);
    br_err_clear(&e);
    t_put(P("x.bin"), "BRAIDFB1");
    T_CHECK(!io_read_frame(P("x.bin"), NULL, &e) && strstr(e.msg, "corrupt"), "cut binary: %s", e.msg);
    br_err_clear(&e);
    fb_release(x);
}

/* ---- transforms ---- */

#define MID "\xc2\xb7"

/* Reference recode: code of s in first-appearance order of col j. */
static int64_t ref_code(const FB *f, int64_t j, int64_t upto, const char *s)
{
    int64_t code = 0;
    for (int64_t i = 0; i <= upto && i < f->rows; i++) {
        const char *t = f->c[j]->s[i];
        if (!t || !*t) continue;
        bool seen = false;
        for (int64_t k = 0; k < i && !seen; k++) seen = f->c[j]->s[k] && !strcmp(f->c[j]->s[k], t);
        if (seen) continue;
        code++;
        if (!strcmp(t, s)) return code;
    }
    return -1;
}

static void test_transform(void)
{
    BrErr e = {0};
    const char *cells[] = {
        "95141", "west", "1373", "FALSE",
        "91312", "south", "3261", "FALSE",
        "94555", "north", "1835", "TRUE",
        "95141", "east", "2833", "TRUE",
        "96334", "south", "2742", "FALSE",
    };
    FB *f = str_frame(5, 4, cells);
    fb_set_name(f, 0, "zip", &e);
    fb_set_name(f, 1, "district", &e);
    fb_set_name(f, 2, "sqft", &e);
    fb_set_name(f, 3, "view", &e);
    MB *x;
    FB *m;
    /* recode: first-appearance codes, pass-through of sqft */
    T_CHECK(tf_encode(f, "{\"recode\": [\"zip\", \"district\", \"view\"]}", &x, &m, NULL, &e) == 0, "encode: %s", e.msg);
    double want[5][4] = {{1, 1, 1373, 1}, {2, 2, 3261, 1}, {3, 3, 1835, 2}, {1, 4, 2833, 2}, {4, 2, 2742, 1}};
    bool ok = x && x->rows == 5 && x->cols == 4;
    for (int i = 0; ok && i < 5; i++)
        for (int j = 0; ok && j < 4; j++) ok = mb_get(x, i, j) == want[i][j];
    T_CHECK(ok, "recode codes");
    /* the rows in SystemDS's order, its HashMap<String, Integer>'s (as
     * the JDK iterates these keys put in code order: zip 94555, 91312,
     * 96334, 95141; district east, south, north, west; view TRUE, FALSE) */
    T_CHECK(m && m->rows == 4 && m->cols == 4 && !strcmp(m->names[1], "district") &&
            !strcmp(m->c[0]->s[0], "94555" MID "3") && !strcmp(m->c[0]->s[1], "91312" MID "2") &&
            !strcmp(m->c[0]->s[2], "96334" MID "4") && !strcmp(m->c[0]->s[3], "95141" MID "1") &&
            !strcmp(m->c[1]->s[0], "east" MID "4") && !strcmp(m->c[1]->s[3], "west" MID "1") && !m->c[2]->s[0] &&
            !strcmp(m->c[3]->s[0], "TRUE" MID "2") && !strcmp(m->c[3]->s[1], "FALSE" MID "1") && !m->c[3]->s[2],
            "metadata frame");
    /* decode inverts recode; pass-through comes back as FP64 */
    FB *d = tf_decode(x, "{\"recode\": [\"zip\", \"district\", \"view\"]}", m, &e);
    ok = d && d->rows == 5 && d->cols == 4 && d->c[2]->type == FB_FP64 && d->c[0]->type == FB_STRING;
    for (int i = 0; ok && i < 5; i++) {
        ok = !strcmp(d->c[0]->s[i], cells[4 * i]) && !strcmp(d->c[1]->s[i], cells[4 * i + 1]) &&
             d->c[2]->d[i] == atof(cells[4 * i + 2]) && !strcmp(d->c[3]->s[i], cells[4 * i + 3]);
    }
    T_CHECK(ok && !strcmp(d->names[3], "view"), "decode recode: %s", e.msg);
    fb_release(d);
    /* apply on new data with an unseen token */
    const char *cells2[] = {"94555", "east", "1000", "TRUE", "10000", "nowhere", "2000", "FALSE"};
    FB *f2 = str_frame(2, 4, cells2);
    for (int j = 0; j < 4; j++) fb_set_name(f2, j, f->names[j], &e);
    MB *x2 = tf_apply(f2, "{\"recode\": [\"zip\", \"district\", \"view\"]}", m, NULL, NULL, &e);
    T_CHECK(x2 && mb_get(x2, 0, 0) == 3 && mb_get(x2, 0, 1) == 4 && mb_get(x2, 0, 2) == 1000 &&
            isnan(mb_get(x2, 1, 0)) && isnan(mb_get(x2, 1, 1)) && mb_get(x2, 1, 3) == 1, "apply");
    mb_release(x2);
    mb_release(x);
    fb_release(m);
    /* dummycode (implies recode), with ids */
    const char *spec = "{\"ids\": true, \"dummycode\": [2], \"recode\": [1]}";
    T_CHECK(tf_encode(f, spec, &x, &m, NULL, &e) == 0, "dummy encode: %s", e.msg);
    ok = x && x->cols == 1 + 4 + 2;
    for (int i = 0; ok && i < 5; i++) {
        int64_t code = ref_code(f, 1, 4, f->c[1]->s[i]);
        for (int k = 0; k < 4; k++) ok = ok && mb_get(x, i, 1 + k) == (k + 1 == code ? 1 : 0);
        ok = ok && mb_get(x, i, 5) == atof(cells[4 * i + 2]);
    }
    T_CHECK(ok, "dummy coding");
    /* the view column is a non-numeric pass-through column: an error */
    br_err_clear(&e);
    d = tf_decode(x, spec, m, &e);
    T_CHECK(d && !strcmp(d->c[1]->s[3], "east") && !strcmp(d->c[0]->s[4], "96334"), "decode dummy: %s", e.msg);
    MB *cm = tf_colmap(m, spec, &e);
    T_CHECK(cm && cm->rows == 4 && mb_get(cm, 1, 1) == 2 && mb_get(cm, 1, 2) == 5 && mb_get(cm, 3, 1) == 7 &&
            mb_get(cm, 3, 2) == 7, "colmap");
    mb_release(cm);
    fb_release(d);
    mb_release(x);
    fb_release(m);
    T_CHECK(tf_encode(f, "{\"recode\": [\"zip\"]}", &x, &m, NULL, &e) != 0 && strstr(e.msg, "west"),
            "non-numeric pass-through: %s", e.msg);
    br_err_clear(&e);
    /* lenient JSON (bare words), binning, view recoded */
    const char *bspec = "{ids: false, recode: [zip, district, view], bin: [{name: sqft, method: equi-width, numbins: 4}]}";
    T_CHECK(tf_encode(f, bspec, &x, &m, NULL, &e) == 0, "bin encode: %s", e.msg);
    double mn = 1373, mx = 3261, wdt = (mx - mn) / 4;
    ok = x != NULL;
    for (int i = 0; ok && i < 5; i++) {
        double v = atof(cells[4 * i + 2]);
        int64_t ref = 1;
        while (ref < 4 && v > mn + (double)ref * wdt) ref++;
        ok = mb_get(x, i, 2) == (double)ref;
    }
    T_CHECK(ok, "equi-width bins");
    T_CHECK(m && !strcmp(m->c[2]->s[0], "1373.0" MID "1845.0") && !strcmp(m->c[2]->s[3], "2789.0" MID "3261.0"),
            "bin metadata: %s", m && m->c[2]->s[0] ? m->c[2]->s[0] : "(null)");
    d = tf_decode(x, bspec, m, &e);
    T_CHECK(d && d->c[2]->type == FB_FP64 && d->c[2]->d[0] == 1373 + wdt / 2, "bin decode to centres");
    fb_release(d);
    /* apply: values outside [min, max] go to the outer bins (SystemDS) */
    const char *cells3[] = {"95141", "west", "100", "TRUE", "95141", "west", "3261", "TRUE"};
    FB *f3 = str_frame(2, 4, cells3);
    for (int j = 0; j < 4; j++) fb_set_name(f3, j, f->names[j], &e);
    x2 = tf_apply(f3, bspec, m, NULL, NULL, &e);
    T_CHECK(x2 && mb_get(x2, 0, 2) == 1 && mb_get(x2, 1, 2) == 4, "bin apply bounds");
    mb_release(x2);
    fb_release(f3);
    mb_release(x);
    fb_release(m);
    /* a comma before the closing ] or } is dropped, as SystemDS's JSON
     * parser drops it (its imputeFD test builds "recode:[1,2,3,]"); "[,]"
     * has no value and stays an error */
    {
        MB *xa = NULL, *xb = NULL;
        FB *ma = NULL, *mb = NULL;
        T_CHECK(tf_encode(f, "{ids: true, recode: [1, 2]}", &xa, &ma, NULL, &e) == 0, "recode [1, 2]: %s", e.msg);
        T_CHECK(tf_encode(f, "{ids:true, recode:[1,2,] ,}", &xb, &mb, NULL, &e) == 0, "recode [1,2,]: %s", e.msg);
        ok = xa && xb && xa->rows == xb->rows && xa->cols == xb->cols;
        for (int64_t i = 0; ok && i < xa->rows; i++)
            for (int64_t j = 0; ok && j < xa->cols; j++) ok = mb_get(xa, i, j) == mb_get(xb, i, j);
        T_CHECK(ok, "a trailing comma changes the encoding");
        mb_release(xa); mb_release(xb); fb_release(ma); fb_release(mb);
        xa = NULL; ma = NULL;
        T_CHECK(tf_encode(f, "{ids: true, recode: [,]}", &xa, &ma, NULL, &e) != 0 && strstr(e.msg, "JSON"),
                "recode [,]: %s", e.msg);
        br_err_clear(&e);
        mb_release(xa); fb_release(ma);
    }
    /* binned and dummycoded */
    const char *bd = "{recode: [zip, district, view], bin: [{name: sqft, numbins: 2}], dummycode: [sqft]}";
    T_CHECK(tf_encode(f, bd, &x, &m, NULL, &e) == 0 && x->cols == 5 && mb_get(x, 0, 2) == 1 && mb_get(x, 1, 3) == 1,
            "bin + dummycode: %s", e.msg);
    mb_release(x);
    fb_release(m);
    /* imputation and omit */
    const char *cells4[] = {"a", "1", "x", "", "3", "x", "a", "", "y", "b", "8", "", "", "", "z"};
    FB *g = str_frame(5, 3, cells4);
    const char *ispec = "{\"ids\": true, \"recode\": [1, 3], \"impute\": [{\"id\": 1, \"method\": \"global_mode\"},"
                        " {\"id\": 2, \"method\": \"global_mean\"}, {\"id\": 3, \"method\": \"constant\", \"value\": \"x\"}]}";
    T_CHECK(tf_encode(g, ispec, &x, &m, NULL, &e) == 0, "impute encode: %s", e.msg);
    ok = x && x->rows == 5 && mb_get(x, 1, 0) == 1 && mb_get(x, 4, 0) == 1 && mb_get(x, 2, 1) == 4 &&
         mb_get(x, 4, 1) == 4 && mb_get(x, 3, 2) == 1 && mb_get(x, 4, 2) == 3;
    T_CHECK(ok, "imputed values");
    T_CHECK(m && m->mv && !strcmp(m->mv[0], "a") && !strcmp(m->mv[1], "4.0") && !strcmp(m->mv[2], "x"), "impute meta");
    x2 = tf_apply(g, ispec, m, NULL, NULL, &e);
    T_MB_EQ(x2, x, 0, "apply reproduces encode");
    mb_release(x2);
    mb_release(x);
    fb_release(m);
    T_CHECK(tf_encode(g, "{\"ids\": true, \"recode\": [1, 3], \"omit\": [1, 2]}", &x, &m, NULL, &e) == 0 && x->rows == 2 &&
            mb_get(x, 1, 1) == 8 && mb_get(x, 1, 0) == 2, "omit: %s", e.msg);
    mb_release(x);
    fb_release(m);
    fb_release(g);
    /* spec errors */
    T_CHECK(tf_encode(f, "{\"recode\": [\"nope\"]}", &x, &m, NULL, &e) && strstr(e.msg, "nope"), "unknown column");
    br_err_clear(&e);
    T_CHECK(tf_encode(f, "{\"scale\": [\"sqft\"]}", &x, &m, NULL, &e) && strstr(e.msg, "scale"), "unsupported method");
    br_err_clear(&e);
    T_CHECK(tf_encode(f, "[1,2]", &x, &m, NULL, &e) && strstr(e.msg, "JSON"), "not an object");
    br_err_clear(&e);
    T_CHECK(tf_encode(f, "{\"recode\": [\"sqft\"], \"bin\": [{\"name\": \"sqft\"}]}", &x, &m, NULL, &e) &&
            strstr(e.msg, "more than one"), "recode and bin");
    br_err_clear(&e);
    T_CHECK(tf_encode(f, "{\"ids\": true, \"recode\": [1, 2, 4, 9]}", &x, &m, NULL, &e) == 0, "ids past the end are ignored");
    mb_release(x);
    fb_release(m);
    fb_release(f2);
    fb_release(f);
}

/* Random frames: recode/dummycode against the reference, decode round
 * trips, apply == encode, colmap consistent with the widths. */
static void test_transform_random(void)
{
    for (int trial = 0; trial < 40; trial++) {
        BrErr e = {0};
        int64_t rows = (int64_t)(rnd() % 60), cols = 1 + (int64_t)(rnd() % 4);
        FbType *ty = calloc((size_t)cols, sizeof(FbType));
        bool *dc = calloc((size_t)cols, 1);
        for (int64_t j = 0; j < cols; j++) ty[j] = rnd() % 3 == 0 ? FB_FP64 : FB_STRING;
        FB *f = fb_new(rows, cols, ty, &e);
        int64_t k = 1 + (int64_t)(rnd() % 6);
        for (int64_t j = 0; j < cols; j++)
            for (int64_t i = 0; i < rows; i++) {
                char buf[32];
                snprintf(buf, sizeof buf, "t%llu", (unsigned long long)(rnd() % (uint64_t)k));
                if (ty[j] == FB_FP64) f->c[j]->d[i] = (double)(rnd() % 100) / 4;
                else if (rnd() % 9 == 0) set(f, i, j, NULL);
                else set(f, i, j, buf);
            }
        char spec[512] = "{\"ids\": true, \"recode\": [", dspec[128] = "], \"dummycode\": [";
        bool first = true, dfirst = true;
        for (int64_t j = 0; j < cols; j++) {
            if (ty[j] != FB_STRING) continue;
            char b[16];
            snprintf(b, sizeof b, "%s%lld", first ? "" : ",", (long long)j + 1);
            strcat(spec, b);
            first = false;
            if (rnd() % 2) {
                dc[j] = true;
                snprintf(b, sizeof b, "%s%lld", dfirst ? "" : ",", (long long)j + 1);
                strcat(dspec, b);
                dfirst = false;
            }
        }
        strcat(spec, dspec);
        strcat(spec, "]}");
        MB *x;
        FB *m;
        int rc = tf_encode(f, spec, &x, &m, NULL, &e);
        T_CHECK(rc == 0, "random encode %d: %s (%s)", trial, e.msg, spec);
        if (rc) { fb_release(f); free(ty); free(dc); continue; }
        /* reference: walk the output columns */
        bool ok = x->rows == rows;
        int64_t at = 0;
        for (int64_t j = 0; j < cols && ok; j++) {
            int64_t dom = 0;
            for (int64_t i = 0; i < rows; i++) {
                int64_t c = f->c[j]->type == FB_STRING && f->c[j]->s[i] ? ref_code(f, j, i, f->c[j]->s[i]) : 0;
                if (c > dom) dom = c;
            }
            for (int64_t i = 0; i < rows && ok; i++) {
                if (ty[j] == FB_FP64) { ok = mb_get(x, i, at) == f->c[j]->d[i]; continue; }
                const char *s = f->c[j]->s[i];
                int64_t c = s ? ref_code(f, j, i, s) : -1;
                if (!dc[j]) ok = s ? mb_get(x, i, at) == (double)c : isnan(mb_get(x, i, at));
                else
                    for (int64_t q = 0; q < dom && ok; q++) ok = mb_get(x, i, at + q) == (q + 1 == c ? 1.0 : 0.0);
            }
            at += dc[j] ? dom : 1;
        }
        T_CHECK(ok && at == x->cols, "random encode matches the reference (trial %d)", trial);
        MB *x2 = tf_apply(f, spec, m, NULL, NULL, &e);
        T_MB_EQ(x2, x, 0, "random apply == encode (trial %d)", trial);
        FB *d = tf_decode(x, spec, m, &e);
        ok = d && d->rows == rows;
        for (int64_t j = 0; ok && j < cols; j++)
            for (int64_t i = 0; ok && i < rows; i++) {
                if (ty[j] == FB_FP64) ok = d->c[j]->d[i] == f->c[j]->d[i];
                else ok = (!f->c[j]->s[i] && !d->c[j]->s[i]) ||
                          (f->c[j]->s[i] && d->c[j]->s[i] && !strcmp(f->c[j]->s[i], d->c[j]->s[i]));
            }
        T_CHECK(ok, "random decode round trip (trial %d): %s", trial, e.msg);
        MB *cm = tf_colmap(m, spec, &e);
        T_CHECK(cm && cm->rows == cols && (cols == 0 || mb_get(cm, cols - 1, 2) == (double)x->cols), "random colmap");
        /* the metadata survives a csv round trip */
        IoWriteOpts w;
        io_write_opts_init(&w);
        w.format = "csv";
        w.header = true;
        io_write_frame(P("meta.csv"), m, &w, &e);
        FB *m2 = io_read_frame(P("meta.csv"), NULL, &e);
        MB *x3 = m2 ? tf_apply(f, spec, m2, NULL, NULL, &e) : NULL;
        T_MB_EQ(x3, x, 0, "apply with metadata read back from csv (trial %d): %s", trial, e.msg);
        mb_release(x3);
        fb_release(m2);
        mb_release(cm);
        fb_release(d);
        mb_release(x2);
        mb_release(x);
        fb_release(m);
        fb_release(f);
        free(ty);
        free(dc);
    }
}

/* SystemDS's feature hashing and equi-height bins against hand-computed
 * values: Java's "a".hashCode() = 97, "hello" 99162322, "Zürich"
 * -1482116162 (UTF-16 code units), so with K = 10 the codes are 8, 3, 3;
 * equi-height bins of 1..10 in 3 end at the 4th, 7th and 10th value
 * (positions 10/3 and 20/3 are not integers: floor + 1). */
static void test_transform_hash_eqh(void)
{
    BrErr e = {0};
    const char *cells[] = {"a", "1", "hello", "2", "Zürich", "3", "a", "4", "hello", "5",
                           "x", "6", "x", "7", "x", "8", "x", "9", "x", "10"};
    FB *f = str_frame(10, 2, cells);
    MB *x = NULL;
    FB *m = NULL;
    const char *spec = "{ids: true, hash: [1], K: 10, bin: [{id: 2, method: equi-height, numbins: 3}]}";
    T_CHECK(tf_encode(f, spec, &x, &m, NULL, &e) == 0, "hash/equi-height encode: %s", e.msg);
    bool ok = x && mb_get(x, 0, 0) == 8 && mb_get(x, 1, 0) == 3 && mb_get(x, 2, 0) == 3 && mb_get(x, 3, 0) == 8;
    T_CHECK(ok, "feature hash codes");
    double want[10] = {1, 1, 1, 1, 2, 2, 2, 3, 3, 3};
    for (int i = 0; ok && i < 10; i++) ok = mb_get(x, i, 1) == want[i];
    T_CHECK(ok, "equi-height codes");
    T_CHECK(m && !strcmp(m->c[0]->s[0], "10") && !strcmp(m->c[1]->s[0], "1.0" MID "4.0") &&
            !strcmp(m->c[1]->s[2], "7.0" MID "10.0"), "hash/equi-height metadata");
    const char *cells2[] = {"hello", "0", "b", "5", "a", "11"};
    FB *g = str_frame(3, 2, cells2);
    MB *y = m ? tf_apply(g, spec, m, NULL, NULL, &e) : NULL;
    T_CHECK(y && mb_get(y, 0, 0) == 3 && mb_get(y, 1, 0) == 9 && mb_get(y, 2, 0) == 8 && mb_get(y, 0, 1) == 1 &&
            mb_get(y, 1, 1) == 2 && mb_get(y, 2, 1) == 3, "hash/equi-height apply");
    mb_release(y);
    mb_release(x);
    fb_release(m);
    T_CHECK(tf_encode(f, "{ids: true, hash: [1], dummycode: [1], K: 4}", &x, &m, NULL, &e) == 0 && x && x->cols == 5 &&
            mb_get(x, 0, 97 % 4) == 1 && mb_get(x, 0, 4) == 1, "dummycoded hash: %s", e.msg);
    mb_release(x);
    fb_release(m);
    T_CHECK(tf_encode(f, "{ids: true, hash: [1]}", &x, &m, NULL, &e) && strstr(e.msg, "K"), "hash without K");
    br_err_clear(&e);
    fb_release(g);
    fb_release(f);
}

/* word_embedding (SystemDS's ColumnEncoderWordEmbedding): each token's
 * code in the metadata picks a row of the embedding matrix; a token the
 * metadata lacks, or a missing one, gives zeros; the other columns keep
 * their places after the embedding's columns */
static void test_word_embedding(void)
{
    BrErr e = {0};
    const char *meta_cells[] = {"cat" "\xc2\xb7" "2", "x", "dog" "\xc2\xb7" "1", "x", "emu" "\xc2\xb7" "3", "x"};
    const char *data_cells[] = {"dog", "5", "emu", "6", "yak", "7", "", "8", "cat", "9"};
    FB *m = str_frame(3, 2, meta_cells), *f = str_frame(5, 2, data_cells);
    MB *E = mb_dense(3, 4, &e);
    for (int64_t i = 0; i < 3; i++)
        for (int64_t k = 0; k < 4; k++) E->d[i * 4 + k] = 10.0 * (double)(i + 1) + (double)k;
    mb_recount_nnz(E);
    const char *spec = "{ids: true, word_embedding: [1]}";
    MB *x = tf_apply(f, spec, m, E, NULL, &e);
    /* rows: dog -> code 1, emu -> 3, yak -> none, missing -> none, cat -> 2 */
    const int code[] = {1, 3, 0, 0, 2};
    bool ok = x && x->rows == 5 && x->cols == 5;
    for (int64_t i = 0; ok && i < 5; i++) {
        for (int64_t k = 0; ok && k < 4; k++)
            ok = mb_get(x, i, k) == (code[i] ? 10.0 * code[i] + (double)k : 0.0);
        ok = ok && mb_get(x, i, 4) == 5.0 + (double)i;
    }
    T_CHECK(ok, "word embedding rows: %s", e.msg);
    mb_release(x);
    T_CHECK(!tf_apply(f, spec, m, NULL, NULL, &e) && strstr(e.msg, "embedding="), "no embedding: %s", e.msg);
    br_err_clear(&e);
    MB *E2 = mb_dense(2, 4, &e);   /* emu's code 3 has no row */
    T_CHECK(!tf_apply(f, spec, m, E2, NULL, &e) && strstr(e.msg, "no row"), "short embedding: %s", e.msg);
    br_err_clear(&e);
    MB *xo = NULL;
    FB *mo = NULL;
    T_CHECK(tf_encode(f, spec, &xo, &mo, NULL, &e) != 0 && strstr(e.msg, "transformapply"), "encode: %s", e.msg);
    br_err_clear(&e);
    mb_release(xo); fb_release(mo);
    mb_release(E); mb_release(E2); fb_release(m); fb_release(f);
}

/* ---- bag of words ---- */

/* Java's Character class on a few units (values the JDK 17 gives): the
 * tables behind the tokenizer and the map() lambdas. */
static void test_junicode(void)
{
    static const struct { uint32_t c; bool letter; uint32_t lo, up; } ref[] = {
        {'A', true, 'a', 'A'}, {'z', true, 'z', 'Z'}, {'5', false, '5', '5'}, {0xAA, true, 0xAA, 0xAA},
        {0xB5, true, 0xB5, 0x39C}, {0xD7, false, 0xD7, 0xD7}, {0xDF, true, 0xDF, 0xDF}, {0xFF, true, 0xFF, 0x178},
        {0x130, true, 0x69, 0x130}, {0x131, true, 0x131, 0x49}, {0x23A, true, 0x2C65, 0x23A},
        {0x345, false, 0x345, 0x399}, {0x3A3, true, 0x3C3, 0x3A3}, {0x3C2, true, 0x3C2, 0x3A3},
        {0x5B0, false, 0x5B0, 0x5B0}, {0x5D0, true, 0x5D0, 0x5D0}, {0x660, false, 0x660, 0x660},
        {0x93F, false, 0x93F, 0x93F}, {0x915, true, 0x915, 0x915}, {0x1E9E, true, 0xDF, 0x1E9E},
        {0x2160, false, 0x2170, 0x2160}, {0x3042, true, 0x3042, 0x3042}, {0x4E00, true, 0x4E00, 0x4E00},
        {0xD800, false, 0xD800, 0xD800}, {0xFF21, true, 0xFF41, 0xFF21}, {0xFFFD, false, 0xFFFD, 0xFFFD},
        {0x10400, false, 0x10400, 0x10400}};
    for (size_t k = 0; k < sizeof ref / sizeof ref[0]; k++)
        T_CHECK(ju_is_letter(ref[k].c) == ref[k].letter && ju_to_lower(ref[k].c) == ref[k].lo &&
                ju_to_upper(ref[k].c) == ref[k].up, "Java char class of U+%04X", (unsigned)ref[k].c);
}

/* Reference tokens of an ASCII text: maximal runs of letters, lower-cased. */
static int ref_tokens(const char *s, char tok[][16], int max)
{
    int n = 0, l = 0;
    for (const char *p = s;; p++) {
        bool al = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z');
        if (al && l < 15) tok[n][l++] = (char)(*p | 32);
        else if (!al && l) { tok[n][l] = 0; l = 0; if (++n == max) break; }
        if (!*p) break;
    }
    return n;
}

static void test_bag_of_words(void)
{
    BrErr e = {0};
    test_junicode();
    /* SystemDS's example: codes by first appearance (this is the first
     * document ...), counts per row; the metadata rows in the JDK's
     * HashMap order of the nine tokens (the, third, and, document, one,
     * this, is, first, second) */
    const char *cells[] = {"This is the first document", "A", "This document is the second document", "B",
                           "And this is the third one", "A", "Is this the first document?", "C"};
    FB *f = str_frame(4, 2, cells);
    MB *x;
    FB *m;
    const char *spec = "{ids: true, bag_of_words: [1], recode: [2]}";
    T_CHECK(tf_encode(f, spec, &x, &m, NULL, &e) == 0, "bow encode: %s", e.msg);
    static const double want[4][10] = {{1, 1, 1, 1, 1, 0, 0, 0, 0, 1}, {1, 1, 1, 0, 2, 1, 0, 0, 0, 2},
                                       {1, 1, 1, 0, 0, 0, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 0, 0, 0, 0, 3}};
    bool ok = x && x->rows == 4 && x->cols == 10;
    for (int i = 0; ok && i < 4; i++)
        for (int j = 0; ok && j < 10; j++) ok = mb_get(x, i, j) == want[i][j];
    T_CHECK(ok, "bow counts");
    static const char *order[] = {"the" MID "3", "third" MID "8", "and" MID "7", "document" MID "5", "one" MID "9",
                                  "this" MID "1", "is" MID "2", "first" MID "4", "second" MID "6"};
    ok = m && m->rows == 9 && m->cols == 2 && !strcmp(m->c[1]->s[0], "A" MID "1") && !m->c[1]->s[3];
    for (int k = 0; ok && k < 9; k++) ok = !strcmp(m->c[0]->s[k], order[k]);
    T_CHECK(ok, "bow metadata in HashMap order");
    /* apply: the same counts; tokens the dictionary lacks are left out */
    MB *y = tf_apply(f, spec, m, NULL, NULL, &e);
    T_CHECK(y && mb_equal(x, y, 0), "bow apply = encode: %s", e.msg);
    mb_release(y);
    const char *cells2[] = {"THE the Zebra; first!!", "C", "", "A"};
    FB *f2 = str_frame(2, 2, cells2);
    y = tf_apply(f2, spec, m, NULL, NULL, &e);
    T_CHECK(y && y->cols == 10 && mb_get(y, 0, 2) == 2 && mb_get(y, 0, 3) == 1 && mb_get(y, 0, 9) == 3 &&
            y->nnz == 4 && mb_get(y, 1, 9) == 1, "bow apply unknown tokens: %s", e.msg);
    mb_release(y);
    MB *cm = tf_colmap(m, spec, &e);
    T_CHECK(cm && mb_get(cm, 0, 1) == 1 && mb_get(cm, 0, 2) == 9 && mb_get(cm, 1, 1) == 10 && mb_get(cm, 1, 2) == 10,
            "bow colmap: %s", e.msg);
    mb_release(cm);
    T_CHECK(!tf_decode(x, spec, m, &e) && strstr(e.msg, "bag_of_words"), "bow decode refused: %s", e.msg);
    br_err_clear(&e);
    mb_release(x); fb_release(m);
    /* the dictionary is a HashMap<>(0): 3 tokens in a table of 4 (JDK:
     * a, e, c; a recode map's table of 16 gives a, c, e) */
    const char *small[] = {"a e c"};
    FB *fs = str_frame(1, 1, small);
    T_CHECK(tf_encode(fs, "{ids: true, bag_of_words: [1]}", &x, &m, NULL, &e) == 0 && m->rows == 3 &&
            !strcmp(m->c[0]->s[0], "a" MID "1") && !strcmp(m->c[0]->s[1], "e" MID "2") &&
            !strcmp(m->c[0]->s[2], "c" MID "3"), "bow small dictionary order: %s", e.msg);
    mb_release(x); fb_release(m); fb_release(fs);
    /* one first-level encoder per column */
    const char *bad[] = {"{ids: true, bag_of_words: [1], recode: [1]}", "{ids: true, bag_of_words: [1], dummycode: [1]}",
                         "{ids: true, bag_of_words: [1], hash: [1], K: 3}",
                         "{ids: true, bag_of_words: [1], bin: [{id: 1, method: equi-width}]}"};
    for (int k = 0; k < 4; k++) {
        x = NULL; m = NULL;
        T_CHECK(tf_encode(f, bad[k], &x, &m, NULL, &e) != 0 && strstr(e.msg, "bag_of_words"), "bow conflict %d: %s",
                k, e.msg);
        br_err_clear(&e);
        mb_release(x); fb_release(m);
    }
    /* bow with dummycode on another column */
    T_CHECK(tf_encode(f, "{ids: true, bag_of_words: [1], dummycode: [2]}", &x, &m, NULL, &e) == 0 && x->cols == 12 &&
            mb_get(x, 3, 11) == 1 && mb_get(x, 3, 9) == 0, "bow + dummycode: %s", e.msg);
    mb_release(x); fb_release(m);
    fb_release(f); fb_release(f2);
    /* Unicode: Java's letters lower-cased; digits, punctuation, marks and
     * code points past the BMP separate (codes über 1, straße 2, x 3, y 4,
     * naïve 5, 日本語 6, テキスト 7, ab 8, c 9; metadata rows and nnz as
     * the JDK gives them) */
    const char *uc[] = {"\xc3\x9c" "ber stra\xc3\x9f" "e \xc3\x9c" "BER-STRA\xc3\x9f" "E 42x y", "",
                        "na\xc3\xaf" "ve Na\xc3\x8f" "ve", "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xe3\x83\x86\xe3\x82\xad\xe3\x82\xb9\xe3\x83\x88",
                        "ab\xf0\x9f\x98\x80" "c\xcc\x81", NULL};
    f = str_frame(5, 1, uc);
    T_CHECK(tf_encode(f, "{ids: true, bag_of_words: [1]}", &x, &m, NULL, &e) == 0 && x->cols == 9 &&
            mb_get(x, 0, 0) == 2 && mb_get(x, 0, 1) == 2 && mb_get(x, 0, 2) == 1 && mb_get(x, 2, 4) == 2 &&
            mb_get(x, 4, 7) == 1 && mb_get(x, 4, 8) == 1 && x->nnz == 9, "bow unicode: %s", e.msg);
    ok = m && m->rows == 9;
    static const char *uorder[] = {"ab" MID "8", "stra\xc3\x9f" "e" MID "2", "c" MID "9", "na\xc3\xaf" "ve" MID "5",
                                   "\xc3\xbc" "ber" MID "1", "x" MID "3", "y" MID "4",
                                   "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e" MID "6",
                                   "\xe3\x83\x86\xe3\x82\xad\xe3\x82\xb9\xe3\x83\x88" MID "7"};
    for (int k = 0; ok && k < 9; k++) ok = !strcmp(m->c[0]->s[k], uorder[k]);
    T_CHECK(ok, "bow unicode metadata");
    mb_release(x); fb_release(m); fb_release(f);
    /* random texts over a vocabulary (sparse and dense results) against a
     * reference count, with omit on a second column */
    static const char *vocab[] = {"alpha", "Beta", "gamma", "DELTA", "eps", "zeta", "eta", "theta", "iota", "kappa",
                                  "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon"};
    static const char *seps[] = {" ", ", ", "  ", "-", "3", "!? ", "\t"};
    uint64_t st = 12345;
    for (int rep = 0; rep < 12; rep++) {
        int64_t rows = 1 + rep * 7, nv = 3 + rep % 18;
        char (*text)[256] = calloc((size_t)rows, 256);
        const char **cl = calloc((size_t)(2 * rows), sizeof *cl);
        for (int64_t i = 0; i < rows; i++) {
            int nw = (int)((st = st * 6364136223846793005ULL + 1442695040888963407ULL) >> 60) % 9;
            for (int w = 0; w < nw; w++) {
                st = st * 6364136223846793005ULL + 1442695040888963407ULL;
                strcat(text[i], vocab[(st >> 33) % (uint64_t)nv]);
                strcat(text[i], seps[(st >> 20) % 7]);
            }
            cl[2 * i] = text[i];
            cl[2 * i + 1] = (i % 5 == 3) ? "" : "7";
        }
        f = str_frame(rows, 2, cl);
        x = NULL; m = NULL;
        int rc = tf_encode(f, "{ids: true, bag_of_words: [1], omit: [2]}", &x, &m, NULL, &e);
        /* reference: codes by first appearance over the kept rows */
        char dict[32][16];
        int nd = 0, kept = 0;
        ok = rc == 0;
        double *cnt = calloc((size_t)rows * 32, sizeof(double));
        for (int64_t i = 0; ok && i < rows; i++) {
            if (i % 5 == 3) continue;
            char tk[16][16];
            int nt = ref_tokens(text[i], tk, 16);
            for (int q = 0; q < nt; q++) {
                int c = 0;
                while (c < nd && strcmp(dict[c], tk[q])) c++;
                if (c == nd) strcpy(dict[nd++], tk[q]);
                cnt[kept * 32 + c]++;
            }
            kept++;
        }
        ok = ok && x->rows == kept && x->cols == nd + 1 && m->rows == nd;
        for (int64_t i = 0; ok && i < kept; i++)
            for (int c = 0; ok && c < nd; c++) ok = mb_get(x, i, c) == cnt[i * 32 + c];
        T_CHECK(ok, "bow random %d (%lld rows, %d tokens): %s", rep, (long long)rows, nd, e.msg);
        if (ok) {
            MB *ya = tf_apply(f, "{ids: true, bag_of_words: [1], omit: [2]}", m, NULL, NULL, &e);
            T_CHECK(ya && mb_equal(ya, x, 0), "bow random apply %d: %s", rep, e.msg);
            mb_release(ya);
        }
        br_err_clear(&e);
        mb_release(x); fb_release(m); fb_release(f);
        free(cnt); free(text); free(cl);
    }
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/braid_test_frame_XXXXXX");
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 2; }
    test_cells();
    test_matrix();
    test_reorg();
    test_files();
    test_transform();
    test_transform_random();
    test_transform_hash_eqh();
    test_word_embedding();
    test_bag_of_words();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) {}
    return t_done("test_frame");
}
