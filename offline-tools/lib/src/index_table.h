/* An open-addressing hash index: 32 bits of a key's hash and the key's
 * position in the caller's own array, 8 bytes a slot. The callers keep
 * their entries in flat arrays (no per-entry malloc, no 56-byte uthash
 * handle), so a million distinct stacks cost their data and 16 bytes
 * here. Keys are compared by the caller:
 *
 *   uint32_t h = sprof_index_hash(hash64), i;
 *   for (size_t pos = sprof_index_first(t, h); sprof_index_next(t, &pos, h, &i);)
 *       if (same(array[i], key)) return i;
 *   ... sprof_index_add(t, h, n);
 * Internal to offline-tools/lib. */
#ifndef SPROF_INDEX_TABLE_H
#define SPROF_INDEX_TABLE_H

#include <stddef.h>
#include <stdint.h>

typedef struct sprof_index_table {
    uint64_t *slots; /* hash << 32 | (position + 1); 0 = empty */
    size_t mask;     /* slots - 1 (a power of two), 0 before the first add */
    size_t used;
} sprof_index_table;

static inline uint32_t sprof_index_hash(uint64_t h)
{
    return (uint32_t)(h >> 32) ^ (uint32_t)h;
}

static inline size_t sprof_index_first(const sprof_index_table *t, uint32_t h)
{
    return h & t->mask;
}

/* The next position whose slot holds hash h, from *pos on; 0 at an empty slot. */
static inline int sprof_index_next(const sprof_index_table *t, size_t *pos, uint32_t h, uint32_t *index)
{
    if (!t->slots)
        return 0;
    for (;;) {
        uint64_t s = t->slots[*pos];
        *pos = (*pos + 1) & t->mask;
        if (!s)
            return 0;
        if ((uint32_t)(s >> 32) == h) {
            *index = (uint32_t)s - 1;
            return 1;
        }
    }
}

/* Add position `index` under hash h (the caller checked it is new). 0, or -1 out of memory. */
int sprof_index_add(sprof_index_table *t, uint32_t h, uint32_t index);
void sprof_index_free(sprof_index_table *t);

#endif
