"""Reference of cases/frame_transform_bow.dml: SystemDS's bag_of_words in
Python: tokens are the maximal runs of letters, lower-cased; codes by first
appearance; the metadata rows in the iteration order of the HashMap<>(0)
SystemDS keeps the dictionary in (java_map_order with initial=0), a recode
column's in a default HashMap's."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import wmat, wscalar  # noqa: E402
from _frames import fstr, java_map_order, wstdout  # noqa: E402

DOT = "\u00b7"


def tokens(s):
    out, cur = [], ""
    for ch in (s or ""):
        if ch.isalpha():
            cur += ch.lower()
        elif cur:
            out.append(cur)
            cur = ""
    return out + ([cur] if cur else [])


text = ["This is the first document.", "This document is the second document!",
        "And this is the third one; THE END", "Is this the first document?", None, "one-two three 42 times"]
cat = ["A", "B", "A", "C", "B", "A"]
words = list(dict.fromkeys(t for s in text for t in tokens(s)))
levels = list(dict.fromkeys(cat))


def counts(s):
    row = [0.0] * len(words)
    for t in tokens(s):
        if t in words:
            row[words.index(t)] += 1
    return row


def code(c):
    return float(levels.index(c) + 1) if c in levels else float("nan")


wmat("X", [counts(s) + [code(c)] for s, c in zip(text, cat)])
n = max(len(words), len(levels))
col1 = ["%s%s%d" % (w, DOT, words.index(w) + 1) for w in java_map_order(words, initial=0)]
col2 = ["%s%s%d" % (c, DOT, levels.index(c) + 1) for c in java_map_order(levels)]
pad = lambda v: v + [None] * (n - len(v))  # noqa: E731
wstdout(fstr([pad(col1), pad(col2)], ["STRING", "STRING"]))
new_text, new_cat = ["the zebra and THE document", "nothing known here"], ["C", "Z"]
wmat("A", [counts(s) + [code(c)] for s, c in zip(new_text, new_cat)])
wmat("C", [[1, 1, len(words)], [2, len(words) + 1, len(words) + 1]])
wscalar("diff", 0)
wmat("X2", [counts(s) + [1.0 if levels.index(c) == k else 0.0 for k in range(len(levels))] for s, c in zip(text, cat)])
