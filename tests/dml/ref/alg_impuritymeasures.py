# The reference of alg_impuritymeasures in plain Python (no NumPy needed):
#   python3 ref/alg_impuritymeasures.py EXP_DIR REF_DIR   (by ref/alg_impuritymeasures.R)
# SystemDS's impurityMeasures on the committed inputs (drawn once with
# NumPy): categorical branches 1..max(x), continuous values binned into the
# first bin j with x <= min + j (max - min) / min(n_bins, n); gain = parent
# impurity - sum of weighted branch impurities (gini, or entropy in bits),
# 0 for a pure set; labels 0/1.
import math
import os
import sys

EXP, REF = sys.argv[1], sys.argv[2]


def read_csv(path):
    with open(path) as f:
        return [[float(v) for v in line.split(",")] for line in f if line.strip()]


def impurity(nt, nf, n, method):
    p = nt / (nt + nf)
    q = nf / (nt + nf)
    w = (nt + nf) / n
    if p == 1 or q == 1:
        return 0.0
    if method == "entropy":
        return -1 * w * (p * math.log(p) / math.log(2) + q * math.log(q) / math.log(2))
    return w * (1 - (p ** 2 + q ** 2))


def bins(f, nb):
    nb = min(nb, len(f))
    lo = min(f)
    width = (max(f) - lo) / nb
    out = []
    for x in f:
        j = 1
        while not x <= lo + j * width:
            j += 1
        out.append(j)
    return out


def gain(f, y, k, method):
    n = len(f)
    nt = sum(y)
    g = impurity(nt, n - nt, n, method)
    children = 0.0
    for b in range(1, int(k) + 1):
        ct = sum(1 for v, t in zip(f, y) if v == b and t != 0)
        cf = sum(1 for v, t in zip(f, y) if v == b and t == 0)
        if ct or cf:
            children += impurity(ct, cf, n, method)
    return g - children


def measures(X, y, R, nb, method):
    out = []
    for j in range(len(X[0])):
        f = [r[j] for r in X]
        if R[j] == 1:
            out.append(gain(bins(f, nb), y, nb, method))
        else:
            out.append(gain(f, y, max(f), method))
    return out


def wrow(name, v):
    with open(os.path.join(EXP, name), "w") as f:
        f.write(",".join("%.17g" % a for a in v) + "\n")


X = read_csv(os.path.join(REF, "X.csv"))
y = [r[0] for r in read_csv(os.path.join(REF, "Y.csv"))]
R = read_csv(os.path.join(REF, "R.csv"))[0]
wrow("gini20.csv", measures(X, y, R, 20, "gini"))
wrow("entropy20.csv", measures(X, y, R, 20, "entropy"))
wrow("gini3.csv", measures(X, y, R, 3, "gini"))
wrow("entropy1.csv", measures(X, y, R, 1, "entropy"))
