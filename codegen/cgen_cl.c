/* cgen_cl.c: OpenCL C for codegen's Row, Outer, Cell and MAgg operators
 * (docs/gpu.md, "Codegen's Row, Outer, Cell and MAgg operators in
 * OpenCL"): the device twin of cgen_c.c's generators over the same
 * CPlan. One kernel, cg_main, in which work-item g runs its contiguous
 * block of rows [g rb, (g+1) rb). Row: the CPlan's row body with the
 * row vectors in the work-item's slice of a scratch buffer (tmp + g
 * tlen), scalars per row in registers, vector-matrix products against
 * row-major side matrices, a CSR main row expanded into the scratch by
 * its row pointers. Outer: the cell expression at the driver's
 * non-zeros. Sparse side inputs are read as CSR (csr_side_in). Cell/MAgg: the cell body over every column of the row or,
 * sparse-safe, over the CSR main input's entries. NO_AGG and ROW_AGG
 * write their output rows; the aggregating variants (and multi-output
 * plans) accumulate into the work-item's partial (out + g psz, spoof.h's
 * layout), which gpu/spoof_cl.c's cg_comb adds up in block order.
 * Scalars are read from sc[], so plans that differ in constants share
 * their program. Node kinds a generator does not take (a transpose, a
 * t(.) %*% (.) that is not the root, an index aggregate) give no
 * source: the operator runs on the CPU. */
#include "cgint.h"
#include "../gpu/gpu.h"

#include <stdlib.h>
#include <string.h>

typedef struct ClGen { const CPlan *p; StrBuf *b; } ClGen;

static bool csr_side_in(const CPlan *p, int k);
static bool csr_mat_in(const CPlan *p, int k);

/* Pointer and length expressions of a vector-valued node. */
static void vref(const CPlan *p, int n, char *ptr, size_t pl, char *len, size_t ll)
{
    const CNode *x = &p->n[n];
    if (x->kind == CN_IN) {
        snprintf(ptr, pl, x->in == p->main ? "a" : "p%d", x->in);
        snprintf(len, ll, "L[%d]", x->in);
    } else {
        snprintf(ptr, pl, "v%d", n);
        snprintf(len, ll, "L[%d]", x->vlen);
    }
}

/* Node n's value inside a loop over k (vectors) or per row (scalars). */
static void elem(const CPlan *p, int n, char *buf, size_t len)
{
    const CNode *x = &p->n[n];
    char ptr[32], l[32];
    if (x->vc == VC_VEC) { vref(p, n, ptr, sizeof ptr, l, sizeof l); snprintf(buf, len, "%s[k]", ptr); }
    else if (x->kind == CN_IN && p->in[x->in].mode == IM_SCALAR) snprintf(buf, len, "s%d", x->in);
    else if (x->kind == CN_IN) snprintf(buf, len, "c%d", x->in);
    else snprintf(buf, len, "t%d", n);
}

/* Pointer and length of node n as a vector (a scalar through `qb`, a
 * private value: copied into the one-cell vector qv of the scratch). */
static void vec_or_scalar(const ClGen *g, int n, const char *ind, char *ptr, size_t pl, char *len, size_t ll)
{
    if (g->p->n[n].vc == VC_VEC) { vref(g->p, n, ptr, pl, len, ll); return; }
    char q[48];
    elem(g->p, n, q, sizeof q);
    sb_printf(g->b, "%sqv[0] = %s;\n", ind, q);
    snprintf(ptr, pl, "qv");
    snprintf(len, ll, "1");
}

/* Can the generator take p (a Row plan of node kinds it knows, products
 * against whole side inputs, t(.) %*% (.) only as aggregated roots)? */
static bool row_ok(const CPlan *p)
{
    if (p->tpl != T_ROW || p->main < 0 || p->in[p->main].mode != IM_FULL) return false;
    for (int i = 0; i < p->nn; i++) {
        const CNode *x = &p->n[i];
        switch (x->kind) {
        case CN_IN: case CN_UN: case CN_BIN: case CN_TER: case CN_SLICE: break;
        case CN_AGG:
            if (p->n[x->a[0]].vc == VC_VEC && !op_info[x->op].cgen) return false;
            break;
        case CN_MM: {
            const CNode *b = &p->n[x->a[1]];
            if (b->kind != CN_IN || p->in[b->in].mode != IM_MAT || p->n[x->a[0]].vc != VC_VEC) return false;
            break;
        }
        case CN_MMTL:
            if (!cg_row_agg_root(p, i)) return false;
            break;
        default: return false;
        }
    }
    return true;
}

/* Does Row plan p take one product against a side matrix (the tiled
 * kernel: its B in work-group tiles of local memory)? Plans of several
 * products stay per-work-item loops: a CPU OpenCL compiler (PoCL) turns
 * each barrier inside loops into work-item loop regions, and kernels of
 * several inlined tiled products took minutes to build there. */
static bool row_tiled(const CPlan *p)
{
    int n = 0;
    for (int i = 0; i < p->nn; i++) n += p->n[i].kind == CN_MM;
    return n == 1;
}

