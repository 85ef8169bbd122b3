/* test_machine.c: the cost model's machine constants (codegen/cost.c
 * cg_machine_with) under a faked measurement, without timing: a busy
 * measurement is repeated by later processes keeping each constant's
 * maximum; a file all of whose measurements were busy is measured again
 * once the run queue is quiet and then stays (after 4 busy ones there,
 * too); a quiet measurement whose
 * ratios no machine has (a streaming read of 0.85 GB/s beside 9 GFLOP/s)
 * counts as busy; a planted low file (5 values, as older builds wrote)
 * is bounded at once and measured again when the queue is quiet, also
 * when only the prebuilt set shows it low; plausible files are used as
 * they are; the prebuilt set's file only when final, and tools/kernels.sh
 * carries only such files into the set; cg_machine_bound over random constants; the real run-queue
 * probe sees processes that spin. */
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codegen/cgint.h"
#include "tests/t.h"

#if T_SAN
#define MFILE "machine-2-san.txt"
#else
#define MFILE "machine-2.txt"
#endif

/* The fake probe: measure returns val (and busy), counting calls. */
typedef struct Fake {
    CgMachine val;
    bool busy, crowded;
    int nmeasure;
} Fake;

static bool fake_measure(void *arg, CgMachine *mc)
{
    Fake *f = arg;
    f->nmeasure++;
    mc->read_bw = f->val.read_bw;
    mc->write_bw = f->val.write_bw;
    mc->flops = f->val.flops;
    mc->gemm = f->val.gemm;
    mc->vecmat = f->val.vecmat;
    return f->busy;
}

static bool fake_crowded(void *arg, int nt)
{
    (void)nt;
    return ((Fake *)arg)->crowded;
}

static CgMachine mk(double r, double w, double f, double g, double v)
{
    return (CgMachine){.read_bw = r, .write_bw = w, .flops = f, .gemm = g, .vecmat = v};
}

static bool same5(const CgMachine *a, const CgMachine *b)
{
    return fabs(a->read_bw - b->read_bw) <= 1e-5 * b->read_bw && fabs(a->write_bw - b->write_bw) <= 1e-5 * b->write_bw &&
           fabs(a->flops - b->flops) <= 1e-5 * b->flops && fabs(a->gemm - b->gemm) <= 1e-5 * b->gemm &&
           fabs(a->vecmat - b->vecmat) <= 1e-5 * b->vecmat;
}

static char dir[64], pre[80], file[128], prefile[128];

/* The cache file's text after its five constants ("" when none). */
static const char *state(char *buf, size_t n)
{
    char *s = t_slurp(file, NULL);
    buf[0] = 0;
    if (s) {
        double x;
        int off = 0, k = 0;
        const char *p = s;
        while (k < 5 && sscanf(p, "%lf%n", &x, &off) == 1) { p += off; k++; }
        while (*p == ' ') p++;
        snprintf(buf, n, "%s", p);
        size_t l = strlen(buf);
        if (l && buf[l - 1] == '\n') buf[l - 1] = 0;
        free(s);
    }
    return buf;
}

static CgMachine get(Fake *f, bool with_pre)
{
    CgProbe p = {fake_measure, fake_crowded, f};
    CgMachine mc = {0};
    cg_machine_with(dir, with_pre ? pre : NULL, &p, &mc);
    return mc;
}

static const CgMachine Q = {.read_bw = 4e10, .write_bw = 3e10, .flops = 9e9, .gemm = 8e10, .vecmat = 5e10};

/* Busy rounds keep the maximum, settle after 4 and are measured again
 * only on a quiet run queue; the quiet measurement is final. */
