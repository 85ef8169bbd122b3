/* jlambda.c: the parser of the Java lambda subset of map() (see
 * jlambda.h): lexer, recursive-descent parser into a tree of nodes (arena
 * allocated; jlint.h), and the translation of Java regexes to POSIX ones,
 * compiled once when the pattern is a literal. Evaluation is jleval.c. */
#include "jlint.h"

#include <stdio.h>
#include <strings.h>

#include "../base/arena.h"

const JlMethod jl_methods[] = {
    {"toUpperCase", 0, 0}, {"toLowerCase", 0, 0}, {"trim", 0, 0}, {"strip", 0, 0}, {"length", 0, 0},
    {"substring", 1, 2}, {"charAt", 1, 1}, {"indexOf", 1, 2}, {"lastIndexOf", 1, 1}, {"contains", 1, 1},
    {"startsWith", 1, 2}, {"endsWith", 1, 1}, {"replace", 2, 2}, {"replaceAll", 2, 2}, {"replaceFirst", 2, 2},
    {"split", 1, 2}, {"concat", 1, 1}, {"equals", 1, 1}, {"equalsIgnoreCase", 1, 1}, {"compareTo", 1, 1},
    {"isEmpty", 0, 0}, {"isBlank", 0, 0}, {"matches", 1, 1}, {"repeat", 1, 1}, {"toString", 0, 0},
};
const int jl_nmethods = (int)(sizeof jl_methods / sizeof jl_methods[0]);

const JlStatic jl_statics[] = {
    {"Integer.parseInt", S_PARSEINT, 1}, {"Integer.valueOf", S_PARSEINT, 1}, {"Long.parseLong", S_PARSELONG, 1},
    {"Long.valueOf", S_PARSELONG, 1}, {"Double.parseDouble", S_PARSEDOUBLE, 1},
    {"Double.valueOf", S_PARSEDOUBLE, 1}, {"Float.parseFloat", S_PARSEDOUBLE, 1},
    {"Float.valueOf", S_PARSEDOUBLE, 1}, {"String.valueOf", S_VALUEOF, 1},
    {"Boolean.parseBoolean", S_PARSEBOOL, 1}, {"Boolean.valueOf", S_PARSEBOOL, 1}, {"Math.abs", S_ABS, 1},
    {"Math.min", S_MIN, 2}, {"Math.max", S_MAX, 2}, {"Math.pow", S_POW, 2}, {"Math.sqrt", S_SQRT, 1},
    {"Math.floor", S_FLOOR, 1}, {"Math.ceil", S_CEIL, 1}, {"Math.round", S_ROUND, 1}, {"Math.log", S_LOG, 1},
    {"Math.log10", S_LOG10, 1}, {"Math.exp", S_EXP, 1}, {"Math.signum", S_SIGNUM, 1}, {"Math.sin", S_SIN, 1},
    {"Math.cos", S_COS, 1}, {"Math.tan", S_TAN, 1}, {"Character.isDigit", S_ISDIGIT, 1},
    {"Character.isLetter", S_ISLETTER, 1}, {"Character.isLetterOrDigit", S_ISLETTERORDIGIT, 1},
    {"Character.isWhitespace", S_ISWHITESPACE, 1}, {"Character.isUpperCase", S_ISUPPER, 1},
    {"Character.isLowerCase", S_ISLOWER, 1}, {"Character.toUpperCase", S_CTOUPPER, 1},
    {"Character.toLowerCase", S_CTOLOWER, 1}, {"UtilFunctions.jaccardSim", S_JACCARD, 2},
    {"UtilFunctions.getWordErrorRate", S_WER, 2}, {"UtilFunctions.splitRecodeEntry", S_SPLITRECODE, 1},
    {"PorterStemmer.stem", S_PORTERSTEM, 1}, {"UtilFunctions.getAsciiAtIdx", S_ASCIIAT, 2},
    {"UtilFunctions.getDominantDateFormat", S_DOMDATE, 1}, {"UtilFunctions.getTimestamp", S_TIMESTAMP, 1},
    {"UtilFunctions.addTimeToDate", S_ADDTIME, 3}, {"UtilFunctions.toMillis", S_TOMILLIS, 1},
    {"UtilFunctions.toMillis", S_TOMILLIS, 2}, {"UtilFunctions.dateFormat", S_DATEFMT, 2},
    {"UtilFunctions.dateFormat", S_DATEFMT, 3}, {"UtilFunctions.isDateColumn", S_ISDATECOL, 1},
    {"UtilFunctions.columnStringToCSVString", S_COLCSV, 2},
};
const int jl_nstatics = (int)(sizeof jl_statics / sizeof jl_statics[0]);

/* ---- regex translation (Java -> POSIX ERE) ---- */

static int re_unsupported(const char *what, const char *re, BrErr *e)
{
    return br_err(e, BR_EARG, "map: unsupported regex construct '%s' in \"%.80s\" (braid translates Java regexes "
                  "to POSIX: no lookaround, lazy quantifiers, backreferences or \\b)", what, re);
}

