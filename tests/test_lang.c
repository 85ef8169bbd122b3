/* test_lang.c: the DML front end: arena, diagnostics, lexer, parser
 * (precedence, literals, statements, recovery), $-substitution, loader
 * (source, builtin library, lang_find_func), validation, the conformance
 * cases and repository scripts, and robustness against truncated, mutated
 * and deeply nested input. */
#include <ctype.h>
#include <math.h>
#include <glob.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "t.h"
#include "base/arena.h"
#include "base/diag.h"
#include "lang/dump.h"
#include "lang/lex.h"
#include "lang/load.h"
#include "lang/parse.h"

/* ---- helpers ---- */

/* Everything diag_print writes, malloc'ed. */
static char *diag_text(const Diag *d)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    diag_print(d, f);
    fclose(f);
    return buf;
}

static char *expr_text(const Expr *e)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    lang_dump_expr(f, e);
    fclose(f);
    return buf;
}

static char *block_text(const Block *b)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    lang_dump_block(f, b, 0);
    fclose(f);
    return buf;
}

/* Parses an expression and compares its dump with want. */
static void check_expr(const char *src, const char *want)
{
    Arena *a = arena_new();
    Diag *d = diag_new();
    Expr *e = parse_expression(a, d, src, NULL);
    char *got = e ? expr_text(e) : NULL;
    T_CHECK(got && strcmp(got, want) == 0, "expr '%s': got %s, want %s", src,
            got ? got : "(error)", want);
    if (!e) {
        char *t = diag_text(d);
        fprintf(stderr, "%s", t);
        free(t);
    }
    free(got);
    diag_free(d);
    arena_free(a);
}

static void check_expr_error(const char *src)
{
    Arena *a = arena_new();
    Diag *d = diag_new();
    Expr *e = parse_expression(a, d, src, NULL);
    T_CHECK(!e && diag_nerrors(d) > 0, "expr '%s' should be an error", src);
    diag_free(d);
    arena_free(a);
}

/* Loads a script from a string with optional args; returns the program
 * (NULL on errors) and leaves the diagnostics text in *msgs if asked. */
static Program *load(const char *src, int nargs, const char *const *names,
                     const char *const *vals, const char *bdir, Diag *d)
{
    LangOptions o = { .builtin_dir = bdir, .arg_names = names, .arg_values = vals, .nargs = nargs };
    return lang_load_string(src, "t.dml", &o, d);
}

/* Loads src expecting success (no errors); returns the main dump. */
static char *load_ok(const char *src)
{
    Diag *d = diag_new();
    Program *p = load(src, 0, NULL, NULL, NULL, d);
    char *txt = diag_text(d);
    T_CHECK(p != NULL, "should load:\n%s\n%s", src, txt);
    char *dump = p ? block_text(lang_main(p)) : NULL;
    free(txt);
    lang_program_free(p);
    diag_free(d);
    return dump;
}

/* Loads src expecting failure; every substring in want (NULL-terminated)
 * must occur in the messages, and at least nmin errors. */
static void load_err(const char *src, int nmin, const char *const *want)
{
    Diag *d = diag_new();
    Program *p = load(src, 0, NULL, NULL, NULL, d);
    char *txt = diag_text(d);
    T_CHECK(p == NULL && diag_nerrors(d) >= nmin, "should fail with >= %d errors:\n%s\n%s",
            nmin, src, txt);
    for (int i = 0; want && want[i]; i++)
        T_CHECK(txt && strstr(txt, want[i]), "message '%s' missing for:\n%s\ngot:\n%s",
                want[i], src, txt);
    free(txt);
    lang_program_free(p);
    diag_free(d);
}

/* Loads src expecting success with at least one warning containing w. */
static void load_warn(const char *src, const char *w)
{
    Diag *d = diag_new();
    Program *p = load(src, 0, NULL, NULL, NULL, d);
    char *txt = diag_text(d);
    T_CHECK(p && diag_nwarnings(d) > 0 && strstr(txt, w), "expected warning '%s':\n%s\n%s",
            w, src, txt);
    free(txt);
    lang_program_free(p);
    diag_free(d);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return;
    fputs(text, f);
    fclose(f);
}


/* ---- arena and diag ---- */

static void test_arena(void)
{
    Arena *a = arena_new();
    bool ok = true;
    for (int i = 0; i < 5000; i++) {
        size_t n = (size_t)(i % 97) + 1;
        unsigned char *p = arena_alloc(a, n);
        if (!p || ((uintptr_t)p & 15)) ok = false;
        for (size_t k = 0; p && k < n; k++)
            if (p[k]) ok = false;
        if (p) memset(p, 0xab, n);
    }
    T_CHECK(ok, "arena: aligned zeroed small allocations");
    unsigned char *big = arena_alloc(a, 1 << 20);
    bool z = big != NULL;
    for (int k = 0; z && k < (1 << 20); k += 4096)
        if (big[k]) z = false;
    T_CHECK(z && ((uintptr_t)big & 15) == 0, "arena: big allocation");
    T_CHECK(arena_alloc(a, 0) != NULL, "arena: zero-size allocation");
    char *s = arena_strdup(a, "hello");
    char *s2 = arena_strndup(a, "hello world", 5);
    T_CHECK(s && s2 && !strcmp(s, "hello") && !strcmp(s2, "hello"), "arena strings");
    T_CHECK(arena_used(a) > (1 << 20), "arena_used");
    arena_free(a);
    arena_free(NULL);
}

static void test_diag(void)
{
    Diag *d = diag_new();
    diag_add_source(d, "f.dml", "x = 1\n\ty = (2\nz = 3\n");
    Span s = { "f.dml", 2, 7 };
    diag_error(d, s, "expected '%s'", ")");
    Span w = { "g.dml", 4, 1 };
    diag_warning(d, w, "something odd");
    T_CHECK(diag_nerrors(d) == 1 && diag_nwarnings(d) == 1, "diag counts");
    char *t = diag_text(d);
    T_CHECK(strstr(t, "f.dml:2:7: error: expected ')'\n    \ty = (2\n    \t     ^\n") != NULL,
            "diag excerpt and caret:\n%s", t);
    T_CHECK(strstr(t, "g.dml:4:1: warning: something odd\n") != NULL, "diag warning:\n%s", t);
    T_CHECK(diag_first_message(d) && !strcmp(diag_first_message(d), "f.dml:2:7: expected ')'"),
            "diag_first_message: %s", diag_first_message(d));
    free(t);
    for (int i = 0; i < 50; i++) diag_error(d, s, "e%d", i);
    T_CHECK(diag_nerrors(d) == 51, "diag counts beyond the cap");
    t = diag_text(d);
    T_CHECK(strstr(t, "31 more errors not shown") != NULL, "diag cap note");
    free(t);
    diag_free(d);
    Diag *e = diag_new();
    T_CHECK(diag_first_message(e) == NULL, "no first message");
    Span none = { NULL, 0, 0 };
    diag_error(e, none, "plain");
    t = diag_text(e);
    T_CHECK(!strcmp(t, "error: plain\n"), "diag without position: %s", t);
    free(t);
    diag_free(e);
}

/* ---- lexer ---- */

