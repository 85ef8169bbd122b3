#!/usr/bin/env python3
"""End-to-end benchmark driver: braid vs NumPy/SciPy vs scikit-learn vs R.

Usage: run.py BRAID OUTDIR [--scale F] [--only REGEX]
  BRAID   the braid binary
  OUTDIR  where e2e-<date>.txt and e2e-<date>.json are written
  --scale F   multiply every row count by F (e.g. 0.1 for a quick run)
  --only R    run only the rows whose name matches the regular expression

Every (algorithm, data) row runs once per system, each in its own process
with 2 threads (braid -threads 2; OMP/OpenBLAS threads 2 for the peers):
  braid        bench/e2e/<alg>.dml with braid's default configuration
  braid-nocg   the same without code generation (sysds.codegen.enabled)
  numpy        bench/e2e/peers.py numpy: the same algorithm in NumPy/SciPy
  sklearn      bench/e2e/peers.py sklearn: the closest scikit-learn
               estimator, where there is one (a different algorithm)
  r            Rscript bench/e2e/peers.R: R's own function (lm by normal
               equations, glm.fit, stats::kmeans) or the same algorithm
               in vectorized R (l2svm, mlogreg, als, autoencoder), where
               there is one (R_PEERS); bench/e2e/agree.sh checks that the
               vectorized ones compute what braid computes
braid also runs first with an empty kernel cache (XDG_CACHE_HOME a new
temporary folder): "cold+" is its wall time minus the warm run's, less
that run's second algorithm run (one pair, unrepeated: bench/e2e/cold.py
measures it over alternated pairs).
Bounds: before each row, bench/rates (built next to BRAID, in
BRAID's build folder: build/bench/rates) measures the in-run STREAM read
and dgemm rates; braid runs with BRAID_BOUND set to them and prints the
physical bound of the plan it ran between the last two time() calls (the
sum over executed instructions of max(bytes read and written / read
rate, FLOPs / dgemm rate), runtime/bound.h); the table shows it as
"bound" and braid / bound ("br/bnd"; docs/perf.md). That run passes
warm=1: the script runs the algorithm a second time in the same process
("2nd", and "2nd/bnd"; the bound is that run's, the same plan): the
first run pays for new memory (on this project's VM about 1-3 ms per MB,
docs/DESIGN.md "Buffer pools") and for compiling the functions' plans
and loading their operators, the second reuses them.
It records the algorithm's own time (printed by the script, data
generation excluded), the process's wall time and its peak resident set
size (from wait4), and prints a table with the ratios braid / numpy and
braid / sklearn and braid / R of the algorithm times.
"""

import datetime
import json
import os
import re
import shutil
import subprocess
import tempfile
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = os.environ.get("BRAID_BENCH_PYTHON", "/usr/bin/python3")
RSCRIPT = os.environ.get("BRAID_BENCH_RSCRIPT", "/usr/bin/Rscript")
THREADS = 2

# name, algorithm, n, m, sparsity, iterations, has sklearn peer
ROWS = [
    ("L2SVM dense", "l2svm", 1000000, 100, 1.0, 10, True),
    ("L2SVM sparse", "l2svm", 1000000, 1000, 0.01, 10, True),
    ("MLogreg dense", "mlogreg", 500000, 100, 1.0, 3, True),
    ("MLogreg sparse", "mlogreg", 500000, 1000, 0.01, 3, True),
    ("GLM probit dense", "glm", 500000, 100, 1.0, 3, False),
    ("GLM probit sparse", "glm", 500000, 1000, 0.01, 3, False),
    ("KMeans k=5 dense", "kmeans", 1000000, 100, 1.0, 10, True),
    ("ALS-CG r=20 sparse", "als", 10000, 2000, 0.01, 3, False),
    ("AutoEncoder dense", "autoencoder", 20000, 100, 1.0, 1, True),
    ("lm dense", "lm", 1000000, 100, 1.0, 1, True),
    ("lm sparse", "lm", 1000000, 1000, 0.01, 1, True),
    ("L2SVM tall", "l2svm", 10000000, 10, 1.0, 10, True),
    ("GLM probit tall", "glm", 10000000, 10, 1.0, 3, False),
    ("KMeans k=5 tall", "kmeans", 10000000, 10, 1.0, 10, True),
    ("lm tall", "lm", 10000000, 10, 1.0, 1, True),
]

# (algorithm, dense only) with an R peer in peers.R: glm.fit and
# stats::kmeans take dense matrices only (the autoencoder row is dense).
R_PEERS = {"lm": False, "l2svm": False, "mlogreg": False, "glm": True, "kmeans": True,
           "als": False, "autoencoder": True}

NOCG_CONFIG = os.path.join(HERE, "nocodegen.xml")