static void emit_node(const ClGen *g, int i, const char *ind)
{
    const CPlan *p = g->p;
    StrBuf *b = g->b;
    const CNode *x = &p->n[i];
    char ptr[32], len[32], e[512], a[3][48];
    switch (x->kind) {
    case CN_UN: case CN_BIN: case CN_TER:
        for (int k = 0; k < x->na; k++) elem(p, x->a[k], a[k], sizeof a[k]);
        cg_op_expr(e, sizeof e, x, a);
        if (x->vc == VC_VEC) sb_printf(b, "%sfor (long k = 0; k < L[%d]; k++) v%d[k] = %s;\n", ind, x->vlen, i, e);
        else sb_printf(b, "%sconst double t%d = %s;\n", ind, i, e);
        break;
    case CN_AGG: {
        if (p->n[x->a[0]].vc != VC_VEC) {
            elem(p, x->a[0], a[0], sizeof a[0]);
            int acc = op_info[x->op].acc;
            if (acc & AC_SQ) sb_printf(b, "%sconst double t%d = %s * %s;\n", ind, i, a[0], a[0]);
            else if (acc & AC_IDX) sb_printf(b, "%sconst double t%d = 1;\n", ind, i);
            else sb_printf(b, "%sconst double t%d = %s;\n", ind, i, a[0]);
            break;
        }
        vref(p, x->a[0], ptr, sizeof ptr, len, sizeof len);
        const char *f = op_info[x->op].cgen;
        if (op_info[x->op].acc & AC_MEAN) sb_printf(b, "%sconst double t%d = %s(%s, %s) / (double)%s;\n", ind, i, f, ptr, len, len);
        else sb_printf(b, "%sconst double t%d = %s(%s, %s);\n", ind, i, f, ptr, len);
        break;
    }
    case CN_SLICE:
        vref(p, x->a[0], ptr, sizeof ptr, len, sizeof len);
        if (x->vc == VC_CELL) sb_printf(b, "%sconst double t%d = %s[L[%d]];\n", ind, i, ptr, x->vlen + 1);
        else sb_printf(b, "%sfor (long k = 0; k < L[%d]; k++) v%d[k] = %s[k + L[%d]];\n", ind, x->vlen, i, ptr, x->vlen + 1);
        break;
    case CN_MM: {
        /* side matrices stay row-major on the device (len x L[bi]) */
        int bi = p->n[x->a[1]].in;
        vref(p, x->a[0], ptr, sizeof ptr, len, sizeof len);
        /* tiled (a Row kernel of one product): B's tiles shared by the
         * work-group's rows; a dot product is the one-column case */
        /* a CSR B (csr_mat_in; RP<bi> NULL when dense, uniform over the
         * launch, so a tiled group takes one branch): its rows' entries */
        bool c = csr_mat_in(p, bi);
        if (!row_tiled(p)) {
            if (x->vc == VC_CELL && c)
                sb_printf(b, "%sconst double t%d = RP%d ? cg_dotc(%s, %s, P%d, RP%d) : cg_dotg(%s, P%d, %s);\n", ind, i, bi,
                          ptr, len, bi, bi, ptr, bi, len);
            else if (x->vc == VC_CELL) sb_printf(b, "%sconst double t%d = cg_dotg(%s, P%d, %s);\n", ind, i, ptr, bi, len);
            else if (c)
                sb_printf(b, "%sif (RP%d) cg_vecmatc(%s, %s, P%d, RP%d, CI%d, L[%d], v%d);\n%selse cg_vecmatg(%s, %s, P%d, L[%d], v%d);\n",
                          ind, bi, ptr, len, bi, bi, bi, bi, i, ind, ptr, len, bi, bi, i);
            else sb_printf(b, "%scg_vecmatg(%s, %s, P%d, L[%d], v%d);\n", ind, ptr, len, bi, bi, i);
        } else if (x->vc == VC_CELL) {
            if (c) sb_printf(b, "%sif (RP%d) qv[0] = cg_dotc(%s, %s, P%d, RP%d);\n%selse ", ind, bi, ptr, len, bi, bi, ind);
            else sb_puts(b, ind);
            sb_printf(b, "cg_vecmatl(%s, %s, P%d, 1, qv, lt, tk, tj);\n%sconst double t%d = qv[0];\n", ptr, len, bi, ind, i);
        } else {
            if (c) sb_printf(b, "%sif (RP%d) cg_vecmatc(%s, %s, P%d, RP%d, CI%d, L[%d], v%d);\n%selse ", ind, bi, ptr, len, bi,
                             bi, bi, bi, i, ind);
            else sb_puts(b, ind);
            sb_printf(b, "cg_vecmatl(%s, %s, P%d, L[%d], v%d, lt, tk, tj);\n", ptr, len, bi, bi, i);
        }
        break;
    }
    default: break;
    }
}

/* Output t's root: the output row, or the accumulation into o<t>. */
static void emit_out(const ClGen *g, int t, const char *ind)
{
    const CPlan *p = g->p;
    StrBuf *b = g->b;
    int r = p->out[t];
    const CNode *x = &p->n[r];
    char ptr[32], len[32], e[48];
    switch (cplan_row_ovar(p, t)) {
    case V_NO_AGG:
        if (x->vc == VC_VEC) {
            vref(p, r, ptr, sizeof ptr, len, sizeof len);
            sb_printf(b, "%sfor (long k = 0; k < %s; k++) out[i * oc + k] = %s[k];\n", ind, len, ptr);
        } else {
            elem(p, r, e, sizeof e);
            sb_printf(b, "%sout[i * oc] = %s;\n", ind, e);
        }
        break;
    case V_ROW_AGG:
        elem(p, r, e, sizeof e);
        sb_printf(b, "%sout[i] = %s;\n", ind, e);
        break;
    case V_COL_AGG: case V_FULL_AGG: {
        bool col = cplan_row_ovar(p, t) == V_COL_AGG;
        const CNode *c = &p->n[x->a[0]];
        int ac = op_info[x->op].acc & AC_COMB;
        char acc[160];
        const char *q = col ? "k" : "0";
        if (ac == AC_MIN || ac == AC_MAX)
            snprintf(acc, sizeof acc, "o%d[%s] = cg_%sstep(o%d[%s], xv)", t, q, ac == AC_MIN ? "min" : "max", t, q);
        else
            snprintf(acc, sizeof acc, "cg_kaddg(&o%d[%s], &o%d[%s], %s)", t, q, t, col ? "nc + k" : "1",
                     (op_info[x->op].acc & AC_SQ) ? "xv * xv" : "xv");
        if (c->vc == VC_VEC) {
            vref(p, x->a[0], ptr, sizeof ptr, len, sizeof len);
            sb_printf(b, "%s{ const long nc = %s; for (long k = 0; k < nc; k++) { const double xv = %s[k]; %s; } }\n", ind,
                      len, ptr, acc);
        } else {
            elem(p, x->a[0], e, sizeof e);
            sb_printf(b, "%s{ const long nc = 1, k = 0; const double xv = %s; %s; }\n", ind, e, acc);
        }
        break;
    }
    case V_COL_T_AGG: {
        /* t(A) %*% B: o[a, c] += A[a] B[c] (ncol(A) x ncol(B)) */
        char bp[48], bl[32];
        vec_or_scalar(g, x->a[1], ind, bp, sizeof bp, bl, sizeof bl);
        if (p->n[x->a[0]].vc == VC_VEC) {
            vref(p, x->a[0], ptr, sizeof ptr, len, sizeof len);
            sb_printf(b, "%s{ const long nb = %s; for (long k = 0; k < %s; k++) { const double xa = %s[k];\n"
                         "%s    for (long c = 0; c < nb; c++) o%d[k * nb + c] += xa * %s[c]; } }\n",
                      ind, bl, len, ptr, ind, t, bp);
        } else {
            elem(p, x->a[0], e, sizeof e);
            sb_printf(b, "%s{ const double xa = %s; for (long c = 0; c < %s; c++) o%d[c] += xa * %s[c]; }\n", ind, e, bl, t,
                      bp);
        }
        break;
    }
    default: break;
    }
}

