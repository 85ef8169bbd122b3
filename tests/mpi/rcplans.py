#!/usr/bin/env python3
"""rcplans.py OUT FIRST_LINE NP: the DAGs every rank recompiled (braid
-explain recompile_hops under mpirun --tag-output) for the blocks at or
after FIRST_LINE of the script are the same plans on every rank: the same
operators (fused ones included), inputs, rows, columns and execution
types. Non-zeros and memory estimates are left out: a parfor result's
non-zeros depend on which iterations a rank ran before. Every rank must
have recompiled at least one DAG. Prints what differs; exit 1 then."""
import re
import sys
from collections import defaultdict

HEAD = re.compile(r"RECOMPILED DAG \((.*):(\d+)\):$")
TAG = re.compile(r"\[\d+,(\d+)\]<stdout>:(.*)")


def plan_line(text):
    # "(3) *  (1,2) [1188,16,19008] 148.6KB/297.2KB DIST" -> without the
    # non-zeros and the memory estimates
    text = re.sub(r"\[(-?\d+),(-?\d+),-?\d+\]", r"[\1,\2]", text)
    return re.sub(r" \S+/\S+ (CP|DIST)$", r" \1", text)


def main():
    out, first, np = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    dags = defaultdict(set)
    cur = {}   # per rank: the DAG being read (ranks' lines interleave)

    def close(rank):
        if cur.get(rank):
            dags[rank].add("\n".join(cur[rank]))
        cur[rank] = None

    for raw in open(out, errors="replace"):
        m = TAG.match(raw.rstrip("\n"))
        if not m:
            continue
        rank, text = m.group(1), m.group(2)
        h = HEAD.match(text)
        if h:
            close(rank)
            cur[rank] = [text] if int(h.group(2)) >= first else None
        elif cur.get(rank) and text.startswith("  "):
            cur[rank].append(plan_line(text))
        else:
            close(rank)
    for rank in list(cur):
        close(rank)
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
