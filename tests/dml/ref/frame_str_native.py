"""Reference of cases/frame_str_native.dml: the rules of docs/DESIGN.md
("Frame and string builtins") in Python."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _frames import fstr, wstdout  # noqa: E402

L = ["1", "a", "2.5", "x", "-7", "true", "3e2", "y", "+4", "0", "abc", "z", "4.0", "FALSE", "7", "w"]
F = [L[j::4] for j in range(4)]   # columns of the 4x4 frame (filled row by row)
S4 = ["STRING"] * 4


def isnum(s):
    try:
        float(s)
        return True
    except ValueError:
        return s in ("NaN", "Inf", "-Inf", "Infinity", "-Infinity")


def fits(s, t):
    if t == "STRING":
        return True
    if t == "FP64":
        return isnum(s)
    if t == "INT64":
        return re.fullmatch(r"[+-]?[0-9]+", s) is not None
    return s.lower() in ("true", "false") or s in ("0", "1")


lines = []
lines += fstr([["C1"], ["C2"], ["C3"], ["C4"]], S4)
names = ["id", "flag", "val", "name"]
lines += fstr([[n] for n in names], S4)
lines += fstr(F, S4, names)
lines += fstr([["only"]], ["STRING"])
types = ["INT64", "BOOLEAN", "FP64", "STRING"]
lines += fstr([[v if fits(v, t) else None for v in c] for c, t in zip(F, types)], S4)
lines += fstr([[v if fits(v, "FP64") else None for v in F[0]], [1.0, 2.0, 3.0, 4.0]], ["STRING", "FP64"])
U = [["abc", None, "abcdef"], ["Z\u00fcrich", "ab", "xy"]]   # "" is missing
for lim in ([3, 0], [6, 2]):
    lines += fstr([[v if v is None or m <= 0 or len(v) <= m else None for v in c] for c, m in zip(U, lim)],
                  ["STRING", "STRING"])
V = [["Anna", "31"], ["42", "Bob"], ["Carl", "27"], ["55", "66"], ["Dora", "x"]]


def fs(s, t):
    return not isnum(s) if t == "STRING" else fits(s, t)


out = []
for a, b in V:
    if not fs(a, "STRING") and not fs(b, "INT64") and fs(a, "INT64") and fs(b, "STRING"):
        a, b = b, a
    out.append([a, b])
lines += fstr([[r[0] for r in out], [r[1] for r in out]], ["STRING", "STRING"])
wstdout(lines)
