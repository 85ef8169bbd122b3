/* jrng.h: the random number generators SystemDS draws from, bit for bit,
 * so that a seeded rand() or sample() gives SystemDS's numbers:
 *
 * - JRand: java.util.Random (the 48-bit linear congruential generator of
 *   the Java platform's specification: seed scrambled with 0x5DEECE66D,
 *   next(bits) from the high bits, nextDouble from 26 + 27 bits);
 * - Well: WELL1024a (Panneton, L'Ecuyer and Matsumoto 2006, parameters
 *   m1 = 3, m2 = 24, m3 = 10) seeded and read as Apache Commons Math 3
 *   does (setSeed(int[]) copies, setSeed(long) expands two ints with the
 *   Mersenne Twister's initialization recurrence; nextDouble from 52 bits).
 *
 * Results are Java's int/long values: arithmetic wraps as Java's does. */
#ifndef BRAID_JRNG_H
#define BRAID_JRNG_H

#include <stdint.h>

typedef struct { uint64_t s; } JRand;

void jr_seed(JRand *r, int64_t seed);
int32_t jr_next(JRand *r, int bits);          /* next(bits) */
static inline int32_t jr_int(JRand *r) { return jr_next(r, 32); }
int32_t jr_int_below(JRand *r, int32_t bound);  /* nextInt(bound), bound > 0 */
int64_t jr_long(JRand *r);                    /* nextLong() */
double jr_double(JRand *r);                   /* nextDouble() in [0, 1) */

typedef struct {
    uint32_t v[32];
    int idx;
    double gauss;     /* the second deviate of nextGaussian, NaN if none */
} Well;

void well_seed_ints(Well *w, const int32_t *seed, int n);   /* setSeed(int[]) */
void well_seed_long(Well *w, int64_t seed);                 /* setSeed(long) */
int32_t well_next(Well *w, int bits);
int64_t well_long(Well *w);       /* nextLong() */
double well_double(Well *w);      /* nextDouble() in [0, 1) */
double well_gaussian(Well *w);    /* nextGaussian(): Box-Muller pairs */

/* Java's (long) cast of a double: truncation toward zero, NaN to 0,
 * saturation at Long.MIN_VALUE / Long.MAX_VALUE. */
int64_t java_d2l(double x);

#endif
