/* builtins_stats.c: tier-2 statistical builtins (distribution functions,
 * inter-quantile statistics, roll, countDistinct). */
#include "interp.h"

int rt_builtin_stats(Rt *rt, Frame *f, const Hop *h, Value *args, Value *out, BrErr *e)
{
    (void)rt; (void)f; (void)h; (void)args; (void)out; (void)e;
    return RT_NOT_MINE;
}
