"""hospitalResidencyMatch vs resident-proposing deferred acceptance in
plain Python (with a stability self-check): SystemDS's documented example
and random instances with capacities, truncated resident lists and
unacceptable residents (H value 0)."""
import numpy as np

from _common import wmat, wref, check


def da(R, H, cap):
    nR, nH = R.shape
    nxt = [0] * nR
    held = [[] for _ in range(nH)]
    free = list(range(nR))[::-1]
    while free:
        i = free[-1]
        if nxt[i] >= nH or R[i, nxt[i]] == 0:
            free.pop()
            continue
        j = int(R[i, nxt[i]]) - 1
        nxt[i] += 1
        if H[j, i] <= 0:
            continue
        free.pop()
        held[j].append(i)
        if len(held[j]) > cap[j]:
            worst = min(held[j], key=lambda r: (H[j, r], -r))
            held[j].remove(worst)
            free.append(worst)
    RM = np.zeros((nR, nH))
    HM = np.zeros((nH, nR))
    for j in range(nH):
        for i in held[j]:
            rank = list(R[i]).index(j + 1)
            RM[i, j] = nH - rank
            HM[j, i] = H[j, i]
    # stability: no resident i and hospital j that prefer each other
    match = {i: j for j in range(nH) for i in held[j]}
    for i in range(nR):
        lst = [int(h) - 1 for h in R[i] if h > 0]
        better = lst[:lst.index(match[i])] if i in match else lst
        for j in better:
            if H[j, i] <= 0:
                continue
            full = len(held[j]) >= cap[j]
            check(full and all(H[j, r] >= H[j, i] for r in held[j]), "blocking pair")
    return RM, HM


R = np.array([[2, 1, 3], [1, 2, 3], [1, 2, 0]], float)
H = np.array([[2, 1, 0], [0, 1, 2], [1, 2, 0]], float)
RM, HM = da(R, H, [1, 1, 1])
wmat("doc_R", RM)
wmat("doc_H", HM)
rng = np.random.default_rng(12)
for t, (nR, nH, cap) in enumerate([(12, 4, [3, 2, 4, 1]), (9, 5, [1, 1, 2, 1, 3])]):
    R = np.zeros((nR, nH))
    for i in range(nR):
        L = rng.permutation(nH) + 1
        L[rng.integers(max(1, nH - 2), nH + 1):] = 0
        R[i] = L
    H = rng.permutation(nH * nR).reshape(nH, nR).astype(float) + 1
    H[rng.random((nH, nR)) < 0.15] = 0
    wref("R%d" % t, R)
    wref("H%d" % t, H)
    wref("cap%d" % t, np.array(cap, float))
    RM, HM = da(R, H, cap)
    wmat("r%d_R" % t, RM)
    wmat("r%d_H" % t, HM)
