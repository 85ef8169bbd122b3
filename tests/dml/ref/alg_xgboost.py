"""xgboost / xgboostPredict* vs SystemDS's xgboost algorithm written out in
NumPy from its description (docs/parity.md, scripts/builtin/xgboost.dml):
start at median(y); trees grown breadth first listing only grown nodes
(left-child offsets in row 3); a node splits when it has more than one
row, max_depth > log2(id) + 1 and (classification) mixed labels; the split
feature minimizes the squared residuals of a one-feature, no-intercept
glm (least squares for regression, logistic regression by Newton's method
for classification); categorical (one-hot) features send 1 left; a scale
feature scans the midpoints of its sorted values with SystemDS's gain
sim(left values) + sim(right values) - sim(parent residuals) (the sides'
similarity taken of the feature values, an empty side counting one row),
the first largest gain above 0 winning; leaves hold sum(r) / D; the
classification update goes through logit and e^x / (1 + e^x) with
e = 2.7182818284."""
import numpy as np

from _common import wref, wmat, wscalar

E = 2.7182818284


def glm_residual(x, y, sml_type):
    """SystemDS's glm on an all-zero feature: NaN (Gaussian), 0 (binomial)."""
    if sml_type == 1:
        b = x @ y / (x @ x) if x @ x != 0 else np.nan
    else:
        b = 0.0
        if x @ x == 0:
            return (y ** 2).sum()
        for _ in range(100):
            p = 1 / (1 + np.exp(-b * x))
            step = (x @ (y - p)) / (x @ (p * (1 - p) * x))
            b += step
            if abs(step) < 1e-13 * max(1.0, abs(b)):
                break
    return ((y - x * b) ** 2).sum()


def best_feature(X, y, sml_type):
    best, lowest = 1, 0.0
    for j in range(X.shape[1]):
        res = glm_residual(X[:, j], y, sml_type)
        if j == 0 or res < lowest:          # the first of equal minima; NaN never wins
            best, lowest = j + 1, res
    return best


def best_threshold(x, parent, sml_type, D, lam):
    o = np.sort(x)
    best, thr = 0.0, 0.0
    for i in range(len(o) - 1):
        s = (o[i] + o[i + 1]) / 2
        left, right = x[x < s], x[x >= s]
        if sml_type == 1:
            sims = left.sum() ** 2 / (max(len(left), 1) + lam) + right.sum() ** 2 / (len(right) + lam)
        else:
            sims = left.sum() ** 2 / D + right.sum() ** 2 / D
        gain = sims - parent
        if gain > best:
            best, thr = gain, s
    return thr, best


def tree(X, y, R, P, t, sml_type, max_depth, lam):
    n = len(y)
    nodes = []                       # (id, feature, type, value)
    out = np.zeros(n)
    level = [(1, np.arange(n))]
    while level:
        nxt = []
        for nid, rows in level:
            f, w = 0, 0.0
            if len(rows) > 0:
                r = y[rows] - P[rows]
                p = P[rows]
                D = len(rows) + lam if sml_type == 1 else (p * (1 - p)).sum() + lam
                done = sml_type == 2 and y[rows].sum() in (0, len(rows))
                thr = 0.0
                if len(rows) > 1 and max_depth > np.log2(nid) + 1 and not done:
                    f = best_feature(X[rows], y[rows], sml_type)
                    if R[f - 1] == 1:
                        thr, gain = best_threshold(X[rows, f - 1], r.sum() ** 2 / D, sml_type, D, lam)
                        if gain <= 0:
                            f = 0
                if f == 0:
                    w = r.sum() / D if D != 0 else 0.0
                    if np.isnan(w):
                        w = 0.0
            if f > 0:
                x = X[rows, f - 1]
                left = x < thr if R[f - 1] == 1 else x == 1
                nodes.append((nid, f, R[f - 1], thr if R[f - 1] == 1 else 0.0))
                nxt += [(2 * nid, rows[left]), (2 * nid + 1, rows[~left])]
            else:
                nodes.append((nid, 0, 0, w))
                out[rows] = w
        level = nxt
    nodes.sort()
    ids = [nd[0] for nd in nodes]
    T = np.zeros((6, len(nodes)))
    for j, (nid, f, ft, v) in enumerate(nodes):
        T[:, j] = [nid, t, ids.index(2 * nid) - j if f > 0 else 0, f, ft, v]
    return T, out


