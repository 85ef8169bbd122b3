#!/usr/bin/env python3
"""NumPy/SciPy and scikit-learn peers of the braid benchmark scripts.

Usage: peers.py SYSTEM ALG n m sp it seed
  SYSTEM  numpy | sklearn
  ALG     l2svm | mlogreg | glm | kmeans | als | autoencoder | lm

The numpy variants are straightforward vectorized implementations of the
same algorithms as braid's builtin scripts (scripts/builtin), with the same
fixed iteration counts, written as a data scientist would with NumPy and
SciPy (sparse data as scipy.sparse CSR). The sklearn variants run the
closest scikit-learn estimator with a matching iteration budget; their
algorithms differ (see bench/e2e/README.md), so those rows are indicative.

Data: the same distributions as bench/e2e/data.dml (dense: standard
normal; sparse: a fraction sp non-zero, uniform in [0, 1)), drawn by
NumPy's generator. Prints "RESULT alg_seconds=<s> check=<v>" like the
braid scripts; the time covers the algorithm only, not data generation.
"""

import sys
import time

import numpy as np
import scipy.sparse as sps
from scipy.special import ndtr, log_ndtr


# ---------------------------------------------------------------- data

def features(n, m, sp, seed):
    rng = np.random.default_rng(seed)
    if sp >= 1:
        return rng.standard_normal((n, m))
    return sps.random(n, m, density=sp, format="csr", random_state=rng,
                      data_rvs=rng.random)


def scores(X, k, seed):
    rng = np.random.default_rng(seed + 1)
    W = rng.standard_normal((X.shape[1], k))
    S = np.asarray(X @ W) + 0.5 * rng.standard_normal((X.shape[0], k))
    return S - S.mean(axis=0)


# ---------------------------------------------------------------- numpy

def np_l2svm(X, y, reg=1.0, eps=1e-12, maxit=20, maxii=20):
    """Nonlinear conjugate gradient with Newton line search (l2svm.dml)."""
    n, d = X.shape
    w = np.zeros(d)
    Xw = np.zeros(n)
    obj = 0.5 * n
    r = X.T @ y
    rr = r @ r
    s = r.copy()
    act = np.ones(n, dtype=bool)
    since = 0
    it = 0
    done = rr == 0
    while not done and it < maxit:
        Xs = X @ s
        ws = w @ s
        ss = s @ s
        step = 0.0
        ii = 0
        more = True
        while more and ii < maxii:
            slack = 1 - y * (Xw + step * Xs)
            on = slack > 0
            d1 = reg * (ws + step * ss) - np.sum(on * slack * y * Xs)
            d2 = reg * ss + np.sum(on * Xs * Xs)
            if d2 > 0:
                step -= d1 / d2
                more = d1 * d1 / d2 > eps
            else:
                more = False
            ii += 1
        w += step * s
        Xw += step * Xs
        slack = 1 - y * Xw
        h = np.maximum(slack, 0)
        obj_new = 0.5 * h @ h + 0.5 * reg * w @ w
        r_new = X.T @ (h * y) - reg * w
        rr_new = r_new @ r_new
        it += 1
        done = (obj - obj_new <= eps * obj_new) or rr_new == 0
        act_new = slack > 0
        since += 1
        if np.any(act_new != act) or since >= d:
            s = r_new
            since = 0
        else:
            pr = max(r_new @ (r_new - r) / rr, 0.0)
            s = r_new + pr * s
            if s @ r_new <= 0:
                s = r_new
                since = 0
        act, r, rr, obj = act_new, r_new, rr_new, obj_new
    return w


def _to_boundary(S, V, delta, h=None):
    h = 1.0 if h is None else h
    sv = np.sum(h * S * V)
    vv = np.sum(h * V * V)
    ss = np.sum(h * S * S)
    if vv <= 0:
        return 0.0
    disc = np.sqrt(max(sv * sv + vv * (delta * delta - ss), 0))
    tau = (delta * delta - ss) / (sv + disc) if sv >= 0 else (disc - sv) / vv
    return max(tau, 0.0)


