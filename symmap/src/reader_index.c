/* Address bucket index over a sorted, disjoint range table (function
 * ranges, CFI rows), built at open from validated data. It narrows the
 * binary search of a lookup to the few entries of one bucket, so a lookup
 * touches one or two cache lines of the table instead of ~log2(n). */
#include <stdlib.h>

#include "reader_internal.h"

static uint64_t entry_lo(const rtable *t, size_t i)
{
    return *(const uint64_t *)(const void *)(t->p + i * t->stride);
}

static uint64_t entry_hi(const rtable *t, size_t i)
{
    return *(const uint64_t *)(const void *)(t->p + i * t->stride + 8);
}

int addr_index_build(addr_index *ix, const rtable *t)
{
    ix->first = NULL;
    ix->nbuckets = 0;
    if (t->n == 0)
        return 0;
    ix->base = entry_lo(t, 0);
    uint64_t span = entry_hi(t, t->n - 1) - ix->base; /* > 0: rows are non-empty and sorted */
    unsigned shift = 0;
    while (shift < 63 && ((span - 1) >> shift) >= t->n)
        shift++;
    ix->shift = shift;
    size_t nb = (size_t)((span - 1) >> shift) + 1;
    ix->first = malloc((nb + 1) * sizeof(*ix->first));
    if (!ix->first)
        return -1;
    size_t j = 0;
    for (size_t b = 0; b < nb; b++) {
        uint64_t start = ix->base + ((uint64_t)b << shift);
        while (j < t->n && entry_hi(t, j) <= start)
            j++;
        ix->first[b] = (uint32_t)j;
    }
    ix->first[nb] = (uint32_t)t->n;
    ix->nbuckets = nb;
    ix->span = span;
    return 0;
}

void addr_index_free(addr_index *ix)
{
    free(ix->first);
    ix->first = NULL;
}

void addr_index_range(const addr_index *ix, const rtable *t, uint64_t addr, size_t *first, size_t *n)
{
    *first = 0;
    *n = 0;
    if (!ix->first || addr < ix->base || addr - ix->base >= ix->span)
        return;
    size_t b = (size_t)((addr - ix->base) >> ix->shift);
    size_t lo = ix->first[b];
    size_t hi = (size_t)ix->first[b + 1] + 1; /* the entry straddling the next bucket's start */
    if (hi > t->n)
        hi = t->n;
    *first = lo;
    *n = hi > lo ? hi - lo : 0;
}
