/* profspec.c: the text of a device profile (sysds.gpu.profile,
 * BRAID_GPU_PROFILE; profile.c uses it). Apart from profile.c because the
 * configuration reader (runtime/config.c) checks the key with it and is
 * built without the OpenCL backend by the fuzzers (fuzz/run.sh). */
#include <math.h>
#include <stdio.h>

#include "gpu.h"

/* "launch_s bw xfer_bw [sync_s copy_bw down_bw]": 3 or 6 positive finite
 * numbers; with 3, the finish latency, copy and download rates are the
 * launch latency, read and upload rates. */
bool gpu_profile_parse(const char *spec, GpuProfile *p)
{
    GpuProfile q = {0};
    char tail;
    int k = sscanf(spec, "%lf %lf %lf %lf %lf %lf %c", &q.launch_s, &q.bw, &q.xfer_bw, &q.sync_s, &q.copy_bw,
                   &q.down_bw, &tail);
    if (k != 3 && k != 6) return false;
    if (k == 3) q.sync_s = q.launch_s, q.copy_bw = q.bw, q.down_bw = q.xfer_bw;
    if (!(q.launch_s > 0 && q.bw > 0 && q.xfer_bw > 0 && q.sync_s > 0 && q.copy_bw > 0 && q.down_bw > 0) ||
        !isfinite(q.launch_s + q.bw + q.xfer_bw + q.sync_s + q.copy_bw + q.down_bw))
        return false;
    *p = q;
    return true;
}
