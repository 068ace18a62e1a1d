/* Local pacing's aim (pacer_aim.c): the cpuclock pacer sleeps in wall time
 * until the thread it follows reaches its due point in CPU time. */
#ifndef SPROF_PACER_AIM_H
#define SPROF_PACER_AIM_H

#include <stdint.h>

#include "rt_internal.h"

/* the shortest aimed sleep */
#define SPROF_PACER_AIM_FLOOR_NS 3000ull
/* how short of its due point an aimed wake may find the thread and still
 * take the draw, at least: the aim is a mean, so about half its wakes come
 * short, and with 3 us 35-40 % of the pacer's wakes slept again (3-20 us
 * short), each a switch and a preemption more (docs/runtime.md); more on a
 * host whose timer wakes come late (sprof_pacer_aim_wake) */
#define SPROF_PACER_AIM_TOL_NS 10000ull
/* the most the pacer's timer wakes may usually be late on a host (a
 * hypervisor's timer slack: 43 us median on one) and still be taken as
 * stopping the thread at once */
#define SPROF_PACER_LATE_USUAL_MAX_NS 150000ull

struct sprof_pacer_aim {
    int64_t bias;   /* how much less CPU the thread gets than the pacer sleeps, ns (a running mean) */
    int slot;       /* the thread the last sleep was aimed at; -1: none */
    uint64_t cpu;   /* its CPU when the pacer went to sleep */
    uint64_t sleep; /* that sleep, ns */
    uint64_t late;  /* how late this wake came after its timer's time, ns */
    uint64_t usual; /* how late the timer wakes usually come (a running median), ns */
};

SPROF_HIDDEN void sprof_pacer_aim_init(struct sprof_pacer_aim *a);
/* The pacer woke `late_ns` after its timer's time (timer_wake: by its own
 * timer, on the CPU it is pinned to): learns how late such wakes usually
 * are, and returns whether this one came soon enough after that to have
 * stopped the thread at its timer's interrupt (SPROF_PACER_LATE_NS more). */
SPROF_HIDDEN int sprof_pacer_aim_woke(struct sprof_pacer_aim *a, uint64_t late_ns, int timer_wake);
/* The pacer woke (settled: by its own timer, on time) and reads slot's CPU:
 * learns from the sleep if it was aimed at slot and long enough to tell
 * (at least `settle`: a shorter one is mostly the switches), and returns
 * how far short of its due point slot may be and still be due: the
 * shortest sleep plus the usual lateness, SPROF_PACER_AIM_TOL_NS at
 * least, a quarter period at most. */
SPROF_HIDDEN uint64_t sprof_pacer_aim_wake(struct sprof_pacer_aim *a, int slot, uint64_t cpu, int settled,
                                           uint64_t settle, uint64_t period);
/* The sleep that ends when the followed thread has run `left` ns more
 * (the timer set that much earlier than the wakes are usually late). */
SPROF_HIDDEN uint64_t sprof_pacer_aim_sleep(const struct sprof_pacer_aim *a, uint64_t left);
/* The pacer goes to sleep for `sleep` ns, aimed at slot (-1: at none),
 * whose CPU is now `cpu`. */
SPROF_HIDDEN void sprof_pacer_aim_set(struct sprof_pacer_aim *a, int slot, uint64_t cpu, uint64_t sleep);

#endif
