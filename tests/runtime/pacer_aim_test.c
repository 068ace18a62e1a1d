/* The cpuclock pacer's aim (runtime-stub/src/sampling/pacer_aim.c) on its
 * own: it learns how much less CPU the followed thread gets than the pacer
 * sleeps from the sleeps the thread ran through, ignores sleeps that tell
 * nothing (short ones, ones the thread blocked in), gives the tolerance only
 * to the wake aimed at that thread, and never sleeps less than its floor.
 * Simulated: no thread, no timer. */
#include <stdio.h>
#include <stdlib.h>

#include "sampling/pacer_aim.h"

static int failures;
static void check(int ok, const char *what, double got)
{
    printf("%s %s (%.1f)\n", ok ? "ok  " : "FAIL", what, got);
    if (!ok) failures++;
}

int main(void)
{
    const uint64_t settle = 20000;
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
        sprof_pacer_aim_wake(&a, 3, cpu, 1, settle);
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
    sprof_pacer_aim_wake(&a, 3, cpu, 1, settle);
    check(a.bias == before, "a sleep the thread blocked in is ignored", (double)a.bias);
    sprof_pacer_aim_set(&a, 3, cpu, 5000);
    sprof_pacer_aim_wake(&a, 3, cpu, 1, settle);
    check(a.bias == before, "a sleep shorter than a settle is ignored", (double)a.bias);

    /* the tolerance: only the aimed thread, only after a wake by the timer */
    sprof_pacer_aim_set(&a, 3, cpu, 100000);
    check(sprof_pacer_aim_wake(&a, 3, cpu + 96000, 1, settle) == SPROF_PACER_AIM_FLOOR_NS,
          "the aimed thread at a settled wake: tolerance", 1);
    check(sprof_pacer_aim_wake(&a, 4, cpu + 96000, 1, settle) == 0, "another thread: none", 0);
    check(sprof_pacer_aim_wake(&a, 3, cpu + 96000, 0, settle) == 0, "a kicked or late wake: none", 0);
    sprof_pacer_aim_set(&a, -1, cpu, 20000);
    check(sprof_pacer_aim_wake(&a, 3, cpu + 20000, 1, settle) == 0, "a sleep aimed at nobody: none", 0);

    printf("%s\n", failures ? "pacer_aim: FAIL" : "pacer_aim: ok");
    return failures ? 1 : 0;
}
