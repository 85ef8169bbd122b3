"""raSelection, raJoin and raGroupby vs plain Python loops (no NumPy
logic): selection with every operator, inner joins (duplicate keys, keys
without partner, every method) and group-by (key column first, middle and
last) on random integer tables."""
import random
import struct

from _common import wmat, wref, wscalar

random.seed(4)
A = [[float(random.randint(1, 6)), float(random.randint(0, 9)), float(random.randint(0, 9))] for _ in range(12)]
B = [[float(random.randint(0, 9)), float(random.randint(3, 8))] for _ in range(9)]
wref("A", A)
wref("B", B)
ops = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
       "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}
for i, (op, f) in enumerate(ops.items()):
    wmat("sel%d" % (i + 1), [r for r in A if f(r[1], 4.0)])
wscalar("sel_none", 0)
# SystemDS's raJoin first sorts both sides by key (stably): the pairs
# follow the sorted rows of A, then those of B
def join(X, cx, Y, cy):
    Xs = sorted(X, key=lambda r: r[cx])
    Ys = sorted(Y, key=lambda r: r[cy])
    return [rx + ry for rx in Xs for ry in Ys if rx[cx] == ry[cy]]


J = join(A, 0, B, 1)
wmat("join", J)
J2 = join(B, 0, A, 2)
wmat("join2", J2)
wscalar("join_methods_ok", True)
wscalar("join_none", 0)


def java_hashset_order(vals):
    """The iteration order of Java's HashSet<Double> filled with vals in
    order (SystemDS's unique()), for sets whose buckets stay lists (at most
    8 keys each): buckets ascending by the spread hash & (capacity - 1),
    keys in insertion order within a bucket (resizes split lists in
    order); the capacity doubles from 16 while size > 3/4 of it."""
    keys = list(dict.fromkeys(vals))
    cap = 16
    while len(keys) > 0.75 * cap:
        cap *= 2

    def bucket(x):
        b = struct.unpack(">q", struct.pack(">d", x))[0] & 0xFFFFFFFFFFFFFFFF
        h = (b ^ (b >> 32)) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (cap - 1)

    assert max(sum(1 for y in keys if bucket(y) == bucket(x)) for x in keys) <= 8
    return sorted(keys, key=bucket)


def groupby(X, c):
    # groups in SystemDS's unique() order (Java's HashSet iteration order)
    keys = java_hashset_order([r[c] for r in X])
    groups = [[v for r in X if r[c] == k for j, v in enumerate(r) if j != c] for k in keys]
    w = max(len(g) for g in groups)
    return [[k] + g + [0.0] * (w - len(g)) for k, g in zip(keys, groups)]


for c in range(3):
    wmat("grp%d" % (c + 1), groupby(A, c))
wmat("grpB", groupby(B, 1))
wscalar("grp_methods_ok", True)
# outer(v, M, "=="): v broadcast over M's columns
v = [1.0, 2.0, 3.0]
Mo = [[1.0, 2.0, 3.0], [2.0, 2.0, 2.0], [3.0, 1.0, 3.0]]
wmat("outer_vm", [[float(v[i] == Mo[i][j]) for j in range(3)] for i in range(3)])
