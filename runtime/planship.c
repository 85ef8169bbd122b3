/* planship.c: a remote parfor's compiled plan as bytes (planship.h).
 *
 * What travels: a head (magic, format version, the sizes of the structs
 * and the operator and builtin table lengths, which differ between braid
 * builds, and a hash of the rest), the functions the body calls (their
 * namespace key and name, specialization signature and output sizes;
 * then their bodies, which may call each other by index), then the loop
 * block. A function a worker asked for comes with the functions it calls
 * except those the worker said it holds (ps_put_held): these travel as
 * their head only (namespace, name, signature), and the worker finds
 * its own compiled copy. Blocks carry their kind, position, flags, variable sets and
 * code; instructions every field, with names as strings, literals as
 * values, a call's function by namespace and name (the worker parsed the
 * same script) and its specialization by index, and a fused operator as
 * its CPlan (codegen's key: the worker's plan cache finds the operator,
 * or loads it from the disk cache rank 0's compile filled, or compiles
 * the same source).
 *
 * What does not: the compiler's DAGs (shipped blocks run as compiled,
 * as SystemDS's remote workers run the serialized instructions),
 * except the DAGs of blocks recompiled before each execution, which
 * travel so that workers recompile them with their sizes as rank 0 does.
 * AMULET where-loops travel by their place in the script (where_index),
 * or, those the AMULET template made, by their body text (put_where);
 * functions by name (resolve_func), a stitched GPU region as its node
 * array (a StitchRegion holds no pointers; the worker checks its
 * indices). Fused operators without a CPlan and calls of functions not
 * found by name are not shipped: ps_pack names them and the task falls
 * back to the workers compiling the script. */
#include "planship.h"
#include "symtab.h"

#include <stdlib.h>
#include <string.h>

#include "../base/vec.h"
#include "../gpu/stitch.h"
#include "../dist/dist.h"
#include "../lang/load.h"

#define PS_MAGIC 0x42504c31u   /* "BPL1" */
#define PS_VERSION 6u

typedef struct PsHead {
    uint32_t magic, version, instr_size, block_size;
    int32_t nops, nbis, nfuncs;
    int32_t loop;              /* 1: a parfor loop follows the functions
                                  (0: a function a worker asked for) */
    uint64_t hash;             /* FNV-1a of the bytes after the head */
} PsHead;

static uint64_t fnv(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)p[i]) * 1099511628211ull;
    return h;
}

/* ---- signatures ---- */

bool ps_put_sig(StrBuf *b, const Func *fn, const FSig *sig)
{
    uint8_t has = sig != NULL;
    w_put(b, &has, 1);
    for (int i = 0; has && i < fn->nin; i++) {
        w_put(b, &sig[i].rows, sizeof sig[i].rows);
        w_put(b, &sig[i].cols, sizeof sig[i].cols);
        if (!w_put_value(b, &sig[i].v)) return false;
    }
    return true;
}

FSig *ps_get_sig(WRd *r, const Func *fn, bool *has, BrErr *e)
{
    *has = w_get_u8(r) != 0;
    if (!*has || r->bad) return NULL;
    FSig *sig = calloc((size_t)fn->nin + 1, sizeof *sig);
    if (!sig) { br_err(e, BR_ENOMEM, "out of memory"); return NULL; }
    for (int i = 0; i < fn->nin; i++) {
        sig[i].rows = (int64_t)w_get_u64(r);
        sig[i].cols = (int64_t)w_get_u64(r);
        sig[i].v = w_get_value(r, e);
    }
    if (r->bad) { ps_free_sig(fn, sig); return NULL; }
    return sig;
}

void ps_free_sig(const Func *fn, FSig *sig)
{
    for (int i = 0; sig && i < fn->nin; i++) val_release(&sig[i].v);
    free(sig);
}

/* ---- functions by name ----
 * A call's function travels as its namespace key and name: the worker
 * parsed the same script. A function computing a default parameter for
 * eval (lang_default_func, named "f#defaultJ") is made on demand: it is
 * found through its owner f and J, on both sides. */
static Func *find_named(const Program *ast, const char *ns, const char *name)
{
    Func *fn = lang_find_func(ast, ns, name);
    if (fn || !ns[0]) return fn;
    /* a file of the builtin library this side has not loaded yet (eval
     * loads one on first use, and a worker may ask for its function
     * first): loaded by its name, as eval does, then looked up again
     * (by the file's key, or among the library's files) */
    const char *base = strrchr(ns, '/');
    base = base ? base + 1 : ns;
    size_t n = strlen(base);
    if (n <= 4 || n >= 256 || strcmp(base + n - 4, ".dml") != 0) return NULL;
    char stem[256];
    memcpy(stem, base, n - 4);
    stem[n - 4] = 0;
    return lang_find_func(ast, "", stem) ? lang_find_func(ast, ns, name) : NULL;
}

static Func *resolve_func(const Program *ast, const char *ns, const char *name)
{
    Func *fn = find_named(ast, ns ? ns : "", name);
    const char *d = fn ? NULL : strstr(name, "#default");
    if (!d || d == name || d - name >= 256) return fn;
    char owner[256];
    memcpy(owner, name, (size_t)(d - name));
    owner[d - name] = 0;
    int j = atoi(d + 8);
    Func *f = find_named(ast, ns ? ns : "", owner);
    return f && j >= 1 ? lang_default_func(ast, f, j - 1) : NULL;
}

/* Does fn travel by name (resolve_func finds it again)? */
static bool by_name(const Program *ast, const Func *fn)
{
    return fn && resolve_func(ast, fn->ns, fn->name) == fn;
}

/* ---- packing (rank 0) ---- */

/* The functions a worker holds, as its request names them (ps_put_held),
 * on rank 0: those it finds by name there. */
typedef struct PsHeld {
    Func *fn;
    FSig *sig;
} PsHeld;

typedef struct Pk {
    RtProgram *p;
    Diag *diag;
    FProg **fs;                /* the functions shipped, by index */
    bool *named;               /* fs[i] travels by its head only (the worker holds it) */
    int nf, cap, ncap;
    const PsHeld *held;        /* what the asking worker holds */
    int nheld;
    int count[2];              /* functions packed: with their bodies, by their heads */
    const char *why;           /* the first thing that cannot be shipped */
    bool oom;
    bool eval_var;             /* such an eval was met */
    PsRefs refs;               /* for the compiler's DAG packer */
} Pk;

