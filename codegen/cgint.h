/* cgint.h: internals of operator fusion (seed 000), shared by the files of
 * codegen/ and by nobody else.
 *
 *   memo.c     memo table: groups of partial fusion plans per HOP (3.1)
 *   explore.c  OFMC templates Cell/Row/Outer and the bottom-up exploration
 *              algorithm (3.2)
 *   select.c   plan selection: fuse_all, fuse_no_redundancy, the final
 *              choice of fused operators and multi-aggregates (4.1)
 *   cost.c     plan partitions, interesting points, the analytical cost
 *              model with cost vectors (4.2, 4.3)
 *   mpskip.c   MPSkipEnum with cost-based and structural pruning (4.4)
 *   cplan.c    CPlans: construction, CSE, canonical signature and hash
 *   cgen_c.c   C code generation by template expansion (prims.c: the
 *              prelude of scalar semantics and vector primitives)
 *   jit.c      compiling generated C with the system compiler, loading it
 *   cache.c    the plan cache (in memory) and the on-disk cache
 *   exec.c     running a fused operator: binding, skeletons, fallback
 *   codegen.c  entry points, statistics, explain
 */
#ifndef BRAID_CGINT_H
#define BRAID_CGINT_H

#include <pthread.h>
#include <stdio.h>

#include "codegen.h"
#include "../base/perturb.h"
#include "../kernels/spoof.h"
#include "../base/strbuf.h"
#include "../matrix/value.h"

/* ---- templates ---- */

/* T_AMULET: a product of elementwise operands as an AMULET where-loop
 * (amulet_tpl.c): closed entries at the product referencing the operands'
 * Cell entries, created in the cost-based policy only. */
typedef enum { T_CELL, T_ROW, T_MAGG, T_OUTER, T_AMULET, T__N } TplType;

/* Close status of a memo entry (seed 3.1). */
typedef enum { CS_OPEN_VALID, CS_OPEN_INVALID, CS_CLOSED_VALID, CS_CLOSED_INVALID } CloseType;

#define MEMO_MAXIN 3

/* A partial fusion plan: template type, per HOP input a reference to the
 * input's group (its hop id) or -1 (materialized), close status. */
typedef struct MEntry {
    TplType type;
    int ref[MEMO_MAXIN];
    int nin;
    CloseType closed;
} MEntry;

/* The group of one HOP. */
typedef struct MGroup {
    Hop *hop;
    MEntry *e;
    int n, cap;
} MGroup;

/* The memo table of one DAG, with the consumer structure of the DAG. */
typedef struct Memo {
    HopDag *d;
    int nid;            /* hop ids are < nid */
    MGroup **g;         /* by hop id; NULL: no fusion plans */
    Hop **hop;          /* by hop id: reachable hops, NULL otherwise */
    int *nuse;          /* consumers in the DAG (+1 for a DAG output) */
    bool *out;          /* hop is a DAG output (root or transient write) */
    Hop ***par;         /* consumers (parents) of each hop */
    int *npar;
    Hop **order;        /* reachable hops, inputs before consumers */
    int norder;
    char *visited;      /* exploration */
    bool amulet;        /* exploration creates AMULET entries */
    struct Point *spt;  /* stitch points decided by the cost-based */
    bool *sdo;          /*   selection (cg_apply_cut) and whether each */
    int nspt;           /*   stitches (select.c cg_stitch) */
} Memo;

Memo *memo_new(HopDag *d);
void memo_free(Memo *m);
MGroup *memo_group(Memo *m, const Hop *h);            /* NULL if none */
/* Adds an entry unless an equal one exists; returns it. */
MEntry *memo_add(Memo *m, Hop *h, const MEntry *e);
/* Removes entries for which drop(e) is true. */
void memo_filter(Memo *m, const Hop *h, bool (*drop)(const Memo *, const Hop *, const MEntry *, void *),
                 void *arg);
/* Removes every entry that fuses hop id into a consumer (and then the
 * entries left referencing a group with nothing they can fuse): the
 * hop's value is materialized for all its consumers. */
void memo_ban_fused(Memo *m, int id);
int memo_nrefs(const MEntry *e);
bool memo_has_type(const Memo *m, const Hop *h, TplType t, bool open_only);
/* Entries of group h usable by a consumer of template t (open entries of
 * a compatible type). */
bool memo_compatible(TplType consumer, TplType input);
void memo_print(const Memo *m, FILE *out);
const char *tpl_name(TplType t);

/* ---- exploration (explore.c) ---- */

/* Template conditions used by exploration, selection and CPlans. */
bool tpl_cell_op(const Hop *h);          /* fusable elementwise op */
bool tpl_agg_op(const Hop *h);           /* fusable unary aggregate */
bool tpl_outer_mm(const Hop *h);         /* outer-product-like U %*% t(V) */
bool tpl_row_mm(const Hop *h);           /* skinny X %*% V */
bool tpl_dot(const Hop *h);              /* t(x) %*% y over column vectors */
/* Fills the memo table of m (OFMC, seed algorithm 1). */
void cg_explore(Memo *m);

