"""test_braid.py: the Python package braid (python/) against plain Python,
NumPy and SciPy: round trips of every input kind, zero copies (shared
buffer addresses, resident memory), errors as BraidError with braid's
position, prepared scripts in threads with the GIL released, loop
statistics, and lm against its closed form. Run by make test as build/tests/test_python;
prints "test_python: N passed, M failed". Without NumPy/SciPy the plain
Python part runs and the rest is reported as skipped."""
import io
import os
import sys
import tempfile
import threading
import traceback

import braid
from harness import Tally

try:
    import numpy as np
except ImportError:
    np = None
try:
    import scipy.sparse as sp
except ImportError:
    sp = None

T = Tally("test_python")
check = T.check


def raises(fn, exc, text=""):
    try:
        fn()
    except exc as e:
        return text in str(e) or print(f"  message was: {e}", file=sys.stderr)
    return False


def test_plain():
    out = braid.run("y = sum(X) * a\nn = ncol(X)\nb = a > 1\nm = msg + \"!\"\nZ = X * 2",
                    inputs={"X": [[1, 2], [3, 4]], "a": 2, "msg": "hi"}, outputs=["y", "n", "b", "m", "Z"])
    check(out["y"] == 20.0 and out["n"] == 2 and out["b"] is True and out["m"] == "hi!", f"scalars {out}")
    Z = out["Z"]
    rows = Z.tolist() if hasattr(Z, "tolist") else memoryview(Z).tolist()
    check(np is not None or isinstance(Z, braid.MatrixView), "without NumPy a matrix is a MatrixView")
    check(rows == [[2.0, 4.0], [6.0, 8.0]], f"matrix output {rows}")
    col = braid.run("s = sum(v)\nr = nrow(v)", inputs={"v": [1.5, 2.5, 3]}, outputs=["s", "r"])
    check(col == {"s": 7.0, "r": 3}, f"a list is a column vector {col}")
    buf = io.StringIO()
    out = braid.run('print("hi " + x)\ny = x + 1', inputs={"x": 2}, outputs=["y"], stdout=buf)
    check(buf.getvalue() == "hi 2\n" and out["y"] == 3, f"print output collected: {buf.getvalue()!r}")
    buf = io.StringIO()
    check(raises(lambda: braid.run('print("a")\nstop("no way")', stdout=buf), braid.BraidError, "no way")
          and buf.getvalue() == "a\n", f"a failed run's print output: {buf.getvalue()!r}")
    big = braid.run("y = x + 1", inputs={"x": 2 ** 70}, outputs=["y"])["y"]
    check(big == float(2 ** 70) + 1, "an int beyond 64 bits binds as a double")


def test_frames():
    cols = {"name": ["a", None, "c"], "x": [0.5, 1.5, 2.5], "n": [10, 20, 30], "ok": [True, False, True]}
    out = braid.run("G = F\ns = sum(as.matrix(F[, 2:4]))\nT = F[2:3, 1]", inputs={"F": cols},
                    outputs=["G", "s", "T"], frames="dict")   # DataFrames: tests/python/test_lazy.py
    G = out["G"]
    check(out["s"] == 4.5 + 60 + 2, f"frame numbers {out['s']}")
    check(list(G) == ["name", "x", "n", "ok"] and G["name"] == ["a", None, "c"], f"frame columns {G}")
    check(list(G["x"]) == [0.5, 1.5, 2.5] and list(G["n"]) == [10, 20, 30] and list(G["ok"]) == [True, False, True],
          f"typed columns {G}")
    check(out["T"] == {"name": [None, "c"]}, f"a frame slice {out['T']}")
    check(raises(lambda: braid.run("s = sum(as.matrix(F))", inputs={"F": {"a": ["x", "y"]}}, outputs=["s"]),
                 braid.BraidError, "x"), "a string that is no number")
    check(raises(lambda: braid.run("n = nrow(F)", inputs={"F": {"a": [1, 2], "b": [1]}}, outputs=["n"]),
                 ValueError, "cells"), "columns of different lengths")


