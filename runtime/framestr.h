/* framestr.h: SystemDS's native frame/string builtins beyond the frame
 * basics of frame.c: getColNames, setColNames, dropInvalidType,
 * dropInvalidLength, valueSwap and tokenize (docs/DESIGN.md, "Frame and
 * string builtins"). */
#ifndef BRAID_RT_FRAMESTR_H
#define BRAID_RT_FRAMESTR_H

#include "interp.h"

/* Runs builtin h->bi (one of the above) on arguments a into *out (a new
 * frame the caller owns); RT_NOT_MINE for other builtins. */
int rt_frame_str(const Instr *h, Value *a, Value *out, BrErr *e);

#endif
