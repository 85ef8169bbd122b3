/* lex.c: the DML lexer (token rules of DML.md, "Lexical"). */
#include "lex.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Lexer {
    Arena *a;
    Diag *d;
    const char *file;
    const char *s;          /* text */
    size_t len, pos;
    int line, col;
    Token *toks;
    int n, cap;
    bool oom;
} Lexer;

static const char *const kind_names[TK__COUNT] = {
    [TK_EOF] = "end of file", [TK_IDENT] = "identifier",
    [TK_INT] = "integer", [TK_DOUBLE] = "number", [TK_STRING] = "string",
    [TK_ARG] = "$-argument",
    [TK_IF] = "'if'", [TK_ELSE] = "'else'", [TK_FOR] = "'for'",
    [TK_PARFOR] = "'parfor'", [TK_WHILE] = "'while'",
    [TK_FUNCTION] = "'function'", [TK_RETURN] = "'return'",
    [TK_TRUE] = "'TRUE'", [TK_FALSE] = "'FALSE'",
    [TK_LPAREN] = "'('", [TK_RPAREN] = "')'", [TK_LBRACK] = "'['",
    [TK_RBRACK] = "']'", [TK_LBRACE] = "'{'", [TK_RBRACE] = "'}'",
    [TK_COMMA] = "','", [TK_SEMI] = "';'", [TK_COLON] = "':'",
    [TK_ASSIGN] = "'='", [TK_LARROW] = "'<-'", [TK_PLUSEQ] = "'+='",
    [TK_PLUS] = "'+'", [TK_MINUS] = "'-'", [TK_STAR] = "'*'",
    [TK_SLASH] = "'/'", [TK_CARET] = "'^'", [TK_MATMUL] = "'%*%'",
    [TK_INTDIV] = "'%/%'", [TK_MOD] = "'%%'", [TK_LT] = "'<'",
    [TK_LE] = "'<='", [TK_GT] = "'>'", [TK_GE] = "'>='", [TK_EQ] = "'=='",
    [TK_NE] = "'!='", [TK_NOT] = "'!'", [TK_AND] = "'&'",
    [TK_ANDAND] = "'&&'", [TK_OR] = "'|'", [TK_OROR] = "'||'",
};

const char *lex_kind_name(TokKind k)
{
    return (k >= 0 && k < TK__COUNT && kind_names[k]) ? kind_names[k] : "token";
}

static int peekc(const Lexer *L, size_t k)
{
    return L->pos + k < L->len ? (unsigned char)L->s[L->pos + k] : -1;
}

/* Consumes one character, keeping line/col. */
static void step(Lexer *L)
{
    if (L->pos >= L->len) return;
    if (L->s[L->pos] == '\n') {
        L->line++;
        L->col = 1;
    } else {
        L->col++;
    }
    L->pos++;
}

static bool is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_idchar(int c) { return is_alpha(c) || is_digit(c) || c == '.'; }

static void lerr(Lexer *L, int line, int col, const char *fmt, const char *arg)
{
    Span sp = { L->file, line, col };
    diag_error(L->d, sp, fmt, arg);
}

/* Appends a token starting at (line, col) and ending at the current
 * position; returns it (NULL when out of memory). */
static Token *push(Lexer *L, TokKind k, int line, int col)
{
    if (L->n == L->cap) {
        int nc = L->cap ? 2 * L->cap : 256;
        Token *t = realloc(L->toks, (size_t)nc * sizeof(Token));
        if (!t) {
            L->oom = true;
            return NULL;
        }
        L->toks = t;
        L->cap = nc;
    }
    Token *t = &L->toks[L->n++];
    memset(t, 0, sizeof *t);
    t->kind = k;
    t->line = line;
    t->col = col;
    t->end_line = L->line;
    t->end_col = L->col;
    return t;
}

static const struct { const char *w; TokKind k; } keywords[] = {
    { "if", TK_IF }, { "else", TK_ELSE }, { "for", TK_FOR },
    { "parfor", TK_PARFOR }, { "while", TK_WHILE },
    { "function", TK_FUNCTION }, { "return", TK_RETURN },
    { "TRUE", TK_TRUE }, { "FALSE", TK_FALSE },
};

