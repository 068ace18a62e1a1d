/* Local pacing's aim (pacer_aim.c): the cpuclock pacer sleeps in wall time
 * until the thread it follows reaches its due point in CPU time. */
#ifndef SPROF_PACER_AIM_H
#define SPROF_PACER_AIM_H

#include <stdint.h>

#include "rt_internal.h"

/* the shortest aimed sleep, and how short of its due point an aimed wake
 * may find the thread and still take the draw */
#define SPROF_PACER_AIM_FLOOR_NS 3000ull

struct sprof_pacer_aim {
    int64_t bias;   /* how much less CPU the thread gets than the pacer sleeps, ns (a running mean) */
    int slot;       /* the thread the last sleep was aimed at; -1: none */
    uint64_t cpu;   /* its CPU when the pacer went to sleep */
    uint64_t sleep; /* that sleep, ns */
};

SPROF_HIDDEN void sprof_pacer_aim_init(struct sprof_pacer_aim *a);
/* The pacer woke (settled: by its own timer, on time) and reads slot's CPU:
 * learns from the sleep if it was aimed at slot and long enough to tell
 * (at least `settle`: a shorter one is mostly the switches), and returns
 * how far short of its due point slot may be and still be due. */
SPROF_HIDDEN uint64_t sprof_pacer_aim_wake(struct sprof_pacer_aim *a, int slot, uint64_t cpu, int settled,
                                           uint64_t settle);
/* The sleep that ends when the followed thread has run `left` ns more. */
SPROF_HIDDEN uint64_t sprof_pacer_aim_sleep(const struct sprof_pacer_aim *a, uint64_t left);
/* The pacer goes to sleep for `sleep` ns, aimed at slot (-1: at none),
 * whose CPU is now `cpu`. */
SPROF_HIDDEN void sprof_pacer_aim_set(struct sprof_pacer_aim *a, int slot, uint64_t cpu, uint64_t sleep);

#endif
