/* amulet_gen.c: the generated register-blocked kernel of AMULET (seed 003,
 * sections 3 and 4.3-4.6) and the tiled loop that drives it.
 *
 * The plan's body DAG (DML semantics) is lowered to a kernel DAG with
 * masks (4.3.1): comparisons and `&`, `|`, `!` give masks, `mask * x`
 * becomes a masked move, `a + mask * x` / `a - mask * x` masked add/sub,
 * ifelse a blend. Nodes are placed by the loop variables they depend on:
 * those free of k are computed once per kernel call before the k loop
 * (loop-invariant hoisting, per i, per j and per (i,j)), those free of i
 * once per kk, those free of j once per (kk, ii). The per-(i,j,k) nodes
 * are emitted in the order of Sethi-Ullman labels extended to the DAG
 * (labelfs-style: children with larger labels first), and the live
 * temporaries of that order enter the register count of 4.3.2, which
 * picks the kernel size mr x nr from the register budget of the SIMD
 * level found at run time (32 zmm, 16 ymm, or scalar code).
 *
 * The kernel computes one mr x nr tile over kc values of k into a tile
 * buffer; the driver (Goto's loop, section 3: k by kc, j by nc, i by mr,
 * j by nr) packs the (k,j) operands into nr-wide panels, packs the (i,k)
 * operands or reads them in place with strides (3.1, chosen by the
 * search), pads edges, merges tiles into R and runs the i-tiles x
 * j-panels of each block on the OpenMP threads. kc, nc and packing are
 * found at run time on row bands that contribute to the result (4.4-4.6)
 * and remembered per machine and kernel in the plan cache directory. */
#include "amulet.h"
#include "../kernels/leaf.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <omp.h>

/* ---- the kernel DAG ---- */

typedef enum {
    KN_LEAF, KN_CONST, KN_BIN, KN_UN, KN_CMP, KN_MAND, KN_MOR, KN_MNOT, KN_N2M, KN_M2N, KN_MZ, KN_MADD, KN_MSUB,
    KN_SEL
} KKind;
typedef struct KNode {
    KKind k;
    OpCode op;
    int a, b, c;           /* children; KN_MADD/MSUB: a + (b ? c : 0) */
    int leaf;
    double v;
    bool mask;             /* a mask value */
    unsigned dep;
} KNode;
#define KMAX (2 * AM_MAXNODES + 8)
typedef struct KPlan {
    const AmPlan *p;
    KNode n[KMAX];
    int nn;
    int root[WHERE_MAXRES];   /* each result's value (the plan's order) */
    int nroot;
    bool ok;
    int memo[AM_MAXNODES];
} KPlan;

static int kadd(KPlan *k, KNode x)
{
    for (int i = 0; i < k->nn; i++) {
        const KNode *y = &k->n[i];
        if (y->k == x.k && y->op == x.op && y->a == x.a && y->b == x.b && y->c == x.c && y->leaf == x.leaf &&
            memcmp(&y->v, &x.v, sizeof x.v) == 0)
            return i;
    }
    if (k->nn == KMAX) { k->ok = false; return 0; }
    x.dep |= x.a >= 0 ? k->n[x.a].dep : 0;
    x.dep |= x.b >= 0 ? k->n[x.b].dep : 0;
    x.dep |= x.c >= 0 ? k->n[x.c].dep : 0;
    k->n[k->nn] = x;
    return k->nn++;
}

static int kop(KPlan *k, KKind kind, OpCode op, int a, int b, int c, bool mask)
{
    return kadd(k, (KNode){.k = kind, .op = op, .a = a, .b = b, .c = c, .leaf = -1, .mask = mask});
}

static int num(KPlan *k, int x) { return k->n[x].mask ? kop(k, KN_M2N, 0, x, -1, -1, false) : x; }
static int msk(KPlan *k, int x) { return k->n[x].mask ? x : kop(k, KN_N2M, 0, x, -1, -1, true); }
static bool is_cmp(OpCode op) { return op == OP_LT || op == OP_LE || op == OP_GT || op == OP_GE || op == OP_EQ || op == OP_NE; }

/* Lowers plan node i (memoized); k->ok false for operators the kernel
 * does not have (the loop then runs through the evaluator). */
static int lower(KPlan *k, int i)
{
    if (k->memo[i] >= 0) return k->memo[i];
    const ANode *n = &k->p->n[i];
    int r = 0;
    switch (n->kind) {
    case AN_CONST: r = kadd(k, (KNode){.k = KN_CONST, .a = -1, .b = -1, .c = -1, .leaf = -1, .v = n->v}); break;
    case AN_LEAF:
        r = kadd(k, (KNode){.k = KN_LEAF, .a = -1, .b = -1, .c = -1, .leaf = n->leaf, .dep = n->dep});
        break;
    case AN_IFELSE:
        r = kop(k, KN_SEL, 0, msk(k, lower(k, n->a)), num(k, lower(k, n->b)), num(k, lower(k, n->c)), false);
        break;
    case AN_UN: {
        int a = lower(k, n->a);
        if (n->op == OP_NOT) r = kop(k, KN_MNOT, 0, msk(k, a), -1, -1, true);
        else if (n->op == OP_NEG || n->op == OP_ABS || n->op == OP_SQRT) r = kop(k, KN_UN, n->op, num(k, a), -1, -1, false);
        else k->ok = false;
        break;
    }
    case AN_BIN: {
        int a = lower(k, n->a), b = lower(k, n->b);
        OpCode op = n->op;
        if (is_cmp(op)) { r = kop(k, KN_CMP, op, num(k, a), num(k, b), -1, true); break; }
        if (op == OP_AND || op == OP_OR) { r = kop(k, op == OP_AND ? KN_MAND : KN_MOR, 0, msk(k, a), msk(k, b), -1, true); break; }
        if (op == OP_POW && k->n[b].k == KN_CONST && k->n[b].v == 2) { a = num(k, a); r = kop(k, KN_BIN, OP_MULT, a, a, -1, false); break; }
        if (op == OP_MULT) {
            /* mask * x -> masked move; (mask ? u : 0) * x -> mask ? u * x : 0,
             * but only where x brings no loop variable the masked value
             * lacks: (A[i,k] > t) * B[k,j] keeps the mask (as 0/1) with
             * A's value, hoisted per (i,k), and multiplies once inside
             * (one fused multiply-add instead of a product, a masked move
             * and an add) */
            if (k->n[a].mask && !(k->n[b].dep & ~k->n[a].dep)) { r = kop(k, KN_MZ, 0, a, num(k, b), -1, false); break; }
            if (k->n[b].mask && !(k->n[a].dep & ~k->n[b].dep)) { r = kop(k, KN_MZ, 0, b, num(k, a), -1, false); break; }
            if (k->n[a].k == KN_MZ && !(k->n[b].dep & ~k->n[a].dep)) { r = kop(k, KN_MZ, 0, k->n[a].a, kop(k, KN_BIN, OP_MULT, k->n[a].b, num(k, b), -1, false), -1, false); break; }
            if (k->n[b].k == KN_MZ && !(k->n[a].dep & ~k->n[b].dep)) { r = kop(k, KN_MZ, 0, k->n[b].a, kop(k, KN_BIN, OP_MULT, num(k, a), k->n[b].b, -1, false), -1, false); break; }
        }
        a = num(k, a);
        b = num(k, b);
        if (op == OP_PLUS && k->n[b].k == KN_MZ) { r = kop(k, KN_MADD, 0, a, k->n[b].a, k->n[b].b, false); break; }
        if (op == OP_PLUS && k->n[a].k == KN_MZ) { r = kop(k, KN_MADD, 0, b, k->n[a].a, k->n[a].b, false); break; }
        if (op == OP_MINUS && k->n[b].k == KN_MZ) { r = kop(k, KN_MSUB, 0, a, k->n[b].a, k->n[b].b, false); break; }
        if (op == OP_PLUS || op == OP_MINUS || op == OP_MULT || op == OP_DIV || op == OP_MIN || op == OP_MAX)
            r = kop(k, KN_BIN, op, a, b, -1, false);
        else k->ok = false;
        break;
    }
    }
    return k->memo[i] = r;
}

/* ---- instruction strings per SIMD level ---- */

typedef struct Isa {
    KIsa level;
    int w, regs;           /* doubles per vector, vector registers */
    bool kmask;            /* masks live in their own registers */
    const char *vt, *mt;   /* vector and mask types */
} Isa;

static Isa isa_of(KIsa l)
{
    if (l == K_ISA_AVX512) return (Isa){l, 8, 32, true, "__m512d", "__mmask8"};
    if (l == K_ISA_AVX2) return (Isa){l, 4, 16, false, "__m256d", "__m256d"};
    return (Isa){K_ISA_GENERIC, 1, 16, true, "double", "int"};
}

static const char *cmp_imm(OpCode op)
{
    switch (op) {
    case OP_LT: return "_CMP_LT_OQ";
    case OP_LE: return "_CMP_LE_OQ";
    case OP_GT: return "_CMP_GT_OQ";
    case OP_GE: return "_CMP_GE_OQ";
    case OP_EQ: return "_CMP_EQ_OQ";
    default: return "_CMP_NEQ_UQ";
    }
}

static const char *cmp_c(OpCode op)
{
    switch (op) {
    case OP_LT: return "<";
    case OP_LE: return "<=";
    case OP_GT: return ">";
    case OP_GE: return ">=";
    case OP_EQ: return "==";
    default: return "!=";
    }
}

/* v = x (op) y over vectors; the prefix of intrinsics */
static const char *pfx(const Isa *s) { return s->level == K_ISA_AVX512 ? "_mm512" : "_mm256"; }

static void bin(StrBuf *b, const Isa *s, OpCode op, const char *x, const char *y)
{
    if (s->level == K_ISA_GENERIC) {
        switch (op) {
        case OP_PLUS: sb_printf(b, "(%s + %s)", x, y); return;
        case OP_MINUS: sb_printf(b, "(%s - %s)", x, y); return;
        case OP_MULT: sb_printf(b, "(%s * %s)", x, y); return;
        case OP_DIV: sb_printf(b, "(%s / %s)", x, y); return;
        case OP_MIN: sb_printf(b, "(%s < %s ? %s : %s)", x, y, x, y); return;
        default: sb_printf(b, "(%s > %s ? %s : %s)", x, y, x, y); return;
        }
    }
    const char *nm = op == OP_PLUS ? "add" : op == OP_MINUS ? "sub" : op == OP_MULT ? "mul" : op == OP_DIV ? "div"
                     : op == OP_MIN ? "min" : "max";
    sb_printf(b, "%s_%s_pd(%s, %s)", pfx(s), nm, x, y);
}

/* The expression of kernel node n whose operands are named a, b, c. */
static void expr(StrBuf *o, const Isa *s, const KNode *n, const char *a, const char *b, const char *c)
{
    bool g = s->level == K_ISA_GENERIC, z = s->level == K_ISA_AVX512;
    const char *p = pfx(s);
    switch (n->k) {
    case KN_BIN: bin(o, s, n->op, a, b); return;
    case KN_UN:
        if (n->op == OP_NEG) { if (g) sb_printf(o, "(-%s)", a); else sb_printf(o, "%s_mul_pd(%s, %s_set1_pd(-1.0))", p, a, p); }
        else if (n->op == OP_ABS) { if (g) sb_printf(o, "fabs(%s)", a); else if (z) sb_printf(o, "_mm512_abs_pd(%s)", a); else sb_printf(o, "_mm256_andnot_pd(_mm256_set1_pd(-0.0), %s)", a); }
        else { if (g) sb_printf(o, "sqrt(%s)", a); else sb_printf(o, "%s_sqrt_pd(%s)", p, a); }
        return;
    case KN_CMP:
        if (g) sb_printf(o, "(%s %s %s)", a, cmp_c(n->op), b);
        else if (z) sb_printf(o, "_mm512_cmp_pd_mask(%s, %s, %s)", a, b, cmp_imm(n->op));
        else sb_printf(o, "_mm256_cmp_pd(%s, %s, %s)", a, b, cmp_imm(n->op));
        return;
    case KN_MAND: case KN_MOR: {
        const char *op = n->k == KN_MAND ? "&" : "|";
        if (g || z) sb_printf(o, "(%s)(%s %s %s)", s->mt, a, op, b);
        else sb_printf(o, "_mm256_%s_pd(%s, %s)", n->k == KN_MAND ? "and" : "or", a, b);
        return;
    }
    case KN_MNOT:
        if (g) sb_printf(o, "(!%s)", a);
        else if (z) sb_printf(o, "(__mmask8)~%s", a);
        else sb_printf(o, "_mm256_xor_pd(%s, _mm256_castsi256_pd(_mm256_set1_epi64x(-1)))", a);
        return;
    case KN_N2M:
        if (g) sb_printf(o, "(%s != 0)", a);
        else if (z) sb_printf(o, "_mm512_cmp_pd_mask(%s, _mm512_setzero_pd(), _CMP_NEQ_UQ)", a);
        else sb_printf(o, "_mm256_cmp_pd(%s, _mm256_setzero_pd(), _CMP_NEQ_UQ)", a);
        return;
    case KN_M2N:
        if (g) sb_printf(o, "(%s ? 1.0 : 0.0)", a);
        else if (z) sb_printf(o, "_mm512_maskz_mov_pd(%s, _mm512_set1_pd(1.0))", a);
        else sb_printf(o, "_mm256_and_pd(%s, _mm256_set1_pd(1.0))", a);
        return;
    case KN_MZ:
        if (g) sb_printf(o, "(%s ? %s : 0.0)", a, b);
        else if (z) sb_printf(o, "_mm512_maskz_mov_pd(%s, %s)", a, b);
        else sb_printf(o, "_mm256_and_pd(%s, %s)", a, b);
        return;
    case KN_MADD: case KN_MSUB: {
        bool add = n->k == KN_MADD;
        if (g) sb_printf(o, "(%s ? %s %c %s : %s)", b, a, add ? '+' : '-', c, a);
        else if (z) sb_printf(o, "_mm512_mask_%s_pd(%s, %s, %s, %s)", add ? "add" : "sub", a, b, a, c);
        else sb_printf(o, "_mm256_%s_pd(%s, _mm256_and_pd(%s, %s))", add ? "add" : "sub", a, b, c);
        return;
    }
    case KN_SEL:
        if (g) sb_printf(o, "(%s ? %s : %s)", a, b, c);
        else if (z) sb_printf(o, "_mm512_mask_blend_pd(%s, %s, %s)", a, c, b);
        else sb_printf(o, "_mm256_blendv_pd(%s, %s, %s)", c, b, a);
        return;
    default: return;
    }
}

/* ---- kernel generation ---- */

/* Leaf classes by the loop variables they depend on. */
enum { LC_S, LC_I, LC_J, LC_K, LC_IJ, LC_A, LC_B };

typedef struct Gen {
    const AmPlan *p;
    KPlan *k;
    Isa s;
    unsigned bi, bj, bk;   /* bits of i, j, k */
    int order[KMAX], norder;   /* per-(i,j,k) nodes, labelfs order */
    int temps;             /* live vector temporaries of that order */
    int spl;               /* while emitting the sparse kernel: the (i,k)
                              leaf read from the non-zero values (av[q]),
                              else -1 */
    /* (i,k) values computed once per tile by the pack function
     * (cg_amulet_pk) instead of once per tile and column panel: */
    bool prepack;          /* in effect (dense kernel; off: sparse) */
    int slot[KMAX];        /* node's slot in the packed values, -1 none */
    int nslot;
    char keep[KMAX];       /* (i,k) node the kernel still computes (a
                              leaf, or a mask, and what those need) */
} Gen;

