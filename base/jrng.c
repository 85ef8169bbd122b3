/* jrng.c: java.util.Random and Commons Math's WELL1024a (jrng.h). The
 * arithmetic is on unsigned words so that it wraps as Java's int and long
 * do; the casts back to signed give Java's two's-complement values. */
#include "jrng.h"
#include "ops.h"

#include <math.h>

#define MASK48 ((UINT64_C(1) << 48) - 1)

void jr_seed(JRand *r, int64_t seed)
{
    r->s = ((uint64_t)seed ^ UINT64_C(0x5DEECE66D)) & MASK48;
}

int32_t jr_next(JRand *r, int bits)
{
    r->s = (r->s * UINT64_C(0x5DEECE66D) + 0xB) & MASK48;
    return (int32_t)(uint32_t)(r->s >> (48 - bits));
}

int32_t jr_int_below(JRand *r, int32_t bound)
{
    int32_t m = bound - 1;
    int32_t x = jr_next(r, 31);
    if ((bound & m) == 0) return (int32_t)(((int64_t)bound * x) >> 31);
    /* reject the top partial range: Java's u - r + m < 0 test, where the
     * sum overflows int exactly when u falls in that range */
    for (int32_t u = x;; u = jr_next(r, 31)) {
        x = u % bound;
        if ((int32_t)((uint32_t)u - (uint32_t)x + (uint32_t)m) >= 0) return x;
    }
}

int64_t jr_long(JRand *r)
{
    uint64_t hi = (uint64_t)(int64_t)jr_next(r, 32) << 32;
    return (int64_t)(hi + (uint64_t)(int64_t)jr_next(r, 32));
}

double jr_double(JRand *r)
{
    int64_t hi = (int64_t)jr_next(r, 26) << 27;
    return (double)(hi + jr_next(r, 27)) * 0x1.0p-53;
}

void well_seed_ints(Well *w, const int32_t *seed, int n)
{
    int k = n < 32 ? n : 32;
    for (int i = 0; i < k; i++) w->v[i] = (uint32_t)seed[i];
    for (int i = k; i < 32; i++) {
        int64_t l = (int32_t)w->v[i - k];   /* the int, sign-extended */
        uint64_t x = (uint64_t)(l ^ (l >> 30));
        w->v[i] = (uint32_t)(UINT64_C(1812433253) * x + (uint64_t)i);
    }
    w->idx = 0;
    w->gauss = NAN;
}

void well_seed_long(Well *w, int64_t seed)
{
    int32_t s[2] = {(int32_t)(uint32_t)((uint64_t)seed >> 32), (int32_t)(uint32_t)seed};
    well_seed_ints(w, s, 2);
}

int32_t well_next(Well *w, int bits)
{
    uint32_t *v = w->v;
    int i = w->idx, rm1 = (i + 31) & 31;
    uint32_t v0 = v[i], m1 = v[(i + 3) & 31], m2 = v[(i + 24) & 31], m3 = v[(i + 10) & 31];
    uint32_t z0 = v[rm1];
    uint32_t z1 = v0 ^ (m1 ^ (m1 >> 8));
    uint32_t z2 = (m2 ^ (m2 << 19)) ^ (m3 ^ (m3 << 14));
    uint32_t z3 = z1 ^ z2;
    uint32_t z4 = (z0 ^ (z0 << 11)) ^ (z1 ^ (z1 << 7)) ^ (z2 ^ (z2 << 13));
    v[i] = z3;
    v[rm1] = z4;
    w->idx = rm1;
    return (int32_t)(z4 >> (32 - bits));
}

int64_t well_long(Well *w)
{
    uint64_t hi = (uint64_t)(uint32_t)well_next(w, 32) << 32;
    return (int64_t)(hi | (uint32_t)well_next(w, 32));
}

double well_double(Well *w)
{
    uint64_t hi = (uint64_t)(uint32_t)well_next(w, 26) << 26;
    return (double)(hi | (uint32_t)well_next(w, 26)) * 0x1.0p-52;
}

double well_gaussian(Well *w)
{
    if (!isnan(w->gauss)) {
        double g = w->gauss;
        w->gauss = NAN;
        return g;
    }
    double x = well_double(w), y = well_double(w);
    double alpha = 2 * M_PI * x, r = sqrt(-2 * log(y));
    w->gauss = r * sin(alpha);
    return r * cos(alpha);
}

int64_t java_d2l(double x) { return ops_to_i64(x); }
