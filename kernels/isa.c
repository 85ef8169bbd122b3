/* isa.c: the SIMD level of the leaf kernels (see leaf.h): cpuid once,
 * capped by BRAID_ISA or k_isa_set, and the tables of each level. */
#include "leaf.h"

#include <stdlib.h>
#include <string.h>

static const char *const isa_names[K_ISA__COUNT] = {"generic", "avx2", "avx512"};

const char *k_isa_name(KIsa isa)
{
    return isa >= 0 && isa < K_ISA__COUNT ? isa_names[isa] : "?";
}

KIsa k_isa_cpu(void)
{
#if defined(__x86_64__)
    /* the ISA levels test every feature the -march levels of the leaf
     * copies may use, and the OS's saving of the vector registers */
    __builtin_cpu_init();
    if (__builtin_cpu_supports("x86-64-v4")) return K_ISA_AVX512;
    if (__builtin_cpu_supports("x86-64-v3")) return K_ISA_AVX2;
#endif
    return K_ISA_GENERIC;
}

/* the level in use; -1: not yet decided (process-wide, like the thread
 * count: a run-time setting, not compilation state) */
static int isa_level = -1;

KIsa k_isa_set(KIsa isa)
{
    KIsa cpu = k_isa_cpu();
    KIsa l = isa < K_ISA_GENERIC ? K_ISA_GENERIC : isa > cpu ? cpu : isa;
    __atomic_store_n(&isa_level, (int)l, __ATOMIC_RELAXED);
    return l;
}

KIsa k_isa(void)
{
    int l = __atomic_load_n(&isa_level, __ATOMIC_RELAXED);
    if (l >= 0) return (KIsa)l;
    KIsa want = K_ISA__COUNT - 1;
    const char *v = getenv("BRAID_ISA");
    for (int i = 0; v && *v && i < K_ISA__COUNT; i++)
        if (!strcmp(v, isa_names[i])) want = (KIsa)i;
    /* two threads deciding at once decide the same */
    return k_isa_set(want);
}

/* The tables of each level; the SIMD copies exist on x86-64 only (a
 * higher level than the target has gets its highest). */
static const KLeaves leaves[] = {
    {.ew = &k_ew_leaf_generic, .agg = &k_agg_leaf_generic, .mm = &k_mm_leaf_generic,
     .mmchain = &k_mmchain_leaf_generic, .reorg = &k_reorg_leaf_generic, .spoof = &k_spoof_leaf_generic,
     .probe = &k_probe_leaf_generic, .cla = &k_cla_leaf_generic, .sp = &k_sp_leaf_generic},
#if defined(__x86_64__)
    {.ew = &k_ew_leaf_avx2, .agg = &k_agg_leaf_avx2, .mm = &k_mm_leaf_avx2, .mmchain = &k_mmchain_leaf_avx2,
     .reorg = &k_reorg_leaf_avx2, .spoof = &k_spoof_leaf_avx2, .probe = &k_probe_leaf_avx2,
     .cla = &k_cla_leaf_avx2, .sp = &k_sp_leaf_avx2},
    {.ew = &k_ew_leaf_avx512, .agg = &k_agg_leaf_avx512, .mm = &k_mm_leaf_avx512,
     .mmchain = &k_mmchain_leaf_avx512, .reorg = &k_reorg_leaf_avx512, .spoof = &k_spoof_leaf_avx512,
     .probe = &k_probe_leaf_avx512, .cla = &k_cla_leaf_avx512, .sp = &k_sp_leaf_avx512},
#endif
};
#define NLEVELS ((int)(sizeof leaves / sizeof *leaves))

const KLeaves *k_leaves(KIsa isa)
{
    int l = (int)isa;
    return &leaves[l < 0 ? 0 : l >= NLEVELS ? NLEVELS - 1 : l];
}
