/* arena.c: bump allocation in a chain of chunks. */
#include "arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_CHUNK 65536
#define ARENA_ALIGN 16

typedef struct Chunk {
    struct Chunk *next;
    size_t size, used;         /* bytes of data[] */
    _Alignas(16) unsigned char data[];
} Chunk;

struct Arena {
    Chunk *head;               /* the chunk being filled */
    Chunk *big;                /* chunks of single large allocations */
    size_t total;
};

Arena *arena_new(void)
{
    return calloc(1, sizeof(Arena));
}

static void free_chain(Chunk *c)
{
    while (c) {
        Chunk *n = c->next;
        free(c);
        c = n;
    }
}

void arena_free(Arena *a)
{
    if (!a) return;
    free_chain(a->head);
    free_chain(a->big);
    free(a);
}

/* A chunk with room for size data bytes (not zeroed: arena_alloc zeroes
 * what it hands out). */
static Chunk *chunk_new(size_t size)
{
    if (size > SIZE_MAX - sizeof(Chunk)) return NULL;
    Chunk *c = malloc(sizeof(Chunk) + size);
    if (!c) return NULL;
    c->next = NULL;
    c->size = size;
    c->used = 0;
    return c;
}

void *arena_alloc(Arena *a, size_t n)
{
    if (!a) return NULL;
    if (n > SIZE_MAX - ARENA_ALIGN) return NULL;
    size_t need = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (need == 0) need = ARENA_ALIGN;
    if (need > ARENA_CHUNK / 4) {
        /* large: its own chunk, kept on a separate list so the current
         * small-object chunk keeps filling */
        Chunk *c = chunk_new(need);
        if (!c) return NULL;
        c->used = need;
        c->next = a->big;
        a->big = c;
        a->total += need;
        memset(c->data, 0, need);
        return c->data;
    }
    Chunk *c = a->head;
    if (!c || c->size - c->used < need) {
        c = chunk_new(ARENA_CHUNK);
        if (!c) return NULL;
        c->next = a->head;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += need;
    a->total += need;
    memset(p, 0, need);
    return p;
}

void *arena_memdup(Arena *a, const void *p, size_t n)
{
    void *d = arena_alloc(a, n);
    if (d && n) memcpy(d, p, n);
    return d;
}

char *arena_strndup(Arena *a, const char *s, size_t n)
{
    if (!s) return NULL;
    size_t len = strnlen(s, n);
    char *d = arena_alloc(a, len + 1);
    if (d) memcpy(d, s, len);
    return d;
}

char *arena_strdup(Arena *a, const char *s)
{
    if (!s) return NULL;
    return arena_strndup(a, s, strlen(s));
}

size_t arena_used(const Arena *a)
{
    return a ? a->total : 0;
}