static int fn_index(const Pk *k, const FProg *fp)
{
    for (int i = 0; i < k->nf; i++) if (k->fs[i] == fp) return i;
    return -1;
}

static void collect_list(Pk *k, const PBList *l);

static bool same_sig(const Func *fn, const FSig *a, const FSig *b);

/* Does the asking worker hold fp (the same function, signature)? */
static bool worker_holds(const Pk *k, const FProg *fp)
{
    for (int i = 0; i < k->nheld; i++)
        if (k->held[i].fn == fp->func && same_sig(fp->func, k->held[i].sig, fp->sig)) return true;
    return false;
}

/* fp joins k's table; the functions its body calls with it, unless the
 * worker holds fp (then its head travels, not its body). */
static void add_func(Pk *k, FProg *fp)
{
    if (!fp || fn_index(k, fp) >= 0) return;
    if (!br_grow((void **)&k->fs, &k->cap, k->nf + 1, sizeof *k->fs) ||
        !br_grow((void **)&k->named, &k->ncap, k->nf + 1, sizeof *k->named)) {
        k->oom = true;
        return;
    }
    bool named = worker_holds(k, fp);
    k->named[k->nf] = named;
    k->fs[k->nf++] = fp;
    if (!named) collect_list(k, &fp->body);
}

/* The generic version of fn as compiled on rank 0; compiled now when
 * need (a call without a specialization runs it). */
static FProg *generic(Pk *k, Func *fn, bool need)
{
    RtProgram *p = k->p;
    FProg *fp = NULL;
    pthread_mutex_lock(&p->lock);
    for (int i = 0; i < p->nfuncs && !fp; i++)
        if (p->funcs[i]->func == fn && !p->funcs[i]->sig && p->funcs[i]->compiled) fp = p->funcs[i];
    pthread_mutex_unlock(&p->lock);
    if (!fp && need && p->hooks && p->hooks->function) fp = p->hooks->function(p, fn, k->diag);
    if (!fp && need && !k->why) k->why = "a called function does not compile";
    return fp;
}

/* ---- where-loops by their place in the script ----
 * An AMULET where-loop instruction points at its loop in the AST; it
 * travels as the loop's ordinal in a walk of the main program and then
 * every function (the worker parsed the same script, so its walk meets
 * the same loops in the same order). A where-loop is always the value
 * of an assignment statement. */
typedef struct WFind {
    const WhereLoop *want;     /* packing: the loop to number */
    int index;                 /* unpacking: the ordinal to find */
    int k;                     /* loops met so far */
    const WhereLoop *found;
} WFind;

static bool wf_expr(WFind *w, const Expr *e)
{
    if (!e || e->kind != EX_WHERE) return false;
    if (e->where == w->want || w->k == w->index) { w->found = e->where; return true; }
    w->k++;
    return false;
}

static bool wf_block(WFind *w, const Block *b)
{
    for (int i = 0; i < b->n; i++) {
        const Stmt *s = b->stmts[i];
        bool hit = false;
        switch (s->kind) {
        case ST_ASSIGN: hit = wf_expr(w, s->assign.value); break;
        case ST_MASSIGN: hit = wf_expr(w, s->massign.call); break;
        case ST_IF: hit = wf_block(w, &s->if_.then_b) || wf_block(w, &s->if_.else_b); break;
        case ST_FOR: hit = wf_block(w, &s->for_.body); break;
        case ST_WHILE: hit = wf_block(w, &s->while_.body); break;
        default: break;
        }
        if (hit) return true;
    }
    return false;
}

static bool wf_program(WFind *w, const Program *ast)
{
    if (wf_block(w, lang_main(ast))) return true;
    for (int i = 0; i < lang_nfuncs(ast); i++)
        if (wf_block(w, &lang_func(ast, i)->body)) return true;
    return false;
}

/* The ordinal of where-loop x in ast's walk; -1 if the walk misses it. */
static int where_index(const Program *ast, const WhereLoop *x)
{
    WFind w = {.want = x, .index = -1};
    return x && wf_program(&w, ast) ? w.k : -1;
}

static const WhereLoop *where_at(const Program *ast, int index)
{
    WFind w = {.index = index};
    return index >= 0 && wf_program(&w, ast) ? w.found : NULL;
}

/* Literals that travel (runtime/wire.c carries all but distributed matrices). */
static bool plain_lit(const Value *v)
{
    switch (v->kind) {
    case V_NONE: case V_DOUBLE: case V_INT: case V_BOOL: case V_STRING: case V_MATRIX: case V_LIST: case V_FRAME: return true;
    default: return false;
    }
}

/* Function fn, called by eval, and the functions computing its default
 * parameters join k's table, compiled on rank 0 first, so the worker
 * runs them as shipped instead of compiling them. A candidate (a
 * function an eval of a name built at run time may call, maybe never)
 * that does not compile is left out, not a reason. */
static void add_eval_fn(Pk *k, Func *fn, bool candidate)
{
    const Program *ast = k->p->ast;
    const char *why = k->why;
    FProg *fp = generic(k, fn, true);
    if (!fp && candidate) { k->why = why; return; }
    add_func(k, fp);
    for (int j = 0; j < fn->nin && !k->why; j++)
        if (fn->in[j].deflt) {
            fp = generic(k, lang_default_func(ast, fn, j), true);
            if (!fp && candidate) { k->why = why; return; }
            add_func(k, fp);
        }
}

/* The function eval finds for name called from file (as builtins/
 * core.c: the calling file's, then the main script's or the library's),
 * with its defaults' functions (add_eval_fn). */
static void add_eval_func(Pk *k, const char *file, const char *name, bool candidate)
{
    const Program *ast = k->p->ast;
    const char *ns = "";
    for (int f = 0; file && f < lang_nfuncs(ast); f++) {
        const Func *x = lang_func(ast, f);
        if (x->file && (x->file == file || !strcmp(x->file, file))) { ns = x->ns; break; }
    }
    Func *fn = lang_find_func(ast, ns, name);
    if (!fn) fn = lang_find_func(ast, "", name);
    if (fn) add_eval_fn(k, fn, candidate);
}

/* eval(name, ...) (ins[i] in code c): with a literal name, its
 * function (add_eval_func); with another name, noted: the functions it
 * can reach are added after the walk (add_eval_candidates). */
