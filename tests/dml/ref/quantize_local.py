"""quantize_compress by SystemDS's rule (CompressedMatrixBlockFactory with
scale factors): cell (r, c) becomes floor(X[r, c] * f_r), f_r the scalar or
the r-th value of S's dense row-major array. local(X) is X."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import wmat  # noqa: E402

X = np.arange(1, 25, dtype=float).reshape(6, 4) / 7 - 1.3       # DML fills by rows
S = np.arange(1, 7, dtype=float) / 4
T = np.arange(1, 25, dtype=float).reshape(4, 6).T / 5          # t() of a 4 x 6 by-row fill
Z = X * (X > 1.5)


def q(A, f):
    f = np.full(A.shape[0], f) if np.isscalar(f) else np.asarray(f).ravel()[:A.shape[0]]
    return np.floor(A * f[:, None])


wmat("Q1", q(X, 3.7))
wmat("Q2", q(X, S))
wmat("Q3", q(X, T))
wmat("Q4", q(Z, 2.5))
wmat("Q5", q(X, S))
wmat("L", X)
