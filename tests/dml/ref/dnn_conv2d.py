"""Expected outputs of cases/dnn_conv2d.dml (NumPy, ref/_dnn.py)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import wmat, wscalar  # noqa: E402
import _dnn as d  # noqa: E402
import numpy as np  # noqa: E402

X = np.sin(d.seqmat(2, 60) * 0.7)
W = np.cos(d.seqmat(4, 18) * 0.3)
shape, fshape = (2, 3, 5, 4), (4, 3, 3, 2)
out1 = d.conv2d(X, W, shape, fshape, (1, 1), (1, 1))
wmat("out1", out1)
out2 = d.conv2d(X, W, shape, fshape, (2, 2), (0, 0))
wmat("out2", out2)
W1 = np.cos(d.seqmat(4, 3))
wmat("out3", d.conv2d(X, W1, shape, (4, 3, 1, 1), (1, 1), (0, 0)))
Xs = X * (X > 0.9)
wmat("out4", d.conv2d(Xs, W, shape, fshape, (2, 1), (2, 0)))
b = np.array([0.5, -1, 2, 0.25])
wmat("badd", d.bias_add(out1, b))
wmat("bmult", d.bias_multiply(out1, b))
dout = np.sin(d.seqmat(2, 100) * 0.11)
dW = d.conv2d_backward_filter(X, dout, shape, fshape, (1, 1), (1, 1))
wmat("dW", dW)
wmat("dX", d.conv2d_backward_data(W, dout, shape, fshape, (1, 1), (1, 1)))
douts = dout * (dout > 0.8)
wmat("dWs", d.conv2d_backward_filter(Xs, douts, shape, fshape, (1, 1), (1, 1)))
dout2 = np.cos(d.seqmat(2, 16))
wmat("dX2", d.conv2d_backward_data(W, dout2, shape, fshape, (2, 2), (0, 0)))
wscalar("dims", out2.shape[1] * 1000 + dW.shape[0] * 100 + dW.shape[1])
