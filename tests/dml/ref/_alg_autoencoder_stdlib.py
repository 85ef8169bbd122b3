# The reference of alg_autoencoder.py in plain Python (no NumPy needed):
# python3 tests/dml/ref/_alg_autoencoder_stdlib.py rewrites refdata/ and
# expected/ of alg_autoencoder (equal to what alg_autoencoder.py gives, up
# to rounding in the last digits); used when NumPy was not at hand.
# reads the committed random inputs, writes the reference outputs.
import math, os
D = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
def rd(p):
    return [[float(v) for v in l.split(",")] for l in open(p) if l.strip()]
X = rd(D + "/../data/wine_X.csv")
n, m = len(X), len(X[0])
R = D + "/refdata/alg_autoencoder/"
Wr = [rd(R + "W%d_rand.csv" % i) for i in range(1, 5)]
order = [r[0] for r in rd(R + "order_rand.csv")]
h1, h2, epochs, batch, step, decay, mom = 6, 2, 3, 64, 0.05, 0.9, 0.9
perm = sorted(range(n), key=lambda i: order[i])
Xp = [X[i] for i in perm]
def colstd(A):
    k = len(A); mu = [sum(r[j] for r in A) / k for j in range(len(A[0]))]
    sd = [math.sqrt(sum((r[j] - mu[j]) ** 2 for r in A) / (k - 1)) for j in range(len(A[0]))]
    return mu, sd
mu, sd = colstd(Xp)
Z = [[(r[j] - mu[j]) / (sd[j] + 1e-17) for j in range(m)] for r in Xp]
fan = [(m, h1), (h1, h2), (h2, h1), (h2, m)]
W = [[[math.sqrt(6) / math.sqrt(a + b) * v for v in row] for row in Wr[i]] for i, (a, b) in enumerate(fan)]
b = [[0.0] * len(W[i]) for i in range(4)]
uW = [[[0.0] * len(W[i][0]) for _ in W[i]] for i in range(4)]
ub = [[0.0] * len(W[i]) for i in range(4)]
def layer(A, Wi, bi):  # tanh(A W' + b)
    return [[math.tanh(sum(r[k] * w[k] for k in range(len(r))) + bi[o]) for o, w in enumerate(Wi)] for r in A]
per_epoch = math.ceil(n / batch)
beg = 0
for it in range(1, epochs * per_epoch + 1):
    end = min(beg + batch, n)
    Xb = Z[beg:end]
    A = [Xb]
    for i in range(4):
        A.append(layer(A[-1], W[i], b[i]))
    d = [[(A[4][r][j] - Xb[r][j]) * (1 - A[4][r][j] ** 2) for j in range(m)] for r in range(len(Xb))]
    grads = [None] * 4
    for i in range(3, -1, -1):
        Ai = A[i]
        grads[i] = [[sum(d[r][o] * Ai[r][k] for r in range(len(d))) for k in range(len(Ai[0]))] for o in range(len(W[i]))]
        if i > 0:
            d = [[sum(d[r][o] * W[i][o][k] for o in range(len(W[i]))) * (1 - Ai[r][k] ** 2)
                  for k in range(len(Ai[0]))] for r in range(len(d))]
    lr = step / (end - beg)
    for i in range(4):
        for o in range(len(W[i])):
            for k in range(len(W[i][0])):
                uW[i][o][k] = mom * uW[i][o][k] - lr * grads[i][o][k]
                W[i][o][k] += uW[i][o][k]
            ub[i][o] = mom * ub[i][o] - lr * b[i][o]
            b[i][o] += ub[i][o]
    beg = 0 if end == n else end
    if it % per_epoch == 0:
        step *= decay
H = layer(layer(Z, W[0], b[0]), W[1], b[1])
Hout = [None] * n
for idx, i in enumerate(perm):
    Hout[i] = H[idx]
def num(v): return "%.17g" % v
def wref(name, M):
    with open(R + name + ".csv", "w") as f:
        f.write("".join(",".join(num(v) for v in row) + "\n" for row in M))
for i in range(4):
    wref("W%d" % (i + 1), W[i])
    wref("b%d" % (i + 1), [[v] for v in b[i]])
wref("H", Hout)
mu, sd = colstd(X)
Zo = [[(r[j] - mu[j]) / sd[j] for j in range(m)] for r in X]
Yh = Zo
for i in range(4):
    Yh = layer(Yh, W[i], b[i])
obj = 0.5 * sum((Yh[r][j] - Zo[r][j]) ** 2 for r in range(n) for j in range(m))
open(D + "/expected/alg_autoencoder/obj.scalar", "w").write(num(obj) + "\n")
print(obj)
