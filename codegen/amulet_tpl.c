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
 * never writes f(A) or g(B). The alternatives the planner has for the
 * same hops are BLAS (Cell operators materializing f(A) and g(B), then
 * dgemm) and a Row operator (f fused into the row-wise product, g(B)
 * materialized); Outer needs a sparse driver and does not apply. Each
 * candidate is costed with cost.c's model and machine constants
 * (max(read, compute) + write per operator): the AMULET kernel's
 * compute is its vector operations per iteration (am_kernel_vops, the
 * accounting of seed 4.3.2 over the kernel the run time will generate)
 * at the vector rate dgemm reaches (gemm / 2 flops / lanes), so plain
 * matmul costs what dgemm does. The cheapest wins; when AMULET does, the
 * product hop becomes an H_WHERE hop over the leaves (the prologue hops
 * it covered drop out of the DAG), before the Cell/Row/Outer exploration,
 * which then sees the where-loop's result as a materialized input.
 *
 * Runs in the cost-based policy only (the others have no machine
 * constants). BRAID_AMULET_FUSE=0 disables it, =force takes every
 * candidate (tests). The where-loops are interned in the context by their
 * text, so instructions and recompiled DAGs may keep pointers to them. */
#include "amulet.h"
#include "../matrix/mb.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Loop variables of the where-loop: i (rows of R), j (columns), k. */
enum { VI, VJ, VK };
static const char *const var_name[3] = {"#i", "#j", "#k"};

#define TPL_MAXOPS 64

/* The analysis of one candidate product. */
typedef struct Cand {
    const int *nuse;       /* consumers by hop id (+1 for a DAG output) */
    Hop *leaf[WHERE_MAXLEAVES];
    int nleaf;
    int nops;              /* elementwise operators covered */
    double opflops[2];     /* ops.def cost per cell of each operand's ops */
    double lbytes[2];      /* bytes of the leaves each operand reads */
    bool full[2];          /* the operand reads a matrix of its shape */
    bool ok;
    StrBuf sig;            /* the body as text: the interning key */
} Cand;

static bool known(const Hop *h) { return h && h->dt == DT_MATRIX && h->rows > 0 && h->cols > 0; }

static bool num_scalar(const Hop *h)
{
    return h && h->dt == DT_SCALAR && h->vt != VT_STRING && h->vt != VT_UNKNOWN;
}

static double hop_bytes(const Hop *h) { return h->dt == DT_MATRIX ? 8.0 * (double)h->rows * (double)h->cols : 8; }

/* A matrix whose estimate says sparse: the unfused sparse kernels beat a
 * dense loop nest over it. */
