/* cla_rt.h: the interpreter's side of compressed linear algebra
 * (docs/cla.md): the one place where compressed blocks meet operators
 * that do not know them, and when values get compressed. */
#ifndef BRAID_CLA_RT_H
#define BRAID_CLA_RT_H

#include "interp.h"
#include "../io/io.h"

/* Does instruction in read a compressed block from regs? */
bool cla_rt_has_input(const Instr *in, const Value *regs);
/* Runs in (through run) with every compressed input that in's operator
 * does not handle compressed replaced by its decompressed block; regs
 * (nregs registers) are updated as run would update them. */
typedef int (*ClaRunFn)(Rt *rt, Frame *f, const Instr *in, Value *regs, BrErr *e);
int cla_rt_exec(Rt *rt, Frame *f, const Instr *in, Value *regs, int nregs, ClaRunFn run, BrErr *e);
/* After instruction k of c (frame f, registers regs): under
 * sysds.compressed.linalg=true, a matrix that read() or compress()
 * returned is compressed in place in its register; under false and auto,
 * compress()'s deferred result is when what the frame runs after it
 * repays it (docs/cla.md "When braid compresses"). */
int cla_rt_after(Rt *rt, Frame *f, const Code *c, int k, Value *regs, BrErr *e);
/* Is in a read() whose matrix the mode (true, auto) compresses when it
 * exceeds the local memory budget? Then it may read past the budget
 * (io_read_past_budget) and cla_rt_after checks the compressed block
 * against it (docs/cla.md "Larger than the budget"). Not under mpirun. */
bool cla_rt_read_past(const Rt *rt, const Instr *in);
/* Such a read of a binary matrix file (braid's or SystemDS's layout, not
 * already compressed) or a csv file whose matrix exceeds the budget, compressed block
 * of rows by block of rows as it is read (cla_compress_rows), so that
 * the read holds about the compressed size plus one block, never the
 * whole matrix (docs/cla.md "Compressed as it is read"). Returns 1 with
 * the compressed block in regs[in->out], 0 when it does not apply or the
 * plan says compression does not pay (the caller reads the whole matrix
 * and read_past decides), -1 with e set on an error. */
int cla_rt_read_stream(Rt *rt, const Instr *in, Value *regs, BrErr *e);
/* The compressed size of the matrix a read() of path (options ro; the
 * .mtd must give its rows and columns) would compress to, estimated at
 * compile time from a sample of the file (docs/cla.md "Estimated at
 * compile time"): csv, libsvm, text and mm (coordinate, general, cells in
 * row order) from CLA_EST_PARTS pieces of whole lines spread over the
 * file (the whole file when it is small), binary files (braid's layout,
 * not already compressed, and SystemDS's) from as many ranges of rows;
 * the sample's rows planned as compression plans them (cla_plan,
 * ClaPlanOpts.pop_rows: distinct values per column by Haas and Stokes'
 * estimator, the size of each encoding, greedy co-coding), forced
 * (force: true's incompressible columns in one UNC group) or not. false
 * (no estimate: the caller keeps its bound) when the file cannot be
 * sampled that way (no sizes, other formats or layouts, cells out of row
 * order, a parse error, too few rows). */
#define CLA_EST_PARTS 16
typedef struct ClaFileEst {
    double bytes;        /* estimated compressed bytes of the whole matrix */
    double raw;          /* its uncompressed bytes (sizes, and the .mtd's
                            non-zeros or the sample's share of them) */
    int groups;          /* planned column groups */
    int64_t rows;        /* rows sampled */
    int64_t read, total; /* bytes of the file read for it, bytes of the file */
} ClaFileEst;
bool cla_rt_est_file(const char *path, const IoReadOpts *ro, bool force, ClaFileEst *est);
/* Tests only: the sample of later estimates divided by div (1: the
 * default), so that small files are sampled in part. */
void cla_rt_test_est_div(int div);
/* A deferred compress(X) passed to a function: what the caller runs
 * after the call with the argument's block m, priced as the callee prices
 * its own uses (soft: a use that does not take the value compressed costs
 * a decompression; a read in a later loop counts the loop's iterations, as
 * a loop in the callee does). The callee's decisions about a value holding
 * m add it (docs/cla.md "When braid compresses"); next: the other
 * arguments, then the caller's own callers'. again: the call's runs after
 * this one in the caller's loops around it, with the same block (the
 * argument a variable those loops do not assign), which repeat the
 * callee's own uses and take its compressed copy (MB.cla_copy). */
typedef struct ClaAfter {
    const MB *m;
    double gain, loss, again;
    const struct ClaAfter *next;
} ClaAfter;
/* Before call instruction k of c in frame f (registers regs): the
 * caller's later uses of each argument that holds a deferred compress(X),
 * and the later runs of the call (again) for every uncompressed matrix
 * argument, one record each (of at most c->ins[k].nin, in a; distinct
 * blocks; an argument that is not deferred only where again > 0),
 * chained before f->cla_after; returns the chain's head (f->cla_after
 * when there is none). */
const ClaAfter *cla_rt_call_after(const Frame *f, const Code *c, int k, const Value *regs, ClaAfter *a);
/* Before a loop (while, for, parfor) b with iterations n (-1: unknown):
 * under true/auto, compresses the matrix variables the loop reads and
 * never writes (auto: when the estimated ratio pays, docs/cla.md). */
int cla_rt_loop_entry(Rt *rt, Frame *f, const PBlock *b, int64_t n);

#endif
