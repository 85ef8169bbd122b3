/* arena.h: a bump allocator. Everything allocated from an arena lives until
 * arena_free; there is no per-object free. Used for ASTs and other
 * compile-time data that dies all at once. Not thread-safe. */
#ifndef BRAID_ARENA_H
#define BRAID_ARENA_H

#include <stddef.h>

typedef struct Arena Arena;

/* New empty arena (NULL when out of memory); free it with arena_free. */
Arena *arena_new(void);
/* Frees the arena and everything allocated from it (NULL is fine). */
void arena_free(Arena *a);
/* n zeroed bytes, 16-byte aligned; NULL when out of memory. n = 0 gives a
 * valid unique pointer. */
void *arena_alloc(Arena *a, size_t n);
/* Arena copies of n bytes of p / of a string / of its first n chars
 * (always NUL-terminated). NULL when out of memory (or s is NULL). */
void *arena_memdup(Arena *a, const void *p, size_t n);
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
/* Bytes handed out so far (for statistics and tests). */
size_t arena_used(const Arena *a);

#endif
