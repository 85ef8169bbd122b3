/* dnn.h: the deep-learning builtins of DML (kernels/dnn.c): conv2d and its
 * two backward functions, max/avg pooling and their backward functions,
 * bias_add and bias_multiply, with SystemDS's semantics.
 *
 * Layout (SystemDS): a batch of N images with C channels of H x W pixels
 * is an N x (C*H*W) matrix, one image per row in NCHW order (channel,
 * then row, then column). Filters are a K x (C*R*S) matrix, one filter per
 * row. Outputs are N x (K*P*Q) (convolution) or N x (C*P*Q) (pooling) with
 * P = floor((H + 2*ph - R) / sh) + 1 and Q = floor((W + 2*pw - S) / sw) + 1.
 *
 * Pooling (SystemDS): max pooling ignores padded cells (a window without
 * any input cell gives -DBL_MAX), NaN propagates; average pooling always
 * divides by R*S (padded cells count as zeros). max_pool_backward routes
 * each dout cell to the first maximum of its window in row-major order.
 *
 * Every function returns a NEW block the caller owns (release with
 * mb_release), or NULL with e set; inputs are never modified and may be
 * dense or sparse (including the empty block). Shape errors name the
 * function and contain "dimension". Convolutions go through im2col per
 * image and OpenBLAS dgemm, in parallel over images (br_threads()); sums
 * over images (conv2d_backward_filter) use fixed image blocks combined in
 * block order, so results do not depend on the thread count. */
#ifndef BRAID_K_DNN_H
#define BRAID_K_DNN_H

#include "../matrix/mb.h"

/* Shapes of one operation. */
typedef struct DnnShape {
    int64_t N, C, H, W;   /* input batch: N images, C channels, H x W */
    int64_t K;            /* number of filters (convolutions only) */
    int64_t R, S;         /* filter / pooling window height and width */
    int64_t sh, sw;       /* strides (>= 1) */
    int64_t ph, pw;       /* paddings (>= 0) */
    int64_t P, Q;         /* output height and width: set by dnn_shape_check */
} DnnShape;

/* Validates s for function fn (conv: K used) and computes P and Q.
 * Returns 0, or an error code with e set ("dimension" in the message). */
int dnn_shape_check(DnnShape *s, bool conv, const char *fn, BrErr *e);

/* conv2d(x, w): x N x CHW, w K x CRS -> N x KPQ. */
MB *k_conv2d(const MB *x, const MB *w, const DnnShape *s, BrErr *e);
/* conv2d_backward_filter(x, dout): x N x CHW, dout N x KPQ -> K x CRS. */
MB *k_conv2d_bwd_filter(const MB *x, const MB *dout, const DnnShape *s, BrErr *e);
/* conv2d_backward_data(w, dout): w K x CRS, dout N x KPQ -> N x CHW. */
MB *k_conv2d_bwd_data(const MB *w, const MB *dout, const DnnShape *s, BrErr *e);
/* max_pool / avg_pool(x): x N x CHW -> N x CPQ (s->K unused). */
MB *k_pool(const MB *x, const DnnShape *s, bool avg, BrErr *e);
/* max_pool_backward / avg_pool_backward(x, dout): dout N x CPQ -> N x CHW
 * (avg ignores the values of x, only its shape is checked). */
MB *k_pool_bwd(const MB *x, const MB *dout, const DnnShape *s, bool avg, BrErr *e);
/* bias_add(x, b) / bias_multiply(x, b): b is C x 1; x has C equal column
 * blocks; block c gets + b[c] (mult: * b[c]). */
MB *k_bias_add(const MB *x, const MB *b, BrErr *e);
MB *k_bias_mult(const MB *x, const MB *b, BrErr *e);

#endif
