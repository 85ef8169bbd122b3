"""Reference of cases/frame_str_mdedup.dml: character-set Jaccard
similarities and connected components in Python."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import wmat  # noqa: E402

X = [["Main Street", "Springfield", "12345"], ["Main Str", "Springfeld", "12345"],
     ["Oak Avenue", "Shelbyville", "54321"], ["Main Street", "Springfield", "12346"],
     ["Oak Avenu", "Shelbyville", "54321"], ["Main St", "Springfield", "12345"],
     [None, "Springfield", "12345"]]   # "" in frame([...]) is missing


def jac(a, b):
    if a is None or b is None:
        return 0.0
    A, B = set(a), set(b)
    return len(A & B) / len(A | B)


def mdedup(R, feats, thrs):
    n = len(R)
    lab = list(range(1, n + 1))
    adj = [[i != j and all(jac(R[i][f - 1], R[j][f - 1]) >= t for f, t in zip(feats, thrs)) for j in range(n)]
           for i in range(n)]
    changed = True
    while changed:
        changed = False
        for i in range(n):
            m = min([lab[i]] + [lab[j] for j in range(n) if adj[i][j]])
            if m < lab[i]:
                lab[i] = m
                changed = True
    return lab, sum(map(sum, adj)) // 2


lab, pairs = mdedup(X, [1, 2, 3], [0.8, 0.8, 1])
wmat("MD", lab)
with open(os.path.join(sys.argv[1], "stdout.txt"), "w") as f:
    f.write("mdedup: %d matching pairs\n" % pairs)
wmat("MD2", mdedup(X, [2, 3, 1], [0.875, 0.6, 0.7])[0])
wmat("MD3", [1])
