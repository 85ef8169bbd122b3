"""Reference of cases/frame_str_tokenize.dml: str.split, n-grams and Java's
String.hashCode in Python."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import wmat  # noqa: E402
from _frames import fstr, rows_to_cols, wstdout  # noqa: E402

# "" in frame([...]) is a missing cell
F = [["d1", "x", "the cat saw the dog"], ["d2", "y", "  dog  eats   "], ["d3", "z", None],
     ["d4", "x", "b a b a c"]]


def words(t, sep=None):
    if t is None:
        return []
    if sep is None:
        return t.split()
    return [w for w in re.split(sep, t) if w]


def ngrams_doc(w, lo, hi):
    return [" ".join(w[p:p + g]) for g in range(lo, hi + 1) for p in range(len(w) - g + 1)]


def ngrams_tok(w, lo, hi):
    return [t[p:p + g] for t in w for g in range(lo, hi + 1) for p in range(len(t) - g + 1)]


def jhash(s):
    h = 0
    for ch in s.encode("utf-16-le").decode("utf-16-le"):
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= (1 << 31) else h


def count_rows(docs, ids, sort_alpha=False):
    rows = []
    for r, toks in docs:
        seen = {}
        for t in toks:
            seen[t] = seen.get(t, 0) + 1
        keys = sorted(seen) if sort_alpha else list(seen)
        rows += [[r[i] for i in ids] + [k, seen[k]] for k in keys]
    return rows


lines = []
docs = [(r, words(r[2])) for r in F]
rows = count_rows(docs, [0])
lines += fstr(rows_to_cols(rows, 3), ["STRING", "STRING", "INT64"])
rows = count_rows(docs, [1, 0], True)
lines += fstr(rows_to_cols(rows, 4), ["STRING", "STRING", "STRING", "INT64"])
rows = [[r[0], p + 1, t] for r, w in docs for p, t in enumerate(w[:3])]
lines += fstr(rows_to_cols(rows, 3), ["STRING", "INT64", "STRING"])
for W in (4, max(len(w) for _, w in docs)):
    rows = [[r[0]] + [w[p] if p < len(w) else None for p in range(W)] for r, w in docs]
    lines += fstr(rows_to_cols(rows, W + 1), ["STRING"] * (W + 1))
rows = [[r[0], p + 1, t] for r, w in docs for p, t in enumerate(ngrams_doc(w, 2, 3))]
lines += fstr(rows_to_cols(rows, 3), ["STRING", "INT64", "STRING"])
rows = count_rows([(r, ngrams_tok(w, 1, 2)) for r, w in docs[:2]], [0])
lines += fstr(rows_to_cols(rows, 3), ["STRING", "STRING", "INT64"])
rows = []
for r, w in docs:
    cnt = [0] * 5
    for t in w:
        cnt[jhash(t) % 5] += 1   # Python's % is Java's floorMod
    rows += [[r[0], b + 1, c] for b, c in enumerate(cnt) if c]
lines += fstr(rows_to_cols(rows, 3), ["STRING", "INT64", "INT64"])
H = []
for r, w in docs:
    cnt = [0] * 7
    for t in w:
        cnt[jhash(t) % 7] += 1
    H.append(cnt)
wmat("H", H)
G = [["r1", "a,b;;c"], ["r2", "x;y"]]
rows = [[r[0], p + 1, t] for r in G for p, t in enumerate(words(r[1], "[,;]+"))]
lines += fstr(rows_to_cols(rows, 3), ["STRING", "INT64", "STRING"])
wstdout(lines)
# many documents
HB = [0.0] * 12
nCB = sCB = 0
for i in range(1, 6001):
    t = "w%d v%d w%d u%d" % (i % 7, i % 3, i % 5, i % 11)
    HB[0] += i
    for w in t.split():
        HB[1 + jhash(w) % 11] += 1
    toks = ngrams_doc(t.split(), 1, 2)[:6]
    nCB += len(set(toks))
    sCB += len(toks)
wmat("HB", [HB])
from _common import wscalar  # noqa: E402
wscalar("nCB", nCB)
wscalar("sCB", sCB)
