"""miceApply vs the same procedure in NumPy: mice's chained equations
(the functions of ref/alg_mice.py: ridge least squares, Newton-fitted
multinomial logistic regression) fitted on 60 training rows, their last
round's models applied in one pass to 25 new rows with missing cells:
start values, then per column in order the prediction (numeric within
1e-7, categorical exactly, threshold 0.5 and 0.95); a column that had no
missing cell in training keeps its start value."""
import numpy as np

from _mice import design, lm, mlr
from _common import wref, wscalar

rng = np.random.default_rng(8)


def gen(n):
    x1 = rng.normal(0, 1, n)
    x2 = 0.8 * x1 + rng.normal(0, 0.5, n) + 2
    c3 = np.digitize(x1 + rng.normal(0, 0.4, n), [-0.5, 0.5]) + 1.0
    c4 = (x2 + rng.normal(0, 0.5, n) > 2).astype(float) + 1
    x5 = rng.normal(0, 1, n)
    return np.column_stack([x1, x2, c3, c4, x5])


X = gen(60)
for j, rows in enumerate([[2, 9, 17, 40], [5, 9, 30], [1, 12, 22, 33, 44, 50], [7, 17, 28, 55]]):
    X[rows, j] = np.nan          # column 5 has no missing cell
T = gen(25)
for j, rows in enumerate([[0, 4, 11], [3, 11, 19], [2, 6, 13, 21], [8, 16], [5, 9]]):
    T[rows, j] = np.nan
wref("X", X)
wref("T", T)
cmask = np.array([0, 0, 1, 1, 0])



def fit(X, iters, th):
    M = np.isnan(X)
    start = np.nanmean(X, axis=0)
    for j in range(X.shape[1]):
        if cmask[j]:
            vals, cnt = np.unique(X[~M[:, j], j], return_counts=True)
            start[j] = vals[np.argmax(cnt)]
    out = np.where(M, start, X)
    levels = out.max(axis=0)
    models = {}
    for _ in range(iters):
        for j in range(X.shape[1]):
            if not M[:, j].any():
                continue
            D = design(out, j, levels, cmask)
            obs, mis = ~M[:, j], M[:, j]
            if cmask[j] == 0:
                beta, b0 = lm(D[obs], out[obs, j])
                models[j] = ("lm", beta, b0)
                out[mis, j] = D[mis] @ beta + b0
            else:
                y = out[obs, j]
                f = mlr(D[obs], y)
                models[j] = ("mlr", f)
                P = f(D[mis])
                out[mis, j] = np.where(P.max(axis=1) > th, P.argmax(axis=1) + 1.0, out[mis, j])
    return start, levels, models


def apply(T, start, levels, models, th):
    M = np.isnan(T)
    out = np.where(M, start, T)
    for j in range(T.shape[1]):
        if not M[:, j].any() or j not in models:
            continue
        D = design(out, j, levels, cmask)
        mis = M[:, j]
        if models[j][0] == "lm":
            out[mis, j] = D[mis] @ models[j][1] + models[j][2]
        else:
            P = models[j][1](D[mis])
            out[mis, j] = np.where(P.max(axis=1) > th, P.argmax(axis=1) + 1.0, out[mis, j])
    return out


start, levels, models = fit(X, 3, 0.5)
wref("out_05", apply(T, start, levels, models, 0.5))
wref("out_095", apply(T, start, levels, models, 0.95))
wscalar("ok_05", True)
wscalar("ok_095", True)
