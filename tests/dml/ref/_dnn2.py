"""NumPy references of batch_norm2d and lstm (and their backward
functions) for the dnn_batchnorm and dnn_lstm cases (not a case).
Written from the layer definitions (SystemDS's nn layers batch_norm2d.dml
and lstm.dml), independently of braid's kernels: images are rows of an
N x (C*HW) matrix, channel-major; an LSTM input is N x (T*D) with gate
blocks i, f, o (sigmoid) and g (tanh) in the columns of W (D+M x 4M)."""

import numpy as np


def batch_norm(X, gamma, beta, ema_mean, ema_var, train, eps, mu):
    """Outputs out, ema_mean_upd, ema_var_upd, cache_mean, cache_inv_var."""
    N = X.shape[0]
    C = gamma.shape[0]
    X3 = X.reshape(N, C, -1)
    if train:
        mean = X3.mean(axis=(0, 2))
        var = X3.var(axis=(0, 2))
        emu = mu * ema_mean + (1 - mu) * mean
        evu = mu * ema_var + (1 - mu) * var
    else:
        mean, var, emu, evu = ema_mean, ema_var, ema_mean, ema_var
    inv = 1 / np.sqrt(var + eps)
    out = (X3 - mean[None, :, None]) * (inv * gamma)[None, :, None] + beta[None, :, None]
    return out.reshape(N, -1), emu, evu, mean, inv


def batch_norm_backward(X, dout, gamma, mean, inv):
    """dX, dgamma, dbeta of out = (X - mean) * inv * gamma + beta where
    mean and inv are the batch statistics as functions of X (the caches
    give their values)."""
    N = X.shape[0]
    C = gamma.shape[0]
    X3 = X.reshape(N, C, -1)
    D3 = dout.reshape(N, C, -1)
    m = N * X3.shape[2]
    xc = X3 - mean[None, :, None]
    dgamma = (D3 * xc).sum(axis=(0, 2)) * inv
    dbeta = D3.sum(axis=(0, 2))
    dnorm = D3 * gamma[None, :, None]
    dvar = (-0.5 * inv ** 3 * (dnorm * xc).sum(axis=(0, 2)))
    dmean = -inv * dnorm.sum(axis=(0, 2)) + dvar * (-2.0 / m) * xc.sum(axis=(0, 2))
    dX = dnorm * inv[None, :, None] + dmean[None, :, None] / m + 2.0 / m * xc * dvar[None, :, None]
    return dX.reshape(N, -1), dgamma, dbeta


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def lstm(X, W, b, out0, c0, seq):
    """out, c, cache_out (T x N*M), cache_c, cache_ifog (T x N*4M)."""
    M = W.shape[1] // 4
    D = W.shape[0] - M
    N = X.shape[0]
    T = X.shape[1] // D
    h, c = out0.copy(), c0.copy()
    outs, hs, cs, gs = [], [], [], []
    for t in range(T):
        z = np.hstack([X[:, t * D:(t + 1) * D], h]) @ W + b
        g = np.hstack([sigmoid(z[:, :3 * M]), np.tanh(z[:, 3 * M:])])
        c = g[:, M:2 * M] * c + g[:, :M] * g[:, 3 * M:]
        h = g[:, 2 * M:3 * M] * np.tanh(c)
        outs.append(h)
        hs.append(h.reshape(-1))
        cs.append(c.reshape(-1))
        gs.append(g.reshape(-1))
    out = np.hstack(outs) if seq else h
    return out, c, np.array(hs), np.array(cs), np.array(gs)


def lstm_backward(X, W, b, out0, c0, seq, dout, dc):
    """dX, dW, db, dout0, dc0 by backpropagation through time."""
    M = W.shape[1] // 4
    D = W.shape[0] - M
    N = X.shape[0]
    T = X.shape[1] // D
    _, _, hs, cs, gs = lstm(X, W, b, out0, c0, True)
    if not seq:
        dout = np.hstack([np.zeros((N, (T - 1) * M)), dout])
    dout = dout.copy()
    dX = np.zeros_like(X)
    dW = np.zeros_like(W)
    db = np.zeros_like(b)
    dct = dc.copy()
    dh_prev = np.zeros((N, M))
    for t in range(T - 1, -1, -1):
        g = gs[t].reshape(N, 4 * M)
        i, f, o, gg = g[:, :M], g[:, M:2 * M], g[:, 2 * M:3 * M], g[:, 3 * M:]
        ct = cs[t].reshape(N, M)
        cp = cs[t - 1].reshape(N, M) if t else c0
        hp = hs[t - 1].reshape(N, M) if t else out0
        dh = dout[:, t * M:(t + 1) * M]
        dct = dct + o * (1 - np.tanh(ct) ** 2) * dh
        do = np.tanh(ct) * dh
        dr = np.hstack([i * (1 - i) * gg * dct, f * (1 - f) * cp * dct, o * (1 - o) * do, (1 - gg ** 2) * i * dct])
        inp = np.hstack([X[:, t * D:(t + 1) * D], hp])
        dW += inp.T @ dr
        db += dr.sum(axis=0)
        din = dr @ W.T
        dX[:, t * D:(t + 1) * D] = din[:, :D]
        dh_prev = din[:, D:]
        if t:
            dout[:, (t - 1) * M:t * M] += dh_prev
        dct = f * dct
    return dX, dW, db, dh_prev, dct
