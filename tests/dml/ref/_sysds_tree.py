"""SystemDS's decision tree rules in plain Python, shared by
ref/alg_decisiontree.py and ref/alg_randomforest.py (not a case).

Only the deterministic configuration (max_features = max_values = 1: every
feature and every threshold is a candidate) is covered. Features are
positive integer codes; a split is x <= v for v = 1 .. fdom_f - 1
(fdom_f = max(max code of f, 2)); the gain of a split is
imp(node) - n_l/n imp(left) - n_r/n imp(right), with NaN counted as 0
(entropy of a side missing a class is NaN: 0 log 0); valid splits leave
min_leaf rows on both sides; a feature's best threshold is the first of
its largest positive gain, the node's the last feature of the largest gain
(SystemDS's rowIndexMax takes the last maximum).
Nodes are taken breadth first from a queue; a child is queued when it has
min_split rows and floor(log2(id)) + 2 < max_depth, else it becomes a
leaf. Leaves hold the last most frequent class (classification) or the
frequency-weighted mean of the label codes (regression).
"""
import math


def impurity(counts, rows, kind, labels):
    """counts: per class code 1..k within the row set; labels: the codes
    of those rows (rss only)."""
    f = [c / rows if rows else float("nan") for c in counts]
    if kind == "gini":
        return 1 - sum(v * v for v in f)
    if kind == "entropy":
        s = 0.0
        for v in f:
            s += float("nan") if v == 0 or v != v else -v * math.log(v)
        return s
    yhat = 0.0
    for j, v in enumerate(f):
        yhat += v * (j + 1)
    return sum((yhat - c) ** 2 for c in labels)


def counts_of(y, rows, k):
    c = [0] * k
    for i in rows:
        c[int(y[i]) - 1] += 1
    return c


def leaf_label(y, rows, k, classify):
    c = counts_of(y, rows, k)
    f = [v / len(rows) for v in c]
    if classify:
        return float(len(f) - f[::-1].index(max(f)))
    s = 0.0
    for j, v in enumerate(f):
        s += v * (j + 1)
    return s


def best_split(X, y, rows, k, fdom, min_leaf, kind):
    n = len(rows)
    whole = impurity(counts_of(y, rows, k), n, kind, [y[i] for i in rows])
    best = []  # (feature, gain, v) per feature
    for f in range(len(fdom)):
        gains = []
        for v in range(1, int(fdom[f])):
            left = [i for i in rows if X[i][f] <= v]
            right = [i for i in rows if X[i][f] > v]
            g = (whole - len(left) / n * impurity(counts_of(y, left, k), len(left), kind, [y[i] for i in left])
                 - len(right) / n * impurity(counts_of(y, right, k), len(right), kind, [y[i] for i in right]))
            if g != g:
                g = 0.0
            ok = len(left) >= min_leaf and len(right) >= min_leaf
            gains.append(g if ok else 0.0)
        top = max(gains)
        v = gains.index(top) + 1 if top > 0 else -1
        best.append((f, top, v))
    f, top, v = max(best, key=lambda t: (t[1], t[0]))
    if top <= 0:
        return None
    return f + 1, v


def decision_tree(X, y, classify, max_depth, min_leaf, min_split, kind):
    """The linearized tree (a list of 2(2^L - 1) numbers)."""
    k = int(max(y))
    fdom = [max(max(r[f] for r in X), 2) for f in range(len(X[0]))]
    M = [0.0] * (2 * (2 ** max_depth - 1))
    queue = [(1, list(range(len(X))))]
    depth = 1
    while queue:
        nid, rows = queue.pop(0)
        split = best_split(X, y, rows, k, fdom, min_leaf, kind)
        left = right = []
        if split:
            f, v = split
            left = [i for i in rows if X[i][f - 1] <= v]
            right = [i for i in rows if X[i][f - 1] > v]
        ok = split is not None and len(left) >= min_leaf and len(right) >= min_leaf
        if ok:
            M[2 * nid - 2], M[2 * nid - 1] = float(f), float(v)
        else:
            M[2 * nid - 1] = leaf_label(y, rows, k, classify)
        depth = max(depth, math.floor(math.log2(nid) + 1))
        if ok:
            for cid, part in ((2 * nid, left), (2 * nid + 1, right)):
                if len(part) >= min_split and math.floor(math.log2(cid)) + 2 < max_depth:
                    queue.append((cid, part))
                else:
                    M[2 * cid - 1] = leaf_label(y, part, k, classify)
            depth = max(depth, math.floor(math.log2(2 * nid) + 1))
    return M[:2 * (2 ** depth - 1)]


def predict(M, X):
    """Each row walks from the root (x_f <= v: left) to a leaf."""
    out = []
    for r in X:
        j = 1
        while 2 * j <= len(M) // 2 and M[2 * j - 2] != 0:
            f, v = int(M[2 * j - 2]), M[2 * j - 1]
            j = 2 * j if r[f - 1] <= v else 2 * j + 1
        out.append(M[2 * j - 1])
    return out


def read_csv(path):
    with open(path) as fh:
        return [[float(v) for v in line.split(",")] for line in fh if line.strip()]


def num(v):
    return "%.17g" % v