/* Translation state: the ERE text and the numbers of the groups. UTF-8
 * characters must match as units although regex.h works on bytes here:
 * '.', negated classes and multi-byte literals become groups, so the
 * Java group g is ERE group gmap[g]. */
typedef struct Tr {
    StrBuf o;
    int user, ere;      /* groups opened so far: Java's, the ERE's */
    int gmap[10];
    const char *src;
    BrErr *e;
} Tr;

/* A negated single-byte set (ERE bracket contents after '^') extended to
 * whole UTF-8 characters: ([^set\x80-\xff]|[\xc0-\xff][\x80-\xbf]+). */
static void neg_set(Tr *t, const char *set)
{
    sb_puts(&t->o, "([^");
    sb_puts(&t->o, set);
    sb_puts(&t->o, "\x80-\xff]|[\xc0-\xff][\x80-\xbf]+)");
    t->ere++;
}

/* A multi-byte literal character at s (its whole sequence) as a group. */
static size_t mb_literal(Tr *t, const char *s, size_t n)
{
    size_t l = u8_seq((unsigned char)s[0]);
    if (l > n) l = n;
    sb_putc(&t->o, '(');
    sb_put(&t->o, s, l);
    sb_putc(&t->o, ')');
    t->ere++;
    return l;
}

/* A bracket expression starting at s[*i] == '['; appends its POSIX form
 * (multi-byte members as alternatives of a group). */
static int re_bracket(Tr *t, const char *s, size_t n, size_t *i)
{
    size_t j = *i + 1;
    bool neg = false, rb = false, dash = false, caret = false;
    StrBuf it = {0}, mb = {0};
    if (j < n && s[j] == '^') { neg = true; j++; }
    if (j < n && s[j] == ']') { rb = true; j++; }
    for (; j < n && s[j] != ']'; j++) {
        char c = s[j];
        if (c == '\\') {
            if (++j >= n) break;
            char d = s[j];
            switch (d) {
            case 'd': sb_puts(&it, "0-9"); break;
            case 's': sb_puts(&it, "[:space:]"); break;
            case 'w': sb_puts(&it, "[:alnum:]_"); break;
            case 't': sb_putc(&it, '\t'); break;
            case 'n': sb_putc(&it, '\n'); break;
            case 'r': sb_putc(&it, '\r'); break;
            case 'f': sb_putc(&it, '\f'); break;
            case ']': rb = true; break;
            case '-': dash = true; break;
            case '^': caret = true; break;
            default:
                if (isalnum((unsigned char)d)) {
                    char w[4] = {'\\', d, 0, 0};
                    free(it.s);
                    free(mb.s);
                    return re_unsupported(w, s, t->e);
                }
                sb_putc(&it, d);
            }
        } else if (c == '[' || (c == '&' && j + 1 < n && s[j + 1] == '&')) {
            free(it.s);
            free(mb.s);
            return re_unsupported(c == '[' ? "nested character class" : "&& in a character class", s, t->e);
        } else if ((unsigned char)c >= 0x80) {
            size_t l = u8_seq((unsigned char)c);
            if (neg || (j + l < n && s[j + l] == '-')) {
                free(it.s);
                free(mb.s);
                return re_unsupported(neg ? "non-ASCII character in a negated class" : "non-ASCII range", s, t->e);
            }
            sb_putc(&mb, '|');
            sb_put(&mb, s + j, l < n - j ? l : n - j);
            j += l - 1;
        } else if (c == '-') {
            if (it.n > 0 && j + 1 < n && s[j + 1] != ']') sb_putc(&it, '-');
            else dash = true;
        } else if (c == '^') {
            caret = true;
        } else {
            sb_putc(&it, c);
        }
    }
    if (j >= n) {
        free(it.s);
        free(mb.s);
        return br_err(t->e, BR_EARG, "map: unclosed character class in regex \"%.80s\"", s);
    }
    StrBuf set = {0};
    if (rb) sb_putc(&set, ']');
    if (it.s) sb_puts(&set, it.s);
    if (caret) sb_putc(&set, '^');
    if (dash) sb_putc(&set, '-');
    bool empty = set.n == 0;
    if (neg) {
        neg_set(t, set.s ? set.s : "");
    } else if (mb.n) {   /* (|ü|é) or ([a-z]|ü|é) */
        sb_putc(&t->o, '(');
        if (!empty) { sb_putc(&t->o, '['); sb_puts(&t->o, set.s); sb_putc(&t->o, ']'); }
        sb_puts(&t->o, empty ? mb.s + 1 : mb.s);
        sb_putc(&t->o, ')');
        t->ere++;
    } else {
        sb_putc(&t->o, '[');
        if (set.s) sb_puts(&t->o, set.s);
        sb_putc(&t->o, ']');
    }
    bool oom = it.oom || mb.oom || set.oom;
    free(it.s);
    free(mb.s);
    free(set.s);
    *i = j;
    return oom ? br_err(t->e, BR_ENOMEM, "map: out of memory") : 0;
}