def np_mlogreg(X, y, reg=1.0, maxi=5, maxii=5):
    """Trust-region Newton with Steihaug CG, baseline category
    (multiLogReg.dml with icpt=0, tol=0)."""
    n, D = X.shape
    k = int(y.max())
    K = k - 1
    Y = np.zeros((n, K))
    idx = y.astype(int) - 1
    mask = idx < K
    Y[np.nonzero(mask)[0], idx[mask]] = 1

    def objective(B):
        LT = np.asarray(X @ B)
        mx = np.maximum(LT.max(axis=1), 0)
        E = np.exp(LT - mx[:, None])
        S = E.sum(axis=1) + np.exp(-mx)
        return np.sum(mx + np.log(S)) - np.sum(Y * LT), E / S[:, None]

    B = np.zeros((D, K))
    f, P = objective(B)
    f += 0.5 * reg * np.sum(B * B)
    G = X.T @ (P - Y) + reg * B
    gnorm0 = gnorm = np.linalg.norm(G)
    delta = 1e150
    for it in range(1, maxi + 1):
        forcing = min(0.1, np.sqrt(gnorm / gnorm0))
        S = np.zeros((D, K))
        R = -G
        V = R.copy()
        rr = np.sum(R * R)
        boundary = False
        for _ in range(maxii):
            Q = P * np.asarray(X @ V)
            HV = X.T @ (Q - P * Q.sum(axis=1)[:, None]) + reg * V
            vhv = np.sum(V * HV)
            alpha = rr / vhv if vhv > 0 else 0.0
            Snew = S + alpha * V
            if vhv <= 0 or np.sum(Snew * Snew) >= delta * delta:
                tau = _to_boundary(S, V, delta)
                S += tau * V
                R -= tau * HV
                boundary = True
                break
            S = Snew
            R -= alpha * HV
            rrn = np.sum(R * R)
            V = R + (rrn / rr) * V
            done = np.sqrt(rrn) <= forcing * gnorm
            rr = rrn
            if done:
                break
        Bn = B + S
        fn, Pn = objective(Bn)
        fn += 0.5 * reg * np.sum(Bn * Bn)
        pred = -0.5 * (np.sum(S * G) - np.sum(S * R))
        actual = f - fn
        rho = actual / pred if pred > 0 else -1.0
        snorm = np.linalg.norm(S)
        if it == 1:
            delta = min(delta, snorm)
        if rho < 0.25:
            delta = 0.25 * snorm
        elif rho > 0.75 and boundary:
            delta = 2 * delta
        Gn = X.T @ (Pn - Y) + reg * Bn
        if rho > 1e-4:
            B, f, P, G, gnorm = Bn, fn, Pn, Gn, np.linalg.norm(Gn)
    return B


