"""ema vs SystemDS's exponential smoothing (EMAUtils, its Java code
behind ema.dml) written out in NumPy, one series at a time with plain
loops: the one-step predictions of single, double (Holt) and triple
(additive Holt-Winters, even period) smoothing with fixed parameters on
seasonal series with missing cells, where a missing cell feeds the last
prediction into the recursion. Writes the input series to
refdata/alg_ema/X.csv."""
import numpy as np

from _common import wref, wmat, wscalar

rng = np.random.default_rng(5)
n, m, s = 40, 3, 4
t = np.arange(n)
X = np.empty((n, m))
X[:, 0] = 10 + 0.3 * t + 2 * np.sin(2 * np.pi * t / s) + rng.normal(0, 0.3, n)
X[:, 1] = 5 - 0.1 * t + np.tile([1.0, -2.0, 0.5, 0.5], n // s) + rng.normal(0, 0.2, n)
X[:, 2] = rng.normal(3, 1, n).cumsum() / 5
# missing cells after the start rows of every mode (a missing start value
# makes a whole column NaN, in SystemDS too)
miss = [(9, 1), (10, 2), (12, 0), (13, 0), (20, 2), (33, 1), (39, 0)]
for i, j in miss:
    X[i, j] = np.nan
wref("X", X)


def single(x, a):
    p = np.empty(len(x))
    p[0] = x[0]
    for i in range(1, len(x)):
        v = p[i - 1] if np.isnan(x[i]) else x[i]
        p[i] = a * v + (1 - a) * p[i - 1]
    return p


def double(x, a, b):
    """Level from x[1], trend x[1] - x[0]; prediction i + 1 is level +
    trend after step i; prediction 0 is x[0]."""
    n = len(x)
    p = np.empty(n)
    p[0] = x[0]
    lev, tr = x[1], x[1] - x[0]
    p[1] = lev + tr
    for i in range(1, n - 1):
        v = p[i] if np.isnan(x[i + 1]) else x[i + 1]
        new = a * v + (1 - a) * (lev + tr)
        tr = b * (new - lev) + (1 - b) * tr
        lev = new
        p[i + 1] = lev + tr
    return p


def triple(x, a, b, g, s):
    """Start: a centred moving average (weights 1/(2s), 1/s, ..., 1/(2s))
    over the first 2s values gives s trend values; seasonal offsets from
    the values s/2 .. 3s/2 - 1 minus the trend, rotated by s/2 and
    centred; level and slope from a least-squares line of the trend."""
    assert s % 2 == 0
    w = np.full(s + 1, 1.0 / s)
    w[0] = w[-1] = 0.5 / s
    trend = np.array([np.dot(x[i:i + s + 1], w) for i in range(s)])
    cut = s // 2
    tmp = x[cut:cut + s] - trend
    season = np.empty(s)
    for i in range(s):
        season[(i + s // 2) % s] = tmp[i]
    season -= season.mean()
    tx = np.arange(1, s + 1, dtype=float)
    slope = np.sum((tx - tx.mean()) * (trend - trend.mean())) / np.sum((tx - tx.mean()) ** 2)
    lev = trend.mean() - slope * tx.mean()
    n = len(x)
    c = np.zeros(n)
    c[:s] = season
    lv, sl = [lev], [slope]
    q = [lev + slope + c[0]]
    for i in range(1, n - s):
        v = q[i - 1] if np.isnan(x[i + s - 1]) else x[i + s - 1]
        lv.append(a * (v - c[i - 1]) + (1 - a) * (lv[i - 1] + sl[i - 1]))
        sl.append(b * (lv[i] - lv[i - 1]) + (1 - b) * sl[i - 1])
        c[i + s - 1] = g * (v - lv[i]) + (1 - g) * c[i - 1]
        q.append(lv[i] + sl[i] + c[i])
    return np.concatenate([x[:s], q])


def cols(f, *args):
    return np.column_stack([f(X[:, j], *args) for j in range(m)])


wmat("single", cols(single, 0.3))
wmat("double", cols(double, 0.4, 0.2))
wmat("triple", cols(triple, 0.3, 0.1, 0.2, s))
wmat("iters_single", cols(single, 0.3))
wmat("outside_double", cols(double, 1.5, -0.2))
wmat("triple6", cols(triple, 0.5, 0.3, 0.4, 6))
wscalar("nan_alpha_shared", True)
