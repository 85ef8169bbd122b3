/* einsum.c: the reference evaluation of an einsum equation (einsum.h):
 * an odometer over every combination of letter values, summing operand
 * products into the output cells. The cost is the product of all letter
 * sizes, so it suits the small contractions einsum is written for; the
 * usual products have their own operators. */
#include "einsum.h"

#include <stdlib.h>
#include <string.h>

#define EIN_MAXL 52     /* letters a-z, A-Z */

/* The parsed equation: per operand its axes' letter numbers (-1: none). */
typedef struct Eq {
    int nops;
    int ax[64][2];
    int out[2];         /* output letters, -1: none */
    int nout;
    int nl;             /* distinct letters */
    char letter[EIN_MAXL];
} Eq;

static int letter_id(Eq *q, char c)
{
    for (int l = 0; l < q->nl; l++)
        if (q->letter[l] == c) return l;
    q->letter[q->nl] = c;
    return q->nl++;
}

static bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

static int parse(const char *eq, int n, Eq *q, BrErr *e)
{
    memset(q, 0, sizeof *q);
    for (int k = 0; k < 64; k++) q->ax[k][0] = q->ax[k][1] = -1;
    q->out[0] = q->out[1] = -1;
    const char *arrow = strstr(eq, "->");
    const char *lhs_end = arrow ? arrow : eq + strlen(eq);
    int op = 0, na = 0;
    for (const char *p = eq; p < lhs_end; p++) {
        if (*p == ' ') continue;
        if (*p == ',') {
            if (na == 0) return br_err(e, BR_EARG, "einsum: operand %d of \"%s\" has no letters", op + 1, eq);
            if (++op >= 64) return br_err(e, BR_EARG, "einsum: more than 64 operands in \"%s\"", eq);
            na = 0;
            continue;
        }
        if (!is_letter(*p)) return br_err(e, BR_EARG, "einsum: unexpected '%c' in \"%s\" (letters, ',', \"->\")", *p, eq);
        if (na == 2) return br_err(e, BR_EARG, "einsum: operand %d of \"%s\" has more than two axes", op + 1, eq);
        q->ax[op][na++] = letter_id(q, *p);
    }
    if (na == 0) return br_err(e, BR_EARG, "einsum: operand %d of \"%s\" has no letters", op + 1, eq);
    q->nops = op + 1;
    if (q->nops != n)
        return br_err(e, BR_EARG, "einsum: \"%s\" names %d operands, %d given", eq, q->nops, n);
    for (const char *p = arrow ? arrow + 2 : lhs_end; *p; p++) {
        if (*p == ' ') continue;
        int l = -1;
        for (int k = 0; k < q->nl; k++)
            if (q->letter[k] == *p) l = k;
        if (l < 0)
            return br_err(e, BR_EARG, "einsum: output letter '%c' of \"%s\" is not in the operands", *p, eq);
        if (q->nout == 2) return br_err(e, BR_EARG, "einsum: more than two output letters in \"%s\"", eq);
        if (q->nout == 1 && q->out[0] == l)
            return br_err(e, BR_EARG, "einsum: output letter '%c' of \"%s\" appears twice", *p, eq);
        q->out[q->nout++] = l;
    }
    return 0;
}

/* The letters' sizes from the operands; an operand with one letter must be
 * a column vector. */
static int sizes(const Eq *q, const char *eq, const MB *const *ops, int64_t *dim, BrErr *e)
{
    for (int l = 0; l < q->nl; l++) dim[l] = -1;
    for (int k = 0; k < q->nops; k++) {
        const MB *m = ops[k];
        if (q->ax[k][1] < 0 && m->cols != 1)
            return br_err(e, BR_EDIM, "einsum: operand %d has one letter in \"%s\" but %lld columns "
                          "(a column vector needed)", k + 1, eq, (long long)m->cols);
        for (int a = 0; a < 2 && q->ax[k][a] >= 0; a++) {
            int l = q->ax[k][a];
            int64_t d = a == 0 ? m->rows : m->cols;
            if (dim[l] >= 0 && dim[l] != d)
                return br_err(e, BR_EDIM, "einsum: letter '%c' of \"%s\" is %lld in one place and %lld in "
                              "another (dimension mismatch)", q->letter[l], eq, (long long)dim[l], (long long)d);
            dim[l] = d;
        }
    }
    return 0;
}

MB *k_einsum(const char *eq, const MB *const *ops, int n, bool *scalar, BrErr *e)
{
    Eq q;
    int64_t dim[EIN_MAXL];
    if (parse(eq, n, &q, e) || sizes(&q, eq, ops, dim, e)) return NULL;
    *scalar = q.nout == 0;
    int64_t orows = q.nout > 0 ? dim[q.out[0]] : 1, ocols = q.nout > 1 ? dim[q.out[1]] : 1;
    MB *out = mb_dense(orows, ocols, e);
    MB **dense = br_calloc((size_t)n, sizeof *dense);
    if (!out || !dense) {
        mb_release(out);
        free(dense);
        if (!e->code) br_err(e, BR_ENOMEM, "einsum: out of memory");
        return NULL;
    }
    bool empty = false;
    double total = 1;
    for (int l = 0; l < q.nl; l++) {
        empty |= dim[l] == 0;
        total *= (double)dim[l];
    }
    if (!empty && total > 1e12) {
        mb_release(out);
        free(dense);
        br_err(e, BR_EARG, "einsum: \"%s\" spans %.3g letter combinations, too many for its "
               "evaluation; write the product with %%*%% and aggregates", eq, total);
        return NULL;
    }
    for (int k = 0; k < n && out; k++)
        if (!(dense[k] = mb_to_dense(ops[k], e))) { mb_release(out); out = NULL; }
    if (out && !empty) {
        int64_t idx[EIN_MAXL] = {0};
        for (;;) {
            double p = 1;
            for (int k = 0; k < n; k++) {
                const MB *m = dense[k];
                int64_t r = idx[q.ax[k][0]], c = q.ax[k][1] >= 0 ? idx[q.ax[k][1]] : 0;
                p *= m->d[r * m->cols + c];
            }
            int64_t r = q.nout > 0 ? idx[q.out[0]] : 0, c = q.nout > 1 ? idx[q.out[1]] : 0;
            out->d[r * ocols + c] += p;
            int l = q.nl - 1;     /* the odometer: the last letter turns fastest */
            while (l >= 0 && ++idx[l] == dim[l]) idx[l--] = 0;
            if (l < 0) break;
        }
    }
    for (int k = 0; k < n; k++) mb_release(dense[k]);
    free(dense);
    if (out) mb_recount_nnz(out);
    return out ? mb_finish(out, e) : NULL;
}