/* ---- selection (select.c, cost.c, mpskip.c) ---- */

/* A chosen fused operator: its root hop(s) and template. */
typedef struct FusedOp {
    TplType type;
    Hop *root;             /* MAgg: roots[0] */
    Hop **roots;           /* MAgg: several full aggregates */
    int nroots;
} FusedOp;

/* Per hop and template, the entry the selection keeps (index into the
 * group, -1 none). */
typedef struct Selection {
    int (*best)[T__N];     /* by hop id */
    FusedOp *ops;
    int nops, cap;
} Selection;

/* Machine constants of the cost model (bytes/s, flop/s): flops is the
 * elementwise rate, gemm dgemm's (unfused dense products, the blocked Row
 * kernels of narrow products), vecmat the generated code's row-wise
 * vector-matrix rate (Row products against wide side matrices, Outer dot
 * products). */
typedef struct CgMachine {
    double read_bw, write_bw, flops, gemm, vecmat;
    double cla_dec;        /* decompressing a compressed block's cell, in
                              cell operations (cla_machine.c dec_w; 0:
                              not asked, 2 assumed): cost.c */
    double am_share;       /* the AMULET kernel's plain matmul rate over
                              gemm (cg_amulet_share; 0: not known yet) */
    double am_ports[2];    /* the vector ports the kernel's operations are
                              priced by (am_ports; cg_amulet_share fills
                              them with am_share; 0: not known yet) */
} CgMachine;

/* Statistics of the enumeration of one DAG. */
typedef struct EnumStats {
    int64_t enumerated, evaluated, partitions, points;
    int64_t cached;        /* partitions whose selection came from the cache */
} EnumStats;

/* Chooses the plans of m by policy (prunes the memo table in place); c
 * (may be NULL) holds the selection cache of the cost-based policy. */
void cg_select(CgContext *c, Memo *m, CgPolicy policy, const CgMachine *mc, EnumStats *es);
/* Fused operators to build from a pruned memo table (caller frees with
 * sel_free). */
Selection *cg_choose_ops(Memo *m);
/* An entry lookup as sel_best's: the selection's, or a candidate plan's
 * (the cost model's entries under its current cut). */
typedef MEntry *(*CgBestFn)(const void *arg, const Hop *h, int consumer);
/* The roots of the MAgg operator select.c forms with the Cell full
 * aggregate h among them (cg_choose_ops' walk and merge under the entries
 * of best), h included, at most max; 0 when h would be no MAgg root. */
int cg_magg_partners(const Memo *m, CgBestFn best, const void *barg, const Hop *h, const Hop **roots, int max);
void sel_free(Selection *s);
/* Best entry of h's group usable by a consumer of template `consumer`
 * (T__N: any, as a root); NULL if none. */
MEntry *sel_best(const Memo *m, const Hop *h, int consumer);
bool sel_root_valid(const MEntry *e);

/* Is entry a better than b for a consumer of template `consumer`? */
bool sel_better(const MEntry *a, const MEntry *b, int consumer);
/* sel_better with the memo: on equal references, a Row entry reaching a
 * narrow product through open Row entries (those ok() accepts; all when
 * ok is NULL) beats a Cell entry. */
typedef bool (*SelEntryOk)(const void *arg, const Hop *h, const MEntry *e);
bool sel_better_at(const Memo *m, const Hop *h, const MEntry *a, const MEntry *b, int consumer, SelEntryOk ok,
                   const void *arg);

/* Cost-based selection (cost.c / mpskip.c). The chosen assignment of each
 * plan partition is cached in c (when not NULL) under the partition's
 * structure and coarse sizes, so recompiling the same DAG skips
 * MPSkipEnum. */
void cg_select_cost(CgContext *c, Memo *m, const CgMachine *mc, EnumStats *es);
/* The explorer's selection (fxselect.c): prunes m per partition. */
void cg_select_fx(Memo *m, const CgMachine *mc, EnumStats *es);
/* The selection cache (mpskip.c); freed with the context. */
typedef struct SelCache SelCache;
void selcache_free(SelCache *s);
/* Machine constants: measured once, cached in the cache directory
 * (cost.c describes the file and when it is measured again). */
void cg_machine(const char *cachedir, const char *prebuilt, CgMachine *mc);
/* How cg_machine_with measures: measure fills mc and returns whether the
 * machine was busy; crowded tells, cheaply, whether the run queue leaves
 * too little room for nt threads to measure now. cg_machine uses the
 * real ones; tests fake them. */
