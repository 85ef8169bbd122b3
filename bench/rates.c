/* rates.c: prints the in-run machine rates the end-to-end benchmark's
 * bounds use (bench/e2e/run.py, runtime/bound.h): "READ_GBS GEMM_GFS",
 * a STREAM-style read of 400 MB (rates.h) and a 2000^3 OpenBLAS
 * dgemm, both with the kernel threads (OMP_NUM_THREADS, default 2).
 * Usage: rates [doubles=50000000] */
#include <stdio.h>
#include <stdlib.h>

#include "bench/rates.h"

int main(int argc, char **argv)
{
    int64_t n = argc > 1 ? atoll(argv[1]) : 50000000;
    if (!getenv("OMP_NUM_THREADS")) br_set_threads(2);
    double t = stream_read(1, n);
    double g = dgemm_rate(2000);
    printf("%.3f %.3f\n", (double)n * 8 / t / 1e9, g / 1e9);
    return 0;
}
