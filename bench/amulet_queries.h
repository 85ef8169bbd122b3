/* amulet_queries.h: the queries the AMULET benchmarks time
 * (bench_amulet and bench_amulet_sweep: the same bodies, one table). */
#ifndef BRAID_AMULET_QUERIES_H
#define BRAID_AMULET_QUERIES_H

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

#endif
