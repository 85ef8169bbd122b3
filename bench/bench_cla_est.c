/* bench_cla_est.c: the compressed size estimated at compile time from a
 * sample of the file (runtime/cla_rt.c cla_rt_est_file, docs/cla.md
 * "Estimated at compile time") against the whole read and its
 * compression: the estimate's error and its cost (process CPU, best of
 * rounds, the estimate and the whole read alternated), as a fraction of
 * the read and of the read with its compression (forced, as under
 * true). Usage: bench_cla_est [rows [rounds]]; data: rows x 12,
 * Airline-like (low-cardinality quarters with 27% zeros, one column of
 * 100 times that plus 0..20), written as csv, text, libsvm and
 * braid-binary in $TMPDIR (else /tmp), removed after. */
#include "io/io.h"
#include "kernels/cla.h"
#include "runtime/cla_rt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    int64_t n = argc > 1 ? atoll(argv[1]) : 400000;
    int rounds = argc > 2 ? atoi(argv[2]) : 3;
    int64_t m = 12;
    BrErr e = {0};
    MB *x = mb_dense(n, m, &e);
    if (!x) return 1;
    uint64_t s = 12345;
    for (int64_t i = 0; i < n * m; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        double u = (double)(s >> 11) / 9007199254740992.0;
        double v = u < 0.27 ? 0 : (double)(int)(u * 4) / 4;
        x->d[i] = i % m == 0 ? 100 * v + (double)(i / m % 21) : v;
    }
    mb_recount_nnz(x);
    ClaPlanOpts o = cla_plan_defaults();
    o.force = true;
    MB *cx = cla_compress(x, &o, &e);
    double got = cx ? (double)mb_bytes(cx) : 0;
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    const char *fmts[] = {"csv", "text", "libsvm", "braid-binary"};
    printf("%lld x %lld, compressed %.0f bytes (forced), %d rounds\n", (long long)n, (long long)m, got, rounds);
    printf("%-13s %8s %7s %8s %7s %10s %10s %8s %8s\n", "format", "file MB", "read %", "est/got", "groups",
           "est CPU s", "read CPU s", "of read", "of r+c");
    for (size_t f = 0; f < sizeof fmts / sizeof *fmts; f++) {
        char path[512];
        snprintf(path, sizeof path, "%s/bench_cla_est_%ld.%s", tmp, (long)getpid(), fmts[f]);
        IoWriteOpts wo;
        io_write_opts_init(&wo);
        wo.format = fmts[f];
        if (io_write_matrix(path, x, &wo, &e)) { fprintf(stderr, "%s\n", e.msg); return 1; }
        IoReadOpts ro;
        io_read_opts_init(&ro);
        ClaFileEst est = {0};
        double best_est = 1e30, best_read = 1e30, best_comp = 1e30;
        bool ok = true;
        for (int r = 0; r < rounds && ok; r++) {
            double t0 = cpu();
            ok = cla_rt_est_file(path, &ro, true, &est);
            double t1 = cpu();
            MB *rd = io_read_matrix(path, &ro, &e);
            double t2 = cpu();
            ok = ok && rd;
            MB *c = rd ? cla_compress(rd, &o, &e) : NULL;
            double t3 = cpu();
            if (t3 - t2 < best_comp) best_comp = t3 - t2;
            mb_release(c);
            mb_release(rd);
            if (t1 - t0 < best_est) best_est = t1 - t0;
            if (t2 - t1 < best_read) best_read = t2 - t1;
        }
        if (!ok) printf("%-13s no estimate (%s)\n", fmts[f], e.msg);
        else
            printf("%-13s %8.1f %7.2f %8.3f %7d %10.4f %10.4f %8.3f %8.3f\n", fmts[f], (double)est.total / 1e6,
                   100.0 * (double)est.read / (double)est.total, est.bytes / got, est.groups, best_est, best_read,
                   best_est / best_read, best_est / (best_read + best_comp));
        char mtd[600];
        snprintf(mtd, sizeof mtd, "%s.mtd", path);
        unlink(path);
        unlink(mtd);
    }
    mb_release(cx);
    mb_release(x);
    return 0;
}
