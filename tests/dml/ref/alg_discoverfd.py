"""discoverFD (SystemDS's robust FD ratios) vs counting in Python: a
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
    """SystemDS's discoverFD: the masked columns; identity, constant and
    key columns; the others visited by distinct count (largest first,
    stable), the robust ratio sum_a max_b count(a, b) / n kept when the
    dependency is exact or the ratio reaches thr (threshold 1: only the
    columns later in the visiting order)."""
    X = X[:, [j for j in range(X.shape[1]) if mask[j]]]
    n, d = X.shape
    nd = [len(set(X[:, c])) for c in range(d)]
    F = np.eye(d)
    for i in range(d):
        for j in range(d):
            if nd[j] == 1 or nd[i] == n:
                F[i, j] = 1
    visit = sorted(range(d), key=lambda c: -nd[c])
    for a, i in enumerate(visit):
        if nd[i] in (1, n):
            continue
        for b in range(a + 1 if thr >= 1 else 0, d):
            if b == a:
                continue
            j = visit[b]
            pairs = {}
            for u, v in zip(X[:, i], X[:, j]):
                pairs.setdefault(u, {}).setdefault(v, 0)
                pairs[u][v] += 1
            exact = all(len(p) == 1 for p in pairs.values())
            ratio = sum(max(p.values()) for p in pairs.values()) / n
            if exact or ratio >= thr:
                F[i, j] = ratio
    return F


wmat("fd_all", fd(X, [1] * 6, 0))
wmat("fd_thr", fd(X, [1] * 6, 0.8))
wmat("fd_mask", fd(X, [1, 0, 1, 1, 0, 1], 0.5))
wmat("fd_exact", fd(X, [1] * 6, 1))
