"""xgboost / xgboostPredict* vs boosting written out in NumPy from XGBoost's
formulas (Chen & Guestrin 2016): gradients and hessians of squared error
and logistic loss, exact greedy splits by the gain
0.5 (GL^2/(HL+lambda) + GR^2/(HR+lambda) - G^2/(H+lambda)), leaf weights
-G/(H+lambda), shrinkage by the learning rate. Trees grow level by level to
max_depth; scale features split at midpoints (x < t goes left), a
categorical feature splits one value off (x == v goes left). The model
matrices are laid out as xgboost.dml documents (breadth-first columns).
A one-off run of XGBoost 1.7.4 itself (Debian's python3-xgboost; exact
method, base_score = mean(y), min_child_weight 0, gamma 0) with these
settings and all features scale agreed with this reference within 6e-7
(float32) on training and held-out rows."""
import numpy as np

from _common import wref, wmat, wscalar


def best_split(X, R, g, h, lam):
    G, H = g.sum(), h.sum()
    min_gain = 1e-10 * (g ** 2).sum()
    cand = []            # (gain, feature, type, value) in feature, value order
    for j in range(X.shape[1]):
        x = X[:, j]
        cands = []
        if R[j] == 1:
            vals = np.unique(x)
            for a, b in zip(vals[:-1], vals[1:]):
                cands.append(((a + b) / 2, x < (a + b) / 2))
        else:
            for v in np.unique(x):
                if (x == v).sum() < len(x):
                    cands.append((v, x == v))
        for thr, left in cands:
            GL, HL = g[left].sum(), h[left].sum()
            gain = 0.5 * (GL ** 2 / (HL + lam) + (G - GL) ** 2 / (H - HL + lam) - G ** 2 / (H + lam))
            cand.append((gain, j + 1, R[j], thr))
    if not cand:
        return 0, 0, 0.0
    best = max(c[0] for c in cand)
    if best <= min_gain:
        return 0, 0, 0.0
    # near-equal gains (relative 1e-9) are ties: first feature, then value
    _, bf, btype, bthr = next(c for c in cand if c[0] >= best * (1 - 1e-9))
    return bf, btype, bthr


def tree(X, R, g, h, t, max_depth, lam):
    n = len(g)
    nodes = []           # (id, feature, type, value)
    fw = np.zeros(n)
    level = [(1, np.arange(n))]
    d = 0
    while level:
        nxt = []
        for nid, rows in level:
            f = 0
            if d < max_depth and len(rows) >= 2:
                f, ft, thr = best_split(X[rows], R, g[rows], h[rows], lam)
            if f > 0:
                x = X[rows, f - 1]
                left = x < thr if ft == 1 else x == thr
                nodes.append((nid, f, ft, thr))
                nxt += [(2 * nid, rows[left]), (2 * nid + 1, rows[~left])]
            else:
                w = -g[rows].sum() / (h[rows].sum() + lam)
                nodes.append((nid, 0, 0, w))
                fw[rows] = w
        level = nxt
        d += 1
    nodes.sort()
    ids = [nd[0] for nd in nodes]
    T = np.zeros((6, len(nodes)))
    for j, (nid, f, ft, v) in enumerate(nodes):
        T[:, j] = [nid, t, ids.index(2 * nid) - j if f > 0 else 0, f, ft, v]
    return T, fw


def xgboost(X, y, R, sml_type, num_trees, lr, max_depth, lam):
    if sml_type == 2:
        p = y.mean()
        F0 = np.log(p / (1 - p))
    else:
        F0 = y.mean()
    M = [np.array([[0, 0, 0, 0, 0, F0]]).T]
    F = np.full(len(y), F0)
    for t in range(1, num_trees + 1):
        if sml_type == 2:
            p = 1 / (1 + np.exp(-F))
            g, h = p - y, p * (1 - p)
        else:
            g, h = F - y, np.ones(len(y))
        T, fw = tree(X, R, g, h, t, max_depth, lam)
        M.append(T)
        F = F + lr * fw
    return np.hstack(M)


def predict(X, M, lr, sml_type):
    F = np.full(X.shape[0], M[5, 0])
    for t in range(1, int(M[1].max()) + 1):
        for i in range(X.shape[0]):
            j = int(np.where((M[1] == t) & (M[0] == 1))[0][0])
            while M[4, j] > 0:
                x = X[i, int(M[3, j]) - 1]
                left = x < M[5, j] if M[4, j] == 1 else x == M[5, j]
                j += int(M[2, j]) + (0 if left else 1)
            F[i] += lr * M[5, j]
    return 1 / (1 + np.exp(-F)) if sml_type == 2 else F


rng = np.random.RandomState(11)
n = 40
X = np.column_stack([np.round(rng.uniform(0, 10, n), 3), np.round(rng.normal(0, 1, n), 3),
                     rng.randint(0, 3, n).astype(float), np.round(rng.uniform(-5, 5, n), 3)])
y = np.round(np.sin(X[:, 0]) * 3 + X[:, 1] + 2 * (X[:, 2] == 1) + rng.normal(0, 0.3, n), 3)
yb = (y > np.median(y)).astype(float)
Xt = np.column_stack([np.round(rng.uniform(0, 10, 15), 4) + 1e-4, np.round(rng.normal(0, 1, 15), 4) + 1e-4,
                      rng.randint(0, 3, 15).astype(float), np.round(rng.uniform(-5, 5, 15), 4) + 1e-4])
R = np.array([1, 1, 2, 1])
wref("X", X)
wref("y", y)
wref("yb", yb)
wref("Xt", Xt)
wref("R", R.reshape(1, -1))

# regression with a categorical feature
M = xgboost(X, y, R, 1, 5, 0.3, 3, 1.0)
wref("M_reg", M)
wscalar("reg_model_ok", True)
wmat("reg_train", predict(X, M, 0.3, 1))
wmat("reg_test", predict(Xt, M, 0.3, 1))

# classification
M = xgboost(X, yb, R, 2, 4, 0.5, 2, 0.5)
wref("M_cls", M)
wscalar("cls_model_ok", True)
wmat("cls_train", predict(X, M, 0.5, 2))
wmat("cls_test", predict(Xt, M, 0.5, 2))

# defaults (all features scale, 10 trees, eta 0.3, depth 6, lambda 0)
M = xgboost(X, y, np.ones(4), 1, 10, 0.3, 6, 0.0)
wref("M_def", M)
wscalar("def_model_ok", True)
wmat("def_test", predict(Xt, M, 0.3, 1))

# one stump on data with one clear threshold: leaf weights by hand
Xs = np.array([[1.0], [2.0], [3.0], [10.0], [11.0], [12.0]])
ys = np.array([1.0, 2.0, 3.0, 10.0, 12.0, 14.0])
lam = 2.0
F0 = ys.mean()
wl = -(F0 - ys[:3]).sum() / (3 + lam)
wr = -(F0 - ys[3:]).sum() / (3 + lam)
wmat("stump_M", np.array([[0, 1, 2, 3], [0, 1, 1, 1], [0, 1, 0, 0], [0, 1, 0, 0],
                          [0, 1, 0, 0], [F0, 6.5, wl, wr]]))
wmat("stump_pred", [F0 + 0.5 * wl, F0 + 0.5 * wr])
