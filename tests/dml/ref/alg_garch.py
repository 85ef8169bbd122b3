"""garch vs the Gaussian GARCH(1,1) maximum likelihood estimate in SciPy
(SLSQP under the constraints, then Newton's method on the forward-recursion
gradient in NumPy to full precision), on a series simulated from a known
GARCH(1,1) (a0 = 0.2, a1 = 0.15, b1 = 0.7)."""
import numpy as np
from scipy.optimize import minimize

from _common import check, wref, wscalar

rng = np.random.default_rng(1)
n, a0, a1, b1 = 250, 0.2, 0.15, 0.7
x = np.zeros(n)
s = a0 / (1 - a1 - b1)
for t in range(n):
    x[t] = np.sqrt(s) * rng.normal()
    s = a0 + a1 * x[t] ** 2 + b1 * s
x = np.round(x, 6)
wref("X", x)
c = np.mean(x ** 2)


def nll_grad(th):
    a0, a1, b1 = th
    s, ds = c, np.zeros(3)
    f, g = 0.0, np.zeros(3)
    for t in range(1, n):
        ds = np.array([1.0, x[t - 1] ** 2, s]) + b1 * ds
        s = a0 + a1 * x[t - 1] ** 2 + b1 * s
        f += 0.5 * (np.log(2 * np.pi) + np.log(s) + x[t] ** 2 / s)
        g += 0.5 * (1 / s - x[t] ** 2 / s ** 2) * ds
    return f, g


r = minimize(lambda th: nll_grad(th)[0], [0.1 * c, 0.1, 0.8], jac=lambda th: nll_grad(th)[1],
             method="SLSQP", bounds=[(1e-10, None), (0, 1), (0, 1)],
             constraints=[{"type": "ineq", "fun": lambda th: 0.9999 - th[1] - th[2]}],
             options={"ftol": 1e-15, "maxiter": 1000})
th = r.x
for _ in range(50):  # Newton with a central-difference Hessian of the exact gradient
    f, g = nll_grad(th)
    H = np.zeros((3, 3))
    for j in range(3):
        h = 1e-6 * max(abs(th[j]), 1e-3)
        e = np.zeros(3)
        e[j] = h
        H[:, j] = (nll_grad(th + e)[1] - nll_grad(th - e)[1]) / (2 * h)
    th = th - np.linalg.solve((H + H.T) / 2, g)
f, g = nll_grad(th)
check(np.abs(g).max() < 1e-8 and th[1] > 0 and th[2] > 0 and th[1] + th[2] < 1, "interior optimum")
wref("theta", th)
wscalar("nll", f)
wscalar("nll_fast", f)
import os
with open(os.path.join(os.sys.argv[1], "stdout.txt"), "w") as fh:
    fh.write("""coefficients within 1e-6 relative: TRUE
minimal search, same estimate: TRUE
simulation follows the fitted model: TRUE
seeded repeat identical: TRUE
""")
