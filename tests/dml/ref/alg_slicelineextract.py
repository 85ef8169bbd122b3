"""sliceLineExtract vs filtering rows in NumPy: hand-made slices (one,
two and three predicates, overlapping), all of them, the first two, none
(k2 = 0 extracts all, as in SystemDS), a slice no row satisfies."""
import numpy as np

from _common import wmat, wref

rng = np.random.default_rng(14)
n = 40
X = rng.integers(1, 4, size=(n, 3)).astype(float)
e = np.round(rng.uniform(size=n), 4)
TK = np.array([[2, 0, 0], [1, 3, 0], [2, 1, 0], [3, 3, 3]], dtype=float)
TKC = np.column_stack([np.arange(4, 0, -1.0), np.ones(4), np.ones(4), np.full(4, 5.0)])
wref("X", X)
wref("e", e)
wref("TK", TK)
wref("TKC", TKC)


def ext(k2):
    sel = np.zeros(n, dtype=bool)
    for s in range(k2):
        p = TK[s] != 0
        sel |= np.all((X == TK[s]) | ~p, axis=1)
    return X[sel], e[sel]


for name, k2 in (("all", 4), ("two", 2)):
    Xs, es = ext(k2)
    wmat("X_" + name, Xs)
    wmat("e_" + name, es)
import os
with open(os.path.join(os.sys.argv[1], "stdout.txt"), "w") as fh:
    fh.write("k2 = 0 as all: TRUE, rows TRUE\nsliceLine's top slice: rows TRUE, error TRUE\n")
