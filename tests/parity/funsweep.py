#!/usr/bin/env python3
"""A robustness sweep over SystemDS's DML test scripts, run by braid.

  tests/parity/funsweep.py BRAID SDSROOT [SUBDIR [FILTER]]

SDSROOT is a SystemDS checkout (a folder holding src/test/scripts and
scripts, as `git archive` of the mirror writes it); SUBDIR is the folder
of scripts under it (default src/test/scripts/functions); FILTER keeps
the scripts whose path contains it. By hand only: it needs the checkout,
and its findings are triaged, not asserted.

Each script runs as SystemDS's tests run it, from SDSROOT (so that its
source("scripts/...") and source("src/test/...") resolve), with made-up
arguments instead of its Java test's: an argument read by read() gets a
10 x 10 csv matrix (with its .mtd), one written by write() or joined
into a path a file in a scratch folder, any other the number 1. Scripts
with the test harness's $$name$$ placeholders are skipped. Most runs
then stop on the made-up inputs (wrong shapes, a matrix where a frame
is read); that is expected. What the sweep is for:

  CRASH    braid ended by a signal or with a status other than 0 and 1
  TIMEOUT  still running after 10 seconds (also the scripts that loop
           for long by design)
  COMPILE  an error of the kinds that no argument explains: an unknown
           function or data type, a syntax error, an unsupported builtin

Prints one line per CRASH, TIMEOUT and COMPILE script with braid's first
error line, then the counts of every class (RAN, STOPPED for the other
errors, SKIPPED). Exit status 1 when any script crashed.

Found this way (2026-12-04): replace() over frames (frame/ReplaceTest.dml)
and a string assigned into a matrix cell (perftest ImputeByKNN.dml).
"""

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

COMPILE = re.compile(r"unknown function|unknown data type|expected a value type|syntax error|"
                     r"unexpected|is not supported by braid|has no parameter named|"
                     r"too many arguments|missing argument")


def made_up(src, name, scratch, matrix):
    """The value of $name: a matrix to read, a path to write, else 1."""
    k = re.escape(name)
    if re.search(r"\b(read|readMM)\s*\(\s*\$" + k + r"\b", src):
        return matrix
    if (re.search(r"\bwrite\s*\([^,;\n]*,\s*\$" + k + r"\b", src)
            or re.search(r"\$" + k + r"\s*\+\s*[\"']", src)
            or re.search(r"[\"']\s*\+\s*\$" + k + r"\b", src)
            or re.search(r"\bfileExists\s*\(\s*\$" + k + r"\b", src)):
        return os.path.join(scratch, "arg_" + name)
    return "1"


def write_matrix(folder):
    path = os.path.join(folder, "M.csv")
    with open(path, "w") as f:
        for i in range(10):
            f.write(",".join("%.6f" % (((i * 10 + j) * 7919 % 1000) / 250.0) for j in range(10)) + "\n")
    with open(path + ".mtd", "w") as f:
        f.write('{"data_type": "matrix", "value_type": "double", "rows": 10, "cols": 10, '
                '"format": "csv", "header": false, "sep": ","}\n')
    return path


def run_one(braid, root, script, scratch, matrix, timeout):
    src = open(script, errors="replace").read()
    if "$$" in src:
        return "SKIPPED", ""
    pos = [int(x) for x in re.findall(r"\$(\d+)", src)]
    named = sorted(set(re.findall(r"\$([A-Za-z_][A-Za-z0-9_]*)", src)))
    cmd = [braid, "-f", script]
    if pos:
        cmd += ["-args"] + [made_up(src, str(i), scratch, matrix) for i in range(1, max(pos) + 1)]
    elif named:
        cmd += ["-nvargs"] + ["%s=%s" % (n, made_up(src, n, scratch, matrix)) for n in named]
    try:
        r = subprocess.run(cmd, cwd=root, capture_output=True, text=True, errors="replace",
                           timeout=timeout, env=dict(os.environ, BRAID_CODEGEN_ASYNC="0"))
    except subprocess.TimeoutExpired:
        return "TIMEOUT", ""
    lines = r.stderr.strip().splitlines()
    first = next((ln for ln in lines if "error" in ln), lines[0] if lines else "")
    if r.returncode not in (0, 1):
        return "CRASH", "status %d: %s" % (r.returncode, first)
    if r.returncode == 0:
        return "RAN", ""
    return ("COMPILE" if COMPILE.search(first) else "STOPPED"), first


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    braid, root = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    sub = argv[3] if len(argv) > 3 else "src/test/scripts/functions"
    filt = argv[4] if len(argv) > 4 else ""
    timeout = 10.0
    scripts = sorted(glob.glob(os.path.join(root, sub, "**", "*.dml"), recursive=True))
    scripts = [s for s in scripts if filt in s]
    counts = {}
    crashed = False
    with tempfile.TemporaryDirectory(prefix="braid-funsweep-") as tmp:
        matrix = write_matrix(tmp)
        for s in scripts:
            scratch = os.path.join(tmp, "out")
            shutil.rmtree(scratch, ignore_errors=True)
            os.makedirs(scratch)
            cls, why = run_one(braid, root, s, scratch, matrix, timeout)
            counts[cls] = counts.get(cls, 0) + 1
            crashed |= cls == "CRASH"
            if cls in ("CRASH", "TIMEOUT", "COMPILE"):
                print("%s %s: %s" % (cls, os.path.relpath(s, root), why))
                sys.stdout.flush()
    print(", ".join("%s %d" % (k, counts.get(k, 0))
                    for k in ("RAN", "STOPPED", "COMPILE", "TIMEOUT", "CRASH", "SKIPPED")))
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