/* Translates Java regex s into t->o (anchored at both ends when full). */
static int re_translate(Tr *t, const char *s, bool full)
{
    size_t n = strlen(s);
    if (full) { sb_puts(&t->o, "^("); t->ere++; }
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '\\') {
            if (i + 1 >= n) return br_err(t->e, BR_EARG, "map: regex \"%.80s\" ends with a backslash", s);
            char d = s[++i];
            switch (d) {
            case 'd': sb_puts(&t->o, "[0-9]"); break;
            case 'D': neg_set(t, "0-9"); break;
            case 's': sb_puts(&t->o, "[[:space:]]"); break;
            case 'S': neg_set(t, "[:space:]"); break;
            case 'w': sb_puts(&t->o, "[[:alnum:]_]"); break;
            case 'W': neg_set(t, "[:alnum:]_"); break;
            case 't': sb_putc(&t->o, '\t'); break;
            case 'n': sb_putc(&t->o, '\n'); break;
            case 'r': sb_putc(&t->o, '\r'); break;
            case 'f': sb_putc(&t->o, '\f'); break;
            default:
                if (isalnum((unsigned char)d)) {
                    char w[3] = {'\\', d, 0};
                    return re_unsupported(w, s, t->e);
                }
                if ((unsigned char)d >= 0x80) { i += mb_literal(t, s + i, n - i) - 1; break; }
                if (strchr(".[]()*+?{}|^$\\", d)) sb_putc(&t->o, '\\');
                sb_putc(&t->o, d);
            }
        } else if (c == '[') {
            if (re_bracket(t, s, n, &i)) return t->e->code;
        } else if (c == '(') {
            if (i + 1 < n && s[i + 1] == '?') return re_unsupported("(?", s, t->e);
            t->ere++;
            if (++t->user < 10) t->gmap[t->user] = t->ere;
            sb_putc(&t->o, '(');
        } else if (c == '.') {
            neg_set(t, "\n");
        } else if ((c == '*' || c == '+' || c == '?' || c == '}') && i + 1 < n && (s[i + 1] == '?' || s[i + 1] == '+')) {
            char w[3] = {c, s[i + 1], 0};
            return re_unsupported(w, s, t->e);
        } else if ((unsigned char)c >= 0x80) {
            i += mb_literal(t, s + i, n - i) - 1;
        } else {
            sb_putc(&t->o, c);
        }
    }
    if (full) sb_puts(&t->o, ")$");
    if (!t->o.s) sb_puts(&t->o, "");
    return t->o.oom ? br_err(t->e, BR_ENOMEM, "map: out of memory") : 0;
}

/* see jlint.h */
JRe *jl_re_compile(const char *java, bool full, BrErr *e)
{
    Tr t = {.src = java, .e = e};
    if (re_translate(&t, java, full)) { free(t.o.s); return NULL; }
    JRe *r = calloc(1, sizeof *r);
    if (!r) { free(t.o.s); br_err(e, BR_ENOMEM, "map: out of memory"); return NULL; }
    int rc = regcomp(&r->re, t.o.s, REG_EXTENDED);
    free(t.o.s);
    if (rc) {
        char msg[128];
        regerror(rc, &r->re, msg, sizeof msg);
        br_err(e, BR_EARG, "map: invalid regex \"%.80s\": %s", java, msg);
        free(r);
        return NULL;
    }
    r->ngroups = t.user < 9 ? t.user : 9;
    memcpy(r->gmap, t.gmap, sizeof r->gmap);
    return r;
}

void jl_re_free(JRe *r)
{
    if (!r) return;
    regfree(&r->re);
    free(r);
}

/* ---- lexer ---- */

typedef enum { T_EOF, T_ID, T_INT, T_DBL, T_STR, T_CHAR, T_OP } TKind;

typedef struct Tok {
    TKind k;
    int pos;
    const char *p;      /* T_ID, T_OP: text in the source */
    int len;
    JVal v;             /* literals (strings arena-allocated) */
} Tok;

typedef struct P {
    const char *src;
    int n, i;
    Tok t;              /* current token */
    JLambda *l;
    BrErr *e;
    char pnames[2][64];
    int nodes, depth;   /* bounds on the tree (evaluation recurses over it) */
} P;

static int perr(P *p, int pos, const char *fmt, const char *arg)
{
    if (p->e->code) return p->e->code;
    char m[160];
    snprintf(m, sizeof m, fmt, arg);
    return br_err(p->e, BR_EARG, "map: %s at offset %d of lambda \"%.100s\"", m, pos, p->src);
}

static int unsupported(P *p, int pos, const char *what, int len)
{
    char w[48];
    snprintf(w, sizeof w, "%.*s", len < 40 ? len : 40, what);
    return perr(p, pos, "unsupported construct '%s'", w);
}

