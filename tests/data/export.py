#!/usr/bin/env python3
"""Export scikit-learn's bundled toy data sets to CSV with DML metadata.

Usage: python3 tests/data/export.py        (Debian: apt-get install python3-sklearn)

The data sets ship inside the scikit-learn package (nothing is fetched from
the network). Each data set NAME becomes

    tests/data/NAME_X.csv (+ .mtd)   n x m feature matrix
    tests/data/NAME_y.csv (+ .mtd)   n x 1 target

Class labels are written as 1..k (scikit-learn's 0..k-1 plus one), the
convention of DML's classifiers; regression targets as they are. Numbers
are written with Python's repr (shortest round-trip digits), so braid reads
back exactly the doubles scikit-learn holds. The files are committed: tests
and CI never need scikit-learn, only whoever regenerates them.
"""

import json
import os
import sys

from sklearn import datasets

HERE = os.path.dirname(os.path.abspath(__file__))

# name -> (loader, True if the target is a class label)
SETS = {
    "iris": (datasets.load_iris, True),
    "wine": (datasets.load_wine, True),
    "breast_cancer": (datasets.load_breast_cancer, True),
    "digits": (datasets.load_digits, True),
    "diabetes": (datasets.load_diabetes, False),
}


def fmt(v):
    v = float(v)
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return repr(v)


def write_matrix(path, rows):
    nrow = len(rows)
    ncol = len(rows[0]) if rows else 0
    nnz = 0
    with open(path, "w") as f:
        for r in rows:
            nnz += sum(1 for v in r if float(v) != 0.0)
            f.write(",".join(fmt(v) for v in r) + "\n")
    mtd = {"data_type": "matrix", "value_type": "double", "rows": nrow,
           "cols": ncol, "nnz": nnz, "format": "csv", "header": False, "sep": ","}
    with open(path + ".mtd", "w") as f:
        json.dump(mtd, f, indent=1)
        f.write("\n")


def main():
    for name, (loader, is_class) in SETS.items():
        d = loader()
        X = d.data
        y = d.target + 1 if is_class else d.target
        write_matrix(os.path.join(HERE, name + "_X.csv"), X.tolist())
        write_matrix(os.path.join(HERE, name + "_y.csv"), [[v] for v in y.tolist()])
        print("%-14s %5d x %3d  %s" % (name, X.shape[0], X.shape[1],
                                       "classes 1..%d" % (y.max()) if is_class else "regression"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
