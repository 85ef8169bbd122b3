#!/usr/bin/env python3
"""lineage(X) against SystemDS's traces: tests/parity/lineage.py BRAID

Each case is a small script and the trace SystemDS's lineage(X) returns
for it, worked out from SystemDS's code (commit 9dccbc3): the items its
instructions trace (ComputationCPInstruction: the opcode over input1..3;
MatrixIndexingCPInstruction: X, the source, then rl, ru, cl, cu;
MatrixAppendCPInstruction: "cbind"/"rbind" over both inputs;
DataGenCPInstruction: the instruction string with the output renamed
"xxx" and variables replaced by their values; a read: createvar, then
rblk for text; CPOperand.getLineageLiteral for literals, one item per
distinct literal; ForProgramBlock: the loop variable a literal of its
value; FunctionCallCPInstruction: arguments' items passed through), after
the static rewrites that touch these scripts (removeUnnecessaryBinary-
Operation: X * -1 of a matrix is 0 - X; removeUnnecessaryIfElse), written
as Explain.explain writes them: post-order, "(id) (L|C|I) ...".

SystemDS's ids come from one global sequence that also counts items no
trace shows (its ids in a run are 0, 2, 4, 5, ...); both sides are
compared with the ids renumbered 0, 1, 2, ... in the order the lines
define them. The thread count is part of SystemDS's rand instruction
(its CP degree of parallelism), so braid runs with -threads 2 and the
expected strings say 2.
Prints "N passed, M failed".
"""

import os
import re
import subprocess
import sys
import tempfile

D = "\u00b0"   # SystemDS's operand delimiter
P = "\u00b7"   # its data type / value type / literal prefix


def lit(v, vt="INT64"):
    return "%s%sSCALAR%s%s%strue" % (v, P, P, vt, P)


def rand(rows, cols, mn, mx, seed, sp="1.0"):
    return D.join(["CP", "rand", lit(rows), lit(cols), "1000", mn, mx, sp, seed,
                   "uniform", "1.0", "2", "xxx" + P + "MATRIX" + P + "FP64"])


CASES = [
    # scalar operations on a seeded rand: literal items, BinaryScalar
    ("rand_scalar_ops", """
X = rand(rows=3, cols=2, seed=7)
Y = X * 3 + 5
print(lineage(Y))
""", [
        "(0) (C) " + rand(3, 2, "0.0", "1.0", "7"),
        "(1) (L) " + lit(3),
        "(2) (I) * (0) (1)",
        "(3) (L) " + lit(5),
        "(4) (I) + (2) (3)",
    ]),
    # a function call inside a loop: arguments' items pass through the
    # call (no cast of the Double parameter), the loop variable is a
    # literal per iteration, each iteration traced
    ("call_in_loop", """
f = function(Matrix[Double] A, Double b) return (Matrix[Double] B) { B = A + b }
X = seq(1, 3, 1)
for (i in 1:2) X = f(X, i)
print(lineage(X))
""", [
        "(0) (C) " + D.join(["CP", "seq", "3", "1", "1000", lit(1), lit(3), lit(1),
                             "xxx" + P + "MATRIX" + P + "FP64"]),
        "(1) (L) " + lit(1),
        "(2) (I) + (0) (1)",
        "(3) (L) " + lit(2),
        "(4) (I) + (2) (3)",
    ]),
    # unary minus of a matrix (0 - X after SystemDS's rewrite), unary
    # builtins, aggregates (uak+, uark+, uamean), one item shared by two
    # consumers
    ("neg_exp_aggs", """
X = rand(rows=2, cols=2, min=-1, max=1, seed=5)
Z = -X
W = exp(Z) / 2
s = sum(W) + mean(rowSums(W))
print(lineage(s))
""", [
        "(0) (L) " + lit(0),
        "(1) (C) " + rand(2, 2, "-1", "1", "5"),
        "(2) (I) - (0) (1)",
        "(3) (I) exp (2)",
        "(4) (L) " + lit(2),
        "(5) (I) / (3) (4)",
        "(6) (I) uak+ (5)",
        "(7) (I) uark+ (5)",
        "(8) (I) uamean (7)",
        "(9) (I) + (6) (8)",
    ]),
    # indexing with all four bounds (1 and ncol filled in, a single index
    # twice), left indexing, rbind, an ifelse whose condition is known
    # SystemDS's "^2" and "*2" (BinaryOp's POW2 / MULT2 for a matrix with
    # the literal 2 on the right), also where its static rewrite
    # simplifyBinaryToUnaryOperation made X*X into X^2 and X+X into X*2
    # with a new integer literal 2
    ("pow2_mult2", """
X = seq(1, 4, 1)
Y = X^2 + X*2
print(lineage(Y))
""", [
        "(0) (C) " + D.join(["CP", "seq", "4", "1", "1000", lit(1), lit(4), lit(1),
                             "xxx" + P + "MATRIX" + P + "FP64"]),
        "(1) (L) " + lit(2),
        "(2) (I) ^2 (0) (1)",
        "(3) (I) *2 (0) (1)",
        "(4) (I) + (2) (3)",
    ]),
    ("binary_to_unary", """
X = seq(1, 4, 1)
Z = X*X - (X+X)
print(lineage(Z))
""", [
        "(0) (C) " + D.join(["CP", "seq", "4", "1", "1000", lit(1), lit(4), lit(1),
                             "xxx" + P + "MATRIX" + P + "FP64"]),
        "(1) (L) " + lit(2),
        "(2) (I) ^2 (0) (1)",
        "(3) (I) *2 (0) (1)",
        "(4) (I) - (2) (3)",
    ]),
    ("indexing", """
X = rand(rows=4, cols=3, seed=1)
B = X[1:2, ]
X[1, 1] = 3
C = rbind(X, B)
n = nrow(X)
D = ifelse(n > 2, C, C * 2)
print(lineage(D))
""", [
        "(0) (C) " + rand(4, 3, "0.0", "1.0", "1"),
        "(1) (L) " + lit(3),
        "(2) (L) " + lit(1),
        "(3) (I) leftIndex (0) (1) (2) (2) (2) (2)",
        "(4) (L) " + lit(2),
        "(5) (I) rightIndex (0) (2) (4) (2) (1)",
        "(6) (I) rbind (3) (5)",
    ]),
    # a text read (createvar, rblk), tsmm, a while loop's scalar chain,
    # scalar minus (x * -1: the rewrite is for matrices only)
    ("read_tsmm_while", """
X = read($1)
A = t(X) %*% X
i = 0
while (i < 2) {
  i = i + 1
  if (i == 2) A = A / (-i)
}
print(lineage(A))
""", [
        "(0) (C) " + D.join(["CP", "createvar", "pREADxxx", "@X@", "false", "MATRIX", "text",
                             "2", "2", "-1", "-1", "copy"]),
        "(1) (I) rblk (0)",
        "(2) (I) tsmm (1)",
        "(3) (L) " + lit(0),
        "(4) (L) " + lit(1),
        "(5) (I) + (3) (4)",
        "(6) (I) + (5) (4)",
        "(7) (L) " + lit(-1),
        "(8) (I) * (6) (7)",
        "(9) (I) / (2) (8)",
    ]),
]