/* Decodes a Java string/char literal body into the arena. */
static int lex_string(P *p, char q)
{
    int start = p->i;
    StrBuf b = {0};
    p->i++;
    while (p->i < p->n && p->src[p->i] != q) {
        char c = p->src[p->i++];
        if (c != '\\') { sb_putc(&b, c); continue; }
        if (p->i >= p->n) break;
        char d = p->src[p->i++];
        switch (d) {
        case 'n': sb_putc(&b, '\n'); break;
        case 't': sb_putc(&b, '\t'); break;
        case 'r': sb_putc(&b, '\r'); break;
        case 'b': sb_putc(&b, '\b'); break;
        case 'f': sb_putc(&b, '\f'); break;
        case '0': sb_putc(&b, '\0'); break;
        case 'u': {
            unsigned v = 0;
            int k = 0;
            for (; k < 4 && p->i < p->n && isxdigit((unsigned char)p->src[p->i]); k++, p->i++) {
                char h = p->src[p->i];
                v = v * 16 + (unsigned)(isdigit((unsigned char)h) ? h - '0' : (tolower((unsigned char)h) - 'a' + 10));
            }
            if (k != 4) { free(b.s); return perr(p, start, "bad \\u escape%s", ""); }
            char u[4];
            sb_put(&b, u, (size_t)u8_encode(v, u));
            break;
        }
        default: sb_putc(&b, d); break;
        }
    }
    if (p->i >= p->n) { free(b.s); return perr(p, start, "unterminated %s literal", q == '"' ? "string" : "char"); }
    p->i++;
    if (b.oom) { free(b.s); return br_err(p->e, BR_ENOMEM, "map: out of memory"); }
    size_t len = b.n;
    char *s = arena_strndup(p->l->arena, b.s ? b.s : "", len);
    free(b.s);
    if (!s) return br_err(p->e, BR_ENOMEM, "map: out of memory");
    if (q == '\'') {
        int64_t l;
        if (len == 0 || (int64_t)len != (int64_t)u8_seq((unsigned char)s[0]))
            return perr(p, start, "a char literal holds one character%s", "");
        p->t.k = T_CHAR;
        p->t.v.k = JV_CHAR;
        p->t.v.c = u8_decode(s, (int64_t)len, &l);
    } else {
        p->t.k = T_STR;
        p->t.v.k = JV_STR;
        p->t.v.s = s;
        p->t.v.n = (int64_t)len;
    }
    return 0;
}

static const char *const ops3[] = {">>>", "<<=", ">>=", NULL};
static const char *const ops2[] = {"->", "<=", ">=", "==", "!=", "&&", "||", "++", "--", "+=", "-=", "*=", "/=",
                                   "%=", "<<", ">>", "::", "|=", "&=", "^=", NULL};

static int next(P *p)
{
    const char *s = p->src;
    while (p->i < p->n && isspace((unsigned char)s[p->i])) p->i++;
    memset(&p->t, 0, sizeof p->t);
    p->t.pos = p->i;
    p->t.p = s + p->i;
    if (p->i >= p->n) { p->t.k = T_EOF; return 0; }
    char c = s[p->i];
    if (isalpha((unsigned char)c) || c == '_' || c == '$') {
        int j = p->i;
        while (j < p->n && (isalnum((unsigned char)s[j]) || s[j] == '_' || s[j] == '$')) j++;
        p->t.k = T_ID;
        p->t.len = j - p->i;
        p->i = j;
        return 0;
    }
    if (isdigit((unsigned char)c) || (c == '.' && p->i + 1 < p->n && isdigit((unsigned char)s[p->i + 1]))) {
        int j = p->i;
        bool dbl = false;
        if (c == '0' && j + 1 < p->n && (s[j + 1] == 'x' || s[j + 1] == 'X')) return unsupported(p, p->i, "0x", 2);
        while (j < p->n && (isdigit((unsigned char)s[j]) || s[j] == '_')) j++;
        if (j < p->n && s[j] == '.') { dbl = true; j++; while (j < p->n && isdigit((unsigned char)s[j])) j++; }
        if (j < p->n && (s[j] == 'e' || s[j] == 'E')) {
            dbl = true;
            j++;
            if (j < p->n && (s[j] == '+' || s[j] == '-')) j++;
            while (j < p->n && isdigit((unsigned char)s[j])) j++;
        }
        char num[64];
        int k = 0;
        for (int q = p->i; q < j && k < 63; q++) if (s[q] != '_') num[k++] = s[q];
        num[k] = 0;
        if (j < p->n && strchr("dDfF", s[j])) { dbl = true; j++; }
        else if (j < p->n && strchr("lL", s[j]) && !dbl) j++;
        if (dbl) { p->t.k = T_DBL; p->t.v.k = JV_DBL; p->t.v.d = strtod(num, NULL); }
        else { p->t.k = T_INT; p->t.v.k = JV_INT; p->t.v.i = strtoll(num, NULL, 10); }
        p->i = j;
        return 0;
    }
    if (c == '"' || c == '\'') return lex_string(p, c);
    p->t.k = T_OP;
    for (int k = 0; ops3[k]; k++)
        if (!strncmp(s + p->i, ops3[k], 3)) { p->t.len = 3; p->i += 3; return 0; }
    for (int k = 0; ops2[k]; k++)
        if (p->i + 1 < p->n && !strncmp(s + p->i, ops2[k], 2)) { p->t.len = 2; p->i += 2; return 0; }
    p->t.len = 1;
    p->i++;
    return 0;
}

