#!/usr/bin/env python3
"""SystemDS's application tests, run with braid's interpreter from a
SystemDS mirror: those without an R twin, and the R twins only SystemDS's
own script computes.

  tests/parity/appsys.py BRAID [FILTER] [--slow]

The scripts are SystemDS's (src/test/scripts/applications, scripts/nn,
scripts/staging/...), read at test time from a SystemDS mirror: the
folder named by BRAID_SYSTEMDS_MIRROR (a checkout, or a git mirror whose
HEAD is exported with git archive), else /work/.mirror/apache+systemds/repo
when it exists. Without a mirror (or with BRAID_SYSTEMDS_MIRROR set
empty) every case is skipped: a SKIP line and "0 passed, 0 failed". They
are exported into a temporary folder laid out as SystemDS's checkout (the
scripts source each other by paths relative to its root, which is the
working directory of every run), so nothing of SystemDS enters this
repository.

Each case of CASES is one Java test (src/test/java/org/apache/sysds/test/
applications/<test>.java) or one of its parameter sets: the inputs it
builds (written by our own generators, seeded, in SystemDS's text format
with a .mtd, as the harness writes them; shapes sometimes smaller, said
per case), the script's arguments as the Java test passes them, and what
the Java test checks, computed here from the algorithm's definition
(PageRank's power iteration, a Cholesky factor, connected components,
naive blocking) or read as the test reads it (the error scalars the nn
transformer scripts write against the reference tensors of SystemDS's
src/test/resources, the expected pairs of entity clustering, "ERROR:" in
the nn scripts' output). Cases marked slow (the nn gradient checks,
LeNet's distributed SGD: about a minute of CPU each) run only with
--slow.

Then SYS_ONLY of apptwins_cases.py (R twins only SystemDS's script
computes: id3, LinearLogReg, MDABivariateStats, parfor_cv_multiclasssvm)
runs as appdml.py runs it, against the committed R numbers
(rtwins/expected) with rtwins/appdml_known.txt.

Prints PASS/FAIL/KNOWN lines and "N passed, M failed"; the exit status is
1 when any failed. rtwins.py run (CI) calls run_all() after its own
cases.
"""

import math
import os
import random
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rtwins  # noqa: E402
import appdml  # noqa: E402
import apptwins_cases  # noqa: E402
from rtwins_cases import rand  # noqa: E402
from run import scratch_dir  # noqa: E402

DEFAULT_MIRROR = "/work/.mirror/apache+systemds/repo"
APPS = "src/test/scripts/applications/"
TRANSFORMERS = "src/test/resources/component/transformers/"
EXPORT = ["src/test/scripts/applications", TRANSFORMERS[:-1], "scripts/nn",
          "scripts/staging/entity-resolution",
          "scripts/staging/scalable_linalg", "scripts/staging/fm-binclass.dml",
          "scripts/staging/fm-regression.dml"]


def find_mirror():
    m = os.environ.get("BRAID_SYSTEMDS_MIRROR")
    if m is None:
        m = DEFAULT_MIRROR
    return m if m and os.path.isdir(m) else None


def export(mirror, dest):
    """EXPORT of mirror (a checkout or a git mirror) into dest."""
    if os.path.isdir(os.path.join(mirror, "src", "test")):
        for p in EXPORT:
            src = os.path.join(mirror, p)
            if os.path.exists(src):
                os.makedirs(os.path.dirname(os.path.join(dest, p)), exist_ok=True)
                subprocess.run(["cp", "-r", src, os.path.join(dest, p)],
                               check=True)
        return
    arch = subprocess.run(["git", "-C", mirror, "archive", "HEAD", "--"]
                          + EXPORT, capture_output=True, check=True)
    subprocess.run(["tar", "x", "-C", dest], input=arch.stdout, check=True)


# ---------------------------------------------------------------- helpers

def write(d, name, m):
    appdml.write_text(os.path.join(d, name), m)
    return os.path.join(d, name)


def read(path, shape=(0, 0)):
    return appdml.read_output(path, shape)


