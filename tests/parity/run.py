#!/usr/bin/env python3
"""SystemDS parity tests: tests/parity/run.py BRAID [FILTER]

1. Every cases/<name>.dml runs with braid's own library (working directory:
   this folder) as  BRAID -f cases/<name>.dml -nvargs out=<tmp>  and its
   outputs must equal expected/<name>/, which gen.py wrote by running the
   same case with SystemDS's builtin scripts in place of braid's. Numbers
   match within 1e-8 relative (a case may say "# parity-tol: 1e-5" where
   SystemDS's algorithm is order sensitive); the other rules are those of
   tests/dml/runner.py, whose comparisons this file uses. A case that says
   "# parity-fails" must stop (exit 1) with the error message SystemDS's
   script stopped with under braid (expected/<name>/error.txt). A case
   that says "# parity-stdout" must also print what SystemDS's scripts
   print (expected/<name>/stdout.txt, compared as tests/dml compares
   stdout: line by line, words separated by blanks or commas, numbers
   within the tolerance).
2. Every builtin in signatures.tsv (SystemDS's signatures, written by
   gen.py) must have the same signature in braid's scripts/builtin: the
   parameters' names, order, types and defaults and the outputs' number
   and types, as declared, and as calls bind them: callsig.py makes
   positional and named calls (every parameter; only those without a
   default) under `braid -bindcheck` and checks that each parameter
   receives what SystemDS binds to it.

known.txt lists what still differs, one per line: "output <case>/<file>:
reason" (one output of a case), "case <name>: reason" (the whole case,
e.g. when braid's builtin rejects SystemDS's call) or "signature <name>:
reason". Such an entry passes only while the difference is still there,
and every other output must match, so the list stays exact.
Prints PASS/FAIL/KNOWN lines and "N passed, M failed".
"""

import os
import re
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "dml"))
sys.path.insert(0, HERE)
import runner  # noqa: E402  (tests/dml/runner.py: comparisons, execution)
import dmlsig  # noqa: E402
import callsig  # noqa: E402

DEFAULT_TOL = 1e-8


def case_tol(path):
    with open(path, encoding="utf-8") as f:
        m = re.search(r"#\s*parity-tol:\s*([0-9.eE+-]+)", f.read())
    return float(m.group(1)) if m else DEFAULT_TOL


def output_tols(path):
    """{output file: tolerance} a case declares with lines
    "# parity-tol-output: FILE TOL": an output that amplifies rounding
    (weights of a nearly singular system) is compared at TOL, the case's
    other outputs at the case's tolerance."""
    with open(path, encoding="utf-8") as f:
        return {m.group(1): float(m.group(2)) for m in
                re.finditer(r"#\s*parity-tol-output:\s*(\S+)\s+([0-9.eE+-]+)", f.read())}


def case_args(path):
    """Options a case declares with "# parity-args: ..." (e.g. -seed 7, so
    that the unseeded rand() calls of SystemDS's scripts and of braid's
    ports draw the same numbers); placed before -f."""
    with open(path, encoding="utf-8") as f:
        m = re.search(r"#\s*parity-args:\s*(.+)", f.read())
    return m.group(1).split() if m else []


def stdout_case(path):
    """Whether a case declares "# parity-stdout": its stdout goes into its
    output folder as stdout.txt, compared as an output."""
    with open(path, encoding="utf-8") as f:
        return re.search(r"#\s*parity-stdout\b", f.read()) is not None


def compare_outputs(exp_dir, out_dir, tol, tols=None):
    """{output file: why it differs} for the outputs of out_dir that differ
    from exp_dir (tolerance tol relative, or tols[file]); empty when all
    match."""
    diffs = {}
    for fname in sorted(os.listdir(exp_dir)):
        if fname.startswith("."):
            continue
        runner.REL_TOL = (tols or {}).get(fname, tol)
        path = os.path.join(out_dir, fname)
        try:
            if not os.path.exists(path):
                raise runner.CaseFailed("%s was not written" % fname)
            with open(os.path.join(exp_dir, fname), encoding="utf-8") as f:
                want = f.read()
            if fname == "stdout.txt":
                # commas separate words too (SystemDS's "NAME,value" lines)
                with open(path, encoding="utf-8") as f:
                    runner.check_stdout(want.replace(",", " , "), f.read().replace(",", " , "))
                continue
            got = runner.load_output(path)
            if fname.endswith(".csv"):
                runner.check_csv(fname, want, got)
            else:
                runner.check_scalar(fname, want, got)
        except runner.CaseFailed as e:
            diffs[fname] = str(e)
    # an output without a reference would never be compared (gen.py keeps
    # the old references of a case whose SystemDS run fails)
    for fname in sorted(os.listdir(out_dir)):
        if not fname.startswith(".") and not fname.endswith(".mtd") and \
                not os.path.exists(os.path.join(exp_dir, fname)):
            diffs[fname] = "%s has no reference in %s (run gen.py)" % (fname, exp_dir)
    return diffs


