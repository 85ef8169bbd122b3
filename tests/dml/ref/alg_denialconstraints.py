"""denialConstraints vs SystemDS's algorithm written out in plain Python,
on SystemDS's documented salary example (13 instances) laid out as its
script reads it: the first row of each file holds the names (read without
a header). Constraints: variableCompare, instanceCompare within a group
("><", windows of the sorted instances), valueCompare (=, and <= which
finds nothing), a grouped variableCompare, an ungrouped instanceCompare
"<<", a grouped valueCompare ">", a variable1 that does not exist
(skipped) and a variableCompare whose variable2 does not exist (it keeps
the column found last, as SystemDS's script). A set without violations
gives matrix(0, 1, 2)."""
import math
import os

from _common import wmat

REF = os.sys.argv[2]
rows = [
    (1, "Prof", 19, 18, "Male", 139750), (2, "Prof", 20, 16, "Male", 173200),
    (3, "AsstProf", 3, 3, "Male", 79750.56), (4, "Prof", 45, 39, "Male", 115000),
    (5, "Prof", 40, 41, "Male", 141500), (6, "AssocProf", 6, 6, "Male", 97000),
    (7, "Prof", 30, 23, "Male", 175000), (8, "Prof", 45, 45, "Male", 147765),
    (9, "Prof", 21, 20, "Male", 119250), (10, "Prof", 18, 18, "Female", 129000),
    (11, "AssocProf", 12, 8, "Male", 119800), (12, "AsstProf", 7, 2, "Male", 79800),
    (13, "AsstProf", 1, 1, "Male", 78182)]
cols = ["idx", "rank", "yrs.since.phd", "yrs.service", "sex", "salary"]
hdr = ["idx", "constraint.type", "group.by", "group.variable", "group.option", "variable1", "relation",
       "variable2"]
cons = [
    (1, "variableCompare", "FALSE", "", "", "yrs.since.phd", "<", "yrs.service"),
    (2, "instanceCompare", "TRUE", "rank", "Prof", "yrs.service", "><", "salary"),
    (3, "valueCompare", "FALSE", "", "", "salary", "=", "78182"),
    (4, "variableCompare", "TRUE", "rank", "AsstProf", "yrs.service", ">", "yrs.since.phd"),
    (5, "valueCompare", "TRUE", "sex", "Female", "salary", "<=", "129000"),
    (6, "instanceCompare", "FALSE", "", "", "yrs.since.phd", "<<", "yrs.service"),
    (7, "valueCompare", "TRUE", "sex", "Male", "salary", ">", "170000"),
    (8, "variableCompare", "FALSE", "", "", "wage", "<", "salary"),
    (9, "variableCompare", "FALSE", "", "", "yrs.since.phd", ">", "nosuch")]


def write(name, table):
    with open(os.path.join(REF, name + ".csv"), "w") as f:
        for r in table:
            f.write(",".join(str(v) for v in r) + "\n")
    with open(os.path.join(REF, name + ".csv.mtd"), "w") as f:
        f.write('{"data_type": "frame", "rows": %d, "cols": %d, "format": "csv", "header": false, "sep": ","}\n'
                % (len(table), len(table[0])))


write("salaries", [cols] + rows)
write("cons", [hdr] + cons)
write("none", [hdr, (1, "valueCompare", "FALSE", "", "", "salary", ">", "1000000")])


def trunc(v):
    return float(math.trunc(float(v)))


def col(name):
    hit = [j for j, c in enumerate(cols) if c == name]
    return hit[-1] if hit else None


ops = {"<": lambda a, b: a < b, ">": lambda a, b: a > b, "=": lambda a, b: a == b}
out = []
col2 = None
for cid, c in enumerate(cons, start=1):
    _, typ, gby, gv, go, v1, rel, v2 = c
    c1 = col(v1)
    if c1 is None:
        continue
    ing = [gby != "TRUE" or str(r[col(gv)]) == go for r in rows]
    if typ in ("variableCompare", "valueCompare"):
        if typ == "variableCompare":
            if col(v2) is not None:
                col2 = col(v2)
            if col2 is None:
                continue
            b = [trunc(r[col2]) for r in rows]
        else:
            b = [trunc(v2)] * len(rows)
        if rel in ops:
            out += [(i + 1, cid) for i, r in enumerate(rows) if ing[i] and ops[rel](trunc(r[c1]), b[i])]
        continue
    col2 = col(v2)
    # the group's (index, variable1, variable2), stably sorted by variable1
    X = [(float(r[0]), float(r[c1]), float(r[col2])) for i, r in enumerate(rows) if ing[i]]
    # stable both ways (a descending sort keeps ties in their order)
    S = sorted(X, key=lambda x: -x[1] if rel in (">>", "><") else x[1])
    starts = [0] + [i + 1 for i in range(1, len(S)) if S[i][1] != S[i - 1][1]]
    for g in range(len(starts) - 2):
        G1 = S[starts[g]:starts[g + 1]]
        G2 = S[starts[g + 1]:starts[g + 2]]
        if rel in ("<<", "><"):
            m1, m2 = min(x[2] for x in G1), max(x[2] for x in G2)
            if m1 < m2:
                out += [(x[0], cid) for x in G1 if trunc(x[2]) < m2]
                out += [(x[0], cid) for x in G2 if trunc(x[2]) > m1]
        else:
            m1, m2 = max(x[2] for x in G1), min(x[2] for x in G2)
            if m1 > m2:
                out += [(x[0], cid) for x in G1 if trunc(x[2]) > trunc(m2)]
                out += [(x[0], cid) for x in G2 if trunc(x[2]) < trunc(m1)]
out.sort(key=lambda p: p[0])   # stable: ties keep their order
wmat("wrong", out)
wmat("none", [[0, 0]])
