"""scikit-learn's PCA (full SVD) on iris, digits (centered) and the wine
data standardized with divisor n-1: explained_variance_ and components_."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import *
from sklearn.decomposition import PCA


def ref(X, K, name):
    p = PCA(n_components=K, svd_solver="full").fit(X)
    ev = p.explained_variance_
    check(np.all(np.diff(ev) < -1e-6 * ev[0]), name + ": distinct eigenvalues")
    wref(name + "_components", p.components_.T)
    wmat(name + "_ev", ev.reshape(1, -1))
    wscalar(name + "_ok", True)


X, _ = load("iris")
ref(X, 2, "iris")
X, _ = load("digits")
ref(X, 10, "digits")
X, _ = load("wine")
ref(standardize(X), 4, "wine")
