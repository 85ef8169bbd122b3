"""decisionTree / decisionTreePredict vs scikit-learn's DecisionTreeClassifier
(gini, entropy) and DecisionTreeRegressor (squared error) with
splitter="best" and all features, on random data whose values are
multiples of 1/16 (exact in float32, which scikit-learn uses, so the
midpoint thresholds agree to the bit). decisionTree's max_depth counts
levels (the root is level 1): scikit-learn's max_depth + 1. The trees are
compared in decisionTree's linearized layout (node j at columns 2j-1, 2j;
[feature, threshold] inside, [0, label] at a leaf); test points lie on odd
multiples of 1/64 and never on a threshold. Categorical splits (x == code,
which scikit-learn lacks) are checked against a small recursive CART written
here from the same rules."""
import numpy as np
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

import os

from _common import EXP_DIR, wref, wmat, wscalar, check

rng = np.random.default_rng(5)
n, m = 160, 4
X = rng.integers(0, 256, size=(n, m)) / 16.0
T = (rng.integers(0, 512, size=(40, m)) * 2 + 1) / 64.0
noise = rng.normal(0, 1.5, size=n)
y = 1 + (X[:, 0] + 0.5 * X[:, 1] + noise > 12).astype(int) + (X[:, 2] > 11).astype(int)
yr = np.round(X[:, 0] * 2 + np.sin(X[:, 1]) * 3 + X[:, 2] * X[:, 3] / 8 + rng.normal(0, 1, size=n), 6)
wref("X", X)
wref("T", T)
wref("y", y)
wref("yr", yr)


def linearize(tree, leafval):
    t = tree.tree_
    D = tree.get_depth() + 1
    M = np.zeros(2 * (2 ** D - 1))
    stack = [(0, 1)]
    while stack:
        node, j = stack.pop()
        if t.children_left[node] == -1:
            M[2 * j - 1] = leafval(t.value[node])
        else:
            M[2 * j - 2] = t.feature[node] + 1
            M[2 * j - 1] = t.threshold[node]
            stack.append((t.children_left[node], 2 * j))
            stack.append((t.children_right[node], 2 * j + 1))
    return M.reshape(1, -1)


for crit in ["gini", "entropy"]:
    c = DecisionTreeClassifier(criterion=crit, max_depth=3, min_samples_leaf=3,
                               min_samples_split=8, random_state=0).fit(X, y)
    M = linearize(c, lambda v: c.classes_[np.argmax(v[0])])
    wmat("M_" + crit, M)
    wmat("p_" + crit, c.predict(T))
    wmat("ptrain_" + crit, c.predict(X))

r = DecisionTreeRegressor(max_depth=4, min_samples_leaf=5, min_samples_split=10,
                          random_state=0).fit(X, yr)
wmat("M_rss", linearize(r, lambda v: v[0][0]))
wmat("p_rss", r.predict(T))

# noise-free labels, fully grown: every training row predicted right
ys = 1 + (X[:, 0] + X[:, 1] > 16).astype(int) + (X[:, 3] > 8).astype(int)
wref("ys", ys)
full = DecisionTreeClassifier(min_samples_leaf=1, min_samples_split=2, random_state=0).fit(X, ys)
check((full.predict(X) == ys).all(), "separable training data")
wmat("acc_sep", [1.0])


# categorical features: a CART with x == code splits (the rules of decisionTree)
def cart(Xc, yc, types, depth, max_depth, min_leaf, min_split, j, M):
    cls, cnt = np.unique(yc, return_counts=True)
    label = cls[np.argmax(cnt)]
    nn = len(yc)
    best = None
    if depth < max_depth and nn >= min_split and nn >= 2 * min_leaf and len(cls) > 1:
        for f in range(Xc.shape[1]):
            x = Xc[:, f]
            if types[f] == 2:
                cands = [(v, x == v) for v in np.unique(x)]
            else:
                u = np.unique(x)
                cands = [((u[i] + u[i + 1]) / 2, x < (u[i] + u[i + 1]) / 2) for i in range(len(u) - 1)]
            for v, left in cands:
                nl = left.sum()
                if nl < min_leaf or nn - nl < min_leaf:
                    continue
                sc = 0.0
                for part in (yc[left], yc[~left]):
                    _, pc = np.unique(part, return_counts=True)
                    sc += (pc.astype(float) ** 2).sum() / len(part)
                if best is None or sc > best[0] * (1 + 1e-13):
                    best = (sc, f, v, left)
    while len(M) < 2 * j:
        M.extend([0.0] * len(M) + [0.0, 0.0])
    if best is None:
        M[2 * j - 1] = label
        return
    _, f, v, left = best
    M[2 * j - 2] = f + 1
    M[2 * j - 1] = v
    cart(Xc[left], yc[left], types, depth + 1, max_depth, min_leaf, min_split, 2 * j, M)
    cart(Xc[~left], yc[~left], types, depth + 1, max_depth, min_leaf, min_split, 2 * j + 1, M)


Xc = np.column_stack([rng.integers(1, 5, size=120), rng.integers(1, 4, size=120),
                      rng.integers(0, 64, size=120) / 8.0])
yc = np.where(Xc[:, 0] == 3, 1, np.where((Xc[:, 1] == 2) & (Xc[:, 2] > 3), 2, 3))
flip = rng.random(120) < 0.1
yc = np.where(flip, 1 + (yc % 3), yc)
wref("Xc", Xc)
wref("yc", yc)
Mc = []
cart(Xc, yc, [2, 2, 1], 1, 4, 2, 5, 1, Mc)
D = 1
while 2 * (2 ** D - 1) < len(Mc):
    D += 1
Mc = np.array(Mc + [0.0] * (2 * (2 ** D - 1) - len(Mc)))
# trim empty deepest levels
while D > 1 and not Mc[2 * (2 ** (D - 1) - 1):].any():
    D -= 1
    Mc = Mc[:2 * (2 ** D - 1)]
wmat("M_cat", Mc.reshape(1, -1))
wscalar("seeded", True)


def predict(M, X, types):
    out = []
    for x in X:
        j = 1
        while M[2 * j - 2] != 0:
            f, v = int(M[2 * j - 2]) - 1, M[2 * j - 1]
            left = (x[f] == v) if types[f] == 2 else (x[f] < v)
            j = 2 * j if left else 2 * j + 1
        out.append(M[2 * j - 1])
    return np.array(out)


acc = 100 * np.mean(predict(Mc, Xc, [2, 2, 1]) == yc)
with open(os.path.join(EXP_DIR, "stdout.txt"), "w") as f:
    f.write("decisionTreePredict: accuracy (%%): %r\n" % acc)
