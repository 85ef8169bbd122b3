"""The two-layer autoencoder of scripts/builtin/autoencoder_2layer.dml
(tanh layers, standardized input, minibatch gradient descent with
momentum, step decay per epoch) written directly in NumPy, from random
initial weights and row order that the case reads too. With SystemDS's
quirks, which the builtin follows: standard deviations plus 1e-17, W4
scaled by the code layer and output sizes, biases updated with the biases
(so they stay 0)."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import *

X, _ = load("wine")
n, m = X.shape
h1, h2, epochs, batch, step, decay, mom = 6, 2, 3, 64, 0.05, 0.9, 0.9
rng = np.random.default_rng(2024)
Wr = [rng.uniform(-1, 1, (h1, m)), rng.uniform(-1, 1, (h2, h1)),
      rng.uniform(-1, 1, (h1, h2)), rng.uniform(-1, 1, (m, h1))]
order = rng.uniform(0, 1, n)
for i, W in enumerate(Wr, start=1):
    wref("W%d_rand" % i, W)
wref("order_rand", order)

perm = np.argsort(order, kind="stable")
Xp = X[perm]
Z = (Xp - Xp.mean(axis=0)) / (Xp.std(axis=0, ddof=1) + 1e-17)
fan = [(m, h1), (h1, h2), (h2, h1), (h2, m)]
W = [np.sqrt(6) / np.sqrt(a + b) * Wr[i] for i, (a, b) in enumerate(fan)]
b = [np.zeros(W[i].shape[0]) for i in range(4)]
uW = [np.zeros_like(w) for w in W]
ub = [np.zeros_like(v) for v in b]
per_epoch = int(np.ceil(n / batch))
beg = 0
for it in range(1, epochs * per_epoch + 1):
    end = min(beg + batch, n)
    Xb = Z[beg:end]
    A = [Xb]
    for i in range(4):
        A.append(np.tanh(A[-1] @ W[i].T + b[i]))
    d = (A[4] - Xb) * (1 - A[4] ** 2)
    grads = [None] * 4
    for i in range(3, -1, -1):
        grads[i] = (d.T @ A[i], d.sum(axis=0))
        if i > 0:
            d = (d @ W[i]) * (1 - A[i] ** 2)
    lr = step / (end - beg)
    for i in range(4):
        uW[i] = mom * uW[i] - lr * grads[i][0]
        ub[i] = mom * ub[i] - lr * b[i]
        W[i] = W[i] + uW[i]
        b[i] = b[i] + ub[i]
    beg = 0 if end == n else end
    if it % per_epoch == 0:
        step *= decay

H = np.tanh(np.tanh(Z @ W[0].T + b[0]) @ W[1].T + b[1])
Hout = np.empty_like(H)
Hout[perm] = H
for i in range(4):
    wref("W%d" % (i + 1), W[i])
    wref("b%d" % (i + 1), b[i])
wref("H", Hout)
# objective on the data standardized in the original row order
Zo = (X - X.mean(axis=0)) / X.std(axis=0, ddof=1)
Yh = Zo
for i in range(4):
    Yh = np.tanh(Yh @ W[i].T + b[i])
wscalar("ok", True)
wscalar("obj", 0.5 * np.sum((Yh - Zo) ** 2))
