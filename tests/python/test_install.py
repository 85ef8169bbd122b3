"""test_install.py: the package as pip installs it (pyproject.toml,
setup.py), offline: a virtual environment in a temporary folder (with the
system's site packages, for NumPy), `pip install --no-build-isolation
--no-index .` of the source tree into it, then Python started there, away
from the build folder, imports braid from the environment, runs a script
and a builtin of the library through the package's own copy of
scripts/builtin, and `pip uninstall` removes it again. Then the same from
a source distribution: `setup.py sdist` packs the tree, pip builds the
tarball (all of braid compiled from the tarball's files alone, in pip's
own temporary folder: plain make flags, as a user's build, but at -O0) and the same
checks run on what it installed; not in a sanitizer build's run (SAN=1
in BRAID_MAKE_ARGS), whose plain sdist build would repeat the plain
pass's. Run by make test as
build/tests/test_python_install; prints "test_python_install: N passed, M
failed". BRAID_MAKE_ARGS (set by the Makefile: BUILD, SAN) reaches the make
that setup.py runs for the tree's install, so that extension is the one
this build made."""
import os
import subprocess
import sys
import tarfile
import tempfile

from harness import Tally

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
T = Tally("test_python_install")
check = T.check


def clean_env(keep_preload):
    """This process's environment without what would make the new
    interpreter see the build folder's package (PYTHONPATH), pip's
    settings, or a make above us; the sanitizers' preloaded run-time
    (make san) only where the extension is loaded, not in pip and gcc."""
    drop = ("PYTHONPATH", "PYTHONHOME", "BRAID_HOME", "MAKEFLAGS", "MFLAGS", "MAKELEVEL")
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("PIP_")}
    if not keep_preload:
        env.pop("LD_PRELOAD", None)
    return env


def run(args, env, cwd):
    p = subprocess.run(args, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


# what the installed package is asked, in the new environment
PROBE = r"""
import os, sys
import numpy as np
import braid
from braid import sklearn
print("FILE", braid.__file__)
print("LIB", braid._braid.builtin_signature("l2svm")["file"])
out = braid.run("G = t(X) %*% X\ns = sum(X)", inputs={"X": np.arange(6.0).reshape(3, 2)}, outputs=["G", "s"])
print("SUM", out["s"], "G", out["G"].tolist())
X = np.array([[1.0, 2.0], [2.0, 1.0], [-1.0, -2.0], [-2.0, -1.0]])
y = np.array([1.0, 1.0, -1.0, -1.0])
w = braid.compute(braid.l2svm(X, y, reg=1e-3))
print("SIGNS", np.sign(X @ np.asarray(w)[:, 0]).tolist())
try:
    braid.run("x = 1 +", outputs=["x"])
except braid.BraidError as e:
    print("ERROR", str(e).splitlines()[0])
"""


def install(py, target, env, cwd):
    """pip install of target (the tree or a tarball) into py's environment;
    the site folder of the package, or None when pip failed."""
    rc, out = run([py, "-m", "pip", "install", "--isolated", "--no-build-isolation", "--no-index", "--no-deps",
                   "--no-cache-dir", target], env, cwd)
    check(rc == 0 and "Successfully installed braid" in out, f"pip install {target} failed:\n{out}")
    if rc:
        return None
    site = run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], env, cwd)[1].strip()
    pkg = os.path.join(site, "braid")
    check(os.path.isfile(os.path.join(pkg, "scripts", "builtin", "l2svm.dml")), "the library is not in the package")
    return pkg


