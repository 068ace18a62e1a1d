/* The cpuclock pacer's draws weighed by the trapezoid rule (trace format
 * 2.9): a SAMPLE flagged DRAW_PREV gives half of its weight to its
 * thread's previous DRAW sample, so that each draw stands for half the CPU
 * before it and half the CPU after it rather than all of it before (the
 * CPU since the previous landing, as the runtime weighs it). Per thread,
 * the raw entry of the last DRAW sample read: a flat array behind an
 * open-addressing index. Internal to offline-tools/lib. */
#ifndef SPROF_DRAW_SPLIT_H
#define SPROF_DRAW_SPLIT_H

#include <stddef.h>
#include <stdint.h>

#include "index_table.h"

typedef struct sprof_draw_last {
    uint32_t tid;
    uint32_t raw1; /* raw entry + 1 of its last DRAW sample; 0 = none */
    size_t tl1;    /* and its place in the timeline + 1; 0 = not kept there */
} sprof_draw_last;

typedef struct sprof_draw_split {
    sprof_draw_last *v;
    size_t n, cap;
    sprof_index_table index;
} sprof_draw_split;

/* The entry of thread tid, made on first use if `make` (NULL if not there,
 * or out of memory when made). Only DRAW samples need one: one lookup a
 * sample serves both calls below. */
sprof_draw_last *sprof_draw_split_thread(sprof_draw_split *d, uint32_t tid, int make);
/* The part of a sample's weight its thread's previous draw (e) takes; 0
 * where there is none to take it (no DRAW_PREV, or that draw was not read:
 * filtered out, in another file, dropped). */
uint64_t sprof_draw_split_give(const sprof_draw_last *e, uint32_t flags, uint64_t weight_ns);
/* A DRAW sample was added as raw entry raw_index and timeline place tl1 - 1
 * (tl1 0: no timeline), or left out (kept = 0: a time window, which breaks
 * the chain): the one the thread's next DRAW_PREV names. */
void sprof_draw_split_note(sprof_draw_last *e, int kept, uint32_t raw_index, size_t tl1);
void sprof_draw_split_free(sprof_draw_split *d);

#endif
