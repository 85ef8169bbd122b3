#!/usr/bin/env python3
"""braid's DML test runner (python3 standard library only).

Usage: tests/dml/run.sh BRAID [FILTER]   (run.sh calls this file)

Every tests/dml/cases/<name>.dml (sorted by name; FILTER, a regular
expression, is searched in the name) runs with tests/dml as the working
directory and a hang guard (it catches hangs; the slowest cases, such
as paramserv_props with every operator on PoCL, take 10-20 s alone and
several times that on a loaded machine: past 120 s of wall a case is
stopped by its CPU time, 240 s, or by 60 s without any, not by the
clock; TIMEOUT_S below) as

    BRAID -f cases/<name>.dml -nvargs out=<fresh temporary directory>

and its results are checked against tests/dml/expected/<name>/ with the
conventions of the conformance suite (shared/conformance/README.md):

  error.txt   the run must exit with a non-zero status (not by a signal);
              line 1 is the exit class ("nonzero"), every further non-empty
              line must occur in stderr (case-insensitive). Other expected
              files are then ignored.
  stdout.txt  stdout must equal it after trailing whitespace is stripped from
              every line and trailing empty lines are dropped; a line that
              differs passes when its whitespace-separated words are the
              expected ones with every number matching as below (a
              summation order may change the last digit a line prints).
  X.csv       <out>/X.csv (a file, or a directory of part files that are
              concatenated) has the same shape and matches cell by cell; an
              empty field reads as 0.
  s.scalar    <out>/s.scalar holds the same value: numbers numerically,
              TRUE/FALSE case-insensitively, anything else exactly.
A run without error.txt must exit with status 0. Numbers match when
|a-b| <= max(1e-9*max(|a|,|b|), 1e-12); NaN matches NaN; infinities match
by sign.

Extra configurations: if the environment variable BRAID_DML_EXTRA_ARGS is
set and not blank, every case runs once more for each non-blank line of it,
with that line's arguments (split like a shell does) placed after the
script, before -nvargs:

    BRAID -f cases/<name>.dml <extra args> -nvargs out=<tmp>

Such runs are reported as "PASS <name> [<extra args>]". The alg_err_*
cases (a builtin's argument checks, which stop before the algorithm's
operators run) run only plainly.

The runs are independent processes; BRAID_TEST_JOBS of them (default: the
number of cores) run at once. Prints "PASS <name>" or "FAIL <name>: <reason>"
per run, in the order of the runs (every case plainly, then every case with
each extra configuration), then exactly one line "N passed, M failed". Exits 0 only if at least one run happened and
none failed.
"""

import concurrent.futures
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.abspath(__file__))
# A hung case is caught by its own CPU time, not by the wall clock alone:
# on a loaded machine (CI's sanitizer pass at load 20 and more) a slow case
# gets a small share of the cores and once ran past a 120 s wall limit
# without being hung. Up to TIMEOUT_S of wall nothing is looked at; from
# then on the case is stopped once its processes have used CPU_LIMIT_S of
# CPU (a loop that never ends), or used none for STALL_S (a deadlock or a
# wait that never ends: a case that only waits for the CPU still gets a
# share every second), or at WALL_LIMIT_S in any case.
TIMEOUT_S = 120
CPU_LIMIT_S = 240   # what TIMEOUT_S of wall on both cores of CI's machine can use
STALL_S = 60
WALL_LIMIT_S = 1800
POLL_S = 5
REL_TOL = 1e-9
ABS_TOL = 1e-12
EXTRA_ENV = "BRAID_DML_EXTRA_ARGS"
CONFIG_FREE = "alg_err_"   # cases that run with the plain settings only (main)
JOBS_ENV = "BRAID_TEST_JOBS"


class CaseFailed(Exception):
    """A run that does not meet its expectations; the message says why."""


def to_number(text):
    """The number a CSV cell or scalar file denotes; ValueError if none."""
    t = text.strip()
    if t == "":
        return 0.0
    low = t.lower().lstrip("+")
    if low in ("nan", "-nan"):
        return float("nan")
    if low in ("inf", "infinity"):
        return float("inf")
    if low in ("-inf", "-infinity"):
        return float("-inf")
    return float(t)


def numbers_match(a, b):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= max(REL_TOL * max(abs(a), abs(b)), ABS_TOL)


def load_output(path):
    """Text of an output; a directory of part files is read in name order."""
    if not os.path.isdir(path):
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    text = ""
    for part in sorted(os.listdir(path)):
        if part.startswith((".", "_")) or part.endswith((".crc", ".mtd")):
            continue
        with open(os.path.join(path, part), encoding="utf-8", errors="replace") as f:
            chunk = f.read()
        if chunk and not chunk.endswith("\n"):
            chunk += "\n"
        text += chunk
    return text


def csv_rows(text, label):
    rows = []
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        try:
            rows.append([to_number(cell) for cell in line.split(",")])
        except ValueError:
            raise CaseFailed("%s: line %d is not numeric CSV: %r" % (label, lineno, line[:80]))
    return rows


