/* The perf_event weights' clock correction (runtime-stub/src/sampling/
 * perf_clock.c) on its own: a thread whose task clock runs ahead of its CPU
 * clock (a VM's steal time) gets its weights scaled down by that ratio; one
 * whose clocks agree keeps them; a window across a pause is forgotten.
 * The CPU clock is this thread's real one; the event's count is simulated
 * as that clock plus the steal this test decides. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "rt_internal.h"
#include "unit_check.h"

struct sprof_globals g_sprof;

static double steal_per_cpu; /* task-clock ns beyond each CPU ns */
static uint64_t steal_extra; /* ... plus this much at once */

uint64_t sprof_perf_count(struct sprof_thread *t)
{
    (void)t;
    uint64_t cpu = sprof_now_ns(CLOCK_THREAD_CPUTIME_ID);
    return cpu + (uint64_t)((double)cpu * steal_per_cpu) + steal_extra;
}

static volatile uint64_t sink;
static void burn_ms(int ms)
{
    uint64_t end = sprof_now_ns(CLOCK_THREAD_CPUTIME_ID) + (uint64_t)ms * 1000000ull;
    while (sprof_now_ns(CLOCK_THREAD_CPUTIME_ID) < end) sink = sink * 6364136223846793005ull + 1;
}


/* looks at the thread every 60 ms of wall time (burning CPU meanwhile), n times */
static uint64_t look_n(struct sprof_thread *t, int n, uint64_t *mono)
{
    for (int i = 0; i < n; i++) {
        burn_ms(60);
        *mono += 60000000ull;
        sprof_perf_clock_look(t, *mono);
    }
    return sprof_perf_clock_scale(t, 1000000);
}

int main(void)
{
    struct sprof_thread t = {0};
    t.cpuclock = CLOCK_THREAD_CPUTIME_ID;
    uint64_t mono = 1;

    /* clocks that agree: weights as they are */
    double r = (double)look_n(&t, 3, &mono) / 1e6;
    check(r == 1.0, "clocks that agree: a 1 ms weight stays 1 ms", r);

    /* 8 % steal: weights scaled by 1/1.08 */
    steal_per_cpu = 0.08;
    sprof_perf_clock_forget(&t); /* the simulated count jumped with the new rate */
    r = (double)look_n(&t, 3, &mono) / 1e6;
    check(r > 0.99 / 1.08 && r < 1.01 / 1.08, "8 % steal: a 1 ms weight becomes 1/1.08 ms", r);

    /* the steal stops: back to 1 */
    steal_extra = (uint64_t)((double)sprof_now_ns(CLOCK_THREAD_CPUTIME_ID) * steal_per_cpu);
    steal_per_cpu = 0;
    r = (double)look_n(&t, 3, &mono) / 1e6;
    check(r == 1.0, "steal over: weights as they are again", r);

    /* a pause in between: the window is forgotten, no ratio from it */
    steal_per_cpu = 0.5;
    sprof_perf_clock_forget(&t);
    atomic_store(&g_sprof.paused, 1);
    look_n(&t, 2, &mono);
    check(t.clock_mark_mono == 0, "paused: no look taken", (double)t.clock_mark_mono);
    atomic_store(&g_sprof.paused, 0);

    /* a thread that hardly runs: no ratio from a window under 10 ms of task clock */
    struct sprof_thread idle = {0};
    idle.cpuclock = CLOCK_THREAD_CPUTIME_ID;
    sprof_perf_clock_look(&idle, mono);
    mono += 60000000ull;
    burn_ms(2);
    sprof_perf_clock_look(&idle, mono);
    check(idle.cpu_per_count_q16 == 0, "2 ms of CPU in a window: too little to say", idle.cpu_per_count_q16);
    return failures ? 1 : 0;
}