static void test_lex(void)
{
    Arena *a = arena_new();
    Diag *d = diag_new();
    const char *src =
        "x1 <- 42 + 42L * 1. / .5 ^ 1e-6 - 2E+3 # comment\n"
        "/* block\n comment */ s = 'a\\tb\\'c' + \"d\\\"e\\\\\" %*% %/% %% $out $1\n"
        "ns::f(as.scalar(y)) <= >= == != ! & && | || += [ ] { } ; : TRUE FALSE\n"
        "if else for parfor while function return 99999999999999999999";
    int n;
    Token *t = lex_tokens(a, d, "lex", src, strlen(src), &n);
    TokKind want[] = {
        TK_IDENT, TK_LARROW, TK_INT, TK_PLUS, TK_INT, TK_STAR, TK_DOUBLE, TK_SLASH,
        TK_DOUBLE, TK_CARET, TK_DOUBLE, TK_MINUS, TK_DOUBLE,
        TK_IDENT, TK_ASSIGN, TK_STRING, TK_PLUS, TK_STRING, TK_MATMUL, TK_INTDIV, TK_MOD,
        TK_ARG, TK_ARG,
        TK_IDENT, TK_LPAREN, TK_IDENT, TK_LPAREN, TK_IDENT, TK_RPAREN, TK_RPAREN,
        TK_LE, TK_GE, TK_EQ, TK_NE, TK_NOT, TK_AND, TK_ANDAND, TK_OR, TK_OROR, TK_PLUSEQ,
        TK_LBRACK, TK_RBRACK, TK_LBRACE, TK_RBRACE, TK_SEMI, TK_COLON, TK_TRUE, TK_FALSE,
        TK_IF, TK_ELSE, TK_FOR, TK_PARFOR, TK_WHILE, TK_FUNCTION, TK_RETURN, TK_DOUBLE,
        TK_EOF,
    };
    int nw = (int)(sizeof want / sizeof want[0]);
    T_CHECK(t && n == nw && diag_nerrors(d) == 0, "lex: %d tokens (want %d), %d errors", n, nw,
            diag_nerrors(d));
    for (int i = 0; t && i < n && i < nw; i++)
        T_CHECK(t[i].kind == want[i], "lex token %d: kind %s, want %s", i,
                lex_kind_name(t[i].kind), lex_kind_name(want[i]));
    if (t && n == nw) {
        T_CHECK(!strcmp(t[0].text, "x1") && t[0].line == 1 && t[0].col == 1, "ident x1");
        T_CHECK(t[2].ival == 42 && t[2].col == 7 && t[4].ival == 42, "ints");
        T_CHECK(t[6].dval == 1.0 && t[8].dval == 0.5 && t[10].dval == 1e-6 &&
                t[12].dval == 2000.0, "doubles");
        T_CHECK(!strcmp(t[15].text, "a\tb'c") && !strcmp(t[17].text, "d\"e\\"), "string escapes");
        T_CHECK(t[15].line == 3 && t[15].col == 17, "position after block comment: %d:%d",
                t[15].line, t[15].col);
        T_CHECK(!strcmp(t[21].text, "out") && !strcmp(t[22].text, "1"), "$ args");
        T_CHECK(!strcmp(t[23].text, "ns::f") && !strcmp(t[25].text, "as.scalar"), "ns and dots");
        T_CHECK(t[55].dval == 1e20, "huge integer becomes a double");
    }
    free(t);
    /* lexical errors */
    const char *bad = "x = 1 @ 2\ny = 'open";
    t = lex_tokens(a, d, "bad", bad, strlen(bad), &n);
    T_CHECK(diag_nerrors(d) == 1, "lex errors: %d", diag_nerrors(d));
    char *txt = diag_text(d);
    T_CHECK(strstr(txt, "bad:1:7: warning: unexpected character '@' ignored") &&
            strstr(txt, "bad:2:5: error: unterminated string"), "lex error messages:\n%s", txt);
    free(txt);
    free(t);
    diag_free(d);
    arena_free(a);
}

/* ---- expressions ---- */

static void test_precedence(void)
{
    check_expr("-2^2", "(neg (^ 2 2))");
    check_expr("2^3^2", "(^ 2 (^ 3 2))");
    check_expr("(-2)^2", "(^ (neg 2) 2)");
    check_expr("-x^2", "(neg (^ x 2))");
    check_expr("2^-1", "(^ 2 (neg 1))");
    check_expr("2 * -3", "(* 2 (neg 3))");
    check_expr("- -x", "(neg (neg x))");
    check_expr("+x", "x");
    check_expr("a %*% b %/% c", "(%/% (%*% a b) c)");
    check_expr("a %/% b %*% c", "(%/% a (%*% b c))");
    check_expr("a %% b %*% c", "(%% a (%*% b c))");
    check_expr("-a %*% b", "(%*% (neg a) b)");
    check_expr("a * b %% c", "(* a (%% b c))");
    check_expr("17 %% 5 %% 3", "(%% (%% 17 5) 3)");
    check_expr("a + b * c - d", "(- (+ a (* b c)) d)");
    check_expr("a - b - c", "(- (- a b) c)");
    check_expr("a / b / c", "(/ (/ a b) c)");
    check_expr("a < b < c", "(< (< a b) c)");
    check_expr("a + 1 >= b * 2", "(>= (+ a 1) (* b 2))");
    check_expr("!a == b", "(! (== a b))");
    check_expr("!2 > 3", "(! (> 2 3))");
    check_expr("!a & b", "(& (! a) b)");
    check_expr("a & !b | c", "(| (& a (! b)) c)");
    check_expr("a == !b", "(== a (! b))");
    check_expr("!!a", "(! (! a))");
    check_expr("a | b & c", "(| a (& b c))");
    check_expr("a & b | c & d", "(| (& a b) (& c d))");
    check_expr("a && b || c", "(| (& a b) c)");
    check_expr("(a + b) * c", "(* (+ a b) c)");
    check_expr("t(X) %*% X %*% v", "(%*% (%*% (t X) X) v)");
    check_expr("x - 1 + -2", "(+ (- x 1) (neg 2))");
}

static void test_literals_and_forms(void)
{
    check_expr("42", "42");
    check_expr("42L", "42");
    check_expr("1.", "1.0");
    check_expr(".5", "0.5");
    check_expr("1e-6", "1e-06");
    check_expr("2E+3", "2000.0");
    check_expr("1.5e3 + 2E-1", "(+ 1500.0 0.2)");
    check_expr("TRUE & FALSE", "(& TRUE FALSE)");
    check_expr("\"a\\tb\"", "\"a\\tb\"");
    check_expr("f()", "(f)");
    check_expr("f(x, k=3, index.return=TRUE)", "(f x k=3 index.return=TRUE)");
    check_expr("ns::f(1)", "(ns::f 1)");
    check_expr("as.scalar(X[1,1])", "(as.scalar (idx X 1 1))");
    check_expr("X[1:n-1, ]", "(idx X (: 1 (- n 1)) _)");
    check_expr("X[, (v-1)*3+1:v*3]", "(idx X _ (: (+ (* (- v 1) 3) 1) (* v 3)))");
    check_expr("X[,]", "(idx X _ _)");
    check_expr("X[i,]", "(idx X i _)");
    check_expr("X[a:b, c:d]", "(idx X (: a b) (: c d))");
    check_expr("L[\"name\"]", "(idx L \"name\")");
    check_expr("L[2:3]", "(idx L (: 2 3))");
    check_expr("L[i]", "(idx L i)");
    check_expr("X[i+1, j*2-1]", "(idx X (+ i 1) (- (* j 2) 1))");
    check_expr("pi", "pi");  /* the validator turns it into a literal */
    check_expr_error("'a' 'b'");
    check_expr_error("1 +");
    check_expr_error("f(1,)");
    check_expr_error("X[1:]");
    check_expr_error("(1");
    check_expr_error("ns::x");
    check_expr_error("ns::X[1]");
    check_expr_error("$undefined_arg");
}

