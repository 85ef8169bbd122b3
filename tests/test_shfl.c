/* test_shfl.c: the stitched kernels' reductions by warp shuffles
 * (gpu_int.h GPU_CL_SHFL, gpu/stitch.c gen_body), in their emulation
 * (BRAID_GPU_SHFL=emu: the butterflies exchange through local memory,
 * so any OpenCL device runs the generated code): schedules of segments
 * within and across warps for layernorm and a region of min and max
 * reductions (rows and columns) over NaN, Inf and signed zeros against
 * the CPU reference, segments of 7 to 1001 cells; and the unfused-order
 * schedule to the bit against the per-operator kernels, whose trees in
 * local memory the butterflies must reproduce (lane l ends with the
 * tree's value at l mod w, each pair combining the lower lane's value
 * with the upper's). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "gpu/stitch.h"

/* cells in (-4, 4) from a scrambled index; when odd, also NaN, +-Inf
 * and signed zeros at about 1%, 1% and 8% of the cells */
static MB *data(int64_t r, int64_t c, bool odd)
{
    BrErr e = {0};
    MB *m = mb_dense(r, c, &e);
    for (int64_t i = 0; i < r * c; i++) {
        uint64_t h = (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ULL;
        h ^= h >> 29;
        int k = (int)(h % 100);
        m->d[i] = 4 * sin((double)(h >> 11) * 1e-9);
        if (odd && k == 0) m->d[i] = NAN;
        else if (odd && k == 1) m->d[i] = h & 1 ? INFINITY : -INFINITY;
        else if (odd && k < 10) m->d[i] = h & 1 ? 0.0 : -0.0;
    }
    mb_recount_nnz(m);
    return m;
}

/* (x - rowMaxs) * rowMins: the NaN-sticky min and max, whose steps are
 * not symmetric in the signed zeros */
static void minmax_region(StitchRegion *r, AggDir dir)
{
    memset(r, 0, sizeof *r);
    r->dir = dir;
    int x = st_x(r), mx = st_red(r, OP_AMAX, x), mn = st_red(r, OP_AMIN, x);
    st_bin(r, OP_MULT, st_bin(r, OP_MINUS, x, mx), mn);
}

static bool same_bits(MB *a, MB *b)
{
    BrErr e = {0};
    if (!a || !b || mb_host(a, &e) || mb_host(b, &e) || a->rows != b->rows || a->cols != b->cols) return false;
    MB *da = mb_to_dense(a, &e), *db = mb_to_dense(b, &e);
    bool eq = da && db && !memcmp(da->d, db->d, (size_t)(a->rows * a->cols) * sizeof(double));
    mb_release(da), mb_release(db);
    return eq;
}

/* Schedules of segments within a warp (8 and 32 lanes, several segments
 * a work-group) and across warps (64, 128, 256 lanes); PoCL compiles a
 * kernel once per work-group size, and the emulation's barriers make
 * each compile several seconds, so the sizes are few */
static void check(const StitchRegion *r, const char *name, bool odd)
{
    static const int64_t shapes[][2] = {{37, 1001}, {5, 64}, {9, 100}, {130, 7}};
    static const StitchSched sch[] = {{.scheme = ST_SUBGROUP, .lanes = 8, .wg = 64},
                                      {.scheme = ST_SUBGROUP, .lanes = 32, .wg = 64},
                                      {.scheme = ST_WORKGROUP, .lanes = 64, .wg = 64},
                                      {.scheme = ST_WORKGROUP, .lanes = 128, .wg = 128},
                                      {.scheme = ST_WORKGROUP, .lanes = 256, .wg = 256}};
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
        int64_t rows = shapes[sh][0], cols = shapes[sh][1];
        BrErr e = {0};
        MB *x = data(rows, cols, odd);
        MB *want = stitch_reference(r, x, &e);
        T_CHECK(want != NULL, "%s: reference: %s", name, e.msg);
        for (size_t k = 0; k < sizeof sch / sizeof sch[0]; k++) {
            MB *got = stitch_run(r, x, &sch[k], &e);
            T_CHECK(got != NULL, "%s %s/%d: %s", name, stitch_scheme_name(sch[k].scheme), sch[k].lanes, e.msg);
            T_MB_EQ(got, want, 1e-8, "%s %lldx%lld %s lanes %d wg %d", name, (long long)rows, (long long)cols,
                    stitch_scheme_name(sch[k].scheme), sch[k].lanes, sch[k].wg);
            mb_release(got);
        }
        /* the order of the unfused plan (rows: a work-group tree of the
         * largest power of two up to 256 lanes within the row) */
        StitchSched u = stitch_unfused_order(r, rows, cols);
        const MB *in[1] = {x};
        MB *ops[ST_MAX_OUT] = {0};
        MB *got = stitch_run(r, x, &u, &e);
        int rc = stitch_unfused_gpu_all(r, in, NULL, ops, &e);
        T_CHECK(rc == 0 && ops[0], "%s: the per-operator plan: %s", name, e.msg);
        T_CHECK(same_bits(got, ops[0]), "%s %lldx%lld: %s/%d the per-operator plan's bits", name, (long long)rows,
                (long long)cols, stitch_scheme_name(u.scheme), u.lanes);
        mb_release(got), mb_release(ops[0]), mb_release(want), mb_release(x);
    }
}

int main(void)
{
    setenv("BRAID_GPU_PROFILE", "10e-6 500e9 12e9", 0);
    setenv("BRAID_GPU_SHFL", "emu", 1);
    gpu_configure(GPU_FORCE, -1, 0);
    BrErr e = {0};
    int rc = gpu_init(&e);
    T_CHECK(rc == 0, "an OpenCL device: %s", e.msg);
    if (rc) return t_done("test_shfl");
    T_CHECK(gpu_info()->warp_shfl == 2, "the emulated shuffles are on (%d)", gpu_info()->warp_shfl);
    StitchRegion r;
    st_layernorm(&r, 1e-5);
    StitchSched s = {.scheme = ST_WORKGROUP, .lanes = 128, .wg = 128};
    char *src = stitch_source(&r, &s);
    T_CHECK(src && strstr(src, "ST_SHFL(v") && strstr(src, "#ifdef ST_NV") && strstr(src, "shfl.sync.bfly.b32"),
            "the generated source has the butterflies");
    free(src);
    check(&r, "layernorm", false);
    minmax_region(&r, DIR_ROW);
    check(&r, "min/max rows", true);
    minmax_region(&r, DIR_COL);
    check(&r, "min/max columns", true);
    return t_done("test_shfl");
}
