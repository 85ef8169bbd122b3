# The reference of alg_imputebyknn in plain Python (no NumPy needed):
#   python3 ref/alg_imputebyknn.py EXP_DIR REF_DIR   (by ref/alg_imputebyknn.R)
# SystemDS's imputeByKNN on the committed inputs REF_DIR/X1.csv, X2.csv
# (drawn once with NumPy, default_rng(21)): missing cells filled with
# column means first; 'dist': a missing cell takes the filled value of the
# row's nearest other row (distances of exactly 0 excluded, the last
# minimum on a tie); 'dist_missing': an incomplete row takes its missing
# cells from the nearest complete row (the last minimum on a tie).
import math
import os
import sys

EXP, REF = sys.argv[1], sys.argv[2]


def read_csv(path):
    with open(path) as f:
        return [[float(v) if v.strip() not in ("NaN", "nan") else float("nan") for v in line.split(",")]
                for line in f if line.strip()]


def mean_filled(X):
    m = len(X[0])
    means = []
    for j in range(m):
        v = [r[j] for r in X if r[j] == r[j]]
        means.append(sum(v) / len(v))
    return [[c if c == c else means[j] for j, c in enumerate(r)] for r in X]


def last_min(d):
    best = min(d)
    return max(i for i, v in enumerate(d) if v == best)


def dist_impute(X):
    F = mean_filled(X)
    out = []
    for i, r in enumerate(X):
        d = [math.dist(F[i], F[j]) for j in range(len(X))]
        d = [999.0 if v == 0 else v for v in d]
        k = last_min(d)
        out.append([c if c == c else F[k][j] for j, c in enumerate(r)])
    return out


def missing_impute(X):
    F = mean_filled(X)
    C = [r for r in X if all(c == c for c in r)]
    out = []
    for i, r in enumerate(X):
        if all(c == c for c in r):
            out.append(list(r))
            continue
        d = [math.dist(c, F[i]) for c in C]
        k = last_min(d)
        out.append([c if c == c else C[k][j] for j, c in enumerate(r)])
    return out


def wmat(name, A):
    with open(os.path.join(EXP, name), "w") as f:
        f.write("".join(",".join("%.17g" % v for v in r) + "\n" for r in A))


X1 = read_csv(os.path.join(REF, "X1.csv"))
X2 = read_csv(os.path.join(REF, "X2.csv"))
wmat("dist1.csv", dist_impute(X1))
wmat("dist2.csv", dist_impute(X2))
wmat("missing1.csv", missing_impute(X1))
with open(os.path.join(EXP, "sample_ok.scalar"), "w") as f:
    f.write("TRUE\n")
