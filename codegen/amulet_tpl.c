/* amulet_tpl.c: the AMULET template of the cost-based fusion planner
 * (docs/amulet.md, "AMULET inside cost-based fusion"; issue 16).
 *
 * A matrix product whose operands are elementwise expressions,
 *
 *   f(A, u, s) %*% g(B, v, t)      (or t(.) %*% . as OP_MATMULTL)
 *
 * is sum_k f(...)[i,k] * g(...)[k,j]: the elementwise parts act per
 * product term, so it is the where-loop
 *
 *   where (#i in 1:M, #j in 1:N, #k in 1:K) { R[#i,#j] += f(A[#i,#k], u[#i], s) * g(B[#k,#j], ...) }
 *
 * whose generated kernel computes f once per (i,k) per register tile and
 * never writes f(A) or g(B). The template is a memo entry type of the
 * fusion planner (T_AMULET, cgint.h): exploration (explore.c) gives such
 * a product closed AMULET entries referencing the open Cell entries of
 * one or both operands; the references are interesting points (template
 * switches, and materialization points where an operand has other
 * consumers), so MPSkipEnum (mpskip.c) weighs them with the partition's
 * other points: fusing an operand into the loop against materializing it
 * (for dgemm, or because other operators read it). Its greedy pass then
 * bans the template at the product where the Row plan or Cell + dgemm
 * costs less. The cost (cost.c, open_op) is cost.c's model (max(read,
 * compute) + write) with compute from am_tpl_compute: the kernel's
 * vector operations per iteration (am_kernel_vops, the accounting of
 * seed 4.3.2 over the kernel the run time will generate), priced by the
 * machine's vector ports (multiplies on the FMA pipes, the others on the
 * add pipes, all within the issue rate: am_ports, measured once per
 * machine; a mixed body costs up to half its operation count where
 * multiply and add pipes are separate) at the kernel's share of dgemm's
 * vector rate, measured per machine (cg_amulet_share).
 * After selection the chosen product becomes an H_WHERE hop over the
 * region's leaves (cg_amulet_realize; the operand hops it covered drop
 * out of the DAG unless other operators read them).
 *
 * Cost-based policy only (the others have no machine constants).
 * BRAID_AMULET_FUSE=0 disables it, =force makes every candidate free
 * (tests); a run's sysds.amulet.fuse (cg_set_amulet_mode) overrides it. The where-loops are interned in the context by their body
 * text, so instructions and recompiled DAGs may keep pointers to them. */
#include "amulet.h"
#include "../matrix/mb.h"
#include "../kernels/mm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Loop variables of the where-loop: i (rows of R), j (columns), k. */
enum { VI, VJ, VK };
static const char *const var_name[3] = {"#i", "#j", "#k"};

#define TPL_MAXOPS 64
/* The kernel's share of dgemm's vector rate where none was measured
 * (pinned machine constants without one: tests). */
#define AM_SHARE_DEFAULT 0.6
/* The largest measured share kept: the generated loop does not beat
 * OpenBLAS's dgemm on a plain product; a higher reading is load that hit
 * dgemm's timing (the 1.5 read on the shared machine made the planner
 * take the autoencoder's 256 x 100 x 100 products as where-loops, 2.6x
 * slower than codegen off there). Also applied to a stored reading. */
#define AM_SHARE_MAX 1.0

/* The analysis of one candidate product under a fused region. */
typedef struct Cand {
    AmFusedFn fused;       /* is input i of an operator in the loop */
    const void *arg;
    Hop *leaf[WHERE_MAXLEAVES];
    int nleaf;
    int nops;              /* elementwise operators covered */
    bool full[2];          /* the operand reads a matrix of its shape */
    Hop *sp;               /* the left side's leaf estimated sparse (below
                              AM_SPARSE), which the loop keeps sparse (the
                              sparse kernel over its non-zeros), or NULL */
    bool ok;
    StrBuf sig;            /* the body as text: the interning key */
} Cand;

static bool known(const Hop *h) { return h && h->dt == DT_MATRIX && h->rows > 0 && h->cols > 0; }

static bool num_scalar(const Hop *h)
{
    return h && h->dt == DT_SCALAR && h->vt != VT_STRING && h->vt != VT_UNKNOWN;
}

/* A matrix whose estimate says sparse: the unfused sparse kernels beat a
 * dense loop nest over it. */
static bool sparse_est(const Hop *h)
{
    return h->dt == DT_MATRIX && h->nnz >= 0 && (double)h->nnz < 0.4 * (double)h->rows * (double)h->cols;
}

/* Sparse enough that the loop keeps it sparse (amulet.c: a CSR block
 * below AM_SPARSE): its expected non-zeros, else -1. */
