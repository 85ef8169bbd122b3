"""impurityMeasures vs the gini gain and information gain (bits) in NumPy:
one branch per distinct value of a categorical feature, n_bins equal-width
bins between minimum and maximum of a continuous one (the maximum in the
last bin, a constant column one bin); 0/1 labels and 1/2/3 labels."""
import numpy as np

from _common import wref, wmat

rng = np.random.default_rng(3)
n = 60
X = np.column_stack([rng.integers(1, 4, size=n), rng.random(n), np.round(rng.random(n) * 10, 2),
                     np.full(n, 2.5), rng.integers(0, 3, size=n) * 5.0])
Y = ((X[:, 0] == 2) | (X[:, 1] > 0.8)).astype(float)
Y = np.where(rng.random(n) < 0.15, 1 - Y, Y)
Y3 = 1 + Y + (X[:, 2] > 7)
R = np.array([[2, 1, 1, 1, 2]])
wref("X", X)
wref("Y", Y)
wref("Y3", Y3)
wref("R", R)


def imp(labels, method):
    _, c = np.unique(labels, return_counts=True)
    p = c / c.sum()
    return 1 - (p ** 2).sum() if method == "gini" else -(p * np.log2(p)).sum()


def gains(X, Y, R, n_bins, method):
    out = []
    for j in range(X.shape[1]):
        x = X[:, j]
        if R[0, j] == 2:
            b = x
        else:
            lo, hi = x.min(), x.max()
            b = np.minimum(np.floor((x - lo) / (hi - lo) * n_bins) + 1, n_bins) if hi > lo else np.ones(len(x))
        g = imp(Y, method)
        for v in np.unique(b):
            s = b == v
            g -= s.sum() / len(Y) * imp(Y[s], method)
        out.append(g)
    return np.array(out).reshape(1, -1)


wmat("gini20", gains(X, Y, R, 20, "gini"))
wmat("entropy20", gains(X, Y, R, 20, "entropy"))
wmat("gini3", gains(X, Y, R, 3, "gini"))
wmat("entropy1", gains(X, Y, R, 1, "entropy"))
wmat("gini_y3", gains(X, Y3, R, 4, "gini"))
wmat("entropy_y3", gains(X, Y3, R, 20, "entropy"))
