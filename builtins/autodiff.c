/* autodiff.c: autoDiff(output=dout, lineage=list(trace)), SystemDS's
 * experimental derivatives from a lineage trace (runtime/util/AutoDiff):
 * the trace (lineage(X)'s text; every "foo" in it dropped, as SystemDS
 * drops the marker its test appends) is walked in its post-order, its
 * creation items (rand with the seed the trace recorded, seq, a read) and
 * literals evaluated, and each instruction item differentiated with dout
 * standing for the derivative of the output:
 *   ba+* (X %*% W)  ->  "dX" = dout %*% t(W), "dW" = t(X) %*% dout
 *   +    (Z + b)    ->  "dB" = colSums(dout)
 * A list of the derivatives in that order comes back (for an affine layer
 * X %*% W + b: dX, dW, dB, what nn's affine::backward gives for dout).
 * Other instructions are an error, as in SystemDS, whose prototype knows
 * only these two; a reblock after a read passes its input through (there
 * SystemDS stops). An instruction item's operands that are instruction
 * items themselves take that item's derivative, as SystemDS's hop map
 * holds it (the derivative of a deeper network is not what this
 * computes, in SystemDS either). */
#include "builtins.h"

#include <stdlib.h>
#include <string.h>

#include "../io/io.h"
#include "../kernels/agg.h"
#include "../kernels/gen.h"
#include "../kernels/mm.h"
#include "../kernels/reorg.h"

#define DEG "\xc2\xb0"   /* SystemDS's operand delimiter */
#define MID "\xc2\xb7"   /* its value-type separator */

typedef struct {
    int64_t id;
    char kind;           /* 'L', 'C', 'I' */
    char *text;          /* opcode (I) or data (C, L); owned */
    int64_t *in;         /* input ids (I) */
    int nin;
    Value v;             /* value, or the derivative (I) */
} AdItem;

typedef struct {
    AdItem *it;
    int n, cap;
} AdTrace;

static void trace_free(AdTrace *t)
{
    for (int k = 0; k < t->n; k++) {
        free(t->it[k].text);
        free(t->it[k].in);
        val_release(&t->it[k].v);
    }
    free(t->it);
}

static AdItem *find(AdTrace *t, int64_t id)
{
    for (int k = t->n - 1; k >= 0; k--)
        if (t->it[k].id == id) return &t->it[k];
    return NULL;
}

/* "(id)" at *p; advances past it. */
static bool paren_id(const char **p, int64_t *id)
{
    const char *s = *p;
    if (*s != '(') return false;
    char *end;
    long long v = strtoll(s + 1, &end, 10);
    if (end == s + 1 || *end != ')') return false;
    *id = v;
    *p = end + 1;
    return true;
}

/* One line "(id) (K) rest". */
static int parse_line(AdTrace *t, const char *s, size_t n, int line, BrErr *e)
{
    char *ln = br_malloc(n + 1);
    if (!ln) return br_err(e, BR_ENOMEM, "out of memory");
    memcpy(ln, s, n);
    ln[n] = 0;
    const char *p = ln;
    AdItem it = {.v = val_none()};
    bool ok = paren_id(&p, &it.id) && p[0] == ' ' && p[1] == '(' && p[2] && p[3] == ')' && p[4] == ' ';
    if (ok) {
        it.kind = p[2];
        p += 5;
        ok = it.kind == 'L' || it.kind == 'C' || it.kind == 'I';
    }
    if (ok && it.kind == 'I') {
        const char *sp = strchr(p, ' ');
        size_t ol = sp ? (size_t)(sp - p) : strlen(p);
        it.text = br_malloc(ol + 1);
        ok = it.text != NULL;
        if (ok) { memcpy(it.text, p, ol); it.text[ol] = 0; }
        p += ol;
        while (ok && *p == ' ') {
            p++;
            int64_t id;
            if (!(ok = paren_id(&p, &id))) break;
            int64_t *in = br_realloc(it.in, (size_t)(it.nin + 1) * sizeof *in);
            if (!(ok = in != NULL)) break;
            it.in = in;
            it.in[it.nin++] = id;
        }
        ok = ok && *p == 0;
    } else if (ok) {
        ok = (it.text = br_strdup(p)) != NULL;
    }
    free(ln);
    if (!ok) {
        free(it.text);
        free(it.in);
        return br_err(e, BR_EARG, "autoDiff: line %d of the lineage trace is not \"(id) (L|C|I) ...\"", line);
    }
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 16;
        AdItem *ni = br_realloc(t->it, (size_t)cap * sizeof *ni);
        if (!ni) { free(it.text); free(it.in); return br_err(e, BR_ENOMEM, "out of memory"); }
        t->it = ni;
        t->cap = cap;
    }
    t->it[t->n++] = it;
    return 0;
}

