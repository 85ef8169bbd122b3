/* explore.c: FusionStitching's explorer (explore.h; seed 001, section 5).
 * Patterns are vertex sets (bitsets). PatternReduction visits vertices
 * consumers first: a vertex's candidates are itself alone and itself
 * joined with candidate patterns of its consumers, enumerated per group
 * of two consumers (every choice of none or one candidate per consumer)
 * and reduced to the top k by the delta evaluator; a pattern must be
 * connected, free of opaque vertices and keep the graph acyclic when
 * contracted (section 5.2, figure 6). Beam search then walks producers
 * first, adding each vertex's candidates to the plans it keeps when they
 * do not overlap and the contracted graph stays acyclic (section 5.3);
 * the latency estimate picks the winner among the beam's plans and the
 * unfused plan. Remote fusion (packing unconnected patterns) is not
 * explored. */
#include <stdlib.h>
#include <string.h>

#include "explore.h"

/* delta evaluator constants (section 5.4): global memory bandwidth, a
 * launch's CPU-GPU switch, and the occupancy loss of a reduction whose
 * result is reused on chip (one work-group per segment) */
#define FX_BW 500e9
#define FX_LAUNCH 5e-6
#define FX_STITCH_LOSS 0.25

/* the graph's constants (FGraph.bw, launch_s), else the defaults */
static double fx_bw(const FGraph *g) { return g->bw > 0 ? g->bw : FX_BW; }
static double fx_launch(const FGraph *g) { return g->launch_s > 0 ? g->launch_s : FX_LAUNCH; }

typedef struct Pat { uint64_t *bits; double f; } Pat;

typedef struct Ctx {
    const FGraph *g;
    int words;
    int **cons; int *ncons;    /* consumers of each vertex */
    Pat **cand; int *ncand;    /* candidates per vertex */
} Ctx;

static bool has(const uint64_t *b, int i) { return (b[i >> 6] >> (i & 63)) & 1; }
static void set(uint64_t *b, int i) { b[i >> 6] |= (uint64_t)1 << (i & 63); }

/* consumers of u inside and outside the set b (graph outputs count
 * outside) */
static void uses(const Ctx *c, const uint64_t *b, int u, int *in, int *out)
{
    *in = *out = 0;
    for (int k = 0; k < c->ncons[u]; k++) (has(b, c->cons[u][k]) ? (*in)++ : (*out)++);
    if (c->g->v[u].output) (*out)++;
}

/* the delta evaluator: memory traffic saved + launches saved - the
 * stitching penalty (a simplified latency evaluator: fixed registers, no
 * lifetime analysis) */
static double delta(const Ctx *c, const uint64_t *b)
{
    double mem = 0, pen = 0, bw = fx_bw(c->g);
    int n = 0;
    for (int u = 0; u < c->g->n; u++) {
        if (!has(b, u)) continue;
        n++;
        int in, out;
        uses(c, b, u, &in, &out);
        const FNode *v = &c->g->v[u];
        mem += in * v->bytes / bw;
        if (out == 0 && in > 0) mem += v->bytes / bw;
        if (v->kind == FK_REDUCE && in > 0)
            for (int k = 0; k < v->nin; k++) pen += FX_STITCH_LOSS * c->g->v[v->in[k]].bytes / bw;
    }
    return mem + (n - 1) * fx_launch(c->g) - pen;
}

/* kernel[] of a set of patterns: vertices of pattern j get j, the rest
 * their own ids after them; acyclic when contracted? (Kahn's algorithm
 * over kernels) */
static bool acyclic(const FGraph *g, const int *kernel, int nk)
{
    int *indeg = calloc((size_t)nk, sizeof *indeg), *q = malloc((size_t)nk * sizeof *q);
    int *head = malloc((size_t)nk * sizeof *head), *next = malloc((size_t)g->n * sizeof *next);
    bool ok = false;
    if (!indeg || !q || !head || !next) goto done;
    /* vertices per kernel as linked lists */
    for (int k = 0; k < nk; k++) head[k] = -1;
    for (int u = 0; u < g->n; u++) { next[u] = head[kernel[u]]; head[kernel[u]] = u; }
    for (int u = 0; u < g->n; u++)
        for (int k = 0; k < g->v[u].nin; k++)
            if (kernel[g->v[u].in[k]] != kernel[u]) indeg[kernel[u]]++;
    int qh = 0, qt = 0, seen = 0;
    for (int k = 0; k < nk; k++) if (indeg[k] == 0) q[qt++] = k;
    while (qh < qt) {
        int k = q[qh++];
        seen++;
        /* edges out of kernel k: consumers of its vertices elsewhere */
        for (int u = head[k]; u >= 0; u = next[u])
            for (int w = 0; w < g->n; w++)
                for (int j = 0; j < g->v[w].nin; j++)
                    if (g->v[w].in[j] == u && kernel[w] != k && --indeg[kernel[w]] == 0) q[qt++] = kernel[w];
    }
    ok = seen == nk;
done:
    free(indeg), free(q), free(head), free(next);
    return ok;
}

