"""sqrtMatrix vs scipy.linalg.sqrtm: a symmetric positive definite matrix,
a singular positive semi-definite one, a non-symmetric matrix with real
positive eigenvalues, one with a complex pair (positive real parts), and
the 1 x 1 case."""
import numpy as np
import scipy.linalg as sl

from _common import wref, wscalar, check

rng = np.random.default_rng(3)
G = rng.normal(size=(6, 6))
mats = {
    "spd": G @ G.T + 0.5 * np.eye(6),
    "psd": (lambda V: V @ V.T)(rng.normal(size=(5, 3))),
    "nonsym": np.triu(rng.random((5, 5))) + np.diag([1.0, 2, 3, 4, 5]) + 0.1 * rng.random((5, 5)),
    "cplx": np.array([[2.0, -1.5, 0.3], [1.2, 2.5, 0.1], [0.2, -0.4, 1.0]]),
    "one": np.array([[6.25]]),
}
for name, A in mats.items():
    B = sl.sqrtm(A)
    check(np.abs(np.imag(B)).max() < 1e-7, name + ": real root")
    B = np.real(B)
    check(np.abs(B @ B - A).max() < 1e-9 * np.abs(A).max(), name + ": sqrtm residual")
    wref(name + "_A", A)
    wref(name + "_B", B)
    wscalar(name + "_ok", True)
wscalar("res_ok", True)