def check_csv(name, expected_text, actual_text):
    exp = csv_rows(expected_text, "expected " + name)
    act = csv_rows(actual_text, name)
    ncols = len(act[0]) if act else 0
    for i, row in enumerate(act):
        if len(row) != ncols:
            raise CaseFailed("%s: row %d has %d cells, row 1 has %d" % (name, i + 1, len(row), ncols))
    eshape = (len(exp), len(exp[0]) if exp else 0)
    ashape = (len(act), ncols)
    if eshape != ashape:
        raise CaseFailed("%s: shape %dx%d, expected %dx%d" % ((name,) + ashape + eshape))
    wrong = [(i, j) for i in range(eshape[0]) for j in range(eshape[1])
             if not numbers_match(exp[i][j], act[i][j])]
    if wrong:
        i, j = wrong[0]
        raise CaseFailed("%s: %d cell(s) differ, first at [%d,%d]: got %r, expected %r"
                         % (name, len(wrong), i + 1, j + 1, act[i][j], exp[i][j]))


def check_scalar(name, expected_text, actual_text):
    e = expected_text.strip()
    a = actual_text.strip()
    if e.upper() in ("TRUE", "FALSE"):
        if a.upper() != e.upper():
            raise CaseFailed("%s: got %r, expected %s" % (name, a[:80], e))
        return
    try:
        ev = to_number(e) if e else None
    except ValueError:
        ev = None
    if ev is None:
        if a != e:
            raise CaseFailed("%s: got %r, expected %r" % (name, a[:80], e[:80]))
        return
    try:
        av = to_number(a) if a else None
    except ValueError:
        av = None
    if av is None:
        raise CaseFailed("%s: got %r, expected the number %s" % (name, a[:80], e))
    if not numbers_match(ev, av):
        raise CaseFailed("%s: got %s, expected %s" % (name, a, e))


def stdout_lines(text):
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def words_match(e, a):
    """The words of lines e and a are equal, numbers within tolerance."""
    ew, aw = e.split(), a.split()
    if len(ew) != len(aw):
        return False
    for x, y in zip(ew, aw):
        if x == y:
            continue
        try:
            xv, yv = float(x), float(y)
        except ValueError:
            return False
        if not numbers_match(xv, yv):
            return False
    return True


def check_stdout(expected_text, actual_text):
    exp = stdout_lines(expected_text)
    act = stdout_lines(actual_text)
    for k in range(max(len(exp), len(act))):
        e = exp[k] if k < len(exp) else "<end of output>"
        a = act[k] if k < len(act) else "<end of output>"
        if e != a and not words_match(e, a):
            raise CaseFailed("stdout line %d: got %r, expected %r" % (k + 1, a[:100], e[:100]))


def one_line(text, limit=200):
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


def find_binary(arg):
    """Absolute path of the binary named on the command line, or None."""
    if os.sep not in arg and not (os.altsep and os.altsep in arg):
        found = shutil.which(arg)
        if found:
            return os.path.abspath(found)
    path = os.path.abspath(arg)
    if os.path.isfile(path) and os.access(path, os.X_OK):
        return path
    return None


# LeakSanitizer's own stop-the-world tracer sometimes crashes at a sanitizer
# build's exit ("Tracer caught signal 11 ... LeakSanitizer has encountered a
# fatal error": google/sanitizers#1353, #1170), a failure of the tool, not a
# leak report; such a run is repeated once and the repetition counts.
LSAN_TOOL_CRASH = "LeakSanitizer has encountered a fatal error"


def execute(cmd):
    """Run cmd in ROOT; returns (status, stdout, stderr). Kills the whole
    process group on timeout. A run that LeakSanitizer's tracer crashed
    runs once more."""
    status, out, err = execute_once(cmd)
    if status != 0 and LSAN_TOOL_CRASH in err:
        status, out, err = execute_once(cmd)
    return status, out, err


