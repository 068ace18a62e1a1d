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

sprof_draw_last *sprof_draw_split_thread(sprof_draw_split *d, uint32_t tid, int make)
{
    uint32_t h = tid_hash(tid), i;
    for (size_t pos = sprof_index_first(&d->index, h); sprof_index_next(&d->index, &pos, h, &i);)
        if (d->v[i].tid == tid)
            return &d->v[i];
    if (!make)
        return NULL;
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 64;
        sprof_draw_last *v = realloc(d->v, cap * sizeof *v);
        if (!v)
            return NULL;
        d->v = v;
        d->cap = cap;
    }
    if (sprof_index_add(&d->index, h, (uint32_t)d->n) != 0)
        return NULL;
    d->v[d->n] = (sprof_draw_last){ .tid = tid };
    return &d->v[d->n++];
}

uint64_t sprof_draw_split_give(const sprof_draw_last *e, uint32_t flags, uint64_t weight_ns)
{
    return e && (flags & SPROF_SAMPLE_DRAW_PREV) && e->raw1 ? weight_ns / 2 : 0;
}

void sprof_draw_split_note(sprof_draw_last *e, int kept, uint32_t raw_index, size_t tl1)
{
    e->raw1 = kept ? raw_index + 1 : 0;
    e->tl1 = kept ? tl1 : 0;
}

void sprof_draw_split_free(sprof_draw_split *d)
{
    free(d->v);
    sprof_index_free(&d->index);
    memset(d, 0, sizeof *d);
}
