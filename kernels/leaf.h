/* leaf.h: the ISA leaf kernels of kernels/ and their choice at run time
 * (ARCHITECTURE.md: SIMD code lives only in leaf files, chosen by cpuid).
 * Internal to kernels/ (and codegen/'s machine measurements).
 *
 * A leaf file (kernels/<name>_leaf.c) holds the inner loops of kernels: no
 * threads, no allocation, no error paths. The Makefile compiles it once
 * for the target's baseline (the generic copy: the portable fallback)
 * and, on x86-64, once more per SIMD level with -march=x86-64-v3 (avx2)
 * and -march=x86-64-v4 (avx512) and -DK_ISA=<level>. Each copy defines
 * one table of function pointers named K_LEAF(name), i.e. name_<level>,
 * so every copy has the same signatures; callers take the table of the
 * level k_isa() chose, e.g. k_leaves(k_isa())->ew->unary(...).
 *
 * Results: the copies compile the same C (explicit fma, no contraction:
 * -std=c11 implies -ffp-contract=off) with every lane written out, so
 * they give the same bits, except where a leaf file says otherwise
 * (`omp simd` reductions, whose partial sums follow the vector width).
 * Intrinsics appear only under the feature macros of their level
 * (__AVX2__, __AVX512F__); the generic copy leaves such entries NULL or
 * runs the portable loop. */
#ifndef BRAID_K_LEAF_H
#define BRAID_K_LEAF_H

#include <stdbool.h>
#include <stdint.h>

#include "../base/ops.h"

/* SIMD levels, lowest first. */
typedef enum { K_ISA_GENERIC, K_ISA_AVX2, K_ISA_AVX512, K_ISA__COUNT } KIsa;

/* The level in use: the highest this CPU and OS run (k_isa_cpu), capped
 * by BRAID_ISA=generic|avx2|avx512 (read once) or by k_isa_set. */
KIsa k_isa(void);
/* The highest level this CPU and OS run (generic off x86-64). */
KIsa k_isa_cpu(void);
/* Caps the level in use at isa (process-wide; tests and benchmarks
 * compare the copies); returns the level now in use. */
KIsa k_isa_set(KIsa isa);
/* "generic", "avx2", "avx512". */
const char *k_isa_name(KIsa isa);

/* The table name of the copy being compiled (see above). */
#ifndef K_ISA
#define K_ISA generic
#endif
#define K_LEAF_CAT_(name, isa) name##_##isa
#define K_LEAF_CAT(name, isa) K_LEAF_CAT_(name, isa)
#define K_LEAF(name) K_LEAF_CAT(name, K_ISA)

/* ---- reorg_leaf.c: transposition ---- */
typedef struct KReorgLeaf {
    /* Transposes the tile rows [i0, i1) x columns [j0, j1) of the
     * row-major m x n matrix a into c (n x m row-major): c[j*m + i] =
     * a[i*n + j]. nt: the tile may be written with non-temporal stores
     * (then a store fence), when c + j*m + i is 32-byte aligned for
     * i - i0 a multiple of 8 (the caller checks); a hint. */
    void (*transpose_tile)(const double *a, double *c, int64_t m, int64_t n, int64_t i0, int64_t i1,
                           int64_t j0, int64_t j1, bool nt);
} KReorgLeaf;
extern const KReorgLeaf k_reorg_leaf_generic, k_reorg_leaf_avx2, k_reorg_leaf_avx512;

/* ---- ew_leaf.c: flat elementwise loops ---- */
typedef struct KEwLeaf {
    /* o[k] = op(x[k]), k < n (op: a unary elementwise operator; o may
     * be x) */
    void (*unary)(OpCode op, const double *x, double *o, int64_t n);
    /* o[ci[k]] = op(v[k]), k < n */
    void (*unary_scatter)(OpCode op, const double *v, const int32_t *ci, double *o, int64_t n);
    /* o[k] = x[k] op y[k]; x[k] op s; s op y[k] (op: binary elementwise) */
    void (*bin_vv)(OpCode op, const double *x, const double *y, double *o, int64_t n);
    void (*bin_vs)(OpCode op, const double *x, double s, double *o, int64_t n);
    void (*bin_sv)(OpCode op, double s, const double *y, double *o, int64_t n);
    /* o[k] = v */
    void (*fill)(double *o, double v, int64_t n);
    /* o[k] = c[k] != 0 ? a[k] : b[k] */
    void (*select)(const double *c, const double *a, const double *b, double *o, int64_t n);
    /* the non-zeros among x[0..n) */
    int64_t (*nz_count)(const double *x, int64_t n);
} KEwLeaf;
extern const KEwLeaf k_ew_leaf_generic, k_ew_leaf_avx2, k_ew_leaf_avx512;

/* ---- the tables of one level ---- */
typedef struct KLeaves {
    const KEwLeaf *ew;
    const KReorgLeaf *reorg;
} KLeaves;
/* The tables of level isa (off x86-64 every level has the generic
 * copies), e.g. k_leaves(k_isa())->ew. */
const KLeaves *k_leaves(KIsa isa);

#endif