static void add_eval_target(Pk *k, const Code *c, int i)
{
    const Instr *in = &c->ins[i];
    const char *name = NULL;
    for (int j = 0; j < i && in->nin > 0; j++)
        if (c->ins[j].out == in->in[0] && c->ins[j].kind == I_LIT && c->ins[j].lit.kind == V_STRING)
            name = c->ins[j].lit.s->s;
    if (name) { add_eval_func(k, in->span.file, name, false); return; }
    k->eval_var = true;
}

/* An eval whose name is not a literal: its name is known only at run
 * time (a variable, a concatenation, a string read from data), and it
 * can reach any function of the script. Every function of the script and
 * the files it sources ships as a candidate, so the worker compiles none
 * of them; a function of the builtin library the name may give (loaded
 * on first use) the worker still compiles (-stats counts it). */
static void add_eval_candidates(Pk *k)
{
    const Program *ast = k->p->ast;
    for (int f = 0; f < lang_nfuncs(ast) && !k->why && !k->oom; f++) {
        Func *fn = lang_func(ast, f);
        if (!fn->builtin_lib && !fn->external) add_eval_fn(k, fn, true);
    }
}

/* Why instruction i of code c cannot be shipped (NULL: it can); its
 * functions join k's table. */
static const char *check_instr(Pk *k, const Code *c, int i)
{
    const Instr *in = &c->ins[i];
    switch (in->kind) {
    case I_WHERE:
        if (where_index(k->p->ast, in->where) < 0 && !cg_amulet_loop_sig(k->p->cg, in->where))
            return "an AMULET where-loop outside the script's functions";
        break;
    case I_STITCH:
        if (!in->fused) return "a stitched GPU region without its region";
        break;
    case I_FUSED:
        if (!in->fused || !k->p->cg || !cg_op_shippable(in->fused)) return "a fused operator without a CPlan";
        break;
    case I_CALL:
        if (!by_name(k->p->ast, in->func)) return "a call of a function not found by its name";
        add_func(k, in->spec);
        add_func(k, generic(k, in->func, in->spec == NULL));
        break;
    case I_BUILTIN:
        if (in->bi == BI_EVAL || in->bi == BI_EVALLIST) add_eval_target(k, c, i);
        break;
    default: break;
    }
    if (!plain_lit(&in->lit)) return "a literal list or frame";
    if (in->est && in->kind != I_FUSED && in->kind != I_MATMUL && !(in->kind == I_BUILTIN && in->bi == BI_READ))
        return "compiled sizes on an instruction that has none";
    return NULL;
}

/* Does b's DAG travel? Only blocks recompiled before each execution
 * need it: a worker recompiles them with its iterations' sizes, as rank
 * 0 does (the others run their code as compiled). */
static bool ships_dag(const RtProgram *p, const PBlock *b)
{
    return b->dag && b->code && b->code->recompile && p->hooks && p->hooks->dagship;
}

/* The DAG packer's references (PsRefs) on rank 0. */
static bool pk_by_name(void *ctx, const Func *fn) { return by_name(((Pk *)ctx)->p->ast, fn); }

static int32_t pk_spec_index(void *ctx, void *fprog)
{
    add_func(ctx, fprog);
    return fprog ? fn_index(ctx, fprog) : -1;
}

static int32_t pk_where_index(void *ctx, const WhereLoop *w) { return where_index(((Pk *)ctx)->p->ast, w); }

static void collect_list(Pk *k, const PBList *l)
{
    for (int i = 0; i < l->n && !k->why; i++) {
        const PBlock *b = l->v[i];
        if (ships_dag(k->p, b)) k->why = k->p->hooks->dagship->check(b->dag, &k->refs);
        for (int j = 0; b->code && j < b->code->n && !k->why; j++) k->why = check_instr(k, b->code, j);
        collect_list(k, &b->body);
        collect_list(k, &b->els);
    }
}

static void put_ints(StrBuf *o, const int *v, int n)
{
    w_put_i32(o, n);
    if (n > 0) w_put(o, v, (size_t)n * sizeof *v);
}

/* Where-loop instruction in's loop: its ordinal in the script
 * (where_index), or AMULET_LOOP and its body text for a loop the AMULET
 * template made (check_instr made sure it is one of the two); -1 for
 * other instructions. */
#define AMULET_LOOP (-2)
static void put_where(Pk *k, StrBuf *o, const Instr *in)
{
    int32_t i = in->kind == I_WHERE ? where_index(k->p->ast, in->where) : -1;
    const char *sig = in->kind == I_WHERE && i < 0 ? cg_amulet_loop_sig(k->p->cg, in->where) : NULL;
    w_put_i32(o, sig ? AMULET_LOOP : i);
    if (!sig) return;
    w_put_name(o, sig);
    w_put_span(o, in->where->span);
}

static void put_instr(Pk *k, StrBuf *o, const Instr *in)
{
    int32_t f[10] = {in->kind, in->op, in->dir, in->bi, in->exec, in->out_index, in->nvar, in->out,
                     in->ix.rmode, in->ix.cmode};
    w_put(o, f, sizeof f);
    uint8_t flags[6] = {in->left, in->move, in->optional, in->ix.has_col, in->guard_then, in->lazy};
    w_put(o, flags, sizeof flags);
    w_put_i32(o, in->guard);
    w_put_value(o, &in->lit);
    w_put_name(o, in->name);
    w_put_name(o, in->func ? in->func->ns : NULL);
    w_put_name(o, in->func ? in->func->name : NULL);
    w_put_i32(o, in->spec ? fn_index(k, in->spec) : -1);
    put_where(k, o, in);
    uint8_t has = in->anames != NULL;
    w_put(o, &has, 1);
    for (int i = 0; has && i < in->nvar; i++) w_put_name(o, in->anames[i]);
    size_t plen = 0;
    char *plan = in->kind == I_FUSED ? cg_plan_pack(in->fused, &plen) : NULL;
    if (in->kind == I_FUSED && !plan) o->oom = true;
    if (in->kind == I_STITCH) plen = sizeof(StitchRegion);
    uint64_t pl = plen;
    w_put(o, &pl, sizeof pl);
    if (plan) w_put(o, plan, plen);
    if (in->kind == I_STITCH) w_put(o, in->fused, plen);
    free(plan);
    int32_t nest = !in->est ? 0 : in->kind == I_FUSED ? 3 * in->nin : 2;
    w_put_i32(o, nest);
    if (nest) w_put(o, in->est, (size_t)nest * sizeof *in->est);
    w_put(o, &in->opmem, sizeof in->opmem);
    w_put_name(o, in->opname);
    w_put_name(o, in->statname);
    w_put_span(o, in->span);
    put_ints(o, in->in, in->nin);
    put_ints(o, in->frees, in->nfree);
}

