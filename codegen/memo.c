/* memo.c: the memo table of partial fusion plans (seed 000, section 3.1):
 * one group per HOP holding memo entries (template type, per input a
 * group reference or -1, close status), plus the consumer structure of the
 * DAG (parents, consumer counts, outputs) that exploration and selection
 * read. Also small shared helpers (hash, string buffer). */
#include "cgint.h"
#include "../base/vec.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *tpl_name(TplType t)
{
    switch (t) {
    case T_CELL: return "CELL";
    case T_ROW: return "ROW";
    case T_MAGG: return "MAGG";
    case T_OUTER: return "OUTER";
    case T_AMULET: return "AMULET";
    default: return "?";
    }
}

/* New memo table of d with its consumer structure (caller frees with
 * memo_free). */
Memo *memo_new(HopDag *d)
{
    Memo *m = br_calloc(1, sizeof *m);
    if (!m) return NULL;
    m->d = d;
    int maxid = 0;
    for (int i = 0; i < d->n; i++) if (d->hops[i]->id > maxid) maxid = d->hops[i]->id;
    m->nid = maxid + 1;
    size_t n = (size_t)m->nid;
    m->g = br_calloc(n, sizeof *m->g);
    m->hop = br_calloc(n, sizeof *m->hop);
    m->nuse = br_calloc(n, sizeof *m->nuse);
    m->out = br_calloc(n, sizeof *m->out);
    m->par = br_calloc(n, sizeof *m->par);
    m->npar = br_calloc(n, sizeof *m->npar);
    m->order = hop_walk(d, &m->norder, NULL);
    m->visited = br_calloc(n, 1);
    if (!m->g || !m->hop || !m->nuse || !m->out || !m->par || !m->npar || !m->order || !m->visited) {
        memo_free(m);
        return NULL;
    }
    for (int k = 0; k < m->norder; k++) m->hop[m->order[k]->id] = m->order[k];
    for (int i = 0; i < d->nroots; i++) m->out[d->roots[i]->id] = true;
    for (int i = 0; i < d->nw; i++) m->out[d->whops[i]->id] = true;
    /* parents: count, then fill (an input used twice by one hop counts
     * twice, as two data dependencies) */
    for (int k = 0; k < m->norder; k++) {
        Hop *h = m->order[k];
        for (int i = 0; i < h->nin; i++) if (h->in[i]) m->npar[h->in[i]->id]++;
    }
    for (int k = 0; k < m->norder; k++) {
        Hop *h = m->order[k];
        if (m->npar[h->id] && !(m->par[h->id] = br_calloc((size_t)m->npar[h->id], sizeof(Hop *)))) {
            memo_free(m);
            return NULL;
        }
        m->nuse[h->id] = m->npar[h->id] + (m->out[h->id] ? 1 : 0);
        m->npar[h->id] = 0;
    }
    for (int k = 0; k < m->norder; k++) {
        Hop *h = m->order[k];
        for (int i = 0; i < h->nin; i++)
            if (h->in[i]) m->par[h->in[i]->id][m->npar[h->in[i]->id]++] = h;
    }
    return m;
}

void memo_free(Memo *m)
{
    if (!m) return;
    for (int i = 0; i < m->nid; i++) {
        if (m->g && m->g[i]) { free(m->g[i]->e); free(m->g[i]); }
        if (m->par) free(m->par[i]);
    }
    free(m->g); free(m->hop); free(m->nuse); free(m->out); free(m->par); free(m->npar);
    free(m->order); free(m->visited);
    free(m->spt); free(m->sdo);
    free(m);
}

MGroup *memo_group(Memo *m, const Hop *h)
{
    return h && h->id < m->nid ? m->g[h->id] : NULL;
}

static bool entry_eq(const MEntry *a, const MEntry *b)
{
    if (a->type != b->type || a->nin != b->nin) return false;
    for (int i = 0; i < a->nin; i++) if (a->ref[i] != b->ref[i]) return false;
    return true;
}

