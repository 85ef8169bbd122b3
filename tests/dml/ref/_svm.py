"""Squared-hinge SVM optimum by the active-set Newton method (not a case):
minimizes reg/2 |w|^2 + 1/2 sum max(0, 1 - y Xw)^2 for y in {-1, +1},
starting from w0 (e.g. scikit-learn's solution)."""
import numpy as np


def svm_polish(X, ypm, reg, w0):
    w = np.array(w0, dtype=float)
    for _ in range(100):
        act = 1 - ypm * (X @ w) > 0
        Xa = X[act]
        w_new = np.linalg.solve(reg * np.eye(X.shape[1]) + Xa.T @ Xa, Xa.T @ ypm[act])
        done = np.array_equal(act, 1 - ypm * (X @ w_new) > 0)
        w = w_new
        if done:
            break
    h = np.maximum(0, 1 - ypm * (X @ w))
    grad = reg * w - X.T @ (h * ypm)
    if np.linalg.norm(grad) > 1e-9 * max(1.0, np.linalg.norm(X.T @ ypm)):
        raise SystemExit("svm_polish did not converge")
    if np.min(np.abs(1 - ypm * (X @ w))) < 1e-6:
        raise SystemExit("an example sits on the margin: the case is fragile")
    return w


def svm_objective(X, ypm, reg, w):
    h = np.maximum(0, 1 - ypm * (X @ w))
    return 0.5 * h @ h + 0.5 * reg * w @ w