/* Length expression of node n's row (1 for a scalar). */
static void len_of(const CPlan *p, int n, char *len, size_t ll)
{
    char ptr[32];
    if (p->n[n].vc == VC_VEC) vref(p, n, ptr, sizeof ptr, len, ll);
    else snprintf(len, ll, "1");
}

/* The aggregated outputs' partials o<t> in the work-item's slice (the
 * layout of kernels/spoof.h), initialized to the aggregates' identities. */
static void emit_partials(const ClGen *g, bool tiled)
{
    const CPlan *p = g->p;
    StrBuf *b = g->b;
    const char *own = tiled ? "if (g < ng) " : "";   /* a tiled group's work-items past ng have no partial */
    sb_puts(b, "    long oo = 0;\n");
    for (int t = 0; t < p->nout; t++) {
        Variant v = cplan_row_ovar(p, t);
        if (v != V_COL_AGG && v != V_FULL_AGG && v != V_COL_T_AGG) continue;
        const CNode *x = &p->n[p->out[t]];
        char la[32], lb[32];
        len_of(p, x->a[0], la, sizeof la);
        int ac = op_info[x->op].acc & AC_COMB;
        const char *id = v == V_COL_T_AGG ? "0" : ac == AC_MIN ? "INFINITY" : ac == AC_MAX ? "-INFINITY" : "0";
        sb_printf(b, "    __global double *o%d = part + oo;\n", t);
        if (v == V_COL_T_AGG) {
            len_of(p, x->a[1], lb, sizeof lb);
            sb_printf(b, "    { const long m = %s * %s; %sfor (long k = 0; k < m; k++) o%d[k] = 0; oo += m; }\n", la, lb, own, t);
        } else {
            const char *n = v == V_COL_AGG ? la : "1";
            sb_printf(b, "    { const long m = %s; %sfor (long k = 0; k < m; k++) { o%d[k] = %s; o%d[m + k] = 0; } oo += 2 * m; }\n",
                      n, own, t, id, t);
        }
    }
}

/* Can input k be bound as CSR arrays (values P<k>, row pointers RP<k>,
 * columns CI<k>) when it is a side input: a full matrix of the
 * iteration shape, a row or a column vector, other than the main input
 * (the main input's CSR arrays are RP, CI)? gpu/spoof_cl.c finds these
 * parameters by name and binds a CSR side input there (NULL row
 * pointers: dense), and the kernel reads it as CSR (docs/gpu.md, "CSR
 * side inputs"): a full input's row expanded into the scratch
 * (csr_side_row; Outer: a cursor along the row, cgen_cl_outer), a row
 * vector expanded once per work-item (csr_side_vec; Outer: a cursor), a
 * column vector's entry per row (csr_side_col). */
static bool csr_side_in(const CPlan *p, int k)
{
    InMode m = p->in[k].mode;
    return (m == IM_FULL || m == IM_ROW || m == IM_COL) && k != p->main;
}

/* Can input k be bound as CSR arrays where the kernel reads it by whole
 * rows of known index (docs/gpu.md, "CSR factors and side matrices"):
 * Row's side matrix B of a vector-matrix product (read only as a
 * CN_MM's right operand: row j of B scattered by its entries,
 * cg_vecmatc; n x 1, cg_dotc), Outer's factors U (row i) and V (IM_VROW:
 * row j) loaded into the local tiles from their entries, and Outer's
 * side matrix of LEFT/RIGHT/RIGHT_T (row j or i, walked by its entries;
 * outer_side). Outer's B of U %*% B (IM_BT, read by column segments)
 * stays dense. */
static bool csr_mat_in(const CPlan *p, int k)
{
    if (k == p->main) return false;
    if (p->tpl == T_OUTER) {
        int u = -1, v = -1, side = -1;
        cg_outer_inputs(p, &u, &v, &side);
        return (k == u && p->in[k].mode == IM_MAT) || (k == v && p->in[k].mode == IM_VROW) ||
               (k == side && !csr_side_in(p, k) && p->in[k].mode != IM_BT && p->in[k].mode != IM_SCALAR);
    }
    if (p->tpl != T_ROW || p->in[k].mode != IM_MAT) return false;
    bool used = false;
    for (int i = 0; i < p->nn; i++) {
        const CNode *x = &p->n[i];
        for (int a = 0; a < x->na; a++) {
            const CNode *c = &p->n[x->a[a]];
            if (c->kind != CN_IN || c->in != k) continue;
            if (x->kind != CN_MM || a != 1) return false;
            used = true;
        }
    }
    return used;
}

/* The scratch rows e<k> of the CSR side inputs, from off on (a dense
 * input takes none: its row pointers NULL; a column vector none: its
 * value is read in place, csr_side_col; spath: a Cell/MAgg plan with a
 * sparse path, where a full input takes none when it runs, msp 2: the
 * cursor of cell_loop reads it; gpu/spoof_cl.c cell_side_len reserves
 * the same). */
static void csr_side_scratch(const CPlan *p, StrBuf *b, const char *base, bool spath)
{
    for (int k = 0; k < p->nin; k++)
        if (csr_side_in(p, k) && p->in[k].mode != IM_COL)
            sb_printf(b, "    __global double *e%d = %s + off; off += RP%d%s ? L[%d] : 0;\n", k, base, k,
                      spath && p->in[k].mode == IM_FULL ? " && msp != 2" : "", k);
}

/* A sparse row vector k (1 x L[k]) expanded once into the work-item's
 * scratch row e<k> before its rows, read as p<k> (a dense one in place). */
static void csr_side_vec(const CPlan *p, StrBuf *b)
{
    for (int k = 0; k < p->nin; k++)
        if (csr_side_in(p, k) && p->in[k].mode == IM_ROW)
            sb_printf(b, "    gcd p%d = P%d;\n"
                         "    if (RP%d) {\n"
                         "        for (long k = 0; k < L[%d]; k++) e%d[k] = 0;\n"
                         "        for (long q = RP%d[0]; q < RP%d[1]; q++) e%d[CI%d[q]] = P%d[q];\n"
                         "        p%d = e%d;\n"
                         "    }\n", k, k, k, k, k, k, k, k, k, k, k, k);
}

/* Row i's value of column vector k (m x 1; CSR: the row's one entry, if
 * any), as c<k>. */
static void csr_side_col(StrBuf *b, int k, const char *ind, const char *guard)
{
    sb_printf(b, "%sconst double c%d = %sRP%d ? (RP%d[i + 1] > RP%d[i] ? P%d[RP%d[i]] : 0) : P%d[i];\n", ind, k,
              guard ? guard : "", k, k, k, k, k, k);
}

