/* frame.c: frames (tier 2): construction, casts, transforms. */
#include "interp.h"

int rt_builtin_frame(Rt *rt, Frame *f, const Hop *h, Value *args, Value *out, BrErr *e)
{
    (void)rt; (void)f; (void)h; (void)args; (void)out; (void)e;
    return RT_NOT_MINE;
}
