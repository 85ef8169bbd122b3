/* mm_int.h: helpers shared by the matrix multiplication kernels (mm.c,
 * mmchain.c); not part of the kernel API (mm.h). */
#ifndef BRAID_MM_INT_H
#define BRAID_MM_INT_H

#include "../matrix/mb.h"

/* Recounts the non-zeros of a dense result (in parallel for large ones)
 * and picks its format; releases r and returns NULL on failure. */
MB *mm_finish(MB *r, BrErr *e);

#endif