def test_lists():
    inner = braid.List(["deep"], names=["t"])
    L = braid.List([[[1, 2], [3, 4]]], k=0.5, n=3, inner=inner)
    out = braid.run("s = sum(as.matrix(L[1])) + as.scalar(L[\"k\"]) + as.scalar(L[\"n\"])\n"
                    "R = list(a = as.matrix(L[1]) * 2, b = \"x\", d = L)",
                    inputs={"L": L}, outputs=["s", "R"])
    check(out["s"] == 10 + 0.5 + 3, f"list items in the script {out['s']}")
    R = out["R"]
    check(isinstance(R, braid.List) and R.names == ["a", "b", "d"] and R.get("b") == "x", f"a list output {R}")
    a = R.get("a")
    rows = a.tolist() if hasattr(a, "tolist") else memoryview(a).tolist()
    check(rows == [[2.0, 4.0], [6.0, 8.0]], f"a matrix item {rows}")
    d = R.get("d")
    check(d.names == [None, "k", "n", "inner"] and d.get("inner") == ["deep"] and d.get("inner").names == ["t"],
          f"nested lists {d!r}")
    check(raises(lambda: braid.run("n = length(L)", inputs={"L": braid.List([2 ** 70])}), OverflowError),
          "an int beyond 64 bits in a list")
    # frames inside lists, in and out (a dict of columns here; DataFrames in test_lazy)
    F = {"name": ["a", None, "c"], "x": [0.5, 1.5, 2.5], "n": [1, 2, 3], "ok": [True, False, True]}
    out = braid.run('G = as.frame(L["f"])\nn = nrow(G)\ns = as.scalar(G[2, 2])\nt = as.scalar(G[3, 1])\n'
                    'R = list(f = G, m = 1, L = L)', inputs={"L": braid.List(f=F, k=1)},
                    outputs=["n", "s", "t", "R"], frames="dict")
    check((out["n"], out["s"], out["t"]) == (3, 1.5, "c"), f"a frame item in the script {out}")
    f = out["R"].get("f")
    x = f["x"] if np is None else f["x"].tolist()
    ok = f["ok"] if np is None else f["ok"].tolist()
    check(f["name"] == ["a", None, "c"] and list(x) == [0.5, 1.5, 2.5] and list(ok) == [True, False, True],
          f"a frame item out {f}")
    check(out["R"].get("L").get("f")["name"] == ["a", None, "c"], "a frame in a nested list")


def test_errors():
    check(raises(lambda: braid.run("x = 1\ny = (x + \n"), braid.BraidError, "<script>:3:1:"),
          "a syntax error raises BraidError with file:line:col")
    check(raises(lambda: braid.run("B = A %*% A", inputs={"A": [[1, 2, 3]]}, outputs=["B"]),
                 braid.BraidError, "<script>:1:"), "a run-time error carries its position")
    p = braid.prepare("y = x + 1", inputs=["x"], outputs=["y"])
    check(raises(lambda: p.execute(z=1), braid.BraidError, "'z'"), "an undeclared input")
    check(raises(lambda: p.execute(x=set()), TypeError, "set"), "an unbindable value")
    check(raises(lambda: p.execute(x=[[1, 2], [3]]), ValueError, "lengths"), "ragged rows")
    check(raises(lambda: braid.run("if (FALSE) { y = 1 }", outputs=["y"]), braid.BraidError, "'y'"),
          "an output the script did not assign")
    check(p.execute(x=1)["y"] == 2.0, "the script still runs after errors")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "f.dml")
        with open(path, "w") as f:
            f.write("y = $n * 2\nz = y +* 1\n")
        check(raises(lambda: braid.run(path, args={"n": 3}), braid.BraidError, path + ":2:"),
              "an error in a script file names the file")
        with open(path, "w") as f:
            f.write("y = $n * 2\n")
        check(braid.run(path, args={"$n": 3}, outputs=["y"])["y"] == 6, "a file with $-arguments")


def test_numpy():
    rng = np.random.default_rng(7)
    X, w = rng.random((60, 7)), rng.random(7)
    p = braid.prepare("y = X %*% w\nG = t(X) %*% X\ncs = colSums(X)\nm = mean(X)\nmx = max(X)",
                      inputs=["X", "w"], outputs=["y", "G", "cs", "m", "mx"])
    for name, Xi in [("C order", X), ("Fortran order", np.asfortranarray(X)),
                     ("strided", np.repeat(X, 2, axis=1)[:, ::2]), ("float32", X.astype(np.float32))]:
        o = p.execute(X=Xi, w=w)
        tol = 1e-5 if Xi.dtype == np.float32 else 1e-12
        Xd = np.asarray(Xi, dtype=np.float64)
        check(o["y"].shape == (60, 1) and np.allclose(o["y"][:, 0], Xd @ w, rtol=tol), f"{name}: X %*% w")
        check(np.allclose(o["G"], Xd.T @ Xd, rtol=tol), f"{name}: t(X) %*% X")
        check(np.allclose(o["cs"][0], Xd.sum(axis=0), rtol=tol), f"{name}: colSums")
        check(abs(o["m"] - Xd.mean()) < 1e-9 and o["mx"] == Xd.max(), f"{name}: mean, max")
    ints = braid.run("s = sum(A)", inputs={"A": np.arange(12).reshape(3, 4)}, outputs=["s"])["s"]
    check(ints == 66, "an int array")
    bools = braid.run("s = sum(A)", inputs={"A": np.array([[True, False], [True, True]])}, outputs=["s"])["s"]
    check(bools == 3, "a bool array")
    check(braid.run("y = x * 2", inputs={"x": np.float32(1.5)}, outputs=["y"])["y"] == 3.0, "a NumPy scalar")
    check(raises(lambda: p.execute(X=np.zeros((2, 2, 2)), w=w), ValueError, "dimensions"), "a 3-D array")