static double sparse_nnz(const Hop *h)
{
    double c = (double)h->rows * (double)h->cols;
    return h->dt == DT_MATRIX && h->nnz >= 0 && (double)h->nnz < AM_SPARSE * c ? (double)h->nnz : -1;
}

/* May leaf h of side `side` be read by the loop? A dense one, or the one
 * sparse leaf of the left side (the (i,k) operand the sparse kernel
 * steps over; whether the body is zero where it is, am_tpl_compute
 * checks). */
static bool leaf_ok(Cand *c, Hop *h, int side)
{
    if (!sparse_est(h)) return true;
    if (side != 0 || sparse_nnz(h) < 0 || (c->sp && c->sp != h)) return false;
    c->sp = h;
    return true;
}

/* The builtin a where body calls for unary operator op, or NULL. */
static const BuiltinInfo *unary_builtin(OpCode op)
{
    for (int b = 0; b < BI__COUNT; b++)
        if (builtin_info[b].op == op && op_info[op].kind == OK_UNARY) return &builtin_info[b];
    return NULL;
}

/* Operators a where body writes as an operator (EX_BINARY) or a call. */
static bool body_binary(OpCode op)
{
    switch (op) {
    case OP_PLUS: case OP_MINUS: case OP_MULT: case OP_DIV: case OP_POW: case OP_MOD: case OP_INTDIV:
    case OP_LT: case OP_LE: case OP_GT: case OP_GE: case OP_EQ: case OP_NE: case OP_AND: case OP_OR:
        return true;
    default: return false;
    }
}

/* Is h an elementwise operator the body can express, of the operand's
 * shape nr x nc or (broadcast inside it) a row or column vector of it? */
static bool region_op(const Hop *h, int64_t nr, int64_t nc)
{
    if (!known(h)) return false;
    if (!((h->rows == nr && h->cols == nc) || (h->rows == 1 && h->cols == nc && nc > 1) ||
          (h->cols == 1 && h->rows == nr && nr > 1)))
        return false;
    if (h->kind == H_UNARY) return h->nin == 1 && (h->op == OP_NEG || h->op == OP_NOT || unary_builtin(h->op));
    if (h->kind == H_BINARY) return h->nin == 2 && (body_binary(h->op) || h->op == OP_MIN || h->op == OP_MAX);
    return h->kind == H_TERNARY && h->op == OP_IFELSE && h->nin == 3 && !hop_lazy_ifelse(h);
}

static int leaf_id(Cand *c, Hop *h)
{
    for (int i = 0; i < c->nleaf; i++) if (c->leaf[i] == h) return i;
    if (c->nleaf == WHERE_MAXLEAVES) { c->ok = false; return 0; }
    c->leaf[c->nleaf] = h;
    return c->nleaf++;
}

/* Writes operand hop h (shape nr x nc, rows by loop variable rv, columns
 * by cv) into c->sig as a body expression; side 0: the left operand;
 * fused: h is computed in the loop (else it is a leaf). */
static void body_text(Cand *c, Hop *h, int side, int rv, int cv, int64_t nr, int64_t nc, bool fused)
{
    if (!c->ok) return;
    StrBuf *s = &c->sig;
    /* a Cell entry's X[, lo:hi] (explore.c) is no body operation: the
     * slice is a leaf the loop reads */
    if (fused && h->kind == H_RIX) fused = false;
    if (fused) {
        if (!region_op(h, nr, nc) || ++c->nops > TPL_MAXOPS) { c->ok = false; return; }
        sb_printf(s, "(%d", (int)h->op);
        for (int i = 0; i < h->nin; i++) {
            sb_puts(s, " ");
            body_text(c, h->in[i], side, rv, cv, nr, nc, c->fused(c->arg, h, false, i));
        }
        sb_puts(s, ")");
        return;
    }
    if (num_scalar(h)) {
        if (h->kind == H_LIT && (h->lit.kind == V_DOUBLE || h->lit.kind == V_INT || h->lit.kind == V_BOOL)) {
            double v = h->lit.kind == V_DOUBLE ? h->lit.d : h->lit.kind == V_INT ? (double)h->lit.i : h->lit.b;
            sb_printf(s, "%.17g", v);
        } else sb_printf(s, "L%d", leaf_id(c, h));
        return;
    }
    if (!known(h)) { c->ok = false; return; }
    Hop *t = h->kind == H_REORG && h->op == OP_TRANS && known(h->in[0]) ? h->in[0] : NULL;
    if (h->rows == nr && h->cols == nc) {
        /* the operand's shape: read in place, or its transpose's input
         * with the indices swapped (no transpose materialized; a sparse
         * one too: the loop reads its CSR transposed, O(nnz)) */
        if (t && leaf_ok(c, t, side)) sb_printf(s, "L%d[%d,%d]", leaf_id(c, t), cv, rv);
        else if (leaf_ok(c, h, side)) sb_printf(s, "L%d[%d,%d]", leaf_id(c, h), rv, cv);
        else c->ok = false;
        c->full[side] = true;
    } else if (sparse_est(h)) {
        c->ok = false;   /* a sparse vector: densified, the unfused kernels' */
    } else if (h->rows == 1 && h->cols == nc && nc > 1) {
        sb_printf(s, "L%d[%d]", leaf_id(c, h), cv);
    } else if (h->cols == 1 && h->rows == nr && nr > 1) {
        sb_printf(s, "L%d[%d]", leaf_id(c, h), rv);
    } else c->ok = false;
}

