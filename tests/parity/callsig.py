"""Signatures checked by calls (Acceptance 3 of issue 22; docs/parity.md).

For every builtin of signatures.tsv (SystemDS's signatures) this module
writes calls as a SystemDS user writes them and runs them under
`braid -bindcheck`, where a call of a DML function prints which value
each parameter received instead of running the body (runtime/bindcheck.h).
Per builtin:
  - positional calls giving every parameter (one per bit of the booleans'
    codes, so that two booleans swapped show);
  - a named call giving every parameter, in reverse order;
  - a named call giving only the parameters without a default, so that
    the defaults bind.
Each call assigns SystemDS's number of outputs. Every argument is a marker
of SystemDS's type for that parameter (parameter k: integer k, double
k + 0.5, string "s<k>", matrix(k, rows=k+1, cols=k+2), frame("f<k>",
rows=k+1, cols=k+2), list(k), booleans by code bits), so the report tells
which argument each parameter got. A call passes when every parameter of
SystemDS's signature received what SystemDS binds to it (the marker, or
SystemDS's default evaluated with the call's other arguments) and braid's
function has SystemDS's number of outputs with the same types. A swapped
parameter order, a missing or renamed parameter, a wrong default or type
and a wrong number of outputs all fail.

All calls run in one braid process; a builtin whose calls do not compile
(an error at its lines) is reported failed and the rest run again without
it. check(binary, table) -> {builtin: [differences]}.
"""

import math
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "dml"))
sys.path.insert(0, HERE)
import runner  # noqa: E402
import dmlsig  # noqa: E402


def base_type(t):
    """SystemDS's type -> the report's type (matrix, frame, list, int,
    double, boolean, string)."""
    b = t.split("[")[0]
    return {"integer": "int"}.get(b, b)


class Call:
    """One call of builtin name: its DML text and what each parameter must
    receive ({param: expected value text}), by the report's format."""

    def __init__(self, name, kind, args, expect, nouts):
        self.name, self.kind, self.args, self.expect, self.nouts = name, kind, args, expect, nouts

    def statement(self, ident):
        call = "%s(%s)" % (self.name, ", ".join(self.args))
        if self.nouts == 0:
            return call
        outs = ["o%d_%d" % (ident, j + 1) for j in range(self.nouts)]
        return ("%s = %s" if self.nouts == 1 else "[%s] = %s") % (", ".join(outs), call)


def num_text(x):
    """A double of an expected value as text (braid's report prints Java's
    Double.toString; values are compared as numbers, see same_value)."""
    return repr(float(x))


def marker(t, k, bit):
    """(DML argument, expected report value) of SystemDS type t as the
    k-th parameter (1-based); bit: a boolean's value."""
    b = base_type(t)
    if b == "int":
        return str(k), "int %d" % k
    if b == "double":
        return "%d.5" % k, "double %s" % num_text(k + 0.5)
    if b == "boolean":
        return ("TRUE", "boolean TRUE") if bit else ("FALSE", "boolean FALSE")
    if b == "string":
        return '"s%d"' % k, 'string "s%d"' % k
    if b == "matrix":
        return "matrix(%d, rows=%d, cols=%d)" % (k, k + 1, k + 2), "matrix %dx%d %s" % (k + 1, k + 2, num_text(k))
    if b == "frame":
        return 'frame("f%d", rows=%d, cols=%d)' % (k, k + 1, k + 2), 'frame %dx%d "f%d"' % (k + 1, k + 2, k)
    if b == "list":
        return "list(%d)" % k, "list 1 (int %d)" % k
    raise ValueError("no marker for type %s" % t)


def _dim(text, given):
    """A dimension of a default: a number, or nrow(P) / ncol(P) of a
    parameter given in this call (its marker's shape)."""
    m = re.fullmatch(r"(nrow|ncol)\(([A-Za-z_][A-Za-z0-9_]*)\)", text)
    if not m:
        return int(float(text))
    v = given.get(m.group(2))
    mm = v and re.fullmatch(r"(?:matrix|frame) (\d+)x(\d+) .*", v)
    if not mm:
        raise ValueError("default uses %s of %s, which the call does not give" % (m.group(1), m.group(2)))
    return int(mm.group(1 if m.group(1) == "nrow" else 2))


