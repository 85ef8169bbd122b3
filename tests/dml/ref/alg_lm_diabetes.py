"""scikit-learn's LinearRegression and Ridge on the diabetes data (and
Ridge on the data standardized with divisor n-1, mapped back to the
original columns); coefficients with the intercept last; r2_score."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import *
from sklearn.linear_model import LinearRegression, Ridge
from sklearn.metrics import r2_score

X, y = load("diabetes")
ols = LinearRegression().fit(X, y)
ridge = Ridge(alpha=1.0, solver="cholesky").fit(X, y)
mu = X.mean(axis=0)
sd = np.sqrt(((X - mu) ** 2).sum(axis=0) / (X.shape[0] - 1))
rs = Ridge(alpha=1.0, solver="cholesky").fit((X - mu) / sd, y)
w = rs.coef_ / sd
b = rs.intercept_ - mu @ w
wref("ols", np.append(ols.coef_, ols.intercept_))
wref("ridge", np.append(ridge.coef_, ridge.intercept_))
wref("ridge_std", np.append(w, b))
wmat("ok", np.ones(4))
wscalar("r2_ols", r2_score(y, ols.predict(X)))
wscalar("r2_ridge", r2_score(y, ridge.predict(X)))
