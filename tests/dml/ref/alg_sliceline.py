"""sliceLine vs a brute-force enumeration of every slice (conjunctions of
"feature == value" on distinct features) on small recoded data with planted
high-error slices: the top-k slices by score (sc > 0, size >= minSup, at
most maxL predicates), their scores, total and maximum errors and sizes."""
import itertools

import numpy as np

from _common import wmat, wref, wscalar, check

rng = np.random.default_rng(5)
n = 300
doms = [3, 4, 2, 3, 2, 3]
m = len(doms)
X = np.column_stack([rng.integers(1, d + 1, n) for d in doms]).astype(float)
X[rng.random((n, m)) < 0.04] = 0
e = rng.random(n) * 0.3
e[(X[:, 0] == 2) & (X[:, 1] == 3)] += 1.5
e[X[:, 3] == 1] += 1.6
e[(X[:, 2] == 1) & (X[:, 4] == 2) & (X[:, 5] == 3)] += 0.9 * rng.random(
    ((X[:, 2] == 1) & (X[:, 4] == 2) & (X[:, 5] == 3)).sum())
wref("X", X)
wref("e", e)


def brute(k, maxL, minSup, alpha):
    eavg = e.mean()
    res = []
    for L in range(1, (maxL or m) + 1):
        for feats in itertools.combinations(range(m), L):
            for vals in itertools.product(*[range(1, doms[f] + 1) for f in feats]):
                mask = np.ones(n, bool)
                for f, v in zip(feats, vals):
                    mask &= X[:, f] == v
                ss = mask.sum()
                if ss < max(minSup, 1):
                    continue
                se = e[mask].sum()
                sc = alpha * ((se / ss) / eavg - 1) - (1 - alpha) * (n / ss - 1)
                if sc > 0:
                    row = np.zeros(m)
                    row[list(feats)] = vals
                    res.append((sc, se, e[mask].max(), ss, row))
    res.sort(key=lambda r: -r[0])
    # no ties among the top k (and with the next one): a unique answer
    scs = [r[0] for r in res[:k + 1]]
    check(all(a - b > 1e-9 for a, b in zip(scs, scs[1:])), "ties in the top-k")
    top = res[:k]
    TK = np.array([r[4] for r in top]).reshape(-1, m)
    TKC = np.array([r[:4] for r in top]).reshape(-1, 4)
    return TK, TKC


for name, args in [("def", (4, 0, 32, 0.95)), ("l2", (6, 2, 5, 0.9)),
                   ("deep", (8, 0, 8, 0.95)), ("l3", (5, 3, 12, 0.9))]:
    TK, TKC = brute(*args)
    check(len(TK) == args[0], "fewer than k slices for " + name)
    wmat(name + "_TK", TK)
    wmat(name + "_TKC", TKC)
wscalar("half_rows", 0)
wscalar("zero_rows", 0)
wscalar("none_rows", 0)
wscalar("levels_ok", True)
