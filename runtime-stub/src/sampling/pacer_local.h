/* Local pacing for the cpuclock pacer (pacer_local.c): where the pacer
 * runs, so that its timer stops the thread it is about to signal. */
#ifndef SPROF_PACER_LOCAL_H
#define SPROF_PACER_LOCAL_H

#include <sched.h>
#include <stdint.h>

#include "host/own_pin.h"
#include "rt_internal.h"

struct sprof_pacer_place {
    int ok;      /* moving works (not SPROF_PACER=remote, sched_setaffinity accepted) */
    struct sprof_own_pin pin; /* pin.here: the CPU it is pinned to, -1 before the first move */
    int settled; /* its last wake there was its own timer's */
    int home;    /* the slot of the thread it follows: the one that ran most lately */
    int starved; /* wakes in a row far later than asked */
};

/* Ask for the shortest custom slice, so that the pacer's wake preempts. */
SPROF_HIDDEN void sprof_pacer_short_slice(void);
/* Pin the pacer to cpu; on failure local pacing ends (pl->ok = 0). */
SPROF_HIDDEN void sprof_pacer_move(struct sprof_pacer_place *pl, int cpu);
/* After a wake that came far later than asked (50 ms or 20 periods): three
 * in a row mean the pacer cannot run on that CPU (a real-time thread of
 * another program there never yields): it goes back to its first affinity
 * and signals from wherever it runs. */
SPROF_HIDDEN void sprof_pacer_note_wake(struct sprof_pacer_place *pl, uint64_t late_ns, uint64_t period);
/* A uniform draw in [0, period) (xorshift64 state *rng). */
SPROF_HIDDEN uint64_t sprof_pacer_jitter(uint64_t *rng, uint64_t period);

#endif
