#!/usr/bin/env python3
"""SystemDS's builtin tests against their R twins, with braid's library.

  tests/parity/rtwins.py gen MIRROR [FILTER]   write the references
  tests/parity/rtwins.py run BRAID [FILTER]    check braid against them
  tests/parity/rtwins.py triage BRAID GITMIRROR WORKDIR [FILTER]

SystemDS tests a builtin by running a small DML script that calls it and
an R script (src/test/scripts/functions/builtin/<name>.R) that computes the
same thing with R, on inputs its Java test generates, and compares the
two within the Java test's tolerance. Each case of rtwins_cases.py names
such an R script and gives the Java test's arguments and data shapes (some
shapes are smaller, to keep the test cheap), a braid DML script of our own
that calls braid's builtin the way SystemDS's DML twin does, and the
outputs to compare. apptwins_cases.py does the same for the R twins of
SystemDS's application tests (src/test/scripts/applications), with braid's
library in place of SystemDS's standalone application scripts.

gen runs each R script from a SystemDS checkout (MIRROR: a directory that
holds src/test/scripts/functions/builtin; the scripts are never copied
here; an application twin's r is relative to src/test/scripts) on the
seeded inputs, and writes R's results to
rtwins/expected/<case>/<output>.csv (17 significant digits), which are
committed. A case with a "peer" (an R twin whose CRAN package Debian
lacks) gets its references from rtwins_peers.py instead: the same quantity
computed by a library Debian packages (scikit-learn, SciPy, pandas,
NumPy). run generates the same inputs, runs braid's script and compares
with the references within the case's tolerance (absolute, as SystemDS's
TestUtils.compareMatrices; "sorted" compares the sorted non-zero values, as
the set-operation tests do; "relative" divides each difference by the
larger magnitude; "partition" compares cluster ids up to renaming, noise
0 kept; "share" the share of braid's non-zero cells off by 1e-4 or
more). The inputs come from Python's Mersenne Twister
with fixed seeds (stable across Python versions), written with 17
significant digits, so R and braid read the same numbers.

rtwins/known.txt lists what still differs ("<case>/<output>: reason"); such
an output passes only while it still differs. run then runs appsys.py's
checks (SystemDS's application scripts read from a SystemDS mirror, with
braid's interpreter; skipped when there is no mirror). It prints
PASS/FAIL/KNOWN lines, each with the largest absolute difference, and "N
passed, M failed".

triage explains each difference: it also runs the case with SystemDS's
own builtin scripts in place of braid's library (as gen.py does: exported
from GITMIRROR, a git clone of apache/systemds, into WORKDIR) and prints
BRAID-DIFFERS (SystemDS's script gives R's numbers, braid's library does
not), R-TWIN-DIFFERS (SystemDS's script gives braid's numbers: the R twin
computes something else, so SystemDS's own test fails on these inputs or
passes only on its Java test's data) or ALL-DIFFER.
"""

import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rtwins_cases  # noqa: E402
import apptwins_cases  # noqa: E402
import appsys  # noqa: E402
from run import scratch_dir  # noqa: E402

EXPECTED = os.path.join(HERE, "rtwins", "expected")
PEERS = os.path.join(HERE, "rtwins_peers.py")
KNOWN = os.path.join(HERE, "rtwins", "known.txt")


def fmt(v):
    return "%.17g" % v


def write_inputs(case, d):
    """Writes every input of case as <name>.mtx (Matrix Market, for R) and
    <name>.csv with its .mtd (for braid); returns {name: matrix}."""
    data = {}
    for name, make in case["inputs"].items():
        m = make()
        data[name] = m
        rows, cols = len(m), len(m[0]) if m else 0
        cells = [(i + 1, j + 1, v) for i, r in enumerate(m)
                 for j, v in enumerate(r) if v != 0]
        frame = name in case.get("nvargs", {}).get("frames", ())
        with open(os.path.join(d, name + ".mtx"), "w") as f:
            f.write("%%MatrixMarket matrix coordinate real general\n")
            f.write("%d %d %d\n" % (rows, cols, len(cells)))
            for i, j, v in cells:
                f.write("%d %d %s\n" % (i, j, fmt(v)))
        with open(os.path.join(d, name + ".csv"), "w") as f:
            for r in m:  # NaN as an empty cell (a missing value)
                f.write(",".join("" if v != v else fmt(v) for v in r) + "\n")
        with open(os.path.join(d, name + ".csv.mtd"), "w") as f:
            f.write('{"data_type": "%s", "value_type": "double", '
                    '"rows": %d, "cols": %d, "format": "csv", '
                    '"header": false, "sep": ","}\n'
                    % ("frame" if frame else "matrix", rows, cols))
    return data


