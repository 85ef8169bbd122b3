"""bench_python.py: the Python package's overheads, each against its peer
in the same run (make bench-python). Prints per row: the braid time, the
peer's time and their ratio (medians of alternated repetitions).

  call       a prepared tiny script (y = x + 1) vs a Python function call
             doing the same (the overhead a call adds; the issue's aim is
             under 50 us for braid)
  bind       binding 80 MB Fortran-ordered (the view of its transpose,
             read as t(view)) vs C-ordered (a view) and running sum(X)
  tsmm       t(X) %*% X of 20000 x 100 through braid vs NumPy
  ftsmm      the same of the Fortran-ordered array (tsmm of the row-major
             view's other side) vs the C-ordered one through braid
  lm         lm(X, y) (reg 1e-7) vs numpy.linalg.lstsq, 20000 x 100
  lazy       compute() of a tiny lazy expression (x + 1 over a bound
             braid.Scalar: nodes, script text, the cache of prepared
             scripts, binding, the run) vs the prepared call
  fused      ((X @ v) * 2 + 1).exp().sum() lazily (one fused operator) vs
             NumPy, 200000 x 100
  e2e rows   braid.l2svm / braid.kmeans / braid.lmDS from Python (the
             lazy API, inputs bound without copies) vs the NumPy
             implementations of bench/e2e/peers.py and scikit-learn
             (LinearSVC, KMeans, LinearRegression, when installed) on the
             e2e benchmark's data (BRAID_BENCH_ROWS rows x 100, default
             200000; the e2e benchmark itself uses 1000000)
"""
import os
import statistics
import sys
import time

import numpy as np

import braid


def timed(fn, reps):
    out = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def row(name, a, b, reps, unit=1e3, label="ms"):
    ta, tb = [], []
    for _ in range(reps):           # alternate the two sides
        ta += timed(a, 1)
        tb += timed(b, 1)
    ma, mb = statistics.median(ta), statistics.median(tb)
    print(f"{name:9s} braid {ma * unit:9.3f} {label}  peer {mb * unit:9.3f} {label}  ratio {ma / mb:7.2f}")


def main():
    rng = np.random.default_rng(0)
    tiny = braid.prepare("y = x + 1", inputs=["x"], outputs=["y"])
    tiny.execute(x=1.0)

    def py_call(x=1.0):
        return {"y": x + 1}

    def calls(fn, n=1000):
        return lambda: [fn(x=1.0) for _ in range(n)]
    row("call", calls(tiny.execute), calls(py_call), 7, unit=1e3, label="us")   # 1000 calls: ms = us per call
    X = rng.random((10_000_000 // 100, 100))
    XF = np.asfortranarray(X)
    s = braid.prepare("s = sum(X)", inputs=["X"], outputs=["s"])
    row("bind", lambda: s.execute(X=XF), lambda: s.execute(X=X), 5)
    X = rng.random((20000, 100))
    y = X @ rng.random(100)
    g = braid.prepare("G = t(X) %*% X", inputs=["X"], outputs=["G"])
    row("tsmm", lambda: g.execute(X=X), lambda: X.T @ X, 7)
    XF = np.asfortranarray(X)
    row("ftsmm", lambda: g.execute(X=XF), lambda: g.execute(X=X), 7)
    lm = braid.prepare("B = lm(X=X, y=y, reg=1e-7, verbose=FALSE)", inputs=["X", "y"], outputs=["B"])
    lm.execute(X=X, y=y)
    row("lm", lambda: lm.execute(X=X, y=y), lambda: np.linalg.lstsq(X, y, rcond=None), 5)
    x = braid.Scalar(1.0)
    (x + 1).compute()
    row("lazy", calls(lambda x: (braid.Scalar(x) + 1).compute()), calls(tiny.execute), 7, unit=1e3, label="us")
    X, v = rng.random((200000, 100)), rng.random(100)
    fused = lambda: ((braid.Matrix(X) @ v) * 2 + 1).exp().sum().compute()
    fused()
    row("fused", fused, lambda: np.exp((X @ v) * 2 + 1).sum(), 7)
    e2e(int(os.environ.get("BRAID_BENCH_ROWS", "200000")))


def e2e(n, m=100, seed=7):
    """braid's algorithms from Python vs NumPy and scikit-learn."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "e2e"))
    import peers
    try:
        import warnings
        from sklearn.svm import LinearSVC
        from sklearn.cluster import KMeans
        from sklearn.linear_model import LinearRegression
        warnings.filterwarnings("ignore")
    except ImportError:
        LinearSVC = None
        print("(scikit-learn is not installed: no scikit-learn rows)")
    X = peers.features(n, m, 1.0, seed)
    s = peers.scores(X, 1, seed)[:, 0]
    y = np.where(s > 0, 1.0, -1.0)
    it = 10
    svm = lambda: braid.l2svm(X, y, intercept=False, epsilon=1e-12, reg=1.0, maxIterations=it, maxii=20,
                              verbose=False).compute()
    km = lambda: braid.compute(*braid.kmeans(X, k=5, runs=1, max_iter=it, eps=0.0, seed=seed))
    lm = lambda: braid.lmDS(X, s, icpt=0, reg=1e-7, verbose=False).compute()
    print(f"e2e data: {n} x {m} dense, {it} iterations")
    row("l2svm/np", svm, lambda: peers.np_l2svm(X, y, maxit=it), 3)
    row("kmeans/np", km, lambda: peers.np_kmeans(X, maxit=it, seed=seed), 3)
    row("lm/np", lm, lambda: peers.np_lm(X, s), 3)
    if LinearSVC is None:
        return
    row("l2svm/sk", svm, lambda: LinearSVC(C=0.5, loss="squared_hinge", dual=False, fit_intercept=False,
                                           tol=1e-12, max_iter=it).fit(X, y > 0), 3)
    row("kmeans/sk", km, lambda: KMeans(n_clusters=5, n_init=1, max_iter=it, tol=0, algorithm="lloyd",
                                        random_state=seed).fit(X), 3)
    row("lm/sk", lm, lambda: LinearRegression(fit_intercept=False).fit(X, s), 3)


if __name__ == "__main__":
    main()
