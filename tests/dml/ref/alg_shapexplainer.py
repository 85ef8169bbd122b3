"""shapExplainer vs exact interventional Shapley values in NumPy (every
coalition, expectation over all background rows): a linear model with
model_args, and a model with pairwise interactions (antithetic pairs are
exact for it, whatever permutations are drawn)."""
import itertools
import math

import numpy as np

from _common import wmat, wref, wscalar

rng = np.random.default_rng(6)
Xb = np.round(rng.normal(size=(25, 4)), 3)
x = np.round(rng.normal(size=(3, 4)), 3)
w = np.array([1.0, -2.0, 3.0, 0.5])
wref("Xb", Xb)
wref("x", x)
wref("w", w)


def exact(f, x, Z):
    m = len(x)
    phi = np.zeros(m)

    def v(S):
        R = Z.copy()
        R[:, list(S)] = x[list(S)]
        return f(R).mean()
    for j in range(m):
        others = [k for k in range(m) if k != j]
        for r in range(m):
            for S in itertools.combinations(others, r):
                wgt = math.factorial(r) * math.factorial(m - r - 1) / math.factorial(m)
                phi[j] += wgt * (v(S + (j,)) - v(S))
    return phi


lin = lambda X: X @ w + 0.7
wmat("lin", np.array([exact(lin, xi, Xb) for xi in x]))
wscalar("lin_e", lin(Xb).mean())
pair = lambda X: X[:, 0] * X[:, 1] + X[:, 1] * X[:, 2] + X[:, 0] ** 2 - X[:, 3]
wmat("pair", np.array([exact(pair, xi, Xb) for xi in x]))
wscalar("pair_e", pair(Xb).mean())
import os
with open(os.path.join(os.sys.argv[1], "stdout.txt"), "w") as fh:
    fh.write("efficiency: TRUE\nseeded repeat: TRUE\n")
