"""Expected outputs of cases/native_misc.dml (NumPy)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import wmat, wscalar  # noqa: E402
import numpy as np  # noqa: E402

X = np.array([[1, 2, 2, 0], [3, 3, 3, 0], [1, 0, 5, 5]], dtype=float)
rcd = np.array([len(np.unique(r)) for r in X], dtype=float)
ccd = np.array([[len(np.unique(c)) for c in X.T]], dtype=float)
wmat("rcd", rcd)
wmat("ccd", ccd)
wscalar("cda", len(np.unique(X)))
wmat("cdar", rcd)
wmat("cdac", ccd)
wmat("rcda", np.column_stack([rcd, rcd]))
wmat("ccda", ccd)
wmat("inf", np.array([[0, 1], [1, 0]]))
wscalar("tr", 15)
wscalar("len1", 3)
wmat("l3", X)
wscalar("len2", 2)
wscalar("lenr", 2)
wmat("ea", X * 2)
wscalar("eb", X.sum() * 2)
wscalar("eb3", X.sum() * 3)
M = np.array([[4, 1], [1, 3]], dtype=float)
w, V = np.linalg.eigh(M)
wmat("sqrt", (V * np.sqrt(w)) @ V.T)