static void put_code(Pk *k, StrBuf *o, const Code *c)
{
    int32_t f[8] = {c->n, c->nregs, c->nw, c->pred_reg, c->for_regs[0], c->for_regs[1], c->for_regs[2], c->recompile};
    w_put(o, f, sizeof f);
    for (int i = 0; i < c->nw; i++) w_put_name(o, c->wnames[i]);
    if (c->nw > 0) w_put(o, c->wregs, (size_t)c->nw * sizeof *c->wregs);
    for (int i = 0; i < c->n; i++) put_instr(k, o, &c->ins[i]);
}

static void put_names(StrBuf *o, const NameSet *s)
{
    w_put_i32(o, s->n);
    for (int i = 0; i < s->n; i++) w_put_name(o, s->v[i]);
}

static void put_list(Pk *k, StrBuf *o, const PBList *l);

static void put_block(Pk *k, StrBuf *o, const PBlock *b)
{
    int32_t f[4] = {b->kind, b->parfor_par, b->code != NULL, ships_dag(k->p, b)};
    w_put(o, f, sizeof f);
    uint8_t flags[4] = {b->parfor, b->parfor_check, b->parfor_remote, b->par_ok};
    w_put(o, flags, sizeof flags);
    w_put_span(o, b->span);
    w_put_name(o, b->var);
    put_names(o, &b->live_out);
    put_names(o, &b->results);
    put_names(o, &b->accums);
    if (ships_dag(k->p, b)) k->p->hooks->dagship->put(b->dag, o, &k->refs);
    if (b->code) put_code(k, o, b->code);
    put_list(k, o, &b->body);
    put_list(k, o, &b->els);
}

static void put_list(Pk *k, StrBuf *o, const PBList *l)
{
    w_put_i32(o, l->n);
    for (int i = 0; i < l->n; i++) put_block(k, o, l->v[i]);
}

/* Appends the plan of k's functions and, with b, the loop b to out (the
 * returns of ps_pack). */
static void pk_free(Pk *k)
{
    free(k->fs);
    free(k->named);
}

static int pack_out(Pk *k, const PBlock *b, StrBuf *out, const char **why)
{
    if (k->eval_var && !k->why && !k->oom) add_eval_candidates(k);
    if (k->oom) { pk_free(k); return -1; }
    if (k->why) { *why = k->why; pk_free(k); return 1; }
    StrBuf o = {0};
    for (int i = 0; i < k->nf; i++) {
        const FProg *fp = k->fs[i];
        w_put_name(&o, fp->func->ns);
        w_put_name(&o, fp->func->name);
        if (!ps_put_sig(&o, fp->func, fp->sig)) { free(o.s), pk_free(k); *why = "a specialization for a list"; return 1; }
        uint8_t named = k->named[i], dims = fp->out_dims != NULL;
        w_put(&o, &named, 1);
        if (named) continue;
        w_put(&o, &dims, 1);
        if (dims) w_put(&o, fp->out_dims, 2 * (size_t)fp->func->nout * sizeof *fp->out_dims);
    }
    for (int i = 0; i < k->nf; i++) if (!k->named[i]) put_list(k, &o, &k->fs[i]->body);
    if (b) put_block(k, &o, b);
    for (int i = 0; i < k->nf; i++) k->count[k->named[i]]++;
    pk_free(k);
    if (o.oom) { free(o.s); return -1; }
    PsHead h = {PS_MAGIC, PS_VERSION, sizeof(Instr), sizeof(PBlock), OP__COUNT, BI__COUNT, k->nf, b != NULL,
                fnv(o.s, o.n)};
    uint64_t len = sizeof h + o.n;
    w_put(out, &len, sizeof len);
    w_put(out, &h, sizeof h);
    w_put(out, o.s, o.n);
    free(o.s);
    return out->oom ? -1 : 0;
}

static void pk_init(Pk *k, RtProgram *p, Diag *d)
{
    *k = (Pk){.p = p, .diag = d};
    k->refs = (PsRefs){.ctx = k, .by_name = pk_by_name, .spec_index = pk_spec_index, .where_index = pk_where_index};
}

int ps_pack(RtProgram *p, const PBlock *b, Diag *d, StrBuf *out, const char **why)
{
    Pk k;
    pk_init(&k, p, d);
    PBList one = {(PBlock **)&b, 1, 1};
    collect_list(&k, &one);
    return pack_out(&k, b, out, why);
}

/* The worker's list of what it holds (ps_put_held) from r, to its end:
 * the entries this program finds by name (*n of them, malloc'd; an
 * entry rank 0 does not find, or whose signature does not read for
 * rank 0's function, is left out: that function then travels whole).
 * false when the list is damaged. */
static bool get_held(WRd *r, const Program *ast, PsHeld **held, int *n)
{
    int32_t cnt = w_get_i32(r);
    *held = NULL, *n = 0;
    if (r->bad || cnt < 0 || (size_t)cnt > (size_t)(r->end - r->p)) return false;
    PsHeld *h = cnt ? calloc((size_t)cnt, sizeof *h) : NULL;
    if (cnt && !h) return false;
    for (int32_t i = 0; i < cnt && !r->bad; i++) {
        const char *ns = w_get_name(r), *name = w_get_name(r);
        uint64_t len = w_get_u64(r);
        const char *sb = r->bad || !name ? NULL : w_take(r, len);
        Func *fn = sb ? resolve_func(ast, ns ? ns : "", name) : NULL;
        if (!sb) r->bad = true;
        if (!fn) continue;
        WRd sr = {sb, sb + len, false};
        bool has;
        BrErr e = {0};
        FSig *sig = ps_get_sig(&sr, fn, &has, &e);
        if (sr.bad || sr.p != sr.end || (has && !sig)) { ps_free_sig(fn, sig); continue; }
        h[(*n)++] = (PsHeld){fn, sig};
    }
    if (!r->bad && r->p == r->end) { *held = h; return true; }
    for (int i = 0; i < *n; i++) ps_free_sig(h[i].fn, h[i].sig);
    free(h);
    *n = 0;
    return false;
}

