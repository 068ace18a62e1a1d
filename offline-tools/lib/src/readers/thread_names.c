/* Thread names by tid (see thread_names.h). */
#include <stdlib.h>
#include <string.h>

#include "hash64.h"
#include "thread_names.h"

static sprof_thread_name *find(const sprof_thread_names *t, uint32_t tid, uint32_t h)
{
    uint32_t i;
    for (size_t pos = sprof_index_first(&t->index, h); sprof_index_next(&t->index, &pos, h, &i);)
        if (t->v[i].tid == tid)
            return &t->v[i];
    return NULL;
}

static uint32_t tid_hash(uint32_t tid)
{
    return sprof_index_hash(sprof_mix64(tid));
}

int sprof_thread_names_set(sprof_thread_names *t, uint32_t tid, const char *name)
{
    uint32_t h = tid_hash(tid);
    sprof_thread_name *e = find(t, tid, h);
    if (e) {
        e->name = name;
        return 0;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        sprof_thread_name *v = realloc(t->v, cap * sizeof *v);
        if (!v)
            return -1;
        t->v = v;
        t->cap = cap;
    }
    if (sprof_index_add(&t->index, h, (uint32_t)t->n) != 0)
        return -1;
    t->v[t->n++] = (sprof_thread_name){ tid, name };
    return 0;
}

const char *sprof_thread_names_get(const sprof_thread_names *t, uint32_t tid)
{
    const sprof_thread_name *e = find(t, tid, tid_hash(tid));
    return e ? e->name : NULL;
}

void sprof_thread_names_free(sprof_thread_names *t)
{
    free(t->v);
    sprof_index_free(&t->index);
    memset(t, 0, sizeof *t);
}
