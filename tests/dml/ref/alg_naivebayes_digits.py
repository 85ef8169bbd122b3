"""scikit-learn's MultinomialNB (alpha 1 and 0.5) trained on the first 70%
of the digits rows (floor(0.7 n)), scored on the rest."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import *
from sklearn.naive_bayes import MultinomialNB

X, y = load("digits")
ntr = int(np.floor(0.7 * X.shape[0]))
Xtr, ytr, Xte, yte = X[:ntr], y[:ntr], X[ntr:], y[ntr:]
for i, alpha in enumerate([1.0, 0.5], start=1):
    nb = MultinomialNB(alpha=alpha).fit(Xtr, ytr)
    scores = Xte @ nb.feature_log_prob_.T + nb.class_log_prior_
    check(np.max(np.abs(scores - nb.predict_joint_log_proba(Xte))) < 1e-9, "joint log-likelihood")
    pred = nb.predict(Xte)
    check(np.array_equal(pred, nb.classes_[np.argmax(scores, axis=1)]), "predictions")
    wref("prior%d" % i, np.exp(nb.class_log_prior_))
    wref("cond%d" % i, np.exp(nb.feature_log_prob_))
    wref("scores%d" % i, scores)
    wscalar("ok%d" % i, True)
    wmat("pred%d" % i, pred)
    wscalar("acc%d" % i, 100 * np.mean(pred == yte))
wscalar("ntrain", ntr)
