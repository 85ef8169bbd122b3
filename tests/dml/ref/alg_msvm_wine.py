"""scikit-learn's LinearSVC (one-vs-rest, squared hinge, C = 1/(2 reg),
intercept regularized) on the standardized wine data, each class's model
polished to the exact optimum (ref/_svm.py)."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import *
from _svm import svm_polish, svm_objective
from sklearn.svm import LinearSVC
from sklearn.metrics import confusion_matrix, accuracy_score, balanced_accuracy_score

reg = 1.0
X, y = load("wine")
Xs = standardize(X)
Xi = np.hstack([Xs, np.ones((X.shape[0], 1))])
svc = LinearSVC(C=1 / (2 * reg), loss="squared_hinge", dual=False, tol=1e-12,
                max_iter=100000, intercept_scaling=1.0, random_state=0).fit(Xs, y)
W_sk = np.vstack([svc.coef_.T, svc.intercept_])
W = np.zeros_like(W_sk)
obj = []
for c in range(3):
    ypm = np.where(y == c + 1, 1.0, -1.0)
    W[:, c] = svm_polish(Xi, ypm, reg, W_sk[:, c])
    obj.append(svm_objective(Xi, ypm, reg, W[:, c]))
check(np.max(np.abs(W - W_sk)) < 1e-6 * np.max(np.abs(W)), "LinearSVC agrees with the polished models")
pred = np.argmax(Xi @ W, axis=1) + 1
check(np.array_equal(pred, svc.predict(Xs)), "LinearSVC predictions")
wref("model", W)
wmat("obj", np.array(obj).reshape(1, -1))
wscalar("model_ok", True)
wmat("pred", pred)
wmat("confusion", confusion_matrix(y, pred).T)   # rows: predicted, columns: actual
wscalar("acc", 100 * accuracy_score(y, pred))
wscalar("balanced_acc", 100 * balanced_accuracy_score(y, pred))