static bool is_op(const P *p, const char *op)
{
    return p->t.k == T_OP && p->t.len == (int)strlen(op) && !strncmp(p->t.p, op, (size_t)p->t.len);
}
static bool is_id(const P *p, const char *id)
{
    return p->t.k == T_ID && p->t.len == (int)strlen(id) && !strncmp(p->t.p, id, (size_t)p->t.len);
}

static int expect(P *p, const char *op)
{
    if (is_op(p, op)) return next(p);
    if (p->t.k == T_EOF) return perr(p, p->t.pos, "expected '%s' but the lambda ended", op);
    if (p->t.k == T_OP && !strchr("()[]{},.?:;!<>=+-*/%", p->t.p[0])) return unsupported(p, p->t.pos, p->t.p, p->t.len);
    return perr(p, p->t.pos, "expected '%s'", op);
}

#define MAX_NODES 2000
#define MAX_DEPTH 200

static Node *node(P *p, NKind k, int n, int pos)
{
    if (++p->nodes > MAX_NODES) {
        perr(p, pos, "the lambda is too long (more than %s operations)", "2000");
        return NULL;
    }
    Node *x = arena_alloc(p->l->arena, sizeof *x);
    if (!x || (n && !(x->kid = arena_alloc(p->l->arena, (size_t)n * sizeof(Node *))))) {
        br_err(p->e, BR_ENOMEM, "map: out of memory");
        return NULL;
    }
    x->kind = k;
    x->n = n;
    x->pos = pos;
    return x;
}

static Node *expr(P *p);
static Node *unary(P *p);

/* Comma-separated arguments after '(' up to ')'; *out arena-allocated. */
static int args(P *p, Node ***out, int *nout)
{
    Node *tmp[8];
    int n = 0;
    if (expect(p, "(")) return p->e->code;
    if (!is_op(p, ")")) {
        for (;;) {
            Node *a = expr(p);
            if (!a) return p->e->code;
            if (n == 8) return perr(p, p->t.pos, "too many arguments%s", "");
            tmp[n++] = a;
            if (!is_op(p, ",")) break;
            if (next(p)) return p->e->code;
        }
    }
    if (expect(p, ")")) return p->e->code;
    *out = n ? arena_memdup(p->l->arena, tmp, (size_t)n * sizeof(Node *)) : NULL;
    *nout = n;
    if (n && !*out) return br_err(p->e, BR_ENOMEM, "map: out of memory");
    return 0;
}

/* Regex methods with a literal pattern compile it once. */
static int attach_regex(P *p, Node *m)
{
    bool rx = m->op == M_REPLACEALL || m->op == M_REPLACEFIRST || m->op == M_SPLIT || m->op == M_MATCHES;
    if (!rx || m->n < 2 || m->kid[1]->kind != N_LIT || m->kid[1]->lit.k != JV_STR) return 0;
    JRe *r = jl_re_compile(m->kid[1]->lit.s, m->op == M_MATCHES, p->e);
    if (!r) return p->e->code;
    JRe **res = realloc(p->l->res, (size_t)(p->l->nre + 1) * sizeof *res);
    if (!res) { jl_re_free(r); return br_err(p->e, BR_ENOMEM, "map: out of memory"); }
    p->l->res = res;
    res[p->l->nre++] = r;
    m->re = r;
    return 0;
}