/* ---- statements ---- */

static void test_statements(void)
{
    char *s = load_ok(
        "x = 1; y <- 2;;\n"
        "x += 3\n"
        "X = matrix(0, rows=3, cols=3)\n"
        "X[1,2] = 5\n"
        "X[2,] = matrix(1, rows=1, cols=3)\n"
        "X[, 3] = matrix(2, rows=3, cols=1)\n"
        "X[1:2, 2:3] = matrix(3, rows=2, cols=2)\n"
        "X[,] = X\n"
        "if (x > 1) y = 1 else y = 2\n"
        "if (x > 1) { y = 3 } else if (x < 0) { y = 4 } else { y = 5 }\n"
        "for (i in 1:10) x = x + i\n"
        "for (i in seq(10, 1, -2)) { x = x - i }\n"
        "for (i in seq(1, 5)) { x = x - i }\n"
        "parfor (i in 1:3, check=0, mode=LOCAL) { X[i,1] = i }\n"
        "while (x > 0) { x = x - 1 }\n"
        "print(x)\n"
        "{ z = 1 }\n"
        "[Q, R] = qr(X)\n");
    const char *want =
        "x = 1\n"
        "y = 2\n"
        "x += 3\n"
        "X = (matrix 0 rows=3 cols=3)\n"
        "(idx X 1 2) = 5\n"
        "(idx X 2 _) = (matrix 1 rows=1 cols=3)\n"
        "(idx X _ 3) = (matrix 2 rows=3 cols=1)\n"
        "(idx X (: 1 2) (: 2 3)) = (matrix 3 rows=2 cols=2)\n"
        "(idx X _ _) = X\n"
        "if (> x 1)\n  y = 1\nelse\n  y = 2\nend\n"
        "if (> x 1)\n  y = 3\nelse\n  if (< x 0)\n    y = 4\n  else\n    y = 5\n  end\nend\n"
        "for i in 1 : 10\n  x = (+ x i)\nend\n"
        "for i in 10 : 1 by (neg 2)\n  x = (- x i)\nend\n"
        "for i in 1 : 5\n  x = (- x i)\nend\n"
        "parfor i in 1 : 3, check=0, mode=\"LOCAL\"\n  (idx X i 1) = i\nend\n"
        "while (> x 0)\n  x = (- x 1)\nend\n"
        "(print x)\n"
        "z = 1\n"
        "[Q, R] = (qr X)\n";
    T_CHECK(s && !strcmp(s, want), "statements dump:\n%s", s ? s : "(null)");
    free(s);

    /* functions: types, defaults, outputs, call before definition */
    Diag *d = diag_new();
    Program *p = load(
        "r = f(matrix(1, rows=2, cols=2), 3)\n"
        "[a, b] = g(2)\n"
        "f = function(Matrix[Double] X, Integer k = 10, boolean verbose = FALSE)\n"
        "  return (Matrix[Double] B)\n"
        "{\n  B = X * k\n}\n"
        "g <- function(int n) return (frame[unknown] F, list[Unknown] L, Double s) {\n"
        "  F = read(\"x.csv\", data_type=\"frame\"); L = list(n); s = 1.5\n}\n"
        "h = function() { print(\"h\") }\n"
        "h()\n",
        0, NULL, NULL, NULL, d);
    T_CHECK(p && lang_nfuncs(p) == 3, "functions load (%d)", p ? lang_nfuncs(p) : -1);
    if (p && lang_nfuncs(p) == 3) {
        Func *f = lang_func(p, 0), *g = lang_func(p, 1), *h = lang_func(p, 2);
        T_CHECK(!strcmp(f->name, "f") && f->nin == 3 && f->nout == 1 && !strcmp(f->ns, "") &&
                f->in[0].dt == DT_MATRIX && f->in[0].vt == VT_DOUBLE && f->in[1].dt == DT_SCALAR &&
                f->in[1].vt == VT_INT && f->in[1].deflt && f->in[2].vt == VT_BOOL &&
                f->out[0].dt == DT_MATRIX && !f->builtin_lib, "f signature");
        T_CHECK(g->nin == 1 && g->in[0].vt == VT_INT && g->nout == 3 && g->out[0].dt == DT_FRAME &&
                g->out[1].dt == DT_LIST && g->out[2].vt == VT_DOUBLE, "g signature");
        T_CHECK(h->nin == 0 && h->nout == 0, "h signature");
        const Block *m = lang_main(p);
        T_CHECK(m->n == 3 && m->stmts[0]->assign.value->call.func == f &&
                m->stmts[1]->massign.call->call.func == g &&
                m->stmts[2]->expr.e->call.func == h, "calls resolved to functions");
        T_CHECK(m->stmts[0]->assign.value->call.args[0].value->call.builtin &&
                m->stmts[0]->assign.value->call.args[0].value->call.builtin->id == BI_MATRIX,
                "builtin resolved");
        T_CHECK(m->stmts[1]->span.line == 2 && m->stmts[1]->span.col == 1 &&
                m->stmts[0]->assign.value->span.col == 5, "spans");
    }
    lang_program_free(p);
    diag_free(d);

    /* a function that shadows a builtin; pi, Inf and NaN */
    d = diag_new();
    p = load("sigmoid = function(Double x) return (Double y) { y = 2 * x }\n"
             "a = sigmoid(1)\nb = pi\nc = -Inf\nd = NaN\n"
             "pi = 3\ne = pi\n",
             0, NULL, NULL, NULL, d);
    T_CHECK(p != NULL, "shadowing loads");
    if (p) {
        const Block *m = lang_main(p);
        T_CHECK(m->stmts[0]->assign.value->call.func && !m->stmts[0]->assign.value->call.builtin,
                "user sigmoid shadows the builtin");
        T_CHECK(m->stmts[1]->assign.value->kind == EX_DOUBLE &&
                m->stmts[1]->assign.value->dval > 3.14159 &&
                m->stmts[1]->assign.value->dval < 3.1416, "pi constant");
        T_CHECK(m->stmts[2]->assign.value->unary.a->kind == EX_DOUBLE &&
                isinf(m->stmts[2]->assign.value->unary.a->dval), "Inf constant");
        T_CHECK(m->stmts[3]->assign.value->kind == EX_DOUBLE &&
                isnan(m->stmts[3]->assign.value->dval), "NaN constant");
        T_CHECK(m->stmts[5]->assign.value->kind == EX_IDENT, "assigned pi stays a variable");
    }
    lang_program_free(p);
    diag_free(d);

    /* a multi-assignment after a line ending in an identifier */
    s = load_ok("A = matrix(1, rows=2, cols=2)\nB = A\n[Q, R] = qr(B)\n");
    T_CHECK(s && strstr(s, "B = A\n[Q, R] = (qr B)\n"), "newline before [ ends the statement:\n%s", s);
    free(s);
}

/* ---- $-arguments and ifdef ---- */