/* ---- the where-loop of a body text ---- */

typedef struct Parse {
    Arena *a;
    const char *p;
    Span sp;
    bool ok;
} Parse;

static Expr *new_expr(Parse *x, ExprKind k)
{
    Expr *e = arena_alloc(x->a, sizeof *e);
    if (!e) { x->ok = false; return NULL; }
    e->kind = k;
    e->span = x->sp;
    return e;
}

static Expr *ident(Parse *x, const char *name)
{
    Expr *e = new_expr(x, EX_IDENT);
    if (e) e->ident = name;
    return e;
}

static const char *leaf_name(Parse *x, int l)
{
    char buf[16];
    snprintf(buf, sizeof buf, "#L%d", l);
    char *n = arena_strdup(x->a, buf);
    if (!n) x->ok = false;
    return n;
}

static Expr *call(Parse *x, const BuiltinInfo *bi, Expr **args, int n)
{
    Expr *e = new_expr(x, EX_CALL);
    Arg *av = arena_alloc(x->a, (size_t)n * sizeof *av);
    if (!e || !av) { x->ok = false; return NULL; }
    for (int i = 0; i < n; i++) av[i] = (Arg){.value = args[i], .span = x->sp};
    e->call.name = bi->name;
    e->call.builtin = bi;
    e->call.args = av;
    e->call.nargs = n;
    return e;
}

/* Parses body_text's form back into an expression (the text is the
 * interning key; building from it makes the loop a function of the key). */
static Expr *parse(Parse *x)
{
    if (!x->ok) return NULL;
    char *end;
    if (*x->p == '(') {
        OpCode op = (OpCode)strtol(x->p + 1, &end, 10);
        x->p = end;
        Expr *a[3] = {0};
        int n = 0;
        while (*x->p == ' ' && n < 3) { x->p++; a[n++] = parse(x); }
        if (*x->p != ')' || !x->ok) { x->ok = false; return NULL; }
        x->p++;
        if (n == 3) return call(x, &builtin_info[BI_IFELSE], a, 3);
        if (n == 2 && (op == OP_MIN || op == OP_MAX)) return call(x, &builtin_info[op == OP_MIN ? BI_MIN : BI_MAX], a, 2);
        if (n == 2) {
            Expr *e = new_expr(x, EX_BINARY);
            if (e) { e->binary.op = op; e->binary.a = a[0]; e->binary.b = a[1]; }
            return e;
        }
        if (op == OP_NEG || op == OP_NOT) {
            Expr *e = new_expr(x, EX_UNARY);
            if (e) { e->unary.op = op; e->unary.a = a[0]; }
            return e;
        }
        const BuiltinInfo *bi = unary_builtin(op);
        if (!bi) { x->ok = false; return NULL; }
        return call(x, bi, a, 1);
    }
    if (*x->p == 'L') {
        int l = (int)strtol(x->p + 1, &end, 10);
        x->p = end;
        const char *name = leaf_name(x, l);
        if (*x->p != '[') return ident(x, name);
        Expr *e = new_expr(x, EX_INDEX);
        if (!e) return NULL;
        e->index.name = name;
        int r = (int)strtol(x->p + 1, &end, 10);
        x->p = end;
        e->index.row.lo = ident(x, var_name[r]);
        if (*x->p == ',') {
            int cc = (int)strtol(x->p + 1, &end, 10);
            x->p = end;
            e->index.col.lo = ident(x, var_name[cc]);
            e->index.has_col = true;
        }
        if (*x->p != ']') { x->ok = false; return NULL; }
        x->p++;
        return e;
    }
    Expr *e = new_expr(x, EX_DOUBLE);
    if (e) e->dval = strtod(x->p, &end);
    if (end == x->p) x->ok = false;
    x->p = end;
    return e;
}

