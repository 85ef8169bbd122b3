/* vec.h: growable arrays. An array is three fields of the owner's struct
 * (pointer, count, capacity), grown with br_grow before each append:
 *
 *     if (!br_grow((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v))
 *         return <out-of-memory error>;
 *     l->v[l->n++] = x;
 *
 * Out-of-memory policy: br_grow never aborts. On failure it leaves the
 * array as it was (still valid, still owned by the caller) and returns
 * false; the caller reports BR_ENOMEM (run time: a BrErr or rt_fail;
 * compile time: a Diag error or HopDag.oom, which plan_compile reports). */
#ifndef BRAID_VEC_H
#define BRAID_VEC_H

#include <stdbool.h>
#include <stddef.h>

/* Makes room for need elements of elem bytes in *p, of capacity *cap
 * (capacity at least doubles, starting at 16). Returns false, with *p and
 * *cap unchanged, when need is negative, the size overflows or memory
 * runs out. */
bool br_grow(void **p, int *cap, int need, size_t elem);

#endif
