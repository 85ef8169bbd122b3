#!/usr/bin/env python3
"""Codegen overhead per algorithm script, cold and warm plan cache.

Usage: bench/bench_codegen_cold.sh [BRAID] [REPS] [FILTER] [-- EXTRA ARGS]

Runs every tests/dml/cases/alg_*.dml except the error cases (alg_err_*),
with tests/dml as working directory, in three settings:
  off   -config configs/codegen_off.xml (every operator unfused)
  cold  codegen on, XDG_CACHE_HOME a fresh empty directory per run (no
        compiled operators, no machine calibration on disk)
  warm  codegen on, the disk cache the last cold run filled (after its
        compiles ended: in asynchronous mode those still running at exit
        finish and publish in the background)
Each setting runs REPS times (default 3); the table shows the best wall
time (measured around the process), the least CPU time (user + system of
braid and the compilers it waited for: steadier than wall time on a busy
machine) and, for cold and warm, the codegen lines of -stats of the
fastest run: DAG = exploration + selection time (cold includes measuring
the machine once), JC = compile + load time (asynchronous mode: only what
ended before -stats printed), ops = operators compiled, cc = compiler
processes, disk = operators loaded from the disk cache. "ovh" is the wall
time minus codegen-off's.
EXTRA ARGS (e.g. -config x.xml) are added to the cold and warm runs;
BRAID_CODEGEN_ASYNC etc. pass through the environment.
"""
import glob
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DML = os.path.join(ROOT, "tests", "dml")


def run(braid, case, args, cache, out):
    env = dict(os.environ, XDG_CACHE_HOME=cache)
    cmd = [braid, "-stats"] + args + ["-f", case, "-nvargs", "out=" + out]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=DML, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    dt = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    s = p.stdout
    st = {"wall": dt, "cpu": cpu, "rc": p.returncode}
    m = re.search(r"Codegen compile times \(DAG, JC\):\s*([\d.]+)/([\d.]+)", s)
    if m:
        st["dag"], st["jc"] = float(m.group(1)), float(m.group(2))
    m = re.search(r"Codegen compile \(DAG, CP, JC\):\s*(\d+)/(\d+)/(\d+)", s)
    if m:
        st["ops"] = int(m.group(3))
    m = re.search(r"Codegen compiler runs:\s*(\d+)", s)
    if m:
        st["cc"] = int(m.group(1))
    m = re.search(r"Codegen plan cache \(hits, disk\):\s*(\d+)/(\d+)", s)
    if m:
        st["disk"] = int(m.group(2))
    return st


def quiet(cache):
    """Waits (at most 60 s) until no compile works in cache: in
    asynchronous mode compiles left running at exit still publish."""
    d = os.path.join(cache, "braid")
    for _ in range(600):
        if not os.path.isdir(d) or not any(f.startswith("tmp.") for f in os.listdir(d)):
            return
        time.sleep(0.1)


def best(runs):
    return min(runs, key=lambda r: r["wall"])


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        k = argv.index("--")
        argv, extra = argv[:k], argv[k + 1:]
    braid = os.path.abspath(argv[0]) if argv else os.path.join(ROOT, "build", "braid")
    reps = int(argv[1]) if len(argv) > 1 else 3
    filt = re.compile(argv[2]) if len(argv) > 2 else None
    cases = sorted(glob.glob(os.path.join(DML, "cases", "alg_*.dml")))
    cases = [c for c in cases if not os.path.basename(c).startswith("alg_err_")]
    if filt:
        cases = [c for c in cases if filt.search(os.path.basename(c))]
    tmp = tempfile.mkdtemp(prefix="braid-cgcold-")
    out = os.path.join(tmp, "out")
    os.mkdir(out)
    hdr = ("%-26s %6s %6s | %6s %6s %6s %6s %6s %4s %4s | %6s %6s %6s %6s %5s %6s"
           % ("script", "off s", "cpu", "cold s", "cpu", "DAG", "JC", "ovh", "ops", "cc", "warm s", "cpu", "DAG",
              "JC", "disk", "ovh"))
    print("braid %s, reps %d, extra args %s, async=%s" % (braid, reps, " ".join(extra) or "-",
                                                         os.environ.get("BRAID_CODEGEN_ASYNC", "0")))
    print(hdr)
    print("-" * len(hdr))
    tot = {"off": 0.0, "cold": 0.0, "warm": 0.0, "cjc": 0.0, "cdag": 0.0, "wjc": 0.0, "wdag": 0.0,
           "offc": 0.0, "coldc": 0.0, "warmc": 0.0}
    for case in cases:
        name = os.path.basename(case)[:-4]
        rel = os.path.relpath(case, DML)
        offs = [run(braid, rel, ["-config", "configs/codegen_off.xml"], tmp, out) for _ in range(reps)]
        off = best(offs)
        colds = []
        cache = None
        for _ in range(reps):
            if cache:
                shutil.rmtree(cache, ignore_errors=True)
            cache = tempfile.mkdtemp(dir=tmp)
            colds.append(run(braid, rel, extra, cache, out))
            quiet(cache)
        cold = best(colds)
        warms = []
        for _ in range(reps):
            warms.append(run(braid, rel, extra, cache, out))
            quiet(cache)
        warm = best(warms)
        shutil.rmtree(cache, ignore_errors=True)
        bad = [r for r in [off, cold, warm] if r["rc"] != 0]
        offc = min(r["cpu"] for r in offs)
        coldc = min(r["cpu"] for r in colds)
        warmc = min(r["cpu"] for r in warms)
        print("%-26s %6.3f %6.3f | %6.3f %6.3f %6.3f %6.3f %6.3f %4d %4s | %6.3f %6.3f %6.3f %6.3f %5d %6.3f %s"
              % (name[:26], off["wall"], offc, cold["wall"], coldc, cold.get("dag", 0), cold.get("jc", 0),
                 cold["wall"] - off["wall"], cold.get("ops", 0), cold.get("cc", "-"),
                 warm["wall"], warmc, warm.get("dag", 0), warm.get("jc", 0), warm.get("disk", 0),
                 warm["wall"] - off["wall"], "(exit status != 0)" if bad else ""), flush=True)
        tot["offc"] += offc
        tot["coldc"] += coldc
        tot["warmc"] += warmc
        tot["off"] += off["wall"]
        tot["cold"] += cold["wall"]
        tot["warm"] += warm["wall"]
        tot["cdag"] += cold.get("dag", 0)
        tot["cjc"] += cold.get("jc", 0)
        tot["wdag"] += warm.get("dag", 0)
        tot["wjc"] += warm.get("jc", 0)
    print("-" * len(hdr))
    print("%-26s %6.3f %6.3f | %6.3f %6.3f %6.3f %6.3f %6.3f %4s %4s | %6.3f %6.3f %6.3f %6.3f %5s %6.3f"
          % ("total", tot["off"], tot["offc"], tot["cold"], tot["coldc"], tot["cdag"], tot["cjc"],
             tot["cold"] - tot["off"], "", "", tot["warm"], tot["warmc"], tot["wdag"], tot["wjc"], "",
             tot["warm"] - tot["off"]))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
