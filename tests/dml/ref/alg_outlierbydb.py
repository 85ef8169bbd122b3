# The reference of alg_outlierbydb in plain Python (no NumPy needed):
#   python3 ref/alg_outlierbydb.py EXP_DIR REF_DIR   (by ref/alg_outlierbydb.R)
# The model is SystemDS's dbscan of the training rows (its cluster members,
# ref/_dbscan.py); a test row is an inlier (1) when some model row lies
# within eps. No distance is within 1e-9 of eps (checked).
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _dbscan import dbscan, read_csv  # noqa: E402

EXP = sys.argv[1]
HERE = os.path.dirname(os.path.abspath(__file__))


def inlier(Xte, M, eps):
    out = []
    for x in Xte:
        d = [math.dist(x, m) for m in M]
        assert all(abs(v - eps) > 1e-9 for v in d)
        out.append(1 if d and min(d) <= eps else 0)
    return out


def members(X, eps, min_pts):
    # removeEmpty of no rows gives one zero row (SystemDS's empty return)
    lab = dbscan(X, eps, min_pts)[0]
    return [x for x, c in zip(X, lab) if c > 0] or [[0.0] * len(X[0])]


def wcol(name, v):
    with open(os.path.join(EXP, name), "w") as f:
        f.write("".join("%d\n" % x for x in v))


def wscalar(name, s):
    with open(os.path.join(EXP, name), "w") as f:
        f.write(s + "\n")


X = read_csv(os.path.join(HERE, "..", "..", "data", "iris_X.csv"))
Xtr = [x for i, x in enumerate(X) if (i + 1) % 3 != 0]
Xte = [x for i, x in enumerate(X) if (i + 1) % 3 == 0]
Xte += [[0, 0, 0, 0], [8, 4, 6, 2], [5.9, 3, 4.2, 3]]
M = members(Xtr, 0.45, 5)
wcol("iris.csv", inlier(Xte, M, 0.45))
wscalar("iris_members.scalar", "%d" % len(M))
P = [[0, 0], [1, 1], [0.3, 0.3], [1.45, 1], [5, 5], [0.2, -0.4]]
Mp = [[0, 0], [1, 1]]
wcol("default_eps.csv", inlier(P, Mp, 0.5))
wcol("eps15.csv", inlier(P, Mp, 1.5))
# minPts 1 and a tiny eps: only identical training rows could form
# clusters; there are none, so the model is one zero row
M0 = members(Xtr, 0.01, 1)
Z = inlier(Xte, M0, 0.01)
wscalar("few_members.scalar", "%d %d %d" % (len(M0), len(Z), sum(Z)))
