/* amulet.h: AMULET, matrix-multiplication-like where-loops (seed 003;
 * docs/amulet.md). Internal to codegen/: amulet.c builds the plan of a
 * where-loop at run time (body DAG with CSE, leaves and their index
 * patterns, recognition of seed 4.2) and runs the portable paths (the
 * vectorized evaluator and the scalar reference); amulet_gen.c generates
 * and drives the register-blocked kernel (seed 3, 4.3-4.6).
 *
 *   where (i in 1:M, j in 1:N, k in 1:K) { R[i,j] += body }
 */
#ifndef BRAID_AMULET_H
#define BRAID_AMULET_H

#include "cgint.h"
#include "../lang/where.h"

/* Body DAG nodes (DML semantics; CSE'd, inputs before consumers). */
typedef enum { AN_CONST, AN_LEAF, AN_UN, AN_BIN, AN_IFELSE } ANKind;
typedef struct ANode {
    ANKind kind;
    OpCode op;             /* AN_UN / AN_BIN */
    int a, b, c;           /* children (node indexes), -1 none */
    int leaf;              /* AN_LEAF: index into the plan's leaves */
    double v;              /* AN_CONST */
    unsigned dep;          /* loop variables the value depends on (bit v) */
} ANode;

/* A leaf: one variable read with one index pattern (A[i,k] and A[k,i] are
 * two leaves). */
typedef struct ALeaf {
    int input;             /* index into the where-loop's argument values */
    int idx[2];            /* loop variable of the row / column index, -1 */
    int nidx;              /* 0 scalar, 1 vector, 2 matrix */
    unsigned dep;          /* bits of the loop variables */
} ALeaf;

#define AM_MAXNODES 128
#define AM_MAXLEAVES 32

typedef struct AmPlan {
    const WhereLoop *w;
    int nvars;
    int tr, tc;            /* loop variables indexing R's rows / columns
                              (tc -1: a vector target R[v]) */
    ANode n[AM_MAXNODES];
    int nn;
    /* the results computed by this plan: one loop nest, one DAG (CSE
     * across the bodies), a root per result (seed's several outputs) */
    int nres;
    int root[WHERE_MAXRES];
    const WhereLoop *res[WHERE_MAXRES];  /* each result's statement */
    int rin[WHERE_MAXRES];     /* the argument holding its current value */
    ALeaf leaf[AM_MAXLEAVES];
    int nleaf;
    int kvar;              /* matrix-multiplication-like: the reduction
                              variable (seed 4.2), else -1 */
    int zleaf;             /* matrix-multiplication-like += whose body is 0
                              wherever this (i,k) leaf is 0 (for finite
                              other values, as braid's sparse kernels
                              assume): zero cells of it can be skipped;
                              -1 none */
    bool ok;               /* false: the body exceeded the limits */
} AmPlan;

/* The bound data of one execution: ranges, leaf addresses, R. */
typedef struct AmBind {
    int64_t n[WHERE_MAXVARS];  /* iterations of each loop variable */
    const double *base[AM_MAXLEAVES]; /* element (0,..,0) of each leaf */
    int64_t st[AM_MAXLEAVES][WHERE_MAXVARS]; /* strides per loop variable */
    double sval[AM_MAXLEAVES];/* scalar leaves: the value */
    double *r[WHERE_MAXRES];   /* each result at the first (row, col) of
                                  the ranges */
    int64_t rst[WHERE_MAXRES][WHERE_MAXVARS]; /* its strides per loop
                                  variable */
    int64_t from[WHERE_MAXVARS];/* first value of each loop variable */
    int64_t step[WHERE_MAXVARS];/* and the step between its values (> 0;
                                   strides include it) */
    const MB *sp;              /* the (i,k) operand kept sparse (CSR, not
                                  densified) for the evaluator's skipping
                                  of zero cells, else NULL */
    int spleaf;                /* its leaf, -1 none */
    const MB *spsrc;           /* the argument it comes from (sp is the
                                  CSR of t(spsrc) for a transposed read) */
    double spmax;              /* the largest magnitude of its values,
                                  NAN until scanned (or kept from an
                                  earlier call on the same block) */
    bool finite;               /* every value the body computes is finite
                                  (finite inputs, no operator that can
                                  make NaN or overflow): the masked forms
                                  (0 * x as 0), the SIMD min/max (which
                                  drop a NaN) and skipping zero cells of a
                                  sparse operand then agree with DML */
} AmBind;

