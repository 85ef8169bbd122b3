#!/usr/bin/env python3
"""SystemDS binary frame files in braid: tests/parity/sysframe.py BRAID

Builds SystemDS's binary frame files byte for byte from the layout its Java
code writes (Hadoop SequenceFile header with LongWritable keys and
FrameBlock values; FrameBlock.write: int32 rows, int32 cols, the
default-meta flag, per column the value-type byte, name and
ColumnMetadata when the meta is not default, and the column Array's
write: STRING, BOOLEAN, BITSET, INT32, INT64, FP32, FP64, CHARACTER,
OPTIONAL), independently of braid's reader (io/sysframe.c), and checks
that braid's read(..., data_type="frame", format="binary") returns the
cells, names and types they encode, from one file (one or several
records, sync marks, blocks out of order, empty blocks) and from a folder
of part files; malformed files are refused with "error:". Then the other
way: frames braid writes with format="binary" must equal, byte for byte
(the sync bytes aside), what this encoder makes of the same frame, with
the configured block size, and read back unchanged.
Prints "N passed, M failed".
"""

import json
import math
import os
import struct
import subprocess
import sys
import tempfile

SYNC = bytes(range(16))
KEY = "org.apache.hadoop.io.LongWritable"
VALUE = "org.apache.sysds.runtime.frame.data.FrameBlock"
# ValueType ordinal + 1 (Types.ValueType) and FrameArrayType ordinals
VT = {"UINT4": 1, "UINT8": 2, "FP32": 3, "FP64": 4, "INT32": 5, "INT64": 6,
      "BOOLEAN": 7, "STRING": 8, "UNKNOWN": 9, "HASH64": 10, "HASH32": 11,
      "CHARACTER": 12}
AT = {"STRING": 0, "BOOLEAN": 1, "BITSET": 2, "INT32": 3, "INT64": 4,
      "FP32": 5, "FP64": 6, "CHARACTER": 7, "RAGGED": 8, "OPTIONAL": 9,
      "DDC": 10, "HASH64": 11, "HASH32": 12}


def text(s):
    b = s.encode()
    return bytes([len(b)]) + b


def header(key=KEY, value=VALUE, comp=0):
    return b"SEQ\x06" + text(key) + text(value) + bytes([comp, 0]) + \
        struct.pack(">i", 0) + SYNC


def java_utf(s):
    """DataOutput.writeUTF: modified UTF-8 of the UTF-16 units."""
    units = s.encode("utf-16-be")
    out = bytearray()
    for k in range(0, len(units), 2):
        c = units[k] << 8 | units[k + 1]
        if 0 < c < 0x80:
            out.append(c)
        elif c < 0x800:
            out += bytes([0xc0 | c >> 6, 0x80 | c & 0x3f])
        else:
            out += bytes([0xe0 | c >> 12, 0x80 | c >> 6 & 0x3f, 0x80 | c & 0x3f])
    return struct.pack(">H", len(out)) + bytes(out)