int ps_pack_func(RtProgram *p, Func *fn, const FSig *sig, WRd *have, Diag *d, StrBuf *out, const char **why,
                 int sent[2])
{
    Pk k;
    pk_init(&k, p, d);
    PsHeld *h = NULL;
    if (have && !get_held(have, p->ast, &h, &k.nheld)) { *why = "a damaged request"; return 1; }
    k.held = h;
    FProg *fp = NULL;
    if (!by_name(p->ast, fn)) *why = "it is not found by its name";
    else if (!(fp = sig ? (p->hooks && p->hooks->function_sig ? p->hooks->function_sig(p, fn, sig, d) : NULL)
                        : generic(&k, fn, true)))
        *why = "it does not compile";
    int rc = 1;
    if (fp) {
        add_func(&k, fp);   /* first, with the functions it calls after it */
        rc = pack_out(&k, NULL, out, why);
        if (!rc && sent) sent[0] = k.count[0], sent[1] = k.count[1];
    }
    for (int i = 0; i < k.nheld; i++) ps_free_sig(h[i].fn, h[i].sig);
    free(h);
    return rc;
}

bool ps_put_held(StrBuf *q, RtProgram *p)
{
    StrBuf list = {0}, sb = {0};
    int32_t n = 0;
    bool ok = true;
    pthread_mutex_lock(&p->lock);
    for (int i = 0; i < p->nfuncs && ok; i++) {
        const FProg *fp = p->funcs[i];
        sb.n = 0;
        /* rank 0 finds it by name; a signature with a list does not travel */
        if (!fp->compiled || !by_name(p->ast, fp->func) || !ps_put_sig(&sb, fp->func, fp->sig)) continue;
        w_put_name(&list, fp->func->ns);
        w_put_name(&list, fp->func->name);
        w_put(&list, &(uint64_t){sb.n}, sizeof(uint64_t));
        w_put(&list, sb.s, sb.n);
        n++;
        ok = !list.oom && !sb.oom;
    }
    pthread_mutex_unlock(&p->lock);
    w_put_i32(q, n);
    w_put(q, list.s, list.n);
    free(list.s), free(sb.s);
    return ok && !q->oom;
}

Func *ps_find_func(const Program *ast, const char *ns, const char *name) { return resolve_func(ast, ns, name); }

/* ---- unpacking (workers) ---- */

struct PsCache {
    uint64_t hash;
    char *buf;                 /* the bytes names point into */
    size_t n;
    PBlock *loop;
    Value *lits;               /* literals the instructions borrow */
    int nlits, litcap;
    const char ***anames;      /* argument name arrays */
    int nan, ancap;
    StitchRegion **regions;    /* stitched regions the instructions point to */
    int nreg, regcap;
    int nfuncs;                /* functions added to the program */
    int ndups;                 /* shipped copies of functions it held */
    const RtProgram *prog;     /* the program the loop's DAGs are freed by */
    PsCache *next;
};

typedef struct Uk {
    RtProgram *p;
    WRd r;
    PsCache *c;
    FProg **fs;                /* the functions by index, as calls find them */
    FProg **own;               /* as decoded (fs[i] differs: a copy this
                                  program holds already, so own[i] goes;
                                  NULL: rank 0 sent its head only) */
    int nf;
    BrErr *e;
    PsRefs refs;               /* for the compiler's DAG reader */
} Uk;

static void bad(Uk *u, const char *why)
{
    if (!u->e->code) br_err(u->e, BR_EFAIL, "rank %d: a shipped parfor plan is damaged (%s)", dist_rank(), why);
    u->r.bad = true;
}

/* n ints (malloc'd; NULL for none) */
static int *get_ints(Uk *u, int *n)
{
    *n = w_get_i32(&u->r);
    if (*n <= 0 || u->r.bad) { if (*n < 0) bad(u, "a count"); *n = 0; return NULL; }
    const void *q = w_take(&u->r, (size_t)*n * sizeof(int));
    int *v = q ? malloc((size_t)*n * sizeof(int)) : NULL;
    if (v) memcpy(v, q, (size_t)*n * sizeof(int));
    else if (q) bad(u, "out of memory");
    return v;
}

static bool keep_lit(Uk *u, Value v)
{
    PsCache *c = u->c;
    if (!br_grow((void **)&c->lits, &c->litcap, c->nlits + 1, sizeof *c->lits)) { val_release(&v); return false; }
    c->lits[c->nlits++] = v;
    return true;
}

/* The where-loop at ordinal index of this rank's script (where_index). */
static const WhereLoop *get_where(Uk *u, int32_t index)
{
    const WhereLoop *w = where_at(u->p->ast, index);
    if (!w) bad(u, "a where-loop this rank's script does not hold");
    return w;
}

static Func *get_func(Uk *u)
{
    const char *ns = w_get_name(&u->r), *name = w_get_name(&u->r);
    if (!name || u->r.bad) return NULL;
    Func *fn = resolve_func(u->p->ast, ns, name);
    if (!fn) bad(u, "a function this rank's script does not define");
    return fn;
}

/* A stitched region's node array as rank 0 sent it (put_instr), kept
 * by the cache; NULL (u bad) when its size or an index is off. */
static bool region_ok(const StitchRegion *g)
{
    bool ok = g->n >= 1 && g->n <= ST_MAX_NODES && g->root >= 0 && g->root < g->n && g->nin >= 0 &&
              g->nin <= ST_MAX_IN && g->nsc >= 0 && g->nsc <= ST_MAX_SC && g->nxout >= 0 &&
              g->nxout < ST_MAX_OUT && (g->dir == DIR_ROW || g->dir == DIR_COL);
    for (int i = 0; ok && i < g->nxout; i++) ok = g->xout[i] >= 0 && g->xout[i] < g->n;
    for (int i = 0; ok && i < (g->nin > 0 ? g->nin : 1); i++) ok = (unsigned)g->mode[i] <= SI_POST;
    for (int i = 0; ok && i < g->n; i++) {
        const SNode *x = &g->nodes[i];
        bool un = x->k == SN_UN || x->k == SN_RED || x->k == SN_VARDIV, bin = x->k == SN_BIN;
        ok = (unsigned)x->k <= SN_VARDIV && (unsigned)x->op < OP__COUNT;
        if (ok && (un || bin)) ok = x->a >= 0 && x->a < i;
        if (ok && bin) ok = x->b >= 0 && x->b < i;
        if (ok && x->k == SN_IN) ok = x->a >= 1 && x->a < g->nin;
        if (ok && x->k == SN_SC) ok = x->a >= 0 && x->a < g->nsc;
    }
    return ok;
}