def max_abs(a, b):
    if isinstance(b, str):
        return b
    if len(a) != len(b) or any(len(x) != len(y) for x, y in zip(a, b)):
        return "shape %dx%d, want %dx%d" % (len(b), len(b[0]) if b else 0,
                                            len(a), len(a[0]) if a else 0)
    return max([abs(x - y) for ra, rb in zip(a, b) for x, y in zip(ra, rb)]
               + [0.0])


def within(label, want, got, tol):
    d = max_abs(want, got)
    if isinstance(d, str):
        return (label, False, d)
    return (label, d <= tol, "max abs diff %.3g (tol %g)" % (d, tol))


def no_error_mark(label, p):
    """BaseTest's check: the run ends normally and prints no "ERROR:"."""
    if p.returncode != 0:
        return (label, False, "braid failed: " + p.stderr.strip()[-300:])
    bad = [ln for ln in p.stdout.splitlines() if "ERROR:" in ln]
    return (label, not bad, bad[0][:200] if bad else "no ERROR: lines")


def scalars_below(d, names, prec):
    res = []
    for n in names:
        v = read(os.path.join(d, n))
        if isinstance(v, str):
            res.append((n, False, v))
        else:
            res.append((n, v[0][0] < prec, "%.3g (< %g)" % (v[0][0], prec)))
    return res


# ------------------------------------------------------------------ cases

CASES = []


def case(name, test, script, setup, check, slow=False):
    """setup(d) -> the argument list after -f (paths in d, the case's
    folder); check(d, proc) -> [(label, ok, detail)]."""
    CASES.append(dict(name=name, test=test, script=script, setup=setup,
                      check=check, slow=slow))


# PageRankTest: p = alpha G p + (1 - alpha) e u p, twice (maxiter 2,
# alpha 0.85), from p = e = 1, u = 1, G of ones at sparsity 4.2159e-6;
# compareResults(1e-7). The test's 50 x 50 (its G is empty) and, to make
# G matter, 300 x 300 at sparsity 0.02 (the test's other sizes are 1500 to
# 10000).
def pagerank(n, sp, seed):
    def setup(d):
        G = rand(n, n, 1, 1, sp, seed)
        one = [[1.0] for _ in range(n)]
        return ["-args", write(d, "g", G), write(d, "p", one),
                write(d, "e", one), write(d, "u", [[1.0] * n]), "0.85", "2",
                os.path.join(d, "out_p")]

    def check(d, proc):
        if proc.returncode != 0:
            return [("p", False, "braid failed: " + proc.stderr[-300:])]
        G = rand(n, n, 1, 1, sp, seed)
        p = [1.0] * n
        for _ in range(2):
            s = sum(p)
            p = [0.85 * sum(g * q for g, q in zip(G[i], p)) + 0.15 * s
                 for i in range(n)]
        return [within("p", [[v] for v in p], read(os.path.join(d, "out_p"),
                                                   (n, 1)), 1e-7)]
    return setup, check


for n, sp, seed in ((50, 0.0000042159, 11), (300, 0.02, 12)):
    case("PageRank_%d" % n, "PageRankTest", APPS + "page_rank/PageRank.dml",
         *pagerank(n, sp, seed))


# ParForSampleTest: parfor_sample.dml splits the rows of A (first column
# 1..rows) by a uniform draw into two samples of fractions 0.8 and 0.2;
# the test checks the two row counts add up, both keep every column,
# neither holds every row, and every id 1..rows shows up once. 2298 rows
# as the test, 8 columns instead of 1123, sparsity 0.73 and 0.25.
def parfor_sample(sp):
    rows, cols = 2298, 8

    def setup(d):
        A = rand(rows, cols, -1, 1, sp, 7)
        for i in range(rows):
            A[i][0] = float(i + 1)
        return ["-args", write(d, "A", A), "0.8 0.2", os.path.join(d, "B")]

    def check(d, proc):
        if proc.returncode != 0:
            return [("B", False, "braid failed: " + proc.stderr[-300:])]
        import json
        res, ids, shapes = [], [], []
        for k in (1, 2):
            path = os.path.join(d, "B%d" % k)
            if not os.path.exists(path + ".mtd"):
                return [("B%d" % k, False, "no output")]
            with open(path + ".mtd") as f:
                meta = json.load(f)
            shapes.append((meta["rows"], meta["cols"]))
            m = read(path)
            ids += [r[0] for r in m]
        res.append(("rows", shapes[0][0] + shapes[1][0] == rows,
                    "%d + %d rows of %d" % (shapes[0][0], shapes[1][0], rows)))
        res.append(("cols", shapes[0][1] == cols and shapes[1][1] == cols,
                    "%d and %d columns" % (shapes[0][1], shapes[1][1])))
        res.append(("proper", rows not in (shapes[0][0], shapes[1][0]),
                    "neither sample holds every row"))
        res.append(("ids", sorted(ids) == [float(i + 1) for i in range(rows)],
                    "ids 1..%d once each" % rows))
        return res
    return setup, check


