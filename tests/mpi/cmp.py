#!/usr/bin/env python3
"""cmp.py REF OUT NAME...: compares csv matrices REF+NAME and OUT+NAME:
each cell within 1e-10 of the reference relative to the reference's
largest finite magnitude (distributed sums add in another order); a NaN
or an infinity must be the same in both (IEEE products over zeros, issue
23: NaN in every plan, never a finite number). A folder
(a distributed write's part files) is read as its parts in name order.
Prints one line per mismatch; exit status 1 if any.

cmp.py --batch LIST: one comparison per line of LIST, tab-separated
(CASE, REF, OUT, then the NAMEs), all in one process (run.sh queues its
comparisons: one interpreter start instead of one per case). Prints
"ok CASE" or "FAIL CASE: MISMATCHES" per line; exit status 0."""
import math
import os
import sys

def lines(path):
    if not os.path.isdir(path):
        with open(path) as f:
            return f.read().splitlines()
    out = []
    for n in sorted(os.listdir(path)):
        if not n.startswith(('.', '_')):
            out += lines(os.path.join(path, n))
    return out

def load(path):
    ls = [line for line in lines(path) if line.strip()]
    if ls and ls[0].split(',')[0] == 'C1':   # a csv header
        ls = ls[1:]
    return [[float(x) for x in line.split(',')] for line in ls]

def compare(ref, out, names):
    """The mismatch lines of REF+NAME against OUT+NAME for every NAME."""
    msgs = []
    for n in names:
        try:
            a, b = load(ref + n), load(out + n)
        except (OSError, ValueError) as e:
            msgs.append('FAIL %s: %s' % (n, e)); continue
        if len(a) != len(b) or any(len(x) != len(y) for x, y in zip(a, b)):
            msgs.append('FAIL %s: shape differs' % n); continue
        pairs = [(x, y) for ra, rb in zip(a, b) for x, y in zip(ra, rb)]
        odd = [(x, y) for x, y in pairs if not (math.isfinite(x) and math.isfinite(y))]
        diff = [(x, y) for x, y in odd if not (x == y or (math.isnan(x) and math.isnan(y)))]
        if diff:
            msgs.append('FAIL %s: non-finite cells differ (%d, first %r)' % (n, len(diff), diff[0])); continue
        fin = [(x, y) for x, y in pairs if math.isfinite(x) and math.isfinite(y)]
        scale = max([1.0] + [abs(x) for x, _ in fin])
        worst = max([0.0] + [abs(x - y) for x, y in fin])
        if not worst <= 1e-10 * scale:
            msgs.append('FAIL %s: differs by %g (scale %g)' % (n, worst, scale))
    return msgs

def main():
    if sys.argv[1] == '--batch':
        with open(sys.argv[2]) as f:
            for line in f.read().splitlines():
                case, ref, out, *names = line.split('\t')
                msgs = compare(ref, out, names)
                print('FAIL %s: %s' % (case, ' '.join(msgs)) if msgs else 'ok ' + case)
        return
    msgs = compare(sys.argv[1], sys.argv[2], sys.argv[3:])
    for m in msgs:
        print(m)
    sys.exit(1 if msgs else 0)

main()