static StitchRegion *get_region(Uk *u, const char *b, uint64_t n)
{
    if (!b || n != sizeof(StitchRegion)) { bad(u, "a stitched region"); return NULL; }
    StitchRegion *g = malloc(sizeof *g);
    PsCache *c = u->c;
    if (!g || !br_grow((void **)&c->regions, &c->regcap, c->nreg + 1, sizeof *c->regions)) {
        free(g);
        bad(u, "out of memory");
        return NULL;
    }
    memcpy(g, b, sizeof *g);
    c->regions[c->nreg++] = g;
    if (!region_ok(g)) { bad(u, "a stitched region"); return NULL; }
    return g;
}

static void get_instr(Uk *u, Instr *in)
{
    WRd *r = &u->r;
    int32_t f[10];
    w_get(r, f, sizeof f);
    in->kind = f[0], in->op = f[1], in->dir = f[2], in->bi = f[3], in->exec = f[4];
    in->out_index = f[5], in->nvar = f[6], in->out = f[7], in->ix.rmode = f[8], in->ix.cmode = f[9];
    uint8_t flags[6];
    w_get(r, flags, sizeof flags);
    in->left = flags[0], in->move = flags[1], in->optional = flags[2], in->ix.has_col = flags[3];
    in->guard_then = flags[4], in->lazy = flags[5];
    in->guard = w_get_i32(r);
    in->lit = w_get_value(r, u->e);
    if (in->lit.kind != V_NONE && !keep_lit(u, in->lit)) bad(u, "out of memory");
    in->name = w_get_name(r);
    in->func = NULL;
    WRd peek = *r;
    if (w_get_name(&peek)) in->func = get_func(u);
    else w_get_name(r), w_get_name(r);
    int32_t spec = w_get_i32(r);
    if (spec >= u->nf) bad(u, "a function index");
    in->spec = spec >= 0 && spec < u->nf ? u->fs[spec] : NULL;
    int32_t where = w_get_i32(r);
    in->where = NULL;
    if (where == AMULET_LOOP) {
        const char *sig = w_get_name(r);
        Span sp = w_get_span(r);
        in->where = in->kind == I_WHERE && !r->bad ? cg_amulet_loop(u->p->cg, sig, sp) : NULL;
        if (!in->where) bad(u, "an AMULET where-loop this rank does not make");
    } else if (in->kind == I_WHERE) {
        in->where = get_where(u, where);
    }
    in->anames = NULL;
    if (w_get_u8(r)) {
        const char **a = in->nvar > 0 ? calloc((size_t)in->nvar, sizeof *a) : NULL;
        PsCache *c = u->c;
        if (a && br_grow((void **)&c->anames, &c->ancap, c->nan + 1, sizeof *c->anames)) c->anames[c->nan++] = a;
        else { free(a); a = NULL; if (in->nvar > 0) bad(u, "out of memory"); }
        for (int i = 0; i < in->nvar; i++) {
            const char *s = w_get_name(r);
            if (a) a[i] = s;
        }
        in->anames = a;
    }
    uint64_t pl = w_get_u64(r);
    const char *plan = w_take(r, pl);
    in->fused = NULL;
    if (in->kind == I_FUSED && plan && !r->bad) {
        in->fused = u->p->cg ? cg_op_unpack(u->p->cg, plan, pl) : NULL;
        if (!in->fused) bad(u, u->p->cg ? "a fused operator's plan" : "a fused operator, and fusion is off here");
    }
    if (in->kind == I_STITCH && !r->bad) in->fused = get_region(u, plan, pl);
    int32_t nest = w_get_i32(r);
    in->est = NULL;
    if (nest > 0) {
        const void *q = w_take(r, (size_t)nest * sizeof(int64_t));
        if (q && (in->est = malloc((size_t)nest * sizeof(int64_t)))) memcpy(in->est, q, (size_t)nest * sizeof(int64_t));
        else bad(u, "compiled sizes");
    }
    w_get(r, &in->opmem, sizeof in->opmem);
    in->opname = w_get_name(r);
    in->statname = w_get_name(r);
    in->span = w_get_span(&u->r);
    in->in = get_ints(u, &in->nin);
    in->frees = get_ints(u, &in->nfree);
    if ((unsigned)in->kind > I_STITCH || (in->kind == I_STITCH && !in->fused) || (unsigned)in->op >= OP__COUNT ||
        (unsigned)in->bi >= BI__COUNT)
        bad(u, "an instruction");
    for (int i = 0; i < in->nin; i++) if (in->in[i] < -1) bad(u, "a register");
}

static Code *get_code(Uk *u)
{
    int32_t f[8];
    w_get(&u->r, f, sizeof f);
    if (u->r.bad || f[0] < 0 || f[1] < 0 || f[2] < 0) { bad(u, "a block's code"); return NULL; }
    Code *c = calloc(1, sizeof *c);
    if (!c) { bad(u, "out of memory"); return NULL; }
    c->nregs = f[1], c->nw = f[2], c->pred_reg = f[3];
    c->for_regs[0] = f[4], c->for_regs[1] = f[5], c->for_regs[2] = f[6];
    /* recompiled before each execution when its DAG came along (get_block) */
    c->recompile = f[7] != 0;
    c->seen_cells = -1;
    c->ins = calloc((size_t)f[0] + 1, sizeof *c->ins);
    c->wnames = malloc(((size_t)c->nw + 1) * sizeof *c->wnames);
    c->wregs = malloc(((size_t)c->nw + 1) * sizeof *c->wregs);
    if (!c->ins || !c->wnames || !c->wregs) { c->nw = 0; plan_code_free(c); bad(u, "out of memory"); return NULL; }
    for (int i = 0; i < c->nw; i++) c->wnames[i] = w_get_name(&u->r);
    if (c->nw > 0) w_get(&u->r, c->wregs, (size_t)c->nw * sizeof *c->wregs);
    for (int i = 0; i < f[0] && !u->r.bad; i++, c->n++) get_instr(u, &c->ins[i]);
    for (int i = 0; i < c->n; i++)
        if (c->ins[i].out < 0 || c->ins[i].out >= c->nregs) bad(u, "a register");
    /* a guard names a later ifelse (the interpreter reads its condition) */
    for (int i = 0; i < c->n; i++) {
        int g = c->ins[i].guard;
        if (g && (g - 1 <= i || g > c->n || c->ins[g - 1].kind != I_TERNARY || c->ins[g - 1].nin != 3))
            bad(u, "an ifelse guard");
    }
    return c;
}