static Node *postfix(P *p, Node *x)
{
    while (x) {
        if (is_op(p, ".")) {
            if (next(p)) return NULL;
            if (p->t.k != T_ID) { perr(p, p->t.pos, "expected a method name after '.'%s", ""); return NULL; }
            Tok name = p->t;
            if (next(p)) return NULL;
            if (!is_op(p, "(")) {
                if (name.len == 6 && !strncmp(name.p, "length", 6)) {
                    Node *a = node(p, N_ALEN, 1, name.pos);
                    if (a) a->kid[0] = x;
                    x = a;
                    continue;
                }
                unsupported(p, name.pos, name.p, name.len);
                return NULL;
            }
            int m = -1;
            for (int k = 0; k < jl_nmethods; k++)
                if ((int)strlen(jl_methods[k].name) == name.len && !strncmp(jl_methods[k].name, name.p, (size_t)name.len)) m = k;
            if (m < 0) {
                char w[64];
                snprintf(w, sizeof w, "method %.*s()", name.len < 40 ? name.len : 40, name.p);
                perr(p, name.pos, "unsupported construct '%s'", w);
                return NULL;
            }
            Node **a;
            int na;
            if (args(p, &a, &na)) return NULL;
            if (na < jl_methods[m].min || na > jl_methods[m].max) {
                perr(p, name.pos, "wrong number of arguments to %s()", jl_methods[m].name);
                return NULL;
            }
            Node *c = node(p, N_METHOD, na + 1, name.pos);
            if (!c) return NULL;
            c->op = m;
            c->kid[0] = x;
            for (int k = 0; k < na; k++) c->kid[k + 1] = a[k];
            if (attach_regex(p, c)) return NULL;
            x = c;
        } else if (is_op(p, "[")) {
            int pos = p->t.pos;
            if (next(p)) return NULL;
            Node *i = expr(p);
            if (!i || expect(p, "]")) return NULL;
            Node *c = node(p, N_INDEX, 2, pos);
            if (!c) return NULL;
            c->kid[0] = x;
            c->kid[1] = i;
            x = c;
        } else {
            break;
        }
    }
    return x;
}

static const char *const classes[] = {"Integer", "Long", "Double", "Float", "String", "Boolean", "Math",
                                      "Character", "UtilFunctions", "PorterStemmer", NULL};

static Node *primary(P *p)
{
    int pos = p->t.pos;
    Node *x = NULL;
    switch (p->t.k) {
    case T_INT: case T_DBL: case T_STR: case T_CHAR:
        if (!(x = node(p, N_LIT, 0, pos))) return NULL;
        x->lit = p->t.v;
        if (next(p)) return NULL;
        return postfix(p, x);
    case T_EOF:
        perr(p, pos, "the lambda ended where an expression was expected%s", "");
        return NULL;
    case T_OP:
        if (is_op(p, "(")) {
            if (next(p)) return NULL;
            x = expr(p);
            if (!x || expect(p, ")")) return NULL;
            return postfix(p, x);
        }
        if (strchr("()[]{},.?:;", p->t.p[0]) && p->t.len == 1) perr(p, pos, "unexpected '%s'", (char[]){p->t.p[0], 0});
        else unsupported(p, pos, p->t.p, p->t.len);
        return NULL;
    case T_ID: break;
    }
    if (is_id(p, "true") || is_id(p, "false") || is_id(p, "null")) {
        if (!(x = node(p, N_LIT, 0, pos))) return NULL;
        x->lit.k = is_id(p, "null") ? JV_NULL : JV_BOOL;
        x->lit.b = is_id(p, "true");
        if (next(p)) return NULL;
        return postfix(p, x);
    }
    for (int k = 0; k < 2 && k < p->l->nparams; k++)
        if ((int)strlen(p->pnames[k]) == p->t.len && !strncmp(p->pnames[k], p->t.p, (size_t)p->t.len)) {
            if (!(x = node(p, N_PARAM, 0, pos))) return NULL;
            x->lit.i = k;
            if (next(p)) return NULL;
            return postfix(p, x);
        }
    if (is_id(p, "new")) {
        if (next(p)) return NULL;
        if (!is_id(p, "String")) { unsupported(p, pos, "new", 3); return NULL; }
        if (next(p) || expect(p, "[") || expect(p, "]")) return NULL;
        if (!is_op(p, "{")) { perr(p, p->t.pos, "only array initializers new String[]{...} are supported%s", ""); return NULL; }
        Node *tmp[64];
        int n = 0;
        if (next(p)) return NULL;
        while (!is_op(p, "}")) {
            Node *a = expr(p);
            if (!a) return NULL;
            if (n == 64) { perr(p, p->t.pos, "array initializer too long%s", ""); return NULL; }
            tmp[n++] = a;
            if (!is_op(p, ",")) break;
            if (next(p)) return NULL;
        }
        if (expect(p, "}")) return NULL;
        if (!(x = node(p, N_ARRAY, n, pos))) return NULL;
        for (int k = 0; k < n; k++) x->kid[k] = tmp[k];
        return postfix(p, x);
    }
    for (int c = 0; classes[c]; c++) {
        if (!is_id(p, classes[c])) continue;
        Tok cl = p->t;
        if (next(p)) return NULL;
        if (!is_op(p, ".")) { unsupported(p, cl.pos, cl.p, cl.len); return NULL; }
        if (next(p)) return NULL;
        if (p->t.k != T_ID) { perr(p, p->t.pos, "expected a method name after '%s.'", classes[c]); return NULL; }
        char full[96];
        snprintf(full, sizeof full, "%s.%.*s", classes[c], p->t.len < 60 ? p->t.len : 60, p->t.p);
        int s = -1;
        for (int k = 0; k < jl_nstatics; k++)
            if (!strcmp(jl_statics[k].name, full)) s = k;
        if (s < 0) { perr(p, p->t.pos, "unsupported construct '%s'", full); return NULL; }
        if (next(p)) return NULL;
        Node **a;
        int na;
        if (args(p, &a, &na)) return NULL;
        /* overloads: the entry of that name with na parameters */
        for (int k = 0; k < jl_nstatics; k++)
            if (!strcmp(jl_statics[k].name, full) && jl_statics[k].nargs == na) s = k;
        if (na != jl_statics[s].nargs) { perr(p, pos, "wrong number of arguments to %s()", jl_statics[s].name); return NULL; }
        if (!(x = node(p, N_STATIC, na, pos))) return NULL;
        x->op = (int)jl_statics[s].id;
        for (int k = 0; k < na; k++) x->kid[k] = a[k];
        return postfix(p, x);
    }
    unsupported(p, pos, p->t.p, p->t.len);
    return NULL;
}

