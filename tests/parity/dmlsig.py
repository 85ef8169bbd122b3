"""Function signatures of DML files (python3 standard library only).

signatures(text) -> [(name, params, outputs)] where params is a list of
(type, name, default-or-None) and outputs a list of (type, name), in
declaration order. Used by gen.py (SystemDS's scripts -> signatures.tsv)
and run.py (braid's scripts/builtin, checked against that table).
"""

import re

_HEAD = re.compile(r"(?m)^[ \t]*([A-Za-z_][A-Za-z0-9_.]*)\s*=\s*(function|externalFunction)\s*\(")
_PARAM = re.compile(r"^([A-Za-z]+(?:\s*\[\s*[A-Za-z]+\s*\])?)\s+([A-Za-z_][A-Za-z0-9_]*)\s*(?:=\s*(.*))?$", re.S)


def _string_end(text, i):
    """Index of the quote closing the string literal opened at text[i]."""
    j, n = i + 1, len(text)
    while j < n and text[j] != text[i]:
        j += 2 if text[j] == "\\" else 1
    return j


def strip_comments(text):
    """text with # and /* */ comments blanked (strings kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = _string_end(text, i)
            out.append(text[i:j + 1]); i = j + 1
        elif c == "#":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i)); i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j])); i = j
        else:
            out.append(c); i += 1
    return "".join(out)


def _group(text, i):
    """(inside, index after) of the parenthesized group whose '(' is at i."""
    depth, j, n = 0, i, len(text)
    while j < n:
        c = text[j]
        if c in "\"'":
            j = _string_end(text, j)
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return text[i + 1:j], j + 1
        j += 1
    raise ValueError("unbalanced parentheses")


def _split(inner):
    """Top-level comma-separated parts of inner."""
    parts, depth, cur, j, n = [], 0, [], 0, len(inner)
    while j < n:
        c = inner[j]
        if c in "\"'":
            k = _string_end(inner, j)
            cur.append(inner[j:k + 1]); j = k + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(cur)); cur = []
        else:
            cur.append(c)
        j += 1
    if "".join(cur).strip():
        parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def norm_type(t):
    t = re.sub(r"\s+", "", t).lower()
    t = {"scalar[int]": "integer", "scalar[integer]": "integer", "scalar[double]": "double",
         "scalar[boolean]": "boolean", "scalar[string]": "string"}.get(t, t)
    return {"int": "integer", "bool": "boolean", "str": "string"}.get(t, t)


_NUM = re.compile(r"(?<![A-Za-z_0-9.])[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?")


def norm_default(d):
    """A default value in a canonical text form: numbers (and constant
    number expressions such as 10^-8) numerically, matrix(v, r, c) as
    matrix(v, rows=r, cols=c), no blanks outside strings."""
    if d is None:
        return None
    d = " ".join(d.split())
    if d.upper() in ("TRUE", "FALSE"):
        return d.upper()
    if re.fullmatch(r"[-+0-9.eE^() ]+", d):
        try:
            return repr(float(eval(d.replace("^", "**"), {"__builtins__": {}})))
        except Exception:  # not a constant expression after all
            pass
    if len(d) >= 2 and d[0] == d[-1] and d[0] in "\"'":
        return '"' + d[1:-1] + '"'
    d = re.sub(r"\s+", "", d)
    m = re.fullmatch(r"matrix\(([^,=]+),([^,=]+),([^,=]+)\)", d)
    if m:
        d = "matrix(%s,rows=%s,cols=%s)" % m.groups()
    return _NUM.sub(lambda n: repr(float(n.group(0))), d)


def signatures(text):
    text = strip_comments(text)
    found = []
    for m in _HEAD.finditer(text):
        inner, k = _group(text, m.end() - 1)
        params = []
        for p in _split(inner):
            pm = _PARAM.match(p)
            if not pm:
                raise ValueError("cannot read parameter %r of %s" % (p, m.group(1)))
            params.append((norm_type(pm.group(1)), pm.group(2), norm_default(pm.group(3))))
        outs = []
        rm = re.compile(r"\s*return\s*\(").match(text, k)
        if rm:
            oinner, _ = _group(text, rm.end() - 1)
            for o in _split(oinner):
                om = _PARAM.match(o)
                if not om:
                    raise ValueError("cannot read output %r of %s" % (o, m.group(1)))
                outs.append((norm_type(om.group(1)), om.group(2)))
        found.append((m.group(1), params, outs))
    return found


def builtin_signature(fname, text):
    """The signature of builtin `fname` (file fname.dml): the function the
    loader binds (m_, s_, f_ prefix or the bare name), else None."""
    sigs = {s[0]: s for s in signatures(text)}
    for pre in ("m_", "s_", "f_", ""):
        if pre + fname in sigs:
            return sigs[pre + fname]
    return None


def format_params(params):
    return "; ".join("%s %s%s" % (t, n, "" if d is None else " = " + d) for t, n, d in params)


def format_outputs(outs):
    return "; ".join("%s %s" % o for o in outs)


def parse_params(text):
    """format_params's text back into [(type, name, default-or-None)]."""
    out = []
    for p in text.split("; ") if text else []:
        head, _, dflt = p.partition(" = ")
        t, n = head.split(" ")
        out.append((t, n, dflt if _ else None))
    return out


def parse_outputs(text):
    return [tuple(o.split(" ")) for o in text.split("; ")] if text else []