def tree_cpu_s(root):
    """CPU seconds used so far by process root and its descendants, live
    or reaped (braid, its threads and the compilers it starts, which lead
    sessions of their own); None when /proc cannot tell."""
    tick = os.sysconf("SC_CLK_TCK")
    parent, used = {}, {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return None
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            # after the name: state ppid ... utime (the 12th) stime
            # cutime cstime
            pid = int(name)
            parent[pid] = int(fields[1])
            used[pid] = sum(int(x) for x in fields[11:15])
        except (OSError, IndexError, ValueError):
            continue
    if root not in used:
        return None
    total = 0
    for pid, ticks in used.items():
        p, seen = pid, 0
        while p > 1 and p != root and seen < 64:
            p, seen = parent.get(p, 0), seen + 1
        if p == root:
            total += ticks
    return total / tick


def wait_case(proc):
    """proc's (stdout, stderr); CaseFailed when the case is hung (see
    TIMEOUT_S)."""
    start = time.monotonic()
    timeout, last_cpu, last_change = TIMEOUT_S, None, start
    while True:
        try:
            return proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        cpu = tree_cpu_s(proc.pid)
        if cpu is not None and cpu != last_cpu:
            last_cpu, last_change = cpu, now
        waited, why = now - start, None
        if cpu is None or waited >= WALL_LIMIT_S:
            why = "timeout after %.0f s" % waited
        elif cpu >= CPU_LIMIT_S:
            why = "timeout: %.0f s of CPU in %.0f s" % (cpu, waited)
        elif now - last_change >= STALL_S:
            why = "timeout: no CPU used for %.0f s (after %.0f s)" % (now - last_change, waited)
        if why:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                proc.kill()
            proc.communicate()
            raise CaseFailed(why)
        timeout = POLL_S


def execute_once(cmd):
    try:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
    except OSError as e:
        raise CaseFailed("cannot run binary: %s" % e)
    out, err = wait_case(proc)
    return (proc.returncode, out.decode("utf-8", errors="replace"),
            err.decode("utf-8", errors="replace"))


def check_error(expected_path, status, stderr):
    with open(expected_path, encoding="utf-8") as f:
        lines = [line.strip() for line in f.read().splitlines()]
    kind = lines[0] if lines else "nonzero"
    if kind != "nonzero":
        raise CaseFailed("error.txt: unknown exit class %r" % kind)
    if status == 0:
        raise CaseFailed("exit status 0, expected an error")
    if status < 0:
        raise CaseFailed("killed by signal %d, expected a clean error exit" % -status)
    for needle in lines[1:]:
        if needle and needle.lower() not in stderr.lower():
            raise CaseFailed("stderr lacks %r; stderr: %s" % (needle, one_line(stderr)))


def run_case(binary, name, extra):
    exp_dir = os.path.join(ROOT, "expected", name)
    if not os.path.isdir(exp_dir):
        raise CaseFailed("no expected/%s folder" % name)
    expected = sorted(f for f in os.listdir(exp_dir) if not f.startswith("."))
    if not expected:
        raise CaseFailed("expected/%s is empty" % name)
    if binary is None:
        raise CaseFailed("no binary")
    out_dir = tempfile.mkdtemp(prefix="braid-dml-%s-" % name)
    try:
        cmd = [binary, "-f", os.path.join("cases", name + ".dml")] + extra + \
              ["-nvargs", "out=" + out_dir]
        status, stdout, stderr = execute(cmd)
        if "error.txt" in expected:
            check_error(os.path.join(exp_dir, "error.txt"), status, stderr)
            return
        if status != 0:
            how = ("killed by signal %d" % -status) if status < 0 else ("exit status %d" % status)
            raise CaseFailed("%s; stderr: %s" % (how, one_line(stderr)))
        for fname in expected:
            with open(os.path.join(exp_dir, fname), encoding="utf-8") as f:
                want = f.read()
            if fname == "stdout.txt":
                check_stdout(want, stdout)
                continue
            path = os.path.join(out_dir, fname)
            if not os.path.exists(path):
                raise CaseFailed("%s was not written" % fname)
            got = load_output(path)
            if fname.endswith(".csv"):
                check_csv(fname, want, got)
            elif fname.endswith(".scalar"):
                check_scalar(fname, want, got)
            else:
                raise CaseFailed("don't know how to compare expected file %s" % fname)
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


def configurations():
    """(label, extra args) of every run of a case: the plain one first."""
    configs = [("", [])]
    for line in os.environ.get(EXTRA_ENV, "").splitlines():
        if line.strip():
            configs.append((" [%s]" % line.strip(), shlex.split(line)))
    return configs


def jobs():
    """How many cases run at once: BRAID_TEST_JOBS, else the core count."""
    try:
        return max(1, int(os.environ.get(JOBS_ENV, "")))
    except ValueError:
        return os.cpu_count() or 1


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        sys.stderr.write("usage: run.sh BRAID [FILTER]\n")
        return 2
    binary = find_binary(argv[1])
    pattern = re.compile(argv[2]) if len(argv) > 2 and argv[2] else None
    cases_dir = os.path.join(ROOT, "cases")
    names = sorted(f[:-4] for f in os.listdir(cases_dir)
                   if f.endswith(".dml") and os.path.isfile(os.path.join(cases_dir, f)))
    if pattern is not None:
        names = [n for n in names if pattern.search(n)]
    def one(run):
        (label, extra), name = run
        try:
            run_case(binary, name, extra)
        except CaseFailed as e:
            return "FAIL %s%s: %s" % (name, label, e)
        return "PASS %s%s" % (name, label)

    # a builtin's argument checks (alg_err_*: its script's stop() before
    # the algorithm's operators run) run with the plain settings only:
    # under an extra configuration they repeat the same stop() while
    # compiling plans that never run (a fifth of the GPU configuration's
    # time); every other case runs in every configuration
    runs = [(config, name) for config in configurations() for name in names
            if not (config[1] and name.startswith(CONFIG_FREE))]
    passed = failed = 0
    # the cases are independent processes: JOBS of them run at once, and
    # their results are printed in the order of the runs
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs()) as pool:
        for line in pool.map(one, runs):
            print(line, flush=True)
            if line.startswith("PASS"):
                passed += 1
            else:
                failed += 1
    print("%d passed, %d failed" % (passed, failed), flush=True)
    return 0 if (failed == 0 and passed > 0) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
