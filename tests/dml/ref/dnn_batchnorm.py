"""Expected outputs of cases/dnn_batchnorm.dml (NumPy, ref/_dnn2.py)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import wmat, wscalar  # noqa: E402
import _dnn as d  # noqa: E402
import _dnn2 as d2  # noqa: E402
import numpy as np  # noqa: E402

N, C, HW = 5, 3, 4
X = np.sin(d.seqmat(N, C * HW) * 0.7) * 2 + 0.3
gamma = np.array([1.5, 0.5, -1])
beta = np.array([0.1, -0.2, 0.3])
em = np.array([0, 0.5, -0.5])
ev = np.array([1, 2, 0.5])
out, emu, evu, cm, civ = d2.batch_norm(X, gamma, beta, em, ev, True, 1e-5, 0.9)
wmat("out", out)
wmat("emu", emu.reshape(-1, 1))
wmat("evu", evu.reshape(-1, 1))
wmat("cm", cm.reshape(-1, 1))
wmat("civ", civ.reshape(-1, 1))
dout = np.cos(d.seqmat(N, C * HW) * 0.3)
dX, dg, db = d2.batch_norm_backward(X, dout, gamma, cm, civ)
wmat("dX", dX)
wmat("dgamma", dg.reshape(-1, 1))
wmat("dbeta", db.reshape(-1, 1))
Xs = X * (X > 1.5)
outs, _, evus, cms, civs = d2.batch_norm(Xs, gamma, beta, em, ev, True, 1e-3, 0.5)
wmat("outs", outs)
wmat("evus", evus.reshape(-1, 1))
dXs, dgs, _ = d2.batch_norm_backward(Xs, dout * (dout > 0), gamma, cms, civs)
wmat("dXs", dXs)
wmat("dgs", dgs.reshape(-1, 1))
X2 = np.cos(d.seqmat(2, C * HW))
out2, _, _, _, civ2 = d2.batch_norm(X2, gamma, beta, emu, evu, False, 1e-5, 0.9)
wmat("out2", out2)
wmat("civ2", civ2.reshape(-1, 1))
wscalar("testema", 0.0)