def scratch_dir():
    """The folder the suite's runs write their outputs into: memory-backed
    when the machine has one, because braid's write() makes every file
    durable (fsync of the file and of its folder), which on a disk costs
    far more wall time than the suite's work, and the suite only reads its
    outputs back once. BRAID_TEST_SCRATCH names the folder; otherwise
    /dev/shm when it is a writable tmpfs with 64 MiB free; otherwise None
    (tempfile's default). braid's own write guarantees are unchanged."""
    env = os.environ.get("BRAID_TEST_SCRATCH")
    if env:
        return env
    shm = "/dev/shm"
    try:
        st = os.statvfs(shm)
        if os.access(shm, os.W_OK | os.X_OK) and st.f_bavail * st.f_frsize >= 64 << 20:
            return shm
    except OSError:
        pass
    return None


# {case: (exit status, stderr, output folder)} of the runs prerun() made
PRERUN = {}
# cases per braid process in prerun(): a batch stays well within
# runner's limits on one run's CPU with a cold kernel cache (a case
# compiles up to about 40 s of CPU of kernels there)
BATCH = 6


def prerun(binary, names):
    """Runs the cases of names that can share a braid process (not those
    that must fail, which need their own exit status, nor those whose
    stdout is compared, which -out mixes with stderr) in batches of BATCH
    runs, one process each (-then; each run's output to its own file):
    one start instead of one per case. A batch that exits non-zero (a
    case failed, or braid died) leaves its cases to execute_case, one
    process each, so that a failure is still reported per case."""
    todo = [n for n in names if not fails_case(n) and
            not stdout_case(os.path.join(HERE, "cases", n + ".dml"))]
    runner.ROOT = HERE
    for k in range(0, len(todo), BATCH):
        batch, cmd, dirs = todo[k:k + BATCH], [binary], []
        for j, name in enumerate(batch):
            d = tempfile.mkdtemp(prefix="braid-parity-%s-" % name, dir=scratch_dir())
            dirs.append(d)
            case = os.path.join("cases", name + ".dml")
            cmd += (["-then"] if j else []) + case_args(os.path.join(HERE, case)) + \
                ["-f", case, "-nvargs", "out=" + d, "-out", d + ".log"]
        try:
            status = runner.execute(cmd)[0]
        except runner.CaseFailed:
            status = None
        for name, d in zip(batch, dirs):
            if status == 0:
                with open(d + ".log", encoding="utf-8", errors="replace") as f:
                    PRERUN[name] = (0, f.read(), d)
            else:
                shutil.rmtree(d, ignore_errors=True)
            if os.path.exists(d + ".log"):
                os.remove(d + ".log")


def execute_case(binary, name, env=None):
    """Runs cases/<name>.dml with env added to the environment (or takes
    prerun()'s run of it); returns (exit status, stderr, output folder)."""
    if not env and name in PRERUN:
        return PRERUN.pop(name)
    out_dir = tempfile.mkdtemp(prefix="braid-parity-%s-" % name, dir=scratch_dir())
    runner.ROOT = HERE
    old = dict(os.environ)
    try:
        if env:
            os.environ.update(env)
        case = os.path.join("cases", name + ".dml")
        status, stdout, stderr = runner.execute(
            [binary] + case_args(os.path.join(HERE, case)) + ["-f", case, "-nvargs", "out=" + out_dir])
    finally:
        os.environ.clear()
        os.environ.update(old)
    if stdout_case(os.path.join(HERE, "cases", name + ".dml")):
        with open(os.path.join(out_dir, "stdout.txt"), "w", encoding="utf-8") as f:
            f.write(stdout)
    return status, stderr, out_dir