def normalize(lines):
    """Renumbers the ids 0, 1, ... in the order the lines define them."""
    ids = {}
    out = []
    for ln in lines:
        m = re.match(r"\((\d+)\) (.*)$", ln)
        if not m:
            out.append(ln)
            continue
        ids[m.group(1)] = str(len(ids))
        rest = re.sub(r"\((\d+)\)", lambda g: "(" + ids.get(g.group(1), "?" + g.group(1)) + ")", m.group(2))
        out.append("(%s) %s" % (ids[m.group(1)], rest))
    return out


def main():
    braid = os.path.abspath(sys.argv[1])
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        x = os.path.join(tmp, "X.ijv")
        with open(x, "w") as f:
            f.write("1 1 2.0\n2 2 3.0\n")
        with open(x + ".mtd", "w") as f:
            f.write('{"data_type": "matrix", "value_type": "double", "rows": 2, "cols": 2, "format": "text"}')
        for name, script, want in CASES:
            path = os.path.join(tmp, name + ".dml")
            with open(path, "w") as f:
                f.write(script)
            r = subprocess.run([braid, "-threads", "2", "-f", path, "-args", x],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
            got = [ln for ln in r.stdout.decode("utf-8").splitlines() if ln.strip()]
            want = [ln.replace("@X@", x) for ln in want]
            if r.returncode == 0 and normalize(got) == normalize(want):
                passed += 1
            else:
                failed += 1
                print("FAIL %s (exit %d): %s" % (name, r.returncode, r.stderr.decode()[:300]))
                for a, b in zip(normalize(got) + [""] * len(want), normalize(want) + [""] * len(got)):
                    print("  %s %s\n      want %s" % ("  " if a == b else "!!", a, b))
        # lineage() stays an error where the argument has no trace: a
        # script that does not call lineage() traces nothing (no cost),
        # and SystemDS's own failure message names the variable
        path = os.path.join(tmp, "off.dml")
        with open(path, "w") as f:
            f.write("X = matrix(1, rows=2, cols=2)\nprint(sum(X))\n")
        r = subprocess.run([braid, "-f", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        if r.returncode == 0 and r.stdout.decode().strip() == "4.0":
            passed += 1
        else:
            failed += 1
            print("FAIL off: %r %r" % (r.stdout, r.stderr))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
