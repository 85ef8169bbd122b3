/* fft.h: SystemDS's signal builtins on matrix blocks: fft/ifft (2-D),
 * fft_linearized/ifft_linearized (one transform per row), stft (per row,
 * rectangular windows) and rowClassMeet (rcm).
 *
 * Conventions (SystemDS's LibMatrixFourier/LibMatrixSTFT): the forward
 * transform is X[k] = sum_j x[j] exp(-2 pi i j k / n); the inverse uses
 * exp(+...) and divides by n in every transformed dimension, so ifft of
 * fft is the identity. Transformed lengths must be powers of two (SystemDS
 * rejects other lengths too; braid says so with a "dimension" error). */
#ifndef BRAID_FFT_H
#define BRAID_FFT_H

#include "../matrix/mb.h"

/* fft/ifft of the complex matrix re + i*im (im NULL: zero). rows_only
 * (the _linearized forms): each row on its own, only ncol must be a power
 * of two; otherwise the 2-D transform (rows, then columns), both dimensions
 * powers of two. On success *ore and *oim are new blocks of re's shape
 * (caller releases); returns 0, else the error code. */
int k_fft(const MB *re, const MB *im, bool inverse, bool rows_only, MB **ore, MB **oim, BrErr *e);

/* stft(re, [im,] windowSize, overlap): per row, frames start every
 * win - overlap columns while start < ncol - overlap; each frame takes win
 * values (zeros past the end) and is transformed; the frames' spectra are
 * laid side by side: the outputs are nrow x (frames * win). win must be a
 * power of two and 0 <= overlap < win. New blocks in *ore / *oim. */
int k_stft(const MB *re, const MB *im, int64_t win, int64_t overlap, MB **ore, MB **oim, BrErr *e);

/* rowClassMeet(A, B): per row i, columns j with A[i,j] != 0 and B[i,j] != 0
 * (labels truncated to integers) fall into classes by the pair of labels;
 * C[i,j] numbers the classes 1, 2, ... in order of first occurrence along
 * the row, N[i,j] is the size of j's class; both 0 elsewhere. A one-row A
 * or B applies to every row of the other; only the first min(ncol) columns
 * can be non-zero. Outputs are max(nrow) x max(ncol). New blocks in *c, *n. */
int k_rcm(const MB *a, const MB *b, MB **c, MB **n, BrErr *e);

#endif
