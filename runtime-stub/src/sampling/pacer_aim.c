/* Local pacing aims its timer, in wall time, at the due point of the thread
 * it follows, which gets less CPU than the pacer sleeps: the rest of the
 * pacer's pass and the switches on its CPU, less the time it runs on while
 * the pacer's wake is on its way. The bias is that difference, learnt from
 * the sleeps the thread ran through. Without it the wake found the thread a
 * few us short of its due point nearly every time and the draw was taken
 * one settle later (~20 us), and later still after the thread had blocked
 * or been preempted: every due point in the 20 us after a wait
 * (pthread_join's return) was taken at one wake, in what came next
 * (pthread_create's signal-blocked window: 11.4 % of a thread's landings
 * for 8.9 % of its CPU; its steady method 1-1.4 pp low).
 *
 * The wakes themselves come late by the host's timer latency, which the aim
 * learns apart (a running median) and sets its timers that much earlier:
 * a Firecracker guest woke the pacer 43 us after its timer's time (median;
 * 58 us on an idle CPU, the host's timer slack), beyond the 30 us after
 * which a wake was taken as not having stopped the thread at once, so no
 * wake there was local, and the pacer fell back to remote signals after 16
 * misses in a row each time: 10 % of the asked rate delivered. No system
 * calls: ctest runtime_pacer_aim runs it alone. */
#include "pacer_aim.h"

void sprof_pacer_aim_init(struct sprof_pacer_aim *a)
{
    a->bias = 0;
    a->slot = -1;
    a->cpu = 0;
    a->sleep = 0;
    a->late = 0;
    a->usual = 0;
}

int sprof_pacer_aim_woke(struct sprof_pacer_aim *a, uint64_t late_ns, int timer_wake)
{
    a->late = late_ns;
    if (!timer_wake) return 0;
    /* a median, moved 1 us at a time: a wake that did not preempt (ms late
     * under load) moves it no more than one on time */
    if (late_ns > a->usual && a->usual < SPROF_PACER_LATE_USUAL_MAX_NS) a->usual += 1000;
    else if (late_ns < a->usual) a->usual -= a->usual < 1000 ? a->usual : 1000;
    return late_ns < a->usual + SPROF_PACER_LATE_NS;
}

uint64_t sprof_pacer_aim_wake(struct sprof_pacer_aim *a, int slot, uint64_t cpu, int settled, uint64_t settle,
                              uint64_t period)
{
    if (slot != a->slot || !settled) return 0;
    if (a->sleep >= settle && cpu >= a->cpu) {
        /* what the pacer slept in wall time, less what the thread ran */
        int64_t d = (int64_t)(a->sleep + a->late) - (int64_t)(cpu - a->cpu);
        /* far off: the thread blocked or was preempted meanwhile */
        if (d > -(int64_t)settle && d < (int64_t)settle) a->bias += (d - a->bias) / 8;
    }
    /* a wake aimed at the due point that finds the thread a little short
     * (the aim's noise) takes the draw rather than sleeping again: a second
     * sleep ends no sooner than the shortest one plus the host's usual
     * lateness, as far past the due point or farther, and a second wake
     * so soon after the first is the one that does not preempt (the
     * pacer's lag is negative after two passes in a row: it waited for
     * the scheduler's tick, 1-4 ms, 10-40 times a second at 4 kHz on a
     * Firecracker guest). A quarter period at most. */
    uint64_t tol = SPROF_PACER_AIM_FLOOR_NS + a->usual;
    uint64_t most = period / 4 > SPROF_PACER_AIM_TOL_NS ? period / 4 : SPROF_PACER_AIM_TOL_NS;
    return tol < SPROF_PACER_AIM_TOL_NS ? SPROF_PACER_AIM_TOL_NS : tol > most ? most : tol;
}

uint64_t sprof_pacer_aim_sleep(const struct sprof_pacer_aim *a, uint64_t left)
{
    int64_t s = (int64_t)left + a->bias - (int64_t)a->usual;
    return s < (int64_t)SPROF_PACER_AIM_FLOOR_NS ? SPROF_PACER_AIM_FLOOR_NS : (uint64_t)s;
}

void sprof_pacer_aim_set(struct sprof_pacer_aim *a, int slot, uint64_t cpu, uint64_t sleep)
{
    a->slot = slot;
    a->cpu = cpu;
    a->sleep = sleep;
}
