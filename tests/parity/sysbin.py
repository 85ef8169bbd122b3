#!/usr/bin/env python3
"""SystemDS binary-block files in braid: tests/parity/sysbin.py BRAID

Builds SystemDS's binary-block files byte for byte from the layout its Java
code writes (Hadoop SequenceFile header; MatrixIndexes keys: two big-endian
int64 block indexes from 1; MatrixBlock values: int32 rlen, int32 clen,
a type byte, then the empty / ultra-sparse / sparse / dense body of
MatrixBlock.write; sync marks between records), independently of braid's
reader (io/sysbin.c), and checks that braid's read(..., format="binary")
returns the matrix they encode, cell for cell, with and without a .mtd,
from one file and from a folder of part files; and that malformed files
are refused with "error:" naming what is wrong. Then the other way:
matrices braid writes with format="binary" (and its alias "sysds-binary")
are decoded here byte for byte and must hold SystemDS's header, block grid
(1000 x 1000, or rows_in_block=, or sysds.defaultblocksize), the encoding
MatrixBlock.write picks for each block, the values, sync marks after 100
KiB, and a .mtd with format "binary" and the block size; with several
threads a large matrix becomes a folder of part files split by block rows
as SystemDS's parallel writer splits them; braid reads them back.
Prints "N passed, M failed".
"""

import os
import random
import struct
import subprocess
import sys
import tempfile

SYNC = bytes(range(16))
PKG = "org.apache.sysds.runtime.matrix.data."


def text(s):
    b = s.encode()
    assert len(b) < 128  # a one-byte vint
    return bytes([len(b)]) + b


def header(key=PKG + "MatrixIndexes", value=PKG + "MatrixBlock", comp=0,
           meta=(), version=6, sync=SYNC):
    h = b"SEQ" + bytes([version]) + text(key) + text(value)
    h += bytes([comp, 0]) + struct.pack(">i", len(meta))
    for k, v in meta:
        h += text(k) + text(v)
    return h + sync


def block_value(cells, rlen, clen, kind):
    """A MatrixBlock's bytes: cells {(i, j): v} (from 0) of an rlen x clen
    block in the given encoding."""
    out = struct.pack(">ii", rlen, clen)
    nz = sorted((i, j, v) for (i, j), v in cells.items() if v != 0)
    if kind == "empty":
        return out + bytes([0])
    if kind == "ultra":
        out += bytes([1]) + struct.pack(">i", len(nz))
        for i, j, v in nz:
            out += struct.pack(">iid", i, j, v) if clen > 1 else \
                struct.pack(">id", i, v)
        return out
    if kind == "sparse":
        out += bytes([2]) + struct.pack(">i", len(nz))
        for i in range(rlen):
            row = [(j, v) for (r, j, v) in nz if r == i]
            out += struct.pack(">i", len(row))
            for j, v in row:
                out += struct.pack(">id", j, v)
        return out
    out += bytes([3])
    for i in range(rlen):
        for j in range(clen):
            out += struct.pack(">d", cells.get((i, j), 0.0))
    return out


def record(rb, cb, value):
    key = struct.pack(">qq", rb, cb)
    return struct.pack(">ii", len(key) + len(value), len(key)) + key + value


def matrix(rows, cols, density, seed):
    g = random.Random(seed)
    return [[(g.random() * 10 - 5) if g.random() < density else 0.0
             for _ in range(cols)] for _ in range(rows)]


def records(m, blen, kinds, sync_every=0):
    """The records of matrix m cut into blen blocks, row-block major; the
    k-th block's encoding is kinds[k % len(kinds)] (an empty block is
    written as "empty" only if it has no non-zeros); a sync mark after
    every sync_every records."""
    rows, cols = len(m), len(m[0])
    out, k = b"", 0
    for bi in range(0, rows, blen):
        for bj in range(0, cols, blen):
            rl, cl = min(blen, rows - bi), min(blen, cols - bj)
            cells = {(i, j): m[bi + i][bj + j]
                     for i in range(rl) for j in range(cl)}
            kind = kinds[k % len(kinds)]
            if kind == "empty" and any(cells.values()):
                kind = "sparse"
            if kind == "ultra" and sum(v != 0 for v in cells.values()) >= rl:
                kind = "sparse"
            out += record(bi // blen + 1, bj // blen + 1,
                          block_value(cells, rl, cl, kind))
            k += 1
            if sync_every and k % sync_every == 0:
                out += struct.pack(">i", -1) + SYNC
    return out


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def mtd(path, rows, cols):
    with open(path + ".mtd", "w") as f:
        f.write('{"data_type": "matrix", "value_type": "double", "rows": %d, '
                '"cols": %d, "blocksize": 4, "format": "binary"}\n'
                % (rows, cols))