typedef struct CgProbe {
    bool (*measure)(void *arg, CgMachine *mc);
    bool (*crowded)(void *arg, int nt);
    void *arg;
} CgProbe;
void cg_machine_with(const char *cachedir, const char *prebuilt, const CgProbe *probe, CgMachine *mc);
/* The real probe: cost.c's measurement and /proc/stat's run queue. */
CgProbe cg_machine_probe(void);
/* Do mc's constants keep the ratios every machine has (and none is below
 * half of prebuilt's, when not NULL)? */
bool cg_machine_plausible(const CgMachine *mc, const CgMachine *prebuilt);
/* Raises the constants of mc that break those ratios to their bounds. */
void cg_machine_bound(CgMachine *mc);

/* An interesting point: the data dependency consumer c -> input h. A
 * stitch point (docs/codegen.md, "CPU stitching"): h is a row vector,
 * an expression of column aggregates of a matrix the partition reads,
 * that c reads unfused; materialized (true) it is its own operator(s),
 * false the operator covering c computes it inside (stitches it). */
typedef struct Point { int c, h; bool stitch; } Point;

/* A plan partition (seed 4.2). */
typedef struct Part {
    int *hops; int nh;     /* member hop ids */
    char *in;              /* by hop id: member */
    int *roots; int nroots;
    int *inputs; int ninputs;
    Point *pts; int npts;  /* interesting points */
} Part;

Part *cg_partitions(const Memo *m, int *nparts);
void parts_free(Part *ps, int n);
/* Applies partition p's assignment best (and bans by hop id, or NULL) to
 * m: drops the entries fusing across a materialized point, then the
 * Outer entries left without their outer product (mpskip.c). */
void cg_apply_cut(Memo *m, const Part *p, const bool *best, const uint8_t *ban);

/* State of getPlanCost over one partition. */
typedef struct CostCtx {
    const Memo *m;
    const CgMachine *mc;
    const Part *p;
    const bool *cut;       /* per point: materialized */
    char *mat;             /* by hop id: costed as materialized */
    int *cover;            /* by hop id: stamp of the covering operator */
    int stamp;
    double static_cost;    /* read inputs + write roots */
    EnumStats *es;
    int *pt_first;         /* by hop id: first point with that consumer, -1 */
    int *pt_next;          /* by point: next point with the same consumer */
    const uint8_t *ban;    /* by hop id: templates (bits 1 << TplType) not
                              to use at that hop (NULL: none) */
    int *cand;             /* products inside Row/Outer operators of the
                              last costed plan: hop id * T__N + template */
    int ncand;
    int *zmark;            /* by hop id: zstamp of zero_over's answer */
    char *zval;            /* by hop id: that answer */
    int zstamp;
    int *bmark;            /* by hop id * (T__N + 1) + consumer: bstamp of */
    MEntry **bval;         /*   best_ok's answer, that answer (one plan's */
    int bstamp;            /*   costing: cut and ban fixed) */
    double spent, bound;   /* the plan's operator costs so far, and the
                              cost at which its costing stops */
    void *rgroups;         /* cost.c: groups of Row operators that run as
                              one multi-output operator (this plan) */
    int nrgroups;
    void *agroups;         /* cost.c: groups of Cell full aggregates that
                              run as one MAgg operator (this plan) */
    int nagroups;
    int plan_stamp;        /* stamp before this plan's first operator */
    int *rmark, rstamp;    /* by hop id: dependency walks */
} CostCtx;

int cost_init(CostCtx *x, const Memo *m, const CgMachine *mc, const Part *p, EnumStats *es);
void cost_free(CostCtx *x);
double cg_plan_cost(CostCtx *x, const bool *cut, double bound);
/* MPSkipEnum over all of x's partition: its best assignment into best,
 * and its cost (INFINITY when none was costed). */
double cg_mpskip_assign(CostCtx *x, bool *best, EnumStats *es);
double cg_lower_bound(const CostCtx *x, const bool *cut);
/* Does e reference an input whose entries usable by e are all banned? */
bool cg_dead_ref(const Memo *m, const uint8_t *ban, const MEntry *e);

/* The machine constants of c, measured (or read from the cache
 * directory) on first use. */
void cg_machine_ctx(CgContext *c, CgMachine *mc);

/* The AMULET template (amulet_tpl.c). am_tpl_mode: the run's
 * sysds.amulet.fuse (cg_set_amulet_mode), else BRAID_AMULET_FUSE
 * ("cost", "0" off, "force": every candidate costs nothing).
 * am_tpl_candidate: can product h hold AMULET entries (exploration);
 * am_tpl_operand: may they reference its input i. A fused region is
 * described by fused(arg, h, root, i): is input i of h (root: the
 * product, else an operator inside an operand) fused into the loop.
 * am_tpl_compute: the loop's compute seconds (kernel plus pack
 * function, mc->am_share of dgemm's vector rate), INFINITY when the
 * region has no kernel. cg_amulet_realize: makes the chosen product h
 * the H_WHERE hop of its loop (after selection). cg_amulet_share: fills
 * mc->am_share (pinned, cached per machine, or measured once). */
