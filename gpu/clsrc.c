/* clsrc.c: the OpenCL C source of the backend's fixed kernels, built once
 * per process (gpu/ocl.c). The scalar semantics come from the operator
 * table: ew_un/ew_bin are switches over every UNARY/BINARY row's cgen
 * text, with a prelude that starts from base/ops.h's OPS_SCALAR_SRC, the
 * text codegen's C prelude starts from too (exp, log and tanh are
 * branch-free definitions, so they agree with the CPU to the bit). The text depends only on the build (the
 * opcodes), so drivers that cache programs by source (PoCL's kcache,
 * NVIDIA's) compile it once per machine. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_int.h"
#include "../base/strbuf.h"

#define CL_STR_(x) #x
#define CL_STR(x) CL_STR_(x)

/* Helpers; FP_CONTRACT off so that a*b+c is never fused behind our back
 * (the CPU reference does not fuse either). */
static const char cl_prelude[] =
    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "typedef long int64_t;\n"
    "typedef ulong uint64_t;\n"
    "#define INT64_MAX LONG_MAX\n"
    "#define INT64_MIN LONG_MIN\n"
    "#define CG_INL static inline\n"
    OPS_SCALAR_SRC
    /* Kahan addition; an infinite sum resets the correction */
    "CG_INL void cg_kadd(double *s, double *c, double x)\n"
    "{\n"
    "    double y = x + *c, t = *s + y;\n"
    "    *c = fabs(t) <= DBL_MAX ? y - (t - *s) : 0;\n"
    "    *s = t;\n"
    "}\n";

/* The fixed kernels. A matrix operand is MAT(x): the values x and, when
 * x_sp is set, its CSR row pointers x_rp and columns x_ci (x then holds
 * the stored values; dense: the cells, x_rp and x_ci unread). AT reads
 * cell (i, j) of a w-column operand either way: a CSR cell by a binary
 * search of row i's columns (0 where none is stored), so an operator
 * over a CSR input reads it in its own launch, with no dense copy first.
 * Broadcast modes of a binary operand: 0 a full matrix, 1 a row vector
 * (index j), 2 a column vector (index i), 3 the scalar argument.
 * Aggregates: AG_SUM, AG_SUMSQ, AG_MIN, AG_MAX. */