static int leaf_class(const Gen *g, unsigned dep)
{
    if (dep == 0) return LC_S;
    if (dep == g->bi) return LC_I;
    if (dep == g->bj) return LC_J;
    if (dep == g->bk) return LC_K;
    if (dep == (g->bi | g->bj)) return LC_IJ;
    if (dep == (g->bi | g->bk)) return LC_A;
    return LC_B;
}

static bool inner(const Gen *g, int n)
{
    unsigned all = g->bi | g->bj | g->bk;
    return g->k->n[n].k != KN_LEAF && g->k->n[n].k != KN_CONST && (g->k->n[n].dep & all) == all;
}

/* Is result r's product (a multiply, or on AVX-512 a mask) fused into
 * its += accumulation (one fmadd or masked add, no operation of its
 * own)? */
static bool fused_acc(const Gen *g, int r)
{
    const KNode *rt = &g->k->n[g->k->root[r]];
    return g->p->res[r]->acc == WA_ADD && inner(g, g->k->root[r]) &&
           ((g->s.level != K_ISA_GENERIC && rt->k == KN_BIN && rt->op == OP_MULT) ||
            (g->s.level == K_ISA_AVX512 && rt->k == KN_M2N));
}

/* The inner loop's fused accumulations and the nodes it then does not
 * compute (gen_fn emits, vops_per_iter and vops_mix count, from this one
 * decision): += of a product is one fused multiply-add, += of a mask a
 * masked add of 1 (AVX-512); the product itself is then skipped, unless
 * another node or a result that is not fused reads it (the three-results
 * loop `R += A*B; C += (A*B > 0.25)`: the product and the fmadd). */
static void fused_skip(const Gen *g, bool fused[WHERE_MAXRES], bool skip[KMAX])
{
    const KPlan *k = g->k;
    memset(skip, 0, KMAX * sizeof *skip);
    for (int r = 0; r < k->nroot; r++) {
        fused[r] = fused_acc(g, r);
        if (fused[r]) skip[k->root[r]] = 1;
    }
    for (int r = 0; r < k->nroot; r++)
        if (!fused[r]) skip[k->root[r]] = 0;
    for (int t = 0; t < g->norder; t++) {
        const KNode *x = &k->n[g->order[t]];
        if (x->a >= 0) skip[x->a] = 0;
        if (x->b >= 0) skip[x->b] = 0;
        if (x->c >= 0) skip[x->c] = 0;
    }
}

/* Sethi-Ullman labels over the DAG (leaves and nodes computed outside
 * the (i,j,k) level are in registers already: label 0). */
static int label(const Gen *g, int n, int *lab)
{
    if (!inner(g, n)) return 0;
    if (lab[n] >= 0) return lab[n];
    const KNode *x = &g->k->n[n];
    int l[3] = {0, 0, 0}, ch[3] = {x->a, x->b, x->c};
    for (int i = 0; i < 3; i++) l[i] = ch[i] >= 0 ? label(g, ch[i], lab) : 0;
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (l[j] > l[i]) { int t = l[i]; l[i] = l[j]; l[j] = t; }
    int r = BR_MAX(BR_MAX(l[0], l[1] + 1), BR_MAX(l[2] + 2, 1));
    return lab[n] = r;
}

static void place(Gen *g, int n, const int *lab, char *done)
{
    if (!inner(g, n) || done[n]) return;
    const KNode *x = &g->k->n[n];
    int ch[3] = {x->a, x->b, x->c};
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++) {
            int li = ch[i] >= 0 ? lab[ch[i]] : -1, lj = ch[j] >= 0 ? lab[ch[j]] : -1;
            if (lj > li) { int t = ch[i]; ch[i] = ch[j]; ch[j] = t; }
        }
    for (int i = 0; i < 3; i++) if (ch[i] >= 0) place(g, ch[i], lab, done);
    done[n] = 1;
    g->order[g->norder++] = n;
}

/* The evaluation order of the (i,j,k) nodes and its live temporaries
 * (vector registers; masks count where they share the vector file). */
static void schedule(Gen *g)
{
    int lab[KMAX];
    char done[KMAX] = {0};
    for (int i = 0; i < g->k->nn; i++) lab[i] = -1;
    for (int i = 0; i < g->k->nn; i++) label(g, i, lab);
    for (int r = 0; r < g->k->nroot; r++) place(g, g->k->root[r], lab, done);
    int last[KMAX];
    for (int i = 0; i < g->k->nn; i++) last[i] = -1;
    for (int t = 0; t < g->norder; t++) {
        const KNode *x = &g->k->n[g->order[t]];
        int ch[3] = {x->a, x->b, x->c};
        for (int i = 0; i < 3; i++) if (ch[i] >= 0) last[ch[i]] = t;
    }
    for (int r = 0; r < g->k->nroot; r++) last[g->k->root[r]] = g->norder;   /* used by the accumulation */
    int live = 0, peak = 0;
    for (int t = 0; t < g->norder; t++) {
        int n = g->order[t];
        if (!(g->k->n[n].mask && g->s.kmask)) live++;
        peak = BR_MAX(peak, live);
        for (int u = 0; u < t; u++) {
            int m = g->order[u];
            if (last[m] == t && !(g->k->n[m].mask && g->s.kmask)) live--;
        }
    }
    g->temps = peak;
}

/* Registers of an mr x (nv vectors) kernel (seed 4.3.2). */
static int regs_needed(const Gen *g, int mr, int nv)
{
    int r = mr * nv * g->k->nroot + g->temps;   /* accumulators of every result */
    for (int i = 0; i < g->k->nn; i++) {
        const KNode *x = &g->k->n[i];
        if (inner(g, i) || (x->mask && g->s.kmask)) continue;
        bool used = false;   /* reachable nodes only: every node is */
        (void)used;
        unsigned d = x->dep;
        if (x->k == KN_CONST || d == 0) r += 1;
        else if ((d & g->bj) && !(d & g->bi)) r += nv;   /* rows of B, j-vectors */
        else r += 1;                                      /* broadcasts, (i,j) loads */
    }
    return r;
}

/* Names a node's value at row ii and vector v (suffixes by its loop
 * variables). */
static void vname(const Gen *g, int n, int ii, int v, char *buf, size_t cap)
{
    unsigned d = g->k->n[n].dep;
    int len = snprintf(buf, cap, "x%d", n);
    if (d & g->bi) len += snprintf(buf + len, cap - (size_t)len, "_%d", ii);
    if (d & g->bj) snprintf(buf + len, cap - (size_t)len, "_%d", v);
}

static void emit_node(StrBuf *o, const Gen *g, int n, int ii, int v, int mr, int nr)
{
    const KNode *x = &g->k->n[n];
    const Isa *s = &g->s;
    char nm[48], a[48] = "", b[48] = "", c[48] = "";
    vname(g, n, ii, v, nm, sizeof nm);
    const char *bc = s->level == K_ISA_GENERIC ? "" : s->level == K_ISA_AVX512 ? "_mm512_set1_pd" : "_mm256_set1_pd";
    const char *ld = s->level == K_ISA_GENERIC ? "*" : s->level == K_ISA_AVX512 ? "_mm512_loadu_pd" : "_mm256_loadu_pd";
    sb_printf(o, "        %s %s = ", x->mask ? s->mt : s->vt, nm);
    if (x->k == KN_CONST) { sb_printf(o, "%s(%.17g);\n", bc, x->v); return; }
    if (g->prepack && g->slot[n] >= 0) {   /* computed by cg_amulet_pk */
        sb_printf(o, "%s(g->pf[(%d * kc + kk) * %d + %d]);\n", bc, g->slot[n], mr, ii);
        return;
    }
    if (x->k == KN_LEAF) {
        int l = x->leaf;
        switch (leaf_class(g, x->dep)) {
        case LC_S: sb_printf(o, "%s(g->p[%d][0]);\n", bc, l); break;
        case LC_I: sb_printf(o, "%s(g->p[%d][%d * rs%d]);\n", bc, l, ii, l); break;
        case LC_J: sb_printf(o, "%s(g->p[%d] + %d);\n", ld, l, v * s->w); break;
        case LC_K: sb_printf(o, "%s(g->p[%d][kk * cs%d]);\n", bc, l, l); break;
        case LC_IJ: sb_printf(o, "%s(g->p[%d] + %d * rs%d + %d);\n", ld, l, ii, l, v * s->w); break;
        case LC_A:
            if (l == g->spl) sb_printf(o, "%s(g->av[q]);\n", bc);
            else sb_printf(o, "%s(g->p[%d][%d * rs%d + kk * cs%d]);\n", bc, l, ii, l, l);
            break;
        default:
            /* the sparse kernel's panel may be partial: lanes past its
             * g->nb columns are not loaded (they read as 0; R takes only
             * the first nb) */
            if (g->spl < 0) sb_printf(o, "%s(g->p[%d] + kk * cs%d + %d);\n", ld, l, l, v * s->w);
            else if (s->level == K_ISA_AVX512)
                sb_printf(o, "_mm512_maskz_loadu_pd(mk%d, g->p[%d] + kk * cs%d + %d);\n", v, l, l, v * s->w);
            else if (s->level == K_ISA_AVX2)
                sb_printf(o, "_mm256_maskload_pd(g->p[%d] + kk * cs%d + %d, mk%d);\n", l, l, v * s->w, v);
            else sb_printf(o, "mk%d ? g->p[%d][kk * cs%d + %d] : 0.0;\n", v, l, l, v);
            break;
        }
        return;
    }
    if (x->a >= 0) vname(g, x->a, ii, v, a, sizeof a);
    if (x->b >= 0) vname(g, x->b, ii, v, b, sizeof b);
    if (x->c >= 0) vname(g, x->c, ii, v, c, sizeof c);
    expr(o, s, x, a, b, c);
    sb_puts(o, ";\n");
    (void)mr;
    (void)nr;
}

/* Emits every node of level `want` (dependence on i/j given by the
 * bits) not yet emitted, for row ii and vector v. */
static void emit_level(StrBuf *o, const Gen *g, bool withk, unsigned want, int ii, int v, int mr, int nr)
{
    for (int n = 0; n < g->k->nn; n++) {
        unsigned d = g->k->n[n].dep;
        if (((d & g->bk) != 0) != withk || (d & (g->bi | g->bj)) != want || inner(g, n)) continue;
        if (g->k->n[n].k == KN_CONST && withk) continue;
        if (g->prepack && withk && want == g->bi && g->slot[n] < 0 && !g->keep[n]) continue;
        emit_node(o, g, n, ii, v, mr, nr);
    }
}

/* Is node n the value of a result? */
static bool is_root(const KPlan *k, int n)
{
    for (int r = 0; r < k->nroot; r++)
        if (k->root[r] == n) return true;
    return false;
}

/* Is node n an (i,k) value (depends on i and k, not on j)? */
static bool ik_node(const Gen *g, int n)
{
    return (g->k->n[n].dep & (g->bi | g->bj | g->bk)) == (g->bi | g->bk);
}

/* The (i,k) values the pack function computes: those an (i,j,k) node
 * reads that are computed (not leaves) and numbers (masks stay in the
 * kernel, with the (i,k) values they need: keep). */
static void plan_prepack(Gen *g)
{
    const KPlan *k = g->k;
    g->nslot = 0;
    for (int n = 0; n < k->nn; n++) { g->slot[n] = -1; g->keep[n] = 0; }
    /* a result whose value is an (i,k) value (`S[i,j] += A[i,k] * 2`
     * beside a product) reads it like a node does */
    for (int r = 0; r < k->nroot; r++) {
        int c = k->root[r];
        if (!ik_node(g, c)) continue;
        const KNode *y = &k->n[c];
        if (y->k != KN_LEAF && y->k != KN_CONST && !y->mask && g->slot[c] < 0 && g->nslot < AM_MAXLEAVES)
            g->slot[c] = g->nslot++;
        else if (g->slot[c] < 0) g->keep[c] = 1;
    }
    for (int n = k->nn - 1; n >= 0; n--) {
        const KNode *x = &k->n[n];
        bool use = inner(g, n) || g->keep[n] || (is_root(k, n) && g->slot[n] < 0);
        if (!use) continue;
        int ch[3] = {x->a, x->b, x->c};
        for (int i = 0; i < 3; i++) {
            int c = ch[i];
            if (c < 0 || !ik_node(g, c)) continue;
            const KNode *y = &k->n[c];
            bool computed = y->k != KN_LEAF && y->k != KN_CONST && !y->mask;
            if (computed && g->slot[c] < 0 && g->nslot < AM_MAXLEAVES) g->slot[c] = g->nslot++;
            else if (g->slot[c] < 0) g->keep[c] = 1;
        }
    }
}

/* The pack function: per k of the block and row of the tile, the slot
 * values (scalar code, the kernel's DAG at the generic level) into
 * pf[(slot * kc + kk) * mr + ii]. */
static void gen_pack(StrBuf *o, const Gen *g, int mr)
{
    Gen x = *g;
    x.s = isa_of(K_ISA_GENERIC);
    x.prepack = false;
    x.spl = -1;
    sb_puts(o, "void cg_amulet_pk(const cg_amargs *g)\n{\n    const int64_t kc = g->kc;\n");
    for (int l = 0; l < g->p->nleaf; l++)
        sb_printf(o, "    const int64_t rs%d = g->rs[%d], cs%d = g->cs[%d]; (void)rs%d; (void)cs%d;\n", l, l, l, l, l, l);
    sb_puts(o, "    {\n");
    emit_level(o, &x, false, 0, 0, 0, mr, 1);
    for (int ii = 0; ii < mr; ii++) emit_level(o, &x, false, x.bi, ii, 0, mr, 1);
    sb_puts(o, "    for (int64_t kk = 0; kk < kc; kk++) {\n");
    emit_level(o, &x, true, 0, 0, 0, mr, 1);
    for (int ii = 0; ii < mr; ii++) {
        sb_puts(o, "      {\n");
        emit_level(o, &x, true, x.bi, ii, 0, mr, 1);
        for (int n = 0; n < g->k->nn; n++) {
            if (g->slot[n] < 0) continue;
            char nm[48];
            vname(&x, n, ii, 0, nm, sizeof nm);
            sb_printf(o, "        g->pf[(%d * kc + kk) * %d + %d] = %s;\n", g->slot[n], mr, ii, nm);
        }
        sb_puts(o, "      }\n");
    }
    sb_puts(o, "    }\n    }\n}\n");
}

/* The kernel function cg_amulet: the dense mr x nv-vector tile over kc
 * values of k, or, sparse, one row's tile over its kc non-zeros of the
 * sparse (i,k) operand (k = kx[q], the value av[q]). */