static void test_args(void)
{
    const char *names[] = { "b", "i", "d", "s", "neg", "1" };
    const char *vals[] = { "TRUE", "42", "2.5", "hello", "-7", "/tmp/x" };
    Diag *d = diag_new();
    Program *p = load("a1 = $b\na2 = $i\na3 = $d\na4 = $s\na5 = $neg\na6 = $1\n"
                      "a7 = ifdef($i, 0)\na8 = ifdef($missing, 7 + 1)\n"
                      "a9 = ifdef($s, \"x\") + \"!\"\n",
                      6, names, vals, NULL, d);
    T_CHECK(p != NULL, "args load");
    if (p) {
        char *t = block_text(lang_main(p));
        const char *want = "a1 = TRUE\na2 = 42\na3 = 2.5\na4 = \"hello\"\na5 = -7\n"
                           "a6 = \"/tmp/x\"\na7 = 42\na8 = (+ 7 1)\na9 = (+ \"hello\" \"!\")\n";
        T_CHECK(!strcmp(t, want), "args dump:\n%s", t);
        const Block *m = lang_main(p);
        T_CHECK(m->stmts[0]->assign.value->kind == EX_BOOL && m->stmts[1]->assign.value->kind == EX_INT &&
                m->stmts[2]->assign.value->kind == EX_DOUBLE &&
                m->stmts[3]->assign.value->kind == EX_STRING &&
                m->stmts[1]->assign.value->span.line == 2 && m->stmts[1]->assign.value->span.col == 6,
                "arg literal kinds and span");
        free(t);
    }
    lang_program_free(p);
    diag_free(d);
    /* unset $x outside ifdef: an error at its position; several reported */
    d = diag_new();
    p = load("x = 1\ny = $nope + 1\nz = $other\n", 0, NULL, NULL, NULL, d);
    char *t = diag_text(d);
    T_CHECK(!p && diag_nerrors(d) == 2 && strstr(t, "t.dml:2:5:") && strstr(t, "'$nope'") &&
            strstr(t, "t.dml:3:5:"), "unset args:\n%s", t);
    free(t);
    diag_free(d);
    const char *w1[] = { "ifdef expects a command-line argument", NULL };
    load_err("x = ifdef(y, 1)\n", 1, w1);
}

/* ---- errors and recovery ---- */

static void test_syntax_errors(void)
{
    const char *w1[] = { "t.dml:2:", "t.dml:4:", "t.dml:6:", NULL };
    load_err("a = 1\nb = (a + 2\nc = 3\nd = * 4\ne = 5\nf = max(1,, 2)\ng = 6\n", 3, w1);
    const char *w2[] = { "t.dml:3:13:", "expected ',' or ')'", NULL };
    load_err("# c\nx = 1\ny = max(x, 2;\nprint(y)\n", 1, w2);
    /* a missing ')' at the end of a line is reported on that line */
    const char *w3[] = { "t.dml:2:13:", NULL };
    load_err("x = 1\ny = max(x, 2\nprint(y)\n", 1, w3);
    const char *w4[] = { "t.dml:2:7:", "opened at line 1", NULL };
    load_err("if (TRUE) {\n x = 1\n", 1, w4);
    const char *w5[] = { "unexpected '}'", NULL };
    load_err("x = 1\n}\ny = 2\n", 1, w5);
    const char *w6[] = { "unknown parfor option 'foo'", "t.dml:1:19:", NULL };
    load_err("parfor (i in 1:3, foo=1) { x = i }\n", 1, w6);
    const char *w7[] = { "must be defined at the top level", NULL };
    load_err("if (TRUE) {\n  f = function(Double x) return (Double y) { y = x }\n}\n", 1, w7);
    const char *w8[] = { "expected a range", NULL };
    load_err("for (i in 5) { x = i }\n", 1, w8);
    const char *w9[] = { "needs a function call", NULL };
    load_err("[a, b] = 3\n", 1, w9);
    const char *w10[] = { "t.dml:2:2:", "expected '='", NULL };
    load_err("x = 1\nx\n", 1, w10);
    const char *w11[] = { "unknown data type 'Matrx'", NULL };
    load_err("f = function(Matrx[Double] X) return (Double y) { y = 1 }\n", 1, w11);
    const char *w12[] = { "outputs cannot have default values", NULL };
    load_err("f = function(Double x) return (Double y = 1) { y = x }\n", 1, w12);
    const char *w13[] = { "expected 'in'", NULL };
    load_err("for (i from 1:3) { }\n", 1, w13);
    const char *w14[] = { "else", NULL };
    load_err("x = 1\nelse x = 2\n", 1, w14);
    load_err("x = 1 +\n", 1, NULL);
    load_err("x = (1 + 2\ny = 3\nz = (4\n", 2, NULL);
    /* errors in nested blocks recover inside the block */
    const char *w15[] = { "t.dml:2:", "t.dml:4:", NULL };
    load_err("for (i in 1:2) {\n  x = (i\n  y = 2\n  z = ]\n}\nw = 1\n", 2, w15);
}

