"""Expected outputs of cases/native_stft.dml (framing by hand, NumPy's fft)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import wmat  # noqa: E402
import numpy as np  # noqa: E402


def stft(x, win, overlap):
    """Per row: frames at multiples of win - overlap below ncol - overlap,
    zero-padded to win, transformed, laid side by side."""
    rows, cols = x.shape
    step = win - overlap
    starts = list(range(0, max(cols - overlap, 0), step))
    out = np.zeros((rows, len(starts) * win), dtype=complex)
    for h in range(rows):
        for f, s in enumerate(starts):
            seg = np.zeros(win, dtype=complex)
            part = x[h, s:s + win]
            seg[:len(part)] = part
            out[h, f * win:(f + 1) * win] = np.fft.fft(seg)
    return out


x = np.sin(np.arange(1, 41, dtype=float).reshape(2, 20) * 0.37)
A = stft(x, 8, 3)
wmat("a", A.real)
wmat("b", A.imag)
C = stft(x + 1j * np.cos(x), 4, 1)
wmat("c", C.real)
wmat("d", C.imag)
E = stft(x[0:1, :], 16, 0)
wmat("e", np.column_stack([E.real.T, E.imag.T]))
