"""Reference of cases/io_hdf5.dml: HDF5 round trips give back the iris
features as read from csv (and the thresholded copy)."""
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import DATA_DIR, wmat, wscalar  # noqa: E402

with open(os.path.join(DATA_DIR, "iris_X.csv")) as f:
    X = [[float(v) for v in row] for row in csv.reader(f)]
wmat("A", X)
wscalar("diff", 0)
wmat("T", [[v if v > 6.5 else 0.0 for v in row] for row in X])
wscalar("shape", len(X) * 10 + len(X[0]))
