"""Reference of cases/frame_map_wer.dml: word-level Levenshtein / the longer
sentence's words, words as Java's split(" ") (SystemDS's getWordErrorRate)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import wmat, wscalar  # noqa: E402


def jsplit(s):
    """Java's s.split(" "): single spaces, trailing empty words dropped."""
    if " " not in s:
        return [s]
    t = s.split(" ")
    while t and t[-1] == "":
        t.pop()
    return t


def wer(r, h):
    """SystemDS's UtilFunctions.getWordErrorRate: edits / longer word count."""
    r, h = jsplit(r or ""), jsplit(h or "")
    if not r or not h:
        return float(max(len(r), len(h)))
    d = list(range(len(h) + 1))
    for i in range(1, len(r) + 1):
        prev, d[0] = d[0], i
        for j in range(1, len(h) + 1):
            cur = min(prev + (r[i - 1] != h[j - 1]), d[j] + 1, d[j - 1] + 1)
            prev, d[j] = d[j], cur
    return d[len(h)] / max(len(r), len(h))


R = ["the cat sat on the mat", "hello world", "a b c d", "one two three",
     "  spaced   out  words ", "same words here", "x y z", "word"]
# "" in frame(list(...)) is a missing cell; wer sees the empty string
H = ["the cat sat on mat", "hello there world", "a x c", "three two one",
     "spaced out words", "same words here", None, "words"]
wmat("W", [wer(r, h) for r, h in zip(R, H)])
wscalar("shape", 8 * 10 + 1)
