"""scikit-learn's GaussianNB on iris and wine (all rows, var_smoothing 1e-9
(the default) and 1e-2): class priors, per-class means and variances
(divisor n_c, plus var_smoothing times the largest population variance of
a column), joint log-likelihoods, probabilities, predictions, accuracy."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import *
from sklearn.naive_bayes import GaussianNB

for name in ("iris", "wine"):
    X, y = load(name)
    for i, vs in enumerate([1e-9, 1e-2], start=1):
        nb = GaussianNB(var_smoothing=vs).fit(X, y)
        check(np.array_equal(nb.classes_, np.arange(1, nb.classes_.size + 1)), "labels 1..C")
        # the model itself, recomputed: what the DML case computes
        eps = vs * np.var(X, axis=0).max()
        for c in range(nb.classes_.size):
            Xc = X[y == c + 1]
            check(np.allclose(nb.theta_[c], Xc.mean(axis=0), rtol=1e-14, atol=0), "means")
            check(np.allclose(nb.var_[c], Xc.var(axis=0) + eps, rtol=1e-12, atol=0), "variances")
        jll = nb.predict_joint_log_proba(X)
        pred = nb.predict(X)
        check(np.array_equal(pred, nb.classes_[np.argmax(jll, axis=1)]), "predictions")
        tag = "%s%d" % (name, i)
        wref(tag + "_logprior", np.log(nb.class_prior_))
        wref(tag + "_means", nb.theta_)
        wref(tag + "_vars", nb.var_)
        wref(tag + "_jll", jll)
        wref(tag + "_proba", nb.predict_proba(X))
        for what in ("model", "scores", "aggregate"):
            wscalar("%s_%s_ok" % (tag, what), True)
        wmat(tag + "_pred", pred)
        wscalar(tag + "_acc", 100 * np.mean(pred == y))
