"""imputeByFD / imputeByFDApply vs counting in plain Python: a noisy
dependency source -> target with missing cells on both sides, thresholds
0.6, 1.0 and 0 (ties go to the smallest target code); the dependency
applied to new source codes (unseen, missing, out of range). Writes the
inputs to refdata/alg_imputebyfd/."""
from collections import Counter

import numpy as np

from _common import wref, wmat

rng = np.random.default_rng(11)
n = 80
X = rng.integers(1, 9, n).astype(float)          # codes 1..8
truth = {1: 3, 2: 1, 3: 4, 4: 4, 5: 2, 6: 5, 7: 1, 8: 2}
Y = np.array([truth[int(v)] for v in X], dtype=float)
noise = rng.random(n) < 0.2
Y[noise] = rng.integers(1, 6, noise.sum())
Y[rng.random(n) < 0.15] = np.nan
X[rng.random(n) < 0.05] = np.nan
X[X == 8] = np.where(rng.random((X == 8).sum()) < 0.5, 8, 0)  # code 8 partly 0
# a tie: code 7 gets targets 1, 2 equally often
idx7 = np.where(X == 7)[0]
Y[idx7] = np.nan
Y[idx7[:2]] = [2, 1]
wref("X", X.reshape(-1, 1))
wref("Y", Y.reshape(-1, 1))
Xn = np.array([1, 2, 3, 9, np.nan, 0, 7, 8, 6, 5, 4, 2.0])
wref("Xnew", Xn.reshape(-1, 1))


def fd(X, Y, th):
    k = int(np.nanmax(np.where(X > 0, X, 0)))
    mapping = np.full(k, np.nan)
    for v in range(1, k + 1):
        c = Counter(int(y) for x, y in zip(X, Y)
                    if x == v and not np.isnan(y) and y > 0)
        if not c:
            continue
        tot = sum(c.values())
        best = max(c.values())
        code = min(t for t, q in c.items() if q == best)
        if best >= th * tot:
            mapping[v - 1] = code
    return mapping


def apply(X, mapping):
    out = np.full(len(X), np.nan)
    for i, x in enumerate(X):
        if not np.isnan(x) and 1 <= x <= len(mapping) and x == round(x):
            out[i] = mapping[int(x) - 1]
    return out


for name, th in [("t06", 0.6), ("t1", 1.0), ("t0", 0.0)]:
    mp = fd(X, Y, th)
    a = apply(X, mp)
    wmat(name + "_Y", np.where(np.isnan(a), Y, a))
    wmat(name + "_imp", mp)
    wmat(name + "_apply", apply(Xn, mp))