def test_zero_copy():
    rng = np.random.default_rng(3)
    X = rng.random((40, 5))
    p = braid.prepare("Z = X\nW = X\nW[1, 1] = -1\nY = X * 2", inputs=["X"], outputs=["Z", "W", "Y"])
    o = p.execute(X=X)
    Z, W, Y = o["Z"], o["W"], o["Y"]
    check(Z.__array_interface__["data"][0] == X.__array_interface__["data"][0],
          "an output that is the input is the caller's buffer")
    check(not Z.flags.writeable, "and read-only")
    check(W[0, 0] == -1 and X[0, 0] != -1, "assigning into an input works on a copy")
    check(np.allclose(Y, 2 * X) and Y.flags.writeable and not Y.flags.owndata, "a fresh output: writable, not owned")
    check(p._s.get("Y").address == Y.__array_interface__["data"][0], "the output is braid's storage")
    del p, o, Z
    check(Y.sum() > 0, "outputs outlive their script")
    # resident memory: binding 80 MB without a copy grows RSS by far less
    big = np.ones((10_000_000 // 8, 8))
    q = braid.prepare("s = sum(B)", inputs=["B"], outputs=["s"])
    before = rss()
    s = q.execute(B=big)["s"]
    grown = rss() - before
    check(s == 1e7 and grown < big.nbytes / 4, f"binding {big.nbytes >> 20} MB grew RSS by {grown >> 20} MB")


# test_peak_memory's child: a fresh interpreter (no earlier peak to hide
# behind), measuring the peak resident memory (VmHWM) of each step against
# the resident memory (VmRSS) just before it. The peak can only have grown
# from there, so HWM after - RSS before bounds the step's extra memory from
# above: a copy of the array would show as at least its size.
PEAK_CHILD = r"""
import json, sys
import numpy as np
import braid

def status(key):
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) * 1024 for l in f if l.startswith(key + ":"))

# first, while the peak is this interpreter's own: a Fortran-ordered
# 2^19 x 64 array (256 MiB) fed to products and aggregates that read its
# row-major view (t(X) %*% X, sum(X), X %*% v): no transpose is made
F = np.ones((64, 1 << 19)).T
v = np.ones((64, 1))
r = braid.prepare("G = t(X) %*% X\ns = sum(X)\ny = X %*% v", inputs=["X", "v"], outputs=["G", "s", "y"])
r.execute(X=np.ones((64, 1000)).T, v=v)         # warm: plans, BLAS and thread buffers
before = status("VmRSS")
f = r.execute(X=F, v=v)
fbind = status("VmHWM") - before
fok = bool(f["G"][0, 0] == 1 << 19 and f["s"] == F.size and f["y"][-1, 0] == 64)
del f, r

rows = int(sys.argv[1])
B = np.ones((rows, 1024))                       # rows x 1024 float64, resident
p = braid.prepare("s = sum(B)\nZ = B", inputs=["B"], outputs=["s", "Z"])
q = braid.prepare("Y = B + 1", inputs=["B"], outputs=["Y"])
before = status("VmRSS")
o = p.execute(B=B)
bind = status("VmHWM") - before
same = o["Z"].__array_interface__["data"][0] == B.__array_interface__["data"][0]
before = status("VmRSS")
Y = q.execute(B=B)["Y"]
out = status("VmHWM") - before
print(json.dumps({"s": o["s"], "same": same, "bind": bind, "out": out, "y": [Y[0, 0], Y[-1, -1]],
                  "owndata": bool(Y.flags.owndata), "fbind": fbind, "fok": fok, "fbytes": F.nbytes}))
"""


def test_peak_memory():
    """Binding a 1 GiB array and returning it (Z = B) copies nothing: the
    peak grows by far less than the array; a new 1 GiB output (Y = B + 1)
    grows it by one array, not two (neither the input nor the output is
    copied on the way). A Fortran-ordered 256 MiB array read by products
    and aggregates is neither copied nor transposed."""
    import json
    import subprocess
    rows = 1 << 17                                 # 2^17 x 1024 doubles: 1 GiB
    nbytes = rows * 1024 * 8
    r = subprocess.run([sys.executable, "-c", PEAK_CHILD, str(rows)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    check(r.returncode == 0, f"the peak-memory child failed: {r.stderr[-2000:]}")
    if r.returncode:
        return
    m = json.loads(r.stdout.strip().splitlines()[-1])
    check(m["s"] == rows * 1024 and m["same"], f"sum of the 1 GiB view and Z = B its buffer: {m}")
    check(m["bind"] < nbytes / 4, f"binding and returning 1 GiB grew the peak by {m['bind'] >> 20} MiB")
    check(m["y"] == [2.0, 2.0] and not m["owndata"], f"Y = B + 1: {m}")
    check(nbytes <= m["out"] + (64 << 20) and m["out"] < nbytes * 5 / 4,
          f"a 1 GiB output grew the peak by {m['out'] >> 20} MiB (one array: {nbytes >> 20} MiB)")
    check(m["fok"], f"t(X) %*% X, sum(X), X %*% v of a Fortran-ordered array: {m}")
    check(m["fbind"] < m["fbytes"] / 4, f"binding a Fortran-ordered {m['fbytes'] >> 20} MiB array and reading it "
          f"through t(X) %*% X, sum(X), X %*% v grew the peak by {m['fbind'] >> 20} MiB (a transpose: all of it)")


def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_sparse():
    rng = np.random.default_rng(5)
    A = sp.random(80, 30, density=0.05, format="csr", random_state=11)
    y = rng.random(80)
    p = braid.prepare("g = t(A) %*% y\nS = A\nT = A * 3\nn = sum(A != 0)", inputs=["A", "y"],
                      outputs=["g", "S", "T", "n"], sparse=True)
    for name, Ai in [("CSR", A), ("CSC", A.tocsc()), ("COO", A.tocoo()), ("int CSR", (A * 10).astype(np.int64))]:
        o = p.execute(A=Ai, y=y)
        Ad = Ai.toarray().astype(np.float64)
        g = o["g"].toarray() if sp.issparse(o["g"]) else o["g"]
        check(np.allclose(g[:, 0], Ad.T @ y), f"{name}: t(A) %*% y")
        check(sp.issparse(o["T"]) and np.allclose(o["T"].toarray(), 3 * Ad), f"{name}: a sparse output")
        check(o["n"] == Ai.count_nonzero(), f"{name}: non-zeros (stored zeros dropped)")
    o = p.execute(A=A, y=y)
    check(np.shares_memory(o["S"].data, A.data), "a CSR input returned as itself shares its values")
    C = A.tocsc()
    C.sort_indices()
    t = braid.run("B = t(A)", inputs={"A": C}, outputs=["B"], sparse=True)["B"]
    check(sp.issparse(t) and np.shares_memory(t.data, C.data) and np.array_equal(t.toarray(), A.toarray().T),
          "t(A) of a CSC input is its arrays as CSR (no copy)")
    z32 = np.zeros(4, dtype=np.int32)
    check(raises(lambda: p._s.bind_csr("A", 80, 30, z32, z32, np.zeros(4), True), ValueError, "cols+1"),
          "CSC arrays of the wrong extent")
    dense = braid.run("D = A + 1", inputs={"A": A}, outputs=["D"])["D"]
    check(isinstance(dense, np.ndarray) and np.allclose(dense, A.toarray() + 1), "dense outputs by default")
    unsorted = sp.csr_matrix((np.array([2.0, 1.0, 0.0]), np.array([2, 0, 1], dtype=np.int32),
                              np.array([0, 3, 3], dtype=np.int32)), shape=(2, 3))
    got = braid.run("D = A + 0", inputs={"A": unsorted}, outputs=["D"])["D"]
    check(np.array_equal(got, unsorted.toarray()), "an unsorted CSR with a stored zero")


def test_fortran():
    """A Fortran-ordered array is bound as the row-major view of its
    transpose, read by the script as t(view): for a sweep of scripts and
    shapes the results equal the C-ordered run's (integer cells, so
    exactly), one prepared script switching between the two; t(X) is the
    caller's buffer itself; the lazy API binds it the same way."""
    rng = np.random.default_rng(13)
    scripts = ["R = t(X) %*% X", "R = X %*% t(X)", "R = X %*% v", "R = t(X) %*% w", "R = as.matrix(sum(X))",
               "R = colSums(X) + t(rowSums(t(X)))", "R = rowMaxs(X) - rowMins(X)", "R = X * 2 - abs(X)",
               "R = X + t(Y)", "R = X[1:nrow(X), 1] * 3 + X[, ncol(X)]", "R = X\nfor (i in 1:2) R = R + X"]

    def ints(*shape):
        return rng.integers(-4, 5, size=shape).astype(np.float64)

    shapes = [(1, 4), (5, 1), (9, 6), (40, 33)]
    for sc in scripts:
        p = braid.prepare(sc, inputs=["X", "v", "w", "Y"], outputs=["R"])
        for m, n in shapes:
            A, ins = ints(m, n), {"v": ints(n, 1), "w": ints(m, 1), "Y": ints(n, m)}
            want = p.execute(X=A, **ins)["R"]
            got = p.execute(X=np.asfortranarray(A), **ins)["R"]
            check(np.array_equal(want, got), f"Fortran-ordered {m}x{n}: {sc!r} differs from C order")
    A = ints(30, 8)
    F = np.asfortranarray(A)
    R = braid.run("R = t(X)", inputs={"X": F}, outputs=["R"])["R"]
    check(R.__array_interface__["data"][0] == F.__array_interface__["data"][0] and not R.flags.writeable,
          "t(X) of a Fortran-ordered X is the caller's buffer, read-only")
    X = braid.Matrix(F)
    check(np.array_equal((X.T @ X + X.sum()).compute(), A.T @ A + A.sum()), "the lazy API on a Fortran array")


def test_lm():
    rng = np.random.default_rng(9)
    X = rng.random((200, 6))
    y = X @ np.arange(1.0, 7.0) + 0.01 * rng.standard_normal(200)
    beta = braid.run("B = lm(X=X, y=y, icpt=0, reg=1e-12, verbose=FALSE)", inputs={"X": X, "y": y},
                     outputs=["B"])["B"][:, 0]
    want = np.linalg.lstsq(X, y, rcond=None)[0]
    check(np.allclose(beta, want, rtol=1e-6), f"lm against least squares {beta} {want}")


def test_compressed_linalg():
    """prepare(compressed_linalg=...) reaches the planner and the run time:
    under "true" X is compressed at the loop's entry, so the outputs X and
    Z (one block) come back as two decompressed copies; under false they
    share one buffer. Results equal; a bad mode is a BraidError."""
    src = ("X = floor(rand(rows=5000, cols=4, min=0, max=4.99, seed=3))\n"
           "s = 0\nfor (i in 1:5) {\n  s = s + sum(X^2)\n}\nZ = X\n")
    addr = lambda a: a.__array_interface__["data"][0]
    res = {}
    for mode in ("false", "true", True, False, None):
        r = braid.prepare(src, outputs=["s", "Z", "X"], compressed_linalg=mode).execute()
        res[str(mode)] = r
        apart = mode in ("true", True)
        check((addr(r["Z"]) != addr(r["X"])) == apart and np.array_equal(r["Z"], r["X"]),
              f"compressed_linalg={mode!r}: Z and X {'apart' if apart else 'one buffer'}")
    check(all(r["s"] == res["None"]["s"] for r in res.values()), "compressed_linalg: equal results")
    check(raises(lambda: braid.prepare(src, outputs=["s"], compressed_linalg="maybe"), braid.BraidError, "'maybe'"),
          "compressed_linalg='maybe' is an error")


def test_threads():
    rng = np.random.default_rng(1)
    Xs = [rng.random((300, 20)) for _ in range(2)]
    results = [[], []]

    def work(k):
        p = braid.prepare("G = t(X) %*% X\ns = sum(G)", inputs=["X"], outputs=["G", "s"])
        for _ in range(10):
            results[k].append(p.execute(X=Xs[k])["G"])

    ts = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    check(all(len(r) == 10 and all(np.allclose(G, X.T @ X) for G in r) for r, X in zip(results, Xs)),
          "two prepared scripts in two threads")
    # the GIL is released: this thread runs Python while execute() runs
    # (with the GIL held it never could, however long the run; a loaded
    # machine may leave this thread no time slice during a short run, so
    # a run it did not see is repeated four times as long, 3 times at most)
    long = braid.prepare("s = 0\nfor (i in 1:n) { s = s + i %% 7 }", inputs=["n"], outputs=["s"])
    seen, n = False, 400000
    for _ in range(4):
        out = {}
        t = threading.Thread(target=lambda: out.update(long.execute(n=n)))
        t.start()
        while t.is_alive():
            seen = seen or long.executing
        t.join()
        check(out.get("s") == sum(i % 7 for i in range(1, n + 1)), "the long script's result (n %d)" % n)
        if seen:
            break
        n *= 4
    check(seen, "Python ran in another thread during execute() (the GIL was released)")


def test_loops():
    """Loop statistics (braid_loops): per loop statement, by position,
    the entries and iterations of a run, nested and parfor loops, in a
    function too; counts that printing nothing leaves unchanged."""
    script = ("f = function(Double k) return (Double s) {\n"
              "  s = 0\n"
              "  i = 0\n"
              "  while (i < k) {\n"
              "    i = i + 1\n"
              "    for (j in 1:i) { s = s + j }\n"
              "  }\n"
              "}\n"
              "a = f(3)\n"
              "b = f(5)\n"
              "R = matrix(0, rows=4, cols=1)\n"
              "parfor (p in 1:4) { R[p, 1] = p }\n"
              "if (verbose) { print(\"a \" + a + \" b \" + b) }\n"
              "t = a + b + sum(R)")
    for verbose in (True, False):
        loops, out = [], io.StringIO()
        res = braid.run(script, inputs={"verbose": verbose}, outputs=["t"], loops=loops, stdout=out)
        check(res["t"] == 10 + 35 + 10, f"the script's value {res}")
        by = {l["line"]: l for l in loops}
        check(sorted(by) == [4, 6, 12] and all(l["file"] == "<script>" for l in loops), f"the three loops: {loops}")
        w, f, pf = by.get(4, {}), by.get(6, {}), by.get(12, {})
        check((w.get("entries"), w.get("iterations"), w.get("max_iterations")) == (2, 8, 5),
              f"while: entered twice, 3 + 5 iterations, at most 5: {w}")
        check((f.get("entries"), f.get("iterations"), f.get("max_iterations")) == (8, 1 + 2 + 3 + 15, 5),
              f"the nested for: once per while iteration, i iterations each: {f}")
        check((pf.get("entries"), pf.get("iterations"), pf.get("max_iterations")) == (1, 4, 4), f"parfor: {pf}")
        check(("a 10 b 35" in out.getvalue()) == verbose, f"printed {out.getvalue()!r}")
    p = braid.prepare("i = 0\nwhile (i < n) { i = i + 1 }", inputs=["n"], outputs=["i"], loops=[])
    p.execute(n=7)
    p.execute(n=2)
    check([l["iterations"] for l in p.loops] == [7, 2], f"a prepared script: each run's own counts {p.loops}")
    q = braid.prepare("i = 0\nwhile (i < n) { i = i + 1 }", inputs=["n"], outputs=["i"])
    q.execute(n=3)
    check(q._s.loops() == [], "not counted unless asked")


def skipped_tests():
    """{test name: why it cannot run here} (conftest.py, main)."""
    skip = {}
    if np is None:
        skip.update(dict.fromkeys(["test_numpy", "test_zero_copy", "test_peak_memory", "test_fortran", "test_lm",
                                   "test_threads", "test_sparse", "test_compressed_linalg"], "NumPy missing; tools/deps.sh installs it"))
    if sp is None:
        skip["test_sparse"] = "SciPy missing; tools/deps.sh installs it"
    return skip


def main():
    all_tests = [test_plain, test_frames, test_lists, test_errors, test_loops, test_numpy, test_zero_copy,
                 test_peak_memory, test_fortran, test_lm, test_threads, test_sparse, test_compressed_linalg]
    skipped = [t.__name__ for t in all_tests if t.__name__ in skipped_tests()]
    tests = [t for t in all_tests if t.__name__ not in skipped]
    for t in tests:
        try:
            t()
        except Exception:
            check(False, f"{t.__name__} raised:\n{traceback.format_exc()}")
    if skipped:
        print("test_python: skipped (NumPy/SciPy missing; tools/deps.sh installs them):", ", ".join(skipped))
    return T.finish()


if __name__ == "__main__":
    sys.exit(main())
