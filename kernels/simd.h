/* simd.h: ISA-specific leaf kernels of kernels/ and the run-time check
 * that picks them (ARCHITECTURE.md: AVX2/AVX-512 code lives only in leaf
 * files, chosen by cpuid). Internal to kernels/; every leaf kernel has a
 * portable loop next to its caller that does the same. */
#ifndef BRAID_K_SIMD_H
#define BRAID_K_SIMD_H

#include <stdbool.h>
#include <stdint.h>

/* True when the CPU runs AVX2 (cpuid, checked once). */
bool k_simd_avx2(void);

/* Transposes the tile rows [i0, i1) x columns [j0, j1) of the row-major
 * m x n matrix a into c (n x m row-major): c[j*m + i] = a[i*n + j]. Full
 * 8 x 8 blocks go through AVX2 registers (each output row gets whole
 * 64-byte lines), the ragged edges cell by cell. nt: the blocks are
 * written with non-temporal stores, then a store fence; the caller
 * guarantees c + j*m + i is 32-byte aligned for i - i0 a multiple of 8. */
void k_avx2_transpose_tile(const double *a, double *c, int64_t m, int64_t n,
                           int64_t i0, int64_t i1, int64_t j0, int64_t j1, bool nt);

#endif
