"""Multinomial logistic regression with a baseline category (the largest
label has linear term 0), penalty reg/2 on the weights of the standardized
columns (intercept unpenalized), minimized by Newton's method with the full
Hessian in NumPy. (scikit-learn's LogisticRegression uses a symmetric
softmax with k weight vectors, a different model under regularization; its
training accuracy is checked to be close.)"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import *
from sklearn.linear_model import LogisticRegression


def fit(name, reg):
    X, y = load(name)
    n, m = X.shape
    mu = X.mean(axis=0)
    sd = np.sqrt(((X - mu) ** 2).sum(axis=0) / (n - 1))
    Zi = np.hstack([(X - mu) / sd, np.ones((n, 1))])
    k = int(y.max())
    K = k - 1
    Y = np.eye(k)[(y - 1).astype(int)][:, :K]
    D = m + 1
    pen = np.tile(np.append(np.full(m, reg), 0.0), K)   # column-major blocks per class

    def probs(b):
        LT = np.hstack([Zi @ b.reshape(K, D).T, np.zeros((n, 1))])
        LT -= LT.max(axis=1, keepdims=True)
        E = np.exp(LT)
        return E / E.sum(axis=1, keepdims=True)

    def objective(b):
        LT = np.hstack([Zi @ b.reshape(K, D).T, np.zeros((n, 1))])
        mx = LT.max(axis=1)
        lse = mx + np.log(np.exp(LT - mx[:, None]).sum(axis=1))
        return lse.sum() - np.sum(Y * LT[:, :K]) + 0.5 * np.sum(pen * b * b)

    b = np.zeros(K * D)
    for _ in range(100):
        P = probs(b)[:, :K]
        g = (Zi.T @ (P - Y)).T.ravel() + pen * b
        H = np.zeros((K * D, K * D))
        for c in range(K):
            for e in range(K):
                wgt = P[:, c] * ((c == e) - P[:, e])
                H[c * D:(c + 1) * D, e * D:(e + 1) * D] = Zi.T @ (Zi * wgt[:, None])
        H += np.diag(pen)
        step = np.linalg.solve(H, g)
        # damped Newton: halve until the objective decreases
        t = 1.0
        while objective(b - t * step) > objective(b) and t > 1e-10:
            t /= 2
        b = b - t * step
        if np.linalg.norm(g) < 1e-11:
            break
    P = probs(b)
    g = (Zi.T @ (P[:, :K] - Y)).T.ravel() + pen * b
    check(np.linalg.norm(g) < 1e-9, name + ": Newton optimum")
    Bs = b.reshape(K, D).T                       # D x K, standardized design
    Braw = np.vstack([Bs[:m] / sd[:, None], Bs[m] - (mu / sd) @ Bs[:m]])
    pred = P.argmax(axis=1) + 1
    acc = 100 * np.mean(pred == y)
    sk = LogisticRegression(C=1 / reg, max_iter=10000).fit((X - mu) / sd, y)
    check(abs(100 * sk.score((X - mu) / sd, y) - acc) <= 3.0, name + ": scikit-learn accuracy close")
    wref(name + "_betas", Braw)
    wref(name + "_proba", P)
    wscalar(name + "_obj", objective(b))
    wscalar(name + "_betas_ok", True)
    wscalar(name + "_proba_ok", True)
    wmat(name + "_pred", pred)
    wscalar(name + "_acc", acc)


fit("iris", 1.0)
fit("wine", 0.5)
