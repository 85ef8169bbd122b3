"""discoverFD vs counting distinct values and value pairs in Python: a
table with an exact dependency (zip -> city), a key column (determines
everything), a near dependency and a constant column; masks and
thresholds."""
import numpy as np

from _common import wmat, wref

rng = np.random.default_rng(2)
n = 40
key = np.arange(1, n + 1)
zipc = rng.integers(1, 9, size=n)
city = (zipc + 1) // 2            # zip -> city exactly
noisy = city.copy()
noisy[[3, 17]] = 5                # city -> noisy almost
const = np.ones(n, dtype=int)
rnd = rng.integers(1, 4, size=n)
X = np.column_stack([key, zipc, city, noisy, const, rnd]).astype(float)
wref("X", X)


def fd(X, mask, thr):
    m = X.shape[1]
    F = np.zeros((m, m))
    for i in range(m):
        for j in range(m):
            if i != j and mask[i] and mask[j]:
                s = len(set(X[:, i])) / len(set(zip(X[:, i], X[:, j])))
                F[i, j] = s if s >= thr else 0
    return F


wmat("fd_all", fd(X, [1] * 6, 0))
wmat("fd_thr", fd(X, [1] * 6, 0.8))
wmat("fd_mask", fd(X, [1, 0, 1, 1, 0, 1], 0.5))
wmat("fd_exact", fd(X, [1] * 6, 1))
