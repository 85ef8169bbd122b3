"""mse, rmse, mae, mape, smape, msmape, nrmse, psnr, skewness vs scikit-learn
(mean_squared_error, mean_absolute_error, mean_absolute_percentage_error),
SciPy (skew) and the textbook formulas in NumPy; quantiles of the per-cell
error terms by NumPy's inverted-CDF quantile (DML's definition), as rows
(SystemDS's layout); skewness by SystemDS's definition (sample sd)."""
import numpy as np
from scipy.stats import skew
from sklearn.metrics import (mean_absolute_error, mean_absolute_percentage_error,
                             mean_squared_error)

from _common import wmat, wref, wscalar

rng = np.random.default_rng(11)
X = np.round(rng.uniform(0.5, 10, size=(9, 3)), 3)
Y = np.round(X + rng.normal(size=(9, 3)), 3)
Y[4, 1] = X[4, 1]           # an exact prediction
Y[7, 2] = -X[7, 2]          # sign flip (smape term 2)
P = np.array([0, 0.1, 0.25, 0.5, 0.9, 1.0])
wref("X", X)
wref("Y", Y)
wref("P", P)
x, y = X.ravel(), Y.ravel()


def q(e):
    """As SystemDS returns them: a row."""
    return np.quantile(e, P, method="inverted_cdf").reshape(1, -1)


mse = mean_squared_error(x, y)
wscalar("mse", mse)
wmat("mse_q", q((x - y) ** 2))
wscalar("rmse", np.sqrt(mse))
wmat("rmse_q", q(np.abs(x - y)))
wscalar("mae", mean_absolute_error(x, y))
wmat("mae_q", q(np.abs(x - y)))
wscalar("mape", mean_absolute_percentage_error(x, y))
wmat("mape_q", q(np.abs(x - y) / np.abs(x)))
e = 2 * np.abs(x - y) / (np.abs(x) + np.abs(y))
wscalar("smape", e.mean())
wmat("smape_q", q(e))
e = np.abs(x - y) / (np.maximum(np.abs(x) + np.abs(y) + 0.1, 0.6) / 2)
wscalar("msmape", e.mean())
wmat("msmape_q", q(e))
wscalar("msmape_small", np.mean(np.abs(np.array([0.1, -0.2]) - np.array([0.0, 0.1]))
                                / (np.maximum(np.abs([0.1, -0.2]) + np.abs([0.0, 0.1]) + 0.1, 0.6) / 2)))
rng_ = x.max() - x.min()
wscalar("nrmse", np.sqrt(mse) / rng_)
wmat("nrmse_q", q(np.abs(x - y) / rng_))
wscalar("psnr", 10 * np.log10(np.abs(x).max() ** 2 / mse))
# SystemDS's skewness standardizes by the sample sd: SciPy's biased
# estimator times ((N - 1) / N)^1.5
N = len(x)
wscalar("skew", skew(x) * ((N - 1) / N) ** 1.5)
wscalar("skew_sq", skew(x ** 2) * ((N - 1) / N) ** 1.5)
import os
from _common import EXP_DIR
with open(os.path.join(EXP_DIR, "stdout.txt"), "w") as f:
    f.write("default P gives 0x0\npsnr of equal inputs: Infinity\n")