static void gen_fn(StrBuf *o, const Gen *g, int mr, int nv, bool sparse)
{
    const Isa *s = &g->s;
    const KPlan *k = g->k;
    int nr = nv * s->w;
    sb_puts(o, "void cg_amulet(const cg_amargs *g)\n{\n    const int64_t kc = g->kc;\n");
    for (int l = 0; l < g->p->nleaf; l++)
        sb_printf(o, "    const int64_t rs%d = g->rs[%d], cs%d = g->cs[%d]; (void)rs%d; (void)cs%d;\n", l, l, l, l, l, l);
    const char *bc = s->level == K_ISA_GENERIC ? "" : s->level == K_ISA_AVX512 ? "_mm512_set1_pd" : "_mm256_set1_pd";
    /* accumulators: an mr x nv tile per result */
    for (int r = 0; r < k->nroot; r++) {
        WhereAcc acc = g->p->res[r]->acc;
        const char *init = acc == WA_ADD ? "0.0" : acc == WA_MIN ? "INFINITY" : "-INFINITY";
        for (int ii = 0; ii < mr; ii++)
            for (int v = 0; v < nv; v++) sb_printf(o, "    %s c%d_%d_%d = %s(%s);\n", s->vt, r, ii, v, bc, init);
    }
    bool fused[WHERE_MAXRES], skip[KMAX];
    fused_skip(g, fused, skip);
    /* hoisted: nodes free of k, by (i, j) level */
    sb_puts(o, "    {\n");
    emit_level(o, g, false, 0, 0, 0, mr, nr);
    for (int v = 0; v < nv; v++) emit_level(o, g, false, g->bj, 0, v, mr, nr);
    for (int ii = 0; ii < mr; ii++) emit_level(o, g, false, g->bi, ii, 0, mr, nr);
    for (int ii = 0; ii < mr; ii++)
        for (int v = 0; v < nv; v++) emit_level(o, g, false, g->bi | g->bj, ii, v, mr, nr);
    if (sparse) {
        /* the lanes of each vector inside the panel's nb columns */
        for (int v = 0; v < nv; v++) {
            int w = s->w, b = v * w;
            if (s->level == K_ISA_AVX512)
                sb_printf(o, "    const __mmask8 mk%d = (__mmask8)(g->nb >= %d ? 0xff : g->nb <= %d ? 0 : "
                          "(1u << (g->nb - %d)) - 1);\n", v, b + w, b, b);
            else if (s->level == K_ISA_AVX2)
                sb_printf(o, "    const __m256i mk%d = _mm256_set_epi64x(-(g->nb > %d), -(g->nb > %d), -(g->nb > %d), "
                          "-(g->nb > %d));\n", v, b + 3, b + 2, b + 1, b);
            else sb_printf(o, "    const int mk%d = g->nb > %d;\n", v, b);
        }
        /* k of the q-th non-zero: the CSR's column index less k's start */
        sb_puts(o, "    for (int64_t q = 0; q < kc; q++) {\n    const int64_t kk = (int64_t)g->kx[q] - g->k0;\n");
    }
    else sb_puts(o, "    for (int64_t kk = 0; kk < kc; kk++) {\n");
    emit_level(o, g, true, 0, 0, 0, mr, nr);
    for (int v = 0; v < nv; v++) emit_level(o, g, true, g->bj, 0, v, mr, nr);
    for (int ii = 0; ii < mr; ii++) {
        sb_puts(o, "      {\n");
        emit_level(o, g, true, g->bi, ii, 0, mr, nr);
        for (int v = 0; v < nv; v++) {
            emit_level(o, g, true, g->bi | g->bj, ii, v, mr, nr);
            for (int t = 0; t < g->norder; t++)
                if (!skip[g->order[t]]) emit_node(o, g, g->order[t], ii, v, mr, nr);
            for (int r = 0; r < k->nroot; r++) {
                const KNode *rt = &k->n[k->root[r]];
                WhereAcc acc = g->p->res[r]->acc;
                char rv[48], cn[40], x[48], y[48];
                vname(g, k->root[r], ii, v, rv, sizeof rv);
                snprintf(cn, sizeof cn, "c%d_%d_%d", r, ii, v);
                sb_printf(o, "        %s = ", cn);
                if (fused[r]) vname(g, rt->a, ii, v, x, sizeof x);
                if (fused[r] && rt->k == KN_BIN) {
                    vname(g, rt->b, ii, v, y, sizeof y);
                    sb_printf(o, "%s_fmadd_pd(%s, %s, %s)", pfx(s), x, y, cn);
                } else if (fused[r]) {
                    sb_printf(o, "_mm512_mask_add_pd(%s, %s, %s, _mm512_set1_pd(1.0))", cn, x, cn);
                } else {
                    bin(o, s, acc == WA_ADD ? OP_PLUS : acc == WA_MIN ? OP_MIN : OP_MAX, cn, rv);
                }
                sb_puts(o, ";\n");
            }
        }
        sb_puts(o, "      }\n");
    }
    sb_puts(o, "    }\n    }\n");
    /* the tiles, result r's at ct + r * mr * nr */
    for (int r = 0; r < k->nroot; r++)
        for (int ii = 0; ii < mr; ii++)
            for (int v = 0; v < nv; v++) {
                int off = r * mr * nr + ii * nr + v * s->w;
                if (s->level == K_ISA_GENERIC) sb_printf(o, "    g->ct[%d] = c%d_%d_%d;\n", off, r, ii, v);
                else sb_printf(o, "    %s_storeu_pd(g->ct + %d, c%d_%d_%d);\n", pfx(s), off, r, ii, v);
            }
    sb_puts(o, "}\n");
}

/* Vectors of the sparse kernel's one-row tile: as many as the register
 * budget takes (up to 4) and R's N columns fill (N <= 0: up to 4), 0
 * when the loop has no sparse operand. A narrow result gets a narrow
 * tile: 4 columns ran a 32-wide tile (8x the work) over a copy of B 32
 * wide made on every call. */
static int sparse_nv(const Gen *g, int64_t N)
{
    if (g->p->zleaf < 0) return 0;
    int nv = 4;
    if (N > 0 && N < 4 * (int64_t)g->s.w) nv = (int)((N + g->s.w - 1) / g->s.w);
    while (nv > 1 && regs_needed(g, 1, nv) > g->s.regs) nv--;
    return nv;
}

/* The kernel's C source: the dense kernel (and its pack function), or,
 * sparse, the sparse one of a loop whose body is zero where an (i,k)
 * operand is (p->zleaf; sparse_nv > 0). Apart, so that a run compiles
 * only the variant it runs: the dense kernel was ~5% of a dense run's
 * compile time for the sparse one it carried, and a sparse run compiled
 * the dense kernel (~40% of its compile) it never ran. */
static char *gen_source(Gen *g, int mr, int nv, bool sparse, uint64_t hash)
{
    const Isa *s = &g->s;
    StrBuf o = {0};
    sb_puts(&o, cg_prelude);
    if (s->level != K_ISA_GENERIC) sb_puts(&o, cg_prelude_vec);
    sb_printf(&o, "/* AMULET %skernel: %d x %d, %s */\n", sparse ? "sparse " : "", mr, nv * s->w,
              k_isa_name(s->level));
    sb_printf(&o, "typedef struct cg_amargs { int64_t kc; const double *p[%d]; int64_t rs[%d], cs[%d]; double *ct; "
              "const int32_t *kx; const double *av; double *pf; int64_t k0, nb; } cg_amargs;\n", AM_MAXLEAVES, AM_MAXLEAVES,
              AM_MAXLEAVES);
    g->spl = sparse ? g->p->zleaf : -1;
    g->prepack = !sparse && g->nslot > 0;
    if (g->prepack) gen_pack(&o, g, mr);
    gen_fn(&o, g, mr, nv, sparse);
    g->prepack = false;
    g->spl = -1;
    sb_printf(&o, "\nconst unsigned long long cg_hash = 0x%016llxULL;\n", (unsigned long long)hash);
    return o.s;
}

/* ---- the driver ---- */

typedef void (*AmKernel)(const void *args);

/* The phases of a team thread that a traced run times (Drv.ph): fork,
 * pack, barrier, tiles, tail; for the first AM_PHT threads. */
#define AM_PHASES 5
#define AM_PHT 8
typedef struct AmArgs {
    int64_t kc;
    const double *p[AM_MAXLEAVES];
    int64_t rs[AM_MAXLEAVES], cs[AM_MAXLEAVES];
    double *ct;
    const int32_t *kx;     /* sparse kernel: the row's non-zeros' columns, */
    const double *av;      /*   their values, */
    double *pf;            /* the tile's (i,k) values (cg_amulet_pk) */
    int64_t k0;            /* sparse kernel: kx[q] - k0 is the q-th's k, */
    int64_t nb;            /*   and the panel's columns (<= nr) */
} AmArgs;

typedef struct Drv {
    const AmPlan *p;
    const AmBind *b;
    AmKernel fn;
    AmKernel pk;           /* the pack function of the (i,k) values, NULL */
    int nslot;             /*   and their number */
    int mr, nr;
    int cls[AM_MAXLEAVES];
    int ti, tj, tk;        /* loop variables i, j, k */
    double *jpad[AM_MAXLEAVES];  /* (j) leaves padded to a multiple of nr, */
    double *jbuf;                /*   all in this block (pad_jleaves) */
    /* the sparse kernel's per-thread buffers (run_sparse): thread t's
     * at tbuf + t * tper, its tile, then for a stepped k its row's
     * gathered values and k indexes */
    double *tbuf;
    size_t tper;
    double *bpk[AM_MAXLEAVES];   /* packed (k,j) panels of the block */
    int64_t bcap;
    int threads;           /* the most threads a block's team may have */
    /* (k,j) operands packed once for all blocks of kc (the search's
     * sub-tasks share them): k in [0, bfp_k), all columns, block kb's
     * panels at bfp[l] + kb * npad, as run_block lays out bpk; bfp_kc 0
     * when none */
    double *bfp[AM_MAXLEAVES];
    int64_t bfp_kc, bfp_k;
    /* the search's packed (i,k) tiles (run_block's ablk), lent to every
     * block of its strips: akeep_cells doubles per (i,k) leaf, 0 when
     * none (search_ablk) */
    double *akeep[AM_MAXLEAVES];
    int64_t akeep_cells;
    /* meter: run_block adds each team thread's CPU seconds in its work
     * (packing and tiles, not the barriers' waits) to cpu (the search's
     * score, subtask) */
    bool meter;
    double cpu;
    /* phases (traced runs only, else NULL): per team thread (up to
     * AM_PHT) its wall seconds from the fork to its start, packing, the
     * wait at the barrier after packing, tiles, and the wait from its
     * last tile to the join; span: the teams' wall from fork to join */
    double (*ph)[AM_PHASES];
    double span;
    int regions;
} Drv;

/* Packs (k,j) leaf l's panel of columns [js, js + nr) (zero from j1 on)
 * over k in [kb, kb + kcb) into dst: kcb rows of nr. */
static void pack_panel(const Drv *d, int l, int64_t kb, int64_t kcb, int64_t js, int64_t j1, double *dst)
{
    const AmBind *b = d->b;
    int nr = d->nr;
    int64_t w = BR_MIN(nr, j1 - js), sj = b->st[l][d->tj];
    for (int64_t kk = 0; kk < kcb; kk++) {
        const double *src = b->base[l] + (kb + kk) * b->st[l][d->tk] + js * sj;
        double *o = dst + kk * nr;
        if (sj == 1) memcpy(o, src, (size_t)w * sizeof(double));
        else for (int jj = 0; jj < w; jj++) o[jj] = src[jj * sj];
        for (int jj = (int)w; jj < nr; jj++) o[jj] = 0;
    }
}

/* Does d->bfp hold the panels of the block at kb (kcb deep, kc blocks)
 * from column jb on, up to R's last column j1? */
static bool prepacked(const Drv *d, int64_t kb, int64_t kcb, int64_t kc, int64_t jb, int64_t j1)
{
    return d->bfp_kc == kc && kb % kc == 0 && jb % d->nr == 0 && j1 == d->b->n[d->tj] &&
           kcb == BR_MIN(kc, d->bfp_k - kb);
}

/* Packs every (k,j) leaf once for blocks of kc over k in [0, kx) into
 * bfp (the layout prepacked reads; from the calling thread's pool,
 * br_alloc_scratch: a search per call, BRAID_AMULET=search, took them
 * back); false when out of memory. */
static bool pack_full(const Drv *d, int64_t kc, int64_t kx, double **bfp)
{
    int64_t N = d->b->n[d->tj], nr = d->nr, npad = (N + nr - 1) / nr * nr;
    bool ok = true;
    for (int l = 0; l < d->p->nleaf; l++) {
        bfp[l] = NULL;
        if (d->cls[l] != LC_B) continue;
        bfp[l] = br_alloc_scratch(((size_t)kx * (size_t)npad + 1) * sizeof(double));
        if (!bfp[l]) { ok = false; continue; }
#pragma omp parallel for num_threads(d->threads) if (d->threads > 1) schedule(dynamic)
        for (int64_t s = 0; s < npad / nr; s++)
            for (int64_t kb = 0; kb < kx; kb += kc) {
                int64_t kcb = BR_MIN(kc, kx - kb);
                pack_panel(d, l, kb, kcb, s * nr, N, bfp[l] + kb * npad + s * kcb * nr);
            }
    }
    return ok;
}

/* Merges the kernel's tiles (result r's at ct + r * mr * nr, rows of
 * nr) into the results; mr: the tile's rows (the kernel's, or 1 for the
 * sparse kernel), mrb x nrb of them inside R. */
static void merge(const Drv *d, const double *ct, int mr, int64_t i0, int64_t j0, int mrb, int nrb)
{
    const AmBind *b = d->b;
    for (int q = 0; q < d->p->nres; q++) {
        WhereAcc acc = d->p->res[q]->acc;
        for (int ii = 0; ii < mrb; ii++) {
            double *r = b->r[q] + (i0 + ii) * b->rst[q][d->ti] + j0 * b->rst[q][d->tj];
            const double *c = ct + ((size_t)q * mr + ii) * d->nr;
            /* elementwise, vectorized: the same bits as one at a time */
            if (acc == WA_ADD) {
#pragma omp simd
                for (int jj = 0; jj < nrb; jj++) r[jj] += c[jj];
            } else if (acc == WA_MIN) {
#pragma omp simd
                for (int jj = 0; jj < nrb; jj++) r[jj] = c[jj] < r[jj] ? c[jj] : r[jj];
            } else {
#pragma omp simd
                for (int jj = 0; jj < nrb; jj++) r[jj] = c[jj] > r[jj] ? c[jj] : r[jj];
            }
        }
    }
}

/* Packs (i,k) leaf l's tile of rows [ia, ia + mrb) (zero up to mr)
 * over k in [kb, kb + kcb) into dst: kcb columns of mr. */
static void pack_tile(const Drv *d, int l, int64_t ia, int mrb, int64_t kb, int64_t kcb, double *dst)
{
    const int64_t *st = d->b->st[l];
    int64_t si = st[d->ti], sk = st[d->tk];
    const double *src = d->b->base[l] + ia * si + kb * sk;
    int mr = d->mr, ii = 0;
    if (sk == 1 && si != 1) {
        /* rows contiguous in k (A[i,k] of a row-major A): two rows at a
         * time, each read in order */
        for (; ii + 1 < mrb; ii += 2) {
            const double *r0 = src + ii * si, *r1 = r0 + si;
            double *o = dst + ii;
            for (int64_t kk = 0; kk < kcb; kk++) {
                o[kk * mr] = r0[kk];
                o[kk * mr + 1] = r1[kk];
            }
        }
        for (; ii < mrb; ii++)
            for (int64_t kk = 0; kk < kcb; kk++) dst[kk * mr + ii] = src[ii * si + kk];
        for (ii = mrb; ii < mr; ii++)
            for (int64_t kk = 0; kk < kcb; kk++) dst[kk * mr + ii] = 0;
        return;
    }
    /* columns contiguous in i (A[k,i], a column-major A) or any strides:
     * one k at a time */
    for (int64_t kk = 0; kk < kcb; kk++) {
        const double *c = src + kk * sk;
        double *o = dst + kk * mr;
        for (ii = 0; ii < mrb; ii++) o[ii] = c[ii * si];
        for (; ii < mr; ii++) o[ii] = 0;
    }
}

/* Tile t of rows (from i0, below i1) and column panel s (from jb,
 * below j1) of run_block's block at kb (kcb deep): its operands set up in
 * g, the kernel run, the tile merged into the results. apk: the thread's
 * buffers (packed (i,k) operands, the kernel's tile, edge copies);
 * *packed: the tile whose (i,k) values apk holds. */
