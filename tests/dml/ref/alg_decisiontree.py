# The reference of alg_decisiontree in plain Python (no NumPy needed):
#   python3 ref/alg_decisiontree.py EXP_DIR REF_DIR   (by ref/alg_decisiontree.R)
# SystemDS's decision tree rules (ref/_sysds_tree.py) on the committed
# inputs in REF_DIR, drawn once with NumPy (default_rng(5)): X 160 x 4
# integers 0..255 / 16, held-out T odd multiples of 1/64, classes y from
# a noisy linear rule, yr a noisy regression target, ys separable classes,
# Xc/yc small categorical codes. The case recodes X and T to 16 x + 1
# (codes 1..256; T never on a threshold) and yr to round(yr) - min + 1.
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _sysds_tree import decision_tree, predict, read_csv, num  # noqa: E402

EXP, REF = sys.argv[1], sys.argv[2]


def col(name):
    return [r[0] for r in read_csv(os.path.join(REF, name + ".csv"))]


def codes(A):
    return [[16 * v + 1 for v in r] for r in A]


def wrow(name, v):
    with open(os.path.join(EXP, name), "w") as f:
        f.write(",".join(num(x) for x in v) + "\n")


def wcol(name, v):
    with open(os.path.join(EXP, name), "w") as f:
        f.write("".join(num(x) + "\n" for x in v))


X = codes(read_csv(os.path.join(REF, "X.csv")))
T = codes(read_csv(os.path.join(REF, "T.csv")))
y = col("y")
M = decision_tree(X, y, True, 4, 3, 8, "gini")
wrow("M_gini.csv", M)
wcol("p_gini.csv", predict(M, T))
wcol("ptrain_gini.csv", predict(M, X))
M = decision_tree(X, y, True, 4, 3, 8, "entropy")
wrow("M_entropy.csv", M)
wcol("p_entropy.csv", predict(M, T))
wcol("ptrain_entropy.csv", predict(M, X))
yr = col("yr")
lo = min(round(v) for v in yr)
yri = [round(v) - lo + 1 for v in yr]
M = decision_tree(X, yri, False, 5, 5, 10, "rss")
wrow("M_rss.csv", M)
wcol("p_rss.csv", predict(M, T))
ys = col("ys")
M = decision_tree(X, ys, True, 12, 1, 2, "gini")
p = predict(M, X)
wcol("acc_sep.csv", [sum(1 for a, b in zip(p, ys) if a == b) / len(ys)])
Xc = read_csv(os.path.join(REF, "Xc.csv"))
M = decision_tree(Xc, col("yc"), True, 4, 2, 5, "gini")
wrow("M_cat.csv", M)
with open(os.path.join(EXP, "seeded.scalar"), "w") as f:
    f.write("TRUE\n")
open(os.path.join(EXP, "stdout.txt"), "w").close()
