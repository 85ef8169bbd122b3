/* framestr.h: SystemDS's native frame/string builtins beyond the frame
 * basics of frame.c: getColNames, setColNames, dropInvalidType,
 * dropInvalidLength, valueSwap and tokenize (docs/DESIGN.md, "Frame and
 * string builtins"). */
#ifndef BRAID_BI_FRAMESTR_H
#define BRAID_BI_FRAMESTR_H

#include "builtins.h"

/* Runs builtin h->bi (one of the above) on arguments a into *out (a new
 * frame the caller owns); BI_NOT_MINE for other builtins. */
int bi_frame_str(const Instr *h, Value *a, Value *out, BrErr *e);

/* Java's String.hashCode of UTF-8 text s (over its UTF-16 code units). */
int32_t fs_java_hash(const char *s);

#endif
