#!/usr/bin/env python3
"""Cold versus warm kernel cache on the e2e benchmark's rows.

Usage: cold.py BRAID OUTDIR [--scale F] [--only REGEX] [--reps N] [--noset]
  BRAID   the braid binary (its prebuilt kernel set, BRAID's folder's
          kernels/, is used as braid finds it)
  OUTDIR  where e2e-cold-<date>.txt is written
  --scale F   multiply every row count by F (run.py's rows; default 0.5)
  --only R    only the rows whose name matches the regular expression
  --reps N    cold/warm pairs per row (default 5)
  --noset     add a third run per pair: an empty cache and no prebuilt
              set (BRAID_KERNELS=none), i.e. what a cold run compiles
              without the set

Each row runs bench/e2e/<alg>.dml with 2 threads and -stats, N times
each way, in the order cold, warm, warm, cold, cold, warm, ... (ABBA, so
that a drift of the machine's load cancels):
  cold   XDG_CACHE_HOME a new empty folder (deleted after the run): no
         kernel cache, no machine constants
  warm   XDG_CACHE_HOME a folder of this driver's own that holds the
         prebuilt set's machine constants (those of the cold runs, so
         both plan alike and neither measures the machine) and that one
         unreported run (with BRAID_KERNELS=none) filled first with every
         operator compiled, so a warm run loads all of them from there
The table gives per row the median wall time of each way, the median of
the per-pair differences cold - warm ("cold+", the e2e table's column,
there taken from one unrepeated pair), its spread (min..max), the same
median of user + system CPU seconds ("cpu+", wait4's, the compiler
processes braid waited for included: less sensitive to other jobs than
wall time; compiles braid leaves running at its exit are not in it), and from
-stats of the cold runs: compiler processes started ("cc"), seconds
the kernel compiles took ("JC"), operators loaded from the prebuilt set
("pre") and from the disk cache ("disk"). With --noset the same for
the runs without the set.
"""

import datetime
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import ROWS, THREADS, parse_opts, run_one  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def stat(out, pat, idx=0, conv=int):
    m = re.search(pat, out)
    return conv(m.group(1 + idx)) if m else conv(0)


