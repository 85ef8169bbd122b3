"""Helpers of the Python reference scripts ref/<case>.py (not a case).

A script runs from tests/dml as `python3 ref/<case>.py EXP_DIR REF_DIR`
(through ref/<case>.R, see ref/_python.R). It writes

  EXP_DIR/<x>.csv, <x>.scalar   the expected outputs of cases/<case>.dml
                                (compared by runner.py, 1e-9 relative)
  REF_DIR/<x>.csv (+ .mtd)      reference matrices the case reads as
                                refdata/<case>/<x>.csv to compute its own
                                tolerance checks (written as booleans)

Data sets come from ../data (exported by tests/data/export.py).
"""

import json
import os
import sys

import numpy as np

EXP_DIR = sys.argv[1]
REF_DIR = sys.argv[2]
DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data")


def num(v):
    """A number at full precision (%.17g reads back as the same double)."""
    v = float(v)
    if np.isnan(v):
        return "NaN"
    if np.isinf(v):
        return "Inf" if v > 0 else "-Inf"
    return "%.17g" % v


def wscalar(name, v):
    """EXP_DIR/name.scalar: booleans as TRUE/FALSE, numbers in full."""
    if isinstance(v, (bool, np.bool_)):
        s = "TRUE" if v else "FALSE"
    else:
        s = num(v)
    with open(os.path.join(EXP_DIR, name + ".scalar"), "w") as f:
        f.write(s + "\n")


def _csv_text(M):
    M = np.atleast_2d(np.asarray(M, dtype=float))
    return "".join(",".join(num(v) for v in row) + "\n" for row in M)


def wmat(name, M):
    """EXP_DIR/name.csv (a vector is written as a column)."""
    M = np.asarray(M, dtype=float)
    if M.ndim == 1:
        M = M.reshape(-1, 1)
    with open(os.path.join(EXP_DIR, name + ".csv"), "w") as f:
        f.write(_csv_text(M))


def wref(name, M):
    """REF_DIR/name.csv with its .mtd (a vector is written as a column)."""
    M = np.asarray(M, dtype=float)
    if M.ndim == 0:
        M = M.reshape(1, 1)
    if M.ndim == 1:
        M = M.reshape(-1, 1)
    path = os.path.join(REF_DIR, name + ".csv")
    with open(path, "w") as f:
        f.write(_csv_text(M))
    mtd = {"data_type": "matrix", "value_type": "double", "rows": M.shape[0],
           "cols": M.shape[1], "nnz": int(np.count_nonzero(M)), "format": "csv",
           "header": False, "sep": ","}
    with open(path + ".mtd", "w") as f:
        json.dump(mtd, f, indent=1)
        f.write("\n")


def load(name):
    """(X, y) of tests/data/<name>_X.csv / _y.csv; y as a 1-d array."""
    X = np.loadtxt(os.path.join(DATA_DIR, name + "_X.csv"), delimiter=",", ndmin=2)
    y = np.loadtxt(os.path.join(DATA_DIR, name + "_y.csv"), delimiter=",")
    return X, y


def standardize(X):
    """DML's scale(X): centered columns divided by their standard deviation
    (divisor n-1); constant columns divided by 1."""
    Z = X - X.mean(axis=0)
    sd = np.sqrt((Z ** 2).sum(axis=0) / (X.shape[0] - 1))
    sd[sd == 0] = 1.0
    return Z / sd


def check(cond, what):
    """Stops the reference when a self-check fails."""
    if not cond:
        raise SystemExit("reference self-check failed: " + what)
