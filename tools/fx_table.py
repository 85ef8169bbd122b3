#!/usr/bin/env python3
"""MPSkipEnum vs FusionStitching's explorer over whole scripts' DAGs.

Reads files of lines that braid appends with BRAID_FX_COMPARE=path set
(codegen/fxselect.c, cg_fx_log: one line per plan partition of every DAG
codegen optimizes) and prints one table row per file (the file's name
without its extension: e.g. one file per algorithm script) and a total.
Exits 1 when a file has no partition, when an explorer plan is invalid
(a fused kernel not connected, an opaque vertex fused, a cycle among the
kernels: gpu/explore.c fx_valid) or when a comparison ran out of memory.

usage: tools/fx_table.py FILE...
"""
import os
import sys

COLS = ("hops", "pts", "valid", "mk", "fk", "fok", "mcut", "fcut",
        "mcost", "fcost", "mlat", "flat", "folat", "mns", "fns")


def read(path):
    rows, bad = [], []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            p = line.rstrip("\n").split("\t")
            if p[0] != "fx" or len(p) != len(COLS) + 1:
                bad.append("%s:%d: %s" % (path, n, line.strip()))
                continue
            rows.append(dict(zip(COLS, (float(x) for x in p[1:]))))
    return rows, bad


def summary(name, rows):
    s = {k: sum(r[k] for r in rows) for k in COLS}
    worse = sum(1 for r in rows if r["fcost"] > r["mcost"] * (1 + 1e-9))
    better = sum(1 for r in rows if r["fcost"] * (1 + 1e-9) < r["mcost"])
    return ("| %s | %d | %d | %d / %d (%d) | %d / %d | %.4g / %.4g | %.4g / %.4g (%.4g) | %d / %d | %.0f / %.0f |"
            % (name, len(rows), s["pts"], s["mk"], s["fk"], s["fok"], s["mcut"], s["fcut"],
               s["mcost"], s["fcost"], s["mlat"], s["flat"], s["folat"], worse, better, s["mns"], s["fns"]))


def main(paths):
    if not paths:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    print("| script | partitions | points | kernels MPSkip / FX (FX's own) | cut MPSkip / FX "
          "| getPlanCost us MPSkip / FX | FX latency us MPSkip / FX (FX's own) | FX costlier / cheaper "
          "| optimize us MPSkip / FX |")
    print("|---|---|---|---|---|---|---|---|---|")
    every, errors = [], []
    for path in paths:
        rows, bad = read(path)
        errors += bad
        name = os.path.splitext(os.path.basename(path))[0]
        if not rows:
            errors.append("%s: no plan partition compared" % path)
            continue
        errors += ["%s: an invalid explorer plan (%d hops, %d points)" % (path, r["hops"], r["pts"])
                   for r in rows if r["valid"] != 1]
        every += rows
        if len(paths) > 1:
            print(summary(name, rows))
    if every:
        print(summary("all", every))
    for e in errors:
        print("error: " + e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