/* Row i of CSR side input k expanded into its scratch row e<k> (its
 * pointer p<k>, at column offset coff when not NULL; only where the
 * condition `when` holds too, when not NULL). */
static void csr_side_row(StrBuf *b, int k, const char *coff, const char *when)
{
    sb_printf(b, "        if (RP%d%s%s) {\n"
                 "            for (long k = 0; k < L[%d]; k++) e%d[k] = 0;\n"
                 "            for (long q = RP%d[i]; q < RP%d[i + 1]; q++) e%d[CI%d[q]] = P%d[q];\n"
                 "            p%d = e%d%s%s;\n"
                 "        }\n", k, when ? " && " : "", when ? when : "", k, k, k, k, k, k, k, k, k, coff ? " + " : "",
              coff ? coff : "");
}

/* The head of every generated cg_main: its parameters (the inputs P<k>,
 * the main input's CSR arrays, L, the scalars, rows, rows per work-item,
 * work-items, scratch and partial doubles per work-item, the template's
 * extent `ext`, the main input's mode msp, scratch, output; gpu/spoof_cl.c
 * set_main_args), and the work-item's block of rows [r0, r1). */
static void kernel_head(const CPlan *p, StrBuf *b, const char *ext, bool tiled)
{
    sb_puts(b, "\n__kernel void cg_main(");
    for (int k = 0; k < p->nin; k++) sb_printf(b, "__global const double *P%d, ", k);
    for (int k = 0; k < p->nin; k++)
        if (csr_side_in(p, k) || csr_mat_in(p, k)) sb_printf(b, "__global const long *RP%d, __global const int *CI%d, ", k, k);
    sb_printf(b, "__global const long *RP, __global const int *CI,\n"
                 "    __global const long *L, __global const double *sc, long rows, long rb, long ng, long tlen, long psz,\n"
                 "    long %s, int msp, __global double *tmp, __global double *out%s%s)\n{\n"
                 "    const long g = get_global_id(0);\n", ext, tiled ? ", " : "", tiled ? GPU_TILE_ARGS : "");
    /* tiled: every work-item of a group reaches every barrier, those
     * past ng (the launch is rounded up to whole groups) without rows */
    if (tiled) sb_puts(b, "    const long lid = get_local_id(0), wg = get_local_size(0);\n    (void)wg;\n");
    else sb_puts(b, "    if (g >= ng) return;\n");
    sb_puts(b, "    const long r0 = g * rb, r1 = min(rows, r0 + rb);\n    (void)r1;\n");
}


char *cgen_cl_row(const CPlan *p)
{
    if (!row_ok(p)) return NULL;
    StrBuf sb = {0}, *b = &sb;
    ClGen g = {.p = p, .b = b};
    bool tiled = row_tiled(p);
    kernel_head(p, b, "oc", tiled);
    sb_puts(b, "    __global double *tw = tmp + g * tlen;\n"
               "    __global double *part = out + g * psz;\n"
               "    (void)part;\n"
               "    long off = 0;\n");
    for (int k = 0; k < p->nin; k++)
        if (p->in[k].mode == IM_SCALAR) sb_printf(b, "    const double s%d = sc[%d];\n", k, k);
    for (int i = 0; i < p->nn; i++) {
        const CNode *x = &p->n[i];
        if (x->kind == CN_IN || x->vc != VC_VEC || cg_row_no_temp(p, i)) continue;
        sb_printf(b, "    __global double *v%d = tw + off; off += L[%d];\n", i, x->vlen);
    }
    sb_printf(b, "    __global double *qv = tw + off; off += 1;\n"
                 "    __global double *ad = tw + off; off += L[%d];\n", p->main);
    csr_side_scratch(p, b, "tw", false);
    csr_side_vec(p, b);
    emit_partials(&g, tiled);
    /* tiled: rb steps in every work-item; one past its rows computes on
     * the last row (its own scratch, the launch's rounded-up size) and
     * writes nothing */
    if (tiled)
        sb_puts(b, "    for (long it = 0; it < rb; it++) {\n"
                   "        const int ra = r0 + it < rows;\n"
                   "        const long i = ra ? r0 + it : rows - 1;\n");
    else sb_puts(b, "    for (long i = r0; i < r1; i++) {\n");
    /* the main row: in place, or a CSR row expanded by its row pointers */
    sb_printf(b, "        gcd a = P%d + i * L[%d];\n"
                 "        if (msp) {\n"
                 "            for (long k = 0; k < L[%d]; k++) ad[k] = 0;\n"
                 "            for (long q = RP[i]; q < RP[i + 1]; q++) ad[CI[q]] = P%d[q];\n"
                 "            a = ad;\n"
                 "        }\n", p->main, p->main, p->main, p->main);
    for (int k = 0; k < p->nin; k++) {
        if (k == p->main) continue;
        switch (p->in[k].mode) {
        case IM_FULL:
            sb_printf(b, "        gcd p%d = P%d + i * L[%d];\n", k, k, k);
            csr_side_row(b, k, NULL, NULL);
            break;
        case IM_COL: csr_side_col(b, k, "        ", NULL); break;
        default: break;
        }
    }
    for (int i = 0; i < p->nn; i++)
        if (p->n[i].kind != CN_IN && !cg_row_agg_root(p, i)) emit_node(&g, i, "        ");
    if (tiled) sb_puts(b, "        if (ra) {\n");
    for (int t = 0; t < p->nout; t++) emit_out(&g, t, tiled ? "            " : "        ");
    if (tiled) sb_puts(b, "        }\n");
    sb_puts(b, "    }\n}\n");
    if (sb.oom) { free(sb.s); return NULL; }
    return sb.s;
}

int64_t cgen_cl_row_tmp(const CPlan *p, const int64_t *L)
{
    int64_t off = 1 + L[p->main];
    for (int i = 0; i < p->nn; i++) {
        const CNode *x = &p->n[i];
        if (x->kind != CN_IN && x->vc == VC_VEC && !cg_row_no_temp(p, i)) off += L[x->vlen];
    }
    return off;
}

/* ---- Outer ---- */

/* A cell operand of an Outer plan at the non-zero (i, j) of W (wv). */
static void outer_operand(const CPlan *p, int n, char *buf, size_t len)
{
    const CNode *x = &p->n[n];
    if (x->kind != CN_IN) { snprintf(buf, len, "t%d", n); return; }
    int k = x->in;
    switch (p->in[k].mode) {
    case IM_SCALAR: snprintf(buf, len, "s%d", k); break;
    case IM_COL: snprintf(buf, len, "c%d", k); break;
    case IM_ROW: snprintf(buf, len, "x%d", k); break;
    case IM_FULL:
        if (k == p->main) snprintf(buf, len, "wv");
        else snprintf(buf, len, "x%d", k);
        break;
    default: snprintf(buf, len, "0.0"); break;
    }
}