def update(P, out, lr, sml_type):
    if sml_type == 1:
        return P + lr * out
    with np.errstate(divide="ignore"):
        logit = np.where(1 - P == 0, 0.0, np.log(P / np.where(1 - P == 0, 1, 1 - P)))
    z = logit + lr * out
    return E ** z / (1 + E ** z)


def xgboost(X, y, R, sml_type, num_trees, lr, max_depth, lam):
    F0 = np.median(y)
    M = [np.array([[0, 0, 0, 0, 0, F0]]).T]
    P = np.full(len(y), F0)
    for t in range(1, num_trees + 1):
        T, out = tree(X, y, R, P, t, sml_type, max_depth, lam)
        M.append(T)
        P = update(P, out, lr, sml_type)
    return np.hstack(M)


def predict(X, M, lr, sml_type):
    starts = [j for j in range(1, M.shape[1]) if M[1, j] != M[1, j - 1]]
    O = np.zeros((X.shape[0], len(starts)))
    for k, j0 in enumerate(starts):
        for i in range(X.shape[0]):
            j = j0
            while M[4, j] > 0:
                x = X[i, int(M[3, j]) - 1]
                left = x < M[5, j] if M[4, j] == 1 else x == 1
                j += int(M[2, j]) + (0 if left else 1)
            O[i, k] = M[5, j]
    if sml_type == 1:
        return M[5, 0] + lr * O.sum(axis=1)
    P = np.full(X.shape[0], M[5, 0])
    for k in range(O.shape[1]):
        P = update(P, O[:, k], lr, 2)
    return P


rng = np.random.RandomState(11)
n = 40
X = np.column_stack([np.round(rng.uniform(0, 10, n), 3), np.round(rng.normal(0, 1, n), 3),
                     rng.randint(0, 2, n).astype(float), np.round(rng.uniform(-5, 5, n), 3)])
y = np.round(np.sin(X[:, 0]) * 3 + X[:, 1] + 2 * (X[:, 2] == 1) + rng.normal(0, 0.3, n), 3)
yb = (y > np.median(y)).astype(float)
Xt = np.column_stack([np.round(rng.uniform(0, 10, 15), 4) + 1e-4, np.round(rng.normal(0, 1, 15), 4) + 1e-4,
                      rng.randint(0, 2, 15).astype(float), np.round(rng.uniform(-5, 5, 15), 4) + 1e-4])
R = np.array([1, 1, 2, 1])
wref("X", X)
wref("y", y)
wref("yb", yb)
wref("Xt", Xt)
wref("R", R.reshape(1, -1))

# regression with a categorical (one-hot) feature
M = xgboost(X, y, R, 1, 5, 0.3, 3, 1.0)
wref("M_reg", M)
wscalar("reg_model_ok", True)
wmat("reg_train", predict(X, M, 0.3, 1))
wmat("reg_test", predict(Xt, M, 0.3, 1))

# classification (balanced labels: the start median(yb) is 0.5)
M = xgboost(X, yb, R, 2, 4, 0.5, 3, 0.5)
wref("M_cls", M)
wscalar("cls_model_ok", True)
wmat("cls_train", predict(X, M, 0.5, 2))
wmat("cls_test", predict(Xt, M, 0.5, 2))

# the defaults (all features scale, 7 trees, 0.3, depth 6, lambda 0)
M = xgboost(X, y, np.ones(4), 1, 7, 0.3, 6, 0.0)
wref("M_def", M)
wscalar("def_model_ok", True)
wmat("def_test", predict(Xt, M, 0.3, 1))

# one split by hand: the feature values 1 2 3 | 10 11 12 (a midpoint's
# gain is sim(values) - sim(residuals); the largest is at 6.5), median 6.5
Xs = np.array([[1.0], [2.0], [3.0], [10.0], [11.0], [12.0]])
ys = np.array([1.0, 2.0, 3.0, 10.0, 12.0, 14.0])
lam = 2.0
F0 = np.median(ys)
wl = (ys[:3] - F0).sum() / (3 + lam)
wr = (ys[3:] - F0).sum() / (3 + lam)
wmat("stump_M", np.array([[0, 1, 2, 3], [0, 1, 1, 1], [0, 1, 0, 0], [0, 1, 0, 0],
                          [0, 1, 0, 0], [F0, 6.5, wl, wr]]))
wmat("stump_pred", [F0 + 0.5 * wl, F0 + 0.5 * wr])
