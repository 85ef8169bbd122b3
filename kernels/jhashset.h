/* jhashset.h: the iteration order of Java's HashSet<Double> (and of a
 * HashMap<String, ...>'s keys: SystemDS's recode metadata), which
 * SystemDS's unique() returns its values in (LibMatrixSketch): a
 * simulation of java.util.HashMap's table (16 buckets at first, doubled
 * past 3/4 full, buckets split in order), its buckets' lists (new keys at
 * the end) and its red-black tree buckets (8 or more keys in a bucket of a
 * table of 64 or more; a smaller table doubles instead), whose iteration
 * order is the tree's root first. Keys are Double's: equal when their
 * bits are (all NaNs one key, -0 and 0 two). */
#ifndef BRAID_JHASHSET_H
#define BRAID_JHASHSET_H

#include <stdbool.h>
#include <stdint.h>

typedef struct JNode JNode;

typedef struct JHashSet {
    JNode *nodes;     /* every key added since the last clear, in order */
    int64_t n, ncap;
    int64_t *tab;     /* bucket heads (node index, -1 empty) */
    int64_t cap;      /* buckets: 0 before the first add, kept by clear */
    int64_t thr;      /* resize above this many keys */
    int64_t init;     /* the first table's buckets (0: 16) */
} JHashSet;

void jhs_init(JHashSet *s);
/* As new HashMap<>(c): the first table has tableSizeFor(c) buckets (the
 * least power of 2 >= c, 1 for c = 0), grown by the same rule. */
void jhs_init_cap(JHashSet *s, int64_t c);
void jhs_free(JHashSet *s);
/* Removes every key; the table keeps its size, as HashMap.clear does. */
void jhs_clear(JHashSet *s);
/* Adds x; returns 1 if new, 0 if present, -1 when out of memory. */
int jhs_add(JHashSet *s, double x);
/* Number of keys. */
static inline int64_t jhs_size(const JHashSet *s) { return s->n; }
/* The keys in the set's iteration order into out (jhs_size of them). */
void jhs_values(const JHashSet *s, double *out);
/* A HashSet<String> (or HashMap<String, ...>'s keys) instead: adds
 * string str (UTF-8; kept by pointer, so it must outlive the set; hashed
 * and compared as Java's String, by UTF-16 code units). A set holds
 * either doubles or strings. Returns as jhs_add. */
int jhs_add_str(JHashSet *s, const char *str);
/* The keys' insertion ranks (0 = the first key added) in the set's
 * iteration order into out (jhs_size of them). */
void jhs_order(const JHashSet *s, int64_t *out);

#endif