static void test_validation(void)
{
    const char *w1[] = { "t.dml:3:9: error: undefined variable 'notDefined'", NULL };
    load_err("a = 5\nb = a + 1\nc = b * notDefined\n", 1, w1);
    /* several semantic errors in one run */
    const char *w2[] = { "undefined variable 'u1'", "unknown function 'nosuchfn'",
                         "undefined variable 'u2'", NULL };
    load_err("x = u1 + 1\ny = nosuchfn(x)\nz = u2\n", 3, w2);
    /* assigned in one branch only: possibly defined afterwards */
    free(load_ok("a = 1\nif (a > 0) { z = 1 }\nprint(z)\n"));
    /* the other branch does not see it */
    const char *w3[] = { "undefined variable 'z'", NULL };
    load_err("a = 1\nif (a > 0) { z = 1 } else { print(z) }\n", 1, w3);
    /* loop-carried: a warning */
    load_warn("s = 0\nfor (i in 1:3) {\n  if (i > 1) { s = s + prev }\n  prev = i\n}\n",
              "'prev' may be used before it is assigned");
    /* a while condition runs before the body */
    const char *w3b[] = { "undefined variable 'done'", NULL };
    load_err("while (!done) { done = TRUE }\n", 1, w3b);
    free(load_ok("done = FALSE\nwhile (!done) { done = TRUE }\n"));
    /* predefined variables (embedding API inputs) */
    {
        const char *pre[] = { "X", "k" };
        LangOptions o = { .predefined = pre, .npredefined = 2 };
        Diag *d = diag_new();
        Program *p = lang_load_string("Y = X * k\n", "t.dml", &o, d);
        T_CHECK(p != NULL, "predefined variables are defined");
        lang_program_free(p);
        diag_free(d);
        const char *w[] = { "undefined variable 'X'", NULL };
        load_err("Y = X * 2\n", 1, w);
    }
    /* loop variable defined inside and after */
    free(load_ok("for (i in 1:3) { x = i }\nprint(i)\n"));
    /* indexed assignment and += need the variable */
    const char *w4[] = { "undefined variable 'X'", NULL };
    load_err("X[1,1] = 3\n", 1, w4);
    const char *w5[] = { "undefined variable 'acc'", NULL };
    load_err("acc += 3\n", 1, w5);
    /* functions do not see the caller's variables; inputs are defined */
    const char *w6[] = { "undefined variable 'g'", NULL };
    load_err("g = 1\nf = function(Double x) return (Double y) { y = x + g }\nz = f(1)\n", 1, w6);
    load_warn("f = function(Double x) return (Double y, Double w) { y = x }\n[a, b] = f(1)\n",
              "output 'w' of function 'f' is never assigned");
    /* user function arguments */
    const char *fdef = "f = function(Matrix[Double] X, Double a = 2, Double b = 1) "
                       "return (Matrix[Double] Y) { Y = a * X + b }\n"
                       "M = matrix(1, rows=2, cols=2)\n";
    char buf[1024];
    snprintf(buf, sizeof buf, "%sY = f(M, 1, 2, 3)\n", fdef);
    const char *w7[] = { "too many arguments in the call of function 'f' (it takes 3)", NULL };
    load_err(buf, 1, w7);
    snprintf(buf, sizeof buf, "%sY = f(M, c=3)\n", fdef);
    const char *w8[] = { "function 'f' has no parameter named 'c'", NULL };
    load_err(buf, 1, w8);
    snprintf(buf, sizeof buf, "%sY = f(a=3)\n", fdef);
    const char *w9[] = { "missing argument 'X' in the call of function 'f'", NULL };
    load_err(buf, 1, w9);
    /* as SystemDS's nn scripts write it: a warning, the next parameter */
    snprintf(buf, sizeof buf, "%sY = f(X=M, 3)\n", fdef);
    load_warn(buf, "positional argument after named arguments");
    snprintf(buf, sizeof buf, "%sY = f(X=M, a=1, 2, 3)\n", fdef);
    const char *w10[] = { "too many arguments in the call of function 'f' (it takes 3)", NULL };
    load_err(buf, 1, w10);
    const char *w10b[] = { "positional argument after named arguments in the call of builtin 'seq'", NULL };
    load_err("s = seq(from=1, 3)\n", 1, w10b);
    const char *w10d[] = { "readMM() sets the format itself; use read() to give format=", NULL };
    load_err("A = readMM(\"x.mtx\", format=\"csv\")\n", 1, w10d);
    const char *w10c[] = { "'federated' is not supported by braid: it needs SystemDS's federated workers", NULL };
    load_err("X = federated(addresses=list(\"h:1/X\"), ranges=list(list(0, 0), list(2, 2)))\n", 1, w10c);
    snprintf(buf, sizeof buf, "%sY = f(M, X=M)\n", fdef);
    const char *w11[] = { "argument 'X' of function 'f' is given twice", NULL };
    load_err(buf, 1, w11);
    /* the same name twice: SystemDS binds in order, the last one wins */
    snprintf(buf, sizeof buf, "%sY = f(X=M, X=M)\n", fdef);
    load_warn(buf, "argument 'X' of function 'f' is given twice; the last value is used");
    snprintf(buf, sizeof buf, "%sY1 = f(M)\nY2 = f(b=0.5, X=M, a=0.5)\nY3 = f(M, 3, b=1)\n", fdef);
    free(load_ok(buf));
    snprintf(buf, sizeof buf, "%s[A, B] = f(M)\n", fdef);
    const char *w12[] = { "function 'f' returns 1 value, but 2 are assigned", NULL };
    load_err(buf, 1, w12);
    /* builtin arguments (ops.def params) */
    const char *w13[] = { "too many arguments in the call of builtin 'sum'", NULL };
    load_err("X = matrix(1, rows=2, cols=2)\ns = sum(X, 2)\n", 1, w13);
    const char *w14[] = { "missing argument 'to' in the call of builtin 'seq'", NULL };
    load_err("s = seq(1)\n", 1, w14);
    const char *w15[] = { "builtin 'rand' has no parameter named 'colz'", NULL };
    load_err("R = rand(rows=2, colz=3)\n", 1, w15);
    const char *w16[] = { "missing argument 'margin'", NULL };
    load_err("X = matrix(1, rows=2, cols=2)\nY = removeEmpty(target=X)\n", 1, w16);
    free(load_ok("X = matrix(1, rows=2, cols=2)\nprint(\"%d %d\", 1, 2)\n"
                 "L = list(a=1, b=X)\nY = cbind(X, X, X)\nm = max(X, 2, 3)\n"
                 "Z = order(target=X, by=1, decreasing=TRUE, index.return=FALSE)\n"
                 "t0 = time()\nw = toString(X, sep=\",\", linesep=\";\")\n"
                 "write(X, \"f.csv\", format=\"csv\", header=TRUE, sep=\",\")\n"
                 "e = exists(undefinedButFine)\n"));
    /* namespaces */
    const char *w17[] = { "unknown namespace 'zz'", NULL };
    load_err("x = zz::f(1)\n", 1, w17);
    const char *w18[] = { "function 'f' is defined twice", NULL };
    load_err("f = function(Double x) return (Double y) { y = x }\n"
             "f = function(Double x) return (Double y) { y = 2 * x }\nz = f(1)\n", 1, w18);
}

/* ---- source() and the builtin library ---- */

/* A worker's LangOptions.lib_fetch as the loader test's rank 0: only
 * qux (with a helper), from a folder this machine has not; "offline"
 * cannot be asked; counts the calls. */
static int lib_fetch_qux(void *arg, const char *name, LangSource *s)
{
    ++*(int *)arg;
    if (!strcmp(name, "offline")) return -1;
    if (strcmp(name, "qux")) return 0;
    const char *t = "qux = function(Double r0) return (Double y) { y = quxHelp(r0) }\n"
                    "quxHelp = function(Double x) return (Double y) { y = x + 1 }\n";
    *s = (LangSource){strdup("/rank0/builtin/qux.dml"), strdup("/rank0/builtin/qux.dml"), strdup(t), strlen(t)};
    return 1;
}

/* A library file's relative source() reads the installation's file
 * before the working directory's: run from a SystemDS checkout, braid's
 * library must not take SystemDS's script of the same name. A user's
 * script still reads the working directory's. */
static void test_library_sources(void)
{
    char tmpl[] = "/tmp/braid_libsrc_XXXXXX";
    char *dir = mkdtemp(tmpl);
    T_CHECK(dir != NULL, "mkdtemp");
    if (!dir) return;
    char path[1200], bdir[600], cwd[512];
    const char *dirs[] = {"inst", "inst/scripts", "inst/scripts/builtin", "work", "work/scripts",
                          "work/scripts/builtin"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, dirs[i]);
        mkdir(path, 0755);
    }
    snprintf(bdir, sizeof bdir, "%s/inst/scripts/builtin", dir);
    const char *files[][2] = {
        {"inst/scripts/builtin/usehelp.dml", "source(\"scripts/builtin/helper.dml\") as h\n"
                                             "m_usehelp = function(Double x) return (Double y) { y = h::braidOnly(x) }\n"},
        {"inst/scripts/builtin/helper.dml", "braidOnly = function(Double x) return (Double y) { y = x + 1 }\n"},
        {"work/scripts/builtin/helper.dml", "other = function(Double x) return (Double y) { y = x }\n"}};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i][0]);
        write_file(path, files[i][1]);
    }
    snprintf(path, sizeof path, "%s/work", dir);
    if (getcwd(cwd, sizeof cwd) && chdir(path) == 0) {
        LangOptions o = { .builtin_dir = bdir };
        Diag *d = diag_new();
        Program *p = lang_load_string("y = usehelp(1)\n", "main.dml", &o, d);
        char *t = diag_text(d);
        T_CHECK(p != NULL, "library source resolved in the working directory:\n%s", t);
        free(t);
        lang_program_free(p);
        diag_free(d);
        d = diag_new();
        p = lang_load_string("source(\"scripts/builtin/helper.dml\") as h\ny = h::other(1)\n", "main.dml", &o, d);
        t = diag_text(d);
        T_CHECK(p != NULL, "a user's source no longer reads the working directory's file:\n%s", t);
        free(t);
        lang_program_free(p);
        diag_free(d);
        if (chdir(cwd) != 0) T_CHECK(0, "chdir back");
    }
    char cmd[1300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) {}
}

