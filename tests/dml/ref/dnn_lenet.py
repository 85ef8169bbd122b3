"""Expected outputs of cases/dnn_lenet.dml: the same network and SGD step
in NumPy (ref/_dnn.py for the convolution and pooling operators)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import wmat, wscalar  # noqa: E402
import _dnn as d  # noqa: E402
import numpy as np  # noqa: E402

N = 4
X = np.sin(d.seqmat(N, 64) * 0.9)
Y = np.zeros((N, 3))
for i, c in enumerate([1, 3, 2, 3]):
    Y[i, c - 1] = 1
W1 = np.sin(d.seqmat(3, 9) * 1.7) * 0.5
b1 = np.array([0.1, -0.1, 0.05])
W2 = np.cos(d.seqmat(2, 27) * 0.8) * 0.4
b2 = np.array([0.02, -0.03])
W3 = np.sin(d.seqmat(8, 3) * 2.3) * 0.6
b3 = np.array([[0, 0.1, -0.1]])
lr = 0.05
s1, s2 = (N, 1, 8, 8), (N, 3, 4, 4)
for it in (1, 2):
    c1 = d.bias_add(d.conv2d(X, W1, s1, (3, 1, 3, 3), (1, 1), (1, 1)), b1)
    r1 = np.maximum(c1, 0)
    p1 = d.pool(r1, (N, 3, 8, 8), (2, 2), (2, 2), (0, 0), False)
    c2 = d.bias_add(d.conv2d(p1, W2, s2, (2, 3, 3, 3), (1, 1), (1, 1)), b2)
    r2 = np.maximum(c2, 0)
    p2 = d.pool(r2, (N, 2, 4, 4), (2, 2), (2, 2), (0, 0), False)
    s = p2 @ W3 + b3
    e = np.exp(s - s.max(axis=1, keepdims=True))
    probs = e / e.sum(axis=1, keepdims=True)
    wscalar("loss%d" % it, -np.sum(Y * np.log(probs)) / N)
    if it == 2:
        break
    wmat("probs", probs)
    ds = (probs - Y) / N   # softmax + cross-entropy gradient
    dW3, db3 = p2.T @ ds, ds.sum(axis=0, keepdims=True)
    dp2 = ds @ W3.T
    dr2 = d.pool_backward(r2, dp2, (N, 2, 4, 4), (2, 2), (2, 2), (0, 0), False)
    dc2 = (c2 > 0) * dr2
    dW2 = d.conv2d_backward_filter(p1, dc2, s2, (2, 3, 3, 3), (1, 1), (1, 1))
    db2 = dc2.reshape(N, 2, 16).sum(axis=(0, 2))
    dp1 = d.conv2d_backward_data(W2, dc2, s2, (2, 3, 3, 3), (1, 1), (1, 1))
    dr1 = d.pool_backward(r1, dp1, (N, 3, 8, 8), (2, 2), (2, 2), (0, 0), False)
    dc1 = (c1 > 0) * dr1
    dW1 = d.conv2d_backward_filter(X, dc1, s1, (3, 1, 3, 3), (1, 1), (1, 1))
    db1 = dc1.reshape(N, 3, 64).sum(axis=(0, 2))
    dX = d.conv2d_backward_data(W1, dc1, s1, (3, 1, 3, 3), (1, 1), (1, 1))
    for name, v in (("dW1", dW1), ("db1", db1), ("dW2", dW2), ("db2", db2), ("dW3", dW3), ("db3", db3),
                    ("dX", dX)):
        wmat(name, v)
    W1, b1, W2, b2, W3, b3 = W1 - lr * dW1, b1 - lr * db1, W2 - lr * dW2, b2 - lr * db2, W3 - lr * dW3, b3 - lr * db3
