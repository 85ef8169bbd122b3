"""The best of 200 scikit-learn KMeans runs (Lloyd, k-means++ seeding) on
iris (k=3, 5) and the standardized wine data (k=3): inertia (WCSS),
cluster sizes and centroids (sorted by the first coordinate)."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import *
from sklearn.cluster import KMeans


def ref(X, k, name):
    km = KMeans(n_clusters=k, n_init=200, tol=0, max_iter=1000, algorithm="lloyd",
                random_state=0).fit(X)
    lab = km.labels_
    C = np.array([X[lab == c].mean(axis=0) for c in range(k)])
    wcss = sum(((X[lab == c] - C[c]) ** 2).sum() for c in range(k))
    check(abs(wcss - km.inertia_) <= 1e-9 * wcss, name + ": inertia")
    wref(name + "_centroids", C[np.argsort(C[:, 0], kind="stable")])
    wscalar(name + "_wcss", wcss)
    wmat(name + "_sizes", np.sort(np.bincount(lab, minlength=k)))
    wscalar(name + "_ok", True)


X, _ = load("iris")
ref(X, 3, "iris3")
ref(X, 5, "iris5")
W, _ = load("wine")
ref(standardize(W), 3, "wine3")
