"""imputeByFD / imputeByFDApply vs counting in plain Python, with
SystemDS's script's rules: a noisy dependency source -> target with
missing cells on both sides, thresholds 0.6, 1.0 and 0 (a share must be
strictly above the threshold; ties go to the last target code; every row
takes its source's target, NaN where none holds); the dependency applied
to new source codes (unseen, missing, 0, out of range); a source holding
a 0 gives 1 x 1 zeros. Writes the inputs to refdata/alg_imputebyfd/."""
import numpy as np

from _common import wref, wmat

rng = np.random.default_rng(11)
n = 80
X = rng.integers(1, 9, n).astype(float)          # codes 1..8
truth = {1: 3, 2: 1, 3: 4, 4: 4, 5: 2, 6: 5, 7: 1, 8: 2}
Y = np.array([truth[int(v)] for v in X], dtype=float)
noise = rng.random(n) < 0.2
Y[noise] = rng.integers(1, 6, noise.sum())
Y[rng.random(n) < 0.15] = np.nan
X[rng.random(n) < 0.05] = np.nan
X[X == 8] = np.where(rng.random((X == 8).sum()) < 0.5, 8, np.nan)  # code 8 partly missing
# a tie: code 7 gets targets 1, 2 equally often
idx7 = np.where(X == 7)[0]
Y[idx7] = np.nan
Y[idx7[:2]] = [2, 1]
wref("X", X.reshape(-1, 1))
wref("Y", Y.reshape(-1, 1))
Xn = np.array([1, 2, 3, 9, np.nan, 0, 7, 8, 6, 5, 4, 2.0])
wref("Xnew", Xn.reshape(-1, 1))


def fd(X, Y, th):
    # (X and Y hold NaN, so their minimum is NaN: no "less than 1" exit)
    miss = np.isnan(Y)
    Xs = np.where(np.isnan(X), 1, X).astype(int)
    Yt = np.where(miss, 0, Y)
    Yt = np.where(miss, Yt.max() + 1, Yt).astype(int)
    C = np.zeros((Xs.max(), Yt.max()))
    for x, y in zip(Xs, Yt):
        C[x - 1, y - 1] += 1
    if miss.any() and C.shape[1] > 1:
        C = C[:, :-1]
    imp = np.zeros(C.shape[0])
    for v in range(C.shape[0]):
        tot, best = C[v].sum(), C[v].max()
        if tot > 0 and best / tot > th:
            imp[v] = np.flatnonzero(C[v] == best)[-1] + 1
    return Xs, imp


def apply(X, imp):
    Xs = np.where(np.isnan(X) | (X == 0), 1, X).astype(int)
    out = np.array([imp[x - 1] if x <= len(imp) else 0.0 for x in Xs])
    return np.full(len(out), np.nan) if out.sum() == 0 else np.where(out == 0, np.nan, out)


for name, th in [("t06", 0.6), ("t1", 1.0), ("t0", 0.0)]:
    Xs, imp = fd(X, Y, th)
    wmat(name + "_Y", apply(Xs, imp))
    wmat(name + "_imp", imp)
    wmat(name + "_apply", apply(Xn, imp))
wmat("zero", np.zeros((1, 2)))