for sp in (0.73, 0.25):
    case("parfor_sample_%g" % sp, "ParForSampleTest",
         APPS + "parfor/parfor_sample.dml", *parfor_sample(sp))


# ScalableDecompositionTest (its enabled tests: Cholesky): C =
# decomp::Cholesky(t(R) R, blen) from scripts/staging/scalable_linalg
# against the lower Cholesky factor, compareMatrices(1e-7). R uniform
# [-5, 10] 60 x 60 with blen 16 (the test: 1362 with 200, so both recurse).
def cholesky_ref(A):
    n = len(A)
    L = [[0.0] * n for _ in range(n)]
    for j in range(n):
        s = A[j][j] - sum(L[j][k] ** 2 for k in range(j))
        L[j][j] = math.sqrt(s)
        for i in range(j + 1, n):
            L[i][j] = (A[i][j] - sum(L[i][k] * L[j][k] for k in range(j))) \
                / L[j][j]
    return L


def ata(n):
    R = rand(n, n, -5, 10, 1.0, 7)
    return [[sum(R[k][i] * R[k][j] for k in range(n)) for j in range(n)]
            for i in range(n)]


def decomp():
    n = 60

    def setup(d):
        return ["-args", "0", "16", write(d, "A", ata(n)),
                os.path.join(d, "B"), os.path.join(d, "C"),
                os.path.join(d, "D"), os.path.join(d, "E")]

    def check(d, proc):
        if proc.returncode != 0:
            return [("C", False, "braid failed: " + proc.stderr[-300:])]
        return [within("C", cholesky_ref(ata(n)),
                       read(os.path.join(d, "C"), (n, n)), 1e-7)]
    return setup, check


case("ScalableDecomposition_cholesky", "ScalableDecompositionTest",
     APPS + "decomp/ScalableDecomposition.dml", *decomp())


# ApplyTransformTest: apply-transform.dml on the test's own input files
# (newX.mtx, the maps) in its 7 combinations; the test computes a
# "success" flag from cells of transformed_X (missing values imputed,
# then scaled: (3, 2) is -0.2/3 with imputation only, 0.2/3 with scaling
# only, 0 with both or none; bins 1, 1, 2, 2 in rows 1-4, or the dummy
# column 1, 1 of bins 1 and 2; with dummy coding one column to the right)
# but never asserts it (and its bin check reads
# "success && d ? x : y" as "(success && d) ? x : y"). Here the flag is
# checked, as intended.
AT_COMBOS = (("newX", "mv", "bin", "dc", "norm"), ("newX", "mv", "", "", ""),
             ("newX", "mv", "", "", "norm"), ("newX", "mv", "bin", "", "norm"),
             ("newX_nomissing", "", "bin", "", ""),
             ("newX_nomissing", "", "bin", "dc", ""),
             ("newX_nomissing", "", "", "", "norm"))
AT_FILES = {"mv": "missing_value_map.mtx", "bin": "bindefns.mtx",
            "dc": "dummy_code_maps.mtx", "norm": "normalization_maps.mtx"}


