"""outlierByArima vs SystemDS's rule in NumPy: least squares of x_t on
its p lags (reg 1e-7, no intercept), flags outside sd(x) -/+ k yhat (no
value near a bound, so the flags do not depend on the last digits of the
fit); repairs by deletion, zero and NaN."""
import numpy as np

from _common import check, wmat, wref

rng = np.random.default_rng(17)
n = 150
x = np.zeros(n)
for t in range(1, n):
    x[t] = 0.6 * x[t - 1] + rng.normal()
x = np.round(x + 2.0, 4)
x[[40, 95]] += [9.0, -8.0]
wref("X", x)


def detect(x, k, p):
    """SystemDS's rule: lm (no intercept, reg 1e-7) of x_t on its p lags,
    x_t flagged outside sd(x) -/+ k yhat_t; the first p never."""
    n = len(x)
    L = np.column_stack([x[p - i:n - i] for i in range(1, p + 1)])
    xt = x[p:]
    B = np.linalg.solve(L.T @ L + 1e-7 * np.eye(p), L.T @ xt)
    yhat = L @ B
    sd = np.std(x, ddof=1)
    lo, hi = sd - k * yhat, sd + k * yhat
    gap = np.minimum(np.abs(xt - lo), np.abs(xt - hi))
    check(np.min(gap) > 1e-6 * np.max(np.abs(x)), "no value near a bound")
    return np.concatenate([np.zeros(p, bool), (xt < lo) | (xt > hi)])


def repair(x, O, m):
    if m == 0:
        return x[~O]
    y = x.copy()
    y[O] = 0.0 if m == 1 else np.nan
    return y


O = detect(x, 3.0, 1)
check(O.sum() > 0 and O.sum() < len(x) / 4, "some outliers, not most")
wmat("ar_del", repair(x, O, 0))
wmat("ar_zero", repair(x, O, 1))
O = detect(x, 3.0, 2)
wmat("ar2_nan", repair(x, O, 2))
O = detect(x, 2.5, 1)
wmat("ar_k25", repair(x, O, 1))
