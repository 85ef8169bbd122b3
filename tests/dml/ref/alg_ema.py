"""ema vs exponential smoothing written out in NumPy (one series at a time,
plain loops): single, double (Holt) and triple (additive Holt-Winters)
with fixed parameters on seasonal series with missing cells (also in the
start rows), and the per-column parameter search over the same candidate
sequence. Writes the input series to refdata/alg_ema/X.csv."""
import numpy as np

from _common import wref, wmat, wscalar

rng = np.random.default_rng(5)
n, m, s = 40, 3, 4
t = np.arange(n)
X = np.empty((n, m))
X[:, 0] = 10 + 0.3 * t + 2 * np.sin(2 * np.pi * t / s) + rng.normal(0, 0.3, n)
X[:, 1] = 5 - 0.1 * t + np.tile([1.0, -2.0, 0.5, 0.5], n // s) + rng.normal(0, 0.2, n)
X[:, 2] = rng.normal(3, 1, n).cumsum() / 5
miss = [(0, 1), (1, 2), (5, 0), (6, 1), (12, 0), (13, 0), (20, 2), (33, 1), (39, 0), (2, 0)]
for i, j in miss:
    X[i, j] = np.nan
wref("X", X)


def frac(x):
    return x - np.floor(x)


def smooth(x, mode, a, b, g, s):
    """Imputed series and SSE of one-step forecasts on observed cells."""
    x = x.copy()
    miss = np.isnan(x)
    start = {"single": 1, "double": 2, "triple": 2 * s}[mode]
    mu = np.nanmean(x)
    xi = x.copy()
    for i in range(start):
        if miss[i]:
            xi[i] = mu
    out = xi.copy()
    sse = 0.0
    n = len(x)

    def step(i, f):
        nonlocal sse
        if miss[i]:
            out[i] = f
            return f
        sse += (x[i] - f) ** 2
        out[i] = x[i]
        return x[i]

    if mode == "single":
        lev = xi[0]
        for i in range(1, n):
            y = step(i, lev)
            lev = a * y + (1 - a) * lev
    elif mode == "double":
        lev, tr = xi[0], xi[1] - xi[0]
        for i in range(1, n):
            f = lev + tr
            y = step(i, f)
            new = a * y + (1 - a) * f
            tr = b * (new - lev) + (1 - b) * tr
            lev = new
    else:
        lev = xi[:s].mean()
        tr = (xi[s:2 * s].mean() - lev) / s
        seas = list(xi[:s] - lev)
        for i in range(s, n):
            sp = seas[i - s]
            y = step(i, lev + tr + sp)
            new = a * (y - sp) + (1 - a) * (lev + tr)
            tr = b * (new - lev) + (1 - b) * tr
            lev = new
            seas.append(g * (y - lev) + (1 - g) * sp)
    return out, sse


def ema(X, iters, mode, s, a, b, g):
    out = np.empty_like(X)
    for j in range(X.shape[1]):
        pa, pb, pg = a, b, g
        setA = 0 <= a <= 1
        setB = 0 <= b <= 1 or mode == "single"
        setG = 0 <= g <= 1 or mode != "triple"
        if not (setA and setB and setG):
            best = np.inf
            for k in range(1, iters + 1):
                ca = a if setA else frac(k * 0.7548776662466927 + 0.5)
                cb = b if setB else frac(k * 0.5698402909980532 + 0.5)
                cg = g if setG else frac(k * 0.6180339887498949 + 0.5)
                _, e = smooth(X[:, j], mode, ca, cb, cg, s)
                if e < best:
                    best, pa, pb, pg = e, ca, cb, cg
        out[:, j], _ = smooth(X[:, j], mode, pa, pb, pg, s)
    return out


wmat("single", ema(X, 1, "single", s, 0.3, 0.0, 0.0))
wmat("double", ema(X, 1, "double", s, 0.4, 0.2, 0.0))
wmat("triple", ema(X, 1, "triple", s, 0.3, 0.1, 0.2))
wmat("search_single", ema(X, 15, "single", s, -1.0, 0.0, 0.0))
wmat("search_triple", ema(X, 25, "triple", s, 0.5, -1.0, 2.0))
wscalar("observed_ok", True)
