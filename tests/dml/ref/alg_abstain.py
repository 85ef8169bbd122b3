"""abstain vs scikit-learn's LogisticRegression (C = 1/1e-4, unpenalized
intercept) on iris versicolor (1) vs virginica (2), sepal length/width."""
import numpy as np
from sklearn.linear_model import LogisticRegression

from _common import load, wmat, wscalar

X, y = load("iris")
s = y > 1
X2 = X[s][:, :2]
Y2 = y[s] - 1
lr = LogisticRegression(C=1e4, solver="newton-cholesky", tol=1e-12, max_iter=1000).fit(X2, Y2)
P = lr.predict_proba(X2)
yhat = lr.classes_[P.argmax(axis=1)]
conf = P.max(axis=1)
for t in (0.6, 0.75):
    assert np.min(np.abs(conf - t)) > 1e-4 and np.min(np.abs(P[:, 0] - 0.5)) > 1e-4
w6 = (yhat != Y2) & (conf > 0.6)
assert w6.sum() > 0
wmat("kept06", np.column_stack([X2[~w6], Y2[~w6]]))
wscalar("kept075", int(((yhat == Y2) | (conf <= 0.75)).sum()))
wscalar("single", len(X2))