/* Field k (0-based) of a DEG-separated instruction string, into buf. */
static bool field(const char *s, int k, char *buf, size_t n)
{
    for (int i = 0; i < k; i++) {
        s = strstr(s, DEG);
        if (!s) return false;
        s += strlen(DEG);
    }
    const char *end = strstr(s, DEG);
    size_t l = end ? (size_t)(end - s) : strlen(s);
    if (l >= n) return false;
    memcpy(buf, s, l);
    buf[l] = 0;
    /* an operand "value·SCALAR·VT·true": its value */
    char *m = strstr(buf, MID);
    if (m) *m = 0;
    return true;
}

static bool int_field(const char *s, int k, int64_t *out)
{
    char buf[512], *end;
    if (!field(s, k, buf, sizeof buf)) return false;
    *out = strtoll(buf, &end, 10);
    return end != buf && *end == 0;
}

static bool num_field(const char *s, int k, double *out)
{
    char buf[512], *end;
    if (!field(s, k, buf, sizeof buf)) return false;
    *out = strtod(buf, &end);
    return end != buf && *end == 0;
}

/* A creation item's value: rand, seq or a read (createvar). */
static int create(AdItem *it, BrErr *e)
{
    char op[64];
    if (!field(it->text, 1, op, sizeof op)) op[0] = 0;
    double r, c, mn, mx, sp, lambda, from, to, inc;
    int64_t seed;
    if (!strcmp(op, "rand")) {
        char pdf[64];
        if (!num_field(it->text, 2, &r) || !num_field(it->text, 3, &c) || !num_field(it->text, 5, &mn) ||
            !num_field(it->text, 6, &mx) || !num_field(it->text, 7, &sp) || !int_field(it->text, 8, &seed) ||
            !field(it->text, 9, pdf, sizeof pdf) || !num_field(it->text, 10, &lambda))
            return br_err(e, BR_EARG, "autoDiff: lineage item %lld: a rand instruction braid cannot read",
                          (long long)it->id);
        if (!(r >= 0 && r < 9e18 && c >= 0 && c < 9e18))
            return br_err(e, BR_EARG, "autoDiff: lineage item %lld: rand of %g x %g", (long long)it->id, r, c);
        MB *m = k_rand((int64_t)r, (int64_t)c, mn, mx, sp, pdf, lambda, seed, e);
        if (!m) return e->code;
        it->v = val_matrix(m);
        return 0;
    }
    if (!strcmp(op, "seq")) {
        if (!num_field(it->text, 5, &from) || !num_field(it->text, 6, &to) || !num_field(it->text, 7, &inc))
            return br_err(e, BR_EARG, "autoDiff: lineage item %lld: a seq instruction braid cannot read",
                          (long long)it->id);
        MB *m = k_seq(from, to, inc, e);
        if (!m) return e->code;
        it->v = val_matrix(m);
        return 0;
    }
    if (!strcmp(op, "createvar")) {
        char file[4096], fmt[64];
        if (!field(it->text, 3, file, sizeof file) || !field(it->text, 6, fmt, sizeof fmt))
            return br_err(e, BR_EARG, "autoDiff: lineage item %lld: a read braid cannot follow", (long long)it->id);
        IoReadOpts o;
        io_read_opts_init(&o);
        o.format = fmt;
        MB *m = io_read_matrix(file, &o, e);
        if (!m) return e->code;
        it->v = val_matrix(m);
        return 0;
    }
    return br_err(e, BR_EARG, "autoDiff: lineage item %lld: the creation \"%s\" is not supported (rand, seq, read)",
                  (long long)it->id, op);
}

/* A literal item "value·SCALAR·VT·true" as a double. */
static int literal(AdItem *it, BrErr *e)
{
    char buf[256];
    double d;
    char *end;
    snprintf(buf, sizeof buf, "%s", it->text);
    char *m = strstr(buf, MID);
    if (m) *m = 0;
    d = strtod(buf, &end);
    it->v = end != buf && *end == 0 ? val_double(d) : val_string(buf);
    return 0;
}