typedef bool (*AmFusedFn)(const void *arg, const Hop *h, bool root, int i);
const char *am_tpl_mode(void);
bool am_tpl_candidate(const Hop *h);
bool am_tpl_operand(const Hop *h, int i);
/* Is matrix h estimated sparse (the template's sparse-operand rules)? */
bool am_tpl_sparse(const Hop *h);
double am_tpl_compute(const Hop *h, AmFusedFn fused, const void *arg, const CgMachine *mc);
bool cg_amulet_realize(CgContext *c, HopDag *d, const Memo *m, Hop *h);
void cg_amulet_share(CgContext *c, CgMachine *mc);

/* ---- CPlans (cplan.c) ---- */

/* CN_SLICE: columns lo..hi (1-based, a[1] and a[2], scalar inputs) of
 * a[0], X[, lo:hi] fused (seed 000 Fig. 3c). Row: of the row vector a[0];
 * its length and offset are L[vlen] and L[vlen + 1], set per call from
 * the bounds (exec.c) after the inputs' L entries. Cell: a[0] is the
 * input X itself, read in place at the slice's columns (CInput.slice). */
typedef enum { CN_IN, CN_UN, CN_BIN, CN_TER, CN_AGG, CN_MM, CN_MMTL, CN_TRANS, CN_SLICE } CNKind;

/* Input modes relative to the fused operator's iteration space. */
typedef enum {
    IM_SCALAR,   /* a scalar argument */
    IM_FULL,     /* a matrix of the iteration shape (Row: same rows) */
    IM_ROW,      /* a row vector broadcast over rows */
    IM_COL,      /* a column vector: one value per row */
    IM_MAT,      /* Row: right operand of a vector-matrix product (whole);
                    Outer: U (by row i) */
    IM_VROW,     /* Outer: V, U2 or V2 read by rows j (n x r) */
    IM_BT,       /* Outer: B of U %*% B (r x n), transposed at run time */
} InMode;

/* Value classes of nodes inside a template. */
typedef enum { VC_CONST, VC_CELL, VC_VEC } VClass;

typedef struct CNode {
    CNKind kind;
    OpCode op;
    AggDir dir;
    int a[3], na;          /* children (node indexes) */
    int in;                /* CN_IN: input index */
    VClass vc;             /* value class (Row: VC_CELL = scalar per row) */
    int vlen;              /* VC_VEC: input whose cols give the length */
    int64_t rows, cols;    /* compile-time shape (explain, modes) */
    bool scalar;           /* scalar-valued (data type) */
} CNode;

typedef struct CInput {
    Hop *hop;              /* construction only (NULL in cached plans) */
    bool scalar;
    InMode mode;
    int role;              /* construction role (cplan.c) */
    int64_t rows, cols;    /* compile-time shape */
    int slice;             /* Cell/MAgg: the CN_SLICE node that reads this
                              input X as X[, lo:hi] (its columns lo..hi at
                              X's stride, no copy); -1 */
    SpPre pre;             /* stitched (pre.n > 0; select.c cg_stitch):
                              an IM_ROW input that is the vector
                              expression pre of the column aggregates of
                              the matrix bound here (Row: the main input;
                              Cell/MAgg: a full input), computed by the
                              skeleton in phases over the same row blocks
                              (docs/codegen.md, "CPU stitching") */
} CInput;

/* A runtime condition of sparse safety: ops_binary(op, 0, s) == 0 (or
 * ops_binary(op, s, 0) when left) for scalar input `in`. */
typedef struct SafeCond { OpCode op; int in; bool left; } SafeCond;

/* Variants (seed Table 1). */
typedef enum {
    V_NO_AGG, V_ROW_AGG, V_COL_AGG, V_FULL_AGG,   /* Cell, Row */
    V_COL_T_AGG,                                  /* Row: t(X) %*% Q */
    V_MULTI,                                      /* MAgg; Row: several
                                                     aggregates of one pass */
    V_LEFT_MM, V_RIGHT_MM, V_RIGHT_T_MM,          /* Outer */
} Variant;

#define CG_MAXOUT 8
#define CG_MAXCOND 16
#define CG_MAXPRE 8       /* stitched inputs of one operator */