/* The where-loop R[#i,#j] += <body> over body text sig, in arena a. */
static WhereLoop *make_loop(Arena *a, const char *sig, Span sp)
{
    Parse x = {.a = a, .p = sig, .sp = sp, .ok = true};
    WhereLoop *w = arena_alloc(a, sizeof *w);
    if (!w) return NULL;
    w->value = parse(&x);
    if (!x.ok || *x.p) return NULL;
    w->nvars = 3;
    for (int v = 0; v < 3; v++) {
        Expr *one = new_expr(&x, EX_INT);
        if (one) one->ival = 1;
        w->vars[v] = (WhereVar){var_name[v], one, one, sp, NULL};
    }
    w->target = (LValue){.name = "#R", .indexed = true, .has_col = true, .span = sp};
    w->target.row.lo = ident(&x, var_name[VI]);
    w->target.col.lo = ident(&x, var_name[VJ]);
    w->acc = WA_ADD;
    w->span = sp;
    /* R is the scalar 0 broadcast to M x N (lang/where.c's rank-one lift
     * does the same) */
    w->bcast = true;
    return x.ok ? w : NULL;
}

/* The interned where-loop of sig (c->lock held), made on first use. */
static const WhereLoop *intern(CgContext *c, const char *sig, Span sp)
{
    for (int i = 0; i < c->am_nloops; i++)
        if (!strcmp(c->am_loops[i].sig, sig)) return c->am_loops[i].w;
    if (!c->am_arena && !(c->am_arena = arena_new())) return NULL;
    if (c->am_nloops == c->am_cap) {
        int cap = c->am_cap ? 2 * c->am_cap : 8;
        void *n = realloc(c->am_loops, (size_t)cap * sizeof *c->am_loops);
        if (!n) return NULL;
        c->am_loops = n;
        c->am_cap = cap;
    }
    char *key = arena_strdup(c->am_arena, sig);
    WhereLoop *w = key ? make_loop(c->am_arena, key, sp) : NULL;
    if (!w) return NULL;
    c->am_loops[c->am_nloops++] = (AmLoop){key, w};
    return w;
}

const char *cg_amulet_loop_sig(CgContext *c, const WhereLoop *w)
{
    const char *sig = NULL;
    if (!c || !w) return NULL;
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < c->am_nloops && !sig; i++)
        if (c->am_loops[i].w == w) sig = c->am_loops[i].sig;   /* lives as long as c */
    pthread_mutex_unlock(&c->lock);
    return sig;
}

const WhereLoop *cg_amulet_loop(CgContext *c, const char *sig, Span sp)
{
    if (!c || !sig) return NULL;
    pthread_mutex_lock(&c->lock);
    /* the span's file name is the caller's (a message's bytes): the
     * loop keeps its own copy */
    if (sp.file && (c->am_arena || (c->am_arena = arena_new()))) sp.file = arena_strdup(c->am_arena, sp.file);
    const WhereLoop *w = intern(c, sig, sp);
    pthread_mutex_unlock(&c->lock);
    return w;
}

/* ---- the template's conditions ---- */

static int g_am_mode = -1;   /* the run's sysds.amulet.fuse; -1: not given */

void cg_set_amulet_mode(int mode) { __atomic_store_n(&g_am_mode, mode, __ATOMIC_RELAXED); }

const char *am_tpl_mode(void)
{
    static const char *const names[] = {"0", "cost", "force"};
    int k = __atomic_load_n(&g_am_mode, __ATOMIC_RELAXED);
    if (k >= 0 && k <= 2) return names[k];
    const char *m = getenv("BRAID_AMULET_FUSE");
    return m && *m ? m : "cost";
}

/* The sizes of product h: M x N over K (t(x) %*% y: x is K x M). */
static void mm_dims(const Hop *h, int64_t *M, int64_t *N, int64_t *K)
{
    *M = h->rows;
    *N = h->cols;
    *K = h->op == OP_MATMULTL ? h->in[0]->rows : h->in[0]->cols;
}

bool am_tpl_candidate(const Hop *h)
{
    if (h->kind != H_MATMUL || (h->op != OP_MATMUL && h->op != OP_MATMULTL) || h->nin != 2 || !known(h)) return false;
    if (!known(h->in[0]) || !known(h->in[1])) return false;
    int64_t M, N, K;
    mm_dims(h, &M, &N, &K);
    return h->in[1]->rows == K && M >= 2 && N >= 2 && K >= 2 && (double)M * N * K >= 64.0 * 64 * 64;
}

bool am_tpl_sparse(const Hop *h) { return sparse_est(h); }

bool am_tpl_operand(const Hop *h, int i)
{
    if (i > 1 || !am_tpl_candidate(h)) return false;
    const Hop *x = h->in[i];
    /* the left operand may be sparse: the loop then steps over the
     * non-zeros of its sparse leaf when its body is zero there */
    return region_op(x, x->rows, x->cols) && (i == 0 || !sparse_est(x));
}

