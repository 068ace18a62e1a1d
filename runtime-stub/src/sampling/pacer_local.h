/* Local pacing for the cpuclock pacer (pacer_local.c): where the pacer
 * runs, so that its timer stops the thread it is about to signal. */
#ifndef SPROF_PACER_LOCAL_H
#define SPROF_PACER_LOCAL_H

#include <stdint.h>

#include "rt_internal.h"

struct sprof_pacer_place {
    int ok;      /* moving works (not SPROF_PACER=remote, sched_setaffinity accepted) */
    int here;    /* the CPU the pacer is pinned to, -1 before the first move */
    int settled; /* its last wake there was its own timer's */
    int home;    /* the slot of the thread it follows: the one that ran most lately */
};

/* Ask for the shortest custom slice, so that the pacer's wake preempts. */
SPROF_HIDDEN void sprof_pacer_short_slice(void);
/* Pin the pacer to cpu; on failure local pacing ends (pl->ok = 0). */
SPROF_HIDDEN void sprof_pacer_move(struct sprof_pacer_place *pl, int cpu);
/* A uniform draw in [0, period) (xorshift64 state *rng). */
SPROF_HIDDEN uint64_t sprof_pacer_jitter(uint64_t *rng, uint64_t period);

#endif