def probe(py, pkg, cwd, what):
    """The installed package asked PROBE's questions, then uninstalled."""
    rc, out = run([py, "-c", PROBE], clean_env(keep_preload=True), cwd)
    check(rc == 0, f"{what}: the installed package failed:\n{out}")
    lines = dict(line.split(" ", 1) for line in out.splitlines() if " " in line)
    check(lines.get("FILE", "").startswith(pkg + os.sep), f"{what}: braid imported from {lines.get('FILE')}, not {pkg}")
    check(lines.get("LIB", "").startswith(os.path.join(pkg, "scripts", "builtin") + os.sep),
          f"{what}: the library loaded from {lines.get('LIB')}, not the package's copy")
    check(lines.get("SUM") == "15.0 G [[20.0, 26.0], [26.0, 35.0]]", f"{what}: run gave {lines.get('SUM')}")
    check(lines.get("SIGNS") == "[1.0, 1.0, -1.0, -1.0]", f"{what}: l2svm separates {lines.get('SIGNS')}")
    check(lines.get("ERROR", "").startswith("<script>:"), f"{what}: error message {lines.get('ERROR')}")
    rc, out = run([py, "-m", "pip", "uninstall", "--isolated", "-y", "braid"], clean_env(keep_preload=False), cwd)
    check(rc == 0 and not os.path.exists(pkg), f"{what}: pip uninstall left {pkg}:\n{out}")


def sdist(env, tmp):
    """setup.py sdist of the tree into tmp/dist; the tarball's path (None
    when it failed), after checking that it holds what make compiles."""
    dist = os.path.join(tmp, "dist")
    rc, out = run([sys.executable, os.path.join(ROOT, "setup.py"), "-q", "sdist", "--dist-dir", dist], env, ROOT)
    tars = [f for f in os.listdir(dist) if f.endswith(".tar.gz")] if os.path.isdir(dist) else []
    check(rc == 0 and len(tars) == 1, f"setup.py sdist failed:\n{out}")
    if rc or len(tars) != 1:
        return None
    tar = os.path.join(dist, tars[0])
    with tarfile.open(tar) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    need = ["Makefile", "setup.py", "pyproject.toml", "include/braid.h", "python/_braid.c", "api/api.c",
            "base/ops.def", "scripts/builtin/l2svm.dml", "tools/deps.sh"]
    check(all(n in names for n in need), f"the sdist lacks {[n for n in need if n not in names]}")
    check(not any(n.endswith((".o", ".a", ".so", ".pyc")) for n in names), "the sdist carries build products")
    return tar


def test_install():
    """The tree, then its sdist, installed offline into a venv and used."""
    tmp = tempfile.TemporaryDirectory(prefix="braid-install-")
    venv = os.path.join(tmp.name, "venv")
    py = os.path.join(venv, "bin", "python")
    build_env = clean_env(keep_preload=False)
    rc, out = run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", venv], build_env, tmp.name)
    check(rc == 0, f"python3 -m venv failed:\n{out}")
    if rc:
        return
    # the pip of the system's site packages, run by the environment's Python
    pkg = install(py, ROOT, build_env, tmp.name)
    check(not os.path.exists(os.path.join(ROOT, "braid.egg-info")), "setuptools left braid.egg-info in the source tree")
    if pkg:
        probe(py, pkg, tmp.name, "from the tree")

    # the tarball is built (pip's temporary folders go under tmp) with
    # plain make flags: not this build's folder or sanitizers. That build
    # and its checks are the same in every pass, so the sanitizer pass
    # (SAN=1 in BRAID_MAKE_ARGS) leaves them to the plain one: compiling
    # all of braid once more cost CI minutes and found nothing new
    if "SAN=1" in os.environ.get("BRAID_MAKE_ARGS", "").split():
        print("test_python_install: the sdist's install is left to the plain pass (SAN=1)")
        return
    # (unoptimized: what this checks is that the tarball holds all a
    # build needs and that pip installs what it builds, not the code
    # gcc makes of it, which the plain pass's own build is; -O0 compiles
    # all of braid in about a fifth of the CPU time of -O2)
    plain = {k: v for k, v in build_env.items() if k != "BRAID_MAKE_ARGS"}
    plain["BRAID_MAKE_ARGS"] = "OPT=-O0"
    plain["TMPDIR"] = tmp.name
    tar = sdist(plain, tmp.name)
    if tar:
        pkg = install(py, tar, plain, tmp.name)
        if pkg:
            probe(py, pkg, tmp.name, "from the sdist")


def main():
    test_install()
    return finish()


def finish():
    return T.finish()


if __name__ == "__main__":
    sys.exit(main())
