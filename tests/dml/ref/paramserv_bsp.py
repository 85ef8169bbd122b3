"""paramserv_bsp: the paramserv schedules of runtime/paramserv.c in NumPy
(least squares by SGD, cases/lib/ps_linreg.dml)."""
import numpy as np
from _common import wmat


def data(n):
    i = np.arange(1, n + 1, dtype=float)
    X = np.column_stack([np.sin(i * 0.7), np.cos(i * 1.3), np.sin(i * 0.11 + 1)])
    y = X @ np.array([1.5, -2, 0.75]) + 0.3 + 0.05 * np.sin(i * 5.1)
    return X, y.reshape(-1, 1)


def upd(model, X, y):
    W, b = model
    err = X @ W + b - y
    return [X.T @ err / len(X), np.array([[err.sum() / len(X)]])]


def agg(model, g, lr):
    return [model[0] - lr * g[0], model[1] - lr * g[1]]


def parts(X, y, k, scheme):
    n = len(X)
    if scheme == "DC":
        blk = -(-n // k)
        idx = [list(range(min(w * blk, n), min((w + 1) * blk, n))) for w in range(k)]
    else:
        idx = [list(range(w, n, k)) for w in range(k)]
    return [(X[ix], y[ix]) for ix in idx]


def push(model, part, j0, j1, bs, lr, mavg):
    Xp, yp = part
    local, acc = model, None
    for j in range(j0, j1):
        g = upd(local, Xp[j * bs:(j + 1) * bs], yp[j * bs:(j + 1) * bs])
        acc = g if acc is None else [acc[0] + g[0], acc[1] + g[1]]
        if mavg or j + 1 < j1:
            local = agg(local, g, lr)
    return local if mavg else acc


def paramserv(X, y, k, scheme, utype, freq, epochs, bs, lr, nbatches=1, mavg=False):
    ps = parts(X, y, k, scheme)
    nb = [-(-len(p[0]) // bs) for p in ps]
    per = [1 if freq == "BATCH" else nbatches if freq == "NBATCHES" else max(b, 1) for b in nb]
    model = [np.zeros((3, 1)), np.zeros((1, 1))]
    for _ in range(epochs):
        pos = [0] * k
        while any(pos[w] < nb[w] for w in range(k)):
            if utype == "ASP":
                for w in range(k):
                    if pos[w] >= nb[w]:
                        continue
                    j1 = min(pos[w] + per[w], nb[w])
                    model = agg(model, push(model, ps[w], pos[w], j1, bs, lr, False), lr)
                    pos[w] = j1
                continue
            pushes = []
            for w in range(k):
                if pos[w] >= nb[w]:
                    continue
                j1 = min(pos[w] + per[w], nb[w])
                pushes.append(push(model, ps[w], pos[w], j1, bs, lr, mavg))
                pos[w] = j1
            if mavg:
                model = [sum(p[0] for p in pushes) / len(pushes), sum(p[1] for p in pushes) / len(pushes)]
            else:
                for p in pushes:
                    model = agg(model, p, lr)
    return np.vstack(model)


X, y = data(53)
X50, y50 = data(50)
wmat("bsp_k2", paramserv(X, y, 2, "DC", "BSP", "BATCH", 3, 5, 0.2))
wmat("bsp_k3_rr", paramserv(X50, y50, 3, "RR", "BSP", "BATCH", 2, 4, 0.2))
wmat("bsp_k2_nbatches", paramserv(X, y, 2, "DC", "BSP", "NBATCHES", 2, 4, 0.2, nbatches=2))
wmat("bsp_k2_epoch", paramserv(X, y, 2, "DC", "BSP", "EPOCH", 4, 6, 0.2))
wmat("bsp_k2_modelavg", paramserv(X, y, 2, "DC", "BSP", "BATCH", 2, 5, 0.2, mavg=True))
wmat("asp_k2", paramserv(X, y, 2, "DC", "ASP", "BATCH", 3, 5, 0.2))
wmat("defaults_asp_epoch_k3", paramserv(X50, y50, 3, "DC", "ASP", "EPOCH", 3, 4, 0.2))