static void run_tile(const Drv *d, double *apk, AmArgs *gp, int64_t *packed, int64_t t, int64_t s, int64_t i0,
                     int64_t i1, int64_t jb, int64_t j1, int64_t kb, int64_t kcb, bool pack, bool pre,
                     double *const *ablk)
{
    const AmPlan *p = d->p;
    const AmBind *b = d->b;
    int mr = d->mr, nr = d->nr, ti = d->ti, tj = d->tj, tk = d->tk;
    int64_t npad = (b->n[tj] + nr - 1) / nr * nr;
    size_t nl = (size_t)p->nleaf, nres = (size_t)p->nres;
    AmArgs g = *gp;
    int64_t ia = i0 + t * mr, js = jb + s * nr;
    int mrb = (int)BR_MIN(mr, i1 - ia), nrb = (int)BR_MIN(nr, j1 - js);
    double *ct = apk + (size_t)kcb * mr * nl;
    double *ijt = ct + (size_t)mr * nr * nres, *ib = ijt + (size_t)mr * nr * nl;
    g.kc = kcb;
    g.ct = ct;
    for (int l = 0; l < p->nleaf; l++) {
        const int64_t *st = b->st[l];
        switch (d->cls[l]) {
        case LC_S: g.p[l] = &b->sval[l]; break;
        case LC_I:
            for (int ii = 0; ii < mr; ii++) ib[l * mr + ii] = ii < mrb ? b->base[l][(ia + ii) * st[ti]] : 0;
            g.p[l] = ib + l * mr;
            g.rs[l] = 1;
            break;
        case LC_J: g.p[l] = d->jpad[l] + js; break;   /* padded from column 0 */
        case LC_K: g.p[l] = b->base[l] + kb * st[tk]; g.cs[l] = st[tk]; break;
        case LC_IJ:
            if (mrb == mr && nrb == nr && st[tj] == 1) {
                g.p[l] = b->base[l] + ia * st[ti] + js;
                g.rs[l] = st[ti];
            } else {
                double *q = ijt + (size_t)l * mr * nr;
                for (int ii = 0; ii < mr; ii++)
                    for (int jj = 0; jj < nr; jj++)
                        q[ii * nr + jj] = ii < mrb && jj < nrb ? b->base[l][(ia + ii) * st[ti] + (js + jj) * st[tj]] : 0;
                g.p[l] = q;
                g.rs[l] = nr;
            }
            break;
        case LC_A:
            if (ablk && ablk[l]) {   /* the block's tiles packed by the team */
                g.p[l] = ablk[l] + (size_t)t * kcb * mr;
                g.rs[l] = 1;
                g.cs[l] = mr;
            } else if (pack || mrb < mr) {
                double *q = apk + (size_t)l * kcb * mr;
                if (*packed != t) pack_tile(d, l, ia, mrb, kb, kcb, q);
                g.p[l] = q;
                g.rs[l] = 1;
                g.cs[l] = mr;
            } else {
                g.p[l] = b->base[l] + ia * st[ti] + kb * st[tk];
                g.rs[l] = st[ti];
                g.cs[l] = st[tk];
            }
            break;
        default:
            g.p[l] = pre ? d->bfp[l] + kb * npad + (jb / nr + s) * kcb * nr : d->bpk[l] + s * kcb * nr;
            g.cs[l] = nr;
            break;
        }
    }
    g.pf = ib + (size_t)mr * nl;
    if (d->pk && *packed != t) d->pk(&g);
    *packed = t;
    d->fn(&g);
    merge(d, ct, mr, ia, js, mrb, nrb);
    *gp = g;
}

/* The calling thread's CPU seconds. */
static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A core's L2 in bytes (sysconf; 1 MiB when it does not say). */
static double l2_bytes(void)
{
    static long have;   /* 0: not asked yet */
    long v = __atomic_load_n(&have, __ATOMIC_RELAXED);
    if (!v) {
        v = sysconf(_SC_LEVEL2_CACHE_SIZE);
        if (v <= 0) v = 1L << 20;
        __atomic_store_n(&have, v, __ATOMIC_RELAXED);
    }
    return (double)v;
}

/* The most doubles of (k,j) panels the search packs ahead (64 MiB): its
 * sub-tasks then share one packing instead of packing per band. */
#define AM_PREPACK (8.0 * 1024 * 1024)

/* Allocates run_block's packed (i,k) tiles: per (i,k) leaf, ntile tiles
 * of kc x mr, from the calling thread's pool (br_alloc_scratch: the
 * caller of run_block or search, or a run_split chunk's thread, each
 * bound to the context's; until 2026-12-02 tiles under the pool's
 * smallest class were allocated per call); false (none) over AM_PREPACK
 * or out of memory. */
static bool alloc_ablk(const Drv *d, int64_t ntile, int64_t kc, double **ablk)
{
    int na = 0;
    for (int l = 0; l < d->p->nleaf; l++) na += d->cls[l] == LC_A;
    if ((double)na * (double)ntile * (double)kc * d->mr > AM_PREPACK) return false;
    for (int l = 0; l < d->p->nleaf; l++)
        if (d->cls[l] == LC_A && !(ablk[l] = br_alloc_scratch((size_t)ntile * (size_t)kc * d->mr * sizeof(double)))) {
            for (int x = 0; x < l; x++) br_free_aligned(ablk[x]);
            memset(ablk, 0, AM_MAXLEAVES * sizeof *ablk);
            return false;
        }
    return true;
}

static void free_ablk(double **ablk)
{
    for (int l = 0; l < AM_MAXLEAVES; l++) br_free_aligned(ablk[l]);
}

/* A block's team (am_team, then br_par): rows in ntile tiles, kcb deep,
 * ncb columns. On a crowded machine a block under about a millisecond
 * (br_par: 2^20 cells of a pass, some 8 (i,j,k) iterations each; am_team
 * alone decides otherwise) runs on one thread: its team would wait a
 * scheduler time slice for a core at the block's barriers (same tiles,
 * same order: same bits). With one tile (k-means' t(P) %*% X: M = 5,
 * N = 10, K = 10^6) every kc block ran a team whose second thread only
 * waited at the barriers, about 1000x the block's work on a loaded
 * machine; with AVX2's smaller tiles the same result is two tiles of a
 * few thousand iterations. */
static int block_team(const Drv *d, int64_t ntile, int64_t kcb, int64_t ncb)
{
    int mr = d->mr, nr = d->nr;
    int64_t nsl = (ncb + nr - 1) / nr;
    int nt = am_team(ntile * nsl, kcb, mr, nr, d->threads);
    if (nt > 1 && !br_par(BR_MAX((double)BR_PAR_MIN, (double)ntile * nsl * kcb * mr * nr / 8))) nt = 1;
    return nt;
}

/* run_block's call, shared by its team: the blocks' bounds, their teams
 * (blk_team: the interior blocks' and the edges' at the last k block
 * and the last column block), the packed tiles, the threads' buffers. */
typedef struct Blocks {
    Drv *d;
    int64_t i0, i1, j0, j1, k0, k1, kc, nc, ntile;
    bool pack, ashare;
    int team[2][2];        /* [last k block][last column block] */
    double *const *ablk;   /* the team's packed (i,k) tiles, NULL */
    double *abuf;          /* thread t's buffers at abuf + t * per */
    size_t per;
    /* next[b % 2][q]: block b's part q's next tile (two: a block's are
     * set while the team still takes the previous one's) */
    int64_t next[2][AM_MAXPARTS];
    /* pc[b % 2]: block b's packing counters (pack_share): part q's
     * next panel (q < AM_MAXPARTS), the next shared (i,k) tile (last);
     * double-buffered as next */
    int64_t pc[2][AM_MAXPARTS + 1];
    double tfork, tend[AM_PHT];
} Blocks;

/* The packing's test hook (am_pack_hook) and the units each team
 * thread packed (am_pack_counts: [thread][0] (k,j) panels, [1] shared
 * (i,k) tiles). */
static _Atomic(AmPackHook) g_pack_hook;
static _Atomic int64_t g_packed[AM_PHT][2];

void am_pack_hook(AmPackHook h) { atomic_store_explicit(&g_pack_hook, h, memory_order_release); }

void am_pack_counts(int64_t *panels, int64_t *tiles, int n)
{
    for (int t = 0; t < n; t++) {
        panels[t] = t < AM_PHT ? atomic_load_explicit(&g_packed[t][0], memory_order_relaxed) : 0;
        tiles[t] = t < AM_PHT ? atomic_load_explicit(&g_packed[t][1], memory_order_relaxed) : 0;
    }
}

/* Takes units from counter *c (atomically on a team) below n. */
static int64_t take(int64_t *c, bool multi) { return multi ? __atomic_fetch_add(c, 1, __ATOMIC_RELAXED) : (*c)++; }

/* Thread me's share of a team block's packing (bt threads, parts
 * column parts of nsl panels, block at kb, kcb deep, from column jb):
 * the (k,j) panels (unless prepacked: pre) and, when ashare, the shared
 * (i,k) tiles, taken one unit at a time from the block's counters pc:
 * first the thread's own part's panels (it runs them over every tile:
 * packed by it, they are in its L2; one part: every thread's), then the
 * tiles, then what is left of the other parts. So the packing is split
 * by which thread is free, not by count: until 2026-12-02 each thread
 * packed a fixed half, and a thread slowed in its half made the others
 * wait at the barrier after it. On this project's virtual machine the
 * first touch of a fresh buffer's page costs about 20 us (the host
 * backs the page then: 10 ms a 2 MiB), and which half the fresh pages
 * fell in decided the wait (Q3 at 1024 on 2 threads: t0 510 faults,
 * 10.3 ms of packing, t1 10 faults, 0.9 ms, the same 16 panels and 43
 * tiles each; the lead's quiet run: 11 against 2.6 ms, t1 8.8 ms at the
 * barrier). Each unit is packed whole by one thread: the same bits.
 * npk[0], npk[1]: the panels and tiles this thread packed. */
static void pack_share(const Blocks *s, int64_t *pc, int me, int bt, int parts, int64_t kb, int64_t kcb, int64_t jb,
                       int64_t nsl, bool pre, bool ashare, int64_t npk[2])
{
    const Drv *d = s->d;
    const AmPlan *p = d->p;
    int mr = d->mr, nr = d->nr;
    bool multi = bt > 1;
    /* v -1: the own part (none for a thread past the parts); v 0: the
     * tiles; v 1..parts: every part from the thread's on */
    for (int v = -1; v <= parts; v++) {
        int64_t u;
        if (v == 0) {
            while (ashare && (u = take(&pc[AM_MAXPARTS], multi)) < s->ntile) {
                for (int l = 0; l < p->nleaf; l++)
                    if (s->ablk[l])
                        pack_tile(d, l, s->i0 + u * mr, (int)BR_MIN(mr, s->i1 - s->i0 - u * mr), kb, kcb,
                                  s->ablk[l] + (size_t)u * kcb * mr);
                npk[1]++;
            }
            continue;
        }
        if (pre || (v < 0 && me >= parts)) continue;
        int q = (me + BR_MAX(v - 1, 0)) % parts;
        int64_t x0 = nsl * q / parts, n = nsl * (q + 1) / parts - x0;
        while ((u = take(&pc[q], multi)) < n) {
            for (int l = 0; l < p->nleaf; l++)
                if (d->cls[l] == LC_B)
                    pack_panel(d, l, kb, kcb, jb + (x0 + u) * nr, s->j1, d->bpk[l] + (x0 + u) * kcb * nr);
            npk[0]++;
        }
    }
}

/* Thread me of a team of tn runs every block of the call in order (each
 * thread walks the same blocks and meets the same barriers). A block
 * whose team is one thread (blk_team, or tn 1) is run by thread 0
 * alone. A team block: its (k,j) panels (and the shared (i,k) tiles)
 * packed by the team, a barrier, its tiles; before a block that follows
 * a team block or is one, a barrier (the team's tiles of the last block
 * done: its panels are packed over, and the next k block's tiles merge
 * into the same cells of R after it). One parallel region for the
 * whole call: until 2026-12-02 every block forked its own team, and
 * with GOMP_SPINCOUNT low the idle thread slept between the regions
 * (Q2 at 1024: t0 6.3 of 62.5 ms in forks). */
static void team_blocks(Blocks *s, int me, int tn)
{
    Drv *d = s->d;
    const AmPlan *p = d->p;
    int nr = d->nr;
    int64_t i0 = s->i0, i1 = s->i1, j1 = s->j1, ntile = s->ntile;
    double *ph = d->ph && me < AM_PHT ? d->ph[me] : NULL, w0 = ph ? omp_get_wtime() : 0, w1 = 0;
    if (ph) ph[0] += w0 - s->tfork;
    double work = 0, c0 = 0;
    double *apk = s->abuf + (size_t)me * s->per;
    bool prev = false;   /* the last block was a team's */
    int64_t b = 0, npk[2] = {0, 0};
    for (int64_t kb = s->k0; kb < s->k1; kb += s->kc) {
        int64_t kcb = BR_MIN(s->kc, s->k1 - kb);
        for (int64_t jb = s->j0; jb < j1; jb += s->nc, b++) {
            int64_t ncb = BR_MIN(s->nc, j1 - jb), nsl = (ncb + nr - 1) / nr;
            int bt = BR_MIN(s->team[kb + s->kc >= s->k1][jb + s->nc >= j1], tn);
            bool multi = bt > 1, pre = prepacked(d, kb, kcb, s->kc, jb, j1);
            if (multi || prev) {
                if (ph) w1 = omp_get_wtime();
#pragma omp barrier
                if (ph) ph[4] += omp_get_wtime() - w1;
            }
            prev = multi;
            if (!multi && me > 0) continue;
            if (ph) w0 = omp_get_wtime();
            if (d->meter) c0 = thread_cpu();
            /* the team's schedule (am_parts): where the block's panels
             * overflow L2, its column panels cut into `parts` contiguous
             * parts, part q owned by thread q, which packs its panels
             * and runs them for every tile of rows (the tile's (i,k)
             * values stay in L1 across its panels, the part's panels in
             * its core's L2 across the tiles: each core holds 1/nt of
             * the block, where a shared pool of (tile, panel) chunks made
             * every core stream all of it); else one part, whole tiles
             * to the threads. next[q]: part q's next tile, which a
             * thread done with its own part takes too (a thread that
             * lost its core on a shared machine does not hold the
             * block). Each (tile, panel) is computed whole by one
             * thread: the same bits under any schedule. */
            double bytes = 0;
            for (int l = 0; l < p->nleaf; l++) bytes += d->cls[l] == LC_B ? (double)kcb * (double)(nsl * nr) * 8 : 0;
            int parts = am_parts(nsl, bt, bytes > l2_bytes());
            /* packed (i,k) operands of a block cut into parts: each tile
             * packed once, by the team before the barrier (ablk), not
             * by every thread that runs it (each thread ran every tile
             * of its part: 2 threads packed all of A twice); without
             * the memory for them (AM_PREPACK), by each thread */
            bool ashare = s->ashare && parts > 1;
            if (!pre || ashare) {
                AmPackHook hook = atomic_load_explicit(&g_pack_hook, memory_order_acquire);
                if (hook && bt > 1) hook(me, bt, b, true);
                pack_share(s, s->pc[b % 2], me, bt, parts, kb, kcb, jb, nsl, pre, ashare, npk);
                if (hook && bt > 1) hook(me, bt, b, false);
            }
            if (d->meter) work += thread_cpu() - c0;
            if (ph) ph[1] += (w1 = omp_get_wtime()) - w0;
            if (multi && (!pre || ashare)) {
#pragma omp barrier
            }
            if (ph) ph[2] += (w0 = omp_get_wtime()) - w1;
            if (d->meter) c0 = thread_cpu();
            /* the team is done with the last block's counters (the
             * barrier above, or before this block): the next block's */
            if (me == 0) {
                for (int q = 0; q < AM_MAXPARTS; q++) s->next[(b + 1) % 2][q] = 0;
                for (int q = 0; q <= AM_MAXPARTS; q++) s->pc[(b + 1) % 2][q] = 0;
            }
            int64_t *next = s->next[b % 2], packed = -1;
            AmArgs g;
            memset(&g, 0, sizeof g);
            for (int v = 0; v < parts; v++) {
                int q = (me + v) % parts;
                int64_t s0 = nsl * q / parts, s1 = nsl * (q + 1) / parts, t;
                while ((t = multi ? __atomic_fetch_add(&next[q], 1, __ATOMIC_RELAXED) : next[q]++) < ntile)
                    for (int64_t x = s0; x < s1; x++)
                        run_tile(d, apk, &g, &packed, t, x, i0, i1, jb, j1, kb, kcb, s->pack, pre,
                                 ashare ? s->ablk : NULL);
            }
            if (d->meter) work += thread_cpu() - c0;
            if (ph) ph[3] += omp_get_wtime() - w0;
        }
    }
    if (d->meter) {
#pragma omp atomic update
        d->cpu += work;
    }
    for (int x = 0; x < 2 && me < AM_PHT; x++) atomic_fetch_add_explicit(&g_packed[me][x], npk[x], memory_order_relaxed);
    if (ph) s->tend[me] = omp_get_wtime();
}

