"""imputeByKNN ('dist', 'dist_missing') vs the documented procedure in
NumPy with a brute-force nearest-neighbour search (row by row, distances
as sums of squared differences): column means first, then the column with
the most missing values (first on ties) from the nearest row observed
there. Two data sets: 5 columns with missing cells in several columns,
and two columns tied for the most missing values. Writes the inputs to
refdata/alg_imputebyknn/."""
import numpy as np

from _common import wref, wmat, wscalar

rng = np.random.default_rng(21)


def knn_impute(X):
    X = X.copy()
    M = np.isnan(X)
    means = np.nanmean(X, axis=0)
    X0 = np.where(M, means, X)
    cnt = M.sum(axis=0)
    c = int(np.argmax(cnt))            # first maximum
    obs = np.where(~M[:, c])[0]
    out = X0.copy()
    for i in np.where(M[:, c])[0]:
        d = [np.sum((X0[i] - X0[j]) ** 2) for j in obs]
        out[i, c] = X0[obs[int(np.argmin(d))], c]   # first minimum
    return out


X1 = rng.normal(0, 1, (40, 5)) * [1, 2, 0.5, 3, 1] + [0, 1, 2, 3, 4]
for i, j in [(1, 2), (4, 2), (7, 2), (9, 2), (15, 2), (30, 2), (2, 0), (8, 4), (4, 1), (22, 3)]:
    X1[i, j] = np.nan
X2 = rng.normal(0, 1, (25, 3))
for i, j in [(0, 1), (3, 1), (5, 2), (6, 2), (10, 0)]:
    X2[i, j] = np.nan
wref("X1", X1)
wref("X2", X2)
wmat("dist1", knn_impute(X1))
wmat("dist2", knn_impute(X2))
wmat("missing1", knn_impute(X1))
wscalar("sample_ok", True)
