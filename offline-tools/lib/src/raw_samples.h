/* First aggregation stage: identical raw samples (pc, sp, fp, the frame
 * pointer chain with its record offsets, the stack candidates, flags, and
 * the tid when per thread) are merged by a 64-bit hash + memcmp before any
 * unwinding or symbolization, accumulating count and weight. Memory grows
 * with distinct raw stacks, not samples. Internal to offline-tools/lib. */
#ifndef SPROF_RAW_SAMPLES_H
#define SPROF_RAW_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include <uthash.h>

#include "sprof/trace_reader.h"

typedef struct sprof_raw_sample {
    UT_hash_handle hh;
    uint64_t count;
    uint64_t weight_ns;
    size_t keylen;
    uint64_t key[]; /* see raw_samples.c */
} sprof_raw_sample;

/* A direct-mapped cache of recent hits in front of the uthash table: the
 * 64-bit hash sits in a compact array, so a repeated stack costs one
 * memcmp instead of a walk over scattered bucket entries. */
#define SPROF_RAW_FRONT_SLOTS 65536
typedef struct sprof_raw_front {
    uint64_t hash;
    sprof_raw_sample *entry;
} sprof_raw_front;

typedef struct sprof_raw_table {
    sprof_raw_sample *table;
    sprof_raw_front *front; /* SPROF_RAW_FRONT_SLOTS, allocated on first add */
    uint64_t *scratch;
    size_t scratch_words;
    size_t distinct;
} sprof_raw_table;

/* Add one sample (tid kept in the key only if keep_tid). 0, or -1 out of memory. */
/* count: how many samples this one stands for (sample_count) */
int sprof_raw_add(sprof_raw_table *t, const sprof_sample_view *s, int keep_tid, uint64_t count);
/* The sample a table entry stands for (pointers into the entry). */
void sprof_raw_view(const sprof_raw_sample *r, sprof_sample_view *s);
void sprof_raw_free(sprof_raw_table *t);

#endif