/* Can the generator take Outer plan p (its cell expression elementwise
 * operators over inputs of the iteration space, U %*% t(V) or U %*% B)? */
static bool outer_ok(const CPlan *p, int u, int v, int uv)
{
    if (p->tpl != T_OUTER || p->main < 0 || u < 0 || v < 0 || uv < 0) return false;
    for (int i = 0; i < p->nn; i++) {
        const CNode *x = &p->n[i];
        if (x->kind == CN_SLICE) return false;
        if (x->kind == CN_AGG && i != p->out[0]) return false;
        if ((x->kind == CN_MM || x->kind == CN_MMTL) && i != uv && i != p->out[0]) return false;
    }
    return p->var == V_NO_AGG || p->var == V_FULL_AGG || p->var == V_LEFT_MM || p->var == V_RIGHT_MM ||
           p->var == V_RIGHT_T_MM;
}

/* The variant's step at the non-zero (i, j) for the cell value e: NO_AGG
 * the value at W's position (q: the CSR entry, or the dense cell), a
 * full aggregate's Kahan step, the products' rows (LEFT: the work-item's
 * own output row i; RIGHT, RIGHT_T: the block's partial). */
static void outer_step(const CPlan *p, StrBuf *b, const char *e, int side, const char *ind)
{
    /* a CSR side matrix (csr_mat_in, csr_side_in; RP<side> NULL when
     * dense): its row (j for LEFT, i otherwise) by its entries; a NaN or
     * Inf cell value by every column, the row's cursor giving its values
     * and zeros elsewhere (ev * 0 as the dense loop: NaN) */
    if (side >= 0 && p->var != V_NO_AGG && p->var != V_FULL_AGG && (csr_mat_in(p, side) || csr_side_in(p, side))) {
        const char *row = p->var == V_LEFT_MM ? "j" : "i";
        char dst[64];
        if (p->var == V_LEFT_MM) snprintf(dst, sizeof dst, "out[i * L[%d] + c]", side);
        else if (p->var == V_RIGHT_MM) snprintf(dst, sizeof dst, "part[j * L[%d] + c]", side);
        else snprintf(dst, sizeof dst, "part[c * n + j]");
        sb_printf(b, "%sif (RP%d) {\n"
                     "%s    const double ev = %s;\n"
                     "%s    const long sa = RP%d[%s], se = RP%d[%s + 1];\n"
                     "%s    if (isfinite(ev)) for (long sq = sa; sq < se; sq++) { const long c = CI%d[sq]; %s += ev * P%d[sq]; }\n"
                     "%s    else for (long c = 0, sq = sa; c < L[%d]; c++) {\n"
                     "%s        double sv = 0;\n"
                     "%s        if (sq < se && CI%d[sq] == c) sv = P%d[sq++];\n"
                     "%s        %s += ev * sv;\n"
                     "%s    }\n"
                     "%s} else ",
                  ind, side, ind, e, ind, side, row, side, row, ind, side, dst, side, ind, side, ind, ind, side, side, ind,
                  dst, ind, ind);
        ind = "";
    }
    switch (p->var) {
    case V_NO_AGG: sb_printf(b, "%sout[q] = %s;\n", ind, e); break;
    case V_FULL_AGG:
        if (op_info[p->n[p->out[0]].op].acc & AC_SQ) sb_printf(b, "%s{ const double ev = %s; cg_kaddg(&part[0], &part[1], ev * ev); }\n", ind, e);
        else sb_printf(b, "%scg_kaddg(&part[0], &part[1], %s);\n", ind, e);
        break;
    case V_LEFT_MM:
        sb_printf(b, "%s{ const double ev = %s; for (long c = 0; c < L[%d]; c++) out[i * L[%d] + c] += ev * P%d[j * L[%d] + c]; }\n",
                  ind, e, side, side, side, side);
        break;
    case V_RIGHT_MM:
        sb_printf(b, "%s{ const double ev = %s; for (long c = 0; c < L[%d]; c++) part[j * L[%d] + c] += ev * P%d[i * L[%d] + c]; }\n",
                  ind, e, side, side, side, side);
        break;
    default:   /* RIGHT_T: the k x n transpose, written directly */
        sb_printf(b, "%s{ const double ev = %s; for (long c = 0; c < L[%d]; c++) part[c * n + j] += ev * P%d[i * L[%d] + c]; }\n",
                  ind, e, side, side, side);
        break;
    }
}

