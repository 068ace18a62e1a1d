/* First aggregation stage: identical raw samples (pc, sp, fp, the frame
 * pointer chain with its record offsets, the stack candidates, flags, and
 * the tid when per thread) are merged by a 64-bit hash + memcmp before any
 * unwinding or symbolization, accumulating count and weight. Memory grows
 * with distinct raw stacks, not samples: an entry is 72 bytes plus 8 in
 * the index; beyond a fixed budget of copies the frame words stay in the
 * trace's mapping (the reader's
 * views are valid until the trace is closed; the table must be freed
 * first). Internal to offline-tools/lib. */
#ifndef SPROF_RAW_SAMPLES_H
#define SPROF_RAW_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "index_table.h"
#include "sprof/trace_reader.h"

#define SPROF_RAW_HEAD_WORDS 6
typedef struct sprof_raw_sample {
    uint64_t head[SPROF_RAW_HEAD_WORDS]; /* see raw_samples.c */
    const void *body; /* ret, fpoff, cand_off, cand_val as in a SAMPLE record */
    uint64_t count;
    uint64_t weight_ns;
} sprof_raw_sample;

/* A direct-mapped cache of recent hits in front of the index: the 64-bit
 * hash sits in a compact array, so a repeated stack costs one memcmp
 * instead of a probe over scattered slots. */
#define SPROF_RAW_FRONT_SLOTS 65536
typedef struct sprof_raw_front {
    uint64_t hash;
    uint32_t index; /* + 1; 0 = empty */
} sprof_raw_front;

typedef struct sprof_raw_table {
    sprof_raw_sample *v; /* distinct samples in first-seen order */
    size_t distinct, cap;
    sprof_index_table index;
    sprof_raw_front *front; /* SPROF_RAW_FRONT_SLOTS, allocated on first add */
    sprof_arena copies; /* copied bodies (raw_samples.c) */
    size_t copied;      /* bytes in copies */
    uint64_t *scratch;
    size_t scratch_words;
} sprof_raw_table;

/* Add one sample (tid kept in the key only if keep_tid). 0, or -1 out of memory. */
/* count: how many samples this one stands for (sample_count) */
/* *index (may be NULL): the entry it went to */
int sprof_raw_add(sprof_raw_table *t, const sprof_sample_view *s, int keep_tid, uint64_t count, uint32_t *index);
/* The sample a table entry stands for (pointers into the entry's body). */
void sprof_raw_view(const sprof_raw_sample *r, sprof_sample_view *s);
void sprof_raw_free(sprof_raw_table *t);

#endif