static void busy_rounds(void)
{
    char b[64];
    remove(file);
    Fake f = {.val = mk(1e10, 2e10, 2e9, 2e10, 1.2e10), .busy = true};
    CgMachine m = get(&f, false);
    T_CHECK(f.nmeasure == 1 && same5(&m, &f.val) && !strcmp(state(b, sizeof b), "1"), "busy 1: %d '%s'", f.nmeasure, b);
    f.val = mk(2e10, 1e10, 3e9, 1.5e10, 1e10);
    m = get(&f, false);
    CgMachine mx = mk(2e10, 2e10, 3e9, 2e10, 1.2e10);
    T_CHECK(f.nmeasure == 2 && same5(&m, &mx) && !strcmp(state(b, sizeof b), "2"), "busy 2 keeps the maximum: '%s'", b);
    get(&f, false);
    get(&f, false);
    T_CHECK(f.nmeasure == 4 && !strcmp(state(b, sizeof b), "4 0"), "busy 4: settled busy '%s'", b);
    f.crowded = true;
    m = get(&f, false);
    T_CHECK(f.nmeasure == 4 && same5(&m, &mx) && !strcmp(state(b, sizeof b), "4 0"),
            "settled busy, crowded queue: not measured");
    f.crowded = false;
    f.busy = true;
    get(&f, false);
    T_CHECK(f.nmeasure == 5 && !strcmp(state(b, sizeof b), "4 -1"), "settled busy, quiet queue, busy again: '%s'", b);
    f.busy = false;
    f.val = Q;
    m = get(&f, false);
    T_CHECK(f.nmeasure == 6 && same5(&m, &Q) && !strcmp(state(b, sizeof b), "4 1"), "quiet measurement: final '%s'", b);
    f.val = mk(8e10, 6e10, 2e10, 2e11, 1e11);
    m = get(&f, false);
    T_CHECK(f.nmeasure == 6 && same5(&m, &Q), "final file: not measured again");
}

/* A machine whose measurements always read busy, even on a quiet run
 * queue, stops measuring after 4 such ones. */
static void busy_cap(void)
{
    char b[64];
    t_put(file, "1e+10 1e+10 3e+09 3e+10 1e+10 4 0\n");
    Fake f = {.val = mk(1e10, 1e10, 3e9, 3e10, 1e10), .busy = true};
    for (int i = 0; i < 6; i++) get(&f, false);
    T_CHECK(f.nmeasure == 4 && !strcmp(state(b, sizeof b), "4 -4"), "busy on a quiet queue: %d measurements, '%s'",
            f.nmeasure, b);
}

/* A quiet measurement with implausible ratios counts as busy; what is
 * used is bounded. */
static void implausible(void)
{
    char b[64];
    remove(file);
    Fake f = {.val = mk(8.5e8, 3e10, 9e9, 8e10, 5e10)};
    T_CHECK(!cg_machine_plausible(&f.val, NULL), "0.85 GB/s beside 9 GFLOP/s is implausible");
    CgMachine m = get(&f, false);
    T_CHECK(f.nmeasure == 1 && !strcmp(state(b, sizeof b), "1"), "implausible quiet measurement: busy '%s'", b);
    T_CHECK(m.read_bw >= 0.25 * 9e9 && m.read_bw < 4e10 && m.flops == 9e9 && m.gemm == 8e10 &&
            cg_machine_plausible(&m, NULL), "implausible: read bounded to %g", m.read_bw);
}

/* Planted files of 5 values (as builds before the state value wrote). */
static void planted(void)
{
    char b[64];
    /* low read: bounded at once; measured again on a quiet queue only */
    t_put(file, "8.5e+08 3e+10 9e+09 8e+10 5e+10\n");
    Fake f = {.val = Q, .crowded = true};
    CgMachine m = get(&f, false);
    T_CHECK(f.nmeasure == 0 && m.read_bw >= 0.25 * 9e9 && cg_machine_plausible(&m, NULL) && !strcmp(state(b, sizeof b), ""),
            "planted low read, crowded: bounded (%g), not measured, file kept", m.read_bw);
    f.crowded = false;
    m = get(&f, false);
    T_CHECK(f.nmeasure == 1 && same5(&m, &Q) && !strcmp(state(b, sizeof b), "4 1"), "planted low read, quiet: measured '%s'", b);
    /* plausible ratios, flops a quarter of the prebuilt set's */
    const char *lowf = "4e+10 3e+10 2e+09 5e+10 5e+10\n";
    t_put(file, lowf);
    f.nmeasure = 0;
    m = get(&f, false);
    T_CHECK(f.nmeasure == 0 && m.flops == 2e9, "low flops, no prebuilt set: used as it is");
    m = get(&f, true);
    CgMachine mx = mk(4e10, 3e10, 9e9, 8e10, 5e10);
    T_CHECK(f.nmeasure == 1 && same5(&m, &mx), "low flops against the prebuilt set: measured again");
    /* a plausible file near the set's: used, file untouched */
    const char *ok = "3.5e+10 2.8e+10 8e+09 7.5e+10 4.5e+10\n";
    t_put(file, ok);
    f.nmeasure = 0;
    m = get(&f, true);
    char *s = t_slurp(file, NULL);
    T_CHECK(f.nmeasure == 0 && m.read_bw == 3.5e10 && s && !strcmp(s, ok), "plausible planted file used as it is");
    free(s);
    /* a file still counting rounds is measured whatever the queue */
    t_put(file, "1e+10 1e+10 3e+09 3e+10 1e+10 2\n");
    f.nmeasure = 0;
    f.crowded = true;
    f.busy = true;
    get(&f, false);
    T_CHECK(f.nmeasure == 1 && !strcmp(state(b, sizeof b), "3"), "round 2 of 4: measured '%s'", b);
}

