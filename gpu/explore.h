/* explore.h: FusionStitching's fusion explorer (seed 001, section 5)
 * over an operator graph: candidate patterns per vertex by approximate
 * dynamic programming over its consumers (PatternReduction, top-k per
 * vertex, O(V + E) with constant k), the delta evaluator as their score,
 * beam search (width 3) over the candidates forming fusion plans, and a
 * latency estimate picking the winner. The graph is abstract (kinds and
 * bytes): it is not yet built from HOP DAGs (docs/gpu.md). */
#ifndef BRAID_EXPLORE_H
#define BRAID_EXPLORE_H

#include <stdbool.h>
#include <stdint.h>

/* What a vertex is for fusion: light or expensive elementwise, a
 * reduction (fusable with its consumers by stitching), or opaque (a
 * product, a library call: never fused). */
typedef enum { FK_LIGHT, FK_EXPENSIVE, FK_REDUCE, FK_OPAQUE } FKind;

#define FX_MAX_IN 4

typedef struct FNode {
    FKind kind;
    double bytes;      /* bytes of its output */
    int nin;
    int in[FX_MAX_IN]; /* producers, earlier vertices */
    bool output;       /* read outside the graph */
    double src;        /* a vertex without producers computed from a
                          matrix outside the graph (CPU stitching's
                          column aggregates of X): the bytes it reads
                          each time it is computed (X's passes), once
                          in its own kernel and once in each consumer
                          that takes it into its kernel (fx_latency) */
} FNode;

typedef struct FGraph {
    int n;
    FNode *v;          /* in topological order */
    double bw;         /* the evaluators' memory bandwidth (bytes per
                          second) and a launch's seconds: the device
                          profile's for a GPU plan, the machine file's
                          read bandwidth for a CPU one (codegen/
                          fxselect.c); 0: 500 GB/s and 5 us */
    double launch_s;
} FGraph;

/* A plan: kernel[i] is the kernel of vertex i (vertices of one fused
 * pattern share it; every other vertex is its own kernel). */
typedef struct FPlan {
    int *kernel;
    int nkernels;
    double score;      /* the delta evaluator's total gain */
    double latency;    /* the latency estimate (seconds) */
} FPlan;

/* The explorer: best plan into *out (kernel array malloc'd, free with
 * fplan_free). 0, or -1 when out of memory. nbeam: plans the beam keeps
 * (3 in the paper); k: candidate patterns kept per vertex (3). */
int fx_explore(const FGraph *g, int k, int nbeam, FPlan *out);
/* The plan without fusion, and the latency estimate of any plan. */
int fx_unfused(const FGraph *g, FPlan *out);
double fx_latency(const FGraph *g, const FPlan *p);
/* Is the plan valid: every fused kernel connected, free of opaque
 * vertices, and the graph with every kernel contracted acyclic? */
bool fx_valid(const FGraph *g, const FPlan *p);
void fplan_free(FPlan *p);

#endif
