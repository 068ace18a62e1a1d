/* Open-addressing hash index (see index_table.h): linear probing, grown
 * to twice the slots at 3/4 load; the stored 32 hash bits place an entry
 * again on growth, so the caller's keys are never re-hashed. */
#include <stdlib.h>

#include "index_table.h"

static void put(uint64_t *slots, size_t mask, uint64_t s)
{
    size_t pos = (uint32_t)(s >> 32) & mask;
    while (slots[pos])
        pos = (pos + 1) & mask;
    slots[pos] = s;
}

static int grow(sprof_index_table *t)
{
    size_t n = t->slots ? (t->mask + 1) * 2 : 1024;
    if (n - 1 > UINT32_MAX)
        return -1; /* positions are found from 32 hash bits */
    uint64_t *slots = calloc(n, sizeof *slots);
    if (!slots)
        return -1;
    if (t->slots)
        for (size_t i = 0; i <= t->mask; i++)
            if (t->slots[i])
                put(slots, n - 1, t->slots[i]);
    free(t->slots);
    t->slots = slots;
    t->mask = n - 1;
    return 0;
}

int sprof_index_add(sprof_index_table *t, uint32_t h, uint32_t index)
{
    if (index == UINT32_MAX)
        return -1;
    if ((!t->slots || (t->used + 1) * 4 > (t->mask + 1) * 3) && grow(t) != 0)
        return -1;
    put(t->slots, t->mask, (uint64_t)h << 32 | ((uint64_t)index + 1));
    t->used++;
    return 0;
}

void sprof_index_free(sprof_index_table *t)
{
    free(t->slots);
    t->slots = NULL;
    t->mask = t->used = 0;
}
