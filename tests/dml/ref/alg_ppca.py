"""ppca vs the closed-form maximum-likelihood probabilistic PCA (Tipping &
Bishop 1999) in NumPy: the principal subspace is spanned by the K leading
eigenvectors of the covariance S = Xc'Xc / n; ppca's Mout is that orthonormal basis (largest absolute entry
of every column positive) and Xout the centered data projected on it."""
import numpy as np

from _common import wref, wscalar

rng = np.random.RandomState(5)
n = 60
A = np.array([[1, 0.5, 0.2, -0.3, 0.1], [0, 1, -0.4, 0.2, 0.6]])
X = (rng.normal(size=(n, 2)) * [5, 3]) @ A + 0.5 * rng.normal(size=(n, 5)) + [1, -2, 3, 0, 5]
X = np.round(X, 4)
wref("X", X)
Xc = X - X.mean(axis=0)
S = Xc.T @ Xc / n
ev, V = np.linalg.eigh(S)
ev, V = ev[::-1], V[:, ::-1]
for K in (1, 2, 3):
    U = V[:, :K].copy()
    for c in range(K):
        if U[np.argmax(np.abs(U[:, c])), c] < 0:
            U[:, c] = -U[:, c]
    wref("M%d" % K, U)
    wref("X%d" % K, Xc @ U)
    wscalar("ok%d" % K, True)
wscalar("orth_ok", True)
wscalar("shape_ok", True)