def apply_transform(combo):
    X, mv, bn, dc, norm = combo

    def setup(d):
        src = os.path.join(os.getcwd(), APPS, "apply-transform") + "/"

        def arg(k, v):
            return "%s=%s" % (k, src + AT_FILES[v] if v else " ")
        return ["-nvargs", "X=" + src + X + ".mtx",
                arg("missing_value_maps", mv), arg("bin_defns", bn),
                arg("dummy_code_maps", dc), arg("normalization_maps", norm),
                "transformed_X=" + os.path.join(d, "transformed_X.mtx"),
                "Log=" + os.path.join(d, "log.csv")]

    def check(d, proc):
        if proc.returncode != 0:
            return [("transformed_X", False, "braid failed: "
                     + proc.stderr[-300:])]
        path = os.path.join(d, "transformed_X.mtx")
        if not os.path.exists(path):
            return [("transformed_X", False, "no output")]
        cells = {}
        with open(path) as f:
            for ln in f:
                i, j, v = ln.split()
                cells[(int(i), int(j))] = float(v)
        c = (3, 3) if dc else (3, 2)
        want = -0.2 / 3 if mv and not norm else 0.2 / 3 if norm and not mv \
            else 0.0
        must = (mv or norm) and not (mv and norm)
        got = cells.get(c)
        res = [("cell%d%d" % c, (got is not None or not must)
                and abs((got or 0.0) - want) < 1e-7,
                "%s, want %g" % (got, want))]
        if bn:
            for i, col, v in ((1, 1, 1), (2, 1, 1), (3, 2 if dc else 1,
                                                     1 if dc else 2),
                              (4, 2 if dc else 1, 1 if dc else 2)):
                got = cells.get((i, col))
                res.append(("bin%d%d" % (i, col), got == v,
                            "%s, want %g" % (got, v)))
        return res
    return setup, check


for combo in AT_COMBOS:
    case("apply_transform_" + "_".join(x for x in combo[1:] if x)
         + ("_nomissing" if combo[0] != "newX" else ""), "ApplyTransformTest",
         APPS + "apply-transform/apply-transform.dml",
         *apply_transform(combo))


# EntityResolutionBlockingTest: naive_blocking(A, k) gives the k + 1 block
# starts 1, 1 + b, ..., 1 + (k - 1) b, nrow + 1 with b = ceil(nrow / k),
# or 1..nrow + 1 when nrow < k; compareResults. The test's (rows, k) and
# (10, 3).
def blocking(rows, k):
    def setup(d):
        return ["-nvargs", "inFile=" + write(d, "A", [[float(i)] for i in
                                                      range(rows)]),
                "outFile=" + os.path.join(d, "B"), "targetNumBlocks=%d" % k]

    def check(d, proc):
        if proc.returncode != 0:
            return [("B", False, "braid failed: " + proc.stderr[-300:])]
        if rows / k < 1:
            want = [float(i) for i in range(1, rows + 2)]
        else:
            b = math.ceil(rows / k)
            want = [1.0] + [1.0 + b * i for i in range(1, k)] + [rows + 1.0]
        return [within("B", [[v] for v in want],
                       read(os.path.join(d, "B"), (len(want), 1)), 0)]
    return setup, check


for rows, k in ((1, 10), (2, 1), (2, 2), (3, 2), (10, 3)):
    case("er_blocking_%d_%d" % (rows, k), "EntityResolutionBlockingTest",
         APPS + "entity_resolution/blocking/blocking_naive.dml",
         *blocking(rows, k))


# EntityResolutionConnectedComponentsTest: cluster_by_connected_components
# of a symmetric 0/1 adjacency gives 1 for every pair of distinct rows in
# the same connected component; compareResults. Graphs: one and two
# isolated nodes, a path of 3, and 12 nodes with random edges (p 0.12).
def components(A):
    n = len(A)
    comp = list(range(n))

    def find(i):
        while comp[i] != i:
            i = comp[i]
        return i
    for i in range(n):
        for j in range(n):
            if A[i][j]:
                comp[find(i)] = find(j)
    return [[1.0 if i != j and find(i) == find(j) else 0.0 for j in range(n)]
            for i in range(n)]


def random_graph(n, p, seed):
    g = random.Random(seed)
    A = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            if g.random() < p:
                A[i][j] = A[j][i] = 1.0
    return A


def connected(A):
    def setup(d):
        return ["-nvargs", "inFile=" + write(d, "A", A),
                "outFile=" + os.path.join(d, "B")]

    def check(d, proc):
        if proc.returncode != 0:
            return [("B", False, "braid failed: " + proc.stderr[-300:])]
        return [within("B", components(A),
                       read(os.path.join(d, "B"), (len(A), len(A))), 0)]
    return setup, check