/* The body text of product h under region `fused` into k (k->ok false
 * when the region is not a loop the template makes). */
static void body_of(const Hop *h, Cand *k)
{
    int64_t M, N, K;
    mm_dims(h, &M, &N, &K);
    bool tl = h->op == OP_MATMULTL;
    sb_printf(&k->sig, "(%d ", (int)OP_MULT);
    if (tl) body_text(k, h->in[0], 0, VK, VI, K, M, k->fused(k->arg, h, true, 0));
    else body_text(k, h->in[0], 0, VI, VK, M, K, k->fused(k->arg, h, true, 0));
    sb_puts(&k->sig, " ");
    body_text(k, h->in[1], 1, VK, VJ, K, N, k->fused(k->arg, h, true, 1));
    sb_puts(&k->sig, ")");
    if (!k->nops || !k->full[0] || !k->full[1] || !k->sig.s || k->sig.oom) k->ok = false;
}

/* ---- costs (seconds; cost.c's model) ---- */

/* Its column blocks: nc of at most this many columns (amulet_gen.c's
 * default), over which the pack function's values serve. */
#define AM_NC 1024.0

/* Is the sparse leaf of k the leaf whose zeros make p's body zero (so
 * the loop steps over its non-zeros)? */
static bool sparse_leaf_ok(const AmPlan *p, const WhereLoop *w, const Cand *k)
{
    const char *names[WHERE_MAXLEAVES];
    int nl = where_leaves(w, names, WHERE_MAXLEAVES);
    if (p->zleaf < 0) return false;
    int in = p->leaf[p->zleaf].input - (1 + 2 * w->nvars);
    return in >= 0 && in < nl && in < WHERE_MAXLEAVES && k->leaf[atoi(names[in] + 2)] == k->sp;
}

/* Seconds of the dense kernel over an M x N result, K deep, at per
 * seconds per (i,j,k) iteration with all threads busy. The kernel
 * computes whole mr x nr register tiles (the edges of R padded), and
 * its threads share a column block's tiles (amulet_gen.c run_block):
 * with fewer tiles than threads, or too little work per tile for a team
 * (am_team, at the default kc of 256), the others idle. k-means'
 * t(P) %*% X (M = 5, N = 10, K = 10^6; 12 x 16 tiles) is one tile on one
 * thread, 7.7x what M N K iterations at the threads' rate say. Where the
 * run time cuts K instead (am_split, the tile-major schedule of a small
 * result: the same sizes and thread count decide there), `chunks`
 * threads each run their range of K over all tiles, plus the partials'
 * passes at `cell` seconds per cell: each started at the accumulation's
 * identity and merged into R (2 per chunk, R's write). */
static double dense_compute(int64_t M, int64_t N, int64_t K, const int tile[2], double per, double cell)
{
    int th = br_threads();
    int64_t mt = (M + tile[0] - 1) / tile[0], nt = (BR_MIN(N, (int64_t)AM_NC) + tile[1] - 1) / tile[1];
    int64_t np = (N + tile[1] - 1) / tile[1] * tile[1];
    double one = (double)(mt * tile[0]) * np * K * per * th;   /* the padded tiles on one thread */
    int chunks = am_split(mt * (np / tile[1]), K, tile[0], tile[1], th);
    if (chunks > 1) return one / chunks + (2.0 * chunks + 1) * (double)M * N * cell;
    return one / am_team(BR_MAX(mt * nt, 1), BR_MIN(K, 256), tile[0], tile[1], th);
}

/* The kernel's vector operations at mc->am_share of dgemm's vector rate
 * (measured per machine: cg_amulet_share), plus the pack function's
 * scalar (i,k) values once per column block at the elementwise rate.
 * With a sparse left leaf (k.sp) the sparse kernel's vector operations
 * per non-zero and column, at the rate cost.c prices braid's sparse
 * product by (the elementwise rate: the same work, a row of the right
 * operand per non-zero): the loop then competes with Cell + the sparse
 * product by what it saves (writing and reading the operand, its
 * elementwise pass) against what it repeats (the operand's values per
 * column panel). Read transposed (X[k,i]), the sparse leaf adds the
 * CSR of t(X) the loop makes, priced as cost.c prices a transpose (its
 * non-zeros at the elementwise rate): what a call on a new X runs; a
 * script's loop over the same X makes it once (amulet.c sp_kept), which
 * this price of one call does not see. A sparse leaf whose zeros do not
 * make the body zero is densified by the loop: infinite, left to the
 * unfused kernels.
 * Out of memory (the arena, the plan, or am_kernel_vops' AM_VOPS_OOM)
 * the candidate is priced infinite: the planner has no error path, and
 * the unfused operators it keeps compute the same values.
 * A sparse candidate adds its per-call finiteness checks
 * (am_check_cells) at the memory rate.
 * Reading the leaves and writing R are cost.c's (the operator's inputs
 * and output). */
