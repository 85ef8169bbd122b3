/* wire.h: values and names as bytes for messages between ranks (remote
 * parfor tasks and the plans they ship, runtime/distparfor.c and
 * runtime/planship.c). Every rank runs the same braid binary, so numbers
 * travel in the machine's own layout. Writers append to a StrBuf (its
 * oom flag records a failed allocation); a reader (WRd) marks itself bad
 * on a short or malformed message and then returns zeros. */
#ifndef BRAID_WIRE_H
#define BRAID_WIRE_H

#include <stdint.h>

#include "../base/strbuf.h"
#include "../matrix/value.h"

void w_put(StrBuf *b, const void *p, size_t n);
/* A name; NULL travels as a distinct mark and reads back as NULL. */
void w_put_name(StrBuf *b, const char *s);
void w_put_i32(StrBuf *b, int32_t x);
/* A source position: file name, line, column. */
void w_put_span(StrBuf *b, Span s);
/* false: a kind a message does not carry (lists, frames, ...). */
bool w_put_value(StrBuf *b, const Value *v);

typedef struct WRd { const char *p, *end; bool bad; } WRd;

const void *w_take(WRd *r, size_t n);
void w_get(WRd *r, void *out, size_t n);
int32_t w_get_i32(WRd *r);
uint64_t w_get_u64(WRd *r);
uint8_t w_get_u8(WRd *r);
/* A name inside the buffer (NUL-terminated there); NULL for a NULL name
 * (and on a bad message, which marks r bad). */
const char *w_get_name(WRd *r);
Value w_get_value(WRd *r, BrErr *e);
Span w_get_span(WRd *r);

#endif
