"""Expected outputs of cases/dnn_lstm.dml (NumPy, ref/_dnn2.py)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import wmat, wscalar  # noqa: E402
import _dnn as d  # noqa: E402
import _dnn2 as d2  # noqa: E402
import numpy as np  # noqa: E402

N, T, D, M = 3, 4, 2, 3
X = np.sin(d.seqmat(N, T * D) * 0.9)
W = np.cos(d.seqmat(D + M, 4 * M) * 0.37) * 0.6
b = np.sin(d.seqmat(1, 4 * M)) * 0.2
out0 = np.cos(d.seqmat(N, M)) * 0.5
c0 = np.sin(d.seqmat(N, M) * 1.3) * 0.5
out, c, co, cc, ci = d2.lstm(X, W, b, out0, c0, True)
for name, v in [("out", out), ("c", c), ("cache_out", co), ("cache_c", cc), ("cache_ifog", ci)]:
    wmat(name, v)
wmat("outl", d2.lstm(X, W, b, out0, c0, False)[0])
dout = np.cos(d.seqmat(N, T * M) * 0.5)
dc = np.sin(d.seqmat(N, M) * 0.4)
for name, v in zip(["dX", "dW", "db", "dout0", "dc0"], d2.lstm_backward(X, W, b, out0, c0, True, dout, dc)):
    wmat(name, v)
Xs = X * (X > 0.5)
z = np.zeros((N, M))
g = d2.lstm_backward(Xs, W, b, z, z, False, dout[:, :M], z)
for name, v in zip(["dXs", "dWs", "dbs", "dout0s"], g[:4]):
    wmat(name, v)
wmat("outs", d2.lstm(Xs, W, b, z, z, False)[0])
wscalar("dims", ci.shape[1] * 100 + ci.shape[0])