/* Parallel regions run_block opened since the start (am_regions). */
static _Atomic int64_t g_regions;

int64_t am_regions(void) { return atomic_load_explicit(&g_regions, memory_order_relaxed); }

/* One block: rows [i0, i1), columns [j0, j1), k in [k0, k1), kc x nc
 * tiles; pack: (i,k) operands packed (else read with strides). All of it
 * in one parallel region (team_blocks) when some block has a team, else
 * on the calling thread. */
static int run_block(Drv *d, int64_t i0, int64_t i1, int64_t j0, int64_t j1, int64_t k0, int64_t k1, int64_t kc,
                     int64_t nc, bool pack)
{
    const AmPlan *p = d->p;
    int mr = d->mr, nr = d->nr;
    if (i1 <= i0 || j1 <= j0 || k1 <= k0) return 0;
    Blocks s = {.d = d, .i0 = i0, .i1 = i1, .j0 = j0, .j1 = j1, .k0 = k0, .k1 = k1, .kc = kc, .nc = nc,
                .ntile = (i1 - i0 + mr - 1) / mr, .pack = pack};
    /* the blocks' teams: the interior blocks' and the edges' (the last
     * block over k and over the columns may be narrower), each asked
     * once per call */
    int64_t kl = (k1 - k0) - (k1 - k0 - 1) / kc * kc, nl_ = (j1 - j0) - (j1 - j0 - 1) / nc * nc;
    int nt = 1;
    bool over = false;   /* some team block's panels overflow L2 */
    for (int ke = 0; ke < 2; ke++)
        for (int je = 0; je < 2; je++) {
            bool kin = k1 - k0 > kc, jin = j1 - j0 > nc;   /* interior blocks exist */
            if ((!ke && !kin) || (!je && !jin)) continue;
            int64_t kcb = ke ? kl : kc, ncb = je ? nl_ : nc, nsl = (ncb + nr - 1) / nr;
            s.team[ke][je] = block_team(d, s.ntile, kcb, ncb);
            nt = BR_MAX(nt, s.team[ke][je]);
            double bytes = 0;
            for (int l = 0; l < p->nleaf; l++) bytes += d->cls[l] == LC_B ? (double)kcb * (double)(nsl * nr) * 8 : 0;
            over = over || (s.team[ke][je] > 1 && am_parts(nsl, s.team[ke][je], bytes > l2_bytes()) > 1);
        }
    /* each team thread's buffers (packed (i,k) operands, the kernel's
     * tile, edge copies: run_tile's apk, kc deep), for every block of
     * the call, taken by the calling thread (bound to the context's
     * pool, which the team's threads are not: a script's loop of small
     * where-loops takes them back from it, br_alloc_scratch) */
    size_t nl = (size_t)p->nleaf, nres = (size_t)p->nres, kcx = (size_t)BR_MIN(kc, k1 - k0);
    s.per = (kcx * mr * nl + (size_t)mr * nr * (nl + nres) + (size_t)mr * nl + kcx * mr * (size_t)d->nslot + 7) / 8 * 8;
    s.abuf = br_alloc_scratch((size_t)BR_MAX(1, d->threads) * s.per * sizeof(double));
    if (!s.abuf) return -1;
    /* the team's packed (i,k) tiles where a block is cut into parts:
     * the search's (akeep), else allocated here (alloc_ablk) */
    double *ablk[AM_MAXLEAVES] = {0};
    bool lent = false;
    if (pack && over) {
        lent = d->akeep_cells >= s.ntile * kc * mr;
        if (lent) memcpy(ablk, d->akeep, sizeof ablk);
        s.ashare = lent || alloc_ablk(d, s.ntile, kc, ablk);
    }
    s.ablk = ablk;
    s.tfork = d->ph ? omp_get_wtime() : 0;
    if (nt > 1) {
        atomic_fetch_add_explicit(&g_regions, 1, memory_order_relaxed);
        /* the team may have fewer threads than nt (a where-loop
         * inside a parfor worker, where OpenMP runs nested regions
         * with one thread): every division of work is over the
         * team's real size */
        int team = 1;
#pragma omp parallel num_threads(nt)
        {
            int me = omp_get_thread_num(), tn = omp_get_num_threads();
            if (me == 0) team = tn;
            team_blocks(&s, me, tn);
        }
        if (d->ph) {
            double tjoin = omp_get_wtime();
            for (int x = 0; x < team && x < AM_PHT; x++) d->ph[x][4] += tjoin - s.tend[x];
            d->span += tjoin - s.tfork;
            d->regions++;
        }
    } else {
        team_blocks(&s, 0, 1);
    }
    if (!lent) free_ablk(ablk);
    br_free_aligned(s.abuf);
    return 0;
}

/* The tile-major schedule of a small result (am_split): K in `chunks`
 * contiguous ranges, each computed by one thread over all of R (its own
 * (k,j) panels, its own (i,k) packing, run_block on a team of one) into
 * a private partial result started at the accumulation's identity; the
 * partials then merged into R in chunk order. Which thread ran which
 * chunk does not change a bit of the result. */
static int run_split(Drv *d, int64_t M, int64_t N, int64_t K, int64_t kc, bool pack, int chunks)
{
    const AmPlan *p = d->p;
    const AmBind *b = d->b;
    int nres = p->nres, ti = d->ti, tj = d->tj;
    size_t cells = (size_t)M * (size_t)N;
    int64_t npad = (N + d->nr - 1) / d->nr * d->nr;
    double *part = br_alloc_scratch((size_t)chunks * (size_t)nres * cells * sizeof(double));
    if (!part) return -1;
    int failed = 0;
    /* each chunk's buffers from the context's pool: its thread bound to
     * it for the chunk (a team thread is not, br_pool_bind) */
    BrPool *pool = br_pool_current();
#pragma omp parallel for num_threads(chunks) schedule(static, 1)
    for (int c = 0; c < chunks; c++) {
        BrPool *prev = br_pool_bind(pool);
        Drv dc = *d;
        AmBind bc = *b;
        dc.b = &bc;
        dc.threads = 1;
        dc.ph = NULL;   /* each chunk's team of one: no phases */
        for (int q = 0; q < nres; q++) {
            WhereAcc acc = p->res[q]->acc;
            double *pq = part + ((size_t)c * nres + q) * cells, id = acc == WA_ADD ? 0 : acc == WA_MIN ? INFINITY : -INFINITY;
            for (size_t x = 0; x < cells; x++) pq[x] = id;
            bc.r[q] = pq;
            memset(bc.rst[q], 0, sizeof bc.rst[q]);
            bc.rst[q][ti] = N;
            bc.rst[q][tj] = 1;
        }
        bool ok = true;
        for (int l = 0; l < p->nleaf; l++) {
            dc.bpk[l] = NULL;
            if (d->cls[l] != LC_B) continue;
            dc.bpk[l] = br_alloc_scratch(((size_t)BR_MIN(kc, K) * (size_t)npad + 1) * sizeof(double));
            ok = ok && dc.bpk[l];
        }
        if (!ok || run_block(&dc, 0, M, 0, N, K * c / chunks, K * (c + 1) / chunks, kc, npad, pack)) {
#pragma omp atomic write
            failed = 1;
        }
        for (int l = 0; l < p->nleaf; l++) br_free_aligned(dc.bpk[l]);
        br_pool_bind(prev);
    }
    for (int q = 0; q < nres && !failed; q++) {
        WhereAcc acc = p->res[q]->acc;
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double *r = b->r[q] + i * b->rst[q][ti] + j * b->rst[q][tj];
                for (int c = 0; c < chunks; c++) {
                    double v = part[((size_t)c * nres + q) * cells + (size_t)i * N + j];
                    *r = acc == WA_ADD ? *r + v : acc == WA_MIN ? (v < *r ? v : *r) : (v > *r ? v : *r);
                }
            }
    }
    br_free_aligned(part);
    return failed ? -1 : 0;
}

/* ---- the sparse kernel ---- */

/* Copies of the (k,j) operands for the sparse kernel, which reads B's
 * row k in place at any non-zero's k: operands not contiguous in j
 * (B[j,k] of a row-major B) get a K x npad copy (bfull); contiguous ones
 * none (a partial last panel is read by masked loads: g->nb). */
static bool sparse_copies(Drv *d, int64_t N, int64_t K, double **bfull)
{
    const AmBind *b = d->b;
    int nr = d->nr;
    int64_t npad = (N + nr - 1) / nr * nr;
    for (int l = 0; l < d->p->nleaf; l++) {
        if (d->cls[l] != LC_B) continue;
        const int64_t *st = b->st[l];
        if (st[d->tj] == 1) continue;
        size_t n = ((size_t)K * (size_t)npad + 1) * sizeof(double);
        double *q = br_alloc_scratch(n);
        if (!q) return false;
        memset(q, 0, n);
        for (int64_t kk = 0; kk < K; kk++)
            for (int64_t j = 0; j < N; j++) q[kk * npad + j] = b->base[l][kk * st[d->tk] + j * st[d->tj]];
        bfull[l] = q;
    }
    return true;
}

/* The loop over the non-zeros of the sparse (i,k) operand b->sp (seed
 * 4.2's sparse A: the body is zero where it is) for rows [r0, r1) and
 * columns [c0, c1) of R: per row, the sparse kernel (fn) per panel of nr
 * columns over the row's non-zeros within k's range, merged into R. The
 * kernel reads them from the CSR in place (their columns and values; a
 * row's columns ascend, so those in range are one run of entries, found
 * by bisection), or, for a stepped k, gathered per row (k relative to its
 * start). Work nnz * columns; parallel over rows (each row of R written
 * by one thread). The (k,j) operands' copies bfull are sparse_copies'. */
static void sparse_block(Drv *d, AmKernel fn, int64_t r0, int64_t r1, int64_t c0, int64_t c1, int64_t K,
                         double *const *bfull)
{
    const AmPlan *p = d->p;
    const AmBind *b = d->b;
    const MB *m = b->sp;
    int nr = d->nr, ti = d->ti, tj = d->tj, tk = d->tk, spl = b->spleaf;
    int64_t N = b->n[tj], npad = (N + nr - 1) / nr * nr, i0 = b->from[ti] - 1, k0 = b->from[tk] - 1;
    int64_t s0 = c0 / nr, nsl = (c1 + nr - 1) / nr, step = b->step[tk];
    /* a sub-range of k: only the row's entries in [k0, k0 + K) */
    bool cut = k0 > 0 || k0 + K < m->cols;
#pragma omp parallel num_threads(d->threads)
    {
        size_t nl = (size_t)p->nleaf;
        double *ct = d->tbuf + (size_t)omp_get_thread_num() * d->tper;
        double *av = ct + (size_t)nr * (nl + (size_t)p->nres);
        int32_t *kx = (int32_t *)(av + K);
        AmArgs g;
        memset(&g, 0, sizeof g);
        /* the meter (subtask): this thread's CPU time in its rows, not
         * the wait for the others at the region's end (nowait) */
        double c0 = d->meter ? thread_cpu() : 0;
#pragma omp for schedule(dynamic, 16) nowait
        for (int64_t r = r0; r < r1; r++) {
            int64_t ia = i0 + r, q0 = m->rp[ia], q1 = m->rp[ia + 1];
            if (q0 == q1) continue;
            if (step == 1) {
                if (cut) {
                    q0 = mb_csr_lower(m->ci, q0, q1, k0);
                    q1 = mb_csr_lower(m->ci, q0, q1, k0 + K);
                }
                g.kx = m->ci + q0;
                g.av = m->v + q0;
                g.k0 = k0;
            } else {   /* at most K entries on the step (distinct columns) */
                int64_t nq = 0;
                for (int64_t q = q0; q < q1; q++) {
                    int64_t kk = am_k_of(m->ci[q] - k0, step, K);
                    if (kk < 0) continue;
                    kx[nq] = (int32_t)kk;
                    av[nq++] = m->v[q];
                }
                g.kx = kx;
                g.av = av;
                g.k0 = 0;
                q0 = 0;
                q1 = nq;
            }
            if (q0 == q1) continue;
            g.kc = q1 - q0;
            g.ct = ct;
            double *ijb = ct + (size_t)nr * p->nres;
            for (int64_t s = s0; s < nsl; s++) {
                int64_t js = s * nr;
                int nrb = (int)BR_MIN(nr, N - js);
                g.nb = nrb;
                for (int l = 0; l < p->nleaf; l++) {
                    const int64_t *st = b->st[l];
                    const double *base = b->base[l];
                    g.rs[l] = g.cs[l] = 0;
                    switch (d->cls[l]) {
                    case LC_S: g.p[l] = &b->sval[l]; break;
                    case LC_I: g.p[l] = base + r * st[ti]; break;
                    case LC_J: g.p[l] = d->jpad[l] + js; break;
                    case LC_K: g.p[l] = base; g.cs[l] = st[tk]; break;
                    case LC_IJ:
                        if (nrb == nr && st[tj] == 1) g.p[l] = base + r * st[ti] + js;
                        else {
                            double *q = ijb + (size_t)l * nr;
                            for (int jj = 0; jj < nr; jj++) q[jj] = jj < nrb ? base[r * st[ti] + (js + jj) * st[tj]] : 0;
                            g.p[l] = q;
                        }
                        break;
                    case LC_A:
                        g.p[l] = l == spl ? NULL : base + r * st[ti];
                        g.cs[l] = st[tk];
                        break;
                    default:   /* B's row k in place, or its copy */
                        if (bfull[l]) { g.p[l] = bfull[l] + js; g.cs[l] = npad; }
                        else { g.p[l] = base + js; g.cs[l] = st[tk]; }
                        break;
                    }
                }
                fn(&g);
                merge(d, ct, 1, r, js, 1, nrb);
            }
        }
        if (d->meter) {
            double w = thread_cpu() - c0;
#pragma omp atomic update
            d->cpu += w;
        }
    }
}

/* ---- adaptive parameters (seed 4.4-4.6) ---- */

typedef struct AmParams { int64_t kc, nc; int pack; } AmParams;

/* The size class of a call of M x N x K that remembered parameters are
 * kept for (in the plan cache's op and on disk): floor(log2) of each
 * size, each capped where a larger size no longer changes what the
 * search can find (K at 512: every kc it races, 32-512, fits; N at
 * 8192 and M at 2048: the strips' doubling widths and the race's row
 * bands), packed in one int. Until 2026-12-02 the choice was kept per
 * kernel and thread count alone, so a 30 x 25 x 20 call ran with the
 * kc 512, nc 384 a 1024^3 call had found, and a choice searched on a
 * small K (kc 64, say) would have cut a later large call into blocks
 * that merge into R 8 times as often. The seed searches in every run,
 * for the task at hand; the issue's memory per machine and kernel is
 * kept to calls of the same class. */