char *cgen_cl_outer(const CPlan *p)
{
    int u = -1, v = -1, side = -1, uv = -1;
    if (p->tpl != T_OUTER) return NULL;
    cg_outer_inputs(p, &u, &v, &side);
    for (int i = 0; i < p->nn && uv < 0; i++) {
        const CNode *x = &p->n[i];
        if (x->kind == CN_MM && p->n[x->a[0]].kind == CN_IN && p->in[p->n[x->a[0]].in].mode == IM_MAT) uv = i;
    }
    if (!outer_ok(p, u, v, uv)) return NULL;
    bool bt = p->in[v].mode == IM_BT;
    StrBuf sb = {0}, *b = &sb;
    kernel_head(p, b, "n", true);
    sb_puts(b, "    __global double *part = out + g * psz;\n"
               "    if (g < ng) for (long k = 0; k < psz; k++) part[k] = 0;\n");
    for (int k = 0; k < p->nin; k++)
        if (p->in[k].mode == IM_SCALAR) sb_printf(b, "    const double s%d = sc[%d];\n", k, k);
    /* lt: U's tile (a row's tk values per work-item), then V's (tj rows'
     * tk values), then anyp[0]: does a row of the group have an entry in
     * the column tile (a sparse W's empty tiles are not loaded) */
    sb_printf(b, "    const long r = L[%d];\n", u);
    sb_puts(b, "    " GPU_OUTER_TILES ";\n");
    sb_puts(b, "    for (long it = 0; it < rb; it++) {\n"
               "        const long i = r0 + it;\n"
               "        const int ra = i < r1;\n");
    /* the side inputs' values at W's non-zeros: CSR ones by a cursor u<k>
     * along the row's entries (W's cells come in column order), from
     * the row's first entry; a column vector's per row */
    for (int k = 0; k < p->nin; k++) {
        if (!csr_side_in(p, k)) continue;
        if (p->in[k].mode == IM_COL) csr_side_col(b, k, "        ", "!ra ? 0 : ");
        else sb_printf(b, "        long u%d = !ra || !RP%d ? 0 : RP%d[%s];\n", k, k, k, p->in[k].mode == IM_ROW ? "0" : "i");
    }
    if (p->var == V_LEFT_MM) sb_printf(b, "        if (ra) for (long c = 0; c < L[%d]; c++) out[i * L[%d] + c] = 0;\n", side, side);
    /* W's non-zeros: its CSR entries, or the dense row's non-zero cells,
     * taken by column tiles [j0, j0 + jn): entries [q, qt) */
    sb_printf(b, "        const long qa = !ra ? 0 : msp ? RP[i] : i * n, qe = !ra ? 0 : msp ? RP[i + 1] : (i + 1) * n;\n"
                 "        long q = qa;\n"
                 "        for (long j0 = 0; j0 < n; j0 += tj) {\n"
                 "            const long jn = min(tj, n - j0);\n"
                 "            long qt = q;\n"
                 "            while (qt < qe && (msp ? CI[qt] : qt - i * n) < j0 + jn) qt++;\n"
                 "            barrier(CLK_LOCAL_MEM_FENCE);\n"
                 "            if (lid == 0) anyp[0] = 0;\n"
                 "            barrier(CLK_LOCAL_MEM_FENCE);\n"
                 "            if (qt > q) anyp[0] = 1;\n"
                 "            barrier(CLK_LOCAL_MEM_FENCE);\n"
                 "            if (anyp[0] == 0) continue;\n"
                 "            double acc[CG_TJ];\n"
                 "            for (long c0 = 0; c0 < r; c0 += tk) {\n"
                 "                const long cn = min(tk, r - c0);\n"
                 "                barrier(CLK_LOCAL_MEM_FENCE);\n");
    /* V's tile (jn x cn, row-major) read along V's rows: coalesced */
    if (bt) sb_printf(b, "                for (long t = lid; t < jn * cn; t += wg) vt[t %% jn * cn + t / jn] = P%d[(c0 + t / jn) * n + j0 + t %% jn];\n", v);
    else {
        /* a CSR V (csr_mat_in): a row of the tile per work-item, zeros
         * and then its entries in [c0, c0 + cn) */
        if (csr_mat_in(p, v))
            sb_printf(b, "                if (RP%d) for (long t = lid; t < jn; t += wg) {\n"
                         "                    __local double *vr = vt + t * cn;\n"
                         "                    for (long c = 0; c < cn; c++) vr[c] = 0;\n"
                         "                    for (long x = RP%d[j0 + t]; x < RP%d[j0 + t + 1]; x++) {\n"
                         "                        const long c = CI%d[x] - c0;\n"
                         "                        if (c >= 0 && c < cn) vr[c] = P%d[x];\n"
                         "                    }\n"
                         "                } else\n", v, v, v, v, v);
        sb_printf(b, "                for (long t = lid; t < jn * cn; t += wg) vt[t] = P%d[(j0 + t / cn) * r + c0 + t %% cn];\n", v);
    }
    /* a CSR U (csr_mat_in): row i's entries in [c0, c0 + cn) */
    if (csr_mat_in(p, u))
        sb_printf(b, "                if (ra && RP%d) {\n"
                     "                    for (long c = 0; c < cn; c++) ut[c] = 0;\n"
                     "                    for (long x = RP%d[i]; x < RP%d[i + 1]; x++) {\n"
                     "                        const long c = CI%d[x] - c0;\n"
                     "                        if (c >= 0 && c < cn) ut[c] = P%d[x];\n"
                     "                    }\n"
                     "                } else", u, u, u, u, u);
    else sb_puts(b, "               ");
    sb_printf(b, " if (ra) for (long c = 0; c < cn; c++) ut[c] = P%d[i * r + c0 + c];\n"
                 "                barrier(CLK_LOCAL_MEM_FENCE);\n"
                 /* the dot products of the row's entries, in c's order
                  * across the tiles (the untiled sum's order) */
                 "                if (ra) for (long x = q; x < qt; x++) {\n"
                 "                    if (P%d[x] == 0) continue;\n"
                 "                    const long jj = (msp ? CI[x] : x - i * n) - j0;\n"
                 "                    double d = c0 ? acc[jj] : 0;\n"
                 "                    for (long c = 0; c < cn; c++) d += ut[c] * vt[jj * cn + c];\n"
                 "                    acc[jj] = d;\n"
                 "                }\n"
                 "            }\n"
                 "            if (ra) for (; q < qt; q++) {\n"
                 "                const long j = msp ? CI[q] : q - i * n;\n"
                 "                const double wv = P%d[q];\n"
                 "                if (wv == 0) { %scontinue; }\n"
                 "                const double t%d = r ? acc[j - j0] : 0;\n",
              u, p->main, p->main, p->var == V_NO_AGG ? "out[q] = 0; " : "", uv);
    for (int k = 0; k < p->nin; k++) {
        if (!csr_side_in(p, k) || p->in[k].mode == IM_COL) continue;
        bool row = p->in[k].mode == IM_ROW;
        char d[48];
        if (row) snprintf(d, sizeof d, "P%d[j]", k);
        else snprintf(d, sizeof d, "P%d[i * L[%d] + j]", k, k);
        sb_printf(b, "                double x%d;\n"
                     "                if (RP%d) {\n"
                     "                    const long ue = RP%d[%s];\n"
                     "                    while (u%d < ue && CI%d[u%d] < j) u%d++;\n"
                     "                    x%d = u%d < ue && CI%d[u%d] == j ? P%d[u%d] : 0;\n"
                     "                } else x%d = %s;\n",
                  k, k, k, row ? "1" : "i + 1", k, k, k, k, k, k, k, k, k, k, k, d);
    }
    for (int i = 0; i < p->nn; i++) {
        const CNode *x = &p->n[i];
        if (x->kind != CN_UN && x->kind != CN_BIN && x->kind != CN_TER) continue;
        char a[3][48], e[512];
        for (int k = 0; k < x->na; k++) outer_operand(p, x->a[k], a[k], sizeof a[k]);
        cg_op_expr(e, sizeof e, x, a);
        sb_printf(b, "                const double t%d = %s;\n", i, e);
    }
    const CNode *r = &p->n[p->out[0]];
    int cell = p->var == V_NO_AGG ? p->out[0] : p->var == V_RIGHT_T_MM ? r->a[1] : r->a[0];
    char e[48];
    outer_operand(p, cell, e, sizeof e);
    outer_step(p, b, e, side, "                ");
    sb_puts(b, "            }\n"
               "            q = qt;\n"
               "        }\n    }\n}\n");
    if (sb.oom) { free(sb.s); return NULL; }
    return sb.s;
}