static const char cl_kernels[] =
    "#define AG_SUM 0\n#define AG_SUMSQ 1\n#define AG_MIN 2\n#define AG_MAX 3\n"
    GPU_CL_CSR_AT
    "#define MAT(x) __global const double *x, __global const long *x##_rp, __global const int *x##_ci, int x##_sp\n"
    "#define AT(x, i, j, w) (x##_sp ? csr_at(x##_rp, x##_ci, x, (i), (j)) : x[(i) * (w) + (j)])\n"
    /* the columns of a band (column walks over a CSR operand) */
    "#define CSR_BAND " CL_STR(GPU_CSR_SEG) "\n"
    "#define BV(x, mode, s, i, j, cols) \\\n"
    "    ((mode) == 3 ? (s) : (mode) == 0 ? AT(x, i, j, cols) : (mode) == 1 ? AT(x, 0, j, cols) : AT(x, i, 0, 1))\n"
    /* A cursor over a CSR operand's row: csr_seek finds the first entry
     * at or after column j (a binary search), csr_next steps forward to
     * column j (columns visited in increasing order). The cell by cell
     * kernels take seg cells of one row per work-item (seg 1 over dense
     * operands: a work-item per cell): CUR opens each CSR full or row
     * vector operand's cursor once at the segment's first column, CV
     * reads the next cell by it (BV's modes otherwise), so each entry is
     * read once per segment instead of a binary search per cell. */
    "CG_INL long csr_seek(__global const long *rp, __global const int *ci, long i, long j)\n"
    "{\n"
    "    long lo = rp[i], hi = rp[i + 1];\n"
    "    while (lo < hi) {\n"
    "        long m = lo + (hi - lo) / 2;\n"
    "        if (ci[m] < j) lo = m + 1;\n"
    "        else hi = m;\n"
    "    }\n"
    "    return lo;\n"
    "}\n"
    "CG_INL double csr_next(__global const int *ci, __global const double *v, long *p, long pe, long j)\n"
    "{\n"
    "    while (*p < pe && ci[*p] < j) (*p)++;\n"
    "    return *p < pe && ci[*p] == j ? v[*p] : 0.0;\n"
    "}\n"
    "#define CUR(x, mode, i, j0) \\\n"
    "    long x##_p = 0, x##_pe = 0; \\\n"
    "    if (x##_sp && (mode) <= 1) { \\\n"
    "        long x##_r = (mode) == 0 ? (i) : 0; \\\n"
    "        x##_p = csr_seek(x##_rp, x##_ci, x##_r, j0); \\\n"
    "        x##_pe = x##_rp[x##_r + 1]; \\\n"
    "    }\n"
    "#define CV(x, mode, s, i, j, cols) \\\n"
    "    (x##_sp && (mode) <= 1 ? csr_next(x##_ci, x, &x##_p, x##_pe, j) : BV(x, mode, s, i, j, cols))\n"
    /* segment t of a rows x cols iteration: row i, columns [j0, j1) */
    "#define SEG(t, rows, cols, seg) \\\n"
    "    long ns_ = ((cols) + (seg) - 1) / (seg); \\\n"
    "    if ((t) >= (rows) * ns_) return; \\\n"
    "    long i = (t) / ns_, j0 = ((t) - i * ns_) * (seg), j1 = min((long)(cols), j0 + (seg));\n"
    /* f(a) per cell, a dense or CSR (sparse-unsafe f: a dense result) */
    "__kernel void ew_unary(int op, long rows, long cols, long seg, MAT(a), __global double *out)\n"
    "{\n"
    "    SEG(get_global_id(0), rows, cols, seg)\n"
    "    CUR(a, 0, i, j0)\n"
    "    for (long j = j0; j < j1; j++) out[i * cols + j] = ew_un(op, CV(a, 0, 0, i, j, cols));\n"
    "}\n"
    "__kernel void ew_binary(int op, long rows, long cols, long seg, MAT(a), int am, double as, MAT(b), int bm,\n"
    "                        double bs, __global double *out)\n"
    "{\n"
    "    SEG(get_global_id(0), rows, cols, seg)\n"
    "    CUR(a, am, i, j0)\n"
    "    CUR(b, bm, i, j0)\n"
    "    for (long j = j0; j < j1; j++)\n"
    "        out[i * cols + j] = ew_bin(op, CV(a, am, as, i, j, cols), CV(b, bm, bs, i, j, cols));\n"
    "}\n"
    /* sparse (CSR) a op b for operators with f(0, y) = 0: the output has
     * a's structure (b dense or CSR: read by a cursor over its row, as
     * a's columns increase); one work-item per row */
    "__kernel void csr_binary(int op, long rows, long cols, __global const long *rp, __global const int *ci,\n"
    "                         __global const double *v, MAT(b), int bm, double bs, int swap,\n"
    "                         __global double *outv)\n"
    "{\n"
    "    long i = get_global_id(0);\n"
    "    if (i >= rows) return;\n"
    "    CUR(b, bm, i, 0)\n"
    "    for (long k = rp[i]; k < rp[i + 1]; k++) {\n"
    "        double y = CV(b, bm, bs, i, (long)ci[k], cols);\n"
    "        outv[k] = swap ? ew_bin(op, y, v[k]) : ew_bin(op, v[k], y);\n"
    "    }\n"
    "}\n"
    "__kernel void csr_unary(int op, long nnz, __global const double *v, __global double *outv)\n"
    "{\n"
    "    long k = get_global_id(0);\n"
    "    if (k < nnz) outv[k] = ew_un(op, v[k]);\n"
    "}\n"
    "__kernel void csr_to_dense(long rows, long cols, __global const long *rp, __global const int *ci,\n"
    "                           __global const double *v, __global double *out)\n"
    "{\n"
    "    long i = get_global_id(0);\n"
    "    if (i >= rows) return;\n"
    "    for (long j = 0; j < cols; j++) out[i * cols + j] = 0;\n"
    "    for (long k = rp[i]; k < rp[i + 1]; k++) out[i * cols + ci[k]] = v[k];\n"
    "}\n"
    /* CSR a (rows x inner) times dense b (inner x n): one work-item per
     * output cell, the row's non-zeros in order (spmv for n = 1). IEEE
     * over the zeros a does not store (docs/DESIGN.md "NaN and Inf"): nf
     * (when usenf) holds each column's count of NaN/Inf in b; a cell
     * whose row met fewer of them with a non-zero has a 0 * NaN/Inf term
     * and is NaN, as k_matmul marks it. Without usenf b is finite. */
    "__kernel void csr_mm(long rows, long n, __global const long *rp, __global const int *ci,\n"
    "                     __global const double *v, __global const double *b, __global const long *nf,\n"
    "                     int usenf, __global double *out)\n"
    "{\n"
    "    long k = get_global_id(0);\n"
    "    if (k >= rows * n) return;\n"
    "    long i = k / n, j = k - i * n, met = 0;\n"
    "    double s = 0;\n"
    "    for (long p = rp[i]; p < rp[i + 1]; p++) {\n"
    "        double x = v[p], y = b[(long)ci[p] * n + j];\n"
    "        if (x != 0) { s += x * y; met += !isfinite(y); }   /* explicit zeros are zeros */\n"
    "    }\n"
    "    out[k] = usenf && nf[j] > met ? NAN : s;\n"
    "}\n"
    /* the count of NaN/Inf in each of b's n columns (k rows) */
    "__kernel void col_nonfinite(long k, long n, __global const double *b, __global long *nf)\n"
    "{\n"
    "    long j = get_global_id(0);\n"
    "    if (j >= n) return;\n"
    "    long c = 0;\n"
    "    for (long r = 0; r < k; r++) c += !isfinite(b[r * n + j]);\n"
    "    nf[j] = c;\n"
    "}\n"
    /* bad[r]: whether CSR row r stores a NaN or an infinity */
    "__kernel void csr_row_bad(long rows, __global const long *rp, __global const double *v, __global int *bad)\n"
    "{\n"
    "    long r = get_global_id(0);\n"
    "    if (r >= rows) return;\n"
    "    int f = 0;\n"
    "    for (long p = rp[r]; p < rp[r + 1]; p++) f |= !isfinite(v[p]);\n"
    "    bad[r] = f;\n"
    "}\n"
    /* t(a) %*% b, a CSR (k x m), b dense (k x n): work-item (g, j) sums
     * the rows [g * chunk, (g + 1) * chunk) of a into chunk g's partial
     * m x n block (part + g * m * n, column j), each row's entries in
     * order; part_sum adds the partials. A NaN/Inf b[r, j] meets every
     * cell of row r, zeros included (IEEE). */
    "__kernel void csr_tmm(long k, long m, long n, long chunk, __global const long *rp, __global const int *ci,\n"
    "                      __global const double *v, __global const double *b, __global double *part)\n"
    "{\n"
    "    long t = get_global_id(0), G = (k + chunk - 1) / chunk;\n"
    "    if (t >= G * n) return;\n"
    "    long g = t / n, j = t - g * n, r1 = min(k, (g + 1) * chunk);\n"
    "    __global double *o = part + g * m * n;\n"
    "    for (long c = 0; c < m; c++) o[c * n + j] = 0;\n"
    "    for (long r = g * chunk; r < r1; r++) {\n"
    "        double y = b[r * n + j];\n"
    "        long p = rp[r], pe = rp[r + 1];\n"
    "        if (isfinite(y))\n"
    "            for (; p < pe; p++) o[(long)ci[p] * n + j] += v[p] * y;\n"
    "        else\n"
    "            for (long c = 0; c < m; c++) o[c * n + j] += (p < pe && ci[p] == c ? v[p++] : 0.0) * y;\n"
    "    }\n"
    "}\n"
    /* dense a (m x k) times CSR b (k x n): one work-item per output row,
     * a's cells in order, each scattering b's row (every stored entry,
     * so 0 * NaN/Inf is NaN; a NaN/Inf a cell meets b's zeros too) */
    "__kernel void dense_csr_mm(long m, long k, long n, __global const double *a, __global const long *rp,\n"
    "                           __global const int *ci, __global const double *v, __global double *out)\n"
    "{\n"
    "    long i = get_global_id(0);\n"
    "    if (i >= m) return;\n"
    "    __global double *o = out + i * n;\n"
    "    for (long j = 0; j < n; j++) o[j] = 0;\n"
    "    for (long q = 0; q < k; q++) {\n"
    "        double x = a[i * k + q];\n"
    "        long p = rp[q], pe = rp[q + 1];\n"
    "        if (isfinite(x))\n"
    "            for (; p < pe; p++) o[ci[p]] += x * v[p];\n"
    "        else\n"
    "            for (long j = 0; j < n; j++) o[j] += x * (p < pe && ci[p] == j ? v[p++] : 0.0);\n"
    "    }\n"
    "}\n"
    /* t(A) %*% B for CSR B (k x n), A (k x m) dense or CSR: work-item
     * (g, c) sums the rows of chunk g into row c of the partial m x n
     * block g: A[r, c] (CSR: read by a cursor over row r's band) times
     * B's row r (upper, for tsmm with A = B: from column c on, the upper
     * triangle). A NaN/Inf A[r, c], or a row of B with a NaN/Inf (bad,
     * when usebad; without it B is finite), takes every term of the row,
     * zeros included (IEEE). */
    "__kernel void tmm_csrb(long k, long m, long n, long chunk, MAT(a), __global const long *rp,\n"
    "                       __global const int *ci, __global const double *v, __global const int *bad, int usebad,\n"
    "                       int upper, __global double *part)\n"
    "{\n"
    /* a work-item per (g, column c) over a dense A; over a CSR A per
     * (g, band of CSR_BAND columns): each row's band of A by a cursor
     * (one search per band and row) and, upper, B's row from column c
     * by a cursor too; each o[c][d] still adds its rows in order (the
     * per-column walk's bits) */
    "    const long t = get_global_id(0), G = (k + chunk - 1) / chunk, bw = a_sp ? CSR_BAND : 1;\n"
    "    const long nb = (m + bw - 1) / bw;\n"
    "    if (t >= G * nb) return;\n"
    "    const long g = t / nb, c0 = (t - g * nb) * bw, cn = min(bw, m - c0), r1 = min(k, (g + 1) * chunk);\n"
    "    for (long c = c0; c < c0 + cn; c++) {\n"
    "        __global double *o = part + g * m * n + c * n;\n"
    "        for (long d = upper ? c : 0; d < n; d++) o[d] = 0;\n"
    "    }\n"
    "    for (long r = g * chunk; r < r1; r++) {\n"
    "        long pa = a_sp ? csr_seek(a_rp, a_ci, r, c0) : 0, pae = a_sp ? a_rp[r + 1] : 0;\n"
    "        long lo = upper ? csr_seek(rp, ci, r, c0) : rp[r];\n"
    "        const long pe = rp[r + 1];\n"
    "        for (long c = c0; c < c0 + cn; c++) {\n"
    "            const double x = a_sp ? csr_next(a_ci, a, &pa, pae, c) : a[r * m + c];\n"
    "            if (upper) while (lo < pe && ci[lo] < c) lo++;\n"
    "            __global double *o = part + g * m * n + c * n;\n"
    "            if (!isfinite(x) || (usebad && bad[r]))\n"
    "                for (long d = upper ? c : 0, p = lo; d < n; d++) o[d] += x * (p < pe && ci[p] == d ? v[p++] : 0.0);\n"
    "            else if (x != 0)\n"
    "                for (long p = lo; p < pe; p++) o[ci[p]] += x * v[p];\n"
    "        }\n"
    "    }\n"
    "}\n"
    /* CSR a (m x k) times CSR b (k x n): one work-item per output row,
     * a's entries each scattering b's row (a NaN/Inf a entry meets b's
     * zeros too); with usebad, the rows of b with a NaN/Inf (bad) meet
     * the zeros a's row does not store (0 x NaN/Inf is NaN) */
    "__kernel void csr_csr_mm(long m, long k, long n, __global const long *arp, __global const int *aci,\n"
    "                         __global const double *av, __global const long *rp, __global const int *ci,\n"
    "                         __global const double *v, __global const int *bad, int usebad,\n"
    "                         __global double *out)\n"
    "{\n"
    "    long i = get_global_id(0);\n"
    "    if (i >= m) return;\n"
    "    __global double *o = out + i * n;\n"
    "    for (long j = 0; j < n; j++) o[j] = 0;\n"
    "    long pa = arp[i], pae = arp[i + 1];\n"
    "    for (long p = pa; p < pae; p++) {\n"
    "        double x = av[p];\n"
    "        long q = rp[aci[p]], qe = rp[aci[p] + 1];\n"
    "        if (isfinite(x))\n"
    "            for (; q < qe; q++) o[ci[q]] += x * v[q];\n"
    "        else\n"
    "            for (long j = 0; j < n; j++) o[j] += x * (q < qe && ci[q] == j ? v[q++] : 0.0);\n"
    "    }\n"
    "    for (long r = 0, p = pa; usebad && r < k; r++) {\n"
    "        while (p < pae && aci[p] < r) p++;\n"
    "        if (bad[r] && !(p < pae && aci[p] == r))\n"
    "            for (long q = rp[r]; q < rp[r + 1]; q++) o[ci[q]] += 0.0 * v[q];\n"
    "    }\n"
    "}\n"
    /* X %*% t(X) for CSR X (m rows): one work-item per cell of the upper
     * triangle, the dot product of two rows by a merge of their sorted
     * columns (a NaN/Inf facing an unstored zero gives NaN), written to
     * both halves (exactly symmetric) */
    "__kernel void csr_tsmm_r(long m, __global const long *rp, __global const int *ci, __global const double *v,\n"
    "                         __global double *out)\n"
    "{\n"
    "    long q = get_global_id(0);\n"
    "    if (q >= m * m) return;\n"
    "    long i = q / m, l = q - i * m;\n"
    "    if (l < i) return;\n"
    "    long p = rp[i], pe = rp[i + 1], r = rp[l], re = rp[l + 1];\n"
    "    double s = 0;\n"
    "    while (p < pe || r < re) {\n"
    "        long cp = p < pe ? (long)ci[p] : LONG_MAX, cr = r < re ? (long)ci[r] : LONG_MAX;\n"
    "        if (cp == cr) s += v[p++] * v[r++];\n"
    "        else if (cp < cr) { if (!isfinite(v[p])) s += v[p] * 0.0; p++; }\n"
    "        else { if (!isfinite(v[r])) s += v[r] * 0.0; r++; }\n"
    "    }\n"
    "    out[i * m + l] = s;\n"
    "    out[l * m + i] = s;\n"
    "}\n"
    /* out (rows x cols) = the sum of G partial blocks, in chunk order;
     * sym: the lower triangle mirrors the upper one (tsmm) */
    "__kernel void part_sum(long G, long rows, long cols, int sym, __global const double *part,\n"
    "                       __global double *out)\n"
    "{\n"
    "    long q = get_global_id(0), cells = rows * cols;\n"
    "    if (q >= cells) return;\n"
    "    long i = q / cols, j = q - i * cols, src = sym && j < i ? j * cols + i : q;\n"
    "    double s = part[src];\n"
    "    for (long g = 1; g < G; g++) s += part[g * cells + src];\n"
    "    out[q] = s;\n"
    "}\n"
    /* transpose through a 16 x 17 local tile (work-group composition:
     * coalesced reads and writes, the padding avoids bank conflicts); a
     * CSR a's tile row read by its first work-item, one binary search
     * and a cursor over the 16 columns */
    "__kernel void transpose(long rows, long cols, MAT(a), __global double *out)\n"
    "{\n"
    "    __local double tile[16][17];\n"
    "    long bx = get_group_id(0) * 16, by = get_group_id(1) * 16;\n"
    "    int tx = get_local_id(0), ty = get_local_id(1);\n"
    "    long i = by + ty, j = bx + tx;\n"
    "    if (!a_sp) {\n"
    "        if (i < rows && j < cols) tile[ty][tx] = a[i * cols + j];\n"
    "    } else if (tx == 0 && i < rows) {\n"
    "        long p = csr_seek(a_rp, a_ci, i, bx), pe = a_rp[i + 1];\n"
    "        for (int u = 0; u < (int)get_local_size(0) && bx + u < cols; u++)\n"
    "            tile[ty][u] = csr_next(a_ci, a, &p, pe, bx + u);\n"
    "    }\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    long oi = bx + ty, oj = by + tx;\n"
    "    if (oi < cols && oj < rows) out[oi * rows + oj] = tile[tx][ty];\n"
    "}\n"
    /* copies the upper triangle into the lower one (tsmm's symmetry) */
    "__kernel void sym_lower(long n, __global double *c)\n"
    "{\n"
    "    long k = get_global_id(0);\n"
    "    if (k >= n * n) return;\n"
    "    long i = k / n, j = k - i * n;\n"
    "    if (j < i) c[k] = c[j * n + i];\n"
    "}\n"
    "CG_INL void agg_step(int op, double *s, double *c, double x)\n"
    "{\n"
    "    if (op == AG_SUM) cg_kadd(s, c, x);\n"
    "    else if (op == AG_SUMSQ) cg_kadd(s, c, x * x);\n"
    "    else if (op == AG_MIN) *s = cg_minstep(*s, x);\n"
    "    else *s = cg_maxstep(*s, x);\n"
    "}\n"
    "CG_INL double agg_init(int op) { return op == AG_MIN ? INFINITY : op == AG_MAX ? -INFINITY : 0.0; }\n"
    "CG_INL double agg_comb(int op, double a, double b)\n"
    "{\n"
    "    return op == AG_MIN ? cg_minstep(a, b) : op == AG_MAX ? cg_maxstep(a, b) : a + b;\n"
    "}\n"
    /* the work-group's partials sh[0..L) combined into sh[0], a tree in
     * local memory (every work-item of the group calls it) */
    "CG_INL void agg_tree(int op, __local double *sh, int l, int L)\n"
    "{\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (int w = L / 2; w > 0; w /= 2) {\n"
    "        if (l < w) sh[l] = agg_comb(op, sh[l], sh[l + w]);\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "}\n"
    /* one work-group per row (grid-stride over groups of rows): each
     * work-item a strided Kahan partial, then a tree in local memory; a
     * CSR row's stored entries, and for min/max one 0 when the row has
     * an implicit zero */
    "__kernel void agg_row(int op, long rows, long cols, double div, MAT(a), __global double *out,\n"
    "                      __local double *sh)\n"
    "{\n"
    "    int l = get_local_id(0), L = get_local_size(0);\n"
    "    for (long i = get_group_id(0); i < rows; i += get_num_groups(0)) {\n"
    "        double s = agg_init(op), c = 0;\n"
    "        if (!a_sp) for (long j = l; j < cols; j += L) agg_step(op, &s, &c, a[i * cols + j]);\n"
    "        else {\n"
    "            for (long k = a_rp[i] + l; k < a_rp[i + 1]; k += L) agg_step(op, &s, &c, a[k]);\n"
    "            if (l == 0 && op >= AG_MIN && a_rp[i + 1] - a_rp[i] < cols) agg_step(op, &s, &c, 0.0);\n"
    "        }\n"
    "        sh[l] = op <= AG_SUMSQ ? s + c : s;\n"
    "        agg_tree(op, sh, l, L);\n"
    "        if (l == 0) out[i] = sh[0] / div;\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "}\n"
    /* one work-item per column, Kahan down the rows (coalesced over j);
     * over a CSR a one per band of CSR_BAND columns, each row's band
     * read by a cursor opened once (csr_seek) and stepped (csr_next):
     * every cell still stepped in row order, so the sums are the dense
     * walk's to the bit, with a binary search per band and row instead
     * of one per cell */
    "__kernel void agg_col(int op, long rows, long cols, double div, MAT(a), __global double *out)\n"
    "{\n"
    "    const long t = get_global_id(0);\n"
    "    if (!a_sp) {\n"
    "        if (t >= cols) return;\n"
    "        double s = agg_init(op), c = 0;\n"
    "        for (long i = 0; i < rows; i++) agg_step(op, &s, &c, a[i * cols + t]);\n"
    "        out[t] = (op <= AG_SUMSQ ? s + c : s) / div;\n"
    "        return;\n"
    "    }\n"
    "    const long j0 = t * CSR_BAND, jn = min((long)CSR_BAND, cols - j0);\n"
    "    if (jn <= 0) return;\n"
    "    double s[CSR_BAND], c[CSR_BAND];\n"
    "    for (long k = 0; k < jn; k++) s[k] = agg_init(op), c[k] = 0;\n"
    "    for (long i = 0; i < rows; i++) {\n"
    "        long p = csr_seek(a_rp, a_ci, i, j0), pe = a_rp[i + 1];\n"
    "        for (long k = 0; k < jn; k++) agg_step(op, &s[k], &c[k], csr_next(a_ci, a, &p, pe, j0 + k));\n"
    "    }\n"
    "    for (long k = 0; k < jn; k++) out[j0 + k] = (op <= AG_SUMSQ ? s[k] + c[k] : s[k]) / div;\n"
    "}\n"
    /* the first stage of a full aggregate: one partial per work-group
     * over the n values of a (a CSR matrix's stored ones: zero set when
     * it has an implicit zero, which work-item 0 adds) */
    "__kernel void agg_part(int op, long n, int zero, __global const double *a, __global double *part,\n"
    "                       __local double *sh)\n"
    "{\n"
    "    int l = get_local_id(0), L = get_local_size(0);\n"
    "    double s = agg_init(op), c = 0;\n"
    "    if (zero && get_global_id(0) == 0) agg_step(op, &s, &c, 0.0);\n"
    "    for (long k = get_global_id(0); k < n; k += get_global_size(0)) agg_step(op, &s, &c, a[k]);\n"
    "    sh[l] = op <= AG_SUMSQ ? s + c : s;\n"
    "    agg_tree(op, sh, l, L);\n"
    "    if (l == 0) part[get_group_id(0)] = sh[0];\n"
    "}\n"
    /* aggregates the tree kernels lack, one work-item per segment (a row,
     * a column or all cells: segment s starts at s * ss, its k-th cell is
     * at + k * es), in the CPU's order and semantics (kernels/agg.c):
     * AS_PROD a product (an overflow times a zero is 0), AS_VAR/AS_SD two
     * passes of Kahan sums (n - 1; n == 1 gives 0), AS_IMAX/AS_IMIN the
     * 1-based index of the last extreme cell, NaN ignored. The k-th
     * cell is a's cell g * ss + k * es in row-major order over cols
     * columns (CSR: found by csr_at) */
    "CG_INL double seg_at(__global const double *a, __global const long *rp, __global const int *ci, int sp, long q,\n"
    "                     long cols)\n"
    "{\n"
    "    return sp ? csr_at(rp, ci, a, q / cols, q % cols) : a[q];\n"
    "}\n"
    /* a CSR a's cell q of a walk in row-major order (es 1: rows, all
     * cells): a cursor over row *cr (reopened at each new row; *cr -1
     * restarts the walk) */
    "CG_INL double seg_next(__global const double *a, __global const long *rp, __global const int *ci, long q, long cols,\n"
    "                       long *cr, long *cp, long *ce)\n"
    "{\n"
    "    const long i = q / cols;\n"
    "    if (i != *cr) { *cr = i; *cp = rp[i]; *ce = rp[i + 1]; }\n"
    "    return csr_next(ci, a, cp, *ce, q - i * cols);\n"
    "}\n"
    "#define AS_PROD 0\n#define AS_VAR 1\n#define AS_SD 2\n#define AS_IMAX 3\n#define AS_IMIN 4\n"
    "__kernel void agg_seg(int op, long nseg, long len, long ss, long es, long cols, MAT(a),\n"
    "                      __global double *out)\n"
    "{\n"
    "    long g = get_global_id(0);\n"
    "    if (g >= nseg) return;\n"
    "    long cr = -1, cp = 0, ce = 0;\n"
    "#define x(q) (a_sp && es == 1 ? seg_next(a, a_rp, a_ci, g * ss + (q), cols, &cr, &cp, &ce) \\\n"
    "                               : seg_at(a, a_rp, a_ci, a_sp, g * ss + (q), cols))\n"
    "    double r;\n"
    "    if (op == AS_PROD) {\n"
    "        r = 1.0;\n"
    "        bool zero = false, nonfin = false;\n"
    "        for (long k = 0; k < len; k++) {\n"
    "            double v = x(k * es);\n"
    "            r *= v;\n"
    "            zero |= v == 0;\n"
    "            nonfin |= !isfinite(v);\n"
    "        }\n"
    "        if (!isfinite(r) && zero && !nonfin) r = 0.0;\n"
    "    } else if (op == AS_VAR || op == AS_SD) {\n"
    "        double s = 0, c = 0;\n"
    "        for (long k = 0; k < len; k++) cg_kadd(&s, &c, x(k * es));\n"
    "        double m = (s + c) / (double)len, d = 0, dc = 0;\n"
    "        cr = -1;\n"
    "        for (long k = 0; k < len; k++) { double t = x(k * es) - m; cg_kadd(&d, &dc, t * t); }\n"
    "        r = len == 0 ? NAN : len == 1 ? 0.0 : (d + dc) / (double)(len - 1);\n"
    "        if (op == AS_SD) r = sqrt(r);\n"
    "    } else {\n"
    "        double best = op == AS_IMAX ? -INFINITY : INFINITY;\n"
    "        long idx = -1;\n"
    "        for (long k = 0; k < len; k++) {\n"
    "            double v = x(k * es);\n"
    "            if (op == AS_IMAX ? v >= best : v <= best) { best = v; idx = k; }\n"
    "        }\n"
    "        r = len == 0 ? 0.0 : (double)(max(idx, 0L) + 1);\n"
    "    }\n"
    "    out[g] = r;\n"
    "#undef x\n"
    "}\n"
    /* agg_seg's column segments (prod, var, sd) over a CSR a: a
     * work-item per band of CSR_BAND columns, each row's band by a
     * cursor (agg_col's walk), the same steps per column as agg_seg */
    "__kernel void agg_seg_col(int op, long rows, long cols, MAT(a), __global double *out)\n"
    "{\n"
    "    const long j0 = get_global_id(0) * CSR_BAND, jn = min((long)CSR_BAND, cols - j0);\n"
    "    if (jn <= 0) return;\n"
    "    double s[CSR_BAND], c[CSR_BAND];\n"
    "    uchar zf[CSR_BAND], nf[CSR_BAND];\n"
    "    for (long k = 0; k < jn; k++) { s[k] = op == AS_PROD ? 1.0 : 0.0; c[k] = 0; zf[k] = 0; nf[k] = 0; }\n"
    "    for (long i = 0; i < rows; i++) {\n"
    "        long p = csr_seek(a_rp, a_ci, i, j0), pe = a_rp[i + 1];\n"
    "        for (long k = 0; k < jn; k++) {\n"
    "            const double v = csr_next(a_ci, a, &p, pe, j0 + k);\n"
    "            if (op == AS_PROD) { s[k] *= v; zf[k] |= v == 0; nf[k] |= !isfinite(v); }\n"
    "            else cg_kadd(&s[k], &c[k], v);\n"
    "        }\n"
    "    }\n"
    "    if (op == AS_PROD) {\n"
    "        for (long k = 0; k < jn; k++) out[j0 + k] = !isfinite(s[k]) && zf[k] && !nf[k] ? 0.0 : s[k];\n"
    "        return;\n"
    "    }\n"
    "    double m[CSR_BAND];\n"
    "    for (long k = 0; k < jn; k++) { m[k] = (s[k] + c[k]) / (double)rows; s[k] = 0; c[k] = 0; }\n"
    "    for (long i = 0; i < rows; i++) {\n"
    "        long p = csr_seek(a_rp, a_ci, i, j0), pe = a_rp[i + 1];\n"
    "        for (long k = 0; k < jn; k++) { const double t = csr_next(a_ci, a, &p, pe, j0 + k) - m[k]; cg_kadd(&s[k], &c[k], t * t); }\n"
    "    }\n"
    "    for (long k = 0; k < jn; k++) {\n"
    "        const double r = rows == 1 ? 0.0 : (s[k] + c[k]) / (double)(rows - 1);\n"
    "        out[j0 + k] = op == AS_SD ? sqrt(r) : r;\n"
    "    }\n"
    "}\n"
    /* cumulative aggregates down each column (kernels/agg.c k_cum): a
     * work-item per column; cumsum a Kahan sum giving s + c at each row */
    /* (over a CSR a: a work-item per band of CSR_BAND columns, each
     * row's band by a cursor, as agg_col) */
    "CG_INL void cum_step(int op, double *s, double *c, double x, __global double *o)\n"
    "{\n"
    "    if (op == 0) { cg_kadd(s, c, x); *o = *s + *c; }\n"
    "    else if (op == 1) *o = *s *= x;\n"
    "    else if (op == 2) *o = *s = cg_minstep(*s, x);\n"
    "    else *o = *s = cg_maxstep(*s, x);\n"
    "}\n"
    "__kernel void cum_col(int op, long rows, long cols, MAT(a), __global double *out)\n"
    "{\n"
    "    const long t = get_global_id(0);\n"
    "    const double s0 = op == 1 ? 1.0 : op == 2 ? INFINITY : op == 3 ? -INFINITY : 0.0;\n"
    "    if (!a_sp) {\n"
    "        if (t >= cols) return;\n"
    "        double s = s0, c = 0;\n"
    "        for (long i = 0; i < rows; i++) cum_step(op, &s, &c, a[i * cols + t], &out[i * cols + t]);\n"
    "        return;\n"
    "    }\n"
    "    const long j0 = t * CSR_BAND, jn = min((long)CSR_BAND, cols - j0);\n"
    "    if (jn <= 0) return;\n"
    "    double s[CSR_BAND], c[CSR_BAND];\n"
    "    for (long k = 0; k < jn; k++) s[k] = s0, c[k] = 0;\n"
    "    for (long i = 0; i < rows; i++) {\n"
    "        long p = csr_seek(a_rp, a_ci, i, j0), pe = a_rp[i + 1];\n"
    "        for (long k = 0; k < jn; k++) cum_step(op, &s[k], &c[k], csr_next(a_ci, a, &p, pe, j0 + k), &out[i * cols + j0 + k]);\n"
    "    }\n"
    "}\n"
    /* ifelse(c, a, b) with BV's broadcast modes */
    "__kernel void ew_ifelse(long rows, long cols, long seg, MAT(c), int cm, double cs, MAT(a), int am, double as,\n"
    "                        MAT(b), int bm, double bs, __global double *out)\n"
    "{\n"
    "    SEG(get_global_id(0), rows, cols, seg)\n"
    "    CUR(c, cm, i, j0)\n"
    "    CUR(a, am, i, j0)\n"
    "    CUR(b, bm, i, j0)\n"
    "    for (long j = j0; j < j1; j++) {\n"
    "        double cv = CV(c, cm, cs, i, j, cols), av = CV(a, am, as, i, j, cols), bv = CV(b, bm, bs, i, j, cols);\n"
    "        out[i * cols + j] = cv != 0 ? av : bv;\n"
    "    }\n"
    "}\n"
    /* right indexing: rows [rl, rl + m) and columns [cl, cl + n) */
    "__kernel void slice(long cols, long rl, long cl, long m, long n, long seg, MAT(a), __global double *out)\n"
    "{\n"
    "    SEG(get_global_id(0), m, n, seg)\n"
    "    CUR(a, 0, rl + i, cl + j0)\n"
    "    for (long j = j0; j < j1; j++) out[i * n + j] = CV(a, 0, 0, rl + i, cl + j, cols);\n"
    "}\n"
    /* left indexing: the range of out (a copy of the target) from the
     * m x n source, or the scalar s (one cell) when y is unused */
    "__kernel void lix(long cols, long rl, long cl, long m, long n, __global const double *y, double s,\n"
    "                  int scalar, __global double *out)\n"
    "{\n"
    "    long k = get_global_id(0);\n"
    "    if (k >= m * n) return;\n"
    "    long i = k / n, j = k - i * n;\n"
    "    out[(rl + i) * cols + cl + j] = scalar ? s : y[k];\n"
    "}\n"
    /* left indexing over a CSR target x or source y: one work-item per
     * row of out, x's row (CSR: zeros, then its entries), then in the
     * range y's row (CSR: zeros, then its entries) or the scalar s */
    "__kernel void lix_rows(long rows, long cols, long rl, long cl, long m, long n, MAT(x), MAT(y), double s,\n"
    "                       int scalar, __global double *out)\n"
    "{\n"
    "    const long i = get_global_id(0);\n"
    "    if (i >= rows) return;\n"
    "    __global double *o = out + i * cols;\n"
    "    if (x_sp) {\n"
    "        for (long j = 0; j < cols; j++) o[j] = 0;\n"
    "        for (long q = x_rp[i]; q < x_rp[i + 1]; q++) o[x_ci[q]] = x[q];\n"
    "    } else for (long j = 0; j < cols; j++) o[j] = x[i * cols + j];\n"
    "    if (i < rl || i >= rl + m) return;\n"
    "    const long r = i - rl;\n"
    "    if (scalar) { o[cl] = s; return; }\n"
    "    if (y_sp) {\n"
    "        for (long j = 0; j < n; j++) o[cl + j] = 0;\n"
    "        for (long q = y_rp[r]; q < y_rp[r + 1]; q++) o[cl + y_ci[q]] = y[q];\n"
    "    } else for (long j = 0; j < n; j++) o[cl + j] = y[r * n + j];\n"
    "}\n"
    /* CLA decompression (docs/gpu.md, "Compressed inputs"): one group's
     * columns gc of the dense rows x cols out: mode 0 CONST (tuple 0),
     * 1 DDC1 (codes c1), 2 DDC2 (codes c2), 3 UNC (its dense rows x
     * ncols block u); unused buffers are passed as out */
    "__kernel void cla_group(long rows, long cols, int ncols, __global const int *gc,\n"
    "                        __global const double *dict, __global const uchar *c1,\n"
    "                        __global const ushort *c2, __global const double *u, int mode,\n"
    "                        __global double *out)\n"
    "{\n"
    "    long k = get_global_id(0);\n"
    "    if (k >= rows * ncols) return;\n"
    "    long i = k / ncols;\n"
    "    int j = (int)(k - i * ncols);\n"
    "    long t = mode == 1 ? (long)c1[i] : mode == 2 ? (long)c2[i] : 0;\n"
    "    out[i * cols + gc[j]] = mode == 3 ? u[k] : dict[t * ncols + j];\n"
    "}\n"
    /* a UNC group's CSR block u (rows x ncols): row i's entries into
     * the zeroed out at their group columns, one work-item per row */
    "__kernel void cla_unc_csr(long rows, long cols, __global const int *gc, __global const long *rp,\n"
    "                          __global const int *ci, __global const double *v, __global double *out)\n"
    "{\n"
    "    const long i = get_global_id(0);\n"
    "    if (i >= rows) return;\n"
    "    for (long q = rp[i]; q < rp[i + 1]; q++) out[i * cols + gc[ci[q]]] = v[q];\n"
    "}\n"
    /* OLE and RLE groups (matrix/cmb.h): tuple t's rows written with its
     * dictionary entry into the zeroed out. OLE (rle 0): one work-item
     * per (tuple, segment of 65535 rows), start[t * nseg + s] the
     * segment's count in data (-1: none), then its 16-bit offsets. RLE:
     * one per tuple (nseg 1), its (gap, length) pairs data[start[t] ..
     * start[t + 1]), each run starting gap rows after the previous
     * run's end. */
    "__kernel void cla_lists(long rows, long cols, int ncols, __global const int *gc,\n"
    "                        __global const double *dict, __global const ushort *data,\n"
    "                        __global const long *start, int ntup, long nseg, int rle,\n"
    "                        __global double *out)\n"
    "{\n"
    "    long k = get_global_id(0);\n"
    "    if (k >= (long)ntup * nseg) return;\n"
    "    long t = k / nseg, s = k - t * nseg, p = start[k];\n"
    "    __global const double *tp = dict + t * ncols;\n"
    "    if (!rle) {\n"
    "        if (p < 0) return;\n"
    "        long n = data[p++];\n"
    "        for (long q = 0; q < n; q++) {\n"
    "            long r = s * 65535 + data[p + q];\n"
    "            if (r < rows) for (int j = 0; j < ncols; j++) out[r * cols + gc[j]] = tp[j];\n"
    "        }\n"
    "        return;\n"
    "    }\n"
    "    long re = 0, end = start[k + 1];\n"
    "    for (; p + 1 < end; p += 2) {\n"
    "        long rs = re + data[p];\n"
    "        re = rs + data[p + 1];\n"
    "        for (long r = rs; r < re && r < rows; r++)\n"
    "            for (int j = 0; j < ncols; j++) out[r * cols + gc[j]] = tp[j];\n"
    "    }\n"
    "}\n"
    /* the device profile's probes (profile.c): an empty launch, a read
     * and a copy of n doubles (grid-stride) */
    "__kernel void probe_nop(__global double *a) { if (get_global_id(0) == 0x7fffffff) a[0] = 1; }\n"
    "__kernel void probe_rd(long n, __global const double *a, __global double *b)\n"
    "{\n"
    "    double s = 0;\n"
    "    for (long i = get_global_id(0); i < n; i += get_global_size(0)) s += a[i];\n"
    "    if (s == -1.25) b[get_global_id(0)] = s;\n"
    "}\n"
    "__kernel void probe_cp(long n, __global const double *a, __global double *b)\n"
    "{\n"
    "    for (long i = get_global_id(0); i < n; i += get_global_size(0)) b[i] = a[i];\n"
    "}\n";

