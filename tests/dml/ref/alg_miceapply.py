"""miceApply vs SystemDS's procedure in NumPy (ref/_mice.py): mice
(3 rounds, threshold 0.5) fitted on 60 training rows, its last round's
models applied in one pass to 25 new rows with missing cells in every
column (thresholds 0.5 and 0.95): numeric within 1e-7, categorical
exactly, NaN at the same cells; the last column (numeric, one coded
column) is never walked, so its missing cells become 1 (SystemDS)."""
import numpy as np

from _mice import mice, mice_apply
from _common import wref, wscalar

rng = np.random.default_rng(8)


def gen(n):
    x1 = rng.normal(0, 1, n)
    x2 = 0.8 * x1 + rng.normal(0, 0.5, n) + 2
    c3 = np.digitize(x1 + rng.normal(0, 0.4, n), [-0.5, 0.5]) + 1.0
    c4 = (x2 + rng.normal(0, 0.5, n) > 2).astype(float) + 1
    x5 = rng.normal(0, 1, n)
    return np.column_stack([x1, x2, c3, c4, x5])


X = gen(60)
for j, rows in enumerate([[2, 9, 17, 40], [5, 9, 30], [1, 12, 22, 33, 44, 50], [7, 17, 28, 55]]):
    X[rows, j] = np.nan          # column 5 has no missing cell
T = gen(25)
for j, rows in enumerate([[0, 4, 11], [3, 11, 19], [2, 6, 13, 21], [8, 16], [5, 9]]):
    T[rows, j] = np.nan
wref("X", X)
wref("T", T)
cmask = np.array([0, 0, 1, 1, 0])

_, state = mice(X, cmask, 3, 0.5)
o5 = mice_apply(T, state, 0.5)
assert np.all(o5[[5, 9], 4] == 1.0)
wref("out_05", o5)
wref("out_095", mice_apply(T, state, 0.95))
wscalar("ok_05", True)
wscalar("ok_095", True)
