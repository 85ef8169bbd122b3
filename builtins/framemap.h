/* framemap.h: DML's map(X, "lambda"[, margin]) over frames
 * (builtins/framemap.c), with the lambda language of builtins/jlambda.h.
 *
 *   margin 0 (default)  the lambda x -> ... runs on every cell; x is the
 *                       cell's text (numbers as Java prints them), missing
 *                       cells stay missing
 *   margin 1            on every row: x is a String[] of the row's cells,
 *                       the lambda returns a String[] of ncol values
 *   margin 2            on every column: x is the column's String[], the
 *                       lambda returns a String[] of nrow values
 *   (x, y) -> ...       on an n x 1 frame: the n x n frame of f(X[i], X[j])
 *                       for i < j (SystemDS's mapDist: the upper triangle
 *                       of pairs without a missing cell), 0 elsewhere
 * Each output column gets the type of its values: BOOLEAN if all are
 * booleans, INT64 if all are integers, FP64 if all are numbers, else
 * STRING (numbers formatted as Java does). Cells are evaluated in parallel.
 */
#ifndef BRAID_FRAMEMAP_H
#define BRAID_FRAMEMAP_H

#include "../matrix/value.h"

/* map over frame f: a new frame (refs 1) of STRING columns, as SystemDS's
 * FrameBlock.map, or NULL with e set. Errors of a
 * cell name its row and column (1-based). */
FB *fm_map(const FB *f, const char *lambda, int64_t margin, BrErr *e);

/* The builtin: a = (target, expr, margin). A frame target gives a frame;
 * a scalar target is mapped as a 1x1 frame and gives a scalar. */
int bi_frame_map(const Value *a, Value *out, BrErr *e);

#endif
