"""Reference of cases/frame_str_mdedup.dml: SystemDS's mdedup in Python:
character-set Jaccard similarities, components labelled by their
largest row, 0 for rows without a match."""
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


def adjacency(R, feats, thrs):
    """SystemDS's rule: a pair matches a feature when S + t(S) reaches its
    threshold, S the upper triangle of Jaccard similarities that map's
    pairwise form gives (so the similarity itself, 0 on the diagonal)."""
    n = len(R)
    return [[i != j and all(jac(R[i][f - 1], R[j][f - 1]) >= t for f, t in zip(feats, thrs))
             for j in range(n)] for i in range(n)]


def mdedup(R, lhs, lthr, rhs, rthr):
    """Matches on LHS and RHS; MD: the largest row of the component
    (components()' id) for rows with a match, 0 otherwise."""
    n = len(R)
    A = adjacency(R, lhs, lthr)
    B = adjacency(R, rhs, rthr)
    adj = [[A[i][j] and B[i][j] for j in range(n)] for i in range(n)]
    lab = list(range(1, n + 1))
    changed = True
    while changed:
        changed = False
        for i in range(n):
            m = max([lab[i]] + [lab[j] for j in range(n) if adj[i][j]])
            if m > lab[i]:
                lab[i] = m
                changed = True
    return [lab[i] if any(adj[i]) else 0 for i in range(n)]


MD = mdedup(X, [1, 2], [0.8, 0.8], [3], [1])
wmat("MD", MD)
with open(os.path.join(sys.argv[1], "stdout.txt"), "w") as f:
    f.write("\n".join("%.3f" % v for v in MD) + "\n\n")
wmat("MD2", mdedup(X, [2], [0.875], [3, 1], [0.6, 0.7]))
wmat("MD3", [0])

