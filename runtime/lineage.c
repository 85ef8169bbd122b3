/* lineage.c: lineage items, the literal map and SystemDS's explain form
 * (lineage.h). */
#include "lineage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "../matrix/format.h"

struct LinTrace {
    pthread_mutex_t lock;
    LinItem **all;          /* every item (freed with the trace) */
    int64_t n, cap;
    int64_t next_id;
    uint32_t epoch;         /* explain's visit marks */
    LinItem **lits;         /* literal map: open addressing on data */
    int64_t nlits, lcap;
};

LinTrace *lin_new(void)
{
    LinTrace *t = br_calloc(1, sizeof *t);
    if (t) pthread_mutex_init(&t->lock, NULL);
    return t;
}

void lin_free(LinTrace *t)
{
    if (!t) return;
    for (int64_t i = 0; i < t->n; i++) free(t->all[i]);
    free(t->all);
    free(t->lits);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

/* Under the lock: registers it (false without memory). */
static bool keep(LinTrace *t, LinItem *it)
{
    if (t->n == t->cap) {
        int64_t nc = t->cap ? 2 * t->cap : 256;
        LinItem **a = realloc(t->all, (size_t)nc * sizeof *a);
        if (!a) return false;
        t->all = a;
        t->cap = nc;
    }
    t->all[t->n++] = it;
    it->id = t->next_id++;
    return true;
}

/* One allocation: the item, its inputs, then opcode and data. */
static LinItem *make(const char *opcode, const char *data, LinItem *const *in, int nin)
{
    size_t lo = strlen(opcode) + 1, ld = strlen(data) + 1, base = sizeof(LinItem) + (size_t)nin * sizeof(LinItem *);
    LinItem *it = malloc(base + lo + ld);
    if (!it) return NULL;
    char *s = (char *)it + base;
    memcpy(s, opcode, lo);
    memcpy(s + lo, data, ld);
    it->opcode = s;
    it->data = s + lo;
    it->mark = 0;
    it->nin = nin;
    for (int k = 0; k < nin; k++) it->in[k] = in[k];
    return it;
}

LinItem *lin_item(LinTrace *t, const char *opcode, const char *data, LinItem *const *in, int nin)
{
    LinItem *it = make(opcode, data, in, nin);
    if (!it) return NULL;
    pthread_mutex_lock(&t->lock);
    bool ok = keep(t, it);
    pthread_mutex_unlock(&t->lock);
    if (!ok) { free(it); return NULL; }
    return it;
}

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    while (*s) { h ^= (unsigned char)*s++; h *= 1099511628211ULL; }
    return h;
}

/* Under the lock: the literal with this data, made once. */
static LinItem *literal(LinTrace *t, const char *data)
{
    if ((t->nlits + 1) * 2 > t->lcap) {
        int64_t nc = t->lcap ? 2 * t->lcap : 64;
        LinItem **a = calloc((size_t)nc, sizeof *a);
        if (!a) return NULL;
        for (int64_t i = 0; i < t->lcap; i++)
            if (t->lits[i]) {
                int64_t j = (int64_t)(hash(t->lits[i]->data) & (uint64_t)(nc - 1));
                while (a[j]) j = (j + 1) & (nc - 1);
                a[j] = t->lits[i];
            }
        free(t->lits);
        t->lits = a;
        t->lcap = nc;
    }
    int64_t j = (int64_t)(hash(data) & (uint64_t)(t->lcap - 1));
    for (; t->lits[j]; j = (j + 1) & (t->lcap - 1))
        if (strcmp(t->lits[j]->data, data) == 0) return t->lits[j];
    LinItem *it = make("", data, NULL, 0);
    if (!it) return NULL;
    if (!keep(t, it)) { free(it); return NULL; }
    t->lits[j] = it;
    t->nlits++;
    return it;
}

const char *lin_dtype(const Value *v)
{
    switch (v->kind) {
    case V_MATRIX: case V_DIST: return "MATRIX";
    case V_FRAME: return "FRAME";
    case V_LIST: return "LIST";
    case V_NONE: return "UNKNOWN";
    default: return "SCALAR";
    }
}

const char *lin_vtype(const Value *v)
{
    switch (v->kind) {
    case V_MATRIX: case V_DIST: case V_DOUBLE: return "FP64";
    case V_INT: return "INT64";
    case V_BOOL: return "BOOLEAN";
    case V_STRING: return "STRING";
    case V_FRAME: return "STRING";
    default: return "UNKNOWN";
    }
}