/* ---- Cell and MAgg ---- */

/* A cell operand of a Cell/MAgg plan at cell (i, j): a scalar, a column
 * vector's value of row i, a row vector's or full input's cell j (X[,
 * lo:hi] reads X at its offset: the row pointer is set there), the main
 * input's stored value av on the sparse path. */
static void cell_operand(const CPlan *p, int n, bool sp, char *buf, size_t len)
{
    const CNode *x = &p->n[n];
    if (x->kind == CN_SLICE) { cell_operand(p, x->a[0], sp, buf, len); return; }
    if (x->kind != CN_IN) { snprintf(buf, len, "t%d", n); return; }
    int k = x->in;
    switch (p->in[k].mode) {
    case IM_SCALAR: snprintf(buf, len, "s%d", k); break;
    case IM_COL: snprintf(buf, len, "c%d", k); break;
    case IM_ROW: case IM_FULL:
        if (sp && k == p->main) snprintf(buf, len, "av");
        else if (sp && p->in[k].mode == IM_FULL) snprintf(buf, len, "x%d", k);
        else snprintf(buf, len, "p%d[j]", k);
        break;
    default: snprintf(buf, len, "0.0"); break;
    }
}

/* The cell expression under output r (an aggregate's operand, or the
 * output itself). */
static int cl_cell_root(const CPlan *p, int r)
{
    const CNode *x = &p->n[p->out[r]];
    return x->kind == CN_AGG ? x->a[0] : p->out[r];
}

/* Does Cell/MAgg plan p aggregate every output to one value (FULL_AGG;
 * an MAgg's V_MULTI)? */
static bool cell_full(const CPlan *p) { return p->var == V_FULL_AGG || (p->tpl == T_MAGG && p->var == V_MULTI); }

/* Can the generator take Cell/MAgg plan p: elementwise nodes over inputs
 * and in-place slices of full inputs, aggregates (sum, sum of squares,
 * min, max, mean) only as the outputs of an aggregating variant, several
 * outputs only as full aggregates? */
static bool cell_ok(const CPlan *p)
{
    if (p->tpl != T_CELL && p->tpl != T_MAGG) return false;
    if (p->var != V_NO_AGG && p->var != V_ROW_AGG && p->var != V_COL_AGG && !cell_full(p)) return false;
    if (p->nout < 1 || (p->nout > 1 && !cell_full(p))) return false;
    for (int i = 0; i < p->nn; i++) {
        const CNode *x = &p->n[i];
        switch (x->kind) {
        case CN_IN: case CN_UN: case CN_BIN: case CN_TER: break;
        case CN_SLICE:
            if (p->n[x->a[0]].kind != CN_IN || p->in[p->n[x->a[0]].in].mode != IM_FULL) return false;
            break;
        case CN_AGG: {
            bool root = false;
            for (int r = 0; r < p->nout; r++) root |= p->out[r] == i;
            int acc = op_info[x->op].acc;
            if (!root || p->var == V_NO_AGG || (acc & AC_IDX) || !(acc & AC_COMB)) return false;
            if (p->n[x->a[0]].kind == CN_AGG) return false;
            break;
        }
        default: return false;
        }
    }
    for (int r = 0; r < p->nout; r++)
        if (p->var != V_NO_AGG && p->n[p->out[r]].kind != CN_AGG) return false;
    return true;
}

/* The aggregation step of output r for the cell value e: ROW_AGG and
 * FULL_AGG into the work-item's private Kahan pair (or min/max) ar<r>,
 * cr<r>; COL_AGG into the block's column partial o[j] (sums, and their
 * corrections at o[n + j]; min/max with the count of values at o[n + j]
 * on the sparse path, where the combine adds the implicit zeros). */
static void cell_step(const CPlan *p, StrBuf *b, int r, const char *e, bool sp, const char *ind)
{
    OpCode op = p->n[p->out[r]].op;
    int ac = op_info[op].acc & AC_COMB;
    bool sq = (op_info[op].acc & AC_SQ) != 0;
    const char *mm = ac == AC_MIN ? "min" : ac == AC_MAX ? "max" : NULL;
    if (p->var == V_COL_AGG) {
        if (mm) sb_printf(b, "%sop[j] = cg_%sstep(op[j], %s);%s\n", ind, mm, e, sp ? " op[n + j] += 1;" : "");
        else if (sq) sb_printf(b, "%s{ const double q = %s; cg_kaddg(&op[j], &op[n + j], q * q); }\n", ind, e);
        else sb_printf(b, "%scg_kaddg(&op[j], &op[n + j], %s);\n", ind, e);
        return;
    }
    if (mm) sb_printf(b, "%sar%d = cg_%sstep(ar%d, %s);\n", ind, r, mm, r, e);
    else if (sq) sb_printf(b, "%s{ const double q = %s; cg_kadd(&ar%d, &cr%d, q * q); }\n", ind, e, r, r);
    else sb_printf(b, "%scg_kadd(&ar%d, &cr%d, %s);\n", ind, r, r, e);
}

/* The loop over row i's cells: every column j (dense), or the main
 * input's stored entries q of the row (sp: j = CI[q], av its value). */
static void cell_loop(const CPlan *p, StrBuf *b, bool sp)
{
    const char *ind = "            ";
    if (sp) sb_printf(b, "        for (long q = RP[i]; q < RP[i + 1]; q++) {\n"
                         "%sconst long j = CI[q]; const double av = P%d[q]; (void)j;\n", ind, p->main);
    else sb_puts(b, "        for (long j = 0; j < n; j++) {\n");
    /* the sparse path: a full side input's cell by the cursor u<k> along
     * its CSR row (the main input's entries come in column order), only
     * at the cells visited; a dense one in place */
    for (int k = 0; k < p->nin && sp; k++) {
        if (!csr_side_in(p, k) || p->in[k].mode != IM_FULL) continue;
        sb_printf(b, "%sdouble x%d;\n"
                     "%sif (RP%d) {\n"
                     "%s    const long ue = RP%d[i + 1], jc = j + L[%d];\n"
                     "%s    while (u%d < ue && CI%d[u%d] < jc) u%d++;\n"
                     "%s    x%d = u%d < ue && CI%d[u%d] == jc ? P%d[u%d] : 0;\n"
                     "%s} else x%d = p%d[j];\n",
                  ind, k, ind, k, ind, k, p->nin + k, ind, k, k, k, k, ind, k, k, k, k, k, k, ind, k, k);
    }
    for (int i = 0; i < p->nn; i++) {
        const CNode *x = &p->n[i];
        if (x->kind != CN_UN && x->kind != CN_BIN && x->kind != CN_TER) continue;
        char a[3][48], e[512];
        for (int k = 0; k < x->na; k++) cell_operand(p, x->a[k], sp, a[k], sizeof a[k]);
        cg_op_expr(e, sizeof e, x, a);
        sb_printf(b, "%sconst double t%d = %s;\n", ind, i, e);
    }
    for (int r = 0; r < p->nout; r++) {
        char e[48];
        cell_operand(p, cl_cell_root(p, r), sp, e, sizeof e);
        if (p->var == V_NO_AGG) sb_printf(b, "%sout[%s] = %s;\n", ind, sp ? "q" : "i * n + j", e);
        else cell_step(p, b, r, e, sp, ind);
    }
    sb_puts(b, "        }\n");
}

