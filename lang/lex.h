/* lex.h: the DML lexer. Turns a source text into an array of tokens with
 * 1-based line/column positions. Comments (# to end of line, / * * /) and
 * whitespace are skipped; newlines carry no meaning (positions do). */
#ifndef BRAID_LEX_H
#define BRAID_LEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/arena.h"
#include "../base/diag.h"

typedef enum {
    TK_EOF,
    TK_IDENT,     /* text: name, possibly "ns::name"; may contain dots */
    TK_INT,       /* ival */
    TK_DOUBLE,    /* dval */
    TK_STRING,    /* text: the decoded string */
    TK_ARG,       /* $name / $1: text is the name without '$' */
    /* keywords */
    TK_IF, TK_ELSE, TK_FOR, TK_PARFOR, TK_WHILE, TK_FUNCTION, TK_RETURN,
    TK_TRUE, TK_FALSE,
    /* punctuation */
    TK_LPAREN, TK_RPAREN, TK_LBRACK, TK_RBRACK, TK_LBRACE, TK_RBRACE,
    TK_COMMA, TK_SEMI, TK_COLON,
    TK_ASSIGN,    /* = */
    TK_LARROW,    /* <- */
    TK_PLUSEQ,    /* += */
    /* operators */
    TK_PLUS, TK_MINUS, TK_STAR, TK_SLASH, TK_CARET,
    TK_MATMUL,    /* %*% */
    TK_INTDIV,    /* %/% */
    TK_MOD,       /* %% */
    TK_LT, TK_LE, TK_GT, TK_GE, TK_EQ, TK_NE,
    TK_NOT, TK_AND, TK_ANDAND, TK_OR, TK_OROR,
    TK__COUNT
} TokKind;

typedef struct Token {
    TokKind kind;
    int line, col;            /* first character */
    int end_line, end_col;    /* just after the last character */
    const char *text;         /* arena string (see TokKind); NULL otherwise */
    int64_t ival;
    double dval;
} Token;

/* Tokenizes len bytes of text from file (file is used for spans as is and
 * must outlive the tokens). Lexical errors go to d (the offending
 * characters are skipped). Returns a malloc'ed array of *n tokens, the
 * last being TK_EOF (caller frees); strings live in arena a. NULL only
 * when out of memory. */
Token *lex_tokens(Arena *a, Diag *d, const char *file, const char *text,
                  size_t len, int *n);

/* How a token kind is shown in messages, e.g. "')'" or "identifier". */
const char *lex_kind_name(TokKind k);

#endif
