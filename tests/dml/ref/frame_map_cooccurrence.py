"""Reference of cases/frame_map_cooccurrence.dml: co-occurrence counts by
direct loops over the cleaned, tokenized documents."""
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import EXP_DIR, wmat  # noqa: E402


def cooc(docs, max_tokens, window, weighted, symmetric):
    toks = []
    for d in docs:
        d = re.sub(r"[.]", "", d or "")
        d = re.sub(r"[^a-zA-Z\s]", " ", d).lower()
        toks.append(d.split()[:max_tokens])
    vocab = {}
    for t in toks:
        for w in t:
            vocab.setdefault(w, len(vocab))
    C = np.zeros((len(vocab), len(vocab)))
    for t in toks:
        for p, w in enumerate(t):
            for j in range(1, window + 1):
                inc = 1.0 / j if weighted else 1.0
                if p - j >= 0:
                    C[vocab[w], vocab[t[p - j]]] += inc
                if symmetric and p + j < len(t):
                    C[vocab[w], vocab[t[p + j]]] += inc
    return C, list(vocab)


def fstr(words):
    out = ["# FRAME: nrow = %d, ncol = 2" % len(words), "# C1 C2", "# STRING STRING"]
    out += ["%d %s" % (i + 1, w) for i, w in enumerate(words)]
    return out + [""]


D = ["The cat sat. On the mat!", "the dog, the CAT ran", None, "A.B c-d e.", "one two three four five six"]
lines = []
C1, w1 = cooc(D, 5, 2, False, True)
wmat("C1", C1)
lines += fstr(w1)
C2, w2 = cooc(D, 3, 3, True, False)
wmat("C2", C2)
lines += fstr(w2)
C3, _ = cooc(D[:2], 100, 1, True, True)
wmat("C3", C3)
with open(os.path.join(EXP_DIR, "stdout.txt"), "w") as f:
    f.write("\n".join(lines) + "\n")
