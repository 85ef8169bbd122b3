#!/usr/bin/env python3
"""rcplans.py OUT FIRST_LINE NP: the DAGs every rank recompiled (braid
-explain recompile_hops under mpirun --tag-output) for the blocks at or
after FIRST_LINE of the script are the same plans on every rank: the same
operators (fused ones included), inputs, rows, columns and execution
types. Non-zeros and memory estimates are left out: a parfor result's
non-zeros depend on which iterations a rank ran before. Every rank must
have recompiled at least one DAG. Prints what differs; exit 1 then.

rcplans.py --lines RANK OUT: rank RANK's stdout lines, put back together.

mpirun --tag-output tags each piece of output it reads, not each line: a
rank's line that reaches mpirun in two pieces (its stdout is a terminal
that mpirun reads while the rank writes, and under load a write can be
read half) comes out as the line's start, then a tag (that rank's, or
another rank's piece with its own lines first), and the rest of the line
after a later tag of the rank. So the lines are read per rank, each
piece joined to the rank's unfinished line, before the plans are compared
(a line cut in two once read as a different plan of rank 0: CI's
"rank 1's plans differ from rank 0's")."""
import re
import sys
from collections import defaultdict

HEAD = re.compile(r"RECOMPILED DAG \((.*):(\d+)\):$")
TAG = re.compile(r"\[\d+,(\d+)\]<(stdout|stderr)>:")


def rank_lines(path):
    """{rank: [line, ...]}: each rank's stdout lines in order, its pieces
    joined; a piece is the text after a tag, up to the next tag or the
    end of the line."""
    lines = defaultdict(list)
    part = {}   # (rank, stream): the unfinished line
    for raw in open(path, errors="replace"):
        raw = raw.rstrip("\n")
        tags = list(TAG.finditer(raw))
        if not tags or tags[0].start() != 0:
            continue   # mpirun's own lines
        for i, m in enumerate(tags):
            key = (m.group(1), m.group(2))
            end = tags[i + 1].start() if i + 1 < len(tags) else len(raw)
            part[key] = part.get(key, "") + raw[m.end():end]
            if i + 1 == len(tags):   # the newline ends this rank's line
                if key[1] == "stdout":
                    lines[key[0]].append(part[key])
                del part[key]
    for key, text in part.items():
        if key[1] == "stdout":
            lines[key[0]].append(text)
    return lines


def plan_line(text):
    # "(3) *  (1,2) [1188,16,19008] 148.6KB/297.2KB DIST" -> without the
    # non-zeros and the memory estimates
    text = re.sub(r"\[(-?\d+),(-?\d+),-?\d+\]", r"[\1,\2]", text)
    return re.sub(r" \S+/\S+ (CP|DIST)$", r" \1", text)


def rank_dags(lines, first):
    """The set of a rank's recompiled DAGs at or after line FIRST."""
    dags, cur = set(), None
    for text in lines + [""]:
        h = HEAD.match(text)
        if cur is not None and (h or not text.startswith("  ")):
            dags.add("\n".join(cur))
            cur = None
        if h:
            cur = [text] if int(h.group(2)) >= first else None
        elif cur is not None:
            cur.append(plan_line(text))
    return dags


def main():
    if sys.argv[1] == "--lines":
        print("\n".join(rank_lines(sys.argv[3]).get(sys.argv[2], [])))
        return 0
    out, first, np = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    lines = rank_lines(out)
    dags = {str(r): rank_dags(lines.get(str(r), []), first) for r in range(np)}
    bad = []
    for r in range(np):
        if not dags[str(r)]:
            bad.append("rank %d recompiled nothing" % r)
        elif r > 0 and dags[str(r)] != dags["0"]:
            extra = dags[str(r)] - dags["0"]
            miss = dags["0"] - dags[str(r)]
            bad.append("rank %d's plans differ from rank 0's:\n only rank %d:\n%s\n only rank 0:\n%s"
                       % (r, r, "\n".join(sorted(extra)), "\n".join(sorted(miss))))
    if bad:
        print("\n".join(bad))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
