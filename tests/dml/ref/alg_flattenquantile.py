"""flattenQuantile vs NumPy's quantile with method="inverted_cdf" (the
ceil(p N)-th smallest value, DML's definition) over all cells of X, as a
row (SystemDS's layout)."""
import numpy as np

from _common import wmat, wref

rng = np.random.default_rng(8)
X = np.round(rng.normal(size=(7, 5)) * 10, 3)
X[2, 3] = X[5, 1]  # a tie
P = np.array([0, 0.01, 0.1, 0.25, 1 / 3, 0.5, 0.6, 0.75, 0.9, 0.99, 1.0])
wref("X", X)
wref("P", P)
v = X.reshape(-1)
wmat("q", np.quantile(v, P, method="inverted_cdf").reshape(1, -1))
wmat("q_row", np.quantile(v, P[[1, 5, 9]], method="inverted_cdf").reshape(1, -1))
wmat("q_one", np.quantile(np.array([4.5]), P[[0, 5, 10]], method="inverted_cdf").reshape(1, -1))
