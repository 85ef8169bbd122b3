#!/usr/bin/env python3
"""SystemDS's own application DML scripts, run by braid's interpreter,
against the R twins' committed numbers.

  tests/parity/appdml.py BRAID MIRROR [FILTER]

Each case of apptwins_cases.py with a "sys" field names the DML script of
its SystemDS application test (relative to src/test/scripts/applications)
and the Java test's -args ({IN}x: input x, {OUT}y: output y, {OUT}: the
output folder, other text as is; a third element, when there is one,
holds -nvargs the same way; a fourth {output: column} compares only
that column, as GLMTest does). MIRROR is a SystemDS checkout (a directory
holding src/test/scripts) or a git mirror of one (its HEAD is read with
git show); the script's folder is copied into a temporary directory, so
SystemDS's scripts never enter this repository and CI never runs this
driver (it needs the mirror). The inputs are those rtwins.py run makes
(same seeds), written as SystemDS's test harness writes them: text (i j v
lines, 1-based, zeros left out) with a .mtd. Each output is read as
braid wrote it (a scalar, text with its .mtd, or csv) and compared with
rtwins/expected/<case>/<output>.csv at the case's tolerance, as rtwins.py
run compares braid's library.

rtwins/appdml_known.txt lists what still differs ("<case>/<output>:
reason"); such an output passes only while it still differs. Prints
PASS/FAIL/KNOWN lines and "N passed, M failed"; the exit status is 1
when any failed.
"""

import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rtwins  # noqa: E402
import apptwins_cases  # noqa: E402
from run import scratch_dir  # noqa: E402

KNOWN = os.path.join(HERE, "rtwins", "appdml_known.txt")
APPS = "src/test/scripts/applications"


def export_dir(mirror, rel, dest):
    """Copies folder rel of APPS from mirror (a checkout or a git mirror)
    into dest; returns dest."""
    src = os.path.join(mirror, APPS, rel)
    if os.path.isdir(src):
        subprocess.run(["cp", "-r", src + "/.", dest], check=True)
        return dest
    ls = subprocess.run(["git", "-C", mirror, "ls-tree", "-r", "--name-only",
                         "HEAD", APPS + "/" + rel + "/"],
                        capture_output=True, text=True, check=True)
    for path in ls.stdout.split():
        out = os.path.join(dest, os.path.relpath(path, APPS + "/" + rel))
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "wb") as f:
            f.write(subprocess.run(["git", "-C", mirror, "show",
                                    "HEAD:" + path], capture_output=True,
                                   check=True).stdout)
    return dest


def write_text(path, m):
    """m as SystemDS's text format (i j v, non-zeros) with its .mtd."""
    rows, cols = len(m), len(m[0]) if m else 0
    nnz = 0
    with open(path, "w") as f:
        for i, r in enumerate(m):
            for j, v in enumerate(r):
                if v != 0:
                    f.write("%d %d %s\n" % (i + 1, j + 1, rtwins.fmt(v)))
                    nnz += 1
    with open(path + ".mtd", "w") as f:
        f.write('{"data_type": "matrix", "value_type": "double", '
                '"rows": %d, "cols": %d, "nnz": %d, "format": "text"}\n'
                % (rows, cols, nnz))


def read_output(path, shape):
    """braid's output at path: a scalar, text (i j v) sized by its .mtd
    (else by shape, R's) or csv; a matrix, or why there is none."""
    if os.path.isdir(path):
        return "a folder, not a file"
    if not os.path.exists(path):
        return "braid wrote no output"
    with open(path) as f:
        lines = [ln.split() for ln in f.read().replace(",", " ").splitlines()
                 if ln.strip()]
    rows, cols = shape
    mtd = path + ".mtd"
    fmt = None
    if os.path.exists(mtd):
        import json
        with open(mtd) as f:
            meta = json.load(f)
        rows, cols = meta.get("rows", rows), meta.get("cols", cols)
        fmt = meta.get("format")
        if meta.get("data_type") == "scalar":
            fmt = "scalar"
    if fmt in (None, "scalar") and len(lines) == 1 and len(lines[0]) == 1:
        v = lines[0][0]
        return [[1.0 if v == "TRUE" else 0.0 if v == "FALSE" else float(v)]]
    if fmt == "text" or (fmt is None and lines and len(lines[0]) == 3
                         and cols != 3):
        m = [[0.0] * cols for _ in range(rows)]
        for i, j, v in lines:
            m[int(i) - 1][int(j) - 1] = float(v)
        return m
    return [[float(v) for v in ln] for ln in lines]


def ref_shape(case, out):
    ref = os.path.join(rtwins.EXPECTED, case["name"], out + ".csv")
    if not os.path.exists(ref):
        return (0, 0)
    m = rtwins.read_csv(ref)
    return (len(m), len(m[0]) if m else 0)


def run_case(braid, mirror, case):
    """{output: matrix or reason} of SystemDS's script of case, run by
    braid."""
    rel, args = case["sys"][0], case["sys"][1]
    nvargs = case["sys"][2] if len(case["sys"]) > 2 else {}
    d = tempfile.mkdtemp(prefix="appdml-", dir=scratch_dir())
    home, ind, outd = d + "/script", d + "/in/", d + "/out/"
    for x in (home, ind, outd):
        os.makedirs(x)
    export_dir(mirror, os.path.dirname(rel), home)
    for name, make in case["inputs"].items():
        write_text(ind + name, make())

    def sub(a):
        if a.startswith("{IN}"):
            return ind + a[4:]
        if a.startswith("{OUT}"):
            return outd + a[5:]
        return a
    cmd = [braid, "-f", os.path.join(home, os.path.basename(rel))]
    if args:
        cmd += ["-args"] + [sub(a) for a in args]
    if nvargs:
        cmd += ["-nvargs"] + ["%s=%s" % (k, sub(v))
                              for k, v in nvargs.items()]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=home)
    res = {}
    for out in case["outputs"]:
        if p.returncode != 0:
            res[out] = "braid failed: " + (p.stderr.strip()[-300:] or
                                           p.stdout.strip()[-300:])
        else:
            res[out] = read_output(outd + out, ref_shape(case, out))
            col = case["sys"][3].get(out) if len(case["sys"]) > 3 else None
            if col and not isinstance(res[out], str):  # GLM's B[, 1]
                res[out] = [[r[col - 1]] for r in res[out]]
    subprocess.run(["rm", "-rf", d])
    return res


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    braid, mirror = os.path.abspath(argv[1]), argv[2]
    filt = argv[3] if len(argv) > 3 else ""
    known = rtwins.read_known(KNOWN)
    passed = failed = 0
    for case in apptwins_cases.CASES + apptwins_cases.SYS_ONLY:
        if "sys" not in case or (filt and filt not in case["name"]):
            continue
        outs = run_case(braid, mirror, case)
        for out in case["outputs"]:
            key = "%s/%s" % (case["name"], out)
            ok, detail = rtwins.compare(case, out, outs[out])
            if key in known:
                status = "FAIL" if ok else "KNOWN"
                detail = ("matches now; remove it from appdml_known.txt"
                          if ok else detail + " [" + known[key] + "]")
                ok = not ok
            else:
                status = "PASS" if ok else "FAIL"
            print("%s %s: %s" % (status, key, detail))
            passed += ok
            failed += not ok
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
