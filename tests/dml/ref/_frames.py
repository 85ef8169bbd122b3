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