VALID = [
    # name, matrix, blen, encodings, sync every, with .mtd, as a folder
    ("dense_one_block", matrix(3, 4, 1.0, 1), 4, ["dense"], 0, True, False),
    ("sparse_one_block", matrix(4, 4, 0.3, 2), 4, ["sparse"], 0, True, False),
    ("ultra_block", [[0, 0, 0, 0], [0, 0, 2.5, 0], [0, 0, 0, 0],
                     [0, 0, 0, 0]], 4, ["ultra"], 0, True, False),
    ("ultra_column", [[0], [7.25], [0], [0], [0]], 8, ["ultra"], 0, True,
     False),
    ("empty", [[0.0] * 5 for _ in range(3)], 8, ["empty"], 0, True, False),
    ("grid_mixed", matrix(10, 9, 0.5, 3), 4,
     ["dense", "sparse", "ultra", "empty"], 2, True, False),
    ("grid_no_mtd", matrix(9, 10, 0.6, 4), 4, ["sparse", "dense"], 3, False,
     False),
    ("grid_sparse_big", matrix(30, 12, 0.05, 5), 4,
     ["sparse", "ultra", "empty"], 1, True, False),
    ("parts_folder", matrix(12, 7, 0.7, 6), 4, ["dense", "sparse"], 0, True,
     True),
]


def decode(data):
    """A sequence file of MatrixIndexes/MatrixBlock records: (the blocks
    [(rb, cb, rlen, clen, type, {(i, j): v})], the number of sync marks);
    asserts the layout."""
    assert data[:4] == b"SEQ\x06", "magic"
    pos = 4
    for cls in ("MatrixIndexes", "MatrixBlock"):
        n = data[pos]
        assert data[pos + 1:pos + 1 + n].decode() == PKG + cls, cls
        pos += 1 + n
    assert data[pos:pos + 2] == b"\0\0", "uncompressed"
    assert struct.unpack(">i", data[pos + 2:pos + 6])[0] == 0, "metadata"
    pos += 6
    sync = data[pos:pos + 16]
    pos += 16
    blocks, syncs = [], 0
    while pos < len(data):
        rl, = struct.unpack(">i", data[pos:pos + 4])
        if rl == -1:
            assert data[pos + 4:pos + 20] == sync, "sync bytes"
            pos += 20
            syncs += 1
            continue
        kl, rb, cb, rlen, clen, t = struct.unpack(
            ">iqqiib", data[pos + 4:pos + 33])
        assert kl == 16, "key length"
        body = data[pos + 33:pos + 8 + rl]
        pos += 8 + rl
        cells = {}
        if t == 1:
            nnz, = struct.unpack(">i", body[:4])
            step = 16 if clen > 1 else 12
            assert len(body) == 4 + nnz * step, "ultra-sparse length"
            for k in range(nnz):
                q = body[4 + k * step:4 + (k + 1) * step]
                if clen > 1:
                    i, j, v = struct.unpack(">iid", q)
                else:
                    (i, v), j = struct.unpack(">id", q), 0
                cells[(i, j)] = v
        elif t == 2:
            nnz, = struct.unpack(">i", body[:4])
            q = 4
            for i in range(rlen):
                n, = struct.unpack(">i", body[q:q + 4])
                q += 4
                for _ in range(n):
                    j, v = struct.unpack(">id", body[q:q + 12])
                    cells[(i, j)] = v
                    q += 12
            assert q == len(body) and len(cells) == nnz, "sparse block"
        elif t == 3:
            assert len(body) == rlen * clen * 8, "dense length"
            for i in range(rlen):
                for j in range(clen):
                    v, = struct.unpack(">d", body[(i * clen + j) * 8:
                                                  (i * clen + j + 1) * 8])
                    if v != 0:
                        cells[(i, j)] = v
        else:
            assert t == 0 and not body, "empty block"
        blocks.append((rb, cb, rlen, clen, t, cells))
    return blocks, syncs


def systemds_type(rlen, clen, nnz):
    """The encoding MatrixBlock.write picks (evalSparseFormatOnDisk)."""
    if nnz == 0:
        return 0
    cells = rlen * clen
    dense = 9 + cells * 8
    sparse = 9 + 4 + rlen * 4 + nnz * 12
    ultra = 9 + 4 + nnz * (16 if clen > 1 else 12)
    sp = nnz / cells < 0.4 and (sparse < dense or ultra < dense)
    return 1 if sp and nnz < rlen else 2 if sp else 3