static void test_loader(void)
{
    char tmpl[] = "/tmp/braid_lang_XXXXXX";
    char *dir = mkdtemp(tmpl);
    T_CHECK(dir != NULL, "mkdtemp");
    if (!dir) return;
    char path[1200], lib[512], bdir[512];
    snprintf(lib, sizeof lib, "%s/lib", dir);
    snprintf(bdir, sizeof bdir, "%s/builtin", dir);
    mkdir(lib, 0755);
    mkdir(bdir, 0755);
    snprintf(path, sizeof path, "%s/util.dml", lib);
    write_file(path, "source(\"other.dml\") as o\n"
               "twice = function(Double x) return (Double y) { y = helper(x) }\n"
               "helper = function(Double x) return (Double y) { z = o::three(); y = 2 * x + z - 3 }\n"
               "print(\"top-level statements of sourced files do not run\")\n");
    snprintf(path, sizeof path, "%s/other.dml", lib);
    write_file(path, "source(\"util.dml\") as u\n"  /* a cycle */
               "three = function() return (Double t) { t = 3 }\n");
    snprintf(path, sizeof path, "%s/foo.dml", bdir);
    write_file(path, "m_foo = function(Matrix[Double] X, Double k = 1) return (Matrix[Double] Y) {\n"
               "  Y = bar(X) * k\n}\n");
    snprintf(path, sizeof path, "%s/bar.dml", bdir);
    write_file(path, "m_bar = function(Matrix[Double] X) return (Matrix[Double] Y) { Y = X + 1 }\n");
    snprintf(path, sizeof path, "%s/baz.dml", bdir);
    write_file(path, "baz = function(Double x) return (Double y) { y = x }\n");
    snprintf(path, sizeof path, "%s/broken.dml", bdir);
    write_file(path, "m_broken = function(Double x) return (Double y) {\n  y = (x\n}\n");
    snprintf(path, sizeof path, "%s/main.dml", dir);
    write_file(path, "source(\"lib/util.dml\") as u\n"
               "a = u::twice(2)\n"
               "X = matrix(1, rows=2, cols=2)\n"
               "Y = foo(X, k=2)\n");

    Diag *d = diag_new();
    LangOptions o = { .builtin_dir = bdir };
    Program *p = lang_load_file(path, &o, d);
    char *t = diag_text(d);
    T_CHECK(p != NULL, "source + library load:\n%s", t);
    free(t);
    if (p) {
        const Block *m = lang_main(p);
        Func *tw = m->stmts[0]->assign.value->call.func;
        Func *foo = m->stmts[2]->assign.value->call.func;
        T_CHECK(tw && !strcmp(tw->name, "twice") && tw->ns[0] == '/' && strstr(tw->ns, "util.dml") &&
                !tw->builtin_lib && strstr(tw->file, "lib/util.dml"), "sourced function");
        T_CHECK(foo && !strcmp(foo->name, "m_foo") && foo->builtin_lib, "library function m_foo");
        /* inside util.dml, helper resolves to its own file */
        Func *helper = tw ? tw->body.stmts[0]->assign.value->call.func : NULL;
        T_CHECK(helper && !strcmp(helper->name, "helper") && helper->ns == tw->ns,
                "call inside a sourced file resolves to its own function");
        Func *bar = foo ? foo->body.stmts[0]->assign.value->binary.a->call.func : NULL;
        T_CHECK(bar && !strcmp(bar->name, "m_bar") && bar->builtin_lib, "library calls library");
        int nf = lang_nfuncs(p);
        T_CHECK(nf == 5, "functions loaded: %d", nf);
        T_CHECK(lang_find_func(p, "", "foo") == foo && lang_find_func(p, NULL, "foo") == foo,
                "find library function");
        T_CHECK(lang_find_func(p, "", "u::twice") == tw, "find ns function");
        T_CHECK(lang_find_func(p, tw->ns, "helper") == helper, "find in a sourced file's namespace");
        T_CHECK(lang_find_func(p, "", "helper") == NULL, "main does not see util's helper");
        Func *baz = lang_find_func(p, "", "baz");
        T_CHECK(baz && !strcmp(baz->name, "baz") && lang_nfuncs(p) == nf + 1, "on-demand load of baz");
        T_CHECK(lang_find_func(p, "", "broken") == NULL && lang_nfuncs(p) == nf + 1,
                "a broken library file is not added");
        T_CHECK(lang_find_func(p, "", "nosuch") == NULL, "unknown function");
    }
    /* the files as loaded (not the main script: the source()d files,
     * then the library's, baz's on demand), with their texts: what rank
     * 0 sends its workers */
    LangSource shipped[5];
    char *kept[5] = {NULL, NULL, NULL, NULL, NULL};
    int nsh = p ? lang_nsources(p) : 0;
    T_CHECK(nsh == 5, "files loaded besides the script: %d", nsh);
    static const char *const kept_as[5][2] = {{"lib/util.dml", "twice"}, {"lib/other.dml", "three = function"},
                                              {"builtin/foo.dml", "m_foo"}, {"builtin/bar.dml", "m_bar"},
                                              {"builtin/baz.dml", "baz = function"}};
    for (int i = 0; i < nsh && i < 5; i++) {
        LangSource s = lang_source(p, i);
        size_t l = strlen(s.path), k = strlen(kept_as[i][0]);
        T_CHECK(s.canon && s.text && l > k && !strcmp(s.path + l - k, kept_as[i][0]) &&
                strlen(s.text) == s.len && strstr(s.text, kept_as[i][1]), "loaded file %d: %s", i, s.path);
        kept[i] = malloc(strlen(s.path) + strlen(s.canon) + s.len + 3);
        if (kept[i]) {
            char *c = kept[i];
            shipped[i] = (LangSource){strcpy(c, s.path), strcpy(c + strlen(s.path) + 1, s.canon), NULL, s.len};
            shipped[i].text = memcpy(c + strlen(s.path) + strlen(s.canon) + 2, s.text, s.len + 1);
        }
    }
    lang_program_free(p);
    diag_free(d);

    /* errors: missing source file, broken library file */
    d = diag_new();
    p = lang_load_string("source(\"nope/missing.dml\") as m\nx = broken(1)\n", "s.dml", &o, d);
    t = diag_text(d);
    T_CHECK(!p && strstr(t, "s.dml:1:1: error: cannot find source file 'nope/missing.dml'") &&
            strstr(t, "broken.dml:2:9:"), "missing source and broken library:\n%s", t);
    free(t);
    diag_free(d);
    /* relative to the working directory */
    char cwd[512];
    if (getcwd(cwd, sizeof cwd) && chdir(dir) == 0) {
        d = diag_new();
        p = lang_load_string("source(\"lib/other.dml\") as o\nx = o::three()\n", "sub/x.dml", &o, d);
        T_CHECK(p != NULL, "source relative to the working directory");
        lang_program_free(p);
        diag_free(d);
        if (chdir(cwd) != 0) T_CHECK(0, "chdir back");
    }
    const char *files[] = { "lib/util.dml", "lib/other.dml", "builtin/foo.dml", "builtin/bar.dml",
                            "builtin/baz.dml", "builtin/broken.dml", "main.dml" };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    /* the same script with its source()d and library files gone:
     * loaded from the texts shipped, found by eval's names and paths; a
     * library file not shipped comes from lib_fetch, never from the disk */
    snprintf(path, sizeof path, "%s/main.dml", dir);
    const char *mtext = "source(\"lib/util.dml\") as u\na = u::twice(2)\nX = matrix(1, rows=2, cols=2)\nY = foo(X, k=2)\n";
    snprintf(path, sizeof path, "%s/onlydisk.dml", bdir);
    write_file(path, "onlydisk = function(Double x) return (Double y) { y = x }\n");
    snprintf(path, sizeof path, "%s/main.dml", dir);
    d = diag_new();
    p = lang_load_text(mtext, strlen(mtext), path, NULL, &o, d);
    T_CHECK(!p && diag_nerrors(d) > 0, "source()d files gone: no load without the texts");
    lang_program_free(p);
    diag_free(d);
    if (nsh == 5 && kept[0] && kept[1] && kept[2] && kept[3] && kept[4]) {
        LangOptions so = o;
        so.sources = shipped;
        so.nsources = 5;
        so.lib_fetch = lib_fetch_qux;
        int asked = 0;
        so.lib_arg = &asked;
        d = diag_new();
        p = lang_load_text(mtext, strlen(mtext), path, NULL, &so, d);
        t = diag_text(d);
        T_CHECK(p != NULL, "source()d files from the texts shipped:\n%s", t);
        free(t);
        if (p) {
            Func *tw = lang_main(p)->stmts[0]->assign.value->call.func;
            T_CHECK(tw && !strcmp(tw->name, "twice") && tw->ns && !strcmp(tw->ns, shipped[0].canon),
                    "a shipped file's function, its namespace the canonical path rank 0 found");
            T_CHECK(lang_find_func(p, "", "u::twice") == tw && lang_find_func(p, "", "lib/util.dml::twice") == tw,
                    "eval finds a shipped file's function by alias and by path");
            T_CHECK(lang_nsources(p) == 4 && !strcmp(lang_source(p, 1).text, shipped[1].text),
                    "the nested source()d file came from the texts too");
            Func *foo = lang_main(p)->stmts[2]->assign.value->call.func;
            T_CHECK(foo && foo->builtin_lib && !strcmp(foo->ns, shipped[2].canon) && asked == 0,
                    "a library function from the texts shipped, its namespace rank 0's");
            Func *baz = lang_find_func(p, "", "baz");
            T_CHECK(baz && !strcmp(baz->ns, shipped[4].canon) && asked == 0, "eval of a shipped library file's function");
            Func *qux = lang_find_func(p, "", "qux");
            T_CHECK(qux && qux->builtin_lib && !strcmp(qux->ns, "/rank0/builtin/qux.dml") && qux->nin == 1 &&
                    !strcmp(qux->in[0].name, "r0") && asked == 1 && lang_find_func(p, "", "qux") == qux && asked == 1,
                    "a library file not shipped comes from lib_fetch, once (%d)", asked);
            T_CHECK(lang_find_func(p, "", "onlydisk") == NULL && asked == 2,
                    "with lib_fetch, no library file is read from the disk (%d)", asked);
            /* a name no library file has (eval of a library file's helper
             * by its bare name: tried as a file first) is asked once until
             * lang_library_forget; one that could not be asked, each time */
            Func *help = lang_find_func(p, "", "quxHelp");
            T_CHECK(help && help->builtin_lib && asked == 3, "a library helper by its bare name asks once (%d)", asked);
            for (int k = 0; k < 3; k++) {
                T_CHECK(lang_find_func(p, "", "quxHelp") == help, "the helper again");
                T_CHECK(lang_find_func(p, "", "onlydisk") == NULL, "the missing name again");
            }
            T_CHECK(asked == 3, "names rank 0 has no file for are not asked again (%d requests, 3 before)", asked);
            lang_library_forget(p);
            T_CHECK(lang_find_func(p, "", "quxHelp") == help && lang_find_func(p, "", "onlydisk") == NULL &&
                    lang_find_func(p, "", "onlydisk") == NULL && asked == 5,
                    "after lang_library_forget each is asked once more (%d, want 5)", asked);
            T_CHECK(lang_find_func(p, "", "offline") == NULL && lang_find_func(p, "", "offline") == NULL &&
                    asked == 7, "a name that could not be asked is asked again (%d, want 7)", asked);
            T_CHECK(!strcmp(lang_ns_of_file(p, baz ? baz->file : NULL), baz ? baz->ns : "") &&
                    !strcmp(lang_ns_of_file(p, "nosuch.dml"), ""), "lang_ns_of_file");
            T_CHECK(baz && lang_file_name(p, baz->file) == baz->file && lang_file_name(p, "nosuch.dml") == NULL,
                    "lang_file_name");
        }
        lang_program_free(p);
        diag_free(d);
    }
    for (int i = 0; i < 5; i++) free(kept[i]);
    snprintf(path, sizeof path, "%s/onlydisk.dml", bdir);
    unlink(path);
    rmdir(lib);
    rmdir(bdir);
    rmdir(dir);
    /* a missing script */
    d = diag_new();
    p = lang_load_file("/nonexistent/script.dml", NULL, d);
    T_CHECK(!p && diag_nerrors(d) == 1 && strstr(diag_first_message(d), "script.dml"),
            "missing script");
    diag_free(d);
}

