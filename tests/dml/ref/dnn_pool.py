"""Expected outputs of cases/dnn_pool.dml (NumPy, ref/_dnn.py)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import wmat  # noqa: E402
import _dnn as d  # noqa: E402
import numpy as np  # noqa: E402

X = np.sin(d.seqmat(3, 60) * 1.3) - 0.2
shape = (3, 2, 6, 5)
m1 = d.pool(X, shape, (2, 2), (2, 2), (0, 0), False)
wmat("m1", m1)
wmat("a1", d.pool(X, shape, (2, 2), (2, 2), (0, 0), True))
wmat("m2", d.pool(X, shape, (3, 3), (1, 1), (1, 1), False))
wmat("a2", d.pool(X, shape, (3, 3), (1, 1), (1, 1), True))
wmat("m3", d.pool(X, shape, (2, 3), (1, 2), (1, 0), False))
d1 = np.cos(d.seqmat(3, 12))
wmat("mb1", d.pool_backward(X, d1, shape, (2, 2), (2, 2), (0, 0), False))
wmat("ab1", d.pool_backward(X, d1, shape, (2, 2), (2, 2), (0, 0), True))
d2 = np.cos(d.seqmat(3, 60) * 0.5)
wmat("mb2", d.pool_backward(X, d2, shape, (3, 3), (1, 1), (1, 1), False))
wmat("ab2", d.pool_backward(X, d2, shape, (3, 3), (1, 1), (1, 1), True))
# DML's round: half away from zero
Xt = np.sign(X * 2) * np.floor(np.abs(X * 2) + 0.5)
wmat("mbt", d.pool_backward(Xt, d2, shape, (3, 3), (1, 1), (1, 1), False))
Xs = X * (X > 0.6)
Xs[1, :] = 0
wmat("ms", d.pool(Xs, shape, (2, 2), (2, 2), (0, 0), False))
wmat("mbs", d.pool_backward(Xs, d1, shape, (2, 2), (2, 2), (0, 0), False))
wmat("as", d.pool(Xs, shape, (2, 2), (2, 2), (0, 0), True))
wmat("bm", d.bias_multiply(m1, np.array([2.0, -3.0])))
