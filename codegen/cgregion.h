/* cgregion.h: a stitched Cell plan as one stitched region (cgregion.c). */
#ifndef BRAID_CGREGION_H
#define BRAID_CGREGION_H

#include "cgint.h"
#include "../gpu/stitch.h"

/* A stitched Cell plan as one stitched region (cgregion.c; docs/gpu.md,
 * "Stitched codegen plans in one launch"): a call's bound inputs (m,
 * sc and pre by plan input, as exec.c binds them) and the region they
 * make: r over in[0..r.nin) (in[0] the stitched matrix X) with scalar
 * arguments sc. cg_cell_region: false when the plan or the call does
 * not fit one DIR_COL region (a template, variant or node the region
 * cannot hold, stitched inputs over two matrices, a sparse or
 * compressed matrix, a slice): the caller runs the plan as it is. */
typedef struct CgRegionCall {
    const MB *const *m;
    const double *sc;
    const SpPre *pre;
} CgRegionCall;
typedef struct CgRegion {
    StitchRegion r;
    const MB *in[ST_MAX_IN];
    double sc[ST_MAX_SC];
} CgRegion;
bool cg_cell_region(const CPlan *p, const CgRegionCall *c, CgRegion *g);
/* The stitched inputs' vectors of any plan (Row, Cell, MAgg) as one
 * DIR_COL region over their matrix X, for the operator's own launch
 * (gpu_spoof_row/cell's GpuStitchIn): the region's outputs are the
 * distinct vectors, slot[k] (by plan input, p->nin <= 64) the output
 * bound in place of input k (-1 for the others). The outputs' count, or
 * 0 when the call does not fit: stitched inputs over two matrices, a
 * sparse or compressed matrix input, a stitched slice, more than
 * ST_MAX_OUT distinct vectors, an expression the region cannot hold. */
int cg_pre_region(const CPlan *p, const CgRegionCall *c, CgRegion *g, int *slot);

#endif