/* ---- conformance cases and repository scripts ---- */

static const char *conf_dir(void)
{
    static const char *cands[] = { "../shared/conformance", "/work/shared/conformance" };
    const char *env = getenv("BRAID_CONFORMANCE");
    if (env) return env;
    for (size_t i = 0; i < 2; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s/cases", cands[i]);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) return cands[i];
    }
    return NULL;
}

static bool ci_contains(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0) return true;
    return n == 0;
}

static void test_conformance(void)
{
    const char *cd = conf_dir();
    if (!cd) {
        printf("test_lang: conformance cases not found, skipped\n");
        return;
    }
    char cwd[1024];
    if (!getcwd(cwd, sizeof cwd) || chdir(cd) != 0) return;
    glob_t g;
    if (glob("cases/*.dml", 0, NULL, &g) != 0) g.gl_pathc = 0;
    int nok = 0, nerr = 0;
    const char *names[] = { "out" };
    const char *vals[] = { "/tmp/braid_out" };
    char bdir[1100];
    snprintf(bdir, sizeof bdir, "%s/scripts/builtin", cwd);
    for (size_t gi = 0; gi < g.gl_pathc; gi++) {
        const char *dname = g.gl_pathv[gi] + strlen("cases/");
        size_t l = strlen(dname);
        char path[600], exp[700];
        snprintf(path, sizeof path, "cases/%s", dname);
        Diag *d = diag_new();
        LangOptions o = { .builtin_dir = bdir, .arg_names = names, .arg_values = vals, .nargs = 1 };
        Program *p = lang_load_file(path, &o, d);
        char *txt = diag_text(d);
        bool compile_err = !strncmp(dname, "err_syntax", 10) ||
                           !strncmp(dname, "err_undefined", 13) ||
                           !strncmp(dname, "err_unknown", 11);
        if (compile_err) {
            nerr++;
            T_CHECK(!p && diag_nerrors(d) > 0, "%s must fail to load", path);
            snprintf(exp, sizeof exp, "expected/%.*s/error.txt", (int)(l - 4), dname);
            char *e = t_slurp(exp, NULL);
            T_CHECK(e != NULL, "%s missing", exp);
            char *line = e ? strtok(e, "\n") : NULL;
            if (line) line = strtok(NULL, "\n");  /* skip the exit class */
            for (; line; line = strtok(NULL, "\n"))
                T_CHECK(ci_contains(txt, line), "%s: '%s' not in:\n%s", path, line, txt);
            free(e);
        } else {
            nok++;
            T_CHECK(p && diag_nwarnings(d) == 0, "%s should load cleanly:\n%s", path, txt);
        }
        free(txt);
        lang_program_free(p);
        diag_free(d);
    }
    globfree(&g);
    T_CHECK(nok >= 90 && nerr == 3, "conformance: %d cases loaded, %d compile errors", nok, nerr);
    /* cases/lib parses as well */
    Diag *d = diag_new();
    Program *p = lang_load_file("cases/lib/conf_util.dml", NULL, d);
    T_CHECK(p != NULL, "cases/lib/conf_util.dml");
    lang_program_free(p);
    diag_free(d);
    if (chdir(cwd) != 0) T_CHECK(0, "chdir back");
}

