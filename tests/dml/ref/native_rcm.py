"""Expected outputs of cases/native_rcm.dml (class numbering by hand)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import wmat  # noqa: E402
import numpy as np  # noqa: E402


def rcm(A, B):
    nr = max(A.shape[0], B.shape[0])
    nc = max(A.shape[1], B.shape[1])
    mc = min(A.shape[1], B.shape[1])
    C = np.zeros((nr, nc))
    N = np.zeros((nr, nc))
    for i in range(nr):
        a = A[0 if A.shape[0] == 1 else i]
        b = B[0 if B.shape[0] == 1 else i]
        labels = {}
        for j in range(mc):
            x, y = int(a[j]), int(b[j])
            if x == 0 or y == 0:
                continue
            C[i, j] = labels.setdefault((x, y), len(labels) + 1)
        for j in range(mc):
            if C[i, j]:
                N[i, j] = np.sum(C[i, :mc] == C[i, j])
    return C, N


A = np.array([[1, 1, 2, 0, 2, 3], [0, 1, 1, 1, 2, 2], [5, 5, 5, 0, 0, 5]], dtype=float)
B = np.array([[1, 2, 2, 1, 2, 0], [1, 1, 1, 1, 1, 1], [7, 7, 8, 8, 7, 7]], dtype=float)
C, N = rcm(A, B)
wmat("c1", C)
wmat("n1", N)
C2, N2 = rcm(A, B[0:1, :])
wmat("c2", np.hstack([C2, N2]))
C3, N3 = rcm(A[:, 0:4] + 0.5, B)
wmat("c3", np.hstack([C3, N3]))
