"""gmm vs scikit-learn's GaussianMixture on iris (3 components, all four
covariance types, best of 20 initializations, run to convergence): mean
log-likelihood and BIC, weights, means and precision Cholesky factors with
components ordered by their first mean coordinate."""
import numpy as np
from sklearn.mixture import GaussianMixture

from _common import load, wscalar, wref, wmat

X, _ = load("iris")
n, m = X.shape
dfs = []
for name, ct in [("VVV", "full"), ("EEE", "tied"), ("VVI", "diag"), ("VII", "spherical")]:
    g = GaussianMixture(n_components=3, covariance_type=ct, tol=1e-13, max_iter=100000,
                        n_init=20, reg_covar=1e-6, random_state=0).fit(X)
    o = np.argsort(g.means_[:, 0])
    wref(name + "_bic", [g.bic(X)])
    dfs.append(g._n_parameters())
    wref(name + "_w", g.weights_[o].reshape(1, -1))
    wref(name + "_mu", g.means_[o])
    pc = g.precisions_cholesky_
    if ct == "full":
        pc = np.vstack([pc[i] for i in o])
    elif ct == "tied":
        pass
    elif ct == "diag":
        pc = pc[o]
    else:
        pc = pc[o].reshape(-1, 1)
    wref(name + "_pc", pc)
    wref(name + "_prob", g.predict_proba(X)[:, o])
    wscalar(name + "_ok", True)
    wscalar(name + "_pred_ok", True)
wmat("df", np.array([dfs]))
g = GaussianMixture(n_components=1, covariance_type="full", reg_covar=1e-6, tol=1e-13).fit(X)
wref("one_bic", [g.bic(X)])
wscalar("one_ok", True)
