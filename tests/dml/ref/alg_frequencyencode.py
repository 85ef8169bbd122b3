"""frequencyEncode / frequencyEncodeApply vs counting in NumPy: two
categorical columns (one with an unused code), a numeric column left
alone; held-out rows with an unseen code and a code beyond the largest.
Frequencies in SystemDS's m x K table."""
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
# SystemDS's layout: an m x K table of frequencies (counts / n), K the
# largest value of all of X (NaN read as 1); unencoded columns' rows 0
K = int(np.ceil(np.nanmax(np.where(np.isnan(X), 1, X))))
F = np.zeros((3, K))
Y = X.copy()
for j in (0, 2):
    for v in range(1, K + 1):
        F[j, v - 1] = np.sum(X[:, j] == v) / n
    Y[:, j] = F[j, X[:, j].astype(int) - 1]
wmat("enc", Y)
wmat("freq", F)
T = np.array([[2.0, 0.5, 3.0], [4.0, -1.0, 7.0], [1.0, 2.0, 9.0]])
wref("T", T)
TY = T.copy()
for j in (0, 2):
    TY[:, j] = [F[j, int(v) - 1] if v <= K else 0 for v in T[:, j]]
wmat("apply", TY)