/* (type) casts: '(' followed by a type name and ')'. */
static bool cast_ahead(const P *p, Cast *c, int *after)
{
    static const struct { const char *n; Cast c; } types[] = {
        {"int", C_INT}, {"long", C_LONG}, {"short", C_INT}, {"double", C_DOUBLE}, {"float", C_DOUBLE},
        {"String", C_STRING}, {"Integer", C_INT}, {"Long", C_LONG}, {"Double", C_DOUBLE},
    };
    int i = p->i;
    const char *s = p->src;
    while (i < p->n && isspace((unsigned char)s[i])) i++;
    int j = i;
    while (j < p->n && isalnum((unsigned char)s[j])) j++;
    int k = j;
    while (k < p->n && isspace((unsigned char)s[k])) k++;
    if (k >= p->n || s[k] != ')') return false;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        if ((int)strlen(types[t].n) == j - i && !strncmp(types[t].n, s + i, (size_t)(j - i))) {
            *c = types[t].c;
            *after = k + 1;
            return true;
        }
    return false;
}

static Node *unary(P *p)
{
    int pos = p->t.pos;
    if (is_op(p, "!") || is_op(p, "-") || is_op(p, "+")) {
        char o = p->t.p[0];
        if (next(p)) return NULL;
        if (++p->depth > MAX_DEPTH) {
            perr(p, pos, "the lambda nests too deeply (more than %s levels)", "200");
            return NULL;
        }
        Node *a = unary(p);
        p->depth--;
        if (!a || o == '+') return a;
        Node *x = node(p, o == '!' ? N_NOT : N_NEG, 1, pos);
        if (x) x->kid[0] = a;
        return x;
    }
    if (is_op(p, "~") || is_op(p, "++") || is_op(p, "--")) { unsupported(p, pos, p->t.p, p->t.len); return NULL; }
    Cast c;
    int after;
    if (is_op(p, "(") && cast_ahead(p, &c, &after)) {
        p->i = after;
        if (next(p)) return NULL;
        Node *a = unary(p);
        if (!a) return NULL;
        Node *x = node(p, N_CAST, 1, pos);
        if (!x) return NULL;
        x->op = (int)c;
        x->kid[0] = a;
        return x;
    }
    Node *x = primary(p);
    if (x && p->t.k == T_OP && (is_op(p, "++") || is_op(p, "--"))) { unsupported(p, p->t.pos, p->t.p, p->t.len); return NULL; }
    return x;
}

/* Binary levels, lowest precedence first. */
static int binop(const P *p, int level)
{
    /* Java's order; '|' and '&' on booleans evaluate both sides
     * (SystemDS's enumerateLogical filters with them) */
    static const char *const lv[7][4] = {
        {"||", NULL}, {"&&", NULL}, {"|", NULL}, {"&", NULL}, {"==", "!=", NULL}, {"<", "<=", ">", ">="},
        {"+", "-", NULL},
    };
    if (level == 7) return is_op(p, "*") ? '*' : is_op(p, "/") ? '/' : is_op(p, "%") ? '%' : 0;
    for (int k = 0; k < 4 && lv[level][k]; k++)
        if (is_op(p, lv[level][k])) {
            const char *o = lv[level][k];
            if (!strcmp(o, "<=")) return OP_LE;
            if (!strcmp(o, ">=")) return OP_GE;
            if (!strcmp(o, "==")) return OP_EQ;
            if (!strcmp(o, "!=")) return OP_NE;
            if (!strcmp(o, "&&")) return '&';
            if (!strcmp(o, "||")) return '|';
            if (!strcmp(o, "&")) return 'A';
            if (!strcmp(o, "|")) return 'O';
            return o[0];
        }
    return 0;
}