/* kernels of patterns pats[0..np) (each a bitset); returns the count */
static int assign(const FGraph *g, uint64_t *const *pats, int np, int *kernel)
{
    for (int u = 0; u < g->n; u++) kernel[u] = -1;
    for (int j = 0; j < np; j++)
        for (int u = 0; u < g->n; u++) if (has(pats[j], u)) kernel[u] = j;
    int nk = np;
    for (int u = 0; u < g->n; u++) if (kernel[u] < 0) kernel[u] = nk++;
    return nk;
}

/* connected (undirected, inside b) and free of opaque vertices */
static bool connected(const Ctx *c, const uint64_t *b)
{
    const FGraph *g = c->g;
    int *stack = malloc((size_t)g->n * sizeof *stack), sp = 0, first = -1, total = 0, reached = 0;
    uint64_t *seen = calloc((size_t)c->words, sizeof *seen);
    bool ok = false;
    if (!stack || !seen) goto done;
    for (int u = 0; u < g->n; u++)
        if (has(b, u)) {
            if (g->v[u].kind == FK_OPAQUE) goto done;
            if (first < 0) first = u;
            total++;
        }
    if (first < 0) goto done;
    stack[sp++] = first;
    set(seen, first);
    while (sp) {
        int u = stack[--sp];
        reached++;
        for (int k = 0; k < g->v[u].nin; k++) {
            int p = g->v[u].in[k];
            if (has(b, p) && !has(seen, p)) { set(seen, p); stack[sp++] = p; }
        }
        for (int k = 0; k < c->ncons[u]; k++) {
            int w = c->cons[u][k];
            if (has(b, w) && !has(seen, w)) { set(seen, w); stack[sp++] = w; }
        }
    }
    ok = reached == total;
done:
    free(stack), free(seen);
    return ok;
}

static bool valid_pattern(const Ctx *c, uint64_t *b)
{
    if (!connected(c, b)) return false;
    int *kernel = malloc((size_t)c->g->n * sizeof *kernel);
    if (!kernel) return false;
    int nk = assign(c->g, &b, 1, kernel);
    bool ok = acyclic(c->g, kernel, nk);
    free(kernel);
    return ok;
}

/* keeps the k best patterns of list (n of them, bits owned) in place */
static int top_k(Pat *list, int n, int k, int words)
{
    /* drop duplicates, then selection by score */
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (list[j].bits && list[i].bits && !memcmp(list[i].bits, list[j].bits, (size_t)words * 8)) {
                free(list[j].bits);
                list[j].bits = NULL;
            }
    int m = 0;
    for (int i = 0; i < n; i++) if (list[i].bits) list[m++] = list[i];
    for (int i = 0; i < m; i++)
        for (int j = i + 1; j < m; j++)
            if (list[j].f > list[i].f) { Pat t = list[i]; list[i] = list[j]; list[j] = t; }
    for (int i = k; i < m; i++) free(list[i].bits);
    return m < k ? m : k;
}

/* PatternReduction for vertex v (its consumers' candidates are known) */
static int reduce_vertex(Ctx *c, int v, int k)
{
    const FGraph *g = c->g;
    c->ncand[v] = 0;
    if (g->v[v].kind == FK_OPAQUE) return 0;
    /* at most 1 + groups * k temporary candidates */
    int ngroups = (c->ncons[v] + 1) / 2;
    Pat *all = calloc((size_t)(1 + ngroups * k), sizeof *all);
    Pat *tmp = calloc((size_t)((k + 1) * (k + 1)), sizeof *tmp);
    if (!all || !tmp) { free(all); free(tmp); return -1; }
    int nall = 0;
    all[nall].bits = calloc((size_t)c->words, 8);
    if (!all[nall].bits) { free(all); free(tmp); return -1; }
    set(all[nall].bits, v);
    all[nall++].f = 0;
    for (int gi = 0; gi < ngroups; gi++) {
        int c1 = c->cons[v][2 * gi], c2 = 2 * gi + 1 < c->ncons[v] ? c->cons[v][2 * gi + 1] : -1;
        int n1 = c->ncand[c1], n2 = c2 >= 0 ? c->ncand[c2] : 0, nt = 0;
        for (int a = -1; a < n1; a++)
            for (int b = -1; b < n2; b++) {
                if (a < 0 && b < 0) continue;
                uint64_t *bits = calloc((size_t)c->words, 8);
                if (!bits) continue;
                set(bits, v);
                for (int w = 0; w < c->words; w++) {
                    if (a >= 0) bits[w] |= c->cand[c1][a].bits[w];
                    if (b >= 0) bits[w] |= c->cand[c2][b].bits[w];
                }
                if (!valid_pattern(c, bits)) { free(bits); continue; }
                tmp[nt++] = (Pat){bits, delta(c, bits)};
            }
        nt = top_k(tmp, nt, k, c->words);
        for (int i = 0; i < nt; i++) all[nall++] = tmp[i];
    }
    free(tmp);
    int m = top_k(all, nall, k, c->words);
    c->cand[v] = all;
    c->ncand[v] = m;
    return 0;
}