static int shape_class(int64_t M, int64_t N, int64_t K)
{
    int c[3];
    int64_t x[3] = {M, N, K}, cap[3] = {11, 13, 9};
    for (int q = 0; q < 3; q++) {
        c[q] = 0;
        for (int64_t v = x[q]; v > 1 && c[q] < cap[q]; v >>= 1) c[q]++;
    }
    return 1 + c[0] + 16 * c[1] + 256 * c[2];   /* 0: none */
}

/* sparse: the sparse kernel's parameters (its column block in nc);
 * shape: the call's class (shape_class) */
static void param_path(const CgContext *c, const CgOp *op, bool sparse, int shape, char *buf, size_t cap)
{
    uint64_t h = cg_hash_bytes(c->ccid, strlen(c->ccid), 11);
    snprintf(buf, cap, "%s/amulet-%016llx-%016llx-t%d-s%x%s.param", c->cachedir, (unsigned long long)op->plan->hash,
             (unsigned long long)h, br_threads(), (unsigned)shape, sparse ? "-sp" : "");
}

static bool params_load(const CgContext *c, const CgOp *op, bool sparse, int shape, AmParams *a)
{
    if (!c->disk_ok) return false;
    char path[1200];
    param_path(c, op, sparse, shape, path, sizeof path);
    FILE *f = fopen(path, "r");
    if (!f) return false;
    long long kc, nc;
    int pk;
    bool ok = fscanf(f, "%lld %lld %d", &kc, &nc, &pk) == 3 && kc > 0 && nc > 0;
    fclose(f);
    ok = ok && kc <= 512;   /* the packed panels hold at most 512 rows */
    if (ok) *a = (AmParams){kc, nc, pk != 0};
    return ok;
}

/* params_load once per op, variant, thread count and shape class in a
 * row: a loop too small to search (which saves no file) looked for the
 * file on every call (the path's hash, its printing and a failed open:
 * a fixed cost of each call, test_amulet params_once); the caller keeps
 * what it finds in op. (Calls that alternate classes look each time.) */
static bool params_probe(CgContext *c, CgOp *op, bool sparse, int shape, AmParams *a)
{
    int nt = br_threads();
    pthread_mutex_lock(&c->lock);
    bool look = op->am_probed[sparse] != nt || op->am_probed_shape[sparse] != shape;
    op->am_probed[sparse] = nt;
    op->am_probed_shape[sparse] = shape;
    pthread_mutex_unlock(&c->lock);
    return look && params_load(c, op, sparse, shape, a);
}

static void params_save(const CgContext *c, const CgOp *op, bool sparse, int shape, const AmParams *a)
{
    if (!c->disk_ok) return;
    char path[1200], tmp[1300];
    param_path(c, op, sparse, shape, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) return;
    fprintf(f, "%lld %lld %d\n", (long long)a->kc, (long long)a->nc, a->pack);
    if (fclose(f) == 0) rename(tmp, path);
    else unlink(tmp);
}

/* One sub-task of the search: rows [i0, i1), columns [j0, j1), k in
 * [k0, k1) under parameters a; returns its time per iteration (the
 * seed's score: time per unit of work): the CPU seconds its team's
 * threads spent in packing and tiles (run_block's meter), summed. Not
 * the wall clock: a sub-task or one of its threads descheduled on a
 * shared machine is not charged for the wait, and a thread idle at a
 * barrier while its partner finishes a band's last tile is not either:
 * a band of a few tiles over a team (27 rows of 9-row tiles on 2
 * threads) split them 2:1, where the whole run's many tiles balance,
 * and 2-thread wall-clock scores of the same candidate varied up to 50x
 * at load 14 (picking packing that was 5-8% slower on the quiet
 * machine). With one thread this is the thread's CPU time, as before. */
static double subtask(Drv *d, int64_t i0, int64_t i1, int64_t j0, int64_t j1, int64_t k0, int64_t k1,
                      const AmParams *a, int *rc)
{
    d->meter = true;
    d->cpu = 0;
    *rc |= run_block(d, i0, i1, j0, j1, k0, k1, a->kc, a->nc, a->pack);
    d->meter = false;
    double t = d->cpu / ((double)(i1 - i0) * (double)(j1 - j0) * (double)(k1 - k0));
    if (getenv("BRAID_AMULET_TRACE"))
        fprintf(stderr,
                "amulet: sub-task rows %lld-%lld columns %lld-%lld k %lld-%lld, kc %lld nc %lld pack %d: %.6g ns per "
                "iteration\n",
                (long long)i0, (long long)i1, (long long)j0, (long long)j1, (long long)k0, (long long)k1,
                (long long)a->kc, (long long)a->nc, a->pack, t * 1e9);
    return t;
}

/* The relative score difference a race takes as a tie (race). */
#define AM_MARGIN 0.02

/* The most candidates of one race. */
#define AM_RACE 16

/* The number of p's leaves of class cls. */
static int leaves_of(const Drv *d, int cls)
{
    int n = 0;
    for (int l = 0; l < d->p->nleaf; l++) n += d->cls[l] == cls;
    return n;
}

/* A race of the n candidate parameters a[] on bands of rows from r0
 * (below r1) that contribute to the result: each band of the same
 * height over all columns and k in [0, kx), so every candidate does the
 * same work, packs the same (k,j) values and merges into R as often per
 * k; two rounds when the rows allow, the second in reverse order (a
 * drift of the machine then favours no candidate), each candidate scored
 * by its best round. *end: the first row not computed. Returns the
 * index of the winner (ties within AM_MARGIN to the later candidate).
 * The caller gives at least n tiles of rows. */
static int race(Drv *d, int64_t r0, int64_t r1, int64_t N, int64_t kx, const AmParams *a, int n, int64_t *end,
                int *rc)
{
    int64_t tiles = (r1 - r0) / d->mr;
    int rounds = tiles >= 2 * n ? 2 : 1;
    int64_t h = tiles / (rounds * n) * d->mr, r = r0;
    *end = r0;
    if (h == 0) return n - 1;
    /* candidates of different kc: each its (k,j) panels packed once
     * for its bands (when they fit AM_PREPACK), so that the bands time
     * the kernel's loop, not packing repeated per band */
    double *own[AM_RACE][AM_MAXLEAVES];
    memset(own, 0, sizeof own);
    bool differ = false;
    for (int q = 1; q < n; q++) differ |= a[q].kc != a[0].kc;
    double need = (double)n * kx * (double)((N + d->nr - 1) / d->nr * d->nr) * leaves_of(d, LC_B);
    bool pre = differ && need <= AM_PREPACK;
    for (int q = 0; q < n && pre; q++) pre = pack_full(d, a[q].kc, kx, own[q]);
    double sc[AM_RACE];
    for (int q = 0; q < n; q++) sc[q] = INFINITY;
    for (int round = 0; round < rounds && !*rc; round++)
        for (int i = 0; i < n && !*rc; i++) {
            int q = round % 2 ? n - 1 - i : i;
            if (pre) {
                memcpy(d->bfp, own[q], sizeof d->bfp);
                d->bfp_kc = a[q].kc;
                d->bfp_k = kx;
            }
            sc[q] = fmin(sc[q], subtask(d, r, r + h, 0, N, 0, kx, &a[q], rc));
            r += h;
        }
    if (differ) {
        for (int q = 0; q < n; q++)
            for (int l = 0; l < AM_MAXLEAVES; l++) br_free_aligned(own[q][l]);
        memset(d->bfp, 0, sizeof d->bfp);
        d->bfp_kc = 0;
    }
    *end = r;
    /* the last (largest) candidate within AM_MARGIN of the best score:
     * scores closer than that are the machine's noise (a shared
     * machine's cache and memory contention reach CPU time too), and
     * the larger kc or nc has fewer blocks to merge and fork */
    int best = 0;
    for (int q = 1; q < n; q++)
        if (sc[q] < sc[best]) best = q;
    for (int q = n - 1; q > best; q--)
        if (sc[q] <= sc[best] * (1 + AM_MARGIN)) return q;
    return best;
}

/* Candidates that fit a race over `tiles` tiles of rows: the last
 * (largest) ones, at most AM_RACE. Returns the index of the first kept. */
static int race_fit(int n, int64_t tiles)
{
    int keep = (int)BR_MIN(BR_MIN(n, AM_RACE), tiles);
    return n - BR_MAX(keep, 1);
}

/* Writes every cell of R's rows [i0, i1) back with its own value (all
 * results): the pages of a result not yet written (a new matrix(0, ...)
 * is zero pages that fault on the first write) are then faulted in
 * before strips times its sub-tasks, whose first would otherwise pay
 * them all (the first k half of a strip measured 1.4-1.5x the second,
 * packed or not, 1024^3 matmul, 1 thread). */
static void touch_rows(const Drv *d, int64_t i0, int64_t i1, int64_t N)
{
    const AmBind *b = d->b;
    for (int q = 0; q < d->p->nres; q++)
        for (int64_t i = i0; i < i1; i++)
            for (int64_t j = 0; j < N; j++) {
                volatile double *r = b->r[q] + i * b->rst[q][d->ti] + j * b->rst[q][d->tj];
                *r = *r;
            }
}

/* Allocates (on) or frees the search's packed (i,k) tiles for rows
 * of `rows` (Drv.akeep), written once when allocated: a strip that
 * allocated them itself paid for faulting in their fresh pages (a
 * one-off cost of a run, not of its nc or packing), and on this
 * project's virtual machine the first packed strip at kc 512 x nc 384
 * measured 3-4x the second (1024^3 matmul, 1 thread) where whole runs
 * packed and in place differed by 1.0-1.4x. */
static void search_ablk(Drv *d, int64_t rows, int64_t kc, bool on)
{
    if (!on) {
        free_ablk(d->akeep);
        memset(d->akeep, 0, sizeof d->akeep);
        d->akeep_cells = 0;
        return;
    }
    int64_t ntile = (rows + d->mr - 1) / d->mr, cells = ntile * kc * d->mr;
    if (!alloc_ablk(d, ntile, kc, d->akeep)) return;
    for (int l = 0; l < d->p->nleaf; l++)
        if (d->akeep[l]) memset(d->akeep[l], 0, (size_t)cells * sizeof(double));
    d->akeep_cells = cells;
}

/* Seed 4.6's search for nc (and the (i,k) operands' packing, seed 3.1)
 * on rows [r0, M), all k, kc fixed (best->kc): sub-tasks that are
 * column strips of the full height of those rows, side by side from
 * column 0, of width nc = nc0, 2 nc0, 4 nc0, ... (each a single column
 * block of its width), each scored by its time per iteration; the
 * doubling stops when a strip's score is worse than the best so far by
 * more than AM_MARGIN (the cache overflowed: a wider strip would only
 * overflow it more) or when the next width no longer fits in the
 * columns left. A strip sees what nc costs a whole run: per column
 * block, the strip's M x kc block of (i,k) operands streams past once
 * (read in place or packed per tile), which a row band of a few tiles
 * (the race's sub-tasks) kept in L2 across its column blocks, so the
 * band race could not see that cost and picked nc = 8 nr for plain
 * matmul where the sweep's best was 384 (2026-12-01, quiet Xeon).
 * Packing is raced inside each strip, which would not fit N twice: the
 * strip's k range cut in two halves at a multiple of kc (or in the
 * middle when K < 2 kc), one half packed and one read in place, in
 * alternating order from strip to strip; the strip's score is the
 * better half's. The winner: the widest strip within AM_MARGIN of the
 * best score (as race: closer is noise, and wider has fewer blocks),
 * with its better packing (in place on a tie). The columns after the
 * last strip are the caller's. Returns the first column not computed. */
static int64_t strips(Drv *d, int64_t r0, int64_t M, int64_t N, int64_t K, int64_t nc0, bool has_a, AmParams *best,
                      int *rc)
{
    int64_t kc = best->kc, kh = K >= 2 * kc ? K / (2 * kc) * kc : K / 2, j0 = 0;
    AmParams a[AM_RACE];
    double sc[AM_RACE];
    int n = 0;
    for (int64_t nc = nc0; n < AM_RACE && j0 + nc <= N && !*rc; nc *= 2) {
        double s[2] = {INFINITY, INFINITY};   /* packed, in place */
        if (has_a && kh > 0) {
            for (int h = 0; h < 2; h++) {
                int pk = (h + n) % 2 == 0;    /* strip 0: packed half first */
                s[!pk] = subtask(d, r0, M, j0, j0 + nc, h ? kh : 0, h ? K : kh, &(AmParams){kc, nc, pk}, rc);
            }
        } else {
            s[0] = subtask(d, r0, M, j0, j0 + nc, 0, K, &(AmParams){kc, nc, 1}, rc);
        }
        int pk = !(s[1] <= s[0] * (1 + AM_MARGIN));
        a[n] = (AmParams){kc, nc, pk};
        sc[n] = fmin(s[0], s[1]);
        j0 += nc;
        double low = sc[0];
        for (int q = 1; q < n; q++) low = fmin(low, sc[q]);
        if (n++ > 0 && sc[n - 1] > low * (1 + AM_MARGIN)) break;
    }
    if (n == 0) return 0;
    int w = 0;
    for (int q = 1; q < n; q++)
        if (sc[q] < sc[w]) w = q;
    for (int q = n - 1; q > w; q--)
        if (sc[q] <= sc[w] * (1 + AM_MARGIN)) { w = q; break; }
    *best = a[w];
    return j0;
}

/* The search of seed 4.4-4.6 on sub-tasks that contribute to the result.
 * kc by a race (above) of equal sub-tasks: 32, 64, ..., 512 (<= K) on
 * the top half of R's rows, bands over k in [0, kx), kx the largest
 * candidate (the rest of k for those rows with the winner), with the
 * smallest column block nc0 = 8 nr (the seed's nc starts small and
 * grows): a kc x nc block that stays in cache across the tiles, so that
 * kc is judged by its own cost (merges per k, the (i,k) panel's reuse)
 * and not by a block of all N columns falling out of the cache, which
 * favoured a small kc that the smaller block of the best nc did not need
 * (matmul at 768^3: kc 256 raced at nc = N, where the sweep's best was
 * kc 512 at nc 192). The seed scores consecutive k-slices of width kc
 * instead; there the candidates did unequal work (kc 512 did not fit
 * K = 768 after the smaller slices, and a slice's packing and merging
 * weighed differently per width), and the choice was up to 27% slower
 * than an exhaustive sweep's best. Then nc and the packing of the (i,k)
 * operands together on the bottom half by seed 4.6's column strips
 * (strips, above), the columns they leave with the best. The first rows
 * warm up threads and buffers unscored. Returns the parameters found in
 * *best, 0 or -1. */
static int search(Drv *d, int64_t M, int64_t N, int64_t K, AmParams *best)
{
    int rc = 0, mr = d->mr;
    int64_t mh = (M / 2 + mr - 1) / mr * mr, npad = (N + d->nr - 1) / d->nr * d->nr;
    int64_t w = BR_MIN(mh, (int64_t)mr * br_threads()), end, nc0 = BR_MIN(8 * (int64_t)d->nr, npad);
    rc = run_block(d, 0, w, 0, N, 0, K, best->kc, best->nc, 1);
    AmParams a[AM_RACE];
    int n = 0;
    for (int64_t kc = 32; kc <= 512 && kc <= K; kc *= 2) a[n++] = (AmParams){kc, nc0, 1};
    int f = race_fit(n, (mh - w) / mr);
    int64_t kx = a[n - 1].kc;
    if (!rc) {
        best->kc = a[f + race(d, w, mh, N, kx, a + f, n - f, &end, &rc)].kc;
        if (!rc && kx < K) rc = run_block(d, w, end, 0, N, kx, K, best->kc, nc0, 1);
        if (!rc && end < mh) rc = run_block(d, end, mh, 0, N, 0, K, best->kc, nc0, 1);
    }
    best->nc = nc0;
    best->pack = 1;
    bool has_a = leaves_of(d, LC_A) > 0;
    if (!rc) touch_rows(d, mh, M, N);
    if (!rc && has_a) search_ablk(d, M - mh, best->kc, true);
    int64_t j0 = rc ? N : strips(d, mh, M, N, K, nc0, has_a, best, &rc);
    if (!rc && j0 < N) rc = run_block(d, mh, M, j0, N, 0, K, best->kc, best->nc, best->pack);
    search_ablk(d, 0, 0, false);
    return rc;
}