double am_tpl_compute(const Hop *h, AmFusedFn fused, const void *arg, const CgMachine *mc)
{
    Cand k = {.fused = fused, .arg = arg, .ok = true};
    body_of(h, &k);
    double t = INFINITY;
    Arena *tmp = k.ok ? arena_new() : NULL;
    WhereLoop *probe = tmp ? make_loop(tmp, k.sig.s, h->span) : NULL;
    AmPlan *p = probe ? br_malloc(sizeof *p) : NULL;
    if (p) {
        am_plan(probe, AM_ALL, p);
        int lanes = 1, pack_ops = 0, tile[2] = {1, 1};
        bool sp = k.sp != NULL;
        /* the ports weigh vector operations against dgemm's FMA slots
         * (the dense price); the sparse price is at the elementwise rate,
         * as cost.c prices the unfused sparse product, without a port
         * model: weighing it made MLogreg's t(X) %*% (P * W) over a 1%
         * sparse X a where-loop 6x slower than the unfused plan */
        const double *ports = !sp && mc->am_ports[0] > 0 ? mc->am_ports : NULL;
        int64_t M, N, K;
        mm_dims(h, &M, &N, &K);
        double vops =
            sp && !sparse_leaf_ok(p, probe, &k) ? -1 : am_kernel_vops(p, sp, N, ports, &lanes, &pack_ops, tile);
        double share = mc->am_share > 0 ? mc->am_share : AM_SHARE_DEFAULT;
        if (vops > 0 && sp)
            /* the columns the tile computes: R's, padded to its width */
            t = !strcmp(am_tpl_mode(), "force")
                    ? 0
                    : (sparse_nnz(k.sp) * (double)((N + tile[1] - 1) / tile[1] * tile[1]) * vops * 2 * lanes +
                       (p->leaf[p->zleaf].idx[0] == p->kvar ? sparse_nnz(k.sp) : 0)) /
                          mc->flops;
        else if (vops > 0)
            t = !strcmp(am_tpl_mode(), "force")
                    ? 0
                    : dense_compute(M, N, K, tile, vops * 2 * lanes / (mc->gemm * share), 1 / mc->flops) +
                          (double)M * K * ceil((double)N / AM_NC) * pack_ops / mc->flops;
        /* the loop's finiteness checks of every call, a second read of
         * the cells they scan (am_check_cells): the sparse loop's (the
         * bounds of G in X[k,i] * (G[k,j] * s), O(KN) against the
         * loop's O(nnz N)), and the dense loop's bounds of every leaf
         * where the body has masks, min or max (body_finite, O(MK + KN)
         * against O(MNK): they decide where memory is slow against the
         * arithmetic, or the product small) */
        if (vops > 0 && strcmp(am_tpl_mode(), "force") && p->tr >= 0 && p->kvar >= 0) {
            int64_t ext[WHERE_MAXVARS] = {0};
            ext[p->tr] = M;
            ext[p->kvar] = K;
            if (p->tc >= 0) ext[p->tc] = N;
            t += am_check_cells(p, ext, sp ? sparse_nnz(k.sp) : -1) * (double)sizeof(double) / mc->read_bw;
        }
    }
    free(p);
    arena_free(tmp);
    free(k.sig.s);
    return t;
}

/* ---- the chosen loops ---- */

/* Replaces product h by the H_WHERE hop of loop w over the leaves. */
static bool replace(HopDag *d, Hop *h, const WhereLoop *w, const Cand *k, int64_t M, int64_t N, int64_t K)
{
    const char *names[WHERE_MAXLEAVES];
    int nl = where_leaves(w, names, WHERE_MAXLEAVES);
    if (nl != k->nleaf) return false;
    Hop **in = arena_alloc(d->arena, (size_t)(7 + nl) * sizeof *in);
    if (!in) return false;
    int64_t ext[3] = {M, N, K};
    in[0] = hop_lit(d, val_double(0), h->span);
    for (int v = 0; v < 3; v++) {
        in[1 + 2 * v] = hop_lit(d, val_int(1), h->span);
        in[2 + 2 * v] = hop_lit(d, val_int(ext[v]), h->span);
    }
    for (int i = 0; i < nl; i++) in[7 + i] = k->leaf[atoi(names[i] + 2)];
    for (int i = 0; i < 7 + nl; i++) if (!in[i]) return false;
    h->kind = H_WHERE;
    h->where = w;
    h->in = in;
    h->nin = 7 + nl;
    hop_infer(h);
    /* R broadcast from the scalar 0: the M x N result */
    h->rows = M;
    h->cols = N;
    h->nnz = -1;
    h->mem = h->memlb = mb_est_dense(M, N);
    return true;
}