def run_one(cmd, env, cpu=None):
    """Runs cmd; returns (alg_seconds or None, wall seconds, peak RSS MB,
    output); a list `cpu` gets the process's user + system CPU seconds
    (its compiler children's included) appended."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    out = proc.stdout.read().decode("utf-8", errors="replace")
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if cpu is not None:
        cpu.append(ru.ru_utime + ru.ru_stime)
    m = re.search(r"RESULT alg_seconds=([0-9.eE+-]+)", out)
    alg = float(m.group(1)) if m and status == 0 else None
    return alg, wall, ru.ru_maxrss / 1024.0, out


def rates(braid, env):
    """In-run (read GB/s, dgemm GFLOP/s) from bench/rates, or None."""
    tool = os.path.join(os.path.dirname(braid), "bench", "rates")
    try:
        out = subprocess.run([tool], env=env, capture_output=True, text=True, timeout=120).stdout.split()
        return float(out[0]), float(out[1])
    except (OSError, ValueError, IndexError, subprocess.TimeoutExpired):
        return None


def fmt(v, spec="%.2f"):
    return "-" if v is None else spec % v


def parse_opts(rest, kinds, defaults):
    """Options --NAME VALUE (kinds: NAME -> converter of VALUE; None: a
    flag without value, True when given) over defaults; None (after a
    message) on an unknown option."""
    o = dict(defaults)
    while rest:
        if rest[0] not in kinds:
            sys.stderr.write("unknown option %s\n" % rest[0])
            return None
        conv = kinds[rest[0]]
        o[rest[0]] = True if conv is None else conv(rest[1])
        rest = rest[1 if conv is None else 2:]
    return o


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    braid, outdir = os.path.abspath(argv[1]), argv[2]
    o = parse_opts(argv[3:], {"--scale": float, "--only": re.compile}, {"--scale": 1.0})
    if o is None:
        return 2
    scale, only = o["--scale"], o.get("--only")
    env = dict(os.environ)
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[k] = str(THREADS)
    with open(NOCG_CONFIG, "w") as f:
        f.write("<root><sysds.codegen.enabled>false</sysds.codegen.enabled></root>\n")

    results = []
    for name, alg, n, m, sp, it, has_sk in ROWS:
        if only and not only.search(name):
            continue
        n = max(100, int(n * scale))
        args = [str(n), str(m), repr(sp), str(it), "1"]
        nv = ["-nvargs", "n=" + args[0], "m=" + args[1], "sp=" + args[2], "it=" + args[3], "seed=1"]
        systems = [
            ("braid-cold", [braid, "-f", os.path.join(HERE, alg + ".dml"), "-threads", str(THREADS)] + nv),
            ("braid", [braid, "-f", os.path.join(HERE, alg + ".dml"), "-threads", str(THREADS)] + nv + ["warm=1"]),
            ("braid-nocg", [braid, "-f", os.path.join(HERE, alg + ".dml"), "-threads", str(THREADS),
                            "-config", NOCG_CONFIG] + nv),
            ("numpy", [PYTHON, os.path.join(HERE, "peers.py"), "numpy", alg] + args),
        ]
        if has_sk:
            systems.append(("sklearn", [PYTHON, os.path.join(HERE, "peers.py"), "sklearn", alg] + args))
        if alg in R_PEERS and (sp >= 1 or not R_PEERS[alg]) and os.path.exists(RSCRIPT):
            systems.append(("r", [RSCRIPT, os.path.join(HERE, "peers.R"), alg] + args))
        row = {"name": name, "alg": alg, "n": n, "m": m, "sparsity": sp, "iterations": it}
        rt = rates(braid, env)
        benv = dict(env)
        if rt:
            row["rates"] = {"read_gbs": rt[0], "gemm_gfs": rt[1]}
            benv["BRAID_BOUND"] = "%g %g" % rt
        cold = tempfile.mkdtemp(prefix="braid-e2e-cold-")
        for sysname, cmd in systems:
            senv = benv if sysname == "braid" else env
            if sysname == "braid-cold":   # an empty kernel cache (and machine constants)
                senv = dict(env, XDG_CACHE_HOME=cold)
            alg_s, wall, rss, out = run_one(cmd, senv)
            row[sysname] = {"alg_seconds": alg_s, "wall_seconds": wall, "peak_rss_mb": rss}
            m2 = re.search(r"RESULT2 alg_seconds=([0-9.eE+-]+)", out)
            if m2 and sysname == "braid":
                row[sysname]["second_seconds"] = float(m2.group(1))
            mb = re.search(r"BOUND seconds=([0-9.eE+-]+) read_bytes=([0-9.eE+-]+) write_bytes=([0-9.eE+-]+) "
                           r"flops=([0-9.eE+-]+)", out)
            if sysname == "braid-cold":
                shutil.rmtree(cold, ignore_errors=True)
            # kmeans runs until it converges (kmeans.dml): the peers run
            # the iterations braid's run took
            mi = re.search(r"stopped after ([0-9]+) iterations with code 1", out)
            if alg == "kmeans" and sysname == "braid-cold" and mi:
                row["iterations"] = int(mi.group(1))
                for sn, sc in systems:
                    if sn in ("numpy", "sklearn", "r"):
                        sc[len(sc) - 2] = mi.group(1)   # the peers' args end in "it seed"
            if mb and sysname == "braid":
                row["bound"] = {"seconds": float(mb.group(1)), "read_bytes": float(mb.group(2)),
                                "write_bytes": float(mb.group(3)), "flops": float(mb.group(4))}
            if alg_s is None:
                row[sysname]["error"] = out[-2000:]
            sys.stderr.write("%-20s %-11s alg %8s s  wall %7.2f s  rss %8.1f MB\n"
                             % (name, sysname, fmt(alg_s, "%.3f"), wall, rss))
        results.append(row)

    stamp = datetime.datetime.now().strftime("%Y-%m-%d-%H%M")
    lines = []
    lines.append("braid end-to-end benchmark, %s, %d threads, scale %g" % (stamp, THREADS, scale))
    lines.append("times: the algorithm only (data generation excluded), seconds; RSS: peak of the process, MB")
    lines.append("bound: the plan's physical bound at the in-run rates (read GB/s, dgemm GFLOP/s before the row)")
    lines.append("cold+: braid's wall time with an empty kernel cache minus its warm wall time (less the 2nd run), seconds")
    lines.append("2nd: braid's algorithm run again in the same process (warm=1: memory pool and operators warm), "
                 "2nd/bnd its ratio to the bound")
    hdr = ("%-20s %-22s %9s %9s %7s %9s %7s %7s %9s %9s %9s %9s %8s %8s %8s %8s %8s %8s %8s %8s %13s"
           % ("algorithm", "data", "braid", "bound", "br/bnd", "2nd", "2nd/bnd", "cold+", "nocg", "numpy",
              "sklearn", "r",
              "rss_br", "rss_np", "rss_sk", "rss_r", "br/np", "nocg/np", "br/sk", "br/r", "rates"))
    lines.append(hdr)
    lines.append("-" * len(hdr))
    for r in results:
        data = "%dx%d%s" % (r["n"], r["m"], "" if r["sparsity"] >= 1 else " sp=%g" % r["sparsity"])
        b = r["braid"]["alg_seconds"]
        bn = r["braid-nocg"]["alg_seconds"]
        np_ = r["numpy"]["alg_seconds"]
        sk = r.get("sklearn", {}).get("alg_seconds")
        rr = r.get("r", {}).get("alg_seconds")
        bd = r.get("bound", {}).get("seconds")
        rt = r.get("rates")
        cw = r.get("braid-cold", {}).get("wall_seconds")
        b2 = r["braid"].get("second_seconds")
        lines.append("%-20s %-22s %9s %9s %7s %9s %7s %7s %9s %9s %9s %9s %8s %8s %8s %8s %8s %8s %8s %8s %13s" % (
            r["name"], data, fmt(b, "%.3f"), fmt(bd, "%.3f"), fmt(b / bd if b and bd else None),
            fmt(b2, "%.3f"), fmt(b2 / bd if b2 and bd else None),
            fmt(cw - (r["braid"]["wall_seconds"] - (b2 or 0)) if cw else None),
            fmt(bn, "%.3f"), fmt(np_, "%.3f"), fmt(sk, "%.3f"),
            fmt(rr, "%.3f"),
            fmt(r["braid"]["peak_rss_mb"], "%.0f"), fmt(r["numpy"]["peak_rss_mb"], "%.0f"),
            fmt(r.get("sklearn", {}).get("peak_rss_mb"), "%.0f"),
            fmt(r.get("r", {}).get("peak_rss_mb"), "%.0f"),
            fmt(b / np_ if b and np_ else None), fmt(bn / np_ if bn and np_ else None),
            fmt(b / sk if b and sk else None), fmt(b / rr if b and rr else None),
            "%.1f/%.0f" % (rt["read_gbs"], rt["gemm_gfs"]) if rt else "-"))
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "e2e-%s.txt" % stamp), "w") as f:
        f.write(text)
    with open(os.path.join(outdir, "e2e-%s.json" % stamp), "w") as f:
        json.dump(results, f, indent=1)
    failed = [r["name"] for r in results for s in ("braid-cold", "braid", "braid-nocg", "numpy", "sklearn", "r")
              if s in r and r[s]["alg_seconds"] is None]
    if failed:
        sys.stderr.write("failed runs: %s\n" % ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
