"""Reference of cases/frame_str_correcttypos.dml: optimal string alignment
(restricted Damerau-Levenshtein) distances and the correction rule in
Python."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import wmat, wscalar  # noqa: E402
from _frames import fstr, wstdout  # noqa: E402


def osa(a, b):
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            c = a[i - 1] != b[j - 1]
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + c)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


def build(S):
    vals = [s for s in S if s is not None]
    words = []
    for s in vals:
        if s not in words:
            words.append(s)
    freq = [vals.count(w) / len(vals) for w in words]
    return words, freq, [[osa(a, b) for b in words] for a in words]


def apply(T, words, freq, D, ft, dt):
    repl = {}
    for i, w in enumerate(words):
        if freq[i] > ft:
            continue
        cand = [j for j in range(len(words)) if freq[j] > ft and D[i][j] <= dt]
        if cand:
            j = min(cand, key=lambda j: (D[i][j], -freq[j], j))
            repl[w] = words[j]
    return [None if s is None else repl.get(s, s) for s in T]


S = ["apple", "apple", "apple", "appel", "banana", "banana", "banana", "bananna", "cherry", "cherry",
     "chery", "kiwi", None, "apple", "banana", "Apple", "cherry", "banana", "apple", "banana", "ab", "ba", "ab",
     "ab", "ba", "ba", "ba", "ca"]
words, freq, D = build(S)
lines = []
lines += fstr([apply(S, words, freq, D, 0.1, 2)], ["STRING"])
lines += fstr([words, freq], ["STRING", "FP64"])
wmat("D", D)
wscalar("ft", 0.1)
wscalar("dt", 2)
lines += fstr([apply(S, words, freq, D, 0.05, 1)], ["STRING"])
lines += fstr([apply(S, words, freq, D, 0.05, 2)], ["STRING"])
T = ["appel", "pear", "chery", None, "kiwi", "Apple"]
lines += fstr([apply(T, words, freq, D, 0.1, 2)], ["STRING"])
lines += fstr([[None, None]], ["STRING"])
wscalar("empty", 0)
wstdout(lines)