LinItem *lin_literal(LinTrace *t, const Value *v, const char *name)
{
    Value none = val_none();
    if (!v) v = &none;
    char num[FMT_NUM_MAX];
    const char *text;
    bool lit = true;
    switch (v->kind) {
    case V_DOUBLE: fmt_double(v->d, num, sizeof num); text = num; break;
    case V_INT: fmt_int(v->i, num, sizeof num); text = num; break;
    case V_BOOL: text = fmt_bool_file(v->b); break;
    case V_STRING: text = v->s ? v->s->s : ""; break;
    default: text = name ? name : "_"; lit = false; break;
    }
    const char *dt = lin_dtype(v), *vt = lin_vtype(v);
    size_t n = strlen(text) + strlen(dt) + strlen(vt) + 16;
    char *data = malloc(n);
    if (!data) return NULL;
    /* U+00B7 (SystemDS's Lop.DATATYPE_PREFIX, VALUETYPE_PREFIX, LITERAL_PREFIX) */
    snprintf(data, n, "%s\xc2\xb7%s\xc2\xb7%s\xc2\xb7%s", text, dt, vt, lit ? "true" : "false");
    pthread_mutex_lock(&t->lock);
    LinItem *it = literal(t, data);
    pthread_mutex_unlock(&t->lock);
    free(data);
    return it;
}

/* A growable string. */
typedef struct { char *s; size_t n, cap; bool oom; } Buf;

static void put(Buf *b, const char *s, size_t n)
{
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t nc = b->cap ? 2 * b->cap : 256;
        while (nc < b->n + n + 1) nc *= 2;
        char *p = realloc(b->s, nc);
        if (!p) { b->oom = true; return; }
        b->s = p;
        b->cap = nc;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = 0;
}

static void puts_(Buf *b, const char *s) { put(b, s, strlen(s)); }

/* LineageItemUtils.explainSingleLineageItem: "(id) (type) data" for a
 * leaf, "(id) (I) opcode (in1) (in2)" for an instruction. */
static void line(Buf *b, const LinItem *it)
{
    char num[48];
    snprintf(num, sizeof num, "(%lld) ", (long long)it->id);
    puts_(b, num);
    bool leaf = it->nin == 0;
    puts_(b, leaf ? (it->opcode[0] ? "(C) " : "(L) ") : "(I) ");
    if (leaf) puts_(b, it->data);
    else {
        puts_(b, it->opcode);
        for (int k = 0; k < it->nin; k++) {
            snprintf(num, sizeof num, " (%lld)", (long long)it->in[k]->id);
            puts_(b, num);
        }
    }
    puts_(b, "\n");
}

char *lin_explain(LinTrace *t, LinItem *li)
{
    Buf b = {0};
    pthread_mutex_lock(&t->lock);
    uint32_t ep = ++t->epoch;
    if (ep == 0) {   /* wrapped: clear every mark */
        for (int64_t i = 0; i < t->n; i++) t->all[i]->mark = 0;
        ep = t->epoch = 1;
    }
    /* Explain.explainLineageItemNR: depth first, an item after its
     * inputs, each once */
    int64_t cap = 64, sp = 0;
    LinItem **st = malloc((size_t)cap * sizeof *st);
    int *pos = malloc((size_t)cap * sizeof *pos);
    if (!st || !pos) b.oom = true;
    else { st[0] = li; pos[0] = 0; sp = 1; }
    while (sp > 0 && !b.oom) {
        LinItem *it = st[sp - 1];
        if (it->mark == ep) { sp--; continue; }
        if (pos[sp - 1] >= it->nin) {
            line(&b, it);
            it->mark = ep;
            sp--;
            continue;
        }
        LinItem *next = it->in[pos[sp - 1]++];
        if (sp == cap) {
            cap *= 2;
            LinItem **ns = realloc(st, (size_t)cap * sizeof *ns);
            if (ns) st = ns;
            int *np = ns ? realloc(pos, (size_t)cap * sizeof *np) : NULL;
            if (np) pos = np;
            if (!ns || !np) { b.oom = true; break; }
        }
        st[sp] = next;
        pos[sp] = 0;
        sp++;
    }
    pthread_mutex_unlock(&t->lock);
    free(st);
    free(pos);
    if (b.oom) { free(b.s); return NULL; }
    if (!b.s) return calloc(1, 1);
    return b.s;
}
