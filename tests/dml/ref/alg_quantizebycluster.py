"""quantizeByCluster on data with planted blobs per subspace: the quantized
reconstruction must be each point's blob mean (kmeans finds the blobs),
computed here in NumPy; the space decomposition's per-subspace projectors
R_b R_b' vs parametric OPQ's eigenvalue allocation (SystemDS's greedy) in NumPy."""
import numpy as np

from _common import wmat, wref

rng = np.random.default_rng(5)
n = 45
centres = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])


def blobs(n, cols, shared):
    X = np.zeros((n, cols))
    XQ = np.zeros((n, cols))
    for j in range(cols // 2):
        lab = np.arange(n) % 3
        rng.shuffle(lab)
        off = centres if shared else centres + rng.uniform(-30, 30, size=(3, 2))
        P = off[lab] + np.round(rng.normal(scale=0.3, size=(n, 2)), 4)
        X[:, 2 * j:2 * j + 2] = P
        for c in range(3):
            XQ[lab == c, 2 * j:2 * j + 2] = P[lab == c].mean(axis=0)
    return X, XQ


# separate codebooks: 6 columns, M = 3 subspaces of 2
X1, Q1 = blobs(n, 6, False)
wref("X1", X1)
wmat("recon_sep", Q1)
# one shared codebook: every subspace has the same three blobs
X2, _ = blobs(n, 6, True)
# shared blobs: the mean over all subvectors of a blob
S = np.vstack([X2[:, 2 * j:2 * j + 2] for j in range(3)])
lab = np.argmin(((S[:, None, :] - centres[None]) ** 2).sum(axis=2), axis=1)
M = np.array([S[lab == c].mean(axis=0) for c in range(3)])
wref("X2", X2)
wmat("recon_shared", np.hstack([M[lab[j * n:(j + 1) * n]] for j in range(3)]))
# padding: 5 columns, M = 2 -> s = 3 (the sixth column is 0)
X3 = np.hstack([X1[:, :4], X1[:, 4:5]])
wref("X3", X3)

# space decomposition on correlated Gaussian data, d = 6, M = 3
A = rng.normal(size=(6, 6))
X4 = rng.normal(size=(40, 6)) @ A
wref("X4", X4)
# SystemDS's allocation: eigenvalues in descending order, each to the
# subspace of smallest eigenvalue product (starting at 1; a full one
# scores Inf; the last index on a tie)
C = np.cov(X4, rowvar=False)
ev, V = np.linalg.eigh(C)
ev, V = ev[::-1], V[:, ::-1]
Mb, s = 3, 2
prod = np.ones(Mb)
fill = np.zeros(Mb, dtype=int)
bucket = [[] for _ in range(Mb)]
for j in range(6):
    score = np.where(fill >= s, np.where(prod == 0, 0.0, np.inf), prod)
    b = int(np.flatnonzero(score == score.min())[-1])
    fill[b] += 1
    prod[b] *= ev[j]
    bucket[b].append(j)
for b in range(Mb):
    Vb = V[:, bucket[b]]
    wmat("proj%d" % (b + 1), Vb @ Vb.T)

import os
with open(os.path.join(os.sys.argv[1], "stdout.txt"), "w") as f:
    f.write("""separate: shapes and code ranges TRUE
shared: 3x2 codebook, codes in 1.0..3.0
padded: shapes, centroids are means, codes nearest TRUE
seeded repeat identical TRUE
rotation orthogonal TRUE
rotated subvectors quantized TRUE
""")
