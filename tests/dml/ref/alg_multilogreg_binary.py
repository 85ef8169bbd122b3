"""scikit-learn's LogisticRegression (C = 1/reg, unpenalized intercept) on
the standardized breast cancer data, polished by Newton's method on the
same objective. multiLogReg's baseline is label 2, so its weights are the
negated scikit-learn weights (which model class 2 against class 1)."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import *
from sklearn.linear_model import LogisticRegression

reg = 1.0
X, y = load("breast_cancer")
Xs = standardize(X)
n, m = Xs.shape
lr = LogisticRegression(C=1 / reg, solver="newton-cholesky", tol=1e-12, max_iter=1000).fit(Xs, y)
Xi = np.hstack([Xs, np.ones((n, 1))])
t = (y == 1).astype(float)           # multiLogReg's class 1 against baseline 2
beta = -np.append(lr.coef_.ravel(), lr.intercept_)
pen = np.append(np.full(m, reg), 0.0)


def objective(b):
    lt = Xi @ b
    return np.sum(np.logaddexp(0, lt)) - t @ lt + 0.5 * np.sum(pen * b * b)


for _ in range(20):
    p = 1 / (1 + np.exp(-(Xi @ beta)))
    g = Xi.T @ (p - t) + pen * beta
    H = Xi.T @ (Xi * (p * (1 - p))[:, None]) + np.diag(pen)
    beta = beta - np.linalg.solve(H, g)
p = 1 / (1 + np.exp(-(Xi @ beta)))
g = Xi.T @ (p - t) + pen * beta
check(np.linalg.norm(g) < 1e-10, "Newton optimum")
sk = -np.append(lr.coef_.ravel(), lr.intercept_)
print("sk vs newton", np.max(np.abs(sk - beta)), np.max(np.abs(beta)), objective(sk) - objective(beta))
check(np.max(np.abs(sk - beta)) < 1e-5 * np.max(np.abs(beta)), "scikit-learn agrees with Newton")
proba = np.column_stack([p, 1 - p])
check(np.max(np.abs(proba - lr.predict_proba(Xs))) < 1e-9, "scikit-learn probabilities")
pred = np.where(p > 0.5, 1, 2)
wref("betas_std", beta)
wref("proba", proba)
wscalar("obj1", objective(beta))
wscalar("obj2", objective(beta))
for name in ("betas1_ok", "betas2_ok", "proba_ok"):
    wscalar(name, True)
wscalar("acc", 100 * np.mean(pred == y))
wscalar("npred1", int(np.sum(pred == 1)))
