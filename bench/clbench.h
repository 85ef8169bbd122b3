/* clbench.h: what the plain-OpenCL benches (clprobe, clrows) share: a
 * monotonic clock and a check that ends the program on an OpenCL error,
 * naming the call, its error code and the line (CL_BENCH_NAME: the
 * program's name). */
#ifndef BRAID_BENCH_CLBENCH_H
#define BRAID_BENCH_CLBENCH_H

#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#define CK(x)                                                                                     \
    do {                                                                                          \
        cl_int rc_ = (x);                                                                         \
        if (rc_ != CL_SUCCESS) {                                                                  \
            fprintf(stderr, "%s: %s failed (%d), line %d\n", CL_BENCH_NAME, #x, rc_, __LINE__);   \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)

#endif
