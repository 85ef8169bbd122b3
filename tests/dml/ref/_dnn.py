"""NumPy references of DML's deep-learning builtins for the dnn_* cases
(not a case). Written from the definitions, independently of braid's
kernels: images are rows of an N x (C*H*W) matrix in NCHW order; outputs
have P = (H + 2*ph - R) // sh + 1 rows and Q = (W + 2*pw - S) // sw + 1
columns per channel. Max pooling ignores padded cells, average pooling
divides by R*S, max_pool_backward routes each gradient to the first
maximum of its window (row-major)."""

import numpy as np


def seqmat(rows, cols):
    """DML's matrix(seq(1, rows*cols), rows=rows, cols=cols) (row-major)."""
    return np.arange(1, rows * cols + 1, dtype=float).reshape(rows, cols)


def out_hw(H, W, R, S, stride, pad):
    return (H + 2 * pad[0] - R) // stride[0] + 1, (W + 2 * pad[1] - S) // stride[1] + 1


def windows(X4, R, S, stride, pad, fill):
    """X4 (N, C, H, W) padded with fill -> array (N, C, P, Q, R, S) of the
    receptive fields."""
    N, C, H, W = X4.shape
    P, Q = out_hw(H, W, R, S, stride, pad)
    Xp = np.full((N, C, H + 2 * pad[0], W + 2 * pad[1]), fill)
    Xp[:, :, pad[0]:pad[0] + H, pad[1]:pad[1] + W] = X4
    out = np.empty((N, C, P, Q, R, S))
    for p in range(P):
        for q in range(Q):
            h, w = p * stride[0], q * stride[1]
            out[:, :, p, q] = Xp[:, :, h:h + R, w:w + S]
    return out


def conv2d(X, Wt, shape, fshape, stride, pad):
    N, C, H, W = shape
    K, _, R, S = fshape
    win = windows(X.reshape(N, C, H, W), R, S, stride, pad, 0.0)
    out = np.einsum("ncpqrs,kcrs->nkpq", win, Wt.reshape(K, C, R, S))
    return out.reshape(N, -1)


def conv2d_backward_filter(X, dout, shape, fshape, stride, pad):
    N, C, H, W = shape
    K, _, R, S = fshape
    win = windows(X.reshape(N, C, H, W), R, S, stride, pad, 0.0)
    P, Q = win.shape[2], win.shape[3]
    dW = np.einsum("ncpqrs,nkpq->kcrs", win, dout.reshape(N, K, P, Q))
    return dW.reshape(K, -1)


def conv2d_backward_data(Wt, dout, shape, fshape, stride, pad):
    N, C, H, W = shape
    K, _, R, S = fshape
    P, Q = out_hw(H, W, R, S, stride, pad)
    D = dout.reshape(N, K, P, Q)
    Wr = Wt.reshape(K, C, R, S)
    dXp = np.zeros((N, C, H + 2 * pad[0], W + 2 * pad[1]))
    for p in range(P):
        for q in range(Q):
            h, w = p * stride[0], q * stride[1]
            dXp[:, :, h:h + R, w:w + S] += np.einsum("nk,kcrs->ncrs", D[:, :, p, q], Wr)
    return dXp[:, :, pad[0]:pad[0] + H, pad[1]:pad[1] + W].reshape(N, -1)


def pool(X, shape, size, stride, pad, avg):
    N, C, H, W = shape
    R, S = size
    if avg:
        win = windows(X.reshape(N, C, H, W), R, S, stride, pad, 0.0)
        return (win.sum(axis=(4, 5)) / (R * S)).reshape(N, -1)
    win = windows(X.reshape(N, C, H, W), R, S, stride, pad, -np.inf)
    m = win.max(axis=(4, 5))
    m[m == -np.inf] = -np.finfo(float).max
    return m.reshape(N, -1)


def pool_backward(X, dout, shape, size, stride, pad, avg):
    N, C, H, W = shape
    R, S = size
    P, Q = out_hw(H, W, R, S, stride, pad)
    D = dout.reshape(N, C, P, Q)
    X4 = X.reshape(N, C, H, W)
    dX = np.zeros((N, C, H, W))
    for n in range(N):
        for c in range(C):
            for p in range(P):
                for q in range(Q):
                    h0, w0 = p * stride[0] - pad[0], q * stride[1] - pad[1]
                    hs, he = max(h0, 0), min(h0 + R, H)
                    ws, we = max(w0, 0), min(w0 + S, W)
                    if avg:
                        dX[n, c, hs:he, ws:we] += D[n, c, p, q] / (R * S)
                        continue
                    blk = X4[n, c, hs:he, ws:we]
                    if blk.size == 0:
                        continue
                    i, j = np.unravel_index(np.argmax(blk), blk.shape)
                    dX[n, c, hs + i, ws + j] += D[n, c, p, q]
    return dX.reshape(N, -1)


def bias_add(X, b):
    return X + np.repeat(b.reshape(-1), X.shape[1] // b.size)[None, :]


def bias_multiply(X, b):
    return X * np.repeat(b.reshape(-1), X.shape[1] // b.size)[None, :]
