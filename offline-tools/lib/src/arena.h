/* A bump allocator of blocks that never move: many small arrays that live
 * as long as their owner (a profile's stack frames, copied sample bodies)
 * without a malloc header and a free each. Internal to offline-tools/lib. */
#ifndef SPROF_ARENA_H
#define SPROF_ARENA_H

#include <stddef.h>

typedef struct sprof_arena_block sprof_arena_block;
typedef struct sprof_arena {
    sprof_arena_block *blocks;
} sprof_arena;

/* `bytes` bytes, 8-aligned; NULL out of memory. */
void *sprof_arena_alloc(sprof_arena *a, size_t bytes);
void sprof_arena_free(sprof_arena *a);

#endif
