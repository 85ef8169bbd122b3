"""mcc vs scikit-learn's matthews_corrcoef."""
import numpy as np
from sklearn.metrics import matthews_corrcoef

from _common import wscalar

P = np.array([1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0, 1])
Y = np.array([1, 0, 0, 1, 0, 1, 1, 0, 1, 0, 0, 1])
wscalar("binary", matthews_corrcoef(Y, P))
wscalar("binary12", matthews_corrcoef(Y + 1, P + 1))
wscalar("perfect", matthews_corrcoef(Y, Y))
wscalar("inverted", matthews_corrcoef(Y, 1 - Y))
wscalar("constant", matthews_corrcoef(Y, np.ones(12)))
P3 = np.array([1, 3, 3, 1, 1, 3, 1, 3, 2, 2])
Y3 = np.array([1, 2, 3, 1, 2, 3, 3, 2, 2, 1])
wscalar("multiclass", matthews_corrcoef(Y3, P3))