/* The DAG reader's references (PsRefs) on a worker. */
static Func *uk_func(void *ctx, const char *ns, const char *name)
{
    Uk *u = ctx;
    Func *fn = resolve_func(u->p->ast, ns, name);
    if (!fn) bad(u, "a function this rank's script does not define");
    return fn;
}

static void *uk_spec_at(void *ctx, int32_t i)
{
    Uk *u = ctx;
    if (i >= u->nf) bad(u, "a function index");
    return i >= 0 && i < u->nf ? u->fs[i] : NULL;
}

static const WhereLoop *uk_where_at(void *ctx, int32_t i) { return get_where(ctx, i); }

static void uk_bad(void *ctx, const char *why) { bad(ctx, why); }

static bool get_names(Uk *u, NameSet *s)
{
    int32_t n = w_get_i32(&u->r);
    for (int i = 0; i < n && !u->r.bad; i++) {
        const char *x = w_get_name(&u->r);
        if (x) ns_add(s, x);
    }
    return !s->oom;
}

static void get_list(Uk *u, PBList *l);

static PBlock *get_block(Uk *u)
{
    int32_t f[4];
    w_get(&u->r, f, sizeof f);
    PBlock *b = u->r.bad ? NULL : calloc(1, sizeof *b);
    if (!b) { bad(u, "a block"); return NULL; }
    b->kind = f[0], b->parfor_par = f[1];
    if ((unsigned)b->kind > PB_FOR) bad(u, "a block kind");
    uint8_t flags[4];
    w_get(&u->r, flags, sizeof flags);
    b->parfor = flags[0], b->parfor_check = flags[1], b->parfor_remote = flags[2], b->par_ok = flags[3];
    b->span = w_get_span(&u->r);
    b->var = w_get_name(&u->r);
    if (!get_names(u, &b->live_out) || !get_names(u, &b->results) || !get_names(u, &b->accums)) bad(u, "out of memory");
    if (f[3] && u->p->hooks && u->p->hooks->dagship) b->dag = u->p->hooks->dagship->get(&u->r, &u->refs);
    else if (f[3]) bad(u, "a DAG, and this program cannot read one");
    if (f[2]) b->code = get_code(u);
    if (b->code) b->code->recompile = b->code->recompile && b->dag;
    get_list(u, &b->body);
    get_list(u, &b->els);
    return b;
}

static void get_list(Uk *u, PBList *l)
{
    int32_t n = w_get_i32(&u->r);
    for (int i = 0; i < n && !u->r.bad; i++) {
        PBlock *b = get_block(u);
        if (b && !pbl_add(l, b)) { pblock_free(u->p, b); bad(u, "out of memory"); }
    }
}

static bool same_sig(const Func *fn, const FSig *a, const FSig *b)
{
    if (!a || !b) return a == b;
    for (int i = 0; i < fn->nin; i++) {
        const Value *x = &a[i].v, *y = &b[i].v;
        if (a[i].rows != b[i].rows || a[i].cols != b[i].cols || x->kind != y->kind) return false;
        if ((x->kind == V_INT && x->i != y->i) || (x->kind == V_BOOL && x->b != y->b) ||
            (x->kind == V_DOUBLE && memcmp(&x->d, &y->d, sizeof x->d) != 0) ||
            (x->kind == V_STRING && strcmp(x->s->s, y->s->s) != 0))
            return false;
    }
    return true;
}

/* The compiled version of fp's function for fp's signature that p holds
 * already (shipped with an earlier plan, or compiled here), or fp. */
static FProg *held(RtProgram *p, FProg *fp)
{
    FProg *q = fp;
    pthread_mutex_lock(&p->lock);
    for (int i = 0; i < p->nfuncs && q == fp; i++)
        if (p->funcs[i]->func == fp->func && p->funcs[i]->compiled && same_sig(fp->func, p->funcs[i]->sig, fp->sig))
            q = p->funcs[i];
    pthread_mutex_unlock(&p->lock);
    return q;
}

FProg *ps_held(RtProgram *p, Func *fn, const FSig *sig)
{
    FProg x = {.func = fn, .sig = (FSig *)sig};
    FProg *q = held(p, &x);
    return q == &x ? NULL : q;
}

/* The shipped functions' heads (their bodies follow later). A function
 * this program holds for the same signature is used instead of the
 * shipped copy, so plans for different loops or specializations leave
 * one copy of each function on a worker. */
static bool get_func_heads(Uk *u, int n)
{
    u->fs = calloc((size_t)n + 1, sizeof *u->fs);
    u->own = calloc((size_t)n + 1, sizeof *u->own);
    if (!u->fs || !u->own) { bad(u, "out of memory"); return false; }
    for (int i = 0; i < n && !u->r.bad; i++, u->nf++) {
        Func *fn = get_func(u);
        FProg *fp = fn ? calloc(1, sizeof *fp) : NULL;
        if (!fp) { bad(u, "a function"); break; }
        u->own[i] = u->fs[i] = fp;
        fp->func = fn;
        fp->compiled = true;
        bool has;
        fp->sig = ps_get_sig(&u->r, fn, &has, u->e);
        if (has && !fp->sig) bad(u, "a signature");
        if (w_get_u8(&u->r) && !u->r.bad) {   /* a function this worker said it holds */
            u->fs[i] = held(u->p, fp);
            if (u->fs[i] == fp) bad(u, "a function this rank does not hold");
            u->own[i] = NULL;
            fprog_free(u->p, fp);
            continue;
        }
        if (w_get_u8(&u->r)) {
            fp->out_dims = malloc(2 * ((size_t)fn->nout + 1) * sizeof *fp->out_dims);
            if (fp->out_dims) w_get(&u->r, fp->out_dims, 2 * (size_t)fn->nout * sizeof *fp->out_dims);
            else bad(u, "out of memory");
        }
        if (!u->r.bad) u->fs[i] = held(u->p, fp);
    }
    return !u->r.bad;
}

/* The shipped functions new to p join its table (found by the
 * compiler's hooks as if compiled here); copies of functions p holds,
 * and on failure all, are freed. */
