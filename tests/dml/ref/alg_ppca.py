"""Data of cases/alg_ppca.dml (SystemDS's ppca starts from its own random
draws, which NumPy cannot repeat: the case checks the iteration it
documents from those draws and the algebra of its outputs)."""
import numpy as np

from _common import wref, wscalar

rng = np.random.RandomState(5)
n = 60
A = np.array([[1, 0.5, 0.2, -0.3, 0.1], [0, 1, -0.4, 0.2, 0.6]])
X = (rng.normal(size=(n, 2)) * [5, 3]) @ A + 0.5 * rng.normal(size=(n, 5)) + [1, -2, 3, 0, 5]
X = np.round(X, 4)
wref("X", X)
for name in ("one_step", "two_steps", "outputs", "seeded", "k_ge_m"):
    wscalar(name, True)