def run_case(binary, name, env=None):
    """Runs cases/<name>.dml; returns the output folder (caller removes)."""
    status, stderr, out_dir = execute_case(binary, name, env)
    if status != 0:
        shutil.rmtree(out_dir, ignore_errors=True)
        raise runner.CaseFailed("exit status %d; stderr: %s" % (status, runner.one_line(stderr)))
    return out_dir


def error_message(stderr):
    """The message of a run's first "file:line:col: error: message" line
    (without the place, which differs between SystemDS's scripts and
    braid's), or None."""
    for line in stderr.splitlines():
        m = re.search(r": error: (.*)$", line)
        if m:
            return m.group(1).strip()
    return None


def failing_run(binary, name, env=None):
    """Runs cases/<name>.dml, which must fail (a "# parity-fails" case);
    returns its error message; raises runner.CaseFailed when it runs
    through or fails without a file:line:col: error: line."""
    status, stderr, out_dir = execute_case(binary, name, env)
    shutil.rmtree(out_dir, ignore_errors=True)
    msg = error_message(stderr)
    if status != 1 or msg is None:
        raise runner.CaseFailed("exit status %d, expected SystemDS's failure (exit 1 with an "
                                "error line); stderr: %s" % (status, runner.one_line(stderr)))
    return msg


def fails_case(name):
    """Whether cases/<name>.dml declares "# parity-fails": SystemDS's script
    stops on its input, and braid's builtin must stop with the same error
    message (gen.py stores it in expected/<name>/error.txt)."""
    with open(os.path.join(HERE, "cases", name + ".dml"), encoding="utf-8") as f:
        return re.search(r"#\s*parity-fails\b", f.read()) is not None


def check_case(binary, name):
    """{output: why it differs} of case name against expected/<name>;
    raises runner.CaseFailed when the case does not run."""
    exp_dir = os.path.join(HERE, "expected", name)
    if not os.path.isdir(exp_dir) or not os.listdir(exp_dir):
        raise runner.CaseFailed("no expected/%s (run gen.py)" % name)
    if fails_case(name):
        with open(os.path.join(exp_dir, "error.txt"), encoding="utf-8") as f:
            want = f.read().strip()
        got = failing_run(binary, name)
        return {} if got == want else {"error.txt": "error %r, SystemDS's: %r" % (got, want)}
    out_dir = run_case(binary, name)
    try:
        case = os.path.join(HERE, "cases", name + ".dml")
        return compare_outputs(exp_dir, out_dir, case_tol(case), output_tols(case))
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


def judge_case(binary, name, known):
    """(status, message) of a case: PASS, KNOWN or FAIL. known maps
    ("case", name) and ("output", name/file) to the recorded reasons."""
    whole = known.get(("case", name))
    try:
        diffs = check_case(binary, name)
    except runner.CaseFailed as e:
        return ("KNOWN", whole) if whole is not None else ("FAIL", str(e))
    listed = {k[1].split("/", 1)[1] for k in known if k[0] == "output" and k[1].startswith(name + "/")}
    if whole is not None:
        if diffs:
            return "KNOWN", whole
        return "FAIL", "equal to SystemDS now; remove it from known.txt"
    same = sorted(listed - set(diffs))
    if same:
        return "FAIL", "%s equal to SystemDS now; remove it from known.txt" % ", ".join(same)
    new = sorted(set(diffs) - listed)
    if new:
        return "FAIL", "; ".join(diffs[f] for f in new)
    if listed:
        return "KNOWN", "; ".join("%s: %s" % (f, known[("output", name + "/" + f)]) for f in sorted(listed))
    return "PASS", None


def read_table(path):
    """signatures.tsv -> {builtin: (params text, outputs text)}."""
    table = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, _func, params, outs = line.rstrip("\n").split("\t")
            table[name] = (params, outs)
    return table