static Node *level(P *p, int lv)
{
    if (lv == 8) return unary(p);
    Node *x = level(p, lv + 1);
    int op;
    while (x && (op = binop(p, lv))) {
        int pos = p->t.pos;
        if (next(p)) return NULL;
        Node *b = level(p, lv + 1);
        if (!b) return NULL;
        Node *y = node(p, op == '&' || op == 'A' ? N_AND : op == '|' || op == 'O' ? N_OR : N_BIN, 2, pos);
        if (!y) return NULL;
        y->op = op;
        y->kid[0] = x;
        y->kid[1] = b;
        x = y;
    }
    if (x && p->t.k == T_OP && !p->e->code) {
        static const char *const bad[] = {"^", "<<", ">>", ">>>", "=", "+=", "-=", "*=", "/=", "%=",
                                          "::", "|=", "&=", "^=", "<<=", ">>=", NULL};
        for (int k = 0; bad[k]; k++)
            if (is_op(p, bad[k])) { unsupported(p, p->t.pos, p->t.p, p->t.len); return NULL; }
    }
    if (x && is_id(p, "instanceof")) { unsupported(p, p->t.pos, "instanceof", 10); return NULL; }
    return x;
}

static Node *cond(P *p);

/* An expression, with the nesting depth bounded. */
static Node *expr(P *p)
{
    if (++p->depth > MAX_DEPTH) {
        perr(p, p->t.pos, "the lambda nests too deeply (more than %s levels)", "200");
        return NULL;
    }
    Node *x = cond(p);
    p->depth--;
    return x;
}

static Node *cond(P *p)
{
    Node *c = level(p, 0);
    if (!c || !is_op(p, "?")) return c;
    int pos = p->t.pos;
    if (next(p)) return NULL;
    Node *a = expr(p);
    if (!a || expect(p, ":")) return NULL;
    Node *b = expr(p);
    if (!b) return NULL;
    Node *x = node(p, N_COND, 3, pos);
    if (!x) return NULL;
    x->kid[0] = c;
    x->kid[1] = a;
    x->kid[2] = b;
    return x;
}

static int param(P *p)
{
    if (p->t.k != T_ID) return perr(p, p->t.pos, "expected a parameter name%s", "");
    Tok a = p->t;
    if (next(p)) return p->e->code;
    if (p->t.k == T_ID) {   /* typed parameter: String x */
        a = p->t;
        if (next(p)) return p->e->code;
    }
    if (p->l->nparams == 2) return perr(p, a.pos, "lambdas take one or two parameters%s", "");
    snprintf(p->pnames[p->l->nparams++], 64, "%.*s", a.len < 63 ? a.len : 63, a.p);
    return 0;
}

JLambda *jl_parse(const char *src, BrErr *e)
{
    JLambda *l = calloc(1, sizeof *l);
    if (!l || !(l->arena = arena_new())) {
        free(l);
        br_err(e, BR_ENOMEM, "map: out of memory");
        return NULL;
    }
    P p = {.src = src, .n = (int)strlen(src), .l = l, .e = e};
    if (next(&p)) goto fail;
    if (is_op(&p, "(")) {
        if (next(&p)) goto fail;
        while (!is_op(&p, ")")) {
            if (param(&p)) goto fail;
            if (is_op(&p, ",")) { if (next(&p)) goto fail; }
            else if (!is_op(&p, ")")) { perr(&p, p.t.pos, "expected ',' or ')' in the parameters%s", ""); goto fail; }
        }
        if (next(&p)) goto fail;
    } else if (param(&p)) {
        goto fail;
    }
    if (l->nparams == 0) { perr(&p, 0, "the lambda needs a parameter%s", ""); goto fail; }
    if (!is_op(&p, "->")) { perr(&p, p.t.pos, "expected '->' (a lambda such as \"x -> x.trim()\")%s", ""); goto fail; }
    if (next(&p)) goto fail;
    bool block = is_op(&p, "{");
    if (block) {
        if (next(&p)) goto fail;
        if (!is_id(&p, "return")) {
            perr(&p, p.t.pos, "unsupported construct '%s' (a block body must be { return expr; })", "statement");
            goto fail;
        }
        if (next(&p)) goto fail;
    }
    if (!(l->body = expr(&p))) goto fail;
    if (block) {
        if (is_op(&p, ";") && next(&p)) goto fail;
        if (!is_op(&p, "}")) { perr(&p, p.t.pos, "unsupported construct '%s' (a block body must be { return expr; })", "statement"); goto fail; }
        if (next(&p)) goto fail;
    }
    if (p.t.k != T_EOF) {
        if (p.t.k == T_OP && p.t.len == 1 && strchr("()[]{},.?:;", p.t.p[0]))
            perr(&p, p.t.pos, "unexpected '%s' after the expression", (char[]){p.t.p[0], 0});
        else
            unsupported(&p, p.t.pos, p.t.p, p.t.len > 0 ? p.t.len : 1);
        goto fail;
    }
    return l;
fail:
    if (!e->code) br_err(e, BR_EARG, "map: cannot parse lambda \"%.100s\"", src);
    jl_free(l);
    return NULL;
}

void jl_free(JLambda *l)
{
    if (!l) return;
    for (int i = 0; i < l->nre; i++) jl_re_free(l->res[i]);
    free(l->res);
    arena_free(l->arena);
    free(l);
}

int jl_nparams(const JLambda *l) { return l->nparams; }

