"""stratstats vs SciPy: global regressions by scipy.stats.linregress,
covariate-vs-strata p-values by scipy.stats.f_oneway, the stratified
(ANCOVA) regression by least squares on stratum dummies with the slope's
standard error from (A'A)^-1 and Student t p-values; NaN cells and
missing strata (0, NaN, a fraction rounded) omitted per statistic."""
import numpy as np
from scipy import stats

from _common import wmat, wref

rng = np.random.default_rng(21)
n = 80
s = rng.integers(1, 5, n).astype(float)
s[5] = 0
s[9] = np.nan
s[13] = 5.2  # rounds to 5: a stratum of one row
s[17] = 0.4  # rounds to 0: missing
base = np.array([0.0, 2.0, -1.0, 3.0, 1.0, 0.0])[np.nan_to_num(np.round(s)).astype(int).clip(0, 5)]
X = np.column_stack([base + rng.normal(size=n), rng.normal(size=n) * 2 + 1, base * 0.5 + rng.random(n)])
Y = np.column_stack([0.7 * X[:, 0] + base + rng.normal(size=n) * 0.5, -0.3 * X[:, 1] + rng.normal(size=n)])
X[3, 0] = np.nan
X[20, 2] = np.nan
Y[7, 1] = np.nan
S = np.column_stack([rng.random(n), s])
wref("X", X)
wref("Y", Y)
wref("S", S)


def uni(x, st):
    p = ~np.isnan(x)
    out = [p.sum(), x[p].mean(), x[p].std(ddof=1)]
    st = np.round(st)
    q = p & ~np.isnan(st) & (st > 0)
    xs, ss = x[q], st[q]
    groups = [xs[ss == g] for g in np.unique(ss)]
    m, k = len(xs), len(groups)
    V = sum(((g - g.mean()) ** 2).sum() for g in groups)
    SST = ((xs - xs.mean()) ** 2).sum()
    out += [np.sqrt(V / (m - k)), 1 - V / SST, 1 - (V / (m - k)) / (SST / (m - 1)),
            stats.f_oneway(*groups).pvalue]
    return out


def pair(x, y, st):
    p = ~np.isnan(x) & ~np.isnan(y)
    lr = stats.linregress(x[p], y[p])
    c = p.sum()
    res = y[p] - lr.intercept - lr.slope * x[p]
    rss = (res ** 2).sum()
    syy = ((y[p] - y[p].mean()) ** 2).sum()
    g = [c, lr.slope, lr.stderr, lr.rvalue, np.sqrt(rss / (c - 2)), lr.rvalue ** 2,
         1 - (rss / (c - 2)) / (syy / (c - 1)), lr.pvalue, 0, 0]
    st = np.round(st)
    q = p & ~np.isnan(st) & (st > 0)
    xs, ys, ss = x[q], y[q], st[q]
    levels = np.unique(ss)
    m, k = len(xs), len(levels)
    Dm = (ss[:, None] == levels[None, :]).astype(float)
    A = np.column_stack([xs, Dm])
    coef, _, _, _ = np.linalg.lstsq(A, ys, rcond=None)
    rss = ((ys - A @ coef) ** 2).sum()
    c0, _, _, _ = np.linalg.lstsq(Dm, ys, rcond=None)
    Vy = ((ys - Dm @ c0) ** 2).sum()
    df = m - k - 1
    sigma = np.sqrt(rss / df)
    se = sigma * np.sqrt(np.linalg.inv(A.T @ A)[0, 0])
    r2 = 1 - rss / Vy
    tval = coef[0] / se
    h = [m, coef[0], se, np.sign(coef[0]) * np.sqrt(r2), sigma, r2,
         1 - (rss / df) / (Vy / (m - k)), 2 * stats.t.sf(abs(tval), df),
         sum((ss == l).sum() >= 2 for l in levels)]
    return g + h


def stratstats(X, Y, S, xc, yc, sc):
    rows = []
    for i in xc:
        for j in yc:
            r = np.zeros(40)
            r[0] = i
            r[1:8] = uni(X[:, i - 1], S[:, sc - 1])
            r[10] = j
            r[11:18] = uni(Y[:, j - 1], S[:, sc - 1])
            r[20:39] = pair(X[:, i - 1], Y[:, j - 1], S[:, sc - 1])
            rows.append(r)
    return np.array(rows)


wmat("out", stratstats(X, Y, S, [1, 2, 3], [1, 2], 2))
wmat("out_sub", stratstats(X, Y, S, [3, 1], [2], 2))
XS = np.column_stack([X, s])
wmat("out_self", stratstats(XS, XS, XS, [1, 3], [1, 2, 3], 4))
