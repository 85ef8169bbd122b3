#!/usr/bin/env python3
"""Agreement check of the NumPy peers (bench/e2e/agree.sh).

Usage: agree.py ALG DIR sp it
Reads the inputs and braid's results that agree.dml wrote to DIR, runs the
numpy peer of peers.py on the same inputs and prints the objective of both
results and the largest difference between them (the same line as
peers.R's agree mode). Exits with status 1 when they disagree.
"""

import os
import sys

import numpy as np
import scipy.sparse as sps

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers  # noqa: E402


def rcsv(d, name):
    return np.loadtxt(os.path.join(d, name + ".csv"), delimiter=",", ndmin=2)


def report(what, fb, fn, Mb, Mn, tol=1e-8, rtol=1e-6):
    """Prints braid's and NumPy's objective and the largest relative
    difference of the results; returns 0 when they agree, else 1."""
    df = abs(fb - fn) / max(abs(fb), 1e-300)
    dm = np.max(np.abs(np.asarray(Mb) - np.asarray(Mn))) / max(np.max(np.abs(Mb)), 1e-300)
    ok = df <= tol and dm <= rtol
    print("%-32s objective braid %.12g  numpy %.12g  rel.diff %.1e;  result max diff %.1e (rel)  %s"
          % (what, fb, fn, df, dm, "agree" if ok else "DISAGREE"))
    return 0 if ok else 1


def agree(alg, d, sp, it):
    X = rcsv(d, "X")
    shape = "%s %dx%d%s" % (alg, X.shape[0], X.shape[1], "" if sp >= 1 else " sp=%g" % sp)
    Xs = sps.csr_matrix(X) if sp < 1 else X
    if alg == "l2svm":
        y = np.where(rcsv(d, "y")[:, 0] > 1, 1.0, -1.0)
        wb = rcsv(d, "B")[:, 0]
        wn = peers.np_l2svm(Xs, y, maxit=it)

        def f(w):
            h = np.maximum(1 - y * (X @ w), 0)
            return 0.5 * h @ h + 0.5 * w @ w
        return report(shape, f(wb), f(wn), wb, wn)
    if alg == "mlogreg":
        y = rcsv(d, "y")[:, 0]
        Bb = rcsv(d, "B")
        Bn = peers.np_mlogreg(Xs, y, maxi=it)
        K = Bb.shape[1]
        Y = (y[:, None] == np.arange(1, K + 1)[None, :]).astype(float)

        def f(B):
            LT = np.hstack([X @ B, np.zeros((X.shape[0], 1))])
            mx = LT.max(axis=1)
            lse = mx + np.log(np.exp(LT - mx[:, None]).sum(axis=1))
            return lse.sum() - np.sum(Y * LT[:, :K]) + 0.5 * np.sum(B * B)
        return report(shape, f(Bb), f(Bn), Bb, Bn)
    if alg == "glm":
        from scipy.special import log_ndtr
        y = rcsv(d, "y")[:, 0]
        Bb = rcsv(d, "B")[:, 0]
        Bn = peers.np_glm_probit(Xs, y, maxi=it)

        def f(B):
            eta = X @ B
            return -np.sum(np.where(y > 0, log_ndtr(eta), log_ndtr(-eta)))
        return report(shape, f(Bb), f(Bn), Bb, Bn)
    if alg == "als":
        rows, cols = np.nonzero(X)
        xv = X[rows, cols]
        Ub, Vb = rcsv(d, "U"), rcsv(d, "V")
        Un, Vtn, loss = peers.np_als_cg(sps.csr_matrix(X), maxit=it,
                                        init=(rcsv(d, "U0"), rcsv(d, "V0")))

        def fit(U, V):
            return np.einsum("ij,ij->i", U[rows], V[cols])

        def f(U, V):
            r = fit(U, V) - xv
            return 0.5 * r @ r + 0.5 * 1e-6 * (np.sum(U * U) + np.sum(V * V))
        return report(shape, f(Ub, Vb), loss, fit(Ub, Vb), fit(Un, Vtn.T))
    if alg == "autoencoder":
        init = (rcsv(d, "keys")[:, 0], [rcsv(d, "W%dr" % i) for i in range(1, 5)])
        Hn, Wn, bn, Z = peers.np_autoencoder(X, epochs=it, init=init, full=True)
        bb = rcsv(d, "b")[0]
        ends = np.cumsum([0] + [len(v) for v in bn])
        Wb = [rcsv(d, "W%d" % i) for i in range(1, 5)]
        bbl = [bb[ends[i]:ends[i + 1]] for i in range(4)]

        def f(W, b):
            A = Z
            for Wl, bl in zip(W, b):
                A = np.tanh(A @ Wl.T + bl)
            return 0.5 * np.sum((A - Z) ** 2)
        return report(shape, f(Wb, bbl), f(Wn, bn), rcsv(d, "H"), Hn)
    raise SystemExit("no agreement check for " + alg)


if __name__ == "__main__":
    if len(sys.argv) != 5:
        raise SystemExit(__doc__)
    sys.exit(agree(sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])))