/* Runs the whole task: with parameters remembered for this kernel (in
 * the plan cache, memory or disk) at once, else (or when `again`) through
 * the search (which computes all of R), remembering its result. Too
 * small a task for a search runs with the defaults. */
/* The dense kernel's parameters a kept in op for this thread count and
 * shape class. */
static void keep_params(CgContext *c, CgOp *op, int shape, const AmParams *a)
{
    pthread_mutex_lock(&c->lock);
    op->am_tuned = true;
    op->am_threads = br_threads();
    op->am_shape = shape;
    op->am_kc = a->kc;
    op->am_nc = a->nc;
    op->am_pack = a->pack;
    pthread_mutex_unlock(&c->lock);
}

static int run_adaptive(Drv *d, CgOp *op, CgContext *c, int64_t M, int64_t N, int64_t K, bool again)
{
    AmParams best = {BR_MIN(K, 256), BR_MAX(d->nr, BR_MIN(N, 1024)), 1};
    int shape = shape_class(M, N, K);
    pthread_mutex_lock(&c->lock);
    bool tuned = op->am_tuned && op->am_threads == br_threads() && op->am_shape == shape && !again;
    if (tuned) best = (AmParams){op->am_kc, op->am_nc, op->am_pack};
    pthread_mutex_unlock(&c->lock);
    const char *from = "remembered";
    if (!tuned && !again && params_probe(c, op, false, shape, &best)) {
        tuned = true;
        from = "remembered on disk";
        keep_params(c, op, shape, &best);
    }
    /* BRAID_AMULET_PARAMS="kc nc pack" pins the parameters (the
     * exhaustive sweep of bench/bench_amulet_sweep.c); nothing is kept */
    const char *pin = getenv("BRAID_AMULET_PARAMS");
    long long pkc, pnc;
    int ppk;
    if (pin && sscanf(pin, "%lld %lld %d", &pkc, &pnc, &ppk) == 3 && pkc > 0 && pkc <= 512 && pnc > 0) {
        best = (AmParams){pkc, pnc, ppk != 0};   /* run (and traced) as remembered ones; nothing kept */
        tuned = true;
        from = "pinned";
    }
    bool searchable = M >= 4 * d->mr * br_threads() && K >= 96 && N >= 32 * d->nr;
    double t0 = omp_get_wtime(), ph[AM_PHT][AM_PHASES] = {{0}};
    int rc, chunks = 1;
    d->span = 0;
    d->regions = 0;
    if (!tuned && searchable) {
        rc = search(d, M, N, K, &best);
        if (!rc) {
            keep_params(c, op, shape, &best);
            params_save(c, op, false, shape, &best);
        }
    } else {
        int64_t tiles = (M + d->mr - 1) / d->mr * ((N + d->nr - 1) / d->nr);
        chunks = am_split(tiles, K, d->mr, d->nr, br_threads());
        /* traced: the team's CPU in its work (packing and tiles, not the
         * waits at barriers), against the wall time of the threads */
        d->meter = getenv("BRAID_AMULET_TRACE") != NULL;
        d->cpu = 0;
        d->ph = d->meter ? ph : NULL;
        if (chunks > 1) rc = run_split(d, M, N, K, best.kc, best.pack, chunks);
        else rc = run_block(d, 0, M, 0, N, 0, K, best.kc, best.nc, best.pack);
        d->meter = false;
        d->ph = NULL;
    }
    if (getenv("BRAID_AMULET_TRACE")) {
        double it = (double)M * N * K;
        fprintf(stderr, "amulet: %d x %d kernel, kc %lld nc %lld pack %d (%s), K in %d chunks: %.3g ns per iteration",
                d->mr, d->nr, (long long)best.kc, (long long)best.nc, best.pack,
                tuned ? from : searchable ? "searched" : "defaults", chunks, (omp_get_wtime() - t0) / it * 1e9);
        if (d->cpu > 0) fprintf(stderr, ", work CPU %.3g ns per iteration", d->cpu / it * 1e9);
        fprintf(stderr, "\n");
        /* where the team's threads spend the wall time of the task:
         * waits (fork, barrier, tail) against packing and tiles */
        if (d->regions > 0) {
            int nt = BR_MIN(d->threads, AM_PHT);
            fprintf(stderr, "amulet: phases of %d teams, %.3g ms from fork to join, %.3g ms outside them; ms per thread "
                    "(fork/pack/barrier/tiles/tail):", d->regions, d->span * 1e3, (omp_get_wtime() - t0 - d->span) * 1e3);
            for (int x = 0; x < nt; x++)
                fprintf(stderr, " t%d %.3g/%.3g/%.3g/%.3g/%.3g", x, ph[x][0] * 1e3, ph[x][1] * 1e3, ph[x][2] * 1e3,
                        ph[x][3] * 1e3, ph[x][4] * 1e3);
            fprintf(stderr, "\n");
        }
    }
    return rc;
}

/* ---- the sparse kernel's parameter: its column block ---- */

/* Rows [r0, r1) of the sparse loop in column blocks of nc (a multiple of
 * nr): each block's (k,j) panels stay in cache while the rows' non-zeros
 * read them. */
static void sparse_rows(Drv *d, AmKernel fn, int64_t r0, int64_t r1, int64_t nc, int64_t K, double *const *bfull)
{
    int64_t N = d->b->n[d->tj];
    for (int64_t c0 = 0; c0 < N; c0 += nc) sparse_block(d, fn, r0, r1, c0, BR_MIN(N, c0 + nc), K, bfull);
}

/* Time per non-zero and column of rows [r0, r1) in blocks of nc: the
 * threads' CPU seconds in their rows, summed (as subtask scores). */
static double sparse_subtask(Drv *d, AmKernel fn, int64_t r0, int64_t r1, int64_t nc, int64_t K,
                             double *const *bfull)
{
    const MB *m = d->b->sp;
    int64_t i0 = d->b->from[d->ti] - 1, N = d->b->n[d->tj];
    d->meter = true;
    d->cpu = 0;
    sparse_rows(d, fn, r0, r1, nc, K, bfull);
    d->meter = false;
    double nz = (double)BR_MAX(1, m->rp[i0 + r1] - m->rp[i0 + r0]);
    double t = d->cpu / (nz * (double)N);
    if (getenv("BRAID_AMULET_TRACE"))
        fprintf(stderr, "amulet: sparse sub-task rows %lld-%lld, column block %lld: %.3g ns per non-zero and column\n",
                (long long)r0, (long long)r1, (long long)nc, t * 1e9);
    return t;
}

/* The sparse kernel's search, on sub-tasks that contribute to the
 * result: consecutive slices of R's rows (a sixteenth each, the first
 * warming up unscored), column blocks of 2 nr, 4 nr, ... doubling up
 * to all columns until the score (time per non-zero and column)
 * worsens; the remaining rows with the best. */
static void sparse_search(Drv *d, AmKernel fn, int64_t M, int64_t N, int64_t K, double *const *bfull,
                          int64_t *best)
{
    int64_t slice = BR_MAX(1, M / 16), r0 = slice, nr = d->nr;
    int64_t all = (N + nr - 1) / nr * nr;
    sparse_rows(d, fn, 0, slice, all, K, bfull);
    double bs = INFINITY;
    *best = all;
    for (int64_t nc = BR_MIN(2 * nr, all); r0 + slice <= M; nc = BR_MIN(2 * nc, all)) {
        double sc = sparse_subtask(d, fn, r0, r0 + slice, nc, K, bfull);
        r0 += slice;
        if (sc >= bs) break;
        bs = sc;
        *best = nc;
        if (nc == all) break;
    }
    if (r0 < M) sparse_rows(d, fn, r0, M, *best, K, bfull);
}

/* The sparse loop with its column block remembered for this kernel (in
 * the plan cache, memory or disk), else (or when `again`) searched when
 * the task is large enough, else all columns in one block. */
static int run_sparse(Drv *d, AmKernel fn, CgOp *op, CgContext *c, int64_t M, int64_t N, int64_t K, bool again)
{
    double *bfull[AM_MAXLEAVES] = {0};
    int64_t all = (N + d->nr - 1) / d->nr * d->nr, nc = all;
    /* the threads' buffers (sparse_block): the tile, and for a stepped k
     * the gathered values and k indexes of a row (at most K) */
    bool stepped = d->b->step[d->tk] != 1;
    d->threads = br_threads();
    d->tper = ((size_t)d->nr * (size_t)(d->p->nleaf + d->p->nres) + (stepped ? (size_t)K + ((size_t)K + 1) / 2 : 0) + 7) /
              8 * 8;
    d->tbuf = br_alloc_scratch((size_t)d->threads * d->tper * sizeof(double));
    int rc = d->tbuf && sparse_copies(d, N, K, bfull) ? 0 : -1;
    int shape = shape_class(M, N, K);
    pthread_mutex_lock(&c->lock);
    bool tuned = op->am_sp_nc > 0 && op->am_sp_threads == br_threads() && op->am_sp_shape == shape && !again;
    if (tuned) nc = op->am_sp_nc;
    pthread_mutex_unlock(&c->lock);
    AmParams a;
    const char *from = "remembered";
    if (!tuned && !again && params_probe(c, op, true, shape, &a)) {
        tuned = true;
        nc = a.nc;
        from = "remembered on disk";
        pthread_mutex_lock(&c->lock);
        op->am_sp_nc = nc;
        op->am_sp_threads = br_threads();
        op->am_sp_shape = shape;
        pthread_mutex_unlock(&c->lock);
    }
    nc = BR_MAX(d->nr, nc / d->nr * d->nr);
    const char *pin = getenv("BRAID_AMULET_PARAMS");
    long long pkc, pnc;
    int ppk;
    bool pinned = pin && sscanf(pin, "%lld %lld %d", &pkc, &pnc, &ppk) == 3 && pnc > 0;
    if (pinned) nc = BR_MAX(d->nr, (int64_t)pnc / d->nr * d->nr);
    const MB *m = d->b->sp;
    int64_t i0 = d->b->from[d->ti] - 1;
    double nz = (double)(m->rp[i0 + M] - m->rp[i0]);
    /* a search pays where the task is: 16 slices of rows each worth
     * timing, and column blocks to choose from (`again`, the search
     * mode: wherever there are two) */
    bool searchable = !pinned && !tuned && M >= 16 * br_threads() && N > d->nr &&
                      (again || (N >= 8 * d->nr && nz * (double)N >= 1e7));
    if (!rc && searchable) {
        sparse_search(d, fn, M, N, K, bfull, &nc);
        pthread_mutex_lock(&c->lock);
        op->am_sp_nc = nc;
        op->am_sp_threads = br_threads();
        op->am_sp_shape = shape;
        pthread_mutex_unlock(&c->lock);
        params_save(c, op, true, shape, &(AmParams){1, nc, 0});
    } else if (!rc) {
        sparse_rows(d, fn, 0, M, nc, K, bfull);
    }
    if (getenv("BRAID_AMULET_TRACE"))
        fprintf(stderr, "amulet: sparse kernel, column block %lld (%s)\n", (long long)nc,
                pinned ? "pinned" : tuned ? from : searchable ? "searched" : "all columns");
    for (int l = 0; l < AM_MAXLEAVES; l++) br_free_aligned(bfull[l]);
    br_free_aligned(d->tbuf);
    return rc;
}

/* ---- entry ---- */

/* Lowers p to k and sizes its kernel (seed 4.3.2) into g, *bm rows by
 * *bv vectors; false when the kernel lacks an operator of the body, or
 * uses a device exact only for finite values (masked forms, SIMD
 * min/max) while finite is false. */
static bool kernel_shape(const AmPlan *p, bool finite, KPlan *k, Gen *g, int *bm, int *bv)
{
    k->p = p;
    k->ok = true;
    for (int i = 0; i < AM_MAXNODES; i++) k->memo[i] = -1;
    k->nroot = p->nres;
    bool risky = false;
    for (int r = 0; r < p->nres; r++) {
        k->root[r] = num(k, lower(k, p->root[r]));
        risky |= p->res[r]->acc == WA_MIN || p->res[r]->acc == WA_MAX;
    }
    /* the masked forms take 0 * x as 0 and the SIMD min/max drop a NaN:
     * with a value that may not be finite, the evaluator keeps DML's
     * semantics */
    for (int i = 0; i < k->nn; i++)
        risky |= k->n[i].k == KN_MZ || k->n[i].k == KN_MADD || k->n[i].k == KN_MSUB ||
                 (k->n[i].k == KN_BIN && (k->n[i].op == OP_MIN || k->n[i].op == OP_MAX));
    if (risky && !finite) k->ok = false;
    g->p = p;
    g->k = k;
    g->s = isa_of(k_isa());
    g->bi = 1u << p->tr;
    g->bj = 1u << p->tc;
    g->bk = 1u << p->kvar;
    if (!k->ok) return false;
    schedule(g);
    plan_prepack(g);
    /* the largest kernel within the register budget (4.3.2): mr <= 12,
     * nr up to 4 vectors; ties: 2 vectors, then more rows */
    *bm = 0;
    *bv = 0;
    for (int nv = 1; nv <= 4; nv++)
        for (int mr = 12; mr >= 1; mr--) {
            if (regs_needed(g, mr, nv) > g->s.regs) continue;
            if (mr * nv > *bm * *bv || (mr * nv == *bm * *bv && nv == 2)) { *bm = mr; *bv = nv; }
            break;
        }
    if (*bm == 0) { *bm = 1; *bv = 1; }
    return true;
}

/* The class of node x's operation in vops_mix (0 multiply, 1 compare,
 * 2 other). */
static int op_class(const KNode *x)
{
    if (x->k == KN_BIN && (x->op == OP_MULT || x->op == OP_DIV)) return 0;
    return x->k == KN_CMP || x->k == KN_N2M ? 1 : 2;
}

/* The inner loop's vector operations per vector of the kernel, by the
 * execution units they need (the benchmark replays this mix in a
 * register-only loop to measure the kernel's instruction bound on the
 * machine: 2 ports for every operation undercounts a core with separate
 * multiply and add pipes): mix[0] multiplies (mul, div, a product fused
 * into its accumulation), mix[1] comparisons into a mask, mix[2] the rest
 * (add, sub, min, max, the masked and blend forms, mask logic). */
static void vops_mix(const Gen *g, int mix[3])
{
    const KPlan *k = g->k;
    bool fused[WHERE_MAXRES], skip[KMAX];
    fused_skip(g, fused, skip);
    mix[0] = mix[1] = mix[2] = 0;
    for (int t = 0; t < g->norder; t++)
        if (!skip[g->order[t]]) mix[op_class(&k->n[g->order[t]])]++;
    /* each result's accumulation: an fmadd (a multiply) for a fused
     * product, else an add, min, max or masked add */
    for (int r = 0; r < k->nroot; r++) mix[fused[r] && k->n[k->root[r]].k == KN_BIN ? 0 : 2]++;
}

/* The port model's slots of a mix (multiplies, compares, others; any
 * weights): on a core whose multiply (FMA) pipes run one slot each per
 * slot of dgemm, others at ports[0] slots' rate per slot (the add pipes'
 * rate over the FMA pipes') and all vector operations together at
 * ports[1] (the rate of a 1:1 multiply/add mix over multiplies alone):
 * max(m, (c + o) / ports[0], (m + c + o) / ports[1]). NULL: every
 * operation one slot (2 ports shared by all operations, the count used
 * before 2026-11-30). */