/* Appends "case OP_x: return <cgen>;" for every row of one shape. */
static void add_case(StrBuf *b, int op, const char *cgen, const char *x, const char *y)
{
    char expr[512];
    snprintf(expr, sizeof expr, cgen, x, y);
    sb_printf(b, "    case %d: return %s;\n", op, expr);
}

char *gpu_cl_prelude(void) { return strdup(cl_prelude); }

char *gpu_cl_source(void)
{
    StrBuf b = {0};
    sb_puts(&b, cl_prelude);
    sb_puts(&b, "CG_INL double ew_un(int op, double x)\n{\n    switch (op) {\n");
#define UNARY(id, name, flags, tpl, type, cost, ref, cgen) add_case(&b, OP_##id, cgen, "x", "");
#include "../base/ops.def"
#undef UNARY
    sb_puts(&b, "    default: return NAN;\n    }\n}\n");
    sb_puts(&b, "CG_INL double ew_bin(int op, double a, double b)\n{\n    switch (op) {\n");
#define BINARY(id, name, flags, tpl, type, cost, ref, cgen) add_case(&b, OP_##id, cgen, "a", "b");
#include "../base/ops.def"
#undef BINARY
    sb_puts(&b, "    default: return NAN;\n    }\n}\n");
    sb_puts(&b, cl_kernels);
    if (b.oom) { free(b.s); return NULL; }
    return b.s;
}