def default_value(t, d, given):
    """The report's value of SystemDS's default d (dmlsig's normalized
    text) for a parameter of type t; given: {param: report value} of the
    call's arguments (a default may use them). ValueError for a default
    this function cannot evaluate (a new form: extend it)."""
    b = base_type(t)
    if d in ("TRUE", "FALSE"):
        return "boolean " + d
    if len(d) >= 2 and d[0] == d[-1] == '"':
        return ('frame 1x1 ' + d) if b == "frame" else "string " + d
    if b in ("int", "double") and re.fullmatch(r"[-+0-9.eE]+", d):
        return "int %d" % int(float(d)) if b == "int" else "double %s" % num_text(float(d))
    if b == "int":
        m = re.fullmatch(r"(nrow|ncol)\(([A-Za-z_][A-Za-z0-9_]*)\)", d)
        if m:
            return "int %d" % _dim(d, given)
    m = re.fullmatch(r"matrix\(([^,]+),rows=(.+),cols=(.+)\)", d)
    if m and b == "matrix":
        r, c = _dim(m.group(2), given), _dim(m.group(3), given)
        return "matrix %dx%d %s" % (r, c, num_text(float(m.group(1))) if r and c else "-")
    m = re.fullmatch(r"as\.matrix\(([-+0-9.eE]+)\)", d)
    if m and b == "matrix":
        return "matrix 1x1 %s" % num_text(float(m.group(1)))
    m = re.fullmatch(r'as\.frame\(("[^"]*")\)', d)
    if m and b == "frame":
        return "frame 1x1 %s" % m.group(1)
    if d == "list()" and b == "list":
        return "list 0 ()"
    raise ValueError("cannot evaluate default %s of type %s" % (d, t))


def calls_of(name, params, outs):
    """The calls that check builtin name (SystemDS's params and outputs)."""
    nb = sum(1 for t, _, _ in params if base_type(t) == "boolean")
    code, c = {}, 0
    for t, n, _ in params:
        if base_type(t) == "boolean":
            c += 1
            code[n] = c
    nbits = max(1, nb.bit_length())
    calls = []

    def given_markers(bit):
        return {n: marker(t, k + 1, (code.get(n, 1) >> bit) & 1) for k, (t, n, _) in enumerate(params)}

    for bit in range(nbits):
        g = given_markers(bit)
        calls.append(Call(name, "positional" if nbits == 1 else "positional %d" % (bit + 1),
                          [g[n][0] for _, n, _ in params], {n: g[n][1] for n in g}, len(outs)))
    g = given_markers(0)
    calls.append(Call(name, "named", ["%s=%s" % (n, g[n][0]) for _, n, _ in reversed(params)],
                      {n: g[n][1] for n in g}, len(outs)))
    req = [(t, n, d) for t, n, d in params if d is None]
    gr = {n: g[n][1] for _, n, _ in req}
    expect = dict(gr)
    for t, n, d in params:
        if d is not None:
            expect[n] = default_value(t, d, gr)
    calls.append(Call(name, "named, defaults", ["%s=%s" % (n, g[n][0]) for _, n, _ in req], expect, len(outs)))
    return calls


def parse_value(text):
    """A report value into a comparable form: numbers of double values as
    floats, everything else as text."""
    if text.startswith("double "):
        return ("double", float(text[7:].replace("Infinity", "inf")))
    m = re.fullmatch(r"matrix (\d+)x(\d+) (.*)", text)
    if m:
        return ("matrix", int(m.group(1)), int(m.group(2)), m.group(3) if m.group(3) == "-" else float(m.group(3)))
    return ("text", text)


def same_value(want, got):
    a, b = parse_value(want), parse_value(got)
    if a[0] != b[0]:
        return False
    if a[0] == "double":
        return a[1] == b[1] or (math.isfinite(a[1]) and abs(a[1] - b[1]) <= 1e-15 * abs(a[1]))
    return a == b


def parse_report(line):
    """A `bind` line -> (function, {param: value}, [output types])."""
    parts = line.split("|")
    head = parts[0].split(" ")
    params, outs, after = {}, [], False
    for p in parts[1:]:
        if p == "->":
            after = True
        elif after:
            outs.append(p.split(" ")[0])
        else:
            n, _, v = p.partition("=")
            params[n] = v
    return head[1], params, outs


