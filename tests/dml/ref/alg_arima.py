"""arima vs SystemDS's algorithm written out in NumPy: centring, then
differencing, the lag columns (zero before the start), the objective by
its jacobi / cg loops and its Nelder-Mead step by step. Series simulated
here are written to refdata/alg_arima/."""
import numpy as np

from _common import wref, wscalar

rng = np.random.default_rng(3)


def simulate(n, ar, ma, burn=100):
    e = rng.normal(size=n + burn)
    x = np.zeros(n + burn)
    for t in range(n + burn):
        x[t] = e[t]
        x[t] += sum(a * x[t - i - 1] for i, a in enumerate(ar) if t - i - 1 >= 0)
        x[t] += sum(b * e[t - i - 1] for i, b in enumerate(ma) if t - i - 1 >= 0)
    return x[burn:]


def prepare(x, d, D, s, mean):
    """SystemDS's order: centre first, then difference."""
    w = np.asarray(x, float)
    mu = w.mean() if mean else 0.0
    w = w - mu
    for _ in range(d):
        w = np.diff(w)
    for _ in range(D):
        w = w[s:] - w[:-s]
    return w, mu


def lags(w, p, P, q, Q, s):
    """Column per coefficient: the series lagged by i (p, q) or s i (P, Q),
    zero before the start (the MA columns too, as SystemDS's script)."""
    n = len(w)
    cols = []
    for m, step in ((p, 1), (P, s), (q, 1), (Q, s)):
        for i in range(1, m + 1):
            c = np.zeros(n)
            c[step * i:] = w[:n - step * i]
            cols.append(c)
    return np.column_stack(cols)


def css(th, w, L, p, P, q, Q, s, solver):
    """SystemDS's objective: y solves (I + R) y = L th (R: theta_i on the
    i-th subdiagonal, Theta_i on the (s i)-th) by its jacobi or cg loop."""
    n = len(w)
    b = L @ th
    R = np.zeros((n, n))
    for i in range(1, q + 1):
        R[np.arange(i, n), np.arange(0, n - i)] += th[p + P + i - 1]
    for i in range(1, Q + 1):
        l = s * i
        R[np.arange(l, n), np.arange(0, n - l)] += th[p + P + q + i - 1]
    y = np.zeros(n)
    if solver == "jacobi":
        it, change = 0, 1.01
        while it < 100 and change > 0.01:
            yn = b - R @ y
            change = np.sum((yn - y) ** 2)
            y, it = yn, it + 1
    else:
        A = R + np.eye(n)
        N = A.T @ A
        r = -(A.T @ b)
        dr = -r
        r2 = np.sum(r ** 2)
        go, it = r2 != 0, 0
        while it < 100 and go:
            Nd = N @ dr
            alpha = r2 / (dr @ Nd)
            y = y + alpha * dr
            r = r + alpha * Nd
            r2o, r2 = r2, np.sum(r ** 2)
            go = r2 >= 0.01
            dr = -r + (r2 / r2o) * dr
            it += 1
    e = w - y
    return float(np.sum(e * e))


def fit(x, p=0, d=0, q=0, P=0, D=0, Q=0, s=1, mean=False, solver="jacobi", budget=1000):
    """SystemDS's Nelder-Mead, step by step (first minimum / maximum index
    on ties, as rowIndexMin / rowIndexMax with distinct values)."""
    w, mu = prepare(x, d, D, s, mean)
    L = lags(w, p, P, q, Q, s)
    k = p + P + q + Q
    f = lambda th: css(th, w, L, p, P, q, Q, s, solver)
    S = np.hstack([np.zeros((k, 1)), 0.1 * np.eye(k)])
    F = np.array([f(S[:, v]) for v in range(k + 1)])
    calls = k + 1
    tol = 1.5e-8 * F[0]
    go, best = True, 0
    while go and calls <= budget:
        best, worst = int(np.argmin(F)), int(np.argmax(F))
        fb, fw = F[best], F[worst]
        go = fw > fb + tol
        c = (S.sum(1) - S[:, worst]) / k
        xr = 2 * c - S[:, worst]
        fr = f(xr)
        calls += 1
        if fr < fb:
            xe = 2 * xr - c
            fe = f(xe)
            calls += 1
            S[:, worst], F[worst] = (xr, fr) if fr <= fe else (xe, fe)
        else:
            if fr < fw:
                S[:, worst], F[worst] = xr, fr
            xc = (S[:, worst] + c) / 2
            fc = f(xc)
            calls += 1
            if fc < F[worst]:
                S[:, worst], F[worst] = xc, fc
            elif fr >= fw:
                bp = S[:, best].copy()
                for v in range(k + 1):
                    if v != best:
                        S[:, v] = (S[:, v] + bp) / 2
                        F[v] = f(S[:, v])
                calls += k
    th = S[:, best].copy()
    return np.append(th, mu) if mean else th


A = simulate(160, [0.5, -0.3], [0.4]) + 2.0
B = np.cumsum(simulate(140, [0.6], [-0.3])) * 0.5
season = np.tile([1.5, -0.5, -2.0, 1.0], 40)
C = simulate(160, [0.4], [0.3]) + season + 0.02 * np.arange(160)
M = simulate(150, [], [0.6, -0.2]) + 1.0
for name, x in [("A", A), ("B", B), ("C", C), ("M", M)]:
    wref(name, x.reshape(-1, 1))

fits = {
    "ar2": fit(A, p=2),
    "arma11": fit(A, p=1, q=1, mean=True),
    "arima111": fit(B, p=1, d=1, q=1),
    "sarima": fit(C, p=1, D=1, Q=1, s=4),
    "ma2sma": fit(M, q=2, Q=1, s=4, mean=True),
    "sar": fit(C, p=1, P=1, D=1, s=4),
}
for name, th in fits.items():
    wref(name, th.reshape(-1, 1))
    wscalar(name + "_ok", True)
# the cg solver's fits (its own stopping rule, so its own numbers)
for name, th in [("arma11_cg", fit(A, p=1, q=1, mean=True, solver="cg")),
                 ("ma2sma_cg", fit(M, q=2, Q=1, s=4, mean=True, solver="cg"))]:
    wref(name, th.reshape(-1, 1))
wscalar("cg_ok", True)
wscalar("budget_ok", True)
