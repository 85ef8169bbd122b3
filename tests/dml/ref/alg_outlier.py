# The reference of alg_outlier in plain Python (no NumPy needed):
#   python3 ref/alg_outlier.py EXP_DIR REF_DIR   (by ref/alg_outlier.R)
# outlier: the column extreme farthest from the mean (min on a tie);
# outlierBySd / outlierByIQR: SystemDS's rounds (scripts/builtin/
# outlierBySd.dml): statistics of the last round, sd bounds from the cells
# that are neither NaN nor 0, quartiles (the ceil(p n)-th smallest) of the
# non-NaN cells, repair while more than one cell is marked and the sum of
# the non-NaN cells changes.
import math
import os
import sys

EXP = sys.argv[1]
HERE = os.path.dirname(os.path.abspath(__file__))
NAN = float("nan")


def read_csv(path):
    with open(path) as f:
        return [[float(v) for v in line.split(",")] for line in f if line.strip()]


def num(v):
    if v != v:
        return "NaN"
    return "%.17g" % v


def wmat(name, A):
    with open(os.path.join(EXP, name), "w") as f:
        f.write("".join(",".join(num(v) for v in r) + "\n" for r in A))


def column(X, j):
    return [r[j] for r in X]


def sd_stats(X):
    mu, sd = [], []
    for j in range(len(X[0])):
        v = [c for c in column(X, j) if c == c and c != 0]
        m = sum(v) / len(v)
        mu.append(m)
        sd.append(math.sqrt(sum((c - m) ** 2 for c in v) / (len(v) - 1)))
    return mu, sd


def quartiles(X):
    if len(X) <= 1:
        z = [0.0] * len(X[0])
        return z, z
    q1, q3 = [], []
    for j in range(len(X[0])):
        v = sorted(c for c in column(X, j) if c == c)
        q1.append(v[max(math.ceil(0.25 * len(v)), 1) - 1])
        q3.append(v[max(math.ceil(0.75 * len(v)), 1) - 1])
    return q1, q3


def nansum(X):
    return sum(c for r in X for c in r if c == c)


def rounds(X, bounds, method, maxit):
    """SystemDS's loop; returns the data and the last round's bounds."""
    before, after, it = 0.0, 1.0, 0
    while maxit == 0 or it < maxit:
        lo, hi, stats = bounds(X)
        O = [[c < lo[j] or c > hi[j] for j, c in enumerate(r)] for r in X]
        marked = sum(v for r in O for v in r)
        if marked > 1 and after != 0 and before != after:
            before = nansum(X)
            if method == 0:
                X = [r for r, o in zip(X, O) if not any(o)]
            else:
                fill = 0.0 if method == 1 else NAN
                X = [[fill if o else c for c, o in zip(r, orow)] for r, orow in zip(X, O)]
            after = nansum(X)
        else:
            maxit = -1
        it += 1
    return X, stats


def by_sd(k):
    def bounds(X):
        mu, sd = sd_stats(X)
        return ([m - k * s for m, s in zip(mu, sd)], [m + k * s for m, s in zip(mu, sd)], (mu, sd))
    return bounds


def by_iqr(k):
    def bounds(X):
        q1, q3 = quartiles(X)
        iqr = [b - a for a, b in zip(q1, q3)]
        return ([a - k * d for a, d in zip(q1, iqr)], [b + k * d for b, d in zip(q3, iqr)], (q1, q3, iqr))
    return bounds


X = read_csv(os.path.join(HERE, "..", "..", "data", "wine_X.csv"))
n = len(X)
mu = [sum(column(X, j)) / n for j in range(len(X[0]))]
mx = [max(column(X, j)) for j in range(len(X[0]))]
mn = [min(column(X, j)) for j in range(len(X[0]))]
up = [(a - m) > (m - b) for a, m, b in zip(mx, mu, mn)]
wmat("out.csv", [[a if u else b for a, b, u in zip(mx, mn, up)]])
wmat("out_opp.csv", [[b if u else a for a, b, u in zip(mx, mn, up)]])
Y1, st = rounds(X, by_sd(2), 1, 0)
wmat("sd_zero.csv", Y1)
wmat("sd_zero_stats.csv", [st[0], st[1]])
wmat("sd_delete.csv", rounds(X, by_sd(2.5), 0, 0)[0])
wmat("sd_nan1.csv", rounds(X, by_sd(3), 2, 1)[0])
wmat("sd_nan.csv", rounds(X, by_sd(2), 2, 0)[0])
Q, st = rounds(X, by_iqr(1.5), 1, 0)
wmat("iqr_zero.csv", Q)
wmat("iqr_stats.csv", [st[0], st[1], st[2]])
wmat("iqr_delete.csv", rounds(X, by_iqr(1.5), 0, 0)[0])
wmat("iqr_nan2.csv", rounds(X, by_iqr(1), 2, 2)[0])