def stats_of(out):
    return {"cc": stat(out, r"Codegen compiler runs:\s*(\d+)"),
            "jc": stat(out, r"Codegen compile times \(DAG, JC\):\s*[0-9.]+/([0-9.]+)", conv=float),
            "pre": stat(out, r"Codegen prebuilt kernels loaded:\s*(\d+)"),
            "disk": stat(out, r"Codegen plan cache \(hits, disk\):\s*\d+/(\d+)"),
            "fail": stat(out, r"Codegen failed compiles, fallbacks:\s*(\d+)")}


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    braid, outdir = os.path.abspath(argv[1]), argv[2]
    o = parse_opts(argv[3:], {"--scale": float, "--only": re.compile, "--reps": int, "--noset": None},
                   {"--scale": 0.5, "--reps": 5, "--noset": False})
    if o is None:
        return 2
    scale, only, reps, noset = o["--scale"], o.get("--only"), o["--reps"], o["--noset"]
    env = dict(os.environ)
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[k] = str(THREADS)
    kernels = os.environ.get("BRAID_KERNELS") or os.path.join(os.path.dirname(braid), "kernels")
    if not os.path.isdir(kernels):
        sys.stderr.write("no prebuilt kernel set at %s (make kernels)\n" % kernels)
        return 1
    top = tempfile.mkdtemp(prefix="braid-e2e-coldwarm-")
    rows = []
    try:
        for name, alg, n, m, sp, it, _ in ROWS:
            if only and not only.search(name):
                continue
            n = max(100, int(n * scale))
            cmd = [braid, "-stats", "-f", os.path.join(HERE, alg + ".dml"), "-threads", str(THREADS),
                   "-nvargs", "n=%d" % n, "m=%d" % m, "sp=" + repr(sp), "it=%d" % it, "seed=1"]
            warm = os.path.join(top, "warm")
            shutil.rmtree(warm, ignore_errors=True)
            os.makedirs(os.path.join(warm, "braid"), mode=0o700)
            # the set's machine constants, which a cold run uses: a warm
            # cache without complete ones measures the machine (about a
            # second) in each of its first runs, and other constants may
            # choose other plans
            for f in os.listdir(kernels):
                if f.endswith(".txt"):
                    shutil.copy(os.path.join(kernels, f), os.path.join(warm, "braid", f))
            # fill the warm cache: compile everything synchronously, no set
            run_one(cmd, dict(env, XDG_CACHE_HOME=warm, BRAID_KERNELS="none", BRAID_CODEGEN_ASYNC="0"))
            ways = ["cold", "warm"] + (["noset"] if noset else [])
            res = {w: [] for w in ways}
            for r in range(reps):
                order = ways if r % 2 == 0 else ways[::-1]
                for w in order:
                    e = dict(env)
                    tmp = None
                    if w == "warm":
                        e["XDG_CACHE_HOME"] = warm
                    else:
                        tmp = tempfile.mkdtemp(dir=top)
                        e["XDG_CACHE_HOME"] = tmp
                        if w == "noset":
                            e["BRAID_KERNELS"] = "none"
                    cpu = []
                    alg_s, wall, _, out = run_one(cmd, e, cpu)
                    if tmp:
                        shutil.rmtree(tmp, ignore_errors=True)
                    if alg_s is None:
                        sys.stderr.write("%s %s failed:\n%s\n" % (name, w, out[-2000:]))
                        return 1
                    s = stats_of(out)
                    s["wall"], s["alg"], s["cpu"] = wall, alg_s, cpu[0]
                    res[w].append(s)
                    sys.stderr.write("%-20s %-5s wall %6.3f cpu %6.3f alg %6.3f cc %d jc %.3f pre %d disk %d\n"
                                     % (name, w, wall, cpu[0], alg_s, s["cc"], s["jc"], s["pre"], s["disk"]))
            rows.append((name, n, m, sp, res))
    finally:
        shutil.rmtree(top, ignore_errors=True)

    def med(xs):
        return statistics.median(xs) if xs else float("nan")

    stamp = datetime.datetime.now().strftime("%Y-%m-%d-%H%M")
    lines = ["braid cold vs warm kernel cache, %s, %d threads, scale %g, %d pairs per row, load %.1f"
             % (stamp, THREADS, scale, reps, os.getloadavg()[0]),
             "wall: process wall time, median of the runs (s); cold+: median of cold - warm per pair (s),"
             " [min..max]; cpu+: the same of user + system CPU seconds (compiler processes included; less"
             " sensitive to other jobs' load than wall time); cc/JC/pre/disk: medians over the cold runs of compiler processes, kernel"
             " compile seconds, prebuilt-set loads, disk-cache loads (-stats)"]
    hdr = "%-20s %-22s %7s %7s %7s %15s %7s %4s %6s %4s %4s" % (
        "algorithm", "data", "warm", "cold", "cold+", "[min..max]", "cpu+", "cc", "JC", "pre", "disk")
    if noset:
        hdr += " %7s %7s %4s %6s" % ("noset", "nset+", "cc", "JC")
    lines += [hdr, "-" * len(hdr)]
    for name, n, m, sp, res in rows:
        c, w = res["cold"], res["warm"]
        d = [a["wall"] - b["wall"] for a, b in zip(c, w)]
        data = "%dx%d%s" % (n, m, "" if sp >= 1 else " sp=%g" % sp)
        line = "%-20s %-22s %7.3f %7.3f %7.3f %15s %7.3f %4d %6.3f %4d %4d" % (
            name, data, med([x["wall"] for x in w]), med([x["wall"] for x in c]), med(d),
            "[%.2f..%.2f]" % (min(d), max(d)), med([a["cpu"] - b["cpu"] for a, b in zip(c, w)]),
            med([x["cc"] for x in c]), med([x["jc"] for x in c]),
            med([x["pre"] for x in c]), med([x["disk"] for x in c]))
        if noset:
            ns = res["noset"]
            line += " %7.3f %7.3f %4d %6.3f" % (
                med([x["wall"] for x in ns]), med([a["wall"] - b["wall"] for a, b in zip(ns, w)]),
                med([x["cc"] for x in ns]), med([x["jc"] for x in ns]))
        lines.append(line)
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "e2e-cold-%s.txt" % stamp), "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
