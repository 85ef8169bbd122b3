"""frequencyEncode / frequencyEncodeApply vs counting in NumPy: two
categorical columns (one with an unused code), a numeric column left
alone; held-out rows with an unseen code and a code beyond the largest."""
import numpy as np

from _common import wmat, wref

rng = np.random.default_rng(12)
n = 30
a = rng.integers(1, 5, size=n).astype(float)
b = rng.choice([1.0, 2.0, 4.0, 7.0], size=n)   # codes 3, 5, 6 unused
num = np.round(rng.normal(size=n), 3)
X = np.column_stack([a, num, b])
wref("X", X)
mask = np.array([1, 0, 1])
k = int(max(a.max(), b.max()))
F = np.zeros((k, 3))
Y = X.copy()
for j in (0, 2):
    for v in range(1, k + 1):
        F[v - 1, j] = np.sum(X[:, j] == v)
    Y[:, j] = F[X[:, j].astype(int) - 1, j]
wmat("enc", Y)
wmat("freq", F)
T = np.array([[2.0, 0.5, 3.0], [4.0, -1.0, 7.0], [1.0, 2.0, 9.0]])
wref("T", T)
TY = T.copy()
for j in (0, 2):
    TY[:, j] = [F[int(v) - 1, j] if v <= k else 0 for v in T[:, j]]
wmat("apply", TY)
