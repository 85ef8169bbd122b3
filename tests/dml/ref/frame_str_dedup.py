"""Reference of cases/frame_str_dedup.dml: SystemDS's dedup in Python
(non-negative embeddings: one LSH bucket, so every pair is a candidate)."""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import wscalar  # noqa: E402
from _frames import fstr, rows_to_cols, wstdout  # noqa: E402

X = [["John Smith", "New York"], ["john smith", "NEW YORK"], ["Mary Major", "Boston"], ["Jon Smith", "New York"],
     ["Zed", "Paris"], ["qq", None], ["Mary  Major!", "Boston"], ["mary major", "boston"]]
vocab = ["john", "smith", "new", "york", "mary", "major", "boston", "jon", "paris", "smith"]
g = [1, 0, 0, 0.9, 0.1, 0, 0, 1, 0, 0, 0.9, 0.1, 0, 0, 1, 0.1, 0, 0.9, 0.5, 0.5, 0, 0.95, 0.05, 0,
     0.2, 0.3, 0.5, 0, 0, 7]
G = [g[3 * i:3 * i + 3] for i in range(10)]


def emb(row):
    words = "".join(c + " " for c in row if c is not None).strip().lower().split()
    found = [G[vocab.index(w)] for w in words if w in vocab]
    if not found:
        return [0.0] * 3
    return [sum(v[k] for v in found) / len(found) for k in range(3)]


def sim(a, b, measure):
    if measure == "cosine":
        na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(x * x for x in b))
        return float("nan") if na * nb == 0 else sum(x * y for x, y in zip(a, b)) / (na * nb)
    return -math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)))


def dedup(R, measure="cosine", thr=0.8):
    E = [emb(r) for r in R]
    ids = set()
    for i in range(len(R)):
        for j in range(i + 1, len(R)):
            if sim(E[i], E[j], measure) >= thr:   # NaN never matches
                ids |= {i, j}
    dup = [i in ids and i != min(ids) for i in range(len(R))]
    return [R[0]] + [r for r, d in zip(R, dup) if not d], [R[0]] + [r for r, d in zip(R, dup) if d]


lines = []
for R, args in ((X, ()), (X, ("cosine", 0.9999)), (X, ("euclidean", -0.2)), (X[1:], ("euclidean", -1e-12))):
    for part in dedup(R, *args):
        lines += fstr(rows_to_cols(part, 2), ["STRING", "STRING"])
U, D = dedup(X, "cosine", 1.5)
wscalar("none", len(U) * 10 + len(D))
wstdout(lines)