static double mix_slots(const double mix[3], const double *ports)
{
    double all = mix[0] + mix[1] + mix[2];
    if (!ports) return all;
    return fmax(mix[0], fmax((mix[1] + mix[2]) / ports[0], all / ports[1]));
}

/* Vector arithmetic operations per (i,j,k) iteration of the sized kernel
 * (loads and broadcasts not counted), weighted by how often they run, as
 * slots of the port model (mix_slots; ports NULL: the count): the
 * instruction bound's numerator and the cost of the fusion planner's
 * AMULET template. */
static double vops_per_iter(const Gen *g, int bm, int bv, int *pack_ops, const double *ports)
{
    const KPlan *k = g->k;
    /* the inner loop: vops_mix's operations (a product or mask fused
     * into its accumulation saves its own operation unless another node
     * reads it) */
    int mix[3], pk_ops = 0;
    vops_mix(g, mix);
    double w = g->s.w, m[3] = {mix[0] / w, mix[1] / w, mix[2] / w};
    for (int i = 0; i < k->nn; i++) {
        unsigned d = k->n[i].dep;
        if (k->n[i].k == KN_LEAF || k->n[i].k == KN_CONST || !(d & g->bk) || inner(g, i)) continue;
        int cl = op_class(&k->n[i]);
        if (!(d & g->bi)) m[cl] += 1.0 / (bm * w);                           /* per kk and vector */
        else if (!g->nslot || g->keep[i]) m[cl] += 1.0 / (bv * w);           /* per tile and column panel */
        else if (pack_ops) pk_ops++;                                        /* per tile: the pack function */
        /* the pack function: scalar, once per (i,k) and column block
         * (the bound counts a block of at least 8 panels, the search's
         * smallest nc; the planner counts the block its N gives) */
        else m[cl] += 1.0 / (8.0 * bv * w);
    }
    if (pack_ops) *pack_ops = pk_ops;
    return mix_slots(m, ports);
}

double am_kernel_vops(const AmPlan *p, bool sparse, int64_t ncols, const double *ports, int *lanes, int *pack_ops,
                      int tile[2])
{
    if (!p->ok || p->kvar < 0 || (sparse && p->zleaf < 0)) return -1;
    /* through the checked allocator (the injection reaches it); out of
     * memory is AM_VOPS_OOM, not -1 ("no kernel"): until 2026-12-02 a
     * failed plain calloc read as a body without a kernel */
    KPlan *k = br_calloc(1, sizeof *k);
    Gen *g = br_calloc(1, sizeof *g);
    double r = k && g ? -1 : AM_VOPS_OOM;
    int bm, bv;
    if (k && g && kernel_shape(p, true, k, g, &bm, &bv)) {
        if (sparse) {
            /* one-row tiles, the (i,k) values computed in the kernel per
             * non-zero and column panel (gen_source: no pack function) */
            g->nslot = 0;
            bm = 1;
            bv = sparse_nv(g, ncols);
            if (pack_ops) *pack_ops = 0;
        }
        r = vops_per_iter(g, bm, bv, sparse ? NULL : pack_ops, ports);
        *lanes = g->s.w;
        if (tile) {
            tile[0] = bm;
            tile[1] = bv * g->s.w;
        }
    }
    free(k);
    free(g);
    return r;
}

/* ---- the machine's vector ports (am_ports) ---- */

enum { PORT_ITERS = 20000 };
typedef double PortV8 __attribute__((vector_size(64)));
typedef double PortV4 __attribute__((vector_size(32)));

/* Vector operations per second of a register-only loop of 2 CH
 * independent chains: kind 0 all multiplies, 1 all adds, 2 CH of each;
 * VT a vector of LANES doubles (the function's target makes its width:
 * zmm, ymm). CH: the chains and the two constants fit the registers (32
 * zmm: 12, 16 ymm: 6), and 2 CH chains cover a multiply's latency on 2
 * pipes. One loop per kind, the chains in registers (checked in the
 * object: no operand in memory). */
#define PORT_RATE(VT, LANES, CH)                                                   \
    VT x[CH], y[CH];                                                               \
    const VT m = (VT){0} + 0.9999999, a = (VT){0} + 1e-9;                          \
    for (int c = 0; c < (CH); c++) x[c] = y[c] = (VT){0} + (1.0 + c * 1e-3);       \
    double t0 = omp_get_wtime();                                                   \
    if (kind == 0)                                                                 \
        for (int r = 0; r < PORT_ITERS; r++)                                       \
            _Pragma("GCC unroll 12") for (int c = 0; c < (CH); c++) {              \
                x[c] = x[c] * m;                                                   \
                y[c] = y[c] * m;                                                   \
            }                                                                      \
    else if (kind == 1)                                                            \
        for (int r = 0; r < PORT_ITERS; r++)                                       \
            _Pragma("GCC unroll 12") for (int c = 0; c < (CH); c++) {              \
                x[c] = x[c] + a;                                                   \
                y[c] = y[c] + a;                                                   \
            }                                                                      \
    else                                                                           \
        for (int r = 0; r < PORT_ITERS; r++)                                       \
            _Pragma("GCC unroll 12") for (int c = 0; c < (CH); c++) {              \
                x[c] = x[c] * m;                                                   \
                y[c] = y[c] + a;                                                   \
            }                                                                      \
    double dt = omp_get_wtime() - t0, sink = 0;                                    \
    for (int c = 0; c < (CH); c++)                                                 \
        for (int l = 0; l < (LANES); l++) sink += x[c][l] + y[c][l];               \
    __asm__ volatile("" : : "x"(sink));                                            \
    return 2.0 * (CH) * PORT_ITERS / dt;

__attribute__((target("avx512f"))) static double port_rate512(int kind) { PORT_RATE(PortV8, 8, 12) }
__attribute__((target("avx2"))) static double port_rate256(int kind) { PORT_RATE(PortV4, 4, 6) }

void am_ports(double ports[2])
{
    ports[0] = ports[1] = 1;
    KIsa l = k_isa();
    if (l != K_ISA_AVX512 && l != K_ISA_AVX2) return;
    /* the three loops alternated, best of 7 each (about 2 ms in all) */
    double best[3] = {0, 0, 0};
    for (int rep = 0; rep < 7; rep++)
        for (int kind = 0; kind < 3; kind++)
            best[kind] = fmax(best[kind], l == K_ISA_AVX512 ? port_rate512(kind) : port_rate256(kind));
    if (!(best[0] > 0)) return;
    ports[0] = fmin(fmax(best[1] / best[0], 0.25), 4);
    ports[1] = fmin(fmax(best[2] / best[0], 1), 2);
}

/* Everything the kernel's source depends on (kernel_shape, gen_source):
 * the body DAG, the leaves' index patterns, the loop variables' roles,
 * the accumulations, finiteness, the sparse variant (snv: its tile's
 * vectors, 0 for the dense kernel) and the SIMD level; not the sizes
 * (but for the sparse tile's width), addresses or argument positions. Serialized field by
 * field (no padding bytes). NULL when out of memory. */
static int64_t *plan_key(const AmPlan *p, bool finite, int snv, int level, size_t *len)
{
    size_t n = 9 + (size_t)p->nn * 8 + (size_t)p->nleaf * 4 + (size_t)p->nres * 2;
    int64_t *k = br_malloc(n * sizeof *k), *o = k;
    if (!k) return NULL;
    *o++ = p->nvars; *o++ = p->tr; *o++ = p->tc; *o++ = p->kvar; *o++ = p->zleaf;
    *o++ = finite; *o++ = snv; *o++ = level;
    *o++ = ((int64_t)p->nn << 32) | ((int64_t)p->nleaf << 16) | p->nres;
    for (int i = 0; i < p->nn; i++) {
        const ANode *x = &p->n[i];
        int64_t v;
        memcpy(&v, &x->v, sizeof v);
        *o++ = x->kind; *o++ = x->op; *o++ = x->a; *o++ = x->b; *o++ = x->c; *o++ = x->leaf; *o++ = v; *o++ = x->dep;
    }
    for (int l = 0; l < p->nleaf; l++) {
        const ALeaf *x = &p->leaf[l];
        *o++ = x->idx[0]; *o++ = x->idx[1]; *o++ = x->nidx; *o++ = x->dep;
    }
    for (int r = 0; r < p->nres; r++) { *o++ = p->root[r]; *o++ = p->res[r]->acc; }
    *len = n;
    return k;
}

/* The kernel generated before for key (a plan cache hit), else NULL. */
static CgOp *op_by_key(CgContext *c, const int64_t *key, size_t len)
{
    CgOp *op = NULL;
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < c->nops && !op; i++) {
        CgOp *o = c->ops[i];
        if (o->amulet && o->am_keylen == len && !memcmp(o->am_key, key, len * sizeof *key)) op = o;
    }
    if (op) c->st.cache_hits++;
    pthread_mutex_unlock(&c->lock);
    return op;
}

/* The (j) leaves (d->cls set) padded with zeros to npad values, each
 * at d->jpad[l], all in one block (d->jbuf, from the pool when a script
 * calls the loop again: br_alloc_scratch); false without memory. */
static bool pad_jleaves(Drv *d, int64_t N, int64_t npad)
{
    const AmBind *b = d->b;
    int nj = 0;
    for (int l = 0; l < d->p->nleaf; l++) nj += d->cls[l] == LC_J;
    if (!nj) return true;
    size_t n = (size_t)nj * (size_t)npad * sizeof(double);
    d->jbuf = br_alloc_scratch(n);
    if (!d->jbuf) return false;
    memset(d->jbuf, 0, n);
    for (int l = 0, x = 0; l < d->p->nleaf; l++) {
        if (d->cls[l] != LC_J) continue;
        d->jpad[l] = d->jbuf + (size_t)x++ * (size_t)npad;
        for (int64_t j = 0; j < N; j++) d->jpad[l][j] = b->base[l][j * b->st[l][d->tj]];
    }
    return true;
}

/* A kernel run out of memory: the error set, and -1 (br_err returns its
 * code, 2, which the caller read as "ran": the call ended with no error
 * and its result partly computed) */
static int am_oom(BrErr *e)
{
    br_err(e, BR_ENOMEM, "out of memory in a where-loop");
    return -1;
}

int am_kernel_run(CgContext *c, const AmPlan *p, const AmBind *b, bool search_again, BrErr *e)
{
    if (!c || p->kvar < 0 || !c->opt.enabled || c->opt.interpret) return 0;
    KPlan *k = br_calloc(1, sizeof *k);
    Gen *g = br_calloc(1, sizeof *g);
    if (!k || !g) {
        free(k);
        free(g);
        return am_oom(e);
    }
    int ran = 0, bm = 0, bv = 0;
    if (kernel_shape(p, b->finite, k, g, &bm, &bv)) {
        /* the variant this run needs: the sparse kernel where the
         * sparse operand is kept as CSR (b->sp, only for p->zleaf, so
         * snv > 0), else the dense one */
        int snv = sparse_nv(g, b->n[p->tc]);
        bool sp = b->sp && snv > 0;
        char *sig = NULL;
        uint64_t hash = 0;
        CgOp *op = NULL;
        if (!b->sp || sp) {
            /* a loop run again (every iteration of a script's loop) finds
             * its kernel by the plan's key: generating the source twice
             * to hash it cost more than the kernel on small products
             * (the autoencoder's 100 x 100 x 256: ~0.3 ms of ~1.2) */
            size_t klen = 0;
            int64_t *key = plan_key(p, b->finite, sp ? snv : 0, g->s.level, &klen);
            op = key ? op_by_key(c, key, klen) : NULL;
            if (op && __atomic_load_n(&op->ready, __ATOMIC_ACQUIRE) != 1) op = NULL;
            if (!op) {
                char *probe = gen_source(g, sp ? 1 : bm, sp ? snv : bv, sp, 0);
                hash = probe ? cg_hash_bytes(probe, strlen(probe), 0x616d756c) : 0;
                free(probe);
                sig = gen_source(g, sp ? 1 : bm, sp ? snv : bv, sp, hash);
                op = sig ? cg_amulet_op(c, sig, hash) : NULL;
                if (op && key) {
                    pthread_mutex_lock(&c->lock);
                    if (!op->am_key) {
                        op->am_key = key;
                        op->am_keylen = klen;
                        key = NULL;
                    }
                    pthread_mutex_unlock(&c->lock);
                }
            }
            free(key);
        }
        if (getenv("BRAID_AMULET_TRACE")) {
            double per = vops_per_iter(g, bm, bv, NULL, NULL);
            int mix[3];
            vops_mix(g, mix);
            fprintf(stderr,
                    "amulet: %d x %d %s kernel, %d temporaries, %.3f vector operations per iteration "
                    "(inner loop per vector: %d multiply, %d compare, %d other)\n",
                    bm, bv * g->s.w, k_isa_name(g->s.level), g->temps, per, mix[0], mix[1], mix[2]);
        }
        if (op && __atomic_load_n(&op->ready, __ATOMIC_ACQUIRE) == 1 && sp) {
            /* the sparse operand kept as CSR: the sparse kernel (else,
             * with no op, the evaluator: ran 0) */
            {
                Drv d = {.p = p, .b = b, .mr = 1, .nr = snv * g->s.w, .ti = p->tr, .tj = p->tc, .tk = p->kvar};
                int64_t M = b->n[p->tr], N = b->n[p->tc], K = b->n[p->kvar];
                int64_t npad = (N + d.nr - 1) / d.nr * d.nr + d.nr;
                for (int l = 0; l < p->nleaf; l++) d.cls[l] = leaf_class(g, p->leaf[l].dep);
                bool ok = pad_jleaves(&d, N, npad);
                double t0 = omp_get_wtime();
                if (!ok || (M > 0 && N > 0 && K > 0 && run_sparse(&d, (AmKernel)op->fn[0], op, c, M, N, K, search_again)))
                    ran = am_oom(e);
                else ran = 1;
                if (getenv("BRAID_AMULET_TRACE"))
                    fprintf(stderr, "amulet: sparse 1 x %d kernel over %lld non-zeros: %.3g s\n", d.nr,
                            (long long)b->sp->nnz, omp_get_wtime() - t0);
                br_free_aligned(d.jbuf);
            }
        } else if (op && __atomic_load_n(&op->ready, __ATOMIC_ACQUIRE) == 1 && !b->sp) {
            Drv d = {.p = p, .b = b, .fn = (AmKernel)op->fn[0], .mr = bm, .nr = bv * g->s.w, .ti = p->tr,
                     .tj = p->tc, .tk = p->kvar, .pk = g->nslot ? (AmKernel)op->fn[2] : NULL, .nslot = g->nslot,
                     .threads = br_threads()};
            int64_t M = b->n[p->tr], N = b->n[p->tc], K = b->n[p->kvar];
            int64_t npad = (N + d.nr - 1) / d.nr * d.nr + d.nr;
            for (int l = 0; l < p->nleaf; l++) d.cls[l] = leaf_class(g, p->leaf[l].dep);
            bool ok = pad_jleaves(&d, N, npad);
            for (int l = 0; l < p->nleaf; l++)
                if (d.cls[l] == LC_B) {
                    d.bpk[l] = br_alloc_scratch(((size_t)BR_MIN(K, 512) * (size_t)npad + 1) * sizeof(double));
                    ok = ok && d.bpk[l];
                }
            if (!ok) ran = am_oom(e);
            else if (M > 0 && N > 0 && K > 0 && run_adaptive(&d, op, c, M, N, K, search_again))
                ran = am_oom(e);
            else ran = 1;
            br_free_aligned(d.jbuf);
            for (int l = 0; l < p->nleaf; l++) br_free_aligned(d.bpk[l]);
        }
        free(sig);
    }
    free(k);
    free(g);
    return ran;
}