WRITES = [
    # name, DML expression, expected sync marks, write() arguments after
    # the format, block size; written by one thread (one file each)
    ("dense_3blocks", "rand(rows=3000, cols=10, min=-1, max=1, seed=3)", 1,
     "", 1000),
    ("sparse_grid", "rand(rows=1500, cols=1200, sparsity=0.002, seed=4)", 0,
     "", 1000),
    ("ultra_column", "rand(rows=2500, cols=1, sparsity=0.0003, seed=5)", 0,
     "", 1000),
    # sparse (1,1) and (2,1), empty (1,2), ultra-sparse (2,2)
    ("mixed", "cbind(rand(rows=1100, cols=30, sparsity=0.9, seed=6), "
     "rbind(matrix(0, rows=1099, cols=1000), "
     "cbind(matrix(0, rows=1, cols=999), matrix(5, rows=1, cols=1))))", 1,
     "", 1000),
    ("small", "matrix(\"1 0 2 0 0 3\", rows=2, cols=3)", 0, "", 1000),
    ("zeros", "matrix(0, rows=4, cols=5)", 0, "", 1000),
    # rows_in_block= sets the block size as SystemDS's write takes it;
    # 7 divides neither side; all four encodings among the blocks
    ("bs7", "rbind(rand(rows=20, cols=23, sparsity=0.3, seed=7), "
     "rand(rows=9, cols=23, seed=8))", 0, ", rows_in_block=7", 7),
    ("bs7_ultra", "rand(rows=30, cols=16, sparsity=0.01, seed=9)", 0,
     ", rows_in_block=7", 7),
    ("alias", "rand(rows=12, cols=5, seed=10)", 0, "", 1000),
]

# written with sysds.defaultblocksize 300 and 3 threads: folders of part
# files as SystemDS's parallel writer makes them (name, expression, the
# part files' first rows)
PARTS = [
    ("parts_dense", "rand(rows=3000, cols=10, min=-1, max=1, seed=11)",
     [0, 1200, 2400]),
    ("parts_sparse", "rand(rows=2000, cols=50, sparsity=0.05, seed=12)",
     [0, 900, 1800]),
]


def check_blocks(blocks, m, blen, r_lo, r_hi):
    """Why blocks (decoded) are not rows [r_lo, r_hi) of m as SystemDS
    writes them with blen x blen blocks, or ''."""
    cols = len(m[0])
    grid = [(bi // blen + 1, bj // blen + 1, min(blen, r_hi - bi),
             min(blen, cols - bj))
            for bi in range(r_lo, r_hi, blen) for bj in range(0, cols, blen)]
    if [b[:4] for b in blocks] != grid:
        return "block grid %s, want %s" % ([b[:4] for b in blocks][:6],
                                           grid[:6])
    for rb, cb, rl, cl, t, cells in blocks:
        r0, c0 = (rb - 1) * blen, (cb - 1) * blen
        want = {(i, j): m[r0 + i][c0 + j] for i in range(rl)
                for j in range(cl) if m[r0 + i][c0 + j] != 0}
        if cells != want:
            return "block (%d, %d) values differ" % (rb, cb)
        if t != systemds_type(rl, cl, len(want)):
            return "block (%d, %d) type %d, SystemDS writes %d" % (
                rb, cb, t, systemds_type(rl, cl, len(want)))
    return ""