/* Cold cache: the prebuilt set's constants, bounded, nothing measured;
 * a pin is used as given. */
static void cold_and_pinned(void)
{
    remove(file);
    t_put(prefile, "5e+08 3e+10 9e+09 8e+10 5e+10\n");
    Fake f = {.val = Q};
    CgMachine m = get(&f, true);
    T_CHECK(f.nmeasure == 0 && m.read_bw >= 0.25 * 9e9 && m.gemm == 8e10 && access(file, F_OK) != 0,
            "cold cache: the set's constants bounded (%g), nothing measured or written", m.read_bw);
    setenv("BRAID_CG_MACHINE", "1e9 1e9 9e9 8e10 5e10", 1);
    m = get(&f, true);
    T_CHECK(f.nmeasure == 0 && m.read_bw == 1e9, "pinned constants used as given");
    unsetenv("BRAID_CG_MACHINE");
    char q[128];
    snprintf(q, sizeof q, "%.6g %.6g %.6g %.6g %.6g\n", Q.read_bw, Q.write_bw, Q.flops, Q.gemm, Q.vecmat);
    t_put(prefile, q);
}

/* The prebuilt set's file stands in for a cold cache's measurement only
 * when it is final ("4 1", or "4 -4" after busy ones on a quiet queue)
 * or of 5 values; one settled busy ("4 0", as a set made under load
 * had), still settling or of rounds left is measured over. */
static void prebuilt_state(void)
{
    static const struct { const char *state; bool used; } cs[] = {
        {"4 1", true}, {"4 -4", true}, {"", true}, {"4 0", false}, {"4 -2", false}, {"4", false}, {"3", false},
    };
    const CgMachine P = mk(3e10, 2e10, 7e9, 6e10, 4e10);
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
        char text[160];
        snprintf(text, sizeof text, "%.6g %.6g %.6g %.6g %.6g %s\n", P.read_bw, P.write_bw, P.flops, P.gemm, P.vecmat,
                 cs[i].state);
        t_put(prefile, text);
        remove(file);
        Fake f = {.val = Q};
        CgMachine m = get(&f, true);
        T_CHECK(cs[i].used ? f.nmeasure == 0 && same5(&m, &P) : f.nmeasure == 1 && same5(&m, &Q),
                "prebuilt set's file '%s': %s (%d measured)", cs[i].state,
                cs[i].used ? "used" : "a cold cache measures for itself", f.nmeasure);
    }
    remove(file);
    char q[128];
    snprintf(q, sizeof q, "%.6g %.6g %.6g %.6g %.6g\n", Q.read_bw, Q.write_bw, Q.flops, Q.gemm, Q.vecmat);
    t_put(prefile, q);
    /* tools/kernels.sh carries into the set exactly the files used here
     * (the same states, one file each, one pruning of the folder) */
    char set[300], path[400], cmd[800];
    snprintf(set, sizeof set, "%s/set", dir);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", set);
    T_CHECK(system(cmd) == 0, "prune: folder");
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
        char text[160];
        snprintf(text, sizeof text, "%.6g %.6g %.6g %.6g %.6g %s\n", P.read_bw, P.write_bw, P.flops, P.gemm, P.vecmat,
                 cs[i].state);
        snprintf(path, sizeof path, "%s/machine-%zu.txt", set, i + 1);
        t_put(path, text);
    }
    snprintf(path, sizeof path, "%s/k.so", set);
    t_put(path, "x");
    snprintf(cmd, sizeof cmd, "'%s/tools/kernels.sh' --prune '%s'", BRAID_SOURCE_DIR, set);
    T_CHECK(system(cmd) == 0, "prune: kernels.sh --prune");
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
        snprintf(path, sizeof path, "%s/machine-%zu.txt", set, i + 1);
        bool kept = access(path, F_OK) == 0;
        T_CHECK(kept == cs[i].used, "kernels.sh: a machine file '%s' %s the set", cs[i].state,
                cs[i].used ? "goes into" : "stays out of");
    }
    snprintf(path, sizeof path, "%s/k.so", set);
    T_CHECK(access(path, F_OK) == 0, "kernels.sh: the kernels stay");
}