typedef struct Beam {
    uint64_t *covered;
    uint64_t **pats;
    int np;
    double score;
} Beam;

static void beam_free(Beam *b) { free(b->covered); free(b->pats); }

/* b plus pattern p when disjoint and the contraction stays acyclic */
static bool beam_add(const Ctx *c, const Beam *b, uint64_t *p, double f, Beam *out, int *kernel)
{
    for (int w = 0; w < c->words; w++) if (b->covered[w] & p[w]) return false;
    uint64_t **pats = malloc((size_t)(b->np + 1) * sizeof *pats);
    uint64_t *cov = malloc((size_t)c->words * 8);
    if (!pats || !cov) { free(pats); free(cov); return false; }
    memcpy(pats, b->pats, (size_t)b->np * sizeof *pats);
    pats[b->np] = p;
    int nk = assign(c->g, pats, b->np + 1, kernel);
    if (!acyclic(c->g, kernel, nk)) { free(pats); free(cov); return false; }
    for (int w = 0; w < c->words; w++) cov[w] = b->covered[w] | p[w];
    *out = (Beam){cov, pats, b->np + 1, b->score + f};
    return true;
}

static Beam beam_copy(const Ctx *c, const Beam *b)
{
    Beam r = {malloc((size_t)c->words * 8), malloc((size_t)(b->np + 1) * sizeof(uint64_t *)), b->np, b->score};
    if (r.covered) memcpy(r.covered, b->covered, (size_t)c->words * 8);
    if (r.pats) memcpy(r.pats, b->pats, (size_t)b->np * sizeof *r.pats);
    return r;
}

static int beam_cmp(const void *a, const void *b)
{
    double x = ((const Beam *)a)->score, y = ((const Beam *)b)->score;
    return x > y ? -1 : x < y;
}

static int to_plan(const FGraph *g, uint64_t *const *pats, int np, FPlan *out)
{
    out->kernel = malloc((size_t)(g->n ? g->n : 1) * sizeof *out->kernel);
    if (!out->kernel) return -1;
    out->nkernels = assign(g, pats, np, out->kernel);
    out->latency = fx_latency(g, out);
    return 0;
}

int fx_unfused(const FGraph *g, FPlan *out)
{
    out->score = 0;
    return to_plan(g, NULL, 0, out);
}

int fx_explore(const FGraph *g, int k, int nbeam, FPlan *out)
{
    Ctx c = {g, (g->n + 63) / 64 + 1, NULL, NULL, NULL, NULL};
    c.cons = calloc((size_t)g->n + 1, sizeof *c.cons);
    c.ncons = calloc((size_t)g->n + 1, sizeof *c.ncons);
    c.cand = calloc((size_t)g->n + 1, sizeof *c.cand);
    c.ncand = calloc((size_t)g->n + 1, sizeof *c.ncand);
    int *kernel = malloc(((size_t)g->n + 1) * sizeof *kernel);
    Beam *beams = calloc((size_t)nbeam, sizeof *beams), *next = calloc((size_t)nbeam * (size_t)(k + 1) + 1, sizeof *next);
    int rc = -1, nb = 0;
    if (!c.cons || !c.ncons || !c.cand || !c.ncand || !kernel || !beams || !next) goto done;
    for (int u = 0; u < g->n; u++)
        for (int j = 0; j < g->v[u].nin; j++) {
            int p = g->v[u].in[j];
            int *a = realloc(c.cons[p], (size_t)(c.ncons[p] + 1) * sizeof *a);
            if (!a) goto done;
            c.cons[p] = a;
            a[c.ncons[p]++] = u;
        }
    /* PatternReduction, consumers first */
    for (int v = g->n - 1; v >= 0; v--) if (reduce_vertex(&c, v, k)) goto done;
    /* beam search, producers first */
    beams[0] = (Beam){calloc((size_t)c.words, 8), malloc(sizeof(uint64_t *)), 0, 0};
    if (!beams[0].covered || !beams[0].pats) { nb = 1; goto done; }
    nb = 1;
    for (int v = 0; v < g->n; v++) {
        int nn = 0;
        for (int b = 0; b < nb; b++) {
            next[nn++] = beam_copy(&c, &beams[b]);
            for (int j = 0; j < c.ncand[v]; j++)
                if (c.cand[v][j].f > 0 && beam_add(&c, &beams[b], c.cand[v][j].bits, c.cand[v][j].f, &next[nn], kernel))
                    nn++;
        }
        qsort(next, (size_t)nn, sizeof *next, beam_cmp);
        for (int b = 0; b < nb; b++) beam_free(&beams[b]);
        nb = nn < nbeam ? nn : nbeam;
        for (int b = 0; b < nb; b++) beams[b] = next[b];
        for (int b = nb; b < nn; b++) beam_free(&next[b]);
    }
    /* the latency estimate picks among the beam's plans and no fusion */
    if (fx_unfused(g, out)) goto done;
    for (int b = 0; b < nb; b++) {
        FPlan p;
        if (to_plan(g, beams[b].pats, beams[b].np, &p)) goto done;
        p.score = beams[b].score;
        if (p.latency < out->latency) { fplan_free(out); *out = p; }
        else fplan_free(&p);
    }
    rc = 0;
done:
    for (int b = 0; b < nb; b++) beam_free(&beams[b]);
    for (int u = 0; c.cand && u < g->n; u++) {
        for (int j = 0; j < c.ncand[u]; j++) free(c.cand[u][j].bits);
        free(c.cand[u]);
    }
    for (int u = 0; c.cons && u < g->n; u++) free(c.cons[u]);
    free(c.cons), free(c.ncons), free(c.cand), free(c.ncand), free(kernel), free(beams), free(next);
    return rc;
}

