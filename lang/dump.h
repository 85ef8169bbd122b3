/* dump.h: prints ASTs as s-expressions (for tests and -explain). */
#ifndef BRAID_DUMP_H
#define BRAID_DUMP_H

#include <stdio.h>

#include "ast.h"

/* (neg (^ 2 2)), (+ a 1), (call f x k=1), (idx X (: 1 n) _), "str",
 * TRUE, 2, 2.0 */
void lang_dump_expr(FILE *f, const Expr *e);
/* One statement per line, nested blocks indented by two spaces. */
void lang_dump_block(FILE *f, const Block *b, int indent);
/* "function name(ins) -> (outs)" and the body. */
void lang_dump_func(FILE *f, const Func *fn);

#endif