for name, A in (("1", [[0.0]]), ("2", [[0.0, 0.0], [0.0, 0.0]]),
                ("path3", [[0.0, 1.0, 0.0], [1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]),
                ("rand12", random_graph(12, 0.12, 5))):
    case("er_components_" + name, "EntityResolutionConnectedComponentsTest",
         APPS + "entity_resolution/connected_components/"
         "cluster_by_connected_components.dml", *connected(A))


# EntityResolutionClusteringTest: entity-clustering.dml on the test's
# input.csv; with naive blocking the first two columns of every row
# against the test's expected.csv and the row count; with LSH (not
# deterministic) only that the output exists. EntityResolutionBinaryTest:
# binary-entity-resolution.dml (LSH), the output exists.
ER = APPS + "entity_resolution/"


def er_clustering(method, ht, hp):
    def setup(d):
        return ["-nvargs", "FX=" + ER + "clustering/input.csv",
                "OUT=" + os.path.join(d, "B"), "threshold=0.3",
                "num_blocks=1", "blocking_method=" + method,
                "num_hashtables=%d" % ht, "num_hyperplanes=%d" % hp]

    def check(d, proc):
        if proc.returncode != 0:
            return [("B", False, "braid failed: " + proc.stderr[-300:])]
        out = os.path.join(d, "B")
        if not os.path.exists(out):
            return [("B", False, "no output")]
        if method == "lsh":
            return [("B", True, "written")]
        with open(ER + "clustering/expected.csv") as f:
            want = [ln.split(",")[:2] for ln in f.read().split()]
        with open(out) as f:
            got = [ln.split(",")[:2] for ln in f.read().split()]
        return [("B", got == want, "%d pairs, %d expected%s" % (
            len(got), len(want), "" if got == want else ": " + str(got)))]
    return setup, check


for method, ht, hp in (("naive", 0, 0), ("lsh", 1, 1), ("lsh", 1, 3),
                       ("lsh", 3, 1), ("lsh", 5, 5)):
    case("er_clustering_%s_%d_%d" % (method, ht, hp),
         "EntityResolutionClusteringTest",
         "scripts/staging/entity-resolution/entity-clustering.dml",
         *er_clustering(method, ht, hp))


def er_binary(ht, hp):
    def setup(d):
        return ["-nvargs", "FX=" + ER + "binary/input.csv",
                "FY=" + ER + "binary/input.csv",
                "OUT=" + os.path.join(d, "B"), "num_hashtables=%d" % ht,
                "num_hyperplanes=%d" % hp]

    def check(d, proc):
        if proc.returncode != 0:
            return [("B", False, "braid failed: " + proc.stderr[-300:])]
        ok = os.path.exists(os.path.join(d, "B"))
        return [("B", ok, "written" if ok else "no output")]
    return setup, check


for ht, hp in ((1, 1), (1, 3), (3, 1), (5, 5)):
    case("er_binary_%d_%d" % (ht, hp), "EntityResolutionBinaryTest",
         "scripts/staging/entity-resolution/binary-entity-resolution.dml",
         *er_binary(ht, hp))


# The nn tests (src/test/java/.../applications/nn): each script checks
# itself and prints "ERROR:" lines on a mismatch (BaseTest fails on one).
# NNComponentTest's scripts; NNMaxPool2dComponentTest runs max_pool2d.dml
# for padding h, w in 0..3 (here 4 of the 16 pairs); FMTests; NNGradientTest
# and MNISTLeNet only with --slow (about 15 s and 55 s of CPU).
NN_COMPONENTS = (
    "batch_norm1d", "batch_norm2d", "conv2d", "conv2d_depthwise",
    "conv2d_transpose", "conv2d_transpose_depthwise", "cross_entropy_loss",
    "cross_entropy_loss2d", "im2col", "max_pool2d", "tanh", "elu",
    "threshold", "softmax2d", "top_k", "padding", "transpose_NCHW_to_CNHW",
    "transpose_ABCD_to_ACBD", "logcosh", "resnet_basic", "resnet_bottleneck",
    "gelu", "selu", "embedding")


def nn_script(args=()):
    def setup(d):
        return list(args)

    def check(d, proc):
        return [no_error_mark("stdout", proc)]
    return setup, check


for c in NN_COMPONENTS:
    case("nn_" + c, "NNComponentTest", APPS + "nn/component/%s.dml" % c,
         *nn_script())
for h, w in ((0, 0), (1, 2), (2, 1), (3, 3)):
    case("nn_max_pool2d_pad_%d_%d" % (h, w), "NNMaxPool2dComponentTest",
         APPS + "nn/component/max_pool2d.dml",
         *nn_script(["-nvargs", "h=%d" % h, "w=%d" % w]))
for s in ("fm-binclass-dummy-data", "fm-regression-dummy-data"):
    case("nn_" + s, "FMTests", "scripts/nn/examples/%s.dml" % s, *nn_script())
case("nn_gradients", "NNGradientTest", APPS + "nn/run_tests_gradients.dml",
     *nn_script(), slow=True)
case("nn_mnist_lenet_distrib_sgd", "MNISTLeNet",
     "scripts/nn/examples/mnist_lenet_distrib_sgd-train-dummy-data.dml",
     *nn_script(), slow=True)


# BertLayerTest and MultiAttentionLayerTest: the scripts compare their
# forward outputs and gradients with the reference tensors of SystemDS's
# src/test/resources/component/transformers and write the largest
# absolute errors, which must stay under the test's precision.
BERT_PARAMS = ("W_Q", "b_Q", "W_K", "b_K", "W_V", "b_V", "W_context",
               "b_context", "W_intermediate", "b_intermediate", "W_out",
               "b_out", "gamma_ln1", "beta_ln1", "gamma_ln2", "beta_ln2")


def bert(t, dims, act, fwd, prec):
    R = TRANSFORMERS + "bert_layer/"
    outs = ["states_error", "attention_error"] if fwd else \
        ["din_error"] + ["d%s_error" % p for p in BERT_PARAMS]

    def setup(d):
        a = ["-args", "0"] + [str(x) for x in dims] + [act,
                                                       R + "input_states_%s.csv" % t]
        a += [R + "input_%s_%s.csv" % (p, t) for p in BERT_PARAMS]
        a += [R + "output_states_%s.csv" % t, R + "output_attention_%s.csv" % t]
        if not fwd:
            a += [R + "input_dstates_%s.csv" % t,
                  R + "output_dstates_%s.csv" % t]
            a += [R + "output_d%s_%s.csv" % (p, t) for p in BERT_PARAMS]
        return a + [os.path.join(d, o) for o in outs]

    def check(d, proc):
        if proc.returncode != 0:
            return [("errors", False, "braid failed: " + proc.stderr[-300:])]
        return scalars_below(d, outs, prec)
    return setup, check


for t, dims, act, fwd, prec in (
        ("test1", (5, 4, 6, 2, 3, 7), "tanh", True, 1e-5),
        ("test2", (4, 4, 8, 2, 4, 7), "gelu", True, 1e-5),
        ("test3", (2, 3, 8, 2, 4, 5), "gelu", False, 1e-4),
        ("test4", (4, 4, 4, 2, 2, 4), "tanh", False, 1e-4)):
    case("nn_bert_layer_" + t, "BertLayerTest", APPS + "nn/component/bert_layer_%s.dml"
         % ("forward" if fwd else "backward"), *bert(t, dims, act, fwd, prec))


def attention(t, dims, fwd):
    R = TRANSFORMERS + "multi_attention_layer/"
    outs = ["context_error", "attention_error"] if fwd else \
        ["dquery_error", "dkey_error", "dvalue_error"]

    def setup(d):
        a = ["-args"] + [str(x) for x in dims] + ["0"]
        a += [R + "input_%s_%s.csv" % (x, t) for x in ("query", "key", "value")]
        if fwd:
            a += [R + "output_context_%s.csv" % t,
                  R + "output_attention_%s.csv" % t]
        else:
            a += [R + "input_dcontext_%s.csv" % t,
                  R + "input_attention_%s.csv" % t]
            a += [R + "output_d%s_%s.csv" % (x, t)
                  for x in ("query", "key", "value")]
        return a + [os.path.join(d, o) for o in outs]

    def check(d, proc):
        if proc.returncode != 0:
            return [("errors", False, "braid failed: " + proc.stderr[-300:])]
        return scalars_below(d, outs, 1e-5)
    return setup, check


for t, dims, fwd in (("test1", (2, 3, 4, 5), True),
                     ("test2", (8, 12, 10, 4), True),
                     ("test3", (1, 1, 1, 1), True),
                     ("test4", (2, 3, 4, 5), False),
                     ("test5", (8, 12, 10, 5), False),
                     ("test6", (1, 1, 1, 1), False)):
    case("nn_multi_attention_" + t, "MultiAttentionLayerTest",
         APPS + "nn/component/multi_attention_%s.dml"
         % ("forward" if fwd else "backward"), *attention(t, dims, fwd))


# ------------------------------------------------------------------ driver

class Finished:
    """What a check reads of a braid run: its exit status and output."""
    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def run_batch(braid, runs):
    """Runs runs ([(case folder, braid's options)]) in one braid process
    (-then; each run's stdout and stderr to its folder's run.out), one
    start instead of one per case (about 0.1 s of CPU each, several
    times that under the sanitizers). When the process exits non-zero
    (some run failed, or braid died) the runs are run again one process
    each, so that each case gets its own exit status and streams. Returns
    one Finished per run."""
    cmd = [braid]
    for k, (d, opts) in enumerate(runs):
        cmd += (["-then"] if k else []) + opts + ["-out", os.path.join(d, "run.out")]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode == 0:
        res = []
        for d, _ in runs:
            with open(os.path.join(d, "run.out"), encoding="utf-8", errors="replace") as f:
                out = f.read()
            res.append(Finished(0, out, out))
        return res
    print("(the batch of %d runs exited %d: each runs in its own process)"
          % (len(runs), p.returncode))
    return [subprocess.run([braid] + opts, capture_output=True, text=True)
            for _, opts in runs]


def run_all(braid, filt="", slow=False, mirror=None):
    """Runs the cases (and SYS_ONLY) from the mirror; prints the lines;
    returns (passed, failed)."""
    mirror = mirror or find_mirror()
    if not mirror:
        print("SKIP SystemDS application scripts: no SystemDS mirror "
              "(BRAID_SYSTEMDS_MIRROR)")
        return 0, 0
    cases = [c for c in CASES if (not filt or filt in c["name"])
             and (slow or not c["slow"])]
    twins = [c for c in apptwins_cases.SYS_ONLY
             if not filt or filt in c["name"]]
    if not cases and not twins:
        return 0, 0
    braid = os.path.abspath(braid)
    root = tempfile.mkdtemp(prefix="appsys-", dir=scratch_dir())
    passed = failed = 0
    cwd = os.getcwd()
    try:
        export(mirror, root)
        os.chdir(root)
        runs = []
        for c in cases:
            d = tempfile.mkdtemp(prefix=c["name"] + "-", dir=root)
            runs.append((d, ["-f", c["script"]] + c["setup"](d)))
        procs = run_batch(braid, runs)
        for c, (d, _), proc in zip(cases, runs, procs):
            for label, ok, detail in c["check"](d, proc):
                print("%s app:%s/%s: %s" % ("PASS" if ok else "FAIL",
                                             c["name"], label, detail))
                passed += ok
                failed += not ok
        os.chdir(cwd)
        known = rtwins.read_known(appdml.KNOWN)
        for case in twins:
            outs = appdml.run_case(braid, root, case)
            for out in case["outputs"]:
                key = "%s/%s" % (case["name"], out)
                ok, detail = rtwins.compare(case, out, outs[out])
                status = "PASS" if ok else "FAIL"
                if key in known:
                    status = "FAIL" if ok else "KNOWN"
                    ok = not ok
                print("%s %s (SystemDS's script): %s" % (status, key, detail))
                passed += ok
                failed += not ok
    finally:
        os.chdir(cwd)
        shutil.rmtree(root, ignore_errors=True)
    return passed, failed


def main(argv):
    args = [a for a in argv[1:] if a != "--slow"]
    if not args:
        sys.stderr.write(__doc__)
        return 2
    passed, failed = run_all(args[0], args[1] if len(args) > 1 else "",
                             "--slow" in argv)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