static void adopt_funcs(Uk *u, bool ok)
{
    RtProgram *p = u->p;
    int added = 0, dups = 0;
    pthread_mutex_lock(&p->lock);
    if (ok && !br_grow((void **)&p->funcs, &p->fcap, p->nfuncs + u->nf, sizeof *p->funcs)) ok = false;
    for (int i = 0; i < u->nf; i++) {
        if (ok && u->own[i] && u->own[i] == u->fs[i]) p->funcs[p->nfuncs++] = u->own[i], added++;
        else dups += u->own[i] != NULL, fprog_free(p, u->own[i]);
    }
    pthread_mutex_unlock(&p->lock);
    u->c->nfuncs += added;
    if (ok) u->c->ndups += dups;
}

static void cache_free(PsCache *c)
{
    for (int i = 0; i < c->nlits; i++) val_release(&c->lits[i]);
    free(c->lits);
    for (int i = 0; i < c->nan; i++) free(c->anames[i]);
    free(c->anames);
    for (int i = 0; i < c->nreg; i++) free(c->regions[i]);
    free(c->regions);
    free(c->buf);
    free(c);
}

/* The plan bytes buf[0..n) unpacked into p: its functions join p's
 * table, its loop (h->loop) goes to the entry; *first (when not NULL):
 * the plan's first function as p holds it now. */
static PsCache *unpack(RtProgram *p, const char *buf, size_t n, const PsHead *h, FProg **first, BrErr *e)
{
    PsCache *c = calloc(1, sizeof *c);
    if (!c || !(c->buf = malloc(n ? n : 1))) { free(c); br_err(e, BR_ENOMEM, "out of memory"); return NULL; }
    memcpy(c->buf, buf, n);
    c->n = n, c->hash = h->hash;
    Uk u = {.p = p, .r = {c->buf + sizeof *h, c->buf + n, false}, .c = c, .e = e};
    u.refs = (PsRefs){.ctx = &u, .e = e, .func = uk_func, .spec_at = uk_spec_at, .where_at = uk_where_at, .bad = uk_bad};
    c->prog = p;
    if (get_func_heads(&u, h->nfuncs))
        for (int i = 0; i < u.nf && !u.r.bad; i++) if (u.own[i]) get_list(&u, &u.own[i]->body);
    if (!u.r.bad && h->loop) c->loop = get_block(&u);
    if (!u.r.bad && u.r.p != u.r.end) bad(&u, "trailing bytes");
    if (!u.r.bad && !h->loop && u.nf == 0) bad(&u, "no function");
    if (c->loop && (u.r.bad || c->loop->kind != PB_FOR || !c->loop->parfor)) {
        if (!u.r.bad) bad(&u, "not a parfor loop");
        pblock_free(p, c->loop);
        c->loop = NULL;
    }
    adopt_funcs(&u, !u.r.bad);
    if (first) *first = !u.r.bad && u.nf > 0 ? u.fs[0] : NULL;
    free(u.fs);
    free(u.own);
    if (u.r.bad) {
        if (!e->code) bad(&u, "short");
        cache_free(c);
        return NULL;
    }
    return c;
}

/* Reads and checks the head of plan bytes buf[0..n) (loop: whether a
 * loop must follow); non-zero with e set when they come from another
 * build or are damaged. */
static int head_ok(const char *buf, size_t n, bool loop, PsHead *h, BrErr *e)
{
    if (n < sizeof *h) return br_err(e, BR_EFAIL, "rank %d: a shipped parfor plan is damaged (short)", dist_rank());
    memcpy(h, buf, sizeof *h);
    if (h->magic != PS_MAGIC || h->version != PS_VERSION || h->instr_size != sizeof(Instr) ||
        h->block_size != sizeof(PBlock) || h->nops != OP__COUNT || h->nbis != BI__COUNT || h->nfuncs < 0)
        return br_err(e, BR_EFAIL, "rank %d: the shipped parfor plan comes from another braid build (format %u, %d "
                      "operators, %d builtins; here %u, %d, %d): run the same braid on every rank", dist_rank(),
                      h->version, h->nops, h->nbis, PS_VERSION, (int)OP__COUNT, (int)BI__COUNT);
    if (fnv(buf + sizeof *h, n - sizeof *h) != h->hash)
        return br_err(e, BR_EFAIL, "rank %d: a shipped parfor plan is damaged (its hash differs)", dist_rank());
    if ((h->loop != 0) != loop)
        return br_err(e, BR_EFAIL, "rank %d: a shipped parfor plan is damaged (%s)", dist_rank(),
                      loop ? "no loop" : "a loop where a function was asked for");
    return 0;
}

PBlock *ps_loop(PsCache **cache, RtProgram *p, const char *buf, size_t n, bool *fresh, BrErr *e)
{
    PsHead h;
    *fresh = false;
    if (head_ok(buf, n, true, &h, e)) return NULL;
    for (PsCache *c = *cache; c; c = c->next)
        if (c->hash == h.hash && c->n == n && !memcmp(c->buf, buf, n)) return c->loop;
    PsCache *c = unpack(p, buf, n, &h, NULL, e);
    if (!c) return NULL;
    c->next = *cache;
    *cache = c;
    *fresh = true;
    return c->loop;
}

FProg *ps_func(PsCache **cache, RtProgram *p, const char *buf, size_t n, const Func *fn, BrErr *e)
{
    PsHead h;
    FProg *fp = NULL;
    if (head_ok(buf, n, false, &h, e)) return NULL;
    PsCache *c = unpack(p, buf, n, &h, &fp, e);
    if (!c) return NULL;
    c->next = *cache;
    *cache = c;
    if (!fp || fp->func != fn) {
        br_err(e, BR_EFAIL, "rank %d: rank 0 sent another function than '%s'", dist_rank(), fn->name);
        return NULL;
    }
    return fp;
}

int ps_funcs(const PsCache *cache)
{
    int n = 0;
    for (; cache; cache = cache->next) n += cache->nfuncs;
    return n;
}

int ps_dups(const PsCache *cache)
{
    int n = 0;
    for (; cache; cache = cache->next) n += cache->ndups;
    return n;
}

void ps_free_loops(PsCache *cache)
{
    for (; cache; cache = cache->next) {
        pblock_free(cache->prog, cache->loop);   /* (the program is still there) */
        cache->loop = NULL;
    }
}

void ps_free(PsCache *cache)
{
    while (cache) {
        PsCache *next = cache->next;
        pblock_free(NULL, cache->loop);   /* none left after ps_free_loops */
        cache_free(cache);
        cache = next;
    }
}
