#!/usr/bin/env python3
"""Rebuild the SystemDS parity references (python3 standard library only).

  tests/parity/gen.py BRAID MIRROR WORKDIR [FILTER]

MIRROR is a git clone of apache/systemds (e.g. the one `git clone
https://github.com/apache/systemds` makes); WORKDIR is a scratch folder
outside this repository. gen.py exports the mirror's scripts/ folder into
WORKDIR/home/scripts (SystemDS's files never enter this repository), then

  * runs every cases/<name>.dml (or those whose name matches FILTER) with
    BRAID_HOME=WORKDIR/home, so that braid's interpreter runs SystemDS's own
    builtin scripts in place of braid's library, and stores the outputs in
    expected/<name>/ (numbers printed with 17 significant digits by the
    case's write(), so nothing is lost; a "# parity-stdout" case's stdout as
    stdout.txt); for a "# parity-fails" case, whose
    input SystemDS's script stops on, the error message (error.txt);
  * runs the same case with braid's library and prints whether it matches
    (the status table in STATUS.md is written from that);
  * writes signatures.tsv: for each of SystemDS's builtin scripts, the
    function its loader binds and its parameters (type, name, default,
    in order) and outputs, as read by dmlsig.py.

patches.txt lists the few fixes applied to the exported scripts first
(SystemDS bugs that make a script's output no reference at all).
A builtin that SystemDS implements in Java but braid in DML (so the mirror
has no script for it) is taken from braid's library in that home.
The mirror's commit goes into SOURCE.
"""

import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import run as prun  # noqa: E402
import dmlsig  # noqa: E402
import runner  # noqa: E402

SKIP_SIGNATURES = ("xdummy1", "xdummy2")  # SystemDS's loader test fixtures


def REF_ENV(home):
    """The environment of a reference run: SystemDS's scripts from home,
    and products that skip the terms with a zero left factor, as SystemDS's
    Java kernels do (braid's own are IEEE: 0 * Inf is NaN; so a script's
    `P %*% M` with a selection matrix P and an Inf in M gives SystemDS's
    numbers, not NaN in the whole column; kernels/mm.c)."""
    return {"BRAID_HOME": home, "BRAID_MM_ZEROS": "skip"}


def export_scripts(mirror, work):
    home = os.path.join(work, "home")
    shutil.rmtree(home, ignore_errors=True)
    os.makedirs(home)
    arch = subprocess.run(["git", "-C", mirror, "archive", "HEAD", "scripts"],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    subprocess.run(["tar", "-x", "-C", home], input=arch.stdout, check=True)
    bdir = os.path.join(home, "scripts", "builtin")
    ours = os.path.join(REPO, "scripts", "builtin")
    for f in os.listdir(ours):
        if not os.path.exists(os.path.join(bdir, f)):
            shutil.copy(os.path.join(ours, f), bdir)
    commit = subprocess.run(["git", "-C", mirror, "rev-parse", "HEAD"],
                            stdout=subprocess.PIPE, check=True).stdout.decode().strip()
    return home, commit


def apply_patches(home):
    """Applies patches.txt (fixes of SystemDS bugs that make a script
    unusable as a reference) to the exported scripts."""
    with open(os.path.join(HERE, "patches.txt"), encoding="utf-8") as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            path, old, new, _ = line.rstrip("\n").split("\t")
            target = os.path.join(home, path)
            with open(target, encoding="utf-8") as fh:
                text = fh.read()
            if text.count(old) != 1:
                raise SystemExit("patches.txt: %r not found once in %s" % (old, path))
            with open(target, "w", encoding="utf-8") as fh:
                fh.write(text.replace(old, new))


def write_signatures(home):
    bdir = os.path.join(home, "scripts", "builtin")
    rows = []
    for f in sorted(os.listdir(bdir)):
        name = f[:-4]
        if not f.endswith(".dml") or name in SKIP_SIGNATURES:
            continue
        if os.path.exists(os.path.join(REPO, "scripts", "builtin", f)) and \
                subprocess.run(["cmp", "-s", os.path.join(bdir, f),
                                os.path.join(REPO, "scripts", "builtin", f)]).returncode == 0:
            continue  # braid's own file (SystemDS has no script for it)
        with open(os.path.join(bdir, f), encoding="utf-8") as fh:
            sig = dmlsig.builtin_signature(name, fh.read())
        if sig is None:
            continue
        rows.append("\t".join([name, sig[0], dmlsig.format_params(sig[1]),
                               dmlsig.format_outputs(sig[2])]))
    with open(os.path.join(HERE, "signatures.tsv"), "w", encoding="utf-8") as f:
        f.write("# builtin\tfunction\tparameters (type name = default)\toutputs"
                "  -- written by gen.py from SystemDS's scripts/builtin\n")
        f.write("\n".join(rows) + "\n")


def take_reference(ref, exp_dir):
    """Moves a reference run's outputs (folder ref) into exp_dir, without
    the .mtd files."""
    shutil.rmtree(exp_dir, ignore_errors=True)
    shutil.copytree(ref, exp_dir)
    for extra in os.listdir(exp_dir):
        if extra.endswith(".mtd"):
            os.remove(os.path.join(exp_dir, extra))
    shutil.rmtree(ref, ignore_errors=True)


def main(argv):
    if len(argv) < 4:
        sys.stderr.write(__doc__)
        return 2
    binary = runner.find_binary(argv[1])
    mirror, work = os.path.abspath(argv[2]), os.path.abspath(argv[3])
    if work.startswith(REPO + os.sep):
        sys.stderr.write("WORKDIR must lie outside the repository\n")
        return 2
    filt = argv[4] if len(argv) > 4 else None
    home, commit = export_scripts(mirror, work)
    apply_patches(home)
    with open(os.path.join(HERE, "SOURCE"), "w", encoding="utf-8") as f:
        f.write("apache/systemds %s\n" % commit)
    write_signatures(home)
    status = []
    for f in sorted(os.listdir(os.path.join(HERE, "cases"))):
        name = f[:-4]
        if not f.endswith(".dml") or (filt and filt not in name):
            continue
        exp_dir = os.path.join(HERE, "expected", name)
        if prun.fails_case(name):
            try:
                msg = prun.failing_run(binary, name, REF_ENV(home))
            except runner.CaseFailed as e:
                print("REF-FAILED %s: %s" % (name, e))
                status.append((name, "SystemDS's script does not fail: %s" % e))
                continue
            shutil.rmtree(exp_dir, ignore_errors=True)
            os.makedirs(exp_dir)
            with open(os.path.join(exp_dir, "error.txt"), "w", encoding="utf-8") as f:
                f.write(msg + "\n")
        else:
            try:
                ref = prun.run_case(binary, name, REF_ENV(home))
            except runner.CaseFailed as e:
                print("REF-FAILED %s: %s" % (name, e))
                status.append((name, "SystemDS's script fails under braid: %s" % e))
                continue
            take_reference(ref, exp_dir)
        try:
            diffs = prun.check_case(binary, name)
        except runner.CaseFailed as e:
            diffs = {"": str(e)}
        if not diffs:
            print("MATCH %s" % name)
            status.append((name, "equal"))
        for f, why in sorted(diffs.items()):
            print("DIFFER %s/%s: %s" % (name, f, why))
            status.append((name + "/" + f, why))
    with open(os.path.join(work, "status.txt"), "w", encoding="utf-8") as f:
        for name, s in status:
            f.write("%s\t%s\n" % (name, s))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
