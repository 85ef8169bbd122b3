"""outlierByArima vs the same detection in NumPy/SciPy: CSS fit of the
model by least squares (scipy.optimize.least_squares on the residual
recursion), residuals of the differenced series, |e_t| > k sd(e) flags
(no value within 5% of the threshold, so the flags do not depend on the
last digits of the fit); repairs by deletion, zero and NaN."""
import numpy as np
from scipy.optimize import least_squares

from _common import check, wmat, wref

rng = np.random.default_rng(17)
n = 150
x = np.zeros(n)
for t in range(1, n):
    x[t] = 0.6 * x[t - 1] + rng.normal()
x = np.round(x + 2.0, 4)
x[[40, 95]] += [9.0, -8.0]
wref("X", x)


def resid(w, ar, ma, start):
    e = np.zeros(len(w))
    for t in range(start, len(w)):
        v = w[t] - sum(ar[j] * w[t - 1 - j] for j in range(len(ar)) if t - 1 - j >= 0)
        v -= sum(ma[j] * e[t - 1 - j] for j in range(len(ma)) if t - 1 - j >= 0)
        e[t] = v
    return e


def detect(x, k, p, d, q, mean):
    w = np.diff(x, n=d) if d > 0 else x.copy()

    def f(th):
        ww = w - th[-1] if mean else w
        return resid(ww, th[:p], th[p:p + q], p)[p:]
    th0 = np.zeros(p + q + (1 if mean else 0))
    th = least_squares(f, th0, xtol=1e-15, ftol=1e-15, gtol=1e-15).x
    ww = w - th[-1] if mean else w
    e = resid(ww, th[:p], th[p:p + q], p)
    sd = np.std(e[p:], ddof=1)
    res = np.concatenate([np.zeros(d), e])
    ratio = np.abs(res) / sd
    check(np.min(np.abs(ratio - k)) > 0.05 * k, "no residual near the threshold")
    return ratio > k


def repair(x, O, m):
    if m == 0:
        return x[~O]
    y = x.copy()
    y[O] = 0.0 if m == 1 else np.nan
    return y


O = detect(x, 3.0, 1, 0, 0, True)
wmat("ar_mean_del", repair(x, O, 0))
wmat("ar_mean_zero", repair(x, O, 1))
O = detect(x, 3.0, 1, 1, 1, False)
wmat("arima111_nan", repair(x, O, 2))
O = detect(x, 2.5, 0, 0, 1, True)
wmat("ma_k25", repair(x, O, 1))
