"""Expected outputs of cases/native_fft.dml (NumPy's FFT)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import wmat, wscalar  # noqa: E402
import numpy as np  # noqa: E402

X = np.sin(np.arange(1, 8 * 16 + 1, dtype=float).reshape(8, 16) * 0.7) + 0.1
F = np.fft.fft2(X)
wmat("fr", F.real)
wmat("fi", F.imag)
wmat("br", X)
wmat("bi", np.zeros_like(X))
G = np.fft.ifft2(X)
wmat("ir", G.real)
wmat("ii", G.imag)
S = X * (X > 0.9)
FS = np.fft.fft2(S)
wmat("sr", FS.real)
wmat("si", FS.imag)
V = np.fft.fft(X[:, 2])
wmat("v", np.column_stack([V.real, V.imag]))
wscalar("one", 30.0)
Y = X[0:5, :]
L = np.fft.fft(Y, axis=1)
wmat("lr", L.real)
wmat("li", L.imag)
wmat("mr", Y)
N = np.fft.ifft(Y, axis=1)
wmat("nr", N.real)
wmat("ni", N.imag)
wscalar("dims", 516)
