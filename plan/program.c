/* program.c: program blocks, name sets, liveness and printing. */
#include "program.h"
#include "../runtime/distexec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* into U= from; an out-of-memory mark of from carries over. */
static void ns_union(NameSet *into, const NameSet *from)
{
    for (int i = 0; i < from->n; i++) ns_add(into, from->v[i]);
    if (from->oom) into->oom = true;
}

static void ns_copy(NameSet *to, const NameSet *from)
{
    to->n = 0;
    ns_union(to, from);
}

/* Variables a DAG reads from outside (its TREADs). */
static void dag_reads(const HopDag *d, NameSet *s)
{
    if (!d) return;
    for (int i = 0; i < d->nr; i++) ns_add(s, d->rnames[i]);
}

static void block_live_in(PBlock *b, const NameSet *out, NameSet *in);

void plan_liveness(PBList *l, const NameSet *live_after, NameSet *live_in)
{
    NameSet cur = {0};
    ns_copy(&cur, live_after);
    for (int i = l->n - 1; i >= 0; i--) {
        PBlock *b = l->v[i];
        ns_copy(&b->live_out, &cur);
        NameSet in = {0};
        block_live_in(b, &cur, &in);
        ns_copy(&cur, &in);
        ns_free(&in);
    }
    ns_copy(live_in, &cur);
    ns_free(&cur);
}

static void block_live_in(PBlock *b, const NameSet *out, NameSet *in)
{
    switch (b->kind) {
    case PB_GENERIC: {
        /* in = reads U (out - writes) */
        for (int i = 0; i < out->n; i++) {
            bool written = false;
            for (int k = 0; k < plan_dag(b)->nw; k++)
                if (strcmp(plan_dag(b)->wnames[k], out->v[i]) == 0) written = true;
            if (!written) ns_add(in, out->v[i]);
        }
        dag_reads(b->dag, in);
        break;
    }
    case PB_IF: {
        NameSet a = {0}, e = {0};
        plan_liveness(&b->body, out, &a);
        plan_liveness(&b->els, out, &e);
        ns_union(in, &a);
        ns_union(in, &e);
        dag_reads(b->dag, in);
        ns_free(&a);
        ns_free(&e);
        break;
    }
    case PB_WHILE:
    case PB_FOR: {
        /* fixpoint: L = out U pred reads U live_in(body, L) */
        NameSet L = {0};
        ns_copy(&L, out);
        if (b->kind == PB_WHILE) dag_reads(b->dag, &L);
        for (int iter = 0; iter < 50; iter++) {
            NameSet bin = {0};
            plan_liveness(&b->body, &L, &bin);
            int before = L.n;
            for (int i = 0; i < bin.n; i++)
                if (!(b->var && strcmp(bin.v[i], b->var) == 0)) ns_add(&L, bin.v[i]);
            if (bin.oom) L.oom = true;
            ns_free(&bin);
            if (L.n == before) break;
        }
        ns_union(in, &L);
        dag_reads(b->dag, in);
        ns_free(&L);
        break;
    }
    }
}

static void print_list(const PBList *l, FILE *out, int ind);

static void print_block(const PBlock *b, FILE *out, int ind)
{
    static const char *const names[] = {"GENERIC", "IF", "WHILE", "FOR"};
    fprintf(out, "%*s%s (lines %d)%s%s", ind, "", b->parfor ? "PARFOR" : names[b->kind],
            b->span.line, b->var ? " var=" : "", b->var ? b->var : "");
    if (b->parfor) fprintf(out, " %s%s", b->par_ok ? "[parallel]" : "[serial]", b->parfor_remote ? " [remote]" : "");
    fprintf(out, "\n");
    if (b->code)
        for (int i = 0; i < b->code->n; i++) {
            const Instr *in = &b->code->ins[i];
            fprintf(out, "%*s  r%d = %s%s%s(", ind, "", in->out,
                    in->kind == I_AGG ? (in->dir == DIR_ROW ? "uar" : in->dir == DIR_COL ? "uac" : "ua") : "",
                    in->opname, in->kind == I_READ ? " " : "");
            if (in->kind == I_READ) fprintf(out, "%s", in->name);
            for (int k = 0; k < in->nin; k++)
                fprintf(out, "%s%s%d", k ? ", " : "", in->in[k] < 0 ? "-" : "r", in->in[k] < 0 ? 0 : in->in[k]);
            fprintf(out, ")");
            if (in->exec == EX_DIST) fprintf(out, "  DIST");
            int g = in->exec == EX_DIST ? rt_dist_group(b->code, i) : -1;
            if (g >= 0) fprintf(out, " [piggyback job r%d]", b->code->ins[g].out);
            if (in->nfree) {
                fprintf(out, "  free");
                for (int k = 0; k < in->nfree; k++) fprintf(out, " r%d", in->frees[k]);
            }
            fprintf(out, "\n");
        }
    if (b->code)
        for (int i = 0; i < b->code->nw; i++)
            fprintf(out, "%*s  %s <- r%d\n", ind, "", b->code->wnames[i], b->code->wregs[i]);
    if (b->kind == PB_IF) {
        print_list(&b->body, out, ind + 2);
        if (b->els.n) { fprintf(out, "%*sELSE\n", ind, ""); print_list(&b->els, out, ind + 2); }
    } else {
        print_list(&b->body, out, ind + 2);
    }
}

