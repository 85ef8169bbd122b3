"""amulet_numpy.py: NumPy's best formulations of the AMULET benchmark's
queries (bench/bench_amulet.c runs it as a peer in the same run).

    python3 bench/amulet_numpy.py QUERY N KSTEPS

QUERY: matmul, Q1, Q2, Q3 (bench_amulet.c's queries, same data shapes).
Prints the best scaled processing rate (SPR = M*N*K / s / 1e9) over the
formulations NumPy can express:
  matmul   A @ B (NumPy's BLAS).
  Q1-Q3    a threshold on each product term is outside any BLAS call; the
           candidates are the loop over k of rank-one outer products, and
           the same over blocks of 8 k at once through a broadcast
           M x 8 x N product reduced over its middle axis. Both are timed
           over the first KSTEPS values of k (the rate per iteration does
           not depend on K).
The number of BLAS threads comes from the environment
(OPENBLAS_NUM_THREADS / OMP_NUM_THREADS); the elementwise parts of NumPy
run on one thread.
"""
import sys
import time

import numpy as np


def body(q, P, thi, thj, dis):
    if q == "Q1":
        return P - (P > thj) * P * dis
    if q == "Q2":
        return P + (P > thi) * (P - thi)
    return (P > 0.25).astype(np.float64)


def outer_loop(q, A, B, thi, thj, dis, ks):
    R = np.zeros((A.shape[0], B.shape[1]))
    for k in range(ks):
        R += body(q, np.multiply.outer(A[:, k], B[k]), thi, thj, dis)
    return R


def blocked(q, A, B, thi, thj, dis, ks, kb=8):
    R = np.zeros((A.shape[0], B.shape[1]))
    for k0 in range(0, ks, kb):
        k1 = min(ks, k0 + kb)
        P = A[:, k0:k1, None] * B[None, k0:k1, :]
        R += body(q, P, thi[:, :, None], thj[None], dis[None]).sum(axis=1)
    return R


def best(f, reps=3):
    t = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        t = min(t, time.perf_counter() - t0)
    return t


def main():
    q, n, ks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = np.random.default_rng(7)
    A = rng.uniform(-1, 1, (n, n))
    B = rng.uniform(-1, 1, (n, n))
    thi = rng.uniform(-0.5, 0.5, (n, 1))
    thj = rng.uniform(-0.5, 0.5, (1, n))
    dis = rng.uniform(0, 1, (1, n))
    if q == "matmul":
        t = best(lambda: A @ B)
        print("%.4f" % (n * n * n / t / 1e9))
        return
    ks = min(ks, n)
    t = min(best(lambda: outer_loop(q, A, B, thi, thj, dis, ks), 1),
            best(lambda: blocked(q, A, B, thi, thj, dis, ks), 1))
    print("%.4f" % (n * n * ks / t / 1e9))


if __name__ == "__main__":
    main()