/* The selected region (select.c's walk): the product's AMULET entry,
 * then the Cell entries it references. */
static bool sel_fused(const void *arg, const Hop *h, bool root, int i)
{
    const Memo *m = arg;
    MEntry *e = sel_best(m, h, root ? T__N : T_AMULET);
    return e && i < e->nin && e->ref[i] >= 0 && h->in[i] && sel_best(m, h->in[i], e->type);
}

bool cg_amulet_realize(CgContext *c, HopDag *d, const Memo *m, Hop *h)
{
    Cand k = {.fused = sel_fused, .arg = m, .ok = true};
    body_of(h, &k);
    bool r = false;
    int64_t M, N, K;
    mm_dims(h, &M, &N, &K);
    if (k.ok) {
        pthread_mutex_lock(&c->lock);
        const WhereLoop *w = intern(c, k.sig.s, h->span);
        pthread_mutex_unlock(&c->lock);
        if (c->opt.explain)
            fprintf(c->opt.explain, "AMULET where-loop at hop %d (%lld x %lld x %lld, %d operators): %s\n", h->id,
                    (long long)M, (long long)N, (long long)K, k.nops, k.sig.s);
        r = w && replace(d, h, w, &k, M, N, K);
    }
    if (r) __atomic_add_fetch(&c->st.amulet, 1, __ATOMIC_RELAXED);
    free(k.sig.s);
    return r;
}

/* ---- the kernel's share of dgemm's rate, per machine ---- */

/* Seconds of the best of `reps` runs of plain matmul n x n x n: as the
 * where-loop (the generated kernel, its parameters searched on the first
 * run) or as dgemm (k_matmul). */
static double time_matmul(CgContext *c, const WhereLoop *w, MB *a, MB *b, int reps)
{
    double best = INFINITY;
    for (int r = 0; r < reps; r++) {
        BrErr e = {0};
        int64_t t0 = br_now_ns();
        bool ok;
        if (w) {
            int64_t n = a->rows;
            Value args[9] = {val_double(0), val_int(1), val_int(n), val_int(1), val_int(n), val_int(1), val_int(n),
                             val_matrix(a), val_matrix(b)};
            Value out = val_none();
            ok = cg_where_exec(c, w, args, 9, false, &out, &e) == 0;
            val_release(&out);
        } else {
            MB *p = k_matmul(a, b, &e);
            ok = p != NULL;
            mb_release(p);
        }
        double t = (double)(br_now_ns() - t0) / 1e9;
        br_err_clear(&e);
        if (!ok) return INFINITY;
        if (r) best = fmin(best, t);   /* the first compiles, searches, warms up */
    }
    return best;
}

/* Measures the kernel's plain matmul against dgemm at 384^3 (alternated,
 * best of 5 each after a warm-up: about 0.1 s plus one kernel compile). */
static double measure_share(CgContext *c)
{
    BrErr e = {0};
    const int64_t n = 384;
    MB *a = mb_dense_uninit(n, n, &e), *b = mb_dense_uninit(n, n, &e);
    double share = 0;
    char sig[64];
    snprintf(sig, sizeof sig, "(%d L0[%d,%d] L1[%d,%d])", (int)OP_MULT, VI, VK, VK, VJ);
    pthread_mutex_lock(&c->lock);
    const WhereLoop *w = intern(c, sig, (Span){0});
    pthread_mutex_unlock(&c->lock);
    if (a && b && w) {
        for (int64_t i = 0; i < n * n; i++) { a->d[i] = (double)(i % 7) * 0.25; b->d[i] = (double)(i % 5) * 0.5; }
        a->nnz = b->nnz = n * n;
        double tk = INFINITY, tg = INFINITY;
        for (int round = 0; round < 2; round++) {
            tk = fmin(tk, time_matmul(c, w, a, b, 3));
            tg = fmin(tg, time_matmul(c, NULL, a, b, 3));
        }
        if (tk < INFINITY && tg < INFINITY && tk > 0) share = fmin(fmax(tg / tk, 0.05), AM_SHARE_MAX);
    }
    mb_release(a);
    mb_release(b);
    br_err_clear(&e);
    return share;
}

/* Writes the n values to path (a plan cache file) through a temporary
 * file renamed over it, so concurrent processes never read a partial one;
 * a failure leaves the file as it was. */