static void lex_ident(Lexer *L, int line, int col)
{
    size_t start = L->pos;
    while (is_idchar(peekc(L, 0))) step(L);
    /* ns::name */
    if (peekc(L, 0) == ':' && peekc(L, 1) == ':' && is_alpha(peekc(L, 2))) {
        step(L);
        step(L);
        while (is_idchar(peekc(L, 0))) step(L);
    }
    size_t n = L->pos - start;
    for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++) {
        if (strlen(keywords[i].w) == n && memcmp(keywords[i].w, L->s + start, n) == 0) {
            push(L, keywords[i].k, line, col);
            return;
        }
    }
    Token *t = push(L, TK_IDENT, line, col);
    if (t && !(t->text = arena_strndup(L->a, L->s + start, n))) L->oom = true;
}

/* Integer (digits, optional L) or double (1., .5, 1e-6, 2E+3, optional L
 * suffix). An integer too large for int64 becomes a double. */
static void lex_number(Lexer *L, int line, int col)
{
    size_t start = L->pos;
    bool dbl = false;
    while (is_digit(peekc(L, 0))) step(L);
    if (peekc(L, 0) == '.') {
        dbl = true;
        step(L);
        while (is_digit(peekc(L, 0))) step(L);
    }
    int c = peekc(L, 0);
    if (c == 'e' || c == 'E') {
        size_t k = 1;
        if (peekc(L, 1) == '+' || peekc(L, 1) == '-') k = 2;
        if (is_digit(peekc(L, k))) {
            dbl = true;
            for (size_t i = 0; i < k; i++) step(L);
            while (is_digit(peekc(L, 0))) step(L);
        }
    }
    size_t end = L->pos;
    if (peekc(L, 0) == 'L' || peekc(L, 0) == 'l') step(L);
    char buf[128];
    size_t n = end - start;
    if (n >= sizeof buf) {
        /* absurdly long literal: keep its value approximately */
        char *tmp = malloc(n + 1);
        if (!tmp) {
            L->oom = true;
            return;
        }
        memcpy(tmp, L->s + start, n);
        tmp[n] = 0;
        Token *t = push(L, TK_DOUBLE, line, col);
        if (t) t->dval = strtod(tmp, NULL);
        free(tmp);
        return;
    }
    memcpy(buf, L->s + start, n);
    buf[n] = 0;
    if (!dbl) {
        int64_t v = 0;
        bool over = false;
        for (size_t i = 0; i < n; i++) {
            int dgt = buf[i] - '0';
            if (v > (INT64_MAX - dgt) / 10) {
                over = true;
                break;
            }
            v = v * 10 + dgt;
        }
        if (!over) {
            Token *t = push(L, TK_INT, line, col);
            if (t) t->ival = v;
            return;
        }
    }
    Token *t = push(L, TK_DOUBLE, line, col);
    if (t) t->dval = strtod(buf, NULL);
}

/* '...' or "..." with escapes \b \t \n \f \r \" \' \\ (an unknown escape
 * keeps its backslash). Strings may span lines. */
static void lex_string(Lexer *L, int line, int col)
{
    int q = peekc(L, 0);
    step(L);
    size_t cap = 64, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        L->oom = true;
        return;
    }
    for (;;) {
        int c = peekc(L, 0);
        if (c < 0) {
            lerr(L, line, col, "unterminated string%s", "");
            free(buf);
            return;
        }
        step(L);
        if (c == q) break;
        if (c == '\\') {
            int e = peekc(L, 0);
            int out = -1;
            switch (e) {
            case 'b': out = '\b'; break;
            case 't': out = '\t'; break;
            case 'n': out = '\n'; break;
            case 'f': out = '\f'; break;
            case 'r': out = '\r'; break;
            case '"': out = '"'; break;
            case '\'': out = '\''; break;
            case '\\': out = '\\'; break;
            default: break;
            }
            if (out >= 0) {
                step(L);
                c = out;
            }
        }
        if (n + 2 > cap) {
            cap *= 2;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                L->oom = true;
                return;
            }
            buf = nb;
        }
        buf[n++] = (char)c;
    }
    buf[n] = 0;
    Token *t = push(L, TK_STRING, line, col);
    if (t && !(t->text = arena_strndup(L->a, buf, n))) L->oom = true;
    free(buf);
}

