"""Reference of cases/frame_map_strings.dml with Python's string methods."""
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import EXP_DIR, wmat  # noqa: E402
from _frames import fstr  # noqa: E402


# "" in frame(list(...)) is a missing cell: the lambda does not run on it
F = ["west", "South ", " north east", "Z\u00fcrich", None, "a.b-c d"]


def ap(f):
    return [None if x is None else f(x) for x in F]


lines = []
lines += fstr([ap(lambda x: x.upper())], ["STRING"])
# map() returns STRING columns (Java's String.valueOf), as SystemDS
lines += fstr([ap(lambda x: str(len(x)))], ["STRING"])
lines += fstr([ap(lambda x: x[:3] if len(x) >= 3 else x)], ["STRING"])
lines += fstr([ap(lambda x: x.strip().split(" ")[0])], ["STRING"])
lines += fstr([ap(lambda x: re.sub(r"[^a-zA-Z]", "_", x))], ["STRING"])
lines += fstr([ap(lambda x: "true" if "th" in x.lower() else "false")], ["STRING"])
lines += fstr([ap(lambda x: None if x == "" else x[0] + "|" + str(len(x.strip())))], ["STRING"])
N = ["12", "-3", "40", "7"]
P = [int(x) * 2 + 1 for x in N]
lines += fstr([[str(p) for p in P]], ["STRING"])
wmat("P", P)
wmat("Q", [math.sqrt(abs(float(x))) for x in N])
G = [["ab", "cd", "ef"], ["1", "2", "3"]]
lines += fstr([[G[1][i] + G[0][i] for i in range(3)], [G[0][i].upper() for i in range(3)]], ["STRING", "STRING"])
lines += fstr([list(reversed(c)) for c in G], ["STRING", "STRING"])
W = ["west", "south", "north", "east"]


def jac(a, b):
    A, B = set(a), set(b)
    return len(A & B) / len(A | B)


# SystemDS's mapDist: the upper triangle (row < column), 0 elsewhere
wmat("J", [[jac(W[i], W[j]) if i < j else 0.0 for j in range(4)] for i in range(4)])
with open(os.path.join(EXP_DIR, "s.scalar"), "w") as f:
    f.write("hello big world".split(" ")[1].upper() + "\n")
with open(os.path.join(EXP_DIR, "n.scalar"), "w") as f:
    f.write("%d\n" % (len("hello") + 1))
with open(os.path.join(EXP_DIR, "stdout.txt"), "w") as f:
    f.write("\n".join(lines) + "\n")
