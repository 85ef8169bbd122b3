"""Chained-equations helpers shared by the mice and miceApply references:
the design matrix of one column's model (numeric columns as they are,
categorical ones dummy-coded without the first level), ridge least
squares, and Newton-fitted multinomial logistic regression."""
import numpy as np


def design(Xc, j, levels, cmask):
    cols = []
    for c in range(Xc.shape[1]):
        if c == j:
            continue
        if cmask[c] == 0:
            cols.append(Xc[:, c:c + 1])
        else:
            k = int(levels[c])
            H = np.eye(k)[Xc[:, c].astype(int) - 1]
            cols.append(H[:, 1:])
    return np.hstack(cols)


def lm(D, y, reg=1e-7):
    mu = D.mean(axis=0)
    v = D.var(axis=0, ddof=1)
    keep = v > 1e-24 * mu ** 2
    Z = (D - mu) * keep
    A = Z.T @ Z + np.diag(np.where(keep, reg, 1.0))
    beta = np.linalg.solve(A, Z.T @ (y - y.mean())) * keep
    return beta, y.mean() - mu @ beta


def mlr(D, y, reg=1.0):
    n, m = D.shape
    mu = D.mean(axis=0)
    sd = D.std(axis=0, ddof=1)
    assert np.all(sd > 0), "constant feature column"
    Zi = np.hstack([(D - mu) / sd, np.ones((n, 1))])
    k = int(y.max())
    K = k - 1
    Y = np.eye(k)[(y - 1).astype(int)][:, :K]
    Dd = m + 1
    pen = np.tile(np.append(np.full(m, reg), 0.0), K)

    def probs(b, Z):
        LT = np.hstack([Z @ b.reshape(K, Dd).T, np.zeros((Z.shape[0], 1))])
        LT -= LT.max(axis=1, keepdims=True)
        E = np.exp(LT)
        return E / E.sum(axis=1, keepdims=True)

    b = np.zeros(K * Dd)
    for _ in range(200):
        P = probs(b, Zi)[:, :K]
        g = (Zi.T @ (P - Y)).T.ravel() + pen * b
        H = np.zeros((K * Dd, K * Dd))
        for c in range(K):
            for e in range(K):
                wgt = P[:, c] * ((c == e) - P[:, e])
                H[c * Dd:(c + 1) * Dd, e * Dd:(e + 1) * Dd] = Zi.T @ (Zi * wgt[:, None])
        H += np.diag(pen)
        b = b - np.linalg.solve(H, g)
        if np.linalg.norm(g) < 1e-12:
            break
    return lambda Dn: probs(b, np.hstack([(Dn - mu) / sd, np.ones((Dn.shape[0], 1))]))