/* The iteration of k (0..n) that reads column off (from k's first
 * value) of a sparse operand stepping by step, -1 when none does: a
 * stepped k reads the non-zeros on its step only. */
static inline int64_t am_k_of(int64_t off, int64_t step, int64_t n)
{
    if (off < 0 || off % step) return -1;
    return off / step < n ? off / step : -1;
}

/* Density below which a sparse (i,k) operand is kept sparse: the sparse
 * kernel (or the evaluator) runs over its non-zeros (work proportional
 * to nnz * N) instead of the dense kernel (M * K * N at a rate a few
 * times higher). The fusion planner's template prices it so too. */
#define AM_SPARSE 0.05

/* The threads of a block of `tiles` register tiles of mr x nr results,
 * kc deep (amulet_gen.c run_block): at most one per tile, and only as
 * many as have AM_TEAM_WORK (i,j,k) iterations each, about what forking
 * a team and its barriers cost; smaller blocks run on one thread (each
 * tile is computed by one thread in the same order either way, so the
 * results do not change). The planner prices the kernel with the same
 * count (amulet_tpl.c dense_compute). */
#define AM_TEAM_WORK 65536
static inline int am_team(int64_t tiles, int64_t kc, int mr, int nr, int threads)
{
    int64_t fit = tiles * kc * mr * nr / AM_TEAM_WORK;
    if (fit > tiles) fit = tiles;
    if (fit > threads) fit = threads;
    return fit < 1 ? 1 : (int)fit;
}

/* The most parts of a block's team schedule (am_parts). */
#define AM_MAXPARTS 64

/* The parts a team of nt threads cuts a block's nsl column panels into
 * (amulet_gen.c run_block). A block whose (k,j) panels overflow a core's
 * L2 (`over`): one part per thread, each a contiguous range of panels
 * its thread packs and runs over every tile of rows, so that a core's L2
 * holds its 1/nt of them (fewer panels than threads: one part per panel,
 * its tiles shared). A block that fits: one part, the threads taking
 * whole tiles of rows (each reads the block from its own L2 and each
 * (i,k) tile once; cut by columns, both threads read every (i,k) tile:
 * 2-thread tile CPU 1.02-1.22 of one thread's at kc 512, nc 192, against
 * 1.00-1.04 by tiles, at load 17-29). */
static inline int am_parts(int64_t nsl, int nt, bool over)
{
    if (!over) return 1;
    int64_t n = nsl < nt ? nsl : nt;
    if (n > AM_MAXPARTS) n = AM_MAXPARTS;
    return n < 1 ? 1 : (int)n;
}

/* The tile-major schedule of a small result (amulet_gen.c run_split): K
 * cut into this many contiguous chunks, each computed by one thread over
 * all of R's `tiles` register tiles into a private partial result, the
 * partials merged in chunk order. Used (> 1) where the tiles are few
 * (under 4 per thread, or too little work per tile for a team: am_team;
 * the tiles' schedule would idle threads or fork a team for every kc
 * block of K, each fork and barrier a scheduler's wait on a loaded
 * machine: 20 x 40 x 400000 ran 50x slower on 2 threads than on 1 at
 * load 13) and each
 * chunk has 2 AM_TEAM_WORK iterations (one team for all of K, so twice
 * what a block's team costs is plenty) and 64 values of k; the count
 * depends on the sizes and the thread count only, so the result does
 * too. The planner prices it so (amulet_tpl.c dense_compute). */
static inline int am_split(int64_t tiles, int64_t K, int mr, int nr, int threads)
{
    if (tiles >= 4 * threads && am_team(tiles, BR_MIN(K, 256), mr, nr, threads) >= threads) return 1;
    int64_t fit = tiles * K * mr * nr / (2 * AM_TEAM_WORK);
    fit = BR_MIN(fit, K / 64);
    fit = BR_MIN(fit, threads);
    return fit < 2 ? 1 : (int)fit;
}

/* Builds the plan of w (analysis only; no sizes) over the results
 * whose bits (in w's order) are set in sel: all of them share the loop
 * nest when their targets are indexed alike (am_alike). */