def read_mm(path):
    """A Matrix Market file (coordinate or array; real, integer or
    pattern; general or symmetric) as a dense list of rows; a file of plain
    numbers (R's write()) as one column."""
    with open(path) as f:
        header = f.readline().lower().split()
        if not header or header[0] != "%%matrixmarket":
            # R's write() of numbers (the descriptivestats twins): a column
            f.seek(0)
            return [[float(t)] for t in f.read().split()]
        line = f.readline()
        while line.startswith("%"):
            line = f.readline()
        dims = [int(x) for x in line.split()]
        rows, cols = dims[0], dims[1]
        m = [[0.0] * cols for _ in range(rows)]
        toks = f.read().split()
    if header[2] == "array":
        for k, t in enumerate(toks):
            m[k % rows][k // rows] = float(t)
        return m
    pattern = header[3] == "pattern"
    step = 2 if pattern else 3
    for k in range(0, len(toks), step):
        i, j = int(toks[k]) - 1, int(toks[k + 1]) - 1
        v = 1.0 if pattern else float(toks[k + 2])
        m[i][j] = v
        if header[4] == "symmetric":
            m[j][i] = v
    return m


def read_csv(path):
    with open(path) as f:
        return [[float(x) for x in line.split(",")]
                for line in f if line.strip()]


def write_csv(path, m):
    with open(path, "w") as f:
        for r in m:
            f.write(",".join(fmt(v) for v in r) + "\n")


def selected(filt):
    """The cases whose name holds filt, those that stop (a case's "stops")
    last: a failing case ends its batch, and the cases after it need a new
    braid run (and their inputs written again)."""
    cases = [c for c in rtwins_cases.CASES + apptwins_cases.CASES
             if not filt or filt in c["name"]]
    return sorted(cases, key=lambda c: bool(c.get("stops")))


def r_script(mirror, case):
    """The R script of case in the checkout mirror: a builtin test's under
    src/test/scripts/functions/builtin, an application test's (r holds a
    "/") relative to src/test/scripts."""
    base = os.path.join(mirror, "src", "test", "scripts")
    if "/" not in case["r"]:
        base = os.path.join(base, "functions", "builtin")
    return os.path.join(base, case["r"] + ".R")


def gen(mirror, filt):
    failed = 0
    for case in selected(filt) + [c for c in apptwins_cases.SYS_ONLY
                                  if not filt or filt in c["name"]]:
        d = tempfile.mkdtemp(prefix="rtwins-")
        indir, expdir = d + "/in/", d + "/exp/"
        os.makedirs(indir)
        os.makedirs(expdir)
        write_inputs(case, indir)
        args = [a.format(IN=indir, EXP=expdir) for a in case["rargs"]]
        if case.get("peer"):  # a library Debian has in place of R's package
            cmd = [os.environ.get("BRAID_REF_PYTHON", "/usr/bin/python3"),
                   PEERS, case["peer"]] + args
        else:
            cmd = ["Rscript", r_script(mirror, case)] + args
        p = subprocess.run(cmd, capture_output=True, text=True)
        outdir = os.path.join(EXPECTED, case["name"])
        os.makedirs(outdir, exist_ok=True)
        for out in case["outputs"]:
            src = os.path.join(expdir, out)
            if p.returncode != 0 or not os.path.exists(src):
                print("R-FAILED %s/%s: %s" % (case["name"], out,
                                             p.stderr.strip()[-400:]))
                failed += 1
                continue
            write_csv(os.path.join(outdir, out + ".csv"), read_mm(src))
            print("WROTE %s/%s" % (case["name"], out))
        subprocess.run(["rm", "-rf", d])
    return 1 if failed else 0


R_WRITEMM_INF = 1e308
INF = float("inf")


def max_diff(want, got, mode):
    """The largest absolute difference, or a reason string when the shapes
    differ."""
    if mode == "partition":  # cluster ids up to renaming, 0 (noise) kept
        a = [v for r in want for v in r]
        b = [v for r in got for v in r]
        if len(a) != len(b):
            return "%d labels, R has %d" % (len(b), len(a))
        fwd, back = {0.0: 0.0}, {0.0: 0.0}
        for x, y in zip(a, b):
            if fwd.setdefault(x, y) != y or back.setdefault(y, x) != x:
                return "another partition (R's cluster %g is not braid's %g)" \
                    % (x, y)
        return 0.0
    if mode == "share":
        # BuiltinMiceTest's check: over braid's non-zero cells (SystemDS's
        # test reads its output as a sparse map), the share off by 1e-4 or
        # more; braid's NaN counts as a match
        a = [v for r in want for v in r]
        b = [v for r in got for v in r]
        if len(a) != len(b):
            return "%d cells, R has %d" % (len(b), len(a))
        pairs = [(x, y) for x, y in zip(a, b) if y != 0]
        off = sum(1 for x, y in pairs if y == y and not abs(x - y) < 1e-4)
        return off / max(1, len(pairs))
    if mode == "sorted":
        a = sorted(v for r in want for v in r if v != 0)
        b = sorted(v for r in got for v in r if v != 0)
        if len(a) != len(b):
            return "%d values, R has %d" % (len(b), len(a))
        pairs = zip(a, b)
    else:
        if len(want) != len(got) or any(len(x) != len(y)
                                        for x, y in zip(want, got)):
            return "shape %dx%d, R has %dx%d" % (
                len(got), len(got[0]) if got else 0,
                len(want), len(want[0]) if want else 0)
        pairs = [(x, y) for rw, rg in zip(want, got)
                 for x, y in zip(rw, rg)]
    worst = 0.0
    for x, y in pairs:
        # R's writeMM writes Inf, NaN and NA as 1e308 and -Inf as -1e308, so
        # such a cell of R's file stands for any of them
        if (x == R_WRITEMM_INF and (y == INF or y != y)) or (x == -R_WRITEMM_INF and y == -INF):
            continue
        if x != y:  # equal infinities
            d = abs(x - y)
            if mode == "relative":
                d /= max(abs(x), abs(y))
            if d != d:
                return "NaN where R has %r (or the reverse)" % x
            worst = max(worst, d)
    return worst


def read_known(path=KNOWN):
    """{"<case>/<output>": reason} of a known-differences file."""
    known = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#"):
                    key, _, why = line.partition(":")
                    known[key.strip()] = why.strip()
    return known


def bind(case, d):
    """case's script with each $-argument (an input or an output, named
    like it) replaced by its path in d, quoted: names may hold a dot
    (learnt.model), which -nvargs cannot bind. $out_<o> names output o
    too, and only it where an input has the same name (GNMF's w and h)."""
    body = case["dml"]
    names = list(case["inputs"]) + ["out_" + o for o in case["outputs"]]
    for n in sorted(names, key=len, reverse=True):
        path = '"%s/%s.csv"' % (d, n)
        if n.startswith("out_"):
            body = body.replace("$" + n, path)
            if n[4:] in case["inputs"]:
                continue
        body = body.replace("$" + (n[4:] if n.startswith("out_") else n),
                            path)
    return body


def run_braid(braid, case, env=None):
    """Runs braid's script of case (with env added to the environment);
    {output: matrix, or the reason there is none}."""
    d = tempfile.mkdtemp(prefix="rtwins-", dir=scratch_dir())
    write_inputs(case, d)
    script = os.path.join(d, "case.dml")
    with open(script, "w") as f:
        f.write(bind(case, d))
    p = subprocess.run([braid, "-f", script],
                       capture_output=True, text=True,
                       env=dict(os.environ, **(env or {})))
    res = {}
    for out in case["outputs"]:
        path = os.path.join(d, "out_" + out + ".csv")
        if p.returncode != 0 or not os.path.exists(path):
            res[out] = "braid failed: " + (p.stderr.strip()[-300:] or
                                           "no output")
        else:
            res[out] = read_csv(path)
    subprocess.run(["rm", "-rf", d])
    return res


def compare(case, out, got):
    """(within tolerance, the largest difference or why there is none,
    the tolerance) of braid's output got against R's reference."""
    tol = case["outputs"][out].get("tol", case.get("tol", 1e-10))
    mode = case["outputs"][out].get("mode", "cells")
    ref = os.path.join(EXPECTED, case["name"], out + ".csv")
    if not os.path.exists(ref):
        res = "no reference (run gen)"
    elif isinstance(got, str):
        res = got
    else:
        res = max_diff(read_csv(ref), got, mode)
    ok = not isinstance(res, str) and res <= tol
    detail = res if isinstance(res, str) else \
        "max %s diff %.3g (tol %g)" % (
            "relative" if mode == "relative" else "abs", res, tol)
    return ok, detail


CASE_MARK = "@@rtwins case %d@@"


def batch_once(braid, cases):
    """Runs cases in one braid process: each case's script is the body of
    its own function (its $-arguments replaced by paths), called in order
    after a print of CASE_MARK. Returns (exit status, stderr, {case index:
    outputs} of the cases that finished, the index of the case running
    when braid failed or None, {case index: compile error at its lines})."""
    d = tempfile.mkdtemp(prefix="rtwins-", dir=scratch_dir())
    parts, calls, lines = [], [], {}
    line = 1
    for k, case in enumerate(cases):
        cd = os.path.join(d, str(k))
        os.makedirs(cd)
        write_inputs(case, cd)
        part = "case_%d = function() return (Double r) {\n%sr = 0\n}\n" % (k, bind(case, cd))
        n = part.count("\n")
        for j in range(line, line + n):
            lines[j] = k
        line += n
        parts.append(part)
        calls.append('print("%s")\nz = case_%d()\n' % (CASE_MARK % k, k))
    script = os.path.join(d, "all.dml")
    with open(script, "w") as f:
        f.write("".join(parts) + "".join(calls))
    p = subprocess.run([braid, "-f", script], capture_output=True, text=True)
    running = None
    for ln in p.stdout.splitlines():
        for k in range(len(cases)):
            if ln == CASE_MARK % k:
                running = k
    done = len(cases) if p.returncode == 0 else (running or 0)
    res = {}
    for k in range(done):
        res[k] = {o: read_csv(os.path.join(d, str(k), "out_" + o + ".csv"))
                  if os.path.exists(os.path.join(d, str(k), "out_" + o + ".csv"))
                  else "braid wrote no output" for o in cases[k]["outputs"]}
    errors = {}
    for m in re.finditer(r"(?m)^%s:(\d+):\d+: error: (.*)$" % re.escape(script), p.stderr):
        k = lines.get(int(m.group(1)))
        if k is not None:
            errors.setdefault(k, m.group(2))
    subprocess.run(["rm", "-rf", d])
    return p.returncode, p.stderr, res, running, errors


def run_batch(braid, cases):
    """Runs all cases in as few braid processes as their failures allow
    (one start instead of one per case). A case that fails is that case's
    failure and the others still run batched: a run-time error ends the
    case that was running (the cases before it have finished; those after
    it run again in a new batch), compile errors at a case's lines fail
    that case (the others run again without it), and a compile error
    elsewhere (a library file) splits the cases in halves until the
    failing one runs alone. Returns ({case name: outputs as run_braid
    returns them}, the number of braid runs)."""
    res, runs, pending = {}, 0, list(cases)
    while pending:
        status, err, done, running, errors = batch_once(braid, pending)
        runs += 1
        for k, outs in done.items():
            res[pending[k]["name"]] = outs
        why = "braid failed: " + (err.strip()[-300:] or "no output")
        if status == 0:
            return res, runs
        if running is not None:
            res[pending[running]["name"]] = {o: why for o in pending[running]["outputs"]}
            pending = pending[running + 1:]
        elif errors:
            for k in errors:
                res[pending[k]["name"]] = {o: why for o in pending[k]["outputs"]}
            pending = [c for k, c in enumerate(pending) if k not in errors]
        elif len(pending) == 1:
            res[pending[0]["name"]] = {o: why for o in pending[0]["outputs"]}
            pending = []
        else:
            half = len(pending) // 2
            sub, n = run_batch(braid, pending[:half])
            res.update(sub)
            runs += n
            pending = pending[half:]
    return res, runs


# The batch's isolation, checked on each run: a case that stops at run
# time inside a builtin (b: naiveBayes on negative counts, as SystemDS's
# script stops too) and one that does not compile (d) fail alone; the
# others finish in three runs (d removed; a done and b failed; c and e).
ISOLATION_CASES = [
    {"name": "iso_a", "inputs": {}, "outputs": {"A": {}}, "dml": "write(matrix(1, rows=1, cols=1), $A, format=\"csv\")\n"},
    {"name": "iso_b", "inputs": {}, "outputs": {"B": {}},
     "dml": "[p, c] = naiveBayes(D=matrix(-1, rows=2, cols=2), C=matrix(1, rows=2, cols=1))\nwrite(p, $B, format=\"csv\")\n"},
    {"name": "iso_c", "inputs": {}, "outputs": {"C": {}}, "dml": "write(matrix(3, rows=1, cols=1), $C, format=\"csv\")\n"},
    {"name": "iso_d", "inputs": {}, "outputs": {"D": {}}, "dml": "x = no_such_function_iso(1)\nwrite(matrix(x, rows=1, cols=1), $D, format=\"csv\")\n"},
    {"name": "iso_e", "inputs": {}, "outputs": {"E": {}}, "dml": "write(matrix(5, rows=1, cols=1), $E, format=\"csv\")\n"},
]


def check_isolation(braid):
    """None when run_batch isolates ISOLATION_CASES' failures, else why not."""
    res, runs = run_batch(braid, ISOLATION_CASES)
    want = {"iso_a": [[1.0]], "iso_c": [[3.0]], "iso_e": [[5.0]]}
    for name, m in want.items():
        got = list(res.get(name, {}).values())
        if got != [m]:
            return "%s: %s, want %s" % (name, got, m)
    for name, out, text in (("iso_b", "B", "non-negative"), ("iso_d", "D", "no_such_function_iso")):
        got = res.get(name, {}).get(out, "")
        if not isinstance(got, str) or text not in got:
            return "%s: %s" % (name, got)
    if runs != 3:
        return "%d braid runs, want 3" % runs
    return None


def run(braid, filt):
    known = read_known()
    passed = failed = 0
    why = check_isolation(braid)
    print("%s batch isolation%s" % ("FAIL" if why else "PASS", ": " + why if why else ""))
    passed, failed = (passed, failed + 1) if why else (passed + 1, failed)
    cases = selected(filt)
    batch, runs = run_batch(braid, cases)
    if runs > 1:
        print("(%d braid runs: failing cases were run apart)" % runs)
    for case in cases:
        outs = batch[case["name"]]
        for out in case["outputs"]:
            key = "%s/%s" % (case["name"], out)
            ok, detail = compare(case, out, outs[out])
            if key in known:
                status = "FAIL" if ok else "KNOWN"
                if ok:
                    detail = "matches now; remove it from known.txt"
                else:
                    detail += " [" + known[key] + "]"
                ok = not ok
            else:
                status = "PASS" if ok else "FAIL"
            print("%s %s: %s" % (status, key, detail))
            if ok:
                passed += 1
            else:
                failed += 1
    # SystemDS's application scripts from its mirror (skipped without one)
    p, f = appsys.run_all(braid, filt)
    print("%d passed, %d failed" % (passed + p, failed + f))
    return 1 if failed + f else 0


def triage(braid, mirror, work, filt):
    """For each output where braid's library differs from R: runs the case
    with SystemDS's own builtin scripts (exported from the git mirror as
    gen.py does) and says whether SystemDS's algorithm gives R's numbers
    (then braid's library is the one that differs) or braid's (then the R
    twin computes something else than SystemDS, and SystemDS's own test
    would fail or passes only on its Java test's data)."""
    import gen as pgen
    home, _ = pgen.export_scripts(mirror, work)
    pgen.apply_patches(home)
    for case in selected(filt):
        ours = run_braid(braid, case)
        theirs = None
        for out in case["outputs"]:
            ok, detail = compare(case, out, ours[out])
            if ok:
                print("SAME %s/%s: %s" % (case["name"], out, detail))
                continue
            if theirs is None:
                theirs = run_braid(braid, case, pgen.REF_ENV(home))
            sys_r, d_r = compare(case, out, theirs[out])
            if isinstance(theirs[out], str) or isinstance(ours[out], str):
                sys_b = False
            else:
                d = max_diff(theirs[out], ours[out],
                             case["outputs"][out].get("mode", "cells"))
                sys_b = not isinstance(d, str) and d <= 1e-8 * max(
                    1.0, max(abs(v) for r in ours[out] for v in r))
            kind = ("BRAID-DIFFERS" if sys_r else
                    "R-TWIN-DIFFERS" if sys_b else "ALL-DIFFER")
            print("%s %s/%s: braid vs R %s; SystemDS's script vs R %s" % (
                kind, case["name"], out, detail, d_r))
    return 0


def main(argv):
    if len(argv) >= 5 and argv[1] == "triage":
        return triage(argv[2], argv[3], argv[4],
                      argv[5] if len(argv) > 5 else "")
    if len(argv) < 3 or argv[1] not in ("gen", "run"):
        sys.stderr.write(__doc__)
        return 2
    filt = argv[3] if len(argv) > 3 else ""
    return gen(argv[2], filt) if argv[1] == "gen" else run(argv[2], filt)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