static void print_list(const PBList *l, FILE *out, int ind)
{
    for (int i = 0; i < l->n; i++) print_block(l->v[i], out, ind);
}

static void print_func(const FProg *fp, FILE *out, bool ns);

void plan_print(const RtProgram *p, FILE *out)
{
    fprintf(out, "PROGRAM\n--MAIN PROGRAM\n");
    print_list(&p->main, out, 4);
    for (int i = 0; i < p->nfuncs; i++) {
        print_func(p->funcs[i], out, true);
        print_list(&p->funcs[i]->body, out, 4);
    }
}

static void hops_list(const PBList *l, FILE *out, int ind)
{
    static const char *const names[] = {"GENERIC", "IF", "WHILE", "FOR"};
    for (int i = 0; i < l->n; i++) {
        const PBlock *b = l->v[i];
        fprintf(out, "%*s%s (line %d)\n", ind, "", b->parfor ? "PARFOR" : names[b->kind], b->span.line);
        if (b->dag) hop_dag_print(b->dag, out, ind + 2);
        hops_list(&b->body, out, ind + 2);
        if (b->els.n) { fprintf(out, "%*sELSE\n", ind, ""); hops_list(&b->els, out, ind + 2); }
    }
}

/* "--FUNCTION name", and what a specialization was compiled for:
 * " [A: 100 x 7, k = 3]" */
static void print_func(const FProg *fp, FILE *out, bool ns)
{
    const Func *f = fp->func;
    fprintf(out, "--FUNCTION %s%s%s", ns && f->ns[0] ? f->ns : "", ns && f->ns[0] ? "::" : "", f->name);
    const char *sep = " [";
    for (int i = 0; fp->sig && i < f->nin; i++) {
        const FSig *g = &fp->sig[i];
        if (g->rows >= 0) fprintf(out, "%s%s: %lld x %lld", sep, f->in[i].name, (long long)g->rows, (long long)g->cols);
        else if (g->v.kind != V_NONE) {
            char *t = val_text(&g->v, false);
            fprintf(out, "%s%s = %s", sep, f->in[i].name, t ? t : "?");
            free(t);
        } else continue;
        sep = ", ";
    }
    fprintf(out, "%s\n", fp->sig ? "]" : "");
}

void plan_print_hops(const RtProgram *p, FILE *out)
{
    fprintf(out, "# Memory Budget local/remote = %.0fMB\n# HOP DAGs\n--MAIN PROGRAM\n",
            br_mem_budget() / 1048576.0);
    hops_list(&p->main, out, 2);
    for (int i = 0; i < p->nfuncs; i++) {
        print_func(p->funcs[i], out, false);
        hops_list(&p->funcs[i]->body, out, 2);
    }
}

/* Visits the DAGs of l and its nested blocks in program order. */
static void each_dag(const PBList *l, const char *scope, DagVisit visit, void *ctx)
{
    static const char *const kinds[] = {"GENERIC", "IF", "WHILE", "FOR"};
    for (int i = 0; i < l->n; i++) {
        const PBlock *b = l->v[i];
        if (b->dag) {
            char title[512];
            snprintf(title, sizeof title, "%s: %s line %d%s", scope, b->parfor ? "PARFOR" : kinds[b->kind],
                     b->span.line, b->kind == PB_GENERIC ? "" : b->kind == PB_FOR ? " (range)" : " (predicate)");
            visit(ctx, title, b->dag);
        }
        each_dag(&b->body, scope, visit, ctx);
        each_dag(&b->els, scope, visit, ctx);
    }
}

void plan_each_dag(const RtProgram *p, bool library, DagVisit visit, void *ctx)
{
    each_dag(&p->main, "main", visit, ctx);
    for (int lib = 0; lib <= (library ? 1 : 0); lib++)   /* the user's functions, then the library's */
        for (int i = 0; i < p->nfuncs; i++)
            if (p->funcs[i]->func->builtin_lib == lib) each_dag(&p->funcs[i]->body, p->funcs[i]->func->name, visit, ctx);
}

static void print_dot(void *out, const char *title, const HopDag *d) { hop_dag_dot(d, out, title); }

void plan_print_dot(const RtProgram *p, FILE *out, bool library)
{
    plan_each_dag(p, library, print_dot, out);
}
