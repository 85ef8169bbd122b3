"""scikit-learn's PoissonRegressor (lbfgs) on the diabetes data, polished by
Newton's method on the same objective (mean deviance / 2 + alpha/2 |w|^2)."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import *
from sklearn.linear_model import PoissonRegressor
from sklearn.metrics import mean_poisson_deviance

X, y = load("diabetes")
n, m = X.shape
Xi = np.hstack([X, np.ones((n, 1))])
devs = []
for i, alpha in enumerate([0.001, 0.01], start=1):
    pr = PoissonRegressor(alpha=alpha, tol=1e-12, max_iter=100000).fit(X, y)
    b = np.append(pr.coef_, pr.intercept_)
    pen = np.append(np.full(m, alpha), 0.0)
    for _ in range(30):
        mu = np.exp(Xi @ b)
        g = Xi.T @ (mu - y) / n + pen * b
        H = Xi.T @ (Xi * mu[:, None]) / n + np.diag(pen)
        step = np.linalg.solve(H, g)
        b = b - step
        if np.max(np.abs(step)) <= 1e-14 * np.max(np.abs(b)):
            break
    check(np.max(np.abs(step)) <= 1e-12 * np.max(np.abs(b)), "Newton converged")
    skb = np.append(pr.coef_, pr.intercept_)
    check(np.max(np.abs(skb - b)) <= 1e-5 * np.max(np.abs(b)), "PoissonRegressor close to the optimum")
    mu = np.exp(Xi @ b)
    check(np.max(np.abs(pr.predict(X) - mu) / mu) <= 1e-5, "PoissonRegressor means")
    wref("beta%d" % i, b)
    wref("mean%d" % i, mu)
    devs.append(mean_poisson_deviance(y, mu))
wmat("ok", np.ones((2, 2)))
wmat("mean_deviance", devs)