static const MB *operand(AdTrace *t, AdItem *it, int k, BrErr *e)
{
    AdItem *x = k < it->nin ? find(t, it->in[k]) : NULL;
    if (!x || x->v.kind != V_MATRIX) {
        br_err(e, BR_EARG, "autoDiff: lineage item %lld (%s): operand %d is not a matrix of the trace",
               (long long)it->id, it->text, k + 1);
        return NULL;
    }
    return x->v.m;
}

static int add(Value *l, MB *m, const char *name, BrErr *e)
{
    if (!m) return e->code;
    Value r = val_retain(val_matrix(m));
    return list_append(l->l, r, name, e);
}

/* An instruction item: its derivatives appended to out, the first kept
 * as the item's value. */
static int differentiate(AdTrace *t, AdItem *it, const MB *dout, Value *out, BrErr *e)
{
    if (!strcmp(it->text, "rblk") && it->nin == 1) {
        AdItem *x = find(t, it->in[0]);
        if (x) it->v = val_retain(x->v);
        return 0;
    }
    if (!strcmp(it->text, "ba+*")) {
        const MB *x = operand(t, it, 0, e), *w = x ? operand(t, it, 1, e) : NULL;
        if (!w) return e->code;
        MB *wt = k_transpose(w, e);
        MB *dx = wt ? k_matmul(dout, wt, e) : NULL;
        mb_release(wt);
        MB *dw = dx ? k_matmul_tl(x, dout, e) : NULL;
        if (!dx || !dw) { mb_release(dx); return e->code; }
        int rc = add(out, dx, "dX", e) || add(out, dw, "dW", e);
        it->v = val_matrix(dx);
        mb_release(dw);
        return rc ? e->code : 0;
    }
    if (!strcmp(it->text, "+")) {
        MB *db = k_agg(OP_SUM, DIR_COL, dout, e);
        if (!db) return e->code;
        int rc = add(out, db, "dB", e);
        it->v = val_matrix(db);
        return rc ? e->code : 0;
    }
    return br_err(e, BR_EARG, "autoDiff: lineage item %lld: the instruction \"%s\" has no derivative here "
                  "(SystemDS's autoDiff knows ba+* and +)", (long long)it->id, it->text);
}

int bi_autodiff(Rt *rt, Frame *f, const Instr *h, Value *a, Value *out, BrErr *e)
{
    if (h->bi != BI_AUTODIFF) return BI_NOT_MINE;
    if (a[0].kind != V_MATRIX)
        return br_err(e, BR_EARG, "autoDiff: output= must be a matrix, not a %s", val_kind_name(a[0].kind));
    const Value *lv = &a[1];
    if (lv->kind == V_LIST) lv = lv->l->n > 0 ? &lv->l->items[0] : NULL;
    if (!lv || lv->kind != V_STRING)
        return br_err(e, BR_EARG, "autoDiff: lineage= must be a list holding lineage(X)'s trace");
    /* SystemDS drops every "foo" (the marker its test appends) */
    const char *src = lv->s->s;
    char *txt = br_malloc(strlen(src) + 1), *q = txt;
    if (!txt) return br_err(e, BR_ENOMEM, "out of memory");
    for (const char *p = src; *p;) {
        if (!strncmp(p, "foo", 3)) { p += 3; continue; }
        *q++ = *p++;
    }
    *q = 0;
    AdTrace t = {0};
    Value res = val_list_new(4);
    int rc = 0, line = 0;
    for (const char *p = txt; *p && !rc;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        line++;
        if (n > 0) rc = parse_line(&t, p, n, line, e);
        p += n + (nl ? 1 : 0);
    }
    if (!rc && t.n == 0) rc = br_err(e, BR_EARG, "autoDiff: the lineage trace is empty");
    for (int k = 0; k < t.n && !rc; k++) {
        AdItem *it = &t.it[k];
        rc = it->kind == 'C' ? create(it, e) : it->kind == 'L' ? literal(it, e)
           : differentiate(&t, it, a[0].m, &res, e);
    }
    trace_free(&t);
    free(txt);
    if (rc) { val_release(&res); return e->code; }
    *out = res;
    return 0;
}
