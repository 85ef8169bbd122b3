# The reference of alg_dbscan in plain Python (no NumPy needed):
#   python3 ref/alg_dbscan.py EXP_DIR REF_DIR   (from tests/dml, by ref/alg_dbscan.R)
# DBSCAN as SystemDS defines it, computed as a graph search (ref/_dbscan.py).
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _dbscan import dbscan, read_csv  # noqa: E402

EXP = sys.argv[1]
HERE = os.path.dirname(os.path.abspath(__file__))


def wcol(name, v):
    with open(os.path.join(EXP, name), "w") as f:
        f.write("".join("%d\n" % x for x in v))


X = read_csv(os.path.join(HERE, "..", "..", "data", "iris_X.csv"))
lab, members = dbscan(X, 0.45, 5)
wcol("iris5.csv", lab)
with open(os.path.join(EXP, "iris5_model.scalar"), "w") as f:
    f.write("%d 0.45\n" % members)
wcol("iris10.csv", dbscan(X, 0.45, 10)[0])
P = [[0, 0], [0.3, 0], [0, 0.3], [0.3, 0.3], [0.15, 0.6], [3, 3], [3.3, 3],
     [3, 3.3], [3.3, 3.3], [10, 10], [3.15, 3.62]]
wcol("blobs.csv", dbscan(P, 0.35, 3)[0])
wcol("isolated.csv", dbscan(P, 0.35, 1)[0])