char *cgen_cl_cell(const CPlan *p)
{
    if (!cell_ok(p)) return NULL;
    bool spath = p->sparse_safe && p->main >= 0 && p->in[p->main].mode == IM_FULL;
    StrBuf sb = {0}, *b = &sb;
    kernel_head(p, b, "n", false);
    sb_puts(b, "    __global double *ad = tmp + g * tlen;\n"
               "    __global double *part = out + g * psz;\n"
               "    (void)ad; (void)part;\n");
    /* the CSR side inputs' rows after a CSR main row expanded (msp 1) */
    if (p->main >= 0 && p->in[p->main].mode == IM_FULL) sb_printf(b, "    long off = msp == 1 ? L[%d] : 0;\n", p->main);
    else sb_puts(b, "    long off = 0;\n");
    csr_side_scratch(p, b, "ad", spath);
    csr_side_vec(p, b);
    for (int k = 0; k < p->nin; k++)
        if (p->in[k].mode == IM_SCALAR) sb_printf(b, "    const double s%d = sc[%d];\n", k, k);
    bool rowv = p->var == V_ROW_AGG, full = cell_full(p);
    if (p->var == V_COL_AGG) {
        OpCode op = p->n[p->out[0]].op;
        int ac = op_info[op].acc & AC_COMB;
        sb_printf(b, "    __global double *op = part;\n"
                     "    for (long j = 0; j < n; j++) { op[j] = %s; op[n + j] = 0; }\n",
                  ac == AC_MIN ? "INFINITY" : ac == AC_MAX ? "-INFINITY" : "0");
    }
    for (int r = 0; r < p->nout && full; r++) {
        int ac = op_info[p->n[p->out[r]].op].acc & AC_COMB;
        sb_printf(b, "    double ar%d = %s, cr%d = 0;\n", r, ac == AC_MIN ? "INFINITY" : ac == AC_MAX ? "-INFINITY" : "0", r);
    }
    if (full) sb_puts(b, "    long nzc = 0;\n    (void)nzc;\n");
    sb_puts(b, "    for (long i = r0; i < r1; i++) {\n");
    int nin = p->nin;
    for (int k = 0; k < nin; k++) {
        switch (p->in[k].mode) {
        case IM_FULL:
            sb_printf(b, "        gcd p%d = P%d + i * L[%d] + L[%d];\n", k, k, k, nin + k);
            if (k == p->main) {
                /* a CSR main input off the sparse path: its row expanded */
                sb_printf(b, "        if (msp == 1) {\n"
                             "            for (long k = 0; k < L[%d]; k++) ad[k] = 0;\n"
                             "            for (long q = RP[i]; q < RP[i + 1]; q++) ad[CI[q]] = P%d[q];\n"
                             "            p%d = ad + L[%d];\n"
                             "        }\n", k, k, k, nin + k);
            } else {
                /* (the sparse path reads it by a cursor instead: cell_loop) */
                char coff[24];
                snprintf(coff, sizeof coff, "L[%d]", nin + k);
                csr_side_row(b, k, coff, spath ? "msp != 2" : NULL);
                if (spath) sb_printf(b, "        long u%d = RP%d ? RP%d[i] : 0;\n", k, k, k);
            }
            break;
        case IM_ROW: if (!csr_side_in(p, k)) sb_printf(b, "        gcd p%d = P%d;\n", k, k); break;
        case IM_COL:
            if (csr_side_in(p, k)) csr_side_col(b, k, "        ", NULL);
            else sb_printf(b, "        const double c%d = P%d[i];\n", k, k);
            break;
        default: break;
        }
    }
    if (rowv) {
        int ac = op_info[p->n[p->out[0]].op].acc & AC_COMB;
        sb_printf(b, "        double ar0 = %s, cr0 = 0;\n", ac == AC_MIN ? "INFINITY" : ac == AC_MAX ? "-INFINITY" : "0");
    }
    if (spath) {
        sb_puts(b, "        if (msp == 2) {\n");
        cell_loop(p, b, true);
        /* the row's implicit zeros: min, max (and the count of the full
         * aggregates, for the combine) */
        if (rowv) {
            int ac = op_info[p->n[p->out[0]].op].acc & AC_COMB;
            if (ac == AC_MIN || ac == AC_MAX)
                sb_printf(b, "        if (RP[i + 1] - RP[i] < n) ar0 = cg_%sstep(ar0, 0.0);\n", ac == AC_MIN ? "min" : "max");
        }
        if (full) sb_puts(b, "        nzc += RP[i + 1] - RP[i];\n");
        sb_puts(b, "        } else {\n");
    }
    cell_loop(p, b, false);
    if (spath) sb_puts(b, "        }\n");
    if (rowv) {
        bool mean = (op_info[p->n[p->out[0]].op].acc & AC_MEAN) != 0;
        int ac = op_info[p->n[p->out[0]].op].acc & AC_COMB;
        if (ac == AC_MIN || ac == AC_MAX) sb_puts(b, "        out[i] = ar0;\n");
        else sb_printf(b, "        out[i] = (ar0 + cr0)%s;\n", mean ? " / (double)n" : "");
    }
    sb_puts(b, "    }\n");
    /* full aggregates: the work-item's pair (min/max: the value and, on
     * the sparse path, the count of stored values) */
    for (int r = 0; r < p->nout && full; r++) {
        int ac = op_info[p->n[p->out[r]].op].acc & AC_COMB;
        if (ac == AC_MIN || ac == AC_MAX) sb_printf(b, "    part[%d] = ar%d; part[%d] = msp == 2 ? (double)nzc : 0;\n", 2 * r, r, 2 * r + 1);
        else sb_printf(b, "    part[%d] = ar%d; part[%d] = cr%d;\n", 2 * r, r, 2 * r + 1, r);
    }
    sb_puts(b, "}\n");
    if (sb.oom) { free(sb.s); return NULL; }
    return sb.s;
}