def check_writes(braid, d, report):
    script = ""
    for name, expr, _, args, _ in WRITES:
        p = os.path.join(d, "w_" + name)
        fmt = "sysds-binary" if name == "alias" else "binary"
        script += "X = %s\n" % expr
        script += 'write(X, "%s", format="%s"%s)\n' % (p, fmt, args)
        script += 'write(X, "%s.csv", format="csv")\n' % p
        script += 'Y = read("%s", format="binary")\n' % p
        script += 'print("%s " + as.integer(sum(abs(X - Y)) == 0))\n' % name
    r = run_braid(braid, script, ["-threads", "1"])
    report(r.returncode == 0, "write the binary files",
           r.stderr.strip()[-300:])
    if r.returncode != 0:
        return
    back = dict(line.split() for line in r.stdout.splitlines()
                if len(line.split()) == 2)
    kinds = set()
    for name, expr, want_syncs, _, blen in WRITES:
        p = os.path.join(d, "w_" + name)
        m = read_csv(p + ".csv")
        try:
            with open(p, "rb") as f:
                blocks, syncs = decode(f.read())
        except (AssertionError, IsADirectoryError) as ex:
            report(False, "write " + name, "layout: %s" % ex)
            continue
        kinds |= {b[4] for b in blocks}
        why = check_blocks(blocks, m, blen, 0, len(m))
        if syncs != want_syncs:
            why = why or "%d sync marks, want %d" % (syncs, want_syncs)
        with open(p + ".mtd") as f:
            meta = f.read()
        if '"format": "binary"' not in meta or \
                '"blocksize": %d' % blen not in meta:
            why = why or ".mtd lacks format binary, blocksize %d: %s" % (
                blen, meta)
        if back.get(name) != "1":
            why = why or "read back differs"
        report(not why, "write " + name, why)
    report(kinds == {0, 1, 2, 3}, "writes use all four block encodings",
           str(sorted(kinds)))

    # part files: sysds.defaultblocksize 300, three threads
    cfg = os.path.join(d, "bs300.xml")
    with open(cfg, "w") as f:
        f.write("<root><sysds.defaultblocksize>300</sysds.defaultblocksize>"
                "</root>\n")
    script = ""
    for name, expr, _ in PARTS:
        p = os.path.join(d, "w_" + name)
        script += "X = %s\n" % expr
        script += 'write(X, "%s", format="binary")\n' % p
        script += 'write(X, "%s.csv", format="csv")\n' % p
        script += 'Y = read("%s")\n' % p
        script += 'print("%s " + as.integer(sum(abs(X - Y)) == 0))\n' % name
    r = run_braid(braid, script, ["-threads", "3", "-config", cfg])
    report(r.returncode == 0, "write the part-file folders",
           r.stderr.strip()[-300:])
    if r.returncode != 0:
        return
    back = dict(line.split() for line in r.stdout.splitlines()
                if len(line.split()) == 2)
    for name, expr, starts in PARTS:
        p = os.path.join(d, "w_" + name)
        m = read_csv(p + ".csv")
        why = ""
        if not os.path.isdir(p):
            report(False, "write " + name, "not a folder")
            continue
        names = sorted(os.listdir(p))
        want = ["0-m-%05d" % i for i in range(len(starts))]
        if names != want:
            why = "part files %s, want %s" % (names, want)
        for i, lo in enumerate(starts if not why else []):
            hi = starts[i + 1] if i + 1 < len(starts) else len(m)
            with open(os.path.join(p, names[i]), "rb") as f:
                blocks, _ = decode(f.read())
            why = why or check_blocks(blocks, m, 300, lo, hi)
        with open(p + ".mtd") as f:
            meta = f.read()
        if '"blocksize": 300' not in meta:
            why = why or ".mtd lacks blocksize 300: " + meta
        if back.get(name) != "1":
            why = why or "read back differs"
        report(not why, "write " + name, why)


def read_csv(path):
    with open(path) as f:
        return [[float(x) for x in line.split(",")] for line in f
                if line.strip()]


def run_braid(braid, script, opts=()):
    d = tempfile.mkdtemp(prefix="sysbin-")
    p = os.path.join(d, "s.dml")
    with open(p, "w") as f:
        f.write(script)
    r = subprocess.run([braid] + list(opts) + ["-f", p], capture_output=True,
                       text=True)
    subprocess.run(["rm", "-rf", d])
    return r


