"""Reference of cases/frame_str_glove.dml: the vocabulary by
cooccurrenceMatrix's cleaning in Python, and the properties."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import EXP_DIR, wscalar  # noqa: E402

D = ["The cat sat on the mat.", "the dog sat on the log", "A cat, and a dog!"]
vocab = []
for d in D:
    s = re.sub(r"[^a-zA-Z\s]", " ", d.replace(".", "")).lower().strip()
    for w in s.split()[:20]:
        if w not in vocab:
            vocab.append(w)
with open(os.path.join(EXP_DIR, "vocab.scalar"), "w") as f:
    f.write(",".join(vocab) + "\n")
wscalar("shape", len(vocab) * 100 + 5)
for name in ("repeat", "seed", "init", "finite", "tol"):
    wscalar(name, True)
