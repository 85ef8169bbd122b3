/* amulet_trace.h: the AMULET benchmarks' shared pieces: the seed's
 * queries (bench_amulet and bench_amulet_sweep time the same bodies) and
 * the capture of the kernel trace (BRAID_AMULET_TRACE lines on stderr). */
#ifndef BRAID_AMULET_TRACE_H
#define BRAID_AMULET_TRACE_H

#include "tests/t_dml.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The queries: plain matmul and the seed's Q1-Q3 (thres[j], thres[i], a
 * constant threshold), as where-loop bodies over A (n x n), B, thj
 * (1 x n), thi and dis (n x 1). */
enum { QMM, Q1, Q2, Q3, NQ };
static const char *qname[NQ] = {"matmul", "Q1 thres[j]", "Q2 thres[i]", "Q3 const"};
static const char *qbody[NQ] = {
    "R[i,j] += A[i,k]*B[k,j]",
    "R[i,j] += A[i,k]*B[k,j] - (A[i,k]*B[k,j] > thj[j]) * A[i,k]*B[k,j]*dis[j]",
    "R[i,j] += A[i,k]*B[k,j] + (A[i,k]*B[k,j] > thi[i]) * (A[i,k]*B[k,j] - thi[i])",
    "R[i,j] += (A[i,k]*B[k,j] > 0.25)",
};

/* Runs src (inputs names[0..nin), output R) once with the trace on;
 * returns the trace as an open file at its start (NULL if none; the
 * caller fcloses it). *r receives the run. */
static FILE *amulet_traced(const char *src, CgOptions *cg, const char **names, MB **ins, int nin, TRun *r)
{
    char path[] = "/tmp/braid-amulet-trace-XXXXXX";
    int fd = mkstemp(path), saved = dup(2);
    fflush(stderr);
    if (fd >= 0) dup2(fd, 2);
    setenv("BRAID_AMULET_TRACE", "1", 1);
    const char *on[] = {"R"};
    t_run_dml(src, cg, nin, names, ins, 1, on, r);
    unsetenv("BRAID_AMULET_TRACE");
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    FILE *f = fd >= 0 ? fopen(path, "r") : NULL;
    if (fd >= 0) { close(fd); unlink(path); }
    return f;
}

#endif