static bool sparse_est(const Hop *h)
{
    return h->dt == DT_MATRIX && h->nnz >= 0 && (double)h->nnz < 0.4 * (double)h->rows * (double)h->cols;
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

/* Is h an elementwise operator of shape nr x nc the body can express,
 * with one consumer (it is computed only for this product)? */
static bool region_op(const Cand *c, const Hop *h, int64_t nr, int64_t nc)
{
    if (!known(h) || h->rows != nr || h->cols != nc || c->nuse[h->id] != 1) return false;
    if (h->kind == H_UNARY) return h->nin == 1 && (h->op == OP_NEG || h->op == OP_NOT || unary_builtin(h->op));
    if (h->kind == H_BINARY) return h->nin == 2 && (body_binary(h->op) || h->op == OP_MIN || h->op == OP_MAX);
    return h->kind == H_TERNARY && h->op == OP_IFELSE && h->nin == 3;
}

static int leaf_id(Cand *c, Hop *h)
{
    for (int i = 0; i < c->nleaf; i++) if (c->leaf[i] == h) return i;
    if (c->nleaf == WHERE_MAXLEAVES) { c->ok = false; return 0; }
    c->leaf[c->nleaf] = h;
    return c->nleaf++;
}

/* Writes operand hop h (shape nr x nc, rows by loop variable rv, columns
 * by cv) into c->sig as a body expression; side 0: the left operand. */
static void body_text(Cand *c, Hop *h, int side, int rv, int cv, int64_t nr, int64_t nc)
{
    if (!c->ok) return;
    StrBuf *s = &c->sig;
    if (region_op(c, h, nr, nc)) {
        if (++c->nops > TPL_MAXOPS) { c->ok = false; return; }
        c->opflops[side] += op_info[h->op].cost;
        sb_printf(s, "(%d", (int)h->op);
        for (int i = 0; i < h->nin; i++) {
            sb_puts(s, " ");
            body_text(c, h->in[i], side, rv, cv, nr, nc);
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
    if (!known(h) || sparse_est(h)) { c->ok = false; return; }
    const Hop *t = h->kind == H_REORG && h->op == OP_TRANS && known(h->in[0]) ? h->in[0] : NULL;
    if (h->rows == nr && h->cols == nc) {
        /* the operand's shape: read in place, or its transpose's input
         * with the indices swapped (no transpose materialized) */
        if (t && !sparse_est(t)) sb_printf(s, "L%d[%d,%d]", leaf_id(c, (Hop *)t), cv, rv);
        else sb_printf(s, "L%d[%d,%d]", leaf_id(c, h), rv, cv);
        c->full[side] = true;
        c->lbytes[side] += hop_bytes(t ? t : h);
    } else if (h->rows == 1 && h->cols == nc && nc > 1) {
        sb_printf(s, "L%d[%d]", leaf_id(c, h), cv);
        c->lbytes[side] += hop_bytes(h);
    } else if (h->cols == 1 && h->rows == nr && nr > 1) {
        sb_printf(s, "L%d[%d]", leaf_id(c, h), rv);
        c->lbytes[side] += hop_bytes(h);
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

/* ---- costs (seconds; cost.c's model) ---- */

typedef struct Costs { double amulet, blas, row; } Costs;

/* The generated kernel reaches this share of dgemm's vector rate
 * (docs/amulet.md: plain matmul measured at 0.60-0.98 of OpenBLAS). */
#define AM_GEMM_SHARE 0.6
/* Its column blocks: nc of at most this many columns (amulet_gen.c's
 * default), over which the pack function's values serve. */
#define AM_NC 1024.0

static void costs(const Cand *k, const Hop *h, const Hop *x, const Hop *y, double vops, int lanes, int pack_ops,
                  const CgMachine *mc, Costs *o)
{
    double M = (double)h->rows, N = (double)h->cols, K = (double)x->cols;
    if (h->op == OP_MATMULTL) K = (double)x->rows;
    double cells[2] = {M * K, K * N}, out = 8 * M * N / mc->write_bw, mm = 2 * M * N * K;
    /* an operand with elementwise work: a Cell operator materializing it */
    double cell[2];
    for (int s = 0; s < 2; s++)
        cell[s] = k->opflops[s] > 0 ? fmax(k->lbytes[s] / mc->read_bw, k->opflops[s] * cells[s] / mc->flops) +
                                           8 * cells[s] / mc->write_bw
                                    : 0;
    o->blas = cell[0] + cell[1] + fmax(8 * (cells[0] + cells[1]) / mc->read_bw, mm / mc->gemm) + out;
    /* Row: the left operand's work fused into the row-wise product (up
     * to 16 columns at dgemm's rate, wider at the vector-matrix loop's) */
    o->row = INFINITY;
    if (tpl_row_mm(h))
        o->row = cell[1] + fmax((k->lbytes[0] + 8 * cells[1]) / mc->read_bw,
                                k->opflops[0] * cells[0] / mc->flops + mm / (N <= 16 ? mc->gemm : mc->vecmat)) +
                 out;
    /* the kernel's vector operations at the share of dgemm's vector rate
     * it reaches, plus the pack function's scalar (i,k) values once per
     * column block at the elementwise rate */
    double kern = M * N * K * vops * 2 * lanes / (mc->gemm * AM_GEMM_SHARE);
    double pack = M * K * ceil(N / AM_NC) * pack_ops / mc->flops;
    o->amulet = fmax((k->lbytes[0] + k->lbytes[1]) / mc->read_bw, kern + pack) + out;
}

/* ---- the pass ---- */

static const char *fuse_mode(void)
{
    const char *m = getenv("BRAID_AMULET_FUSE");
    return m && *m ? m : "cost";
}

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

/* Consumers of each hop of walk order o (+1 for a root or a write). */
static int *consumers(const HopDag *d, Hop **o, int n)
{
    int *u = br_calloc((size_t)d->n + 1, sizeof *u);
    if (!u) return NULL;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < o[i]->nin; k++)
            if (o[i]->in[k]) u[o[i]->in[k]->id]++;
    for (int i = 0; i < d->nroots; i++) u[d->roots[i]->id]++;
    for (int i = 0; i < d->nw; i++) if (d->whops[i]) u[d->whops[i]->id]++;
    return u;
}

/* One candidate: 1 replaced, 0 not. */
static int candidate(CgContext *c, HopDag *d, Hop *h, const int *nuse, bool *have_mc, CgMachine *mc)
{
    if (h->kind != H_MATMUL || (h->op != OP_MATMUL && h->op != OP_MATMULTL) || h->nin != 2 || !known(h)) return 0;
    Hop *x = h->in[0], *y = h->in[1];
    if (!known(x) || !known(y)) return 0;
    bool tl = h->op == OP_MATMULTL;
    int64_t M = h->rows, N = h->cols, K = tl ? x->rows : x->cols;
    if (y->rows != K || M < 2 || N < 2 || K < 2 || (double)M * N * K < 64.0 * 64 * 64) return 0;
    Cand k = {.nuse = nuse, .ok = true};
    sb_puts(&k.sig, "(");
    sb_printf(&k.sig, "%d ", (int)OP_MULT);
    if (tl) body_text(&k, x, 0, VK, VI, K, M);
    else body_text(&k, x, 0, VI, VK, M, K);
    sb_puts(&k.sig, " ");
    body_text(&k, y, 1, VK, VJ, K, N);
    sb_puts(&k.sig, ")");
    int r = 0;
    if (!k.ok || !k.nops || !k.full[0] || !k.full[1] || !k.sig.s || k.sig.oom) goto out;
    const char *mode = fuse_mode();
    Arena *tmp = arena_new();
    WhereLoop *probe = tmp ? make_loop(tmp, k.sig.s, h->span) : NULL;
    AmPlan *p = probe ? malloc(sizeof *p) : NULL;
    double vops = -1;
    int lanes = 1, pack_ops = 0;
    if (p) {
        am_plan(probe, p);
        vops = am_kernel_vops(p, &lanes, &pack_ops);
    }
    free(p);
    arena_free(tmp);
    if (vops <= 0) goto out;
    if (!*have_mc) {
        cg_machine_ctx(c, mc);
        *have_mc = true;
    }
    Costs cs;
    costs(&k, h, x, y, vops, lanes, pack_ops, mc, &cs);
    bool take = !strcmp(mode, "force") || cs.amulet < fmin(cs.blas, cs.row);
    if (c->opt.explain)
        fprintf(c->opt.explain, "AMULET candidate at hop %d (%lld x %lld x %lld, %d operators): cost %.3g s, "
                "BLAS %.3g s, Row %.3g s: %s\n", h->id, (long long)M, (long long)N, (long long)K, k.nops,
                cs.amulet, cs.blas, cs.row, take ? "AMULET" : "not taken");
    if (!take) goto out;
    pthread_mutex_lock(&c->lock);
    const WhereLoop *w = intern(c, k.sig.s, h->span);
    pthread_mutex_unlock(&c->lock);
    if (w && replace(d, h, w, &k, M, N, K)) {
        r = 1;
        __atomic_add_fetch(&c->st.amulet, 1, __ATOMIC_RELAXED);
    }
out:
    free(k.sig.s);
    return r;
}

void cg_amulet_fuse(CgContext *c, HopDag *d)
{
    if (!strcmp(fuse_mode(), "0") || c->opt.interpret) return;
    /* without a compiler the loop would run in the evaluator */
    pthread_mutex_lock(&c->lock);
    bool cc = jit_prepare(c) == 0;
    pthread_mutex_unlock(&c->lock);
    if (!cc) return;
    int n = 0;
    Hop **o = hop_walk(d, &n, NULL);
    int *nuse = o ? consumers(d, o, n) : NULL;
    bool have_mc = false;
    CgMachine mc;
    /* inputs before consumers: a replaced product's leaves are hops
     * below it, which no later candidate covers (they had one consumer) */
    for (int i = 0; nuse && i < n; i++) candidate(c, d, o[i], nuse, &have_mc, &mc);
    free(nuse);
    free(o);
}