def binding_differences(ours, theirs):
    """How braid's signature (params, outputs) binds calls differently from
    SystemDS's: parameter names in order (positional and named binding),
    types and defaults; the outputs' number and types (names do not bind).
    Trailing parameters SystemDS lacks are braid's extensions and must have
    defaults; a default where SystemDS has none changes no SystemDS call."""
    (op, oo), (tp, to) = ours, theirs
    diffs = []
    for k, (t, n, d) in enumerate(tp):
        if k >= len(op):
            diffs.append("parameter %d '%s' missing" % (k + 1, n))
            continue
        ot, on, od = op[k]
        if on != n:
            diffs.append("parameter %d is '%s', SystemDS: '%s'" % (k + 1, on, n))
        elif ot != t and not (ot.split("[")[0] == t.split("[")[0] and ot.startswith(("frame", "list"))):
            diffs.append("parameter '%s' has type %s, SystemDS: %s" % (n, ot, t))
        elif d is not None and od != d:
            diffs.append("parameter '%s' defaults to %s, SystemDS: %s" % (n, od, d))
    for t, n, d in op[len(tp):]:
        if d is None:
            diffs.append("extra parameter '%s' without a default" % n)
    if len(oo) != len(to):
        diffs.append("%d outputs, SystemDS: %d (%s)" % (len(oo), len(to), dmlsig.format_outputs(to)))
    else:
        for (ot, on), (t, n) in zip(oo, to):
            if ot.split("[")[0] != t.split("[")[0]:
                diffs.append("output '%s' is %s, SystemDS: %s %s" % (on, ot, t, n))
    return diffs


def check_signature(name, want):
    path = os.path.join(REPO, "scripts", "builtin", name + ".dml")
    if not os.path.exists(path):
        raise runner.CaseFailed("braid has no scripts/builtin/%s.dml" % name)
    with open(path, encoding="utf-8") as f:
        sig = dmlsig.builtin_signature(name, f.read())
    if sig is None:
        raise runner.CaseFailed("%s.dml defines no function for %s" % (name, name))
    diffs = binding_differences((sig[1], sig[2]), (dmlsig.parse_params(want[0]),
                                                   dmlsig.parse_outputs(want[1])))
    if diffs:
        raise runner.CaseFailed("; ".join(diffs))


def read_known():
    known = {}
    path = os.path.join(HERE, "known.txt")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                m = re.match(r"^(case|output|signature)\s+(\S+):\s*(.*)$", line.strip())
                if m:
                    known[(m.group(1), m.group(2))] = m.group(3)
    return known


def report(status, label, msg):
    print("%s %s%s" % (status, label, ": " + msg if msg else ""), flush=True)


def main(argv):
    if len(argv) < 2:
        sys.stderr.write("usage: run.py BRAID [FILTER]\n")
        return 2
    binary = runner.find_binary(argv[1])
    pattern = re.compile(argv[2]) if len(argv) > 2 and argv[2] else None
    known = read_known()
    names = sorted(f[:-4] for f in os.listdir(os.path.join(HERE, "cases")) if f.endswith(".dml"))
    table = read_table(os.path.join(HERE, "signatures.tsv"))
    passed = failed = 0
    prerun(binary, [n for n in names if pattern is None or pattern.search(n)])
    for name in names:
        if pattern is not None and not pattern.search(name):
            continue
        status, msg = judge_case(binary, name, known)
        report(status, "case " + name, msg)
        passed, failed = (passed + 1, failed) if status != "FAIL" else (passed, failed + 1)
    for _, _, d in PRERUN.values():  # runs no check took (no expected/)
        shutil.rmtree(d, ignore_errors=True)
    sig_names = [n for n in sorted(table) if pattern is None or pattern.search(n)]
    called = callsig.check(binary, table, sig_names) if sig_names else {}
    for name in sig_names:
        errs = []
        try:
            check_signature(name, table[name])
        except runner.CaseFailed as e:
            errs.append(str(e))
        errs += called.get(name, [])
        err = "; ".join(errs) if errs else None
        reason = known.get(("signature", name))
        if reason is not None:
            status, msg = ("KNOWN", reason) if err else \
                ("FAIL", "equal to SystemDS now; remove it from known.txt")
        else:
            status, msg = ("FAIL", err) if err else ("PASS", None)
        report(status, "signature " + name, msg)
        passed, failed = (passed + 1, failed) if status != "FAIL" else (passed, failed + 1)
    print("%d passed, %d failed" % (passed, failed), flush=True)
    return 0 if (failed == 0 and passed > 0) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
