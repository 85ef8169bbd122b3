/* jlutil.h: map()'s non-lambda Java calls (builtins/jlutil.c).
 *
 * SystemDS's FrameBlock.map(expr) treats an expression without "->" as a
 * call of one of two whole-frame routines, chosen by its argument list
 * (the text between the first '(' and the first ')'), whatever the name
 * before it says:
 *   "(threshold,replace)"  (a ',')  DMVUtils.syntacticalPatternDiscovery:
 *       per column, the first of six pattern levels with a pattern whose
 *       share of the rows exceeds threshold; other cells become replace
 *       (dmv.dml's "UtilFunctions.syntacticalPatternDiscovery(t,r)");
 *   "(iters;mode;freq;alpha;beta;gamma)"  (a ';')
 *       EMAUtils.exponentialMovingAverageImputation: per column the
 *       single/double/triple exponential smoothing predictions, an FP64
 *       frame (ema.dml's "UtilFunctions.exponentialMovingAverageImputation(..)").
 * The rules and SystemDS's quirks are listed in jlutil.c and
 * docs/parity.md. */
#ifndef BRAID_JLUTIL_H
#define BRAID_JLUTIL_H

#include "../matrix/value.h"

/* true when expr is such a call (no "->", a '(' before a ')' and a ',' or
 * ';' between them); fm_map then hands it to jlu_map. */
bool jlu_is_call(const char *expr);

/* Runs the call on f: a new frame (refs 1, the caller releases it) or
 * NULL with e set ("map: ..."). */
FB *jlu_map(const FB *f, const char *expr, BrErr *e);

#endif