typedef struct CPlan {
    TplType tpl;
    Variant var;
    CNode *n;
    int nn, ncap;
    int out[CG_MAXOUT];    /* output (root) nodes; Cell/Row/Outer: 1 */
    int nout;
    CInput *in;
    int nin, icap;
    int main;              /* main input (sparse driver / rows), -1 */
    int space;             /* Cell/Outer: input or node giving the shape */
    int64_t srows, scols;  /* compile-time iteration space */
    bool sparse_safe;      /* Cell/MAgg/Outer: safe over main's zeros */
    bool zero_eval;        /* Cell/MAgg: safe where the plan evaluates to
                              0 with main 0 and the run's scalars
                              (log(X + 1)): conds_hold evaluates it */
    SafeCond cond[CG_MAXCOND];
    int ncond;
    bool main_sparse_ok;   /* Row: main row read sparse by every consumer */
    bool out_matrix;       /* a full aggregate returned as a 1x1 matrix */
    int ncovered;          /* HOPs covered */
    char *sig;             /* canonical signature (malloc) */
    uint64_t hash;
} CPlan;

/* Pricing the plan bytes a job of a distributed fused operator sends
 * (cgdist.c; docs/dist.md): cg_region_key is the key of the region of a
 * fused operator rooted at root (input i of a hop h, built under an
 * entry for consumer, T__N at the root, is fused when fused(arg, h,
 * consumer, i) returns the consumer type its input is built for, >= 0,
 * as cplan_build follows the entries): a hash of its structure, the same
 * for the same plan. cg_dist_plan_price: the bytes of the plan of the
 * candidate of region key (ops operations over nin inputs): none when an
 * operator of that region was placed before and the workers hold its
 * plan (a loop's recompiled operator, the same expression elsewhere),
 * that plan's packed size when they do not, else the estimate for its
 * size (cg_plan_bytes_est). cg_dist_root_price: what a fused operator
 * rooted at h (ops operations over nin inputs other than literals) is
 * priced for its plan where it runs on the ranks, under the entries of
 * best (the cost model's candidate, or the selection's for -stats, so
 * both price the same quantity), with its region's key in *key: a Cell
 * full aggregate select.c merges into a MAgg operator (cg_magg_partners)
 * its share of that operator's plan (by the roots' summed keys; unknown:
 * the estimate of the union of their regions); one root of a merged Row
 * group placed before and formed again (its other roots in the DAG with
 * the same regions) the group's share; otherwise its own plan, as
 * cg_dist_plan_price. cg_dist_note_plan: op (built from f over
 * m) is now placed on the ranks (rank 0 keeps its plan under its
 * region's key, a merged Row group's also under each root's); returns
 * the placement's id (0: not placed on the ranks) with price[0] the
 * bytes the cost model priced for its plan (its roots' cg_dist_root_price
 * summed; a merged Row group's whole plan), price[1] the plan's
 * estimated size (H_SPOOF's plan_place and plan_price: -stats counts
 * them when the placement's first job runs). */
typedef int (*KeyFusedFn)(const void *arg, const Hop *h, int consumer, int i);
uint64_t cg_region_key(const Hop *root, KeyFusedFn fused, const void *arg);
double cg_dist_plan_price(uint64_t key, int ops, int nin);
double cg_dist_root_price(const Memo *m, CgBestFn best, const void *barg, const Hop *h, int ops, int nin,
                          uint64_t *key);
struct CgOp;
int64_t cg_dist_note_plan(const Memo *m, const FusedOp *f, const struct CgOp *op, double price[2]);

/* Builds the CPlan of fused operator f (NULL if it cannot be built). */
CPlan *cplan_build(const Memo *m, const FusedOp *f);
void cplan_free(CPlan *p);
/* Deep copy without hop pointers (for the plan cache). */
CPlan *cplan_copy(const CPlan *p);
/* Human-readable form for -explain codegen. */
void cplan_print(const CPlan *p, FILE *out);
/* Number of elementwise/aggregate basic operations (not inputs). */
int cplan_nops(const CPlan *p);
bool cplan_zero_values(const CPlan *p, const double *sc, double *z);
/* Row: the compile-time width (2..16) node n's generated code is
 * specialized on (a vector-matrix product of the main row, the right
 * operand of a t(main) %*% (.) root, or the vector operand of a
 * multi-output plan's COL_T_AGG output over the main row), 0 if none. */
int cplan_row_kwidth(const CPlan *p, int n);
/* Row: has any node a specialized width (the blocked products of
 * cgen_c.c; their dense function has no loop without the main row)? */
bool cplan_row_blocked(const CPlan *p);
/* Row: the vector operand of t(.) %*% (.) node n whose other operand is
 * the main row (t(main) %*% q or t(q) %*% main), -1 if none. */
int cplan_row_tvec(const CPlan *p, int n);
/* Cell, not a full aggregate: are the plan's rows narrow (every full
 * input 2..15 columns at compile time, not a multiple of 4) with a row or
 * column vector input? Then cg_dense runs tiles of rows as one loop over
 * their cells instead of its per-row loop (cgen_c.c emit_cell_narrow);
 * part of the signature. */
