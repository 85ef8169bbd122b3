/* config.h: braid's settings, read from a SystemDS-style configuration
 * file: <root><sysds.key>value</sysds.key>...</root>. Keys braid does not
 * implement are ignored with one warning. */
#ifndef BRAID_CONFIG_H
#define BRAID_CONFIG_H

#include "../base/base.h"

typedef struct BraidConfig {
    int optlevel;               /* sysds.optlevel: 0 rewrites off, 2 default */
    bool codegen;               /* sysds.codegen.enabled */
    char codegen_optimizer[32]; /* sysds.codegen.optimizer */
    bool plancache;             /* sysds.codegen.plancache */
    bool cg_async;              /* sysds.codegen.async (braid): compile in the background */
    int threads;                /* sysds.cp.parallel.ops / sysds.num.threads: 0 = all */
    char localtmpdir[512];      /* sysds.localtmpdir */
    int cla;                    /* sysds.compressed.linalg: 0 false, 1 true, 2 auto */
    double mem_budget;          /* sysds.local.memory.budget (braid): bytes
                                   of the local budget; 0: 70% of RAM */
    int64_t blocksize;          /* sysds.defaultblocksize: rows per block
                                   of distributed matrices */
    int gpu;                    /* sysds.gpu (braid): 0 false, 1 true (per
                                   instruction by cost), 2 force (docs/gpu.md) */
    int gpu_device;             /* sysds.gpu.device: index, -1 first GPU */
    bool gpu_nostitch;          /* sysds.gpu.stitch=false: no stitched
                                   regions (codegen/stitchpass.c) */
    bool gpu_async;             /* sysds.gpu.async: stitched kernels
                                   compile in the background (gpu/stitch.c) */
    double gpu_budget;          /* sysds.gpu.memory.budget: pool bytes, 0 half
                                   the device's memory */
    char gpu_profile[256];      /* sysds.gpu.profile (braid): the device
                                   profile, "" measured (gpu.h) */
    bool piggyback;             /* sysds.dist.piggyback (braid): reduce
                                   operators over shared partitions as
                                   one job (default true) */
    double net_rate;            /* sysds.dist.netrate (braid): bytes/s
                                   between ranks for the cost model; 0
                                   (default): measured at startup */
    int amulet_fuse;            /* sysds.amulet.fuse (braid): the AMULET
                                   template per run, -1 (default) as
                                   BRAID_AMULET_FUSE says (else cost), 0
                                   off, 1 cost, 2 force (docs/amulet.md) */
} BraidConfig;

void config_defaults(BraidConfig *c);
/* Reads path into c (keys not given keep their values). Returns 0 or an
 * error naming the file and line. Unknown keys: one warning on stderr. */
int config_read(const char *path, BraidConfig *c, BrErr *e);

#endif
