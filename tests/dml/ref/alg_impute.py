"""imputeByMean / imputeByMedian / imputeByMode (+ Apply) by SystemDS's
rules in NumPy: numeric columns by the mean / median of their present
cells (a column without any: 0, as SystemDS's removeEmpty leaves one zero
row), masked (categorical) columns by their mode; the mode is SystemDS's
imputeByMode's (the codes >= 1, ties to the largest)."""
import numpy as np

from _common import load, wmat

X, _ = load("wine")
n, m = X.shape
R = np.arange(1, n * m + 1).reshape(n, m)
X[R % 11 == 0] = np.nan
X[:, m - 1] = np.nan
Xtr, Xte = X[:140], X[140:]
mask = np.zeros(m, bool)
mask[1] = True


def mode(c):
    """SystemDS's imputeByMode: counts of the codes 1..n (n: the cells >= 1;
    missing cells are not counted) among the cells >= 1, ties to the largest
    code; 0 without such cells."""
    code = ~np.isnan(c) & (np.nan_to_num(c) >= 1)
    if not code.any():
        return 0.0
    n = int(np.sum(code))
    cnt = np.zeros(n)
    for v in c[code]:
        if int(v) <= n:
            cnt[int(v) - 1] += 1
    return float(n - np.argmax(cnt[::-1]))    # the last largest count


def stat(A, f):
    v = np.zeros(A.shape[1])
    for j in range(A.shape[1]):
        c = A[~np.isnan(A[:, j]), j]
        if mask[j]:
            md = mode(A[:, j])
            v[j] = 0.0 if np.isnan(md) else md
        else:
            v[j] = f(c) if len(c) else 0.0
    return v


def fill(A, v):
    A = A.copy()
    for j in range(A.shape[1]):
        A[np.isnan(A[:, j]), j] = v[j]
    return A


vmean = stat(Xtr, np.mean)
vmed = stat(Xtr, np.median)
wmat("Ymean", fill(Xtr, vmean))
wmat("vmean", vmean.reshape(1, -1))
wmat("Ymean_te", fill(Xte, vmean))
wmat("Ymed", fill(Xtr, vmed))
wmat("vmed", vmed.reshape(1, -1))
wmat("Ymed_te", fill(Xte, vmed))

Iris, _ = load("iris")
I = np.floor(2 * Iris + 0.5)
R2 = np.arange(1, I.size + 1).reshape(I.shape)
I[R2 % 7 == 3] = np.nan
vmode = np.array([mode(I[:, j]) for j in range(I.shape[1])])
wmat("Ymode", fill(I, vmode))
wmat("vmode", vmode.reshape(1, -1))
wmat("Ymode_te", fill(I[:10], vmode))