def np_glm_probit(X, y, maxi=5, maxii=5):
    """Fisher scoring in a trust region with Jacobi-preconditioned Steihaug
    CG, binomial family, probit link, no intercept (glm.dml)."""
    n, D = X.shape
    X2 = X.multiply(X) if sps.issparse(X) else X * X

    def evaluate(eta):
        logp = log_ndtr(eta)
        logq = log_ndtr(-eta)
        p = np.exp(logp)
        q = np.exp(logq)
        dp = np.exp(-0.5 * eta * eta) / np.sqrt(2 * np.pi)
        ll = np.sum(np.where(y > 0, logp, 0) + np.where(y == 0, logq, 0))
        v = p * q
        return ll, (y - p) * dp / v, dp * dp / v

    B = np.zeros(D)
    ll, s, w = evaluate(np.zeros(n))
    f = -ll
    G = -(X.T @ s)
    gnorm0 = gnorm = np.linalg.norm(G)
    delta = 1e150
    for it in range(1, maxi + 1):
        forcing = min(0.1, np.sqrt(gnorm / gnorm0))
        hd = np.asarray(X2.T @ w).ravel()
        hd[hd <= 0] = max(hd.max(), 1e-300)
        S = np.zeros(D)
        R = -G
        Z = R / hd
        V = Z.copy()
        rr = R @ Z
        boundary = False
        for _ in range(maxii):
            HV = X.T @ (w * (X @ V))
            vhv = V @ HV
            alpha = rr / vhv if vhv > 0 else 0.0
            Snew = S + alpha * V
            if vhv <= 0 or np.sum(hd * Snew * Snew) >= delta * delta:
                tau = _to_boundary(S, V, delta, hd)
                S += tau * V
                R -= tau * HV
                boundary = True
                break
            S = Snew
            R -= alpha * HV
            Z = R / hd
            rrn = R @ Z
            done = np.linalg.norm(R) <= forcing * gnorm
            V = Z + (rrn / rr) * V
            rr = rrn
            if done:
                break
        Bn = B + S
        lln, sn, wn = evaluate(X @ Bn)
        fn = -lln
        pred = -0.5 * (S @ G - S @ R)
        rho = (f - fn) / pred if pred > 0 else -1.0
        snorm = np.sqrt(np.sum(hd * S * S))
        if it == 1:
            delta = min(delta, snorm)
        if rho < 0.25:
            delta = 0.25 * snorm
        elif rho > 0.75 and boundary:
            delta = 2 * delta
        Gn = -(X.T @ sn)
        if rho > 1e-4:
            B, f, s, w, G, gnorm = Bn, fn, sn, wn, Gn, np.linalg.norm(Gn)
    return B


def np_kmeans(X, k=5, maxit=10, seed=1, sample_per_centroid=50):
    """k-means++ seeding on a sample, then Lloyd iterations (kmeans.dml,
    one run)."""
    rng = np.random.default_rng(seed)
    n = X.shape[0]
    ns = min(n, k * sample_per_centroid)
    S = X[rng.choice(n, ns, replace=False)]
    u = rng.random(k)
    C = np.empty((k, X.shape[1]))
    first = min(ns - 1, int(u[0] * ns))
    C[0] = S[first]
    dmin = ((S - S[first]) ** 2).sum(axis=1)
    for j in range(1, k):
        pick = min(ns - 1, int(np.sum(np.cumsum(dmin) < u[j] * dmin.sum())))
        C[j] = S[pick]
        dmin = np.minimum(dmin, ((S - S[pick]) ** 2).sum(axis=1))
    xsq = (X * X).sum(axis=1)
    D = (C * C).sum(axis=1)[None, :] - 2 * (X @ C.T)
    wcss = xsq.sum() + D.min(axis=1).sum()
    for _ in range(maxit):
        lab = D.argmin(axis=1)
        cnt = np.bincount(lab, minlength=k).astype(float)
        P = sps.csr_matrix((np.ones(n), (np.arange(n), lab)), shape=(n, k))
        sums = np.asarray(P.T @ X)
        keep = cnt == 0
        C = (sums + keep[:, None] * C) / (cnt + keep)[:, None]
        D = (C * C).sum(axis=1)[None, :] - 2 * (X @ C.T)
        wcss_new = xsq.sum() + D.min(axis=1).sum()
        if wcss - wcss_new <= 0:
            wcss = wcss_new
            break
        wcss = wcss_new
    return C