/* Operators and punctuation; returns false for an unknown character. */
static bool lex_op(Lexer *L, int line, int col)
{
    int c = peekc(L, 0), c1 = peekc(L, 1), c2 = peekc(L, 2);
    TokKind k;
    int len = 1;
    switch (c) {
    case '(': k = TK_LPAREN; break;
    case ')': k = TK_RPAREN; break;
    case '[': k = TK_LBRACK; break;
    case ']': k = TK_RBRACK; break;
    case '{': k = TK_LBRACE; break;
    case '}': k = TK_RBRACE; break;
    case ',': k = TK_COMMA; break;
    case ';': k = TK_SEMI; break;
    case ':': k = TK_COLON; break;
    case '=': if (c1 == '=') { k = TK_EQ; len = 2; } else k = TK_ASSIGN; break;
    case '<':
        if (c1 == '=') { k = TK_LE; len = 2; }
        else if (c1 == '-') { k = TK_LARROW; len = 2; }
        else k = TK_LT;
        break;
    case '>': if (c1 == '=') { k = TK_GE; len = 2; } else k = TK_GT; break;
    case '!': if (c1 == '=') { k = TK_NE; len = 2; } else k = TK_NOT; break;
    case '&': if (c1 == '&') { k = TK_ANDAND; len = 2; } else k = TK_AND; break;
    case '|': if (c1 == '|') { k = TK_OROR; len = 2; } else k = TK_OR; break;
    case '+': if (c1 == '=') { k = TK_PLUSEQ; len = 2; } else k = TK_PLUS; break;
    case '-': k = TK_MINUS; break;
    case '*': k = TK_STAR; break;
    case '/': k = TK_SLASH; break;
    case '^': k = TK_CARET; break;
    case '%':
        if (c1 == '*' && c2 == '%') { k = TK_MATMUL; len = 3; }
        else if (c1 == '/' && c2 == '%') { k = TK_INTDIV; len = 3; }
        else if (c1 == '%') { k = TK_MOD; len = 2; }
        else return false;
        break;
    default: return false;
    }
    for (int i = 0; i < len; i++) step(L);
    push(L, k, line, col);
    return true;
}

Token *lex_tokens(Arena *a, Diag *d, const char *file, const char *text,
                  size_t len, int *n)
{
    Lexer L = { .a = a, .d = d, .file = file, .s = text, .len = len,
                .line = 1, .col = 1 };
    *n = 0;
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) L.pos = 3;  /* UTF-8 BOM */
    while (!L.oom) {
        int c = peekc(&L, 0);
        if (c < 0) break;
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
            step(&L);
            continue;
        }
        int line = L.line, col = L.col;
        if (c == '#') {
            while (peekc(&L, 0) >= 0 && peekc(&L, 0) != '\n') step(&L);
            continue;
        }
        if (c == '/' && peekc(&L, 1) == '*') {
            step(&L);
            step(&L);
            for (;;) {
                if (peekc(&L, 0) < 0) {
                    lerr(&L, line, col, "unterminated comment%s", "");
                    break;
                }
                if (peekc(&L, 0) == '*' && peekc(&L, 1) == '/') {
                    step(&L);
                    step(&L);
                    break;
                }
                step(&L);
            }
            continue;
        }
        if (is_alpha(c)) {
            lex_ident(&L, line, col);
        } else if (is_digit(c) || (c == '.' && is_digit(peekc(&L, 1)))) {
            lex_number(&L, line, col);
        } else if (c == '"' || c == '\'') {
            lex_string(&L, line, col);
        } else if (c == '$') {
            step(&L);
            size_t start = L.pos;
            while (is_alpha(peekc(&L, 0)) || is_digit(peekc(&L, 0))) step(&L);
            if (L.pos == start) {
                lerr(&L, line, col, "expected a name after '$'%s", "");
                continue;
            }
            Token *t = push(&L, TK_ARG, line, col);
            if (t && !(t->text = arena_strndup(a, text + start, L.pos - start))) L.oom = true;
        } else if (!lex_op(&L, line, col)) {
            char what[16];
            if (c >= 32 && c < 127) snprintf(what, sizeof what, "'%c'", c);
            else snprintf(what, sizeof what, "0x%02x", c);
            /* SystemDS's lexer reports such a character and skips it
             * (scripts it ships rely on that: a stray '.' after a
             * statement); a warning here, so the parser's error, if the
             * rest does not parse, has the cause next to it */
            Span sp = { L.file, line, col };
            diag_warning(L.d, sp, "unexpected character %s ignored", what);
            step(&L);
        }
    }
    if (!L.oom) push(&L, TK_EOF, L.line, L.col);
    if (L.oom) {
        free(L.toks);
        return NULL;
    }
    *n = L.n;
    return L.toks;
}
