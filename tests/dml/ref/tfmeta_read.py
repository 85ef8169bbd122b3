"""transformmeta by SystemDS's rules (TfMetaUtils.readTransformMetaDataFromFile
and convertToTransformMetaDataFrame), in plain Python.

Writes the metadata directories a file-based transform leaves
(refdata/tfmeta_read/meta with column.names joined by ",", meta_pipe the
same joined by "|"), then the frame transformmeta builds from them:
  - one STRING column per name, rows = the largest Recode .ndistinct or Bin
    nbins over ALL columns that have such files (also ones the spec skips);
  - the spec's recoded/dummycoded columns: "token·code" per map line, the
    token unquoted up to the last '"', the code up to the next ',';
  - the spec's binned columns: "lo·hi" per bin, lo = min + i w,
    hi = min + (i+1) w, printed as Java's Double.toString (Python's repr
    agrees for these magnitudes);
  - Impute files set the column's missing-value metadata (field 2).
Then transformapply with that frame on a small data frame: recode codes,
dummycoding over the codes, equi-width bins ceil((x - lo_1) / (hi_n - lo_1) n)
clamped to 1..n, global_mean imputation with the metadata's value."""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import REF_DIR, wmat  # noqa: E402
from _frames import fstr, wstdout  # noqa: E402

SEP = "\u00b7"
names = ["name", "city", "age", "w", "score", "extra"]
recode = {"name": ['"alice",1,3', '"bob",2,1', '"a,b",3,2'],
          "city": ['"Berlin",1,2', '"Paris",2,2'],
          "extra": ['"p",1,1', '"q",2,1', '"r",3,1', '"s",4,1', '"t",5,1']}
bins = {"age": "3,20.0,50.0,10.0,3", "w": "4,0.1,0.9,0.2,4"}
impute = {"score": "5,2.5"}


def write_dir(d, sep):
    for sub in ("Recode", "Bin", "Impute"):
        os.makedirs(os.path.join(d, sub), exist_ok=True)
    with open(os.path.join(d, "column.names"), "w") as f:
        f.write(sep.join(names) + "\n")
    for c, lines in recode.items():
        with open(os.path.join(d, "Recode", c + ".map"), "w") as f:
            f.write("\n".join(lines) + "\n")
        with open(os.path.join(d, "Recode", c + ".ndistinct"), "w") as f:
            f.write("%d\n" % len(lines))
    for c, t in bins.items():
        with open(os.path.join(d, "Bin", c + ".bin"), "w") as f:
            f.write(t + "\n")
    for c, t in impute.items():
        with open(os.path.join(d, "Impute", c + ".impute"), "w") as f:
            f.write(t + "\n")


write_dir(os.path.join(REF_DIR, "meta"), ",")
write_dir(os.path.join(REF_DIR, "meta_pipe"), "|")

rows = max([len(v) for v in recode.values()] + [int(t.split(",")[4]) for t in bins.values()])


def map_cells(lines):
    out = []
    for ln in lines:
        q = ln.rindex('"')
        tok = ln[:q + 1]
        if len(tok) >= 2 and tok[0] == '"':
            tok = tok[1:-1]
        code = ln[q + 2:].split(",")[0]
        out.append(tok + SEP + code)
    return out


def bin_cells(t):
    f = t.split(",")
    lo, w, nb = float(f[1]), float(f[3]), int(f[4])
    return [repr(lo + i * w) + SEP + repr(lo + (i + 1) * w) for i in range(nb)]


def meta_frame(rc, bn):
    cols = []
    for c in names:
        cells = map_cells(recode[c]) if c in rc else bin_cells(bins[c]) if c in bn else []
        cols.append(cells + [None] * (rows - len(cells)))
    return fstr(cols, ["STRING"] * len(names), names)


out = meta_frame({"name", "city"}, {"age", "w"})
out += meta_frame({"name"}, {"age"})       # spec by ids in object form
out += ["score mv: " + impute["score"].split(",")[1]]

# transformapply with the first frame
data = [["bob", "Paris", 34.0, 0.35, 1.0, 7.0],
        ["a,b", "Berlin", 20.0, 0.95, None, 8.0],
        ["alice", "Paris", 55.0, 0.12, 3.0, 9.0]]


def code(tok, c):
    return {map_cells([ln])[0].split(SEP)[0]: i + 1 for i, ln in enumerate(recode[c])}[tok]


def bin_code(x, c):
    f = bins[c].split(",")
    lo, w, nb = float(f[1]), float(f[3]), int(f[4])
    hi = lo + nb * w
    return min(max(math.ceil((x - lo) / (hi - lo) * nb), 1), nb)


X = []
for r in data:
    city = [0.0, 0.0]
    city[code(r[1], "city") - 1] = 1.0
    X.append([code(r[0], "name")] + city + [bin_code(r[2], "age"), bin_code(r[3], "w"),
                                            2.5 if r[4] is None else r[4], r[5]])
wmat("X", X)
wstdout(out)
