"""scikit-learn's LinearSVC (squared hinge, C = 1/(2 reg), intercept
regularized like every weight) on the standardized breast cancer data; its
solution is polished by the active-set Newton method of the squared-hinge
problem (exact once the set of examples with positive slack is right)."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import *
from sklearn.svm import LinearSVC

reg = 1.0
X, y = load("breast_cancer")
Xs = standardize(X)
svc = LinearSVC(C=1 / (2 * reg), loss="squared_hinge", dual=False, tol=1e-12,
                max_iter=100000, intercept_scaling=1.0, random_state=0).fit(Xs, y)
w_sk = np.append(svc.coef_.ravel(), svc.intercept_)
Xi = np.hstack([Xs, np.ones((X.shape[0], 1))])
ypm = np.where(y == 2, 1.0, -1.0)


def objective(w):
    h = np.maximum(0, 1 - ypm * (Xi @ w))
    return 0.5 * h @ h + 0.5 * reg * w @ w


w = w_sk.copy()
for _ in range(50):
    act = 1 - ypm * (Xi @ w) > 0
    Xa = Xi[act]
    w_new = np.linalg.solve(reg * np.eye(Xi.shape[1]) + Xa.T @ Xa, Xa.T @ ypm[act])
    if np.array_equal(act, 1 - ypm * (Xi @ w_new) > 0):
        w = w_new
        break
    w = w_new
h = np.maximum(0, 1 - ypm * (Xi @ w))
grad = reg * w - Xi.T @ (h * ypm)
check(np.linalg.norm(grad) < 1e-10, "optimality of the polished model")
check(np.max(np.abs(w - w_sk)) < 1e-6 * np.max(np.abs(w)), "LinearSVC agrees with the polished model")
check(abs(objective(w_sk) - objective(w)) < 1e-7 * objective(w), "LinearSVC objective")
check(np.min(np.abs(1 - ypm * (Xi @ w))) > 1e-6, "no example on the margin")
pred = np.where(Xi @ w > 0, 2, 1)
check(np.array_equal(pred, svc.predict(Xs)), "LinearSVC predictions")
wref("model", w)
wscalar("obj", objective(w))
wscalar("model_ok", True)
wscalar("predict_ok", True)
wscalar("nsv", int(np.sum(1 - ypm * (Xi @ w) > 0)))
wscalar("acc", 100 * np.mean(pred == y))
wscalar("npos", int(np.sum(pred == 2)))
