#!/usr/bin/env python3
"""makedeps.py BUILD: is every object under BUILD/obj rebuilt when a header
it includes changes? Reads each object's dependency file (-MMD -MP: the
headers are the empty rules "path.h:"), covers the objects by a few of
braid's headers (greedily, the header most of the uncovered include
first), and per header runs one `make -n -W HEADER` of its objects: each
must be compiled again. An object whose dependency file the Makefile did
not read kept an old layout of a struct after its header grew it
(bench/bench_amulet_sweep.o's Rt: its run wrote past its frame).
Then, in an empty scratch build folder of zero-byte objects, one library
object missing (a new source file, or a deleted object) must be compiled
and the archive made again: with `.SECONDARY:` make treated every object
as intermediate and kept the old archive, so an incremental build linked
without the new file.
Prints "N passed, M failed"; exit status 1 on a failure."""
import os
import subprocess
import sys
import tempfile

build = sys.argv[1] if len(sys.argv) > 1 else "build"
heads = {}
for root, _, files in os.walk(os.path.join(build, "obj")):
    for f in files:
        if not f.endswith(".d"):
            continue
        o = os.path.join(root, f[:-2] + ".o")
        if not os.path.exists(o):
            continue
        with open(os.path.join(root, f)) as fh:
            hs = {l[:-1] for l in fh.read().splitlines()
                  if l.endswith(".h:") and not l.startswith("/") and " " not in l}
        if hs:
            heads[o] = hs
left = set(heads)
npass = nfail = 0
while left:
    count = {}
    for o in left:
        for h in heads[o]:
            count[h] = count.get(h, 0) + 1
    h = max(sorted(count), key=lambda x: count[x])
    objs = sorted(o for o in left if h in heads[o])
    left -= set(objs)
    out = subprocess.run(["make", "-n", "-W", h, "BUILD=" + build] + objs, capture_output=True, text=True)
    text = out.stdout + out.stderr
    for o in objs:
        if "-o " + o in text:
            npass += 1
        else:
            print("FAIL: %s is not rebuilt when %s changes" % (o, h))
            nfail += 1

# a missing library object is rebuilt and archived
with tempfile.TemporaryDirectory() as tmp:
    out = subprocess.run(["make", "-s", "-n", "BUILD=" + tmp,
                          "--eval=print-obj: ; @echo $(OBJ)", "print-obj"],
                         capture_output=True, text=True)
    objs = [o for o in out.stdout.split() if o.startswith(tmp)]
    for o in objs:
        os.makedirs(os.path.dirname(o), exist_ok=True)
        open(o, "w").close()
    open(os.path.join(tmp, ".deps"), "w").close()
    lib = os.path.join(tmp, "libbraid.a")
    open(lib, "w").close()
    t0 = os.stat(lib).st_mtime
    for o in objs:
        os.utime(o, (t0 - 10, t0 - 10))
    for o in objs[:1] + objs[-1:]:
        os.rename(o, o + ".gone")
        out = subprocess.run(["make", "-n", "BUILD=" + tmp, lib],
                             capture_output=True, text=True)
        os.rename(o + ".gone", o)
        text = out.stdout + out.stderr
        if objs and "-o " + o in text and "ar rcs " + lib in text:
            npass += 1
        else:
            print("FAIL: a missing %s is not built into the library" % o)
            nfail += 1
    if not objs:
        print("FAIL: no library objects found (make print-obj)")
        nfail += 1
print("makedeps: %d passed, %d failed" % (npass, nfail))
sys.exit(1 if nfail else 0)
