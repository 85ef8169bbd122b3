"""Reference of cases/frame_str_correcttypos.dml: SystemDS's correctTypos
in Python: lower-cased strings, the dictionary in the order of the recode
metadata's rows (java_map_order: Java's HashMap iteration order) with
counts, optimal string alignment (restricted
Damerau-Levenshtein) distances bounded as SystemDS bounds them (42000 for
a length gap >= the threshold, for a pair abandoned after two rows above
it, and on the diagonal), corrections from the lowest frequency up."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import wmat, wscalar  # noqa: E402
from _frames import fstr, java_map_order, wstdout  # noqa: E402

FAR = 42000


def osa_bounded(a, b, bound):
    """Distance of a to b, computed over a's characters row by row; FAR
    when rows r - 1 and r (2 <= r < len(a)) both exceed bound everywhere."""
    prev2, prev = None, list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            c = a[i - 1] != b[j - 1]
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + c)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if 2 <= i < len(a) and min(prev) > bound and min(cur) > bound:
            return FAR
        prev2, prev = prev, cur
    return prev[len(b)]


def build(S, dt):
    vals = [s.lower() for s in S if s is not None]
    words = java_map_order(vals)
    count = [vals.count(w) for w in words]
    k = len(words)
    D = [[FAR] * k for _ in range(k)]
    for i in range(k):
        for j in range(i + 1, k):
            if abs(len(words[i]) - len(words[j])) < dt:
                D[i][j] = D[j][i] = osa_bounded(words[i], words[j], dt)
    return words, count, D


def apply(T, words, count, D, ft, dt):
    out = [None if s is None else s.lower() for s in T]
    freq = [c / len(T) for c in count]
    for i in sorted(range(len(words)), key=lambda i: (freq[i], i)):
        if freq[i] >= ft:
            continue
        cand = [j for j in range(len(words)) if D[i][j] < dt and freq[j] > ft / 2]
        if cand:
            j = min(cand, key=lambda j: (D[i][j], j))
            out = [words[j] if s == words[i] else s for s in out]
    return out


S = ["apple", "apple", "apple", "appel", "banana", "banana", "banana", "bananna", "cherry", "cherry",
     "chery", "kiwi", None, "apple", "banana", "Apple", "cherry", "banana", "apple", "banana", "ab", "ba", "ab",
     "ab", "ba", "ba", "ba", "ca"]
lines = []
words, count, D = build(S, 2)
lines += fstr([apply(S, words, count, D, 0.1, 2)], ["STRING"])
lines += fstr([words, [float(c) for c in count]], ["STRING", "FP64"])
wmat("D", D)
wscalar("ft", 0.1)
wscalar("dt", 2)
w1, c1, D1 = build(S, 1)
lines += fstr([apply(S, w1, c1, D1, 0.05, 1)], ["STRING"])
lines += fstr([apply(S, words, count, D, 0.05, 2)], ["STRING"])
T = ["appel", "pear", "chery", None, "kiwi", "Apple"]
lines += fstr([apply(T, words, count, D, 0.1, 2)], ["STRING"])
lines += fstr([[None, None]], ["STRING"])
wscalar("empty", 0)
wstdout(lines)
