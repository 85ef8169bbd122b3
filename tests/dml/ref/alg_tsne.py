"""tSNE: the input affinities P (perplexity 8) vs NumPy following
SystemDS's x2p (bisection of every row's precision); the data (three well-separated
Gaussian blobs) for the embedding's properties, checked in the case."""
import numpy as np

from _common import wref, wscalar

rng = np.random.default_rng(11)
C = np.array([[0, 0, 0, 0], [20, 0, 0, 0], [0, 20, 0, 0]], float)
X = np.vstack([C[i] + rng.normal(size=(15, 4)) for i in range(3)])
n = len(X)
wref("X", X)
wref("lab", np.repeat([1.0, 2.0, 3.0], 15))
# SystemDS's x2p: Euclidean distances, all rows bisected together while
# the mean |H - log(perplexity)| exceeds 1e-5, at most 49 rounds
D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
off = 1 - np.eye(n)
big = 1e20
beta = np.ones(n)
bmin = np.zeros(n)
bmax = np.full(n, big)
Hd = np.full(n, big)
P = np.zeros((n, n))
r = 1
while np.mean(np.abs(Hd)) > 1e-5 and r < 50:
    E = np.exp(-D * beta[:, None]) * off
    s = E.sum(1) + 1e-12
    Hd = np.log(s) + beta * ((E * D).sum(1) / s) - np.log(8)
    P = E / s[:, None]
    up = Hd >= 0
    bmin = np.where(up, beta, bmin)
    bmax = np.where(up, bmax, beta)
    beta = np.where(up, np.where(bmax == big, 2 * beta, (beta + bmax) / 2), (beta + bmin) / 2)
    r += 1
P = P + P.T
P = P / P.sum()
wref("P", P)
for name in ["P_ok", "shape_ok", "repeat_ok", "seed_differs", "kl_ok", "clusters_ok"]:
    wscalar(name, True)
