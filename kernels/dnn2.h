/* dnn2.h: the stateful deep-learning builtins of DML (kernels/dnn2.c):
 * batch_norm2d, batch_norm2d_backward, lstm and lstm_backward, with
 * SystemDS's argument lists and output lists.
 *
 * Batch normalization (layout of kernels/dnn.h): X is N x (C*HW), one
 * image per row, channel c in columns [c*HW, (c+1)*HW); gamma, beta,
 * ema_mean, ema_var, cache_mean, cache_inv_var are C x 1. Training uses
 * the batch statistics of each channel over its N*HW cells (mean and the
 * uncorrected variance); testing uses ema_mean and ema_var.
 *
 * LSTM (SystemDS's nn layer): X is N x (T*D) (timestep t in columns
 * [t*D, (t+1)*D)), W is (D+M) x 4M, b is 1 x 4M, out0 and c0 N x M. Per
 * timestep: ifog = [X_t, out_prev] W + b, gates i, f, o = sigmoid of the
 * first three M-column blocks, g = tanh of the last, c = f*c_prev + i*g,
 * out = o*tanh(c). M = ncol(W)/4, D = nrow(W) - M, T = ncol(X)/D.
 *
 * Every function returns NEW blocks the caller owns (release each with
 * mb_release), or an error code with e set and every output NULL. Inputs
 * are never modified and may be dense or sparse. Shape errors name the
 * function and contain "dimension". Work runs in parallel over fixed
 * blocks of rows (independent of the thread count); sums over rows are
 * Kahan sums (of per-row partial sums) within a block, combined in block
 * order, so results do not depend on the thread count. */
#ifndef BRAID_K_DNN2_H
#define BRAID_K_DNN2_H

#include "../matrix/mb.h"

/* batch_norm2d: out[0] = normalized X (N x CHW), out[1] = ema_mean_upd,
 * out[2] = ema_var_upd, out[3] = cache_mean, out[4] = cache_inv_var
 * (C x 1 each). train: batch statistics, ema_upd = mu*ema + (1-mu)*stat;
 * otherwise ema_mean/ema_var are used and passed through. */
int k_batch_norm2d(const MB *X, const MB *gamma, const MB *beta, const MB *ema_mean, const MB *ema_var,
                   bool train, double eps, double mu, MB *out[5], BrErr *e);

/* batch_norm2d_backward: out[0] = dX (N x CHW), out[1] = dgamma,
 * out[2] = dbeta (C x 1), from the forward caches (eps is not needed
 * once cache_inv_var is known; it is checked to be a number only). */
int k_batch_norm2d_bwd(const MB *X, const MB *dout, const MB *gamma, double eps, const MB *cache_mean,
                       const MB *cache_inv_var, MB *out[3], BrErr *e);

/* lstm: out[0] = out (N x T*M with return_sequences, else N x M),
 * out[1] = c (N x M), out[2] = cache_out, out[3] = cache_c (T x N*M),
 * out[4] = cache_ifog (T x N*4M, gates after their activations). out0
 * and c0 may have more than N rows (the first N are used) or be empty
 * (0 rows or 0 columns: zeros). */
int k_lstm(const MB *X, const MB *W, const MB *b, const MB *out0, const MB *c0, bool retseq, MB *out[5],
           BrErr *e);

/* lstm_backward: out[0] = dX, out[1] = dW, out[2] = db, out[3] = dout0,
 * out[4] = dc0, from dout (N x T*M with return_sequences, else N x M)
 * and dc (N x M, or empty for zeros); recomputes the forward pass. */
int k_lstm_bwd(const MB *X, const MB *W, const MB *b, const MB *out0, const MB *c0, bool retseq, const MB *dout,
               const MB *dc, MB *out[5], BrErr *e);

#endif