double fx_latency(const FGraph *g, const FPlan *p)
{
    double t = p->nkernels * fx_launch(g), bw = fx_bw(g);
    for (int u = 0; u < g->n; u++) {
        const FNode *v = &g->v[u];
        bool write = v->output, stitched = false;
        for (int w = 0; w < g->n; w++)
            for (int j = 0; j < g->v[w].nin; j++)
                if (g->v[w].in[j] == u) {
                    if (p->kernel[w] != p->kernel[u]) write = true;
                    else if (v->kind == FK_REDUCE) stitched = true;
                }
        if (write) t += v->bytes / bw;
        if (v->nin == 0) t += v->bytes / bw;   /* a graph input: loaded */
        if (v->src > 0) {
            /* computed from X by its own kernel when written (read
             * elsewhere), and again by each consumer that takes it in
             * (codegen builds them as operators of their own) */
            int n = write;
            for (int w = 0; w < g->n; w++) {
                bool reads = false;
                for (int j = 0; j < g->v[w].nin; j++) reads = reads || g->v[w].in[j] == u;
                n += reads && p->kernel[w] == p->kernel[u];
            }
            t += n * v->src / bw;
        }
        for (int j = 0; j < v->nin; j++) {
            int q = v->in[j];
            bool dup = false;
            for (int i = 0; i < j; i++) dup = dup || v->in[i] == q;
            if (!dup && p->kernel[q] != p->kernel[u]) t += g->v[q].bytes / bw;
            if (stitched) t += FX_STITCH_LOSS * g->v[q].bytes / bw;
        }
    }
    return t;
}

bool fx_valid(const FGraph *g, const FPlan *p)
{
    Ctx c = {g, (g->n + 63) / 64 + 1, NULL, NULL, NULL, NULL};
    c.cons = calloc((size_t)g->n + 1, sizeof *c.cons);
    c.ncons = calloc((size_t)g->n + 1, sizeof *c.ncons);
    uint64_t *b = calloc((size_t)c.words, 8);
    bool ok = c.cons && c.ncons && b;
    for (int u = 0; ok && u < g->n; u++)
        for (int j = 0; j < g->v[u].nin; j++) {
            int q = g->v[u].in[j];
            int *a = realloc(c.cons[q], (size_t)(c.ncons[q] + 1) * sizeof *a);
            if (!a) { ok = false; break; }
            c.cons[q] = a;
            a[c.ncons[q]++] = u;
        }
    for (int u = 0; ok && u < g->n; u++) ok = p->kernel[u] >= 0 && p->kernel[u] < p->nkernels;
    /* every kernel of more than one vertex: a valid pattern */
    for (int k = 0; ok && k < p->nkernels; k++) {
        memset(b, 0, (size_t)c.words * 8);
        int n = 0;
        for (int u = 0; u < g->n; u++) if (p->kernel[u] == k) { set(b, u); n++; }
        if (n > 1) ok = connected(&c, b);
    }
    ok = ok && acyclic(g, p->kernel, p->nkernels);
    for (int u = 0; c.cons && u < g->n; u++) free(c.cons[u]);
    free(c.cons), free(c.ncons), free(b);
    return ok;
}

void fplan_free(FPlan *p)
{
    free(p->kernel);
    p->kernel = NULL;
}
