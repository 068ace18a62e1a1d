/* Block bump allocator (see arena.h). */
#include <stdint.h>
#include <stdlib.h>

#include "arena.h"

#define BLOCK_BYTES ((size_t)1 << 20)

struct sprof_arena_block {
    sprof_arena_block *next;
    size_t used, size;
    uint64_t data[]; /* 8-aligned */
};

void *sprof_arena_alloc(sprof_arena *a, size_t bytes)
{
    bytes = (bytes + 7) & ~(size_t)7;
    sprof_arena_block *b = a->blocks;
    if (!b || b->size - b->used < bytes) {
        size_t size = bytes > BLOCK_BYTES ? bytes : BLOCK_BYTES;
        b = malloc(sizeof *b + size);
        if (!b)
            return NULL;
        b->used = 0;
        b->size = size;
        /* an oversized block goes behind the current one, which keeps its room */
        if (bytes > BLOCK_BYTES && a->blocks) {
            b->next = a->blocks->next;
            a->blocks->next = b;
        } else {
            b->next = a->blocks;
            a->blocks = b;
        }
    }
    void *p = (char *)b->data + b->used;
    b->used += bytes;
    return p;
}

void sprof_arena_free(sprof_arena *a)
{
    while (a->blocks) {
        sprof_arena_block *next = a->blocks->next;
        free(a->blocks);
        a->blocks = next;
    }
}
