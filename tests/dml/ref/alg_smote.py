"""smote's deterministic parts as SystemDS's script defines them, in plain
Python: the neighbours (stable distance order, positions 2..k+1, a
categorical difference weighted by the median numeric sd only when the
categorical differences to the row do not sum to 0) and the categorical
modes (counts of the values 1..#neighbours, the last maximum, as
rowIndexMax). The case checks the draws by their structure: one
neighbour rank and one gap per round, shared by all rows."""
import math

import numpy as np

from _common import wref, wscalar
from _frames import wstdout

rng = np.random.default_rng(5)
n, k = 20, 3
# as many 1s as 3s: the rows of category 2 sit at the column's mean, so
# their categorical differences cancel and SystemDS's script skips the
# weighting for them
cat = rng.permutation([1] * 6 + [2] * 8 + [3] * 6)
X = np.column_stack([np.round(rng.random((n, 3)), 6), cat]).astype(float)
wref("X", X)
mask = [0, 0, 0, 1]


def sd(col):
    m = sum(col) / len(col)
    return math.sqrt(sum((v - m) ** 2 for v in col) / (len(col) - 1))


def median(v):
    s = sorted(v)
    h = len(s) // 2
    return s[h] if len(s) % 2 else (s[h - 1] + s[h]) / 2


w = median([sd(X[:, j]) for j in range(3)])
N = np.zeros((n, k))
cancel = 0
for i in range(n):
    dif = X - X[i]
    weigh = sum(dif[:, 3]) != 0
    cancel += not weigh
    d = [math.sqrt(sum(dif[r, j] ** 2 for j in range(3)) + ((w if dif[r, 3] != 0 else 0) ** 2 if weigh else dif[r, 3] ** 2))
         for r in range(n)]
    order = sorted(range(n), key=lambda r: d[r])
    N[i] = [r + 1 for r in order[1:k + 1]]
wref("N", N)
C = np.zeros((n, 1))
for i in range(n):
    vals = [X[int(r) - 1, 3] for r in sorted(N[i])]
    cnt = [sum(1 for v in vals if v == c) for c in range(1, len(vals) + 1)]
    C[i, 0] = max(c for c in range(1, len(vals) + 1) if cnt[c - 1] == max(cnt))
wref("C", C)
assert cancel > 0, "no row exercises SystemDS's cancelled categorical weighting"
wscalar("ok", True)
wscalar("rows_fallback", n)
wstdout(["the number of samples should be an integral multiple of 100. Setting s = 100"])
