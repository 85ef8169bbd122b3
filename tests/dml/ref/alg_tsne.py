"""tSNE: the input affinities P (perplexity 8) vs NumPy with each row's
precision solved by SciPy's brentq; the data (three well-separated
Gaussian blobs) for the embedding's properties, checked in the case."""
import numpy as np
from scipy.optimize import brentq

from _common import wref, wscalar

rng = np.random.default_rng(11)
C = np.array([[0, 0, 0, 0], [20, 0, 0, 0], [0, 20, 0, 0]], float)
X = np.vstack([C[i] + rng.normal(size=(15, 4)) for i in range(3)])
n = len(X)
wref("X", X)
wref("lab", np.repeat([1.0, 2.0, 3.0], 15))
D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
Pc = np.zeros((n, n))
for i in range(n):
    d = np.delete(D[i], i)
    d = d - d.min()

    def H(b):
        p = np.exp(-d * b)
        s = p.sum()
        return np.log(s) + b * (d * p).sum() / s - np.log(8)

    b = brentq(H, 1e-20, 1e6, xtol=1e-15, rtol=1e-15)
    p = np.exp(-d * b)
    Pc[i, np.arange(n) != i] = p / p.sum()
P = (Pc + Pc.T) / (2 * n)
P = np.maximum(P, 1e-12)
np.fill_diagonal(P, 0)
wref("P", P)
for name in ["P_ok", "shape_ok", "repeat_ok", "seed_differs", "kl_ok", "clusters_ok"]:
    wscalar(name, True)