def np_als_cg(X, rank=20, reg=1e-6, maxit=5, seed=1, init=None):
    """ALS with conjugate gradient half-steps, L2 regularization, loss
    checked every iteration (alsCG.dml); the residuals are computed at the
    observed entries only (scipy.sparse). init: (U, V) initial factors
    (n x rank, m x rank), else uniform in [-0.5, 0.5]. Returns U, V^T and
    the final loss."""
    X = X.tocsr()
    n, m = X.shape
    rows, cols = X.nonzero()
    xv = np.asarray(X[rows, cols]).ravel()
    rng = np.random.default_rng(seed)
    if init is None:
        U = rng.uniform(-0.5, 0.5, (n, rank))
        Vt = rng.uniform(-0.5, 0.5, (m, rank))
    else:
        U, Vt = init[0].copy(), init[1].copy()

    def masked(A, B):
        """The entries of A @ B.T at the observed positions, as CSR."""
        vals = np.einsum("ij,ij->i", A[rows], B[cols])
        return sps.csr_matrix((vals, (rows, cols)), shape=(n, m))

    def loss():
        r = np.einsum("ij,ij->i", U[rows], Vt[cols]) - xv
        return 0.5 * r @ r + 0.5 * reg * (np.sum(U * U) + np.sum(Vt * Vt))

    cur = loss()
    for _ in range(maxit):
        for side in (0, 1):
            if side == 0:
                G = (masked(U, Vt) - X) @ Vt + reg * U
            else:
                G = (masked(U, Vt) - X).T @ U + reg * Vt
            R = -G
            P = R.copy()
            rr0 = rr = np.sum(R * R)
            for _ in range(rank):
                if rr <= 1e-18 * rr0:
                    break
                if side == 0:
                    HP = masked(P, Vt) @ Vt + reg * P
                else:
                    HP = masked(U, P).T @ U + reg * P
                alpha = rr / np.sum(P * HP)
                if side == 0:
                    U = U + alpha * P
                else:
                    Vt = Vt + alpha * P
                R = R - alpha * HP
                rrn = np.sum(R * R)
                P = R + (rrn / rr) * P
                rr = rrn
        cur = loss()
    return U, Vt.T, cur


def np_autoencoder(X, h1=100, h2=10, epochs=1, batch=256, step=1e-3, decay=0.95,
                   mom=0.9, seed=1, init=None, full=False):
    """Two-layer tanh autoencoder, minibatch SGD with momentum
    (autoencoder_2layer.dml). init: (row order keys, [W1, W2, W3, W4]
    uniform in [-1, 1]), else drawn here. Returns the code H of every row
    (with full=True also the weights, biases and the standardized,
    shuffled rows)."""
    rng = np.random.default_rng(seed)
    n, m = X.shape
    keys = rng.random(n) if init is None else init[0]
    perm = np.argsort(keys, kind="stable")
    Xp = X[perm]
    Z = (Xp - Xp.mean(axis=0)) / Xp.std(axis=0, ddof=1)
    sizes = [(h1, m), (h2, h1), (h1, h2), (m, h1)]
    if init is None:
        W = [np.sqrt(6 / (a + b)) * rng.uniform(-1, 1, (a, b)) for a, b in sizes]
    else:
        W = [np.sqrt(6 / (a + b)) * Wr for (a, b), Wr in zip(sizes, init[1])]
    b = [np.zeros(a) for a, _ in sizes]
    uW = [np.zeros_like(w) for w in W]
    ub = [np.zeros_like(v) for v in b]
    per_epoch = int(np.ceil(n / batch))
    beg = 0
    for it in range(1, epochs * per_epoch + 1):
        end = min(beg + batch, n)
        A = [Z[beg:end]]
        for i in range(4):
            A.append(np.tanh(A[-1] @ W[i].T + b[i]))
        d = (A[4] - A[0]) * (1 - A[4] ** 2)
        lr = step / (end - beg)
        for i in range(3, -1, -1):
            gW, gb = d.T @ A[i], d.sum(axis=0)
            if i > 0:
                d = (d @ W[i]) * (1 - A[i] ** 2)
            uW[i] = mom * uW[i] - lr * gW
            ub[i] = mom * ub[i] - lr * gb
        for i in range(4):
            W[i] += uW[i]
            b[i] += ub[i]
        beg = 0 if end == n else end
        if it % per_epoch == 0:
            step *= decay
    H = np.tanh(np.tanh(Z @ W[0].T + b[0]) @ W[1].T + b[1])
    Hout = np.empty_like(H)
    Hout[perm] = H
    return (Hout, W, b, Z) if full else Hout


