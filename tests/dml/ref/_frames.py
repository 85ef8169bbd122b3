"""Helpers of the frame/string builtin references (not a case): toString of
frames as braid/SystemDS print them, and the stdout file."""
import os

from _common import EXP_DIR


def fstr(cols, types, names=None):
    """toString(F) of a frame given as column lists (None: missing) as
    lines, plus the empty line print adds. FP64 with 3 decimals."""
    n = len(cols[0]) if cols else 0
    names = names or ["C%d" % (j + 1) for j in range(len(cols))]

    def cell(v, t):
        if v is None:
            return {"INT64": "0", "BOOLEAN": "FALSE"}.get(t, "null")
        if t == "FP64":
            return "%.3f" % v
        if t == "BOOLEAN":
            return "TRUE" if v else "FALSE"
        return str(v)
    out = ["# FRAME: nrow = %d, ncol = %d" % (n, len(cols)),
           " ".join(["#"] + names), " ".join(["#"] + types)]
    for i in range(n):
        out.append(" ".join(cell(c[i], t) for c, t in zip(cols, types)))
    return out + [""]


def rows_to_cols(rows, ncol):
    return [[r[j] for r in rows] for j in range(ncol)]


def wstdout(lines):
    with open(os.path.join(EXP_DIR, "stdout.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def java_map_order(keys, initial=None):
    """The order SystemDS writes a recode column's metadata rows in: the
    iteration order of Java's HashMap<String, Integer> the distinct keys
    were put in (first appearance first), for maps whose buckets stay lists
    (at most 8 keys each): buckets ascending by Java's String.hashCode (over
    UTF-16 units) spread (h ^ h >>> 16) and masked by the capacity, keys in
    insertion order within a bucket (resizes split lists in order); the
    capacity doubles from 16 while the size exceeds 3/4 of it. initial: the
    map was made as new HashMap<>(initial) (a bag_of_words dictionary:
    initial=0), its first table the least power of 2 >= initial (1 for
    0), its threshold 3/4 of the table."""
    keys = list(dict.fromkeys(keys))
    cap = 16
    if initial is not None:
        cap = 1
        while cap < initial:
            cap *= 2
    while len(keys) > int(0.75 * cap):
        cap *= 2

    def bucket(s):
        u = s.encode("utf-16-be")
        h = 0
        for i in range(0, len(u), 2):
            h = (31 * h + int.from_bytes(u[i:i + 2], "big")) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (cap - 1)

    assert max(sum(1 for y in keys if bucket(y) == bucket(x)) for x in keys) <= 8
    return sorted(keys, key=bucket)