static int nrepo;

/* Every .dml file of the repository must be free of syntax errors; those
 * that need no $-arguments must also load and validate (with the builtin
 * library), unless their name starts with err_. */
static int repo_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    size_t l = strlen(path);
    if (type != FTW_F || l < 5 || strcmp(path + l - 4, ".dml")) return 0;
    if (strstr(path, "/build")) return 0;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char *text = t_slurp(path, NULL);
    if (!text) return 0;
    nrepo++;
    Arena *a = arena_new();
    Diag *d = diag_new();
    ParsedFile pf;
    int nerr = parse_file(a, d, path, text, strlen(text), NULL, &pf);
    bool expect_err = !strncmp(base, "err_", 4) || strstr(base, "_err_");
    if (!expect_err) {
        char *t = diag_text(d);
        T_CHECK(nerr == 0, "%s: syntax errors:\n%s", path, t);
        free(t);
    }
    if (!expect_err && !strchr(text, '$')) {
        Diag *d2 = diag_new();
        LangOptions o = { .builtin_dir = "scripts/builtin" };
        Program *p = lang_load_file(path, &o, d2);
        char *t = diag_text(d2);
        T_CHECK(p != NULL, "%s should load:\n%s", path, t);
        free(t);
        lang_program_free(p);
        diag_free(d2);
    }
    diag_free(d);
    arena_free(a);
    free(text);
    return 0;
}

static void test_repo_scripts(void)
{
    nrepo = 0;
    const char *dirs[] = { "scripts", "tests", "examples" };
    for (size_t i = 0; i < 3; i++) {
        struct stat st;
        if (stat(dirs[i], &st) == 0) nftw(dirs[i], repo_file, 16, FTW_PHYS);
    }
    printf("test_lang: %d repository scripts checked\n", nrepo);
}

/* ---- robustness ---- */

static uint64_t rng_state = 88172645463325252ULL;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Loads text; the result must be a program with no errors or NULL with
 * at least one error. */
static bool load_sane(const char *text)
{
    Diag *d = diag_new();
    LangOptions o = { 0 };
    Program *p = lang_load_string(text, "fz.dml", &o, d);
    bool ok = p ? diag_nerrors(d) == 0 : diag_nerrors(d) > 0;
    if (p) {
        /* walk what we got */
        char *t = block_text(lang_main(p));
        free(t);
    }
    char *t = diag_text(d);
    free(t);
    lang_program_free(p);
    diag_free(d);
    return ok;
}

static void test_robustness(void)
{
    const char *cd = conf_dir();
    const char *cases[] = { "ctrl_eval", "algo_cg", "list_func", "ctrl_parfor_opts", "idx_left",
                            "ctrl_if_chain", "scalar_printf" };
    int bad = 0, runs = 0;
    for (size_t c = 0; cd && c < sizeof cases / sizeof cases[0]; c++) {
        char path[600];
        snprintf(path, sizeof path, "%s/cases/%s.dml", cd, cases[c]);
        char *text = t_slurp(path, NULL);
        if (!text) continue;
        size_t n = strlen(text);
        char *buf = malloc(n + 64);
        /* every prefix */
        for (size_t k = 0; k <= n; k++) {
            memcpy(buf, text, k);
            buf[k] = 0;
            bad += !load_sane(buf);
            runs++;
        }
        /* random mutations */
        static const char junk[] = "()[]{},;:=<-+*/^%!&|$#'\"\\.eE0123456789 \nabcifTRUE";
        for (int m = 0; m < 400; m++) {
            memcpy(buf, text, n + 1);
            size_t len = n;
            int edits = 1 + (int)(rng() % 4);
            for (int e = 0; e < edits && len > 0; e++) {
                size_t at = rng() % len;
                switch (rng() % 3) {
                case 0: buf[at] = junk[rng() % (sizeof junk - 1)]; break;
                case 1: memmove(buf + at, buf + at + 1, len - at); len--; break;
                default:
                    memmove(buf + at + 1, buf + at, len - at + 1);
                    buf[at] = junk[rng() % (sizeof junk - 1)];
                    len++;
                    break;
                }
            }
            bad += !load_sane(buf);
            runs++;
        }
        free(buf);
        free(text);
    }
    T_CHECK(bad == 0, "robustness: %d of %d runs inconsistent", bad, runs);

    /* deep nesting is an error, not a crash */
    size_t N = 100000;
    char *deep = malloc(3 * N + 64);
    strcpy(deep, "x = ");
    size_t k = 4;
    for (size_t i = 0; i < N; i++) deep[k++] = '(';
    deep[k++] = '1';
    for (size_t i = 0; i < N; i++) deep[k++] = ')';
    deep[k] = 0;
    Diag *d = diag_new();
    Program *p = lang_load_string(deep, "deep.dml", NULL, d);
    T_CHECK(!p && diag_first_message(d) && strstr(diag_first_message(d), "nesting too deep"),
            "deep parentheses: %s", diag_first_message(d));
    diag_free(d);
    const char *units[] = { "-", "!", "if (TRUE) ", "2^", "f(", "{" };
    for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
        strcpy(deep, "x = 1\ny = ");
        k = strlen(deep);
        size_t ul = strlen(units[u]);
        for (size_t i = 0; i < 20000; i++, k += ul) memcpy(deep + k, units[u], ul);
        strcpy(deep + k, "1\n");
        d = diag_new();
        p = lang_load_string(deep, "deep.dml", NULL, d);
        T_CHECK(!p && diag_nerrors(d) > 0, "deep '%s'", units[u]);
        lang_program_free(p);
        diag_free(d);
    }
    /* long left-associative chains: fine up to the limit, an error beyond */
    for (int len = 500; len <= 5000; len += 4500) {
        strcpy(deep, "x = 1");
        k = strlen(deep);
        for (int i = 0; i < len; i++) k += (size_t)sprintf(deep + k, "+1");
        strcpy(deep + k, "\n");
        d = diag_new();
        p = lang_load_string(deep, "chain.dml", NULL, d);
        T_CHECK(len < 1000 ? p != NULL : (p == NULL && diag_nerrors(d) > 0), "chain of %d", len);
        lang_program_free(p);
        diag_free(d);
    }
    free(deep);
    /* odd inputs */
    T_CHECK(load_sane(""), "empty");
    free(load_ok("\xEF\xBB\xBFx = 1\n"));
    T_CHECK(load_sane("\n\n# only a comment"), "comment only");
    T_CHECK(load_sane("/* open comment"), "open comment");
    T_CHECK(load_sane("x = \"\\"), "open escape");
    T_CHECK(load_sane("}}}}{{{{"), "braces");
    T_CHECK(load_sane("f = function("), "open function");
    T_CHECK(load_sane("[,] = f()"), "bad massign");
    T_CHECK(load_sane("x = $"), "lone $");
    T_CHECK(load_sane("source(\"/\") as x"), "source of a directory");
    T_CHECK(load_sane("x = 1 ; ; ; y = x"), "semicolons");
}

int main(void)
{
    test_arena();
    test_diag();
    test_lex();
    test_precedence();
    test_literals_and_forms();
    test_statements();
    test_args();
    test_syntax_errors();
    test_validation();
    test_loader();
    test_library_sources();
    test_conformance();
    test_repo_scripts();
    test_robustness();
    return t_done("test_lang");
}