bool cplan_cell_narrow(const CPlan *p);
/* Outer: the compile-time column count (2..128) of input in that the
 * generated loop takes as a literal (the rank of U and V, the side
 * matrix's width), part of the signature; 0 if none. */
int cplan_outer_lit(const CPlan *p, int in);
/* Row: the products of the main row with side matrices (CN_MM nodes whose
 * left operand is the main input and right one an IM_MAT input) in node
 * order into nodes, their count; 0 when there are more than
 * SPOOF_MAXPROD. *only: nothing else reads the main row (but these and
 * the roots of cplan_row_main_taggs). The generated dense function
 * reads these products from P[nin] when the skeleton passes them there
 * (kernels/spoof.h, SpoofRow.nprod). */
int cplan_row_main_prods(const CPlan *p, int *nodes, bool *only);
/* Row: the outputs t(main) %*% q and t(q) %*% main (COL_T_AGG, the main
 * input itself one operand), by output index into outs (at most
 * SPOOF_MAXOUT), whether the main input is the left operand into left
 * (NULL: not wanted); their count. The generated dense function writes
 * their q rows to P[nin + 1] instead of accumulating them when the
 * skeleton passes a buffer there (kernels/spoof.h, SpoofRow.tq_out). */
int cplan_row_main_taggs(const CPlan *p, int *outs, bool *left);
const char *variant_name(Variant v);
/* Row: the variant of output t (a multi-output plan, V_MULTI: that of
 * its root, each COL_AGG, FULL_AGG or COL_T_AGG; otherwise p->var). */
Variant cplan_row_ovar(const CPlan *p, int t);
/* Multi-output Row operators: merges Row operators of s that aggregate
 * over the rows of the same main input (COL_AGG, FULL_AGG, COL_T_AGG),
 * read the same inputs and do not depend on each other into one operator with several
 * outputs (V_MULTI), so that one pass over the main input computes them
 * all and their shared row work once. plans[i] is the CPlan of
 * s->ops[i] (NULL: none); merged operators get the merged plan, and the
 * merged-away ones leave s (and plans) compacted. */
void cg_merge_rows(const Memo *m, Selection *s, CPlan **plans);
/* An order-dependent hop (a product, a summing aggregate) the chosen
 * operators compute more than once (a fused operator recomputes it while
 * another computation is materialized, or two operators recompute it)
 * whose value reaches a comparison's operands (or another operation
 * that jumps with its operands' last bits: !, round, sign, ifelse's
 * condition, ...), or -1. Two computations of one product may differ in
 * the last bit (another summation order), and `D <= rowMins(D)` over
 * them is then a wrong 0/1, not a rounding error (cg_optimize_dag plans
 * again with the value materialized once). */
int cg_split_compare(const Memo *m, const Selection *s);
/* CPU stitching (docs/codegen.md, "CPU stitching"): a Row, Cell or MAgg
 * plan of s whose row-vector input is a vector expression of column
 * aggregates (colSums, colMeans, colMins, colMaxs, colVars, colSds; see
 * spoof.h SpPre) of its own matrix X (Row: the main input; Cell/MAgg: a
 * full input), read by nothing outside the plan, takes in the
 * expression (the input becomes a pre input over X): the skeleton
 * computes the aggregates over row blocks in phases, evaluates the
 * expression and runs the plan (Row: over the same row blocks in the
 * same parallel region). Returns the inputs stitched. */
int cg_stitch(const Memo *m, Selection *s, CPlan **plans);
/* May an operator rooted at (or consuming at) hop h stitch? Not with
 * BRAID_CG_STITCH=0, not under `-gpu force` (a stitched plan has no
 * device skeleton: it would run on the CPU while its unstitched
 * operators run on the device), not where h runs distributed on two or
 * more ranks (a stitched plan is never distributed: cgdist.c). Both the
 * stitch points MPSkipEnum and the explorer price (cost.c) and the
 * structural rule (cg_stitch) ask it. */
bool cg_stitch_allowed(const Hop *h);
/* Does hop h run distributed, on two or more ranks (EX_DIST under
 * mpirun)? */
bool cg_on_ranks(const Hop *h);
/* The stitchable expression at h (the vector of a Row or Cell input) into
 * e: column aggregates (spoof_pre.c k_pre_agg_ok) of one matrix *x (set
 * by the first), numeric literals, and elementwise unary and binary
 * operators over 1 x n vectors and scalars; its hops other than literals
 * into hs[*nh] (at most SPOOF_PREMAX). Returns h's node, -1 when h is no
 * such expression (select.c; cost.c prices what it accepts). */
int cg_pre_build(Hop *h, Hop **x, SpPre *e, Hop **hs, int *nh);
/* The passes over X of a stitchable expression's aggregates hs[0..nh)
 * (one, two with a variance: kernels/spoof_pre.c's phases; cost.c). */