void am_plan(const WhereLoop *w, unsigned sel, AmPlan *p);
#define AM_ALL (~0u)
/* Are the targets of all of w's results indexed by the same loop
 * variables (so one loop nest computes them all)? */
bool am_alike(const WhereLoop *w);

/* The accumulation of one value into R (WA_*), DML semantics. */
double am_acc(WhereAcc acc, double r, double v);

/* The paths (amulet.c): the scalar reference (every iteration in order,
 * the specification) and the vectorized evaluator (the body over chunks
 * of the target's column variable; the path of loops that are not
 * matrix-multiplication-like or when no kernel can be compiled). */
void am_reference(const AmPlan *p, const AmBind *b);
/* skip: a leaf (p->zleaf) whose zero cells are skipped (a sparse A), or
 * -1; when it is b->spleaf, its non-zeros are read from b->sp's rows. */
int am_evaluate(const AmPlan *p, const AmBind *b, int skip, BrErr *e);

/* The generated kernel path (amulet_gen.c): 1 when it ran, 0 when the
 * loop is not for it (not matrix-multiplication-like, an operator the
 * kernel lacks, no compiler; the caller evaluates), -1 on error.
 * search_again: search the parameters even if some are remembered. */
int am_kernel_run(CgContext *c, const AmPlan *p, const AmBind *b, bool search_again, BrErr *e);
/* Parallel regions the generated kernel's dense path (amulet_gen.c
 * run_block) has opened since the start: one per call whose blocks have
 * a team (tests). */
int64_t am_regions(void);
/* The team's packing in the dense path (amulet_gen.c pack_share), for
 * tests: a hook each thread of a team block calls at the start (start
 * true) and the end of its share of the block's packing (me of a team
 * of tn, block b of the call in order; NULL: none, the default), and
 * the (k,j) panels and shared (i,k) tiles team thread t (< n; past 8: 0)
 * packed since the start. */
typedef void (*AmPackHook)(int me, int tn, int64_t b, bool start);
void am_pack_hook(AmPackHook h);
void am_pack_counts(int64_t *panels, int64_t *tiles, int n);
/* Vector arithmetic operations per (i,j,k) iteration of p's kernel at the
 * run-time SIMD level (*lanes doubles a vector), its values taken as
 * finite, and *pack_ops the scalar operations of its pack function per
 * (i,k) value and column block; -1 when p has no kernel. sparse: of the
 * sparse kernel instead (per non-zero of p->zleaf and column; no pack
 * function: *pack_ops 0; -1 when p has no sparse kernel), whose tile is
 * as wide as R's ncols columns fill (ncols <= 0: the widest). tile (may be
 * NULL): the register tile's rows and columns (mr, nr), which the kernel
 * computes whole at the edges of R. ports (NULL: every operation one
 * slot): the machine's (am_ports), the operations priced as slots of a
 * core with multiply, add and shared pipes (amulet_gen.c mix_slots), in
 * units of one vector FMA of dgemm. The fusion planner's AMULET template
 * (amulet_tpl.c) costs a candidate by them. */
double am_kernel_vops(const AmPlan *p, bool sparse, int64_t ncols, const double *ports, int *lanes, int *pack_ops,
                      int tile[2]);
/* am_kernel_vops out of memory (its working plan through br_calloc). */
#define AM_VOPS_OOM (-3.0)
/* The cells the finiteness checks of one call of p read (amulet.c
 * run_nest: the bounds of every leaf, the check after the loop, or
 * finiteness flags), for the fusion planner: ext[v] iterations of each
 * loop variable, nnz the non-zeros of the sparse leaf p->zleaf (< 0:
 * none kept sparse). */
double am_check_cells(const AmPlan *p, const int64_t *ext, double nnz);
/* The machine's vector ports for am_kernel_vops' price, measured by
 * register-only loops at the run-time SIMD level (about 2 ms):
 * ports[0] the rate of vector adds over vector multiplies, ports[1] the
 * rate of a 1:1 mix of them over multiplies alone (a core with
 * separate multiply and add pipes, AMD Zen 4/5: about 1 and 2; one pair
 * of ports for all, as 512-bit operations on Intel cores: 1 and 1);
 * both 1 without SIMD. */
void am_ports(double ports[2]);

#endif