def string_cost(s):
    """MemoryEstimates.stringCost: 24 for null, 60 + 2 per UTF-16 unit"""
    return 24 if s is None else 60 + 2 * (len(s.encode("utf-16-be")) // 2)


def array(kind, cells):
    """An Array's write(): its kind byte and data."""
    b = bytes([AT[kind]])
    if kind == "STRING":
        size = 16 + 4 + 4 + 8 + 8 + sum(string_cost(c) for c in cells)
        return b + struct.pack(">q", size) + b"".join(java_utf(c or "") for c in cells)
    if kind == "BOOLEAN":
        return b + bytes(1 if c else 0 for c in cells)
    if kind == "BITSET":
        words = [0] * ((len(cells) >> 6) + 1)
        for i, c in enumerate(cells):
            if c:
                words[i >> 6] |= 1 << (i & 63)
        return b + struct.pack(">ii", len(cells), len(words)) + \
            b"".join(struct.pack(">Q", w) for w in words)
    fmt = {"INT32": ">i", "INT64": ">q", "FP32": ">f", "FP64": ">d", "CHARACTER": ">H",
           "HASH64": ">q", "HASH32": ">i"}[kind]
    return b + b"".join(struct.pack(fmt, ord(c) if kind == "CHARACTER" else c) for c in cells)


def ragged(rows, inner, n):
    """RaggedArray.write: int32 size, int32 n, the inner array of n cells"""
    return bytes([AT["RAGGED"]]) + struct.pack(">ii", rows, n) + inner


MAP = {"ZERO": 0, "BIT": 1, "UBYTE": 2, "BYTE": 3, "CHAR": 4, "CHAR_BYTE": 5, "INT": 6}


def mapping(kind, idx, unique):
    """AMapToData.write of the indexes idx (MapToFactory.MAP_TYPE)"""
    b = bytes([MAP[kind]])
    if kind == "ZERO":
        return b + struct.pack(">i", len(idx))
    if kind == "BIT":
        words = [0] * ((len(idx) + 63) // 64)
        for i, v in enumerate(idx):
            if v:
                words[i >> 6] |= 1 << (i & 63)
        return b + struct.pack(">ii", len(idx), len(words)) + b"".join(struct.pack(">Q", w) for w in words)
    b += struct.pack(">ii", unique, len(idx))
    if kind in ("UBYTE", "BYTE"):
        return b + bytes(idx)
    if kind == "CHAR":
        return b + b"".join(struct.pack(">H", v) for v in idx)
    if kind == "CHAR_BYTE":
        return b + b"".join(struct.pack(">H", v & 0xffff) for v in idx) + bytes(v >> 16 for v in idx)
    return b + b"".join(struct.pack(">i", v) for v in idx)


def ddc(mapbytes, dictbytes):
    """DDCArray.write: the mapping, then a flag and the dictionary (None:
    in the .dict file)"""
    return bytes([AT["DDC"]]) + mapbytes + (b"\0" if dictbytes is None else b"\1" + dictbytes)


def dict_file(entries):
    """The .dict file: LongWritable column keys, ArrayWrapper values"""
    data = header(value="org.apache.sysds.runtime.frame.data.columns.ArrayWrapper")
    for col, size, arr in entries:
        v = struct.pack(">i", size) + arr
        data += struct.pack(">ii", 8 + len(v), 8) + struct.pack(">q", col) + v
    return data


def block(cols, rows, names=None, meta=None, first=True, nd=None):
    """FrameBlock.write of a block: cols is a list of (value type, array
    bytes or None for an unallocated column); names / meta (missing-value
    replacements) / nd (ColumnMetadata distinct counts, -1 unknown) make
    the meta non-default."""
    dflt = names is None and meta is None and nd is None
    b = struct.pack(">ii", rows, len(cols)) + bytes([1 if dflt else 0])
    for j, (vt, data) in enumerate(cols):
        t = VT[vt] if data is not None and rows > 0 else -VT[vt]
        b += struct.pack(">b", t)
        if not dflt:
            b += java_utf(names[j] if names else "C%d" % (j + 1))
            mv = meta[j] if meta and first else None
            b += struct.pack(">q", nd[j] if nd and first else -1) + java_utf(mv or "")
        if t > 0:
            b += data
    return b


def record(row, value):
    return struct.pack(">ii", 8 + len(value), 8) + struct.pack(">q", row) + value


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def mtd(path, rows, cols, schema=None):
    s = '{"data_type": "frame", "format": "binary", "rows": %d, "cols": %d' % (rows, cols)
    if schema:
        s += ', "schema": "%s"' % schema
    write(path + ".mtd", (s + "}").encode())


def run_braid(braid, script, opts=()):
    with tempfile.NamedTemporaryFile("w", suffix=".dml", delete=False) as f:
        f.write(script)
    try:
        return subprocess.run([braid] + list(opts) + ["-f", f.name], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=600)
    finally:
        os.unlink(f.name)


def read_frame(braid, path, d, opts=()):
    """braid reads path (binary) and writes it as csv with a header; returns
    (header, rows of cells, schema) or the failed process."""
    out = os.path.join(d, "out.csv")
    p = run_braid(braid, 'F = read("%s", data_type="frame", format="binary")\n'
                  'write(F, "%s", format="csv", header=TRUE)\n' % (path, out), opts)
    if p.returncode:
        return p
    import csv
    with open(out, newline="", encoding="utf-8") as f:   # less SystemDS's #Meta lines
        rows = [r for r in csv.reader(f) if not (r and r[0].startswith("#Meta"))]
    return rows[0], rows[1:]


def same_cells(a, b):
    """Rows of csv cells equal, numbers by value (braid prints 1.0E300 or
    3.0 where Python prints 1e+300 or 3)."""
    def eq(x, y):
        if x == y:
            return True
        try:
            fx, fy = float(x), float(y)
        except ValueError:
            return False
        return fx == fy or (fx != fx and fy != fy)
    return len(a) == len(b) and all(len(r) == len(q) and all(eq(x, y) for x, y in zip(r, q))
                                    for r, q in zip(a, b))


def num(v):
    if v != v:
        return "NaN"
    r = repr(float(v))
    return r[:-2] if r.endswith(".0") else r


def seq_body(b):
    """A sequence file's bytes without its header's 16 random sync bytes."""
    if len(b) < 6 or len(b) < 6 + b[4] + 1 + b[5 + b[4]]:
        return b
    k = 4 + 1 + b[4] + 1 + b[5 + b[4]]   # magic+version, key and value class names
    k += 2 + 4                            # compression flags, no metadata
    return b[:k] + b[k + 16:]


def jdump(path, fields):
    """A .mtd as SystemDS writes it (OrderedJSONObject.toString(4))."""
    body = ",\n".join("    %s: %s" % (json.dumps(k), json.dumps(v)) for k, v in fields)
    write(path + ".mtd", ("{\n" + body + "\n}").encode())


def sysds_list(path, n, items):
    """A list folder as SystemDS's ListWriter makes it: path.mtd and
    path/<i>_<name|null> per item; items are (file name, writer) with
    writer(item path) making the item and its .mtd. Made in reverse order so
    that the folder's order is not the items' order."""
    jdump(path, [("data_type", "list"), ("value_type", "unknown"), ("rows", n), ("cols", 1),
                 ("format", "binary"), ("author", "systemds"), ("created", "2026-11-30 12:00:00 UTC")])
    os.makedirs(path, exist_ok=True)
    for nm, make in reversed(items):
        make(os.path.join(path, nm))


def scalar(vt, txt):
    def make(p):
        write(p, txt.encode())
        jdump(p, [("data_type", "scalar"), ("value_type", vt), ("format", "text"),
                  ("author", "systemds"), ("created", "2026-11-30 12:00:00 UTC")])
    return make


def lists(braid, d, report):
    """Lists in SystemDS's layout (ListWriter / ListReader): item i (from 0)
    in folder/<i>_<name|null>, each with its own .mtd; braid's earlier layout
    (items 1..n, names in the .mtd) still reads; malformed folders refused."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import sysbin
    frame_bytes = header() + record(1, block([("STRING", array("STRING", ["a", "b"])),
                                              ("FP64", array("FP64", [1.5, -2.0]))], 2))
    m = [[1.0, 0.0, 2.5], [-4.0, 5.0, 0.0]]

    def frame_item(p):
        write(p, frame_bytes)
        mtd(p, 2, 2, "STRING,FP64")

    def matrix_item(p):
        sysbin.write(p, sysbin.header() + sysbin.records(m, 4, ["dense"]))
        sysbin.mtd(p, 2, 3)

    sl, sn, old = (os.path.join(d, x) for x in ("sl", "sn", "old"))
    nested = os.path.join(sl, "2_null")
    sysds_list(sl, 4, [("0_null", frame_item), ("1_null", scalar("double", "2.5")),
                       ("2_null", lambda p: sysds_list(p, 2, [("0_null", scalar("string", "hi there")),
                                                             ("1_null", scalar("int", "7"))])),
                       ("3_null", matrix_item)])
    sysds_list(sn, 2, [("0_alpha", scalar("double", "1.0E-5")), ("1_b_c", scalar("boolean", "true"))])
    write(old + ".mtd", b'{"data_type": "list", "rows": 2, "cols": 1, "names": ["x", null], "author": "braid"}')
    os.makedirs(old)
    scalar("int", "4")(os.path.join(old, "1"))
    scalar("string", "z")(os.path.join(old, "2"))
    o1, o2, ow, f1, m1 = (os.path.join(d, x) for x in ("o1", "o2", "ow", "f1", "m1"))
    show = ('print(P + "n=" + length(L) + " f=" + as.scalar(F[2,1]) + "," + as.scalar(F[1,2]) + " s=" '
            '+ as.scalar(L[2]) + " m=" + sum(M) + "," + nrow(M) + "," + ncol(M))\nprint(toString(L[3]))\n')
    p = run_braid(braid, (
        'L = read("%s", data_type="list")\nF = as.frame(L[1])\nM = as.matrix(L[4])\nP = "sysds "\n' + show +
        'T = read("%s", data_type="list")\nprint("named a=" + as.scalar(T["alpha"]) + " b=" + as.scalar(T["b_c"]))\n'
        'O = read("%s", data_type="list")\nprint("old=" + as.scalar(O["x"]) + as.scalar(O[2]) + length(O))\n'
        'write(list(F, 2.5, list("hi there", 7), M), "%s", format="binary")\n'
        'write(F, "%s", format="binary")\nwrite(M, "%s", format="binary")\n'
        'write(list(alpha=1e-5, b_c=TRUE), "%s", format="binary")\n'
        'write(list(1, 2, 3), "%s", format="binary")\nwrite(list(5), "%s", format="binary")\n'
        'W = read("%s", data_type="list")\nprint("ow=" + length(W) + "," + as.scalar(W[1]))\n'
        'L = read("%s", data_type="list")\nF = as.frame(L[1])\nM = as.matrix(L[4])\nP = "back "\n' + show +
        'T = read("%s", data_type="list")\nprint("named back a=" + as.scalar(T["alpha"]) + " b=" + as.scalar(T["b_c"]))\n')
        % (sl, sn, old, o1, f1, m1, o2, ow, ow, ow, o1, o2))
    out = p.stdout.decode()
    want = "n=4 f=b,1.5 s=2.5 m=4.5,2,3"
    for tag in ("sysds", "back"):
        lines = [ln for ln in out.splitlines() if ln.startswith(tag + " ")]
        report(p.returncode == 0 and lines == [tag + " " + want] and out.count("hi there") == 2 and "7" in out,
               "list: SystemDS's list folder %s" % ("read" if tag == "sysds" else "written by braid, read back"),
               p.stderr.decode()[-400:] + " out " + out[-400:])
    report("named a=1.0E-5 b=TRUE" in out and "named back a=1.0E-5 b=TRUE" in out,
           "list: named items <i>_<name> (a name with '_' kept whole)", out[-300:])
    report("old=4z2" in out, "list: braid's earlier layout (items 1..n, names in the .mtd) still reads", out[-300:])
    report("ow=1,5" in out, "list: a shorter list over a longer one leaves no stale items", out[-300:])

    def ls(x):
        return sorted(os.listdir(x)) if os.path.isdir(x) else []

    def meta(x):
        try:
            j = json.load(open(x + ".mtd", encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return {k: v for k, v in j.items() if k not in ("author", "created")}

    def raw(x):
        return open(x, "rb").read() if os.path.isfile(x) else b""

    names = ["0_null", "1_null", "2_null", "3_null"]
    sub = os.path.join(o1, "2_null")
    lay = ls(o1) == sorted(names + [x + ".mtd" for x in names]) and \
        ls(sub) == ["0_null", "0_null.mtd", "1_null", "1_null.mtd"] and \
        ls(o2) == ["0_alpha", "0_alpha.mtd", "1_b_c", "1_b_c.mtd"]
    report(lay, "list: braid writes SystemDS's item names", "%s %s %s" % (ls(o1), ls(sub), ls(o2)))
    lm = {"data_type": "list", "value_type": "unknown", "cols": 1, "format": "binary"}
    sm = {"data_type": "scalar", "format": "text"}
    ok = meta(o1) == dict(lm, rows=4) and meta(sub) == dict(lm, rows=2) and meta(o2) == dict(lm, rows=2) and \
        meta(os.path.join(o1, "1_null")) == dict(sm, value_type="double") and \
        meta(os.path.join(sub, "0_null")) == dict(sm, value_type="string") and \
        meta(os.path.join(sub, "1_null")) == dict(sm, value_type="int") and \
        meta(os.path.join(o2, "1_b_c")) == dict(sm, value_type="boolean") and \
        meta(os.path.join(o1, "0_null")) == meta(f1) and meta(os.path.join(o1, "3_null")) == meta(m1)
    report(ok, "list: the .mtd files hold SystemDS's fields",
           "%s %s %s" % (meta(o1), meta(os.path.join(o1, "1_null")), meta(sub)))
    ok = raw(os.path.join(o1, "1_null")) == b"2.5" and raw(os.path.join(sub, "0_null")) == b"hi there" and \
        raw(os.path.join(sub, "1_null")) == b"7" and raw(os.path.join(o2, "0_alpha")) == b"1.0E-5" and \
        raw(os.path.join(o2, "1_b_c")) == b"true" and raw(f1)[:4] == b"SEQ\x06" and \
        seq_body(raw(os.path.join(o1, "0_null"))) == seq_body(raw(f1)) and raw(m1)[:4] == b"SEQ\x06" and \
        seq_body(raw(os.path.join(o1, "3_null"))) == seq_body(raw(m1))
    report(ok, "list: items byte for byte (scalars as Java's toString, frame and matrix as written alone)",
           "%r %r" % (raw(os.path.join(o1, "1_null")), raw(os.path.join(o2, "0_alpha"))))

    # malformed folders: refused with the file and the reason
    bad = [("bad_name", 2, [("0_null", scalar("int", "1")), ("zz", scalar("int", "2"))], "zz.mtd", "not a list item"),
           ("bad_index", 2, [("0_null", scalar("int", "1")), ("2_null", scalar("int", "2"))], "2_null.mtd", "outside"),
           ("bad_dup", 2, [("0_a", scalar("int", "1")), ("0_b", scalar("int", "2"))], "bad_dup/0_", "a second item"),
           ("bad_count", 3, [("0_null", scalar("int", "1")), ("1_null", scalar("int", "2"))], "bad_count",
            "holds 2 item .mtd files"),
           ("bad_type", 1, [("0_null", lambda q: (write(q, b"1"), jdump(q, [("data_type", "tensor")])))],
            "0_null.mtd", "not supported")]
    for nm, n, items, where, why in bad:
        q = os.path.join(d, nm)
        sysds_list(q, n, items)
        r = run_braid(braid, 'L = read("%s", data_type="list")\nprint(length(L))\n' % q)
        err = r.stderr.decode()
        report(r.returncode == 1 and "error:" in err and where in err and why in err,
               "list: malformed folder refused (%s)" % nm, "rc %d %s" % (r.returncode, err[-300:]))
    q = os.path.join(d, "bad_rows")
    write(q + ".mtd", b'{"data_type": "list", "cols": 1}')
    os.makedirs(q)
    r = run_braid(braid, 'L = read("%s", data_type="list")\nprint(length(L))\n' % q)
    report(r.returncode == 1 and "bad_rows.mtd" in r.stderr.decode() and "rows" in r.stderr.decode(),
           "list: malformed folder refused (no rows)", r.stderr.decode()[-300:])


def block_meta(data):
    """(name, distinct count, replacement) per column of the first record
    of a binary frame file whose columns are all STRING (a transform meta
    frame); None for default meta."""
    k = 4 + 1 + data[4] + 1 + data[5 + data[4]] + 6 + 16 + 16   # header, record lengths and key
    rows, cols, dflt = struct.unpack(">iib", data[k:k + 9])
    k += 9
    if dflt:
        return None

    def utf(k):
        n = struct.unpack(">H", data[k:k + 2])[0]
        return data[k + 2:k + 2 + n].decode("utf-8", "replace"), k + 2 + n
    out = []
    for _ in range(cols):
        t = struct.unpack(">b", data[k:k + 1])[0]
        name, k = utf(k + 1)
        nd = struct.unpack(">q", data[k:k + 8])[0]
        mv, k = utf(k + 8)
        out.append((name, nd, mv or None))
        if t > 0 and rows > 0:
            assert data[k] == AT["STRING"]
            k += 9
            for _ in range(rows):
                _, k = utf(k)
    return out


def distinct_counts(braid, d, conf, report):
    """ColumnMetadata's distinct counts: carried through binary frames (in
    every block, as FrameBlock.slice shares the metadata), csv "#Meta·MV" /
    "#Meta·ND" lines and text "-1 j nd" / "-2 j mv" cells, and set by
    transformencode (recode: distinct values, bin: bins)."""
    strs, nums = ["a", "b", None, "d", "e"], [1.5, -2.0, 3.0, 0.0, 7.25]

    def frame_bytes(r_blocks, nd, mv):
        data = header()
        for r0, r1 in r_blocks:
            cols = [("STRING", array("STRING", strs[r0:r1])), ("FP64", array("FP64", nums[r0:r1]))]
            data += record(r0 + 1, block(cols, r1 - r0, ["C1", "C2"], mv, True, nd))
        return data
    src, ob, oc, ot = (os.path.join(d, x) for x in ("nd_src.bin", "nd_out.bin", "nd_out.csv", "nd_out.txt"))
    write(src, frame_bytes([(0, 4), (4, 5)], [7, -1], [None, "q"]))
    mtd(src, 5, 2, "STRING,FP64")
    mid = "\u00b7"
    csv_src, txt_src, ob2, ob3, meta_out = (os.path.join(d, x) for x in
                                            ("nd_src.csv", "nd_src.txt", "nd2.bin", "nd3.bin", "nd_meta.bin"))
    with open(csv_src, "w", encoding="utf-8") as f:
        f.write("x,y\n#Meta%sMV,null,q\n#Meta%sND,7,-1\na,1.5\nb,-2.0\n,3.0\nd,0.0\ne,7.25\n" % (mid, mid))
    with open(txt_src, "w", encoding="utf-8") as f:
        f.write("-1 1 7\n-2 1 null\n-1 2 -1\n-2 2 q\n1 1 a\n2 1 b\n4 1 d\n5 1 e\n1 2 1.5\n2 2 -2.0\n"
                "3 2 3.0\n4 2 0.0\n5 2 7.25\n")
    p = run_braid(braid, (
        'F = read("%s", data_type="frame", format="binary")\nwrite(F, "%s", format="binary")\n'
        'write(F, "%s", format="csv", header=TRUE)\nwrite(F, "%s", format="text")\n'
        'G = read("%s", data_type="frame", format="csv", header=TRUE, schema="STRING,FP64")\n'
        'write(G, "%s", format="binary")\n'
        'H = read("%s", data_type="frame", format="text", rows=5, cols=2, schema="STRING,FP64")\n'
        'write(H, "%s", format="binary")\n'
        'T = frame(data=["a","1","x","9", "b","2","y","9", "a","3","x","9", "c","4","z","9", "d","5","x","9"], '
        'rows=5, cols=4, schema=["STRING","FP64","STRING","FP64"])\n'
        '[X, M] = transformencode(target=T, spec="{ids: true, recode: [1, 3], dummycode: [3], '
        'bin: [{id: 2, method: equi-width, numbins: 2}]}")\nwrite(M, "%s", format="binary")\n')
        % (src, ob, oc, ot, csv_src, ob2, txt_src, ob3, meta_out), ("-config", conf))
    err = p.stderr.decode()[-300:]

    def raw(x):
        return open(x, "rb").read() if os.path.isfile(x) else b""
    report(p.returncode == 0 and seq_body(raw(ob)) == seq_body(raw(src)),
           "distinct counts: a binary frame's ColumnMetadata in every block, read and written back byte for byte", err)
    csv_text = raw(oc).decode("utf-8", "replace")
    report(csv_text.startswith("C1,C2\n#Meta%sMV,null,q\n#Meta%sND,7,-1\na,1.5\n" % (mid, mid)),
           "distinct counts: csv #Meta lines written", csv_text[:120])
    report(raw(ot).decode("utf-8", "replace").startswith("-1 1 7\n-2 1 null\n-1 2 -1\n-2 2 q\n1 1 a\n"),
           "distinct counts: text -1 / -2 cells written", repr(raw(ot)[:80]))
    want = seq_body(frame_bytes([(0, 4), (4, 5)], [7, -1], [None, "q"]))
    named = seq_body(header() + b"".join(
        record(r0 + 1, block([("STRING", array("STRING", strs[r0:r1])), ("FP64", array("FP64", nums[r0:r1]))],
                             r1 - r0, ["x", "y"], [None, "q"], True, [7, -1])) for r0, r1 in ((0, 4), (4, 5))))
    report(seq_body(raw(ob2)) == named, "distinct counts: csv #Meta lines read", err)
    report(seq_body(raw(ob3)) == want, "distinct counts: text -1 / -2 cells read", err)
    meta = block_meta(raw(meta_out)) if raw(meta_out) else None
    report(meta is not None and [m[1] for m in meta] == [4, 2, 3, -1],
           "distinct counts: transformencode's meta frame (recode 4 and 3 values, 2 bins, none)", "%r %s" % (meta, err))
    bad = os.path.join(d, "nd_bad.csv")
    with open(bad, "w", encoding="utf-8") as f:
        f.write("#Meta%sND,7,x\na,1\n" % mid)
    r = run_braid(braid, 'F = read("%s", data_type="frame", format="csv")\nprint(nrow(F))\n' % bad)
    e2 = r.stderr.decode()
    report(r.returncode == 1 and "nd_bad.csv" in e2 and "line 1" in e2 and "distinct count" in e2,
           "distinct counts: a csv #Meta ND line that is not integers refused", e2[-300:])


def main(argv):
    braid = os.path.abspath(argv[1])
    passed = failed = 0

    def report(ok, label, msg=""):
        nonlocal passed, failed
        print("%s %s%s" % ("PASS" if ok else "FAIL", label, (": " + msg) if msg and not ok else ""), flush=True)
        passed, failed = (passed + 1, failed) if ok else (passed, failed + 1)

    with tempfile.TemporaryDirectory(prefix="braid-sysframe-") as d:
        # 1. every column kind SystemDS writes, default meta, one record
        strs = ["ab", None, "\u00c4\u00e9\U0001f600", "x y,z", "\u4e2d"]
        dbl = [1.5, float("nan"), -0.0, 1e300, -2.25]
        lng = [3, -7, 9000000000, 0, -1]
        bools = [True, False, True, True, False]
        i32 = [1, -2, 2147483647, 0, 5]
        f32 = [0.1, -1.5, 3.0, 0.0, 1e10]
        chars = ["a", "\u00e9", "Z", "1", " "]
        opt_vals, opt_flags = [1.25, 0.0, 7.0, 0.0, -3.0], [True, False, True, False, True]
        cols = [("STRING", array("STRING", strs)), ("FP64", array("FP64", dbl)),
                ("INT64", array("INT64", lng)), ("BOOLEAN", array("BOOLEAN", bools)),
                ("INT32", array("INT32", i32)), ("FP32", array("FP32", f32)),
                ("CHARACTER", array("CHARACTER", chars)),
                ("FP64", bytes([AT["OPTIONAL"]]) + array("FP64", opt_vals) + array("BOOLEAN", opt_flags)),
                ("STRING", None)]
        path = os.path.join(d, "kinds.bin")
        write(path, header() + record(1, block(cols, 5)))
        want = [[strs[i] or "", num(dbl[i]), str(lng[i]), "true" if bools[i] else "false", str(i32[i]),
                 num(struct.unpack(">f", struct.pack(">f", f32[i]))[0]), chars[i],
                 num(opt_vals[i]) if opt_flags[i] else "NaN", ""] for i in range(5)]
        for with_mtd in (False, True):
            if with_mtd:
                mtd(path, 5, 9)
            got = read_frame(braid, path, d)
            ok = isinstance(got, tuple) and same_cells(got[1], want) and got[0] == ["C%d" % j for j in range(1, 10)]
            report(ok, "read every column kind%s" % (" with .mtd" if with_mtd else ""),
                   got.stderr.decode()[-300:] if not isinstance(got, tuple) else "got %r" % (got,))

        # 1b. an FP64 array under an INT64 column type: each value as
        # Java's (long) cast makes it (NaN 0, saturated past the range;
        # the fuzzer's find: a C cast of 1e300 was undefined)
        huge = [1e300, -1e300, float("nan"), 2.75, -2.75, 9.3e18]
        path = os.path.join(d, "fp64-int64.bin")
        write(path, header() + record(1, block([("INT64", array("FP64", huge))], len(huge))))
        got = read_frame(braid, path, d)
        want = [[str(v)] for v in (2**63 - 1, -2**63, 0, 2, -2, 2**63 - 1)]
        report(isinstance(got, tuple) and got[1] == want, "an FP64 array under an INT64 type, cast as Java's (long)",
               got.stderr.decode()[-300:] if not isinstance(got, tuple) else "got %r" % (got[1],))

        # 2. names and replacements, several records (3 rows each), a sync
        # mark, records out of order, an empty block, a BITSET of 70 rows
        n = 70
        names = ["id", "s\u00e9", "flag"]
        ids = list(range(n))
        ss = ["v%d" % (i % 7) if i % 5 else None for i in range(n)]
        fl = [i % 3 == 0 for i in range(n)]
        recs = []
        for r0 in range(0, n, 30):
            r1 = min(n, r0 + 30)
            kind = "BITSET" if r1 - r0 > 64 else "BOOLEAN"
            cols = [("INT64", array("INT64", ids[r0:r1])), ("STRING", array("STRING", ss[r0:r1])),
                    ("BOOLEAN", array(kind, fl[r0:r1]))]
            recs.append(record(r0 + 1, block(cols, r1 - r0, names, ["0", "none", None], r0 == 0)))
        big = [("INT64", array("INT64", ids)), ("STRING", array("STRING", ss)), ("BOOLEAN", array("BITSET", fl))]
        empty = record(31, block([("INT64", None), ("STRING", None), ("BOOLEAN", None)], 0))
        want = [[str(ids[i]), ss[i] or "", "true" if fl[i] else "false"] for i in range(n)]
        layouts = {
            "records out of order, sync mark, empty block":
                header() + recs[2] + struct.pack(">i", -1) + SYNC + recs[0] + empty + recs[1],
            "one record with a bit set": header() + record(1, block(big, n, names, ["0", "none", None])),
        }
        for label, data in layouts.items():
            path = os.path.join(d, "multi.bin")
            write(path, data)
            mtd(path, n, 3)
            got = read_frame(braid, path, d)
            ok = isinstance(got, tuple) and got[0] == names and same_cells(got[1], want)
            report(ok, "read " + label, got.stderr.decode()[-300:] if not isinstance(got, tuple)
                   else "got %r" % (got[0],))
        # a folder of part files (SystemDS's parallel writer)
        folder = os.path.join(d, "parts.bin")
        os.mkdir(folder)
        for k, rec in enumerate(recs):
            write(os.path.join(folder, "0-m-%05d" % k), header() + rec)
        write(os.path.join(folder, "_SUCCESS"), b"")
        mtd(folder, n, 3)
        got = read_frame(braid, folder, d)
        report(isinstance(got, tuple) and got[0] == names and same_cells(got[1], want), "read a folder of part files",
               got.stderr.decode()[-300:] if not isinstance(got, tuple) else "")

        # 2b. hash, ragged and dictionary (DDC) columns: every mapping kind,
        # dictionaries inline (of strings, numbers, a bit set, an optional
        # array) and in the .dict file, over two records
        n = 6
        h64 = [0x1f, -1, 0, 0x123456789abcdef0, 5, -0x7fffffffffffffff - 1]
        h32 = [-1, 255, 0, 0x7fffffff, -0x80000000, 16]
        rs = ["p", None, "q\u00e9", "r"]
        rd = [2.5, -1.0, 4.0]
        big = 70000
        bitdict = [i % 7 == 3 for i in range(big + 1)]
        specs = [   # (value type, mapping kind, indexes, dictionary kind, dictionary cells, expected cells)
            ("STRING", "UBYTE", [2, 0, 1, 1, 0, 2], "STRING", ["a", "b\u00e9", None], None),
            ("FP64", "BIT", [1, 0, 0, 1, 1, 0], "FP64", [0.5, -3.0], None),
            ("INT64", "ZERO", [0] * n, "INT64", [42], None),
            ("STRING", "BYTE", [200, 3, 0, 200, 199, 1], "STRING", ["s%d" % i for i in range(201)], None),
            ("FP64", "CHAR", [65535, 0, 2, 1, 65535, 0], "FP64", [1.0, 2.0, 3.0] + [0.0] * 65532 + [9.5], None),
            ("BOOLEAN", "CHAR_BYTE", [big, 3, 10, 70000 - 65536, 0, 17], "BITSET", bitdict, None),
            ("INT64", "INT", [2, 1, 0, 0, 2, 1], "OPTIONAL", [4, 0, 9], [True, False, True]),
        ]
        cols, want_cols = [("HASH64", array("HASH64", h64)), ("HASH32", array("HASH32", h32)),
                           ("STRING", ragged(n, array("STRING", rs), 4)),
                           ("FP64", ragged(n, array("FP64", rd), 3))], []
        want_cols += [["%x" % (v & (1 << 64) - 1) for v in h64], ["%x" % (v & (1 << 32) - 1) for v in h32],
                      [c or "" for c in rs] + ["", ""], [num(v) for v in rd] + ["NaN"] * 3]
        for vt, mk, idx, dk, cells, flags in specs:
            unique = len(cells)
            if dk == "OPTIONAL":
                arr = bytes([AT["OPTIONAL"]]) + array("INT64", cells) + array("BOOLEAN", flags)
                shown = [str(c) if f else "0" for c, f in zip(cells, flags)]
            else:
                arr = array(dk, cells)
                shown = [("true" if c else "false") if vt == "BOOLEAN" else (c or "") if vt == "STRING"
                         else num(c) for c in cells]
            cols.append((vt, ddc(mapping(mk, idx, unique), arr)))
            want_cols.append([shown[k] for k in idx])
        dstr = ["x", "yy", None, "\u4e2d"]
        didx = [3, 0, 0, 1, 2, 3]
        cols.append(("STRING", ddc(mapping("UBYTE", didx, 4), None)))
        want_cols.append([dstr[k] or "" for k in didx])
        want = [[c[i] for c in want_cols] for i in range(n)]
        ncol = len(cols)
        dictf = dict_file([(ncol - 1, 2, array("STRING", ["old", "older"])), (ncol - 1, 4, array("STRING", dstr))])
        path = os.path.join(d, "ddc.bin")
        write(path, header() + record(1, block(cols, n)))
        write(path + ".dict", dictf)
        mtd(path, n, ncol)
        got = read_frame(braid, path, d)
        report(isinstance(got, tuple) and same_cells(got[1], want), "read hash, ragged and dictionary columns",
               got.stderr.decode()[-300:] if not isinstance(got, tuple) else "got %r want %r" % (got[1], want))
        # the same as a folder of two parts of 3 rows, the .dict beside it
        def part(r0, r1):
            pc = [("HASH64", array("HASH64", h64[r0:r1])), ("INT64", ddc(mapping("INT", [2, 1, 0, 0, 2, 1][r0:r1], 3),
                                                                          array("INT64", [7, 8, 9]))),
                  ("STRING", ddc(mapping("UBYTE", didx[r0:r1], 4), None))]
            return header() + record(r0 + 1, block(pc, r1 - r0))
        folder = os.path.join(d, "ddcparts.bin")
        os.mkdir(folder)
        write(os.path.join(folder, "0-m-00000"), part(0, 3))
        write(os.path.join(folder, "0-m-00001"), part(3, 6))
        write(folder + ".dict", dict_file([(2, 4, array("STRING", dstr))]))
        mtd(folder, n, 3)
        got = read_frame(braid, folder, d)
        want = [[want_cols[0][i], str([7, 8, 9][[2, 1, 0, 0, 2, 1][i]]), want_cols[-1][i]] for i in range(n)]
        report(isinstance(got, tuple) and same_cells(got[1], want), "read dictionary columns from parts and .dict",
               got.stderr.decode()[-300:] if not isinstance(got, tuple) else "got %r" % (got[1],))
        # a dictionary column whose dictionary is missing or too short,
        # a ragged column longer than its block, a bad .dict
        ddc_bad = {
            "a dictionary column without its .dict entry": (ddc(mapping("UBYTE", [0, 1], 2), None), None),
            "a dictionary index outside its dictionary": (ddc(mapping("INT", [0, 2], 2), array("FP64", [1, 2])),
                                                          None),
            "a .dict entry too short": (ddc(mapping("BYTE", [0, 3], 4), None),
                                        dict_file([(0, 3, array("FP64", [1, 2, 3]))])),
            "a .dict of another value class": (ddc(mapping("BYTE", [0, 1], 2), None),
                                               dict_file([(0, 2, array("FP64", [1, 2]))]).replace(b"ArrayWrapper",
                                                                                                  b"ArrayWrappex")),
            "a ragged column longer than its block": (ragged(2, array("FP64", [1, 2, 3]), 3), None),
            "a ragged column of another size": (ragged(3, array("FP64", [1]), 1), None),
            "a truncated mapping": (bytes([AT["DDC"], MAP["INT"]]) + struct.pack(">ii", 2, 2) + b"\0\0\0", None),
        }
        for label, (arr, dictbytes) in ddc_bad.items():
            path = os.path.join(d, "badddc.bin")
            write(path, header() + record(1, block([("FP64", arr)], 2)))
            if os.path.exists(path + ".dict"):
                os.remove(path + ".dict")
            if dictbytes is not None:
                write(path + ".dict", dictbytes)
            mtd(path, 2, 1)
            got = read_frame(braid, path, d)
            ok = not isinstance(got, tuple) and got.returncode == 1 and b"error:" in got.stderr
            report(ok, "refuse " + label, "" if ok else "read it: %r" % (got,))

        # 3. malformed files are refused
        good = block([("FP64", array("FP64", [1.0, 2.0]))], 2)
        bad = {
            "value class": header(value="org.apache.sysds.runtime.matrix.data.MatrixBlock") + record(1, good),
            "compressed": header(comp=1) + record(1, good),
            "truncated record": (header() + record(1, good))[:-3],
            "record longer than its block": header() + record(1, good + b"\0"),
            "dictionary mapping of another size": header() + record(1, block([("FP64", bytes([AT["DDC"]]) +
                                                                                   b"\0" * 16)], 2)),
            "unknown column kind": header() + record(1, block([("FP64", bytes([13]) + b"\0" * 16)], 2)),
            "bad sync mark": header() + struct.pack(">i", -1) + bytes(16) + record(1, good),
            "rows beyond the .mtd": header() + record(2, good),
        }
        # without a .mtd the blocks give the size: a first row of 2^40
        # must be refused, not allocated
        bad["a block at row 2^40 (no .mtd)"] = header() + record(1 << 40, good)
        # braid's own layout (the fuzzer's find): a row count of 2^45
        # with a few bytes of data, refused before it is allocated
        bad["braid's layout, 2^45 rows (no .mtd)"] = b"BRAIDFB1" + struct.pack("<IIqq", 0x01020304, 0, 0x3b << 40, 2) + \
            b"\x01" + struct.pack("<q", 2) + b"C1" + b"\x01" + struct.pack("<q", 2) + b"C2" + \
            struct.pack("<4d", 1, 3, 2, 4)
        for label, data in bad.items():
            path = os.path.join(d, "bad.bin")
            write(path, data)
            if os.path.exists(path + ".mtd"):
                os.remove(path + ".mtd")
            if "no .mtd" not in label:
                mtd(path, 2, 1)
            got = read_frame(braid, path, d)
            ok = not isinstance(got, tuple) and got.returncode == 1 and b"error:" in got.stderr
            report(ok, "refuse " + label, "" if ok else "read it")

        # 4. braid writes SystemDS's bytes: one record, then blocks of 4 rows
        # (sysds.defaultblocksize), names and a replacement
        src = os.path.join(d, "src.csv")
        rows = [["r%d" % i if i % 4 else "", num(i * 0.5 - 1), str(i * 1000003), "TRUE" if i % 3 else "FALSE"]
                for i in range(10)]
        with open(src, "w", encoding="utf-8") as f:
            f.write("\n".join(",".join(r) for r in rows) + "\n")
        conf = os.path.join(d, "bs4.xml")
        write(conf, b"<root><sysds.defaultblocksize>4</sysds.defaultblocksize></root>")
        names4 = ["name", "x\u00e9", "k", "b"]
        with open(src + "h", "w", encoding="utf-8") as f:
            f.write(",".join(names4) + "\n" + "\n".join(",".join(r) for r in rows) + "\n")
        for blen, named, opts in ((1000, False, ()), (4, True, ("-config", conf))):
            out = os.path.join(d, "w%d.bin" % blen)
            p = run_braid(braid, 'F = read("%s", data_type="frame", format="csv", header=%s, '
                          'schema="STRING,FP64,INT64,BOOLEAN")\nwrite(F, "%s", format="binary")\n'
                          % (src + "h" if named else src, "TRUE" if named else "FALSE", out), opts)
            if p.returncode:
                report(False, "write blocks of %d" % blen, p.stderr.decode()[-300:])
                continue
            cells = [[r[0] or None for r in rows], [float(r[1]) for r in rows], [int(r[2]) for r in rows],
                     [r[3] == "TRUE" for r in rows]]
            data = header()
            for r0 in range(0, 10, blen):
                r1 = min(10, r0 + blen)
                cols = [("STRING", array("STRING", cells[0][r0:r1])), ("FP64", array("FP64", cells[1][r0:r1])),
                        ("INT64", array("INT64", cells[2][r0:r1])),
                        ("BOOLEAN", array("BOOLEAN", cells[3][r0:r1]))]
                data += record(r0 + 1, block(cols, r1 - r0, names4 if named else None))
            with open(out, "rb") as f:
                got = f.read()
            sync_at = len(header()) - 16
            same = len(got) == len(data) and got[:sync_at] == data[:sync_at] and \
                got[sync_at + 16:] == data[sync_at + 16:]
            with open(out + ".mtd", encoding="utf-8") as f:
                meta = f.read()
            ok = same and '"format": "binary"' in meta and '"blocksize": %d' % blen in meta and \
                '"schema": "STRING,FP64,INT64,BOOLEAN"' in meta
            report(ok, "write SystemDS's bytes, blocks of %d" % blen,
                   "bytes differ" if not same else "mtd %s" % meta)
            back = read_frame(braid, out, d)
            wantc = [[r[0], num(float(r[1])), r[2], "true" if r[3] == "TRUE" else "false"] for r in rows]
            report(isinstance(back, tuple) and same_cells(back[1], wantc) and back[0] == (names4 if named else ['C1', 'C2', 'C3', 'C4']), "round trip, blocks of %d" % blen,
                   back.stderr.decode()[-300:] if not isinstance(back, tuple) else "got %r" % (back[1],))
        # names and a boolean column over 64 rows (BITSET) round trip
        out = os.path.join(d, "named.bin")
        with open(src + "70", "w", encoding="utf-8") as f:
            f.write("a,b\u00e9,c\n" + "".join("%d,%d,%s\n" % (i, 70 + i, "TRUE" if i % 3 == 0 else "FALSE")
                                              for i in range(1, 71)))
        p = run_braid(braid, 'F = read("%s", data_type="frame", format="csv", header=TRUE, '
                      'schema="FP64,INT64,BOOLEAN")\nwrite(F, "%s", format="binary")\n' % (src + "70", out))
        back = read_frame(braid, out, d) if not p.returncode else p
        ok = isinstance(back, tuple) and back[0] == ["a", "b\u00e9", "c"] and len(back[1]) == 70 and \
            same_cells(back[1][2:4], [["3", "73", "true"], ["4", "74", "false"]])
        report(ok, "round trip of names and a bit set",
               back.stderr.decode()[-300:] if not isinstance(back, tuple) else "got %r" % (back[0],))
        # 5. SystemDS's parallel writer (FrameWriterBinaryBlockParallel):
        # part files = 8 bytes a cell / 16 KiB, at most the threads; a
        # folder of parts of ceil(rows / blen / threads) * blen rows, each
        # written as the single-file writer writes its rows; a former
        # frame's .dict goes
        conf300 = os.path.join(d, "bs300.xml")
        write(conf300, b"<root><sysds.defaultblocksize>300</sysds.defaultblocksize></root>")
        for nrow, ncol, threads, blen, opts in ((2500, 4, 3, 1000, ()), (2500, 4, 3, 300, ("-config", conf300)),
                                                 (1000, 5, 3, 1000, ()), (1000, 4, 3, 1000, ()), (2500, 4, 1, 1000, ()),
                                                 (1000, 2, 3, 1000, ())):
            srcp = os.path.join(d, "par.csv")
            cells = [["k%d" % (i % 13) if i % 9 else None for i in range(nrow)],
                     [i * 0.25 - 3 for i in range(nrow)], [i * 7 - 100 for i in range(nrow)],
                     [i % 4 == 1 for i in range(nrow)], [i * -1.5 for i in range(nrow)]][:ncol]
            with open(srcp, "w", encoding="utf-8") as f:
                for i in range(nrow):
                    fmt = [lambda v: v or "", num, str, lambda v: "TRUE" if v else "FALSE", num]
                    f.write(",".join(fmt[j](cells[j][i]) for j in range(ncol)) + "\n")
            out = os.path.join(d, "par.bin")
            write(out + ".dict", b"stale")
            kinds = ["STRING", "FP64", "INT64", "BOOLEAN", "FP64"][:ncol]
            p = run_braid(braid, 'F = read("%s", data_type="frame", format="csv", header=FALSE, schema="%s")\n'
                          'write(F, "%s", format="binary")\n' % (srcp, ",".join(kinds), out),
                          ("-threads", str(threads)) + opts)
            label = "parallel write of %dx%d, %d threads, blocks of %d" % (nrow, ncol, threads, blen)
            if p.returncode:
                report(False, label, p.stderr.decode()[-300:])
                continue
            nparts = min(threads, max(1, nrow * ncol * 8 // 16384))
            plen = math.ceil(nrow / blen / nparts) * blen
            want_files = {}
            for k in range(nparts):
                r0, r1 = k * plen, min(nrow, (k + 1) * plen)
                if r0 >= nrow:
                    break
                data = header()
                step = nrow if nrow <= blen else blen
                for b0 in range(r0, r1, step):
                    b1 = min(nrow, b0 + step)
                    data += record(b0 + 1, block([(kinds[j], array("BOOLEAN" if kinds[j] == "BOOLEAN" and b1 - b0 <= 64
                                                                   else "BITSET" if kinds[j] == "BOOLEAN"
                                                                   else kinds[j], cells[j][b0:b1]))
                                                  for j in range(ncol)], b1 - b0))
                want_files["0-m-%05d" % k] = data
            if nparts == 1:
                got_files = {"": open(out, "rb").read()} if os.path.isfile(out) else {}
                want_files = {"": want_files["0-m-00000"]}
            else:
                got_files = {q: open(os.path.join(out, q), "rb").read() for q in sorted(os.listdir(out))} \
                    if os.path.isdir(out) else {}
            sync_at = len(header()) - 16
            same = sorted(got_files) == sorted(want_files) and all(
                len(got_files[q]) == len(w) and got_files[q][:sync_at] == w[:sync_at] and
                got_files[q][sync_at + 16:] == w[sync_at + 16:] for q, w in want_files.items())
            report(same and not os.path.exists(out + ".dict"), label,
                   "files %s, want %s%s" % (sorted(got_files), sorted(want_files),
                                           ", .dict kept" if os.path.exists(out + ".dict") else ""))
            back = read_frame(braid, out, d)
            shown = [lambda v: v or "", num, str, lambda v: "true" if v else "false", num]
            wantc = [[shown[j](cells[j][i]) for j in range(ncol)] for i in range(nrow)]
            report(isinstance(back, tuple) and same_cells(back[1], wantc), label + ": read back",
                   back.stderr.decode()[-300:] if not isinstance(back, tuple) else "")
        # 6. a frame in a list is written in the list's format, binary too
        # (SystemDS's ListWriter exports every item with it)
        lst = os.path.join(d, "list.bin")
        p = run_braid(braid, 'F = read("%s", data_type="frame", format="csv", header=TRUE, '
                      'schema="STRING,FP64,INT64,BOOLEAN")\nL = list(F, 7)\nwrite(L, "%s", format="binary")\n'
                      'M = read("%s", data_type="list")\nG = as.frame(M[1])\nprint(toString(G))\n'
                      'print(nrow(G) + ncol(G))\n' % (src + "h", lst, lst))
        item = os.path.join(lst, "0_null")
        head = open(item, "rb").read(4) if os.path.isfile(item) else b""
        meta = open(item + ".mtd", encoding="utf-8").read() if os.path.isfile(item + ".mtd") else ""
        ok = p.returncode == 0 and head == b"SEQ\x06" and '"format": "binary"' in meta and \
            "14" in p.stdout.decode() and "r1" in p.stdout.decode()
        report(ok, "a frame in a list written as a binary frame",
               p.stderr.decode()[-300:] + " head %r mtd %s" % (head, meta))
        lists(braid, d, report)
        distinct_counts(braid, d, conf, report)
    print("%d passed, %d failed" % (passed, failed), flush=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