def judge(call, report, outs):
    """Differences of one call's report from what SystemDS binds."""
    func, got, gouts = report
    diffs = []
    if func not in (call.name, "m_" + call.name, "s_" + call.name, "f_" + call.name):
        diffs.append("the call ran function %s" % func)
    for n, want in call.expect.items():
        if n not in got:
            diffs.append("no parameter '%s'" % n)
        elif not same_value(want, got[n]):
            diffs.append("'%s' received %s, SystemDS: %s" % (n, got[n], want))
    if len(gouts) != len(outs):
        diffs.append("%d outputs, SystemDS: %d" % (len(gouts), len(outs)))
    else:
        for (t, n), g in zip(outs, gouts):
            if base_type(t) != g:
                diffs.append("output %s is %s, SystemDS: %s" % (n, g, base_type(t)))
    return ["%s call: %s" % (call.kind, "; ".join(diffs))] if diffs else []


def run_batch(binary, calls):
    """Runs calls (a list of Call) in one script. Returns (status, reports
    per call: a bind line or None, {call index: compile error}, stderr)."""
    lines, at = [], {}
    for i, c in enumerate(calls):
        lines.append('print("call %d")' % i)
        at[len(lines) + 1] = i
        lines.append(c.statement(i))
    fd, path = tempfile.mkstemp(suffix=".dml", prefix="braid_callsig_")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        status, out, err = runner.execute([binary, "-bindcheck", "-f", path])
    finally:
        os.unlink(path)
    errors = {}
    for m in re.finditer(r"(?m)^%s:(\d+):\d+: error: (.*)$" % re.escape(path), err):
        i = at.get(int(m.group(1)))
        if i is not None:
            errors.setdefault(i, m.group(2))
    reports, cur = [None] * len(calls), None
    for line in out.splitlines():
        m = re.fullmatch(r"call (\d+)", line)
        if m:
            cur = int(m.group(1))
        elif line.startswith("bind ") and cur is not None:
            reports[cur] = line if reports[cur] is None else reports[cur] + "\n" + line
    return status, reports, errors, err


def check(binary, table, names=None):
    """{builtin: [differences]} for the builtins of table ({name: (params
    text, outputs text)}, signatures.tsv) or those in names; an empty list
    where every call binds as in SystemDS."""
    names = sorted(table) if names is None else sorted(names)
    result, calls = {}, []
    for name in names:
        params = dmlsig.parse_params(table[name][0])
        outs = dmlsig.parse_outputs(table[name][1])
        result[name] = []
        try:
            calls += [(c, params, outs) for c in calls_of(name, params, outs)]
        except ValueError as e:
            result[name].append(str(e))
    run_isolated(binary, [c for c in calls if not result[c[0].name]], result)
    return result


def run_isolated(binary, calls, result):
    """Runs calls ([(Call, params, outputs)]) in as few braid runs as one
    builtin's failure allows: a builtin whose call lines have compile
    errors fails and the others run again without it; an error elsewhere
    (in a library file the calls load) splits the builtins in halves until
    each failing builtin runs alone."""
    while calls:
        status, reports, errors, err = run_batch(binary, [c for c, _, _ in calls])
        if errors:
            failed = {calls[i][0].name for i in errors}
            for i, msg in sorted(errors.items()):
                result[calls[i][0].name].append("%s call does not compile: %s" % (calls[i][0].kind, msg))
            calls = [c for c in calls if c[0].name not in failed]
            continue
        names = sorted({c.name for c, _, _ in calls})
        if status == 0 or len(names) == 1:
            judge_batch(result, calls, status, reports, err)
            return
        half = set(names[:len(names) // 2])
        run_isolated(binary, [c for c in calls if c[0].name in half], result)
        calls = [c for c in calls if c[0].name not in half]


def judge_batch(result, calls, status, reports, err):
    """Adds the differences of one batch's calls to result."""
    for i, (c, params, outs) in enumerate(calls):
        if status != 0:
            if not result[c.name]:
                result[c.name].append("its calls failed: %s" % runner.one_line(err))
        elif reports[i] is None:
            # a native builtin of the same name ran (no binding to see):
            # only a single parameter cannot bind wrongly
            if len(params) > 1:
                result[c.name].append("%s call ran braid's native builtin, not the library's" % c.kind)
        elif "\n" in reports[i]:
            result[c.name].append("%s call reported %d calls" % (c.kind, reports[i].count("\n") + 1))
        else:
            result[c.name] += judge(c, parse_report(reports[i]), outs)