MEntry *memo_add(Memo *m, Hop *h, const MEntry *e)
{
    MGroup *g = m->g[h->id];
    if (!g) {
        g = br_calloc(1, sizeof *g);
        if (!g) return NULL;
        g->hop = h;
        m->g[h->id] = g;
    }
    for (int i = 0; i < g->n; i++)
        if (entry_eq(&g->e[i], e)) {
            /* duplicates: keep the better close status (valid wins) */
            if (g->e[i].closed == CS_OPEN_INVALID && e->closed == CS_OPEN_VALID) g->e[i].closed = e->closed;
            return &g->e[i];
        }
    if (!br_grow((void **)&g->e, &g->cap, g->n + 1, sizeof *g->e)) return NULL;
    g->e[g->n] = *e;
    return &g->e[g->n++];
}

void memo_filter(Memo *m, const Hop *h, bool (*drop)(const Memo *, const Hop *, const MEntry *, void *), void *arg)
{
    MGroup *g = memo_group(m, h);
    if (!g) return;
    int w = 0;
    for (int i = 0; i < g->n; i++)
        if (!drop(m, h, &g->e[i], arg)) g->e[w++] = g->e[i];
    g->n = w;
}

int memo_nrefs(const MEntry *e)
{
    int n = 0;
    for (int i = 0; i < e->nin; i++) n += e->ref[i] >= 0;
    return n;
}

/* Can a consumer of template `consumer` reference an open entry of
 * template `input`? Cell merges into Row (seed 3.2, merge) and into an
 * AMULET loop (its operands' elementwise work). */
bool memo_compatible(TplType consumer, TplType input)
{
    if (consumer == input) return true;
    return (consumer == T_ROW || consumer == T_AMULET) && input == T_CELL;
}

bool memo_has_type(const Memo *m, const Hop *h, TplType t, bool open_only)
{
    MGroup *g = h && h->id < m->nid ? m->g[h->id] : NULL;
    if (!g) return false;
    for (int i = 0; i < g->n; i++) {
        if (g->e[i].type != t) continue;
        if (open_only && (g->e[i].closed == CS_CLOSED_VALID || g->e[i].closed == CS_CLOSED_INVALID)) continue;
        return true;
    }
    return false;
}

void memo_print(const Memo *m, FILE *out)
{
    static const char *cs[] = {"open", "open-invalid", "closed", "closed-invalid"};
    for (int k = 0; k < m->norder; k++) {
        const Hop *h = m->order[k];
        MGroup *g = m->g[h->id];
        if (!g || !g->n) continue;
        fprintf(out, "  group %d %s:", h->id, hop_opname(h));
        for (int i = 0; i < g->n; i++) {
            const MEntry *e = &g->e[i];
            fprintf(out, " %c(", tpl_name(e->type)[0]);
            for (int j = 0; j < e->nin; j++) fprintf(out, "%s%d", j ? "," : "", e->ref[j]);
            fprintf(out, ")%s", e->closed == CS_OPEN_VALID ? "" : cs[e->closed]);
        }
        fprintf(out, "\n");
    }
}

/* ---- helpers ---- */

/* FNV-1a over 8-byte words (then the tail bytes), each step folding the
 * high half back, and a final avalanche (splitmix64). Word steps: a plan
 * signature is hashed at every dynamic recompilation, and the bytewise
 * multiply chain was 1% of a small-batch training loop. */
uint64_t cg_hash_bytes(const void *p, size_t n, uint64_t seed)
{
    const unsigned char *s = p;
    uint64_t h = 1469598103934665603ULL ^ seed;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, sizeof w);
        h ^= w;
        h *= 1099511628211ULL;
        h ^= h >> 32;
    }
    for (; i < n; i++) { h ^= s[i]; h *= 1099511628211ULL; }
    h ^= h >> 30; h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27; h *= 0x94d049bb133111ebULL;
    h ^= h >> 31;
    return h;
}
