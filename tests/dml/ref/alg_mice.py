"""mice vs SystemDS's mice written out in NumPy (ref/_mice.py): start
values, dummy coding of every level, rounds over the previous round's
data, ridge least squares for numeric and multinomial logistic regression
for categorical columns with the threshold rule, NaN for unsure
categorical cells. Writes the input to refdata/alg_mice/X.csv and the
imputed matrices to refdata/alg_mice/ (numeric columns compared within
1e-7, categorical exactly, NaN at the same cells)."""
import numpy as np

from _mice import mice
from _common import wref, wmat, wscalar

rng = np.random.default_rng(8)
n = 60
x1 = rng.normal(0, 1, n)
x2 = 0.8 * x1 + rng.normal(0, 0.5, n) + 2
c3 = np.digitize(x1 + rng.normal(0, 0.4, n), [-0.5, 0.5]) + 1.0          # 1..3
c4 = (x2 + rng.normal(0, 0.5, n) > 2).astype(float) + 1                 # 1..2
X = np.column_stack([x1, x2, c3, c4])
for j, rows in enumerate([[2, 9, 17, 40], [5, 9, 30], [1, 12, 22, 33, 44, 50], [7, 17, 28, 55]]):
    X[rows, j] = np.nan
wref("X", X)
cmask = np.array([0, 0, 1, 1])

o1, st = mice(X, cmask, 3, 0.5)
o2, _ = mice(X, cmask, 1, 0.95)
wref("out1", o1)
wref("out2", o2)
s, levels, models, fit, _ = st
meta = np.vstack([cmask, fit.astype(float)] + [[1, 1, len(levels[2]), len(levels[3])]] * 3)
wmat("meta", meta)
wscalar("out1_ok", True)
wscalar("out2_ok", True)
wscalar("threshold", 0.5)
with open(__import__("os").path.join(__import__("sys").argv[1], "stdout.txt"), "w") as f:
    # betaList: start values, then models of columns 1..4; column 1's lm
    # weights: x2, 3 + 2 dummy columns and the intercept; column 3's
    # multiLogReg betas: x1, x2, 2 dummy columns, intercept x (3 - 1)
    nl = [len(levels[2]), len(levels[3])]
    f.write("5\n%d 1 %d %d\n" % (1 + nl[0] + nl[1] + 1, 2 + nl[1] + 1, nl[0] - 1))
# the categorical imputations are not just the start values, and the
# 0.95 run leaves some categorical cells unsure (NaN)
assert np.sum(o1[np.isnan(X[:, 2]), 2] != s[2]) > 0
assert np.isnan(o2).any()
