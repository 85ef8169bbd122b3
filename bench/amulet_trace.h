/* amulet_trace.h: the AMULET benchmarks' capture of the kernel trace
 * (BRAID_AMULET_TRACE lines on stderr). */
#ifndef BRAID_AMULET_TRACE_H
#define BRAID_AMULET_TRACE_H

#include "tests/t_dml.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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
