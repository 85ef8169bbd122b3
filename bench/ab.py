#!/usr/bin/env python3
"""A/B benchmark of two braid builds on the end-to-end rows.

Usage: bench/ab.py OLD_BRAID NEW_BRAID [--scale F] [--reps K] [--only REGEX]
       bench/ab.py --onoff BRAID [--scale F] [--reps K] [--only REGEX]
       bench/ab.py --plans BRAID [--scale F] [--reps K] [--only REGEX]

Runs every row of bench/e2e/run.py (the same DML scripts and data) with
both binaries, alternating old/new K times (default 3) so that load from
other processes hits both alike, each with 2 threads and braid's default
configuration. Prints per row the best algorithm time of each build (as
the script prints it: data generation excluded) and new/old; a ratio
above 1 is a slowdown. A build that fails a row prints '-'. With --onoff
the two sides are one build with codegen off (old, bench/e2e/nocodegen.xml)
and on (new): the issue's "codegen on never slower than codegen off".
With --plans three sides of one build alternate: codegen off, codegen
under fuse_all (bench/e2e/fuseall.xml) and the default cost-based plan;
it prints the best times and cost-based / off and cost-based / fuse_all
(above 1: the cost model chose a plan slower than fusing everything)."""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "e2e"))
import run as e2e  # noqa: E402  (the rows and their arguments)


NOCG = ["-config", os.path.join(HERE, "e2e", "nocodegen.xml")]
FUSEALL = ["-config", os.path.join(HERE, "e2e", "fuseall.xml")]


def alg_time(braid, alg, nv):
    extra = []
    if braid.endswith("#nocg"):
        braid, extra = braid[:-len("#nocg")], NOCG
    elif braid.endswith("#fuseall"):
        braid, extra = braid[:-len("#fuseall")], FUSEALL
    cmd = [braid, "-f", os.path.join(HERE, "e2e", alg + ".dml"), "-threads", "2"] + extra + nv
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    m = re.search(r"RESULT alg_seconds=([0-9.eE+-]+)", p.stdout.decode("utf-8", "replace"))
    return float(m.group(1)) if m and p.returncode == 0 else None


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    with open(NOCG[1], "w") as f:
        f.write("<root><sysds.codegen.enabled>false</sysds.codegen.enabled></root>\n")
    with open(FUSEALL[1], "w") as f:
        f.write("<root><sysds.codegen.optimizer>fuse_all</sysds.codegen.optimizer></root>\n")
    if argv[1] == "--onoff":
        argv = [argv[0], os.path.abspath(argv[2]) + "#nocg"] + argv[2:]
        sides = [argv[1], os.path.abspath(argv[2])]
    elif argv[1] == "--plans":
        b = os.path.abspath(argv[2])
        sides = [b + "#nocg", b + "#fuseall", b]
    else:
        sides = [os.path.abspath(argv[1]), os.path.abspath(argv[2])]
    scale, reps, only = 0.5, 3, None
    rest = argv[3:]
    while rest:
        if rest[0] == "--scale": scale = float(rest[1])
        elif rest[0] == "--reps": reps = int(rest[1])
        elif rest[0] == "--only": only = re.compile(rest[1])
        else:
            sys.stderr.write("unknown option %s\n" % rest[0])
            return 2
        rest = rest[2:]
    os.environ["OMP_NUM_THREADS"] = os.environ["OPENBLAS_NUM_THREADS"] = "2"
    new = sides[-1]
    if len(sides) == 2:
        print("A/B: old=%s new=%s scale %g, best of %d alternated runs, 2 threads" % (sides[0], new, scale, reps))
        print("%-20s %9s %9s %8s" % ("row", "old s", "new s", "new/old"))
    else:
        print("plans of %s: codegen off, fuse_all, cost-based; scale %g, best of %d alternated runs, 2 threads"
              % (new, scale, reps))
        print("%-20s %9s %9s %9s %8s %8s" % ("row", "off s", "fuseall s", "cost s", "cost/off", "cost/fa"))
    for name, alg, n, m, sp, it, _ in e2e.ROWS:
        if only and not only.search(name):
            continue
        n = max(100, int(n * scale))
        nv = ["-nvargs", "n=%d" % n, "m=%d" % m, "sp=" + repr(sp), "it=%d" % it, "seed=1"]
        best = dict((b, None) for b in sides)
        for _ in range(reps):
            for b in sides:
                t = alg_time(b, alg, nv)
                if t is not None and (best[b] is None or t < best[b]):
                    best[b] = t
        w = best[new]
        cols = ["%.3f" % best[b] if best[b] else "-" for b in sides]
        ratios = ["%.3f" % (w / best[b]) if best[b] and w else "-" for b in sides[:-1]]
        if len(sides) == 2:
            print("%-20s %9s %9s %8s" % tuple([name] + cols + ratios), flush=True)
        else:
            print("%-20s %9s %9s %9s %8s %8s" % tuple([name] + cols + ratios), flush=True)
    return 0

if __name__ == "__main__":
    sys.exit(main(sys.argv))
