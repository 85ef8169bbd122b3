"""bench_python.py: the Python package's overheads, each against its peer
in the same run (make bench-python). Prints per row: the braid time, the
peer's time and their ratio (medians of alternated repetitions).

  call       a prepared tiny script (y = x + 1) vs a Python function call
             doing the same (the overhead a call adds; the issue's aim is
             under 50 us for braid)
  bind       binding 80 MB C-ordered (a view) vs Fortran-ordered (a copy)
             and running sum(X)
  tsmm       t(X) %*% X of 20000 x 100 through braid vs NumPy
  lm         lm(X, y) (reg 1e-7) vs numpy.linalg.lstsq, 20000 x 100
"""
import statistics
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
    print(f"{name:6s} braid {ma * unit:9.3f} {label}  peer {mb * unit:9.3f} {label}  ratio {ma / mb:7.2f}")


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
    row("bind", lambda: s.execute(X=X), lambda: s.execute(X=XF), 5)
    X = rng.random((20000, 100))
    y = X @ rng.random(100)
    g = braid.prepare("G = t(X) %*% X", inputs=["X"], outputs=["G"])
    row("tsmm", lambda: g.execute(X=X), lambda: X.T @ X, 7)
    lm = braid.prepare("B = lm(X=X, y=y, reg=1e-7, verbose=FALSE)", inputs=["X", "y"], outputs=["B"])
    lm.execute(X=X, y=y)
    row("lm", lambda: lm.execute(X=X, y=y), lambda: np.linalg.lstsq(X, y, rcond=None), 5)


if __name__ == "__main__":
    main()
