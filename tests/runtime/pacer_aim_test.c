/* The cpuclock pacer's aim (runtime-stub/src/sampling/pacer_aim.c) on its
 * own: it learns how much less CPU the followed thread gets than the pacer
 * sleeps from the sleeps the thread ran through, ignores sleeps that tell
 * nothing (short ones, ones the thread blocked in), gives the tolerance only
 * to the wake aimed at that thread, never sleeps less than its floor, and
 * learns how late the host's timer wakes usually are.
 * Simulated: no thread, no timer. */
#include <stdio.h>
#include <stdlib.h>

#include "sampling/pacer_aim.h"
#include "unit_check.h"


int main(void)
{
    const uint64_t settle = 20000, period = 250000;
    struct sprof_pacer_aim a;
    sprof_pacer_aim_init(&a);
    check(sprof_pacer_aim_sleep(&a, 100000) == 100000, "unlearnt: the sleep is the CPU left", 100000);
    check(sprof_pacer_aim_sleep(&a, 1000) == SPROF_PACER_AIM_FLOOR_NS, "never below the floor", 1000);

    /* a thread that gets 4 us less CPU than each sleep, sleeps aimed at its
     * due point 50-250 us away: the wakes land ever closer to the due point */
    uint64_t cpu = 1000000, lcg = 12345;
    int64_t last_miss = 0;
    for (int k = 0; k < 200; k++) {
        lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t left = 50000 + (lcg >> 33) % 200000;
        uint64_t sleep = sprof_pacer_aim_sleep(&a, left);
        sprof_pacer_aim_set(&a, 3, cpu, sleep);
        uint64_t due = cpu + left;
        cpu += sleep - 4000; /* what the thread ran */
        sprof_pacer_aim_wake(&a, 3, cpu, 1, settle, period);
        last_miss = (int64_t)due - (int64_t)cpu;
    }
    check(a.bias > 3500 && a.bias < 4500, "learns the 4 us shortfall", (double)a.bias);
    check(last_miss > -1000 && last_miss < 1000, "the aimed wake lands within 1 us of the due point",
          (double)last_miss);

    /* a sleep the thread blocked in (ran 10 us of 200) and a short one
     * (mostly switches) teach nothing */
    int64_t before = a.bias;
    sprof_pacer_aim_set(&a, 3, cpu, 200000);
    cpu += 10000;
    sprof_pacer_aim_wake(&a, 3, cpu, 1, settle, period);
    check(a.bias == before, "a sleep the thread blocked in is ignored", (double)a.bias);
    sprof_pacer_aim_set(&a, 3, cpu, 5000);
    sprof_pacer_aim_wake(&a, 3, cpu, 1, settle, period);
    check(a.bias == before, "a sleep shorter than a settle is ignored", (double)a.bias);

    /* the tolerance: only the aimed thread, only after a wake by the timer */
    sprof_pacer_aim_set(&a, 3, cpu, 100000);
    check(sprof_pacer_aim_wake(&a, 3, cpu + 96000, 1, settle, period) == SPROF_PACER_AIM_TOL_NS,
          "the aimed thread at a settled wake: tolerance", 1);
    check(sprof_pacer_aim_wake(&a, 4, cpu + 96000, 1, settle, period) == 0, "another thread: none", 0);
    check(sprof_pacer_aim_wake(&a, 3, cpu + 96000, 0, settle, period) == 0, "a kicked or late wake: none", 0);
    sprof_pacer_aim_set(&a, -1, cpu, 20000);
    check(sprof_pacer_aim_wake(&a, 3, cpu + 20000, 1, settle, period) == 0, "a sleep aimed at nobody: none", 0);

    /* a host whose timer wakes come 43 us late (a Firecracker guest): the
     * aim learns that, takes such wakes as stopping the thread, sets its
     * timer that much earlier, and lands on the due point; a wake that did
     * not preempt (2 ms late) is not taken, and moves the usual lateness by
     * no more than an on-time one */
    struct sprof_pacer_aim h;
    sprof_pacer_aim_init(&h);
    check(!sprof_pacer_aim_woke(&h, 43000, 1), "unlearnt: a 43 us late wake is not on time", 43000);
    cpu = 1000000;
    for (int k = 0; k < 300; k++) {
        lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t left = 50000 + (lcg >> 33) % 200000, late = 38000 + (lcg >> 40) % 10000;
        uint64_t sleep = sprof_pacer_aim_sleep(&h, left);
        sprof_pacer_aim_set(&h, 3, cpu, sleep);
        uint64_t due = cpu + left;
        cpu += sleep + late - 4000; /* the thread runs on until the late wake */
        int on_time = sprof_pacer_aim_woke(&h, late, 1);
        sprof_pacer_aim_wake(&h, 3, cpu, on_time, settle, period);
        last_miss = (int64_t)due - (int64_t)cpu;
    }
    check(h.usual > 38000 && h.usual < 48000, "learns the usual 43 us lateness", (double)h.usual);
    check(h.bias > 3000 && h.bias < 5000, "and the 4 us shortfall apart", (double)h.bias);
    check(last_miss > -6000 && last_miss < 6000, "the aimed wake lands within the lateness' spread", (double)last_miss);
    check(sprof_pacer_aim_woke(&h, 50000, 1), "a wake 50 us late is on time there", 50000);
    /* there a wake that finds the thread 40 us short takes the draw: a
     * second sleep would end 46 us or more later, past the due point */
    sprof_pacer_aim_set(&h, 3, cpu, 100000);
    uint64_t tol = sprof_pacer_aim_wake(&h, 3, cpu + 100000, 1, settle, period);
    check(tol >= SPROF_PACER_AIM_FLOOR_NS + 38000 && tol <= SPROF_PACER_AIM_FLOOR_NS + 48000,
          "the tolerance: the shortest sleep plus the usual lateness", (double)tol);
    check(sprof_pacer_aim_wake(&h, 3, cpu + 100000, 1, settle, 100000) == 25000, "a quarter period at most",
          (double)sprof_pacer_aim_wake(&h, 3, cpu + 100000, 1, settle, 100000));
    check(sprof_pacer_aim_wake(&h, 3, cpu + 100000, 1, settle, 20000) == SPROF_PACER_AIM_TOL_NS,
          "and never under the least", 0);
    uint64_t usual = h.usual;
    check(!sprof_pacer_aim_woke(&h, 2000000, 1), "a wake 2 ms late did not preempt", 2000000);
    check(h.usual <= usual + 1000, "and moves the usual lateness by 1 us at most", (double)(h.usual - usual));
    check(!sprof_pacer_aim_woke(&h, 1000, 0), "a kicked wake is never on time", 0);
    for (int k = 0; k < 1000; k++)
        sprof_pacer_aim_woke(&h, 5000000, 1);
    check(h.usual <= SPROF_PACER_LATE_USUAL_MAX_NS, "under load the usual lateness stays bounded", (double)h.usual);

    printf("%s\n", failures ? "pacer_aim: FAIL" : "pacer_aim: ok");
    return failures ? 1 : 0;
}