/* cg_machine_bound makes any constants plausible and leaves plausible
 * ones alone; raising only. */
static void bound_sweep(void)
{
    unsigned s = 12345;
    int bad = 0, moved = 0, lowered = 0;
    for (int i = 0; i < 4000; i++) {
        double v[5];
        for (int k = 0; k < 5; k++) {
            s = s * 1103515245u + 12345u;
            v[k] = pow(10, 8 + 4.0 * (double)(s >> 8) / (double)(1u << 24));
        }
        CgMachine m = mk(v[0], v[1], v[2], v[3], v[4]), o = m;
        bool was = cg_machine_plausible(&m, NULL);
        cg_machine_bound(&m);
        bad += !cg_machine_plausible(&m, NULL);
        moved += was && !same5(&m, &o);
        lowered += m.read_bw < o.read_bw || m.write_bw < o.write_bw || m.flops < o.flops || m.gemm < o.gemm ||
                   m.vecmat < o.vecmat;
    }
    T_CHECK(!bad && !moved && !lowered, "bound: %d implausible after, %d plausible moved, %d lowered", bad, moved,
            lowered);
    /* the sets the tests pin and this machine's measured ones are plausible */
    const CgMachine sets[] = {mk(2.3e10, 1.25e10, 1.0e10, 1.15e11, 4.6e10), mk(4e9, 3e9, 5e9, 6e10, 3e10),
                              mk(4.07684e+10, 3.07256e+10, 5.60535e+09, 6.16694e+10, 3.40088e+10),
                              mk(6.95613e+10, 5.31667e+10, 8.96528e+09, 8.42091e+10, 5.58054e+10),
                              mk(2e10, 1e10, 1e10, 5e10, 1e10)};
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
        T_CHECK(cg_machine_plausible(&sets[i], NULL), "set %zu plausible", i);
}

/* The real run-queue probe: with as many spinning processes as online
 * processors, the queue leaves no room for even one more thread. */
static void real_queue(void)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu <= 0 || access("/proc/stat", R_OK) != 0) return;
    if (ncpu > 256) ncpu = 256;
    pid_t kids[256];
    int fd[2];
    if (pipe(fd)) return;
    long started = 0;
    for (long i = 0; i < ncpu; i++) {
        pid_t p = fork();
        if (p == 0) {
            close(fd[0]);
            char c = 1;
            if (write(fd[1], &c, 1) != 1) _exit(1);
            for (volatile unsigned long x = 0;; x++) {}
        }
        if (p < 0) break;
        kids[started++] = p;
    }
    close(fd[1]);
    char c;
    long seen = 0;
    while (seen < started && read(fd[0], &c, 1) == 1) seen++;
    CgProbe p = cg_machine_probe();
    bool crowded = p.crowded(p.arg, 1);
    for (long i = 0; i < started; i++) kill(kids[i], SIGKILL);
    for (long i = 0; i < started; i++) waitpid(kids[i], NULL, 0);
    close(fd[0]);
    T_CHECK(started == ncpu && seen == started && crowded, "run queue with %ld spinners: crowded", started);
}

int main(void)
{
    unsetenv("BRAID_CG_MACHINE");
    br_set_threads(2);
    snprintf(dir, sizeof dir, "/tmp/braid-machine-XXXXXX");
    if (!mkdtemp(dir)) return 2;
    snprintf(pre, sizeof pre, "%s/pre", dir);
    snprintf(file, sizeof file, "%s/" MFILE, dir);
    snprintf(prefile, sizeof prefile, "%s/" MFILE, pre);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", pre);
    if (system(cmd)) return 2;
    char q[128];
    snprintf(q, sizeof q, "%.6g %.6g %.6g %.6g %.6g\n", Q.read_bw, Q.write_bw, Q.flops, Q.gemm, Q.vecmat);
    t_put(prefile, q);
    busy_rounds();
    busy_cap();
    implausible();
    planted();
    cold_and_pinned();
    prebuilt_state();
    bound_sweep();
    real_queue();
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) return 2;
    return t_done("test_machine");
}