int cg_pre_passes(Hop *const *hs, int nh);
/* Does p have stitched (pre) inputs? */
bool cplan_stitched(const CPlan *p);
/* Recomputes p's signature and hash (after its inputs changed). */
void cplan_resign(CPlan *p);

/* ---- code generation (cgen_c.c, prims.c) ---- */

/* C source of p's operator (malloc). Exports the symbols of jit.c. */
char *cgen_c(const CPlan *p);
extern const char cg_prelude[];
/* Shared by the C and OpenCL generators: the C expression of operator
 * node x over operand expressions a[] (ops.def's cgen column); is Row
 * node i an output aggregated over rows (COL_AGG, FULL_AGG, COL_T_AGG:
 * accumulated, never formed), an output that is no row vector (no
 * temporary row)? */
void cg_op_expr(char *buf, size_t n, const CNode *x, char a[3][48]);
bool cg_row_agg_root(const CPlan *p, int i);
bool cg_row_no_temp(const CPlan *p, int i);
/* OpenCL C of Row plan p's kernel cg_row (cgen_cl.c; malloc), NULL when
 * the generator does not take the plan; cgen_cl_row_tmp: the doubles of
 * one work-item's scratch for the bound lengths L. */
char *cgen_cl_row(const CPlan *p);
int64_t cgen_cl_row_tmp(const CPlan *p, const int64_t *L);
/* OpenCL C of Outer plan p's kernel (cgen_cl.c): a work-item per block
 * of W's rows over their non-zeros; NULL when not taken. */
char *cgen_cl_outer(const CPlan *p);
/* OpenCL C of Cell/MAgg plan p's kernel (cgen_cl.c): a work-item per
 * block of rows, over every cell or (sparse-safe plans, msp 2) the main
 * input's stored entries; NULL when the generator does not take p. */
char *cgen_cl_cell(const CPlan *p);
/* Blocked Row kernels, after cg_prelude in Row plans with a specialized
 * width (cplan_row_kwidth). */
extern const char cg_prelude_blk[];
/* The x86 vector primitives, right after cg_prelude in AMULET kernels at
 * the AVX2 and AVX-512 levels (no intrinsics header, prims.c). */
extern const char cg_prelude_vec[];

/* ---- compiled operators (jit.c, cache.c) ---- */

/* Function types exported by generated code (see kernels/spoof.h). */
#define CG_NFN 7
typedef struct CgOp {
    CPlan *plan;           /* owned (no hop pointers) */
    char *src;             /* generated C (owned) */
    void *dl;              /* dlopen handle */
    void *fn[CG_NFN];      /* dense, sparse, flat/col, tmp-size/full agg,
                              sparse full agg, then Cell's flat and dense
                              loops counting non-zeros */
    int ready;             /* 1 compiled, 0 pending, -1 failed (atomic) */
    bool queued;           /* handed to a compile batch (c->lock) */
    bool lazy;             /* compiled on its first CPU call, not when
                              planned (cg_optimize_dag: interpreted runs,
                              -gpu force; atomic) */
    char name[24];         /* spoofCell, spoofRA, spoofMA, spoofOP, amulet */
    int64_t uses;
    int64_t gpu_calls;     /* calls that asked the device's cost rule
                              (exec.c build_share; atomic) */
    bool amulet;           /* an AMULET kernel (amulet_gen.c): plan holds
                              only hash and sig; fn[0] = cg_amulet */
    bool am_tuned;         /* AMULET: parameters found (c->lock) for */
    int am_threads;        /*   this many threads and */
    int am_shape;          /*   this shape class (amulet_gen.c shape_class) */
    int64_t am_kc, am_nc;
    int am_pack;
    int64_t am_sp_nc;      /* AMULET: the sparse kernel's column block */
    int am_sp_threads;     /*   found (c->lock) for this many threads */
    int am_sp_shape;       /*   and shape class */
    int am_probed[2];      /* AMULET: the thread count and shape class */
    int am_probed_shape[2]; /*  whose parameters file (dense, sparse) was
                              looked for last (amulet_gen.c params_probe;
                              c->lock); 0 none */
    int64_t *am_key;       /* AMULET: the plan key it was generated for
                              (amulet_gen.c plan_key; c->lock), so a loop
                              run again finds it without generating its
                              source again; NULL none */
    size_t am_keylen;
    char *clsrc;           /* Row: the OpenCL kernel (cgen_cl.c), made on
                              first use under -gpu (c->lock) */
    int clstate;           /* 0 not yet, 1 clsrc made, -1 not taken */
} CgOp;

/* A where-loop of the AMULET template (amulet_tpl.c), by its body text. */
typedef struct AmLoop { const char *sig; const struct WhereLoop *w; } AmLoop;

