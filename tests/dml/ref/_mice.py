"""SystemDS's mice / miceApply written out in NumPy, shared by the mice
and miceApply references: start values (means with missing cells as 0,
modes of the codes by the last largest count), every categorical level
dummy coded, rounds in which every model sees the previous round's data,
the walk over coded columns that skips a last one-column feature (its
missing cells become 1), ridge least squares with a free intercept
(reg 1e-7) and a multinomial logistic regression (intercept free, reg
1e-5) fitted by Newton's method to convergence (SystemDS stops its
trust-region method at tol 1e-4 / 20 iterations: the class decisions the
tests compare agree)."""
import numpy as np


def start_values(X0, cmask):
    s = X0.mean(axis=0) * (cmask == 0)
    for j in np.flatnonzero(cmask):
        v = X0[X0[:, j] >= 1, j]
        if v.sum() > 0:
            cnt = np.bincount(v.astype(int), minlength=len(v) + 1)[1:len(v) + 1]
            s[j] = len(cnt) - np.argmax(cnt[::-1])      # last largest count
    return s


def coded(X, cmask, levels):
    """Coded columns and, per column, its (first, last + 1) block."""
    cols, blocks, at = [], [], 0
    for j in range(X.shape[1]):
        if cmask[j]:
            L = levels[j]
            H = (X[:, j:j + 1] == L[None, :]).astype(float)
        else:
            H = X[:, j:j + 1]
        cols.append(H)
        blocks.append((at, at + H.shape[1]))
        at += H.shape[1]
    return np.hstack(cols), blocks


def ridge(A, y, reg=1e-7):
    A1 = np.hstack([A, np.ones((A.shape[0], 1))])
    lam = np.append(np.full(A.shape[1], reg), 0.0)
    return np.linalg.solve(A1.T @ A1 + np.diag(lam), A1.T @ y)


def mlr(A, y, reg=1e-5):
    """Baseline-category multinomial logit (last class the baseline),
    intercept unpenalized; a function giving the class probabilities."""
    n, m = A.shape
    Z = np.hstack([A, np.ones((n, 1))])
    k = int(y.max())
    K, Dd = k - 1, m + 1
    Y = np.eye(k)[(y - 1).astype(int)][:, :K]
    pen = np.tile(np.append(np.full(m, reg), 0.0), K)

    def probs(b, Zn):
        LT = np.hstack([Zn @ b.reshape(K, Dd).T, np.zeros((Zn.shape[0], 1))])
        LT -= LT.max(axis=1, keepdims=True)
        E = np.exp(LT)
        return E / E.sum(axis=1, keepdims=True)

    b = np.zeros(K * Dd)
    for _ in range(500):
        P = probs(b, Z)[:, :K]
        g = (Z.T @ (P - Y)).T.ravel() + pen * b
        H = np.zeros((K * Dd, K * Dd))
        for c in range(K):
            for e in range(K):
                w = P[:, c] * ((c == e) - P[:, e])
                H[c * Dd:(c + 1) * Dd, e * Dd:(e + 1) * Dd] = Z.T @ (Z * w[:, None])
        H += np.diag(pen)
        step = np.linalg.solve(H, g)
        b = b - step
        if np.linalg.norm(step) < 1e-13 * max(1.0, np.linalg.norm(b)):
            break
    return lambda An: probs(b, np.hstack([An, np.ones((An.shape[0], 1))]))


def one_pass(Xc, X0, M, cmask, levels, th, models, fit=None):
    """One walk over the coded columns; fits models when fit is None,
    else uses models[j] for the columns with fit[j]. Returns the new
    data (X0 + fill) and the categorical probabilities W."""
    n, m = Xc.shape
    D, blocks = coded(Xc, cmask, levels)
    fill, W = M.astype(float), M.astype(float)
    for j in range(m):
        a, b = blocks[j]
        if a >= D.shape[1] - 1:
            break                      # SystemDS's while (i < ncol(dX))
        mis = M[:, j]
        if not mis.any() or (fit is not None and not fit[j]):
            continue
        keep = np.r_[0:a, b:D.shape[1]]
        trX, trY, teX, teY = D[~mis][:, keep], Xc[~mis, j], D[mis][:, keep], Xc[mis, j]
        if cmask[j] == 0:
            beta = ridge(trX, trY) if fit is None else models[j]
            models[j] = beta
            fill[mis, j] = teX @ beta[:-1] + beta[-1]
        else:
            if trY.min() == trY.max():
                pred, prob = np.full(len(teY), trY.min()), np.ones(len(teY))
            else:
                f = mlr(trX, trY) if fit is None else models[j]
                models[j] = f
                P = f(teX)
                pred, prob = P.argmax(axis=1) + 1.0, P.max(axis=1)
            fill[mis, j] = np.where(prob > th, pred, teY)
            W[mis, j] = prob
    return X0 + fill, W


def prepare(X, cmask):
    M = np.isnan(X)
    X0 = np.where(M, 0.0, X)
    return M, X0


def unsure(X, W, th):
    return np.where((W < th) & (W > 0), np.nan, X)


def mice(X, cmask, iters, th):
    """Output, the start values, levels and the last round's models."""
    m = X.shape[1]
    if cmask.sum() in (0, m):
        X = np.hstack([X, np.ones((X.shape[0], 1))])
        cmask = np.append(cmask, 1 if cmask.sum() == 0 else 0)
    M, X0 = prepare(X, cmask)
    s = start_values(X0, cmask)
    Xc = X0 + M * s
    levels = {j: np.unique(Xc[:, j]) for j in np.flatnonzero(cmask)}
    for _ in range(iters):
        models = {}
        Xc, W = one_pass(Xc, X0, M, cmask, levels, th, models)
    return unsure(Xc, W, th)[:, :m], (s, levels, models, M.any(axis=0), cmask)


def mice_apply(T, state, th):
    s, levels, models, fit, cmask = state
    m = T.shape[1]
    if len(cmask) > m:
        T = np.hstack([T, np.ones((T.shape[0], 1))])
    M, X0 = prepare(T, cmask)
    Xc = X0 + M * s
    out, W = one_pass(Xc, X0, M, cmask, levels, th, models, fit)
    return unsure(out, W, th)[:, :m]