def np_lm(X, y, reg=1e-7):
    """Normal equations (lmDS.dml, no intercept)."""
    A = X.T @ X
    A = A.toarray() if sps.issparse(A) else A
    A[np.diag_indices_from(A)] += reg
    return np.linalg.solve(A, np.asarray(X.T @ y).ravel())


# ---------------------------------------------------------------- main

def run(system, alg, n, m, sp, it, seed):
    if alg == "als":
        rng = np.random.default_rng(seed)
        X = sps.random(n, m, density=sp, format="csr", random_state=rng, data_rvs=rng.random)
        X.data = np.ceil(5 * X.data)
        X.data[X.data == 0] = 1
        S = None
    else:
        X = features(n, m, sp, seed)
        S = scores(X, 5 if alg == "mlogreg" else 1, seed)
    t0 = time.perf_counter()
    if system == "numpy":
        if alg == "l2svm":
            y = np.where(S[:, 0] > 0, 1.0, -1.0)
            out = np_l2svm(X, y, maxit=it)
        elif alg == "mlogreg":
            out = np_mlogreg(X, S.argmax(axis=1) + 1.0, maxi=it)
        elif alg == "glm":
            out = np_glm_probit(X, (S[:, 0] > 0).astype(float), maxi=it)
        elif alg == "kmeans":
            out = np_kmeans(X, maxit=it, seed=seed)
        elif alg == "als":
            out = np_als_cg(X, maxit=it, seed=seed)[0]
        elif alg == "autoencoder":
            out = np_autoencoder(X, epochs=it, seed=seed)
        elif alg == "lm":
            out = np_lm(X, S[:, 0])
        else:
            raise SystemExit("unknown algorithm " + alg)
    else:
        from sklearn.svm import LinearSVC
        from sklearn.linear_model import LogisticRegression, LinearRegression
        from sklearn.cluster import KMeans
        from sklearn.neural_network import MLPRegressor
        import warnings
        warnings.filterwarnings("ignore")
        if alg == "l2svm":
            est = LinearSVC(C=0.5, loss="squared_hinge", dual=False, fit_intercept=False,
                            tol=1e-12, max_iter=it).fit(X, S[:, 0] > 0)
            out = est.coef_
        elif alg == "mlogreg":
            est = LogisticRegression(C=1.0, fit_intercept=False, tol=1e-12,
                                     max_iter=it * 5).fit(X, S.argmax(axis=1))
            out = est.coef_
        elif alg == "kmeans":
            est = KMeans(n_clusters=5, n_init=1, max_iter=it, tol=0, algorithm="lloyd",
                         random_state=seed).fit(X)
            out = est.cluster_centers_
        elif alg == "autoencoder":
            est = MLPRegressor(hidden_layer_sizes=(100, 10, 100), activation="tanh",
                               solver="sgd", batch_size=256, learning_rate_init=1e-3,
                               momentum=0.9, nesterovs_momentum=False, max_iter=it,
                               shuffle=True, random_state=seed, alpha=0.0).fit(X, X)
            out = est.coefs_[0]
        elif alg == "lm":
            est = LinearRegression(fit_intercept=False).fit(X, S[:, 0])
            out = est.coef_
        else:
            raise SystemExit("scikit-learn has no " + alg)
    t1 = time.perf_counter()
    print("RESULT alg_seconds=%.6f check=%r" % (t1 - t0, float(np.sum(np.asarray(out) ** 2))))


if __name__ == "__main__":
    if len(sys.argv) != 8:
        raise SystemExit(__doc__)
    run(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]),
        int(sys.argv[6]), int(sys.argv[7]))
