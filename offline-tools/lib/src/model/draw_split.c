/* The trapezoid rule for the cpuclock pacer's draws (see draw_split.h). */
#include <stdlib.h>
#include <string.h>

#include "draw_split.h"
#include "hash64.h"
#include "sprof/trace_format.h"

static uint32_t tid_hash(uint32_t tid)
{
    return sprof_index_hash(sprof_mix64(tid));
}

static sprof_draw_last *find(const sprof_draw_split *d, uint32_t tid)
{
    uint32_t h = tid_hash(tid), i;
    for (size_t pos = sprof_index_first(&d->index, h); sprof_index_next(&d->index, &pos, h, &i);)
        if (d->v[i].tid == tid)
            return &d->v[i];
    return NULL;
}

uint64_t sprof_draw_split_give(const sprof_draw_split *d, uint32_t tid, uint32_t flags, uint64_t weight_ns,
                               uint32_t *to, size_t *to_tl1)
{
    if ((flags & (SPROF_SAMPLE_DRAW | SPROF_SAMPLE_DRAW_PREV)) != (SPROF_SAMPLE_DRAW | SPROF_SAMPLE_DRAW_PREV))
        return 0;
    const sprof_draw_last *e = find(d, tid);
    if (!e || !e->raw1)
        return 0;
    *to = e->raw1 - 1;
    *to_tl1 = e->tl1;
    return weight_ns / 2;
}

int sprof_draw_split_note(sprof_draw_split *d, uint32_t tid, uint32_t flags, int kept, uint32_t raw_index,
                          size_t tl1)
{
    if (!(flags & SPROF_SAMPLE_DRAW))
        return 0;
    sprof_draw_last *e = find(d, tid);
    if (!e) {
        if (!kept)
            return 0;
        if (d->n == d->cap) {
            size_t cap = d->cap ? d->cap * 2 : 64;
            sprof_draw_last *v = realloc(d->v, cap * sizeof *v);
            if (!v)
                return -1;
            d->v = v;
            d->cap = cap;
        }
        if (sprof_index_add(&d->index, tid_hash(tid), (uint32_t)d->n) != 0)
            return -1;
        e = &d->v[d->n++];
        e->tid = tid;
    }
    /* a draw left out (a time window) breaks the chain: the next one's
     * half is not an earlier draw's */
    e->raw1 = kept ? raw_index + 1 : 0;
    e->tl1 = kept ? tl1 : 0;
    return 0;
}

void sprof_draw_split_free(sprof_draw_split *d)
{
    free(d->v);
    sprof_index_free(&d->index);
    memset(d, 0, sizeof *d);
}
