"""transformdecode / transformcolmap by SystemDS's rules (DecoderDummycode,
MultiColumnEncoder.getColMapping), in plain Python: a dummycoded column
spans the metadata frame's distinct count of columns (its ColumnMetadata,
which a row slice keeps), and decodes to its first non-zero column; the
recode map (token·code lines) turns codes into tokens, a code without a
line into missing. Without a count braid falls back to the map's size.
transformapply by SystemDS's MultiColumnEncoder.apply: dummycoded domains
reset to the map's line count or the spec's numbins, equi-width codes
ceil((v - min) / (max - min) numbins) clamped to 1..numbins over the
metadata bins' range, columns written in order, a dummycoded code as
ColumnEncoderDummycode writes it (the group's first column 0 unless the
code is 1, then a 1 at first + code - 1, also past the group)."""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import wmat  # noqa: E402
from _frames import fstr, wstdout  # noqa: E402

x1 = [10, 20, 30, 10, 20]
x2 = [0.5, 1.5, 2.5, 3.5, 4.5]
full = {1: "10.0", 2: "20.0", 3: "30.0"}     # transformencode's map: first occurrence order
X = [[1 if x1[i] == v else 0 for v in (10, 20, 30)] + [x2[i]] for i in range(5)]


def decode(rows, width, tokens):
    out = []
    for r in rows:
        code = next((k + 1 for k in range(width) if r[k] != 0), None)
        out.append(tokens.get(code) if code else None)
    return out


def colmap(width):
    return [[1, 1, width], [2, width + 1, width + 1]]


lines = []
# sliced metadata: distinct count 3 (of the whole map), map lines 1 and 2
wmat("colmap2", colmap(3))
lines += fstr([decode(X, 3, {1: "10.0", 2: "20.0"}), [r[3] for r in X]], ["STRING", "FP64"])
X2 = [list(r) for r in X]
X2[0][0:3] = [0, 0.3, 0.9]
X2[1][0:3] = [-1, 0, 2]
lines += fstr([decode(X2, 3, full), [r[3] for r in X2]], ["STRING", "FP64"])
# metadata without a count: the map's 2 lines
wmat("colmap3", colmap(2))
X3 = [[r[0], r[1], r[3]] for r in X]
lines += fstr([decode(X3, 2, {1: "10.0", 2: "20.0"}), [r[2] for r in X3]], ["STRING", "FP64"])
wstdout(lines)


def apply(rows, maps, bins, numbins):
    """rows: (token, value); maps: token -> code of column 1; bins: the
    metadata's (min, max) of column 2; both dummycoded."""
    w1, w2 = len(maps), numbins
    mn, mx = bins[0][0], bins[-1][1]
    out = []
    for tok, v in rows:
        r = [0.0] * (w1 + w2)
        for first, code in ((0, maps[tok]),
                            (w1, min(max(math.ceil((v - mn) / (mx - mn) * numbins), 1), numbins))):
            if code != 1:
                r[first] = 0.0
            r[first + code - 1] = 1.0
        out.append(r)
    return out


F5 = list(zip(["a", "c", "b", "a", "c"], x2))
# transformencode's bins of 0.5..4.5 in 2, its map in first-occurrence order
wmat("apply_bins", apply(F5, {"a": 1, "c": 2, "b": 3}, [(0.5, 2.5), (2.5, 4.5)], 3))
wmat("apply_gap", apply(F5, {"a": 1, "b": 2, "c": 5}, [(0.5, 2.5), (2.5, 4.5)], 3))
