"""denialConstraints vs checking every constraint in plain Python on
SystemDS's documented salary example (13 instances): variableCompare,
instanceCompare within a group (both instances of a violating pair),
valueCompare, a grouped variableCompare; a set without violations gives
matrix(0, 1, 2)."""
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
with open(os.path.join(REF, "salaries.csv"), "w") as f:
    f.write(",".join(cols) + "\n")
    for r in rows:
        f.write(",".join(str(v) for v in r) + "\n")
cons = [
    (1, "variableCompare", "FALSE", "", "", "yrs.since.phd", "<", "yrs.service"),
    (2, "instanceCompare", "TRUE", "rank", "Prof", "yrs.service", "><", "salary"),
    (3, "valueCompare", "FALSE", "", "", "salary", "=", "78182"),
    (4, "variableCompare", "TRUE", "rank", "AsstProf", "yrs.service", ">", "yrs.since.phd"),
    (5, "valueCompare", "TRUE", "sex", "Female", "salary", "<=", "129000"),
    (6, "instanceCompare", "FALSE", "", "", "yrs.since.phd", "<<", "yrs.service")]
hdr = "idx,constraint.type,group.by,group.variable,group.option,variable1,relation,variable2\n"
with open(os.path.join(REF, "cons.csv"), "w") as f:
    f.write(hdr)
    for c in cons:
        f.write(",".join(str(v) for v in c) + "\n")
with open(os.path.join(REF, "none.csv"), "w") as f:
    f.write(hdr + "1,valueCompare,FALSE,,,salary,>,1000000\n")
for name in ("salaries", "cons", "none"):
    n = {"salaries": 13, "cons": len(cons), "none": 1}[name]
    m = {"salaries": 6, "cons": 8, "none": 8}[name]
    with open(os.path.join(REF, name + ".csv.mtd"), "w") as f:
        f.write('{"data_type": "frame", "rows": %d, "cols": %d, "format": "csv", "header": true, "sep": ","}\n' % (n, m))
ops = {"<": lambda a, b: a < b, ">": lambda a, b: a > b, "=": lambda a, b: a == b,
       "<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b, "!=": lambda a, b: a != b}
out = []
for c in cons:
    idx, typ, gby, gv, go, v1, rel, v2 = c
    ing = [gby == "FALSE" or str(r[cols.index(gv)]) == go for r in rows]
    a = [float(r[cols.index(v1)]) for r in rows]
    bad = set()
    if typ == "variableCompare":
        b = [float(r[cols.index(v2)]) for r in rows]
        bad = {i for i in range(13) if ing[i] and ops[rel](a[i], b[i])}
    elif typ == "valueCompare":
        bad = {i for i in range(13) if ing[i] and ops[rel](a[i], float(v2))}
    else:
        b = [float(r[cols.index(v2)]) for r in rows]
        for i in range(13):
            for j in range(13):
                if ing[i] and ing[j] and ops[rel[0]](a[i], a[j]) and ops[rel[1]](b[i], b[j]):
                    bad |= {i, j}
    out += [(i + 1, idx) for i in sorted(bad)]
wmat("wrong", out)
wmat("none", [[0, 0]])
