/* frame.h: the runtime side of frames (builtins/frame.c): the frame
 * builtins, and the pieces of generic operations (read, indexing) that
 * builtins.c and eval.c hand over when a frame is involved. The frame
 * data structure is matrix/fb.h; files are io/frame.c; transformations
 * builtins/transform.h. */
#ifndef BRAID_BI_FRAME_H
#define BRAID_BI_FRAME_H

#include "builtins.h"

/* read(file, data_type="frame", ...): a holds read's arguments in ops.def
 * order (file, format, rows, cols, header, sep, fill, default, naStrings,
 * data_type, value_type, schema). *out receives the frame. */
int bi_frame_read(Value *a, Value *out, BrErr *e);
/* toString of a frame as SystemDS prints it: "# FRAME: nrow = R, ncol = C",
 * a "#" line of column names and one of value types, then the first
 * `rows` rows and `cols` columns (negative: all), cells joined by sep:
 * FP64 with `decimal` digits as matrices, booleans TRUE/FALSE, missing
 * values "null". Returns a malloc'd string (caller frees) or NULL. */
char *bi_frame_text(const FB *f, int64_t rows, int64_t cols, int decimal, const char *sep, const char *linesep,
                    BrErr *e);


#endif
