# The reference of alg_cspline in plain Python (no NumPy needed):
#   python3 ref/alg_cspline.py EXP_DIR REF_DIR   (by ref/alg_cspline.R)
# The natural cubic spline through unit-spaced knots: knot slopes from the
# tridiagonal system (Thomas algorithm), values from the Hermite cubic of
# the piece (the first or last piece outside the knots).
import math
import os
import sys

EXP = sys.argv[1]


def natural_slopes(x, y):
    n = len(x)
    h = [x[i + 1] - x[i] for i in range(n - 1)]
    lo, di, up, rhs = [0.0] * n, [0.0] * n, [0.0] * n, [0.0] * n
    for i in range(n):
        if i > 0:
            lo[i] = 1 / h[i - 1]
            di[i] += 2 / h[i - 1]
            rhs[i] += 3 * (y[i] - y[i - 1]) / h[i - 1] ** 2
        if i < n - 1:
            up[i] = 1 / h[i]
            di[i] += 2 / h[i]
            rhs[i] += 3 * (y[i + 1] - y[i]) / h[i] ** 2
    for i in range(1, n):
        w = lo[i] / di[i - 1]
        di[i] -= w * up[i - 1]
        rhs[i] -= w * rhs[i - 1]
    k = [0.0] * n
    k[n - 1] = rhs[n - 1] / di[n - 1]
    for i in range(n - 2, -1, -1):
        k[i] = (rhs[i] - up[i] * k[i + 1]) / di[i]
    return k


def value(x, y, k, v):
    n = len(x)
    i = min(max(n - sum(1 for a in x if a >= v), 1), n - 1)
    x0, x1, y0, y1 = x[i - 1], x[i], y[i - 1], y[i]
    dx = x1 - x0
    t = (v - x0) / dx
    a = k[i - 1] * dx - (y1 - y0)
    b = -k[i] * dx + (y1 - y0)
    return (1 - t) * y0 + t * y1 + t * (1 - t) * (a * (1 - t) + b * t)


def wcol(name, v):
    with open(os.path.join(EXP, name), "w") as f:
        f.write("".join("%.17g\n" % a for a in v))


X = [float(i) for i in range(8)]
Y = [math.sin(a) + a / 3 for a in X]
xs = [0.05, 0.35, 1.1, 1.5, 2.9, 4.0, 6.9, 7.0]
K = natural_slopes(X, Y)
wcol("P.csv", [value(X, Y, K, v) for v in xs])
wcol("K.csv", K)
wcol("Pm.csv", [value(X, Y, K, v) for v in xs])
with open(os.path.join(EXP, "cg_ok.scalar"), "w") as f:
    f.write("TRUE\n")
with open(os.path.join(EXP, "line.csv"), "w") as f:
    f.write("5,6,6\n")
# stdout: csplineCG with its default maxi = 0 stops at that iteration limit
# and prints SystemDS's warning; the maxi = 100 solves converge long before
# (CG on 8 unknowns) and cspline's CG mode prints nothing
with open(os.path.join(EXP, "stdout.txt"), "w") as f:
    f.write("Warning: the maximum number of iterations has been reached.\n")