static void store_values(const char *path, const double *v, int n)
{
    char tmp[1300];
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) return;
    for (int i = 0; i < n; i++) fprintf(f, i ? " %.4g" : "%.4g", v[i]);
    fputc('\n', f);
    fclose(f);
    if (rename(tmp, path)) remove(tmp);
}

/* The machine's vector ports (am_ports) into mc->am_ports: pinned by
 * BRAID_AMULET_PORTS ("adds mixed": tests), else 1 1 (every operation
 * one slot) under pinned machine constants (BRAID_CG_MACHINE), else the
 * plan cache directory's reading, else measured once and stored there. */
static void amulet_ports(CgContext *c, CgMachine *mc)
{
    double v[2] = {0, 0};
    const char *pin = getenv("BRAID_AMULET_PORTS");
    if (pin && sscanf(pin, "%lf %lf", &v[0], &v[1]) != 2) v[0] = v[1] = 0;
    if (!(v[0] > 0 && v[1] > 0) && getenv("BRAID_CG_MACHINE")) v[0] = v[1] = 1;
    char path[1200] = "";
    if (!(v[0] > 0 && v[1] > 0) && c->disk_ok) {
        snprintf(path, sizeof path, "%s/amulet-ports.txt", c->cachedir);
        FILE *f = fopen(path, "r");
        if (f) {
            if (fscanf(f, "%lf %lf", &v[0], &v[1]) != 2) v[0] = v[1] = 0;
            fclose(f);
        }
        if (!(v[0] > 0 && v[1] > 0)) {
            am_ports(v);
            store_values(path, v, 2);
        }
    }
    if (!(v[0] > 0 && v[1] > 0)) am_ports(v);
    mc->am_ports[0] = v[0];
    mc->am_ports[1] = v[1];
}

/* The share stored in `path` (0: none or unreadable), at most AM_SHARE_MAX. */
static double read_share(const char *path)
{
    double share = 0;
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    if (fscanf(f, "%lf", &share) != 1 || !(share > 0)) share = 0;
    fclose(f);
    return fmin(share, AM_SHARE_MAX);
}

void cg_amulet_share(CgContext *c, CgMachine *mc)
{
    if (!(mc->am_ports[0] > 0)) {
        pthread_mutex_lock(&c->lock);
        mc->am_ports[0] = c->mc.am_ports[0];
        mc->am_ports[1] = c->mc.am_ports[1];
        pthread_mutex_unlock(&c->lock);
        if (!(mc->am_ports[0] > 0)) {
            amulet_ports(c, mc);
            pthread_mutex_lock(&c->lock);
            c->mc.am_ports[0] = mc->am_ports[0];
            c->mc.am_ports[1] = mc->am_ports[1];
            pthread_mutex_unlock(&c->lock);
        }
    }
    if (mc->am_share > 0) return;
    pthread_mutex_lock(&c->lock);
    double have = c->mc.am_share;
    pthread_mutex_unlock(&c->lock);
    if (have > 0) { mc->am_share = have; return; }
    /* pinned constants (tests): BRAID_CG_MACHINE's sixth value, else the
     * fixed default, so plans do not depend on a measurement */
    const char *pin = getenv("BRAID_CG_MACHINE");
    double v[6];
    int k = pin ? sscanf(pin, "%lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) : 0;
    double share = k == 6 && v[5] > 0 ? v[5] : k == 5 ? AM_SHARE_DEFAULT : 0;
    char path[1200] = "";
    if (!share && c->disk_ok) {
        snprintf(path, sizeof path, "%s/amulet-share-%d.txt", c->cachedir, br_threads());
        share = read_share(path);
        /* a cold cache measures nothing on the critical path (about 0.5 s
         * with the kernel's load): the prebuilt set's share, measured on
         * this machine when the set was built (its keys name the CPU),
         * stands in while the user's cache has none, as its machine
         * constants do (cost.c cg_machine); nothing is written */
        if (!share && c->have_prebuilt && access(path, F_OK) != 0) {
            char pre[1200];
            snprintf(pre, sizeof pre, "%s/amulet-share-%d.txt", c->prebuilt, br_threads());
            share = read_share(pre);
        }
    }
    /* BRAID_AMULET=ref or eval (tests) would time another path */
    const char *path_mode = getenv("BRAID_AMULET");
    bool kernel_path = !path_mode || !*path_mode || !strcmp(path_mode, "auto") || !strcmp(path_mode, "kernel");
    if (!share && kernel_path && strcmp(am_tpl_mode(), "0")) {
        share = measure_share(c);
        if (share > 0 && path[0]) store_values(path, &share, 1);
    }
    if (!(share > 0)) share = AM_SHARE_DEFAULT;
    pthread_mutex_lock(&c->lock);
    c->mc.am_share = share;
    pthread_mutex_unlock(&c->lock);
    mc->am_share = share;
}
