#!/usr/bin/env python3
"""Parity sweep on other inputs (python3 standard library only; run by hand).

  tests/parity/sweep.py BRAID MIRROR WORKDIR SHIFT [FILTER]

The committed references pin each builtin on one set of seeded inputs.
This sweep looks for differences those inputs do not show: it copies
cases/ into WORKDIR/parity with every seed moved by SHIFT (the `seed=`
arguments of the cases and of cases/lib, the helpers' seed parameters,
and `# parity-args: -seed N`), so the data, the algorithms' seeded draws
and the unseeded draws under -seed all change, then runs each copied case
twice, as gen.py does: with SystemDS's builtin scripts (exported from the
mirror, patches.txt applied) and with braid's library, and compares the
outputs with the case's tolerance. Nothing is written into the repository.

Prints per case MATCH, DIFFER <output>: <why>, MATCH-FAILS (SystemDS's
script stops on the shifted inputs and braid's library stops with the same
error message, as a "# parity-fails" case must), or REF-FAILED /
OURS-FAILED (a case whose shifted inputs one side alone rejects, or both
with different messages), then a count line, and
writes WORKDIR/sweep-SHIFT.txt with the same lines. known.txt does not
apply (its entries are about the committed inputs); a difference printed
here either is one of those or is a new finding.
"""

import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen  # noqa: E402
import run as prun  # noqa: E402

runner = prun.runner


def shift_text(text, shift):
    """The case text with every seed moved by shift."""
    text = re.sub(r"(\bseed\s*=\s*)(\d+)\b", lambda m: m.group(1) + str(int(m.group(2)) + shift), text)
    text = re.sub(r"(\bseed\s*=\s*)seed\b", lambda m: "%s(seed + %d)" % (m.group(1), shift), text)
    text = re.sub(r"(#\s*parity-args:.*-seed\s+)(\d+)",
                  lambda m: m.group(1) + str(int(m.group(2)) + shift), text)
    return text


def copy_cases(dst, shift):
    src = os.path.join(HERE, "cases")
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(os.path.join(dst, "cases", "lib"))
    for root, _dirs, files in os.walk(src):
        for f in files:
            if not f.endswith(".dml"):
                continue
            rel = os.path.relpath(os.path.join(root, f), src)
            with open(os.path.join(root, f), encoding="utf-8") as fh:
                text = fh.read()
            # (a helper's `seed=seed` becomes `seed=(seed + shift)`, which
            # covers the seeds the cases pass to cases/lib positionally)
            text = shift_text(text, shift)
            with open(os.path.join(dst, "cases", rel), "w", encoding="utf-8") as fh:
                fh.write(text)


def main(argv):
    if len(argv) < 5:
        sys.stderr.write(__doc__)
        return 2
    binary = runner.find_binary(argv[1])
    mirror, work = os.path.abspath(argv[2]), os.path.abspath(argv[3])
    shift = int(argv[4])
    filt = argv[5] if len(argv) > 5 else None
    if work.startswith(gen.REPO + os.sep):
        sys.stderr.write("WORKDIR must lie outside the repository\n")
        return 2
    home, _commit = gen.export_scripts(mirror, work)
    gen.apply_patches(home)
    dst = os.path.join(work, "parity")
    copy_cases(dst, shift)
    dml = os.path.join(work, "dml")  # cases read ../dml/refdata/...
    if not os.path.lexists(dml):
        os.symlink(os.path.join(gen.REPO, "tests", "dml"), dml)
    prun.HERE = dst
    lines, counts = [], {"MATCH": 0, "MATCH-FAILS": 0, "DIFFER": 0, "FAILED": 0}
    for f in sorted(os.listdir(os.path.join(dst, "cases"))):
        name = f[:-4]
        if not f.endswith(".dml") or (filt and filt not in name):
            continue
        rstatus, rstderr, ref = prun.execute_case(binary, name, gen.REF_ENV(home))
        if rstatus != 0:
            # SystemDS's script stops on these inputs: braid's library must
            # stop with the same message (as a "# parity-fails" case).
            shutil.rmtree(ref, ignore_errors=True)
            status, stderr, out_dir = prun.execute_case(binary, name)
            shutil.rmtree(out_dir, ignore_errors=True)
            want = prun.error_message(rstderr) if rstatus == 1 else None
            got = prun.error_message(stderr) if status == 1 else None
            if want is not None and got == want:
                lines.append("MATCH-FAILS %s: both stop with: %s" % (name, want[:200]))
                counts["MATCH-FAILS"] += 1
            else:
                ours = ("braid's library runs it" if status == 0 else
                        "braid's library fails otherwise: %s" % runner.one_line(stderr)[:200])
                lines.append("REF-FAILED %s: exit status %d; %s (%s)"
                             % (name, rstatus, runner.one_line(rstderr)[:300], ours))
                counts["FAILED"] += 1
            print(lines[-1], flush=True)
            continue
        gen.take_reference(ref, os.path.join(dst, "expected", name))
        try:
            diffs = prun.check_case(binary, name)
        except runner.CaseFailed as e:
            diffs = {"": "OURS-FAILED " + runner.one_line(str(e))[:300]}
        if not diffs:
            lines.append("MATCH %s" % name)
            counts["MATCH"] += 1
        else:
            counts["DIFFER"] += 1
        for out, why in sorted(diffs.items()):
            lines.append("DIFFER %s/%s: %s" % (name, out, runner.one_line(why)[:300]))
        for ln in lines[-max(1, len(diffs)):]:
            print(ln, flush=True)
    lines.append("shift %d: %d cases match, %d stop alike, %d differ, %d fail with SystemDS's "
                 "scripts only" % (shift, counts["MATCH"], counts["MATCH-FAILS"], counts["DIFFER"],
                                   counts["FAILED"]))
    print(lines[-1])
    with open(os.path.join(work, "sweep-%d.txt" % shift), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