struct CgContext {
    CgOptions opt;
    CgStats st;
    pthread_mutex_t lock;
    CgOp **ops;            /* every operator (plan cache when enabled) */
    int nops, cap;
    pthread_mutex_t jitlock;   /* one batch of compiles at a time */
    pthread_cond_t async_done; /* signalled when a background batch ends */
    int nasync;                /* operators queued or compiling in the
                                  background (c->lock) */
    bool stopping;             /* context being freed (atomic) */
    int stopfd;                /* wakes compile waiters at jit_stop (jit.c
                                  stop_fd; -1 none yet) */
    char cachedir[1024];
    bool have_dir;         /* cachedir usable for compiling */
    bool disk_ok;          /* cachedir is the persistent cache */
    bool tmpdir;           /* cachedir is a private temporary directory */
    bool dir_failed;
    char prebuilt[1024];   /* the prebuilt set of kernels (read only) */
    bool have_prebuilt, prebuilt_done;
    char cc[1024];         /* compiler path */
    char wd[1024];         /* `timeout`, the compiles' watchdog (jit.c
                              spawn_compile; "": none on PATH) */
    char ccid[1400];        /* compiler identity for cache keys */
    bool cc_ok;
    CgMachine mc;
    bool have_mc;
    ClaMachine cla;        /* cla_machine.c (lock) */
    bool have_cla;
    SelCache *selc;        /* cost-based selections by partition (c->lock) */
    Arena *am_arena;       /* AMULET template: its where-loops (c->lock), */
    AmLoop *am_loops;      /*   which instructions point to, live as long */
    int am_nloops, am_cap; /*   as the context */
    /* AMULET: the sparse operand of the last where-loop that read one
     * (amulet.c sp_kept, c->lock), kept for the next call on the same
     * block (a loop-invariant X read as X[k,i] in a script's loop): the
     * CSR of t(X) (NULL for an X[i,k] read) and the largest magnitude of
     * X's values (NAN: not yet scanned). am_spsrc holds a reference to
     * X, so its address is not reused and its values do not change (an
     * in-place update needs the only reference, kernels/apply.c). */
    struct MB *am_spsrc, *am_sptr;
    double am_spmax;
};

/* Looks up or compiles the operator of plan p (takes p). Returns NULL
 * when compilation failed (the caller keeps the unfused plan). */
CgOp *cg_op_get(CgContext *c, CPlan *p);
/* The AMULET kernel of source src (its cg_hash: hash), from the plan
 * cache or compiled now; NULL when out of memory. ready tells whether it
 * compiled. */
CgOp *cg_amulet_op(CgContext *c, const char *src, uint64_t hash);
/* Compiles several operators in parallel (those with ready == 0). */
void jit_compile_all(CgContext *c, CgOp **ops, int n);
bool jit_compile_async(CgContext *c, CgOp **ops, int n);
/* Marks c as being freed: compiles waiting for a compiler slot stop
 * waiting, running ones are abandoned (their shells still fill the disk
 * cache). */
void jit_stop(CgContext *c);
/* Loads the operators of ops[] that the disk cache holds, compiling none. */
void jit_load_cached(CgContext *c, CgOp **ops, int n);
int jit_prepare(CgContext *c);
void cache_dir_init(CgContext *c);
void cache_dir_cleanup(CgContext *c);
/* Removes a folder and the files in it (nothing nested). */
void cg_rmdir_flat(const char *dir);
bool cache_verify(const CgContext *c, const char *so, const char *cpath, const char *src, bool prebuilt);
struct stat;
bool cache_file_ok(const struct stat *st);
/* Outer plans: inputs U, V (or B) and the side input of left/right. */
void cg_outer_inputs(const CPlan *p, int *u, int *v, int *side);

/* ---- execution (exec.c) ---- */

/* h: the H_SPOOF hop (its inputs carry the plan's size estimates; may
 * be NULL). */
int cg_op_exec(CgContext *c, CgOp *op, const int64_t *est, Value *args, int nargs, Value *out, BrErr *e);
/* Is op's kernel ready for this call (compiled; under BRAID_PERTURB also
 * not drawn as pending)? cg_op_exec_as runs op fused only when ready says
 * so (and the kernel is there), else through the reference kernels. */
bool cg_op_ready(CgContext *c, CgOp *op);
int cg_op_exec_as(CgContext *c, CgOp *op, const int64_t *est, Value *args, int nargs, Value *out, BrErr *e,
                  bool ready);
/* The reference path: evaluates the CPlan with the unfused kernels. */
int cg_interpret(const CPlan *p, Value *args, int nargs, Value *out, BrErr *e);

/* ---- small helpers ---- */

uint64_t cg_hash_bytes(const void *p, size_t n, uint64_t seed);
/* The checksum `cksum` prints for the n bytes at p (POSIX CRC-32 and
 * length): how a detached compile's object is verified (jit.c so_sum). */
uint32_t cg_posix_cksum(const unsigned char *p, size_t n);
/* Growing string buffer. */

#endif
