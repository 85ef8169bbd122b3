/* frame.h: the runtime side of frames (runtime/frame.c): the frame
 * builtins, and the pieces of generic operations (read, indexing) that
 * builtins.c and eval.c hand over when a frame is involved. The frame
 * data structure is matrix/fb.h; files are io/frame.c; transformations
 * runtime/transform.h. */
#ifndef BRAID_RT_FRAME_H
#define BRAID_RT_FRAME_H

#include "interp.h"

/* read(file, data_type="frame", ...): a holds read's arguments in ops.def
 * order (file, format, rows, cols, header, sep, fill, default, naStrings,
 * data_type, value_type, schema). *out receives the frame. */
int rt_frame_read(Value *a, Value *out, BrErr *e);
/* Left indexing t[rl:ru, cl:cu] = src (0-based half-open ranges) with src
 * a frame, a matrix (as FP64 cells) or a scalar (one cell only). *out
 * receives the new frame. */
int rt_frame_lix(const FB *t, int64_t rl, int64_t ru, int64_t cl, int64_t cu, const Value *src, Value *out,
                 BrErr *e);
/* toString of a frame as SystemDS prints it: "# FRAME: nrow = R, ncol = C",
 * a "#" line of column names and one of value types, then the first
 * `rows` rows and `cols` columns (negative: all), cells joined by sep:
 * FP64 with `decimal` digits as matrices, booleans TRUE/FALSE, missing
 * values "null". Returns a malloc'd string (caller frees) or NULL. */
char *rt_frame_text(const FB *f, int64_t rows, int64_t cols, int decimal, const char *sep, const char *linesep,
                    BrErr *e);

/* A comparison (<, <=, >, >=, ==, !=) of two frames of equal shape, cell
 * by cell as SystemDS's FrameBlock does: per column as strings when
 * either column holds strings, else as doubles, integers or booleans;
 * two missing strings are equal, one missing string compares false.
 * *out receives a frame of BOOLEAN columns. */
int rt_frame_compare(OpCode op, const FB *a, const FB *b, Value *out, BrErr *e);

#endif
