"""scale as R's scale / StandardScaler with divisor n-1, scikit-learn's
confusion_matrix (transposed: DML's rows are predictions), accuracy_score,
balanced_accuracy_score and r2_score."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import *
from sklearn.metrics import confusion_matrix, accuracy_score, balanced_accuracy_score, r2_score

X, _ = load("breast_cancer")
X = np.hstack([X, np.full((X.shape[0], 1), 3.0)])
n = X.shape[0]
wref("scaled", standardize(X))
rms = np.sqrt((X ** 2).sum(axis=0) / (n - 1))
wref("scaled_nocenter", X / rms)
wscalar("scale_ok", True)

_, y = load("iris")
y = y[:130]
i = np.arange(1, len(y) + 1)
p = y + ((i % 7 == 0) | ((y == 3) & (i % 5 == 0)))
p = np.where(p > 3, p - 3, p)
cm = confusion_matrix(y, p).T.astype(float)
wmat("confusion_sum", cm)
wmat("confusion_avg", cm / np.maximum(cm.sum(axis=0), 1))
wscalar("acc", 100 * accuracy_score(y, p))
wscalar("balanced_acc", 100 * balanced_accuracy_score(y, p))
wmat("onehot_colsums", np.append(np.bincount(y.astype(int) - 1, minlength=3), 0).reshape(1, -1))
wscalar("split_ok", True)

D, yd = load("diabetes")
yhat = 150 + 300 * D[:, 2]
res = yd - yhat
wmat("lmstats", [res.mean(), np.sum((res - res.mean()) ** 2), r2_score(yd, yhat)])
