"""Drew the inputs refdata/alg_adasyn/X.csv and Y.csv once (run by hand;
ref/alg_adasyn.R no longer calls it). Its neighbour references (w, N,
midx) and expected outputs were for an interpolating ADASYN; braid's
adasyn now follows SystemDS, which copies rows, and the case checks
SystemDS's properties instead.

Former description: adasyn by properties against neighbours computed in NumPy: the weights
of the minority rows (share of majority rows among their k nearest
neighbours in X) and their nearest minority neighbours. Four minority rows
form a far cluster (weight 0). The case checks that every synthetic row
lies on a segment from a minority row of positive weight to one of its
minority neighbours."""
import numpy as np

from _common import wref, wscalar

rng = np.random.RandomState(3)
n, k = 30, 3
X = np.round(rng.uniform(0, 1, (n, 3)), 5)
Y = np.ones(n)
mi = rng.choice(n, 8, replace=False)
Y[mi] = 2
# four minority rows in a far cluster: no majority neighbours, weight 0
X[mi[:4]] = np.round(3 + 0.01 * rng.uniform(0, 1, (4, 3)), 5)
wref("X", X)
wref("Y", Y)
midx = np.where(Y == 2)[0]
D = ((X[midx, None, :] - X[None, :, :]) ** 2).sum(axis=2)
D[np.arange(len(midx)), midx] = np.inf
nn = np.argsort(D, axis=1, kind="stable")[:, :k]
w = (Y[nn] == 1).sum(axis=1) / k
wref("w", w / w.sum())
Dm = ((X[midx, None, :] - X[None, midx, :]) ** 2).sum(axis=2)
np.fill_diagonal(Dm, np.inf)
wref("N", np.argsort(Dm, axis=1, kind="stable")[:, :k] + 1)
wref("midx", midx + 1)
for name in ("ok", "repeat_ok", "balance_ok", "beta_rows", "dth_ok", "labels01_ok"):
    wscalar(name, 7 if name == "beta_rows" else True)