def main(argv):
    braid = argv[1]
    d = tempfile.mkdtemp(prefix="sysbin-")
    passed = failed = 0

    def report(ok, what, detail=""):
        nonlocal passed, failed
        print("%s %s%s" % ("PASS" if ok else "FAIL", what,
                            (": " + detail) if detail else ""))
        if ok:
            passed += 1
        else:
            failed += 1

    script = ""
    for name, m, blen, kinds, sync, with_mtd, folder in VALID:
        path = os.path.join(d, name)
        recs = records(m, blen, kinds, sync)
        if folder:  # two part files, the block rows split between them
            os.makedirs(path)
            half = records(m[:blen], blen, kinds)
            # the second part: block rows 2.. (their own indexes), sparse
            rest = b""
            for bi in range(blen, len(m), blen):
                for bj in range(0, len(m[0]), blen):
                    rl, cl = min(blen, len(m) - bi), min(blen, len(m[0]) - bj)
                    cells = {(i, j): m[bi + i][bj + j]
                             for i in range(rl) for j in range(cl)}
                    rest += record(bi // blen + 1, bj // blen + 1,
                                   block_value(cells, rl, cl, "sparse"))
            write(os.path.join(path, "0-m-00000"), header() + half)
            write(os.path.join(path, "0-m-00001"), header() + rest)
            write(os.path.join(path, "_SUCCESS"), b"")
            write(os.path.join(path, ".0-m-00000.crc"), b"junk")
        else:
            meta = [("k", "v")] if name == "dense_one_block" else ()
            write(path, header(meta=meta) + recs)
        if with_mtd:
            mtd(path, len(m), len(m[0]))
        script += 'X = read("%s", format="binary")\n' % path
        script += 'write(X, "%s.csv", format="csv")\n' % path
        script += 'print("%s " + nrow(X) + " " + ncol(X) + " " + sum(X != 0))\n' \
            % name
    r = run_braid(braid, script)
    report(r.returncode == 0, "read the valid files", r.stderr.strip()[-300:])
    for name, m, blen, kinds, sync, with_mtd, folder in VALID:
        out = os.path.join(d, name + ".csv")
        if not os.path.exists(out):
            report(False, name, "no output")
            continue
        with open(out) as f:
            got = [[float(x) for x in line.split(",")] for line in f
                   if line.strip()]
        ok = got == [[float(v) for v in row] for row in m]
        # no .mtd: the extent of the blocks is the size
        report(ok, name, "" if ok else "cells differ")

    # the old sysml class names and metadata pairs are accepted
    m = matrix(5, 6, 0.5, 7)
    path = os.path.join(d, "sysml")
    write(path, header(key="org.apache.sysml.runtime.matrix.data."
                       "MatrixIndexes",
                       value="org.apache.sysml.runtime.matrix.data."
                       "MatrixBlock", meta=[("a", "b"), ("c", "d")]) +
          records(m, 4, ["dense"]))
    r = run_braid(braid, 'X = read("%s", format="binary")\n'
                  'print(sum(X))\n' % path)
    want = sum(sum(row) for row in m)
    ok = r.returncode == 0 and abs(float(r.stdout.split()[0]) - want) < 1e-9
    report(ok, "sysml class names", r.stderr.strip()[-200:])

    # malformed files: each refused with a message saying why
    good = matrix(6, 6, 0.6, 8)
    grid = records(good, 4, ["dense", "sparse"])
    dense1 = record(1, 1, block_value({(0, 0): 1.0}, 1, 1, "dense"))
    bad = [
        ("truncated", header() + grid[:-5], "truncated record"),
        ("truncated_header", header()[:20], "truncated header"),
        ("version", header(version=5) + grid, "version"),
        ("key_class", header(key="org.apache.hadoop.io.Text") + grid,
         "key class"),
        ("compressed", header(comp=1) + grid, "compressed"),
        ("bad_sync", header() + dense1 + struct.pack(">i", -1) +
         bytes(16), "sync mark"),
        ("dup_block", header() + dense1 + dense1, "given twice"),
        ("off_grid", header() + records(good, 4, ["dense"]) +
         record(3, 1, block_value({}, 2, 2, "dense")), "block grid"),
        ("cell_outside", header() +
         record(1, 1, struct.pack(">ii", 2, 2) + bytes([1]) +
                struct.pack(">iiid", 1, 0, 5, 1.0)), "outside its block"),
        ("sparse_count", header() +
         record(1, 1, struct.pack(">ii", 2, 2) + bytes([2]) +
                struct.pack(">i", 2) + struct.pack(">i", 1) +
                struct.pack(">id", 0, 1.0) + struct.pack(">i", 0)),
         "non-zero count"),
        ("block_type", header() +
         record(1, 1, struct.pack(">ii", 1, 1) + bytes([7])), "block type"),
        ("key_length", header() + struct.pack(">ii", 20, 8) + bytes(20),
         "key length"),
        # a short file whose block index or empty block size claims a
        # matrix larger than memory (libFuzzer found a 171-byte file that
        # made the reader allocate and walk about 10 GB)
        ("huge_index", header() +
         record(2 ** 40, 1, block_value({}, 1, 1, "empty")),
         "memory budget"),
        ("huge_block", header() +
         record(1, 1, block_value({}, 2 ** 31 - 1, 2 ** 31 - 1, "empty")),
         "memory budget"),
    ]
    for name, data, why in bad:
        path = os.path.join(d, "bad_" + name)
        write(path, data)
        r = run_braid(braid, 'X = read("%s", format="binary")\n'
                      'print(sum(X))\n' % path)
        ok = r.returncode == 1 and "error:" in r.stderr and why in r.stderr
        report(ok, "refuses " + name,
               "" if ok else "rc %d: %s" % (r.returncode,
                                            r.stderr.strip()[-200:]))
    check_writes(braid, d, report)
    subprocess.run(["rm", "-rf", d])
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
