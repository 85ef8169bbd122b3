/* allocfail.h: allocation-failure injection armed from inside a process
 * (tests). BRAID_FAIL_ALLOC=N (base/base.c, tests/test_allocfail.c)
 * fails the Nth allocation of a whole braid run; a test that calls one
 * part of braid (test_amulet: a where-loop's kernel paths) arms it
 * around that call instead, so that only the part's own allocations
 * count. Counted over every thread's allocations through the br_*
 * wrappers (br_malloc, br_calloc, br_realloc, br_alloc_aligned,
 * br_alloc_scratch, takes from a buffer pool included). */
#ifndef BRAID_ALLOCFAIL_H
#define BRAID_ALLOCFAIL_H

/* From now on the nth allocation fails (n > 0, once), none fails but
 * they are counted (n == 0), or the injection is off (n < 0). No line is
 * printed when one fails. Returns the allocations counted since the last
 * call (or since BRAID_FAIL_ALLOC's start). */
long br_alloc_fail_arm(long n);

#endif
