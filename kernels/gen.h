/* gen.h: data generation kernels: seq(), rand(), sample().
 *
 * Every function returns a NEW block the caller owns (refs 1, release with
 * mb_release), or NULL with e set.
 *
 * rand and sample give SystemDS's numbers for a seed (LibMatrixDatagen's
 * algorithm over java.util.Random and WELL1024a, base/jrng.h): the same
 * matrix whatever the thread count. A seed of -1 asks for a fresh seed
 * (from the OS) on each call.
 */
#ifndef BRAID_K_GEN_H
#define BRAID_K_GEN_H

#include "../matrix/mb.h"

/* seq(from, to, incr) as a column vector: from + i*incr for i = 0..n-1 with
 * n = floor((to-from)/incr + 1e-10) + 1 (R's rule; the last value is
 * clamped to to). incr 0 means 1 or -1 by direction; an increment of the
 * wrong sign (or non-finite arguments) is an error. */
MB *k_seq(double from, double to, double incr, BrErr *e);

/* rand(rows=, cols=, min=, max=, sparsity=, pdf=, lambda=, seed=): each
 * cell is non-zero with probability sparsity; pdf "uniform" gives
 * min + (max-min)*u, "normal" standard normal values (min/max ignored),
 * "poisson" Poisson(lambda) counts, "cb_uniform" and "cb_normal"
 * SystemDS's counter-based (Philox4x64) uniform [0, 1) and standard normal
 * values (min/max ignored; sparsity 1 or 0 only, as SystemDS draws no
 * values otherwise). Drawn in blocks of br_blocksize()
 * squared (sysds.defaultblocksize), each from its own seed; a block
 * SystemDS would hold sparse selects its cells by geometric skips, others
 * cell by cell. Sparse output when sparsity < 0.4. Parallel over row
 * blocks. */
MB *k_rand(int64_t rows, int64_t cols, double min, double max,
           double sparsity, const char *pdf, double lambda, int64_t seed,
           BrErr *e);

/* Philox4x64 with 10 rounds (Salmon et al., "Parallel random numbers: as
 * easy as 1, 2, 3", SC 2011): the block of four words at counter ctr under
 * key; SystemDS's CB_UNIFORM/CB_NORMAL generators' core. */
void k_philox4x64(const uint64_t key[2], const uint64_t ctr[4], uint64_t out[4]);

/* sample(range, size, replace, seed): size x 1 column of values in
 * 1..range, distinct unless replace (then size <= range is required).
 * SystemDS's draws: with replacement uniform longs, without reservoir
 * sampling over 1..range and a shuffle (O(range)); a range beyond an int
 * (where SystemDS's loop fails) takes Floyd's O(size) subset sampling. */
MB *k_sample(int64_t range, int64_t size, bool replace, int64_t seed,
             BrErr *e);

/* The seed the last k_rand call on this thread drew with: its own, or the
 * fresh one it chose for seed -1 (still -1 for a constant matrix, min =
 * max at sparsity 1), as SystemDS's lineage records rand's seed. */
int64_t k_rand_seed_used(void);

/* The seed a call with seed -1 would use: a fresh one from the OS (or the
 * clock). Exposed so the runtime can record seeds it generated. */
int64_t k_fresh_seed(void);

#endif
