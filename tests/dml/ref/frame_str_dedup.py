"""Reference of cases/frame_str_dedup.dml: mean embeddings and all-pairs
similarities in NumPy."""
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import wscalar  # noqa: E402
from _frames import fstr, rows_to_cols, wstdout  # noqa: E402

X = [["John Smith", "New York"], ["john smith", "NEW-YORK"], ["Mary Major", "Boston"], ["Jon Smith", "New York"],
     ["Zed", "Paris"], ["qq", None], ["Mary  Major!", "Boston"]]
vocab = ["john", "smith", "new", "york", "mary", "major", "boston", "jon", "paris"]
G = np.array([1, 0, 0, 0.9, 0.1, 0, 0, 1, 0, 0, 0.9, 0.1, 0, 0, 1, 0.1, 0, 0.9, 0.5, 0.5, 0, 0.95, 0.05, 0,
              0.2, 0.3, 0.5]).reshape(9, 3)


def emb(row):
    s = re.sub("[^a-z0-9]", " ", " ".join("" if c is None else c for c in row).lower())
    v = [G[vocab.index(w)] for w in s.split() if w in vocab]
    return np.mean(v, axis=0) if v else np.zeros(3)


def dedup(R, measure="cosine", thr=0.8):
    E = [emb(r) for r in R]

    def sim(a, b):
        if measure == "cosine":
            na, nb = np.linalg.norm(a), np.linalg.norm(b)
            return 0.0 if na == 0 or nb == 0 else a @ b / (na * nb)
        return 1 / (1 + np.linalg.norm(a - b))
    dup = [any(sim(E[i], E[j]) >= thr for i in range(j)) for j in range(len(R))]
    return [r for r, d in zip(R, dup) if not d], [r for r, d in zip(R, dup) if d]


lines = []
for args in ((), ("cosine", 0.99), ("euclidean", 0.9)):
    for part in dedup(X, *args):
        lines += fstr(rows_to_cols(part, 2), ["STRING", "STRING"])
U, D = dedup(X[:1])
lines += fstr(rows_to_cols(U, 2), ["STRING", "STRING"])
wscalar("n1", len(D))
U, D = dedup(X, "cosine", 1.5)
wscalar("none", len(U) * 10 + len(D))
wstdout(lines)
